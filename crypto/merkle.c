/*
 * merkle.c: RFC 6962 / RFC 9162 Merkle tree hashing, proof generation and proof verification.
 *
 * The same tree shape commits to a snapshot's records and to the transparency log, so the code
 * follows the RFC exactly and is checked against the transparency-dev test vectors.
 *
 * Nothing here recurses: a tree of 2^63 leaves has depth 63, and the root is computed with a
 * fixed stack of at most 64 subtree hashes (one per set bit of the leaf count), so no input size
 * can exhaust the call stack or the heap. Proof generation walks the RFC recursions top-down
 * with an explicit loop, recording the sibling subtrees, and reverses them at the end because
 * the RFC lists a proof from the leaf upwards.
 *
 * Verification uses the bit-walking algorithms of RFC 9162 sections 2.1.3.2 and 2.1.4.2, which
 * consume exactly as many proof hashes as the tree shape needs and so reject proofs that are too
 * short or too long without a separate length formula.
 */
#include "crypto/merkle.h"

#include "crypto/crypto.h"
#include "base/error.h"

#include <string.h>

static const uint8_t merkle_leaf_prefix = 0x00;
static const uint8_t merkle_node_prefix = 0x01;

int merkle_leaf_hash(const uint8_t *leaf, size_t len, merkle_hash out)
{
	static const uint8_t empty = 0;
	const uint8_t *parts[2] = {&merkle_leaf_prefix, len ? leaf : &empty};
	size_t lengths[2] = {1, len};
	return crypto_sha256_parts(parts, lengths, 2, out) ? DIRAUTH_ERR_CRYPTO : 0;
}

int merkle_node_hash(const merkle_hash left, const merkle_hash right, merkle_hash out)
{
	const uint8_t *parts[3] = {&merkle_node_prefix, left, right};
	size_t lengths[3] = {1, MERKLE_HASH_SIZE, MERKLE_HASH_SIZE};
	return crypto_sha256_parts(parts, lengths, 3, out) ? DIRAUTH_ERR_CRYPTO : 0;
}

/* The largest power of two strictly smaller than n (n >= 2): where RFC 6962 splits a tree. */
static uint64_t merkle_split(uint64_t n)
{
	uint64_t k = 1;
	while (k < n - k)
		k <<= 1;
	return k;
}

void merkle_builder_init(struct merkle_builder *builder)
{
	builder->depth = 0;
	builder->count = 0;
}

int merkle_builder_add(struct merkle_builder *builder, const merkle_hash leaf_hash)
{
	/* The sizes of the complete subtrees are the set bits of the number of leaves seen so far,
	 * largest first, so 64 entries always suffice. */
	memcpy(builder->stack[builder->depth++], leaf_hash, MERKLE_HASH_SIZE);
	builder->count++;
	/* Each trailing zero bit of the new leaf count closes one complete subtree. */
	for (uint64_t seen = builder->count; (seen & 1) == 0; seen >>= 1) {
		int rc =
		    merkle_node_hash(builder->stack[builder->depth - 2], builder->stack[builder->depth - 1],
		                     builder->stack[builder->depth - 2]);
		if (rc)
			return rc;
		builder->depth--;
	}
	return 0;
}

int merkle_builder_root(const struct merkle_builder *builder, merkle_hash out)
{
	if (builder->count == 0)
		return crypto_sha256((const uint8_t *)"", 0, out) ? DIRAUTH_ERR_CRYPTO : 0;
	/* The remaining subtrees join right to left, as the RFC's split would join them. */
	merkle_hash acc;
	memcpy(acc, builder->stack[builder->depth - 1], MERKLE_HASH_SIZE);
	for (size_t i = builder->depth - 1; i-- > 0;) {
		int rc = merkle_node_hash(builder->stack[i], acc, acc);
		if (rc)
			return rc;
	}
	memcpy(out, acc, MERKLE_HASH_SIZE);
	return 0;
}

int merkle_root(const merkle_hash *leaf_hashes, uint64_t count, merkle_hash out)
{
	struct merkle_builder builder;
	merkle_builder_init(&builder);
	for (uint64_t i = 0; i < count; i++) {
		int rc = merkle_builder_add(&builder, leaf_hashes[i]);
		if (rc)
			return rc;
	}
	return merkle_builder_root(&builder, out);
}

