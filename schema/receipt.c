/*
 * receipt.c: the codec of an authority's receipt for an accepted registration.
 *
 * A receipt is a promise a monitor later holds the authority to, so, like every signed
 * document, it has one spelling: the parser reads the fields strictly, re-encodes them and
 * refuses the input unless the bytes are identical. Lines are short and fixed in number, so the
 * line bound (RECEIPT_LINE_MAX below) only has to fit the longest authority key name.
 */
#include "schema/receipt.h"

#include "schema/encoding.h"
#include "schema/error.h"
#include "schema/names.h"
#include "schema/lines.h"

#include <string.h>

/* The longest line is "authority " and a NOTE_NAME_MAX-byte key name (138 bytes). */
#define RECEIPT_LINE_MAX 256

static int receipt_check(const struct receipt *r)
{
	if (!names_key_name_field_is_ascii(r->authority, sizeof(r->authority)) ||
	    !text_field_is_name(r->namespace_name, sizeof(r->namespace_name), NAMESPACE_NAME_MAX))
		return DIRAUTH_ERR_SYNTAX;
	if (r->sequence < 1)
		return DIRAUTH_ERR_SYNTAX;
	return 0;
}

int receipt_encode(const struct receipt *r, struct buffer *out)
{
	int rc = receipt_check(r);
	if (rc)
		return rc;
	char service_hex[2 * SERVICE_ID_SIZE + 1];
	char digest_hex[2 * sizeof(r->registration_digest) + 1];
	hex_encode(r->service_id, SERVICE_ID_SIZE, service_hex);
	hex_encode(r->registration_digest, sizeof(r->registration_digest), digest_hex);
	size_t start = out->len;
	rc = buffer_appendf(out,
	                    "dirauth receipt v1\nauthority %s\nnamespace %s\nservice %s\nsequence %llu\n"
	                    "registration %s\naccepted-at %llu\npublish-by-epoch %llu\n",
	                    r->authority, r->namespace_name, service_hex, (unsigned long long)r->sequence,
	                    digest_hex, (unsigned long long)r->accepted_at,
	                    (unsigned long long)r->publish_by_epoch);
	if (rc) {
		out->len = start;
		if (out->data)
			out->data[start] = 0;
	}
	return rc;
}

static int parse_fields(const uint8_t *text, size_t len, void *parsed)
{
	struct receipt *out = parsed;
	struct line_reader reader;
	struct text_span value;
	int rc;
	lines_init(&reader, text, len, RECEIPT_LINE_MAX);
	if ((rc = lines_expect_exact(&reader, "dirauth receipt v1")) != 0)
		return rc;
	if ((rc = lines_expect(&reader, "authority", &value)) != 0)
		return rc;
	if (!note_name_is_valid(value.data, value.len))
		return DIRAUTH_ERR_SYNTAX;
	if ((rc = text_copy(value, out->authority, sizeof(out->authority))) != 0)
		return rc;
	if ((rc = lines_expect_name(&reader, "namespace", out->namespace_name,
	                            sizeof(out->namespace_name))) != 0)
		return rc;
	if ((rc = lines_expect(&reader, "service", &value)) != 0)
		return rc;
	if (text_parse_hex(value, out->service_id, SERVICE_ID_SIZE))
		return DIRAUTH_ERR_SYNTAX;
	if ((rc = lines_expect(&reader, "sequence", &value)) != 0 ||
	    (rc = text_parse_u64(value, &out->sequence)) != 0)
		return rc;
	if ((rc = lines_expect(&reader, "registration", &value)) != 0)
		return rc;
	if (text_parse_hex(value, out->registration_digest, sizeof(out->registration_digest)))
		return DIRAUTH_ERR_SYNTAX;
	if ((rc = lines_expect(&reader, "accepted-at", &value)) != 0 ||
	    (rc = text_parse_u64(value, &out->accepted_at)) != 0)
		return rc;
	if ((rc = lines_expect(&reader, "publish-by-epoch", &value)) != 0 ||
	    (rc = text_parse_u64(value, &out->publish_by_epoch)) != 0)
		return rc;
	return lines_at_end(&reader) ? 0 : DIRAUTH_ERR_SYNTAX;
}

static int encode_receipt(const void *value, struct buffer *out)
{
	return receipt_encode(value, out);
}

static const struct lines_codec receipt_codec = {
    .max_bytes = RECEIPT_MAX_BYTES,
    .value_size = sizeof(struct receipt),
    .parse_fields = parse_fields,
    .encode = encode_receipt,
};

int receipt_parse(const uint8_t *text, size_t len, struct receipt *out)
{
	return lines_parse_document(&receipt_codec, text, len, out);
}
