/*
 * store.c: the store as a whole (store.h): the tables' databases opened in one environment by
 * the engine, the format check and upgrade at open, the seal (the engine's stamp floor, then the
 * registrations table's pruning), the backup and the counters.
 *
 * meta "format" -> u32 STORE_FORMAT, beside the engine's and the tables' own keys in meta.
 */
#include "server/store/store.h"

#include "server/store/internal.h"

#include "kv/kv.h"
#include "base/error.h"
#include "server/store/engine.h"
#include "server/store/tlog_table.h"
#include "server/store/registrations.h"
#include "server/store/snapshots.h"
#include "server/store/statements.h"
#include "server/store/votes.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- opening and closing ---- */

static int any_record(void *context, struct kv_val key, struct kv_val value)
{
	(void)context;
	(void)key;
	(void)value;
	return 1;
}

int store_format_read(const char *path, uint64_t *format)
{
	struct kv_env *env = NULL;
	struct kv_db meta;
	struct kv_database database = {"meta", &meta};
	struct kv_txn t;
	struct kv_val value;
	int rc = kv_env_open(path, 1 << 20, &database, 1, &env);
	if (rc)
		return rc;
	kv_txn_begin(env, &t, KV_READ);
	rc = DIRAUTH_ERR_NOT_FOUND;
	if (kv_txn_get(&t, meta, "format", 6, &value)) {
		*format = value.len == 4 ? get_uint(value.data, 4) : 0;
		rc = 0;
	}
	kv_txn_abort(&t);
	kv_env_close(env);
	return rc;
}

static int check_format(struct store *store)
{
	struct kv_txn t;
	struct kv_val value;
	uint8_t field[8];
	kv_txn_begin(store->env, &t, KV_WRITE);
	if (kv_txn_get(&t, store->meta, "format", 6, &value)) {
		uint64_t format = value.len == 4 ? get_uint(value.data, 4) : 0;
		if (format < STORE_FORMAT_OLDEST || format > STORE_FORMAT) {
			kv_txn_fail(&t, DIRAUTH_ERR_STORE);
		} else if (format < STORE_FORMAT) {
			/* Format 2 differs from 3 only in its records without an expiry slot, which later
			 * formats read as they are; 3 from 4 in the usage without its endpoints, counted
			 * now. Marked 4, the store is refused by the binaries before. */
			registrations_upgrade_usage(&t, store);
			put_uint(field, STORE_FORMAT, 4);
			kv_txn_put(&t, store->meta, "format", 6, field, 4);
		}
	} else {
		/* A new store, or one written before the format was recorded: that one has records
		 * under its old layout and is refused. */
		if (kv_txn_walk_prefix(&t, store->services, NULL, 0, any_record, NULL) == 1)
			kv_txn_fail(&t, DIRAUTH_ERR_STORE);
		put_uint(field, STORE_FORMAT, 4);
		kv_txn_put(&t, store->meta, "format", 6, field, 4);
	}
	return kv_txn_commit(&t);
}

/* After each commit of the engine: the provider keys it interned. A refresh that fails is made
 * again by the first lookup that misses (registrations.c). */
static void store_committed(void *context)
{
	(void)registrations_keys_refresh(context);
}

int store_open(const struct store_options *options, struct store **out)
{
	struct store *store = NULL;
	int rc;

	if (!out)
		return DIRAUTH_ERR_SYNTAX;
	*out = NULL;
	if (!options || !options->path || !*options->path)
		return DIRAUTH_ERR_CONFIG;
	store = calloc(1, sizeof *store);
	if (!store)
		return DIRAUTH_ERR_NOMEM;
	if (snprintf(store->path, sizeof store->path, "%s", options->path) >= (int)sizeof store->path) {
		free(store);
		return DIRAUTH_ERR_CONFIG;
	}
	unsigned refuse_percent = options->refuse_percent ? options->refuse_percent : STORE_DEFAULT_REFUSE;
	struct store_engine_options engine_options = {
	    .path = options->path,
	    .map_size = options->map_size ? options->map_size : STORE_DEFAULT_MAP_SIZE,
	    .refuse_percent = refuse_percent > 100 ? 100 : refuse_percent,
	    .max_batch = options->max_batch ? options->max_batch : STORE_DEFAULT_BATCH,
	    .committed = store_committed,
	    .committed_context = store,
	};
	/* Every table's databases, each listed by its table, in one environment. */
	size_t (*const tables[])(struct store *, struct kv_database *) = {
	    registrations_databases, statements_databases, snapshots_databases,
	    votes_databases,         log_table_databases,
	};
	struct kv_database databases[1 + sizeof tables / sizeof tables[0] * STORE_TABLE_DATABASES_MAX];
	size_t count = 0;
	databases[count++] = (struct kv_database){"namespaces", &store->namespaces};
	for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
		count += tables[i](store, databases + count);
	pthread_mutex_init(&store->keys_lock, NULL);
	pthread_mutex_init(&store->diffs_lock, NULL);
	atomic_init(&store->log_generation, 0);
	rc = store_engine_open(&engine_options, databases, count, &store->meta, &store->engine);
	if (rc)
		goto fail;
	store->env = store_engine_env(store->engine);
	if ((rc = check_format(store)) || (rc = registrations_keys_refresh(store)) ||
	    (rc = snapshots_tidy(store)) || (rc = store_engine_start(store->engine)))
		goto fail;
	*out = store;
	return 0;

fail:
	store_engine_close(store->engine);
	pthread_mutex_destroy(&store->keys_lock);
	pthread_mutex_destroy(&store->diffs_lock);
	free(store->keys);
	free(store);
	return rc;
}

void store_close(struct store *store)
{
	if (!store)
		return;
	store_engine_close(store->engine); /* answers every queued submission first */
	pthread_mutex_destroy(&store->keys_lock);
	pthread_mutex_destroy(&store->diffs_lock);
	free(store->keys);
	free(store);
}

/* ---- the seal ---- */

int store_seal(struct store *store, uint64_t epoch, uint64_t valid_after)
{
	if (!store)
		return DIRAUTH_ERR_SYNTAX;
	bool raised = false;
	int rc = store_engine_seal(store->engine, epoch, &raised);
	return rc || !raised ? rc : registrations_prune(store, epoch, valid_after);
}

int store_sealed(struct store *store, uint64_t *epoch)
{
	if (!store || !epoch)
		return DIRAUTH_ERR_SYNTAX;
	return store_engine_sealed(store->engine, epoch);
}

/* ---- backup and counters ---- */

int store_backup(struct store *store, const char *directory)
{
	if (!store || !directory || !*directory)
		return DIRAUTH_ERR_SYNTAX;
	int rc = kv_env_copy_to_directory(store->env, directory, true);
	return rc ? rc : snapshots_copy_bodies(store, directory);
}

int store_statistics(struct store *store, struct store_statistics *out)
{
	if (!store || !out)
		return DIRAUTH_ERR_SYNTAX;
	return store_engine_statistics(store->engine, out);
}
