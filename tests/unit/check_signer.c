/*
 * check_signer.c: tests of signer/signer.c, the typed signing interface.
 *
 * What callers rely on: a receipt or a snapshot header comes back with a signature that
 * note_verify accepts under signer_verifier(); everything else (a registration, a statement of
 * the other kind, a receipt naming another authority, garbage, an unknown kind) is refused with
 * DIRAUTH_ERR_REFUSED and nothing is signed; and concurrent callers all get valid signatures.
 */
#include "error.h"
#include "key.h"
#include "note.h"
#include "receipt.h"
#include "signer.h"
#include "snapshot.h"
#include "test_support.h"

#include <check.h>

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define AUTHORITY_NAME "authority1.dirauth.example"

static char tempdir[PATH_MAX];
static char key_path[2 * PATH_MAX];

static void setup(void)
{
	struct signer_key *key = NULL;
	test_make_tempdir(tempdir, sizeof(tempdir));
	snprintf(key_path, sizeof(key_path), "%s/authority.key", tempdir);
	ck_assert_int_eq(signer_key_generate(AUTHORITY_NAME, &key), 0);
	ck_assert_int_eq(signer_key_save(key, key_path), 0);
	signer_key_free(key);
}

static void teardown(void)
{
	test_remove_tree(tempdir);
}

static struct signer *open_signer(void)
{
	struct signer *signer = NULL;
	ck_assert_int_eq(signer_open_local(key_path, &signer), 0);
	ck_assert_ptr_nonnull(signer);
	return signer;
}

static void example_receipt(struct receipt *r, uint64_t sequence)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->authority, sizeof(r->authority), "%s", AUTHORITY_NAME);
	snprintf(r->namespace_name, sizeof(r->namespace_name), "public");
	memset(r->service_id, 0xab, sizeof(r->service_id));
	r->sequence = sequence;
	memset(r->registration_digest, 0x5c, sizeof(r->registration_digest));
	r->accepted_at = 1700000000;
	r->publish_by_epoch = 42;
}

static void encode_receipt(const struct receipt *r, struct buffer *out)
{
	buffer_init(out);
	ck_assert_int_eq(receipt_encode(r, out), 0);
}

static void encode_header(struct buffer *out)
{
	struct snapshot_header h;
	memset(&h, 0, sizeof(h));
	snprintf(h.namespace_name, sizeof(h.namespace_name), "public");
	snprintf(h.origin, sizeof(h.origin), "dirauth.example/public");
	h.epoch = 7;
	h.valid_after = 1700000000;
	h.fresh_until = 1700003600;
	h.valid_until = 1700086400;
	h.record_count = 2;
	memset(h.records_root, 0x11, sizeof(h.records_root));
	h.body_size = 1234;
	memset(h.body_sha256, 0x22, sizeof(h.body_sha256));
	memset(h.previous, 0x33, sizeof(h.previous));
	h.consensus_method = SNAPSHOT_CONSENSUS_METHOD;
	buffer_init(out);
	ck_assert_int_eq(snapshot_header_encode(&h, out), 0);
}

/* The number of keys (0 or 1) under which the signature over text verifies as a signed note. */
static size_t verified_count(const uint8_t *text, size_t len, const struct note_signature *signature,
                             const struct note_verifier *verifier)
{
	struct buffer signed_note;
	struct note *note = NULL;
	size_t count = 99;
	buffer_init(&signed_note);
	ck_assert_int_eq(note_format(text, len, signature, 1, &signed_note), 0);
	ck_assert_int_eq(note_parse(signed_note.data, signed_note.len, &note), 0);
	int rc = note_verify(note, verifier, 1, NULL, &count);
	note_free(note);
	buffer_free(&signed_note);
	return rc == 0 ? count : 0;
}

/* Asserts that signing text as kind is refused and leaves no signature behind. */
static void assert_refused(struct signer *signer, int kind, const void *text, size_t len)
{
	struct note_signature signature;
	memset(&signature, 0x7f, sizeof(signature));
	ck_assert_int_eq(signer_sign(signer, (enum signer_statement)kind, text, len, &signature),
	                 DIRAUTH_ERR_REFUSED);
	ck_assert_uint_eq(signature.signature_len, 0);
	ck_assert_str_eq(signature.name, "");
}

