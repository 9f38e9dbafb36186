/*
 * check_fetch.c: dirauthctl fetch, the mirror's verify-then-store of a snapshot.
 *
 * The snapshots are built here from the schema encoders and signed with keys generated in the
 * test (signer/key.h): real registrations signed by a provider, a real body and Merkle root, a
 * header co-signed by authorities. Each authority has an identity key (pinned in the trust
 * bundle) and a signing key certified by it (the certificate bundle the server would serve), and
 * the header is signed by the signing keys, so the certificate model is checked on every path:
 * a key without a certificate, a certificate by an unpinned identity, a header outside the
 * certificate's window, two keys of one authority, each refused. The verification half
 * (ctl_fetch_verify_and_store) is driven directly with those bytes: the valid snapshot is accepted and its
 * files written, and every refusal a mirror relies on is checked to refuse, to say why, to exit 65 (or 78)
 * and to write nothing (except the evidence of an equivocation). Time is checked against the clock as
 * well as the header (a key certified then but not now, a header not yet valid or valid too long), and a
 * newer epoch must chain to the held one through a history of signed headers built here, with a gap, a
 * missing link, a stranger link, links that are not headers, and a walk past its bound each tried, both on
 * the headers in memory and over the network. The network half (ctl_fetch_run) is driven
 * over loopback against a canned server, for what only it does: bounded downloads, the
 * Accept-Encoding it sends, and the mapping of server answers to exit codes.
 */
#include "base/buffer.h"
#include "canned_http.h"
#include "certificate_fixture.h"
#include "compress/compress.h"
#include "crypto/crypto.h"
#include "base/error.h"
#include "schema/evidence.h"
#include "ctl/evidence.h"
#include "ctl/fetch.h"
#include "ctl/mirror.h"
#include "signer/key.h"
#include "schema/note.h"
#include "schema/registration.h"
#include "ctl/report.h"
#include "schema/snapshot.h"
#include "test_support.h"
#include "schema/trust_bundle.h"
#include "verify/snapshot.h"

#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NOW    ((uint64_t)1767225600) /* 2026-01-01 */
#define ORIGIN "dirauth.test/mix"

/* Signing keys. AUTHORITY_1_NEXT is authority 1's second key (a rotation overlap);
 * UNCERTIFIED carries authority 1's name but has no certificate; ROGUE is certified by a rogue
 * identity key that also calls itself authority-1.test but is not pinned. */
enum { AUTHORITY_1, AUTHORITY_2, OUTSIDER, AUTHORITY_1_NEXT, UNCERTIFIED, ROGUE, KEY_COUNT };
/* Identity keys: the first two are pinned by the bundle, the others are not. */
enum { IDENTITY_1, IDENTITY_2, IDENTITY_OUTSIDER, IDENTITY_ROGUE, IDENTITY_COUNT };

#define WINDOW_AFTER (NOW - 86400)
#define WINDOW_UNTIL (NOW + 86400)

static struct signer_key *keys[KEY_COUNT];
static struct signer_key *identities[IDENTITY_COUNT];
static struct signer_key *provider;
static struct trust_bundle bundle;
static struct buffer certificates; /* the certificate bundle served with every snapshot */
static struct verify_snapshot_policy policy;
static char directory[4096];

/* A certificate bundle with the certificates of every certified key, authority 1's windowed as
 * given (the others cover the whole test). */
static void make_certificates(uint64_t authority_1_after, uint64_t authority_1_until, struct buffer *out)
{
	struct buffer notes[5];

	for (size_t i = 0; i < 5; i++)
		buffer_init(&notes[i]);
	fixture_certificate(identities[IDENTITY_1], keys[AUTHORITY_1], authority_1_after, authority_1_until,
	                    &notes[0]);
	fixture_certificate(identities[IDENTITY_2], keys[AUTHORITY_2], WINDOW_AFTER, WINDOW_UNTIL, &notes[1]);
	fixture_certificate(identities[IDENTITY_OUTSIDER], keys[OUTSIDER], WINDOW_AFTER, WINDOW_UNTIL,
	                    &notes[2]);
	fixture_certificate(identities[IDENTITY_1], keys[AUTHORITY_1_NEXT], WINDOW_AFTER, WINDOW_UNTIL,
	                    &notes[3]);
	fixture_certificate(identities[IDENTITY_ROGUE], keys[ROGUE], WINDOW_AFTER, WINDOW_UNTIL, &notes[4]);
	buffer_reset(out);
	fixture_certificate_bundle(notes, 5, out);
	for (size_t i = 0; i < 5; i++)
		buffer_free(&notes[i]);
}

static void setup(void)
{
	static const char *const names[KEY_COUNT] = {"authority-1.test", "authority-2.test",
	                                             "outsider.test",    "authority-1.test",
	                                             "authority-1.test", "authority-1.test"};
	static const char *const identity_names[IDENTITY_COUNT] = {"authority-1.test", "authority-2.test",
	                                                           "outsider.test", "authority-1.test"};

	for (int i = 0; i < KEY_COUNT; i++)
		ck_assert_int_eq(signer_key_generate(names[i], &keys[i]), 0);
	for (int i = 0; i < IDENTITY_COUNT; i++)
		ck_assert_int_eq(signer_key_generate(identity_names[i], &identities[i]), 0);
	ck_assert_int_eq(signer_key_generate("provider.test", &provider), 0);
	buffer_init(&certificates);
	make_certificates(WINDOW_AFTER, WINDOW_UNTIL, &certificates);
	/* One authority, threshold 1; tests that need two add the second. */
	memset(&bundle, 0, sizeof(bundle));
	bundle.namespace_count = 2;
	strcpy(bundle.namespaces[0].name, "mix");
	strcpy(bundle.namespaces[0].origin, ORIGIN);
	strcpy(bundle.namespaces[1].name, "mail");
	strcpy(bundle.namespaces[1].origin, "dirauth.test/mail");
	bundle.authority_count = 1;
	bundle.authorities[0] = *signer_key_verifier(identities[IDENTITY_1]);
	bundle.threshold = 1;
	bundle.max_body_compressed = 64 * 1024 * 1024;
	bundle.max_body_uncompressed = 512 * 1024 * 1024;
	bundle.max_records = 1000000;
	verify_snapshot_policy_default(&policy);
	test_make_tempdir(directory, sizeof(directory));
}

/* Pins authority 2's identity as the bundle's second authority. */
static void pin_second_authority(void)
{
	bundle.authority_count = 2;
	bundle.authorities[1] = *signer_key_verifier(identities[IDENTITY_2]);
}

static void teardown(void)
{
	for (int i = 0; i < KEY_COUNT; i++)
		signer_key_free(keys[i]);
	for (int i = 0; i < IDENTITY_COUNT; i++)
		signer_key_free(identities[i]);
	signer_key_free(provider);
	buffer_free(&certificates);
	test_remove_tree(directory);
}

/* A registration of service (service_byte, 0, ...) by the provider, signed; with tamper, the
 * signature is damaged after signing. */
static void make_registration_note(uint8_t service_byte, int tamper, struct buffer *out)
{
	struct registration registration;
	struct note_signature signature;
	struct buffer text;

	memset(&registration, 0, sizeof(registration));
	buffer_init(&text);
	strcpy(registration.namespace_name, "mix");
	registration.service_id[0] = service_byte;
	registration.service_class = SERVICE_CLASS_MIX_GATEWAY;
	registration.provider = *signer_key_verifier(provider);
	registration.sequence = 1;
	registration.issued_at = NOW - 100;
	registration.expires = NOW + 86400;
	registration.endpoint_count = 1;
	registration.endpoints = calloc(1, sizeof(*registration.endpoints));
	ck_assert_ptr_nonnull(registration.endpoints);
	registration.endpoints[0].endpoint_id[0] = service_byte;
	registration.endpoints[0].endpoint_id[1] = 0xee;
	registration.endpoints[0].transport = TRANSPORT_QUIC;
	strcpy(registration.endpoints[0].address, "192.0.2.1:443");
	strcpy(registration.endpoints[0].region, "eu-west");
	registration.endpoints[0].capacity = CAPACITY_LOW;
	registration.endpoints[0].profile = PROFILE_MODERN;
	ck_assert_int_eq(registration_encode(&registration, &text), 0);
	ck_assert_int_eq(signer_key_sign(provider, text.data, text.len, &signature), 0);
	if (tamper)
		signature.signature[10] ^= 0x01;
	ck_assert_int_eq(note_format(text.data, text.len, &signature, 1, out), 0);
	registration_clear(&registration);
	buffer_free(&text);
}

struct snapshot_spec {
	const char *namespace_name; /* NULL: "mix" */
	const char *origin;         /* NULL: ORIGIN */
	uint64_t epoch;
	uint64_t valid_until; /* 0: NOW + 180 */
	uint64_t valid_after; /* 0: valid_until - 120 */
	size_t record_count;
	int tamper_record;                  /* 1: record 0's provider signature is damaged */
	uint8_t previous_byte;              /* varies the header text for the same epoch */
	const struct buffer *previous_note; /* instead: previous is the digest of this header note's text */
	const int *signers;                 /* indexes into keys[] */
	size_t signer_count;
	struct signer_key *direct_signer; /* instead: a key outside keys[] (an identity key) */
};

static const int signed_by_one[] = {AUTHORITY_1};

/* Builds the body and the signed header note of spec. */
static void build_snapshot(const struct snapshot_spec *spec, struct buffer *header_note, struct buffer *body)
{
	struct buffer notes[8];
	struct snapshot_record records[8];
	struct note_signature signatures[KEY_COUNT];
	struct snapshot_header header;
	struct buffer text;
	const int *signers = spec->signers != NULL ? spec->signers : signed_by_one;
	size_t signer_count = spec->signers != NULL ? spec->signer_count : 1;

	ck_assert_uint_le(spec->record_count, 8);
	buffer_init(&text);
	for (size_t i = 0; i < spec->record_count; i++) {
		buffer_init(&notes[i]);
		make_registration_note((uint8_t)(i + 1), spec->tamper_record && i == 0, &notes[i]);
		memset(records[i].service_id, 0, SERVICE_ID_SIZE);
		records[i].service_id[0] = (uint8_t)(i + 1);
		records[i].note = notes[i].data;
		records[i].note_len = notes[i].len;
	}
	memset(&header, 0, sizeof(header));
	strcpy(header.namespace_name, spec->namespace_name != NULL ? spec->namespace_name : "mix");
	strcpy(header.origin, spec->origin != NULL ? spec->origin : ORIGIN);
	ck_assert_int_eq(
	    snapshot_body_encode(header.namespace_name, spec->epoch, records, spec->record_count, body), 0);
	header.epoch = spec->epoch;
	header.valid_until = spec->valid_until != 0 ? spec->valid_until : NOW + 180;
	header.fresh_until = header.valid_until - 60;
	header.valid_after = spec->valid_after != 0 ? spec->valid_after : header.valid_until - 120;
	header.record_count = spec->record_count;
	ck_assert_int_eq(snapshot_records_root(records, spec->record_count, header.records_root), 0);
	header.body_size = body->len;
	ck_assert_int_eq(crypto_sha256(body->data, body->len, header.body_sha256), 0);
	header.previous[0] = spec->previous_byte;
	if (spec->previous_note != NULL) {
		struct note *previous = NULL;
		ck_assert_int_eq(note_parse(spec->previous_note->data, spec->previous_note->len, &previous),
		                 0);
		ck_assert_int_eq(snapshot_header_digest(previous->text, previous->text_len, header.previous),
		                 0);
		note_free(previous);
	}
	header.consensus_method = SNAPSHOT_CONSENSUS_METHOD;
	ck_assert_int_eq(snapshot_header_encode(&header, &text), 0);
	if (spec->direct_signer != NULL) {
		signers = signed_by_one;
		signer_count = 1;
	}
	for (size_t i = 0; i < signer_count; i++)
		ck_assert_int_eq(
		    signer_key_sign(spec->direct_signer != NULL ? spec->direct_signer : keys[signers[i]],
		                    text.data, text.len, &signatures[i]),
		    0);
	ck_assert_int_eq(note_format(text.data, text.len, signatures, signer_count, header_note), 0);
	for (size_t i = 0; i < spec->record_count; i++)
		buffer_free(&notes[i]);
	buffer_free(&text);
}

