/*
 * snapshot.h: a snapshot header judged against a trust bundle, and a body against its header.
 *
 * What a mirror or a monitor believes of a snapshot comes down to two checks on bytes as served:
 *
 *   the header (verify_snapshot_header): it parses as a snapshot header note; at least the
 *     bundle's threshold of distinct pinned authorities signed it, each with a signing key its
 *     pinned identity certified for a window containing both the header's valid-after and now
 *     (the certificates are the server's certificate bundle; verify/keyring.h); its namespace
 *     and origin are the ones the bundle pins; its time is plausible: valid-after no later than
 *     now plus the allowed clock skew ("not yet valid"), valid-until after now ("stale"), and
 *     valid-until - valid-after no longer than the allowed validity; its record count and body
 *     size are within the bundle's bounds;
 *   the body (verify_snapshot_body): no larger as served than the bundle allows, decoded with the
 *     header's body-size as the hard output bound (a decompression bomb stops while it inflates),
 *     then checked against the header by snapshot_body_verify (digest, size, Merkle root,
 *     ordering and every record's provider signature).
 *
 * Why both times: the header's valid-after is a value the signers chose. Judged only there,
 * whoever holds signing keys whose certificates have expired could sign a header dated inside the
 * old windows, with a far valid-until and a huge epoch. A key must be valid now, and the header
 * can neither claim to start in the future nor last long. What a header must be relative to the
 * one held before it is verify/history.h.
 */
#ifndef DIRAUTH_VERIFY_SNAPSHOT_H
#define DIRAUTH_VERIFY_SNAPSHOT_H

#include "base/buffer.h"
#include "schema/certificate.h"
#include "schema/note.h"
#include "schema/snapshot.h"
#include "schema/trust_bundle.h"
#include "verify/keyring.h"

#include <stddef.h>
#include <stdint.h>

/* The longest signed header note read: the header text, the blank line, and the most signature
 * lines a note may carry, each "— " + name + " " + base64(key id || signature) + "\n". */
#define VERIFY_SIGNATURE_LINE_MAX (4 + NOTE_NAME_MAX + 1 + ((4 + NOTE_SIGNATURE_MAX + 2) / 3) * 4 + 1)
#define VERIFY_HEADER_NOTE_MAX                                                                               \
	(SNAPSHOT_HEADER_MAX_BYTES + 1 + NOTE_MAX_SIGNATURES * VERIFY_SIGNATURE_LINE_MAX)

#define VERIFY_DEFAULT_CLOCK_SKEW   300ULL    /* seconds valid-after may lie ahead of now */
#define VERIFY_DEFAULT_MAX_VALIDITY 604800ULL /* longest valid-until - valid-after: 7 days */
#define VERIFY_DEFAULT_MAX_CHAIN    1024ULL   /* most epochs walked between a held and a new header */

/* The time and history limits of a verifier; verify_snapshot_policy_default fills the defaults. */
struct verify_snapshot_policy {
	uint64_t clock_skew;   /* a header whose valid-after is later than now + clock_skew is refused */
	uint64_t max_validity; /* a header valid for longer (valid-until - valid-after) is refused */
	uint64_t max_chain;    /* a new epoch more than this past the held one is refused (history.h) */
};

/* Fills policy with VERIFY_DEFAULT_CLOCK_SKEW, _MAX_VALIDITY and _MAX_CHAIN. */
void verify_snapshot_policy_default(struct verify_snapshot_policy *policy);

/* The trust bundle's pins in the form verify/keyring.h takes: a keyring of the bundle's
 * authorities with the certificates of the certificate bundle (bytes as served) that they signed.
 * *out gets it for verify_keyring_free (NULL on failure). Returns 0; DIRAUTH_ERR_CONFIG ("the trust
 * bundle's authorities cannot be pinned: ..."); the errors of verify_keyring_add_certificates. */
int verify_keyring_from_trust_bundle(const struct trust_bundle *bundle, const uint8_t *certificates,
                                     size_t certificates_len, struct certificate_keyring **out, size_t *added,
                                     char *detail, size_t detail_cap);

/* What believes a snapshot header of a trust bundle: its keyring, its threshold, in its words. */
#define VERIFY_TRUST_BUNDLE_PINNED_BY "the trust bundle"

