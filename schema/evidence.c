/*
 * evidence.c: the evidence file's codec (evidence.h, evidence.md).
 *
 * A file is a few keyword lines and length-framed parts, like a vote envelope: the statements
 * are signed notes kept byte for byte as they were served, so that their signatures still
 * verify, and framing by length means nothing in them needs escaping. The parser accepts exactly
 * what the encoder writes: one spelling per file.
 */
#include "schema/evidence.h"

#include "schema/checkpoint.h"
#include "base/error.h"
#include "schema/lines.h"
#include "schema/names.h"

#include <string.h>

const char *evidence_kind_name(enum evidence_kind kind)
{
	switch (kind) {
	case EVIDENCE_CHECKPOINTS:
		return "checkpoints";
	case EVIDENCE_HEADERS:
		return "headers";
	case EVIDENCE_VOTES:
		return "votes";
	}
	return "unknown";
}

/* Parses a key line's value: an Ed25519 verifier key, or a cosignature/v1 one. */
static int key_parse(const char *text, size_t len, struct note_verifier *out)
{
	if (note_verifier_parse_typed(text, len, NOTE_KEY_TYPE_ED25519, out) == 0)
		return 0;
	return note_verifier_parse_typed(text, len, NOTE_KEY_TYPE_COSIGNATURE_V1, out);
}

static int keys_distinct(const struct note_verifier *keys, size_t count)
{
	for (size_t i = 0; i < count; i++)
		for (size_t j = 0; j < i; j++)
			if (keys[i].type == keys[j].type &&
			    memcmp(keys[i].public_key, keys[j].public_key, sizeof keys[i].public_key) == 0)
				return 0;
	return 1;
}

/* What kind, parts and counts the evidence must have, whichever way it travels. */
static int check_shape(const struct evidence *e)
{
	if (e->kind != EVIDENCE_CHECKPOINTS && e->kind != EVIDENCE_HEADERS && e->kind != EVIDENCE_VOTES)
		return DIRAUTH_ERR_SYNTAX;
	if (!names_origin_field_is_valid(e->origin, sizeof e->origin))
		return DIRAUTH_ERR_SYNTAX;
	if (e->key_count > EVIDENCE_KEYS_MAX || e->certificate_count > EVIDENCE_CERTIFICATES_MAX)
		return DIRAUTH_ERR_BOUNDS;
	if (!keys_distinct(e->keys, e->key_count))
		return DIRAUTH_ERR_SYNTAX;
	for (size_t i = 0; i < 2; i++) {
		if (e->statements[i].data == NULL || e->statements[i].len == 0)
			return DIRAUTH_ERR_SYNTAX;
		if (e->statements[i].len > EVIDENCE_STATEMENT_MAX)
			return DIRAUTH_ERR_BOUNDS;
	}
	if (e->kind == EVIDENCE_CHECKPOINTS) {
		if (e->certificate_count != 0)
			return DIRAUTH_ERR_SYNTAX;
		if (e->has_consistency && e->consistency.len > EVIDENCE_CONSISTENCY_MAX)
			return DIRAUTH_ERR_BOUNDS;
		if (e->has_consistency && e->consistency.len > 0 && e->consistency.data == NULL)
			return DIRAUTH_ERR_SYNTAX;
	} else {
		if (e->has_consistency || e->certificate_count == 0)
			return DIRAUTH_ERR_SYNTAX;
	}
	for (size_t i = 0; i < e->certificate_count; i++) {
		if (e->certificates[i].data == NULL || e->certificates[i].len == 0)
			return DIRAUTH_ERR_SYNTAX;
		if (e->certificates[i].len > CERTIFICATE_BUNDLE_MAX_BYTES)
			return DIRAUTH_ERR_BOUNDS;
	}
	return 0;
}

static int append_part(struct buffer *out, const char *keyword, const struct evidence_part *part)
{
	int rc = buffer_appendf(out, "%s %zu\n", keyword, part->len);
	if (rc == 0 && part->len > 0)
		rc = buffer_append(out, part->data, part->len);
	return rc;
}

int evidence_encode(const struct evidence *e, struct buffer *out)
{
	char key[NOTE_VERIFIER_KEY_MAX + 1];
	size_t start = out->len;
	int rc = check_shape(e);

	if (rc != 0)
		return rc;
	rc = buffer_appendf(out, EVIDENCE_FIRST_LINE "\nkind %s\norigin %s\n", evidence_kind_name(e->kind),
	                    e->origin);
	if (rc == 0 && e->kind != EVIDENCE_CHECKPOINTS)
		rc = buffer_appendf(out, "epoch %llu\n", (unsigned long long)e->epoch);
	for (size_t i = 0; rc == 0 && i < e->key_count; i++) {
		note_verifier_format(&e->keys[i], key);
		rc = buffer_appendf(out, "key %s\n", key);
	}
	for (size_t i = 0; rc == 0 && i < 2; i++)
		rc = append_part(out, "statement", &e->statements[i]);
	if (rc == 0 && e->has_consistency)
		rc = append_part(out, "consistency", &e->consistency);
	for (size_t i = 0; rc == 0 && i < e->certificate_count; i++)
		rc = append_part(out, "certificates", &e->certificates[i]);
	if (rc == 0 && out->len - start > EVIDENCE_MAX_BYTES)
		rc = DIRAUTH_ERR_BOUNDS;
	if (rc != 0)
		buffer_truncate(out, start);
	return rc;
}

