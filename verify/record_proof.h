/*
 * record_proof.h: one service of a snapshot, present or absent, judged from a record shard
 * (schema/record-shard.md) against the snapshot's verified header, without the body.
 *
 * The caller verifies the header first (verify/snapshot.h: threshold, certificates, times) and,
 * if it holds an older one, its history (verify/history.h); this module then believes a shard
 * only as far as the header's records-root and count prove it: the run of leaves rebuilds the
 * root with the range proof, the run brackets its shard (one neighbour outside on each side, or
 * the tree's edge), every note carries the id its record line names. A record found in the run is
 * present; an id between two adjacent leaves of the run is absent. Health and revocation entries
 * are believed on their own signatures and freshness (record-shard.md, "What the proof covers").
 *
 * The shard to fetch for an id: record_shard_bits(header->record_count), record_shard_of,
 * record_shard_name (schema/record_shard.h).
 *
 * Pure like the rest of verify/: no I/O, no clock (the header carries the times), no printing.
 * Details start with "record shard: ".
 */
#ifndef DIRAUTH_VERIFY_RECORD_PROOF_H
#define DIRAUTH_VERIFY_RECORD_PROOF_H

#include "schema/health.h"
#include "schema/record_shard.h"
#include "schema/registration.h"
#include "schema/snapshot.h"

#include <stddef.h>
#include <stdint.h>

/* The published health of one endpoint of a present record, from its verified statement. */
struct verify_record_health {
	uint8_t endpoint_id[ENDPOINT_ID_SIZE];
	enum health_class health_class;
	enum health_signer signer;
	int has_capacity; /* the statement's capacity line, when it has one */
	enum capacity_class capacity;
	uint64_t issued_at;
};

/* A revocation the shard lists for the service id (absent services only: a listed revocation
 * excludes its record from the snapshot). */
struct verify_record_revocation {
	int has_endpoint; /* 0: the whole service; 1: endpoint_id */
	uint8_t endpoint_id[ENDPOINT_ID_SIZE];
	uint64_t since; /* the epoch of the first snapshot that listed it */
};

/* What a verified lookup learned. Zeroed and filled by verify_record_proof; release with
 * verify_record_clear. */
struct verify_record {
	int present;         /* 1: the service is a record of the snapshot; 0: proven absent */
	uint64_t leaf_index; /* present: its leaf index; absent: the index it would have (the leaf
	                        after it, record_count past the last) */
	/* present: */
	const uint8_t *note; /* the signed registration note, borrowed from the shard bytes */
	size_t note_len;
	struct registration registration;    /* parsed and signature-checked; owned */
	size_t health_count;                 /* entries sorted by endpoint id; an endpoint of the
	                                        registration without one is unknown (treat as unavailable) */
	struct verify_record_health *health; /* owned */
	/* absent: */
	int has_before; /* the adjacent leaf before the id (none: the id is before every record) */
	uint8_t before_id[SERVICE_ID_SIZE];
	int has_after; /* the adjacent leaf after the id (none: after every record) */
	uint8_t after_id[SERVICE_ID_SIZE];
	size_t revocation_count;
	struct verify_record_revocation *revocations; /* owned */
};

/* Frees what record owns and zeroes it. Accepts NULL and a zeroed record. */
void verify_record_clear(struct verify_record *record);

/*
 * Judges shard bytes (as served, uncompressed) against a verified header and looks service_id up
 * in them (record-shard.md, "Verification", steps 1 to 6). On success *out says present or
 * absent; shard must outlive out->note. On failure *out is zeroed. Returns 0 or:
 *   DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_BOUNDS   not a record shard, or past its bounds; sections
 *                               under consensus-method 1;
 *   DIRAUTH_ERR_MISMATCH        a shard of another snapshot (namespace, epoch, count, root), of
 *                               another shard than the id's, a note that is not its record line's
 *                               service, a run that does not bracket its shard, an entry outside
 *                               the shard or naming no endpoint of its record;
 *   DIRAUTH_ERR_PROOF           the range proof does not rebuild the header's records-root;
 *   DIRAUTH_ERR_SIGNATURE, DIRAUTH_ERR_UNKNOWN_KEY   the present record's provider signature, a
 *                               health statement's, a revocation's;
 *   DIRAUTH_ERR_STALE           the present record expired at the header's valid-after, or a
 *                               health statement past its freshness;
 *   DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_CRYPTO.
 */
int verify_record_proof(const struct snapshot_header *header, const uint8_t *shard, size_t shard_len,
                        const uint8_t service_id[SERVICE_ID_SIZE], struct verify_record *out, char *detail,
                        size_t detail_cap);

/* Judges a whole shard, the one of index, against a verified header: steps 1 to 5 of
 * record-shard.md for every record and entry (signatures not checked: for a mirror that built or
 * fetched it beside a body it verified). Returns 0 or verify_record_proof's errors. */
int verify_record_shard(const struct snapshot_header *header, const uint8_t *shard, size_t shard_len,
                        uint32_t index, char *detail, size_t detail_cap);

#endif
