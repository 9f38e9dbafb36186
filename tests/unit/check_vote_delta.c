/*
 * check_vote_delta.c: a vote body as its difference from a base body: the vector of
 * tests/vectors/vote-delta/ both ways (encode from the two bodies, apply to the base) and as
 * schema/vote-delta.md shows it, round trips of other pairs, the bounds that refuse before
 * allocating, the refusals of the applier (with refusal vectors) and of the encoder.
 */
#include "base/error.h"
#include "schema/vote_delta.h"
#include "invalid_vectors.h"
#include "lifecycle_fixture.h"
#include "test_keys.h"
#include "test_support.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VECTORS "tests/vectors/vote-delta/"
#define PAGE    "schema/vote-delta.md"

#define S0F "0f14ccbce9ef903aa564cbea957ecc77db05b68aa21962118da705b988999503"
#define S76 "769cece0f989e9d7ed58fa517c8ffa7db41124c02e36d1b499f182ed0076c4f7"
#define SC0 "c07b0cf609811b4a2a768bca5bb451a912828df5780ab80bab759734dd9e98c9"
#define SCC "ccc2876b7de7171c34d35b4bac727349681ce93570cbc10a3cb4288ab51e1174"
#define E16 "169127f99d9ac98d27707835a2a5b646205cd4a3ebc083c5786747d5de81232a"
#define E7A "7a0b5a1043587339f2260fbecb03d04d3aaab3cc9333d8664515ec52de148cbb"
#define EBB "bb4eedfe38354be5e13aca8187d9724ac0720aae57cab48f6905f6e3397690bc"
#define D96 "96b8b48f6264ab9e7b306da3256fd196f85589d2a685e7affd0c88c88ddbb7c1"
#define D99 "99f58af78e13ad056f7bf3580e136595447291c8419ef3a52bae7102c09076bd"

static const struct vote_body_limits wide = {1000, 1000, 1000};

/* A file of the vector, NUL-terminated, in a buffer. */
static void vector_read(const char *name, struct buffer *out)
{
	char relative[256];
	size_t len = 0;
	snprintf(relative, sizeof(relative), VECTORS "%s", name);
	uint8_t *data = test_read_file(test_source_path(relative), &len);
	buffer_init(out);
	ck_assert_int_eq(buffer_append(out, data, len), 0);
	free(data);
}

static struct vote_body *vector_body(const char *name)
{
	struct buffer text;
	struct vote_body *body = NULL;
	vector_read(name, &text);
	ck_assert_int_eq(vote_body_parse_sections(text.data, text.len, &wide, &body), 0);
	buffer_free(&text);
	return body;
}

static void stand_in_digest(uint8_t digest[32])
{
	memset(digest, 0xb0, 32);
}

/* The base the applier of the refusal vectors reads. */
static struct vote_body *vector_base;

static int apply_limited(const struct vote_body *base, const uint8_t *delta, size_t len,
                         const struct vote_body_limits *limits)
{
	struct vote_body *out = (struct vote_body *)1;
	int rc =
	    vote_delta_apply(base, delta, len, limits, "example-net", 29453762, "authority-1.example", &out);
	ck_assert(rc == 0 ? out != NULL : out == NULL);
	vote_body_free(out);
	return rc;
}

static int apply_to_vector_base(const uint8_t *delta, size_t len)
{
	return apply_limited(vector_base, delta, len, &wide);
}

/* Applies delta.txt with from replaced by to. */
static int apply_edit(const char *from, const char *to)
{
	struct buffer delta, edited;
	vector_read("delta.txt", &delta);
	buffer_init(&edited);
	test_text_replace(delta.data, delta.len, from, to, &edited);
	int rc = apply_to_vector_base(edited.data, edited.len);
	buffer_free(&edited);
	buffer_free(&delta);
	return rc;
}

