/*
 * service.c: the signer's policy: what it will sign, for whom, and what it remembers.
 *
 * dirauthd is the exposed process (HTTP, parsers fed by strangers); dirauth-signer is the
 * process that holds the keys. The boundary between them is only worth having if the signer
 * decides for itself, so every request is checked here as if dirauthd were compromised:
 *
 *   - The text must parse, canonically and within its bound, as the statement its operation
 *     names. Every dirauth document's first line names its kind, and checkpoints and
 *     cosignatures have their own C2SP forms, so no statement can be passed off as another
 *     kind, and there is no operation that signs raw bytes.
 *   - A receipt or vote must name this authority; a checkpoint signed with the log key must
 *     carry the log key's name as origin.
 *   - A statement must be for a namespace of the signer's own configuration, which gives each
 *     namespace's epoch schedule (schedule/schedule.h). A vote's or header's epoch must be a
 *     current one by the signer's own clock, and a header's times exactly its epoch's: one
 *     request for a far epoch would otherwise make every real epoch after it a rollback.
 *   - Signatures by the signing key are made only while its certificate is valid, so a key
 *     whose certificate lapsed stops speaking even if nobody restarts the signer. A clock that
 *     cannot be read is an error, and nothing is signed without the time.
 *   - Votes and snapshot headers go through the ledger (ledger.h): one statement per (origin,
 *     epoch), never a lower epoch; checkpoints must be proven consistent with the last one
 *     signed or cosigned for their origin, whichever key made it (one tree per origin for the
 *     log key and the cosignature key alike). The ledger record is durable before anything
 *     is signed, so a crash can lose a signature but never let two contradicting ones out.
 *   - Every signature and every refusal is written to the audit log and flushed before the
 *     signature is returned; for every statement but receipts the line is also fsynced when the
 *     log is a file. The audit log names what was signed by its digest and never holds a secret.
 *
 * Which of these apply to an operation is one row of the operation table (service_operations.c:
 * its key, whose statement it is, its time checks, its ledger rule, its audit durability), and
 * every signing request goes through the same steps driven by its row, here in
 * signer_service_handle; at open the table is checked against the protocol's
 * (signer_protocol/signer_protocol.h) and for the checks no row may omit, so an operation added without
 * its checks stops the signer before it signs anything.
 *
 * Requests are handled concurrently, one thread per connection. Keys, certificates and the
 * configuration are read-only after open; every ledger call runs under one lock, so a
 * check-and-record is never interleaved with another, and each audit line is written whole
 * under another.
 *
 * This file holds what the service is: its opening, its namespaces and the path of one request.
 * The parts it calls are in the files service_internal.h lists.
 *
 * At open the service refuses key files other users could read and key directories other users
 * could list or write, and a first certificate that does not certify the signing key or is not
 * valid now: a signer that starts is one whose signatures verifiers will accept.
 */
#include "signer/service.h"

#include "signer/service_internal.h"

#include "crypto/crypto.h"
#include "base/error.h"
#include "schema/lines.h"
#include "schema/names.h"
#include "schedule/schedule.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Writes a sentence into detail (capacity cap; either may be 0/NULL). */
void signer_service_detail(char *detail, size_t cap, const char *format, ...)
{
	va_list args;
	if (!detail || cap == 0)
		return;
	va_start(args, format);
	vsnprintf(detail, cap, format, args);
	va_end(args);
}

/* ---- refusals ---- */

/* Sets the response's refusal. Returns result for chaining. */
int signer_service_refuse(struct signer_response *response, int result, const char *format, ...)
{
	va_list args;
	response->result = result;
	va_start(args, format);
	vsnprintf(response->detail, sizeof(response->detail), format, args);
	va_end(args);
	return result;
}

/* ---- namespaces ---- */

/* Copies and checks the configured namespaces: valid names and origins, none twice, schedules
 * in range. */
