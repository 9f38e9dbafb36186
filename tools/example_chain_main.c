/*
 * example_chain_main.c: dirauth-example-chain, the generator of the published example chain
 * (tests/vectors/chain/, shown in docs/formats.md).
 *
 *   usage: dirauth-example-chain KEYS_EXAMPLE_DIR OUT_DIR
 *
 * The chain is what a mirror of three authorities with threshold 2 believes, link by link: the
 * trust bundle pins the three identity keys; each identity key certifies its authority's signing
 * key; the three signing keys co-sign the snapshot header of epoch 2, whose `previous` is the
 * digest of the header of epoch 1; the header commits to its body; the body holds the two
 * example providers' registrations, each signed by its provider; and authority 1's receipt
 * promises provider A's registration for epoch 2. tests/unit/check_example_chain.c checks every
 * link of the files written here with the project's own verifiers, and that this program writes
 * the same bytes again.
 *
 * Everything is fixed so that every run writes the same bytes: the keys are the files of
 * keys-example/ (Ed25519 signatures are deterministic), the registrations are built from
 * keys-example/service-a.yaml and service-b.yaml by dirauthctl's own code at fixed times, the
 * certificates are issued by dirauthctl's own code for a fixed window, and the epochs follow a
 * fixed schedule (below). The private keys are published: nothing here is a secret, and nothing
 * signed here may be trusted outside a demo or a test.
 *
 * Git does not keep a file's mode, and signer_key_load refuses a key file that others may read,
 * so each key file is first copied into a private directory (0700, files 0600), as
 * scripts/example-keys.sh does, and loaded from there. The files are written only once all of
 * them are built, each replaced atomically. Exit status: 0; 64 for a usage error; 1 otherwise,
 * with one line on stderr.
 */
#include "ctl/certify.h"
#include "ctl/files.h"
#include "ctl/register.h"
#include "ctl/report.h"
#include "ctl/service_file.h"
#include "base/buffer.h"
#include "schema/certificate.h"
#include "crypto/crypto.h"
#include "schema/encoding.h"
#include "base/error.h"
#include "crypto/merkle.h"
#include "schema/note.h"
#include "schema/receipt.h"
#include "schedule/schedule.h"
#include "schema/snapshot.h"
#include "schema/trust_bundle.h"
#include "signer/key.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROGRAM "dirauth-example-chain"

/* The namespace and its log origin, as in keys-example/dirauthd.yaml. */
#define CHAIN_NAMESPACE "mix"
#define CHAIN_ORIGIN    "dirauth.example/mix"

/* The schedule: 60-second epochs from 2026-01-01 00:00:00 UTC, snapshots usable for 3 epochs,
 * each prepared in the last 20 seconds of the epoch before (10 s of votes, 10 s of signatures). */
#define CHAIN_GENESIS         1767225600ULL
#define CHAIN_EPOCH_LENGTH    60ULL
#define CHAIN_VALIDITY_EPOCHS 3ULL
#define CHAIN_PREPARE         20ULL
#define CHAIN_VOTE            10ULL
#define CHAIN_SIGNATURE       10ULL

/* Every signing key is certified for 90 days from the genesis. */
#define CHAIN_CERTIFICATE_AFTER CHAIN_GENESIS
#define CHAIN_CERTIFICATE_DAYS  90ULL

/* When each provider registered (15 and 20 seconds into epoch 1, before the cut-off of epoch 2),
 * and so the sequence of each registration (the service files leave it to the clock). Authority 1
 * accepted provider A's registration at once. */
#define CHAIN_REGISTERED_A (CHAIN_GENESIS + 75ULL)
#define CHAIN_REGISTERED_B (CHAIN_GENESIS + 80ULL)

/* The snapshots: epoch 1 is the first (empty), epoch 2 holds both registrations. */
#define CHAIN_PREVIOUS_EPOCH 1ULL
#define CHAIN_EPOCH          2ULL

#define CHAIN_AUTHORITIES 3
#define CHAIN_THRESHOLD   2

