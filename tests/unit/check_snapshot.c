/*
 * check_snapshot.c: snapshot header and body codecs and snapshot_body_verify(), with the vectors
 * under tests/vectors/documents/snapshot/ (rebuilt here and compared byte for byte).
 *
 * The example snapshot holds three example registrations (indexes 1..3, namespace example-net,
 * signed by provider.example), epoch 29453762 of 60-second epochs, and its header is co-signed
 * by authority-1.example and authority-2.example.
 *
 * Then consensus method 2's body sections (health and revocations): the example of
 * tests/vectors/documents/snapshot-method-2/, its round trip, the method-1 parser's refusal,
 * every refusal of the sections parser, and snapshot_body_verify_sections() with each check it
 * makes of a published class and a listed revocation.
 */
#include "invalid_vectors.h"
#include "lifecycle_fixture.h"
#include "crypto/crypto.h"
#include "schema/encoding.h"
#include "base/error.h"
#include "schema/snapshot.h"
#include "test_keys.h"
#include "test_support.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VECTOR_DIR  "tests/vectors/documents/snapshot/"
#define NAMESPACE   "example-net"
#define EPOCH       29453762ull
#define VALID_AFTER (EPOCH * 60)

/* Signed registration notes, kept alive for the records that borrow them. */
struct example_records {
	struct buffer notes[4];
	struct snapshot_record records[4];
	size_t count;
};

static int record_compare(const void *a, const void *b)
{
	return memcmp(((const struct snapshot_record *)a)->service_id,
	              ((const struct snapshot_record *)b)->service_id, SERVICE_ID_SIZE);
}

/* Adds the example registration index, after change (may be NULL) edits it, signed by signer. */
static void add_record(struct example_records *set, unsigned index, const char *namespace_name,
                       void (*change)(struct registration *), unsigned signer)
{
	struct test_key provider, signing;
	struct registration r;
	test_key_load(TEST_KEY_PROVIDER, &provider);
	test_key_load(signer, &signing);
	test_example_registration(index, namespace_name, &provider, &r);
	if (change)
		change(&r);
	size_t i = set->count++;
	buffer_init(&set->notes[i]);
	test_sign_registration(&r, &signing, &set->notes[i]);
	memcpy(set->records[i].service_id, r.service_id, SERVICE_ID_SIZE);
	registration_clear(&r);
	test_key_free(&provider);
	test_key_free(&signing);
}

static void finish_records(struct example_records *set)
{
	for (size_t i = 0; i < set->count; i++) {
		set->records[i].note = set->notes[i].data;
		set->records[i].note_len = set->notes[i].len;
	}
	qsort(set->records, set->count, sizeof(set->records[0]), record_compare);
}

static void free_records(struct example_records *set)
{
	for (size_t i = 0; i < set->count; i++)
		buffer_free(&set->notes[i]);
}

static void example_records(struct example_records *set)
{
	memset(set, 0, sizeof(*set));
	for (unsigned i = 1; i <= 3; i++)
		add_record(set, i, NAMESPACE, NULL, TEST_KEY_PROVIDER);
	finish_records(set);
}

/* A header that commits to body bytes and records as they are. */
static void header_for(const uint8_t *body, size_t body_len, const struct snapshot_record *records,
                       size_t count, struct snapshot_header *h)
{
	memset(h, 0, sizeof(*h));
	strcpy(h->namespace_name, NAMESPACE);
	strcpy(h->origin, "dirauth.example/example-net");
	h->epoch = EPOCH;
	h->valid_after = VALID_AFTER;
	h->fresh_until = VALID_AFTER + 120;
	h->valid_until = VALID_AFTER + 3600;
	h->record_count = count;
	ck_assert_int_eq(snapshot_records_root(records, count, h->records_root), 0);
	h->body_size = body_len;
	ck_assert_int_eq(crypto_sha256(body, body_len, h->body_sha256), 0);
	h->consensus_method = SNAPSHOT_CONSENSUS_METHOD;
}

static void example_snapshot(struct example_records *set, struct buffer *body, struct snapshot_header *h)
{
	example_records(set);
	ck_assert_int_eq(snapshot_body_encode(NAMESPACE, EPOCH, set->records, set->count, body), 0);
	header_for(body->data, body->len, set->records, set->count, h);
}

START_TEST(test_header_round_trip_and_vectors)
{
	struct example_records set;
	struct buffer body, text, note, again;
	struct snapshot_header h, parsed;
	buffer_init(&body);
	buffer_init(&text);
	buffer_init(&note);
	buffer_init(&again);
	example_snapshot(&set, &body, &h);
	ck_assert_int_eq(snapshot_header_encode(&h, &text), 0);
	struct test_key authorities[2];
	test_key_load(TEST_KEY_AUTHORITY_1, &authorities[0]);
	test_key_load(TEST_KEY_AUTHORITY_2, &authorities[1]);
	test_key_sign_note(authorities, 2, text.data, text.len, &note);
	test_vector_expect(VECTOR_DIR "header.txt", text.data, text.len);
	test_vector_expect(VECTOR_DIR "header.note", note.data, note.len);
	test_vector_expect(VECTOR_DIR "body.txt", body.data, body.len);

	ck_assert_int_eq(snapshot_header_parse(text.data, text.len, &parsed), 0);
	ck_assert_int_eq(memcmp(&parsed, &h, sizeof(h)), 0);
	ck_assert_int_eq(snapshot_header_encode(&parsed, &again), 0);
	ck_assert_uint_eq(again.len, text.len);
	ck_assert_mem_eq(again.data, text.data, text.len);

	/* The signed vector verifies with both authorities, and its body vector against it. */
	size_t len, body_len;
	uint8_t *file = test_read_file(test_source_path(VECTOR_DIR "header.note"), &len);
	uint8_t *body_file = test_read_file(test_source_path(VECTOR_DIR "body.txt"), &body_len);
	struct note *header_note = NULL;
	ck_assert_int_eq(note_parse(file, len, &header_note), 0);
	struct note_verifier verifiers[2] = {authorities[0].verifier, authorities[1].verifier};
	ck_assert_int_eq(note_verify_threshold(header_note, verifiers, 2, 2), 0);
	ck_assert_int_eq(snapshot_header_parse(header_note->text, header_note->text_len, &parsed), 0);
	ck_assert_int_eq(snapshot_body_verify(&parsed, body_file, body_len, 1000), 0);

	/* The digest used by the next header's previous line. */
	uint8_t digest[32], expected[32];
	ck_assert_int_eq(snapshot_header_digest(header_note->text, header_note->text_len, digest), 0);
	ck_assert_int_eq(crypto_sha256(text.data, text.len, expected), 0);
	ck_assert_mem_eq(digest, expected, 32);

	note_free(header_note);
	free(file);
	free(body_file);
	test_key_free(&authorities[0]);
	test_key_free(&authorities[1]);
	free_records(&set);
	buffer_free(&body);
	buffer_free(&text);
	buffer_free(&note);
	buffer_free(&again);
}
END_TEST