START_TEST(test_vector)
{
	struct vote_body *base = vector_body("base-body.txt"), *target = vector_body("target-body.txt");
	struct buffer delta, target_text, out;
	uint8_t digest[32], read_back[32];
	vector_read("delta.txt", &delta);
	vector_read("target-body.txt", &target_text);
	buffer_init(&out);
	stand_in_digest(digest);
	ck_assert_int_eq(vote_delta_encode(base, target, digest, &out), 0);
	ck_assert_uint_eq(out.len, delta.len);
	ck_assert_mem_eq(out.data, delta.data, delta.len);
	lifecycle_page_shows(PAGE, delta.data, delta.len);
	lifecycle_page_shows(PAGE, target_text.data, target_text.len);
	struct buffer base_text;
	vector_read("base-body.txt", &base_text);
	lifecycle_page_shows(PAGE, base_text.data, base_text.len);
	buffer_free(&base_text);

	ck_assert_int_eq(vote_delta_base(delta.data, delta.len, read_back), 0);
	ck_assert_mem_eq(read_back, digest, 32);

	/* Applied to the base with the vote's preamble, the delta rebuilds the target's bytes. */
	struct vote_body *rebuilt = NULL;
	ck_assert_int_eq(vote_delta_apply(base, delta.data, delta.len, &wide, target->namespace_name,
	                                  target->epoch, target->authority, &rebuilt),
	                 0);
	buffer_reset(&out);
	ck_assert_int_eq(vote_body_encode(rebuilt, &out), 0);
	ck_assert_uint_eq(out.len, target_text.len);
	ck_assert_mem_eq(out.data, target_text.data, target_text.len);
	/* The result owns its items. */
	buffer_free(&delta);
	vote_body_free(base);
	buffer_reset(&out);
	ck_assert_int_eq(vote_body_encode(rebuilt, &out), 0);
	ck_assert_mem_eq(out.data, target_text.data, target_text.len);
	vote_body_free(rebuilt);
	vote_body_free(target);
	buffer_free(&target_text);
	buffer_free(&out);
}
END_TEST

/* Encodes the delta from base to target, applies it, and checks that the result is target. */
static void round_trip(const struct vote_body *base, const struct vote_body *target, const char *expected)
{
	uint8_t digest[32];
	struct buffer delta, target_text, rebuilt_text;
	buffer_init(&delta);
	buffer_init(&target_text);
	buffer_init(&rebuilt_text);
	stand_in_digest(digest);
	ck_assert_int_eq(vote_delta_encode(base, target, digest, &delta), 0);
	if (expected)
		ck_assert_str_eq((const char *)delta.data, expected);
	struct vote_body *rebuilt = NULL;
	ck_assert_int_eq(vote_delta_apply(base, delta.data, delta.len, &wide, target->namespace_name,
	                                  target->epoch, target->authority, &rebuilt),
	                 0);
	ck_assert_int_eq(vote_body_encode(target, &target_text), 0);
	ck_assert_int_eq(vote_body_encode(rebuilt, &rebuilt_text), 0);
	ck_assert_str_eq((const char *)rebuilt_text.data, (const char *)target_text.data);
	vote_body_free(rebuilt);
	buffer_free(&delta);
	buffer_free(&target_text);
	buffer_free(&rebuilt_text);
}

#define EMPTY_DELTA                                                                                          \
	"dirauth vote-delta v1\nbase b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0\n"     \
	"records 0\nhealth 0\nrevocations 0\n"

START_TEST(test_round_trips)
{
	struct vote_body *base = vector_body("base-body.txt"), *target = vector_body("target-body.txt");
	struct vote_body empty;
	memset(&empty, 0, sizeof(empty));
	strcpy(empty.namespace_name, "example-net");
	strcpy(empty.authority, "authority-2.example");
	empty.epoch = 29453762;
	/* Nothing changed: three empty sections, whatever the preambles. */
	round_trip(base, base, EMPTY_DELTA);
	round_trip(target, target, EMPTY_DELTA);
	/* From nothing: every item a put; to nothing: every item a del (the revocations too). */
	round_trip(&empty, target, NULL);
	round_trip(target, &empty, NULL);
	round_trip(&empty, &empty, EMPTY_DELTA);
	/* Back from the target to the base: a revocation del, the reverse of each put. */
	round_trip(target, base, NULL);
	/* Records only: a method-1 body. */
	struct vote_body records_only = *target;
	records_only.health_count = 0;
	records_only.revocation_count = 0;
	round_trip(base, &records_only, NULL);
	round_trip(&records_only, base, NULL);
	vote_body_free(base);
	vote_body_free(target);
}
END_TEST

