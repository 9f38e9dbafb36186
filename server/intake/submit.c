/*
 * submit.c: the registration checks, the store submission and the receipt.
 *
 * The signature is checked after the namespace and enrolment checks on purpose: a note signed
 * by a key nobody enrolled is "unknown_provider", and "bad_signature" is kept for an enrolled
 * key whose signature fails, which is what an operator debugging a provider needs to see. The
 * final gate is registration_parse_signed(), the same check every verifier of a snapshot runs.
 *
 * The steps after the checks (the store, the receipt, the answer) are pending.c's, shared with
 * the lifecycle statements; this file gives them the registration's checks, its store record,
 * what the store's refusals mean for it and its receipt's text.
 */
#include "server/intake/submit.h"

#include "server/intake/lifecycle.h"
#include "server/intake/pending.h"

#include "schema/crypto.h"
#include "schema/error.h"
#include "schema/note.h"
#include "schema/receipt.h"
#include "schema/registration.h"
#include "schema/schedule.h"
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

/* Who may publish what: the namespace is served (404), the provider key is enrolled (403), the
 * note is signed by it (403), the provider may publish in this namespace and class (403).
 *
 * A private namespace exists only for those enrolled in it: a note that is not shown to come
 * from a provider enrolled for it (no enrolled key, a signature that does not verify, a provider
 * enrolled elsewhere only) is answered exactly as for a namespace that is not served, so that no
 * key, public or not, can be used to learn that it exists. So that the work does not tell either,
 * the provider is looked up and its signature checked before the namespace is judged, whatever
 * the namespace. On success *namespace_index (may be NULL) gets the namespace's index. */
