/*
 * check_register.c: dirauthctl register: building and signing the registration, checking the
 * receipt, and the exchange with an authority over loopback.
 *
 * Keys are generated in the test (signer/key.h). The authority has an identity key (pinned in
 * the trust bundle) and a signing key certified by it; the receipts are built and signed here
 * like an authority would, so that every way a receipt can be wrong (another service, sequence,
 * namespace or note; an unknown, uncertified or lying signer; a signing key whose certificate
 * does not cover the receipt's accepted-at; a bad signature) is shown to be refused. The
 * server is a canned HTTP server on 127.0.0.1 so the test controls each answer exactly; since
 * Ed25519 signatures are deterministic, the test can compute the note the command will post and
 * serve the receipt for it.
 */
#include "base/buffer.h"
#include "canned_http.h"
#include "certificate_fixture.h"
#include "crypto/crypto.h"
#include "base/error.h"
#include "signer/key.h"
#include "ctl/keyring.h"
#include "schema/note.h"
#include "schema/receipt.h"
#include "ctl/register.h"
#include "schema/registration.h"
#include "ctl/report.h"
#include "ctl/service_file.h"
#include "test_support.h"
#include "schema/trust_bundle.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define NOW         ((uint64_t)1767225600)
#define HEX_SERVICE "5a00000000000000000000000000000000000000000000000000000000000001"
#define HEX_LOW     "0a00000000000000000000000000000000000000000000000000000000000001"
#define HEX_HIGH    "fa00000000000000000000000000000000000000000000000000000000000002"

/* Endpoints deliberately out of id order: register sorts them. */
static const char service_text[] = "namespace: mix\n"
                                   "service: " HEX_SERVICE "\n"
                                   "class: mix-gateway\n"
                                   "validity_seconds: 3600\n"
                                   "endpoints:\n"
                                   "  - id: " HEX_HIGH "\n"
                                   "    transport: tls\n"
                                   "    address: 192.0.2.11:8443\n"
                                   "    region: eu-central\n"
                                   "    capacity: high\n"
                                   "    profile: baseline\n"
                                   "  - id: " HEX_LOW "\n"
                                   "    transport: quic\n"
                                   "    address: 192.0.2.10:443\n"
                                   "    region: eu-west\n"
                                   "    capacity: medium\n"
                                   "    profile: modern\n";

static struct signer_key *provider;
static struct signer_key *authority;          /* the authority's certified signing key */
static struct signer_key *authority_identity; /* its identity key, pinned */
static struct signer_key *uncertified;        /* named like the authority, no certificate */
static struct signer_key *outsider;
static struct buffer certificates; /* what the authority serves at /v1/certificates */
static struct certificate_keyring *ring;
static char directory[4096];
static char key_path[4200];
static char service_path[4200];
static char trust_path[4200];
static struct trust_bundle bundle;

static void setup(void)
{
	char text[1024];

	test_make_tempdir(directory, sizeof(directory));
	ck_assert_int_eq(signer_key_generate("provider.test", &provider), 0);
	ck_assert_int_eq(signer_key_generate("authority-1.test", &authority), 0);
	ck_assert_int_eq(signer_key_generate("authority-1.test", &authority_identity), 0);
	ck_assert_int_eq(signer_key_generate("authority-1.test", &uncertified), 0);
	ck_assert_int_eq(signer_key_generate("outsider.test", &outsider), 0);
	{
		struct buffer note;
		buffer_init(&note);
		buffer_init(&certificates);
		/* The receipts are accepted at NOW: the window covers it with a day either side. */
		fixture_certificate(authority_identity, authority, NOW - 86400, NOW + 86400, &note);
		fixture_certificate_bundle(&note, 1, &certificates);
		buffer_free(&note);
	}
	snprintf(key_path, sizeof(key_path), "%s/provider.key", directory);
	ck_assert_int_eq(signer_key_save(provider, key_path), 0);
	snprintf(service_path, sizeof(service_path), "%s/service.yaml", directory);
	test_write_file(service_path, service_text, strlen(service_text), 0644);
	snprintf(trust_path, sizeof(trust_path), "%s/trust.txt", directory);
	{
		char verifier[NOTE_VERIFIER_KEY_MAX + 1];
		size_t error_line = 0;
		note_verifier_format(signer_key_verifier(authority_identity), verifier);
		snprintf(text, sizeof(text),
		         "dirauth trust v1\nnamespace mix dirauth.test/mix\nauthority %s\nthreshold 1\n",
		         verifier);
		test_write_file(trust_path, text, strlen(text), 0644);
		ck_assert_int_eq(
		    trust_bundle_parse((const uint8_t *)text, strlen(text), &bundle, &error_line), 0);
	}
	{
		struct ctl_report report;
		ctl_report_init(&report);
		ck_assert_int_eq(ctl_keyring_build("test", &bundle, certificates.data, certificates.len,
		                                   &ring, NULL, &report),
		                 0);
	}
}

