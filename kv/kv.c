/*
 * kv.c: kv.h on LMDB: opening and closing an environment, its map, hot copies, the sticky-error
 * transaction wrapper, the prefix walk, and the mapping of LMDB's return codes to the project's.
 *
 * See kv.h. Kept small on purpose: what is specific to a database (its layout, its checks) stays
 * in the module that owns it. This file is the only one in the project that includes lmdb.h.
 */
#include "kv/kv.h"

#include "base/error.h"

#include <lmdb.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define KV_DATA_FILE "data.mdb" /* LMDB's name for the data file in an environment's directory */

struct kv_env {
	MDB_env *lmdb;
	/* A failed remap left the file unmapped, or a write or sync of the file failed: refuse
	 * every transaction. After a failed sync the kernel may have dropped pages it had taken
	 * and report that no more (a later sync of the same file can succeed over the loss), so
	 * nothing written since the last good sync may be called durable again in this process;
	 * the next start reads the last meta page that did reach the disk. */
	atomic_bool unusable;
};

/* LMDB's codes to the project's: MDB_MAP_FULL -> DIRAUTH_ERR_FULL, MDB_NOTFOUND ->
 * DIRAUTH_ERR_NOT_FOUND, ENOMEM -> DIRAUTH_ERR_NOMEM, anything else -> DIRAUTH_ERR_STORE. */
static int kv_error_from_lmdb(int rc)
{
	switch (rc) {
	case MDB_SUCCESS:
		return 0;
	case MDB_MAP_FULL:
		return DIRAUTH_ERR_FULL;
	case MDB_NOTFOUND:
		return DIRAUTH_ERR_NOT_FOUND;
	case ENOMEM:
		return DIRAUTH_ERR_NOMEM;
	default:
		return DIRAUTH_ERR_STORE;
	}
}

/* As kv_error_from_lmdb, but a plain errno value (from opening, writing or copying files) is
 * DIRAUTH_ERR_IO. */
static int kv_error_from_system(int rc)
{
	if (rc > 0 && rc != ENOMEM)
		return DIRAUTH_ERR_IO;
	return kv_error_from_lmdb(rc);
}

static MDB_txn *kv_txn_lmdb(const struct kv_txn *t)
{
	return t->handle;
}

/* A transaction that can take another step: nothing failed and it has not ended. */
static bool kv_txn_usable(struct kv_txn *t)
{
	if (t->rc)
		return false;
	if (!t->handle) {
		kv_txn_fail(t, DIRAUTH_ERR_STORE); /* used after it ended */
		return false;
	}
	return true;
}

static bool kv_key_fits(struct kv_txn *t, const void *key, size_t key_len)
{
	if (!key || key_len == 0 || key_len > KV_KEY_MAX) {
		kv_txn_fail(t, DIRAUTH_ERR_BOUNDS);
		return false;
	}
	return true;
}

/* ---- environment ---- */

/* mkdir -p with mode 0700 for what it creates; the last component must end up a directory. */
static int kv_make_directory(const char *directory)
{
	char path[PATH_MAX];
	struct stat st;
	size_t len = strlen(directory);

	if (len == 0 || len >= sizeof(path))
		return DIRAUTH_ERR_IO;
	memcpy(path, directory, len + 1);
	for (size_t i = 1; i <= len; i++) {
		if (path[i] != '/' && path[i] != '\0')
			continue;
		char saved = path[i];
		path[i] = '\0';
		if (mkdir(path, 0700) != 0 && errno != EEXIST)
			return DIRAUTH_ERR_IO;
		path[i] = saved;
	}
	if (stat(directory, &st) != 0 || !S_ISDIR(st.st_mode))
		return DIRAUTH_ERR_IO;
	return 0;
}

int kv_env_open(const char *directory, size_t map_size, const struct kv_database *databases, size_t count,
                struct kv_env **out)
{
	struct kv_env *env = NULL;
	struct kv_txn t;
	int rc;

