/*
 * key.c: Ed25519 private keys on disk and in memory.
 *
 * A key file is one line in the C2SP signer-key format that Go's note package reads and writes,
 * so keys move between dirauth and other signed-note tools unchanged:
 *
 *   PRIVATE+KEY+<name>+<key id as 8 lower-case hex>+<base64(0x01 || 32-byte seed)>\n
 *
 * The file is the most sensitive thing the project owns, so it is handled like signify and
 * minisign handle theirs: created exclusively with O_NOFOLLOW and mode 0600, and on load refused
 * unless it is a regular file reached without a symlink that no group or other user may touch.
 * Reads are capped at KEY_FILE_MAX bytes, so a wrong path (a log file, a device) cannot make the
 * loader read without bound. The parser is strict: the key id written in the file must be the one
 * the name and the public key give, so a file edited by hand or pasted under the wrong name is
 * refused instead of silently producing signatures that nobody can verify.
 *
 * In memory the key is an OpenSSL EVP_PKEY; the seed exists outside it only for the moment a file
 * is read or written, and every buffer that held the seed or its base64 is wiped with
 * OPENSSL_cleanse before it is released.
 */
#include "signer/key.h"

#include "crypto/crypto.h"
#include "schema/encoding.h"
#include "base/error.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define KEY_FILE_MAX     1024 /* far above the longest valid key line (about 200 bytes) */
#define KEY_FILE_PREFIX  "PRIVATE+KEY+"
#define KEY_SEED_SIZE    32
#define KEY_ENCODED_SIZE (1 + KEY_SEED_SIZE) /* type byte, then the seed */

struct signer_key {
	EVP_PKEY *pkey;
	struct note_verifier verifier;
};

/* Builds a key from a seed: the EVP_PKEY and the verifier (name, key id, public key). */
static int key_from_seed(const char *name, const uint8_t seed[KEY_SEED_SIZE], struct signer_key **out)
{
	int rc = DIRAUTH_ERR_CRYPTO;
	uint8_t public_key[CRYPTO_ED25519_PUBLIC_KEY_SIZE];
	size_t public_key_len = sizeof(public_key);
	struct signer_key *key = calloc(1, sizeof(*key));

	*out = NULL;
	if (!key) {
		rc = DIRAUTH_ERR_NOMEM;
		goto cleanup;
	}
	key->pkey = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, seed, KEY_SEED_SIZE);
	if (!key->pkey)
		goto cleanup;
	if (EVP_PKEY_get_raw_public_key(key->pkey, public_key, &public_key_len) != 1 ||
	    public_key_len != sizeof(public_key))
		goto cleanup;
	rc = note_verifier_from_ed25519(name, public_key, &key->verifier);
	if (rc != 0)
		goto cleanup;
	*out = key;
	key = NULL;
	rc = 0;
cleanup:
	signer_key_free(key);
	return rc;
}

int signer_key_generate(const char *name, struct signer_key **out)
{
	uint8_t seed[KEY_SEED_SIZE];
	int rc;

	*out = NULL;
	if (!name || !note_name_is_valid(name, strlen(name)))
		return DIRAUTH_ERR_SYNTAX;
	rc = crypto_random(seed, sizeof(seed));
	if (rc == 0)
		rc = key_from_seed(name, seed, out);
	OPENSSL_cleanse(seed, sizeof(seed));
	return rc;
}

/* Writes all of data to fd, retrying short writes and interruptions. */
static int write_all(int fd, const char *data, size_t len)
{
	while (len > 0) {
		ssize_t written = write(fd, data, len);
		if (written < 0) {
			if (errno == EINTR)
				continue;
			return DIRAUTH_ERR_IO;
		}
		data += written;
		len -= (size_t)written;
	}
	return 0;
}

