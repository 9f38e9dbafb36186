/*
 * key.h: Ed25519 private keys: generate, save, load, sign. Only signer/ and dirauthctl's key
 * commands include this header; dirauthd never does.
 *
 * File format: one line, the C2SP-style signer key
 *   PRIVATE+KEY+<name>+<key id hex>+<base64(0x01 || 32-byte seed)>\n
 * Files are written with O_CREAT|O_EXCL|O_NOFOLLOW and mode 0600, and refused on load when they
 * are not regular files, are symlinks, or group/other have any permission bit
 * (DIRAUTH_ERR_PERMISSION). Every copy of the seed is wiped with OPENSSL_cleanse.
 */
#ifndef DIRAUTH_SIGNER_KEY_H
#define DIRAUTH_SIGNER_KEY_H

#include "schema/note.h"

#include <stddef.h>
#include <stdint.h>

struct signer_key;

/* New random key for name. Returns 0, DIRAUTH_ERR_SYNTAX (bad name), DIRAUTH_ERR_CRYPTO,
 * DIRAUTH_ERR_NOMEM. */
int signer_key_generate(const char *name, struct signer_key **out);

/* Writes the key to a new file. Returns 0, DIRAUTH_ERR_EXISTS, DIRAUTH_ERR_IO. */
int signer_key_save(const struct signer_key *key, const char *path);

/* Loads a key file. Returns 0, DIRAUTH_ERR_PERMISSION, DIRAUTH_ERR_NOT_FOUND, DIRAUTH_ERR_IO,
 * DIRAUTH_ERR_SYNTAX (also when the key id does not match), DIRAUTH_ERR_CRYPTO. */
int signer_key_load(const char *path, struct signer_key **out);

/* The key's public verifier. */
const struct note_verifier *signer_key_verifier(const struct signer_key *key);

/* Signs message for a signed note: fills out's name, key id and the 64-byte signature.
 * Returns 0 or DIRAUTH_ERR_CRYPTO. */
int signer_key_sign(const struct signer_key *key, const uint8_t *message, size_t len,
                    struct note_signature *out);

/* Signs message with the key's raw Ed25519 signature (64 bytes), for signatures whose bytes
 * are not a plain note signature (a tlog cosignature prefixes a timestamp). The caller is
 * responsible for the message carrying its own purpose tag. Returns 0 or DIRAUTH_ERR_CRYPTO. */
int signer_key_sign_raw(const struct signer_key *key, const uint8_t *message, size_t len,
                        uint8_t signature[64]);

/* Wipes and frees. Accepts NULL. */
void signer_key_free(struct signer_key *key);

#endif
