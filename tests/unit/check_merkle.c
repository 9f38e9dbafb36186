/*
 * check_merkle.c: tests of the RFC 6962 / RFC 9162 Merkle tree code.
 *
 * The verifiers are checked against the transparency-dev vectors (tests/vectors/merkle), which
 * were produced by an independent implementation and include many mutated proofs that must be
 * refused. The tree hashing is checked against the RFC 6962 reference tree and against a plain
 * recursive transcription of the RFC. The generators are then checked by having every generated
 * proof of every small tree pass the vector-checked verifiers, and every tampered one fail.
 *
 * The vectors are JSON; a tiny bounded reader below handles exactly their shape, so that the
 * numbers (leaf indexes up to 2^64-1) are read as uint64_t and never through a double.
 */
#include "crypto/merkle.h"

#include "crypto/crypto.h"
#include "schema/encoding.h"
#include "base/error.h"
#include "test_support.h"

#include <check.h>

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define VECTOR_COUNT          196
#define VECTOR_MAX_FILE       (64 * 1024)
#define VECTOR_MAX_PROOF      80
#define VECTOR_MAX_HASH_BYTES 64

/* One vector, inclusion or consistency. A field absent from the file keeps has_x = 0. */
struct vector {
	int has_leaf_index, has_tree_size, has_size1, has_size2, has_want_error;
	uint64_t leaf_index, tree_size, size1, size2;
	int want_error;
	int leaf_hash_is_hash; /* the leafHash value was 32 bytes long */
	merkle_hash root, root1, root2, leaf_hash;
	merkle_hash proof[VECTOR_MAX_PROOF];
	size_t proof_len;
};

struct json_reader {
	const char *text;
	size_t len;
	size_t pos;
};

static void json_skip_space(struct json_reader *r)
{
	while (r->pos < r->len && (r->text[r->pos] == ' ' || r->text[r->pos] == '\n' ||
	                           r->text[r->pos] == '\r' || r->text[r->pos] == '\t'))
		r->pos++;
}

/* Consumes the character c after optional white space; 0 when it is not next. */
static int json_expect(struct json_reader *r, char c)
{
	json_skip_space(r);
	if (r->pos < r->len && r->text[r->pos] == c) {
		r->pos++;
		return 1;
	}
	return 0;
}

/* Reads a string without escapes (the vectors have none); *start and *len locate its body. */
static int json_string(struct json_reader *r, const char **start, size_t *len)
{
	if (!json_expect(r, '"'))
		return 0;
	size_t begin = r->pos;
	while (r->pos < r->len && r->text[r->pos] != '"') {
		if (r->text[r->pos] == '\\')
			return 0;
		r->pos++;
	}
	if (r->pos >= r->len)
		return 0;
	*start = r->text + begin;
	*len = r->pos - begin;
	r->pos++;
	return 1;
}

static int json_uint64(struct json_reader *r, uint64_t *out)
{
	json_skip_space(r);
	size_t begin = r->pos;
	while (r->pos < r->len && r->text[r->pos] >= '0' && r->text[r->pos] <= '9')
		r->pos++;
	return r->pos > begin && decimal_parse(r->text + begin, r->pos - begin, out) == 0;
}

static int json_literal(struct json_reader *r, const char *word)
{
	size_t n = strlen(word);
	json_skip_space(r);
	if (r->len - r->pos < n || memcmp(r->text + r->pos, word, n) != 0)
		return 0;
	r->pos += n;
	return 1;
}

/*
 * The API works on 32-byte hashes; a few vectors carry values of other lengths ("", a short
 * text) to test refusal. Such a value is mapped to SHA-256 of a tag and its bytes: equal values
 * stay equal, and none can collide with a real 32-byte hash in practice.
 */
static int json_hash(struct json_reader *r, merkle_hash out, int *is_hash)
{
	const char *text;
	size_t text_len, len;
	uint8_t bytes[VECTOR_MAX_HASH_BYTES];
	if (!json_string(r, &text, &text_len))
		return 0;
	if (base64_decode(text, text_len, bytes, sizeof bytes, &len) != 0)
		return 0;
	*is_hash = len == MERKLE_HASH_SIZE;
	if (len == MERKLE_HASH_SIZE) {
		memcpy(out, bytes, MERKLE_HASH_SIZE);
		return 1;
	}
	static const uint8_t tag[] = "not a 32-byte hash";
	const uint8_t *parts[2] = {tag, bytes};
	size_t lengths[2] = {sizeof tag, len};
	return crypto_sha256_parts(parts, lengths, 2, out) == 0;
}

