/*
 * register.c: build, sign, submit a registration and check its receipt (see register.h).
 */
#include "ctl/register.h"

#include "crypto/crypto.h"
#include "schema/encoding.h"
#include "base/error.h"
#include "ctl/certify.h"
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
	for (size_t i = 0; result->answers != NULL && i < result->answer_count; i++)
		buffer_free(&result->answers[i].receipt_note);
	free(result->answers);
	result->answers = NULL;
	result->answer_count = 0;
}

const char *ctl_register_outcome_name(enum ctl_register_outcome outcome)
{
	switch (outcome) {
	case CTL_REGISTER_ACCEPTED:
		return "accepted";
	case CTL_REGISTER_REFUSED:
		return "refused";
	case CTL_REGISTER_UNREACHABLE:
		return "unreachable";
	case CTL_REGISTER_INVALID:
		return "invalid";
	case CTL_REGISTER_FAILED:
	default:
		return "failed";
	}
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
		rc = ctl_keyring_verify_receipt("register", ring, note, result->receipt.authority,
		                                result->receipt.accepted_at, report);
		if (rc != 0)
			goto done;
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
	note_free(note);
	return rc;
}

int ctl_register_load_key(const char *what, const char *path, struct signer_key **key,
                          struct ctl_report *report)
{
	char name[CTL_REPORT_MAX];

	snprintf(name, sizeof(name), "%s: key", what);
	return ctl_certify_load_key(name, path, key, report);
}

static const struct ctl_file_limit service_file_limit = {CTL_SERVICE_FILE_MAX_BYTES, NULL, CTL_EXIT_DATA};

int ctl_register_load_service_file(const char *what, const char *path, struct ctl_service_file *file,
                                   struct ctl_report *report)
{
	char error[CTL_SERVICE_FILE_ERROR_MAX];
	uint8_t *data = NULL;
	size_t len = 0;
	int rc;

	rc = ctl_file_read_reported(path, &service_file_limit, &data, &len, report, "%s: %s", what, path);
	if (rc != 0)
		goto done;
	rc = ctl_service_file_parse(data, len, path, file, error, sizeof(error));
	if (rc != 0)
		ctl_report_fail(report, rc == DIRAUTH_ERR_NOMEM ? CTL_EXIT_SOFTWARE : CTL_EXIT_DATA, "%s: %s",
		                what, error);
done:
	free(data);
	return rc;
}

static int submit(const char *server_url, const struct buffer *note, struct net_response *response,
                  struct ctl_report *report)
{
	return ctl_exchange_post("register", server_url, "/v1/registrations", note->data, note->len,
	                         CTL_REGISTER_RESPONSE_MAX, response, report);
}

/* What every server of a registration to several gets: the same note, the same checks. */
struct submission {
	const struct trust_bundle *bundle;
	const struct buffer *note;
	const uint8_t *note_sha256;
	const char *namespace_name;
	const uint8_t *service_id;
	uint64_t sequence;
	struct ctl_register_answer *answers; /* one per server */
};

enum ctl_register_outcome ctl_register_exchange_outcome(int rc, long status, long expected)
{
	if (rc == DIRAUTH_ERR_BOUNDS)
		return CTL_REGISTER_INVALID;
	if (status != 0 && status != expected)
		return CTL_REGISTER_REFUSED;
	if (rc == DIRAUTH_ERR_UNAVAILABLE)
		return CTL_REGISTER_UNREACHABLE;
	return CTL_REGISTER_FAILED;
}

enum ctl_register_outcome ctl_register_check_outcome(const struct ctl_report *report)
{
	return report->exit_code == CTL_EXIT_DATA ? CTL_REGISTER_INVALID : CTL_REGISTER_FAILED;
}

/* One server of several: its certificates, the submission, its receipt. Touches only *answer. */
static void register_at(const struct submission *submission, struct ctl_register_answer *answer)
{
	struct certificate_keyring *ring = NULL;
	struct ctl_register_result checked;
	struct net_response response;
	struct buffer certificates;
	long status = 0;
	int rc;

	ctl_report_init(&answer->report);
	ctl_register_result_init(&checked);
	net_response_init(&response);
	buffer_init(&certificates);
	answer->outcome = CTL_REGISTER_FAILED;
	rc = ctl_keyring_download_status("register", answer->server_url, &certificates, &status,
	                                 &answer->report);
	answer->http_status = status;
	if (rc != 0) {
		answer->outcome = ctl_register_exchange_outcome(rc, status, 200);
		goto done;
	}
	rc = ctl_keyring_build("register", submission->bundle, certificates.data, certificates.len, &ring,
	                       NULL, &answer->report);
	if (rc != 0) {
		answer->outcome = ctl_register_check_outcome(&answer->report);
		goto done;
	}
	rc = submit(answer->server_url, submission->note, &response, &answer->report);
	answer->http_status = response.status;
	if (rc != 0) {
		answer->outcome = ctl_register_exchange_outcome(rc, response.status, 202);
		goto done;
	}
	if (buffer_append(&answer->receipt_note, response.body.data, response.body.len) != 0) {
		ctl_report_fail(&answer->report, CTL_EXIT_SOFTWARE, "register: out of memory");
		goto done;
	}
	rc = ctl_register_check_receipt(response.body.data, response.body.len, submission->namespace_name,
	                                submission->service_id, submission->sequence, submission->note_sha256,
	                                ring, &checked, &answer->report);
	if (rc != 0) {
		answer->outcome = ctl_register_check_outcome(&answer->report);
		goto done;
	}
	answer->receipt = checked.receipt;
	snprintf(answer->receipt_signer, sizeof(answer->receipt_signer), "%s", checked.receipt_signer);
	answer->outcome = CTL_REGISTER_ACCEPTED;
done:
	ctl_register_result_free(&checked);
	net_response_free(&response);
	buffer_free(&certificates);
	verify_keyring_free(ring);
}

