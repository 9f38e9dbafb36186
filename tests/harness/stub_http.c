/*
 * stub_http.c: the canned-answer HTTP server (stub_http.h).
 *
 * Each connection moves through three states: reading the request head (bounded), reading and
 * dropping the body its Content-Length announces (bounded), writing the answer; then it is
 * closed, or, with keep-alive, reads the next request head. The route table doubles as the hit counter: a
 * request for a path without an answer still gets an entry (while there is room), so a test can see that a
 * peer asked.
 */
#define _GNU_SOURCE /* accept4, pipe2: close-on-exec at once, as the test thread may be starting a daemon */
#include "tests/harness/stub_http.h"

#include "base/error.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#define ENTRIES_MAX (2 * STUB_HTTP_ROUTES_MAX)

struct entry {
	char method[16];
	char path[STUB_HTTP_PATH_MAX + 1];
	int answered; /* has an answer (a route) */
	int status;
	char content_type[128];
	uint8_t *body; /* owned */
	size_t body_len;
	uint64_t hits;
	size_t last_body_len;
};

enum stub_state { READ_HEAD, READ_BODY, WRITE };

struct stub_connection {
	int fd;
	enum stub_state state;
	char head[STUB_HTTP_HEAD_MAX + 1];
	size_t head_len;
	size_t body_expected;
	size_t body_read;
	int continue_expected; /* the client waits for "100 Continue" before its body */
	char method[16];
	char path[STUB_HTTP_PATH_MAX + 1];
	uint8_t *answer; /* owned */
	size_t answer_len;
	size_t answer_sent;
	int keep; /* the answer being written leaves the connection open */
};

struct stub_http {
	int listener;
	int wake[2];
	unsigned port;
	pthread_t thread;
	struct stub_connection *connections[STUB_HTTP_CONNECTIONS_MAX];
	size_t connection_count;
	pthread_mutex_t lock;
	/* Under lock: */
	struct entry entries[ENTRIES_MAX];
	size_t entry_count;
	size_t route_count;
	uint64_t total;
	uint64_t connections_accepted;
	int keep_alive;
	int stopping;
};

