/*
 * diffs.h: the diffs of each published body from the older bodies this authority keeps
 * (schema/snapshot-diff.md), built on a thread of their own after the body is stored and served,
 * so that publication never waits for them.
 *
 * For a published epoch E of a namespace, one diff from each of the bodies of epochs E - 1 down to
 * E - diffs.bases that are still kept (store_retain) straight to E's body: a mirror holding any of
 * them fetches one diff, never a chain. A diff is named by its base body's SHA-256 (the value the
 * base's co-signed header commits to as body-sha256) and kept in the store beside the bodies,
 * precompressed in every encoding (server/store/snapshots.h, store_diff_*); it is offered only
 * when its zstd file is at most SNAPSHOT_DIFF_OFFER_PERCENT of the zstd body file's size
 * (snapshot_diff_worth_offering: zstd against zstd, the encoding nearly every mirror asks for and
 * the one in which a diff's share of the body is largest, so a diff kept is worth it in the
 * others too). A diff not worth offering, or whose base retention removed meanwhile, is dropped.
 *
 * Bounded work: one thread, and per namespace one epoch pending besides the one being built.
 * A request for a namespace that already has one pending replaces it (the older is dropped and
 * counted): diffs to a body that is no longer the latest are worth little, and the queue never
 * grows behind a slow build. Diffs held already are not built again, so a request repeated (at
 * start, after a crash) costs a directory lookup per base. Memory while building: one base body,
 * the target body and the diff, whole (snapshot_diff.h), so about three bodies.
 *
 * The same thread then writes each published body's record shards (schema/record-shard.md): all
 * shards of the epoch, packed in one file beside the body (server/store/snapshots.h,
 * store_record_shards_*), not built again when held. Memory: the body, parsed, and its tree's
 * levels (about 64 bytes a record).
 *
 * Threading: publish_diffs_request is safe from any thread and never waits for a build.
 */
#ifndef DIRAUTH_SERVER_PUBLISH_DIFFS_H
#define DIRAUTH_SERVER_PUBLISH_DIFFS_H

#include "compress/compress.h"
#include "server/config/config.h"
#include "server/store/store.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct publish_diffs;

struct publish_diffs_options {
	const struct config *config; /* diffs.bases; the namespaces and their bounds */
	struct store *store;
	FILE *log; /* one line per epoch whose diffs were built; NULL: stderr */
};

/* What the builder did since it started, for tests and the log. */
struct publish_diffs_statistics {
	uint64_t built;          /* diffs kept and offered */
	uint64_t held;           /* diffs found built already */
	uint64_t not_offered;    /* larger than SNAPSHOT_DIFF_OFFER_PERCENT of the body: dropped */
	uint64_t failed;         /* a build or a write failed (logged) */
	uint64_t dropped;        /* pending epochs replaced by a newer one before they were built */
	uint64_t epochs;         /* epochs whose diffs were built (or found built) */
	uint64_t shard_epochs;   /* epochs whose record shards were built */
	uint64_t shard_failures; /* epochs whose record shards could not be built (logged) */
	/* Bytes of the diffs built and kept, by namespace index and content encoding. */
	uint64_t bytes[CONFIG_MAX_NAMESPACES][ENCODING_COUNT];
};

/* Starts the builder's thread over options (which must outlive it), and asks it for the diffs and
 * shards of each namespace's latest stored epoch, so that those a stop or a crash left unbuilt are
 * built. With config->diffs.bases 0 it builds no diff, only the record shards.
 * Returns 0, DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_INTERNAL (no thread). */
int publish_diffs_start(const struct publish_diffs_options *options, struct publish_diffs **out);

/* Asks for the diffs to namespace_index's stored body of epoch, after its publication. Returns at
 * once; replaces the namespace's pending epoch, if any. Accepts a NULL builder (does nothing). */
void publish_diffs_request(struct publish_diffs *diffs, size_t namespace_index, uint64_t epoch);

/* Waits until nothing is pending or being built. For tests and orderly ends. Accepts NULL. */
void publish_diffs_wait_idle(struct publish_diffs *diffs);

/* Copies the counters into out (zeroes for NULL). */
void publish_diffs_statistics(struct publish_diffs *diffs, struct publish_diffs_statistics *out);

/* Stops the thread (the diff being written is finished or dropped; pending epochs are dropped:
 * publish_diffs_start asks for them again) and frees. Accepts NULL. */
void publish_diffs_stop(struct publish_diffs *diffs);

#endif
