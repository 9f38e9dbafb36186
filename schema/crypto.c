/*
 * crypto.c: SHA-256, Ed25519 verification, constant-time comparison, wiping and the OS random
 * source, over OpenSSL 3 EVP.
 *
 * Every document check in dirauth ends here, so the one thing this file must get right is the
 * difference between "the signature is bad" and "the library could not check it". OpenSSL's
 * EVP_DigestVerify returns 1 for a valid signature, 0 for an invalid one and a negative value
 * for an internal failure; only 1 is success, 0 maps to DIRAUTH_ERR_SIGNATURE, and every other
 * failure (a key that cannot be loaded, a context that cannot be made) to DIRAUTH_ERR_CRYPTO.
 * Both deny; the split is for the logs and for tests that must tell them apart.
 *
 * Making OpenSSL's key object from a public key's 32 bytes costs about a tenth of the
 * verification itself, and an authority verifies the same few provider and authority keys over
 * and over; so the objects are kept in a small direct-mapped table, shared by every thread
 * (OpenSSL's key objects are safe to use from several threads at once), each caller holding its
 * own reference while it verifies. The table is bounded (KEY_CACHE_SLOTS objects); a key that
 * meets another in its slot only costs the object's making again.
 */
#include "schema/crypto.h"

#include "schema/error.h"

#include <limits.h>
#include <pthread.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

int crypto_sha256(const uint8_t *data, size_t len, uint8_t out[CRYPTO_SHA256_SIZE])
{
	unsigned int out_len = 0;
	static const uint8_t empty[1] = {0};
	if (EVP_Digest(len ? data : empty, len, out, &out_len, EVP_sha256(), NULL) != 1)
		return DIRAUTH_ERR_CRYPTO;
	return out_len == CRYPTO_SHA256_SIZE ? 0 : DIRAUTH_ERR_CRYPTO;
}

int crypto_sha256_parts(const uint8_t *const *parts, const size_t *lengths, size_t count,
                        uint8_t out[CRYPTO_SHA256_SIZE])
{
	int rc = DIRAUTH_ERR_CRYPTO;
	unsigned int out_len = 0;
	EVP_MD_CTX *context = EVP_MD_CTX_new();
	if (!context)
		goto cleanup;
	if (EVP_DigestInit_ex(context, EVP_sha256(), NULL) != 1)
		goto cleanup;
	for (size_t i = 0; i < count; i++) {
		if (lengths[i] == 0)
			continue; /* a zero-length part may come with a NULL pointer */
		if (EVP_DigestUpdate(context, parts[i], lengths[i]) != 1)
			goto cleanup;
	}
	if (EVP_DigestFinal_ex(context, out, &out_len) != 1 || out_len != CRYPTO_SHA256_SIZE)
		goto cleanup;
	rc = 0;
cleanup:
	EVP_MD_CTX_free(context);
	return rc;
}

struct crypto_sha256_stream *crypto_sha256_new(void)
{
	EVP_MD_CTX *context = EVP_MD_CTX_new();
	if (context && EVP_DigestInit_ex(context, EVP_sha256(), NULL) != 1) {
		EVP_MD_CTX_free(context);
		context = NULL;
	}
	return (struct crypto_sha256_stream *)context;
}

int crypto_sha256_update(struct crypto_sha256_stream *stream, const void *data, size_t len)
{
	if (len == 0)
		return 0;
	return EVP_DigestUpdate((EVP_MD_CTX *)stream, data, len) == 1 ? 0 : DIRAUTH_ERR_CRYPTO;
}

int crypto_sha256_finish(struct crypto_sha256_stream *stream, uint8_t out[CRYPTO_SHA256_SIZE])
{
	unsigned int out_len = 0;
	int ok =
	    EVP_DigestFinal_ex((EVP_MD_CTX *)stream, out, &out_len) == 1 && out_len == CRYPTO_SHA256_SIZE;
	EVP_MD_CTX_free((EVP_MD_CTX *)stream);
	return ok ? 0 : DIRAUTH_ERR_CRYPTO;
}

