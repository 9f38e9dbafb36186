/*
 * check_kv.c: the key-value layer under the store and the ledger: an environment is created in a
 * private directory (with its parents), a committed write survives reopening, a transaction that
 * failed once stays failed and commits nothing, nested transactions join or vanish, deletes,
 * prefix walks in key order within their bounds, hot copies that open as equal environments,
 * the map's size and use, growing a full map so that the writes it refused succeed, and the
 * project's error codes for a full map, a damaged file, bad keys and failed writes.
 */
#include "base/error.h"
#include "kv/kv.h"
#include "test_support.h"

#include <check.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* One environment with one database, "numbers", in a fresh temporary directory. */
struct fixture {
	char dir[512];
	struct kv_env *env;
	struct kv_db numbers;
};

static int fixture_open_at(struct fixture *f, const char *path, size_t map_size)
{
	const struct kv_database databases[] = {{"numbers", &f->numbers}};
	return kv_env_open(path, map_size, databases, 1, &f->env);
}

static void fixture_open(struct fixture *f, size_t map_size)
{
	test_make_tempdir(f->dir, sizeof f->dir);
	ck_assert_int_eq(fixture_open_at(f, f->dir, map_size), 0);
}

static void fixture_close(struct fixture *f)
{
	kv_env_close(f->env);
	f->env = NULL;
	test_remove_tree(f->dir);
}

/* Commits key -> value (strings) in a transaction of its own. */
static void put_string(struct fixture *f, const char *key, const char *value)
{
	struct kv_txn t;
	kv_txn_begin(f->env, &t, KV_WRITE);
	kv_txn_put(&t, f->numbers, key, strlen(key), value, strlen(value));
	ck_assert_int_eq(kv_txn_commit(&t), 0);
}

/* Whether key is present (in a fresh read transaction); its value copied into out. */
static bool get_string(struct kv_env *env, struct kv_db db, const char *key, char *out, size_t cap)
{
	struct kv_txn t;
	struct kv_val found;
	kv_txn_begin(env, &t, KV_READ);
	bool present = kv_txn_get(&t, db, key, strlen(key), &found);
	ck_assert_int_eq(t.rc, 0);
	if (present && out) {
		ck_assert_uint_lt(found.len, cap);
		memcpy(out, found.data, found.len);
		out[found.len] = 0;
	}
	kv_txn_abort(&t);
	return present;
}

