/*
 * check_router.c: route patterns match whole segments only, capture single segments (empty ones
 * too) and the rest of a path, and never match a prefix, a longer path or a bad pattern.
 */
#include "server/http/router.h"

#include <check.h>

#include <string.h>

static int match(const char *pattern, const char *path, struct router_match *m)
{
	return router_match_path(pattern, path, strlen(path), m);
}

static void expect_capture(const struct router_match *m, size_t i, const char *text)
{
	ck_assert_uint_gt(m->count, i);
	ck_assert_uint_eq(m->captures[i].len, strlen(text));
	ck_assert(memcmp(m->captures[i].data, text, m->captures[i].len) == 0);
}

START_TEST(test_literals)
{
	struct router_match m;
	ck_assert(match("/v1/health", "/v1/health", &m));
	ck_assert_uint_eq(m.count, 0);
	ck_assert(!match("/v1/health", "/v1/health/", &m));
	ck_assert(!match("/v1/health", "/v1/healthz", &m));
	ck_assert(!match("/v1/health", "/v1/healt", &m));
	ck_assert(!match("/v1/health", "/v1", &m));
	ck_assert(!match("/v1/health", "v1/health", &m));
	ck_assert(!match("/v1/health", "", &m));
	ck_assert(!match("", "/", &m));
	ck_assert(match("/", "/", &m));
}
END_TEST

START_TEST(test_captures)
{
	struct router_match m;
	const char *pattern = "/v1/{namespace}/snapshots/{epoch}";
	ck_assert(match(pattern, "/v1/mix/snapshots/12", &m));
	ck_assert_uint_eq(m.count, 2);
	expect_capture(&m, 0, "mix");
	expect_capture(&m, 1, "12");
	ck_assert(match(pattern, "/v1/mix/snapshots/", &m));
	expect_capture(&m, 1, "");
	ck_assert(match(pattern, "/v1//snapshots/1", &m));
	expect_capture(&m, 0, "");
	ck_assert(!match(pattern, "/v1/mix/snapshots", &m));
	ck_assert(!match(pattern, "/v1/mix/snapshots/12/body", &m));
	ck_assert(!match(pattern, "/v1/mix/other/12", &m));
	ck_assert(match("/v1/{namespace}/snapshots/{epoch}/body", "/v1/mix/snapshots/latest/body", &m));
	expect_capture(&m, 1, "latest");
}
END_TEST

START_TEST(test_rest)
{
	struct router_match m;
	const char *pattern = "/v1/{namespace}/log/tile/{...}";
	ck_assert(match(pattern, "/v1/mix/log/tile/0/x001/x234/067.p/5", &m));
	ck_assert_uint_eq(m.count, 2);
	expect_capture(&m, 1, "0/x001/x234/067.p/5");
	ck_assert(match(pattern, "/v1/mix/log/tile/", &m));
	expect_capture(&m, 1, "");
	ck_assert(!match(pattern, "/v1/mix/log/tile", &m));
}
END_TEST

START_TEST(test_too_many_captures)
{
	struct router_match m;
	ck_assert(match("/{a}/{b}/{c}/{d}", "/1/2/3/4", &m));
	ck_assert(!match("/{a}/{b}/{c}/{d}/{e}", "/1/2/3/4/5", &m));
}
END_TEST

static Suite *router_suite(void)
{
	Suite *suite = suite_create("router");
	TCase *tc = tcase_create("router");
	tcase_add_test(tc, test_literals);
	tcase_add_test(tc, test_captures);
	tcase_add_test(tc, test_rest);
	tcase_add_test(tc, test_too_many_captures);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(router_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
