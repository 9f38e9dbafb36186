/*
 * check_evidence.c: the evidence file's grammar (schema/evidence.h): the files of each kind round
 * trip byte for byte, and every other spelling, order, count and bound is refused. What the
 * statements in a file prove is checked against a real dirauthd in check_monitor.c.
 */
#include "base/error.h"
#include "schema/evidence.h"

#include <check.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ORIGIN "dirauth.example/mix"
/* An identity key and a cosignature key as verifier strings (the example keys' spelling). */
static struct note_verifier key_a, key_b;

static void make_keys(void)
{
	uint8_t public_a[32], public_b[32];
	memset(public_a, 0x11, sizeof public_a);
	memset(public_b, 0x22, sizeof public_b);
	ck_assert_int_eq(note_verifier_from_key(ORIGIN, NOTE_KEY_TYPE_ED25519, public_a, &key_a), 0);
	ck_assert_int_eq(note_verifier_from_key("witness.example", 0x04, public_b, &key_b), 0);
}

static void base(struct evidence *e, enum evidence_kind kind)
{
	memset(e, 0, sizeof *e);
	e->kind = kind;
	snprintf(e->origin, sizeof e->origin, "%s", ORIGIN);
	e->epoch = kind == EVIDENCE_CHECKPOINTS ? 0 : 12;
	e->statements[0].data = (const uint8_t *)"first\n";
	e->statements[0].len = 6;
	e->statements[1].data = (const uint8_t *)"second\n";
	e->statements[1].len = 7;
	if (kind != EVIDENCE_CHECKPOINTS) {
		e->certificate_count = 1;
		e->certificates[0].data = (const uint8_t *)"certificates\n";
		e->certificates[0].len = 13;
	}
}

static int parse_text(const char *text, struct evidence *out)
{
	return evidence_parse((const uint8_t *)text, strlen(text), out);
}

START_TEST(test_round_trip)
{
	struct evidence e, back;
	struct buffer out;
	char key_text[NOTE_VERIFIER_KEY_MAX + 1], expected[2048];
	make_keys();
	buffer_init(&out);

	base(&e, EVIDENCE_CHECKPOINTS);
	e.keys[0] = key_a;
	e.keys[1] = key_b;
	e.key_count = 2;
	e.has_consistency = 1; /* an empty proof: equal sizes */
	ck_assert_int_eq(evidence_encode(&e, &out), 0);
	note_verifier_format(&key_a, key_text);
	int n = snprintf(expected, sizeof expected,
	                 "dirauth evidence-file v1\nkind checkpoints\norigin " ORIGIN "\nkey %s\n", key_text);
	ck_assert(out.len > (size_t)n && memcmp(out.data, expected, (size_t)n) == 0);
	ck_assert_int_eq(evidence_parse(out.data, out.len, &back), 0);
	ck_assert_int_eq(back.kind, EVIDENCE_CHECKPOINTS);
	ck_assert_str_eq(back.origin, ORIGIN);
	ck_assert_uint_eq(back.key_count, 2);
	ck_assert(note_verifier_equal(&back.keys[0], &key_a));
	ck_assert(note_verifier_equal(&back.keys[1], &key_b));
	ck_assert_uint_eq(back.statements[1].len, 7);
	ck_assert(memcmp(back.statements[1].data, "second\n", 7) == 0);
	ck_assert_int_eq(back.has_consistency, 1);
	ck_assert_uint_eq(back.consistency.len, 0);
	/* The parts point into the file. */
	ck_assert(back.statements[0].data > out.data && back.statements[0].data < out.data + out.len);

	buffer_reset(&out);
	base(&e, EVIDENCE_HEADERS);
	e.certificate_count = 2;
	e.certificates[1].data = (const uint8_t *)"more\n";
	e.certificates[1].len = 5;
	ck_assert_int_eq(evidence_encode(&e, &out), 0);
	ck_assert_str_eq((const char *)out.data,
	                 "dirauth evidence-file v1\nkind headers\norigin " ORIGIN "\nepoch 12\nstatement 6\n"
	                 "first\nstatement 7\nsecond\ncertificates 13\ncertificates\ncertificates 5\nmore\n");
	ck_assert_int_eq(evidence_parse(out.data, out.len, &back), 0);
	ck_assert_uint_eq(back.epoch, 12);
	ck_assert_uint_eq(back.certificate_count, 2);

	buffer_reset(&out);
	base(&e, EVIDENCE_VOTES);
	ck_assert_int_eq(evidence_encode(&e, &out), 0);
	ck_assert_int_eq(evidence_parse(out.data, out.len, &back), 0);
	ck_assert_int_eq(back.kind, EVIDENCE_VOTES);
	ck_assert_str_eq(evidence_kind_name(EVIDENCE_VOTES), "votes");
	buffer_free(&out);
}
END_TEST

