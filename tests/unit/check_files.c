/*
 * check_files.c: ctl/files.h's moves, links and removals, on which a mirror's tree rests: a move
 * replaces its target whole, a link never replaces one, a removal takes a whole tree, follows no
 * symbolic link, and is done when there is nothing to remove.
 */
#include "test_support.h"

#include "base/error.h"
#include "ctl/files.h"

#include <check.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void write_text(const char *path, const char *text)
{
	test_write_file(path, text, strlen(text), 0644);
}

static void expect_text(const char *path, const char *text)
{
	size_t len = 0;
	uint8_t *bytes = test_read_file(path, &len);
	ck_assert_uint_eq(len, strlen(text));
	ck_assert(memcmp(bytes, text, len) == 0);
	free(bytes);
}

START_TEST(test_move_replaces_the_target)
{
	char dir[256], from[512], to[512];
	test_make_tempdir(dir, sizeof(dir));
	snprintf(from, sizeof(from), "%s/new", dir);
	snprintf(to, sizeof(to), "%s/latest", dir);
	write_text(from, "new");
	write_text(to, "old");
	ck_assert_int_eq(ctl_file_move(from, to), 0);
	expect_text(to, "new");
	ck_assert(!ctl_file_exists(from));
	ck_assert_int_eq(ctl_file_move(from, to), DIRAUTH_ERR_NOT_FOUND);
	expect_text(to, "new");
	test_remove_tree(dir);
}
END_TEST

START_TEST(test_link_never_replaces)
{
	char dir[256], from[512], to[512];
	test_make_tempdir(dir, sizeof(dir));
	snprintf(from, sizeof(from), "%s/served", dir);
	snprintf(to, sizeof(to), "%s/held", dir);
	ck_assert_int_eq(ctl_file_link(from, to), DIRAUTH_ERR_NOT_FOUND);
	write_text(from, "served");
	ck_assert_int_eq(ctl_file_link(from, to), 0);
	expect_text(to, "served");
	ck_assert_int_eq(ctl_file_link(from, to), DIRAUTH_ERR_EXISTS);
	/* A file written atomically over the link leaves the linked file as it was. */
	ck_assert_int_eq(ctl_file_write_atomic(dir, "held", (const uint8_t *)"fetched", 7), 0);
	expect_text(from, "served");
	expect_text(to, "fetched");
	test_remove_tree(dir);
}
END_TEST

START_TEST(test_remove_tree_takes_everything_and_follows_no_link)
{
	char dir[256], tree[512], deep[640], file[700], outside[512], link_path[640];
	test_make_tempdir(dir, sizeof(dir));
	snprintf(tree, sizeof(tree), "%s/tree", dir);
	snprintf(deep, sizeof(deep), "%s/a/b/c", tree);
	ck_assert_int_eq(ctl_directory_create(deep), 0);
	snprintf(file, sizeof(file), "%s/file", deep);
	write_text(file, "x");
	snprintf(outside, sizeof(outside), "%s/outside", dir);
	write_text(outside, "kept");
	snprintf(link_path, sizeof(link_path), "%s/a/link", tree);
	ck_assert(symlink(outside, link_path) == 0);
	ck_assert_int_eq(ctl_directory_remove_tree(tree), 0);
	ck_assert(!ctl_file_exists(tree));
	expect_text(outside, "kept");
	/* Nothing there: done. */
	ck_assert_int_eq(ctl_directory_remove_tree(tree), 0);
	snprintf(deep, sizeof(deep), "%s/never/made", dir);
	ck_assert_int_eq(ctl_directory_remove_tree(deep), 0);
	test_remove_tree(dir);
}
END_TEST

static Suite *files_suite(void)
{
	Suite *suite = suite_create("files");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_move_replaces_the_target);
	tcase_add_test(tc, test_link_never_replaces);
	tcase_add_test(tc, test_remove_tree_takes_everything_and_follows_no_link);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(files_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
