/*
 * snapshot.h: the snapshot of one namespace for one epoch: a signed header and a body.
 *
 * Header text (schema/snapshot.md has the grammar, bounds and an example):
 *
 *   dirauth snapshot v1
 *   namespace <namespace name>
 *   origin <log origin of the namespace>
 *   epoch <decimal>
 *   valid-after <unix seconds>
 *   fresh-until <unix seconds>
 *   valid-until <unix seconds>
 *   records <count>
 *   records-root <Merkle root hex over the records>
 *   body-size <bytes of the uncompressed body>
 *   body-sha256 <hex>
 *   previous <SHA-256 hex of the previous header text, 64 zeros for the first>
 *   consensus-method <decimal>
 *
 * valid-after < fresh-until ≤ valid-until. The header text (without signature lines) is also
 * the transparency log's leaf for this snapshot.
 *
 * Body: the records sorted by service id, each the provider's signed registration note as it
 * was accepted, length-framed because notes span lines:
 *
 *   dirauth snapshot-body v1
 *   namespace <namespace name>
 *   epoch <decimal>
 *   records <count>
 *   record <service id hex> <byte length>
 *   <that many bytes: the signed registration note>
 *   record ...
 *
 * Record i's Merkle leaf is its registration note bytes.
 *
 * A snapshot of consensus method 2 (consensus/consensus.md, "Method 2") has two more sections
 * after the records, in this order, each omitted when empty (so a method-2 body without them is a
 * method-1 body):
 *
 *   health <count>
 *   health <service id hex> <endpoint id hex> <class> <provider | endpoint> <byte length>
 *   <that many bytes: the signed health statement note the class traces to>
 *   ... sorted strictly by (service id, endpoint id); an endpoint of a record without an entry
 *       is "unknown", which a client treats as unavailable
 *   revocations <count>
 *   revocation <service id hex> <endpoint id hex | -> <since epoch> <byte length>
 *   <that many bytes: the signed revocation note>
 *   ... sorted strictly by (service id, whole service before endpoints, endpoint id)
 *
 * snapshot_body_parse() and snapshot_body_verify() are method 1's and refuse these sections;
 * snapshot_body_parse_sections() and snapshot_body_verify_sections() read both methods.
 */
#ifndef DIRAUTH_SCHEMA_SNAPSHOT_H
#define DIRAUTH_SCHEMA_SNAPSHOT_H

#include "base/buffer.h"
#include "schema/health.h"
#include "crypto/merkle.h"
#include "schema/note.h"
#include "schema/registration.h"
#include "schema/revocation.h"

#include <stddef.h>
#include <stdint.h>

#define SNAPSHOT_HEADER_MAX_BYTES     4096
#define SNAPSHOT_ORIGIN_MAX           255
#define SNAPSHOT_CONSENSUS_METHOD     1
/* The highest consensus method whose body this code reads (snapshot_body_verify_sections):
 * 1, registrations; 2, registrations, health and revocations. A header naming a higher method
 * describes a body nobody here can judge. */
#define SNAPSHOT_CONSENSUS_METHOD_MAX 2
/* Health older than this many epochs at a snapshot's valid-after is published as unknown
 * (consensus method 2); a verifier judges a method-2 body with it. */
#define SNAPSHOT_HEALTH_FRESH_EPOCHS  2

struct snapshot_header {
	char namespace_name[NAMESPACE_NAME_MAX + 1];
	char origin[SNAPSHOT_ORIGIN_MAX + 1]; /* printable ASCII, no spaces or '+' */
	uint64_t epoch;
	uint64_t valid_after;
	uint64_t fresh_until;
	uint64_t valid_until;
	uint64_t record_count;
	uint8_t records_root[32];
	uint64_t body_size;
	uint8_t body_sha256[32];
	uint8_t previous[32];
	uint64_t consensus_method;
};

/* A record as it goes into or comes out of a body: borrowed bytes. */
struct snapshot_record {
	uint8_t service_id[SERVICE_ID_SIZE];
	const uint8_t *note;
	size_t note_len;
};

