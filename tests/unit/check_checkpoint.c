/*
 * check_checkpoint.c: checkpoint text (c2sp.org/tlog-checkpoint) and Ed25519 cosignatures
 * (c2sp.org/tlog-cosignature), with the spec's examples where they can be checked.
 *
 * The tlog-cosignature example carries a witness signature line but not the witness's public key,
 * so only its layout (key id, timestamp, length) and its signed message are checked here; the
 * cosignatures themselves are made with an example key from a fixed, public seed.
 */
#include "schema/checkpoint.h"
#include "crypto/crypto.h"
#include "schema/encoding.h"
#include "base/error.h"
#include "test_keys.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SPEC_ORIGIN   "example.com/behind-the-sofa"
#define SPEC_TEXT     SPEC_ORIGIN "\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n"
#define EMPTY_ROOT    "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
#define LOG_ORIGIN    "dirauth.example/log/example-net"
#define LOG_TEXT      LOG_ORIGIN "\n7\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n"
#define COSIGNER_NAME "witness.example/w1"
#define TIMESTAMP     1767225600ull

static const char spec_note[] = SPEC_TEXT
    "\n"
    "\xe2\x80\x94 example.com/behind-the-sofa "
    "Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=\n"
    "\xe2\x80\x94 witness.example.com/w1 "
    "jWbPPwAAAABkGFDLEZMHwSRaJNiIDoe9DYn/zXcrtPHeolMI5OWXEhZCB9dlrDJsX3b2oyin1nPZqhf5nNo0xUe+mbIUBkBIfZ+"
    "qnA==\n";

static int parse_text(const char *text, struct checkpoint *out)
{
	return checkpoint_parse((const uint8_t *)text, strlen(text), out);
}

START_TEST(test_spec_checkpoint)
{
	struct checkpoint c;
	ck_assert_int_eq(parse_text(SPEC_TEXT, &c), 0);
	ck_assert_str_eq(c.origin, SPEC_ORIGIN);
	ck_assert_uint_eq(c.tree_size, 20852163);
	ck_assert_uint_eq(c.extension_count, 0);
	struct buffer out;
	buffer_init(&out);
	ck_assert_int_eq(checkpoint_encode(&c, &out), 0);
	ck_assert_str_eq((const char *)out.data, SPEC_TEXT);

	/* The spec's cosigned note: it parses, the witness line is a 72-byte timestamped signature
	 * made at the time of the spec's signed-message example. */
	struct note *note = NULL;
	ck_assert_int_eq(note_parse((const uint8_t *)spec_note, strlen(spec_note), &note), 0);
	ck_assert_uint_eq(note->signature_count, 2);
	ck_assert_int_eq(checkpoint_parse(note->text, note->text_len, &c), 0);
	const struct note_signature *witness = &note->signatures[1];
	ck_assert_str_eq(witness->name, "witness.example.com/w1");
	ck_assert_uint_eq(witness->signature_len, 72);
	uint64_t stamp = 0;
	for (int i = 0; i < 8; i++)
		stamp = stamp << 8 | witness->signature[i];
	ck_assert_uint_eq(stamp, 1679315147);
	buffer_reset(&out);
	ck_assert_int_eq(cosignature_message(stamp, note->text, note->text_len, &out), 0);
	ck_assert_str_eq((const char *)out.data, "cosignature/v1\ntime 1679315147\n" SPEC_TEXT);
	note_free(note);
	buffer_free(&out);
}
END_TEST

