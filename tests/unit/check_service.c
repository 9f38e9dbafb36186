/*
 * check_service.c: the signer's policy (signer/service.c), driven directly.
 *
 * Each test builds a key directory with freshly generated keys (signing and identity keys of
 * the authority, a log key and a cosignature key), issues a real certificate with the identity
 * key, opens the service on a real ledger with a test clock, and hands it requests as the
 * listener would. Every operation is checked for what it returns (signatures verified with
 * the public keys, payloads parsed) and every refusal for its error: the wrong kind of text for
 * each operation, statements for another authority, a checkpoint for another log, an operation
 * whose key is not configured, certificates that are expired, not yet valid, for another key
 * or another authority, unsafe key file and directory modes, a clock that cannot be read (a
 * file clock whose file is missing). The signer's own epoch schedules: a vote or header only
 * for a current epoch of its origin (an epoch far ahead is refused and spends nothing of the
 * ledger), a header's times exactly its epoch's, statements of namespaces and origins the
 * configuration does not name refused, a receipt's promise and a checkpoint's size bounded by
 * the epochs begun. The operation table: every operation of the protocol is answered by its
 * row. The audit log is read back: one line per signature and refusal, and no secret in it.
 */
#define _GNU_SOURCE /* memmem */
#include "test_support.h"

#include "clock/clock.h"
#include "base/buffer.h"
#include "schema/certificate.h"
#include "schema/checkpoint.h"
#include "schema/deregistration_receipt.h"
#include "schema/encoding.h"
#include "base/error.h"
#include "signer/key.h"
#include "crypto/merkle.h"
#include "schema/note.h"
#include "schema/receipt.h"
#include "schedule/schedule.h"
#include "signer/service.h"
#include "signer_protocol/signer_protocol.h"
#include "schema/snapshot.h"
#include "schema/vote.h"

#include <check.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define AUTHORITY      "authority1.dirauth.example"
#define LOG_ORIGIN     "dirauth.example/mix"
#define MAIL_ORIGIN    "dirauth.example/mail"
#define FUTURE_ORIGIN  "dirauth.example/future"
#define COSIGNER       "authority1.dirauth.example/cosigner"
#define NOW            1800000000ULL
#define CERT_AFTER     (NOW - 86400)
#define CERT_UNTIL     (NOW + 30 * 86400)
#define LEAVES         32
#define LENGTH         60ULL
/* mix: genesis 0, so the epoch that begins at NOW is NOW / LENGTH; E(k) is k epochs after it. */
#define E(k)           ((uint64_t)((int64_t)(NOW / LENGTH) + (k)))
#define MAIL_GENESIS   (NOW - 5 * LENGTH) /* mail's epoch 5 begins at NOW */
#define FUTURE_GENESIS (NOW + 86400)      /* no epoch of "future" has begun */

static char dir[512];
static char key_dir[600];
static char signing_path[700], identity_path[700], log_path[700], cosign_path[700];
static char cert_path[700], cert2_path[700], ledger_path[700], audit_path[700];
static struct signer_key *identity_key;
static struct note_verifier signing_verifier, log_verifier, cosign_plain_verifier;
static uint64_t now_value;
static int clock_error;          /* when set, the clock fails with it */
static struct clock *file_clock; /* when set, the clock reads this file clock */
static FILE *audit;
static struct signer_service *service;
static struct buffer payload;
static merkle_hash leaves[LEAVES];

static int test_now(void *context, uint64_t *now)
{
	if (clock_error)
		return clock_error;
	if (file_clock)
		return clock_now(file_clock, now);
	*now = *(const uint64_t *)context;
	return 0;
}

static const struct signer_namespace test_namespaces[] = {
    {.name = "mix", .origin = LOG_ORIGIN, .schedule = {.genesis = 0, .length = LENGTH, .validity_epochs = 3}},
    {.name = "mail",
     .origin = MAIL_ORIGIN,
     .schedule = {.genesis = MAIL_GENESIS, .length = LENGTH, .validity_epochs = 3}},
    {.name = "future",
     .origin = FUTURE_ORIGIN,
     .schedule = {.genesis = FUTURE_GENESIS, .length = LENGTH, .validity_epochs = 3}},
};

static const struct epoch_schedule *schedule_of(const char *origin)
{
	for (size_t i = 0; i < sizeof(test_namespaces) / sizeof(test_namespaces[0]); i++)
		if (strcmp(test_namespaces[i].origin, origin) == 0)
			return &test_namespaces[i].schedule;
	return &test_namespaces[0].schedule;
}

static const char *namespace_of(const char *origin)
{
	for (size_t i = 0; i < sizeof(test_namespaces) / sizeof(test_namespaces[0]); i++)
		if (strcmp(test_namespaces[i].origin, origin) == 0)
			return test_namespaces[i].name;
	return "mix";
}

static void save_new_key(const char *name, const char *path, struct note_verifier *verifier,
                         struct signer_key **keep)
{
	struct signer_key *key = NULL;
	ck_assert_int_eq(signer_key_generate(name, &key), 0);
	ck_assert_int_eq(signer_key_save(key, path), 0);
	if (verifier)
		*verifier = *signer_key_verifier(key);
	if (keep)
		*keep = key;
	else
		signer_key_free(key);
}

/* Writes a certificate for signing (under authority, window [after, until)) signed by identity. */
static void issue_certificate(const char *path, const char *authority, const struct note_verifier *signing,
                              struct signer_key *identity, uint64_t after, uint64_t until)
{
	struct certificate c;
	struct buffer text, note;
	struct note_signature signature;

	memset(&c, 0, sizeof(c));
	snprintf(c.authority, sizeof(c.authority), "%s", authority);
	c.identity = *signer_key_verifier(identity);
	c.signing_key = *signing;
	c.valid_after = after;
	c.valid_until = until;
	buffer_init(&text);
	buffer_init(&note);
	ck_assert_int_eq(certificate_encode(&c, &text), 0);
	ck_assert_int_eq(signer_key_sign(identity, text.data, text.len, &signature), 0);
	ck_assert_int_eq(note_format(text.data, text.len, &signature, 1, &note), 0);
	test_write_file(path, note.data, note.len, 0644);
	buffer_free(&text);
	buffer_free(&note);
}

static void setup(void)
{
	test_make_tempdir(dir, sizeof(dir));
	snprintf(key_dir, sizeof(key_dir), "%s/keys", dir);
	ck_assert_int_eq(mkdir(key_dir, 0700), 0);
	snprintf(signing_path, sizeof(signing_path), "%s/signing.key", key_dir);
	snprintf(identity_path, sizeof(identity_path), "%s/identity.key", key_dir);
	snprintf(log_path, sizeof(log_path), "%s/log.key", key_dir);
	snprintf(cosign_path, sizeof(cosign_path), "%s/cosignature.key", key_dir);
	snprintf(cert_path, sizeof(cert_path), "%s/signing.cert", dir);
	snprintf(cert2_path, sizeof(cert2_path), "%s/previous.cert", dir);
	snprintf(ledger_path, sizeof(ledger_path), "%s/ledger", dir);
	snprintf(audit_path, sizeof(audit_path), "%s/audit.log", dir);
	save_new_key(AUTHORITY, signing_path, &signing_verifier, NULL);
	save_new_key(AUTHORITY, identity_path, NULL, &identity_key);
	save_new_key(LOG_ORIGIN, log_path, &log_verifier, NULL);
	save_new_key(COSIGNER, cosign_path, &cosign_plain_verifier, NULL);
	issue_certificate(cert_path, AUTHORITY, &signing_verifier, identity_key, CERT_AFTER, CERT_UNTIL);
	now_value = NOW;
	clock_error = 0;
	file_clock = NULL;
	audit = fopen(audit_path, "a");
	ck_assert_ptr_nonnull(audit);
	buffer_init(&payload);
	service = NULL;
	for (unsigned i = 0; i < LEAVES; i++) {
		char leaf[32];
		int len = snprintf(leaf, sizeof(leaf), "leaf %u", i);
		ck_assert_int_eq(merkle_leaf_hash((const uint8_t *)leaf, (size_t)len, leaves[i]), 0);
	}
}

static void teardown(void)
{
	signer_service_close(service);
	clock_close(file_clock);
	file_clock = NULL;
	signer_key_free(identity_key);
	buffer_free(&payload);
	if (audit)
		fclose(audit);
	test_remove_tree(dir);
}

static struct signer_service_options options_with(const char *const *certificates, size_t count)
{
	struct signer_service_options options = {
	    .authority = AUTHORITY,
	    .signing_key_path = signing_path,
	    .certificate_paths = certificates,
	    .certificate_count = count,
	    .log_key_path = log_path,
	    .cosignature_key_path = cosign_path,
	    .ledger_directory = ledger_path,
	    .namespaces = test_namespaces,
	    .namespace_count = sizeof(test_namespaces) / sizeof(test_namespaces[0]),
	    .audit = audit,
	    .now = test_now,
	    .now_context = &now_value,
	};
	return options;
}

static const char *const default_certificates[] = {cert_path};

/* Opens the service with the default options; returns the result and the detail. */
static int open_with(const struct signer_service_options *options, char *detail, size_t cap)
{
	signer_service_close(service);
	service = NULL;
	return signer_service_open(options, &service, detail, cap);
}

static void open_default(void)
{
	char detail[512];
	struct signer_service_options options = options_with(default_certificates, 1);
	int rc = open_with(&options, detail, sizeof(detail));
	if (rc != 0)
		ck_abort_msg("signer_service_open: %d %s", rc, detail);
}

/* ---- statements ---- */

static void receipt_text(const char *authority, uint64_t epoch, struct buffer *out)
{
	struct receipt r;
	memset(&r, 0, sizeof(r));
	snprintf(r.authority, sizeof(r.authority), "%s", authority);
	snprintf(r.namespace_name, sizeof(r.namespace_name), "mix");
	memset(r.service_id, 0x11, sizeof(r.service_id));
	r.sequence = 1;
	memset(r.registration_digest, 0x22, sizeof(r.registration_digest));
	r.accepted_at = now_value;
	r.publish_by_epoch = epoch;
	buffer_reset(out);
	ck_assert_int_eq(receipt_encode(&r, out), 0);
}

