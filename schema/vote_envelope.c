/*
 * vote_envelope.c: the length-framed pair of a vote note and its body (vote_envelope.h).
 */
#include "schema/vote_envelope.h"

#include "schema/error.h"
#include "schema/lines.h"

#include <string.h>

#define VOTE_ENVELOPE_FIRST_LINE "dirauth vote-envelope v1"
/* The longest line: "body " and the 20 digits of a 64-bit length. */
#define VOTE_ENVELOPE_LINE_MAX   32

int vote_envelope_encode(const uint8_t *note, size_t note_len, const uint8_t *body, size_t body_len,
                         struct buffer *out)
{
	if (!note || !note_len || !body || !body_len)
		return DIRAUTH_ERR_SYNTAX;
	if (note_len > VOTE_ENVELOPE_NOTE_MAX)
		return DIRAUTH_ERR_BOUNDS;
	size_t start = out->len;
	int rc = buffer_appendf(out, VOTE_ENVELOPE_FIRST_LINE "\nnote %zu\n", note_len);
	if (!rc)
		rc = buffer_append(out, note, note_len);
	if (!rc)
		rc = buffer_appendf(out, "body %zu\n", body_len);
	if (!rc)
		rc = buffer_append(out, body, body_len);
	if (rc)
		buffer_truncate(out, start);
	return rc;
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
	memset(out, 0, sizeof *out);
	lines_init(&reader, buf, len, VOTE_ENVELOPE_LINE_MAX);
	int rc = lines_expect_exact(&reader, VOTE_ENVELOPE_FIRST_LINE);
	if (!rc)
		rc = read_part(&reader, "note", VOTE_ENVELOPE_NOTE_MAX, &out->note, &out->note_len);
	if (!rc)
		rc = read_part(&reader, "body", max_body, &out->body, &out->body_len);
	if (!rc && !lines_at_end(&reader))
		rc = DIRAUTH_ERR_SYNTAX;
	if (rc)
		memset(out, 0, sizeof *out);
	return rc;
}