static void teardown(void)
{
	signer_key_free(provider);
	signer_key_free(authority);
	signer_key_free(authority_identity);
	signer_key_free(uncertified);
	signer_key_free(outsider);
	buffer_free(&certificates);
	free(ring);
	test_remove_tree(directory);
}

static void parse_service(struct ctl_service_file *file)
{
	char error[CTL_SERVICE_FILE_ERROR_MAX];
	ck_assert_int_eq(ctl_service_file_parse((const uint8_t *)service_text, strlen(service_text),
	                                        "service.yaml", file, error, sizeof(error)),
	                 0);
}

START_TEST(test_build_signs_a_canonical_registration)
{
	struct ctl_service_file file;
	struct ctl_report report;
	struct registration registration;
	struct buffer note;
	struct note *parsed = NULL;
	char verifier[NOTE_VERIFIER_KEY_MAX + 1];
	char expected[NOTE_VERIFIER_KEY_MAX + 1];
	uint64_t sequence = 0;

	parse_service(&file);
	buffer_init(&note);
	ctl_report_init(&report);
	ck_assert_int_eq(ctl_register_build(provider, &file, NOW, &note, &sequence, &report), 0);
	/* Without a sequence in the file, the clock gives one. */
	ck_assert_uint_eq(sequence, NOW);
	ck_assert_int_eq(registration_parse_signed(note.data, note.len, &registration, &parsed), 0);
	ck_assert_str_eq(registration.namespace_name, "mix");
	ck_assert_int_eq(registration.service_class, SERVICE_CLASS_MIX_GATEWAY);
	note_verifier_format(&registration.provider, verifier);
	note_verifier_format(signer_key_verifier(provider), expected);
	ck_assert_str_eq(verifier, expected);
	ck_assert_uint_eq(registration.sequence, NOW);
	ck_assert_uint_eq(registration.issued_at, NOW);
	ck_assert_uint_eq(registration.expires, NOW + 3600);
	ck_assert_uint_eq(registration.endpoint_count, 2);
	ck_assert_int_eq(registration.endpoints[0].endpoint_id[0], 0x0a);
	ck_assert_int_eq(registration.endpoints[1].endpoint_id[0], 0xfa);
	ck_assert_uint_eq(parsed->signature_count, 1);
	ck_assert_str_eq(parsed->signatures[0].name, "provider.test");
	note_free(parsed);
	registration_clear(&registration);

	/* An explicit sequence is kept. */
	buffer_reset(&note);
	file.has_sequence = 1;
	file.sequence = 7;
	ck_assert_int_eq(ctl_register_build(provider, &file, NOW, &note, &sequence, &report), 0);
	ck_assert_uint_eq(sequence, 7);
	ck_assert_int_eq(registration_parse_signed(note.data, note.len, &registration, NULL), 0);
	ck_assert_uint_eq(registration.sequence, 7);
	registration_clear(&registration);
	buffer_free(&note);
	ctl_service_file_clear(&file);
}
END_TEST

struct receipt_spec {
	const char *namespace_name;
	uint8_t service_first_byte;
	uint64_t sequence;
	int wrong_digest;
	const char *authority_line; /* NULL: the signer's own name */
	struct signer_key *signer;  /* NULL: authority */
	int damage_signature;
	uint64_t accepted_at; /* 0: NOW */
};

static void make_receipt(const struct receipt_spec *spec, const uint8_t digest[32], struct buffer *out)
{
	struct signer_key *signer = spec->signer != NULL ? spec->signer : authority;
	struct receipt receipt;
	struct note_signature signature;
	struct buffer text;

	memset(&receipt, 0, sizeof(receipt));
	buffer_init(&text);
	snprintf(receipt.authority, sizeof(receipt.authority), "%s",
	         spec->authority_line != NULL ? spec->authority_line : signer_key_verifier(signer)->name);
	snprintf(receipt.namespace_name, sizeof(receipt.namespace_name), "%s",
	         spec->namespace_name != NULL ? spec->namespace_name : "mix");
	receipt.service_id[0] = spec->service_first_byte != 0 ? spec->service_first_byte : 0x5a;
	receipt.service_id[31] = 0x01;
	receipt.sequence = spec->sequence != 0 ? spec->sequence : 7;
	memcpy(receipt.registration_digest, digest, 32);
	if (spec->wrong_digest)
		receipt.registration_digest[0] ^= 0xff;
	receipt.accepted_at = spec->accepted_at != 0 ? spec->accepted_at : NOW;
	receipt.publish_by_epoch = 42;
	ck_assert_int_eq(receipt_encode(&receipt, &text), 0);
	ck_assert_int_eq(signer_key_sign(signer, text.data, text.len, &signature), 0);
	if (spec->damage_signature)
		signature.signature[3] ^= 0x10;
	ck_assert_int_eq(note_format(text.data, text.len, &signature, 1, out), 0);
	buffer_free(&text);
}

