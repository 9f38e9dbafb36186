/*
 * prepared.h: published snapshots held in memory as ready-made HTTP responses.
 *
 * The read path is hot and the same for every client, so each snapshot's responses are built
 * once: the header note, and the body in every content encoding, each with its ETag,
 * Cache-Control (immutable: an epoch's snapshot never changes), Vary and Content-Encoding,
 * plus the matching 304 responses. A request only picks one and queues it; libmicrohttpd
 * reference-counts queued responses, and a prepared snapshot is itself reference-counted, so the
 * scheduler can swap in a new epoch while older responses are still being sent.
 *
 * The set keeps, per namespace, the latest snapshot (swapped in by the scheduler after the
 * snapshot is stored) and a small cache of older epochs loaded from the store on demand (one
 * load at a time, so that requests for many old epochs cannot multiply the memory spent on
 * compression).
 */
#ifndef DIRAUTH_SERVER_PREPARED_H
#define DIRAUTH_SERVER_PREPARED_H

#include "compress.h"
#include "config.h"
#include "publish.h"
#include "store.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define PREPARED_CACHE_SIZE 8
#define PREPARED_ETAG_MAX   80 /* quoted 64 hex digits and an encoding suffix */

struct MHD_Response;

struct prepared_snapshot {
	char namespace_name[NAMESPACE_NAME_MAX + 1];
	uint64_t epoch;
	uint64_t fresh_until;
	uint8_t *header_note; /* owned; the signed header note */
	size_t header_note_len;
	char header_etag[PREPARED_ETAG_MAX];                    /* "\"<sha256 hex of the note>\"" */
	char body_etag[ENCODING_COUNT][PREPARED_ETAG_MAX];      /* "\"<body sha256 hex>-<encoding>\"" */
	struct MHD_Response *header_response;                   /* 200, immutable */
	struct MHD_Response *header_not_modified;               /* 304, immutable */
	struct MHD_Response *body_response[ENCODING_COUNT];     /* 200, immutable */
	struct MHD_Response *body_not_modified[ENCODING_COUNT]; /* 304, immutable */
	atomic_size_t references;
};

struct prepared_set;

/* Builds the responses of a publication, taking its buffers (p is cleared on success and on
 * failure). The result has one reference. Returns 0, DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_CRYPTO. */
int prepared_snapshot_create(struct publication *p, struct prepared_snapshot **out);

/* A set for config's namespaces, loading older epochs from store. Returns 0 or
 * DIRAUTH_ERR_NOMEM. config and store must outlive the set. */
int prepared_set_create(const struct config *config, struct store *store, struct prepared_set **out);

/* Frees the set and drops its references. Accepts NULL. */
void prepared_set_free(struct prepared_set *set);

/* Makes snapshot the latest of namespace_index, taking the caller's reference; the previous
 * latest moves to the cache of older epochs. Refuses an epoch not above the current latest
 * (DIRAUTH_ERR_ROLLBACK, the reference is dropped). Returns 0 or DIRAUTH_ERR_ROLLBACK. */
int prepared_set_install(struct prepared_set *set, size_t namespace_index,
                         struct prepared_snapshot *snapshot);

/* The latest snapshot of namespace_index with a new reference the caller releases. Returns 0 or
 * DIRAUTH_ERR_NOT_FOUND. */
int prepared_set_latest(struct prepared_set *set, size_t namespace_index, struct prepared_snapshot **out);

/* The snapshot of namespace_index for epoch, with a new reference: the latest, a cached one, or
 * loaded from the store (and cached). Returns 0, DIRAUTH_ERR_NOT_FOUND, or the errors of
 * publish_load and prepared_snapshot_create. */
int prepared_set_epoch(struct prepared_set *set, size_t namespace_index, uint64_t epoch,
                       struct prepared_snapshot **out);

/* Adds a reference. */
void prepared_snapshot_acquire(struct prepared_snapshot *snapshot);

/* Drops a reference; the last one frees the snapshot and drops its responses (libmicrohttpd
 * keeps a response alive while a connection still sends it). Accepts NULL. */
void prepared_snapshot_release(struct prepared_snapshot *snapshot);

#endif
