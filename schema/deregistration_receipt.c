/*
 * deregistration_receipt.c: the codec of an authority's receipt for a deregistration.
 *
 * The registration receipt (receipt.c) with three words changed: a promise a monitor later holds
 * the authority to, with one spelling and fixed lines, written and read by the same code as that
 * one (schema/receipt.h, struct receipt_kind) through a copy of its fields.
 */
#include "schema/deregistration_receipt.h"

#include "schema/lines.h"
#include "schema/receipt.h"

#include <string.h>

static const struct receipt_kind deregistration_kind = {"dirauth deregistration-receipt v1", "deregistration",
                                                        "last-listed-epoch"};

/* The fields as the shared receipt lines carry them (schema/receipt.h), and back. */
static void to_receipt(const struct deregistration_receipt *r, struct receipt *out)
{
	memset(out, 0, sizeof(*out));
	memcpy(out->authority, r->authority, sizeof(out->authority));
	memcpy(out->namespace_name, r->namespace_name, sizeof(out->namespace_name));
	memcpy(out->service_id, r->service_id, SERVICE_ID_SIZE);
	out->sequence = r->sequence;
	memcpy(out->registration_digest, r->deregistration_digest, sizeof(out->registration_digest));
	out->accepted_at = r->accepted_at;
	out->publish_by_epoch = r->last_listed_epoch;
}

static void from_receipt(const struct receipt *r, struct deregistration_receipt *out)
{
	memcpy(out->authority, r->authority, sizeof(out->authority));
	memcpy(out->namespace_name, r->namespace_name, sizeof(out->namespace_name));
	memcpy(out->service_id, r->service_id, SERVICE_ID_SIZE);
	out->sequence = r->sequence;
	memcpy(out->deregistration_digest, r->registration_digest, sizeof(out->deregistration_digest));
	out->accepted_at = r->accepted_at;
	out->last_listed_epoch = r->publish_by_epoch;
}

int deregistration_receipt_encode(const struct deregistration_receipt *r, struct buffer *out)
{
	struct receipt lines;
	to_receipt(r, &lines);
	return receipt_write(&deregistration_kind, &lines, out);
}

static int parse_fields(const uint8_t *text, size_t len, void *parsed)
{
	struct receipt lines;
	memset(&lines, 0, sizeof(lines));
	int rc = receipt_read_fields(&deregistration_kind, text, len, &lines);
	from_receipt(&lines, parsed);
	return rc;
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
