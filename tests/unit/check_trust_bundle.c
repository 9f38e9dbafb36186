/*
 * check_trust_bundle.c: the trust-bundle parser and encoder: a commented example, the canonical
 * form, every refusal with the line it names, and the vectors under
 * tests/vectors/documents/trust-bundle/ (rebuilt here and compared byte for byte).
 */
#include "base/error.h"
#include "test_keys.h"
#include "test_support.h"
#include "schema/trust_bundle.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VECTOR_DIR "tests/vectors/documents/trust-bundle/"

/* The example bundle as a person would write it: comments, blank lines, free order. */
static void example_bundle_text(struct buffer *out)
{
	struct test_key keys[3];
	for (unsigned i = 0; i < 3; i++)
		test_key_load(TEST_KEY_AUTHORITY_1 + i, &keys[i]);
	ck_assert_int_eq(
	    buffer_append_string(out, "dirauth trust v1\n"
	                              "# Example trust bundle: the authority keys below are EXAMPLE keys\n"
	                              "# from published seeds. Never trust them.\n"
	                              "\n"
	                              "threshold 2\n"
	                              "namespace example-net dirauth.example/example-net\n"
	                              "namespace example-private dirauth.example/example-private\n"
	                              "\n"
	                              "# the three authorities\n"),
	    0);
	for (unsigned i = 0; i < 3; i++)
		ck_assert_int_eq(buffer_appendf(out, "authority %s\n", test_key_verifier_string(&keys[i])),
		                 0);
	ck_assert_int_eq(buffer_append_string(out, "max-records 100000\n"), 0);
	for (unsigned i = 0; i < 3; i++)
		test_key_free(&keys[i]);
}

START_TEST(test_example_and_canonical)
{
	struct buffer text, canonical, again;
	buffer_init(&text);
	buffer_init(&canonical);
	buffer_init(&again);
	example_bundle_text(&text);
	test_vector_expect(VECTOR_DIR "valid.txt", text.data, text.len);

	size_t len;
	uint8_t *file = test_read_file(test_source_path(VECTOR_DIR "valid.txt"), &len);
	struct trust_bundle *bundle = calloc(1, sizeof(*bundle));
	struct trust_bundle *reparsed = calloc(1, sizeof(*reparsed));
	ck_assert_ptr_nonnull(bundle);
	ck_assert_ptr_nonnull(reparsed);
	size_t error_line = 99;
	ck_assert_int_eq(trust_bundle_parse(file, len, bundle, &error_line), 0);
	ck_assert_uint_eq(error_line, 0);
	ck_assert_uint_eq(bundle->namespace_count, 2);
	ck_assert_str_eq(bundle->namespaces[0].name, "example-net");
	ck_assert_str_eq(bundle->namespaces[1].origin, "dirauth.example/example-private");
	ck_assert_uint_eq(bundle->authority_count, 3);
	ck_assert_str_eq(bundle->authorities[2].name, "authority-3.example");
	ck_assert_uint_eq(bundle->threshold, 2);
	ck_assert_uint_eq(bundle->max_records, 100000);
	ck_assert_uint_eq(bundle->max_body_compressed, 64ull * 1024 * 1024);
	ck_assert_uint_eq(bundle->max_body_uncompressed, 512ull * 1024 * 1024);

	const struct trust_namespace *entry = trust_bundle_namespace(bundle, "example-private");
	ck_assert_ptr_nonnull(entry);
	ck_assert_str_eq(entry->origin, "dirauth.example/example-private");
	ck_assert_ptr_null(trust_bundle_namespace(bundle, "example"));
	ck_assert_ptr_null(trust_bundle_namespace(bundle, NULL));
	ck_assert_ptr_null(trust_bundle_namespace(NULL, "example-net"));

	ck_assert_int_eq(trust_bundle_encode(bundle, &canonical), 0);
	test_vector_expect(VECTOR_DIR "canonical.txt", canonical.data, canonical.len);
	ck_assert_int_eq(trust_bundle_parse(canonical.data, canonical.len, reparsed, NULL), 0);
	ck_assert_int_eq(memcmp(bundle, reparsed, sizeof(*bundle)), 0);
	ck_assert_int_eq(trust_bundle_encode(reparsed, &again), 0);
	ck_assert_uint_eq(again.len, canonical.len);
	ck_assert_mem_eq(again.data, canonical.data, canonical.len);

	free(file);
	free(bundle);
	free(reparsed);
	buffer_free(&text);
	buffer_free(&canonical);
	buffer_free(&again);
}
END_TEST

