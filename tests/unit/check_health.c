/*
 * check_health.c: the health statement codec and its check against the registration it speaks
 * about; the registration's optional endpoint-key line it relies on; the vectors under
 * tests/vectors/documents/health/ (rebuilt and compared byte for byte, and shown by
 * schema/health.md); and every refusal, among them any exact load, latency or utilisation figure.
 */
#include "invalid_vectors.h"
#include "lifecycle_fixture.h"
#include "base/error.h"
#include "schema/health.h"
#include "test_keys.h"
#include "test_support.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VECTOR_DIR "tests/vectors/documents/health/"
#define PAGE       "schema/health.md"

/* The example statements: by the provider (healthy, no capacity) and by the endpoint's own key
 * (draining, capacity low), on the first endpoint of the example registration. */
static void provider_statement(const struct registration *r, struct health_statement *s)
{
	lifecycle_statement(r, 0, HEALTH_SIGNER_PROVIDER, HEALTH_HEALTHY, 120, 7, s);
}

static void endpoint_statement(const struct registration *r, struct health_statement *s)
{
	lifecycle_statement(r, 0, HEALTH_SIGNER_ENDPOINT, HEALTH_DRAINING, 180, 8, s);
	s->has_capacity = 1;
	s->capacity = CAPACITY_LOW;
}

static void vector(const char *name, const struct buffer *data)
{
	char path[256];
	snprintf(path, sizeof(path), VECTOR_DIR "%s", name);
	test_vector_expect(path, data->data, data->len);
}

START_TEST(test_vectors)
{
	struct test_key provider, endpoint;
	struct registration r, parsed_r;
	struct health_statement s, parsed;
	struct buffer registration, text, note, again;
	buffer_init(&registration);
	buffer_init(&text);
	buffer_init(&note);
	buffer_init(&again);
	test_key_load(TEST_KEY_PROVIDER, &provider);
	lifecycle_key_load(LIFECYCLE_KEY_ENDPOINT, &endpoint);
	lifecycle_registration(1, &r);
	test_sign_registration(&r, &provider, &registration);
	vector("registration.note", &registration);
	lifecycle_page_shows(PAGE, registration.data, registration.len);
	ck_assert_int_eq(registration_parse_signed(registration.data, registration.len, &parsed_r, NULL), 0);
	ck_assert(parsed_r.endpoints[0].has_key);
	ck_assert(note_verifier_equal(&parsed_r.endpoints[0].key, &endpoint.verifier));
	ck_assert(!parsed_r.endpoints[1].has_key);

	struct {
		const char *text_name, *note_name;
		void (*make)(const struct registration *, struct health_statement *);
		const struct test_key *key;
	} examples[] = {{"provider.txt", "provider.note", provider_statement, &provider},
	                {"endpoint.txt", "endpoint.note", endpoint_statement, &endpoint}};
	for (size_t i = 0; i < 2; i++) {
		buffer_reset(&text);
		buffer_reset(&note);
		buffer_reset(&again);
		examples[i].make(&r, &s);
		ck_assert_int_eq(health_encode(&s, &text), 0);
		lifecycle_sign_statement(&s, examples[i].key, &note);
		vector(examples[i].text_name, &text);
		vector(examples[i].note_name, &note);
		lifecycle_page_shows(PAGE, note.data, note.len);
		/* The text round-trips; the note verifies against the registration as stored. */
		ck_assert_int_eq(health_parse(text.data, text.len, &parsed), 0);
		ck_assert_int_eq(memcmp(&parsed, &s, sizeof(s)), 0);
		ck_assert_int_eq(health_encode(&parsed, &again), 0);
		ck_assert_uint_eq(again.len, text.len);
		ck_assert_mem_eq(again.data, text.data, text.len);
		struct note *parsed_note = NULL;
		ck_assert_int_eq(health_parse_signed(note.data, note.len, &parsed_r, &parsed, &parsed_note),
		                 0);
		ck_assert_ptr_nonnull(parsed_note);
		ck_assert_int_eq(memcmp(&parsed, &s, sizeof(s)), 0);
		note_free(parsed_note);
		ck_assert_int_eq(health_parse_signed(note.data, note.len, &parsed_r, &parsed, NULL), 0);
	}
	registration_clear(&parsed_r);
	registration_clear(&r);
	test_key_free(&provider);
	test_key_free(&endpoint);
	buffer_free(&registration);
	buffer_free(&text);
	buffer_free(&note);
	buffer_free(&again);
}
END_TEST