/* Method 2: the published health of one endpoint, with the statement it traces to. */
struct snapshot_health {
	uint8_t service_id[SERVICE_ID_SIZE];
	uint8_t endpoint_id[ENDPOINT_ID_SIZE];
	enum health_class health_class; /* the statement's class */
	enum health_signer signer;      /* the statement's signer: provider or endpoint key */
	const uint8_t *note;            /* the signed statement note; borrowed */
	size_t note_len;
};

/* Method 2: a listed revocation. */
struct snapshot_revocation {
	uint8_t service_id[SERVICE_ID_SIZE];
	int has_endpoint; /* 0: the whole service ("-" on the line); 1: endpoint_id */
	uint8_t endpoint_id[ENDPOINT_ID_SIZE];
	uint64_t since;      /* the epoch of the first snapshot that listed it */
	const uint8_t *note; /* the signed revocation note; borrowed */
	size_t note_len;
};

struct snapshot_body {
	char namespace_name[NAMESPACE_NAME_MAX + 1];
	uint64_t epoch;
	size_t record_count;
	struct snapshot_record *records; /* owned array; note pointers borrow from the parsed buffer */
	/* Method 2's sections (snapshot_body_parse_sections); 0 and NULL otherwise. Owned arrays whose
	 * note pointers borrow from the parsed buffer. */
	size_t health_count;
	struct snapshot_health *health;
	size_t revocation_count;
	struct snapshot_revocation *revocations;
};

/* Method 2's sections, as they go into a body: the caller's arrays, sorted as the file comment
 * says, each entry's note borrowed. */
struct snapshot_sections {
	const struct snapshot_health *health;
	size_t health_count;
	const struct snapshot_revocation *revocations;
	size_t revocation_count;
};

/* The bounds of a body with method-2 sections: at most max_records records (as for
 * snapshot_body_parse), max_health health entries and max_revocations revocation entries. */
struct snapshot_body_limits {
	size_t max_records;
	size_t max_health;
	size_t max_revocations;
};

/* Longest method-2 section line without its '\n' (a revocation line is at most 166 bytes). */
#define SNAPSHOT_SECTION_LINE_MAX 256

/* The most bytes a method-2 section takes in a body: its count line, and each entry's line and
 * note. So a health section takes at most SNAPSHOT_SECTION_COUNT_MAX plus one
 * SNAPSHOT_HEALTH_ENTRY_MAX per endpoint of the body's records, and a revocation section at most
 * SNAPSHOT_SECTION_COUNT_MAX plus one SNAPSHOT_REVOCATION_ENTRY_MAX per listed revocation. */
#define SNAPSHOT_SECTION_COUNT_MAX    (SNAPSHOT_SECTION_LINE_MAX + 1)
#define SNAPSHOT_HEALTH_ENTRY_MAX     (SNAPSHOT_SECTION_LINE_MAX + 1 + HEALTH_MAX_BYTES)
#define SNAPSHOT_REVOCATION_ENTRY_MAX (SNAPSHOT_SECTION_LINE_MAX + 1 + REVOCATION_MAX_BYTES)

int snapshot_header_encode(const struct snapshot_header *h, struct buffer *out);
/* Refuses non-canonical text. Returns 0, DIRAUTH_ERR_SYNTAX or DIRAUTH_ERR_BOUNDS. */
int snapshot_header_parse(const uint8_t *text, size_t len, struct snapshot_header *out);

/* Appends the body for records (already sorted by service id, unique). Returns 0,
 * DIRAUTH_ERR_SYNTAX (unsorted, duplicate), DIRAUTH_ERR_BOUNDS or DIRAUTH_ERR_NOMEM. */
int snapshot_body_encode(const char *namespace_name, uint64_t epoch, const struct snapshot_record *records,
                         size_t record_count, struct buffer *out);

/* The two pieces snapshot_body_encode is made of, for a body written as it is built: the head
 * (the first four lines, for record_count records) and a record's line (which its note of
 * note_len bytes follows). Return 0, DIRAUTH_ERR_SYNTAX (a bad namespace), DIRAUTH_ERR_BOUNDS (a
 * note over REGISTRATION_MAX_BYTES) or DIRAUTH_ERR_NOMEM. */
