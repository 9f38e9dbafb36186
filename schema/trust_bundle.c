/*
 * trust_bundle.c: the parser of the file a mirror or client pins as its root of trust.
 *
 * The bundle is written and reviewed by people, so it allows comments, blank lines and any order
 * of directives after the first line; every directive line is still read strictly (single spaces,
 * canonical numbers and keys, no unknown keyword, no repeated singleton). A mistake here would
 * silently change whom a client trusts, so every error reports the line at fault, duplicates of
 * a namespace, origin or authority are refused rather than merged, and the threshold must be
 * reachable by the authorities listed. trust_bundle_encode() writes the canonical form: no
 * comments, namespaces then authorities in the order held, every bound explicit.
 */
#include "schema/trust_bundle.h"

#include "schema/error.h"
#include "schema/names.h"
#include "schema/lines.h"

#include <string.h>

/* The longest directive is "namespace ", a name, a space and a 255-byte origin (329 bytes);
 * comments get the same bound. */
#define TRUST_BUNDLE_LINE_MAX                      512
#define TRUST_BUNDLE_DEFAULT_MAX_BODY_COMPRESSED   ((uint64_t)64 * 1024 * 1024)
#define TRUST_BUNDLE_DEFAULT_MAX_BODY_UNCOMPRESSED ((uint64_t)512 * 1024 * 1024)
#define TRUST_BUNDLE_DEFAULT_MAX_RECORDS           ((uint64_t)1000000)

static int verifier_equal_identity(const struct note_verifier *a, const struct note_verifier *b)
{
	return (strcmp(a->name, b->name) == 0 && a->key_id == b->key_id) ||
	       memcmp(a->public_key, b->public_key, sizeof(a->public_key)) == 0;
}

/* Skips a comment ("#" then printable ASCII) or a blank line at the reader's position. Returns 1
 * when one was skipped, 0 when the next line is a directive, negative on a bad comment. */
static int skip_comment_or_blank(struct line_reader *reader)
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
			return DIRAUTH_ERR_BOUNDS;
		if (start[i] < 0x20 || start[i] > 0x7e)
			return DIRAUTH_ERR_SYNTAX;
	}
	return DIRAUTH_ERR_SYNTAX; /* no final newline */
}

static int parse_bound(struct text_span value, int *seen, uint64_t *out)
{
	if (*seen)
		return DIRAUTH_ERR_SYNTAX;
	*seen = 1;
	int rc = text_parse_u64(value, out);
	if (rc)
		return rc;
	return *out >= 1 ? 0 : DIRAUTH_ERR_SYNTAX;
}

static int parse_namespace(struct trust_bundle *out, struct text_span value)
{
	struct text_span name;
	int rc = text_next_field(&value, &name);
	if (rc)
		return rc;
	if (!text_is_name(name, NAMESPACE_NAME_MAX) || !names_origin_is_valid(value.data, value.len))
		return DIRAUTH_ERR_SYNTAX;
	if (out->namespace_count == TRUST_BUNDLE_MAX_NAMESPACES)
		return DIRAUTH_ERR_BOUNDS;
	struct trust_namespace *entry = &out->namespaces[out->namespace_count];
	if ((rc = text_copy(name, entry->name, sizeof(entry->name))) != 0 ||
	    (rc = text_copy(value, entry->origin, sizeof(entry->origin))) != 0)
		return rc;
	for (size_t i = 0; i < out->namespace_count; i++) {
		if (strcmp(out->namespaces[i].name, entry->name) == 0 ||
		    strcmp(out->namespaces[i].origin, entry->origin) == 0)
			return DIRAUTH_ERR_SYNTAX;
	}
	out->namespace_count++;
	return 0;
}

static int parse_authority(struct trust_bundle *out, struct text_span value)
{
	if (out->authority_count == TRUST_BUNDLE_MAX_AUTHORITIES)
		return DIRAUTH_ERR_BOUNDS;
	struct note_verifier *entry = &out->authorities[out->authority_count];
	int rc = note_verifier_parse(value.data, value.len, entry);
	if (rc)
		return rc;
	for (size_t i = 0; i < out->authority_count; i++) {
		if (verifier_equal_identity(&out->authorities[i], entry))
			return DIRAUTH_ERR_SYNTAX;
	}
	out->authority_count++;
	return 0;
}

/* Reads every line into out. *fault_line is kept at the line being read, so that whatever
 * fails, it names the line at fault. */