	*out = NULL;
	if (!directory || (!databases && count) || count > UINT_MAX)
		return DIRAUTH_ERR_IO;
	rc = kv_make_directory(directory);
	if (rc)
		return rc;
	env = calloc(1, sizeof *env);
	if (!env)
		return DIRAUTH_ERR_NOMEM;
	rc = kv_error_from_lmdb(mdb_env_create(&env->lmdb));
	if (rc) {
		free(env);
		return rc;
	}
	rc = kv_error_from_lmdb(mdb_env_set_maxdbs(env->lmdb, (MDB_dbi)count));
	if (!rc)
		rc = kv_error_from_lmdb(mdb_env_set_mapsize(env->lmdb, map_size));
	/* MDB_NOTLS: read transactions are not tied to a thread's slot, so thread pools may use
	 * them. MDB_NOMETASYNC: LMDB syncs a commit's pages, writes the meta page that makes them
	 * current, and leaves that page to the next sync, which kv_txn_commit makes at once (so it
	 * is durable on return, as it would be without the flag) and kv_txn_commit_unflushed
	 * leaves to its caller. LMDB keeps the file consistent either way; only the durability of
	 * the last commit waits for the sync. */
	if (!rc)
		rc = kv_error_from_system(
		    mdb_env_open(env->lmdb, directory, MDB_NOTLS | MDB_NOMETASYNC, 0600));
	if (!rc && mdb_env_get_maxkeysize(env->lmdb) < KV_KEY_MAX)
		rc = DIRAUTH_ERR_STORE; /* an LMDB built with shorter keys than kv.h promises */
	if (rc) {
		kv_env_close(env);
		return rc;
	}
	kv_txn_begin(env, &t, KV_WRITE);
	for (size_t i = 0; i < count && !t.rc; i++) {
		MDB_dbi dbi = 0;
		kv_txn_fail(&t, kv_error_from_lmdb(
		                    mdb_dbi_open(kv_txn_lmdb(&t), databases[i].name, MDB_CREATE, &dbi)));
		databases[i].db->handle = dbi;
	}
	rc = kv_txn_commit(&t);
	if (rc) {
		kv_env_close(env);
		return rc;
	}
	*out = env;
	return 0;
}

void kv_env_close(struct kv_env *env)
{
	if (!env)
		return;
	mdb_env_close(env->lmdb);
	free(env);
}

/* The pages on LMDB's free list, in a read transaction of its own: the free list is LMDB's
 * database 0, each entry a list of page numbers whose first element is their count (as
 * mdb_stat -f reads it). */
static int free_list_pages(MDB_env *lmdb, size_t *pages)
{
	MDB_txn *txn;
	MDB_cursor *cursor;
	MDB_val key, data;
	*pages = 0;
	int rc = mdb_txn_begin(lmdb, NULL, MDB_RDONLY, &txn);
	if (rc)
		return rc;
	if ((rc = mdb_cursor_open(txn, 0, &cursor)) == 0) {
		while ((rc = mdb_cursor_get(cursor, &key, &data, MDB_NEXT)) == 0) {
			size_t count;
			if (data.mv_size < sizeof count) {
				rc = MDB_CORRUPTED;
				break;
			}
			memcpy(&count, data.mv_data, sizeof count);
			*pages += count;
		}
		if (rc == MDB_NOTFOUND)
			rc = 0;
		mdb_cursor_close(cursor);
	}
	mdb_txn_abort(txn);
	return rc;
}

int kv_env_info(struct kv_env *env, struct kv_env_info *out)
{
	MDB_envinfo info;
	MDB_stat stat;

	if (!env || !out || atomic_load(&env->unusable))
		return DIRAUTH_ERR_STORE;
	int rc = kv_error_from_lmdb(mdb_env_info(env->lmdb, &info));
	if (!rc)
		rc = kv_error_from_lmdb(mdb_env_stat(env->lmdb, &stat));
	if (rc)
		return rc;
	out->map_size = info.me_mapsize;
	out->page_size = stat.ms_psize;
	out->used = ((size_t)info.me_last_pgno + 1) * stat.ms_psize;
	return 0;
}

int kv_env_free(struct kv_env *env, size_t *out)
{
	struct kv_env_info info;
	size_t pages = 0;
	if (!out)
		return DIRAUTH_ERR_STORE;
	*out = 0;
	int rc = kv_env_info(env, &info);
	if (!rc)
		rc = kv_error_from_lmdb(free_list_pages(env->lmdb, &pages));
	if (rc)
		return rc;
	*out = pages * info.page_size < info.used ? pages * info.page_size : info.used;
	return 0;
}

