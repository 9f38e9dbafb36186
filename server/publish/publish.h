/*
 * publish.h: building, signing and storing one namespace's snapshot for one epoch.
 *
 * A snapshot is built from the store's sealed view of its epoch (store.h): per service the latest
 * registration stamped for that epoch or earlier that is still unexpired at the epoch's
 * valid-after, in ascending service id order, each carried as its provider's signed note (hard
 * rule 1). Because that view is fixed once sealed, building the same epoch again (after a crash
 * at any step) gives the same bytes, and so the same header, which the signer signs again
 * rather than refusing as a second header for the epoch.
 *
 * The body is written as it is built, to the store's body files in every content encoding, so it
 * is never held in memory whole: memory stays near the size of one record however large the
 * body. It is bounded (record count, uncompressed and compressed sizes), committed to by the
 * header (records root, body digest, the previous header's digest), signed by dirauth-signer,
 * and stored durably before anyone may serve it. A snapshot that breaks a bound, or whose header
 * the signer does not sign, is not published at all.
 *
 * A namespace configured with "lifecycle: true" is published with consensus method 2: the same
 * records minus what a listed revocation excludes, then the health and revocation sections, byte
 * for byte what consensus method 2 computes from this authority's one vote (lifecycle.h).
 */
#ifndef DIRAUTH_SERVER_PUBLISH_PUBLISH_H
#define DIRAUTH_SERVER_PUBLISH_PUBLISH_H

#include "schema/buffer.h"
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
 * DIRAUTH_ERR_MISMATCH when the stored previous snapshot does not check out; the errors of the
 * store and the encoders. detail (may be NULL) gets the signer's sentence when the signer
 * failed or refused, else "". Nothing is stored unless 0 is returned. */
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
