/*
 * check_key.c: tests of signer/key.c, the private key files.
 *
 * The key file is where a mistake costs the most, so most of these tests are refusals: every
 * unsafe mode, a symlink, a directory, a FIFO, every kind of malformed line, a key id that does
 * not belong to the key, an oversized file. The positive side is checked against the C2SP / Go
 * note package's published example key, so the file format and the signatures are known to
 * interoperate, not merely to round-trip with themselves.
 */
#include "crypto/crypto.h"
#include "schema/encoding.h"
#include "base/error.h"
#include "signer/key.h"
#include "schema/note.h"
#include "test_support.h"

#include <check.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define GO_SIGNER_KEY   "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz"
#define GO_VERIFIER_KEY "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"
#define GO_TEXT                                                                                              \
	"If you think cryptography is the answer to your problem,\n"                                         \
	"then you don't know what your problem is.\n"
#define GO_NOTE                                                                                              \
	GO_TEXT                                                                                              \
	"\n"                                                                                                 \
	"\xe2\x80\x94 PeterNeumann "                                                                         \
	"x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n"

static char tempdir[PATH_MAX];

static void setup(void)
{
	test_make_tempdir(tempdir, sizeof(tempdir));
}

static void teardown(void)
{
	test_remove_tree(tempdir);
}

static const char *temp_path(const char *name)
{
	static char path[PATH_MAX];
	int n = snprintf(path, sizeof(path), "%s/%s", tempdir, name);
	ck_assert(n > 0 && (size_t)n < sizeof(path));
	return path;
}

/* Writes text as a key file with the given mode and returns the result of loading it. */
static int load_text(const char *text, size_t len, mode_t mode)
{
	struct signer_key *key = (struct signer_key *)1;
	const char *path = temp_path("candidate.key");
	unlink(path);
	test_write_file(path, text, len, mode);
	int rc = signer_key_load(path, &key);
	if (rc == 0)
		signer_key_free(key);
	else
		ck_assert_ptr_null(key);
	return rc;
}

static int load_string(const char *text)
{
	return load_text(text, strlen(text), 0600);
}

/* Signs text with key, formats and parses the signed note, and returns how many of the given
 * verifiers verified it (note_verify must succeed). */
static size_t signed_note_verified_count(const struct signer_key *key, const char *text,
                                         const struct note_verifier *verifier)
{
	struct note_signature signature;
	struct buffer signed_note;
	struct note *note = NULL;
	size_t count = 99;

	buffer_init(&signed_note);
	ck_assert_int_eq(signer_key_sign(key, (const uint8_t *)text, strlen(text), &signature), 0);
	ck_assert_uint_eq(signature.signature_len, CRYPTO_ED25519_SIGNATURE_SIZE);
	ck_assert_int_eq(note_format((const uint8_t *)text, strlen(text), &signature, 1, &signed_note), 0);
	ck_assert_int_eq(note_parse(signed_note.data, signed_note.len, &note), 0);
	ck_assert_int_eq(note_verify(note, verifier, 1, NULL, &count), 0);
	note_free(note);
	buffer_free(&signed_note);
	return count;
}

