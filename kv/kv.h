/*
 * kv.h: the key-value layer under dirauth's two databases (dirauthd's store and the signer's
 * ledger). It is the only module that knows LMDB: nothing here names an LMDB type, and no other
 * module includes lmdb.h or calls it.
 *
 * Model. An environment (struct kv_env) is a directory holding one memory-mapped file with
 * named databases in it. A database maps byte-string keys (1 to KV_KEY_MAX bytes) to byte-string
 * values, keys sorted as unsigned bytes (memcmp order, a shorter key before any longer key it
 * begins). Every read and write happens in a transaction: any number of read transactions run
 * at once, each seeing the state of the last commit before it began; one write transaction at
 * a time, and it sees its own writes.
 *
 * Caveats, up front:
 * - Durability is never weakened: a top-level write transaction is on disk (fsynced) when
 *   kv_txn_commit returns 0. A group commit may instead end with kv_txn_commit_unflushed, whose
 *   commit becomes durable at the next sync of the file (kv_env_flush, or a later commit): the
 *   caller acknowledges nothing of it before then, and saves one of the two disk flushes a
 *   commit costs when commits follow each other. No flag that trades sync for speed exists.
 * - Values (and walked keys) are borrowed: they point into the map and stay valid until the
 *   transaction ends; in a write transaction, only until its next put or delete. Copy what must
 *   outlive that.
 * - The map has a fixed size (kv_env_open, kv_env_set_map_size). A write that needs more fails
 *   with DIRAUTH_ERR_FULL, from a put or from the commit itself; the transaction then commits
 *   nothing. kv_env_info tells how close the map is to that.
 * - A write transaction blocks other write transactions (in this and other processes) until it
 *   ends. A transaction is used by one thread at a time; a read transaction may move between
 *   threads (the environment is opened with LMDB's MDB_NOTLS).
 * - kv_env_set_map_size must not run while any transaction of this process is open (see there).
 * - An environment is opened once per process: opening the same directory twice in one process
 *   is not supported by LMDB.
 *
 * Transactions keep their first error ("sticky"): after a failure every later get, put, delete
 * or walk is a no-op, and commit aborts and returns that first error. Call sites read as straight
 * sequences of reads, checks and writes ending in one commit, with no error check between steps.
 *
 * Errors are the project's (base/error.h): a full map is DIRAUTH_ERR_FULL, a file that cannot
 * be created or read is DIRAUTH_ERR_IO, a failed allocation DIRAUTH_ERR_NOMEM, anything else
 * from the database (a damaged file, an operation LMDB refuses) DIRAUTH_ERR_STORE.
 */
#ifndef DIRAUTH_KV_KV_H
#define DIRAUTH_KV_KV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Longest key, in bytes (LMDB's limit for keys; checked when the environment opens). */
#define KV_KEY_MAX 511

/* Longest value, in bytes. */
#define KV_VALUE_MAX ((size_t)UINT32_MAX)

/* An open environment. Opaque; kv_env_open makes one, kv_env_close frees it. */
struct kv_env;

/* A named database of an environment: a small value, set by kv_env_open, valid until
 * kv_env_close, copied freely. */
struct kv_db {
	unsigned int handle;
};

/* A borrowed byte string (see the caveats for how long it lives). */
struct kv_val {
	const uint8_t *data;
	size_t len;
};

/* A named database to open (created if missing) with the environment; *db receives it. */
struct kv_database {
	const char *name;
	struct kv_db *db;
};

/* Creates directory (and its missing parents, mode 0700; an existing directory is used as it
 * is), opens the environment in it (its data file created 0600) with a map of map_size bytes,
 * and opens (creating) the count databases. An existing file whose data exceeds map_size opens
 * with a map just large enough for it. Returns 0 with *out set (else *out is NULL);
 * DIRAUTH_ERR_IO (directory is not a directory or cannot be made, a file cannot be opened),
 * DIRAUTH_ERR_STORE (not an environment, damaged, a database cannot be opened),
 * DIRAUTH_ERR_NOMEM. */
int kv_env_open(const char *directory, size_t map_size, const struct kv_database *databases, size_t count,
                struct kv_env **out);

/* Closes the environment and frees env. Every transaction must have ended. Accepts NULL. */
void kv_env_close(struct kv_env *env);

/* The map and how much of it is used. */
struct kv_env_info {
	size_t map_size;  /* bytes the map can hold (the most the data file can grow to) */
	size_t used;      /* bytes in use: (last used page number + 1) * page_size. Pages freed by
	                   * deletes are reused before the file grows, so this is a high-water
	                   * mark: it never shrinks */
	size_t page_size; /* bytes per page */
};

/* Fills *out as of the last commit. May run alongside transactions, but not alongside
 * kv_env_set_map_size (the same guarantee applies). Returns 0 or DIRAUTH_ERR_STORE (also after a
 * failed kv_env_set_map_size left the environment unusable). */