int kv_env_set_map_size(struct kv_env *env, size_t map_size)
{
	struct kv_env_info info;

	int rc = kv_env_info(env, &info);
	if (rc)
		return rc;
	/* LMDB would silently round a size below the data up to it; a caller asking for that has
	 * its arithmetic wrong. (0 would mean "keep the current size" to LMDB.) */
	if (map_size < info.used)
		return DIRAUTH_ERR_BOUNDS;
	rc = mdb_env_set_mapsize(env->lmdb, map_size);
	if (rc == EINVAL)
		return DIRAUTH_ERR_STORE; /* a write transaction is open: refused before any change */
	if (rc) {
		/* The old map is gone and the new one could not be made (mmap failed): nothing can be
		 * read any more, not even the meta pages. */
		env->unusable = true;
		return kv_error_from_lmdb(rc);
	}
	return 0;
}

int kv_env_copy_to_fd(struct kv_env *env, int fd, bool compact)
{
	if (!env || env->unusable)
		return DIRAUTH_ERR_STORE;
	return kv_error_from_system(mdb_env_copyfd2(env->lmdb, fd, compact ? MDB_CP_COMPACT : 0));
}

int kv_env_copy_to_directory(struct kv_env *env, const char *directory, bool compact)
{
	char path[PATH_MAX];
	int fd = -1, directory_fd = -1;
	int rc = 0;

	if (!env || !directory || !*directory)
		return DIRAUTH_ERR_IO;
	int n = snprintf(path, sizeof path, "%s/%s", directory, KV_DATA_FILE);
	if (n < 0 || (size_t)n >= sizeof path)
		return DIRAUTH_ERR_BOUNDS;

	/* The copy is created 0600 from the start (mdb_env_copy2 would create it with the umask's
	 * mode), and never over an existing file or through a symbolic link. */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return errno == EEXIST ? DIRAUTH_ERR_EXISTS : DIRAUTH_ERR_IO;
	rc = kv_env_copy_to_fd(env, fd, compact);
	if (!rc && (fchmod(fd, 0600) != 0 || fsync(fd) != 0))
		rc = DIRAUTH_ERR_IO;
	if (close(fd) != 0 && !rc)
		rc = DIRAUTH_ERR_IO;
	if (rc) {
		unlink(path);
		return rc;
	}
	/* The new directory entry must be durable too. */
	directory_fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (directory_fd < 0 || fsync(directory_fd) != 0)
		rc = DIRAUTH_ERR_IO;
	if (directory_fd >= 0)
		close(directory_fd);
	return rc;
}

/* ---- transactions ---- */

static void kv_txn_start(struct kv_env *env, struct kv_txn *t, MDB_txn *parent, unsigned flags)
{
	MDB_txn *txn = NULL;

	if (env->unusable) {
		t->rc = DIRAUTH_ERR_STORE;
		return;
	}
	int rc = mdb_txn_begin(env->lmdb, parent, flags, &txn);
	if (rc) {
		t->rc = kv_error_from_lmdb(rc);
		return;
	}
	t->handle = txn;
}

void kv_txn_begin(struct kv_env *env, struct kv_txn *t, enum kv_txn_mode mode)
{
	t->env = env;
	t->handle = NULL;
	t->rc = 0;
	t->top_level_write = false;
	t->step = false;
	if (!env) {
		t->rc = DIRAUTH_ERR_STORE;
		return;
	}
	kv_txn_start(env, t, NULL, mode == KV_READ ? MDB_RDONLY : 0);
	t->top_level_write = mode == KV_WRITE;
}

/* Sets up t under parent, as a nested transaction or a step. Returns whether t may begin: false
 * when the parent had failed (its error handed down) or ended (DIRAUTH_ERR_STORE), recorded in t. */