static int service_set_namespaces(struct signer_service *service,
                                  const struct signer_service_options *options, char *detail, size_t cap)
{
	if (options->namespace_count == 0 || options->namespace_count > SIGNER_SERVICE_MAX_NAMESPACES ||
	    !options->namespaces) {
		signer_service_detail(detail, cap, "between 1 and %d namespaces must be configured",
		                      SIGNER_SERVICE_MAX_NAMESPACES);
		return DIRAUTH_ERR_CONFIG;
	}
	for (size_t i = 0; i < options->namespace_count; i++) {
		const struct signer_namespace *ns = &options->namespaces[i];
		size_t name_len = strnlen(ns->name, sizeof(ns->name));
		size_t origin_len = strnlen(ns->origin, sizeof(ns->origin));
		struct text_span name = {ns->name, name_len};
		if (name_len == sizeof(ns->name) || !text_is_name(name, NAMESPACE_NAME_MAX)) {
			signer_service_detail(detail, cap,
			                      "namespace %zu: its name is not [a-z0-9-] (inner '-')", i + 1);
			return DIRAUTH_ERR_CONFIG;
		}
		if (origin_len == sizeof(ns->origin) || !names_origin_is_valid(ns->origin, origin_len)) {
			signer_service_detail(detail, cap,
			                      "namespace %s: its origin is not a valid log origin", ns->name);
			return DIRAUTH_ERR_CONFIG;
		}
		if (schedule_check(&ns->schedule) != 0) {
			signer_service_detail(
			    detail, cap,
			    "namespace %s: its epoch schedule is out of range (length 1..%llu s, "
			    "validity 1..%llu epochs, genesis at most %llu)",
			    ns->name, (unsigned long long)SCHEDULE_LENGTH_MAX,
			    (unsigned long long)SCHEDULE_VALIDITY_MAX,
			    (unsigned long long)SCHEDULE_GENESIS_MAX);
			return DIRAUTH_ERR_CONFIG;
		}
		for (size_t j = 0; j < i; j++) {
			if (strcmp(service->namespaces[j].name, ns->name) == 0 ||
			    strcmp(service->namespaces[j].origin, ns->origin) == 0) {
				signer_service_detail(detail, cap,
				                      "namespace %s or its origin %s is configured twice",
				                      ns->name, ns->origin);
				return DIRAUTH_ERR_CONFIG;
			}
		}
		service->namespaces[i] = *ns;
		service->namespace_count = i + 1;
	}
	return 0;
}

const struct signer_namespace *signer_service_namespace_by_name(const struct signer_service *service,
                                                                const char *name)
{
	for (size_t i = 0; name && i < service->namespace_count; i++)
		if (strcmp(service->namespaces[i].name, name) == 0)
			return &service->namespaces[i];
	return NULL;
}

const struct signer_namespace *signer_service_namespace_by_origin(const struct signer_service *service,
                                                                  const char *origin)
{
	for (size_t i = 0; origin && i < service->namespace_count; i++)
		if (strcmp(service->namespaces[i].origin, origin) == 0)
			return &service->namespaces[i];
	return NULL;
}

