/*
 * listener.c: the signer's UNIX socket, the only way into the process that holds the keys.
 *
 * Who may talk to the signer is decided by the kernel twice. The socket file is mode 0600
 * (created under a umask that lets it be born that way, then chmod'ed to say so) and, when
 * dirauthd runs as another user than the signer, it is then given to dirauthd's uid (chown,
 * group unchanged), so only that uid and root can connect; and each accepted peer's uid, read
 * with SO_PEERCRED, must be the configured one, so root and everyone else is logged and
 * dropped before a byte of its request is read. The signer runs as its own user, which owns
 * the key files: dirauthd can reach the socket but not the keys. Giving the socket away needs
 * CAP_CHOWN (or running as dirauthd's uid); without it the signer refuses to start rather
 * than leave a socket dirauthd cannot use.
 *
 * Connections are served at the same time, each by its own thread, so a slow or hostile client
 * holds up nobody but itself; the service is thread-safe, and its ledger's check-and-record is
 * one step under a lock (service.h). What a client can hold is bounded: at most
 * max_connections connections are served at once (the acceptor does not accept more, so the
 * next waits in the socket's backlog), a connection idle for the idle timeout between requests
 * is closed, a request frame must arrive whole within the frame timeout of its first byte, and
 * every write has the same timeout (SO_SNDTIMEO). The frame length is checked against
 * SIGNER_FRAME_MAX before the body is read; a frame that is too long or does not decode gets
 * one DIRAUTH_ERR_SYNTAX response and the connection is closed, since the byte stream can no
 * longer be trusted to be in step. Requests are read as many at a time as have arrived, and their
 * answers are sent together, in order, once no whole request is left unread (or 64 KiB wait): a
 * client that pipelines a batch of receipts costs a read and a write per batch, not a few per
 * receipt, and each answer is still audited before it leaves. A peer of another uid is dropped by
 * the accepting thread before it takes a place. At stop every thread sees the wake pipe, ends its
 * connection after the request in hand, and is joined.
 *
 * Whether another signer is running on the path is decided by a lock, not by connecting: the
 * file "<socket path>.lock" is held with flock() for the listener's whole life. Connecting
 * cannot tell, since a socket given to dirauthd's uid refuses the signer's own connect with
 * EACCES, which would make a socket left by a killed signer look live for ever. The kernel
 * drops a flock when its holder dies, even by SIGKILL, so whoever gets the lock knows that any
 * socket file at the path is stale and removes it; any other kind of file at the path is
 * refused, so a mistyped path never deletes an operator's file. The lock file is left in place
 * at stop: removing it would let two signers each lock a different file of the same name.
 */
#define _GNU_SOURCE /* struct ucred for SO_PEERCRED */
#include "signer/listener.h"

#include "logline/logline.h"
#include "base/buffer.h"
#include "base/error.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define LISTENER_POLL_MS 200 /* the step in which the stop flag is looked at */
#define LISTENER_BACKLOG 64

struct signer_listener;

/* One place for a connection. in_use belongs to the accepting thread; finished is set by the
 * connection's thread as it ends, for the accepting thread to join it. */
struct listener_connection {
	struct signer_listener *listener;
	int fd;
	pthread_t thread;
	bool in_use;
	atomic_bool finished;
};

struct signer_listener {
	struct signer_service *service;
	int fd;
	int lock_fd;  /* "<path>.lock", flock()ed while the listener lives */
	int wake[2];  /* signer_listener_stop writes to wake[1]; every thread polls wake[0] */
	int freed[2]; /* a connection's thread writes to freed[1] as it ends */
	uid_t allowed_uid;
	atomic_bool stop;
	size_t max_connections;
	int idle_timeout_ms;
	int frame_timeout_ms;
	struct listener_connection *connections; /* max_connections places */
	size_t active;                           /* places in use; the accepting thread's */
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	pthread_t thread;
	bool thread_started;
};