static int check_receipt(const struct receipt_spec *spec, const struct certificate_keyring *trust,
                         struct ctl_register_result *result, struct ctl_report *report)
{
	uint8_t digest[32];
	uint8_t service_id[SERVICE_ID_SIZE] = {0x5a};
	struct buffer receipt;
	int rc;

	service_id[31] = 0x01;
	memset(digest, 0x33, sizeof(digest));
	buffer_init(&receipt);
	make_receipt(spec, digest, &receipt);
	ctl_report_init(report);
	rc = ctl_register_check_receipt(receipt.data, receipt.len, "mix", service_id, 7, digest, trust,
	                                result, report);
	buffer_free(&receipt);
	return rc;
}

START_TEST(test_receipt_checks)
{
	struct ctl_register_result result;
	struct ctl_report report;
	struct receipt_spec good = {0};
	struct receipt_spec other_namespace = {.namespace_name = "mail"};
	struct receipt_spec other_service = {.service_first_byte = 0x5b};
	struct receipt_spec other_sequence = {.sequence = 8};
	struct receipt_spec other_note = {.wrong_digest = 1};
	struct receipt_spec unknown_signer = {.signer = outsider};
	struct receipt_spec lying_authority_line = {.authority_line = "authority-2.test"};
	struct receipt_spec bad_signature = {.damage_signature = 1};
	struct receipt_spec not_certified = {.signer = uncertified};
	struct receipt_spec identity_signed = {.signer = authority_identity};
	struct receipt_spec before_window = {.accepted_at = NOW - 86401};
	struct receipt_spec at_window_end = {.accepted_at = NOW + 86400};
	struct receipt_spec at_window_start = {.accepted_at = NOW - 86400};

	ctl_register_result_init(&result);
	ck_assert_int_eq(check_receipt(&good, ring, &result, &report), 0);
	ck_assert_int_eq(result.receipt_verified, 1);
	ck_assert_str_eq(result.receipt_signer, "authority-1.test");
	ck_assert_uint_eq(result.receipt.publish_by_epoch, 42);
	/* Without a bundle the fields are still checked, the signature is not. */
	ck_assert_int_eq(check_receipt(&unknown_signer, NULL, &result, &report), 0);
	ck_assert_int_eq(result.receipt_verified, 0);
	ck_assert_str_eq(result.receipt_signer, "outsider.test");

	ck_assert_int_eq(check_receipt(&other_namespace, ring, &result, &report), DIRAUTH_ERR_MISMATCH);
	ck_assert_int_eq(report.exit_code, 65);
	ck_assert_ptr_nonnull(strstr(report.message, "another namespace"));
	ck_assert_int_eq(check_receipt(&other_service, NULL, &result, &report), DIRAUTH_ERR_MISMATCH);
	ck_assert_ptr_nonnull(strstr(report.message, "another service"));
	ck_assert_int_eq(check_receipt(&other_sequence, ring, &result, &report), DIRAUTH_ERR_MISMATCH);
	ck_assert_ptr_nonnull(strstr(report.message, "another sequence"));
	ck_assert_int_eq(check_receipt(&other_note, ring, &result, &report), DIRAUTH_ERR_MISMATCH);
	ck_assert_ptr_nonnull(strstr(report.message, "SHA-256 of the submitted note"));
	ck_assert_int_eq(check_receipt(&unknown_signer, ring, &result, &report), DIRAUTH_ERR_UNKNOWN_KEY);
	ck_assert_int_eq(report.exit_code, 65);
	ck_assert_msg(strstr(report.message, "register: receipt: signed by a key not certified by any pinned "
	                                     "identity at 1767225600") != NULL,
	              "%s", report.message);
	/* A key with the authority's name but no certificate, or the identity key itself, or a
	 * certified key outside its window, does not speak for the authority. */
	ck_assert_int_eq(check_receipt(&not_certified, ring, &result, &report), DIRAUTH_ERR_UNKNOWN_KEY);
	ck_assert_msg(strstr(report.message, "has no certificate from the pinned identity") != NULL, "%s",
	              report.message);
	ck_assert_int_eq(check_receipt(&identity_signed, ring, &result, &report), DIRAUTH_ERR_UNKNOWN_KEY);
	ck_assert_ptr_nonnull(strstr(report.message, "is a pinned identity key"));
	ck_assert_int_eq(check_receipt(&before_window, ring, &result, &report), DIRAUTH_ERR_UNKNOWN_KEY);
	ck_assert_msg(strstr(report.message, "at 1767139199") != NULL &&
	                  strstr(report.message, "is certified only from 1767139200") != NULL,
	              "%s", report.message);
	ck_assert_int_eq(check_receipt(&at_window_end, ring, &result, &report), DIRAUTH_ERR_UNKNOWN_KEY);
	ck_assert_int_eq(report.exit_code, 65);
	ck_assert_int_eq(check_receipt(&at_window_start, ring, &result, &report), 0);
	ck_assert_int_eq(result.receipt_verified, 1);
	ck_assert_int_eq(check_receipt(&lying_authority_line, ring, &result, &report), DIRAUTH_ERR_MISMATCH);
	ck_assert_ptr_nonnull(strstr(report.message, "did not sign it"));
	ck_assert_int_eq(check_receipt(&bad_signature, ring, &result, &report), DIRAUTH_ERR_SIGNATURE);
	ck_assert_ptr_nonnull(strstr(report.message, "bad signature"));
	ctl_report_init(&report);
	ck_assert_int_ne(
	    ctl_register_check_receipt((const uint8_t *)"{\"ok\":true}", 11, "mix", result.receipt.service_id,
	                               7, result.receipt.registration_digest, ring, &result, &report),
	    0);
	ck_assert_int_eq(report.exit_code, 65);
	ctl_register_result_free(&result);
}
END_TEST