enum chain_file {
	FILE_TRUST_BUNDLE,
	FILE_CERTIFICATE_1,
	FILE_CERTIFICATE_2,
	FILE_CERTIFICATE_3,
	FILE_CERTIFICATES,
	FILE_REGISTRATION_A,
	FILE_REGISTRATION_B,
	FILE_PREVIOUS_HEADER_TEXT,
	FILE_PREVIOUS_HEADER,
	FILE_PREVIOUS_BODY,
	FILE_HEADER_TEXT,
	FILE_HEADER,
	FILE_BODY,
	FILE_LEAF_HASHES,
	FILE_RECEIPT,
	FILE_SHA256SUMS,
	FILE_COUNT
};

/* The names of the files written, in the order of SHA256SUMS. */
static const char *const chain_file_names[FILE_COUNT] = {
    [FILE_TRUST_BUNDLE] = "trust-bundle.txt",
    [FILE_CERTIFICATE_1] = "authority1.cert",
    [FILE_CERTIFICATE_2] = "authority2.cert",
    [FILE_CERTIFICATE_3] = "authority3.cert",
    [FILE_CERTIFICATES] = "certificates.txt",
    [FILE_REGISTRATION_A] = "registration-a.note",
    [FILE_REGISTRATION_B] = "registration-b.note",
    [FILE_PREVIOUS_HEADER_TEXT] = "previous-header.txt",
    [FILE_PREVIOUS_HEADER] = "previous-header.note",
    [FILE_PREVIOUS_BODY] = "previous-body.txt",
    [FILE_HEADER_TEXT] = "header.txt",
    [FILE_HEADER] = "header.note",
    [FILE_BODY] = "body.txt",
    [FILE_LEAF_HASHES] = "leaf-hashes.txt",
    [FILE_RECEIPT] = "receipt.note",
    [FILE_SHA256SUMS] = "SHA256SUMS",
};

/* What the chain is built from, and what it becomes. */
struct chain {
	const char *keys_dir;       /* keys-example/ */
	char private_dir[PATH_MAX]; /* the 0700 copy of the keys being loaded */
	struct signer_key *identity[CHAIN_AUTHORITIES];
	struct signer_key *signing[CHAIN_AUTHORITIES];
	struct signer_key *provider_a;
	struct signer_key *provider_b;
	struct epoch_schedule schedule;
	struct buffer files[FILE_COUNT];
};

/* The one line of a failure, "dirauth-example-chain: <what>". Returns DIRAUTH_ERR_INTERNAL for
 * a caller that has no error code of its own to return. */
static int fail(const char *format, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *format, ...)
{
	va_list args;
	fprintf(stderr, "%s: ", PROGRAM);
	va_start(args, format);
	vfprintf(stderr, format, args);
	va_end(args);
	fputc('\n', stderr);
	return DIRAUTH_ERR_INTERNAL;
}

/* Loads keys_dir/name through a 0600 copy in the private directory. */
static int load_key(struct chain *chain, const char *name, struct signer_key **out)
{
	char from[PATH_MAX], copy[PATH_MAX];
	uint8_t *data = NULL;
	size_t len = 0;
	int rc;

	*out = NULL;
	if (snprintf(from, sizeof(from), "%s/%s", chain->keys_dir, name) >= (int)sizeof(from) ||
	    snprintf(copy, sizeof(copy), "%s/%s", chain->private_dir, name) >= (int)sizeof(copy))
		return fail("%s: path too long", name);
	rc = ctl_file_read(from, 4096, &data, &len);
	if (rc != 0) {
		fail("%s: cannot read: %s", from, dirauth_strerror(rc));
		return rc;
	}
	rc = ctl_file_create(copy, data, len, 0600);
	free(data);
	if (rc == 0)
		rc = signer_key_load(copy, out);
	unlink(copy);
	if (rc != 0)
		fail("%s: cannot load the key: %s", from, dirauth_strerror(rc));
	return rc;
}

static int load_keys(struct chain *chain)
{
	char name[64];
	int rc = 0;

	for (int i = 0; rc == 0 && i < CHAIN_AUTHORITIES; i++) {
		snprintf(name, sizeof(name), "authority%d-identity.key", i + 1);
		rc = load_key(chain, name, &chain->identity[i]);
		snprintf(name, sizeof(name), "authority%d.key", i + 1);
		if (rc == 0)
			rc = load_key(chain, name, &chain->signing[i]);
	}
	if (rc == 0)
		rc = load_key(chain, "provider-a.key", &chain->provider_a);
	if (rc == 0)
		rc = load_key(chain, "provider-b.key", &chain->provider_b);
	return rc;
}

