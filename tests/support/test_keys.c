/*
 * test_keys.c: example keys, signing and example documents for the document tests.
 *
 * Signing goes through OpenSSL EVP directly (EVP_PKEY_new_raw_private_key, EVP_DigestSign), so
 * the document tests stand on their own. The seeds are fixed and public: EXAMPLE keys only.
 */
#include "test_keys.h"

#include "crypto/crypto.h"
#include "base/error.h"
#include "test_support.h"

#include <check.h>
#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *const example_key_names[] = {
    NULL,
    "provider.example",
    "other-provider.example",
    "authority-1.example",
    "authority-2.example",
    "authority-3.example",
};

void test_key_example_seed(unsigned index, uint8_t seed[32])
{
	for (unsigned i = 0; i < 32; i++)
		seed[i] = (uint8_t)(index * 32 + i);
}

void test_key_from_seed(const uint8_t seed[32], const char *name, struct test_key *key)
{
	memset(key, 0, sizeof(*key));
	EVP_PKEY *pkey = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, seed, 32);
	ck_assert_msg(pkey != NULL, "EVP_PKEY_new_raw_private_key failed");
	uint8_t public_key[32];
	size_t public_len = sizeof(public_key);
	ck_assert_int_eq(EVP_PKEY_get_raw_public_key(pkey, public_key, &public_len), 1);
	ck_assert_uint_eq(public_len, 32);
	ck_assert_int_eq(note_verifier_from_ed25519(name, public_key, &key->verifier), 0);
	key->private_key = pkey;
}

void test_key_load(unsigned index, struct test_key *key)
{
	ck_assert_msg(index >= 1 && index < sizeof(example_key_names) / sizeof(example_key_names[0]),
	              "no example key %u", index);
	uint8_t seed[32];
	test_key_example_seed(index, seed);
	test_key_from_seed(seed, example_key_names[index], key);
}

void test_key_free(struct test_key *key)
{
	if (!key)
		return;
	EVP_PKEY_free(key->private_key);
	key->private_key = NULL;
}

const char *test_key_verifier_string(const struct test_key *key)
{
	static char text[NOTE_VERIFIER_KEY_MAX + 1];
	note_verifier_format(&key->verifier, text);
	return text;
}

void test_key_signature(const struct test_key *key, const uint8_t *text, size_t len,
                        struct note_signature *out)
{
	memset(out, 0, sizeof(*out));
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	ck_assert_msg(ctx != NULL, "EVP_MD_CTX_new failed");
	ck_assert_int_eq(EVP_DigestSignInit(ctx, NULL, NULL, NULL, key->private_key), 1);
	size_t signature_len = sizeof(out->signature);
	ck_assert_int_eq(EVP_DigestSign(ctx, out->signature, &signature_len, text, len), 1);
	EVP_MD_CTX_free(ctx);
	ck_assert_uint_eq(signature_len, 64);
	out->signature_len = signature_len;
	snprintf(out->name, sizeof(out->name), "%s", key->verifier.name);
	out->key_id = key->verifier.key_id;
}

void test_key_sign_note(const struct test_key *keys, size_t key_count, const uint8_t *text, size_t len,
                        struct buffer *out)
{
	struct note_signature *signatures = calloc(key_count ? key_count : 1, sizeof(*signatures));
	ck_assert_msg(signatures != NULL, "calloc failed");
	for (size_t i = 0; i < key_count; i++)
		test_key_signature(&keys[i], text, len, &signatures[i]);
	ck_assert_int_eq(note_format(text, len, signatures, key_count, out), 0);
	free(signatures);
}

static void example_id(const char *label, unsigned index, unsigned sub, uint8_t out[32])
{
	char text[64];
	int n = snprintf(text, sizeof(text), "example %s %u.%u", label, index, sub);
	ck_assert(n > 0 && (size_t)n < sizeof(text));
	ck_assert_int_eq(crypto_sha256((const uint8_t *)text, (size_t)n, out), 0);
}

