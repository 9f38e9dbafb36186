/*
 * kv.h: the small layer under dirauth's two LMDB users (dirauthd's store and the signer's
 * ledger), so that each reads as straight sequences of reads, checks and writes.
 *
 * - kv_env_open creates the directory (0700) and opens an environment with MDB_NOTLS and the
 *   default, synchronous durability: no flag that weakens sync is ever set, so a committed
 *   write transaction is on disk when kv_txn_commit returns 0.
 * - struct kv_txn keeps the first error of a transaction ("sticky"): after a failure every
 *   later get or put is a no-op and commit aborts and returns that first error. Call sites
 *   need no error check between steps.
 * - LMDB's return codes become the project's in one place (kv_error_from_lmdb).
 *
 * Only store.c and ledger.c include this header (and through it lmdb.h).
 */
#ifndef DIRAUTH_KV_KV_H
#define DIRAUTH_KV_KV_H

#include <lmdb.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* MDB_MAP_FULL -> DIRAUTH_ERR_FULL, MDB_NOTFOUND -> DIRAUTH_ERR_NOT_FOUND, ENOMEM ->
 * DIRAUTH_ERR_NOMEM, anything else -> DIRAUTH_ERR_STORE; 0 stays 0. */
int kv_error_from_lmdb(int rc);

/* As kv_error_from_lmdb, but a plain errno value (from opening or copying files) is
 * DIRAUTH_ERR_IO. */
int kv_error_from_system(int rc);

/* A named database to open (created if missing) with the environment. */
struct kv_database {
	const char *name;
	MDB_dbi *dbi;
};

/* Creates directory (and missing parents, 0700) and opens the environment in it with room for
 * map_size bytes, then opens the databases. Returns 0 with *out set, DIRAUTH_ERR_IO,
 * DIRAUTH_ERR_STORE, DIRAUTH_ERR_NOMEM. */
int kv_env_open(const char *directory, size_t map_size, const struct kv_database *databases, size_t count,
                MDB_env **out);

struct kv_txn {
	MDB_txn *txn;
	int rc; /* first failure as a dirauth error; 0 while everything went well */
};

/* Begins a transaction (nested in parent when parent is not NULL; flags as mdb_txn_begin). A
 * parent that already failed hands its error down, so the whole sequence becomes a no-op. */
void kv_txn_begin(MDB_env *env, struct kv_txn *t, struct kv_txn *parent, unsigned flags);

/* Records rc as the transaction's error unless one is already recorded. rc 0 does nothing. */
void kv_txn_fail(struct kv_txn *t, int rc);

/* Looks key up. Returns true when found (value then points into the map, valid until the
 * transaction ends); false when absent or after any failure, the failure being recorded. */
bool kv_txn_get(struct kv_txn *t, MDB_dbi dbi, const void *key, size_t key_len, MDB_val *value);

/* Stores key -> value (replacing). */
void kv_txn_put(struct kv_txn *t, MDB_dbi dbi, const void *key, size_t key_len, const void *value,
                size_t value_len);

/* Ends the transaction without keeping anything. */
void kv_txn_abort(struct kv_txn *t);

/* Commits when nothing failed, aborts otherwise. Returns the transaction's outcome; for a
 * top-level write transaction, 0 means durable. */
int kv_txn_commit(struct kv_txn *t);

/* Big-endian fixed-width integers, the encoding of every stored number. */
void kv_put_u64(uint8_t *p, uint64_t v);
uint64_t kv_get_u64(const uint8_t *p);

#endif