int snapshot_body_encode_head(const char *namespace_name, uint64_t epoch, uint64_t record_count,
                              struct buffer *out);
int snapshot_body_encode_record_line(const uint8_t service_id[SERVICE_ID_SIZE], size_t note_len,
                                     struct buffer *out);

/* Parses a body held in buf (which must outlive *out's note pointers), reading at most
 * max_records records and refusing any record note longer than REGISTRATION_MAX_BYTES.
 * Returns 0 (free with snapshot_body_free), DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_BOUNDS or
 * DIRAUTH_ERR_NOMEM. */
int snapshot_body_parse(const uint8_t *buf, size_t len, size_t max_records, struct snapshot_body **out);
void snapshot_body_free(struct snapshot_body *body);

/* snapshot_body_encode, then method 2's sections (each only when it has entries): health entries
 * sorted strictly by (service id, endpoint id), notes of 1..HEALTH_MAX_BYTES, classes and signers
 * in range; revocation entries sorted strictly by (service id, whole service first, endpoint id),
 * notes of 1..REVOCATION_MAX_BYTES. It does not check that entries match their notes or the
 * records: snapshot_body_verify_sections does. sections may be NULL (no sections). On error out
 * is as it was. Returns 0, DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_BOUNDS or DIRAUTH_ERR_NOMEM. */
int snapshot_body_encode_sections(const char *namespace_name, uint64_t epoch,
                                  const struct snapshot_record *records, size_t record_count,
                                  const struct snapshot_sections *sections, struct buffer *out);

/* The pieces of method 2's sections, for a body written as it is built (as
 * snapshot_body_encode_record_line for the records): a section's count line ("health <count>" or
 * "revocations <count>", keyword one of the two, count >= 1), and an entry's line, which its note
 * of note_len bytes follows (the entry's note pointer is not read). snapshot_body_encode_sections
 * is made of them. Return 0, DIRAUTH_ERR_SYNTAX (an unknown keyword, a count of 0, a class,
 * signer or has_endpoint out of range, a note length of 0), DIRAUTH_ERR_BOUNDS (a note length over
 * its document's bound) or DIRAUTH_ERR_NOMEM. */
int snapshot_body_encode_section_count(const char *keyword, uint64_t count, struct buffer *out);
int snapshot_body_encode_health_line(const struct snapshot_health *entry, struct buffer *out);
int snapshot_body_encode_revocation_line(const struct snapshot_revocation *entry, struct buffer *out);

/* The order of the health section: by service id, then endpoint id. Returns <0, 0 or >0. */
int snapshot_health_order(const struct snapshot_health *a, const struct snapshot_health *b);

/* The readers of one body entry, its line and the note that follows, that the body parsers are
 * made of, for another document that carries entries spelled as a body does (snapshot_diff.h):
 * "record <service id> <length>", "health <service id> <endpoint id> <class> <signer> <length>",
 * "revocation <service id> <endpoint id | -> <since> <length>". The entry's note points into the
 * reader's buffer. Each line is bounded by the reader's max_line_length. Return 0, the line
 * reader's errors, DIRAUTH_ERR_SYNTAX (not the grammar, a length of 0 or past the end),
 * DIRAUTH_ERR_BOUNDS (a note over its document's bound). */
struct line_reader;
int snapshot_body_read_record(struct line_reader *reader, struct snapshot_record *record);
int snapshot_body_read_health(struct line_reader *reader, struct snapshot_health *entry);
int snapshot_body_read_revocation(struct line_reader *reader, struct snapshot_revocation *entry);

/* The order of the revocation section: by service id, a whole service before its endpoints, then
 * by endpoint id. Returns <0, 0 (the same target) or >0, as memcmp. */
int snapshot_revocation_order(const struct snapshot_revocation *a, const struct snapshot_revocation *b);

/* The body's health and revocation sections as lines_read_optional_section (lines.h) reads them:
 * each entry by the readers above, in the orders above, with the least bytes an entry takes; for
 * another document that carries them as a body does (record_shard.h). */
