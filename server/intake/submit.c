/*
 * submit.c: the registration checks, the store submission and the receipt.
 *
 * The signature is checked after the namespace and enrolment checks on purpose: a note signed
 * by a key nobody enrolled is "unknown_provider", and "bad_signature" is kept for an enrolled
 * key whose signature fails, which is what an operator debugging a provider needs to see. The
 * final gate is registration_parse_signed(), the same check every verifier of a snapshot runs.
 *
 * The registration is one entry of intake's table of kinds (pending.h): this file gives it its
 * checks, its store record, what the store's refusals mean for it and its receipt's text, and
 * pending.c runs them, for a provider's post and a note from a peer alike.
 */
#include "server/intake/submit.h"

#include "server/intake/kinds.h"
#include "server/intake/pending.h"
#include "server/intake/statements.h"

#include "crypto/crypto.h"
#include "base/error.h"
#include "schema/note.h"
#include "schema/receipt.h"
#include "schema/registration.h"
#include "schedule/schedule.h"
#include "server/store/registrations.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The store says only "collision": a service id owned by another provider or namespace is a
 * service collision; otherwise one of the endpoint ids belongs to another service. Service and
 * endpoint ids are the authority's, not a namespace's, so an id taken anywhere is refused; the
 * answer says only that it is taken, the same code and sentence wherever its owner is (another
 * provider of this namespace, another public namespace, a private one), and never names the
 * owner or its namespace (docs/api.md, "Private namespaces"). */
static enum api_error classify_collision(const struct submit_context *context, const struct registration *r)
{
	char owner_namespace[STORE_NAME_MAX + 1], owner_provider[STORE_NAME_MAX + 1];
	if (store_service_owner(context->store, r->service_id, owner_namespace, owner_provider) == 0 &&
	    (strcmp(owner_namespace, r->namespace_name) != 0 ||
	     strcmp(owner_provider, r->provider.name) != 0))
		return API_ERROR_SERVICE_COLLISION;
	return API_ERROR_ENDPOINT_COLLISION;
}

/* The grammar of the note and of its registration text (400). */
static enum api_error check_grammar(const uint8_t *body, size_t len, struct registration *r,
                                    struct note **note, struct submit_result *result)
{
	int rc = registration_parse_note(body, len, r, note);
	if (rc == 0)
		return API_ERROR_NONE;
	if (rc == DIRAUTH_ERR_NOMEM)
		return intake_refuse(result, API_ERROR_INTERNAL, "Out of memory.");
	return intake_refuse(result, API_ERROR_MALFORMED, "The body is not a signed registration note: %s",
	                     dirauth_strerror(rc));
}

/* Up to the note's signature: the provider key is enrolled (403 unknown_provider), the note is
 * signed by it (403 bad_signature), the provider may publish in this namespace (403
 * namespace_not_allowed). The provider is looked up and its signature checked whatever the
 * namespace, so that the work does not tell a private namespace from one not served. */
static enum api_error registration_signed(const struct config *config, const struct registration *r,
                                          const struct note *note, const struct intake_namespace *ns,
                                          struct submit_result *result)
{
	const struct config_provider *provider = config_provider_find(config, &r->provider);
	int rc = provider ? registration_verify_note(note, r) : DIRAUTH_ERR_UNKNOWN_KEY;
	if (!provider)
		return intake_refuse(result, API_ERROR_UNKNOWN_PROVIDER,
		                     "The provider key '%s' is not enrolled.", r->provider.name);
	if (rc == DIRAUTH_ERR_SIGNATURE || rc == DIRAUTH_ERR_UNKNOWN_KEY)
		return intake_refuse(result, API_ERROR_BAD_SIGNATURE,
		                     "The note carries no valid signature by '%s'.", r->provider.name);
	if (rc)
		return intake_refuse(result, API_ERROR_INTERNAL, "The signature could not be checked: %s",
		                     dirauth_strerror(rc));
	if (ns->index < 0 || !(provider->namespace_mask & ((uint64_t)1 << ns->index)))
		return intake_refuse(result, API_ERROR_NAMESPACE_NOT_ALLOWED,
		                     "The provider '%s' is not enrolled for the namespace '%s'.",
		                     r->provider.name, r->namespace_name);
	return API_ERROR_NONE;
}

/* Who may publish what: the namespace is served (404), the provider key is enrolled, the note is
 * signed by it and the provider may publish in this namespace (403, hidden in a private
 * namespace: pending.h), and in this service class (403). On success *namespace_index gets the
 * namespace's index. */
