/*
 * snapshot_diff.c: the codec of a snapshot body written as its difference from an older body
 * (snapshot_diff.h, schema/snapshot-diff.md).
 *
 * Mirrors fetch a body of tens of megabytes every epoch, most of whose records did not change.
 * A diff carries only the entries that did, keyed as the body sorts them, so building one is a
 * linear merge of the two bodies' sorted entries and applying one a linear merge of the base's
 * entries with the changes: no search for a longest common subsequence, nothing quadratic, and
 * nothing held but the bodies and their parsed entries. The three sections of a body (records,
 * health, revocations) differ only in their entry type, their key and the spelling of their lines,
 * so each is a row of one table, and one merge writes and one merge applies them all: the merges of
 * sorted_merge.h, which the vote delta's are too. An entry is spelled in a diff exactly as in a body,
 * read and written by the body's own codec (schema/snapshot.h).
 *
 * A diff comes from a server a mirror need not trust. The applier writes the result as it merges
 * (its section counts are in the diff's head, so no line has to wait for the entries after it),
 * stops as soon as the result outgrows the size the head names, and hands nothing out unless the
 * result is byte for byte the body the head names: its size, its SHA-256, its grammar, its counts
 * and its records root.
 */
#include "schema/snapshot_diff.h"

#include "base/error.h"
#include "crypto/crypto.h"
#include "schema/encoding.h"
#include "schema/lines.h"
#include "schema/revocation.h"
#include "schema/sorted_merge.h"

#include <stdlib.h>
#include <string.h>

#define SNAPSHOT_DIFF_FIRST_LINE "dirauth snapshot-diff v1"

/* One entry of any section, for the change being read. */
union diff_entry {
	struct snapshot_record record;
	struct snapshot_health health;
	struct snapshot_revocation revocation;
};

/* What differs from one section to the next. */
struct diff_section {
	const char *changes_keyword; /* the line that counts the section's changes */
	const char *body_keyword;    /* the body's count line of the section; NULL for the records */
	/* The entry's size, its order by key (as the body sorts the section) and whether two entries of
	 * one key are equal in full: what the merges of sorted_merge.h need. */
	struct sorted_kind kind;
	size_t min_change_bytes; /* the shortest change, a del line with its '\n' */
	struct sorted_items (*of)(const struct snapshot_body *body);
	uint64_t (*in_head)(const struct snapshot_diff_head *head); /* the target's entries */
	size_t (*limit)(const struct snapshot_body_limits *limits);
	int (*read_entry)(struct line_reader *reader, void *entry);
	int (*write_entry)(const void *entry, struct buffer *out); /* its line and its note */
	int (*read_key)(struct text_span *rest, void *entry);
	int (*write_key)(const void *entry, struct buffer *out); /* "del <key>\n" */
};

static int notes_equal(const uint8_t *a, size_t a_len, const uint8_t *b, size_t b_len)
{
	return a_len == b_len && memcmp(a, b, a_len) == 0;
}

/* ---- records ---- */

static struct sorted_items records_of(const struct snapshot_body *body)
{
	return (struct sorted_items){body->records, body->record_count};
}

static uint64_t records_in_head(const struct snapshot_diff_head *head)
{
	return head->record_count;
}

static size_t records_limit(const struct snapshot_body_limits *limits)
{
	return limits->max_records;
}

static int record_compare(const void *a, const void *b)
{
	const struct snapshot_record *x = a, *y = b;
	return memcmp(x->service_id, y->service_id, SERVICE_ID_SIZE);
}

static int record_same(const void *a, const void *b)
{
	const struct snapshot_record *x = a, *y = b;
	return notes_equal(x->note, x->note_len, y->note, y->note_len);
}

static int record_read(struct line_reader *reader, void *entry)
{
	return snapshot_body_read_record(reader, entry);
}

static int record_write(const void *entry, struct buffer *out)
{
	const struct snapshot_record *record = entry;
	int rc = snapshot_body_encode_record_line(record->service_id, record->note_len, out);
	return rc ? rc : buffer_append(out, record->note, record->note_len);
}

static int record_read_key(struct text_span *rest, void *entry)
{
	struct snapshot_record *record = entry;
	return text_next_hex(rest, record->service_id, SERVICE_ID_SIZE);
}

