/*
 * notes_bundle.c: the codec of a request for many notes and of its answer (notes_bundle.h).
 *
 * A request arrives from a peer and names at most NOTES_REQUEST_MAX_ITEMS items, so the whole
 * input is bounded by what that many of the longest item lines take before anything is read, and
 * the item array by what the bytes could hold. The answer carries other documents whole, each
 * framed by its length (lines_take_framed), and is bounded twice: its total bytes, and the notes
 * it can hold, which are at most the items asked for. The writer keeps the room of the longest end
 * line at every step, so that a full answer can always be ended, and the parser applies the same
 * rule, so that both accept the same answers.
 */
#include "schema/notes_bundle.h"

#include "schema/encoding.h"
#include "base/error.h"
#include "schema/lines.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOTES_REQUEST_FIRST_LINE    "dirauth notes-request v1"
#define NOTES_ANSWER_FIRST_LINE     "dirauth notes v1"
/* "registration " 64 hex, a space, 20 digits and '\n': the longest item line. */
#define NOTES_ITEM_MAX_BYTES        99
/* "statement " 64 hex and '\n': the shortest. */
#define NOTES_ITEM_MIN_BYTES        75
/* Lines of a request and of an answer, without '\n': above the longest of each. */
#define NOTES_REQUEST_LINE_MAX      128
#define NOTES_ANSWER_LINE_MAX       64
/* "note 0 1\n" and one byte: the shortest note of an answer. */
#define NOTES_ANSWER_NOTE_MIN_BYTES 10
/* The first line with its '\n' (the size of the string with its NUL), and the longest items. */
#define NOTES_REQUEST_MAX_BYTES                                                                              \
	(sizeof(NOTES_REQUEST_FIRST_LINE) + (size_t)NOTES_REQUEST_MAX_ITEMS * NOTES_ITEM_MAX_BYTES)

size_t notes_request_max_bytes(void)
{
	return NOTES_REQUEST_MAX_BYTES;
}

static int item_write(const struct notes_item *item, struct buffer *out)
{
	char hex[65];
	switch (item->kind) {
	case NOTES_ITEM_REGISTRATION:
		if (item->sequence == 0)
			return DIRAUTH_ERR_SYNTAX;
		hex_encode(item->service_id, SERVICE_ID_SIZE, hex);
		return buffer_appendf(out, "registration %s %llu\n", hex, (unsigned long long)item->sequence);
	case NOTES_ITEM_STATEMENT:
		hex_encode(item->digest, sizeof(item->digest), hex);
		return buffer_appendf(out, "statement %s\n", hex);
	}
	return DIRAUTH_ERR_SYNTAX;
}

int notes_request_encode(const struct notes_item *items, size_t count, struct buffer *out)
{
	if (count == 0 || !items)
		return DIRAUTH_ERR_SYNTAX;
	if (count > NOTES_REQUEST_MAX_ITEMS)
		return DIRAUTH_ERR_BOUNDS;
	size_t start = out->len;
	int rc = buffer_append_string(out, NOTES_REQUEST_FIRST_LINE "\n");
	for (size_t i = 0; rc == 0 && i < count; i++)
		rc = item_write(&items[i], out);
	if (rc)
		buffer_truncate(out, start);
	return rc;
}

/* "registration <service id> <sequence>" or "statement <sha256>". */
static int item_read(struct line_reader *reader, struct notes_item *item)
{
	struct text_span value;
	int rc;
	if (lines_peek_keyword(reader, "registration")) {
		item->kind = NOTES_ITEM_REGISTRATION;
		if ((rc = lines_expect(reader, "registration", &value)) != 0 ||
		    (rc = text_next_hex(&value, item->service_id, SERVICE_ID_SIZE)) != 0 ||
		    (rc = text_next_u64(&value, &item->sequence)) != 0)
			return rc;
		return item->sequence == 0 || value.len != 0 ? DIRAUTH_ERR_SYNTAX : 0;
	}
	item->kind = NOTES_ITEM_STATEMENT;
	if ((rc = lines_expect(reader, "statement", &value)) != 0)
		return rc;
	return text_parse_hex(value, item->digest, sizeof(item->digest)) ? DIRAUTH_ERR_SYNTAX : 0;
}

/* The parsed value of a request, for lines_parse_document. */
struct notes_request {
	struct notes_item *items;
	size_t count;
};

static int request_fields(const uint8_t *text, size_t len, void *value)
{
	struct notes_request *request = value;
	struct line_reader reader;
	lines_init(&reader, text, len, NOTES_REQUEST_LINE_MAX);
	int rc = lines_expect_exact(&reader, NOTES_REQUEST_FIRST_LINE);
	if (rc)
		return rc;
	if (lines_at_end(&reader))
		return DIRAUTH_ERR_SYNTAX;
	/* As many items as the bytes left can hold, and no more than a request may ask for. */
	size_t capacity = (len - reader.pos) / NOTES_ITEM_MIN_BYTES;
	if (capacity > NOTES_REQUEST_MAX_ITEMS)
		capacity = NOTES_REQUEST_MAX_ITEMS;
	if (capacity == 0)
		return DIRAUTH_ERR_SYNTAX;
	if (!(request->items = calloc(capacity, sizeof(*request->items))))
		return DIRAUTH_ERR_NOMEM;
	while (!lines_at_end(&reader)) {
		if (request->count == capacity)
			return capacity == NOTES_REQUEST_MAX_ITEMS ? DIRAUTH_ERR_BOUNDS : DIRAUTH_ERR_SYNTAX;
		if ((rc = item_read(&reader, &request->items[request->count])) != 0)
			return rc;
		request->count++;
	}
	return 0;
}

