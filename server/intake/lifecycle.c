/*
 * lifecycle.c: the checks of health statements, revocations and deregistrations, their store
 * submission and their answers (lifecycle.h).
 *
 * The three documents share one path: a pending statement is checked in the caller's thread (every
 * check that needs no store write, the signatures included, so that the thread pool spreads them),
 * then submitted to the store's committer, which judges sequences and targets in the same
 * transaction that keeps it; a deregistration then has its receipt signed. Each check refuses with
 * its own API error and a sentence naming what was wrong; the order puts what can be read from the
 * document before who signed it, and who may sign before whether the signature verifies, so that
 * a statement by a stranger's key is "wrong_signer" and "bad_signature" is kept for the right key
 * whose signature fails.
 */
#include "server/intake/lifecycle.h"

#include "schema/crypto.h"
#include "schema/deregistration.h"
#include "schema/deregistration_receipt.h"
#include "schema/encoding.h"
#include "schema/error.h"
#include "schema/health.h"
#include "schema/note.h"
#include "schema/revocation.h"
#include "schema/schedule.h"
#include "server/store/lifecycle.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum statement_kind { STATEMENT_HEALTH, STATEMENT_REVOCATION, STATEMENT_DEREGISTRATION };

static const char *const statement_names[] = {"health statement", "revocation", "deregistration"};

struct lifecycle_pending {
	struct submit_context context;
	enum statement_kind kind;
	const uint8_t *body; /* borrowed until the end */
	size_t len;
	bool from_peer;
	struct note *note;
	struct health_statement health;
	struct revocation revocation;
	struct deregistration deregistration;
	uint8_t digest[32];
	uint64_t now;
	struct store_health store_health;
	struct store_revocation store_revocation;
	struct store_deregistration store_deregistration;
	struct buffer receipt_text;
	struct submit_result result;
	submit_done done;
	void *done_context;
};