struct lines_section;
extern const struct lines_section snapshot_health_section;
extern const struct lines_section snapshot_revocation_section;

/* The entry's note is a revocation signed by the key of its own key line (revocation.h,
 * revocation_parse_signed), for namespace_name and exactly the entry's target. Returns 0,
 * revocation_parse_signed's errors, or DIRAUTH_ERR_MISMATCH. */
int snapshot_revocation_note_check(const struct snapshot_revocation *entry, const char *namespace_name);

/* Parses a body that may carry method 2's sections, within limits. A method-1 body parses as
 * with snapshot_body_parse. Refuses a count above its bound (DIRAUTH_ERR_BOUNDS) or one the
 * remaining bytes cannot hold, a section with count 0, sections out of order, repeated or
 * unknown, entries unsorted or repeated, a note length out of range (0, or past the end:
 * DIRAUTH_ERR_SYNTAX; over the document's bound: DIRAUTH_ERR_BOUNDS), and anything after the last
 * section. buf must outlive *out's note pointers. Returns 0 (free with snapshot_body_free),
 * DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_BOUNDS or DIRAUTH_ERR_NOMEM. */
int snapshot_body_parse_sections(const uint8_t *buf, size_t len, const struct snapshot_body_limits *limits,
                                 struct snapshot_body **out);

/* Checks a body against its header whatever the header's consensus-method: method 1 exactly as
 * snapshot_body_verify (under limits->max_records; a section is refused); method 2 as
 * snapshot_body_verify for the records, and then every section entry:
 *   health: the entry's service is a record of this body whose registration lists the endpoint
 *     (DIRAUTH_ERR_MISMATCH); the note is a statement for this namespace, service and endpoint,
 *     signed by the key its signer line names in that registration (health_parse_signed's
 *     errors); the entry's class and signer are the statement's (DIRAUTH_ERR_MISMATCH); the
 *     statement is fresh: issued-at + freshness_seconds > the header's valid-after
 *     (DIRAUTH_ERR_STALE);
 *   revocation: the note is a revocation signed by the key of its own key line
 *     (revocation_parse_signed's errors), for this namespace and the entry's target, listed since
 *     an epoch no later than the header's (DIRAUTH_ERR_MISMATCH); and no record of the body is
 *     excluded by it (revocation_excludes: DIRAUTH_ERR_MISMATCH): revocation overrides cache.
 * Whether a revocation's key may revoke the service is not checked (the authorities judged it; a
 * client holding the revoked registration can compare a provider key with its provider line).
 * Any other consensus-method is DIRAUTH_ERR_SYNTAX: its body cannot be read. freshness_seconds
 * must be at least 1 (DIRAUTH_ERR_CONFIG); 2 epochs by default. Also DIRAUTH_ERR_NOMEM,
 * DIRAUTH_ERR_CRYPTO, and snapshot_body_verify's errors. */
int snapshot_body_verify_sections(const struct snapshot_header *header, const uint8_t *body, size_t body_len,
                                  const struct snapshot_body_limits *limits, uint64_t freshness_seconds);

/* Merkle root over the records' notes. Returns 0, DIRAUTH_ERR_NOMEM or DIRAUTH_ERR_CRYPTO. */
int snapshot_records_root(const struct snapshot_record *records, size_t record_count, merkle_hash out);

/* Checks a body against its header: namespace, epoch, count, size, digest, root; and every
 * record: its note parses as a registration signed by its own provider key, for this namespace
 * and this service id, and has not expired at the header's valid-after (expires > valid-after). Returns 0,
 * DIRAUTH_ERR_MISMATCH, DIRAUTH_ERR_SIGNATURE, DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_STALE, ... */
int snapshot_body_verify(const struct snapshot_header *header, const uint8_t *body, size_t body_len,
                         size_t max_records);

/* SHA-256 of header text, as used in the next header's previous line. */
int snapshot_header_digest(const uint8_t *text, size_t len, uint8_t out[32]);

#endif
