/*
 * check_certificate.c: key certificates, certificate bundles and the keyring that counts a
 * statement's signatures per pinned identity.
 *
 * Each authority here has an identity key and one or two signing keys from fixed example seeds
 * (public, not secrets). Certificates are really signed; statements are really signed; every
 * refusal the header promises has its test.
 */
#include "schema/certificate.h"
#include "base/error.h"
#include "test_keys.h"
#include "test_support.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AUTHORITY_1 "authority-1.example"
#define AUTHORITY_2 "authority-2.example"
#define VALID_AFTER 1767225600ull /* 2026-01-01 */
#define VALID_UNTIL (VALID_AFTER + 90ull * 86400)

/* An example key from a seed whose bytes are (tag * 32 + i) under name. */
static void key_from_tag(unsigned tag, const char *name, struct test_key *key)
{
	uint8_t seed[32];
	for (unsigned i = 0; i < 32; i++)
		seed[i] = (uint8_t)(tag * 32 + i);
	test_key_from_seed(seed, name, key);
}

static void make_certificate(const struct test_key *identity, const struct test_key *signing,
                             uint64_t valid_after, uint64_t valid_until, struct certificate *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->authority, sizeof(c->authority), "%s", identity->verifier.name);
	c->identity = identity->verifier;
	c->signing_key = signing->verifier;
	c->valid_after = valid_after;
	c->valid_until = valid_until;
}

/* Appends the certificate's note signed by signer (normally the identity key). */
static void sign_certificate(const struct certificate *c, const struct test_key *signer, struct buffer *out)
{
	struct buffer text;
	buffer_init(&text);
	ck_assert_int_eq(certificate_encode(c, &text), 0);
	test_key_sign_note(signer, 1, text.data, text.len, out);
	buffer_free(&text);
}

/* Two authorities: identity keys and two signing keys each. */
struct example_keys {
	struct test_key identity[2];
	struct test_key signing[2][2];
};

static void example_keys_load(struct example_keys *k)
{
	key_from_tag(40, AUTHORITY_1, &k->identity[0]);
	key_from_tag(41, AUTHORITY_1, &k->signing[0][0]);
	key_from_tag(42, AUTHORITY_1, &k->signing[0][1]);
	key_from_tag(43, AUTHORITY_2, &k->identity[1]);
	key_from_tag(44, AUTHORITY_2, &k->signing[1][0]);
	key_from_tag(45, AUTHORITY_2, &k->signing[1][1]);
}

static void example_keys_free(struct example_keys *k)
{
	for (int a = 0; a < 2; a++) {
		test_key_free(&k->identity[a]);
		test_key_free(&k->signing[a][0]);
		test_key_free(&k->signing[a][1]);
	}
}

/* Adds to ring the certificate of authority a's signing key s for [after, until). */
static void ring_certify(struct certificate_keyring *ring, const struct example_keys *k, int a, int s,
                         uint64_t after, uint64_t until)
{
	struct certificate c;
	struct buffer note;
	buffer_init(&note);
	make_certificate(&k->identity[a], &k->signing[a][s], after, until, &c);
	sign_certificate(&c, &k->identity[a], &note);
	ck_assert_int_eq(certificate_keyring_add(ring, note.data, note.len), 0);
	buffer_free(&note);
}

static void ring_init(struct certificate_keyring *ring, const struct example_keys *k)
{
	struct note_verifier pins[2] = {k->identity[0].verifier, k->identity[1].verifier};
	ck_assert_int_eq(certificate_keyring_init(ring, pins, 2), 0);
}

static const char statement[] = "dirauth snapshot v1\nan example statement\n";

/* Parses the statement signed by the given keys. */
static struct note *signed_statement(const struct test_key *const *keys, size_t count)
{
	struct test_key copies[4];
	ck_assert(count <= 4);
	for (size_t i = 0; i < count; i++)
		copies[i] = *keys[i];
	struct buffer out;
	buffer_init(&out);
	test_key_sign_note(copies, count, (const uint8_t *)statement, strlen(statement), &out);
	struct note *note = NULL;
	ck_assert_int_eq(note_parse(out.data, out.len, &note), 0);
	buffer_free(&out);
	return note;
}

