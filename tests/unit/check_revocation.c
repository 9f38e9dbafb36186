/*
 * check_revocation.c: the revocation codec and the check of its own signature; which
 * registrations a revocation excludes; a revocation's target as the body lines spell it; the vectors under
 * tests/vectors/documents/revocation/ (rebuilt and compared byte for byte, and shown by
 * schema/revocation.md); every refusal.
 */
#include "invalid_vectors.h"
#include "lifecycle_fixture.h"
#include "base/error.h"
#include "schema/revocation.h"
#include "schema/snapshot.h"
#include "test_keys.h"
#include "test_support.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VECTOR_DIR "tests/vectors/documents/revocation/"
#define PAGE       "schema/revocation.md"

/* The examples: the provider revokes the first endpoint of registration 1 (its key compromised);
 * an operator revokes the whole service of registration 2. */
static void endpoint_revocation(struct revocation *out)
{
	struct registration r;
	struct test_key provider;
	test_key_load(TEST_KEY_PROVIDER, &provider);
	lifecycle_registration(1, &r);
	lifecycle_revocation(&r, 0, REVOCATION_SIGNER_PROVIDER, &provider, REVOCATION_KEY_COMPROMISE, 600, 1,
	                     out);
	registration_clear(&r);
	test_key_free(&provider);
}

static void service_revocation(struct revocation *out)
{
	struct registration r;
	struct test_key operator_key;
	lifecycle_key_load(LIFECYCLE_KEY_OPERATOR, &operator_key);
	lifecycle_registration(2, &r);
	lifecycle_revocation(&r, -1, REVOCATION_SIGNER_OPERATOR, &operator_key, REVOCATION_OPERATOR_ACTION,
	                     660, 1, out);
	registration_clear(&r);
	test_key_free(&operator_key);
}

START_TEST(test_vectors)
{
	struct test_key provider, operator_key;
	struct revocation rev, parsed;
	struct buffer text, note, again;
	buffer_init(&text);
	buffer_init(&note);
	buffer_init(&again);
	test_key_load(TEST_KEY_PROVIDER, &provider);
	lifecycle_key_load(LIFECYCLE_KEY_OPERATOR, &operator_key);
	struct {
		const char *text_name, *note_name;
		void (*make)(struct revocation *);
		const struct test_key *key;
	} examples[] = {
	    {VECTOR_DIR "endpoint.txt", VECTOR_DIR "endpoint.note", endpoint_revocation, &provider},
	    {VECTOR_DIR "service.txt", VECTOR_DIR "service.note", service_revocation, &operator_key}};
	for (size_t i = 0; i < 2; i++) {
		buffer_reset(&text);
		buffer_reset(&note);
		buffer_reset(&again);
		examples[i].make(&rev);
		ck_assert_int_eq(revocation_encode(&rev, &text), 0);
		lifecycle_sign_revocation(&rev, examples[i].key, &note);
		test_vector_expect(examples[i].text_name, text.data, text.len);
		test_vector_expect(examples[i].note_name, note.data, note.len);
		lifecycle_page_shows(PAGE, note.data, note.len);
		ck_assert_int_eq(revocation_parse(text.data, text.len, &parsed), 0);
		ck_assert_int_eq(memcmp(&parsed, &rev, sizeof(rev)), 0);
		ck_assert_int_eq(revocation_encode(&parsed, &again), 0);
		ck_assert_uint_eq(again.len, text.len);
		ck_assert_mem_eq(again.data, text.data, text.len);
		struct note *parsed_note = NULL;
		ck_assert_int_eq(revocation_parse_signed(note.data, note.len, &parsed, &parsed_note), 0);
		ck_assert_ptr_nonnull(parsed_note);
		ck_assert_int_eq(memcmp(&parsed, &rev, sizeof(rev)), 0);
		note_free(parsed_note);
	}
	test_key_free(&provider);
	test_key_free(&operator_key);
	buffer_free(&text);
	buffer_free(&note);
	buffer_free(&again);
}
END_TEST

