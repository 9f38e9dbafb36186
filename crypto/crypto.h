/*
 * crypto.h: the public-key and hash primitives every program needs, verification side only.
 *
 * Thin wrappers over OpenSSL 3 EVP (no deprecated API). Nothing here touches a private key:
 * signing lives in signer/. A verification failure and a library failure are different errors
 * so that a caller never mistakes "could not check" for "checked and bad" (both deny).
 */
#ifndef DIRAUTH_CRYPTO_CRYPTO_H
#define DIRAUTH_CRYPTO_CRYPTO_H

#include <stddef.h>
#include <stdint.h>

#define CRYPTO_SHA256_SIZE             32
#define CRYPTO_ED25519_PUBLIC_KEY_SIZE 32
#define CRYPTO_ED25519_SIGNATURE_SIZE  64

/* SHA-256 of data. Returns 0 or DIRAUTH_ERR_CRYPTO. */
int crypto_sha256(const uint8_t *data, size_t len, uint8_t out[CRYPTO_SHA256_SIZE]);

/* SHA-256 over the concatenation of count parts. Returns 0 or DIRAUTH_ERR_CRYPTO. */
int crypto_sha256_parts(const uint8_t *const *parts, const size_t *lengths, size_t count,
                        uint8_t out[CRYPTO_SHA256_SIZE]);

/* SHA-256 over input that arrives in pieces: new, update as often as needed, finish (which
 * frees). crypto_sha256_new returns NULL when out of memory; update and finish return 0 or
 * DIRAUTH_ERR_CRYPTO; free accepts NULL (for a digest abandoned before finish). */
struct crypto_sha256_stream;
struct crypto_sha256_stream *crypto_sha256_new(void);
int crypto_sha256_update(struct crypto_sha256_stream *stream, const void *data, size_t len);
int crypto_sha256_finish(struct crypto_sha256_stream *stream, uint8_t out[CRYPTO_SHA256_SIZE]);
void crypto_sha256_free(struct crypto_sha256_stream *stream);

/* Verifies an Ed25519 signature over message. Returns 0 when valid, DIRAUTH_ERR_SIGNATURE when
 * invalid, DIRAUTH_ERR_CRYPTO when the check could not run. Safe to call from several threads;
 * each thread keeps the key objects of the keys it used last, a bounded number of them, until it
 * ends. */
int crypto_ed25519_verify(const uint8_t public_key[CRYPTO_ED25519_PUBLIC_KEY_SIZE], const uint8_t *message,
                          size_t message_len, const uint8_t signature[CRYPTO_ED25519_SIGNATURE_SIZE]);

/* Fills out with len bytes from the OS CSPRNG (RAND_bytes). Returns 0 or DIRAUTH_ERR_CRYPTO. */
int crypto_random(uint8_t *out, size_t len);

/* 1 when the len bytes at a and b are equal, else 0, in a time that depends on len only
 * (CRYPTO_memcmp): for digests of secrets, MACs and anything else an attacker may probe. */
int crypto_equal(const void *a, const void *b, size_t len);

/* Overwrites len bytes at data with zeros in a way the compiler cannot drop (OPENSSL_cleanse):
 * for every copy of a secret before it is freed or goes out of scope. Accepts NULL with len 0. */
void crypto_wipe(void *data, size_t len);

#endif
