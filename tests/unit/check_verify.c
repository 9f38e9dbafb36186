/*
 * check_verify.c: verify/, the checks every party that takes another's signed statement relies on,
 * driven directly, without dirauthctl around them.
 *
 * Keys are generated in the test (signer/key.h) and certificates made from the schema codec
 * (certificate_fixture.h). The keyring is built from identities pinned the way an authority pins
 * its peers (a list of verifier keys, no trust bundle), and the note checks are shown on it: a
 * threshold counts distinct identities (two keys of one identity once, a repeated signature once,
 * unknown keys and identity keys not at all), a bad signature by a certified key refuses the note,
 * a key counts only if its certificate covers both times asked, and the detail says why in words.
 * Then the snapshot checks against a trust bundle (the header, a body that is not the header's),
 * and history: rollback, equivocation, and the `previous` walk with begin/add/reached/finish,
 * through a gap, refusing a link that does not hash, a link by an unknown key, a walk too long and
 * a walk used out of order; and the rule of one link walked forward (verify_history_follows), as an
 * authority catching up applies it.
 */
#include "certificate_fixture.h"
#include "base/buffer.h"
#include "schema/certificate.h"
#include "compress/compress.h"
#include "crypto/crypto.h"
#include "base/error.h"
#include "schema/note.h"
#include "schema/registration.h"
#include "schema/snapshot.h"
#include "schema/trust_bundle.h"
#include "signer/key.h"
#include "test_support.h"
#include "verify/history.h"
#include "verify/keyring.h"
#include "schema/snapshot_diff.h"
#include "verify/snapshot.h"
#include "verify/verify.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOW    ((uint64_t)1767225600) /* 2026-01-01 */
#define ORIGIN "dirauth.test/mix"
#define DAY    86400ULL

/* Three peers, each with a pinned identity key and a certified signing key; peer A also has a
 * second certified key (a rotation overlap). OUTSIDER is certified by an identity nobody pins. */
enum { PEER_A, PEER_B, PEER_C, PEER_A_NEXT, OUTSIDER, KEY_COUNT };
enum { IDENTITY_A, IDENTITY_B, IDENTITY_C, IDENTITY_OUTSIDER, IDENTITY_COUNT };

static struct signer_key *keys[KEY_COUNT];
static struct signer_key *identities[IDENTITY_COUNT];
static struct signer_key *provider;
static struct note_verifier pinned[3]; /* the identities of A, B and C, as a config pins peers */
static struct buffer certificates;
static struct certificate_keyring *ring;
static struct trust_bundle bundle;

static void setup(void)
{
	static const char *const names[KEY_COUNT] = {"a.test", "b.test", "c.test", "a.test", "outsider.test"};
	static const char *const identity_names[IDENTITY_COUNT] = {"a.test", "b.test", "c.test",
	                                                           "outsider.test"};
	static const int certified_by[KEY_COUNT] = {IDENTITY_A, IDENTITY_B, IDENTITY_C, IDENTITY_A,
	                                            IDENTITY_OUTSIDER};
	struct buffer notes[KEY_COUNT];
	char detail[VERIFY_DETAIL_MAX];
	size_t added = 0;

	for (int i = 0; i < KEY_COUNT; i++)
		ck_assert_int_eq(signer_key_generate(names[i], &keys[i]), 0);
	for (int i = 0; i < IDENTITY_COUNT; i++)
		ck_assert_int_eq(signer_key_generate(identity_names[i], &identities[i]), 0);
	ck_assert_int_eq(signer_key_generate("provider.test", &provider), 0);
	/* Every key certified for [NOW - 1 day, NOW + 1 day). */
	for (int i = 0; i < KEY_COUNT; i++) {
		buffer_init(&notes[i]);
		fixture_certificate(identities[certified_by[i]], keys[i], NOW - DAY, NOW + DAY, &notes[i]);
	}
	buffer_init(&certificates);
	fixture_certificate_bundle(notes, KEY_COUNT, &certificates);
	for (int i = 0; i < KEY_COUNT; i++)
		buffer_free(&notes[i]);
	for (int i = 0; i < 3; i++)
		pinned[i] = *signer_key_verifier(identities[i]);
	ck_assert_int_eq(verify_keyring_build(pinned, 3, certificates.data, certificates.len, &ring, &added,
	                                      detail, sizeof(detail)),
	                 0);
	/* The outsider's certificate is not one of theirs. */
	ck_assert_uint_eq(added, 4);

	memset(&bundle, 0, sizeof(bundle));
	bundle.namespace_count = 1;
	strcpy(bundle.namespaces[0].name, "mix");
	strcpy(bundle.namespaces[0].origin, ORIGIN);
	bundle.authority_count = 3;
	memcpy(bundle.authorities, pinned, sizeof(pinned));
	bundle.threshold = 2;
	bundle.max_body_compressed = 64 * 1024 * 1024;
	bundle.max_body_uncompressed = 512 * 1024 * 1024;
	bundle.max_records = 1000;
}

static void teardown(void)
{
	for (int i = 0; i < KEY_COUNT; i++)
		signer_key_free(keys[i]);
	for (int i = 0; i < IDENTITY_COUNT; i++)
		signer_key_free(identities[i]);
	signer_key_free(provider);
	buffer_free(&certificates);
	verify_keyring_free(ring);
}

/* A statement signed by the given keys, in that order, parsed. */
static struct note *signed_statement(struct signer_key *const *signers, size_t count)
{
	static const char text[] = "dirauth test statement\n";
	struct note_signature signatures[8];
	struct buffer bytes;
	struct note *note = NULL;

