/*
 * record_shard.c: the names, the codec and the range proof of a record shard, and the builder of
 * every shard of a body (record_shard.h; the format is record-shard.md).
 *
 * A shard is read from anyone (an authority, a mirror, a cache) by clients that fetch one per
 * lookup, so its parser is written for hostile bytes: everything is bounded before it is
 * allocated (the run's length by RECORD_SHARD_RUN_MAX and by the bytes left, the proof by
 * RECORD_SHARD_PROOF_MAX), each field has one spelling, and the entries reuse the body's own
 * readers (snapshot.h), so a record or a health entry reads the same in a shard as in a body.
 *
 * The range proof is one recursion over the RFC 6962 tree, walked by the prover (emitting the
 * roots of the subtrees outside the run) and by the verifier (taking them back in the same order).
 * The builder keeps the levels of complete subtrees of the whole tree, so that any subtree root
 * the prover needs costs O(log n) lookups, and all shards of a body cost about one pass over it.
 */
#include "schema/record_shard.h"

#include "base/error.h"
#include "crypto/crypto.h"
#include "schema/encoding.h"
#include "schema/lines.h"
#include "schema/names.h"

#include <stdlib.h>
#include <string.h>

/* The fewest bytes of a record line and its note and of a node line: what bounds a count by the
 * bytes left (the health and revocation entries' are the body's, snapshot.h). */
#define RECORD_MIN_BYTES (7 + 64 + 1 + 1 + 1 + 1)
#define NODE_LINE_BYTES  (5 + 2 * MERKLE_HASH_SIZE + 1)

int record_shard_bits(uint64_t record_count, unsigned *bits)
{
	unsigned b = 0;
	while (b <= RECORD_SHARD_BITS_MAX && record_count > ((uint64_t)RECORD_SHARD_TARGET << b))
		b++;
	if (b > RECORD_SHARD_BITS_MAX)
		return DIRAUTH_ERR_BOUNDS;
	*bits = b;
	return 0;
}

uint32_t record_shard_of(const uint8_t service_id[SERVICE_ID_SIZE], unsigned bits)
{
	uint32_t top = (uint32_t)service_id[0] << 24 | (uint32_t)service_id[1] << 16 |
	               (uint32_t)service_id[2] << 8 | (uint32_t)service_id[3];
	return bits == 0 ? 0 : top >> (32 - bits);
}

static unsigned name_digits(unsigned bits)
{
	return bits == 0 ? 1 : (bits + 3) / 4;
}

int record_shard_name(uint32_t index, unsigned bits, char out[RECORD_SHARD_NAME_MAX + 1])
{
	if (bits > RECORD_SHARD_BITS_MAX || index >= (UINT32_C(1) << bits))
		return DIRAUTH_ERR_BOUNDS;
	static const char digits[] = "0123456789abcdef";
	unsigned count = name_digits(bits);
	for (unsigned i = 0; i < count; i++)
		out[i] = digits[(index >> (4 * (count - 1 - i))) & 0xf];
	out[count] = '\0';
	return 0;
}

int record_shard_name_parse(const char *name, size_t len, unsigned bits, uint32_t *index)
{
	if (!name || bits > RECORD_SHARD_BITS_MAX || len != name_digits(bits))
		return DIRAUTH_ERR_SYNTAX;
	uint32_t value = 0;
	for (size_t i = 0; i < len; i++) {
		char c = name[i];
		unsigned digit;
		if (c >= '0' && c <= '9')
			digit = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			digit = (unsigned)(c - 'a' + 10);
		else
			return DIRAUTH_ERR_SYNTAX;
		value = value << 4 | digit;
	}
	if (value >= (UINT32_C(1) << bits))
		return DIRAUTH_ERR_SYNTAX;
	*index = value;
	return 0;
}

/* ---- codec ---- */

void record_shard_free(struct record_shard *shard)
{
	if (!shard)
		return;
	free(shard->records);
	free(shard->health);
	free(shard->revocations);
	free(shard);
}