static int record_write_key(const void *entry, struct buffer *out)
{
	const struct snapshot_record *record = entry;
	char service_hex[2 * SERVICE_ID_SIZE + 1];
	hex_encode(record->service_id, SERVICE_ID_SIZE, service_hex);
	return buffer_appendf(out, "del %s\n", service_hex);
}

/* ---- health ---- */

static struct sorted_items health_of(const struct snapshot_body *body)
{
	return (struct sorted_items){body->health, body->health_count};
}

static uint64_t health_in_head(const struct snapshot_diff_head *head)
{
	return head->health_count;
}

static size_t health_limit(const struct snapshot_body_limits *limits)
{
	return limits->max_health;
}

static int health_compare(const void *a, const void *b)
{
	return snapshot_health_order(a, b);
}

static int health_same(const void *a, const void *b)
{
	const struct snapshot_health *x = a, *y = b;
	return x->health_class == y->health_class && x->signer == y->signer &&
	       notes_equal(x->note, x->note_len, y->note, y->note_len);
}

static int health_read(struct line_reader *reader, void *entry)
{
	return snapshot_body_read_health(reader, entry);
}

static int health_write(const void *entry, struct buffer *out)
{
	const struct snapshot_health *health = entry;
	int rc = snapshot_body_encode_health_line(health, out);
	return rc ? rc : buffer_append(out, health->note, health->note_len);
}

static int health_read_key(struct text_span *rest, void *entry)
{
	struct snapshot_health *health = entry;
	int rc = text_next_hex(rest, health->service_id, SERVICE_ID_SIZE);
	return rc ? rc : text_next_hex(rest, health->endpoint_id, ENDPOINT_ID_SIZE);
}

static int health_write_key(const void *entry, struct buffer *out)
{
	const struct snapshot_health *health = entry;
	char service_hex[2 * SERVICE_ID_SIZE + 1], endpoint_hex[2 * ENDPOINT_ID_SIZE + 1];
	hex_encode(health->service_id, SERVICE_ID_SIZE, service_hex);
	hex_encode(health->endpoint_id, ENDPOINT_ID_SIZE, endpoint_hex);
	return buffer_appendf(out, "del %s %s\n", service_hex, endpoint_hex);
}

/* ---- revocations: keyed by their target ---- */

static struct sorted_items revocations_of(const struct snapshot_body *body)
{
	return (struct sorted_items){body->revocations, body->revocation_count};
}

static uint64_t revocations_in_head(const struct snapshot_diff_head *head)
{
	return head->revocation_count;
}

static size_t revocations_limit(const struct snapshot_body_limits *limits)
{
	return limits->max_revocations;
}

static int revocation_compare(const void *a, const void *b)
{
	return snapshot_revocation_order(a, b);
}

static int revocation_same(const void *a, const void *b)
{
	const struct snapshot_revocation *x = a, *y = b;
	return x->since == y->since && notes_equal(x->note, x->note_len, y->note, y->note_len);
}

static int revocation_read(struct line_reader *reader, void *entry)
{
	return snapshot_body_read_revocation(reader, entry);
}

static int revocation_write(const void *entry, struct buffer *out)
{
	const struct snapshot_revocation *revocation = entry;
	int rc = snapshot_body_encode_revocation_line(revocation, out);
	return rc ? rc : buffer_append(out, revocation->note, revocation->note_len);
}

static int revocation_read_key(struct text_span *rest, void *entry)
{
	struct snapshot_revocation *revocation = entry;
	return revocation_target_read(rest, revocation->service_id, &revocation->has_endpoint,
	                              revocation->endpoint_id);
}

static int revocation_write_key(const void *entry, struct buffer *out)
{
	const struct snapshot_revocation *revocation = entry;
	char target[REVOCATION_TARGET_TEXT_SIZE];
	revocation_target_format(revocation->service_id, revocation->has_endpoint, revocation->endpoint_id,
	                         target);
	return buffer_appendf(out, "del %s\n", target);
}

/* In the order of the diff and of the body. The shortest changes: "del " and 64 hex; "del ", 64
 * hex, a space and 64 hex; "del ", 64 hex and " -"; each with its '\n'. */