static const struct invalid_case invalid_headers[] = {
    {"double-space", "epoch 29453762", "epoch  29453762", DIRAUTH_ERR_SYNTAX},
    {"wrong-version", "snapshot v1", "snapshot v2", DIRAUTH_ERR_SYNTAX},
    {"bad-namespace", "namespace example-net", "namespace -example", DIRAUTH_ERR_SYNTAX},
    {"origin-with-plus", "origin dirauth.example/", "origin dirauth+example/", DIRAUTH_ERR_SYNTAX},
    {"origin-with-space", "origin dirauth.example/", "origin dirauth example/", DIRAUTH_ERR_SYNTAX},
    {"bad-hex", "previous 0", "previous g", DIRAUTH_ERR_SYNTAX},
    {"short-hex", "previous 0", "previous ", DIRAUTH_ERR_SYNTAX},
    {"leading-zero", "epoch 2", "epoch 02", DIRAUTH_ERR_SYNTAX},
    {"fresh-not-after-valid", "fresh-until 1767225840", "fresh-until 1767225720", DIRAUTH_ERR_SYNTAX},
    {"fresh-after-valid-until", "valid-until 1767229320", "valid-until 1767225839", DIRAUTH_ERR_SYNTAX},
    {"consensus-method-zero", "consensus-method 1", "consensus-method 0", DIRAUTH_ERR_SYNTAX},
    {"missing-line", "records 3\n", "", DIRAUTH_ERR_SYNTAX},
    {"unknown-line", "consensus-method 1\n", "consensus-method 1\nextra 1\n", DIRAUTH_ERR_SYNTAX},
    {"trailing-bytes", "consensus-method 1\n", "consensus-method 1\n ", DIRAUTH_ERR_SYNTAX},
    {"overlong-line", "origin dirauth.example/example-net",
     "origin "
     "o123456789o123456789o123456789o123456789o123456789o123456789o123456789o123456789o123456789o123456789"
     "o123456789o123456789o123456789o123456789o123456789o123456789o123456789o123456789o123456789o123456789"
     "o123456789o123456789o123456789o123456789o123456789o123456789o123456789o123456789o123456789o123456789"
     "o123456789o123456789o123456789o123456789o123456789o123456789o123456789o123456789o123456789o123456789",
     DIRAUTH_ERR_BOUNDS},
};

static int parse_header(const uint8_t *text, size_t len)
{
	struct snapshot_header parsed;
	return snapshot_header_parse(text, len, &parsed);
}

START_TEST(test_header_invalid_vectors)
{
	struct example_records set;
	struct buffer body, text;
	struct snapshot_header h, parsed;
	buffer_init(&body);
	buffer_init(&text);
	example_snapshot(&set, &body, &h);
	ck_assert_int_eq(snapshot_header_encode(&h, &text), 0);
	invalid_vectors_check(VECTOR_DIR "invalid-header/", &text, invalid_headers,
	                      sizeof(invalid_headers) / sizeof(invalid_headers[0]), parse_header);
	uint8_t *big = calloc(SNAPSHOT_HEADER_MAX_BYTES + 1, 1);
	ck_assert_ptr_nonnull(big);
	ck_assert_int_eq(snapshot_header_parse(big, SNAPSHOT_HEADER_MAX_BYTES + 1, &parsed),
	                 DIRAUTH_ERR_BOUNDS);
	free(big);
	free_records(&set);
	buffer_free(&body);
	buffer_free(&text);
}
END_TEST

START_TEST(test_header_encode_refusals)
{
	struct snapshot_header valid, h;
	struct buffer out;
	buffer_init(&out);
	uint8_t body[1] = {0};
	header_for(body, 0, NULL, 0, &valid);
#define EXPECT_ENCODE(change)                                                                                \
	do {                                                                                                 \
		h = valid;                                                                                   \
		change;                                                                                      \
		ck_assert_int_eq(snapshot_header_encode(&h, &out), DIRAUTH_ERR_SYNTAX);                      \
		ck_assert_uint_eq(out.len, 0);                                                               \
	} while (0)
	EXPECT_ENCODE(h.namespace_name[0] = 0);
	EXPECT_ENCODE(strcpy(h.namespace_name, "a_b"));
	EXPECT_ENCODE(memset(h.namespace_name, 'a', sizeof(h.namespace_name)));
	EXPECT_ENCODE(h.origin[0] = 0);
	EXPECT_ENCODE(strcpy(h.origin, "a b"));
	EXPECT_ENCODE(strcpy(h.origin, "a+b"));
	EXPECT_ENCODE(strcpy(h.origin, "a\tb"));
	EXPECT_ENCODE(strcpy(h.origin, "caf\xc3\xa9"));
	EXPECT_ENCODE(memset(h.origin, 'a', sizeof(h.origin)));
	EXPECT_ENCODE(h.fresh_until = h.valid_after);
	EXPECT_ENCODE(h.valid_until = h.fresh_until - 1);
	EXPECT_ENCODE(h.consensus_method = 0);
#undef EXPECT_ENCODE
	/* fresh-until may equal valid-until; the longest origin fits. */
	h = valid;
	h.valid_until = h.fresh_until;
	memset(h.origin, '~', SNAPSHOT_ORIGIN_MAX);
	h.origin[SNAPSHOT_ORIGIN_MAX] = 0;
	ck_assert_int_eq(snapshot_header_encode(&h, &out), 0);
	struct snapshot_header parsed;
	ck_assert_int_eq(snapshot_header_parse(out.data, out.len, &parsed), 0);
	ck_assert_str_eq(parsed.origin, h.origin);
	buffer_free(&out);
}
END_TEST

START_TEST(test_body_round_trip)
{
	struct example_records set;
	struct buffer body, again;
	struct snapshot_header h;
	buffer_init(&body);
	buffer_init(&again);
	example_snapshot(&set, &body, &h);
	struct snapshot_body *parsed = NULL;
	ck_assert_int_eq(snapshot_body_parse(body.data, body.len, 3, &parsed), 0);
	ck_assert_str_eq(parsed->namespace_name, NAMESPACE);
	ck_assert_uint_eq(parsed->epoch, EPOCH);
	ck_assert_uint_eq(parsed->record_count, 3);
	for (size_t i = 0; i < 3; i++) {
		ck_assert_mem_eq(parsed->records[i].service_id, set.records[i].service_id, SERVICE_ID_SIZE);
		ck_assert_uint_eq(parsed->records[i].note_len, set.records[i].note_len);
		ck_assert_mem_eq(parsed->records[i].note, set.records[i].note, set.records[i].note_len);
		/* borrowed from the parsed buffer */
		ck_assert(parsed->records[i].note > body.data &&
		          parsed->records[i].note < body.data + body.len);
	}
	ck_assert_int_eq(snapshot_body_encode(parsed->namespace_name, parsed->epoch, parsed->records,
	                                      parsed->record_count, &again),
	                 0);
	ck_assert_uint_eq(again.len, body.len);
	ck_assert_mem_eq(again.data, body.data, body.len);
	snapshot_body_free(parsed);
	snapshot_body_free(NULL);

	/* An empty snapshot: no records, the empty tree's root. */
	buffer_reset(&again);
	ck_assert_int_eq(snapshot_body_encode(NAMESPACE, 7, NULL, 0, &again), 0);
	ck_assert_str_eq((const char *)again.data,
	                 "dirauth snapshot-body v1\nnamespace example-net\nepoch 7\nrecords 0\n");
	ck_assert_int_eq(snapshot_body_parse(again.data, again.len, 0, &parsed), 0);
	ck_assert_uint_eq(parsed->record_count, 0);
	snapshot_body_free(parsed);
	merkle_hash root;
	uint8_t empty[32];
	ck_assert_int_eq(snapshot_records_root(NULL, 0, root), 0);
	ck_assert_int_eq(crypto_sha256(NULL, 0, empty), 0);
	ck_assert_mem_eq(root, empty, 32);

	/* The root is RFC 6962 over the notes. */
	merkle_hash leaves[3];
	for (size_t i = 0; i < 3; i++)
		ck_assert_int_eq(merkle_leaf_hash(set.records[i].note, set.records[i].note_len, leaves[i]),
		                 0);
	merkle_hash expected;
	ck_assert_int_eq(merkle_root((const merkle_hash *)leaves, 3, expected), 0);
	ck_assert_mem_eq(h.records_root, expected, 32);

	free_records(&set);
	buffer_free(&body);
	buffer_free(&again);
}
END_TEST