static int json_proof(struct json_reader *r, struct vector *v)
{
	v->proof_len = 0;
	if (json_literal(r, "null"))
		return 1;
	if (!json_expect(r, '['))
		return 0;
	if (json_expect(r, ']'))
		return 1;
	do {
		int is_hash;
		if (v->proof_len == VECTOR_MAX_PROOF || !json_hash(r, v->proof[v->proof_len], &is_hash))
			return 0;
		v->proof_len++;
	} while (json_expect(r, ','));
	return json_expect(r, ']');
}

static int key_is(const char *key, size_t key_len, const char *name)
{
	return key_len == strlen(name) && memcmp(key, name, key_len) == 0;
}

/* Parses one vector file. Unknown keys must hold strings (only "desc" does). */
static int vector_parse(const char *text, size_t len, struct vector *v)
{
	struct json_reader r = {text, len, 0};
	memset(v, 0, sizeof *v);
	if (!json_expect(&r, '{'))
		return 0;
	do {
		const char *key, *ignored;
		size_t key_len, ignored_len;
		int ok, is_hash;
		if (!json_string(&r, &key, &key_len) || !json_expect(&r, ':'))
			return 0;
		if (key_is(key, key_len, "leafIdx")) {
			ok = json_uint64(&r, &v->leaf_index);
			v->has_leaf_index = 1;
		} else if (key_is(key, key_len, "treeSize")) {
			ok = json_uint64(&r, &v->tree_size);
			v->has_tree_size = 1;
		} else if (key_is(key, key_len, "size1")) {
			ok = json_uint64(&r, &v->size1);
			v->has_size1 = 1;
		} else if (key_is(key, key_len, "size2")) {
			ok = json_uint64(&r, &v->size2);
			v->has_size2 = 1;
		} else if (key_is(key, key_len, "root")) {
			ok = json_hash(&r, v->root, &is_hash);
		} else if (key_is(key, key_len, "root1")) {
			ok = json_hash(&r, v->root1, &is_hash);
		} else if (key_is(key, key_len, "root2")) {
			ok = json_hash(&r, v->root2, &is_hash);
		} else if (key_is(key, key_len, "leafHash")) {
			ok = json_hash(&r, v->leaf_hash, &v->leaf_hash_is_hash);
		} else if (key_is(key, key_len, "proof")) {
			ok = json_proof(&r, v);
		} else if (key_is(key, key_len, "wantErr")) {
			v->has_want_error = 1;
			v->want_error = json_literal(&r, "true");
			ok = v->want_error || json_literal(&r, "false");
		} else {
			ok = json_string(&r, &ignored, &ignored_len);
		}
		if (!ok)
			return 0;
	} while (json_expect(&r, ','));
	if (!json_expect(&r, '}'))
		return 0;
	json_skip_space(&r);
	return r.pos == r.len && v->has_want_error;
}

struct vector_totals {
	unsigned run, inclusion, consistency, accepted, refused_by_type;
};

static void vector_run_file(const char *path, struct vector_totals *totals)
{
	size_t len;
	uint8_t *text = test_read_file(path, &len);
	struct vector *v = malloc(sizeof *v);
	int rc;

	ck_assert_ptr_nonnull(v);
	ck_assert_msg(len <= VECTOR_MAX_FILE, "%s: too large", path);
	ck_assert_msg(vector_parse((const char *)text, len, v), "%s: cannot parse", path);
	if (v->has_leaf_index && v->has_tree_size && !v->leaf_hash_is_hash) {
		/* The reference implementation refuses a leaf hash of the wrong length before
		 * anything else; here merkle_hash makes such a value impossible to pass. */
		rc = DIRAUTH_ERR_PROOF;
		totals->inclusion++;
		totals->refused_by_type++;
	} else if (v->has_leaf_index && v->has_tree_size) {
		rc = merkle_inclusion_verify(v->leaf_index, v->tree_size, v->leaf_hash, v->proof,
		                             v->proof_len, v->root);
		totals->inclusion++;
	} else if (v->has_size1 && v->has_size2) {
		rc =
		    merkle_consistency_verify(v->size1, v->size2, v->root1, v->root2, v->proof, v->proof_len);
		totals->consistency++;
	} else {
		ck_abort_msg("%s: neither an inclusion nor a consistency vector", path);
	}
	if (v->want_error) {
		ck_assert_msg(rc == DIRAUTH_ERR_PROOF, "%s: expected a refusal, got %d", path, rc);
	} else {
		ck_assert_msg(rc == 0, "%s: expected success, got %d", path, rc);
		totals->accepted++;
	}
	totals->run++;
	free(v);
	free(text);
}

