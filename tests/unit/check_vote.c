/*
 * check_vote.c: the vote codec: the exact text of an example vote, round trips, a vote signed
 * by an authority's key, and every refusal of the parser and the encoder.
 */
#include "crypto/crypto.h"
#include "base/error.h"
#include "test_keys.h"
#include "schema/vote.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXAMPLE_VOTE                                                                                         \
	"dirauth vote v1\n"                                                                                  \
	"namespace example-net\n"                                                                            \
	"origin dirauth.example/log/example-net\n"                                                           \
	"epoch 29453762\n"                                                                                   \
	"authority authority-1.example\n"                                                                    \
	"records 3\n"                                                                                        \
	"records-root 0101010101010101010101010101010101010101010101010101010101010101\n"                    \
	"body-sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"                     \
	"previous-epoch 29453761\n"                                                                          \
	"previous 0202020202020202020202020202020202020202020202020202020202020202\n"                        \
	"consensus-methods 1 2\n"

static void example_vote(struct vote *v)
{
	memset(v, 0, sizeof(*v));
	strcpy(v->namespace_name, "example-net");
	strcpy(v->origin, "dirauth.example/log/example-net");
	v->epoch = 29453762;
	strcpy(v->authority, "authority-1.example");
	v->record_count = 3;
	memset(v->records_root, 0x01, 32);
	ck_assert_int_eq(crypto_sha256((const uint8_t *)"", 0, v->body_sha256), 0);
	v->previous_epoch = 29453761;
	memset(v->previous, 0x02, 32);
	v->method_count = 2;
	v->methods[0] = 1;
	v->methods[1] = 2;
}

static int parse_text(const char *text, struct vote *out)
{
	return vote_parse((const uint8_t *)text, strlen(text), out);
}

/* Parses EXAMPLE_VOTE with from replaced by to. */
static int parse_edit(const char *from, const char *to)
{
	struct buffer edited;
	struct vote v;
	buffer_init(&edited);
	test_text_replace((const uint8_t *)EXAMPLE_VOTE, strlen(EXAMPLE_VOTE), from, to, &edited);
	int rc = vote_parse(edited.data, edited.len, &v);
	buffer_free(&edited);
	return rc;
}

START_TEST(test_round_trip)
{
	struct vote v, parsed;
	struct buffer out;
	buffer_init(&out);
	example_vote(&v);
	ck_assert_int_eq(vote_encode(&v, &out), 0);
	ck_assert_str_eq((const char *)out.data, EXAMPLE_VOTE);
	ck_assert_int_eq(parse_text(EXAMPLE_VOTE, &parsed), 0);
	ck_assert_str_eq(parsed.namespace_name, "example-net");
	ck_assert_str_eq(parsed.origin, "dirauth.example/log/example-net");
	ck_assert_uint_eq(parsed.epoch, 29453762);
	ck_assert_str_eq(parsed.authority, "authority-1.example");
	ck_assert_uint_eq(parsed.record_count, 3);
	ck_assert(memcmp(parsed.records_root, v.records_root, 32) == 0);
	ck_assert(memcmp(parsed.body_sha256, v.body_sha256, 32) == 0);
	ck_assert_uint_eq(parsed.previous_epoch, 29453761);
	ck_assert(memcmp(parsed.previous, v.previous, 32) == 0);
	ck_assert_uint_eq(parsed.method_count, 2);
	ck_assert_uint_eq(parsed.methods[1], 2);
	/* Extremes: epoch 0 (with no previous) and the largest counts. */
	v.epoch = 0;
	v.previous_epoch = 0;
	memset(v.previous, 0, 32);
	v.record_count = UINT64_MAX;
	buffer_reset(&out);
	ck_assert_int_eq(vote_encode(&v, &out), 0);
	ck_assert_int_eq(vote_parse(out.data, out.len, &parsed), 0);
	ck_assert_uint_eq(parsed.record_count, UINT64_MAX);

	/* A vote signed by its authority verifies as a note by that key. */
	struct test_key authority;
	test_key_load(TEST_KEY_AUTHORITY_1, &authority);
	buffer_reset(&out);
	test_key_sign_note(&authority, 1, (const uint8_t *)EXAMPLE_VOTE, strlen(EXAMPLE_VOTE), &out);
	struct note *note = NULL;
	ck_assert_int_eq(note_parse(out.data, out.len, &note), 0);
	ck_assert_int_eq(vote_parse(note->text, note->text_len, &parsed), 0);
	ck_assert_int_eq(note_verify_threshold(note, &authority.verifier, 1, 1), 0);
	note_free(note);
	test_key_free(&authority);
	buffer_free(&out);
}
END_TEST

