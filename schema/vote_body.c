/*
 * vote_body.c: the codec of a vote body, the list of registration versions one authority holds.
 *
 * A vote body is what the consensus rule reads, and it arrives from a peer: up to
 * records-per-snapshot lines (a million by default) that no one but its authority vouches for.
 * So the parser is written like the snapshot body's: it bounds the whole input by what
 * max_records lines could take, refuses a count larger than the bound or than the remaining bytes
 * could hold before it allocates, and reads each line under a fixed length. Every field has one
 * spelling (canonical decimals, lower-case hex, names by schema/names.h, single spaces, sorted
 * unique service ids), so the bytes it accepts are exactly those the encoder writes and one vote
 * body has one SHA-256.
 *
 * After the preamble the body is a sequence of sections, each "<keyword> <count>" and count item
 * lines. Version 1 knows the records section only; each section is an entry of a table read by
 * lines_read_section() (schema/lines.h), and the check for the end of input after the last known section is
 * what makes a parser refuse sections it does not know (schema/vote-body.md, "Sections"). Method 2's health
 * and revocation sections are read by vote_body_parse_sections() only, with their own longer line
 * bound and their own counts; vote_body_parse() stays the method-1 parser.
 */
#include "schema/vote_body.h"

#include "schema/encoding.h"
#include "base/error.h"
#include "schema/lines.h"
#include "schema/names.h"
#include "schema/revocation.h"

#include <stdlib.h>
#include <string.h>

size_t vote_body_max_bytes(size_t max_records)
{
	if (max_records > (SIZE_MAX - VOTE_BODY_PREAMBLE_MAX_BYTES) / VOTE_BODY_RECORD_MAX_BYTES)
		return SIZE_MAX;
	return VOTE_BODY_PREAMBLE_MAX_BYTES + max_records * VOTE_BODY_RECORD_MAX_BYTES;
}

int vote_body_record_same(const struct vote_body_record *a, const struct vote_body_record *b)
{
	return memcmp(a->service_id, b->service_id, SERVICE_ID_SIZE) == 0 && a->sequence == b->sequence &&
	       memcmp(a->registration_sha256, b->registration_sha256, 32) == 0;
}

int vote_body_health_compare(const struct vote_body_health *a, const struct vote_body_health *b)
{
	int order = memcmp(a->service_id, b->service_id, SERVICE_ID_SIZE);
	return order ? order : memcmp(a->endpoint_id, b->endpoint_id, ENDPOINT_ID_SIZE);
}

int vote_body_revocation_compare(const struct vote_body_revocation *a, const struct vote_body_revocation *b)
{
	int order = revocation_target_compare(a->service_id, a->has_endpoint, a->endpoint_id, b->service_id,
	                                      b->has_endpoint, b->endpoint_id);
	return order ? order : memcmp(a->revocation_sha256, b->revocation_sha256, 32);
}

static int sections_check(const struct vote_body *body)
{
	if ((body->health_count > 0 && !body->health) || (body->revocation_count > 0 && !body->revocations))
		return DIRAUTH_ERR_SYNTAX;
	for (size_t i = 0; i < body->health_count; i++) {
		if (body->health[i].sequence == 0)
			return DIRAUTH_ERR_SYNTAX;
		if (i > 0 && vote_body_health_compare(&body->health[i - 1], &body->health[i]) >= 0)
			return DIRAUTH_ERR_SYNTAX;
	}
	for (size_t i = 0; i < body->revocation_count; i++) {
		if (body->revocations[i].has_endpoint != 0 && body->revocations[i].has_endpoint != 1)
			return DIRAUTH_ERR_SYNTAX;
		if (i > 0 &&
		    vote_body_revocation_compare(&body->revocations[i - 1], &body->revocations[i]) >= 0)
			return DIRAUTH_ERR_SYNTAX;
	}
	return 0;
}

