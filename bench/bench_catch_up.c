/*
 * bench_catch_up.c: an authority away for E epochs comes back; how long it takes to catch up with
 * what its peers published meanwhile, and what it receives to do so, against what fetching every
 * snapshot it missed as a full body would take.
 *
 *   bench_catch_up [--authorities n] [--records N] [--epochs E] [--churn-percent C] [--threads M]
 *                  [--delay-ms D] [--jitter-ms J] [--bandwidth-mbit B] [--tls] [--stage-seconds S]
 *
 * The processes are real: a cluster of tests/harness/cluster.h (each authority its own dirauthd,
 * dirauth-signer, LMDB and file clock, every peer link through a fault proxy in this process).
 * The run:
 *   1. n authorities (k a majority); N signed registrations of distinct services POSTed to all
 *      of them, and one epoch published with them;
 *   2. the last authority is stopped; for E epochs, C% of the services register a higher
 *      sequence with the others, which publish every epoch. The clocks are held at each phase
 *      until every running authority logged its step (as bench_several holds them), so an epoch
 *      costs its work and no wait. The links between the running authorities pass as fast as
 *      loopback meanwhile; the stopped authority's links are shaped all along (D ms each way, J ms
 *      of jitter, B Mbit/s per direction, TLS through nginx with --tls);
 *   3. the anchor, taken in step 2 as each epoch is published (before retention removes the
 *      body): each epoch's body fetched as zstd with curl through the proxy of the link from the
 *      stopped authority to authority 0, a fresh connection each. The sum of their sizes is what a
 *      catch-up fetching every body would receive, the sum of their times how long it would take
 *      one body after another;
 *   4. every link is shaped, the authority restarted, and the measure runs from the restart to
 *      its log's "caught up: epochs A to L stored ..." naming the last epoch published, L: the
 *      seconds, and the bytes it received over its links (the proxies' counters): its peers'
 *      answers to its requests and their requests to it;
 *   5. the next epoch with all n: whether the authority that was away signs it (and, if not, the
 *      one after).
 * Figures: the catch-up's time and bytes against the anchor's, as ratios; what the log says the
 * catch-up stored (headers alone, headers with their bodies: docs/protocol.md, "Catching up");
 * the load average.
 *
 * Check runs the whole bench as one test (the harness aborts a test on any failure, with its
 * reason), in a child process; the cluster's janitor stops every daemon and removes the
 * directory if that child dies. Exit status 0, 1 on a failure (the reason is printed), 2 for a
 * bad option, 77 for --tls without nginx. ctest runs it with 8 epochs of 500 records.
 */
#include "bench/harness.h"
#include "base/buffer.h"
#include "base/error.h"
#include "schema/snapshot.h"
#include "tests/harness/cluster.h"
#include "tests/harness/faultproxy.h"

#include <check.h>
#include <curl/curl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CATCH_UP_LABEL         "catch-up"
#define CATCH_UP_SMALL_RECORDS 20000 /* up to here, 60 s epochs */
#define CATCH_UP_MAX_RECORDS   1000000
#define CATCH_UP_MAX_DELAY_MS  10000
#define CATCH_UP_MAX_MBIT      100000
#define CATCH_UP_POLL_MS       20
#define CATCH_UP_VALID_SECONDS 80000 /* registrations are valid for a day: the run stays inside it */
#define CATCH_UP_SKIPPED       77

struct catch_up_options {
	size_t authorities;
	size_t records;
	size_t epochs;
	unsigned churn_percent;
	unsigned threads;
	double stage_seconds; /* how long a running authority may take over a step; 0: from N */
	unsigned delay_ms, jitter_ms, bandwidth_mbit;
	int tls;
};

static const struct catch_up_options *catch_up_run_options;

/* --- what the logs say -------------------------------------------------------------------- */

/* One authority's log, read as it grows: the latest epoch of each step it logged, and what its
 * catch-ups stored. */
