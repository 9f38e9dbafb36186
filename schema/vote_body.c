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
 * lines. Version 1 knows the records section only; read_section_count() is the piece a later
 * section reuses, and the check for the end of input after the last known section is what makes
 * a parser refuse sections it does not know (schema/vote-body.md, "Sections").
 */
#include "schema/vote_body.h"

#include "schema/encoding.h"
#include "schema/error.h"
#include "schema/lines.h"
#include "schema/names.h"

#include <stdlib.h>
#include <string.h>

size_t vote_body_max_bytes(size_t max_records)
{
	if (max_records > (SIZE_MAX - VOTE_BODY_PREAMBLE_MAX_BYTES) / VOTE_BODY_RECORD_MAX_BYTES)
		return SIZE_MAX;
	return VOTE_BODY_PREAMBLE_MAX_BYTES + max_records * VOTE_BODY_RECORD_MAX_BYTES;
}

static int string_is_name(const char *field, size_t cap)
{
	size_t len = strnlen(field, cap);
	struct text_span span = {field, len};
	return len < cap && text_is_name(span, NAMESPACE_NAME_MAX);
}

static int string_is_key_name(const char *field, size_t cap)
{
	size_t len = strnlen(field, cap);
	return len < cap && names_key_name_is_ascii(field, len);
}

static int body_check(const struct vote_body *body)
{
	if (!string_is_name(body->namespace_name, sizeof(body->namespace_name)) ||
	    !string_is_key_name(body->authority, sizeof(body->authority)))
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
	return 0;
}

int vote_body_encode(const struct vote_body *body, struct buffer *out)
{
	int rc = body_check(body);
	if (rc)
		return rc;
	if (body->record_count > BUFFER_MAX / VOTE_BODY_RECORD_MIN_BYTES)
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
	if (rc)
		buffer_truncate(out, start);
	return rc;
}

void vote_body_free(struct vote_body *body)
{
	if (!body)
		return;
	free(body->records);
	free(body);
}

/* The "<keyword> <count>" line that opens a section, with its bounds: a count above max_items is
 * DIRAUTH_ERR_BOUNDS; one that the bytes left could not hold, at min_item_bytes per item line, is
 * DIRAUTH_ERR_SYNTAX. Either way nothing has been allocated yet. */
static int read_section_count(struct line_reader *reader, const char *keyword, size_t max_items,
                              size_t min_item_bytes, size_t *count)
{
	uint64_t value;
	int rc = lines_expect_u64(reader, keyword, &value);
	if (rc)
		return rc;
	if (value > max_items)
		return DIRAUTH_ERR_BOUNDS;
	if (value > (reader->len - reader->pos) / min_item_bytes)
		return DIRAUTH_ERR_SYNTAX;
	*count = (size_t)value;
	return 0;
}

/* "record <service id> <sequence> <digest>". */
static int read_record(struct line_reader *reader, struct vote_body_record *record)
{
	struct text_span value, field;
	int rc = lines_expect(reader, "record", &value);
	if (rc)
		return rc;
	if ((rc = text_next_field(&value, &field)) != 0)
		return rc;
	if (text_parse_hex(field, record->service_id, SERVICE_ID_SIZE))
		return DIRAUTH_ERR_SYNTAX;
	if ((rc = text_next_field(&value, &field)) != 0 ||
	    (rc = text_parse_u64(field, &record->sequence)) != 0)
		return rc;
	if (record->sequence == 0)
		return DIRAUTH_ERR_SYNTAX;
	if ((rc = text_next_field(&value, &field)) != 0)
		return rc;
	if (value.len != 0 || text_parse_hex(field, record->registration_sha256, 32))
		return DIRAUTH_ERR_SYNTAX;
	return 0;
}

static int read_records(struct line_reader *reader, size_t max_records, struct vote_body *body)
{
	size_t count;
	int rc = read_section_count(reader, "records", max_records, VOTE_BODY_RECORD_MIN_BYTES, &count);
	if (rc)
		return rc;
	if (count == 0)
		return 0;
	body->records = calloc(count, sizeof(*body->records));
	if (!body->records)
		return DIRAUTH_ERR_NOMEM;
	for (size_t i = 0; i < count; i++) {
		struct vote_body_record *record = &body->records[i];
		if ((rc = read_record(reader, record)) != 0)
			return rc;
		if (i > 0 &&
		    memcmp(body->records[i - 1].service_id, record->service_id, SERVICE_ID_SIZE) >= 0)
			return DIRAUTH_ERR_SYNTAX;
		body->record_count = i + 1;
	}
	return 0;
}

static int read_preamble(struct line_reader *reader, struct vote_body *body)
{
	struct text_span value;
	int rc;
	if ((rc = lines_expect_exact(reader, "dirauth vote-body v1")) != 0 ||
	    (rc = lines_expect(reader, "namespace", &value)) != 0)
		return rc;
	if (!text_is_name(value, NAMESPACE_NAME_MAX))
		return DIRAUTH_ERR_SYNTAX;
	if ((rc = text_copy(value, body->namespace_name, sizeof(body->namespace_name))) != 0 ||
	    (rc = lines_expect_u64(reader, "epoch", &body->epoch)) != 0 ||
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
