/*
 * check_record_shard.c: record shards (schema/record_shard.h) and one service verified from them
 * (verify/record_proof.h), with the vector under tests/vectors/documents/record-shard/.
 *
 * Seeded bodies of 0 to 60 example registrations: every shard of each is built, parsed back to
 * the same bytes and verified whole; every record is found at its leaf; ids between neighbours,
 * before the first and after the last are proven absent with the right neighbours. Then every
 * refusal: a flipped bit anywhere in a shard, a record dropped from the middle of a run, a
 * neighbour dropped, the wrong shard, a shard of another snapshot, a proof for another root,
 * sections under method 1, a stale health statement. The method-2 vector of snapshot.md gives a
 * present record with its health and absent services with their revocations.
 */
#include "base/error.h"
#include "crypto/crypto.h"
#include "schema/encoding.h"
#include "schema/record_shard.h"
#include "schema/snapshot.h"
#include "test_keys.h"
#include "test_support.h"
#include "verify/record_proof.h"
#include "verify/verify.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#define NAMESPACE   "example-net"
#define EPOCH       29453762ull
#define VALID_AFTER (EPOCH * 60)
#define MAX_SEEDED  60
#define M2_DIR      "tests/vectors/documents/snapshot-method-2/"
#define SHARD_DIR   "tests/vectors/documents/record-shard/"

static const struct snapshot_body_limits limits = {1000, 1000, 1000};

struct seeded {
	struct buffer notes[MAX_SEEDED];
	struct snapshot_record records[MAX_SEEDED];
	size_t count;
	struct buffer body;
	struct snapshot_header header;
	struct record_shard_builder *builder;
};

static int record_compare(const void *a, const void *b)
{
	return memcmp(a, b, SERVICE_ID_SIZE);
}

/* count example registrations (indexes seed + 1 ...), their body, a header that commits to it. */
static void seeded_build(struct seeded *s, size_t count, unsigned seed)
{
	struct test_key provider;
	memset(s, 0, sizeof(*s));
	test_key_load(TEST_KEY_PROVIDER, &provider);
	for (size_t i = 0; i < count; i++) {
		struct registration r;
		test_example_registration(seed + (unsigned)i + 1, NAMESPACE, &provider, &r);
		buffer_init(&s->notes[i]);
		test_sign_registration(&r, &provider, &s->notes[i]);
		memcpy(s->records[i].service_id, r.service_id, SERVICE_ID_SIZE);
		s->records[i].note = s->notes[i].data;
		s->records[i].note_len = s->notes[i].len;
		registration_clear(&r);
	}
	s->count = count;
	qsort(s->records, count, sizeof(s->records[0]), record_compare);
	buffer_init(&s->body);
	ck_assert_int_eq(snapshot_body_encode(NAMESPACE, EPOCH, s->records, count, &s->body), 0);
	struct snapshot_header *h = &s->header;
	strcpy(h->namespace_name, NAMESPACE);
	strcpy(h->origin, "dirauth.example/example-net");
	h->epoch = EPOCH;
	h->valid_after = VALID_AFTER;
	h->fresh_until = VALID_AFTER + 120;
	h->valid_until = VALID_AFTER + 3600;
	h->record_count = count;
	ck_assert_int_eq(snapshot_records_root(s->records, count, h->records_root), 0);
	h->body_size = s->body.len;
	ck_assert_int_eq(crypto_sha256(s->body.data, s->body.len, h->body_sha256), 0);
	h->consensus_method = 1;
	ck_assert_int_eq(record_shard_builder_new(s->body.data, s->body.len, &limits, &s->builder), 0);
	test_key_free(&provider);
}

static void seeded_free(struct seeded *s)
{
	record_shard_builder_free(s->builder);
	for (size_t i = 0; i < s->count; i++)
		buffer_free(&s->notes[i]);
	buffer_free(&s->body);
}

static void shard_of_id(struct seeded *s, const uint8_t id[SERVICE_ID_SIZE], struct buffer *out)
{
	unsigned bits;
	ck_assert_int_eq(record_shard_bits(s->count, &bits), 0);
	buffer_reset(out);
	ck_assert_int_eq(record_shard_builder_shard(s->builder, record_shard_of(id, bits), out), 0);
}

