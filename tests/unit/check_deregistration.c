/*
 * check_deregistration.c: the deregistration request and the deregistration receipt: round
 * trips, every refusal, the request's signature, and the vectors under
 * tests/vectors/documents/deregistration/ and deregistration-receipt/ (rebuilt and compared byte
 * for byte, and shown by their pages in schema/). The example request withdraws the example
 * registration (tests/vectors/documents/registration/valid.note); the receipt answers it.
 */
#include "invalid_vectors.h"
#include "lifecycle_fixture.h"
#include "crypto/crypto.h"
#include "schema/deregistration.h"
#include "schema/deregistration_receipt.h"
#include "base/error.h"
#include "test_keys.h"
#include "test_support.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REQUEST_DIR "tests/vectors/documents/deregistration/"
#define RECEIPT_DIR "tests/vectors/documents/deregistration-receipt/"

static void example_request(struct deregistration *d)
{
	struct test_key provider;
	struct registration r;
	test_key_load(TEST_KEY_PROVIDER, &provider);
	test_example_registration(1, LIFECYCLE_NAMESPACE, &provider, &r);
	memset(d, 0, sizeof(*d));
	strcpy(d->namespace_name, r.namespace_name);
	memcpy(d->service_id, r.service_id, SERVICE_ID_SIZE);
	d->provider = provider.verifier;
	d->sequence = r.sequence;
	d->requested_at = 1767229200;
	registration_clear(&r);
	test_key_free(&provider);
}

/* The signed example request, into note. */
static void example_request_note(struct buffer *note)
{
	struct test_key provider;
	struct deregistration d;
	struct buffer text;
	buffer_init(&text);
	test_key_load(TEST_KEY_PROVIDER, &provider);
	example_request(&d);
	ck_assert_int_eq(deregistration_encode(&d, &text), 0);
	test_key_sign_note(&provider, 1, text.data, text.len, note);
	buffer_free(&text);
	test_key_free(&provider);
}

static void example_receipt(struct deregistration_receipt *r)
{
	struct deregistration d;
	struct buffer note;
	buffer_init(&note);
	example_request(&d);
	example_request_note(&note);
	memset(r, 0, sizeof(*r));
	strcpy(r->authority, "authority-1.example");
	strcpy(r->namespace_name, d.namespace_name);
	memcpy(r->service_id, d.service_id, SERVICE_ID_SIZE);
	r->sequence = d.sequence;
	ck_assert_int_eq(crypto_sha256(note.data, note.len, r->deregistration_digest), 0);
	r->accepted_at = 1767229260;
	r->last_listed_epoch =
	    29453821; /* 60-second epochs: the destination epoch of accepted-at, less one */
	buffer_free(&note);
}

