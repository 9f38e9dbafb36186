/*
 * check_certify.c: dirauthctl identity-keygen, certify, rotate and certificate show, through the
 * functions of certify.h and through the built binary.
 *
 * The central case is rotation with an overlap window (test_rotation_with_overlap): an authority
 * rotates from an old signing key to a new one; during the overlap both certificates verify with
 * certificate_keyring_verify, and once the old certificate's window has ended a header signed by
 * the old key is refused while one signed by the new key is accepted, by the keyring and by
 * fetch's header check alike. Around it, every refusal: overwriting, empty and overlong windows,
 * name mismatches, the same key in both roles, a gap between the windows without --allow-gap,
 * a previous certificate from another identity, unsafe or missing key files.
 */
#include "base/buffer.h"
#include "schema/certificate.h"
#include "ctl/certify.h"
#include "crypto/crypto.h"
#include "base/error.h"
#include "ctl/keyring.h"
#include "verify/snapshot.h"
#include "signer/key.h"
#include "schema/note.h"
#include "ctl/report.h"
#include "schema/snapshot.h"
#include "test_support.h"
#include "schema/trust_bundle.h"

#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define NAME "authority-1.test"
#define T0   ((uint64_t)1767225600) /* 2026-01-01 */
#define DAY  ((uint64_t)86400)

static char directory[4096];
static struct signer_key *identity;
static struct signer_key *signing;
static char identity_path[4200];
static char signing_path[4200];
static char signing_verifier[NOTE_VERIFIER_KEY_MAX + 1];

static const char *temp_path(const char *name)
{
	/* Enough slots that no test reuses one while an earlier path is still in use. */
	static char paths[64][4200];
	static int next;
	char *path = paths[next++ % 64];
	snprintf(path, sizeof(paths[0]), "%s/%s", directory, name);
	return path;
}

static int file_exists(const char *path)
{
	struct stat info;
	return lstat(path, &info) == 0;
}

static void setup(void)
{
	test_make_tempdir(directory, sizeof(directory));
	ck_assert_int_eq(signer_key_generate(NAME, &identity), 0);
	ck_assert_int_eq(signer_key_generate(NAME, &signing), 0);
	snprintf(identity_path, sizeof(identity_path), "%s/identity.key", directory);
	snprintf(signing_path, sizeof(signing_path), "%s/signing.key", directory);
	ck_assert_int_eq(signer_key_save(identity, identity_path), 0);
	ck_assert_int_eq(signer_key_save(signing, signing_path), 0);
	note_verifier_format(signer_key_verifier(signing), signing_verifier);
}

static void teardown(void)
{
	signer_key_free(identity);
	signer_key_free(signing);
	test_remove_tree(directory);
}

static int certify(const char *verifier, const char *key_path, uint64_t after, uint64_t until,
                   const char *out, struct certificate *certificate, struct ctl_report *report)
{
	struct ctl_certify_options options = {
	    .identity_path = identity_path,
	    .signing_verifier = verifier,
	    .signing_key_path = key_path,
	    .valid_after = after,
	    .valid_until = until,
	    .out_path = out,
	};
	struct buffer note;
	int rc;

	buffer_init(&note);
	ctl_report_init(report);
	rc = ctl_certify_run(&options, certificate, &note, report);
	buffer_free(&note);
	return rc;
}

static void read_certificate_file(const char *path, struct certificate *out)
{
	size_t len = 0;
	uint8_t *data = test_read_file(path, &len);
	ck_assert_int_eq(certificate_parse_signed(data, len, out), 0);
	free(data);
}

START_TEST(test_certify_issues_a_verifiable_certificate)
{
	const char *out = temp_path("signing.cert");
	const char *second = temp_path("second.cert");
	struct certificate certificate, parsed;
	struct ctl_report report;
	struct stat info;

	ck_assert_msg(certify(signing_verifier, NULL, T0, T0 + 30 * DAY, out, &certificate, &report) == 0,
	              "%s", report.message);
	ck_assert_int_eq(stat(out, &info), 0);
	ck_assert_int_eq(info.st_mode & 0777, 0644);
	read_certificate_file(out, &parsed);
	ck_assert_str_eq(parsed.authority, NAME);
	ck_assert_int_eq(memcmp(&parsed.identity, signer_key_verifier(identity), sizeof(parsed.identity)), 0);
	ck_assert_int_eq(
	    memcmp(&parsed.signing_key, signer_key_verifier(signing), sizeof(parsed.signing_key)), 0);
	ck_assert_uint_eq(parsed.valid_after, T0);
	ck_assert_uint_eq(parsed.valid_until, T0 + 30 * DAY);
	ck_assert_int_eq(memcmp(&parsed, &certificate, sizeof(parsed)), 0);

	/* From the signing key file instead of its verifier: the same certificate. */
	ck_assert_msg(certify(NULL, signing_path, T0, T0 + 30 * DAY, second, &certificate, &report) == 0,
	              "%s", report.message);
	read_certificate_file(second, &parsed);
	ck_assert_int_eq(
	    memcmp(&parsed.signing_key, signer_key_verifier(signing), sizeof(parsed.signing_key)), 0);
	/* The longest window is allowed. */
	ck_assert_int_eq(certify(signing_verifier, NULL, T0, T0 + CERTIFICATE_MAX_WINDOW,
	                         temp_path("long.cert"), &certificate, &report),
	                 0);
}
END_TEST

