/*
 * check_clock.c: the system clock tells the time; the file clock reads its file at each call
 * and refuses a missing, oversized or malformed file.
 */
#include "clock/clock.h"
#include "base/error.h"
#include "test_support.h"

#include <check.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

START_TEST(test_system_clock)
{
	struct clock *clock = NULL;
	ck_assert_int_eq(clock_open_system(&clock), 0);
	ck_assert(!clock_is_file(clock));
	uint64_t before = (uint64_t)time(NULL), now = 0;
	ck_assert_int_eq(clock_now(clock, &now), 0);
	ck_assert_uint_ge(now, before);
	clock_close(clock);
	clock_close(NULL);
}
END_TEST

START_TEST(test_file_clock)
{
	char dir[512], path[640];
	test_make_tempdir(dir, sizeof dir);
	snprintf(path, sizeof path, "%s/clock", dir);
	struct clock *clock = NULL;
	ck_assert_int_eq(clock_open_file(path, &clock), 0);
	ck_assert(clock_is_file(clock));
	uint64_t now = 7;
	ck_assert_int_eq(clock_now(clock, &now), DIRAUTH_ERR_IO);
	ck_assert_uint_eq(now, 7);

	test_write_file(path, "1000\n", 5, 0644);
	ck_assert_int_eq(clock_now(clock, &now), 0);
	ck_assert_uint_eq(now, 1000);
	test_write_file(path, "1060", 4, 0644);
	ck_assert_int_eq(clock_now(clock, &now), 0);
	ck_assert_uint_eq(now, 1060);

	const char *bad[] = {"",      "\n",    "-5\n",   "0100\n",
	                     "12 \n", "1e3\n", "10\n\n", "99999999999999999999999\n"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		test_write_file(path, bad[i], strlen(bad[i]), 0644);
		ck_assert_msg(clock_now(clock, &now) == DIRAUTH_ERR_SYNTAX, "accepted '%s'", bad[i]);
	}
	char big[CLOCK_FILE_MAX_BYTES + 2];
	memset(big, '1', sizeof big);
	test_write_file(path, big, sizeof big, 0644);
	ck_assert_int_eq(clock_now(clock, &now), DIRAUTH_ERR_BOUNDS);
	ck_assert_uint_eq(now, 1060);
	clock_close(clock);
	test_remove_tree(dir);
}
END_TEST

/* A manual clock reads what was last set, in seconds and on its monotonic scale; other clocks
 * cannot be set. */
START_TEST(test_manual_clock)
{
	struct clock *clock = NULL, *system = NULL;
	uint64_t now = 0;
	ck_assert_int_eq(clock_open_manual(1800000000, &clock), 0);
	ck_assert_int_eq(clock_now(clock, &now), 0);
	ck_assert_uint_eq(now, 1800000000);
	ck_assert(!clock_is_file(clock));
	ck_assert_int_eq(clock_set(clock, 1800000042), 0);
	ck_assert_int_eq(clock_now(clock, &now), 0);
	ck_assert_uint_eq(now, 1800000042);
	ck_assert_uint_eq(clock_monotonic_ms(clock), 1800000042000ULL);
	/* Milliseconds: the seconds it reads, and its own monotonic time for deadlines. */
	ck_assert_int_eq(clock_set_ms(clock, 1800000050999ULL), 0);
	ck_assert_int_eq(clock_now(clock, &now), 0);
	ck_assert_uint_eq(now, 1800000050);
	ck_assert_uint_eq(clock_monotonic_ms(clock), 1800000050999ULL);
	ck_assert_int_eq(clock_open_system(&system), 0);
	ck_assert_int_eq(clock_set(system, 5), DIRAUTH_ERR_CONFIG);
	ck_assert_int_eq(clock_set_ms(system, 5000), DIRAUTH_ERR_CONFIG);
	/* The system clock's is CLOCK_MONOTONIC: it does not go back. */
	uint64_t before = clock_monotonic_ms(system);
	ck_assert_uint_gt(before, 0);
	ck_assert_uint_ge(clock_monotonic_ms(system), before);
	clock_close(system);
	clock_close(clock);
}
END_TEST

static Suite *clock_suite(void)
{
	Suite *suite = suite_create("clock");
	TCase *tc = tcase_create("clock");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_system_clock);
	tcase_add_test(tc, test_file_clock);
	tcase_add_test(tc, test_manual_clock);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(clock_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
