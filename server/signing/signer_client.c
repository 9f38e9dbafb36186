/*
 * signer_client.c: UNIX-socket connections to dirauth-signer, used by every thread of dirauthd.
 *
 * The synchronous calls share one connection behind a mutex (publication, queries: rare). The
 * asynchronous signatures (receipts: one per registration) are served by worker threads, each
 * with its own connection: a worker takes a batch of queued requests, writes all their frames
 * at once, and reads the answers in order, as many at a time as have arrived, so a thousand
 * receipts cost a few round trips and a few reads, and several workers keep several signer
 * threads busy. A connection is opened on first use and thrown away after any failure; the next
 * call opens a new one. A connection that served earlier calls may have been closed by the signer
 * in the meantime (a restart, or the signer dropping an idle connection), so a call that fails on
 * such a reused connection before any byte of the answer arrived is tried once more on a fresh
 * connection. That is safe because every operation is idempotent at the signer: the same
 * statement gets the same signature, and a query changes nothing.
 *
 * Every wait is bounded by one deadline per call (poll on a non-blocking send and receive;
 * SO_SNDTIMEO bounds connect), and an answer is read only up to SIGNER_FRAME_MAX bytes, so a
 * signer that hangs or babbles costs dirauthd at most the timeout and a bounded buffer.
 * Anything that goes wrong on the way (no socket, a refused or reset connection, a timeout, an
 * answer that does not decode) is DIRAUTH_ERR_UNAVAILABLE with a sentence in detail: for
 * dirauthd there is no difference, it fails closed.
 */
#include "server/signing/signer_client.h"

#include "base/error.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
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

/* One queued asynchronous signing request. */
struct async_request {
	uint8_t operation;
	uint8_t *text; /* owned copy */
	size_t text_len;
	signer_client_done done;
	void *context;
	struct async_request *next;
};

struct signer_client {
	char socket_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int path_too_long;
	int timeout_ms;
	pthread_mutex_t lock; /* guards fd and serialises the synchronous calls */
	int fd;               /* -1 when not connected */