/*
 * Verifies a signed header note for namespace_name against the bundle and the certificates of
 * the certificate bundle (bytes as served), at time now, with the limits of policy (NULL: the
 * defaults), in the order: the namespace is the bundle's, the note's size and syntax, the
 * keyring, the signatures, then what the now-believed text says. *header is zeroed first and
 * filled on success; signers (may be NULL) gets who signed. Details start with "header: " except
 * for the keyring's ("certificates: ...") and the namespace's. Returns 0 or:
 *   DIRAUTH_ERR_CONFIG        "namespace not in the trust bundle", or the bundle's authorities
 *                             cannot be pinned;
 *   DIRAUTH_ERR_BOUNDS        the note is larger than VERIFY_HEADER_NOTE_MAX or its text than a
 *                             header; valid for longer than policy->max_validity; records or
 *                             body-size past the bundle's bounds;
 *   DIRAUTH_ERR_SYNTAX        not a signed note, not a snapshot header; a malformed certificate
 *                             bundle (also DIRAUTH_ERR_BOUNDS);
 *   DIRAUTH_ERR_UNKNOWN_KEY, DIRAUTH_ERR_THRESHOLD, DIRAUTH_ERR_SIGNATURE   as verify_note, at
 *                             the header's valid-after and now;
 *   DIRAUTH_ERR_MISMATCH      "header: wrong namespace '...'", "header: wrong origin '...', the
 *                             trust bundle pins '...'";
 *   DIRAUTH_ERR_STALE         "header: not yet valid: ..." (valid-after later than now +
 *                             clock_skew), "header: stale: ..." (valid-until not after now);
 *   DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_CRYPTO, DIRAUTH_ERR_INTERNAL   the check could not run.
 */
int verify_snapshot_header(const struct trust_bundle *bundle, const char *namespace_name,
                           const uint8_t *certificates, size_t certificates_len, const uint8_t *note,
                           size_t note_len, uint64_t now, const struct verify_snapshot_policy *policy,
                           struct snapshot_header *header, struct verify_signers *signers, char *detail,
                           size_t detail_cap);

/*
 * Decodes a body as served (Content-Encoding encoding: "", "identity", "gzip" or "zstd"; NULL is
 * identity) into body (an initialised buffer, emptied first, the caller frees it), bounded by the
 * bundle's max-body-compressed as served and by the header's body-size while decoding, and
 * verifies it against the verified header (snapshot_body_verify, reading at most the bundle's
 * max-records). Details start with "body: ". Returns 0 or:
 *   DIRAUTH_ERR_SYNTAX        an unsupported encoding; data that does not decode;
 *   DIRAUTH_ERR_BOUNDS        larger as served than the bundle allows; decodes past the
 *                             header's body-size or the ratio guard;
 *   DIRAUTH_ERR_MISMATCH      the body is not the one the header commits to;
 *   DIRAUTH_ERR_SIGNATURE, DIRAUTH_ERR_UNKNOWN_KEY   a record's provider signature;
 *   any other error of snapshot_body_verify ("body: refused: ..."), DIRAUTH_ERR_NOMEM,
 *   DIRAUTH_ERR_CRYPTO, DIRAUTH_ERR_INTERNAL.
 */
int verify_snapshot_body(const struct trust_bundle *bundle, const struct snapshot_header *header,
                         const char *encoding, const uint8_t *data, size_t len, struct buffer *body,
                         char *detail, size_t detail_cap);

/* A body's limits under the bundle, as every body and diff is read here: its max-records, and for
 * method 2's sections at most one health entry per endpoint of every record, and as many
 * revocations; the body's own size bounds them further. For a client building a diff between
 * verified bodies under the same limits it reads them with. */
void verify_snapshot_body_limits(const struct trust_bundle *bundle, struct snapshot_body_limits *out);

/*
 * The body of a verified header rebuilt from a diff (schema/snapshot-diff.md) as served
 * (Content-Encoding encoding, as for verify_snapshot_body) and base, a body held and verified
 * before: the diff is bounded as served by the bundle's max-body-compressed and decoded under the
 * header's body-size and the longest diff head (a diff is never larger than the body it rebuilds,
 * its head aside: one that is would not be offered); it must name the header's body-sha256 as its target; it
 * is applied under the bundle's limits (snapshot_diff_apply, which checks the base's digest and the
 * result's); and the result is then verified exactly as a body fetched whole (verify_snapshot_body,
 * identity). body gets it. Details start with "diff: " for the diff's own refusals, "body: " for the
 * result's. Returns 0, or the errors of verify_snapshot_body and of snapshot_diff_apply
 * (DIRAUTH_ERR_MISMATCH: not a diff from base, or not to this header's body).
 */
int verify_snapshot_diff(const struct trust_bundle *bundle, const struct snapshot_header *header,
                         const uint8_t *base, size_t base_len, const char *encoding, const uint8_t *data,
                         size_t len, struct buffer *body, char *detail, size_t detail_cap);

#endif