int signer_key_save(const struct signer_key *key, const char *path)
{
	int rc = DIRAUTH_ERR_IO;
	int fd = -1;
	int created = 0;
	uint8_t encoded[KEY_ENCODED_SIZE];
	size_t seed_len = KEY_SEED_SIZE;
	char base64[((KEY_ENCODED_SIZE + 2) / 3) * 4 + 1];
	/* prefix, name, '+', key id, '+', base64, '\n', NUL */
	char line[sizeof(KEY_FILE_PREFIX) + NOTE_NAME_MAX + 1 + 8 + 1 + sizeof(base64) + 2];
	int line_len;

	encoded[0] = NOTE_KEY_TYPE_ED25519;
	if (EVP_PKEY_get_raw_private_key(key->pkey, encoded + 1, &seed_len) != 1 ||
	    seed_len != KEY_SEED_SIZE) {
		rc = DIRAUTH_ERR_CRYPTO;
		goto cleanup;
	}
	base64_encode(encoded, sizeof(encoded), base64);
	line_len = snprintf(line, sizeof(line), "%s%s+%08x+%s\n", KEY_FILE_PREFIX, key->verifier.name,
	                    (unsigned)key->verifier.key_id, base64);
	if (line_len < 0 || (size_t)line_len >= sizeof(line)) {
		rc = DIRAUTH_ERR_INTERNAL;
		goto cleanup;
	}

	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = errno == EEXIST ? DIRAUTH_ERR_EXISTS : DIRAUTH_ERR_IO;
		goto cleanup;
	}
	created = 1;
	/* The umask can only remove bits from 0600, but say the mode explicitly all the same. */
	if (fchmod(fd, 0600) != 0)
		goto cleanup;
	rc = write_all(fd, line, (size_t)line_len);
	if (rc != 0)
		goto cleanup;
	rc = DIRAUTH_ERR_IO;
	if (fsync(fd) != 0)
		goto cleanup;
	if (close(fd) != 0) {
		fd = -1;
		goto cleanup;
	}
	fd = -1;
	rc = 0;
cleanup:
	if (fd >= 0)
		close(fd);
	/* A half-written key file would fail to load later; better that it does not exist at all. */
	if (rc != 0 && created)
		unlink(path);
	OPENSSL_cleanse(encoded, sizeof(encoded));
	OPENSSL_cleanse(base64, sizeof(base64));
	OPENSSL_cleanse(line, sizeof(line));
	return rc;
}

/* Reads at most cap bytes of fd into buf; *len gets the count. DIRAUTH_ERR_SYNTAX when the file
 * holds more than cap bytes (it cannot be a key file), DIRAUTH_ERR_IO on a read error. */
static int read_bounded(int fd, uint8_t *buf, size_t cap, size_t *len)
{
	size_t used = 0;
	uint8_t extra;

	for (;;) {
		ssize_t got;
		if (used < cap)
			got = read(fd, buf + used, cap - used);
		else
			got = read(fd, &extra, 1);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			return DIRAUTH_ERR_IO;
		}
		if (got == 0)
			break;
		if (used >= cap)
			return DIRAUTH_ERR_SYNTAX;
		used += (size_t)got;
	}
	*len = used;
	return 0;
}

/* Parses the key line in buf (the whole file) and builds the key. */
static int key_parse(const uint8_t *buf, size_t len, struct signer_key **out)
{
	int rc = DIRAUTH_ERR_SYNTAX;
	const char *text = (const char *)buf;
	const size_t prefix_len = strlen(KEY_FILE_PREFIX);
	char name[NOTE_NAME_MAX + 1];
	uint8_t key_id_bytes[4];
	uint32_t key_id;
	uint8_t encoded[KEY_ENCODED_SIZE + 3]; /* room to notice a too-long key */
	size_t encoded_len = 0;
	size_t pos, name_len;
	struct signer_key *key = NULL;

	*out = NULL;
	/* Exactly one line: ends in '\n' and has no other. */
	if (len == 0 || buf[len - 1] != '\n' || memchr(buf, '\n', len - 1) != NULL)
		goto cleanup;
	len--;
	if (len < prefix_len || memcmp(text, KEY_FILE_PREFIX, prefix_len) != 0)
		goto cleanup;
	pos = prefix_len;

	/* The name cannot contain '+', so the first '+' ends it. */
	for (name_len = 0; pos + name_len < len && text[pos + name_len] != '+'; name_len++)
		;
	if (pos + name_len >= len || name_len > NOTE_NAME_MAX || !note_name_is_valid(text + pos, name_len))
		goto cleanup;
	memcpy(name, text + pos, name_len);
	name[name_len] = '\0';
	pos += name_len + 1;

	/* Key id: exactly 8 lower-case hex digits, then '+'. */
	if (len - pos < 9 || text[pos + 8] != '+' || hex_decode(text + pos, 8, key_id_bytes, 4) != 0)
		goto cleanup;
	key_id = (uint32_t)key_id_bytes[0] << 24 | (uint32_t)key_id_bytes[1] << 16 |
	         (uint32_t)key_id_bytes[2] << 8 | (uint32_t)key_id_bytes[3];
	pos += 9;

	/* The rest is the base64 of type and seed (base64 itself may contain '+'). */
	if (base64_decode(text + pos, len - pos, encoded, sizeof(encoded), &encoded_len) != 0 ||
	    encoded_len != KEY_ENCODED_SIZE || encoded[0] != NOTE_KEY_TYPE_ED25519)
		goto cleanup;

	rc = key_from_seed(name, encoded + 1, &key);
	if (rc != 0)
		goto cleanup;
	if (key->verifier.key_id != key_id) {
		rc = DIRAUTH_ERR_SYNTAX;
		goto cleanup;
	}
	*out = key;
	key = NULL;
	rc = 0;
cleanup:
	signer_key_free(key);
	OPENSSL_cleanse(encoded, sizeof(encoded));
	return rc;
}

