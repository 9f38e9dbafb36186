/*
 * check_framing.c: request heads and framing rules: every ambiguity of RFC 9112 that could let
 * two parsers disagree about where a request ends is refused with its status, and well-formed
 * heads pass with the framing they declare.
 */
#include "server/http/framing.h"

#include <check.h>

#include <stdio.h>
#include <string.h>

static int parse(const char *text, struct http_head *head, struct http_framing_verdict *verdict)
{
	return http_head_parse((const uint8_t *)text, strlen(text), head, verdict);
}

static void expect_refused(const char *text, enum api_error error)
{
	struct http_head head;
	struct http_framing_verdict verdict;
	ck_assert_msg(parse(text, &head, &verdict) == -1, "accepted: %s", text);
	ck_assert_msg(verdict.error == error, "%s: error %d, expected %d (%s)", text, verdict.error, error,
	              verdict.detail);
	ck_assert(verdict.detail[0]);
}

START_TEST(test_accepted)
{
	struct http_head head;
	struct http_framing_verdict verdict;
	const char *get = "GET /v1/health HTTP/1.1\r\nHost: a\r\nAccept: */*\r\n\r\nGET /next";
	ck_assert_int_eq(parse(get, &head, &verdict), 0);
	ck_assert_uint_eq(head.head_len, strlen("GET /v1/health HTTP/1.1\r\nHost: a\r\nAccept: */*\r\n\r\n"));
	ck_assert_uint_eq(head.field_count, 2);
	ck_assert_uint_eq(head.fields[1].value.len, 3);
	ck_assert(memcmp(head.fields[1].value.data, "*/*", 3) == 0);
	ck_assert(head.framing.http_1_1);
	ck_assert(!head.framing.has_length && !head.framing.chunked);

	ck_assert_int_eq(parse("POST /v1/registrations HTTP/1.1\r\nHost: a\r\nContent-Length: 12\r\n\r\n",
	                       &head, &verdict),
	                 0);
	ck_assert(head.framing.has_length);
	ck_assert_uint_eq(head.framing.length, 12);
	ck_assert_int_eq(
	    parse("POST /r HTTP/1.1\r\nHost: a\r\ntransfer-encoding:  Chunked \r\n\r\n", &head, &verdict), 0);
	ck_assert(head.framing.chunked);
	/* HTTP/1.0 needs no Host; empty lines before the request line are skipped (RFC 9112 2.2). */
	ck_assert_int_eq(parse("\r\nGET / HTTP/1.0\r\n\r\n", &head, &verdict), 0);
	ck_assert(!head.framing.http_1_1);
	ck_assert_int_eq(parse("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 9223372036854775807\r\n\r\n",
	                       &head, &verdict),
	                 0);
}
END_TEST

START_TEST(test_incomplete)
{
	struct http_head head;
	struct http_framing_verdict verdict;
	ck_assert_int_eq(parse("", &head, &verdict), 1);
	ck_assert_int_eq(parse("GET / HTTP/1.1\r\nHost: a\r\n", &head, &verdict), 1);
	ck_assert_int_eq(parse("GET / HTTP/1.1\r\nHost: a\r\n\r", &head, &verdict), 1);
	char big[HTTP_HEAD_MAX + 10];
	memset(big, 'a', sizeof big);
	memcpy(big, "GET / HTTP/1.1\r\nX: ", 19);
	ck_assert_int_eq(http_head_parse((const uint8_t *)big, HTTP_HEAD_MAX - 1, &head, &verdict), 1);
	ck_assert_int_eq(http_head_parse((const uint8_t *)big, sizeof big, &head, &verdict), -1);
	ck_assert_int_eq(verdict.error, API_ERROR_HEADERS_TOO_LARGE);
}
END_TEST

