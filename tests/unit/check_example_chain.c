/*
 * check_example_chain.c: the published example chain (tests/vectors/chain/, shown in
 * docs/formats.md), link by link, with the project's own verifiers.
 *
 * Three authorities, threshold 2: the trust bundle pins the three identity keys of keys-example/;
 * each identity key certifies its authority's signing key (authorityN.cert, certificates.txt);
 * the three signing keys co-sign the header of epoch 2, whose `previous` is the SHA-256 of the
 * text of the header of epoch 1; the header commits to body.txt (size, SHA-256, count, Merkle
 * root over leaf-hashes.txt); the body's records are the two example providers' registrations,
 * each signed by its provider, whom keys-example/dirauthd.yaml enrols; authority 1's receipt
 * promises provider A's registration for epoch 2, and the snapshot of epoch 2 keeps it.
 *
 * First, tools/example_chain_main.c must write exactly these files again from keys-example/, so
 * that the vectors are what the code makes and not a copy that drifted. Then every link is
 * checked on the files alone, and the refusals a verifier relies on are shown on mutated copies:
 * a changed byte of the body, a header left with one of three signatures, certificates issued by
 * an identity nobody pinned, a record with a second signature, a body of another epoch. Last,
 * every example in docs/formats.md is checked to be one of these files, or cut from one.
 */
#include "certificate_fixture.h"
#include "ctl/register.h"
#include "ctl/report.h"
#include "base/buffer.h"
#include "schema/certificate.h"
#include "compress/compress.h"
#include "crypto/crypto.h"
#include "schema/encoding.h"
#include "base/error.h"
#include "crypto/merkle.h"
#include "schema/note.h"
#include "schema/receipt.h"
#include "schema/registration.h"
#include "schema/snapshot.h"
#include "schema/trust_bundle.h"
#include "server/config/config.h"
#include "signer/key.h"
#include "test_support.h"
#include "verify/history.h"
#include "verify/keyring.h"
#include "verify/snapshot.h"

#include <check.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHAIN_DIR "tests/vectors/chain/"
#define NAMESPACE "mix"
#define ORIGIN    "dirauth.example/mix"
/* The mirror's clock: 30 seconds into epoch 2, inside every window of the chain. */
#define NOW       1767225750ULL
#define EPOCH     2ULL

/* Every file the generator writes (README.md is written by hand). */
static const char *const chain_files[] = {
    "trust-bundle.txt",
    "authority1.cert",
    "authority2.cert",
    "authority3.cert",
    "certificates.txt",
    "registration-a.note",
    "registration-b.note",
    "previous-header.txt",
    "previous-header.note",
    "previous-body.txt",
    "header.txt",
    "header.note",
    "body.txt",
    "leaf-hashes.txt",
    "receipt.note",
    "SHA256SUMS",
};
#define CHAIN_FILE_COUNT (sizeof(chain_files) / sizeof(chain_files[0]))

static const char *const authority_names[] = {"authority1.dirauth.example", "authority2.dirauth.example",
                                              "authority3.dirauth.example"};

/* A file of the chain, whole. */
struct vector {
	uint8_t *data;
	size_t len;
};

static struct vector vector_read(const char *name)
{
	char relative[256];
	struct vector v;
	snprintf(relative, sizeof(relative), CHAIN_DIR "%s", name);
	v.data = test_read_file(test_source_path(relative), &v.len);
	return v;
}

static void vector_free(struct vector *v)
{
	free(v->data);
	v->data = NULL;
	v->len = 0;
}

/* A key of keys-example/, loaded through a 0600 copy (git does not keep the mode). */
static struct signer_key *example_key(const char *name)
{
	char dir[PATH_MAX], relative[256], copy[PATH_MAX + 64];
	struct signer_key *key = NULL;
	size_t len;
	uint8_t *data;

	snprintf(relative, sizeof(relative), "keys-example/%s", name);
	data = test_read_file(test_source_path(relative), &len);
	test_make_tempdir(dir, sizeof(dir));
	snprintf(copy, sizeof(copy), "%s/%s", dir, name);
	test_write_file(copy, data, len, 0600);
	ck_assert_int_eq(signer_key_load(copy, &key), 0);
	free(data);
	test_remove_tree(dir);
	return key;
}

static struct trust_bundle *bundle_read(void)
{
	struct vector v = vector_read("trust-bundle.txt");
	struct trust_bundle *bundle = malloc(sizeof(*bundle));
	size_t line = 0;
	ck_assert_ptr_nonnull(bundle);
	ck_assert_msg(trust_bundle_parse(v.data, v.len, bundle, &line) == 0, "trust-bundle.txt:%zu", line);
	vector_free(&v);
	return bundle;
}

/* The verified header of a header note of the chain, at NOW, with the chain's certificates. */
static int header_verify(const struct trust_bundle *bundle, const uint8_t *certificates,
                         size_t certificates_len, const uint8_t *note, size_t note_len,
                         struct snapshot_header *header, struct verify_signers *signers)
{
	char detail[VERIFY_DETAIL_MAX];
	return verify_snapshot_header(bundle, NAMESPACE, certificates, certificates_len, note, note_len, NOW,
	                              NULL, header, signers, detail, sizeof(detail));
}

