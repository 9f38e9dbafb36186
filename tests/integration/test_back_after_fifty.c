/*
 * test_back_after_fifty.c: an authority away for 50 epochs, longer than the body retention, while
 * 4,000 registrations churn by 5 % an epoch, comes back over links 100 ms each way and signs
 * again within two epochs of its restart.
 *
 * Three authorities (k = 2), each its own dirauthd and dirauth-signer. 4,000 services are
 * registered with all three; authority 2 is stopped; for 50 epochs 200 services (5 %) register a
 * higher sequence each epoch with the two that run, which publish every epoch. Every link is then
 * delayed 100 ms each way with 10 ms of jitter, authority 2 is restarted, and within two epochs it
 * stores the 50 epochs it missed (44 headers alone, the last 6 with their bodies: the default
 * retention), votes with the others' latest as its previous, and its signature is in the published
 * header.
 *
 * The clocks are held at each phase of an epoch until every running authority has logged that it
 * took the step (the way bench_several measures), so the 50 epochs take as long as the work and no
 * longer (the 4,000 records keep that work to about 60 CPU-seconds). The real schedule on delayed
 * links is test_real_network.c's.
 */
#include "test_support.h"

#include "base/error.h"
#include "schema/note.h"
#include "schema/snapshot.h"
#include "tests/harness/cluster.h"
#include "tests/harness/faultproxy.h"

#include <check.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N       3
#define ALL     ((1u << N) - 1)
#define AWAY    2
#define RECORDS 4000
#define CHURN   200 /* 5 % of the records, each epoch */
#define EPOCHS  50
#define WAIT_MS 60000 /* a bound, not a pace: each wait ends as soon as its condition holds */
#define POLL_MS 20

/* Whether authority i's log has a line about epoch that says sentence. */
static int log_says(const struct cluster *c, size_t i, uint64_t epoch, const char *sentence)
{
	char about[48];
	snprintf(about, sizeof about, "epoch %llu", (unsigned long long)epoch);
	size_t len = 0;
	char *log = (char *)cluster_log(c, i, &len);
	int found = 0;
	for (char *line = log; line && *line && !found;) {
		char *end = strchr(line, '\n');
		if (end)
			*end = 0;
		char *at = strstr(line, about);
		found =
		    at && (at[strlen(about)] == ':' || at[strlen(about)] == ' ') && strstr(line, sentence);
		line = end ? end + 1 : NULL;
	}
	free(log);
	return found;
}

/* Holds the clocks at t until every authority of members logged sentence about epoch. */
static void hold_until(struct cluster *c, unsigned members, uint64_t t, uint64_t epoch, const char *sentence)
{
	cluster_clock_set(c, t);
	for (size_t i = 0; i < N; i++) {
		int waited = 0;
		while ((members & CLUSTER_BIT(i)) && !log_says(c, i, epoch, sentence)) {
			ck_assert_msg(waited < WAIT_MS, "%s did not log \"%s\" for epoch %llu; see %s",
			              cluster_name(c, i), sentence, (unsigned long long)epoch,
			              cluster_log_path(c, i));
			test_sleep_ms(POLL_MS);
			waited += POLL_MS;
		}
	}
}

/* Runs epoch through its phases, each held until members took it; returns the members whose
 * signature the header authority 0 publishes carries. */