START_TEST(test_signs_receipt)
{
	struct signer *signer = open_signer();
	struct receipt r;
	struct buffer text;
	struct note_signature signature;

	example_receipt(&r, 1);
	encode_receipt(&r, &text);
	ck_assert_int_eq(signer_sign(signer, SIGNER_STATEMENT_RECEIPT, text.data, text.len, &signature), 0);
	const struct note_verifier *verifier = signer_verifier(signer);
	ck_assert_str_eq(verifier->name, AUTHORITY_NAME);
	ck_assert_str_eq(signature.name, AUTHORITY_NAME);
	ck_assert_uint_eq(signature.key_id, verifier->key_id);
	ck_assert_uint_eq(signature.signature_len, 64);
	ck_assert_uint_eq(verified_count(text.data, text.len, &signature, verifier), 1);

	/* The signature is over exactly this text: a changed receipt does not verify with it. */
	struct buffer other;
	example_receipt(&r, 2);
	encode_receipt(&r, &other);
	ck_assert_uint_eq(verified_count(other.data, other.len, &signature, verifier), 0);

	buffer_free(&other);
	buffer_free(&text);
	signer_close(signer);
}
END_TEST

START_TEST(test_signs_snapshot_header)
{
	struct signer *signer = open_signer();
	struct buffer text;
	struct note_signature signature;

	encode_header(&text);
	ck_assert_int_eq(
	    signer_sign(signer, SIGNER_STATEMENT_SNAPSHOT_HEADER, text.data, text.len, &signature), 0);
	ck_assert_uint_eq(verified_count(text.data, text.len, &signature, signer_verifier(signer)), 1);
	buffer_free(&text);
	signer_close(signer);
}
END_TEST

START_TEST(test_refuses_other_kind)
{
	struct signer *signer = open_signer();
	struct receipt r;
	struct buffer receipt_text, header_text;

	example_receipt(&r, 1);
	encode_receipt(&r, &receipt_text);
	encode_header(&header_text);
	/* One kind cannot be passed off as the other. */
	assert_refused(signer, SIGNER_STATEMENT_SNAPSHOT_HEADER, receipt_text.data, receipt_text.len);
	assert_refused(signer, SIGNER_STATEMENT_RECEIPT, header_text.data, header_text.len);
	/* Unknown kinds are refused even for valid text. */
	assert_refused(signer, SIGNER_STATEMENT_COUNT, receipt_text.data, receipt_text.len);
	assert_refused(signer, 99, header_text.data, header_text.len);
	assert_refused(signer, -1, header_text.data, header_text.len);
	buffer_free(&receipt_text);
	buffer_free(&header_text);
	signer_close(signer);
}
END_TEST

START_TEST(test_refuses_receipt_of_another_authority)
{
	struct signer *signer = open_signer();
	struct receipt r;
	struct buffer text;
	example_receipt(&r, 1);
	snprintf(r.authority, sizeof(r.authority), "authority2.dirauth.example");
	encode_receipt(&r, &text);
	assert_refused(signer, SIGNER_STATEMENT_RECEIPT, text.data, text.len);
	buffer_free(&text);
	signer_close(signer);
}
END_TEST

START_TEST(test_refuses_registration_and_garbage)
{
	static const char registration[] =
	    "dirauth registration v1\n"
	    "namespace public\n"
	    "service abababababababababababababababababababababababababababababababab\n"
	    "class mix-gateway\n"
	    "provider provider-a.example+01234567+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW\n"
	    "sequence 1\n"
	    "issued-at 1700000000\n"
	    "expires 1700086400\n"
	    "endpoint cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd quic 192.0.2.1:443 "
	    "eu-west "
	    "medium baseline\n";
	static const char *const garbage[] = {
	    "",
	    "\n",
	    "hello\n",
	    "dirauth receipt v1\n",
	    "dirauth snapshot v1\n",
	    "dirauth vote v1\nnamespace public\n",
	};
	struct signer *signer = open_signer();

	assert_refused(signer, SIGNER_STATEMENT_RECEIPT, registration, strlen(registration));
	assert_refused(signer, SIGNER_STATEMENT_SNAPSHOT_HEADER, registration, strlen(registration));
	for (size_t i = 0; i < sizeof(garbage) / sizeof(garbage[0]); i++) {
		assert_refused(signer, SIGNER_STATEMENT_RECEIPT, garbage[i], strlen(garbage[i]));
		assert_refused(signer, SIGNER_STATEMENT_SNAPSHOT_HEADER, garbage[i], strlen(garbage[i]));
	}
	uint8_t binary[300];
	for (size_t i = 0; i < sizeof(binary); i++)
		binary[i] = (uint8_t)(i * 37 + 11);
	assert_refused(signer, SIGNER_STATEMENT_RECEIPT, binary, sizeof(binary));
	assert_refused(signer, SIGNER_STATEMENT_SNAPSHOT_HEADER, binary, sizeof(binary));
	assert_refused(signer, SIGNER_STATEMENT_RECEIPT, NULL, 0);
	signer_close(signer);
}
END_TEST

