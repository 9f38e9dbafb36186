/*
 * client.h: the one HTTP client for every outgoing request, dirauthctl's and dirauthd's alike,
 * over libcurl.
 *
 * Everything that comes back from a server is untrusted until verified, so the client is
 * deliberately narrow:
 *   - http:// and https:// URLs only; any other (or no) scheme is refused before a byte is sent;
 *   - TLS peer and host-name verification are switched on explicitly for https, against the
 *     system's trust store or the request's own CA file;
 *   - redirects are never followed: a 3xx is returned as a status, for the caller to refuse;
 *   - curl's content decoding is never enabled: the caller names the encodings it accepts in its
 *     own Accept-Encoding header and decodes with the bounded decoder of compress/compress.h, so a
 *     decompression bomb is caught while it inflates;
 *   - a hard cap on the response body, enforced in the write callback, which aborts the transfer
 *     the moment the cap is passed rather than after the bytes were stored (and, when the server
 *     announces a larger Content-Length, before any byte is read);
 *   - a connect timeout and a total timeout on every request (defaults below);
 *   - an optional retry with jittered exponential backoff, of transport failures and of 5xx and
 *     429 answers only, within the same total timeout;
 *   - connections that last, when the request names a pool (net/pool.h): the attempt takes a kept
 *     connection to the same origin (or opens one, resuming a TLS session the pool has seen), and
 *     leaves it open for the next request. Without a pool each attempt opens its own connection
 *     and closes it. Every guarantee above holds either way: a pooled handle's options are reset
 *     and set again for each attempt.
 *
 * Caveats, up front:
 *   - net_global_init must have run (main calls it once, before any thread starts requests) and
 *     net_global_cleanup runs once at exit, after every request ended.
 *   - net_perform is thread-safe: several threads may run requests at once, with or without a
 *     pool (a pool serialises its own bookkeeping; one curl handle serves one request at a time).
 *     A request and its response belong to the calling thread for the duration of the call.
 *   - Through a pool, a request may wait for one of the pool's connections to its origin; the
 *     wait counts against its total timeout, and one that ends there fails
 *     DIRAUTH_ERR_UNAVAILABLE having sent nothing.
 *   - A retry sleeps in the calling thread. The waits come from the operating system's random
 *     source (so that many clients failing together do not come back together) and the whole
 *     exchange, waits included, ends within the total timeout.
 *   - Proxies: curl's usual environment variables (http_proxy, https_proxy, no_proxy) apply.
 */
#ifndef DIRAUTH_NET_CLIENT_H
#define DIRAUTH_NET_CLIENT_H

#include "base/buffer.h"

#include <stddef.h>
#include <stdint.h>

#define NET_DEFAULT_CONNECT_TIMEOUT_MS 10000u
#define NET_DEFAULT_TOTAL_TIMEOUT_MS   60000u
#define NET_DEFAULT_RETRY_BASE_MS      250u
#define NET_DEFAULT_RETRY_MAX_MS       8000u
#define NET_RETRY_MAX_ATTEMPTS         16u
#define NET_DEFAULT_USER_AGENT         "dirauth/1"
#define NET_ERROR_MAX                  256
#define NET_HEADER_VALUE_MAX           128

struct net_pool;

/* Whether and how to try again. Zeroed: one attempt, no retry. */
struct net_retry {
	unsigned attempts; /* attempts in all, 0 and 1 both meaning one; at most NET_RETRY_MAX_ATTEMPTS */
	uint32_t
	    base_delay_ms; /* the wait before the second attempt, doubled for each later one; 0: default */
	uint32_t max_delay_ms; /* no wait is longer; 0: NET_DEFAULT_RETRY_MAX_MS */
};