static void header_read_verified(const char *name, struct snapshot_header *header)
{
	struct trust_bundle *bundle = bundle_read();
	struct vector certificates = vector_read("certificates.txt");
	struct vector note = vector_read(name);
	struct verify_signers signers;
	ck_assert_int_eq(
	    header_verify(bundle, certificates.data, certificates.len, note.data, note.len, header, &signers),
	    0);
	vector_free(&note);
	vector_free(&certificates);
	free(bundle);
}

static void sha256_hex(const uint8_t *data, size_t len, char hex[65])
{
	uint8_t digest[32];
	ck_assert_int_eq(crypto_sha256(data, len, digest), 0);
	hex_encode(digest, sizeof(digest), hex);
}

/* ---- the vectors are what the generator writes ---- */

START_TEST(test_generator_writes_the_vectors)
{
	char out[PATH_MAX], path[PATH_MAX + 64], keys[PATH_MAX], generator[PATH_MAX];
	const char *args[] = {keys, path, NULL};
	struct test_outcome outcome;
	size_t listed = 0;
	struct dirent *entry;
	DIR *dir;

	test_make_tempdir(out, sizeof(out));
	snprintf(path, sizeof(path), "%s/chain", out);
	snprintf(keys, sizeof(keys), "%s", test_source_path("keys-example"));
	snprintf(generator, sizeof(generator), "%s", test_binary_path("tools/dirauth-example-chain"));
	test_run_program(generator, args, out, &outcome);
	ck_assert_msg(outcome.status == 0, "the generator failed: %s", outcome.err);
	test_outcome_free(&outcome);

	for (size_t i = 0; i < CHAIN_FILE_COUNT; i++) {
		char written[PATH_MAX + 128];
		size_t len;
		snprintf(written, sizeof(written), "%s/%s", path, chain_files[i]);
		uint8_t *made = test_read_file(written, &len);
		struct vector v = vector_read(chain_files[i]);
		ck_assert_msg(len == v.len && memcmp(made, v.data, len) == 0,
		              CHAIN_DIR "%s differs from what the generator writes (regenerate: "
		                        "dirauth-example-chain keys-example tests/vectors/chain)",
		              chain_files[i]);
		vector_free(&v);
		free(made);
	}
	/* Nothing else: the generator writes these files and the folder holds them and its README. */
	dir = opendir(path);
	ck_assert_ptr_nonnull(dir);
	while ((entry = readdir(dir)) != NULL)
		listed += entry->d_name[0] != '.';
	closedir(dir);
	ck_assert_uint_eq(listed, CHAIN_FILE_COUNT);
	listed = 0;
	dir = opendir(test_source_path(CHAIN_DIR));
	ck_assert_ptr_nonnull(dir);
	while ((entry = readdir(dir)) != NULL) {
		if (entry->d_name[0] == '.')
			continue;
		int known = strcmp(entry->d_name, "README.md") == 0;
		for (size_t i = 0; i < CHAIN_FILE_COUNT; i++)
			known |= strcmp(entry->d_name, chain_files[i]) == 0;
		ck_assert_msg(known, CHAIN_DIR "%s is not written by the generator", entry->d_name);
		listed++;
	}
	closedir(dir);
	ck_assert_uint_eq(listed, CHAIN_FILE_COUNT + 1);
	test_remove_tree(out);
}
END_TEST

/* SHA256SUMS lists every other file with its SHA-256, as sha256sum -c reads it. */
START_TEST(test_sums)
{
	struct vector sums = vector_read("SHA256SUMS");
	struct buffer expected;
	buffer_init(&expected);
	for (size_t i = 0; i + 1 < CHAIN_FILE_COUNT; i++) {
		struct vector v = vector_read(chain_files[i]);
		char hex[65];
		sha256_hex(v.data, v.len, hex);
		ck_assert_int_eq(buffer_appendf(&expected, "%s  %s\n", hex, chain_files[i]), 0);
		vector_free(&v);
	}
	ck_assert_uint_eq(sums.len, expected.len);
	ck_assert_int_eq(memcmp(sums.data, expected.data, expected.len), 0);
	buffer_free(&expected);
	vector_free(&sums);
}
END_TEST

/* ---- trust bundle → identity keys → certificates → signing keys ---- */

START_TEST(test_trust_bundle_pins_the_identity_keys)
{
	struct trust_bundle *bundle = bundle_read();
	ck_assert_uint_eq(bundle->namespace_count, 1);
	ck_assert_str_eq(bundle->namespaces[0].name, NAMESPACE);
	ck_assert_str_eq(bundle->namespaces[0].origin, ORIGIN);
	ck_assert_uint_eq(bundle->authority_count, 3);
	ck_assert_uint_eq(bundle->threshold, 2);
	for (int i = 0; i < 3; i++) {
		char name[64];
		snprintf(name, sizeof(name), "authority%d-identity.key", i + 1);
		struct signer_key *identity = example_key(name);
		snprintf(name, sizeof(name), "authority%d.key", i + 1);
		struct signer_key *signing = example_key(name);
		ck_assert_str_eq(bundle->authorities[i].name, authority_names[i]);
		ck_assert(note_verifier_equal(&bundle->authorities[i], signer_key_verifier(identity)));
		/* The bundle pins identity keys, never the keys that sign statements. */
		ck_assert(!note_verifier_equal(&bundle->authorities[i], signer_key_verifier(signing)));
		signer_key_free(identity);
		signer_key_free(signing);
	}
	free(bundle);
}
END_TEST

