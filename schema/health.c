/*
 * health.c: the codec of a health statement, and its check against the registration it speaks
 * about.
 *
 * A statement is short and posted often (a provider's timer, every few epochs at most), so the
 * parser is the usual strict one: the fields in one order, each a word from a table or a
 * canonical decimal or hex, then the canonical check (the text must be what the encoder writes
 * for the values read). What the grammar leaves out matters as much as what it has: there is no
 * free-text or numeric field but the time and the sequence, so a load, latency or utilisation
 * figure cannot be stated, and a line carrying one is an unknown line, refused.
 *
 * Which key signed is a line of the text (signer provider | endpoint), not a guess from the
 * signature: the key itself comes from the registration (its provider line, or the endpoint's
 * endpoint-key line), so a statement cannot name a key of its own choosing.
 */
#include "schema/health.h"

#include "schema/encoding.h"
#include "base/error.h"
#include "schema/lines.h"

#include <stdlib.h>
#include <string.h>

static const char *const class_names[HEALTH_CLASS_COUNT] = {"healthy", "degraded", "draining", "unavailable"};
static const char *const signer_names[HEALTH_SIGNER_COUNT] = {"provider", "endpoint"};

const char *health_class_name(enum health_class value)
{
	return (unsigned)value < HEALTH_CLASS_COUNT ? class_names[value] : NULL;
}

int health_class_parse(const char *text, size_t len, enum health_class *out)
{
	int index = text_index_of(class_names, HEALTH_CLASS_COUNT, text, len);
	if (index < 0)
		return DIRAUTH_ERR_SYNTAX;
	*out = (enum health_class)index;
	return 0;
}

const char *health_signer_name(enum health_signer value)
{
	return (unsigned)value < HEALTH_SIGNER_COUNT ? signer_names[value] : NULL;
}

int health_signer_parse(const char *text, size_t len, enum health_signer *out)
{
	int index = text_index_of(signer_names, HEALTH_SIGNER_COUNT, text, len);
	if (index < 0)
		return DIRAUTH_ERR_SYNTAX;
	*out = (enum health_signer)index;
	return 0;
}

static int statement_check(const struct health_statement *s)
{
	if (!text_field_is_name(s->namespace_name, sizeof(s->namespace_name), NAMESPACE_NAME_MAX))
		return DIRAUTH_ERR_SYNTAX;
	if (!health_signer_name(s->signer) || !health_class_name(s->health_class))
		return DIRAUTH_ERR_SYNTAX;
	if (s->has_capacity != 0 && (s->has_capacity != 1 || !capacity_class_name(s->capacity)))
		return DIRAUTH_ERR_SYNTAX;
	return s->sequence >= 1 ? 0 : DIRAUTH_ERR_SYNTAX;
}

int health_encode(const struct health_statement *s, struct buffer *out)
{
	int rc = statement_check(s);
	if (rc)
		return rc;
	char service_hex[2 * SERVICE_ID_SIZE + 1], endpoint_hex[2 * ENDPOINT_ID_SIZE + 1];
	hex_encode(s->service_id, SERVICE_ID_SIZE, service_hex);
	hex_encode(s->endpoint_id, ENDPOINT_ID_SIZE, endpoint_hex);
	size_t start = out->len;
	rc = buffer_appendf(out,
	                    "dirauth health v1\nnamespace %s\nservice %s\nendpoint %s\nsigner %s\nclass %s\n",
	                    s->namespace_name, service_hex, endpoint_hex, health_signer_name(s->signer),
	                    health_class_name(s->health_class));
	if (rc == 0 && s->has_capacity)
		rc = buffer_appendf(out, "capacity %s\n", capacity_class_name(s->capacity));
	if (rc == 0)
		rc = buffer_appendf(out, "issued-at %llu\nsequence %llu\n", (unsigned long long)s->issued_at,
		                    (unsigned long long)s->sequence);
	if (rc)
		buffer_truncate(out, start);
	return rc;
}

