/*
 * check_schedule.c: the epoch arithmetic: which epoch a time falls in, the times of an epoch's
 * snapshot, and the refusal of schedules and epochs whose times would overflow.
 */
#include "base/error.h"
#include "schedule/schedule.h"

#include <check.h>

#include <stdint.h>

#define GENESIS 1000000ULL
#define LENGTH  60ULL

static const struct epoch_schedule schedule = {GENESIS, LENGTH, 3, 0, 0, 0};

START_TEST(test_epoch_of)
{
	uint64_t epoch = 99;
	ck_assert_int_eq(schedule_epoch_of(&schedule, GENESIS - 1, &epoch), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_uint_eq(epoch, 99);
	ck_assert_int_eq(schedule_epoch_of(&schedule, GENESIS, &epoch), 0);
	ck_assert_uint_eq(epoch, 0);
	ck_assert_int_eq(schedule_epoch_of(&schedule, GENESIS + LENGTH - 1, &epoch), 0);
	ck_assert_uint_eq(epoch, 0);
	ck_assert_int_eq(schedule_epoch_of(&schedule, GENESIS + 7 * LENGTH, &epoch), 0);
	ck_assert_uint_eq(epoch, 7);
}
END_TEST

START_TEST(test_epoch_times)
{
	struct epoch_times t;
	ck_assert_int_eq(schedule_epoch_times(&schedule, 7, &t), 0);
	ck_assert_uint_eq(t.valid_after, GENESIS + 7 * LENGTH);
	ck_assert_uint_eq(t.fresh_until, GENESIS + 8 * LENGTH);
	ck_assert_uint_eq(t.valid_until, GENESIS + 10 * LENGTH);
	ck_assert_int_eq(schedule_epoch_times(&schedule, UINT64_MAX / 2, &t), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(schedule_epoch_times(&schedule, UINT64_MAX, &t), DIRAUTH_ERR_BOUNDS);
}
END_TEST

START_TEST(test_check)
{
	struct epoch_schedule s = schedule;
	ck_assert_int_eq(schedule_check(&s), 0);
	s.length = 0;
	ck_assert_int_eq(schedule_check(&s), DIRAUTH_ERR_CONFIG);
	s.length = SCHEDULE_LENGTH_MAX + 1;
	ck_assert_int_eq(schedule_check(&s), DIRAUTH_ERR_CONFIG);
	s = schedule;
	s.validity_epochs = 0;
	ck_assert_int_eq(schedule_check(&s), DIRAUTH_ERR_CONFIG);
	s.validity_epochs = SCHEDULE_VALIDITY_MAX + 1;
	ck_assert_int_eq(schedule_check(&s), DIRAUTH_ERR_CONFIG);
	s = schedule;
	s.genesis = SCHEDULE_GENESIS_MAX + 1;
	ck_assert_int_eq(schedule_check(&s), DIRAUTH_ERR_CONFIG);
}
END_TEST

START_TEST(test_phases)
{
	/* 60-second epochs prepared 30 s ahead: votes for 10 s, signatures for 10 s. */
	struct epoch_schedule s = {GENESIS, LENGTH, 3, 30, 10, 10};
	ck_assert_int_eq(schedule_check(&s), 0);
	struct epoch_phases p;
	ck_assert_int_eq(schedule_epoch_phases(&s, 7, &p), 0);
	ck_assert_uint_eq(p.start, GENESIS + 7 * LENGTH);
	ck_assert_uint_eq(p.vote_at, GENESIS + 7 * LENGTH - 30);
	ck_assert_uint_eq(p.vote_deadline, GENESIS + 7 * LENGTH - 20);
	ck_assert_uint_eq(p.signature_deadline, GENESIS + 7 * LENGTH - 10);
	/* Epoch 7 is current from its cut-off until epoch 8's. */
	uint64_t epoch;
	ck_assert_int_eq(schedule_current_epoch(&s, p.vote_at - 1, &epoch), 0);
	ck_assert_uint_eq(epoch, 6);
	ck_assert_int_eq(schedule_current_epoch(&s, p.vote_at, &epoch), 0);
	ck_assert_uint_eq(epoch, 7);
	ck_assert_int_eq(schedule_current_epoch(&s, p.start + LENGTH - 31, &epoch), 0);
	ck_assert_uint_eq(epoch, 7);
	ck_assert_int_eq(schedule_current_epoch(&s, p.start + LENGTH - 30, &epoch), 0);
	ck_assert_uint_eq(epoch, 8);
	/* A commit before the cut-off goes to epoch 7, at or after it to epoch 8. */
	ck_assert_uint_eq(schedule_destination_epoch(&s, p.vote_at - 1), 7);
	ck_assert_uint_eq(schedule_destination_epoch(&s, p.vote_at), 8);
	/* Epoch 0 prepared before genesis; before its cut-off, nothing is current. */
	ck_assert_int_eq(schedule_current_epoch(&s, GENESIS - 31, &epoch), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_uint_eq(schedule_destination_epoch(&s, GENESIS - 31), 0);
	/* Phases that do not fit the epoch are refused. */
	s.prepare = LENGTH;
	ck_assert_int_eq(schedule_check(&s), DIRAUTH_ERR_CONFIG);
	s.prepare = 15;
	ck_assert_int_eq(schedule_check(&s), DIRAUTH_ERR_CONFIG);
	/* One authority alone: everything at the epoch's start. */
	struct epoch_schedule alone = {GENESIS, LENGTH, 3, 0, 0, 0};
	ck_assert_int_eq(schedule_epoch_phases(&alone, 7, &p), 0);
	ck_assert_uint_eq(p.vote_at, p.start);
	ck_assert_uint_eq(p.signature_deadline, p.start);
	ck_assert_uint_eq(schedule_destination_epoch(&alone, p.start - 1), 7);
}
END_TEST

static Suite *schedule_suite(void)
{
	Suite *suite = suite_create("schedule");
	TCase *tc = tcase_create("schedule");
	tcase_add_test(tc, test_epoch_of);
	tcase_add_test(tc, test_epoch_times);
	tcase_add_test(tc, test_check);
	tcase_add_test(tc, test_phases);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(schedule_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
