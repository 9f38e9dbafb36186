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
 * Connections are served one after another, each request to the end before the next is read,
 * so the ledger's check-then-record-then-sign never runs concurrently with another. That makes
 * a slow or hostile client able to hold the signer up, which the timeouts bound: a connection
 * idle for LISTENER_TIMEOUT_SECONDS between requests is closed, a request frame must arrive
 * whole within LISTENER_TIMEOUT_SECONDS of its first byte, and every write has the same timeout
 * (SO_SNDTIMEO). The frame length is checked against
 * SIGNER_FRAME_MAX before the body is read; a frame that is too long or does not decode gets
 * one DIRAUTH_ERR_SYNTAX response and the connection is closed, since the byte stream can no
 * longer be trusted to be in step.
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

#include "schema/buffer.h"
#include "schema/error.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
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

#define LISTENER_TIMEOUT_SECONDS 5
#define LISTENER_POLL_MS         200 /* the step in which the idle timeout is counted */
#define LISTENER_BACKLOG         16

struct signer_listener {
	struct signer_service *service;
	int fd;
	int lock_fd; /* "<path>.lock", flock()ed while the listener lives */
	int wake[2]; /* signer_listener_stop writes to wake[1] */
	uid_t allowed_uid;
	volatile int stop;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	pthread_t thread;
	bool thread_started;
};

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
		fprintf(stderr, "dirauth-signer: %s is a %s: refusing to use it as the lock\n", lock_path,
		        errno == ELOOP ? "symbolic link" : "directory");
		return DIRAUTH_ERR_EXISTS;
	}
	if (fd < 0) {
		fprintf(stderr, "dirauth-signer: cannot open the lock file %s: %s\n", lock_path,
		        strerror(errno));
		return DIRAUTH_ERR_IO;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		fprintf(stderr, "dirauth-signer: %s is not a regular file: refusing to use it as the lock\n",
		        lock_path);
		close(fd);
		return DIRAUTH_ERR_EXISTS;
	}
	while ((rc = flock(fd, LOCK_EX | LOCK_NB)) != 0 && errno == EINTR)
		;
	if (rc != 0) {
		if (errno == EWOULDBLOCK) {
			fprintf(stderr,
			        "dirauth-signer: another dirauth-signer is running on %s (it holds %s)\n",
			        path, lock_path);
			close(fd);
			return DIRAUTH_ERR_EXISTS;
		}
		fprintf(stderr, "dirauth-signer: cannot lock %s: %s\n", lock_path, strerror(errno));
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
			fprintf(stderr,
			        "dirauth-signer: %s exists and is not a socket: refusing to replace it\n",
			        path);
			return DIRAUTH_ERR_EXISTS;
		}
		/* Left by a signer that died without removing it (SIGKILL, a crash): the lock was free. */
		if (unlink(path) != 0 && errno != ENOENT) {
			fprintf(stderr, "dirauth-signer: cannot remove the stale socket %s: %s\n", path,
			        strerror(errno));
			return DIRAUTH_ERR_IO;
		}
	} else if (errno != ENOENT) {
		fprintf(stderr, "dirauth-signer: %s: %s\n", path, strerror(errno));
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
		fprintf(stderr, "dirauth-signer: cannot bind %s: %s\n", path, strerror(errno));
		close(fd);
		return errno == EADDRINUSE ? DIRAUTH_ERR_EXISTS : DIRAUTH_ERR_IO;
	}
	if (chmod(path, 0600) != 0) {
		fprintf(stderr, "dirauth-signer: cannot make %s mode 0600: %s\n", path, strerror(errno));
		rc = DIRAUTH_ERR_IO;
		goto fail;
	}
	/* Until here the socket belongs to the signer's uid, which dirauthd is not: hand it over
	 * before listen(), so no connection is queued while it has the wrong owner. lchown: the
	 * socket is not followed through a symbolic link put in its place. */
	if (allowed_uid != geteuid() && lchown(path, allowed_uid, (gid_t)-1) != 0) {
		fprintf(stderr,
		        "dirauth-signer: cannot give the socket to uid %u: %s; run dirauth-signer with "
		        "CAP_CHOWN or as uid %u\n",
		        (unsigned)allowed_uid, strerror(errno), (unsigned)allowed_uid);
		rc = DIRAUTH_ERR_PERMISSION;
		goto fail;
	}
	if (listen(fd, LISTENER_BACKLOG) != 0) {
		fprintf(stderr, "dirauth-signer: cannot listen on %s: %s\n", path, strerror(errno));
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

/* Reads exactly len bytes before deadline_ms (monotonic). Returns 0, 1 on end of file before
 * the first byte, or DIRAUTH_ERR_IO (error, deadline, or end of file mid-way). The deadline is
 * for the whole frame, not each read: a peer trickling a byte at a time cannot hold the signer. */
static int listener_read_all(int fd, uint8_t *data, size_t len, int64_t deadline_ms)
{
	size_t done = 0;
	while (done < len) {
		int64_t remaining = deadline_ms - listener_monotonic_ms();
		if (remaining <= 0)
			return DIRAUTH_ERR_IO;
		struct pollfd readable = {.fd = fd, .events = POLLIN, .revents = 0};
		int ready = poll(&readable, 1, (int)remaining);
		if (ready < 0 && errno == EINTR)
			continue;
		if (ready <= 0)
			return DIRAUTH_ERR_IO;
		ssize_t got = recv(fd, data + done, len - done, 0);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return DIRAUTH_ERR_IO;
		if (got == 0)
			return done == 0 ? 1 : DIRAUTH_ERR_IO;
		done += (size_t)got;
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

/* Waits until fd has data, the stop flag is set, or wake is readable, for at most the idle
 * timeout. Returns true when there is data to read. */
static bool listener_wait_readable(int fd, int wake, volatile int *stop)
{
	int waited = 0;
	while (!*stop && waited < LISTENER_TIMEOUT_SECONDS * 1000) {
		struct pollfd fds[2] = {{.fd = fd, .events = POLLIN}, {.fd = wake, .events = POLLIN}};
		int ready = poll(fds, 2, LISTENER_POLL_MS);
		if (ready < 0 && errno != EINTR)
			return false;
		if (ready > 0) {
			if (fds[1].revents)
				return false;
			return true;
		}
		waited += LISTENER_POLL_MS;
	}
	return false;
}

/* Serves the requests of one connection until it closes, misbehaves, idles or stop is set. */
static void listener_serve_connection(struct signer_service *service, int fd, int wake, volatile int *stop)
{
	struct buffer payload;
	uint8_t prefix[4];
	uint8_t *body = NULL;

	buffer_init(&payload);
	body = malloc(SIGNER_FRAME_MAX);
	if (!body)
		goto cleanup;
	while (!*stop && listener_wait_readable(fd, wake, stop)) {
		struct signer_request request;
		struct signer_response response;
		char detail[128];
		size_t body_len = 0;
		int64_t deadline = listener_monotonic_ms() + LISTENER_TIMEOUT_SECONDS * 1000;
		int rc = listener_read_all(fd, prefix, sizeof(prefix), deadline);
		if (rc != 0)
			break;
		if (signer_frame_length(prefix, &body_len) != 0 || body_len > SIGNER_FRAME_MAX) {
			snprintf(detail, sizeof(detail), "frame longer than %d bytes", SIGNER_FRAME_MAX);
			listener_send_syntax(fd, detail);
			break;
		}
		if (listener_read_all(fd, body, body_len, deadline) != 0)
			break;
		if (signer_request_decode(body, body_len, &request) != 0) {
			listener_send_syntax(fd, "malformed request frame");
			break;
		}
		signer_service_handle(service, &request, &response, &payload);
		if (listener_send(fd, &response) != 0)
			break;
	}
cleanup:
	free(body);
	buffer_free(&payload);
}

/* Checks the peer's uid; serves it only if it is the allowed one. */
static void listener_accept_one(struct signer_service *service, int listen_fd, uid_t allowed_uid, int wake,
                                volatile int *stop)
{
	struct timeval timeout = {.tv_sec = LISTENER_TIMEOUT_SECONDS, .tv_usec = 0};
	struct ucred credentials;
	socklen_t credentials_len = sizeof(credentials);
	int fd = accept(listen_fd, NULL, NULL);

	if (fd < 0)
		return;
	(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &credentials_len) != 0 ||
	    credentials_len != sizeof(credentials)) {
		fprintf(stderr, "dirauth-signer: refused a connection whose peer cannot be identified\n");
		close(fd);
		return;
	}
	if (credentials.uid != allowed_uid) {
		fprintf(stderr, "dirauth-signer: refused connection from uid %u\n",
		        (unsigned)credentials.uid);
		close(fd);
		return;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout)) != 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout)) != 0) {
		close(fd);
		return;
	}
	listener_serve_connection(service, fd, wake, stop);
	close(fd);
}

