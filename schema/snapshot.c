/*
 * snapshot.c: the codec of a snapshot header and body, and the check that binds them.
 *
 * The header is small and co-signed; the body is large, fetched from mirrors that need not be
 * trusted, and is only worth anything once it matches the header. So the body parser is written
 * for hostile input of up to hundreds of megabytes: it never allocates more than the input can
 * justify, checks every length against what remains before using it, and refuses anything but
 * the one canonical layout. snapshot_body_verify() then recomputes every commitment of the header
 * (size, digest, count, Merkle root) and checks every record's own provider signature, so that a
 * client holding a verified snapshot also holds each provider's word for its endpoints.
 *
 * Method 2 adds the health and revocation sections after the records. They are read by their own
 * functions (the method-1 parser still refuses them), framed like records by byte lengths, and
 * verified the same way: each published class against the statement it traces to and the key the
 * registration names for its signer, each revocation against its own key, and no record of the
 * body may be one a listed revocation excludes.
 */
#include "schema/snapshot.h"

#include "crypto/crypto.h"
#include "schema/encoding.h"
#include "base/error.h"
#include "schema/names.h"
#include "schema/lines.h"
#include "schema/revocation.h"

#include <stdlib.h>
#include <string.h>

/* The longest header line is "origin " and a SNAPSHOT_ORIGIN_MAX-byte origin (262 bytes). */
#define SNAPSHOT_HEADER_LINE_MAX  320
/* The longest body line is "record ", 64 hex digits, a space and a 20-digit length (92 bytes). */
#define SNAPSHOT_BODY_LINE_MAX    128
/* The fewest bytes one record can take: "record <64 hex> 1\n" and one byte of note. An input of n
 * bytes cannot hold more than n / SNAPSHOT_RECORD_MIN_BYTES records, which bounds the allocation
 * before any record is read. */
#define SNAPSHOT_RECORD_MIN_BYTES (7 + 2 * SERVICE_ID_SIZE + 1 + 1 + 1 + 1)

static int header_check(const struct snapshot_header *h)
{
	if (!text_field_is_name(h->namespace_name, sizeof(h->namespace_name), NAMESPACE_NAME_MAX) ||
	    !names_origin_field_is_valid(h->origin, sizeof(h->origin)))
		return DIRAUTH_ERR_SYNTAX;
	if (!(h->valid_after < h->fresh_until && h->fresh_until <= h->valid_until))
		return DIRAUTH_ERR_SYNTAX;
	if (h->consensus_method < 1)
		return DIRAUTH_ERR_SYNTAX;
	return 0;
}

int snapshot_header_encode(const struct snapshot_header *h, struct buffer *out)
{
	int rc = header_check(h);
	if (rc)
		return rc;
	char root_hex[65], body_hex[65], previous_hex[65];
	hex_encode(h->records_root, 32, root_hex);
	hex_encode(h->body_sha256, 32, body_hex);
	hex_encode(h->previous, 32, previous_hex);
	size_t start = out->len;
	rc = buffer_appendf(
	    out,
	    "dirauth snapshot v1\nnamespace %s\norigin %s\nepoch %llu\nvalid-after %llu\n"
	    "fresh-until %llu\nvalid-until %llu\nrecords %llu\nrecords-root %s\nbody-size %llu\n"
	    "body-sha256 %s\nprevious %s\nconsensus-method %llu\n",
	    h->namespace_name, h->origin, (unsigned long long)h->epoch, (unsigned long long)h->valid_after,
	    (unsigned long long)h->fresh_until, (unsigned long long)h->valid_until,
	    (unsigned long long)h->record_count, root_hex, (unsigned long long)h->body_size, body_hex,
	    previous_hex, (unsigned long long)h->consensus_method);
	if (rc)
		buffer_truncate(out, start);
	return rc;
}

