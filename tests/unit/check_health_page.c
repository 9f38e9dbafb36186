/*
 * check_health_page.c: the consensus-health page's checks, its HTML and its reading of
 * GET /v1/status (ctl/health_page.h), without a network: observations made by hand.
 *
 *   - a healthy set gives no warning, exit 0, and a page with "No warning.";
 *   - each check at its threshold and one past it: clock skew (both ways), certificate expiry at
 *     22/21/14/7 days and expired (notice, warning, critical), the latest snapshot stale (warning
 *     past fresh-until plus an epoch, critical past valid-until), a vote or signature missing, a
 *     vote differing (which fields), an authority unreachable, a server that is no member, log
 *     checkpoints disagreeing, too few cosignatures, an epoch that published nothing; exit 1;
 *   - every string an authority sent is escaped in the page: a hostile name, URL and reason never
 *     become markup; the page holds no script and no external resource;
 *   - the status answer: exactly {"time":N}, everything else refused.
 */
#include "test_support.h"

#include "base/error.h"
#include "ctl/health_page.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#define NOW   1800000000ULL
#define DAY   86400ULL
#define EPOCH 60ULL

static struct ctl_health_observation *healthy(void)
{
	struct ctl_health_observation *o = calloc(1, sizeof *o);
	ck_assert_ptr_nonnull(o);
	snprintf(o->namespace_name, sizeof o->namespace_name, "mix");
	o->now = NOW;
	o->clock_skew_limit = 300;
	o->threshold = 2;
	o->member_count = 3;
	for (size_t m = 0; m < 3; m++) {
		struct ctl_health_member *member = &o->members[m];
		snprintf(member->name, sizeof member->name, "authority%zu.example", m);
		snprintf(member->server, sizeof member->server, "http://127.0.0.1:%zu", 8000 + m);
		member->clock_known = 1;
		member->certificate_known = 1;
		member->not_after = NOW + 90 * DAY;
		member->checkpoint_known = 1;
		member->log_size = 5;
		memset(member->log_root, 7, 32);
		member->cosigners = 3;
	}
	o->latest_known = 1;
	o->latest.epoch = 100;
	o->latest.valid_after = NOW - 10;
	o->latest.fresh_until = NOW - 10 + EPOCH;
	o->latest.valid_until = NOW - 10 + 3 * EPOCH;
	o->latest.record_count = 4;
	memset(o->latest.records_root, 1, 32);
	memset(o->latest.previous, 2, 32);
	o->epoch_count = 2;
	for (size_t e = 0; e < 2; e++) {
		struct ctl_health_epoch *epoch = &o->epochs[e];
		epoch->epoch = 100 - e;
		epoch->published = 1;
		epoch->header = o->latest;
		epoch->header.epoch = epoch->epoch;
		for (size_t m = 0; m < 3; m++) {
			epoch->votes[m].presence = CTL_HEALTH_PRESENT;
			epoch->votes[m].record_count = 4;
			memset(epoch->votes[m].records_root, 1, 32);
			memset(epoch->votes[m].previous, 2, 32);
			epoch->signatures[m] = CTL_HEALTH_PRESENT;
		}
	}
	return o;
}

static struct ctl_health_warnings warnings;

/* Checks o; asserts that exactly one warning came, of that check, member and severity. */
static const struct ctl_health_warning *only_warning(const struct ctl_health_observation *o,
                                                     const char *check, const char *member,
                                                     enum ctl_health_severity severity)
{
	ctl_health_check(o, &warnings);
	ck_assert_msg(warnings.count == 1, "%zu warnings, the first %s: %s", warnings.count,
	              warnings.count ? warnings.items[0].check : "-",
	              warnings.count ? warnings.items[0].text : "");
	ck_assert_str_eq(warnings.items[0].check, check);
	ck_assert_str_eq(warnings.items[0].member, member);
	ck_assert_int_eq(warnings.items[0].severity, severity);
	ck_assert_int_eq(ctl_health_exit_status(&warnings), 1);
	return &warnings.items[0];
}

static void no_warning(const struct ctl_health_observation *o)
{
	ctl_health_check(o, &warnings);
	ck_assert_msg(warnings.count == 0, "%s: %s", warnings.count ? warnings.items[0].check : "",
	              warnings.count ? warnings.items[0].text : "");
	ck_assert_int_eq(ctl_health_exit_status(&warnings), 0);
}