static int run(const char *server_url, const char *trust, int dry_run, struct ctl_register_result *result,
               struct ctl_report *report)
{
	struct ctl_register_options options = {
	    .key_path = key_path,
	    .service_path = service_path,
	    .server_url = server_url,
	    .trust_path = trust,
	    .dry_run = dry_run,
	    .now = NOW,
	};

	ctl_register_result_init(result);
	ctl_report_init(report);
	return ctl_register_run(&options, result, report);
}

/* The note register will post, computed the same way (Ed25519 is deterministic). */
static void expected_note(struct buffer *note, uint8_t digest[32])
{
	struct ctl_service_file file;
	struct ctl_report report;
	uint64_t sequence;

	parse_service(&file);
	ctl_report_init(&report);
	ck_assert_int_eq(ctl_register_build(provider, &file, NOW, note, &sequence, &report), 0);
	ck_assert_int_eq(crypto_sha256(note->data, note->len, digest), 0);
	ctl_service_file_clear(&file);
}

START_TEST(test_dry_run_needs_no_server)
{
	struct ctl_register_result result;
	struct ctl_report report;
	struct buffer note;
	uint8_t digest[32];

	buffer_init(&note);
	expected_note(&note, digest);
	ck_assert_int_eq(run(NULL, NULL, 1, &result, &report), 0);
	ck_assert_uint_eq(result.note.len, note.len);
	ck_assert_int_eq(memcmp(result.note.data, note.data, note.len), 0);
	ck_assert_int_eq(memcmp(result.note_sha256, digest, 32), 0);
	ck_assert_str_eq(result.service_hex, HEX_SERVICE);
	ck_assert_int_eq(result.accepted, 0);
	ctl_register_result_free(&result);
	buffer_free(&note);
}
END_TEST

START_TEST(test_accepted_with_verified_receipt)
{
	struct canned_server server;
	struct ctl_register_result result;
	struct ctl_report report;
	struct buffer note, receipt;
	struct receipt_spec spec = {.sequence = NOW};
	struct canned_route route = {
	    .path = "/v1/registrations", .status = 202, .content_type = "text/plain; charset=utf-8"};
	struct canned_route certificates_route = {.path = "/v1/certificates", .status = 200};
	uint8_t digest[32];
	char url[64];
	const char *body;

	buffer_init(&note);
	buffer_init(&receipt);
	expected_note(&note, digest);
	make_receipt(&spec, digest, &receipt);
	route.body = receipt.data;
	route.body_len = receipt.len;
	certificates_route.body = certificates.data;
	certificates_route.body_len = certificates.len;
	canned_server_start(&server);
	canned_server_route(&server, &route);
	canned_server_route(&server, &certificates_route);
	canned_server_url(&server, url, sizeof(url));
	ck_assert_msg(run(url, trust_path, 0, &result, &report) == 0, "%s", report.message);
	ck_assert_int_eq(result.accepted, 1);
	ck_assert_int_eq(result.receipt_verified, 1);
	ck_assert_str_eq(result.receipt_signer, "authority-1.test");
	ck_assert_uint_eq(result.sequence, NOW);
	ck_assert_uint_eq(result.receipt.publish_by_epoch, 42);
	ck_assert_uint_eq(result.receipt_note.len, receipt.len);
	/* What was posted is exactly the signed note, as text. */
	pthread_mutex_lock(&server.lock);
	ck_assert_ptr_nonnull(strstr(server.last_request, "POST /v1/registrations HTTP/1.1\r\n"));
	ck_assert_ptr_nonnull(strstr(server.last_request, "\r\nContent-Type: text/plain; charset=utf-8\r\n"));
	body = strstr(server.last_request, "\r\n\r\n");
	ck_assert_ptr_nonnull(body);
	body += 4;
	ck_assert_uint_eq(server.last_request_len - (size_t)(body - server.last_request), note.len);
	ck_assert_int_eq(memcmp(body, note.data, note.len), 0);
	/* The certificates were fetched first, then the registration posted. */
	ck_assert_uint_eq(server.request_count, 2);
	pthread_mutex_unlock(&server.lock);
	canned_server_stop(&server);
	ctl_register_result_free(&result);
	buffer_free(&note);
	buffer_free(&receipt);
}
END_TEST