/* Variants of provider.txt, each refused by health_parse. The first ones are figures: the
 * grammar has no line for them, so each is an unknown line. */
static const struct invalid_case invalid_cases[] = {
    {"load-figure", "class healthy\n", "class healthy\nload 0.73\n", DIRAUTH_ERR_SYNTAX},
    {"latency-figure", "class healthy\n", "class healthy\nlatency-ms 12\n", DIRAUTH_ERR_SYNTAX},
    {"utilisation-figure", "class healthy\n", "class healthy\nutilisation 73\n", DIRAUTH_ERR_SYNTAX},
    {"capacity-figure", "class healthy\n", "class healthy\ncapacity 73\n", DIRAUTH_ERR_SYNTAX},
    {"class-with-figure", "class healthy", "class healthy 73", DIRAUTH_ERR_SYNTAX},
    {"class-unknown", "class healthy", "class unknown", DIRAUTH_ERR_SYNTAX},
    {"class-upper-case", "class healthy", "class Healthy", DIRAUTH_ERR_SYNTAX},
    {"signer-other", "signer provider", "signer operator", DIRAUTH_ERR_SYNTAX},
    {"wrong-version", "health v1", "health v2", DIRAUTH_ERR_SYNTAX},
    {"bad-namespace", "namespace example-net", "namespace Example-net", DIRAUTH_ERR_SYNTAX},
    {"upper-case-hex", "service cc", "service CC", DIRAUTH_ERR_SYNTAX},
    {"short-endpoint", "endpoint 7a", "endpoint 7", DIRAUTH_ERR_SYNTAX},
    {"sequence-zero", "sequence 7", "sequence 0", DIRAUTH_ERR_SYNTAX},
    {"leading-zero", "issued-at 1", "issued-at 01", DIRAUTH_ERR_SYNTAX},
    {"overflow", "sequence 7", "sequence 18446744073709551616", DIRAUTH_ERR_SYNTAX},
    {"missing-line", "signer provider\n", "", DIRAUTH_ERR_SYNTAX},
    {"out-of-order", "signer provider\nclass healthy\n", "class healthy\nsigner provider\n",
     DIRAUTH_ERR_SYNTAX},
    {"capacity-out-of-order", "sequence 7", "capacity low\nsequence 7", DIRAUTH_ERR_SYNTAX},
    {"double-space", "sequence 7", "sequence  7", DIRAUTH_ERR_SYNTAX},
    {"crlf", "sequence 7\n", "sequence 7\r\n", DIRAUTH_ERR_SYNTAX},
    {"trailing-bytes", "sequence 7\n", "sequence 7\n\n", DIRAUTH_ERR_SYNTAX},
    {"missing-final-newline", "sequence 7\n", "sequence 7", DIRAUTH_ERR_SYNTAX},
    {"overlong-line", "signer provider",
     "signer provider-"
     "a123456789a123456789a123456789a123456789a123456789a123456789a123456789a123456789a123456789"
     "a123456789a123456789a123456789a123456789",
     DIRAUTH_ERR_BOUNDS},
};

static int parse_health(const uint8_t *text, size_t len)
{
	struct health_statement parsed;
	return health_parse(text, len, &parsed);
}