/* A snapshot built here: its signed header note and its plain body, both owned. */
struct built_snapshot {
	struct buffer header_note;
	struct buffer body;
};

/* Builds spec into snapshot, whose buffers are initialised here; free_snapshot frees them. */
static void make_snapshot(const struct snapshot_spec *spec, struct built_snapshot *snapshot)
{
	buffer_init(&snapshot->header_note);
	buffer_init(&snapshot->body);
	build_snapshot(spec, &snapshot->header_note, &snapshot->body);
}

/* Builds spec again into a snapshot made before, replacing what it held. */
static void remake_snapshot(const struct snapshot_spec *spec, struct built_snapshot *snapshot)
{
	buffer_reset(&snapshot->header_note);
	buffer_reset(&snapshot->body);
	build_snapshot(spec, &snapshot->header_note, &snapshot->body);
}

static void free_snapshot(struct built_snapshot *snapshot)
{
	buffer_free(&snapshot->header_note);
	buffer_free(&snapshot->body);
}

/* Verifies and stores header_note and body as served in encoding, with links the headers the
 * server holds between the held epoch and the offered one (none when link_count is 0). */
static int verify_with_links(const struct buffer *header_note, const struct ctl_fetch_link *links,
                             size_t link_count, const char *encoding, const uint8_t *body, size_t body_len,
                             struct ctl_fetch_result *result, struct ctl_report *report)
{
	struct ctl_fetch_input input = {
	    .bundle = &bundle,
	    .namespace_name = "mix",
	    .directory = directory,
	    .now = NOW,
	    .policy = &policy,
	    .links = links,
	    .link_count = link_count,
	    .header_note = header_note->data,
	    .header_note_len = header_note->len,
	    .certificates = certificates.data,
	    .certificates_len = certificates.len,
	    .body_encoding = encoding,
	    .body = body,
	    .body_len = body_len,
	};

	ctl_report_init(report);
	return ctl_fetch_verify_and_store(&input, result, report);
}

static int verify(const struct buffer *header_note, const char *encoding, const uint8_t *body,
                  size_t body_len, struct ctl_fetch_result *result, struct ctl_report *report)
{
	return verify_with_links(header_note, NULL, 0, encoding, body, body_len, result, report);
}

static const char *mirror_path(const char *name)
{
	static char path[4200];
	snprintf(path, sizeof(path), "%s/mix/%s", directory, name);
	return path;
}

static int mirror_has(const char *name)
{
	struct stat info;
	return stat(mirror_path(name), &info) == 0;
}

static void assert_file_equals(const char *name, const struct buffer *expected)
{
	size_t len = 0;
	uint8_t *data = test_read_file(mirror_path(name), &len);

	ck_assert_uint_eq(len, expected->len);
	ck_assert_int_eq(memcmp(data, expected->data, len), 0);
	free(data);
}

/* A refusal: an error, the exit status and a word of the message (what a user sees: the error
 * itself is one of libdirauth's classes, in report's words). */
static void assert_refused(int rc, const struct ctl_report *report, int expected_exit, const char *word)
{
	ck_assert_msg(rc != 0, "no refusal; message: %s", report->message);
	ck_assert_int_eq(report->exit_code, expected_exit);
	ck_assert_msg(strstr(report->message, word) != NULL, "message '%s' lacks '%s'", report->message,
	              word);
	ck_assert_msg(strncmp(report->message, "fetch mix: ", 11) == 0, "message '%s'", report->message);
}

static void assert_nothing_written(void)
{
	ck_assert(!mirror_has("latest.header"));
}

/* Starts the mirror over, empty, as if it had never fetched. */
static void empty_mirror(void)
{
	test_remove_tree(directory);
	test_make_tempdir(directory, sizeof(directory));
}

/* Verifies snapshot as a server sends it without a content encoding, with links as
 * verify_with_links takes them. */
static int verify_snapshot_with_links(const struct built_snapshot *snapshot,
                                      const struct ctl_fetch_link *links, size_t link_count,
                                      struct ctl_fetch_result *result, struct ctl_report *report)
{
	return verify_with_links(&snapshot->header_note, links, link_count, "identity", snapshot->body.data,
	                         snapshot->body.len, result, report);
}

/* The snapshot, with links, verifies (and is stored); the refusal is shown if it does not. */
static void assert_accepted_with_links(const struct built_snapshot *snapshot,
                                       const struct ctl_fetch_link *links, size_t link_count,
                                       struct ctl_fetch_result *result)
{
	struct ctl_report report;

	ck_assert_msg(verify_snapshot_with_links(snapshot, links, link_count, result, &report) == 0, "%s",
	              report.message);
}

static void assert_accepted(const struct built_snapshot *snapshot, struct ctl_fetch_result *result)
{
	assert_accepted_with_links(snapshot, NULL, 0, result);
}

/* The snapshot, with links, is refused as assert_refused checks; report is left for the caller's
 * further checks. Whether anything was written is the caller's to check. */
static void assert_refused_with_links(const struct built_snapshot *snapshot,
                                      const struct ctl_fetch_link *links, size_t link_count,
                                      int expected_exit, const char *word, struct ctl_report *report)
{
	struct ctl_fetch_result result;

	assert_refused(verify_snapshot_with_links(snapshot, links, link_count, &result, report), report,
	               expected_exit, word);
}

static void assert_snapshot_refused(const struct built_snapshot *snapshot, int expected_exit,
                                    const char *word, struct ctl_report *report)
{
	assert_refused_with_links(snapshot, NULL, 0, expected_exit, word, report);
}

/* header_note, with body as served in encoding, is refused as assert_refused checks; report is
 * left for the caller's further checks. Whether anything was written is the caller's to check. */
static void assert_verify_refused(const struct buffer *header_note, const char *encoding,
                                  const struct buffer *body, int expected_exit, const char *word,
                                  struct ctl_report *report)
{
	struct ctl_fetch_result result;

	assert_refused(verify(header_note, encoding, body->data, body->len, &result, report), report,
	               expected_exit, word);
}

/* The snapshot of spec, built, is refused as assert_refused checks and nothing is written; report
 * is left for the caller's further checks. */
static void assert_spec_refused(const struct snapshot_spec *spec, int expected_exit, const char *word,
                                struct ctl_report *report)
{
	struct built_snapshot snapshot;

	make_snapshot(spec, &snapshot);
	assert_snapshot_refused(&snapshot, expected_exit, word, report);
	assert_nothing_written();
	free_snapshot(&snapshot);
}

/* Accepted in each content encoding; the files are the note as served and the plain body. */
START_TEST(test_valid_snapshot_accepted_and_written)
{
	static const enum content_encoding encodings[] = {ENCODING_ZSTD, ENCODING_GZIP, ENCODING_IDENTITY};
	struct snapshot_spec spec = {.epoch = 5, .record_count = 3};
	struct built_snapshot snapshot;
	struct buffer served;
	struct ctl_fetch_result result;
	struct ctl_report report;
	enum content_encoding encoding = encodings[_i];

	make_snapshot(&spec, &snapshot);
	buffer_init(&served);
	ck_assert_int_eq(compress_encode(encoding, snapshot.body.data, snapshot.body.len, &served), 0);
	ck_assert_int_eq(verify(&snapshot.header_note,
	                        encoding == ENCODING_IDENTITY ? "" : content_encoding_name(encoding),
	                        served.data, served.len, &result, &report),
	                 0);
	ck_assert_int_eq(report.exit_code, 0);
	ck_assert_str_eq(result.namespace_name, "mix");
	ck_assert_uint_eq(result.epoch, 5);
	ck_assert_uint_eq(result.record_count, 3);
	ck_assert_uint_eq(result.signer_count, 1);
	ck_assert_uint_eq(result.authority_count, 1);
	ck_assert_str_eq(result.signer_names, "authority-1.test");
	assert_file_equals("5.header", &snapshot.header_note);
	assert_file_equals("5.body", &snapshot.body);
	assert_file_equals("latest.header", &snapshot.header_note);
	/* The certificates that made it verify are kept for offline re-verification. */
	assert_file_equals("certificates", &certificates);
	free_snapshot(&snapshot);
	buffer_free(&served);
}
END_TEST

START_TEST(test_threshold_two_of_two_accepted_and_newer_epoch_replaces)
{
	static const int both[] = {AUTHORITY_2, AUTHORITY_1};
	struct snapshot_spec spec = {.epoch = 5, .record_count = 1, .signers = both, .signer_count = 2};
	struct built_snapshot held, newer;
	struct ctl_fetch_result result;

	pin_second_authority();
	bundle.threshold = 2;
	make_snapshot(&spec, &held);
	assert_accepted(&held, &result);
	ck_assert_uint_eq(result.signer_count, 2);
	ck_assert_str_eq(result.signer_names, "authority-1.test, authority-2.test");

	/* Re-fetching the same snapshot is fine, and a newer epoch that names it as its previous
	 * replaces latest.header. */
	assert_accepted(&held, &result);
	spec.epoch = 6;
	spec.previous_note = &held.header_note;
	make_snapshot(&spec, &newer);
	assert_accepted(&newer, &result);
	assert_file_equals("latest.header", &newer.header_note);
	ck_assert(mirror_has("5.header"));
	ck_assert(mirror_has("6.body"));
	free_snapshot(&held);
	free_snapshot(&newer);
}
END_TEST

START_TEST(test_bad_signature_refused)
{
	struct snapshot_spec spec = {.epoch = 5, .record_count = 1};
	struct built_snapshot snapshot;
	struct buffer forged;
	struct ctl_report report;
	struct note *note = NULL;
	size_t text_len;

	make_snapshot(&spec, &snapshot);
	buffer_init(&forged);
	/* The same signature line under a different epoch: the authority's signature does not cover it. */
	ck_assert_int_eq(note_parse(snapshot.header_note.data, snapshot.header_note.len, &note), 0);
	text_len = note->text_len;
	note_free(note);
	{
		const char *note_text = (const char *)snapshot.header_note.data;
		const char *at = strstr(note_text, "epoch 5\n");
		ck_assert_ptr_nonnull(at);
		ck_assert_int_eq(buffer_append(&forged, snapshot.header_note.data, (size_t)(at - note_text)),
		                 0);
		ck_assert_int_eq(buffer_append_string(&forged, "epoch 7\n"), 0);
		ck_assert_int_eq(buffer_append_string(&forged, at + 8), 0);
	}
	ck_assert_uint_eq(forged.len, snapshot.header_note.len);
	ck_assert_uint_lt(text_len, forged.len);
	assert_verify_refused(&forged, "identity", &snapshot.body, 65, "bad signature", &report);
	assert_nothing_written();
	free_snapshot(&snapshot);
	buffer_free(&forged);
}
END_TEST

START_TEST(test_too_few_signatures_refused)
{
	struct snapshot_spec spec = {.epoch = 5, .record_count = 1}; /* signed by authority 1 only */
	struct ctl_report report;

	pin_second_authority();
	bundle.threshold = 2;
	assert_spec_refused(&spec, 65, "1 of 2 authorities signed", &report);
}
END_TEST

START_TEST(test_unknown_authority_refused)
{
	static const int outsider[] = {OUTSIDER};
	struct snapshot_spec spec = {.epoch = 5, .record_count = 1, .signers = outsider, .signer_count = 1};
	struct ctl_report report;

	assert_spec_refused(&spec, 65, "signed by a key not certified by any pinned identity at 1767225660",
	                    &report);
	ck_assert_msg(strstr(report.message, "outsider.test key") != NULL &&
	                  strstr(report.message, "not an authority of the trust bundle") != NULL,
	              "%s", report.message);
}
END_TEST

/* A signing key that carries a pinned authority's name but that no certificate covers. */
START_TEST(test_uncertified_signing_key_refused)
{
	static const int uncertified[] = {UNCERTIFIED};
	struct snapshot_spec spec = {
	    .epoch = 5, .record_count = 1, .signers = uncertified, .signer_count = 1};
	struct ctl_report report;

	assert_spec_refused(&spec, 65, "not certified by any pinned identity", &report);
	ck_assert_msg(
	    strstr(report.message, "has no certificate from the pinned identity of authority-1.test"), "%s",
	    report.message);
}
END_TEST

/* A certificate for a key named like authority 1, signed by an identity key that also calls
 * itself authority-1.test but is not the pinned one: the certificate is not believed. */