START_TEST(test_open_write_reopen)
{
	char dir[512], path[700];
	struct stat st;
	struct kv_env *env = NULL;
	struct kv_db numbers;
	const struct kv_database databases[] = {{"numbers", &numbers}};
	test_make_tempdir(dir, sizeof dir);
	snprintf(path, sizeof path, "%s/parent/state", dir);

	ck_assert_int_eq(kv_env_open(path, 1 << 20, databases, 1, &env), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0700);
	struct kv_txn t;
	uint8_t value[8];
	kv_put_u64(value, 0x0102030405060708ULL);
	ck_assert_uint_eq(value[0], 1);
	ck_assert_uint_eq(value[7], 8);
	kv_txn_begin(env, &t, KV_WRITE);
	kv_txn_put(&t, numbers, "seven", 5, value, sizeof value);
	ck_assert_int_eq(kv_txn_commit(&t), 0);
	kv_env_close(env);

	ck_assert_int_eq(kv_env_open(path, 1 << 20, databases, 1, &env), 0);
	struct kv_val found;
	kv_txn_begin(env, &t, KV_READ);
	ck_assert(kv_txn_get(&t, numbers, "seven", 5, &found));
	ck_assert_uint_eq(found.len, 8);
	ck_assert_uint_eq(kv_get_u64(found.data), 0x0102030405060708ULL);
	ck_assert(!kv_txn_get(&t, numbers, "eight", 5, &found));
	ck_assert_int_eq(t.rc, 0); /* absent is not a failure */
	kv_txn_put(&t, numbers, "eight", 5, value, sizeof value);
	ck_assert_int_eq(t.rc, DIRAUTH_ERR_STORE); /* no writes in a read transaction */
	kv_txn_abort(&t);
	kv_env_close(env);
	kv_env_close(NULL);

	/* A file where the directory should be is refused. */
	snprintf(path, sizeof path, "%s/file", dir);
	test_write_file(path, "x", 1, 0600);
	ck_assert_int_eq(kv_env_open(path, 1 << 20, databases, 1, &env), DIRAUTH_ERR_IO);
	ck_assert_ptr_null(env);

	/* A data file that is not an environment is a damaged store. */
	static uint8_t garbage[16384];
	memset(garbage, 0x5a, sizeof garbage);
	snprintf(path, sizeof path, "%s/damaged", dir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	snprintf(path, sizeof path, "%s/damaged/data.mdb", dir);
	test_write_file(path, garbage, sizeof garbage, 0600);
	snprintf(path, sizeof path, "%s/damaged", dir);
	ck_assert_int_eq(kv_env_open(path, 1 << 20, databases, 1, &env), DIRAUTH_ERR_STORE);
	ck_assert_ptr_null(env);
	test_remove_tree(dir);
}
END_TEST

START_TEST(test_keys_and_values_bounded)
{
	struct fixture f;
	fixture_open(&f, 1 << 20);
	static uint8_t key[KV_KEY_MAX + 1];
	memset(key, 'k', sizeof key);
	struct kv_txn t;
	struct kv_val found;

	kv_txn_begin(f.env, &t, KV_WRITE);
	kv_txn_put(&t, f.numbers, key, KV_KEY_MAX, "longest", 7);
	kv_txn_put(&t, f.numbers, "empty", 5, NULL, 0);
	ck_assert_int_eq(kv_txn_commit(&t), 0);
	kv_txn_begin(f.env, &t, KV_READ);
	ck_assert(kv_txn_get(&t, f.numbers, key, KV_KEY_MAX, &found));
	ck_assert_uint_eq(found.len, 7);
	ck_assert(kv_txn_get(&t, f.numbers, "empty", 5, &found));
	ck_assert_uint_eq(found.len, 0);
	kv_txn_abort(&t);

	/* One byte too long, or empty: refused before the database sees it, and sticky. */
	kv_txn_begin(f.env, &t, KV_WRITE);
	kv_txn_put(&t, f.numbers, key, KV_KEY_MAX + 1, "x", 1);
	ck_assert_int_eq(t.rc, DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(kv_txn_commit(&t), DIRAUTH_ERR_BOUNDS);
	kv_txn_begin(f.env, &t, KV_READ);
	ck_assert(!kv_txn_get(&t, f.numbers, key, KV_KEY_MAX + 1, &found));
	ck_assert_int_eq(t.rc, DIRAUTH_ERR_BOUNDS);
	kv_txn_abort(&t);
	kv_txn_begin(f.env, &t, KV_WRITE);
	ck_assert(!kv_txn_delete(&t, f.numbers, "", 0));
	ck_assert_int_eq(t.rc, DIRAUTH_ERR_BOUNDS);
	kv_txn_abort(&t);
	fixture_close(&f);
}
END_TEST

START_TEST(test_sticky_error_commits_nothing)
{
	struct fixture f;
	fixture_open(&f, 1 << 20);

	struct kv_txn t, nested;
	kv_txn_begin(f.env, &t, KV_WRITE);
	kv_txn_put(&t, f.numbers, "a", 1, "1", 1);
	kv_txn_fail(&t, DIRAUTH_ERR_ROLLBACK);
	kv_txn_fail(&t, DIRAUTH_ERR_COLLISION); /* the first error stays */
	kv_txn_put(&t, f.numbers, "b", 1, "2", 1);
	kv_txn_begin_nested(&t, &nested); /* a failed parent hands its error down */
	ck_assert_int_eq(nested.rc, DIRAUTH_ERR_ROLLBACK);
	kv_txn_put(&nested, f.numbers, "c", 1, "3", 1);
	ck_assert_int_eq(kv_txn_commit(&nested), DIRAUTH_ERR_ROLLBACK);
	ck_assert_int_eq(kv_txn_commit(&t), DIRAUTH_ERR_ROLLBACK);

	ck_assert(!get_string(f.env, f.numbers, "a", NULL, 0));
	ck_assert(!get_string(f.env, f.numbers, "b", NULL, 0));
	ck_assert(!get_string(f.env, f.numbers, "c", NULL, 0));

	/* A transaction used after it ended fails instead of touching freed memory. */
	kv_txn_begin(f.env, &t, KV_WRITE);
	ck_assert_int_eq(kv_txn_commit(&t), 0);
	kv_txn_put(&t, f.numbers, "d", 1, "4", 1);
	ck_assert_int_eq(t.rc, DIRAUTH_ERR_STORE);
	kv_txn_abort(&t);
	fixture_close(&f);
}
END_TEST

START_TEST(test_unflushed_commit)
{
	struct fixture f;
	fixture_open(&f, 1 << 20);
	struct kv_txn t, nested;
	bool synced = true;

	/* A commit that wrote synced the file (so an earlier unflushed one is durable), and is seen
	 * at once by later transactions. */
	kv_txn_begin(f.env, &t, KV_WRITE);
	kv_txn_put(&t, f.numbers, "a", 1, "1", 1);
	ck_assert_int_eq(kv_txn_commit_unflushed(&t, &synced), 0);
	ck_assert(synced);
	char value[8];
	ck_assert(get_string(f.env, f.numbers, "a", value, sizeof value));
	ck_assert_str_eq(value, "1");
	ck_assert_int_eq(kv_env_flush(f.env), 0);

	/* An empty one writes, and so syncs, nothing; nor does a nested or a read transaction. */
	kv_txn_begin(f.env, &t, KV_WRITE);
	ck_assert_int_eq(kv_txn_commit_unflushed(&t, &synced), 0);
	ck_assert(!synced);
	kv_txn_begin(f.env, &t, KV_WRITE);
	kv_txn_begin_nested(&t, &nested);
	kv_txn_put(&nested, f.numbers, "b", 1, "2", 1);
	synced = true;
	ck_assert_int_eq(kv_txn_commit_unflushed(&nested, &synced), 0);
	ck_assert(!synced);
	ck_assert_int_eq(kv_txn_commit_unflushed(&t, &synced), 0); /* the parent wrote "b" */
	ck_assert(synced);
	kv_txn_begin(f.env, &t, KV_READ);
	ck_assert_int_eq(kv_txn_commit_unflushed(&t, &synced), 0);
	ck_assert(!synced);

	/* A failed one commits nothing and says it synced nothing. */
	kv_txn_begin(f.env, &t, KV_WRITE);
	kv_txn_put(&t, f.numbers, "c", 1, "3", 1);
	kv_txn_fail(&t, DIRAUTH_ERR_ROLLBACK);
	synced = true;
	ck_assert_int_eq(kv_txn_commit_unflushed(&t, &synced), DIRAUTH_ERR_ROLLBACK);
	ck_assert(!synced);
	ck_assert(!get_string(f.env, f.numbers, "c", NULL, 0));

	/* Unflushed commits followed by nothing else survive closing and reopening. */
	kv_txn_begin(f.env, &t, KV_WRITE);
	kv_txn_put(&t, f.numbers, "d", 1, "4", 1);
	ck_assert_int_eq(kv_txn_commit_unflushed(&t, &synced), 0);
	kv_env_close(f.env);
	f.env = NULL;
	ck_assert_int_eq(fixture_open_at(&f, f.dir, 1 << 20), 0);
	ck_assert(get_string(f.env, f.numbers, "b", value, sizeof value));
	ck_assert(get_string(f.env, f.numbers, "d", value, sizeof value));
	ck_assert_str_eq(value, "4");
	ck_assert_int_eq(kv_env_flush(NULL), DIRAUTH_ERR_STORE);
	fixture_close(&f);
}
END_TEST

START_TEST(test_nested_join_or_vanish)
{
	struct fixture f;
	char value[16];
	fixture_open(&f, 1 << 20);

	struct kv_txn batch, one, two, three;
	kv_txn_begin(f.env, &batch, KV_WRITE);
	kv_txn_begin_nested(&batch, &one);
	kv_txn_put(&one, f.numbers, "one", 3, "1", 1);
	ck_assert_int_eq(kv_txn_commit(&one), 0);

	kv_txn_begin_nested(&batch, &two);
	struct kv_val found;
	ck_assert(kv_txn_get(&two, f.numbers, "one", 3, &found)); /* sees what the first joined */
	kv_txn_put(&two, f.numbers, "two", 3, "2", 1);
	kv_txn_fail(&two, DIRAUTH_ERR_COLLISION);
	ck_assert_int_eq(kv_txn_commit(&two), DIRAUTH_ERR_COLLISION);
	ck_assert_int_eq(batch.rc, 0); /* the parent goes on */

	kv_txn_begin_nested(&batch, &three);
	kv_txn_put(&three, f.numbers, "three", 5, "3", 1);
	kv_txn_abort(&three);
	ck_assert_int_eq(kv_txn_commit(&batch), 0);

	ck_assert(get_string(f.env, f.numbers, "one", value, sizeof value));
	ck_assert_str_eq(value, "1");
	ck_assert(!get_string(f.env, f.numbers, "two", NULL, 0));
	ck_assert(!get_string(f.env, f.numbers, "three", NULL, 0));

	/* A read transaction cannot have children. */
	struct kv_txn reader, child;
	kv_txn_begin(f.env, &reader, KV_READ);
	kv_txn_begin_nested(&reader, &child);
	ck_assert_int_eq(child.rc, DIRAUTH_ERR_STORE);
	kv_txn_abort(&child);
	ck_assert_int_eq(reader.rc, 0);
	kv_txn_abort(&reader);
	fixture_close(&f);
}
END_TEST

START_TEST(test_step_keeps_its_writes_not_its_error)
{
	struct fixture f;
	char value[16];
	fixture_open(&f, 1 << 20);

	struct kv_txn batch, one, two, three;
	kv_txn_begin(f.env, &batch, KV_WRITE);
	kv_txn_begin_step(&batch, &one);
	kv_txn_put(&one, f.numbers, "one", 3, "1", 1);
	ck_assert_int_eq(kv_txn_commit(&one), 0);

	/* A refusal before any write: the step's error, not the parent's. */
	kv_txn_begin_step(&batch, &two);
	struct kv_val found;
	ck_assert(kv_txn_get(&two, f.numbers, "one", 3, &found));
	kv_txn_fail(&two, DIRAUTH_ERR_COLLISION);
	kv_txn_put(&two, f.numbers, "two", 3, "2", 1); /* a failed step writes nothing more */
	ck_assert_int_eq(kv_txn_commit(&two), DIRAUTH_ERR_COLLISION);
	ck_assert_int_eq(batch.rc, 0);

	/* Nothing is undone: what a step wrote before it failed or was aborted stays. */
	kv_txn_begin_step(&batch, &three);
	kv_txn_put(&three, f.numbers, "three", 5, "3", 1);
	kv_txn_fail(&three, DIRAUTH_ERR_BOUNDS);
	kv_txn_abort(&three);
	ck_assert_int_eq(batch.rc, 0);
	ck_assert(kv_txn_get(&batch, f.numbers, "three", 5, &found)); /* the parent goes on */
	ck_assert_int_eq(kv_txn_commit(&batch), 0);

	ck_assert(get_string(f.env, f.numbers, "one", value, sizeof value));
	ck_assert_str_eq(value, "1");
	ck_assert(!get_string(f.env, f.numbers, "two", NULL, 0));
	ck_assert(get_string(f.env, f.numbers, "three", value, sizeof value));
	ck_assert_str_eq(value, "3");

	/* A failed parent hands its error down; an ended one is DIRAUTH_ERR_STORE. */
	kv_txn_begin(f.env, &batch, KV_WRITE);
	kv_txn_fail(&batch, DIRAUTH_ERR_FULL);
	kv_txn_begin_step(&batch, &one);
	ck_assert_int_eq(one.rc, DIRAUTH_ERR_FULL);
	ck_assert_int_eq(kv_txn_commit(&one), DIRAUTH_ERR_FULL);
	kv_txn_abort(&batch);
	kv_txn_begin_step(&batch, &two);
	ck_assert_int_eq(two.rc, DIRAUTH_ERR_FULL); /* batch keeps its error once ended */
	kv_txn_abort(&two);
	kv_txn_begin(f.env, &batch, KV_WRITE);
	ck_assert_int_eq(kv_txn_commit(&batch), 0);
	kv_txn_begin_step(&batch, &three);
	ck_assert_int_eq(three.rc, DIRAUTH_ERR_STORE);
	kv_txn_abort(&three);
	fixture_close(&f);
}
END_TEST

START_TEST(test_delete)
{
	struct fixture f;
	fixture_open(&f, 1 << 20);
	put_string(&f, "kept", "k");
	put_string(&f, "gone", "g");

	struct kv_txn t;
	kv_txn_begin(f.env, &t, KV_WRITE);
	ck_assert(kv_txn_delete(&t, f.numbers, "gone", 4));
	ck_assert(!kv_txn_delete(&t, f.numbers, "gone", 4)); /* already gone */
	ck_assert(!kv_txn_delete(&t, f.numbers, "never", 5));
	ck_assert_int_eq(t.rc, 0); /* absent is not a failure */
	struct kv_val found;
	ck_assert(!kv_txn_get(&t, f.numbers, "gone", 4, &found));
	ck_assert(get_string(f.env, f.numbers, "gone", NULL, 0)); /* others see it until the commit */
	ck_assert_int_eq(kv_txn_commit(&t), 0);
	ck_assert(!get_string(f.env, f.numbers, "gone", NULL, 0));
	ck_assert(get_string(f.env, f.numbers, "kept", NULL, 0));

	/* An aborted delete deletes nothing; a read transaction cannot delete. */
	kv_txn_begin(f.env, &t, KV_WRITE);
	ck_assert(kv_txn_delete(&t, f.numbers, "kept", 4));
	kv_txn_abort(&t);
	ck_assert(get_string(f.env, f.numbers, "kept", NULL, 0));
	kv_txn_begin(f.env, &t, KV_READ);
	ck_assert(!kv_txn_delete(&t, f.numbers, "kept", 4));
	ck_assert_int_eq(t.rc, DIRAUTH_ERR_STORE);
	kv_txn_abort(&t);

	/* Deleted after reopening too. */
	kv_env_close(f.env);
	ck_assert_int_eq(fixture_open_at(&f, f.dir, 1 << 20), 0);
	ck_assert(!get_string(f.env, f.numbers, "gone", NULL, 0));
	ck_assert(get_string(f.env, f.numbers, "kept", NULL, 0));
	fixture_close(&f);
}
END_TEST

/* What a walk saw: the keys joined by '|', the values checked against the keys. */
struct seen {
	char keys[1024];
	size_t count;
	size_t stop_after; /* 0: never stop */
	struct kv_txn *fail_in;
	struct kv_db other;
};

static int record_key(void *context, struct kv_val key, struct kv_val value)
{
	struct seen *s = context;
	size_t at = strlen(s->keys);
	ck_assert_uint_lt(at + key.len + 2, sizeof s->keys);
	if (s->count)
		s->keys[at++] = '|';
	for (size_t i = 0; i < key.len; i++)
		s->keys[at++] = key.data[i] ? (char)key.data[i] : '0'; /* a 0x00 shown as '0' */
	s->keys[at] = 0;
	/* Every value is its key's first byte, so the value travels with its own key. */
	ck_assert_uint_eq(value.len, 1);
	ck_assert_uint_eq(value.data[0], key.data[0]);
	s->count++;
	if (s->fail_in && s->count == 2) {
		kv_txn_fail(s->fail_in, DIRAUTH_ERR_MISMATCH);
		return 0;
	}
	if (s->fail_in) {
		struct kv_val found;
		(void)kv_txn_get(s->fail_in, s->other, "x", 1, &found); /* reading is allowed */
	}
	return s->stop_after && s->count == s->stop_after ? 42 : 0;
}

static int walk(struct kv_txn *t, struct kv_db db, const void *prefix, size_t len, struct seen *s)
{
	memset(s->keys, 0, sizeof s->keys);
	s->count = 0;
	return kv_txn_walk_prefix(t, db, prefix, len, record_key, s);
}

START_TEST(test_walk_prefix)
{
	char dir[512];
	struct kv_env *env = NULL;
	struct kv_db names, other;
	const struct kv_database databases[] = {{"names", &names}, {"other", &other}};
	test_make_tempdir(dir, sizeof dir);
	ck_assert_int_eq(kv_env_open(dir, 1 << 20, databases, 2, &env), 0);

	/* Written out of order, including keys around the "a\0" prefix on both sides. */
	const char *const keys[] = {"b", "a-b", "a", "ab", "\xff", "\x01"};
	struct kv_txn t;
	kv_txn_begin(env, &t, KV_WRITE);
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
		kv_txn_put(&t, names, keys[i], strlen(keys[i]), keys[i], 1);
	kv_txn_put(&t, names, "a\0z", 3, "a", 1);
	kv_txn_put(&t, names, "a\0x", 3, "a", 1);
	kv_txn_put(&t, names, "a\0", 2, "a", 1);
	kv_txn_put(&t, other, "x", 1, "x", 1);
	ck_assert_int_eq(kv_txn_commit(&t), 0);

	struct seen s = {0};
	kv_txn_begin(env, &t, KV_READ);
	/* Ascending unsigned bytes, a key before its longer extensions. */
	ck_assert_int_eq(walk(&t, names, NULL, 0, &s), 0);
	ck_assert_str_eq(s.keys, "\x01|a|a0|a0x|a0z|a-b|ab|b|\xff");
	/* Exactly the keys that begin with the prefix, the prefix itself included. */
	ck_assert_int_eq(walk(&t, names, "a\0", 2, &s), 0);
	ck_assert_str_eq(s.keys, "a0|a0x|a0z");
	ck_assert_int_eq(walk(&t, names, "a", 1, &s), 0);
	ck_assert_uint_eq(s.count, 6);
	ck_assert_int_eq(walk(&t, names, "a\0y", 3, &s), 0);
	ck_assert_uint_eq(s.count, 0);
	ck_assert_int_eq(walk(&t, names, "\xff\xff", 2, &s), 0); /* past the last key */
	ck_assert_uint_eq(s.count, 0);
	ck_assert_int_eq(walk(&t, names, "0", 1, &s), 0); /* between keys, matching none */
	ck_assert_uint_eq(s.count, 0);
	static uint8_t too_long[KV_KEY_MAX + 1];
	ck_assert_int_eq(walk(&t, names, too_long, sizeof too_long, &s), 0);
	ck_assert_uint_eq(s.count, 0);
	ck_assert_int_eq(t.rc, 0);

	/* The visitor's non-zero stops the walk and is returned, not recorded. */
	s.stop_after = 2;
	ck_assert_int_eq(walk(&t, names, NULL, 0, &s), 42);
	ck_assert_str_eq(s.keys, "\x01|a");
	ck_assert_int_eq(t.rc, 0);
	s.stop_after = 0;

	/* A failure the visitor records stops the walk and is returned; the visitor may read
	 * another database on the way; a failed transaction walks nothing. */
	s.fail_in = &t;
	s.other = other;
	ck_assert_int_eq(walk(&t, names, NULL, 0, &s), DIRAUTH_ERR_MISMATCH);
	ck_assert_uint_eq(s.count, 2);
	s.fail_in = NULL;
	ck_assert_int_eq(walk(&t, names, NULL, 0, &s), DIRAUTH_ERR_MISMATCH);
	ck_assert_uint_eq(s.count, 0);
	kv_txn_abort(&t);

	/* A write transaction walks its own uncommitted writes. */
	kv_txn_begin(env, &t, KV_WRITE);
	kv_txn_put(&t, names, "a\0y", 3, "a", 1);
	ck_assert(kv_txn_delete(&t, names, "a\0x", 3));
	ck_assert_int_eq(walk(&t, names, "a\0", 2, &s), 0);
	ck_assert_str_eq(s.keys, "a0|a0y|a0z");
	ck_assert_int_eq(kv_txn_walk_prefix(&t, names, "a", 1, NULL, NULL), DIRAUTH_ERR_SYNTAX);
	kv_txn_abort(&t);

	kv_env_close(env);
	test_remove_tree(dir);
}
END_TEST

/* Writes count records of size bytes each, keys "k<i>", in one transaction; returns commit's. */
static int put_many(struct kv_env *env, struct kv_db db, unsigned first, unsigned count, size_t size)
{
	static uint8_t big[8192];
	struct kv_txn t;
	ck_assert_uint_le(size, sizeof big);
	kv_txn_begin(env, &t, KV_WRITE);
	for (unsigned i = first; i < first + count && !t.rc; i++) {
		char key[16];
		int n = snprintf(key, sizeof key, "k%u", i);
		big[0] = (uint8_t)i;
		kv_txn_put(&t, db, key, (size_t)n, big, size);
	}
	return kv_txn_commit(&t);
}

static unsigned count_records(struct kv_env *env, struct kv_db db)
{
	struct kv_txn t;
	unsigned count = 0;
	kv_txn_begin(env, &t, KV_READ);
	for (unsigned i = 0; i < 4096; i++) {
		char key[16];
		struct kv_val found;
		int n = snprintf(key, sizeof key, "k%u", i);
		if (kv_txn_get(&t, db, key, (size_t)n, &found))
			count++;
	}
	ck_assert_int_eq(t.rc, 0);
	kv_txn_abort(&t);
	return count;
}

START_TEST(test_map_full_then_grown)
{
	struct fixture f;
	struct kv_env_info info, before;
	fixture_open(&f, 64 * 1024);
	put_string(&f, "before", "b");

	ck_assert_int_eq(kv_env_info(f.env, &info), 0);
	ck_assert_uint_eq(info.map_size, 64 * 1024);
	ck_assert_uint_eq(info.page_size, (size_t)sysconf(_SC_PAGESIZE));
	ck_assert_uint_ge(info.used, 2 * info.page_size); /* at least the two meta pages */
	ck_assert_uint_le(info.used, info.map_size);

	/* Full: refused with DIRAUTH_ERR_FULL, and nothing of the transaction is written. */
	ck_assert_int_eq(put_many(f.env, f.numbers, 0, 64, 4096), DIRAUTH_ERR_FULL);
	ck_assert_uint_eq(count_records(f.env, f.numbers), 0);
	ck_assert(get_string(f.env, f.numbers, "before", NULL, 0));
	ck_assert_int_eq(kv_env_info(f.env, &before), 0);
	ck_assert_uint_le(before.used, before.map_size);

	/* A smaller map than the data is refused; an open write transaction is detected. Neither
	 * changes anything. */
	ck_assert_int_eq(kv_env_set_map_size(f.env, before.used - 1), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(kv_env_set_map_size(f.env, 0), DIRAUTH_ERR_BOUNDS);
	struct kv_txn t;
	kv_txn_begin(f.env, &t, KV_WRITE);
	ck_assert_int_eq(kv_env_set_map_size(f.env, 1 << 20), DIRAUTH_ERR_STORE);
	kv_txn_put(&t, f.numbers, "during", 6, "d", 1);
	ck_assert_int_eq(kv_txn_commit(&t), 0);
	ck_assert_int_eq(kv_env_info(f.env, &info), 0);
	ck_assert_uint_eq(info.map_size, 64 * 1024);

	/* Grown, the same writes succeed, and the use is reported. */
	ck_assert_int_eq(kv_env_set_map_size(f.env, 1 << 20), 0);
	ck_assert_int_eq(kv_env_info(f.env, &info), 0);
	ck_assert_uint_eq(info.map_size, 1 << 20);
	ck_assert_int_eq(put_many(f.env, f.numbers, 0, 64, 4096), 0);
	ck_assert_uint_eq(count_records(f.env, f.numbers), 64);
	ck_assert_int_eq(kv_env_info(f.env, &info), 0);
	ck_assert_uint_gt(info.used, 64 * 4096);
	ck_assert_uint_le(info.used, info.map_size);

	/* Full again at the larger size, in a nested transaction of a batch: the batch keeps
	 * what came before it. */
	struct kv_txn batch, nested;
	kv_txn_begin(f.env, &batch, KV_WRITE);
	kv_txn_put(&batch, f.numbers, "batch", 5, "b", 1);
	kv_txn_begin_nested(&batch, &nested);
	static uint8_t big[8192];
	for (unsigned i = 0; i < 512 && !nested.rc; i++) {
		char key[16];
		int n = snprintf(key, sizeof key, "n%u", i);
		kv_txn_put(&nested, f.numbers, key, (size_t)n, big, sizeof big);
	}
	ck_assert_int_eq(kv_txn_commit(&nested), DIRAUTH_ERR_FULL);
	ck_assert_int_eq(kv_txn_commit(&batch), 0);
	ck_assert(get_string(f.env, f.numbers, "batch", NULL, 0));
	ck_assert(!get_string(f.env, f.numbers, "n0", NULL, 0));

	/* Reopened with the old, smaller size, everything reads back (the map is made just large
	 * enough for the data). */
	kv_env_close(f.env);
	ck_assert_int_eq(fixture_open_at(&f, f.dir, 64 * 1024), 0);
	ck_assert_uint_eq(count_records(f.env, f.numbers), 64);
	ck_assert(get_string(f.env, f.numbers, "during", NULL, 0));
	ck_assert_int_eq(kv_env_info(f.env, &info), 0);
	ck_assert_uint_ge(info.map_size, info.used);
	fixture_close(&f);
}
END_TEST

START_TEST(test_hot_copy)
{
	struct fixture f;
	char path[800], copy[700], value[16];
	struct stat st;
	fixture_open(&f, 4 << 20);
	ck_assert_int_eq(put_many(f.env, f.numbers, 0, 200, 2048), 0);
	put_string(&f, "kept", "yes");

	/* Leave free pages behind, which a compacting copy drops. */
	struct kv_txn t;
	kv_txn_begin(f.env, &t, KV_WRITE);
	for (unsigned i = 0; i < 200; i++) {
		char key[16];
		int n = snprintf(key, sizeof key, "k%u", i);
		ck_assert(kv_txn_delete(&t, f.numbers, key, (size_t)n));
	}
	ck_assert_int_eq(kv_txn_commit(&t), 0);

	off_t sizes[2];
	for (int compact = 0; compact < 2; compact++) {
		snprintf(copy, sizeof copy, "%s/copy%d", f.dir, compact);
		ck_assert_int_eq(mkdir(copy, 0700), 0);
		snprintf(path, sizeof path, "%s/data.mdb", copy);
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(kv_env_copy_to_fd(f.env, fd, compact != 0), 0);
		ck_assert_int_eq(close(fd), 0);
		ck_assert_int_eq(stat(path, &st), 0);
		sizes[compact] = st.st_size;

		struct fixture c;
		ck_assert_int_eq(fixture_open_at(&c, copy, 1 << 20), 0);
		ck_assert(get_string(c.env, c.numbers, "kept", value, sizeof value));
		ck_assert_str_eq(value, "yes");
		ck_assert_uint_eq(count_records(c.env, c.numbers), 0);
		kv_env_close(c.env);
	}
	ck_assert_int_lt(sizes[1], sizes[0]);
	ck_assert_int_eq(kv_env_copy_to_fd(f.env, -1, true), DIRAUTH_ERR_IO);

	/* Into a directory: created 0600, never over an existing file or through a link, and a
	 * write after the copy is not in it. */
	snprintf(copy, sizeof copy, "%s/backup", f.dir);
	ck_assert_int_eq(kv_env_copy_to_directory(f.env, copy, true), DIRAUTH_ERR_IO); /* missing */
	ck_assert_int_eq(mkdir(copy, 0700), 0);
	ck_assert_int_eq(kv_env_copy_to_directory(f.env, copy, true), 0);
	snprintf(path, sizeof path, "%s/data.mdb", copy);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
	ck_assert_int_eq(kv_env_copy_to_directory(f.env, copy, true), DIRAUTH_ERR_EXISTS);
	put_string(&f, "after", "no");

	snprintf(path, sizeof path, "%s/linked", f.dir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	char link_path[900], target[800];
	snprintf(link_path, sizeof link_path, "%s/data.mdb", path);
	snprintf(target, sizeof target, "%s/target", f.dir);
	ck_assert_int_eq(symlink(target, link_path), 0);
	ck_assert_int_eq(kv_env_copy_to_directory(f.env, path, false), DIRAUTH_ERR_EXISTS);
	ck_assert_int_ne(access(target, F_OK), 0); /* nothing written through the link */

	static char long_path[5000];
	memset(long_path, 'd', sizeof long_path - 1);
	long_path[0] = '/';
	ck_assert_int_eq(kv_env_copy_to_directory(f.env, long_path, true), DIRAUTH_ERR_BOUNDS);

	struct fixture c;
	ck_assert_int_eq(fixture_open_at(&c, copy, 1 << 20), 0);
	ck_assert(get_string(c.env, c.numbers, "kept", NULL, 0));
	ck_assert(!get_string(c.env, c.numbers, "after", NULL, 0));
	kv_env_close(c.env);
	fixture_close(&f);
}
END_TEST

static Suite *kv_suite(void)
{
	Suite *suite = suite_create("kv");
	TCase *tc = tcase_create("kv");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_open_write_reopen);
	tcase_add_test(tc, test_keys_and_values_bounded);
	tcase_add_test(tc, test_sticky_error_commits_nothing);
	tcase_add_test(tc, test_nested_join_or_vanish);
	tcase_add_test(tc, test_step_keeps_its_writes_not_its_error);
	tcase_add_test(tc, test_delete);
	tcase_add_test(tc, test_walk_prefix);
	tcase_add_test(tc, test_map_full_then_grown);
	tcase_add_test(tc, test_hot_copy);
	tcase_add_test(tc, test_unflushed_commit);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(kv_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
