/*
 * tlog_table.h: the storage of the transparency log of each namespace, in the store's LMDB environment.
 *
 * Leaf i of a namespace's log is the text of its i-th published snapshot header without the
 * signature lines (tlog/tlog.md): the log is a function of the published headers, in epoch order.
 * The store keeps, per namespace, every stored hash of its tree (tlog/tree.h: hash level l,
 * index i is the RFC 6962 hash of leaves i·2^l .. (i+1)·2^l − 1), which leaf holds which epoch,
 * its size, and the checkpoints published for it with their cosignatures. Each leaf's bytes are
 * kept beside its epoch, checked to be the stored header's text when it was appended; a leaf
 * appended by an older store, which kept only the epoch, is read from the stored header (never
 * deleted), so such a store opens and serves as it did, with nothing to migrate.
 *
 * What the store checks, so that no caller can make the log anything but its published headers:
 *   - an append is the next published epoch the log lacks, with exactly that header's text, and
 *     the hash records tlog_append gives for it (their coordinates, the leaf hash and each parent
 *     hash recomputed from the stored hashes); records, leaf and the new size are written in one
 *     write transaction, so a crash leaves the log with or without that leaf, never between;
 *   - a checkpoint is of a tree the log has: its size at most the log's, its root the root of
 *     the stored hashes at that size, its size not below the latest checkpoint's.
 * The store does not judge signatures: the caller checks a checkpoint's before storing it.
 *
 * Every function is safe from any thread. Reads see the last commit before they began. Pointers
 * passed to visitors are valid only during the call.
 */
#ifndef DIRAUTH_SERVER_STORE_TLOG_TABLE_H
#define DIRAUTH_SERVER_STORE_TLOG_TABLE_H

#include "base/buffer.h"
#include "crypto/merkle.h"
#include "kv/kv.h"
#include "server/store/store.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STORE_LOG_LEAF_MAX       65535       /* bytes of a leaf: what an entry bundle can carry */
#define STORE_LOG_APPEND_MAX     64          /* hash records of one append: TLOG_APPEND_MAX */
#define STORE_LOG_READ_MAX       256         /* hashes one read returns: a full tile */
#define STORE_LOG_LEAVES_MAX     256         /* leaves one store_log_leaves call visits: a bundle */
#define STORE_LOG_CHECKPOINT_MAX (64 * 1024) /* bytes of a stored checkpoint note */

/* One stored hash, as tlog_append produces it (struct tlog_record of tlog/tree.h). */
struct store_log_hash {
	uint8_t level;
	uint64_t index;
	merkle_hash hash;
};

/* What a namespace's log holds. A namespace that has no log yet has size 0. */
struct store_log_state {
	uint64_t size;       /* leaves */
	uint64_t last_epoch; /* the epoch of leaf size − 1 (when size > 0) */
	bool has_checkpoint;
	uint64_t checkpoint_size; /* the latest stored checkpoint's tree size (when has_checkpoint) */
};

/* The state of namespace_name's log (zeros for a namespace the store does not know). Returns 0,
 * DIRAUTH_ERR_SYNTAX (missing argument), DIRAUTH_ERR_BOUNDS (name too long), DIRAUTH_ERR_STORE. */
int store_log_state(struct store *store, const char *namespace_name, struct store_log_state *out);

/* The first published snapshot epoch of namespace_name above *after (after NULL: the first
 * published at all), scanning at most the epochs up to the namespace's latest. The log's
 * catching up walks the published headers with it. Returns 0 with *epoch; DIRAUTH_ERR_NOT_FOUND
 * when there is none (or no such namespace); DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_BOUNDS,
 * DIRAUTH_ERR_STORE. */
int store_log_next_published(struct store *store, const char *namespace_name, const uint64_t *after,
                             uint64_t *epoch);

/*
 * Appends the published snapshot header of epoch as the next leaf of namespace_name's log.
 * leaf (leaf_len bytes, at most STORE_LOG_LEAF_MAX) is the header's note text without its
 * signature lines; hashes are the count records tlog_append gave for leaf index size (the log's
 * size), the leaf hash first. In one write transaction, durable on return: the records, the
 * leaf's epoch and the new size.
 *
 * Idempotent: an epoch already in the log returns 0 and changes nothing (when leaf is its text;
 * DIRAUTH_ERR_MISMATCH otherwise). Refusals, nothing changed: DIRAUTH_ERR_ROLLBACK for an epoch
 * below the log's last that is not in it; DIRAUTH_ERR_NOT_FOUND when no snapshot of epoch is
 * published; DIRAUTH_ERR_MISMATCH when leaf is not that header's text, when a published epoch
 * between the log's last and epoch is not in the log yet (the log would have a gap), or when the
 * records are not the ones of this leaf at this size (another index, a hash that does not
 * recompute); DIRAUTH_ERR_SYNTAX for a missing argument or records of another count or
 * coordinates; DIRAUTH_ERR_BOUNDS (a name or leaf too long, the log full at 2^64 − 1 leaves);
 * DIRAUTH_ERR_FULL, DIRAUTH_ERR_STORE, DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_CRYPTO.
 */
