/*
 * test_health_page.c: dirauthctl health-page against three real authorities, its page read by
 * Debian's headless Chromium.
 *
 * Three authorities (tests/harness/cluster.h, file clocks) take a registration and co-sign two
 * epochs. While all are well, the page has no warning and the command exits 0. Then one authority
 * is killed (SIGKILL) and another's clock file is set ten minutes ahead, past the 300 s allowed;
 * the command, given the servers in another order than the members', exits 1, and the DOM that
 * Chromium builds from the page (--dump-dom) holds exactly two warnings: the killed authority
 * unreachable and the skewed one's clock. The page is also rendered to
 * <build>/artifacts/health-page.png (docs/operating.md says so), kept after the test. The
 * refusals of the command run against the same cluster. A second cluster shows a vote that
 * differs: one member holds a registration the others do not. About 10 s.
 * Skipped (77) when chromium is not installed (scripts/install-test-tools.sh installs it).
 */
#include "test_support.h"

#include "test_programs.h"
#include "schema/encoding.h"
#include "schema/note.h"
#include "signer/key.h"
#include "tests/harness/cluster.h"

#include <check.h>
#include <curl/curl.h>

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char chromium[PATH_MAX];

/* Runs dirauthctl health-page on the servers given (URLs), with the more words given (NULL-ended,
 * at most 16); returns its outcome. */
static void health_page_with(struct cluster *c, const char *const *servers, size_t count, const char *out,
                             const char *const *more, struct test_outcome *outcome)
{
	char now[32];
	snprintf(now, sizeof now, "%" PRIu64, cluster_now(c));
	const char *args[40] = {"health-page", "--trust",         cluster_trust_bundle_path(c),
	                        "--namespace", CLUSTER_NAMESPACE, "--out",
	                        out,           "--now",           now};
	size_t n = 9;
	for (size_t i = 0; i < count; i++) {
		args[n++] = "--server";
		args[n++] = servers[i];
	}
	for (size_t i = 0; more != NULL && more[i] != NULL && i < 16; i++)
		args[n++] = more[i];
	args[n] = NULL;
	test_run_program(test_binary_path("ctl/dirauthctl"), args, cluster_dir(c), outcome);
}

/* health_page_with up to two more words. */
static void health_page_on(struct cluster *c, const char *const *servers, size_t count, const char *out,
                           const char *more1, const char *more2, struct test_outcome *outcome)
{
	const char *more[3] = {more1, more1 ? more2 : NULL, NULL};
	health_page_with(c, servers, count, out, more, outcome);
}

/* health_page_on the three authorities in the order given. */
static void health_page(struct cluster *c, const size_t *order, const char *out, struct test_outcome *outcome)
{
	const char *servers[3] = {cluster_url(c, order[0]), cluster_url(c, order[1]),
	                          cluster_url(c, order[2])};
	health_page_on(c, servers, 3, out, NULL, NULL, outcome);
}

/* Runs health_page_on and expects status and, in stderr, expected (NULL: anything). */
static void expect_run(struct cluster *c, const char *const *servers, size_t count, const char *out,
                       const char *more1, const char *more2, int status, const char *expected)
{
	struct test_outcome outcome;
	health_page_on(c, servers, count, out, more1, more2, &outcome);
	ck_assert_msg(outcome.status == status, "health-page %s %s: %d, not %d: %s%s", more1 ? more1 : "",
	              more2 ? more2 : "", outcome.status, status, outcome.out, outcome.err);
	if (expected)
		ck_assert_msg(strstr(outcome.err, expected) != NULL, "stderr lacks '%s': %s", expected,
		              outcome.err);
	test_outcome_free(&outcome);
}

/* Every <li class="warning" ...> element of the DOM Chromium dumped, one per line into out. */
static size_t warnings_of(const char *dom, char out[][512], size_t max)
{
	size_t count = 0;
	for (const char *p = strstr(dom, "<li class=\"warning\""); p;
	     p = strstr(p + 1, "<li class=\"warning\"")) {
		const char *end = strstr(p, "</li>");
		ck_assert_ptr_nonnull(end);
		ck_assert_uint_lt(count, max);
		snprintf(out[count++], 512, "%.*s", (int)(end - p), p);
	}
	return count;
}