static int parse_lines(struct line_reader *reader, struct trust_bundle *out, size_t *fault_line)
{
	int seen_threshold = 0, seen_compressed = 0, seen_uncompressed = 0, seen_records = 0;
	uint64_t threshold = 0;
	size_t threshold_line = 0;
	*fault_line = 1;
	int rc = lines_expect_exact(reader, "dirauth trust v1");
	if (rc)
		return rc;
	while (!lines_at_end(reader)) {
		*fault_line = reader->line_number + 1;
		rc = skip_comment_or_blank(reader);
		if (rc < 0)
			return rc;
		if (rc == 1)
			continue;
		struct text_span line, keyword;
		if ((rc = lines_next(reader, &line)) != 0 || (rc = text_next_field(&line, &keyword)) != 0)
			return rc;
		if (line.len == 0)
			return DIRAUTH_ERR_SYNTAX;
		if (text_equals(keyword, "namespace"))
			rc = parse_namespace(out, line);
		else if (text_equals(keyword, "authority"))
			rc = parse_authority(out, line);
		else if (text_equals(keyword, "threshold")) {
			rc = parse_bound(line, &seen_threshold, &threshold);
			threshold_line = reader->line_number;
		} else if (text_equals(keyword, "max-body-compressed"))
			rc = parse_bound(line, &seen_compressed, &out->max_body_compressed);
		else if (text_equals(keyword, "max-body-uncompressed"))
			rc = parse_bound(line, &seen_uncompressed, &out->max_body_uncompressed);
		else if (text_equals(keyword, "max-records"))
			rc = parse_bound(line, &seen_records, &out->max_records);
		else
			rc = DIRAUTH_ERR_SYNTAX;
		if (rc)
			return rc;
	}
	/* What is missing is reported at the line after the last one. */
	*fault_line = reader->line_number + 1;
	if (out->namespace_count == 0 || out->authority_count == 0 || !seen_threshold)
		return DIRAUTH_ERR_SYNTAX;
	if (threshold > out->authority_count) {
		*fault_line = threshold_line;
		return DIRAUTH_ERR_SYNTAX;
	}
	out->threshold = (size_t)threshold;
	return 0;
}

int trust_bundle_parse(const uint8_t *buf, size_t len, struct trust_bundle *out, size_t *error_line)
{
	struct line_reader reader;
	memset(out, 0, sizeof(*out));
	out->max_body_compressed = TRUST_BUNDLE_DEFAULT_MAX_BODY_COMPRESSED;
	out->max_body_uncompressed = TRUST_BUNDLE_DEFAULT_MAX_BODY_UNCOMPRESSED;
	out->max_records = TRUST_BUNDLE_DEFAULT_MAX_RECORDS;
	if (error_line)
		*error_line = 0;
	if (len > TRUST_BUNDLE_MAX_BYTES) {
		memset(out, 0, sizeof(*out));
		return DIRAUTH_ERR_BOUNDS;
	}
	size_t fault_line = 0;
	lines_init(&reader, buf, len, TRUST_BUNDLE_LINE_MAX);
	int rc = parse_lines(&reader, out, &fault_line);
	if (rc) {
		if (error_line)
			*error_line = fault_line;
		memset(out, 0, sizeof(*out));
	}
	return rc;
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
		size_t name_len = strnlen(entry->name, sizeof(entry->name));
		size_t origin_len = strnlen(entry->origin, sizeof(entry->origin));
		struct text_span name = {entry->name, name_len};
		if (name_len == sizeof(entry->name) || !text_is_name(name, NAMESPACE_NAME_MAX) ||
		    origin_len == sizeof(entry->origin) || !names_origin_is_valid(entry->origin, origin_len))
			return DIRAUTH_ERR_SYNTAX;
		for (size_t j = 0; j < i; j++) {
			if (strcmp(bundle->namespaces[j].name, entry->name) == 0 ||
			    strcmp(bundle->namespaces[j].origin, entry->origin) == 0)
				return DIRAUTH_ERR_SYNTAX;
		}
	}
	for (size_t i = 0; i < bundle->authority_count; i++) {
		const struct note_verifier *entry = &bundle->authorities[i];
		size_t name_len = strnlen(entry->name, sizeof(entry->name));
		if (!names_key_name_is_ascii(entry->name, name_len) || entry->type != NOTE_KEY_TYPE_ED25519)
			return DIRAUTH_ERR_SYNTAX;
		for (size_t j = 0; j < i; j++) {
			if (verifier_equal_identity(&bundle->authorities[j], entry))
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
