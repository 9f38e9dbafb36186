/*
 * authority_set.h: whom this authority believes: the members of its authority set, each known by
 * the identity key its configuration pins, and the signing keys each identity certified.
 *
 * A member is its keys, never its address (docs/protocol.md, "The authority set"): a vote or a
 * signature counts for member M only when it verifies under a signing key that M's pinned identity
 * certified for a window containing both the statement's time and now. The certificates come from
 * where each member says them: its certificate bundle at GET <url>/v1/certificates, fetched with
 * the peer client, and for this authority itself the bundle its own signer serves, which the
 * caller installs (and may let the set fetch again through a callback). Each member has its own
 * keyring (verify/keyring.h) pinning its one identity, so a statement is judged against the
 * member it claims to come from and against no other.
 *
 * The certificates are kept across restarts when the options name a cache directory: a member
 * unreachable when this authority starts is still judged by the certificates it served before,
 * so the snapshots it signed still count (an authority that restarts while one member is cut off
 * would otherwise see fewer than k signers on every snapshot of the others and could not catch
 * up). A cached bundle is only ever believed through the identity the configuration pins, like a
 * fetched one: a file changed by anyone without that identity's key adds no key.
 *
 * The certificates are cached. authority_set_refresh fetches, at most every refresh_seconds per
 * member, the bundles of the members that are due, all at once (peers_broadcast). Besides, a
 * statement whose signature names a member's key that member's ring has no certificate for at
 * the times asked (a key rotated in since the last fetch, a certificate renewed) makes the set
 * fetch that member's bundle at once and judge the statement again; such an on-demand fetch
 * happens at most once per member per AUTHORITY_SET_ON_DEMAND_SECONDS, so that a flood of
 * statements under made-up keys costs the peer one request per that interval, and the flood
 * nothing but refusals. A failed fetch keeps the member's ring as it was; a fetched bundle
 * replaces it (certificates the member no longer serves are forgotten).
 *
 * Time: refresh intervals and the on-demand rate are judged on the `now` the caller passes (its
 * clock, seconds), like every validity window. A now earlier than the last fetch (a clock set
 * back) counts as due, so a clock that moved back does not stop refreshes.
 *
 * Threads: any number of threads may verify at once while a refresh runs. Each ring is reached
 * through a pointer under one read-write lock: verifications hold it for reading, and a fetched
 * bundle is built into a new ring outside the lock and swapped in under the write lock, so a
 * verification never waits for the network. The one exception is deliberate: a verification that
 * needs an on-demand fetch of a member while a fetch of that member is already running waits for
 * that fetch (at most the peer timeout) and judges again with its result, rather than refusing
 * a statement its peer certified a moment ago.
 */
#ifndef DIRAUTH_SERVER_PEERS_AUTHORITY_SET_H
#define DIRAUTH_SERVER_PEERS_AUTHORITY_SET_H

#include "base/buffer.h"
#include "schema/certificate.h"
#include "schema/note.h"
#include "server/config/config.h"
#include "server/peers/peer_client.h"
#include "verify/keyring.h"

#include <stddef.h>
#include <stdint.h>

#define AUTHORITY_SET_REFRESH_SECONDS   300
#define AUTHORITY_SET_ON_DEMAND_SECONDS 10
#define AUTHORITY_SET_PINNED_BY         "the authority set"

/* Where this authority's own certificate bundle comes from when the set refreshes it: appends the
 * bundle (bytes as GET /v1/certificates serves them) to out and returns 0, or returns a negative
 * dirauth_error (the own ring then stays as it was). Called from the refreshing thread, or from a
 * verifying thread for an on-demand refresh: it must be thread-safe. */
typedef int (*authority_set_own_source)(void *context, struct buffer *out);