START_TEST(test_invalid_texts)
{
	struct registration r;
	struct health_statement s, parsed;
	struct buffer valid;
	buffer_init(&valid);
	lifecycle_registration(1, &r);
	provider_statement(&r, &s);
	ck_assert_int_eq(health_encode(&s, &valid), 0);
	invalid_vectors_check(VECTOR_DIR "invalid/", &valid, invalid_cases,
	                      sizeof(invalid_cases) / sizeof(invalid_cases[0]), parse_health);
	/* Over the size bound before anything is read; empty input. */
	uint8_t *big = calloc(HEALTH_MAX_BYTES + 1, 1);
	ck_assert_ptr_nonnull(big);
	memcpy(big, valid.data, valid.len);
	ck_assert_int_eq(health_parse(big, HEALTH_MAX_BYTES + 1, &parsed), DIRAUTH_ERR_BOUNDS);
	struct note *note = NULL;
	ck_assert_int_eq(health_parse_note(big, HEALTH_MAX_BYTES + 1, &parsed, &note), DIRAUTH_ERR_BOUNDS);
	ck_assert_ptr_null(note);
	free(big);
	ck_assert_int_eq(health_parse(valid.data, 0, &parsed), DIRAUTH_ERR_SYNTAX);
	registration_clear(&r);
	buffer_free(&valid);
}
END_TEST