int signer_service_open(const struct signer_service_options *options, struct signer_service **out,
                        char *detail, size_t detail_cap)
{
	struct signer_service *service = NULL;
	uint64_t now = 0;
	int rc = DIRAUTH_ERR_CONFIG;

	*out = NULL;
	signer_service_detail(detail, detail_cap, "%s", "");
	if ((rc = signer_service_check_table(detail, detail_cap)) != 0)
		return rc;
	if (!options || !options->authority || !options->signing_key_path || !options->ledger_directory ||
	    !options->now) {
		signer_service_detail(detail, detail_cap, "the signer's options are incomplete");
		return DIRAUTH_ERR_CONFIG;
	}
	if (!note_name_is_valid(options->authority, strlen(options->authority))) {
		signer_service_detail(detail, detail_cap, "authority %.128s is not a valid key name",
		                      options->authority);
		return DIRAUTH_ERR_CONFIG;
	}
	service = calloc(1, sizeof(*service));
	if (!service)
		return DIRAUTH_ERR_NOMEM;
	if (pthread_mutex_init(&service->ledger_lock, NULL) != 0) {
		free(service);
		return DIRAUTH_ERR_NOMEM;
	}
	service->ledger_lock_ready = true;
	if (pthread_mutex_init(&service->audit_lock, NULL) != 0) {
		rc = DIRAUTH_ERR_NOMEM;
		goto cleanup;
	}
	service->audit_lock_ready = true;
	memcpy(service->authority, options->authority, strlen(options->authority) + 1);
	service->audit = options->audit;
	service->now = options->now;
	service->now_context = options->now_context;
	service->clock_skew = options->clock_skew_seconds ? options->clock_skew_seconds : 300;
	if ((rc = service_set_namespaces(service, options, detail, detail_cap)) != 0)
		goto cleanup;

	rc = signer_service_load_key(options->signing_key_path, "signing key", &service->signing_key, detail,
	                             detail_cap);
	if (rc)
		goto cleanup;
	if (strcmp(signer_key_verifier(service->signing_key)->name, service->authority) != 0) {
		signer_service_detail(detail, detail_cap, "signing key %s is named %s, not the authority %s",
		                      options->signing_key_path,
		                      signer_key_verifier(service->signing_key)->name, service->authority);
		rc = DIRAUTH_ERR_CONFIG;
		goto cleanup;
	}
	if (options->log_key_path) {
		rc = signer_service_load_key(options->log_key_path, "log key", &service->log_key, detail,
		                             detail_cap);
		if (rc)
			goto cleanup;
	}
	if (options->cosignature_key_path) {
		const struct note_verifier *plain;
		rc = signer_service_load_key(options->cosignature_key_path, "cosignature key",
		                             &service->cosignature_key, detail, detail_cap);
		if (rc)
			goto cleanup;
		plain = signer_key_verifier(service->cosignature_key);
		rc = cosignature_verifier_from_ed25519(plain->name, plain->public_key,
		                                       &service->cosignature_verifier);
		if (rc) {
			signer_service_detail(detail, detail_cap, "cosignature key %s: %s",
			                      options->cosignature_key_path, dirauth_strerror(rc));
			goto cleanup;
		}
	}

	/* One key per role: a key that signed headers must not also sign checkpoints or cosign. */
	const struct signer_key *roles[] = {service->signing_key, service->log_key, service->cosignature_key};
	for (size_t i = 0; i < 3; i++)
		for (size_t j = i + 1; j < 3; j++)
			if (roles[i] && roles[j] &&
			    memcmp(signer_key_verifier(roles[i])->public_key,
			           signer_key_verifier(roles[j])->public_key, 32) == 0) {
				signer_service_detail(
				    detail, detail_cap,
				    "the signing, log and cosignature keys must be three different keys");
				rc = DIRAUTH_ERR_CONFIG;
				goto cleanup;
			}
	/* The log's entries are its origin's snapshot headers: its size is judged by that origin's
	 * schedule, so the origin must be configured. */
	if (service->log_key &&
	    !signer_service_namespace_by_origin(service, signer_key_verifier(service->log_key)->name)) {
		signer_service_detail(
		    detail, detail_cap,
		    "log key %s is named %s, which is the origin of no configured namespace",
		    options->log_key_path, signer_key_verifier(service->log_key)->name);
		rc = DIRAUTH_ERR_CONFIG;
		goto cleanup;
	}

	rc = options->now(options->now_context, &now);
	if (rc) {
		signer_service_detail(detail, detail_cap, "the clock cannot be read: %s",
		                      dirauth_strerror(rc));
		rc = DIRAUTH_ERR_CONFIG;
		goto cleanup;
	}
	rc = signer_service_load_certificates(service, options, now, detail, detail_cap);
	if (rc)
		goto cleanup;

	/* The ledger is the signer's memory: a directory others can write is one they can roll back. */
	struct stat ledger_st;
	if (lstat(options->ledger_directory, &ledger_st) == 0 &&
	    (rc = signer_service_check_private(options->ledger_directory, "ledger directory", true, detail,
	                                       detail_cap)))
		goto cleanup;
	rc = ledger_open(options->ledger_directory, &service->ledger);
	if (rc) {
		signer_service_detail(detail, detail_cap, "ledger %s cannot be opened: %s",
		                      options->ledger_directory, dirauth_strerror(rc));
		goto cleanup;
	}
	*out = service;
	service = NULL;
cleanup:
	signer_service_close(service);
	return rc;
}