/* Accepts and serves until *stop is set or wake becomes readable. */
static int listener_loop(struct signer_service *service, int listen_fd, uid_t allowed_uid, int wake,
                         volatile int *stop)
{
	while (!*stop) {
		struct pollfd fds[2] = {{.fd = listen_fd, .events = POLLIN}, {.fd = wake, .events = POLLIN}};
		int ready = poll(fds, 2, LISTENER_POLL_MS);
		if (ready < 0) {
			if (errno == EINTR)
				continue;
			return DIRAUTH_ERR_IO;
		}
		if (fds[1].revents)
			break;
		if (ready > 0 && (fds[0].revents & POLLIN))
			listener_accept_one(service, listen_fd, allowed_uid, wake, stop);
	}
	return 0;
}

/* ---- starting and stopping ---- */

static void *listener_thread(void *argument)
{
	struct signer_listener *listener = argument;
	(void)listener_loop(listener->service, listener->fd, listener->allowed_uid, listener->wake[0],
	                    &listener->stop);
	return NULL;
}

int signer_listener_start(struct signer_service *service, const char *socket_path, uid_t allowed_uid,
                          struct signer_listener **out)
{
	struct signer_listener *listener;
	int rc;

	*out = NULL;
	if (!socket_path || strlen(socket_path) == 0 ||
	    strlen(socket_path) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		fprintf(stderr, "dirauth-signer: socket path is empty or longer than %zu bytes\n",
		        sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
		return DIRAUTH_ERR_IO;
	}
	listener = calloc(1, sizeof(*listener));
	if (!listener)
		return DIRAUTH_ERR_NOMEM;
	listener->fd = -1;
	listener->lock_fd = -1;
	listener->wake[0] = listener->wake[1] = -1;
	listener->service = service;
	listener->allowed_uid = allowed_uid;
	memcpy(listener->path, socket_path, strlen(socket_path) + 1);
	rc = listener_lock(socket_path, &listener->lock_fd);
	if (rc == 0)
		rc = listener_bind(socket_path, allowed_uid, &listener->fd);
	if (rc == 0 && pipe(listener->wake) != 0) {
		listener->wake[0] = listener->wake[1] = -1;
		rc = DIRAUTH_ERR_IO;
	}
	if (rc) {
		signer_listener_stop(listener);
		return rc;
	}
	(void)fcntl(listener->wake[0], F_SETFD, FD_CLOEXEC);
	(void)fcntl(listener->wake[1], F_SETFD, FD_CLOEXEC);
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
	listener->stop = 1;
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
	if (listener->wake[0] >= 0)
		close(listener->wake[0]);
	if (listener->wake[1] >= 0)
		close(listener->wake[1]);
	free(listener);
}
