/*
 * exchange.h: how dirauthctl makes its requests through net/ and words what went wrong.
 *
 * Every dirauthctl request is one net_perform (net/client.h) with the tool's own User-Agent, the
 * default timeouts and no retry: the person at the prompt decides whether to try again. A command
 * that asks one server many things (fetch walking a history, monitor's rounds) makes them through
 * a pool of kept-alive connections (net/pool.h), one per run of the command. A failure
 * becomes one report line with a sysexits status: the server could not be reached or answered 5xx
 * (69), it answered anything else than expected (76), its answer was larger than allowed (65).
 */
#ifndef DIRAUTH_CTL_EXCHANGE_H
#define DIRAUTH_CTL_EXCHANGE_H

#include "ctl/report.h"
#include "net/client.h"

#include <stddef.h>
#include <stdint.h>

#define CTL_EXCHANGE_USER_AGENT "dirauthctl/1"

/* A request with dirauthctl's settings: method, url and the response bound as given, no extra
 * headers, no body, default timeouts, one attempt, CTL_EXCHANGE_USER_AGENT. */
void ctl_exchange_request(struct net_request *request, const char *method, const char *url,
                          size_t max_response_bytes);

/* The length of a server URL without its trailing slashes: "http://a/" and "http://a" are one
 * server, and a path is appended to the URL cut there. */
size_t ctl_exchange_url_length(const char *url);

/* The exit status for a non-success HTTP status: 69 (server unavailable) for 5xx, 76 (the
 * server refused) for everything else. */
int ctl_exchange_exit_code_for_status(long status);

/* GETs url (with the extra headers, may be NULL) into response (initialised), bounded by
 * max_bytes, and insists on 200, or with allow_missing on 200 or 404, which the caller tells apart
 * by response->status. what names the command and label the document in messages: "<what>:
 * <label>: response larger than N bytes" (65), "<what>: <url>: <why>" when the exchange failed
 * (69 unreachable, else as ctl_exit_code_for_error), "<what>: <label>: HTTP <status>: ..." for
 * another status (69 for 5xx, 76 otherwise). Returns 0; the errors of net_perform;
 * DIRAUTH_ERR_UNAVAILABLE for a 5xx; DIRAUTH_ERR_REFUSED for another status. */
int ctl_exchange_get(const char *what, const char *label, const char *url, const char *const *headers,
                     size_t max_bytes, int allow_missing, struct net_response *response,
                     struct ctl_report *report);

/* ctl_exchange_get through pool's kept-alive connections (NULL: a connection of its own). */
int ctl_exchange_get_pooled(struct net_pool *pool, const char *what, const char *label, const char *url,
                            const char *const *headers, size_t max_bytes, int allow_missing,
                            struct net_response *response, struct ctl_report *report);

/* POSTs body (a signed note, as text/plain) to <server_url><path> (trailing slashes of the URL
 * dropped; path begins with '/') and insists on 202, the answer of every dirauthd route that takes
 * a document. response (initialised) gets the answer, bounded by max_response_bytes. Failures in
 * report, what prefixing each: "<what>: server URL too long" (64); "<what>: <url>: <why>" when the
 * exchange failed (an answer over its bound: 76; unreachable: 69; else as
 * ctl_exit_code_for_error); "<what>: refused: <status and the server's error>" for another
 * status (69 for 5xx, 76 otherwise). Returns 0; the errors of net_perform; DIRAUTH_ERR_UNAVAILABLE
 * for a 5xx; DIRAUTH_ERR_REFUSED for another status; DIRAUTH_ERR_NOMEM. */
int ctl_exchange_post(const char *what, const char *server_url, const char *path, const uint8_t *body,
                      size_t body_len, size_t max_response_bytes, struct net_response *response,
                      struct ctl_report *report);

/* Runs work(context, i) for every i below count at once, one thread each, and returns when all
 * have returned: a command that talks to several authorities takes as long as the slowest
 * exchange (each bounded by net/'s timeouts). A thread that cannot start runs its work in the
 * calling thread instead. work must touch only what index i owns. Returns 0 or DIRAUTH_ERR_NOMEM
 * (nothing was run). */
int ctl_exchange_each(size_t count, void (*work)(void *context, size_t index), void *context);

#endif
