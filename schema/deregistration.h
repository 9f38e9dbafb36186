/*
 * deregistration.h: a provider's signed request to withdraw one of its services.
 *
 * The text of a deregistration note (grammar, bounds and an example in schema/deregistration.md):
 *
 *   dirauth deregistration v1
 *   namespace <namespace name>
 *   service <service id: 64 lower-case hex>
 *   provider <provider verifier key: name+keyid+base64>
 *   sequence <decimal, >= 1: the highest registration sequence withdrawn>
 *   requested-at <unix seconds>
 *
 * The note carries exactly one signature, a valid one by the key of its provider line, which the
 * authority checks is the service's enrolled provider. It withdraws every registration of the
 * service with a sequence up to the one named; a later registration with a higher sequence is a
 * new registration of the service, the provider's own choice. The authority answers with a
 * deregistration receipt (schema/deregistration_receipt.h) naming the last epoch whose snapshot
 * may still list the service.
 */
#ifndef DIRAUTH_SCHEMA_DEREGISTRATION_H
#define DIRAUTH_SCHEMA_DEREGISTRATION_H

#include "base/buffer.h"
#include "schema/note.h"
#include "schema/registration.h"

#include <stddef.h>
#include <stdint.h>

/* The whole signed note, text and its one signature line, at most. */
#define DEREGISTRATION_MAX_BYTES 2048
/* Each text line at most, without its newline (the longest is the provider line, 265 bytes). */
#define DEREGISTRATION_LINE_MAX  300

struct deregistration {
	char namespace_name[NAMESPACE_NAME_MAX + 1];
	uint8_t service_id[SERVICE_ID_SIZE];
	struct note_verifier provider;
	uint64_t sequence; /* >= 1 */
	uint64_t requested_at;
};

/* Appends the canonical text of d to out after checking every field (the provider key must read
 * back as itself). On error out is as it was. Returns 0, DIRAUTH_ERR_SYNTAX or DIRAUTH_ERR_NOMEM. */
int deregistration_encode(const struct deregistration *d, struct buffer *out);

/* Parses deregistration text (not a signed note). Accepts exactly what deregistration_encode
 * writes. Returns 0, DIRAUTH_ERR_SYNTAX or DIRAUTH_ERR_BOUNDS. On error *out is zeroed. */
int deregistration_parse(const uint8_t *text, size_t len, struct deregistration *out);

/* Parses a signed deregistration note of at most DEREGISTRATION_MAX_BYTES: exactly one signature
 * line (more: DIRAUTH_ERR_SYNTAX), the text, and the signature by the provider line's key
 * (DIRAUTH_ERR_SIGNATURE when it names that key and does not verify, DIRAUTH_ERR_UNKNOWN_KEY when
 * it is by another key, DIRAUTH_ERR_CRYPTO when the check could not run). On success *note_out
 * (may be NULL) gets the note, which the caller frees. Also DIRAUTH_ERR_BOUNDS, DIRAUTH_ERR_NOMEM. */
int deregistration_parse_signed(const uint8_t *buf, size_t len, struct deregistration *out,
                                struct note **note_out);

#endif
