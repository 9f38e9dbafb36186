/*
 * history.h: a new snapshot header judged against the one held before it.
 *
 * Whoever keeps a snapshot (a mirror's latest.header, a monitor's last view, an authority's last
 * published header) must never go backwards and must notice two histories. Given a held header
 * and a new one already verified on its own (verify/snapshot.h):
 *
 *   - an older epoch is a rollback;
 *   - the same epoch with different text is equivocation: both notes, each signed by the
 *     threshold, are the evidence (the caller keeps them; this module writes nothing); the same
 *     text with more cosignatures is the same snapshot;
 *   - a newer epoch must descend from the held header: following `previous` back from the new
 *     header through the headers for the epochs in between (each verified like a header, at its
 *     own valid-after) reaches the held header's digest, within a bounded number of epochs.
 *
 * Why the chain: without it, whoever once held signing keys could sign a header with a huge
 * epoch, and a holder that accepted it would then refuse every genuine snapshot as a rollback. An
 * accepted header can only be a successor of what the holder already believed. A holder away
 * longer than the bound is re-seeded deliberately, never silently.
 *
 * The walk is a state (begin, add, reached, finish) so that whoever downloads the intermediate
 * headers can stop as soon as the held header is reached: add the header of each epoch from the
 * new one's - 1 downwards; an epoch with no snapshot is skipped by not adding it.
 *
 * One link of a chain is one rule, verify_history_follows, whichever way the chain is walked: back
 * from a new header (the walk above, a mirror's), or forward from the held one, header after
 * header as they are taken oldest first (an authority catching up with the others).
 */
#ifndef DIRAUTH_VERIFY_HISTORY_H
#define DIRAUTH_VERIFY_HISTORY_H

#include "schema/snapshot.h"
#include "verify/keyring.h"

#include <stddef.h>
#include <stdint.h>

/* A header held from before, as the history checks need it. */
struct verify_held {
	struct snapshot_header header;
	uint8_t digest[32]; /* SHA-256 of its text: what its successor names as previous */
};

/* Reads a held header note (as stored: the signed note) back. Its signatures are not checked
 * again: it was verified when it was taken. Returns 0; DIRAUTH_ERR_SYNTAX or DIRAUTH_ERR_BOUNDS
 * when it is no snapshot header note ("held header cannot be read back: ..."); without it there is
 * no rollback check, so a caller must deny rather than skip; DIRAUTH_ERR_NOMEM,
 * DIRAUTH_ERR_CRYPTO. */
int verify_held_parse(const uint8_t *note, size_t len, struct verify_held *out, char *detail,
                      size_t detail_cap);

/* Compares a verified header (header, parsed from note) with the held one. *newer gets 1 when the
 * new epoch is past the held one, so that the chain must be walked (verify_chain_*), else 0.
 * Returns 0 (same epoch and text, or newer); DIRAUTH_ERR_ROLLBACK for an older epoch
 * ("rollback: the server offers epoch N, this mirror holds epoch H"); DIRAUTH_ERR_MISMATCH for
 * equivocation ("equivocation: two different headers signed for epoch N"); DIRAUTH_ERR_SYNTAX,
 * DIRAUTH_ERR_BOUNDS or DIRAUTH_ERR_NOMEM when note does not parse ("header: not a signed note:
 * ..."); DIRAUTH_ERR_CRYPTO when it cannot be hashed. */
int verify_history_compare(const struct verify_held *held, const uint8_t *note, size_t note_len,
                           const struct snapshot_header *header, int *newer, char *detail, size_t detail_cap);

/* The rule of one link: next follows before in one history when its previous is before's digest,
 * its epoch is later and its valid-after is not earlier. Both headers are taken as verified (on
 * their own, by the caller); this compares them only. Returns 0; DIRAUTH_ERR_MISMATCH when next
 * does not follow before ("epoch B is not the previous header of epoch N"; "epoch N is not after
 * epoch B"; "epoch N is valid after V, before epoch B's valid-after VB"). */
int verify_history_follows(const struct verify_held *before, const struct snapshot_header *next, char *detail,
                           size_t detail_cap);

/* The walk from a new header back to the held one. Fields are the walk's own; read them only
 * through the functions below. The pins are borrowed and must outlive the walk; nothing is
 * allocated, so there is nothing to free. */
struct verify_chain {
	struct verify_pins pins;
	char namespace_name[NAMESPACE_NAME_MAX + 1]; /* the new header's: every link's */
	char origin[SNAPSHOT_ORIGIN_MAX + 1];
	struct verify_held held;
	struct snapshot_header next; /* the oldest header of the chain so far: the next link precedes it */
	int started;
	int reached;
};

/* Starts the walk from the verified header (newer than held) back to held, its links to be
 * verified with pins (a link is a past statement: judged at its own valid-after only), allowing
 * at most max_chain epochs between the two. Returns 0; DIRAUTH_ERR_BOUNDS when header's epoch is
 * more than max_chain past the held one ("history: the server offers epoch N, D epochs past the
 * held epoch H, more than the M this mirror walks back ...; a mirror away that long must be
 * re-seeded deliberately"); DIRAUTH_ERR_MISMATCH when header is dated before the held header (the
 * "history does not chain" refusal below); DIRAUTH_ERR_INTERNAL when header is not newer. */
int verify_chain_begin(struct verify_chain *chain, const struct verify_pins *pins,
                       const struct verify_held *held, const struct snapshot_header *header,
                       uint64_t max_chain, char *detail, size_t detail_cap);

/* Adds the header note held for epoch (older than every link so far, newer than the held
 * epoch). Details start with "history: epoch E: " for a link that is no good header and with
 * "history does not chain to the held snapshot (epoch H): " for one that does not chain. Returns
 * 0; DIRAUTH_ERR_BOUNDS (larger than VERIFY_HEADER_NOTE_MAX, or its text than a header),
 * DIRAUTH_ERR_SYNTAX (not a header note); the errors of verify_note; DIRAUTH_ERR_MISMATCH when it
 * does not chain (its epoch, namespace or origin, a valid-after outside the held header's and the
 * next header's, or the next header does not follow it by verify_history_follows: "epoch E is not
 * the previous header of epoch N"); DIRAUTH_ERR_INTERNAL when the
 * walk was not begun, had already reached the held header, or epoch is out of order;
 * DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_CRYPTO. */
int verify_chain_add(struct verify_chain *chain, uint64_t epoch, const uint8_t *note, size_t note_len,
                     char *detail, size_t detail_cap);

/* 1 once the chain reaches the held header, else 0. */
int verify_chain_reached(const struct verify_chain *chain);

/* Returns 0 when the chain reached the held header, else DIRAUTH_ERR_MISMATCH ("history does not
 * chain to the held snapshot (epoch H): the previous of epoch E is no header ...). */
int verify_chain_finish(const struct verify_chain *chain, char *detail, size_t detail_cap);

#endif