static void register_work(void *context, size_t index)
{
	const struct submission *submission = context;
	register_at(submission, &submission->answers[index]);
}

/* Appends name to a ", "-separated list, truncating. */
static void names_append(char *names, size_t cap, const char *name)
{
	size_t used = strnlen(names, cap);
	if (used + 1 < cap)
		snprintf(names + used, cap - used, "%s%s", used > 0 ? ", " : "", name);
}

/* Submits to every server at once (a server whose thread cannot start is served in this one, so
 * that the time stays bounded by the slowest exchange either way), then counts the distinct
 * pinned authorities whose receipts checked, in the order the servers were given. */
static int register_at_servers(const struct ctl_register_options *options,
                               const struct submission *submission, struct ctl_register_result *result,
                               struct ctl_report *report)
{
	const struct trust_bundle *bundle = submission->bundle;
	struct submission each = *submission;
	uint8_t counted[TRUST_BUNDLE_MAX_AUTHORITIES];
	size_t count = options->server_count;

	result->answers = calloc(count, sizeof(*result->answers));
	if (result->answers == NULL) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "register: out of memory");
		return DIRAUTH_ERR_NOMEM;
	}
	result->answer_count = count;
	for (size_t i = 0; i < count; i++) {
		result->answers[i].server_url = options->server_urls[i];
		buffer_init(&result->answers[i].receipt_note);
	}
	each.answers = result->answers;
	if (ctl_exchange_each(count, register_work, &each) != 0) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "register: out of memory");
		return DIRAUTH_ERR_NOMEM;
	}

	memset(counted, 0, sizeof(counted));
	result->threshold = bundle->threshold;
	result->authority_count = bundle->authority_count;
	result->accepted_count = 0;
	result->accepted_names[0] = '\0';
	for (size_t i = 0; i < count; i++) {
		struct ctl_register_answer *answer = &result->answers[i];
		if (answer->outcome != CTL_REGISTER_ACCEPTED)
			continue;
		/* The receipt verified under the identity pinned with this name; names are unique in a
		 * bundle, so the name is the identity. */
		for (size_t a = 0; a < bundle->authority_count; a++) {
			if (strcmp(bundle->authorities[a].name, answer->receipt_signer) != 0 || counted[a])
				continue;
			counted[a] = 1;
			answer->counted = 1;
			result->accepted_count++;
			names_append(result->accepted_names, sizeof(result->accepted_names),
			             answer->receipt_signer);
		}
	}
	if (result->accepted_count >= bundle->threshold) {
		result->accepted = 1;
		return 0;
	}
	ctl_report_fail(report, CTL_EXIT_TEMPFAIL,
	                "register: accepted by %zu of the %zu authorities the trust bundle pins (%s), it "
	                "requires %zu (each server is listed above)",
	                result->accepted_count, bundle->authority_count,
	                result->accepted_count > 0 ? result->accepted_names : "none", bundle->threshold);
	return DIRAUTH_ERR_THRESHOLD;
}

int ctl_register_run(const struct ctl_register_options *given, struct ctl_register_result *result,
                     struct ctl_report *report)
{
	struct ctl_register_options single = *given;
	const struct ctl_register_options *options = &single;
	struct ctl_service_file file;
	struct trust_bundle *bundle = NULL;
	struct certificate_keyring *ring = NULL;
	struct signer_key *key = NULL;
	struct net_response response;
	struct buffer certificates;
	int rc;

	buffer_init(&certificates);
	/* One server in the list is the one server of the single-server command, unchanged. */
	if (single.server_count == 1) {
		single.server_url = single.server_urls[0];
		single.server_count = 0;
	}

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
	rc = ctl_register_load_key("register", options->key_path, &key, report);
	if (rc != 0)
		goto done;
	rc = ctl_register_load_service_file("register", options->service_path, &file, report);
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
	if (options->server_count > 1) {
		struct submission submission = {
		    .bundle = bundle,
		    .note = &result->note,
		    .note_sha256 = result->note_sha256,
		    .namespace_name = file.namespace_name,
		    .service_id = file.service_id,
		    .sequence = result->sequence,
		};
		if (bundle == NULL) {
			rc = DIRAUTH_ERR_CONFIG;
			ctl_report_fail(
			    report, CTL_EXIT_USAGE,
			    "register: several --server need --trust BUNDLE: a receipt counts toward "
			    "the threshold only when it verifies");
			goto done;
		}
		if (options->server_count > CTL_REGISTER_SERVERS_MAX) {
			rc = DIRAUTH_ERR_CONFIG;
			ctl_report_fail(report, CTL_EXIT_USAGE, "register: --server: at most %d servers",
			                CTL_REGISTER_SERVERS_MAX);
			goto done;
		}
		rc = register_at_servers(options, &submission, result, report);
		goto done;
	}
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
	rc = submit(options->server_url, &result->note, &response, report);
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