/* One line of the signer's log (logline.h). The listener's lines concern no request, hence no
 * epoch. */
static void listener_log(const char *format, ...) __attribute__((format(printf, 1, 2)));
static void listener_log(const char *format, ...)
{
	va_list args;
	va_start(args, format);
	logline_vwrite(stderr, "dirauth-signer", LOGLINE_EPOCH_NONE, NULL, format, args);
	va_end(args);
}

/* ---- socket file ---- */

/* Takes the lock that says a signer runs on path: "<path>.lock", created 0600, flock()ed
 * exclusively without waiting. Returns 0 with *out the open lock file, DIRAUTH_ERR_EXISTS (held
 * by another process, or something other than a regular file is at the lock's path),
 * DIRAUTH_ERR_IO. */
static int listener_lock(const char *path, int *out)
{
	char lock_path[sizeof(((struct sockaddr_un *)0)->sun_path) + sizeof(".lock")];
	struct stat st;
	int fd, rc;

	*out = -1;
	snprintf(lock_path, sizeof(lock_path), "%s.lock", path);
	/* O_NONBLOCK: a FIFO put in the way must not hang the start; it is refused below. */
	fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
	if (fd < 0 && (errno == ELOOP || errno == EISDIR)) {
		listener_log("%s is a %s: refusing to use it as the lock", lock_path,
		             errno == ELOOP ? "symbolic link" : "directory");
		return DIRAUTH_ERR_EXISTS;
	}
	if (fd < 0) {
		listener_log("cannot open the lock file %s: %s", lock_path, strerror(errno));
		return DIRAUTH_ERR_IO;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		listener_log("%s is not a regular file: refusing to use it as the lock", lock_path);
		close(fd);
		return DIRAUTH_ERR_EXISTS;
	}
	while ((rc = flock(fd, LOCK_EX | LOCK_NB)) != 0 && errno == EINTR)
		;
	if (rc != 0) {
		if (errno == EWOULDBLOCK) {
			listener_log("another dirauth-signer is running on %s (it holds %s)", path,
			             lock_path);
			close(fd);
			return DIRAUTH_ERR_EXISTS;
		}
		listener_log("cannot lock %s: %s", lock_path, strerror(errno));
		close(fd);
		return DIRAUTH_ERR_IO;
	}
	*out = fd;
	return 0;
}

/* Creates the listening socket at path, mode 0600, owned by allowed_uid. The caller holds the
 * lock, so a socket file already at path is stale. */
static int listener_bind(const char *path, uid_t allowed_uid, int *out)
{
	struct sockaddr_un address;
	struct stat st;
	mode_t old_mask;
	int fd, rc;

	*out = -1;
	memset(&address, 0, sizeof(address));
	address.sun_family = AF_UNIX;
	memcpy(address.sun_path, path, strlen(path) + 1);

	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			listener_log("%s exists and is not a socket: refusing to replace it", path);
			return DIRAUTH_ERR_EXISTS;
		}
		/* Left by a signer that died without removing it (SIGKILL, a crash): the lock was free. */
		if (unlink(path) != 0 && errno != ENOENT) {
			listener_log("cannot remove the stale socket %s: %s", path, strerror(errno));
			return DIRAUTH_ERR_IO;
		}
	} else if (errno != ENOENT) {
		listener_log("%s: %s", path, strerror(errno));
		return DIRAUTH_ERR_IO;
	}

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return DIRAUTH_ERR_IO;
	/* Born 0600: there is no moment at which another user could connect. */
	old_mask = umask(0177);
	rc = bind(fd, (const struct sockaddr *)&address, sizeof(address));
	umask(old_mask);
	if (rc != 0) {
		listener_log("cannot bind %s: %s", path, strerror(errno));
		close(fd);
		return errno == EADDRINUSE ? DIRAUTH_ERR_EXISTS : DIRAUTH_ERR_IO;
	}
	if (chmod(path, 0600) != 0) {
		listener_log("cannot make %s mode 0600: %s", path, strerror(errno));
		rc = DIRAUTH_ERR_IO;
		goto fail;
	}
	/* Until here the socket belongs to the signer's uid, which dirauthd is not: hand it over
	 * before listen(), so no connection is queued while it has the wrong owner. lchown: the
	 * socket is not followed through a symbolic link put in its place. */
	if (allowed_uid != geteuid() && lchown(path, allowed_uid, (gid_t)-1) != 0) {
		listener_log("cannot give the socket to uid %u: %s; run dirauth-signer with CAP_CHOWN or as "
		             "uid %u",
		             (unsigned)allowed_uid, strerror(errno), (unsigned)allowed_uid);
		rc = DIRAUTH_ERR_PERMISSION;
		goto fail;
	}
	if (listen(fd, LISTENER_BACKLOG) != 0) {
		listener_log("cannot listen on %s: %s", path, strerror(errno));
		rc = DIRAUTH_ERR_IO;
		goto fail;
	}
	*out = fd;
	return 0;
