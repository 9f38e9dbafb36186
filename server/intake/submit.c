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
                                   const uint8_t *body, size_t len, uint64_t accepted_at, uint64_t publish_by,
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
	int rc = crypto_sha256(body, len, receipt.registration_digest);
	if (rc == 0)
		rc = receipt_encode(&receipt, &text);
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

enum api_error submit_registration(const struct submit_context *context, const uint8_t *body, size_t len,
                                   struct submit_result *result)
{
	const struct config *config = context->config;
	struct note *note = NULL;
	struct registration r, checked;
	uint8_t *endpoint_ids = NULL;
	enum api_error error = API_ERROR_NONE;
	uint64_t now;
	int rc;

	memset(&r, 0, sizeof r);
	memset(&checked, 0, sizeof checked);
	result->error = API_ERROR_NONE;
	result->detail[0] = 0;
	buffer_init(&result->receipt);

	if (len > config->bounds.registration_body)
		return refuse(result, API_ERROR_BODY_TOO_LARGE, "The body is larger than %zu bytes.",
		              config->bounds.registration_body);
	if ((rc = note_parse(body, len, &note)) != 0) {
		error = rc == DIRAUTH_ERR_NOMEM
		            ? refuse(result, API_ERROR_INTERNAL, "Out of memory.")
		            : refuse(result, API_ERROR_MALFORMED, "The body is not a signed note: %s",
		                     dirauth_strerror(rc));
		goto cleanup;
	}
	if ((rc = registration_parse(note->text, note->text_len, &r)) != 0) {
		error = refuse(result, API_ERROR_MALFORMED, "The note is not a registration: %s",
		               dirauth_strerror(rc));
		goto cleanup;
	}
	int namespace_index = config_namespace_index(config, r.namespace_name, strlen(r.namespace_name));
	if (namespace_index < 0) {
		error = refuse(result, API_ERROR_UNKNOWN_NAMESPACE, "The namespace '%s' is not served here.",
		               r.namespace_name);
		goto cleanup;
	}
	const struct config_provider *provider = config_provider_find(config, &r.provider);
	if (!provider) {
		error = refuse(result, API_ERROR_UNKNOWN_PROVIDER, "The provider key '%s' is not enrolled.",
		               r.provider.name);
		goto cleanup;
	}
	if ((rc = registration_parse_signed(body, len, &checked, NULL)) != 0) {
		if (rc == DIRAUTH_ERR_SIGNATURE || rc == DIRAUTH_ERR_UNKNOWN_KEY)
			error = refuse(result, API_ERROR_BAD_SIGNATURE,
			               "The note carries no valid signature by '%s'.", r.provider.name);
		else if (rc == DIRAUTH_ERR_SYNTAX || rc == DIRAUTH_ERR_BOUNDS)
			error = refuse(result, API_ERROR_MALFORMED, "%s", dirauth_strerror(rc));
		else
			error = refuse(result, API_ERROR_INTERNAL, "The signature could not be checked: %s",
			               dirauth_strerror(rc));
		goto cleanup;
	}
	if (!(provider->namespace_mask & ((uint64_t)1 << namespace_index))) {
		error = refuse(result, API_ERROR_NAMESPACE_NOT_ALLOWED,
		               "The provider '%s' is not enrolled for the namespace '%s'.", r.provider.name,
		               r.namespace_name);
		goto cleanup;
	}
	if (!(provider->class_mask & ((uint32_t)1 << r.service_class))) {
		error = refuse(result, API_ERROR_CLASS_NOT_ALLOWED,
		               "The provider '%s' is not enrolled for the class '%s'.", r.provider.name,
		               service_class_name(r.service_class));
		goto cleanup;
	}
	if (r.endpoint_count > config->bounds.endpoints_per_service) {
		error =
		    refuse(result, API_ERROR_TOO_MANY_ENDPOINTS, "%zu endpoints; at most %zu are allowed.",
		           r.endpoint_count, config->bounds.endpoints_per_service);
		goto cleanup;
	}
	if ((rc = clock_now(context->clock, &now)) != 0) {
		error = refuse(result, API_ERROR_UNAVAILABLE, "The clock cannot be read.");
		goto cleanup;
	}
	if (r.expires - r.issued_at > config->bounds.max_validity_seconds) {
		error =
		    refuse(result, API_ERROR_VALIDITY_TOO_LONG, "The validity is %llu seconds; at most %llu.",
		           (unsigned long long)(r.expires - r.issued_at),
		           (unsigned long long)config->bounds.max_validity_seconds);
		goto cleanup;
	}
	if (r.expires <= now) {
		error = refuse(result, API_ERROR_EXPIRED, "The registration expired at %llu; it is now %llu.",
		               (unsigned long long)r.expires, (unsigned long long)now);
		goto cleanup;
	}
	if (r.issued_at > now + config->bounds.clock_skew_seconds) {
		error = refuse(
		    result, API_ERROR_ISSUED_IN_FUTURE,
		    "The registration is issued at %llu; it is now %llu and the allowed skew is %llu s.",
		    (unsigned long long)r.issued_at, (unsigned long long)now,
		    (unsigned long long)config->bounds.clock_skew_seconds);
		goto cleanup;
	}

