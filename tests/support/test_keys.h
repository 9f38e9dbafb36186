/*
 * test_keys.h: Ed25519 example keys, note signing and example documents for the tests of the
 * signed documents.
 *
 * The tests need real signatures but must not depend on the signer module, so they sign with
 * OpenSSL EVP directly. Every key here comes from a fixed, published seed: these are EXAMPLE
 * keys, not secrets, and nothing outside the tests may trust them. Ed25519 signing is
 * deterministic, so a document signed here is the same bytes on every run; that is what lets the
 * checked-in vectors under tests/vectors/documents/ be compared byte for byte with what the
 * tests build.
 *
 * Everything aborts the test (ck_abort) on failure, like test_support.h.
 */
#ifndef DIRAUTH_TEST_KEYS_H
#define DIRAUTH_TEST_KEYS_H

#include "base/buffer.h"
#include "schema/note.h"
#include "schema/registration.h"

#include <stddef.h>
#include <stdint.h>

/* Indexes of the example keys used across the document tests and vectors. */
enum test_key_index {
	TEST_KEY_PROVIDER = 1,    /* "provider.example": signs the example registrations */
	TEST_KEY_OTHER = 2,       /* "other-provider.example": a provider that is not the one named */
	TEST_KEY_AUTHORITY_1 = 3, /* "authority-1.example" */
	TEST_KEY_AUTHORITY_2 = 4, /* "authority-2.example" */
	TEST_KEY_AUTHORITY_3 = 5, /* "authority-3.example" */
};

struct test_key {
	void *private_key; /* EVP_PKEY *, owned */
	struct note_verifier verifier;
};

/* The example seed of a key index: byte i is (index * 32 + i). Public, not secret. */
void test_key_example_seed(unsigned index, uint8_t seed[32]);

/* Loads the example key of index with its key name (see enum test_key_index). */
void test_key_load(unsigned index, struct test_key *key);

/* Loads a key from any seed and name. */
void test_key_from_seed(const uint8_t seed[32], const char *name, struct test_key *key);

void test_key_free(struct test_key *key);

/* The key's verifier-key string ("name+keyid+base64"). Static storage, reused. */
const char *test_key_verifier_string(const struct test_key *key);

/* One signature by key over text (a signed-note signature line's content). */
void test_key_signature(const struct test_key *key, const uint8_t *text, size_t len,
                        struct note_signature *out);

/* Appends the signed note of text, signed by each of keys in order. */
void test_key_sign_note(const struct test_key *keys, size_t key_count, const uint8_t *text, size_t len,
                        struct buffer *out);

/* Fills r with example registration number index (1, 2, 3 ...) in namespace_name, provided by
 * provider: a distinct service id per index, three endpoints of different transports, sequence
 * 1, issued-at 1767225600 (2026-01-01), expires 30 days later. The caller clears r. */
void test_example_registration(unsigned index, const char *namespace_name, const struct test_key *provider,
                               struct registration *r);

/* Appends the canonical text of r signed by key. */
void test_sign_registration(const struct registration *r, const struct test_key *key, struct buffer *out);

/* Appends text with the first occurrence of from replaced by to; aborts when from is absent. */
void test_text_replace(const uint8_t *text, size_t len, const char *from, const char *to, struct buffer *out);

/* Compares data with the vector file at relative (from the source tree). With the environment
 * variable DIRAUTH_WRITE_VECTORS=1, writes the file instead: how the vectors are produced. */
void test_vector_expect(const char *relative, const uint8_t *data, size_t len);

#endif