/* An id next to id: one more or one less in its last byte, where that is no record. */
static int id_nudged(const struct seeded *s, const uint8_t id[SERVICE_ID_SIZE], int step,
                     uint8_t out[SERVICE_ID_SIZE])
{
	memcpy(out, id, SERVICE_ID_SIZE);
	if ((step > 0 && out[31] == 0xff) || (step < 0 && out[31] == 0))
		return 0;
	out[31] = (uint8_t)(out[31] + step);
	return bsearch(out, s->records, s->count, sizeof(s->records[0]), record_compare) == NULL;
}

static void expect_absent(struct seeded *s, const uint8_t id[SERVICE_ID_SIZE])
{
	struct buffer shard;
	struct verify_record found;
	char detail[VERIFY_DETAIL_MAX];
	buffer_init(&shard);
	shard_of_id(s, id, &shard);
	ck_assert_msg(
	    verify_record_proof(&s->header, shard.data, shard.len, id, &found, detail, sizeof detail) == 0,
	    "%s", detail);
	ck_assert_int_eq(found.present, 0);
	/* The neighbours are the records around it in the body. */
	size_t position = 0;
	while (position < s->count && memcmp(s->records[position].service_id, id, SERVICE_ID_SIZE) < 0)
		position++;
	ck_assert_uint_eq(found.leaf_index, position);
	ck_assert_int_eq(found.has_before, position > 0);
	ck_assert_int_eq(found.has_after, position < s->count);
	if (found.has_before)
		ck_assert_mem_eq(found.before_id, s->records[position - 1].service_id, SERVICE_ID_SIZE);
	if (found.has_after)
		ck_assert_mem_eq(found.after_id, s->records[position].service_id, SERVICE_ID_SIZE);
	verify_record_clear(&found);
	buffer_free(&shard);
}

