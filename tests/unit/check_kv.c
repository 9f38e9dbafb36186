/*
 * check_kv.c: the LMDB layer under the store and the ledger: an environment is created in a
 * private directory (with its parents), a committed write survives reopening, a transaction
 * that failed once stays failed and commits nothing, and LMDB's codes map to the project's.
 */
#include "schema/error.h"
#include "kv/kv.h"
#include "test_support.h"

#include <check.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

START_TEST(test_open_write_reopen)
{
	char dir[512], path[700];
	struct stat st;
	MDB_env *env = NULL;
	MDB_dbi numbers;
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
	kv_txn_begin(env, &t, NULL, 0);
	kv_txn_put(&t, numbers, "seven", 5, value, sizeof value);
	ck_assert_int_eq(kv_txn_commit(&t), 0);
	mdb_env_close(env);

	ck_assert_int_eq(kv_env_open(path, 1 << 20, databases, 1, &env), 0);
	MDB_val found;
	kv_txn_begin(env, &t, NULL, MDB_RDONLY);
	ck_assert(kv_txn_get(&t, numbers, "seven", 5, &found));
	ck_assert_uint_eq(found.mv_size, 8);
	ck_assert_uint_eq(kv_get_u64(found.mv_data), 0x0102030405060708ULL);
	ck_assert(!kv_txn_get(&t, numbers, "eight", 5, &found));
	ck_assert_int_eq(t.rc, 0); /* absent is not a failure */
	kv_txn_abort(&t);
	mdb_env_close(env);

	/* A file where the directory should be is refused. */
	snprintf(path, sizeof path, "%s/file", dir);
	test_write_file(path, "x", 1, 0600);
	ck_assert_int_eq(kv_env_open(path, 1 << 20, databases, 1, &env), DIRAUTH_ERR_IO);
	test_remove_tree(dir);
}
END_TEST

START_TEST(test_sticky_error_commits_nothing)
{
	char dir[512];
	MDB_env *env = NULL;
	MDB_dbi numbers;
	const struct kv_database databases[] = {{"numbers", &numbers}};
	test_make_tempdir(dir, sizeof dir);
	ck_assert_int_eq(kv_env_open(dir, 1 << 20, databases, 1, &env), 0);

	struct kv_txn t, nested;
	kv_txn_begin(env, &t, NULL, 0);
	kv_txn_put(&t, numbers, "a", 1, "1", 1);
	kv_txn_fail(&t, DIRAUTH_ERR_ROLLBACK);
	kv_txn_fail(&t, DIRAUTH_ERR_COLLISION); /* the first error stays */
	kv_txn_put(&t, numbers, "b", 1, "2", 1);
	kv_txn_begin(env, &nested, &t, 0); /* a failed parent hands its error down */
	ck_assert_int_eq(nested.rc, DIRAUTH_ERR_ROLLBACK);
	ck_assert_int_eq(kv_txn_commit(&t), DIRAUTH_ERR_ROLLBACK);

	MDB_val found;
	kv_txn_begin(env, &t, NULL, MDB_RDONLY);
	ck_assert(!kv_txn_get(&t, numbers, "a", 1, &found));
	ck_assert(!kv_txn_get(&t, numbers, "b", 1, &found));
	kv_txn_abort(&t);
	mdb_env_close(env);
	test_remove_tree(dir);
}
END_TEST

START_TEST(test_map_full_and_error_mapping)
{
	char dir[512];
	MDB_env *env = NULL;
	MDB_dbi numbers;
	const struct kv_database databases[] = {{"numbers", &numbers}};
	test_make_tempdir(dir, sizeof dir);
	ck_assert_int_eq(kv_env_open(dir, 64 * 1024, databases, 1, &env), 0);
	static uint8_t big[4096];
	struct kv_txn t;
	kv_txn_begin(env, &t, NULL, 0);
	for (unsigned i = 0; i < 64 && !t.rc; i++) {
		char key[16];
		int n = snprintf(key, sizeof key, "k%u", i);
		kv_txn_put(&t, numbers, key, (size_t)n, big, sizeof big);
	}
	ck_assert_int_eq(kv_txn_commit(&t), DIRAUTH_ERR_FULL);
	mdb_env_close(env);

	ck_assert_int_eq(kv_error_from_lmdb(0), 0);
	ck_assert_int_eq(kv_error_from_lmdb(MDB_MAP_FULL), DIRAUTH_ERR_FULL);
	ck_assert_int_eq(kv_error_from_lmdb(MDB_NOTFOUND), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(kv_error_from_lmdb(ENOMEM), DIRAUTH_ERR_NOMEM);
	ck_assert_int_eq(kv_error_from_lmdb(MDB_CORRUPTED), DIRAUTH_ERR_STORE);
	ck_assert_int_eq(kv_error_from_system(EACCES), DIRAUTH_ERR_IO);
	test_remove_tree(dir);
}
END_TEST

static Suite *kv_suite(void)
{
	Suite *suite = suite_create("kv");
	TCase *tc = tcase_create("kv");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_open_write_reopen);
	tcase_add_test(tc, test_sticky_error_commits_nothing);
	tcase_add_test(tc, test_map_full_and_error_mapping);
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