START_TEST(test_healthy_set_no_warning)
{
	struct ctl_health_observation *o = healthy();
	no_warning(o);
	struct buffer page;
	buffer_init(&page);
	ck_assert_int_eq(ctl_health_page_write(o, &warnings, &page), 0);
	ck_assert_int_eq(buffer_append(&page, "", 1), 0);
	const char *html = (const char *)page.data;
	ck_assert_ptr_nonnull(strstr(html, "<p id=\"no-warnings\">No warning.</p>"));
	ck_assert_ptr_nonnull(strstr(html, "<table class=\"epoch\" id=\"epoch-100\">"));
	ck_assert_ptr_nonnull(strstr(html, "<table class=\"epoch\" id=\"epoch-99\">"));
	ck_assert_ptr_null(strstr(html, "class=\"warning\""));
	ck_assert_ptr_null(strstr(html, "<script"));
	ck_assert_ptr_null(strstr(html, "src="));
	ck_assert_ptr_null(strstr(html, "<link"));
	buffer_free(&page);
	free(o);
}
END_TEST

START_TEST(test_clock_skew_threshold)
{
	struct ctl_health_observation *o = healthy();
	o->members[1].clock_skew = 300;
	o->members[2].clock_skew = -300;
	no_warning(o);
	o->members[1].clock_skew = 301;
	const struct ctl_health_warning *w =
	    only_warning(o, "clock-skew", "authority1.example", CTL_HEALTH_WARNING);
	ck_assert_ptr_nonnull(strstr(w->text, "301 s ahead"));
	o->members[1].clock_skew = 0;
	o->members[2].clock_skew = -301;
	w = only_warning(o, "clock-skew", "authority2.example", CTL_HEALTH_WARNING);
	ck_assert_ptr_nonnull(strstr(w->text, "301 s behind"));
	o->members[2].clock_skew = INT64_MIN;
	only_warning(o, "clock-skew", "authority2.example", CTL_HEALTH_WARNING);
	/* An unknown clock is no skew. */
	o->members[2].clock_known = 0;
	no_warning(o);
	free(o);
}
END_TEST

START_TEST(test_certificate_expiry_severity_rises)
{
	struct ctl_health_observation *o = healthy();
	o->members[0].not_after = NOW + 21 * DAY + 1;
	no_warning(o);
	o->members[0].not_after = NOW + 21 * DAY;
	only_warning(o, "certificate-expiry", "authority0.example", CTL_HEALTH_NOTICE);
	o->members[0].not_after = NOW + 14 * DAY + 1;
	only_warning(o, "certificate-expiry", "authority0.example", CTL_HEALTH_NOTICE);
	o->members[0].not_after = NOW + 14 * DAY;
	only_warning(o, "certificate-expiry", "authority0.example", CTL_HEALTH_WARNING);
	o->members[0].not_after = NOW + 7 * DAY;
	only_warning(o, "certificate-expiry", "authority0.example", CTL_HEALTH_CRITICAL);
	o->members[0].not_after = NOW;
	const struct ctl_health_warning *w =
	    only_warning(o, "certificate-expiry", "authority0.example", CTL_HEALTH_CRITICAL);
	ck_assert_ptr_nonnull(strstr(w->text, "expired"));
	free(o);
}
END_TEST

START_TEST(test_stale_latest_snapshot)
{
	struct ctl_health_observation *o = healthy();
	o->now = o->latest.fresh_until + EPOCH - 1;
	no_warning(o);
	o->now = o->latest.fresh_until + EPOCH;
	only_warning(o, "stale", "", CTL_HEALTH_WARNING);
	ck_assert_uint_eq(warnings.items[0].epoch, 100);
	o->now = o->latest.valid_until;
	only_warning(o, "stale", "", CTL_HEALTH_CRITICAL);
	free(o);
}
END_TEST

