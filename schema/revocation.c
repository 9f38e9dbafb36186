/*
 * revocation.c: the codec of a revocation and the check of its own signature.
 *
 * A revocation is the one document whose effect never ends (hard rule 4), and it is checked by
 * whoever holds a snapshot, long after the registration it revokes has left. So it names its
 * signing key itself and has one spelling like every other document: the fields in one order,
 * words from fixed tables, canonical decimals and hex, then the canonical check. Whether the key
 * may revoke the service (the service's provider, or an operator the authority lists) needs the
 * authority's enrolment and configuration, and is judged there, not here.
 */
#include "schema/revocation.h"

#include "schema/encoding.h"
#include "base/error.h"
#include "schema/lines.h"

#include <stdlib.h>
#include <string.h>

static const char *const signer_names[REVOCATION_SIGNER_COUNT] = {"provider", "operator"};
static const char *const reason_names[REVOCATION_REASON_COUNT] = {"key-compromise", "retired", "superseded",
                                                                  "operator-action"};

const char *revocation_signer_name(enum revocation_signer value)
{
	return (unsigned)value < REVOCATION_SIGNER_COUNT ? signer_names[value] : NULL;
}

int revocation_signer_parse(const char *text, size_t len, enum revocation_signer *out)
{
	int index = text_index_of(signer_names, REVOCATION_SIGNER_COUNT, text, len);
	if (index < 0)
		return DIRAUTH_ERR_SYNTAX;
	*out = (enum revocation_signer)index;
	return 0;
}

const char *revocation_reason_name(enum revocation_reason value)
{
	return (unsigned)value < REVOCATION_REASON_COUNT ? reason_names[value] : NULL;
}

int revocation_reason_parse(const char *text, size_t len, enum revocation_reason *out)
{
	int index = text_index_of(reason_names, REVOCATION_REASON_COUNT, text, len);
	if (index < 0)
		return DIRAUTH_ERR_SYNTAX;
	*out = (enum revocation_reason)index;
	return 0;
}

static int revocation_check(const struct revocation *r)
{
	if (!text_field_is_name(r->namespace_name, sizeof(r->namespace_name), NAMESPACE_NAME_MAX))
		return DIRAUTH_ERR_SYNTAX;
	if ((r->has_endpoint != 0 && r->has_endpoint != 1) || !revocation_signer_name(r->signer) ||
	    !revocation_reason_name(r->reason) || !note_verifier_is_canonical(&r->key))
		return DIRAUTH_ERR_SYNTAX;
	return r->sequence >= 1 ? 0 : DIRAUTH_ERR_SYNTAX;
}

int revocation_encode(const struct revocation *r, struct buffer *out)
{
	int rc = revocation_check(r);
	if (rc)
		return rc;
	char service_hex[2 * SERVICE_ID_SIZE + 1], endpoint_hex[2 * ENDPOINT_ID_SIZE + 1];
	char key[NOTE_VERIFIER_KEY_MAX + 1];
	hex_encode(r->service_id, SERVICE_ID_SIZE, service_hex);
	hex_encode(r->endpoint_id, ENDPOINT_ID_SIZE, endpoint_hex);
	note_verifier_format(&r->key, key);
	size_t start = out->len;
	rc = buffer_appendf(out, "dirauth revocation v1\nnamespace %s\nservice %s\n", r->namespace_name,
	                    service_hex);
	if (rc == 0 && r->has_endpoint)
		rc = buffer_appendf(out, "endpoint %s\n", endpoint_hex);
	if (rc == 0)
		rc = buffer_appendf(out, "signer %s\nkey %s\nreason %s\nrevoked-at %llu\nsequence %llu\n",
		                    revocation_signer_name(r->signer), key, revocation_reason_name(r->reason),
		                    (unsigned long long)r->revoked_at, (unsigned long long)r->sequence);
	if (rc)
		buffer_truncate(out, start);
	return rc;
}

static int parse_fields(const uint8_t *text, size_t len, void *parsed)
{
	struct revocation *out = parsed;
	struct line_reader reader;
	struct text_span value;
	int rc;
	lines_init(&reader, text, len, REVOCATION_LINE_MAX);
	if ((rc = lines_expect_exact(&reader, "dirauth revocation v1")) != 0 ||
	    (rc = lines_expect_name(&reader, "namespace", out->namespace_name,
	                            sizeof(out->namespace_name))) != 0)
		return rc;
	if ((rc = lines_expect_hex(&reader, "service", out->service_id, SERVICE_ID_SIZE)) != 0)
		return rc;
	if (lines_peek_keyword(&reader, "endpoint")) {
		if ((rc = lines_expect_hex(&reader, "endpoint", out->endpoint_id, ENDPOINT_ID_SIZE)) != 0)
			return rc;
		out->has_endpoint = 1;
	}
	if ((rc = lines_expect(&reader, "signer", &value)) != 0 ||
	    (rc = revocation_signer_parse(value.data, value.len, &out->signer)) != 0 ||
	    (rc = lines_expect(&reader, "key", &value)) != 0 ||
	    (rc = note_verifier_parse(value.data, value.len, &out->key)) != 0 ||
	    (rc = lines_expect(&reader, "reason", &value)) != 0 ||
	    (rc = revocation_reason_parse(value.data, value.len, &out->reason)) != 0 ||
	    (rc = lines_expect_u64(&reader, "revoked-at", &out->revoked_at)) != 0 ||
	    (rc = lines_expect_u64(&reader, "sequence", &out->sequence)) != 0)
		return rc;
	return lines_at_end(&reader) ? 0 : DIRAUTH_ERR_SYNTAX;
}