START_TEST(test_encode_refusals)
{
	struct evidence e;
	struct buffer out;
	make_keys();
	buffer_init(&out);
	base(&e, EVIDENCE_CHECKPOINTS);
	e.kind = (enum evidence_kind)9;
	ck_assert_int_eq(evidence_encode(&e, &out), DIRAUTH_ERR_SYNTAX);
	base(&e, EVIDENCE_CHECKPOINTS);
	snprintf(e.origin, sizeof e.origin, "two words");
	ck_assert_int_eq(evidence_encode(&e, &out), DIRAUTH_ERR_SYNTAX);
	base(&e, EVIDENCE_CHECKPOINTS);
	e.statements[1].len = 0;
	ck_assert_int_eq(evidence_encode(&e, &out), DIRAUTH_ERR_SYNTAX);
	base(&e, EVIDENCE_CHECKPOINTS);
	e.keys[0] = key_a;
	e.keys[1] = key_a;
	e.key_count = 2;
	ck_assert_int_eq(evidence_encode(&e, &out), DIRAUTH_ERR_SYNTAX);
	base(&e, EVIDENCE_CHECKPOINTS);
	e.certificate_count = 1;
	e.certificates[0].data = (const uint8_t *)"x";
	e.certificates[0].len = 1;
	ck_assert_int_eq(evidence_encode(&e, &out), DIRAUTH_ERR_SYNTAX);
	base(&e, EVIDENCE_HEADERS);
	e.certificate_count = 0;
	ck_assert_int_eq(evidence_encode(&e, &out), DIRAUTH_ERR_SYNTAX);
	base(&e, EVIDENCE_HEADERS);
	e.has_consistency = 1;
	ck_assert_int_eq(evidence_encode(&e, &out), DIRAUTH_ERR_SYNTAX);
	base(&e, EVIDENCE_HEADERS);
	e.statements[0].len = EVIDENCE_STATEMENT_MAX + 1;
	ck_assert_int_eq(evidence_encode(&e, &out), DIRAUTH_ERR_BOUNDS);
	ck_assert_uint_eq(out.len, 0);
	buffer_free(&out);
}
END_TEST

#define HEAD  "dirauth evidence-file v1\nkind headers\norigin " ORIGIN "\n"
#define PARTS "statement 2\na\nstatement 2\nb\ncertificates 2\nc\n"