struct invalid_case {
	const char *name;
	const char *from;
	const char *to;
	int expected;
	size_t line;
	const char *why; /* what trust_bundle_parse_explained says, in full */
	/* Instead of from/to: the third authority line replaced by the key of this example index
	 * under this name (0: not used). */
	unsigned third_key_index;
	const char *third_key_name;
};

static const struct invalid_case invalid_cases[] = {
    {"wrong-first-line", "dirauth trust v1", "dirauth trust v2", DIRAUTH_ERR_SYNTAX, 1,
     "the first line must be 'dirauth trust v1'", 0, NULL},
    {"comment-first", "dirauth trust v1\n", "# x\ndirauth trust v1\n", DIRAUTH_ERR_SYNTAX, 1,
     "the first line must be 'dirauth trust v1'", 0, NULL},
    {"double-space", "threshold 2", "threshold  2", DIRAUTH_ERR_SYNTAX, 5,
     "two spaces in a row: fields are separated by one space", 0, NULL},
    {"trailing-space", "threshold 2\n", "threshold 2 \n", DIRAUTH_ERR_SYNTAX, 5, "a trailing space", 0, NULL},
    {"unknown-directive", "threshold 2\n", "threshold 2\nquorum 2\n", DIRAUTH_ERR_SYNTAX, 6,
     "unknown directive 'quorum' (known: namespace, authority, threshold, max-body-compressed, "
     "max-body-uncompressed, max-records)",
     0, NULL},
    {"threshold-zero", "threshold 2", "threshold 0", DIRAUTH_ERR_SYNTAX, 5, "threshold: must be at least 1",
     0, NULL},
    {"threshold-too-high", "threshold 2", "threshold 4", DIRAUTH_ERR_SYNTAX, 5,
     "threshold: 4 is more than the 3 authorities listed", 0, NULL},
    {"threshold-twice", "threshold 2\n", "threshold 2\nthreshold 2\n", DIRAUTH_ERR_SYNTAX, 6,
     "threshold: given twice (first on line 5)", 0, NULL},
    {"threshold-missing", "threshold 2\n", "", DIRAUTH_ERR_SYNTAX, 13, "no threshold line", 0, NULL},
    {"threshold-leading-zero", "threshold 2", "threshold 02", DIRAUTH_ERR_SYNTAX, 5,
     "threshold: '02' is not a canonical decimal (digits, no sign, no leading zero)", 0, NULL},
    {"bad-namespace-name", "namespace example-net", "namespace Example-net", DIRAUTH_ERR_SYNTAX, 6,
     "namespace: 'Example-net' is not a namespace name (1 to 63 bytes of [a-z0-9-], not starting or "
     "ending with '-')",
     0, NULL},
    {"origin-with-plus", "dirauth.example/example-net", "dirauth.example+example-net", DIRAUTH_ERR_SYNTAX, 6,
     "namespace example-net: 'dirauth.example+example-net' is not an origin (1 to 255 bytes of "
     "printable ASCII without space or '+')",
     0, NULL},
    {"namespace-without-origin", "namespace example-net dirauth.example/example-net", "namespace example-net",
     DIRAUTH_ERR_SYNTAX, 6, "namespace: expected 'namespace <name> <origin>'", 0, NULL},
    {"duplicate-namespace", "namespace example-private", "namespace example-net", DIRAUTH_ERR_SYNTAX, 7,
     "namespace example-net: already listed on line 6", 0, NULL},
    {"duplicate-origin", "dirauth.example/example-private", "dirauth.example/example-net", DIRAUTH_ERR_SYNTAX,
     7,
     "namespace example-private: origin dirauth.example/example-net is already the origin of namespace "
     "example-net (line 6)",
     0, NULL},
    {"bad-authority-key", "authority authority-2.example+", "authority authority-2.example+0",
     DIRAUTH_ERR_SYNTAX, 11,
     "authority: not a verifier key (<name>+<key id>+<base64 of 0x01 and the Ed25519 public key>, the key "
     "id matching the name and key)",
     0, NULL},
    {"duplicate-authority", "authority authority-2", "authority authority-1", DIRAUTH_ERR_SYNTAX, 11,
     "authority authority-1.example: the same key as line 10 (a duplicate line)", 0, NULL},
    {"authority-second-name", NULL, NULL, DIRAUTH_ERR_SYNTAX, 12,
     "authority authority-3.example: the key of authority authority-1.example (line 10) under a second "
     "name; one identity key pins one authority",
     TEST_KEY_AUTHORITY_1, "authority-3.example"},
    {"authority-name-twice", NULL, NULL, DIRAUTH_ERR_SYNTAX, 12,
     "authority authority-1.example: already pinned by another key on line 10; an authority has one "
     "identity key",
     TEST_KEY_AUTHORITY_3, "authority-1.example"},
    {"value-missing", "max-records 100000", "max-records", DIRAUTH_ERR_SYNTAX, 13,
     "'max-records' without a value", 0, NULL},
    {"bad-bound", "max-records 100000", "max-records 0", DIRAUTH_ERR_SYNTAX, 13,
     "max-records: must be at least 1", 0, NULL},
    {"bound-twice", "max-records 100000\n", "max-records 100000\nmax-records 1\n", DIRAUTH_ERR_SYNTAX, 14,
     "max-records: given twice (first on line 13)", 0, NULL},
    {"bad-comment", "# the three", "# the\tthree", DIRAUTH_ERR_SYNTAX, 9,
     "comment: byte 6 is 0x09: only printable ASCII is allowed", 0, NULL},
    {"missing-final-newline", "max-records 100000\n", "max-records 100000", DIRAUTH_ERR_SYNTAX, 13,
     "no newline at the end of the file", 0, NULL},
    {"crlf", "threshold 2\n", "threshold 2\r\n", DIRAUTH_ERR_SYNTAX, 5,
     "a carriage return at byte 12: lines end in a bare newline (LF)", 0, NULL},
};