START_TEST(test_request_vectors)
{
	struct deregistration d, parsed;
	struct buffer text, note, again;
	buffer_init(&text);
	buffer_init(&note);
	buffer_init(&again);
	example_request(&d);
	ck_assert_int_eq(deregistration_encode(&d, &text), 0);
	example_request_note(&note);
	test_vector_expect(REQUEST_DIR "valid.txt", text.data, text.len);
	test_vector_expect(REQUEST_DIR "valid.note", note.data, note.len);
	lifecycle_page_shows("schema/deregistration.md", note.data, note.len);
	ck_assert_int_eq(deregistration_parse(text.data, text.len, &parsed), 0);
	ck_assert_int_eq(memcmp(&parsed, &d, sizeof(d)), 0);
	ck_assert_int_eq(deregistration_encode(&parsed, &again), 0);
	ck_assert_uint_eq(again.len, text.len);
	ck_assert_mem_eq(again.data, text.data, text.len);
	struct note *parsed_note = NULL;
	ck_assert_int_eq(deregistration_parse_signed(note.data, note.len, &parsed, &parsed_note), 0);
	ck_assert_ptr_nonnull(parsed_note);
	note_free(parsed_note);
	ck_assert_int_eq(deregistration_parse_signed(note.data, note.len, &parsed, NULL), 0);

	/* Refusals of the signed request: another key, altered, two signatures, none. */
	struct test_key other, provider;
	struct buffer edited;
	buffer_init(&edited);
	test_key_load(TEST_KEY_OTHER, &other);
	test_key_load(TEST_KEY_PROVIDER, &provider);
	test_key_sign_note(&other, 1, text.data, text.len, &edited);
	test_vector_expect(REQUEST_DIR "invalid/signed-by-other-key.note", edited.data, edited.len);
	ck_assert_int_eq(deregistration_parse_signed(edited.data, edited.len, &parsed, NULL),
	                 DIRAUTH_ERR_UNKNOWN_KEY);
	buffer_reset(&edited);
	test_text_replace(note.data, note.len, "sequence 1", "sequence 2", &edited);
	ck_assert_int_eq(deregistration_parse_signed(edited.data, edited.len, &parsed, NULL),
	                 DIRAUTH_ERR_SIGNATURE);
	buffer_reset(&edited);
	struct test_key both[2] = {provider, other};
	test_key_sign_note(both, 2, text.data, text.len, &edited);
	ck_assert_int_eq(deregistration_parse_signed(edited.data, edited.len, &parsed, NULL),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(deregistration_parse_signed(text.data, text.len, &parsed, NULL), DIRAUTH_ERR_SYNTAX);
	uint8_t *big = calloc(DEREGISTRATION_MAX_BYTES + 1, 1);
	ck_assert_ptr_nonnull(big);
	ck_assert_int_eq(deregistration_parse_signed(big, DEREGISTRATION_MAX_BYTES + 1, &parsed, NULL),
	                 DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(deregistration_parse(big, DEREGISTRATION_MAX_BYTES + 1, &parsed),
	                 DIRAUTH_ERR_BOUNDS);
	free(big);
	test_key_free(&other);
	test_key_free(&provider);
	buffer_free(&edited);
	buffer_free(&text);
	buffer_free(&note);
	buffer_free(&again);
}
END_TEST

static const struct invalid_case request_cases[] = {
    {"wrong-version", "deregistration v1", "deregistration v2", DIRAUTH_ERR_SYNTAX},
    {"bad-namespace", "namespace example-net", "namespace example_net", DIRAUTH_ERR_SYNTAX},
    {"upper-case-hex", "service cc", "service CC", DIRAUTH_ERR_SYNTAX},
    {"bad-key-id", "provider.example+7f30315d", "provider.example+7f30315e", DIRAUTH_ERR_SYNTAX},
    {"sequence-zero", "sequence 1\n", "sequence 0\n", DIRAUTH_ERR_SYNTAX},
    {"leading-zero", "requested-at 1", "requested-at 01", DIRAUTH_ERR_SYNTAX},
    {"missing-line", "sequence 1\n", "", DIRAUTH_ERR_SYNTAX},
    {"out-of-order", "sequence 1\nrequested-at 1767229200\n", "requested-at 1767229200\nsequence 1\n",
     DIRAUTH_ERR_SYNTAX},
    {"reason-line", "requested-at 1767229200\n", "requested-at 1767229200\nreason retired\n",
     DIRAUTH_ERR_SYNTAX},
    {"missing-final-newline", "requested-at 1767229200\n", "requested-at 1767229200", DIRAUTH_ERR_SYNTAX},
};

static const struct invalid_case receipt_cases[] = {
    {"wrong-version", "deregistration-receipt v1", "deregistration-receipt v2", DIRAUTH_ERR_SYNTAX},
    {"bad-authority-name", "authority authority-1.example", "authority authority+1.example",
     DIRAUTH_ERR_SYNTAX},
    {"bad-namespace", "namespace example-net", "namespace example_net", DIRAUTH_ERR_SYNTAX},
    {"short-digest", "deregistration ", "deregistration 0", DIRAUTH_ERR_SYNTAX},
    {"sequence-zero", "sequence 1\n", "sequence 0\n", DIRAUTH_ERR_SYNTAX},
    {"leading-zero", "accepted-at 1", "accepted-at 01", DIRAUTH_ERR_SYNTAX},
    {"missing-line", "sequence 1\n", "", DIRAUTH_ERR_SYNTAX},
    {"trailing-bytes", "last-listed-epoch 29453821\n", "last-listed-epoch 29453821\n\n", DIRAUTH_ERR_SYNTAX},
    {"overflow", "last-listed-epoch 29453821", "last-listed-epoch 18446744073709551616", DIRAUTH_ERR_SYNTAX},
    {"overlong-line", "authority authority-1.example",
     "authority "
     "a123456789a123456789a123456789a123456789a123456789a123456789a123456789a123456789a123456789"
     "a123456789a123456789a123456789a123456789a123456789a123456789a123456789a123456789a123456789"
     "a123456789a123456789a123456789a123456789a123456789a123456789a123456789a123456789",
     DIRAUTH_ERR_BOUNDS},
};

static int parse_request(const uint8_t *data, size_t len)
{
	struct deregistration d;
	return deregistration_parse(data, len, &d);
}

static int parse_receipt(const uint8_t *data, size_t len)
{
	struct deregistration_receipt r;
	return deregistration_receipt_parse(data, len, &r);
}

START_TEST(test_invalid_vectors)
{
	struct deregistration d;
	struct deregistration_receipt r;
	struct buffer request, receipt;
	buffer_init(&request);
	buffer_init(&receipt);
	example_request(&d);
	example_receipt(&r);
	ck_assert_int_eq(deregistration_encode(&d, &request), 0);
	ck_assert_int_eq(deregistration_receipt_encode(&r, &receipt), 0);
	invalid_vectors_check(REQUEST_DIR "invalid/", &request, request_cases,
	                      sizeof(request_cases) / sizeof(request_cases[0]), parse_request);
	invalid_vectors_check(RECEIPT_DIR "invalid/", &receipt, receipt_cases,
	                      sizeof(receipt_cases) / sizeof(receipt_cases[0]), parse_receipt);
	buffer_free(&request);
	buffer_free(&receipt);
}
END_TEST

START_TEST(test_receipt_vectors)
{
	struct deregistration_receipt r, parsed;
	struct buffer text, note, again, request;
	buffer_init(&text);
	buffer_init(&note);
	buffer_init(&again);
	buffer_init(&request);
	example_receipt(&r);
	ck_assert_int_eq(deregistration_receipt_encode(&r, &text), 0);
	struct test_key authority;
	test_key_load(TEST_KEY_AUTHORITY_1, &authority);
	test_key_sign_note(&authority, 1, text.data, text.len, &note);
	test_vector_expect(RECEIPT_DIR "valid.txt", text.data, text.len);
	test_vector_expect(RECEIPT_DIR "valid.note", note.data, note.len);
	lifecycle_page_shows("schema/deregistration-receipt.md", note.data, note.len);
	/* The deregistration line is the digest of the request vector as stored. */
	size_t len;
	uint8_t *file = test_read_file(test_source_path(REQUEST_DIR "valid.note"), &len);
	uint8_t digest[32];
	ck_assert_int_eq(crypto_sha256(file, len, digest), 0);
	ck_assert_mem_eq(digest, r.deregistration_digest, 32);
	free(file);
	ck_assert_int_eq(deregistration_receipt_parse(text.data, text.len, &parsed), 0);
	ck_assert_int_eq(memcmp(&parsed, &r, sizeof(r)), 0);
	ck_assert_int_eq(deregistration_receipt_encode(&parsed, &again), 0);
	ck_assert_uint_eq(again.len, text.len);
	ck_assert_mem_eq(again.data, text.data, text.len);
	/* Signed by the authority. */
	struct note *parsed_note = NULL;
	ck_assert_int_eq(note_parse(note.data, note.len, &parsed_note), 0);
	ck_assert_int_eq(note_verify_threshold(parsed_note, &authority.verifier, 1, 1), 0);
	note_free(parsed_note);
	/* Encoder refusals leave the buffer as it was. */
	struct deregistration_receipt bad = r;
	buffer_reset(&again);
	bad.sequence = 0;
	ck_assert_int_eq(deregistration_receipt_encode(&bad, &again), DIRAUTH_ERR_SYNTAX);
	bad = r;
	strcpy(bad.authority, "with space");
	ck_assert_int_eq(deregistration_receipt_encode(&bad, &again), DIRAUTH_ERR_SYNTAX);
	bad = r;
	strcpy(bad.namespace_name, "Upper");
	ck_assert_int_eq(deregistration_receipt_encode(&bad, &again), DIRAUTH_ERR_SYNTAX);
	ck_assert_uint_eq(again.len, 0);
	uint8_t *big = calloc(DEREGISTRATION_RECEIPT_MAX_BYTES + 1, 1);
	ck_assert_ptr_nonnull(big);
	ck_assert_int_eq(deregistration_receipt_parse(big, DEREGISTRATION_RECEIPT_MAX_BYTES + 1, &parsed),
	                 DIRAUTH_ERR_BOUNDS);
	free(big);
	test_key_free(&authority);
	buffer_free(&text);
	buffer_free(&note);
	buffer_free(&again);
	buffer_free(&request);
}
END_TEST

START_TEST(test_request_encode_refusals)
{
	struct deregistration valid, d;
	struct buffer out;
	buffer_init(&out);
	example_request(&valid);
#define EXPECT_ENCODE(change)                                                                                \
	do {                                                                                                 \
		d = valid;                                                                                   \
		change;                                                                                      \
		ck_assert_int_eq(deregistration_encode(&d, &out), DIRAUTH_ERR_SYNTAX);                       \
		ck_assert_uint_eq(out.len, 0);                                                               \
	} while (0)
	EXPECT_ENCODE(d.namespace_name[0] = 0);
	EXPECT_ENCODE(memset(d.namespace_name, 'a', sizeof(d.namespace_name)));
	EXPECT_ENCODE(d.provider.key_id ^= 1);
	EXPECT_ENCODE(strcpy(d.provider.name, "two words"));
	EXPECT_ENCODE(d.sequence = 0);
#undef EXPECT_ENCODE
	buffer_free(&out);
}
END_TEST

static Suite *deregistration_suite(void)
{
	Suite *suite = suite_create("deregistration");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_request_vectors);
	tcase_add_test(tc, test_receipt_vectors);
	tcase_add_test(tc, test_invalid_vectors);
	tcase_add_test(tc, test_request_encode_refusals);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(deregistration_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