/* "shard <bits> <name>": bits must be the count's. */
static int read_shard_line(struct line_reader *reader, struct record_shard *shard)
{
	struct text_span value, field;
	uint64_t bits;
	unsigned expected;
	int rc = lines_expect(reader, "shard", &value);
	if (rc == 0)
		rc = text_next_u64(&value, &bits);
	if (rc == 0)
		rc = text_next_field(&value, &field);
	if (rc)
		return rc;
	if (value.len != 0)
		return DIRAUTH_ERR_SYNTAX;
	if ((rc = record_shard_bits(shard->record_count, &expected)) != 0)
		return rc;
	if (bits != expected)
		return DIRAUTH_ERR_SYNTAX;
	shard->bits = expected;
	return record_shard_name_parse(field.data, field.len, shard->bits, &shard->index);
}

/* "leaves <first> <run count>", bounded by the tree and by the bytes left. */
static int read_leaves_line(struct line_reader *reader, struct record_shard *shard)
{
	struct text_span value;
	uint64_t first, count;
	int rc = lines_expect(reader, "leaves", &value);
	if (rc == 0)
		rc = text_next_u64(&value, &first);
	if (rc == 0)
		rc = text_next_u64(&value, &count);
	if (rc)
		return rc;
	if (value.len != 0 || first > shard->record_count || count > shard->record_count - first)
		return DIRAUTH_ERR_SYNTAX;
	if (count > RECORD_SHARD_RUN_MAX)
		return DIRAUTH_ERR_BOUNDS;
	if (count > (reader->len - reader->pos) / RECORD_MIN_BYTES)
		return DIRAUTH_ERR_SYNTAX;
	shard->first = first;
	shard->run_count = (size_t)count;
	return 0;
}

static int read_records(struct line_reader *reader, struct record_shard *shard)
{
	if (shard->run_count == 0)
		return 0;
	shard->records = calloc(shard->run_count, sizeof(*shard->records));
	if (!shard->records)
		return DIRAUTH_ERR_NOMEM;
	for (size_t i = 0; i < shard->run_count; i++) {
		int rc = snapshot_body_read_record(reader, &shard->records[i]);
		if (rc)
			return rc;
		if (i > 0 && memcmp(shard->records[i - 1].service_id, shard->records[i].service_id,
		                    SERVICE_ID_SIZE) >= 0)
			return DIRAUTH_ERR_SYNTAX;
	}
	return 0;
}

static int read_proof(struct line_reader *reader, struct record_shard *shard)
{
	size_t count;
	int rc = lines_expect_count(reader, "proof", RECORD_SHARD_PROOF_MAX, NODE_LINE_BYTES, &count);
	for (size_t i = 0; rc == 0 && i < count; i++)
		rc = lines_expect_hex(reader, "node", shard->proof[i], MERKLE_HASH_SIZE);
	if (rc == 0)
		shard->proof_count = count;
	return rc;
}

