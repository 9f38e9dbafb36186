/*
 * vote_delta.c: the codec of a vote body written as its difference from a base body
 * (vote_delta.h).
 *
 * The three sections of a body (records, health, revocations) differ only in their item type,
 * their key and the spelling of their lines, so each is a row of one table, and one merge writes
 * and one merge applies them all (sorted_merge.h): both walk the base's sorted items and the sorted
 * operations (or the target's sorted items) side by side, once. A delta arrives from a peer with a vote, so
 * it is read like a body: each count is bounded by what the base and the bounds allow and by what the bytes
 * left could hold before anything is allocated for it, each line under a fixed length, and every field has
 * one spelling. The result is bounded by the caller's limits as it is written.
 */
#include "schema/vote_delta.h"

#include "schema/encoding.h"
#include "base/error.h"
#include "schema/lines.h"
#include "schema/names.h"
#include "schema/revocation.h"
#include "schema/sorted_merge.h"

#include <stdlib.h>
#include <string.h>

#define VOTE_DELTA_FIRST_LINE "dirauth vote-delta v1"

/* One item of any section, for the operation being read. */
union delta_item {
	struct vote_body_record record;
	struct vote_body_health health;
	struct vote_body_revocation revocation;
};

/* What differs from one section to the next. */
struct delta_section {
	const char *keyword;
	/* The item's size, its order by key (as the section is sorted) and whether two items of one
	 * key are equal in full: what the merges of sorted_merge.h need. */
	struct sorted_kind kind;
	size_t min_operation_bytes; /* the shortest operation line, with its '\n' */
	struct sorted_items (*of)(const struct vote_body *body);
	void (*set)(struct vote_body *body, void *items, size_t count);
	size_t (*limit)(const struct vote_body_limits *limits);
	int (*valid)(const void *item); /* the rules of a body's item beyond its order */
	/* Appends "<operation> <fields>\n": the key only for a del, the whole item for a put. */
	int (*write)(const void *item, int put, struct buffer *out);
	/* Takes the fields of an operation off *rest: the key only for a del. */
	int (*read)(struct text_span *rest, int put, void *item);
};

/* ---- records ---- */

static struct sorted_items records_of(const struct vote_body *body)
{
	return (struct sorted_items){body->records, body->record_count};
}

static void records_set(struct vote_body *body, void *items, size_t count)
{
	body->records = items;
	body->record_count = count;
}

static size_t records_limit(const struct vote_body_limits *limits)
{
	return limits->max_records;
}

static int record_compare(const void *a, const void *b)
{
	const struct vote_body_record *x = a, *y = b;
	return memcmp(x->service_id, y->service_id, SERVICE_ID_SIZE);
}

static int record_same(const void *a, const void *b)
{
	const struct vote_body_record *x = a, *y = b;
	return x->sequence == y->sequence && memcmp(x->registration_sha256, y->registration_sha256, 32) == 0;
}

static int record_valid(const void *item)
{
	const struct vote_body_record *record = item;
	return record->sequence >= 1;
}

static int record_write(const void *item, int put, struct buffer *out)
{
	const struct vote_body_record *record = item;
	char service_hex[2 * SERVICE_ID_SIZE + 1], digest_hex[65];
	hex_encode(record->service_id, SERVICE_ID_SIZE, service_hex);
	if (!put)
		return buffer_appendf(out, "del %s\n", service_hex);
	hex_encode(record->registration_sha256, 32, digest_hex);
	return buffer_appendf(out, "put %s %llu %s\n", service_hex, (unsigned long long)record->sequence,
	                      digest_hex);
}

static int record_read(struct text_span *rest, int put, void *item)
{
	struct vote_body_record *record = item;
	int rc = text_next_hex(rest, record->service_id, SERVICE_ID_SIZE);
	if (rc || !put)
		return rc;
	if ((rc = text_next_u64(rest, &record->sequence)) != 0 ||
	    (rc = text_next_hex(rest, record->registration_sha256, 32)) != 0)
		return rc;
	return record->sequence >= 1 ? 0 : DIRAUTH_ERR_SYNTAX;
}

/* ---- health ---- */

static struct sorted_items health_of(const struct vote_body *body)
{
	return (struct sorted_items){body->health, body->health_count};
}

static void health_set(struct vote_body *body, void *items, size_t count)
{
	body->health = items;
	body->health_count = count;
}

static size_t health_limit(const struct vote_body_limits *limits)
{
	return limits->max_health;
}

