/*
 * internal.h: what the store's own files share and nobody else sees: the store's state, its
 * databases, and the encodings of their keys.
 *
 * The store is one LMDB environment (hard rule: one environment per process) whose databases
 * are listed at the top of store.c; the files of this folder each own some of them (store.c the
 * registrations, snapshots and bodies; votes.c the rounds with other authorities; log.c the
 * transparency log; lifecycle.c health statements, revocations and deregistrations)
 * and reach them through struct store. Integers in keys and values are big-endian and fixed-width.
 */
#ifndef DIRAUTH_SERVER_STORE_INTERNAL_H
#define DIRAUTH_SERVER_STORE_INTERNAL_H

#include "kv/kv.h"
#include "schema/error.h"
#include "schema/note.h"
#include "server/store/store.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define STORE_ID_LEN          32
#define STORE_NS_LEN          2
#define STORE_RECORD_KEY_LEN  (STORE_NS_LEN + STORE_ID_LEN)
#define STORE_EPOCH_KEY_LEN   (STORE_NS_LEN + 8)
#define STORE_KEPT_KEY_LEN    (STORE_RECORD_KEY_LEN + 8)
#define STORE_REPLACED_LEN    (8 + STORE_KEPT_KEY_LEN)
#define STORE_EXPIRY_KEY_LEN  (8 + 8)                    /* u64 expires, u64 slot */
#define STORE_EXPIRY_OLD_LEN  (8 + STORE_RECORD_KEY_LEN) /* u64 expires, record key: format 2 */
#define STORE_DEFAULT_BATCH   256
#define STORE_QUEUE_PER_BATCH 4 /* batches unanswered (queued or taken) before submitters wait */
#define STORE_MAX_NAMESPACES  65535
#define STORE_PRUNE_CHUNK     4096 /* keys removed per write transaction while sealing */
#define STORE_USAGE_LEN       24   /* u64 records, bytes, endpoints; 16 before format 4 */
#define STORE_HEADER_MAX      (64 * 1024)
#define STORE_PATH_MAX        4096

/* One queued submission: a registration, or a statement of lifecycle.c. */
struct store_request {
	const struct store_registration *registration; /* NULL for a lifecycle statement */
	bool compact;       /* record_rebuilds for registration, found by the submitter's thread */
	int lifecycle_kind; /* lifecycle.c's kind of statement */
	const void *lifecycle;
	uint64_t epoch;  /* the caller's epoch */
	uint64_t sealed; /* the sealed epoch when its batch was taken (0 before any seal) */
	store_submission_done done;
	void *context;
	uint64_t stamp;
	int result;
	uint64_t commits_before; /* commits made when its batch ended: durable once these are */
	struct store_request *next;
};

struct store {
	struct kv_env *env;
	struct kv_db meta, namespaces, provider_keys, services, endpoints, records, previous, replaced,
	    expiry, usage, snapshots, bodies, latest;
	/* What other authorities sent, and this authority's part in each epoch (votes.c). */
	struct kv_db votes, signatures, consensus, evidence;
	/* The transparency log of each namespace (log.c). */
	struct kv_db log_hashes, log_leaves, log_epochs, log_state, log_checkpoints, log_partials,
	    log_witness;
	/* Health statements, revocations and deregistrations (lifecycle.c). */
	struct kv_db health, revocations, revocation_keys, deregistrations, statements;
	char path[STORE_PATH_MAX];
	size_t max_batch;
	size_t queue_limit;
	unsigned refuse_percent;

	pthread_mutex_t lock;   /* guards everything below */
	pthread_cond_t work;    /* the committer waits for requests or stopping */
	pthread_cond_t space;   /* submitters wait for room in the queue */
	pthread_cond_t settled; /* sealers wait for the batch in flight */
	pthread_cond_t decided; /* the answerer waits for decided requests or the committer's end */
	struct store_request *head, *tail;                 /* waiting for the committer */
	struct store_request *decided_head, *decided_tail; /* decided, in order, waiting for the answerer */
	uint64_t commits_made;                             /* the committer's commits so far */
	uint64_t commits_durable;                          /* how many of them are known synced */
	bool committer_ended;
	size_t queued;     /* requests waiting for the committer */
	size_t unanswered; /* requests taken by the committer and not yet answered */
	bool stopping;
	bool in_flight;
	bool have_sealed;
	uint64_t sealed;        /* raised by store_seal before it is committed */
	uint64_t highest_stamp; /* the highest the committer gave since the store was opened */
	bool seal_unwritten;    /* sealed is not yet committed (its commit is running or failed) */
	struct store_statistics statistics;
	pthread_t committer, answerer;