/* Runs every *.json file below dir. */
static void vector_run_tree(const char *dir, struct vector_totals *totals, int depth)
{
	ck_assert_int_lt(depth, 8);
	DIR *d = opendir(dir);
	ck_assert_msg(d != NULL, "cannot open %s", dir);
	struct dirent *entry;
	while ((entry = readdir(d)) != NULL) {
		char path[PATH_MAX];
		struct stat st;
		if (entry->d_name[0] == '.')
			continue;
		int n = snprintf(path, sizeof path, "%s/%s", dir, entry->d_name);
		ck_assert(n > 0 && (size_t)n < sizeof path);
		ck_assert_int_eq(stat(path, &st), 0);
		if (S_ISDIR(st.st_mode)) {
			vector_run_tree(path, totals, depth + 1);
		} else {
			size_t name_len = strlen(entry->d_name);
			if (name_len > 5 && strcmp(entry->d_name + name_len - 5, ".json") == 0)
				vector_run_file(path, totals);
		}
	}
	closedir(d);
}

START_TEST(test_transparency_dev_vectors)
{
	struct vector_totals totals = {0, 0, 0, 0, 0};
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s", test_source_path("tests/vectors/merkle"));
	vector_run_tree(dir, &totals, 0);
	ck_assert_uint_eq(totals.run, VECTOR_COUNT);
	ck_assert_uint_eq(totals.inclusion + totals.consistency, VECTOR_COUNT);
	ck_assert_uint_gt(totals.inclusion, 0);
	ck_assert_uint_gt(totals.consistency, 0);
	/* Five happy paths of each kind, the single-entry tree, and equal sizes of one. */
	ck_assert_uint_eq(totals.accepted, 12);
	/* Leaf hashes of 0 and 9 bytes (inclusion/single-entry, inclusion/additional). */
	ck_assert_uint_eq(totals.refused_by_type, 11);
}
END_TEST

static void hash_from_hex(const char *hex, merkle_hash out)
{
	ck_assert_int_eq(hex_decode(hex, strlen(hex), out, MERKLE_HASH_SIZE), 0);
}

START_TEST(test_rfc6962_reference_tree)
{
	static const char *leaves_hex[8] = {"",
	                                    "00",
	                                    "10",
	                                    "2021",
	                                    "3031",
	                                    "40414243",
	                                    "5051525354555657",
	                                    "606162636465666768696a6b6c6d6e6f"};
	merkle_hash leaves[8], expected, root;
	uint8_t leaf[16];

	for (size_t i = 0; i < 8; i++) {
		size_t len = strlen(leaves_hex[i]) / 2;
		ck_assert_int_eq(hex_decode(leaves_hex[i], 2 * len, leaf, len), 0);
		ck_assert_int_eq(merkle_leaf_hash(leaf, len, leaves[i]), 0);
	}
	hash_from_hex("6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d", expected);
	ck_assert_mem_eq(leaves[0], expected, MERKLE_HASH_SIZE);
	ck_assert_int_eq(merkle_leaf_hash(NULL, 0, root), 0);
	ck_assert_mem_eq(root, expected, MERKLE_HASH_SIZE);

	hash_from_hex("5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328", expected);
	ck_assert_int_eq(merkle_root(leaves, 8, root), 0);
	ck_assert_mem_eq(root, expected, MERKLE_HASH_SIZE);

	hash_from_hex("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", expected);
	ck_assert_int_eq(merkle_root(NULL, 0, root), 0);
	ck_assert_mem_eq(root, expected, MERKLE_HASH_SIZE);

	/* A tree of one leaf has the leaf hash as its root. */
	ck_assert_int_eq(merkle_root(leaves + 3, 1, root), 0);
	ck_assert_mem_eq(root, leaves[3], MERKLE_HASH_SIZE);
}
END_TEST