START_TEST(test_round_trip)
{
	struct example_keys k;
	example_keys_load(&k);
	struct certificate c, parsed;
	struct buffer text, note;
	buffer_init(&text);
	buffer_init(&note);
	make_certificate(&k.identity[0], &k.signing[0][0], VALID_AFTER, VALID_UNTIL, &c);
	ck_assert_int_eq(certificate_encode(&c, &text), 0);
	ck_assert(strncmp((const char *)text.data,
	                  "dirauth key-certificate v1\nauthority authority-1.example\n", 57) == 0);
	ck_assert_int_eq(certificate_parse(text.data, text.len, &parsed), 0);
	ck_assert_str_eq(parsed.authority, AUTHORITY_1);
	ck_assert_uint_eq(parsed.identity.key_id, k.identity[0].verifier.key_id);
	ck_assert_uint_eq(parsed.signing_key.key_id, k.signing[0][0].verifier.key_id);
	ck_assert_uint_eq(parsed.valid_after, VALID_AFTER);
	ck_assert_uint_eq(parsed.valid_until, VALID_UNTIL);
	struct buffer again;
	buffer_init(&again);
	ck_assert_int_eq(certificate_encode(&parsed, &again), 0);
	ck_assert_uint_eq(again.len, text.len);
	ck_assert(memcmp(again.data, text.data, text.len) == 0);

	sign_certificate(&c, &k.identity[0], &note);
	ck_assert_int_eq(certificate_parse_signed(note.data, note.len, &parsed), 0);
	ck_assert_str_eq(parsed.authority, AUTHORITY_1);
	/* The longest window is allowed. */
	make_certificate(&k.identity[0], &k.signing[0][0], VALID_AFTER, VALID_AFTER + CERTIFICATE_MAX_WINDOW,
	                 &c);
	buffer_reset(&again);
	ck_assert_int_eq(certificate_encode(&c, &again), 0);
	buffer_free(&again);
	buffer_free(&text);
	buffer_free(&note);
	example_keys_free(&k);
}
END_TEST

START_TEST(test_encode_refusals)
{
	struct example_keys k;
	example_keys_load(&k);
	struct certificate c;
	struct buffer out;
	buffer_init(&out);
	/* Names differ: the signing key of another authority. */
	make_certificate(&k.identity[0], &k.signing[1][0], VALID_AFTER, VALID_UNTIL, &c);
	ck_assert_int_eq(certificate_encode(&c, &out), DIRAUTH_ERR_SYNTAX);
	/* The authority line names someone else. */
	make_certificate(&k.identity[0], &k.signing[0][0], VALID_AFTER, VALID_UNTIL, &c);
	snprintf(c.authority, sizeof(c.authority), "%s", AUTHORITY_2);
	ck_assert_int_eq(certificate_encode(&c, &out), DIRAUTH_ERR_SYNTAX);
	/* Equal keys. */
	make_certificate(&k.identity[0], &k.identity[0], VALID_AFTER, VALID_UNTIL, &c);
	ck_assert_int_eq(certificate_encode(&c, &out), DIRAUTH_ERR_SYNTAX);
	/* Empty window, reversed window, too long a window. */
	make_certificate(&k.identity[0], &k.signing[0][0], VALID_AFTER, VALID_AFTER, &c);
	ck_assert_int_eq(certificate_encode(&c, &out), DIRAUTH_ERR_SYNTAX);
	make_certificate(&k.identity[0], &k.signing[0][0], VALID_UNTIL, VALID_AFTER, &c);
	ck_assert_int_eq(certificate_encode(&c, &out), DIRAUTH_ERR_SYNTAX);
	make_certificate(&k.identity[0], &k.signing[0][0], VALID_AFTER,
	                 VALID_AFTER + CERTIFICATE_MAX_WINDOW + 1, &c);
	ck_assert_int_eq(certificate_encode(&c, &out), DIRAUTH_ERR_SYNTAX);
	/* A key id that does not belong to the key. */
	make_certificate(&k.identity[0], &k.signing[0][0], VALID_AFTER, VALID_UNTIL, &c);
	c.signing_key.key_id ^= 1;
	ck_assert_int_eq(certificate_encode(&c, &out), DIRAUTH_ERR_SYNTAX);
	/* Not Ed25519. */
	make_certificate(&k.identity[0], &k.signing[0][0], VALID_AFTER, VALID_UNTIL, &c);
	c.identity.type = 0x04;
	ck_assert_int_eq(certificate_encode(&c, &out), DIRAUTH_ERR_SYNTAX);
	ck_assert_uint_eq(out.len, 0);
	buffer_free(&out);
	example_keys_free(&k);
}
END_TEST