static int header_parse_fields(const uint8_t *text, size_t len, void *parsed)
{
	struct snapshot_header *out = parsed;
	struct line_reader reader;
	int rc;
	lines_init(&reader, text, len, SNAPSHOT_HEADER_LINE_MAX);
	if ((rc = lines_expect_exact(&reader, "dirauth snapshot v1")) != 0)
		return rc;
	if ((rc = lines_expect_name(&reader, "namespace", out->namespace_name,
	                            sizeof(out->namespace_name))) != 0)
		return rc;
	if ((rc = lines_expect_origin(&reader, out->origin, sizeof(out->origin))) != 0)
		return rc;
	if ((rc = lines_expect_u64(&reader, "epoch", &out->epoch)) != 0 ||
	    (rc = lines_expect_u64(&reader, "valid-after", &out->valid_after)) != 0 ||
	    (rc = lines_expect_u64(&reader, "fresh-until", &out->fresh_until)) != 0 ||
	    (rc = lines_expect_u64(&reader, "valid-until", &out->valid_until)) != 0 ||
	    (rc = lines_expect_u64(&reader, "records", &out->record_count)) != 0 ||
	    (rc = lines_expect_hex(&reader, "records-root", out->records_root, 32)) != 0 ||
	    (rc = lines_expect_u64(&reader, "body-size", &out->body_size)) != 0 ||
	    (rc = lines_expect_hex(&reader, "body-sha256", out->body_sha256, 32)) != 0 ||
	    (rc = lines_expect_hex(&reader, "previous", out->previous, 32)) != 0 ||
	    (rc = lines_expect_u64(&reader, "consensus-method", &out->consensus_method)) != 0)
		return rc;
	return lines_at_end(&reader) ? 0 : DIRAUTH_ERR_SYNTAX;
}

static int encode_snapshot_header(const void *value, struct buffer *out)
{
	return snapshot_header_encode(value, out);
}

static const struct lines_codec snapshot_header_codec = {
    .max_bytes = SNAPSHOT_HEADER_MAX_BYTES,
    .value_size = sizeof(struct snapshot_header),
    .parse_fields = header_parse_fields,
    .encode = encode_snapshot_header,
};

int snapshot_header_parse(const uint8_t *text, size_t len, struct snapshot_header *out)
{
	return lines_parse_document(&snapshot_header_codec, text, len, out);
}

int snapshot_header_digest(const uint8_t *text, size_t len, uint8_t out[32])
{
	return crypto_sha256(text, len, out);
}

int snapshot_body_encode(const char *namespace_name, uint64_t epoch, const struct snapshot_record *records,
                         size_t record_count, struct buffer *out)
{
	if (!namespace_name ||
	    !text_field_is_name(namespace_name, NAMESPACE_NAME_MAX + 1, NAMESPACE_NAME_MAX))
		return DIRAUTH_ERR_SYNTAX;
	if (record_count > 0 && !records)
		return DIRAUTH_ERR_SYNTAX;
	for (size_t i = 0; i < record_count; i++) {
		if (!records[i].note || records[i].note_len == 0)
			return DIRAUTH_ERR_SYNTAX;
		if (records[i].note_len > REGISTRATION_MAX_BYTES)
			return DIRAUTH_ERR_BOUNDS;
		if (i > 0 && memcmp(records[i - 1].service_id, records[i].service_id, SERVICE_ID_SIZE) >= 0)
			return DIRAUTH_ERR_SYNTAX;
	}
	size_t start = out->len;
	int rc = snapshot_body_encode_head(namespace_name, epoch, record_count, out);
	for (size_t i = 0; rc == 0 && i < record_count; i++) {
		rc = snapshot_body_encode_record_line(records[i].service_id, records[i].note_len, out);
		if (rc == 0)
			rc = buffer_append(out, records[i].note, records[i].note_len);
	}
	if (rc)
		buffer_truncate(out, start);
	return rc;
}

int snapshot_body_encode_head(const char *namespace_name, uint64_t epoch, uint64_t record_count,
                              struct buffer *out)
{
	if (!namespace_name ||
	    !text_field_is_name(namespace_name, NAMESPACE_NAME_MAX + 1, NAMESPACE_NAME_MAX))
		return DIRAUTH_ERR_SYNTAX;
	return buffer_appendf(out, "dirauth snapshot-body v1\nnamespace %s\nepoch %llu\nrecords %llu\n",
	                      namespace_name, (unsigned long long)epoch, (unsigned long long)record_count);
}

