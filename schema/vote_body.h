/*
 * vote_body.h: the body of an authority's vote: per service, the registration version the
 * authority holds, which the consensus rule (consensus/consensus.h) merges across votes.
 *
 * The vote text (schema/vote.h) is small and signed; its body-sha256 line commits to these
 * bytes. Grammar, bounds and an example are in schema/vote-body.md:
 *
 *   dirauth vote-body v1
 *   namespace <namespace name>
 *   epoch <decimal>
 *   authority <authority name>
 *   records <count>
 *   record <service id hex> <sequence> <registration sha256 hex>
 *   ... count record lines, sorted strictly ascending by service id
 *
 * The body is a preamble and then sections, each a "<keyword> <count>" line and count item
 * lines. This codec knows one section, "records", which every body has; later consensus methods
 * add sections after it (health, revocations, deregistrations), and a parser that does not
 * know them refuses a body that carries them. A record's digest is the SHA-256 of the whole
 * signed registration note (text and its one signature line): the bytes a snapshot body holds.
 */
#ifndef DIRAUTH_SCHEMA_VOTE_BODY_H
#define DIRAUTH_SCHEMA_VOTE_BODY_H

#include "schema/buffer.h"
#include "schema/note.h"
#include "schema/registration.h"

#include <stddef.h>
#include <stdint.h>

/* Longest body line without its '\n' (the longest is a record line of 157 bytes). */
#define VOTE_BODY_LINE_MAX           160
/* Shortest and longest record line with its '\n' ("record " 64 hex, sequence 1..20 digits,
 * 64 hex). */
#define VOTE_BODY_RECORD_MIN_BYTES   139
#define VOTE_BODY_RECORD_MAX_BYTES   158
/* Longest preamble and records count line together, with their newlines. */
#define VOTE_BODY_PREAMBLE_MAX_BYTES 290

/* What the authority holds for one service. */
struct vote_body_record {
	uint8_t service_id[SERVICE_ID_SIZE];
	uint64_t sequence;               /* ≥ 1 */
	uint8_t registration_sha256[32]; /* SHA-256 of the signed registration note */
};

struct vote_body {
	char namespace_name[NAMESPACE_NAME_MAX + 1];
	uint64_t epoch;
	char authority[NOTE_NAME_MAX + 1]; /* the voting authority's key name, as in its vote */
	size_t record_count;
	struct vote_body_record *records; /* sorted strictly ascending by service id */
};

/* The largest body holding max_records records: VOTE_BODY_PREAMBLE_MAX_BYTES +
 * max_records * VOTE_BODY_RECORD_MAX_BYTES, or SIZE_MAX when that overflows. Never fails. */
size_t vote_body_max_bytes(size_t max_records);

/* Appends the canonical text of body (whose records array the caller owns and may have built by
 * hand) to out, after checking every field: namespace and authority names, sequences ≥ 1, records
 * sorted strictly by service id. On error out is as it was. Returns 0, DIRAUTH_ERR_SYNTAX,
 * DIRAUTH_ERR_BOUNDS or DIRAUTH_ERR_NOMEM. */
int vote_body_encode(const struct vote_body *body, struct buffer *out);

/* Parses a vote body that carries at most max_records records (the namespace's records per
 * snapshot). Accepts exactly the bytes vote_body_encode() writes. Refuses, before allocating
 * anything for records: an input longer than vote_body_max_bytes(max_records) and a count above
 * max_records (DIRAUTH_ERR_BOUNDS), and a count that the remaining bytes cannot hold
 * (DIRAUTH_ERR_SYNTAX). Anything after the records section, including a section of a later
 * consensus method, is DIRAUTH_ERR_SYNTAX. On success *out is a new body (free it with
 * vote_body_free; nothing in it borrows from buf); on error *out is NULL. Returns 0,
 * DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_BOUNDS (also a line longer than VOTE_BODY_LINE_MAX) or
 * DIRAUTH_ERR_NOMEM. */
int vote_body_parse(const uint8_t *buf, size_t len, size_t max_records, struct vote_body **out);

/* Frees a body returned by vote_body_parse, with its records. Accepts NULL. */
void vote_body_free(struct vote_body *body);

#endif
