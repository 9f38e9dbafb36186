/*
 * endpoint.c: dirauthctl health, revoke and deregister (see endpoint.h).
 *
 * The three commands differ in the document they build and the answer they check; loading the
 * key and the service file, posting to every server at once and checking a receipt are
 * register's (register.h, exchange.h, keyring.h), shared, not copied.
 */
#include "ctl/endpoint.h"

#include "ctl/exchange.h"
#include "ctl/files.h"
#include "ctl/keyring.h"
#include "ctl/trust_file.h"
#include "crypto/crypto.h"
#include "schema/deregistration.h"
#include "schema/encoding.h"
#include "base/error.h"
#include "schema/lines.h"
#include "schema/note.h"
#include "verify/keyring.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The state file: one canonical decimal and a newline. */
#define STATE_MAX_BYTES 64

const char *ctl_endpoint_command_name(enum ctl_endpoint_kind kind)
{
	switch (kind) {
	case CTL_ENDPOINT_HEALTH:
		return "health";
	case CTL_ENDPOINT_REVOCATION:
		return "revoke";
	case CTL_ENDPOINT_DEREGISTRATION:
	default:
		return "deregister";
	}
}

static const char *route_of(enum ctl_endpoint_kind kind)
{
	switch (kind) {
	case CTL_ENDPOINT_HEALTH:
		return "/v1/endpoint-health";
	case CTL_ENDPOINT_REVOCATION:
		return "/v1/revocations";
	case CTL_ENDPOINT_DEREGISTRATION:
	default:
		return "/v1/deregistrations";
	}
}

void ctl_endpoint_result_init(struct ctl_endpoint_result *result)
{
	memset(result, 0, sizeof(*result));
	buffer_init(&result->note);
}

void ctl_endpoint_result_free(struct ctl_endpoint_result *result)
{
	if (result == NULL)
		return;
	buffer_free(&result->note);
	free(result->answers);
	result->answers = NULL;
	result->answer_count = 0;
}

/* What the document is about, resolved from the options and the service file. */
struct target {
	char namespace_name[NAMESPACE_NAME_MAX + 1];
	uint8_t service_id[SERVICE_ID_SIZE];
	int has_endpoint;
	uint8_t endpoint_id[ENDPOINT_ID_SIZE];
	const struct endpoint_descriptor *endpoint; /* in the service file, when it lists it */
};

static int resolve_target(const struct ctl_endpoint_options *options, const struct ctl_service_file *file,
                          struct target *target, struct ctl_report *report)
{
	const char *what = ctl_endpoint_command_name(options->kind);

	memset(target, 0, sizeof(*target));
	if (options->service_path != NULL) {
		snprintf(target->namespace_name, sizeof(target->namespace_name), "%s", file->namespace_name);
		memcpy(target->service_id, file->service_id, SERVICE_ID_SIZE);
	} else {
		struct text_span span = {options->namespace_name != NULL ? options->namespace_name : "", 0};
		span.len = strlen(span.data);
		if (!text_is_name(span, NAMESPACE_NAME_MAX)) {
			ctl_report_fail(report, CTL_EXIT_USAGE,
			                "%s: --namespace: '%.64s' is not a namespace name", what, span.data);
			return DIRAUTH_ERR_SYNTAX;
		}
		snprintf(target->namespace_name, sizeof(target->namespace_name), "%s", span.data);
		span.data = options->service_hex != NULL ? options->service_hex : "";
		span.len = strlen(span.data);
		if (text_parse_hex(span, target->service_id, SERVICE_ID_SIZE) != 0) {
			ctl_report_fail(report, CTL_EXIT_USAGE,
			                "%s: --service-id: expected 64 lower-case hex digits", what);
			return DIRAUTH_ERR_SYNTAX;
		}
	}
	if (options->endpoint_hex == NULL)
		return 0;
	{
		struct text_span span = {options->endpoint_hex, strlen(options->endpoint_hex)};
		if (text_parse_hex(span, target->endpoint_id, ENDPOINT_ID_SIZE) != 0) {
			ctl_report_fail(report, CTL_EXIT_USAGE,
			                "%s: --endpoint: expected 64 lower-case hex digits", what);
			return DIRAUTH_ERR_SYNTAX;
		}
	}
	target->has_endpoint = 1;
	if (options->service_path == NULL)
		return 0;
	for (size_t i = 0; i < file->endpoint_count; i++)
		if (memcmp(file->endpoints[i].endpoint_id, target->endpoint_id, ENDPOINT_ID_SIZE) == 0)
			target->endpoint = &file->endpoints[i];
	if (target->endpoint == NULL) {
		ctl_report_fail(report, CTL_EXIT_DATA, "%s: endpoint %s is not an endpoint of %s", what,
		                options->endpoint_hex, options->service_path);
		return DIRAUTH_ERR_NOT_FOUND;
	}
	return 0;
}