static const struct diff_section diff_sections[] = {
    {"record-changes",
     NULL,
     {sizeof(struct snapshot_record), record_compare, record_same},
     69,
     records_of,
     records_in_head,
     records_limit,
     record_read,
     record_write,
     record_read_key,
     record_write_key},
    {"health-changes",
     "health",
     {sizeof(struct snapshot_health), health_compare, health_same},
     134,
     health_of,
     health_in_head,
     health_limit,
     health_read,
     health_write,
     health_read_key,
     health_write_key},
    {"revocation-changes",
     "revocations",
     {sizeof(struct snapshot_revocation), revocation_compare, revocation_same},
     71,
     revocations_of,
     revocations_in_head,
     revocations_limit,
     revocation_read,
     revocation_write,
     revocation_read_key,
     revocation_write_key},
};
#define DIFF_SECTION_COUNT (sizeof(diff_sections) / sizeof(diff_sections[0]))

/* ---- the head ---- */

static int head_encode(const struct snapshot_diff_head *head, struct buffer *out)
{
	char base_hex[65], target_hex[65], root_hex[65];
	hex_encode(head->base_sha256, 32, base_hex);
	hex_encode(head->target_sha256, 32, target_hex);
	hex_encode(head->records_root, 32, root_hex);
	return buffer_appendf(
	    out,
	    SNAPSHOT_DIFF_FIRST_LINE "\nbase %s\ntarget %s\ntarget-size %llu\nnamespace %s\n"
	                             "epoch %llu\nrecords %llu\nrecords-root %s\nhealth %llu\n"
	                             "revocations %llu\n",
	    base_hex, target_hex, (unsigned long long)head->target_size, head->namespace_name,
	    (unsigned long long)head->epoch, (unsigned long long)head->record_count, root_hex,
	    (unsigned long long)head->health_count, (unsigned long long)head->revocation_count);
}

static int head_read(struct line_reader *reader, struct snapshot_diff_head *head)
{
	int rc;
	memset(head, 0, sizeof(*head));
	if ((rc = lines_expect_exact(reader, SNAPSHOT_DIFF_FIRST_LINE)) != 0 ||
	    (rc = lines_expect_hex(reader, "base", head->base_sha256, 32)) != 0 ||
	    (rc = lines_expect_hex(reader, "target", head->target_sha256, 32)) != 0 ||
	    (rc = lines_expect_u64(reader, "target-size", &head->target_size)) != 0 ||
	    (rc = lines_expect_name(reader, "namespace", head->namespace_name,
	                            sizeof(head->namespace_name))) != 0 ||
	    (rc = lines_expect_u64(reader, "epoch", &head->epoch)) != 0 ||
	    (rc = lines_expect_u64(reader, "records", &head->record_count)) != 0 ||
	    (rc = lines_expect_hex(reader, "records-root", head->records_root, 32)) != 0 ||
	    (rc = lines_expect_u64(reader, "health", &head->health_count)) != 0 ||
	    (rc = lines_expect_u64(reader, "revocations", &head->revocation_count)) != 0)
		memset(head, 0, sizeof(*head));
	return rc;
}

int snapshot_diff_parse_head(const uint8_t *diff, size_t len, struct snapshot_diff_head *head)
{
	struct line_reader reader;
	lines_init(&reader, diff, len, SNAPSHOT_DIFF_LINE_MAX);
	return head_read(&reader, head);
}

/* ---- building ---- */

/* What section_changes's walk writes into: the changes counted, and written to out unless it is
 * NULL. */
struct section_writer {
	const struct diff_section *section;
	struct buffer *out;
	size_t changes;
};

static int write_change(void *context, const void *removed, const void *put)
{
	struct section_writer *writer = context;
	writer->changes++;
	if (!writer->out)
		return 0;
	return put ? writer->section->write_entry(put, writer->out)
	           : writer->section->write_key(removed, writer->out);
}

/* The changes from base to target in one section, in key order: counted into *changes, and
 * written to out unless it is NULL. */
static int section_changes(const struct diff_section *section, struct sorted_items base,
                           struct sorted_items target, struct buffer *out, size_t *changes)
{
	struct section_writer writer = {section, out, 0};
	int rc = sorted_merge_changes(&section->kind, base, target, write_change, &writer);
	*changes = writer.changes;
	return rc;
}