static int body_check(const struct vote_body *body)
{
	if (!text_field_is_name(body->namespace_name, sizeof(body->namespace_name), NAMESPACE_NAME_MAX) ||
	    !names_key_name_field_is_ascii(body->authority, sizeof(body->authority)))
		return DIRAUTH_ERR_SYNTAX;
	if (body->record_count > 0 && !body->records)
		return DIRAUTH_ERR_SYNTAX;
	for (size_t i = 0; i < body->record_count; i++) {
		if (body->records[i].sequence == 0)
			return DIRAUTH_ERR_SYNTAX;
		if (i > 0 && memcmp(body->records[i - 1].service_id, body->records[i].service_id,
		                    SERVICE_ID_SIZE) >= 0)
			return DIRAUTH_ERR_SYNTAX;
	}
	return sections_check(body);
}

/* The method-2 sections of body, each only when it has items. */
static int encode_sections(const struct vote_body *body, struct buffer *out)
{
	int rc = 0;
	if (body->health_count > 0)
		rc = buffer_appendf(out, "health %llu\n", (unsigned long long)body->health_count);
	for (size_t i = 0; rc == 0 && i < body->health_count; i++) {
		const struct vote_body_health *h = &body->health[i];
		char service_hex[2 * SERVICE_ID_SIZE + 1], endpoint_hex[2 * ENDPOINT_ID_SIZE + 1],
		    digest_hex[65];
		hex_encode(h->service_id, SERVICE_ID_SIZE, service_hex);
		hex_encode(h->endpoint_id, ENDPOINT_ID_SIZE, endpoint_hex);
		hex_encode(h->statement_sha256, 32, digest_hex);
		rc = buffer_appendf(out, "health %s %s %llu %llu %s\n", service_hex, endpoint_hex,
		                    (unsigned long long)h->issued_at, (unsigned long long)h->sequence,
		                    digest_hex);
	}
	if (rc == 0 && body->revocation_count > 0)
		rc = buffer_appendf(out, "revocations %llu\n", (unsigned long long)body->revocation_count);
	for (size_t i = 0; rc == 0 && i < body->revocation_count; i++) {
		const struct vote_body_revocation *r = &body->revocations[i];
		char target[REVOCATION_TARGET_TEXT_SIZE], digest_hex[65];
		revocation_target_format(r->service_id, r->has_endpoint, r->endpoint_id, target);
		hex_encode(r->revocation_sha256, 32, digest_hex);
		rc = buffer_appendf(out, "revocation %s %s\n", target, digest_hex);
	}
	return rc;
}

int vote_body_encode(const struct vote_body *body, struct buffer *out)
{
	int rc = body_check(body);
	if (rc)
		return rc;
	if (body->record_count > BUFFER_MAX / VOTE_BODY_RECORD_MIN_BYTES ||
	    body->health_count > BUFFER_MAX / VOTE_BODY_HEALTH_MIN_BYTES ||
	    body->revocation_count > BUFFER_MAX / VOTE_BODY_REVOCATION_MIN_BYTES)
		return DIRAUTH_ERR_BOUNDS;
	size_t start = out->len;
	rc = buffer_appendf(out,
	                    "dirauth vote-body v1\nnamespace %s\nepoch %llu\nauthority %s\nrecords %llu\n",
	                    body->namespace_name, (unsigned long long)body->epoch, body->authority,
	                    (unsigned long long)body->record_count);
	if (rc == 0 && body->record_count > 0)
		rc = buffer_reserve(out, body->record_count * VOTE_BODY_RECORD_MAX_BYTES);
	for (size_t i = 0; rc == 0 && i < body->record_count; i++) {
		const struct vote_body_record *record = &body->records[i];
		char service_hex[2 * SERVICE_ID_SIZE + 1], digest_hex[65];
		hex_encode(record->service_id, SERVICE_ID_SIZE, service_hex);
		hex_encode(record->registration_sha256, 32, digest_hex);
		rc = buffer_appendf(out, "record %s %llu %s\n", service_hex,
		                    (unsigned long long)record->sequence, digest_hex);
	}
	if (rc == 0)
		rc = encode_sections(body, out);
	if (rc)
		buffer_truncate(out, start);
	return rc;
}