static void vote_text(const char *authority, uint64_t epoch, uint64_t records, struct buffer *out)
{
	struct vote v;
	memset(&v, 0, sizeof(v));
	snprintf(v.namespace_name, sizeof(v.namespace_name), "mix");
	snprintf(v.origin, sizeof(v.origin), "%s", LOG_ORIGIN);
	v.epoch = epoch;
	snprintf(v.authority, sizeof(v.authority), "%s", authority);
	v.record_count = records;
	memset(v.records_root, 0x33, sizeof(v.records_root));
	memset(v.body_sha256, 0x44, sizeof(v.body_sha256));
	v.method_count = 1;
	v.methods[0] = 1;
	buffer_reset(out);
	ck_assert_int_eq(vote_encode(&v, out), 0);
}

/* A header of origin's namespace for epoch, with the times of its schedule. */
static void header_text(const char *origin, uint64_t epoch, uint64_t records, struct buffer *out)
{
	struct snapshot_header h;
	struct epoch_times times;
	memset(&h, 0, sizeof(h));
	snprintf(h.namespace_name, sizeof(h.namespace_name), "%s", namespace_of(origin));
	snprintf(h.origin, sizeof(h.origin), "%s", origin);
	h.epoch = epoch;
	ck_assert_int_eq(schedule_epoch_times(schedule_of(origin), epoch, &times), 0);
	h.valid_after = times.valid_after;
	h.fresh_until = times.fresh_until;
	h.valid_until = times.valid_until;
	h.record_count = records;
	memset(h.records_root, 0x55, sizeof(h.records_root));
	h.body_size = 100 + records;
	memset(h.body_sha256, 0x66, sizeof(h.body_sha256));
	h.consensus_method = SNAPSHOT_CONSENSUS_METHOD;
	buffer_reset(out);
	ck_assert_int_eq(snapshot_header_encode(&h, out), 0);
}

static void checkpoint_text(const char *origin, uint64_t size, struct buffer *out)
{
	struct checkpoint c;
	memset(&c, 0, sizeof(c));
	snprintf(c.origin, sizeof(c.origin), "%s", origin);
	c.tree_size = size;
	ck_assert_int_eq(merkle_root(leaves, size, c.root), 0);
	buffer_reset(out);
	ck_assert_int_eq(checkpoint_encode(&c, out), 0);
}

/* ---- requests ---- */

static int request(uint8_t operation, const struct buffer *text, struct signer_response *response)
{
	struct signer_request r;
	memset(&r, 0, sizeof(r));
	r.operation = operation;
	r.text = text ? text->data : NULL;
	r.text_len = text ? text->len : 0;
	int rc = signer_service_handle(service, &r, response, &payload);
	ck_assert_int_eq(rc, response->result);
	if (rc != 0) {
		ck_assert(!response->has_signature);
		ck_assert(response->detail[0] != '\0');
	}
	return rc;
}

static int checkpoint_request(uint8_t operation, const struct buffer *text, uint64_t old_size, uint64_t size,
                              struct signer_response *response)
{
	struct signer_request r;
	memset(&r, 0, sizeof(r));
	r.operation = operation;
	r.text = text->data;
	r.text_len = text->len;
	r.old_size = old_size;
	if (old_size > 0 && size > old_size)
		ck_assert_int_eq(merkle_consistency_proof(leaves, size, old_size, r.proof, &r.proof_count),
		                 0);
	int rc = signer_service_handle(service, &r, response, &payload);
	ck_assert_int_eq(rc, response->result);
	return rc;
}

/* Checks that the response's signature verifies over text with verifier. */
static void assert_signed_by(const struct signer_response *response, const struct buffer *text,
                             const struct note_verifier *verifier)
{
	struct buffer note;
	struct note *parsed = NULL;
	ck_assert(response->has_signature);
	ck_assert_str_eq(response->signature.name, verifier->name);
	ck_assert_uint_eq(response->signature.key_id, verifier->key_id);
	buffer_init(&note);
	ck_assert_int_eq(note_format(text->data, text->len, &response->signature, 1, &note), 0);
	ck_assert_int_eq(note_parse(note.data, note.len, &parsed), 0);
	ck_assert_int_eq(note_verify_threshold(parsed, verifier, 1, 1), 0);
	note_free(parsed);
	buffer_free(&note);
}

/* ---- opening ---- */

START_TEST(test_open_and_get_keys)
{
	struct signer_response response;
	char expected[NOTE_VERIFIER_KEY_MAX + 64], key_text[NOTE_VERIFIER_KEY_MAX + 1];
	struct note_verifier cosigner;

	open_default();
	ck_assert_int_eq(request(SIGNER_OP_GET_KEYS, NULL, &response), 0);
	ck_assert(!response.has_signature);
	ck_assert_ptr_nonnull(response.payload);
	char *text = strndup((const char *)response.payload, response.payload_len);
	note_verifier_format(&signing_verifier, key_text);
	snprintf(expected, sizeof(expected), "signing-key %s\n", key_text);
	ck_assert_ptr_nonnull(strstr(text, expected));
	note_verifier_format(&log_verifier, key_text);
	snprintf(expected, sizeof(expected), "log-key %s\n", key_text);
	ck_assert_ptr_nonnull(strstr(text, expected));
	ck_assert_int_eq(
	    cosignature_verifier_from_ed25519(COSIGNER, cosign_plain_verifier.public_key, &cosigner), 0);
	note_verifier_format(&cosigner, key_text);
	snprintf(expected, sizeof(expected), "cosignature-key %s\n", key_text);
	ck_assert_ptr_nonnull(strstr(text, expected));
	/* The cosignature verifier is of type 0x04: its base64 starts with 'B' (0x01 gives 'A'). */
	/* (The name and key id hold no '+'; the base64 may.) */
	ck_assert_int_eq(strchr(strchr(key_text, '+') + 1, '+')[1], 'B');
	free(text);

	/* Text where none is taken. */
	struct buffer junk;
	buffer_init(&junk);
	buffer_append_string(&junk, "x\n");
	ck_assert_int_eq(request(SIGNER_OP_GET_KEYS, &junk, &response), DIRAUTH_ERR_REFUSED);
	ck_assert_int_eq(request(SIGNER_OP_GET_CERTIFICATES, &junk, &response), DIRAUTH_ERR_REFUSED);
	ck_assert_int_eq(request(99, &junk, &response), DIRAUTH_ERR_REFUSED);
	ck_assert_int_eq(request(0, NULL, &response), DIRAUTH_ERR_REFUSED);
	buffer_free(&junk);
}
END_TEST

START_TEST(test_get_certificates)
{
	struct signer_response response;
	struct certificate_bundle_entry entries[CERTIFICATE_BUNDLE_MAX];
	size_t count = 0, len1, len2;
	struct note_verifier old_signing;
	const char *const both[] = {cert_path, cert2_path};
	char detail[256];

	/* A previous signing key's certificate (an overlap) is served too. */
	char old_path[700];
	snprintf(old_path, sizeof(old_path), "%s/old.key", key_dir);
	save_new_key(AUTHORITY, old_path, &old_signing, NULL);
	issue_certificate(cert2_path, AUTHORITY, &old_signing, identity_key, CERT_AFTER - 86400, NOW + 3600);
	struct signer_service_options options = options_with(both, 2);
	ck_assert_int_eq(open_with(&options, detail, sizeof(detail)), 0);

	ck_assert_int_eq(request(SIGNER_OP_GET_CERTIFICATES, NULL, &response), 0);
	ck_assert_int_eq(certificate_bundle_parse(response.payload, response.payload_len, entries, &count),
	                 0);
	ck_assert_uint_eq(count, 2);
	uint8_t *first = test_read_file(cert_path, &len1);
	uint8_t *second = test_read_file(cert2_path, &len2);
	ck_assert_uint_eq(entries[0].note_len, len1);
	ck_assert_mem_eq(entries[0].note, first, len1);
	ck_assert_uint_eq(entries[1].note_len, len2);
	ck_assert_mem_eq(entries[1].note, second, len2);
	free(first);
	free(second);

	/* A keyring pinning the identity accepts both. */
	struct certificate_keyring ring;
	size_t added = 0;
	ck_assert_int_eq(certificate_keyring_init(&ring, signer_key_verifier(identity_key), 1), 0);
	ck_assert_int_eq(
	    certificate_keyring_add_bundle(&ring, response.payload, response.payload_len, &added), 0);
	ck_assert_uint_eq(added, 2);
}
END_TEST

START_TEST(test_open_refuses_certificate_problems)
{
	char detail[512];
	struct note_verifier other;
	char other_path[700];
	struct signer_service_options options = options_with(default_certificates, 1);

	/* Expired. */
	issue_certificate(cert_path, AUTHORITY, &signing_verifier, identity_key, NOW - 7200, NOW - 3600);
	ck_assert_int_eq(open_with(&options, detail, sizeof(detail)), DIRAUTH_ERR_STALE);
	ck_assert_ptr_null(service);
	ck_assert_ptr_nonnull(strstr(detail, "expired at"));
	ck_assert_ptr_nonnull(strstr(detail, cert_path));
	/* Exactly at valid-until is already expired. */
	issue_certificate(cert_path, AUTHORITY, &signing_verifier, identity_key, NOW - 7200, NOW);
	ck_assert_int_eq(open_with(&options, detail, sizeof(detail)), DIRAUTH_ERR_STALE);

	/* Not yet valid. */
	issue_certificate(cert_path, AUTHORITY, &signing_verifier, identity_key, NOW + 60, NOW + 3600);
	ck_assert_int_eq(open_with(&options, detail, sizeof(detail)), DIRAUTH_ERR_STALE);
	ck_assert_ptr_nonnull(strstr(detail, "not valid until"));

	/* For another key of the same authority. */
	snprintf(other_path, sizeof(other_path), "%s/other.key", key_dir);
	save_new_key(AUTHORITY, other_path, &other, NULL);
	issue_certificate(cert_path, AUTHORITY, &other, identity_key, CERT_AFTER, CERT_UNTIL);
	ck_assert_int_eq(open_with(&options, detail, sizeof(detail)), DIRAUTH_ERR_MISMATCH);
	ck_assert_ptr_nonnull(strstr(detail, "not the signing key"));

	/* Not a certificate at all, and a missing one. */
	test_write_file(cert_path, "dirauth key-certificate v1\n", 27, 0644);
	ck_assert_int_eq(open_with(&options, detail, sizeof(detail)), DIRAUTH_ERR_CONFIG);
	ck_assert_ptr_nonnull(strstr(detail, cert_path));
	unlink(cert_path);
	ck_assert_int_eq(open_with(&options, detail, sizeof(detail)), DIRAUTH_ERR_CONFIG);

	/* Too large. */
	char *large = malloc(CERTIFICATE_MAX_BYTES + 10);
	memset(large, 'a', CERTIFICATE_MAX_BYTES + 10);
	test_write_file(cert_path, large, CERTIFICATE_MAX_BYTES + 10, 0644);
	free(large);
	ck_assert_int_eq(open_with(&options, detail, sizeof(detail)), DIRAUTH_ERR_CONFIG);
	ck_assert_ptr_nonnull(strstr(detail, "longer than"));

	/* No certificate configured. */
	options.certificate_count = 0;
	ck_assert_int_eq(open_with(&options, detail, sizeof(detail)), DIRAUTH_ERR_CONFIG);

	/* Valid again: opens. */
	issue_certificate(cert_path, AUTHORITY, &signing_verifier, identity_key, CERT_AFTER, CERT_UNTIL);
	options.certificate_count = 1;
	ck_assert_int_eq(open_with(&options, detail, sizeof(detail)), 0);
}
END_TEST