START_TEST(test_length_and_coding)
{
	expect_refused(
	    "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
	    API_ERROR_BAD_REQUEST);
	expect_refused("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 5\r\n\r\n",
	               API_ERROR_BAD_REQUEST);
	expect_refused("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n",
	               API_ERROR_BAD_REQUEST);
	/* Not a number: malformed. */
	const char *lengths[] = {"-1", "+10", "0x10", "1e3", "", "1 2", "١", "18446744073709551616x"};
	for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
		char text[256];
		snprintf(text, sizeof text, "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: %s\r\n\r\n",
		         lengths[i]);
		expect_refused(text, API_ERROR_BAD_REQUEST);
	}
	/* A number past every route's bound, however large: too large, once the rest of the framing
	 * holds (a framing fault is still a 400). */
	const char *huge[] = {"9223372036854775808", "18446744073709551615", "18446744073709551616",
	                      "9999999999999999999999999999999999999999", "000018446744073709551616"};
	for (size_t i = 0; i < sizeof huge / sizeof huge[0]; i++) {
		char text[256];
		snprintf(text, sizeof text, "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: %s\r\n\r\n",
		         huge[i]);
		expect_refused(text, API_ERROR_BODY_TOO_LARGE);
		snprintf(text, sizeof text, "POST / HTTP/1.1\r\nContent-Length: %s\r\n\r\n", huge[i]);
		expect_refused(text, API_ERROR_BAD_REQUEST);
		snprintf(text, sizeof text,
		         "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: %s\r\nContent-Length: 1\r\n\r\n",
		         huge[i]);
		expect_refused(text, API_ERROR_BAD_REQUEST);
	}
	expect_refused("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
	               API_ERROR_NOT_IMPLEMENTED);
	expect_refused("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: xchunked\r\n\r\n",
	               API_ERROR_NOT_IMPLEMENTED);
	expect_refused(
	    "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
	    API_ERROR_NOT_IMPLEMENTED);
	expect_refused("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", API_ERROR_NOT_IMPLEMENTED);
	expect_refused("POST / HTTP/1.1\r\nHost: a\r\n\r\n", API_ERROR_LENGTH_REQUIRED);
}
END_TEST

START_TEST(test_host_and_fields)
{
	expect_refused("GET / HTTP/1.1\r\n\r\n", API_ERROR_BAD_REQUEST);
	expect_refused("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", API_ERROR_BAD_REQUEST);
	expect_refused("GET / HTTP/1.1\r\nHost: a\r\nFoo : bar\r\n\r\n", API_ERROR_BAD_REQUEST);
	expect_refused("GET / HTTP/1.1\r\nHost: a\r\nFoo\t: bar\r\n\r\n", API_ERROR_BAD_REQUEST);
	expect_refused("GET / HTTP/1.1\r\nHost: a\r\nFoo: bar\r\n baz\r\n\r\n", API_ERROR_BAD_REQUEST);
	expect_refused("GET / HTTP/1.1\r\nHost: a\r\nNo colon\r\n\r\n", API_ERROR_BAD_REQUEST);
	expect_refused("GET / HTTP/1.1\r\nHost: a\r\n: empty name\r\n\r\n", API_ERROR_BAD_REQUEST);
	expect_refused("GET / HTTP/1.1\r\nHost: a\r\nFoo: a\x01z\r\n\r\n", API_ERROR_BAD_REQUEST);
	expect_refused("GET / HTTP/1.1\nHost: a\n\n", API_ERROR_BAD_REQUEST);
	expect_refused("GET / HTTP/1.1\r\nHost: a\rX: y\r\n\r\n", API_ERROR_BAD_REQUEST);
	char many[8192] = "GET / HTTP/1.1\r\nHost: a\r\n";
	for (int i = 0; i < HTTP_HEAD_MAX_FIELDS; i++)
		strcat(many, "X-A: b\r\n");
	strcat(many, "\r\n");
	expect_refused(many, API_ERROR_HEADERS_TOO_LARGE);
}
END_TEST

START_TEST(test_request_line)
{
	expect_refused("GET /  HTTP/1.1\r\nHost: a\r\n\r\n", API_ERROR_BAD_REQUEST);
	expect_refused("GET / HTTP/1.1 x\r\nHost: a\r\n\r\n", API_ERROR_BAD_REQUEST);
	expect_refused("GET\r\nHost: a\r\n\r\n", API_ERROR_BAD_REQUEST);
	/* Targets that are neither a path nor an absolute http(s) URI. */
	const char *targets[] = {"*",       "a:443",       "ftp://a/",    "http:/a/",
	                         "http://", "http://@a/",  "http://u@a/", "http://u:p@a/v1/health",
	                         "//a",     "a/v1/health", "mailto:a@b"};
	for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
		char text[256];
		snprintf(text, sizeof text, "GET %s HTTP/1.1\r\nHost: a\r\n\r\n", targets[i]);
		if (strcmp(targets[i], "//a") == 0) {
			struct http_head head;
			struct http_framing_verdict verdict;
			ck_assert_int_eq(parse(text, &head, &verdict), 0); /* a path, of empty segments */
			continue;
		}
		expect_refused(text, API_ERROR_BAD_REQUEST);
	}
	expect_refused("GET / HTTP/2.0\r\nHost: a\r\n\r\n", API_ERROR_BAD_REQUEST);
	expect_refused("GET / http/1.1\r\nHost: a\r\n\r\n", API_ERROR_BAD_REQUEST);
	expect_refused("G(T / HTTP/1.1\r\nHost: a\r\n\r\n", API_ERROR_BAD_REQUEST);
	expect_refused("GET /a\x7f HTTP/1.1\r\nHost: a\r\n\r\n", API_ERROR_BAD_REQUEST);
}
END_TEST