static int parse_fields(const uint8_t *text, size_t len, void *parsed)
{
	struct health_statement *out = parsed;
	struct line_reader reader;
	struct text_span value;
	int rc;
	lines_init(&reader, text, len, HEALTH_LINE_MAX);
	if ((rc = lines_expect_exact(&reader, "dirauth health v1")) != 0 ||
	    (rc = lines_expect_name(&reader, "namespace", out->namespace_name,
	                            sizeof(out->namespace_name))) != 0)
		return rc;
	if ((rc = lines_expect_hex(&reader, "service", out->service_id, SERVICE_ID_SIZE)) != 0 ||
	    (rc = lines_expect_hex(&reader, "endpoint", out->endpoint_id, ENDPOINT_ID_SIZE)) != 0 ||
	    (rc = lines_expect(&reader, "signer", &value)) != 0 ||
	    (rc = health_signer_parse(value.data, value.len, &out->signer)) != 0 ||
	    (rc = lines_expect(&reader, "class", &value)) != 0 ||
	    (rc = health_class_parse(value.data, value.len, &out->health_class)) != 0)
		return rc;
	if (lines_peek_keyword(&reader, "capacity")) {
		if ((rc = lines_expect(&reader, "capacity", &value)) != 0 ||
		    (rc = capacity_class_parse(value.data, value.len, &out->capacity)) != 0)
			return rc;
		out->has_capacity = 1;
	}
	if ((rc = lines_expect_u64(&reader, "issued-at", &out->issued_at)) != 0 ||
	    (rc = lines_expect_u64(&reader, "sequence", &out->sequence)) != 0)
		return rc;
	return lines_at_end(&reader) ? 0 : DIRAUTH_ERR_SYNTAX;
}

static int encode_statement(const void *value, struct buffer *out)
{
	return health_encode(value, out);
}

static const struct lines_codec health_codec = {
    .max_bytes = HEALTH_MAX_BYTES,
    .value_size = sizeof(struct health_statement),
    .parse_fields = parse_fields,
    .encode = encode_statement,
};

int health_parse(const uint8_t *text, size_t len, struct health_statement *out)
{
	return lines_parse_document(&health_codec, text, len, out);
}

int health_parse_note(const uint8_t *buf, size_t len, struct health_statement *out, struct note **note_out)
{
	memset(out, 0, sizeof(*out));
	return note_parse_statement(buf, len, HEALTH_MAX_BYTES, &health_codec, out, note_out);
}

int health_signer_key(const struct health_statement *s, const struct registration *r,
                      struct note_verifier *out)
{
	if (strcmp(s->namespace_name, r->namespace_name) != 0 ||
	    memcmp(s->service_id, r->service_id, SERVICE_ID_SIZE) != 0)
		return DIRAUTH_ERR_MISMATCH;
	const struct endpoint_descriptor *endpoint = registration_find_endpoint(r, s->endpoint_id);
	if (!endpoint)
		return DIRAUTH_ERR_NOT_FOUND;
	if (s->signer == HEALTH_SIGNER_PROVIDER) {
		*out = r->provider;
		return 0;
	}
	if (s->signer != HEALTH_SIGNER_ENDPOINT || !endpoint->has_key)
		return DIRAUTH_ERR_UNKNOWN_KEY;
	*out = endpoint->key;
	return 0;
}

int health_verify_note(const struct note *note, const struct health_statement *s,
                       const struct registration *r)
{
	struct note_verifier key;
	int rc = health_signer_key(s, r, &key);
	return rc ? rc : note_verify_threshold(note, &key, 1, 1);
}

int health_parse_signed(const uint8_t *buf, size_t len, const struct registration *r,
                        struct health_statement *out, struct note **note_out)
{
	struct note *note = NULL;
	int rc = health_parse_note(buf, len, out, &note);
	if (rc == 0)
		rc = health_verify_note(note, out, r);
	if (rc)
		memset(out, 0, sizeof(*out));
	return note_statement_keep(rc, note, note_out);
}

int health_parse_listed(const uint8_t *buf, size_t len, const struct registration *r,
                        const uint8_t endpoint_id[ENDPOINT_ID_SIZE], uint64_t issued_at, uint64_t sequence,
                        struct health_statement *out)
{
	struct note *note = NULL;
	int rc = health_parse_note(buf, len, out, &note);
	/* The listing's fields first: a line that is not its statement costs no verification. */
	if (rc == 0 && (memcmp(out->endpoint_id, endpoint_id, ENDPOINT_ID_SIZE) != 0 ||
	                out->issued_at != issued_at || out->sequence != sequence))
		rc = DIRAUTH_ERR_MISMATCH;
	if (rc == 0)
		rc = health_verify_note(note, out, r);
	if (rc)
		memset(out, 0, sizeof(*out));
	note_free(note);
	return rc;
}

int health_is_stale(uint64_t issued_at, uint64_t freshness_seconds, uint64_t valid_after)
{
	return issued_at <= UINT64_MAX - freshness_seconds && issued_at + freshness_seconds <= valid_after;
}
