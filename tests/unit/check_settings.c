/*
 * check_settings.c: the YAML reader under every configuration refuses what makes YAML dangerous
 * or ambiguous (aliases, anchors, tags, several documents, deep nesting, oversize files) with the
 * line at fault, and its typed accessors refuse what a schema did not ask for.
 */
#include "schema/error.h"
#include "settings/settings.h"
#include "test_support.h"

#include <check.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct parsed {
	struct settings_reader reader;
	struct settings_error error;
	struct settings_node *root;
};

static int parse(const char *text, struct parsed *p)
{
	memset(p, 0, sizeof *p);
	p->reader.error = &p->error;
	p->reader.base_dir = "/etc/example";
	return settings_read(&p->reader, (const uint8_t *)text, strlen(text), &p->root);
}

static void expect_refused(const char *text, size_t line, const char *words)
{
	struct parsed p;
	ck_assert_msg(parse(text, &p) == DIRAUTH_ERR_CONFIG, "accepted: %s", text);
	ck_assert_ptr_null(p.root);
	ck_assert_msg(p.error.line == line, "line %zu, not %zu: %s", p.error.line, line, p.error.message);
	ck_assert_msg(strstr(p.error.message, words) != NULL, "'%s' does not say '%s'", p.error.message,
	              words);
}

START_TEST(test_tree_and_accessors)
{
	struct parsed p;
	ck_assert_int_eq(
	    parse("name: example\ncount: 42\npath: keys/a.key\nlist: [a, b]\nquoted: \"7\"\n", &p), 0);
	static const char *const keys[] = {"name", "count", "path", "list", "quoted", NULL};
	ck_assert_int_eq(settings_check_keys(&p.reader, p.root, keys, "root"), 0);

	char text[16], path[SETTINGS_PATH_MAX];
	uint64_t count = 0;
	const struct settings_node *node;
	ck_assert_int_eq(settings_require(&p.reader, p.root, "name", "root", &node), 0);
	ck_assert_int_eq(settings_string(&p.reader, node, "name", text, sizeof text), 0);
	ck_assert_str_eq(text, "example");
	ck_assert_int_eq(settings_u64(&p.reader, settings_lookup(p.root, "count"), "count", 1, 100, &count),
	                 0);
	ck_assert_uint_eq(count, 42);
	ck_assert_int_eq(settings_path(&p.reader, settings_lookup(p.root, "path"), "path", path), 0);
	ck_assert_str_eq(path, "/etc/example/keys/a.key");
	ck_assert_int_eq(settings_lookup(p.root, "list")->kind, SETTINGS_SEQUENCE);

	/* Refusals, each naming its line. */
	ck_assert_int_eq(settings_u64(&p.reader, settings_lookup(p.root, "count"), "count", 1, 10, &count),
	                 DIRAUTH_ERR_CONFIG);
	ck_assert_uint_eq(p.error.line, 2);
	ck_assert_int_eq(settings_u64(&p.reader, settings_lookup(p.root, "quoted"), "quoted", 0, 10, &count),
	                 DIRAUTH_ERR_CONFIG); /* a quoted number is a string */
	ck_assert_int_eq(settings_string(&p.reader, node, "name", text, 4), DIRAUTH_ERR_CONFIG);
	ck_assert_int_eq(
	    settings_expect_kind(&p.reader, settings_lookup(p.root, "list"), SETTINGS_MAPPING, "list"),
	    DIRAUTH_ERR_CONFIG);
	ck_assert_uint_eq(p.error.line, 4);
	ck_assert_int_eq(settings_require(&p.reader, p.root, "missing", "root", &node), DIRAUTH_ERR_CONFIG);
	static const char *const fewer[] = {"name", NULL};
	ck_assert_int_eq(settings_check_keys(&p.reader, p.root, fewer, "root"), DIRAUTH_ERR_CONFIG);
	ck_assert_ptr_nonnull(strstr(p.error.message, "unknown key 'count'"));
	settings_free(p.root);
	settings_free(NULL);
}
END_TEST

START_TEST(test_dangerous_yaml_refused)
{
	expect_refused("a: &anchor 1\nb: 2\n", 1, "anchors");
	expect_refused("a: 1\nb: *anchor\n", 2, "");
	expect_refused("a: !!str 1\n", 1, "tags");
	expect_refused("a: 1\n---\nb: 2\n", 2, "one YAML document");
	expect_refused("a: [1, 2\n", 2, "");
	expect_refused("", 1, "empty");
	/* Nesting one level past the bound, however it is written. */
	char deep[256] = "";
	for (int i = 0; i <= SETTINGS_MAX_DEPTH; i++)
		strcat(deep, "[");
	for (int i = 0; i <= SETTINGS_MAX_DEPTH; i++)
		strcat(deep, "]");
	strcat(deep, "\n");
	expect_refused(deep, 1, "nesting deeper");
}
END_TEST

