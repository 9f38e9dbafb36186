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
#include "base/error.h"
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

static const struct receipt_kind registration_kind = {"dirauth receipt v1", "registration",
                                                      "publish-by-epoch"};

int receipt_write(const struct receipt_kind *kind, const struct receipt *r, struct buffer *out)
{
	int rc = receipt_check(r);
	if (rc)
		return rc;
	char service_hex[2 * SERVICE_ID_SIZE + 1];
	char digest_hex[2 * sizeof(r->registration_digest) + 1];
	hex_encode(r->service_id, SERVICE_ID_SIZE, service_hex);
	hex_encode(r->registration_digest, sizeof(r->registration_digest), digest_hex);
	size_t start = out->len;
	rc = buffer_appendf(
	    out,
	    "%s\nauthority %s\nnamespace %s\nservice %s\nsequence %llu\n%s %s\naccepted-at %llu\n"
	    "%s %llu\n",
	    kind->first_line, r->authority, r->namespace_name, service_hex, (unsigned long long)r->sequence,
	    kind->digest_keyword, digest_hex, (unsigned long long)r->accepted_at, kind->last_keyword,
	    (unsigned long long)r->publish_by_epoch);
	if (rc)
		buffer_truncate(out, start);
	return rc;
}

int receipt_encode(const struct receipt *r, struct buffer *out)
{
	return receipt_write(&registration_kind, r, out);
}

int receipt_read_fields(const struct receipt_kind *kind, const uint8_t *text, size_t len, struct receipt *out)
{
	struct line_reader reader;
	struct text_span value;
	int rc;
	lines_init(&reader, text, len, RECEIPT_LINE_MAX);
	if ((rc = lines_expect_exact(&reader, kind->first_line)) != 0 ||
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
	    (rc = lines_expect_hex(&reader, kind->digest_keyword, out->registration_digest,
	                           sizeof(out->registration_digest))) != 0 ||
	    (rc = lines_expect_u64(&reader, "accepted-at", &out->accepted_at)) != 0 ||
	    (rc = lines_expect_u64(&reader, kind->last_keyword, &out->publish_by_epoch)) != 0)
		return rc;
	return lines_at_end(&reader) ? 0 : DIRAUTH_ERR_SYNTAX;
}

static int parse_fields(const uint8_t *text, size_t len, void *parsed)
{
	return receipt_read_fields(&registration_kind, text, len, parsed);
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
