/*
 * kv.c: LMDB environment opening, the sticky-error transaction wrapper, error mapping.
 *
 * See kv.h. Kept small on purpose: what is specific to a database (its layout, its checks)
 * stays in the module that owns it.
 */
#include "kv/kv.h"

#include "schema/error.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

int kv_error_from_lmdb(int rc)
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

int kv_error_from_system(int rc)
{
	if (rc > 0 && rc != ENOMEM)
		return DIRAUTH_ERR_IO;
	return kv_error_from_lmdb(rc);
}

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
                MDB_env **out)
{
	MDB_env *env = NULL;
	struct kv_txn t;

	*out = NULL;
	int rc = kv_make_directory(directory);
	if (rc)
		return rc;
	rc = kv_error_from_lmdb(mdb_env_create(&env));
	if (rc)
		return rc;
	rc = kv_error_from_lmdb(mdb_env_set_maxdbs(env, (MDB_dbi)count));
	if (!rc)
		rc = kv_error_from_lmdb(mdb_env_set_mapsize(env, map_size));
	/* MDB_NOTLS: read transactions are not tied to a thread's slot, so thread pools may use
	 * them. No sync-weakening flag, ever. */
	if (!rc)
		rc = kv_error_from_system(mdb_env_open(env, directory, MDB_NOTLS, 0600));
	if (rc) {
		mdb_env_close(env);
		return rc;
	}
	kv_txn_begin(env, &t, NULL, 0);
	for (size_t i = 0; i < count && !t.rc; i++)
		kv_txn_fail(&t, kv_error_from_lmdb(
		                    mdb_dbi_open(t.txn, databases[i].name, MDB_CREATE, databases[i].dbi)));
	rc = kv_txn_commit(&t);
	if (rc) {
		mdb_env_close(env);
		return rc;
	}
	*out = env;
	return 0;
}

void kv_txn_begin(MDB_env *env, struct kv_txn *t, struct kv_txn *parent, unsigned flags)
{
	t->txn = NULL;
	t->rc = parent ? parent->rc : 0;
	if (t->rc)
		return;
	int rc = mdb_txn_begin(env, parent ? parent->txn : NULL, flags, &t->txn);
	if (rc) {
		t->txn = NULL;
		t->rc = kv_error_from_lmdb(rc);
	}
}

void kv_txn_fail(struct kv_txn *t, int rc)
{
	if (!t->rc)
		t->rc = rc;
}

bool kv_txn_get(struct kv_txn *t, MDB_dbi dbi, const void *key, size_t key_len, MDB_val *value)
{
	if (t->rc)
		return false;
	MDB_val k = {.mv_size = key_len, .mv_data = (void *)key};
	int rc = mdb_get(t->txn, dbi, &k, value);
	if (rc == MDB_NOTFOUND)
		return false;
	if (rc) {
		kv_txn_fail(t, kv_error_from_lmdb(rc));
		return false;
	}
	return true;
}

void kv_txn_put(struct kv_txn *t, MDB_dbi dbi, const void *key, size_t key_len, const void *value,
                size_t value_len)
{
	if (t->rc)
		return;
	MDB_val k = {.mv_size = key_len, .mv_data = (void *)key};
	MDB_val v = {.mv_size = value_len, .mv_data = (void *)value};
	kv_txn_fail(t, kv_error_from_lmdb(mdb_put(t->txn, dbi, &k, &v, 0)));
}

void kv_txn_abort(struct kv_txn *t)
{
	if (t->txn)
		mdb_txn_abort(t->txn);
	t->txn = NULL;
}

int kv_txn_commit(struct kv_txn *t)
{
	if (t->rc) {
		kv_txn_abort(t);
		return t->rc;
	}
	int rc = mdb_txn_commit(t->txn);
	t->txn = NULL;
	t->rc = kv_error_from_lmdb(rc);
	return t->rc;
}

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