static enum api_error check_enrolment(const struct config *config, const struct registration *r,
                                      const struct note *note, struct submit_result *result,
                                      size_t *namespace_index)
{
	struct intake_namespace ns;
	intake_namespace_judge(config, r->namespace_name, &ns);
	enum api_error error =
	    intake_namespace_hide(&ns, registration_signed(config, r, note, &ns, result), result);
	if (error)
		return error;
	const struct config_provider *provider = config_provider_find(config, &r->provider);
	if (!(provider->class_mask & ((uint32_t)1 << r->service_class)))
		return intake_refuse(result, API_ERROR_CLASS_NOT_ALLOWED,
		                     "The provider '%s' is not enrolled for the class '%s'.",
		                     r->provider.name, service_class_name(r->service_class));
	*namespace_index = (size_t)ns.index;
	return API_ERROR_NONE;
}

/* The bounds and times of the registration itself: endpoint count (413), then, against now,
 * validity length, expiry and issue time (422). */
static enum api_error check_bounds_and_times(const struct config *config, const struct registration *r,
                                             uint64_t now, struct submit_result *result)
{
	const struct config_bounds *b = &config->bounds;
	if (r->endpoint_count > b->endpoints_per_service)
		return intake_refuse(result, API_ERROR_TOO_MANY_ENDPOINTS,
		                     "%zu endpoints; at most %zu are allowed.", r->endpoint_count,
		                     b->endpoints_per_service);
	if (r->expires - r->issued_at > b->max_validity_seconds)
		return intake_refuse(result, API_ERROR_VALIDITY_TOO_LONG,
		                     "The validity is %llu seconds; at most %llu.",
		                     (unsigned long long)(r->expires - r->issued_at),
		                     (unsigned long long)b->max_validity_seconds);
	if (r->expires <= now)
		return intake_refuse(result, API_ERROR_EXPIRED,
		                     "The registration expired at %llu; it is now %llu.",
		                     (unsigned long long)r->expires, (unsigned long long)now);
	if (r->issued_at > now + b->clock_skew_seconds)
		return intake_refuse(
		    result, API_ERROR_ISSUED_IN_FUTURE,
		    "The registration is issued at %llu; it is now %llu and the allowed skew is %llu s.",
		    (unsigned long long)r->issued_at, (unsigned long long)now,
		    (unsigned long long)b->clock_skew_seconds);
	return API_ERROR_NONE;
}

/* ---- the registration's steps (pending.h) ---- */

struct registration_pending {
	struct intake_pending pending; /* first: the hooks convert back from it */
	struct registration r;
	uint8_t *endpoint_ids;
	size_t namespace_index;
	struct store_registration record;
};

static struct registration_pending *registration_of(struct intake_pending *p)
{
	return (struct registration_pending *)p;
}

static void registration_pending_clear(struct intake_pending *p)
{
	struct registration_pending *rp = registration_of(p);
	registration_clear(&rp->r);
	free(rp->endpoint_ids);
}

static size_t registration_max_bytes(const struct config *config)
{
	return config->bounds.registration_body;
}

static enum api_error registration_parse_statement(struct intake_pending *p)
{
	return check_grammar(p->body, p->len, &registration_of(p)->r, &p->note, &p->result);
}

static enum api_error registration_authorize(struct intake_pending *p)
{
	struct registration_pending *rp = registration_of(p);
	return check_enrolment(p->context.config, &rp->r, p->note, &p->result, &rp->namespace_index);
}

/* The endpoint count, then the times against the clock (read only when the count passes). */
static enum api_error registration_check(struct intake_pending *p)
{
	struct registration_pending *rp = registration_of(p);
	const struct config *config = p->context.config;
	enum api_error error;
	if (rp->r.endpoint_count <= config->bounds.endpoints_per_service && (error = intake_now(p)))
		return error;
	return check_bounds_and_times(config, &rp->r, p->now, &p->result);
}

/* The store's record, to the registrations table. */
static int registration_store(struct intake_pending *p, store_submission_done done, void *context)
{
	struct registration_pending *rp = registration_of(p);
	const struct config *config = p->context.config;
	rp->endpoint_ids = malloc(rp->r.endpoint_count * ENDPOINT_ID_SIZE + 1);
	if (!rp->endpoint_ids)
		return DIRAUTH_ERR_NOMEM;
	for (size_t i = 0; i < rp->r.endpoint_count; i++)
		memcpy(rp->endpoint_ids + i * ENDPOINT_ID_SIZE, rp->r.endpoints[i].endpoint_id,
		       ENDPOINT_ID_SIZE);
	rp->record = (struct store_registration){
	    .namespace_name = rp->r.namespace_name,
	    .service_id = rp->r.service_id,
	    .provider = rp->r.provider.name,
	    .sequence = rp->r.sequence,
	    .expires = rp->r.expires,
	    .endpoint_ids = rp->endpoint_ids,
	    .endpoint_count = rp->r.endpoint_count,
	    .note = p->body,
	    .note_len = p->len,
	    .parsed = &rp->r,
	    .signature = &p->note->signatures[0],
	    .digest = p->digest,
	    .epoch = p->epoch,
	    .max_records = config->bounds.records_per_snapshot,
	    .max_bytes = config_namespace_record_bytes(config, rp->namespace_index),
	    .endpoint_bytes = config_namespace_endpoint_bytes(config, rp->namespace_index),
	};
	return store_registration_submit_async(p->context.store, &rp->record, done, context);
}

