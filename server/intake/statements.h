/*
 * statements.h: accepting what a provider or an operator signs about an endpoint's life after
 * its registration: health statements, revocations and deregistrations (schema/health.h,
 * revocation.h, deregistration.h), from request body to durable store and answer. Each is an
 * entry of intake's table of kinds (kinds.h), like the registration.
 *
 * Like a registration (submit.h), each runs its checks in a fixed order, each with its own API
 * error (docs/api.md), and changes nothing unless every check passed and the store committed it
 * (group-committed with the registrations, durable before the answer). Only namespaces configured
 * with "lifecycle: true" take them (API_ERROR_LIFECYCLE_DISABLED otherwise).
 *
 * Health statement: size (HEALTH_MAX_BYTES, 413); grammar, which also refuses any exact load,
 * latency or utilisation figure (400); namespace served and configured for the lifecycle (404);
 * the service's current registration (unexpired, not withdrawn: 404 unknown_service; revoked: 409
 * revoked) lists the endpoint (404 unknown_endpoint); its provider enrolled for the namespace
 * (403); the signature by the key the statement's signer line names in that registration (403
 * wrong_signer when the note is signed by any other key, or names the endpoint key of an endpoint
 * that has none; 403 bad_signature when that key's signature fails); issued-at within the clock
 * skew of now, either way (422 outside_clock_skew); then the store: a sequence above the last
 * accepted for the endpoint, whichever key signed it (409 replayed), space (507).
 *
 * Revocation: size (REVOCATION_MAX_BYTES, 413); grammar, one signature line (400); namespace
 * (404); the service registered here in this namespace (404 unknown_service) and, for an endpoint
 * revocation, the endpoint first registered under that service (404 unknown_endpoint); who may
 * revoke (403 wrong_signer): signer provider, the key line is the service's enrolled provider
 * key (and enrolled for the namespace: 403 namespace_not_allowed); signer operator, a key of the
 * configuration's operators; the signature by the key line's key (403 bad_signature; a signature
 * by another key 403 wrong_signer); then the store: a (key, sequence) not accepted before and,
 * from the signer itself, above every sequence accepted from that key (409 replayed), the target
 * not revoked yet (409 revoked). There is no time check: a revocation signed long ago (kept by a
 * provider for the day its key is compromised) is as good as a new one.
 *
 * Deregistration: size (DEREGISTRATION_MAX_BYTES, 413); grammar (400); namespace (404); the
 * service registered in this namespace (404 unknown_service); its provider line an enrolled key
 * (403 unknown_provider) and the service's provider (403 wrong_signer); the signature (403
 * bad_signature, another key 403 wrong_signer); the signer answering (503, nothing stored); the
 * store: a sequence at least the service's highest registration sequence and above any earlier
 * deregistration's (409 replayed); then a deregistration receipt signed by dirauth-signer
 * (SIGNER_OP_SIGN_DEREGISTRATION_RECEIPT) whose last-listed-epoch is the store's stamp minus one:
 * the last epoch whose view may still hold the service. A signer failing between the commit and
 * the receipt is 503 stored_without_receipt, as for registrations.
 */
#ifndef DIRAUTH_SERVER_INTAKE_STATEMENTS_H
#define DIRAUTH_SERVER_INTAKE_STATEMENTS_H

#include "schema/registration.h"
#include "server/api/api_error.h"
#include "server/intake/submit.h"

#include <stddef.h>
#include <stdint.h>

/* The accepted answer of a health statement or revocation, in result->receipt:
 * {"status":"accepted","sha256":"<the note's SHA-256 hex>","epoch":<the first epoch whose view
 * holds it>}. A deregistration's is its signed receipt note. */

/* Checks and stores the signed health statement in body, waiting for the store. Fills *result
 * (its receipt buffer, the answer, the caller frees). Returns result->error. */
enum api_error submit_health(const struct submit_context *context, const uint8_t *body, size_t len,
                             struct submit_result *result);

/* submit_health without waiting, as submit_registration_async: checks now, then done is called
 * from the store's committer with the outcome (it must not block). body must stay valid until
 * done is called. Returns API_ERROR_NONE when under way, or a refusal with *result filled (done
 * is not called). */
enum api_error submit_health_async(const struct submit_context *context, const uint8_t *body, size_t len,
                                   submit_done done, void *done_context, struct submit_result *result);

/* The same for a revocation. */
enum api_error submit_revocation(const struct submit_context *context, const uint8_t *body, size_t len,
                                 struct submit_result *result);
enum api_error submit_revocation_async(const struct submit_context *context, const uint8_t *body, size_t len,
                                       submit_done done, void *done_context, struct submit_result *result);

/* A revocation another authority holds (listed in its vote or its snapshot) and this one lacks:
 * checked as submit_revocation checks a provider's or operator's, then stored, waiting; its
 * sequence need only be unused (revocations learned from peers arrive in any order). A target
 * revoked already is API_ERROR_REVOKED (this authority holds a revocation of it). result's
 * receipt is the accepted answer. This is how an authority learns a revocation it missed, also
 * after a restore from a backup older than the revocation. */
enum api_error submit_peer_revocation(const struct submit_context *context, const uint8_t *note, size_t len,
                                      struct submit_result *result);

/* The checks of submit_peer_revocation, and nothing stored: for a revocation a peer's vote lists,
 * before the consensus counts it. Returns API_ERROR_NONE or the refusal, with result filled
 * (its receipt empty). */
enum api_error submit_check_peer_revocation(const struct submit_context *context, const uint8_t *note,
                                            size_t len, struct submit_result *result);

/* A health statement another authority holds (listed in its vote) and this one lacks: checked as
 * submit_health checks a provider's, except that issued-at is refused only when it is later than
 * now plus the clock skew (a statement learned a while after it was posted is older than the
 * skew; the consensus judges its freshness), then stored, waiting. A sequence not above the last
 * accepted for the endpoint is API_ERROR_REPLAYED, as for a provider's: a peer cannot bring back
 * an older statement. This is how a statement posted to one authority reaches the votes of all. */
enum api_error submit_peer_health(const struct submit_context *context, const uint8_t *note, size_t len,
                                  struct submit_result *result);

/* The same for a deregistration; the answer is the signed deregistration receipt. */
enum api_error submit_deregistration(const struct submit_context *context, const uint8_t *body, size_t len,
                                     struct submit_result *result);
enum api_error submit_deregistration_async(const struct submit_context *context, const uint8_t *body,
                                           size_t len, submit_done done, void *done_context,
                                           struct submit_result *result);

/* What the store's DIRAUTH_ERR_REFUSED means for registration r: API_ERROR_REVOKED,
 * API_ERROR_DEREGISTERED, or API_ERROR_INTERNAL when the store says neither. */
enum api_error submit_registration_withdrawal(const struct submit_context *context,
                                              const struct registration *r);

#endif