struct net_request {
	const char *method;         /* "GET" or "POST" */
	const char *url;            /* http:// or https:// */
	const char *const *headers; /* extra "Name: value" lines, NULL-terminated; may be NULL */
	const uint8_t *body;        /* POST body; may be NULL when body_len is 0 */
	size_t body_len;
	size_t max_response_bytes;   /* the transfer is aborted past this many body bytes */
	uint32_t connect_timeout_ms; /* per attempt; 0: NET_DEFAULT_CONNECT_TIMEOUT_MS */
	uint32_t total_timeout_ms;   /* the whole exchange, every attempt and wait; 0: the default */
	struct net_retry retry;
	const char *user_agent; /* NULL: NET_DEFAULT_USER_AGENT */
	const char *ca_file;    /* PEM CA certificates to verify https servers by; NULL: the system's */
	struct net_pool *pool;  /* kept-alive connections to use (borrowed); NULL: one per attempt */
};

struct net_response {
	long status;                                 /* HTTP status of the last attempt, e.g. 200 */
	struct buffer body;                          /* its body as received */
	char content_encoding[NET_HEADER_VALUE_MAX]; /* its Content-Encoding value, "" if none */
	char content_type[NET_HEADER_VALUE_MAX];     /* its Content-Type value, "" if none */
	char error[NET_ERROR_MAX];                   /* why the exchange failed, if it did */
	unsigned attempts;                           /* attempts made */
	unsigned connects; /* connections opened by the attempts; 0 when each reused a kept one */
};

/* Initialises libcurl for the process (curl_global_init). Call once from main before any
 * request, not while other threads run. Returns 0 or DIRAUTH_ERR_INTERNAL. */
int net_global_init(void);

/* Releases what net_global_init set up. Call once, after the last request ended. */
void net_global_cleanup(void);

/* Empties a response (zero-initialising does the same). */
void net_response_init(struct net_response *response);

/* Frees the response body. Accepts NULL. */
void net_response_free(struct net_response *response);

/* Performs one exchange, with retries when the request asks for them. Any HTTP status is a
 * success at this level (the caller judges it); a 5xx or 429 left after the last attempt is
 * returned as such. response (initialised) is emptied first; response->error explains a failure.
 * Returns 0; DIRAUTH_ERR_UNAVAILABLE (name resolution, connection refused, timeout, connection
 * cut, no connection of the request's pool free within the timeout: the failures a retry is
 * for); DIRAUTH_ERR_BOUNDS (the body passed max_response_bytes);
 * DIRAUTH_ERR_CONFIG (a method other than GET and POST, a scheme other than http and https, a URL
 * curl refuses or, with a pool, cannot split into an origin, more than NET_RETRY_MAX_ATTEMPTS);
 * DIRAUTH_ERR_NOMEM; DIRAUTH_ERR_IO (any other transfer failure, among them an https server whose
 * certificate does not verify). */
int net_perform(const struct net_request *request, struct net_response *response);

/* The wait before attempt number `retry` + 1 (retry 1 is the first retry): a ceiling of
 * base_delay_ms * 2^(retry - 1), capped at max_delay_ms (defaults for 0), and a wait drawn from
 * the upper half of it, [ceiling / 2, ceiling], by random_value (any 32-bit value, uniformly
 * drawn). Pure; net_perform draws random_value from the operating system's source. */
uint32_t net_backoff_delay_ms(const struct net_retry *retry, unsigned retry_number, uint32_t random_value);

/* Describes a non-success answer in one line for a person: "HTTP <status>: <code>: <detail>"
 * (": <detail>" left out when the object has none), code and detail as net_error_answer_parse
 * reads them from the server's JSON error object, or "HTTP <status>: unexpected answer" when the
 * body is not one; truncated to fit out (capacity cap). */
void net_describe_error(const struct net_response *response, char *out, size_t cap);

/* The stable code of an error answer, the "error" member of its JSON object ("rollback",
 * "replayed") as net_error_answer_parse reads it, copied into out (capacity cap, truncated).
 * Returns 1 when the body is such an object, else 0 (out then empty). */
int net_error_code(const struct net_response *response, char *out, size_t cap);

#endif