/* The bundle a mirror of the three authorities pins. It is parsed back before it is kept. */
static int build_trust_bundle(struct chain *chain)
{
	struct buffer *out = &chain->files[FILE_TRUST_BUNDLE];
	struct trust_bundle *parsed;
	char verifier[NOTE_VERIFIER_KEY_MAX + 1];
	int rc;

	rc = buffer_append_string(
	    out, "dirauth trust v1\n"
	         "# EXAMPLE trust bundle of the example chain (tests/vectors/chain/README.md): NOT FOR\n"
	         "# PRODUCTION. It pins the IDENTITY keys of the three example authorities, whose\n"
	         "# private keys are published in keys-example/, so it proves nothing outside a demo\n"
	         "# or a test. A snapshot needs the signatures of two of the three.\n"
	         "namespace " CHAIN_NAMESPACE " " CHAIN_ORIGIN "\n");
	for (int i = 0; rc == 0 && i < CHAIN_AUTHORITIES; i++) {
		note_verifier_format(signer_key_verifier(chain->identity[i]), verifier);
		rc = buffer_appendf(out, "authority %s\n", verifier);
	}
	if (rc == 0)
		rc = buffer_appendf(out, "threshold %d\n", CHAIN_THRESHOLD);
	if (rc != 0)
		return fail("trust bundle: %s", dirauth_strerror(rc));
	parsed = malloc(sizeof(*parsed));
	if (parsed == NULL)
		return fail("out of memory");
	rc = trust_bundle_parse(out->data, out->len, parsed, NULL);
	free(parsed);
	if (rc != 0)
		fail("trust bundle: does not parse: %s", dirauth_strerror(rc));
	return rc;
}

/* Each identity key certifies its authority's signing key, then the bundle of the three. */
static int build_certificates(struct chain *chain)
{
	const uint8_t *notes[CHAIN_AUTHORITIES];
	size_t lengths[CHAIN_AUTHORITIES];
	struct certificate certificate;
	struct ctl_report report;
	int rc = 0;

	ctl_report_init(&report);
	for (int i = 0; rc == 0 && i < CHAIN_AUTHORITIES; i++) {
		struct buffer *note = &chain->files[FILE_CERTIFICATE_1 + i];
		rc = ctl_certificate_issue("certify", chain->identity[i],
		                           signer_key_verifier(chain->signing[i]), CHAIN_CERTIFICATE_AFTER,
		                           CHAIN_CERTIFICATE_AFTER +
		                               CHAIN_CERTIFICATE_DAYS * CTL_CERTIFY_DAY_SECONDS,
		                           &certificate, note, &report);
		notes[i] = note->data;
		lengths[i] = note->len;
	}
	if (rc == 0)
		rc = certificate_bundle_encode(notes, lengths, CHAIN_AUTHORITIES,
		                               &chain->files[FILE_CERTIFICATES]);
	if (rc != 0)
		fail("certificates: %s", ctl_report_failed(&report) ? report.message : dirauth_strerror(rc));
	return rc;
}

/* What dirauthctl register signs for the service file keys_dir/service_name at time now. */
static int build_registration(struct chain *chain, const char *service_name, const struct signer_key *key,
                              uint64_t now, struct buffer *note, uint64_t *sequence)
{
	char path[PATH_MAX], error[CTL_SERVICE_FILE_ERROR_MAX];
	struct ctl_service_file file;
	struct ctl_report report;
	uint8_t *data = NULL;
	size_t len = 0;
	int rc;

	memset(&file, 0, sizeof(file));
	ctl_report_init(&report);
	if (snprintf(path, sizeof(path), "%s/%s", chain->keys_dir, service_name) >= (int)sizeof(path))
		return fail("%s: path too long", service_name);
	rc = ctl_file_read(path, CTL_SERVICE_FILE_MAX_BYTES, &data, &len);
	if (rc != 0) {
		fail("%s: cannot read: %s", path, dirauth_strerror(rc));
		return rc;
	}
	rc = ctl_service_file_parse(data, len, path, &file, error, sizeof(error));
	free(data);
	if (rc != 0) {
		fail("%s", error);
		return rc;
	}
	rc = ctl_register_build(key, &file, now, note, sequence, &report);
	if (rc != 0)
		fail("%s: %s", path, report.message);
	ctl_service_file_clear(&file);
	return rc;
}