static enum api_error check_enrolment(const struct config *config, const struct registration *r,
                                      const struct note *note, struct submit_result *result,
                                      size_t *namespace_index_out)
{
	int namespace_index = config_namespace_index(config, r->namespace_name, strlen(r->namespace_name));
	const struct config_provider *provider = config_provider_find(config, &r->provider);
	int rc = provider ? registration_verify_note(note, r) : DIRAUTH_ERR_UNKNOWN_KEY;
	int hidden = namespace_index >= 0 && config_namespace_is_private(config, (size_t)namespace_index) &&
	             (!provider || rc == DIRAUTH_ERR_SIGNATURE || rc == DIRAUTH_ERR_UNKNOWN_KEY ||
	              !(provider->namespace_mask & ((uint64_t)1 << namespace_index)));
	if (namespace_index < 0 || hidden)
		return intake_refuse(result, API_ERROR_UNKNOWN_NAMESPACE,
		                     "The namespace '%s' is not served here.", r->namespace_name);
	if (!provider)
		return intake_refuse(result, API_ERROR_UNKNOWN_PROVIDER,
		                     "The provider key '%s' is not enrolled.", r->provider.name);
	if (rc == DIRAUTH_ERR_SIGNATURE || rc == DIRAUTH_ERR_UNKNOWN_KEY)
		return intake_refuse(result, API_ERROR_BAD_SIGNATURE,
		                     "The note carries no valid signature by '%s'.", r->provider.name);
	if (rc)
		return intake_refuse(result, API_ERROR_INTERNAL, "The signature could not be checked: %s",
		                     dirauth_strerror(rc));
	if (!(provider->namespace_mask & ((uint64_t)1 << namespace_index)))
		return intake_refuse(result, API_ERROR_NAMESPACE_NOT_ALLOWED,
		                     "The provider '%s' is not enrolled for the namespace '%s'.",
		                     r->provider.name, r->namespace_name);
	if (!(provider->class_mask & ((uint32_t)1 << r->service_class)))
		return intake_refuse(result, API_ERROR_CLASS_NOT_ALLOWED,
		                     "The provider '%s' is not enrolled for the class '%s'.",
		                     r->provider.name, service_class_name(r->service_class));
	if (namespace_index_out)
		*namespace_index_out = (size_t)namespace_index;
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

enum api_error submit_check_note(const struct config *config, const uint8_t *note, size_t len, uint64_t now,
                                 struct registration *r, struct note **parsed, struct submit_result *result)
{
	enum api_error error;
	*parsed = NULL;
	memset(r, 0, sizeof *r);
	buffer_init(&result->receipt);
	result->error = API_ERROR_NONE;
	result->detail[0] = '\0';
	if (len > config->bounds.registration_body)
		return intake_refuse(result, API_ERROR_BODY_TOO_LARGE, "The body is larger than %zu bytes.",
		                     config->bounds.registration_body);
	if ((error = check_grammar(note, len, r, parsed, result)) ||
	    (error = check_enrolment(config, r, *parsed, result, NULL)) ||
	    (error = check_bounds_and_times(config, r, now, result))) {
		registration_clear(r);
		note_free(*parsed);
		*parsed = NULL;
	}
	return error;
}

/* ---- the registration's steps (pending.h) ---- */

struct registration_pending {
	struct intake_pending pending; /* first: the hooks convert back from it */
	struct registration r;
	uint8_t *endpoint_ids;
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

/* Every check before the store, in the order of docs/api.md, and the store's record. */
static enum api_error registration_prepare(struct intake_pending *p)
{
	struct registration_pending *rp = registration_of(p);
	const struct config *config = p->context.config;
	struct submit_result *result = &p->result;
	enum api_error error;
	char why[SIGNER_HEALTH_DETAIL_MAX];
	size_t namespace_index = 0;

	if (p->len > config->bounds.registration_body)
		return intake_refuse(result, API_ERROR_BODY_TOO_LARGE, "The body is larger than %zu bytes.",
		                     config->bounds.registration_body);
	if ((error = check_grammar(p->body, p->len, &rp->r, &p->note, result)) ||
	    (error = check_enrolment(config, &rp->r, p->note, result, &namespace_index)))
		return error;
	if (rp->r.endpoint_count <= config->bounds.endpoints_per_service &&
	    clock_now(p->context.clock, &p->now) != 0)
		return intake_refuse(result, API_ERROR_UNAVAILABLE, "The clock cannot be read.");
	if ((error = check_bounds_and_times(config, &rp->r, p->now, result)))
		return error;
	/* Nothing is stored that cannot get a receipt now: the signer must be answering. A peer's
	 * registration gets no receipt from here and needs no signer. */
	if (!p->from_peer && signer_health_check(p->context.signer_health, why, sizeof why) != 0)
		return intake_refuse(result, API_ERROR_UNAVAILABLE, "Nothing was stored: %s.", why);
	if (crypto_sha256(p->body, p->len, p->digest) != 0)
		return intake_refuse(result, API_ERROR_INTERNAL, "The note could not be hashed.");
	rp->endpoint_ids = malloc(rp->r.endpoint_count * ENDPOINT_ID_SIZE + 1);
	if (!rp->endpoint_ids)
		return intake_refuse(result, API_ERROR_INTERNAL, "Out of memory.");
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
	    .epoch = schedule_destination_epoch(&config->epoch, p->now),
	    .max_records = config->bounds.records_per_snapshot,
	    .max_bytes = config_namespace_record_bytes(config, namespace_index),
	    .endpoint_bytes = config_namespace_endpoint_bytes(config, namespace_index),
	};
	return API_ERROR_NONE;
}

static int registration_submit(struct intake_pending *p, uint64_t *stamp)
{
	return store_registration_submit(p->context.store, &registration_of(p)->record, stamp);
}

static int registration_submit_async(struct intake_pending *p, store_submission_done done)
{
	return store_registration_submit_async(p->context.store, &registration_of(p)->record, done, p);
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
		/* A revocation or deregistration withdrew it (lifecycle.c). */
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

const struct intake_pending_kind intake_registration_kind = {
    .size = sizeof(struct registration_pending),
    .document = "registration",
    .prepare = registration_prepare,
    .submit = registration_submit,
    .submit_async = registration_submit_async,
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
	return intake_pending_wait(&intake_registration_kind, context, body, len, false, result);
}

enum api_error submit_registration_async(const struct submit_context *context, const uint8_t *body,
                                         size_t len, submit_done done, void *done_context,
                                         struct submit_result *result)
{
	return intake_pending_start(&intake_registration_kind, context, body, len, false, done, done_context,
	                            result);
}

enum api_error submit_peer_registration(const struct submit_context *context, const uint8_t *note, size_t len,
                                        struct submit_result *result)
{
	enum api_error error =
	    intake_pending_wait(&intake_registration_kind, context, note, len, true, result);
	buffer_free(&result->receipt);
	return error;
}