START_TEST(test_open_refuses_other_authority)
{
	char detail[512];
	struct signer_service_options options = options_with(default_certificates, 1);

	/* The configured authority is not the signing key's name. */
	options.authority = "authority2.dirauth.example";
	ck_assert_int_eq(open_with(&options, detail, sizeof(detail)), DIRAUTH_ERR_CONFIG);
	ck_assert_ptr_nonnull(strstr(detail, "not the authority"));
	options.authority = "not a name";
	ck_assert_int_eq(open_with(&options, detail, sizeof(detail)), DIRAUTH_ERR_CONFIG);

	/* A certificate for another authority (its own identity and signing key). */
	struct signer_key *other_identity = NULL;
	struct signer_key *other_signing = NULL;
	ck_assert_int_eq(signer_key_generate("authority2.dirauth.example", &other_identity), 0);
	ck_assert_int_eq(signer_key_generate("authority2.dirauth.example", &other_signing), 0);
	issue_certificate(cert_path, "authority2.dirauth.example", signer_key_verifier(other_signing),
	                  other_identity, CERT_AFTER, CERT_UNTIL);
	options.authority = AUTHORITY;
	ck_assert_int_eq(open_with(&options, detail, sizeof(detail)), DIRAUTH_ERR_MISMATCH);
	ck_assert_ptr_nonnull(strstr(detail, "authority2.dirauth.example"));
	signer_key_free(other_identity);
	signer_key_free(other_signing);
}
END_TEST

START_TEST(test_open_refuses_key_modes)
{
	char detail[512];
	struct signer_service_options options = options_with(default_certificates, 1);

	/* Key file readable by the group. */
	ck_assert_int_eq(chmod(signing_path, 0640), 0);
	ck_assert_int_eq(open_with(&options, detail, sizeof(detail)), DIRAUTH_ERR_PERMISSION);
	ck_assert_ptr_nonnull(strstr(detail, signing_path));
	ck_assert_int_eq(chmod(signing_path, 0600), 0);

	/* The log key too. */
	ck_assert_int_eq(chmod(log_path, 0644), 0);
	ck_assert_int_eq(open_with(&options, detail, sizeof(detail)), DIRAUTH_ERR_PERMISSION);
	ck_assert_ptr_nonnull(strstr(detail, log_path));
	ck_assert_int_eq(chmod(log_path, 0600), 0);

	/* Key directory others may enter and list. */
	ck_assert_int_eq(chmod(key_dir, 0755), 0);
	ck_assert_int_eq(open_with(&options, detail, sizeof(detail)), DIRAUTH_ERR_PERMISSION);
	ck_assert_ptr_nonnull(strstr(detail, "key directory"));
	ck_assert_ptr_nonnull(strstr(detail, key_dir));
	ck_assert_ptr_nonnull(strstr(detail, "0755"));
	ck_assert_int_eq(chmod(key_dir, 0710), 0);
	ck_assert_int_eq(open_with(&options, detail, sizeof(detail)), DIRAUTH_ERR_PERMISSION);
	ck_assert_int_eq(chmod(key_dir, 0700), 0);

	/* Owned by another user (dirauthd's, say), whatever the mode: it could replace the key. */
	if (geteuid() == 0) {
		ck_assert_int_eq(chown(signing_path, 65534, (gid_t)-1), 0);
		ck_assert_int_eq(open_with(&options, detail, sizeof(detail)), DIRAUTH_ERR_PERMISSION);
		ck_assert_ptr_nonnull(strstr(detail, "owned by uid 65534"));
		ck_assert_int_eq(chown(signing_path, 0, (gid_t)-1), 0);
		ck_assert_int_eq(chown(key_dir, 65534, (gid_t)-1), 0);
		ck_assert_int_eq(open_with(&options, detail, sizeof(detail)), DIRAUTH_ERR_PERMISSION);
		ck_assert_ptr_nonnull(strstr(detail, "key directory"));
		ck_assert_int_eq(chown(key_dir, 0, (gid_t)-1), 0);
	}

	/* A ledger directory others may write to could be rolled back. */
	ck_assert_int_eq(mkdir(ledger_path, 0700), 0);
	ck_assert_int_eq(chmod(ledger_path, 0775), 0);
	ck_assert_int_eq(open_with(&options, detail, sizeof(detail)), DIRAUTH_ERR_PERMISSION);
	ck_assert_ptr_nonnull(strstr(detail, "ledger directory"));
	ck_assert_int_eq(chmod(ledger_path, 0700), 0);

	/* One key in two roles. */
	options.log_key_path = signing_path;
	ck_assert_int_eq(open_with(&options, detail, sizeof(detail)), DIRAUTH_ERR_CONFIG);
	ck_assert_ptr_nonnull(strstr(detail, "three different keys"));
	options.log_key_path = log_path;

	/* A missing key file. */
	options.cosignature_key_path = "/nonexistent-dir-for-test/cosignature.key";
	ck_assert_int_eq(open_with(&options, detail, sizeof(detail)), DIRAUTH_ERR_NOT_FOUND);
	options.cosignature_key_path = cosign_path;
	ck_assert_int_eq(open_with(&options, detail, sizeof(detail)), 0);
}
END_TEST

/* ---- signing ---- */

START_TEST(test_sign_receipt)
{
	struct signer_response response;
	struct buffer text;
	buffer_init(&text);
	open_default();

	receipt_text(AUTHORITY, E(1), &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_RECEIPT, &text, &response), 0);
	assert_signed_by(&response, &text, &signing_verifier);
	ck_assert_ptr_null(response.payload);

	/* Another authority's receipt. */
	receipt_text("authority2.dirauth.example", 7, &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_RECEIPT, &text, &response), DIRAUTH_ERR_REFUSED);
	ck_assert_ptr_nonnull(strstr(response.detail, "authority2.dirauth.example"));
	/* Other kinds of text as a receipt. */
	vote_text(AUTHORITY, 7, 1, &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_RECEIPT, &text, &response), DIRAUTH_ERR_REFUSED);
	header_text(LOG_ORIGIN, 7, 1, &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_RECEIPT, &text, &response), DIRAUTH_ERR_REFUSED);
	checkpoint_text(LOG_ORIGIN, 3, &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_RECEIPT, &text, &response), DIRAUTH_ERR_REFUSED);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_RECEIPT, NULL, &response), DIRAUTH_ERR_REFUSED);
	buffer_free(&text);
}
END_TEST

START_TEST(test_sign_vote)
{
	struct signer_response first, response;
	struct buffer text, other;
	buffer_init(&text);
	buffer_init(&other);
	open_default();

	vote_text(AUTHORITY, E(0), 1, &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_VOTE, &text, &first), 0);
	assert_signed_by(&first, &text, &signing_verifier);
	/* A repeat: the same signature. */
	ck_assert_int_eq(request(SIGNER_OP_SIGN_VOTE, &text, &response), 0);
	ck_assert_mem_eq(response.signature.signature, first.signature.signature, 64);
	/* Another vote for the same epoch. */
	vote_text(AUTHORITY, E(0), 2, &other);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_VOTE, &other, &response), DIRAUTH_ERR_COLLISION);
	/* A lower epoch. */
	vote_text(AUTHORITY, E(-1), 1, &other);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_VOTE, &other, &response), DIRAUTH_ERR_ROLLBACK);
	/* Another authority's vote. */
	vote_text("authority2.dirauth.example", E(1), 1, &other);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_VOTE, &other, &response), DIRAUTH_ERR_REFUSED);
	/* Other kinds of text as a vote. */
	header_text(LOG_ORIGIN, 11, 1, &other);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_VOTE, &other, &response), DIRAUTH_ERR_REFUSED);
	receipt_text(AUTHORITY, 11, &other);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_VOTE, &other, &response), DIRAUTH_ERR_REFUSED);
	/* A higher epoch is fine; votes and headers are separate records. */
	vote_text(AUTHORITY, E(1), 5, &other);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_VOTE, &other, &response), 0);
	header_text(LOG_ORIGIN, E(0), 1, &other);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_SNAPSHOT_HEADER, &other, &response), 0);
	buffer_free(&text);
	buffer_free(&other);
}
END_TEST

START_TEST(test_sign_snapshot_header)
{
	struct signer_response first, response;
	struct buffer text, other;
	char detail[256];
	buffer_init(&text);
	buffer_init(&other);
	open_default();

	header_text(LOG_ORIGIN, E(0), 3, &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_SNAPSHOT_HEADER, &text, &first), 0);
	assert_signed_by(&first, &text, &signing_verifier);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_SNAPSHOT_HEADER, &text, &response), 0);
	ck_assert_mem_eq(response.signature.signature, first.signature.signature, 64);
	header_text(LOG_ORIGIN, E(0), 4, &other);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_SNAPSHOT_HEADER, &other, &response), DIRAUTH_ERR_COLLISION);
	ck_assert_ptr_nonnull(strstr(response.detail, "equivocate"));
	header_text(LOG_ORIGIN, E(-1), 3, &other);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_SNAPSHOT_HEADER, &other, &response), DIRAUTH_ERR_ROLLBACK);
	/* Another origin has its own epochs. */
	header_text(MAIL_ORIGIN, 5, 3, &other);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_SNAPSHOT_HEADER, &other, &response), 0);
	/* Other kinds of text as a header. */
	vote_text(AUTHORITY, 21, 1, &other);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_SNAPSHOT_HEADER, &other, &response), DIRAUTH_ERR_REFUSED);
	checkpoint_text(LOG_ORIGIN, 3, &other);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_SNAPSHOT_HEADER, &other, &response), DIRAUTH_ERR_REFUSED);
	/* The header text with a signature line appended is not a header. */
	buffer_reset(&other);
	buffer_append(&other, text.data, text.len);
	buffer_append_string(&other, "\n\xe2\x80\x94 x AAAA\n");
	ck_assert_int_eq(request(SIGNER_OP_SIGN_SNAPSHOT_HEADER, &other, &response), DIRAUTH_ERR_REFUSED);

	/* After a restart the ledger still refuses. */
	struct signer_service_options options = options_with(default_certificates, 1);
	ck_assert_int_eq(open_with(&options, detail, sizeof(detail)), 0);
	header_text(LOG_ORIGIN, E(0), 4, &other);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_SNAPSHOT_HEADER, &other, &response), DIRAUTH_ERR_COLLISION);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_SNAPSHOT_HEADER, &text, &response), 0);
	ck_assert_mem_eq(response.signature.signature, first.signature.signature, 64);
	buffer_free(&text);
	buffer_free(&other);
}
END_TEST

