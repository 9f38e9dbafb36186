/*
 * listener.c: the signer's UNIX socket, the only way into the process that holds the keys.
 *
 * Who may talk to the signer is decided by the kernel twice: the socket file is mode 0600
 * (created under a umask that lets it be born that way, then chmod'ed to say so), and each
 * accepted peer's uid, read with SO_PEERCRED, must be the configured one (dirauthd's). A peer
 * with another uid is logged and dropped before a byte of its request is read.
 *
 * Connections are served one after another, each request to the end before the next is read,
 * so the ledger's check-then-record-then-sign never runs concurrently with another. That makes
 * a slow or hostile client able to hold the signer up, which the timeouts bound: a connection
 * idle for LISTENER_TIMEOUT_SECONDS between requests is closed, and every read and write of a
 * frame has the same timeout (SO_RCVTIMEO, SO_SNDTIMEO). The frame length is checked against
 * SIGNER_FRAME_MAX before the body is read; a frame that is too long or does not decode gets
 * one DIRAUTH_ERR_SYNTAX response and the connection is closed, since the byte stream can no
 * longer be trusted to be in step.
 *
 * At start, a stale socket file left by a signer that died is replaced; a live one (something
 * answers on it) or any other kind of file at the path is refused, so a mistyped path never
 * deletes an operator's file.
 */
#define _GNU_SOURCE /* struct ucred for SO_PEERCRED */
#include "listener.h"

#include "buffer.h"
#include "error.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#define LISTENER_TIMEOUT_SECONDS 5
#define LISTENER_POLL_MS         200 /* how often a signal handler's stop flag is looked at */
#define LISTENER_BACKLOG         16

struct signer_listener {
	struct signer_service *service;
	int fd;
	int wake[2]; /* signer_listener_stop writes to wake[1] */
	uid_t allowed_uid;
	volatile int stop;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	pthread_t thread;
	bool thread_started;
};

/* ---- socket file ---- */

/* True when something accepts connections on the socket at path. */
static bool listener_socket_is_live(const struct sockaddr_un *address)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool live;
	if (fd < 0)
		return true; /* cannot tell: do not remove it */
	live = connect(fd, (const struct sockaddr *)address, sizeof(*address)) == 0 || errno != ECONNREFUSED;
	close(fd);
	return live;
}

/* Creates the listening socket at path, mode 0600. */
static int listener_bind(const char *path, int *out)
{
	struct sockaddr_un address;
	struct stat st;
	mode_t old_mask;
	int fd, rc;

	*out = -1;
	memset(&address, 0, sizeof(address));
	address.sun_family = AF_UNIX;
	if (!path || strlen(path) == 0 || strlen(path) >= sizeof(address.sun_path)) {
		fprintf(stderr, "dirauth-signer: socket path is empty or longer than %zu bytes\n",
		        sizeof(address.sun_path) - 1);
		return DIRAUTH_ERR_IO;
	}
	memcpy(address.sun_path, path, strlen(path) + 1);

	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			fprintf(stderr,
			        "dirauth-signer: %s exists and is not a socket: refusing to replace it\n",
			        path);
			return DIRAUTH_ERR_EXISTS;
		}
		if (listener_socket_is_live(&address)) {
			fprintf(stderr, "dirauth-signer: %s is in use by a running process\n", path);
			return DIRAUTH_ERR_EXISTS;
		}
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
	if (chmod(path, 0600) != 0 || listen(fd, LISTENER_BACKLOG) != 0) {
		fprintf(stderr, "dirauth-signer: cannot listen on %s: %s\n", path, strerror(errno));
		close(fd);
		unlink(path);
		return DIRAUTH_ERR_IO;
	}
	*out = fd;
	return 0;
}

/* ---- one connection ---- */

/* Reads exactly len bytes. Returns 0, 1 on end of file before the first byte, or
 * DIRAUTH_ERR_IO (error, timeout, or end of file mid-way). */
static int listener_read_all(int fd, uint8_t *data, size_t len)
{
	size_t done = 0;
	while (done < len) {
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
		int ready = poll(fds, wake >= 0 ? 2 : 1, LISTENER_POLL_MS);
		if (ready < 0 && errno != EINTR)
			return false;
		if (ready > 0) {
			if (wake >= 0 && fds[1].revents)
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
		int rc = listener_read_all(fd, prefix, sizeof(prefix));
		if (rc != 0)
			break;
		if (signer_frame_length(prefix, &body_len) != 0 || body_len > SIGNER_FRAME_MAX) {
			snprintf(detail, sizeof(detail), "frame longer than %d bytes", SIGNER_FRAME_MAX);
			listener_send_syntax(fd, detail);
			break;
		}
		if (listener_read_all(fd, body, body_len) != 0)
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
		int ready = poll(fds, wake >= 0 ? 2 : 1, LISTENER_POLL_MS);
		if (ready < 0) {
			if (errno == EINTR)
				continue;
			return DIRAUTH_ERR_IO;
		}
		if (wake >= 0 && fds[1].revents)
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
	listener = calloc(1, sizeof(*listener));
	if (!listener)
		return DIRAUTH_ERR_NOMEM;
	listener->fd = -1;
	listener->wake[0] = listener->wake[1] = -1;
	listener->service = service;
	listener->allowed_uid = allowed_uid;
	rc = listener_bind(socket_path, &listener->fd);
	if (rc) {
		free(listener);
		return rc;
	}
	memcpy(listener->path, socket_path, strlen(socket_path) + 1);
	if (pipe(listener->wake) != 0) {
		listener->wake[0] = listener->wake[1] = -1;
		signer_listener_stop(listener);
		return DIRAUTH_ERR_IO;
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

int signer_listener_run(struct signer_service *service, const char *socket_path, uid_t allowed_uid,
                        volatile int *stop)
{
	int fd, rc;

	rc = listener_bind(socket_path, &fd);
	if (rc)
		return rc;
	rc = listener_loop(service, fd, allowed_uid, -1, stop);
	close(fd);
	unlink(socket_path);
	return rc;
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
	if (listener->fd >= 0) {
		close(listener->fd);
		unlink(listener->path);
	}
	if (listener->wake[0] >= 0)
		close(listener->wake[0]);
	if (listener->wake[1] >= 0)
		close(listener->wake[1]);
	free(listener);
}