/* Appends text signed by the three signing keys, in the order of the authorities. */
static int sign_by_authorities(const struct chain *chain, const struct buffer *text, struct buffer *out)
{
	struct note_signature signatures[CHAIN_AUTHORITIES];
	int rc = 0;

	memset(signatures, 0, sizeof(signatures));
	for (int i = 0; rc == 0 && i < CHAIN_AUTHORITIES; i++)
		rc = signer_key_sign(chain->signing[i], text->data, text->len, &signatures[i]);
	if (rc == 0)
		rc = note_format(text->data, text->len, signatures, CHAIN_AUTHORITIES, out);
	return rc;
}

/*
 * The snapshot of epoch over records (sorted by service id): its body, its header text and the
 * header co-signed by the three authorities. previous is the digest of the header before it.
 */
static int build_snapshot(struct chain *chain, uint64_t epoch, const struct snapshot_record *records,
                          size_t record_count, const uint8_t previous[32], struct buffer *body,
                          struct buffer *text, struct buffer *note)
{
	struct snapshot_header header;
	struct epoch_times times;
	int rc;

	memset(&header, 0, sizeof(header));
	snprintf(header.namespace_name, sizeof(header.namespace_name), "%s", CHAIN_NAMESPACE);
	snprintf(header.origin, sizeof(header.origin), "%s", CHAIN_ORIGIN);
	header.epoch = epoch;
	header.record_count = record_count;
	header.consensus_method = SNAPSHOT_CONSENSUS_METHOD;
	memcpy(header.previous, previous, sizeof(header.previous));
	if ((rc = schedule_epoch_times(&chain->schedule, epoch, &times)) != 0 ||
	    (rc = snapshot_body_encode(CHAIN_NAMESPACE, epoch, records, record_count, body)) != 0 ||
	    (rc = crypto_sha256(body->data, body->len, header.body_sha256)) != 0 ||
	    (rc = snapshot_records_root(records, record_count, header.records_root)) != 0)
		return fail("snapshot of epoch %llu: %s", (unsigned long long)epoch, dirauth_strerror(rc));
	header.valid_after = times.valid_after;
	header.fresh_until = times.fresh_until;
	header.valid_until = times.valid_until;
	header.body_size = body->len;
	if ((rc = snapshot_header_encode(&header, text)) != 0 ||
	    (rc = sign_by_authorities(chain, text, note)) != 0)
		return fail("header of epoch %llu: %s", (unsigned long long)epoch, dirauth_strerror(rc));
	return 0;
}

static int build_snapshots(struct chain *chain)
{
	struct snapshot_record records[2];
	const struct buffer *notes[2] = {&chain->files[FILE_REGISTRATION_A],
	                                 &chain->files[FILE_REGISTRATION_B]};
	uint8_t zeros[32], previous[32];
	int rc;

	memset(zeros, 0, sizeof(zeros));
	rc = build_snapshot(chain, CHAIN_PREVIOUS_EPOCH, NULL, 0, zeros, &chain->files[FILE_PREVIOUS_BODY],
	                    &chain->files[FILE_PREVIOUS_HEADER_TEXT], &chain->files[FILE_PREVIOUS_HEADER]);
	if (rc != 0)
		return rc;
	/* `previous`: the SHA-256 of the previous header's text, without its signature lines. */
	rc = snapshot_header_digest(chain->files[FILE_PREVIOUS_HEADER_TEXT].data,
	                            chain->files[FILE_PREVIOUS_HEADER_TEXT].len, previous);
	if (rc != 0)
		return fail("previous header: %s", dirauth_strerror(rc));
	/* Service 5a00… (provider A) sorts before 5b00… (provider B). */
	for (size_t i = 0; i < 2; i++) {
		struct registration registration;
		rc = registration_parse_signed(notes[i]->data, notes[i]->len, &registration, NULL);
		if (rc != 0)
			return fail("registration %zu: %s", i, dirauth_strerror(rc));
		memcpy(records[i].service_id, registration.service_id, SERVICE_ID_SIZE);
		records[i].note = notes[i]->data;
		records[i].note_len = notes[i]->len;
		registration_clear(&registration);
	}
	return build_snapshot(chain, CHAIN_EPOCH, records, 2, previous, &chain->files[FILE_BODY],
	                      &chain->files[FILE_HEADER_TEXT], &chain->files[FILE_HEADER]);
}

