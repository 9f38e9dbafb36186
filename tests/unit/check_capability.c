/*
 * check_capability.c: dirauthctl's capability of a private namespace (ctl/capability.h):
 * `capability new` writes a fresh secret to a new file of mode 0600, never over another, and
 * prints its digest; `fetch --capability-file` reads one secret back as its Authorization line
 * and refuses a file that is not one.
 */
#include "ctl/capability.h"

#include "crypto/crypto.h"
#include "schema/encoding.h"
#include "base/error.h"
#include "test_support.h"

#include <check.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

START_TEST(test_new_and_read)
{
	char dir[512], path[700], again[700], hex[65], other_hex[65];
	char authorization[CTL_AUTHORIZATION_MAX];
	struct ctl_report report;
	test_make_tempdir(dir, sizeof dir);
	snprintf(path, sizeof path, "%s/tenant.capability", dir);
	snprintf(again, sizeof again, "%s/other.capability", dir);

	ctl_report_init(&report);
	ck_assert_int_eq(ctl_capability_new(path, hex, &report), 0);
	struct stat st;
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	size_t len = 0;
	uint8_t *text = test_read_file(path, &len);
	ck_assert_uint_eq(len, 45); /* 32 bytes in base64, and a newline */
	ck_assert_int_eq(text[44], '\n');
	uint8_t digest[32];
	char expected[65];
	ck_assert_int_eq(crypto_sha256(text, 44, digest), 0);
	hex_encode(digest, sizeof digest, expected);
	ck_assert_str_eq(hex, expected);

	/* Read back as the header fetch sends. */
	ck_assert_int_eq(ctl_capability_read("fetch", path, authorization, &report), 0);
	ck_assert_int_eq(strncmp(authorization, "Authorization: Bearer ", 22), 0);
	ck_assert_int_eq(memcmp(authorization + 22, text, 44), 0);
	ck_assert_uint_eq(strlen(authorization), 22 + 44);
	free(text);

	/* Never over an existing file; each secret is new. */
	ck_assert_int_eq(ctl_capability_new(path, hex, &report), DIRAUTH_ERR_EXISTS);
	ck_assert_int_eq(report.exit_code, CTL_EXIT_CANNOT_CREATE);
	ctl_report_init(&report);
	ck_assert_int_eq(ctl_capability_new(again, other_hex, &report), 0);
	ck_assert_str_ne(hex, other_hex);
	test_remove_tree(dir);
}
END_TEST

START_TEST(test_read_refusals)
{
	char dir[512], path[700];
	char authorization[CTL_AUTHORIZATION_MAX];
	struct ctl_report report;
	test_make_tempdir(dir, sizeof dir);
	snprintf(path, sizeof path, "%s/secret", dir);

	ctl_report_init(&report);
	ck_assert_int_ne(ctl_capability_read("fetch", path, authorization, &report), 0);
	ck_assert_int_eq(report.exit_code, CTL_EXIT_NO_INPUT);
	const char *const bad[] = {"",
	                           "\n",
	                           "short\n",
	                           "has a space in it somewhere\n",
	                           "aGVsbG8td29ybGQtMDAwMDAwMDA=\n\n",
	                           "aGVsbG8td29ybGQtMDAwMDAwMDA=\r\n"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		test_write_file(path, bad[i], strlen(bad[i]), 0600);
		ctl_report_init(&report);
		ck_assert_msg(ctl_capability_read("fetch", path, authorization, &report) != 0, "'%s'",
		              bad[i]);
		ck_assert_int_eq(report.exit_code, CTL_EXIT_DATA);
		ck_assert_ptr_nonnull(strstr(report.message, "fetch: --capability-file"));
	}
	char *long_secret = malloc(CTL_CAPABILITY_MAX + 2);
	memset(long_secret, 'a', CTL_CAPABILITY_MAX + 1);
	test_write_file(path, long_secret, CTL_CAPABILITY_MAX + 1, 0600);
	ctl_report_init(&report);
	ck_assert_int_ne(ctl_capability_read("fetch", path, authorization, &report), 0);
	ck_assert_int_eq(report.exit_code, CTL_EXIT_DATA);
	test_write_file(path, long_secret, CTL_CAPABILITY_MAX, 0600);
	ctl_report_init(&report);
	ck_assert_int_eq(ctl_capability_read("fetch", path, authorization, &report), 0);
	free(long_secret);
	/* Without a final newline, or with one, the same secret. */
	test_write_file(path, "aGVsbG8td29ybGQtMDAwMDAwMDA=", 28, 0600);
	ck_assert_int_eq(ctl_capability_read("fetch", path, authorization, &report), 0);
	ck_assert_str_eq(authorization, "Authorization: Bearer aGVsbG8td29ybGQtMDAwMDAwMDA=");
	test_remove_tree(dir);
}
END_TEST

