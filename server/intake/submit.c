/*
 * submit.c: the registration checks, the store submission and the receipt.
 *
 * The signature is checked after the namespace and enrolment checks on purpose: a note signed
 * by a key nobody enrolled is "unknown_provider", and "bad_signature" is kept for an enrolled
 * key whose signature fails, which is what an operator debugging a provider needs to see. The
 * final gate is registration_parse_signed(), the same check every verifier of a snapshot runs.
 */
#include "server/intake/submit.h"

#include "schema/crypto.h"
#include "schema/error.h"
#include "schema/note.h"
#include "schema/receipt.h"
#include "schema/registration.h"
#include "schema/schedule.h"

#include <stdarg.h>
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
 * service collision; otherwise one of the endpoint ids belongs to another service. */
static enum api_error classify_collision(const struct submit_context *context, const struct registration *r)
{
	char owner_namespace[STORE_NAME_MAX + 1], owner_provider[STORE_NAME_MAX + 1];
	if (store_service_owner(context->store, r->service_id, owner_namespace, owner_provider) == 0 &&
	    (strcmp(owner_namespace, r->namespace_name) != 0 ||
	     strcmp(owner_provider, r->provider.name) != 0))
		return API_ERROR_SERVICE_COLLISION;
	return API_ERROR_ENDPOINT_COLLISION;
}

static enum api_error sign_receipt(const struct submit_context *context, const struct registration *r,
                                   const uint8_t digest[32], uint64_t accepted_at, uint64_t publish_by,
                                   struct submit_result *result)
{
	struct receipt receipt;
	struct buffer text;
	struct note_signature signature;
	char why[SIGNER_DETAIL_MAX + 1] = "";
	enum api_error error = API_ERROR_NONE;