/* A health statement signed by the endpoint: the key must be the one the file names for it. */
static int check_endpoint_key(const struct ctl_endpoint_options *options, const struct target *target,
                              const struct signer_key *key, struct ctl_report *report)
{
	if (!target->endpoint->has_key) {
		ctl_report_fail(report, CTL_EXIT_DATA,
		                "health: endpoint %s names no key of its own in %s (add 'key:' to it and "
		                "register again, or sign with --signer provider)",
		                options->endpoint_hex, options->service_path);
		return DIRAUTH_ERR_UNKNOWN_KEY;
	}
	if (!note_verifier_equal(&target->endpoint->key, signer_key_verifier(key))) {
		char named[NOTE_VERIFIER_KEY_MAX + 1];
		note_verifier_format(&target->endpoint->key, named);
		ctl_report_fail(report, CTL_EXIT_DATA,
		                "health: the key %s is not the endpoint's own key (%s names %s)",
		                options->key_path, options->service_path, named);
		return DIRAUTH_ERR_UNKNOWN_KEY;
	}
	return 0;
}

/* The directory and file name of path, for ctl_file_write_atomic. */
static int split_path(const char *path, char *directory, size_t directory_cap, const char **name)
{
	const char *slash = strrchr(path, '/');
	int n;

	if (slash == NULL) {
		n = snprintf(directory, directory_cap, ".");
		*name = path;
	} else {
		n = snprintf(directory, directory_cap, "%.*s", slash == path ? 1 : (int)(slash - path), path);
		*name = slash + 1;
	}
	if (n < 0 || (size_t)n >= directory_cap || (*name)[0] == '\0')
		return DIRAUTH_ERR_BOUNDS;
	return 0;
}

static const struct ctl_file_limit state_limit = {STATE_MAX_BYTES, NULL, CTL_EXIT_DATA};

/* The sequence: given, after the state file's, or the clock's. */
static int choose_sequence(const struct ctl_endpoint_options *options, const struct ctl_service_file *file,
                           uint64_t *sequence, struct ctl_report *report)
{
	const char *what = ctl_endpoint_command_name(options->kind);
	uint8_t *data = NULL;
	size_t len = 0;
	uint64_t last = 0;
	int rc;

	if (options->kind == CTL_ENDPOINT_DEREGISTRATION) {
		if (options->has_sequence)
			*sequence = options->sequence;
		else if (options->service_path != NULL && file->has_sequence)
			*sequence = file->sequence;
		else
			*sequence = options->now;
		return 0;
	}
	if (options->state_path == NULL) {
		*sequence = options->has_sequence ? options->sequence : options->now;
		return 0;
	}
	if (ctl_file_exists(options->state_path)) {
		rc = ctl_file_read_reported(options->state_path, &state_limit, &data, &len, report,
		                            "%s: state file %s", what, options->state_path);
		if (rc != 0)
			return rc;
		struct text_span span = {(const char *)data, len};
		if (span.len > 0 && span.data[span.len - 1] == '\n')
			span.len--;
		if (text_parse_u64(span, &last) != 0 || last == UINT64_MAX) {
			free(data);
			ctl_report_fail(report, CTL_EXIT_DATA,
			                "%s: state file %s: expected the last sequence used, a decimal", what,
			                options->state_path);
			return DIRAUTH_ERR_SYNTAX;
		}
	}
	free(data);
	*sequence = last + 1;
	if (options->has_sequence && options->sequence > *sequence)
		*sequence = options->sequence;
	return 0;
}