void vote_body_free(struct vote_body *body)
{
	if (!body)
		return;
	free(body->records);
	free(body->health);
	free(body->revocations);
	free(body);
}

/* "record <service id> <sequence> <digest>". */
static int read_record(struct line_reader *reader, void *item)
{
	struct vote_body_record *record = item;
	struct text_span value;
	int rc = lines_expect(reader, "record", &value);
	if (rc)
		return rc;
	if ((rc = text_next_hex(&value, record->service_id, SERVICE_ID_SIZE)) != 0)
		return rc;
	if ((rc = text_next_u64(&value, &record->sequence)) != 0)
		return rc;
	if (record->sequence == 0)
		return DIRAUTH_ERR_SYNTAX;
	if ((rc = text_next_hex(&value, record->registration_sha256, 32)) != 0)
		return rc;
	if (value.len != 0)
		return DIRAUTH_ERR_SYNTAX;
	return 0;
}

static int record_compare(const void *a, const void *b)
{
	const struct vote_body_record *first = a, *second = b;
	return memcmp(first->service_id, second->service_id, SERVICE_ID_SIZE);
}

static const struct lines_section records_section = {"records", sizeof(struct vote_body_record),
                                                     VOTE_BODY_RECORD_MIN_BYTES, read_record, record_compare};

static int read_records(struct line_reader *reader, size_t max_records, struct vote_body *body)
{
	void *records;
	int rc = lines_read_section(reader, &records_section, max_records, &records, &body->record_count);
	body->records = records;
	return rc;
}

static int read_preamble(struct line_reader *reader, struct vote_body *body)
{
	struct text_span value;
	int rc;
	if ((rc = lines_expect_exact(reader, "dirauth vote-body v1")) != 0 ||
	    (rc = lines_expect_name(reader, "namespace", body->namespace_name,
	                            sizeof(body->namespace_name))) != 0)
		return rc;
	if ((rc = lines_expect_u64(reader, "epoch", &body->epoch)) != 0 ||
	    (rc = lines_expect(reader, "authority", &value)) != 0)
		return rc;
	if (value.len > NOTE_NAME_MAX)
		return DIRAUTH_ERR_BOUNDS;
	if (!names_key_name_is_ascii(value.data, value.len))
		return DIRAUTH_ERR_SYNTAX;
	return text_copy(value, body->authority, sizeof(body->authority));
}

int vote_body_parse(const uint8_t *buf, size_t len, size_t max_records, struct vote_body **out)
{
	struct line_reader reader;
	*out = NULL;
	if (len > vote_body_max_bytes(max_records))
		return DIRAUTH_ERR_BOUNDS;
	struct vote_body *body = calloc(1, sizeof(*body));
	if (!body)
		return DIRAUTH_ERR_NOMEM;
	lines_init(&reader, buf, len, VOTE_BODY_LINE_MAX);
	int rc = read_preamble(&reader, body);
	if (rc == 0)
		rc = read_records(&reader, max_records, body);
	/* Version 1 ends after the records section: a later section is refused here. */
	if (rc == 0 && !lines_at_end(&reader))
		rc = DIRAUTH_ERR_SYNTAX;
	if (rc)
		vote_body_free(body);
	else
		*out = body;
	return rc;
}

size_t vote_body_sections_max_bytes(const struct vote_body_limits *limits)
{
	size_t total = vote_body_max_bytes(limits->max_records);
	if (total == SIZE_MAX || limits->max_health > (SIZE_MAX - total) / VOTE_BODY_HEALTH_MAX_BYTES)
		return SIZE_MAX;
	total += limits->max_health * VOTE_BODY_HEALTH_MAX_BYTES;
	if (limits->max_revocations > (SIZE_MAX - total) / VOTE_BODY_REVOCATION_MAX_BYTES)
		return SIZE_MAX;
	total += limits->max_revocations * VOTE_BODY_REVOCATION_MAX_BYTES;
	if (total > SIZE_MAX - VOTE_BODY_SECTIONS_COUNT_BYTES)
		return SIZE_MAX;
	return total + VOTE_BODY_SECTIONS_COUNT_BYTES;
}

