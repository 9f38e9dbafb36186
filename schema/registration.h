/*
 * registration.h: the provider-signed registration of one service and its endpoints.
 *
 * The text of a registration note (the grammar, bounds and an example are in
 * schema/registration.md):
 *
 *   dirauth registration v1
 *   namespace <namespace name>
 *   service <service id: 64 lower-case hex>
 *   class <service class>
 *   provider <provider verifier key: name+keyid+base64>
 *   sequence <decimal, ≥ 1>
 *   issued-at <unix seconds>
 *   expires <unix seconds, > issued-at>
 *   endpoint <endpoint id hex> <transport> <address> <region> <capacity> <profile>
 *   ... one line per endpoint, 1..REGISTRATION_MAX_ENDPOINTS, sorted by endpoint id, unique
 *   endpoint-key <endpoint id hex> <the endpoint's own verifier key>
 *   ... optional: at most one per endpoint, after the endpoint lines, sorted by endpoint id
 *
 * An endpoint-key line names the key the endpoint itself signs its health statements with (its
 * liveness attestation, schema/health.md). A registration without endpoint-key lines is the same
 * bytes as before the line existed; a parser older than the line refuses one that has it.
 *
 * The provider line carries the provider's own verifier key, so that anyone holding a snapshot
 * can check each record's signature without asking an authority; the authorities only admit
 * keys they enrolled. No field names or describes an end user.
 *
 * registration_parse() reads the text only (not the signatures; see note.h) and refuses any
 * text that registration_encode() would not produce byte for byte.
 */
#ifndef DIRAUTH_SCHEMA_REGISTRATION_H
#define DIRAUTH_SCHEMA_REGISTRATION_H

#include "base/buffer.h"
#include "schema/note.h"

#include <stddef.h>
#include <stdint.h>

#define REGISTRATION_MAX_ENDPOINTS 256 /* hard cap of the grammar; config lowers it (default 32) */
#define REGISTRATION_MAX_BYTES     (64 * 1024)
#define REGISTRATION_LINE_MAX      512
#define NAMESPACE_NAME_MAX         63
#define SERVICE_ID_SIZE            32
#define ENDPOINT_ID_SIZE           32
#define ENDPOINT_ADDRESS_MAX       255
#define REGION_MAX                 32

enum service_class {
	SERVICE_CLASS_MIX_GATEWAY,
	SERVICE_CLASS_MAILBOX_PROVIDER,
	SERVICE_CLASS_REALTIME_RELAY,
	SERVICE_CLASS_BULK_TRANSFER,
	SERVICE_CLASS_BRIDGE,
	SERVICE_CLASS_DIRECTORY_MIRROR,
	SERVICE_CLASS_FEDERATION_GATEWAY,
	SERVICE_CLASS_CONTROL_PLANE,
	SERVICE_CLASS_COUNT
};

enum transport {
	TRANSPORT_QUIC,   /* address: host:port */
	TRANSPORT_TLS,    /* address: host:port */
	TRANSPORT_ONION,  /* address: opaque route descriptor, [A-Za-z0-9_-] */
	TRANSPORT_BRIDGE, /* address: opaque bridge descriptor, [A-Za-z0-9_-] */
	TRANSPORT_COUNT
};

enum capacity_class { CAPACITY_LOW, CAPACITY_MEDIUM, CAPACITY_HIGH, CAPACITY_COUNT };

enum capability_profile {
	PROFILE_BASELINE,
	PROFILE_MODERN,
	PROFILE_HYBRID_CRYPTO,
	PROFILE_HIGH_CAPACITY,
	PROFILE_COUNT
};

struct endpoint_descriptor {
	uint8_t endpoint_id[ENDPOINT_ID_SIZE];
	enum transport transport;
	char address[ENDPOINT_ADDRESS_MAX + 1];
	char region[REGION_MAX + 1]; /* coarse region: a name ([a-z0-9-]) */
	enum capacity_class capacity;
	enum capability_profile profile;
	int has_key;              /* 1 when an endpoint-key line names the endpoint's own key */
	struct note_verifier key; /* that key (Ed25519, ASCII name), when has_key */
};