START_TEST(test_votes_and_signatures)
{
	struct ctl_health_observation *o = healthy();
	o->epochs[1].votes[2].presence = CTL_HEALTH_ABSENT;
	only_warning(o, "missing-vote", "authority2.example", CTL_HEALTH_WARNING);
	ck_assert_uint_eq(warnings.items[0].epoch, 99);
	o->epochs[1].votes[2].presence = CTL_HEALTH_UNASKED; /* nobody could be asked: not a warning */
	no_warning(o);
	o->epochs[1].votes[2].presence = CTL_HEALTH_PRESENT;
	o->epochs[0].signatures[0] = CTL_HEALTH_ABSENT;
	only_warning(o, "missing-signature", "authority0.example", CTL_HEALTH_WARNING);
	o->epochs[0].signatures[0] = CTL_HEALTH_PRESENT;
	o->epochs[0].votes[1].record_count = 5;
	o->epochs[0].votes[1].records_root[3] ^= 1;
	const struct ctl_health_warning *w =
	    only_warning(o, "vote-differs", "authority1.example", CTL_HEALTH_WARNING);
	ck_assert_ptr_nonnull(strstr(w->text, "5 records voted, 4 published; another records root"));
	ck_assert_ptr_null(strstr(w->text, "previous"));
	o->epochs[0].votes[1] = o->epochs[1].votes[1];
	o->epochs[0].votes[1].previous[0] ^= 1;
	w = only_warning(o, "vote-differs", "authority1.example", CTL_HEALTH_WARNING);
	ck_assert_ptr_nonnull(strstr(w->text, "another previous snapshot"));
	o->epochs[0].votes[1] = o->epochs[1].votes[1];
	no_warning(o);
	/* Which records differ, when they were compared: counted, the first four named. */
	struct ctl_health_vote *vote = &o->epochs[0].votes[1];
	vote->records_root[0] ^= 1;
	vote->records_compared = 1;
	vote->voted_only = 3;
	vote->published_only = 1;
	vote->other_version = 1;
	vote->named_count = 4;
	for (size_t i = 0; i < 4; i++) {
		vote->named_sign[i] = "++-~"[i];
		memset(vote->named[i], (int)(0x10 * (i + 1)), 32);
	}
	w = only_warning(o, "vote-differs", "authority1.example", CTL_HEALTH_WARNING);
	ck_assert_ptr_nonnull(strstr(w->text,
	                             "another records root; records: 3 voted only, 1 published only, 1 in "
	                             "another version (services: +1010101010101010 +2020202020202020 "
	                             "-3030303030303030 ~4040404040404040 ...)"));
	vote->voted_only = 2;
	only_warning(o, "vote-differs", "authority1.example", CTL_HEALTH_WARNING);
	ck_assert_ptr_nonnull(strstr(warnings.items[0].text, "~4040404040404040)"));
	o->epochs[0].votes[1] = o->epochs[1].votes[1];
	no_warning(o);
	/* An epoch that published nothing is one warning, not one per member. */
	o->epochs[1].published = 0;
	only_warning(o, "epoch-failed", "", CTL_HEALTH_WARNING);
	ck_assert_uint_eq(warnings.items[0].epoch, 99);
	free(o);
}
END_TEST

START_TEST(test_unreachable_and_unknown_servers)
{
	struct ctl_health_observation *o = healthy();
	o->members[1].server[0] = '\0';
	o->failure_count = 1;
	snprintf(o->failures[0].server, sizeof o->failures[0].server, "http://127.0.0.1:9");
	snprintf(o->failures[0].why, sizeof o->failures[0].why, "connection refused");
	const struct ctl_health_warning *w =
	    only_warning(o, "unreachable", "authority1.example", CTL_HEALTH_WARNING);
	ck_assert_ptr_nonnull(strstr(w->text, "not answering: http://127.0.0.1:9"));
	o->members[1].server[0] = 'h';
	o->failures[0].answered = 1;
	only_warning(o, "unknown-server", "", CTL_HEALTH_WARNING);
	free(o);
}
END_TEST

START_TEST(test_logs)
{
	struct ctl_health_observation *o = healthy();
	o->members[2].log_root[0] = 9;
	only_warning(o, "log-disagreement", "authority2.example", CTL_HEALTH_CRITICAL);
	o->members[2].log_size = 6; /* another size: a lag, not a disagreement */
	no_warning(o);
	o->members[0].cosigners = 2;
	no_warning(o);
	o->members[0].cosigners = 1;
	only_warning(o, "log-cosignatures", "authority0.example", CTL_HEALTH_WARNING);
	/* With the log's pins: a checkpoint they refuse is critical, whatever its cosigners. */
	o->cosignatures_verified = 1;
	o->members[1].checkpoint_refused = 1;
	snprintf(o->members[1].checkpoint_why, sizeof o->members[1].checkpoint_why,
	         "signed by none of the pinned log keys");
	o->members[0].cosigners = 3;
	only_warning(o, "log-checkpoint", "authority1.example", CTL_HEALTH_CRITICAL);
	o->members[1].checkpoint_refused = 0;
	o->members[0].checkpoint_known = 0;
	no_warning(o);
	free(o);
}
END_TEST

