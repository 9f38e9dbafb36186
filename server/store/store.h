/*
 * store.h: dirauthd's durable state.
 *
 * One LMDB environment (through kv/) and a directory of snapshot body files, both under one data
 * directory. Default (synchronous) durability: when a write call returns 0, or reports 0 to its
 * completion callback, what it wrote is on disk.
 *
 * What is kept, and for how long:
 *   - services: service id -> its owner (namespace, provider key name) and the highest sequence
 *     ever accepted. Never deleted, so a sequence can only grow (hard rule 2) and a service id is
 *     never taken over.
 *   - endpoints: endpoint id -> the service that first named it. Never deleted (an endpoint id is
 *     never reassigned); 64 bytes each.
 *   - records: per namespace and service, the latest accepted registration, stamped with the
 *     epoch of the first snapshot that may hold it; and the version a later-stamped registration
 *     replaced while the sealed epoch still needs it (below). Deleted once expired.
 *   - snapshots: the signed header of every published snapshot. Never deleted (they are the
 *     transparency log's leaves). The latest epoch per namespace only grows.
 *   - bodies: each published body in every content encoding, as files, for the retention window
 *     (store_retain); their sizes and digests beside the header while the files exist.
 *
 * Epochs, stamps and the seal. Snapshot E holds, per service, the latest registration stamped E or
 * lower that has not expired at E's valid-after. A registration is stamped with the epoch the
 * caller names (the first epoch whose cut-off has not passed by its clock), or with one past the
 * sealed epoch, or with the highest stamp given since the store was opened, if that is later: so
 * every version an epoch holds was within the namespace's bounds together (below). store_seal(E)
 * fixes the content of snapshot E: every commit after it is stamped E + 1 or later, and it waits
 * for commits already under way. So the content of a sealed epoch can be read again, byte for byte,
 * after any crash: a snapshot rebuilt after a restart is the one that was being built (and its
 * header is the one the signer may already have signed). Only the sealed epoch is readable this way
 * (store_view_foreach).
 *
 * Bounds. Each submission names its namespace's bounds (records, and bytes of the records'
 * notes with their framing plus any room kept per endpoint they list): a registration that would
 * take the namespace past them is refused before anything is stored, so every stamp given can be
 * kept. The map has a fixed size
 * (options.map_size); registrations are refused once it is fuller than options.refuse_percent,
 * which leaves the rest to publication and to the work that frees space (retention, expiry).
 *
 * Submissions are group-committed: callers queue a request; one committer thread applies every
 * queued request in one write transaction, each checked against the state the earlier ones in
 * the batch left (so a batch behaves exactly like the same requests one after another), commits
 * once, and hands the batch to a second thread, the answerer, which reports each request's own
 * result once the commit is durable: it syncs the file (a meta page's worth) while the committer
 * works on the next batch, or finds that the next commit's own sync already did. Submitters wait
 * for room while max_batch * 4 requests are unanswered. A submission can wait for its result, or
 * be told through a callback so that no thread waits (the HTTP layer suspends the connection
 * meanwhile).
 *
 * Threading: every function is safe from any thread. Pointers handed to visitors are valid only
 * during the call.
 */
#ifndef DIRAUTH_SERVER_STORE_STORE_H
#define DIRAUTH_SERVER_STORE_STORE_H

#include "schema/buffer.h"
#include "schema/compress.h"
#include "schema/note.h"
#include "schema/registration.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct store;

struct store_options {
	const char *path;        /* directory, created 0700 with any missing parents */
	size_t map_size;         /* bytes the database may grow to; 0: STORE_DEFAULT_MAP_SIZE */
	unsigned refuse_percent; /* registrations refused above this fill; 0: STORE_DEFAULT_REFUSE */
	size_t max_batch;        /* submissions per commit; 0: 256 */
};

#define STORE_DEFAULT_MAP_SIZE ((size_t)8 << 30)
#define STORE_DEFAULT_REFUSE   90

/* Longest namespace or provider name the store accepts. */
#define STORE_NAME_MAX 255

/* Bytes a record takes in a snapshot body besides its note: its "record <id> <length>" line. */
#define STORE_RECORD_FRAMING 78

/* The layouts this build reads (docs/operating.md, "Upgrading dirauthd"): a store of an older
 * one it knows is brought up to STORE_FORMAT when opened, and any other is refused. */
#define STORE_FORMAT        4
#define STORE_FORMAT_OLDEST 2

/* Reads the format recorded in the store at path (which must not be open), to tell an operator
 * why store_open refused it. Returns 0 with *format set, DIRAUTH_ERR_NOT_FOUND (none recorded)
 * or kv_env_open's errors. */
int store_format_read(const char *path, uint64_t *format);

