/*
 * keyring.h: which signatures speak for a pinned identity, and how many must agree.
 *
 * Statements (snapshot headers, receipts, votes) are signed by online signing keys; what a
 * verifier pins are offline identity keys (a trust bundle's `authority` lines, or the peers of an
 * authority's config). The link is the key certificate (schema/certificate.h): an identity key
 * vouches for one signing key for a window [valid-after, valid-until). A keyring
 * (struct certificate_keyring) holds the pinned identities and the certificates one of them
 * signed; a note is believed when at least a threshold of distinct identities signed it with a
 * key certified at the statement's own time, and, when the caller gives a second time (its
 * clock), at that time too. Two keys of one identity count once, unknown keys count zero, and a
 * signature by a certified key that does not verify refuses the note (hard rule 10).
 *
 * Nothing here knows where the pins come from: the caller says it in words (pinned_by, e.g.
 * "the trust bundle", "the configuration") for the details only. A peer authority's vote is
 * checked with verify_keyring_for_identity (the ring narrowed to that peer) and verify_note at
 * the vote's time and now.
 *
 * Keyrings are tens of kilobytes (64 certificates), so they live on the heap: the functions that
 * make one return it for verify_keyring_free. A keyring is never modified by verification and may
 * be shared by threads that only verify.
 */
#ifndef DIRAUTH_VERIFY_KEYRING_H
#define DIRAUTH_VERIFY_KEYRING_H

#include "schema/certificate.h"
#include "schema/note.h"
#include "verify/verify.h"

#include <stddef.h>
#include <stdint.h>

/* What to believe: a keyring, the number of distinct identities a note needs, and the name of
 * whoever pinned the identities, as details say it ("is not an authority of <pinned_by>",
 * "<pinned_by> requires 2"); NULL reads "the keyring". Borrowed by every function that takes it. */
struct verify_pins {
	const struct certificate_keyring *ring;
	size_t threshold; /* at least 1; 0 is refused (DIRAUTH_ERR_INTERNAL) */
	const char *pinned_by;
};

/* Who signed a note, as far as the pins are concerned. */
struct verify_signers {
	size_t count;                 /* distinct pinned identities whose certified keys signed */
	size_t pinned;                /* identities the keyring pins */
	char names[VERIFY_NAMES_MAX]; /* the counted ones, ", "-separated, in pin order */
};

/* Makes a keyring pinning identity_count identity keys (may be 0) and no certificates yet. *out
 * gets it (NULL on failure). Returns 0; DIRAUTH_ERR_CONFIG when the identities cannot be pinned
 * (more than a keyring holds, or not Ed25519 keys: "the identities cannot be pinned: ...");
 * DIRAUTH_ERR_NOMEM ("out of memory"). */
int verify_keyring_new(const struct note_verifier *identities, size_t identity_count,
                       struct certificate_keyring **out, char *detail, size_t detail_cap);

/* Adds every certificate of a certificate bundle (the bytes as served at GET /v1/certificates)
 * that one of the ring's pinned identities signed; certificates of other identities, or that do
 * not verify, are skipped. *added (may be NULL) gets the number kept. Returns 0;
 * DIRAUTH_ERR_SYNTAX or DIRAUTH_ERR_BOUNDS when the bundle is malformed ("certificates: not a
 * certificate bundle: ..."); DIRAUTH_ERR_NOMEM or DIRAUTH_ERR_CRYPTO ("certificates: ..."), and
 * then the ring may hold some of the certificates. */
int verify_keyring_add_certificates(struct certificate_keyring *ring, const uint8_t *certificates, size_t len,
                                    size_t *added, char *detail, size_t detail_cap);

/* verify_keyring_new and verify_keyring_add_certificates in one: on failure *out is NULL and
 * nothing is left to free. Returns the errors of both. */
int verify_keyring_build(const struct note_verifier *identities, size_t identity_count,
                         const uint8_t *certificates, size_t len, struct certificate_keyring **out,
                         size_t *added, char *detail, size_t detail_cap);

/* Frees a keyring made by this module. Accepts NULL. */
void verify_keyring_free(struct certificate_keyring *ring);

/* The keyring narrowed to one identity: the identity pinned under name and the certificates it
 * issued, so that a statement which must come from that party (a receipt naming its authority, a
 * peer's vote) is verified against it alone. *out gets a new keyring for verify_keyring_free.
 * Returns 0; DIRAUTH_ERR_NOT_FOUND when no identity of that name is pinned (*out is NULL);
 * DIRAUTH_ERR_NOMEM. */
int verify_keyring_for_identity(const struct certificate_keyring *ring, const char *name,
                                struct certificate_keyring **out);

/* Verifies a parsed note against pins: a signature counts for the identity whose certificate
 * covers both at (the statement's own time: a header's valid-after, a receipt's accepted-at) and
 * also_at (the caller's now; pass at again for one time), so that a key whose certificate has
 * expired cannot vouch for a statement however its time was chosen. Either time may be the
 * earlier. signers (may be NULL) gets who counted, also on a refusal.
 *
 * Returns 0 when at least pins->threshold identities counted;
 *   DIRAUTH_ERR_UNKNOWN_KEY when none did ("signed by a key not certified by any pinned identity
 *     at <time>[ and at <time>] (<why each signature did not count>)");
 *   DIRAUTH_ERR_THRESHOLD when fewer did ("too few signatures: 1 of 3 authorities signed with a
 *     key certified at <time>, <pinned_by> requires 2 (counted: ...; not counted: ...)");
 *   DIRAUTH_ERR_SIGNATURE when a signature by a certified key does not verify ("bad signature:
 *     ...");
 *   DIRAUTH_ERR_INTERNAL (threshold 0), DIRAUTH_ERR_CRYPTO ("cannot verify signatures: ...");
 *   DIRAUTH_ERR_NOMEM ("out of memory"). */
int verify_note(const struct verify_pins *pins, const struct note *note, uint64_t at, uint64_t also_at,
                struct verify_signers *signers, char *detail, size_t detail_cap);

/* Explains in one phrase why the note's signatures did not count at at and also_at: for each
 * signature not covered at both times, that its certificate covers only another window, or that
 * it is a pinned identity key (which signs only certificates, not statements), or that the
 * identity of its name certified no such key, or that its name is no authority of pinned_by
 * (NULL: "the keyring"); phrases are "; "-separated. When every signature was covered (the
 * note fell short of a threshold through keys of one identity), says so. Never fails; out is
 * always NUL-terminated when out_cap > 0. */
void verify_note_explain(const struct certificate_keyring *ring, const struct note *note, uint64_t at,
                         uint64_t also_at, const char *pinned_by, char *out, size_t out_cap);

#endif
