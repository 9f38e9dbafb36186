/*
 * query.c: the answers a resolver asks for, from the installed snapshot only.
 *
 * Every query first asks whether the snapshot may still be used: past its valid-until by the
 * caller's clock it is refused (DIRAUTH_E_STALE), never answered from, however the update that
 * would replace it failed. The endpoints come from the view's index (view.c), which never holds
 * a draining, unavailable, unknown or revoked endpoint. A sample is drawn with the caller's
 * random bytes alone, uniformly (rejection sampling, no modulo bias), without replacement: the
 * same query twice gives independent samples, and nothing about who asks weighs in.
 */
#include "libdirauth/internal.h"

#include "base/error.h"
#include "schema/encoding.h"
#include "schema/registration.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const health_names[] = {"unpublished", "healthy", "degraded"};

void client_fill_endpoint(const struct registration *registration, size_t endpoint, enum client_health health,
                          struct dirauth_endpoint *o)
{
	const struct endpoint_descriptor *e = &registration->endpoints[endpoint];
	memset(o, 0, sizeof(*o));
	hex_encode(registration->service_id, SERVICE_ID_SIZE, o->service_id);
	hex_encode(e->endpoint_id, ENDPOINT_ID_SIZE, o->endpoint_id);
	snprintf(o->service_class, sizeof(o->service_class), "%s",
	         service_class_name(registration->service_class));
	snprintf(o->transport, sizeof(o->transport), "%s", transport_name(e->transport));
	snprintf(o->address, sizeof(o->address), "%s", e->address);
	snprintf(o->region, sizeof(o->region), "%s", e->region);
	snprintf(o->capacity, sizeof(o->capacity), "%s", capacity_class_name(e->capacity));
	snprintf(o->profile, sizeof(o->profile), "%s", capability_profile_name(e->profile));
	snprintf(o->health, sizeof(o->health), "%s", health_names[health]);
}

/* The view of namespace_name if it may answer now. */
/* Writes the offers [first, first + count) of the view into out, parsing each record once. */
static enum dirauth_status fill(const struct client_view *view, const uint32_t *indexes, size_t count,
                                struct dirauth_endpoint *out, struct dirauth_result *result)
{
	struct registration registration;
	uint32_t parsed_record = UINT32_MAX;
	int have = 0;

	memset(&registration, 0, sizeof(registration));
	for (size_t i = 0; i < count; i++) {
		const struct client_offer *offer = &view->offers[indexes[i]];
		if (!have || parsed_record != offer->record) {
			registration_clear(&registration);
			int rc =
			    client_record_registration(&view->parsed->records[offer->record], &registration);
			if (rc != 0)
				return client_fail(result, client_status_of(rc),
				                   "record %u cannot be read back: %s", offer->record,
				                   dirauth_strerror(rc));
			have = 1;
			parsed_record = offer->record;
		}
		client_fill_endpoint(&registration, offer->endpoint, (enum client_health)offer->health,
		                     &out[i]);
	}
	registration_clear(&registration);
	return DIRAUTH_SUCCESS;
}

static enum dirauth_status class_of(const char *name, enum service_class *out, struct dirauth_result *result)
{
	if (name == NULL || service_class_parse(name, strlen(name), out) != 0)
		return client_fail(result, DIRAUTH_E_ARGUMENT, "'%.64s' is not a service class",
		                   name != NULL ? name : "(null)");
	return DIRAUTH_SUCCESS;
}

/* The fresh installed view of namespace_name in *view and the indexes of its offers of the class
 * named class_name, in order, in a new array *out (NULL on failure) of *count. */
static enum dirauth_status offers_of_class(struct dirauth_context *context, const char *namespace_name,
                                           const char *class_name, const struct client_view **view,
                                           uint32_t **out, size_t *count, struct dirauth_result *result)
{
	enum service_class wanted;
	*out = NULL;
	*count = 0;
	enum dirauth_status status = class_of(class_name, &wanted, result);
	if (status == DIRAUTH_SUCCESS)
		status = client_installed_view(context, namespace_name, true, view, result);
	if (status != DIRAUTH_SUCCESS)
		return status;
	*out = malloc(((*view)->offer_count > 0 ? (*view)->offer_count : 1) * sizeof(**out));
	if (*out == NULL)
		return client_fail(result, DIRAUTH_E_NOMEM, "out of memory");
	for (size_t i = 0; i < (*view)->offer_count; i++)
		if ((*view)->records[(*view)->offers[i].record].service_class == wanted)
			(*out)[(*count)++] = (uint32_t)i;
	return DIRAUTH_SUCCESS;
}

DIRAUTH_EXPORT enum dirauth_status dirauth_service(struct dirauth_context *context,
                                                   const char *namespace_name, const char *service_id,
                                                   struct dirauth_endpoint *out, size_t cap, size_t *count,
                                                   struct dirauth_result *result)
{
	uint8_t id[SERVICE_ID_SIZE];