/* Variants of endpoint.txt, each refused by revocation_parse. */
static const struct invalid_case invalid_cases[] = {
    {"wrong-version", "revocation v1", "revocation v2", DIRAUTH_ERR_SYNTAX},
    {"reason-unknown", "reason key-compromise", "reason other", DIRAUTH_ERR_SYNTAX},
    {"reason-free-text", "reason key-compromise", "reason key compromised yesterday", DIRAUTH_ERR_SYNTAX},
    {"signer-unknown", "signer provider", "signer endpoint", DIRAUTH_ERR_SYNTAX},
    {"bad-key-id", "provider.example+7f30315d", "provider.example+7f30315e", DIRAUTH_ERR_SYNTAX},
    {"bad-namespace", "namespace example-net", "namespace example_net", DIRAUTH_ERR_SYNTAX},
    {"upper-case-hex", "service cc", "service CC", DIRAUTH_ERR_SYNTAX},
    {"endpoint-out-of-order",
     "endpoint 7a0b5a1043587339f2260fbecb03d04d3aaab3cc9333d8664515ec52de148cbb\nsigner provider\n",
     "signer provider\nendpoint 7a0b5a1043587339f2260fbecb03d04d3aaab3cc9333d8664515ec52de148cbb\n",
     DIRAUTH_ERR_SYNTAX},
    {"missing-key", "key ", "kex ", DIRAUTH_ERR_SYNTAX},
    {"sequence-zero", "sequence 1\n", "sequence 0\n", DIRAUTH_ERR_SYNTAX},
    {"leading-zero", "revoked-at 1", "revoked-at 01", DIRAUTH_ERR_SYNTAX},
    {"double-space", "sequence 1\n", "sequence  1\n", DIRAUTH_ERR_SYNTAX},
    {"trailing-bytes", "sequence 1\n", "sequence 1\nnote compromised\n", DIRAUTH_ERR_SYNTAX},
    {"missing-final-newline", "sequence 1\n", "sequence 1", DIRAUTH_ERR_SYNTAX},
    {"overlong-line", "reason key-compromise",
     "reason key-compromise-"
     "a123456789a123456789a123456789a123456789a123456789a123456789a123456789a123456789a123456789"
     "a123456789a123456789a123456789a123456789a123456789a123456789a123456789a123456789a123456789"
     "a123456789a123456789a123456789a123456789a123456789a123456789a123456789a123456789a123456789"
     "a123456789a123456789a123456789a123456789a123456789a123456789a123456789a123456789a123456789",
     DIRAUTH_ERR_BOUNDS},
};

static int parse_revocation(const uint8_t *text, size_t len)
{
	struct revocation parsed;
	return revocation_parse(text, len, &parsed);
}

