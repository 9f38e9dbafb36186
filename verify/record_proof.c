/*
 * record_proof.c: a record shard judged against a verified header, and one service looked up in
 * it (record_proof.h; the rules are schema/record-shard.md, "Verification").
 *
 * The order of the checks follows what each one needs: the grammar first (nothing is believed
 * of bytes that do not parse), then the shard's claims about its snapshot against the header
 * (cheap, and the most common mistake: a shard of another epoch), then the run's shape and the
 * ids its notes carry, then the range proof (hashing every note of the run), and only then the
 * signatures, on the one record asked for and its health statements. A lookup thus costs one
 * provider signature, one per health statement of the service, and about a hundred hashes.
 */
#include "verify/record_proof.h"

#include "base/error.h"
#include "schema/encoding.h"
#include "schema/note.h"
#include "schema/revocation.h"
#include "verify/detail.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void verify_record_clear(struct verify_record *record)
{
	if (!record)
		return;
	registration_clear(&record->registration);
	free(record->health);
	free(record->revocations);
	memset(record, 0, sizeof(*record));
}

/* Where a record of the run lies relative to the shard. */
static int shard_side(const uint8_t id[SERVICE_ID_SIZE], const struct record_shard *shard)
{
	uint32_t of = record_shard_of(id, shard->bits);
	return of < shard->index ? -1 : of > shard->index ? 1 : 0;
}

/* The registration of every record of the run, parsed without its signature (which the
 * authorities checked, and the lookup checks again for the record it returns). */
static void registrations_free(struct registration *registrations, size_t count)
{
	for (size_t i = 0; registrations && i < count; i++)
		registration_clear(&registrations[i]);
	free(registrations);
}

/* Steps 1 to 5 of record-shard.md; on success *out holds the shard and *registrations the run's
 * registrations (the caller frees both). */