START_TEST(test_sign_checkpoint)
{
	struct signer_response response;
	struct buffer text;
	buffer_init(&text);
	open_default();

	checkpoint_text(LOG_ORIGIN, 4, &text);
	ck_assert_int_eq(checkpoint_request(SIGNER_OP_SIGN_CHECKPOINT, &text, 0, 4, &response), 0);
	assert_signed_by(&response, &text, &log_verifier);
	/* The next one must be consistent, from the right old size. */
	checkpoint_text(LOG_ORIGIN, 10, &text);
	ck_assert_int_eq(checkpoint_request(SIGNER_OP_SIGN_CHECKPOINT, &text, 3, 10, &response),
	                 DIRAUTH_ERR_MISMATCH);
	ck_assert_int_eq(checkpoint_request(SIGNER_OP_SIGN_CHECKPOINT, &text, 0, 10, &response),
	                 DIRAUTH_ERR_MISMATCH);
	ck_assert_int_eq(checkpoint_request(SIGNER_OP_SIGN_CHECKPOINT, &text, 4, 10, &response), 0);
	assert_signed_by(&response, &text, &log_verifier);
	/* Smaller. */
	checkpoint_text(LOG_ORIGIN, 6, &text);
	ck_assert_int_eq(checkpoint_request(SIGNER_OP_SIGN_CHECKPOINT, &text, 10, 6, &response),
	                 DIRAUTH_ERR_ROLLBACK);
	/* Another log's checkpoint. */
	checkpoint_text("dirauth.example/mail", 12, &text);
	ck_assert_int_eq(checkpoint_request(SIGNER_OP_SIGN_CHECKPOINT, &text, 0, 12, &response),
	                 DIRAUTH_ERR_REFUSED);
	ck_assert_ptr_nonnull(strstr(response.detail, "log key"));
	/* Other kinds of text as a checkpoint. */
	header_text(LOG_ORIGIN, 30, 1, &text);
	ck_assert_int_eq(checkpoint_request(SIGNER_OP_SIGN_CHECKPOINT, &text, 10, 10, &response),
	                 DIRAUTH_ERR_REFUSED);
	receipt_text(AUTHORITY, 30, &text);
	ck_assert_int_eq(checkpoint_request(SIGNER_OP_COSIGN_CHECKPOINT, &text, 10, 10, &response),
	                 DIRAUTH_ERR_REFUSED);

	/* The state as dirauthd asks for it. */
	struct buffer origin;
	buffer_init(&origin);
	buffer_append_string(&origin, LOG_ORIGIN);
	ck_assert_int_eq(request(SIGNER_OP_CHECKPOINT_STATE, &origin, &response), 0);
	merkle_hash root;
	char root_text[45], expected[128];
	ck_assert_int_eq(merkle_root(leaves, 10, root), 0);
	base64_encode(root, sizeof(root), root_text);
	snprintf(expected, sizeof(expected), "signed 10 %s\n", root_text);
	ck_assert_uint_eq(response.payload_len, strlen(expected));
	ck_assert_mem_eq(response.payload, expected, strlen(expected));
	buffer_reset(&origin);
	buffer_append_string(&origin, "bad origin");
	ck_assert_int_eq(request(SIGNER_OP_CHECKPOINT_STATE, &origin, &response), DIRAUTH_ERR_REFUSED);
	ck_assert_int_eq(request(SIGNER_OP_CHECKPOINT_STATE, NULL, &response), DIRAUTH_ERR_REFUSED);
	buffer_free(&origin);
	buffer_free(&text);
}
END_TEST

START_TEST(test_cosign_checkpoint)
{
	struct signer_response response;
	struct buffer text, note;
	struct note *parsed = NULL;
	struct note_verifier cosigner;
	uint64_t timestamp = 0;
	buffer_init(&text);
	buffer_init(&note);
	open_default();
	ck_assert_int_eq(
	    cosignature_verifier_from_ed25519(COSIGNER, cosign_plain_verifier.public_key, &cosigner), 0);

	/* Any log's checkpoint may be cosigned. */
	checkpoint_text("example.com/other-log", 8, &text);
	ck_assert_int_eq(checkpoint_request(SIGNER_OP_COSIGN_CHECKPOINT, &text, 0, 8, &response), 0);
	ck_assert(response.has_signature);
	ck_assert_str_eq(response.signature.name, COSIGNER);
	ck_assert_uint_eq(response.signature.key_id, cosigner.key_id);
	ck_assert_uint_eq(response.signature.signature_len, 72);
	ck_assert_int_eq(note_format(text.data, text.len, &response.signature, 1, &note), 0);
	ck_assert_int_eq(note_parse(note.data, note.len, &parsed), 0);
	ck_assert_int_eq(cosignature_verify(parsed, &cosigner, &timestamp), 0);
	ck_assert_uint_eq(timestamp, NOW);
	note_free(parsed);

	/* Inconsistent ones: a smaller tree, a proof from the wrong old size, a damaged proof. */
	checkpoint_text("example.com/other-log", 5, &text);
	ck_assert_int_eq(checkpoint_request(SIGNER_OP_COSIGN_CHECKPOINT, &text, 8, 5, &response),
	                 DIRAUTH_ERR_ROLLBACK);
	checkpoint_text("example.com/other-log", 12, &text);
	ck_assert_int_eq(checkpoint_request(SIGNER_OP_COSIGN_CHECKPOINT, &text, 7, 12, &response),
	                 DIRAUTH_ERR_MISMATCH);
	struct signer_request forged;
	memset(&forged, 0, sizeof(forged));
	forged.operation = SIGNER_OP_COSIGN_CHECKPOINT;
	forged.text = text.data;
	forged.text_len = text.len;
	forged.old_size = 8;
	ck_assert_int_eq(merkle_consistency_proof(leaves, 12, 8, forged.proof, &forged.proof_count), 0);
	forged.proof[0][5] ^= 0x80;
	ck_assert_int_eq(signer_service_handle(service, &forged, &response, &payload), DIRAUTH_ERR_PROOF);
	/* The honest extension is cosigned, at the current time. */
	now_value = NOW + 5;
	ck_assert_int_eq(checkpoint_request(SIGNER_OP_COSIGN_CHECKPOINT, &text, 8, 12, &response), 0);
	buffer_reset(&note);
	ck_assert_int_eq(note_format(text.data, text.len, &response.signature, 1, &note), 0);
	ck_assert_int_eq(note_parse(note.data, note.len, &parsed), 0);
	ck_assert_int_eq(cosignature_verify(parsed, &cosigner, &timestamp), 0);
	ck_assert_uint_eq(timestamp, NOW + 5);
	note_free(parsed);

	struct buffer origin;
	buffer_init(&origin);
	buffer_append_string(&origin, "example.com/other-log");
	ck_assert_int_eq(request(SIGNER_OP_CHECKPOINT_STATE, &origin, &response), 0);
	ck_assert_ptr_nonnull(memmem(response.payload, response.payload_len, "cosigned 12 ", 12));
	/* Only cosigned: nothing was signed with the log key for that origin. */
	ck_assert(response.payload_len < 7 || memcmp(response.payload, "signed ", 7) != 0);
	buffer_free(&origin);
	buffer_free(&text);
	buffer_free(&note);
}
END_TEST

/* The checkpoint text of origin for the tree of the first size hashes of tree. */
static void tree_checkpoint_text(const char *origin, const merkle_hash *tree, uint64_t size,
                                 struct buffer *out)
{
	struct checkpoint c;
	memset(&c, 0, sizeof(c));
	snprintf(c.origin, sizeof(c.origin), "%s", origin);
	c.tree_size = size;
	ck_assert_int_eq(merkle_root(tree, size, c.root), 0);
	buffer_reset(out);
	ck_assert_int_eq(checkpoint_encode(&c, out), 0);
}

/* A checkpoint request for the tree of size leaves of tree, with tree's own proof from old_size. */
static int tree_request(uint8_t operation, const char *origin, const merkle_hash *tree, uint64_t old_size,
                        uint64_t size, struct signer_response *response)
{
	struct buffer text;
	buffer_init(&text);
	tree_checkpoint_text(origin, tree, size, &text);
	struct signer_request r;
	memset(&r, 0, sizeof(r));
	r.operation = operation;
	r.text = text.data;
	r.text_len = text.len;
	r.old_size = old_size;
	if (old_size > 0 && size > old_size)
		ck_assert_int_eq(merkle_consistency_proof(tree, size, old_size, r.proof, &r.proof_count), 0);
	int rc = signer_service_handle(service, &r, response, &payload);
	ck_assert_int_eq(rc, response->result);
	buffer_free(&text);
	return rc;
}

/* The log key and the cosignature key answer for one tree per origin: whichever signed last,
 * the other signs or cosigns only that tree head or one proven consistent with it, so no signer
 * signs one tree head and cosigns another. */