void signer_service_close(struct signer_service *service)
{
	if (!service)
		return;
	signer_key_free(service->signing_key);
	signer_key_free(service->log_key);
	signer_key_free(service->cosignature_key);
	buffer_free(&service->certificate_bundle);
	ledger_close(service->ledger);
	if (service->ledger_lock_ready)
		pthread_mutex_destroy(&service->ledger_lock);
	if (service->audit_lock_ready)
		pthread_mutex_destroy(&service->audit_lock);
	free(service);
}

/* ---- signing ---- */

/* Fills the response with a note signature by key over message, after the audit line. */
static int service_sign_note(struct signer_service *service, const struct signer_key *key,
                             const struct service_request_state *state, const uint8_t *message,
                             size_t message_len, struct signer_response *response)
{
	int rc = signer_key_sign(key, message, message_len, &response->signature);
	if (rc)
		return signer_service_refuse(response, rc, "signing failed: %s", dirauth_strerror(rc));
	rc = signer_service_audit_signature(service, state, message, message_len, signer_key_verifier(key));
	if (rc) {
		memset(&response->signature, 0, sizeof(response->signature));
		return signer_service_refuse(response, rc,
		                             "the audit log cannot be written: no signature is returned");
	}
	response->has_signature = 1;
	return 0;
}

/* A c2sp.org/tlog-cosignature over the checkpoint text, dated now by the signer's clock. */
static int service_cosign(struct signer_service *service, const struct service_request_state *state,
                          const struct signer_request *request, struct signer_response *response)
{
	struct buffer message;
	uint8_t signature[CRYPTO_ED25519_SIGNATURE_SIZE];
	uint64_t now = state->now;
	int rc;

	buffer_init(&message);
	rc = cosignature_message(now, request->text, request->text_len, &message);
	if (rc) {
		buffer_free(&message);
		return signer_service_refuse(response, rc, "the cosignature message cannot be built: %s",
		                             dirauth_strerror(rc));
	}
	rc = signer_key_sign_raw(service->cosignature_key, message.data, message.len, signature);
	if (rc) {
		buffer_free(&message);
		return signer_service_refuse(response, rc, "signing failed: %s", dirauth_strerror(rc));
	}
	rc = signer_service_audit_signature(service, state, message.data, message.len,
	                                    &service->cosignature_verifier);
	buffer_free(&message);
	if (rc)
		return signer_service_refuse(response, rc,
		                             "the audit log cannot be written: no signature is returned");

	cosignature_signature(&service->cosignature_verifier, now, signature, &response->signature);
	response->has_signature = 1;
	return 0;
}

static const struct signer_key *service_key(const struct signer_service *service, enum service_key key)
{
	switch (key) {
	case SERVICE_KEY_SIGNING:
		return service->signing_key;
	case SERVICE_KEY_LOG:
		return service->log_key;
	case SERVICE_KEY_COSIGNATURE:
		return service->cosignature_key;
	case SERVICE_KEY_NONE:
	default:
		return NULL;
	}
}

static void service_set_origin(struct service_request_state *state, const char *origin)
{
	size_t len = strnlen(origin, NAMES_ORIGIN_MAX);
	memcpy(state->origin, origin, len);
	state->origin[len] = '\0';
}