/* Reverses the first len hashes of proof in place. */
static void merkle_reverse(merkle_hash *proof, size_t len)
{
	merkle_hash swap;
	for (size_t i = 0; i < len / 2; i++) {
		memcpy(swap, proof[i], MERKLE_HASH_SIZE);
		memcpy(proof[i], proof[len - 1 - i], MERKLE_HASH_SIZE);
		memcpy(proof[len - 1 - i], swap, MERKLE_HASH_SIZE);
	}
}

int merkle_inclusion_proof_from(merkle_range_root range, void *context, uint64_t tree_size, uint64_t index,
                                merkle_hash *proof, size_t *proof_len)
{
	uint64_t offset = 0, size = tree_size, m = index;
	size_t len = 0;
	int rc;

	*proof_len = 0;
	if (index >= tree_size)
		return DIRAUTH_ERR_PROOF;
	/* PATH(m, D[offset:offset+size]), unrolled: each step records the sibling subtree and
	 * descends into the half holding the leaf. */
	while (size > 1) {
		uint64_t k = merkle_split(size);
		if (len == MERKLE_MAX_PROOF)
			return DIRAUTH_ERR_INTERNAL;
		if (m < k) {
			rc = range(context, offset + k, offset + size, proof[len]);
			size = k;
		} else {
			rc = range(context, offset, offset + k, proof[len]);
			offset += k;
			m -= k;
			size -= k;
		}
		if (rc)
			return rc;
		len++;
	}
	merkle_reverse(proof, len);
	*proof_len = len;
	return 0;
}

int merkle_consistency_proof_from(merkle_range_root range, void *context, uint64_t tree_size,
                                  uint64_t old_size, merkle_hash *proof, size_t *proof_len)
{
	uint64_t offset = 0, size = tree_size, m = old_size;
	int whole_old_tree = 1; /* the RFC's b: the subtree is still the whole old tree */
	size_t len = 0;
	int rc;

	*proof_len = 0;
	if (old_size == 0 || old_size > tree_size)
		return DIRAUTH_ERR_PROOF;
	if (old_size == tree_size)
		return 0;
	/* SUBPROOF(m, D[offset:offset+size], b), unrolled. The siblings are recorded top-down; the
	 * final subtree root (when b is false) belongs first in the proof. */
	while (m != size) {
		uint64_t k = merkle_split(size);
		if (len == MERKLE_MAX_PROOF)
			return DIRAUTH_ERR_INTERNAL;
		if (m <= k) {
			rc = range(context, offset + k, offset + size, proof[len]);
			size = k;
		} else {
			rc = range(context, offset, offset + k, proof[len]);
			offset += k;
			m -= k;
			size -= k;
			whole_old_tree = 0;
		}
		if (rc)
			return rc;
		len++;
	}
	if (!whole_old_tree) {
		if (len == MERKLE_MAX_PROOF)
			return DIRAUTH_ERR_INTERNAL;
		rc = range(context, offset, offset + size, proof[len]);
		if (rc)
			return rc;
		len++;
	}
	merkle_reverse(proof, len);
	*proof_len = len;
	return 0;
}

/* A range of an array of leaf hashes. */
static int array_range_root(void *context, uint64_t start, uint64_t end, merkle_hash out)
{
	const merkle_hash *leaf_hashes = context;
	return merkle_root(leaf_hashes + start, end - start, out);
}

int merkle_inclusion_proof(const merkle_hash *leaf_hashes, uint64_t count, uint64_t index, merkle_hash *proof,
                           size_t *proof_len)
{
	return merkle_inclusion_proof_from(array_range_root, (void *)leaf_hashes, count, index, proof,
	                                   proof_len);
}

int merkle_consistency_proof(const merkle_hash *leaf_hashes, uint64_t count, uint64_t old_size,
                             merkle_hash *proof, size_t *proof_len)
{
	return merkle_consistency_proof_from(array_range_root, (void *)leaf_hashes, count, old_size, proof,
	                                     proof_len);
}