START_TEST(test_one_tree_for_both_keys)
{
	struct signer_response response;
	merkle_hash fork[LEAVES];
	open_default();
	memcpy(fork, leaves, sizeof(fork));
	fork[1][0] ^= 1; /* every tree of two leaves or more differs */

	/* Signed with the log key at 4: a cosignature of another head of 4 is an equivocation. */
	ck_assert_int_eq(tree_request(SIGNER_OP_SIGN_CHECKPOINT, LOG_ORIGIN, leaves, 0, 4, &response), 0);
	ck_assert_int_eq(tree_request(SIGNER_OP_COSIGN_CHECKPOINT, LOG_ORIGIN, fork, 4, 4, &response),
	                 DIRAUTH_ERR_COLLISION);
	/* Nor a fork of another size with its own proof, nor from the empty tree, nor smaller. */
	ck_assert_int_eq(tree_request(SIGNER_OP_COSIGN_CHECKPOINT, LOG_ORIGIN, fork, 4, 7, &response),
	                 DIRAUTH_ERR_PROOF);
	ck_assert_int_eq(tree_request(SIGNER_OP_COSIGN_CHECKPOINT, LOG_ORIGIN, fork, 0, 7, &response),
	                 DIRAUTH_ERR_MISMATCH);
	ck_assert_int_eq(tree_request(SIGNER_OP_COSIGN_CHECKPOINT, LOG_ORIGIN, leaves, 4, 3, &response),
	                 DIRAUTH_ERR_ROLLBACK);
	/* The head the log key signed is cosigned, as a repeat, and so is an extension of it. */
	ck_assert_int_eq(tree_request(SIGNER_OP_COSIGN_CHECKPOINT, LOG_ORIGIN, leaves, 4, 4, &response), 0);
	ck_assert_uint_eq(response.signature.signature_len, 72);
	ck_assert_int_eq(tree_request(SIGNER_OP_COSIGN_CHECKPOINT, LOG_ORIGIN, leaves, 4, 9, &response), 0);

	/* Now the cosignature is ahead: the log key signs nothing below it or beside it. */
	ck_assert_int_eq(tree_request(SIGNER_OP_SIGN_CHECKPOINT, LOG_ORIGIN, leaves, 4, 6, &response),
	                 DIRAUTH_ERR_ROLLBACK);
	ck_assert_int_eq(tree_request(SIGNER_OP_SIGN_CHECKPOINT, LOG_ORIGIN, leaves, 4, 11, &response),
	                 DIRAUTH_ERR_MISMATCH);
	ck_assert_int_eq(tree_request(SIGNER_OP_SIGN_CHECKPOINT, LOG_ORIGIN, fork, 9, 9, &response),
	                 DIRAUTH_ERR_COLLISION);
	ck_assert_int_eq(tree_request(SIGNER_OP_SIGN_CHECKPOINT, LOG_ORIGIN, fork, 9, 12, &response),
	                 DIRAUTH_ERR_PROOF);
	ck_assert_int_eq(tree_request(SIGNER_OP_SIGN_CHECKPOINT, LOG_ORIGIN, leaves, 9, 9, &response), 0);
	struct buffer text;
	buffer_init(&text);
	tree_checkpoint_text(LOG_ORIGIN, leaves, 9, &text);
	assert_signed_by(&response, &text, &log_verifier);
	buffer_free(&text);

	/* Both records are reported, and survive a restart with the rule. */
	struct buffer origin;
	buffer_init(&origin);
	buffer_append_string(&origin, LOG_ORIGIN);
	ck_assert_int_eq(request(SIGNER_OP_CHECKPOINT_STATE, &origin, &response), 0);
	ck_assert_ptr_nonnull(memmem(response.payload, response.payload_len, "signed 9 ", 9));
	ck_assert_ptr_nonnull(memmem(response.payload, response.payload_len, "cosigned 9 ", 11));
	char detail[256];
	struct signer_service_options options = options_with(default_certificates, 1);
	ck_assert_int_eq(open_with(&options, detail, sizeof(detail)), 0);
	ck_assert_int_eq(tree_request(SIGNER_OP_COSIGN_CHECKPOINT, LOG_ORIGIN, fork, 9, 9, &response),
	                 DIRAUTH_ERR_COLLISION);
	ck_assert_int_eq(tree_request(SIGNER_OP_SIGN_CHECKPOINT, LOG_ORIGIN, leaves, 9, 13, &response), 0);
	/* The head just signed, asked for from the head before it (a caller that read the state
	 * before the other key took the tree on) or from itself: a repeat either way. */
	ck_assert_int_eq(tree_request(SIGNER_OP_COSIGN_CHECKPOINT, LOG_ORIGIN, leaves, 9, 13, &response), 0);
	ck_assert_int_eq(tree_request(SIGNER_OP_COSIGN_CHECKPOINT, LOG_ORIGIN, leaves, 13, 13, &response), 0);

	/* A log the signer only cosigns is held to the same rule on its own. */
	ck_assert_int_eq(
	    tree_request(SIGNER_OP_COSIGN_CHECKPOINT, "example.com/other-log", fork, 0, 5, &response), 0);
	ck_assert_int_eq(
	    tree_request(SIGNER_OP_COSIGN_CHECKPOINT, "example.com/other-log", leaves, 5, 5, &response),
	    DIRAUTH_ERR_COLLISION);
	buffer_free(&origin);
}
END_TEST

START_TEST(test_key_not_configured)
{
	struct signer_response response;
	struct buffer text;
	char detail[256];
	struct signer_service_options options = options_with(default_certificates, 1);
	options.log_key_path = NULL;
	options.cosignature_key_path = NULL;
	ck_assert_int_eq(open_with(&options, detail, sizeof(detail)), 0);
	buffer_init(&text);

	checkpoint_text(LOG_ORIGIN, 4, &text);
	ck_assert_int_eq(checkpoint_request(SIGNER_OP_SIGN_CHECKPOINT, &text, 0, 4, &response),
	                 DIRAUTH_ERR_UNAVAILABLE);
	ck_assert_int_eq(checkpoint_request(SIGNER_OP_COSIGN_CHECKPOINT, &text, 0, 4, &response),
	                 DIRAUTH_ERR_UNAVAILABLE);
	ck_assert_int_eq(request(SIGNER_OP_GET_KEYS, NULL, &response), 0);
	ck_assert_ptr_null(memmem(response.payload, response.payload_len, "log-key", 7));
	ck_assert_ptr_null(memmem(response.payload, response.payload_len, "cosignature-key", 15));
	ck_assert_ptr_nonnull(memmem(response.payload, response.payload_len, "signing-key", 11));
	buffer_free(&text);
}
END_TEST

START_TEST(test_certificate_expires_while_running)
{
	struct signer_response response;
	struct buffer text;
	buffer_init(&text);
	open_default();

	receipt_text(AUTHORITY, 1, &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_RECEIPT, &text, &response), 0);
	now_value = CERT_UNTIL;
	ck_assert_int_eq(request(SIGNER_OP_SIGN_RECEIPT, &text, &response), DIRAUTH_ERR_STALE);
	ck_assert_ptr_nonnull(strstr(response.detail, "expired at"));
	header_text(LOG_ORIGIN, E(0), 1, &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_SNAPSHOT_HEADER, &text, &response), DIRAUTH_ERR_STALE);
	vote_text(AUTHORITY, E(0), 1, &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_VOTE, &text, &response), DIRAUTH_ERR_STALE);
	/* The refused header was not recorded: once the clock is back in the window it signs. */
	now_value = NOW;
	header_text(LOG_ORIGIN, E(0), 2, &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_SNAPSHOT_HEADER, &text, &response), 0);
	/* Before the window. */
	now_value = CERT_AFTER - 1;
	receipt_text(AUTHORITY, 1, &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_RECEIPT, &text, &response), DIRAUTH_ERR_STALE);
	ck_assert_ptr_nonnull(strstr(response.detail, "not valid until"));
	/* The log key is not certified: checkpoints are still signed. */
	checkpoint_text(LOG_ORIGIN, 2, &text);
	ck_assert_int_eq(checkpoint_request(SIGNER_OP_SIGN_CHECKPOINT, &text, 0, 2, &response), 0);
	/* A clock that cannot be read signs nothing. */
	clock_error = DIRAUTH_ERR_IO;
	checkpoint_text(LOG_ORIGIN, 3, &text);
	ck_assert_int_eq(checkpoint_request(SIGNER_OP_SIGN_CHECKPOINT, &text, 2, 3, &response),
	                 DIRAUTH_ERR_UNAVAILABLE);
	buffer_free(&text);
}
END_TEST

/* The base64 seed of a key file: everything after the fourth '+'. */
static char *key_seed(const char *path)
{
	size_t len;
	char *line = (char *)test_read_file(path, &len);
	char *p = line;
	for (int i = 0; i < 4; i++) {
		p = strchr(p, '+');
		ck_assert_ptr_nonnull(p);
		p++;
	}
	char *end = strchr(p, '\n');
	if (end)
		*end = '\0';
	char *seed = strdup(p);
	free(line);
	return seed;
}

START_TEST(test_audit_lines)
{
	struct signer_response response;
	struct buffer text;
	buffer_init(&text);
	open_default();

	header_text(LOG_ORIGIN, E(0), 1, &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_SNAPSHOT_HEADER, &text, &response), 0);
	header_text(LOG_ORIGIN, E(0), 2, &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_SNAPSHOT_HEADER, &text, &response), DIRAUTH_ERR_COLLISION);
	receipt_text(AUTHORITY, 3, &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_RECEIPT, &text, &response), 0);
	checkpoint_text(LOG_ORIGIN, 6, &text);
	ck_assert_int_eq(checkpoint_request(SIGNER_OP_SIGN_CHECKPOINT, &text, 0, 6, &response), 0);
	ck_assert_int_eq(checkpoint_request(SIGNER_OP_COSIGN_CHECKPOINT, &text, 6, 6, &response), 0);
	checkpoint_text(LOG_ORIGIN, 3, &text);
	ck_assert_int_eq(checkpoint_request(SIGNER_OP_SIGN_CHECKPOINT, &text, 6, 3, &response),
	                 DIRAUTH_ERR_ROLLBACK);

	/* The audit log is flushed before the signature is returned: it is complete on disk now,
	 * without any flush by the test. */
	size_t len;
	char *log = (char *)test_read_file(audit_path, &len);
	char key_text[64];
	snprintf(key_text, sizeof(key_text), "key=%s+%08x", AUTHORITY, (unsigned)signing_verifier.key_id);
	header_text(LOG_ORIGIN, E(0), 1, &text);
	uint8_t digest[32];
	char digest_hex[65], expected[512];
	ck_assert_int_eq(snapshot_header_digest(text.data, text.len, digest), 0);
	hex_encode(digest, 32, digest_hex);
	snprintf(expected, sizeof(expected),
	         " epoch %llu dirauth-signer: %llu sign snapshot-header origin=%s epoch=%llu size=- "
	         "sha256=%s %s\n",
	         (unsigned long long)E(0), (unsigned long long)NOW, LOG_ORIGIN, (unsigned long long)E(0),
	         digest_hex, key_text);
	ck_assert_msg(strstr(log, expected), "missing '%s' in:\n%s", expected, log);
	snprintf(expected, sizeof(expected),
	         "%llu refuse snapshot-header origin=%s epoch=%llu reason=collision\n",
	         (unsigned long long)NOW, LOG_ORIGIN, (unsigned long long)E(0));
	ck_assert_msg(strstr(log, expected), "missing '%s' in:\n%s", expected, log);
	/* A statement of no epoch: "epoch -" before the sentence too. */
	snprintf(expected, sizeof(expected),
	         " epoch - dirauth-signer: %llu sign receipt origin=- epoch=- size=- sha256=",
	         (unsigned long long)NOW);
	ck_assert_msg(strstr(log, expected), "missing '%s' in:\n%s", expected, log);
	snprintf(expected, sizeof(expected), " sign checkpoint origin=%s epoch=- size=6 sha256=", LOG_ORIGIN);
	ck_assert_ptr_nonnull(strstr(log, expected));
	snprintf(expected, sizeof(expected),
	         " sign cosignature origin=%s epoch=- size=6 sha256=", LOG_ORIGIN);
	ck_assert_ptr_nonnull(strstr(log, expected));
	ck_assert_ptr_nonnull(strstr(log, "key=" COSIGNER "+"));
	snprintf(expected, sizeof(expected), " refuse checkpoint origin=%s epoch=- reason=rollback\n",
	         LOG_ORIGIN);
	ck_assert_ptr_nonnull(strstr(log, expected));
	/* Six lines: four signatures, two refusals. */
	size_t lines = 0;
	for (char *p = log; *p; p++)
		lines += *p == '\n';
	ck_assert_uint_eq(lines, 6);

	/* No secret: none of the keys' seeds appears. */
	const char *paths[] = {signing_path, log_path, cosign_path, identity_path};
	for (size_t i = 0; i < 4; i++) {
		char *seed = key_seed(paths[i]);
		ck_assert_uint_gt(strlen(seed), 40);
		ck_assert_ptr_null(strstr(log, seed));
		/* Nor a long piece of it. */
		seed[16] = '\0';
		ck_assert_ptr_null(strstr(log, seed));
		free(seed);
	}
	free(log);
	buffer_free(&text);
}
END_TEST