static int set_nonblocking(int fd)
{
	int flags = fcntl(fd, F_GETFL);
	return flags < 0 ? -1 : fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

/* The entry of method + path; with create, a new one if there is room. Under lock. */
static struct entry *entry_find(struct stub_http *s, const char *method, const char *path, int create)
{
	for (size_t i = 0; i < s->entry_count; i++)
		if (strcmp(s->entries[i].method, method) == 0 && strcmp(s->entries[i].path, path) == 0)
			return &s->entries[i];
	if (!create || s->entry_count == ENTRIES_MAX)
		return NULL;
	struct entry *e = &s->entries[s->entry_count++];
	memset(e, 0, sizeof *e);
	snprintf(e->method, sizeof e->method, "%s", method);
	snprintf(e->path, sizeof e->path, "%s", path);
	return e;
}

static const char *reason(int status)
{
	switch (status) {
	case 200:
		return "OK";
	case 202:
		return "Accepted";
	case 400:
		return "Bad Request";
	case 404:
		return "Not Found";
	case 413:
		return "Content Too Large";
	default:
		return "Status";
	}
}

/* Builds c's answer from the route table and counts the hit. */
static void prepare_answer(struct stub_http *s, struct stub_connection *c, int forced_status)
{
	int status = 404;
	const char *content_type = "application/json";
	const uint8_t *body = (const uint8_t *)"{\"error\":\"not_found\",\"detail\":\"stub\"}";
	size_t body_len = strlen((const char *)body);
	pthread_mutex_lock(&s->lock);
	s->total++;
	struct entry *e = entry_find(s, c->method, c->path, 1);
	if (e) {
		e->hits++;
		e->last_body_len = c->body_read;
		if (e->answered && !forced_status) {
			status = e->status;
			content_type = e->content_type;
			body = e->body;
			body_len = e->body_len;
		}
	}
	if (forced_status) {
		status = forced_status;
		body = (const uint8_t *)"{\"error\":\"stub\"}";
		body_len = strlen((const char *)body);
	}
	/* A refused head leaves the connection's bytes out of step: it is closed. */
	c->keep = s->keep_alive && !forced_status;
	char head[512];
	int n =
	    snprintf(head, sizeof head, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s\r\n",
	             status, reason(status), content_type, body_len, c->keep ? "" : "Connection: close\r\n");
	c->answer = malloc((size_t)n + body_len);
	if (c->answer) {
		memcpy(c->answer, head, (size_t)n);
		if (body_len)
			memcpy(c->answer + n, body, body_len);
		c->answer_len = (size_t)n + body_len;
	}
	pthread_mutex_unlock(&s->lock);
	c->answer_sent = 0;
	c->state = WRITE;
}

/* Parses a complete head in c->head. Returns 0, or an HTTP status to answer with. */
static int parse_head(struct stub_connection *c)
{
	char *line_end = strstr(c->head, "\r\n");
	if (!line_end)
		return 400;
	char *space = memchr(c->head, ' ', (size_t)(line_end - c->head));
	if (!space || (size_t)(space - c->head) >= sizeof c->method)
		return 400;
	memcpy(c->method, c->head, (size_t)(space - c->head));
	c->method[space - c->head] = 0;
	char *path = space + 1;
	char *path_end = memchr(path, ' ', (size_t)(line_end - path));
	if (!path_end || (size_t)(path_end - path) > STUB_HTTP_PATH_MAX)
		return 400;
	memcpy(c->path, path, (size_t)(path_end - path));
	c->path[path_end - path] = 0;
	c->body_expected = 0;
	for (char *line = line_end + 2; *line && strncmp(line, "\r\n", 2) != 0;) {
		char *end = strstr(line, "\r\n");
		if (!end)
			break;
		if (strncasecmp(line, "Expect:", 7) == 0 && strstr(line, "100-continue") &&
		    strstr(line, "100-continue") < end)
			c->continue_expected = 1;
		if (strncasecmp(line, "Content-Length:", 15) == 0) {
			unsigned long long value = strtoull(line + 15, NULL, 10);
			if (value > STUB_HTTP_BODY_MAX)
				return 413;
			c->body_expected = (size_t)value;
		}
		line = end + 2;
	}
	return 0;
}

/* One connection after a poll. Returns 1 when it is done (to be closed). */
static int serve(struct stub_http *s, struct stub_connection *c)
{
	if (c->state == READ_HEAD) {
		ssize_t n = recv(c->fd, c->head + c->head_len, STUB_HTTP_HEAD_MAX - c->head_len, 0);
		if (n == 0)
			return 1;
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : 1;
		c->head_len += (size_t)n;
		c->head[c->head_len] = 0;
		char *end = strstr(c->head, "\r\n\r\n");
		if (!end) {
			if (c->head_len == STUB_HTTP_HEAD_MAX) {
				snprintf(c->method, sizeof c->method, "?");
				snprintf(c->path, sizeof c->path, "?");
				prepare_answer(s, c, 431);
			}
			return 0;
		}
		int status = parse_head(c);
		if (status) {
			prepare_answer(s, c, status);
			return 0;
		}
		if (c->continue_expected && c->body_expected > 0) {
			static const char go_on[] = "HTTP/1.1 100 Continue\r\n\r\n";
			ssize_t sent = send(c->fd, go_on, sizeof go_on - 1, MSG_NOSIGNAL);
			(void)sent; /* if it does not fit, the client sends its body after its own wait */
		}
		size_t head_bytes = (size_t)(end + 4 - c->head);
		c->body_read = c->head_len - head_bytes;
		if (c->body_read > c->body_expected)
			c->body_read = c->body_expected;
		c->state = READ_BODY;
	} else if (c->state == READ_BODY) {
		uint8_t scratch[16384];
		size_t want = c->body_expected - c->body_read;
		ssize_t n = recv(c->fd, scratch, want < sizeof scratch ? want : sizeof scratch, 0);
		if (n == 0)
			return 1;
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : 1;
		c->body_read += (size_t)n;
	}
	if (c->state == READ_BODY && c->body_read >= c->body_expected)
		prepare_answer(s, c, 0);
	if (c->state == WRITE) {
		if (!c->answer)
			return 1;
		ssize_t n =
		    send(c->fd, c->answer + c->answer_sent, c->answer_len - c->answer_sent, MSG_NOSIGNAL);
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : 1;
		c->answer_sent += (size_t)n;
		if (c->answer_sent == c->answer_len) {
			if (c->keep) {
				/* The next request, from an empty head (clients here send one at a time). */
				free(c->answer);
				c->answer = NULL;
				c->answer_len = c->answer_sent = 0;
				c->head_len = 0;
				c->body_expected = c->body_read = 0;
				c->continue_expected = 0;
				c->state = READ_HEAD;
				return 0;
			}
			shutdown(c->fd, SHUT_WR);
			return 1;
		}
	}
	return 0;
}

static void connection_free(struct stub_connection *c)
{
	close(c->fd);
	free(c->answer);
	free(c);
}

static void *stub_thread(void *context)
{
	struct stub_http *s = context;
	struct pollfd fds[2 + STUB_HTTP_CONNECTIONS_MAX];
	for (;;) {
		pthread_mutex_lock(&s->lock);
		int stopping = s->stopping;
		pthread_mutex_unlock(&s->lock);
		if (stopping)
			break;
		size_t count = 0;
		fds[count++] = (struct pollfd){.fd = s->wake[0], .events = POLLIN};
		fds[count++] = (struct pollfd){.fd = s->listener, .events = POLLIN};
		for (size_t i = 0; i < s->connection_count; i++)
			fds[count++] = (struct pollfd){
			    .fd = s->connections[i]->fd,
			    .events = (short)(s->connections[i]->state == WRITE ? POLLOUT : POLLIN)};
		int ready = poll(fds, (nfds_t)count, 1000);
		if (ready < 0 && errno != EINTR)
			break;
		if (ready <= 0)
			continue;
		if (fds[0].revents & POLLIN) {
			uint8_t scratch[64];
			while (read(s->wake[0], scratch, sizeof scratch) > 0)
				;
		}
		size_t kept = 0, open = s->connection_count;
		for (size_t i = 0; i < open; i++) {
			struct stub_connection *c = s->connections[i];
			if (fds[2 + i].revents && serve(s, c))
				connection_free(c);
			else
				s->connections[kept++] = c;
		}
		s->connection_count = kept;
		if (fds[1].revents & POLLIN) {
			for (;;) {
				int fd = accept4(s->listener, NULL, NULL, SOCK_CLOEXEC);
				if (fd < 0)
					break;
				struct stub_connection *c = NULL;
				if (s->connection_count == STUB_HTTP_CONNECTIONS_MAX ||
				    set_nonblocking(fd) != 0 || !(c = calloc(1, sizeof *c))) {
					close(fd);
					continue;
				}
				c->fd = fd;
				s->connections[s->connection_count++] = c;
				pthread_mutex_lock(&s->lock);
				s->connections_accepted++;
				pthread_mutex_unlock(&s->lock);
			}
		}
	}
	return NULL;
}

int stub_http_start(unsigned port, struct stub_http **out)
{
	*out = NULL;
	if (port > 65535)
		return DIRAUTH_ERR_CONFIG;
	struct stub_http *s = calloc(1, sizeof *s);
	if (!s)
		return DIRAUTH_ERR_NOMEM;
	s->listener = s->wake[0] = s->wake[1] = -1;
	pthread_mutex_init(&s->lock, NULL);
	struct sockaddr_in address;
	memset(&address, 0, sizeof address);
	address.sin_family = AF_INET;
	address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	address.sin_port = htons((uint16_t)port);
	socklen_t len = sizeof address;
	int one = 1;
	if (pipe2(s->wake, O_CLOEXEC) != 0) {
		s->wake[0] = s->wake[1] = -1;
		goto fail;
	}
	if (set_nonblocking(s->wake[0]) != 0 || set_nonblocking(s->wake[1]) != 0 ||
	    (s->listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    setsockopt(s->listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
	    bind(s->listener, (struct sockaddr *)&address, sizeof address) != 0 ||
	    listen(s->listener, 128) != 0 || set_nonblocking(s->listener) != 0 ||
	    getsockname(s->listener, (struct sockaddr *)&address, &len) != 0)
		goto fail;
	s->port = ntohs(address.sin_port);
	if (pthread_create(&s->thread, NULL, stub_thread, s) != 0)
		goto fail;
	*out = s;
	return 0;
fail:
	if (s->listener >= 0)
		close(s->listener);
	if (s->wake[0] >= 0)
		close(s->wake[0]);
	if (s->wake[1] >= 0)
		close(s->wake[1]);
	pthread_mutex_destroy(&s->lock);
	free(s);
	return DIRAUTH_ERR_IO;
}

unsigned stub_http_port(const struct stub_http *server)
{
	return server->port;
}

int stub_http_route(struct stub_http *server, const char *method, const char *path, int status,
                    const char *content_type, const uint8_t *body, size_t body_len)
{
	if (strlen(path) > STUB_HTTP_PATH_MAX || strlen(method) >= sizeof server->entries[0].method)
		return DIRAUTH_ERR_BOUNDS;
	uint8_t *copy = malloc(body_len ? body_len : 1);
	if (!copy)
		return DIRAUTH_ERR_NOMEM;
	if (body_len)
		memcpy(copy, body, body_len);
	pthread_mutex_lock(&server->lock);
	struct entry *e = entry_find(server, method, path, 0);
	if (!e || !e->answered) {
		if (server->route_count == STUB_HTTP_ROUTES_MAX ||
		    (!e && !(e = entry_find(server, method, path, 1)))) {
			pthread_mutex_unlock(&server->lock);
			free(copy);
			return DIRAUTH_ERR_BOUNDS;
		}
		server->route_count++;
	}
	free(e->body);
	e->answered = 1;
	e->status = status;
	snprintf(e->content_type, sizeof e->content_type, "%s",
	         content_type ? content_type : "text/plain; charset=utf-8");
	e->body = copy;
	e->body_len = body_len;
	pthread_mutex_unlock(&server->lock);
	return 0;
}

uint64_t stub_http_hits(struct stub_http *server, const char *method, const char *path, size_t *last_body_len)
{
	pthread_mutex_lock(&server->lock);
	struct entry *e = entry_find(server, method, path, 0);
	uint64_t hits = e ? e->hits : 0;
	if (last_body_len)
		*last_body_len = e ? e->last_body_len : 0;
	pthread_mutex_unlock(&server->lock);
	return hits;
}

uint64_t stub_http_total(struct stub_http *server)
{
	pthread_mutex_lock(&server->lock);
	uint64_t total = server->total;
	pthread_mutex_unlock(&server->lock);
	return total;
}

void stub_http_keep_alive(struct stub_http *server, int keep)
{
	pthread_mutex_lock(&server->lock);
	server->keep_alive = keep != 0;
	pthread_mutex_unlock(&server->lock);
}

uint64_t stub_http_connections(struct stub_http *server)
{
	pthread_mutex_lock(&server->lock);
	uint64_t count = server->connections_accepted;
	pthread_mutex_unlock(&server->lock);
	return count;
}

void stub_http_stop(struct stub_http *server)
{
	if (!server)
		return;
	pthread_mutex_lock(&server->lock);
	server->stopping = 1;
	pthread_mutex_unlock(&server->lock);
	uint8_t byte = 1;
	ssize_t n = write(server->wake[1], &byte, 1);
	(void)n;
	pthread_join(server->thread, NULL);
	for (size_t i = 0; i < server->connection_count; i++)
		connection_free(server->connections[i]);
	for (size_t i = 0; i < server->entry_count; i++)
		free(server->entries[i].body);
	close(server->listener);
	close(server->wake[0]);
	close(server->wake[1]);
	pthread_mutex_destroy(&server->lock);
	free(server);
}