START_TEST(test_generate_save_load_round_trip)
{
	struct signer_key *generated = NULL, *loaded = NULL;
	const char *path = temp_path("authority.key");
	struct stat st;

	ck_assert_int_eq(signer_key_generate("authority.dirauth.example", &generated), 0);
	ck_assert_ptr_nonnull(generated);
	ck_assert_int_eq(signer_key_save(generated, path), 0);
	ck_assert_int_eq(lstat(path, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_uint_eq(st.st_mode & 07777, 0600);

	ck_assert_int_eq(signer_key_load(path, &loaded), 0);
	const struct note_verifier *a = signer_key_verifier(generated);
	const struct note_verifier *b = signer_key_verifier(loaded);
	ck_assert_str_eq(a->name, "authority.dirauth.example");
	ck_assert_str_eq(a->name, b->name);
	ck_assert_uint_eq(a->key_id, b->key_id);
	ck_assert_uint_eq(b->type, NOTE_KEY_TYPE_ED25519);
	ck_assert_mem_eq(a->public_key, b->public_key, 32);

	/* The key id is the one note.h defines for the name and public key. */
	uint32_t key_id = 0;
	ck_assert_int_eq(note_key_id(b->name, NOTE_KEY_TYPE_ED25519, b->public_key, 32, &key_id), 0);
	ck_assert_uint_eq(key_id, b->key_id);

	/* The file is exactly one key line for this name and key id. */
	size_t len = 0;
	char *text = (char *)test_read_file(path, &len);
	char expected_prefix[256];
	snprintf(expected_prefix, sizeof(expected_prefix), "PRIVATE+KEY+authority.dirauth.example+%08x+",
	         (unsigned)b->key_id);
	ck_assert_uint_eq(len, strlen(expected_prefix) + 44 + 1);
	ck_assert_int_eq(strncmp(text, expected_prefix, strlen(expected_prefix)), 0);
	ck_assert_int_eq(text[len - 1], '\n');
	free(text);

	/* Signatures by either copy verify under the verifier, and Ed25519 makes them identical. */
	const char *message = "dirauth key test\n";
	ck_assert_uint_eq(signed_note_verified_count(generated, message, b), 1);
	ck_assert_uint_eq(signed_note_verified_count(loaded, message, a), 1);
	struct note_signature s1, s2;
	ck_assert_int_eq(signer_key_sign(generated, (const uint8_t *)message, strlen(message), &s1), 0);
	ck_assert_int_eq(signer_key_sign(loaded, (const uint8_t *)message, strlen(message), &s2), 0);
	ck_assert_mem_eq(s1.signature, s2.signature, 64);
	ck_assert_str_eq(s1.name, "authority.dirauth.example");
	ck_assert_uint_eq(s1.key_id, b->key_id);
	ck_assert_int_eq(
	    crypto_ed25519_verify(b->public_key, (const uint8_t *)message, strlen(message), s1.signature), 0);
	/* And not for a different message. */
	ck_assert_int_eq(crypto_ed25519_verify(b->public_key, (const uint8_t *)"other\n", 6, s1.signature),
	                 DIRAUTH_ERR_SIGNATURE);

	signer_key_free(generated);
	signer_key_free(loaded);
}
END_TEST

START_TEST(test_generate_gives_distinct_keys)
{
	struct signer_key *a = NULL, *b = NULL;
	ck_assert_int_eq(signer_key_generate("same-name", &a), 0);
	ck_assert_int_eq(signer_key_generate("same-name", &b), 0);
	ck_assert_mem_ne(signer_key_verifier(a)->public_key, signer_key_verifier(b)->public_key, 32);
	/* A signature by one key does not verify under the other (the other is simply not known). */
	ck_assert_uint_eq(signed_note_verified_count(a, "text\n", signer_key_verifier(b)), 0);
	signer_key_free(a);
	signer_key_free(b);
}
END_TEST

START_TEST(test_generate_refuses_bad_names)
{
	static const char *const names[] = {"", "two words", "plus+sign", "new\nline"};
	char too_long[NOTE_NAME_MAX + 2];
	memset(too_long, 'a', sizeof(too_long) - 1);
	too_long[sizeof(too_long) - 1] = '\0';

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct signer_key *key = (struct signer_key *)1;
		ck_assert_int_eq(signer_key_generate(names[i], &key), DIRAUTH_ERR_SYNTAX);
		ck_assert_ptr_null(key);
	}
	struct signer_key *key = (struct signer_key *)1;
	ck_assert_int_eq(signer_key_generate(too_long, &key), DIRAUTH_ERR_SYNTAX);
	ck_assert_ptr_null(key);
}
END_TEST

START_TEST(test_save_refuses_existing_file)
{
	struct signer_key *key = NULL;
	const char *path = temp_path("existing.key");
	ck_assert_int_eq(signer_key_generate("a.example", &key), 0);

	test_write_file(path, "keep me\n", 8, 0600);
	ck_assert_int_eq(signer_key_save(key, path), DIRAUTH_ERR_EXISTS);
	size_t len = 0;
	char *text = (char *)test_read_file(path, &len);
	ck_assert_str_eq(text, "keep me\n");
	free(text);

	/* A second save of a fresh path works once, then refuses too. */
	ck_assert_int_eq(signer_key_save(key, temp_path("fresh.key")), 0);
	ck_assert_int_eq(signer_key_save(key, temp_path("fresh.key")), DIRAUTH_ERR_EXISTS);
	signer_key_free(key);
}
END_TEST

START_TEST(test_save_does_not_follow_symlink)
{
	struct signer_key *key = NULL;
	char target[PATH_MAX];
	struct stat st;
	snprintf(target, sizeof(target), "%s", temp_path("target.key"));
	const char *link_path = temp_path("link.key");
	ck_assert_int_eq(symlink(target, link_path), 0);

	ck_assert_int_eq(signer_key_generate("a.example", &key), 0);
	ck_assert_int_eq(signer_key_save(key, link_path), DIRAUTH_ERR_EXISTS);
	/* The dangling symlink's target was not created through it. */
	ck_assert_int_ne(lstat(target, &st), 0);
	signer_key_free(key);
}
END_TEST

START_TEST(test_save_into_missing_directory_is_io_error)
{
	struct signer_key *key = NULL;
	ck_assert_int_eq(signer_key_generate("a.example", &key), 0);
	ck_assert_int_eq(signer_key_save(key, temp_path("no-such-dir/a.key")), DIRAUTH_ERR_IO);
	signer_key_free(key);
}
END_TEST

START_TEST(test_save_mode_is_0600_whatever_the_umask)
{
	struct signer_key *key = NULL;
	struct stat st;
	const char *path = temp_path("umask.key");
	mode_t old = umask(0);
	ck_assert_int_eq(signer_key_generate("a.example", &key), 0);
	ck_assert_int_eq(signer_key_save(key, path), 0);
	umask(old);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
	signer_key_free(key);
}
END_TEST

START_TEST(test_go_example_key)
{
	struct signer_key *key = NULL;
	const char *path = temp_path("peter.key");
	char formatted[NOTE_VERIFIER_KEY_MAX + 1];

	test_write_file(path, GO_SIGNER_KEY "\n", strlen(GO_SIGNER_KEY "\n"), 0600);
	ck_assert_int_eq(signer_key_load(path, &key), 0);
	note_verifier_format(signer_key_verifier(key), formatted);
	ck_assert_str_eq(formatted, GO_VERIFIER_KEY);

	/* Signing the package's example text gives its example note byte for byte. */
	struct note_signature signature;
	struct buffer out;
	buffer_init(&out);
	ck_assert_int_eq(signer_key_sign(key, (const uint8_t *)GO_TEXT, strlen(GO_TEXT), &signature), 0);
	ck_assert_uint_eq(signature.key_id, 0xc74f20a3u);
	ck_assert_int_eq(note_format((const uint8_t *)GO_TEXT, strlen(GO_TEXT), &signature, 1, &out), 0);
	ck_assert_uint_eq(out.len, strlen(GO_NOTE));
	ck_assert_mem_eq(out.data, GO_NOTE, out.len);
	buffer_free(&out);

	/* Saving writes back the same line. */
	const char *copy = temp_path("peter-copy.key");
	ck_assert_int_eq(signer_key_save(key, copy), 0);
	size_t len = 0;
	char *text = (char *)test_read_file(copy, &len);
	ck_assert_str_eq(text, GO_SIGNER_KEY "\n");
	free(text);
	signer_key_free(key);
}
END_TEST

START_TEST(test_load_refuses_group_or_other_permissions)
{
	static const mode_t modes[] = {0640, 0604, 0620, 0602, 0610, 0601, 0644, 0660, 0666, 0700 | 07};
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		ck_assert_msg(load_text(GO_SIGNER_KEY "\n", strlen(GO_SIGNER_KEY "\n"), modes[i]) ==
		                  DIRAUTH_ERR_PERMISSION,
		              "mode %o accepted", (unsigned)modes[i]);
	/* Owner-only modes are fine. */
	ck_assert_int_eq(load_text(GO_SIGNER_KEY "\n", strlen(GO_SIGNER_KEY "\n"), 0400), 0);
	ck_assert_int_eq(load_text(GO_SIGNER_KEY "\n", strlen(GO_SIGNER_KEY "\n"), 0600), 0);
}
END_TEST

START_TEST(test_load_refuses_symlink)
{
	struct signer_key *key = (struct signer_key *)1;
	char target[PATH_MAX];
	snprintf(target, sizeof(target), "%s", temp_path("real.key"));
	test_write_file(target, GO_SIGNER_KEY "\n", strlen(GO_SIGNER_KEY "\n"), 0600);
	const char *link_path = temp_path("link.key");
	ck_assert_int_eq(symlink(target, link_path), 0);

	ck_assert_int_eq(signer_key_load(link_path, &key), DIRAUTH_ERR_PERMISSION);
	ck_assert_ptr_null(key);
	/* The target itself loads. */
	ck_assert_int_eq(signer_key_load(target, &key), 0);
	signer_key_free(key);
}
END_TEST

START_TEST(test_load_refuses_directory_and_fifo)
{
	struct signer_key *key = (struct signer_key *)1;
	const char *dir = temp_path("a-directory");
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	ck_assert_int_eq(signer_key_load(dir, &key), DIRAUTH_ERR_PERMISSION);
	ck_assert_ptr_null(key);

	const char *fifo = temp_path("a-fifo");
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	ck_assert_int_eq(signer_key_load(fifo, &key), DIRAUTH_ERR_PERMISSION);
	ck_assert_ptr_null(key);
}
END_TEST

START_TEST(test_load_missing_file)
{
	struct signer_key *key = (struct signer_key *)1;
	ck_assert_int_eq(signer_key_load(temp_path("absent.key"), &key), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_ptr_null(key);
}
END_TEST

START_TEST(test_load_refuses_malformed)
{
	static const char *const texts[] = {
	    "",
	    "\n",
	    GO_SIGNER_KEY,          /* no final newline */
	    GO_SIGNER_KEY "\n\n",   /* a second (empty) line */
	    GO_SIGNER_KEY "\r\n",   /* CRLF */
	    GO_SIGNER_KEY " \n",    /* trailing space */
	    " " GO_SIGNER_KEY "\n", /* leading space */
	    GO_SIGNER_KEY "\n" GO_SIGNER_KEY "\n",
	    "private+key+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz\n",
	    "PRIVATE+KEYS+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz\n",
	    "PUBLIC+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz\n",
	    "PRIVATE+KEY++c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz\n", /* empty name */
	    "PRIVATE+KEY+PeterNeumann+C74F20A3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz\n", /* upper hex
	                                                                                         */
	    "PRIVATE+KEY+PeterNeumann+c74f20a+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz\n",  /* 7 digits */
	    "PRIVATE+KEY+PeterNeumann+0c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz\n",
	    "PRIVATE+KEY+PeterNeumann+c74f20a3\n",
	    "PRIVATE+KEY+PeterNeumann+c74f20a3+\n",
	    "PRIVATE+KEY+PeterNeumann\n",
	    "PRIVATE+KEY+\n",
	    "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDF\n", /* short b64 */
	    "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFzAA==\n", /* long */
	    "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr-Y7hfZx09iUvxdXHKDFz\n", /* url b64 */
	    "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz+x\n", /* extra */
	    "PRIVATE+KEY+Peter Neumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz\n",
	    "PRIVATE+KEY+PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW\n", /* other 32
	                                                                                           bytes */
	};
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		ck_assert_msg(load_string(texts[i]) == DIRAUTH_ERR_SYNTAX, "accepted malformed key %zu: %s",
		              i, texts[i]);

	/* The right seed under a type byte other than Ed25519's. */
	uint8_t encoded[33];
	size_t encoded_len = 0;
	char base64[64], line[256];
	ck_assert_int_eq(base64_decode("AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz", 44, encoded,
	                               sizeof(encoded), &encoded_len),
	                 0);
	ck_assert_uint_eq(encoded_len, 33);
	encoded[0] = 0x02;
	base64_encode(encoded, sizeof(encoded), base64);
	snprintf(line, sizeof(line), "PRIVATE+KEY+PeterNeumann+c74f20a3+%s\n", base64);
	ck_assert_int_eq(load_string(line), DIRAUTH_ERR_SYNTAX);

	/* A NUL byte inside the line. */
	char with_nul[] = GO_SIGNER_KEY "\n";
	with_nul[20] = '\0';
	ck_assert_int_eq(load_text(with_nul, sizeof(with_nul) - 1, 0600), DIRAUTH_ERR_SYNTAX);
}
END_TEST

START_TEST(test_load_refuses_wrong_key_id)
{
	/* Another key id, and the same key id under another name: both disagree with the key. */
	ck_assert_int_eq(
	    load_string("PRIVATE+KEY+PeterNeumann+c74f20a4+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz\n"),
	    DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(
	    load_string("PRIVATE+KEY+PeterNeumann+00000000+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz\n"),
	    DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(
	    load_string("PRIVATE+KEY+PeterNeumanm+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz\n"),
	    DIRAUTH_ERR_SYNTAX);
	/* The unchanged line loads, so the refusals above are about the key id. */
	ck_assert_int_eq(load_string(GO_SIGNER_KEY "\n"), 0);
}
END_TEST

START_TEST(test_load_refuses_empty_and_oversized)
{
	ck_assert_int_eq(load_text("", 0, 0600), DIRAUTH_ERR_SYNTAX);

	/* A valid key line padded past the read bound with further (well-formed looking) bytes. */
	size_t len = 4096;
	char *big = malloc(len);
	ck_assert_ptr_nonnull(big);
	memset(big, 'A', len);
	memcpy(big, GO_SIGNER_KEY, strlen(GO_SIGNER_KEY));
	big[len - 1] = '\n';
	ck_assert_int_eq(load_text(big, len, 0600), DIRAUTH_ERR_SYNTAX);
	/* Exactly one byte over the bound too. */
	ck_assert_int_eq(load_text(big + len - 1025, 1025, 0600), DIRAUTH_ERR_SYNTAX);
	free(big);
}
END_TEST

START_TEST(test_example_keys_copy_and_load)
{
	static const char *const files[] = {"authority1.key", "provider-a.key", "provider-b.key"};
	static const char *const names[] = {"authority1.dirauth.example", "provider-a.example",
	                                    "provider-b.example"};
	/* As listed in keys-example/README.md. */
	static const char *const verifiers[] = {
	    "authority1.dirauth.example+41973d40+AR19CCkJlKVPO9KJSTKdI0q839OUciRTVDOeki/KKRZr",
	    "provider-a.example+fa6ff7cc+AZCCDZKKDwoh4asmg/XPjHQ3bGSCZXnr01BWPcEqXjZr",
	    "provider-b.example+69fa0f21+AbETgXdAA+bZDIVuAYwHrL2BfM5Nnft9iUWviaZZmnAJ",
	};
	char formatted[NOTE_VERIFIER_KEY_MAX + 1];
	char command[3 * PATH_MAX];
	char keys_dir[PATH_MAX];
	struct stat st;

	snprintf(keys_dir, sizeof(keys_dir), "%s", temp_path("keys"));
	snprintf(command, sizeof(command), "sh '%s' '%s'", test_source_path("scripts/example-keys.sh"),
	         keys_dir);
	ck_assert_int_eq(system(command), 0);
	ck_assert_int_eq(stat(keys_dir, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0700);

	for (size_t i = 0; i < 3; i++) {
		char path[2 * PATH_MAX];
		struct signer_key *key = NULL;
		snprintf(path, sizeof(path), "%s/%s", keys_dir, files[i]);
		ck_assert_int_eq(stat(path, &st), 0);
		ck_assert_uint_eq(st.st_mode & 07777, 0600);
		ck_assert_int_eq(signer_key_load(path, &key), 0);
		ck_assert_str_eq(signer_key_verifier(key)->name, names[i]);
		note_verifier_format(signer_key_verifier(key), formatted);
		ck_assert_str_eq(formatted, verifiers[i]);
		ck_assert_uint_eq(signed_note_verified_count(key, "example\n", signer_key_verifier(key)), 1);
		signer_key_free(key);
	}
	/* Running it again over the copies still leaves loadable 0600 files. */
	ck_assert_int_eq(system(command), 0);
	char path[2 * PATH_MAX];
	snprintf(path, sizeof(path), "%s/authority1.key", keys_dir);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
}
END_TEST

static Suite *key_suite(void)
{
	Suite *suite = suite_create("key");
	TCase *tc = tcase_create("key");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_generate_save_load_round_trip);
	tcase_add_test(tc, test_generate_gives_distinct_keys);
	tcase_add_test(tc, test_generate_refuses_bad_names);
	tcase_add_test(tc, test_save_refuses_existing_file);
	tcase_add_test(tc, test_save_does_not_follow_symlink);
	tcase_add_test(tc, test_save_into_missing_directory_is_io_error);
	tcase_add_test(tc, test_save_mode_is_0600_whatever_the_umask);
	tcase_add_test(tc, test_go_example_key);
	tcase_add_test(tc, test_load_refuses_group_or_other_permissions);
	tcase_add_test(tc, test_load_refuses_symlink);
	tcase_add_test(tc, test_load_refuses_directory_and_fifo);
	tcase_add_test(tc, test_load_missing_file);
	tcase_add_test(tc, test_load_refuses_malformed);
	tcase_add_test(tc, test_load_refuses_wrong_key_id);
	tcase_add_test(tc, test_load_refuses_empty_and_oversized);
	tcase_add_test(tc, test_example_keys_copy_and_load);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(key_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
