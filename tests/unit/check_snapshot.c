/*
 * check_snapshot.c: snapshot header and body codecs and snapshot_body_verify(), with the vectors
 * under tests/vectors/documents/snapshot/ (rebuilt here and compared byte for byte).
 *
 * The example snapshot holds three example registrations (indexes 1..3, namespace example-net,
 * signed by provider.example), epoch 29453762 of 60-second epochs, and its header is co-signed
 * by authority-1.example and authority-2.example.
 */
#include "schema/crypto.h"
#include "schema/encoding.h"
#include "schema/error.h"
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

struct invalid_case {
	const char *name;
	const char *from;
	const char *to;
	int expected;
};

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

START_TEST(test_header_invalid_vectors)
{
	struct example_records set;
	struct buffer body, text;
	struct snapshot_header h, parsed;
	buffer_init(&body);
	buffer_init(&text);
	example_snapshot(&set, &body, &h);
	ck_assert_int_eq(snapshot_header_encode(&h, &text), 0);
	for (size_t i = 0; i < sizeof(invalid_headers) / sizeof(invalid_headers[0]); i++) {
		const struct invalid_case *c = &invalid_headers[i];
		char relative[256];
		snprintf(relative, sizeof(relative), VECTOR_DIR "invalid-header/%s.txt", c->name);
		struct buffer variant;
		buffer_init(&variant);
		test_text_replace(text.data, text.len, c->from, c->to, &variant);
		test_vector_expect(relative, variant.data, variant.len);
		size_t len;
		uint8_t *file = test_read_file(test_source_path(relative), &len);
		int rc = snapshot_header_parse(file, len, &parsed);
		ck_assert_msg(rc == c->expected, "%s: got %d, expected %d", c->name, rc, c->expected);
		free(file);
		buffer_free(&variant);
	}
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