/* With --trust, an authority that serves no certificates gets nothing submitted. */
START_TEST(test_trust_without_certificates_submits_nothing)
{
	struct canned_server server;
	struct ctl_register_result result;
	struct ctl_report report;
	struct canned_route route = {.path = "/v1/registrations", .status = 202};
	struct canned_route garbage = {
	    .path = "/v1/certificates", .status = 200, .body = (const uint8_t *)"hello\n", .body_len = 6};
	char url[64];

	canned_server_start(&server);
	canned_server_route(&server, &route);
	canned_server_url(&server, url, sizeof(url));
	ck_assert_int_eq(run(url, trust_path, 0, &result, &report), DIRAUTH_ERR_REFUSED);
	ck_assert_int_eq(report.exit_code, 76);
	ck_assert_msg(strstr(report.message, "register: certificates: HTTP 404") != NULL, "%s",
	              report.message);
	ctl_register_result_free(&result);
	canned_server_route(&server, &garbage);
	ck_assert_int_ne(run(url, trust_path, 0, &result, &report), 0);
	ck_assert_int_eq(report.exit_code, 65);
	ck_assert_msg(strstr(report.message, "not a certificate bundle") != NULL, "%s", report.message);
	ctl_register_result_free(&result);
	pthread_mutex_lock(&server.lock);
	ck_assert_ptr_null(strstr(server.last_request, "POST"));
	ck_assert_uint_eq(server.request_count, 2);
	pthread_mutex_unlock(&server.lock);
	canned_server_stop(&server);
}
END_TEST

START_TEST(test_receipt_for_another_note_refused)
{
	struct canned_server server;
	struct ctl_register_result result;
	struct ctl_report report;
	struct buffer note, receipt;
	struct receipt_spec spec = {.sequence = NOW, .wrong_digest = 1};
	struct canned_route route = {.path = "/v1/registrations", .status = 202};
	struct canned_route certificates_route = {.path = "/v1/certificates", .status = 200};
	uint8_t digest[32];
	char url[64];

	buffer_init(&note);
	buffer_init(&receipt);
	expected_note(&note, digest);
	make_receipt(&spec, digest, &receipt);
	route.body = receipt.data;
	route.body_len = receipt.len;
	certificates_route.body = certificates.data;
	certificates_route.body_len = certificates.len;
	canned_server_start(&server);
	canned_server_route(&server, &route);
	canned_server_route(&server, &certificates_route);
	canned_server_url(&server, url, sizeof(url));
	ck_assert_int_eq(run(url, trust_path, 0, &result, &report), DIRAUTH_ERR_MISMATCH);
	ck_assert_int_eq(report.exit_code, 65);
	ck_assert_int_eq(result.accepted, 0);
	canned_server_stop(&server);
	ctl_register_result_free(&result);
	buffer_free(&note);
	buffer_free(&receipt);
}
END_TEST

