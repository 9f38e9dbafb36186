/*
 * statements.h: the statements table of the store: what it keeps of an endpoint's life beside
 * its registrations: health statements, revocations and deregistrations (schema/health.h,
 * revocation.h, deregistration.h), and the revocations of the sealed epoch's view that consensus
 * method 2 is computed from (its records with their health: registrations.h,
 * store_lifecycle_view_foreach).
 *
 * What is kept, and for how long:
 *   - health: per endpoint, the latest accepted statement (its sequence only grows, whichever of
 *     the provider and the endpoint key signed it), and the version the sealed epoch still needs
 *     while a later-stamped one replaces it. So at most a few statements of at most
 *     HEALTH_MAX_BYTES per endpoint ever registered: the count is bounded by the endpoints.
 *   - revocations: one per target (a service, or an endpoint of it), the first accepted, never
 *     deleted (hard rule 4), with the (key, sequence) of every revocation accepted; none of an
 *     endpoint once its service is revoked whole, which revokes the endpoint too. A revocation
 *     must name a service or endpoint registered here, so there are at most as many as services
 *     and endpoints ever registered, each at most REVOCATION_MAX_BYTES (2 KiB), whether a provider
 *     or an operator signed it.
 *   - deregistrations: per service, the latest (the highest sequence withdrawn), and the earlier
 *     one the sealed epoch still needs while a later-stamped one replaces it.
 *
 * Stamps and the seal, as for registrations (registrations.h): every statement is stamped with the
 * caller's epoch, or one past the sealed epoch if that is later, so one accepted after a seal
 * never changes the sealed epoch's view. Revocations and deregistrations take effect in the view
 * of their stamp's epoch and every later one: store_view_foreach leaves out a registration
 * withdrawn by a deregistration stamped at or before the epoch (its sequence at most the one
 * withdrawn), and one whose service, or one of whose endpoints, a revocation stamped at or before
 * the epoch revokes. The committer refuses, in the same transaction that would store it, any
 * later registration naming a revoked service or endpoint, or a sequence a deregistration
 * withdrew (DIRAUTH_ERR_REFUSED: store_registration_withdrawn says which), so neither comes back
 * by a replay, a higher sequence or a peer's vote, also after a restart. A store restored from a
 * backup taken before a revocation lacks it: the authority learns it again from its peers' votes
 * and the previous snapshot (consensus.md, "Method 2"), through store_revocation_submit.
 *
 * Statements are submitted like registrations (group-committed by the engine's committer,
 * engine.h, durable when the outcome 0 is reported); each waiting call is its asynchronous twin
 * waited on. The store checks no signature: its callers (server/intake)
 * check a statement before they submit it. Threading as store.h.
 */
#ifndef DIRAUTH_SERVER_STORE_STATEMENTS_H
#define DIRAUTH_SERVER_STORE_STATEMENTS_H

#include "base/buffer.h"
#include "schema/note.h"
#include "server/store/engine.h"
#include "server/store/store.h"

#include <stddef.h>
#include <stdint.h>

/* A health statement, checked by the caller (namespace, endpoint listed by the service's
 * registration, signer, clock skew). Everything pointed to must stay valid until done. */
struct store_health {
	const char *namespace_name;
	const uint8_t *service_id;  /* 32 bytes */
	const uint8_t *endpoint_id; /* 32 bytes */
	uint64_t issued_at;
	uint64_t sequence;     /* >= 1 */
	const uint8_t *digest; /* SHA-256 of the note, 32 bytes */
	const uint8_t *note;   /* the signed statement note, 1..HEALTH_MAX_BYTES */
	size_t note_len;
	uint64_t epoch; /* the first epoch whose cut-off has not passed, by the caller's clock */
};

/* Queues h for the next group commit; done is called with the outcome: 0 once durable (stamp: the
 * first epoch whose view holds it); DIRAUTH_ERR_ROLLBACK when its sequence is not above the last
 * accepted for the endpoint; DIRAUTH_ERR_FULL (the map is fuller than refuse_percent);
 * DIRAUTH_ERR_STORE. Nothing is changed unless the outcome is 0. Returns 0 when queued, or without
 * calling done DIRAUTH_ERR_SYNTAX (a field missing or out of range), DIRAUTH_ERR_BOUNDS (a name or
 * the note too long), DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_STORE (closing). */
int store_health_submit_async(struct store *store, const struct store_health *h, store_submission_done done,
                              void *context);