static bool kv_txn_child(struct kv_txn *parent, struct kv_txn *t, bool step)
{
	t->env = parent->env;
	t->handle = NULL;
	t->rc = parent->rc;
	t->top_level_write = false;
	t->step = step;
	if (!t->rc && !parent->handle)
		t->rc = DIRAUTH_ERR_STORE; /* the parent has ended */
	return !t->rc;
}

void kv_txn_begin_nested(struct kv_txn *parent, struct kv_txn *t)
{
	if (kv_txn_child(parent, t, false))
		kv_txn_start(parent->env, t, kv_txn_lmdb(parent), 0);
}

void kv_txn_begin_step(struct kv_txn *parent, struct kv_txn *t)
{
	if (kv_txn_child(parent, t, true))
		t->handle = parent->handle;
}

void kv_txn_fail(struct kv_txn *t, int rc)
{
	if (!t->rc)
		t->rc = rc;
}

bool kv_txn_get(struct kv_txn *t, struct kv_db db, const void *key, size_t key_len, struct kv_val *value)
{
	if (!kv_txn_usable(t) || !kv_key_fits(t, key, key_len))
		return false;
	MDB_val k = {.mv_size = key_len, .mv_data = (void *)key};
	MDB_val v;
	int rc = mdb_get(kv_txn_lmdb(t), db.handle, &k, &v);
	if (rc == MDB_NOTFOUND)
		return false;
	if (rc) {
		kv_txn_fail(t, kv_error_from_lmdb(rc));
		return false;
	}
	value->data = v.mv_data;
	value->len = v.mv_size;
	return true;
}

void kv_txn_put(struct kv_txn *t, struct kv_db db, const void *key, size_t key_len, const void *value,
                size_t value_len)
{
	if (!kv_txn_usable(t) || !kv_key_fits(t, key, key_len))
		return;
	if (value_len > KV_VALUE_MAX || (!value && value_len)) {
		kv_txn_fail(t, DIRAUTH_ERR_BOUNDS);
		return;
	}
	MDB_val k = {.mv_size = key_len, .mv_data = (void *)key};
	MDB_val v = {.mv_size = value_len, .mv_data = value ? (void *)value : (void *)""};
	kv_txn_fail(t, kv_error_from_lmdb(mdb_put(kv_txn_lmdb(t), db.handle, &k, &v, 0)));
}

bool kv_txn_delete(struct kv_txn *t, struct kv_db db, const void *key, size_t key_len)
{
	if (!kv_txn_usable(t) || !kv_key_fits(t, key, key_len))
		return false;
	MDB_val k = {.mv_size = key_len, .mv_data = (void *)key};
	int rc = mdb_del(kv_txn_lmdb(t), db.handle, &k, NULL);
	if (rc == MDB_NOTFOUND)
		return false;
	if (rc) {
		kv_txn_fail(t, kv_error_from_lmdb(rc));
		return false;
	}
	return true;
}

int kv_txn_walk_prefix(struct kv_txn *t, struct kv_db db, const void *prefix, size_t prefix_len,
                       kv_visitor visit, void *context)
{
	return kv_txn_walk_from(t, db, prefix, prefix_len, prefix, prefix_len, visit, context);
}

int kv_txn_walk_from(struct kv_txn *t, struct kv_db db, const void *prefix, size_t prefix_len,
                     const void *start, size_t start_len, kv_visitor visit, void *context)
{
	MDB_cursor *cursor = NULL;
	int result = 0;

	if (!kv_txn_usable(t))
		return t->rc;
	if (!visit || (!prefix && prefix_len) || (!start && start_len) || start_len < prefix_len ||
	    (prefix_len && memcmp(start, prefix, prefix_len) != 0)) {
		kv_txn_fail(t, DIRAUTH_ERR_SYNTAX);
		return t->rc;
	}
	if (start_len > KV_KEY_MAX)
		return 0; /* no key is that long, so none begins with it */
	kv_txn_fail(t, kv_error_from_lmdb(mdb_cursor_open(kv_txn_lmdb(t), db.handle, &cursor)));

	/* MDB_SET_RANGE finds the first key at or after start: every key beginning with the prefix
	 * from there on sorts after it, contiguously. It refuses an empty key, hence MDB_FIRST. */
	MDB_val key = {.mv_size = start_len, .mv_data = (void *)start}, value;
	MDB_cursor_op op = start_len ? MDB_SET_RANGE : MDB_FIRST;
	while (!t->rc && result == 0) {
		int rc = mdb_cursor_get(cursor, &key, &value, op);
		op = MDB_NEXT;
		if (rc == MDB_NOTFOUND)
			break;
		if (rc) {
			kv_txn_fail(t, kv_error_from_lmdb(rc));
			break;
		}
		if (key.mv_size < prefix_len || (prefix_len && memcmp(key.mv_data, prefix, prefix_len) != 0))
			break; /* past the prefix */
		result = visit(context, (struct kv_val){.data = key.mv_data, .len = key.mv_size},
		               (struct kv_val){.data = value.mv_data, .len = value.mv_size});
	}
	if (cursor)
		mdb_cursor_close(cursor);
	return t->rc ? t->rc : result;
}

