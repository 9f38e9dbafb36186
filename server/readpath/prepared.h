/*
 * prepared.h: published snapshots held in memory as ready-made HTTP responses.
 *
 * The read path is hot and the same for every client, so each snapshot's responses are built
 * once: the header note, and the body in each content encoding, each with its ETag,
 * Cache-Control (immutable: an epoch's snapshot never changes), Vary and Content-Encoding,
 * plus the matching 304 responses. A request only picks one and queues it; libmicrohttpd
 * reference-counts queued responses, and a prepared snapshot is itself reference-counted, so the
 * scheduler can swap in a new epoch while older responses are still being sent.
 *
 * The set keeps, per namespace, the latest snapshot (swapped in by the scheduler after the
 * snapshot is stored, with every encoding built) and a small least-recently-used cache of older
 * epochs loaded from the store on demand. An older epoch is loaded header first: its header
 * and 304 responses need only the stored header (and the body's ETags come from the digest the
 * header carries), so a request for the header, or a conditional request for the body that
 * matches, never reads the body. The body of an older epoch is read, and compressed in the one
 * encoding asked for, the first time that encoding is asked for (identity needs no
 * compression). No lock is held across a load: requests for one encoding of one snapshot wait
 * for the request already building it, and every other request goes on.
 */
#ifndef DIRAUTH_SERVER_READPATH_PREPARED_H
#define DIRAUTH_SERVER_READPATH_PREPARED_H

#include "schema/compress.h"
#include "server/config/config.h"
#include "server/publish/publish.h"
#include "schema/snapshot.h"
#include "server/store/store.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PREPARED_CACHE_SIZE 8
#define PREPARED_ETAG_MAX   80 /* quoted 64 hex digits and an encoding suffix */

struct MHD_Response;

struct prepared_snapshot {
	char namespace_name[NAMESPACE_NAME_MAX + 1];
	uint64_t epoch;
	uint64_t fresh_until;
	struct snapshot_header header; /* parsed from header_note */
	uint8_t *header_note;          /* owned; the signed header note */
	size_t header_note_len;
	char header_etag[PREPARED_ETAG_MAX];                    /* "\"<sha256 hex of the note>\"" */
	char body_etag[ENCODING_COUNT][PREPARED_ETAG_MAX];      /* "\"<body sha256 hex>-<encoding>\"" */
	struct MHD_Response *header_response;                   /* 200, immutable */
	struct MHD_Response *header_not_modified;               /* 304, immutable */
	struct MHD_Response *body_not_modified[ENCODING_COUNT]; /* 304, immutable */
	/* 200 with the body, immutable. Built with the snapshot for a publication, on first use for
	 * an epoch loaded from the store: read only through prepared_set_body. Guarded by body_lock;
	 * once set, never changed until the snapshot is freed. */
	struct MHD_Response *body_response[ENCODING_COUNT];
	bool body_building[ENCODING_COUNT]; /* a request is building that encoding now */
	pthread_mutex_t body_lock;
	pthread_cond_t body_built;
	atomic_size_t references;
};

/* Counters of the work a set did loading older epochs from the store, for tests and metrics. */
struct prepared_statistics {
	uint64_t header_loads;                 /* header-only reads from the store */
	uint64_t body_loads;                   /* body reads from the store */
	uint64_t compressions[ENCODING_COUNT]; /* bodies compressed, per encoding (identity: 0) */
};

struct prepared_set;

/* Builds the responses of a publication, every encoding included, taking its buffers (p is
 * cleared on success and on failure). The result has one reference. Returns 0,
 * DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_CRYPTO, DIRAUTH_ERR_INTERNAL. */
int prepared_snapshot_create(struct publication *p, struct prepared_snapshot **out);

/* A set for config's namespaces, loading older epochs from store. Returns 0 or
 * DIRAUTH_ERR_NOMEM. config and store must outlive the set. */
int prepared_set_create(const struct config *config, struct store *store, struct prepared_set **out);

/* Frees the set and drops its references. Accepts NULL. */
void prepared_set_free(struct prepared_set *set);

/* Makes snapshot the latest of namespace_index, taking the caller's reference; the previous
 * latest moves to the cache of older epochs. Refuses an epoch not above the current latest
 * (DIRAUTH_ERR_ROLLBACK, the reference is dropped). Returns 0, DIRAUTH_ERR_ROLLBACK, or
 * DIRAUTH_ERR_NOT_FOUND for a namespace_index out of range. */
int prepared_set_install(struct prepared_set *set, size_t namespace_index,
                         struct prepared_snapshot *snapshot);

/* The latest snapshot of namespace_index with a new reference the caller releases. Returns 0 or
 * DIRAUTH_ERR_NOT_FOUND. */
int prepared_set_latest(struct prepared_set *set, size_t namespace_index, struct prepared_snapshot **out);

/* The snapshot of namespace_index for epoch, with a new reference: the latest, a cached one, or
 * its header loaded from the store (publish_load_header) and cached; the body is not read.
 * Returns 0, DIRAUTH_ERR_NOT_FOUND, the errors of publish_load_header, DIRAUTH_ERR_NOMEM,
 * DIRAUTH_ERR_CRYPTO. */
int prepared_set_epoch(struct prepared_set *set, size_t namespace_index, uint64_t epoch,
                       struct prepared_snapshot **out);

/* The 200 response with snapshot's body in encoding, building it from the store the first time
 * (publish_load_body: one read, and compression only for that encoding). *out is borrowed: it
 * lives as long as the caller's reference on snapshot. If another request is building the same
 * encoding of the same snapshot, waits for it; nothing else is waited for. Returns 0,
 * DIRAUTH_ERR_INTERNAL (encoding out of range), the errors of publish_load_body,
 * DIRAUTH_ERR_NOMEM; a failed build is tried again by the next request. */
int prepared_set_body(struct prepared_set *set, struct prepared_snapshot *snapshot,
                      enum content_encoding encoding, struct MHD_Response **out);

/* Copies the set's counters into out. */
void prepared_set_statistics(struct prepared_set *set, struct prepared_statistics *out);

/* Adds a reference. */
void prepared_snapshot_acquire(struct prepared_snapshot *snapshot);

/* Drops a reference; the last one frees the snapshot and drops its responses (libmicrohttpd
 * keeps a response alive while a connection still sends it). Accepts NULL. */
void prepared_snapshot_release(struct prepared_snapshot *snapshot);

#endif