START_TEST(test_certificates_link_identities_to_signing_keys)
{
	struct trust_bundle *bundle = bundle_read();
	struct vector bundle_file = vector_read("certificates.txt");
	struct certificate_bundle_entry entries[CERTIFICATE_BUNDLE_MAX];
	struct certificate_keyring *ring = NULL;
	struct snapshot_header header;
	size_t count = 0, added = 0;
	char detail[VERIFY_DETAIL_MAX];

	header_read_verified("header.note", &header);
	ck_assert_int_eq(certificate_bundle_parse(bundle_file.data, bundle_file.len, entries, &count), 0);
	ck_assert_uint_eq(count, 3);
	ck_assert_int_eq(
	    verify_keyring_new(bundle->authorities, bundle->authority_count, &ring, detail, sizeof(detail)),
	    0);
	for (int i = 0; i < 3; i++) {
		char name[64];
		struct certificate certificate;
		snprintf(name, sizeof(name), "authority%d.cert", i + 1);
		struct vector note = vector_read(name);
		snprintf(name, sizeof(name), "authority%d.key", i + 1);
		struct signer_key *signing = example_key(name);

		/* Signed by the identity key it names, which is the one the bundle pins. */
		ck_assert_int_eq(certificate_parse_signed(note.data, note.len, &certificate), 0);
		ck_assert_str_eq(certificate.authority, authority_names[i]);
		ck_assert(note_verifier_equal(&certificate.identity, &bundle->authorities[i]));
		ck_assert(note_verifier_equal(&certificate.signing_key, signer_key_verifier(signing)));
		ck_assert_int_eq(certificate_keyring_add(ring, note.data, note.len), 0);
		/* Its window holds the header's time and the mirror's clock. */
		ck_assert(certificate.valid_after <= header.valid_after &&
		          header.valid_after < certificate.valid_until);
		ck_assert(certificate.valid_after <= NOW && NOW < certificate.valid_until);
		/* certificates.txt frames exactly these notes, in this order. */
		ck_assert_uint_eq(entries[i].note_len, note.len);
		ck_assert_int_eq(memcmp(entries[i].note, note.data, note.len), 0);
		signer_key_free(signing);
		vector_free(&note);
	}
	verify_keyring_free(ring);
	ring = NULL;
	ck_assert_int_eq(verify_keyring_from_trust_bundle(bundle, bundle_file.data, bundle_file.len, &ring,
	                                                  &added, detail, sizeof(detail)),
	                 0);
	ck_assert_uint_eq(added, 3);
	verify_keyring_free(ring);
	vector_free(&bundle_file);
	free(bundle);
}
END_TEST

/* ---- signing keys → header, and the header's previous ---- */

START_TEST(test_header_verifies_with_certified_signatures)
{
	struct trust_bundle *bundle = bundle_read();
	struct vector certificates = vector_read("certificates.txt");
	struct vector note = vector_read("header.note");
	struct vector text = vector_read("header.txt");
	struct verify_signers signers;
	struct snapshot_header header;
	struct note *parsed = NULL;

	ck_assert_int_eq(header_verify(bundle, certificates.data, certificates.len, note.data, note.len,
	                               &header, &signers),
	                 0);
	ck_assert_uint_eq(signers.count, 3);
	ck_assert_uint_eq(signers.pinned, 3);
	ck_assert_str_eq(
	    signers.names,
	    "authority1.dirauth.example, authority2.dirauth.example, authority3.dirauth.example");
	ck_assert_str_eq(header.namespace_name, NAMESPACE);
	ck_assert_str_eq(header.origin, ORIGIN);
	ck_assert_uint_eq(header.epoch, EPOCH);
	ck_assert_uint_eq(header.consensus_method, SNAPSHOT_CONSENSUS_METHOD);
	/* header.txt is the note's text: everything before the blank line, its last newline included. */
	ck_assert_int_eq(note_parse(note.data, note.len, &parsed), 0);
	ck_assert_uint_eq(parsed->text_len, text.len);
	ck_assert_int_eq(memcmp(parsed->text, text.data, text.len), 0);
	ck_assert_uint_eq(parsed->signature_count, 3);
	note_free(parsed);
	vector_free(&text);
	vector_free(&note);
	vector_free(&certificates);
	free(bundle);
}
END_TEST

