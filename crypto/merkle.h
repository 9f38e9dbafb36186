/*
 * merkle.h: RFC 6962 / RFC 9162 Merkle tree hashing and proofs.
 *
 * Leaf hash = SHA-256(0x00 || leaf), node hash = SHA-256(0x01 || left || right); the tree over
 * n leaves splits at the largest power of two smaller than n. The empty tree's root is
 * SHA-256(""). Used for a snapshot's records root and for the transparency log.
 *
 * Proof verification follows the semantics of the transparency-dev vectors: an index outside the
 * tree, a proof of the wrong length, size1 > size2, size1 == 0 for consistency, and size1 ==
 * size2 with a non-empty proof or different roots are all DIRAUTH_ERR_PROOF.
 */
#ifndef DIRAUTH_CRYPTO_MERKLE_H
#define DIRAUTH_CRYPTO_MERKLE_H

#include <stddef.h>
#include <stdint.h>

#define MERKLE_HASH_SIZE 32
#define MERKLE_MAX_PROOF 64 /* hashes in any proof of a tree of at most 2^63 leaves */

typedef uint8_t merkle_hash[MERKLE_HASH_SIZE];

/* Hash of one leaf. Returns 0 or DIRAUTH_ERR_CRYPTO. */
int merkle_leaf_hash(const uint8_t *leaf, size_t len, merkle_hash out);

/* Hash of an inner node. Returns 0 or DIRAUTH_ERR_CRYPTO. */
int merkle_node_hash(const merkle_hash left, const merkle_hash right, merkle_hash out);

/* Root of the tree whose leaf hashes are given (count may be 0). Returns 0, DIRAUTH_ERR_NOMEM or
 * DIRAUTH_ERR_CRYPTO. */
int merkle_root(const merkle_hash *leaf_hashes, uint64_t count, merkle_hash out);

/* The root of leaves that arrive one at a time, in O(log n) memory: init, add each leaf hash in
 * order, then root (which may be called again after more adds). */
struct merkle_builder {
	merkle_hash stack[64]; /* roots of complete subtrees, largest first */
	size_t depth;
	uint64_t count;
};
void merkle_builder_init(struct merkle_builder *builder);
/* Returns 0 or DIRAUTH_ERR_CRYPTO. */
int merkle_builder_add(struct merkle_builder *builder, const merkle_hash leaf_hash);
/* Returns 0 or DIRAUTH_ERR_CRYPTO; the empty tree's root is SHA-256(""). */
int merkle_builder_root(const struct merkle_builder *builder, merkle_hash out);

/* MTH(D[start:end]) of some tree of leaves, from wherever the caller keeps it (an array of leaf
 * hashes, a store of subtree hashes). Returns 0 or the source's negative error. */
typedef int (*merkle_range_root)(void *context, uint64_t start, uint64_t end, merkle_hash out);

/* The proof generators of RFC 9162 (PATH of 2.1.3.1, SUBPROOF of 2.1.4.1) over any source of
 * subtree roots, as merkle_inclusion_proof and merkle_consistency_proof below (their bounds,
 * their errors, plus the source's). range is asked only for ranges inside the tree. */
int merkle_inclusion_proof_from(merkle_range_root range, void *context, uint64_t tree_size, uint64_t index,
                                merkle_hash *proof, size_t *proof_len);
int merkle_consistency_proof_from(merkle_range_root range, void *context, uint64_t tree_size,
                                  uint64_t old_size, merkle_hash *proof, size_t *proof_len);

/* Inclusion proof for leaf index in the tree of count leaves. proof has room for
 * MERKLE_MAX_PROOF hashes; *proof_len gets the number written. Returns 0, DIRAUTH_ERR_PROOF for
 * an index outside the tree, DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_CRYPTO. */
int merkle_inclusion_proof(const merkle_hash *leaf_hashes, uint64_t count, uint64_t index, merkle_hash *proof,
                           size_t *proof_len);

/* Checks that leaf_hash is leaf index of the tree of tree_size leaves with this root.
 * Returns 0, DIRAUTH_ERR_PROOF or DIRAUTH_ERR_CRYPTO. */
int merkle_inclusion_verify(uint64_t index, uint64_t tree_size, const merkle_hash leaf_hash,
                            const merkle_hash *proof, size_t proof_len, const merkle_hash root);

/* Root a verifier computes from an inclusion proof (RFC 9162 2.1.3.2), for callers that compare
 * it themselves. Returns 0, DIRAUTH_ERR_PROOF or DIRAUTH_ERR_CRYPTO. */
int merkle_root_from_inclusion(uint64_t index, uint64_t tree_size, const merkle_hash leaf_hash,
                               const merkle_hash *proof, size_t proof_len, merkle_hash out);

/* Consistency proof from the first old_size leaves to all count leaves (0 < old_size ≤ count).
 * proof has room for MERKLE_MAX_PROOF hashes. Returns 0, DIRAUTH_ERR_PROOF, DIRAUTH_ERR_NOMEM,
 * DIRAUTH_ERR_CRYPTO. */
int merkle_consistency_proof(const merkle_hash *leaf_hashes, uint64_t count, uint64_t old_size,
                             merkle_hash *proof, size_t *proof_len);

/* Checks that the tree of size1 leaves with root1 is a prefix of the tree of size2 leaves with
 * root2. Returns 0, DIRAUTH_ERR_PROOF or DIRAUTH_ERR_CRYPTO. */
int merkle_consistency_verify(uint64_t size1, uint64_t size2, const merkle_hash root1,
                              const merkle_hash root2, const merkle_hash *proof, size_t proof_len);

#endif
