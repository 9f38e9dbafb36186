/*
 * revocation.h: a revocation: the signed word that an endpoint or a whole service must never be
 * used again.
 *
 * The text of a revocation note (grammar, bounds and an example in schema/revocation.md):
 *
 *   dirauth revocation v1
 *   namespace <namespace name>
 *   service <service id: 64 lower-case hex>
 *   endpoint <endpoint id: 64 lower-case hex>     (optional: absent revokes the whole service)
 *   signer <provider | operator>
 *   key <the signing key's verifier key>
 *   reason <key-compromise | retired | superseded | operator-action>
 *   revoked-at <unix seconds>
 *   sequence <decimal, >= 1>
 *
 * The note carries exactly one signature, by the key of its key line. The key travels in the
 * revocation because a revocation outlives the registration it revokes: a snapshot lists it after
 * the service has left, and a client checks it without the registration. Whether that key may
 * revoke this service is the authority's judgement, not the grammar's: a provider key must be the
 * service's enrolled provider, an operator key must be listed in the authority's configuration.
 * (signer, key, sequence) makes each revocation unique: a signer numbers its revocations.
 */
#ifndef DIRAUTH_SCHEMA_REVOCATION_H
#define DIRAUTH_SCHEMA_REVOCATION_H

#include "base/buffer.h"
#include "schema/lines.h"
#include "schema/note.h"
#include "schema/registration.h"

#include <stddef.h>
#include <stdint.h>

/* The whole signed note, text and its one signature line, at most. */
#define REVOCATION_MAX_BYTES 2048
/* Each text line at most, without its newline (the longest is the key line, 260 bytes). */
#define REVOCATION_LINE_MAX  300

enum revocation_signer {
	REVOCATION_SIGNER_PROVIDER, /* the service's provider: its own endpoints or services only */
	REVOCATION_SIGNER_OPERATOR, /* an authority operator's key, listed in its configuration */
	REVOCATION_SIGNER_COUNT
};

enum revocation_reason {
	REVOCATION_KEY_COMPROMISE,  /* the endpoint's or provider's key is compromised: at once */
	REVOCATION_RETIRED,         /* taken out of service for good */
	REVOCATION_SUPERSEDED,      /* replaced by another endpoint or service */
	REVOCATION_OPERATOR_ACTION, /* removed by an authority operator */
	REVOCATION_REASON_COUNT
};

struct revocation {
	char namespace_name[NAMESPACE_NAME_MAX + 1];
	uint8_t service_id[SERVICE_ID_SIZE];
	int has_endpoint; /* 1: one endpoint is revoked; 0: the whole service */
	uint8_t endpoint_id[ENDPOINT_ID_SIZE];
	enum revocation_signer signer;
	struct note_verifier key; /* the key that signs the note (Ed25519, ASCII name) */
	enum revocation_reason reason;
	uint64_t revoked_at;
	uint64_t sequence; /* >= 1 */
};

/* Text names ("provider", "operator"; "key-compromise", ...) and their inverse. *_name() returns
 * NULL for an out-of-range value; *_parse() returns 0 or DIRAUTH_ERR_SYNTAX. */
const char *revocation_signer_name(enum revocation_signer value);
int revocation_signer_parse(const char *text, size_t len, enum revocation_signer *out);
const char *revocation_reason_name(enum revocation_reason value);
int revocation_reason_parse(const char *text, size_t len, enum revocation_reason *out);

/* Appends the canonical text of r to out after checking every field (the key must read back as
 * itself from its verifier-key string). On error out is as it was. Returns 0,
 * DIRAUTH_ERR_SYNTAX or DIRAUTH_ERR_NOMEM. */
int revocation_encode(const struct revocation *r, struct buffer *out);

/* Parses revocation text (not a signed note). Accepts exactly what revocation_encode writes.
 * Returns 0, DIRAUTH_ERR_SYNTAX or DIRAUTH_ERR_BOUNDS (text over REVOCATION_MAX_BYTES, a line
 * over REVOCATION_LINE_MAX). On error *out is zeroed. */
int revocation_parse(const uint8_t *text, size_t len, struct revocation *out);

/* Parses a signed revocation note of at most REVOCATION_MAX_BYTES and checks its one signature
 * against the key of its own key line: note_parse, exactly one signature line (more:
 * DIRAUTH_ERR_SYNTAX), revocation_parse, then the signature (DIRAUTH_ERR_SIGNATURE when it names
 * the key and does not verify, DIRAUTH_ERR_UNKNOWN_KEY when it is by another key,
 * DIRAUTH_ERR_CRYPTO when the check could not run). It does not judge whether that key may revoke
 * the service. On success *note_out (may be NULL) gets the note, which the caller frees. Also
 * DIRAUTH_ERR_BOUNDS, DIRAUTH_ERR_NOMEM. */
int revocation_parse_signed(const uint8_t *buf, size_t len, struct revocation *out, struct note **note_out);

/* 1 when registration must be left out of any snapshot that lists r: r revokes its service (same
 * namespace and service id), or r revokes an endpoint the registration names, in whichever of the
 * namespace's services (an endpoint id belongs to one provider in a namespace: the authority
 * refuses another's use of it, so this catches only the revoked endpoint moved to another
 * service). Else 0. */
int revocation_excludes(const struct revocation *r, const struct registration *registration);

/* The endpoint ids that revocations name, as a sorted set: revocation_endpoints_sort sorts
 * count ids in place; revocation_endpoints_name_any says whether r lists an endpoint among them. */
void revocation_endpoints_sort(uint8_t (*ids)[ENDPOINT_ID_SIZE], size_t count);
int revocation_endpoints_name_any(const uint8_t (*ids)[ENDPOINT_ID_SIZE], size_t count,
                                  const struct registration *r);

/* A revocation's target as the revocation lines of a snapshot body and of a vote body write it:
 * "<service id: 64 hex> <endpoint id: 64 hex | ->", "-" for the whole service.
 * revocation_target_format writes it, NUL-terminated, into out (has_endpoint 0 or 1; endpoint_id
 * is read only when it is 1). revocation_target_read takes those two fields off *rest, as
 * text_next_field does; it returns 0, or DIRAUTH_ERR_SYNTAX when either field is not spelled so. */
#define REVOCATION_TARGET_TEXT_SIZE (2 * SERVICE_ID_SIZE + 1 + 2 * ENDPOINT_ID_SIZE + 1)
void revocation_target_format(const uint8_t *service_id, int has_endpoint, const uint8_t *endpoint_id,
                              char out[REVOCATION_TARGET_TEXT_SIZE]);
int revocation_target_read(struct text_span *rest, uint8_t *service_id, int *has_endpoint,
                           uint8_t *endpoint_id);

/* The order of targets in both bodies: by service id, the whole service before its endpoints,
 * then by endpoint id; negative, 0 or positive as memcmp. */
int revocation_target_compare(const uint8_t *service_a, int has_endpoint_a, const uint8_t *endpoint_a,
                              const uint8_t *service_b, int has_endpoint_b, const uint8_t *endpoint_b);

#endif