static int shard_check(const struct snapshot_header *header, const uint8_t *bytes, size_t len,
                       struct record_shard **out, struct registration **registrations_out, char *detail,
                       size_t detail_cap)
{
	struct record_shard *shard = NULL;
	struct registration *registrations = NULL;
	char name[RECORD_SHARD_NAME_MAX + 1] = "?";
	int rc = record_shard_parse(bytes, len, &shard);
	*out = NULL;
	*registrations_out = NULL;
	if (rc) {
		verify_detail_set(detail, detail_cap, "record shard: not a record shard (%s)",
		                  dirauth_strerror(rc));
		return rc;
	}
	record_shard_name(shard->index, shard->bits, name);
	if (strcmp(shard->namespace_name, header->namespace_name) != 0 || shard->epoch != header->epoch ||
	    shard->record_count != header->record_count ||
	    memcmp(shard->records_root, header->records_root, MERKLE_HASH_SIZE) != 0) {
		verify_detail_set(
		    detail, detail_cap,
		    "record shard: a shard of another snapshot (namespace '%s', epoch %" PRIu64 ", %" PRIu64
		    " records), not of the header's (namespace '%s', epoch %" PRIu64 ", %" PRIu64 " records)",
		    shard->namespace_name, shard->epoch, shard->record_count, header->namespace_name,
		    header->epoch, header->record_count);
		rc = DIRAUTH_ERR_MISMATCH;
		goto cleanup;
	}
	if (header->record_count > 0 && shard->run_count == 0) {
		verify_detail_set(detail, detail_cap,
		                  "record shard %s: an empty run of a snapshot of %" PRIu64 " records", name,
		                  header->record_count);
		rc = DIRAUTH_ERR_MISMATCH;
		goto cleanup;
	}
	if (shard->run_count > 0 && !(registrations = calloc(shard->run_count, sizeof(*registrations)))) {
		rc = DIRAUTH_ERR_NOMEM;
		goto cleanup;
	}
	size_t below = 0, above = 0;
	for (size_t i = 0; i < shard->run_count; i++) {
		const struct snapshot_record *record = &shard->records[i];
		struct note *note = NULL;
		rc = registration_parse_note(record->note, record->note_len, &registrations[i], &note);
		note_free(note);
		if (rc) {
			verify_detail_set(detail, detail_cap,
			                  "record shard %s: leaf %" PRIu64 " is not a registration (%s)",
			                  name, shard->first + i, dirauth_strerror(rc));
			goto cleanup;
		}
		if (strcmp(registrations[i].namespace_name, header->namespace_name) != 0 ||
		    memcmp(registrations[i].service_id, record->service_id, SERVICE_ID_SIZE) != 0) {
			verify_detail_set(detail, detail_cap,
			                  "record shard %s: leaf %" PRIu64
			                  " is not the service its record line names",
			                  name, shard->first + i);
			rc = DIRAUTH_ERR_MISMATCH;
			goto cleanup;
		}
		int side = shard_side(record->service_id, shard);
		below += side < 0;
		above += side > 0;
		if ((side < 0 && i != 0) || (side > 0 && i + 1 != shard->run_count)) {
			rc = DIRAUTH_ERR_MISMATCH;
			break;
		}
	}
	if (rc == 0 && (below > 1 || above > 1 || (shard->first > 0 && below != 1) ||
	                (shard->first + shard->run_count < shard->record_count && above != 1)))
		rc = DIRAUTH_ERR_MISMATCH;
	if (rc) {
		verify_detail_set(detail, detail_cap,
		                  "record shard %s: the run of leaves %" PRIu64 " to %" PRIu64
		                  " does not bracket the shard (one record before it unless at leaf 0, one "
		                  "after it unless at the last leaf, every other one in it)",
		                  name, shard->first, shard->first + shard->run_count);
		goto cleanup;
	}
	if ((rc = record_shard_check_proof(shard, header->records_root)) != 0) {
		verify_detail_set(detail, detail_cap,
		                  "record shard %s: the range proof of leaves %" PRIu64 " to %" PRIu64
		                  " does not rebuild the header's records-root",
		                  name, shard->first, shard->first + shard->run_count);
		goto cleanup;
	}
	if (header->consensus_method < 2 && (shard->health_count > 0 || shard->revocation_count > 0)) {
		verify_detail_set(
		    detail, detail_cap,
		    "record shard %s: health or revocation entries under consensus-method %" PRIu64, name,
		    header->consensus_method);
		rc = DIRAUTH_ERR_SYNTAX;
		goto cleanup;
	}
	for (size_t h = 0; h < shard->health_count; h++) {
		const struct snapshot_health *entry = &shard->health[h];
		const struct registration *listed = NULL;
		for (size_t i = 0; i < shard->run_count && !listed; i++)
			if (memcmp(shard->records[i].service_id, entry->service_id, SERVICE_ID_SIZE) == 0 &&
			    shard_side(entry->service_id, shard) == 0)
				listed = &registrations[i];
		if (!listed || !registration_find_endpoint(listed, entry->endpoint_id)) {
			verify_detail_set(
			    detail, detail_cap,
			    "record shard %s: health entry %zu names no endpoint of a record of the shard",
			    name, h);
			rc = DIRAUTH_ERR_MISMATCH;
			goto cleanup;
		}
	}
	for (size_t r = 0; r < shard->revocation_count; r++)
		if (shard_side(shard->revocations[r].service_id, shard) != 0) {
			verify_detail_set(detail, detail_cap,
			                  "record shard %s: revocation entry %zu is outside the shard", name,
			                  r);
			rc = DIRAUTH_ERR_MISMATCH;
			goto cleanup;
		}
cleanup:
	if (rc) {
		registrations_free(registrations, shard->run_count);
		record_shard_free(shard);
		return rc;
	}
	*out = shard;
	*registrations_out = registrations;
	verify_detail_clear(detail, detail_cap);
	return 0;
}