START_TEST(test_certificate_by_unpinned_identity_refused)
{
	static const int rogue[] = {ROGUE};
	struct snapshot_spec spec = {.epoch = 5, .record_count = 1, .signers = rogue, .signer_count = 1};
	struct built_snapshot snapshot;
	struct ctl_fetch_result result;
	struct ctl_report report;

	make_snapshot(&spec, &snapshot);
	assert_snapshot_refused(&snapshot, 65, "not certified by any pinned identity", &report);
	assert_nothing_written();
	/* Pinning the rogue identity instead makes the same bytes verify: the pin is what decides. */
	bundle.authorities[0] = *signer_key_verifier(identities[IDENTITY_ROGUE]);
	assert_accepted(&snapshot, &result);
	free_snapshot(&snapshot);
}
END_TEST

/* The header's valid-after (NOW + 60) and now must both lie in [valid-after, valid-until) of the
 * certificate. */
START_TEST(test_header_time_outside_certificate_window_refused)
{
	struct snapshot_spec spec = {.epoch = 5, .record_count = 1};
	struct built_snapshot snapshot;
	struct ctl_fetch_result result;
	struct ctl_report report;

	make_snapshot(&spec, &snapshot);
	/* Expired one second before the header's time: the end of a window is not in it. */
	make_certificates(NOW - 86400, NOW + 60, &certificates);
	assert_snapshot_refused(
	    &snapshot, 65, "signed by a key not certified by any pinned identity at 1767225660", &report);
	ck_assert_msg(strstr(report.message, "is certified only from 1767139200") != NULL, "%s",
	              report.message);
	assert_nothing_written();
	/* Not yet valid at the header's time. */
	make_certificates(NOW + 61, NOW + 86400, &certificates);
	assert_snapshot_refused(&snapshot, 65, "certified only from 1767225661", &report);
	assert_nothing_written();
	/* Valid from the header's time on, but not yet now: the key must be certified at both. */
	make_certificates(NOW + 60, NOW + 86400, &certificates);
	assert_snapshot_refused(
	    &snapshot, 65,
	    "not certified by any pinned identity at 1767225660 (2026-01-01 00:01:00 UTC) "
	    "and at 1767225600",
	    &report);
	ck_assert_msg(strstr(report.message, "certified only from 1767225660") != NULL, "%s", report.message);
	assert_nothing_written();
	/* The window's first second (now, before the header's time) and last second are inside. */
	make_certificates(NOW, NOW + 86400, &certificates);
	assert_accepted(&snapshot, &result);
	make_certificates(NOW - 86400, NOW + 61, &certificates);
	assert_accepted(&snapshot, &result);
	free_snapshot(&snapshot);
}
END_TEST

/* Two certified signing keys of one authority (a rotation overlap) are one authority. */
START_TEST(test_two_keys_of_one_identity_count_once)
{
	static const int both_keys_of_one[] = {AUTHORITY_1, AUTHORITY_1_NEXT};
	static const int two_authorities[] = {AUTHORITY_1_NEXT, AUTHORITY_2};
	struct snapshot_spec spec = {
	    .epoch = 5, .record_count = 1, .signers = both_keys_of_one, .signer_count = 2};
	struct built_snapshot held, newer;
	struct ctl_fetch_result result;
	struct ctl_report report;

	pin_second_authority();
	bundle.threshold = 2;
	make_snapshot(&spec, &held);
	assert_snapshot_refused(&held, 65, "too few signatures: 1 of 2 authorities signed", &report);
	ck_assert_msg(strstr(report.message, "counted: authority-1.test;") != NULL, "%s", report.message);
	assert_nothing_written();
	/* With threshold 1 either key alone is enough, and the summary names the authority once. */
	bundle.threshold = 1;
	assert_accepted(&held, &result);
	ck_assert_uint_eq(result.signer_count, 1);
	ck_assert_str_eq(result.signer_names, "authority-1.test");
	/* The new key and another authority do make two. */
	bundle.threshold = 2;
	spec.epoch = 6;
	spec.signers = two_authorities;
	spec.previous_note = &held.header_note;
	make_snapshot(&spec, &newer);
	assert_accepted(&newer, &result);
	ck_assert_str_eq(result.signer_names, "authority-1.test, authority-2.test");
	free_snapshot(&held);
	free_snapshot(&newer);
}
END_TEST

/* The identity key signs certificates only; a header it signs itself does not count. */
START_TEST(test_header_signed_by_identity_key_refused)
{
	struct snapshot_spec spec = {.epoch = 5, .record_count = 1};
	struct ctl_report report;

	spec.direct_signer = identities[IDENTITY_1];
	assert_spec_refused(&spec, 65, "is a pinned identity key", &report);
}
END_TEST

START_TEST(test_malformed_or_empty_certificate_bundle_refused)
{
	struct snapshot_spec spec = {.epoch = 5, .record_count = 1};
	struct built_snapshot snapshot;
	struct ctl_report report;

	make_snapshot(&spec, &snapshot);
	/* Truncated: the last certificate's length runs past the end. */
	certificates.len -= 10;
	assert_snapshot_refused(&snapshot, 65, "certificates: not a certificate bundle", &report);
	/* Well formed and empty: nothing certifies the key. */
	buffer_reset(&certificates);
	fixture_certificate_bundle(NULL, 0, &certificates);
	assert_snapshot_refused(&snapshot, 65, "not certified by any pinned identity", &report);
	assert_nothing_written();
	free_snapshot(&snapshot);
}
END_TEST

START_TEST(test_wrong_namespace_or_origin_refused)
{
	struct snapshot_spec wrong_namespace = {
	    .namespace_name = "mail", .origin = ORIGIN, .epoch = 5, .record_count = 0};
	struct snapshot_spec wrong_origin = {.origin = "evil.test/mix", .epoch = 5, .record_count = 1};
	struct built_snapshot snapshot;
	struct ctl_report report;

	make_snapshot(&wrong_namespace, &snapshot);
	assert_snapshot_refused(&snapshot, 65, "wrong namespace 'mail'", &report);
	free_snapshot(&snapshot);
	assert_spec_refused(&wrong_origin, 65, "wrong origin 'evil.test/mix'", &report);
}
END_TEST

START_TEST(test_namespace_not_in_bundle_is_config_error)
{
	struct snapshot_spec spec = {.epoch = 5, .record_count = 1};
	struct ctl_report report;

	bundle.namespace_count = 0;
	assert_spec_refused(&spec, 78, "not in the trust bundle", &report);
}
END_TEST

START_TEST(test_stale_refused)
{
	struct snapshot_spec expired = {.epoch = 5, .record_count = 1, .valid_until = NOW};
	struct built_snapshot snapshot;
	struct ctl_fetch_result result;
	struct ctl_report report;

	make_snapshot(&expired, &snapshot);
	/* Stale has its own status (75), so that it is never taken for fresh nor for forged. */
	assert_snapshot_refused(&snapshot, 75, "header: stale: epoch 5 was valid until", &report);
	assert_nothing_written();
	/* One second before valid-until it is still good. */
	expired.valid_until = NOW + 1;
	remake_snapshot(&expired, &snapshot);
	assert_accepted(&snapshot, &result);
	free_snapshot(&snapshot);
}
END_TEST

/* A header may start at most the clock skew ahead of now: one dated further ahead is refused,
 * whatever its signatures, so that no header can claim a time the mirror has not reached. */
START_TEST(test_not_yet_valid_refused)
{
	struct snapshot_spec spec = {.epoch = 5, .record_count = 1, .valid_after = NOW + 301};
	struct built_snapshot snapshot;
	struct ctl_fetch_result result;
	struct ctl_report report;

	spec.valid_until = spec.valid_after + 180;
	make_snapshot(&spec, &snapshot);
	assert_snapshot_refused(&snapshot, 65, "header: not yet valid: epoch 5 is valid after 1767225901",
	                        &report);
	ck_assert_msg(strstr(report.message, "clock skew is 300 s") != NULL, "%s", report.message);
	assert_nothing_written();
	/* A smaller skew refuses what the default lets through (the builder's NOW + 60). */
	spec.valid_after = 0;
	spec.valid_until = 0;
	remake_snapshot(&spec, &snapshot);
	policy.clock_skew = 59;
	assert_snapshot_refused(&snapshot, 65, "not yet valid", &report);
	assert_nothing_written();
	/* No skew at all is no skew, not the default. */
	policy.clock_skew = 0;
	assert_snapshot_refused(&snapshot, 65, "clock skew is 0 s", &report);
	assert_nothing_written();
	policy.clock_skew = 60;
	assert_accepted(&snapshot, &result);
	/* Exactly the default skew ahead is still accepted. */
	policy.clock_skew = VERIFY_DEFAULT_CLOCK_SKEW;
	spec.epoch = 6;
	spec.valid_after = NOW + 300;
	spec.valid_until = NOW + 480;
	remake_snapshot(&spec, &snapshot);
	empty_mirror();
	assert_accepted(&snapshot, &result);
	free_snapshot(&snapshot);
}
END_TEST

/* The review's attack: a signing key whose certificate has expired signs a header dated inside
 * its old window, valid for a year, with a huge epoch. Judged at its own valid-after alone it
 * verified; the key is not certified now, so it is refused, and the genuine snapshot after it is
 * still accepted. */
START_TEST(test_expired_signing_key_refused_whatever_the_header_time)
{
	struct snapshot_spec forged_spec = {.epoch = 1000000000, .record_count = 1};
	struct snapshot_spec genuine_spec = {.epoch = 6, .record_count = 1};
	struct built_snapshot forged, genuine;
	struct ctl_fetch_result result;
	struct ctl_report report;

	/* Authority 1's key was certified for a window that ended ten days ago. */
	make_certificates(NOW - 40 * 86400, NOW - 10 * 86400, &certificates);
	forged_spec.valid_after = NOW - 20 * 86400;
	forged_spec.valid_until = NOW + 365 * 86400;
	make_snapshot(&forged_spec, &forged);
	policy.max_validity = 400 * 86400; /* the time check alone, not the validity bound */
	assert_snapshot_refused(
	    &forged, 65,
	    "not certified by any pinned identity at 1765497600 (2025-12-12 00:00:00 UTC) "
	    "and at 1767225600",
	    &report);
	ck_assert_msg(strstr(report.message, "is certified only from 1763769600") != NULL, "%s",
	              report.message);
	assert_nothing_written();
	/* Under the default validity bound the year-long header is refused on that count as well. */
	make_certificates(NOW - 40 * 86400, NOW + 400 * 86400 - 40 * 86400, &certificates);
	policy.max_validity = VERIFY_DEFAULT_MAX_VALIDITY;
	assert_snapshot_refused(&forged, 65, "longer than the allowed 604800 s", &report);
	assert_nothing_written();
	/* The genuine snapshot, signed with a key certified now, is accepted. */
	make_certificates(WINDOW_AFTER, WINDOW_UNTIL, &certificates);
	make_snapshot(&genuine_spec, &genuine);
	assert_accepted(&genuine, &result);
	assert_file_equals("latest.header", &genuine.header_note);
	free_snapshot(&forged);
	free_snapshot(&genuine);
}
END_TEST

START_TEST(test_validity_longer_than_bound_refused)
{
	struct snapshot_spec spec = {.epoch = 5, .record_count = 1, .valid_after = NOW - 100};
	struct built_snapshot snapshot;
	struct ctl_fetch_result result;
	struct ctl_report report;

	spec.valid_until = spec.valid_after + 604801;
	make_snapshot(&spec, &snapshot);
	assert_snapshot_refused(&snapshot, 65,
	                        "header: valid for 604801 s (from 1767225500 until 1767830301), longer than "
	                        "the allowed 604800 s",
	                        &report);
	assert_nothing_written();
	/* A bound of the caller's choosing. */
	policy.max_validity = 604801;
	assert_accepted(&snapshot, &result);
	/* Exactly the default bound is accepted. */
	policy.max_validity = VERIFY_DEFAULT_MAX_VALIDITY;
	spec.epoch = 6;
	spec.valid_until = spec.valid_after + 604800;
	remake_snapshot(&spec, &snapshot);
	empty_mirror();
	assert_accepted(&snapshot, &result);
	free_snapshot(&snapshot);
}
END_TEST

/* History: a chain of signed headers, epochs 5 to 9 (6 not published), each naming the one
 * before it; the mirror holds epoch 5. */