/* Parses text with from replaced by to and expects rc. */
static void expect_parse_edit(const struct buffer *text, const char *from, const char *to, int rc)
{
	struct buffer edited;
	struct certificate parsed;
	buffer_init(&edited);
	test_text_replace(text->data, text->len, from, to, &edited);
	ck_assert_msg(certificate_parse(edited.data, edited.len, &parsed) == rc, "edit %s -> %s", from, to);
	buffer_free(&edited);
}

START_TEST(test_parse_refusals)
{
	struct example_keys k;
	example_keys_load(&k);
	struct certificate c, parsed;
	struct buffer text;
	buffer_init(&text);
	make_certificate(&k.identity[0], &k.signing[0][0], VALID_AFTER, VALID_UNTIL, &c);
	ck_assert_int_eq(certificate_encode(&c, &text), 0);
	expect_parse_edit(&text, "v1\n", "v2\n", DIRAUTH_ERR_SYNTAX);
	expect_parse_edit(&text, "valid-after 1767225600", "valid-after 01767225600", DIRAUTH_ERR_SYNTAX);
	expect_parse_edit(&text, "valid-after 1767225600", "valid-after  1767225600", DIRAUTH_ERR_SYNTAX);
	expect_parse_edit(&text, "valid-after 1767225600", "valid-after 1775001600", DIRAUTH_ERR_SYNTAX);
	expect_parse_edit(&text, "authority authority-1.example", "authority authority-2.example",
	                  DIRAUTH_ERR_SYNTAX);
	expect_parse_edit(&text, "valid-until", "valid-before", DIRAUTH_ERR_SYNTAX);
	expect_parse_edit(&text, "identity ", "signing-key ", DIRAUTH_ERR_SYNTAX);
	/* Trailing line, missing final newline, empty. */
	struct buffer longer;
	buffer_init(&longer);
	ck_assert_int_eq(buffer_append(&longer, text.data, text.len), 0);
	ck_assert_int_eq(buffer_append_string(&longer, "extra line\n"), 0);
	ck_assert_int_eq(certificate_parse(longer.data, longer.len, &parsed), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(certificate_parse(text.data, text.len - 1, &parsed), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(certificate_parse(text.data, 0, &parsed), DIRAUTH_ERR_SYNTAX);
	/* Over the byte bound. */
	uint8_t *big = calloc(1, CERTIFICATE_MAX_BYTES + 1);
	ck_assert(big != NULL);
	memset(big, 'a', CERTIFICATE_MAX_BYTES);
	big[CERTIFICATE_MAX_BYTES] = '\n';
	ck_assert_int_eq(certificate_parse(big, CERTIFICATE_MAX_BYTES + 1, &parsed), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(certificate_parse_signed(big, CERTIFICATE_MAX_BYTES + 1, &parsed),
	                 DIRAUTH_ERR_BOUNDS);
	free(big);
	buffer_free(&longer);
	buffer_free(&text);
	example_keys_free(&k);
}
END_TEST

START_TEST(test_signed_by_identity)
{
	struct example_keys k;
	example_keys_load(&k);
	struct certificate c, parsed;
	struct buffer note, tampered;
	buffer_init(&note);
	buffer_init(&tampered);
	make_certificate(&k.identity[0], &k.signing[0][0], VALID_AFTER, VALID_UNTIL, &c);
	/* Signed by the signing key it certifies, not by its identity. */
	sign_certificate(&c, &k.signing[0][0], &note);
	ck_assert_int_eq(certificate_parse_signed(note.data, note.len, &parsed), DIRAUTH_ERR_UNKNOWN_KEY);
	/* Signed by another authority's identity. */
	buffer_reset(&note);
	sign_certificate(&c, &k.identity[1], &note);
	ck_assert_int_eq(certificate_parse_signed(note.data, note.len, &parsed), DIRAUTH_ERR_UNKNOWN_KEY);
	/* Signed by its identity, then the window changed: the signature fails. */
	buffer_reset(&note);
	sign_certificate(&c, &k.identity[0], &note);
	test_text_replace(note.data, note.len, "valid-until 1775", "valid-until 1776", &tampered);
	ck_assert_int_eq(certificate_parse_signed(tampered.data, tampered.len, &parsed),
	                 DIRAUTH_ERR_SIGNATURE);
	/* Not a signed note at all. */
	ck_assert_int_eq(certificate_parse_signed((const uint8_t *)"x\n", 2, &parsed), DIRAUTH_ERR_SYNTAX);
	buffer_free(&note);
	buffer_free(&tampered);
	example_keys_free(&k);
}
END_TEST

START_TEST(test_keyring_add)
{
	struct example_keys k;
	example_keys_load(&k);
	struct certificate_keyring *ring = calloc(1, sizeof(*ring));
	ck_assert(ring != NULL);
	struct certificate c;
	struct buffer note;
	buffer_init(&note);

	/* Only authority 1 pinned. */
	ck_assert_int_eq(certificate_keyring_init(ring, &k.identity[0].verifier, 1), 0);
	make_certificate(&k.identity[0], &k.signing[0][0], VALID_AFTER, VALID_UNTIL, &c);
	sign_certificate(&c, &k.identity[0], &note);
	ck_assert_int_eq(certificate_keyring_add(ring, note.data, note.len), 0);
	ck_assert_uint_eq(ring->certificate_count, 1);
	/* The same certificate again is not added twice. */
	ck_assert_int_eq(certificate_keyring_add(ring, note.data, note.len), 0);
	ck_assert_uint_eq(ring->certificate_count, 1);

	/* Unpinned identity. */
	buffer_reset(&note);
	make_certificate(&k.identity[1], &k.signing[1][0], VALID_AFTER, VALID_UNTIL, &c);
	sign_certificate(&c, &k.identity[1], &note);
	ck_assert_int_eq(certificate_keyring_add(ring, note.data, note.len), DIRAUTH_ERR_UNKNOWN_KEY);

	/* An identity key under the pinned name but a different key: not the pinned identity. */
	struct test_key impostor;
	key_from_tag(46, AUTHORITY_1, &impostor);
	buffer_reset(&note);
	make_certificate(&impostor, &k.signing[0][1], VALID_AFTER, VALID_UNTIL, &c);
	sign_certificate(&c, &impostor, &note);
	ck_assert_int_eq(certificate_keyring_add(ring, note.data, note.len), DIRAUTH_ERR_UNKNOWN_KEY);
	ck_assert_uint_eq(ring->certificate_count, 1);
	test_key_free(&impostor);

	/* A broken note carries certificate_parse_signed's error. */
	ck_assert_int_eq(certificate_keyring_add(ring, (const uint8_t *)"nothing\n", 8), DIRAUTH_ERR_SYNTAX);

	/* Full ring. */
	for (uint64_t i = 1; ring->certificate_count < CERTIFICATE_BUNDLE_MAX; i++)
		ring_certify(ring, &k, 0, 0, VALID_AFTER + i, VALID_UNTIL);
	buffer_reset(&note);
	make_certificate(&k.identity[0], &k.signing[0][1], VALID_AFTER, VALID_UNTIL, &c);
	sign_certificate(&c, &k.identity[0], &note);
	ck_assert_int_eq(certificate_keyring_add(ring, note.data, note.len), DIRAUTH_ERR_BOUNDS);

	/* Too many identities; a pinned key that is not Ed25519. */
	struct note_verifier many[33];
	for (int i = 0; i < 33; i++)
		many[i] = k.identity[0].verifier;
	ck_assert_int_eq(certificate_keyring_init(ring, many, 33), DIRAUTH_ERR_BOUNDS);
	many[0].type = 0x04;
	ck_assert_int_eq(certificate_keyring_init(ring, many, 1), DIRAUTH_ERR_SYNTAX);
	buffer_free(&note);
	free(ring);
	example_keys_free(&k);
}
END_TEST

START_TEST(test_verify_window)
{
	struct example_keys k;
	example_keys_load(&k);
	struct certificate_keyring *ring = calloc(1, sizeof(*ring));
	ck_assert(ring != NULL);
	ring_init(ring, &k);
	ring_certify(ring, &k, 0, 0, VALID_AFTER, VALID_UNTIL);
	const struct test_key *signers[] = {&k.signing[0][0]};
	struct note *note = signed_statement(signers, 1);
	size_t count = 99;
	char names[128];

	ck_assert_int_eq(certificate_keyring_verify(ring, note, VALID_AFTER, 1, &count, names, sizeof(names)),
	                 0);
	ck_assert_uint_eq(count, 1);
	ck_assert_str_eq(names, AUTHORITY_1);
	ck_assert_int_eq(certificate_keyring_verify(ring, note, VALID_UNTIL - 1, 1, &count, NULL, 0), 0);
	/* Outside the window: before it, and at valid-until (the window is half open). */
	ck_assert_int_eq(
	    certificate_keyring_verify(ring, note, VALID_AFTER - 1, 1, &count, names, sizeof(names)),
	    DIRAUTH_ERR_UNKNOWN_KEY);
	ck_assert_uint_eq(count, 0);
	ck_assert_str_eq(names, "");
	ck_assert_int_eq(certificate_keyring_verify(ring, note, VALID_UNTIL, 1, &count, NULL, 0),
	                 DIRAUTH_ERR_UNKNOWN_KEY);
	ck_assert_uint_eq(count, 0);
	/* The identity key signing a statement directly is not a certified signing key. */
	note_free(note);
	const struct test_key *identity_signer[] = {&k.identity[0]};
	note = signed_statement(identity_signer, 1);
	ck_assert_int_eq(certificate_keyring_verify(ring, note, VALID_AFTER, 1, &count, NULL, 0),
	                 DIRAUTH_ERR_UNKNOWN_KEY);
	/* A zero threshold is a caller's bug. */
	ck_assert_int_eq(certificate_keyring_verify(ring, note, VALID_AFTER, 0, &count, NULL, 0),
	                 DIRAUTH_ERR_INTERNAL);
	note_free(note);
	free(ring);
	example_keys_free(&k);
}
END_TEST

START_TEST(test_verify_rotation_counts_once)
{
	struct example_keys k;
	example_keys_load(&k);
	struct certificate_keyring *ring = calloc(1, sizeof(*ring));
	ck_assert(ring != NULL);
	ring_init(ring, &k);
	/* Old key certified until the middle of the overlap, new key from its start. */
	uint64_t overlap_start = VALID_AFTER + 60 * 86400;
	ring_certify(ring, &k, 0, 0, VALID_AFTER, VALID_UNTIL);
	ring_certify(ring, &k, 0, 1, overlap_start, overlap_start + 90 * 86400);
	const struct test_key *signers[] = {&k.signing[0][0], &k.signing[0][1]};
	struct note *note = signed_statement(signers, 2);
	size_t count = 0;
	char names[128];
	ck_assert_int_eq(
	    certificate_keyring_verify(ring, note, overlap_start, 1, &count, names, sizeof(names)), 0);
	ck_assert_uint_eq(count, 1);
	ck_assert_str_eq(names, AUTHORITY_1);
	ck_assert_int_eq(certificate_keyring_verify(ring, note, overlap_start, 2, &count, NULL, 0),
	                 DIRAUTH_ERR_THRESHOLD);
	ck_assert_uint_eq(count, 1);
	/* Before the overlap only the old key counts; after the old window only the new one. */
	ck_assert_int_eq(certificate_keyring_verify(ring, note, VALID_AFTER, 1, &count, NULL, 0), 0);
	ck_assert_int_eq(certificate_keyring_verify(ring, note, VALID_UNTIL + 1, 1, &count, NULL, 0), 0);
	ck_assert_uint_eq(count, 1);
	note_free(note);
	free(ring);
	example_keys_free(&k);
}
END_TEST

START_TEST(test_verify_two_identities)
{
	struct example_keys k;
	example_keys_load(&k);
	struct certificate_keyring *ring = calloc(1, sizeof(*ring));
	ck_assert(ring != NULL);
	ring_init(ring, &k);
	ring_certify(ring, &k, 0, 0, VALID_AFTER, VALID_UNTIL);
	ring_certify(ring, &k, 1, 0, VALID_AFTER, VALID_UNTIL);
	const struct test_key *signers[] = {&k.signing[0][0], &k.signing[1][0]};
	struct note *note = signed_statement(signers, 2);
	size_t count = 0;
	char names[128];
	ck_assert_int_eq(
	    certificate_keyring_verify(ring, note, VALID_AFTER + 10, 2, &count, names, sizeof(names)), 0);
	ck_assert_uint_eq(count, 2);
	ck_assert_str_eq(names, AUTHORITY_1 ", " AUTHORITY_2);
	ck_assert_int_eq(certificate_keyring_verify(ring, note, VALID_AFTER + 10, 3, &count, NULL, 0),
	                 DIRAUTH_ERR_THRESHOLD);
	/* Names truncated to the caller's capacity, still terminated. */
	char small[8];
	ck_assert_int_eq(
	    certificate_keyring_verify(ring, note, VALID_AFTER + 10, 2, &count, small, sizeof(small)), 0);
	ck_assert_str_eq(small, "authori");
	note_free(note);
	free(ring);
	example_keys_free(&k);
}
END_TEST

/* One public key speaks once, whatever names certify it: authority 2 certifying authority 1's
 * signing key under its own name, and copying authority 1's signature line under that name (a
 * signature covers the text, not the key's name), does not make two. */
START_TEST(test_verify_one_public_key_counts_once)
{
	struct example_keys k;
	example_keys_load(&k);
	struct certificate_keyring *ring = calloc(1, sizeof(*ring));
	ck_assert(ring != NULL);
	ring_init(ring, &k);
	ring_certify(ring, &k, 0, 0, VALID_AFTER, VALID_UNTIL);
	struct test_key relabelled;
	key_from_tag(41, AUTHORITY_2, &relabelled); /* authority 1's first signing key, named 2 */
	struct certificate c;
	struct buffer certificate_note;
	buffer_init(&certificate_note);
	make_certificate(&k.identity[1], &relabelled, VALID_AFTER, VALID_UNTIL, &c);
	sign_certificate(&c, &k.identity[1], &certificate_note);
	ck_assert_int_eq(certificate_keyring_add(ring, certificate_note.data, certificate_note.len), 0);
	const struct test_key *signers[] = {&k.signing[0][0], &relabelled};
	struct note *note = signed_statement(signers, 2);
	ck_assert_int_eq(memcmp(note->signatures[0].signature, note->signatures[1].signature, 64), 0);
	size_t count = 0;
	char names[128];
	ck_assert_int_eq(
	    certificate_keyring_verify(ring, note, VALID_AFTER + 10, 2, &count, names, sizeof(names)),
	    DIRAUTH_ERR_THRESHOLD);
	ck_assert_uint_eq(count, 1);
	ck_assert_str_eq(names, AUTHORITY_1);
	note_free(note);
	buffer_free(&certificate_note);
	test_key_free(&relabelled);
	free(ring);
	example_keys_free(&k);
}
END_TEST

START_TEST(test_verify_bad_signature_rejects)
{
	struct example_keys k;
	example_keys_load(&k);
	struct certificate_keyring *ring = calloc(1, sizeof(*ring));
	ck_assert(ring != NULL);
	ring_init(ring, &k);
	ring_certify(ring, &k, 0, 0, VALID_AFTER, VALID_UNTIL);
	ring_certify(ring, &k, 1, 0, VALID_AFTER, VALID_UNTIL);
	const struct test_key *signers[] = {&k.signing[0][0], &k.signing[1][0]};
	struct note *note = signed_statement(signers, 2);
	size_t count = 7;
	note->signatures[1].signature[5] ^= 1;
	ck_assert_int_eq(certificate_keyring_verify(ring, note, VALID_AFTER, 1, &count, NULL, 0),
	                 DIRAUTH_ERR_SIGNATURE);
	ck_assert_uint_eq(count, 0);
	/* The same bad signature outside its key's window is ignored. */
	note_free(note);
	note = signed_statement(signers, 2);
	note->signatures[1].signature_len = 10;
	ck_assert_int_eq(certificate_keyring_verify(ring, note, VALID_AFTER, 1, &count, NULL, 0),
	                 DIRAUTH_ERR_SIGNATURE);
	ck_assert_int_eq(certificate_keyring_verify(ring, note, VALID_UNTIL, 1, &count, NULL, 0),
	                 DIRAUTH_ERR_UNKNOWN_KEY);
	note_free(note);
	free(ring);
	example_keys_free(&k);
}
END_TEST

/* Signed certificate notes of both authorities, in a bundle. */
static void example_bundle(const struct example_keys *k, struct buffer notes[3], struct buffer *bundle)
{
	struct certificate c;
	for (int i = 0; i < 3; i++)
		buffer_init(&notes[i]);
	make_certificate(&k->identity[0], &k->signing[0][0], VALID_AFTER, VALID_UNTIL, &c);
	sign_certificate(&c, &k->identity[0], &notes[0]);
	make_certificate(&k->identity[0], &k->signing[0][1], VALID_AFTER + 86400, VALID_UNTIL + 86400, &c);
	sign_certificate(&c, &k->identity[0], &notes[1]);
	make_certificate(&k->identity[1], &k->signing[1][0], VALID_AFTER, VALID_UNTIL, &c);
	sign_certificate(&c, &k->identity[1], &notes[2]);
	const uint8_t *pointers[3] = {notes[0].data, notes[1].data, notes[2].data};
	size_t lengths[3] = {notes[0].len, notes[1].len, notes[2].len};
	ck_assert_int_eq(certificate_bundle_encode(pointers, lengths, 3, bundle), 0);
}

START_TEST(test_bundle_round_trip)
{
	struct example_keys k;
	example_keys_load(&k);
	struct buffer notes[3], bundle;
	buffer_init(&bundle);
	example_bundle(&k, notes, &bundle);
	struct certificate_bundle_entry entries[CERTIFICATE_BUNDLE_MAX];
	size_t count = 0;
	ck_assert_int_eq(certificate_bundle_parse(bundle.data, bundle.len, entries, &count), 0);
	ck_assert_uint_eq(count, 3);
	for (size_t i = 0; i < 3; i++) {
		ck_assert_uint_eq(entries[i].note_len, notes[i].len);
		ck_assert(memcmp(entries[i].note, notes[i].data, notes[i].len) == 0);
	}
	/* An empty bundle. */
	struct buffer empty;
	buffer_init(&empty);
	ck_assert_int_eq(certificate_bundle_encode(NULL, NULL, 0, &empty), 0);
	ck_assert_str_eq((const char *)empty.data, "dirauth certificates v1\n");
	ck_assert_int_eq(certificate_bundle_parse(empty.data, empty.len, entries, &count), 0);
	ck_assert_uint_eq(count, 0);

	/* A keyring pinning only authority 1 takes its two certificates and skips the other. */
	struct certificate_keyring *ring = calloc(1, sizeof(*ring));
	ck_assert(ring != NULL);
	ck_assert_int_eq(certificate_keyring_init(ring, &k.identity[0].verifier, 1), 0);
	size_t added = 0;
	ck_assert_int_eq(certificate_keyring_add_bundle(ring, bundle.data, bundle.len, &added), 0);
	ck_assert_uint_eq(added, 2);
	ck_assert_uint_eq(ring->certificate_count, 2);
	ck_assert_int_eq(certificate_keyring_add_bundle(ring, bundle.data, bundle.len, &added), 0);
	ck_assert_uint_eq(added, 0);
	ck_assert_int_eq(certificate_keyring_add_bundle(ring, bundle.data, bundle.len - 1, &added),
	                 DIRAUTH_ERR_SYNTAX);
	free(ring);
	for (int i = 0; i < 3; i++)
		buffer_free(&notes[i]);
	buffer_free(&bundle);
	buffer_free(&empty);
	example_keys_free(&k);
}
END_TEST

static int bundle_parse_text(const char *text)
{
	struct certificate_bundle_entry entries[CERTIFICATE_BUNDLE_MAX];
	size_t count = 0;
	return certificate_bundle_parse((const uint8_t *)text, strlen(text), entries, &count);
}

START_TEST(test_bundle_refusals)
{
	struct example_keys k;
	example_keys_load(&k);
	struct buffer notes[3], bundle, edited;
	buffer_init(&bundle);
	buffer_init(&edited);
	example_bundle(&k, notes, &bundle);
	struct certificate_bundle_entry entries[CERTIFICATE_BUNDLE_MAX];
	size_t count = 0;

	/* Trailing bytes; truncated; a length one too long or too short. */
	ck_assert_int_eq(buffer_append_string(&edited, (const char *)bundle.data), 0);
	ck_assert_int_eq(buffer_append_string(&edited, "x"), 0);
	ck_assert_int_eq(certificate_bundle_parse(edited.data, edited.len, entries, &count),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_uint_eq(count, 0);
	ck_assert_int_eq(certificate_bundle_parse(bundle.data, bundle.len - 1, entries, &count),
	                 DIRAUTH_ERR_SYNTAX);
	char from[32], to[32];
	snprintf(from, sizeof(from), "certificate %zu\n", notes[0].len);
	snprintf(to, sizeof(to), "certificate %zu\n", notes[0].len + 1);
	buffer_reset(&edited);
	test_text_replace(bundle.data, bundle.len, from, to, &edited);
	ck_assert_int_eq(certificate_bundle_parse(edited.data, edited.len, entries, &count),
	                 DIRAUTH_ERR_SYNTAX);
	snprintf(to, sizeof(to), "certificate 0%zu\n", notes[0].len);
	buffer_reset(&edited);
	test_text_replace(bundle.data, bundle.len, from, to, &edited);
	ck_assert_int_eq(certificate_bundle_parse(edited.data, edited.len, entries, &count),
	                 DIRAUTH_ERR_SYNTAX);

	ck_assert_int_eq(bundle_parse_text("dirauth certificates v2\n"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(bundle_parse_text(""), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(bundle_parse_text("dirauth certificates v1\ncertificate 0\n"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(bundle_parse_text("dirauth certificates v1\ncertificate -1\n"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(bundle_parse_text("dirauth certificates v1\ncertificate 2049\n"),
	                 DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(bundle_parse_text("dirauth certificates v1\ncertificate 99999999999999999999999\n"),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(bundle_parse_text("dirauth certificates v1\ncert 1\nx"), DIRAUTH_ERR_SYNTAX);

	/* More than CERTIFICATE_BUNDLE_MAX certificates. */
	buffer_reset(&edited);
	ck_assert_int_eq(buffer_append_string(&edited, "dirauth certificates v1\n"), 0);
	for (int i = 0; i < CERTIFICATE_BUNDLE_MAX + 1; i++)
		ck_assert_int_eq(buffer_append_string(&edited, "certificate 2\nx\n"), 0);
	ck_assert_int_eq(certificate_bundle_parse(edited.data, edited.len, entries, &count),
	                 DIRAUTH_ERR_BOUNDS);
	/* Exactly the maximum parses. */
	edited.len -= strlen("certificate 2\nx\n");
	ck_assert_int_eq(certificate_bundle_parse(edited.data, edited.len, entries, &count), 0);
	ck_assert_uint_eq(count, CERTIFICATE_BUNDLE_MAX);

	/* Encoder refusals. */
	const uint8_t *pointers[CERTIFICATE_BUNDLE_MAX + 1];
	size_t lengths[CERTIFICATE_BUNDLE_MAX + 1];
	for (int i = 0; i < CERTIFICATE_BUNDLE_MAX + 1; i++) {
		pointers[i] = notes[0].data;
		lengths[i] = notes[0].len;
	}
	buffer_reset(&edited);
	ck_assert_int_eq(certificate_bundle_encode(pointers, lengths, CERTIFICATE_BUNDLE_MAX + 1, &edited),
	                 DIRAUTH_ERR_BOUNDS);
	lengths[0] = 0;
	ck_assert_int_eq(certificate_bundle_encode(pointers, lengths, 1, &edited), DIRAUTH_ERR_SYNTAX);
	lengths[0] = CERTIFICATE_MAX_BYTES + 1;
	ck_assert_int_eq(certificate_bundle_encode(pointers, lengths, 1, &edited), DIRAUTH_ERR_BOUNDS);
	ck_assert_uint_eq(edited.len, 0);
	/* Over the byte bound before anything is read. */
	uint8_t *big = calloc(1, CERTIFICATE_BUNDLE_MAX_BYTES + 1);
	ck_assert(big != NULL);
	ck_assert_int_eq(certificate_bundle_parse(big, CERTIFICATE_BUNDLE_MAX_BYTES + 1, entries, &count),
	                 DIRAUTH_ERR_BOUNDS);
	free(big);
	for (int i = 0; i < 3; i++)
		buffer_free(&notes[i]);
	buffer_free(&bundle);
	buffer_free(&edited);
	example_keys_free(&k);
}
END_TEST

static Suite *certificate_suite(void)
{
	Suite *suite = suite_create("certificate");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_encode_refusals);
	tcase_add_test(tc, test_parse_refusals);
	tcase_add_test(tc, test_signed_by_identity);
	tcase_add_test(tc, test_keyring_add);
	tcase_add_test(tc, test_verify_window);
	tcase_add_test(tc, test_verify_rotation_counts_once);
	tcase_add_test(tc, test_verify_two_identities);
	tcase_add_test(tc, test_verify_one_public_key_counts_once);
	tcase_add_test(tc, test_verify_bad_signature_rejects);
	tcase_add_test(tc, test_bundle_round_trip);
	tcase_add_test(tc, test_bundle_refusals);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(certificate_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