static unsigned run_held(struct cluster *c, unsigned members, uint64_t epoch)
{
	struct epoch_phases p;
	cluster_epoch_phases(c, epoch, &p);
	hold_until(c, members, p.vote_at, epoch, "voted: ");
	hold_until(c, members, p.vote_deadline, epoch, "computed and signed: ");
	hold_until(c, members, p.signature_deadline, epoch, "ready: ");
	cluster_clock_set(c, p.start);
	unsigned signers = 0;
	for (size_t i = 0; i < N; i++) {
		if (!(members & CLUSTER_BIT(i)))
			continue;
		struct snapshot_header header;
		struct buffer note;
		buffer_init(&note);
		ck_assert_msg(cluster_wait_epoch(c, i, epoch, WAIT_MS, &header, &note) == 0,
		              "%s did not publish epoch %llu; see %s", cluster_name(c, i),
		              (unsigned long long)epoch, cluster_log_path(c, i));
		ck_assert_uint_eq(header.epoch, epoch);
		ck_assert_uint_eq(header.record_count, RECORDS);
		unsigned mask = 0;
		ck_assert_int_ge(cluster_signers(c, note.data, note.len, &mask), 2);
		if (i == 0)
			signers = mask;
		buffer_free(&note);
	}
	return signers;
}

static void set_links(struct cluster *c, const struct faultproxy_shaping *shaping)
{
	for (size_t from = 0; from < N; from++)
		for (size_t to = 0; to < N; to++)
			if (from != to)
				ck_assert_int_eq(faultproxy_set_shaping(cluster_link(c, from, to), shaping),
				                 0);
}

START_TEST(test_back_after_fifty_epochs)
{
	/* The links are made long ones from the start (their buffers sized for it), and run without
	 * their delay while the history is made. */
	const struct faultproxy_shaping delayed = {.delay_ms = 100, .jitter_ms = 10}, quick = {0};
	struct cluster_options options = {
	    .authorities = N,
	    .threshold = 2,
	    .peer_timeout_seconds = 5,
	    .links = {.delay_ms = delayed.delay_ms, .jitter_ms = delayed.jitter_ms}};
	struct cluster *c = cluster_start(&options);
	set_links(c, &quick);
	struct buffer *notes = cluster_registrations(c, "fifty", 0, RECORDS, 1);
	cluster_register_all(c, notes, NULL, RECORDS, 8, NULL);
	cluster_registrations_free(notes, RECORDS);
	uint64_t epoch = cluster_next_epoch(c);
	run_held(c, ALL, epoch++);

	/* Away for 50 epochs, while a twentieth of the services register anew each epoch. */
	unsigned running = ALL & ~CLUSTER_BIT(AWAY);
	unsigned holders[CHURN];
	for (size_t r = 0; r < CHURN; r++)
		holders[r] = running;
	cluster_stop_authority(c, AWAY);
	for (unsigned e = 0; e < EPOCHS; e++) {
		uint64_t first = (uint64_t)e * CHURN % RECORDS;
		struct buffer *churn = cluster_registrations(c, "fifty", first, CHURN, 2 + e);
		cluster_register_all(c, churn, holders, CHURN, 8, NULL);
		cluster_registrations_free(churn, CHURN);
		run_held(c, running, epoch++);
		if (getenv("DIRAUTH_TEST_VERBOSE"))
			fprintf(stderr, "epoch %llu done at %.1f s\n", (unsigned long long)epoch - 1,
			        (double)time(NULL));
	}

	/* Back, over links 100 ms each way: within two epochs it signs again. */
	set_links(c, &delayed);
	uint64_t missed_from = epoch - EPOCHS, restarted = epoch;
	cluster_restart(c, AWAY);
	unsigned signers = run_held(c, running, epoch++);
	if (!(signers & CLUSTER_BIT(AWAY)))
		signers = run_held(c, ALL, epoch++);
	ck_assert_msg(signers & CLUSTER_BIT(AWAY),
	              "%s did not sign again within two epochs of its restart (from epoch %llu); see %s",
	              cluster_name(c, AWAY), (unsigned long long)restarted, cluster_log_path(c, AWAY));
	cluster_expect_headers(c, AWAY, missed_from, restarted);
	cluster_free(c);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("back_after_fifty");
	TCase *tc = tcase_create("catch-up");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_back_after_fifty_epochs);
	suite_add_tcase(suite, tc);
	SRunner *runner = srunner_create(suite);
	srunner_run_all(runner, CK_NORMAL);
	int failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
