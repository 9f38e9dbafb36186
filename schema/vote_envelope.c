/*
 * vote_envelope.c: the length-framed pair of a vote note and its body or delta
 * (vote_envelope.h).
 *
 * The two versions differ only in their first line and the keyword of the second part, so they
 * are two rows of one table, written and read by the same code.
 */
#include "schema/vote_envelope.h"

#include "base/error.h"
#include "schema/lines.h"

#include <string.h>

/* The longest line: "delta " and the 20 digits of a 64-bit length. */
#define VOTE_ENVELOPE_LINE_MAX 32

struct envelope_version {
	const char *first_line;
	const char *second_part; /* keyword of the line framing the body or delta */
};

/* Indexed by vote_envelope.delta. */
static const struct envelope_version envelope_versions[] = {
    {"dirauth vote-envelope v1", "body"},
    {"dirauth vote-envelope v2", "delta"},
};

static int encode_version(int delta, const uint8_t *note, size_t note_len, const uint8_t *second,
                          size_t second_len, struct buffer *out)
{
	const struct envelope_version *version = &envelope_versions[delta];
	if (!note || !note_len || !second || !second_len)
		return DIRAUTH_ERR_SYNTAX;
	if (note_len > VOTE_ENVELOPE_NOTE_MAX)
		return DIRAUTH_ERR_BOUNDS;
	size_t start = out->len;
	int rc = buffer_appendf(out, "%s\n", version->first_line);
	if (!rc)
		rc = lines_append_framed(out, start, SIZE_MAX, "note", note, note_len);
	if (!rc)
		rc = lines_append_framed(out, start, SIZE_MAX, version->second_part, second, second_len);
	if (rc)
		buffer_truncate(out, start);
	return rc;
}

int vote_envelope_encode(const uint8_t *note, size_t note_len, const uint8_t *body, size_t body_len,
                         struct buffer *out)
{
	return encode_version(0, note, note_len, body, body_len, out);
}

int vote_envelope_encode_delta(const uint8_t *note, size_t note_len, const uint8_t *delta, size_t delta_len,
                               struct buffer *out)
{
	return encode_version(1, note, note_len, delta, delta_len, out);
}

/* "<keyword> <length>" and the part it frames, at most max bytes. */
static int read_part(struct line_reader *reader, const char *keyword, size_t max, const uint8_t **part,
                     size_t *part_len)
{
	struct text_span length;
	int rc = lines_expect(reader, keyword, &length);
	return rc ? rc : lines_take_framed(reader, length, max, part, part_len);
}

int vote_envelope_parse(const uint8_t *buf, size_t len, size_t max_body, struct vote_envelope *out)
{
	struct line_reader reader;
	struct text_span first;
	memset(out, 0, sizeof *out);
	lines_init(&reader, buf, len, VOTE_ENVELOPE_LINE_MAX);
	int rc = lines_next(&reader, &first);
	if (!rc) {
		if (text_equals(first, envelope_versions[1].first_line))
			out->delta = 1;
		else if (!text_equals(first, envelope_versions[0].first_line))
			rc = DIRAUTH_ERR_SYNTAX;
	}
	if (!rc)
		rc = read_part(&reader, "note", VOTE_ENVELOPE_NOTE_MAX, &out->note, &out->note_len);
	if (!rc)
		rc = read_part(&reader, envelope_versions[out->delta].second_part, max_body, &out->body,
		               &out->body_len);
	if (!rc && !lines_at_end(&reader))
		rc = DIRAUTH_ERR_SYNTAX;
	if (rc)
		memset(out, 0, sizeof *out);
	return rc;
}