	pthread_mutex_t keys_lock;  /* guards the provider key cache */
	struct note_verifier *keys; /* ref i is keys[i - 1] */
	size_t key_count, key_cap;
};

/* A service's owner and highest sequence, as the services database keeps them (store.c). */
struct service_owner {
	uint16_t ns;
	char provider[STORE_NAME_MAX + 1];
	uint64_t highest_sequence;
};

bool store_service_decode(const struct kv_val *value, struct service_owner *out);

/* store.c: queues a request (a registration, or a lifecycle statement with its epoch) for the
 * committer, and the same waiting for its outcome. As store_registration_submit_async. */
int store_request_submit(struct store *store, const struct store_registration *registration,
                         int lifecycle_kind, const void *lifecycle, uint64_t epoch,
                         store_submission_done done, void *context);
int store_request_wait(struct store *store, const struct store_registration *registration, int lifecycle_kind,
                       const void *lifecycle, uint64_t epoch, uint64_t *stamp);

/* lifecycle.c, for the committer: applies one statement in a nested transaction of batch (all or
 * nothing), and whether it is taken above refuse_percent (revocations are). */
int lifecycle_apply(struct store *store, struct kv_txn *batch, const struct store_request *request);
bool lifecycle_takes_reserve(const struct store_request *request);

/* lifecycle.c, for apply_registration: fails t with DIRAUTH_ERR_REFUSED when a revocation covers
 * the registration's service or one of its endpoint ids, or a deregistration withdrew its
 * sequence. */
void lifecycle_check_registration(struct kv_txn *t, struct store *store, uint16_t ns,
                                  const struct store_registration *registration);

/* lifecycle.c, for the seal's pruning: deletes, in t, every health statement on the endpoints of
 * the service whose record (key: STORE_RECORD_KEY_LEN bytes, namespace and service id) expired,
 * and its entry among the statements. No view from the sealed epoch on lists the record, so none
 * lists them; a service registered again starts its endpoints' health anew. */
void lifecycle_forget_health(struct kv_txn *t, struct store *store, const uint8_t *record_key);

/* lifecycle.c, for the view: 1 when the version (service_id at sequence, with its note) is
 * withdrawn from epoch's view by a deregistration or a revocation stamped at or before epoch, 0
 * when not, or a negative error. */
int lifecycle_view_hides(struct kv_txn *t, struct store *store, uint16_t ns, const uint8_t *service_id,
                         uint64_t sequence, uint64_t epoch, const uint8_t *note, size_t note_len);

/* ---- encodings of keys ---- */

static inline void put_uint(uint8_t *p, uint64_t v, size_t width)
{
	for (size_t i = width; i-- > 0;) {
		p[i] = (uint8_t)v;
		v >>= 8;
	}
}

static inline uint64_t get_uint(const uint8_t *p, size_t width)
{
	uint64_t v = 0;
	for (size_t i = 0; i < width; i++)
		v = (v << 8) | p[i];
	return v;
}

static inline int check_name(const char *name, size_t *len)
{
	if (!name || !*name)
		return DIRAUTH_ERR_SYNTAX;
	size_t n = strnlen(name, STORE_NAME_MAX + 1);
	if (n > STORE_NAME_MAX)
		return DIRAUTH_ERR_BOUNDS;
	*len = n;
	return 0;
}

static inline void record_key(uint8_t key[STORE_RECORD_KEY_LEN], uint16_t ns, const uint8_t *service_id)
{
	put_uint(key, ns, STORE_NS_LEN);
	memcpy(key + STORE_NS_LEN, service_id, STORE_ID_LEN);
}

static inline void epoch_key(uint8_t key[STORE_EPOCH_KEY_LEN], uint16_t ns, uint64_t epoch)
{
	put_uint(key, ns, STORE_NS_LEN);
	put_uint(key + STORE_NS_LEN, epoch, 8);
}

