/*
 * fetch_revocations.h: revocation overrides the cache (hard rule 4), on a mirror's side.
 *
 * A snapshot of consensus method 2 lists, in its revocation section, every endpoint or service
 * revoked since any snapshot that held it could still be valid. A mirror keeps the snapshots it
 * fetched (DIR/NS/<epoch>.header and .body) and serves them as static files, so two things
 * follow for dirauthctl fetch:
 *
 *   - what the held snapshot (latest.header) revoked never comes back: a newer snapshot with a
 *     record that one of the held body's revocations excludes is refused, and nothing is
 *     written, even when the newer snapshot no longer lists the revocation. That check is
 *     libdirauth's (the held body is the base it reads through its body_read callback);
 *   - once a newer snapshot is stored, every older snapshot kept beside it that still holds a
 *     record its revocations exclude is dropped (its .header and .body are removed), so that the
 *     mirror stops serving the revoked endpoint at once rather than at that snapshot's
 *     valid-until. That is the mirror's own housekeeping, here.
 *
 * A body is read only up to the trust bundle's max-body-uncompressed and parsed within its
 * max-records; a kept body that cannot be read or parsed is left alone (it was verified when it
 * was stored; the new snapshot is what clients are told to use).
 */
#ifndef DIRAUTH_CTL_FETCH_REVOCATIONS_H
#define DIRAUTH_CTL_FETCH_REVOCATIONS_H

#include "ctl/report.h"
#include "schema/snapshot.h"
#include "schema/trust_bundle.h"

#include <stddef.h>
#include <stdint.h>

/* The bounds a mirror reads a body within, from bundle: its max-records, and as many health and
 * revocation entries as those records could list endpoints. */
void ctl_fetch_body_limits(const struct trust_bundle *bundle, struct snapshot_body_limits *limits);

/* The most dropped epochs a fetch names (it drops them all). */
#define CTL_FETCH_DROPPED_MAX 16

/* After the snapshot of epoch (its body, decoded) was stored: removes the <e>.header and <e>.body
 * of every kept epoch e < epoch whose body holds a record one of body's revocations excludes.
 * dropped (capacity CTL_FETCH_DROPPED_MAX) gets the first epochs dropped, *dropped_count how many
 * were. Returns 0; DIRAUTH_ERR_IO (74) when a file could not be removed, with the failure in
 * report (the new snapshot is stored either way). */
int ctl_fetch_drop_revoked(const struct trust_bundle *bundle, const char *directory,
                           const char *namespace_name, uint64_t epoch, const uint8_t *body, size_t body_len,
                           uint64_t dropped[CTL_FETCH_DROPPED_MAX], size_t *dropped_count,
                           struct ctl_report *report);

#endif