/* "health <service id> <endpoint id> <issued-at> <sequence> <digest>". */
static int read_health(struct line_reader *reader, void *item)
{
	struct vote_body_health *h = item;
	struct text_span value;
	int rc = lines_expect(reader, "health", &value);
	if (rc)
		return rc;
	if ((rc = text_next_hex(&value, h->service_id, SERVICE_ID_SIZE)) != 0)
		return rc;
	if ((rc = text_next_hex(&value, h->endpoint_id, ENDPOINT_ID_SIZE)) != 0)
		return rc;
	if ((rc = text_next_u64(&value, &h->issued_at)) != 0 ||
	    (rc = text_next_u64(&value, &h->sequence)) != 0)
		return rc;
	if (h->sequence == 0)
		return DIRAUTH_ERR_SYNTAX;
	if ((rc = text_next_hex(&value, h->statement_sha256, 32)) != 0)
		return rc;
	if (value.len != 0)
		return DIRAUTH_ERR_SYNTAX;
	return 0;
}

/* "revocation <service id> <endpoint id | -> <digest>". */
static int read_revocation(struct line_reader *reader, void *item)
{
	struct vote_body_revocation *r = item;
	struct text_span value;
	int rc = lines_expect(reader, "revocation", &value);
	if (rc)
		return rc;
	if ((rc = revocation_target_read(&value, r->service_id, &r->has_endpoint, r->endpoint_id)) != 0)
		return rc;
	if ((rc = text_next_hex(&value, r->revocation_sha256, 32)) != 0)
		return rc;
	if (value.len != 0)
		return DIRAUTH_ERR_SYNTAX;
	return 0;
}

static int health_compare(const void *a, const void *b)
{
	return vote_body_health_compare(a, b);
}

static int revocation_compare(const void *a, const void *b)
{
	return vote_body_revocation_compare(a, b);
}

static const struct lines_section health_section = {"health", sizeof(struct vote_body_health),
                                                    VOTE_BODY_HEALTH_MIN_BYTES, read_health, health_compare};
static const struct lines_section revocation_section = {"revocations", sizeof(struct vote_body_revocation),
                                                        VOTE_BODY_REVOCATION_MIN_BYTES, read_revocation,
                                                        revocation_compare};

int vote_body_parse_sections(const uint8_t *buf, size_t len, const struct vote_body_limits *limits,
                             struct vote_body **out)
{
	struct line_reader reader;
	*out = NULL;
	if (len > vote_body_sections_max_bytes(limits))
		return DIRAUTH_ERR_BOUNDS;
	struct vote_body *body = calloc(1, sizeof(*body));
	if (!body)
		return DIRAUTH_ERR_NOMEM;
	lines_init(&reader, buf, len, VOTE_BODY_LINE_MAX);
	int rc = read_preamble(&reader, body);
	if (rc == 0)
		rc = read_records(&reader, limits->max_records, body);
	/* The method-2 sections have longer lines than the records. */
	reader.max_line_length = VOTE_BODY_SECTION_LINE_MAX;
	void *items = NULL;
	if (rc == 0) {
		rc = lines_read_optional_section(&reader, &health_section, limits->max_health, &items,
		                                 &body->health_count);
		body->health = items;
	}
	if (rc == 0) {
		rc = lines_read_optional_section(&reader, &revocation_section, limits->max_revocations,
		                                 &items, &body->revocation_count);
		body->revocations = items;
	}
	/* Anything else, a section out of order or repeated among it, is refused here. */
	if (rc == 0 && !lines_at_end(&reader))
		rc = DIRAUTH_ERR_SYNTAX;
	if (rc)
		vote_body_free(body);
	else
		*out = body;
	return rc;
}