struct history {
	struct built_snapshot epochs[10]; /* by epoch; 6 left empty */
};

static void build_history(struct history *history)
{
	const struct buffer *previous = NULL;

	for (uint64_t epoch = 5; epoch <= 9; epoch++) {
		struct snapshot_spec spec = {
		    .epoch = epoch, .record_count = 1, .valid_after = NOW - 1000 + epoch};
		buffer_init(&history->epochs[epoch].header_note);
		buffer_init(&history->epochs[epoch].body);
		if (epoch == 6)
			continue;
		spec.previous_note = previous;
		build_snapshot(&spec, &history->epochs[epoch].header_note, &history->epochs[epoch].body);
		previous = &history->epochs[epoch].header_note;
	}
}

static void history_free(struct history *history)
{
	for (uint64_t epoch = 5; epoch <= 9; epoch++)
		free_snapshot(&history->epochs[epoch]);
}

static struct ctl_fetch_link history_link(const struct history *history, uint64_t epoch)
{
	const struct buffer *note = &history->epochs[epoch].header_note;
	struct ctl_fetch_link link = {epoch, note->data, note->len};
	return link;
}

/* The mirror holds epoch 5 of history. */
static void hold_epoch_5(const struct history *history)
{
	struct ctl_fetch_result result;

	assert_accepted(&history->epochs[5], &result);
}

static void assert_held(const struct history *history, uint64_t epoch)
{
	assert_file_equals("latest.header", &history->epochs[epoch].header_note);
}

START_TEST(test_chain_through_gap_accepted)
{
	struct history history;
	struct ctl_fetch_link links[3];
	struct ctl_fetch_result result;

	build_history(&history);
	hold_epoch_5(&history);
	/* 9 -> 8 -> 7 -> 5: epoch 6 has no snapshot, so the server holds none for it. */
	links[0] = history_link(&history, 8);
	links[1] = history_link(&history, 7);
	assert_accepted_with_links(&history.epochs[9], links, 2, &result);
	assert_held(&history, 9);
	/* The direct successor needs no link at all. */
	empty_mirror();
	hold_epoch_5(&history);
	assert_accepted(&history.epochs[7], &result);
	assert_held(&history, 7);
	history_free(&history);
}
END_TEST

/* Every way a walk can fail to reach the held header is refused, and the held header stays. */
START_TEST(test_chain_that_does_not_reach_held_refused)
{
	struct snapshot_spec stranger_spec = {
	    .epoch = 8, .record_count = 2, .previous_byte = 7, .valid_after = NOW - 1000 + 8};
	struct snapshot_spec stranger_7_spec = {
	    .epoch = 7, .record_count = 2, .previous_byte = 7, .valid_after = NOW - 1000 + 7};
	struct built_snapshot stranger, stranger_7;
	struct history history;
	struct ctl_fetch_link links[3];
	struct ctl_report report;
	const struct built_snapshot *nine;

	build_history(&history);
	nine = &history.epochs[9];
	hold_epoch_5(&history);
	make_snapshot(&stranger_spec, &stranger);
	make_snapshot(&stranger_7_spec, &stranger_7);

	/* No links: 9's previous is 8, which the server did not produce. */
	assert_refused_with_links(nine, NULL, 0, 65, "history does not chain to the held snapshot (epoch 5)",
	                          &report);
	/* A link missing in the middle: 8 but not 7. */
	links[0] = history_link(&history, 8);
	assert_refused_with_links(nine, links, 1, 65, "history does not chain to the held snapshot (epoch 5)",
	                          &report);
	ck_assert_msg(strstr(report.message, "the previous of epoch 8") != NULL, "%s", report.message);
	/* Another header, well signed, for epoch 8: not 9's previous. */
	links[0].note = stranger.header_note.data;
	links[0].note_len = stranger.header_note.len;
	assert_refused_with_links(nine, links, 1, 65, "epoch 8 is not the previous header of epoch 9",
	                          &report);
	/* The right header served for the wrong epoch. */
	links[0] = history_link(&history, 8);
	links[0].epoch = 7;
	assert_refused_with_links(nine, links, 1, 65, "the header served for epoch 7 is for epoch 8",
	                          &report);
	/* A well signed epoch 7 that is not 8's previous. */
	links[0] = history_link(&history, 8);
	links[1] = (struct ctl_fetch_link){7, stranger_7.header_note.data, stranger_7.header_note.len};
	assert_refused_with_links(nine, links, 2, 65, "epoch 7 is not the previous header of epoch 8",
	                          &report);
	assert_held(&history, 5);
	ck_assert(!mirror_has("9.header"));
	free_snapshot(&stranger);
	free_snapshot(&stranger_7);
	history_free(&history);
}
END_TEST

/* An epoch 8 naming note_7 as its previous, offered with note_7 as its only link for epoch 7, is
 * refused as assert_refused checks. */
static void assert_refused_through_link_7(const struct buffer *note_7, int expected_exit, const char *word)
{
	struct snapshot_spec eight = {
	    .epoch = 8, .record_count = 1, .valid_after = NOW - 1000 + 8, .previous_note = note_7};
	struct ctl_fetch_link link = {7, note_7->data, note_7->len};
	struct built_snapshot snapshot;
	struct ctl_report report;

	make_snapshot(&eight, &snapshot);
	assert_refused_with_links(&snapshot, &link, 1, expected_exit, word, &report);
	free_snapshot(&snapshot);
}

/* Links are verified as headers: signatures by certified keys at their own time, namespace,
 * origin and time order. */
START_TEST(test_chain_link_verified_as_header)
{
	static const int outsider[] = {OUTSIDER};
	struct snapshot_spec forged_spec = {
	    .epoch = 7, .record_count = 1, .signers = outsider, .signer_count = 1};
	struct snapshot_spec other_spec = {
	    .epoch = 7, .record_count = 1, .origin = "evil.test/mix", .valid_after = NOW - 1000 + 7};
	struct snapshot_spec early_spec = {.epoch = 6, .record_count = 1, .valid_after = NOW - 1000};
	struct history history;
	struct built_snapshot forged_7, other_7, early;
	struct buffer garbage;
	struct ctl_fetch_link link;
	struct ctl_report report;

	build_history(&history);
	hold_epoch_5(&history);
	buffer_init(&garbage);
	/* Epoch 8 chaining to a forged 7 signed by an unpinned key that chains to 5. */
	forged_spec.valid_after = NOW - 1000 + 7;
	forged_spec.previous_note = &history.epochs[5].header_note;
	make_snapshot(&forged_spec, &forged_7);
	assert_refused_through_link_7(
	    &forged_7.header_note, 65,
	    "fetch mix: history: epoch 7: signed by a key not certified by any pinned identity");
	/* A link that is not a header note. */
	ck_assert_int_eq(buffer_append_string(&garbage, "not a note\n"), 0);
	link = (struct ctl_fetch_link){8, garbage.data, garbage.len};
	assert_refused_with_links(&history.epochs[9], &link, 1, 65, "history: epoch 8: not a signed note",
	                          &report);
	/* A link of another origin that otherwise chains. */
	other_spec.previous_note = &history.epochs[5].header_note;
	make_snapshot(&other_spec, &other_7);
	assert_refused_through_link_7(&other_7.header_note, 65, "origin 'evil.test/mix'");
	/* A link dated after the header that names it. */
	other_spec.origin = NULL;
	other_spec.valid_after = NOW - 1000 + 9;
	remake_snapshot(&other_spec, &other_7);
	assert_refused_through_link_7(&other_7.header_note, 65, "epoch 7 is valid after 1767224609, outside");
	/* A new header dated before the held one. */
	early_spec.previous_note = &history.epochs[5].header_note;
	make_snapshot(&early_spec, &early);
	assert_snapshot_refused(
	    &early, 65, "epoch 6 is valid after 1767224600, before the held header's valid-after 1767224605",
	    &report);
	assert_held(&history, 5);
	free_snapshot(&forged_7);
	free_snapshot(&other_7);
	free_snapshot(&early);
	buffer_free(&garbage);
	history_free(&history);
}
END_TEST

/* A new epoch further ahead of the held one than the walk's bound asks for a deliberate re-seed. */
START_TEST(test_chain_too_long_asks_for_reseed)
{
	struct history history;
	struct ctl_fetch_link links[2];
	struct snapshot_spec far_spec = {.epoch = 1000000000, .record_count = 1};
	struct built_snapshot far;
	struct ctl_fetch_result result;
	struct ctl_report report;

	build_history(&history);
	hold_epoch_5(&history);
	far_spec.previous_note = &history.epochs[5].header_note;
	make_snapshot(&far_spec, &far);
	assert_snapshot_refused(&far, 65, "999999995 epochs past the held epoch 5, more than the 1024",
	                        &report);
	ck_assert_msg(strstr(report.message, "re-seeded deliberately") != NULL &&
	                  strstr(report.message, "delete mix/latest.header") != NULL,
	              "%s", report.message);
	/* The bound is the caller's: 4 epochs from 5 to 9 pass a bound of 4, not of 3. */
	links[0] = history_link(&history, 8);
	links[1] = history_link(&history, 7);
	policy.max_chain = 3;
	assert_refused_with_links(&history.epochs[9], links, 2, 65, "more than the 3", &report);
	assert_held(&history, 5);
	policy.max_chain = 4;
	assert_accepted_with_links(&history.epochs[9], links, 2, &result);
	/* Re-seeding: without a held header the far epoch is taken as it is. */
	ck_assert_int_eq(unlink(mirror_path("latest.header")), 0);
	assert_accepted(&far, &result);
	assert_file_equals("latest.header", &far.header_note);
	free_snapshot(&far);
	history_free(&history);
}
END_TEST

/* The pure walk on its own: links after the held header was reached are not consulted. */
START_TEST(test_verify_chain_stops_at_held_header)
{
	struct history history;
	struct snapshot_header header;
	struct ctl_fetch_link links[3];
	struct ctl_report report;
	struct note *note = NULL;
	const struct buffer *held, *eight, *seven;
	static const uint8_t garbage[] = "garbage\n";

	build_history(&history);
	held = &history.epochs[5].header_note;
	seven = &history.epochs[7].header_note;
	eight = &history.epochs[8].header_note;
	ck_assert_int_eq(note_parse(eight->data, eight->len, &note), 0);
	ck_assert_int_eq(snapshot_header_parse(note->text, note->text_len, &header), 0);
	note_free(note);
	links[0] = history_link(&history, 7);
	links[1] = (struct ctl_fetch_link){6, garbage, sizeof(garbage) - 1};
	ctl_report_init(&report);
	ck_assert_msg(ctl_mirror_verify_chain(&bundle, certificates.data, certificates.len, held->data,
	                                      held->len, &header, links, 2, 1024, &report) == 0,
	              "%s", report.message);
	/* Out of order (older than the held epoch) is a caller's mistake, not the data's. */
	links[0] = (struct ctl_fetch_link){4, seven->data, seven->len};
	ctl_report_init(&report);
	ck_assert_int_eq(ctl_mirror_verify_chain(&bundle, certificates.data, certificates.len, held->data,
	                                         held->len, &header, links, 1, 1024, &report),
	                 DIRAUTH_ERR_INTERNAL);
	ck_assert_int_eq(report.exit_code, 70);
	history_free(&history);
}
END_TEST

START_TEST(test_rollback_refused)
{
	struct snapshot_spec newer_spec = {.epoch = 9, .record_count = 1};
	struct snapshot_spec older_spec = {.epoch = 8, .record_count = 2};
	struct built_snapshot newer, older;
	struct ctl_fetch_result result;
	struct ctl_report report;

	make_snapshot(&newer_spec, &newer);
	make_snapshot(&older_spec, &older);
	assert_accepted(&newer, &result);
	assert_snapshot_refused(&older, 65, "rollback", &report);
	ck_assert_ptr_nonnull(strstr(report.message, "epoch 8"));
	ck_assert_ptr_nonnull(strstr(report.message, "epoch 9"));
	assert_file_equals("latest.header", &newer.header_note);
	ck_assert(!mirror_has("8.header"));
	ck_assert(!mirror_has("8.body"));
	free_snapshot(&newer);
	free_snapshot(&older);
}
END_TEST