/* What the store's refusals mean to the provider. */
static enum api_error registration_refused(struct intake_pending *p, int rc)
{
	struct registration_pending *rp = registration_of(p);
	struct submit_result *result = &p->result;
	enum api_error error;
	switch (rc) {
	case DIRAUTH_ERR_ROLLBACK:
		return intake_refuse(
		    result, API_ERROR_ROLLBACK,
		    "The sequence %llu is not greater than the highest accepted for this service.",
		    (unsigned long long)rp->r.sequence);
	case DIRAUTH_ERR_COLLISION:
		error = classify_collision(&p->context, &rp->r);
		return intake_refuse(result, error, "%s", api_error_detail(error));
	case DIRAUTH_ERR_REFUSED:
		/* A revocation or deregistration withdrew it (statements.c). */
		error = submit_registration_withdrawal(&p->context, &rp->r);
		return intake_refuse(result, error, "%s", api_error_detail(error));
	case DIRAUTH_ERR_BOUNDS:
		return intake_refuse(result, API_ERROR_NAMESPACE_FULL,
		                     "The namespace '%s' holds as many records or bytes as its snapshot may; "
		                     "nothing was stored.",
		                     rp->r.namespace_name);
	default:
		return API_ERROR_NONE;
	}
}

/* Once durable: the receipt's text, promising the snapshot the store stamped the registration
 * for. */
static enum api_error registration_durable(struct intake_pending *p, uint64_t stamp)
{
	struct registration_pending *rp = registration_of(p);
	struct receipt receipt;
	memset(&receipt, 0, sizeof receipt);
	snprintf(receipt.authority, sizeof receipt.authority, "%s", p->context.config->authority_name);
	snprintf(receipt.namespace_name, sizeof receipt.namespace_name, "%s", rp->r.namespace_name);
	memcpy(receipt.service_id, rp->r.service_id, SERVICE_ID_SIZE);
	receipt.sequence = rp->r.sequence;
	receipt.accepted_at = intake_pending_accepted_at(p);
	receipt.publish_by_epoch = stamp;
	memcpy(receipt.registration_digest, p->digest, sizeof receipt.registration_digest);
	int rc = receipt_encode(&receipt, &p->receipt_text);
	return rc ? intake_pending_receipt_unbuilt(p, rc) : API_ERROR_NONE;
}

const struct intake_kind intake_registration_kind = {
    .document = "registration",
    .size = sizeof(struct registration_pending),
    .max_bytes = registration_max_bytes,
    .too_large = NULL, /* "The body is larger than ..." */
    .parse = registration_parse_statement,
    .authorize = registration_authorize,
    .check = registration_check,
    .store = registration_store,
    .refused = registration_refused,
    .durable = registration_durable,
    .clear = registration_pending_clear,
    .receipt = SIGNER_OP_SIGN_RECEIPT,
    .remedy = "Submit it again with a higher sequence to get a receipt.",
};

/* ---- the entry points ---- */

enum api_error submit_registration(const struct submit_context *context, const uint8_t *body, size_t len,
                                   struct submit_result *result)
{
	return intake_submit_wait(INTAKE_REGISTRATION, INTAKE_FROM_PROVIDER, context, body, len, result);
}

enum api_error submit_registration_async(const struct submit_context *context, const uint8_t *body,
                                         size_t len, submit_done done, void *done_context,
                                         struct submit_result *result)
{
	return intake_submit_start(INTAKE_REGISTRATION, INTAKE_FROM_PROVIDER, context, body, len, done,
	                           done_context, result);
}

enum api_error submit_peer_registration(const struct submit_context *context, const uint8_t *note, size_t len,
                                        struct submit_result *result)
{
	enum api_error error =
	    intake_submit_wait(INTAKE_REGISTRATION, INTAKE_FROM_PEER, context, note, len, result);
	buffer_free(&result->receipt);
	return error;
}

enum api_error submit_check_note(const struct config *config, const uint8_t *note, size_t len, uint64_t now,
                                 struct registration *r, struct note **parsed, struct submit_result *result)
{
	struct submit_context context = {.config = config};
	enum api_error error;
	*parsed = NULL;
	memset(r, 0, sizeof *r);
	struct intake_pending *p =
	    intake_check(INTAKE_REGISTRATION, INTAKE_FROM_PEER, &context, note, len, &now, &error, result);
	if (!p)
		return error;
	/* The parsed registration and note move to the caller. */
	*r = registration_of(p)->r;
	memset(&registration_of(p)->r, 0, sizeof *r);
	*parsed = p->note;
	p->note = NULL;
	intake_pending_free(p);
	return API_ERROR_NONE;
}
