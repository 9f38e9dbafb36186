/*
 * lines.c: the bounded line reader under every document parser.
 *
 * The checks here are the ones every document shares (line ending, length, character set,
 * spacing), optional lines, the framing of raw parts both ways, the empty line that ends a list,
 * the last part that runs to the end, and the frame around every parse (bound, canonical check,
 * clearing on failure), so a codec only states its own grammar.
 */
#include "schema/lines.h"

#include "schema/encoding.h"
#include "base/error.h"
#include "schema/names.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void lines_init(struct line_reader *reader, const uint8_t *buf, size_t len, size_t max_line_length)
{
	reader->buf = buf;
	reader->len = len;
	reader->pos = 0;
	reader->line_number = 0;
	reader->max_line_length = max_line_length;
}

int lines_at_end(const struct line_reader *reader)
{
	return reader->pos >= reader->len;
}

int lines_next(struct line_reader *reader, struct text_span *line)
{
	if (reader->pos >= reader->len)
		return DIRAUTH_ERR_SYNTAX;
	const uint8_t *start = reader->buf + reader->pos;
	size_t available = reader->len - reader->pos;
	size_t scan = available < reader->max_line_length + 1 ? available : reader->max_line_length + 1;
	const uint8_t *newline = memchr(start, '\n', scan);
	if (!newline)
		return available > reader->max_line_length ? DIRAUTH_ERR_BOUNDS : DIRAUTH_ERR_SYNTAX;
	size_t len = (size_t)(newline - start);
	if (len == 0 || start[0] == ' ' || start[len - 1] == ' ')
		return DIRAUTH_ERR_SYNTAX;
	for (size_t i = 0; i < len; i++) {
		if (start[i] < 0x20 || start[i] > 0x7e)
			return DIRAUTH_ERR_SYNTAX;
		if (start[i] == ' ' && start[i + 1] == ' ')
			return DIRAUTH_ERR_SYNTAX;
	}
	line->data = (const char *)start;
	line->len = len;
	reader->pos += len + 1;
	reader->line_number++;
	return 0;
}

int lines_expect(struct line_reader *reader, const char *keyword, struct text_span *value)
{
	struct text_span line;
	int rc = lines_next(reader, &line);
	if (rc)
		return rc;
	size_t keyword_len = strlen(keyword);
	if (line.len <= keyword_len + 1 || memcmp(line.data, keyword, keyword_len) != 0 ||
	    line.data[keyword_len] != ' ')
		return DIRAUTH_ERR_SYNTAX;
	value->data = line.data + keyword_len + 1;
	value->len = line.len - keyword_len - 1;
	return 0;
}

int lines_expect_u64(struct line_reader *reader, const char *keyword, uint64_t *out)
{
	struct text_span value;
	int rc = lines_expect(reader, keyword, &value);
	return rc ? rc : text_parse_u64(value, out);
}

int lines_expect_hex(struct line_reader *reader, const char *keyword, uint8_t *out, size_t len)
{
	struct text_span value;
	int rc = lines_expect(reader, keyword, &value);
	return rc ? rc : text_parse_hex(value, out, len);
}

int lines_expect_name(struct line_reader *reader, const char *keyword, char *out, size_t cap)
{
	struct text_span value;
	int rc = lines_expect(reader, keyword, &value);
	if (rc)
		return rc;
	if (cap == 0 || !text_is_name(value, cap - 1))
		return DIRAUTH_ERR_SYNTAX;
	return text_copy(value, out, cap);
}

int lines_expect_origin(struct line_reader *reader, char *out, size_t cap)
{
	struct text_span value;
	int rc = lines_expect(reader, "origin", &value);
	if (rc)
		return rc;
	if (!names_origin_is_valid(value.data, value.len))
		return DIRAUTH_ERR_SYNTAX;
	return text_copy(value, out, cap);
}