int store_log_append(struct store *store, const char *namespace_name, uint64_t epoch, const uint8_t *leaf,
                     size_t leaf_len, const struct store_log_hash *hashes, size_t count);

/*
 * A reader of one namespace's stored hashes, for the tree functions of tlog/tree.h: pass
 * store_log_read_hashes as the tlog_read_hashes callback and the reader as its context. It
 * answers for the tree of tree_size leaves (at most the log's size when it was opened).
 */
struct store_log_reader {
	struct store *store;
	uint16_t namespace_id; /* the store's; set by store_log_reader_open */
	uint64_t tree_size;
};

/* Opens a reader of namespace_name's log for the tree of its current size (reader->tree_size,
 * which the caller may lower). Returns 0, DIRAUTH_ERR_NOT_FOUND (no such namespace; an empty
 * log of a known namespace opens with tree_size 0), DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_BOUNDS,
 * DIRAUTH_ERR_STORE. Holds nothing open: each read is its own read transaction. */
int store_log_reader_open(struct store *store, const char *namespace_name, struct store_log_reader *reader);

/* The tlog_read_hashes callback: reads count (1..STORE_LOG_READ_MAX) consecutive stored hashes
 * of level from index into out, in one read transaction. Returns 0; DIRAUTH_ERR_NOT_FOUND for a
 * hash outside the reader's tree (index + count > tree_size >> level, or level > 63);
 * DIRAUTH_ERR_BOUNDS for a count of 0 or over STORE_LOG_READ_MAX; DIRAUTH_ERR_STORE (also a
 * hash inside the tree that is missing or damaged). */
int store_log_read_hashes(void *reader, uint8_t level, uint64_t index, uint64_t count, merkle_hash *out);

/* Leaf index of namespace_name's log: *epoch (may be NULL) gets its epoch, leaf (may be NULL)
 * its bytes (replaced). Returns 0; DIRAUTH_ERR_NOT_FOUND (no such namespace or leaf);
 * DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_BOUNDS, DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_STORE (also a damaged
 * leaf record, or an older store's leaf whose header is missing or is not a note). */
int store_log_leaf(struct store *store, const char *namespace_name, uint64_t index, uint64_t *epoch,
                   struct buffer *leaf);

/* The leaf index of epoch in namespace_name's log. Returns 0, DIRAUTH_ERR_NOT_FOUND (not in the
 * log), DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_BOUNDS, DIRAUTH_ERR_STORE. */
int store_log_epoch_leaf(struct store *store, const char *namespace_name, uint64_t epoch, uint64_t *index);

/* Called for each leaf of store_log_leaves, its bytes borrowed for the call. A non-zero return
 * stops the walk and is returned. */
typedef int (*store_log_leaf_visitor)(void *context, uint64_t index, uint64_t epoch, const uint8_t *leaf,
                                      size_t len);

/* Visits leaves start .. start + count − 1 (count 1..STORE_LOG_LEAVES_MAX) of namespace_name's
 * log in order, in one read transaction: what an entry bundle is made of. Returns 0, the
 * visitor's non-zero value, DIRAUTH_ERR_NOT_FOUND (a leaf past the log's size, or no such
 * namespace), DIRAUTH_ERR_BOUNDS (count out of range), DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_NOMEM,
 * DIRAUTH_ERR_STORE. */
int store_log_leaves(struct store *store, const char *namespace_name, uint64_t start, uint64_t count,
                     store_log_leaf_visitor visit, void *context);

/*
 * Stores a signed checkpoint note of namespace_name's log (at most STORE_LOG_CHECKPOINT_MAX
 * bytes: a signed note whose text is a checkpoint, schema/checkpoint.h) as its latest, in one
 * write transaction with the record of the partial tiles of its tree (store_log_partial_tile).
 * The note of the latest checkpoint's own size may be stored again with the same text and other
 * signatures (more cosignatures): it replaces the one stored. Returns 0; DIRAUTH_ERR_SYNTAX for a
 * note that does not parse or whose text is not a checkpoint; DIRAUTH_ERR_BOUNDS for a note too
 * long; DIRAUTH_ERR_MISMATCH when the size is above the log's or the root is not the log's root
 * at that size; DIRAUTH_ERR_ROLLBACK for a size below the latest checkpoint's;
 * DIRAUTH_ERR_COLLISION for another text of the latest checkpoint's size; DIRAUTH_ERR_NOT_FOUND
 * (no such namespace); DIRAUTH_ERR_FULL, DIRAUTH_ERR_STORE, DIRAUTH_ERR_NOMEM,
 * DIRAUTH_ERR_CRYPTO. Nothing is changed unless 0 is returned.
 */