/* RFC 9112 3.2: the path of a target in origin or absolute form. */
START_TEST(test_target_path)
{
	const struct {
		const char *target, *path; /* NULL: refused */
	} cases[] = {
	    {"/v1/health", "/v1/health"},
	    {"/v1/health?x=1", "/v1/health"},
	    {"/", "/"},
	    {"http://dirauth.example/v1/health", "/v1/health"},
	    {"HTTP://dirauth.example/v1/health", "/v1/health"},
	    {"https://dirauth.example:8443/v1/mix/snapshots/12/body", "/v1/mix/snapshots/12/body"},
	    {"http://[2001:db8::1]:80/v1/health?x=/y", "/v1/health"},
	    {"http://a/v1/m%69x", "/v1/m%69x"},
	    {"http://a", ""},
	    {"http://a?x=1", ""},
	    {"http://a/", "/"},
	    {"http://a//v1/health", "//v1/health"},
	    {"", NULL},
	    {"*", NULL},
	    {"a:443", NULL},
	    {"http://", NULL},
	    {"http://?x", NULL},
	    {"http://u@a/v1/health", NULL},
	    {"http://a@/v1", NULL},
	    {"ftp://a/v1/health", NULL},
	    {"httpss://a/v1/health", NULL},
	    {"http:a/v1/health", NULL},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct http_span target = {cases[i].target, strlen(cases[i].target)}, path = {NULL, 0};
		int rc = http_target_path(target, &path);
		if (!cases[i].path) {
			ck_assert_msg(rc == -1, "%s: accepted", cases[i].target);
			continue;
		}
		ck_assert_msg(rc == 0, "%s: refused", cases[i].target);
		ck_assert_msg(path.len == strlen(cases[i].path) &&
		                  memcmp(path.data, cases[i].path, path.len) == 0,
		              "%s: path %.*s", cases[i].target, (int)path.len, path.data);
		ck_assert(path.data >= target.data && path.data + path.len <= target.data + target.len);
	}
	/* In a head: the target as sent, and the path it names. */
	struct http_head head;
	struct http_framing_verdict verdict;
	ck_assert_int_eq(
	    parse("GET http://dirauth.example/v1/health?x HTTP/1.1\r\nHost: other\r\n\r\n", &head, &verdict),
	    0);
	ck_assert_uint_eq(head.target.len, strlen("http://dirauth.example/v1/health?x"));
	ck_assert_uint_eq(head.path.len, strlen("/v1/health"));
	ck_assert(memcmp(head.path.data, "/v1/health", head.path.len) == 0);
}
END_TEST

START_TEST(test_check_on_parsed_fields)
{
	/* The same judgement on fields another parser produced. */
	struct http_field fields[] = {
	    {{"Host", 4}, {"a", 1}},
	    {{"Content-Length", 14}, {"5", 1}},
	    {{"Transfer-Encoding", 17}, {"chunked", 7}},
	};
	struct http_framing framing;
	struct http_framing_verdict verdict;
	struct http_span v11 = {"HTTP/1.1", 8}, post = {"POST", 4};
	ck_assert_int_eq(http_framing_check(v11, post, fields, 2, &framing, &verdict), 0);
	ck_assert_uint_eq(framing.length, 5);
	ck_assert_int_eq(http_framing_check(v11, post, fields, 3, &framing, &verdict), -1);
	ck_assert_int_eq(verdict.error, API_ERROR_BAD_REQUEST);
	ck_assert_int_eq(http_framing_check(v11, post, fields + 1, 1, &framing, &verdict), -1);
	ck_assert_int_eq(verdict.error, API_ERROR_BAD_REQUEST);
}
END_TEST

static Suite *framing_suite(void)
{
	Suite *suite = suite_create("framing");
	TCase *tc = tcase_create("framing");
	tcase_add_test(tc, test_accepted);
	tcase_add_test(tc, test_incomplete);
	tcase_add_test(tc, test_length_and_coding);
	tcase_add_test(tc, test_host_and_fields);
	tcase_add_test(tc, test_request_line);
	tcase_add_test(tc, test_target_path);
	tcase_add_test(tc, test_check_on_parsed_fields);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(framing_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