START_TEST(test_body_encode_refusals)
{
	struct example_records set;
	struct buffer out;
	buffer_init(&out);
	example_records(&set);
	struct snapshot_record records[3];
	memcpy(records, set.records, sizeof(records));
	records[1] = set.records[2];
	records[2] = set.records[1];
	ck_assert_int_eq(snapshot_body_encode(NAMESPACE, EPOCH, records, 3, &out), DIRAUTH_ERR_SYNTAX);
	records[1] = records[0];
	ck_assert_int_eq(snapshot_body_encode(NAMESPACE, EPOCH, records, 2, &out), DIRAUTH_ERR_SYNTAX);
	memcpy(records, set.records, sizeof(records));
	records[0].note = NULL;
	ck_assert_int_eq(snapshot_body_encode(NAMESPACE, EPOCH, records, 3, &out), DIRAUTH_ERR_SYNTAX);
	records[0] = set.records[0];
	records[0].note_len = 0;
	ck_assert_int_eq(snapshot_body_encode(NAMESPACE, EPOCH, records, 3, &out), DIRAUTH_ERR_SYNTAX);
	records[0].note_len = REGISTRATION_MAX_BYTES + 1;
	ck_assert_int_eq(snapshot_body_encode(NAMESPACE, EPOCH, records, 3, &out), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(snapshot_body_encode("Bad", EPOCH, set.records, 3, &out), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(snapshot_body_encode(NULL, EPOCH, set.records, 3, &out), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(snapshot_body_encode(NAMESPACE, EPOCH, NULL, 3, &out), DIRAUTH_ERR_SYNTAX);
	ck_assert_uint_eq(out.len, 0);
	free_records(&set);
	buffer_free(&out);
}
END_TEST

/* The body of the example with the record lines and notes laid out by hand: used to build bodies
 * the encoder refuses to write. */
static void body_by_hand(const char *records_line, const struct snapshot_record *records, size_t count,
                         const char *tail, struct buffer *out)
{
	ck_assert_int_eq(buffer_appendf(out, "dirauth snapshot-body v1\nnamespace %s\nepoch %llu\n%s\n",
	                                NAMESPACE, EPOCH, records_line),
	                 0);
	for (size_t i = 0; i < count; i++) {
		char hex[65];
		hex_encode(records[i].service_id, 32, hex);
		ck_assert_int_eq(buffer_appendf(out, "record %s %zu\n", hex, records[i].note_len), 0);
		ck_assert_int_eq(buffer_append(out, records[i].note, records[i].note_len), 0);
	}
	ck_assert_int_eq(buffer_append_string(out, tail), 0);
}

struct invalid_body {
	const char *name;
	int expected;
};

static const struct invalid_body invalid_bodies[] = {
    {"unsorted-records", DIRAUTH_ERR_SYNTAX},   {"duplicate-record", DIRAUTH_ERR_SYNTAX},
    {"count-too-high", DIRAUTH_ERR_SYNTAX},     {"count-too-low", DIRAUTH_ERR_SYNTAX},
    {"huge-count", DIRAUTH_ERR_SYNTAX},         {"length-past-end", DIRAUTH_ERR_SYNTAX},
    {"length-zero", DIRAUTH_ERR_SYNTAX},        {"length-leading-zero", DIRAUTH_ERR_SYNTAX},
    {"length-too-big", DIRAUTH_ERR_BOUNDS},     {"bad-hex", DIRAUTH_ERR_SYNTAX},
    {"trailing-bytes", DIRAUTH_ERR_SYNTAX},     {"wrong-version", DIRAUTH_ERR_SYNTAX},
    {"bad-namespace", DIRAUTH_ERR_SYNTAX},      {"missing-epoch", DIRAUTH_ERR_SYNTAX},
    {"extra-record-field", DIRAUTH_ERR_SYNTAX}, {"more-than-max-records", DIRAUTH_ERR_BOUNDS},
};

static void build_invalid_body(const char *name, const struct example_records *set,
                               const struct buffer *valid, struct buffer *out)
{
	const struct snapshot_record *r = set->records;
	if (strcmp(name, "unsorted-records") == 0) {
		struct snapshot_record swapped[3] = {r[1], r[0], r[2]};
		body_by_hand("records 3", swapped, 3, "", out);
	} else if (strcmp(name, "duplicate-record") == 0) {
		struct snapshot_record twice[3] = {r[0], r[1], r[1]};
		body_by_hand("records 3", twice, 3, "", out);
	} else if (strcmp(name, "count-too-high") == 0) {
		body_by_hand("records 4", r, 3, "", out);
	} else if (strcmp(name, "count-too-low") == 0) {
		body_by_hand("records 2", r, 3, "", out);
	} else if (strcmp(name, "huge-count") == 0) {
		body_by_hand("records 999999", r, 3, "", out);
	} else if (strcmp(name, "length-past-end") == 0) {
		struct snapshot_record cut[3] = {r[0], r[1], r[2]};
		body_by_hand("records 3", cut, 3, "", out);
		out->len -= 1; /* the last note loses its final byte */
		out->data[out->len] = 0;
	} else if (strcmp(name, "length-zero") == 0) {
		body_by_hand("records 1", r, 0, "", out);
		char hex[65];
		hex_encode(r[0].service_id, 32, hex);
		ck_assert_int_eq(buffer_appendf(out, "record %s 0\n", hex), 0);
	} else if (strcmp(name, "length-leading-zero") == 0) {
		char from[32], to[32];
		snprintf(from, sizeof(from), " %zu\n", r[0].note_len);
		snprintf(to, sizeof(to), " 0%zu\n", r[0].note_len);
		test_text_replace(valid->data, valid->len, from, to, out);
	} else if (strcmp(name, "length-too-big") == 0) {
		body_by_hand("records 1", r, 0, "", out);
		char hex[65];
		hex_encode(r[0].service_id, 32, hex);
		ck_assert_int_eq(buffer_appendf(out, "record %s %d\n", hex, REGISTRATION_MAX_BYTES + 1), 0);
		for (int i = 0; i <= REGISTRATION_MAX_BYTES; i++)
			ck_assert_int_eq(buffer_append_string(out, "x"), 0);
	} else if (strcmp(name, "bad-hex") == 0) {
		char hex[65];
		hex_encode(r[0].service_id, 32, hex);
		char from[80], to[80];
		snprintf(from, sizeof(from), "record %s", hex);
		snprintf(to, sizeof(to), "record %.63s", hex);
		test_text_replace(valid->data, valid->len, from, to, out);
	} else if (strcmp(name, "trailing-bytes") == 0) {
		body_by_hand("records 3", r, 3, "\n", out);
	} else if (strcmp(name, "wrong-version") == 0) {
		test_text_replace(valid->data, valid->len, "snapshot-body v1", "snapshot-body v0", out);
	} else if (strcmp(name, "bad-namespace") == 0) {
		test_text_replace(valid->data, valid->len, "namespace example-net", "namespace example--",
		                  out);
	} else if (strcmp(name, "missing-epoch") == 0) {
		test_text_replace(valid->data, valid->len, "epoch 29453762\n", "", out);
	} else if (strcmp(name, "extra-record-field") == 0) {
		char from[32], to[32];
		snprintf(from, sizeof(from), " %zu\n", r[0].note_len);
		snprintf(to, sizeof(to), " %zu x\n", r[0].note_len);
		test_text_replace(valid->data, valid->len, from, to, out);
	} else if (strcmp(name, "more-than-max-records") == 0) {
		/* valid in itself; the test reads it with max_records 2 */
		ck_assert_int_eq(buffer_append(out, valid->data, valid->len), 0);
	} else {
		ck_abort_msg("no variant %s", name);
	}
}

START_TEST(test_body_invalid_vectors)
{
	struct example_records set;
	struct buffer body;
	struct snapshot_header h;
	buffer_init(&body);
	example_snapshot(&set, &body, &h);
	for (size_t i = 0; i < sizeof(invalid_bodies) / sizeof(invalid_bodies[0]); i++) {
		const struct invalid_body *c = &invalid_bodies[i];
		char relative[256];
		snprintf(relative, sizeof(relative), VECTOR_DIR "invalid-body/%s.txt", c->name);
		struct buffer variant;
		buffer_init(&variant);
		build_invalid_body(c->name, &set, &body, &variant);
		test_vector_expect(relative, variant.data, variant.len);
		size_t len;
		uint8_t *file = test_read_file(test_source_path(relative), &len);
		struct snapshot_body placeholder;
		struct snapshot_body *parsed = &placeholder; /* must come back NULL */
		size_t max_records = strcmp(c->name, "more-than-max-records") == 0 ? 2 : 1000000;
		int rc = snapshot_body_parse(file, len, max_records, &parsed);
		ck_assert_msg(rc == c->expected, "%s: got %d, expected %d", c->name, rc, c->expected);
		ck_assert_ptr_null(parsed);
		/* With a header committing to exactly these bytes, verification refuses them too. */
		h.body_size = len;
		ck_assert_int_eq(crypto_sha256(file, len, h.body_sha256), 0);
		rc = snapshot_body_verify(&h, file, len, max_records);
		ck_assert_msg(rc == c->expected, "verify %s: got %d, expected %d", c->name, rc, c->expected);
		free(file);
		buffer_free(&variant);
	}
	free_records(&set);
	buffer_free(&body);
}
END_TEST

START_TEST(test_verify_commitments)
{
	struct example_records set;
	struct buffer body;
	struct snapshot_header valid, h;
	buffer_init(&body);
	example_snapshot(&set, &body, &valid);
	ck_assert_int_eq(snapshot_body_verify(&valid, body.data, body.len, 3), 0);
	ck_assert_int_eq(snapshot_body_verify(&valid, body.data, body.len, 2), DIRAUTH_ERR_BOUNDS);

	h = valid;
	h.body_sha256[5] ^= 1;
	ck_assert_int_eq(snapshot_body_verify(&h, body.data, body.len, 100), DIRAUTH_ERR_MISMATCH);
	h = valid;
	h.body_size++;
	ck_assert_int_eq(snapshot_body_verify(&h, body.data, body.len, 100), DIRAUTH_ERR_MISMATCH);
	h = valid;
	h.records_root[0] ^= 0x80;
	ck_assert_int_eq(snapshot_body_verify(&h, body.data, body.len, 100), DIRAUTH_ERR_MISMATCH);
	h = valid;
	h.record_count = 2;
	ck_assert_int_eq(snapshot_body_verify(&h, body.data, body.len, 100), DIRAUTH_ERR_MISMATCH);
	h = valid;
	h.record_count = 4;
	ck_assert_int_eq(snapshot_body_verify(&h, body.data, body.len, 100), DIRAUTH_ERR_MISMATCH);
	h = valid;
	h.epoch++;
	ck_assert_int_eq(snapshot_body_verify(&h, body.data, body.len, 100), DIRAUTH_ERR_MISMATCH);
	h = valid;
	strcpy(h.namespace_name, "other-net");
	ck_assert_int_eq(snapshot_body_verify(&h, body.data, body.len, 100), DIRAUTH_ERR_MISMATCH);
	/* A truncated body fails on its size before anything is parsed. */
	ck_assert_int_eq(snapshot_body_verify(&valid, body.data, body.len - 1, 100), DIRAUTH_ERR_MISMATCH);

	free_records(&set);
	buffer_free(&body);
}
END_TEST

static void expire_early(struct registration *r)
{
	r->issued_at = VALID_AFTER - 7200;
	r->expires = VALID_AFTER - 1;
}

static void expire_at_valid_after(struct registration *r)
{
	r->issued_at = VALID_AFTER - 7200;
	r->expires = VALID_AFTER;
}

static void other_namespace(struct registration *r)
{
	strcpy(r->namespace_name, "other-net");
}

/* Builds a body of examples 1 and 2 plus one special record 3, with a header that commits to it
 * exactly, and returns snapshot_body_verify's answer. */
static int verify_with_third(void (*change)(struct registration *), unsigned signer, int corrupt_signature,
                             int wrong_service_id)
{
	struct example_records set;
	memset(&set, 0, sizeof(set));
	add_record(&set, 1, NAMESPACE, NULL, TEST_KEY_PROVIDER);
	add_record(&set, 2, NAMESPACE, NULL, TEST_KEY_PROVIDER);
	add_record(&set, 3, change == other_namespace ? "other-net" : NAMESPACE,
	           change == other_namespace ? NULL : change, signer);
	if (corrupt_signature) {
		/* The base64 of the signature ends the note: change one of its characters. */
		struct buffer *note = &set.notes[2];
		size_t at = note->len - 10;
		note->data[at] = note->data[at] == 'A' ? 'B' : 'A';
	}
	if (wrong_service_id)
		set.records[2].service_id[31] ^= 1;
	finish_records(&set);
	struct buffer body;
	buffer_init(&body);
	ck_assert_int_eq(snapshot_body_encode(NAMESPACE, EPOCH, set.records, set.count, &body), 0);
	struct snapshot_header h;
	header_for(body.data, body.len, set.records, set.count, &h);
	int rc = snapshot_body_verify(&h, body.data, body.len, 100);
	free_records(&set);
	buffer_free(&body);
	return rc;
}

START_TEST(test_verify_records)
{
	ck_assert_int_eq(verify_with_third(NULL, TEST_KEY_PROVIDER, 0, 0), 0);
	ck_assert_int_eq(verify_with_third(NULL, TEST_KEY_PROVIDER, 1, 0), DIRAUTH_ERR_SIGNATURE);
	ck_assert_int_eq(verify_with_third(NULL, TEST_KEY_OTHER, 0, 0), DIRAUTH_ERR_UNKNOWN_KEY);
	ck_assert_int_eq(verify_with_third(NULL, TEST_KEY_AUTHORITY_1, 0, 0), DIRAUTH_ERR_UNKNOWN_KEY);
	ck_assert_int_eq(verify_with_third(other_namespace, TEST_KEY_PROVIDER, 0, 0), DIRAUTH_ERR_MISMATCH);
	ck_assert_int_eq(verify_with_third(NULL, TEST_KEY_PROVIDER, 0, 1), DIRAUTH_ERR_MISMATCH);
	ck_assert_int_eq(verify_with_third(expire_early, TEST_KEY_PROVIDER, 0, 0), DIRAUTH_ERR_STALE);
	/* Expiring exactly at valid-after is expired, as the authority judges when it builds a body. */
	ck_assert_int_eq(verify_with_third(expire_at_valid_after, TEST_KEY_PROVIDER, 0, 0),
	                 DIRAUTH_ERR_STALE);
}
END_TEST

START_TEST(test_verify_record_not_a_registration)
{
	/* A record whose bytes are a signed note but not a registration. */
	struct test_key provider;
	test_key_load(TEST_KEY_PROVIDER, &provider);
	struct buffer note, body;
	buffer_init(&note);
	buffer_init(&body);
	const char *text = "not a registration\n";
	test_key_sign_note(&provider, 1, (const uint8_t *)text, strlen(text), &note);
	struct snapshot_record record;
	memset(&record, 0, sizeof(record));
	record.note = note.data;
	record.note_len = note.len;
	ck_assert_int_eq(snapshot_body_encode(NAMESPACE, EPOCH, &record, 1, &body), 0);
	struct snapshot_header h;
	header_for(body.data, body.len, &record, 1, &h);
	ck_assert_int_eq(snapshot_body_verify(&h, body.data, body.len, 100), DIRAUTH_ERR_SYNTAX);
	test_key_free(&provider);
	buffer_free(&note);
	buffer_free(&body);
}
END_TEST

/* ---- method 2: health and revocation sections ---- */

#define M2_DIR       "tests/vectors/documents/snapshot-method-2/"
#define M2_FRESHNESS 120 /* two 60-second epochs */

/* A method-2 snapshot: registrations 1 and 2 (the first endpoint of each naming the key
 * endpoint.example); the health of registration 1's first endpoint by its own key (healthy) and
 * of its second by the provider (draining, capacity low); the revocation of registration 3's first
 * endpoint by the provider (retired) and of the whole service of registration 4 by an operator. */
struct m2_snapshot {
	struct buffer notes[6]; /* 2 registrations, 2 statements, 2 revocations */
	struct snapshot_record records[2];
	struct snapshot_health health[2];
	struct snapshot_revocation revocations[2]; /* entry i's note is notes[4 + i] */
	struct snapshot_revocation sorted[2];      /* the same in body order, made by m2_encode */
	struct snapshot_sections sections;
	struct buffer body;
	struct snapshot_header header;
};

static int revocation_entry_order(const void *a, const void *b)
{
	const struct snapshot_revocation *x = a, *y = b;
	int order = memcmp(x->service_id, y->service_id, SERVICE_ID_SIZE);
	if (order)
		return order;
	return x->has_endpoint - y->has_endpoint;
}

static void m2_set_revocation(struct m2_snapshot *m, size_t i, const struct revocation *rev,
                              const struct test_key *key)
{
	buffer_reset(&m->notes[4 + i]);
	lifecycle_sign_revocation(rev, key, &m->notes[4 + i]);
	struct snapshot_revocation *entry = &m->revocations[i];
	memset(entry, 0, sizeof(*entry));
	memcpy(entry->service_id, rev->service_id, SERVICE_ID_SIZE);
	entry->has_endpoint = rev->has_endpoint;
	memcpy(entry->endpoint_id, rev->endpoint_id, ENDPOINT_ID_SIZE);
	entry->since = EPOCH - 1;
	entry->note = m->notes[4 + i].data;
	entry->note_len = m->notes[4 + i].len;
}

static void m2_build(struct m2_snapshot *m)
{
	struct test_key provider, endpoint, operator_key;
	struct registration r[4];
	memset(m, 0, sizeof(*m));
	test_key_load(TEST_KEY_PROVIDER, &provider);
	lifecycle_key_load(LIFECYCLE_KEY_ENDPOINT, &endpoint);
	lifecycle_key_load(LIFECYCLE_KEY_OPERATOR, &operator_key);
	for (unsigned i = 0; i < 4; i++)
		lifecycle_registration(i + 1, &r[i]);
	for (size_t i = 0; i < 2; i++) {
		buffer_init(&m->notes[i]);
		test_sign_registration(&r[i], &provider, &m->notes[i]);
		memcpy(m->records[i].service_id, r[i].service_id, SERVICE_ID_SIZE);
		m->records[i].note = m->notes[i].data;
		m->records[i].note_len = m->notes[i].len;
	}
	qsort(m->records, 2, sizeof(m->records[0]), record_compare);
	struct health_statement s[2];
	lifecycle_statement(&r[0], 0, HEALTH_SIGNER_ENDPOINT, HEALTH_HEALTHY, 60, 3, &s[0]);
	lifecycle_statement(&r[0], 1, HEALTH_SIGNER_PROVIDER, HEALTH_DRAINING, 90, 2, &s[1]);
	s[1].has_capacity = 1;
	s[1].capacity = CAPACITY_LOW;
	for (size_t i = 0; i < 2; i++) {
		buffer_init(&m->notes[2 + i]);
		lifecycle_sign_statement(&s[i], i == 0 ? &endpoint : &provider, &m->notes[2 + i]);
		struct snapshot_health *h = &m->health[i];
		memcpy(h->service_id, s[i].service_id, SERVICE_ID_SIZE);
		memcpy(h->endpoint_id, s[i].endpoint_id, ENDPOINT_ID_SIZE);
		h->health_class = s[i].health_class;
		h->signer = s[i].signer;
		h->note = m->notes[2 + i].data;
		h->note_len = m->notes[2 + i].len;
	}
	struct revocation rev;
	lifecycle_revocation(&r[2], 0, REVOCATION_SIGNER_PROVIDER, &provider, REVOCATION_RETIRED, 30, 1,
	                     &rev);
	buffer_init(&m->notes[4]);
	m2_set_revocation(m, 0, &rev, &provider);
	lifecycle_revocation(&r[3], -1, REVOCATION_SIGNER_OPERATOR, &operator_key, REVOCATION_OPERATOR_ACTION,
	                     40, 1, &rev);
	buffer_init(&m->notes[5]);
	m2_set_revocation(m, 1, &rev, &operator_key);
	m->sections.health = m->health;
	m->sections.health_count = 2;
	m->sections.revocations = m->sorted;
	m->sections.revocation_count = 2;
	buffer_init(&m->body);
	for (unsigned i = 0; i < 4; i++)
		registration_clear(&r[i]);
	test_key_free(&provider);
	test_key_free(&endpoint);
	test_key_free(&operator_key);
}

/* Encodes the body and a method-2 header committing to it. */
static void m2_sort(struct m2_snapshot *m)
{
	memcpy(m->sorted, m->revocations, sizeof(m->sorted));
	qsort(m->sorted, 2, sizeof(m->sorted[0]), revocation_entry_order);
}

static void m2_encode(struct m2_snapshot *m)
{
	m2_sort(m);
	buffer_reset(&m->body);
	ck_assert_int_eq(
	    snapshot_body_encode_sections(NAMESPACE, EPOCH, m->records, 2, &m->sections, &m->body), 0);
	header_for(m->body.data, m->body.len, m->records, 2, &m->header);
	m->header.consensus_method = 2;
}

static void m2_free(struct m2_snapshot *m)
{
	for (size_t i = 0; i < 6; i++)
		buffer_free(&m->notes[i]);
	buffer_free(&m->body);
}

static const struct snapshot_body_limits m2_limits = {100, 100, 100};

START_TEST(test_sections_vector_and_round_trip)
{
	struct m2_snapshot m;
	struct buffer text, again;
	buffer_init(&text);
	buffer_init(&again);
	m2_build(&m);
	m2_encode(&m);
	ck_assert_int_eq(snapshot_header_encode(&m.header, &text), 0);
	test_vector_expect(M2_DIR "body.txt", m.body.data, m.body.len);
	test_vector_expect(M2_DIR "header.txt", text.data, text.len);
	/* schema/snapshot.md shows the sections of the vector, from the health count line on. */
	const char *sections = strstr((const char *)m.body.data, "\nhealth 2\n");
	ck_assert_ptr_nonnull(sections);
	sections++;
	lifecycle_page_shows("schema/snapshot.md", (const uint8_t *)sections,
	                     m.body.len - (size_t)(sections - (const char *)m.body.data));
	ck_assert_int_eq(
	    snapshot_body_verify_sections(&m.header, m.body.data, m.body.len, &m2_limits, M2_FRESHNESS), 0);

	struct snapshot_body *parsed = NULL;
	ck_assert_int_eq(snapshot_body_parse_sections(m.body.data, m.body.len, &m2_limits, &parsed), 0);
	ck_assert_uint_eq(parsed->record_count, 2);
	ck_assert_uint_eq(parsed->health_count, 2);
	ck_assert_uint_eq(parsed->revocation_count, 2);
	for (size_t i = 0; i < 2; i++) {
		ck_assert_mem_eq(parsed->health[i].endpoint_id, m.health[i].endpoint_id, ENDPOINT_ID_SIZE);
		ck_assert_int_eq(parsed->health[i].health_class, m.health[i].health_class);
		ck_assert_int_eq(parsed->health[i].signer, m.health[i].signer);
		ck_assert_uint_eq(parsed->health[i].note_len, m.health[i].note_len);
		ck_assert_mem_eq(parsed->health[i].note, m.health[i].note, m.health[i].note_len);
		ck_assert_int_eq(parsed->revocations[i].has_endpoint, m.sorted[i].has_endpoint);
		ck_assert_uint_eq(parsed->revocations[i].since, EPOCH - 1);
		ck_assert_mem_eq(parsed->revocations[i].note, m.sorted[i].note, m.sorted[i].note_len);
	}
	struct snapshot_sections back = {parsed->health, parsed->health_count, parsed->revocations,
	                                 parsed->revocation_count};
	ck_assert_int_eq(snapshot_body_encode_sections(parsed->namespace_name, parsed->epoch, parsed->records,
	                                               parsed->record_count, &back, &again),
	                 0);
	ck_assert_uint_eq(again.len, m.body.len);
	ck_assert_mem_eq(again.data, m.body.data, m.body.len);
	snapshot_body_free(parsed);

	/* The method-1 parser and verifier refuse the sections; a method-1 header over them too. */
	ck_assert_int_eq(snapshot_body_parse(m.body.data, m.body.len, 100, &parsed), DIRAUTH_ERR_SYNTAX);
	ck_assert_ptr_null(parsed);
	ck_assert_int_eq(snapshot_body_verify(&m.header, m.body.data, m.body.len, 100), DIRAUTH_ERR_SYNTAX);
	struct snapshot_header h = m.header;
	h.consensus_method = 1;
	ck_assert_int_eq(snapshot_body_verify_sections(&h, m.body.data, m.body.len, &m2_limits, M2_FRESHNESS),
	                 DIRAUTH_ERR_SYNTAX);
	h.consensus_method = 3;
	ck_assert_int_eq(snapshot_body_verify_sections(&h, m.body.data, m.body.len, &m2_limits, M2_FRESHNESS),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(snapshot_body_verify_sections(&m.header, m.body.data, m.body.len, &m2_limits, 0),
	                 DIRAUTH_ERR_CONFIG);

	/* Without sections: the method-1 bytes, read the same by both parsers and verifiers. */
	buffer_reset(&again);
	ck_assert_int_eq(snapshot_body_encode_sections(NAMESPACE, EPOCH, m.records, 2, NULL, &again), 0);
	struct buffer plain;
	buffer_init(&plain);
	ck_assert_int_eq(snapshot_body_encode(NAMESPACE, EPOCH, m.records, 2, &plain), 0);
	ck_assert_uint_eq(again.len, plain.len);
	ck_assert_mem_eq(again.data, plain.data, plain.len);
	header_for(plain.data, plain.len, m.records, 2, &h);
	ck_assert_int_eq(snapshot_body_verify_sections(&h, plain.data, plain.len, &m2_limits, M2_FRESHNESS),
	                 0);
	h.consensus_method = 2;
	ck_assert_int_eq(snapshot_body_verify_sections(&h, plain.data, plain.len, &m2_limits, M2_FRESHNESS),
	                 0);
	size_t len;
	uint8_t *file = test_read_file(test_source_path(VECTOR_DIR "body.txt"), &len);
	ck_assert_int_eq(snapshot_body_parse_sections(file, len, &m2_limits, &parsed), 0);
	ck_assert_uint_eq(parsed->record_count, 3);
	ck_assert_uint_eq(parsed->health_count + parsed->revocation_count, 0);
	snapshot_body_free(parsed);
	free(file);
	buffer_free(&plain);
	buffer_free(&text);
	buffer_free(&again);
	m2_free(&m);
}
END_TEST

/* The sections parser on the vector with from replaced by to. */
static int m2_parse_edit(const struct m2_snapshot *m, const char *from, const char *to,
                         const struct snapshot_body_limits *limits)
{
	struct buffer edited;
	buffer_init(&edited);
	test_text_replace(m->body.data, m->body.len, from, to, &edited);
	struct snapshot_body *parsed = NULL;
	int rc = snapshot_body_parse_sections(edited.data, edited.len, limits, &parsed);
	ck_assert(rc == 0 ? parsed != NULL : parsed == NULL);
	snapshot_body_free(parsed);
	buffer_free(&edited);
	return rc;
}

START_TEST(test_sections_parse_refusals)
{
	struct m2_snapshot m;
	m2_build(&m);
	m2_encode(&m);
	char line[256];
	ck_assert_int_eq(m2_parse_edit(&m, "health 2\n", "health 2\n", &m2_limits), 0);
	/* Counts: 0, more than the entries, more than the bound, more than the bytes could hold. */
	ck_assert_int_eq(m2_parse_edit(&m, "health 2\n", "health 0\n", &m2_limits), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(m2_parse_edit(&m, "health 2\n", "health 3\n", &m2_limits), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(m2_parse_edit(&m, "revocations 2\n", "revocations 1\n", &m2_limits),
	                 DIRAUTH_ERR_SYNTAX);
	struct snapshot_body_limits tight = {100, 1, 100};
	ck_assert_int_eq(m2_parse_edit(&m, "health 2\n", "health 2\n", &tight), DIRAUTH_ERR_BOUNDS);
	tight.max_health = 100;
	tight.max_revocations = 1;
	ck_assert_int_eq(m2_parse_edit(&m, "health 2\n", "health 2\n", &tight), DIRAUTH_ERR_BOUNDS);
	struct snapshot_body_limits unbounded = {100, SIZE_MAX, SIZE_MAX};
	ck_assert_int_eq(m2_parse_edit(&m, "health 2\n", "health 1000000\n", &unbounded), DIRAUTH_ERR_SYNTAX);
	/* Sections out of order, repeated, unknown; text after the last one. */
	ck_assert_int_eq(m2_parse_edit(&m, "health 2\n", "revocations 0\nhealth 2\n", &m2_limits),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(m2_parse_edit(&m, "health 2\n", "deregistrations 1\nhealth 2\n", &m2_limits),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(m2_parse_edit(&m, "revocations 2\n", "health 1\nrevocations 2\n", &m2_limits),
	                 DIRAUTH_ERR_SYNTAX);
	/* Entry lines: a class or signer outside the tables, unknown as a class, a figure, "-" for an
	 * endpoint of a health entry, a length 0, over the bound, past the end. */
	ck_assert_int_eq(m2_parse_edit(&m, " healthy endpoint ", " fine endpoint ", &m2_limits),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(m2_parse_edit(&m, " healthy endpoint ", " unknown endpoint ", &m2_limits),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(m2_parse_edit(&m, " healthy endpoint ", " healthy operator ", &m2_limits),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(m2_parse_edit(&m, " healthy endpoint ", " healthy 73 endpoint ", &m2_limits),
	                 DIRAUTH_ERR_SYNTAX);
	snprintf(line, sizeof(line), " healthy endpoint %zu\n", m.health[0].note_len);
	ck_assert_int_eq(m2_parse_edit(&m, line, " healthy endpoint 0\n", &m2_limits), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(m2_parse_edit(&m, line, " healthy endpoint 1025\n", &m2_limits), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(m2_parse_edit(&m, line, " healthy endpoint 0400\n", &m2_limits), DIRAUTH_ERR_SYNTAX);
	snprintf(line, sizeof(line), " %zu\ndirauth revocation v1\nnamespace example-net\nservice ",
	         m.sorted[1].note_len);
	ck_assert_int_eq(m2_parse_edit(&m, line,
	                               " 2049\ndirauth revocation v1\nnamespace example-net\nservice ",
	                               &m2_limits),
	                 DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(m2_parse_edit(&m, line,
	                               " 9999\ndirauth revocation v1\nnamespace example-net\nservice ",
	                               &m2_limits),
	                 DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(m2_parse_edit(&m, line,
	                               " 2000\ndirauth revocation v1\nnamespace example-net\nservice ",
	                               &m2_limits),
	                 DIRAUTH_ERR_SYNTAX);
	/* Entries out of order: the first health entry's endpoint made the highest. */
	char service_hex[65], endpoint_hex[65], from[160], to[160];
	hex_encode(m.health[0].service_id, SERVICE_ID_SIZE, service_hex);
	hex_encode(m.health[0].endpoint_id, ENDPOINT_ID_SIZE, endpoint_hex);
	snprintf(from, sizeof(from), "health %s %s", service_hex, endpoint_hex);
	snprintf(to, sizeof(to), "health %s %064d", service_hex, 0);
	memset(to + 7 + 64 + 1, 'f', 64);
	ck_assert_int_eq(m2_parse_edit(&m, from, to, &m2_limits), DIRAUTH_ERR_SYNTAX);
	/* A revocation's "-" as a word. */
	ck_assert_int_eq(m2_parse_edit(&m, " - ", " service ", &m2_limits), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(m2_parse_edit(&m, " - ", " - 1 ", &m2_limits), DIRAUTH_ERR_SYNTAX);
	m2_free(&m);
}
END_TEST

START_TEST(test_sections_encode_refusals)
{
	struct m2_snapshot m;
	struct buffer out;
	buffer_init(&out);
	m2_build(&m);
	ck_assert_int_eq(buffer_append_string(&out, "kept"), 0);
	struct snapshot_health h0 = m.health[0];
	m.health[0] = m.health[1];
	m.health[1] = h0;
	ck_assert_int_eq(snapshot_body_encode_sections(NAMESPACE, EPOCH, m.records, 2, &m.sections, &out),
	                 DIRAUTH_ERR_SYNTAX);
	m.health[1] = m.health[0];
	ck_assert_int_eq(snapshot_body_encode_sections(NAMESPACE, EPOCH, m.records, 2, &m.sections, &out),
	                 DIRAUTH_ERR_SYNTAX);
	m2_free(&m);
	m2_build(&m);
	m.health[0].health_class = HEALTH_CLASS_COUNT;
	ck_assert_int_eq(snapshot_body_encode_sections(NAMESPACE, EPOCH, m.records, 2, &m.sections, &out),
	                 DIRAUTH_ERR_SYNTAX);
	m.health[0].health_class = HEALTH_HEALTHY;
	m.health[0].note_len = HEALTH_MAX_BYTES + 1;
	ck_assert_int_eq(snapshot_body_encode_sections(NAMESPACE, EPOCH, m.records, 2, &m.sections, &out),
	                 DIRAUTH_ERR_BOUNDS);
	m.health[0].note_len = 0;
	ck_assert_int_eq(snapshot_body_encode_sections(NAMESPACE, EPOCH, m.records, 2, &m.sections, &out),
	                 DIRAUTH_ERR_SYNTAX);
	m2_free(&m);
	m2_build(&m);
	m2_sort(&m);
	struct snapshot_revocation r0 = m.sorted[0];
	m.sorted[0] = m.sorted[1];
	m.sorted[1] = r0;
	ck_assert_int_eq(snapshot_body_encode_sections(NAMESPACE, EPOCH, m.records, 2, &m.sections, &out),
	                 DIRAUTH_ERR_SYNTAX);
	m.sorted[1] = m.sorted[0];
	ck_assert_int_eq(snapshot_body_encode_sections(NAMESPACE, EPOCH, m.records, 2, &m.sections, &out),
	                 DIRAUTH_ERR_SYNTAX);
	m2_free(&m);
	m2_build(&m);
	m2_sort(&m);
	m.sorted[0].note_len = REVOCATION_MAX_BYTES + 1;
	ck_assert_int_eq(snapshot_body_encode_sections(NAMESPACE, EPOCH, m.records, 2, &m.sections, &out),
	                 DIRAUTH_ERR_BOUNDS);
	m.sorted[0].note_len = 1;
	m.sorted[0].has_endpoint = 2;
	ck_assert_int_eq(snapshot_body_encode_sections(NAMESPACE, EPOCH, m.records, 2, &m.sections, &out),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_str_eq((const char *)out.data, "kept");
	m2_free(&m);
	buffer_free(&out);
}
END_TEST

/* Applies change to the example, encodes it with a header that commits to it exactly, and returns
 * snapshot_body_verify_sections' answer with freshness. */
static int m2_verify(void (*change)(struct m2_snapshot *), uint64_t freshness)
{
	struct m2_snapshot m;
	m2_build(&m);
	if (change)
		change(&m);
	m2_encode(&m);
	int rc = snapshot_body_verify_sections(&m.header, m.body.data, m.body.len, &m2_limits, freshness);
	m2_free(&m);
	return rc;
}

static void class_differs(struct m2_snapshot *m)
{
	m->health[1].health_class = HEALTH_HEALTHY; /* its statement says draining */
}

static void signer_differs(struct m2_snapshot *m)
{
	m->health[0].signer = HEALTH_SIGNER_PROVIDER;
}

static void service_not_listed(struct m2_snapshot *m)
{
	memset(m->health[1].service_id, 0xff, SERVICE_ID_SIZE);
}

static void endpoint_not_listed(struct m2_snapshot *m)
{
	memset(m->health[1].endpoint_id, 0xff, ENDPOINT_ID_SIZE);
}

static void notes_swapped(struct m2_snapshot *m)
{
	const uint8_t *note = m->health[0].note;
	size_t len = m->health[0].note_len;
	m->health[0].note = m->health[1].note;
	m->health[0].note_len = m->health[1].note_len;
	m->health[0].health_class = HEALTH_DRAINING;
	m->health[0].signer = HEALTH_SIGNER_PROVIDER;
	m->health[1].note = note;
	m->health[1].note_len = len;
	m->health[1].health_class = HEALTH_HEALTHY;
	m->health[1].signer = HEALTH_SIGNER_ENDPOINT;
}

static void statement_by_other_key(struct m2_snapshot *m)
{
	struct test_key other;
	struct registration r;
	struct health_statement s;
	test_key_load(TEST_KEY_OTHER, &other);
	lifecycle_registration(1, &r);
	lifecycle_statement(&r, 1, HEALTH_SIGNER_PROVIDER, HEALTH_DRAINING, 90, 2, &s);
	buffer_reset(&m->notes[3]);
	lifecycle_sign_statement(&s, &other, &m->notes[3]);
	m->health[1].note = m->notes[3].data;
	m->health[1].note_len = m->notes[3].len;
	registration_clear(&r);
	test_key_free(&other);
}

static void since_after_epoch(struct m2_snapshot *m)
{
	m->revocations[0].since = EPOCH + 1;
}

static void target_differs(struct m2_snapshot *m)
{
	for (size_t i = 0; i < 2; i++)
		if (m->revocations[i].has_endpoint)
			m->revocations[i].endpoint_id[0] ^= 1;
}

/* Revokes an endpoint or the service of a record the body still lists. */
static void revoke_listed(struct m2_snapshot *m, int endpoint)
{
	struct test_key provider;
	struct registration r;
	struct revocation rev;
	test_key_load(TEST_KEY_PROVIDER, &provider);
	lifecycle_registration(endpoint >= 0 ? 1 : 2, &r);
	lifecycle_revocation(&r, endpoint, REVOCATION_SIGNER_PROVIDER, &provider, REVOCATION_RETIRED, 30, 2,
	                     &rev);
	m2_set_revocation(m, 0, &rev, &provider);
	registration_clear(&r);
	test_key_free(&provider);
}

static void revoke_listed_endpoint(struct m2_snapshot *m)
{
	revoke_listed(m, 2);
}

static void revoke_listed_service(struct m2_snapshot *m)
{
	revoke_listed(m, -1);
}

static void revocation_by_other_key(struct m2_snapshot *m)
{
	struct test_key provider, other;
	struct registration r;
	struct revocation rev;
	test_key_load(TEST_KEY_PROVIDER, &provider);
	test_key_load(TEST_KEY_OTHER, &other);
	lifecycle_registration(3, &r);
	lifecycle_revocation(&r, 0, REVOCATION_SIGNER_PROVIDER, &provider, REVOCATION_RETIRED, 30, 1, &rev);
	for (size_t i = 0; i < 2; i++)
		if (m->revocations[i].has_endpoint)
			m2_set_revocation(m, i, &rev, &other);
	registration_clear(&r);
	test_key_free(&provider);
	test_key_free(&other);
}

START_TEST(test_sections_verify)
{
	ck_assert_int_eq(m2_verify(NULL, M2_FRESHNESS), 0);
	/* Health: the class and signer are the statement's, the endpoint is a record's, the statement
	 * is that endpoint's and signed by the key its signer names, and fresh. */
	ck_assert_int_eq(m2_verify(class_differs, M2_FRESHNESS), DIRAUTH_ERR_MISMATCH);
	ck_assert_int_eq(m2_verify(signer_differs, M2_FRESHNESS), DIRAUTH_ERR_MISMATCH);
	ck_assert_int_eq(m2_verify(service_not_listed, M2_FRESHNESS), DIRAUTH_ERR_MISMATCH);
	ck_assert_int_eq(m2_verify(endpoint_not_listed, M2_FRESHNESS), DIRAUTH_ERR_MISMATCH);
	ck_assert_int_eq(m2_verify(notes_swapped, M2_FRESHNESS), DIRAUTH_ERR_MISMATCH);
	ck_assert_int_eq(m2_verify(statement_by_other_key, M2_FRESHNESS), DIRAUTH_ERR_UNKNOWN_KEY);
	/* The first statement was issued 60 s before valid-after: stale under a 60 s bound. */
	ck_assert_int_eq(m2_verify(NULL, 61), 0);
	ck_assert_int_eq(m2_verify(NULL, 60), DIRAUTH_ERR_STALE);
	ck_assert_int_eq(m2_verify(NULL, UINT64_MAX), 0);
	/* Revocations: listed since no later than the epoch, for their own target, signed by their
	 * own key, and nothing they revoke is still in the body. */
	ck_assert_int_eq(m2_verify(since_after_epoch, M2_FRESHNESS), DIRAUTH_ERR_MISMATCH);
	ck_assert_int_eq(m2_verify(target_differs, M2_FRESHNESS), DIRAUTH_ERR_MISMATCH);
	ck_assert_int_eq(m2_verify(revoke_listed_endpoint, M2_FRESHNESS), DIRAUTH_ERR_MISMATCH);
	ck_assert_int_eq(m2_verify(revoke_listed_service, M2_FRESHNESS), DIRAUTH_ERR_MISMATCH);
	ck_assert_int_eq(m2_verify(revocation_by_other_key, M2_FRESHNESS), DIRAUTH_ERR_UNKNOWN_KEY);
}
END_TEST

static Suite *snapshot_suite(void)
{
	Suite *suite = suite_create("snapshot");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_header_round_trip_and_vectors);
	tcase_add_test(tc, test_header_invalid_vectors);
	tcase_add_test(tc, test_header_encode_refusals);
	tcase_add_test(tc, test_body_round_trip);
	tcase_add_test(tc, test_body_encode_refusals);
	tcase_add_test(tc, test_body_invalid_vectors);
	tcase_add_test(tc, test_verify_commitments);
	tcase_add_test(tc, test_verify_records);
	tcase_add_test(tc, test_verify_record_not_a_registration);
	tcase_add_test(tc, test_sections_vector_and_round_trip);
	tcase_add_test(tc, test_sections_parse_refusals);
	tcase_add_test(tc, test_sections_encode_refusals);
	tcase_add_test(tc, test_sections_verify);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(snapshot_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
