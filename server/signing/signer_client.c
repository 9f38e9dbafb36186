/*
 * signer_client.c: one UNIX-socket connection to dirauth-signer, used by every thread of dirauthd.
 *
 * The signer answers one request at a time per connection and serves connections one after
 * another, so a single connection behind a mutex is all dirauthd needs. It is opened on first
 * use and thrown away after any failure; the next call opens a new one. A connection that
 * served earlier calls may have been closed by the signer in the meantime (a restart, or the
 * signer dropping an idle connection), so a call that fails on such a reused connection before
 * any byte of the answer arrived is tried once more on a fresh connection. That is safe because
 * every operation is idempotent at the signer: the same statement gets the same signature, and
 * a query changes nothing.
 *
 * Every wait is bounded by one deadline per call (poll on a non-blocking send and receive;
 * SO_SNDTIMEO bounds connect), and an answer is read only up to SIGNER_FRAME_MAX bytes, so a
 * signer that hangs or babbles costs dirauthd at most the timeout and a bounded buffer.
 * Anything that goes wrong on the way (no socket, a refused or reset connection, a timeout, an
 * answer that does not decode) is DIRAUTH_ERR_UNAVAILABLE with a sentence in detail: for
 * dirauthd there is no difference, it fails closed.
 */
#include "server/signing/signer_client.h"

#include "schema/error.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

struct signer_client {
	char socket_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int path_too_long;
	int timeout_ms;
	pthread_mutex_t lock; /* guards fd and serialises calls */
	int fd;               /* -1 when not connected */
};

/* Why an exchange failed, and whether it is worth a second try on a fresh connection. */
struct exchange_failure {
	char sentence[SIGNER_DETAIL_MAX + 1];
	int answer_started; /* some of the answer arrived: do not retry */
};

static void fail(struct exchange_failure *failure, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

static void fail(struct exchange_failure *failure, const char *format, ...)
{
	va_list args;
	va_start(args, format);
	vsnprintf(failure->sentence, sizeof failure->sentence, format, args);
	va_end(args);
}

static void set_detail(char *detail, size_t detail_cap, const char *text)
{
	if (detail && detail_cap)
		snprintf(detail, detail_cap, "%s", text);
}

int signer_client_open(const char *socket_path, int timeout_ms, struct signer_client **out)
{
	*out = NULL;
	struct signer_client *client = calloc(1, sizeof *client);
	if (!client)
		return DIRAUTH_ERR_NOMEM;
	/* A path that does not fit a sockaddr_un is kept as a failure to report on every call, not
	 * a failure here: opening never connects, so it never fails for the signer's sake. */
	if (strlen(socket_path) >= sizeof client->socket_path)
		client->path_too_long = 1;
	else
		memcpy(client->socket_path, socket_path, strlen(socket_path) + 1);
	client->timeout_ms = timeout_ms > 0 ? timeout_ms : 1;
	client->fd = -1;
	if (pthread_mutex_init(&client->lock, NULL) != 0) {
		free(client);
		return DIRAUTH_ERR_NOMEM;
	}
	*out = client;
	return 0;
}

void signer_client_close(struct signer_client *client)
{
	if (!client)
		return;
	if (client->fd >= 0)
		close(client->fd);
	pthread_mutex_destroy(&client->lock);
	free(client);
}

static int64_t monotonic_ms(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

static void disconnect(struct signer_client *client)
{
	if (client->fd >= 0)
		close(client->fd);
	client->fd = -1;
}

static int connect_socket(struct signer_client *client, struct exchange_failure *failure)
{
	if (client->path_too_long) {
		fail(failure, "the signer socket path is longer than a UNIX socket path may be");
		return DIRAUTH_ERR_UNAVAILABLE;
	}
	/* A socket that admits more than its owner could be answered by someone else than the
	 * signer, and what it answers becomes the authority's word: refuse to speak through it. */
	struct stat st;
	if (lstat(client->socket_path, &st) == 0 && (!S_ISSOCK(st.st_mode) || (st.st_mode & 077) != 0)) {
		fail(failure, "%s is %s with mode %04o: the signer socket must be a socket of mode 0600",
		     client->socket_path, S_ISSOCK(st.st_mode) ? "a socket" : "not a socket",
		     (unsigned)(st.st_mode & 07777));
		return DIRAUTH_ERR_UNAVAILABLE;
	}
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fail(failure, "cannot create a socket: %s", strerror(errno));
		return DIRAUTH_ERR_UNAVAILABLE;
	}
	/* connect() on a UNIX socket waits only when the listener's backlog is full; the send
	 * timeout bounds that wait. */
	struct timeval timeout = {.tv_sec = client->timeout_ms / 1000,
	                          .tv_usec = (client->timeout_ms % 1000) * 1000};
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
	struct sockaddr_un address;
	memset(&address, 0, sizeof address);
	address.sun_family = AF_UNIX;
	memcpy(address.sun_path, client->socket_path, strlen(client->socket_path) + 1);
	if (connect(fd, (const struct sockaddr *)&address, sizeof address) != 0) {
		fail(failure, "cannot connect to %s: %s", client->socket_path, strerror(errno));
		close(fd);
		return DIRAUTH_ERR_UNAVAILABLE;
	}
	client->fd = fd;
	return 0;
}

/* Waits until fd is ready for events or the deadline passes. */
static int wait_ready(int fd, short events, int64_t deadline, struct exchange_failure *failure)
{
	for (;;) {
		int64_t left = deadline - monotonic_ms();
		if (left <= 0) {
			fail(failure, "the signer did not answer in time");
			return DIRAUTH_ERR_UNAVAILABLE;
		}
		struct pollfd p = {.fd = fd, .events = events};
		int n = poll(&p, 1, (int)left);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR) {
			fail(failure, "poll: %s", strerror(errno));
			return DIRAUTH_ERR_UNAVAILABLE;
		}
	}
}