struct registration {
	char namespace_name[NAMESPACE_NAME_MAX + 1];
	uint8_t service_id[SERVICE_ID_SIZE];
	enum service_class service_class;
	struct note_verifier provider;
	uint64_t sequence;
	uint64_t issued_at;
	uint64_t expires;
	size_t endpoint_count;
	struct endpoint_descriptor *endpoints; /* owned; freed by registration_clear() */
};

/* Text names of the enums ("mix-gateway", "quic", "low", "baseline", ...), and their inverse.
 * *_name() returns NULL for an out-of-range value; *_parse() returns 0 or DIRAUTH_ERR_SYNTAX. */
const char *service_class_name(enum service_class value);
int service_class_parse(const char *text, size_t len, enum service_class *out);
const char *transport_name(enum transport value);
int transport_parse(const char *text, size_t len, enum transport *out);
const char *capacity_class_name(enum capacity_class value);
int capacity_class_parse(const char *text, size_t len, enum capacity_class *out);
const char *capability_profile_name(enum capability_profile value);
int capability_profile_parse(const char *text, size_t len, enum capability_profile *out);

/* Checks an endpoint address for its transport (host:port with a port 1..65535 for quic/tls;
 * an opaque descriptor otherwise). Returns 0 or DIRAUTH_ERR_SYNTAX. */
int endpoint_address_check(enum transport transport, const char *address);

/* Parses registration text (not a signed note: the text part only). Returns 0 (caller calls
 * registration_clear), DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_BOUNDS or DIRAUTH_ERR_NOMEM. On error
 * *out is left cleared. */
int registration_parse(const uint8_t *text, size_t len, struct registration *out);

/* Appends the canonical text of r to out, after checking every field (names, sorting and
 * uniqueness of endpoints, bounds, expires > issued-at, sequence ≥ 1). Returns 0,
 * DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_BOUNDS or DIRAUTH_ERR_NOMEM. */
int registration_encode(const struct registration *r, struct buffer *out);

/* The descriptor of endpoint_id in r, or NULL when r does not list it. Never fails. */
const struct endpoint_descriptor *registration_find_endpoint(const struct registration *r,
                                                             const uint8_t endpoint_id[ENDPOINT_ID_SIZE]);

/* Sorts r's endpoints by ascending endpoint id, the order the grammar requires. Never fails. */
void registration_sort_endpoints(struct registration *r);

/* Frees the endpoints and zeroes r. Accepts NULL. */
void registration_clear(struct registration *r);

/* Parses a signed registration note and checks that it carries exactly one signature, a valid
 * one by the key named in its provider line (more signature lines: DIRAUTH_ERR_SYNTAX, so that
 * a record has one byte string whoever relays it). On success *note_out (may be NULL) gets the parsed note,
 * which the caller frees. Returns 0, DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_BOUNDS, DIRAUTH_ERR_SIGNATURE,
 * DIRAUTH_ERR_UNKNOWN_KEY (not signed by its provider), DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_CRYPTO. */
int registration_parse_signed(const uint8_t *buf, size_t len, struct registration *out,
                              struct note **note_out);

/* The two halves of registration_parse_signed, for a caller that judges other things between
 * them (the authority checks enrolment before the signature, so that an unknown key is
 * "unknown", not "bad signature"):
 *   registration_parse_note: note_parse, the one-signature rule and registration_parse, with
 *     the same errors (the signature is not checked); *note_out gets the note on success;
 *   registration_verify_note: the signature of note by r's provider key: 0,
 *     DIRAUTH_ERR_SIGNATURE, DIRAUTH_ERR_UNKNOWN_KEY, DIRAUTH_ERR_CRYPTO. */
int registration_parse_note(const uint8_t *buf, size_t len, struct registration *out, struct note **note_out);
int registration_verify_note(const struct note *note, const struct registration *r);

/* The sequence of a registration note read from its first six lines alone (the preamble,
 * namespace, service, class and provider lines are checked by keyword only): what a reader of
 * many notes it already trusts (a published snapshot's records) needs without parsing each
 * whole. Returns 0; DIRAUTH_ERR_SYNTAX or DIRAUTH_ERR_BOUNDS when those lines are not a
 * registration's. */
int registration_note_sequence(const uint8_t *note, size_t len, uint64_t *sequence);

#endif