int record_shard_parse(const uint8_t *buf, size_t len, struct record_shard **out)
{
	struct line_reader reader;
	void *items = NULL;
	int rc;
	*out = NULL;
	if (len > RECORD_SHARD_MAX_BYTES)
		return DIRAUTH_ERR_BOUNDS;
	struct record_shard *shard = calloc(1, sizeof(*shard));
	if (!shard)
		return DIRAUTH_ERR_NOMEM;
	lines_init(&reader, buf, len, RECORD_SHARD_LINE_MAX);
	if ((rc = lines_expect_exact(&reader, "dirauth record-shard v1")) != 0 ||
	    (rc = lines_expect_name(&reader, "namespace", shard->namespace_name,
	                            sizeof(shard->namespace_name))) != 0 ||
	    (rc = lines_expect_u64(&reader, "epoch", &shard->epoch)) != 0 ||
	    (rc = lines_expect_u64(&reader, "records", &shard->record_count)) != 0 ||
	    (rc = lines_expect_hex(&reader, "records-root", shard->records_root, MERKLE_HASH_SIZE)) != 0 ||
	    (rc = read_shard_line(&reader, shard)) != 0 || (rc = read_leaves_line(&reader, shard)) != 0 ||
	    (rc = read_records(&reader, shard)) != 0)
		goto cleanup;
	rc = lines_read_optional_section(&reader, &snapshot_health_section,
	                                 shard->run_count * REGISTRATION_MAX_ENDPOINTS, &items,
	                                 &shard->health_count);
	shard->health = items;
	if (rc)
		goto cleanup;
	rc = lines_read_optional_section(&reader, &snapshot_revocation_section, RECORD_SHARD_RUN_MAX, &items,
	                                 &shard->revocation_count);
	shard->revocations = items;
	if (rc)
		goto cleanup;
	if ((rc = read_proof(&reader, shard)) != 0)
		goto cleanup;
	if (!lines_at_end(&reader))
		rc = DIRAUTH_ERR_SYNTAX;
cleanup:
	if (rc)
		record_shard_free(shard);
	else
		*out = shard;
	return rc;
}

int record_shard_encode(const struct record_shard *shard, struct buffer *out)
{
	char root_hex[2 * MERKLE_HASH_SIZE + 1], name[RECORD_SHARD_NAME_MAX + 1];
	unsigned bits;
	int rc;
	if (!text_field_is_name(shard->namespace_name, sizeof(shard->namespace_name), NAMESPACE_NAME_MAX) ||
	    record_shard_bits(shard->record_count, &bits) != 0 || bits != shard->bits ||
	    record_shard_name(shard->index, shard->bits, name) != 0 || shard->first > shard->record_count ||
	    shard->run_count > shard->record_count - shard->first ||
	    (shard->run_count > 0 && !shard->records) || (shard->health_count > 0 && !shard->health) ||
	    (shard->revocation_count > 0 && !shard->revocations))
		return DIRAUTH_ERR_SYNTAX;
	if (shard->run_count > RECORD_SHARD_RUN_MAX || shard->proof_count > RECORD_SHARD_PROOF_MAX)
		return DIRAUTH_ERR_BOUNDS;
	for (size_t i = 1; i < shard->run_count; i++)
		if (memcmp(shard->records[i - 1].service_id, shard->records[i].service_id, SERVICE_ID_SIZE) >=
		    0)
			return DIRAUTH_ERR_SYNTAX;
	for (size_t i = 1; i < shard->health_count; i++)
		if (snapshot_health_order(&shard->health[i - 1], &shard->health[i]) >= 0)
			return DIRAUTH_ERR_SYNTAX;
	for (size_t i = 1; i < shard->revocation_count; i++)
		if (snapshot_revocation_order(&shard->revocations[i - 1], &shard->revocations[i]) >= 0)
			return DIRAUTH_ERR_SYNTAX;
	size_t start = out->len;
	hex_encode(shard->records_root, MERKLE_HASH_SIZE, root_hex);
	rc = buffer_appendf(out,
	                    "dirauth record-shard v1\nnamespace %s\nepoch %llu\nrecords %llu\nrecords-root "
	                    "%s\nshard %u %s\nleaves %llu %llu\n",
	                    shard->namespace_name, (unsigned long long)shard->epoch,
	                    (unsigned long long)shard->record_count, root_hex, shard->bits, name,
	                    (unsigned long long)shard->first, (unsigned long long)shard->run_count);
	for (size_t i = 0; rc == 0 && i < shard->run_count; i++) {
		rc = snapshot_body_encode_record_line(shard->records[i].service_id,
		                                      shard->records[i].note_len, out);
		if (rc == 0)
			rc = buffer_append(out, shard->records[i].note, shard->records[i].note_len);
	}
	if (rc == 0 && shard->health_count > 0)
		rc = snapshot_body_encode_section_count("health", shard->health_count, out);
	for (size_t i = 0; rc == 0 && i < shard->health_count; i++) {
		rc = snapshot_body_encode_health_line(&shard->health[i], out);
		if (rc == 0)
			rc = buffer_append(out, shard->health[i].note, shard->health[i].note_len);
	}
	if (rc == 0 && shard->revocation_count > 0)
		rc = snapshot_body_encode_section_count("revocations", shard->revocation_count, out);
	for (size_t i = 0; rc == 0 && i < shard->revocation_count; i++) {
		rc = snapshot_body_encode_revocation_line(&shard->revocations[i], out);
		if (rc == 0)
			rc = buffer_append(out, shard->revocations[i].note, shard->revocations[i].note_len);
	}
	if (rc == 0)
		rc = buffer_appendf(out, "proof %zu\n", shard->proof_count);
	for (size_t i = 0; rc == 0 && i < shard->proof_count; i++) {
		char node_hex[2 * MERKLE_HASH_SIZE + 1];
		hex_encode(shard->proof[i], MERKLE_HASH_SIZE, node_hex);
		rc = buffer_appendf(out, "node %s\n", node_hex);
	}
	if (rc == 0 && out->len - start > RECORD_SHARD_MAX_BYTES)
		rc = DIRAUTH_ERR_BOUNDS;
	if (rc)
		buffer_truncate(out, start);
	return rc;
}

