/*
 * test_metrics.c: GET /v1/metrics of an authority among three (tests/harness/cluster.h), as the
 * rounds go: what an operator's alerts read moves as it should.
 *
 * Three authorities (k = 2) publish an epoch together; the third stops and the two others publish
 * the next; a signature naming the second member, for an epoch long past, is pushed to the first
 * and refused; the second stops and the first, alone of three, fails the next epoch. The first
 * authority's metrics then say: each member's last vote and signature (the stopped ones' stuck
 * at the epoch before they stopped) and how late they came, the refusal under the second
 * member's name and its reason, failed exchanges with the stopped member, two epochs published
 * and one failed with its reason, each step's duration, the latest snapshot's records and bytes,
 * the log's entries and the cosignatures its checkpoint gathered, the answers to add-checkpoint,
 * the signer up and its certificate's not-after; and no line names an address. The text is then
 * given to Prometheus's own checker, `promtool check metrics` (Debian's prometheus package):
 * without promtool that last check is skipped, said on stderr, and the test exits 77 after the
 * others passed. About 20 s.
 */
#include "test_support.h"

#include "base/error.h"
#include "schema/certificate.h"
#include "schema/note.h"
#include "schema/snapshot.h"
#include "tests/harness/cluster.h"

#include <check.h>
#include <curl/curl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PROMTOOL "/usr/bin/promtool"

/* The value of the sample "name{labels}" (series as written, labels in the server's order) in
 * metrics text; aborts the test when there is no such line. */
static double sample(const char *text, const char *series)
{
	char needle[600];
	snprintf(needle, sizeof needle, "\n%s ", series);
	const char *at = strstr(text, needle);
	ck_assert_msg(at != NULL, "no sample %s in:\n%s", series, text);
	return strtod(at + strlen(needle), NULL);
}

/* Authority i's metrics text (malloc'd). */
static char *metrics_of(struct cluster *c, size_t i)
{
	struct cluster_response response;
	ck_assert_int_eq(cluster_get(c, i, "/v1/metrics", &response), 200);
	char *text = malloc(response.body.len + 1);
	ck_assert_ptr_nonnull(text);
	memcpy(text, response.body.data, response.body.len);
	text[response.body.len] = 0;
	cluster_response_free(&response);
	return text;
}

/* Authority i's metrics once series reaches at least value, within timeout_ms. */
static char *metrics_when(struct cluster *c, size_t i, const char *series, double value, int timeout_ms)
{
	for (int waited = 0;; waited += 100) {
		char *text = metrics_of(c, i);
		char needle[600];
		snprintf(needle, sizeof needle, "\n%s ", series);
		const char *at = strstr(text, needle);
		if ((at && strtod(at + strlen(needle), NULL) >= value) || waited >= timeout_ms)
			return text;
		free(text);
		struct timespec pause = {0, 100 * 1000 * 1000};
		nanosleep(&pause, NULL);
	}
}

/* `promtool check metrics` reads text on its standard input: 0 when it finds nothing to say. */
static int promtool_check(const char *dir, const char *text)
{
	char path[512], command[1200];
	snprintf(path, sizeof path, "%s/metrics.txt", dir);
	test_write_file(path, text, strlen(text), 0644);
	snprintf(command, sizeof command, "%s check metrics < '%s' > '%s.out' 2>&1", PROMTOOL, path, path);
	int status = system(command);
	if (status != 0) {
		size_t len = 0;
		char out[600];
		snprintf(out, sizeof out, "%s.out", path);
		uint8_t *said = test_read_file(out, &len);
		fprintf(stderr, "promtool check metrics:\n%.*s\n", (int)len, said ? (const char *)said : "");
		free(said);
	}
	return status;
}

/* The member name label of authority i: 'member="authority<i>.dirauth.example"'. */
static const char *member(struct cluster *c, size_t i)
{
	static char text[3][128];
	snprintf(text[i], sizeof text[i], "member=\"%s\"", cluster_name(c, i));
	return text[i];
}