/* Zeroed: the defaults. */
struct authority_set_options {
	uint64_t refresh_seconds;                  /* 0: AUTHORITY_SET_REFRESH_SECONDS */
	authority_set_own_source own_certificates; /* NULL: the own bundle is only what is installed */
	void *own_context;
	/* An existing directory where each peer's last fetched bundle is kept, as the file
	 * <member name>.certificates, replaced atomically whenever a fetch brings a different one, and
	 * read back when the set is made. NULL: nothing is kept. */
	const char *cache_dir;
};

/* The largest cached bundle read back, in bytes (a bundle as GET /v1/certificates serves it is far
 * smaller). */
#define AUTHORITY_SET_CACHE_MAX (256 * 1024)

struct authority_set;

/* Builds the set of config's members (names and identities copied; config may be freed after),
 * its threshold and this authority's index. client (borrowed; must outlive the set; may be NULL,
 * and then no member's bundle is ever fetched, only installed) must have been made from the same
 * configuration. own_certificates (own_len bytes; may be NULL) is this authority's bundle as its
 * signer serves it, installed for self_index. No peer is contacted. options may be NULL. Each
 * peer's cached bundle, when options name a cache directory, is installed too; one that cannot be
 * read or is not a bundle of the pinned identity is ignored (the first refresh fetches it).
 * A member without a pinned identity (the single-authority configuration, which has no
 * authorities section) gets a ring that pins nothing: nothing is ever believed as its.
 * *out gets the set (NULL on failure). Returns 0;
 *   DIRAUTH_ERR_CONFIG   no member, more than CONFIG_MAX_MEMBERS, a threshold of 0 or above the
 *                        member count, a self_index out of range, a client with another member
 *                        count, or an identity that cannot be pinned ("<name>: the identities
 *                        cannot be pinned: ...");
 *   DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_BOUNDS  the own bundle is not a certificate bundle
 *                        ("certificates: not a certificate bundle: ...");
 *   DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_CRYPTO. detail (capacity cap; may be NULL) gets the sentence. */
int authority_set_new(const struct config *config, const struct peer_client *client,
                      const uint8_t *own_certificates, size_t own_len,
                      const struct authority_set_options *options, struct authority_set **out, char *detail,
                      size_t cap);

/* Frees the set. Accepts NULL. No call on it may be running. */
void authority_set_free(struct authority_set *set);

size_t authority_set_member_count(const struct authority_set *set); /* n */
size_t authority_set_threshold(const struct authority_set *set);    /* k */
size_t authority_set_self_index(const struct authority_set *set);

/* The key name of member index (borrowed from the set), or NULL for an index out of range. */
const char *authority_set_member_name(const struct authority_set *set, size_t index);

/* The index of the member whose key name is name. Returns 0 with *index set, or
 * DIRAUTH_ERR_NOT_FOUND. */
int authority_set_member_by_name(const struct authority_set *set, const char *name, size_t *index);

/* The number of certificates member index's ring holds now (0 for an index out of range). */
size_t authority_set_certificate_count(struct authority_set *set, size_t index);

/* The latest not-after (unix seconds) among the certificates member index's ring holds now, into
 * *not_after (for GET /v1/metrics: when the member stops being able to sign unless it renews).
 * Returns 0, or DIRAUTH_ERR_NOT_FOUND (no such member, or its ring holds no certificate). */
int authority_set_certificate_not_after(struct authority_set *set, size_t index, uint64_t *not_after);

/* Replaces member index's ring by one built from bundle (len bytes, as GET /v1/certificates serves
 * it): the certificates its pinned identity signed. Returns 0; DIRAUTH_ERR_NOT_FOUND (no such
 * member); DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_BOUNDS (not a certificate bundle: the ring stays);
 * DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_CRYPTO (the ring stays). detail gets the sentence. */
int authority_set_install(struct authority_set *set, size_t index, const uint8_t *bundle, size_t len,
                          char *detail, size_t cap);