fail:
	close(fd);
	unlink(path);
	return rc;
}

/* ---- one connection ---- */

static int64_t listener_monotonic_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits until fd is readable, before deadline_ms (monotonic), while the listener is not
 * stopping. Returns 1 when readable, 0 at the deadline, a stop, or an error. */
static int listener_wait(struct signer_listener *listener, int fd, int64_t deadline_ms)
{
	while (!atomic_load(&listener->stop)) {
		int64_t remaining = deadline_ms - listener_monotonic_ms();
		if (remaining <= 0)
			return 0;
		struct pollfd fds[2] = {{.fd = fd, .events = POLLIN, .revents = 0},
		                        {.fd = listener->wake[0], .events = POLLIN, .revents = 0}};
		int ready = poll(fds, 2, remaining < LISTENER_POLL_MS ? (int)remaining : LISTENER_POLL_MS);
		if (ready < 0 && errno == EINTR)
			continue;
		if (ready < 0 || fds[1].revents)
			return 0;
		if (ready > 0)
			return 1;
	}
	return 0;
}

static int listener_write_all(int fd, const uint8_t *data, size_t len)
{
	while (len > 0) {
		ssize_t sent = send(fd, data, len, MSG_NOSIGNAL);
		if (sent < 0 && errno == EINTR)
			continue;
		if (sent <= 0)
			return DIRAUTH_ERR_IO;
		data += sent;
		len -= (size_t)sent;
	}
	return 0;
}

/* Sends a response frame for response. */
static int listener_send(int fd, const struct signer_response *response)
{
	struct buffer frame;
	int rc;

	buffer_init(&frame);
	rc = signer_response_encode(response, &frame);
	if (rc == 0)
		rc = listener_write_all(fd, frame.data, frame.len);
	buffer_free(&frame);
	return rc;
}

/* Answers a frame that cannot be served, then the caller closes. */
static void listener_send_syntax(int fd, const char *detail)
{
	struct signer_response response;
	memset(&response, 0, sizeof(response));
	response.result = DIRAUTH_ERR_SYNTAX;
	snprintf(response.detail, sizeof(response.detail), "%s", detail);
	(void)listener_send(fd, &response);
}

/* What a connection has sent and not yet been served: requests are read as many at a time as
 * have arrived, so a client that pipelines a batch costs one read for the batch, not two per
 * request. */
struct listener_input {
	uint8_t *data;
	size_t cap;
	size_t start, end; /* unread bytes: data[start..end) */
};

static int listener_flush(int fd, struct buffer *out);

/* Makes want unread bytes available (want <= cap), reading whatever has arrived, before
 * deadline_ms; the answers queued in out are sent before any wait. Returns 0, 1 on end of file
 * with nothing unread, or DIRAUTH_ERR_IO (error, deadline, stop, or end of file inside a frame). */
