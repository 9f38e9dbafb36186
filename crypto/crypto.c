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
 * and over; so each thread keeps the objects it made in a small direct-mapped table of its own
 * (KEY_CACHE_SLOTS objects: a key that meets another in its slot only costs the object's making
 * again), freed when the thread ends. Nothing is shared between threads, so no lock and no
 * reference counting across threads.
 */
#include "crypto/crypto.h"

#include "base/error.h"

#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

/* SHA-256's method, fetched once: EVP_sha256() makes OpenSSL 3 look the implementation up in
 * its provider store at every digest, which costs as much as hashing a Merkle node's 65 bytes. */
static EVP_MD *sha256_fetched;
static pthread_once_t sha256_once = PTHREAD_ONCE_INIT;

static void sha256_fetch(void)
{
	sha256_fetched = EVP_MD_fetch(NULL, "SHA2-256", NULL);
}

static const EVP_MD *sha256_method(void)
{
	pthread_once(&sha256_once, sha256_fetch);
	return sha256_fetched ? sha256_fetched : EVP_sha256();
}

int crypto_sha256(const uint8_t *data, size_t len, uint8_t out[CRYPTO_SHA256_SIZE])
{
	unsigned int out_len = 0;
	static const uint8_t empty[1] = {0};
	if (EVP_Digest(len ? data : empty, len, out, &out_len, sha256_method(), NULL) != 1)
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
	if (EVP_DigestInit_ex(context, sha256_method(), NULL) != 1)
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
	if (context && EVP_DigestInit_ex(context, sha256_method(), NULL) != 1) {
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

#define KEY_CACHE_SLOTS 16

struct key_cache {
	uint8_t public_key[KEY_CACHE_SLOTS][CRYPTO_ED25519_PUBLIC_KEY_SIZE];
	EVP_PKEY *key[KEY_CACHE_SLOTS]; /* NULL: an empty slot */
};

static _Thread_local struct key_cache *thread_key_cache;
static pthread_key_t key_cache_owner; /* its destructor frees a thread's table */
static pthread_once_t key_cache_once = PTHREAD_ONCE_INIT;
static int key_cache_usable;

static void key_cache_free(void *argument)
{
	struct key_cache *cache = argument;
	for (size_t i = 0; i < KEY_CACHE_SLOTS; i++)
		EVP_PKEY_free(cache->key[i]);
	free(cache);
}

static void key_cache_init(void)
{
	key_cache_usable = pthread_key_create(&key_cache_owner, key_cache_free) == 0;
}

/* This thread's table, made at its first use; NULL when it cannot be (then nothing is kept). */
static struct key_cache *key_cache_of_thread(void)
{
	if (thread_key_cache)
		return thread_key_cache;
	pthread_once(&key_cache_once, key_cache_init);
	struct key_cache *cache = key_cache_usable ? calloc(1, sizeof *cache) : NULL;
	if (cache && pthread_setspecific(key_cache_owner, cache) != 0) {
		free(cache);
		cache = NULL;
	}
	return thread_key_cache = cache;
}

/* The key object of public_key, borrowed from this thread's table (valid until this thread's
 * next call), or NULL. *owned is set when it could not be kept: the caller then frees it. */
static EVP_PKEY *ed25519_key(const uint8_t public_key[CRYPTO_ED25519_PUBLIC_KEY_SIZE], EVP_PKEY **owned)
{
	struct key_cache *cache = key_cache_of_thread();
	size_t slot = ((size_t)public_key[0] | (size_t)public_key[1] << 8) % KEY_CACHE_SLOTS;
	*owned = NULL;
	if (cache && cache->key[slot] &&
	    memcmp(cache->public_key[slot], public_key, CRYPTO_ED25519_PUBLIC_KEY_SIZE) == 0)
		return cache->key[slot];
	EVP_PKEY *key =
	    EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, public_key, CRYPTO_ED25519_PUBLIC_KEY_SIZE);
	if (!key || !cache)
		return *owned = key;
	EVP_PKEY_free(cache->key[slot]);
	cache->key[slot] = key;
	memcpy(cache->public_key[slot], public_key, CRYPTO_ED25519_PUBLIC_KEY_SIZE);
	return key;
}

int crypto_ed25519_verify(const uint8_t public_key[CRYPTO_ED25519_PUBLIC_KEY_SIZE], const uint8_t *message,
                          size_t message_len, const uint8_t signature[CRYPTO_ED25519_SIGNATURE_SIZE])
{
	int rc = DIRAUTH_ERR_CRYPTO;
	static const uint8_t empty[1] = {0};
	EVP_MD_CTX *context = NULL;
	EVP_PKEY *owned = NULL;
	EVP_PKEY *key = ed25519_key(public_key, &owned);
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
	EVP_PKEY_free(owned);
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