START_TEST(test_node_hash_is_domain_separated)
{
	merkle_hash left, right, node, expected;
	uint8_t concatenated[1 + 2 * MERKLE_HASH_SIZE];
	memset(left, 0x11, sizeof left);
	memset(right, 0x22, sizeof right);
	concatenated[0] = 1;
	memcpy(concatenated + 1, left, MERKLE_HASH_SIZE);
	memcpy(concatenated + 1 + MERKLE_HASH_SIZE, right, MERKLE_HASH_SIZE);
	ck_assert_int_eq(crypto_sha256(concatenated, sizeof concatenated, expected), 0);
	ck_assert_int_eq(merkle_node_hash(left, right, node), 0);
	ck_assert_mem_eq(node, expected, MERKLE_HASH_SIZE);
	/* A leaf of the same 64 bytes hashes differently (prefix 0x00). */
	ck_assert_int_eq(merkle_leaf_hash(concatenated + 1, 2 * MERKLE_HASH_SIZE, expected), 0);
	ck_assert_mem_ne(node, expected, MERKLE_HASH_SIZE);
}
END_TEST

#define TREE_MAX 64

static void make_leaves(merkle_hash *leaves, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		uint8_t leaf[3] = {'L', (uint8_t)(i >> 8), (uint8_t)i};
		ck_assert_int_eq(merkle_leaf_hash(leaf, sizeof leaf, leaves[i]), 0);
	}
}

/* MTH of RFC 6962 2.1 transcribed literally, to check the iterative merkle_root. */
static void reference_root(const merkle_hash *leaves, uint64_t count, merkle_hash out)
{
	if (count == 1) {
		memcpy(out, leaves[0], MERKLE_HASH_SIZE);
		return;
	}
	uint64_t k = 1;
	while (2 * k < count)
		k *= 2;
	merkle_hash left, right;
	reference_root(leaves, k, left);
	reference_root(leaves + k, count - k, right);
	ck_assert_int_eq(merkle_node_hash(left, right, out), 0);
}

START_TEST(test_root_matches_rfc_recursion)
{
	merkle_hash leaves[TREE_MAX], root, expected;
	make_leaves(leaves, TREE_MAX);
	for (uint64_t n = 1; n <= TREE_MAX; n++) {
		reference_root(leaves, n, expected);
		ck_assert_int_eq(merkle_root(leaves, n, root), 0);
		ck_assert_mem_eq(root, expected, MERKLE_HASH_SIZE);
	}
}
END_TEST

