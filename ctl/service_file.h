/*
 * service_file.h: the YAML service description a provider operator writes by hand, and from
 * which dirauthctl register builds a signed registration.
 *
 *   namespace: mix
 *   service: <64 lower-case hex>
 *   class: mix-gateway
 *   sequence: 7              optional; default: the current unix time, so it grows
 *   validity_seconds: 86400  optional; default 86400
 *   endpoints:
 *     - id: <64 lower-case hex>
 *       transport: quic      quic | tls | onion | bridge
 *       address: 192.0.2.10:443
 *       region: eu-west
 *       capacity: medium     low | medium | high
 *       profile: modern      baseline | modern | hybrid-crypto | high-capacity
 *       key: gw1+1a2b3c4d+AB..  optional: the endpoint's own Ed25519 verifier key (its
 *                               endpoint-key line): it may sign the endpoint's health statements
 *                               (dirauthctl health --signer endpoint)
 *
 * The file is small and written by people, so the parser is strict and says exactly where a
 * problem is: every refusal is "FILE:LINE: problem". It is read through settings/ (the bounded
 * tree every configuration file of the project is read into, settings/settings.h) and accepts
 * exactly the shape above and nothing else: unknown or duplicate keys, aliases, anchors, tags,
 * several documents, nesting beyond CTL_SERVICE_FILE_MAX_DEPTH and files over
 * CTL_SERVICE_FILE_MAX_BYTES are refused. Values are checked with the registration grammar's own
 * rules (registration.h), so a file that parses encodes.
 */
#ifndef DIRAUTH_CTL_SERVICE_FILE_H
#define DIRAUTH_CTL_SERVICE_FILE_H

#include "schema/registration.h"

#include <stddef.h>
#include <stdint.h>

#define CTL_SERVICE_FILE_MAX_BYTES        (64 * 1024)
#define CTL_SERVICE_FILE_MAX_DEPTH        4 /* collections open at once; the grammar needs 3 */
#define CTL_SERVICE_FILE_DEFAULT_VALIDITY 86400
#define CTL_SERVICE_FILE_MAX_VALIDITY     (366 * 86400) /* a registration is refreshed, not eternal */
#define CTL_SERVICE_FILE_ERROR_MAX        512

struct ctl_service_file {
	char namespace_name[NAMESPACE_NAME_MAX + 1];
	uint8_t service_id[SERVICE_ID_SIZE];
	enum service_class service_class;
	int has_sequence;                      /* 0 when the file leaves the sequence to the clock */
	uint64_t sequence;                     /* ≥ 1 when has_sequence */
	uint64_t validity_seconds;             /* 1..CTL_SERVICE_FILE_MAX_VALIDITY */
	size_t endpoint_count;                 /* 1..REGISTRATION_MAX_ENDPOINTS */
	struct endpoint_descriptor *endpoints; /* owned, in file order; ctl_service_file_clear frees */
};

/* Parses a service description held in buf. file_name is used only in messages. On failure
 * error (capacity error_cap, may be NULL) gets "FILE:LINE: problem". Returns 0 (the caller
 * calls ctl_service_file_clear), DIRAUTH_ERR_SYNTAX (not the grammar above, or a bad value),
 * DIRAUTH_ERR_BOUNDS (file too large, too deep, too many endpoints) or DIRAUTH_ERR_NOMEM. On
 * failure *out is left cleared. */
int ctl_service_file_parse(const uint8_t *buf, size_t len, const char *file_name,
                           struct ctl_service_file *out, char *error, size_t error_cap);

/* Frees the endpoints and zeroes file. Accepts NULL. */
void ctl_service_file_clear(struct ctl_service_file *file);

#endif