/* Opens (creating if needed) the store and starts its committer thread. Body files left by a
 * publication that did not commit (a crash between writing them and storing the header) are
 * removed. Returns 0, DIRAUTH_ERR_CONFIG (no path), DIRAUTH_ERR_IO (the directory cannot be made
 * or opened), DIRAUTH_ERR_STORE (also a store of another format), DIRAUTH_ERR_NOMEM. */
int store_open(const struct store_options *options, struct store **out);

/* Stops the committer (after finishing queued work) and closes. Accepts NULL. */
void store_close(struct store *store);

/* One accepted registration, as checked by the caller (syntax, signature, policy). */
struct store_registration {
	const char *namespace_name;
	const uint8_t *service_id; /* 32 bytes */
	const char *provider;      /* provider key name: the owner of the service id */
	uint64_t sequence;
	uint64_t expires;
	const uint8_t *digest;       /* SHA-256 of the note, 32 bytes */
	const uint8_t *endpoint_ids; /* endpoint_count * 32 bytes */
	size_t endpoint_count;       /* at most REGISTRATION_MAX_ENDPOINTS (schema/registration.h) */
	const uint8_t *note;         /* the signed registration note as received */
	size_t note_len;
	/* The note parsed (its registration and its one signature), so that the store can keep it
	 * compactly without parsing it again; both NULL to keep the bytes as they are. */
	const struct registration *parsed;
	const struct note_signature *signature;
	uint64_t epoch;          /* the first epoch whose cut-off has not passed, by the caller's clock */
	uint64_t max_records;    /* the namespace's bounds, which the namespace must stay within */
	uint64_t max_bytes;      /* sum of note lengths plus STORE_RECORD_FRAMING each ... */
	uint64_t endpoint_bytes; /* ... plus this for each endpoint the records list: room kept in the
	                          * body for what else an endpoint may bring (a lifecycle
	                          * namespace's health entry), 0 for nothing */
};

/* Called once with the outcome of an asynchronous submission (from the store's answerer thread,
 * in the order the committer decided the submissions: it must not block, and must not call back
 * into the store's submission functions). stamp is the epoch of the first snapshot that may hold
 * the registration (when result is 0). */
typedef void (*store_submission_done)(void *context, int result, uint64_t stamp);

/* Queues r for the next group commit; done is called with the outcome. r and everything it
 * points to must stay valid until done is called. While the store holds its most unanswered
 * requests (four batches of max_batch, queued or being committed), the call waits
 * until the answerer has answered a batch. Outcomes: 0 once committed (durable);
 * DIRAUTH_ERR_ROLLBACK when r's sequence is not greater than the highest accepted for the
 * service; DIRAUTH_ERR_COLLISION when the service id belongs to another provider or namespace,
 * or an endpoint id belongs to another service; DIRAUTH_ERR_REFUSED when a revocation covers the
 * service or one of its endpoint ids, or a deregistration withdrew its sequence (lifecycle.h:
 * store_registration_withdrawn says which); DIRAUTH_ERR_BOUNDS when the namespace would pass
 * max_records or max_bytes; DIRAUTH_ERR_FULL when the map is fuller than refuse_percent (or
 * full); DIRAUTH_ERR_STORE. Nothing is changed unless the outcome is 0. Returns 0 when queued
 * (done will be called), or without calling done: DIRAUTH_ERR_SYNTAX (a field missing or out of
 * range), DIRAUTH_ERR_STORE (the store is closing). */
int store_registration_submit_async(struct store *store, const struct store_registration *r,
                                    store_submission_done done, void *context);

/* store_registration_submit_async, waiting for the outcome, which it returns; *stamp (may be
 * NULL) gets the stamp. */
int store_registration_submit(struct store *store, const struct store_registration *r, uint64_t *stamp);

/* Highest accepted sequence of a service. Returns 0 or DIRAUTH_ERR_NOT_FOUND, DIRAUTH_ERR_STORE,
 * DIRAUTH_ERR_SYNTAX for a NULL argument. */
int store_service_sequence(struct store *store, const uint8_t service_id[32], uint64_t *sequence);

/* The owner of a service id: the namespace and provider key name of its first registration.
 * Returns 0, DIRAUTH_ERR_NOT_FOUND, DIRAUTH_ERR_STORE. */
int store_service_owner(struct store *store, const uint8_t service_id[32],
                        char namespace_name[STORE_NAME_MAX + 1], char provider[STORE_NAME_MAX + 1]);

/* Fixes the content of snapshot epoch (see above) and removes what can never be in a snapshot
 * again: records expired at valid_after (the sealed epoch's valid-after), and replaced versions
 * no later epoch needs. Durable on return; waits for the commits under way. Sealing an epoch at
 * or below the sealed one changes nothing and returns 0. Returns 0, DIRAUTH_ERR_FULL,
 * DIRAUTH_ERR_STORE. */
