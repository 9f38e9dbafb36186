/*
 * statements.c: the kinds health statement, revocation and deregistration: their checks, their
 * store records and their answers (statements.h).
 *
 * The three kinds are entries of intake's table (pending.h), which registrations take too: a
 * statement is checked in the caller's thread (every check that needs no store write, the
 * signatures included, so that the thread pool spreads them), then submitted to the store's
 * committer, which judges sequences and targets in the same transaction that keeps it; a
 * deregistration then has its receipt signed. This file holds each kind's checks, its store
 * record and what the store's answers mean for it (its struct intake_kind). Each check
 * refuses with its own API error and a sentence naming what was wrong; the order puts what can be
 * read from the document before who signed it, and who may sign before whether the signature
 * verifies, so that a statement by a stranger's key is "wrong_signer" and "bad_signature" is kept
 * for the right key whose signature fails. That holds in a public namespace; in a private one
 * (and one not served) every refusal up to the signature is "unknown_namespace", as for
 * registrations (pending.h, struct intake_namespace).
 */
#include "server/intake/statements.h"

#include "server/intake/kinds.h"
#include "server/intake/pending.h"

#include "crypto/crypto.h"
#include "schema/deregistration.h"
#include "schema/deregistration_receipt.h"
#include "schema/encoding.h"
#include "base/error.h"
#include "schema/health.h"
#include "schema/note.h"
#include "schema/revocation.h"
#include "schedule/schedule.h"
#include "server/store/registrations.h"
#include "server/store/statements.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One statement on its way (pending.h): the parsed document of its kind and the store's record. */
struct statement_pending {
	struct intake_pending pending; /* first: the hooks convert back from it */
	struct health_statement health;
	struct revocation revocation;
	struct deregistration deregistration;
	struct store_health store_health;
	struct store_revocation store_revocation;
	struct store_deregistration store_deregistration;
};

static struct statement_pending *statement_of(struct intake_pending *p)
{
	return (struct statement_pending *)p;
}

/* ---- the checks ---- */

/* Whether the namespace takes lifecycle statements (404 lifecycle_disabled); one not served is
 * refused as such (404 unknown_namespace). */
static enum api_error check_lifecycle(const struct intake_pending *p, const struct intake_namespace *ns,
                                      struct submit_result *result)
{
	if (ns->index < 0)
		return intake_refuse(result, API_ERROR_UNKNOWN_NAMESPACE,
		                     "The namespace '%s' is not served here.", ns->name);
	if (!p->context.config->namespaces[ns->index].lifecycle)
		return intake_refuse(
		    result, API_ERROR_LIFECYCLE_DISABLED,
		    "The namespace '%s' takes no %ss (it is not configured with lifecycle: true).", ns->name,
		    p->kind->document);
	return API_ERROR_NONE;
}

/* Fills *ns for the namespace named (pending.h); a public one must take lifecycle statements at
 * once. */
static enum api_error judge_namespace(const struct intake_pending *p, const char *name,
                                      struct intake_namespace *ns, struct submit_result *result)
{
	intake_namespace_judge(p->context.config, name, ns);
	return ns->hidden ? API_ERROR_NONE : check_lifecycle(p, ns, result);
}

/* The service was registered in this namespace (404 unknown_service); its owner's key name. */
static enum api_error check_service_known(const struct intake_pending *p, const char *namespace_name,
                                          const uint8_t service_id[SERVICE_ID_SIZE],
                                          char owner[STORE_NAME_MAX + 1], struct submit_result *result)
{
	char owner_namespace[STORE_NAME_MAX + 1];
	int rc = store_service_owner(p->context.store, service_id, owner_namespace, owner);
	if (rc == DIRAUTH_ERR_NOT_FOUND || (rc == 0 && strcmp(owner_namespace, namespace_name) != 0))
		return intake_refuse(result, API_ERROR_UNKNOWN_SERVICE,
		                     "The service is not registered in the namespace '%s' here.",
		                     namespace_name);
	if (rc)
		return intake_refuse(result, API_ERROR_INTERNAL, "The store failed: %s",
		                     dirauth_strerror(rc));
	return API_ERROR_NONE;
}