START_TEST(test_names)
{
	static const struct {
		uint64_t count;
		unsigned bits;
	} cases[] = {{0, 0},       {1, 0},        {4, 0},
	             {5, 1},       {8, 1},        {9, 2},
	             {100000, 15}, {1000000, 18}, {(uint64_t)4 << 24, 24}};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		unsigned bits = 99;
		ck_assert_int_eq(record_shard_bits(cases[i].count, &bits), 0);
		ck_assert_uint_eq(bits, cases[i].bits);
	}
	unsigned bits;
	ck_assert_int_eq(record_shard_bits(((uint64_t)4 << 24) + 1, &bits), DIRAUTH_ERR_BOUNDS);
	char name[RECORD_SHARD_NAME_MAX + 1];
	ck_assert_int_eq(record_shard_name(0, 0, name), 0);
	ck_assert_str_eq(name, "0");
	ck_assert_int_eq(record_shard_name(1, 1, name), 0);
	ck_assert_str_eq(name, "1");
	ck_assert_int_eq(record_shard_name(0x3a7f, 15, name), 0);
	ck_assert_str_eq(name, "3a7f");
	ck_assert_int_eq(record_shard_name(0xabcdef, 24, name), 0);
	ck_assert_str_eq(name, "abcdef");
	ck_assert_int_eq(record_shard_name(2, 1, name), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(record_shard_name(0, 25, name), DIRAUTH_ERR_BOUNDS);
	uint32_t index;
	ck_assert_int_eq(record_shard_name_parse("3a7f", 4, 15, &index), 0);
	ck_assert_uint_eq(index, 0x3a7f);
	ck_assert_int_eq(record_shard_name_parse("0", 1, 0, &index), 0);
	ck_assert_uint_eq(index, 0);
	ck_assert_int_eq(record_shard_name_parse("3A7F", 4, 15, &index), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(record_shard_name_parse("03a7f", 5, 15, &index), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(record_shard_name_parse("8000", 4, 15, &index), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(record_shard_name_parse("1", 1, 0, &index), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(record_shard_name_parse("", 0, 0, &index), DIRAUTH_ERR_SYNTAX);
	uint8_t id[SERVICE_ID_SIZE] = {0xab, 0xcd, 0xef, 0x12};
	ck_assert_uint_eq(record_shard_of(id, 0), 0);
	ck_assert_uint_eq(record_shard_of(id, 4), 0xa);
	ck_assert_uint_eq(record_shard_of(id, 15), 0xabcd >> 1);
	ck_assert_uint_eq(record_shard_of(id, 24), 0xabcdef);
}
END_TEST

/* Every shard of bodies of several sizes: round trip, whole-shard verification, every record
 * found, the ids around each absent. */
START_TEST(test_every_record_found)
{
	static const size_t sizes[] = {0, 1, 2, 4, 5, 13, 40, MAX_SEEDED};
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
		struct seeded s;
		char detail[VERIFY_DETAIL_MAX];
		seeded_build(&s, sizes[k], (unsigned)(k * 100));
		merkle_hash root;
		record_shard_builder_root(s.builder, root);
		ck_assert_mem_eq(root, s.header.records_root, MERKLE_HASH_SIZE);
		unsigned bits = record_shard_builder_bits(s.builder);
		struct buffer shard, again;
		buffer_init(&shard);
		buffer_init(&again);
		for (uint32_t index = 0; index < (UINT32_C(1) << bits); index++) {
			buffer_reset(&shard);
			ck_assert_int_eq(record_shard_builder_shard(s.builder, index, &shard), 0);
			ck_assert_msg(verify_record_shard(&s.header, shard.data, shard.len, index, detail,
			                                  sizeof detail) == 0,
			              "size %zu shard %u: %s", sizes[k], index, detail);
			struct record_shard *parsed;
			ck_assert_int_eq(record_shard_parse(shard.data, shard.len, &parsed), 0);
			buffer_reset(&again);
			ck_assert_int_eq(record_shard_encode(parsed, &again), 0);
			ck_assert_uint_eq(again.len, shard.len);
			ck_assert_mem_eq(again.data, shard.data, shard.len);
			record_shard_free(parsed);
			/* The whole-shard check names the shard it was given. */
			if (bits > 0)
				ck_assert_int_eq(verify_record_shard(&s.header, shard.data, shard.len,
				                                     index ^ 1, detail, sizeof detail),
				                 DIRAUTH_ERR_MISMATCH);
		}
		ck_assert_int_eq(record_shard_builder_shard(s.builder, UINT32_C(1) << bits, &shard),
		                 DIRAUTH_ERR_BOUNDS);
		for (size_t i = 0; i < s.count; i++) {
			struct verify_record found;
			shard_of_id(&s, s.records[i].service_id, &shard);
			ck_assert_msg(verify_record_proof(&s.header, shard.data, shard.len,
			                                  s.records[i].service_id, &found, detail,
			                                  sizeof detail) == 0,
			              "%s", detail);
			ck_assert_int_eq(found.present, 1);
			ck_assert_uint_eq(found.leaf_index, i);
			ck_assert_uint_eq(found.note_len, s.records[i].note_len);
			ck_assert_mem_eq(found.note, s.records[i].note, found.note_len);
			ck_assert_mem_eq(found.registration.service_id, s.records[i].service_id,
			                 SERVICE_ID_SIZE);
			ck_assert_uint_eq(found.health_count, 0);
			verify_record_clear(&found);
			uint8_t near[SERVICE_ID_SIZE];
			if (id_nudged(&s, s.records[i].service_id, 1, near))
				expect_absent(&s, near);
			if (id_nudged(&s, s.records[i].service_id, -1, near))
				expect_absent(&s, near);
		}
		uint8_t lowest[SERVICE_ID_SIZE], highest[SERVICE_ID_SIZE];
		memset(lowest, 0, sizeof lowest);
		memset(highest, 0xff, sizeof highest);
		expect_absent(&s, lowest);
		expect_absent(&s, highest);
		buffer_free(&shard);
		buffer_free(&again);
		seeded_free(&s);
	}
}
END_TEST

/* A shard of the 60-record body whose run has a neighbour on each side and at least one record
 * in the shard; *inside gets the id of one. */
static void middle_shard(struct seeded *s, struct buffer *out, uint8_t inside[SERVICE_ID_SIZE])
{
	unsigned bits = record_shard_builder_bits(s->builder);
	for (size_t i = 2; i + 2 < s->count; i++) {
		uint32_t index = record_shard_of(s->records[i].service_id, bits);
		if (record_shard_of(s->records[i - 1].service_id, bits) == index &&
		    record_shard_of(s->records[i + 1].service_id, bits) != index)
			continue;
		if (record_shard_of(s->records[i - 1].service_id, bits) != index &&
		    record_shard_of(s->records[i + 1].service_id, bits) == index) {
			/* the first of a shard of at least two records */
			memcpy(inside, s->records[i + 1].service_id, SERVICE_ID_SIZE);
			buffer_reset(out);
			ck_assert_int_eq(record_shard_builder_shard(s->builder, index, out), 0);
			return;
		}
	}
	ck_abort_msg("no shard of two records in the seeded body");
}

/* The shard with the lines of one record removed and the leaves line set to first, count. */
static void drop_record(const struct buffer *shard, size_t which, long first_change, struct buffer *out)
{
	struct record_shard *parsed;
	ck_assert_int_eq(record_shard_parse(shard->data, shard->len, &parsed), 0);
	ck_assert_uint_lt(which, parsed->run_count);
	memmove(&parsed->records[which], &parsed->records[which + 1],
	        (parsed->run_count - which - 1) * sizeof(parsed->records[0]));
	parsed->run_count--;
	parsed->first = (uint64_t)((long)parsed->first + first_change);
	buffer_reset(out);
	ck_assert_int_eq(record_shard_encode(parsed, out), 0);
	record_shard_free(parsed);
}

START_TEST(test_tampering_refused)
{
	struct seeded s;
	struct buffer shard, changed;
	struct verify_record found;
	char detail[VERIFY_DETAIL_MAX];
	uint8_t inside[SERVICE_ID_SIZE];
	seeded_build(&s, MAX_SEEDED, 7);
	buffer_init(&shard);
	buffer_init(&changed);
	middle_shard(&s, &shard, inside);
	ck_assert_int_eq(
	    verify_record_proof(&s.header, shard.data, shard.len, inside, &found, detail, sizeof detail), 0);
	ck_assert_int_eq(found.present, 1);
	verify_record_clear(&found);

	/* A flipped bit anywhere. */
	for (size_t bit = 0; bit < shard.len * 8; bit++) {
		buffer_reset(&changed);
		buffer_append(&changed, shard.data, shard.len);
		changed.data[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		int rc = verify_record_proof(&s.header, changed.data, changed.len, inside, &found, detail,
		                             sizeof detail);
		ck_assert_msg(rc != 0, "bit %zu flipped and accepted", bit);
		ck_assert_int_eq(found.present, 0);
	}

	/* A record dropped from the middle of the run (the one looked up, and the leaves line
	 * recounted): the proof no longer rebuilds the root. */
	struct record_shard *parsed;
	ck_assert_int_eq(record_shard_parse(shard.data, shard.len, &parsed), 0);
	size_t middle = 1;
	while (memcmp(parsed->records[middle].service_id, inside, SERVICE_ID_SIZE) != 0)
		middle++;
	record_shard_free(parsed);
	drop_record(&shard, middle, 0, &changed);
	ck_assert_int_eq(
	    verify_record_proof(&s.header, changed.data, changed.len, inside, &found, detail, sizeof detail),
	    DIRAUTH_ERR_PROOF);
	ck_assert_ptr_nonnull(strstr(detail, "range proof"));
	/* The neighbour before dropped, the run starting one leaf later: it no longer brackets. */
	drop_record(&shard, 0, 1, &changed);
	ck_assert_int_eq(
	    verify_record_proof(&s.header, changed.data, changed.len, inside, &found, detail, sizeof detail),
	    DIRAUTH_ERR_MISMATCH);
	ck_assert_ptr_nonnull(strstr(detail, "does not bracket"));

	/* The wrong shard for the id. */
	uint8_t elsewhere[SERVICE_ID_SIZE];
	memcpy(elsewhere, inside, SERVICE_ID_SIZE);
	elsewhere[0] ^= 0x80;
	ck_assert_int_eq(
	    verify_record_proof(&s.header, shard.data, shard.len, elsewhere, &found, detail, sizeof detail),
	    DIRAUTH_ERR_MISMATCH);
	ck_assert_ptr_nonnull(strstr(detail, "wrong shard"));

	/* A shard of another snapshot: another epoch, another root. */
	struct snapshot_header other = s.header;
	other.epoch++;
	ck_assert_int_eq(
	    verify_record_proof(&other, shard.data, shard.len, inside, &found, detail, sizeof detail),
	    DIRAUTH_ERR_MISMATCH);
	ck_assert_ptr_nonnull(strstr(detail, "another snapshot"));
	other = s.header;
	other.records_root[5] ^= 1;
	ck_assert_int_eq(
	    verify_record_proof(&other, shard.data, shard.len, inside, &found, detail, sizeof detail),
	    DIRAUTH_ERR_MISMATCH);
	/* ... and with the shard's records-root line rewritten to the other root: the proof is for
	 * another root. */
	char root_hex[65], other_hex[65];
	hex_encode(s.header.records_root, 32, root_hex);
	hex_encode(other.records_root, 32, other_hex);
	buffer_reset(&changed);
	test_text_replace(shard.data, shard.len, root_hex, other_hex, &changed);
	ck_assert_int_eq(
	    verify_record_proof(&other, changed.data, changed.len, inside, &found, detail, sizeof detail),
	    DIRAUTH_ERR_PROOF);

	/* A shard of another body of the same size: its root is not the header's. */
	struct seeded t;
	seeded_build(&t, MAX_SEEDED, 500);
	struct buffer foreign;
	buffer_init(&foreign);
	shard_of_id(&t, inside, &foreign);
	ck_assert_int_eq(
	    verify_record_proof(&s.header, foreign.data, foreign.len, inside, &found, detail, sizeof detail),
	    DIRAUTH_ERR_MISMATCH);
	buffer_free(&foreign);
	seeded_free(&t);

	/* Garbage and the empty input. */
	ck_assert_int_eq(
	    verify_record_proof(&s.header, (const uint8_t *)"", 0, inside, &found, detail, sizeof detail),
	    DIRAUTH_ERR_SYNTAX);
	ck_assert_ptr_nonnull(strstr(detail, "not a record shard"));
	buffer_free(&shard);
	buffer_free(&changed);
	seeded_free(&s);
}
END_TEST

/* A record whose provider signature does not verify is refused when it is looked up, though its
 * leaf is in the tree (the authorities would not have listed it). */
START_TEST(test_bad_signature_refused)
{
	struct seeded s;
	seeded_build(&s, 3, 0);
	/* Re-sign record 1 with another key and rebuild the body over it. */
	struct test_key provider, other;
	struct registration r;
	struct buffer note;
	test_key_load(TEST_KEY_PROVIDER, &provider);
	test_key_load(TEST_KEY_OTHER, &other);
	buffer_init(&note);
	struct registration parsed;
	struct note *n = NULL;
	ck_assert_int_eq(registration_parse_note(s.records[0].note, s.records[0].note_len, &r, &n), 0);
	note_free(n);
	ck_assert_int_eq(registration_parse_note(s.records[1].note, s.records[1].note_len, &parsed, &n), 0);
	note_free(n);
	test_sign_registration(&parsed, &other, &note);
	registration_clear(&parsed);
	s.records[1].note = note.data;
	s.records[1].note_len = note.len;
	buffer_reset(&s.body);
	ck_assert_int_eq(snapshot_body_encode(NAMESPACE, EPOCH, s.records, 3, &s.body), 0);
	ck_assert_int_eq(snapshot_records_root(s.records, 3, s.header.records_root), 0);
	record_shard_builder_free(s.builder);
	ck_assert_int_eq(record_shard_builder_new(s.body.data, s.body.len, &limits, &s.builder), 0);
	struct buffer shard;
	struct verify_record found;
	char detail[VERIFY_DETAIL_MAX];
	buffer_init(&shard);
	shard_of_id(&s, s.records[1].service_id, &shard);
	ck_assert_int_eq(verify_record_proof(&s.header, shard.data, shard.len, s.records[1].service_id,
	                                     &found, detail, sizeof detail),
	                 DIRAUTH_ERR_UNKNOWN_KEY);
	/* Its neighbours are still found: only the record asked for is signature-checked. */
	ck_assert_int_eq(verify_record_proof(&s.header, shard.data, shard.len, s.records[0].service_id,
	                                     &found, detail, sizeof detail),
	                 0);
	verify_record_clear(&found);
	/* Expired at the header's valid-after. */
	s.header.valid_after = r.expires;
	ck_assert_int_eq(verify_record_proof(&s.header, shard.data, shard.len, s.records[0].service_id,
	                                     &found, detail, sizeof detail),
	                 DIRAUTH_ERR_STALE);
	registration_clear(&r);
	buffer_free(&shard);
	buffer_free(&note);
	test_key_free(&provider);
	test_key_free(&other);
	seeded_free(&s);
}
END_TEST

/* The method-2 example of snapshot.md: its one shard as a vector, a present record with both
 * health entries, absent services with their revocations, and the section checks. */
START_TEST(test_method_2_vector)
{
	size_t header_len, body_len;
	uint8_t *header_text = test_read_file(test_source_path(M2_DIR "header.txt"), &header_len);
	uint8_t *body = test_read_file(test_source_path(M2_DIR "body.txt"), &body_len);
	struct snapshot_header header;
	ck_assert_int_eq(snapshot_header_parse(header_text, header_len, &header), 0);
	struct record_shard_builder *builder;
	ck_assert_int_eq(record_shard_builder_new(body, body_len, &limits, &builder), 0);
	ck_assert_uint_eq(record_shard_builder_bits(builder), 0);
	struct buffer shard;
	buffer_init(&shard);
	ck_assert_int_eq(record_shard_builder_shard(builder, 0, &shard), 0);
	test_vector_expect(SHARD_DIR "header.txt", header_text, header_len);
	test_vector_expect(SHARD_DIR "shard-0.txt", shard.data, shard.len);

	struct snapshot_body *parsed;
	ck_assert_int_eq(snapshot_body_parse_sections(body, body_len, &limits, &parsed), 0);
	char detail[VERIFY_DETAIL_MAX];
	struct verify_record found;
	/* The record with health: registration 1's, whose two health entries are the body's. */
	const uint8_t *with_health = parsed->health[0].service_id;
	ck_assert_int_eq(
	    verify_record_proof(&header, shard.data, shard.len, with_health, &found, detail, sizeof detail),
	    0);
	ck_assert_int_eq(found.present, 1);
	ck_assert_uint_eq(found.health_count, 2);
	ck_assert_int_eq(found.health[0].health_class, HEALTH_HEALTHY);
	ck_assert_int_eq(found.health[0].signer, HEALTH_SIGNER_ENDPOINT);
	ck_assert_int_eq(found.health[1].health_class, HEALTH_DRAINING);
	ck_assert_int_eq(found.health[1].has_capacity, 1);
	ck_assert_int_eq(found.health[1].capacity, CAPACITY_LOW);
	verify_record_clear(&found);
	/* The revoked services are absent, each with its revocation. */
	for (size_t i = 0; i < parsed->revocation_count; i++) {
		ck_assert_int_eq(verify_record_proof(&header, shard.data, shard.len,
		                                     parsed->revocations[i].service_id, &found, detail,
		                                     sizeof detail),
		                 0);
		ck_assert_int_eq(found.present, 0);
		ck_assert_uint_eq(found.revocation_count, 1);
		ck_assert_int_eq(found.revocations[0].has_endpoint, parsed->revocations[i].has_endpoint);
		ck_assert_uint_eq(found.revocations[0].since, EPOCH - 1);
		verify_record_clear(&found);
	}

	/* Sections under method 1 are refused. */
	struct snapshot_header method_1 = header;
	method_1.consensus_method = 1;
	ck_assert_int_eq(
	    verify_record_proof(&method_1, shard.data, shard.len, with_health, &found, detail, sizeof detail),
	    DIRAUTH_ERR_SYNTAX);
	/* Health past its freshness at a later valid-after. */
	struct snapshot_header later = header;
	later.valid_after += 3 * (header.fresh_until - header.valid_after);
	later.fresh_until = later.valid_after + (header.fresh_until - header.valid_after);
	ck_assert_int_eq(
	    verify_record_proof(&later, shard.data, shard.len, with_health, &found, detail, sizeof detail),
	    DIRAUTH_ERR_STALE);
	ck_assert_ptr_nonnull(strstr(detail, "health"));
	/* A health statement's note swapped for the other's: refused. */
	struct buffer changed;
	buffer_init(&changed);
	test_text_replace(shard.data, shard.len, "class healthy", "class degraded", &changed);
	ck_assert_int_ne(verify_record_proof(&header, changed.data, changed.len, with_health, &found, detail,
	                                     sizeof detail),
	                 0);

	buffer_free(&changed);
	snapshot_body_free(parsed);
	buffer_free(&shard);
	record_shard_builder_free(builder);
	free(header_text);
	free(body);
}
END_TEST

/* A body of 13 example registrations (4 shards) and its shard 1, whose run has a neighbour on
 * each side and a proof: the vector a reader checks by hand (record-shard.md, "Example"). */
START_TEST(test_seeded_vector)
{
	struct seeded s;
	struct buffer text, shard;
	char detail[VERIFY_DETAIL_MAX];
	seeded_build(&s, 13, 0);
	buffer_init(&text);
	buffer_init(&shard);
	ck_assert_int_eq(snapshot_header_encode(&s.header, &text), 0);
	test_vector_expect(SHARD_DIR "seeded-header.txt", text.data, text.len);
	test_vector_expect(SHARD_DIR "seeded-body.txt", s.body.data, s.body.len);
	ck_assert_uint_eq(record_shard_builder_bits(s.builder), 2);
	ck_assert_int_eq(record_shard_builder_shard(s.builder, 1, &shard), 0);
	test_vector_expect(SHARD_DIR "seeded-shard-1.txt", shard.data, shard.len);
	ck_assert_int_eq(verify_record_shard(&s.header, shard.data, shard.len, 1, detail, sizeof detail), 0);
	struct record_shard *parsed;
	ck_assert_int_eq(record_shard_parse(shard.data, shard.len, &parsed), 0);
	ck_assert_uint_gt(parsed->first, 0);
	ck_assert_uint_lt(parsed->first + parsed->run_count, 13);
	ck_assert_uint_gt(parsed->proof_count, 0);
	record_shard_free(parsed);
	buffer_free(&text);
	buffer_free(&shard);
	seeded_free(&s);
}
END_TEST

/* The parser's bounds: a shard over the size bound, a run over its bound, a proof of too many
 * nodes, trailing bytes. */
START_TEST(test_parser_bounds)
{
	struct seeded s;
	struct buffer shard, changed;
	struct record_shard *parsed;
	seeded_build(&s, 5, 3);
	buffer_init(&shard);
	buffer_init(&changed);
	ck_assert_int_eq(record_shard_builder_shard(s.builder, 0, &shard), 0);
	ck_assert_int_eq(record_shard_parse(shard.data, shard.len, &parsed), 0);
	record_shard_free(parsed);
	buffer_append(&changed, shard.data, shard.len);
	buffer_append_string(&changed, "x\n");
	ck_assert_int_eq(record_shard_parse(changed.data, changed.len, &parsed), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(record_shard_parse(shard.data, RECORD_SHARD_MAX_BYTES + 1, &parsed),
	                 DIRAUTH_ERR_BOUNDS);
	buffer_reset(&changed);
	test_text_replace(shard.data, shard.len, "\nproof ", "\nproof 129\nx", &changed);
	ck_assert_int_eq(record_shard_parse(changed.data, changed.len, &parsed), DIRAUTH_ERR_BOUNDS);
	buffer_reset(&changed);
	test_text_replace(shard.data, shard.len, "\nshard 1 ", "\nshard 2 ", &changed);
	ck_assert_int_eq(record_shard_parse(changed.data, changed.len, &parsed), DIRAUTH_ERR_SYNTAX);
	buffer_reset(&changed);
	test_text_replace(shard.data, shard.len, "\nrecords 5\n", "\nrecords 50000000000\n", &changed);
	ck_assert_int_eq(record_shard_parse(changed.data, changed.len, &parsed), DIRAUTH_ERR_BOUNDS);
	buffer_free(&shard);
	buffer_free(&changed);
	seeded_free(&s);
}
END_TEST

static Suite *record_shard_suite(void)
{
	Suite *s = suite_create("record_shard");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_every_record_found);
	tcase_add_test(tc, test_tampering_refused);
	tcase_add_test(tc, test_bad_signature_refused);
	tcase_add_test(tc, test_method_2_vector);
	tcase_add_test(tc, test_seeded_vector);
	tcase_add_test(tc, test_parser_bounds);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *runner = srunner_create(record_shard_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