/* store_health_submit_async, waiting; returns the outcome, *stamp (may be NULL) the stamp. */
int store_health_submit(struct store *store, const struct store_health *h, uint64_t *stamp);

/* A revocation, checked by the caller (signature, who may revoke, the target registered here). */
struct store_revocation {
	const char *namespace_name;
	const uint8_t *service_id;       /* 32 bytes */
	const uint8_t *endpoint_id;      /* 32 bytes, or NULL: the whole service */
	const struct note_verifier *key; /* the key that signed it (its key line) */
	uint64_t sequence;               /* the signer's number for it, >= 1 */
	int in_order;          /* 1: the sequence must be above every one accepted from key (a provider or
	                          operator posting its own); 0: only unused (a revocation learned from a peer,
	                          which may arrive in any order) */
	const uint8_t *digest; /* SHA-256 of the note */
	const uint8_t *note;   /* the signed revocation note, 1..REVOCATION_MAX_BYTES */
	size_t note_len;
	uint64_t epoch;
};

/* Queues r; done gets: 0 once durable; DIRAUTH_ERR_ROLLBACK when (key, sequence) was accepted
 * before, or, with in_order, a sequence at least as high; DIRAUTH_ERR_EXISTS when the target is
 * revoked already (by this or another revocation), or is an endpoint of a service revoked whole
 * (nothing about a revoked service is taken again); DIRAUTH_ERR_FULL only when the map itself is
 * full (a revocation is taken above refuse_percent: it must never wait for space);
 * DIRAUTH_ERR_STORE. Returns as store_health_submit_async. */
int store_revocation_submit_async(struct store *store, const struct store_revocation *r,
                                  store_submission_done done, void *context);
int store_revocation_submit(struct store *store, const struct store_revocation *r, uint64_t *stamp);

/* Whether a revocation of the target is kept: 0 (note, may be NULL, gets the note), or
 * DIRAUTH_ERR_NOT_FOUND; DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_BOUNDS, DIRAUTH_ERR_NOMEM,
 * DIRAUTH_ERR_STORE. endpoint_id NULL: the whole service. */
int store_revocation_find(struct store *store, const char *namespace_name, const uint8_t service_id[32],
                          const uint8_t *endpoint_id, struct buffer *note);

/* The service that first named endpoint_id (an endpoint id is never reassigned), into service_id.
 * Returns 0, DIRAUTH_ERR_NOT_FOUND, DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_STORE. */
int store_endpoint_service(struct store *store, const uint8_t endpoint_id[32], uint8_t service_id[32]);

/* A deregistration, checked by the caller (signature, the service's provider). */
struct store_deregistration {
	const char *namespace_name;
	const uint8_t *service_id; /* 32 bytes */
	uint64_t sequence;         /* the highest registration sequence withdrawn, >= 1 */
	const uint8_t *digest;     /* SHA-256 of the note */
	const uint8_t *note;       /* the signed deregistration note */
	size_t note_len;
	uint64_t epoch;
};

/* Queues d; done gets: 0 once durable, stamp the first epoch whose view lacks the service (so the
 * last that may list it is stamp - 1); DIRAUTH_ERR_NOT_FOUND when the service was never
 * registered in the namespace; DIRAUTH_ERR_ROLLBACK when the sequence is below the service's
 * highest registration sequence (it would withdraw nothing that is listed) or not above an
 * earlier deregistration's; DIRAUTH_ERR_FULL; DIRAUTH_ERR_STORE. Returns as
 * store_health_submit_async. */
int store_deregistration_submit_async(struct store *store, const struct store_deregistration *d,
                                      store_submission_done done, void *context);
int store_deregistration_submit(struct store *store, const struct store_deregistration *d, uint64_t *stamp);

/* Why the committer refuses a registration (DIRAUTH_ERR_REFUSED from store_registration_submit). */
enum store_withdrawal {
	STORE_WITHDRAWN_NONE,         /* neither: it is not refused for this */
	STORE_WITHDRAWN_REVOKED,      /* the service, or one of the endpoint ids, is revoked */
	STORE_WITHDRAWN_DEREGISTERED, /* a deregistration withdrew the service up to this sequence */
};

/* Whether a registration of service_id at sequence, naming endpoint_count endpoint ids
 * (endpoint_ids, 32 bytes each), would be refused as revoked or deregistered; revoked first.
 * Returns 0 with *out set, DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_BOUNDS, DIRAUTH_ERR_STORE. */
