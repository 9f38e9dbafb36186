/*
 * canned_http.h: a tiny HTTP/1.1 server on 127.0.0.1 that answers fixed responses, for the
 * tests of dirauthctl's network half (check_fetch, check_register).
 *
 * It lets those tests drive the real libcurl client over real loopback sockets against answers
 * a real server would rarely give on demand: oversized bodies with and without a
 * Content-Length, 4xx and 5xx JSON errors, odd encodings. It records the last request so a test
 * can check what the client sent (Accept-Encoding, the posted note). The build links only
 * test_support.c into the unit tests, so the server is kept in this header as static functions
 * for the two test files that include it. One connection at a time, Connection: close.
 */
#ifndef DIRAUTH_TEST_CANNED_HTTP_H
#define DIRAUTH_TEST_CANNED_HTTP_H

#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#define CANNED_MAX_ROUTES  8
#define CANNED_REQUEST_MAX (256 * 1024)

struct canned_route {
	const char *path; /* exact request path */
	int status;
	const char *content_type;     /* NULL: none */
	const char *content_encoding; /* NULL: none */
	const uint8_t *body;          /* borrowed; must outlive the server */
	size_t body_len;
	int omit_length; /* 1: no Content-Length, the body ends when the connection closes */
};

struct canned_server {
	int listen_fd;
	unsigned port;
	pthread_t thread;
	pthread_mutex_t lock;
	struct canned_route routes[CANNED_MAX_ROUTES];
	size_t route_count;
	char *last_request; /* head and body of the last request, NUL-terminated */
	size_t last_request_len;
	unsigned request_count;
};

/* Case-insensitive search for needle in the NUL-terminated haystack. */
static const char *canned_find_header(const char *haystack, const char *needle)
{
	size_t needle_len = strlen(needle);

	for (const char *p = haystack; *p != '\0'; p++) {
		if (strncasecmp(p, needle, needle_len) == 0)
			return p;
	}
	return NULL;
}

static void canned_send_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len > 0) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
		if (n <= 0)
			return; /* the client hung up (as it should past its bound) */
		p += n;
		len -= (size_t)n;
	}
}

static void canned_handle(struct canned_server *server, int fd)
{
	char *request = malloc(CANNED_REQUEST_MAX + 1);
	size_t used = 0;
	size_t head_len = 0;
	size_t content_length = 0;
	char path[1024] = "";
	const struct canned_route *route = NULL;
	char head[1024];
	int n;

	if (request == NULL)
		return;
	/* Read the head, then as much body as Content-Length says. */
	while (used < CANNED_REQUEST_MAX) {
		ssize_t got = recv(fd, request + used, CANNED_REQUEST_MAX - used, 0);
		char *end;
		if (got <= 0)
			break;
		used += (size_t)got;
		request[used] = '\0';
		if (head_len == 0 && (end = strstr(request, "\r\n\r\n")) != NULL) {
			const char *length = canned_find_header(request, "\r\nContent-Length:");
			head_len = (size_t)(end - request) + 4;
			if (length != NULL && length < end)
				content_length = strtoul(length + 17, NULL, 10);
		}
		if (head_len != 0 && used >= head_len + content_length)
			break;
	}
	request[used] = '\0';
	sscanf(request, "%*s %1023s", path);
	pthread_mutex_lock(&server->lock);
	free(server->last_request);
	server->last_request = request;
	server->last_request_len = used;
	server->request_count++;
	for (size_t i = 0; i < server->route_count; i++) {
		if (strcmp(server->routes[i].path, path) == 0)
			route = &server->routes[i];
	}
	pthread_mutex_unlock(&server->lock);
	if (route == NULL) {
		static const char missing[] = "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\n"
		                              "Content-Length: 51\r\nConnection: close\r\n\r\n"
		                              "{\"error\":\"not_found\",\"detail\":\"no such document.\"}\n";
		canned_send_all(fd, missing, sizeof(missing) - 1);
		return;
	}
	n = snprintf(head, sizeof(head), "HTTP/1.1 %d Canned\r\nConnection: close\r\n", route->status);
	if (!route->omit_length)
		n += snprintf(head + n, sizeof(head) - (size_t)n, "Content-Length: %zu\r\n", route->body_len);
	if (route->content_type != NULL)
		n +=
		    snprintf(head + n, sizeof(head) - (size_t)n, "Content-Type: %s\r\n", route->content_type);
	if (route->content_encoding != NULL)
		n += snprintf(head + n, sizeof(head) - (size_t)n, "Content-Encoding: %s\r\n",
		              route->content_encoding);
	n += snprintf(head + n, sizeof(head) - (size_t)n, "\r\n");
	canned_send_all(fd, head, (size_t)n);
	canned_send_all(fd, route->body, route->body_len);
}

static void *canned_serve(void *context)
{
	struct canned_server *server = context;

	for (;;) {
		int fd = accept(server->listen_fd, NULL, NULL);
		if (fd < 0)
			return NULL; /* shut down by canned_server_stop */
		canned_handle(server, fd);
		shutdown(fd, SHUT_WR);
		close(fd);
	}
}

/* Adds a route before or after the start (routes are read under the lock). */
__attribute__((unused)) static void canned_server_route(struct canned_server *server,
                                                        const struct canned_route *route)
{
	pthread_mutex_lock(&server->lock);
	ck_assert_uint_lt(server->route_count, CANNED_MAX_ROUTES);
	server->routes[server->route_count++] = *route;
	pthread_mutex_unlock(&server->lock);
}

__attribute__((unused)) static void canned_server_start(struct canned_server *server)
{
	struct sockaddr_in address;
	socklen_t address_len = sizeof(address);
	int one = 1;

	memset(server, 0, sizeof(*server));
	pthread_mutex_init(&server->lock, NULL);
	server->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(server->listen_fd, 0);
	setsockopt(server->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&address, 0, sizeof(address));
	address.sin_family = AF_INET;
	address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	address.sin_port = 0;
	ck_assert_int_eq(bind(server->listen_fd, (struct sockaddr *)&address, sizeof(address)), 0);
	ck_assert_int_eq(listen(server->listen_fd, 16), 0);
	ck_assert_int_eq(getsockname(server->listen_fd, (struct sockaddr *)&address, &address_len), 0);
	server->port = ntohs(address.sin_port);
	ck_assert_int_eq(pthread_create(&server->thread, NULL, canned_serve, server), 0);
}

__attribute__((unused)) static void canned_server_stop(struct canned_server *server)
{
	shutdown(server->listen_fd, SHUT_RDWR);
	close(server->listen_fd);
	pthread_join(server->thread, NULL);
	free(server->last_request);
	server->last_request = NULL;
	pthread_mutex_destroy(&server->lock);
}

/* "http://127.0.0.1:<port>" into out. */
__attribute__((unused)) static void canned_server_url(const struct canned_server *server, char *out,
                                                      size_t cap)
{
	snprintf(out, cap, "http://127.0.0.1:%u", server->port);
}

#endif