/* The key of a record's entry in expiry: u64 expires then the record's u64 slot, or, for a
 * record without one (written before format 3), its record key. Returns the key's length. */
static inline size_t expiry_key(uint8_t key[STORE_EXPIRY_OLD_LEN], uint64_t expires, uint64_t slot,
                                const uint8_t *record_key_bytes)
{
	put_uint(key, expires, 8);
	if (slot) {
		put_uint(key + 8, slot, 8);
		return STORE_EXPIRY_KEY_LEN;
	}
	memcpy(key + 8, record_key_bytes, STORE_RECORD_KEY_LEN);
	return STORE_EXPIRY_OLD_LEN;
}

/* A record key then the u64 stamp of a kept version: the keys of previous. */
static inline void kept_key(uint8_t key[STORE_KEPT_KEY_LEN], const uint8_t *record_key_bytes, uint64_t stamp)
{
	memcpy(key, record_key_bytes, STORE_RECORD_KEY_LEN);
	put_uint(key + STORE_RECORD_KEY_LEN, stamp, 8);
}

/* u64 stamp of the next version then a key of previous: the keys of replaced. */
static inline void replaced_key(uint8_t key[STORE_REPLACED_LEN], uint64_t next_stamp, const uint8_t *kept)
{
	put_uint(key, next_stamp, 8);
	memcpy(key + 8, kept, STORE_KEPT_KEY_LEN);
}

/* The id of namespace name, or DIRAUTH_ERR_NOT_FOUND (not recorded). */
static inline int namespace_find(struct kv_txn *t, struct store *store, const char *name, size_t len,
                                 uint16_t *ns)
{
	struct kv_val value;
	if (!kv_txn_get(t, store->namespaces, name, len, &value))
		return t->rc ? t->rc : DIRAUTH_ERR_NOT_FOUND;
	if (value.len != STORE_NS_LEN) {
		kv_txn_fail(t, DIRAUTH_ERR_STORE);
		return DIRAUTH_ERR_STORE;
	}
	*ns = (uint16_t)get_uint(value.data, STORE_NS_LEN);
	return 0;
}

/* The preamble of a read of one namespace: checks name (DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_BOUNDS:
 * t not begun), begins the read transaction t and finds the namespace's id. On 0, t is open and
 * the caller ends it; on any other return t is ended (or never began): DIRAUTH_ERR_NOT_FOUND (no
 * namespace of that name was ever recorded; t.rc is 0), or t's error (DIRAUTH_ERR_STORE,
 * DIRAUTH_ERR_NOMEM). */
static inline int namespace_read_begin(struct store *store, const char *name, struct kv_txn *t, uint16_t *ns)
{
	size_t len;
	int rc = check_name(name, &len);
	if (rc)
		return rc;
	kv_txn_begin(store->env, t, KV_READ);
	if ((rc = namespace_find(t, store, name, len, ns)) != 0)
		kv_txn_abort(t);
	return rc;
}

/* The id of namespace name, given one if it has none (write transactions). */
static inline void namespace_intern(struct kv_txn *t, struct store *store, const char *name, size_t len,
                                    uint16_t *ns)
{
	if (namespace_find(t, store, name, len, ns) != DIRAUTH_ERR_NOT_FOUND || t->rc)
		return;
	struct kv_val value;
	uint64_t next = 1;
	if (kv_txn_get(t, store->meta, "next_ns", 7, &value)) {
		if (value.len != STORE_NS_LEN)
			kv_txn_fail(t, DIRAUTH_ERR_STORE);
		else
			next = get_uint(value.data, STORE_NS_LEN);
	}
	if (next > STORE_MAX_NAMESPACES)
		kv_txn_fail(t, DIRAUTH_ERR_FULL);
	uint8_t field[STORE_NS_LEN];
	put_uint(field, next, STORE_NS_LEN);
	kv_txn_put(t, store->namespaces, name, len, field, sizeof field);
	put_uint(field, next + 1 > STORE_MAX_NAMESPACES ? STORE_MAX_NAMESPACES + 1 : next + 1, STORE_NS_LEN);
	kv_txn_put(t, store->meta, "next_ns", 7, field, sizeof field);
	*ns = (uint16_t)next;
}

#endif
