/*
 * prepared.h: published snapshots held as ready-made HTTP responses.
 *
 * The read path is hot and the same for every client, so each snapshot's responses are built
 * once: the header note, and the body in each content encoding, each with its ETag,
 * Cache-Control (immutable: an epoch's snapshot never changes), Vary and Content-Encoding, plus
 * the matching 304 responses. A request only picks one and queues it; libmicrohttpd
 * reference-counts queued responses, and a prepared snapshot is itself reference-counted, so the
 * scheduler can swap in a new epoch while older responses are still being sent.
 *
 * Bodies are never copied into memory: a body response sends the store's body file from a
 * read-only mapping of it, whose pages are the operating system's page cache, and drops them
 * from the process whenever no request is sending it; so the memory a snapshot holds is its
 * header and its responses' bookkeeping, and the page cache carries the hot bodies.
 *
 * The set keeps, per namespace, the latest snapshot (installed by the scheduler after the
 * snapshot is stored, with every body response ready) and a small least-recently-used cache of
 * older epochs loaded from the store on demand, bounded in entries and in bytes
 * (http.old_epochs_cache_bytes). An older epoch is loaded header first: its header and 304
 * responses need only the stored header (the body's ETags come from the digest the header
 * carries), so a request for the header, or a conditional request for the body that matches,
 * never reads the body. A body file loaded from the store is read once and checked against its
 * stored digest before it is first served. No lock is held across a load: requests for one
 * encoding of one snapshot wait for the request already building it, and every other request
 * goes on.
 *
 * The read path depends on the store and the documents only: it never builds or signs a
 * snapshot. What is stored was checked against the bounds in force when it was published and is
 * signed, so no bound of the configuration is applied when it is loaded: an operator lowering a
 * bound must not make it unservable.
 */
#ifndef DIRAUTH_SERVER_READPATH_PREPARED_H
#define DIRAUTH_SERVER_READPATH_PREPARED_H

#include "base/buffer.h"
#include "compress/compress.h"
#include "schema/snapshot.h"
#include "server/config/config.h"
#include "server/store/snapshots.h"
#include "server/store/store.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PREPARED_CACHE_SIZE 8
#define PREPARED_ETAG_MAX   80 /* quoted 64 hex digits and an encoding suffix */

struct MHD_Connection;
struct MHD_Response;

/* One published snapshot's responses. Opaque; reference-counted. */
struct prepared_snapshot;

/* A body file mapped for sending, counted by the requests sending it. Opaque; thread-safe. */
struct prepared_body;

/* The per-namespace set of prepared snapshots. Opaque; thread-safe. */
struct prepared_set;

/* Counters of the work a set did loading older epochs from the store, for tests and metrics. */
struct prepared_statistics {
	uint64_t header_loads; /* header-only reads from the store */
	uint64_t body_loads;   /* body files checked and opened for an older epoch */
};

/* A set for config's namespaces, loading older epochs from store. Returns 0 or
 * DIRAUTH_ERR_NOMEM. config and store must outlive the set. */
int prepared_set_create(const struct config *config, struct store *store, struct prepared_set **out);

/* Frees the set and drops its references. Accepts NULL. */
void prepared_set_free(struct prepared_set *set);

/* Makes a freshly published and stored snapshot the latest of namespace_index: header_note is
 * its signed header note (taken: emptied on success and on failure); its body files are opened
 * from the store. The previous latest moves to the cache of older epochs. Returns 0;
 * DIRAUTH_ERR_ROLLBACK (an epoch not above the current latest); DIRAUTH_ERR_NOT_FOUND
 * (namespace_index out of range, or no such stored body); DIRAUTH_ERR_SYNTAX or
 * DIRAUTH_ERR_MISMATCH (the note is not a header of this namespace, or a body file is not what
 * the store recorded); the errors of store_body_open; DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_CRYPTO. */
int prepared_set_install(struct prepared_set *set, size_t namespace_index, struct buffer *header_note);

/* Loads the latest stored snapshot of namespace_index (if any), checks every body file against
 * its stored digest, and makes it the latest, as at start. Returns 0 (also when nothing is stored
 * yet); the errors of the store; DIRAUTH_ERR_SYNTAX (the stored header does not parse),
 * DIRAUTH_ERR_MISMATCH (it names another namespace or epoch, or a body file does not match). */
int prepared_set_load_latest(struct prepared_set *set, size_t namespace_index);

/* The latest snapshot of namespace_index with a new reference the caller releases. Returns 0 or
 * DIRAUTH_ERR_NOT_FOUND. */
