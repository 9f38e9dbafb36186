/*
 * http_client.h: the one HTTP exchange dirauthctl makes at a time, over libcurl.
 *
 * Everything that comes back from a server is untrusted until verified, so the client is
 * deliberately narrow: http and https only, no redirects followed (a 3xx is just a status the
 * caller refuses), a connect timeout and a total timeout, and a hard cap on the response body
 * enforced in the write callback, which aborts the transfer the moment the cap is passed rather
 * than after the bytes were stored. curl's own content decoding is never enabled: the caller
 * names the encodings it accepts in its own header and decodes with the bounded decoder of
 * compress.h, so a decompression bomb is caught while it inflates.
 *
 * curl_global_init must have been called (main does it once).
 */
#ifndef DIRAUTH_CTL_HTTP_CLIENT_H
#define DIRAUTH_CTL_HTTP_CLIENT_H

#include "schema/buffer.h"

#include <stddef.h>
#include <stdint.h>

#define CTL_HTTP_CONNECT_TIMEOUT_SECONDS 10
#define CTL_HTTP_TOTAL_TIMEOUT_SECONDS   60
#define CTL_HTTP_ERROR_MAX               256
#define CTL_HTTP_HEADER_VALUE_MAX        128

struct ctl_http_request {
	const char *method;         /* "GET" or "POST" */
	const char *url;            /* http:// or https:// */
	const char *const *headers; /* extra "Name: value" lines, NULL-terminated; may be NULL */
	const uint8_t *body;        /* POST body; may be NULL when body_len is 0 */
	size_t body_len;
	size_t max_response_bytes; /* the transfer is aborted past this many body bytes */
};

struct ctl_http_response {
	long status;                                      /* HTTP status, e.g. 200 */
	struct buffer body;                               /* the response body as received */
	char content_encoding[CTL_HTTP_HEADER_VALUE_MAX]; /* Content-Encoding value, "" if none */
	char content_type[CTL_HTTP_HEADER_VALUE_MAX];     /* Content-Type value, "" if none */
	char error[CTL_HTTP_ERROR_MAX];                   /* why the exchange failed, if it did */
};

/* Empties a response (zero-initialising does the same). */
void ctl_http_response_init(struct ctl_http_response *response);

/* Frees the response body. Accepts NULL. */
void ctl_http_response_free(struct ctl_http_response *response);

/* Performs one exchange. Any HTTP status is a success at this level (the caller judges it);
 * response->error explains a failure. Returns 0; DIRAUTH_ERR_UNAVAILABLE (name resolution,
 * connection refused, timeout, connection cut); DIRAUTH_ERR_BOUNDS (the body passed
 * max_response_bytes); DIRAUTH_ERR_CONFIG (a URL curl refuses or a scheme other than http and
 * https); DIRAUTH_ERR_NOMEM; DIRAUTH_ERR_IO (any other transfer failure). */
int ctl_http_perform(const struct ctl_http_request *request, struct ctl_http_response *response);

/* Describes a non-success answer in one line for the user: "HTTP <status>: <code>: <detail>",
 * where code and detail come from the server's JSON error object ({"error": ..., "detail": ...})
 * when the body holds one, reduced to printable ASCII and truncated to fit out (capacity cap). */
void ctl_http_describe_error(const struct ctl_http_response *response, char *out, size_t cap);

/* The exit status for a non-success HTTP status: 69 (server unavailable) for 5xx, 76 (the
 * server refused) for everything else. */
int ctl_http_exit_code_for_status(long status);

#endif