int snapshot_diff_build(const uint8_t *base, size_t base_len, const uint8_t *target, size_t target_len,
                        const struct snapshot_body_limits *limits, struct buffer *out)
{
	struct snapshot_body *from = NULL, *to = NULL;
	struct snapshot_diff_head head;
	size_t start = out->len;
	int rc;
	memset(&head, 0, sizeof(head));
	if ((rc = snapshot_body_parse_sections(base, base_len, limits, &from)) != 0 ||
	    (rc = snapshot_body_parse_sections(target, target_len, limits, &to)) != 0 ||
	    (rc = crypto_sha256(base, base_len, head.base_sha256)) != 0 ||
	    (rc = crypto_sha256(target, target_len, head.target_sha256)) != 0 ||
	    (rc = snapshot_records_root(to->records, to->record_count, head.records_root)) != 0)
		goto cleanup;
	head.target_size = target_len;
	memcpy(head.namespace_name, to->namespace_name, sizeof(head.namespace_name));
	head.epoch = to->epoch;
	head.record_count = to->record_count;
	head.health_count = to->health_count;
	head.revocation_count = to->revocation_count;
	rc = head_encode(&head, out);
	for (size_t s = 0; rc == 0 && s < DIFF_SECTION_COUNT; s++) {
		const struct diff_section *section = &diff_sections[s];
		size_t changes;
		rc = section_changes(section, section->of(from), section->of(to), NULL, &changes);
		if (rc == 0)
			rc = buffer_appendf(out, "%s %zu\n", section->changes_keyword, changes);
		if (rc == 0)
			rc = section_changes(section, section->of(from), section->of(to), out, &changes);
	}
cleanup:
	if (rc)
		buffer_truncate(out, start);
	snapshot_body_free(from);
	snapshot_body_free(to);
	return rc;
}

/* ---- applying ---- */

/* The target body being written: where it starts in out, the size the head names, past which it
 * is refused at once, and the current section's entry count and writer. */
struct diff_result {
	struct buffer *out;
	size_t start;
	uint64_t target_size;
	const struct diff_section *section;
	uint64_t written;
};

static int result_write(void *context, const void *entry)
{
	struct diff_result *result = context;
	int rc = result->section->write_entry(entry, result->out);
	result->written++;
	if (rc == 0 && result->out->len - result->start > result->target_size)
		rc = DIRAUTH_ERR_MISMATCH;
	return rc;
}

/* "del <key>" or an entry spelled as in a body: one change. */
static int read_change(struct line_reader *reader, const struct diff_section *section, int *put,
                       union diff_entry *entry)
{
	memset(entry, 0, sizeof(*entry));
	if (!lines_peek_keyword(reader, "del")) {
		*put = 1;
		return section->read_entry(reader, entry);
	}
	*put = 0;
	struct text_span rest;
	int rc = lines_expect(reader, "del", &rest);
	if (rc == 0)
		rc = section->read_key(&rest, entry);
	if (rc == 0 && rest.len != 0)
		rc = DIRAUTH_ERR_SYNTAX;
	return rc;
}