int store_seal(struct store *store, uint64_t epoch, uint64_t valid_after);

/* The sealed epoch. Returns 0, or DIRAUTH_ERR_NOT_FOUND when nothing was sealed yet. */
int store_sealed(struct store *store, uint64_t *epoch);

/* One record of a sealed epoch's view, borrowed for the visitor's call. */
struct store_record {
	const uint8_t *service_id; /* 32 bytes */
	uint64_t sequence;
	uint64_t expires;
	const uint8_t *digest; /* SHA-256 of the note */
	const uint8_t *note;
	size_t note_len;
};

typedef int (*store_record_visitor)(void *context, const struct store_record *record);

/* Calls visit for each record of namespace_name in snapshot epoch (which must be the sealed
 * epoch): per service the latest registration stamped epoch or lower, if it has not expired at
 * valid_after and is not withdrawn by a deregistration or revocation stamped epoch or lower
 * (lifecycle.h); in ascending service id order, inside one read transaction. A non-zero return
 * from visit stops the walk and is returned. Otherwise returns 0 (also for an unknown
 * namespace); DIRAUTH_ERR_STALE (epoch is not the sealed epoch); DIRAUTH_ERR_SYNTAX (missing
 * argument), DIRAUTH_ERR_BOUNDS (name too long), DIRAUTH_ERR_STORE (including a damaged record). */
int store_view_foreach(struct store *store, const char *namespace_name, uint64_t epoch, uint64_t valid_after,
                       store_record_visitor visit, void *context);

/* Copies the signed note of a service's registration of that sequence into note (replaced):
 * its latest, or a version an epoch not yet sealed past may still hold. Returns 0,
 * DIRAUTH_ERR_NOT_FOUND (no such service, namespace or sequence kept), DIRAUTH_ERR_SYNTAX,
 * DIRAUTH_ERR_BOUNDS, DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_STORE. */
int store_registration_get(struct store *store, const char *namespace_name, const uint8_t service_id[32],
                           uint64_t sequence, struct buffer *note);

/* The sizes and digests of a snapshot body in each content encoding. */
struct store_body_info {
	uint64_t size[ENCODING_COUNT];
	uint8_t sha256[ENCODING_COUNT][32];
};

/* A body being written: bytes go to a file per encoding (compressed on the way) and nowhere
 * else, so a body never needs to be held in memory whole. */
struct store_body_writer;

/* Starts the body of namespace_name's snapshot for epoch. Returns 0, DIRAUTH_ERR_SYNTAX,
 * DIRAUTH_ERR_BOUNDS (name too long), DIRAUTH_ERR_IO, DIRAUTH_ERR_NOMEM. */
int store_body_begin(struct store *store, const char *namespace_name, uint64_t epoch,
                     struct store_body_writer **out);

/* Appends len bytes of the uncompressed body. Returns 0, DIRAUTH_ERR_IO, DIRAUTH_ERR_NOMEM,
 * DIRAUTH_ERR_INTERNAL (a compressor failed). */
int store_body_write(struct store_body_writer *writer, const void *data, size_t len);

/* Finishes the body: flushes the compressors, fsyncs every file and gives them their final
 * names (durably), and fills *info. The files then belong to the store: they are kept if the
 * snapshot's header is stored (store_snapshot_put) and removed at the next open otherwise. Frees
 * the writer in every case. Returns 0, DIRAUTH_ERR_IO, DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_INTERNAL. */
int store_body_finish(struct store_body_writer *writer, struct store_body_info *info);

/* Removes a body's files and frees the writer, for a body that will not be stored. Accepts NULL. */
void store_body_discard(struct store_body_writer *writer);

/* Durably stores a published snapshot's signed header and makes epoch the namespace's latest,
 * in one transaction; its body (info) must have been finished. info NULL stores the header
 * alone, as though retention had removed its body (an authority catching up on an epoch whose
 * body its peers no longer keep). Refuses an epoch not greater than
 * the namespace's latest (DIRAUTH_ERR_ROLLBACK). Also returns DIRAUTH_ERR_SYNTAX (missing
 * argument), DIRAUTH_ERR_BOUNDS (name too long, header over 64 KiB), DIRAUTH_ERR_FULL,
 * DIRAUTH_ERR_STORE. Nothing is changed unless 0 is returned. */
int store_snapshot_put(struct store *store, const char *namespace_name, uint64_t epoch, const uint8_t *header,
                       size_t header_len, const struct store_body_info *info);