/* Every signing request, whatever its operation: the clock, the key, the statement, whose it
 * is, the time checks, the ledger, the signature and its audit line, in this order. */
static int service_sign(struct signer_service *service, const struct service_operation *row,
                        const struct signer_request *request, struct service_request_state *state,
                        struct signer_response *response)
{
	union service_parsed parsed;
	struct service_statement statement;
	const struct signer_namespace *ns = NULL;
	const struct signer_key *key;
	int rc;

	memset(&statement, 0, sizeof(statement));
	if (!state->has_now)
		return signer_service_refuse(response, DIRAUTH_ERR_UNAVAILABLE,
		                             "the clock cannot be read: nothing is signed without the time");
	key = service_key(service, row->key);
	if (!key)
		return signer_service_refuse(response, DIRAUTH_ERR_UNAVAILABLE, "no %s key is configured",
		                             row->key == SERVICE_KEY_LOG ? "log" : "cosignature");
	rc = row->parse(request, &parsed, &statement, response);
	if (statement.origin)
		service_set_origin(state, statement.origin);
	state->has_epoch = statement.has_epoch;
	state->epoch = statement.epoch;
	state->has_size = statement.has_tree;
	state->size = statement.tree_size;
	if (rc)
		return rc;
	if (statement.authority && strcmp(statement.authority, service->authority) != 0)
		return signer_service_refuse(response, DIRAUTH_ERR_REFUSED,
		                             "the %s names authority %.128s, not %s", row->what,
		                             statement.authority, service->authority);
	if ((rc = signer_service_check_scope(service, row, &statement, &ns, response)) != 0 ||
	    (rc = signer_service_check_times(service, state->now, row, ns, &statement, response)) != 0 ||
	    (rc = signer_service_record(service, row, request, &statement, state, response)) != 0)
		return rc;
	if (row->key == SERVICE_KEY_COSIGNATURE)
		return service_cosign(service, state, request, response);
	return service_sign_note(service, key, state, request->text, request->text_len, response);
}

/* ---- one request ---- */

int signer_service_handle(struct signer_service *service, const struct signer_request *request,
                          struct signer_response *response, struct buffer *payload_storage)
{
	const struct signer_operation_info *info = signer_operation_find(request->operation);
	const struct service_operation *row = info ? signer_service_operation_find(request->operation) : NULL;
	struct service_request_state state;
	int rc;

	memset(response, 0, sizeof(*response));
	memset(&state, 0, sizeof(state));
	buffer_reset(payload_storage);
	state.operation = info ? info->name : "unknown";
	state.durable_audit = !row || row->durable_audit;
	/* Signing requests, and requests for operations that do not exist, are audited; their
	 * time is read once, and a clock that cannot be read is an error, not a time. */
	bool audited = !row || row->key != SERVICE_KEY_NONE;
	if (audited)
		state.has_now = service->now(service->now_context, &state.now) == 0;

	if (!row)
		rc = signer_service_refuse(response, DIRAUTH_ERR_REFUSED, "unknown operation %u",
		                           (unsigned)request->operation);
	else if (!info->takes_text && request->text_len)
		rc = signer_service_refuse(response, DIRAUTH_ERR_REFUSED, "%s takes no text", info->name);
	else if (row->key == SERVICE_KEY_NONE)
		rc = row->answer(service, request, &state, response, payload_storage);
	else
		rc = service_sign(service, row, request, &state, response);

	if (rc) {
		response->has_signature = 0;
		memset(&response->signature, 0, sizeof(response->signature));
		buffer_reset(payload_storage);
		if (audited)
			signer_service_audit_refusal(service, &state, rc);
	} else if (payload_storage->len) {
		response->payload = payload_storage->data;
		response->payload_len = payload_storage->len;
	}
	response->result = rc;
	return rc;
}
