/*
 * lines.h: a bounded reader of line-oriented document text, shared by every document parser.
 *
 * Each dirauth document is a sequence of lines "keyword value\n" in a fixed order. The reader
 * hands out one line at a time, checks that every line ends in '\n', is no longer than the
 * reader's bound, and holds only printable ASCII (0x20..0x7e) with single spaces between
 * fields (no leading, trailing or doubled space). Parsers then take fields off the line. A line
 * may announce a part of raw bytes by its length (lines_take_framed, written by
 * lines_append_framed), the way a document carries other documents whole; a list of lines may end
 * at an empty line (lines_take_blank), and a last part may run to the end (lines_take_rest).
 * lines_parse_document is the frame of every parser: the bound on the text, the kind's own field
 * reading, and the refusal of any text the kind's encoder would not write.
 */
#ifndef DIRAUTH_SCHEMA_LINES_H
#define DIRAUTH_SCHEMA_LINES_H

#include "base/buffer.h"

#include <stddef.h>
#include <stdint.h>

struct line_reader {
	const uint8_t *buf;
	size_t len;
	size_t pos;
	size_t line_number;     /* 1-based number of the line last returned; 0 before the first */
	size_t max_line_length; /* without the '\n' */
};

/* A view of one line or one field: not NUL-terminated, borrowed from the reader's buffer. */
struct text_span {
	const char *data;
	size_t len;
};

void lines_init(struct line_reader *reader, const uint8_t *buf, size_t len, size_t max_line_length);

/* True when every byte has been consumed. */
int lines_at_end(const struct line_reader *reader);

/* Next line, without its '\n'. Returns 0; DIRAUTH_ERR_SYNTAX at the end of input, on a missing
 * final '\n', a byte outside 0x20..0x7e, an empty line, or bad spacing; DIRAUTH_ERR_BOUNDS when
 * the line is longer than the bound. */
int lines_next(struct line_reader *reader, struct text_span *line);

/* Next line, which must be "keyword value" (value non-empty, may contain spaces). Returns 0
 * with *value set, or DIRAUTH_ERR_SYNTAX / DIRAUTH_ERR_BOUNDS. */
int lines_expect(struct line_reader *reader, const char *keyword, struct text_span *value);

/* Next line, which must be "keyword <canonical decimal>". */
int lines_expect_u64(struct line_reader *reader, const char *keyword, uint64_t *out);

/* Next line, which must be "keyword <exactly 2*len lower-case hex digits>". */
int lines_expect_hex(struct line_reader *reader, const char *keyword, uint8_t *out, size_t len);

/* Next line, which must be "keyword <name>", the name (text_is_name) at most cap - 1 bytes long;
 * it is copied into out, NUL-terminated. Returns 0 or DIRAUTH_ERR_SYNTAX / DIRAUTH_ERR_BOUNDS. */
int lines_expect_name(struct line_reader *reader, const char *keyword, char *out, size_t cap);

/* The framed part that follows a line ending in its length: length is that line's last field
 * (the caller has taken the fields before it), a canonical decimal 1..max, and the part is the
 * length raw bytes right after the line's '\n', which may hold any byte value. The reader moves
 * past them, so the next line starts after the part. Returns 0 with *part (pointing into the
 * reader's buffer) and *part_len set; DIRAUTH_ERR_SYNTAX when length is not a canonical decimal or
 * is 0; DIRAUTH_ERR_BOUNDS when it is over max or over the bytes left (nothing consumed then). */
int lines_take_framed(struct line_reader *reader, struct text_span length, size_t max, const uint8_t **part,
                      size_t *part_len);

/* lines_take_framed for a part that may be empty: the length may also be 0, and the part is then
 * the 0 bytes at the reader's position. The same returns otherwise. */
int lines_take_framed_or_empty(struct line_reader *reader, struct text_span length, size_t max,
                               const uint8_t **part, size_t *part_len);

/* The writer's side of lines_take_framed: appends the line "<head> <len>" and then part[0..len)
 * to out, head being the line's text before its length ("note 3"). limit bounds the document
 * being written, which starts at out->data[start]: when it would then be longer than limit, the
 * part is refused whole. Returns 0; DIRAUTH_ERR_SYNTAX (len 0); DIRAUTH_ERR_BOUNDS (over limit,
 * or out past BUFFER_MAX); DIRAUTH_ERR_NOMEM. On error out is as it was. */
int lines_append_framed(struct buffer *out, size_t start, size_t limit, const char *head, const uint8_t *part,
                        size_t len);

/* Next line, which must be "origin <log origin>" (names_origin_is_valid), the origin at most cap - 1
 * bytes long; it is copied into out, NUL-terminated. Returns 0 or DIRAUTH_ERR_SYNTAX /
 * DIRAUTH_ERR_BOUNDS. */
int lines_expect_origin(struct line_reader *reader, char *out, size_t cap);

/* Next line, which must be "keyword <count>" opening a section of count item lines: a count over
 * max_items is DIRAUTH_ERR_BOUNDS; one that the bytes left could not hold, at min_item_bytes (> 0)
 * per item, is DIRAUTH_ERR_SYNTAX, so a caller may allocate count items once this returns 0. */
int lines_expect_count(struct line_reader *reader, const char *keyword, size_t max_items,
                       size_t min_item_bytes, size_t *count);