static int listener_fill(struct signer_listener *listener, int fd, struct listener_input *in, size_t want,
                         int64_t deadline_ms, struct buffer *out)
{
	while (in->end - in->start < want) {
		if (in->start > 0) {
			memmove(in->data, in->data + in->start, in->end - in->start);
			in->end -= in->start;
			in->start = 0;
		}
		ssize_t got = recv(fd, in->data + in->end, in->cap - in->end, MSG_DONTWAIT);
		if (got > 0) {
			in->end += (size_t)got;
			continue;
		}
		if (got == 0)
			return in->end == in->start ? 1 : DIRAUTH_ERR_IO;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return DIRAUTH_ERR_IO;
		if (listener_flush(fd, out) != 0 || !listener_wait(listener, fd, deadline_ms))
			return DIRAUTH_ERR_IO;
	}
	return 0;
}

/* Sends the answers queued in out and empties it. */
static int listener_flush(int fd, struct buffer *out)
{
	int rc = out->len ? listener_write_all(fd, out->data, out->len) : 0;
	buffer_reset(out);
	return rc;
}

/* Answers of a pipelined batch wait in the output buffer until the input holds no whole request
 * (then the client waits for them), or until this many bytes are queued. */
#define LISTENER_OUTPUT_FLUSH (64 * 1024)

/* Serves the requests of one connection until it closes, misbehaves, idles or stop is set. Each
 * request is handled (its audit line written and flushed) before its answer is queued, and the
 * answers leave in order, so the audit rule holds for every answer of a batch. */
static void listener_serve_connection(struct signer_listener *listener, int fd)
{
	struct buffer payload, out;
	struct listener_input in = {.data = NULL, .cap = SIGNER_FRAME_MAX + 4, .start = 0, .end = 0};

	buffer_init(&payload);
	buffer_init(&out);
	in.data = malloc(in.cap);
	if (!in.data)
		goto cleanup;
	while (!atomic_load(&listener->stop)) {
		struct signer_request request;
		struct signer_response response;
		char detail[128];
		size_t body_len = 0;
		if (in.end == in.start) {
			/* Nothing unread: the client waits for the answers, then the connection idles. */
			if (listener_flush(fd, &out) != 0 ||
			    !listener_wait(listener, fd, listener_monotonic_ms() + listener->idle_timeout_ms))
				break;
		}
		/* A request frame must arrive whole within the frame timeout of noticing its first byte. */
		int64_t deadline = listener_monotonic_ms() + listener->frame_timeout_ms;
		if (listener_fill(listener, fd, &in, 4, deadline, &out) != 0)
			break;
		if (signer_frame_length(in.data + in.start, &body_len) != 0 || body_len > SIGNER_FRAME_MAX) {
			snprintf(detail, sizeof(detail), "frame longer than %d bytes", SIGNER_FRAME_MAX);
			if (listener_flush(fd, &out) == 0)
				listener_send_syntax(fd, detail);
			break;
		}
		if (listener_fill(listener, fd, &in, 4 + body_len, deadline, &out) != 0)
			break;
		const uint8_t *body = in.data + in.start + 4;
		in.start += 4 + body_len;
		if (signer_request_decode(body, body_len, &request) != 0) {
			if (listener_flush(fd, &out) == 0)
				listener_send_syntax(fd, "malformed request frame");
			break;
		}
		signer_service_handle(listener->service, &request, &response, &payload);
		if (signer_response_encode(&response, &out) != 0)
			break;
		if (out.len >= LISTENER_OUTPUT_FLUSH && listener_flush(fd, &out) != 0)
			break;
	}
	(void)listener_flush(fd, &out);
cleanup:
	free(in.data);
	buffer_free(&payload);
	buffer_free(&out);
}