START_TEST(test_empty_tree_and_extensions)
{
	struct checkpoint c;
	ck_assert_int_eq(parse_text(LOG_ORIGIN "\n0\n" EMPTY_ROOT "\n", &c), 0);
	uint8_t empty[32];
	ck_assert_int_eq(crypto_sha256((const uint8_t *)"", 0, empty), 0);
	ck_assert(memcmp(c.root, empty, 32) == 0);
	/* Size 0 with any other root is refused, by the parser and the encoder. */
	ck_assert_int_eq(parse_text(LOG_ORIGIN "\n0\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n", &c),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_text(LOG_ORIGIN "\n1\n" EMPTY_ROOT "\n", &c), 0);
	c.tree_size = 0;
	c.root[0] ^= 1;
	struct buffer out;
	buffer_init(&out);
	ck_assert_int_eq(checkpoint_encode(&c, &out), DIRAUTH_ERR_SYNTAX);

	/* Extension lines round trip, up to the bound. */
	const char *with_extensions = LOG_TEXT "first extension\nsecond: with, words\n";
	ck_assert_int_eq(parse_text(with_extensions, &c), 0);
	ck_assert_uint_eq(c.extension_count, 2);
	ck_assert_str_eq(c.extensions[1], "second: with, words");
	buffer_reset(&out);
	ck_assert_int_eq(checkpoint_encode(&c, &out), 0);
	ck_assert_str_eq((const char *)out.data, with_extensions);
	buffer_reset(&out);
	ck_assert_int_eq(buffer_append_string(&out, LOG_TEXT), 0);
	for (int i = 0; i < CHECKPOINT_MAX_EXTENSIONS; i++)
		ck_assert_int_eq(buffer_appendf(&out, "extension %d\n", i), 0);
	ck_assert_int_eq(checkpoint_parse(out.data, out.len, &c), 0);
	ck_assert_uint_eq(c.extension_count, CHECKPOINT_MAX_EXTENSIONS);
	ck_assert_int_eq(buffer_append_string(&out, "one too many\n"), 0);
	ck_assert_int_eq(checkpoint_parse(out.data, out.len, &c), DIRAUTH_ERR_BOUNDS);
	buffer_free(&out);
}
END_TEST