/* ---- the range proof ---- */

static uint64_t largest_power_below(uint64_t n)
{
	uint64_t k = 1;
	while (k < n - k)
		k <<= 1;
	return k; /* the largest power of two < n, for n >= 2 */
}

struct range_walk {
	uint64_t first, end; /* the run [first, end) */
	const merkle_hash *run_leaves;
	const merkle_hash *proof;
	size_t proof_count, used;
};

static int range_walk(struct range_walk *w, uint64_t s, uint64_t e, int depth, merkle_hash out)
{
	if (depth > 64)
		return DIRAUTH_ERR_PROOF;
	if (e <= w->first || s >= w->end) {
		if (w->used >= w->proof_count)
			return DIRAUTH_ERR_PROOF;
		memcpy(out, w->proof[w->used++], MERKLE_HASH_SIZE);
		return 0;
	}
	if (e - s == 1) {
		memcpy(out, w->run_leaves[s - w->first], MERKLE_HASH_SIZE);
		return 0;
	}
	uint64_t k = largest_power_below(e - s);
	merkle_hash left, right;
	int rc = range_walk(w, s, s + k, depth + 1, left);
	if (rc == 0)
		rc = range_walk(w, s + k, e, depth + 1, right);
	if (rc == 0)
		rc = merkle_node_hash(left, right, out);
	return rc;
}

int record_shard_range_root(uint64_t tree_size, uint64_t first, const merkle_hash *run_leaves,
                            size_t run_count, const merkle_hash *proof, size_t proof_count, merkle_hash out)
{
	if (tree_size == 0) {
		if (first != 0 || run_count != 0 || proof_count != 0)
			return DIRAUTH_ERR_PROOF;
		return merkle_root(NULL, 0, out);
	}
	if (run_count == 0 || first >= tree_size || run_count > tree_size - first)
		return DIRAUTH_ERR_PROOF;
	struct range_walk w = {first, first + run_count, run_leaves, proof, proof_count, 0};
	int rc = range_walk(&w, 0, tree_size, 0, out);
	if (rc == 0 && w.used != proof_count)
		rc = DIRAUTH_ERR_PROOF;
	return rc;
}

int record_shard_check_proof(const struct record_shard *shard, const uint8_t root[MERKLE_HASH_SIZE])
{
	merkle_hash *leaves = NULL, computed;
	int rc = 0;
	if (shard->run_count > 0) {
		leaves = malloc(shard->run_count * sizeof(*leaves));
		if (!leaves)
			return DIRAUTH_ERR_NOMEM;
	}
	for (size_t i = 0; rc == 0 && i < shard->run_count; i++)
		rc = merkle_leaf_hash(shard->records[i].note, shard->records[i].note_len, leaves[i]);
	if (rc == 0)
		rc = record_shard_range_root(shard->record_count, shard->first, (const merkle_hash *)leaves,
		                             shard->run_count, (const merkle_hash *)shard->proof,
		                             shard->proof_count, computed);
	if (rc == 0 && !crypto_equal(computed, root, MERKLE_HASH_SIZE))
		rc = DIRAUTH_ERR_PROOF;
	free(leaves);
	return rc;
}

