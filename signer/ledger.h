/*
 * ledger.h: what the signer has signed, durably: the memory that makes it refuse to
 * equivocate (like a validator's slashing-protection database). It has its own LMDB
 * environment, separate from dirauthd's.
 *
 * For each (kind, origin) it keeps the highest epoch signed and the digest of the statement
 * signed for it (votes and snapshot headers), and for checkpoints the latest (size, root)
 * signed with the log key and the latest cosigned. Both keys answer for one tree per origin: a
 * checkpoint of either kind must be consistent with the latest of both, so the signer can never
 * sign one tree head and cosign a different one. Every check-and-record is one write
 * transaction committed (fsynced) before it returns 0, so a signature handed out after a
 * successful call can never be contradicted by a later one, whatever crashes in between.
 * Nothing is ever deleted.
 */
#ifndef DIRAUTH_SIGNER_LEDGER_H
#define DIRAUTH_SIGNER_LEDGER_H

#include "crypto/merkle.h"

#include <stddef.h>
#include <stdint.h>

struct ledger;

enum ledger_epoch_kind { LEDGER_VOTE, LEDGER_SNAPSHOT_HEADER };
enum ledger_checkpoint_kind { LEDGER_CHECKPOINT_SIGNED, LEDGER_CHECKPOINT_COSIGNED };

/* Opens (creating 0700 if missing) the ledger in directory. Returns 0, DIRAUTH_ERR_IO,
 * DIRAUTH_ERR_STORE, DIRAUTH_ERR_NOMEM. */
int ledger_open(const char *directory, struct ledger **out);
void ledger_close(struct ledger *ledger);

/* Records that the statement with digest is signed for (kind, origin, epoch). Returns 0 when
 * epoch is above the highest recorded (now recorded durably) or equal with the same digest (a
 * repeat: signing again yields the same signature); DIRAUTH_ERR_ROLLBACK when epoch is lower
 * than the highest; DIRAUTH_ERR_COLLISION when epoch equals the highest with another digest
 * (equivocation); DIRAUTH_ERR_FULL, DIRAUTH_ERR_STORE. */
int ledger_record_epoch(struct ledger *ledger, enum ledger_epoch_kind kind, const char *origin,
                        uint64_t epoch, const uint8_t digest[32]);

/* The latest checkpoint of kind for origin (what that key last signed or cosigned). Returns 0 or
 * DIRAUTH_ERR_NOT_FOUND, STORE. */
int ledger_checkpoint_latest(struct ledger *ledger, enum ledger_checkpoint_kind kind, const char *origin,
                             uint64_t *size, merkle_hash root);

/* 0 when origin already has a checkpoint record, or fewer than most origins have: room to
 * record a first checkpoint of origin; DIRAUTH_ERR_FULL otherwise; DIRAUTH_ERR_STORE or
 * DIRAUTH_ERR_BOUNDS (an empty or too long origin). Nothing is ever deleted from the ledger, so
 * the signer bounds with this the logs its configuration does not name. */
int ledger_checkpoint_room(struct ledger *ledger, const char *origin, size_t most);

/* Records checkpoint (size, root) of origin as the latest of kind after proving it consistent
 * with the origin's latest of either kind (the larger of the signed and the cosigned record):
 * old_size must equal the latest's size (DIRAUTH_ERR_MISMATCH otherwise), the proof must verify
 * from (old size, old root) to (size, root) (DIRAUTH_ERR_PROOF); a smaller size is
 * DIRAUTH_ERR_ROLLBACK; the same size with another root is DIRAUTH_ERR_COLLISION; the same size
 * and root is a repeat (0, from any old size below it whatever the proof, as the head is
 * already signed, or from its own size with no proof; recorded for kind if kind did not hold it
 * yet, which is how the checkpoint just signed with the log key gets cosigned). With no latest of
 * either kind, any checkpoint is accepted (old_size must be 0 and the proof empty). A ledger
 * written before both kinds were held to one tree may hold two records of one size with
 * different roots: every checkpoint of that origin is then DIRAUTH_ERR_COLLISION. */
int ledger_record_checkpoint(struct ledger *ledger, enum ledger_checkpoint_kind kind, const char *origin,
                             uint64_t size, const merkle_hash root, uint64_t old_size,
                             const merkle_hash *proof, size_t proof_count);

#endif
