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
 */
#ifndef DIRAUTH_SCHEMA_SNAPSHOT_H
#define DIRAUTH_SCHEMA_SNAPSHOT_H

#include "schema/buffer.h"
#include "schema/merkle.h"
#include "schema/note.h"
#include "schema/registration.h"

#include <stddef.h>
#include <stdint.h>

#define SNAPSHOT_HEADER_MAX_BYTES 4096
#define SNAPSHOT_ORIGIN_MAX       255
#define SNAPSHOT_CONSENSUS_METHOD 1

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

struct snapshot_body {
	char namespace_name[NAMESPACE_NAME_MAX + 1];
	uint64_t epoch;
	size_t record_count;
	struct snapshot_record *records; /* owned array; note pointers borrow from the parsed buffer */
};

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