	ck_assert_uint_le(count, 8);
	buffer_init(&bytes);
	for (size_t i = 0; i < count; i++)
		ck_assert_int_eq(
		    signer_key_sign(signers[i], (const uint8_t *)text, strlen(text), &signatures[i]), 0);
	ck_assert_int_eq(note_format((const uint8_t *)text, strlen(text), signatures, count, &bytes), 0);
	ck_assert_int_eq(note_parse(bytes.data, bytes.len, &note), 0);
	buffer_free(&bytes);
	return note;
}

static int verify_statement(struct signer_key *const *signers, size_t count, size_t threshold, uint64_t at,
                            uint64_t also_at, struct verify_signers *who, char *detail, size_t cap)
{
	struct verify_pins pins = {.ring = ring, .threshold = threshold, .pinned_by = "the configuration"};
	struct note *note = signed_statement(signers, count);
	int rc = verify_note(&pins, note, at, also_at, who, detail, cap);

	note_free(note);
	return rc;
}

#define assert_detail_has(detail, word)                                                                      \
	ck_assert_msg(strstr((detail), (word)) != NULL, "detail '%s' lacks '%s'", (detail), (word))

START_TEST(test_keyring_from_pinned_identities)
{
	struct certificate_keyring *built = NULL;
	struct note_verifier too_many[33];
	char detail[VERIFY_DETAIL_MAX];
	size_t added = 99;
	int rc;

	/* Only the certificates the pinned identities signed are kept; none pinned, none kept. */
	ck_assert_uint_eq(ring->identity_count, 3);
	ck_assert_uint_eq(ring->certificate_count, 4);
	ck_assert_int_eq(verify_keyring_build(NULL, 0, certificates.data, certificates.len, &built, &added,
	                                      detail, sizeof(detail)),
	                 0);
	ck_assert_uint_eq(added, 0);
	verify_keyring_free(built);
	/* A truncated bundle is refused, and nothing is left to free. */
	rc = verify_keyring_build(pinned, 3, certificates.data, certificates.len - 10, &built, &added, detail,
	                          sizeof(detail));
	ck_assert_int_eq(rc, DIRAUTH_ERR_SYNTAX);
	ck_assert_ptr_null(built);
	ck_assert_uint_eq(added, 0);
	assert_detail_has(detail, "certificates: not a certificate bundle");
	/* More identities than a keyring pins is the pins' fault. */
	for (size_t i = 0; i < 33; i++)
		too_many[i] = pinned[i % 3];
	rc = verify_keyring_build(too_many, 33, certificates.data, certificates.len, &built, NULL, detail,
	                          sizeof(detail));
	ck_assert_int_eq(rc, DIRAUTH_ERR_CONFIG);
	ck_assert_ptr_null(built);
	assert_detail_has(detail, "the identities cannot be pinned");
	/* No detail buffer is fine. */
	ck_assert_int_eq(
	    verify_keyring_build(too_many, 33, certificates.data, certificates.len, &built, NULL, NULL, 0),
	    DIRAUTH_ERR_CONFIG);
}
END_TEST

START_TEST(test_threshold_counts_distinct_identities)
{
	struct signer_key *a_and_b[] = {keys[PEER_A], keys[PEER_B]};
	struct signer_key *a_twice[] = {keys[PEER_A], keys[PEER_A_NEXT]};
	struct signer_key *a_repeated[] = {keys[PEER_A], keys[PEER_A]};
	struct signer_key *all[] = {keys[PEER_C], keys[PEER_B], keys[PEER_A]};
	struct verify_signers who;
	char detail[VERIFY_DETAIL_MAX];
	int rc;

	ck_assert_int_eq(verify_statement(a_and_b, 2, 2, NOW, NOW, &who, detail, sizeof(detail)), 0);
	ck_assert_uint_eq(who.count, 2);
	ck_assert_uint_eq(who.pinned, 3);
	ck_assert_str_eq(who.names, "a.test, b.test");
	ck_assert_str_eq(detail, "");
	/* Names come in pin order, whatever the order of the signature lines. */
	ck_assert_int_eq(verify_statement(all, 3, 3, NOW, NOW, &who, detail, sizeof(detail)), 0);
	ck_assert_str_eq(who.names, "a.test, b.test, c.test");
	/* Two certified keys of one identity are one identity. */
	rc = verify_statement(a_twice, 2, 2, NOW, NOW, &who, detail, sizeof(detail));
	ck_assert_int_eq(rc, DIRAUTH_ERR_THRESHOLD);
	ck_assert_uint_eq(who.count, 1);
	assert_detail_has(detail, "too few signatures: 1 of 3 authorities signed");
	assert_detail_has(detail, "the configuration requires 2");
	assert_detail_has(detail, "counted: a.test;");
	assert_detail_has(detail, "the keys of one authority count once");
	/* The same signature twice is one signature. */
	rc = verify_statement(a_repeated, 2, 2, NOW, NOW, &who, detail, sizeof(detail));
	ck_assert_int_eq(rc, DIRAUTH_ERR_THRESHOLD);
	ck_assert_uint_eq(who.count, 1);
	/* Threshold 0 would accept anything: refused as a bug. */
	ck_assert_int_eq(verify_statement(a_and_b, 2, 0, NOW, NOW, NULL, NULL, 0), DIRAUTH_ERR_INTERNAL);
}
END_TEST