/* Copies a stored snapshot's header note into header (replaced). info (may be NULL) gets its
 * body's sizes and digests. Returns 0; DIRAUTH_ERR_NOT_FOUND (no such snapshot);
 * DIRAUTH_ERR_STALE (the header is kept but the body was removed by retention, only when info is
 * not NULL); DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_STORE. */
int store_snapshot_get(struct store *store, const char *namespace_name, uint64_t epoch, struct buffer *header,
                       struct store_body_info *info);

/* Called for each stored snapshot header by store_snapshot_foreach, in ascending epoch order,
 * with the signed note as stored (borrowed for the call). Returns 0 to go on; anything else
 * stops the walk and is what the walk returns. */
typedef int (*store_header_visitor)(void *context, uint64_t epoch, const uint8_t *note, size_t len);

/* Visits every stored header of namespace_name from epoch from on (headers whose body retention
 * removed included), in one read transaction. Returns 0 (also for a namespace with none), the
 * visitor's non-zero value, DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_BOUNDS (name too long),
 * DIRAUTH_ERR_STORE. */
int store_snapshot_foreach(struct store *store, const char *namespace_name, uint64_t from,
                           store_header_visitor visit, void *context);

/* Latest stored epoch of a namespace. Returns 0 or DIRAUTH_ERR_NOT_FOUND, DIRAUTH_ERR_SYNTAX,
 * DIRAUTH_ERR_BOUNDS, DIRAUTH_ERR_STORE. */
int store_snapshot_latest(struct store *store, const char *namespace_name, uint64_t *epoch);

/* Opens a stored body file read-only: *fd gets a descriptor the caller closes, positioned at 0;
 * the file's size is checked against the stored size. Returns 0, DIRAUTH_ERR_NOT_FOUND,
 * DIRAUTH_ERR_STALE (removed by retention), DIRAUTH_ERR_MISMATCH (the file's size is not the
 * stored one), DIRAUTH_ERR_IO, DIRAUTH_ERR_STORE. */
int store_body_open(struct store *store, const char *namespace_name, uint64_t epoch,
                    enum content_encoding encoding, int *fd, uint64_t *size);

/* Reads a stored body file whole and checks it against its stored digest. Returns 0,
 * DIRAUTH_ERR_MISMATCH, and what store_body_open returns. */
int store_body_check(struct store *store, const char *namespace_name, uint64_t epoch,
                     enum content_encoding encoding);

/* Removes the bodies of namespace_name's snapshots older than keep_from (their files and their
 * sizes and digests); headers stay. Returns 0, DIRAUTH_ERR_STORE, DIRAUTH_ERR_IO. */
int store_retain(struct store *store, const char *namespace_name, uint64_t keep_from);

/* Hot copy into an existing empty directory: the database as data.mdb (compacting, 0600), and
 * the body files that are kept, under bodies/. Everything fsynced before return. Returns 0,
 * DIRAUTH_ERR_EXISTS (the directory already holds a data file), DIRAUTH_ERR_IO (the directory is
 * missing or a write failed), DIRAUTH_ERR_STORE. */
int store_backup(struct store *store, const char *directory);

/* Counters and gauges, for tests and metrics. */
struct store_statistics {
	uint64_t submissions;       /* registrations the committer decided, accepted or refused */
	uint64_t batches;           /* write transactions the committer ran, one per batch */
	uint64_t commits;           /* of those, the ones committed (a batch refused entirely is not) */
	uint64_t refused_full;      /* registrations refused because the map is too full */
	uint64_t committer_idle_ns; /* time the committer waited for work (the rest it was busy) */
	size_t map_size;            /* bytes the database may grow to */
	size_t map_used;            /* bytes in use (a high-water mark: freed pages are reused) */
	size_t map_free;            /* of map_used, the bytes of freed pages waiting to be reused */
};

/* The name of the committer's thread (in /proc/<pid>/task/<tid>/comm), the serial stage of
 * ingest: what the benchmarks watch. */
#define STORE_COMMITTER_THREAD_NAME "dirauth-commit"
/* The thread that makes commits durable and calls the submissions' done callbacks. */
#define STORE_ANSWERER_THREAD_NAME  "dirauth-answer"

/* Copies the current counters into out. Returns 0, DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_STORE. */
int store_statistics(struct store *store, struct store_statistics *out);

/* What a namespace holds now (its latest registrations, expired or not yet removed). */
struct store_namespace_usage {
	uint64_t records;
	uint64_t bytes;     /* sum of note lengths plus STORE_RECORD_FRAMING each */
	uint64_t endpoints; /* endpoints the records list */
};

/* Returns 0 (zeros for an unknown namespace), DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_BOUNDS,
 * DIRAUTH_ERR_STORE. */
int store_namespace_usage(struct store *store, const char *namespace_name, struct store_namespace_usage *out);

#endif