START_TEST(test_server_refusals_map_to_exit_codes)
{
	static const char refused[] =
	    "{\"error\":\"unknown_provider\",\"detail\":\"The provider key is not enrolled.\"}";
	static const char failed[] = "{\"error\":\"internal\",\"detail\":\"Something broke.\"}";
	struct canned_route route = {.path = "/v1/registrations", .content_type = "application/json"};
	struct canned_server server;
	struct ctl_register_result result;
	struct ctl_report report;
	char url[64];

	canned_server_start(&server);
	canned_server_url(&server, url, sizeof(url));
	route.status = 403;
	route.body = (const uint8_t *)refused;
	route.body_len = strlen(refused);
	canned_server_route(&server, &route);
	ck_assert_int_eq(run(url, NULL, 0, &result, &report), DIRAUTH_ERR_REFUSED);
	ck_assert_int_eq(report.exit_code, 76);
	ck_assert_msg(
	    strstr(report.message, "HTTP 403: unknown_provider: The provider key is not enrolled.") != NULL,
	    "%s", report.message);
	ctl_register_result_free(&result);

	route.status = 500;
	route.body = (const uint8_t *)failed;
	route.body_len = strlen(failed);
	canned_server_route(&server, &route);
	ck_assert_int_eq(run(url, NULL, 0, &result, &report), DIRAUTH_ERR_UNAVAILABLE);
	ck_assert_int_eq(report.exit_code, 69);
	ck_assert_ptr_nonnull(strstr(report.message, "HTTP 500: internal: Something broke."));
	ctl_register_result_free(&result);

	/* 200 is not the protocol's answer to a submission. */
	route.status = 200;
	canned_server_route(&server, &route);
	ck_assert_int_eq(run(url, NULL, 0, &result, &report), DIRAUTH_ERR_REFUSED);
	ck_assert_int_eq(report.exit_code, 76);
	ctl_register_result_free(&result);
	canned_server_stop(&server);

	snprintf(url, sizeof(url), "http://127.0.0.1:%u", test_free_port());
	ck_assert_int_eq(run(url, NULL, 0, &result, &report), DIRAUTH_ERR_UNAVAILABLE);
	ck_assert_int_eq(report.exit_code, 69);
	ctl_register_result_free(&result);
}
END_TEST

/* One canned authority of several: its certificates and its answer to the submission. */
struct canned_authority {
	struct canned_server server;
	struct buffer certificates;
	struct buffer answer;
	char url[64];
};

static void canned_authority_start(struct canned_authority *a, const struct buffer *certificates_served,
                                   int status, const struct buffer *answer)
{
	struct canned_route route = {.path = "/v1/registrations", .status = status};
	struct canned_route certificates_route = {.path = "/v1/certificates", .status = 200};

	buffer_init(&a->certificates);
	buffer_init(&a->answer);
	ck_assert_int_eq(buffer_append(&a->certificates, certificates_served->data, certificates_served->len),
	                 0);
	ck_assert_int_eq(buffer_append(&a->answer, answer->data, answer->len), 0);
	route.body = a->answer.data;
	route.body_len = a->answer.len;
	certificates_route.body = a->certificates.data;
	certificates_route.body_len = a->certificates.len;
	canned_server_start(&a->server);
	canned_server_route(&a->server, &route);
	canned_server_route(&a->server, &certificates_route);
	canned_server_url(&a->server, a->url, sizeof(a->url));
}

static void canned_authority_stop(struct canned_authority *a)
{
	canned_server_stop(&a->server);
	buffer_free(&a->certificates);
	buffer_free(&a->answer);
}

static int run_servers(const char *const *urls, size_t count, const char *trust,
                       struct ctl_register_result *result, struct ctl_report *report)
{
	struct ctl_register_options options = {
	    .key_path = key_path,
	    .service_path = service_path,
	    .server_urls = urls,
	    .server_count = count,
	    .trust_path = trust,
	    .now = NOW,
	};

	ctl_register_result_init(result);
	ctl_report_init(report);
	return ctl_register_run(&options, result, report);
}

/* Several servers: each answer is judged on its own, and the threshold counts distinct pinned
 * authorities, whichever server their receipts came from. */
