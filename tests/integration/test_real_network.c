/*
 * test_real_network.c: several authorities on links like the ones they really have, with real
 * processes: every peer link delayed and jittered by its fault proxy (tests/harness/faultproxy.h),
 * over plain HTTP and through the shipped nginx TLS configuration, on a schedule whose clocks run
 * through the windows instead of being held; and authorities that come back after being away
 * longer than the body retention.
 *
 *   - 5 authorities, k = 3, every link 100 ms each way with 20 ms of jitter, 10 % of the
 *     registrations given to 3 of the 5 only, the shipped five-authority schedule (600-s epochs,
 *     votes from 270 s before the start, 60 s for votes, 150 s for signatures) scaled down ten
 *     times, a second of it lasting 200 ms: every epoch is published by all 5, with one header
 *     and every record (the two that lacked a note gathered it from the members that listed it);
 *   - the same through nginx terminating TLS as deploy/nginx/dirauthd-proxy.conf ships it, each
 *     dirauthd checking its peers against the test's CA (skipped without nginx);
 *   - 3 authorities on loopback with the default body retention (6 epochs): one stopped for 12
 *     epochs while registrations change comes back, stores every epoch it missed (the headers
 *     past the retention alone, the bodies of the window), and signs again within two epochs of
 *     its restart.
 *
 * About two minutes in all (DIRAUTH_CLUSTER_MS_PER_SECOND slows the pace, e.g. for sanitizers).
 */
#include "test_support.h"

#include "base/error.h"
#include "schema/note.h"
#include "schema/snapshot.h"
#include "tests/harness/cluster.h"

#include <check.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WAIT_MS 30000 /* a bound, not a pace: each wait ends as soon as its condition holds */

/* The text (without signature lines) of a signed note. */
static void note_text(const struct buffer *note, struct buffer *text)
{
	struct note *parsed = NULL;
	ck_assert_int_eq(note_parse(note->data, note->len, &parsed), 0);
	buffer_init(text);
	ck_assert(buffer_append(text, parsed->text, parsed->text_len) == 0);
	note_free(parsed);
}

/* Waits until every authority of members serves epoch; they serve one header text, signed by at
 * least k members, holding records records. Returns the members whose signature the first
 * authority's header carries. */
static unsigned expect_published(struct cluster *c, unsigned members, uint64_t epoch, uint64_t records)
{
	struct buffer first;
	unsigned signers = 0;
	buffer_init(&first);
	for (size_t i = 0; i < cluster_size(c); i++) {
		if (!(members & CLUSTER_BIT(i)))
			continue;
		struct snapshot_header header;
		struct buffer note, text;
		buffer_init(&note);
		ck_assert_msg(cluster_wait_epoch(c, i, epoch, WAIT_MS, &header, &note) == 0,
		              "%s did not publish epoch %llu; see %s", cluster_name(c, i),
		              (unsigned long long)epoch, cluster_log_path(c, i));
		ck_assert_msg(header.epoch == epoch, "%s serves epoch %llu, not %llu", cluster_name(c, i),
		              (unsigned long long)header.epoch, (unsigned long long)epoch);
		ck_assert_msg(header.record_count == records, "%s's epoch %llu holds %llu records, not %llu",
		              cluster_name(c, i), (unsigned long long)epoch,
		              (unsigned long long)header.record_count, (unsigned long long)records);
		unsigned mask = 0;
		ck_assert_int_ge(cluster_signers(c, note.data, note.len, &mask), (int)cluster_threshold(c));
		note_text(&note, &text);
		if (!first.len) {
			first = text;
			signers = mask;
		} else {
			ck_assert_msg(text.len == first.len && memcmp(text.data, first.data, text.len) == 0,
			              "%s serves another header for epoch %llu", cluster_name(c, i),
			              (unsigned long long)epoch);
			buffer_free(&text);
		}
		buffer_free(&note);
	}
	buffer_free(&first);
	return signers;
}

/* --- five authorities across a real network --------------------------------------------------- */

#define FIVE        5
#define FIVE_ALL    ((1u << FIVE) - 1)
#define FIVE_K      3
#define FIVE_RECORD 1000

/* The shipped five-authority schedule (deploy/examples/five-authorities: epochs of 600 s, votes
 * from 270 s before the start, 60 s for votes, 150 s for signatures) scaled down ten times:
 * epochs of 60 s, votes from 27 s before the start, 6 s for votes, 15 s for signatures; a second
 * of it lasts 200 ms, so an epoch takes 12 s and the windows 1.2 and 3 s. */
static struct cluster *start_five(int tls)
{
	struct cluster_options options = {.authorities = FIVE,
	                                  .threshold = FIVE_K,
	                                  .epoch_length = 60,
	                                  .prepare_seconds = 27,
	                                  .vote_seconds = 6,
	                                  .signature_seconds = 15,
	                                  .validity_epochs = 10,
	                                  .ms_per_second = 200,
	                                  .peer_timeout_seconds = 2,
	                                  .links = {.delay_ms = 100, .jitter_ms = 20, .seed = 7},
	                                  .tls = tls};
	return cluster_start(&options);
}

/* 10 % of the registrations go to 3 of the 5 only, missing a pair in turn. */
static unsigned five_holders(size_t r)
{
	static const unsigned pairs[10][2] = {{0, 1}, {2, 3}, {4, 0}, {1, 2}, {3, 4},
	                                      {0, 2}, {1, 3}, {2, 4}, {3, 0}, {4, 1}};
	if (r % 10 != 0)
		return FIVE_ALL;
	const unsigned *pair = pairs[(r / 10) % 10];
	return FIVE_ALL & ~(CLUSTER_BIT(pair[0]) | CLUSTER_BIT(pair[1]));
}

