/*
 * check_metrics_format.c: the lines of the Prometheus text format that GET /v1/metrics writes
 * (server/http/metrics_format.h): a label value escaped as the format says, whatever a configured
 * name holds; a histogram's buckets cumulative up to +Inf, with its sum and count; labels too
 * long for a line refused rather than cut.
 */
#include "base/buffer.h"
#include "base/error.h"
#include "server/http/metrics_format.h"

#include <check.h>

#include <stdlib.h>
#include <string.h>

static const char *text_of(struct buffer *out)
{
	ck_assert_int_eq(buffer_append(out, "", 1), 0);
	return (const char *)out->data;
}

START_TEST(test_family_and_samples)
{
	struct buffer out;
	struct metrics_labels labels;
	buffer_init(&out);
	ck_assert_int_eq(metrics_family(&out, "dirauth_x_total", "counter", "Things."), 0);
	ck_assert_int_eq(metrics_sample_u64(&out, "dirauth_x_total", NULL, 18446744073709551615ULL), 0);
	metrics_labels_init(&labels);
	metrics_labels_add(&labels, "namespace", "mix");
	metrics_labels_add(&labels, "member", "a\\b\"c\nd");
	ck_assert_int_eq(metrics_sample_i64(&out, "dirauth_y_seconds", &labels, -2), 0);
	ck_assert_int_eq(metrics_sample_double(&out, "dirauth_z_seconds", NULL, 0.5), 0);
	ck_assert_str_eq(text_of(&out), "# HELP dirauth_x_total Things.\n"
	                                "# TYPE dirauth_x_total counter\n"
	                                "dirauth_x_total 18446744073709551615\n"
	                                "dirauth_y_seconds{namespace=\"mix\",member=\"a\\\\b\\\"c\\nd\"} -2\n"
	                                "dirauth_z_seconds 0.500000\n");
	buffer_free(&out);
}
END_TEST

START_TEST(test_histogram_is_cumulative)
{
	struct buffer out;
	struct metrics_labels labels;
	const double bounds[] = {0.01, 0.5, 2};
	const uint64_t per_bucket[] = {3, 0, 2, 1}; /* the last: above 2 s */
	buffer_init(&out);
	metrics_labels_init(&labels);
	metrics_labels_add(&labels, "phase", "vote");
	ck_assert_int_eq(metrics_histogram(&out, "dirauth_d_seconds", &labels, bounds, 3, per_bucket, 7.25),
	                 0);
	ck_assert_str_eq(text_of(&out), "dirauth_d_seconds_bucket{phase=\"vote\",le=\"0.01\"} 3\n"
	                                "dirauth_d_seconds_bucket{phase=\"vote\",le=\"0.5\"} 3\n"
	                                "dirauth_d_seconds_bucket{phase=\"vote\",le=\"2\"} 5\n"
	                                "dirauth_d_seconds_bucket{phase=\"vote\",le=\"+Inf\"} 6\n"
	                                "dirauth_d_seconds_sum{phase=\"vote\"} 7.250000\n"
	                                "dirauth_d_seconds_count{phase=\"vote\"} 6\n");
	buffer_reset(&out);
	/* Without labels, le alone. */
	ck_assert_int_eq(metrics_histogram(&out, "dirauth_d_seconds", NULL, bounds, 1, per_bucket, 0), 0);
	ck_assert_ptr_nonnull(strstr(text_of(&out), "dirauth_d_seconds_bucket{le=\"0.01\"} 3\n"));
	buffer_free(&out);
}
END_TEST

START_TEST(test_labels_too_long_are_refused)
{
	struct buffer out;
	struct metrics_labels labels;
	char value[700];
	memset(value, 'a', sizeof value - 1);
	value[sizeof value - 1] = 0;
	buffer_init(&out);
	metrics_labels_init(&labels);
	metrics_labels_add(&labels, "member", value);
	ck_assert_int_eq(metrics_sample_u64(&out, "dirauth_x", &labels, 1), DIRAUTH_ERR_BOUNDS);
	ck_assert_uint_eq(out.len, 0);
	buffer_free(&out);
}
END_TEST

static Suite *metrics_format_suite(void)
{
	Suite *suite = suite_create("metrics_format");
	TCase *tc = tcase_create("lines");
	tcase_add_test(tc, test_family_and_samples);
	tcase_add_test(tc, test_histogram_is_cumulative);
	tcase_add_test(tc, test_labels_too_long_are_refused);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(metrics_format_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? EXIT_FAILURE : EXIT_SUCCESS;
}