/* The signed refusals a route maps to 403 (not its provider nor its endpoint key) or 400. */
START_TEST(test_signature_refusals)
{
	struct test_key provider, endpoint, other;
	struct registration r;
	struct health_statement s, parsed;
	struct buffer note, edited;
	buffer_init(&note);
	buffer_init(&edited);
	test_key_load(TEST_KEY_PROVIDER, &provider);
	test_key_load(TEST_KEY_OTHER, &other);
	lifecycle_key_load(LIFECYCLE_KEY_ENDPOINT, &endpoint);
	lifecycle_registration(1, &r);

	/* Signed by a key that is neither: another provider, for either signer line. */
	provider_statement(&r, &s);
	lifecycle_sign_statement(&s, &other, &note);
	test_vector_expect(VECTOR_DIR "invalid/signed-by-other-key.note", note.data, note.len);
	ck_assert_int_eq(health_parse_signed(note.data, note.len, &r, &parsed, NULL),
	                 DIRAUTH_ERR_UNKNOWN_KEY);
	/* The endpoint's key on a statement that says signer provider, and the other way round. */
	buffer_reset(&note);
	lifecycle_sign_statement(&s, &endpoint, &note);
	ck_assert_int_eq(health_parse_signed(note.data, note.len, &r, &parsed, NULL),
	                 DIRAUTH_ERR_UNKNOWN_KEY);
	endpoint_statement(&r, &s);
	buffer_reset(&note);
	lifecycle_sign_statement(&s, &provider, &note);
	ck_assert_int_eq(health_parse_signed(note.data, note.len, &r, &parsed, NULL),
	                 DIRAUTH_ERR_UNKNOWN_KEY);
	/* signer endpoint for an endpoint whose descriptor names no key. */
	lifecycle_statement(&r, 1, HEALTH_SIGNER_ENDPOINT, HEALTH_HEALTHY, 0, 1, &s);
	buffer_reset(&note);
	lifecycle_sign_statement(&s, &endpoint, &note);
	ck_assert_int_eq(health_parse_signed(note.data, note.len, &r, &parsed, NULL),
	                 DIRAUTH_ERR_UNKNOWN_KEY);
	/* An endpoint the registration does not list; another service; another namespace. */
	provider_statement(&r, &s);
	memset(s.endpoint_id, 0xee, ENDPOINT_ID_SIZE);
	buffer_reset(&note);
	lifecycle_sign_statement(&s, &provider, &note);
	ck_assert_int_eq(health_parse_signed(note.data, note.len, &r, &parsed, NULL), DIRAUTH_ERR_NOT_FOUND);
	provider_statement(&r, &s);
	s.service_id[0] ^= 1;
	buffer_reset(&note);
	lifecycle_sign_statement(&s, &provider, &note);
	ck_assert_int_eq(health_parse_signed(note.data, note.len, &r, &parsed, NULL), DIRAUTH_ERR_MISMATCH);
	provider_statement(&r, &s);
	strcpy(s.namespace_name, "other-net");
	buffer_reset(&note);
	lifecycle_sign_statement(&s, &provider, &note);
	ck_assert_int_eq(health_parse_signed(note.data, note.len, &r, &parsed, NULL), DIRAUTH_ERR_MISMATCH);

	/* The valid note altered, given a second signature, or unsigned. */
	provider_statement(&r, &s);
	buffer_reset(&note);
	lifecycle_sign_statement(&s, &provider, &note);
	test_text_replace(note.data, note.len, "class healthy", "class degraded", &edited);
	test_vector_expect(VECTOR_DIR "invalid/altered-text.note", edited.data, edited.len);
	ck_assert_int_eq(health_parse_signed(edited.data, edited.len, &r, &parsed, NULL),
	                 DIRAUTH_ERR_SIGNATURE);
	buffer_reset(&edited);
	struct buffer text;
	buffer_init(&text);
	ck_assert_int_eq(health_encode(&s, &text), 0);
	struct test_key both[2] = {provider, endpoint};
	test_key_sign_note(both, 2, text.data, text.len, &edited);
	test_vector_expect(VECTOR_DIR "invalid/two-signatures.note", edited.data, edited.len);
	ck_assert_int_eq(health_parse_signed(edited.data, edited.len, &r, &parsed, NULL), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(health_parse_signed(text.data, text.len, &r, &parsed, NULL), DIRAUTH_ERR_SYNTAX);

	buffer_free(&text);
	buffer_free(&note);
	buffer_free(&edited);
	registration_clear(&r);
	test_key_free(&provider);
	test_key_free(&endpoint);
	test_key_free(&other);
}
END_TEST

START_TEST(test_encode_refusals)
{
	struct registration r;
	struct health_statement valid, s;
	struct buffer out;
	buffer_init(&out);
	lifecycle_registration(1, &r);
	provider_statement(&r, &valid);
#define EXPECT_ENCODE(change)                                                                                \
	do {                                                                                                 \
		s = valid;                                                                                   \
		change;                                                                                      \
		ck_assert_int_eq(health_encode(&s, &out), DIRAUTH_ERR_SYNTAX);                               \
		ck_assert_uint_eq(out.len, 0);                                                               \
	} while (0)
	EXPECT_ENCODE(s.namespace_name[0] = 0);
	EXPECT_ENCODE(strcpy(s.namespace_name, "Upper"));
	EXPECT_ENCODE(memset(s.namespace_name, 'a', sizeof(s.namespace_name)));
	EXPECT_ENCODE(s.health_class = HEALTH_CLASS_COUNT);
	EXPECT_ENCODE(s.signer = HEALTH_SIGNER_COUNT);
	EXPECT_ENCODE(s.has_capacity = 1; s.capacity = CAPACITY_COUNT);
	EXPECT_ENCODE(s.has_capacity = 2);
	EXPECT_ENCODE(s.sequence = 0);
#undef EXPECT_ENCODE
	/* Every class and capacity has its name and reads back. */
	for (int c = 0; c < HEALTH_CLASS_COUNT; c++) {
		enum health_class back;
		const char *name = health_class_name((enum health_class)c);
		ck_assert_ptr_nonnull(name);
		ck_assert_int_eq(health_class_parse(name, strlen(name), &back), 0);
		ck_assert_int_eq(back, c);
	}
	ck_assert_ptr_null(health_class_name(HEALTH_CLASS_COUNT));
	ck_assert_ptr_null(health_signer_name(HEALTH_SIGNER_COUNT));
	enum health_signer signer;
	ck_assert_int_eq(health_signer_parse("endpoint", 8, &signer), 0);
	ck_assert_int_eq(signer, HEALTH_SIGNER_ENDPOINT);
	ck_assert_int_eq(health_signer_parse("operator", 8, &signer), DIRAUTH_ERR_SYNTAX);
	s = valid;
	s.issued_at = UINT64_MAX;
	s.sequence = UINT64_MAX;
	ck_assert_int_eq(health_encode(&s, &out), 0);
	struct health_statement parsed;
	ck_assert_int_eq(health_parse(out.data, out.len, &parsed), 0);
	ck_assert_uint_eq(parsed.issued_at, UINT64_MAX);
	registration_clear(&r);
	buffer_free(&out);
}
END_TEST

/* The registration's endpoint-key line: optional, after the endpoints, sorted, naming a listed
 * endpoint once; a registration without it is the bytes it always was. */
START_TEST(test_registration_endpoint_key)
{
	struct test_key provider;
	struct registration r, parsed;
	struct buffer text, plain, variant;
	buffer_init(&text);
	buffer_init(&plain);
	buffer_init(&variant);
	test_key_load(TEST_KEY_PROVIDER, &provider);
	lifecycle_registration(1, &r);
	r.endpoints[2].has_key = 1;
	r.endpoints[2].key = provider.verifier; /* any key; here the provider's own */
	ck_assert_int_eq(registration_encode(&r, &text), 0);
	ck_assert_int_eq(registration_parse((const uint8_t *)text.data, text.len, &parsed), 0);
	ck_assert(parsed.endpoints[0].has_key && !parsed.endpoints[1].has_key && parsed.endpoints[2].has_key);
	ck_assert(note_verifier_equal(&parsed.endpoints[2].key, &provider.verifier));
	ck_assert_ptr_eq(registration_find_endpoint(&parsed, r.endpoints[1].endpoint_id),
	                 &parsed.endpoints[1]);
	uint8_t absent[ENDPOINT_ID_SIZE];
	memset(absent, 0xff, sizeof(absent));
	ck_assert_ptr_null(registration_find_endpoint(&parsed, absent));
	registration_clear(&parsed);

	/* Without keys: the document vector, unchanged. */
	r.endpoints[0].has_key = r.endpoints[2].has_key = 0;
	ck_assert_int_eq(registration_encode(&r, &plain), 0);
	size_t len;
	uint8_t *file =
	    test_read_file(test_source_path("tests/vectors/documents/registration/valid.txt"), &len);
	ck_assert_uint_eq(plain.len, len);
	ck_assert_mem_eq(plain.data, file, len);
	free(file);

	/* The two key lines, located in text. */
	const char *first = strstr((const char *)text.data, "endpoint-key ");
	ck_assert_ptr_nonnull(first);
	const char *second = strstr(first + 1, "endpoint-key ");
	ck_assert_ptr_nonnull(second);
	size_t first_len = (size_t)(second - first), second_len = strlen(second);
	/* Out of order. */
	buffer_reset(&variant);
	ck_assert_int_eq(buffer_append(&variant, text.data, (size_t)(first - (const char *)text.data)), 0);
	ck_assert_int_eq(buffer_append(&variant, second, second_len), 0);
	ck_assert_int_eq(buffer_append(&variant, first, first_len), 0);
	ck_assert_int_eq(registration_parse(variant.data, variant.len, &parsed), DIRAUTH_ERR_SYNTAX);
	/* Repeated. */
	buffer_reset(&variant);
	ck_assert_int_eq(buffer_append(&variant, text.data, text.len), 0);
	ck_assert_int_eq(buffer_append(&variant, second, second_len), 0);
	ck_assert_int_eq(registration_parse(variant.data, variant.len, &parsed), DIRAUTH_ERR_SYNTAX);
	/* Before an endpoint line. */
	buffer_reset(&variant);
	const char *last_endpoint = strstr((const char *)text.data, "endpoint bb");
	ck_assert_ptr_nonnull(last_endpoint);
	ck_assert_int_eq(
	    buffer_append(&variant, text.data, (size_t)(last_endpoint - (const char *)text.data)), 0);
	ck_assert_int_eq(buffer_append(&variant, first, first_len), 0);
	ck_assert_int_eq(buffer_append(&variant, last_endpoint, (size_t)(first - last_endpoint)), 0);
	ck_assert_int_eq(buffer_append(&variant, second, second_len), 0);
	ck_assert_int_eq(registration_parse(variant.data, variant.len, &parsed), DIRAUTH_ERR_SYNTAX);
	/* An endpoint the registration does not list; a bad key; no key. */
	buffer_reset(&variant);
	test_text_replace(text.data, text.len, "endpoint-key 7a", "endpoint-key 7b", &variant);
	ck_assert_int_eq(registration_parse(variant.data, variant.len, &parsed), DIRAUTH_ERR_SYNTAX);
	buffer_reset(&variant);
	test_text_replace(text.data, text.len, "endpoint.example+", "endpoint.example+0", &variant);
	ck_assert_int_eq(registration_parse(variant.data, variant.len, &parsed), DIRAUTH_ERR_SYNTAX);
	char bare[80];
	snprintf(bare, sizeof(bare), "%.77s\n", first);
	buffer_reset(&variant);
	ck_assert_int_eq(buffer_append(&variant, text.data, (size_t)(first - (const char *)text.data)), 0);
	ck_assert_int_eq(buffer_append_string(&variant, bare), 0);
	ck_assert_int_eq(registration_parse(variant.data, variant.len, &parsed), DIRAUTH_ERR_SYNTAX);
	/* The encoder refuses a key whose id is not its own. */
	lifecycle_registration(2, &parsed);
	parsed.endpoints[0].key.key_id ^= 1;
	buffer_reset(&variant);
	ck_assert_int_eq(registration_encode(&parsed, &variant), DIRAUTH_ERR_SYNTAX);
	registration_clear(&parsed);

	registration_clear(&r);
	test_key_free(&provider);
	buffer_free(&text);
	buffer_free(&plain);
	buffer_free(&variant);
}
END_TEST

/* A statement as a listing names it: the listed endpoint, issued-at and sequence must be its own;
 * and when it is past its freshness. */
START_TEST(test_listed_and_stale)
{
	struct test_key provider;
	struct registration r;
	struct health_statement s, parsed;
	struct buffer note;
	buffer_init(&note);
	test_key_load(TEST_KEY_PROVIDER, &provider);
	lifecycle_registration(1, &r);
	provider_statement(&r, &s);
	lifecycle_sign_statement(&s, &provider, &note);
	ck_assert_int_eq(
	    health_parse_listed(note.data, note.len, &r, s.endpoint_id, s.issued_at, s.sequence, &parsed), 0);
	ck_assert_uint_eq(parsed.sequence, s.sequence);
	ck_assert_int_eq(parsed.health_class, HEALTH_HEALTHY);
	uint8_t other_endpoint[ENDPOINT_ID_SIZE];
	memcpy(other_endpoint, s.endpoint_id, ENDPOINT_ID_SIZE);
	other_endpoint[0] ^= 1;
	ck_assert_int_eq(
	    health_parse_listed(note.data, note.len, &r, other_endpoint, s.issued_at, s.sequence, &parsed),
	    DIRAUTH_ERR_MISMATCH);
	ck_assert_uint_eq(parsed.sequence, 0); /* zeroed on error */
	ck_assert_int_eq(
	    health_parse_listed(note.data, note.len, &r, s.endpoint_id, s.issued_at + 1, s.sequence, &parsed),
	    DIRAUTH_ERR_MISMATCH);
	ck_assert_int_eq(
	    health_parse_listed(note.data, note.len, &r, s.endpoint_id, s.issued_at, s.sequence + 1, &parsed),
	    DIRAUTH_ERR_MISMATCH);
	/* The signature is still checked first: a spoiled one is refused as such. */
	note.data[note.len - 3] = note.data[note.len - 3] == 'A' ? 'B' : 'A';
	ck_assert_int_ne(
	    health_parse_listed(note.data, note.len, &r, s.endpoint_id, s.issued_at, s.sequence, &parsed), 0);

	ck_assert_int_eq(health_is_stale(100, 50, 149), 0);
	ck_assert_int_eq(health_is_stale(100, 50, 150), 1); /* freshness ends at issued-at + freshness */
	ck_assert_int_eq(health_is_stale(100, 50, 99), 0);  /* issued after valid-after */
	ck_assert_int_eq(health_is_stale(UINT64_MAX - 10, 50, UINT64_MAX), 0); /* no overflow */
	ck_assert_int_eq(health_is_stale(0, UINT64_MAX, UINT64_MAX), 1);
	buffer_free(&note);
	registration_clear(&r);
	test_key_free(&provider);
}
END_TEST

static Suite *health_suite(void)
{
	Suite *suite = suite_create("health");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_vectors);
	tcase_add_test(tc, test_invalid_texts);
	tcase_add_test(tc, test_signature_refusals);
	tcase_add_test(tc, test_encode_refusals);
	tcase_add_test(tc, test_registration_endpoint_key);
	tcase_add_test(tc, test_listed_and_stale);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(health_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
