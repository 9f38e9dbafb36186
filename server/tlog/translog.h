/*
 * translog.h: one namespace's transparency log at this authority: kept a function of the
 * published snapshot headers, checkpointed, signed by the log key and cosigned by this
 * authority's cosignature key through its signer, and read back as c2sp.org/tlog-tiles.
 *
 * The log's origin. The log of config->namespaces[i] has as checkpoint origin that namespace's
 * origin, verbatim (config's `origin:`, the `origin` line of its snapshot headers, e.g.
 * dirauth.example/mix): one log per namespace origin, and the log key's name is that string
 * (tlog/tlog.md). An authority keeps the log of a namespace when its signer holds a log key of
 * that name; for any other namespace translog_catch_up answers DIRAUTH_ERR_CONFIG and changes
 * nothing.
 *
 * Catching up. Leaf i is the note text of the i-th published header of the namespace, in epoch
 * order, so the log is whatever the published headers make it and a crash anywhere can neither
 * skip one nor fork it: translog_catch_up appends every published header the log lacks. It
 * computes the new leaves' hashes in memory first, has the signer sign the new tree head with the
 * log key (SIGN_CHECKPOINT, with the consistency proof from the signer's own latest checkpoint of
 * the origin, which it asks for: CHECKPOINT_STATE) and cosign it (COSIGN_CHECKPOINT,
 * c2sp.org/tlog-cosignature v1, dated by the signer), checks both signatures against the keys the
 * signer reports, and only then appends the leaves (one store transaction each) and stores the
 * checkpoint note. So a signer that refuses or cannot be reached leaves the log as it was; a
 * crash after signing leaves the signer ahead of the log by the leaves the next call appends
 * again, to the very same tree head, which the signer signs again as a repeat. At most
 * TRANSLOG_ROUND_MAX leaves go under one checkpoint; a longer backlog is caught up in rounds, one
 * checkpoint each.
 *
 * Checkpoints of several authorities. The stored checkpoint note carries the log's signature and
 * this authority's cosignature. Another authority's cosignature of the same tree head can be added
 * later by storing the note again with more signature lines (store_log_checkpoint_put accepts the
 * same text with other signatures); nothing here assumes one cosignature. The other authorities'
 * cosignatures are gathered by server/tlog/cosigning.h, which also decides which checkpoint
 * is served (translog_checkpoint_served: with k cosignatures); translog_checkpoint below is the
 * latest stored, whatever it holds.
 *
 * The read side (c2sp.org/tlog-tiles, tlog/tlog.md's serving rule): the latest checkpoint; a full
 * tile or bundle once it lies inside the latest checkpoint's tree; a partial one only when it is
 * the partial tile of some checkpointed size. Everything else is not found.
 *
 * Calls for one namespace are meant to come from one thread (the scheduler's); two at once are
 * safe (the store refuses or ignores a leaf appended twice, the signer answers a repeat), only
 * wasteful. Reads may run from any thread at any time.
 */
#ifndef DIRAUTH_SERVER_TLOG_TRANSLOG_H
#define DIRAUTH_SERVER_TLOG_TRANSLOG_H

#include "base/buffer.h"
#include "crypto/merkle.h"
#include "schema/note.h"
#include "signer_protocol/signer_protocol.h"
#include "server/config/config.h"
#include "server/signing/signer_client.h"
#include "server/store/store.h"
#include "tlog/tile.h"

#include <stddef.h>
#include <stdint.h>

#define TRANSLOG_ROUND_MAX 1024 /* leaves appended under one checkpoint */

/* What a call of translog_catch_up did. */
struct translog_outcome {
	uint64_t appended;                   /* leaves appended */
	uint64_t tree_size;                  /* the log's size on return */
	int has_checkpoint;                  /* the log has a stored checkpoint */
	uint64_t checkpoint_size;            /* its tree size */
	char detail[SIGNER_DETAIL_MAX + 64]; /* a sentence when something failed, else "" */
};

