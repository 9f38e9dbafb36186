/*
 * tree.h: the log's Merkle tree (RFC 6962 / RFC 9162) computed from its stored hashes: the
 * records to store for each appended leaf, the root at any size, the bytes of any tile,
 * inclusion and consistency proofs between any sizes.
 *
 * Stored hashes. A log keeps the hash of every complete subtree it has built: hash level 0
 * holds the leaf hashes; hash (level l, index i) is the RFC 6962 hash of the complete subtree
 * of the 2^l leaves i·2^l .. (i+1)·2^l − 1. A tree of s leaves has s >> l stored hashes at level
 * l, about 2·s in all, and no stored hash ever changes once written: the tree of any smaller
 * size is made of the same hashes, so one store answers for every size it has reached. The
 * tiles of c2sp.org/tlog-tiles are runs of the stored hashes of levels 0, 8, 16 ... (tile.h).
 *
 * Reads go through a callback that the store implements (an LMDB table, an array, tiles fetched
 * from a mirror: tlog_tile_source below). The functions here ask only for hashes that exist in
 * the tree of the size they were given, so a callback may refuse anything past its own size.
 *
 * Costs, for a tree of s leaves: append reads and computes at most one hash per trailing one
 * bit of s; the root reads one hash per set bit of s; an inclusion or consistency proof reads
 * O(log² s) hashes at worst, O(log s) for a tree whose size is a power of two; a tile is one read.
 * Nothing recurses and nothing allocates.
 */
#ifndef DIRAUTH_TLOG_TREE_H
#define DIRAUTH_TLOG_TREE_H

#include "crypto/merkle.h"
#include "tlog/tile.h"

#include <stddef.h>
#include <stdint.h>

#define TLOG_APPEND_MAX 64 /* records one append can produce */

/*
 * Reads count (≥ 1) consecutive stored hashes of level, starting at index, into out. Must fill
 * all of them and return 0, or return a negative dirauth_error (DIRAUTH_ERR_NOT_FOUND for a hash
 * it does not hold, DIRAUTH_ERR_STORE, DIRAUTH_ERR_IO ...), which the caller returns unchanged.
 */
typedef int (*tlog_read_hashes)(void *context, uint8_t level, uint64_t index, uint64_t count,
                                merkle_hash *out);

struct tlog_hash_reader {
	tlog_read_hashes read;
	void *context;
};

/* One stored hash to write. */
struct tlog_record {
	uint8_t level;
	uint64_t index;
	merkle_hash hash;
};

/* Appends leaf number tree_size: fills records with the stored hashes the new leaf creates,
 * the leaf hash (level 0, index tree_size) first, then every complete subtree it completes,
 * lowest level first; *record_count gets their number (1..TLOG_APPEND_MAX). Reads one stored
 * hash of the tree of tree_size leaves per completed subtree. Returns 0; DIRAUTH_ERR_BOUNDS
 * when tree_size is UINT64_MAX (the tree is full); the reader's error; DIRAUTH_ERR_CRYPTO. On
 * error *record_count is 0 and nothing is to be stored. */
int tlog_append(const struct tlog_hash_reader *reader, uint64_t tree_size, const merkle_hash leaf_hash,
                struct tlog_record records[TLOG_APPEND_MAX], size_t *record_count);

/* The RFC 6962 root of the tree of tree_size leaves (SHA-256("") for 0). Returns 0, the
 * reader's error, or DIRAUTH_ERR_CRYPTO. */
int tlog_tree_root(const struct tlog_hash_reader *reader, uint64_t tree_size, merkle_hash out);

/* The RFC 6962 hash of leaves start .. end − 1 of the tree of tree_size leaves, for a range that
 * is a node of that tree's RFC 6962 shape (as every subtree a proof names is): start a multiple
 * of the largest power of two not exceeding end − start, end ≤ tree_size, start < end. Returns
 * 0; DIRAUTH_ERR_PROOF for any other range; the reader's error; DIRAUTH_ERR_CRYPTO. */
int tlog_range_hash(const struct tlog_hash_reader *reader, uint64_t tree_size, uint64_t start, uint64_t end,
                    merkle_hash out);

/* Inclusion proof of leaf index in the tree of tree_size leaves, as merkle_inclusion_proof():
 * proof has room for MERKLE_MAX_PROOF hashes, *proof_len gets the number written. Returns 0;
 * DIRAUTH_ERR_PROOF for an index outside the tree; the reader's error; DIRAUTH_ERR_CRYPTO. */
int tlog_inclusion_proof(const struct tlog_hash_reader *reader, uint64_t tree_size, uint64_t index,
                         merkle_hash *proof, size_t *proof_len);

/* Consistency proof from the tree of old_size leaves to the tree of tree_size leaves, as
 * merkle_consistency_proof() (0 < old_size ≤ tree_size; equal sizes give an empty proof). The
 * empty old tree (the witness protocol's "old 0") is the caller's case: its proof is empty.
 * Returns 0; DIRAUTH_ERR_PROOF for sizes out of order or old_size 0; the reader's error;
 * DIRAUTH_ERR_CRYPTO. */
int tlog_consistency_proof(const struct tlog_hash_reader *reader, uint64_t tree_size, uint64_t old_size,
                           merkle_hash *proof, size_t *proof_len);

/* The bytes of a hash tile of the tree of tree_size leaves (one read of tile->width hashes of
 * hash level 8·L): out has room for TLOG_TILE_BYTES, *len gets width · 32. Returns 0;
 * DIRAUTH_ERR_SYNTAX for invalid coordinates or an entry bundle (whose bytes are the entries,
 * tlog/bundle.h); DIRAUTH_ERR_NOT_FOUND when the tile is not inside the tree
 * (tlog_tile_check); the reader's error. */
int tlog_tile_read(const struct tlog_hash_reader *reader, uint64_t tree_size, const struct tlog_tile *tile,
                   uint8_t out[TLOG_TILE_BYTES], size_t *len);

/*
 * Fetches the bytes of a hash tile: fills out (room for TLOG_TILE_BYTES) and *len, returns 0 or
 * a negative dirauth_error, which the caller returns unchanged.
 */
typedef int (*tlog_fetch_tile)(void *context, const struct tlog_tile *tile, uint8_t out[TLOG_TILE_BYTES],
                               size_t *len);

/*
 * Stored hashes read out of the tiles of one tree size, the client's side of tlog-tiles: a
 * mirror or monitor fills this in and passes tlog_tile_source_read as the reader's callback
 * (with the source as its context) to compute the root, proofs or other tiles from what a log
 * serves. It fetches only the tiles of the tree of tree_size leaves (tlog_tile_is_of_tree) and
 * keeps the last one. A fetched tile of the wrong length is DIRAUTH_ERR_MISMATCH. Nothing here
 * authenticates the bytes: compare the root computed from them with a verified checkpoint's.
 */
struct tlog_tile_source {
	tlog_fetch_tile fetch;
	void *context;
	uint64_t tree_size;
	/* The last tile fetched; set has_tile to 0 before first use (zero-initialise). */
	int has_tile;
	struct tlog_tile tile;
	size_t tile_len;
	uint8_t tile_data[TLOG_TILE_BYTES];
};

/* A tlog_read_hashes over a struct tlog_tile_source (the context). Returns 0,
 * DIRAUTH_ERR_NOT_FOUND for a hash outside the source's tree, DIRAUTH_ERR_MISMATCH for a tile
 * of the wrong length, the fetch's error, DIRAUTH_ERR_CRYPTO. */
int tlog_tile_source_read(void *source, uint8_t level, uint64_t index, uint64_t count, merkle_hash *out);

#endif
