/*
 * deregistration_receipt.c: the codec of an authority's receipt for a deregistration.
 *
 * Written like the registration receipt (receipt.c): a promise a monitor later holds the
 * authority to, with one spelling, fixed lines, and a line bound that only has to fit the longest
 * authority key name.
 */
#include "schema/deregistration_receipt.h"

#include "schema/encoding.h"
#include "schema/error.h"
#include "schema/lines.h"
#include "schema/names.h"

#include <string.h>

/* The longest line is "authority " and a NOTE_NAME_MAX-byte key name (138 bytes). */
#define DEREGISTRATION_RECEIPT_LINE_MAX 256

static int receipt_check(const struct deregistration_receipt *r)
{
	if (!names_key_name_field_is_ascii(r->authority, sizeof(r->authority)) ||
	    !text_field_is_name(r->namespace_name, sizeof(r->namespace_name), NAMESPACE_NAME_MAX))
		return DIRAUTH_ERR_SYNTAX;
	return r->sequence >= 1 ? 0 : DIRAUTH_ERR_SYNTAX;
}

int deregistration_receipt_encode(const struct deregistration_receipt *r, struct buffer *out)
{
	int rc = receipt_check(r);
	if (rc)
		return rc;
	char service_hex[2 * SERVICE_ID_SIZE + 1];
	char digest_hex[2 * sizeof(r->deregistration_digest) + 1];
	hex_encode(r->service_id, SERVICE_ID_SIZE, service_hex);
	hex_encode(r->deregistration_digest, sizeof(r->deregistration_digest), digest_hex);
	size_t start = out->len;
	rc = buffer_appendf(out,
	                    "dirauth deregistration-receipt v1\nauthority %s\nnamespace %s\nservice %s\n"
	                    "sequence %llu\nderegistration %s\naccepted-at %llu\nlast-listed-epoch %llu\n",
	                    r->authority, r->namespace_name, service_hex, (unsigned long long)r->sequence,
	                    digest_hex, (unsigned long long)r->accepted_at,
	                    (unsigned long long)r->last_listed_epoch);
	if (rc)
		buffer_truncate(out, start);
	return rc;
}

static int parse_fields(const uint8_t *text, size_t len, void *parsed)
{
	struct deregistration_receipt *out = parsed;
	struct line_reader reader;
	struct text_span value;
	int rc;
	lines_init(&reader, text, len, DEREGISTRATION_RECEIPT_LINE_MAX);
	if ((rc = lines_expect_exact(&reader, "dirauth deregistration-receipt v1")) != 0 ||
	    (rc = lines_expect(&reader, "authority", &value)) != 0)
		return rc;
	if (!names_key_name_is_ascii(value.data, value.len))
		return DIRAUTH_ERR_SYNTAX;
	if ((rc = text_copy(value, out->authority, sizeof(out->authority))) != 0 ||
	    (rc = lines_expect_name(&reader, "namespace", out->namespace_name,
	                            sizeof(out->namespace_name))) != 0)
		return rc;
	if ((rc = lines_expect_hex(&reader, "service", out->service_id, SERVICE_ID_SIZE)) != 0 ||
	    (rc = lines_expect_u64(&reader, "sequence", &out->sequence)) != 0 ||
	    (rc = lines_expect_hex(&reader, "deregistration", out->deregistration_digest, 32)) != 0 ||
	    (rc = lines_expect_u64(&reader, "accepted-at", &out->accepted_at)) != 0 ||
	    (rc = lines_expect_u64(&reader, "last-listed-epoch", &out->last_listed_epoch)) != 0)
		return rc;
	return lines_at_end(&reader) ? 0 : DIRAUTH_ERR_SYNTAX;
}

static int encode_receipt(const void *value, struct buffer *out)
{
	return deregistration_receipt_encode(value, out);
}

static const struct lines_codec deregistration_receipt_codec = {
    .max_bytes = DEREGISTRATION_RECEIPT_MAX_BYTES,
    .value_size = sizeof(struct deregistration_receipt),
    .parse_fields = parse_fields,
    .encode = encode_receipt,
};

int deregistration_receipt_parse(const uint8_t *text, size_t len, struct deregistration_receipt *out)
{
	return lines_parse_document(&deregistration_receipt_codec, text, len, out);
}