START_TEST(test_inclusion_every_small_tree)
{
	merkle_hash leaves[TREE_MAX], roots[TREE_MAX + 1], proof[MERKLE_MAX_PROOF + 1], computed, other;
	size_t proof_len;
	make_leaves(leaves, TREE_MAX);
	for (uint64_t n = 1; n <= TREE_MAX; n++)
		ck_assert_int_eq(merkle_root(leaves, n, roots[n]), 0);

	for (uint64_t n = 1; n <= TREE_MAX; n++) {
		const uint8_t *root = roots[n];
		for (uint64_t i = 0; i < n; i++) {
			ck_assert_int_eq(merkle_inclusion_proof(leaves, n, i, proof, &proof_len), 0);
			ck_assert_uint_le(proof_len, 7);
			ck_assert_int_eq(merkle_inclusion_verify(i, n, leaves[i], proof, proof_len, root), 0);
			ck_assert_int_eq(
			    merkle_root_from_inclusion(i, n, leaves[i], proof, proof_len, computed), 0);
			ck_assert_mem_eq(computed, root, MERKLE_HASH_SIZE);

			/* Each flipped bit of each proof hash is caught. */
			for (size_t p = 0; p < proof_len; p++) {
				for (unsigned bit = 0; bit < 8 * MERKLE_HASH_SIZE; bit += 37) {
					proof[p][bit / 8] ^= (uint8_t)(1u << (bit % 8));
					ck_assert_int_eq(
					    merkle_inclusion_verify(i, n, leaves[i], proof, proof_len, root),
					    DIRAUTH_ERR_PROOF);
					proof[p][bit / 8] ^= (uint8_t)(1u << (bit % 8));
				}
			}
			/* A flipped bit in the leaf or the root is caught. */
			memcpy(other, leaves[i], MERKLE_HASH_SIZE);
			other[31] ^= 1;
			ck_assert_int_eq(merkle_inclusion_verify(i, n, other, proof, proof_len, root),
			                 DIRAUTH_ERR_PROOF);
			memcpy(other, root, MERKLE_HASH_SIZE);
			other[0] ^= 0x80;
			ck_assert_int_eq(merkle_inclusion_verify(i, n, leaves[i], proof, proof_len, other),
			                 DIRAUTH_ERR_PROOF);
			/* Another leaf at this index, this leaf at another index, a size whose path has
			 * another shape. (Some other sizes share the path's shape: the root alone does not
			 * commit to the size, which is why signed checkpoints carry both.) */
			if (n > 1) {
				uint64_t j = (i + 1) % n;
				ck_assert_int_eq(
				    merkle_inclusion_verify(i, n, leaves[j], proof, proof_len, root),
				    DIRAUTH_ERR_PROOF);
				ck_assert_int_eq(
				    merkle_inclusion_verify(j, n, leaves[i], proof, proof_len, root),
				    DIRAUTH_ERR_PROOF);
			}
			ck_assert_int_eq(merkle_inclusion_verify(i, 2 * n, leaves[i], proof, proof_len, root),
			                 DIRAUTH_ERR_PROOF);
			/* A proof one hash too short or too long. */
			if (proof_len > 0)
				ck_assert_int_eq(
				    merkle_inclusion_verify(i, n, leaves[i], proof, proof_len - 1, root),
				    DIRAUTH_ERR_PROOF);
			memcpy(proof[proof_len], leaves[0], MERKLE_HASH_SIZE);
			ck_assert_int_eq(merkle_inclusion_verify(i, n, leaves[i], proof, proof_len + 1, root),
			                 DIRAUTH_ERR_PROOF);
		}
		/* Indexes outside the tree are refused by generation and verification. */
		ck_assert_int_eq(merkle_inclusion_proof(leaves, n, n, proof, &proof_len), DIRAUTH_ERR_PROOF);
		ck_assert_uint_eq(proof_len, 0);
		ck_assert_int_eq(merkle_inclusion_verify(n, n, leaves[0], proof, 0, root), DIRAUTH_ERR_PROOF);
		ck_assert_int_eq(merkle_root_from_inclusion(UINT64_MAX, n, leaves[0], proof, 0, computed),
		                 DIRAUTH_ERR_PROOF);
	}
	ck_assert_int_eq(merkle_inclusion_proof(leaves, 0, 0, proof, &proof_len), DIRAUTH_ERR_PROOF);
}
END_TEST

START_TEST(test_inclusion_huge_trees)
{
	merkle_hash proof[MERKLE_MAX_PROOF + 1], leaf, root, computed;
	memset(leaf, 7, sizeof leaf);
	memset(root, 9, sizeof root);
	for (size_t i = 0; i < MERKLE_MAX_PROOF + 1; i++)
		memset(proof[i], (int)i, MERKLE_HASH_SIZE);
	/* A tree of 2^64-1 leaves has paths of 64 hashes; the last leaf's path is 63 long. */
	ck_assert_int_eq(merkle_root_from_inclusion(0, UINT64_MAX, leaf, proof, MERKLE_MAX_PROOF, computed),
	                 0);
	ck_assert_int_eq(
	    merkle_root_from_inclusion(0, UINT64_MAX, leaf, proof, MERKLE_MAX_PROOF + 1, computed),
	    DIRAUTH_ERR_PROOF);
	ck_assert_int_eq(merkle_root_from_inclusion(UINT64_MAX - 1, UINT64_MAX, leaf, proof, 63, computed),
	                 0);
	ck_assert_int_eq(merkle_root_from_inclusion(UINT64_MAX - 1, UINT64_MAX, leaf, proof, 64, computed),
	                 DIRAUTH_ERR_PROOF);
	ck_assert_int_eq(merkle_inclusion_verify(UINT64_MAX - 1, UINT64_MAX, leaf, proof, 63, root),
	                 DIRAUTH_ERR_PROOF);
	ck_assert_int_eq(merkle_inclusion_verify(UINT64_MAX, UINT64_MAX, leaf, proof, 64, root),
	                 DIRAUTH_ERR_PROOF);
	ck_assert_int_eq(merkle_consistency_verify(1, UINT64_MAX, leaf, root, proof, MERKLE_MAX_PROOF + 1),
	                 DIRAUTH_ERR_PROOF);
	ck_assert_int_eq(merkle_consistency_verify(UINT64_MAX - 1, UINT64_MAX, leaf, root, proof, 64),
	                 DIRAUTH_ERR_PROOF);
}
END_TEST