struct authority_log {
	struct harness_tail tail;
	uint64_t voted, computed, ready; /* the latest epoch of each "voted:", ... line */
	uint64_t failed;                 /* the latest epoch of a "not published" line */
	char failure[HARNESS_TAIL_LINE_MAX];
	/* "caught up: epochs A to L stored (W with their bodies, H headers alone, ...) in X ms" */
	uint64_t caught_latest;
	unsigned long long caught_with_body, caught_alone, caught_ms, caught_lines;
	double caught_at; /* monotonic time the bench read the line naming the latest */
};

static void log_line(void *context, const char *line)
{
	struct authority_log *a = context;
	const char *at = strstr(line, " epoch ");
	unsigned long long epoch = 0;
	int offset = 0;
	if (!at ||
	    sscanf(at, " epoch %llu dirauthd: namespace " CLUSTER_NAMESPACE ": %n", &epoch, &offset) != 1 ||
	    offset == 0)
		return;
	const char *s = at + offset;
	if (strncmp(s, "voted: ", 7) == 0 && epoch > a->voted)
		a->voted = epoch;
	else if (strncmp(s, "computed and signed: ", 21) == 0 && epoch > a->computed)
		a->computed = epoch;
	else if (strncmp(s, "ready: ", 7) == 0 && epoch > a->ready)
		a->ready = epoch;
	else if (strncmp(s, "not published", 13) == 0) {
		a->failed = epoch;
		snprintf(a->failure, sizeof a->failure, "%s", line);
	} else if (strncmp(s, "caught up: ", 11) == 0) {
		unsigned long long first, latest, with_body, alone, ms;
		const char *in = strstr(s, ") in ");
		ck_assert_msg(
		    sscanf(
		        s,
		        "caught up: epochs %llu to %llu stored (%llu with their bodies, %llu headers alone",
		        &first, &latest, &with_body, &alone) == 4 &&
		        in && sscanf(in, ") in %llu ms", &ms) == 1,
		    "a log line does not read as expected: %s", line);
		a->caught_with_body += with_body;
		a->caught_alone += alone;
		a->caught_ms += ms;
		a->caught_lines++;
		if (latest > a->caught_latest) {
			a->caught_latest = latest;
			a->caught_at = harness_now();
		}
	}
}

static void log_poll(const struct cluster *c, struct authority_log *logs, size_t i)
{
	harness_tail_read(&logs[i].tail, cluster_log_path(c, i), log_line, &logs[i]);
}

/* --- epochs ------------------------------------------------------------------------------- */

enum step { STEP_VOTED, STEP_COMPUTED, STEP_READY };

static int did(const struct authority_log *a, enum step step, uint64_t epoch)
{
	uint64_t latest = step == STEP_VOTED ? a->voted : step == STEP_COMPUTED ? a->computed : a->ready;
	return latest >= epoch;
}

/* Sets the clocks to t and waits until every authority of required took step for epoch, and
 * every one of hoped too or seconds passed. A required authority that does not take it within
 * seconds, or that fails the epoch, aborts the bench. Returns the members of hoped that took it. */
static unsigned hold(struct cluster *c, struct authority_log *logs, unsigned required, unsigned hoped,
                     uint64_t t, uint64_t epoch, enum step step, double seconds)
{
	static const char *const names[] = {"voted", "computed and signed", "ready"};
	cluster_clock_set(c, t);
	double deadline = harness_now() + seconds;
	for (;;) {
		unsigned missing = 0, took = 0;
		for (size_t i = 0; i < cluster_size(c); i++) {
			if (!((required | hoped) & CLUSTER_BIT(i)))
				continue;
			log_poll(c, logs, i);
			ck_assert_msg(!(required & CLUSTER_BIT(i)) || logs[i].failed < epoch, "%s: %s",
			              cluster_name(c, i), logs[i].failure);
			if (did(&logs[i], step, epoch))
				took |= CLUSTER_BIT(i);
			else
				missing |= CLUSTER_BIT(i);
		}
		if (!missing)
			return took & hoped;
		if (harness_now() >= deadline) {
			for (size_t i = 0; i < cluster_size(c); i++)
				ck_assert_msg(!(missing & required & CLUSTER_BIT(i)),
				              "%s did not log \"%s\" for epoch %llu within %.0f s; see %s",
				              cluster_name(c, i), names[step], (unsigned long long)epoch,
				              seconds, cluster_log_path(c, i));
			return took & hoped;
		}
		cluster_check_alive(c);
		test_sleep_ms(CATCH_UP_POLL_MS);
	}
}

