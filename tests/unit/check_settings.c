/*
 * check_settings.c: the YAML reader under every configuration refuses what makes YAML dangerous
 * or ambiguous (aliases, anchors, tags, several documents, deep nesting, oversize files) with the
 * line at fault and which rule refused, takes a caller's lower bounds, and its typed accessors
 * refuse what a schema did not ask for.
 */
#include "base/error.h"
#include "settings/settings.h"
#include "test_support.h"

#include <check.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

/* Reads len bytes of text under a caller's bounds; returns what settings_read returned. */
static int parse_bounded(const char *text, size_t len, size_t max_bytes, size_t max_depth, struct parsed *p)
{
	memset(p, 0, sizeof *p);
	p->reader.error = &p->error;
	p->reader.max_bytes = max_bytes;
	p->reader.max_depth = max_depth;
	int rc = settings_read(&p->reader, (const uint8_t *)text, len, &p->root);
	settings_free(p->root);
	p->root = NULL;
	return rc;
}

/* Text of depth nested flow sequences around one scalar: "[[x]]" for 2. */
static char *nested(size_t depth)
{
	char *text = malloc(2 * depth + 3);
	ck_assert_ptr_nonnull(text);
	memset(text, '[', depth);
	text[depth] = 'x';
	memset(text + depth + 1, ']', depth);
	memcpy(text + 2 * depth + 1, "\n", 2);
	return text;
}