START_TEST(test_base_line)
{
	uint8_t digest[32];
	const char *ok = "dirauth vote-delta v1\nbase " S0F "\n";
	ck_assert_int_eq(vote_delta_base((const uint8_t *)ok, strlen(ok), digest), 0);
	ck_assert_uint_eq(digest[0], 0x0f);
	ck_assert_uint_eq(digest[31], 0x03);
	/* Only the two lines are read: what follows does not matter here. */
	ck_assert_int_eq(vote_delta_base((const uint8_t *)EMPTY_DELTA "x", strlen(EMPTY_DELTA) + 1, digest),
	                 0);
	const char *refused[] = {
	    "",
	    "dirauth vote-delta v1\n",
	    "dirauth vote-delta v2\nbase " S0F "\n",
	    "dirauth vote-delta v1\nbase " S0F,
	    "dirauth vote-delta v1\nbase 0F14ccbce9ef903aa564cbea957ecc77db05b68aa21962118da705b988999503\n",
	    "dirauth vote-delta v1\nbase " S0F "00\n",
	    "dirauth vote-delta v1\nbase  " S0F "\n",
	    "dirauth vote-delta v1\nrecords 0\n",
	};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		ck_assert_int_eq(vote_delta_base((const uint8_t *)refused[i], strlen(refused[i]), digest),
		                 DIRAUTH_ERR_SYNTAX);
}
END_TEST