/* A "<keyword> <length>\n" line and the length bytes after it, at most max (and at least 1 unless
 * allow_empty). DIRAUTH_ERR_NOT_FOUND, nothing consumed, when the next line has another keyword. */
static int next_part(struct line_reader *reader, const char *keyword, size_t max, int allow_empty,
                     struct evidence_part *part)
{
	struct text_span length;
	int rc = lines_expect_optional(reader, keyword, &length);
	if (rc != 0)
		return rc;
	if (allow_empty)
		return lines_take_framed_or_empty(reader, length, max, &part->data, &part->len);
	return lines_take_framed(reader, length, max, &part->data, &part->len);
}

static int parse_kind(const char *text, size_t len, enum evidence_kind *kind)
{
	static const enum evidence_kind kinds[] = {EVIDENCE_CHECKPOINTS, EVIDENCE_HEADERS, EVIDENCE_VOTES};
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
		const char *name = evidence_kind_name(kinds[i]);
		if (strlen(name) == len && memcmp(name, text, len) == 0) {
			*kind = kinds[i];
			return 0;
		}
	}
	return DIRAUTH_ERR_SYNTAX;
}

static int parse(struct line_reader *reader, struct evidence *e)
{
	char canonical[NOTE_VERIFIER_KEY_MAX + 1];
	struct text_span value;
	int rc;

	if (lines_expect_exact(reader, EVIDENCE_FIRST_LINE) != 0)
		return DIRAUTH_ERR_SYNTAX;
	if (lines_expect(reader, "kind", &value) != 0 || parse_kind(value.data, value.len, &e->kind) != 0)
		return DIRAUTH_ERR_SYNTAX;
	if (lines_expect_origin(reader, e->origin, sizeof e->origin) != 0)
		return DIRAUTH_ERR_SYNTAX;
	if (e->kind != EVIDENCE_CHECKPOINTS && lines_expect_u64(reader, "epoch", &e->epoch) != 0)
		return DIRAUTH_ERR_SYNTAX;
	while ((rc = lines_expect_optional(reader, "key", &value)) == 0) {
		if (e->key_count == EVIDENCE_KEYS_MAX)
			return DIRAUTH_ERR_BOUNDS;
		struct note_verifier *key = &e->keys[e->key_count];
		if (value.len > NOTE_VERIFIER_KEY_MAX || key_parse(value.data, value.len, key) != 0)
			return DIRAUTH_ERR_SYNTAX;
		note_verifier_format(key, canonical);
		if (!text_equals(value, canonical))
			return DIRAUTH_ERR_SYNTAX;
		e->key_count++;
	}
	if (rc != DIRAUTH_ERR_NOT_FOUND)
		return rc;
	for (size_t i = 0; i < 2; i++) {
		rc = next_part(reader, "statement", EVIDENCE_STATEMENT_MAX, 0, &e->statements[i]);
		if (rc != 0)
			return rc == DIRAUTH_ERR_NOT_FOUND ? DIRAUTH_ERR_SYNTAX : rc;
	}
	if (e->kind == EVIDENCE_CHECKPOINTS) {
		rc = next_part(reader, "consistency", EVIDENCE_CONSISTENCY_MAX, 1, &e->consistency);
		if (rc != 0 && rc != DIRAUTH_ERR_NOT_FOUND)
			return rc;
		e->has_consistency = rc == 0;
	} else {
		while (e->certificate_count < EVIDENCE_CERTIFICATES_MAX &&
		       (rc = next_part(reader, "certificates", CERTIFICATE_BUNDLE_MAX_BYTES, 0,
		                       &e->certificates[e->certificate_count])) == 0)
			e->certificate_count++;
		if (rc != 0 && rc != DIRAUTH_ERR_NOT_FOUND)
			return rc;
	}
	if (!lines_at_end(reader))
		return DIRAUTH_ERR_SYNTAX;
	return check_shape(e);
}

int evidence_parse(const uint8_t *buf, size_t len, struct evidence *out)
{
	struct line_reader reader;
	int rc;

	memset(out, 0, sizeof *out);
	if (len > EVIDENCE_MAX_BYTES)
		return DIRAUTH_ERR_BOUNDS;
	/* No line bound of the reader's own: each value is bounded by its check. */
	lines_init(&reader, buf, len, EVIDENCE_MAX_BYTES);
	rc = parse(&reader, out);
	if (rc != 0)
		memset(out, 0, sizeof *out);
	return rc;
}