/* "leaf <i> <service id> <leaf hash>" per record of the body, then "records-root <root>". */
static int build_leaf_hashes(struct chain *chain)
{
	const struct buffer *body = &chain->files[FILE_BODY];
	struct buffer *out = &chain->files[FILE_LEAF_HASHES];
	struct snapshot_body *parsed = NULL;
	merkle_hash root;
	char hex[2 * 32 + 1], service[2 * SERVICE_ID_SIZE + 1];
	int rc;

	rc = snapshot_body_parse(body->data, body->len, 16, &parsed);
	if (rc == 0)
		rc = snapshot_records_root(parsed->records, parsed->record_count, root);
	for (size_t i = 0; rc == 0 && i < parsed->record_count; i++) {
		merkle_hash leaf;
		rc = merkle_leaf_hash(parsed->records[i].note, parsed->records[i].note_len, leaf);
		hex_encode(leaf, sizeof(leaf), hex);
		hex_encode(parsed->records[i].service_id, SERVICE_ID_SIZE, service);
		if (rc == 0)
			rc = buffer_appendf(out, "leaf %zu %s %s\n", i, service, hex);
	}
	hex_encode(root, sizeof(root), hex);
	if (rc == 0)
		rc = buffer_appendf(out, "records-root %s\n", hex);
	snapshot_body_free(parsed);
	if (rc != 0)
		fail("leaf hashes: %s", dirauth_strerror(rc));
	return rc;
}

/* Authority 1's receipt for provider A's registration, as its intake writes it. */
static int build_receipt(struct chain *chain)
{
	const struct buffer *note = &chain->files[FILE_REGISTRATION_A];
	struct note_signature signature;
	struct registration registration;
	struct receipt receipt;
	struct buffer text;
	int rc;

	memset(&receipt, 0, sizeof(receipt));
	memset(&signature, 0, sizeof(signature));
	buffer_init(&text);
	rc = registration_parse_signed(note->data, note->len, &registration, NULL);
	if (rc != 0)
		return fail("registration-a: %s", dirauth_strerror(rc));
	snprintf(receipt.authority, sizeof(receipt.authority), "%s",
	         signer_key_verifier(chain->signing[0])->name);
	snprintf(receipt.namespace_name, sizeof(receipt.namespace_name), "%s", registration.namespace_name);
	memcpy(receipt.service_id, registration.service_id, SERVICE_ID_SIZE);
	receipt.sequence = registration.sequence;
	receipt.accepted_at = CHAIN_REGISTERED_A;
	receipt.publish_by_epoch = schedule_destination_epoch(&chain->schedule, CHAIN_REGISTERED_A);
	registration_clear(&registration);
	if (receipt.publish_by_epoch != CHAIN_EPOCH)
		return fail("receipt: the registration is due in epoch %llu, not in the example's",
		            (unsigned long long)receipt.publish_by_epoch);
	if ((rc = crypto_sha256(note->data, note->len, receipt.registration_digest)) != 0 ||
	    (rc = receipt_encode(&receipt, &text)) != 0 ||
	    (rc = signer_key_sign(chain->signing[0], text.data, text.len, &signature)) != 0 ||
	    (rc = note_format(text.data, text.len, &signature, 1, &chain->files[FILE_RECEIPT])) != 0)
		fail("receipt: %s", dirauth_strerror(rc));
	buffer_free(&text);
	return rc;
}

