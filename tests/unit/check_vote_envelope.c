/*
 * check_vote_envelope.c: a vote note and its body (v1) or delta (v2) framed by their lengths:
 * round trips of both versions, and refusal of every other framing, of bounds passed, and of bytes
 * after the second part.
 */
#include "base/error.h"
#include "schema/vote_envelope.h"

#include <check.h>

#include <string.h>

static int parse(const char *text, size_t max_body, struct vote_envelope *out)
{
	return vote_envelope_parse((const uint8_t *)text, strlen(text), max_body, out);
}

START_TEST(test_round_trip)
{
	struct buffer out;
	struct vote_envelope e;
	buffer_init(&out);
	ck_assert_int_eq(
	    vote_envelope_encode((const uint8_t *)"note\n", 5, (const uint8_t *)"body!", 5, &out), 0);
	ck_assert_str_eq((const char *)out.data, "dirauth vote-envelope v1\nnote 5\nnote\nbody 5\nbody!");
	ck_assert_int_eq(vote_envelope_parse(out.data, out.len, 5, &e), 0);
	ck_assert_uint_eq(e.note_len, 5);
	ck_assert(memcmp(e.note, "note\n", 5) == 0);
	ck_assert_uint_eq(e.body_len, 5);
	ck_assert(memcmp(e.body, "body!", 5) == 0);
	ck_assert_int_eq(vote_envelope_parse(out.data, out.len, 4, &e), DIRAUTH_ERR_BOUNDS);
	ck_assert_ptr_null(e.note);
	ck_assert_int_eq(vote_envelope_encode((const uint8_t *)"", 0, (const uint8_t *)"b", 1, &out),
	                 DIRAUTH_ERR_SYNTAX);
	buffer_free(&out);
}
END_TEST