START_TEST(test_command_usage)
{
	struct ctl_report report;
	char *missing_out[] = {"capability", "new", NULL};
	ctl_report_init(&report);
	ck_assert_int_eq(ctl_capability_command(2, missing_out, &report), CTL_EXIT_USAGE);
	ck_assert_str_eq(report.message,
	                 "capability new: --out is required (see dirauthctl capability new --help)");
	char *empty_out[] = {"capability", "new", "--out", "", NULL};
	ctl_report_init(&report);
	ck_assert_int_eq(ctl_capability_command(4, empty_out, &report), CTL_EXIT_USAGE);
	ck_assert_str_eq(report.message,
	                 "capability new: --out is required (see dirauthctl capability new --help)");
	char *unknown[] = {"capability", "old", NULL};
	ctl_report_init(&report);
	ck_assert_int_eq(ctl_capability_command(2, unknown, &report), CTL_EXIT_USAGE);
	char *none[] = {"capability", NULL};
	ctl_report_init(&report);
	ck_assert_int_eq(ctl_capability_command(1, none, &report), CTL_EXIT_USAGE);
	char *extra[] = {"capability", "new", "--out", "x", "y", NULL};
	ctl_report_init(&report);
	ck_assert_int_eq(ctl_capability_command(5, extra, &report), CTL_EXIT_USAGE);
	ck_assert_str_eq(report.message, "capability new: unexpected argument 'y'");
	char *bad_option[] = {"capability", "new", "--in", "x", NULL};
	ctl_report_init(&report);
	ck_assert_int_eq(ctl_capability_command(4, bad_option, &report), CTL_EXIT_USAGE);
	ck_assert_str_eq(report.message, "capability new: unknown option '--in'");
	char *no_value[] = {"capability", "new", "--out", NULL};
	ctl_report_init(&report);
	ck_assert_int_eq(ctl_capability_command(3, no_value, &report), CTL_EXIT_USAGE);
	ck_assert_str_eq(report.message, "capability new: option '--out' needs a value");
	/* A refused word wins over --help, wherever --help stands. */
	char *help_first[] = {"capability", "new", "--help", "--bogus", NULL};
	ctl_report_init(&report);
	ck_assert_int_eq(ctl_capability_command(4, help_first, &report), CTL_EXIT_USAGE);
	ck_assert_str_eq(report.message, "capability new: unknown option '--bogus'");

	char dir[512], path[700];
	test_make_tempdir(dir, sizeof dir);
	snprintf(path, sizeof path, "%s/made.capability", dir);
	char *make[] = {"capability", "new", "--out", path, NULL};
	ctl_report_init(&report);
	ck_assert_int_eq(ctl_capability_command(4, make, &report), CTL_EXIT_OK);
	struct stat st;
	ck_assert_int_eq(stat(path, &st), 0);
	test_remove_tree(dir);
}
END_TEST

static Suite *capability_suite(void)
{
	Suite *s = suite_create("capability");
	TCase *t = tcase_create("ctl");
	tcase_add_test(t, test_new_and_read);
	tcase_add_test(t, test_read_refusals);
	tcase_add_test(t, test_command_usage);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	SRunner *runner = srunner_create(capability_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
