/*
 * check_note.c: tests of C2SP signed notes and verifier keys (schema/note.h) and of the
 * verification primitives under them (crypto/crypto.h).
 *
 * The anchor is the example from c2sp.org/signed-note, which this code did not produce: it must
 * verify, and changing any byte of its text must make it fail. Fresh signatures are made here
 * with OpenSSL directly (not with the project's signer) so that the verifier is checked against
 * an independent signing path. The rest walks every refusal the parser promises and the
 * counting rules a threshold depends on: unknown keys and repeats count zero, and one bad
 * signature by a known key rejects the note.
 */
#include "base/buffer.h"
#include "crypto/crypto.h"
#include "schema/encoding.h"
#include "base/error.h"
#include "schema/note.h"

#include <check.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The example key and note published in the C2SP signed-note specification (c2sp.org/signed-note). */
static const char c2sp_verifier[] = "example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k";
static const char c2sp_text[] = "This is an example message.\n";
static const char c2sp_note[] =
    "This is an example message.\n"
    "\n"
    "\xe2\x80\x94 example.com/foo "
    "Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM=\n";

/* A test signing key, made and used with OpenSSL alone. */
struct test_key {
	EVP_PKEY *pkey;
	uint8_t public_key[32];
	struct note_verifier verifier;
};

static void test_key_make(struct test_key *key, const char *name)
{
	key->pkey = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
	ck_assert_ptr_nonnull(key->pkey);
	size_t len = sizeof(key->public_key);
	ck_assert_int_eq(EVP_PKEY_get_raw_public_key(key->pkey, key->public_key, &len), 1);
	ck_assert_uint_eq(len, 32);
	ck_assert_int_eq(note_verifier_from_ed25519(name, key->public_key, &key->verifier), 0);
}

static void test_key_free(struct test_key *key)
{
	EVP_PKEY_free(key->pkey);
	key->pkey = NULL;
}

static void ed25519_sign(EVP_PKEY *pkey, const uint8_t *message, size_t len, uint8_t signature[64])
{
	EVP_MD_CTX *context = EVP_MD_CTX_new();
	ck_assert_ptr_nonnull(context);
	ck_assert_int_eq(EVP_DigestSignInit(context, NULL, NULL, NULL, pkey), 1);
	size_t signature_len = 64;
	ck_assert_int_eq(EVP_DigestSign(context, signature, &signature_len, message, len), 1);
	ck_assert_uint_eq(signature_len, 64);
	EVP_MD_CTX_free(context);
}

/* A signature by key over text, labelled with the key's name and id. */
static struct note_signature sign_with(const struct test_key *key, const char *text)
{
	struct note_signature signature;
	memset(&signature, 0, sizeof(signature));
	snprintf(signature.name, sizeof(signature.name), "%s", key->verifier.name);
	signature.key_id = key->verifier.key_id;
	signature.signature_len = 64;
	ed25519_sign(key->pkey, (const uint8_t *)text, strlen(text), signature.signature);
	return signature;
}

/* Formats text and signatures into a note and parses it back; fails the test on error. */
static struct note *make_note(const char *text, const struct note_signature *signatures, size_t count)
{
	struct buffer b;
	buffer_init(&b);
	ck_assert_int_eq(note_format((const uint8_t *)text, strlen(text), signatures, count, &b), 0);
	struct note *note = NULL;
	ck_assert_int_eq(note_parse(b.data, b.len, &note), 0);
	buffer_free(&b);
	return note;
}

static int parse_string(const char *s, size_t len)
{
	struct note *note = NULL;
	int rc = note_parse((const uint8_t *)s, len, &note);
	if (rc == 0)
		ck_assert_ptr_nonnull(note);
	note_free(note);
	return rc;
}

/* ---- crypto primitives ---- */

START_TEST(test_crypto_sha256)
{
	uint8_t digest[32];
	char hex[65];
	ck_assert_int_eq(crypto_sha256(NULL, 0, digest), 0);
	hex_encode(digest, 32, hex);
	ck_assert_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	ck_assert_int_eq(crypto_sha256((const uint8_t *)"abc", 3, digest), 0);
	hex_encode(digest, 32, hex);
	ck_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");

	const uint8_t *parts[] = {(const uint8_t *)"a", NULL, (const uint8_t *)"bc"};
	const size_t lengths[] = {1, 0, 2};
	uint8_t from_parts[32];
	ck_assert_int_eq(crypto_sha256_parts(parts, lengths, 3, from_parts), 0);
	ck_assert_mem_eq(from_parts, digest, 32);
	ck_assert_int_eq(crypto_sha256_parts(NULL, NULL, 0, from_parts), 0);
	hex_encode(from_parts, 32, hex);
	ck_assert_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}
END_TEST

START_TEST(test_crypto_ed25519_verify)
{
	struct test_key key;
	test_key_make(&key, "test.example/crypto");
	const uint8_t message[] = "message";
	uint8_t signature[64];
	ed25519_sign(key.pkey, message, sizeof(message) - 1, signature);
	ck_assert_int_eq(crypto_ed25519_verify(key.public_key, message, sizeof(message) - 1, signature), 0);
	ck_assert_int_eq(crypto_ed25519_verify(key.public_key, message, sizeof(message) - 2, signature),
	                 DIRAUTH_ERR_SIGNATURE);
	signature[10] ^= 0x01;
	ck_assert_int_eq(crypto_ed25519_verify(key.public_key, message, sizeof(message) - 1, signature),
	                 DIRAUTH_ERR_SIGNATURE);
	signature[10] ^= 0x01;
	/* A signature over the empty message verifies too. */
	uint8_t empty_signature[64];
	ed25519_sign(key.pkey, message, 0, empty_signature);
	ck_assert_int_eq(crypto_ed25519_verify(key.public_key, NULL, 0, empty_signature), 0);
	/* Another key does not verify it. */
	struct test_key other;
	test_key_make(&other, "test.example/other");
	ck_assert_int_eq(crypto_ed25519_verify(other.public_key, message, sizeof(message) - 1, signature),
	                 DIRAUTH_ERR_SIGNATURE);
	test_key_free(&key);
	test_key_free(&other);
}
END_TEST