START_TEST(test_duplicate_keys_refused)
{
	struct parsed p;
	ck_assert_int_eq(parse("a: 1\nb: 2\na: 3\n", &p), 0);
	static const char *const keys[] = {"a", "b", NULL};
	ck_assert_int_eq(settings_check_keys(&p.reader, p.root, keys, "root"), DIRAUTH_ERR_CONFIG);
	ck_assert_uint_eq(p.error.line, 3);
	ck_assert_ptr_nonnull(strstr(p.error.message, "duplicate key 'a'"));
	settings_free(p.root);
}
END_TEST

START_TEST(test_clock_section)
{
	struct parsed p;
	char path[SETTINGS_PATH_MAX];
	int is_file = -1;
	ck_assert_int_eq(parse("clock: {source: system}\n", &p), 0);
	ck_assert_int_eq(settings_clock(&p.reader, settings_lookup(p.root, "clock"), &is_file, path), 0);
	ck_assert_int_eq(is_file, 0);
	ck_assert_str_eq(path, "");
	settings_free(p.root);

	ck_assert_int_eq(parse("clock: {source: file, path: run/clock}\n", &p), 0);
	ck_assert_int_eq(settings_clock(&p.reader, settings_lookup(p.root, "clock"), &is_file, path), 0);
	ck_assert_int_eq(is_file, 1);
	ck_assert_str_eq(path, "/etc/example/run/clock");
	settings_free(p.root);

	const char *refused[] = {"clock: {source: file}\n",
	                         "clock: {source: system, path: x}\n",
	                         "clock: {source: sundial}\n",
	                         "clock: {path: x}\n",
	                         "clock: system\n",
	                         "clock: {source: system, speed: 2}\n"};
	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
		ck_assert_int_eq(parse(refused[i], &p), 0);
		ck_assert_msg(settings_clock(&p.reader, settings_lookup(p.root, "clock"), &is_file, path) ==
		                  DIRAUTH_ERR_CONFIG,
		              "accepted %s", refused[i]);
		settings_free(p.root);
	}
}
END_TEST

START_TEST(test_load_file)
{
	char dir[512], path[700];
	uint8_t *buf = NULL;
	char *base_dir = NULL;
	size_t len = 0;
	struct settings_error error;
	test_make_tempdir(dir, sizeof dir);
	snprintf(path, sizeof path, "%s/example.yaml", dir);
	test_write_file(path, "a: 1\n", 5, 0644);
	ck_assert_int_eq(settings_load(path, &buf, &len, &base_dir, &error), 0);
	ck_assert_uint_eq(len, 5);
	ck_assert_str_eq(base_dir, dir);
	free(buf);
	free(base_dir);

	/* Too large, missing, not a regular file: refused as the file as a whole (line 0). */
	size_t big_len = SETTINGS_MAX_BYTES + 1;
	char *big = malloc(big_len);
	ck_assert_ptr_nonnull(big);
	memset(big, '#', big_len);
	test_write_file(path, big, big_len, 0644);
	free(big);
	ck_assert_int_eq(settings_load(path, &buf, &len, &base_dir, &error), DIRAUTH_ERR_CONFIG);
	ck_assert_uint_eq(error.line, 0);
	ck_assert_ptr_null(buf);
	snprintf(path, sizeof path, "%s/missing.yaml", dir);
	ck_assert_int_eq(settings_load(path, &buf, &len, &base_dir, &error), DIRAUTH_ERR_CONFIG);
	ck_assert_int_eq(settings_load(dir, &buf, &len, &base_dir, &error), DIRAUTH_ERR_CONFIG);
	test_remove_tree(dir);
}
END_TEST

static Suite *settings_suite(void)
{
	Suite *suite = suite_create("settings");
	TCase *tc = tcase_create("settings");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_tree_and_accessors);
	tcase_add_test(tc, test_dangerous_yaml_refused);
	tcase_add_test(tc, test_duplicate_keys_refused);
	tcase_add_test(tc, test_clock_section);
	tcase_add_test(tc, test_load_file);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(settings_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