int signer_key_load(const char *path, struct signer_key **out)
{
	int rc = DIRAUTH_ERR_IO;
	int fd;
	struct stat st;
	uint8_t buf[KEY_FILE_MAX];
	size_t len = 0;

	*out = NULL;
	/* O_NONBLOCK so that a FIFO at the path cannot hang the open; fstat refuses it below. */
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return DIRAUTH_ERR_NOT_FOUND;
		if (errno == ELOOP || errno == EACCES || errno == EPERM)
			return DIRAUTH_ERR_PERMISSION;
		return DIRAUTH_ERR_IO;
	}
	if (fstat(fd, &st) != 0)
		goto cleanup;
	if (!S_ISREG(st.st_mode) || (st.st_mode & 077) != 0) {
		rc = DIRAUTH_ERR_PERMISSION;
		goto cleanup;
	}
	rc = read_bounded(fd, buf, sizeof(buf), &len);
	if (rc != 0)
		goto cleanup;
	rc = key_parse(buf, len, out);
cleanup:
	close(fd);
	OPENSSL_cleanse(buf, sizeof(buf));
	return rc;
}

const struct note_verifier *signer_key_verifier(const struct signer_key *key)
{
	return &key->verifier;
}

int signer_key_sign(const struct signer_key *key, const uint8_t *message, size_t len,
                    struct note_signature *out)
{
	int rc = DIRAUTH_ERR_CRYPTO;
	EVP_MD_CTX *context = EVP_MD_CTX_new();
	size_t signature_len = CRYPTO_ED25519_SIGNATURE_SIZE;

	memset(out, 0, sizeof(*out));
	if (!context)
		goto cleanup;
	/* Ed25519 hashes internally: no digest is named, and the message is signed in one call. */
	if (EVP_DigestSignInit(context, NULL, NULL, NULL, key->pkey) != 1)
		goto cleanup;
	if (EVP_DigestSign(context, out->signature, &signature_len, message, len) != 1 ||
	    signature_len != CRYPTO_ED25519_SIGNATURE_SIZE)
		goto cleanup;
	memcpy(out->name, key->verifier.name, sizeof(out->name));
	out->key_id = key->verifier.key_id;
	out->signature_len = signature_len;
	rc = 0;
cleanup:
	if (rc != 0)
		memset(out, 0, sizeof(*out));
	EVP_MD_CTX_free(context);
	return rc;
}

int signer_key_sign_raw(const struct signer_key *key, const uint8_t *message, size_t len,
                        uint8_t signature[64])
{
	struct note_signature note_signature;
	int rc = signer_key_sign(key, message, len, &note_signature);

	if (rc == 0)
		memcpy(signature, note_signature.signature, CRYPTO_ED25519_SIGNATURE_SIZE);
	else
		memset(signature, 0, CRYPTO_ED25519_SIGNATURE_SIZE);
	return rc;
}

void signer_key_free(struct signer_key *key)
{
	if (!key)
		return;
	/* OpenSSL clears the private key material of an Ed25519 EVP_PKEY when it frees it. */
	EVP_PKEY_free(key->pkey);
	OPENSSL_cleanse(key, sizeof(*key));
	free(key);
}
