/*
 * register.c: build, sign, submit a registration and check its receipt (see register.h).
 */
#include "ctl/register.h"

#include "schema/crypto.h"
#include "schema/encoding.h"
#include "schema/error.h"
#include "ctl/exchange.h"
#include "ctl/files.h"
#include "ctl/keyring.h"
#include "ctl/trust_file.h"
#include "net/client.h"
#include "schema/note.h"
#include "verify/keyring.h"
#include "verify/snapshot.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ctl_register_result_init(struct ctl_register_result *result)
{
	memset(result, 0, sizeof(*result));
	buffer_init(&result->note);
	buffer_init(&result->receipt_note);
}

void ctl_register_result_free(struct ctl_register_result *result)
{
	if (result == NULL)
		return;
	buffer_free(&result->note);
	buffer_free(&result->receipt_note);
}

int ctl_register_build(const struct signer_key *key, const struct ctl_service_file *file, uint64_t now,
                       struct buffer *note, uint64_t *sequence, struct ctl_report *report)
{
	struct registration registration;
	struct note_signature signature;
	struct buffer text;
	int rc;

	memset(&registration, 0, sizeof(registration));
	memset(&signature, 0, sizeof(signature));
	buffer_init(&text);
	if (file->endpoint_count == 0 || now > UINT64_MAX - file->validity_seconds) {
		ctl_report_fail(report, CTL_EXIT_DATA,
		                "register: the service description does not make a registration");
		return DIRAUTH_ERR_SYNTAX;
	}
	snprintf(registration.namespace_name, sizeof(registration.namespace_name), "%s",
	         file->namespace_name);
	memcpy(registration.service_id, file->service_id, SERVICE_ID_SIZE);
	registration.service_class = file->service_class;
	registration.provider = *signer_key_verifier(key);
	/* Without an explicit sequence the clock provides one, so that each run supersedes the last. */
	registration.sequence = file->has_sequence ? file->sequence : now;
	registration.issued_at = now;
	registration.expires = now + file->validity_seconds;
	registration.endpoint_count = file->endpoint_count;
	registration.endpoints = malloc(file->endpoint_count * sizeof(*registration.endpoints));
	if (registration.endpoints == NULL) {
		rc = DIRAUTH_ERR_NOMEM;
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "register: out of memory");
		goto done;
	}
	memcpy(registration.endpoints, file->endpoints,
	       file->endpoint_count * sizeof(*registration.endpoints));
	registration_sort_endpoints(&registration);

	rc = registration_encode(&registration, &text);
	if (rc != 0) {
		ctl_report_fail(report, rc == DIRAUTH_ERR_NOMEM ? CTL_EXIT_SOFTWARE : CTL_EXIT_DATA,
		                "register: cannot encode the registration: %s", dirauth_strerror(rc));
		goto done;
	}
	rc = signer_key_sign(key, text.data, text.len, &signature);
	if (rc != 0) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "register: cannot sign: %s", dirauth_strerror(rc));
		goto done;
	}
	rc = note_format(text.data, text.len, &signature, 1, note);
	if (rc != 0) {
		ctl_report_fail(report, rc == DIRAUTH_ERR_NOMEM ? CTL_EXIT_SOFTWARE : CTL_EXIT_DATA,
		                "register: cannot format the signed note: %s", dirauth_strerror(rc));
		goto done;
	}
	*sequence = registration.sequence;
done:
	registration_clear(&registration);
	buffer_free(&text);
	return rc;
}

static int receipt_refused(struct ctl_report *report, const char *why)
{
	ctl_report_fail(report, CTL_EXIT_DATA, "register: receipt refused: %s", why);
	return DIRAUTH_ERR_MISMATCH;
}

int ctl_register_check_receipt(const uint8_t *receipt_note, size_t len, const char *namespace_name,
                               const uint8_t service_id[SERVICE_ID_SIZE], uint64_t sequence,
                               const uint8_t note_sha256[32], const struct certificate_keyring *ring,
                               struct ctl_register_result *result, struct ctl_report *report)
{
	struct certificate_keyring *named = NULL;
	struct note *note = NULL;
	int rc;

