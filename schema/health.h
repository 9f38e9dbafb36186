/*
 * health.h: a health statement: the signed, coarse word on one endpoint's state.
 *
 * The text of a health statement note (grammar, bounds and examples in schema/health.md):
 *
 *   dirauth health v1
 *   namespace <namespace name>
 *   service <service id: 64 lower-case hex>
 *   endpoint <endpoint id: 64 lower-case hex>
 *   signer <provider | endpoint>
 *   class <healthy | degraded | draining | unavailable>
 *   capacity <low | medium | high>        (optional)
 *   issued-at <unix seconds>
 *   sequence <decimal, >= 1>
 *
 * The note carries exactly one signature: by the service's provider key (signer provider) or by
 * the endpoint's own key named in the registration's endpoint-key line (signer endpoint: the
 * endpoint's liveness attestation). Both keys live in the registration, so a statement is checked
 * against the registration it speaks about: health_verify_note().
 *
 * Coarse by construction: every field but issued-at and sequence is a word from a fixed table, and
 * an unknown line is refused, so no exact load, latency or utilisation figure can be written in a
 * statement that parses (hard rule 6). "unknown" is not a class a statement can state: it is what
 * a snapshot publishes when no fresh statement is chosen, and a client treats it as unavailable.
 */
#ifndef DIRAUTH_SCHEMA_HEALTH_H
#define DIRAUTH_SCHEMA_HEALTH_H

#include "base/buffer.h"
#include "schema/note.h"
#include "schema/registration.h"

#include <stddef.h>
#include <stdint.h>

/* The whole signed note, text and its one signature line, at most. */
#define HEALTH_MAX_BYTES 1024
/* Each text line at most, without its newline (the longest is an id line, 73 bytes). */
#define HEALTH_LINE_MAX  128

enum health_class {
	HEALTH_HEALTHY,     /* select normally */
	HEALTH_DEGRADED,    /* select with caution */
	HEALTH_DRAINING,    /* no new sessions */
	HEALTH_UNAVAILABLE, /* do not select */
	HEALTH_CLASS_COUNT
};

enum health_signer {
	HEALTH_SIGNER_PROVIDER, /* the registration's provider key */
	HEALTH_SIGNER_ENDPOINT, /* the endpoint's own key (its endpoint-key line) */
	HEALTH_SIGNER_COUNT
};

struct health_statement {
	char namespace_name[NAMESPACE_NAME_MAX + 1];
	uint8_t service_id[SERVICE_ID_SIZE];
	uint8_t endpoint_id[ENDPOINT_ID_SIZE];
	enum health_signer signer;
	enum health_class health_class;
	int has_capacity;             /* 1 when the capacity line is present */
	enum capacity_class capacity; /* the capacity class offered now, when has_capacity */
	uint64_t issued_at;
	uint64_t sequence; /* >= 1; grows from one statement on the endpoint to the next */
};

/* Text names ("healthy", ..., "provider", "endpoint") and their inverse. *_name() returns NULL
 * for an out-of-range value; *_parse() returns 0 or DIRAUTH_ERR_SYNTAX. */
const char *health_class_name(enum health_class value);
int health_class_parse(const char *text, size_t len, enum health_class *out);
const char *health_signer_name(enum health_signer value);
int health_signer_parse(const char *text, size_t len, enum health_signer *out);

/* Appends the canonical text of s to out after checking every field. On error out is as it was.
 * Returns 0, DIRAUTH_ERR_SYNTAX or DIRAUTH_ERR_NOMEM. */
int health_encode(const struct health_statement *s, struct buffer *out);

/* Parses statement text (not a signed note). Accepts exactly what health_encode writes. Returns
 * 0, DIRAUTH_ERR_SYNTAX (also any line the grammar does not have, such as a figure) or
 * DIRAUTH_ERR_BOUNDS (text over HEALTH_MAX_BYTES, a line over HEALTH_LINE_MAX). On error *out is
 * zeroed. */
int health_parse(const uint8_t *text, size_t len, struct health_statement *out);

/* Parses a signed statement note of at most HEALTH_MAX_BYTES: note_parse, exactly one signature
 * line (more: DIRAUTH_ERR_SYNTAX, so that a statement has one byte string whoever relays it) and
 * health_parse. The signature is not checked. On success *note_out gets the note, which the
 * caller frees with note_free. Returns 0, DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_BOUNDS or
 * DIRAUTH_ERR_NOMEM; on error *note_out is NULL and *out zeroed. */
int health_parse_note(const uint8_t *buf, size_t len, struct health_statement *out, struct note **note_out);

/* The key that must have signed s, from the registration r it speaks about. Returns 0 with *out
 * set; DIRAUTH_ERR_MISMATCH when r is for another namespace or service; DIRAUTH_ERR_NOT_FOUND
 * when r does not list s's endpoint; DIRAUTH_ERR_UNKNOWN_KEY when s says signer endpoint and the
 * endpoint's descriptor names no key. */
int health_signer_key(const struct health_statement *s, const struct registration *r,
                      struct note_verifier *out);

/* Checks that note (parsed with health_parse_note into s) is signed by the key health_signer_key
 * gives. Returns 0; health_signer_key's errors; DIRAUTH_ERR_SIGNATURE when the signature names
 * that key and does not verify; DIRAUTH_ERR_UNKNOWN_KEY when it is by any other key;
 * DIRAUTH_ERR_CRYPTO when the check could not run. */
int health_verify_note(const struct note *note, const struct health_statement *s,
                       const struct registration *r);

/* health_parse_note, then health_verify_note against r. On success *note_out (may be NULL) gets
 * the note. Returns their errors. */
int health_parse_signed(const uint8_t *buf, size_t len, const struct registration *r,
                        struct health_statement *out, struct note **note_out);

/* A statement as a vote or the store lists it: parsed (health_parse_note), its endpoint,
 * issued-at and sequence those the listing gives, then checked against r (health_verify_note);
 * the signature is verified only once the fields agree. Returns 0 with *out filled,
 * health_parse_signed's errors, or DIRAUTH_ERR_MISMATCH; *out is zeroed on error. */
int health_parse_listed(const uint8_t *buf, size_t len, const struct registration *r,
                        const uint8_t endpoint_id[ENDPOINT_ID_SIZE], uint64_t issued_at, uint64_t sequence,
                        struct health_statement *out);

/* 1 when a statement issued at issued_at is past its freshness at valid_after (issued_at +
 * freshness_seconds <= valid_after, without overflow): a snapshot then shows its endpoint's
 * health as unknown. Else 0. */
int health_is_stale(uint64_t issued_at, uint64_t freshness_seconds, uint64_t valid_after);

#endif