START_TEST(test_parse_refusals)
{
	struct checkpoint c;
	const char *root = "\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n";
	char text[1024];
	/* Origins: empty, with a space, with '+', with a control character, too long. */
	snprintf(text, sizeof(text), "\n7%s", root);
	ck_assert_int_eq(parse_text(text, &c), DIRAUTH_ERR_SYNTAX);
	snprintf(text, sizeof(text), "example.com log\n7%s", root);
	ck_assert_int_eq(parse_text(text, &c), DIRAUTH_ERR_SYNTAX);
	snprintf(text, sizeof(text), "example.com+log\n7%s", root);
	ck_assert_int_eq(parse_text(text, &c), DIRAUTH_ERR_SYNTAX);
	snprintf(text, sizeof(text), "example.com\tlog\n7%s", root);
	ck_assert_int_eq(parse_text(text, &c), DIRAUTH_ERR_SYNTAX);
	char long_origin[300];
	memset(long_origin, 'o', 256);
	long_origin[256] = 0;
	snprintf(text, sizeof(text), "%s\n7%s", long_origin, root);
	ck_assert_int_eq(parse_text(text, &c), DIRAUTH_ERR_BOUNDS);
	long_origin[255] = 0;
	snprintf(text, sizeof(text), "%s\n7%s", long_origin, root);
	ck_assert_int_eq(parse_text(text, &c), 0);
	/* Sizes: leading zero, sign, overflow, empty. */
	ck_assert_int_eq(parse_text(LOG_ORIGIN "\n07\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n", &c),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_text(LOG_ORIGIN "\n+7\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n", &c),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_text(LOG_ORIGIN
	                            "\n18446744073709551616\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n",
	                            &c),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_text(LOG_ORIGIN "\n\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n", &c),
	                 DIRAUTH_ERR_SYNTAX);
	/* Roots: short, long, unpadded, non-zero padding bits, URL alphabet, hex. */
	ck_assert_int_eq(parse_text(LOG_ORIGIN "\n7\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jx\n", &c),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_text(LOG_ORIGIN "\n7\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2IA\n", &c),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_text(LOG_ORIGIN "\n7\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I\n", &c),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_text(LOG_ORIGIN "\n7\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2J=\n", &c),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_text(LOG_ORIGIN "\n7\nCsUYapGGPo4dkMgIAUqom_Xajj7h2fB2MPA3j2jxq2I=\n", &c),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_text(LOG_ORIGIN
	                            "\n7\n0ac5186a91863e8e1d90c808014aa89bf5da8e3ee1d9f07630f0378f68f1ab62\n",
	                            &c),
	                 DIRAUTH_ERR_SYNTAX);
	/* Structure: missing lines, no final newline, an empty extension line, spacing, UTF-8. */
	ck_assert_int_eq(parse_text(LOG_ORIGIN "\n7\n", &c), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_text(LOG_ORIGIN "\n7\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=", &c),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_text(LOG_TEXT "\n", &c), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_text(LOG_TEXT "two  spaces\n", &c), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_text(LOG_TEXT " leading\n", &c), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_text(LOG_TEXT "caf\xc3\xa9\n", &c), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(parse_text("", &c), DIRAUTH_ERR_SYNTAX);
	/* An extension line over 255 bytes. */
	struct buffer out;
	buffer_init(&out);
	ck_assert_int_eq(buffer_append_string(&out, LOG_TEXT), 0);
	for (int i = 0; i < 256; i++)
		ck_assert_int_eq(buffer_append_string(&out, "e"), 0);
	ck_assert_int_eq(buffer_append_string(&out, "\n"), 0);
	ck_assert_int_eq(checkpoint_parse(out.data, out.len, &c), DIRAUTH_ERR_BOUNDS);
	/* Over the whole-text bound. */
	uint8_t *big = calloc(1, CHECKPOINT_MAX_BYTES + 1);
	ck_assert(big != NULL);
	ck_assert_int_eq(checkpoint_parse(big, CHECKPOINT_MAX_BYTES + 1, &c), DIRAUTH_ERR_BOUNDS);
	free(big);
	/* Encoder refusals. */
	ck_assert_int_eq(parse_text(LOG_TEXT, &c), 0);
	c.extension_count = CHECKPOINT_MAX_EXTENSIONS + 1;
	buffer_reset(&out);
	ck_assert_int_eq(checkpoint_encode(&c, &out), DIRAUTH_ERR_BOUNDS);
	c.extension_count = 1;
	strcpy(c.extensions[0], "trailing ");
	ck_assert_int_eq(checkpoint_encode(&c, &out), DIRAUTH_ERR_SYNTAX);
	c.extensions[0][0] = 0;
	ck_assert_int_eq(checkpoint_encode(&c, &out), DIRAUTH_ERR_SYNTAX);
	c.extension_count = 0;
	strcpy(c.origin, "has space");
	ck_assert_int_eq(checkpoint_encode(&c, &out), DIRAUTH_ERR_SYNTAX);
	ck_assert_uint_eq(out.len, 0);
	buffer_free(&out);
}
END_TEST

struct cosigner {
	struct test_key key;           /* signs; its verifier is the Ed25519 (0x01) one */
	struct note_verifier verifier; /* the same key as a cosigner (0x04) */
};

static void cosigner_load(struct cosigner *c)
{
	uint8_t seed[32];
	for (int i = 0; i < 32; i++)
		seed[i] = (uint8_t)(0xc0 + i);
	test_key_from_seed(seed, COSIGNER_NAME, &c->key);
	ck_assert_int_eq(
	    cosignature_verifier_from_ed25519(COSIGNER_NAME, c->key.verifier.public_key, &c->verifier), 0);
}

/* A cosignature line by c over text at timestamp, under key_id. */
static void cosign(const struct cosigner *c, const char *text, uint64_t timestamp, uint32_t key_id,
                   struct note_signature *out)
{
	struct buffer message;
	buffer_init(&message);
	ck_assert_int_eq(cosignature_message(timestamp, (const uint8_t *)text, strlen(text), &message), 0);
	struct note_signature plain;
	test_key_signature(&c->key, message.data, message.len, &plain);
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", COSIGNER_NAME);
	out->key_id = key_id;
	for (int i = 0; i < 8; i++)
		out->signature[i] = (uint8_t)(timestamp >> (56 - 8 * i));
	memcpy(out->signature + 8, plain.signature, 64);
	out->signature_len = 72;
	buffer_free(&message);
}

/* Parses text with the given signature lines. */
static struct note *note_with(const char *text, const struct note_signature *signatures, size_t count)
{
	struct buffer out;
	buffer_init(&out);
	ck_assert_int_eq(note_format((const uint8_t *)text, strlen(text), signatures, count, &out), 0);
	struct note *note = NULL;
	ck_assert_int_eq(note_parse(out.data, out.len, &note), 0);
	buffer_free(&out);
	return note;
}

START_TEST(test_cosigner_keys)
{
	struct cosigner c;
	cosigner_load(&c);
	ck_assert_uint_eq(c.verifier.type, NOTE_KEY_TYPE_COSIGNATURE_V1);
	/* Key id = SHA-256(name || "\n" || 0x04 || key)[:4]. */
	uint8_t material[sizeof(COSIGNER_NAME) + 33];
	size_t name_len = strlen(COSIGNER_NAME);
	memcpy(material, COSIGNER_NAME, name_len);
	material[name_len] = '\n';
	material[name_len + 1] = 0x04;
	memcpy(material + name_len + 2, c.key.verifier.public_key, 32);
	uint8_t digest[32];
	ck_assert_int_eq(crypto_sha256(material, name_len + 34, digest), 0);
	uint32_t expected =
	    (uint32_t)digest[0] << 24 | (uint32_t)digest[1] << 16 | (uint32_t)digest[2] << 8 | digest[3];
	ck_assert_uint_eq(c.verifier.key_id, expected);
	ck_assert_uint_ne(c.verifier.key_id, c.key.verifier.key_id);

	/* The verifier string round trips. */
	char text[NOTE_VERIFIER_KEY_MAX + 1];
	note_verifier_format(&c.verifier, text);
	struct note_verifier parsed;
	ck_assert_int_eq(cosignature_verifier_parse(text, strlen(text), &parsed), 0);
	ck_assert_str_eq(parsed.name, COSIGNER_NAME);
	ck_assert_uint_eq(parsed.key_id, c.verifier.key_id);
	ck_assert_uint_eq(parsed.type, 0x04);
	ck_assert(memcmp(parsed.public_key, c.key.verifier.public_key, 32) == 0);

	/* Refusals: the Ed25519 (0x01) string of the same key, a wrong key id, a bad name, bad
	 * base64, a missing field, too long. */
	const char *ed25519 = test_key_verifier_string(&c.key);
	ck_assert_int_eq(cosignature_verifier_parse(ed25519, strlen(ed25519), &parsed), DIRAUTH_ERR_SYNTAX);
	char edited[NOTE_VERIFIER_KEY_MAX + 1];
	strcpy(edited, text);
	char *id = strchr(edited, '+') + 1;
	id[0] = id[0] == '0' ? '1' : '0';
	ck_assert_int_eq(cosignature_verifier_parse(edited, strlen(edited), &parsed), DIRAUTH_ERR_SYNTAX);
	strcpy(edited, text);
	edited[strlen(edited) - 2] = '!';
	ck_assert_int_eq(cosignature_verifier_parse(edited, strlen(edited), &parsed), DIRAUTH_ERR_SYNTAX);
	snprintf(edited, sizeof(edited), "bad name%s", strchr(text, '+'));
	ck_assert_int_eq(cosignature_verifier_parse(edited, strlen(edited), &parsed), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(cosignature_verifier_parse(COSIGNER_NAME "+00000000", 27, &parsed),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(cosignature_verifier_parse(text, NOTE_VERIFIER_KEY_MAX + 1, &parsed),
	                 DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(cosignature_verifier_from_ed25519("bad name", c.key.verifier.public_key, &parsed),
	                 DIRAUTH_ERR_SYNTAX);
	test_key_free(&c.key);
}
END_TEST

START_TEST(test_cosignature_verify)
{
	struct cosigner c;
	cosigner_load(&c);
	struct test_key log_key;
	uint8_t seed[32];
	for (int i = 0; i < 32; i++)
		seed[i] = (uint8_t)(0xa0 + i);
	test_key_from_seed(seed, LOG_ORIGIN, &log_key);
	struct note_signature lines[3];
	test_key_signature(&log_key, (const uint8_t *)LOG_TEXT, strlen(LOG_TEXT), &lines[0]);
	cosign(&c, LOG_TEXT, TIMESTAMP, c.verifier.key_id, &lines[1]);
	uint64_t stamp = 0;

	struct note *note = note_with(LOG_TEXT, lines, 2);
	ck_assert_int_eq(cosignature_verify(note, &c.verifier, &stamp), 0);
	ck_assert_uint_eq(stamp, TIMESTAMP);
	/* The log's own signature still verifies as a plain note signature. */
	size_t count = 0;
	ck_assert_int_eq(note_verify(note, &log_key.verifier, 1, NULL, &count), 0);
	ck_assert_uint_eq(count, 1);
	note_free(note);

	/* Tampered checkpoint text. */
	const char *other = LOG_ORIGIN "\n8\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n";
	note = note_with(other, &lines[1], 1);
	ck_assert_int_eq(cosignature_verify(note, &c.verifier, &stamp), DIRAUTH_ERR_SIGNATURE);
	note_free(note);

	/* The timestamp changed after signing. */
	struct note_signature changed = lines[1];
	changed.signature[7] ^= 1;
	note = note_with(LOG_TEXT, &changed, 1);
	ck_assert_int_eq(cosignature_verify(note, &c.verifier, &stamp), DIRAUTH_ERR_SIGNATURE);
	note_free(note);

	/* A timestamp over 2^63 - 1, even correctly signed, is refused. */
	struct note_signature huge = lines[1];
	huge.signature[0] = 0x80;
	note = note_with(LOG_TEXT, &huge, 1);
	ck_assert_int_eq(cosignature_verify(note, &c.verifier, &stamp), DIRAUTH_ERR_SIGNATURE);
	note_free(note);
	struct buffer message;
	buffer_init(&message);
	ck_assert_int_eq(
	    cosignature_message(0x8000000000000000ull, (const uint8_t *)LOG_TEXT, strlen(LOG_TEXT), &message),
	    DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(cosignature_message(0x7fffffffffffffffull, (const uint8_t *)"x\n", 2, &message), 0);
	ck_assert_str_eq((const char *)message.data, "cosignature/v1\ntime 9223372036854775807\nx\n");
	buffer_free(&message);

	/* A valid cosignature under the key's type 0x01 key id is not the cosigner's. */
	struct note_signature as_ed25519 = lines[1];
	as_ed25519.key_id = c.key.verifier.key_id;
	note = note_with(LOG_TEXT, &as_ed25519, 1);
	ck_assert_int_eq(cosignature_verify(note, &c.verifier, &stamp), DIRAUTH_ERR_UNKNOWN_KEY);
	note_free(note);
	/* Nor is a plain signature by the same key over the checkpoint (type 0x01). */
	struct note_signature plain;
	test_key_signature(&c.key, (const uint8_t *)LOG_TEXT, strlen(LOG_TEXT), &plain);
	note = note_with(LOG_TEXT, &plain, 1);
	ck_assert_int_eq(cosignature_verify(note, &c.verifier, &stamp), DIRAUTH_ERR_UNKNOWN_KEY);
	/* And an Ed25519 verifier is not a cosigner. */
	ck_assert_int_eq(cosignature_verify(note, &c.key.verifier, &stamp), DIRAUTH_ERR_CRYPTO);
	note_free(note);

	/* A line under the cosigner's key id that is not 72 bytes. */
	struct note_signature short_line = lines[1];
	short_line.signature_len = 64;
	note = note_with(LOG_TEXT, &short_line, 1);
	ck_assert_int_eq(cosignature_verify(note, &c.verifier, &stamp), DIRAUTH_ERR_SIGNATURE);
	note_free(note);

	/* A second, failing line by the cosigner rejects the note even after a good one. */
	lines[2] = changed;
	note = note_with(LOG_TEXT, lines, 3);
	ck_assert_int_eq(cosignature_verify(note, &c.verifier, &stamp), DIRAUTH_ERR_SIGNATURE);
	note_free(note);
	/* No line by the cosigner at all. */
	note = note_with(LOG_TEXT, lines, 1);
	ck_assert_int_eq(cosignature_verify(note, &c.verifier, &stamp), DIRAUTH_ERR_UNKNOWN_KEY);
	note_free(note);
	test_key_free(&log_key);
	test_key_free(&c.key);
}
END_TEST

static Suite *checkpoint_suite(void)
{
	Suite *suite = suite_create("checkpoint");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_spec_checkpoint);
	tcase_add_test(tc, test_empty_tree_and_extensions);
	tcase_add_test(tc, test_parse_refusals);
	tcase_add_test(tc, test_cosigner_keys);
	tcase_add_test(tc, test_cosignature_verify);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(checkpoint_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