static int send_all(int fd, const uint8_t *data, size_t len, int64_t deadline,
                    struct exchange_failure *failure)
{
	while (len) {
		int rc = wait_ready(fd, POLLOUT, deadline, failure);
		if (rc)
			return rc;
		ssize_t n = send(fd, data, len, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
				continue;
			fail(failure, "sending to the signer: %s", strerror(errno));
			return DIRAUTH_ERR_UNAVAILABLE;
		}
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

static int receive_all(int fd, uint8_t *data, size_t len, int64_t deadline, struct exchange_failure *failure)
{
	while (len) {
		int rc = wait_ready(fd, POLLIN, deadline, failure);
		if (rc)
			return rc;
		ssize_t n = recv(fd, data, len, MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
				continue;
			fail(failure, "reading from the signer: %s", strerror(errno));
			return DIRAUTH_ERR_UNAVAILABLE;
		}
		if (n == 0) {
			fail(failure, "the signer closed the connection");
			return DIRAUTH_ERR_UNAVAILABLE;
		}
		failure->answer_started = 1;
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Sends frame and reads the answer's body into *body (malloc'd, *body_len bytes). */
static int exchange(struct signer_client *client, const struct buffer *frame, uint8_t **body,
                    size_t *body_len, struct exchange_failure *failure)
{
	int64_t deadline = monotonic_ms() + client->timeout_ms;
	uint8_t prefix[4];
	size_t len = 0;
	int rc;
	*body = NULL;
	if ((rc = send_all(client->fd, frame->data, frame->len, deadline, failure)) ||
	    (rc = receive_all(client->fd, prefix, sizeof prefix, deadline, failure)))
		return rc;
	if (signer_frame_length(prefix, &len) != 0) {
		fail(failure, "the signer's answer is longer than %d bytes", SIGNER_FRAME_MAX);
		return DIRAUTH_ERR_UNAVAILABLE;
	}
	uint8_t *data = malloc(len ? len : 1);
	if (!data) {
		fail(failure, "out of memory");
		return DIRAUTH_ERR_NOMEM;
	}
	if ((rc = receive_all(client->fd, data, len, deadline, failure))) {
		free(data);
		return rc;
	}
	*body = data;
	*body_len = len;
	return 0;
}

/* One request, one answer: *body holds the answer's frame body, which response borrows. */
static int call(struct signer_client *client, const struct signer_request *request,
                struct signer_response *response, uint8_t **body, char *detail, size_t detail_cap)
{
	struct buffer frame;
	struct exchange_failure failure;
	size_t body_len = 0;
	int rc;

	*body = NULL;
	memset(&failure, 0, sizeof failure);
	buffer_init(&frame);
	if ((rc = signer_request_encode(request, &frame)) != 0) {
		set_detail(detail, detail_cap, "the request cannot be encoded");
		buffer_free(&frame);
		return rc;
	}
	pthread_mutex_lock(&client->lock);
	for (int attempt = 0; attempt < 2; attempt++) {
		int reused = client->fd >= 0;
		memset(&failure, 0, sizeof failure);
		if (!reused && (rc = connect_socket(client, &failure)) != 0)
			break;
		rc = exchange(client, &frame, body, &body_len, &failure);
		if (rc == 0)
			break;
		disconnect(client);
		if (!reused || failure.answer_started || rc == DIRAUTH_ERR_NOMEM)
			break;
	}
	pthread_mutex_unlock(&client->lock);
	buffer_free(&frame);
	if (rc) {
		set_detail(detail, detail_cap, failure.sentence);
		return rc;
	}
	if (signer_response_decode(*body, body_len, response) != 0) {
		pthread_mutex_lock(&client->lock);
		disconnect(client);
		pthread_mutex_unlock(&client->lock);
		free(*body);
		*body = NULL;
		set_detail(detail, detail_cap, "the signer's answer does not decode");
		return DIRAUTH_ERR_UNAVAILABLE;
	}
	if (response->result > 0 || response->result < DIRAUTH_ERR_INTERNAL) {
		free(*body);
		*body = NULL;
		set_detail(detail, detail_cap, "the signer answered with an unknown result code");
		return DIRAUTH_ERR_UNAVAILABLE;
	}
	if (response->result != 0) {
		set_detail(detail, detail_cap,
		           response->detail[0] ? response->detail : dirauth_strerror(response->result));
		rc = response->result;
		free(*body);
		*body = NULL;
		return rc;
	}
	set_detail(detail, detail_cap, "");
	return 0;
}

int signer_client_sign(struct signer_client *client, enum signer_operation operation, const uint8_t *text,
                       size_t len, uint64_t old_size, const merkle_hash *proof, size_t proof_count,
                       struct note_signature *signature, char *detail, size_t detail_cap)
{
	if (!signer_operation_signs((int)operation)) {
		set_detail(detail, detail_cap, "not a signing operation");
		return DIRAUTH_ERR_REFUSED;
	}
	if (proof_count > MERKLE_MAX_PROOF) {
		set_detail(detail, detail_cap, "the consistency proof is too long");
		return DIRAUTH_ERR_BOUNDS;
	}
	struct signer_request *request = calloc(1, sizeof *request);
	struct signer_response *response = calloc(1, sizeof *response);
	uint8_t *body = NULL;
	int rc = DIRAUTH_ERR_NOMEM;
	if (!request || !response) {
		set_detail(detail, detail_cap, "out of memory");
		goto cleanup;
	}
	request->operation = (uint8_t)operation;
	request->old_size = old_size;
	request->proof_count = proof_count;
	if (proof_count)
		memcpy(request->proof, proof, proof_count * sizeof *proof);
	request->text = text;
	request->text_len = len;
	if ((rc = call(client, request, response, &body, detail, detail_cap)) != 0)
		goto cleanup;
	if (!response->has_signature) {
		set_detail(detail, detail_cap, "the signer answered without a signature");
		rc = DIRAUTH_ERR_UNAVAILABLE;
		goto cleanup;
	}
	*signature = response->signature;
cleanup:
	free(body);
	free(request);
	free(response);
	return rc;
}

int signer_client_query(struct signer_client *client, enum signer_operation operation, const uint8_t *text,
                        size_t len, struct buffer *out, char *detail, size_t detail_cap)
{
	if (!signer_operation_is_query((int)operation)) {
		set_detail(detail, detail_cap, "not a query operation");
		return DIRAUTH_ERR_REFUSED;
	}
	struct signer_request *request = calloc(1, sizeof *request);
	struct signer_response *response = calloc(1, sizeof *response);
	uint8_t *body = NULL;
	int rc = DIRAUTH_ERR_NOMEM;
	if (!request || !response) {
		set_detail(detail, detail_cap, "out of memory");
		goto cleanup;
	}
	request->operation = (uint8_t)operation;
	request->text = text;
	request->text_len = text ? len : 0;
	if ((rc = call(client, request, response, &body, detail, detail_cap)) != 0)
		goto cleanup;
	if (response->payload_len && buffer_append(out, response->payload, response->payload_len) != 0) {
		set_detail(detail, detail_cap, "out of memory");
		rc = DIRAUTH_ERR_NOMEM;
	}
cleanup:
	free(body);
	free(request);
	free(response);
	return rc;
}