static enum api_error refuse(struct submit_result *result, enum api_error error, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

static enum api_error refuse(struct submit_result *result, enum api_error error, const char *format, ...)
{
	va_list args;
	va_start(args, format);
	vsnprintf(result->detail, sizeof result->detail, format, args);
	va_end(args);
	result->error = error;
	return error;
}

/* ---- the checks ---- */

/* The namespace is served (404 unknown_namespace) and takes lifecycle statements (404
 * lifecycle_disabled); *index gets it. */
static enum api_error check_namespace(const struct lifecycle_pending *p, const char *name, int *index,
                                      struct submit_result *result)
{
	*index = config_namespace_index(p->context.config, name, strlen(name));
	if (*index < 0)
		return refuse(result, API_ERROR_UNKNOWN_NAMESPACE, "The namespace '%s' is not served here.",
		              name);
	if (!p->context.config->namespaces[*index].lifecycle)
		return refuse(result, API_ERROR_LIFECYCLE_DISABLED,
		              "The namespace '%s' takes no %ss (it is not configured with lifecycle: true).",
		              name, statement_names[p->kind]);
	return API_ERROR_NONE;
}

/* The service was registered in this namespace (404 unknown_service); its owner's key name. */
static enum api_error check_service_known(const struct lifecycle_pending *p, const char *namespace_name,
                                          const uint8_t service_id[SERVICE_ID_SIZE],
                                          char owner[STORE_NAME_MAX + 1], struct submit_result *result)
{
	char owner_namespace[STORE_NAME_MAX + 1];
	int rc = store_service_owner(p->context.store, service_id, owner_namespace, owner);
	if (rc == DIRAUTH_ERR_NOT_FOUND || (rc == 0 && strcmp(owner_namespace, namespace_name) != 0))
		return refuse(result, API_ERROR_UNKNOWN_SERVICE,
		              "The service is not registered in the namespace '%s' here.", namespace_name);
	if (rc)
		return refuse(result, API_ERROR_INTERNAL, "The store failed: %s", dirauth_strerror(rc));
	return API_ERROR_NONE;
}

/* The note parses with exactly one signature line (400). */
static enum api_error parse_one_signature(const struct lifecycle_pending *p, struct note **note,
                                          struct submit_result *result)
{
	int rc = note_parse(p->body, p->len, note);
	if (rc == DIRAUTH_ERR_NOMEM)
		return refuse(result, API_ERROR_INTERNAL, "Out of memory.");
	if (rc || (*note)->signature_count != 1)
		return refuse(result, API_ERROR_MALFORMED, "The body is not a %s note with one signature: %s",
		              statement_names[p->kind],
		              rc ? dirauth_strerror(rc) : "more than one signature line");
	return API_ERROR_NONE;
}

/* The note's one signature by key: bad_signature when it names key and fails, wrong_signer when
 * it is by another key. */
static enum api_error check_signature(const struct note *note, const struct note_verifier *key,
                                      struct submit_result *result)
{
	int rc = note_verify_threshold(note, key, 1, 1);
	if (rc == DIRAUTH_ERR_SIGNATURE)
		return refuse(result, API_ERROR_BAD_SIGNATURE, "The signature by '%s' does not verify.",
		              key->name);
	if (rc == DIRAUTH_ERR_UNKNOWN_KEY || rc == DIRAUTH_ERR_THRESHOLD)
		return refuse(result, API_ERROR_WRONG_SIGNER,
		              "The note is not signed by '%s', whose key it names.", key->name);
	if (rc)
		return refuse(result, API_ERROR_INTERNAL, "The signature could not be checked: %s",
		              dirauth_strerror(rc));
	return API_ERROR_NONE;
}

/* The provider key is enrolled (403 unknown_provider) and for this namespace (403
 * namespace_not_allowed). */
static enum api_error check_provider_enrolled(const struct lifecycle_pending *p,
                                              const struct note_verifier *key, int namespace_index,
                                              struct submit_result *result)
{
	const struct config_provider *provider = config_provider_find(p->context.config, key);
	if (!provider)
		return refuse(result, API_ERROR_UNKNOWN_PROVIDER, "The provider key '%s' is not enrolled.",
		              key->name);
	if (!(provider->namespace_mask & ((uint64_t)1 << namespace_index)))
		return refuse(result, API_ERROR_NAMESPACE_NOT_ALLOWED,
		              "The provider '%s' is not enrolled for the namespace '%s'.", key->name,
		              p->context.config->namespaces[namespace_index].name);
	return API_ERROR_NONE;
}

static enum api_error read_clock(struct lifecycle_pending *p, struct submit_result *result)
{
	if (clock_now(p->context.clock, &p->now) != 0)
		return refuse(result, API_ERROR_UNAVAILABLE, "The clock cannot be read.");
	return API_ERROR_NONE;
}

/* The service's current registration, which a health statement speaks about: unexpired, not
 * withdrawn, listing the endpoint. */
static enum api_error current_registration(struct lifecycle_pending *p, struct registration *r,
                                           struct submit_result *result)
{
	const struct health_statement *s = &p->health;
	struct buffer note;
	struct note *parsed = NULL;
	uint64_t sequence;
	char owner[STORE_NAME_MAX + 1];
	enum api_error error = check_service_known(p, s->namespace_name, s->service_id, owner, result);
	if (error)
		return error;
	buffer_init(&note);
	int rc = store_service_sequence(p->context.store, s->service_id, &sequence);
	if (rc == 0)
		rc = store_registration_get(p->context.store, s->namespace_name, s->service_id, sequence,
		                            &note);
	if (rc == 0)
		rc = registration_parse_note(note.data, note.len, r, &parsed);
	note_free(parsed);
	buffer_free(&note);
	if (rc == DIRAUTH_ERR_NOT_FOUND)
		return refuse(result, API_ERROR_UNKNOWN_SERVICE,
		              "The service has no current registration here.");
	if (rc)
		return refuse(result, API_ERROR_INTERNAL, "The registration could not be read: %s",
		              dirauth_strerror(rc));
	if (r->expires <= p->now)
		return refuse(result, API_ERROR_UNKNOWN_SERVICE,
		              "The service's registration expired at %llu.", (unsigned long long)r->expires);
	enum store_withdrawal withdrawal;
	rc = store_registration_withdrawn(p->context.store, s->namespace_name, s->service_id, r->sequence,
	                                  s->endpoint_id, 1, &withdrawal);
	if (rc)
		return refuse(result, API_ERROR_INTERNAL, "The store failed: %s", dirauth_strerror(rc));
	if (withdrawal == STORE_WITHDRAWN_REVOKED)
		return refuse(result, API_ERROR_REVOKED, "The service or the endpoint is revoked.");
	if (withdrawal == STORE_WITHDRAWN_DEREGISTERED)
		return refuse(result, API_ERROR_UNKNOWN_SERVICE, "The service was deregistered.");
	if (!registration_find_endpoint(r, s->endpoint_id))
		return refuse(result, API_ERROR_UNKNOWN_ENDPOINT,
		              "The service's current registration (sequence %llu) lists no such endpoint.",
		              (unsigned long long)r->sequence);
	return API_ERROR_NONE;
}

static enum api_error prepare_health(struct lifecycle_pending *p)
{
	struct submit_result *result = &p->result;
	const struct config *config = p->context.config;
	struct health_statement *s = &p->health;
	struct registration r;
	enum api_error error;
	int namespace_index;
	memset(&r, 0, sizeof r);
	if (p->len > HEALTH_MAX_BYTES)
		return refuse(result, API_ERROR_BODY_TOO_LARGE, "A health statement is at most %d bytes.",
		              HEALTH_MAX_BYTES);
	int rc = health_parse_note(p->body, p->len, s, &p->note);
	if (rc == DIRAUTH_ERR_NOMEM)
		return refuse(result, API_ERROR_INTERNAL, "Out of memory.");
	if (rc)
		return refuse(result, API_ERROR_MALFORMED,
		              "The body is not a health statement note (coarse classes only, no figures): %s",
		              dirauth_strerror(rc));
	if ((error = check_namespace(p, s->namespace_name, &namespace_index, result)) ||
	    (error = read_clock(p, result)) || (error = current_registration(p, &r, result)) ||
	    (error = check_provider_enrolled(p, &r.provider, namespace_index, result)))
		goto done;
	rc = health_verify_note(p->note, s, &r);
	if (rc == DIRAUTH_ERR_UNKNOWN_KEY)
		error = refuse(
		    result, API_ERROR_WRONG_SIGNER,
		    s->signer == HEALTH_SIGNER_ENDPOINT
		        ? "The statement is not signed by the endpoint's own key, or the endpoint names none."
		        : "The statement is not signed by the service's provider key.");
	else if (rc == DIRAUTH_ERR_SIGNATURE)
		error = refuse(result, API_ERROR_BAD_SIGNATURE,
		               "The signature by the %s key does not verify.", health_signer_name(s->signer));
	else if (rc)
		error = refuse(result, API_ERROR_INTERNAL, "The signature could not be checked: %s",
		               dirauth_strerror(rc));
	if (error)
		goto done;
	/* A statement learned from a peer was within the skew where it was posted; it may be old by
	 * now (the rule judges its freshness), but never from the future. */
	uint64_t skew = config->bounds.clock_skew_seconds;
	if (s->issued_at > p->now + skew ||
	    (!p->from_peer && p->now > skew && s->issued_at < p->now - skew)) {
		error = refuse(
		    result, API_ERROR_OUTSIDE_CLOCK_SKEW,
		    "The statement is issued at %llu; it is now %llu and the allowed skew is %llu s.",
		    (unsigned long long)s->issued_at, (unsigned long long)p->now, (unsigned long long)skew);
		goto done;
	}
	if (crypto_sha256(p->body, p->len, p->digest) != 0) {
		error = refuse(result, API_ERROR_INTERNAL, "The note could not be hashed.");
		goto done;
	}
	p->store_health = (struct store_health){
	    .namespace_name = s->namespace_name,
	    .service_id = s->service_id,
	    .endpoint_id = s->endpoint_id,
	    .issued_at = s->issued_at,
	    .sequence = s->sequence,
	    .digest = p->digest,
	    .note = p->body,
	    .note_len = p->len,
	    .epoch = schedule_destination_epoch(&config->epoch, p->now),
	};
done:
	registration_clear(&r);
	return error;
}

static enum api_error prepare_revocation(struct lifecycle_pending *p)
{
	struct submit_result *result = &p->result;
	const struct config *config = p->context.config;
	struct revocation *r = &p->revocation;
	enum api_error error;
	int namespace_index;
	char owner[STORE_NAME_MAX + 1];
	if (p->len > REVOCATION_MAX_BYTES)
		return refuse(result, API_ERROR_BODY_TOO_LARGE, "A revocation is at most %d bytes.",
		              REVOCATION_MAX_BYTES);
	if ((error = parse_one_signature(p, &p->note, result)))
		return error;
	int rc = revocation_parse(p->note->text, p->note->text_len, r);
	if (rc)
		return refuse(result, API_ERROR_MALFORMED, "The body is not a revocation note: %s",
		              dirauth_strerror(rc));
	if ((error = check_namespace(p, r->namespace_name, &namespace_index, result)) ||
	    (error = check_service_known(p, r->namespace_name, r->service_id, owner, result)))
		return error;
	if (r->has_endpoint) {
		uint8_t service_id[SERVICE_ID_SIZE];
		rc = store_endpoint_service(p->context.store, r->endpoint_id, service_id);
		if (rc == DIRAUTH_ERR_NOT_FOUND ||
		    (rc == 0 && memcmp(service_id, r->service_id, SERVICE_ID_SIZE) != 0))
			return refuse(result, API_ERROR_UNKNOWN_ENDPOINT,
			              "The endpoint was never registered under this service here.");
		if (rc)
			return refuse(result, API_ERROR_INTERNAL, "The store failed: %s",
			              dirauth_strerror(rc));
	}
	if (r->signer == REVOCATION_SIGNER_OPERATOR) {
		if (!config_operator_is_listed(config, &r->key))
			return refuse(result, API_ERROR_WRONG_SIGNER,
			              "The key '%s' is not one of this authority's operator keys.",
			              r->key.name);
	} else {
		if (strcmp(r->key.name, owner) != 0 || !config_provider_find(config, &r->key))
			return refuse(
			    result, API_ERROR_WRONG_SIGNER,
			    "The key '%s' is not the service's enrolled provider key: a provider revokes "
			    "only its own services and endpoints.",
			    r->key.name);
		if ((error = check_provider_enrolled(p, &r->key, namespace_index, result)))
			return error;
	}
	if ((error = check_signature(p->note, &r->key, result)) || (error = read_clock(p, result)))
		return error;
	if (crypto_sha256(p->body, p->len, p->digest) != 0)
		return refuse(result, API_ERROR_INTERNAL, "The note could not be hashed.");
	p->store_revocation = (struct store_revocation){
	    .namespace_name = r->namespace_name,
	    .service_id = r->service_id,
	    .endpoint_id = r->has_endpoint ? r->endpoint_id : NULL,
	    .key = &r->key,
	    .sequence = r->sequence,
	    .in_order = !p->from_peer,
	    .digest = p->digest,
	    .note = p->body,
	    .note_len = p->len,
	    .epoch = schedule_destination_epoch(&config->epoch, p->now),
	};
	return API_ERROR_NONE;
}

static enum api_error prepare_deregistration(struct lifecycle_pending *p)
{
	struct submit_result *result = &p->result;
	const struct config *config = p->context.config;
	struct deregistration *d = &p->deregistration;
	enum api_error error;
	int namespace_index;
	char owner[STORE_NAME_MAX + 1], why[SIGNER_HEALTH_DETAIL_MAX];
	if (p->len > DEREGISTRATION_MAX_BYTES)
		return refuse(result, API_ERROR_BODY_TOO_LARGE, "A deregistration is at most %d bytes.",
		              DEREGISTRATION_MAX_BYTES);
	if ((error = parse_one_signature(p, &p->note, result)))
		return error;
	int rc = deregistration_parse(p->note->text, p->note->text_len, d);
	if (rc)
		return refuse(result, API_ERROR_MALFORMED, "The body is not a deregistration note: %s",
		              dirauth_strerror(rc));
	if ((error = check_namespace(p, d->namespace_name, &namespace_index, result)) ||
	    (error = check_service_known(p, d->namespace_name, d->service_id, owner, result)))
		return error;
	if (!config_provider_find(config, &d->provider))
		return refuse(result, API_ERROR_UNKNOWN_PROVIDER, "The provider key '%s' is not enrolled.",
		              d->provider.name);
	if (strcmp(d->provider.name, owner) != 0)
		return refuse(result, API_ERROR_WRONG_SIGNER, "The key '%s' is not the service's provider.",
		              d->provider.name);
	if ((error = check_signature(p->note, &d->provider, result)) || (error = read_clock(p, result)))
		return error;
	/* Nothing is stored that cannot get its receipt now. */
	if (signer_health_check(p->context.signer_health, why, sizeof why) != 0)
		return refuse(result, API_ERROR_UNAVAILABLE, "Nothing was stored: %s.", why);
	if (crypto_sha256(p->body, p->len, p->digest) != 0)
		return refuse(result, API_ERROR_INTERNAL, "The note could not be hashed.");
	p->store_deregistration = (struct store_deregistration){
	    .namespace_name = d->namespace_name,
	    .service_id = d->service_id,
	    .sequence = d->sequence,
	    .digest = p->digest,
	    .note = p->body,
	    .note_len = p->len,
	    .epoch = schedule_destination_epoch(&config->epoch, p->now),
	};
	return API_ERROR_NONE;
}

static enum api_error pending_prepare(struct lifecycle_pending *p)
{
	switch (p->kind) {
	case STATEMENT_HEALTH:
		return prepare_health(p);
	case STATEMENT_REVOCATION:
		return prepare_revocation(p);
	case STATEMENT_DEREGISTRATION:
		return prepare_deregistration(p);
	}
	return refuse(&p->result, API_ERROR_INTERNAL, "Unknown statement.");
}

/* ---- the store and the answer ---- */

static int pending_submit_async(struct lifecycle_pending *p, store_submission_done done)
{
	switch (p->kind) {
	case STATEMENT_HEALTH:
		return store_health_submit_async(p->context.store, &p->store_health, done, p);
	case STATEMENT_REVOCATION:
		return store_revocation_submit_async(p->context.store, &p->store_revocation, done, p);
	case STATEMENT_DEREGISTRATION:
		return store_deregistration_submit_async(p->context.store, &p->store_deregistration, done, p);
	}
	return DIRAUTH_ERR_INTERNAL;
}

static int pending_submit(struct lifecycle_pending *p, uint64_t *stamp)
{
	switch (p->kind) {
	case STATEMENT_HEALTH:
		return store_health_submit(p->context.store, &p->store_health, stamp);
	case STATEMENT_REVOCATION:
		return store_revocation_submit(p->context.store, &p->store_revocation, stamp);
	case STATEMENT_DEREGISTRATION:
		return store_deregistration_submit(p->context.store, &p->store_deregistration, stamp);
	}
	return DIRAUTH_ERR_INTERNAL;
}

/* After the store answered rc: what its refusals mean, or, once durable, the answer (health and
 * revocations) or the receipt's text (deregistrations). */
static enum api_error pending_stored(struct lifecycle_pending *p, int rc, uint64_t stamp)
{
	struct submit_result *result = &p->result;
	switch (rc) {
	case 0:
		break;
	case DIRAUTH_ERR_ROLLBACK:
		if (p->kind == STATEMENT_HEALTH)
			return refuse(result, API_ERROR_REPLAYED,
			              "The sequence %llu is not above the last accepted for this endpoint.",
			              (unsigned long long)p->health.sequence);
		if (p->kind == STATEMENT_REVOCATION)
			return refuse(
			    result, API_ERROR_REPLAYED,
			    "The sequence %llu of '%s' was accepted before, or is not above the last "
			    "accepted from that key.",
			    (unsigned long long)p->revocation.sequence, p->revocation.key.name);
		return refuse(
		    result, API_ERROR_REPLAYED,
		    "The sequence %llu is below the service's highest registration sequence, or not "
		    "above an earlier deregistration's.",
		    (unsigned long long)p->deregistration.sequence);
	case DIRAUTH_ERR_EXISTS:
		return refuse(result, API_ERROR_REVOKED, "The %s is revoked already.",
		              p->revocation.has_endpoint ? "endpoint" : "service");
	case DIRAUTH_ERR_NOT_FOUND:
		return refuse(result, API_ERROR_UNKNOWN_SERVICE,
		              "The service is not registered in this namespace here.");
	case DIRAUTH_ERR_FULL:
		return refuse(result, API_ERROR_STORE_FULL, "The store is full; nothing was stored.");
	case DIRAUTH_ERR_UNAVAILABLE:
		return refuse(result, API_ERROR_UNAVAILABLE, "The store is not accepting submissions.");
	default:
		return refuse(result, API_ERROR_INTERNAL, "The store failed: %s", dirauth_strerror(rc));
	}
	if (p->kind != STATEMENT_DEREGISTRATION) {
		char hex[65];
		hex_encode(p->digest, 32, hex);
		if (buffer_appendf(&result->receipt,
		                   "{\"status\":\"accepted\",\"sha256\":\"%s\",\"epoch\":%llu}", hex,
		                   (unsigned long long)stamp) != 0)
			return refuse(result, API_ERROR_INTERNAL, "Out of memory.");
		return API_ERROR_NONE;
	}
	uint64_t accepted_at;
	if (clock_now(p->context.clock, &accepted_at) != 0 || accepted_at < p->now)
		accepted_at = p->now;
	struct deregistration_receipt receipt;
	memset(&receipt, 0, sizeof receipt);
	snprintf(receipt.authority, sizeof receipt.authority, "%s", p->context.config->authority_name);
	snprintf(receipt.namespace_name, sizeof receipt.namespace_name, "%s",
	         p->deregistration.namespace_name);
	memcpy(receipt.service_id, p->deregistration.service_id, SERVICE_ID_SIZE);
	receipt.sequence = p->deregistration.sequence;
	memcpy(receipt.deregistration_digest, p->digest, 32);
	receipt.accepted_at = accepted_at;
	/* The stamp is the first epoch whose view lacks the service. */
	receipt.last_listed_epoch = stamp > 0 ? stamp - 1 : 0;
	if ((rc = deregistration_receipt_encode(&receipt, &p->receipt_text)) != 0)
		return refuse(
		    result, API_ERROR_STORED_WITHOUT_RECEIPT,
		    "The deregistration was stored, but its receipt could not be built (%s). Send a "
		    "deregistration with a higher sequence to get a receipt.",
		    dirauth_strerror(rc));
	return API_ERROR_NONE;
}

static enum api_error pending_signed(struct lifecycle_pending *p, int rc,
                                     const struct note_signature *signature, const char *why)
{
	struct submit_result *result = &p->result;
	signer_health_note(p->context.signer_health, rc, why);
	if (rc == 0)
		rc = note_format(p->receipt_text.data, p->receipt_text.len, signature, 1, &result->receipt);
	if (rc)
		return refuse(
		    result, API_ERROR_STORED_WITHOUT_RECEIPT,
		    "The deregistration was stored, but the signer did not sign its receipt (%s). Send "
		    "a deregistration with a higher sequence to get a receipt.",
		    why && why[0] ? why : dirauth_strerror(rc));
	return API_ERROR_NONE;
}

static struct lifecycle_pending *pending_new(const struct submit_context *context, enum statement_kind kind,
                                             const uint8_t *body, size_t len)
{
	struct lifecycle_pending *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->context = *context;
	p->kind = kind;
	p->body = body ? body : (const uint8_t *)"";
	p->len = len;
	buffer_init(&p->receipt_text);
	buffer_init(&p->result.receipt);
	return p;
}

/* Hands the result over (the answer buffer moves to the caller) and frees p. */
static void pending_finish(struct lifecycle_pending *p, struct submit_result *out)
{
	*out = p->result;
	buffer_init(&p->result.receipt);
	if (out->error != API_ERROR_NONE)
		buffer_free(&out->receipt);
	note_free(p->note);
	buffer_free(&p->receipt_text);
	free(p);
}

static enum api_error submit_waiting(struct lifecycle_pending *p, struct submit_result *result)
{
	uint64_t stamp = 0;
	enum api_error error = pending_prepare(p);
	if (error == API_ERROR_NONE) {
		int rc = pending_submit(p, &stamp);
		error = pending_stored(p, rc, stamp);
	}
	if (error == API_ERROR_NONE && p->kind == STATEMENT_DEREGISTRATION) {
		struct note_signature signature;
		char why[SIGNER_DETAIL_MAX + 1] = "";
		int rc = signer_client_sign(p->context.signer, SIGNER_OP_SIGN_DEREGISTRATION_RECEIPT,
		                            p->receipt_text.data, p->receipt_text.len, 0, NULL, 0, &signature,
		                            why, sizeof why);
		error = pending_signed(p, rc, &signature, why);
	}
	pending_finish(p, result);
	return error;
}

static void pending_done(struct lifecycle_pending *p)
{
	struct submit_result result;
	submit_done done = p->done;
	void *context = p->done_context;
	pending_finish(p, &result);
	done(context, &result);
}

static void on_signed(void *context, int rc, const struct note_signature *signature, const char *why)
{
	struct lifecycle_pending *p = context;
	pending_signed(p, rc, signature, why);
	pending_done(p);
}

static void on_stored(void *context, int rc, uint64_t stamp)
{
	struct lifecycle_pending *p = context;
	if (pending_stored(p, rc, stamp) != API_ERROR_NONE || p->kind != STATEMENT_DEREGISTRATION) {
		pending_done(p);
		return;
	}
	rc = signer_client_sign_async(p->context.signer, SIGNER_OP_SIGN_DEREGISTRATION_RECEIPT,
	                              p->receipt_text.data, p->receipt_text.len, on_signed, p);
	if (rc != 0) {
		pending_signed(p, rc, NULL,
		               rc == DIRAUTH_ERR_FULL ? "too many receipts waiting for the signer" : "");
		pending_done(p);
	}
}

static enum api_error submit_started(struct lifecycle_pending *p, submit_done done, void *done_context,
                                     struct submit_result *result)
{
	p->done = done;
	p->done_context = done_context;
	enum api_error error = pending_prepare(p);
	if (error == API_ERROR_NONE) {
		int rc = pending_submit_async(p, on_stored);
		if (rc == 0)
			return API_ERROR_NONE; /* on_stored carries it on */
		error = pending_stored(p, rc, 0);
	}
	pending_finish(p, result);
	return error;
}

static enum api_error out_of_memory(struct submit_result *result)
{
	buffer_init(&result->receipt);
	return refuse(result, API_ERROR_INTERNAL, "Out of memory.");
}

/* ---- the entry points ---- */

enum api_error submit_health(const struct submit_context *context, const uint8_t *body, size_t len,
                             struct submit_result *result)
{
	struct lifecycle_pending *p = pending_new(context, STATEMENT_HEALTH, body, len);
	return p ? submit_waiting(p, result) : out_of_memory(result);
}

enum api_error submit_health_async(const struct submit_context *context, const uint8_t *body, size_t len,
                                   submit_done done, void *done_context, struct submit_result *result)
{
	struct lifecycle_pending *p = pending_new(context, STATEMENT_HEALTH, body, len);
	return p ? submit_started(p, done, done_context, result) : out_of_memory(result);
}

enum api_error submit_revocation(const struct submit_context *context, const uint8_t *body, size_t len,
                                 struct submit_result *result)
{
	struct lifecycle_pending *p = pending_new(context, STATEMENT_REVOCATION, body, len);
	return p ? submit_waiting(p, result) : out_of_memory(result);
}

enum api_error submit_revocation_async(const struct submit_context *context, const uint8_t *body, size_t len,
                                       submit_done done, void *done_context, struct submit_result *result)
{
	struct lifecycle_pending *p = pending_new(context, STATEMENT_REVOCATION, body, len);
	return p ? submit_started(p, done, done_context, result) : out_of_memory(result);
}

enum api_error submit_peer_revocation(const struct submit_context *context, const uint8_t *note, size_t len,
                                      struct submit_result *result)
{
	struct lifecycle_pending *p = pending_new(context, STATEMENT_REVOCATION, note, len);
	if (!p)
		return out_of_memory(result);
	p->from_peer = true;
	return submit_waiting(p, result);
}

enum api_error submit_check_peer_revocation(const struct submit_context *context, const uint8_t *note,
                                            size_t len, struct submit_result *result)
{
	struct lifecycle_pending *p = pending_new(context, STATEMENT_REVOCATION, note, len);
	if (!p)
		return out_of_memory(result);
	p->from_peer = true;
	enum api_error error = pending_prepare(p);
	pending_finish(p, result);
	return error;
}

enum api_error submit_peer_health(const struct submit_context *context, const uint8_t *note, size_t len,
                                  struct submit_result *result)
{
	struct lifecycle_pending *p = pending_new(context, STATEMENT_HEALTH, note, len);
	if (!p)
		return out_of_memory(result);
	p->from_peer = true;
	return submit_waiting(p, result);
}

enum api_error submit_deregistration(const struct submit_context *context, const uint8_t *body, size_t len,
                                     struct submit_result *result)
{
	struct lifecycle_pending *p = pending_new(context, STATEMENT_DEREGISTRATION, body, len);
	return p ? submit_waiting(p, result) : out_of_memory(result);
}

enum api_error submit_deregistration_async(const struct submit_context *context, const uint8_t *body,
                                           size_t len, submit_done done, void *done_context,
                                           struct submit_result *result)
{
	struct lifecycle_pending *p = pending_new(context, STATEMENT_DEREGISTRATION, body, len);
	return p ? submit_started(p, done, done_context, result) : out_of_memory(result);
}

enum api_error submit_registration_withdrawal(const struct submit_context *context,
                                              const struct registration *r)
{
	enum store_withdrawal withdrawal = STORE_WITHDRAWN_NONE;
	uint8_t *ids = malloc(r->endpoint_count * ENDPOINT_ID_SIZE + 1);
	if (!ids)
		return API_ERROR_INTERNAL;
	for (size_t i = 0; i < r->endpoint_count; i++)
		memcpy(ids + i * ENDPOINT_ID_SIZE, r->endpoints[i].endpoint_id, ENDPOINT_ID_SIZE);
	int rc = store_registration_withdrawn(context->store, r->namespace_name, r->service_id, r->sequence,
	                                      ids, r->endpoint_count, &withdrawal);
	free(ids);
	if (rc == 0 && withdrawal == STORE_WITHDRAWN_REVOKED)
		return API_ERROR_REVOKED;
	if (rc == 0 && withdrawal == STORE_WITHDRAWN_DEREGISTERED)
		return API_ERROR_DEREGISTERED;
	return API_ERROR_INTERNAL;
}