static void run_five(int tls)
{
	struct cluster *c = start_five(tls);
	/* A first epoch without registrations: every member's certificates learnt, a previous. */
	uint64_t epoch = cluster_next_epoch(c);
	cluster_run_epoch(c, epoch);
	expect_published(c, FIVE_ALL, epoch, 0);

	struct buffer *notes = cluster_registrations(c, "network", 0, FIVE_RECORD, 1);
	unsigned holders[FIVE_RECORD];
	for (size_t r = 0; r < FIVE_RECORD; r++)
		holders[r] = five_holders(r);
	cluster_register_all(c, notes, holders, FIVE_RECORD, 8, NULL);
	cluster_registrations_free(notes, FIVE_RECORD);

	/* Every epoch from now on, at all five: the records are in the first, whatever each holds. */
	for (int e = 0; e < 3; e++) {
		epoch = cluster_next_epoch(c);
		cluster_run_epoch(c, epoch);
		expect_published(c, FIVE_ALL, epoch, FIVE_RECORD);
		cluster_check_alive(c);
	}
	/* The two that lacked a tenth of the notes gathered them in bulk, and said so. */
	for (size_t i = 0; i < FIVE; i++)
		ck_assert_msg(cluster_log_contains(c, i, "notes: "), "%s gathered no notes; see %s",
		              cluster_name(c, i), cluster_log_path(c, i));
	cluster_free(c);
}

START_TEST(test_five_on_delayed_links)
{
	run_five(0);
}
END_TEST

START_TEST(test_five_over_tls)
{
	if (!cluster_nginx_installed()) {
		fprintf(stderr, "test_real_network: nginx is not installed; the TLS case is skipped\n");
		return;
	}
	run_five(1);
}
END_TEST

/* --- coming back after the retention window --------------------------------------------------- */

#define THREE     3
#define THREE_ALL ((1u << THREE) - 1)

/* Authority `away` stopped for `epochs` epochs while registrations change, then restarted: it
 * stores every epoch it missed and signs again within two epochs. */
static void away_and_back(struct cluster *c, size_t away, unsigned epochs, uint64_t records)
{
	unsigned running = THREE_ALL & ~CLUSTER_BIT(away);
	uint64_t epoch = cluster_next_epoch(c);
	uint64_t stopped_after = epoch - 1;
	cluster_stop_authority(c, away);
	for (unsigned e = 0; e < epochs; e++, epoch++) {
		/* A new registration each epoch, and a new sequence of an old one. */
		struct buffer *fresh = cluster_registrations(c, "churn", e, 1, 1);
		struct buffer *again = cluster_registrations(c, "base", e % records, 1, 2 + e);
		cluster_register_all(c, fresh, (unsigned[]){running}, 1, 1, NULL);
		cluster_register_all(c, again, (unsigned[]){running}, 1, 1, NULL);
		cluster_registrations_free(fresh, 1);
		cluster_registrations_free(again, 1);
		cluster_run_epoch(c, epoch);
		expect_published(c, running, epoch, records + e + 1);
	}
	cluster_restart(c, away);
	unsigned signers = 0;
	uint64_t restarted = epoch;
	for (int e = 0; e < 2 && !(signers & CLUSTER_BIT(away)); e++, epoch++) {
		cluster_run_epoch(c, epoch);
		signers = expect_published(c, e == 0 ? running : THREE_ALL, epoch, records + epochs);
	}
	ck_assert_msg(signers & CLUSTER_BIT(away),
	              "%s did not sign again within two epochs of its restart (epochs %llu and %llu); see %s",
	              cluster_name(c, away), (unsigned long long)restarted, (unsigned long long)restarted + 1,
	              cluster_log_path(c, away));
	/* It stores every epoch it missed: the headers past the retention alone, the last ones with
	 * their bodies. */
	cluster_expect_headers(c, away, stopped_after + 1, restarted);
	struct buffer body;
	ck_assert_int_eq(cluster_snapshot(c, away, restarted - 1, NULL, &body), 0);
	buffer_free(&body);
	ck_assert(cluster_log_contains(c, away, "caught up: epochs"));
}

START_TEST(test_back_after_twelve_epochs)
{
	struct cluster_options options = {.authorities = THREE, .threshold = 2};
	struct cluster *c = cluster_start(&options);
	const uint64_t records = 20;
	struct buffer *notes = cluster_registrations(c, "base", 0, records, 1);
	cluster_register_all(c, notes, NULL, records, 4, NULL);
	cluster_registrations_free(notes, records);
	uint64_t epoch = cluster_next_epoch(c);
	cluster_run_epoch(c, epoch);
	expect_published(c, THREE_ALL, epoch, records);
	/* The default retention keeps 6 bodies (twice the validity of 3): 12 is past it. */
	away_and_back(c, 2, 12, records);
	cluster_free(c);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("real_network");
	TCase *tc = tcase_create("network");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_five_on_delayed_links);
	tcase_add_test(tc, test_five_over_tls);
	tcase_add_test(tc, test_back_after_twelve_epochs);
	suite_add_tcase(suite, tc);
	SRunner *runner = srunner_create(suite);
	srunner_run_all(runner, CK_NORMAL);
	int failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