/* sha256sum's format: "<hex>  <name>" for every other file. */
static int build_sums(struct chain *chain)
{
	char hex[2 * CRYPTO_SHA256_SIZE + 1];
	uint8_t digest[CRYPTO_SHA256_SIZE];
	int rc = 0;

	for (int i = 0; rc == 0 && i < FILE_SHA256SUMS; i++) {
		rc = crypto_sha256(chain->files[i].data, chain->files[i].len, digest);
		hex_encode(digest, sizeof(digest), hex);
		if (rc == 0)
			rc = buffer_appendf(&chain->files[FILE_SHA256SUMS], "%s  %s\n", hex,
			                    chain_file_names[i]);
	}
	if (rc != 0)
		fail("SHA256SUMS: %s", dirauth_strerror(rc));
	return rc;
}

static int build(struct chain *chain)
{
	uint64_t sequence_a = 0, sequence_b = 0;
	int rc;

	if ((rc = load_keys(chain)) != 0 || (rc = build_trust_bundle(chain)) != 0 ||
	    (rc = build_certificates(chain)) != 0)
		return rc;
	rc = build_registration(chain, "service-a.yaml", chain->provider_a, CHAIN_REGISTERED_A,
	                        &chain->files[FILE_REGISTRATION_A], &sequence_a);
	if (rc == 0)
		rc = build_registration(chain, "service-b.yaml", chain->provider_b, CHAIN_REGISTERED_B,
		                        &chain->files[FILE_REGISTRATION_B], &sequence_b);
	if (rc == 0)
		rc = build_snapshots(chain);
	if (rc == 0)
		rc = build_leaf_hashes(chain);
	if (rc == 0)
		rc = build_receipt(chain);
	if (rc == 0)
		rc = build_sums(chain);
	return rc;
}

static int write_files(const struct chain *chain, const char *out_dir)
{
	int rc = ctl_directory_create(out_dir);
	if (rc != 0) {
		fail("%s: cannot create: %s", out_dir, dirauth_strerror(rc));
		return rc;
	}
	for (int i = 0; i < FILE_COUNT; i++) {
		rc = ctl_file_write_atomic(out_dir, chain_file_names[i], chain->files[i].data,
		                           chain->files[i].len);
		if (rc != 0) {
			fail("%s/%s: cannot write: %s", out_dir, chain_file_names[i], dirauth_strerror(rc));
			return rc;
		}
	}
	return 0;
}

static void chain_free(struct chain *chain)
{
	for (int i = 0; i < CHAIN_AUTHORITIES; i++) {
		signer_key_free(chain->identity[i]);
		signer_key_free(chain->signing[i]);
	}
	signer_key_free(chain->provider_a);
	signer_key_free(chain->provider_b);
	for (int i = 0; i < FILE_COUNT; i++)
		buffer_free(&chain->files[i]);
	if (chain->private_dir[0] != '\0')
		rmdir(chain->private_dir);
}

int main(int argc, char **argv)
{
	struct chain chain;
	const char *tmp = getenv("TMPDIR");
	int rc;

	if (argc != 3) {
		fprintf(stderr, "usage: %s KEYS_EXAMPLE_DIR OUT_DIR\n", PROGRAM);
		return 64;
	}
	memset(&chain, 0, sizeof(chain));
	for (int i = 0; i < FILE_COUNT; i++)
		buffer_init(&chain.files[i]);
	chain.keys_dir = argv[1];
	chain.schedule.genesis = CHAIN_GENESIS;
	chain.schedule.length = CHAIN_EPOCH_LENGTH;
	chain.schedule.validity_epochs = CHAIN_VALIDITY_EPOCHS;
	chain.schedule.prepare = CHAIN_PREPARE;
	chain.schedule.vote = CHAIN_VOTE;
	chain.schedule.signature = CHAIN_SIGNATURE;
	if (schedule_check(&chain.schedule) != 0) {
		fail("the schedule is not valid");
		return 1;
	}
	snprintf(chain.private_dir, sizeof(chain.private_dir), "%s/%s.XXXXXX",
	         tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp", PROGRAM);
	if (mkdtemp(chain.private_dir) == NULL) {
		fail("cannot create a private directory for the keys");
		chain.private_dir[0] = '\0';
		return 1;
	}
	rc = build(&chain);
	if (rc == 0)
		rc = write_files(&chain, argv[2]);
	chain_free(&chain);
	return rc == 0 ? 0 : 1;
}
