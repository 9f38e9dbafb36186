/*
 * lifecycle.h: the body of a single authority's snapshot of consensus method 2 (internal to
 * server/publish; publish.c calls it for a namespace configured with "lifecycle: true").
 *
 * The body is what consensus/consensus.h computes with method 2 from this authority's one vote
 * (n = k = 1) over the same store, byte for byte, written as it is built. That vote is: the
 * records of the sealed view (store_view_foreach: deregistered and revoked versions already
 * left out); per endpoint of each record, the latest statement of the sealed view
 * (store_lifecycle_view_foreach), whatever its age; and every revocation of the sealed view
 * (store_revocation_view_foreach) whose target the previous snapshot does not list and whose
 * stamp is within revocation_epochs of the epoch. So:
 *   - revocations: the previous snapshot's (when it is method 2) still within revocation_epochs
 *     of the epoch that first listed them, each checked again, then those of the vote for a target
 *     not listed yet whose note verifies, listed since this epoch; in target order;
 *   - records: the view's, minus any a listed revocation excludes (its service, or an endpoint it
 *     lists);
 *   - health: per endpoint of each published record, its statement when it is fresh (issued-at +
 *     freshness > valid-after) and verifies against the published registration (the key its
 *     signer line names there); otherwise no entry: unknown, which a client treats as unavailable.
 * That vote is publish_vote_body (vote.h), which the round of several authorities also sends;
 * tests/unit/check_publish_lifecycle.c builds it, runs consensus_compute and compares.
 */
#ifndef DIRAUTH_SERVER_PUBLISH_LIFECYCLE_H
#define DIRAUTH_SERVER_PUBLISH_LIFECYCLE_H

#include "schema/snapshot.h"
#include "server/config/config.h"
#include "server/store/registrations.h"
#include "server/store/snapshots.h"
#include "server/store/store.h"

/* Writes the method-2 body of config->namespaces[namespace_index] for h->epoch (sealed in the
 * store) into the store's body files, given h's namespace, epoch, times and previous (the digest
 * of the latest stored header, previous_epoch its epoch; have_previous 0 for none), and fills h's
 * records, records root, body size and digest, and *info. Returns 0; DIRAUTH_ERR_BOUNDS (more
 * records than records_per_snapshot, more health entries than config_max_health, more
 * revocations than the namespace's max_revocations, a body over a size bound); DIRAUTH_ERR_MISMATCH
 * or the parsers' errors when the stored previous snapshot is not what its header commits to or
 * carries a revocation that does not check out (nothing can then be published on top of it);
 * the errors of the store. Nothing is kept unless 0 is returned. */
int publish_lifecycle_body(const struct config *config, struct store *store, size_t namespace_index,
                           int have_previous, uint64_t previous_epoch, struct snapshot_header *h,
                           struct store_body_info *info);

/* The sizes the configuration allows, checked on a finished body: 0 or DIRAUTH_ERR_BOUNDS. */
int publish_check_body_bounds(const struct config *config, const struct store_body_info *info);

#endif
