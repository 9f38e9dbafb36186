/*
 * vote.h: this authority's vote for an epoch, built from the store's sealed views: what the round
 * of several authorities signs and sends (server/round), and what the single authority's snapshot
 * is the consensus of (publish.h); and the inputs both give the consensus beside the votes: the
 * previous snapshot and method 2's parameters.
 *
 * The records are those of the sealed view (store_view_foreach), one line per service: sequence
 * and registration digest, with the RFC 6962 root over their notes. With the method-2 sections
 * (consensus/consensus.md, "Method 2: what an authority votes"):
 *   - health: per endpoint of each record voted, the latest statement of the sealed view
 *     (store_lifecycle_view_foreach), whatever its age (the rule judges freshness), as
 *     (issued-at, sequence, digest);
 *   - revocations: every revocation of the sealed view (store_revocation_view_foreach) whose
 *     target the previous snapshot does not list and whose stamp is within revocation_epochs of
 *     the epoch (a revocation listed once is carried by the rule without a vote).
 *
 * publish_previous_load reads the latest stored snapshot, the one the vote names as previous:
 * its header text and, when it is a method-2 snapshot, its body, checked against the header and
 * parsed, which the vote's revocations and the consensus of method 2 need.
 */
#ifndef DIRAUTH_SERVER_PUBLISH_VOTE_H
#define DIRAUTH_SERVER_PUBLISH_VOTE_H

#include "consensus/consensus.h"
#include "base/buffer.h"
#include "crypto/merkle.h"
#include "schema/snapshot.h"
#include "schema/vote.h"
#include "schema/vote_body.h"
#include "server/config/config.h"
#include "server/store/registrations.h"
#include "server/store/store.h"

#include <stdint.h>

/* The latest stored snapshot of a namespace. Everything is owned (publish_previous_clear). */
struct publish_previous {
	int have;                     /* 0: none stored (the rest is empty) */
	uint64_t epoch;               /* its epoch */
	uint8_t digest[32];           /* SHA-256 of its header text */
	uint64_t method;              /* its consensus-method */
	struct buffer text;           /* its header text, without signature lines */
	struct buffer body;           /* its body, when method is 2; empty otherwise */
	struct snapshot_body *parsed; /* body parsed with its sections, when method is 2; else NULL */
};

/* Loads the latest stored snapshot of config->namespaces[namespace_index] into *out (initialised
 * here; clear it even on error). A method-2 body is read from the store's identity file, checked
 * against the header (size, SHA-256) and parsed under the namespace's bounds. Returns 0 (also
 * when none is stored: out->have 0); DIRAUTH_ERR_MISMATCH (the body is not what its header
 * commits to, or names another namespace or epoch); DIRAUTH_ERR_NOT_FOUND (its body is no longer
 * kept); the parsers' and the store's errors; DIRAUTH_ERR_NOMEM. After an error out->parsed is
 * NULL, and out->have, epoch and digest still say which snapshot is the latest when that much
 * was read (out->have 1). */
int publish_previous_load(const struct config *config, struct store *store, size_t namespace_index,
                          struct publish_previous *out);

/* Frees what previous holds and empties it. Accepts NULL. */
void publish_previous_clear(struct publish_previous *previous);

/* The stored snapshot of namespace_name for epoch: its header parsed into *header and its body
 * appended to body, read whole from the store's identity file and checked against the header
 * (its size, within bounds.snapshot_body_uncompressed, and its SHA-256). Returns 0;
 * DIRAUTH_ERR_NOT_FOUND (no such snapshot); DIRAUTH_ERR_STALE (its body is no longer kept);
 * DIRAUTH_ERR_MISMATCH (a body that is not the header's, or a header of another epoch or
 * namespace); the parsers' and the store's errors; DIRAUTH_ERR_IO, DIRAUTH_ERR_NOMEM. */
int publish_stored_body_read(const struct config *config, struct store *store, const char *namespace_name,
                             uint64_t epoch, struct snapshot_header *header, struct buffer *body);

/* The vote body the stored snapshot of epoch stands for, the base of the votes sent as deltas
 * (schema/vote-delta.md): its records as record lines (each note's sequence and SHA-256) and, for
 * a method-2 snapshot, its health entries as health lines (each statement's issued-at, sequence
 * and SHA-256); no revocations; namespace, epoch and authority left empty. The stored header must
 * hash to digest and the body must be what it commits to. *out (vote_body_free) on success.
 * Returns 0; DIRAUTH_ERR_NOT_FOUND (no snapshot of that epoch, or its body is no longer kept);
 * DIRAUTH_ERR_MISMATCH (another header, or a body that is not the header's); the parsers' and
 * the store's errors; DIRAUTH_ERR_NOMEM. */