/* The path of the evidence file a refusal names ("evidence written to <path>"). */
static const char *evidence_path_of(const struct ctl_report *report)
{
	static const char said[] = "evidence written to ";
	const char *at = strstr(report->message, said);

	ck_assert_msg(at != NULL, "message '%s' names no evidence file", report->message);
	return at + strlen(said);
}

/* How many evidence files the mirror's namespace directory holds. */
static size_t evidence_files(void)
{
	DIR *mirror = opendir(mirror_path(""));
	struct dirent *entry;
	size_t count = 0;

	ck_assert_ptr_nonnull(mirror);
	while ((entry = readdir(mirror)) != NULL) {
		size_t len = strlen(entry->d_name);
		count += len > 9 && strcmp(entry->d_name + len - 9, ".evidence") == 0;
	}
	closedir(mirror);
	return count;
}

/* The file fetch wrote is evidence verify-evidence proves: a headers file of the namespace's
 * origin and epoch holding the held note and then the fetched one, naming authority 1, against
 * the trust bundle and against the identity keys it lists. certificate_count is how many
 * certificate bundles it needed. */
static void assert_evidence_names_authority_1(const char *path, uint64_t epoch, const struct buffer *held,
                                              const struct buffer *fetched, size_t certificate_count)
{
	struct ctl_evidence_verdict verdict;
	struct evidence evidence;
	char detail[VERIFY_DETAIL_MAX];
	char name[128];
	size_t len = 0;
	uint8_t *file = test_read_file(path, &len);

	snprintf(name, sizeof(name), "/mix/headers-mix-%llu-", (unsigned long long)epoch);
	ck_assert_msg(strstr(path, name) != NULL, "evidence file %s", path);
	ck_assert_int_eq(evidence_parse(file, len, &evidence), 0);
	ck_assert_int_eq(evidence.kind, EVIDENCE_HEADERS);
	ck_assert_str_eq(evidence.origin, ORIGIN);
	ck_assert_uint_eq(evidence.epoch, epoch);
	ck_assert_uint_eq(evidence.key_count, bundle.authority_count);
	ck_assert_uint_eq(evidence.statements[0].len, held->len);
	ck_assert_int_eq(memcmp(evidence.statements[0].data, held->data, held->len), 0);
	ck_assert_uint_eq(evidence.statements[1].len, fetched->len);
	ck_assert_int_eq(memcmp(evidence.statements[1].data, fetched->data, fetched->len), 0);
	ck_assert_uint_eq(evidence.certificate_count, certificate_count);
	for (int pinned = 0; pinned < 2; pinned++) {
		int rc =
		    ctl_evidence_verify(pinned ? &bundle : NULL, file, len, &verdict, detail, sizeof(detail));
		ck_assert_msg(rc == 0, "%s", detail);
		ck_assert_int_eq(verdict.proven, 1);
		ck_assert_uint_eq(verdict.named_count, 1);
		ck_assert_msg(strncmp(verdict.named, "authority-1.test+", 17) == 0, "named %s",
		              verdict.named);
	}
	free(file);
}

START_TEST(test_equivocation_refused_with_evidence)
{
	static const int both[] = {AUTHORITY_1, AUTHORITY_2};
	struct snapshot_spec first_spec = {.epoch = 5, .record_count = 1};
	struct snapshot_spec more_spec = {.epoch = 5, .record_count = 1, .signers = both, .signer_count = 2};
	struct snapshot_spec second_spec = {.epoch = 5, .record_count = 2, .previous_byte = 1};
	struct built_snapshot first, more_signatures, second;
	struct ctl_fetch_result result;
	struct ctl_report report;
	char path[4200];

	pin_second_authority();
	make_snapshot(&first_spec, &first);
	make_snapshot(&more_spec, &more_signatures);
	make_snapshot(&second_spec, &second);
	assert_accepted(&first, &result);
	/* The same header text with one more cosignature is the same snapshot, not equivocation. */
	assert_accepted(&more_signatures, &result);
	assert_file_equals("latest.header", &more_signatures.header_note);

	assert_snapshot_refused(&second, 65, "equivocation", &report);
	assert_file_equals("latest.header", &more_signatures.header_note);
	/* The evidence holds both signed notes, held first, and proves authority 1 signed both. */
	snprintf(path, sizeof(path), "%s", evidence_path_of(&report));
	assert_evidence_names_authority_1(path, 5, &more_signatures.header_note, &second.header_note, 1);
	/* dirauthctl verify-evidence FILE --trust BUNDLE proves it (exit 3). */
	{
		char bundle_path[4200];
		char *args[] = {"verify-evidence", path, "--trust", bundle_path, NULL};
		struct buffer text;
		buffer_init(&text);
		ck_assert_int_eq(trust_bundle_encode(&bundle, &text), 0);
		snprintf(bundle_path, sizeof(bundle_path), "%s/trust.txt", directory);
		test_write_file(bundle_path, text.data, text.len, 0644);
		ctl_report_init(&report);
		ck_assert_msg(ctl_evidence_command(4, args, &report) == CTL_EVIDENCE_EXIT_PROVEN, "%s",
		              report.message);
		buffer_free(&text);
	}
	/* Refused again, the same evidence is the same file. */
	assert_snapshot_refused(&second, 65, "equivocation", &report);
	ck_assert_str_eq(evidence_path_of(&report), path);
	ck_assert_uint_eq(evidence_files(), 1);
	free_snapshot(&first);
	free_snapshot(&more_signatures);
	free_snapshot(&second);
}
END_TEST

/* The held header's signing key is certified only by the certificates kept with it: the file
 * carries both bundles, and proves what the fetched certificates alone could not. */
START_TEST(test_equivocation_evidence_keeps_held_certificates)
{
	static const int next_key[] = {AUTHORITY_1_NEXT};
	struct snapshot_spec held_spec = {.epoch = 5, .record_count = 1};
	struct snapshot_spec rotated_spec = {
	    .epoch = 5, .record_count = 2, .previous_byte = 1, .signers = next_key, .signer_count = 1};
	struct built_snapshot held, rotated;
	struct buffer notes[2];
	struct ctl_fetch_result result;
	struct ctl_report report;

	make_snapshot(&held_spec, &held);
	make_snapshot(&rotated_spec, &rotated);
	assert_accepted(&held, &result);
	/* The server now serves only the certificate of authority 1's next key. */
	for (size_t i = 0; i < 2; i++)
		buffer_init(&notes[i]);
	fixture_certificate(identities[IDENTITY_1], keys[AUTHORITY_1_NEXT], WINDOW_AFTER, WINDOW_UNTIL,
	                    &notes[0]);
	fixture_certificate(identities[IDENTITY_2], keys[AUTHORITY_2], WINDOW_AFTER, WINDOW_UNTIL, &notes[1]);
	buffer_reset(&certificates);
	fixture_certificate_bundle(notes, 2, &certificates);

	assert_snapshot_refused(&rotated, 65, "equivocation", &report);
	assert_file_equals("latest.header", &held.header_note);
	assert_evidence_names_authority_1(evidence_path_of(&report), 5, &held.header_note,
	                                  &rotated.header_note, 2);
	for (size_t i = 0; i < 2; i++)
		buffer_free(&notes[i]);
	free_snapshot(&held);
	free_snapshot(&rotated);
}
END_TEST

/* Two headers of one epoch signed by two different authorities (threshold 1 of 2) prove nobody's
 * misbehaviour: refused all the same, and no evidence file is written. */
START_TEST(test_equivocation_by_no_one_authority_writes_no_evidence)
{
	static const int second_authority[] = {AUTHORITY_2};
	struct snapshot_spec first_spec = {.epoch = 5, .record_count = 1};
	struct snapshot_spec other_spec = {.epoch = 5,
	                                   .record_count = 2,
	                                   .previous_byte = 1,
	                                   .signers = second_authority,
	                                   .signer_count = 1};
	struct built_snapshot first, other;
	struct ctl_fetch_result result;
	struct ctl_report report;

	pin_second_authority();
	make_snapshot(&first_spec, &first);
	make_snapshot(&other_spec, &other);
	assert_accepted(&first, &result);
	assert_snapshot_refused(&other, 65, "equivocation", &report);
	ck_assert_msg(strstr(report.message,
	                     "; evidence could not be written: it proves nobody's misbehaviour") != NULL,
	              "%s", report.message);
	assert_file_equals("latest.header", &first.header_note);
	ck_assert_uint_eq(evidence_files(), 0);
	free_snapshot(&first);
	free_snapshot(&other);
}
END_TEST

/* The evidence a fetch or a monitor keeps goes through ctl_evidence_keep. The second header also
 * carries a signature by authority 1's next key that does not verify, and only the first header's
 * certificates certify that key: with both bundles the file does not verify, with the second's
 * alone it proves authority 1 signed both, and that is the file written. The other way round,
 * nothing can take the bad signature's certificate away: nothing is written, and why says so. */
START_TEST(test_evidence_keep_tries_the_second_certificates_alone)
{
	static const int both_keys[] = {AUTHORITY_1, AUTHORITY_1_NEXT};
	struct snapshot_spec first_spec = {.epoch = 5, .record_count = 1};
	struct snapshot_spec second_spec = {
	    .epoch = 5, .record_count = 2, .previous_byte = 1, .signers = both_keys, .signer_count = 2};
	struct built_snapshot first, second;
	struct buffer note, second_certificates, file;
	struct ctl_evidence_verdict verdict;
	struct evidence e;
	char detail[VERIFY_DETAIL_MAX], why[VERIFY_DETAIL_MAX + 64], path[4200], kept[4200];
	int created = 0;

	make_snapshot(&first_spec, &first);
	make_snapshot(&second_spec, &second);
	/* The last signature line is the next key's. */
	uint8_t *damaged = &second.header_note.data[second.header_note.len - 6];
	*damaged = *damaged == 'A' ? 'B' : 'A';
	buffer_init(&note);
	buffer_init(&second_certificates);
	buffer_init(&file);
	fixture_certificate(identities[IDENTITY_1], keys[AUTHORITY_1], WINDOW_AFTER, WINDOW_UNTIL, &note);
	fixture_certificate_bundle(&note, 1, &second_certificates);
	snprintf(kept, sizeof(kept), "%s/kept", directory);

	ctl_evidence_between(&e, EVIDENCE_HEADERS, &bundle, ORIGIN, 5, first.header_note.data,
	                     first.header_note.len, second.header_note.data, second.header_note.len);
	ctl_evidence_add_certificates(&e, certificates.data, certificates.len);
	ctl_evidence_add_certificates(&e, second_certificates.data, second_certificates.len);
	ck_assert_int_eq(evidence_encode(&e, &file), 0);
	ck_assert_int_eq(ctl_evidence_verify(&bundle, file.data, file.len, &verdict, detail, sizeof(detail)),
	                 DIRAUTH_ERR_SIGNATURE);
	ck_assert_msg(ctl_evidence_keep(&bundle, &e, kept, "mix", 5, path, sizeof(path), &created, why,
	                                sizeof(why)) == 0,
	              "%s", why);
	ck_assert_int_eq(created, 1);
	ck_assert_uint_eq(e.certificate_count, 2);
	{
		struct evidence written;
		size_t len = 0;
		uint8_t *data = test_read_file(path, &len);
		ck_assert_int_eq(evidence_parse(data, len, &written), 0);
		ck_assert_uint_eq(written.certificate_count, 1);
		ck_assert_uint_eq(written.certificates[0].len, second_certificates.len);
		ck_assert_int_eq(ctl_evidence_verify(&bundle, data, len, &verdict, detail, sizeof(detail)),
		                 0);
		ck_assert_int_eq(verdict.proven, 1);
		free(data);
	}
	/* Found again: the same file, not written anew. */
	ck_assert_int_eq(ctl_evidence_keep(&bundle, &e, kept, "mix", 5, why, sizeof(why), &created, detail,
	                                   sizeof(detail)),
	                 0);
	ck_assert_int_eq(created, 0);
	ck_assert_str_eq(why, path);

	ctl_evidence_between(&e, EVIDENCE_HEADERS, &bundle, ORIGIN, 5, first.header_note.data,
	                     first.header_note.len, second.header_note.data, second.header_note.len);
	ctl_evidence_add_certificates(&e, second_certificates.data, second_certificates.len);
	ctl_evidence_add_certificates(&e, certificates.data, certificates.len);
	snprintf(kept, sizeof(kept), "%s/refused", directory);
	ck_assert_int_eq(
	    ctl_evidence_keep(&bundle, &e, kept, "mix", 5, path, sizeof(path), &created, why, sizeof(why)),
	    DIRAUTH_ERR_SIGNATURE);
	ck_assert_int_eq(created, 0);
	ck_assert_msg(strncmp(why, "it does not verify: ", 20) == 0, "%s", why);
	ck_assert_int_eq(access(kept, F_OK), -1);

	buffer_free(&note);
	buffer_free(&second_certificates);
	buffer_free(&file);
	free_snapshot(&first);
	free_snapshot(&second);
}
END_TEST