static int has_warning(char warnings[][512], size_t count, const char *check, const char *member)
{
	char check_attribute[64], member_attribute[160];
	snprintf(check_attribute, sizeof check_attribute, "data-check=\"%s\"", check);
	snprintf(member_attribute, sizeof member_attribute, "data-member=\"%s\"", member);
	for (size_t i = 0; i < count; i++)
		if (strstr(warnings[i], check_attribute) && strstr(warnings[i], member_attribute))
			return 1;
	return 0;
}

/* Chromium's headless DOM of the page at path. */
static char *dump_dom(struct cluster *c, const char *path)
{
	char url[PATH_MAX + 16], profile[PATH_MAX];
	snprintf(url, sizeof url, "file://%s", path);
	snprintf(profile, sizeof profile, "--user-data-dir=%s/chromium-profile", cluster_dir(c));
	const char *args[] = {"60",         chromium, "--headless", "--no-sandbox", "--disable-gpu", profile,
	                      "--dump-dom", url,      NULL};
	struct test_outcome outcome;
	test_run_program("/usr/bin/timeout", args, cluster_dir(c), &outcome);
	ck_assert_msg(outcome.status == 0, "chromium --dump-dom: %d: %s", outcome.status, outcome.err);
	char *dom = strdup(outcome.out);
	test_outcome_free(&outcome);
	return dom;
}

