/*
 * check_vote_body.c: the vote body codec: the exact text of a body, round trips, the bounds that
 * refuse before allocating, the refusal of sections a method-1 parser does not know, and every
 * other refusal of the parser and the encoder; then method 2's health and revocation sections:
 * their exact text, round trips through vote_body_parse_sections, their order, bounds and
 * refusals, and that a method-1 body reads the same through either parser.
 */
#include "crypto/crypto.h"
#include "base/error.h"
#include "schema/vote_body.h"
#include "test_keys.h"
#include "test_support.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SERVICE_A "1111111111111111111111111111111111111111111111111111111111111111"
#define SERVICE_B "2222222222222222222222222222222222222222222222222222222222222222"
#define DIGEST_A  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define DIGEST_B  "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

#define EXAMPLE_BODY                                                                                         \
	"dirauth vote-body v1\n"                                                                             \
	"namespace example-net\n"                                                                            \
	"epoch 29453762\n"                                                                                   \
	"authority authority-1.example\n"                                                                    \
	"records 2\n"                                                                                        \
	"record " SERVICE_A " 1 " DIGEST_A "\n"                                                              \
	"record " SERVICE_B " 18446744073709551615 " DIGEST_B "\n"

static void example_body(struct vote_body *body, struct vote_body_record records[2])
{
	memset(body, 0, sizeof(*body));
	strcpy(body->namespace_name, "example-net");
	body->epoch = 29453762;
	strcpy(body->authority, "authority-1.example");
	memset(records, 0, 2 * sizeof(*records));
	memset(records[0].service_id, 0x11, SERVICE_ID_SIZE);
	records[0].sequence = 1;
	memset(records[0].registration_sha256, 0xaa, 32);
	memset(records[1].service_id, 0x22, SERVICE_ID_SIZE);
	records[1].sequence = UINT64_MAX;
	memset(records[1].registration_sha256, 0xbb, 32);
	body->record_count = 2;
	body->records = records;
}

static int parse_text(const char *text, size_t max_records)
{
	struct vote_body *body = NULL;
	int rc = vote_body_parse((const uint8_t *)text, strlen(text), max_records, &body);
	ck_assert(rc == 0 ? body != NULL : body == NULL);
	vote_body_free(body);
	return rc;
}

/* Parses EXAMPLE_BODY with from replaced by to. */
static int parse_edit(const char *from, const char *to)
{
	struct buffer edited;
	buffer_init(&edited);
	test_text_replace((const uint8_t *)EXAMPLE_BODY, strlen(EXAMPLE_BODY), from, to, &edited);
	struct vote_body *body = NULL;
	int rc = vote_body_parse(edited.data, edited.len, 1000, &body);
	vote_body_free(body);
	buffer_free(&edited);
	return rc;
}

START_TEST(test_round_trip)
{
	struct vote_body body;
	struct vote_body_record records[2];
	struct buffer out;
	buffer_init(&out);
	example_body(&body, records);
	ck_assert_int_eq(vote_body_encode(&body, &out), 0);
	ck_assert_str_eq((const char *)out.data, EXAMPLE_BODY);

	struct vote_body *parsed = NULL;
	ck_assert_int_eq(vote_body_parse(out.data, out.len, 2, &parsed), 0);
	ck_assert_str_eq(parsed->namespace_name, "example-net");
	ck_assert_uint_eq(parsed->epoch, 29453762);
	ck_assert_str_eq(parsed->authority, "authority-1.example");
	ck_assert_uint_eq(parsed->record_count, 2);
	ck_assert_mem_eq(parsed->records, records, sizeof(records));

	/* The parsed body owns its records: the input may go away. */
	struct buffer again;
	buffer_init(&again);
	buffer_free(&out);
	ck_assert_int_eq(vote_body_encode(parsed, &again), 0);
	ck_assert_str_eq((const char *)again.data, EXAMPLE_BODY);
	vote_body_free(parsed);
	buffer_free(&again);

	/* No records: the records section is still there, with count 0. */
	body.record_count = 0;
	body.records = NULL;
	buffer_init(&out);
	ck_assert_int_eq(vote_body_encode(&body, &out), 0);
	ck_assert_str_eq((const char *)out.data,
	                 "dirauth vote-body v1\nnamespace example-net\nepoch 29453762\n"
	                 "authority authority-1.example\nrecords 0\n");
	ck_assert_int_eq(vote_body_parse(out.data, out.len, 0, &parsed), 0);
	ck_assert_uint_eq(parsed->record_count, 0);
	ck_assert_ptr_null(parsed->records);
	vote_body_free(parsed);
	buffer_free(&out);
	vote_body_free(NULL);
}
END_TEST