/* One proof hash up the path that RFC 9162 walks to verify both kinds of proof (2.1.3.2, 2.1.4.2),
 * fn the node's index at its level and sn the last index of that level: returns 1 when the proof
 * hash is the node's left sibling (fn odd, or fn the last node and so without a right one), 0
 * when it is the right; fn and sn then move to the level of the next proof hash, past the levels
 * where the node has no sibling. */
static int path_climb(uint64_t *fn, uint64_t *sn)
{
	int left = (*fn & 1) || *fn == *sn;
	if (left) {
		/* Levels where the node has no right sibling take no proof hash. */
		while ((*fn & 1) == 0 && *fn != 0) {
			*fn >>= 1;
			*sn >>= 1;
		}
	}
	*fn >>= 1;
	*sn >>= 1;
	return left;
}

int merkle_root_from_inclusion(uint64_t index, uint64_t tree_size, const merkle_hash leaf_hash,
                               const merkle_hash *proof, size_t proof_len, merkle_hash out)
{
	uint64_t fn = index, sn;
	merkle_hash r;
	int rc;

	if (index >= tree_size)
		return DIRAUTH_ERR_PROOF;
	sn = tree_size - 1;
	memcpy(r, leaf_hash, MERKLE_HASH_SIZE);
	for (size_t i = 0; i < proof_len; i++) {
		if (sn == 0)
			return DIRAUTH_ERR_PROOF; /* more hashes than the path has levels */
		if (path_climb(&fn, &sn))
			rc = merkle_node_hash(proof[i], r, r);
		else
			rc = merkle_node_hash(r, proof[i], r);
		if (rc)
			return rc;
	}
	if (sn != 0)
		return DIRAUTH_ERR_PROOF; /* fewer hashes than the path has levels */
	memcpy(out, r, MERKLE_HASH_SIZE);
	return 0;
}

int merkle_inclusion_verify(uint64_t index, uint64_t tree_size, const merkle_hash leaf_hash,
                            const merkle_hash *proof, size_t proof_len, const merkle_hash root)
{
	merkle_hash computed;
	int rc = merkle_root_from_inclusion(index, tree_size, leaf_hash, proof, proof_len, computed);
	if (rc)
		return rc;
	return memcmp(computed, root, MERKLE_HASH_SIZE) ? DIRAUTH_ERR_PROOF : 0;
}

int merkle_consistency_verify(uint64_t size1, uint64_t size2, const merkle_hash root1,
                              const merkle_hash root2, const merkle_hash *proof, size_t proof_len)
{
	uint64_t fn, sn;
	merkle_hash fr, sr;
	size_t next;
	int rc;

	if (size1 == 0 || size1 > size2)
		return DIRAUTH_ERR_PROOF;
	if (size1 == size2) {
		if (proof_len != 0 || memcmp(root1, root2, MERKLE_HASH_SIZE) != 0)
			return DIRAUTH_ERR_PROOF;
		return 0;
	}
	if (proof_len == 0)
		return DIRAUTH_ERR_PROOF;
	fn = size1 - 1;
	sn = size2 - 1;
	/* RFC 9162 2.1.4.2: when the old tree is a complete subtree, its root is the proof's
	 * implicit first element; otherwise the proof starts with the deepest shared node. */
	if ((size1 & (size1 - 1)) == 0) {
		memcpy(fr, root1, MERKLE_HASH_SIZE);
		next = 0;
	} else {
		memcpy(fr, proof[0], MERKLE_HASH_SIZE);
		next = 1;
	}
	memcpy(sr, fr, MERKLE_HASH_SIZE);
	while (fn & 1) {
		fn >>= 1;
		sn >>= 1;
	}
	for (; next < proof_len; next++) {
		if (sn == 0)
			return DIRAUTH_ERR_PROOF;
		if (path_climb(&fn, &sn)) {
			rc = merkle_node_hash(proof[next], fr, fr);
			if (!rc)
				rc = merkle_node_hash(proof[next], sr, sr);
		} else {
			rc = merkle_node_hash(sr, proof[next], sr);
		}
		if (rc)
			return rc;
	}
	if (sn != 0)
		return DIRAUTH_ERR_PROOF;
	if (memcmp(fr, root1, MERKLE_HASH_SIZE) != 0 || memcmp(sr, root2, MERKLE_HASH_SIZE) != 0)
		return DIRAUTH_ERR_PROOF;
	return 0;
}