int snapshot_body_encode_record_line(const uint8_t service_id[SERVICE_ID_SIZE], size_t note_len,
                                     struct buffer *out)
{
	char service_hex[2 * SERVICE_ID_SIZE + 1];
	if (note_len == 0)
		return DIRAUTH_ERR_SYNTAX;
	if (note_len > REGISTRATION_MAX_BYTES)
		return DIRAUTH_ERR_BOUNDS;
	hex_encode(service_id, SERVICE_ID_SIZE, service_hex);
	return buffer_appendf(out, "record %s %llu\n", service_hex, (unsigned long long)note_len);
}

void snapshot_body_free(struct snapshot_body *body)
{
	if (!body)
		return;
	free(body->records);
	free(body->health);
	free(body->revocations);
	free(body);
}

/* The note that follows an entry line: length from the line, bounded by max, within the input. */
static int take_note(struct line_reader *reader, struct text_span length, size_t max, const uint8_t **note,
                     size_t *note_len)
{
	uint64_t value;
	if (text_parse_u64(length, &value) != 0 || value == 0)
		return DIRAUTH_ERR_SYNTAX;
	if (value > max)
		return DIRAUTH_ERR_BOUNDS;
	if (value > reader->len - reader->pos)
		return DIRAUTH_ERR_SYNTAX; /* truncated */
	*note = reader->buf + reader->pos;
	*note_len = (size_t)value;
	reader->pos += (size_t)value;
	return 0;
}

int snapshot_body_read_record(struct line_reader *reader, struct snapshot_record *record)
{
	struct text_span value, field;
	int rc = lines_expect(reader, "record", &value);
	if (rc)
		return rc;
	if ((rc = text_next_hex(&value, record->service_id, SERVICE_ID_SIZE)) != 0 ||
	    (rc = text_next_field(&value, &field)) != 0)
		return rc;
	if (value.len != 0)
		return DIRAUTH_ERR_SYNTAX;
	return take_note(reader, field, REGISTRATION_MAX_BYTES, &record->note, &record->note_len);
}

static int read_record_entry(struct line_reader *reader, void *item)
{
	return snapshot_body_read_record(reader, item);
}

static int record_order(const void *a, const void *b)
{
	const struct snapshot_record *first = a, *second = b;
	return memcmp(first->service_id, second->service_id, SERVICE_ID_SIZE);
}

static const struct lines_section records_section = {
    "records", sizeof(struct snapshot_record), SNAPSHOT_RECORD_MIN_BYTES, read_record_entry, record_order};

/* The preamble and the records of a body, leaving *reader after the last record: what both body
 * parsers share. On error *out is NULL. */
static int records_parse(const uint8_t *buf, size_t len, size_t max_records, struct snapshot_body **out,
                         struct line_reader *reader_out)
{
	struct line_reader reader;
	int rc;
	*out = NULL;
	struct snapshot_body *body = calloc(1, sizeof(*body));
	if (!body)
		return DIRAUTH_ERR_NOMEM;
	lines_init(&reader, buf, len, SNAPSHOT_BODY_LINE_MAX);
	if ((rc = lines_expect_exact(&reader, "dirauth snapshot-body v1")) != 0)
		goto cleanup;
	if ((rc = lines_expect_name(&reader, "namespace", body->namespace_name,
	                            sizeof(body->namespace_name))) != 0)
		goto cleanup;
	if ((rc = lines_expect_u64(&reader, "epoch", &body->epoch)) != 0)
		goto cleanup;
	void *records;
	rc = lines_read_section(&reader, &records_section, max_records, &records, &body->record_count);
	body->records = records;
	if (rc)
		goto cleanup;
	rc = 0;
cleanup:
	if (rc) {
		snapshot_body_free(body);
	} else {
		*out = body;
		*reader_out = reader;
	}
	return rc;
}

int snapshot_body_parse(const uint8_t *buf, size_t len, size_t max_records, struct snapshot_body **out)
{
	struct line_reader reader;
	int rc = records_parse(buf, len, max_records, out, &reader);
	if (rc == 0 && !lines_at_end(&reader)) {
		snapshot_body_free(*out);
		*out = NULL;
		rc = DIRAUTH_ERR_SYNTAX;
	}
	return rc;
}