START_TEST(test_many_warnings_bounded)
{
	struct ctl_health_observation *o = healthy();
	o->member_count = 32;
	o->epoch_count = CTL_HEALTH_EPOCHS_MAX;
	for (size_t m = 0; m < 32; m++) {
		snprintf(o->members[m].name, sizeof o->members[m].name, "a%zu", m);
		o->members[m].server[0] = '\0';
		o->members[m].clock_known = 1;
		o->members[m].clock_skew = 1000;
	}
	for (size_t e = 0; e < CTL_HEALTH_EPOCHS_MAX; e++) {
		o->epochs[e].epoch = 100 - e;
		o->epochs[e].published = 1;
		for (size_t m = 0; m < 32; m++) {
			o->epochs[e].votes[m].presence = CTL_HEALTH_ABSENT;
			o->epochs[e].signatures[m] = CTL_HEALTH_ABSENT;
		}
	}
	ctl_health_check(o, &warnings);
	ck_assert_uint_eq(warnings.count, CTL_HEALTH_WARNINGS_MAX);
	ck_assert_uint_gt(warnings.dropped, 0);
	ck_assert_int_eq(ctl_health_exit_status(&warnings), 1);
	struct buffer page;
	buffer_init(&page);
	ck_assert_int_eq(ctl_health_page_write(o, &warnings, &page), 0);
	ck_assert_int_eq(buffer_append(&page, "", 1), 0);
	ck_assert_ptr_nonnull(strstr((const char *)page.data, "more warnings not listed"));
	buffer_free(&page);
	free(o);
}
END_TEST

START_TEST(test_hostile_strings_escaped)
{
	struct buffer out;
	buffer_init(&out);
	ck_assert_int_eq(ctl_health_html_escape(&out, "<script>alert(\"x\")&'</script>\x01\x7f\tok"), 0);
	ck_assert_int_eq(buffer_append(&out, "", 1), 0);
	ck_assert_str_eq((const char *)out.data, "&lt;script&gt;alert(&quot;x&quot;)&amp;&#39;&lt;/script&gt;"
	                                         "&#xFFFD;&#xFFFD;\tok");
	buffer_free(&out);

	/* A member name (a valid note key name may hold < > " & '), a server URL and a reason as a
	 * hostile authority or operator might give them. */
	struct ctl_health_observation *o = healthy();
	snprintf(o->members[1].name, sizeof o->members[1].name, "<script>alert(1)</script>");
	snprintf(o->members[2].server, sizeof o->members[2].server,
	         "http://x/\"><img src=x onerror=alert(2)>");
	o->members[1].clock_skew = 1000;
	o->failure_count = 1;
	o->failures[0].answered = 1;
	snprintf(o->failures[0].server, sizeof o->failures[0].server, "http://<b>bold</b>");
	snprintf(o->failures[0].why, sizeof o->failures[0].why, "<iframe src=//evil>");
	snprintf(o->namespace_name, sizeof o->namespace_name, "<ns>");
	ctl_health_check(o, &warnings);
	ck_assert_uint_eq(warnings.count, 2);
	struct buffer page;
	buffer_init(&page);
	ck_assert_int_eq(ctl_health_page_write(o, &warnings, &page), 0);
	ck_assert_int_eq(buffer_append(&page, "", 1), 0);
	const char *html = (const char *)page.data;
	ck_assert_ptr_null(strstr(html, "<script"));
	ck_assert_ptr_null(strstr(html, "<img"));
	ck_assert_ptr_null(strstr(html, "<iframe"));
	ck_assert_ptr_null(strstr(html, "<b>"));
	ck_assert_ptr_null(strstr(html, "<ns>"));
	ck_assert_ptr_nonnull(strstr(html, "&lt;script&gt;alert(1)&lt;/script&gt;"));
	ck_assert_ptr_nonnull(strstr(html, "data-member=\"&lt;script&gt;alert(1)&lt;/script&gt;\""));
	ck_assert_ptr_nonnull(strstr(html, "http://x/&quot;&gt;&lt;img src=x onerror=alert(2)&gt;"));
	ck_assert_ptr_nonnull(strstr(html, "&lt;iframe src=//evil&gt;"));
	ck_assert_ptr_nonnull(strstr(html, "data-check=\"clock-skew\""));
	ck_assert_ptr_nonnull(strstr(html, "data-check=\"unknown-server\""));
	buffer_free(&page);
	free(o);
}
END_TEST