/* Version 2: the note and a vote delta, the same framing under another first line and keyword. */
START_TEST(test_delta_round_trip)
{
	struct buffer out;
	struct vote_envelope e;
	buffer_init(&out);
	ck_assert_int_eq(
	    vote_envelope_encode_delta((const uint8_t *)"note\n", 5, (const uint8_t *)"delta\n", 6, &out), 0);
	ck_assert_str_eq((const char *)out.data, "dirauth vote-envelope v2\nnote 5\nnote\ndelta 6\ndelta\n");
	ck_assert_int_eq(vote_envelope_parse(out.data, out.len, 6, &e), 0);
	ck_assert_int_eq(e.delta, 1);
	ck_assert_uint_eq(e.note_len, 5);
	ck_assert_mem_eq(e.note, "note\n", 5);
	ck_assert_uint_eq(e.body_len, 6);
	ck_assert_mem_eq(e.body, "delta\n", 6);
	/* The delta is bounded as a body is. */
	ck_assert_int_eq(vote_envelope_parse(out.data, out.len, 5, &e), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(e.delta, 0);
	ck_assert_ptr_null(e.body);
	/* v1 says so. */
	buffer_reset(&out);
	ck_assert_int_eq(vote_envelope_encode((const uint8_t *)"n", 1, (const uint8_t *)"b", 1, &out), 0);
	ck_assert_int_eq(vote_envelope_parse(out.data, out.len, 1, &e), 0);
	ck_assert_int_eq(e.delta, 0);
	/* The encoder's refusals, out left as it was. */
	buffer_reset(&out);
	ck_assert_int_eq(vote_envelope_encode_delta((const uint8_t *)"n", 1, (const uint8_t *)"d", 0, &out),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(vote_envelope_encode_delta(NULL, 0, (const uint8_t *)"d", 1, &out),
	                 DIRAUTH_ERR_SYNTAX);
	static uint8_t long_note[VOTE_ENVELOPE_NOTE_MAX + 1];
	ck_assert_int_eq(
	    vote_envelope_encode_delta(long_note, sizeof(long_note), (const uint8_t *)"d", 1, &out),
	    DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(
	    vote_envelope_encode_delta(long_note, sizeof(long_note) - 1, (const uint8_t *)"d", 1, &out), 0);
	ck_assert_int_eq(vote_envelope_parse(out.data, out.len, 1, &e), 0);
	ck_assert_uint_eq(e.note_len, VOTE_ENVELOPE_NOTE_MAX);
	buffer_free(&out);
}
END_TEST

START_TEST(test_refusals)
{
	struct vote_envelope e;
	ck_assert_int_eq(parse("", 10, &e), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse("dirauth vote-envelope v3\nnote 1\nxbody 1\ny", 10, &e), DIRAUTH_ERR_SYNTAX);
	/* Each version with its own keyword only. */
	ck_assert_int_eq(parse("dirauth vote-envelope v2\nnote 1\nxbody 1\ny", 10, &e), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse("dirauth vote-envelope v1\nnote 1\nxdelta 1\ny", 10, &e), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse("dirauth vote-envelope v2\nnote 1\nxdelta 1\ny", 10, &e), 0);
	ck_assert_int_eq(parse("dirauth vote-envelope v2\nnote 1\nxdelta 1\nyz", 10, &e), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse("dirauth vote-envelope v2\nnote 1\nxdelta 0\n", 10, &e), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse("dirauth vote-envelope v2\nnote 1\nxdelta 2\ny", 10, &e), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(parse("dirauth vote-envelope v2\nnote 1\nx", 10, &e), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse("dirauth vote-envelope v2\ndelta 1\nynote 1\nx", 10, &e), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse("dirauth vote-envelope v2 \nnote 1\nxdelta 1\ny", 10, &e), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse("dirauth vote-envelope v1\nnote 01\nxbody 1\ny", 10, &e), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse("dirauth vote-envelope v1\nnote 0\nbody 1\ny", 10, &e), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse("dirauth vote-envelope v1\nnote +1\nxbody 1\ny", 10, &e), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse("dirauth vote-envelope v1\nnote  1\nxbody 1\ny", 10, &e), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse("dirauth vote-envelope v1\nbody 1\nynote 1\nx", 10, &e), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse("dirauth vote-envelope v1\nnote 1\nxbody 1\nyz", 10, &e), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse("dirauth vote-envelope v1\nnote 1\nxbody 2\ny", 10, &e), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(parse("dirauth vote-envelope v1\nnote 99\nxbody 1\ny", 10, &e), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(parse("dirauth vote-envelope v1\nnote 16385\nx", 10, &e), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(parse("dirauth vote-envelope v1\nnote 1\nxbody 99999999999999999999999\ny", 10, &e),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse("dirauth vote-envelope v1\nnote 1\nx", 10, &e), DIRAUTH_ERR_SYNTAX);
	/* A length line longer than any length needs. */
	ck_assert_int_eq(
	    parse("dirauth vote-envelope v1\nnote 1\nxbody 000000000000000000000000000001\ny", 10, &e),
	    DIRAUTH_ERR_BOUNDS);
}
END_TEST

/* The parts are raw bytes: a newline, a NUL or a byte above 0x7e inside one is no line. */
START_TEST(test_raw_parts)
{
	static const uint8_t text[] = "dirauth vote-envelope v1\nnote 3\n\n\0\nbody 7\nbody\xff\x01\n";
	static const uint8_t body[] = "body\xff\x01\n";
	struct vote_envelope e;
	struct buffer out;
	buffer_init(&out);
	ck_assert_int_eq(vote_envelope_encode((const uint8_t *)"\n\0\n", 3, body, sizeof(body) - 1, &out), 0);
	ck_assert_uint_eq(out.len, sizeof(text) - 1);
	ck_assert_mem_eq(out.data, text, out.len);
	ck_assert_int_eq(vote_envelope_parse(text, sizeof(text) - 2, 10, &e), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(vote_envelope_parse(text, sizeof(text) - 1, 10, &e), 0);
	ck_assert_uint_eq(e.note_len, 3);
	ck_assert_mem_eq(e.note, "\n\0\n", 3);
	ck_assert_uint_eq(e.body_len, 7);
	ck_assert_mem_eq(e.body, body, 7);
	buffer_free(&out);
}
END_TEST

static Suite *envelope_suite(void)
{
	Suite *suite = suite_create("vote_envelope");
	TCase *tc = tcase_create("vote_envelope");
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_delta_round_trip);
	tcase_add_test(tc, test_refusals);
	tcase_add_test(tc, test_raw_parts);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(envelope_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