int snapshot_records_root(const struct snapshot_record *records, size_t record_count, merkle_hash out)
{
	merkle_hash *leaves = NULL;
	int rc = 0;
	if (record_count > 0) {
		if (record_count > SIZE_MAX / sizeof(merkle_hash))
			return DIRAUTH_ERR_NOMEM;
		leaves = malloc(record_count * sizeof(merkle_hash));
		if (!leaves)
			return DIRAUTH_ERR_NOMEM;
	}
	for (size_t i = 0; rc == 0 && i < record_count; i++)
		rc = merkle_leaf_hash(records[i].note, records[i].note_len, leaves[i]);
	if (rc == 0)
		rc = merkle_root((const merkle_hash *)leaves, record_count, out);
	free(leaves);
	return rc;
}

/* One record against the header: signed by its own provider, for this namespace and service,
 * still valid at the snapshot's valid-after. */
static int record_verify(const struct snapshot_header *header, const struct snapshot_record *record)
{
	struct registration registration;
	int rc = registration_parse_signed(record->note, record->note_len, &registration, NULL);
	if (rc)
		return rc;
	if (strcmp(registration.namespace_name, header->namespace_name) != 0 ||
	    memcmp(registration.service_id, record->service_id, SERVICE_ID_SIZE) != 0)
		rc = DIRAUTH_ERR_MISMATCH;
	else if (registration.expires <= header->valid_after)
		rc = DIRAUTH_ERR_STALE;
	registration_clear(&registration);
	return rc;
}

/* What a body must match of its header under every method, checked in two steps: before it is
 * parsed, its size and digest (body_digest_check); once parsed, its namespace, epoch, record count
 * and records root (body_frame_check). Each returns 0, DIRAUTH_ERR_MISMATCH, or a hashing error. */
static int body_digest_check(const struct snapshot_header *header, const uint8_t *body, size_t body_len)
{
	uint8_t digest[CRYPTO_SHA256_SIZE];
	int rc;
	if (header->body_size != body_len)
		return DIRAUTH_ERR_MISMATCH;
	if ((rc = crypto_sha256(body, body_len, digest)) != 0)
		return rc;
	return !crypto_equal(digest, header->body_sha256, sizeof(digest)) ? DIRAUTH_ERR_MISMATCH : 0;
}

static int body_frame_check(const struct snapshot_header *header, const struct snapshot_body *parsed)
{
	merkle_hash root;
	int rc;
	if (strcmp(parsed->namespace_name, header->namespace_name) != 0 || parsed->epoch != header->epoch ||
	    parsed->record_count != header->record_count)
		return DIRAUTH_ERR_MISMATCH;
	if ((rc = snapshot_records_root(parsed->records, parsed->record_count, root)) != 0)
		return rc;
	return memcmp(root, header->records_root, sizeof(root)) != 0 ? DIRAUTH_ERR_MISMATCH : 0;
}

int snapshot_body_verify(const struct snapshot_header *header, const uint8_t *body, size_t body_len,
                         size_t max_records)
{
	struct snapshot_body *parsed = NULL;
	int rc;
	if ((rc = body_digest_check(header, body, body_len)) != 0 ||
	    (rc = snapshot_body_parse(body, body_len, max_records, &parsed)) != 0)
		return rc;
	if ((rc = body_frame_check(header, parsed)) != 0)
		goto cleanup;
	for (size_t i = 0; rc == 0 && i < parsed->record_count; i++)
		rc = record_verify(header, &parsed->records[i]);
cleanup:
	snapshot_body_free(parsed);
	return rc;
}

/* ---- method 2: the health and revocation sections ---- */

/* The fewest bytes a section entry can take: its shortest line and one byte of note. Health:
 * "health <64> <64> healthy provider 1\n"; revocation: "revocation <64> - 0 1\n". */
#define SNAPSHOT_HEALTH_MIN_BYTES     (7 + 64 + 1 + 64 + 1 + 7 + 1 + 8 + 1 + 1 + 1 + 1)
#define SNAPSHOT_REVOCATION_MIN_BYTES (11 + 64 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1)

int snapshot_health_order(const struct snapshot_health *a, const struct snapshot_health *b)
{
	int order = memcmp(a->service_id, b->service_id, SERVICE_ID_SIZE);
	return order ? order : memcmp(a->endpoint_id, b->endpoint_id, ENDPOINT_ID_SIZE);
}