START_TEST(test_previous_is_the_digest_of_the_previous_header_text)
{
	struct vector previous_note = vector_read("previous-header.note");
	struct vector previous_text = vector_read("previous-header.txt");
	struct vector note = vector_read("header.note");
	struct trust_bundle *bundle = bundle_read();
	struct vector certificates = vector_read("certificates.txt");
	struct certificate_keyring *ring = NULL;
	struct snapshot_header header, previous;
	struct verify_held held;
	struct verify_chain chain;
	struct note *parsed = NULL;
	uint8_t digest[32], zeros[32];
	char detail[VERIFY_DETAIL_MAX];
	int newer = 0;

	header_read_verified("header.note", &header);
	header_read_verified("previous-header.note", &previous);
	ck_assert_uint_eq(previous.epoch, EPOCH - 1);
	memset(zeros, 0, sizeof(zeros));
	ck_assert_int_eq(memcmp(previous.previous, zeros, sizeof(zeros)), 0);
	/* previous = SHA-256 of exactly the bytes of previous-header.txt: the text of the previous
	 * header note, without the blank line and the signature lines. */
	ck_assert_int_eq(crypto_sha256(previous_text.data, previous_text.len, digest), 0);
	ck_assert_int_eq(memcmp(header.previous, digest, 32), 0);
	ck_assert_int_eq(note_parse(previous_note.data, previous_note.len, &parsed), 0);
	ck_assert_uint_eq(parsed->text_len, previous_text.len);
	ck_assert_int_eq(memcmp(parsed->text, previous_text.data, previous_text.len), 0);
	note_free(parsed);
	/* Not the whole note: the signatures may grow, the digest may not. */
	ck_assert_int_eq(crypto_sha256(previous_note.data, previous_note.len, digest), 0);
	ck_assert_int_ne(memcmp(header.previous, digest, 32), 0);

	/* A mirror holding epoch 1 takes epoch 2 as its successor. */
	ck_assert_int_eq(
	    verify_held_parse(previous_note.data, previous_note.len, &held, detail, sizeof(detail)), 0);
	ck_assert_int_eq(memcmp(held.digest, header.previous, 32), 0);
	ck_assert_int_eq(
	    verify_history_compare(&held, note.data, note.len, &header, &newer, detail, sizeof(detail)), 0);
	ck_assert_int_eq(newer, 1);
	ck_assert_int_eq(verify_keyring_from_trust_bundle(bundle, certificates.data, certificates.len, &ring,
	                                                  NULL, detail, sizeof(detail)),
	                 0);
	struct verify_pins pins = {
	    .ring = ring, .threshold = bundle->threshold, .pinned_by = "the trust bundle"};
	ck_assert_int_eq(verify_chain_begin(&chain, &pins, &held, &header, 1024, detail, sizeof(detail)), 0);
	ck_assert_msg(verify_chain_finish(&chain, detail, sizeof(detail)) == 0, "%s", detail);
	verify_keyring_free(ring);
	vector_free(&certificates);
	free(bundle);
	vector_free(&note);
	vector_free(&previous_text);
	vector_free(&previous_note);
}
END_TEST

/* ---- header → body → records ---- */

START_TEST(test_body_matches_the_header)
{
	struct trust_bundle *bundle = bundle_read();
	struct vector body = vector_read("body.txt");
	struct vector previous_body = vector_read("previous-body.txt");
	static const char *const records[] = {"registration-a.note", "registration-b.note"};
	struct snapshot_header header, previous;
	struct snapshot_body *parsed = NULL;
	struct buffer decoded, encoded;
	char detail[VERIFY_DETAIL_MAX];

	buffer_init(&decoded);
	buffer_init(&encoded);
	header_read_verified("header.note", &header);
	header_read_verified("previous-header.note", &previous);
	ck_assert_msg(verify_snapshot_body(bundle, &header, "identity", body.data, body.len, &decoded, detail,
	                                   sizeof(detail)) == 0,
	              "%s", detail);
	ck_assert_int_eq(verify_snapshot_body(bundle, &previous, NULL, previous_body.data, previous_body.len,
	                                      &decoded, detail, sizeof(detail)),
	                 0);
	/* As served compressed, the same body. */
	for (int encoding = ENCODING_GZIP; encoding <= ENCODING_ZSTD; encoding++) {
		buffer_reset(&encoded);
		ck_assert_int_eq(
		    compress_encode((enum content_encoding)encoding, body.data, body.len, &encoded), 0);
		ck_assert_int_eq(verify_snapshot_body(
		                     bundle, &header, content_encoding_name((enum content_encoding)encoding),
		                     encoded.data, encoded.len, &decoded, detail, sizeof(detail)),
		                 0);
		ck_assert_uint_eq(decoded.len, body.len);
	}

	/* Its namespace, epoch and count are the header's; its records are the providers' notes. */
	ck_assert_uint_eq(header.body_size, body.len);
	ck_assert_int_eq(snapshot_body_parse(body.data, body.len, 16, &parsed), 0);
	ck_assert_str_eq(parsed->namespace_name, header.namespace_name);
	ck_assert_uint_eq(parsed->epoch, header.epoch);
	ck_assert_uint_eq(parsed->record_count, header.record_count);
	ck_assert_uint_eq(parsed->record_count, 2);
	for (size_t i = 0; i < 2; i++) {
		struct vector note = vector_read(records[i]);
		ck_assert_uint_eq(parsed->records[i].note_len, note.len);
		ck_assert_int_eq(memcmp(parsed->records[i].note, note.data, note.len), 0);
		vector_free(&note);
	}
	snapshot_body_free(parsed);
	buffer_free(&encoded);
	buffer_free(&decoded);
	vector_free(&previous_body);
	vector_free(&body);
	free(bundle);
}
END_TEST