START_TEST(test_parse_refusals)
{
	ck_assert_int_eq(parse_edit("vote v1", "vote v2"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit("dirauth vote v1", "dirauth snapshot v1"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit("example-net\n", "Example-net\n"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit("example-net\n", "-example-net\n"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit("origin dirauth", "origin dir+auth"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit("origin dirauth", "origin dir auth"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit("epoch 29453762", "epoch 029453762"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit("epoch 29453762", "epoch -1"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit("epoch 29453762", "epoch 18446744073709551616"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit("authority authority-1.example", "authority authority+1"),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit("authority authority-1.example", "authority two words"),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit("records 3", "records  3"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit("records-root 01", "records-root 0A"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit("records-root 01", "records-root 1"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit("e3b0c442", "E3B0C442"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit("records 3\n", ""), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit("epoch 29453762\nauthority authority-1.example\n",
	                            "authority authority-1.example\nepoch 29453762\n"),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit("b855\n", "b855\nextra line\n"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit("b855\n", "b855"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit("b855\n", "b855\r\n"), DIRAUTH_ERR_SYNTAX);
	/* The previous and the methods: one spelling, and consistent. */
	ck_assert_int_eq(parse_edit("previous-epoch 29453761", "previous-epoch 29453762"),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit("previous-epoch 29453761", "previous-epoch 0"), 0);
	ck_assert_int_eq(
	    parse_edit("previous 0202020202020202020202020202020202020202020202020202020202020202",
	               "previous 0000000000000000000000000000000000000000000000000000000000000000"),
	    DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit("consensus-methods 1 2", "consensus-methods 2 1"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit("consensus-methods 1 2", "consensus-methods 1 1"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit("consensus-methods 1 2", "consensus-methods 0 1"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit("consensus-methods 1 2", "consensus-methods 1  2"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit("consensus-methods 1 2", "consensus-methods 1 2 "), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit("consensus-methods 1 2", "consensus-methods "), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_edit("consensus-methods 1 2",
	                            "consensus-methods 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17"),
	                 DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(parse_edit("consensus-methods 1 2\n", ""), DIRAUTH_ERR_SYNTAX);
	struct vote v;
	ck_assert_int_eq(parse_text("", &v), DIRAUTH_ERR_SYNTAX);

	/* Too long an authority name, an origin line over the line bound, the whole-text bound. */
	char name[NOTE_NAME_MAX + 2];
	memset(name, 'a', NOTE_NAME_MAX + 1);
	name[NOTE_NAME_MAX + 1] = 0;
	char to[NOTE_NAME_MAX + 16];
	snprintf(to, sizeof(to), "authority %s", name);
	ck_assert_int_eq(parse_edit("authority authority-1.example", to), DIRAUTH_ERR_BOUNDS);
	char origin[400];
	memset(origin, 'o', 330);
	memcpy(origin, "origin ", 7);
	origin[330] = 0;
	ck_assert_int_eq(parse_edit("origin dirauth.example/log/example-net", origin), DIRAUTH_ERR_BOUNDS);
	uint8_t *big = calloc(1, VOTE_MAX_BYTES + 1);
	ck_assert(big != NULL);
	ck_assert_int_eq(vote_parse(big, VOTE_MAX_BYTES + 1, &v), DIRAUTH_ERR_BOUNDS);
	free(big);
	/* A refused parse leaves nothing behind. */
	ck_assert_uint_eq(v.epoch, 0);
	ck_assert_str_eq(v.origin, "");
}
END_TEST

START_TEST(test_encode_refusals)
{
	struct vote v;
	struct buffer out;
	buffer_init(&out);
	example_vote(&v);
	strcpy(v.namespace_name, "Bad");
	ck_assert_int_eq(vote_encode(&v, &out), DIRAUTH_ERR_SYNTAX);
	example_vote(&v);
	v.namespace_name[0] = 0;
	ck_assert_int_eq(vote_encode(&v, &out), DIRAUTH_ERR_SYNTAX);
	example_vote(&v);
	strcpy(v.origin, "has space");
	ck_assert_int_eq(vote_encode(&v, &out), DIRAUTH_ERR_SYNTAX);
	example_vote(&v);
	v.origin[0] = 0;
	ck_assert_int_eq(vote_encode(&v, &out), DIRAUTH_ERR_SYNTAX);
	example_vote(&v);
	strcpy(v.authority, "caf\xc3\xa9"); /* a valid key name, but not ASCII */
	ck_assert_int_eq(vote_encode(&v, &out), DIRAUTH_ERR_SYNTAX);
	example_vote(&v);
	strcpy(v.authority, "a+b");
	ck_assert_int_eq(vote_encode(&v, &out), DIRAUTH_ERR_SYNTAX);
	example_vote(&v);
	memset(v.authority, 'a', sizeof(v.authority)); /* not terminated */
	ck_assert_int_eq(vote_encode(&v, &out), DIRAUTH_ERR_SYNTAX);
	ck_assert_uint_eq(out.len, 0);
	buffer_free(&out);
}
END_TEST

static Suite *vote_suite(void)
{
	Suite *suite = suite_create("vote");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_parse_refusals);
	tcase_add_test(tc, test_encode_refusals);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(vote_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