START_TEST(test_invalid_texts)
{
	struct revocation rev, parsed;
	struct buffer valid;
	buffer_init(&valid);
	endpoint_revocation(&rev);
	ck_assert_int_eq(revocation_encode(&rev, &valid), 0);
	invalid_vectors_check(VECTOR_DIR "invalid/", &valid, invalid_cases,
	                      sizeof(invalid_cases) / sizeof(invalid_cases[0]), parse_revocation);
	uint8_t *big = calloc(REVOCATION_MAX_BYTES + 1, 1);
	ck_assert_ptr_nonnull(big);
	memcpy(big, valid.data, valid.len);
	ck_assert_int_eq(revocation_parse(big, REVOCATION_MAX_BYTES + 1, &parsed), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(revocation_parse_signed(big, REVOCATION_MAX_BYTES + 1, &parsed, NULL),
	                 DIRAUTH_ERR_BOUNDS);
	free(big);
	buffer_free(&valid);
}
END_TEST

START_TEST(test_signature_refusals)
{
	struct test_key provider, other;
	struct revocation rev, parsed;
	struct buffer note, edited, text;
	buffer_init(&note);
	buffer_init(&edited);
	buffer_init(&text);
	test_key_load(TEST_KEY_PROVIDER, &provider);
	test_key_load(TEST_KEY_OTHER, &other);
	endpoint_revocation(&rev);
	/* Signed by a key other than the one it names: nobody's revocation. */
	lifecycle_sign_revocation(&rev, &other, &note);
	test_vector_expect(VECTOR_DIR "invalid/signed-by-other-key.note", note.data, note.len);
	ck_assert_int_eq(revocation_parse_signed(note.data, note.len, &parsed, NULL),
	                 DIRAUTH_ERR_UNKNOWN_KEY);
	/* Altered after signing. */
	buffer_reset(&note);
	lifecycle_sign_revocation(&rev, &provider, &note);
	test_text_replace(note.data, note.len, "reason key-compromise", "reason retired", &edited);
	test_vector_expect(VECTOR_DIR "invalid/altered-text.note", edited.data, edited.len);
	ck_assert_int_eq(revocation_parse_signed(edited.data, edited.len, &parsed, NULL),
	                 DIRAUTH_ERR_SIGNATURE);
	/* Two signatures; none. */
	ck_assert_int_eq(revocation_encode(&rev, &text), 0);
	struct test_key both[2] = {provider, other};
	buffer_reset(&edited);
	test_key_sign_note(both, 2, text.data, text.len, &edited);
	ck_assert_int_eq(revocation_parse_signed(edited.data, edited.len, &parsed, NULL), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(revocation_parse_signed(text.data, text.len, &parsed, NULL), DIRAUTH_ERR_SYNTAX);
	test_key_free(&provider);
	test_key_free(&other);
	buffer_free(&note);
	buffer_free(&edited);
	buffer_free(&text);
}
END_TEST

START_TEST(test_encode_refusals)
{
	struct revocation valid, rev;
	struct buffer out;
	buffer_init(&out);
	endpoint_revocation(&valid);
#define EXPECT_ENCODE(change)                                                                                \
	do {                                                                                                 \
		rev = valid;                                                                                 \
		change;                                                                                      \
		ck_assert_int_eq(revocation_encode(&rev, &out), DIRAUTH_ERR_SYNTAX);                         \
		ck_assert_uint_eq(out.len, 0);                                                               \
	} while (0)
	EXPECT_ENCODE(rev.namespace_name[0] = 0);
	EXPECT_ENCODE(strcpy(rev.namespace_name, "Upper"));
	EXPECT_ENCODE(rev.has_endpoint = 2);
	EXPECT_ENCODE(rev.signer = REVOCATION_SIGNER_COUNT);
	EXPECT_ENCODE(rev.reason = REVOCATION_REASON_COUNT);
	EXPECT_ENCODE(rev.key.key_id ^= 1);
	EXPECT_ENCODE(rev.key.type = 4);
	EXPECT_ENCODE(strcpy(rev.key.name, "with space"));
	EXPECT_ENCODE(rev.sequence = 0);
#undef EXPECT_ENCODE
	for (int reason = 0; reason < REVOCATION_REASON_COUNT; reason++) {
		enum revocation_reason back;
		const char *name = revocation_reason_name((enum revocation_reason)reason);
		ck_assert_ptr_nonnull(name);
		ck_assert_int_eq(revocation_reason_parse(name, strlen(name), &back), 0);
		ck_assert_int_eq(back, reason);
	}
	ck_assert_ptr_null(revocation_signer_name(REVOCATION_SIGNER_COUNT));
	buffer_free(&out);
}
END_TEST

/* What a revocation takes out of a snapshot: its whole service, or every registration naming
 * the revoked endpoint, whatever its sequence or service. */
START_TEST(test_excludes)
{
	struct registration one, one_later, two, moved;
	struct revocation of_endpoint, of_service;
	lifecycle_registration(1, &one);
	lifecycle_registration(1, &one_later);
	one_later.sequence = 9;
	lifecycle_registration(2, &two);
	lifecycle_registration(3, &moved);
	memcpy(moved.endpoints[1].endpoint_id, one.endpoints[0].endpoint_id, ENDPOINT_ID_SIZE);
	registration_sort_endpoints(&moved);
	endpoint_revocation(&of_endpoint);
	service_revocation(&of_service);
	ck_assert(revocation_excludes(&of_endpoint, &one));
	ck_assert(revocation_excludes(&of_endpoint, &one_later));
	ck_assert(revocation_excludes(&of_endpoint, &moved));
	ck_assert(!revocation_excludes(&of_endpoint, &two));
	ck_assert(revocation_excludes(&of_service, &two));
	ck_assert(!revocation_excludes(&of_service, &one));
	strcpy(two.namespace_name, "other-net");
	ck_assert(!revocation_excludes(&of_service, &two));
	registration_clear(&one);
	registration_clear(&one_later);
	registration_clear(&two);
	registration_clear(&moved);
}
END_TEST

/* A snapshot's revocation entry: its note must revoke exactly the entry's target in the
 * namespace; and the order of the section. */
START_TEST(test_snapshot_entry)
{
	struct test_key provider;
	struct revocation rev;
	struct buffer note;
	buffer_init(&note);
	test_key_load(TEST_KEY_PROVIDER, &provider);
	endpoint_revocation(&rev);
	lifecycle_sign_revocation(&rev, &provider, &note);
	struct snapshot_revocation entry = {
	    .has_endpoint = 1, .since = 3, .note = note.data, .note_len = note.len};
	memcpy(entry.service_id, rev.service_id, SERVICE_ID_SIZE);
	memcpy(entry.endpoint_id, rev.endpoint_id, ENDPOINT_ID_SIZE);
	ck_assert_int_eq(snapshot_revocation_note_check(&entry, rev.namespace_name), 0);
	ck_assert_int_eq(snapshot_revocation_note_check(&entry, "elsewhere"), DIRAUTH_ERR_MISMATCH);
	struct snapshot_revocation whole = entry;
	whole.has_endpoint = 0;
	memset(whole.endpoint_id, 0, ENDPOINT_ID_SIZE);
	ck_assert_int_eq(snapshot_revocation_note_check(&whole, rev.namespace_name), DIRAUTH_ERR_MISMATCH);
	struct snapshot_revocation other_endpoint = entry;
	other_endpoint.endpoint_id[0] ^= 1;
	ck_assert_int_eq(snapshot_revocation_note_check(&other_endpoint, rev.namespace_name),
	                 DIRAUTH_ERR_MISMATCH);
	struct snapshot_revocation other_service = entry;
	other_service.service_id[0] ^= 1;
	ck_assert_int_eq(snapshot_revocation_note_check(&other_service, rev.namespace_name),
	                 DIRAUTH_ERR_MISMATCH);

	/* By service, a whole service before its endpoints, then by endpoint. */
	ck_assert_int_eq(snapshot_revocation_order(&entry, &entry), 0);
	ck_assert_int_lt(snapshot_revocation_order(&whole, &entry), 0);
	ck_assert_int_gt(snapshot_revocation_order(&entry, &whole), 0);
	int endpoint_order = snapshot_revocation_order(&entry, &other_endpoint);
	ck_assert_int_eq(endpoint_order < 0, entry.endpoint_id[0] < other_endpoint.endpoint_id[0]);
	ck_assert_int_ne(endpoint_order, 0);
	whole.service_id[0] = other_service.service_id[0];
	ck_assert_int_eq(snapshot_revocation_order(&whole, &entry) < 0,
	                 whole.service_id[0] < entry.service_id[0]); /* the service first */

	note.data[note.len - 3] = note.data[note.len - 3] == 'A' ? 'B' : 'A';
	ck_assert_int_ne(snapshot_revocation_note_check(&entry, rev.namespace_name), 0);
	buffer_free(&note);
	test_key_free(&provider);
}
END_TEST

/* The target on a body's revocation line: written, read back, and every other spelling refused. */
START_TEST(test_target_text)
{
	uint8_t service[SERVICE_ID_SIZE], endpoint[ENDPOINT_ID_SIZE], service_read[SERVICE_ID_SIZE],
	    endpoint_read[ENDPOINT_ID_SIZE];
	char text[REVOCATION_TARGET_TEXT_SIZE];
	for (size_t i = 0; i < SERVICE_ID_SIZE; i++)
		service[i] = (uint8_t)(0xa0 + i);
	for (size_t i = 0; i < ENDPOINT_ID_SIZE; i++)
		endpoint[i] = (uint8_t)(0x10 + i);
	for (int has_endpoint = 0; has_endpoint <= 1; has_endpoint++) {
		revocation_target_format(service, has_endpoint, endpoint, text);
		ck_assert_uint_eq(strlen(text),
		                  has_endpoint ? REVOCATION_TARGET_TEXT_SIZE - 1 : 2 * SERVICE_ID_SIZE + 2);
		char line[REVOCATION_TARGET_TEXT_SIZE + 8];
		snprintf(line, sizeof line, "%s 42", text);
		struct text_span rest = {line, strlen(line)};
		int has_read = -1;
		memset(endpoint_read, 0, sizeof endpoint_read);
		ck_assert_int_eq(revocation_target_read(&rest, service_read, &has_read, endpoint_read), 0);
		ck_assert_int_eq(has_read, has_endpoint);
		ck_assert_mem_eq(service_read, service, SERVICE_ID_SIZE);
		if (has_endpoint)
			ck_assert_mem_eq(endpoint_read, endpoint, ENDPOINT_ID_SIZE);
		ck_assert_uint_eq(rest.len, 2);
		ck_assert_mem_eq(rest.data, "42", 2);
	}
	ck_assert_str_eq(text + 2 * SERVICE_ID_SIZE,
	                 " 101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f");

	char hex[2 * SERVICE_ID_SIZE + 1];
	revocation_target_format(service, 0, NULL, text);
	memcpy(hex, text, 2 * SERVICE_ID_SIZE);
	hex[2 * SERVICE_ID_SIZE] = 0;
	char upper[2 * SERVICE_ID_SIZE + 1];
	for (size_t i = 0; i < sizeof upper; i++)
		upper[i] = (char)(hex[i] >= 'a' && hex[i] <= 'f' ? hex[i] - 32 : hex[i]);
	const char *endpoint_fields[] = {"--", "+", "0", "", "10111213", NULL};
	for (size_t i = 0; endpoint_fields[i]; i++) {
		char line[2 * REVOCATION_TARGET_TEXT_SIZE];
		snprintf(line, sizeof line, "%s %s", hex, endpoint_fields[i]);
		struct text_span rest = {line, strlen(line)};
		int has_read;
		ck_assert_int_eq(revocation_target_read(&rest, service_read, &has_read, endpoint_read),
		                 DIRAUTH_ERR_SYNTAX);
	}
	const char *lines[] = {"", "-", "- -", hex, NULL};
	for (size_t i = 0; lines[i]; i++) {
		struct text_span rest = {lines[i], strlen(lines[i])};
		int has_read;
		ck_assert_int_eq(revocation_target_read(&rest, service_read, &has_read, endpoint_read),
		                 DIRAUTH_ERR_SYNTAX);
	}
	char line[2 * REVOCATION_TARGET_TEXT_SIZE];
	snprintf(line, sizeof line, "%s -", upper);
	struct text_span rest = {line, strlen(line)};
	int has_read;
	ck_assert_int_eq(revocation_target_read(&rest, service_read, &has_read, endpoint_read),
	                 DIRAUTH_ERR_SYNTAX);
}
END_TEST

static Suite *revocation_suite(void)
{
	Suite *suite = suite_create("revocation");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_vectors);
	tcase_add_test(tc, test_invalid_texts);
	tcase_add_test(tc, test_signature_refusals);
	tcase_add_test(tc, test_encode_refusals);
	tcase_add_test(tc, test_excludes);
	tcase_add_test(tc, test_snapshot_entry);
	tcase_add_test(tc, test_target_text);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(revocation_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
