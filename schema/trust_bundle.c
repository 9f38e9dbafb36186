/*
 * trust_bundle.c: the parser of the file a mirror or client pins as its root of trust.
 *
 * The bundle is written and reviewed by people, so it allows comments, blank lines and any order
 * of directives after the first line; every directive line is still read strictly (single spaces,
 * canonical numbers and keys, no unknown keyword, no repeated singleton). A mistake here would
 * silently change whom a client trusts, so every error reports the line at fault and what is
 * wrong with it, duplicates of a namespace or origin are refused rather than merged, an authority
 * is one identity key under one name (a repeated line, one key under a second name and one name
 * for a second key are refused, naming the line they repeat, since any of them would let one
 * authority count twice toward the threshold), and the threshold must be reachable by the
 * authorities listed. trust_bundle_encode() writes the canonical form: no
 * comments, namespaces then authorities in the order held, every bound explicit.
 */
#include "schema/trust_bundle.h"

#include "base/error.h"
#include "schema/names.h"
#include "schema/lines.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The longest directive is "namespace ", a name, a space and a 255-byte origin (329 bytes);
 * comments get the same bound. */
#define TRUST_BUNDLE_LINE_MAX                      512
#define TRUST_BUNDLE_DEFAULT_MAX_BODY_COMPRESSED   ((uint64_t)64 * 1024 * 1024)
#define TRUST_BUNDLE_DEFAULT_MAX_BODY_UNCOMPRESSED ((uint64_t)512 * 1024 * 1024)
#define TRUST_BUNDLE_DEFAULT_MAX_RECORDS           ((uint64_t)1000000)

/* What the parse knows while it reads: where to say what went wrong, and on which line each
 * namespace and authority was given, so that a repeat names the line it repeats. */
struct parse_state {
	size_t fault_line;
	char *why;
	size_t why_cap;
	size_t namespace_lines[TRUST_BUNDLE_MAX_NAMESPACES];
	size_t authority_lines[TRUST_BUNDLE_MAX_AUTHORITIES];
};