static int status_parse(const char *text, char name[NOTE_NAME_MAX + 1], uint64_t *t)
{
	return ctl_health_status_parse((const uint8_t *)text, strlen(text), name, t);
}

START_TEST(test_status_answer)
{
	uint64_t t = 1;
	char name[NOTE_NAME_MAX + 1];
	ck_assert_int_eq(status_parse("{\"authority\":\"a.example\",\"time\":1800000000}", name, &t), 0);
	ck_assert_uint_eq(t, 1800000000ULL);
	ck_assert_str_eq(name, "a.example");
	ck_assert_int_eq(status_parse("{\"authority\":\"a\\\"b\\\\c\",\"time\":0}", name, &t), 0);
	ck_assert_uint_eq(t, 0);
	ck_assert_str_eq(name, "a\"b\\c");
	ck_assert_int_eq(status_parse("{\"authority\":\"a\",\"time\":18446744073709551615}", name, &t), 0);
	ck_assert_uint_eq(t, UINT64_MAX);
	static const char *const refused[] = {
	    "{\"authority\":\"a\",\"time\":18446744073709551616}",
	    "{\"authority\":\"a\",\"time\":01}",
	    "{\"authority\":\"a\",\"time\":}",
	    "{\"authority\":\"a\",\"time\": 1}",
	    "{\"authority\":\"a\",\"time\":1 }",
	    "{\"authority\":\"a\",\"time\":-1}",
	    "{\"authority\":\"a\",\"time\":1",
	    "{\"authority\":\"a\",\"time\":1}\n",
	    "{\"authority\":\"a\",\"time\":1.5}",
	    "{\"authority\":\"\",\"time\":1}",
	    "{\"authority\":\"a b\",\"time\":1}",
	    "{\"authority\":\"a+b\",\"time\":1}",
	    "{\"authority\":\"a\\n\",\"time\":1}",
	    "{\"authority\":\"a",
	    "{\"authority\":\"a\\",
	    "{\"time\":1}",
	    "{\"authority\":\"a\",\"tim\":1}",
	    "",
	};
	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
		ck_assert_msg(status_parse(refused[i], name, &t) == DIRAUTH_ERR_SYNTAX, "%s accepted",
		              refused[i]);
	char longer[CTL_HEALTH_STATUS_MAX + 1];
	memset(longer, 'a', sizeof longer);
	ck_assert_int_eq(ctl_health_status_parse((const uint8_t *)longer, sizeof longer, name, &t),
	                 DIRAUTH_ERR_BOUNDS);
	/* A name longer than a key name may be. */
	char *too_long = malloc(NOTE_NAME_MAX + 64);
	int n = snprintf(too_long, NOTE_NAME_MAX + 64, "{\"authority\":\"");
	memset(too_long + n, 'a', NOTE_NAME_MAX + 1);
	snprintf(too_long + n + NOTE_NAME_MAX + 1, 32, "\",\"time\":1}");
	ck_assert_int_eq(status_parse(too_long, name, &t), DIRAUTH_ERR_SYNTAX);
	free(too_long);
}
END_TEST

static Suite *health_page_suite(void)
{
	Suite *suite = suite_create("health_page");
	TCase *checks = tcase_create("checks");
	tcase_add_test(checks, test_healthy_set_no_warning);
	tcase_add_test(checks, test_clock_skew_threshold);
	tcase_add_test(checks, test_certificate_expiry_severity_rises);
	tcase_add_test(checks, test_stale_latest_snapshot);
	tcase_add_test(checks, test_votes_and_signatures);
	tcase_add_test(checks, test_unreachable_and_unknown_servers);
	tcase_add_test(checks, test_logs);
	tcase_add_test(checks, test_many_warnings_bounded);
	suite_add_tcase(suite, checks);
	TCase *page = tcase_create("page");
	tcase_add_test(page, test_hostile_strings_escaped);
	tcase_add_test(page, test_status_answer);
	suite_add_tcase(suite, page);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(health_page_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