static int health_compare(const void *a, const void *b)
{
	return vote_body_health_compare(a, b);
}

static int health_same(const void *a, const void *b)
{
	const struct vote_body_health *x = a, *y = b;
	return x->issued_at == y->issued_at && x->sequence == y->sequence &&
	       memcmp(x->statement_sha256, y->statement_sha256, 32) == 0;
}

static int health_valid(const void *item)
{
	const struct vote_body_health *health = item;
	return health->sequence >= 1;
}

static int health_write(const void *item, int put, struct buffer *out)
{
	const struct vote_body_health *health = item;
	char service_hex[2 * SERVICE_ID_SIZE + 1], endpoint_hex[2 * ENDPOINT_ID_SIZE + 1], digest_hex[65];
	hex_encode(health->service_id, SERVICE_ID_SIZE, service_hex);
	hex_encode(health->endpoint_id, ENDPOINT_ID_SIZE, endpoint_hex);
	if (!put)
		return buffer_appendf(out, "del %s %s\n", service_hex, endpoint_hex);
	hex_encode(health->statement_sha256, 32, digest_hex);
	return buffer_appendf(out, "put %s %s %llu %llu %s\n", service_hex, endpoint_hex,
	                      (unsigned long long)health->issued_at, (unsigned long long)health->sequence,
	                      digest_hex);
}

static int health_read(struct text_span *rest, int put, void *item)
{
	struct vote_body_health *health = item;
	int rc;
	if ((rc = text_next_hex(rest, health->service_id, SERVICE_ID_SIZE)) != 0 ||
	    (rc = text_next_hex(rest, health->endpoint_id, ENDPOINT_ID_SIZE)) != 0 || !put)
		return rc;
	if ((rc = text_next_u64(rest, &health->issued_at)) != 0 ||
	    (rc = text_next_u64(rest, &health->sequence)) != 0 ||
	    (rc = text_next_hex(rest, health->statement_sha256, 32)) != 0)
		return rc;
	return health->sequence >= 1 ? 0 : DIRAUTH_ERR_SYNTAX;
}

/* ---- revocations: the whole item is the key ---- */

static struct sorted_items revocations_of(const struct vote_body *body)
{
	return (struct sorted_items){body->revocations, body->revocation_count};
}

static void revocations_set(struct vote_body *body, void *items, size_t count)
{
	body->revocations = items;
	body->revocation_count = count;
}

static size_t revocations_limit(const struct vote_body_limits *limits)
{
	return limits->max_revocations;
}

static int revocation_compare(const void *a, const void *b)
{
	return vote_body_revocation_compare(a, b);
}

static int revocation_same(const void *a, const void *b)
{
	(void)a;
	(void)b;
	return 1;
}

static int revocation_valid(const void *item)
{
	const struct vote_body_revocation *revocation = item;
	return revocation->has_endpoint == 0 || revocation->has_endpoint == 1;
}

static int revocation_write(const void *item, int put, struct buffer *out)
{
	const struct vote_body_revocation *r = item;
	char target[REVOCATION_TARGET_TEXT_SIZE], digest_hex[65];
	revocation_target_format(r->service_id, r->has_endpoint, r->endpoint_id, target);
	hex_encode(r->revocation_sha256, 32, digest_hex);
	return buffer_appendf(out, "%s %s %s\n", put ? "put" : "del", target, digest_hex);
}

static int revocation_read(struct text_span *rest, int put, void *item)
{
	struct vote_body_revocation *r = item;
	(void)put;
	int rc = revocation_target_read(rest, r->service_id, &r->has_endpoint, r->endpoint_id);
	return rc ? rc : text_next_hex(rest, r->revocation_sha256, 32);
}

/* In the order of the delta. The shortest operation lines: "del " and 64 hex; "del ", 64 hex, a
 * space and 64 hex; "del ", 64 hex, " - " and 64 hex; each with '\n'. */
static const struct delta_section delta_sections[] = {
    {"records",
     {sizeof(struct vote_body_record), record_compare, record_same},
     69,
     records_of,
     records_set,
     records_limit,
     record_valid,
     record_write,
     record_read},
    {"health",
     {sizeof(struct vote_body_health), health_compare, health_same},
     134,
     health_of,
     health_set,
     health_limit,
     health_valid,
     health_write,
     health_read},
    {"revocations",
     {sizeof(struct vote_body_revocation), revocation_compare, revocation_same},
     136,
     revocations_of,
     revocations_set,
     revocations_limit,
     revocation_valid,
     revocation_write,
     revocation_read},
};
#define DELTA_SECTION_COUNT (sizeof(delta_sections) / sizeof(delta_sections[0]))

