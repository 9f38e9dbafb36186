/*
 * submit.c: the registration checks, the store submission and the receipt.
 *
 * The signature is checked after the namespace and enrolment checks on purpose: a note signed
 * by a key nobody enrolled is "unknown_provider", and "bad_signature" is kept for an enrolled
 * key whose signature fails, which is what an operator debugging a provider needs to see. The
 * final gate is registration_parse_signed(), the same check every verifier of a snapshot runs.
 */
#include "server/intake/submit.h"

#include "server/intake/lifecycle.h"

#include "schema/crypto.h"
#include "schema/error.h"
#include "schema/note.h"
#include "schema/receipt.h"
#include "schema/registration.h"
#include "schema/schedule.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
		return refuse(result, API_ERROR_INTERNAL, "Out of memory.");
	return refuse(result, API_ERROR_MALFORMED, "The body is not a signed registration note: %s",
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
 * the namespace. */
static enum api_error check_enrolment(const struct config *config, const struct registration *r,
                                      const struct note *note, struct submit_result *result)
{
	int namespace_index = config_namespace_index(config, r->namespace_name, strlen(r->namespace_name));
	const struct config_provider *provider = config_provider_find(config, &r->provider);
	int rc = provider ? registration_verify_note(note, r) : DIRAUTH_ERR_UNKNOWN_KEY;
	int hidden = namespace_index >= 0 && config_namespace_is_private(config, (size_t)namespace_index) &&
	             (!provider || rc == DIRAUTH_ERR_SIGNATURE || rc == DIRAUTH_ERR_UNKNOWN_KEY ||
	              !(provider->namespace_mask & ((uint64_t)1 << namespace_index)));
	if (namespace_index < 0 || hidden)
		return refuse(result, API_ERROR_UNKNOWN_NAMESPACE, "The namespace '%s' is not served here.",
		              r->namespace_name);
	if (!provider)
		return refuse(result, API_ERROR_UNKNOWN_PROVIDER, "The provider key '%s' is not enrolled.",
		              r->provider.name);
	if (rc == DIRAUTH_ERR_SIGNATURE || rc == DIRAUTH_ERR_UNKNOWN_KEY)
		return refuse(result, API_ERROR_BAD_SIGNATURE, "The note carries no valid signature by '%s'.",
		              r->provider.name);
	if (rc)
		return refuse(result, API_ERROR_INTERNAL, "The signature could not be checked: %s",
		              dirauth_strerror(rc));
	if (!(provider->namespace_mask & ((uint64_t)1 << namespace_index)))
		return refuse(result, API_ERROR_NAMESPACE_NOT_ALLOWED,
		              "The provider '%s' is not enrolled for the namespace '%s'.", r->provider.name,
		              r->namespace_name);
	if (!(provider->class_mask & ((uint32_t)1 << r->service_class)))
		return refuse(result, API_ERROR_CLASS_NOT_ALLOWED,
		              "The provider '%s' is not enrolled for the class '%s'.", r->provider.name,
		              service_class_name(r->service_class));
	return API_ERROR_NONE;
}

/* The bounds and times of the registration itself: endpoint count (413), then, against now,
 * validity length, expiry and issue time (422). */
static enum api_error check_bounds_and_times(const struct config *config, const struct registration *r,
                                             uint64_t now, struct submit_result *result)
{
	const struct config_bounds *b = &config->bounds;
	if (r->endpoint_count > b->endpoints_per_service)
		return refuse(result, API_ERROR_TOO_MANY_ENDPOINTS, "%zu endpoints; at most %zu are allowed.",
		              r->endpoint_count, b->endpoints_per_service);
	if (r->expires - r->issued_at > b->max_validity_seconds)
		return refuse(result, API_ERROR_VALIDITY_TOO_LONG,
		              "The validity is %llu seconds; at most %llu.",
		              (unsigned long long)(r->expires - r->issued_at),
		              (unsigned long long)b->max_validity_seconds);
	if (r->expires <= now)
		return refuse(result, API_ERROR_EXPIRED, "The registration expired at %llu; it is now %llu.",
		              (unsigned long long)r->expires, (unsigned long long)now);
	if (r->issued_at > now + b->clock_skew_seconds)
		return refuse(
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
		return refuse(result, API_ERROR_BODY_TOO_LARGE, "The body is larger than %zu bytes.",
		              config->bounds.registration_body);
	if ((error = check_grammar(note, len, r, parsed, result)) ||
	    (error = check_enrolment(config, r, *parsed, result)) ||
	    (error = check_bounds_and_times(config, r, now, result))) {
		registration_clear(r);
		note_free(*parsed);
		*parsed = NULL;
	}
	return error;
}

/* One registration on its way: checked, then stored, then receipted. */
struct submit_pending {
	struct submit_context context;
	const uint8_t *body; /* borrowed until the end */
	size_t len;
	struct note *note;
	struct registration r;
	uint8_t digest[32];
	uint8_t *endpoint_ids;
	struct store_registration record;
	uint64_t now;
	struct buffer receipt_text;
	struct submit_result result;
	submit_done done;
	void *done_context;
	bool from_peer; /* a registration another authority holds: stored, never receipted */
};

static void pending_free(struct submit_pending *p)
{
	if (!p)
		return;
	registration_clear(&p->r);
	note_free(p->note);
	free(p->endpoint_ids);
	buffer_free(&p->receipt_text);
	buffer_free(&p->result.receipt);
	free(p);
}

/* Every check before the store, in the order of docs/api.md, and the store's record. */
static enum api_error pending_prepare(struct submit_pending *p)
{
	const struct config *config = p->context.config;
	struct submit_result *result = &p->result;
	enum api_error error;
	char why[SIGNER_HEALTH_DETAIL_MAX];

	if (p->len > config->bounds.registration_body)
		return refuse(result, API_ERROR_BODY_TOO_LARGE, "The body is larger than %zu bytes.",
		              config->bounds.registration_body);
	if ((error = check_grammar(p->body, p->len, &p->r, &p->note, result)) ||
	    (error = check_enrolment(config, &p->r, p->note, result)))
		return error;
	if (p->r.endpoint_count <= config->bounds.endpoints_per_service &&
	    clock_now(p->context.clock, &p->now) != 0)
		return refuse(result, API_ERROR_UNAVAILABLE, "The clock cannot be read.");
	if ((error = check_bounds_and_times(config, &p->r, p->now, result)))
		return error;
	/* Nothing is stored that cannot get a receipt now: the signer must be answering. A peer's
	 * registration gets no receipt from here and needs no signer. */
	if (!p->from_peer && signer_health_check(p->context.signer_health, why, sizeof why) != 0)
		return refuse(result, API_ERROR_UNAVAILABLE, "Nothing was stored: %s.", why);
	if (crypto_sha256(p->body, p->len, p->digest) != 0)
		return refuse(result, API_ERROR_INTERNAL, "The note could not be hashed.");
	p->endpoint_ids = malloc(p->r.endpoint_count * ENDPOINT_ID_SIZE + 1);
	if (!p->endpoint_ids)
		return refuse(result, API_ERROR_INTERNAL, "Out of memory.");
	for (size_t i = 0; i < p->r.endpoint_count; i++)
		memcpy(p->endpoint_ids + i * ENDPOINT_ID_SIZE, p->r.endpoints[i].endpoint_id,
		       ENDPOINT_ID_SIZE);
	p->record = (struct store_registration){
	    .namespace_name = p->r.namespace_name,
	    .service_id = p->r.service_id,
	    .provider = p->r.provider.name,
	    .sequence = p->r.sequence,
	    .expires = p->r.expires,
	    .endpoint_ids = p->endpoint_ids,
	    .endpoint_count = p->r.endpoint_count,
	    .note = p->body,
	    .note_len = p->len,
	    .parsed = &p->r,
	    .signature = &p->note->signatures[0],
	    .digest = p->digest,
	    .epoch = schedule_destination_epoch(&config->epoch, p->now),
	    .max_records = config->bounds.records_per_snapshot,
	    .max_bytes = config->bounds.namespace_bytes,
	};
	return API_ERROR_NONE;
}

/* After the store answered rc: what its refusals mean to the provider, or, once durable, the
 * receipt's text, promising the snapshot the store stamped the registration for. */
static enum api_error pending_stored(struct submit_pending *p, int rc, uint64_t stamp)
{
	struct submit_result *result = &p->result;
	switch (rc) {
	case 0:
		break;
	case DIRAUTH_ERR_ROLLBACK:
		return refuse(result, API_ERROR_ROLLBACK,
		              "The sequence %llu is not greater than the highest accepted for this service.",
		              (unsigned long long)p->r.sequence);
	case DIRAUTH_ERR_COLLISION: {
		enum api_error error = classify_collision(&p->context, &p->r);
		return refuse(result, error, "%s", api_error_detail(error));
	}
	case DIRAUTH_ERR_REFUSED: {
		/* A revocation or deregistration withdrew it (lifecycle.c). */
		enum api_error error = submit_registration_withdrawal(&p->context, &p->r);
		return refuse(result, error, "%s", api_error_detail(error));
	}
	case DIRAUTH_ERR_BOUNDS:
		return refuse(result, API_ERROR_NAMESPACE_FULL,
		              "The namespace '%s' holds as many records or bytes as its snapshot may; "
		              "nothing was stored.",
		              p->r.namespace_name);
	case DIRAUTH_ERR_FULL:
		return refuse(result, API_ERROR_STORE_FULL, "The store is full; nothing was stored.");
	case DIRAUTH_ERR_UNAVAILABLE:
		return refuse(result, API_ERROR_UNAVAILABLE, "The store is not accepting submissions.");
	default:
		return refuse(result, API_ERROR_INTERNAL, "The store failed: %s", dirauth_strerror(rc));
	}
	uint64_t accepted_at;
	if (clock_now(p->context.clock, &accepted_at) != 0 || accepted_at < p->now)
		accepted_at = p->now;
	struct receipt receipt;
	memset(&receipt, 0, sizeof receipt);
	snprintf(receipt.authority, sizeof receipt.authority, "%s", p->context.config->authority_name);
	snprintf(receipt.namespace_name, sizeof receipt.namespace_name, "%s", p->r.namespace_name);
	memcpy(receipt.service_id, p->r.service_id, SERVICE_ID_SIZE);
	receipt.sequence = p->r.sequence;
	receipt.accepted_at = accepted_at;
	receipt.publish_by_epoch = stamp;
	memcpy(receipt.registration_digest, p->digest, sizeof receipt.registration_digest);
	if ((rc = receipt_encode(&receipt, &p->receipt_text)) != 0)
		return refuse(result, API_ERROR_STORED_WITHOUT_RECEIPT,
		              "The registration was stored, but its receipt could not be built (%s). "
		              "Submit it again with a higher sequence to get a receipt.",
		              dirauth_strerror(rc));
	return API_ERROR_NONE;
}

/* After the signer answered rc: the signed receipt, or the answer that says the registration
 * is stored without one. */
static enum api_error pending_signed(struct submit_pending *p, int rc, const struct note_signature *signature,
                                     const char *why)
{
	struct submit_result *result = &p->result;
	signer_health_note(p->context.signer_health, rc, why);
	if (rc)
		return refuse(result, API_ERROR_STORED_WITHOUT_RECEIPT,
		              "The registration was stored, but the signer did not sign its receipt (%s). "
		              "Submit it again with a higher sequence to get a receipt.",
		              why && why[0] ? why : dirauth_strerror(rc));
	if ((rc = note_format(p->receipt_text.data, p->receipt_text.len, signature, 1, &result->receipt)) !=
	    0)
		return refuse(result, API_ERROR_STORED_WITHOUT_RECEIPT,
		              "The registration was stored, but its receipt could not be built (%s). "
		              "Submit it again with a higher sequence to get a receipt.",
		              dirauth_strerror(rc));
	return API_ERROR_NONE;
}

static struct submit_pending *pending_new(const struct submit_context *context, const uint8_t *body,
                                          size_t len)
{
	struct submit_pending *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->context = *context;
	p->body = body;
	p->len = len;
	buffer_init(&p->receipt_text);
	buffer_init(&p->result.receipt);
	return p;
}

/* Hands the result over (the receipt buffer moves to the caller) and frees p. */
static void pending_finish(struct submit_pending *p, struct submit_result *out)
{
	*out = p->result;
	buffer_init(&p->result.receipt);
	if (out->error != API_ERROR_NONE)
		buffer_free(&out->receipt);
	pending_free(p);
}

enum api_error submit_registration(const struct submit_context *context, const uint8_t *body, size_t len,
                                   struct submit_result *result)
{
	struct submit_pending *p = pending_new(context, body, len);
	enum api_error error;
	uint64_t stamp = 0;
	if (!p) {
		buffer_init(&result->receipt);
		return refuse(result, API_ERROR_INTERNAL, "Out of memory.");
	}
	if ((error = pending_prepare(p)) == API_ERROR_NONE) {
		int rc = store_registration_submit(context->store, &p->record, &stamp);
		if ((error = pending_stored(p, rc, stamp)) == API_ERROR_NONE) {
			struct note_signature signature;
			char why[SIGNER_DETAIL_MAX + 1] = "";
			rc = signer_client_sign(context->signer, SIGNER_OP_SIGN_RECEIPT, p->receipt_text.data,
			                        p->receipt_text.len, 0, NULL, 0, &signature, why, sizeof why);
			error = pending_signed(p, rc, &signature, why);
		}
	}
	pending_finish(p, result);
	return error;
}

/* The asynchronous path: the store's and then the signer's callbacks carry it on. */
static void pending_done(struct submit_pending *p)
{
	struct submit_result result;
	submit_done done = p->done;
	void *context = p->done_context;
	pending_finish(p, &result);
	done(context, &result);
}

static void on_signed(void *context, int rc, const struct note_signature *signature, const char *why)
{
	struct submit_pending *p = context;
	pending_signed(p, rc, signature, why);
	pending_done(p);
}

static void on_stored(void *context, int rc, uint64_t stamp)
{
	struct submit_pending *p = context;
	if (pending_stored(p, rc, stamp) != API_ERROR_NONE) {
		pending_done(p);
		return;
	}
	rc = signer_client_sign_async(p->context.signer, SIGNER_OP_SIGN_RECEIPT, p->receipt_text.data,
	                              p->receipt_text.len, on_signed, p);
	if (rc != 0) {
		pending_signed(p, rc, NULL,
		               rc == DIRAUTH_ERR_FULL ? "too many receipts waiting for the signer" : "");
		pending_done(p);
	}
}

enum api_error submit_registration_async(const struct submit_context *context, const uint8_t *body,
                                         size_t len, submit_done done, void *done_context,
                                         struct submit_result *result)
{
	struct submit_pending *p = pending_new(context, body, len);
	if (!p) {
		buffer_init(&result->receipt);
		return refuse(result, API_ERROR_INTERNAL, "Out of memory.");
	}
	p->done = done;
	p->done_context = done_context;
	enum api_error error = pending_prepare(p);
	if (error == API_ERROR_NONE) {
		int rc = store_registration_submit_async(context->store, &p->record, on_stored, p);
		if (rc == 0)
			return API_ERROR_NONE; /* on_stored carries it on */
		error = pending_stored(p, rc, 0);
	}
	pending_finish(p, result);
	return error;
}

enum api_error submit_peer_registration(const struct submit_context *context, const uint8_t *note, size_t len,
                                        struct submit_result *result)
{
	struct submit_pending *p = pending_new(context, note, len);
	enum api_error error;
	uint64_t stamp = 0;
	if (!p) {
		buffer_init(&result->receipt);
		return refuse(result, API_ERROR_INTERNAL, "Out of memory.");
	}
	p->from_peer = true;
	if ((error = pending_prepare(p)) == API_ERROR_NONE) {
		int rc = store_registration_submit(context->store, &p->record, &stamp);
		error = pending_stored(p, rc, stamp);
		buffer_reset(&p->receipt_text);
	}
	pending_finish(p, result);
	buffer_free(&result->receipt);
	return error;
}