void crypto_sha256_free(struct crypto_sha256_stream *stream)
{
	EVP_MD_CTX_free((EVP_MD_CTX *)stream);
}

#define KEY_CACHE_SLOTS 64

static struct {
	uint8_t public_key[CRYPTO_ED25519_PUBLIC_KEY_SIZE];
	EVP_PKEY *key; /* NULL: an empty slot */
} key_cache[KEY_CACHE_SLOTS];
static pthread_mutex_t key_cache_lock = PTHREAD_MUTEX_INITIALIZER;

/* The key object of public_key, with a reference for the caller (EVP_PKEY_free), or NULL. */
static EVP_PKEY *ed25519_key(const uint8_t public_key[CRYPTO_ED25519_PUBLIC_KEY_SIZE])
{
	size_t slot = ((size_t)public_key[0] | (size_t)public_key[1] << 8) % KEY_CACHE_SLOTS;
	EVP_PKEY *key = NULL, *evicted = NULL;
	pthread_mutex_lock(&key_cache_lock);
	if (key_cache[slot].key &&
	    memcmp(key_cache[slot].public_key, public_key, CRYPTO_ED25519_PUBLIC_KEY_SIZE) == 0 &&
	    EVP_PKEY_up_ref(key_cache[slot].key) == 1)
		key = key_cache[slot].key;
	pthread_mutex_unlock(&key_cache_lock);
	if (key)
		return key;
	key = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, public_key, CRYPTO_ED25519_PUBLIC_KEY_SIZE);
	if (!key || EVP_PKEY_up_ref(key) != 1)
		return key; /* not kept: the caller's reference is the only one */
	pthread_mutex_lock(&key_cache_lock);
	evicted = key_cache[slot].key;
	key_cache[slot].key = key;
	memcpy(key_cache[slot].public_key, public_key, CRYPTO_ED25519_PUBLIC_KEY_SIZE);
	pthread_mutex_unlock(&key_cache_lock);
	EVP_PKEY_free(evicted);
	return key;
}

int crypto_ed25519_verify(const uint8_t public_key[CRYPTO_ED25519_PUBLIC_KEY_SIZE], const uint8_t *message,
                          size_t message_len, const uint8_t signature[CRYPTO_ED25519_SIGNATURE_SIZE])
{
	int rc = DIRAUTH_ERR_CRYPTO;
	static const uint8_t empty[1] = {0};
	EVP_MD_CTX *context = NULL;
	EVP_PKEY *key = ed25519_key(public_key);
	if (!key)
		goto cleanup;
	context = EVP_MD_CTX_new();
	if (!context)
		goto cleanup;
	/* Ed25519 is a one-shot scheme: no digest is named, the message is hashed inside. */
	if (EVP_DigestVerifyInit(context, NULL, NULL, NULL, key) != 1)
		goto cleanup;
	int verdict = EVP_DigestVerify(context, signature, CRYPTO_ED25519_SIGNATURE_SIZE,
	                               message_len ? message : empty, message_len);
	if (verdict == 1)
		rc = 0;
	else if (verdict == 0)
		rc = DIRAUTH_ERR_SIGNATURE;
cleanup:
	EVP_MD_CTX_free(context);
	EVP_PKEY_free(key);
	return rc;
}

int crypto_random(uint8_t *out, size_t len)
{
	while (len > 0) {
		int chunk = len > INT_MAX ? INT_MAX : (int)len;
		if (RAND_bytes(out, chunk) != 1)
			return DIRAUTH_ERR_CRYPTO;
		out += chunk;
		len -= (size_t)chunk;
	}
	return 0;
}

int crypto_equal(const void *a, const void *b, size_t len)
{
	return CRYPTO_memcmp(a, b, len) == 0;
}

void crypto_wipe(void *data, size_t len)
{
	if (data && len)
		OPENSSL_cleanse(data, len);
}