static int save_sequence(const struct ctl_endpoint_options *options, uint64_t sequence,
                         struct ctl_report *report)
{
	char directory[CTL_ENDPOINT_PATH_MAX], text[32];
	const char *name;
	int n, rc;

	if (options->state_path == NULL || options->kind == CTL_ENDPOINT_DEREGISTRATION)
		return 0;
	rc = split_path(options->state_path, directory, sizeof(directory), &name);
	n = snprintf(text, sizeof(text), "%" PRIu64 "\n", sequence);
	if (rc == 0)
		rc = ctl_file_write_atomic(directory, name, (const uint8_t *)text, (size_t)n);
	if (rc != 0)
		ctl_report_fail(report, CTL_EXIT_IO, "%s: state file %s: cannot write: %s",
		                ctl_endpoint_command_name(options->kind), options->state_path,
		                dirauth_strerror(rc));
	return rc;
}

static int encode_document(const struct ctl_endpoint_options *options, const struct target *target,
                           const struct signer_key *key, uint64_t sequence, struct buffer *text)
{
	switch (options->kind) {
	case CTL_ENDPOINT_HEALTH: {
		struct health_statement s;
		memset(&s, 0, sizeof(s));
		snprintf(s.namespace_name, sizeof(s.namespace_name), "%s", target->namespace_name);
		memcpy(s.service_id, target->service_id, SERVICE_ID_SIZE);
		memcpy(s.endpoint_id, target->endpoint_id, ENDPOINT_ID_SIZE);
		s.signer = (enum health_signer)options->signer;
		s.health_class = options->health_class;
		s.has_capacity = options->has_capacity;
		s.capacity = options->capacity;
		s.issued_at = options->now;
		s.sequence = sequence;
		return health_encode(&s, text);
	}
	case CTL_ENDPOINT_REVOCATION: {
		struct revocation r;
		memset(&r, 0, sizeof(r));
		snprintf(r.namespace_name, sizeof(r.namespace_name), "%s", target->namespace_name);
		memcpy(r.service_id, target->service_id, SERVICE_ID_SIZE);
		r.has_endpoint = target->has_endpoint;
		memcpy(r.endpoint_id, target->endpoint_id, ENDPOINT_ID_SIZE);
		r.signer = (enum revocation_signer)options->signer;
		r.key = *signer_key_verifier(key);
		r.reason = options->reason;
		r.revoked_at = options->now;
		r.sequence = sequence;
		return revocation_encode(&r, text);
	}
	case CTL_ENDPOINT_DEREGISTRATION:
	default: {
		struct deregistration d;
		memset(&d, 0, sizeof(d));
		snprintf(d.namespace_name, sizeof(d.namespace_name), "%s", target->namespace_name);
		memcpy(d.service_id, target->service_id, SERVICE_ID_SIZE);
		d.provider = *signer_key_verifier(key);
		d.sequence = sequence;
		d.requested_at = options->now;
		return deregistration_encode(&d, text);
	}
	}
}

static int build_note(const struct ctl_endpoint_options *options, const struct target *target,
                      const struct signer_key *key, struct ctl_endpoint_result *result,
                      struct ctl_report *report)
{
	const char *what = ctl_endpoint_command_name(options->kind);
	struct note_signature signature;
	struct buffer text;
	int rc;

	buffer_init(&text);
	rc = encode_document(options, target, key, result->sequence, &text);
	if (rc != 0) {
		ctl_report_fail(report, rc == DIRAUTH_ERR_NOMEM ? CTL_EXIT_SOFTWARE : CTL_EXIT_DATA,
		                "%s: the fields do not make a document: %s", what, dirauth_strerror(rc));
		goto done;
	}
	rc = signer_key_sign(key, text.data, text.len, &signature);
	if (rc != 0) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "%s: cannot sign: %s", what, dirauth_strerror(rc));
		goto done;
	}
	buffer_reset(&result->note);
	rc = note_format(text.data, text.len, &signature, 1, &result->note);
	if (rc == 0)
		rc = crypto_sha256(result->note.data, result->note.len, result->note_sha256);
	if (rc != 0) {
		ctl_report_fail(report, rc == DIRAUTH_ERR_NOMEM ? CTL_EXIT_SOFTWARE : CTL_EXIT_DATA,
		                "%s: cannot format the signed note: %s", what, dirauth_strerror(rc));
		goto done;
	}
	hex_encode(result->note_sha256, 32, result->note_hex);