	/* The asynchronous lanes: worker threads, each with its own connection. */
	pthread_mutex_t queue_lock; /* guards everything below */
	pthread_cond_t queue_work;
	struct async_request *head, *tail;
	size_t queued;
	size_t max_queued;
	size_t max_batch;
	bool stopping;
	unsigned worker_count;
	pthread_t *workers;
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
	if (pthread_mutex_init(&client->queue_lock, NULL) != 0 ||
	    pthread_cond_init(&client->queue_work, NULL) != 0) {
		pthread_mutex_destroy(&client->lock);
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
	pthread_mutex_lock(&client->queue_lock);
	client->stopping = true;
	pthread_cond_broadcast(&client->queue_work);
	pthread_mutex_unlock(&client->queue_lock);
	for (unsigned i = 0; i < client->worker_count; i++)
		pthread_join(client->workers[i], NULL);
	free(client->workers);
	if (client->fd >= 0)
		close(client->fd);
	pthread_cond_destroy(&client->queue_work);
	pthread_mutex_destroy(&client->queue_lock);
	pthread_mutex_destroy(&client->lock);
	free(client);
}

static int64_t monotonic_ms(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

static void disconnect(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static int connect_socket(struct signer_client *client, int *out, struct exchange_failure *failure)
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
	*out = fd;
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

/* Reads one answer's body from fd into *body (malloc'd, *body_len bytes). */
static int receive_answer(int fd, int64_t deadline, uint8_t **body, size_t *body_len,
                          struct exchange_failure *failure)
{
	uint8_t prefix[4];
	size_t len = 0;
	int rc;
	*body = NULL;
	if ((rc = receive_all(fd, prefix, sizeof prefix, deadline, failure)))
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
	if ((rc = receive_all(fd, data, len, deadline, failure))) {
		free(data);
		return rc;
	}
	*body = data;
	*body_len = len;
	return 0;
}

/* Sends frame on the client's connection and reads the answer. */
static int exchange(struct signer_client *client, const struct buffer *frame, uint8_t **body,
                    size_t *body_len, struct exchange_failure *failure)
{
	int64_t deadline = monotonic_ms() + client->timeout_ms;
	*body = NULL;
	int rc = send_all(client->fd, frame->data, frame->len, deadline, failure);
	return rc ? rc : receive_answer(client->fd, deadline, body, body_len, failure);
}

/* The outcome a decoded answer carries: 0, the signer's refusal (detail gets its sentence), or
 * DIRAUTH_ERR_UNAVAILABLE for a result code no signer sends. */
static int judge_response(const struct signer_response *response, char *detail, size_t detail_cap)
{
	if (response->result > 0 || response->result < DIRAUTH_ERR_INTERNAL) {
		set_detail(detail, detail_cap, "the signer answered with an unknown result code");
		return DIRAUTH_ERR_UNAVAILABLE;
	}
	if (response->result != 0) {
		set_detail(detail, detail_cap,
		           response->detail[0] ? response->detail : dirauth_strerror(response->result));
		return response->result;
	}
	set_detail(detail, detail_cap, "");
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
		if (!reused && (rc = connect_socket(client, &client->fd, &failure)) != 0)
			break;
		rc = exchange(client, &frame, body, &body_len, &failure);
		if (rc == 0)
			break;
		disconnect(&client->fd);
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
		disconnect(&client->fd);
		pthread_mutex_unlock(&client->lock);
		free(*body);
		*body = NULL;
		set_detail(detail, detail_cap, "the signer's answer does not decode");
		return DIRAUTH_ERR_UNAVAILABLE;
	}
	rc = judge_response(response, detail, detail_cap);
	if (rc) {
		free(*body);
		*body = NULL;
	}
	return rc;
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

/* ---- asynchronous signing ---- */

static void async_request_free(struct async_request *r)
{
	if (!r)
		return;
	free(r->text);
	free(r);
}

/* A worker's answers, read as many at a time as have arrived: a batch of a few hundred costs a
 * few reads, not two per answer. */
struct answer_reader {
	uint8_t *data;
	size_t cap;
	size_t start, end; /* unread bytes: data[start..end) */
};

/* Makes want unread bytes available, growing the buffer up to a whole frame, before deadline. */
static int reader_fill(int fd, struct answer_reader *reader, size_t want, int64_t deadline,
                       struct exchange_failure *failure)
{
	while (reader->end - reader->start < want) {
		if (reader->start > 0) {
			memmove(reader->data, reader->data + reader->start, reader->end - reader->start);
			reader->end -= reader->start;
			reader->start = 0;
		}
		if (reader->cap < want) {
			uint8_t *grown = realloc(reader->data, want);
			if (!grown) {
				fail(failure, "out of memory");
				return DIRAUTH_ERR_NOMEM;
			}
			reader->data = grown;
			reader->cap = want;
		}
		ssize_t n = recv(fd, reader->data + reader->end, reader->cap - reader->end, MSG_DONTWAIT);
		if (n > 0) {
			reader->end += (size_t)n;
			failure->answer_started = 1;
			continue;
		}
		if (n == 0) {
			fail(failure, "the signer closed the connection");
			return DIRAUTH_ERR_UNAVAILABLE;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK) {
			fail(failure, "reading from the signer: %s", strerror(errno));
			return DIRAUTH_ERR_UNAVAILABLE;
		}
		int rc = wait_ready(fd, POLLIN, deadline, failure);
		if (rc)
			return rc;
	}
	return 0;
}

/* The next answer's body, borrowed from reader until the next call. */
static int reader_next(int fd, struct answer_reader *reader, int64_t deadline, const uint8_t **body,
                       size_t *body_len, struct exchange_failure *failure)
{
	size_t len = 0;
	int rc = reader_fill(fd, reader, 4, deadline, failure);
	if (rc)
		return rc;
	if (signer_frame_length(reader->data + reader->start, &len) != 0) {
		fail(failure, "the signer's answer is longer than %d bytes", SIGNER_FRAME_MAX);
		return DIRAUTH_ERR_UNAVAILABLE;
	}
	if ((rc = reader_fill(fd, reader, 4 + len, deadline, failure)))
		return rc;
	*body = reader->data + reader->start + 4;
	*body_len = len;
	reader->start += 4 + len;
	return 0;
}

#define READER_INITIAL (64 * 1024)

/* Sends the batch first..(count) on *fd and answers each request from the signer's answers, in
 * order. Returns how many were answered; on a failure before all were, *failure says why and
 * *started whether any of the next answer had arrived. */
static size_t serve_batch(struct signer_client *client, int *fd, struct async_request *first, size_t count,
                          struct exchange_failure *failure)
{
	struct buffer frames;
	struct answer_reader reader = {
	    .data = malloc(READER_INITIAL), .cap = READER_INITIAL, .start = 0, .end = 0};
	size_t answered = 0;
	buffer_init(&frames);
	if (!reader.data) {
		fail(failure, "out of memory");
		return 0;
	}
	for (struct async_request *r = first; r && answered < count; r = r->next, answered++) {
		struct signer_request request = {
		    .operation = r->operation, .text = r->text, .text_len = r->text_len};
		if (signer_request_encode(&request, &frames) != 0) {
			fail(failure, "a request cannot be encoded");
			buffer_free(&frames);
			free(reader.data);
			return 0;
		}
	}
	answered = 0;
	int64_t deadline = monotonic_ms() + client->timeout_ms;
	if (send_all(*fd, frames.data, frames.len, deadline, failure) != 0) {
		buffer_free(&frames);
		free(reader.data);
		return 0;
	}
	buffer_free(&frames);
	for (struct async_request *r = first; r && answered < count; r = r->next) {
		const uint8_t *body = NULL;
		size_t body_len = 0;
		struct signer_response response;
		char detail[SIGNER_DETAIL_MAX + 1] = "";
		/* Bytes already read belong to this answer: a failure now is not before its start. */
		failure->answer_started = reader.end > reader.start;
		/* Each answer has its own deadline: a long batch is not a slow signer. */
		deadline = monotonic_ms() + client->timeout_ms;
		if (reader_next(*fd, &reader, deadline, &body, &body_len, failure) != 0)
			break;
		if (signer_response_decode(body, body_len, &response) != 0) {
			fail(failure, "the signer's answer does not decode");
			failure->answer_started = 1;
			break;
		}
		int rc = judge_response(&response, detail, sizeof detail);
		if (rc == 0 && !response.has_signature) {
			rc = DIRAUTH_ERR_UNAVAILABLE;
			set_detail(detail, sizeof detail, "the signer answered without a signature");
		}
		r->done(r->context, rc, rc == 0 ? &response.signature : NULL, detail);
		answered++;
	}
	free(reader.data);
	return answered;
}

static void *worker_main(void *argument)
{
	struct signer_client *client = argument;
	int fd = -1;
	pthread_mutex_lock(&client->queue_lock);
	for (;;) {
		while (!client->head && !client->stopping)
			pthread_cond_wait(&client->queue_work, &client->queue_lock);
		if (!client->head)
			break; /* stopping and drained */
		struct async_request *first = client->head, *last = first;
		size_t count = 1;
		while (last->next && count < client->max_batch) {
			last = last->next;
			count++;
		}
		client->head = last->next;
		if (!client->head)
			client->tail = NULL;
		last->next = NULL;
		client->queued -= count;
		pthread_mutex_unlock(&client->queue_lock);

		struct exchange_failure failure;
		struct async_request *rest = first;
		size_t left = count;
		for (int attempt = 0; attempt < 2 && left; attempt++) {
			int reused = fd >= 0;
			memset(&failure, 0, sizeof failure);
			if (!reused && connect_socket(client, &fd, &failure) != 0)
				break;
			size_t answered = serve_batch(client, &fd, rest, left, &failure);
			for (size_t i = 0; i < answered; i++) {
				struct async_request *done = rest;
				rest = rest->next;
				async_request_free(done);
			}
			left -= answered;
			if (!left)
				break;
			disconnect(&fd);
			/* A connection the signer dropped while idle fails before any answer: every
			 * operation is idempotent at the signer, so the rest go once more, fresh. */
			if (!reused || failure.answer_started)
				break;
		}
		while (rest) {
			struct async_request *next = rest->next;
			rest->done(rest->context, DIRAUTH_ERR_UNAVAILABLE, NULL, failure.sentence);
			async_request_free(rest);
			rest = next;
		}
		pthread_mutex_lock(&client->queue_lock);
	}
	pthread_mutex_unlock(&client->queue_lock);
	disconnect(&fd);
	return NULL;
}

/* Starts the workers; the caller holds queue_lock. */
static int start_workers_locked(struct signer_client *client, unsigned workers, size_t max_batch,
                                size_t max_queued)
{
	if (client->worker_count || client->stopping || workers == 0 || max_batch == 0 || max_queued == 0)
		return DIRAUTH_ERR_INTERNAL;
	client->workers = calloc(workers, sizeof *client->workers);
	if (!client->workers)
		return DIRAUTH_ERR_NOMEM;
	client->max_batch = max_batch;
	client->max_queued = max_queued;
	for (unsigned i = 0; i < workers; i++) {
		if (pthread_create(&client->workers[i], NULL, worker_main, client) != 0)
			return DIRAUTH_ERR_INTERNAL; /* the threads started are joined by close */
		client->worker_count++;
	}
	return 0;
}

int signer_client_start_workers(struct signer_client *client, unsigned workers, size_t max_batch,
                                size_t max_queued)
{
	pthread_mutex_lock(&client->queue_lock);
	int rc = start_workers_locked(client, workers, max_batch, max_queued);
	pthread_mutex_unlock(&client->queue_lock);
	return rc;
}

int signer_client_sign_async(struct signer_client *client, enum signer_operation operation,
                             const uint8_t *text, size_t len, signer_client_done done, void *context)
{
	if (!signer_operation_signs((int)operation) || operation == SIGNER_OP_SIGN_CHECKPOINT ||
	    operation == SIGNER_OP_COSIGN_CHECKPOINT)
		return DIRAUTH_ERR_REFUSED;
	if (len > SIGNER_TEXT_MAX)
		return DIRAUTH_ERR_BOUNDS;
	struct async_request *r = calloc(1, sizeof *r);
	if (!r || !(r->text = malloc(len ? len : 1))) {
		free(r);
		return DIRAUTH_ERR_NOMEM;
	}
	memcpy(r->text, text, len);
	r->text_len = len;
	r->operation = (uint8_t)operation;
	r->done = done;
	r->context = context;
	pthread_mutex_lock(&client->queue_lock);
	if (!client->worker_count && !client->stopping)
		start_workers_locked(client, SIGNER_CLIENT_WORKERS, SIGNER_CLIENT_BATCH, SIGNER_CLIENT_QUEUE);
	int rc = client->stopping || !client->worker_count ? DIRAUTH_ERR_UNAVAILABLE
	         : client->queued >= client->max_queued    ? DIRAUTH_ERR_FULL
	                                                   : 0;
	if (rc == 0) {
		if (client->tail)
			client->tail->next = r;
		else
			client->head = r;
		client->tail = r;
		client->queued++;
		pthread_cond_signal(&client->queue_work);
	}
	pthread_mutex_unlock(&client->queue_lock);
	if (rc)
		async_request_free(r);
	return rc;
}