/* The valid text with its third authority line replaced by the example key of index named name. */
static void replace_third_authority(const struct buffer *valid, unsigned index, const char *name,
                                    struct buffer *out)
{
	struct test_key third, replacement;
	uint8_t seed[32];
	char from[NOTE_VERIFIER_KEY_MAX + 1];

	test_key_load(TEST_KEY_AUTHORITY_3, &third);
	snprintf(from, sizeof(from), "%s", test_key_verifier_string(&third));
	test_key_example_seed(index, seed);
	test_key_from_seed(seed, name, &replacement);
	test_text_replace(valid->data, valid->len, from, test_key_verifier_string(&replacement), out);
	test_key_free(&third);
	test_key_free(&replacement);
}

START_TEST(test_invalid_vectors)
{
	struct buffer valid;
	buffer_init(&valid);
	example_bundle_text(&valid);
	struct trust_bundle *bundle = calloc(1, sizeof(*bundle));
	ck_assert_ptr_nonnull(bundle);
	for (size_t i = 0; i < sizeof(invalid_cases) / sizeof(invalid_cases[0]); i++) {
		const struct invalid_case *c = &invalid_cases[i];
		char relative[256];
		char why[TRUST_BUNDLE_WHY_MAX];
		snprintf(relative, sizeof(relative), VECTOR_DIR "invalid/%s.txt", c->name);
		struct buffer variant;
		buffer_init(&variant);
		if (strcmp(c->name, "duplicate-authority") == 0) {
			/* the second authority line repeats the first */
			const char *first = strstr((const char *)valid.data, "authority authority-1");
			const char *second = strstr((const char *)valid.data, "authority authority-2");
			const char *third = strstr((const char *)valid.data, "authority authority-3");
			ck_assert_int_eq(
			    buffer_append(&variant, valid.data, (size_t)(second - (const char *)valid.data)),
			    0);
			ck_assert_int_eq(buffer_append(&variant, first, (size_t)(second - first)), 0);
			ck_assert_int_eq(buffer_append_string(&variant, third), 0);
		} else if (c->third_key_index != 0) {
			replace_third_authority(&valid, c->third_key_index, c->third_key_name, &variant);
		} else {
			test_text_replace(valid.data, valid.len, c->from, c->to, &variant);
		}
		test_vector_expect(relative, variant.data, variant.len);
		size_t len;
		uint8_t *file = test_read_file(test_source_path(relative), &len);
		size_t line = 0;
		int rc = trust_bundle_parse(file, len, bundle, &line);
		ck_assert_msg(rc == c->expected, "%s: got %d, expected %d", c->name, rc, c->expected);
		ck_assert_msg(line == c->line, "%s: line %zu, expected %zu", c->name, line, c->line);
		ck_assert_uint_eq(bundle->namespace_count, 0);
		ck_assert_uint_eq(bundle->authority_count, 0);
		/* The same refusal, in words. */
		line = 0;
		rc = trust_bundle_parse_explained(file, len, bundle, &line, why, sizeof(why));
		ck_assert_int_eq(rc, c->expected);
		ck_assert_uint_eq(line, c->line);
		ck_assert_msg(strcmp(why, c->why) == 0, "%s: why '%s', expected '%s'", c->name, why, c->why);
		free(file);
		buffer_free(&variant);
	}
	/* After success the reason is empty. */
	{
		char why[TRUST_BUNDLE_WHY_MAX] = "stale";
		size_t line = 99;
		ck_assert_int_eq(
		    trust_bundle_parse_explained(valid.data, valid.len, bundle, &line, why, sizeof(why)), 0);
		ck_assert_uint_eq(line, 0);
		ck_assert_str_eq(why, "");
	}
	free(bundle);
	buffer_free(&valid);
}
END_TEST

