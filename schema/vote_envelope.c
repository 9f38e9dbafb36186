/*
 * vote_envelope.c: the length-framed pair of a vote note and its body (vote_envelope.h).
 */
#include "schema/vote_envelope.h"

#include "schema/encoding.h"
#include "schema/error.h"

#include <string.h>

#define VOTE_ENVELOPE_MAGIC      "dirauth vote-envelope v1\n"
#define VOTE_ENVELOPE_LENGTH_MAX 20 /* digits of a 64-bit length */

int vote_envelope_encode(const uint8_t *note, size_t note_len, const uint8_t *body, size_t body_len,
                         struct buffer *out)
{
	if (!note || !note_len || !body || !body_len)
		return DIRAUTH_ERR_SYNTAX;
	if (note_len > VOTE_ENVELOPE_NOTE_MAX)
		return DIRAUTH_ERR_BOUNDS;
	size_t start = out->len;
	int rc = buffer_appendf(out, VOTE_ENVELOPE_MAGIC "note %zu\n", note_len);
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

/* Reads "<keyword> <length>\n" at *at, then that many bytes, at most max. */
static int read_part(const uint8_t *buf, size_t len, size_t *at, const char *keyword, size_t max,
                     const uint8_t **part, size_t *part_len)
{
	size_t keyword_len = strlen(keyword);
	if (len - *at < keyword_len + 2 || memcmp(buf + *at, keyword, keyword_len) != 0 ||
	    buf[*at + keyword_len] != ' ')
		return DIRAUTH_ERR_SYNTAX;
	size_t digits_at = *at + keyword_len + 1, end = digits_at;
	while (end < len && end - digits_at <= VOTE_ENVELOPE_LENGTH_MAX && buf[end] != '\n')
		end++;
	if (end == len || buf[end] != '\n')
		return DIRAUTH_ERR_SYNTAX;
	uint64_t value;
	if (decimal_parse((const char *)buf + digits_at, end - digits_at, &value) != 0 || value == 0)
		return DIRAUTH_ERR_SYNTAX;
	if (value > max)
		return DIRAUTH_ERR_BOUNDS;
	if (value > len - (end + 1))
		return DIRAUTH_ERR_BOUNDS;
	*part = buf + end + 1;
	*part_len = (size_t)value;
	*at = end + 1 + (size_t)value;
	return 0;
}

int vote_envelope_parse(const uint8_t *buf, size_t len, size_t max_body, struct vote_envelope *out)
{
	size_t magic_len = strlen(VOTE_ENVELOPE_MAGIC), at = magic_len;
	memset(out, 0, sizeof *out);
	if (len < magic_len || memcmp(buf, VOTE_ENVELOPE_MAGIC, magic_len) != 0)
		return DIRAUTH_ERR_SYNTAX;
	int rc = read_part(buf, len, &at, "note", VOTE_ENVELOPE_NOTE_MAX, &out->note, &out->note_len);
	if (!rc)
		rc = read_part(buf, len, &at, "body", max_body, &out->body, &out->body_len);
	if (!rc && at != len)
		rc = DIRAUTH_ERR_SYNTAX;
	if (rc)
		memset(out, 0, sizeof *out);
	return rc;
}