/* The note parses with exactly one signature line (400). */
static enum api_error parse_one_signature(const struct intake_pending *p, struct note **note,
                                          struct submit_result *result)
{
	int rc = note_parse(p->body, p->len, note);
	if (rc == DIRAUTH_ERR_NOMEM)
		return intake_refuse(result, API_ERROR_INTERNAL, "Out of memory.");
	if (rc || (*note)->signature_count != 1)
		return intake_refuse(result, API_ERROR_MALFORMED,
		                     "The body is not a %s note with one signature: %s", p->kind->document,
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
		return intake_refuse(result, API_ERROR_BAD_SIGNATURE,
		                     "The signature by '%s' does not verify.", key->name);
	if (rc == DIRAUTH_ERR_UNKNOWN_KEY || rc == DIRAUTH_ERR_THRESHOLD)
		return intake_refuse(result, API_ERROR_WRONG_SIGNER,
		                     "The note is not signed by '%s', whose key it names.", key->name);
	if (rc)
		return intake_refuse(result, API_ERROR_INTERNAL, "The signature could not be checked: %s",
		                     dirauth_strerror(rc));
	return API_ERROR_NONE;
}

/* The provider key is enrolled (403 unknown_provider) and for this namespace (403
 * namespace_not_allowed). */
static enum api_error check_provider_enrolled(const struct intake_pending *p, const struct note_verifier *key,
                                              const struct intake_namespace *ns, struct submit_result *result)
{
	const struct config_provider *provider = config_provider_find(p->context.config, key);
	if (!provider)
		return intake_refuse(result, API_ERROR_UNKNOWN_PROVIDER,
		                     "The provider key '%s' is not enrolled.", key->name);
	if (ns->index < 0 || !(provider->namespace_mask & ((uint64_t)1 << ns->index)))
		return intake_refuse(result, API_ERROR_NAMESPACE_NOT_ALLOWED,
		                     "The provider '%s' is not enrolled for the namespace '%s'.", key->name,
		                     ns->name);
	return API_ERROR_NONE;
}

/* The service's current registration, which a health statement speaks about: registered in
 * the statement's namespace, unexpired, not withdrawn, listing the endpoint; all of it read from
 * the store in one read transaction, before the committer's own judgment. */
static enum api_error current_registration(struct intake_pending *p, struct registration *r,
                                           struct submit_result *result)
{
	const struct health_statement *s = &statement_of(p)->health;
	struct store_service_state state;
	struct buffer note;
	struct note *parsed = NULL;
	buffer_init(&note);
	int rc = store_service_state(p->context.store, s->service_id, s->endpoint_id, 1, &state, &note);
	if (rc == DIRAUTH_ERR_NOT_FOUND ||
	    (rc == 0 && strcmp(state.namespace_name, s->namespace_name) != 0)) {
		buffer_free(&note);
		return intake_refuse(result, API_ERROR_UNKNOWN_SERVICE,
		                     "The service is not registered in the namespace '%s' here.",
		                     s->namespace_name);
	}
	if (rc) {
		buffer_free(&note);
		return intake_refuse(result, API_ERROR_INTERNAL, "The store failed: %s",
		                     dirauth_strerror(rc));
	}
	if (!state.current)
		rc = DIRAUTH_ERR_NOT_FOUND;
	if (rc == 0)
		rc = registration_parse_note(note.data, note.len, r, &parsed);
	note_free(parsed);
	buffer_free(&note);
	if (rc == DIRAUTH_ERR_NOT_FOUND)
		return intake_refuse(result, API_ERROR_UNKNOWN_SERVICE,
		                     "The service has no current registration here.");
	if (rc)
		return intake_refuse(result, API_ERROR_INTERNAL, "The registration could not be read: %s",
		                     dirauth_strerror(rc));
	if (r->expires <= p->now)
		return intake_refuse(result, API_ERROR_UNKNOWN_SERVICE,
		                     "The service's registration expired at %llu.",
		                     (unsigned long long)r->expires);
	if (state.withdrawal == STORE_WITHDRAWN_REVOKED)
		return intake_refuse(result, API_ERROR_REVOKED, "The service or the endpoint is revoked.");
	if (state.withdrawal == STORE_WITHDRAWN_DEREGISTERED)
		return intake_refuse(result, API_ERROR_UNKNOWN_SERVICE, "The service was deregistered.");
	if (!registration_find_endpoint(r, s->endpoint_id))
		return intake_refuse(
		    result, API_ERROR_UNKNOWN_ENDPOINT,
		    "The service's current registration (sequence %llu) lists no such endpoint.",
		    (unsigned long long)r->sequence);
	return API_ERROR_NONE;
}

/* Up to the statement's signature: the service's current registration lists the endpoint, its
 * provider is enrolled for the namespace, and the provider's or the endpoint's key signed it. */
static enum api_error health_signed(struct intake_pending *p, const struct intake_namespace *ns,
                                    struct registration *r, struct submit_result *result)
{
	const struct health_statement *s = &statement_of(p)->health;
	enum api_error error;
	if ((error = current_registration(p, r, result)) ||
	    (error = check_provider_enrolled(p, &r->provider, ns, result)))
		return error;
	int rc = health_verify_note(p->note, s, r);
	if (rc == DIRAUTH_ERR_UNKNOWN_KEY)
		return intake_refuse(
		    result, API_ERROR_WRONG_SIGNER,
		    s->signer == HEALTH_SIGNER_ENDPOINT
		        ? "The statement is not signed by the endpoint's own key, or the endpoint names none."
		        : "The statement is not signed by the service's provider key.");
	if (rc == DIRAUTH_ERR_SIGNATURE)
		return intake_refuse(result, API_ERROR_BAD_SIGNATURE,
		                     "The signature by the %s key does not verify.",
		                     health_signer_name(s->signer));
	if (rc)
		return intake_refuse(result, API_ERROR_INTERNAL, "The signature could not be checked: %s",
		                     dirauth_strerror(rc));
	return API_ERROR_NONE;
}

static size_t health_max_bytes(const struct config *config)
{
	(void)config;
	return HEALTH_MAX_BYTES;
}

static enum api_error health_parse_statement(struct intake_pending *p)
{
	int rc = health_parse_note(p->body, p->len, &statement_of(p)->health, &p->note);
	if (rc == DIRAUTH_ERR_NOMEM)
		return intake_refuse(&p->result, API_ERROR_INTERNAL, "Out of memory.");
	if (rc)
		return intake_refuse(
		    &p->result, API_ERROR_MALFORMED,
		    "The body is not a health statement note (coarse classes only, no figures): %s",
		    dirauth_strerror(rc));
	return API_ERROR_NONE;
}

static enum api_error health_authorize(struct intake_pending *p)
{
	struct submit_result *result = &p->result;
	const struct health_statement *s = &statement_of(p)->health;
	struct registration r;
	struct intake_namespace ns;
	enum api_error error;
	memset(&r, 0, sizeof r);
	if (!(error = judge_namespace(p, s->namespace_name, &ns, result)) && !(error = intake_now(p)) &&
	    !(error = intake_namespace_hide(&ns, health_signed(p, &ns, &r, result), result)))
		error = check_lifecycle(p, &ns, result);
	registration_clear(&r);
	return error;
}

/* Issued-at within the clock skew of now, either way; one learned from a peer was within the
 * skew where it was posted, and may be old by now (the rule judges its freshness), but never
 * from the future. */
static enum api_error health_check(struct intake_pending *p)
{
	const struct health_statement *s = &statement_of(p)->health;
	uint64_t skew = p->context.config->bounds.clock_skew_seconds;
	if (s->issued_at > p->now + skew ||
	    (!p->rules->stale_statements && p->now > skew && s->issued_at < p->now - skew))
		return intake_refuse(
		    &p->result, API_ERROR_OUTSIDE_CLOCK_SKEW,
		    "The statement is issued at %llu; it is now %llu and the allowed skew is %llu s.",
		    (unsigned long long)s->issued_at, (unsigned long long)p->now, (unsigned long long)skew);
	return API_ERROR_NONE;
}

static int health_store(struct intake_pending *p, store_submission_done done, void *context)
{
	const struct health_statement *s = &statement_of(p)->health;
	statement_of(p)->store_health = (struct store_health){
	    .namespace_name = s->namespace_name,
	    .service_id = s->service_id,
	    .endpoint_id = s->endpoint_id,
	    .issued_at = s->issued_at,
	    .sequence = s->sequence,
	    .digest = p->digest,
	    .note = p->body,
	    .note_len = p->len,
	    .epoch = p->epoch,
	};
	return store_health_submit_async(p->context.store, &statement_of(p)->store_health, done, context);
}

/* Up to the revocation's signature: the service (and the endpoint) was registered here, the key
 * may revoke it (one of this authority's operator keys, or the service's own provider, enrolled
 * for the namespace), and it signed the note. */
static enum api_error revocation_signed(struct intake_pending *p, const struct intake_namespace *ns,
                                        struct submit_result *result)
{
	const struct config *config = p->context.config;
	const struct revocation *r = &statement_of(p)->revocation;
	char owner[STORE_NAME_MAX + 1];
	enum api_error error;
	if ((error = check_service_known(p, r->namespace_name, r->service_id, owner, result)))
		return error;
	if (r->has_endpoint) {
		/* A provider revokes only an endpoint it registered here. One learned from a peer may
		 * name an endpoint registered only there (and revoked there before this authority saw
		 * the registration): the service's provider signed it, which is all a revocation needs,
		 * and refusing it would keep this authority from the others' header (consensus.md: a
		 * revocation cannot be held back). An endpoint of another service is refused either way. */
		uint8_t service_id[SERVICE_ID_SIZE];
		int rc = store_endpoint_service(p->context.store, r->endpoint_id, service_id);
		if ((rc == DIRAUTH_ERR_NOT_FOUND && !p->rules->endpoints_elsewhere) ||
		    (rc == 0 && memcmp(service_id, r->service_id, SERVICE_ID_SIZE) != 0))
			return intake_refuse(result, API_ERROR_UNKNOWN_ENDPOINT,
			                     "The endpoint was never registered under this service here.");
		if (rc == DIRAUTH_ERR_NOT_FOUND)
			rc = 0;
		if (rc)
			return intake_refuse(result, API_ERROR_INTERNAL, "The store failed: %s",
			                     dirauth_strerror(rc));
	}
	if (r->signer == REVOCATION_SIGNER_OPERATOR) {
		if (!config_operator_is_listed(config, &r->key))
			return intake_refuse(result, API_ERROR_WRONG_SIGNER,
			                     "The key '%s' is not one of this authority's operator keys.",
			                     r->key.name);
	} else {
		if (strcmp(r->key.name, owner) != 0 || !config_provider_find(config, &r->key))
			return intake_refuse(
			    result, API_ERROR_WRONG_SIGNER,
			    "The key '%s' is not the service's enrolled provider key: a provider revokes "
			    "only its own services and endpoints.",
			    r->key.name);
		if ((error = check_provider_enrolled(p, &r->key, ns, result)))
			return error;
	}
	return check_signature(p->note, &r->key, result);
}

static size_t revocation_max_bytes(const struct config *config)
{
	(void)config;
	return REVOCATION_MAX_BYTES;
}

static enum api_error revocation_parse_statement(struct intake_pending *p)
{
	enum api_error error = parse_one_signature(p, &p->note, &p->result);
	if (error)
		return error;
	int rc = revocation_parse(p->note->text, p->note->text_len, &statement_of(p)->revocation);
	if (rc)
		return intake_refuse(&p->result, API_ERROR_MALFORMED, "The body is not a revocation note: %s",
		                     dirauth_strerror(rc));
	return API_ERROR_NONE;
}

static enum api_error revocation_authorize(struct intake_pending *p)
{
	struct intake_namespace ns;
	enum api_error error;
	if ((error = judge_namespace(p, statement_of(p)->revocation.namespace_name, &ns, &p->result)) ||
	    (error = intake_namespace_hide(&ns, revocation_signed(p, &ns, &p->result), &p->result)))
		return error;
	return check_lifecycle(p, &ns, &p->result);
}

/* There is no time check: a revocation signed long ago (kept by a provider for the day its key
 * is compromised) is as good as a new one. The clock names its epoch. */
static enum api_error statement_now(struct intake_pending *p)
{
	return intake_now(p);
}

static int revocation_store(struct intake_pending *p, store_submission_done done, void *context)
{
	const struct revocation *r = &statement_of(p)->revocation;
	statement_of(p)->store_revocation = (struct store_revocation){
	    .namespace_name = r->namespace_name,
	    .service_id = r->service_id,
	    .endpoint_id = r->has_endpoint ? r->endpoint_id : NULL,
	    .key = &r->key,
	    .sequence = r->sequence,
	    .in_order = p->rules->sequences_in_order,
	    .digest = p->digest,
	    .note = p->body,
	    .note_len = p->len,
	    .epoch = p->epoch,
	};
	return store_revocation_submit_async(p->context.store, &statement_of(p)->store_revocation, done,
	                                     context);
}

/* Up to the deregistration's signature: the service was registered here, by the provider whose
 * key, enrolled for the namespace, signed the note. */
static enum api_error deregistration_signed(struct intake_pending *p, const struct intake_namespace *ns,
                                            struct submit_result *result)
{
	const struct deregistration *d = &statement_of(p)->deregistration;
	char owner[STORE_NAME_MAX + 1];
	enum api_error error;
	if ((error = check_service_known(p, d->namespace_name, d->service_id, owner, result)) ||
	    (error = check_provider_enrolled(p, &d->provider, ns, result)))
		return error;
	if (strcmp(d->provider.name, owner) != 0)
		return intake_refuse(result, API_ERROR_WRONG_SIGNER,
		                     "The key '%s' is not the service's provider.", d->provider.name);
	return check_signature(p->note, &d->provider, result);
}

static size_t deregistration_max_bytes(const struct config *config)
{
	(void)config;
	return DEREGISTRATION_MAX_BYTES;
}

static enum api_error deregistration_parse_statement(struct intake_pending *p)
{
	enum api_error error = parse_one_signature(p, &p->note, &p->result);
	if (error)
		return error;
	int rc = deregistration_parse(p->note->text, p->note->text_len, &statement_of(p)->deregistration);
	if (rc)
		return intake_refuse(&p->result, API_ERROR_MALFORMED,
		                     "The body is not a deregistration note: %s", dirauth_strerror(rc));
	return API_ERROR_NONE;
}

static enum api_error deregistration_authorize(struct intake_pending *p)
{
	struct intake_namespace ns;
	enum api_error error;
	if ((error = judge_namespace(p, statement_of(p)->deregistration.namespace_name, &ns, &p->result)) ||
	    (error = intake_namespace_hide(&ns, deregistration_signed(p, &ns, &p->result), &p->result)))
		return error;
	return check_lifecycle(p, &ns, &p->result);
}

static int deregistration_store(struct intake_pending *p, store_submission_done done, void *context)
{
	const struct deregistration *d = &statement_of(p)->deregistration;
	statement_of(p)->store_deregistration = (struct store_deregistration){
	    .namespace_name = d->namespace_name,
	    .service_id = d->service_id,
	    .sequence = d->sequence,
	    .digest = p->digest,
	    .note = p->body,
	    .note_len = p->len,
	    .epoch = p->epoch,
	};
	return store_deregistration_submit_async(p->context.store, &statement_of(p)->store_deregistration,
	                                         done, context);
}

/* ---- the store and the answer ---- */

/* What the store's refusals other than a replayed sequence mean, whatever the statement. */
static enum api_error statement_refused(struct intake_pending *p, int rc)
{
	if (rc == DIRAUTH_ERR_EXISTS)
		return intake_refuse(&p->result, API_ERROR_REVOKED, "The %s is revoked already.",
		                     statement_of(p)->revocation.has_endpoint ? "endpoint" : "service");
	if (rc == DIRAUTH_ERR_NOT_FOUND)
		return intake_refuse(&p->result, API_ERROR_UNKNOWN_SERVICE,
		                     "The service is not registered in this namespace here.");
	return API_ERROR_NONE;
}

static enum api_error health_refused(struct intake_pending *p, int rc)
{
	if (rc == DIRAUTH_ERR_ROLLBACK)
		return intake_refuse(&p->result, API_ERROR_REPLAYED,
		                     "The sequence %llu is not above the last accepted for this endpoint.",
		                     (unsigned long long)statement_of(p)->health.sequence);
	return statement_refused(p, rc);
}

static enum api_error revocation_refused(struct intake_pending *p, int rc)
{
	const struct revocation *r = &statement_of(p)->revocation;
	if (rc == DIRAUTH_ERR_ROLLBACK)
		return intake_refuse(
		    &p->result, API_ERROR_REPLAYED,
		    "The sequence %llu of '%s' was accepted before, or is not above the last "
		    "accepted from that key.",
		    (unsigned long long)r->sequence, r->key.name);
	/* The store refuses an endpoint of a service revoked whole like one revoked itself; the
	 * answer says which. */
	if (rc == DIRAUTH_ERR_EXISTS && r->has_endpoint &&
	    store_revocation_find(p->context.store, r->namespace_name, r->service_id, NULL, NULL) == 0)
		return intake_refuse(&p->result, API_ERROR_REVOKED,
		                     "The endpoint's service is revoked whole: nothing about it is accepted "
		                     "again.");
	return statement_refused(p, rc);
}

static enum api_error deregistration_refused(struct intake_pending *p, int rc)
{
	if (rc == DIRAUTH_ERR_ROLLBACK)
		return intake_refuse(
		    &p->result, API_ERROR_REPLAYED,
		    "The sequence %llu is below the service's highest registration sequence, "
		    "or not above an earlier deregistration's.",
		    (unsigned long long)statement_of(p)->deregistration.sequence);
	return statement_refused(p, rc);
}

/* Once durable, a health statement's or a revocation's answer. */
static enum api_error statement_acknowledged(struct intake_pending *p, uint64_t stamp)
{
	char hex[65];
	hex_encode(p->digest, 32, hex);
	if (buffer_appendf(&p->result.receipt, "{\"status\":\"accepted\",\"sha256\":\"%s\",\"epoch\":%llu}",
	                   hex, (unsigned long long)stamp) != 0)
		return intake_refuse(&p->result, API_ERROR_INTERNAL, "Out of memory.");
	return API_ERROR_NONE;
}

/* Once durable, a deregistration's receipt text. */
static enum api_error deregistration_durable(struct intake_pending *p, uint64_t stamp)
{
	const struct deregistration *d = &statement_of(p)->deregistration;
	struct deregistration_receipt receipt;
	memset(&receipt, 0, sizeof receipt);
	snprintf(receipt.authority, sizeof receipt.authority, "%s", p->context.config->authority_name);
	snprintf(receipt.namespace_name, sizeof receipt.namespace_name, "%s", d->namespace_name);
	memcpy(receipt.service_id, d->service_id, SERVICE_ID_SIZE);
	receipt.sequence = d->sequence;
	memcpy(receipt.deregistration_digest, p->digest, 32);
	receipt.accepted_at = intake_pending_accepted_at(p);
	/* The stamp is the first epoch whose view lacks the service. */
	receipt.last_listed_epoch = stamp > 0 ? stamp - 1 : 0;
	int rc = deregistration_receipt_encode(&receipt, &p->receipt_text);
	return rc ? intake_pending_receipt_unbuilt(p, rc) : API_ERROR_NONE;
}

const struct intake_kind intake_health_kind = {
    .document = "health statement",
    .size = sizeof(struct statement_pending),
    .max_bytes = health_max_bytes,
    .too_large = "A health statement",
    .parse = health_parse_statement,
    .authorize = health_authorize,
    .check = health_check,
    .store = health_store,
    .refused = health_refused,
    .durable = statement_acknowledged,
};

const struct intake_kind intake_revocation_kind = {
    .document = "revocation",
    .size = sizeof(struct statement_pending),
    .max_bytes = revocation_max_bytes,
    .too_large = "A revocation",
    .parse = revocation_parse_statement,
    .authorize = revocation_authorize,
    .check = statement_now,
    .store = revocation_store,
    .refused = revocation_refused,
    .durable = statement_acknowledged,
};

const struct intake_kind intake_deregistration_kind = {
    .document = "deregistration",
    .size = sizeof(struct statement_pending),
    .max_bytes = deregistration_max_bytes,
    .too_large = "A deregistration",
    .parse = deregistration_parse_statement,
    .authorize = deregistration_authorize,
    .check = statement_now,
    .store = deregistration_store,
    .refused = deregistration_refused,
    .durable = deregistration_durable,
    .receipt = SIGNER_OP_SIGN_DEREGISTRATION_RECEIPT,
    .remedy = "Send a deregistration with a higher sequence to get a receipt.",
    .format_failure_is_unsigned = true,
};

/* ---- the entry points ---- */

/* A missing body is an empty one. */
static const uint8_t *body_or_empty(const uint8_t *body)
{
	return body ? body : (const uint8_t *)"";
}

enum api_error submit_health(const struct submit_context *context, const uint8_t *body, size_t len,
                             struct submit_result *result)
{
	return intake_submit_wait(INTAKE_HEALTH, INTAKE_FROM_PROVIDER, context, body_or_empty(body), len,
	                          result);
}

enum api_error submit_health_async(const struct submit_context *context, const uint8_t *body, size_t len,
                                   submit_done done, void *done_context, struct submit_result *result)
{
	return intake_submit_start(INTAKE_HEALTH, INTAKE_FROM_PROVIDER, context, body_or_empty(body), len,
	                           done, done_context, result);
}

enum api_error submit_revocation(const struct submit_context *context, const uint8_t *body, size_t len,
                                 struct submit_result *result)
{
	return intake_submit_wait(INTAKE_REVOCATION, INTAKE_FROM_PROVIDER, context, body_or_empty(body), len,
	                          result);
}

enum api_error submit_revocation_async(const struct submit_context *context, const uint8_t *body, size_t len,
                                       submit_done done, void *done_context, struct submit_result *result)
{
	return intake_submit_start(INTAKE_REVOCATION, INTAKE_FROM_PROVIDER, context, body_or_empty(body), len,
	                           done, done_context, result);
}

enum api_error submit_peer_revocation(const struct submit_context *context, const uint8_t *note, size_t len,
                                      struct submit_result *result)
{
	return intake_submit_wait(INTAKE_REVOCATION, INTAKE_FROM_PEER, context, body_or_empty(note), len,
	                          result);
}

enum api_error submit_check_peer_revocation(const struct submit_context *context, const uint8_t *note,
                                            size_t len, struct submit_result *result)
{
	enum api_error error;
	intake_pending_free(intake_check(INTAKE_REVOCATION, INTAKE_FROM_PEER, context, body_or_empty(note),
	                                 len, NULL, &error, result));
	return error;
}

enum api_error submit_peer_health(const struct submit_context *context, const uint8_t *note, size_t len,
                                  struct submit_result *result)
{
	return intake_submit_wait(INTAKE_HEALTH, INTAKE_FROM_PEER, context, body_or_empty(note), len, result);
}

enum api_error submit_deregistration(const struct submit_context *context, const uint8_t *body, size_t len,
                                     struct submit_result *result)
{
	return intake_submit_wait(INTAKE_DEREGISTRATION, INTAKE_FROM_PROVIDER, context, body_or_empty(body),
	                          len, result);
}

enum api_error submit_deregistration_async(const struct submit_context *context, const uint8_t *body,
                                           size_t len, submit_done done, void *done_context,
                                           struct submit_result *result)
{
	return intake_submit_start(INTAKE_DEREGISTRATION, INTAKE_FROM_PROVIDER, context, body_or_empty(body),
	                           len, done, done_context, result);
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