static int encode_revocation(const void *value, struct buffer *out)
{
	return revocation_encode(value, out);
}

static const struct lines_codec revocation_codec = {
    .max_bytes = REVOCATION_MAX_BYTES,
    .value_size = sizeof(struct revocation),
    .parse_fields = parse_fields,
    .encode = encode_revocation,
};

int revocation_parse(const uint8_t *text, size_t len, struct revocation *out)
{
	return lines_parse_document(&revocation_codec, text, len, out);
}

int revocation_parse_signed(const uint8_t *buf, size_t len, struct revocation *out, struct note **note_out)
{
	struct note *note = NULL;
	memset(out, 0, sizeof(*out));
	/* Signed by the key the text names: one byte string per revocation. */
	int rc = note_parse_statement(buf, len, REVOCATION_MAX_BYTES, &revocation_codec, out, &note);
	if (rc == 0)
		rc = note_verify_threshold(note, &out->key, 1, 1);
	if (rc)
		memset(out, 0, sizeof(*out));
	return note_statement_keep(rc, note, note_out);
}

int revocation_excludes(const struct revocation *r, const struct registration *registration)
{
	if (strcmp(r->namespace_name, registration->namespace_name) != 0)
		return 0;
	if (!r->has_endpoint)
		return memcmp(r->service_id, registration->service_id, SERVICE_ID_SIZE) == 0;
	return registration_find_endpoint(registration, r->endpoint_id) != NULL;
}

static int endpoint_id_order(const void *a, const void *b)
{
	return memcmp(a, b, ENDPOINT_ID_SIZE);
}

void revocation_endpoints_sort(uint8_t (*ids)[ENDPOINT_ID_SIZE], size_t count)
{
	if (count > 1)
		qsort(ids, count, ENDPOINT_ID_SIZE, endpoint_id_order);
}

int revocation_endpoints_name_any(const uint8_t (*ids)[ENDPOINT_ID_SIZE], size_t count,
                                  const struct registration *r)
{
	for (size_t e = 0; count > 0 && e < r->endpoint_count; e++)
		if (bsearch(r->endpoints[e].endpoint_id, ids, count, ENDPOINT_ID_SIZE, endpoint_id_order))
			return 1;
	return 0;
}

void revocation_target_format(const uint8_t *service_id, int has_endpoint, const uint8_t *endpoint_id,
                              char out[REVOCATION_TARGET_TEXT_SIZE])
{
	hex_encode(service_id, SERVICE_ID_SIZE, out);
	out[2 * SERVICE_ID_SIZE] = ' ';
	if (has_endpoint)
		hex_encode(endpoint_id, ENDPOINT_ID_SIZE, out + 2 * SERVICE_ID_SIZE + 1);
	else
		strcpy(out + 2 * SERVICE_ID_SIZE + 1, "-");
}

int revocation_target_read(struct text_span *rest, uint8_t *service_id, int *has_endpoint,
                           uint8_t *endpoint_id)
{
	struct text_span field;
	int rc;
	if ((rc = text_next_hex(rest, service_id, SERVICE_ID_SIZE)) != 0 ||
	    (rc = text_next_field(rest, &field)) != 0)
		return rc;
	if (text_equals(field, "-"))
		*has_endpoint = 0;
	else if (text_parse_hex(field, endpoint_id, ENDPOINT_ID_SIZE) == 0)
		*has_endpoint = 1;
	else
		return DIRAUTH_ERR_SYNTAX;
	return 0;
}

int revocation_target_compare(const uint8_t *service_a, int has_endpoint_a, const uint8_t *endpoint_a,
                              const uint8_t *service_b, int has_endpoint_b, const uint8_t *endpoint_b)
{
	int order = memcmp(service_a, service_b, SERVICE_ID_SIZE);
	if (order)
		return order;
	if (has_endpoint_a != has_endpoint_b)
		return has_endpoint_a ? 1 : -1;
	return has_endpoint_a ? memcmp(endpoint_a, endpoint_b, ENDPOINT_ID_SIZE) : 0;
}
