/*
 * check_receipt.c: the receipt codec: round trip, every refusal, and the vectors under
 * tests/vectors/documents/receipt/ (rebuilt here and compared byte for byte). The example
 * receipt promises the example registration (tests/vectors/documents/registration/valid.note)
 * and is signed by the example key authority-1.example.
 */
#include "crypto/crypto.h"
#include "base/error.h"
#include "schema/receipt.h"
#include "invalid_vectors.h"
#include "test_keys.h"
#include "test_support.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VECTOR_DIR "tests/vectors/documents/receipt/"

static void example_receipt(struct receipt *r)
{
	struct test_key provider;
	struct registration registration;
	struct buffer note;
	buffer_init(&note);
	test_key_load(TEST_KEY_PROVIDER, &provider);
	test_example_registration(1, "example-net", &provider, &registration);
	test_sign_registration(&registration, &provider, &note);
	memset(r, 0, sizeof(*r));
	strcpy(r->authority, "authority-1.example");
	strcpy(r->namespace_name, registration.namespace_name);
	memcpy(r->service_id, registration.service_id, SERVICE_ID_SIZE);
	r->sequence = registration.sequence;
	ck_assert_int_eq(crypto_sha256(note.data, note.len, r->registration_digest), 0);
	r->accepted_at = 1767225660;
	r->publish_by_epoch = 29453762;
	registration_clear(&registration);
	buffer_free(&note);
	test_key_free(&provider);
}

START_TEST(test_round_trip_and_vectors)
{
	struct receipt r, parsed;
	struct buffer text, note, again;
	buffer_init(&text);
	buffer_init(&note);
	buffer_init(&again);
	example_receipt(&r);
	ck_assert_int_eq(receipt_encode(&r, &text), 0);
	struct test_key authority;
	test_key_load(TEST_KEY_AUTHORITY_1, &authority);
	test_key_sign_note(&authority, 1, text.data, text.len, &note);
	test_vector_expect(VECTOR_DIR "valid.txt", text.data, text.len);
	test_vector_expect(VECTOR_DIR "valid.note", note.data, note.len);

	/* The registration line is the digest of the registration vector as stored. */
	size_t len;
	uint8_t *registration_note =
	    test_read_file(test_source_path("tests/vectors/documents/registration/valid.note"), &len);
	uint8_t digest[32];
	ck_assert_int_eq(crypto_sha256(registration_note, len, digest), 0);
	ck_assert_mem_eq(digest, r.registration_digest, 32);
	free(registration_note);

	ck_assert_int_eq(receipt_parse(text.data, text.len, &parsed), 0);
	ck_assert_int_eq(memcmp(&parsed, &r, sizeof(r)), 0);
	ck_assert_int_eq(receipt_encode(&parsed, &again), 0);
	ck_assert_uint_eq(again.len, text.len);
	ck_assert_mem_eq(again.data, text.data, text.len);

	/* The signed vector: its text is the receipt and the authority's signature verifies. */
	uint8_t *file = test_read_file(test_source_path(VECTOR_DIR "valid.note"), &len);
	struct note *parsed_note = NULL;
	ck_assert_int_eq(note_parse(file, len, &parsed_note), 0);
	ck_assert_int_eq(receipt_parse(parsed_note->text, parsed_note->text_len, &parsed), 0);
	ck_assert_int_eq(note_verify_threshold(parsed_note, &authority.verifier, 1, 1), 0);
	note_free(parsed_note);
	free(file);

	test_key_free(&authority);
	buffer_free(&text);
	buffer_free(&note);
	buffer_free(&again);
}
END_TEST