int verify_record_shard(const struct snapshot_header *header, const uint8_t *bytes, size_t len,
                        uint32_t index, char *detail, size_t detail_cap)
{
	struct record_shard *shard;
	struct registration *registrations;
	int rc = shard_check(header, bytes, len, &shard, &registrations, detail, detail_cap);
	if (rc)
		return rc;
	if (shard->index != index) {
		char name[RECORD_SHARD_NAME_MAX + 1], expected[RECORD_SHARD_NAME_MAX + 1] = "?";
		record_shard_name(shard->index, shard->bits, name);
		record_shard_name(index, shard->bits, expected);
		verify_detail_set(detail, detail_cap, "record shard: wrong shard: %s, not %s", name,
		                  expected);
		rc = DIRAUTH_ERR_MISMATCH;
	}
	registrations_free(registrations, shard->run_count);
	record_shard_free(shard);
	return rc;
}

/* The present record's health entries, each checked as a body's. */
static int present_health(const struct snapshot_header *header, const struct record_shard *shard,
                          struct verify_record *out, char *detail, size_t detail_cap)
{
	uint64_t freshness = (header->fresh_until - header->valid_after) * SNAPSHOT_HEALTH_FRESH_EPOCHS;
	size_t count = 0;
	for (size_t h = 0; h < shard->health_count; h++)
		count +=
		    memcmp(shard->health[h].service_id, out->registration.service_id, SERVICE_ID_SIZE) == 0;
	if (count == 0)
		return 0;
	if (!(out->health = calloc(count, sizeof(*out->health))))
		return DIRAUTH_ERR_NOMEM;
	for (size_t h = 0; h < shard->health_count; h++) {
		const struct snapshot_health *entry = &shard->health[h];
		if (memcmp(entry->service_id, out->registration.service_id, SERVICE_ID_SIZE) != 0)
			continue;
		struct health_statement statement;
		char endpoint_hex[2 * ENDPOINT_ID_SIZE + 1];
		hex_encode(entry->endpoint_id, ENDPOINT_ID_SIZE, endpoint_hex);
		int rc =
		    health_parse_signed(entry->note, entry->note_len, &out->registration, &statement, NULL);
		if (rc == 0 &&
		    (memcmp(statement.endpoint_id, entry->endpoint_id, ENDPOINT_ID_SIZE) != 0 ||
		     statement.health_class != entry->health_class || statement.signer != entry->signer))
			rc = DIRAUTH_ERR_MISMATCH;
		if (rc == 0 && health_is_stale(statement.issued_at, freshness, header->valid_after))
			rc = DIRAUTH_ERR_STALE;
		if (rc) {
			verify_detail_set(detail, detail_cap,
			                  "record shard: the health of endpoint %s is refused (%s)",
			                  endpoint_hex, dirauth_strerror(rc));
			return rc;
		}
		struct verify_record_health *result = &out->health[out->health_count++];
		memcpy(result->endpoint_id, entry->endpoint_id, ENDPOINT_ID_SIZE);
		result->health_class = statement.health_class;
		result->signer = statement.signer;
		result->has_capacity = statement.has_capacity;
		result->capacity = statement.capacity;
		result->issued_at = statement.issued_at;
	}
	return 0;
}