START_TEST(test_bounds)
{
	char why[TRUST_BUNDLE_WHY_MAX];
	struct trust_bundle *bundle = calloc(1, sizeof(*bundle));
	ck_assert_ptr_nonnull(bundle);
	struct buffer text;
	buffer_init(&text);
	size_t line = 0;

	/* Too many namespaces. */
	ck_assert_int_eq(buffer_append_string(&text, "dirauth trust v1\n"), 0);
	for (unsigned i = 0; i <= TRUST_BUNDLE_MAX_NAMESPACES; i++)
		ck_assert_int_eq(buffer_appendf(&text, "namespace n%u origin/%u\n", i, i), 0);
	ck_assert_int_eq(trust_bundle_parse(text.data, text.len, bundle, &line), DIRAUTH_ERR_BOUNDS);
	ck_assert_uint_eq(line, TRUST_BUNDLE_MAX_NAMESPACES + 2);
	ck_assert_int_eq(trust_bundle_parse_explained(text.data, text.len, bundle, &line, why, sizeof(why)),
	                 DIRAUTH_ERR_BOUNDS);
	ck_assert_str_eq(why, "more than 64 namespaces");

	/* Too many authorities. */
	buffer_reset(&text);
	ck_assert_int_eq(buffer_append_string(&text, "dirauth trust v1\nnamespace n o\nthreshold 1\n"), 0);
	for (unsigned i = 0; i <= TRUST_BUNDLE_MAX_AUTHORITIES; i++) {
		uint8_t seed[32];
		char name[32];
		struct test_key key;
		test_key_example_seed(TEST_KEY_AUTHORITY_1, seed);
		seed[31] = (uint8_t)(0x80 + i); /* a distinct key each time */
		snprintf(name, sizeof(name), "authority-%u.example", i);
		test_key_from_seed(seed, name, &key);
		ck_assert_int_eq(buffer_appendf(&text, "authority %s\n", test_key_verifier_string(&key)), 0);
		test_key_free(&key);
	}
	ck_assert_int_eq(trust_bundle_parse(text.data, text.len, bundle, &line), DIRAUTH_ERR_BOUNDS);
	ck_assert_uint_eq(line, 4 + TRUST_BUNDLE_MAX_AUTHORITIES);
	ck_assert_int_eq(trust_bundle_parse_explained(text.data, text.len, bundle, &line, why, sizeof(why)),
	                 DIRAUTH_ERR_BOUNDS);
	ck_assert_str_eq(why, "more than 32 authorities");

	/* An overlong comment, and a file over TRUST_BUNDLE_MAX_BYTES. */
	buffer_reset(&text);
	ck_assert_int_eq(buffer_append_string(&text, "dirauth trust v1\n#"), 0);
	for (int i = 0; i < 600; i++)
		ck_assert_int_eq(buffer_append_string(&text, "c"), 0);
	ck_assert_int_eq(buffer_append_string(&text, "\n"), 0);
	ck_assert_int_eq(trust_bundle_parse(text.data, text.len, bundle, &line), DIRAUTH_ERR_BOUNDS);
	ck_assert_uint_eq(line, 2);
	ck_assert_int_eq(trust_bundle_parse_explained(text.data, text.len, bundle, &line, why, sizeof(why)),
	                 DIRAUTH_ERR_BOUNDS);
	ck_assert_str_eq(why, "comment longer than 512 bytes");
	while (text.len <= TRUST_BUNDLE_MAX_BYTES)
		ck_assert_int_eq(buffer_append_string(&text, "# padding\n"), 0);
	ck_assert_int_eq(trust_bundle_parse(text.data, text.len, bundle, &line), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(trust_bundle_parse_explained(text.data, text.len, bundle, &line, why, sizeof(why)),
	                 DIRAUTH_ERR_BOUNDS);
	ck_assert_str_eq(why, "larger than 65536 bytes");
	ck_assert_int_eq(trust_bundle_parse(text.data, 0, bundle, NULL), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(trust_bundle_parse_explained(text.data, 0, bundle, &line, why, sizeof(why)),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_str_eq(why, "the first line must be 'dirauth trust v1'");
	ck_assert_uint_eq(line, 1);
	/* A reason truncated to a small buffer is still a terminated string. */
	ck_assert_int_eq(trust_bundle_parse_explained(text.data, 0, bundle, &line, why, 8),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_str_eq(why, "the fir");

	free(bundle);
	buffer_free(&text);
}
END_TEST

START_TEST(test_encode_refusals)
{
	struct buffer text, out;
	buffer_init(&text);
	buffer_init(&out);
	example_bundle_text(&text);
	struct trust_bundle *valid = calloc(1, sizeof(*valid));
	struct trust_bundle *b = calloc(1, sizeof(*b));
	ck_assert_ptr_nonnull(valid);
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(trust_bundle_parse(text.data, text.len, valid, NULL), 0);
#define EXPECT_ENCODE(expected, change)                                                                      \
	do {                                                                                                 \
		memcpy(b, valid, sizeof(*b));                                                                \
		change;                                                                                      \
		ck_assert_int_eq(trust_bundle_encode(b, &out), expected);                                    \
		ck_assert_uint_eq(out.len, 0);                                                               \
	} while (0)
	EXPECT_ENCODE(DIRAUTH_ERR_SYNTAX, b->namespace_count = 0);
	EXPECT_ENCODE(DIRAUTH_ERR_SYNTAX, b->authority_count = 0);
	EXPECT_ENCODE(DIRAUTH_ERR_BOUNDS, b->namespace_count = TRUST_BUNDLE_MAX_NAMESPACES + 1);
	EXPECT_ENCODE(DIRAUTH_ERR_BOUNDS, b->authority_count = TRUST_BUNDLE_MAX_AUTHORITIES + 1);
	EXPECT_ENCODE(DIRAUTH_ERR_SYNTAX, b->threshold = 0);
	EXPECT_ENCODE(DIRAUTH_ERR_SYNTAX, b->threshold = 4);
	EXPECT_ENCODE(DIRAUTH_ERR_SYNTAX, b->max_records = 0);
	EXPECT_ENCODE(DIRAUTH_ERR_SYNTAX, b->max_body_compressed = 0);
	EXPECT_ENCODE(DIRAUTH_ERR_SYNTAX, b->max_body_uncompressed = 0);
	EXPECT_ENCODE(DIRAUTH_ERR_SYNTAX, strcpy(b->namespaces[1].name, "Bad"));
	EXPECT_ENCODE(DIRAUTH_ERR_SYNTAX, strcpy(b->namespaces[1].origin, "a b"));
	EXPECT_ENCODE(DIRAUTH_ERR_SYNTAX, strcpy(b->namespaces[1].name, b->namespaces[0].name));
	EXPECT_ENCODE(DIRAUTH_ERR_SYNTAX, strcpy(b->namespaces[1].origin, b->namespaces[0].origin));
	EXPECT_ENCODE(DIRAUTH_ERR_SYNTAX, b->authorities[2] = b->authorities[0]);
	/* What the parser refuses the encoder refuses: one name for two keys, one key under two names. */
	EXPECT_ENCODE(DIRAUTH_ERR_SYNTAX, strcpy(b->authorities[2].name, b->authorities[0].name));
	EXPECT_ENCODE(DIRAUTH_ERR_SYNTAX, memcpy(b->authorities[2].public_key, b->authorities[0].public_key,
	                                         sizeof(b->authorities[0].public_key)));
	EXPECT_ENCODE(DIRAUTH_ERR_SYNTAX, b->authorities[2].type = 7);
	EXPECT_ENCODE(DIRAUTH_ERR_SYNTAX, strcpy(b->authorities[2].name, "a+b"));
#undef EXPECT_ENCODE
	free(valid);
	free(b);
	buffer_free(&text);
	buffer_free(&out);
}
END_TEST

static Suite *trust_bundle_suite(void)
{
	Suite *suite = suite_create("trust_bundle");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_example_and_canonical);
	tcase_add_test(tc, test_invalid_vectors);
	tcase_add_test(tc, test_bounds);
	tcase_add_test(tc, test_encode_refusals);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(trust_bundle_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