int snapshot_revocation_order(const struct snapshot_revocation *a, const struct snapshot_revocation *b)
{
	return revocation_target_compare(a->service_id, a->has_endpoint, a->endpoint_id, b->service_id,
	                                 b->has_endpoint, b->endpoint_id);
}

static int sections_check(const struct snapshot_sections *sections)
{
	if ((sections->health_count > 0 && !sections->health) ||
	    (sections->revocation_count > 0 && !sections->revocations))
		return DIRAUTH_ERR_SYNTAX;
	for (size_t i = 0; i < sections->health_count; i++) {
		const struct snapshot_health *h = &sections->health[i];
		if (!h->note || h->note_len == 0 || !health_class_name(h->health_class) ||
		    !health_signer_name(h->signer))
			return DIRAUTH_ERR_SYNTAX;
		if (h->note_len > HEALTH_MAX_BYTES)
			return DIRAUTH_ERR_BOUNDS;
		if (i > 0 && snapshot_health_order(&sections->health[i - 1], h) >= 0)
			return DIRAUTH_ERR_SYNTAX;
	}
	for (size_t i = 0; i < sections->revocation_count; i++) {
		const struct snapshot_revocation *r = &sections->revocations[i];
		if (!r->note || r->note_len == 0 || (r->has_endpoint != 0 && r->has_endpoint != 1))
			return DIRAUTH_ERR_SYNTAX;
		if (r->note_len > REVOCATION_MAX_BYTES)
			return DIRAUTH_ERR_BOUNDS;
		if (i > 0 && snapshot_revocation_order(&sections->revocations[i - 1], r) >= 0)
			return DIRAUTH_ERR_SYNTAX;
	}
	return 0;
}

int snapshot_body_encode_section_count(const char *keyword, uint64_t count, struct buffer *out)
{
	if (!keyword || (strcmp(keyword, "health") != 0 && strcmp(keyword, "revocations") != 0) || count == 0)
		return DIRAUTH_ERR_SYNTAX;
	return buffer_appendf(out, "%s %llu\n", keyword, (unsigned long long)count);
}

int snapshot_body_encode_health_line(const struct snapshot_health *h, struct buffer *out)
{
	char service_hex[2 * SERVICE_ID_SIZE + 1], endpoint_hex[2 * ENDPOINT_ID_SIZE + 1];
	if (!health_class_name(h->health_class) || !health_signer_name(h->signer) || h->note_len == 0)
		return DIRAUTH_ERR_SYNTAX;
	if (h->note_len > HEALTH_MAX_BYTES)
		return DIRAUTH_ERR_BOUNDS;
	hex_encode(h->service_id, SERVICE_ID_SIZE, service_hex);
	hex_encode(h->endpoint_id, ENDPOINT_ID_SIZE, endpoint_hex);
	return buffer_appendf(out, "health %s %s %s %s %llu\n", service_hex, endpoint_hex,
	                      health_class_name(h->health_class), health_signer_name(h->signer),
	                      (unsigned long long)h->note_len);
}

int snapshot_body_encode_revocation_line(const struct snapshot_revocation *r, struct buffer *out)
{
	char target[REVOCATION_TARGET_TEXT_SIZE];
	if ((r->has_endpoint != 0 && r->has_endpoint != 1) || r->note_len == 0)
		return DIRAUTH_ERR_SYNTAX;
	if (r->note_len > REVOCATION_MAX_BYTES)
		return DIRAUTH_ERR_BOUNDS;
	revocation_target_format(r->service_id, r->has_endpoint, r->endpoint_id, target);
	return buffer_appendf(out, "revocation %s %llu %llu\n", target, (unsigned long long)r->since,
	                      (unsigned long long)r->note_len);
}