START_TEST(test_crypto_random)
{
	uint8_t a[32] = {0};
	uint8_t b[32] = {0};
	ck_assert_int_eq(crypto_random(a, sizeof(a)), 0);
	ck_assert_int_eq(crypto_random(b, sizeof(b)), 0);
	ck_assert(memcmp(a, b, sizeof(a)) != 0);
	ck_assert_int_eq(crypto_random(a, 0), 0);
}
END_TEST

/* ---- the C2SP example ---- */

START_TEST(test_c2sp_example_verifies)
{
	struct note_verifier verifier;
	ck_assert_int_eq(note_verifier_parse(c2sp_verifier, strlen(c2sp_verifier), &verifier), 0);
	ck_assert_str_eq(verifier.name, "example.com/foo");
	ck_assert_uint_eq(verifier.key_id, 0x530d903a);
	ck_assert_uint_eq(verifier.type, NOTE_KEY_TYPE_ED25519);

	struct note *note = NULL;
	ck_assert_int_eq(note_parse((const uint8_t *)c2sp_note, strlen(c2sp_note), &note), 0);
	ck_assert_uint_eq(note->text_len, strlen(c2sp_text));
	ck_assert_mem_eq(note->text, c2sp_text, note->text_len);
	ck_assert_uint_eq(note->text[note->text_len], 0);
	ck_assert_uint_eq(note->signature_count, 1);
	ck_assert_str_eq(note->signatures[0].name, "example.com/foo");
	ck_assert_uint_eq(note->signatures[0].key_id, 0x530d903a);
	ck_assert_uint_eq(note->signatures[0].signature_len, 64);

	size_t count = 0;
	uint8_t verified[1] = {0};
	ck_assert_int_eq(note_verify(note, &verifier, 1, verified, &count), 0);
	ck_assert_uint_eq(count, 1);
	ck_assert_uint_eq(verified[0], 1);
	ck_assert_int_eq(note_verify_threshold(note, &verifier, 1, 1), 0);
	ck_assert_int_eq(note_verify_threshold(note, &verifier, 1, 2), DIRAUTH_ERR_THRESHOLD);

	/* Formatting the parsed note gives back the same bytes. */
	struct buffer b;
	buffer_init(&b);
	ck_assert_int_eq(note_format(note->text, note->text_len, note->signatures, note->signature_count, &b),
	                 0);
	ck_assert_uint_eq(b.len, strlen(c2sp_note));
	ck_assert_mem_eq(b.data, c2sp_note, b.len);
	buffer_free(&b);
	note_free(note);
}
END_TEST

START_TEST(test_c2sp_example_any_text_byte_changed)
{
	struct note_verifier verifier;
	ck_assert_int_eq(note_verifier_parse(c2sp_verifier, strlen(c2sp_verifier), &verifier), 0);
	size_t note_len = strlen(c2sp_note);
	size_t text_len = strlen(c2sp_text);
	char *copy = malloc(note_len + 1);
	ck_assert_ptr_nonnull(copy);
	for (size_t i = 0; i < text_len; i++) {
		memcpy(copy, c2sp_note, note_len + 1);
		if (c2sp_note[i] == '\n') {
			/* The final newline: any change breaks the structure or the signature. */
			copy[i] = 'x';
			struct note *note = NULL;
			int rc = note_parse((const uint8_t *)copy, note_len, &note);
			if (rc == 0) {
				size_t count = 0;
				rc = note_verify(note, &verifier, 1, NULL, &count);
				note_free(note);
			}
			ck_assert_msg(rc != 0, "changed byte %zu still accepted", i);
			continue;
		}
		/* Another printable ASCII byte keeps the note well formed, so only the signature can
		 * catch the change. */
		copy[i] = c2sp_note[i] == 'z' ? 'y' : (char)(c2sp_note[i] + 1);
		struct note *note = NULL;
		ck_assert_int_eq(note_parse((const uint8_t *)copy, note_len, &note), 0);
		size_t count = 0;
		ck_assert_msg(note_verify(note, &verifier, 1, NULL, &count) == DIRAUTH_ERR_SIGNATURE,
		              "changed byte %zu still verifies", i);
		ck_assert_int_eq(note_verify_threshold(note, &verifier, 1, 1), DIRAUTH_ERR_SIGNATURE);
		note_free(note);
	}
	free(copy);
}
END_TEST

START_TEST(test_c2sp_example_signature_byte_changed)
{
	struct note_verifier verifier;
	ck_assert_int_eq(note_verifier_parse(c2sp_verifier, strlen(c2sp_verifier), &verifier), 0);
	struct note *note = NULL;
	ck_assert_int_eq(note_parse((const uint8_t *)c2sp_note, strlen(c2sp_note), &note), 0);
	for (size_t i = 0; i < 64; i++) {
		size_t count = 0;
		note->signatures[0].signature[i] ^= 0x40;
		ck_assert_int_eq(note_verify(note, &verifier, 1, NULL, &count), DIRAUTH_ERR_SIGNATURE);
		note->signatures[0].signature[i] ^= 0x40;
	}
	note_free(note);
}
END_TEST

/* ---- key ids and verifier keys ---- */