/* Next line, which must be exactly text. */
int lines_expect_exact(struct line_reader *reader, const char *text);

/* True when the next line starts with "keyword " (does not consume it). */
int lines_peek_keyword(const struct line_reader *reader, const char *keyword);

/* An optional line: lines_expect when the next line starts with "keyword " (lines_peek_keyword),
 * and DIRAUTH_ERR_NOT_FOUND, with nothing consumed, when it does not (another keyword, an empty
 * line, or the end of input). */
int lines_expect_optional(struct line_reader *reader, const char *keyword, struct text_span *value);

/* An empty line, where a document ends a list of lines with one: returns 1 when the next line is
 * empty (just '\n') and moves past it; 0, with nothing consumed, otherwise. */
int lines_take_blank(struct line_reader *reader);

/* The bytes from the reader's position to the end of its buffer, as they are: a last part that runs
 * to the end of the document (a proof file's note). *rest points into the reader's buffer;
 * *rest_len may be 0. The reader is then at the end. */
void lines_take_rest(struct line_reader *reader, const uint8_t **rest, size_t *rest_len);

/* Splits off the first space-separated field of *rest into *field; *rest becomes what follows
 * the space (or empty). Returns 0, or DIRAUTH_ERR_SYNTAX when *rest is empty. */
int text_next_field(struct text_span *rest, struct text_span *field);

/* text_next_field, then the field read as exactly 2*len lower-case hex into out
 * (DIRAUTH_ERR_SYNTAX when it is not), or as a canonical decimal (text_parse_u64's errors). */
int text_next_hex(struct text_span *rest, uint8_t *out, size_t len);
int text_next_u64(struct text_span *rest, uint64_t *out);

/* True when span equals the NUL-terminated string s. */
int text_equals(struct text_span span, const char *s);

/* Copies span into out (capacity cap, NUL-terminated). DIRAUTH_ERR_BOUNDS if it does not fit. */
int text_copy(struct text_span span, char *out, size_t cap);

/* Field parsers: canonical decimal; exactly 2*len lower-case hex. */
int text_parse_u64(struct text_span span, uint64_t *out);
int text_parse_hex(struct text_span span, uint8_t *out, size_t len);

/* A section of a document: the line "<keyword> <count>", then count item lines, each read by
 * read_item into an item of item_size bytes, strictly ascending by compare (negative, 0,
 * positive as memcmp). Every item line is at least min_item_bytes (> 0) long. */
struct lines_section {
	const char *keyword;
	size_t item_size;
	size_t min_item_bytes;
	int (*read_item)(struct line_reader *reader, void *item);
	int (*compare)(const void *a, const void *b);
};

/* Reads a section: its count line (lines_expect_count, max_items), then its items into a new
 * array *items (calloc'd, the caller frees it; NULL for a count of 0). *done counts the items
 * read and in order; on failure *items still holds the array, to be freed. Returns 0, the count
 * line's errors, read_item's errors, DIRAUTH_ERR_SYNTAX for an item not after the one before it,
 * DIRAUTH_ERR_NOMEM. */
int lines_read_section(struct line_reader *reader, const struct lines_section *section, size_t max_items,
                       void **items, size_t *done);

/* lines_read_section for a section that is left out when it has no items: nothing is read, and 0
 * returned with *items NULL, when the next line is not the section's ("<keyword> "); a count of 0
 * is DIRAUTH_ERR_SYNTAX (a second spelling of its absence). */
int lines_read_optional_section(struct line_reader *reader, const struct lines_section *section,
                                size_t max_items, void **items, size_t *done);

/* Writes a parsed document back into its text form (each codec's encoder, behind a small
 * adapter taking const void *). */
typedef int (*lines_encoder)(const void *value, struct buffer *out);

/* What a document kind gives lines_parse_document: its bound, how its fields are read and how
 * its value is written back. A codec keeps one of these as a static constant. */
struct lines_codec {
	size_t max_bytes;  /* the longest text of the kind */
	size_t value_size; /* sizeof the parsed value */
	/* Reads the fields of text into a zeroed value: 0 or the kind's own error. */
	int (*parse_fields)(const uint8_t *text, size_t len, void *value);
	lines_encoder encode;
	/* Releases what a failed parse left in value and zeroes it; NULL when zeroing is enough. */
	void (*clear)(void *value);
};

/* Every document parser: zeroes value (value_size bytes), reads it with parse_fields, then
 * requires the text to be canonical: encoding the value parsed from it must yield exactly the
 * same bytes. Returns 0; DIRAUTH_ERR_BOUNDS when len is over max_bytes; parse_fields's errors;
 * DIRAUTH_ERR_SYNTAX when the bytes differ (a second spelling); or the encoder's own error. On
 * failure value is cleared (codec->clear, or zeroed). */
int lines_parse_document(const struct lines_codec *codec, const uint8_t *text, size_t len, void *value);

/* The index of the name among names[0..count) that equals text[0..len), or -1. */
int text_index_of(const char *const *names, size_t count, const char *text, size_t len);

/* True when span is a name: 1..max bytes of [a-z0-9] and inner '-' (not first or last). */
int text_is_name(struct text_span span, size_t max);

/* text_is_name for a NUL-terminated name kept in a char array of capacity cap (a document's
 * struct): false as well when the array holds no NUL. */
int text_field_is_name(const char *field, size_t cap, size_t max);

#endif
