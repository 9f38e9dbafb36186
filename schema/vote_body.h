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
 *
 * Consensus method 2 (consensus/consensus.md, "Method 2") adds two sections after the records,
 * in this order, each omitted when it has no items:
 *
 *   health <count>
 *   health <service id hex> <endpoint id hex> <issued-at> <sequence> <statement sha256 hex>
 *   ... sorted strictly ascending by (service id, endpoint id): one statement per endpoint
 *   revocations <count>
 *   revocation <service id hex> <endpoint id hex | -> <revocation sha256 hex>
 *   ... sorted strictly ascending by (service id, whole service before endpoints, endpoint id,
 *       digest)
 *
 * vote_body_parse() is the method-1 parser and refuses them; vote_body_parse_sections() reads
 * both. vote_body_encode() writes the sections a body has, so a body without them is the same
 * bytes as a method-1 body.
 */
#ifndef DIRAUTH_SCHEMA_VOTE_BODY_H
#define DIRAUTH_SCHEMA_VOTE_BODY_H

#include "base/buffer.h"
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

/* Method 2: the latest valid health statement the authority holds for one endpoint. */
struct vote_body_health {
	uint8_t service_id[SERVICE_ID_SIZE];
	uint8_t endpoint_id[ENDPOINT_ID_SIZE];
	uint64_t issued_at;
	uint64_t sequence;            /* >= 1 */
	uint8_t statement_sha256[32]; /* SHA-256 of the whole signed statement note */
};

/* Method 2: a revocation the authority holds. */
struct vote_body_revocation {
	uint8_t service_id[SERVICE_ID_SIZE];
	int has_endpoint; /* 0: the whole service ("-" on the line); 1: endpoint_id */
	uint8_t endpoint_id[ENDPOINT_ID_SIZE];
	uint8_t revocation_sha256[32]; /* SHA-256 of the whole signed revocation note */
};

struct vote_body {
	char namespace_name[NAMESPACE_NAME_MAX + 1];
	uint64_t epoch;
	char authority[NOTE_NAME_MAX + 1]; /* the voting authority's key name, as in its vote */
	size_t record_count;
	struct vote_body_record *records; /* sorted strictly ascending by service id */
	/* Method 2's sections; 0 and NULL in a method-1 body. Order as in the file comment. */
	size_t health_count;
	struct vote_body_health *health;
	size_t revocation_count;
	struct vote_body_revocation *revocations;
};

/* Longest method-2 section line without its '\n' (a health line is at most 243 bytes). */
#define VOTE_BODY_SECTION_LINE_MAX     256
/* Shortest and longest health and revocation lines with their '\n'. */
#define VOTE_BODY_HEALTH_MIN_BYTES     206
#define VOTE_BODY_HEALTH_MAX_BYTES     244
#define VOTE_BODY_REVOCATION_MIN_BYTES 143
#define VOTE_BODY_REVOCATION_MAX_BYTES 206
/* The two method-2 count lines together, at their longest, with their newlines. */
#define VOTE_BODY_SECTIONS_COUNT_BYTES 61

/* The bounds of a body with method-2 sections: records as max_records of vote_body_parse, and at
 * most max_health health lines and max_revocations revocation lines. */
struct vote_body_limits {
	size_t max_records;
	size_t max_health;
	size_t max_revocations;
};

/* The order of the health section (service id, then endpoint id) and of the revocation section
 * (service id, the whole service before its endpoints, endpoint id, digest), for callers that
 * build sections: negative, 0 or positive like memcmp. Never fail. */
int vote_body_health_compare(const struct vote_body_health *a, const struct vote_body_health *b);
int vote_body_revocation_compare(const struct vote_body_revocation *a, const struct vote_body_revocation *b);

/* 1 when a and b are the same version of the same service (service id, sequence, registration
 * digest), else 0. Never fails. */
int vote_body_record_same(const struct vote_body_record *a, const struct vote_body_record *b);

/* The largest body holding max_records records: VOTE_BODY_PREAMBLE_MAX_BYTES +
 * max_records * VOTE_BODY_RECORD_MAX_BYTES, or SIZE_MAX when that overflows. Never fails. */
size_t vote_body_max_bytes(size_t max_records);

/* Appends the canonical text of body (whose records array the caller owns and may have built by
 * hand) to out, after checking every field: namespace and authority names, sequences ≥ 1, records
 * sorted strictly by service id; and the method-2 sections the body has (health and revocation
 * items sorted strictly as the file comment says, sequences ≥ 1), each written only when it has
 * items. On error out is as it was. Returns 0, DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_BOUNDS or
 * DIRAUTH_ERR_NOMEM. */
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

/* The largest body within limits: vote_body_max_bytes(max_records), the two count lines and
 * the longest health and revocation lines; SIZE_MAX when that overflows. Never fails. */
size_t vote_body_sections_max_bytes(const struct vote_body_limits *limits);

/* Parses a vote body that may carry method 2's sections (health, then revocations, each present
 * only with at least one item), within limits. Accepts exactly the bytes vote_body_encode()
 * writes; a method-1 body parses as with vote_body_parse(), with no sections. Refuses before
 * allocating: an input longer than vote_body_sections_max_bytes(limits), a count above its bound
 * (DIRAUTH_ERR_BOUNDS), a count the remaining bytes cannot hold, a section with count 0, sections
 * out of order or repeated, and an unknown section (DIRAUTH_ERR_SYNTAX). Items out of order or
 * repeated, sequence 0, and any spelling but the canonical one are DIRAUTH_ERR_SYNTAX; a line
 * longer than its bound is DIRAUTH_ERR_BOUNDS. On success *out is a new body (vote_body_free);
 * on error NULL. Also DIRAUTH_ERR_NOMEM. */
int vote_body_parse_sections(const uint8_t *buf, size_t len, const struct vote_body_limits *limits,
                             struct vote_body **out);

/* Frees a body returned by vote_body_parse or vote_body_parse_sections, with its records and
 * sections. Accepts NULL. */
void vote_body_free(struct vote_body *body);

#endif