/* leaf-hashes.txt: leaf i = SHA-256(0x00 || the bytes of record i's note), root as in the header. */
START_TEST(test_leaf_hashes)
{
	static const char *const records[] = {"registration-a.note", "registration-b.note"};
	struct vector leaves = vector_read("leaf-hashes.txt");
	struct snapshot_header header;
	merkle_hash hashes[2], root;
	struct buffer expected;
	char hex[65], root_hex[65];

	buffer_init(&expected);
	header_read_verified("header.note", &header);
	for (size_t i = 0; i < 2; i++) {
		struct vector note = vector_read(records[i]);
		struct registration registration;
		static const uint8_t leaf_prefix = 0x00;
		const uint8_t *parts[2] = {&leaf_prefix, note.data};
		size_t lengths[2] = {1, note.len};
		char service[65];
		/* By the definition, independently of merkle_leaf_hash, and then by it. */
		ck_assert_int_eq(crypto_sha256_parts(parts, lengths, 2, hashes[i]), 0);
		merkle_hash again;
		ck_assert_int_eq(merkle_leaf_hash(note.data, note.len, again), 0);
		ck_assert_int_eq(memcmp(again, hashes[i], 32), 0);
		ck_assert_int_eq(registration_parse_signed(note.data, note.len, &registration, NULL), 0);
		hex_encode(registration.service_id, SERVICE_ID_SIZE, service);
		hex_encode(hashes[i], 32, hex);
		ck_assert_int_eq(buffer_appendf(&expected, "leaf %zu %s %s\n", i, service, hex), 0);
		registration_clear(&registration);
		vector_free(&note);
	}
	/* Two leaves: the root is SHA-256(0x01 || leaf 0 || leaf 1). */
	ck_assert_int_eq(merkle_node_hash(hashes[0], hashes[1], root), 0);
	ck_assert_int_eq(memcmp(root, header.records_root, 32), 0);
	hex_encode(root, 32, root_hex);
	ck_assert_int_eq(buffer_appendf(&expected, "records-root %s\n", root_hex), 0);
	ck_assert_uint_eq(leaves.len, expected.len);
	ck_assert_int_eq(memcmp(leaves.data, expected.data, expected.len), 0);
	buffer_free(&expected);
	vector_free(&leaves);
}
END_TEST

START_TEST(test_records_are_signed_by_enrolled_providers)
{
	static const char *const records[] = {"registration-a.note", "registration-b.note"};
	static const char *const keys[] = {"provider-a.key", "provider-b.key"};
	struct snapshot_header header;
	struct settings_error error;
	struct config *config = NULL;

	header_read_verified("header.note", &header);
	ck_assert_int_eq(config_load(test_source_path("keys-example/dirauthd.yaml"), &config, &error), 0);
	int mix = config_namespace_index(config, NAMESPACE, strlen(NAMESPACE));
	ck_assert_int_ge(mix, 0);
	for (size_t i = 0; i < 2; i++) {
		struct vector note = vector_read(records[i]);
		struct signer_key *provider = example_key(keys[i]);
		struct registration registration;
		struct note *parsed = NULL;

		ck_assert_int_eq(registration_parse_signed(note.data, note.len, &registration, &parsed), 0);
		/* Exactly one signature line, by the key of its own provider line. */
		ck_assert_uint_eq(parsed->signature_count, 1);
		ck_assert_str_eq(parsed->signatures[0].name, signer_key_verifier(provider)->name);
		ck_assert(note_verifier_equal(&registration.provider, signer_key_verifier(provider)));
		/* Enrolled in keys-example/dirauthd.yaml for this namespace and class. */
		const struct config_provider *enrolled = config_provider_find(config, &registration.provider);
		ck_assert_ptr_nonnull(enrolled);
		ck_assert(enrolled->namespace_mask & (1ULL << mix));
		ck_assert(enrolled->class_mask & (1U << registration.service_class));
		ck_assert_str_eq(registration.namespace_name, header.namespace_name);
		ck_assert_uint_gt(registration.expires, header.valid_after);
		note_free(parsed);
		registration_clear(&registration);
		signer_key_free(provider);
		vector_free(&note);
	}
	config_free(config);
}
END_TEST

/* ---- the receipt, and the promise kept ---- */

START_TEST(test_receipt_verifies_and_is_kept)
{
	struct trust_bundle *bundle = bundle_read();
	struct vector certificates = vector_read("certificates.txt");
	struct vector receipt = vector_read("receipt.note");
	struct vector registration_note = vector_read("registration-a.note");
	struct vector body = vector_read("body.txt");
	struct certificate_keyring *ring = NULL;
	struct ctl_register_result result;
	struct registration registration;
	struct snapshot_header header;
	struct snapshot_body *parsed = NULL;
	struct ctl_report report;
	uint8_t digest[32];
	char detail[VERIFY_DETAIL_MAX];
	int kept = 0;

	ctl_register_result_init(&result);
	ctl_report_init(&report);
	header_read_verified("header.note", &header);
	ck_assert_int_eq(crypto_sha256(registration_note.data, registration_note.len, digest), 0);
	ck_assert_int_eq(
	    registration_parse_signed(registration_note.data, registration_note.len, &registration, NULL), 0);
	ck_assert_int_eq(verify_keyring_from_trust_bundle(bundle, certificates.data, certificates.len, &ring,
	                                                  NULL, detail, sizeof(detail)),
	                 0);
	/* What dirauthctl register checks before it says "accepted". */
	ck_assert_msg(ctl_register_check_receipt(receipt.data, receipt.len, registration.namespace_name,
	                                         registration.service_id, registration.sequence, digest, ring,
	                                         &result, &report) == 0,
	              "%s", report.message);
	ck_assert_int_eq(result.receipt_verified, 1);
	ck_assert_str_eq(result.receipt_signer, "authority1.dirauth.example");
	ck_assert_uint_eq(result.receipt.publish_by_epoch, header.epoch);
	/* The snapshot of that epoch holds the very note the receipt names. */
	ck_assert_int_eq(snapshot_body_parse(body.data, body.len, 16, &parsed), 0);
	for (size_t i = 0; i < parsed->record_count; i++) {
		uint8_t record_digest[32];
		ck_assert_int_eq(
		    crypto_sha256(parsed->records[i].note, parsed->records[i].note_len, record_digest), 0);
		kept |= memcmp(record_digest, result.receipt.registration_digest, 32) == 0;
	}
	ck_assert(kept);
	snapshot_body_free(parsed);
	ctl_register_result_free(&result);
	registration_clear(&registration);
	verify_keyring_free(ring);
	vector_free(&body);
	vector_free(&registration_note);
	vector_free(&receipt);
	vector_free(&certificates);
	free(bundle);
}
END_TEST