/* A connection's thread: serves it, closes it, and tells the accepting thread its place is free. */
static void *listener_connection_thread(void *argument)
{
	struct listener_connection *connection = argument;
	struct signer_listener *listener = connection->listener;
	ssize_t written;

	listener_serve_connection(listener, connection->fd);
	close(connection->fd);
	atomic_store(&connection->finished, true);
	do
		written = write(listener->freed[1], "x", 1);
	while (written < 0 && errno == EINTR);
	/* A full pipe (EAGAIN) already holds a wake-up: the accepting thread looks at every place. */
	return NULL;
}

/* ---- accepting ---- */

/* Joins the threads of finished connections (all of them when every is set, after a stop). */
static void listener_reap(struct signer_listener *listener, bool every)
{
	for (size_t i = 0; i < listener->max_connections; i++) {
		struct listener_connection *connection = &listener->connections[i];
		if (!connection->in_use || (!every && !atomic_load(&connection->finished)))
			continue;
		pthread_join(connection->thread, NULL);
		connection->in_use = false;
		listener->active--;
	}
}

static void listener_drain(int fd)
{
	char bytes[64];
	while (read(fd, bytes, sizeof(bytes)) > 0)
		;
}

/* Accepts one connection, checks the peer's uid, and serves it in a thread of its own in a free
 * place (the caller polls the socket only while one is free). */
static void listener_accept_one(struct signer_listener *listener)
{
	struct timeval timeout = {.tv_sec = listener->frame_timeout_ms / 1000,
	                          .tv_usec = (listener->frame_timeout_ms % 1000) * 1000};
	struct ucred credentials;
	socklen_t credentials_len = sizeof(credentials);
	struct listener_connection *connection = NULL;
	int fd = accept4(listener->fd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0)
		return;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &credentials_len) != 0 ||
	    credentials_len != sizeof(credentials)) {
		listener_log("refused a connection whose peer cannot be identified");
		close(fd);
		return;
	}
	if (credentials.uid != listener->allowed_uid) {
		listener_log("refused connection from uid %u", (unsigned)credentials.uid);
		close(fd);
		return;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout)) != 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout)) != 0) {
		close(fd);
		return;
	}
	for (size_t i = 0; i < listener->max_connections && !connection; i++)
		if (!listener->connections[i].in_use)
			connection = &listener->connections[i];
	if (!connection) {
		close(fd); /* not reached: the socket is polled only while a place is free */
		return;
	}
	connection->listener = listener;
	connection->fd = fd;
	atomic_store(&connection->finished, false);
	if (pthread_create(&connection->thread, NULL, listener_connection_thread, connection) != 0) {
		listener_log("cannot start a thread for a connection: refused");
		close(fd);
		return;
	}
	connection->in_use = true;
	listener->active++;
}

/* The accepting thread: accepts while a place is free, until the stop; then joins every
 * connection's thread. */