/* Runs epoch through its phases, the clocks held at each until the authorities took its step (a
 * set short of a member computes at the vote deadline and decides at the signature deadline),
 * then waits until every required authority serves its header with at least k signatures and
 * every record. Returns the members whose signature authority 0's header carries; *hoped_ready
 * (may be NULL) gets the members of hoped that were ready. */
static unsigned run_held(struct cluster *c, struct authority_log *logs, unsigned required, unsigned hoped,
                         uint64_t epoch, size_t records, double seconds, unsigned *hoped_ready)
{
	struct epoch_phases p;
	cluster_epoch_phases(c, epoch, &p);
	hold(c, logs, required, hoped, p.vote_at, epoch, STEP_VOTED, seconds);
	hold(c, logs, required, hoped, p.vote_deadline, epoch, STEP_COMPUTED, seconds);
	unsigned ready = hold(c, logs, required, hoped, p.signature_deadline, epoch, STEP_READY, seconds);
	if (hoped_ready)
		*hoped_ready = ready;
	cluster_clock_set(c, p.start);
	unsigned signers = 0;
	for (size_t i = 0; i < cluster_size(c); i++) {
		if (!(required & CLUSTER_BIT(i)))
			continue;
		struct snapshot_header header;
		struct buffer note;
		ck_assert_msg(cluster_wait_epoch(c, i, epoch, (int)(seconds * 1000), &header, &note) == 0,
		              "%s did not publish epoch %llu within %.0f s; see %s", cluster_name(c, i),
		              (unsigned long long)epoch, seconds, cluster_log_path(c, i));
		ck_assert_msg(header.epoch == epoch && header.record_count == records,
		              "%s serves epoch %llu with %llu records, not epoch %llu with %zu",
		              cluster_name(c, i), (unsigned long long)header.epoch,
		              (unsigned long long)header.record_count, (unsigned long long)epoch, records);
		unsigned mask = 0;
		ck_assert_int_ge(cluster_signers(c, note.data, note.len, &mask), (int)cluster_threshold(c));
		if (!signers)
			signers = mask;
		buffer_free(&note);
	}
	return signers;
}

/* Registrations of count services from first on (wrapping at records) at sequence, posted to
 * members. */
static void post_churn(struct cluster *c, unsigned members, size_t first, size_t count, size_t records,
                       uint64_t sequence, unsigned threads)
{
	unsigned *holders = malloc(count * sizeof *holders);
	ck_assert(holders != NULL);
	for (size_t r = 0; r < count; r++)
		holders[r] = members;
	for (size_t done = 0; done < count;) {
		size_t start = (first + done) % records;
		size_t run = count - done < records - start ? count - done : records - start;
		struct buffer *notes = cluster_registrations(c, CATCH_UP_LABEL, start, run, sequence);
		ck_assert_uint_eq(cluster_register_all(c, notes, holders, run, threads, NULL),
		                  run * (size_t)__builtin_popcount(members));
		cluster_registrations_free(notes, run);
		done += run;
	}
	free(holders);
}

/* --- links -------------------------------------------------------------------------------- */

/* Every link between two of members gets shaping (the others are left as they are). */
static void shape_links(struct cluster *c, unsigned members, const struct faultproxy_shaping *shaping)
{
	for (size_t from = 0; from < cluster_size(c); from++)
		for (size_t to = 0; to < cluster_size(c); to++)
			if (from != to && (members & CLUSTER_BIT(from)) && (members & CLUSTER_BIT(to)))
				ck_assert_int_eq(faultproxy_set_shaping(cluster_link(c, from, to), shaping),
				                 0);
}