done:
	buffer_free(&text);
	return rc;
}

/* Everything the per-server work reads; each server writes only its own answer. */
struct posting {
	const struct ctl_endpoint_options *options;
	const struct ctl_endpoint_result *result;
	const struct trust_bundle *bundle; /* deregistration with a trust bundle */
	struct ctl_endpoint_answer *answers;
};

/* The value of "name": in a flat JSON object (the server's accepted answer), as a span: the
 * characters up to the closing quote (quoted) or the digits (not quoted). */
static int json_value(const uint8_t *body, size_t len, const char *name, int quoted, struct text_span *out)
{
	char key[32];
	const char *text = (const char *)body;
	size_t key_len = (size_t)snprintf(key, sizeof(key), "\"%s\":%s", name, quoted ? "\"" : "");

	for (size_t i = 0; i + key_len <= len; i++) {
		if (memcmp(text + i, key, key_len) != 0)
			continue;
		size_t start = i + key_len, end = start;
		while (end < len && (quoted ? text[end] != '"' : (text[end] >= '0' && text[end] <= '9')))
			end++;
		if (quoted && end == len)
			return DIRAUTH_ERR_SYNTAX;
		out->data = text + start;
		out->len = end - start;
		return 0;
	}
	return DIRAUTH_ERR_SYNTAX;
}

int ctl_endpoint_parse_accepted(const uint8_t *body, size_t len, uint8_t sha256[32], uint64_t *epoch)
{
	struct text_span status, digest, number;

	if (len > CTL_ENDPOINT_RESPONSE_MAX)
		return DIRAUTH_ERR_BOUNDS;
	if (json_value(body, len, "status", 1, &status) != 0 ||
	    json_value(body, len, "sha256", 1, &digest) != 0 ||
	    json_value(body, len, "epoch", 0, &number) != 0 || status.len != 8 ||
	    memcmp(status.data, "accepted", 8) != 0 || digest.len != 64 ||
	    text_parse_hex(digest, sha256, 32) != 0 || text_parse_u64(number, epoch) != 0)
		return DIRAUTH_ERR_SYNTAX;
	return 0;
}

/* 202 {"status":"accepted","sha256":"<hex>","epoch":E}: it must name the note posted. */
static int check_accepted(const char *what, const struct net_response *response,
                          const uint8_t note_sha256[32], struct ctl_endpoint_answer *answer)
{
	uint8_t named[32];

	if (ctl_endpoint_parse_accepted(response->body.data, response->body.len, named, &answer->epoch) !=
	    0) {
		ctl_report_fail(&answer->report, CTL_EXIT_DATA,
		                "%s: the answer is not the accepted statement's JSON", what);
		return DIRAUTH_ERR_SYNTAX;
	}
	if (memcmp(named, note_sha256, 32) != 0) {
		ctl_report_fail(&answer->report, CTL_EXIT_DATA,
		                "%s: the answer names another document than the one posted", what);
		return DIRAUTH_ERR_MISMATCH;
	}
	return 0;
}

static int receipt_refused(struct ctl_report *report, const char *why)
{
	ctl_report_fail(report, CTL_EXIT_DATA, "deregister: receipt refused: %s", why);
	return DIRAUTH_ERR_MISMATCH;
}