static void expect_refusal_kind(const char *text, enum settings_refusal refusal)
{
	struct parsed p;
	ck_assert_msg(parse(text, &p) == DIRAUTH_ERR_CONFIG, "accepted: %s", text);
	ck_assert_msg(p.error.refusal == refusal, "%s: refusal %d, not %d (%s)", text, (int)p.error.refusal,
	              (int)refusal, p.error.message);
	ck_assert_int_eq(settings_refusal_is_bound(p.error.refusal), 0);
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
	ck_assert_int_eq(error.refusal, SETTINGS_REFUSED_SIZE);
	ck_assert_ptr_null(buf);
	snprintf(path, sizeof path, "%s/missing.yaml", dir);
	ck_assert_int_eq(settings_load(path, &buf, &len, &base_dir, &error), DIRAUTH_ERR_CONFIG);
	ck_assert_int_eq(error.refusal, SETTINGS_REFUSED_FILE);
	ck_assert_int_eq(settings_load(dir, &buf, &len, &base_dir, &error), DIRAUTH_ERR_CONFIG);
	ck_assert_int_eq(error.refusal, SETTINGS_REFUSED_FILE);
	/* A FIFO no one writes to is refused at once, not waited on (Check's timeout would fail it). */
	snprintf(path, sizeof path, "%s/fifo.yaml", dir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert_int_eq(settings_load(path, &buf, &len, &base_dir, &error), DIRAUTH_ERR_CONFIG);
	ck_assert_int_eq(error.refusal, SETTINGS_REFUSED_FILE);
	test_remove_tree(dir);
}
END_TEST

START_TEST(test_refusals_say_which_rule)
{
	/* The grammar: a caller reports these apart from the bounds. */
	expect_refusal_kind("a: &anchor 1\n", SETTINGS_REFUSED_ANCHOR);
	expect_refusal_kind("a: *anchor\n", SETTINGS_REFUSED_ALIAS);
	expect_refusal_kind("a: !!str 1\n", SETTINGS_REFUSED_TAG);
	expect_refusal_kind("a: 1\n---\nb: 2\n", SETTINGS_REFUSED_DOCUMENTS);
	expect_refusal_kind("# nothing\n", SETTINGS_REFUSED_EMPTY);
	expect_refusal_kind("a: [1, 2\n", SETTINGS_REFUSED_SYNTAX);

	/* The bounds. */
	struct parsed p;
	char *deep = nested(SETTINGS_MAX_DEPTH + 1);
	ck_assert_int_eq(parse(deep, &p), DIRAUTH_ERR_CONFIG);
	ck_assert_int_eq(p.error.refusal, SETTINGS_REFUSED_DEPTH);
	ck_assert(settings_refusal_is_bound(p.error.refusal));
	free(deep);

	/* One node past SETTINGS_MAX_NODES, in a file under SETTINGS_MAX_BYTES: the sequence and
	 * SETTINGS_MAX_NODES scalars, the last of them refused. */
	size_t len = 1 + 2 * (size_t)SETTINGS_MAX_NODES + 1;
	char *many = malloc(len + 1);
	ck_assert_ptr_nonnull(many);
	many[0] = '[';
	for (size_t i = 0; i < SETTINGS_MAX_NODES; i++)
		memcpy(many + 1 + 2 * i, "1,", 2);
	many[len - 2] = ']';
	many[len - 1] = '\n';
	many[len] = '\0';
	ck_assert_uint_le(len, SETTINGS_MAX_BYTES);
	ck_assert_int_eq(parse(many, &p), DIRAUTH_ERR_CONFIG);
	ck_assert_int_eq(p.error.refusal, SETTINGS_REFUSED_NODES);
	ck_assert(settings_refusal_is_bound(p.error.refusal));
	ck_assert_ptr_nonnull(strstr(p.error.message, "too many YAML nodes"));
	free(many);

	/* The caller's schema. */
	ck_assert_int_eq(parse("a: x\n", &p), 0);
	uint64_t value;
	ck_assert_int_eq(settings_u64(&p.reader, settings_lookup(p.root, "a"), "a", 0, 9, &value),
	                 DIRAUTH_ERR_CONFIG);
	ck_assert_int_eq(p.error.refusal, SETTINGS_REFUSED_VALUE);
	ck_assert_int_eq(settings_refusal_is_bound(p.error.refusal), 0);
	settings_free(p.root);
}
END_TEST

START_TEST(test_caller_bounds)
{
	struct parsed p;
	/* A byte bound lower than the reader's: the text may be that long and not one byte longer. */
	const char *text = "key: value\n";
	size_t len = strlen(text);
	ck_assert_int_eq(parse_bounded(text, len, len, 0, &p), 0);
	ck_assert_int_eq(parse_bounded(text, len, len - 1, 0, &p), DIRAUTH_ERR_CONFIG);
	ck_assert_int_eq(p.error.refusal, SETTINGS_REFUSED_SIZE);
	ck_assert(settings_refusal_is_bound(p.error.refusal));
	ck_assert_uint_eq(p.error.line, 0);
	ck_assert_str_eq(p.error.message, "the file is larger than 10 bytes");

	/* A bound above the reader's own is the reader's own. */
	size_t big_len = SETTINGS_MAX_BYTES + 1;
	char *big = malloc(big_len);
	ck_assert_ptr_nonnull(big);
	memset(big, '#', big_len);
	ck_assert_int_eq(parse_bounded(big, big_len, 2 * SETTINGS_MAX_BYTES, 0, &p), DIRAUTH_ERR_CONFIG);
	ck_assert_int_eq(p.error.refusal, SETTINGS_REFUSED_SIZE);
	ck_assert_int_eq(parse_bounded(big, big_len - 1, 0, 0, &p), DIRAUTH_ERR_CONFIG);
	ck_assert_int_eq(p.error.refusal, SETTINGS_REFUSED_EMPTY); /* within the bound: only comments */
	free(big);

	/* A depth bound lower than the reader's: that many collections open at once, not one more. */
	char *two = nested(2), *three = nested(3);
	ck_assert_int_eq(parse_bounded(two, strlen(two), 0, 2, &p), 0);
	ck_assert_int_eq(parse_bounded(three, strlen(three), 0, 2, &p), DIRAUTH_ERR_CONFIG);
	ck_assert_int_eq(p.error.refusal, SETTINGS_REFUSED_DEPTH);
	ck_assert_uint_eq(p.error.line, 1);
	ck_assert_str_eq(p.error.message, "nesting deeper than 2 levels");
	free(two);
	free(three);

	/* 0 or a bound above the reader's own: SETTINGS_MAX_DEPTH. */
	char *at = nested(SETTINGS_MAX_DEPTH), *past = nested(SETTINGS_MAX_DEPTH + 1);
	ck_assert_int_eq(parse_bounded(at, strlen(at), 0, 0, &p), 0);
	ck_assert_int_eq(parse_bounded(past, strlen(past), 0, 0, &p), DIRAUTH_ERR_CONFIG);
	ck_assert_int_eq(parse_bounded(past, strlen(past), 0, 4 * SETTINGS_MAX_DEPTH, &p),
	                 DIRAUTH_ERR_CONFIG);
	ck_assert_int_eq(p.error.refusal, SETTINGS_REFUSED_DEPTH);
	free(at);
	free(past);
}
END_TEST

START_TEST(test_utf8_only)
{
	/* "a: 1\n" in UTF-16LE behind its byte-order mark. */
	static const char utf16[] = "\xff\xfe"
	                            "a\0:\0 \0"
	                            "1\0\n\0";
	struct parsed p;
	memset(&p, 0, sizeof p);
	p.reader.error = &p.error;
	ck_assert_int_eq(settings_read(&p.reader, (const uint8_t *)utf16, sizeof utf16 - 1, &p.root), 0);
	ck_assert_str_eq(settings_lookup(p.root, "a")->text, "1");
	settings_free(p.root);

	memset(&p, 0, sizeof p);
	p.reader.error = &p.error;
	p.reader.utf8_only = 1;
	ck_assert_int_eq(settings_read(&p.reader, (const uint8_t *)utf16, sizeof utf16 - 1, &p.root),
	                 DIRAUTH_ERR_CONFIG);
	ck_assert_ptr_null(p.root);
	ck_assert_int_eq(p.error.refusal, SETTINGS_REFUSED_SYNTAX);
	ck_assert_uint_eq(p.error.line, 1);
	ck_assert_int_eq(parse("a: 1\n", &p), 0); /* UTF-8 itself is read either way */
	settings_free(p.root);
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
	tcase_add_test(tc, test_refusals_say_which_rule);
	tcase_add_test(tc, test_caller_bounds);
	tcase_add_test(tc, test_utf8_only);
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