/* ---- refusals ---- */

/* Any byte of the body changed: the body is not the one the header commits to. */
START_TEST(test_changed_body_byte_refused)
{
	struct trust_bundle *bundle = bundle_read();
	struct vector body = vector_read("body.txt");
	struct snapshot_header header;
	struct buffer decoded;
	char detail[VERIFY_DETAIL_MAX];
	/* The head's epoch, the last digit of the first record's length, a byte in the middle of
	 * the records, one of the last signature. */
	const char *epoch_line = strstr((const char *)body.data, "\nepoch ");
	const char *record_line = strstr((const char *)body.data, "\nrecord ");
	size_t offsets[4];

	ck_assert_ptr_nonnull(epoch_line);
	ck_assert_ptr_nonnull(record_line);
	offsets[0] = (size_t)(epoch_line - (const char *)body.data) + 7;
	offsets[1] = (size_t)(strchr(record_line + 1, '\n') - (const char *)body.data) - 1;
	offsets[2] = body.len / 2;
	offsets[3] = body.len - 2;
	buffer_init(&decoded);
	header_read_verified("header.note", &header);
	for (size_t i = 0; i < sizeof(offsets) / sizeof(offsets[0]); i++) {
		uint8_t saved = body.data[offsets[i]];
		body.data[offsets[i]] ^= 0x01;
		ck_assert_int_eq(verify_snapshot_body(bundle, &header, "identity", body.data, body.len,
		                                      &decoded, detail, sizeof(detail)),
		                 DIRAUTH_ERR_MISMATCH);
		ck_assert_str_eq(detail,
		                 "body: does not match the signed header (digest, size, count or root)");
		body.data[offsets[i]] = saved;
	}
	ck_assert_int_eq(verify_snapshot_body(bundle, &header, "identity", body.data, body.len, &decoded,
	                                      detail, sizeof(detail)),
	                 0);
	buffer_free(&decoded);
	vector_free(&body);
	free(bundle);
}
END_TEST

/* The header note without the signature lines of the authorities not in keep. */
static void header_with_signatures(const struct vector *note, const int keep[3], struct buffer *out)
{
	const char *split = strstr((const char *)note->data, "\n\n");
	ck_assert_ptr_nonnull(split);
	size_t text_end = (size_t)((const uint8_t *)split - note->data) + 2;
	ck_assert_int_eq(buffer_append(out, note->data, text_end), 0);
	for (int i = 0; i < 3; i++) {
		char prefix[128];
		snprintf(prefix, sizeof(prefix), "\xe2\x80\x94 %s ", authority_names[i]);
		const char *line = strstr((const char *)note->data + text_end, prefix);
		ck_assert_ptr_nonnull(line);
		const char *end = strchr(line, '\n');
		ck_assert_ptr_nonnull(end);
		if (keep[i])
			ck_assert_int_eq(buffer_append(out, line, (size_t)(end - line) + 1), 0);
	}
}

/* k = 2 of n = 3: any two signatures suffice; one alone is refused as too few. */
START_TEST(test_one_of_three_signatures_refused)
{
	struct trust_bundle *bundle = bundle_read();
	struct vector certificates = vector_read("certificates.txt");
	struct vector note = vector_read("header.note");
	static const int cases[][3] = {{1, 1, 0}, {1, 0, 1}, {0, 1, 1}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
	struct verify_signers signers;
	struct snapshot_header header;
	char detail[VERIFY_DETAIL_MAX];

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct buffer cut;
		int count = cases[c][0] + cases[c][1] + cases[c][2];
		buffer_init(&cut);
		header_with_signatures(&note, cases[c], &cut);
		int rc =
		    verify_snapshot_header(bundle, NAMESPACE, certificates.data, certificates.len, cut.data,
		                           cut.len, NOW, NULL, &header, &signers, detail, sizeof(detail));
		ck_assert_uint_eq(signers.count, (size_t)count);
		if (count >= 2) {
			ck_assert_int_eq(rc, 0);
		} else {
			ck_assert_int_eq(rc, DIRAUTH_ERR_THRESHOLD);
			ck_assert_ptr_nonnull(strstr(detail, "1 of 3 authorities"));
			ck_assert_ptr_nonnull(strstr(detail, "the trust bundle requires 2"));
		}
		buffer_free(&cut);
	}
	vector_free(&note);
	vector_free(&certificates);
	free(bundle);
}
END_TEST

/* Certificates for the genuine signing keys of authorities 2 and 3, but issued by identity keys
 * of those names that the bundle does not pin: they count for nothing, and one signature is left. */