START_TEST(test_several_servers_count_distinct_authorities)
{
	struct signer_key *second = NULL, *second_identity = NULL;
	struct canned_authority first_a, first_again, other, refusing, lying;
	struct ctl_register_result result;
	struct ctl_report report;
	struct buffer note, receipt, second_receipt, second_certificates, certificate, wrong_receipt;
	struct buffer failure;
	struct receipt_spec spec = {.sequence = NOW};
	struct receipt_spec wrong = {.sequence = NOW, .wrong_digest = 1};
	char two_path[4300], text[2048], first_verifier[NOTE_VERIFIER_KEY_MAX + 1],
	    second_verifier[NOTE_VERIFIER_KEY_MAX + 1], dead_url[64];
	uint8_t digest[32];

	/* A second authority, pinned beside the first in a bundle of threshold 2. */
	ck_assert_int_eq(signer_key_generate("authority-2.test", &second), 0);
	ck_assert_int_eq(signer_key_generate("authority-2.test", &second_identity), 0);
	buffer_init(&certificate);
	buffer_init(&second_certificates);
	fixture_certificate(second_identity, second, NOW - 86400, NOW + 86400, &certificate);
	fixture_certificate_bundle(&certificate, 1, &second_certificates);
	note_verifier_format(signer_key_verifier(authority_identity), first_verifier);
	note_verifier_format(signer_key_verifier(second_identity), second_verifier);
	snprintf(text, sizeof(text),
	         "dirauth trust v1\nnamespace mix dirauth.test/mix\nauthority %s\nauthority %s\n"
	         "threshold 2\n",
	         first_verifier, second_verifier);
	snprintf(two_path, sizeof(two_path), "%s/two.txt", directory);
	test_write_file(two_path, text, strlen(text), 0644);

	buffer_init(&note);
	buffer_init(&receipt);
	buffer_init(&second_receipt);
	buffer_init(&wrong_receipt);
	buffer_init(&failure);
	expected_note(&note, digest);
	make_receipt(&spec, digest, &receipt);
	spec.signer = second;
	make_receipt(&spec, digest, &second_receipt);
	make_receipt(&wrong, digest, &wrong_receipt);
	ck_assert_int_eq(buffer_append_string(&failure, "{\"error\":\"internal\",\"detail\":\"Broke.\"}"), 0);
	canned_authority_start(&first_a, &certificates, 202, &receipt);
	canned_authority_start(&first_again, &certificates, 202, &receipt);
	canned_authority_start(&other, &second_certificates, 202, &second_receipt);
	canned_authority_start(&refusing, &certificates, 500, &failure);
	canned_authority_start(&lying, &certificates, 202, &wrong_receipt);
	snprintf(dead_url, sizeof(dead_url), "http://127.0.0.1:%u", test_free_port());

	/* Two servers answering for authority-1 count once: 1 of the 2 required. */
	{
		const char *const urls[] = {first_a.url, first_again.url, refusing.url, lying.url, dead_url};
		ck_assert_int_eq(run_servers(urls, 5, two_path, &result, &report), DIRAUTH_ERR_THRESHOLD);
		ck_assert_int_eq(report.exit_code, 75);
		ck_assert_str_eq(report.message,
		                 "register: accepted by 1 of the 2 authorities the trust bundle pins "
		                 "(authority-1.test), it requires 2 (each server is listed above)");
		ck_assert_int_eq(result.accepted, 0);
		ck_assert_uint_eq(result.answer_count, 5);
		ck_assert_uint_eq(result.accepted_count, 1);
		ck_assert_int_eq(result.answers[0].outcome, CTL_REGISTER_ACCEPTED);
		ck_assert_int_eq(result.answers[0].counted, 1);
		ck_assert_uint_eq(result.answers[0].receipt.publish_by_epoch, 42);
		ck_assert_int_eq(result.answers[1].outcome, CTL_REGISTER_ACCEPTED);
		ck_assert_int_eq(result.answers[1].counted, 0);
		ck_assert_int_eq(result.answers[2].outcome, CTL_REGISTER_REFUSED);
		ck_assert_int_eq(result.answers[2].http_status, 500);
		ck_assert_str_eq(result.answers[2].report.message,
		                 "register: refused: HTTP 500: internal: Broke.");
		ck_assert_int_eq(result.answers[3].outcome, CTL_REGISTER_INVALID);
		ck_assert_ptr_nonnull(strstr(result.answers[3].report.message, "registration digest"));
		ck_assert_int_eq(result.answers[4].outcome, CTL_REGISTER_UNREACHABLE);
		ck_assert_int_eq(result.answers[4].http_status, 0);
		ctl_register_result_free(&result);
	}
	/* With the second authority's server: 2 of 2. */
	{
		const char *const urls[] = {first_a.url, other.url};
		ck_assert_msg(run_servers(urls, 2, two_path, &result, &report) == 0, "%s", report.message);
		ck_assert_int_eq(result.accepted, 1);
		ck_assert_uint_eq(result.accepted_count, 2);
		ck_assert_uint_eq(result.threshold, 2);
		ck_assert_uint_eq(result.authority_count, 2);
		ck_assert_str_eq(result.accepted_names, "authority-1.test, authority-2.test");
		ck_assert_str_eq(result.answers[1].receipt_signer, "authority-2.test");
		ctl_register_result_free(&result);
	}
	/* A receipt of authority-2 from a server whose bundle pins only authority-1 counts zero. */
	{
		const char *const urls[] = {first_a.url, other.url};
		ck_assert_int_eq(run_servers(urls, 2, trust_path, &result, &report), 0);
		ck_assert_uint_eq(result.accepted_count, 1);
		ck_assert_int_eq(result.answers[1].outcome, CTL_REGISTER_INVALID);
		ck_assert_ptr_nonnull(
		    strstr(result.answers[1].report.message, "not certified by any pinned identity"));
		ctl_register_result_free(&result);
	}
	/* Several servers need a trust bundle, and there is a bound; nothing is sent either way. */
	{
		const char *many[CTL_REGISTER_SERVERS_MAX + 1];
		const char *const urls[] = {first_a.url, other.url};
		for (size_t i = 0; i < CTL_REGISTER_SERVERS_MAX + 1; i++)
			many[i] = dead_url;
		ck_assert_int_eq(run_servers(urls, 2, NULL, &result, &report), DIRAUTH_ERR_CONFIG);
		ck_assert_int_eq(report.exit_code, 64);
		ck_assert_ptr_nonnull(strstr(report.message, "several --server need --trust"));
		ctl_register_result_free(&result);
		ck_assert_int_eq(run_servers(many, CTL_REGISTER_SERVERS_MAX + 1, two_path, &result, &report),
		                 DIRAUTH_ERR_CONFIG);
		ck_assert_int_eq(report.exit_code, 64);
		ctl_register_result_free(&result);
	}
	/* One server in the list is the single-server command, with its exit codes. */
	{
		const char *const urls[] = {refusing.url};
		ck_assert_int_eq(run_servers(urls, 1, two_path, &result, &report), DIRAUTH_ERR_UNAVAILABLE);
		ck_assert_int_eq(report.exit_code, 69);
		ck_assert_uint_eq(result.answer_count, 0);
		ctl_register_result_free(&result);
	}
	canned_authority_stop(&first_a);
	canned_authority_stop(&first_again);
	canned_authority_stop(&other);
	canned_authority_stop(&refusing);
	canned_authority_stop(&lying);
	signer_key_free(second);
	signer_key_free(second_identity);
	buffer_free(&note);
	buffer_free(&receipt);
	buffer_free(&second_receipt);
	buffer_free(&wrong_receipt);
	buffer_free(&failure);
	buffer_free(&certificate);
	buffer_free(&second_certificates);
}
END_TEST

