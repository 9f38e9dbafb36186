/*
 * view.c: the snapshot installed for a namespace, and the index of what it may offer.
 *
 * The body was verified whole before it gets here (every record's provider signature, every
 * health statement and revocation against the records). Building the view reads each record's
 * registration once and keeps, per endpoint, only whether it may be offered: in a snapshot of
 * consensus method 2, an endpoint is offered when its published health is healthy or degraded
 * (draining: no new sessions; unavailable; no entry at all: unknown, which is never taken for
 * healthy); in a method-1 snapshot, which publishes no health, every endpoint is offered as
 * "unpublished". Whatever a listed revocation names is never offered, although a verified body
 * cannot hold it (snapshot_body_verify_sections refuses such a body): revocation overrides all.
 * And a new body that holds what the installed one's revocations name is refused whole, even
 * when the new snapshot no longer lists them (as a mirror refuses it, ctl/fetch_revocations.h).
 * Queries then fill the caller's entries from the records they point at.
 */
#include "libdirauth/internal.h"

#include "base/error.h"
#include "schema/encoding.h"
#include "schema/registration.h"

#include <stdlib.h>
#include <string.h>

void client_view_clear(struct client_view *view)
{
	buffer_free(&view->header_note);
	buffer_free(&view->body);
	snapshot_body_free(view->parsed);
	free(view->records);
	free(view->offers);
	memset(view, 0, sizeof(*view));
	buffer_init(&view->header_note);
	buffer_init(&view->body);
}

/* The published health entry of an endpoint (the health section is sorted), or NULL. */
static const struct snapshot_health *health_of(const struct snapshot_body *body,
                                               const uint8_t service_id[SERVICE_ID_SIZE],
                                               const uint8_t endpoint_id[ENDPOINT_ID_SIZE])
{
	size_t low = 0, high = body->health_count;
	while (low < high) {
		size_t middle = low + (high - low) / 2;
		const struct snapshot_health *entry = &body->health[middle];
		int order = memcmp(entry->service_id, service_id, SERVICE_ID_SIZE);
		if (order == 0)
			order = memcmp(entry->endpoint_id, endpoint_id, ENDPOINT_ID_SIZE);
		if (order == 0)
			return entry;
		if (order < 0)
			low = middle + 1;
		else
			high = middle;
	}
	return NULL;
}

/* 1 when a listed revocation names the service or the endpoint. */
static int revoked(const struct snapshot_body *body, const uint8_t service_id[SERVICE_ID_SIZE],
                   const uint8_t endpoint_id[ENDPOINT_ID_SIZE])
{
	for (size_t i = 0; i < body->revocation_count; i++) {
		const struct snapshot_revocation *r = &body->revocations[i];
		if (!r->has_endpoint && memcmp(r->service_id, service_id, SERVICE_ID_SIZE) == 0)
			return 1;
		if (r->has_endpoint && memcmp(r->endpoint_id, endpoint_id, ENDPOINT_ID_SIZE) == 0)
			return 1;
	}
	return 0;
}

/* Whether the endpoint may be offered, and as what. */
static int offered(const struct snapshot_header *header, const struct snapshot_body *body,
                   const uint8_t service_id[SERVICE_ID_SIZE], const uint8_t endpoint_id[ENDPOINT_ID_SIZE],
                   uint8_t *health)
{
	if (revoked(body, service_id, endpoint_id))
		return 0;
	if (header->consensus_method < 2) {
		*health = CLIENT_HEALTH_UNPUBLISHED;
		return 1;
	}
	const struct snapshot_health *entry = health_of(body, service_id, endpoint_id);
	if (entry == NULL)
		return 0;
	if (entry->health_class == HEALTH_HEALTHY)
		*health = CLIENT_HEALTH_HEALTHY;
	else if (entry->health_class == HEALTH_DEGRADED)
		*health = CLIENT_HEALTH_DEGRADED;
	else
		return 0;
	return 1;
}

/* Reads one record's registration (verified already, so its signature is not checked again). */
int client_record_registration(const struct snapshot_record *record, struct registration *out)
{
	struct note *note = NULL;
	int rc = note_parse(record->note, record->note_len, &note);
	if (rc == 0)
		rc = registration_parse(note->text, note->text_len, out);
	note_free(note);
	return rc;
}

/* Hard rule 4 on the client's side: a record of the new body that the installed snapshot's
 * revocations name (its service, or one of its endpoints) refuses the body, even when the new
 * snapshot no longer lists the revocation: what was revoked never comes back. */