void test_example_registration(unsigned index, const char *namespace_name, const struct test_key *provider,
                               struct registration *r)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->namespace_name, sizeof(r->namespace_name), "%s", namespace_name);
	example_id("service", index, 0, r->service_id);
	r->service_class = SERVICE_CLASS_MIX_GATEWAY;
	r->provider = provider->verifier;
	r->sequence = 1;
	r->issued_at = 1767225600;
	r->expires = 1767225600 + 30 * 86400;
	r->endpoint_count = 3;
	r->endpoints = calloc(3, sizeof(*r->endpoints));
	ck_assert_msg(r->endpoints != NULL, "calloc failed");
	struct endpoint_descriptor *e = r->endpoints;
	example_id("endpoint", index, 1, e[0].endpoint_id);
	e[0].transport = TRANSPORT_QUIC;
	snprintf(e[0].address, sizeof(e[0].address), "gw%u.example.net:443", index);
	snprintf(e[0].region, sizeof(e[0].region), "eu-west");
	e[0].capacity = CAPACITY_HIGH;
	e[0].profile = PROFILE_MODERN;
	example_id("endpoint", index, 2, e[1].endpoint_id);
	e[1].transport = TRANSPORT_TLS;
	snprintf(e[1].address, sizeof(e[1].address), "[2001:db8::%u]:8443", index);
	snprintf(e[1].region, sizeof(e[1].region), "eu-west");
	e[1].capacity = CAPACITY_MEDIUM;
	e[1].profile = PROFILE_BASELINE;
	example_id("endpoint", index, 3, e[2].endpoint_id);
	e[2].transport = TRANSPORT_ONION;
	snprintf(e[2].address, sizeof(e[2].address), "route_Example-%u", index);
	snprintf(e[2].region, sizeof(e[2].region), "us-east");
	e[2].capacity = CAPACITY_LOW;
	e[2].profile = PROFILE_HYBRID_CRYPTO;
	registration_sort_endpoints(r);
}

void test_sign_registration(const struct registration *r, const struct test_key *key, struct buffer *out)
{
	struct buffer text;
	buffer_init(&text);
	ck_assert_int_eq(registration_encode(r, &text), 0);
	test_key_sign_note(key, 1, text.data, text.len, out);
	buffer_free(&text);
}

void test_text_replace(const uint8_t *text, size_t len, const char *from, const char *to, struct buffer *out)
{
	size_t from_len = strlen(from);
	size_t at = 0;
	while (at + from_len <= len && memcmp(text + at, from, from_len) != 0)
		at++;
	ck_assert_msg(at + from_len <= len, "\"%s\" not found in the text", from);
	ck_assert_int_eq(buffer_append(out, text, at), 0);
	ck_assert_int_eq(buffer_append_string(out, to), 0);
	ck_assert_int_eq(buffer_append(out, text + at + from_len, len - at - from_len), 0);
}

/* mkdir -p of the directory part of path. */
static void make_parents(const char *path)
{
	char copy[4096];
	int n = snprintf(copy, sizeof(copy), "%s", path);
	ck_assert(n > 0 && (size_t)n < sizeof(copy));
	for (char *p = copy + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		ck_assert_msg(mkdir(copy, 0755) == 0 || errno == EEXIST, "mkdir %s: %s", copy,
		              strerror(errno));
		*p = '/';
	}
}

void test_vector_expect(const char *relative, const uint8_t *data, size_t len)
{
	const char *path = test_source_path(relative);
	const char *write = getenv("DIRAUTH_WRITE_VECTORS");
	if (write && strcmp(write, "1") == 0) {
		make_parents(path);
		test_write_file(path, data, len, 0644);
		return;
	}
	size_t file_len = 0;
	uint8_t *file = test_read_file(path, &file_len);
	ck_assert_msg(file_len == len && memcmp(file, data, len) == 0,
	              "vector %s differs from what the code builds", relative);
	free(file);
}