int prepared_set_latest(struct prepared_set *set, size_t namespace_index, struct prepared_snapshot **out);

/* The snapshot of namespace_index for epoch, with a new reference: the latest, a cached one, or
 * its header loaded from the store and cached; the body is not read. Returns 0,
 * DIRAUTH_ERR_NOT_FOUND, DIRAUTH_ERR_SYNTAX or DIRAUTH_ERR_MISMATCH (the stored header is
 * damaged), the errors of the store, DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_CRYPTO. */
int prepared_set_epoch(struct prepared_set *set, size_t namespace_index, uint64_t epoch,
                       struct prepared_snapshot **out);

/* The 200 response with snapshot's body in encoding, building it from the store's body file the
 * first time (the file read once and checked against its stored digest, then mapped for the
 * response). *out is borrowed: it lives as long as the caller's reference on snapshot. With
 * sending not NULL, the caller is about to send the response: *sending gets a handle (NULL when
 * the body is sent from its file descriptor) that keeps the body's pages mapped in until it is
 * given to prepared_body_sent once the answer has ended, however it ended. If another request
 * is building the same encoding of the same snapshot, waits for it; nothing else is waited for.
 * Returns 0, DIRAUTH_ERR_INTERNAL (encoding out of range), DIRAUTH_ERR_NOT_FOUND,
 * DIRAUTH_ERR_STALE (the body was removed by retention), DIRAUTH_ERR_MISMATCH (the file does not
 * match), the errors of the store, DIRAUTH_ERR_NOMEM; a failed build is tried again by the next
 * request. */
int prepared_set_body(struct prepared_set *set, struct prepared_snapshot *snapshot,
                      enum content_encoding encoding, struct MHD_Response **out,
                      struct prepared_body **sending);

/* Ends one request's sending of body: when it was the last, the body's pages leave the process's
 * resident set (they stay in the page cache). Accepts NULL. */
void prepared_body_sent(struct prepared_body *body);

/* Copies the set's counters into out. */
void prepared_set_statistics(struct prepared_set *set, struct prepared_statistics *out);

/* Adds a reference. */
void prepared_snapshot_acquire(struct prepared_snapshot *snapshot);

/* Drops a reference; the last one frees the snapshot and drops its responses (libmicrohttpd
 * keeps a response alive while a connection still sends it). Accepts NULL. */
void prepared_snapshot_release(struct prepared_snapshot *snapshot);

/* What a snapshot is: its epoch, its fresh-until, its parsed header. Borrowed; valid while the
 * caller holds a reference. */
uint64_t prepared_snapshot_epoch(const struct prepared_snapshot *snapshot);
uint64_t prepared_snapshot_fresh_until(const struct prepared_snapshot *snapshot);
const struct snapshot_header *prepared_snapshot_header(const struct prepared_snapshot *snapshot);

/* The signed header note; *len gets its length. Borrowed as above. */
const uint8_t *prepared_snapshot_header_note(const struct prepared_snapshot *snapshot, size_t *len);

/* The header's ETag ("\"<sha256 hex of the note>\"") and the body's in encoding
 * ("\"<body sha256 hex>-<encoding>\""). Borrowed as above; NULL for an encoding out of range. */
const char *prepared_snapshot_header_etag(const struct prepared_snapshot *snapshot);
const char *prepared_snapshot_body_etag(const struct prepared_snapshot *snapshot,
                                        enum content_encoding encoding);

/* Queues on connection the answer to a request for the latest header, snapshot being the latest:
 * 200 with the note, or 304 when not_modified (the request's If-None-Match matched the header's
 * ETag); Cache-Control "public, max-age=N" ("private, ..." in a private namespace), N the seconds
 * from now to the header's fresh-until, 0 past it. Both answers are built once per second (now)
 * and shared by every request of that second. Returns 1 when queued (libmicrohttpd's MHD_YES), 0
 * when libmicrohttpd refused it or memory ran out. */
int prepared_snapshot_queue_latest_header(struct prepared_snapshot *snapshot,
                                          struct MHD_Connection *connection, uint64_t now, bool not_modified);

/* The prepared header response (200) and the 304s of the header and of the body in encoding,
 * all immutable. Borrowed as above; NULL for an encoding out of range. */
struct MHD_Response *prepared_snapshot_header_response(const struct prepared_snapshot *snapshot);
struct MHD_Response *prepared_snapshot_header_not_modified(const struct prepared_snapshot *snapshot);
struct MHD_Response *prepared_snapshot_body_not_modified(const struct prepared_snapshot *snapshot,
                                                         enum content_encoding encoding);

#endif