/* ---- the builder ---- */

struct record_shard_builder {
	struct snapshot_body *body;
	unsigned bits;
	size_t level_count;
	merkle_hash *levels[65]; /* levels[j][i]: the root of leaves [i * 2^j, (i + 1) * 2^j) */
	size_t level_len[65];
	merkle_hash root;
};

void record_shard_builder_free(struct record_shard_builder *b)
{
	if (!b)
		return;
	for (size_t j = 0; j < b->level_count; j++)
		free(b->levels[j]);
	snapshot_body_free(b->body);
	free(b);
}

/* MTH(D[s:e]) of the builder's tree: a complete aligned subtree from its level, the right edge
 * split as the tree splits it. */
static int builder_subtree(const struct record_shard_builder *b, uint64_t s, uint64_t e, merkle_hash out)
{
	uint64_t size = e - s;
	if ((size & (size - 1)) == 0) {
		size_t j = 0;
		while (((uint64_t)1 << j) < size)
			j++;
		if (j >= b->level_count || (s >> j) >= b->level_len[j])
			return DIRAUTH_ERR_INTERNAL;
		memcpy(out, b->levels[j][s >> j], MERKLE_HASH_SIZE);
		return 0;
	}
	uint64_t k = largest_power_below(size);
	merkle_hash left, right;
	int rc = builder_subtree(b, s, s + k, left);
	if (rc == 0)
		rc = builder_subtree(b, s + k, e, right);
	if (rc == 0)
		rc = merkle_node_hash(left, right, out);
	return rc;
}

int record_shard_builder_new(const uint8_t *body, size_t body_len, const struct snapshot_body_limits *limits,
                             struct record_shard_builder **out)
{
	*out = NULL;
	struct record_shard_builder *b = calloc(1, sizeof(*b));
	if (!b)
		return DIRAUTH_ERR_NOMEM;
	int rc = snapshot_body_parse_sections(body, body_len, limits, &b->body);
	if (rc == 0)
		rc = record_shard_bits(b->body->record_count, &b->bits);
	size_t n = rc == 0 ? b->body->record_count : 0;
	if (rc == 0 && n > 0) {
		b->levels[0] = malloc(n * sizeof(merkle_hash));
		b->level_len[0] = n;
		b->level_count = 1;
		if (!b->levels[0])
			rc = DIRAUTH_ERR_NOMEM;
		for (size_t i = 0; rc == 0 && i < n; i++)
			rc = merkle_leaf_hash(b->body->records[i].note, b->body->records[i].note_len,
			                      b->levels[0][i]);
		while (rc == 0 && b->level_len[b->level_count - 1] >= 2) {
			size_t j = b->level_count, len = b->level_len[j - 1] / 2;
			b->levels[j] = malloc(len * sizeof(merkle_hash));
			if (!b->levels[j]) {
				rc = DIRAUTH_ERR_NOMEM;
				break;
			}
			b->level_len[j] = len;
			b->level_count++;
			for (size_t i = 0; rc == 0 && i < len; i++)
				rc = merkle_node_hash(b->levels[j - 1][2 * i], b->levels[j - 1][2 * i + 1],
				                      b->levels[j][i]);
		}
	}
	if (rc == 0)
		rc = n > 0 ? builder_subtree(b, 0, n, b->root) : merkle_root(NULL, 0, b->root);
	if (rc) {
		record_shard_builder_free(b);
		return rc;
	}
	*out = b;
	return 0;
}