START_TEST(test_body_digest_mismatch_refused)
{
	struct snapshot_spec spec = {.epoch = 5, .record_count = 2};
	struct snapshot_spec other_spec = {.epoch = 5, .record_count = 1};
	struct built_snapshot snapshot, other;
	struct ctl_report report;
	char *flip;

	make_snapshot(&spec, &snapshot);
	make_snapshot(&other_spec, &other);
	/* Another body altogether. */
	assert_verify_refused(&snapshot.header_note, "identity", &other.body, 65,
	                      "does not match the signed header", &report);
	/* The right size, one byte changed: the digest catches it. */
	flip = strstr((char *)snapshot.body.data, "192.0.2.1:443");
	ck_assert_ptr_nonnull(flip);
	flip[8] = '9';
	assert_snapshot_refused(&snapshot, 65, "does not match the signed header", &report);
	assert_nothing_written();
	free_snapshot(&snapshot);
	free_snapshot(&other);
}
END_TEST

START_TEST(test_tampered_record_signature_refused)
{
	struct snapshot_spec spec = {.epoch = 5, .record_count = 2, .tamper_record = 1};
	struct ctl_report report;

	/* The authorities signed a header committing to this body: only the record check catches it. */
	assert_spec_refused(&spec, 65, "provider signature does not verify", &report);
}
END_TEST

START_TEST(test_body_larger_than_bound_refused)
{
	struct snapshot_spec spec = {.epoch = 5, .record_count = 3};
	struct built_snapshot snapshot;
	struct buffer served;
	struct ctl_fetch_result result;
	struct ctl_report report;

	make_snapshot(&spec, &snapshot);
	buffer_init(&served);
	ck_assert_int_eq(compress_encode(ENCODING_GZIP, snapshot.body.data, snapshot.body.len, &served), 0);

	/* The header announces more than the bundle allows uncompressed: refused before the body. */
	bundle.max_body_uncompressed = snapshot.body.len - 1;
	assert_verify_refused(&snapshot.header_note, "gzip", &served, 65, "the trust bundle allows", &report);
	bundle.max_body_uncompressed = snapshot.body.len;

	/* The body as served is larger than the bundle allows compressed. */
	bundle.max_body_compressed = served.len - 1;
	assert_verify_refused(&snapshot.header_note, "gzip", &served, 65, "body: response larger than",
	                      &report);
	bundle.max_body_compressed = served.len;

	/* More records than the bundle allows. */
	bundle.max_records = 2;
	assert_verify_refused(&snapshot.header_note, "gzip", &served, 65, "3 records", &report);
	assert_nothing_written();
	bundle.max_records = 3;
	ck_assert_int_eq(verify(&snapshot.header_note, "gzip", served.data, served.len, &result, &report), 0);
	free_snapshot(&snapshot);
	buffer_free(&served);
}
END_TEST

START_TEST(test_decompression_bomb_refused)
{
	static const enum content_encoding encodings[] = {ENCODING_ZSTD, ENCODING_GZIP};
	enum content_encoding encoding = encodings[_i];
	struct snapshot_spec spec = {.epoch = 5, .record_count = 1};
	struct built_snapshot snapshot;
	struct buffer bomb;
	struct ctl_report report;
	size_t zeros_len = 16 * 1024 * 1024;
	uint8_t *zeros = calloc(1, zeros_len);

	ck_assert_ptr_nonnull(zeros);
	make_snapshot(&spec, &snapshot);
	buffer_init(&bomb);
	/* 16 MiB of zeros compress to a few KiB; the header promises a body of a few hundred bytes. */
	ck_assert_int_eq(compress_encode(encoding, zeros, zeros_len, &bomb), 0);
	ck_assert_uint_lt(bomb.len, 64 * 1024);
	assert_verify_refused(&snapshot.header_note, content_encoding_name(encoding), &bomb, 65,
	                      "decompresses past its bound", &report);
	assert_nothing_written();
	free(zeros);
	free_snapshot(&snapshot);
	buffer_free(&bomb);
}
END_TEST

START_TEST(test_corrupt_or_unknown_encoding_refused)
{
	struct snapshot_spec spec = {.epoch = 5, .record_count = 1};
	struct built_snapshot snapshot;
	struct buffer served;
	struct ctl_fetch_result result;
	struct ctl_report report;
	int rc;

	make_snapshot(&spec, &snapshot);
	buffer_init(&served);
	ck_assert_int_eq(compress_encode(ENCODING_ZSTD, snapshot.body.data, snapshot.body.len, &served), 0);
	served.data[served.len / 2] ^= 0x55;
	served.len -= 3;
	rc = verify(&snapshot.header_note, "zstd", served.data, served.len, &result, &report);
	ck_assert_int_ne(rc, 0);
	ck_assert_int_eq(report.exit_code, 65);
	assert_verify_refused(&snapshot.header_note, "br", &snapshot.body, 65,
	                      "unsupported content encoding 'br'", &report);
	/* Gzip bytes labelled zstd do not decode. */
	buffer_reset(&served);
	ck_assert_int_eq(compress_encode(ENCODING_GZIP, snapshot.body.data, snapshot.body.len, &served), 0);
	assert_verify_refused(&snapshot.header_note, "zstd", &served, 65, "cannot decode zstd", &report);
	assert_nothing_written();
	free_snapshot(&snapshot);
	buffer_free(&served);
}
END_TEST

START_TEST(test_garbage_header_refused)
{
	struct ctl_report report;
	struct buffer garbage;

	buffer_init(&garbage);
	ck_assert_int_eq(buffer_append_string(&garbage, "<html>not a note</html>\n"), 0);
	assert_verify_refused(&garbage, "identity", &garbage, 65, "not a signed note", &report);
	assert_nothing_written();
	buffer_free(&garbage);
}
END_TEST

START_TEST(test_unreadable_held_header_denies)
{
	struct snapshot_spec spec = {.epoch = 5, .record_count = 1};
	struct built_snapshot snapshot;
	struct ctl_report report;
	char namespace_directory[4200];

	make_snapshot(&spec, &snapshot);
	snprintf(namespace_directory, sizeof(namespace_directory), "%s/mix", directory);
	ck_assert_int_eq(mkdir(namespace_directory, 0755), 0);
	test_write_file(mirror_path("latest.header"), "garbage\n", 8, 0644);
	assert_snapshot_refused(&snapshot, 65, "cannot be read back", &report);
	ck_assert(!mirror_has("5.header"));
	free_snapshot(&snapshot);
}
END_TEST

START_TEST(test_unwritable_mirror_directory)
{
	struct snapshot_spec spec = {.epoch = 5, .record_count = 1};
	struct built_snapshot snapshot;
	struct ctl_fetch_result result;
	struct ctl_report report;
	char blocker[4200];

	make_snapshot(&spec, &snapshot);
	/* A file where the namespace directory should be. */
	snprintf(blocker, sizeof(blocker), "%s/mix", directory);
	test_write_file(blocker, "x", 1, 0644);
	ck_assert_int_ne(verify_snapshot_with_links(&snapshot, NULL, 0, &result, &report), 0);
	ck_assert_int_eq(report.exit_code, 73);
	ck_assert_ptr_nonnull(strstr(report.message, "cannot write"));
	free_snapshot(&snapshot);
}
END_TEST

/* The network half, over loopback. */

struct served_snapshot {
	struct buffer header_note;
	struct buffer body;
	struct buffer zstd_body;
};

/* The certificate bundle, served as an authority serves it. */
static void serve_certificates(struct canned_server *server)
{
	struct canned_route route = {.path = "/v1/certificates",
	                             .status = 200,
	                             .content_type = "text/plain; charset=utf-8",
	                             .body = certificates.data,
	                             .body_len = certificates.len};
	canned_server_route(server, &route);
}

static void serve_snapshot_until(struct canned_server *server, struct served_snapshot *snapshot,
                                 uint64_t epoch, uint64_t valid_until)
{
	struct snapshot_spec spec = {.epoch = epoch, .record_count = 2, .valid_until = valid_until};
	static char body_path[128];
	struct canned_route header_route = {
	    .path = "/v1/mix/snapshots/latest", .status = 200, .content_type = "text/plain; charset=utf-8"};
	struct canned_route body_route = {
	    .status = 200, .content_type = "application/octet-stream", .content_encoding = "zstd"};

	buffer_init(&snapshot->header_note);
	buffer_init(&snapshot->body);
	buffer_init(&snapshot->zstd_body);
	build_snapshot(&spec, &snapshot->header_note, &snapshot->body);
	ck_assert_int_eq(
	    compress_encode(ENCODING_ZSTD, snapshot->body.data, snapshot->body.len, &snapshot->zstd_body), 0);
	header_route.body = snapshot->header_note.data;
	header_route.body_len = snapshot->header_note.len;
	snprintf(body_path, sizeof(body_path), "/v1/mix/snapshots/%llu/body", (unsigned long long)epoch);
	body_route.path = body_path;
	body_route.body = snapshot->zstd_body.data;
	body_route.body_len = snapshot->zstd_body.len;
	canned_server_route(server, &header_route);
	canned_server_route(server, &body_route);
	serve_certificates(server);
}

static void serve_snapshot(struct canned_server *server, struct served_snapshot *snapshot, uint64_t epoch)
{
	serve_snapshot_until(server, snapshot, epoch, 0);
}

static void served_snapshot_free(struct served_snapshot *snapshot)
{
	buffer_free(&snapshot->header_note);
	buffer_free(&snapshot->body);
	buffer_free(&snapshot->zstd_body);
}

static int run_fetch(const char *url, struct ctl_fetch_result *result, struct ctl_report *report)
{
	struct ctl_fetch_options options = {
	    .server_url = url,
	    .bundle = &bundle,
	    .namespace_name = "mix",
	    .directory = directory,
	    .now = NOW,
	    .policy = &policy,
	};

	ctl_report_init(report);
	return ctl_fetch_run(&options, result, report);
}

/* A fetch from url is refused as assert_refused checks; report is left for the caller's further
 * checks. */
static void assert_fetch_refused(const char *url, int expected_exit, const char *word,
                                 struct ctl_report *report)
{
	struct ctl_fetch_result result;

	assert_refused(run_fetch(url, &result, report), report, expected_exit, word);
}

static unsigned requests_served(struct canned_server *server)
{
	unsigned count;

	pthread_mutex_lock(&server->lock);
	count = server->request_count;
	pthread_mutex_unlock(&server->lock);
	return count;
}