/* Fetches, concurrently, the bundle of every member that is due at now (never fetched, or last
 * fetched refresh_seconds or more before now, and not being fetched already) and installs each
 * that arrives (200 and a certificate bundle); this authority's own is due likewise when the
 * options gave an own source. Takes at most about one peer timeout however many peers hang.
 * Returns 0 when every due member was refreshed (or none was due); DIRAUTH_ERR_UNAVAILABLE when at
 * least one was not (its ring stays as it was; detail lists "<name>: <why>" for each, "; "-
 * separated); DIRAUTH_ERR_NOMEM. */
int authority_set_refresh(struct authority_set *set, uint64_t now, char *detail, size_t cap);

/* Whether member index signed note: 0 when the note carries a valid signature by a signing key
 * that member's pinned identity certified for a window containing both at (the statement's own
 * time) and now, by verify_note with threshold 1 on that member's ring. When it does not and one
 * of its signatures names that member with a key the ring has no certificate for at those times,
 * the member's bundle is fetched on demand (rate-limited, see above) and the note judged once
 * more. Returns 0 or:
 *   DIRAUTH_ERR_UNKNOWN_KEY  no signature by a key the member certified at both times ("signed by
 *                            a key not certified by any pinned identity at ... (<why each did not
 *                            count>)");
 *   DIRAUTH_ERR_SIGNATURE    a signature by such a key does not verify ("bad signature: ...");
 *   DIRAUTH_ERR_NOT_FOUND    no member index ("no member <index> in the authority set");
 *   DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_CRYPTO.
 * detail (capacity cap; may be NULL) gets verify_note's sentence. */
int authority_set_verify(struct authority_set *set, size_t index, const struct note *note, uint64_t at,
                         uint64_t now, char *detail, size_t cap);

/* Which distinct members validly signed a note that may carry several signatures (a snapshot
 * header collecting the set's signatures), each judged as authority_set_verify judges it, on-demand
 * fetches included (one member after another), without any threshold. counted (at least
 * authority_set_member_count entries) gets 1 for each member that signed and 0 for the others;
 * *count gets how many signed. Returns 0 (also when none signed); DIRAUTH_ERR_SIGNATURE when a
 * signature by a key some member certified does not verify: a mirror refuses such a note whole,
 * though counted still says who else signed; DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_CRYPTO. */
int authority_set_count_signers(struct authority_set *set, const struct note *note, uint64_t at, uint64_t now,
                                uint8_t *counted, size_t *count);

/* What a mirror of this set believes, for judging a peer's published snapshot as a mirror does
 * (catching up, verify_note or the verify/ checks that take pins): *ring gets a new keyring (for
 * verify_keyring_free) pinning every member's identity with the certificates of each that are
 * valid at now (each member's first CERTIFICATE_BUNDLE_MAX / n in its bundle's order, so that no
 * member can crowd the others out of the ring's room); pins gets that ring, the set's threshold
 * and AUTHORITY_SET_PINNED_BY. A statement verified at an earlier time and now needs a certificate
 * valid now, so none that matters is left out. The ring is a copy: later refreshes do not change
 * it. Returns 0; DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_CONFIG (*ring is then NULL). */
int authority_set_pins(struct authority_set *set, uint64_t now, struct certificate_keyring **ring,
                       struct verify_pins *pins);

/* The certificates of the whole set as one bundle (what GET /v1/certificates serves at a member of
 * several authorities, so that a mirror asking any one authority learns every member's signing
 * keys): this authority's own bundle own (own_len bytes, as its signer serves it; may be NULL),
 * then per other member the certificates of the bundle last installed for it, each kept only when
 * that member's pinned identity signed it, in member order, at most CERTIFICATE_BUNDLE_MAX in
 * all. Appends to out. Returns 0, DIRAUTH_ERR_SYNTAX or DIRAUTH_ERR_BOUNDS (own is not a
 * bundle), DIRAUTH_ERR_NOMEM. */
int authority_set_bundle(struct authority_set *set, const uint8_t *own, size_t own_len, struct buffer *out);

#endif