START_TEST(test_unknown_and_identity_keys_count_zero)
{
	struct signer_key *outsider_and_a[] = {keys[OUTSIDER], keys[PEER_A]};
	struct signer_key *outsider[] = {keys[OUTSIDER]};
	struct signer_key *identity[] = {identities[IDENTITY_B]};
	struct verify_signers who;
	char detail[VERIFY_DETAIL_MAX];
	int rc;

	/* An unknown key adds nothing to a known one. */
	rc = verify_statement(outsider_and_a, 2, 2, NOW, NOW, &who, detail, sizeof(detail));
	ck_assert_int_eq(rc, DIRAUTH_ERR_THRESHOLD);
	ck_assert_uint_eq(who.count, 1);
	assert_detail_has(detail, "outsider.test key");
	assert_detail_has(detail, "is not an authority of the configuration");
	ck_assert_int_eq(verify_statement(outsider_and_a, 2, 1, NOW, NOW, &who, NULL, 0), 0);
	/* Alone it is no signature at all. */
	rc = verify_statement(outsider, 1, 1, NOW, NOW, &who, detail, sizeof(detail));
	ck_assert_int_eq(rc, DIRAUTH_ERR_UNKNOWN_KEY);
	ck_assert_uint_eq(who.count, 0);
	assert_detail_has(detail, "signed by a key not certified by any pinned identity at 1767225600 "
	                          "(2026-01-01 00:00:00 UTC) (");
	/* An identity key signs certificates only. */
	rc = verify_statement(identity, 1, 1, NOW, NOW, &who, detail, sizeof(detail));
	ck_assert_int_eq(rc, DIRAUTH_ERR_UNKNOWN_KEY);
	assert_detail_has(detail, "b.test key");
	assert_detail_has(detail, "is a pinned identity key, which signs only certificates");
}
END_TEST

START_TEST(test_bad_signature_refuses_the_note)
{
	struct signer_key *a_and_b[] = {keys[PEER_A], keys[PEER_B]};
	struct verify_pins pins = {.ring = ring, .threshold = 1, .pinned_by = NULL};
	char detail[VERIFY_DETAIL_MAX];
	struct note *note = signed_statement(a_and_b, 2);

	/* Enough good signatures do not excuse a bad one by a certified key. */
	note->signatures[1].signature[3] ^= 0x01;
	ck_assert_int_eq(verify_note(&pins, note, NOW, NOW, NULL, detail, sizeof(detail)),
	                 DIRAUTH_ERR_SIGNATURE);
	assert_detail_has(detail, "bad signature");
	note_free(note);
}
END_TEST

/* A key counts only if its certificate covers both times; a key covering one counts for neither. */
START_TEST(test_both_times_rule)
{
	struct signer_key *a_and_b[] = {keys[PEER_A], keys[PEER_B]};
	struct signer_key *a[] = {keys[PEER_A]};
	struct verify_signers who;
	char detail[VERIFY_DETAIL_MAX];
	int rc;

	/* Inside the window at both times, in either order. */
	ck_assert_int_eq(verify_statement(a, 1, 1, NOW - DAY, NOW + DAY - 1, &who, NULL, 0), 0);
	ck_assert_int_eq(verify_statement(a, 1, 1, NOW + DAY - 1, NOW - DAY, &who, NULL, 0), 0);
	/* The statement's time inside, the second time past the window's end. */
	rc = verify_statement(a, 1, 1, NOW, NOW + DAY, &who, detail, sizeof(detail));
	ck_assert_int_eq(rc, DIRAUTH_ERR_UNKNOWN_KEY);
	assert_detail_has(detail, "at 1767225600 (2026-01-01 00:00:00 UTC) and at 1767312000");
	assert_detail_has(detail, "a.test key");
	assert_detail_has(detail,
	                  "is certified only from 1767139200 (2025-12-31 00:00:00 UTC) until 1767312000");
	/* One time only: no "and at". */
	rc = verify_statement(a, 1, 1, NOW + DAY, NOW + DAY, &who, detail, sizeof(detail));
	ck_assert_int_eq(rc, DIRAUTH_ERR_UNKNOWN_KEY);
	ck_assert_ptr_null(strstr(detail, "and at"));
	/* A statement dated before both windows: neither key counts, whatever the second time. */
	rc = verify_statement(a_and_b, 2, 2, NOW - DAY - 1, NOW, &who, detail, sizeof(detail));
	ck_assert_int_eq(rc, DIRAUTH_ERR_UNKNOWN_KEY);
	ck_assert_uint_eq(who.count, 0);
}
END_TEST