static int encode_sections(const struct snapshot_sections *sections, struct buffer *out)
{
	int rc = 0;
	if (sections->health_count > 0)
		rc = snapshot_body_encode_section_count("health", sections->health_count, out);
	for (size_t i = 0; rc == 0 && i < sections->health_count; i++) {
		const struct snapshot_health *h = &sections->health[i];
		rc = snapshot_body_encode_health_line(h, out);
		if (rc == 0)
			rc = buffer_append(out, h->note, h->note_len);
	}
	if (rc == 0 && sections->revocation_count > 0)
		rc = snapshot_body_encode_section_count("revocations", sections->revocation_count, out);
	for (size_t i = 0; rc == 0 && i < sections->revocation_count; i++) {
		const struct snapshot_revocation *r = &sections->revocations[i];
		rc = snapshot_body_encode_revocation_line(r, out);
		if (rc == 0)
			rc = buffer_append(out, r->note, r->note_len);
	}
	return rc;
}

int snapshot_body_encode_sections(const char *namespace_name, uint64_t epoch,
                                  const struct snapshot_record *records, size_t record_count,
                                  const struct snapshot_sections *sections, struct buffer *out)
{
	static const struct snapshot_sections none;
	if (!sections)
		sections = &none;
	int rc = sections_check(sections);
	if (rc)
		return rc;
	size_t start = out->len;
	rc = snapshot_body_encode(namespace_name, epoch, records, record_count, out);
	if (rc == 0)
		rc = encode_sections(sections, out);
	if (rc)
		buffer_truncate(out, start);
	return rc;
}

/* "health <service> <endpoint> <class> <signer> <length>" and its note. */
int snapshot_body_read_health(struct line_reader *reader, struct snapshot_health *h)
{
	struct text_span value, field;
	int rc = lines_expect(reader, "health", &value);
	if (rc)
		return rc;
	if ((rc = text_next_hex(&value, h->service_id, SERVICE_ID_SIZE)) != 0)
		return rc;
	if ((rc = text_next_hex(&value, h->endpoint_id, ENDPOINT_ID_SIZE)) != 0)
		return rc;
	if ((rc = text_next_field(&value, &field)) != 0 ||
	    (rc = health_class_parse(field.data, field.len, &h->health_class)) != 0 ||
	    (rc = text_next_field(&value, &field)) != 0 ||
	    (rc = health_signer_parse(field.data, field.len, &h->signer)) != 0 ||
	    (rc = text_next_field(&value, &field)) != 0)
		return rc;
	if (value.len != 0)
		return DIRAUTH_ERR_SYNTAX;
	return take_note(reader, field, HEALTH_MAX_BYTES, &h->note, &h->note_len);
}

/* "revocation <service> <endpoint | -> <since> <length>" and its note. */
int snapshot_body_read_revocation(struct line_reader *reader, struct snapshot_revocation *r)
{
	struct text_span value, field;
	int rc = lines_expect(reader, "revocation", &value);
	if (rc)
		return rc;
	if ((rc = revocation_target_read(&value, r->service_id, &r->has_endpoint, r->endpoint_id)) != 0)
		return rc;
	if ((rc = text_next_u64(&value, &r->since)) != 0 || (rc = text_next_field(&value, &field)) != 0)
		return rc;
	if (value.len != 0)
		return DIRAUTH_ERR_SYNTAX;
	return take_note(reader, field, REVOCATION_MAX_BYTES, &r->note, &r->note_len);
}

static int read_health_entry(struct line_reader *reader, void *item)
{
	return snapshot_body_read_health(reader, item);
}

static int read_revocation_entry(struct line_reader *reader, void *item)
{
	return snapshot_body_read_revocation(reader, item);
}

static int health_entry_order(const void *a, const void *b)
{
	return snapshot_health_order(a, b);
}

static int revocation_entry_order(const void *a, const void *b)
{
	return snapshot_revocation_order(a, b);
}

const struct lines_section snapshot_health_section = {"health", sizeof(struct snapshot_health),
                                                      SNAPSHOT_HEALTH_MIN_BYTES, read_health_entry,
                                                      health_entry_order};
const struct lines_section snapshot_revocation_section = {"revocations", sizeof(struct snapshot_revocation),
                                                          SNAPSHOT_REVOCATION_MIN_BYTES,
                                                          read_revocation_entry, revocation_entry_order};

