/*
 * deregistration.c: the codec of a provider's deregistration request, and its signature check.
 *
 * A deregistration withdraws a service, so it must be the provider's own word with one spelling,
 * like the registration it withdraws: the provider line names the key that signs it, the fields
 * come in one order, and the parser refuses any text the encoder would not write.
 */
#include "schema/deregistration.h"

#include "schema/encoding.h"
#include "base/error.h"
#include "schema/lines.h"

#include <string.h>

static int deregistration_check(const struct deregistration *d)
{
	if (!text_field_is_name(d->namespace_name, sizeof(d->namespace_name), NAMESPACE_NAME_MAX))
		return DIRAUTH_ERR_SYNTAX;
	if (!note_verifier_is_canonical(&d->provider) || d->sequence < 1)
		return DIRAUTH_ERR_SYNTAX;
	return 0;
}

int deregistration_encode(const struct deregistration *d, struct buffer *out)
{
	int rc = deregistration_check(d);
	if (rc)
		return rc;
	char service_hex[2 * SERVICE_ID_SIZE + 1], provider[NOTE_VERIFIER_KEY_MAX + 1];
	hex_encode(d->service_id, SERVICE_ID_SIZE, service_hex);
	note_verifier_format(&d->provider, provider);
	size_t start = out->len;
	rc =
	    buffer_appendf(out,
	                   "dirauth deregistration v1\nnamespace %s\nservice %s\nprovider %s\nsequence %llu\n"
	                   "requested-at %llu\n",
	                   d->namespace_name, service_hex, provider, (unsigned long long)d->sequence,
	                   (unsigned long long)d->requested_at);
	if (rc)
		buffer_truncate(out, start);
	return rc;
}

static int parse_fields(const uint8_t *text, size_t len, void *parsed)
{
	struct deregistration *out = parsed;
	struct line_reader reader;
	struct text_span value;
	int rc;
	lines_init(&reader, text, len, DEREGISTRATION_LINE_MAX);
	if ((rc = lines_expect_exact(&reader, "dirauth deregistration v1")) != 0 ||
	    (rc = lines_expect_name(&reader, "namespace", out->namespace_name,
	                            sizeof(out->namespace_name))) != 0)
		return rc;
	if ((rc = lines_expect_hex(&reader, "service", out->service_id, SERVICE_ID_SIZE)) != 0 ||
	    (rc = lines_expect(&reader, "provider", &value)) != 0 ||
	    (rc = note_verifier_parse(value.data, value.len, &out->provider)) != 0 ||
	    (rc = lines_expect_u64(&reader, "sequence", &out->sequence)) != 0 ||
	    (rc = lines_expect_u64(&reader, "requested-at", &out->requested_at)) != 0)
		return rc;
	return lines_at_end(&reader) ? 0 : DIRAUTH_ERR_SYNTAX;
}

static int encode_deregistration(const void *value, struct buffer *out)
{
	return deregistration_encode(value, out);
}

static const struct lines_codec deregistration_codec = {
    .max_bytes = DEREGISTRATION_MAX_BYTES,
    .value_size = sizeof(struct deregistration),
    .parse_fields = parse_fields,
    .encode = encode_deregistration,
};

int deregistration_parse(const uint8_t *text, size_t len, struct deregistration *out)
{
	return lines_parse_document(&deregistration_codec, text, len, out);
}

int deregistration_parse_signed(const uint8_t *buf, size_t len, struct deregistration *out,
                                struct note **note_out)
{
	struct note *note = NULL;
	memset(out, 0, sizeof(*out));
	int rc = note_parse_statement(buf, len, DEREGISTRATION_MAX_BYTES, &deregistration_codec, out, &note);
	if (rc == 0)
		rc = note_verify_threshold(note, &out->provider, 1, 1);
	if (rc)
		memset(out, 0, sizeof(*out));
	return note_statement_keep(rc, note, note_out);
}
