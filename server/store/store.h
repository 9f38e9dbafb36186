/*
 * store.h: dirauthd's durable state: opening and closing it, its seal, its backup and its
 * counters. The tables each have their header: registrations.h (what providers registered, and
 * the views of the sealed epoch), statements.h (health statements, revocations,
 * deregistrations), snapshots.h (published headers and bodies), votes.h (the rounds with other
 * authorities), tlog_table.h (each namespace's transparency log). engine.h says how every write of
 * registrations and statements is group-committed.
 *
 * One LMDB environment (through kv/, engine.h) and a directory of snapshot body files, both under
 * one data directory. Default (synchronous) durability: when a write call returns 0, or reports 0
 * to its completion callback, what it wrote is on disk.
 *
 * Threading: every function is safe from any thread.
 */
#ifndef DIRAUTH_SERVER_STORE_STORE_H
#define DIRAUTH_SERVER_STORE_STORE_H

#include "server/store/engine.h"

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

/* Fixes the content of snapshot epoch (registrations.h, "Epochs, stamps and the seal") and removes what can
 * never be in a snapshot again: records expired at valid_after (the sealed epoch's valid-after), and replaced
 * versions no later epoch needs. Durable on return; waits for the commits under way. Sealing an epoch at or
 * below the sealed one changes nothing and returns 0. Returns 0, DIRAUTH_ERR_FULL, DIRAUTH_ERR_STORE. */
int store_seal(struct store *store, uint64_t epoch, uint64_t valid_after);

/* The sealed epoch. Returns 0, or DIRAUTH_ERR_NOT_FOUND when nothing was sealed yet. */
int store_sealed(struct store *store, uint64_t *epoch);

/* Hot copy into an existing empty directory: the database as data.mdb (compacting, 0600), and
 * the body files that are kept, under bodies/. Everything fsynced before return. Returns 0,
 * DIRAUTH_ERR_EXISTS (the directory already holds a data file), DIRAUTH_ERR_IO (the directory is
 * missing or a write failed), DIRAUTH_ERR_STORE. */
int store_backup(struct store *store, const char *directory);

/* Copies the current counters into out (engine.h). Returns 0, DIRAUTH_ERR_SYNTAX,
 * DIRAUTH_ERR_STORE. */
int store_statistics(struct store *store, struct store_statistics *out);

#endif