START_TEST(test_certify_refusals)
{
	const char *out = temp_path("signing.cert");
	char identity_verifier[NOTE_VERIFIER_KEY_MAX + 1];
	char other_verifier[NOTE_VERIFIER_KEY_MAX + 1];
	struct signer_key *other = NULL;
	struct certificate certificate;
	struct ctl_report report;
	uint64_t until = 0;
	uint8_t *before;
	uint8_t *after;
	size_t before_len = 0, after_len = 0;

	/* Never over an existing certificate: the file is left as it was. */
	ck_assert_int_eq(certify(signing_verifier, NULL, T0, T0 + DAY, out, &certificate, &report), 0);
	before = test_read_file(out, &before_len);
	ck_assert_int_eq(certify(signing_verifier, NULL, T0 + 5, T0 + 2 * DAY, out, &certificate, &report),
	                 DIRAUTH_ERR_EXISTS);
	ck_assert_int_eq(report.exit_code, 73);
	ck_assert_ptr_nonnull(strstr(report.message, "already exists"));
	after = test_read_file(out, &after_len);
	ck_assert_uint_eq(before_len, after_len);
	ck_assert_int_eq(memcmp(before, after, before_len), 0);
	free(before);
	free(after);

	/* A signing key of another name. */
	ck_assert_int_eq(signer_key_generate("authority-2.test", &other), 0);
	note_verifier_format(signer_key_verifier(other), other_verifier);
	ck_assert_int_eq(
	    certify(other_verifier, NULL, T0, T0 + DAY, temp_path("a.cert"), &certificate, &report),
	    DIRAUTH_ERR_MISMATCH);
	ck_assert_int_eq(report.exit_code, 65);
	ck_assert_ptr_nonnull(strstr(report.message, "name mismatch"));
	ck_assert(!file_exists(temp_path("a.cert")));
	signer_key_free(other);

	/* The identity key certifying itself. */
	note_verifier_format(signer_key_verifier(identity), identity_verifier);
	ck_assert_int_eq(
	    certify(identity_verifier, NULL, T0, T0 + DAY, temp_path("b.cert"), &certificate, &report),
	    DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(report.exit_code, 65);
	ck_assert_ptr_nonnull(strstr(report.message, "identity key itself"));
	ck_assert(!file_exists(temp_path("b.cert")));

	/* Windows: empty, reversed, too long (by days or by end), and both or neither given. */
	ck_assert_int_eq(certify(signing_verifier, NULL, T0, T0, temp_path("c.cert"), &certificate, &report),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(report.exit_code, 64);
	ck_assert_int_eq(certify(signing_verifier, NULL, T0, T0 + CERTIFICATE_MAX_WINDOW + 1,
	                         temp_path("c.cert"), &certificate, &report),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(report.exit_code, 64);
	ck_assert(!file_exists(temp_path("c.cert")));
	ctl_report_init(&report);
	ck_assert_int_eq(ctl_certify_window("certify", T0, 0, 0, &until, &report), DIRAUTH_ERR_SYNTAX);
	ck_assert_ptr_nonnull(strstr(report.message, "give exactly one of --days"));
	ctl_report_init(&report);
	ck_assert_int_eq(ctl_certify_window("certify", T0, 0, T0, &until, &report), DIRAUTH_ERR_SYNTAX);
	ck_assert_ptr_nonnull(strstr(report.message, "empty window"));
	ctl_report_init(&report);
	ck_assert_int_eq(ctl_certify_window("certify", T0, 0, T0 - 1, &until, &report), DIRAUTH_ERR_SYNTAX);
	ck_assert_ptr_nonnull(strstr(report.message, "empty window"));
	ctl_report_init(&report);
	ck_assert_int_eq(ctl_certify_window("certify", T0, 401, 0, &until, &report), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(report.exit_code, 64);
	ck_assert_ptr_nonnull(strstr(report.message, "at most 400 days"));
	ctl_report_init(&report);
	ck_assert_int_eq(ctl_certify_window("certify", T0, 2, T0 + 5, &until, &report), DIRAUTH_ERR_SYNTAX);
	ctl_report_init(&report);
	ck_assert_int_eq(ctl_certify_window("certify", UINT64_MAX - DAY, 2, 0, &until, &report),
	                 DIRAUTH_ERR_SYNTAX);
	ctl_report_init(&report);
	ck_assert_int_eq(ctl_certify_window("certify", T0, 400, 0, &until, &report), 0);
	ck_assert_uint_eq(until, T0 + 400 * DAY);

	/* Neither or both ways of naming the signing key; a verifier that does not parse. */
	ck_assert_int_eq(certify(NULL, NULL, T0, T0 + DAY, temp_path("d.cert"), &certificate, &report),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(report.exit_code, 64);
	ck_assert_int_eq(
	    certify(signing_verifier, signing_path, T0, T0 + DAY, temp_path("d.cert"), &certificate, &report),
	    DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(report.exit_code, 64);
	ck_assert_int_ne(certify("authority-1.test+00000000+AAAA", NULL, T0, T0 + DAY, temp_path("d.cert"),
	                         &certificate, &report),
	                 0);
	ck_assert_int_eq(report.exit_code, 65);
	ck_assert(!file_exists(temp_path("d.cert")));

	/* The identity key file: readable by others (77), missing (66). */
	ck_assert_int_eq(chmod(identity_path, 0640), 0);
	ck_assert_int_eq(
	    certify(signing_verifier, NULL, T0, T0 + DAY, temp_path("e.cert"), &certificate, &report),
	    DIRAUTH_ERR_PERMISSION);
	ck_assert_int_eq(report.exit_code, 77);
	ck_assert_int_eq(chmod(identity_path, 0600), 0);
	ck_assert_int_eq(unlink(identity_path), 0);
	ck_assert_int_eq(
	    certify(signing_verifier, NULL, T0, T0 + DAY, temp_path("e.cert"), &certificate, &report),
	    DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(report.exit_code, 66);
	ck_assert(!file_exists(temp_path("e.cert")));
}
END_TEST

static int rotate(const char *previous, uint64_t after, uint64_t days, int allow_gap, const char *key_out,
                  const char *cert_out, struct ctl_rotate_result *result, struct ctl_report *report)
{
	struct ctl_rotate_options options = {
	    .identity_path = identity_path,
	    .name = NAME,
	    .key_out = key_out,
	    .cert_out = cert_out,
	    .previous_path = previous,
	    .valid_after = after,
	    .days = days,
	    .allow_gap = allow_gap,
	};

	ctl_report_init(report);
	return ctl_rotate_run(&options, result, report);
}

/* A snapshot header for namespace mix whose valid-after is at, signed by key. */
static void signed_header(const struct signer_key *key, uint64_t at, struct buffer *out)
{
	struct snapshot_header header;
	struct note_signature signature;
	struct buffer text;
	struct buffer body;

	memset(&header, 0, sizeof(header));
	buffer_init(&text);
	buffer_init(&body);
	strcpy(header.namespace_name, "mix");
	strcpy(header.origin, "dirauth.test/mix");
	ck_assert_int_eq(snapshot_body_encode("mix", at, NULL, 0, &body), 0);
	header.epoch = at;
	header.valid_after = at;
	header.fresh_until = at + 60;
	header.valid_until = at + 180;
	ck_assert_int_eq(snapshot_records_root(NULL, 0, header.records_root), 0);
	header.body_size = body.len;
	ck_assert_int_eq(crypto_sha256(body.data, body.len, header.body_sha256), 0);
	header.consensus_method = SNAPSHOT_CONSENSUS_METHOD;
	ck_assert_int_eq(snapshot_header_encode(&header, &text), 0);
	ck_assert_int_eq(signer_key_sign(key, text.data, text.len, &signature), 0);
	ck_assert_int_eq(note_format(text.data, text.len, &signature, 1, out), 0);
	buffer_free(&text);
	buffer_free(&body);
}

/* certificate_keyring_verify of a header signed by key at time at, threshold 1. */
static int keyring_verdict(const struct certificate_keyring *ring, const struct signer_key *key, uint64_t at)
{
	struct buffer note_bytes;
	struct note *note = NULL;
	int rc;

	buffer_init(&note_bytes);
	signed_header(key, at, &note_bytes);
	ck_assert_int_eq(note_parse(note_bytes.data, note_bytes.len, &note), 0);
	rc = certificate_keyring_verify(ring, note, at, 1, NULL, NULL, 0);
	note_free(note);
	buffer_free(&note_bytes);
	return rc;
}

/* The header check every client runs (verify_snapshot_header: fetch's and lookup's first step, in
 * libdirauth) of a header signed by key at time at, with the certificates, its refusal in report
 * as a command reports it. */
static int fetch_verdict(const struct trust_bundle *bundle, const struct buffer *certificates,
                         const struct signer_key *key, uint64_t at, struct ctl_report *report)
{
	struct snapshot_header header;
	struct verify_signers signers;
	struct buffer note_bytes;
	char detail[VERIFY_DETAIL_MAX];
	int rc;

	buffer_init(&note_bytes);
	signed_header(key, at, &note_bytes);
	ctl_report_init(report);
	rc = verify_snapshot_header(bundle, "mix", certificates->data, certificates->len, note_bytes.data,
	                            note_bytes.len, at, NULL, &header, &signers, detail, sizeof(detail));
	if (rc != 0)
		ctl_verification_fail(report, "fetch mix", rc, detail);
	buffer_free(&note_bytes);
	return rc;
}

/*
 * Rotation works with an overlap window.
 *
 *   old key:  certified [T0, T0+30d)
 *   new key:  rotated in with --valid-after T0+25d --days 30: certified [T0+25d, T0+55d)
 *   overlap:  [T0+25d, T0+30d), five days in which both keys are valid
 */
START_TEST(test_rotation_with_overlap)
{
	const char *old_cert = temp_path("old.cert");
	const char *new_key = temp_path("new.key");
	const char *new_cert = temp_path("new.cert");
	struct certificate_keyring ring;
	struct ctl_rotate_result result;
	struct certificate certificate;
	struct trust_bundle bundle;
	struct ctl_report report;
	struct signer_key *rotated = NULL;
	struct buffer notes[2];
	struct buffer certificates;
	struct stat info;
	size_t added = 0;

	ck_assert_int_eq(certify(signing_verifier, NULL, T0, T0 + 30 * DAY, old_cert, &certificate, &report),
	                 0);
	ck_assert_msg(rotate(old_cert, T0 + 25 * DAY, 30, 0, new_key, new_cert, &result, &report) == 0, "%s",
	              report.message);
	ck_assert_uint_eq(result.overlap_seconds, 5 * DAY);
	ck_assert_uint_eq(result.gap_seconds, 0);
	ck_assert_uint_eq(result.previous.valid_until, T0 + 30 * DAY);
	ck_assert_uint_eq(result.certificate.valid_after, T0 + 25 * DAY);
	ck_assert_uint_eq(result.certificate.valid_until, T0 + 55 * DAY);
	ck_assert_int_eq(stat(new_key, &info), 0);
	ck_assert_int_eq(info.st_mode & 0777, 0600);
	ck_assert_int_eq(stat(new_cert, &info), 0);
	ck_assert_int_eq(info.st_mode & 0777, 0644);
	ck_assert_int_eq(signer_key_load(new_key, &rotated), 0);
	ck_assert_str_eq(signer_key_verifier(rotated)->name, NAME);
	ck_assert_int_ne(signer_key_verifier(rotated)->key_id, signer_key_verifier(signing)->key_id);

	/* The verifier's side: the identity pinned, the signer serving both certificates, new first. */
	buffer_init(&notes[0]);
	buffer_init(&notes[1]);
	buffer_init(&certificates);
	{
		size_t len = 0;
		uint8_t *data = test_read_file(new_cert, &len);
		ck_assert_int_eq(buffer_append(&notes[0], data, len), 0);
		free(data);
		data = test_read_file(old_cert, &len);
		ck_assert_int_eq(buffer_append(&notes[1], data, len), 0);
		free(data);
	}
	{
		const uint8_t *pointers[2] = {notes[0].data, notes[1].data};
		size_t lengths[2] = {notes[0].len, notes[1].len};
		ck_assert_int_eq(certificate_bundle_encode(pointers, lengths, 2, &certificates), 0);
	}
	ck_assert_int_eq(certificate_keyring_init(&ring, signer_key_verifier(identity), 1), 0);
	ck_assert_int_eq(certificate_keyring_add_bundle(&ring, certificates.data, certificates.len, &added),
	                 0);
	ck_assert_uint_eq(added, 2);

	/* Before the overlap only the old key is valid. */
	ck_assert_int_eq(keyring_verdict(&ring, signing, T0 + 10 * DAY), 0);
	ck_assert_int_eq(keyring_verdict(&ring, rotated, T0 + 10 * DAY), DIRAUTH_ERR_UNKNOWN_KEY);
	/* In the overlap both certificates verify: the first second, a middle and the last second. */
	ck_assert_int_eq(keyring_verdict(&ring, signing, T0 + 25 * DAY), 0);
	ck_assert_int_eq(keyring_verdict(&ring, rotated, T0 + 25 * DAY), 0);
	ck_assert_int_eq(keyring_verdict(&ring, signing, T0 + 27 * DAY), 0);
	ck_assert_int_eq(keyring_verdict(&ring, rotated, T0 + 27 * DAY), 0);
	ck_assert_int_eq(keyring_verdict(&ring, signing, T0 + 30 * DAY - 1), 0);
	ck_assert_int_eq(keyring_verdict(&ring, rotated, T0 + 30 * DAY - 1), 0);
	/* After the old window: the old key's header is refused, the new key's accepted. */
	ck_assert_int_eq(keyring_verdict(&ring, signing, T0 + 30 * DAY), DIRAUTH_ERR_UNKNOWN_KEY);
	ck_assert_int_eq(keyring_verdict(&ring, rotated, T0 + 30 * DAY), 0);
	ck_assert_int_eq(keyring_verdict(&ring, signing, T0 + 31 * DAY), DIRAUTH_ERR_UNKNOWN_KEY);
	ck_assert_int_eq(keyring_verdict(&ring, rotated, T0 + 31 * DAY), 0);
	/* And after the new window nothing is valid. */
	ck_assert_int_eq(keyring_verdict(&ring, rotated, T0 + 55 * DAY), DIRAUTH_ERR_UNKNOWN_KEY);

	/* The same through fetch's header check, as a mirror runs it. */
	memset(&bundle, 0, sizeof(bundle));
	bundle.namespace_count = 1;
	strcpy(bundle.namespaces[0].name, "mix");
	strcpy(bundle.namespaces[0].origin, "dirauth.test/mix");
	bundle.authority_count = 1;
	bundle.authorities[0] = *signer_key_verifier(identity);
	bundle.threshold = 1;
	bundle.max_body_compressed = 1 << 20;
	bundle.max_body_uncompressed = 1 << 20;
	bundle.max_records = 10;
	ck_assert_int_eq(fetch_verdict(&bundle, &certificates, signing, T0 + 27 * DAY, &report), 0);
	ck_assert_int_eq(fetch_verdict(&bundle, &certificates, rotated, T0 + 27 * DAY, &report), 0);
	ck_assert_int_eq(fetch_verdict(&bundle, &certificates, signing, T0 + 31 * DAY, &report),
	                 DIRAUTH_ERR_UNKNOWN_KEY);
	ck_assert_int_eq(report.exit_code, 65);
	ck_assert_msg(strstr(report.message, "signed by a key not certified by any pinned identity at") !=
	                      NULL &&
	                  strstr(report.message, "is certified only from 1767225600") != NULL,
	              "%s", report.message);
	ck_assert_msg(fetch_verdict(&bundle, &certificates, rotated, T0 + 31 * DAY, &report) == 0, "%s",
	              report.message);

	/* Rotating again from the new certificate chains on. */
	ck_assert_int_eq(rotate(new_cert, T0 + 50 * DAY, 30, 0, temp_path("third.key"),
	                        temp_path("third.cert"), &result, &report),
	                 0);
	ck_assert_uint_eq(result.overlap_seconds, 5 * DAY);
	signer_key_free(rotated);
	buffer_free(&notes[0]);
	buffer_free(&notes[1]);
	buffer_free(&certificates);
}
END_TEST

START_TEST(test_rotate_refusals)
{
	const char *old_cert = temp_path("old.cert");
	const char *new_key = temp_path("new.key");
	const char *new_cert = temp_path("new.cert");
	struct ctl_rotate_result result;
	struct certificate certificate;
	struct ctl_report report;

	ck_assert_int_eq(certify(signing_verifier, NULL, T0, T0 + 30 * DAY, old_cert, &certificate, &report),
	                 0);

	/* A gap of one second is refused unless allowed, and nothing is written. */
	ck_assert_int_eq(rotate(old_cert, T0 + 30 * DAY + 1, 30, 0, new_key, new_cert, &result, &report),
	                 DIRAUTH_ERR_REFUSED);
	ck_assert_int_eq(report.exit_code, 65);
	ck_assert_msg(strstr(report.message, "rotate: gap:") != NULL &&
	                  strstr(report.message, "leaving 1 seconds without a valid signing key") != NULL &&
	                  strstr(report.message, "--allow-gap") != NULL,
	              "%s", report.message);
	ck_assert(!file_exists(new_key));
	ck_assert(!file_exists(new_cert));
	/* Starting exactly at the previous valid-until is no gap (and no overlap). */
	ck_assert_int_eq(rotate(old_cert, T0 + 30 * DAY, 30, 0, temp_path("edge.key"), temp_path("edge.cert"),
	                        &result, &report),
	                 0);
	ck_assert_uint_eq(result.overlap_seconds, 0);
	/* With --allow-gap the gap is accepted and reported. */
	ck_assert_int_eq(rotate(old_cert, T0 + 31 * DAY, 30, 1, new_key, new_cert, &result, &report), 0);
	ck_assert_uint_eq(result.gap_seconds, DAY);
	ck_assert(file_exists(new_key));
	ck_assert(file_exists(new_cert));

	/* Existing outputs: refused before anything is generated, the other file not created. */
	ck_assert_int_eq(
	    rotate(old_cert, T0 + 25 * DAY, 30, 0, new_key, temp_path("other.cert"), &result, &report),
	    DIRAUTH_ERR_EXISTS);
	ck_assert_int_eq(report.exit_code, 73);
	ck_assert(!file_exists(temp_path("other.cert")));
	ck_assert_int_eq(
	    rotate(old_cert, T0 + 25 * DAY, 30, 0, temp_path("other.key"), new_cert, &result, &report),
	    DIRAUTH_ERR_EXISTS);
	ck_assert_int_eq(report.exit_code, 73);
	ck_assert(!file_exists(temp_path("other.key")));

	/* A new window that does not outlast the previous one. */
	ck_assert_int_eq(rotate(old_cert, T0 + 5 * DAY, 20, 0, temp_path("short.key"),
	                        temp_path("short.cert"), &result, &report),
	                 DIRAUTH_ERR_REFUSED);
	ck_assert_int_eq(report.exit_code, 65);
	ck_assert_ptr_nonnull(strstr(report.message, "no later than the previous one"));
	ck_assert(!file_exists(temp_path("short.key")));

	/* A window refused by length, a missing previous certificate, a malformed one. */
	ck_assert_int_eq(rotate(old_cert, T0 + 25 * DAY, 401, 0, temp_path("x.key"), temp_path("x.cert"),
	                        &result, &report),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(report.exit_code, 64);
	ck_assert_int_eq(rotate(temp_path("none.cert"), T0 + 25 * DAY, 30, 0, temp_path("x.key"),
	                        temp_path("x.cert"), &result, &report),
	                 DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(report.exit_code, 66);
	test_write_file(temp_path("garbage.cert"), "not a certificate\n", 18, 0644);
	ck_assert_int_ne(rotate(temp_path("garbage.cert"), T0 + 25 * DAY, 30, 0, temp_path("x.key"),
	                        temp_path("x.cert"), &result, &report),
	                 0);
	ck_assert_int_eq(report.exit_code, 65);
	ck_assert(!file_exists(temp_path("x.key")));

	/* A previous certificate issued by another identity key of the same name. */
	{
		struct signer_key *stranger = NULL;
		struct ctl_rotate_options options = {
		    .identity_path = identity_path,
		    .name = NAME,
		    .key_out = temp_path("y.key"),
		    .cert_out = temp_path("y.cert"),
		    .previous_path = temp_path("stranger.cert"),
		    .valid_after = T0 + 25 * DAY,
		    .days = 30,
		};
		struct certificate stranger_certificate;
		struct buffer note;
		ck_assert_int_eq(signer_key_generate(NAME, &stranger), 0);
		buffer_init(&note);
		ctl_report_init(&report);
		ck_assert_int_eq(ctl_certificate_issue("test", stranger, signer_key_verifier(signing), T0,
		                                       T0 + 30 * DAY, &stranger_certificate, &note, &report),
		                 0);
		test_write_file(options.previous_path, note.data, note.len, 0644);
		ck_assert_int_eq(ctl_rotate_run(&options, &result, &report), DIRAUTH_ERR_MISMATCH);
		ck_assert_int_eq(report.exit_code, 65);
		ck_assert_ptr_nonnull(strstr(report.message, "issued by another identity key"));
		ck_assert(!file_exists(temp_path("y.key")));
		/* And --name must be the identity key's name. */
		options.name = "authority-2.test";
		ctl_report_init(&report);
		ck_assert_int_eq(ctl_rotate_run(&options, &result, &report), DIRAUTH_ERR_MISMATCH);
		ck_assert_int_eq(report.exit_code, 65);
		ck_assert_ptr_nonnull(strstr(report.message, "name mismatch"));
		buffer_free(&note);
		signer_key_free(stranger);
	}
}
END_TEST

START_TEST(test_certificate_show)
{
	const char *cert = temp_path("signing.cert");
	struct ctl_certificate_listing *listing = malloc(sizeof(*listing));
	struct trust_bundle bundle;
	struct certificate certificate;
	struct ctl_report report;
	struct buffer framed;
	uint8_t *data;
	size_t len = 0;

	ck_assert_ptr_nonnull(listing);
	ck_assert_int_eq(certify(signing_verifier, NULL, T0, T0 + 30 * DAY, cert, &certificate, &report), 0);
	memset(&bundle, 0, sizeof(bundle));
	bundle.authority_count = 1;
	bundle.authorities[0] = *signer_key_verifier(identity);

	ctl_report_init(&report);
	ck_assert_int_eq(ctl_certificate_show(cert, &bundle, T0 + DAY, listing, &report), 0);
	ck_assert_int_eq(listing->is_bundle, 0);
	ck_assert_uint_eq(listing->count, 1);
	ck_assert_int_eq(listing->entries[0].verified, 1);
	ck_assert_int_eq(listing->entries[0].pinned, 1);
	ck_assert_ptr_nonnull(strstr(listing->entries[0].description, "valid now"));
	ck_assert_int_eq(ctl_certificate_show(cert, NULL, T0 + 30 * DAY, listing, &report), 0);
	ck_assert_ptr_nonnull(strstr(listing->entries[0].description, "expired"));
	ck_assert_int_eq(ctl_certificate_show(cert, NULL, T0 - 1, listing, &report), 0);
	ck_assert_ptr_nonnull(strstr(listing->entries[0].description, "not yet valid"));

	/* A bundle of two, as fetch stores it. */
	data = test_read_file(cert, &len);
	buffer_init(&framed);
	{
		const uint8_t *pointers[2] = {data, data};
		size_t lengths[2] = {len, len};
		ck_assert_int_eq(certificate_bundle_encode(pointers, lengths, 2, &framed), 0);
	}
	test_write_file(temp_path("certificates"), framed.data, framed.len, 0644);
	ck_assert_int_eq(ctl_certificate_show(temp_path("certificates"), &bundle, T0, listing, &report), 0);
	ck_assert_int_eq(listing->is_bundle, 1);
	ck_assert_uint_eq(listing->count, 2);

	/* Not pinned by the bundle: 65. */
	bundle.authorities[0] = *signer_key_verifier(signing);
	ctl_report_init(&report);
	ck_assert_int_eq(ctl_certificate_show(cert, &bundle, T0, listing, &report), DIRAUTH_ERR_UNKNOWN_KEY);
	ck_assert_int_eq(report.exit_code, 65);
	ck_assert_ptr_nonnull(strstr(report.message, "is not pinned by the trust bundle"));
	ck_assert_int_eq(listing->entries[0].verified, 1);
	ck_assert_int_eq(listing->entries[0].pinned, 0);

	/* A damaged signature: 65, listed as refused. */
	data[len - 5] = data[len - 5] == 'A' ? 'B' : 'A';
	test_write_file(temp_path("damaged.cert"), data, len, 0644);
	ctl_report_init(&report);
	ck_assert_int_ne(ctl_certificate_show(temp_path("damaged.cert"), NULL, T0, listing, &report), 0);
	ck_assert_int_eq(report.exit_code, 65);
	ck_assert_int_eq(listing->entries[0].verified, 0);
	/* Missing: 66. */
	ctl_report_init(&report);
	ck_assert_int_eq(ctl_certificate_show(temp_path("none"), NULL, T0, listing, &report),
	                 DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(report.exit_code, 66);
	free(data);
	buffer_free(&framed);
	free(listing);
}
END_TEST

/* The program, as an operator runs it. */

/* Runs dirauthctl with args (NULL-terminated, without argv[0]). */
static void run(const char *const *args, struct test_outcome *outcome)
{
	test_run_program(test_binary_path("ctl/dirauthctl"), args, directory, outcome);
}

/* Success, with word on stdout and nothing on stderr. */
static void expect_success(const char *const *args, const char *word)
{
	struct test_outcome outcome;

	run(args, &outcome);
	ck_assert_msg(outcome.status == 0, "exit %d; stderr: %s", outcome.status, outcome.err);
	ck_assert_uint_eq(outcome.err_len, 0);
	ck_assert_msg(strstr(outcome.out, word) != NULL, "stdout '%s' lacks '%s'", outcome.out, word);
	test_outcome_free(&outcome);
}

/* A failure: the status, and exactly one stderr line "dirauthctl: ..." containing word. */
static void expect_failure(const char *const *args, int status, const char *word)
{
	struct test_outcome outcome;

	run(args, &outcome);
	ck_assert_msg(outcome.status == status, "exit %d, expected %d; stderr: %s", outcome.status, status,
	              outcome.err);
	ck_assert_msg(strncmp(outcome.err, "dirauthctl: ", 12) == 0, "stderr: %s", outcome.err);
	ck_assert_msg(strchr(outcome.err, '\n') == outcome.err + outcome.err_len - 1, "not one line: %s",
	              outcome.err);
	ck_assert_msg(strstr(outcome.err, word) != NULL, "stderr '%s' lacks '%s'", outcome.err, word);
	test_outcome_free(&outcome);
}

START_TEST(test_program_identity_keygen_certify_rotate_show)
{
	const char *offline = temp_path("offline-identity.key");
	const char *online = temp_path("online.key");
	const char *cert = temp_path("online.cert");
	const char *bundle_path = temp_path("trust.txt");
	const char *other_bundle = temp_path("other-trust.txt");
	char verifier_text[NOTE_VERIFIER_KEY_MAX + 1];
	char bundle_text[1024];
	struct note_verifier pinned;
	struct test_outcome outcome;
	struct certificate certificate;
	struct stat info;
	const char *line;

	/* identity-keygen says what the key is for and prints a pasteable trust-bundle line. */
	{
		const char *const args[] = {"identity-keygen", "--name", NAME, "--out", offline, NULL};
		run(args, &outcome);
		ck_assert_msg(outcome.status == 0, "%s", outcome.err);
		ck_assert_ptr_nonnull(strstr(outcome.out, "OFFLINE IDENTITY KEY"));
		line = strstr(outcome.out, "\nauthority ");
		ck_assert_ptr_nonnull(line);
		line += strlen("\nauthority ");
		ck_assert_int_eq(note_verifier_parse(line, strcspn(line, "\n"), &pinned), 0);
		ck_assert_str_eq(pinned.name, NAME);
		snprintf(bundle_text, sizeof(bundle_text),
		         "dirauth trust v1\nnamespace mix dirauth.test/mix\nauthority %.*s\nthreshold 1\n",
		         (int)strcspn(line, "\n"), line);
		test_outcome_free(&outcome);
		ck_assert_int_eq(stat(offline, &info), 0);
		ck_assert_int_eq(info.st_mode & 0777, 0600);
		expect_failure(args, 73, "identity-keygen:");
	}
	test_write_file(bundle_path, bundle_text, strlen(bundle_text), 0644);
	/* The signing key, made where the signer runs: only its verifier travels. */
	{
		const char *const args[] = {"keygen", "--name", NAME, "--out", online, NULL};
		run(args, &outcome);
		ck_assert_int_eq(outcome.status, 0);
		snprintf(verifier_text, sizeof(verifier_text), "%.*s", (int)strcspn(outcome.out, "\n"),
		         outcome.out);
		test_outcome_free(&outcome);
	}
	{
		const char *const args[] = {
		    "certify",     "--identity",    offline,      "--signing-verifier",
		    verifier_text, "--valid-after", "1767225600", "--days",
		    "30",          "--out",         cert,         NULL};
		expect_success(args, "certificate written to");
		read_certificate_file(cert, &certificate);
		ck_assert_uint_eq(certificate.valid_until, T0 + 30 * DAY);
		expect_failure(args, 73, "already exists");
	}
	{
		const char *const args[] = {"certify",
		                            "--identity",
		                            offline,
		                            "--signing-key",
		                            online,
		                            "--valid-after",
		                            "now",
		                            "--now",
		                            "1767225600",
		                            "--valid-until",
		                            "1767312000",
		                            "--out",
		                            temp_path("by-file.cert"),
		                            NULL};
		expect_success(args, "valid-until  1767312000 (2026-01-02 00:00:00 UTC)");
	}
	{
		const char *const args[] = {
		    "certify", "--identity", offline, "--signing-verifier",   verifier_text,
		    "--days",  "401",        "--out", temp_path("long.cert"), NULL};
		expect_failure(args, 64, "at most 400 days");
	}
	{
		const char *const args[] = {"certify",
		                            "--identity",
		                            offline,
		                            "--signing-verifier",
		                            verifier_text,
		                            "--valid-after",
		                            "1767225600",
		                            "--valid-until",
		                            "1767225600",
		                            "--out",
		                            temp_path("empty.cert"),
		                            NULL};
		expect_failure(args, 64, "empty window");
	}
	{
		const char *const args[] = {
		    "certify", "--identity",           offline, "--signing-verifier", verifier_text,
		    "--out",   temp_path("none.cert"), NULL};
		expect_failure(args, 64, "give exactly one of --days");
	}
	{
		char mismatched[NOTE_VERIFIER_KEY_MAX + 1];
		const char *const keygen[] = {
		    "keygen", "--name", "authority-2.test", "--out", temp_path("two.key"), NULL};
		const char *const args[] = {
		    "certify", "--identity", offline, "--signing-verifier",       mismatched,
		    "--days",  "30",         "--out", temp_path("mismatch.cert"), NULL};
		run(keygen, &outcome);
		ck_assert_int_eq(outcome.status, 0);
		snprintf(mismatched, sizeof(mismatched), "%.*s", (int)strcspn(outcome.out, "\n"),
		         outcome.out);
		test_outcome_free(&outcome);
		expect_failure(args, 65, "name mismatch");
		ck_assert(!file_exists(temp_path("mismatch.cert")));
	}

	/* rotate: a gap is refused, an overlap is reported with the next steps. */
	{
		const char *const gap[] = {"rotate",
		                           "--identity",
		                           offline,
		                           "--name",
		                           NAME,
		                           "--key-out",
		                           temp_path("next.key"),
		                           "--cert-out",
		                           temp_path("next.cert"),
		                           "--previous",
		                           cert,
		                           "--valid-after",
		                           "1769904000",
		                           "--days",
		                           "30",
		                           NULL};
		const char *const overlap[] = {"rotate",
		                               "--identity",
		                               offline,
		                               "--name",
		                               NAME,
		                               "--key-out",
		                               temp_path("next.key"),
		                               "--cert-out",
		                               temp_path("next.cert"),
		                               "--previous",
		                               cert,
		                               "--valid-after",
		                               "1769385600",
		                               "--days",
		                               "30",
		                               NULL};
		expect_failure(gap, 65, "rotate: gap:");
		ck_assert(!file_exists(temp_path("next.key")));
		run(overlap, &outcome);
		ck_assert_msg(outcome.status == 0, "%s", outcome.err);
		ck_assert_ptr_nonnull(strstr(outcome.out, "new signing key written to"));
		ck_assert_ptr_nonnull(strstr(outcome.out, "overlap          1769385600"));
		ck_assert_ptr_nonnull(strstr(outcome.out, "432000 seconds in which both keys are valid"));
		ck_assert_ptr_nonnull(strstr(outcome.out, "certificates: ["));
		test_outcome_free(&outcome);
		ck_assert_int_eq(stat(temp_path("next.key"), &info), 0);
		ck_assert_int_eq(info.st_mode & 0777, 0600);
	}

	/* certificate show / inspect, with and without the trust bundle. */
	{
		const char *const show[] = {"certificate", "show",  cert,         "--trust",
		                            bundle_path,   "--now", "1767225600", NULL};
		const char *const inspect[] = {"certificate", "inspect", "--now", "1769904000", cert, NULL};
		const char *const unpinned[] = {"certificate", "show", cert, "--trust", other_bundle, NULL};
		const char *const wrong[] = {"certificate", "print", cert, NULL};
		const char *const missing[] = {"certificate", "show", NULL};
		char other_text[1024];
		expect_success(show, "signature    verified: signed by the identity key it names");
		expect_success(show, "pinned       yes");
		expect_success(inspect, "status       expired");
		snprintf(other_text, sizeof(other_text),
		         "dirauth trust v1\nnamespace mix dirauth.test/mix\nauthority %s\nthreshold 1\n",
		         verifier_text);
		test_write_file(other_bundle, other_text, strlen(other_text), 0644);
		expect_failure(unpinned, 65, "is not pinned by the trust bundle");
		expect_failure(wrong, 64, "expected 'show CERT'");
		expect_failure(missing, 64, "CERT is required");
	}
}
END_TEST

START_TEST(test_program_help)
{
	static const char *const helps[][3] = {
	    {"identity-keygen", "--help", NULL},
	    {"certify", "--help", NULL},
	    {"rotate", "--help", NULL},
	    {"certificate", "--help", NULL},
	};
	struct test_outcome outcome;

	for (size_t i = 0; i < sizeof(helps) / sizeof(helps[0]); i++) {
		run(helps[i], &outcome);
		ck_assert_int_eq(outcome.status, 0);
		ck_assert_ptr_nonnull(strstr(outcome.out, "usage: dirauthctl"));
		ck_assert_uint_eq(outcome.err_len, 0);
		test_outcome_free(&outcome);
	}
}
END_TEST

static Suite *certify_suite(void)
{
	Suite *suite = suite_create("certify");
	TCase *functions = tcase_create("functions");
	TCase *program = tcase_create("program");

	tcase_add_checked_fixture(functions, setup, teardown);
	tcase_set_timeout(functions, 60);
	tcase_add_test(functions, test_certify_issues_a_verifiable_certificate);
	tcase_add_test(functions, test_certify_refusals);
	tcase_add_test(functions, test_rotation_with_overlap);
	tcase_add_test(functions, test_rotate_refusals);
	tcase_add_test(functions, test_certificate_show);
	suite_add_tcase(suite, functions);

	tcase_add_checked_fixture(program, setup, teardown);
	tcase_set_timeout(program, 60);
	tcase_add_test(program, test_program_identity_keygen_certify_rotate_show);
	tcase_add_test(program, test_program_help);
	suite_add_tcase(suite, program);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(certify_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