static void *listener_thread(void *argument)
{
	struct signer_listener *listener = argument;
	while (!atomic_load(&listener->stop)) {
		listener_reap(listener, false);
		bool room = listener->active < listener->max_connections;
		struct pollfd fds[3] = {{.fd = listener->wake[0], .events = POLLIN, .revents = 0},
		                        {.fd = listener->freed[0], .events = POLLIN, .revents = 0},
		                        {.fd = room ? listener->fd : -1, .events = POLLIN, .revents = 0}};
		int ready = poll(fds, 3, LISTENER_POLL_MS);
		if (ready < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (fds[0].revents)
			break;
		if (fds[1].revents)
			listener_drain(listener->freed[0]);
		if (fds[2].revents & POLLIN)
			listener_accept_one(listener);
	}
	atomic_store(&listener->stop, true);
	listener_reap(listener, true);
	return NULL;
}

/* ---- starting and stopping ---- */

static int listener_pipe(int fds[2], bool nonblocking)
{
	if (pipe(fds) != 0) {
		fds[0] = fds[1] = -1;
		return DIRAUTH_ERR_IO;
	}
	for (int i = 0; i < 2; i++) {
		(void)fcntl(fds[i], F_SETFD, FD_CLOEXEC);
		if (nonblocking)
			(void)fcntl(fds[i], F_SETFL, O_NONBLOCK);
	}
	return 0;
}

int signer_listener_start(struct signer_service *service, const char *socket_path, uid_t allowed_uid,
                          const struct signer_listener_options *options, struct signer_listener **out)
{
	struct signer_listener *listener;
	int rc;

	*out = NULL;
	if (!socket_path || strlen(socket_path) == 0 ||
	    strlen(socket_path) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		listener_log("socket path is empty or longer than %zu bytes",
		             sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
		return DIRAUTH_ERR_IO;
	}
	if (options && options->max_connections > SIGNER_LISTENER_MAX_CONNECTIONS) {
		listener_log("at most %d connections can be served at once", SIGNER_LISTENER_MAX_CONNECTIONS);
		return DIRAUTH_ERR_CONFIG;
	}
	listener = calloc(1, sizeof(*listener));
	if (!listener)
		return DIRAUTH_ERR_NOMEM;
	listener->fd = -1;
	listener->lock_fd = -1;
	listener->wake[0] = listener->wake[1] = -1;
	listener->freed[0] = listener->freed[1] = -1;
	listener->service = service;
	listener->allowed_uid = allowed_uid;
	atomic_init(&listener->stop, false);
	listener->max_connections = options && options->max_connections ? options->max_connections
	                                                                : SIGNER_LISTENER_DEFAULT_CONNECTIONS;
	listener->idle_timeout_ms =
	    options && options->idle_timeout_ms > 0 ? options->idle_timeout_ms : SIGNER_LISTENER_TIMEOUT_MS;
	listener->frame_timeout_ms =
	    options && options->frame_timeout_ms > 0 ? options->frame_timeout_ms : SIGNER_LISTENER_TIMEOUT_MS;
	memcpy(listener->path, socket_path, strlen(socket_path) + 1);
	listener->connections = calloc(listener->max_connections, sizeof(*listener->connections));
	if (!listener->connections) {
		free(listener);
		return DIRAUTH_ERR_NOMEM;
	}
	for (size_t i = 0; i < listener->max_connections; i++)
		atomic_init(&listener->connections[i].finished, false);
	rc = listener_lock(socket_path, &listener->lock_fd);
	if (rc == 0)
		rc = listener_bind(socket_path, allowed_uid, &listener->fd);
	if (rc == 0)
		rc = listener_pipe(listener->wake, false);
	if (rc == 0)
		rc = listener_pipe(listener->freed, true);
	if (rc) {
		signer_listener_stop(listener);
		return rc;
	}
	if (pthread_create(&listener->thread, NULL, listener_thread, listener) != 0) {
		signer_listener_stop(listener);
		return DIRAUTH_ERR_NOMEM;
	}
	listener->thread_started = true;
	*out = listener;
	return 0;
}

void signer_listener_stop(struct signer_listener *listener)
{
	if (!listener)
		return;
	atomic_store(&listener->stop, true);
	if (listener->wake[1] >= 0) {
		ssize_t written;
		do
			written = write(listener->wake[1], "x", 1);
		while (written < 0 && errno == EINTR);
	}
	if (listener->thread_started)
		pthread_join(listener->thread, NULL);
	/* The socket is removed while the lock is still held, so it is never a newer signer's. */
	if (listener->fd >= 0) {
		close(listener->fd);
		unlink(listener->path);
	}
	if (listener->lock_fd >= 0)
		close(listener->lock_fd);
	for (int i = 0; i < 2; i++) {
		if (listener->wake[i] >= 0)
			close(listener->wake[i]);
		if (listener->freed[i] >= 0)
			close(listener->freed[i]);
	}
	free(listener->connections);
	free(listener);
}