	result->receipt_verified = 0;
	result->receipt_signer[0] = '\0';
	rc = note_parse(receipt_note, len, &note);
	if (rc != 0) {
		ctl_report_fail(report, rc == DIRAUTH_ERR_NOMEM ? CTL_EXIT_SOFTWARE : CTL_EXIT_DATA,
		                "register: receipt: not a signed note: %s", dirauth_strerror(rc));
		goto done;
	}
	rc = receipt_parse(note->text, note->text_len, &result->receipt);
	if (rc != 0) {
		ctl_report_fail(report, CTL_EXIT_DATA, "register: receipt: does not parse: %s",
		                dirauth_strerror(rc));
		goto done;
	}
	if (ring != NULL) {
		/* One authority's promise: one pinned authority must have signed it (threshold 1), with
		 * a signing key certified at the time it says it accepted the registration. */
		struct verify_pins pins = {
		    .ring = ring, .threshold = 1, .pinned_by = VERIFY_TRUST_BUNDLE_PINNED_BY};
		char detail[VERIFY_DETAIL_MAX];

		rc = verify_note(&pins, note, result->receipt.accepted_at, result->receipt.accepted_at, NULL,
		                 detail, sizeof(detail));
		if (rc != 0) {
			ctl_verification_fail(report, "register: receipt", rc, detail);
			goto done;
		}
		/* The authority the receipt names must be one that signed it. */
		rc = verify_keyring_for_identity(ring, result->receipt.authority, &named);
		if (rc == 0) {
			pins.ring = named;
			rc = verify_note(&pins, note, result->receipt.accepted_at,
			                 result->receipt.accepted_at, NULL, NULL, 0);
		}
		if (rc == DIRAUTH_ERR_NOT_FOUND || rc == DIRAUTH_ERR_UNKNOWN_KEY) {
			rc = receipt_refused(report, "the authority it names did not sign it");
			goto done;
		}
		if (rc == DIRAUTH_ERR_NOMEM) {
			ctl_report_fail(report, CTL_EXIT_SOFTWARE, "register: out of memory");
			goto done;
		}
		if (rc != 0) {
			ctl_report_fail(report, CTL_EXIT_SOFTWARE, "register: receipt: cannot verify: %s",
			                dirauth_strerror(rc));
			goto done;
		}
		snprintf(result->receipt_signer, sizeof(result->receipt_signer), "%s",
		         result->receipt.authority);
		result->receipt_verified = 1;
	} else {
		snprintf(result->receipt_signer, sizeof(result->receipt_signer), "%s",
		         result->receipt.authority);
	}
	if (strcmp(result->receipt.namespace_name, namespace_name) != 0) {
		rc = receipt_refused(report, "it names another namespace");
		goto done;
	}
	if (memcmp(result->receipt.service_id, service_id, SERVICE_ID_SIZE) != 0) {
		rc = receipt_refused(report, "it names another service");
		goto done;
	}
	if (result->receipt.sequence != sequence) {
		rc = receipt_refused(report, "it names another sequence");
		goto done;
	}
	if (memcmp(result->receipt.registration_digest, note_sha256, 32) != 0) {
		rc = receipt_refused(report,
		                     "its registration digest is not the SHA-256 of the submitted note");
		goto done;
	}
done:
	verify_keyring_free(named);
	note_free(note);
	return rc;
}

static int load_key(const char *path, struct signer_key **key, struct ctl_report *report)
{
	int rc = signer_key_load(path, key);

	switch (rc) {
	case 0:
		break;
	case DIRAUTH_ERR_PERMISSION:
		ctl_report_fail(
		    report, CTL_EXIT_PERMISSION,
		    "register: key %s: unsafe file (not a regular file, a symlink, or readable by group or "
		    "other: chmod 600)",
		    path);
		break;
	case DIRAUTH_ERR_NOT_FOUND:
		ctl_report_fail(report, CTL_EXIT_NO_INPUT, "register: key %s: no such file", path);
		break;
	case DIRAUTH_ERR_SYNTAX:
		ctl_report_fail(report, CTL_EXIT_DATA, "register: key %s: not a dirauth private key file",
		                path);
		break;
	default:
		ctl_report_fail(report, ctl_exit_code_for_error(rc), "register: key %s: %s", path,
		                dirauth_strerror(rc));
		break;
	}
	return rc;
}

static int load_service_file(const char *path, struct ctl_service_file *file, struct ctl_report *report)
{
	char error[CTL_SERVICE_FILE_ERROR_MAX];
	uint8_t *data = NULL;
	size_t len = 0;
	int rc;

	rc = ctl_file_read(path, CTL_SERVICE_FILE_MAX_BYTES, &data, &len);
	if (rc == DIRAUTH_ERR_NOT_FOUND) {
		ctl_report_fail(report, CTL_EXIT_NO_INPUT, "register: %s: no such file", path);
		goto done;
	}
	if (rc == DIRAUTH_ERR_BOUNDS) {
		ctl_report_fail(report, CTL_EXIT_DATA, "register: %s: larger than %d bytes", path,
		                CTL_SERVICE_FILE_MAX_BYTES);
		goto done;
	}
	if (rc != 0) {
		ctl_report_fail(report, ctl_exit_code_for_error(rc), "register: %s: %s", path,
		                dirauth_strerror(rc));
		goto done;
	}
	rc = ctl_service_file_parse(data, len, path, file, error, sizeof(error));
	if (rc != 0)
		ctl_report_fail(report, rc == DIRAUTH_ERR_NOMEM ? CTL_EXIT_SOFTWARE : CTL_EXIT_DATA,
		                "register: %s", error);
done:
	free(data);
	return rc;
}