START_TEST(test_apply_refusals)
{
	vector_base = vector_body("base-body.txt");
	struct buffer delta;
	vector_read("delta.txt", &delta);
	ck_assert_int_eq(apply_to_vector_base(delta.data, delta.len), 0);
	/* A del of a key the base does not hold; a put equal to the base's item. */
	ck_assert_int_eq(apply_edit("del " SC0, "del " SCC), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(apply_edit("del c07b0cf6", "del c07b0cf7"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(apply_edit("del " SCC " " E7A, "del " SCC " " EBB), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(apply_edit("put " SCC " 2 " D99, "put " SCC " 1 " D96), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(apply_edit("put " SCC " 2 " D99, "put " SCC " 2 " D96), 0);
	/* Order: two operations of one key, operations out of order. */
	ck_assert_int_eq(apply_edit("del " SC0 "\n", "put " SC0 " 2 " D99 "\ndel " SC0 "\n"),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(apply_edit("put " S0F, "put " SCC), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(apply_edit("put " SC0 " - ", "put " SCC " " EBB " "), DIRAUTH_ERR_SYNTAX);
	/* The whole service before its endpoints is the order, not a disorder. */
	ck_assert_int_eq(apply_edit("put " SC0 " - ", "put " SCC " - "), 0);
	/* Counts that do not match the operations; sections missing, repeated or out of order. */
	ck_assert_int_eq(apply_edit("records 3\n", "records 2\n"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(apply_edit("records 3\n", "records 4\n"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(apply_edit("revocations 2\n", "revocations 1\n"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(apply_edit("revocations 2\n", "revocations 3\n"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(apply_edit("health 3\n", "health 3\nhealth 0\n"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(apply_edit("records 3\n", "records 03\n"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(apply_to_vector_base((const uint8_t *)EMPTY_DELTA, strlen(EMPTY_DELTA)), 0);
	const char *sections[] = {
	    "records 0\nhealth 0\n",
	    "records 0\nrevocations 0\nhealth 0\n",
	    "health 0\nrecords 0\nrevocations 0\n",
	    "records 0\nhealth 0\nrevocations 0\nrevocations 0\n",
	    "records 0\nhealth 0\nrevocations 0\nderegistrations 0\n",
	    "records 0\nhealth 0\nrevocations 0\n\n",
	};
	for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++) {
		struct buffer edited;
		buffer_init(&edited);
		test_text_replace((const uint8_t *)EMPTY_DELTA, strlen(EMPTY_DELTA),
		                  "records 0\nhealth 0\nrevocations 0\n", sections[i], &edited);
		ck_assert_int_eq(apply_to_vector_base(edited.data, edited.len), DIRAUTH_ERR_SYNTAX);
		buffer_free(&edited);
	}
	/* Spellings: the operation word, upper-case hex, a leading zero, sequence 0, a del with a
	 * put's fields, a put with a del's, doubled and trailing spaces, CR, no final newline. */
	ck_assert_int_eq(apply_edit("del " SC0, "set " SC0), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(apply_edit("del " SC0, "DEL " SC0), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(apply_edit("put 0f14", "put 0F14"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(apply_edit(SCC " 2 ", SCC " 02 "), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(apply_edit(SCC " 2 ", SCC " 0 "), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(apply_edit(" 1767225710 5 ", " 1767225710 0 "), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(apply_edit("del " SC0 "\n", "del " SC0 " 1 " D99 "\n"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(apply_edit("put " S0F " 1 ", "put " S0F "\nx "), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(apply_edit("del " SCC " " E7A "\n", "del " SCC " " E7A " 1\n"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(apply_edit("del " SCC " " E7A "\n", "del " SCC "\n"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(apply_edit("put " SC0 " - ", "put " SC0 " all "), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(apply_edit("del " SC0, "del  " SC0), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(apply_edit("del " SC0 "\n", "del " SC0 " \n"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(apply_edit("del " SC0 "\n", "del " SC0 "\r\n"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(apply_edit("fba8d9d2fd32f73072c70e8b6b575006261e7cd08e21435f56aeaaea8d2dcd2e\n",
	                            "fba8d9d2fd32f73072c70e8b6b575006261e7cd08e21435f56aeaaea8d2dcd2e"),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(apply_edit("dirauth vote-delta v1", "dirauth vote-delta v2"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(apply_edit("base b0", "base B0"), DIRAUTH_ERR_SYNTAX);
	/* The target's preamble comes from the caller and must be names. */
	struct vote_body *out = NULL;
	ck_assert_int_eq(vote_delta_apply(vector_base, delta.data, delta.len, &wide, "Example", 1, "a", &out),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(
	    vote_delta_apply(vector_base, delta.data, delta.len, &wide, "example-net", 1, "two words", &out),
	    DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(vote_delta_apply(vector_base, delta.data, delta.len, &wide, "", 1, "a", &out),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_ptr_null(out);
	buffer_free(&delta);
	vote_body_free(vector_base);
	vector_base = NULL;
}
END_TEST

/* A revocation is its own key: putting one the base holds is an equal put; deleting it works. */
START_TEST(test_revocation_keys)
{
	struct vote_body *base = vector_body("target-body.txt");
	const char *prefix =
	    "dirauth vote-delta v1\nbase b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0\n"
	    "records 0\nhealth 0\n";
	struct buffer text;
	buffer_init(&text);
	ck_assert_int_eq(buffer_appendf(&text, "%srevocations 1\nput " SC0 " - %s\n", prefix,
	                                "ced2560005044f629c152d5c0469aef02edbeafe2b83c348dd88f8b57f05dbc9"),
	                 0);
	ck_assert_int_eq(apply_limited(base, text.data, text.len, &wide), DIRAUTH_ERR_SYNTAX);
	buffer_reset(&text);
	ck_assert_int_eq(buffer_appendf(&text, "%srevocations 1\ndel " SC0 " - %s\n", prefix,
	                                "ced2560005044f629c152d5c0469aef02edbeafe2b83c348dd88f8b57f05dbc9"),
	                 0);
	ck_assert_int_eq(apply_limited(base, text.data, text.len, &wide), 0);
	/* Another digest for the same target is another revocation: added beside it. */
	buffer_reset(&text);
	ck_assert_int_eq(buffer_appendf(&text, "%srevocations 1\nput " SC0 " - %s\n", prefix, D99), 0);
	struct vote_body *out = NULL;
	ck_assert_int_eq(vote_delta_apply(base, text.data, text.len, &wide, "example-net", 1, "a", &out), 0);
	ck_assert_uint_eq(out->revocation_count, 3);
	ck_assert_uint_eq(out->revocations[1].revocation_sha256[0], 0xce);
	ck_assert_uint_eq(out->revocations[0].revocation_sha256[0], 0x99);
	vote_body_free(out);
	buffer_free(&text);
	vote_body_free(base);
}
END_TEST

START_TEST(test_bounds)
{
	struct vote_body *base = vector_body("base-body.txt");
	struct buffer delta;
	vector_read("delta.txt", &delta);
	/* The result's records (3), health entries (4) and revocations (2) at their bounds pass. */
	struct vote_body_limits limits = {3, 4, 2};
	ck_assert_int_eq(apply_limited(base, delta.data, delta.len, &limits), 0);
	/* One fewer records or health entries: the result is past its bound. */
	limits.max_records = 2;
	ck_assert_int_eq(apply_limited(base, delta.data, delta.len, &limits), DIRAUTH_ERR_BOUNDS);
	limits.max_records = 3;
	limits.max_health = 3;
	ck_assert_int_eq(apply_limited(base, delta.data, delta.len, &limits), DIRAUTH_ERR_BOUNDS);
	/* A count above the base's items plus the bound is refused from its line: the base holds no
	 * revocation, so 2 revocation operations under a bound of 1 are too many. */
	limits.max_health = 4;
	limits.max_revocations = 1;
	ck_assert_int_eq(apply_limited(base, delta.data, delta.len, &limits), DIRAUTH_ERR_BOUNDS);
	struct vote_body_limits none = {0, 0, 0};
	ck_assert_int_eq(apply_limited(base, delta.data, delta.len, &none), DIRAUTH_ERR_BOUNDS);
	/* The base's items alone count: records 3 deletions of a base of 3 under a bound of 0. */
	struct buffer all_gone;
	buffer_init(&all_gone);
	ck_assert_int_eq(buffer_appendf(&all_gone,
	                                "dirauth vote-delta v1\nbase %s\nrecords 3\ndel " S76 "\ndel " SC0
	                                "\ndel " SCC "\nhealth 0\nrevocations 0\n",
	                                "b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0"),
	                 0);
	struct vote_body_limits no_records = {0, 4, 0};
	ck_assert_int_eq(apply_limited(base, all_gone.data, all_gone.len, &no_records), 0);
	buffer_free(&all_gone);
	/* A count the bytes cannot hold, under bounds that allow it, before any allocation. */
	vector_base = base;
	ck_assert_int_eq(apply_edit("records 3\n", "records 30\n"), DIRAUTH_ERR_SYNTAX);
	struct vote_body_limits huge = {SIZE_MAX, SIZE_MAX, SIZE_MAX};
	struct buffer edited;
	buffer_init(&edited);
	test_text_replace(delta.data, delta.len, "records 3\n", "records 18446744073709551615\n", &edited);
	ck_assert_int_eq(apply_limited(base, edited.data, edited.len, &huge), DIRAUTH_ERR_SYNTAX);
	buffer_reset(&edited);
	/* Under the vector's bounds the same count is past them. */
	ck_assert_int_eq(apply_edit("records 3\n", "records 100000\n"), DIRAUTH_ERR_BOUNDS);
	vector_base = NULL;
	/* A line over VOTE_DELTA_LINE_MAX. */
	char line[VOTE_DELTA_LINE_MAX + 16];
	memset(line, '1', sizeof(line) - 1);
	line[sizeof(line) - 1] = 0;
	memcpy(line, "put ", 4);
	test_text_replace(delta.data, delta.len, "put " S0F " 1", line, &edited);
	ck_assert_int_eq(apply_limited(base, edited.data, edited.len, &wide), DIRAUTH_ERR_BOUNDS);
	buffer_free(&edited);
	buffer_free(&delta);
	vote_body_free(base);
}
END_TEST

START_TEST(test_encode_refusals)
{
	struct vote_body *base = vector_body("base-body.txt"), *target = vector_body("target-body.txt");
	uint8_t digest[32];
	struct buffer out;
	buffer_init(&out);
	stand_in_digest(digest);
	ck_assert_int_eq(buffer_append_string(&out, "kept"), 0);
	/* Items out of order in either body, an invalid item in either, a NULL array. */
	struct vote_body_record record = target->records[0];
	target->records[0] = target->records[1];
	target->records[1] = record;
	ck_assert_int_eq(vote_delta_encode(base, target, digest, &out), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(vote_delta_encode(target, base, digest, &out), DIRAUTH_ERR_SYNTAX);
	target->records[1] = target->records[0];
	target->records[0] = record;
	target->health[1].sequence = 0;
	ck_assert_int_eq(vote_delta_encode(base, target, digest, &out), DIRAUTH_ERR_SYNTAX);
	target->health[1].sequence = 1;
	target->revocations[0].has_endpoint = 2;
	ck_assert_int_eq(vote_delta_encode(base, target, digest, &out), DIRAUTH_ERR_SYNTAX);
	target->revocations[0].has_endpoint = 0;
	struct vote_body_health *health = base->health;
	base->health = NULL;
	ck_assert_int_eq(vote_delta_encode(base, target, digest, &out), DIRAUTH_ERR_SYNTAX);
	/* The applier refuses a base out of order or holding NULL items too. */
	struct buffer delta;
	vector_read("delta.txt", &delta);
	ck_assert_int_eq(apply_limited(base, delta.data, delta.len, &wide), DIRAUTH_ERR_SYNTAX);
	base->health = health;
	struct vote_body_record swap = base->records[1];
	base->records[1] = base->records[2];
	base->records[2] = swap;
	ck_assert_int_eq(apply_limited(base, delta.data, delta.len, &wide), DIRAUTH_ERR_SYNTAX);
	ck_assert_str_eq((const char *)out.data, "kept");
	buffer_free(&delta);
	buffer_free(&out);
	vote_body_free(base);
	vote_body_free(target);
}
END_TEST

/* Each case is one edit of delta.txt, checked in under invalid/ for other implementations. */
static const struct invalid_case invalid_cases[] = {
    {"del-not-in-base", "del c07b0cf6", "del c07b0cf7", DIRAUTH_ERR_SYNTAX},
    {"equal-put", "put " SCC " 2 " D99, "put " SCC " 1 " D96, DIRAUTH_ERR_SYNTAX},
    {"out-of-order", "put " S0F, "put " SCC, DIRAUTH_ERR_SYNTAX},
    {"two-operations-one-key", "del " SC0 "\n", "put " SC0 " 2 " D99 "\ndel " SC0 "\n", DIRAUTH_ERR_SYNTAX},
    {"count-past-bytes", "health 3\n", "health 9\n", DIRAUTH_ERR_SYNTAX},
    {"count-past-bounds", "health 3\n", "health 1005\n", DIRAUTH_ERR_BOUNDS},
    {"sequence-zero", SCC " 2 ", SCC " 0 ", DIRAUTH_ERR_SYNTAX},
    {"upper-case-hex", "put 0f14", "put 0F14", DIRAUTH_ERR_SYNTAX},
    {"section-missing", "health 3\n", "", DIRAUTH_ERR_SYNTAX},
    {"line-after-end", "revocations 2\n", "revocations 1\n", DIRAUTH_ERR_SYNTAX},
};

START_TEST(test_invalid_vectors)
{
	vector_base = vector_body("base-body.txt");
	struct buffer delta;
	vector_read("delta.txt", &delta);
	invalid_vectors_check(VECTORS "invalid/", &delta, invalid_cases,
	                      sizeof(invalid_cases) / sizeof(invalid_cases[0]), apply_to_vector_base);
	buffer_free(&delta);
	vote_body_free(vector_base);
	vector_base = NULL;
}
END_TEST

static Suite *vote_delta_suite(void)
{
	Suite *suite = suite_create("vote_delta");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_vector);
	tcase_add_test(tc, test_round_trips);
	tcase_add_test(tc, test_base_line);
	tcase_add_test(tc, test_apply_refusals);
	tcase_add_test(tc, test_revocation_keys);
	tcase_add_test(tc, test_bounds);
	tcase_add_test(tc, test_encode_refusals);
	tcase_add_test(tc, test_invalid_vectors);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(vote_delta_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