/* The revocation entries of an absent service, each checked as a body's. */
static int absent_revocations(const struct snapshot_header *header, const struct record_shard *shard,
                              const uint8_t service_id[SERVICE_ID_SIZE], struct verify_record *out,
                              char *detail, size_t detail_cap)
{
	size_t count = 0;
	for (size_t r = 0; r < shard->revocation_count; r++)
		count += memcmp(shard->revocations[r].service_id, service_id, SERVICE_ID_SIZE) == 0;
	if (count == 0)
		return 0;
	if (!(out->revocations = calloc(count, sizeof(*out->revocations))))
		return DIRAUTH_ERR_NOMEM;
	for (size_t r = 0; r < shard->revocation_count; r++) {
		const struct snapshot_revocation *entry = &shard->revocations[r];
		if (memcmp(entry->service_id, service_id, SERVICE_ID_SIZE) != 0)
			continue;
		int rc = snapshot_revocation_note_check(entry, header->namespace_name);
		if (rc == 0 && entry->since > header->epoch)
			rc = DIRAUTH_ERR_MISMATCH;
		if (rc) {
			verify_detail_set(detail, detail_cap,
			                  "record shard: revocation entry %zu is refused (%s)", r,
			                  dirauth_strerror(rc));
			return rc;
		}
		struct verify_record_revocation *result = &out->revocations[out->revocation_count++];
		result->has_endpoint = entry->has_endpoint;
		memcpy(result->endpoint_id, entry->endpoint_id, ENDPOINT_ID_SIZE);
		result->since = entry->since;
	}
	return 0;
}

int verify_record_proof(const struct snapshot_header *header, const uint8_t *bytes, size_t len,
                        const uint8_t service_id[SERVICE_ID_SIZE], struct verify_record *out, char *detail,
                        size_t detail_cap)
{
	struct record_shard *shard;
	struct registration *registrations;
	unsigned bits;
	memset(out, 0, sizeof(*out));
	int rc = record_shard_bits(header->record_count, &bits);
	if (rc) {
		verify_detail_set(detail, detail_cap,
		                  "record shard: the header's %" PRIu64 " records have no shards",
		                  header->record_count);
		return rc;
	}
	if ((rc = shard_check(header, bytes, len, &shard, &registrations, detail, detail_cap)) != 0)
		return rc;
	uint32_t wanted = record_shard_of(service_id, bits);
	if (shard->index != wanted) {
		char name[RECORD_SHARD_NAME_MAX + 1], expected[RECORD_SHARD_NAME_MAX + 1];
		record_shard_name(shard->index, bits, name);
		record_shard_name(wanted, bits, expected);
		verify_detail_set(detail, detail_cap,
		                  "record shard: wrong shard: %s, the service is in shard %s", name,
		                  expected);
		rc = DIRAUTH_ERR_MISMATCH;
		goto cleanup;
	}
	size_t position = 0;
	while (position < shard->run_count &&
	       memcmp(shard->records[position].service_id, service_id, SERVICE_ID_SIZE) < 0)
		position++;
	out->leaf_index = shard->first + position;
	if (position < shard->run_count &&
	    memcmp(shard->records[position].service_id, service_id, SERVICE_ID_SIZE) == 0) {
		const struct snapshot_record *record = &shard->records[position];
		out->present = 1;
		out->note = record->note;
		out->note_len = record->note_len;
		rc = registration_parse_signed(record->note, record->note_len, &out->registration, NULL);
		if (rc) {
			verify_detail_set(detail, detail_cap,
			                  "record shard: the record's provider signature is refused (%s)",
			                  dirauth_strerror(rc));
			goto cleanup;
		}
		if (out->registration.expires <= header->valid_after) {
			verify_detail_set(detail, detail_cap,
			                  "record shard: the record expired at %" PRIu64
			                  ", before the header's valid-after %" PRIu64,
			                  out->registration.expires, header->valid_after);
			rc = DIRAUTH_ERR_STALE;
			goto cleanup;
		}
		rc = present_health(header, shard, out, detail, detail_cap);
	} else {
		out->has_before = position > 0;
		if (out->has_before)
			memcpy(out->before_id, shard->records[position - 1].service_id, SERVICE_ID_SIZE);
		out->has_after = position < shard->run_count;
		if (out->has_after)
			memcpy(out->after_id, shard->records[position].service_id, SERVICE_ID_SIZE);
		rc = absent_revocations(header, shard, service_id, out, detail, detail_cap);
	}
cleanup:
	registrations_free(registrations, shard->run_count);
	record_shard_free(shard);
	if (rc)
		verify_record_clear(out);
	return rc;
}