START_TEST(test_refuses_altered_valid_statements)
{
	struct signer *signer = open_signer();
	struct receipt r;
	struct buffer text;
	example_receipt(&r, 1);
	encode_receipt(&r, &text);

	/* A receipt followed by a signature block, an extra line, or cut short. */
	struct buffer extended;
	buffer_init(&extended);
	ck_assert_int_eq(buffer_append(&extended, text.data, text.len), 0);
	ck_assert_int_eq(buffer_append_string(&extended, "extra line\n"), 0);
	assert_refused(signer, SIGNER_STATEMENT_RECEIPT, extended.data, extended.len);
	assert_refused(signer, SIGNER_STATEMENT_RECEIPT, text.data, text.len - 1);
	/* A receipt padded past its bound. */
	size_t big_len = RECEIPT_MAX_BYTES + 100;
	uint8_t *big = malloc(big_len);
	ck_assert_ptr_nonnull(big);
	memset(big, '\n', big_len);
	memcpy(big, text.data, text.len);
	assert_refused(signer, SIGNER_STATEMENT_RECEIPT, big, big_len);
	free(big);

	/* The unaltered receipt still signs, so the refusals above are about the changes. */
	struct note_signature signature;
	ck_assert_int_eq(signer_sign(signer, SIGNER_STATEMENT_RECEIPT, text.data, text.len, &signature), 0);

	buffer_free(&extended);
	buffer_free(&text);
	signer_close(signer);
}
END_TEST

START_TEST(test_open_errors)
{
	struct signer *signer = (struct signer *)1;
	char path[2 * PATH_MAX];

	snprintf(path, sizeof(path), "%s/absent.key", tempdir);
	ck_assert_int_eq(signer_open_local(path, &signer), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_ptr_null(signer);

	ck_assert_int_eq(chmod(key_path, 0640), 0);
	signer = (struct signer *)1;
	ck_assert_int_eq(signer_open_local(key_path, &signer), DIRAUTH_ERR_PERMISSION);
	ck_assert_ptr_null(signer);

	snprintf(path, sizeof(path), "%s/garbage.key", tempdir);
	test_write_file(path, "not a key\n", 10, 0600);
	signer = (struct signer *)1;
	ck_assert_int_eq(signer_open_local(path, &signer), DIRAUTH_ERR_SYNTAX);
	ck_assert_ptr_null(signer);

	signer_close(NULL);
}
END_TEST

#define THREAD_COUNT          4
#define SIGNATURES_PER_THREAD 25

struct thread_work {
	struct signer *signer;
	uint64_t first_sequence;
	int failures;
};

static void *sign_many(void *argument)
{
	struct thread_work *work = argument;
	const struct note_verifier *verifier = signer_verifier(work->signer);
	for (uint64_t i = 0; i < SIGNATURES_PER_THREAD; i++) {
		struct receipt r;
		struct buffer text;
		struct note_signature signature;
		example_receipt(&r, work->first_sequence + i);
		buffer_init(&text);
		if (receipt_encode(&r, &text) != 0 ||
		    signer_sign(work->signer, SIGNER_STATEMENT_RECEIPT, text.data, text.len, &signature) !=
		        0 ||
		    verified_count(text.data, text.len, &signature, verifier) != 1)
			work->failures++;
		buffer_free(&text);
	}
	return NULL;
}

START_TEST(test_concurrent_signing)
{
	struct signer *signer = open_signer();
	pthread_t threads[THREAD_COUNT];
	struct thread_work work[THREAD_COUNT];

	for (size_t i = 0; i < THREAD_COUNT; i++) {
		work[i] = (struct thread_work){signer, 1 + i * 1000, 0};
		ck_assert_int_eq(pthread_create(&threads[i], NULL, sign_many, &work[i]), 0);
	}
	for (size_t i = 0; i < THREAD_COUNT; i++) {
		ck_assert_int_eq(pthread_join(threads[i], NULL), 0);
		ck_assert_int_eq(work[i].failures, 0);
	}
	signer_close(signer);
}
END_TEST

static Suite *signer_suite(void)
{
	Suite *suite = suite_create("signer");
	TCase *tc = tcase_create("signer");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_signs_receipt);
	tcase_add_test(tc, test_signs_snapshot_header);
	tcase_add_test(tc, test_refuses_other_kind);
	tcase_add_test(tc, test_refuses_receipt_of_another_authority);
	tcase_add_test(tc, test_refuses_registration_and_garbage);
	tcase_add_test(tc, test_refuses_altered_valid_statements);
	tcase_add_test(tc, test_open_errors);
	tcase_add_test(tc, test_concurrent_signing);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(signer_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