int store_registration_withdrawn(struct store *store, const char *namespace_name,
                                 const uint8_t service_id[32], uint64_t sequence, const uint8_t *endpoint_ids,
                                 size_t endpoint_count, enum store_withdrawal *out);

/* The note of a kept health statement or revocation of namespace_name whose SHA-256 is digest
 * (what a peer fetches for a vote's line), into note (replaced). A statement replaced is kept
 * while the sealed epoch's view holds it. Returns 0, DIRAUTH_ERR_NOT_FOUND (also one of another
 * namespace), DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_BOUNDS, DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_STORE. */
int store_statement_get(struct store *store, const char *namespace_name, const uint8_t digest[32],
                        struct buffer *note);

/* A health statement of the sealed view, borrowed for the visitor's call. */
struct store_statement {
	const uint8_t *endpoint_id; /* 32 bytes */
	uint64_t issued_at;
	uint64_t sequence;
	const uint8_t *digest;
	const uint8_t *note;
	size_t note_len;
};

/* A revocation of the sealed view, borrowed for the visitor's call. */
struct store_listed_revocation {
	const uint8_t *service_id;  /* 32 bytes */
	const uint8_t *endpoint_id; /* 32 bytes, or NULL: the whole service */
	uint64_t stamp;             /* the first epoch whose view holds it */
	const uint8_t *digest;
	const uint8_t *note;
	size_t note_len;
};

typedef int (*store_revocation_visitor)(void *context, const struct store_listed_revocation *revocation);

/* Calls visit for every revocation of namespace_name stamped at or before epoch (the sealed
 * epoch), in target order (service id; the whole service before its endpoints; endpoint id),
 * inside one read transaction. A non-zero return from visit stops the walk and is returned.
 * Otherwise 0 (also for an unknown namespace), DIRAUTH_ERR_STALE (not the sealed epoch),
 * DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_BOUNDS, DIRAUTH_ERR_STORE. */
int store_revocation_view_foreach(struct store *store, const char *namespace_name, uint64_t epoch,
                                  store_revocation_visitor visit, void *context);

/* ---- for the store's own files ---- */

/* The table's databases, for store_open to open with the others: fills out (room for
 * STORE_TABLE_DATABASES_MAX) with their names and store's handles of them; returns the count. */
size_t statements_databases(struct store *store, struct kv_database *out);

/* For the committer, in the transaction t that would store a registration (of namespace id ns,
 * service_id at sequence, naming endpoint_count endpoint ids): fails t with DIRAUTH_ERR_REFUSED
 * when a revocation covers its service or one of its endpoint ids, or a deregistration withdrew
 * its sequence. */
void statements_refuse_registration(struct kv_txn *t, struct store *store, uint16_t ns,
                                    const uint8_t *service_id, uint64_t sequence, const uint8_t *endpoint_ids,
                                    size_t endpoint_count);

/* Whether a registration of service_id (namespace id ns) at sequence, naming endpoint_count
 * endpoint ids, is withdrawn, read in t (store_registration_withdrawn; t fails on a store error). */
enum store_withdrawal statements_withdrawal(struct kv_txn *t, struct store *store, uint16_t ns,
                                            const uint8_t *service_id, uint64_t sequence,
                                            const uint8_t *endpoint_ids, size_t endpoint_count);

/* For the view: 1 when the version (service_id at sequence, with its note) is withdrawn from
 * epoch's view by a deregistration or a revocation stamped at or before epoch, 0 when not, or a
 * negative error. */
int statements_view_hides(struct kv_txn *t, struct store *store, uint16_t ns, const uint8_t *service_id,
                          uint64_t sequence, uint64_t epoch, const uint8_t *note, size_t note_len);

/* For the view: the health statements of service_id (namespace id ns) that epoch's view holds,
 * into *items (count *count, room *cap; grown with realloc, the caller frees; borrowed from t).
 * Returns 0, DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_STORE. */
int statements_health_held(struct kv_txn *t, struct store *store, uint16_t ns, const uint8_t *service_id,
                           uint64_t epoch, struct store_statement **items, size_t *count, size_t *cap);

/* For the seal's pruning: deletes, in t, every health statement on the endpoints of the service
 * whose record (key: namespace id and service id) expired, and its entry among the statements.
 * No view from the sealed epoch on lists the record, so none lists them; a service registered
 * again starts its endpoints' health anew. */
void statements_forget_health(struct kv_txn *t, struct store *store, const uint8_t *record_key);

#endif