START_TEST(test_key_id)
{
	struct note_verifier verifier;
	ck_assert_int_eq(note_verifier_parse(c2sp_verifier, strlen(c2sp_verifier), &verifier), 0);
	uint32_t key_id = 0;
	ck_assert_int_eq(
	    note_key_id("example.com/foo", NOTE_KEY_TYPE_ED25519, verifier.public_key, 32, &key_id), 0);
	ck_assert_uint_eq(key_id, 0x530d903a);

	/* Independently: the first four bytes of SHA-256(name || '\n' || 0x01 || key). */
	uint8_t input[64];
	size_t name_len = strlen("example.com/foo");
	memcpy(input, "example.com/foo", name_len);
	input[name_len] = '\n';
	input[name_len + 1] = 0x01;
	memcpy(input + name_len + 2, verifier.public_key, 32);
	uint8_t digest[32];
	unsigned int digest_len = 0;
	ck_assert_int_eq(EVP_Digest(input, name_len + 34, digest, &digest_len, EVP_sha256(), NULL), 1);
	ck_assert_uint_eq(key_id, (uint32_t)digest[0] << 24 | (uint32_t)digest[1] << 16 |
	                              (uint32_t)digest[2] << 8 | digest[3]);

	/* The name, the type and the key all feed the id. */
	uint32_t other = 0;
	ck_assert_int_eq(
	    note_key_id("example.com/fop", NOTE_KEY_TYPE_ED25519, verifier.public_key, 32, &other), 0);
	ck_assert_uint_ne(other, key_id);
	ck_assert_int_eq(note_key_id("example.com/foo", 0x02, verifier.public_key, 32, &other), 0);
	ck_assert_uint_ne(other, key_id);
	verifier.public_key[31] ^= 1;
	ck_assert_int_eq(
	    note_key_id("example.com/foo", NOTE_KEY_TYPE_ED25519, verifier.public_key, 32, &other), 0);
	ck_assert_uint_ne(other, key_id);

	/* note_verifier_from_ed25519 computes the same id. */
	verifier.public_key[31] ^= 1;
	struct note_verifier built;
	ck_assert_int_eq(note_verifier_from_ed25519("example.com/foo", verifier.public_key, &built), 0);
	ck_assert_uint_eq(built.key_id, 0x530d903a);
	char text[NOTE_VERIFIER_KEY_MAX + 1];
	note_verifier_format(&built, text);
	ck_assert_str_eq(text, c2sp_verifier);
}
END_TEST