int publish_vote_base(const struct config *config, struct store *store, size_t namespace_index,
                      uint64_t epoch, const uint8_t digest[32], struct vote_body **out);

/* Fills *out (zeroed here; its arrays owned by the caller, freed with
 * publish_vote_body_clear) with the vote body of config->namespaces[namespace_index] for epoch,
 * the sealed epoch, whose valid-after is valid_after, authored by config->authority_name, and
 * records_root (when not NULL: a vote that is sent carries it, and it costs a hash of every
 * note) with the root over the voted notes. With with_sections, also the health and
 * revocation sections as above; previous is the previous snapshot's parsed body (NULL for none
 * or a method-1 snapshot). Returns 0; DIRAUTH_ERR_BOUNDS (more records than
 * records_per_snapshot, more health lines than config_max_health, more revocations than the
 * namespace's max_revocations); DIRAUTH_ERR_STALE (epoch is not the sealed one); the errors of
 * the store and of the registration parser; DIRAUTH_ERR_NOMEM. */
int publish_vote_body(const struct config *config, struct store *store, size_t namespace_index,
                      uint64_t epoch, uint64_t valid_after, int with_sections,
                      const struct snapshot_body *previous, struct vote_body *out, merkle_hash records_root);

/* publish_vote_body for a vote that is never sent (a single authority's, n = 1): the record lines
 * counted, not kept (out->records NULL, out->record_count their number), for the consensus to read
 * them again through publish_view_lines; no records root. Same returns. */
int publish_vote_body_counted(const struct config *config, struct store *store, size_t namespace_index,
                              uint64_t epoch, uint64_t valid_after, int with_sections,
                              const struct snapshot_body *previous, struct vote_body *out);

/* The record lines of a namespace's sealed view (as publish_vote_body lists them), read a page at
 * a time for the consensus (consensus_record_lines): each page of up to 1,024 lines is a walk of
 * the view from the last service id of the page before, in a read transaction of its own, and
 * keeps the notes of its records, which publish_view_lines_note hands out while the page is held.
 * So the memory is one page's, whatever the number of records. The view must still be the sealed
 * one (the store's DIRAUTH_ERR_STALE otherwise). */
struct publish_view_lines {
	struct store *store;
	const char *namespace_name; /* borrowed */
	uint64_t epoch, valid_after;
	size_t first;   /* the index of the page's first line */
	size_t count;   /* lines in the page */
	bool have_last; /* a page was read: last is its last service id */
	uint8_t last[SERVICE_ID_SIZE];
	struct vote_body_record *page; /* the page's lines */
	size_t *note_at, *note_len;    /* each line's note in notes */
	struct buffer notes;
};

/* Returns 0, or DIRAUTH_ERR_NOMEM (lines then cleared). */
int publish_view_lines_init(struct publish_view_lines *lines, struct store *store, const char *namespace_name,
                            uint64_t epoch, uint64_t valid_after);

/* consensus_record_lines's record(): the line at index, the page that holds it read when it is not
 * the one held (the next page, or from the first again). Returns 0; DIRAUTH_ERR_MISMATCH (the view
 * ends before index: it holds fewer lines than were counted); the store's errors. */
int publish_view_lines_read(void *context, size_t index, struct vote_body_record *out);

/* The note of the held page's line of service_id when its sequence is sequence: 0 with *note and
 * *note_len (valid until the next read), or DIRAUTH_ERR_NOT_FOUND. */
int publish_view_lines_note(const struct publish_view_lines *lines, const uint8_t service_id[SERVICE_ID_SIZE],
                            uint64_t sequence, const uint8_t **note, size_t *note_len);

void publish_view_lines_clear(struct publish_view_lines *lines);

/* Frees the arrays of a body publish_vote_body filled (not body itself) and zeroes it. */
void publish_vote_body_clear(struct vote_body *body);

/* The vote text of this authority's vote of epoch with the body lines and records_root (NULL:
 * zeros) publish_vote_body gave, but its body-sha256 (zero here: the caller that sends the vote fills it
 * once the body is encoded): namespace, origin, authority, epoch, record count, the previous
 * snapshot when previous->have, and the methods it can compute for the namespace: 1, and 2 for a
 * namespace configured with "lifecycle: true". Never fails. */
void publish_vote_text(const struct config *config, size_t namespace_index, uint64_t epoch,
                       const struct publish_previous *previous, const struct vote_body *lines,
                       const merkle_hash records_root, struct vote *out);

/* Method 2's inputs for the namespace (consensus.h): its freshness, revocation window and bounds,
 * and previous's header text and body (each only when held). The callbacks and their context are
 * left NULL, for the caller to set. previous must outlive *out. Never fails. */
void publish_consensus_lifecycle(const struct config *config, size_t namespace_index,
                                 const struct publish_previous *previous, struct consensus_lifecycle *out);

#endif