/* A deregistration receipt: parsed, verified with ring (when not NULL), against the request. */
static int check_receipt(const struct posting *posting, const struct certificate_keyring *ring,
                         const struct net_response *response, struct ctl_endpoint_answer *answer)
{
	const struct ctl_endpoint_result *result = posting->result;
	struct deregistration_receipt *receipt = &answer->receipt;
	struct note *note = NULL;
	uint8_t service_id[SERVICE_ID_SIZE];
	struct text_span span = {result->service_hex, 2 * SERVICE_ID_SIZE};
	int rc;

	rc = note_parse(response->body.data, response->body.len, &note);
	if (rc != 0) {
		ctl_report_fail(&answer->report, rc == DIRAUTH_ERR_NOMEM ? CTL_EXIT_SOFTWARE : CTL_EXIT_DATA,
		                "deregister: receipt: not a signed note: %s", dirauth_strerror(rc));
		goto done;
	}
	rc = deregistration_receipt_parse(note->text, note->text_len, receipt);
	if (rc != 0) {
		ctl_report_fail(&answer->report, CTL_EXIT_DATA, "deregister: receipt: does not parse: %s",
		                dirauth_strerror(rc));
		goto done;
	}
	if (ring != NULL) {
		rc = ctl_keyring_verify_receipt("deregister", ring, note, receipt->authority,
		                                receipt->accepted_at, &answer->report);
		if (rc != 0)
			goto done;
		answer->receipt_verified = 1;
	}
	snprintf(answer->receipt_signer, sizeof(answer->receipt_signer), "%s", receipt->authority);
	(void)text_parse_hex(span, service_id, SERVICE_ID_SIZE);
	if (strcmp(receipt->namespace_name, result->namespace_name) != 0)
		rc = receipt_refused(&answer->report, "it names another namespace");
	else if (memcmp(receipt->service_id, service_id, SERVICE_ID_SIZE) != 0)
		rc = receipt_refused(&answer->report, "it names another service");
	else if (receipt->sequence != result->sequence)
		rc = receipt_refused(&answer->report, "it names another sequence");
	else if (memcmp(receipt->deregistration_digest, result->note_sha256, 32) != 0)
		rc = receipt_refused(&answer->report,
		                     "its deregistration digest is not the SHA-256 of the submitted note");
done:
	note_free(note);
	return rc;
}

/* Keeps a receipt that checked: <dir>/<service>-<sequence>.<authority>.deregistration-receipt. */
static int keep_receipt(const struct posting *posting, const struct net_response *response,
                        struct ctl_endpoint_answer *answer)
{
	const char *directory =
	    posting->options->receipt_directory != NULL ? posting->options->receipt_directory : ".";
	int n = snprintf(answer->receipt_path, sizeof(answer->receipt_path),
	                 "%s/%s-%" PRIu64 ".%s.deregistration-receipt", directory,
	                 posting->result->service_hex, posting->result->sequence, answer->receipt_signer);
	int rc;

	if (n < 0 || (size_t)n >= sizeof(answer->receipt_path)) {
		ctl_report_fail(&answer->report, CTL_EXIT_CANNOT_CREATE,
		                "deregister: --receipts: path too long");
		return DIRAUTH_ERR_BOUNDS;
	}
	rc = ctl_file_create(answer->receipt_path, response->body.data, response->body.len, 0644);
	if (rc == DIRAUTH_ERR_EXISTS)
		ctl_report_fail(&answer->report, CTL_EXIT_CANNOT_CREATE,
		                "deregister: %s exists; a receipt is never overwritten",
		                answer->receipt_path);
	else if (rc != 0)
		ctl_report_fail(&answer->report,
		                rc == DIRAUTH_ERR_NOT_FOUND || rc == DIRAUTH_ERR_PERMISSION
		                    ? CTL_EXIT_CANNOT_CREATE
		                    : CTL_EXIT_IO,
		                "deregister: %s: %s", answer->receipt_path, dirauth_strerror(rc));
	return rc;
}

