/*
 * keyring.h: dirauthctl's side of verify/: the certificate bundle downloaded, the keyring built
 * from a trust bundle, and verify/'s refusals turned into report lines.
 *
 * A trust bundle pins authorities' offline identity keys; statements (snapshot headers,
 * receipts) are signed by online signing keys certified by them, in the certificate bundle an
 * authority serves at GET /v1/certificates. So every verifying command downloads that bundle
 * (bounded), builds a keyring from it (verify/keyring.h, verify/snapshot.h) and verifies. What is
 * decided, and the words for a refusal, are verify/'s; what the refusal means for the exit status
 * is the tool's and lives here.
 */
#ifndef DIRAUTH_CTL_KEYRING_H
#define DIRAUTH_CTL_KEYRING_H

#include "ctl/report.h"
#include "base/buffer.h"
#include "schema/certificate.h"
#include "schema/note.h"
#include "schema/trust_bundle.h"

#include <stddef.h>
#include <stdint.h>

/* The exit status for a refusal of verify/: 78 when the pins themselves are unusable
 * (DIRAUTH_ERR_CONFIG), 70 when the check could not run (DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_CRYPTO,
 * DIRAUTH_ERR_INTERNAL), 65 for everything the data got wrong. */
int ctl_exit_code_for_verification(int rc);

/* Records a refusal of verify/ in report as "<what>: <detail>" with the status of
 * ctl_exit_code_for_verification. Returns rc. */
int ctl_verification_fail(struct ctl_report *report, const char *what, int rc, const char *detail);

/* GETs <server_url>/v1/certificates into out (an initialised buffer, appended to), aborting the
 * transfer past CERTIFICATE_BUNDLE_MAX_BYTES. what prefixes every failure message (e.g.
 * "fetch mix"). Returns 0; DIRAUTH_ERR_BOUNDS (too large: 65; a server URL too long: 64);
 * DIRAUTH_ERR_UNAVAILABLE (unreachable or 5xx: 69); DIRAUTH_ERR_REFUSED (any other status than
 * 200: 76); DIRAUTH_ERR_CONFIG, DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_IO as net_perform. The failure is
 * in report. */
int ctl_keyring_download(const char *what, const char *server_url, struct buffer *out,
                         struct ctl_report *report);

/* ctl_keyring_download, and *status (may be NULL) gets the HTTP status the server answered, 0
 * when no answer came (the server could not be reached, or the URL was refused before a byte
 * was sent), so that a caller can tell a server that refused from one that was not there. */
int ctl_keyring_download_status(const char *what, const char *server_url, struct buffer *out, long *status,
                                struct ctl_report *report);

/* Builds the keyring of the trust bundle's authorities and the certificates of the certificate
 * bundle (the bytes as served) that they signed (verify_keyring_from_trust_bundle). *out gets a
 * keyring the caller frees with verify_keyring_free (or free()); *added (may be NULL) the number of
 * certificates kept. Returns 0 or its errors, with "<what>: <detail>" in report: DIRAUTH_ERR_CONFIG
 * (78), DIRAUTH_ERR_SYNTAX or DIRAUTH_ERR_BOUNDS for a malformed certificate bundle (65),
 * DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_CRYPTO (70). */
int ctl_keyring_build(const char *what, const struct trust_bundle *bundle, const uint8_t *certificates,
                      size_t len, struct certificate_keyring **out, size_t *added, struct ctl_report *report);

/* Checks a receipt (a registration's or a deregistration's: the promise of one authority) parsed
 * into note: a valid signature, at the time at (the receipt's accepted-at), by a signing key that
 * a pinned identity of ring certified for that time, and among its signers the authority the
 * receipt names (authority). Returns 0, or the refusal in report, what prefixing it: the errors
 * of verify_note as "<what>: receipt: <detail>" (ctl_verification_fail);
 * DIRAUTH_ERR_MISMATCH (65) "<what>: receipt refused: the authority it names did not sign it";
 * DIRAUTH_ERR_NOMEM (70); another failure of the check (70). */
int ctl_keyring_verify_receipt(const char *what, const struct certificate_keyring *ring,
                               const struct note *note, const char *authority, uint64_t at,
                               struct ctl_report *report);

#endif