static const void *item_at(const struct delta_section *section, const void *items, size_t i)
{
	return (const char *)items + i * section->kind.item_size;
}

/* The items of one section of a body the encoder reads: sorted strictly, each valid. */
static int section_check(const struct delta_section *section, struct sorted_items items)
{
	if (items.count > 0 && !items.items)
		return DIRAUTH_ERR_SYNTAX;
	for (size_t i = 0; i < items.count; i++) {
		const void *item = item_at(section, items.items, i);
		if (!section->valid(item) ||
		    (i > 0 && section->kind.compare(item_at(section, items.items, i - 1), item) >= 0))
			return DIRAUTH_ERR_SYNTAX;
	}
	return 0;
}

/* What section_diff's walk writes into: the operations counted, and written to out unless it is
 * NULL. */
struct section_writer {
	const struct delta_section *section;
	struct buffer *out;
	size_t operations;
};

static int write_operation(void *context, const void *removed, const void *put)
{
	struct section_writer *writer = context;
	writer->operations++;
	if (!writer->out)
		return 0;
	return put ? writer->section->write(put, 1, writer->out)
	           : writer->section->write(removed, 0, writer->out);
}

/* The operations from base to target in one section, in key order: counted into *operations,
 * and written to out unless it is NULL. */
static int section_diff(const struct delta_section *section, struct sorted_items base,
                        struct sorted_items target, struct buffer *out, size_t *operations)
{
	struct section_writer writer = {section, out, 0};
	int rc = sorted_merge_changes(&section->kind, base, target, write_operation, &writer);
	*operations = writer.operations;
	return rc;
}

int vote_delta_encode(const struct vote_body *base, const struct vote_body *target,
                      const uint8_t base_digest[32], struct buffer *out)
{
	for (size_t s = 0; s < DELTA_SECTION_COUNT; s++) {
		const struct delta_section *section = &delta_sections[s];
		int rc = section_check(section, section->of(base));
		if (rc == 0)
			rc = section_check(section, section->of(target));
		if (rc)
			return rc;
	}
	char digest_hex[65];
	hex_encode(base_digest, 32, digest_hex);
	size_t start = out->len;
	int rc = buffer_appendf(out, VOTE_DELTA_FIRST_LINE "\nbase %s\n", digest_hex);
	for (size_t s = 0; rc == 0 && s < DELTA_SECTION_COUNT; s++) {
		const struct delta_section *section = &delta_sections[s];
		size_t operations;
		rc = section_diff(section, section->of(base), section->of(target), NULL, &operations);
		if (rc == 0)
			rc = buffer_appendf(out, "%s %zu\n", section->keyword, operations);
		if (rc == 0)
			rc = section_diff(section, section->of(base), section->of(target), out, &operations);
	}
	if (rc)
		buffer_truncate(out, start);
	return rc;
}

/* The first two lines of a delta. */
static int read_base(struct line_reader *reader, uint8_t base_digest[32])
{
	int rc = lines_expect_exact(reader, VOTE_DELTA_FIRST_LINE);
	return rc ? rc : lines_expect_hex(reader, "base", base_digest, 32);
}

int vote_delta_base(const uint8_t *delta, size_t len, uint8_t base_digest[32])
{
	struct line_reader reader;
	lines_init(&reader, delta, len, VOTE_DELTA_LINE_MAX);
	return read_base(&reader, base_digest);
}

/* "del <key>" or "put <item>", the one line of an operation. */
static int read_operation(struct line_reader *reader, const struct delta_section *section, int *put,
                          union delta_item *item)
{
	struct text_span line, operation;
	int rc = lines_next(reader, &line);
	if (rc == 0)
		rc = text_next_field(&line, &operation);
	if (rc)
		return rc;
	if (text_equals(operation, "put"))
		*put = 1;
	else if (text_equals(operation, "del"))
		*put = 0;
	else
		return DIRAUTH_ERR_SYNTAX;
	memset(item, 0, sizeof(*item));
	if ((rc = section->read(&line, *put, item)) != 0)
		return rc;
	return line.len == 0 ? 0 : DIRAUTH_ERR_SYNTAX;
}