static int read_sections(struct line_reader *reader, const struct snapshot_body_limits *limits,
                         struct snapshot_body *body)
{
	void *items;
	reader->max_line_length = SNAPSHOT_SECTION_LINE_MAX;
	int rc = lines_read_optional_section(reader, &snapshot_health_section, limits->max_health, &items,
	                                     &body->health_count);
	body->health = items;
	if (rc == 0) {
		rc = lines_read_optional_section(reader, &snapshot_revocation_section,
		                                 limits->max_revocations, &items, &body->revocation_count);
		body->revocations = items;
	}
	return rc;
}

int snapshot_body_parse_sections(const uint8_t *buf, size_t len, const struct snapshot_body_limits *limits,
                                 struct snapshot_body **out)
{
	*out = NULL;
	/* The preamble and the records as for method 1, then the sections after them. */
	struct line_reader reader;
	struct snapshot_body *body = NULL;
	int rc = records_parse(buf, len, limits->max_records, &body, &reader);
	if (rc == 0)
		rc = read_sections(&reader, limits, body);
	if (rc == 0 && !lines_at_end(&reader))
		rc = DIRAUTH_ERR_SYNTAX;
	if (rc)
		snapshot_body_free(body);
	else
		*out = body;
	return rc;
}

/* An endpoint id of some record, for the check that no listed revocation excludes a record. */
struct endpoint_index {
	uint8_t endpoint_id[ENDPOINT_ID_SIZE];
};

static int endpoint_index_order(const void *a, const void *b)
{
	return memcmp(a, b, ENDPOINT_ID_SIZE);
}

/* The record of service_id in body (sorted by service id), or NULL. */
static const struct snapshot_record *body_find_record(const struct snapshot_body *body,
                                                      const uint8_t service_id[SERVICE_ID_SIZE])
{
	size_t low = 0, high = body->record_count;
	while (low < high) {
		size_t middle = low + (high - low) / 2;
		int order = memcmp(body->records[middle].service_id, service_id, SERVICE_ID_SIZE);
		if (order == 0)
			return &body->records[middle];
		if (order < 0)
			low = middle + 1;
		else
			high = middle;
	}
	return NULL;
}

/* Every record as record_verify checks it, and the sorted endpoint ids of all records into
 * *index (the caller frees it). */
static int records_verify(const struct snapshot_header *header, const struct snapshot_body *body,
                          struct endpoint_index **index, size_t *index_count)
{
	size_t count = 0, cap = 0;
	int rc = 0;
	*index = NULL;
	*index_count = 0;
	for (size_t i = 0; rc == 0 && i < body->record_count; i++) {
		const struct snapshot_record *record = &body->records[i];
		struct registration registration;
		if ((rc = registration_parse_signed(record->note, record->note_len, &registration, NULL)) !=
		    0)
			break;
		/* record_verify's checks, on the registration parsed once. */
		if (strcmp(registration.namespace_name, header->namespace_name) != 0 ||
		    memcmp(registration.service_id, record->service_id, SERVICE_ID_SIZE) != 0)
			rc = DIRAUTH_ERR_MISMATCH;
		else if (registration.expires <= header->valid_after)
			rc = DIRAUTH_ERR_STALE;
		if (rc == 0 && count + registration.endpoint_count > cap) {
			size_t grown = cap ? cap * 2 : 64;
			while (grown < count + registration.endpoint_count)
				grown *= 2;
			struct endpoint_index *more = realloc(*index, grown * sizeof(*more));
			if (!more) {
				rc = DIRAUTH_ERR_NOMEM;
			} else {
				*index = more;
				cap = grown;
			}
		}
		for (size_t e = 0; rc == 0 && e < registration.endpoint_count; e++)
			memcpy((*index)[count++].endpoint_id, registration.endpoints[e].endpoint_id,
			       ENDPOINT_ID_SIZE);
		registration_clear(&registration);
	}
	if (rc == 0 && count > 1)
		qsort(*index, count, sizeof(**index), endpoint_index_order);
	*index_count = count;
	return rc;
}

/* Every health entry: its record and endpoint, its statement and signer key, its freshness. The
 * entries are sorted by service, so each record's registration is parsed once. */