/* One server: (for a receipt to verify) its certificates, the post, the answer's check. */
static void post_at(void *context, size_t index)
{
	const struct posting *posting = context;
	const struct ctl_endpoint_options *options = posting->options;
	struct ctl_endpoint_answer *answer = &posting->answers[index];
	const char *what = ctl_endpoint_command_name(options->kind);
	struct certificate_keyring *ring = NULL;
	struct net_response response;
	struct buffer certificates;
	long status = 0;
	int rc;

	net_response_init(&response);
	buffer_init(&certificates);
	answer->outcome = CTL_REGISTER_FAILED;
	if (posting->bundle != NULL) {
		/* Before anything is posted: without the certificates the receipt cannot be checked. */
		rc = ctl_keyring_download_status(what, answer->server_url, &certificates, &status,
		                                 &answer->report);
		answer->http_status = status;
		if (rc != 0) {
			answer->outcome = ctl_register_exchange_outcome(rc, status, 200);
			goto done;
		}
		rc = ctl_keyring_build(what, posting->bundle, certificates.data, certificates.len, &ring,
		                       NULL, &answer->report);
		if (rc != 0) {
			answer->outcome = ctl_register_check_outcome(&answer->report);
			goto done;
		}
	}
	rc = ctl_exchange_post(what, answer->server_url, route_of(options->kind), posting->result->note.data,
	                       posting->result->note.len, CTL_ENDPOINT_RESPONSE_MAX, &response,
	                       &answer->report);
	answer->http_status = response.status;
	if (rc != 0) {
		answer->outcome = ctl_register_exchange_outcome(rc, response.status, 202);
		goto done;
	}
	if (options->kind == CTL_ENDPOINT_DEREGISTRATION) {
		rc = check_receipt(posting, ring, &response, answer);
		if (rc == 0)
			rc = keep_receipt(posting, &response, answer);
	} else {
		rc = check_accepted(what, &response, posting->result->note_sha256, answer);
	}
	if (rc != 0) {
		answer->outcome = ctl_register_check_outcome(&answer->report);
		goto done;
	}
	answer->outcome = CTL_REGISTER_ACCEPTED;
done:
	net_response_free(&response);
	buffer_free(&certificates);
	verify_keyring_free(ring);
}

/* Appends name to a ", "-separated list, truncating. */
static void names_append(char *names, size_t cap, const char *name)
{
	size_t used = strnlen(names, cap);
	if (used + 1 < cap)
		snprintf(names + used, cap - used, "%s%s", used > 0 ? ", " : "", name);
}

/* Counts what accepted, and decides. */
static int tally(const struct ctl_endpoint_options *options, const struct trust_bundle *bundle,
                 struct ctl_endpoint_result *result, struct ctl_report *report)
{
	const char *what = ctl_endpoint_command_name(options->kind);
	uint8_t counted[TRUST_BUNDLE_MAX_AUTHORITIES];

	memset(counted, 0, sizeof(counted));
	result->accepted_count = 0;
	result->accepted_names[0] = '\0';
	if (options->kind != CTL_ENDPOINT_DEREGISTRATION || bundle == NULL) {
		for (size_t i = 0; i < result->answer_count; i++) {
			result->answers[i].counted = result->answers[i].outcome == CTL_REGISTER_ACCEPTED;
			result->accepted_count += (size_t)result->answers[i].counted;
		}
		result->required = result->answer_count;
	} else {
		/* A receipt counts for the pinned authority that signed it, once (hard rule 10). */
		for (size_t i = 0; i < result->answer_count; i++) {
			struct ctl_endpoint_answer *answer = &result->answers[i];
			if (answer->outcome != CTL_REGISTER_ACCEPTED)
				continue;
			for (size_t a = 0; a < bundle->authority_count; a++) {
				if (strcmp(bundle->authorities[a].name, answer->receipt_signer) != 0 ||
				    counted[a])
					continue;
				counted[a] = 1;
				answer->counted = 1;
				result->accepted_count++;
				names_append(result->accepted_names, sizeof(result->accepted_names),
				             answer->receipt_signer);
			}
		}
		/* Absent once n - k + 1 authorities stop listing it (schema/deregistration.md). */
		result->required =
		    result->answer_count == 1 ? 1 : bundle->authority_count - bundle->threshold + 1;
	}
	if (result->accepted_count >= result->required && result->accepted_count > 0)
		return 0;
	if (result->answer_count == 1) {
		*report = result->answers[0].report;
		return DIRAUTH_ERR_REFUSED;
	}
	if (options->kind == CTL_ENDPOINT_DEREGISTRATION)
		ctl_report_fail(
		    report, CTL_EXIT_TEMPFAIL,
		    "%s: receipts from %zu of the %zu authorities the trust bundle pins (%s); the "
		    "service is absent for sure with %zu (each server is listed above)",
		    what, result->accepted_count, bundle->authority_count,
		    result->accepted_count > 0 ? result->accepted_names : "none", result->required);
	else
		ctl_report_fail(report, CTL_EXIT_TEMPFAIL,
		                "%s: accepted by %zu of the %zu servers (each server is listed above)", what,
		                result->accepted_count, result->answer_count);
	return DIRAUTH_ERR_THRESHOLD;
}

