/*
 * exchange.h: how dirauthctl makes its requests through net/ and words what went wrong.
 *
 * Every dirauthctl request is one net_perform (net/client.h) with the tool's own User-Agent, the
 * default timeouts and no retry: the person at the prompt decides whether to try again. A failure
 * becomes one report line with a sysexits status: the server could not be reached or answered 5xx
 * (69), it answered anything else than expected (76), its answer was larger than allowed (65).
 */
#ifndef DIRAUTH_CTL_EXCHANGE_H
#define DIRAUTH_CTL_EXCHANGE_H

#include "ctl/report.h"
#include "net/client.h"

#include <stddef.h>

#define CTL_EXCHANGE_USER_AGENT "dirauthctl/1"

/* A request with dirauthctl's settings: method, url and the response bound as given, no extra
 * headers, no body, default timeouts, one attempt, CTL_EXCHANGE_USER_AGENT. */
void ctl_exchange_request(struct net_request *request, const char *method, const char *url,
                          size_t max_response_bytes);

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

#endif