	memset(&receipt, 0, sizeof receipt);
	buffer_init(&text);
	snprintf(receipt.authority, sizeof receipt.authority, "%s", context->config->authority_name);
	snprintf(receipt.namespace_name, sizeof receipt.namespace_name, "%s", r->namespace_name);
	memcpy(receipt.service_id, r->service_id, SERVICE_ID_SIZE);
	receipt.sequence = r->sequence;
	receipt.accepted_at = accepted_at;
	receipt.publish_by_epoch = publish_by;
	memcpy(receipt.registration_digest, digest, sizeof receipt.registration_digest);
	int rc = receipt_encode(&receipt, &text);
	if (rc == 0) {
		rc = signer_client_sign(context->signer, SIGNER_OP_SIGN_RECEIPT, text.data, text.len, 0, NULL,
		                        0, &signature, why, sizeof why);
		signer_health_note(context->signer_health, rc, why);
		if (rc)
			error = refuse(
			    result, API_ERROR_STORED_WITHOUT_RECEIPT,
			    "The registration was stored, but the signer did not sign its receipt (%s). "
			    "Submit it again with a higher sequence to get a receipt.",
			    why[0] ? why : dirauth_strerror(rc));
	}
	if (rc == 0)
		rc = note_format(text.data, text.len, &signature, 1, &result->receipt);
	if (rc && error == API_ERROR_NONE)
		error = refuse(result, API_ERROR_STORED_WITHOUT_RECEIPT,
		               "The registration was stored, but its receipt could not be built (%s). "
		               "Submit it again with a higher sequence to get a receipt.",
		               dirauth_strerror(rc));
	buffer_free(&text);
	return error;
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
 * note is signed by it (403), the provider may publish in this namespace and class (403). */
static enum api_error check_enrolment(const struct config *config, const struct registration *r,
                                      const struct note *note, struct submit_result *result)
{
	int namespace_index = config_namespace_index(config, r->namespace_name, strlen(r->namespace_name));
	if (namespace_index < 0)
		return refuse(result, API_ERROR_UNKNOWN_NAMESPACE, "The namespace '%s' is not served here.",
		              r->namespace_name);
	const struct config_provider *provider = config_provider_find(config, &r->provider);
	if (!provider)
		return refuse(result, API_ERROR_UNKNOWN_PROVIDER, "The provider key '%s' is not enrolled.",
		              r->provider.name);
	int rc = registration_verify_note(note, r);
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

/* The bounds and times of the registration itself: endpoint count (413), then, against the
 * clock (503 when it cannot be read; *now gets its time), validity length, expiry and issue
 * time (422). */
static enum api_error check_bounds_and_times(const struct submit_context *context,
                                             const struct registration *r, uint64_t *now_out,
                                             struct submit_result *result)
{
	const struct config_bounds *b = &context->config->bounds;
	uint64_t now;
	if (r->endpoint_count > b->endpoints_per_service)
		return refuse(result, API_ERROR_TOO_MANY_ENDPOINTS, "%zu endpoints; at most %zu are allowed.",
		              r->endpoint_count, b->endpoints_per_service);
	if (clock_now(context->clock, &now) != 0)
		return refuse(result, API_ERROR_UNAVAILABLE, "The clock cannot be read.");
	*now_out = now;
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

/* The durable, group-committed submission, and what its refusals mean to the provider. *stamp
 * gets the epoch of the first snapshot that may hold the registration. */
static enum api_error store_registration(const struct submit_context *context, const struct registration *r,
                                         const struct note *note, const uint8_t *body, size_t len,
                                         const uint8_t digest[32], uint64_t now, uint64_t *stamp,
                                         struct submit_result *result)
{
	const struct config *config = context->config;
	uint8_t *endpoint_ids = malloc(r->endpoint_count * ENDPOINT_ID_SIZE + 1);
	if (!endpoint_ids)
		return refuse(result, API_ERROR_INTERNAL, "Out of memory.");
	for (size_t i = 0; i < r->endpoint_count; i++)
		memcpy(endpoint_ids + i * ENDPOINT_ID_SIZE, r->endpoints[i].endpoint_id, ENDPOINT_ID_SIZE);
	struct store_registration record = {
	    .namespace_name = r->namespace_name,
	    .service_id = r->service_id,
	    .provider = r->provider.name,
	    .sequence = r->sequence,
	    .expires = r->expires,
	    .endpoint_ids = endpoint_ids,
	    .endpoint_count = r->endpoint_count,
	    .note = body,
	    .note_len = len,
	    .parsed = r,
	    .signature = &note->signatures[0],
	    .digest = digest,
	    .epoch = schedule_destination_epoch(&config->epoch, now),
	    .max_records = config->bounds.records_per_snapshot,
	    .max_bytes = config->bounds.namespace_bytes,
	};
	int rc = store_registration_submit(context->store, &record, stamp);
	free(endpoint_ids);
	switch (rc) {
	case 0:
		return API_ERROR_NONE;
	case DIRAUTH_ERR_ROLLBACK:
		return refuse(result, API_ERROR_ROLLBACK,
		              "The sequence %llu is not greater than the highest accepted for this service.",
		              (unsigned long long)r->sequence);
	case DIRAUTH_ERR_COLLISION: {
		enum api_error error = classify_collision(context, r);
		return refuse(result, error, "%s", api_error_detail(error));
	}
	case DIRAUTH_ERR_BOUNDS:
		return refuse(result, API_ERROR_NAMESPACE_FULL,
		              "The namespace '%s' holds as many records or bytes as its snapshot may; "
		              "nothing was stored.",
		              r->namespace_name);
	case DIRAUTH_ERR_FULL:
		return refuse(result, API_ERROR_STORE_FULL, "The store is full; nothing was stored.");
	case DIRAUTH_ERR_UNAVAILABLE:
		return refuse(result, API_ERROR_UNAVAILABLE, "The store is not accepting submissions.");
	default:
		return refuse(result, API_ERROR_INTERNAL, "The store failed: %s", dirauth_strerror(rc));
	}
}

enum api_error submit_registration(const struct submit_context *context, const uint8_t *body, size_t len,
                                   struct submit_result *result)
{
	const struct config *config = context->config;
	struct note *note = NULL;
	struct registration r;
	enum api_error error;
	uint64_t now = 0, accepted_at;
	char why[SIGNER_HEALTH_DETAIL_MAX];

	memset(&r, 0, sizeof r);
	result->error = API_ERROR_NONE;
	result->detail[0] = 0;
	buffer_init(&result->receipt);

	if (len > config->bounds.registration_body)
		return refuse(result, API_ERROR_BODY_TOO_LARGE, "The body is larger than %zu bytes.",
		              config->bounds.registration_body);
	if ((error = check_grammar(body, len, &r, &note, result)) ||
	    (error = check_enrolment(config, &r, note, result)))
		goto cleanup;
	if ((error = check_bounds_and_times(context, &r, &now, result)))
		goto cleanup;
	/* Nothing is stored that cannot get a receipt now: the signer must be answering. */
	if (signer_health_check(context->signer_health, why, sizeof why) != 0) {
		error = refuse(result, API_ERROR_UNAVAILABLE, "Nothing was stored: %s.", why);
		goto cleanup;
	}
	uint64_t stamp = 0;
	uint8_t digest[32];
	if (crypto_sha256(body, len, digest) != 0) {
		error = refuse(result, API_ERROR_INTERNAL, "The note could not be hashed.");
		goto cleanup;
	}
	if ((error = store_registration(context, &r, note, body, len, digest, now, &stamp, result)))
		goto cleanup;
	/* Durable. The receipt promises the snapshot the store stamped it for. */
	if (clock_now(context->clock, &accepted_at) != 0 || accepted_at < now)
		accepted_at = now;
	error = sign_receipt(context, &r, digest, accepted_at, stamp, result);
cleanup:
	registration_clear(&r);
	note_free(note);
	if (error != API_ERROR_NONE)
		buffer_free(&result->receipt);
	return error;
}