START_TEST(test_certificate_by_unpinned_identity_refused)
{
	struct trust_bundle *bundle = bundle_read();
	struct vector genuine = vector_read("authority1.cert");
	struct vector note = vector_read("header.note");
	struct certificate_keyring *ring = NULL;
	struct buffer rogue[2], bundle_bytes;
	const uint8_t *notes[3];
	size_t lengths[3], added = 9;
	struct verify_signers signers;
	struct snapshot_header header;
	char detail[VERIFY_DETAIL_MAX];

	buffer_init(&bundle_bytes);
	notes[0] = genuine.data;
	lengths[0] = genuine.len;
	for (int i = 0; i < 2; i++) {
		char name[64];
		struct signer_key *impostor = NULL;
		struct certificate certificate;
		snprintf(name, sizeof(name), "authority%d.key", i + 2);
		struct signer_key *signing = example_key(name);
		ck_assert_int_eq(signer_key_generate(authority_names[i + 1], &impostor), 0);
		buffer_init(&rogue[i]);
		fixture_certificate(impostor, signing, 1767225600ULL, 1767225600ULL + 90 * 86400ULL,
		                    &rogue[i]);
		/* Well formed and signed by the identity it names: only the pin tells it apart. */
		ck_assert_int_eq(certificate_parse_signed(rogue[i].data, rogue[i].len, &certificate), 0);
		ck_assert(!note_verifier_equal(&certificate.identity, &bundle->authorities[i + 1]));
		notes[i + 1] = rogue[i].data;
		lengths[i + 1] = rogue[i].len;
		signer_key_free(signing);
		signer_key_free(impostor);
	}
	ck_assert_int_eq(certificate_bundle_encode(notes, lengths, 3, &bundle_bytes), 0);
	ck_assert_int_eq(verify_keyring_from_trust_bundle(bundle, bundle_bytes.data, bundle_bytes.len, &ring,
	                                                  &added, detail, sizeof(detail)),
	                 0);
	ck_assert_uint_eq(added, 1);
	ck_assert_int_eq(certificate_keyring_add(ring, rogue[0].data, rogue[0].len), DIRAUTH_ERR_UNKNOWN_KEY);
	verify_keyring_free(ring);
	ck_assert_int_eq(verify_snapshot_header(bundle, NAMESPACE, bundle_bytes.data, bundle_bytes.len,
	                                        note.data, note.len, NOW, NULL, &header, &signers, detail,
	                                        sizeof(detail)),
	                 DIRAUTH_ERR_THRESHOLD);
	ck_assert_uint_eq(signers.count, 1);
	ck_assert_str_eq(signers.names, "authority1.dirauth.example");
	buffer_free(&bundle_bytes);
	buffer_free(&rogue[0]);
	buffer_free(&rogue[1]);
	vector_free(&note);
	vector_free(&genuine);
	free(bundle);
}
END_TEST

/* A record carries exactly one signature: a second one, even a valid one, is refused. */
START_TEST(test_record_with_a_second_signature_refused)
{
	struct vector note = vector_read("registration-a.note");
	struct signer_key *other = example_key("provider-b.key");
	struct registration registration;
	struct note_signature signatures[2];
	struct note *parsed = NULL;
	struct buffer twice;

	buffer_init(&twice);
	ck_assert_int_eq(note_parse(note.data, note.len, &parsed), 0);
	signatures[0] = parsed->signatures[0];
	ck_assert_int_eq(signer_key_sign(other, parsed->text, parsed->text_len, &signatures[1]), 0);
	ck_assert_int_eq(note_format(parsed->text, parsed->text_len, signatures, 2, &twice), 0);
	ck_assert_int_eq(registration_parse_signed(twice.data, twice.len, &registration, NULL),
	                 DIRAUTH_ERR_SYNTAX);
	/* The provider's own line alone, repeated, is no better. */
	signatures[1] = parsed->signatures[0];
	buffer_reset(&twice);
	ck_assert_int_eq(note_format(parsed->text, parsed->text_len, signatures, 2, &twice), 0);
	ck_assert_int_eq(registration_parse_signed(twice.data, twice.len, &registration, NULL),
	                 DIRAUTH_ERR_SYNTAX);
	note_free(parsed);
	buffer_free(&twice);
	signer_key_free(other);
	vector_free(&note);
}
END_TEST

/* The body's own namespace, epoch and count must be the header's, even when its digest is. */
START_TEST(test_body_of_another_namespace_epoch_or_count_refused)
{
	struct vector body = vector_read("body.txt");
	struct snapshot_header header, changed;

	header_read_verified("header.note", &header);
	ck_assert_int_eq(snapshot_body_verify(&header, body.data, body.len, 16), 0);
	changed = header;
	changed.epoch = header.epoch + 1;
	ck_assert_int_eq(snapshot_body_verify(&changed, body.data, body.len, 16), DIRAUTH_ERR_MISMATCH);
	changed = header;
	snprintf(changed.namespace_name, sizeof(changed.namespace_name), "mail");
	ck_assert_int_eq(snapshot_body_verify(&changed, body.data, body.len, 16), DIRAUTH_ERR_MISMATCH);
	changed = header;
	changed.record_count = 1;
	ck_assert_int_eq(snapshot_body_verify(&changed, body.data, body.len, 16), DIRAUTH_ERR_MISMATCH);
	vector_free(&body);
}
END_TEST