START_TEST(test_verifier_from_ed25519_refuses_bad_names)
{
	uint8_t public_key[32] = {1};
	struct note_verifier verifier;
	ck_assert_int_eq(note_verifier_from_ed25519("", public_key, &verifier), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(note_verifier_from_ed25519("a b", public_key, &verifier), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(note_verifier_from_ed25519("a+b", public_key, &verifier), DIRAUTH_ERR_SYNTAX);
	char long_name[NOTE_NAME_MAX + 2];
	memset(long_name, 'a', NOTE_NAME_MAX + 1);
	long_name[NOTE_NAME_MAX + 1] = 0;
	ck_assert_int_eq(note_verifier_from_ed25519(long_name, public_key, &verifier), DIRAUTH_ERR_SYNTAX);
	long_name[NOTE_NAME_MAX] = 0;
	ck_assert_int_eq(note_verifier_from_ed25519(long_name, public_key, &verifier), 0);
	ck_assert_uint_eq(strlen(verifier.name), NOTE_NAME_MAX);
}
END_TEST

START_TEST(test_verifier_round_trip)
{
	static const char *const names[] = {"a", "example.com/log", "caf\xc3\xa9.example/\xf0\x9f\x94\x91",
	                                    "x=y/z?q#f"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct test_key key;
		test_key_make(&key, names[i]);
		char text[NOTE_VERIFIER_KEY_MAX + 1];
		note_verifier_format(&key.verifier, text);
		struct note_verifier parsed;
		ck_assert_int_eq(note_verifier_parse(text, strlen(text), &parsed), 0);
		ck_assert_str_eq(parsed.name, names[i]);
		ck_assert_uint_eq(parsed.key_id, key.verifier.key_id);
		ck_assert_uint_eq(parsed.type, NOTE_KEY_TYPE_ED25519);
		ck_assert_mem_eq(parsed.public_key, key.public_key, 32);
		char again[NOTE_VERIFIER_KEY_MAX + 1];
		note_verifier_format(&parsed, again);
		ck_assert_str_eq(again, text);
		test_key_free(&key);
	}

	/* The longest name still formats within NOTE_VERIFIER_KEY_MAX and parses back. */
	char long_name[NOTE_NAME_MAX + 1];
	memset(long_name, 'n', NOTE_NAME_MAX);
	long_name[NOTE_NAME_MAX] = 0;
	struct test_key key;
	test_key_make(&key, long_name);
	char text[NOTE_VERIFIER_KEY_MAX + 1];
	note_verifier_format(&key.verifier, text);
	ck_assert_uint_le(strlen(text), NOTE_VERIFIER_KEY_MAX);
	struct note_verifier parsed;
	ck_assert_int_eq(note_verifier_parse(text, strlen(text), &parsed), 0);
	ck_assert_str_eq(parsed.name, long_name);
	test_key_free(&key);
}
END_TEST

/* A key a document names is canonical only when it reads back as itself: an ASCII name, Ed25519,
 * the key id that belongs to the key, a name that ends within its field. */
START_TEST(test_verifier_canonical)
{
	struct test_key key;
	test_key_make(&key, "provider.example");
	ck_assert_int_eq(note_verifier_is_canonical(&key.verifier), 1);

	struct note_verifier changed = key.verifier;
	changed.key_id ^= 1;
	ck_assert_int_eq(note_verifier_is_canonical(&changed), 0);
	changed = key.verifier;
	changed.public_key[0] ^= 1; /* the key id no longer belongs to the key */
	ck_assert_int_eq(note_verifier_is_canonical(&changed), 0);
	changed = key.verifier;
	changed.type = 0x04; /* a cosignature key */
	ck_assert_int_eq(note_verifier_is_canonical(&changed), 0);
	changed = key.verifier;
	memset(changed.name, 'a', sizeof changed.name); /* no end within the field */
	ck_assert_int_eq(note_verifier_is_canonical(&changed), 0);
	test_key_free(&key);

	/* A name note_verifier_parse takes but that is not ASCII. */
	test_key_make(&key, "caf\xc3\xa9.example");
	ck_assert_int_eq(note_verifier_is_canonical(&key.verifier), 0);
	test_key_free(&key);
}
END_TEST

/* Builds "<name>+<id hex>+<base64(type || key)>" with the right id for those values. */
static void build_verifier_string(const char *name, uint8_t type, const uint8_t *key, size_t key_len,
                                  char *out, size_t cap)
{
	uint32_t key_id = 0;
	ck_assert_int_eq(note_key_id(name, type, key, key_len, &key_id), 0);
	uint8_t raw[64];
	ck_assert_uint_le(key_len + 1, sizeof(raw));
	raw[0] = type;
	memcpy(raw + 1, key, key_len);
	char encoded[100];
	base64_encode(raw, key_len + 1, encoded);
	int n = snprintf(out, cap, "%s+%08x+%s", name, (unsigned)key_id, encoded);
	ck_assert(n > 0 && (size_t)n < cap);
}

START_TEST(test_verifier_refusals)
{
	struct note_verifier verifier;
	const char *good = c2sp_verifier;
	size_t good_len = strlen(good);
	char text[600];

	/* Wrong key id, upper-case key id, short key id, long key id. */
	static const char *const bad_ids[] = {
	    "example.com/foo+530d903b+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k",
	    "example.com/foo+530D903A+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k",
	    "example.com/foo+530d903+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k",
	    "example.com/foo+0530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k",
	    "example.com/foo++AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k",
	};
	for (size_t i = 0; i < sizeof(bad_ids) / sizeof(bad_ids[0]); i++)
		ck_assert_msg(note_verifier_parse(bad_ids[i], strlen(bad_ids[i]), &verifier) ==
		                  DIRAUTH_ERR_SYNTAX,
		              "accepted %s", bad_ids[i]);

	/* Bad base64: a character short, stray padding, a foreign character, a newline, a space,
	 * nothing at all. */
	static const char *const bad_base64[] = {
	    "example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2",
	    "example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k=",
	    "example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2-",
	    "example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k\n",
	    "example.com/foo+530d903a+ AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k",
	    "example.com/foo+530d903a+",
	};
	for (size_t i = 0; i < sizeof(bad_base64) / sizeof(bad_base64[0]); i++)
		ck_assert_msg(note_verifier_parse(bad_base64[i], strlen(bad_base64[i]), &verifier) ==
		                  DIRAUTH_ERR_SYNTAX,
		              "accepted %s", bad_base64[i]);

	/* Structure: no separators, one separator, trailing or leading text. */
	ck_assert_int_eq(note_verifier_parse("example.com/foo", 15, &verifier), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(note_verifier_parse("example.com/foo+530d903a", 24, &verifier), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(note_verifier_parse("", 0, &verifier), DIRAUTH_ERR_SYNTAX);
	snprintf(text, sizeof(text), " %s", good);
	ck_assert_int_eq(note_verifier_parse(text, strlen(text), &verifier), DIRAUTH_ERR_SYNTAX);
	/* A prefix of a good key is not a key. */
	ck_assert_int_eq(note_verifier_parse(good, good_len - 4, &verifier), DIRAUTH_ERR_SYNTAX);

	/* Wrong types, each with a key id that matches its own bytes. */
	uint8_t key[32];
	memset(key, 7, sizeof(key));
	build_verifier_string("example.com/t", 0x02, key, 32, text, sizeof(text));
	ck_assert_int_eq(note_verifier_parse(text, strlen(text), &verifier), DIRAUTH_ERR_SYNTAX);
	build_verifier_string("example.com/t", 0x04, key, 32, text, sizeof(text));
	ck_assert_int_eq(note_verifier_parse(text, strlen(text), &verifier), DIRAUTH_ERR_SYNTAX);
	/* Ed25519 type with a 31- or 33-byte key. */
	build_verifier_string("example.com/t", 0x01, key, 31, text, sizeof(text));
	ck_assert_int_eq(note_verifier_parse(text, strlen(text), &verifier), DIRAUTH_ERR_SYNTAX);
	uint8_t long_key[33];
	memset(long_key, 7, sizeof(long_key));
	build_verifier_string("example.com/t", 0x01, long_key, 33, text, sizeof(text));
	ck_assert_int_eq(note_verifier_parse(text, strlen(text), &verifier), DIRAUTH_ERR_SYNTAX);
	/* The same construction with the right shape is accepted, so the refusals above are real. */
	build_verifier_string("example.com/t", 0x01, key, 32, text, sizeof(text));
	ck_assert_int_eq(note_verifier_parse(text, strlen(text), &verifier), 0);

	/* Bad names, each with a matching key id. */
	static const char *const bad_names[] = {"",
	                                        "a b",
	                                        "a\tb",
	                                        "a\xc2\xa0"
	                                        "b",
	                                        "a\xe3\x80\x80"
	                                        "b",
	                                        "a\x01"
	                                        "b",
	                                        "a\x7f"
	                                        "b",
	                                        "a\xc2\x85"
	                                        "b",
	                                        "a\xc3",
	                                        "a\xc0\xae"};
	for (size_t i = 0; i < sizeof(bad_names) / sizeof(bad_names[0]); i++) {
		build_verifier_string(bad_names[i], 0x01, key, 32, text, sizeof(text));
		ck_assert_msg(note_verifier_parse(text, strlen(text), &verifier) == DIRAUTH_ERR_SYNTAX,
		              "accepted name case %zu", i);
	}
	/* A NUL inside the name. */
	char with_nul[200];
	memcpy(with_nul, "ex\0mple.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k", good_len);
	ck_assert_int_eq(note_verifier_parse(with_nul, good_len, &verifier), DIRAUTH_ERR_SYNTAX);

	/* Too long: a name over NOTE_NAME_MAX, and a string over NOTE_VERIFIER_KEY_MAX. */
	char long_name[NOTE_NAME_MAX + 2];
	memset(long_name, 'a', NOTE_NAME_MAX + 1);
	long_name[NOTE_NAME_MAX + 1] = 0;
	build_verifier_string(long_name, 0x01, key, 32, text, sizeof(text));
	ck_assert_int_eq(note_verifier_parse(text, strlen(text), &verifier), DIRAUTH_ERR_BOUNDS);
	char huge[NOTE_VERIFIER_KEY_MAX + 2];
	memset(huge, 'a', sizeof(huge));
	ck_assert_int_eq(note_verifier_parse(huge, NOTE_VERIFIER_KEY_MAX + 1, &verifier), DIRAUTH_ERR_BOUNDS);
}
END_TEST

START_TEST(test_name_is_valid)
{
	static const char *const accepted[] = {
	    "a", "example.com/foo", "caf\xc3\xa9", "\xf0\x9f\x94\x91", "a-b_c.d/e:f@g=h", "\xef\xbf\xbd"};
	for (size_t i = 0; i < sizeof(accepted) / sizeof(accepted[0]); i++)
		ck_assert_msg(note_name_is_valid(accepted[i], strlen(accepted[i])), "refused case %zu", i);
	static const char *const refused[] = {
	    "",     /* empty */
	    "a b",  /* space */
	    "a+b",  /* plus */
	    "a\nb", /* newline */
	    "a\xe2\x80\x83"
	    "b", /* U+2003 EM SPACE */
	    "a\xe2\x80\xa8"
	    "b", /* U+2028 LINE SEPARATOR */
	    "a\xc2\x9f"
	    "b",                /* C1 control */
	    "\xed\xa0\x80",     /* surrogate */
	    "\xf4\x90\x80\x80", /* above U+10FFFF */
	    "\xe0\x80\xaf",     /* overlong '/' */
	    "\xff",             /* never valid */
	    "\x80",             /* lone continuation */
	};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		ck_assert_msg(!note_name_is_valid(refused[i], strlen(refused[i])), "accepted case %zu", i);
	char name[NOTE_NAME_MAX + 1];
	memset(name, 'a', sizeof(name));
	ck_assert(note_name_is_valid(name, NOTE_NAME_MAX));
	ck_assert(!note_name_is_valid(name, NOTE_NAME_MAX + 1));
	ck_assert(!note_name_is_valid("a\0b", 3));
}
END_TEST

/* ---- text and parse refusals ---- */

START_TEST(test_text_check)
{
	static const char *const accepted[] = {"x\n",
	                                       "\n",
	                                       "line one\n\nline three\n",
	                                       "tab-free caf\xc3\xa9\n",
	                                       "\xf0\x9f\x94\x91 \xe2\x80\x94\n",
	                                       "\xf4\x8f\xbf\xbf\n"};
	for (size_t i = 0; i < sizeof(accepted) / sizeof(accepted[0]); i++)
		ck_assert_msg(note_text_check((const uint8_t *)accepted[i], strlen(accepted[i])) == 0,
		              "refused case %zu", i);
	static const char *const refused[] = {
	    "no newline",
	    "cr\r\n",
	    "tab\there\n",
	    "bell\a\n",
	    "del\x7f\n",
	    "esc\x1b[0m\n",
	    "overlong \xc0\xaf\n",
	    "overlong \xe0\x80\xaf\n",
	    "overlong \xf0\x80\x80\xaf\n",
	    "surrogate \xed\xa0\x80\n",
	    "surrogate \xed\xbf\xbf\n",
	    "too high \xf4\x90\x80\x80\n",
	    "too high \xf5\x80\x80\x80\n",
	    "truncated \xe2\x80\n",
	    "lone continuation \x80\n",
	    "bad continuation \xc3\x28\n",
	    "\xfe\xff\n",
	};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		ck_assert_msg(note_text_check((const uint8_t *)refused[i], strlen(refused[i])) ==
		                  DIRAUTH_ERR_SYNTAX,
		              "accepted case %zu", i);
	ck_assert_int_eq(note_text_check((const uint8_t *)"", 0), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(note_text_check((const uint8_t *)"nul\0\n", 5), DIRAUTH_ERR_SYNTAX);
	/* A sequence cut by the end of the buffer. */
	ck_assert_int_eq(note_text_check((const uint8_t *)"\n\xe2", 2), DIRAUTH_ERR_SYNTAX);
}
END_TEST

/* The C2SP example's signature line, for building malformed notes around it. */
#define C2SP_SIGNATURE_BASE64                                                                                \
	"Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM="
#define EM_DASH "\xe2\x80\x94"

START_TEST(test_parse_refusals)
{
	static const char *const refused[] = {
	    /* no signatures */
	    "text\n\n",
	    "text\n\n\n",
	    /* no blank line */
	    "text\n" EM_DASH " example.com/foo " C2SP_SIGNATURE_BASE64 "\n",
	    /* no final newline */
	    "text\n\n" EM_DASH " example.com/foo " C2SP_SIGNATURE_BASE64,
	    /* bad UTF-8 in the text */
	    "te\xc0\xafxt\n\n" EM_DASH " example.com/foo " C2SP_SIGNATURE_BASE64 "\n",
	    "te\xed\xa0\x80xt\n\n" EM_DASH " example.com/foo " C2SP_SIGNATURE_BASE64 "\n",
	    /* control characters and CR in the text */
	    "te\txt\n\n" EM_DASH " example.com/foo " C2SP_SIGNATURE_BASE64 "\n",
	    "text\r\n\n" EM_DASH " example.com/foo " C2SP_SIGNATURE_BASE64 "\n",
	    "text\r\n\r\n" EM_DASH " example.com/foo " C2SP_SIGNATURE_BASE64 "\r\n",
	    /* CR in a signature line */
	    "text\n\n" EM_DASH " example.com/foo " C2SP_SIGNATURE_BASE64 "\r\n",
	    /* malformed signature lines */
	    "text\n\n- example.com/foo " C2SP_SIGNATURE_BASE64 "\n",
	    "text\n\n" EM_DASH "example.com/foo " C2SP_SIGNATURE_BASE64 "\n",
	    "text\n\n" EM_DASH "  example.com/foo " C2SP_SIGNATURE_BASE64 "\n",
	    "text\n\n" EM_DASH " example.com/foo  " C2SP_SIGNATURE_BASE64 "\n",
	    "text\n\n" EM_DASH " example.com/foo " C2SP_SIGNATURE_BASE64 " \n",
	    "text\n\n" EM_DASH " example.com/foo\n",
	    "text\n\n" EM_DASH " example.com/foo \n",
	    "text\n\n" EM_DASH "  " C2SP_SIGNATURE_BASE64 "\n",
	    "text\n\n" EM_DASH " example.com+foo " C2SP_SIGNATURE_BASE64 "\n",
	    "text\n\n" EM_DASH " example.com\x01"
	    "foo " C2SP_SIGNATURE_BASE64 "\n",
	    "text\n\n" EM_DASH " example.com\xc3 " C2SP_SIGNATURE_BASE64 "\n",
	    "text\n\n" EM_DASH "\n",
	    "text\n\n\xe2\x80\x93 example.com/foo " C2SP_SIGNATURE_BASE64 "\n", /* EN DASH */
	    /* one good line and one bad line */
	    "text\n\n" EM_DASH " example.com/foo " C2SP_SIGNATURE_BASE64 "\nnot a signature\n",
	    /* bad base64 */
	    "text\n\n" EM_DASH " example.com/foo Uw2QOkn\n",
	    "text\n\n" EM_DASH
	    " example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYN\n",
	    "text\n\n" EM_DASH
	    " example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3m"
	    "FXmRKuwHjG1Yu72IneyaQN=\n",
	    "text\n\n" EM_DASH
	    " example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3m"
	    "FXmRKuwHjG1Yu72IneyaQM\n",
	    "text\n\n" EM_DASH
	    " example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3m"
	    "FXmRKuwHjG1Yu72IneyaQM-\n",
	    /* a key id with no signature bytes: 4 bytes decoded */
	    "text\n\n" EM_DASH " example.com/foo Uw2QOg==\n",
	};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		ck_assert_msg(parse_string(refused[i], strlen(refused[i])) == DIRAUTH_ERR_SYNTAX,
		              "accepted case %zu", i);
	ck_assert_int_eq(parse_string("", 0), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_string("\n", 1), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_string("\n\n", 2), DIRAUTH_ERR_SYNTAX);
	/* A NUL in the text. */
	char with_nul[300];
	size_t len = strlen(c2sp_note);
	memcpy(with_nul, c2sp_note, len);
	with_nul[4] = 0;
	ck_assert_int_eq(parse_string(with_nul, len), DIRAUTH_ERR_SYNTAX);
	/* The shortest signature (key id and one byte) is well formed. */
	const char *shortest = "text\n\n" EM_DASH " example.com/foo Uw2QOgA=\n";
	ck_assert_int_eq(parse_string(shortest, strlen(shortest)), 0);
}
END_TEST

/* Appends n copies of the C2SP signature line to the C2SP text. */
static char *note_with_signature_lines(size_t n, size_t *len_out)
{
	struct buffer b;
	buffer_init(&b);
	ck_assert_int_eq(buffer_append_string(&b, c2sp_text), 0);
	ck_assert_int_eq(buffer_append_string(&b, "\n"), 0);
	for (size_t i = 0; i < n; i++)
		ck_assert_int_eq(
		    buffer_append_string(&b, EM_DASH " example.com/foo " C2SP_SIGNATURE_BASE64 "\n"), 0);
	return (char *)buffer_steal(&b, len_out);
}

START_TEST(test_parse_signature_count_bound)
{
	size_t len = 0;
	char *at_bound = note_with_signature_lines(NOTE_MAX_SIGNATURES, &len);
	struct note *note = NULL;
	ck_assert_int_eq(note_parse((const uint8_t *)at_bound, len, &note), 0);
	ck_assert_uint_eq(note->signature_count, NOTE_MAX_SIGNATURES);
	/* One key signing a hundred times still counts once. */
	struct note_verifier verifier;
	ck_assert_int_eq(note_verifier_parse(c2sp_verifier, strlen(c2sp_verifier), &verifier), 0);
	size_t count = 0;
	ck_assert_int_eq(note_verify(note, &verifier, 1, NULL, &count), 0);
	ck_assert_uint_eq(count, 1);
	note_free(note);
	free(at_bound);

	char *over = note_with_signature_lines(NOTE_MAX_SIGNATURES + 1, &len);
	ck_assert_int_eq(parse_string(over, len), DIRAUTH_ERR_BOUNDS);
	free(over);
}
END_TEST

START_TEST(test_parse_long_fields)
{
	/* A name of NOTE_NAME_MAX bytes parses; one more byte is over the bound. */
	char name[NOTE_NAME_MAX + 2];
	memset(name, 'k', sizeof(name));
	name[NOTE_NAME_MAX] = 0;
	char text[1200];
	snprintf(text, sizeof(text), "text\n\n" EM_DASH " %s " C2SP_SIGNATURE_BASE64 "\n", name);
	ck_assert_int_eq(parse_string(text, strlen(text)), 0);
	name[NOTE_NAME_MAX] = 'k';
	name[NOTE_NAME_MAX + 1] = 0;
	snprintf(text, sizeof(text), "text\n\n" EM_DASH " %s " C2SP_SIGNATURE_BASE64 "\n", name);
	ck_assert_int_eq(parse_string(text, strlen(text)), DIRAUTH_ERR_BOUNDS);

	/* A signature of NOTE_SIGNATURE_MAX bytes parses; one more byte is over the bound. */
	uint8_t raw[4 + NOTE_SIGNATURE_MAX + 1];
	memset(raw, 0x5a, sizeof(raw));
	char encoded[400];
	base64_encode(raw, 4 + NOTE_SIGNATURE_MAX, encoded);
	snprintf(text, sizeof(text), "text\n\n" EM_DASH " other.example/k %s\n", encoded);
	struct note *note = NULL;
	ck_assert_int_eq(note_parse((const uint8_t *)text, strlen(text), &note), 0);
	ck_assert_uint_eq(note->signatures[0].signature_len, NOTE_SIGNATURE_MAX);
	note_free(note);
	base64_encode(raw, 4 + NOTE_SIGNATURE_MAX + 1, encoded);
	snprintf(text, sizeof(text), "text\n\n" EM_DASH " other.example/k %s\n", encoded);
	ck_assert_int_eq(parse_string(text, strlen(text)), DIRAUTH_ERR_BOUNDS);
}
END_TEST

START_TEST(test_parse_splits_at_last_blank_line)
{
	/* The text may hold blank lines; the signatures begin after the last one. */
	struct test_key key;
	test_key_make(&key, "split.example/k");
	const char *text = "first\n\nsecond\n\n\nthird\n";
	struct note_signature signature = sign_with(&key, text);
	struct note *note = make_note(text, &signature, 1);
	ck_assert_uint_eq(note->text_len, strlen(text));
	ck_assert_mem_eq(note->text, text, note->text_len);
	ck_assert_uint_eq(note->signature_count, 1);
	ck_assert_int_eq(note_verify_threshold(note, &key.verifier, 1, 1), 0);
	note_free(note);

	/* A text that itself ends in a blank line keeps it. */
	const char *trailing = "body\n\n";
	signature = sign_with(&key, trailing);
	note = make_note(trailing, &signature, 1);
	ck_assert_uint_eq(note->text_len, strlen(trailing));
	ck_assert_int_eq(note_verify_threshold(note, &key.verifier, 1, 1), 0);
	note_free(note);
	test_key_free(&key);
}
END_TEST

/* ---- verification and thresholds ---- */

START_TEST(test_threshold_counting)
{
	struct test_key a, b, c, unknown;
	test_key_make(&a, "a.example/key");
	test_key_make(&b, "b.example/key");
	test_key_make(&c, "c.example/key");
	test_key_make(&unknown, "unknown.example/key");
	const char *text = "checkpoint\n42\nroot\n";
	struct note_verifier keys[] = {a.verifier, b.verifier, c.verifier};

	/* Two of three known keys. */
	struct note_signature two[] = {sign_with(&a, text), sign_with(&b, text), sign_with(&unknown, text)};
	struct note *note = make_note(text, two, 3);
	size_t count = 0;
	uint8_t verified[3] = {9, 9, 9};
	ck_assert_int_eq(note_verify(note, keys, 3, verified, &count), 0);
	ck_assert_uint_eq(count, 2);
	ck_assert_uint_eq(verified[0], 1);
	ck_assert_uint_eq(verified[1], 1);
	ck_assert_uint_eq(verified[2], 0);
	ck_assert_int_eq(note_verify_threshold(note, keys, 3, 1), 0);
	ck_assert_int_eq(note_verify_threshold(note, keys, 3, 2), 0);
	ck_assert_int_eq(note_verify_threshold(note, keys, 3, 3), DIRAUTH_ERR_THRESHOLD);
	ck_assert_int_eq(note_verify_threshold(note, keys, 3, 0), DIRAUTH_ERR_INTERNAL);
	note_free(note);

	/* One key signing twice counts once. */
	struct note_signature repeated[] = {sign_with(&a, text), sign_with(&a, text)};
	note = make_note(text, repeated, 2);
	ck_assert_int_eq(note_verify(note, keys, 3, NULL, &count), 0);
	ck_assert_uint_eq(count, 1);
	ck_assert_int_eq(note_verify_threshold(note, keys, 3, 2), DIRAUTH_ERR_THRESHOLD);
	note_free(note);

	/* A key listed twice among the verifiers counts once, and both entries are marked. */
	struct note_verifier doubled[] = {a.verifier, a.verifier, b.verifier};
	struct note_signature one[] = {sign_with(&a, text)};
	note = make_note(text, one, 1);
	memset(verified, 9, sizeof(verified));
	ck_assert_int_eq(note_verify(note, doubled, 3, verified, &count), 0);
	ck_assert_uint_eq(count, 1);
	ck_assert_uint_eq(verified[0], 1);
	ck_assert_uint_eq(verified[1], 1);
	ck_assert_uint_eq(verified[2], 0);
	ck_assert_int_eq(note_verify_threshold(note, doubled, 3, 2), DIRAUTH_ERR_THRESHOLD);
	note_free(note);

	/* Only unknown keys: zero, and the threshold check says so. */
	struct note_signature strangers[] = {sign_with(&unknown, text)};
	note = make_note(text, strangers, 1);
	ck_assert_int_eq(note_verify(note, keys, 3, NULL, &count), 0);
	ck_assert_uint_eq(count, 0);
	ck_assert_int_eq(note_verify_threshold(note, keys, 3, 1), DIRAUTH_ERR_UNKNOWN_KEY);
	ck_assert_int_eq(note_verify_threshold(note, NULL, 0, 1), DIRAUTH_ERR_UNKNOWN_KEY);
	note_free(note);

	/* A signature that shares only the name, or only the key id, with a known key is another
	 * key's: ignored, even though it would not verify under the known key. */
	struct note_signature impostors[] = {sign_with(&unknown, text), sign_with(&unknown, text)};
	snprintf(impostors[0].name, sizeof(impostors[0].name), "%s", a.verifier.name);
	impostors[1].key_id = a.verifier.key_id;
	note = make_note(text, impostors, 2);
	ck_assert_int_eq(note_verify(note, keys, 3, NULL, &count), 0);
	ck_assert_uint_eq(count, 0);
	ck_assert_int_eq(note_verify_threshold(note, keys, 3, 1), DIRAUTH_ERR_UNKNOWN_KEY);
	note_free(note);

	test_key_free(&a);
	test_key_free(&b);
	test_key_free(&c);
	test_key_free(&unknown);
}
END_TEST

START_TEST(test_bad_known_signature_rejects)
{
	struct test_key a, b, unknown;
	test_key_make(&a, "a.example/key");
	test_key_make(&b, "b.example/key");
	test_key_make(&unknown, "unknown.example/key");
	const char *text = "statement\n";
	struct note_verifier keys[] = {a.verifier, b.verifier};
	size_t count = 99;

	/* A good signature by b does not save a bad one by a, in either order. */
	struct note_signature mixed[] = {sign_with(&a, text), sign_with(&b, text)};
	mixed[0].signature[0] ^= 1;
	struct note *note = make_note(text, mixed, 2);
	ck_assert_int_eq(note_verify(note, keys, 2, NULL, &count), DIRAUTH_ERR_SIGNATURE);
	ck_assert_int_eq(note_verify_threshold(note, keys, 2, 1), DIRAUTH_ERR_SIGNATURE);
	note_free(note);
	struct note_signature reversed[] = {mixed[1], mixed[0]};
	note = make_note(text, reversed, 2);
	ck_assert_int_eq(note_verify(note, keys, 2, NULL, &count), DIRAUTH_ERR_SIGNATURE);
	note_free(note);

	/* A good and a bad signature by the same key: the bad one rejects. */
	struct note_signature twice[] = {sign_with(&a, text), sign_with(&a, text)};
	twice[1].signature[63] ^= 0x80;
	note = make_note(text, twice, 2);
	ck_assert_int_eq(note_verify(note, keys, 2, NULL, &count), DIRAUTH_ERR_SIGNATURE);
	note_free(note);

	/* A signature over other text, labelled with a's name and id. */
	struct note_signature elsewhere[] = {sign_with(&a, "other text\n")};
	note = make_note(text, elsewhere, 1);
	ck_assert_int_eq(note_verify(note, keys, 2, NULL, &count), DIRAUTH_ERR_SIGNATURE);
	note_free(note);

	/* A known key's signature of the wrong length. */
	struct note_signature short_signature[] = {sign_with(&a, text)};
	short_signature[0].signature_len = 63;
	note = make_note(text, short_signature, 1);
	ck_assert_int_eq(note_verify(note, keys, 2, NULL, &count), DIRAUTH_ERR_SIGNATURE);
	note_free(note);

	/* A bad signature by an unknown key is ignored. */
	struct note_signature ignored[] = {sign_with(&unknown, text), sign_with(&a, text)};
	ignored[0].signature[5] ^= 1;
	ignored[0].signature_len = 17;
	note = make_note(text, ignored, 2);
	ck_assert_int_eq(note_verify(note, keys, 2, NULL, &count), 0);
	ck_assert_uint_eq(count, 1);
	note_free(note);

	test_key_free(&a);
	test_key_free(&b);
	test_key_free(&unknown);
}
END_TEST

START_TEST(test_format_refusals)
{
	struct test_key key;
	test_key_make(&key, "format.example/k");
	struct note_signature signature = sign_with(&key, "ok\n");
	struct buffer b;
	buffer_init(&b);
	ck_assert_int_eq(buffer_append_string(&b, "prefix"), 0);
	ck_assert_int_eq(note_format((const uint8_t *)"no newline", 10, &signature, 1, &b),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(note_format((const uint8_t *)"cr\r\n", 4, &signature, 1, &b), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(note_format((const uint8_t *)"", 0, &signature, 1, &b), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(note_format((const uint8_t *)"ok\n", 3, &signature, 0, &b), DIRAUTH_ERR_SYNTAX);
	struct note_signature bad = signature;
	snprintf(bad.name, sizeof(bad.name), "has space");
	ck_assert_int_eq(note_format((const uint8_t *)"ok\n", 3, &bad, 1, &b), DIRAUTH_ERR_SYNTAX);
	bad = signature;
	bad.signature_len = 0;
	ck_assert_int_eq(note_format((const uint8_t *)"ok\n", 3, &bad, 1, &b), DIRAUTH_ERR_SYNTAX);
	bad.signature_len = NOTE_SIGNATURE_MAX + 1;
	ck_assert_int_eq(note_format((const uint8_t *)"ok\n", 3, &bad, 1, &b), DIRAUTH_ERR_SYNTAX);
	/* Refusals leave the buffer alone; a success appends. */
	ck_assert_uint_eq(b.len, 6);
	ck_assert_int_eq(note_format((const uint8_t *)"ok\n", 3, &signature, 1, &b), 0);
	ck_assert_mem_eq(b.data, "prefixok\n\n" EM_DASH " format.example/k ", 31);
	struct note *note = NULL;
	ck_assert_int_eq(note_parse(b.data + 6, b.len - 6, &note), 0);
	ck_assert_int_eq(note_verify_threshold(note, &key.verifier, 1, 1), 0);
	note_free(note);
	buffer_free(&b);
	note_free(NULL);
	test_key_free(&key);
}
END_TEST

static Suite *note_suite(void)
{
	Suite *suite = suite_create("note");
	TCase *crypto = tcase_create("crypto");
	tcase_set_timeout(crypto, 30);
	tcase_add_test(crypto, test_crypto_sha256);
	tcase_add_test(crypto, test_crypto_ed25519_verify);
	tcase_add_test(crypto, test_crypto_random);
	suite_add_tcase(suite, crypto);

	TCase *c2sp = tcase_create("c2sp");
	tcase_set_timeout(c2sp, 30);
	tcase_add_test(c2sp, test_c2sp_example_verifies);
	tcase_add_test(c2sp, test_c2sp_example_any_text_byte_changed);
	tcase_add_test(c2sp, test_c2sp_example_signature_byte_changed);
	suite_add_tcase(suite, c2sp);

	TCase *keys = tcase_create("keys");
	tcase_set_timeout(keys, 30);
	tcase_add_test(keys, test_key_id);
	tcase_add_test(keys, test_verifier_from_ed25519_refuses_bad_names);
	tcase_add_test(keys, test_verifier_round_trip);
	tcase_add_test(keys, test_verifier_refusals);
	tcase_add_test(keys, test_verifier_canonical);
	tcase_add_test(keys, test_name_is_valid);
	suite_add_tcase(suite, keys);

	TCase *parse = tcase_create("parse");
	tcase_set_timeout(parse, 30);
	tcase_add_test(parse, test_text_check);
	tcase_add_test(parse, test_parse_refusals);
	tcase_add_test(parse, test_parse_signature_count_bound);
	tcase_add_test(parse, test_parse_long_fields);
	tcase_add_test(parse, test_parse_splits_at_last_blank_line);
	tcase_add_test(parse, test_format_refusals);
	suite_add_tcase(suite, parse);

	TCase *verify = tcase_create("verify");
	tcase_set_timeout(verify, 30);
	tcase_add_test(verify, test_threshold_counting);
	tcase_add_test(verify, test_bad_known_signature_rejects);
	suite_add_tcase(suite, verify);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(note_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