	/* Nothing is stored that cannot get a receipt now: the signer must be answering. */
	char why[SIGNER_HEALTH_DETAIL_MAX];
	if (signer_health_check(context->signer_health, why, sizeof why) != 0) {
		error = refuse(result, API_ERROR_UNAVAILABLE, "Nothing was stored: %s.", why);
		goto cleanup;
	}

	endpoint_ids = malloc(r.endpoint_count * ENDPOINT_ID_SIZE + 1);
	if (!endpoint_ids) {
		error = refuse(result, API_ERROR_INTERNAL, "Out of memory.");
		goto cleanup;
	}
	for (size_t i = 0; i < r.endpoint_count; i++)
		memcpy(endpoint_ids + i * ENDPOINT_ID_SIZE, r.endpoints[i].endpoint_id, ENDPOINT_ID_SIZE);
	struct store_registration record = {
	    .namespace_name = r.namespace_name,
	    .service_id = r.service_id,
	    .provider = r.provider.name,
	    .sequence = r.sequence,
	    .expires = r.expires,
	    .endpoint_ids = endpoint_ids,
	    .endpoint_count = r.endpoint_count,
	    .note = body,
	    .note_len = len,
	};
	rc = store_registration_submit(context->store, &record);
	switch (rc) {
	case 0:
		break;
	case DIRAUTH_ERR_ROLLBACK:
		error = refuse(result, API_ERROR_ROLLBACK,
		               "The sequence %llu is not greater than the highest accepted for this service.",
		               (unsigned long long)r.sequence);
		goto cleanup;
	case DIRAUTH_ERR_COLLISION:
		error = classify_collision(context, &r);
		refuse(result, error, "%s", api_error_detail(error));
		goto cleanup;
	case DIRAUTH_ERR_FULL:
		error = refuse(result, API_ERROR_STORE_FULL, "The store is full.");
		goto cleanup;
	case DIRAUTH_ERR_UNAVAILABLE:
		error = refuse(result, API_ERROR_UNAVAILABLE, "The store is not accepting submissions.");
		goto cleanup;
	default:
		error = refuse(result, API_ERROR_INTERNAL, "The store failed: %s", dirauth_strerror(rc));
		goto cleanup;
	}

	/* Durable. The snapshot of the epoch current after the commit is built after it, so it
	 * holds this registration at the latest one epoch later. If the clock cannot be read now,
	 * promise one more epoch than the time read before the commit would. */
	uint64_t accepted_at = now, epoch = 0, publish_by;
	int clock_ok = clock_now(context->clock, &accepted_at) == 0;
	if (!clock_ok)
		accepted_at = now;
	if (schedule_epoch_of(&config->epoch, accepted_at, &epoch) == 0)
		publish_by = epoch + (clock_ok ? 1 : 2);
	else
		publish_by = 0; /* before genesis: the first snapshot holds it */
	error = sign_receipt(context, &r, body, len, accepted_at, publish_by, result);
cleanup:
	free(endpoint_ids);
	registration_clear(&checked);
	registration_clear(&r);
	note_free(note);
	if (error != API_ERROR_NONE)
		buffer_free(&result->receipt);
	return error;
}
