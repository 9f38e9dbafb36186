/*
 * registrations.h: the registrations table of the store: what providers registered, per
 * namespace and service, and the views of the sealed epoch that snapshots are built from.
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
 *
 * Epochs, stamps and the seal. Snapshot E holds, per service, the latest registration stamped E or
 * lower that has not expired at E's valid-after. A registration is stamped by the engine's
 * committer (engine.h) with the epoch the caller names (the first epoch whose cut-off has not
 * passed by its clock), or with one past the sealed epoch, or with the highest stamp given since
 * the store was opened, if that is later: so every version an epoch holds was within the
 * namespace's bounds together (below). store_seal(E) (store.h) fixes the content of snapshot E:
 * every commit after it is stamped E + 1 or later, and it waits for commits already under way. So
 * the content of a sealed epoch can be read again, byte for byte, after any crash: a snapshot
 * rebuilt after a restart is the one that was being built (and its header is the one the signer
 * may already have signed). Only the sealed epoch is readable this way (store_view_foreach).
 *
 * Bounds. Each submission names its namespace's bounds (records, and bytes of the records'
 * notes with their framing plus any room kept per endpoint they list): a registration that would
 * take the namespace past them is refused before anything is stored, so every stamp given can be
 * kept. The map has a fixed size (store_options.map_size); registrations are refused once it is
 * fuller than store_options.refuse_percent, which leaves the rest to publication and to the work
 * that frees space (retention, expiry).
 *
 * Threading: every function is safe from any thread. Pointers handed to visitors are valid only
 * during the call.
 */
#ifndef DIRAUTH_SERVER_STORE_REGISTRATIONS_H
#define DIRAUTH_SERVER_STORE_REGISTRATIONS_H

#include "kv/kv.h"
#include "base/buffer.h"
#include "schema/note.h"
#include "schema/registration.h"
#include "server/store/engine.h"
#include "server/store/statements.h"
#include "server/store/store.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes a record takes in a snapshot body besides its note: its "record <id> <length>" line. */
#define STORE_RECORD_FRAMING 78

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

/* Queues r for the next group commit; done is called with the outcome. r and everything it
 * points to must stay valid until done is called. While the store holds its most unanswered
 * requests (four batches of max_batch, queued or being committed), the call waits
 * until the answerer has answered a batch. Outcomes: 0 once committed (durable);
 * DIRAUTH_ERR_ROLLBACK when r's sequence is not greater than the highest accepted for the
 * service; DIRAUTH_ERR_COLLISION when the service id belongs to another provider or namespace,
 * or an endpoint id belongs to another service; DIRAUTH_ERR_REFUSED when a revocation covers the
 * service or one of its endpoint ids, or a deregistration withdrew its sequence (statements.h:
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

/* What a statement about a service needs to know of it (store_service_state). */
struct store_service_state {
	char namespace_name[STORE_NAME_MAX + 1]; /* the owner: the namespace of its first registration */
	char provider[STORE_NAME_MAX + 1];       /* and its provider key name */
	bool current; /* its registration of the highest sequence accepted is kept (note holds it) */
	enum store_withdrawal withdrawal; /* of that registration, naming the endpoint ids given */
};

/* Reads in one read transaction what store_service_owner, store_registration_get (of the highest
 * sequence accepted, into note, replaced) and store_registration_withdrawn (for that sequence and
 * endpoint_ids, endpoint_count of 32 bytes) would read one by one, so that they agree. Returns 0,
 * DIRAUTH_ERR_NOT_FOUND (no such service), DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_NOMEM,
 * DIRAUTH_ERR_STORE. */
int store_service_state(struct store *store, const uint8_t service_id[32], const uint8_t *endpoint_ids,
                        size_t endpoint_count, struct store_service_state *out, struct buffer *note);

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
 * (statements.h); in ascending service id order, inside one read transaction. A non-zero return
 * from visit stops the walk and is returned. Otherwise returns 0 (also for an unknown
 * namespace); DIRAUTH_ERR_STALE (epoch is not the sealed epoch); DIRAUTH_ERR_SYNTAX (missing
 * argument), DIRAUTH_ERR_BOUNDS (name too long), DIRAUTH_ERR_STORE (including a damaged record). */
int store_view_foreach(struct store *store, const char *namespace_name, uint64_t epoch, uint64_t valid_after,
                       store_record_visitor visit, void *context);

/* store_view_foreach from the first service id above after (NULL: from the first), so that the
 * view can be read a page at a time, each page in a read transaction of its own: the sealed view
 * is the same in each (the seal above), as long as the epoch is still the sealed one. Same
 * returns. */
int store_view_foreach_after(struct store *store, const char *namespace_name, uint64_t epoch,
                             uint64_t valid_after, const uint8_t after[32], store_record_visitor visit,
                             void *context);

/* Copies the signed note of a service's registration of that sequence into note (replaced):
 * its latest, or a version an epoch not yet sealed past may still hold. Returns 0,
 * DIRAUTH_ERR_NOT_FOUND (no such service, namespace or sequence kept), DIRAUTH_ERR_SYNTAX,
 * DIRAUTH_ERR_BOUNDS, DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_STORE. */
int store_registration_get(struct store *store, const char *namespace_name, const uint8_t service_id[32],
                           uint64_t sequence, struct buffer *note);

/* Called per record of the view with the statements held for its service: per endpoint id (of
 * any version of the service: the caller keeps those its record lists) the latest stamped at or
 * before the epoch, ascending by endpoint id. */
typedef int (*store_lifecycle_visitor)(void *context, const struct store_record *record,
                                       const struct store_statement *health, size_t health_count);

/* store_view_foreach (the same records, order, bounds and errors: the epoch must be the sealed
 * one, DIRAUTH_ERR_STALE otherwise), each record with its service's health statements. A
 * non-zero return from visit stops the walk and is returned. Also DIRAUTH_ERR_NOMEM. */
int store_lifecycle_view_foreach(struct store *store, const char *namespace_name, uint64_t epoch,
                                 uint64_t valid_after, store_lifecycle_visitor visit, void *context);

/* What a namespace holds now (its latest registrations, expired or not yet removed). */
struct store_namespace_usage {
	uint64_t records;
	uint64_t bytes;     /* sum of note lengths plus STORE_RECORD_FRAMING each */
	uint64_t endpoints; /* endpoints the records list */
};

/* Returns 0 (zeros for an unknown namespace), DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_BOUNDS,
 * DIRAUTH_ERR_STORE. */
int store_namespace_usage(struct store *store, const char *namespace_name, struct store_namespace_usage *out);

/* ---- for the store's own files ---- */

/* The table's databases, for store_open to open with the others: fills out (room for
 * STORE_TABLE_DATABASES_MAX) with their names and store's handles of them; returns the count. */
size_t registrations_databases(struct store *store, struct kv_database *out);

/* Loads the provider keys committed beyond the table's cache (at open, and after each commit).
 * Returns 0, DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_STORE. */
int registrations_keys_refresh(struct store *store);

/* Removes what the sealed epoch (epoch, whose valid-after is valid_after) can never hold again:
 * versions replaced by registrations it holds, and records expired when it starts, with what the
 * statements table keeps of them (statements_forget_health). Returns 0, DIRAUTH_ERR_FULL,
 * DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_STORE. */
int registrations_prune(struct store *store, uint64_t epoch, uint64_t valid_after);

/* Brings the usage counters of a store of a format before 4 up to format 4, in t (the endpoints
 * of each namespace's records, counted from the records). Fails t on error. */
void registrations_upgrade_usage(struct kv_txn *t, struct store *store);

#endif