static int submit(const struct ctl_register_options *options, const struct ctl_register_result *result,
                  struct net_response *response, struct ctl_report *report)
{
	static const char *const headers[] = {"Content-Type: text/plain; charset=utf-8", NULL};
	struct net_request request;
	struct buffer url;
	size_t base_len = strlen(options->server_url);
	int rc;

	buffer_init(&url);
	while (base_len > 0 && options->server_url[base_len - 1] == '/')
		base_len--;
	rc = buffer_appendf(&url, "%.*s/v1/registrations", (int)base_len, options->server_url);
	if (rc != 0) {
		ctl_report_fail(report, CTL_EXIT_USAGE, "register: server URL too long");
		goto done;
	}
	ctl_exchange_request(&request, "POST", (const char *)url.data, CTL_REGISTER_RESPONSE_MAX);
	request.headers = headers;
	request.body = result->note.data;
	request.body_len = result->note.len;
	rc = net_perform(&request, response);
	if (rc == DIRAUTH_ERR_BOUNDS) {
		ctl_report_fail(report, CTL_EXIT_PROTOCOL, "register: %s: %s", request.url, response->error);
		goto done;
	}
	if (rc != 0) {
		ctl_report_fail(report, ctl_exit_code_for_error(rc), "register: %s: %s", request.url,
		                response->error);
		goto done;
	}
	if (response->status != 202) {
		char description[CTL_REPORT_MAX / 2];
		net_describe_error(response, description, sizeof(description));
		ctl_report_fail(report, ctl_exchange_exit_code_for_status(response->status),
		                "register: refused: %s", description);
		rc = response->status >= 500 ? DIRAUTH_ERR_UNAVAILABLE : DIRAUTH_ERR_REFUSED;
	}
done:
	buffer_free(&url);
	return rc;
}

int ctl_register_run(const struct ctl_register_options *options, struct ctl_register_result *result,
                     struct ctl_report *report)
{
	struct ctl_service_file file;
	struct trust_bundle *bundle = NULL;
	struct certificate_keyring *ring = NULL;
	struct signer_key *key = NULL;
	struct net_response response;
	struct buffer certificates;
	int rc;

	buffer_init(&certificates);

	memset(&file, 0, sizeof(file));
	net_response_init(&response);
	if (options->trust_path != NULL) {
		/* The bundle is large (fixed arrays); keep it off the stack. */
		bundle = malloc(sizeof(*bundle));
		if (bundle == NULL) {
			rc = DIRAUTH_ERR_NOMEM;
			ctl_report_fail(report, CTL_EXIT_SOFTWARE, "register: out of memory");
			goto done;
		}
		rc = ctl_trust_bundle_load(options->trust_path, bundle, report);
		if (rc != 0)
			goto done;
	}
	rc = load_key(options->key_path, &key, report);
	if (rc != 0)
		goto done;
	rc = load_service_file(options->service_path, &file, report);
	if (rc != 0)
		goto done;
	rc = ctl_register_build(key, &file, options->now, &result->note, &result->sequence, report);
	if (rc != 0)
		goto done;
	snprintf(result->namespace_name, sizeof(result->namespace_name), "%s", file.namespace_name);
	hex_encode(file.service_id, SERVICE_ID_SIZE, result->service_hex);
	rc = crypto_sha256(result->note.data, result->note.len, result->note_sha256);
	if (rc != 0) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "register: %s", dirauth_strerror(rc));
		goto done;
	}
	if (options->dry_run)
		goto done;
	if (options->server_url == NULL) {
		rc = DIRAUTH_ERR_CONFIG;
		ctl_report_fail(report, CTL_EXIT_USAGE, "register: --server is required unless --dry-run");
		goto done;
	}
	if (bundle != NULL) {
		/* Before anything is submitted: without the certificates the receipt cannot be checked. */
		rc = ctl_keyring_download("register", options->server_url, &certificates, report);
		if (rc == 0)
			rc = ctl_keyring_build("register", bundle, certificates.data, certificates.len, &ring,
			                       NULL, report);
		if (rc != 0)
			goto done;
	}
	rc = submit(options, result, &response, report);
	if (rc != 0)
		goto done;
	rc = buffer_append(&result->receipt_note, response.body.data, response.body.len);
	if (rc != 0) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "register: out of memory");
		goto done;
	}
	rc = ctl_register_check_receipt(response.body.data, response.body.len, file.namespace_name,
	                                file.service_id, result->sequence, result->note_sha256, ring, result,
	                                report);
	if (rc != 0)
		goto done;
	result->accepted = 1;
done:
	net_response_free(&response);
	ctl_service_file_clear(&file);
	signer_key_free(key);
	verify_keyring_free(ring);
	free(bundle);
	buffer_free(&certificates);
	return rc;
}