int ctl_endpoint_run(const struct ctl_endpoint_options *options, struct ctl_endpoint_result *result,
                     struct ctl_report *report)
{
	const char *what = ctl_endpoint_command_name(options->kind);
	struct ctl_service_file file;
	struct trust_bundle *bundle = NULL;
	struct signer_key *key = NULL;
	struct target target;
	struct posting posting;
	int rc;

	memset(&file, 0, sizeof(file));
	free(result->answers);
	result->answers = NULL;
	result->answer_count = 0;
	if (options->server_count == 0 || options->server_count > CTL_REGISTER_SERVERS_MAX) {
		rc = DIRAUTH_ERR_CONFIG;
		ctl_report_fail(report, CTL_EXIT_USAGE, "%s: --server: from 1 to %d servers", what,
		                CTL_REGISTER_SERVERS_MAX);
		goto done;
	}
	if (options->kind == CTL_ENDPOINT_DEREGISTRATION && options->server_count > 1 &&
	    options->trust_path == NULL) {
		rc = DIRAUTH_ERR_CONFIG;
		ctl_report_fail(
		    report, CTL_EXIT_USAGE,
		    "deregister: several --server need --trust BUNDLE: a receipt counts only when "
		    "it verifies");
		goto done;
	}
	if (options->kind == CTL_ENDPOINT_DEREGISTRATION && options->trust_path != NULL) {
		/* The bundle is large (fixed arrays); keep it off the stack. */
		bundle = malloc(sizeof(*bundle));
		if (bundle == NULL) {
			rc = DIRAUTH_ERR_NOMEM;
			ctl_report_fail(report, CTL_EXIT_SOFTWARE, "%s: out of memory", what);
			goto done;
		}
		rc = ctl_trust_bundle_load(options->trust_path, bundle, report);
		if (rc != 0)
			goto done;
	}
	rc = ctl_register_load_key(what, options->key_path, &key, report);
	if (rc != 0)
		goto done;
	if (options->service_path != NULL) {
		rc = ctl_register_load_service_file(what, options->service_path, &file, report);
		if (rc != 0)
			goto done;
	}
	rc = resolve_target(options, &file, &target, report);
	if (rc != 0)
		goto done;
	if (options->kind == CTL_ENDPOINT_HEALTH && options->signer == HEALTH_SIGNER_ENDPOINT) {
		rc = check_endpoint_key(options, &target, key, report);
		if (rc != 0)
			goto done;
	}
	snprintf(result->namespace_name, sizeof(result->namespace_name), "%s", target.namespace_name);
	hex_encode(target.service_id, SERVICE_ID_SIZE, result->service_hex);
	rc = choose_sequence(options, &file, &result->sequence, report);
	if (rc != 0)
		goto done;
	rc = build_note(options, &target, key, result, report);
	if (rc != 0)
		goto done;
	rc = save_sequence(options, result->sequence, report);
	if (rc != 0)
		goto done;

	result->answers = calloc(options->server_count, sizeof(*result->answers));
	if (result->answers == NULL) {
		rc = DIRAUTH_ERR_NOMEM;
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "%s: out of memory", what);
		goto done;
	}
	result->answer_count = options->server_count;
	for (size_t i = 0; i < options->server_count; i++) {
		result->answers[i].server_url = options->server_urls[i];
		ctl_report_init(&result->answers[i].report);
	}
	posting.options = options;
	posting.result = result;
	posting.bundle = bundle;
	posting.answers = result->answers;
	rc = ctl_exchange_each(options->server_count, post_at, &posting);
	if (rc != 0) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "%s: out of memory", what);
		goto done;
	}
	rc = tally(options, bundle, result, report);
done:
	ctl_service_file_clear(&file);
	signer_key_free(key);
	free(bundle);
	return rc;
}