static const struct invalid_case invalid_cases[] = {
    {"double-space", "sequence 1\n", "sequence  1\n", DIRAUTH_ERR_SYNTAX},
    {"wrong-version", "receipt v1", "receipt v2", DIRAUTH_ERR_SYNTAX},
    {"bad-authority-name", "authority authority-1.example", "authority authority+1.example",
     DIRAUTH_ERR_SYNTAX},
    {"bad-namespace", "namespace example-net", "namespace example_net", DIRAUTH_ERR_SYNTAX},
    {"bad-hex", "service cc", "service CC", DIRAUTH_ERR_SYNTAX},
    {"short-digest", "registration ", "registration 0", DIRAUTH_ERR_SYNTAX},
    {"sequence-zero", "sequence 1\n", "sequence 0\n", DIRAUTH_ERR_SYNTAX},
    {"leading-zero", "accepted-at 1", "accepted-at 01", DIRAUTH_ERR_SYNTAX},
    {"negative", "publish-by-epoch ", "publish-by-epoch -", DIRAUTH_ERR_SYNTAX},
    {"missing-line", "sequence 1\n", "", DIRAUTH_ERR_SYNTAX},
    {"out-of-order", "namespace example-net\nservice", "service", DIRAUTH_ERR_SYNTAX},
    {"trailing-bytes", "publish-by-epoch 29453762\n", "publish-by-epoch 29453762\n\n", DIRAUTH_ERR_SYNTAX},
    {"missing-final-newline", "publish-by-epoch 29453762\n", "publish-by-epoch 29453762", DIRAUTH_ERR_SYNTAX},
    {"overflow", "publish-by-epoch 29453762", "publish-by-epoch 18446744073709551616", DIRAUTH_ERR_SYNTAX},
    {"overlong-line", "authority authority-1.example",
     "authority "
     "a123456789a123456789a123456789a123456789a123456789a123456789a123456789a123456789a123456789"
     "a123456789a123456789a123456789a123456789a123456789a123456789a123456789a123456789a123456789"
     "a123456789a123456789a123456789a123456789a123456789a123456789a123456789a123456789",
     DIRAUTH_ERR_BOUNDS},
};

static int parse_receipt(const uint8_t *text, size_t len)
{
	struct receipt parsed;
	return receipt_parse(text, len, &parsed);
}

START_TEST(test_invalid_vectors)
{
	struct receipt r;
	struct buffer valid;
	buffer_init(&valid);
	example_receipt(&r);
	ck_assert_int_eq(receipt_encode(&r, &valid), 0);
	invalid_vectors_check(VECTOR_DIR "invalid/", &valid, invalid_cases,
	                      sizeof(invalid_cases) / sizeof(invalid_cases[0]), parse_receipt);
	/* Over RECEIPT_MAX_BYTES before anything is read. */
	uint8_t *big = calloc(RECEIPT_MAX_BYTES + 1, 1);
	ck_assert_ptr_nonnull(big);
	memcpy(big, valid.data, valid.len);
	ck_assert_int_eq(receipt_parse(big, RECEIPT_MAX_BYTES + 1, &r), DIRAUTH_ERR_BOUNDS);
	free(big);
	ck_assert_int_eq(receipt_parse(valid.data, 0, &r), DIRAUTH_ERR_SYNTAX);
	buffer_free(&valid);
}
END_TEST

START_TEST(test_encode_refusals)
{
	struct receipt valid, r;
	struct buffer out;
	buffer_init(&out);
	example_receipt(&valid);
#define EXPECT_ENCODE(change)                                                                                \
	do {                                                                                                 \
		r = valid;                                                                                   \
		change;                                                                                      \
		ck_assert_int_eq(receipt_encode(&r, &out), DIRAUTH_ERR_SYNTAX);                              \
		ck_assert_uint_eq(out.len, 0);                                                               \
	} while (0)
	EXPECT_ENCODE(r.authority[0] = 0);
	EXPECT_ENCODE(strcpy(r.authority, "with space"));
	EXPECT_ENCODE(strcpy(r.authority, "plus+sign"));
	EXPECT_ENCODE(strcpy(r.authority, "na\xc3\xafve"));
	EXPECT_ENCODE(memset(r.authority, 'a', sizeof(r.authority)));
	EXPECT_ENCODE(r.namespace_name[0] = 0);
	EXPECT_ENCODE(strcpy(r.namespace_name, "Upper"));
	EXPECT_ENCODE(memset(r.namespace_name, 'a', sizeof(r.namespace_name)));
	EXPECT_ENCODE(r.sequence = 0);
#undef EXPECT_ENCODE
	r = valid;
	r.accepted_at = UINT64_MAX;
	r.publish_by_epoch = 0;
	ck_assert_int_eq(receipt_encode(&r, &out), 0);
	struct receipt parsed;
	ck_assert_int_eq(receipt_parse(out.data, out.len, &parsed), 0);
	ck_assert_uint_eq(parsed.accepted_at, UINT64_MAX);
	buffer_free(&out);
}
END_TEST

static Suite *receipt_suite(void)
{
	Suite *suite = suite_create("receipt");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_round_trip_and_vectors);
	tcase_add_test(tc, test_invalid_vectors);
	tcase_add_test(tc, test_encode_refusals);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(receipt_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
