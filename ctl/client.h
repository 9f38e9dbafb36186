/*
 * client.h: how dirauthctl's commands that believe what a server says (fetch, lookup, verify)
 * stand on libdirauth (libdirauth/include/dirauth/dirauth.h).
 *
 * The commands hold a trust bundle already parsed (schema/trust_bundle.h), the limits of the
 * command line (verify/snapshot.h's policy) and the log's pins (ctl/proof.h); the library takes
 * the bundle's text and the pins as key strings. ctl_client_context_new gives it those, written
 * back from what the command parsed (trust_bundle_encode, note_verifier_format), so the library
 * judges exactly what the command line named. The rest is the words every such command shares:
 * which exit status a library status is (sysexits), and the library's detail without the
 * namespace it starts with (the command's own prefix says it already).
 */
#ifndef DIRAUTH_CTL_CLIENT_H
#define DIRAUTH_CTL_CLIENT_H

#include "ctl/proof.h"
#include "ctl/report.h"
#include "libdirauth/include/dirauth/dirauth.h"
#include "schema/trust_bundle.h"
#include "verify/snapshot.h"

/* A context for bundle with callbacks (copied), the policy's limits (NULL: the library's
 * defaults) and pins (NULL or not enabled: no log checked). Returns 0 with *out for
 * dirauth_context_free, or an error with report as "<what>: ..." (78 for what the library cannot
 * use, 70 out of memory). */
int ctl_client_context_new(const char *what, const struct trust_bundle *bundle,
                           const struct verify_snapshot_policy *policy, const struct ctl_log_pins *pins,
                           const struct dirauth_callbacks *callbacks, struct dirauth_context **out,
                           struct ctl_report *report);

/* Whether the log's pins fit the namespace's log: a log key is named by its origin
 * (tlog/tlog.md), so one named otherwise is another log's. Returns 0, or DIRAUTH_ERR_CONFIG with
 * report (78, "<what>: --log-key is named '...', but the namespace's log is '...'"). */
int ctl_client_log_pins_fit(const char *what, const struct ctl_log_pins *pins, const char *origin,
                            struct ctl_report *report);

/* The exit status of a status the library ended with: 78 trust, 76 fetch (an answer the step cannot take), 75
 * stale, 65 for what the data got wrong (malformed, signature, mismatch, rollback, split view, too far, log,
 * not found), 74 state, 70 otherwise. */
int ctl_client_exit_code(enum dirauth_status status);

/* result's detail without its leading "<namespace_name>: ". */
const char *ctl_client_detail(const struct dirauth_result *result, const char *namespace_name);

#endif