/*
 * Appends to the log of config->namespaces[namespace_index] every published snapshot header it
 * lacks, in epoch order, under a checkpoint signed and cosigned by signer, and stores that
 * checkpoint (see above). With nothing to append and the latest checkpoint of the log's size, it
 * asks the signer nothing and returns 0. outcome (may be NULL) is filled in every case.
 *
 * Returns 0; DIRAUTH_ERR_CONFIG when the signer holds no log key named by the namespace's origin
 * or no cosignature key (nothing is appended); DIRAUTH_ERR_UNAVAILABLE when the signer cannot be
 * reached, or its refusal (DIRAUTH_ERR_ROLLBACK, _MISMATCH, _PROOF, _STALE, _REFUSED ...): the log
 * is then left as it was; DIRAUTH_ERR_ROLLBACK also when the signer has checkpointed a larger tree
 * of the origin than the published headers make (a store restored from an older backup), and
 * DIRAUTH_ERR_MISMATCH when the signer's latest checkpoint is not of this log's tree (a fork: the
 * published headers are not those the signer's checkpoint covers); DIRAUTH_ERR_SIGNATURE when a
 * signature the signer returned does not verify; DIRAUTH_ERR_SYNTAX for an answer of the signer
 * that does not parse; DIRAUTH_ERR_INTERNAL for a namespace index out of range; the store's
 * errors (a failure after the signatures leaves a log that the next call completes).
 */
int translog_catch_up(struct store *store, const struct config *config, struct signer_client *signer,
                      size_t namespace_index, struct translog_outcome *outcome);

/* ---- the read side ---- */

/* The latest checkpoint note of namespace_name's log into note (replaced). Returns 0,
 * DIRAUTH_ERR_NOT_FOUND (no checkpoint yet), the store's errors. */
int translog_checkpoint(struct store *store, const char *namespace_name, struct buffer *note);

#define TRANSLOG_TILE_PATH_MAX TLOG_TILE_PATH_MAX /* the longest tile path, "tile/..." */

/* Why a tile is not served. */
enum translog_miss {
	TRANSLOG_MISS_NONE = 0,
	TRANSLOG_MISS_NO_CHECKPOINT,   /* the log has no checkpoint yet */
	TRANSLOG_MISS_BEYOND_TREE,     /* not inside the tree of the latest checkpoint */
	TRANSLOG_MISS_NOT_CHECKPOINTED /* a partial tile of no checkpointed size */
};

/*
 * The bytes of the tile or entry bundle at path (len bytes: "tile/<L>/<N>[.p/<W>]" or
 * "tile/entries/<N>[.p/<W>]", relative to the log's prefix, tlog/tile.h) of namespace_name's log,
 * appended to out (reset first). Returns 0; DIRAUTH_ERR_SYNTAX for a path that is not a tile's one
 * spelling; DIRAUTH_ERR_NOT_FOUND with *miss saying why; the store's errors. The bytes of a tile
 * served once are the bytes it has for ever.
 */
int translog_tile(struct store *store, const char *namespace_name, const char *path, size_t len,
                  struct buffer *out, enum translog_miss *miss);

/* ---- proofs (proof.c) ----
 * Only ever against a stored checkpoint, so that a client checks them with a root the log signed. */

/* Why a proof is not given. */
enum translog_proof_miss {
	TRANSLOG_PROOF_MISS_NONE = 0,
	TRANSLOG_PROOF_MISS_NO_CHECKPOINT,        /* the log has no checkpoint yet */
	TRANSLOG_PROOF_MISS_EPOCH_NOT_IN_LOG,     /* no leaf holds that epoch's header */
	TRANSLOG_PROOF_MISS_EPOCH_NOT_IN_TREE,    /* its leaf is past the checkpoint's tree */
	TRANSLOG_PROOF_MISS_SIZE_NOT_CHECKPOINTED /* no checkpoint of that tree size was stored */
};

/*
 * The offline proof file (c2sp.org/tlog-proof, tlog/proof.h) of the header of epoch in
 * namespace_name's log, against the stored checkpoint of tree size size (0: the latest), into out
 * (reset first): the leaf's index, its inclusion proof, the header's signed note as stored as the
 * extra, and the checkpoint note as stored. Returns 0; DIRAUTH_ERR_NOT_FOUND with *miss (may be
 * NULL) saying why (no checkpoint, no such checkpoint size, the epoch not in the log or not in
 * that tree); DIRAUTH_ERR_SYNTAX for a missing argument; DIRAUTH_ERR_STORE for a stored note or
 * hash that is missing or that the codec refuses; the store's errors; DIRAUTH_ERR_NOMEM,
 * DIRAUTH_ERR_CRYPTO.
 */
