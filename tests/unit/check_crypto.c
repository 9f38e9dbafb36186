/*
 * check_crypto.c: the promises of crypto/crypto.h that the document tests do not reach.
 *
 * crypto_ed25519_verify keeps the key objects of recently used keys in a small table per
 * thread, so the one thing to prove is that the table never answers for the wrong key: many
 * keys, more than the table holds and so sharing its slots, each signature checked under its own
 * key (valid) and under another's (invalid), in orders such that entries are found, replaced and
 * found again, and then from several threads at once (whose tables the sanitizer builds see
 * freed when the threads end). The keys are made and the signatures computed with OpenSSL
 * directly, not through anything of dirauth's.
 */
#include "crypto/crypto.h"
#include "base/error.h"

#include <check.h>

#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define KEYS    300 /* well over the table's slots: some keys share one */
#define THREADS 4

struct signed_message {
	uint8_t public_key[CRYPTO_ED25519_PUBLIC_KEY_SIZE];
	char message[32];
	uint8_t signature[CRYPTO_ED25519_SIGNATURE_SIZE];
};

static struct signed_message messages[KEYS];

static void make_messages(void)
{
	for (size_t i = 0; i < KEYS; i++) {
		struct signed_message *m = &messages[i];
		EVP_PKEY *key = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
		ck_assert_ptr_nonnull(key);
		size_t len = sizeof m->public_key;
		ck_assert_int_eq(EVP_PKEY_get_raw_public_key(key, m->public_key, &len), 1);
		snprintf(m->message, sizeof m->message, "message %zu\n", i);
		EVP_MD_CTX *context = EVP_MD_CTX_new();
		ck_assert_ptr_nonnull(context);
		len = sizeof m->signature;
		ck_assert_int_eq(EVP_DigestSignInit(context, NULL, NULL, NULL, key), 1);
		ck_assert_int_eq(EVP_DigestSign(context, m->signature, &len, (const uint8_t *)m->message,
		                                strlen(m->message)),
		                 1);
		EVP_MD_CTX_free(context);
		EVP_PKEY_free(key);
	}
}

/* Checks every message under its own key and under the key `offset` places on, visiting the
 * messages with the given stride; returns the number of wrong verdicts. */
static int check_all(size_t offset, size_t stride)
{
	int wrong = 0;
	for (size_t n = 0, i = 0; n < KEYS; n++, i = (i + stride) % KEYS) {
		const struct signed_message *m = &messages[i], *other = &messages[(i + offset) % KEYS];
		const uint8_t *text = (const uint8_t *)m->message;
		wrong += crypto_ed25519_verify(m->public_key, text, strlen(m->message), m->signature) != 0;
		wrong += crypto_ed25519_verify(other->public_key, text, strlen(m->message), m->signature) !=
		         DIRAUTH_ERR_SIGNATURE;
	}
	return wrong;
}

START_TEST(test_verify_never_answers_for_another_key)
{
	make_messages();
	ck_assert_int_eq(check_all(1, 1), 0);
	ck_assert_int_eq(check_all(KEYS - 1, 7), 0); /* 7 and 300 share no factor: every message */
	ck_assert_int_eq(check_all(150, 299), 0);
	/* A key found in the table still refuses another message. */
	ck_assert_int_eq(crypto_ed25519_verify(messages[0].public_key, (const uint8_t *)"other\n", 6,
	                                       messages[0].signature),
	                 DIRAUTH_ERR_SIGNATURE);
}
END_TEST

struct worker {
	pthread_t thread;
	size_t offset, stride;
	int wrong;
};

static void *worker_main(void *argument)
{
	struct worker *w = argument;
	for (int round = 0; round < 3; round++)
		w->wrong += check_all(w->offset, w->stride);
	return NULL;
}

START_TEST(test_verify_from_several_threads)
{
	static const size_t strides[THREADS] = {1, 7, 11, 299};
	struct worker workers[THREADS];
	make_messages();
	for (size_t i = 0; i < THREADS; i++) {
		workers[i] = (struct worker){.offset = 1 + i, .stride = strides[i]};
		ck_assert_int_eq(pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]), 0);
	}
	for (size_t i = 0; i < THREADS; i++) {
		ck_assert_int_eq(pthread_join(workers[i].thread, NULL), 0);
		ck_assert_int_eq(workers[i].wrong, 0);
	}
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("crypto");
	TCase *tc = tcase_create("crypto");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_verify_never_answers_for_another_key);
	tcase_add_test(tc, test_verify_from_several_threads);
	suite_add_tcase(suite, tc);
	SRunner *runner = srunner_create(suite);
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
