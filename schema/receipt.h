/*
 * receipt.h: the authority-signed promise that a registration was accepted.
 *
 * Like a Certificate Transparency SCT with its merge delay: it names what was accepted and the
 * epoch by which it will be published, so a monitor can check that the promise was kept.
 * Grammar in schema/receipt.md:
 *
 *   dirauth receipt v1
 *   authority <authority key name>
 *   namespace <namespace name>
 *   service <service id hex>
 *   sequence <decimal>
 *   registration <SHA-256 hex of the whole signed registration note as submitted>
 *   accepted-at <unix seconds>
 *   publish-by-epoch <epoch number>
 */
#ifndef DIRAUTH_SCHEMA_RECEIPT_H
#define DIRAUTH_SCHEMA_RECEIPT_H

#include "base/buffer.h"
#include "schema/note.h"
#include "schema/registration.h"

#include <stdint.h>

#define RECEIPT_MAX_BYTES 2048

struct receipt {
	char authority[NOTE_NAME_MAX + 1];
	char namespace_name[NAMESPACE_NAME_MAX + 1];
	uint8_t service_id[SERVICE_ID_SIZE];
	uint64_t sequence;
	uint8_t registration_digest[32];
	uint64_t accepted_at;
	uint64_t publish_by_epoch;
};

/* Appends the canonical receipt text. Returns 0, DIRAUTH_ERR_SYNTAX or DIRAUTH_ERR_NOMEM. */
int receipt_encode(const struct receipt *r, struct buffer *out);

/* Parses receipt text (not a signed note). Refuses non-canonical text. Returns 0,
 * DIRAUTH_ERR_SYNTAX or DIRAUTH_ERR_BOUNDS. */
int receipt_parse(const uint8_t *text, size_t len, struct receipt *out);

/* The receipt for a deregistration (schema/deregistration_receipt.h) is this document with three
 * words changed: its first line, the keyword of the statement's digest and that of its last line.
 * Both codecs write and read their lines here, a struct receipt carrying either kind (its
 * registration_digest and publish_by_epoch hold the kind's digest and last value). */
struct receipt_kind {
	const char *first_line;     /* "dirauth receipt v1" */
	const char *digest_keyword; /* "registration" */
	const char *last_keyword;   /* "publish-by-epoch" */
};

/* Appends the text of r as a receipt of kind. Returns 0, DIRAUTH_ERR_SYNTAX (an authority that is
 * not an ASCII key name, a namespace that is not a name, a sequence of 0) or DIRAUTH_ERR_NOMEM; on
 * error out is as it was. */
int receipt_write(const struct receipt_kind *kind, const struct receipt *r, struct buffer *out);

/* Reads the fields of a receipt of kind from text into *out, which the caller zeroed, without the
 * check of its one spelling that lines_parse_document adds. Returns 0, DIRAUTH_ERR_SYNTAX or
 * DIRAUTH_ERR_BOUNDS. */
int receipt_read_fields(const struct receipt_kind *kind, const uint8_t *text, size_t len,
                        struct receipt *out);

#endif