static size_t add_saturating(size_t a, size_t b)
{
	return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

/* Reads one section's changes and merges them with the base's entries into the result, counting
 * the entries written into result->written. */
static int apply_section(const struct diff_section *section, struct line_reader *reader,
                         struct sorted_items from, const struct snapshot_body_limits *limits,
                         struct diff_result *result)
{
	uint64_t count;
	result->section = section;
	result->written = 0;
	int rc = lines_expect_u64(reader, section->changes_keyword, &count);
	if (rc)
		return rc;
	if (count > add_saturating(from.count, section->limit(limits)))
		return DIRAUTH_ERR_BOUNDS;
	if (count > (reader->len - reader->pos) / section->min_change_bytes)
		return DIRAUTH_ERR_SYNTAX;
	union diff_entry change, previous;
	struct sorted_apply merge = {&section->kind, from, 0, result_write, result};
	for (uint64_t k = 0; rc == 0 && k < count; k++) {
		int put;
		if ((rc = read_change(reader, section, &put, &change)) != 0)
			break;
		rc = sorted_apply_change(&merge, k > 0 ? &previous : NULL, &change, put);
		previous = change;
	}
	return rc ? rc : sorted_apply_finish(&merge);
}

/* The head's counts within the applier's limits. */
static int head_check_limits(const struct snapshot_diff_head *head, const struct snapshot_body_limits *limits)
{
	for (size_t s = 0; s < DIFF_SECTION_COUNT; s++)
		if (diff_sections[s].in_head(head) > diff_sections[s].limit(limits))
			return DIRAUTH_ERR_BOUNDS;
	return 0;
}

/* The result against what the head says of it: size, digest, grammar, counts, records root. */
static int result_check(const struct diff_result *result, const struct snapshot_diff_head *head,
                        const struct snapshot_body_limits *limits)
{
	const uint8_t *body = result->out->data + result->start;
	size_t len = result->out->len - result->start;
	uint8_t digest[CRYPTO_SHA256_SIZE];
	merkle_hash root;
	struct snapshot_body *parsed = NULL;
	int rc;
	if (len != head->target_size)
		return DIRAUTH_ERR_MISMATCH;
	if ((rc = crypto_sha256(body, len, digest)) != 0)
		return rc;
	if (!crypto_equal(digest, head->target_sha256, sizeof(digest)))
		return DIRAUTH_ERR_MISMATCH;
	if ((rc = snapshot_body_parse_sections(body, len, limits, &parsed)) != 0)
		return rc;
	if (parsed->record_count != head->record_count || parsed->health_count != head->health_count ||
	    parsed->revocation_count != head->revocation_count ||
	    strcmp(parsed->namespace_name, head->namespace_name) || parsed->epoch != head->epoch)
		rc = DIRAUTH_ERR_MISMATCH;
	else if ((rc = snapshot_records_root(parsed->records, parsed->record_count, root)) == 0 &&
	         memcmp(root, head->records_root, sizeof(root)) != 0)
		rc = DIRAUTH_ERR_MISMATCH;
	snapshot_body_free(parsed);
	return rc;
}

int snapshot_diff_apply(const uint8_t *base, size_t base_len, const uint8_t *diff, size_t diff_len,
                        const struct snapshot_body_limits *limits, struct buffer *out_target)
{
	struct line_reader reader;
	struct snapshot_diff_head head;
	struct snapshot_body *from = NULL;
	uint8_t base_digest[CRYPTO_SHA256_SIZE];
	struct diff_result result = {out_target, out_target->len, 0, NULL, 0};
	int rc;
	lines_init(&reader, diff, diff_len, SNAPSHOT_DIFF_LINE_MAX);
	if ((rc = head_read(&reader, &head)) != 0 || (rc = head_check_limits(&head, limits)) != 0 ||
	    (rc = crypto_sha256(base, base_len, base_digest)) != 0)
		return rc;
	if (!crypto_equal(base_digest, head.base_sha256, sizeof(base_digest)))
		return DIRAUTH_ERR_MISMATCH;
	if ((rc = snapshot_body_parse_sections(base, base_len, limits, &from)) != 0)
		return rc;
	result.target_size = head.target_size;
	/* Room for the result at once: no more than the head says, nor than base and diff could make. */
	uint64_t room = add_saturating(base_len, diff_len);
	if (room > head.target_size)
		room = head.target_size;
	rc = buffer_reserve(out_target, (size_t)room);
	if (rc == 0)
		rc =
		    snapshot_body_encode_head(head.namespace_name, head.epoch, head.record_count, out_target);
	for (size_t s = 0; rc == 0 && s < DIFF_SECTION_COUNT; s++) {
		const struct diff_section *section = &diff_sections[s];
		uint64_t claimed = section->in_head(&head);
		if (section->body_keyword && claimed > 0)
			rc = snapshot_body_encode_section_count(section->body_keyword, claimed, out_target);
		if (rc == 0)
			rc = apply_section(section, &reader, section->of(from), limits, &result);
		if (rc == 0 && result.written != claimed)
			rc = DIRAUTH_ERR_MISMATCH;
	}
	if (rc == 0 && !lines_at_end(&reader))
		rc = DIRAUTH_ERR_SYNTAX;
	if (rc == 0)
		rc = result_check(&result, &head, limits);
	if (rc)
		buffer_truncate(out_target, result.start);
	snapshot_body_free(from);
	return rc;
}

int snapshot_diff_worth_offering(size_t diff_len, size_t body_len)
{
	if (body_len == 0)
		return 0;
	size_t share =
	    body_len / 100 * SNAPSHOT_DIFF_OFFER_PERCENT + body_len % 100 * SNAPSHOT_DIFF_OFFER_PERCENT / 100;
	return diff_len <= share;
}