/* Encodes header h into text. */
static void encode_header(const struct snapshot_header *h, struct buffer *text)
{
	buffer_reset(text);
	ck_assert_int_eq(snapshot_header_encode(h, text), 0);
}

/* A header of mix for epoch, its times by the schedule. */
static struct snapshot_header mix_header(uint64_t epoch, uint64_t records)
{
	struct snapshot_header h;
	struct epoch_times times;
	memset(&h, 0, sizeof(h));
	snprintf(h.namespace_name, sizeof(h.namespace_name), "mix");
	snprintf(h.origin, sizeof(h.origin), "%s", LOG_ORIGIN);
	h.epoch = epoch;
	ck_assert_int_eq(schedule_epoch_times(schedule_of(LOG_ORIGIN), epoch, &times), 0);
	h.valid_after = times.valid_after;
	h.fresh_until = times.fresh_until;
	h.valid_until = times.valid_until;
	h.record_count = records;
	h.body_size = 100 + records;
	h.consensus_method = SNAPSHOT_CONSENSUS_METHOD;
	return h;
}

/* A statement dated away from the signer's clock, or before its certificate, is refused: a
 * compromised dirauthd cannot have tomorrow's statements signed today. Checkpoint extension
 * lines are never signed. */
START_TEST(test_statement_time_and_epoch_bounds)
{
	struct signer_response response;
	struct buffer text;
	buffer_init(&text);
	open_default();

	/* A header of an epoch that is current but began before the certificate did. */
	now_value = CERT_AFTER + 10;
	struct snapshot_header h = mix_header(CERT_AFTER / LENGTH - 1, 0);
	ck_assert_uint_lt(h.valid_after, CERT_AFTER);
	encode_header(&h, &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_SNAPSHOT_HEADER, &text, &response), DIRAUTH_ERR_STALE);
	ck_assert_ptr_nonnull(strstr(response.detail, "certificate"));
	now_value = NOW;
	/* The epoch that would exhaust the ledger: refused as not begun. */
	h = mix_header(E(0), 0);
	h.epoch = UINT64_MAX;
	encode_header(&h, &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_SNAPSHOT_HEADER, &text, &response), DIRAUTH_ERR_STALE);
	ck_assert_ptr_nonnull(strstr(response.detail, "has not begun"));
	/* Nothing of the above reached the ledger: an honest header still signs. */
	h = mix_header(E(0), 0);
	encode_header(&h, &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_SNAPSHOT_HEADER, &text, &response), 0);

	/* Votes carry no time: their epoch may not run ahead of the clock. */
	vote_text(AUTHORITY, NOW + 301, 1, &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_VOTE, &text, &response), DIRAUTH_ERR_STALE);
	vote_text(AUTHORITY, E(0), 1, &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_VOTE, &text, &response), 0);

	/* Receipts: accepted-at within the skew, either way. */
	struct receipt r;
	memset(&r, 0, sizeof(r));
	snprintf(r.authority, sizeof(r.authority), "%s", AUTHORITY);
	snprintf(r.namespace_name, sizeof(r.namespace_name), "mix");
	r.sequence = 1;
	r.publish_by_epoch = 1;
	const uint64_t refused_times[] = {NOW - 301, NOW + 301};
	for (size_t i = 0; i < 2; i++) {
		r.accepted_at = refused_times[i];
		buffer_reset(&text);
		ck_assert_int_eq(receipt_encode(&r, &text), 0);
		ck_assert_int_eq(request(SIGNER_OP_SIGN_RECEIPT, &text, &response), DIRAUTH_ERR_STALE);
	}
	r.accepted_at = NOW - 300;
	buffer_reset(&text);
	ck_assert_int_eq(receipt_encode(&r, &text), 0);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_RECEIPT, &text, &response), 0);

	/* A checkpoint with an extension line is free text under the log key: refused. */
	struct checkpoint c;
	memset(&c, 0, sizeof(c));
	snprintf(c.origin, sizeof(c.origin), "%s", LOG_ORIGIN);
	c.tree_size = 1;
	ck_assert_int_eq(merkle_root(leaves, 1, c.root), 0);
	c.extension_count = 1;
	snprintf(c.extensions[0], sizeof(c.extensions[0]), "anything goes here");
	buffer_reset(&text);
	ck_assert_int_eq(checkpoint_encode(&c, &text), 0);
	ck_assert_int_eq(checkpoint_request(SIGNER_OP_SIGN_CHECKPOINT, &text, 0, 1, &response),
	                 DIRAUTH_ERR_REFUSED);
	ck_assert_ptr_nonnull(strstr(response.detail, "extension"));
	buffer_free(&text);
}
END_TEST

/* The signer's own schedule decides which epochs it signs: the epoch of a compromised dirauthd's
 * choosing (1796113200 on a 60-second schedule) is refused as not begun, records nothing, and
 * every real epoch after it still signs; an epoch that is over, or a header whose times are not
 * its epoch's, is refused too. */
START_TEST(test_epoch_schedule)
{
	struct signer_response response;
	struct buffer text;
	buffer_init(&text);
	open_default();

	/* Far ahead, with the times its epoch would have: refused with its own reason. */
	struct snapshot_header h = mix_header(1796113200ULL, 1);
	encode_header(&h, &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_SNAPSHOT_HEADER, &text, &response), DIRAUTH_ERR_STALE);
	ck_assert_msg(strstr(response.detail, "epoch 1796113200 of " LOG_ORIGIN " has not begun"), "%s",
	              response.detail);
	vote_text(AUTHORITY, 1796113200ULL, 1, &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_VOTE, &text, &response), DIRAUTH_ERR_STALE);
	ck_assert_ptr_nonnull(strstr(response.detail, "has not begun"));
	/* It poisoned nothing: the real epochs sign, one after another as the clock moves. */
	for (int k = 0; k < 3; k++) {
		now_value = E(k) * LENGTH + 7;
		h = mix_header(E(k), 1);
		encode_header(&h, &text);
		ck_assert_int_eq(request(SIGNER_OP_SIGN_SNAPSHOT_HEADER, &text, &response), 0);
		vote_text(AUTHORITY, E(k), 1, &text);
		ck_assert_int_eq(request(SIGNER_OP_SIGN_VOTE, &text, &response), 0);
	}
	now_value = NOW;

	/* Current means within the skew (300 s, five epochs) of now, either way. */
	vote_text(AUTHORITY, E(-6), 1, &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_VOTE, &text, &response), DIRAUTH_ERR_STALE);
	ck_assert_msg(strstr(response.detail, "is over"), "%s", response.detail);
	vote_text(AUTHORITY, E(6), 1, &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_VOTE, &text, &response), DIRAUTH_ERR_STALE);
	ck_assert_ptr_nonnull(strstr(response.detail, "has not begun"));
	vote_text(AUTHORITY, E(5), 1, &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_VOTE, &text, &response), 0);
	/* E(-5) is current too; it is below what was signed, so the ledger refuses it. */
	vote_text(AUTHORITY, E(-5), 1, &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_VOTE, &text, &response), DIRAUTH_ERR_ROLLBACK);

	/* Times that are not the epoch's, one at a time. */
	h = mix_header(E(4), 2);
	h.valid_after++;
	encode_header(&h, &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_SNAPSHOT_HEADER, &text, &response), DIRAUTH_ERR_MISMATCH);
	ck_assert_msg(strstr(response.detail, "are not those of epoch"), "%s", response.detail);
	h = mix_header(E(4), 2);
	h.fresh_until += LENGTH;
	encode_header(&h, &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_SNAPSHOT_HEADER, &text, &response), DIRAUTH_ERR_MISMATCH);
	h = mix_header(E(4), 2);
	h.valid_until += LENGTH;
	encode_header(&h, &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_SNAPSHOT_HEADER, &text, &response), DIRAUTH_ERR_MISMATCH);
	/* None of them was recorded: the epoch's true header signs. */
	h = mix_header(E(4), 3);
	encode_header(&h, &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_SNAPSHOT_HEADER, &text, &response), 0);

	/* An origin whose schedule has not begun. */
	header_text(FUTURE_ORIGIN, 0, 1, &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_SNAPSHOT_HEADER, &text, &response), DIRAUTH_ERR_STALE);
	ck_assert_msg(strstr(response.detail, "no epoch has"), "%s", response.detail);

	/* The refusals are audited with their reasons. */
	size_t len;
	char *log = (char *)test_read_file(audit_path, &len);
	ck_assert_ptr_nonnull(
	    strstr(log, " refuse snapshot-header origin=" LOG_ORIGIN " epoch=1796113200 reason=stale\n"));
	ck_assert_ptr_nonnull(
	    strstr(log, " refuse vote origin=" LOG_ORIGIN " epoch=1796113200 reason=stale\n"));
	ck_assert_ptr_nonnull(strstr(log, " reason=mismatch\n"));
	free(log);
	buffer_free(&text);
}
END_TEST