void kv_txn_abort(struct kv_txn *t)
{
	if (t->handle && !t->step)
		mdb_txn_abort(kv_txn_lmdb(t));
	t->handle = NULL;
}

/* What a commit did to the file. */
enum kv_commit_outcome {
	KV_WROTE_NOTHING, /* ended or failed, nested, read-only, or empty (LMDB skips an empty one) */
	KV_SYNCED,        /* wrote: it synced the file before writing its meta page */
	KV_MAYBE_WROTE,   /* committed, but the environment could not say whether it wrote */
};

static int kv_commit(struct kv_txn *t, enum kv_commit_outcome *outcome)
{
	*outcome = KV_WROTE_NOTHING;
	if (!kv_txn_usable(t)) {
		kv_txn_abort(t);
		return t->rc;
	}
	if (t->step) {
		t->handle = NULL; /* what it wrote is already the parent's */
		return 0;
	}
	MDB_txn *txn = kv_txn_lmdb(t);
	size_t id = t->top_level_write ? mdb_txn_id(txn) : 0;
	/* mdb_txn_commit frees the transaction whatever it returns; it can itself run out of map
	 * (MDB_MAP_FULL) while writing the free-page list. */
	int rc = mdb_txn_commit(txn);
	t->handle = NULL;
	t->rc = kv_error_from_lmdb(rc);
	/* Out of map, nothing was written; any other failure of a top-level commit may be the
	 * file's writes or sync. */
	if (rc != 0 && rc != MDB_MAP_FULL && rc != ENOMEM && t->top_level_write)
		atomic_store(&t->env->unusable, true);
	/* One that wrote made itself the last transaction (or a later writer did, having synced
	 * in its turn); an empty one left the last transaction before it. */
	MDB_envinfo info;
	if (t->rc == 0 && id != 0)
		*outcome = mdb_env_info(t->env->lmdb, &info) != 0 ? KV_MAYBE_WROTE
		           : info.me_last_txnid >= id             ? KV_SYNCED
		                                                  : KV_WROTE_NOTHING;
	return t->rc;
}

int kv_txn_commit_unflushed(struct kv_txn *t, bool *synced_earlier)
{
	enum kv_commit_outcome outcome;
	int rc = kv_commit(t, &outcome);
	*synced_earlier = outcome == KV_SYNCED;
	return rc;
}

int kv_txn_commit(struct kv_txn *t)
{
	enum kv_commit_outcome outcome;
	int rc = kv_commit(t, &outcome);
	if (rc == 0 && outcome != KV_WROTE_NOTHING)
		rc = t->rc = kv_env_flush(t->env);
	return rc;
}

int kv_env_flush(struct kv_env *env)
{
	if (!env || env->unusable)
		return DIRAUTH_ERR_STORE;
	if (mdb_env_sync(env->lmdb, 1) == 0)
		return 0;
	atomic_store(&env->unusable, true);
	return DIRAUTH_ERR_STORE;
}

/* ---- numbers ---- */

void kv_put_u64(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--) {
		p[i] = (uint8_t)v;
		v >>= 8;
	}
}

uint64_t kv_get_u64(const uint8_t *p)
{
	uint64_t v = 0;
	for (size_t i = 0; i < 8; i++)
		v = (v << 8) | p[i];
	return v;
}