/* The anchor for one epoch: its body as zstd, fetched with curl through the link from away to
 * authority 0 (a fresh connection). Adds its size and the seconds it took. */
static void fetch_body(struct cluster *c, size_t away, uint64_t epoch, int tls, uint64_t *bytes,
                       double *seconds)
{
	char url[256];
	snprintf(url, sizeof url, "%s://127.0.0.1:%u/v1/%s/snapshots/%llu/body", tls ? "https" : "http",
	         faultproxy_port(cluster_link(c, away, 0)), CLUSTER_NAMESPACE, (unsigned long long)epoch);
	struct cluster_response response;
	double start = harness_now();
	long status = tls ? cluster_https(c, url, NULL, 0, "Accept-Encoding: zstd", 600000, &response)
	                  : cluster_http(url, NULL, 0, "Accept-Encoding: zstd", 600000, &response);
	*seconds += harness_now() - start;
	ck_assert_msg(status == 200, "GET %s: %ld", url, status);
	*bytes += response.body.len;
	cluster_response_free(&response);
}

static long file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (long)st.st_size : 0;
}

/* --- the run ------------------------------------------------------------------------------ */

static void bench_run(void)
{
	const struct catch_up_options *o = catch_up_run_options;
	size_t n = o->authorities, away = n - 1;
	unsigned all = (1u << n) - 1, running = all & ~CLUSTER_BIT(away);
	int large = o->records > CATCH_UP_SMALL_RECORDS;
	struct cluster_options options = {.authorities = n,
	                                  .threshold = n / 2 + 1,
	                                  .epoch_length = large ? 120 : 60,
	                                  .prepare_seconds = large ? 60 : 30,
	                                  .vote_seconds = large ? 20 : 10,
	                                  .signature_seconds = large ? 20 : 10,
	                                  .peer_timeout_seconds = large ? 30 : 10,
	                                  .peer_connect_timeout_seconds = 2,
	                                  .links = {.delay_ms = o->delay_ms,
	                                            .jitter_ms = o->jitter_ms,
	                                            .bandwidth_mbit = o->bandwidth_mbit,
	                                            .seed = 1},
	                                  .tls = o->tls};
	const struct faultproxy_shaping shaped = {.delay_ms = o->delay_ms,
	                                          .jitter_ms = o->jitter_ms,
	                                          .bandwidth_bits_per_second =
	                                              (uint64_t)o->bandwidth_mbit * 1000000ULL},
	                                quick = {0};
	char network[256], bandwidth[64] = "no bandwidth cap", load[64];
	if (o->bandwidth_mbit)
		snprintf(bandwidth, sizeof bandwidth, "%u Mbit/s per direction", o->bandwidth_mbit);
	snprintf(network, sizeof network, "links %u ms one way, jitter %u ms, %s, %s", o->delay_ms,
	         o->jitter_ms, bandwidth,
	         o->tls ? "TLS through nginx (deploy/nginx/dirauthd-proxy.conf)" : "plain HTTP");
	size_t churn = o->records * o->churn_percent / 100;
	churn = churn ? churn : 1;

	struct authority_log *logs = calloc(n, sizeof *logs);
	ck_assert(logs != NULL);
	struct cluster *c = cluster_start(&options);
	shape_links(c, running, &quick); /* the links between running authorities; away's stay shaped */
	printf("%zu authorities (k = %zu): building and posting %zu registrations...\n", n, n / 2 + 1,
	       o->records);
	struct buffer *notes = cluster_registrations(c, CATCH_UP_LABEL, 0, o->records, 1);
	double ingest = 0;
	ck_assert_uint_eq(cluster_register_all(c, notes, NULL, o->records, o->threads, &ingest),
	                  o->records * n);
	cluster_registrations_free(notes, o->records);
	uint64_t epoch = cluster_next_epoch(c);
	run_held(c, logs, all, 0, epoch++, o->records, o->stage_seconds, NULL);

	/* Away for E epochs; the anchor is taken as each is published. */
	cluster_stop_authority(c, away);
	printf("%s stopped; %zu epochs of %zu re-registrations (%u%%) each, published by the other %zu\n",
	       cluster_name(c, away), o->epochs, churn, o->churn_percent, n - 1);
	uint64_t missed_from = epoch, anchor_bytes = 0;
	uint64_t *body_bytes = calloc(o->epochs, sizeof *body_bytes);
	ck_assert(body_bytes != NULL);
	double anchor_seconds = 0, history_start = harness_now(), history_work = 0;
	for (size_t e = 0; e < o->epochs; e++) {
		double started = harness_now();
		post_churn(c, running, e * churn % o->records, churn, o->records, 2 + e, o->threads);
		run_held(c, logs, running, 0, epoch, o->records, o->stage_seconds, NULL);
		history_work += harness_now() - started;
		uint64_t before = anchor_bytes;
		fetch_body(c, away, epoch, o->tls, &anchor_bytes, &anchor_seconds);
		body_bytes[e] = anchor_bytes - before;
		epoch++;
		if ((e + 1) % 10 == 0 || e + 1 == o->epochs) {
			harness_load_average(load);
			printf("  %zu epochs published in %.1f s (%.2f s an epoch, the anchor's fetches "
			       "aside); load average %s\n",
			       e + 1, history_work, history_work / (double)(e + 1), load);
		}
	}
	uint64_t latest = epoch - 1;
	double history_seconds = harness_now() - history_start;
	char history_load[64];
	harness_load_average(history_load);

	/* Back, every link shaped. */
	shape_links(c, all, &shaped);
	logs[away].tail.offset = file_size(cluster_log_path(c, away));
	struct cluster_link_bytes before, after;
	cluster_link_bytes(c, away, &before);
	printf("%s restarted (%s)...\n", cluster_name(c, away), network);
	double restart = harness_now();
	cluster_restart(c, away);
	double answering = harness_now() - restart;
	double deadline = harness_now() + o->stage_seconds;
	while (logs[away].caught_latest < latest) {
		log_poll(c, logs, away);
		ck_assert_msg(harness_now() < deadline,
		              "%s did not log catching up to epoch %llu within %.0f s of its restart; see %s",
		              cluster_name(c, away), (unsigned long long)latest, o->stage_seconds,
		              cluster_log_path(c, away));
		cluster_check_alive(c);
		test_sleep_ms(CATCH_UP_POLL_MS);
	}
	cluster_link_bytes(c, away, &after);
	double caught_seconds = logs[away].caught_at - restart;
	harness_load_average(load);
	for (uint64_t missed = missed_from; missed <= latest; missed++) {
		struct buffer note;
		ck_assert_msg(cluster_snapshot(c, away, missed, &note, NULL) == 0,
		              "%s does not store epoch %llu it missed", cluster_name(c, away),
		              (unsigned long long)missed);
		buffer_free(&note);
	}

	/* The next epoch, then maybe one more: does it sign? */
	unsigned ready = 0, signers = run_held(c, logs, running, CLUSTER_BIT(away), epoch, o->records,
	                                       o->stage_seconds, &ready);
	uint64_t next = epoch++;
	unsigned signers_after = 0;
	if (!(signers & CLUSTER_BIT(away)))
		signers_after =
		    run_held(c, logs, running, CLUSTER_BIT(away), epoch, o->records, o->stage_seconds, NULL);

	/* The figures. */
	uint64_t received = (after.answers_received - before.answers_received) +
	                    (after.requests_received - before.requests_received);
	uint64_t window_bytes = 0; /* the zstd bodies of the epochs the catch-up took with their bodies */
	for (size_t e = 0; e < o->epochs && e < logs[away].caught_with_body; e++)
		window_bytes += body_bytes[o->epochs - 1 - e];
	char text[64], answers[64], requests[64], anchor_text[64], window_text[64];
	harness_format_bytes((double)received, text, sizeof text);
	harness_format_bytes((double)(after.answers_received - before.answers_received), answers,
	                     sizeof answers);
	harness_format_bytes((double)(after.requests_received - before.requests_received), requests,
	                     sizeof requests);
	harness_format_bytes((double)anchor_bytes, anchor_text, sizeof anchor_text);
	harness_format_bytes((double)window_bytes, window_text, sizeof window_text);
	printf("\nbench_catch_up: %zu authorities (k = %zu) on one machine of %ld cores, each with its own "
	       "dirauthd, dirauth-signer and store; %zu records, %zu epochs of %llu s away with %zu "
	       "re-registrations (%u%%) each, the history made in %.1f s (clocks held at each phase; load "
	       "average %s); %s\n",
	       n, n / 2 + 1, sysconf(_SC_NPROCESSORS_ONLN), o->records, o->epochs,
	       (unsigned long long)options.epoch_length, churn, o->churn_percent, history_seconds,
	       history_load, network);
	printf("anchor: the %zu snapshots missed (epochs %llu to %llu) as full bodies: their zstd bodies "
	       "%s in all; fetched one after another with curl through %s's link to %s (a connection "
	       "each) in %.2f s\n",
	       o->epochs, (unsigned long long)missed_from, (unsigned long long)latest, anchor_text,
	       cluster_name(c, away), cluster_name(c, 0), anchor_seconds);
	printf("catch-up: restart to \"caught up\" through epoch %llu: %.2f s (dirauthd answering after "
	       "%.2f s; the catch-up %.2f s by its log, in %llu line%s); anchor %.2f s: ratio %.3fx\n",
	       (unsigned long long)latest, caught_seconds, answering, (double)logs[away].caught_ms / 1e3,
	       logs[away].caught_lines, logs[away].caught_lines == 1 ? "" : "s", anchor_seconds,
	       caught_seconds / anchor_seconds);
	printf(
	    "  stored %llu headers alone and %llu with their bodies (the zstd bodies of those epochs: %s)\n",
	    logs[away].caught_alone, logs[away].caught_with_body, window_text);
	printf("  received on its links from the restart to \"caught up\": %s (answers to its requests %s, "
	       "its peers' requests %s); anchor %s: ratio %.3fx\n",
	       text, answers, requests, anchor_text, (double)received / (double)anchor_bytes);
	printf("  load average %s\n", load);
	printf("next epoch %llu with all %zu: %s %s it%s\n", (unsigned long long)next, n,
	       cluster_name(c, away), signers & CLUSTER_BIT(away) ? "signed" : "did not sign",
	       signers & CLUSTER_BIT(away) ? ""
	       : signers_after & CLUSTER_BIT(away)
	           ? " (not ready in time), and signed the one after"
	           : (ready ? "; nor the one after" : " (not ready in time); nor the one after"));
	printf("\nsummary: back after %zu epochs (%zu records, %u%% churn), %zu authorities: caught up in "
	       "%.2f s, received %s, against fetching every body %.2f s (ratio %.3fx) and %s (ratio %.3fx); "
	       "%s the next epoch; load average %s; %s\n",
	       o->epochs, o->records, o->churn_percent, n, caught_seconds, text, anchor_seconds,
	       caught_seconds / anchor_seconds, anchor_text, (double)received / (double)anchor_bytes,
	       signers & CLUSTER_BIT(away) ? "signed" : "did not sign", load, network);
	free(body_bytes);
	free(logs);
	cluster_free(c);
}