/* Only statements of the namespaces the configuration names are signed. */
START_TEST(test_unknown_namespaces_refused)
{
	struct signer_response response;
	struct buffer text;
	buffer_init(&text);
	open_default();

	/* A header and a vote of an origin that is not configured. */
	struct snapshot_header h = mix_header(E(0), 1);
	snprintf(h.origin, sizeof(h.origin), "example.org/unknown");
	encode_header(&h, &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_SNAPSHOT_HEADER, &text, &response), DIRAUTH_ERR_REFUSED);
	ck_assert_msg(strstr(response.detail, "example.org/unknown, which no namespace"), "%s",
	              response.detail);
	struct vote v;
	memset(&v, 0, sizeof(v));
	snprintf(v.namespace_name, sizeof(v.namespace_name), "mix");
	snprintf(v.origin, sizeof(v.origin), "example.org/unknown");
	snprintf(v.authority, sizeof(v.authority), "%s", AUTHORITY);
	v.epoch = E(0);
	v.method_count = 1;
	v.methods[0] = 1;
	buffer_reset(&text);
	ck_assert_int_eq(vote_encode(&v, &text), 0);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_VOTE, &text, &response), DIRAUTH_ERR_REFUSED);
	/* A configured origin under another namespace's name. */
	h = mix_header(E(0), 1);
	snprintf(h.namespace_name, sizeof(h.namespace_name), "mail");
	encode_header(&h, &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_SNAPSHOT_HEADER, &text, &response), DIRAUTH_ERR_REFUSED);
	ck_assert_msg(strstr(response.detail, "names namespace mail"), "%s", response.detail);
	/* A receipt of a namespace that is not configured. */
	struct receipt r;
	memset(&r, 0, sizeof(r));
	snprintf(r.authority, sizeof(r.authority), "%s", AUTHORITY);
	snprintf(r.namespace_name, sizeof(r.namespace_name), "other");
	r.sequence = 1;
	r.accepted_at = NOW;
	r.publish_by_epoch = E(1);
	buffer_reset(&text);
	ck_assert_int_eq(receipt_encode(&r, &text), 0);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_RECEIPT, &text, &response), DIRAUTH_ERR_REFUSED);
	ck_assert_msg(strstr(response.detail, "namespace other, which is not in the signer's "
	                                      "configuration"),
	              "%s", response.detail);
	/* Nothing was recorded: mix's epoch still signs. */
	h = mix_header(E(0), 1);
	encode_header(&h, &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_SNAPSHOT_HEADER, &text, &response), 0);
	buffer_free(&text);
}
END_TEST

/* A receipt's promise is at most SIGNER_RECEIPT_EPOCHS_AHEAD past the latest epoch begun by the
 * signer's clock plus the skew; dirauthd promises the next one. */
START_TEST(test_receipt_promise_bounded)
{
	struct signer_response response;
	struct buffer text;
	buffer_init(&text);
	open_default();

	receipt_text(AUTHORITY, E(5) + SIGNER_RECEIPT_EPOCHS_AHEAD, &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_RECEIPT, &text, &response), 0);
	receipt_text(AUTHORITY, E(5) + SIGNER_RECEIPT_EPOCHS_AHEAD + 1, &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_RECEIPT, &text, &response), DIRAUTH_ERR_STALE);
	ck_assert_msg(strstr(response.detail, "promises epoch"), "%s", response.detail);
	receipt_text(AUTHORITY, UINT64_MAX, &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_RECEIPT, &text, &response), DIRAUTH_ERR_STALE);
	/* The promise of an earlier epoch can only be found broken: it is the authority's own to
	 * make, and is signed. */
	receipt_text(AUTHORITY, 0, &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_RECEIPT, &text, &response), 0);
	buffer_free(&text);
}
END_TEST

/* A deregistration receipt of this authority for mix, accepted at `at`, naming last_listed. */
static void deregistration_receipt_text(const char *authority, const char *namespace_name, uint64_t at,
                                        uint64_t last_listed, struct buffer *out)
{
	struct deregistration_receipt r;
	memset(&r, 0, sizeof(r));
	snprintf(r.authority, sizeof(r.authority), "%s", authority);
	snprintf(r.namespace_name, sizeof(r.namespace_name), "%s", namespace_name);
	memset(r.service_id, 0x11, sizeof(r.service_id));
	r.sequence = 3;
	memset(r.deregistration_digest, 0x22, sizeof(r.deregistration_digest));
	r.accepted_at = at;
	r.last_listed_epoch = last_listed;
	buffer_reset(out);
	ck_assert_int_eq(deregistration_receipt_encode(&r, out), 0);
}

/* SIGN_DEREGISTRATION_RECEIPT: a deregistration receipt of this authority, for a configured
 * namespace, dated now within the skew, promising an epoch at most SIGNER_RECEIPT_EPOCHS_AHEAD
 * past the latest begun; nothing else is signed by it, and it signs nothing else. */
START_TEST(test_sign_deregistration_receipt)
{
	struct signer_response response;
	struct buffer text;
	buffer_init(&text);
	open_default();

	deregistration_receipt_text(AUTHORITY, "mix", NOW, E(0), &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_DEREGISTRATION_RECEIPT, &text, &response), 0);
	assert_signed_by(&response, &text, &signing_verifier);
	ck_assert_ptr_null(response.payload);
	/* It is no registration receipt, and a registration receipt is not one. */
	ck_assert_int_eq(request(SIGNER_OP_SIGN_RECEIPT, &text, &response), DIRAUTH_ERR_REFUSED);
	receipt_text(AUTHORITY, E(1), &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_DEREGISTRATION_RECEIPT, &text, &response),
	                 DIRAUTH_ERR_REFUSED);
	ck_assert_ptr_nonnull(strstr(response.detail, "not a valid deregistration receipt"));
	vote_text(AUTHORITY, E(0), 1, &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_DEREGISTRATION_RECEIPT, &text, &response),
	                 DIRAUTH_ERR_REFUSED);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_DEREGISTRATION_RECEIPT, NULL, &response),
	                 DIRAUTH_ERR_REFUSED);
	/* Another authority's, and a namespace the signer does not know. */
	deregistration_receipt_text("authority2.dirauth.example", "mix", NOW, E(0), &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_DEREGISTRATION_RECEIPT, &text, &response),
	                 DIRAUTH_ERR_REFUSED);
	ck_assert_ptr_nonnull(strstr(response.detail, "authority2.dirauth.example"));
	deregistration_receipt_text(AUTHORITY, "unknown", NOW, E(0), &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_DEREGISTRATION_RECEIPT, &text, &response),
	                 DIRAUTH_ERR_REFUSED);
	/* Its date: within the skew of the signer's clock, either way. */
	deregistration_receipt_text(AUTHORITY, "mix", NOW - 301, E(0), &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_DEREGISTRATION_RECEIPT, &text, &response), DIRAUTH_ERR_STALE);
	deregistration_receipt_text(AUTHORITY, "mix", NOW + 301, E(0), &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_DEREGISTRATION_RECEIPT, &text, &response), DIRAUTH_ERR_STALE);
	/* Its promise, bounded like a receipt's. */
	deregistration_receipt_text(AUTHORITY, "mix", NOW, E(5) + SIGNER_RECEIPT_EPOCHS_AHEAD, &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_DEREGISTRATION_RECEIPT, &text, &response), 0);
	deregistration_receipt_text(AUTHORITY, "mix", NOW, E(5) + SIGNER_RECEIPT_EPOCHS_AHEAD + 1, &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_DEREGISTRATION_RECEIPT, &text, &response), DIRAUTH_ERR_STALE);
	ck_assert_msg(strstr(response.detail, "promises epoch"), "%s", response.detail);
	/* The clock unreadable: nothing signed. */
	clock_error = DIRAUTH_ERR_IO;
	deregistration_receipt_text(AUTHORITY, "mix", NOW, E(0), &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_DEREGISTRATION_RECEIPT, &text, &response),
	                 DIRAUTH_ERR_UNAVAILABLE);
	clock_error = 0;
	buffer_free(&text);
}
END_TEST

/* A checkpoint as text with any root: the size checks come before the ledger needs a proof. */
static void checkpoint_any_root(const char *origin, uint64_t size, struct buffer *out)
{
	struct checkpoint c;
	memset(&c, 0, sizeof(c));
	snprintf(c.origin, sizeof(c.origin), "%s", origin);
	c.tree_size = size;
	memset(c.root, 0x5a, sizeof(c.root));
	buffer_reset(out);
	ck_assert_int_eq(checkpoint_encode(&c, out), 0);
}

/* A log gets one entry per epoch: a checkpoint of a configured origin larger than the epochs
 * begun is refused and records nothing; another operator's log is not the signer's to judge. */
START_TEST(test_checkpoint_size_bounded)
{
	struct signer_response response;
	struct buffer text;
	buffer_init(&text);
	open_default();

	/* The log key's own log: at most E(5) + 1 entries by NOW + 300. */
	checkpoint_any_root(LOG_ORIGIN, E(5) + 2, &text);
	ck_assert_int_eq(checkpoint_request(SIGNER_OP_SIGN_CHECKPOINT, &text, 0, 0, &response),
	                 DIRAUTH_ERR_STALE);
	ck_assert_msg(strstr(response.detail, "entries"), "%s", response.detail);
	checkpoint_any_root(LOG_ORIGIN, 1ULL << 62, &text);
	ck_assert_int_eq(checkpoint_request(SIGNER_OP_SIGN_CHECKPOINT, &text, 0, 0, &response),
	                 DIRAUTH_ERR_STALE);
	/* Not recorded: the real log's checkpoints sign and grow. */
	checkpoint_text(LOG_ORIGIN, 4, &text);
	ck_assert_int_eq(checkpoint_request(SIGNER_OP_SIGN_CHECKPOINT, &text, 0, 4, &response), 0);
	checkpoint_text(LOG_ORIGIN, 9, &text);
	ck_assert_int_eq(checkpoint_request(SIGNER_OP_SIGN_CHECKPOINT, &text, 4, 9, &response), 0);

	/* Cosigning mail's log (its epochs 0 .. 10 begun by NOW + 300): 11 entries at most. */
	checkpoint_any_root(MAIL_ORIGIN, 12, &text);
	ck_assert_int_eq(checkpoint_request(SIGNER_OP_COSIGN_CHECKPOINT, &text, 0, 0, &response),
	                 DIRAUTH_ERR_STALE);
	checkpoint_any_root(MAIL_ORIGIN, 11, &text);
	ck_assert_int_eq(checkpoint_request(SIGNER_OP_COSIGN_CHECKPOINT, &text, 0, 0, &response), 0);
	/* An origin whose schedule has not begun has no entries yet. */
	checkpoint_any_root(FUTURE_ORIGIN, 1, &text);
	ck_assert_int_eq(checkpoint_request(SIGNER_OP_COSIGN_CHECKPOINT, &text, 0, 0, &response),
	                 DIRAUTH_ERR_STALE);
	/* A log the configuration does not name. */
	checkpoint_any_root("example.com/other-log", 1ULL << 40, &text);
	ck_assert_int_eq(checkpoint_request(SIGNER_OP_COSIGN_CHECKPOINT, &text, 0, 0, &response), 0);
	buffer_free(&text);
}
END_TEST

