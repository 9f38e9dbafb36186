/*
 * record_shard.h: one slice of a snapshot's records with the range proof that ties it to the
 * header's records root (schema/record-shard.md has the grammar, the run's rule and the proof's
 * recursion).
 *
 * The service-id space is cut into 2^bits shards by the ids' first bits, bits a function of the
 * header's record count alone (record_shard_bits), so that whoever holds a verified header knows
 * which shard file holds a service or proves it absent. A shard carries the run of contiguous
 * leaves that covers its ids plus one neighbour on each side, the body's method-2 entries of its
 * ids, and the range proof of the run.
 *
 * Three parts: the names (bits, the shard of an id, the shard's name in a path); the codec
 * (record_shard_parse, record_shard_encode: parse accepts exactly what encode writes); the
 * range proof's arithmetic (record_shard_range_root: the root a run and a proof give); and a
 * builder of every shard of a body (record_shard_builder_*), which an authority and a mirror run
 * once per published body. Judging a shard against a header (the run brackets its shard, the
 * notes carry their ids, signatures) is verify/record_proof.h. Pure: no I/O.
 */
#ifndef DIRAUTH_SCHEMA_RECORD_SHARD_H
#define DIRAUTH_SCHEMA_RECORD_SHARD_H

#include "base/buffer.h"
#include "crypto/merkle.h"
#include "schema/snapshot.h"

#include <stddef.h>
#include <stdint.h>

#define RECORD_SHARD_TARGET    4                  /* records per shard the bits aim at, at most on average */
#define RECORD_SHARD_BITS_MAX  24                 /* at most 2^24 shards: 67,108,864 records */
#define RECORD_SHARD_NAME_MAX  6                  /* hex digits of a shard's name at bits 24 */
#define RECORD_SHARD_PROOF_MAX 128                /* node lines: two per level of a tree of 2^64 */
#define RECORD_SHARD_MAX_BYTES (16 * 1024 * 1024) /* the longest shard read or written */
#define RECORD_SHARD_RUN_MAX   4096               /* record lines in one shard */
#define RECORD_SHARD_LINE_MAX  256                /* any line of a shard without its '\n' */

/* The shard bits of a snapshot of record_count records: the smallest b with
 * record_count <= RECORD_SHARD_TARGET * 2^b. Returns 0, or DIRAUTH_ERR_BOUNDS past
 * RECORD_SHARD_BITS_MAX. */
int record_shard_bits(uint64_t record_count, unsigned *bits);

/* The shard (the first bits bits of the id, big-endian) of a service id. bits <= 24. */
uint32_t record_shard_of(const uint8_t service_id[SERVICE_ID_SIZE], unsigned bits);

/* The shard's name: lower-case hex, exactly max(1, ceil(bits / 4)) digits, NUL-terminated.
 * Returns 0, or DIRAUTH_ERR_BOUNDS (bits over the maximum, index not below 2^bits). */
int record_shard_name(uint32_t index, unsigned bits, char out[RECORD_SHARD_NAME_MAX + 1]);

/* The shard a name spells at bits: exactly the digits record_shard_name writes. Returns 0 or
 * DIRAUTH_ERR_SYNTAX (any other spelling, or an index not below 2^bits). */
int record_shard_name_parse(const char *name, size_t len, unsigned bits, uint32_t *index);

/* A parsed shard; its notes borrow from the parsed buffer, its arrays are owned
 * (record_shard_free). */
struct record_shard {
	char namespace_name[NAMESPACE_NAME_MAX + 1];
	uint64_t epoch;
	uint64_t record_count;
	uint8_t records_root[MERKLE_HASH_SIZE];
	unsigned bits;
	uint32_t index;
	uint64_t first;   /* the leaf index of records[0] */
	size_t run_count; /* record lines */
	struct snapshot_record *records;
	size_t health_count;
	struct snapshot_health *health;
	size_t revocation_count;
	struct snapshot_revocation *revocations;
	size_t proof_count;
	merkle_hash proof[RECORD_SHARD_PROOF_MAX];
};

/* Parses shard bytes (which must outlive *out's note pointers): the grammar and bounds of
 * record-shard.md, the records sorted strictly by id, the sections sorted as a body's, bits the
 * one of the records line, the name canonical, first + run count <= records. It does not compare
 * anything with a header or check the proof: verify/record_proof.h does. Returns 0 (free with
 * record_shard_free), DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_BOUNDS or DIRAUTH_ERR_NOMEM. */
int record_shard_parse(const uint8_t *buf, size_t len, struct record_shard **out);
void record_shard_free(struct record_shard *shard);

/* Appends the text of shard to out (the inverse of record_shard_parse). On error out is as it
 * was. Returns 0, DIRAUTH_ERR_SYNTAX (a field out of its grammar, records unsorted),
 * DIRAUTH_ERR_BOUNDS, DIRAUTH_ERR_NOMEM. */
int record_shard_encode(const struct record_shard *shard, struct buffer *out);

/* The root of a tree of tree_size leaves rebuilt from the leaf hashes of the run
 * [first, first + run_count) and a range proof (record-shard.md, "The range proof"); the run must
 * be inside the tree, and non-empty unless tree_size is 0 (then the root is SHA-256("") and the
 * proof empty). Returns 0; DIRAUTH_ERR_PROOF (a run outside the tree, too few or too many proof
 * hashes); DIRAUTH_ERR_CRYPTO. */
int record_shard_range_root(uint64_t tree_size, uint64_t first, const merkle_hash *run_leaves,
                            size_t run_count, const merkle_hash *proof, size_t proof_count, merkle_hash out);

/* The range proof of a parsed shard against root: the leaf hashes of its run and its proof give
 * root (record_shard_range_root). Returns 0, DIRAUTH_ERR_PROOF, DIRAUTH_ERR_NOMEM,
 * DIRAUTH_ERR_CRYPTO. */
int record_shard_check_proof(const struct record_shard *shard, const uint8_t root[MERKLE_HASH_SIZE]);

/* The builder of every shard of one body: parses the body (under limits, either method), hashes
 * every leaf and keeps the tree's levels, so that each shard then costs its own records and a few
 * binary searches. body must outlive the builder. Memory: about 64 bytes per record besides the
 * parsed body. Returns 0 (free with record_shard_builder_free), snapshot_body_parse_sections's
 * errors, DIRAUTH_ERR_BOUNDS (a count past record_shard_bits's bound), DIRAUTH_ERR_NOMEM,
 * DIRAUTH_ERR_CRYPTO. The body is taken as verified: its records root is computed, not compared. */
struct record_shard_builder;
int record_shard_builder_new(const uint8_t *body, size_t body_len, const struct snapshot_body_limits *limits,
                             struct record_shard_builder **out);
void record_shard_builder_free(struct record_shard_builder *builder);

/* The shard count and bits of the builder's body, and its records root. */
unsigned record_shard_builder_bits(const struct record_shard_builder *builder);
void record_shard_builder_root(const struct record_shard_builder *builder, merkle_hash out);

/* Appends the text of shard index (< 2^bits) of the builder's body to out. Returns 0,
 * DIRAUTH_ERR_BOUNDS (an index out of range, a shard past RECORD_SHARD_RUN_MAX records or
 * RECORD_SHARD_MAX_BYTES), DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_CRYPTO. */
int record_shard_builder_shard(struct record_shard_builder *builder, uint32_t index, struct buffer *out);

#endif
