/*
 * tree.c: roots, proofs, tiles and appends over the stored hashes of a log.
 *
 * Everything here rests on one fact of RFC 6962 trees: MTH(D[start:end]) for a range that starts
 * at a multiple of 2^a, 2^a being the largest power of two in its length, is the right-to-left
 * fold of the complete subtrees that the length's set bits cut it into, largest first, and each
 * of those is a stored hash. The root is that fold over [0, s); every sibling an inclusion or
 * consistency proof names is such a range (the RFC's recursion only ever splits a range at a
 * power of two that its start is a multiple of), so the proofs are the RFC 9162 PATH and
 * SUBPROOF recursions of crypto/merkle.c, unrolled the same way, with each subtree read from the
 * store instead of recomputed from leaves. The proofs are checked against crypto/merkle.c's
 * in-memory generator and its vector-tested verifiers in tests/unit/check_tlog.c.
 */
#include "tlog/tree.h"

#include "crypto/crypto.h"
#include "base/error.h"

#include <string.h>

static int read_one(const struct tlog_hash_reader *reader, unsigned level, uint64_t index, merkle_hash out)
{
	return reader->read(reader->context, (uint8_t)level, index, 1, (merkle_hash *)out);
}

static unsigned highest_bit(uint64_t n)
{
	unsigned bit = 63;
	while (((n >> bit) & 1) == 0)
		bit--;
	return bit;
}

int tlog_append(const struct tlog_hash_reader *reader, uint64_t tree_size, const merkle_hash leaf_hash,
                struct tlog_record records[TLOG_APPEND_MAX], size_t *record_count)
{
	*record_count = 0;
	if (tree_size == UINT64_MAX)
		return DIRAUTH_ERR_BOUNDS;
	size_t count = 0;
	records[count].level = 0;
	records[count].index = tree_size;
	memcpy(records[count].hash, leaf_hash, MERKLE_HASH_SIZE);
	count++;
	/* The new node at (level, index) completes its parent whenever index is odd: the left
	 * sibling (level, index − 1) is already stored. */
	uint64_t index = tree_size;
	for (unsigned level = 0; index & 1; level++) {
		merkle_hash left;
		if (count == TLOG_APPEND_MAX)
			return DIRAUTH_ERR_INTERNAL;
		int rc = read_one(reader, level, index - 1, left);
		if (rc == 0)
			rc = merkle_node_hash(left, records[count - 1].hash, records[count].hash);
		if (rc)
			return rc;
		index >>= 1;
		records[count].level = (uint8_t)(level + 1);
		records[count].index = index;
		count++;
	}
	*record_count = count;
	return 0;
}

/* MTH(D[start:end]) for a range aligned as tlog_range_hash() requires (checked by the caller). */
static int range_hash(const struct tlog_hash_reader *reader, uint64_t start, uint64_t end, merkle_hash out)
{
	merkle_hash parts[64];
	size_t count = 0;
	uint64_t position = start, size = end - start;
	for (unsigned bit = 64; bit-- > 0;) {
		if (((size >> bit) & 1) == 0)
			continue;
		int rc = read_one(reader, bit, position >> bit, parts[count]);
		if (rc)
			return rc;
		count++;
		position += (uint64_t)1 << bit;
	}
	/* Right to left, as the RFC's split joins them. */
	for (size_t i = count - 1; i > 0; i--) {
		int rc = merkle_node_hash(parts[i - 1], parts[i], parts[i - 1]);
		if (rc)
			return rc;
	}
	memcpy(out, parts[0], MERKLE_HASH_SIZE);
	return 0;
}

int tlog_range_hash(const struct tlog_hash_reader *reader, uint64_t tree_size, uint64_t start, uint64_t end,
                    merkle_hash out)
{
	if (start >= end || end > tree_size)
		return DIRAUTH_ERR_PROOF;
	uint64_t largest = (uint64_t)1 << highest_bit(end - start);
	if (start % largest != 0)
		return DIRAUTH_ERR_PROOF;
	return range_hash(reader, start, end, out);
}

int tlog_tree_root(const struct tlog_hash_reader *reader, uint64_t tree_size, merkle_hash out)
{
	if (tree_size == 0)
		return crypto_sha256((const uint8_t *)"", 0, out) ? DIRAUTH_ERR_CRYPTO : 0;
	return range_hash(reader, 0, tree_size, out);
}

/* A range of the tree the reader holds, for the proof generators of crypto/merkle.h. */
static int reader_range_root(void *context, uint64_t start, uint64_t end, merkle_hash out)
{
	return range_hash(context, start, end, out);
}

int tlog_inclusion_proof(const struct tlog_hash_reader *reader, uint64_t tree_size, uint64_t index,
                         merkle_hash *proof, size_t *proof_len)
{
	return merkle_inclusion_proof_from(reader_range_root, (void *)reader, tree_size, index, proof,
	                                   proof_len);
}

int tlog_consistency_proof(const struct tlog_hash_reader *reader, uint64_t tree_size, uint64_t old_size,
                           merkle_hash *proof, size_t *proof_len)
{
	return merkle_consistency_proof_from(reader_range_root, (void *)reader, tree_size, old_size, proof,
	                                     proof_len);
}

int tlog_tile_read(const struct tlog_hash_reader *reader, uint64_t tree_size, const struct tlog_tile *tile,
                   uint8_t out[TLOG_TILE_BYTES], size_t *len)
{
	*len = 0;
	if (!tlog_tile_is_valid(tile) || tile->kind != TLOG_TILE_HASHES)
		return DIRAUTH_ERR_SYNTAX;
	int rc = tlog_tile_check(tile, tree_size);
	if (rc)
		return rc;
	rc = reader->read(reader->context, (uint8_t)(TLOG_TILE_HEIGHT * tile->level),
	                  tile->index * TLOG_TILE_WIDTH, tile->width, (merkle_hash *)out);
	if (rc)
		return rc;
	*len = (size_t)tile->width * MERKLE_HASH_SIZE;
	return 0;
}

static int same_tile(const struct tlog_tile *a, const struct tlog_tile *b)
{
	return a->kind == b->kind && a->level == b->level && a->index == b->index && a->width == b->width;
}

int tlog_tile_source_read(void *context, uint8_t level, uint64_t index, uint64_t count, merkle_hash *out)
{
	struct tlog_tile_source *source = context;
	if (count == 0 || level > 63 || index >= (source->tree_size >> level) ||
	    count > (source->tree_size >> level) - index)
		return DIRAUTH_ERR_NOT_FOUND;
	for (uint64_t i = 0; i < count; i++) {
		struct tlog_tile tile;
		int rc = tlog_tile_for_hash(source->tree_size, level, index + i, &tile);
		if (rc)
			return rc;
		if (!source->has_tile || !same_tile(&tile, &source->tile)) {
			source->has_tile = 0;
			rc = source->fetch(source->context, &tile, source->tile_data, &source->tile_len);
			if (rc)
				return rc;
			if (source->tile_len != (size_t)tile.width * MERKLE_HASH_SIZE)
				return DIRAUTH_ERR_MISMATCH;
			source->tile = tile;
			source->has_tile = 1;
		}
		rc = tlog_tile_hash(&source->tile, source->tile_data, source->tile_len, level, index + i,
		                    out[i]);
		if (rc)
			return rc;
	}
	return 0;
}
