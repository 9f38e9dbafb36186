/*
 * certificate.h: key certificates, by which an authority's offline identity key vouches for an
 * online signing key for a bounded window (Tor's authority key certificates), and the keyring
 * a verifier builds from pinned identity keys and certificates.
 *
 * Certificate text (a signed note, signed by the identity key; grammar in
 * schema/certificate.md):
 *
 *   dirauth key-certificate v1
 *   authority <authority name: the key name shared by the identity and signing keys>
 *   identity <identity verifier key>
 *   signing-key <signing verifier key>
 *   valid-after <unix seconds>
 *   valid-until <unix seconds>        valid-after < valid-until ≤ valid-after + CERTIFICATE_MAX_WINDOW
 *
 * The identity and signing keys carry the authority's name (so signature lines name the
 * authority) but are different keys; a certificate whose two keys are equal is refused.
 *
 * A certificate bundle, as served by an authority at GET /v1/certificates, frames several
 * certificate notes (each is multi-line):
 *
 *   dirauth certificates v1
 *   certificate <byte length>
 *   <that many bytes: one signed certificate note>
 *   ...
 *
 * Keyring: the verifier pins identity keys (trust bundle `authority` lines); it accepts a
 * certificate only if the identity key pinned under that name signed it; a statement's
 * signature then counts for the identity whose certified signing key made it, and only if the
 * statement's own time lies in the certificate's window. Two signing keys of one identity
 * (a rotation overlap) count once: thresholds count identities (hard rule 10).
 */
#ifndef DIRAUTH_SCHEMA_CERTIFICATE_H
#define DIRAUTH_SCHEMA_CERTIFICATE_H

#include "base/buffer.h"
#include "schema/note.h"

#include <stddef.h>
#include <stdint.h>

#define CERTIFICATE_MAX_BYTES        2048             /* one signed certificate note */
#define CERTIFICATE_MAX_WINDOW       (400ULL * 86400) /* longest validity window, seconds */
#define CERTIFICATE_BUNDLE_MAX       64               /* certificates in a bundle */
#define CERTIFICATE_BUNDLE_MAX_BYTES (CERTIFICATE_BUNDLE_MAX * (CERTIFICATE_MAX_BYTES + 64))

struct certificate {
	char authority[NOTE_NAME_MAX + 1];
	struct note_verifier identity;
	struct note_verifier signing_key;
	uint64_t valid_after;
	uint64_t valid_until;
};

/* Canonical text of a certificate. Returns 0, DIRAUTH_ERR_SYNTAX (names differ, keys equal,
 * window empty or too long), DIRAUTH_ERR_NOMEM. */
int certificate_encode(const struct certificate *c, struct buffer *out);

/* Parses certificate text (not a signed note). Refuses non-canonical text. */
int certificate_parse(const uint8_t *text, size_t len, struct certificate *out);

/* Parses a signed certificate note and checks it is signed by the identity key it names.
 * Returns 0, DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_BOUNDS, DIRAUTH_ERR_SIGNATURE,
 * DIRAUTH_ERR_UNKNOWN_KEY (not signed by its identity key), DIRAUTH_ERR_CRYPTO. */
int certificate_parse_signed(const uint8_t *buf, size_t len, struct certificate *out);

/* Appends a certificate bundle framing count signed certificate notes. */
int certificate_bundle_encode(const uint8_t *const *notes, const size_t *lengths, size_t count,
                              struct buffer *out);

/* One certificate note inside a parsed bundle: borrowed from the bundle's buffer. */
struct certificate_bundle_entry {
	const uint8_t *note;
	size_t note_len;
};

/* Parses a bundle held in buf (which must outlive entries). *count gets the number of entries,
 * at most CERTIFICATE_BUNDLE_MAX. Returns 0, DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_BOUNDS. */
int certificate_bundle_parse(const uint8_t *buf, size_t len,
                             struct certificate_bundle_entry entries[CERTIFICATE_BUNDLE_MAX], size_t *count);

/* A keyring: pinned identities and the signing keys certified for them. */
struct certificate_keyring {
	size_t identity_count;
	struct note_verifier identities[32];
	size_t certificate_count;
	struct certificate certificates[CERTIFICATE_BUNDLE_MAX];
};

/* Starts a keyring pinning identity_count identity keys (at most 32). */
int certificate_keyring_init(struct certificate_keyring *ring, const struct note_verifier *identities,
                             size_t identity_count);

/* Adds a signed certificate note if it is signed by the pinned identity of its name (an exact
 * match of name, key id and key). Returns 0; DIRAUTH_ERR_UNKNOWN_KEY when its identity is not
 * pinned; the errors of certificate_parse_signed; DIRAUTH_ERR_BOUNDS when the ring is full. A
 * certificate already in the ring is not added twice. */
int certificate_keyring_add(struct certificate_keyring *ring, const uint8_t *note, size_t len);

/* Adds every certificate of a bundle that verifies; certificates that do not are skipped (a
 * bundle may carry other authorities' certificates). Returns 0 or DIRAUTH_ERR_SYNTAX /
 * DIRAUTH_ERR_BOUNDS for a malformed bundle. *added (may be NULL) gets the count added. */
int certificate_keyring_add_bundle(struct certificate_keyring *ring, const uint8_t *buf, size_t len,
                                   size_t *added);

/* Verifies a signed note made at time `at` (the statement's own time: a header's valid-after, a
 * receipt's accepted-at): counts the distinct pinned identities one of whose signing keys,
 * certified with a window containing `at`, signed the note; a signing public key counts once,
 * for the first identity it is credited to, however many names or identities certify it. A
 * signature by a certified key that fails rejects the note (DIRAUTH_ERR_SIGNATURE). Returns 0
 * when at least threshold identities verified, DIRAUTH_ERR_THRESHOLD when fewer but some did,
 * DIRAUTH_ERR_UNKNOWN_KEY when none did. verified_names (may be NULL) gets the verified
 * authority names, ", "-separated, NUL-terminated, truncated to names_cap. */
int certificate_keyring_verify(const struct certificate_keyring *ring, const struct note *note, uint64_t at,
                               size_t threshold, size_t *verified_count, char *verified_names,
                               size_t names_cap);

#endif