static int refuse(struct parse_state *state, int rc, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* Records why the line at fault is refused (when the caller asked) and returns rc. */
static int refuse(struct parse_state *state, int rc, const char *format, ...)
{
	va_list args;

	if (state->why != NULL && state->why_cap > 0) {
		va_start(args, format);
		vsnprintf(state->why, state->why_cap, format, args);
		va_end(args);
	}
	return rc;
}

/* Says what lines_next refused in the line at start (available bytes up to the end of input):
 * the reader only answers "syntax" or "bounds", and a person needs to know which byte. */
static int refuse_line(struct parse_state *state, const uint8_t *start, size_t available)
{
	size_t scan = available < TRUST_BUNDLE_LINE_MAX + 1 ? available : TRUST_BUNDLE_LINE_MAX + 1;
	const uint8_t *newline = memchr(start, '\n', scan);
	size_t len;

	if (newline == NULL) {
		if (available > TRUST_BUNDLE_LINE_MAX)
			return refuse(state, DIRAUTH_ERR_BOUNDS, "longer than %d bytes",
			              TRUST_BUNDLE_LINE_MAX);
		return refuse(state, DIRAUTH_ERR_SYNTAX, "no newline at the end of the file");
	}
	len = (size_t)(newline - start);
	for (size_t i = 0; i < len; i++) {
		if (start[i] == '\r')
			return refuse(state, DIRAUTH_ERR_SYNTAX,
			              "a carriage return at byte %zu: lines end in a bare newline (LF)",
			              i + 1);
		if (start[i] < 0x20 || start[i] > 0x7e)
			return refuse(state, DIRAUTH_ERR_SYNTAX,
			              "byte %zu is 0x%02x: only printable ASCII is allowed", i + 1, start[i]);
	}
	if (start[0] == ' ')
		return refuse(state, DIRAUTH_ERR_SYNTAX, "a leading space");
	if (start[len - 1] == ' ')
		return refuse(state, DIRAUTH_ERR_SYNTAX, "a trailing space");
	return refuse(state, DIRAUTH_ERR_SYNTAX, "two spaces in a row: fields are separated by one space");
}

/* Skips a comment ("#" then printable ASCII) or a blank line at the reader's position. Returns 1
 * when one was skipped, 0 when the next line is a directive, negative on a bad comment. */
static int skip_comment_or_blank(struct line_reader *reader, struct parse_state *state)
{
	const uint8_t *start = reader->buf + reader->pos;
	size_t available = reader->len - reader->pos;
	if (start[0] == '\n') {
		reader->pos++;
		reader->line_number++;
		return 1;
	}
	if (start[0] != '#')
		return 0;
	for (size_t i = 1; i < available; i++) {
		if (start[i] == '\n') {
			reader->pos += i + 1;
			reader->line_number++;
			return 1;
		}
		if (i >= TRUST_BUNDLE_LINE_MAX)
			return refuse(state, DIRAUTH_ERR_BOUNDS, "comment longer than %d bytes",
			              TRUST_BUNDLE_LINE_MAX);
		if (start[i] < 0x20 || start[i] > 0x7e)
			return refuse(state, DIRAUTH_ERR_SYNTAX,
			              "comment: byte %zu is 0x%02x: only printable ASCII is allowed", i + 1,
			              start[i]);
	}
	return refuse(state, DIRAUTH_ERR_SYNTAX, "no newline at the end of the file");
}

/* A value of at least 1, given once; *seen_line is the line it was first given on (0: not yet). */
static int parse_bound(struct parse_state *state, const char *keyword, struct text_span value, size_t line,
                       size_t *seen_line, uint64_t *out)
{
	if (*seen_line != 0)
		return refuse(state, DIRAUTH_ERR_SYNTAX, "%s: given twice (first on line %zu)", keyword,
		              *seen_line);
	*seen_line = line;
	if (text_parse_u64(value, out) != 0)
		return refuse(state, DIRAUTH_ERR_SYNTAX,
		              "%s: '%.*s' is not a canonical decimal (digits, no sign, no leading zero)",
		              keyword, (int)(value.len > 32 ? 32 : value.len), value.data);
	if (*out < 1)
		return refuse(state, DIRAUTH_ERR_SYNTAX, "%s: must be at least 1", keyword);
	return 0;
}

static int parse_namespace(struct trust_bundle *out, struct parse_state *state, struct text_span value,
                           size_t line)
{
	struct text_span name;
	if (text_next_field(&value, &name) != 0 || value.len == 0)
		return refuse(state, DIRAUTH_ERR_SYNTAX, "namespace: expected 'namespace <name> <origin>'");
	if (!text_is_name(name, NAMESPACE_NAME_MAX))
		return refuse(state, DIRAUTH_ERR_SYNTAX,
		              "namespace: '%.*s' is not a namespace name (1 to %d bytes of [a-z0-9-], "
		              "not starting or ending with '-')",
		              (int)(name.len > 64 ? 64 : name.len), name.data, NAMESPACE_NAME_MAX);
	if (!names_origin_is_valid(value.data, value.len))
		return refuse(state, DIRAUTH_ERR_SYNTAX,
		              "namespace %.*s: '%.*s' is not an origin (1 to %d bytes of printable ASCII "
		              "without space or '+')",
		              (int)name.len, name.data, (int)(value.len > 64 ? 64 : value.len), value.data,
		              SNAPSHOT_ORIGIN_MAX);
	if (out->namespace_count == TRUST_BUNDLE_MAX_NAMESPACES)
		return refuse(state, DIRAUTH_ERR_BOUNDS, "more than %d namespaces",
		              TRUST_BUNDLE_MAX_NAMESPACES);
	struct trust_namespace *entry = &out->namespaces[out->namespace_count];
	int rc;
	if ((rc = text_copy(name, entry->name, sizeof(entry->name))) != 0 ||
	    (rc = text_copy(value, entry->origin, sizeof(entry->origin))) != 0)
		return refuse(state, rc, "namespace: too long");
	for (size_t i = 0; i < out->namespace_count; i++) {
		if (strcmp(out->namespaces[i].name, entry->name) == 0)
			return refuse(state, DIRAUTH_ERR_SYNTAX, "namespace %s: already listed on line %zu",
			              entry->name, state->namespace_lines[i]);
		if (strcmp(out->namespaces[i].origin, entry->origin) == 0)
			return refuse(
			    state, DIRAUTH_ERR_SYNTAX,
			    "namespace %s: origin %s is already the origin of namespace %s (line %zu)",
			    entry->name, entry->origin, out->namespaces[i].name, state->namespace_lines[i]);
	}
	state->namespace_lines[out->namespace_count] = line;
	out->namespace_count++;
	return 0;
}

/* An authority is one identity key under one name. A line repeated, one key under a second name
 * or one name for a second key would let one authority count twice toward the threshold; each
 * is refused with the line it repeats (hard rule 10: such a key must count zero, never twice). */
static int parse_authority(struct trust_bundle *out, struct parse_state *state, struct text_span value,
                           size_t line)
{
	if (out->authority_count == TRUST_BUNDLE_MAX_AUTHORITIES)
		return refuse(state, DIRAUTH_ERR_BOUNDS, "more than %d authorities",
		              TRUST_BUNDLE_MAX_AUTHORITIES);
	struct note_verifier *entry = &out->authorities[out->authority_count];
	int rc = note_verifier_parse(value.data, value.len, entry);
	if (rc)
		return refuse(state, rc,
		              "authority: not a verifier key (<name>+<key id>+<base64 of 0x01 and the "
		              "Ed25519 public key>, the key id matching the name and key)");
	if (!names_key_name_field_is_ascii(entry->name, sizeof(entry->name)) ||
	    entry->type != NOTE_KEY_TYPE_ED25519)
		return refuse(state, DIRAUTH_ERR_SYNTAX, "authority: not an Ed25519 key under an ASCII name");
	for (size_t i = 0; i < out->authority_count; i++) {
		const struct note_verifier *other = &out->authorities[i];
		int same_key = memcmp(other->public_key, entry->public_key, sizeof(entry->public_key)) == 0;
		int same_name = strcmp(other->name, entry->name) == 0;
		if (same_key && same_name)
			return refuse(state, DIRAUTH_ERR_SYNTAX,
			              "authority %s: the same key as line %zu (a duplicate line)",
			              entry->name, state->authority_lines[i]);
		if (same_key)
			return refuse(state, DIRAUTH_ERR_SYNTAX,
			              "authority %s: the key of authority %s (line %zu) under a second name; "
			              "one identity key pins one authority",
			              entry->name, other->name, state->authority_lines[i]);
		if (same_name)
			return refuse(state, DIRAUTH_ERR_SYNTAX,
			              "authority %s: already pinned by another key on line %zu; an authority "
			              "has one identity key",
			              entry->name, state->authority_lines[i]);
	}
	state->authority_lines[out->authority_count] = line;
	out->authority_count++;
	return 0;
}

/* Reads every line into out. state->fault_line is kept at the line being read, so that whatever
 * fails, it names the line at fault. */
static int parse_lines(struct line_reader *reader, struct trust_bundle *out, struct parse_state *state)
{
	size_t threshold_line = 0, compressed_line = 0, uncompressed_line = 0, records_line = 0;
	uint64_t threshold = 0;
	struct text_span first;
	state->fault_line = 1;
	int rc = lines_next(reader, &first);
	if (rc == 0 && !text_equals(first, "dirauth trust v1"))
		rc = DIRAUTH_ERR_SYNTAX;
	if (rc)
		return refuse(state, rc, "the first line must be 'dirauth trust v1'");
	while (!lines_at_end(reader)) {
		state->fault_line = reader->line_number + 1;
		rc = skip_comment_or_blank(reader, state);
		if (rc < 0)
			return rc;
		if (rc == 1)
			continue;
		const uint8_t *start = reader->buf + reader->pos;
		size_t available = reader->len - reader->pos;
		struct text_span line, keyword;
		if (lines_next(reader, &line) != 0)
			return refuse_line(state, start, available);
		size_t number = reader->line_number;
		text_next_field(&line, &keyword); /* a line is never empty */
		if (line.len == 0)
			return refuse(state, DIRAUTH_ERR_SYNTAX, "'%.*s' without a value",
			              (int)(keyword.len > 32 ? 32 : keyword.len), keyword.data);
		if (text_equals(keyword, "namespace"))
			rc = parse_namespace(out, state, line, number);
		else if (text_equals(keyword, "authority"))
			rc = parse_authority(out, state, line, number);
		else if (text_equals(keyword, "threshold"))
			rc = parse_bound(state, "threshold", line, number, &threshold_line, &threshold);
		else if (text_equals(keyword, "max-body-compressed"))
			rc = parse_bound(state, "max-body-compressed", line, number, &compressed_line,
			                 &out->max_body_compressed);
		else if (text_equals(keyword, "max-body-uncompressed"))
			rc = parse_bound(state, "max-body-uncompressed", line, number, &uncompressed_line,
			                 &out->max_body_uncompressed);
		else if (text_equals(keyword, "max-records"))
			rc =
			    parse_bound(state, "max-records", line, number, &records_line, &out->max_records);
		else
			rc = refuse(state, DIRAUTH_ERR_SYNTAX,
			            "unknown directive '%.*s' (known: namespace, authority, threshold, "
			            "max-body-compressed, max-body-uncompressed, max-records)",
			            (int)(keyword.len > 32 ? 32 : keyword.len), keyword.data);
		if (rc)
			return rc;
	}
	/* What is missing is reported at the line after the last one. */
	state->fault_line = reader->line_number + 1;
	if (out->namespace_count == 0)
		return refuse(state, DIRAUTH_ERR_SYNTAX, "no namespace line");
	if (out->authority_count == 0)
		return refuse(state, DIRAUTH_ERR_SYNTAX, "no authority line");
	if (threshold_line == 0)
		return refuse(state, DIRAUTH_ERR_SYNTAX, "no threshold line");
	if (threshold > out->authority_count) {
		state->fault_line = threshold_line;
		return refuse(state, DIRAUTH_ERR_SYNTAX,
		              "threshold: %" PRIu64 " is more than the %zu authorities listed", threshold,
		              out->authority_count);
	}
	out->threshold = (size_t)threshold;
	return 0;
}

int trust_bundle_parse_explained(const uint8_t *buf, size_t len, struct trust_bundle *out, size_t *error_line,
                                 char *why, size_t why_cap)
{
	struct line_reader reader;
	struct parse_state *state;
	int rc;

	memset(out, 0, sizeof(*out));
	out->max_body_compressed = TRUST_BUNDLE_DEFAULT_MAX_BODY_COMPRESSED;
	out->max_body_uncompressed = TRUST_BUNDLE_DEFAULT_MAX_BODY_UNCOMPRESSED;
	out->max_records = TRUST_BUNDLE_DEFAULT_MAX_RECORDS;
	if (error_line)
		*error_line = 0;
	if (why != NULL && why_cap > 0)
		why[0] = '\0';
	if (len > TRUST_BUNDLE_MAX_BYTES) {
		memset(out, 0, sizeof(*out));
		if (why != NULL && why_cap > 0)
			snprintf(why, why_cap, "larger than %d bytes", TRUST_BUNDLE_MAX_BYTES);
		return DIRAUTH_ERR_BOUNDS;
	}
	state = calloc(1, sizeof(*state));
	if (state == NULL) {
		memset(out, 0, sizeof(*out));
		if (why != NULL && why_cap > 0)
			snprintf(why, why_cap, "out of memory");
		return DIRAUTH_ERR_NOMEM;
	}
	state->why = why;
	state->why_cap = why_cap;
	lines_init(&reader, buf, len, TRUST_BUNDLE_LINE_MAX);
	rc = parse_lines(&reader, out, state);
	if (rc) {
		if (error_line)
			*error_line = state->fault_line;
		memset(out, 0, sizeof(*out));
	}
	free(state);
	return rc;
}

int trust_bundle_parse(const uint8_t *buf, size_t len, struct trust_bundle *out, size_t *error_line)
{
	return trust_bundle_parse_explained(buf, len, out, error_line, NULL, 0);
}

int trust_bundle_encode(const struct trust_bundle *bundle, struct buffer *out)
{
	if (bundle->namespace_count == 0 || bundle->authority_count == 0)
		return DIRAUTH_ERR_SYNTAX;
	if (bundle->namespace_count > TRUST_BUNDLE_MAX_NAMESPACES ||
	    bundle->authority_count > TRUST_BUNDLE_MAX_AUTHORITIES)
		return DIRAUTH_ERR_BOUNDS;
	if (bundle->threshold < 1 || bundle->threshold > bundle->authority_count)
		return DIRAUTH_ERR_SYNTAX;
	if (bundle->max_body_compressed < 1 || bundle->max_body_uncompressed < 1 || bundle->max_records < 1)
		return DIRAUTH_ERR_SYNTAX;
	for (size_t i = 0; i < bundle->namespace_count; i++) {
		const struct trust_namespace *entry = &bundle->namespaces[i];
		if (!text_field_is_name(entry->name, sizeof(entry->name), NAMESPACE_NAME_MAX) ||
		    !names_origin_field_is_valid(entry->origin, sizeof(entry->origin)))
			return DIRAUTH_ERR_SYNTAX;
		for (size_t j = 0; j < i; j++) {
			if (strcmp(bundle->namespaces[j].name, entry->name) == 0 ||
			    strcmp(bundle->namespaces[j].origin, entry->origin) == 0)
				return DIRAUTH_ERR_SYNTAX;
		}
	}
	for (size_t i = 0; i < bundle->authority_count; i++) {
		const struct note_verifier *entry = &bundle->authorities[i];
		if (!names_key_name_field_is_ascii(entry->name, sizeof(entry->name)) ||
		    entry->type != NOTE_KEY_TYPE_ED25519)
			return DIRAUTH_ERR_SYNTAX;
		for (size_t j = 0; j < i; j++) {
			const struct note_verifier *other = &bundle->authorities[j];
			if (strcmp(other->name, entry->name) == 0 ||
			    memcmp(other->public_key, entry->public_key, sizeof(entry->public_key)) == 0)
				return DIRAUTH_ERR_SYNTAX;
		}
	}
	size_t start = out->len;
	int rc = buffer_append_string(out, "dirauth trust v1\n");
	for (size_t i = 0; rc == 0 && i < bundle->namespace_count; i++)
		rc = buffer_appendf(out, "namespace %s %s\n", bundle->namespaces[i].name,
		                    bundle->namespaces[i].origin);
	for (size_t i = 0; rc == 0 && i < bundle->authority_count; i++) {
		char key[NOTE_VERIFIER_KEY_MAX + 1];
		note_verifier_format(&bundle->authorities[i], key);
		rc = buffer_appendf(out, "authority %s\n", key);
	}
	if (rc == 0)
		rc = buffer_appendf(out,
		                    "threshold %zu\nmax-body-compressed %llu\nmax-body-uncompressed %llu\n"
		                    "max-records %llu\n",
		                    bundle->threshold, (unsigned long long)bundle->max_body_compressed,
		                    (unsigned long long)bundle->max_body_uncompressed,
		                    (unsigned long long)bundle->max_records);
	if (rc) {
		out->len = start;
		if (out->data)
			out->data[start] = 0;
	}
	return rc;
}

const struct trust_namespace *trust_bundle_namespace(const struct trust_bundle *bundle, const char *name)
{
	if (!bundle || !name)
		return NULL;
	for (size_t i = 0; i < bundle->namespace_count; i++) {
		if (strcmp(bundle->namespaces[i].name, name) == 0)
			return &bundle->namespaces[i];
	}
	return NULL;
}
