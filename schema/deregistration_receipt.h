/*
 * deregistration_receipt.h: the authority-signed answer to a deregistration: the service is
 * withdrawn, and no snapshot after the named epoch lists it.
 *
 * Like the registration receipt (schema/receipt.h) it is a promise a monitor holds the authority
 * to: the snapshot of every epoch after last-listed-epoch lacks the service. Grammar in
 * schema/deregistration-receipt.md:
 *
 *   dirauth deregistration-receipt v1
 *   authority <authority key name>
 *   namespace <namespace name>
 *   service <service id hex>
 *   sequence <decimal: the highest registration sequence withdrawn>
 *   deregistration <SHA-256 hex of the whole signed deregistration note as submitted>
 *   accepted-at <unix seconds>
 *   last-listed-epoch <epoch number>
 */
#ifndef DIRAUTH_SCHEMA_DEREGISTRATION_RECEIPT_H
#define DIRAUTH_SCHEMA_DEREGISTRATION_RECEIPT_H

#include "base/buffer.h"
#include "schema/note.h"
#include "schema/registration.h"

#include <stdint.h>

#define DEREGISTRATION_RECEIPT_MAX_BYTES 2048

struct deregistration_receipt {
	char authority[NOTE_NAME_MAX + 1];
	char namespace_name[NAMESPACE_NAME_MAX + 1];
	uint8_t service_id[SERVICE_ID_SIZE];
	uint64_t sequence; /* >= 1 */
	uint8_t deregistration_digest[32];
	uint64_t accepted_at;
	uint64_t last_listed_epoch;
};

/* Appends the canonical receipt text. On error out is as it was. Returns 0, DIRAUTH_ERR_SYNTAX or
 * DIRAUTH_ERR_NOMEM. */
int deregistration_receipt_encode(const struct deregistration_receipt *r, struct buffer *out);

/* Parses receipt text (not a signed note). Refuses non-canonical text. Returns 0,
 * DIRAUTH_ERR_SYNTAX or DIRAUTH_ERR_BOUNDS. On error *out is zeroed. */
int deregistration_receipt_parse(const uint8_t *text, size_t len, struct deregistration_receipt *out);

#endif