static int request_write(const void *value, struct buffer *out)
{
	const struct notes_request *request = value;
	return notes_request_encode(request->items, request->count, out);
}

static void request_clear(void *value)
{
	struct notes_request *request = value;
	free(request->items);
	memset(request, 0, sizeof(*request));
}

static const struct lines_codec notes_request_codec = {
    .max_bytes = NOTES_REQUEST_MAX_BYTES,
    .value_size = sizeof(struct notes_request),
    .parse_fields = request_fields,
    .encode = request_write,
    .clear = request_clear,
};

int notes_request_parse(const uint8_t *buf, size_t len, struct notes_item **items, size_t *count)
{
	struct notes_request request;
	int rc = lines_parse_document(&notes_request_codec, buf, len, &request);
	*items = request.items;
	*count = request.count;
	return rc;
}

int notes_answer_begin(struct notes_answer_writer *writer, struct buffer *out, size_t request_count)
{
	memset(writer, 0, sizeof(*writer));
	if (request_count == 0 || request_count > NOTES_REQUEST_MAX_ITEMS)
		return DIRAUTH_ERR_BOUNDS;
	writer->out = out;
	writer->start = out->len;
	writer->request_count = request_count;
	return buffer_append_string(out, NOTES_ANSWER_FIRST_LINE "\n");
}

int notes_answer_add(struct notes_answer_writer *writer, size_t index, const uint8_t *note, size_t len,
                     size_t max_bytes)
{
	if (!note || len == 0 || index >= writer->request_count ||
	    (writer->count > 0 && index <= writer->last_index))
		return DIRAUTH_ERR_SYNTAX;
	if (max_bytes > NOTES_ANSWER_MAX_BYTES)
		max_bytes = NOTES_ANSWER_MAX_BYTES;
	if (max_bytes < NOTES_ANSWER_END_MAX_BYTES)
		return DIRAUTH_ERR_BOUNDS;
	char head[NOTES_ANSWER_LINE_MAX];
	snprintf(head, sizeof(head), "note %zu", index);
	int rc = lines_append_framed(writer->out, writer->start, max_bytes - NOTES_ANSWER_END_MAX_BYTES, head,
	                             note, len);
	if (rc)
		return rc;
	writer->count++;
	writer->last_index = index;
	return 0;
}

int notes_answer_end(struct notes_answer_writer *writer, size_t covered)
{
	if (covered > writer->request_count || (writer->count > 0 && covered <= writer->last_index))
		return DIRAUTH_ERR_SYNTAX;
	return buffer_appendf(writer->out, "end %zu\n", covered);
}

/* "note <index> <length>" and the note it frames, the index below request_count and strictly
 * above the previous note's (NULL before the first). */
static int answer_note_read(struct line_reader *reader, size_t request_count, size_t max_note,
                            const struct notes_answer_note *previous, struct notes_answer_note *note)
{
	struct text_span value;
	uint64_t index;
	int rc;
	if ((rc = lines_expect(reader, "note", &value)) != 0 || (rc = text_next_u64(&value, &index)) != 0)
		return rc;
	if (index >= request_count || (previous && index <= previous->index))
		return DIRAUTH_ERR_SYNTAX;
	note->index = (size_t)index;
	return lines_take_framed(reader, value, max_note, &note->note, &note->len);
}

static int answer_read(const uint8_t *buf, size_t len, size_t request_count, size_t max_note,
                       struct notes_answer_note **notes, size_t *count, size_t *covered)
{
	struct line_reader reader;
	uint64_t end;
	lines_init(&reader, buf, len, NOTES_ANSWER_LINE_MAX);
	int rc = lines_expect_exact(&reader, NOTES_ANSWER_FIRST_LINE);
	if (rc)
		return rc;
	/* At most one note per item asked for, and no more than the bytes left can hold. */
	size_t capacity = (len - reader.pos) / NOTES_ANSWER_NOTE_MIN_BYTES;
	if (capacity > request_count)
		capacity = request_count;
	if (capacity > 0 && !(*notes = calloc(capacity, sizeof(**notes))))
		return DIRAUTH_ERR_NOMEM;
	while (lines_peek_keyword(&reader, "note")) {
		if (*count == capacity)
			return DIRAUTH_ERR_SYNTAX; /* more notes than items, or than the bytes can hold */
		const struct notes_answer_note *previous = *count > 0 ? &(*notes)[*count - 1] : NULL;
		if ((rc = answer_note_read(&reader, request_count, max_note, previous, &(*notes)[*count])) !=
		    0)
			return rc;
		(*count)++;
	}
	if (reader.pos > NOTES_ANSWER_MAX_BYTES - NOTES_ANSWER_END_MAX_BYTES)
		return DIRAUTH_ERR_BOUNDS;
	if ((rc = lines_expect_u64(&reader, "end", &end)) != 0)
		return rc;
	if (end > request_count || (*count > 0 && end <= (*notes)[*count - 1].index))
		return DIRAUTH_ERR_SYNTAX;
	*covered = (size_t)end;
	return lines_at_end(&reader) ? 0 : DIRAUTH_ERR_SYNTAX;
}

int notes_answer_parse(const uint8_t *buf, size_t len, size_t request_count, size_t max_note,
                       struct notes_answer_note **notes, size_t *count, size_t *covered)
{
	*notes = NULL;
	*count = 0;
	*covered = 0;
	int rc = DIRAUTH_ERR_BOUNDS;
	if (request_count >= 1 && request_count <= NOTES_REQUEST_MAX_ITEMS && len <= NOTES_ANSWER_MAX_BYTES)
		rc = answer_read(buf, len, request_count, max_note, notes, count, covered);
	if (rc) {
		free(*notes);
		*notes = NULL;
		*count = 0;
		*covered = 0;
	}
	return rc;
}
