/*
 * votes.h: what an authority keeps of each epoch's round with the others: the votes it holds
 * (its own and its peers'), the header it computed, the signatures it received, and the
 * conflicting statements it was sent, kept as evidence.
 *
 * Everything is keyed by namespace, epoch and member (the member's index in the configured
 * authority set, so that a name can never stand for two keys). The store checks no signature: its
 * callers (server/round) verify a statement before they keep it. What the store guarantees is
 * that a statement once kept is not replaced: the first vote and the first signature of a member
 * for an epoch stay, a different one is refused with DIRAUTH_ERR_MISMATCH (its caller keeps it as
 * evidence), and the same bytes again are DIRAUTH_ERR_EXISTS. So a crash and restart in the
 * middle of a round resumes with exactly what had been accepted.
 *
 * Retention: votes, computed headers and signatures are needed for a few epochs only (a peer
 * catching up asks for the published snapshot, not for them); evidence is kept much longer.
 * store_round_retain removes both below the epochs its caller gives.
 */
#ifndef DIRAUTH_SERVER_STORE_VOTES_H
#define DIRAUTH_SERVER_STORE_VOTES_H

#include "base/buffer.h"
#include "kv/kv.h"
#include "server/store/store.h"

#include <stddef.h>
#include <stdint.h>

/* Members of one authority set, at most (a member index is below this). */
#define STORE_MEMBERS_MAX 32

/* Keeps the vote envelope of member for epoch. Returns 0 (kept), DIRAUTH_ERR_EXISTS (the same
 * bytes were kept before), DIRAUTH_ERR_MISMATCH (another vote of that member is kept; nothing
 * changed), DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_BOUNDS (name too long or member out of range),
 * DIRAUTH_ERR_FULL, DIRAUTH_ERR_STORE. */
int store_vote_put(struct store *store, const char *namespace_name, uint64_t epoch, unsigned member,
                   const uint8_t *envelope, size_t len);

/* Copies the kept vote envelope of member for epoch into out (replaced). Returns 0,
 * DIRAUTH_ERR_NOT_FOUND, DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_BOUNDS, DIRAUTH_ERR_NOMEM,
 * DIRAUTH_ERR_STORE. */
int store_vote_get(struct store *store, const char *namespace_name, uint64_t epoch, unsigned member,
                   struct buffer *out);

/* Bit m of *members is set when member m's vote for epoch is kept. Returns 0 (0 for an unknown
 * namespace), DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_BOUNDS, DIRAUTH_ERR_STORE. */
int store_votes_held(struct store *store, const char *namespace_name, uint64_t epoch, uint32_t *members);

/* Keeps the header text this authority computed for epoch. Returns 0, DIRAUTH_ERR_EXISTS (the
 * same text), DIRAUTH_ERR_MISMATCH (another text is kept: consensus is deterministic, so this is
 * a fault), and the errors of store_vote_put. */
int store_consensus_put(struct store *store, const char *namespace_name, uint64_t epoch, const uint8_t *text,
                        size_t len);

/* Copies the kept header text of epoch into out. Returns as store_vote_get. */
int store_consensus_get(struct store *store, const char *namespace_name, uint64_t epoch, struct buffer *out);

/* Keeps member's signed header note for epoch (the header text and that member's one signature
 * line), whether or not it is over the header this authority computed. Returns as
 * store_vote_put. */
int store_signature_put(struct store *store, const char *namespace_name, uint64_t epoch, unsigned member,
                        const uint8_t *note, size_t len);

/* Copies member's kept signed header note for epoch into out. Returns as store_vote_get. */
int store_signature_get(struct store *store, const char *namespace_name, uint64_t epoch, unsigned member,
                        struct buffer *out);

/* Bit m of *members is set when member m's signed header for epoch is kept. Returns as
 * store_votes_held. */
int store_signatures_held(struct store *store, const char *namespace_name, uint64_t epoch, uint32_t *members);

/* What a piece of evidence shows. */
enum store_evidence_kind {
	STORE_EVIDENCE_CONFLICTING_VOTES = 1,   /* two different votes of one member for one epoch */
	STORE_EVIDENCE_CONFLICTING_HEADERS = 2, /* two different headers signed by one member */
	STORE_EVIDENCE_OTHER_HEADER = 3, /* a member's signed header other than the one computed here */
};

/* The longest piece of evidence: two statements (votes carry their bodies). */
#define STORE_EVIDENCE_MAX ((size_t)512 << 20)

/* Keeps evidence against member for epoch: one or two statements as they were received (first
 * may be the one kept before, second the one that conflicts with it; second_len 0 for a single
 * statement). At most one piece per (namespace, epoch, member, kind): a later one is
 * DIRAUTH_ERR_EXISTS and changes nothing, so evidence cannot be used to fill the store. Returns
 * 0, DIRAUTH_ERR_EXISTS, DIRAUTH_ERR_BOUNDS (over STORE_EVIDENCE_MAX), and the errors of
 * store_vote_put. */
int store_evidence_put(struct store *store, const char *namespace_name, uint64_t epoch, unsigned member,
                       enum store_evidence_kind kind, const uint8_t *first, size_t first_len,
                       const uint8_t *second, size_t second_len);

/* One kept piece of evidence, borrowed for the visitor's call. */
struct store_evidence {
	uint64_t epoch;
	unsigned member;
	enum store_evidence_kind kind;
	const uint8_t *first;
	size_t first_len;
	const uint8_t *second; /* NULL when second_len is 0 */
	size_t second_len;
};

typedef int (*store_evidence_visitor)(void *context, const struct store_evidence *evidence);

/* Calls visit for every piece of evidence of namespace_name from epoch from_epoch on, in
 * ascending (epoch, member, kind) order, inside one read transaction. A non-zero return from
 * visit stops the walk and is returned. Otherwise returns 0 (also for an unknown namespace),
 * DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_BOUNDS, DIRAUTH_ERR_STORE. */
int store_evidence_foreach(struct store *store, const char *namespace_name, uint64_t from_epoch,
                           store_evidence_visitor visit, void *context);

/* Removes the votes, computed headers and signatures of namespace_name's epochs below
 * keep_round_from, and its evidence of epochs below keep_evidence_from. Returns 0,
 * DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_BOUNDS, DIRAUTH_ERR_STORE. */
int store_round_retain(struct store *store, const char *namespace_name, uint64_t keep_round_from,
                       uint64_t keep_evidence_from);

/* ---- for the store's own files ---- */

/* The table's databases, for store_open to open with the others: fills out (room for
 * STORE_TABLE_DATABASES_MAX) with their names and store's handles of them; returns the count. */
size_t votes_databases(struct store *store, struct kv_database *out);

#endif
