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
#include "schema/encoding.h"
#include "schema/error.h"

#include <string.h>

#define LENGTH_DIGITS_MAX 20

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

static int origin_is_valid(const char *origin, size_t len)
{
	if (len == 0 || len > SNAPSHOT_ORIGIN_MAX)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (origin[i] <= ' ' || origin[i] > '~' || origin[i] == '+')
			return 0;
	return 1;
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
	if (!origin_is_valid(e->origin, strnlen(e->origin, sizeof e->origin)))
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

/* The reader's position in the file. */
struct cursor {
	const uint8_t *buf;
	size_t len;
	size_t at;
};

/* The next line (without its '\n') if it starts with "<keyword> "; *value gets the rest. Returns
 * 0, DIRAUTH_ERR_NOT_FOUND when the next line has another keyword (nothing consumed),
 * DIRAUTH_ERR_SYNTAX for a line without its '\n' or an empty value. */
static int next_line(struct cursor *c, const char *keyword, const char **value, size_t *value_len)
{
	size_t keyword_len = strlen(keyword), end;
	if (c->len - c->at < keyword_len + 1 || memcmp(c->buf + c->at, keyword, keyword_len) != 0 ||
	    c->buf[c->at + keyword_len] != ' ')
		return DIRAUTH_ERR_NOT_FOUND;
	const uint8_t *start = c->buf + c->at + keyword_len + 1;
	const uint8_t *newline = memchr(start, '\n', c->len - (size_t)(start - c->buf));
	if (newline == NULL || newline == start)
		return DIRAUTH_ERR_SYNTAX;
	end = (size_t)(newline - c->buf);
	*value = (const char *)start;
	*value_len = (size_t)(newline - start);
	c->at = end + 1;
	return 0;
}

/* A "<keyword> <length>\n" line and the length bytes after it, at most max. */
static int next_part(struct cursor *c, const char *keyword, size_t max, int allow_empty,
                     struct evidence_part *part)
{
	const char *digits;
	size_t digits_len;
	uint64_t value;
	int rc = next_line(c, keyword, &digits, &digits_len);
	if (rc != 0)
		return rc;
	if (digits_len > LENGTH_DIGITS_MAX || decimal_parse(digits, digits_len, &value) != 0 ||
	    (value == 0 && !allow_empty))
		return DIRAUTH_ERR_SYNTAX;
	if (value > max || value > c->len - c->at)
		return DIRAUTH_ERR_BOUNDS;
	part->data = c->buf + c->at;
	part->len = (size_t)value;
	c->at += (size_t)value;
	return 0;
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

static int parse(struct cursor *c, struct evidence *e)
{
	static const char first[] = EVIDENCE_FIRST_LINE "\n";
	char canonical[NOTE_VERIFIER_KEY_MAX + 1];
	const char *value;
	size_t value_len;
	uint64_t epoch;
	int rc;

	if (c->len < sizeof first - 1 || memcmp(c->buf, first, sizeof first - 1) != 0)
		return DIRAUTH_ERR_SYNTAX;
	c->at = sizeof first - 1;
	if ((rc = next_line(c, "kind", &value, &value_len)) != 0 ||
	    parse_kind(value, value_len, &e->kind) != 0)
		return DIRAUTH_ERR_SYNTAX;
	if ((rc = next_line(c, "origin", &value, &value_len)) != 0 || !origin_is_valid(value, value_len))
		return DIRAUTH_ERR_SYNTAX;
	memcpy(e->origin, value, value_len);
	e->origin[value_len] = '\0';
	if (e->kind != EVIDENCE_CHECKPOINTS) {
		if (next_line(c, "epoch", &value, &value_len) != 0 || value_len > LENGTH_DIGITS_MAX ||
		    decimal_parse(value, value_len, &epoch) != 0)
			return DIRAUTH_ERR_SYNTAX;
		e->epoch = epoch;
	}
	while ((rc = next_line(c, "key", &value, &value_len)) == 0) {
		if (e->key_count == EVIDENCE_KEYS_MAX)
			return DIRAUTH_ERR_BOUNDS;
		struct note_verifier *key = &e->keys[e->key_count];
		if (value_len > NOTE_VERIFIER_KEY_MAX || key_parse(value, value_len, key) != 0)
			return DIRAUTH_ERR_SYNTAX;
		note_verifier_format(key, canonical);
		if (strlen(canonical) != value_len || memcmp(canonical, value, value_len) != 0)
			return DIRAUTH_ERR_SYNTAX;
		e->key_count++;
	}
	if (rc != DIRAUTH_ERR_NOT_FOUND)
		return rc;
	for (size_t i = 0; i < 2; i++) {
		rc = next_part(c, "statement", EVIDENCE_STATEMENT_MAX, 0, &e->statements[i]);
		if (rc != 0)
			return rc == DIRAUTH_ERR_NOT_FOUND ? DIRAUTH_ERR_SYNTAX : rc;
	}
	if (e->kind == EVIDENCE_CHECKPOINTS) {
		rc = next_part(c, "consistency", EVIDENCE_CONSISTENCY_MAX, 1, &e->consistency);
		if (rc != 0 && rc != DIRAUTH_ERR_NOT_FOUND)
			return rc;
		e->has_consistency = rc == 0;
	} else {
		while (e->certificate_count < EVIDENCE_CERTIFICATES_MAX &&
		       (rc = next_part(c, "certificates", CERTIFICATE_BUNDLE_MAX_BYTES, 0,
		                       &e->certificates[e->certificate_count])) == 0)
			e->certificate_count++;
		if (rc != 0 && rc != DIRAUTH_ERR_NOT_FOUND)
			return rc;
	}
	if (c->at != c->len)
		return DIRAUTH_ERR_SYNTAX;
	return check_shape(e);
}

int evidence_parse(const uint8_t *buf, size_t len, struct evidence *out)
{
	struct cursor c = {buf, len, 0};
	int rc;

	memset(out, 0, sizeof *out);
	if (len > EVIDENCE_MAX_BYTES)
		return DIRAUTH_ERR_BOUNDS;
	rc = parse(&c, out);
	if (rc != 0)
		memset(out, 0, sizeof *out);
	return rc;
}
