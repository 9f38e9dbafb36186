/*
 * test_http.h: one plain HTTP GET with libcurl, for the integration tests that read what a real
 * dirauthd serves (its notes, tiles and checkpoints) and poll it until it serves them.
 *
 * A failure to connect or to read is the curl result the caller checks, not an abort: the tests
 * poll a server that is starting or was killed.
 */
#ifndef DIRAUTH_TEST_HTTP_H
#define DIRAUTH_TEST_HTTP_H

#include "base/buffer.h"

#include <curl/curl.h>

struct test_http_response {
	long status;        /* the HTTP status, 0 when no answer came */
	struct buffer body; /* the body received; the caller frees it (buffer_free) */
};

/* GETs url within 30 seconds, without signals. Initializes *response and fills it with what came;
 * returns the curl result (CURLE_OK when an answer came, whatever its status). Aborts the test
 * only when curl cannot start. */
CURLcode test_http_get(const char *url, struct test_http_response *response);

/* The body of base followed by path, which must be answered 200 (the test aborts otherwise); the
 * caller frees it. */
struct buffer test_http_get_ok(const char *base, const char *path);

#endif