int store_log_checkpoint_put(struct store *store, const char *namespace_name, const uint8_t *note,
                             size_t len);

/* The latest stored checkpoint note of namespace_name's log into note (replaced); *size (may be
 * NULL) gets its tree size. Returns 0, DIRAUTH_ERR_NOT_FOUND (none yet), DIRAUTH_ERR_SYNTAX,
 * DIRAUTH_ERR_BOUNDS, DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_STORE. */
int store_log_checkpoint(struct store *store, const char *namespace_name, struct buffer *note,
                         uint64_t *size);

/* The checkpoint note stored for tree size size (each size keeps the last note stored for it).
 * Returns 0, DIRAUTH_ERR_NOT_FOUND, and the errors of store_log_checkpoint. */
int store_log_checkpoint_at(struct store *store, const char *namespace_name, uint64_t size,
                            struct buffer *note);

/* 0 when a stored checkpoint's tree has, at tile level, the partial tile (index, width): some
 * checkpointed size s has floor(s / 256^(level+1)) = index and floor(s / 256^level) mod 256 =
 * width. DIRAUTH_ERR_NOT_FOUND when none has; DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_BOUNDS (also a
 * width outside 1..255 or a level over 7), DIRAUTH_ERR_STORE. */
int store_log_partial_tile(struct store *store, const char *namespace_name, uint8_t level, uint64_t index,
                           uint16_t width);

/* ---- what this authority witnessed and published (c2sp.org/tlog-witness) ----
 *
 * Two small records per namespace in log_witness. The witnessed tree head is the latest
 * checkpoint of the namespace's origin this authority cosigned as a witness, of whichever
 * authority's log key (every authority builds the same tree): a witness checks each new one for
 * consistency with it, and names its size when a client's old size does not match. The published
 * size is the tree size of the latest checkpoint served as the log's, once it holds enough
 * cosignatures. Both only ever grow. */

/* The witnessed tree head of a namespace. */
struct store_log_witnessed {
	bool has;      /* false: nothing cosigned yet (size 0) */
	uint64_t size; /* its tree size */
	merkle_hash root;
};

/* The witnessed tree head of namespace_name (zeros when none, or for a namespace the store does
 * not know). Returns 0, DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_BOUNDS, DIRAUTH_ERR_STORE. */
int store_log_witnessed(struct store *store, const char *namespace_name, struct store_log_witnessed *out);

/*
 * Replaces the witnessed tree head of namespace_name, which must be expected (size
 * expected_size, 0 when none is recorded), by (size, root), in one write transaction, durable on
 * return: the check and the write are one step, so that of two witnesses racing from one head
 * only the first moves it. The namespace is recorded if the store did not know it. Returns 0 (also
 * when the recorded head already is (size, root)); DIRAUTH_ERR_MISMATCH when the recorded size is
 * not expected_size; DIRAUTH_ERR_ROLLBACK for a size below the recorded one; DIRAUTH_ERR_COLLISION
 * for the recorded size with another root; DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_BOUNDS,
 * DIRAUTH_ERR_FULL, DIRAUTH_ERR_STORE. Nothing is changed unless 0 is returned.
 */
int store_log_witness_advance(struct store *store, const char *namespace_name, uint64_t expected_size,
                              uint64_t size, const merkle_hash root);

/* The tree size of namespace_name's published checkpoint. Returns 0 with *size;
 * DIRAUTH_ERR_NOT_FOUND when none was published (or no such namespace); DIRAUTH_ERR_SYNTAX,
 * DIRAUTH_ERR_BOUNDS, DIRAUTH_ERR_STORE. */
int store_log_published(struct store *store, const char *namespace_name, uint64_t *size);

/* Records the stored checkpoint of tree size size as namespace_name's published one. Returns 0
 * (also when it already is); DIRAUTH_ERR_NOT_FOUND when no checkpoint of that size is stored;
 * DIRAUTH_ERR_ROLLBACK for a size below the published one; DIRAUTH_ERR_SYNTAX,
 * DIRAUTH_ERR_BOUNDS, DIRAUTH_ERR_FULL, DIRAUTH_ERR_STORE. Nothing is changed unless 0 is
 * returned. */
int store_log_publish(struct store *store, const char *namespace_name, uint64_t size);

/* A number that changes (grows) after every commit that stores a checkpoint note
 * (store_log_checkpoint_put) or publishes one (store_log_publish), in any namespace, and nothing
 * else: the checkpoint notes a reader reads after reading it stay the ones stored for as long as
 * it has not changed, so an answer made from them (server/http keeps proof files) may be kept by
 * it. It counts from 0 at store_open and is not stored; 0 for a NULL store. */
uint64_t store_log_generation(struct store *store);

/* ---- for the store's own files ---- */

/* The table's databases, for store_open to open with the others: fills out (room for
 * STORE_TABLE_DATABASES_MAX) with their names and store's handles of them; returns the count. */
size_t log_table_databases(struct store *store, struct kv_database *out);

#endif