START_TEST(test_page_shows_a_stopped_and_a_skewed_authority)
{
	struct cluster_options options = {.authorities = 3, .threshold = 2};
	struct cluster *c = cluster_start(&options);
	struct buffer note;
	long statuses[3];
	char page[PATH_MAX];
	snprintf(page, sizeof page, "%s/health.html", cluster_dir(c));
	const char *all[3] = {cluster_url(c, 0), cluster_url(c, 1), cluster_url(c, 2)};

	/* Nothing published yet: no page (65), and none written. */
	expect_run(c, all, 3, page, NULL, NULL, 65, "no server serves a latest snapshot of mix");
	struct stat st;
	ck_assert_int_ne(stat(page, &st), 0);
	cluster_registration(c, cluster_provider_key(c, 0), "service", 1, 1, &note);
	ck_assert_uint_eq(
	    cluster_register(c, CLUSTER_BIT(0) | CLUSTER_BIT(1) | CLUSTER_BIT(2), &note, statuses), 3);
	buffer_free(&note);
	/* Two epochs: the second's votes travel as deltas and its header names the first. */
	uint64_t first = cluster_next_epoch(c), epoch = first + 1;
	for (uint64_t e = first; e <= epoch; e++) {
		cluster_run_epoch(c, e);
		for (size_t i = 0; i < 3; i++) {
			struct snapshot_header header;
			ck_assert_msg(cluster_wait_epoch(c, i, e, 20000, &header, NULL) == 0,
			              "%s did not publish; see %s", cluster_name(c, i),
			              cluster_log_path(c, i));
		}
	}

	/* All well: no warning, exit 0 (the signatures and the log's cosignatures may take a moment
	 * to reach every member). */
	const size_t members_order[3] = {0, 1, 2}, other_order[3] = {2, 0, 1};
	struct test_outcome outcome = {0};
	for (int attempt = 0; attempt < 50; attempt++) {
		if (attempt)
			test_outcome_free(&outcome);
		health_page(c, members_order, page, &outcome);
		if (outcome.status == 0)
			break;
		test_sleep_ms(200);
	}
	ck_assert_msg(outcome.status == 0, "health-page: %d: %s%s", outcome.status, outcome.out, outcome.err);
	test_outcome_free(&outcome);
	uint8_t *html = test_read_file(page, NULL);
	ck_assert_ptr_nonnull(strstr((const char *)html, "<p id=\"no-warnings\">No warning.</p>"));
	ck_assert_ptr_nonnull(strstr((const char *)html, "cosignature lines counted by name, not verified"));
	free(html);

	/* With the log's pins, the cosignatures are verified: every member's checkpoint is signed by
	 * its log key and cosigned by the other members, so still no warning. With only the first
	 * member's log key pinned, the others' checkpoints are refused, each a critical warning. */
	char log_keys[3][NOTE_VERIFIER_KEY_MAX + 1], witnesses[3][NOTE_VERIFIER_KEY_MAX + 1];
	for (size_t i = 0; i < 3; i++) {
		note_verifier_format(signer_key_verifier(cluster_log_key(c, i)), log_keys[i]);
		note_verifier_format(cluster_cosigner(c, i), witnesses[i]);
	}
	const char *pinned[] = {"--log-key",     log_keys[0],     "--log-key",  log_keys[1],     "--log-key",
	                        log_keys[2],     "--witness-key", witnesses[0], "--witness-key", witnesses[1],
	                        "--witness-key", witnesses[2],    NULL};
	health_page_with(c, all, 3, page, pinned, &outcome);
	ck_assert_msg(outcome.status == 0, "health-page pinned: %d: %s%s", outcome.status, outcome.out,
	              outcome.err);
	test_outcome_free(&outcome);
	html = test_read_file(page, NULL);
	ck_assert_ptr_nonnull(strstr((const char *)html, "the pinned witnesses whose cosignature verifies"));
	free(html);
	const char *one_log_key[] = {"--log-key",     log_keys[0],     "--witness-key",
	                             witnesses[0],    "--witness-key", witnesses[1],
	                             "--witness-key", witnesses[2],    NULL};
	health_page_with(c, all, 3, page, one_log_key, &outcome);
	ck_assert_msg(outcome.status == 1, "health-page one log key: %d: %s%s", outcome.status, outcome.out,
	              outcome.err);
	for (size_t i = 0; i < 3; i++) {
		char line[256];
		snprintf(line, sizeof line, "critical log-checkpoint: %s: its log checkpoint",
		         cluster_name(c, i));
		ck_assert_msg((strstr(outcome.err, line) != NULL) == (i != 0), "%s", outcome.err);
	}
	ck_assert_ptr_nonnull(
	    strstr(outcome.err, "refused by the log's pins: signed by none of the pinned log keys"));
	test_outcome_free(&outcome);

	/* Refusals: options (64), a page that cannot be written (73). */
	expect_run(c, all, 3, page, "--epochs", "0", 64, "--epochs");
	expect_run(c, all, 3, page, "--epochs", "17", 64, "--epochs");
	expect_run(c, all, 3, page, "--clock-skew", "x", 64, "--clock-skew");
	char unwritable[PATH_MAX + 32];
	snprintf(unwritable, sizeof unwritable, "%s/no-such-directory/health.html", cluster_dir(c));
	expect_run(c, all, 3, unwritable, NULL, NULL, 73, "cannot write");
	const char *other_namespace[] = {"health-page", "--trust",  cluster_trust_bundle_path(c),
	                                 "--namespace", "other",    "--out",
	                                 page,          "--server", all[0],
	                                 NULL};
	test_run_program(test_binary_path("ctl/dirauthctl"), other_namespace, cluster_dir(c), &outcome);
	ck_assert_int_eq(outcome.status, 78);
	ck_assert_ptr_nonnull(strstr(outcome.err, "namespace other is not in the trust bundle"));
	test_outcome_free(&outcome);
	/* A server that answers as a member another server answered as already (the proxy of the link
	 * 0 -> 2 answers as authority 2), and a member given no server. */
	char proxy[64];
	snprintf(proxy, sizeof proxy, "http://127.0.0.1:%u", faultproxy_port(cluster_link(c, 0, 2)));
	const char *doubled[3] = {cluster_url(c, 2), proxy, cluster_url(c, 0)};
	expect_run(c, doubled, 3, page, NULL, NULL, 1, "warning unknown-server: http://127.0.0.1:");
	expect_run(c, doubled, 3, page, NULL, NULL, 1, "warning unreachable: authority1.dirauth.example");

	/* One authority killed, another's clock ten minutes ahead. */
	cluster_kill(c, 1);
	cluster_clock_skew(c, 2, 600);
	health_page(c, other_order, page, &outcome);
	ck_assert_msg(outcome.status == 1, "health-page: %d: %s%s", outcome.status, outcome.out, outcome.err);
	ck_assert_ptr_nonnull(strstr(outcome.err, "warning unreachable: authority1.dirauth.example"));
	ck_assert_ptr_nonnull(
	    strstr(outcome.err, "warning clock-skew: authority2.dirauth.example: its clock is 600 s ahead"));
	test_outcome_free(&outcome);

	char *dom = dump_dom(c, page);
	char warnings[16][512];
	size_t count = warnings_of(dom, warnings, 16);
	ck_assert_msg(count == 2, "%zu warnings in the DOM:\n%s", count, dom);
	ck_assert(has_warning(warnings, count, "unreachable", "authority1.dirauth.example"));
	ck_assert(has_warning(warnings, count, "clock-skew", "authority2.dirauth.example"));
	/* A table for each epoch, newest first, none before the first snapshot; every member voted and
	 * signed in each (the killed one's vote and signature seen through its peers). */
	char table[64], older[64];
	snprintf(table, sizeof table, "<table class=\"epoch\" id=\"epoch-%" PRIu64 "\">", epoch);
	snprintf(older, sizeof older, "<table class=\"epoch\" id=\"epoch-%" PRIu64 "\">", first);
	ck_assert_ptr_nonnull(strstr(dom, table));
	ck_assert_ptr_nonnull(strstr(dom, older));
	ck_assert(strstr(dom, table) < strstr(dom, older));
	size_t voted = 0, signed_count = 0;
	for (const char *p = strstr(dom, "class=\"voted good\">yes<"); p;
	     p = strstr(p + 1, "class=\"voted good\">yes<"))
		voted++;
	for (const char *p = strstr(dom, "class=\"signed good\">yes<"); p;
	     p = strstr(p + 1, "class=\"signed good\">yes<"))
		signed_count++;
	ck_assert_uint_eq(voted, 6);
	ck_assert_uint_eq(signed_count, 6);
	snprintf(older, sizeof older, "<table class=\"epoch\" id=\"epoch-%" PRIu64 "\">", first - 1);
	ck_assert_ptr_null(strstr(dom, older));
	ck_assert_ptr_null(strstr(dom, "<script"));
	free(dom);

	/* Only the killed authority given: nobody answers (69). */
	expect_run(c, all + 1, 1, page, NULL, NULL, 69, "no server answered");

	/* The screenshot, kept as the test's artifact. */
	char artifacts[PATH_MAX], screenshot[PATH_MAX + 32], url[PATH_MAX + 16], profile[PATH_MAX];
	snprintf(artifacts, sizeof artifacts, "%s/artifacts", DIRAUTH_BINARY_DIR);
	mkdir(artifacts, 0755);
	snprintf(screenshot, sizeof screenshot, "--screenshot=%s/health-page.png", artifacts);
	snprintf(url, sizeof url, "file://%s", page);
	snprintf(profile, sizeof profile, "--user-data-dir=%s/chromium-profile", cluster_dir(c));
	const char *args[] = {"60",
	                      chromium,
	                      "--headless",
	                      "--no-sandbox",
	                      "--disable-gpu",
	                      profile,
	                      screenshot,
	                      "--window-size=1280,2000",
	                      url,
	                      NULL};
	test_run_program("/usr/bin/timeout", args, cluster_dir(c), &outcome);
	ck_assert_msg(outcome.status == 0, "chromium --screenshot: %d: %s", outcome.status, outcome.err);
	test_outcome_free(&outcome);
	char png[PATH_MAX + 32];
	snprintf(png, sizeof png, "%s/health-page.png", artifacts);
	ck_assert_int_eq(stat(png, &st), 0);
	ck_assert_int_gt(st.st_size, 1000);
	cluster_free(c);
}
END_TEST