int kv_env_info(struct kv_env *env, struct kv_env_info *out);

/* Of kv_env_info's used, the bytes of pages on LMDB's free list: freed by deletes and
 * replacements, written again before the file grows (once no reader still sees them); used less
 * these is what the data holds. Walks the free list in a read transaction of its own, so it
 * costs more than kv_env_info. Returns 0 or kv_env_info's errors. */
int kv_env_free(struct kv_env *env, size_t *out);

/* Changes the map to map_size bytes, growing (or shrinking) the room for data; the data file
 * itself grows only as data is written. The caller must guarantee that no transaction of this
 * process, read or write, is open during the call, nor a hot copy or kv_env_info running (for
 * example by holding a lock that each of them takes): LMDB unmaps and remaps the file, and a
 * read transaction open meanwhile would read unmapped memory. An open write transaction is
 * detected; an open read transaction is not. The size lasts until kv_env_close (kv_env_open
 * takes its own). Returns 0; DIRAUTH_ERR_BOUNDS (map_size smaller than kv_env_info's used) or
 * DIRAUTH_ERR_STORE (a write transaction is open), nothing changed; DIRAUTH_ERR_NOMEM or
 * DIRAUTH_ERR_STORE when the new map cannot be made: the file is then unmapped, every later
 * transaction fails with DIRAUTH_ERR_STORE, and the environment can only be closed. */
int kv_env_set_map_size(struct kv_env *env, size_t map_size);

/* Hot copy: writes a consistent copy of the environment's data file (as of one read
 * transaction; writers are not blocked) to fd. With compact, free pages are left out and the
 * copy is about as small as the data. Neither syncs nor closes fd. The copy, named
 * data.mdb in a directory, opens with kv_env_open. Returns 0, DIRAUTH_ERR_IO (a write failed),
 * DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_STORE. */
int kv_env_copy_to_fd(struct kv_env *env, int fd, bool compact);

/* Hot copy into an existing directory, so that kv_env_open(directory) opens the copy: the data
 * file is created there mode 0600 (never over an existing file, never through a symbolic link),
 * written as kv_env_copy_to_fd does, fsynced, and its directory entry fsynced. On failure the
 * partial file is removed. Returns 0; DIRAUTH_ERR_EXISTS (the directory already holds a data
 * file); DIRAUTH_ERR_IO (the directory is missing, a write or sync failed); DIRAUTH_ERR_BOUNDS
 * (the path is too long); DIRAUTH_ERR_NOMEM; DIRAUTH_ERR_STORE. */
int kv_env_copy_to_directory(struct kv_env *env, const char *directory, bool compact);

/* A transaction: declare one (usually on the stack) and begin it; end it with kv_txn_commit or
 * kv_txn_abort exactly once. rc is public: the first failure as a dirauth error, 0 while
 * everything went well; a call site may read it at any step. The other fields are kv's. */
struct kv_txn {
	struct kv_env *env;
	void *handle; /* the database's transaction, NULL once ended or when it never began */
	int rc;
	bool top_level_write;
	bool step; /* a step of its parent (kv_txn_begin_step): ending it leaves the parent's handle */
};

enum kv_txn_mode {
	KV_READ,  /* sees the last commit before it began; put and delete fail (DIRAUTH_ERR_STORE) */
	KV_WRITE, /* one at a time: begins once the previous write transaction ended */
};

/* Begins a top-level transaction. A failure to begin (DIRAUTH_ERR_STORE, also when every reader
 * slot is taken; DIRAUTH_ERR_NOMEM) is recorded in t->rc; t must still be ended. */
void kv_txn_begin(struct kv_env *env, struct kv_txn *t, enum kv_txn_mode mode);

/* Begins a write transaction nested in parent (a write transaction): what it writes joins the
 * parent's when it commits and vanishes when it aborts or fails, the parent going on either way.
 * While it is open the parent must not be used, except to be aborted. A parent that already
 * failed hands its error down, so the whole nested sequence is a no-op; a read-only parent is
 * DIRAUTH_ERR_STORE. A failure of the nested transaction is not recorded in the parent. */
void kv_txn_begin_nested(struct kv_txn *parent, struct kv_txn *t);

/* Begins a step of parent (a write transaction): t reads and writes parent's own transaction,
 * with an error of its own, so that a refusal the step records does not fail parent. Unlike a
 * nested transaction it costs nothing and undoes nothing: what the step wrote is parent's at once
 * and stays there whether or not the step fails afterwards. It is for steps that decide every
 * refusal before their first write; when a step fails after writing, parent holds part of it and
 * its caller must abort parent. While t is open parent must not be used. Ending t (kv_txn_commit,
 * which returns its recorded error, or kv_txn_abort) ends the step only: parent goes on. A parent
 * that already failed hands its error down; a step of a read transaction can only read. */