/* A statement that must come from one party (a receipt naming its authority, a peer's vote). */
START_TEST(test_keyring_for_one_identity)
{
	struct signer_key *a[] = {keys[PEER_A_NEXT]};
	struct certificate_keyring *only_a = NULL;
	struct certificate_keyring *only_b = NULL;
	struct certificate_keyring *nobody = NULL;
	struct note *note = signed_statement(a, 1);
	struct verify_pins pins = {.threshold = 1, .pinned_by = "the configuration"};

	ck_assert_int_eq(verify_keyring_for_identity(ring, "a.test", &only_a), 0);
	ck_assert_uint_eq(only_a->identity_count, 1);
	ck_assert_uint_eq(only_a->certificate_count, 2);
	ck_assert_int_eq(verify_keyring_for_identity(ring, "b.test", &only_b), 0);
	ck_assert_int_eq(verify_keyring_for_identity(ring, "outsider.test", &nobody), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_ptr_null(nobody);
	pins.ring = only_a;
	ck_assert_int_eq(verify_note(&pins, note, NOW, NOW, NULL, NULL, 0), 0);
	pins.ring = only_b;
	ck_assert_int_eq(verify_note(&pins, note, NOW, NOW, NULL, NULL, 0), DIRAUTH_ERR_UNKNOWN_KEY);
	verify_keyring_free(only_a);
	verify_keyring_free(only_b);
	note_free(note);
}
END_TEST

/* Snapshots: one provider-signed record, a header signed by the given keys. */
struct snapshot_spec {
	uint64_t epoch;
	uint64_t valid_after; /* 0: NOW - 60 */
	const char *origin;   /* NULL: ORIGIN */
	uint8_t service_byte; /* varies the body (and so the header) */
	const struct buffer *previous_note;
	struct signer_key *const *signers; /* NULL: A and B */
	size_t signer_count;
	uint64_t consensus_method; /* 0: SNAPSHOT_CONSENSUS_METHOD */
};

static void build_snapshot(const struct snapshot_spec *spec, struct buffer *header_note, struct buffer *body)
{
	struct signer_key *a_and_b[] = {keys[PEER_A], keys[PEER_B]};
	struct signer_key *const *signers = spec->signers != NULL ? spec->signers : a_and_b;
	size_t signer_count = spec->signers != NULL ? spec->signer_count : 2;
	struct registration registration;
	struct note_signature signatures[4];
	struct snapshot_record record;
	struct snapshot_header header;
	struct buffer text, record_note;

	buffer_init(&text);
	buffer_init(&record_note);
	memset(&registration, 0, sizeof(registration));
	strcpy(registration.namespace_name, "mix");
	registration.service_id[0] = spec->service_byte;
	registration.service_class = SERVICE_CLASS_MIX_GATEWAY;
	registration.provider = *signer_key_verifier(provider);
	registration.sequence = 1;
	registration.issued_at = NOW - 1000;
	registration.expires = NOW + DAY;
	registration.endpoint_count = 1;
	registration.endpoints = calloc(1, sizeof(*registration.endpoints));
	ck_assert_ptr_nonnull(registration.endpoints);
	registration.endpoints[0].endpoint_id[0] = 1;
	registration.endpoints[0].transport = TRANSPORT_QUIC;
	strcpy(registration.endpoints[0].address, "192.0.2.1:443");
	strcpy(registration.endpoints[0].region, "eu-west");
	registration.endpoints[0].capacity = CAPACITY_LOW;
	registration.endpoints[0].profile = PROFILE_MODERN;
	ck_assert_int_eq(registration_encode(&registration, &text), 0);
	ck_assert_int_eq(signer_key_sign(provider, text.data, text.len, &signatures[0]), 0);
	ck_assert_int_eq(note_format(text.data, text.len, signatures, 1, &record_note), 0);
	registration_clear(&registration);
	memset(&record, 0, sizeof(record));
	record.service_id[0] = spec->service_byte;
	record.note = record_note.data;
	record.note_len = record_note.len;
	ck_assert_int_eq(snapshot_body_encode("mix", spec->epoch, &record, 1, body), 0);

	memset(&header, 0, sizeof(header));
	strcpy(header.namespace_name, "mix");
	strcpy(header.origin, spec->origin != NULL ? spec->origin : ORIGIN);
	header.epoch = spec->epoch;
	header.valid_after = spec->valid_after != 0 ? spec->valid_after : NOW - 60;
	header.fresh_until = header.valid_after + 120;
	header.valid_until = header.valid_after + 180;
	header.record_count = 1;
	ck_assert_int_eq(snapshot_records_root(&record, 1, header.records_root), 0);
	header.body_size = body->len;
	ck_assert_int_eq(crypto_sha256(body->data, body->len, header.body_sha256), 0);
	if (spec->previous_note != NULL) {
		struct note *previous = NULL;
		ck_assert_int_eq(note_parse(spec->previous_note->data, spec->previous_note->len, &previous),
		                 0);
		ck_assert_int_eq(snapshot_header_digest(previous->text, previous->text_len, header.previous),
		                 0);
		note_free(previous);
	}
	header.consensus_method = spec->consensus_method ? spec->consensus_method : SNAPSHOT_CONSENSUS_METHOD;
	buffer_reset(&text);
	ck_assert_int_eq(snapshot_header_encode(&header, &text), 0);
	for (size_t i = 0; i < signer_count; i++)
		ck_assert_int_eq(signer_key_sign(signers[i], text.data, text.len, &signatures[i]), 0);
	ck_assert_int_eq(note_format(text.data, text.len, signatures, signer_count, header_note), 0);
	buffer_free(&text);
	buffer_free(&record_note);
}

static void parse_header(const struct buffer *note_bytes, struct snapshot_header *header)
{
	struct note *note = NULL;

	ck_assert_int_eq(note_parse(note_bytes->data, note_bytes->len, &note), 0);
	ck_assert_int_eq(snapshot_header_parse(note->text, note->text_len, header), 0);
	note_free(note);
}

START_TEST(test_snapshot_header_against_trust_bundle)
{
	struct signer_key *a[] = {keys[PEER_A]};
	struct snapshot_spec spec = {.epoch = 5, .service_byte = 1};
	struct snapshot_spec evil = {.epoch = 5, .service_byte = 1, .origin = "evil.test/mix"};
	struct snapshot_spec one = {.epoch = 5, .service_byte = 1, .signers = a, .signer_count = 1};
	struct buffer note, body;
	struct snapshot_header header;
	struct verify_signers who;
	char detail[VERIFY_DETAIL_MAX];
	int rc;

	buffer_init(&note);
	buffer_init(&body);
	build_snapshot(&spec, &note, &body);
	ck_assert_int_eq(verify_snapshot_header(&bundle, "mix", certificates.data, certificates.len,
	                                        note.data, note.len, NOW, NULL, &header, &who, detail,
	                                        sizeof(detail)),
	                 0);
	ck_assert_uint_eq(header.epoch, 5);
	ck_assert_str_eq(who.names, "a.test, b.test");
	rc = verify_snapshot_header(&bundle, "mail", certificates.data, certificates.len, note.data, note.len,
	                            NOW, NULL, &header, &who, detail, sizeof(detail));
	ck_assert_int_eq(rc, DIRAUTH_ERR_CONFIG);
	ck_assert_str_eq(detail, "namespace not in the trust bundle");
	/* Once the clock has passed valid-until, it is stale. */
	rc = verify_snapshot_header(&bundle, "mix", certificates.data, certificates.len, note.data, note.len,
	                            NOW + 120, NULL, &header, &who, detail, sizeof(detail));
	ck_assert_int_eq(rc, DIRAUTH_ERR_STALE);
	assert_detail_has(detail, "header: stale");
	ck_assert_uint_eq(header.epoch, 0);
	buffer_reset(&note);
	buffer_reset(&body);
	build_snapshot(&evil, &note, &body);
	rc = verify_snapshot_header(&bundle, "mix", certificates.data, certificates.len, note.data, note.len,
	                            NOW, NULL, &header, &who, detail, sizeof(detail));
	ck_assert_int_eq(rc, DIRAUTH_ERR_MISMATCH);
	assert_detail_has(detail, "header: wrong origin 'evil.test/mix', the trust bundle pins");
	/* The bundle's threshold of 2, in the bundle's words. */
	buffer_reset(&note);
	buffer_reset(&body);
	build_snapshot(&one, &note, &body);
	rc = verify_snapshot_header(&bundle, "mix", certificates.data, certificates.len, note.data, note.len,
	                            NOW, NULL, &header, &who, detail, sizeof(detail));
	ck_assert_int_eq(rc, DIRAUTH_ERR_THRESHOLD);
	assert_detail_has(detail, "header: too few signatures: 1 of 3 authorities");
	assert_detail_has(detail, "the trust bundle requires 2");
	/* A method this verifier does not know: its body cannot be judged, so the header is refused
	 * however many authorities signed it. */
	struct snapshot_spec later = {
	    .epoch = 5, .service_byte = 1, .consensus_method = SNAPSHOT_CONSENSUS_METHOD_MAX + 1};
	buffer_reset(&note);
	buffer_reset(&body);
	build_snapshot(&later, &note, &body);
	rc = verify_snapshot_header(&bundle, "mix", certificates.data, certificates.len, note.data, note.len,
	                            NOW, NULL, &header, &who, detail, sizeof(detail));
	ck_assert_int_eq(rc, DIRAUTH_ERR_SYNTAX);
	assert_detail_has(detail, "header: consensus method 3 is not one this verifier knows");
	buffer_free(&note);
	buffer_free(&body);
}
END_TEST

START_TEST(test_body_against_header)
{
	struct snapshot_spec spec = {.epoch = 5, .service_byte = 1};
	struct snapshot_spec other = {.epoch = 5, .service_byte = 2};
	struct buffer note, body, other_note, other_body, served, decoded;
	struct snapshot_header header;
	char detail[VERIFY_DETAIL_MAX];
	int rc;

	buffer_init(&note);
	buffer_init(&body);
	buffer_init(&other_note);
	buffer_init(&other_body);
	buffer_init(&served);
	buffer_init(&decoded);
	build_snapshot(&spec, &note, &body);
	build_snapshot(&other, &other_note, &other_body);
	parse_header(&note, &header);
	ck_assert_int_eq(compress_encode(ENCODING_ZSTD, body.data, body.len, &served), 0);
	ck_assert_int_eq(verify_snapshot_body(&bundle, &header, "zstd", served.data, served.len, &decoded,
	                                      detail, sizeof(detail)),
	                 0);
	ck_assert_uint_eq(decoded.len, body.len);
	ck_assert_int_eq(memcmp(decoded.data, body.data, body.len), 0);
	/* Another body of the same size: the header does not commit to it. */
	ck_assert_uint_eq(other_body.len, body.len);
	rc = verify_snapshot_body(&bundle, &header, "identity", other_body.data, other_body.len, &decoded,
	                          detail, sizeof(detail));
	ck_assert_int_eq(rc, DIRAUTH_ERR_MISMATCH);
	ck_assert_str_eq(detail, "body: does not match the signed header (digest, size, count or root)");
	/* An encoding not offered. */
	rc = verify_snapshot_body(&bundle, &header, "br", body.data, body.len, &decoded, detail,
	                          sizeof(detail));
	ck_assert_int_eq(rc, DIRAUTH_ERR_SYNTAX);
	assert_detail_has(detail, "unsupported content encoding 'br'");
	buffer_free(&note);
	buffer_free(&body);
	buffer_free(&other_note);
	buffer_free(&other_body);
	buffer_free(&served);
	buffer_free(&decoded);
}
END_TEST

START_TEST(test_body_from_diff)
{
	struct snapshot_spec base_spec = {.epoch = 5, .service_byte = 1};
	struct snapshot_spec target_spec = {.epoch = 6, .service_byte = 2};
	struct buffer base_note, base, target_note, target, diff, served, rebuilt;
	struct snapshot_header base_header, header;
	char detail[VERIFY_DETAIL_MAX];
	buffer_init(&base_note);
	buffer_init(&base);
	buffer_init(&target_note);
	buffer_init(&target);
	buffer_init(&diff);
	buffer_init(&served);
	buffer_init(&rebuilt);
	build_snapshot(&base_spec, &base_note, &base);
	build_snapshot(&target_spec, &target_note, &target);
	parse_header(&base_note, &base_header);
	parse_header(&target_note, &header);
	struct snapshot_body_limits limits = {16, 16, 16};
	ck_assert_int_eq(snapshot_diff_build(base.data, base.len, target.data, target.len, &limits, &diff),
	                 0);
	ck_assert_int_eq(compress_encode(ENCODING_ZSTD, diff.data, diff.len, &served), 0);
	int rc = verify_snapshot_diff(&bundle, &header, base.data, base.len, "zstd", served.data, served.len,
	                              &rebuilt, detail, sizeof detail);
	ck_assert_msg(rc == 0, "%s", detail);
	ck_assert_uint_eq(rebuilt.len, target.len);
	ck_assert_mem_eq(rebuilt.data, target.data, target.len);
	/* Another base than the one held: refused, nothing handed out. */
	rc = verify_snapshot_diff(&bundle, &header, target.data, target.len, "identity", diff.data, diff.len,
	                          &rebuilt, detail, sizeof detail);
	ck_assert_int_eq(rc, DIRAUTH_ERR_MISMATCH);
	assert_detail_has(detail, "diff: does not apply to the held body");
	ck_assert_uint_eq(rebuilt.len, 0);
	/* A diff to another body than the header's. */
	rc = verify_snapshot_diff(&bundle, &base_header, base.data, base.len, "identity", diff.data, diff.len,
	                          &rebuilt, detail, sizeof detail);
	ck_assert_int_eq(rc, DIRAUTH_ERR_MISMATCH);
	ck_assert_str_eq(detail, "diff: not to the body the header commits to");
	/* Not a diff, an encoding not offered, a diff that does not decode. */
	rc = verify_snapshot_diff(&bundle, &header, base.data, base.len, "identity", target.data, target.len,
	                          &rebuilt, detail, sizeof detail);
	ck_assert_int_eq(rc, DIRAUTH_ERR_SYNTAX);
	assert_detail_has(detail, "diff: not a diff");
	rc = verify_snapshot_diff(&bundle, &header, base.data, base.len, "br", diff.data, diff.len, &rebuilt,
	                          detail, sizeof detail);
	ck_assert_int_eq(rc, DIRAUTH_ERR_SYNTAX);
	assert_detail_has(detail, "diff: unsupported content encoding 'br'");
	served.data[served.len / 2] ^= 0xff;
	rc = verify_snapshot_diff(&bundle, &header, base.data, base.len, "zstd", served.data, served.len,
	                          &rebuilt, detail, sizeof detail);
	ck_assert_int_ne(rc, 0);
	ck_assert_uint_eq(rebuilt.len, 0);
	buffer_free(&base_note);
	buffer_free(&base);
	buffer_free(&target_note);
	buffer_free(&target);
	buffer_free(&diff);
	buffer_free(&served);
	buffer_free(&rebuilt);
}
END_TEST

START_TEST(test_rollback_and_equivocation)
{
	struct signer_key *a_b_c[] = {keys[PEER_A], keys[PEER_B], keys[PEER_C]};
	struct snapshot_spec five = {.epoch = 5, .service_byte = 1};
	struct snapshot_spec five_cosigned = {
	    .epoch = 5, .service_byte = 1, .signers = a_b_c, .signer_count = 3};
	struct snapshot_spec five_other = {.epoch = 5, .service_byte = 2};
	struct snapshot_spec four = {.epoch = 4, .service_byte = 1};
	struct snapshot_spec six = {.epoch = 6, .service_byte = 1};
	struct buffer notes[5], body;
	struct snapshot_spec *specs[5] = {&five, &five_cosigned, &five_other, &four, &six};
	struct snapshot_header headers[5];
	struct verify_held held;
	char detail[VERIFY_DETAIL_MAX];
	int newer = -1;

	buffer_init(&body);
	for (size_t i = 0; i < 5; i++) {
		buffer_init(&notes[i]);
		buffer_reset(&body);
		build_snapshot(specs[i], &notes[i], &body);
		parse_header(&notes[i], &headers[i]);
	}
	ck_assert_int_eq(verify_held_parse(notes[0].data, notes[0].len, &held, detail, sizeof(detail)), 0);
	ck_assert_uint_eq(held.header.epoch, 5);
	/* The same text with one more cosignature is the same snapshot. */
	ck_assert_int_eq(verify_history_compare(&held, notes[1].data, notes[1].len, &headers[1], &newer,
	                                        detail, sizeof(detail)),
	                 0);
	ck_assert_int_eq(newer, 0);
	ck_assert_int_eq(verify_history_compare(&held, notes[2].data, notes[2].len, &headers[2], &newer,
	                                        detail, sizeof(detail)),
	                 DIRAUTH_ERR_MISMATCH);
	ck_assert_str_eq(detail, "equivocation: two different headers signed for epoch 5");
	ck_assert_int_eq(verify_history_compare(&held, notes[3].data, notes[3].len, &headers[3], &newer,
	                                        detail, sizeof(detail)),
	                 DIRAUTH_ERR_ROLLBACK);
	assert_detail_has(detail, "rollback: the server offers epoch 4");
	ck_assert_int_eq(verify_history_compare(&held, notes[4].data, notes[4].len, &headers[4], &newer,
	                                        detail, sizeof(detail)),
	                 0);
	ck_assert_int_eq(newer, 1);
	/* A held header that cannot be read back cannot be compared with. */
	ck_assert_int_eq(verify_held_parse((const uint8_t *)"garbage\n", 8, &held, detail, sizeof(detail)),
	                 DIRAUTH_ERR_SYNTAX);
	assert_detail_has(detail, "held header cannot be read back");
	for (size_t i = 0; i < 5; i++)
		buffer_free(&notes[i]);
	buffer_free(&body);
}
END_TEST

/* Epochs 5 to 8 chained by previous, 7 not published: 8 -> 6 -> 5. */
struct history {
	struct buffer notes[9];
	struct snapshot_header headers[9];
};

static void build_history(struct history *history)
{
	const struct buffer *previous = NULL;
	struct buffer body;

	buffer_init(&body);
	for (uint64_t epoch = 5; epoch <= 8; epoch++) {
		struct snapshot_spec spec = {
		    .epoch = epoch, .service_byte = 1, .valid_after = NOW - 100 + epoch};
		buffer_init(&history->notes[epoch]);
		if (epoch == 7)
			continue;
		spec.previous_note = previous;
		buffer_reset(&body);
		build_snapshot(&spec, &history->notes[epoch], &body);
		parse_header(&history->notes[epoch], &history->headers[epoch]);
		previous = &history->notes[epoch];
	}
	buffer_free(&body);
}

static void history_free(struct history *history)
{
	for (uint64_t epoch = 5; epoch <= 8; epoch++)
		buffer_free(&history->notes[epoch]);
}

START_TEST(test_chain_walk)
{
	struct verify_pins pins = {.ring = ring, .threshold = 2, .pinned_by = "the configuration"};
	struct history history;
	struct verify_held held;
	struct verify_chain chain;
	char detail[VERIFY_DETAIL_MAX];

	build_history(&history);
	ck_assert_int_eq(verify_held_parse(history.notes[5].data, history.notes[5].len, &held, NULL, 0), 0);
	/* 8 names 6, which names the held 5; nothing is held for 7, so it is not added. */
	ck_assert_int_eq(
	    verify_chain_begin(&chain, &pins, &held, &history.headers[8], 1024, detail, sizeof(detail)), 0);
	ck_assert_int_eq(verify_chain_reached(&chain), 0);
	ck_assert_int_eq(verify_chain_finish(&chain, detail, sizeof(detail)), DIRAUTH_ERR_MISMATCH);
	assert_detail_has(detail,
	                  "history does not chain to the held snapshot (epoch 5): the previous of epoch 8");
	ck_assert_int_eq(
	    verify_chain_add(&chain, 6, history.notes[6].data, history.notes[6].len, detail, sizeof(detail)),
	    0);
	ck_assert_int_eq(verify_chain_reached(&chain), 1);
	ck_assert_int_eq(verify_chain_finish(&chain, detail, sizeof(detail)), 0);
	/* Once reached, more links are a caller's mistake. */
	ck_assert_int_eq(verify_chain_add(&chain, 6, history.notes[6].data, history.notes[6].len, NULL, 0),
	                 DIRAUTH_ERR_INTERNAL);
	/* The direct successor is reached at once. */
	ck_assert_int_eq(verify_chain_begin(&chain, &pins, &held, &history.headers[6], 1024, NULL, 0), 0);
	ck_assert_int_eq(verify_chain_reached(&chain), 1);
	history_free(&history);
}
END_TEST

START_TEST(test_chain_refusals)
{
	struct signer_key *outsider_and_a[] = {keys[OUTSIDER], keys[PEER_A]};
	struct verify_pins pins = {.ring = ring, .threshold = 2, .pinned_by = "the configuration"};
	struct snapshot_spec stranger = {.epoch = 6, .service_byte = 2, .valid_after = NOW - 100 + 6};
	struct snapshot_spec short_signed = {.epoch = 6,
	                                     .service_byte = 1,
	                                     .valid_after = NOW - 100 + 6,
	                                     .signers = outsider_and_a,
	                                     .signer_count = 2};
	struct buffer stranger_note, short_note, body;
	struct history history;
	struct verify_held held;
	struct verify_chain chain;
	char detail[VERIFY_DETAIL_MAX];

	build_history(&history);
	buffer_init(&stranger_note);
	buffer_init(&short_note);
	buffer_init(&body);
	stranger.previous_note = &history.notes[5];
	short_signed.previous_note = &history.notes[5];
	build_snapshot(&stranger, &stranger_note, &body);
	buffer_reset(&body);
	build_snapshot(&short_signed, &short_note, &body);
	ck_assert_int_eq(verify_held_parse(history.notes[5].data, history.notes[5].len, &held, NULL, 0), 0);

	/* A well signed 6 that is not 8's previous. */
	ck_assert_int_eq(verify_chain_begin(&chain, &pins, &held, &history.headers[8], 1024, NULL, 0), 0);
	ck_assert_int_eq(
	    verify_chain_add(&chain, 6, stranger_note.data, stranger_note.len, detail, sizeof(detail)),
	    DIRAUTH_ERR_MISMATCH);
	assert_detail_has(detail, "epoch 6 is not the previous header of epoch 8");
	/* A link is verified like a header: an unknown key adds nothing to one known one. */
	ck_assert_int_eq(verify_chain_begin(&chain, &pins, &held, &history.headers[8], 1024, NULL, 0), 0);
	ck_assert_int_eq(verify_chain_add(&chain, 6, short_note.data, short_note.len, detail, sizeof(detail)),
	                 DIRAUTH_ERR_THRESHOLD);
	assert_detail_has(detail, "history: epoch 6: too few signatures");
	/* A link that is no note, and links out of order. */
	ck_assert_int_eq(verify_chain_begin(&chain, &pins, &held, &history.headers[8], 1024, NULL, 0), 0);
	ck_assert_int_eq(verify_chain_add(&chain, 6, (const uint8_t *)"garbage\n", 8, detail, sizeof(detail)),
	                 DIRAUTH_ERR_SYNTAX);
	assert_detail_has(detail, "history: epoch 6: not a signed note");
	ck_assert_int_eq(verify_chain_add(&chain, 8, history.notes[8].data, history.notes[8].len, NULL, 0),
	                 DIRAUTH_ERR_INTERNAL);
	ck_assert_int_eq(verify_chain_add(&chain, 5, history.notes[5].data, history.notes[5].len, NULL, 0),
	                 DIRAUTH_ERR_INTERNAL);
	/* Further than the bound asks for a re-seed; not newer is a caller's mistake. */
	ck_assert_int_eq(
	    verify_chain_begin(&chain, &pins, &held, &history.headers[8], 2, detail, sizeof(detail)),
	    DIRAUTH_ERR_BOUNDS);
	assert_detail_has(detail, "3 epochs past the held epoch 5, more than the 2");
	assert_detail_has(detail, "re-seeded deliberately");
	ck_assert_int_eq(verify_chain_begin(&chain, &pins, &held, &history.headers[5], 1024, NULL, 0),
	                 DIRAUTH_ERR_INTERNAL);
	/* A chain that was never begun reaches nothing. */
	memset(&chain, 0, sizeof(chain));
	ck_assert_int_eq(verify_chain_add(&chain, 6, history.notes[6].data, history.notes[6].len, NULL, 0),
	                 DIRAUTH_ERR_INTERNAL);
	ck_assert_int_eq(verify_chain_finish(&chain, NULL, 0), DIRAUTH_ERR_MISMATCH);
	buffer_free(&stranger_note);
	buffer_free(&short_note);
	buffer_free(&body);
	history_free(&history);
}
END_TEST

/* One link's rule, as a catch-up walks forward: each header follows the one taken before it. */
START_TEST(test_follows_forward)
{
	struct snapshot_spec early = {.epoch = 8, .service_byte = 3, .valid_after = NOW - 100 + 5};
	struct buffer early_note, body;
	struct snapshot_header early_header;
	struct history history;
	struct verify_held held5, held6, held8;
	char detail[VERIFY_DETAIL_MAX];

	build_history(&history);
	buffer_init(&early_note);
	buffer_init(&body);
	early.previous_note = &history.notes[6];
	build_snapshot(&early, &early_note, &body);
	parse_header(&early_note, &early_header);
	ck_assert_int_eq(verify_held_parse(history.notes[5].data, history.notes[5].len, &held5, NULL, 0), 0);
	ck_assert_int_eq(verify_held_parse(history.notes[6].data, history.notes[6].len, &held6, NULL, 0), 0);
	ck_assert_int_eq(verify_held_parse(history.notes[8].data, history.notes[8].len, &held8, NULL, 0), 0);
	/* 5, 6, then 8 across the epoch nobody published. */
	ck_assert_int_eq(verify_history_follows(&held5, &history.headers[6], detail, sizeof(detail)), 0);
	ck_assert_str_eq(detail, "");
	ck_assert_int_eq(verify_history_follows(&held6, &history.headers[8], NULL, 0), 0);
	/* 8 names 6, not 5. */
	ck_assert_int_eq(verify_history_follows(&held5, &history.headers[8], detail, sizeof(detail)),
	                 DIRAUTH_ERR_MISMATCH);
	ck_assert_str_eq(detail, "epoch 5 is not the previous header of epoch 8");
	/* Backwards, or the same epoch again, is no link. */
	ck_assert_int_eq(verify_history_follows(&held8, &history.headers[6], detail, sizeof(detail)),
	                 DIRAUTH_ERR_MISMATCH);
	ck_assert_str_eq(detail, "epoch 6 is not after epoch 8");
	ck_assert_int_eq(verify_history_follows(&held6, &history.headers[6], NULL, 0), DIRAUTH_ERR_MISMATCH);
	/* Naming 6 but valid before it. */
	ck_assert_int_eq(verify_history_follows(&held6, &early_header, detail, sizeof(detail)),
	                 DIRAUTH_ERR_MISMATCH);
	assert_detail_has(detail, "epoch 8 is valid after");
	assert_detail_has(detail, "before epoch 6's valid-after");
	/* The walk back refuses the same link: a link dated after the header that names it is outside
	 * its window. */
	struct verify_pins pins = {.ring = ring, .threshold = 2, .pinned_by = "the configuration"};
	struct verify_chain chain;
	ck_assert_int_eq(verify_chain_begin(&chain, &pins, &held5, &early_header, 1024, NULL, 0), 0);
	ck_assert_int_eq(
	    verify_chain_add(&chain, 6, history.notes[6].data, history.notes[6].len, detail, sizeof(detail)),
	    DIRAUTH_ERR_MISMATCH);
	assert_detail_has(detail, "history does not chain to the held snapshot (epoch 5): epoch 6 is "
	                          "valid after");
	buffer_free(&early_note);
	buffer_free(&body);
	history_free(&history);
}
END_TEST

START_TEST(test_format_time)
{
	char text[VERIFY_TIME_TEXT_MAX];

	verify_format_time(NOW, text);
	ck_assert_str_eq(text, "1767225600 (2026-01-01 00:00:00 UTC)");
	verify_format_time(UINT64_MAX, text);
	ck_assert_str_eq(text, "18446744073709551615");
}
END_TEST

static Suite *verify_suite(void)
{
	Suite *suite = suite_create("verify");
	TCase *keyring_case = tcase_create("keyring");
	TCase *snapshot_case = tcase_create("snapshot");
	TCase *history_case = tcase_create("history");

	tcase_add_checked_fixture(keyring_case, setup, teardown);
	tcase_add_test(keyring_case, test_keyring_from_pinned_identities);
	tcase_add_test(keyring_case, test_threshold_counts_distinct_identities);
	tcase_add_test(keyring_case, test_unknown_and_identity_keys_count_zero);
	tcase_add_test(keyring_case, test_bad_signature_refuses_the_note);
	tcase_add_test(keyring_case, test_both_times_rule);
	tcase_add_test(keyring_case, test_keyring_for_one_identity);
	tcase_add_test(keyring_case, test_format_time);
	suite_add_tcase(suite, keyring_case);

	tcase_add_checked_fixture(snapshot_case, setup, teardown);
	tcase_add_test(snapshot_case, test_snapshot_header_against_trust_bundle);
	tcase_add_test(snapshot_case, test_body_against_header);
	tcase_add_test(snapshot_case, test_body_from_diff);
	suite_add_tcase(suite, snapshot_case);

	tcase_add_checked_fixture(history_case, setup, teardown);
	tcase_set_timeout(history_case, 30);
	tcase_add_test(history_case, test_rollback_and_equivocation);
	tcase_add_test(history_case, test_chain_walk);
	tcase_add_test(history_case, test_chain_refusals);
	tcase_add_test(history_case, test_follows_forward);
	suite_add_tcase(suite, history_case);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(verify_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