static enum dirauth_status check_not_revoked_before(const struct client_view *previous,
                                                    const struct registration *registration,
                                                    struct dirauth_result *result)
{
	char service[2 * SERVICE_ID_SIZE + 1], endpoint[2 * ENDPOINT_ID_SIZE + 1];
	if (previous == NULL || !previous->installed || previous->parsed->revocation_count == 0)
		return DIRAUTH_SUCCESS;
	hex_encode(registration->service_id, SERVICE_ID_SIZE, service);
	for (size_t i = 0; i < previous->parsed->revocation_count; i++) {
		const struct snapshot_revocation *r = &previous->parsed->revocations[i];
		if (!r->has_endpoint && memcmp(r->service_id, registration->service_id, SERVICE_ID_SIZE) == 0)
			return client_fail(
			    result, DIRAUTH_E_MISMATCH,
			    "body: service %s, which the held snapshot of epoch %llu revoked: a "
			    "revoked service never comes back",
			    service, (unsigned long long)previous->header.epoch);
	}
	for (size_t j = 0; j < registration->endpoint_count; j++) {
		const uint8_t *endpoint_id = registration->endpoints[j].endpoint_id;
		if (!revoked(previous->parsed, registration->service_id, endpoint_id))
			continue;
		hex_encode(endpoint_id, ENDPOINT_ID_SIZE, endpoint);
		return client_fail(
		    result, DIRAUTH_E_MISMATCH,
		    "body: service %s holds endpoint %s, which the held snapshot of epoch %llu revoked: a "
		    "revoked endpoint never comes back",
		    service, endpoint, (unsigned long long)previous->header.epoch);
	}
	return DIRAUTH_SUCCESS;
}

static enum dirauth_status index_records(struct client_view *view, const struct client_view *previous,
                                         struct dirauth_result *result)
{
	const struct snapshot_body *body = view->parsed;
	size_t capacity = 0;
	struct registration registration;

	view->records = calloc(body->record_count > 0 ? body->record_count : 1, sizeof(*view->records));
	if (view->records == NULL)
		return client_fail(result, DIRAUTH_E_NOMEM, "out of memory");
	for (size_t i = 0; i < body->record_count; i++) {
		int rc = client_record_registration(&body->records[i], &registration);
		if (rc != 0)
			return client_fail(result, client_status_of(rc),
			                   "body: record %zu cannot be read back: %s", i,
			                   dirauth_strerror(rc));
		enum dirauth_status status = check_not_revoked_before(previous, &registration, result);
		if (status != DIRAUTH_SUCCESS) {
			registration_clear(&registration);
			return status;
		}
		view->records[i].service_class = (uint8_t)registration.service_class;
		view->records[i].first_offer = (uint32_t)view->offer_count;
		for (size_t j = 0; j < registration.endpoint_count; j++) {
			uint8_t health = 0;
			if (!offered(&view->header, body, registration.service_id,
			             registration.endpoints[j].endpoint_id, &health))
				continue;
			if (view->offer_count == capacity) {
				size_t grown = capacity == 0 ? 64 : capacity * 2;
				struct client_offer *bigger = realloc(view->offers, grown * sizeof(*bigger));
				if (bigger == NULL) {
					registration_clear(&registration);
					return client_fail(result, DIRAUTH_E_NOMEM, "out of memory");
				}
				view->offers = bigger;
				capacity = grown;
			}
			view->offers[view->offer_count++] =
			    (struct client_offer){(uint32_t)i, (uint32_t)j, health};
			view->records[i].offer_count++;
		}
		registration_clear(&registration);
	}
	return DIRAUTH_SUCCESS;
}

enum dirauth_status client_view_build(struct client_view *view, const struct trust_bundle *bundle,
                                      const uint8_t *note, size_t note_len,
                                      const struct snapshot_header *header, size_t signer_count,
                                      struct buffer *body, const struct client_view *previous, bool indexed,
                                      struct dirauth_result *result)
{
	struct snapshot_body_limits limits;
	enum dirauth_status status;

	client_view_clear(view);
	view->body = *body;
	buffer_init(body);
	view->header = *header;
	view->signer_count = signer_count;
	if (buffer_append(&view->header_note, note, note_len) != 0) {
		client_view_clear(view);
		return client_fail(result, DIRAUTH_E_NOMEM, "out of memory");
	}
	verify_snapshot_body_limits(bundle, &limits);
	int rc = snapshot_body_parse_sections(view->body.data, view->body.len, &limits, &view->parsed);
	if (rc != 0) {
		client_view_clear(view);
		return client_fail(result, client_status_of(rc), "body: cannot be read back: %s",
		                   dirauth_strerror(rc));
	}
	status = indexed ? index_records(view, previous, result) : DIRAUTH_SUCCESS;
	if (status != DIRAUTH_SUCCESS) {
		client_view_clear(view);
		return status;
	}
	view->installed = 1;
	return DIRAUTH_SUCCESS;
}