/* A clock that cannot be read is an error: the signer does not start on it, and while it runs
 * it refuses every signing operation, with a precise reason, and still answers queries. */
START_TEST(test_clock_unreadable)
{
	struct signer_response response;
	struct buffer text;
	char clock_path[700], detail[512];
	buffer_init(&text);

	/* A file clock whose file is missing. */
	snprintf(clock_path, sizeof(clock_path), "%s/clock", dir);
	ck_assert_int_eq(clock_open_file(clock_path, &file_clock), 0);
	struct signer_service_options options = options_with(default_certificates, 1);
	ck_assert_int_eq(open_with(&options, detail, sizeof(detail)), DIRAUTH_ERR_CONFIG);
	ck_assert_msg(strstr(detail, "the clock cannot be read"), "%s", detail);
	ck_assert_ptr_null(service);

	char now_text[32];
	int n = snprintf(now_text, sizeof(now_text), "%llu\n", (unsigned long long)NOW);
	test_write_file(clock_path, now_text, (size_t)n, 0644);
	ck_assert_int_eq(open_with(&options, detail, sizeof(detail)), 0);
	receipt_text(AUTHORITY, E(1), &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_RECEIPT, &text, &response), 0);

	/* The file goes, or holds something that is not a time: nothing is signed. */
	const char *const broken[] = {NULL, "soon\n"};
	for (size_t b = 0; b < 2; b++) {
		if (broken[b])
			test_write_file(clock_path, broken[b], strlen(broken[b]), 0644);
		else
			ck_assert_int_eq(unlink(clock_path), 0);
		receipt_text(AUTHORITY, E(1), &text);
		ck_assert_int_eq(request(SIGNER_OP_SIGN_RECEIPT, &text, &response), DIRAUTH_ERR_UNAVAILABLE);
		ck_assert_msg(strstr(response.detail, "the clock cannot be read"), "%s", response.detail);
		vote_text(AUTHORITY, E(0), 1, &text);
		ck_assert_int_eq(request(SIGNER_OP_SIGN_VOTE, &text, &response), DIRAUTH_ERR_UNAVAILABLE);
		header_text(LOG_ORIGIN, E(0), 1, &text);
		ck_assert_int_eq(request(SIGNER_OP_SIGN_SNAPSHOT_HEADER, &text, &response),
		                 DIRAUTH_ERR_UNAVAILABLE);
		checkpoint_text(LOG_ORIGIN, 2, &text);
		ck_assert_int_eq(checkpoint_request(SIGNER_OP_SIGN_CHECKPOINT, &text, 0, 2, &response),
		                 DIRAUTH_ERR_UNAVAILABLE);
		ck_assert_int_eq(checkpoint_request(SIGNER_OP_COSIGN_CHECKPOINT, &text, 0, 2, &response),
		                 DIRAUTH_ERR_UNAVAILABLE);
		/* Queries need no time. */
		ck_assert_int_eq(request(SIGNER_OP_GET_KEYS, NULL, &response), 0);
		ck_assert_int_eq(request(SIGNER_OP_GET_CERTIFICATES, NULL, &response), 0);
	}
	/* Nothing was recorded while the clock was away: the header signs once it is back. */
	test_write_file(clock_path, now_text, (size_t)n, 0644);
	header_text(LOG_ORIGIN, E(0), 2, &text);
	ck_assert_int_eq(request(SIGNER_OP_SIGN_SNAPSHOT_HEADER, &text, &response), 0);

	/* Refusals without a time are audited with "-" for it. */
	size_t len;
	char *log = (char *)test_read_file(audit_path, &len);
	ck_assert_ptr_nonnull(
	    strstr(log, " epoch - dirauth-signer: - refuse receipt origin=- epoch=- reason=unavailable\n"));
	ck_assert_ptr_nonnull(strstr(
	    log, " epoch - dirauth-signer: - refuse snapshot-header origin=- epoch=- reason=unavailable\n"));
	free(log);
	buffer_free(&text);
}
END_TEST

START_TEST(test_open_refuses_namespaces)
{
	char detail[512];
	struct signer_namespace namespaces[2];
	struct signer_service_options options = options_with(default_certificates, 1);

	options.namespace_count = 0;
	ck_assert_int_eq(open_with(&options, detail, sizeof(detail)), DIRAUTH_ERR_CONFIG);
	ck_assert_ptr_nonnull(strstr(detail, "namespaces"));

	memcpy(namespaces, test_namespaces, sizeof(namespaces));
	options.namespaces = namespaces;
	options.namespace_count = 2;
	/* Twice the same origin. */
	snprintf(namespaces[1].origin, sizeof(namespaces[1].origin), "%s", LOG_ORIGIN);
	ck_assert_int_eq(open_with(&options, detail, sizeof(detail)), DIRAUTH_ERR_CONFIG);
	ck_assert_ptr_nonnull(strstr(detail, "twice"));
	/* A name or an origin that does not follow dirauthd's rules. */
	memcpy(namespaces, test_namespaces, sizeof(namespaces));
	snprintf(namespaces[1].name, sizeof(namespaces[1].name), "Mail");
	ck_assert_int_eq(open_with(&options, detail, sizeof(detail)), DIRAUTH_ERR_CONFIG);
	memcpy(namespaces, test_namespaces, sizeof(namespaces));
	snprintf(namespaces[1].origin, sizeof(namespaces[1].origin), "with space");
	ck_assert_int_eq(open_with(&options, detail, sizeof(detail)), DIRAUTH_ERR_CONFIG);
	/* A schedule out of range. */
	memcpy(namespaces, test_namespaces, sizeof(namespaces));
	namespaces[1].schedule.length = 0;
	ck_assert_int_eq(open_with(&options, detail, sizeof(detail)), DIRAUTH_ERR_CONFIG);
	ck_assert_ptr_nonnull(strstr(detail, "schedule"));
	/* The log key's name is the origin of no configured namespace. */
	memcpy(namespaces, test_namespaces + 1, sizeof(namespaces[0]));
	options.namespace_count = 1;
	ck_assert_int_eq(open_with(&options, detail, sizeof(detail)), DIRAUTH_ERR_CONFIG);
	ck_assert_msg(strstr(detail, "log key"), "%s", detail);
	/* Without a log key, that namespace alone is enough. */
	options.log_key_path = NULL;
	ck_assert_int_eq(open_with(&options, detail, sizeof(detail)), 0);
}
END_TEST

/* Every operation of the protocol is answered by the signer's row for it, and nothing else. */
START_TEST(test_operation_table)
{
	struct signer_response response;
	struct buffer junk;
	buffer_init(&junk);
	buffer_append_string(&junk, "please sign this\n");
	open_default();
	for (unsigned op = 0; op <= UINT8_MAX; op++) {
		const struct signer_operation_info *info = signer_operation_find((uint8_t)op);
		if (!info) {
			ck_assert_int_eq(request((uint8_t)op, &junk, &response), DIRAUTH_ERR_REFUSED);
			ck_assert_ptr_nonnull(strstr(response.detail, "unknown operation"));
		} else if (info->kind == SIGNER_OPERATION_SIGNS) {
			/* Raw text is no statement of any kind. */
			ck_assert_int_eq(request((uint8_t)op, &junk, &response), DIRAUTH_ERR_REFUSED);
			ck_assert_ptr_nonnull(strstr(response.detail, "is not a valid"));
		} else if (info->takes_text) {
			struct buffer origin;
			buffer_init(&origin);
			buffer_append_string(&origin, LOG_ORIGIN);
			ck_assert_int_eq(request((uint8_t)op, &origin, &response), 0);
			buffer_free(&origin);
		} else {
			ck_assert_int_eq(request((uint8_t)op, NULL, &response), 0);
			ck_assert_uint_gt(response.payload_len, 0);
		}
	}
	buffer_free(&junk);
}
END_TEST

static Suite *service_suite(void)
{
	Suite *suite = suite_create("service");
	TCase *tc = tcase_create("service");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_open_and_get_keys);
	tcase_add_test(tc, test_get_certificates);
	tcase_add_test(tc, test_open_refuses_certificate_problems);
	tcase_add_test(tc, test_open_refuses_other_authority);
	tcase_add_test(tc, test_open_refuses_key_modes);
	tcase_add_test(tc, test_sign_receipt);
	tcase_add_test(tc, test_sign_vote);
	tcase_add_test(tc, test_sign_snapshot_header);
	tcase_add_test(tc, test_sign_checkpoint);
	tcase_add_test(tc, test_cosign_checkpoint);
	tcase_add_test(tc, test_one_tree_for_both_keys);
	tcase_add_test(tc, test_key_not_configured);
	tcase_add_test(tc, test_certificate_expires_while_running);
	tcase_add_test(tc, test_audit_lines);
	tcase_add_test(tc, test_statement_time_and_epoch_bounds);
	tcase_add_test(tc, test_epoch_schedule);
	tcase_add_test(tc, test_unknown_namespaces_refused);
	tcase_add_test(tc, test_receipt_promise_bounded);
	tcase_add_test(tc, test_sign_deregistration_receipt);
	tcase_add_test(tc, test_checkpoint_size_bounded);
	tcase_add_test(tc, test_clock_unreadable);
	tcase_add_test(tc, test_open_refuses_namespaces);
	tcase_add_test(tc, test_operation_table);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(service_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