void kv_txn_begin_step(struct kv_txn *parent, struct kv_txn *t);

/* Records rc as the transaction's error unless one is already recorded. rc 0 does nothing. */
void kv_txn_fail(struct kv_txn *t, int rc);

/* Looks key up in db. Returns true when found, *value then borrowed (see the caveats); false
 * when absent (not a failure) or after any failure, the failure being recorded: a key of 0 or
 * more than KV_KEY_MAX bytes is DIRAUTH_ERR_BOUNDS. */
bool kv_txn_get(struct kv_txn *t, struct kv_db db, const void *key, size_t key_len, struct kv_val *value);

/* Stores key -> value in db, replacing any value key had. Failures recorded: DIRAUTH_ERR_BOUNDS
 * (key of 0 or more than KV_KEY_MAX bytes, value over KV_VALUE_MAX), DIRAUTH_ERR_FULL,
 * DIRAUTH_ERR_STORE (also in a read transaction). value may be NULL when value_len is 0. */
void kv_txn_put(struct kv_txn *t, struct kv_db db, const void *key, size_t key_len, const void *value,
                size_t value_len);

/* Removes key from db. Returns true when a record was removed; false when key was absent (not a
 * failure) or after any failure, the failure being recorded (as for kv_txn_put). Space freed is
 * reused by later writes; the file does not shrink. */
bool kv_txn_delete(struct kv_txn *t, struct kv_db db, const void *key, size_t key_len);

/* Called for each record of a walk, key and value borrowed for the call (and as the caveats
 * say). Returns 0 to go on; anything else stops the walk and is what the walk returns. It may
 * read any database of the transaction and record a failure in it (kv_txn_fail), which also
 * stops the walk; it must not put or delete in the walked database. */
typedef int (*kv_visitor)(void *context, struct kv_val key, struct kv_val value);

/* Calls visit for each record of db whose key begins with the prefix_len bytes of prefix (a key
 * equal to the prefix included), in ascending key order. prefix_len 0 walks the whole database.
 * Returns the transaction's error when it has one (recorded before or during the walk: a failed
 * read is DIRAUTH_ERR_STORE, a NULL visit DIRAUTH_ERR_SYNTAX), else the non-zero value that
 * stopped the walk, else 0 (also when no key matched, or prefix_len exceeds KV_KEY_MAX). */
int kv_txn_walk_prefix(struct kv_txn *t, struct kv_db db, const void *prefix, size_t prefix_len,
                       kv_visitor visit, void *context);

/* kv_txn_walk_prefix from the first key at or after start (which must begin with the prefix:
 * DIRAUTH_ERR_SYNTAX otherwise), so a walk can resume inside a prefix without visiting what
 * sorts before start. Same returns. */
int kv_txn_walk_from(struct kv_txn *t, struct kv_db db, const void *prefix, size_t prefix_len,
                     const void *start, size_t start_len, kv_visitor visit, void *context);

/* Ends the transaction without keeping anything. t->rc keeps its value. Idempotent. */
void kv_txn_abort(struct kv_txn *t);

/* Commits when nothing failed, aborts otherwise. Returns the transaction's outcome: its recorded
 * error, or the commit's own (DIRAUTH_ERR_FULL when the commit itself needs pages the map does
 * not have; DIRAUTH_ERR_STORE when writing or syncing the file fails); nothing was committed
 * unless 0 is returned. For a top-level write transaction, 0 means durable; a committed nested
 * transaction is only as durable as its parent's commit. A read transaction may be committed or
 * aborted alike. */
int kv_txn_commit(struct kv_txn *t);

/* kv_txn_commit for a top-level write transaction whose caller holds every acknowledgement of
 * it until it is durable. Returns as kv_txn_commit does, but 0 means committed (visible to
 * later transactions, its pages written and synced) and durable only once the file is synced
 * again: when kv_env_flush returns 0, or when a later commit that syncs the file returns 0.
 * *synced_earlier is set to whether this commit synced the file (it does when it wrote anything),
 * which made every earlier unflushed commit durable. A nested or read transaction: as
 * kv_txn_commit, with *synced_earlier false. */
int kv_txn_commit_unflushed(struct kv_txn *t, bool *synced_earlier);

/* Syncs the data file, making every commit so far durable. Returns 0 or DIRAUTH_ERR_STORE.
 * A failed sync, or a top-level commit failing otherwise than for room (DIRAUTH_ERR_FULL) or
 * memory, leaves the environment unusable: every later transaction, flush and kv_env_info
 * fails with DIRAUTH_ERR_STORE, since the kernel may have lost written pages and say so only
 * once. Only kv_env_close is left; a new process reads what last reached the disk. */
int kv_env_flush(struct kv_env *env);

/* Big-endian fixed-width integers, the encoding of every stored number. */
void kv_put_u64(uint8_t *p, uint64_t v);
uint64_t kv_get_u64(const uint8_t *p);

#endif