/* The items a section of the result is being written into. */
struct section_result {
	const struct delta_section *section;
	char *items;
	size_t count;
	size_t capacity; /* the smaller of what the base and the operations can make, and the bound */
};

/* Appends item to the result: it must come after the last one (a base out of order does not) and
 * be valid; past the capacity the result is over its bound. */
static int result_append(struct section_result *result, const void *item)
{
	const struct delta_section *section = result->section;
	if (!section->valid(item) ||
	    (result->count > 0 &&
	     section->kind.compare(item_at(section, result->items, result->count - 1), item) >= 0))
		return DIRAUTH_ERR_SYNTAX;
	if (result->count == result->capacity)
		return DIRAUTH_ERR_BOUNDS;
	memcpy(result->items + result->count * section->kind.item_size, item, section->kind.item_size);
	result->count++;
	return 0;
}

static int keep_in_result(void *context, const void *item)
{
	return result_append(context, item);
}

static size_t add_saturating(size_t a, size_t b)
{
	return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

/* Reads one section's count and operations and merges them with the base's items into body. */
static int apply_section(const struct delta_section *section, struct line_reader *reader,
                         const struct vote_body *base, const struct vote_body_limits *limits,
                         struct vote_body *body)
{
	struct sorted_items from = section->of(base);
	size_t limit = section->limit(limits);
	uint64_t count;
	if (from.count > 0 && !from.items)
		return DIRAUTH_ERR_SYNTAX;
	int rc = lines_expect_u64(reader, section->keyword, &count);
	if (rc)
		return rc;
	if (count > add_saturating(from.count, limit))
		return DIRAUTH_ERR_BOUNDS;
	if (count > (reader->len - reader->pos) / section->min_operation_bytes)
		return DIRAUTH_ERR_SYNTAX;
	struct section_result result = {section, NULL, 0, add_saturating(from.count, (size_t)count)};
	if (result.capacity > limit)
		result.capacity = limit;
	if (result.capacity > 0 && !(result.items = calloc(result.capacity, section->kind.item_size)))
		return DIRAUTH_ERR_NOMEM;
	section->set(body, result.items, 0);
	union delta_item operation, previous;
	struct sorted_apply merge = {&section->kind, from, 0, keep_in_result, &result};
	for (uint64_t k = 0; rc == 0 && k < count; k++) {
		int put;
		if ((rc = read_operation(reader, section, &put, &operation)) != 0)
			break;
		rc = sorted_apply_change(&merge, k > 0 ? &previous : NULL, &operation, put);
		previous = operation;
	}
	if (rc == 0)
		rc = sorted_apply_finish(&merge);
	if (rc == 0 && result.count == 0) {
		free(result.items);
		result.items = NULL;
	}
	section->set(body, result.items, result.count);
	return rc;
}

/* The target's preamble, from the caller: the names a body's encoder would accept. */
static int preamble_set(struct vote_body *body, const char *namespace_name, uint64_t epoch,
                        const char *authority)
{
	if (!text_field_is_name(namespace_name, sizeof(body->namespace_name), NAMESPACE_NAME_MAX) ||
	    !names_key_name_field_is_ascii(authority, sizeof(body->authority)))
		return DIRAUTH_ERR_SYNTAX;
	memcpy(body->namespace_name, namespace_name, strlen(namespace_name) + 1);
	memcpy(body->authority, authority, strlen(authority) + 1);
	body->epoch = epoch;
	return 0;
}

int vote_delta_apply(const struct vote_body *base, const uint8_t *delta, size_t len,
                     const struct vote_body_limits *limits, const char *namespace_name, uint64_t epoch,
                     const char *authority, struct vote_body **out)
{
	struct line_reader reader;
	uint8_t base_digest[32];
	*out = NULL;
	struct vote_body *body = calloc(1, sizeof(*body));
	if (!body)
		return DIRAUTH_ERR_NOMEM;
	int rc = preamble_set(body, namespace_name, epoch, authority);
	lines_init(&reader, delta, len, VOTE_DELTA_LINE_MAX);
	if (rc == 0)
		rc = read_base(&reader, base_digest);
	for (size_t s = 0; rc == 0 && s < DELTA_SECTION_COUNT; s++)
		rc = apply_section(&delta_sections[s], &reader, base, limits, body);
	if (rc == 0 && !lines_at_end(&reader))
		rc = DIRAUTH_ERR_SYNTAX;
	if (rc)
		vote_body_free(body);
	else
		*out = body;
	return rc;
}