static int health_verify(const struct snapshot_header *header, const struct snapshot_body *body,
                         uint64_t freshness_seconds)
{
	struct registration registration;
	const struct snapshot_record *current = NULL;
	int rc = 0;
	memset(&registration, 0, sizeof(registration));
	for (size_t i = 0; rc == 0 && i < body->health_count; i++) {
		const struct snapshot_health *h = &body->health[i];
		const struct snapshot_record *record = body_find_record(body, h->service_id);
		if (!record) {
			rc = DIRAUTH_ERR_MISMATCH;
			break;
		}
		if (record != current) {
			registration_clear(&registration);
			current = NULL;
			if ((rc = registration_parse_signed(record->note, record->note_len, &registration,
			                                    NULL)) != 0)
				break;
			current = record;
		}
		if (!registration_find_endpoint(&registration, h->endpoint_id)) {
			rc = DIRAUTH_ERR_MISMATCH;
			break;
		}
		struct health_statement statement;
		if ((rc = health_parse_signed(h->note, h->note_len, &registration, &statement, NULL)) != 0)
			break;
		if (memcmp(statement.endpoint_id, h->endpoint_id, ENDPOINT_ID_SIZE) != 0 ||
		    statement.health_class != h->health_class || statement.signer != h->signer)
			rc = DIRAUTH_ERR_MISMATCH;
		else if (health_is_stale(statement.issued_at, freshness_seconds, header->valid_after))
			rc = DIRAUTH_ERR_STALE;
	}
	registration_clear(&registration);
	return rc;
}

int snapshot_revocation_note_check(const struct snapshot_revocation *entry, const char *namespace_name)
{
	struct revocation r;
	int rc = revocation_parse_signed(entry->note, entry->note_len, &r, NULL);
	if (rc)
		return rc;
	if (strcmp(r.namespace_name, namespace_name) != 0 ||
	    memcmp(r.service_id, entry->service_id, SERVICE_ID_SIZE) != 0 ||
	    r.has_endpoint != entry->has_endpoint ||
	    (r.has_endpoint && memcmp(r.endpoint_id, entry->endpoint_id, ENDPOINT_ID_SIZE) != 0))
		return DIRAUTH_ERR_MISMATCH;
	return 0;
}

/* Every revocation entry: its note, its target, its epoch, and that it excludes no record. */
static int revocations_verify(const struct snapshot_header *header, const struct snapshot_body *body,
                              const struct endpoint_index *index, size_t index_count)
{
	for (size_t i = 0; i < body->revocation_count; i++) {
		const struct snapshot_revocation *entry = &body->revocations[i];
		int rc = snapshot_revocation_note_check(entry, header->namespace_name);
		if (rc)
			return rc;
		if (entry->since > header->epoch)
			return DIRAUTH_ERR_MISMATCH;
		if (!entry->has_endpoint
		        ? body_find_record(body, entry->service_id) != NULL
		        : index_count > 0 && bsearch(entry->endpoint_id, index, index_count, sizeof(*index),
		                                     endpoint_index_order) != NULL)
			return DIRAUTH_ERR_MISMATCH; /* a revoked service or endpoint is still listed */
	}
	return 0;
}

int snapshot_body_verify_sections(const struct snapshot_header *header, const uint8_t *body, size_t body_len,
                                  const struct snapshot_body_limits *limits, uint64_t freshness_seconds)
{
	struct snapshot_body *parsed = NULL;
	struct endpoint_index *index = NULL;
	size_t index_count = 0;
	int rc;
	if (freshness_seconds == 0)
		return DIRAUTH_ERR_CONFIG;
	if (header->consensus_method == 1)
		return snapshot_body_verify(header, body, body_len, limits->max_records);
	if (header->consensus_method != 2)
		return DIRAUTH_ERR_SYNTAX;
	if ((rc = body_digest_check(header, body, body_len)) != 0 ||
	    (rc = snapshot_body_parse_sections(body, body_len, limits, &parsed)) != 0)
		return rc;
	if ((rc = body_frame_check(header, parsed)) != 0)
		goto cleanup;
	if ((rc = records_verify(header, parsed, &index, &index_count)) == 0 &&
	    (rc = health_verify(header, parsed, freshness_seconds)) == 0)
		rc = revocations_verify(header, parsed, index, index_count);
cleanup:
	free(index);
	snapshot_body_free(parsed);
	return rc;
}