START_TEST(test_metrics_follow_the_rounds)
{
	struct cluster_options options = {.authorities = 3, .threshold = 2};
	struct cluster *c = cluster_start(&options);
	struct buffer note, published;
	long statuses[3];
	char series[512];
	buffer_init(&published);
	cluster_registration(c, cluster_provider_key(c, 0), "service", 1, 1, &note);
	ck_assert_uint_eq(
	    cluster_register(c, CLUSTER_BIT(0) | CLUSTER_BIT(1) | CLUSTER_BIT(2), &note, statuses), 3);
	buffer_free(&note);

	/* Epoch first: all three. */
	uint64_t first = cluster_next_epoch(c);
	struct snapshot_header header;
	cluster_run_epoch(c, first);
	for (size_t i = 0; i < 3; i++)
		ck_assert_msg(cluster_wait_epoch(c, i, first, 20000, &header, i == 1 ? &published : NULL) ==
		                  0,
		              "%s did not publish epoch %llu; see %s", cluster_name(c, i),
		              (unsigned long long)first, cluster_log_path(c, i));

	/* What failed before (the epoch the cluster started in, whose vote time had passed). */
	char *before = metrics_of(c, 0);

	/* Epoch first + 1: the third is stopped, the two others publish. */
	cluster_stop_authority(c, 2);
	cluster_run_epoch(c, first + 1);
	for (size_t i = 0; i < 2; i++)
		ck_assert_msg(cluster_wait_epoch(c, i, first + 1, 20000, &header, NULL) == 0,
		              "%s did not publish epoch %llu; see %s", cluster_name(c, i),
		              (unsigned long long)(first + 1), cluster_log_path(c, i));

	/* A signature of the second member over epoch first's header, pushed now: wrong epoch. */
	struct note *parsed = NULL;
	ck_assert_int_eq(note_parse(published.data, published.len, &parsed), 0);
	struct buffer single;
	buffer_init(&single);
	for (size_t s = 0; s < parsed->signature_count; s++)
		if (strcmp(parsed->signatures[s].name, cluster_name(c, 1)) == 0)
			ck_assert_int_eq(
			    note_format(parsed->text, parsed->text_len, &parsed->signatures[s], 1, &single),
			    0);
	ck_assert_uint_gt(single.len, 0);
	struct cluster_response response;
	ck_assert_int_eq(cluster_post(c, 0, "/v1/mix/signatures", single.data, single.len, &response), 409);
	ck_assert_ptr_nonnull(strstr((const char *)response.body.data, "wrong_epoch"));
	cluster_response_free(&response);
	buffer_free(&single);
	note_free(parsed);
	buffer_free(&published);

	/* The cosignatures of epoch first + 1's checkpoint (of two entries): the first's own and the
	 * second's, a quorum, so it is served; then the figure of that round. */
	snprintf(series, sizeof series, "dirauth_log_served_entries{namespace=\"mix\"}");
	char *cosigned = metrics_when(c, 0, series, 2, 30000);
	ck_assert_msg(sample(cosigned, series) == 2, "the checkpoint of two entries is not served; see %s",
	              cluster_log_path(c, 0));
	free(cosigned);
	snprintf(series, sizeof series, "dirauth_log_checkpoint_cosigners{namespace=\"mix\"}");
	cosigned = metrics_when(c, 0, series, 2, 5000);
	ck_assert_uint_eq((uint64_t)sample(cosigned, series), 2);
	free(cosigned);

	/* Epoch first + 2: the second is stopped too; the first, alone of three, fails it. */
	cluster_stop_authority(c, 1);
	cluster_run_epoch(c, first + 2);
	char *text = metrics_when(c, 0, "dirauth_round_epoch{namespace=\"mix\"}", (double)(first + 2), 5000);

	/* The round (the next one may have begun: epoch E's round begins 4 s before E starts). */
	ck_assert_uint_ge((uint64_t)sample(text, "dirauth_round_epoch{namespace=\"mix\"}"), first + 2);
	ck_assert_uint_eq((uint64_t)sample(text, "dirauth_epochs_published_total{namespace=\"mix\"}"), 2);
	double failed = 0;
	const char *reasons[] = {"consensus",  "revoked",     "no_header",
	                         "signatures", "publication", "round_ended"};
	for (size_t r = 0; r < sizeof reasons / sizeof reasons[0]; r++) {
		snprintf(series, sizeof series,
		         "dirauth_epochs_failed_total{namespace=\"mix\",reason=\"%s\"}", reasons[r]);
		failed += sample(text, series) - sample(before, series);
	}
	ck_assert_msg(failed == 1, "%g epochs failed; see %s", failed, cluster_log_path(c, 0));
	/* One vote of its own, no other: no consensus. */
	snprintf(series, sizeof series,
	         "dirauth_epochs_failed_total{namespace=\"mix\",reason=\"consensus\"}");
	ck_assert_uint_eq((uint64_t)(sample(text, series) - sample(before, series)), 1);
	free(before);
	ck_assert_uint_eq((uint64_t)sample(text,
	                                   "dirauth_round_phase_duration_seconds_count{namespace=\"mix\","
	                                   "phase=\"publication\"}"),
	                  2);
	ck_assert_uint_eq((uint64_t)sample(text,
	                                   "dirauth_round_phase_duration_seconds_count{namespace=\"mix\","
	                                   "phase=\"vote\"}"),
	                  3);
	ck_assert_uint_eq(
	    (uint64_t)sample(
	        text,
	        "dirauth_round_phase_duration_seconds_bucket{namespace=\"mix\",phase=\"vote\",le=\"+Inf\"}"),
	    3);
	ck_assert_uint_eq((uint64_t)sample(text, "dirauth_snapshot_records{namespace=\"mix\"}"), 1);
	ck_assert_uint_gt(
	    (uint64_t)sample(text, "dirauth_snapshot_body_bytes{namespace=\"mix\",encoding=\"zstd\"}"), 0);
	ck_assert_uint_eq((uint64_t)sample(text, "dirauth_log_entries{namespace=\"mix\"}"), 2);

	/* The members: the last vote and signature of each, and how late they came. */
	const uint64_t last_vote[3] = {first + 2, first + 1, first};
	const uint64_t last_signature[3] = {first + 1, first + 1, first};
	for (size_t m = 0; m < 3; m++) {
		snprintf(series, sizeof series, "dirauth_member_vote_epoch{namespace=\"mix\",%s}",
		         member(c, m));
		ck_assert_uint_eq((uint64_t)sample(text, series), last_vote[m]);
		snprintf(series, sizeof series, "dirauth_member_signature_epoch{namespace=\"mix\",%s}",
		         member(c, m));
		ck_assert_uint_eq((uint64_t)sample(text, series), last_signature[m]);
		/* Within the vote window of 2 s, give or take the skew of 2 s. */
		snprintf(series, sizeof series, "dirauth_member_vote_lateness_seconds{namespace=\"mix\",%s}",
		         member(c, m));
		double lateness = sample(text, series);
		ck_assert_msg(lateness >= -2 && lateness <= 4, "%s: %g", series, lateness);
	}
	/* The refusal under the second member's name. */
	snprintf(series, sizeof series, "dirauth_member_refusals_total{%s,reason=\"wrong_epoch\"}",
	         member(c, 1));
	ck_assert_uint_eq((uint64_t)sample(text, series), 1);
	snprintf(series, sizeof series, "dirauth_member_refusals_total{%s,reason=\"wrong_epoch\"}",
	         member(c, 2));
	ck_assert_uint_eq((uint64_t)sample(text, series), 0);
	/* Exchanges with the third, stopped since epoch first + 1, failed. */
	double failures = 0;
	const char *why[] = {"unreachable", "timeout", "too_large", "server_error", "other"};
	for (size_t f = 0; f < sizeof why / sizeof why[0]; f++) {
		snprintf(series, sizeof series, "dirauth_member_fetch_failures_total{%s,reason=\"%s\"}",
		         member(c, 2), why[f]);
		failures += sample(text, series);
	}
	ck_assert_msg(failures > 0, "no failed exchange with the stopped member counted");
	snprintf(series, sizeof series, "dirauth_member_fetch_failures_total{%s,", member(c, 0));
	ck_assert_ptr_null(strstr(text, series)); /* nothing of itself */

	/* The log's cosigning: the second cosigned, the third did not answer. */
	ck_assert_uint_eq((uint64_t)sample(text, "dirauth_log_checkpoint_cosigners{namespace=\"mix\"}"), 2);
	ck_assert_uint_eq((uint64_t)sample(text, "dirauth_log_served_entries{namespace=\"mix\"}"), 2);
	ck_assert_uint_eq((uint64_t)sample(text, "dirauth_log_cosigner_quorum"), 2);
	snprintf(series, sizeof series,
	         "dirauth_log_witness_answers_total{witness=\"%s\",result=\"cosigned\"}", cluster_name(c, 1));
	ck_assert_uint_ge((uint64_t)sample(text, series), 1);

	/* The signer, and its certificate's not-after. */
	ck_assert_uint_eq((uint64_t)sample(text, "dirauth_signer_up"), 1);
	struct certificate certificate;
	const struct buffer *issued = cluster_certificate(c, 0);
	ck_assert_int_eq(certificate_parse_signed(issued->data, issued->len, &certificate), 0);
	snprintf(series, sizeof series,
	         "dirauth_signer_certificate_not_after_timestamp_seconds{key_id=\"%08x\"}",
	         (unsigned)certificate.signing_key.key_id);
	ck_assert_uint_eq((uint64_t)sample(text, series), certificate.valid_until);
	/* And the other members' certificates, as this authority holds them. */
	for (size_t m = 1; m < 3; m++) {
		issued = cluster_certificate(c, m);
		ck_assert_int_eq(certificate_parse_signed(issued->data, issued->len, &certificate), 0);
		snprintf(series, sizeof series, "dirauth_member_certificate_not_after_timestamp_seconds{%s}",
		         member(c, m));
		ck_assert_uint_eq((uint64_t)sample(text, series), certificate.valid_until);
	}

	/* No address anywhere. */
	ck_assert_ptr_null(strstr(text, "127.0.0.1"));

	/* Prometheus's own checker. */
	if (access(PROMTOOL, X_OK) == 0)
		ck_assert_msg(promtool_check(cluster_dir(c), text) == 0,
		              "promtool check metrics refused the text");
	free(text);
	cluster_free(c);
}
END_TEST

static Suite *metrics_suite(void)
{
	Suite *suite = suite_create("metrics");
	TCase *rounds = tcase_create("rounds");
	tcase_set_timeout(rounds, 120);
	tcase_add_test(rounds, test_metrics_follow_the_rounds);
	suite_add_tcase(suite, rounds);
	return suite;
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	SRunner *runner = srunner_create(metrics_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	curl_global_cleanup();
	if (failures)
		return EXIT_FAILURE;
	if (access(PROMTOOL, X_OK) != 0) {
		fprintf(stderr,
		        "%s not found (Debian's prometheus package): the text was not given to "
		        "promtool check metrics\n",
		        PROMTOOL);
		return 77;
	}
	return EXIT_SUCCESS;
}