START_TEST(test_parse_refusals)
{
	struct evidence e;
	char key_text[NOTE_VERIFIER_KEY_MAX + 1], text[8192];
	make_keys();
	note_verifier_format(&key_a, key_text);

	ck_assert_int_eq(parse_text(HEAD "epoch 12\n" PARTS, &e), 0);
	static const char *const refused[] = {
	    "",
	    "dirauth evidence-file v2\nkind headers\norigin " ORIGIN "\nepoch 12\n" PARTS,
	    "dirauth evidence v1\nkind headers\norigin " ORIGIN "\nepoch 12\n" PARTS,
	    "dirauth evidence-file v1\nkind forks\norigin " ORIGIN "\nepoch 12\n" PARTS,
	    "dirauth evidence-file v1\norigin " ORIGIN "\nkind headers\nepoch 12\n" PARTS,
	    "dirauth evidence-file v1\nkind headers\norigin a b\nepoch 12\n" PARTS,
	    "dirauth evidence-file v1\nkind headers\norigin a+b\nepoch 12\n" PARTS,
	    "dirauth evidence-file v1\nkind headers\norigin \nepoch 12\n" PARTS,
	    HEAD PARTS,               /* no epoch */
	    HEAD "epoch 012\n" PARTS, /* not canonical */
	    HEAD "epoch -1\n" PARTS,
	    HEAD "epoch 12\nstatement 2\na\n", /* one statement */
	    HEAD "epoch 12\nstatement 0\nstatement 2\nb\ncertificates 2\nc\n",
	    HEAD "epoch 12\nstatement 02\na\nstatement 2\nb\ncertificates 2\nc\n",
	    HEAD "epoch 12\nstatement 2\na\nstatement 2\nb\n",                /* no certificates */
	    HEAD "epoch 12\n" PARTS "x",                                      /* trailing bytes */
	    HEAD "epoch 12\n" PARTS "certificates 2\nd\ncertificates 2\ne\n", /* three */
	    HEAD "epoch 12\nstatement 2\na\nstatement 2\nb\nconsistency 0\ncertificates 2\nc\n",
	    HEAD "epoch 12\nkey nonsense\n" PARTS,
	    "dirauth evidence-file v1\nkind checkpoints\norigin " ORIGIN
	    "\nepoch 3\nstatement 2\na\nstatement 2\nb\n",
	    "dirauth evidence-file v1\nkind checkpoints\norigin " ORIGIN
	    "\nstatement 2\na\nstatement 2\nb\ncertificates 2\nc\n",
	    "dirauth evidence-file v1\nkind checkpoints\norigin " ORIGIN
	    "\nstatement 2\na\nstatement 2\nb\nconsistency 1\nx\nconsistency 1\nx\n",
	};
	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
		ck_assert_msg(parse_text(refused[i], &e) == DIRAUTH_ERR_SYNTAX, "refused[%zu] accepted", i);
	/* A length past the end, or past a part's bound. */
	ck_assert_int_eq(parse_text(HEAD "epoch 12\nstatement 9\na\n", &e), DIRAUTH_ERR_BOUNDS);
	snprintf(text, sizeof text, HEAD "epoch 12\nstatement %d\n", EVIDENCE_STATEMENT_MAX + 1);
	ck_assert_int_eq(parse_text(text, &e), DIRAUTH_ERR_BOUNDS);
	snprintf(text, sizeof text,
	         "dirauth evidence-file v1\nkind checkpoints\norigin " ORIGIN
	         "\nstatement 2\na\nstatement 2\nb\nconsistency %d\n",
	         EVIDENCE_CONSISTENCY_MAX + 1);
	ck_assert_int_eq(parse_text(text, &e), DIRAUTH_ERR_BOUNDS);
	/* Keys: canonical, distinct, at most EVIDENCE_KEYS_MAX. */
	snprintf(text, sizeof text, HEAD "epoch 12\nkey %s\n" PARTS, key_text);
	ck_assert_int_eq(parse_text(text, &e), 0);
	ck_assert_uint_eq(e.key_count, 1);
	snprintf(text, sizeof text, HEAD "epoch 12\nkey %s\nkey %s\n" PARTS, key_text, key_text);
	ck_assert_int_eq(parse_text(text, &e), DIRAUTH_ERR_SYNTAX);
	snprintf(text, sizeof text, HEAD "epoch 12\nkey %s \n" PARTS, key_text);
	ck_assert_int_eq(parse_text(text, &e), DIRAUTH_ERR_SYNTAX);
	struct buffer many;
	buffer_init(&many);
	ck_assert_int_eq(buffer_appendf(&many, HEAD "epoch 12\n"), 0);
	for (int i = 0; i <= EVIDENCE_KEYS_MAX; i++) {
		uint8_t public_key[32];
		struct note_verifier key;
		char spelled[NOTE_VERIFIER_KEY_MAX + 1];
		memset(public_key, i + 1, sizeof public_key);
		ck_assert_int_eq(note_verifier_from_key("authority", NOTE_KEY_TYPE_ED25519, public_key, &key),
		                 0);
		note_verifier_format(&key, spelled);
		ck_assert_int_eq(buffer_appendf(&many, "key %s\n", spelled), 0);
	}
	ck_assert_int_eq(buffer_appendf(&many, PARTS), 0);
	ck_assert_int_eq(evidence_parse(many.data, many.len, &e), DIRAUTH_ERR_BOUNDS);
	buffer_free(&many);
	/* The whole file's bound, before anything is read. */
	size_t huge_len = (size_t)EVIDENCE_MAX_BYTES + 1;
	uint8_t *huge = calloc(1, huge_len);
	ck_assert_ptr_nonnull(huge);
	ck_assert_int_eq(evidence_parse(huge, huge_len, &e), DIRAUTH_ERR_BOUNDS);
	free(huge);
	/* A refusal leaves nothing behind. */
	ck_assert_int_eq(parse_text(HEAD "epoch 12\nstatement 2\na\n", &e), DIRAUTH_ERR_SYNTAX);
	ck_assert_uint_eq(e.epoch, 0);
	ck_assert_ptr_null(e.statements[0].data);
}
END_TEST

static Suite *evidence_suite(void)
{
	Suite *suite = suite_create("evidence");
	TCase *tc = tcase_create("evidence");
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_encode_refusals);
	tcase_add_test(tc, test_parse_refusals);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(evidence_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