START_TEST(test_local_input_failures)
{
	struct ctl_register_result result;
	struct ctl_report report;
	char path[4300];
	static const char bad_service[] = "namespace: mix\nservice: 12\n";
	static const char bad_trust[] = "dirauth trust v1\nthreshold 0\n";

	/* A key readable by others is refused: 77. */
	ck_assert_int_eq(chmod(key_path, 0640), 0);
	ck_assert_int_eq(run(NULL, NULL, 1, &result, &report), DIRAUTH_ERR_PERMISSION);
	ck_assert_int_eq(report.exit_code, 77);
	ck_assert_ptr_nonnull(strstr(report.message, "chmod 600"));
	ctl_register_result_free(&result);
	ck_assert_int_eq(chmod(key_path, 0600), 0);

	/* Missing files: 66. */
	snprintf(path, sizeof(path), "%s/missing.yaml", directory);
	{
		struct ctl_register_options options = {
		    .key_path = key_path, .service_path = path, .dry_run = 1};
		ctl_register_result_init(&result);
		ctl_report_init(&report);
		ck_assert_int_eq(ctl_register_run(&options, &result, &report), DIRAUTH_ERR_NOT_FOUND);
		ck_assert_int_eq(report.exit_code, 66);
		ctl_register_result_free(&result);
		options.key_path = path;
		options.service_path = service_path;
		ctl_register_result_init(&result);
		ctl_report_init(&report);
		ck_assert_int_eq(ctl_register_run(&options, &result, &report), DIRAUTH_ERR_NOT_FOUND);
		ck_assert_int_eq(report.exit_code, 66);
		ctl_register_result_free(&result);
	}
	ck_assert_int_eq(run(NULL, path, 1, &result, &report), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(report.exit_code, 66);
	ctl_register_result_free(&result);

	/* A bad service file: 65 with FILE:LINE. */
	test_write_file(service_path, bad_service, strlen(bad_service), 0644);
	ck_assert_int_eq(run(NULL, NULL, 1, &result, &report), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(report.exit_code, 65);
	snprintf(path, sizeof(path), "register: %s:2: service:", service_path);
	ck_assert_msg(strncmp(report.message, path, strlen(path)) == 0, "%s", report.message);
	ctl_register_result_free(&result);

	/* A bad trust bundle: 78 with its line. */
	snprintf(path, sizeof(path), "%s/bad-trust.txt", directory);
	test_write_file(path, bad_trust, strlen(bad_trust), 0644);
	ck_assert_int_ne(run(NULL, path, 1, &result, &report), 0);
	ck_assert_int_eq(report.exit_code, 78);
	ck_assert_ptr_nonnull(strstr(report.message, "bad-trust.txt:"));
	ctl_register_result_free(&result);
}
END_TEST

static Suite *register_suite(void)
{
	Suite *suite = suite_create("register");
	TCase *tc = tcase_create("register");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_build_signs_a_canonical_registration);
	tcase_add_test(tc, test_receipt_checks);
	tcase_add_test(tc, test_dry_run_needs_no_server);
	tcase_add_test(tc, test_accepted_with_verified_receipt);
	tcase_add_test(tc, test_trust_without_certificates_submits_nothing);
	tcase_add_test(tc, test_receipt_for_another_note_refused);
	tcase_add_test(tc, test_server_refusals_map_to_exit_codes);
	tcase_add_test(tc, test_local_input_failures);
	tcase_add_test(tc, test_several_servers_count_distinct_authorities);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(register_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