	client_result_reset(result);
	if (context == NULL || count == NULL || (out == NULL && cap > 0))
		return client_fail(result, DIRAUTH_E_ARGUMENT, "no context or no place for the answer");
	*count = 0;
	if (service_id == NULL || strlen(service_id) != 2 * SERVICE_ID_SIZE ||
	    hex_decode(service_id, 2 * SERVICE_ID_SIZE, id, sizeof(id)) != 0)
		return client_fail(result, DIRAUTH_E_ARGUMENT, "a service id is 64 lower-case hex digits");
	const struct client_view *view;
	enum dirauth_status status = client_installed_view(context, namespace_name, true, &view, result);
	if (status != DIRAUTH_SUCCESS)
		return status;
	size_t low = 0, high = view->parsed->record_count;
	while (low < high) {
		size_t middle = low + (high - low) / 2;
		int order = memcmp(view->parsed->records[middle].service_id, id, SERVICE_ID_SIZE);
		if (order == 0) {
			const struct client_record *record = &view->records[middle];
			uint32_t indexes[REGISTRATION_MAX_ENDPOINTS];
			size_t n = record->offer_count < cap ? record->offer_count : cap;
			for (size_t i = 0; i < n; i++)
				indexes[i] = record->first_offer + (uint32_t)i;
			*count = record->offer_count;
			return fill(view, indexes, n, out, result);
		}
		if (order < 0)
			low = middle + 1;
		else
			high = middle;
	}
	return client_fail(result, DIRAUTH_E_NOT_FOUND, "%s: service %s is not in the snapshot of epoch %llu",
	                   namespace_name, service_id, (unsigned long long)view->header.epoch);
}

DIRAUTH_EXPORT enum dirauth_status dirauth_endpoints(struct dirauth_context *context,
                                                     const char *namespace_name, const char *service_class,
                                                     struct dirauth_endpoint *out, size_t cap, size_t *count,
                                                     struct dirauth_result *result)
{
	const struct client_view *view;
	uint32_t *indexes;
	size_t n;

	client_result_reset(result);
	if (context == NULL || count == NULL || (out == NULL && cap > 0))
		return client_fail(result, DIRAUTH_E_ARGUMENT, "no context or no place for the answer");
	*count = 0;
	enum dirauth_status status =
	    offers_of_class(context, namespace_name, service_class, &view, &indexes, &n, result);
	if (status == DIRAUTH_SUCCESS) {
		*count = n;
		status = fill(view, indexes, n < cap ? n : cap, out, result);
	}
	free(indexes);
	return status;
}

/* A uniform index below bound (> 0) from the caller's random bytes, without modulo bias. */
static int random_below(const struct dirauth_callbacks *callbacks, uint64_t bound, uint64_t *out)
{
	uint64_t limit = UINT64_MAX - UINT64_MAX % bound; /* values at or past it are redrawn */
	/* A true source is redrawn once in 2^63 draws at worst: a source that keeps giving values past
	 * the limit is broken, and is refused rather than looped on. */
	for (int attempt = 0; attempt < 64; attempt++) {
		uint8_t bytes[8];
		uint64_t value = 0;
		if (callbacks->random(callbacks->user, bytes, sizeof(bytes)) != 0)
			return -1;
		for (size_t i = 0; i < 8; i++)
			value = value << 8 | bytes[i];
		if (value < limit) {
			*out = value % bound;
			return 0;
		}
	}
	return -1;
}

DIRAUTH_EXPORT enum dirauth_status dirauth_sample(struct dirauth_context *context, const char *namespace_name,
                                                  const char *service_class, size_t n,
                                                  struct dirauth_endpoint *out, size_t *count,
                                                  struct dirauth_result *result)
{
	const struct client_view *view;
	uint32_t *indexes;
	size_t m;

	client_result_reset(result);
	if (context == NULL || count == NULL || (out == NULL && n > 0))
		return client_fail(result, DIRAUTH_E_ARGUMENT, "no context or no place for the answer");
	*count = 0;
	if (context->callbacks.random == NULL)
		return client_fail(result, DIRAUTH_E_ARGUMENT, "a sample needs the random callback");
	enum dirauth_status status =
	    offers_of_class(context, namespace_name, service_class, &view, &indexes, &m, result);
	if (status != DIRAUTH_SUCCESS)
		return status;
	size_t chosen = n < m ? n : m;
	/* The first chosen places of a Fisher-Yates shuffle. */
	for (size_t i = 0; i < chosen; i++) {
		uint64_t j = 0;
		if (random_below(&context->callbacks, m - i, &j) != 0) {
			free(indexes);
			return client_fail(result, DIRAUTH_E_RANDOM,
			                   "the random source failed: nothing chosen");
		}
		uint32_t swap = indexes[i];
		indexes[i] = indexes[i + j];
		indexes[i + j] = swap;
	}
	status = fill(view, indexes, chosen, out, result);
	if (status == DIRAUTH_SUCCESS)
		*count = chosen;
	free(indexes);
	return status;
}
