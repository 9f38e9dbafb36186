/*
 * internal.h: what the store's own files share and nobody else sees: the store's state (the
 * engine and every table's databases), the namespaces every table keys by, the services row that
 * two tables read, and the encodings of their keys.
 *
 * The store is one LMDB environment (hard rule: one environment per process), opened by the
 * engine (engine.h) with the databases of every table: each table file owns some of them and
 * describes them at its top (registrations.c, statements.c, snapshots.c, votes.c, tlog_table.c),
 * lists them for store_open (registrations_databases ...), and reaches them through struct
 * store. The namespaces database is everyone's: name -> ns, a
 * namespace's u16 id, assigned at its first use from meta "next_ns". Integers in keys and values
 * are big-endian and fixed-width.
 */
#ifndef DIRAUTH_SERVER_STORE_INTERNAL_H
#define DIRAUTH_SERVER_STORE_INTERNAL_H

#include "kv/kv.h"
#include "base/error.h"
#include "schema/note.h"
#include "server/store/engine.h"
#include "server/store/store.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define STORE_ID_LEN              32
#define STORE_NS_LEN              2
#define STORE_RECORD_KEY_LEN      (STORE_NS_LEN + STORE_ID_LEN)
#define STORE_EPOCH_KEY_LEN       (STORE_NS_LEN + 8)
#define STORE_KEPT_KEY_LEN        (STORE_RECORD_KEY_LEN + 8)
#define STORE_REPLACED_LEN        (8 + STORE_KEPT_KEY_LEN)
#define STORE_EXPIRY_KEY_LEN      (8 + 8)                    /* u64 expires, u64 slot */
#define STORE_EXPIRY_OLD_LEN      (8 + STORE_RECORD_KEY_LEN) /* u64 expires, record key: format 2 */
#define STORE_DEFAULT_BATCH       256
#define STORE_MAX_NAMESPACES      65535
#define STORE_PRUNE_CHUNK         4096 /* keys removed per write transaction while sealing */
#define STORE_USAGE_LEN           24   /* u64 records, bytes, endpoints; 16 before format 4 */
#define STORE_HEADER_MAX          (64 * 1024)
#define STORE_PATH_MAX            4096
#define STORE_TABLE_DATABASES_MAX 16 /* the databases one table may own */

struct store {
	struct store_engine *engine;
	struct kv_env *env; /* the engine's */
	struct kv_db meta;  /* the engine's; each table keeps its counters under keys of its own */
	struct kv_db namespaces;
	/* registrations.c */
	struct kv_db provider_keys, services, endpoints, records, previous, replaced, expiry, usage;
	/* snapshots.c */
	struct kv_db snapshots, bodies, latest;
	/* votes.c: what other authorities sent, and this authority's part in each epoch */
	struct kv_db votes, signatures, consensus, evidence;
	/* tlog_table.c: the transparency log of each namespace */
	struct kv_db log_hashes, log_leaves, log_epochs, log_state, log_checkpoints, log_partials,
	    log_witness;
	/* Bumped after each commit that stores a checkpoint note or publishes one
	 * (store_log_generation). */
	atomic_uint_fast64_t log_generation;
	/* statements.c: health statements, revocations and deregistrations */
	struct kv_db health, revocations, revocation_keys, deregistrations, statements;
	char path[STORE_PATH_MAX];

	/* registrations.c's cache of provider keys */
	pthread_mutex_t keys_lock; /* guards the provider key cache */
	/* snapshots.c: a diff file's rename against the sweep of diffs after retention */
	pthread_mutex_t diffs_lock;
	struct note_verifier *keys; /* ref i is keys[i - 1] */
	size_t key_count, key_cap;
};

/* A service's owner and highest sequence, as the services database keeps them: ns, u8 length +
 * provider key name, u64 highest sequence (registrations.c writes it; statements.c reads it). */
struct service_owner {
	uint16_t ns;
	char provider[STORE_NAME_MAX + 1];
	uint64_t highest_sequence;
};

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

static inline bool store_service_decode(const struct kv_val *value, struct service_owner *out)
{
	if (value->len < STORE_NS_LEN + 1 + 8)
		return false;
	size_t name_len = value->data[STORE_NS_LEN];
	if (value->len != STORE_NS_LEN + 1 + name_len + 8)
		return false;
	out->ns = (uint16_t)get_uint(value->data, STORE_NS_LEN);
	memcpy(out->provider, value->data + STORE_NS_LEN + 1, name_len);
	out->provider[name_len] = 0;
	out->highest_sequence = get_uint(value->data + STORE_NS_LEN + 1 + name_len, 8);
	return true;
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
