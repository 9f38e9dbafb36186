/*
 * store.h: dirauthd's durable state, on kv/ (one LMDB environment).
 *
 * One LMDB environment per process, default (synchronous) durability: when a write call
 * returns 0, its transaction has been committed and fsynced. Submissions from many HTTP
 * threads are group-committed: each caller queues its request and waits; one committer thread
 * applies every queued request in one write transaction, checking each against the state the
 * earlier ones in the batch left (so a batch behaves exactly like the same requests one after
 * another), commits once, and wakes every caller with its own result. Durability therefore
 * does not cap the submission rate at the fsync rate.
 *
 * What is kept (never deleted unless said):
 *   - services: service id -> namespace, provider key name, highest accepted sequence, and the
 *     latest accepted registration note (the note is replaced by a newer one; the service and
 *     its highest sequence are never deleted, so a sequence can only grow: hard rule 2)
 *   - endpoints: endpoint id -> the service that first registered it (never reassigned)
 *   - snapshots: (namespace, epoch) -> signed header note and uncompressed body
 *   - latest epoch per namespace (only grows)
 *
 * Threading: every function is safe from any thread. Pointers handed to callbacks are valid only
 * during the callback.
 */
#ifndef DIRAUTH_SERVER_STORE_STORE_H
#define DIRAUTH_SERVER_STORE_STORE_H

#include "schema/buffer.h"

#include <stddef.h>
#include <stdint.h>

struct store;

struct store_options {
	const char *path; /* directory, created 0700 with any missing parents */
	size_t map_size;  /* bytes; 0 means 1 GiB */
	size_t max_batch; /* submissions per commit; 0 means 256 */
};

/* Longest namespace or provider name the store accepts (keys are at most 511 bytes, KV_KEY_MAX). */
#define STORE_NAME_MAX 255

/* Opens (creating if needed) the store and starts its committer thread. Returns 0,
 * DIRAUTH_ERR_CONFIG (no path), DIRAUTH_ERR_IO (the directory cannot be made or opened),
 * DIRAUTH_ERR_STORE, DIRAUTH_ERR_NOMEM. */
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
	const uint8_t *endpoint_ids; /* endpoint_count * 32 bytes */
	size_t endpoint_count;
	const uint8_t *note; /* the signed registration note as received */
	size_t note_len;
};

/* Durably records r, group-committed with concurrent submissions. Returns 0 once committed;
 * DIRAUTH_ERR_ROLLBACK when r's sequence is not greater than the highest accepted for the
 * service; DIRAUTH_ERR_COLLISION when the service id belongs to another provider or namespace,
 * or an endpoint id belongs to another service; DIRAUTH_ERR_FULL when the map is full;
 * DIRAUTH_ERR_SYNTAX when a field is missing, DIRAUTH_ERR_BOUNDS when a name is longer than
 * STORE_NAME_MAX or the note longer than 4 GiB; DIRAUTH_ERR_STORE (also once store_close has
 * begun). Nothing is changed unless 0 is returned. r and what it points to are only read, and
 * only until the call returns. */
int store_registration_submit(struct store *store, const struct store_registration *r);

/* Highest accepted sequence of a service. Returns 0 or DIRAUTH_ERR_NOT_FOUND, DIRAUTH_ERR_STORE,
 * DIRAUTH_ERR_SYNTAX for a NULL argument. */
int store_service_sequence(struct store *store, const uint8_t service_id[32], uint64_t *sequence);

/* The owner of a service id: the namespace and provider key name of its first registration.
 * Returns 0, DIRAUTH_ERR_NOT_FOUND, DIRAUTH_ERR_STORE. */
int store_service_owner(struct store *store, const uint8_t service_id[32],
                        char namespace_name[STORE_NAME_MAX + 1], char provider[STORE_NAME_MAX + 1]);

/* Calls visit for each service of namespace_name whose latest registration has expires > now,
 * in ascending service id order, inside one read transaction. A non-zero return from visit stops
 * the walk and is returned. Otherwise returns 0 (also for an unknown namespace),
 * DIRAUTH_ERR_SYNTAX (missing argument), DIRAUTH_ERR_BOUNDS (name too long), DIRAUTH_ERR_STORE
 * (including a damaged record). */
typedef int (*store_registration_visitor)(void *context, const uint8_t service_id[32], const uint8_t *note,
                                          size_t note_len);
int store_registration_foreach(struct store *store, const char *namespace_name, uint64_t now,
                               store_registration_visitor visit, void *context);

/* Durably stores a published snapshot and makes epoch the namespace's latest, in one transaction.
 * Refuses an epoch not greater than the namespace's latest (DIRAUTH_ERR_ROLLBACK). Also returns
 * DIRAUTH_ERR_SYNTAX (missing argument), DIRAUTH_ERR_BOUNDS (name too long, header over 4 GiB),
 * DIRAUTH_ERR_FULL, DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_STORE. Nothing is changed unless 0 is
 * returned. */
int store_snapshot_put(struct store *store, const char *namespace_name, uint64_t epoch, const uint8_t *header,
                       size_t header_len, const uint8_t *body, size_t body_len);

/* Copies a stored snapshot into header and body (either may be NULL; each buffer is replaced).
 * With body NULL this is a header-only read: the body's bytes are neither copied nor read (the
 * value is mapped, and only its length prefix and header are touched). Returns 0,
 * DIRAUTH_ERR_NOT_FOUND, DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_STORE. */
int store_snapshot_get(struct store *store, const char *namespace_name, uint64_t epoch, struct buffer *header,
                       struct buffer *body);

/* Latest stored epoch of a namespace. Returns 0 or DIRAUTH_ERR_NOT_FOUND, DIRAUTH_ERR_SYNTAX,
 * DIRAUTH_ERR_BOUNDS, DIRAUTH_ERR_STORE. */
int store_snapshot_latest(struct store *store, const char *namespace_name, uint64_t *epoch);

/* Hot copy of the environment into an existing empty directory (compacting), as one data file
 * of mode 0600, fsynced before return. Returns 0, DIRAUTH_ERR_EXISTS (the directory already holds
 * a data file), DIRAUTH_ERR_IO (the directory is missing or a write failed), DIRAUTH_ERR_STORE. */
int store_backup(struct store *store, const char *directory);

/* Counters since store_open, for tests and metrics. */
struct store_statistics {
	uint64_t submissions; /* registrations answered by the committer, accepted or refused */
	uint64_t batches;     /* write transactions the committer ran, one per batch */
	uint64_t commits;     /* of those, the ones committed (a batch refused entirely is not) */
};

/* Copies the current counters into out. Returns 0, or DIRAUTH_ERR_SYNTAX for a NULL argument. */
int store_statistics(struct store *store, struct store_statistics *out);

#endif