/* A member that holds a registration the others do not votes for two records where one is
 * published: the page names it, with what differs down to the record (its first vote is whole),
 * and nothing else. */
START_TEST(test_page_shows_a_vote_that_differs)
{
	struct cluster_options options = {.authorities = 3, .threshold = 2};
	struct cluster *c = cluster_start(&options);
	struct buffer note;
	long statuses[3];
	char page[PATH_MAX];
	snprintf(page, sizeof page, "%s/health.html", cluster_dir(c));
	cluster_registration(c, cluster_provider_key(c, 0), "everywhere", 1, 1, &note);
	ck_assert_uint_eq(
	    cluster_register(c, CLUSTER_BIT(0) | CLUSTER_BIT(1) | CLUSTER_BIT(2), &note, statuses), 3);
	buffer_free(&note);
	cluster_registration(c, cluster_provider_key(c, 1), "only-at-two", 1, 1, &note);
	ck_assert_uint_eq(cluster_register(c, CLUSTER_BIT(2), &note, statuses), 1);
	buffer_free(&note);
	uint64_t epoch = cluster_next_epoch(c);
	cluster_run_epoch(c, epoch);
	for (size_t i = 0; i < 3; i++) {
		struct snapshot_header header;
		ck_assert_int_eq(cluster_wait_epoch(c, i, epoch, 20000, &header, NULL), 0);
	}
	const size_t order[3] = {1, 2, 0};
	struct test_outcome outcome = {0};
	/* Exactly one warning once the signatures and cosignatures have settled. */
	for (int attempt = 0; attempt < 50; attempt++) {
		if (attempt)
			test_outcome_free(&outcome);
		health_page(c, order, page, &outcome);
		if (outcome.status == 1 && strstr(outcome.err, "vote-differs") &&
		    strchr(outcome.err, '\n') == outcome.err + strlen(outcome.err) - 1)
			break;
		test_sleep_ms(200);
	}
	/* The record only authority 2 holds is named: its service id's first 16 hex digits. */
	uint8_t service_id[32];
	char hex[65], differs[256], expected[512];
	cluster_service_id("only-at-two", 1, service_id);
	hex_encode(service_id, 32, hex);
	snprintf(differs, sizeof differs,
	         "2 records voted, 1 published; another records root; records: 1 voted only, 0 published "
	         "only, 0 in "
	         "another version (services: +%.16s)",
	         hex);
	snprintf(expected, sizeof expected,
	         "dirauthctl: health-page: warning vote-differs: epoch %" PRIu64
	         ": authority2.dirauth.example voted otherwise than published: %s\n",
	         epoch, differs);
	ck_assert_msg(outcome.status == 1 && strcmp(outcome.err, expected) == 0, "%d: %s", outcome.status,
	              outcome.err);
	test_outcome_free(&outcome);
	uint8_t *html = test_read_file(page, NULL);
	char cell[320];
	snprintf(cell, sizeof cell, "<td class=\"differs bad\">%s</td>", differs);
	ck_assert_msg(strstr((const char *)html, cell) != NULL, "%s not in the page", cell);
	free(html);
	cluster_free(c);
}
END_TEST

static Suite *health_page_suite(void)
{
	Suite *suite = suite_create("health_page");
	TCase *tc = tcase_create("cluster");
	tcase_set_timeout(tc, 180);
	tcase_add_test(tc, test_page_shows_a_stopped_and_a_skewed_authority);
	tcase_add_test(tc, test_page_shows_a_vote_that_differs);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	if (test_program_find("chromium", chromium) != 0) {
		printf("test_health_page: chromium is not installed (scripts/install-test-tools.sh installs "
		       "it): "
		       "skipped\n");
		return 77;
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	SRunner *runner = srunner_create(health_page_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	curl_global_cleanup();
	return failures ? 1 : 0;
}