START_TEST(test_consistency_every_small_pair)
{
	merkle_hash leaves[TREE_MAX], roots[TREE_MAX + 1], proof[MERKLE_MAX_PROOF + 1], other;
	size_t proof_len;
	make_leaves(leaves, TREE_MAX);
	for (uint64_t n = 1; n <= TREE_MAX; n++)
		ck_assert_int_eq(merkle_root(leaves, n, roots[n]), 0);

	for (uint64_t n = 1; n <= TREE_MAX; n++) {
		for (uint64_t m = 1; m <= n; m++) {
			ck_assert_int_eq(merkle_consistency_proof(leaves, n, m, proof, &proof_len), 0);
			ck_assert_int_eq(
			    merkle_consistency_verify(m, n, roots[m], roots[n], proof, proof_len), 0);
			if (m == n) {
				ck_assert_uint_eq(proof_len, 0);
				ck_assert_int_eq(merkle_consistency_verify(m, n, roots[m],
				                                           roots[m == 1 ? 2 : 1], proof, 0),
				                 DIRAUTH_ERR_PROOF);
				memcpy(proof[0], roots[m], MERKLE_HASH_SIZE);
				ck_assert_int_eq(
				    merkle_consistency_verify(m, n, roots[m], roots[n], proof, 1),
				    DIRAUTH_ERR_PROOF);
				continue;
			}
			ck_assert_uint_ge(proof_len, 1);
			ck_assert_uint_le(proof_len, 12);
			for (size_t p = 0; p < proof_len; p++) {
				for (unsigned bit = 0; bit < 8 * MERKLE_HASH_SIZE; bit += 61) {
					proof[p][bit / 8] ^= (uint8_t)(1u << (bit % 8));
					ck_assert_int_eq(merkle_consistency_verify(m, n, roots[m], roots[n],
					                                           proof, proof_len),
					                 DIRAUTH_ERR_PROOF);
					proof[p][bit / 8] ^= (uint8_t)(1u << (bit % 8));
				}
			}
			memcpy(other, roots[m], MERKLE_HASH_SIZE);
			other[5] ^= 4;
			ck_assert_int_eq(merkle_consistency_verify(m, n, other, roots[n], proof, proof_len),
			                 DIRAUTH_ERR_PROOF);
			memcpy(other, roots[n], MERKLE_HASH_SIZE);
			other[17] ^= 2;
			ck_assert_int_eq(merkle_consistency_verify(m, n, roots[m], other, proof, proof_len),
			                 DIRAUTH_ERR_PROOF);
			ck_assert_int_eq(
			    merkle_consistency_verify(m, n, roots[n], roots[m], proof, proof_len),
			    DIRAUTH_ERR_PROOF);
			ck_assert_int_eq(
			    merkle_consistency_verify(n, m, roots[n], roots[m], proof, proof_len),
			    DIRAUTH_ERR_PROOF);
			ck_assert_int_eq(
			    merkle_consistency_verify(m, n, roots[m], roots[n], proof, proof_len - 1),
			    DIRAUTH_ERR_PROOF);
			memcpy(proof[proof_len], leaves[0], MERKLE_HASH_SIZE);
			ck_assert_int_eq(
			    merkle_consistency_verify(m, n, roots[m], roots[n], proof, proof_len + 1),
			    DIRAUTH_ERR_PROOF);
			ck_assert_int_eq(
			    merkle_consistency_verify(0, n, roots[m], roots[n], proof, proof_len),
			    DIRAUTH_ERR_PROOF);
		}
		ck_assert_int_eq(merkle_consistency_proof(leaves, n, 0, proof, &proof_len),
		                 DIRAUTH_ERR_PROOF);
		ck_assert_int_eq(merkle_consistency_proof(leaves, n, n + 1, proof, &proof_len),
		                 DIRAUTH_ERR_PROOF);
	}
}
END_TEST

static Suite *merkle_suite(void)
{
	Suite *s = suite_create("merkle");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_transparency_dev_vectors);
	tcase_add_test(tc, test_rfc6962_reference_tree);
	tcase_add_test(tc, test_node_hash_is_domain_separated);
	tcase_add_test(tc, test_root_matches_rfc_recursion);
	tcase_add_test(tc, test_inclusion_every_small_tree);
	tcase_add_test(tc, test_inclusion_huge_trees);
	tcase_add_test(tc, test_consistency_every_small_pair);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *runner = srunner_create(merkle_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