static void usage(FILE *out)
{
	fprintf(out, "usage: bench_catch_up [options]\n"
	             "  --authorities n       authorities, the last of which is away (default 5, 3 to 9)\n"
	             "  --records N           signed registrations of distinct services (default 100000)\n"
	             "  --epochs E            epochs published while it is away (default 100)\n"
	             "  --churn-percent C     services registered anew each of those epochs (default 1)\n"
	             "  --threads M           client threads posting registrations (default 8, at most 32)\n"
	             "  --delay-ms D          the links' one-way delay (default 100)\n"
	             "  --jitter-ms J         plus a uniform draw in [0, J] per chunk (default 10)\n"
	             "  --bandwidth-mbit B    the links' bandwidth per direction (default 100; 0: no cap)\n"
	             "  --tls                 each authority behind its own nginx running the shipped\n"
	             "                        deploy/nginx/dirauthd-proxy.conf, peers over https\n"
	             "  --stage-seconds S     real time a step may take (default 60 + 2 ms per record)\n");
}

static int parse_options(int argc, char **argv, struct catch_up_options *o)
{
	const struct harness_option options[] = {
	    HARNESS_OPTION_COUNT("--authorities", &o->authorities, 3, CLUSTER_MAX_AUTHORITIES),
	    HARNESS_OPTION_COUNT("--records", &o->records, 1, CATCH_UP_MAX_RECORDS),
	    HARNESS_OPTION_COUNT("--epochs", &o->epochs, 1, 10000),
	    HARNESS_OPTION_UNSIGNED("--churn-percent", &o->churn_percent, 0, 100),
	    HARNESS_OPTION_UNSIGNED("--threads", &o->threads, 1, CLUSTER_REGISTER_THREADS_MAX),
	    HARNESS_OPTION_UNSIGNED("--delay-ms", &o->delay_ms, 0, CATCH_UP_MAX_DELAY_MS),
	    HARNESS_OPTION_UNSIGNED("--jitter-ms", &o->jitter_ms, 0, CATCH_UP_MAX_DELAY_MS),
	    HARNESS_OPTION_UNSIGNED("--bandwidth-mbit", &o->bandwidth_mbit, 0, CATCH_UP_MAX_MBIT),
	    HARNESS_OPTION_FLAG("--tls", &o->tls),
	    HARNESS_OPTION_SECONDS("--stage-seconds", &o->stage_seconds),
	};
	memset(o, 0, sizeof *o);
	o->authorities = 5;
	o->records = 100000;
	o->epochs = 100;
	o->churn_percent = 1;
	o->threads = 8;
	o->delay_ms = 100;
	o->jitter_ms = 10;
	o->bandwidth_mbit = 100;
	if (harness_parse_options("bench_catch_up", argc, argv, options, sizeof(options) / sizeof(options[0]),
	                          NULL, usage) != 0)
		return -1;
	if (o->stage_seconds <= 0)
		o->stage_seconds = 60 + (double)o->records * 0.002;
	/* The registrations not renewed meanwhile expire a day after the start. */
	uint64_t epoch_length = o->records > CATCH_UP_SMALL_RECORDS ? 120 : 60;
	if ((o->epochs + 3) * epoch_length > CATCH_UP_VALID_SECONDS) {
		fprintf(stderr, "bench_catch_up: %zu epochs of %llu s outlast the registrations (a day)\n",
		        o->epochs, (unsigned long long)epoch_length);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct catch_up_options options;
	if (parse_options(argc, argv, &options) != 0)
		return 2;
	if (options.tls && !cluster_nginx_installed()) {
		printf("bench_catch_up: --tls needs nginx (scripts/install-test-tools.sh): skipped\n");
		return CATCH_UP_SKIPPED;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		fprintf(stderr, "bench_catch_up: curl_global_init failed\n");
		return 1;
	}
	catch_up_run_options = &options;
	/* Ingest, every epoch's work and the anchor's fetch, with room: each step is bounded by
	 * stage_seconds. */
	int failed = cluster_run_alone("bench_catch_up", bench_run,
	                               600 + options.stage_seconds * 8 +
	                                   (double)options.epochs * (30 + (double)options.records * 0.0005) +
	                                   (double)options.records * 0.02);
	curl_global_cleanup();
	return failed ? 1 : 0;
}
