/*
 * keyring.h: how dirauthctl decides which signatures speak for a pinned authority.
 *
 * A trust bundle pins authorities' offline identity keys; statements (snapshot headers,
 * receipts) are signed by online signing keys. The link between the two is the key certificate
 * (schema/certificate.h), which an authority serves in its certificate bundle at
 * GET /v1/certificates. So every verifying command does the same three things: download the
 * bundle (bounded), build a keyring from the pinned identities and the certificates one of them
 * signed, and verify the statement with the keyring at the statement's own time. This module
 * holds those steps, and the diagnosis a person needs when they refuse: which signing key signed,
 * whether any pinned identity certified it, and which window its certificate covers.
 */
#ifndef DIRAUTH_CTL_KEYRING_H
#define DIRAUTH_CTL_KEYRING_H

#include "schema/buffer.h"
#include "schema/certificate.h"
#include "schema/note.h"
#include "ctl/report.h"
#include "schema/trust_bundle.h"

#include <stddef.h>
#include <stdint.h>

/* Room for the names of every bundle authority, ", "-separated. */
#define CTL_KEYRING_NAMES_MAX (TRUST_BUNDLE_MAX_AUTHORITIES * (NOTE_NAME_MAX + 2))

/* GETs <server_url>/v1/certificates into out (an initialised buffer, appended to), aborting the
 * transfer past CERTIFICATE_BUNDLE_MAX_BYTES. what prefixes every failure message (e.g.
 * "fetch mix"). Returns 0; DIRAUTH_ERR_BOUNDS (too large: 65); DIRAUTH_ERR_UNAVAILABLE
 * (unreachable or 5xx: 69); DIRAUTH_ERR_REFUSED (any other status than 200: 76);
 * DIRAUTH_ERR_CONFIG, DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_IO as ctl_http_perform. The failure is in
 * report. */
int ctl_keyring_download(const char *what, const char *server_url, struct buffer *out,
                         struct ctl_report *report);

/* Builds a keyring pinning the trust bundle's authorities (identity keys) and adds every
 * certificate of the certificate bundle (the bytes as served) signed by one of them;
 * certificates of other identities are skipped. *out gets a new keyring the caller frees with
 * free(); *added (may be NULL) the number of certificates kept. Returns 0;
 * DIRAUTH_ERR_SYNTAX or DIRAUTH_ERR_BOUNDS when the certificate bundle is malformed (65);
 * DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_CRYPTO (70). */
int ctl_keyring_build(const char *what, const struct trust_bundle *bundle, const uint8_t *certificates,
                      size_t len, struct certificate_keyring **out, size_t *added, struct ctl_report *report);

/* Explains, in one phrase written into out (capacity cap), why the note's signatures did not
 * count at time at: for each signature, whether a pinned identity certified its key and for
 * which window, or that no pinned identity did (and whether the key is itself a pinned identity
 * key, which signs only certificates). Never fails; out is always NUL-terminated. */
void ctl_keyring_explain(const struct certificate_keyring *ring, const struct note *note, uint64_t at,
                         char *out, size_t cap);

/* ctl_keyring_explain for a signature that counts only when its certificate's window contains
 * both at and also_at (either may be the earlier). With at == also_at it is ctl_keyring_explain.
 * Never fails; out is always NUL-terminated. */
void ctl_keyring_explain_both(const struct certificate_keyring *ring, const struct note *note, uint64_t at,
                              uint64_t also_at, char *out, size_t cap);

/* certificate_keyring_verify with the refusal put into words in report (all 65 but internal
 * failures, 70): "<what>: signed by a key not certified by any pinned identity at <time>: ...",
 * "<what>: too few signatures: ...", "<what>: bad signature: ...". On success *verified_count
 * and names (capacity names_cap) get the verified authorities. Returns what
 * certificate_keyring_verify returns, or DIRAUTH_ERR_NOMEM (70). */
int ctl_keyring_verify(const char *what, const struct certificate_keyring *ring, const struct note *note,
                       uint64_t at, size_t threshold, size_t *verified_count, char *names, size_t names_cap,
                       struct ctl_report *report);

/* ctl_keyring_verify where a signature counts only if its signing key's certificate covers both
 * at and also_at: a mirror judges a header at its own valid-after and again at its own clock, so
 * that a signing key whose certificate has expired cannot vouch for a header however the
 * header's time was chosen. The verdict is certificate_keyring_verify's on the ring reduced to
 * the certificates whose window contains both times (so two keys of one identity still count
 * once, and a key covering only one of the times counts for neither). Refusals are worded as
 * ctl_keyring_verify's, naming both times when they differ ("... at <at> and at <also_at> ...").
 * With at == also_at it is ctl_keyring_verify. Returns what certificate_keyring_verify returns,
 * or DIRAUTH_ERR_NOMEM (70). */
int ctl_keyring_verify_both(const char *what, const struct certificate_keyring *ring, const struct note *note,
                            uint64_t at, uint64_t also_at, size_t threshold, size_t *verified_count,
                            char *names, size_t names_cap, struct ctl_report *report);

#endif
