/*
 * headers_bundle.c: the codec of the stored snapshot headers from an epoch on
 * (headers_bundle.h).
 *
 * Written like the notes answer (notes_bundle.c): each header is carried whole, framed by its
 * length; the answer is bounded by its bytes and by its count, and the item array by what the
 * bytes left could hold before it is allocated. The writer keeps the room of the longest through
 * line at every step, and the parser applies the same rule, so that both accept the same answers.
 */
#include "schema/headers_bundle.h"

#include "base/error.h"
#include "schema/lines.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEADERS_BUNDLE_FIRST_LINE     "dirauth headers v1"
/* Lines without '\n', above the longest ("header ", 20 digits, a space and 7 digits). */
#define HEADERS_BUNDLE_LINE_MAX       64
/* "header 0 1\n" and one byte: the shortest header of an answer. */
#define HEADERS_BUNDLE_ITEM_MIN_BYTES 12

int headers_bundle_begin(struct headers_bundle_writer *writer, struct buffer *out, uint64_t from,
                         uint64_t latest)
{
	memset(writer, 0, sizeof(*writer));
	writer->out = out;
	writer->start = out->len;
	writer->from = from;
	writer->latest = latest;
	return buffer_appendf(out, HEADERS_BUNDLE_FIRST_LINE "\nlatest %llu\n", (unsigned long long)latest);
}

int headers_bundle_add(struct headers_bundle_writer *writer, uint64_t epoch, const uint8_t *note, size_t len,
                       size_t max_bytes)
{
	if (!note || len == 0 || epoch < writer->from || epoch > writer->latest ||
	    (writer->count > 0 && epoch <= writer->last_epoch))
		return DIRAUTH_ERR_SYNTAX;
	if (max_bytes > HEADERS_BUNDLE_MAX_BYTES)
		max_bytes = HEADERS_BUNDLE_MAX_BYTES;
	if (writer->count == HEADERS_BUNDLE_MAX_COUNT || max_bytes < HEADERS_BUNDLE_THROUGH_MAX_BYTES)
		return DIRAUTH_ERR_BOUNDS;
	char head[HEADERS_BUNDLE_LINE_MAX];
	snprintf(head, sizeof(head), "header %llu", (unsigned long long)epoch);
	int rc = lines_append_framed(writer->out, writer->start, max_bytes - HEADERS_BUNDLE_THROUGH_MAX_BYTES,
	                             head, note, len);
	if (rc)
		return rc;
	writer->count++;
	writer->last_epoch = epoch;
	return 0;
}

/* through is latest (complete), or the last header's epoch (stopped early). */
static int through_check(uint64_t latest, size_t count, uint64_t last_epoch, uint64_t through)
{
	return through == latest || (count > 0 && through == last_epoch && through < latest)
	           ? 0
	           : DIRAUTH_ERR_SYNTAX;
}

int headers_bundle_end(struct headers_bundle_writer *writer, uint64_t through)
{
	int rc = through_check(writer->latest, writer->count, writer->last_epoch, through);
	return rc ? rc : buffer_appendf(writer->out, "through %llu\n", (unsigned long long)through);
}

void headers_bundle_clear(struct headers_bundle *bundle)
{
	free(bundle->items);
	memset(bundle, 0, sizeof(*bundle));
}

/* "header <epoch> <length>" and the note it frames, the epoch within [from, latest] and strictly
 * above the previous header's (NULL before the first). */
static int header_read(struct line_reader *reader, uint64_t from, uint64_t latest, size_t max_note,
                       const struct headers_bundle_item *previous, struct headers_bundle_item *item)
{
	struct text_span value;
	int rc;
	if ((rc = lines_expect(reader, "header", &value)) != 0 ||
	    (rc = text_next_u64(&value, &item->epoch)) != 0)
		return rc;
	if (item->epoch < from || item->epoch > latest || (previous && item->epoch <= previous->epoch))
		return DIRAUTH_ERR_SYNTAX;
	return lines_take_framed(reader, value, max_note, &item->note, &item->len);
}

static int bundle_read(const uint8_t *buf, size_t len, uint64_t from, size_t max_note,
                       struct headers_bundle *out)
{
	struct line_reader reader;
	lines_init(&reader, buf, len, HEADERS_BUNDLE_LINE_MAX);
	int rc = lines_expect_exact(&reader, HEADERS_BUNDLE_FIRST_LINE);
	if (rc == 0)
		rc = lines_expect_u64(&reader, "latest", &out->latest);
	if (rc)
		return rc;
	/* No more headers than an answer holds, nor than the bytes left can. */
	size_t capacity = (len - reader.pos) / HEADERS_BUNDLE_ITEM_MIN_BYTES;
	if (capacity > HEADERS_BUNDLE_MAX_COUNT)
		capacity = HEADERS_BUNDLE_MAX_COUNT;
	if (capacity > 0 && !(out->items = calloc(capacity, sizeof(*out->items))))
		return DIRAUTH_ERR_NOMEM;
	while (lines_peek_keyword(&reader, "header")) {
		if (out->count == capacity)
			return capacity == HEADERS_BUNDLE_MAX_COUNT ? DIRAUTH_ERR_BOUNDS : DIRAUTH_ERR_SYNTAX;
		const struct headers_bundle_item *previous =
		    out->count > 0 ? &out->items[out->count - 1] : NULL;
		if ((rc = header_read(&reader, from, out->latest, max_note, previous,
		                      &out->items[out->count])) != 0)
			return rc;
		out->count++;
	}
	if (reader.pos > HEADERS_BUNDLE_MAX_BYTES - HEADERS_BUNDLE_THROUGH_MAX_BYTES)
		return DIRAUTH_ERR_BOUNDS;
	if ((rc = lines_expect_u64(&reader, "through", &out->through)) != 0)
		return rc;
	uint64_t last_epoch = out->count > 0 ? out->items[out->count - 1].epoch : 0;
	if ((rc = through_check(out->latest, out->count, last_epoch, out->through)) != 0)
		return rc;
	return lines_at_end(&reader) ? 0 : DIRAUTH_ERR_SYNTAX;
}

int headers_bundle_parse(const uint8_t *buf, size_t len, uint64_t from, size_t max_note,
                         struct headers_bundle *out)
{
	memset(out, 0, sizeof(*out));
	int rc =
	    len > HEADERS_BUNDLE_MAX_BYTES ? DIRAUTH_ERR_BOUNDS : bundle_read(buf, len, from, max_note, out);
	if (rc)
		headers_bundle_clear(out);
	return rc;
}