/* ---- docs/formats.md shows these bytes ---- */

/*
 * Every fenced block of docs/formats.md is preceded by a marker line: `<!-- vector: PATH -->`
 * when it shows bytes, which must then be PATH's bytes from the start of one of its lines to the
 * end of one of its lines (the whole file, or a cut), or `<!-- grammar -->` when it shows a
 * template or commands, not bytes. And every 64-hex-digit value the page names is in a vector.
 */
START_TEST(test_docs_examples_are_vectors)
{
	size_t len, vectors = 0, line_start = 0;
	uint8_t *page = test_read_file(test_source_path("docs/formats.md"), &len);
	const char *text = (const char *)page;
	char marker[512] = "";

	while (line_start < len) {
		const char *line = text + line_start;
		const char *end = memchr(line, '\n', len - line_start);
		size_t line_len = end ? (size_t)(end - line) : len - line_start;
		size_t next = line_start + line_len + 1;
		if (line_len >= 3 && memcmp(line, "```", 3) == 0) {
			/* The block's content: up to the closing fence. */
			const char *close = strstr(text + next, "\n```");
			ck_assert_msg(close != NULL, "docs/formats.md: a block does not end");
			size_t content_len = (size_t)(close - (text + next)) + 1;
			const char *content = text + next;
			ck_assert_msg(marker[0] != '\0',
			              "docs/formats.md: the block at byte %zu has no marker line",
			              line_start);
			if (strncmp(marker, "<!-- vector: ", 13) == 0) {
				char path[256];
				size_t file_len, path_len = strlen(marker) - 13 - 4;
				ck_assert_msg(strcmp(marker + strlen(marker) - 4, " -->") == 0, "%s", marker);
				snprintf(path, sizeof(path), "%.*s", (int)path_len, marker + 13);
				uint8_t *file = test_read_file(test_source_path(path), &file_len);
				int found = 0;
				for (size_t at = 0; !found && at + content_len <= file_len; at++)
					found = (at == 0 || file[at - 1] == '\n') &&
					        memcmp(file + at, content, content_len) == 0;
				ck_assert_msg(found,
				              "docs/formats.md: the block at byte %zu is not cut from %s",
				              line_start, path);
				free(file);
				vectors++;
			} else {
				ck_assert_msg(strcmp(marker, "<!-- grammar -->") == 0, "docs/formats.md: %s",
				              marker);
			}
			next = (size_t)(close - text) + 1;
			next +=
			    (size_t)((const char *)memchr(text + next, '\n', len - next) - (text + next)) + 1;
			marker[0] = '\0';
		} else if (line_len > 0) {
			snprintf(marker, sizeof(marker), "%.*s", (int)line_len, line);
			if (strncmp(marker, "<!-- ", 5) != 0)
				marker[0] = '\0';
		}
		line_start = next;
	}
	/* The trust bundle, a certificate, both headers, the body, a record, the receipt, the leaf
	 * hashes at least. */
	ck_assert_uint_ge(vectors, 8);

	/* Every 64-hex value named on the page comes from the chain. */
	for (size_t i = 0; i + 64 <= len; i++) {
		size_t run = 0;
		while (i + run < len && strchr("0123456789abcdef", text[i + run]) != NULL &&
		       text[i + run] != 0)
			run++;
		if (run == 64 && (i == 0 || strchr("0123456789abcdefABCDEF", text[i - 1]) == NULL)) {
			int found = 0;
			for (size_t f = 0; !found && f < CHAIN_FILE_COUNT; f++) {
				struct vector v = vector_read(chain_files[f]);
				for (size_t at = 0; !found && at + 64 <= v.len; at++)
					found = memcmp(v.data + at, text + i, 64) == 0;
				vector_free(&v);
			}
			ck_assert_msg(found, "docs/formats.md: %.64s is in no file of " CHAIN_DIR, text + i);
		}
		if (run > 0)
			i += run - 1;
	}
	free(page);
}
END_TEST

static Suite *example_chain_suite(void)
{
	Suite *s = suite_create("example_chain");
	TCase *tc = tcase_create("chain");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_generator_writes_the_vectors);
	tcase_add_test(tc, test_sums);
	tcase_add_test(tc, test_trust_bundle_pins_the_identity_keys);
	tcase_add_test(tc, test_certificates_link_identities_to_signing_keys);
	tcase_add_test(tc, test_header_verifies_with_certified_signatures);
	tcase_add_test(tc, test_previous_is_the_digest_of_the_previous_header_text);
	tcase_add_test(tc, test_body_matches_the_header);
	tcase_add_test(tc, test_leaf_hashes);
	tcase_add_test(tc, test_records_are_signed_by_enrolled_providers);
	tcase_add_test(tc, test_receipt_verifies_and_is_kept);
	tcase_add_test(tc, test_changed_body_byte_refused);
	tcase_add_test(tc, test_one_of_three_signatures_refused);
	tcase_add_test(tc, test_certificate_by_unpinned_identity_refused);
	tcase_add_test(tc, test_record_with_a_second_signature_refused);
	tcase_add_test(tc, test_body_of_another_namespace_epoch_or_count_refused);
	tcase_add_test(tc, test_docs_examples_are_vectors);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *runner = srunner_create(example_chain_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