START_TEST(test_parse_refusals)
{
	ck_assert_int_eq(parse_text(EXAMPLE_BODY, 1000), 0);
	ck_assert_int_eq(parse_edit("vote-body v1", "vote-body v2"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit("dirauth vote-body v1", "dirauth snapshot-body v1"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit("namespace example-net", "namespace Example-net"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit("namespace example-net", "namespace example-net-"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit("epoch 29453762", "epoch 029453762"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit("epoch 29453762", "epoch 18446744073709551616"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit("authority authority-1.example", "authority authority+1"),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit("authority authority-1.example", "authority two words"),
	                 DIRAUTH_ERR_SYNTAX);
	/* Lines out of order, missing, doubled spaces, CR, upper-case hex, a trailing space. */
	ck_assert_int_eq(parse_edit("epoch 29453762\nauthority authority-1.example\n",
	                            "authority authority-1.example\nepoch 29453762\n"),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit("epoch 29453762\n", ""), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit("records 2", "records  2"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit("records 2\n", "records 2\r\n"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit("record 1111", "record 111A"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit(" 1 aaaa", " 1 aaaA"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit(DIGEST_B "\n", DIGEST_B " \n"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit(DIGEST_B "\n", DIGEST_B " x\n"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit(DIGEST_B "\n", DIGEST_B), DIRAUTH_ERR_SYNTAX);
	/* Field values: a short id or digest, sequence 0, a leading zero, an overflow. */
	ck_assert_int_eq(parse_edit("record " SERVICE_A, "record 11"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit(" 1 " DIGEST_A, " 1 aa"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit(" 1 " DIGEST_A, " 0 " DIGEST_A), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit(" 1 " DIGEST_A, " 01 " DIGEST_A), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit(" 18446744073709551615 ", " 18446744073709551616 "), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit(SERVICE_A " 1 " DIGEST_A, SERVICE_A " " DIGEST_A), DIRAUTH_ERR_SYNTAX);
	/* Records unsorted or repeated. */
	ck_assert_int_eq(parse_edit("record " SERVICE_B, "record " SERVICE_A), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit("record " SERVICE_A, "record " SERVICE_B), DIRAUTH_ERR_SYNTAX);
	/* A count that does not match the lines present. */
	ck_assert_int_eq(parse_edit("records 2", "records 1"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit("records 2", "records 3"), DIRAUTH_ERR_SYNTAX);
	/* Empty input, text after the body, a NUL byte. */
	ck_assert_int_eq(parse_text("", 1000), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit(DIGEST_B "\n", DIGEST_B "\n\n"), DIRAUTH_ERR_SYNTAX);
	struct buffer with_nul;
	buffer_init(&with_nul);
	ck_assert_int_eq(buffer_append(&with_nul, EXAMPLE_BODY, strlen(EXAMPLE_BODY)), 0);
	with_nul.data[10] = 0;
	struct vote_body *body = NULL;
	ck_assert_int_eq(vote_body_parse(with_nul.data, with_nul.len, 1000, &body), DIRAUTH_ERR_SYNTAX);
	buffer_free(&with_nul);
}
END_TEST

/* A section of a later method after the records section: refused by this (method-1) parser, with
 * items or without. */
START_TEST(test_later_sections_refused)
{
	ck_assert_int_eq(parse_edit(DIGEST_B "\n", DIGEST_B "\nhealth 0\n"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(
	    parse_edit(DIGEST_B "\n", DIGEST_B "\nrevocations 1\nrevocation " SERVICE_A " 1 " DIGEST_A "\n"),
	    DIRAUTH_ERR_SYNTAX);
	/* A second records section is no section either. */
	ck_assert_int_eq(parse_edit(DIGEST_B "\n", DIGEST_B "\nrecords 0\n"), DIRAUTH_ERR_SYNTAX);
	/* Nor a later section in the place of the records section. */
	ck_assert_int_eq(parse_edit("records 2\n", "health 0\nrecords 2\n"), DIRAUTH_ERR_SYNTAX);
}
END_TEST

START_TEST(test_bounds)
{
	/* More records than the caller's bound: refused from the count line. */
	ck_assert_int_eq(parse_text(EXAMPLE_BODY, 2), 0);
	ck_assert_int_eq(parse_text(EXAMPLE_BODY, 1), DIRAUTH_ERR_BOUNDS);
	/* The whole input is bounded by what max_records lines could take. */
	ck_assert_uint_eq(vote_body_max_bytes(0), 290);
	ck_assert_uint_eq(vote_body_max_bytes(1000000), 158000290);
	ck_assert_uint_eq(vote_body_max_bytes(SIZE_MAX), SIZE_MAX);
	struct buffer big;
	buffer_init(&big);
	ck_assert_int_eq(buffer_append_string(&big, EXAMPLE_BODY), 0);
	while (big.len <= vote_body_max_bytes(2))
		ck_assert_int_eq(buffer_append_string(&big, "x"), 0);
	struct vote_body *body = NULL;
	ck_assert_int_eq(vote_body_parse(big.data, big.len, 2, &body), DIRAUTH_ERR_BOUNDS);
	buffer_free(&big);
	/* A count the remaining bytes cannot hold is refused before any allocation, even under a
	 * huge bound. */
	ck_assert_int_eq(parse_edit("records 2", "records 100000000000"), DIRAUTH_ERR_BOUNDS);
	const char *huge = "dirauth vote-body v1\nnamespace example-net\nepoch 1\nauthority a\n"
	                   "records 18446744073709551615\n";
	ck_assert_int_eq(parse_text(huge, SIZE_MAX), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit("records 2", "records 9"), DIRAUTH_ERR_SYNTAX);
	/* The longest legal lines pass; a line over VOTE_BODY_LINE_MAX is a bounds error. */
	char authority[NOTE_NAME_MAX + 1];
	memset(authority, 'a', NOTE_NAME_MAX);
	authority[NOTE_NAME_MAX] = 0;
	char line[256];
	snprintf(line, sizeof(line), "authority %s", authority);
	ck_assert_int_eq(parse_edit("authority authority-1.example", line), 0);
	snprintf(line, sizeof(line), "authority %sa", authority);
	ck_assert_int_eq(parse_edit("authority authority-1.example", line), DIRAUTH_ERR_BOUNDS);
	char long_line[VOTE_BODY_LINE_MAX + 16];
	memset(long_line, 'a', sizeof(long_line) - 1);
	long_line[sizeof(long_line) - 1] = 0;
	memcpy(long_line, "authority ", 10);
	ck_assert_int_eq(parse_edit("authority authority-1.example", long_line), DIRAUTH_ERR_BOUNDS);
}
END_TEST

START_TEST(test_encode_refusals)
{
	struct vote_body body;
	struct vote_body_record records[2];
	struct buffer out;
	buffer_init(&out);
	ck_assert_int_eq(buffer_append_string(&out, "kept"), 0);

	example_body(&body, records);
	strcpy(body.namespace_name, "Example");
	ck_assert_int_eq(vote_body_encode(&body, &out), DIRAUTH_ERR_SYNTAX);
	example_body(&body, records);
	memset(body.namespace_name, 'a', sizeof(body.namespace_name));
	ck_assert_int_eq(vote_body_encode(&body, &out), DIRAUTH_ERR_SYNTAX);
	example_body(&body, records);
	strcpy(body.authority, "two words");
	ck_assert_int_eq(vote_body_encode(&body, &out), DIRAUTH_ERR_SYNTAX);
	example_body(&body, records);
	body.authority[0] = 0;
	ck_assert_int_eq(vote_body_encode(&body, &out), DIRAUTH_ERR_SYNTAX);
	example_body(&body, records);
	records[0].sequence = 0;
	ck_assert_int_eq(vote_body_encode(&body, &out), DIRAUTH_ERR_SYNTAX);
	example_body(&body, records);
	memcpy(records[1].service_id, records[0].service_id, SERVICE_ID_SIZE);
	ck_assert_int_eq(vote_body_encode(&body, &out), DIRAUTH_ERR_SYNTAX);
	example_body(&body, records);
	body.records = NULL;
	ck_assert_int_eq(vote_body_encode(&body, &out), DIRAUTH_ERR_SYNTAX);
	/* Each refusal left the buffer as it was. */
	ck_assert_uint_eq(out.len, 4);
	ck_assert_str_eq((const char *)out.data, "kept");
	buffer_free(&out);
}
END_TEST

/* The body of the consensus vectors' first vote is the example of schema/vote-body.md: it parses,
 * re-encodes to the same bytes, and its SHA-256 is what that vote's body-sha256 line names. */
START_TEST(test_vector_body)
{
	size_t len = 0, vote_len = 0;
	uint8_t *file =
	    test_read_file(test_source_path("tests/vectors/consensus/agreement/vote-1-body.txt"), &len);
	uint8_t *vote =
	    test_read_file(test_source_path("tests/vectors/consensus/agreement/vote-1.txt"), &vote_len);
	struct vote_body *body = NULL;
	ck_assert_int_eq(vote_body_parse(file, len, 1000, &body), 0);
	ck_assert_uint_eq(body->record_count, 3);
	struct buffer again;
	buffer_init(&again);
	ck_assert_int_eq(vote_body_encode(body, &again), 0);
	ck_assert_uint_eq(again.len, len);
	ck_assert_mem_eq(again.data, file, len);
	uint8_t digest[32];
	char hex[65], line[80];
	ck_assert_int_eq(crypto_sha256(file, len, digest), 0);
	for (size_t i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", digest[i]);
	snprintf(line, sizeof(line), "body-sha256 %s\n", hex);
	ck_assert_ptr_nonnull(strstr((const char *)vote, line));
	buffer_free(&again);
	vote_body_free(body);
	free(file);
	free(vote);
}
END_TEST

/* ---- method 2's sections ---- */

#define ENDPOINT_C "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
#define ENDPOINT_D "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
#define DIGEST_E   "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"
#define DIGEST_F   "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"

#define SECTIONS_BODY                                                                                        \
	EXAMPLE_BODY "health 2\n"                                                                            \
	             "health " SERVICE_A " " ENDPOINT_C " 1767225720 7 " DIGEST_E "\n"                       \
	             "health " SERVICE_A " " ENDPOINT_D " 1767225600 1 " DIGEST_F "\n"                       \
	             "revocations 2\n"                                                                       \
	             "revocation " SERVICE_B " - " DIGEST_F "\n"                                             \
	             "revocation " SERVICE_B " " ENDPOINT_C " " DIGEST_E "\n"

static void sections_body(struct vote_body *body, struct vote_body_record records[2],
                          struct vote_body_health health[2], struct vote_body_revocation revocations[2])
{
	example_body(body, records);
	memset(health, 0, 2 * sizeof(*health));
	memset(revocations, 0, 2 * sizeof(*revocations));
	memset(health[0].service_id, 0x11, SERVICE_ID_SIZE);
	memset(health[0].endpoint_id, 0xcc, ENDPOINT_ID_SIZE);
	health[0].issued_at = 1767225720;
	health[0].sequence = 7;
	memset(health[0].statement_sha256, 0xee, 32);
	memset(health[1].service_id, 0x11, SERVICE_ID_SIZE);
	memset(health[1].endpoint_id, 0xdd, ENDPOINT_ID_SIZE);
	health[1].issued_at = 1767225600;
	health[1].sequence = 1;
	memset(health[1].statement_sha256, 0xff, 32);
	memset(revocations[0].service_id, 0x22, SERVICE_ID_SIZE);
	memset(revocations[0].revocation_sha256, 0xff, 32);
	memset(revocations[1].service_id, 0x22, SERVICE_ID_SIZE);
	revocations[1].has_endpoint = 1;
	memset(revocations[1].endpoint_id, 0xcc, ENDPOINT_ID_SIZE);
	memset(revocations[1].revocation_sha256, 0xee, 32);
	body->health_count = 2;
	body->health = health;
	body->revocation_count = 2;
	body->revocations = revocations;
}

static const struct vote_body_limits wide = {1000, 1000, 1000};

static int parse_sections_text(const char *text, const struct vote_body_limits *limits)
{
	struct vote_body *body = NULL;
	int rc = vote_body_parse_sections((const uint8_t *)text, strlen(text), limits, &body);
	ck_assert(rc == 0 ? body != NULL : body == NULL);
	vote_body_free(body);
	return rc;
}

static int parse_sections_edit(const char *from, const char *to)
{
	struct buffer edited;
	buffer_init(&edited);
	test_text_replace((const uint8_t *)SECTIONS_BODY, strlen(SECTIONS_BODY), from, to, &edited);
	struct vote_body *body = NULL;
	int rc = vote_body_parse_sections(edited.data, edited.len, &wide, &body);
	vote_body_free(body);
	buffer_free(&edited);
	return rc;
}

START_TEST(test_sections_round_trip)
{
	struct vote_body body;
	struct vote_body_record records[2];
	struct vote_body_health health[2];
	struct vote_body_revocation revocations[2];
	struct buffer out;
	buffer_init(&out);
	sections_body(&body, records, health, revocations);
	ck_assert_int_eq(vote_body_encode(&body, &out), 0);
	ck_assert_str_eq((const char *)out.data, SECTIONS_BODY);

	struct vote_body *parsed = NULL;
	ck_assert_int_eq(vote_body_parse_sections(out.data, out.len, &wide, &parsed), 0);
	ck_assert_uint_eq(parsed->record_count, 2);
	ck_assert_mem_eq(parsed->records, records, sizeof(records));
	ck_assert_uint_eq(parsed->health_count, 2);
	ck_assert_mem_eq(parsed->health, health, sizeof(health));
	ck_assert_uint_eq(parsed->revocation_count, 2);
	ck_assert_mem_eq(parsed->revocations, revocations, sizeof(revocations));
	struct buffer again;
	buffer_init(&again);
	ck_assert_int_eq(vote_body_encode(parsed, &again), 0);
	ck_assert_str_eq((const char *)again.data, SECTIONS_BODY);
	vote_body_free(parsed);
	buffer_free(&again);
	/* The method-1 parser refuses them. */
	ck_assert_int_eq(parse_text(SECTIONS_BODY, 1000), DIRAUTH_ERR_SYNTAX);

	/* One section alone, either one. */
	buffer_reset(&out);
	body.revocation_count = 0;
	ck_assert_int_eq(vote_body_encode(&body, &out), 0);
	ck_assert_ptr_null(strstr((const char *)out.data, "revocations"));
	ck_assert_int_eq(vote_body_parse_sections(out.data, out.len, &wide, &parsed), 0);
	ck_assert_uint_eq(parsed->health_count, 2);
	ck_assert_uint_eq(parsed->revocation_count, 0);
	ck_assert_ptr_null(parsed->revocations);
	vote_body_free(parsed);
	buffer_reset(&out);
	body.revocation_count = 2;
	body.health_count = 0;
	ck_assert_int_eq(vote_body_encode(&body, &out), 0);
	ck_assert_int_eq(vote_body_parse_sections(out.data, out.len, &wide, &parsed), 0);
	ck_assert_uint_eq(parsed->health_count, 0);
	ck_assert_uint_eq(parsed->revocation_count, 2);
	vote_body_free(parsed);

	/* No sections: a method-1 body, the same bytes and the same values through either parser. */
	buffer_reset(&out);
	body.revocation_count = 0;
	ck_assert_int_eq(vote_body_encode(&body, &out), 0);
	ck_assert_str_eq((const char *)out.data, EXAMPLE_BODY);
	size_t len = 0;
	uint8_t *file =
	    test_read_file(test_source_path("tests/vectors/consensus/agreement/vote-1-body.txt"), &len);
	struct vote_body *one = NULL, *two = NULL;
	ck_assert_int_eq(vote_body_parse(file, len, 1000, &one), 0);
	ck_assert_int_eq(vote_body_parse_sections(file, len, &wide, &two), 0);
	ck_assert_uint_eq(one->record_count, two->record_count);
	ck_assert_mem_eq(one->records, two->records, one->record_count * sizeof(*one->records));
	ck_assert_uint_eq(two->health_count + two->revocation_count, 0);
	vote_body_free(one);
	vote_body_free(two);
	free(file);
	buffer_free(&out);
}
END_TEST

START_TEST(test_sections_refusals)
{
	ck_assert_int_eq(parse_sections_text(SECTIONS_BODY, &wide), 0);
	/* An empty section is never written; sections out of order, repeated or unknown. */
	ck_assert_int_eq(parse_sections_edit(DIGEST_B "\n", DIGEST_B "\nhealth 0\n"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_sections_edit("health 2\n", "revocations 0\nhealth 2\n"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_sections_edit(DIGEST_B "\n"
	                                              "health 2",
	                                     DIGEST_B "\n"
	                                              "records 0\nhealth 2"),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_sections_edit(DIGEST_B "\n"
	                                              "health 2",
	                                     DIGEST_B "\n"
	                                              "deregistrations 1\nhealth 2"),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_sections_text(
	                     EXAMPLE_BODY "revocations 1\nrevocation " SERVICE_B " - " DIGEST_F "\n"
	                                  "health 1\nhealth " SERVICE_A " " ENDPOINT_C " 1 1 " DIGEST_E "\n",
	                     &wide),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_sections_text(SECTIONS_BODY "health 1\nhealth " SERVICE_B " " ENDPOINT_C
	                                                   " 1 1 " DIGEST_E "\n",
	                                     &wide),
	                 DIRAUTH_ERR_SYNTAX);
	/* Items out of order or repeated: health by (service, endpoint); revocations with the whole
	 * service first. */
	ck_assert_int_eq(parse_sections_edit(ENDPOINT_D " 1767225600", ENDPOINT_C " 1767225600"),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(
	    parse_sections_edit("health " SERVICE_A " " ENDPOINT_D,
	                        "health " SERVICE_A " "
	                        "0ddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"),
	    DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_sections_edit(SERVICE_B " - " DIGEST_F, SERVICE_B " " ENDPOINT_D " " DIGEST_F),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_sections_edit(SERVICE_B " " ENDPOINT_C " " DIGEST_E, SERVICE_B " - " DIGEST_F),
	                 DIRAUTH_ERR_SYNTAX);
	/* Field values: sequence 0, a leading zero, upper-case hex, a word for "-", a missing field. */
	ck_assert_int_eq(parse_sections_edit(" 1767225720 7 ", " 1767225720 0 "), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_sections_edit(" 1767225720 7 ", " 01767225720 7 "), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(
	    parse_sections_edit(ENDPOINT_C " 1767225720",
	                        "CCCCcccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
	                        " 1767225720"),
	    DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_sections_edit(SERVICE_B " - ", SERVICE_B " service "), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_sections_edit(" 1767225720 7 " DIGEST_E, " 1767225720 " DIGEST_E),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_sections_edit(SERVICE_B " - " DIGEST_F, SERVICE_B " " DIGEST_F),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_sections_edit(DIGEST_F "\nrevocations", DIGEST_F " 1\nrevocations"),
	                 DIRAUTH_ERR_SYNTAX);
	/* Counts that do not match the lines. */
	ck_assert_int_eq(parse_sections_edit("health 2\n", "health 1\n"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_sections_edit("revocations 2\n", "revocations 3\n"), DIRAUTH_ERR_SYNTAX);
}
END_TEST

START_TEST(test_sections_bounds)
{
	struct vote_body_limits limits = {2, 2, 2};
	ck_assert_int_eq(parse_sections_text(SECTIONS_BODY, &limits), 0);
	limits.max_health = 1;
	ck_assert_int_eq(parse_sections_text(SECTIONS_BODY, &limits), DIRAUTH_ERR_BOUNDS);
	limits.max_health = 2;
	limits.max_revocations = 1;
	ck_assert_int_eq(parse_sections_text(SECTIONS_BODY, &limits), DIRAUTH_ERR_BOUNDS);
	limits.max_revocations = 2;
	limits.max_records = 1;
	ck_assert_int_eq(parse_sections_text(SECTIONS_BODY, &limits), DIRAUTH_ERR_BOUNDS);
	/* The whole input bound. */
	limits.max_records = 2;
	ck_assert_uint_eq(vote_body_sections_max_bytes(&limits), 290 + 2 * 158 + 2 * 244 + 2 * 206 + 61);
	struct vote_body_limits huge = {SIZE_MAX, 1, 1};
	ck_assert_uint_eq(vote_body_sections_max_bytes(&huge), SIZE_MAX);
	struct vote_body_limits huge_health = {1, SIZE_MAX / 2, 1};
	ck_assert_uint_eq(vote_body_sections_max_bytes(&huge_health), SIZE_MAX);
	struct buffer big;
	buffer_init(&big);
	ck_assert_int_eq(buffer_append_string(&big, SECTIONS_BODY), 0);
	while (big.len <= vote_body_sections_max_bytes(&limits))
		ck_assert_int_eq(buffer_append_string(&big, "x"), 0);
	struct vote_body *body = NULL;
	ck_assert_int_eq(vote_body_parse_sections(big.data, big.len, &limits, &body), DIRAUTH_ERR_BOUNDS);
	buffer_free(&big);
	/* A count the bytes cannot hold, under a huge bound; an overlong section line. */
	ck_assert_int_eq(parse_sections_edit("health 2\n", "health 3\n"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_sections_edit("health 2\n", "health 100000000000\n"), DIRAUTH_ERR_BOUNDS);
	struct vote_body_limits unbounded = {1000, SIZE_MAX, SIZE_MAX};
	ck_assert_int_eq(parse_sections_text(EXAMPLE_BODY "health 18446744073709551615\n", &unbounded),
	                 DIRAUTH_ERR_SYNTAX);
	char line[VOTE_BODY_SECTION_LINE_MAX + 16];
	memset(line, '1', sizeof(line) - 1);
	line[sizeof(line) - 1] = 0;
	memcpy(line, "health ", 7);
	ck_assert_int_eq(
	    parse_sections_edit("health " SERVICE_A " " ENDPOINT_D " 1767225600 1 " DIGEST_F, line),
	    DIRAUTH_ERR_BOUNDS);
}
END_TEST

START_TEST(test_sections_encode_refusals)
{
	struct vote_body body;
	struct vote_body_record records[2];
	struct vote_body_health health[2];
	struct vote_body_revocation revocations[2];
	struct buffer out;
	buffer_init(&out);
	ck_assert_int_eq(buffer_append_string(&out, "kept"), 0);
	sections_body(&body, records, health, revocations);
	health[1] = health[0];
	ck_assert_int_eq(vote_body_encode(&body, &out), DIRAUTH_ERR_SYNTAX);
	sections_body(&body, records, health, revocations);
	health[0].sequence = 0;
	ck_assert_int_eq(vote_body_encode(&body, &out), DIRAUTH_ERR_SYNTAX);
	sections_body(&body, records, health, revocations);
	revocations[0].has_endpoint = 2;
	ck_assert_int_eq(vote_body_encode(&body, &out), DIRAUTH_ERR_SYNTAX);
	sections_body(&body, records, health, revocations);
	struct vote_body_revocation swap = revocations[0];
	revocations[0] = revocations[1];
	revocations[1] = swap;
	ck_assert_int_eq(vote_body_encode(&body, &out), DIRAUTH_ERR_SYNTAX);
	sections_body(&body, records, health, revocations);
	body.health = NULL;
	ck_assert_int_eq(vote_body_encode(&body, &out), DIRAUTH_ERR_SYNTAX);
	ck_assert_str_eq((const char *)out.data, "kept");
	/* Two revocations of one target with different digests are two items, in digest order. */
	sections_body(&body, records, health, revocations);
	revocations[0] = revocations[1];
	memset(revocations[0].revocation_sha256, 0xdd, 32);
	ck_assert_int_eq(vote_body_encode(&body, &out), 0);
	ck_assert_int_lt(vote_body_revocation_compare(&revocations[0], &revocations[1]), 0);
	ck_assert_int_eq(vote_body_health_compare(&health[0], &health[0]), 0);
	buffer_free(&out);
}
END_TEST

static Suite *vote_body_suite(void)
{
	Suite *suite = suite_create("vote_body");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_parse_refusals);
	tcase_add_test(tc, test_later_sections_refused);
	tcase_add_test(tc, test_bounds);
	tcase_add_test(tc, test_encode_refusals);
	tcase_add_test(tc, test_vector_body);
	tcase_add_test(tc, test_sections_round_trip);
	tcase_add_test(tc, test_sections_refusals);
	tcase_add_test(tc, test_sections_bounds);
	tcase_add_test(tc, test_sections_encode_refusals);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(vote_body_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
