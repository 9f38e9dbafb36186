/*
 * stub_http.h: a tiny HTTP/1.1 server of canned answers, for tests.
 *
 * A test that needs something on the other end of a socket (the upstream of a fault proxy, or
 * a stand-in for an authority that answers what the test wants it to: forged votes, notes, a
 * certificate bundle) starts one on a loopback port and sets an answer per (method, path). Every
 * other request gets 404 with a JSON error. Each connection carries one request (the answer says
 * `Connection: close`), or, once keep-alive is asked for, as many as its client sends; the
 * connections accepted are counted. A request body is read (at most STUB_HTTP_BODY_MAX bytes, by
 * its Content-Length) and dropped, but its length is recorded; a client that expects "100
 * Continue" gets it.
 *
 * One thread polls the listener and every connection; nothing blocks it. Routes may be set and
 * hits read at any time from any thread.
 */
#ifndef DIRAUTH_TESTS_HARNESS_STUB_HTTP_H
#define DIRAUTH_TESTS_HARNESS_STUB_HTTP_H

#include <stddef.h>
#include <stdint.h>

#define STUB_HTTP_ROUTES_MAX      128
#define STUB_HTTP_PATH_MAX        512
#define STUB_HTTP_HEAD_MAX        16384
#define STUB_HTTP_BODY_MAX        (32 * 1024 * 1024)
#define STUB_HTTP_CONNECTIONS_MAX 64

struct stub_http;

/* Starts a server on 127.0.0.1 (port 0: any free port). Returns 0, DIRAUTH_ERR_IO (bind, the
 * thread), DIRAUTH_ERR_NOMEM. */
int stub_http_start(unsigned port, struct stub_http **out);

/* The port it listens on. */
unsigned stub_http_port(const struct stub_http *server);

/* Answers method + path (exact match, query included) with status, content type (NULL:
 * text/plain; charset=utf-8) and a copy of body. Replaces an earlier answer for the same route.
 * Returns 0, DIRAUTH_ERR_BOUNDS (a path over STUB_HTTP_PATH_MAX, more than STUB_HTTP_ROUTES_MAX
 * routes), DIRAUTH_ERR_NOMEM. */
int stub_http_route(struct stub_http *server, const char *method, const char *path, int status,
                    const char *content_type, const uint8_t *body, size_t body_len);

/* How many requests were answered for method + path (a route or not), and the body length of
 * the last one (may be NULL). */
uint64_t stub_http_hits(struct stub_http *server, const char *method, const char *path,
                        size_t *last_body_len);

/* All requests answered. */
uint64_t stub_http_total(struct stub_http *server);

/* Whether a connection is kept open after an answer (keep nonzero), for the next request of its
 * client; off at the start. Applies from the next answer on. */
void stub_http_keep_alive(struct stub_http *server, int keep);

/* The connections accepted since the start. */
uint64_t stub_http_connections(struct stub_http *server);

/* Stops the thread, closes everything, frees. Accepts NULL. */
void stub_http_stop(struct stub_http *server);

#endif
