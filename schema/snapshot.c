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
 */
#include "schema/snapshot.h"

#include "schema/crypto.h"
#include "schema/encoding.h"
#include "schema/error.h"
#include "schema/names.h"
#include "schema/lines.h"

#include <openssl/crypto.h>
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

static int field_is_name(const char *field, size_t cap, size_t max)
{
	size_t len = strnlen(field, cap);
	if (len == cap)
		return 0;
	struct text_span span = {field, len};
	return text_is_name(span, max);
}

static int header_check(const struct snapshot_header *h)
{
	if (!field_is_name(h->namespace_name, sizeof(h->namespace_name), NAMESPACE_NAME_MAX))
		return DIRAUTH_ERR_SYNTAX;
	size_t origin_len = strnlen(h->origin, sizeof(h->origin));
	if (origin_len == sizeof(h->origin) || !names_origin_is_valid(h->origin, origin_len))
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

static int expect_name(struct line_reader *reader, const char *keyword, char *out, size_t cap)
{
	struct text_span value;
	int rc = lines_expect(reader, keyword, &value);
	if (rc)
		return rc;
	if (!text_is_name(value, NAMESPACE_NAME_MAX))
		return DIRAUTH_ERR_SYNTAX;
	return text_copy(value, out, cap);
}

static int header_parse_fields(const uint8_t *text, size_t len, struct snapshot_header *out)
{
	struct line_reader reader;
	struct text_span value;
	int rc;
	lines_init(&reader, text, len, SNAPSHOT_HEADER_LINE_MAX);
	if ((rc = lines_expect_exact(&reader, "dirauth snapshot v1")) != 0)
		return rc;
	if ((rc = expect_name(&reader, "namespace", out->namespace_name, sizeof(out->namespace_name))) != 0)
		return rc;
	if ((rc = lines_expect(&reader, "origin", &value)) != 0)
		return rc;
	if (!names_origin_is_valid(value.data, value.len))
		return DIRAUTH_ERR_SYNTAX;
	if ((rc = text_copy(value, out->origin, sizeof(out->origin))) != 0)
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

int snapshot_header_parse(const uint8_t *text, size_t len, struct snapshot_header *out)
{
	memset(out, 0, sizeof(*out));
	int rc = len > SNAPSHOT_HEADER_MAX_BYTES ? DIRAUTH_ERR_BOUNDS : header_parse_fields(text, len, out);
	if (rc == 0)
		rc = lines_require_canonical(text, len, out, encode_snapshot_header);
	if (rc)
		memset(out, 0, sizeof(*out));
	return rc;
}

int snapshot_header_digest(const uint8_t *text, size_t len, uint8_t out[32])
{
	return crypto_sha256(text, len, out);
}

int snapshot_body_encode(const char *namespace_name, uint64_t epoch, const struct snapshot_record *records,
                         size_t record_count, struct buffer *out)
{
	if (!namespace_name || !field_is_name(namespace_name, NAMESPACE_NAME_MAX + 1, NAMESPACE_NAME_MAX))
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
	if (!namespace_name || !field_is_name(namespace_name, NAMESPACE_NAME_MAX + 1, NAMESPACE_NAME_MAX))
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
	free(body);
}

int snapshot_body_parse(const uint8_t *buf, size_t len, size_t max_records, struct snapshot_body **out)
{
	struct line_reader reader;
	struct text_span value;
	uint64_t count;
	int rc;
	*out = NULL;
	struct snapshot_body *body = calloc(1, sizeof(*body));
	if (!body)
		return DIRAUTH_ERR_NOMEM;
	lines_init(&reader, buf, len, SNAPSHOT_BODY_LINE_MAX);
	if ((rc = lines_expect_exact(&reader, "dirauth snapshot-body v1")) != 0)
		goto cleanup;
	if ((rc = expect_name(&reader, "namespace", body->namespace_name, sizeof(body->namespace_name))) != 0)
		goto cleanup;
	if ((rc = lines_expect_u64(&reader, "epoch", &body->epoch)) != 0)
		goto cleanup;
	if ((rc = lines_expect_u64(&reader, "records", &count)) != 0)
		goto cleanup;
	if (count > max_records) {
		rc = DIRAUTH_ERR_BOUNDS;
		goto cleanup;
	}
	if (count > (len - reader.pos) / SNAPSHOT_RECORD_MIN_BYTES) {
		rc = DIRAUTH_ERR_SYNTAX; /* more records announced than the bytes could hold */
		goto cleanup;
	}
	if (count > 0) {
		body->records = calloc((size_t)count, sizeof(*body->records));
		if (!body->records) {
			rc = DIRAUTH_ERR_NOMEM;
			goto cleanup;
		}
	}
	for (size_t i = 0; i < count; i++) {
		struct snapshot_record *record = &body->records[i];
		struct text_span field;
		uint64_t note_len;
		if ((rc = lines_expect(&reader, "record", &value)) != 0)
			goto cleanup;
		if ((rc = text_next_field(&value, &field)) != 0)
			goto cleanup;
		if (text_parse_hex(field, record->service_id, SERVICE_ID_SIZE)) {
			rc = DIRAUTH_ERR_SYNTAX;
			goto cleanup;
		}
		if ((rc = text_next_field(&value, &field)) != 0 ||
		    (rc = text_parse_u64(field, &note_len)) != 0)
			goto cleanup;
		if (value.len != 0 || note_len == 0) {
			rc = DIRAUTH_ERR_SYNTAX;
			goto cleanup;
		}
		if (note_len > REGISTRATION_MAX_BYTES) {
			rc = DIRAUTH_ERR_BOUNDS;
			goto cleanup;
		}
		if (note_len > len - reader.pos) {
			rc = DIRAUTH_ERR_SYNTAX; /* truncated */
			goto cleanup;
		}
		if (i > 0 &&
		    memcmp(body->records[i - 1].service_id, record->service_id, SERVICE_ID_SIZE) >= 0) {
			rc = DIRAUTH_ERR_SYNTAX;
			goto cleanup;
		}
		record->note = buf + reader.pos;
		record->note_len = (size_t)note_len;
		reader.pos += (size_t)note_len;
		body->record_count = i + 1;
	}
	rc = lines_at_end(&reader) ? 0 : DIRAUTH_ERR_SYNTAX;
cleanup:
	if (rc)
		snapshot_body_free(body);
	else
		*out = body;
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

int snapshot_body_verify(const struct snapshot_header *header, const uint8_t *body, size_t body_len,
                         size_t max_records)
{
	struct snapshot_body *parsed = NULL;
	uint8_t digest[CRYPTO_SHA256_SIZE];
	merkle_hash root;
	int rc;
	if (header->body_size != body_len)
		return DIRAUTH_ERR_MISMATCH;
	if ((rc = crypto_sha256(body, body_len, digest)) != 0)
		return rc;
	if (CRYPTO_memcmp(digest, header->body_sha256, sizeof(digest)) != 0)
		return DIRAUTH_ERR_MISMATCH;
	if ((rc = snapshot_body_parse(body, body_len, max_records, &parsed)) != 0)
		return rc;
	if (strcmp(parsed->namespace_name, header->namespace_name) != 0 || parsed->epoch != header->epoch ||
	    parsed->record_count != header->record_count) {
		rc = DIRAUTH_ERR_MISMATCH;
		goto cleanup;
	}
	if ((rc = snapshot_records_root(parsed->records, parsed->record_count, root)) != 0)
		goto cleanup;
	if (memcmp(root, header->records_root, sizeof(root)) != 0) {
		rc = DIRAUTH_ERR_MISMATCH;
		goto cleanup;
	}
	for (size_t i = 0; rc == 0 && i < parsed->record_count; i++)
		rc = record_verify(header, &parsed->records[i]);
cleanup:
	snapshot_body_free(parsed);
	return rc;
}