unsigned record_shard_builder_bits(const struct record_shard_builder *b)
{
	return b->bits;
}

void record_shard_builder_root(const struct record_shard_builder *b, merkle_hash out)
{
	memcpy(out, b->root, MERKLE_HASH_SIZE);
}

/* The first position in [0, count) of items (each stride bytes, a service id at its start,
 * sorted) whose shard is at least index. */
static size_t first_in_shard(const void *items, size_t count, size_t stride, unsigned bits, uint64_t index)
{
	size_t low = 0, high = count;
	while (low < high) {
		size_t middle = low + (high - low) / 2;
		const uint8_t *id = (const uint8_t *)items + middle * stride;
		if (record_shard_of(id, bits) < index)
			low = middle + 1;
		else
			high = middle;
	}
	return low;
}

struct emit_walk {
	const struct record_shard_builder *builder;
	uint64_t first, end;
	struct record_shard *shard;
};

static int emit_walk(struct emit_walk *w, uint64_t s, uint64_t e)
{
	if (e <= w->first || s >= w->end) {
		if (w->shard->proof_count >= RECORD_SHARD_PROOF_MAX)
			return DIRAUTH_ERR_INTERNAL;
		return builder_subtree(w->builder, s, e, w->shard->proof[w->shard->proof_count++]);
	}
	if (e - s == 1)
		return 0;
	uint64_t k = largest_power_below(e - s);
	int rc = emit_walk(w, s, s + k);
	return rc ? rc : emit_walk(w, s + k, e);
}

int record_shard_builder_shard(struct record_shard_builder *b, uint32_t index, struct buffer *out)
{
	const struct snapshot_body *body = b->body;
	if (index >= (UINT32_C(1) << b->bits))
		return DIRAUTH_ERR_BOUNDS;
	struct record_shard *shard = calloc(1, sizeof(*shard));
	if (!shard)
		return DIRAUTH_ERR_NOMEM;
	size_t n = body->record_count;
	size_t lo = first_in_shard(body->records, n, sizeof(*body->records), b->bits, index);
	size_t hi = first_in_shard(body->records, n, sizeof(*body->records), b->bits, (uint64_t)index + 1);
	size_t first = lo > 0 ? lo - 1 : 0, end = hi < n ? hi + 1 : n;
	size_t health_lo =
	    first_in_shard(body->health, body->health_count, sizeof(*body->health), b->bits, index);
	size_t health_hi = first_in_shard(body->health, body->health_count, sizeof(*body->health), b->bits,
	                                  (uint64_t)index + 1);
	size_t revocation_lo = first_in_shard(body->revocations, body->revocation_count,
	                                      sizeof(*body->revocations), b->bits, index);
	size_t revocation_hi = first_in_shard(body->revocations, body->revocation_count,
	                                      sizeof(*body->revocations), b->bits, (uint64_t)index + 1);
	memcpy(shard->namespace_name, body->namespace_name, sizeof(shard->namespace_name));
	shard->epoch = body->epoch;
	shard->record_count = n;
	memcpy(shard->records_root, b->root, MERKLE_HASH_SIZE);
	shard->bits = b->bits;
	shard->index = index;
	shard->first = first;
	shard->run_count = end - first;
	shard->records = n > 0 ? body->records + first : NULL;
	shard->health_count = health_hi - health_lo;
	shard->health = shard->health_count ? body->health + health_lo : NULL;
	shard->revocation_count = revocation_hi - revocation_lo;
	shard->revocations = shard->revocation_count ? body->revocations + revocation_lo : NULL;
	int rc = shard->run_count > RECORD_SHARD_RUN_MAX ? DIRAUTH_ERR_BOUNDS : 0;
	if (rc == 0 && n > 0) {
		struct emit_walk w = {b, first, end, shard};
		rc = emit_walk(&w, 0, n);
	}
	if (rc == 0)
		rc = record_shard_encode(shard, out);
	free(shard); /* its arrays are the body's */
	return rc;
}
