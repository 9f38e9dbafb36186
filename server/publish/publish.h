/*
 * publish.h: one namespace's snapshot for one epoch, computed, signed and stored; and storing a
 * snapshot the authorities' round computed.
 *
 * An authority alone publishes what the protocol's rule computes for n = k = 1: the consensus
 * (consensus/consensus.h) of its one vote; its round (server/round), having no peer, takes that
 * step through publish_snapshot at the epoch's start. The vote is built from the store's sealed view of the
 * epoch (vote.h, as every member of a set builds its own): per service the latest registration
 * stamped for that epoch or earlier that is still unexpired at the epoch's valid-after, and for a
 * namespace configured with "lifecycle: true" (consensus method 2) each endpoint's latest health
 * statement and the revocations within their window. The rule then chooses the records, the
 * health entries and the revocations, each note read from the store, and the header commits to
 * the body (records root, body digest, the previous header's digest). Because the view is fixed
 * once sealed, building the same epoch again (after a crash at any step) gives the same bytes,
 * and so the same header, which the signer signs again rather than refusing as a second header
 * for the epoch.
 *
 * The body is written as the rule chooses it, to the store's body files in every content
 * encoding (consensus_compute_streamed), so it is never held in memory whole: memory is the
 * vote's lines and the chosen versions (about 150 bytes a record) and one note at a time. It is
 * bounded (record count, uncompressed and compressed sizes), signed by dirauth-signer, and
 * stored durably before anyone may serve it. A snapshot that breaks a bound, or whose header the
 * signer does not sign, is not published at all.
 */
#ifndef DIRAUTH_SERVER_PUBLISH_PUBLISH_H
#define DIRAUTH_SERVER_PUBLISH_PUBLISH_H

#include "base/buffer.h"
#include "schema/snapshot.h"
#include "server/config/config.h"
#include "server/signing/signer_client.h"
#include "server/store/snapshots.h"
#include "server/store/store.h"

#include <stddef.h>
#include <stdint.h>

/* A published snapshot: its signed header note and what its body files hold. */
struct publication {
	char namespace_name[NAMESPACE_NAME_MAX + 1];
	struct snapshot_header header;
	struct buffer header_note;
	struct store_body_info body;
};

/* Frees the header note and zeroes p. Accepts NULL. */
void publication_clear(struct publication *p);

/* Seals epoch in the store (its content fixed), builds the snapshot of
 * config->namespaces[namespace_index] for it, has the signer sign its header
 * (SIGNER_OP_SIGN_SNAPSHOT_HEADER), and stores it (durable on return). On success *out is filled
 * (the caller clears it). Returns 0; DIRAUTH_ERR_ROLLBACK when epoch is not above the namespace's
 * latest stored epoch; DIRAUTH_ERR_STALE when a later epoch is already sealed; DIRAUTH_ERR_BOUNDS
 * when more records than records_per_snapshot are eligible or the body breaks a size bound;
 * DIRAUTH_ERR_UNAVAILABLE when the signer cannot be reached, or its refusal code; for method 2,
 * DIRAUTH_ERR_MISMATCH or DIRAUTH_ERR_NOT_FOUND when the stored previous snapshot does not check
 * out or its body is no longer kept (publish_previous_load); the errors of the store, of the
 * encoders and of the consensus (consensus.h: each outcome's code). detail (may be NULL) gets the
 * signer's sentence when the signer failed or refused, else "". Nothing is stored unless 0 is
 * returned. */
int publish_snapshot(const struct config *config, struct store *store, struct signer_client *signer,
                     size_t namespace_index, uint64_t epoch, struct publication *out, char *detail,
                     size_t detail_cap);

/* The latest stored snapshot of namespace_name: *have_previous 1 with its epoch and the SHA-256
 * of its header text (snapshot_header_digest: what its successor names as previous), or 0 with
 * 32 zeros when none is stored. Returns 0, or the errors of the store and of parsing the stored
 * note. */
int publish_latest_digest(struct store *store, const char *namespace_name, int *have_previous,
                          uint64_t *previous_epoch, uint8_t digest[32]);

/* Stores a snapshot that was built and signed elsewhere (by the authorities' round): writes body
 * (the header's whole uncompressed body) to the store's body files in every encoding, checks it
 * against header (size, digest: DIRAUTH_ERR_MISMATCH) and the configured bounds
 * (DIRAUTH_ERR_BOUNDS), and stores header_note (durable on return). Returns 0, those, and the
 * errors of the store (DIRAUTH_ERR_ROLLBACK for an epoch not above the latest). Nothing is stored
 * unless 0 is returned. */
int publish_signed_snapshot(const struct config *config, struct store *store,
                            const struct snapshot_header *header, const uint8_t *header_note,
                            size_t header_note_len, const uint8_t *body, size_t body_len);

#endif