START_TEST(test_network_fetch_verifies_and_stores)
{
	struct canned_server server;
	struct served_snapshot snapshot;
	struct ctl_fetch_result result;
	struct ctl_report report;
	char url[64];
	char with_slash[80];

	canned_server_start(&server);
	serve_snapshot(&server, &snapshot, 12);
	canned_server_url(&server, url, sizeof(url));
	snprintf(with_slash, sizeof(with_slash), "%s/", url);
	ck_assert_msg(run_fetch(with_slash, &result, &report) == 0, "%s", report.message);
	ck_assert_uint_eq(result.epoch, 12);
	ck_assert_uint_eq(result.record_count, 2);
	assert_file_equals("12.header", &snapshot.header_note);
	assert_file_equals("12.body", &snapshot.body);
	assert_file_equals("latest.header", &snapshot.header_note);
	assert_file_equals("certificates", &certificates);
	ck_assert_uint_eq(result.signer_count, 1);
	ck_assert_str_eq(result.signer_names, "authority-1.test");
	/* The body request named the encodings itself (curl's own decoding is off). */
	pthread_mutex_lock(&server.lock);
	ck_assert_ptr_nonnull(strstr(server.last_request, "GET /v1/mix/snapshots/12/body HTTP/1.1\r\n"));
	ck_assert_ptr_nonnull(strstr(server.last_request, "\r\nAccept-Encoding: zstd, gzip\r\n"));
	/* Header, certificates, body. */
	ck_assert_uint_eq(server.request_count, 3);
	pthread_mutex_unlock(&server.lock);
	/* Again, the same snapshot: the body held is the one its header signs, so only the
	 * certificates and the header are asked for, and the body file is left as it is (the same
	 * file, not written again). */
	struct stat before, after;
	ck_assert_int_eq(stat(mirror_path("12.body"), &before), 0);
	ck_assert_msg(run_fetch(url, &result, &report) == 0, "%s", report.message);
	ck_assert(result.diff.held && !result.diff.used);
	ck_assert_int_eq(stat(mirror_path("12.body"), &after), 0);
	ck_assert_uint_eq(after.st_ino, before.st_ino);
	assert_file_equals("12.body", &snapshot.body);
	assert_file_equals("latest.header", &snapshot.header_note);
	pthread_mutex_lock(&server.lock);
	ck_assert_uint_eq(server.request_count, 5);
	ck_assert_ptr_nonnull(strstr(server.last_request, "GET /v1/mix/snapshots/latest HTTP/1.1\r\n"));
	pthread_mutex_unlock(&server.lock);
	/* A held body that no longer hashes to the header's digest is no base: fetched whole. */
	FILE *tampered = fopen(mirror_path("12.body"), "r+b");
	ck_assert_ptr_nonnull(tampered);
	ck_assert_int_eq(fputc('#', tampered), '#');
	ck_assert_int_eq(fclose(tampered), 0);
	ck_assert_msg(run_fetch(url, &result, &report) == 0, "%s", report.message);
	ck_assert(!result.diff.held);
	assert_file_equals("12.body", &snapshot.body);
	pthread_mutex_lock(&server.lock);
	ck_assert_uint_eq(server.request_count, 8);
	pthread_mutex_unlock(&server.lock);
	canned_server_stop(&server);
	served_snapshot_free(&snapshot);
}
END_TEST

static int run_fetch_servers(const char *const *urls, size_t count, struct ctl_fetch_attempt *attempts,
                             size_t *attempt_count, struct ctl_fetch_result *result,
                             struct ctl_report *report)
{
	struct ctl_fetch_options options = {
	    .bundle = &bundle,
	    .namespace_name = "mix",
	    .directory = directory,
	    .now = NOW,
	    .policy = &policy,
	};

	ctl_report_init(report);
	return ctl_fetch_run_servers(&options, urls, count, attempts, attempt_count, result, report);
}

/* Several servers are tried in turn; the first whose snapshot verifies is stored, and each one
 * passed over is kept with its refusal. */
START_TEST(test_network_several_servers_first_that_verifies)
{
	struct canned_server empty, good;
	struct served_snapshot snapshot;
	struct ctl_fetch_attempt attempts[3];
	struct ctl_fetch_result result;
	struct ctl_report report;
	char empty_url[64], good_url[64], dead_url[64];
	size_t attempt_count = 0;

	canned_server_start(&empty);
	canned_server_start(&good);
	serve_snapshot(&good, &snapshot, 12);
	canned_server_url(&empty, empty_url, sizeof(empty_url));
	canned_server_url(&good, good_url, sizeof(good_url));
	snprintf(dead_url, sizeof(dead_url), "http://127.0.0.1:%u", test_free_port());
	{
		const char *const urls[] = {empty_url, dead_url, good_url};
		ck_assert_msg(run_fetch_servers(urls, 3, attempts, &attempt_count, &result, &report) == 0,
		              "%s", report.message);
	}
	ck_assert_uint_eq(attempt_count, 3);
	ck_assert_int_eq(attempts[0].exit_code, 76);
	ck_assert_ptr_nonnull(strstr(attempts[0].message, "fetch mix: certificates: HTTP 404"));
	ck_assert_int_eq(attempts[1].exit_code, 69);
	ck_assert_int_eq(attempts[2].exit_code, 0);
	ck_assert_str_eq(attempts[2].server_url, good_url);
	ck_assert_uint_eq(result.epoch, 12);
	assert_file_equals("latest.header", &snapshot.header_note);
	/* The first that verifies ends the walk: the later ones are never asked. */
	{
		const char *const urls[] = {good_url, empty_url};
		unsigned before;
		before = requests_served(&empty);
		ck_assert_int_eq(run_fetch_servers(urls, 2, attempts, &attempt_count, &result, &report), 0);
		ck_assert_uint_eq(attempt_count, 1);
		ck_assert_uint_eq(requests_served(&empty), before);
	}
	/* None serves one: the first server's status when no answer failed verification. */
	{
		const char *const urls[] = {empty_url, dead_url};
		ck_assert_int_ne(run_fetch_servers(urls, 2, attempts, &attempt_count, &result, &report), 0);
		ck_assert_uint_eq(attempt_count, 2);
		ck_assert_int_eq(report.exit_code, 76);
		ck_assert_str_eq(report.message, "fetch mix: none of the 2 servers served a snapshot that "
		                                 "verifies (each is listed above)");
	}
	/* Refused before any download: no server, too many, a namespace the bundle does not pin. */
	{
		const char *const urls[] = {good_url};
		struct ctl_fetch_options options = {
		    .bundle = &bundle, .namespace_name = "other", .directory = directory, .now = NOW};
		unsigned before;
		ck_assert_int_eq(run_fetch_servers(urls, 0, attempts, &attempt_count, &result, &report),
		                 DIRAUTH_ERR_CONFIG);
		ck_assert_int_eq(report.exit_code, 64);
		ck_assert_int_eq(run_fetch_servers(urls, CTL_FETCH_SERVERS_MAX + 1, attempts, &attempt_count,
		                                   &result, &report),
		                 DIRAUTH_ERR_CONFIG);
		ck_assert_int_eq(report.exit_code, 64);
		before = requests_served(&good);
		ctl_report_init(&report);
		ck_assert_int_eq(
		    ctl_fetch_run_servers(&options, urls, 1, attempts, &attempt_count, &result, &report),
		    DIRAUTH_ERR_CONFIG);
		ck_assert_int_eq(report.exit_code, 78);
		ck_assert_uint_eq(attempt_count, 0);
		ck_assert_uint_eq(requests_served(&good), before);
	}
	canned_server_stop(&empty);
	canned_server_stop(&good);
	served_snapshot_free(&snapshot);
}
END_TEST

/* A stale snapshot (valid-until passed) is reported stale, 75, and never stored; a forged one
 * from another server makes it 65 only when no server offered a stale one. */
START_TEST(test_network_several_servers_stale_and_forged)
{
	struct canned_server stale, forged;
	struct served_snapshot stale_snapshot, forged_snapshot;
	struct ctl_fetch_attempt attempts[2];
	struct ctl_fetch_result result;
	struct ctl_report report;
	struct buffer no_certificates;
	char stale_url[64], forged_url[64];
	size_t attempt_count = 0;

	buffer_init(&no_certificates);
	fixture_certificate_bundle(NULL, 0, &no_certificates);
	canned_server_start(&stale);
	canned_server_start(&forged);
	serve_snapshot_until(&stale, &stale_snapshot, 12, NOW);
	serve_snapshot(&forged, &forged_snapshot, 13);
	/* The forged server certifies nothing: its header's signature counts for no one. */
	pthread_mutex_lock(&forged.lock);
	forged.routes[2].body = no_certificates.data;
	forged.routes[2].body_len = no_certificates.len;
	pthread_mutex_unlock(&forged.lock);
	canned_server_url(&stale, stale_url, sizeof(stale_url));
	canned_server_url(&forged, forged_url, sizeof(forged_url));
	ck_assert_int_eq(run_fetch(stale_url, &result, &report), DIRAUTH_ERR_STALE);
	ck_assert_int_eq(report.exit_code, 75);
	ck_assert_ptr_nonnull(strstr(report.message, "fetch mix: header: stale: epoch 12 was valid until"));
	assert_nothing_written();
	{
		const char *const urls[] = {forged_url, stale_url};
		ck_assert_int_ne(run_fetch_servers(urls, 2, attempts, &attempt_count, &result, &report), 0);
		ck_assert_uint_eq(attempt_count, 2);
		ck_assert_int_eq(attempts[0].exit_code, 65);
		ck_assert_int_eq(attempts[1].exit_code, 75);
		ck_assert_int_eq(report.exit_code, 75);
		ck_assert_str_eq(report.message, "fetch mix: stale: none of the 2 servers served a snapshot "
		                                 "that is valid now (each is listed above)");
		assert_nothing_written();
	}
	{
		const char *const urls[] = {forged_url};
		ck_assert_int_ne(run_fetch_servers(urls, 1, attempts, &attempt_count, &result, &report), 0);
		ck_assert_int_eq(report.exit_code, 65);
	}
	canned_server_stop(&stale);
	canned_server_stop(&forged);
	served_snapshot_free(&stale_snapshot);
	served_snapshot_free(&forged_snapshot);
	buffer_free(&no_certificates);
}
END_TEST

START_TEST(test_network_downloads_are_bounded)
{
	struct canned_server server;
	struct ctl_report report;
	size_t big_len = CTL_FETCH_HEADER_NOTE_MAX + 4096;
	uint8_t *big = malloc(big_len);
	struct canned_route header_route = {.path = "/v1/mix/snapshots/latest", .status = 200};
	char url[64];

	ck_assert_ptr_nonnull(big);
	memset(big, 'a', big_len);
	header_route.body = big;
	header_route.body_len = big_len;
	/* Without a Content-Length only the write callback can stop it. */
	header_route.omit_length = _i;
	canned_server_start(&server);
	serve_certificates(&server);
	canned_server_route(&server, &header_route);
	canned_server_url(&server, url, sizeof(url));
	assert_fetch_refused(url, 65, "larger than", &report);
	assert_nothing_written();
	canned_server_stop(&server);
	free(big);
}
END_TEST

/* The certificate bundle is fetched from the same server, bounded, and required. */
START_TEST(test_network_certificates_bounded_and_required)
{
	struct canned_server server;
	struct served_snapshot snapshot;
	struct ctl_fetch_result result;
	struct ctl_report report;
	size_t big_len = CERTIFICATE_BUNDLE_MAX_BYTES + 4096;
	uint8_t *big = malloc(big_len);
	char url[64];
	int rc;

	ck_assert_ptr_nonnull(big);
	memset(big, 'c', big_len);
	canned_server_start(&server);
	serve_snapshot(&server, &snapshot, 4);
	canned_server_url(&server, url, sizeof(url));
	/* Too large, without a Content-Length: the transfer is cut at the bound. */
	pthread_mutex_lock(&server.lock);
	server.routes[2].body = big;
	server.routes[2].body_len = big_len;
	server.routes[2].omit_length = 1;
	pthread_mutex_unlock(&server.lock);
	assert_fetch_refused(url, 65, "certificates: response larger than", &report);
	assert_nothing_written();
	/* Not served (an authority that does not serve certificates): refused by the server, 76. */
	pthread_mutex_lock(&server.lock);
	server.routes[2].path = "/v1/no-certificates";
	pthread_mutex_unlock(&server.lock);
	rc = run_fetch(url, &result, &report);
	ck_assert_int_eq(rc, DIRAUTH_ERR_REFUSED);
	ck_assert_int_eq(report.exit_code, 76);
	ck_assert_msg(strstr(report.message, "fetch mix: certificates: HTTP 404") != NULL, "%s",
	              report.message);
	assert_nothing_written();
	canned_server_stop(&server);
	served_snapshot_free(&snapshot);
	free(big);
}
END_TEST

START_TEST(test_network_body_bound_aborts_transfer)
{
	struct canned_server server;
	struct served_snapshot snapshot;
	struct ctl_report report;
	char url[64];

	canned_server_start(&server);
	serve_snapshot(&server, &snapshot, 3);
	/* Unannounced length and a body over the compressed bound. */
	pthread_mutex_lock(&server.lock);
	server.routes[1].omit_length = 1;
	pthread_mutex_unlock(&server.lock);
	bundle.max_body_compressed = snapshot.zstd_body.len - 1;
	canned_server_url(&server, url, sizeof(url));
	assert_fetch_refused(url, 65, "body: response larger than", &report);
	assert_nothing_written();
	canned_server_stop(&server);
	served_snapshot_free(&snapshot);
}
END_TEST