int translog_inclusion_proof(struct store *store, const char *namespace_name, uint64_t epoch, uint64_t size,
                             struct buffer *out, enum translog_proof_miss *miss);

/*
 * translog_inclusion_proof against a checkpoint note the caller read from the store
 * (checkpoint, checkpoint_len bytes: the note stored for tree size tree_size, as
 * translog_checkpoint_served or store_log_checkpoint_at give it), which the file carries
 * verbatim: a caller that keeps answers by the note they carry (server/http) makes the file from
 * exactly the note it keeps it by. Returns what translog_inclusion_proof returns, less the misses
 * of the checkpoint (DIRAUTH_ERR_NOT_FOUND: the epoch not in the log or not in the tree).
 */
int translog_inclusion_proof_against(struct store *store, const char *namespace_name, uint64_t epoch,
                                     const uint8_t *checkpoint, size_t checkpoint_len, uint64_t tree_size,
                                     struct buffer *out, enum translog_proof_miss *miss);

/*
 * The consistency proof (RFC 9162 §2.1.4) from the tree of old_size leaves to the tree of the
 * stored checkpoint of new_size, as text (tlog/consistency.h: one base64 hash per line; empty for
 * old_size 0 or old_size = new_size) into out (reset first). old_size need not be a checkpointed
 * size (another authority's, or a monitor's, may be any size the tree had). Returns 0;
 * DIRAUTH_ERR_PROOF for new_size 0 or old_size > new_size; DIRAUTH_ERR_NOT_FOUND with *miss (may
 * be NULL): no checkpoint, or none of new_size; DIRAUTH_ERR_SYNTAX, the store's errors,
 * DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_CRYPTO.
 */
int translog_consistency_proof(struct store *store, const char *namespace_name, uint64_t old_size,
                               uint64_t new_size, struct buffer *out, enum translog_proof_miss *miss);

/* ---- the signer's answers ---- */

#define TRANSLOG_ANSWER_MAX 4096 /* bytes of a GET_KEYS or CHECKPOINT_STATE payload read here */

/* The log and cosignature keys of a GET_KEYS payload ("signing-key <vkey>\n", then optionally
 * "log-key <vkey>\n", then optionally "cosignature-key <vkey>\n", in this order, each once). */
struct translog_signer_keys {
	int has_log_key;
	struct note_verifier log_key; /* type 0x01 */
	int has_cosigner;
	struct note_verifier cosigner; /* type 0x04 */
};

/* Parses a GET_KEYS payload, strictly (each key canonical, every line ending in '\n', no other
 * line). Returns 0, DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_BOUNDS (over TRANSLOG_ANSWER_MAX). */
int translog_signer_keys_parse(const uint8_t *payload, size_t len, struct translog_signer_keys *out);

/* The signer's latest checkpoints of one origin: a CHECKPOINT_STATE payload
 * (["signed <size> <root base64>\n"] ["cosigned <size> <root base64>\n"]). */
struct translog_signer_state {
	int has_signed;
	uint64_t signed_size;
	merkle_hash signed_root;
	int has_cosigned;
	uint64_t cosigned_size;
	merkle_hash cosigned_root;
};

/* Parses a CHECKPOINT_STATE payload, strictly (canonical decimal, 44 characters of canonical
 * base64, each line once and in order). Returns 0, DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_BOUNDS. */
int translog_signer_state_parse(const uint8_t *payload, size_t len, struct translog_signer_state *out);

/* The origin's latest tree head at the signer, the one a new checkpoint must extend: the larger
 * of the signed and the cosigned. Returns 0 with *size and root, DIRAUTH_ERR_NOT_FOUND when the
 * signer holds neither, DIRAUTH_ERR_MISMATCH for two heads of one size with different roots. */
int translog_signer_state_latest(const struct translog_signer_state *state, uint64_t *size, merkle_hash root);

#endif