int lines_expect_count(struct line_reader *reader, const char *keyword, size_t max_items,
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

int lines_read_section(struct line_reader *reader, const struct lines_section *section, size_t max_items,
                       void **items, size_t *done)
{
	size_t count;
	*items = NULL;
	*done = 0;
	int rc = lines_expect_count(reader, section->keyword, max_items, section->min_item_bytes, &count);
	if (rc || count == 0)
		return rc;
	uint8_t *array = calloc(count, section->item_size);
	if (!array)
		return DIRAUTH_ERR_NOMEM;
	*items = array;
	for (size_t i = 0; i < count; i++) {
		uint8_t *item = array + i * section->item_size;
		if ((rc = section->read_item(reader, item)) != 0)
			return rc;
		if (i > 0 && section->compare(item - section->item_size, item) >= 0)
			return DIRAUTH_ERR_SYNTAX;
		*done = i + 1;
	}
	return 0;
}

int lines_read_optional_section(struct line_reader *reader, const struct lines_section *section,
                                size_t max_items, void **items, size_t *done)
{
	*items = NULL;
	if (!lines_peek_keyword(reader, section->keyword))
		return 0;
	int rc = lines_read_section(reader, section, max_items, items, done);
	return rc == 0 && *done == 0 ? DIRAUTH_ERR_SYNTAX : rc;
}

/* lines_take_framed's reading, the smallest length allowed being min (0 or 1). */
static int take_framed(struct line_reader *reader, struct text_span length, uint64_t min, size_t max,
                       const uint8_t **part, size_t *part_len)
{
	uint64_t value;
	if (text_parse_u64(length, &value) != 0 || value < min)
		return DIRAUTH_ERR_SYNTAX;
	if (value > max || value > reader->len - reader->pos)
		return DIRAUTH_ERR_BOUNDS;
	*part = reader->buf + reader->pos;
	*part_len = (size_t)value;
	reader->pos += (size_t)value;
	return 0;
}

int lines_take_framed(struct line_reader *reader, struct text_span length, size_t max, const uint8_t **part,
                      size_t *part_len)
{
	return take_framed(reader, length, 1, max, part, part_len);
}

int lines_take_framed_or_empty(struct line_reader *reader, struct text_span length, size_t max,
                               const uint8_t **part, size_t *part_len)
{
	return take_framed(reader, length, 0, max, part, part_len);
}

int lines_append_framed(struct buffer *out, size_t start, size_t limit, const char *head, const uint8_t *part,
                        size_t len)
{
	if (!part || len == 0)
		return DIRAUTH_ERR_SYNTAX;
	size_t line_len = strlen(head) + 2 + (size_t)snprintf(NULL, 0, "%zu", len);
	size_t used = out->len - start;
	if (len > limit || used > limit - len || line_len > limit - len - used)
		return DIRAUTH_ERR_BOUNDS;
	size_t at = out->len;
	int rc = buffer_appendf(out, "%s %zu\n", head, len);
	if (rc == 0)
		rc = buffer_append(out, part, len);
	if (rc)
		buffer_truncate(out, at);
	return rc;
}

int lines_expect_exact(struct line_reader *reader, const char *text)
{
	struct text_span line;
	int rc = lines_next(reader, &line);
	if (rc)
		return rc;
	return text_equals(line, text) ? 0 : DIRAUTH_ERR_SYNTAX;
}

int lines_peek_keyword(const struct line_reader *reader, const char *keyword)
{
	size_t keyword_len = strlen(keyword);
	size_t available = reader->pos < reader->len ? reader->len - reader->pos : 0;
	return available > keyword_len && memcmp(reader->buf + reader->pos, keyword, keyword_len) == 0 &&
	       reader->buf[reader->pos + keyword_len] == ' ';
}

int lines_expect_optional(struct line_reader *reader, const char *keyword, struct text_span *value)
{
	if (!lines_peek_keyword(reader, keyword))
		return DIRAUTH_ERR_NOT_FOUND;
	return lines_expect(reader, keyword, value);
}

int lines_take_blank(struct line_reader *reader)
{
	if (reader->pos >= reader->len || reader->buf[reader->pos] != '\n')
		return 0;
	reader->pos++;
	reader->line_number++;
	return 1;
}

void lines_take_rest(struct line_reader *reader, const uint8_t **rest, size_t *rest_len)
{
	size_t pos = reader->pos < reader->len ? reader->pos : reader->len;
	*rest = reader->buf + pos;
	*rest_len = reader->len - pos;
	reader->pos = reader->len;
}

int text_next_field(struct text_span *rest, struct text_span *field)
{
	if (rest->len == 0)
		return DIRAUTH_ERR_SYNTAX;
	const char *space = memchr(rest->data, ' ', rest->len);
	size_t len = space ? (size_t)(space - rest->data) : rest->len;
	if (len == 0)
		return DIRAUTH_ERR_SYNTAX;
	field->data = rest->data;
	field->len = len;
	if (space) {
		rest->data = space + 1;
		rest->len -= len + 1;
		if (rest->len == 0)
			return DIRAUTH_ERR_SYNTAX; /* trailing space */
	} else {
		rest->data += len;
		rest->len = 0;
	}
	return 0;
}

int text_equals(struct text_span span, const char *s)
{
	size_t len = strlen(s);
	return span.len == len && memcmp(span.data, s, len) == 0;
}

int text_copy(struct text_span span, char *out, size_t cap)
{
	if (span.len >= cap)
		return DIRAUTH_ERR_BOUNDS;
	memcpy(out, span.data, span.len);
	out[span.len] = 0;
	return 0;
}

int text_parse_u64(struct text_span span, uint64_t *out)
{
	return decimal_parse(span.data, span.len, out);
}

int text_parse_hex(struct text_span span, uint8_t *out, size_t len)
{
	return hex_decode(span.data, span.len, out, len);
}

int text_next_hex(struct text_span *rest, uint8_t *out, size_t len)
{
	struct text_span field;
	int rc = text_next_field(rest, &field);
	if (rc)
		return rc;
	return text_parse_hex(field, out, len) ? DIRAUTH_ERR_SYNTAX : 0;
}

int text_next_u64(struct text_span *rest, uint64_t *out)
{
	struct text_span field;
	int rc = text_next_field(rest, &field);
	return rc ? rc : text_parse_u64(field, out);
}

int text_index_of(const char *const *names, size_t count, const char *text, size_t len)
{
	for (size_t i = 0; i < count; i++)
		if (strlen(names[i]) == len && memcmp(names[i], text, len) == 0)
			return (int)i;
	return -1;
}

int text_is_name(struct text_span span, size_t max)
{
	if (span.len == 0 || span.len > max)
		return 0;
	if (span.data[0] == '-' || span.data[span.len - 1] == '-')
		return 0;
	for (size_t i = 0; i < span.len; i++) {
		char c = span.data[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
			return 0;
	}
	return 1;
}

int text_field_is_name(const char *field, size_t cap, size_t max)
{
	struct text_span span = {field, strnlen(field, cap)};
	return span.len < cap && text_is_name(span, max);
}

/* The text is canonical only when encoding the value parsed from it yields exactly the same
 * bytes. */
static int require_canonical(const uint8_t *text, size_t len, const void *value, lines_encoder encode)
{
	struct buffer canonical;
	buffer_init(&canonical);
	int rc = encode(value, &canonical);
	if (rc == 0 && (canonical.len != len || memcmp(canonical.data, text, len) != 0))
		rc = DIRAUTH_ERR_SYNTAX;
	buffer_free(&canonical);
	return rc;
}

int lines_parse_document(const struct lines_codec *codec, const uint8_t *text, size_t len, void *value)
{
	memset(value, 0, codec->value_size);
	int rc = len > codec->max_bytes ? DIRAUTH_ERR_BOUNDS : codec->parse_fields(text, len, value);
	if (rc == 0)
		rc = require_canonical(text, len, value, codec->encode);
	if (rc == 0)
		return 0;
	if (codec->clear)
		codec->clear(value);
	else
		memset(value, 0, codec->value_size);
	return rc;
}