START_TEST(test_network_server_answers_map_to_exit_codes)
{
	static const char not_found[] = "{\"error\":\"unknown_namespace\",\"detail\":\"no such namespace.\"}";
	static const char unavailable[] = "{\"error\":\"unavailable\",\"detail\":\"try later\"}";
	static const char redirect[] = "";
	struct canned_route route = {.path = "/v1/mix/snapshots/latest", .content_type = "application/json"};
	struct canned_server server;
	struct ctl_fetch_result result;
	struct ctl_report report;
	char url[64];
	int rc;

	canned_server_start(&server);
	serve_certificates(&server);
	canned_server_url(&server, url, sizeof(url));
	/* 4xx: the server refused (76), with its machine-readable code and detail. */
	route.status = 404;
	route.body = (const uint8_t *)not_found;
	route.body_len = strlen(not_found);
	canned_server_route(&server, &route);
	rc = run_fetch(url, &result, &report);
	ck_assert_int_eq(rc, DIRAUTH_ERR_REFUSED);
	ck_assert_int_eq(report.exit_code, 76);
	ck_assert_msg(strstr(report.message, "HTTP 404: unknown_namespace: no such namespace.") != NULL, "%s",
	              report.message);
	/* 5xx: unavailable (69). Later routes win. */
	route.status = 503;
	route.body = (const uint8_t *)unavailable;
	route.body_len = strlen(unavailable);
	canned_server_route(&server, &route);
	rc = run_fetch(url, &result, &report);
	ck_assert_int_eq(report.exit_code, 69);
	ck_assert_ptr_nonnull(strstr(report.message, "HTTP 503: unavailable: try later"));
	/* A redirect is not followed. */
	route.status = 302;
	route.body = (const uint8_t *)redirect;
	route.body_len = 0;
	canned_server_route(&server, &route);
	rc = run_fetch(url, &result, &report);
	ck_assert_int_eq(report.exit_code, 76);
	ck_assert_ptr_nonnull(strstr(report.message, "HTTP 302"));
	canned_server_stop(&server);
	assert_nothing_written();
	(void)rc;
}
END_TEST

START_TEST(test_network_connection_refused_is_unavailable)
{
	struct ctl_fetch_result result;
	struct ctl_report report;
	char url[64];
	int rc;

	snprintf(url, sizeof(url), "http://127.0.0.1:%u", test_free_port());
	rc = run_fetch(url, &result, &report);
	ck_assert_int_eq(rc, DIRAUTH_ERR_UNAVAILABLE);
	ck_assert_int_eq(report.exit_code, 69);
	/* Only http and https. */
	rc = run_fetch("file:///etc", &result, &report);
	ck_assert_int_ne(rc, 0);
	ck_assert_int_ne(report.exit_code, 0);
	assert_nothing_written();
}
END_TEST

/* Serves epoch 9 of history as latest, with its body and the certificates. */
static void serve_history(struct canned_server *server, const struct history *history)
{
	struct canned_route latest = {.path = "/v1/mix/snapshots/latest", .status = 200};
	struct canned_route body = {.path = "/v1/mix/snapshots/9/body", .status = 200};
	struct canned_route certificates_route = {.path = "/v1/certificates", .status = 200};

	latest.body = history->epochs[9].header_note.data;
	latest.body_len = history->epochs[9].header_note.len;
	body.body = history->epochs[9].body.data;
	body.body_len = history->epochs[9].body.len;
	certificates_route.body = certificates.data;
	certificates_route.body_len = certificates.len;
	canned_server_route(server, &latest);
	canned_server_route(server, &body);
	canned_server_route(server, &certificates_route);
}

static void serve_link(struct canned_server *server, const char *path, int status, const struct buffer *note)
{
	struct canned_route route = {.path = path, .status = status};

	route.body = note->data;
	route.body_len = note->len;
	canned_server_route(server, &route);
}

/* The walk over the network: GET /snapshots/8, then 7, which names the held 5; 6 is never asked
 * for. A 404 (no snapshot for an epoch) is skipped. */
START_TEST(test_network_chain_walk)
{
	struct canned_server server;
	struct history history;
	struct ctl_fetch_result result;
	struct ctl_report report;
	char url[64];

	build_history(&history);
	hold_epoch_5(&history);
	canned_server_start(&server);
	serve_history(&server, &history);
	serve_link(&server, "/v1/mix/snapshots/8", 200, &history.epochs[8].header_note);
	serve_link(&server, "/v1/mix/snapshots/7", 200, &history.epochs[7].header_note);
	canned_server_url(&server, url, sizeof(url));
	ck_assert_msg(run_fetch(url, &result, &report) == 0, "%s", report.message);
	ck_assert_uint_eq(result.epoch, 9);
	assert_held(&history, 9);
	/* Latest, certificates, 8, 7, the diff from 5's body (none: 404), body. */
	ck_assert_uint_eq(requests_served(&server), 6);
	ck_assert(result.diff.asked && !result.diff.used);
	ck_assert_uint_eq(result.diff.base_epoch, 5);
	ck_assert_str_eq(result.diff.why, "the server offers no diff from epoch 5");
	canned_server_stop(&server);

	/* Again from 5, with 8 not served (404): skipped, and 7 is then not 9's previous. */
	empty_mirror();
	hold_epoch_5(&history);
	canned_server_start(&server);
	serve_history(&server, &history);
	serve_link(&server, "/v1/mix/snapshots/7", 200, &history.epochs[7].header_note);
	canned_server_url(&server, url, sizeof(url));
	ck_assert_int_ne(run_fetch(url, &result, &report), 0);
	ck_assert_int_eq(report.exit_code, 65);
	ck_assert_msg(strstr(report.message,
	                     "fetch mix: history does not chain to the held snapshot (epoch 5): "
	                     "epoch 7 is not the previous header of epoch 9") != NULL,
	              "%s", report.message);
	assert_held(&history, 5);
	ck_assert(!mirror_has("9.body"));
	/* Latest, certificates, 8 (404), 7; no body. */
	ck_assert_uint_eq(requests_served(&server), 4);
	canned_server_stop(&server);
	history_free(&history);
}
END_TEST

START_TEST(test_network_chain_refusals)
{
	struct canned_server server;
	struct history history;
	struct ctl_fetch_result result;
	struct ctl_report report;
	char url[64];
	int rc;

	build_history(&history);
	hold_epoch_5(&history);
	canned_server_start(&server);
	serve_history(&server, &history);
	canned_server_url(&server, url, sizeof(url));
	/* Nothing served between: the walk runs out at the held epoch (8, 7 and 6 are 404). */
	assert_fetch_refused(url, 65, "history does not chain to the held snapshot (epoch 5)", &report);
	ck_assert_uint_eq(requests_served(&server), 5);
	/* Too far for the bound: refused before any history is downloaded. */
	policy.max_chain = 3;
	assert_fetch_refused(url, 65, "re-seeded deliberately", &report);
	ck_assert_uint_eq(requests_served(&server), 7);
	policy.max_chain = VERIFY_DEFAULT_MAX_CHAIN;
	/* A server failing on a history epoch is unavailable (69), another answer refused (76). */
	serve_link(&server, "/v1/mix/snapshots/8", 503, &history.epochs[8].header_note);
	rc = run_fetch(url, &result, &report);
	ck_assert_int_eq(rc, DIRAUTH_ERR_UNAVAILABLE);
	ck_assert_int_eq(report.exit_code, 69);
	ck_assert_msg(strstr(report.message, "fetch mix: history: epoch 8: HTTP 503") != NULL, "%s",
	              report.message);
	serve_link(&server, "/v1/mix/snapshots/8", 403, &history.epochs[8].header_note);
	rc = run_fetch(url, &result, &report);
	ck_assert_int_eq(report.exit_code, 76);
	/* A link larger than a header note is cut at the bound. */
	{
		size_t big_len = CTL_FETCH_HEADER_NOTE_MAX + 4096;
		uint8_t *big = malloc(big_len);
		struct canned_route route = {.path = "/v1/mix/snapshots/8", .status = 200, .omit_length = 1};
		ck_assert_ptr_nonnull(big);
		memset(big, 'h', big_len);
		route.body = big;
		route.body_len = big_len;
		canned_server_route(&server, &route);
		assert_fetch_refused(url, 65, "history: epoch 8: response larger than", &report);
		canned_server_stop(&server);
		free(big);
	}
	assert_held(&history, 5);
	ck_assert(!mirror_has("9.header"));
	history_free(&history);
}
END_TEST

static Suite *fetch_suite(void)
{
	Suite *suite = suite_create("fetch");
	TCase *verification = tcase_create("verification");
	TCase *network = tcase_create("network");

	tcase_add_checked_fixture(verification, setup, teardown);
	tcase_set_timeout(verification, 60);
	tcase_add_loop_test(verification, test_valid_snapshot_accepted_and_written, 0, 3);
	tcase_add_test(verification, test_threshold_two_of_two_accepted_and_newer_epoch_replaces);
	tcase_add_test(verification, test_bad_signature_refused);
	tcase_add_test(verification, test_too_few_signatures_refused);
	tcase_add_test(verification, test_unknown_authority_refused);
	tcase_add_test(verification, test_uncertified_signing_key_refused);
	tcase_add_test(verification, test_certificate_by_unpinned_identity_refused);
	tcase_add_test(verification, test_header_time_outside_certificate_window_refused);
	tcase_add_test(verification, test_two_keys_of_one_identity_count_once);
	tcase_add_test(verification, test_header_signed_by_identity_key_refused);
	tcase_add_test(verification, test_malformed_or_empty_certificate_bundle_refused);
	tcase_add_test(verification, test_wrong_namespace_or_origin_refused);
	tcase_add_test(verification, test_namespace_not_in_bundle_is_config_error);
	tcase_add_test(verification, test_stale_refused);
	tcase_add_test(verification, test_not_yet_valid_refused);
	tcase_add_test(verification, test_expired_signing_key_refused_whatever_the_header_time);
	tcase_add_test(verification, test_validity_longer_than_bound_refused);
	tcase_add_test(verification, test_chain_through_gap_accepted);
	tcase_add_test(verification, test_chain_that_does_not_reach_held_refused);
	tcase_add_test(verification, test_chain_link_verified_as_header);
	tcase_add_test(verification, test_chain_too_long_asks_for_reseed);
	tcase_add_test(verification, test_verify_chain_stops_at_held_header);
	tcase_add_test(verification, test_rollback_refused);
	tcase_add_test(verification, test_equivocation_refused_with_evidence);
	tcase_add_test(verification, test_equivocation_evidence_keeps_held_certificates);
	tcase_add_test(verification, test_equivocation_by_no_one_authority_writes_no_evidence);
	tcase_add_test(verification, test_evidence_keep_tries_the_second_certificates_alone);
	tcase_add_test(verification, test_body_digest_mismatch_refused);
	tcase_add_test(verification, test_tampered_record_signature_refused);
	tcase_add_test(verification, test_body_larger_than_bound_refused);
	tcase_add_loop_test(verification, test_decompression_bomb_refused, 0, 2);
	tcase_add_test(verification, test_corrupt_or_unknown_encoding_refused);
	tcase_add_test(verification, test_garbage_header_refused);
	tcase_add_test(verification, test_unreadable_held_header_denies);
	tcase_add_test(verification, test_unwritable_mirror_directory);
	suite_add_tcase(suite, verification);

	tcase_add_checked_fixture(network, setup, teardown);
	tcase_set_timeout(network, 60);
	tcase_add_test(network, test_network_fetch_verifies_and_stores);
	tcase_add_test(network, test_network_several_servers_first_that_verifies);
	tcase_add_test(network, test_network_several_servers_stale_and_forged);
	tcase_add_loop_test(network, test_network_downloads_are_bounded, 0, 2);
	tcase_add_test(network, test_network_certificates_bounded_and_required);
	tcase_add_test(network, test_network_body_bound_aborts_transfer);
	tcase_add_test(network, test_network_server_answers_map_to_exit_codes);
	tcase_add_test(network, test_network_connection_refused_is_unavailable);
	tcase_add_test(network, test_network_chain_walk);
	tcase_add_test(network, test_network_chain_refusals);
	suite_add_tcase(suite, network);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(fetch_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
