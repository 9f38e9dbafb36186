/*
 * bench_several.c: one epoch of five authorities (k = 3) on this machine, from its vote to its
 * published snapshot, with the share of each phase and the bytes each authority sends, printed
 * next to the single-authority publication of the same records measured in the same run.
 *
 *   bench_several [--records N] [--partial-percent P] [--threads M] [--stage-seconds S]
 *                 [--delay-ms D] [--jitter-ms J] [--bandwidth-mbit B] [--tls] [--real-schedule]
 *                 [--churn-percent C] [--against-loopback]
 *
 * The processes are real: a cluster of tests/harness/cluster.h (each authority its own dirauthd,
 * dirauth-signer, LMDB and file clock, every peer link through a fault proxy in this process,
 * left passing; its byte counters say what each authority sent). The network between the five
 * can be made to look like theirs: every peer link delayed D ms each way with J ms of jitter and
 * capped at B Mbit/s per direction, and with --tls each authority behind its own nginx running
 * the shipped deploy/nginx/dirauthd-proxy.conf, peers over https (a test CA). The run:
 *   1. the anchor: a cluster of one authority alone (n = k = 1, no round). N signed
 *      registrations, built before timing, are POSTed by M client threads; the clock then moves
 *      to the start of the epoch they were promised, and the time until the header of that epoch
 *      is served is the single-authority publication, as bench_authority measures it;
 *   2. five authorities: a warm-up epoch without registrations (so that the measured epoch has a
 *      previous snapshot and the members' certificates are fetched), then the same N
 *      registrations (signed anew with this cluster's provider keys) POSTed to all five, except
 *      that P% of them go to three only, chosen in rotation, so that the other two fetch those
 *      notes from a peer during the consensus;
 *   3. the measured epoch: the clock moves to its vote_at and stays there while the phases run,
 *      since an honest set holding every vote computes at once and every signature decides at
 *      once (docs/protocol.md); once all five logged "ready" the clock moves to the epoch's start,
 *      and the measure ends when all five serve its header. If some authority waits for what
 *      never comes, the clock moves to the vote deadline, then to the signature deadline, and the
 *      output says so. The per-phase times are read from each authority's log (server/round logs
 *      the milliseconds of each step); their median and maximum over the five are printed;
 *   4. checks: all five serve one header text with at least k signatures, holding every record,
 *      and one body is fetched and verified in full; then the bench waits for the reconciliation
 *      that follows publication (the authorities that lacked a registration take it into their
 *      store), whose bytes count as the epoch's too;
 *   5. the steady state (unless --churn-percent 0): C% of the services register anew (sequence
 *      2, the same provider), split between the five as in step 2, and one more epoch is measured
 *      as in steps 3 and 4. Its vote goes to the peers as a delta against the snapshot of step 3
 *      (docs/protocol.md, "Votes as deltas"), so what an authority sends in it, against that
 *      epoch's zstd body, is what an epoch costs a member from then on.
 * What an authority sends is what the proxies of its links counted: its requests to its peers and
 * its answers to theirs. A proxy sees bytes, not kinds of request, so that is the only split; the
 * log's own figures (the vote's size before compression, the notes received) are printed beside
 * it, not subtracted from it.
 * Epoch length and phases follow the record count (60 s epochs up to 20,000 records, 120 s
 * beyond), although the frozen clock means that no phase waits for them: they only bound what a
 * real deployment would allow. Each authority's peer timeout grows likewise.
 *
 * With --real-schedule the clocks are not held: from each epoch's vote_at (the warm-up's and the
 * measured one's) they run at real speed through the vote and signature deadlines to the start
 * and on, and the bench only watches, so that a round that does not fit its windows fails as it
 * would in production. Each epoch is then reported: published by how many of the five, and how
 * long after vote_at each authority was ready; a measured epoch not published by all five ends
 * the run with that report instead of the figures (exit status 0: it is a result).
 *
 * With --against-loopback steps 2 to 5 run twice in one process: first on loopback (no delay,
 * no bandwidth cap, plain HTTP: the anchor), then with the network options; the last lines say
 * how much longer each epoch took on the links, in seconds and in round trips (2 D).
 *
 * Check runs the whole bench as one test (the harness aborts a test on any failure, with its
 * reason), in a child process; the cluster's janitor stops every daemon and removes the
 * directory if that child dies. Exit status 0, 1 on a failure (the reason is printed), 2 for a
 * bad option, 77 for --tls without nginx. scripts/bench.sh --several builds and runs it; ctest
 * runs it with --records 200, with --delay-ms 20, over TLS, and with --against-loopback.
 */
#include "bench/harness.h"
#include "base/buffer.h"
#include "compress/compress.h"
#include "base/error.h"
#include "schema/note.h"
#include "schema/snapshot.h"
#include "tests/harness/cluster.h"
#include "tests/harness/faultproxy.h"

#include <check.h>
#include <curl/curl.h>

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SEVERAL_N             5
#define SEVERAL_K             3
#define SEVERAL_ALL           ((1u << SEVERAL_N) - 1)
#define SEVERAL_PAIRS         10 /* the pairs of authorities that lack a partial registration */
#define SEVERAL_MAX_RECORDS   1000000
#define SEVERAL_LINE_MAX      4096
#define SEVERAL_POLL_MS       20
#define SEVERAL_PHASES        5
#define SEVERAL_LABEL         "bench"
#define SEVERAL_SMALL_RECORDS 20000 /* up to here, 60 s epochs */
#define SEVERAL_MAX_DELAY_MS  10000
#define SEVERAL_MAX_MBIT      100000
#define SEVERAL_REAL_GRACE    5 /* real schedule: seconds after the start an epoch may still be served */
#define SEVERAL_SKIPPED       77

struct several_options {
	size_t records;
	unsigned partial_percent;
	unsigned threads;
	double stage_seconds;    /* how long each stage may take in real time; 0: from the record count */
	unsigned delay_ms;       /* every peer link, one way */
	unsigned jitter_ms;      /* every peer link */
	unsigned bandwidth_mbit; /* every peer link, per direction; 0: no cap */
	int tls;                 /* each authority behind the shipped nginx */
	int real_schedule;       /* the clocks run at real speed through the windows */
	unsigned churn_percent;  /* services registered anew for the steady-state epoch; 0: none */
	int against_loopback;    /* the five on loopback first, as the anchor of the network run */
};

/* Check calls a test without arguments: main parses the options, sets this, and runs the test. */
static const struct several_options *several_run_options;

/* --- the schedule ------------------------------------------------------------------------- */

struct several_schedule {
	uint64_t length, prepare, vote, signature;
	unsigned peer_timeout_seconds;
};

static void schedule_for(size_t records, struct several_schedule *out)
{
	if (records <= SEVERAL_SMALL_RECORDS)
		*out = (struct several_schedule){60, 30, 10, 10, 10};
	else
		*out = (struct several_schedule){120, 60, 20, 20, 30};
}

/* A cluster of that many authorities; the network options apply to its peer links (a single
 * authority has none). */
static struct cluster *start_cluster(size_t authorities, size_t threshold, const struct several_schedule *s,
                                     const struct several_options *o)
{
	struct cluster_options options = {.authorities = authorities,
	                                  .threshold = threshold,
	                                  .epoch_length = s->length,
	                                  .prepare_seconds = s->prepare,
	                                  .vote_seconds = s->vote,
	                                  .signature_seconds = s->signature,
	                                  .peer_timeout_seconds = s->peer_timeout_seconds,
	                                  .peer_connect_timeout_seconds = 2,
	                                  .links = {.delay_ms = o->delay_ms,
	                                            .jitter_ms = o->jitter_ms,
	                                            .bandwidth_mbit = o->bandwidth_mbit,
	                                            .seed = 1},
	                                  .tls = authorities > 1 && o->tls};
	return cluster_start(&options);
}

/* The peer links as the output names them. */
static void network_text(const struct several_options *o, char *out, size_t cap)
{
	char bandwidth[64] = "no bandwidth cap";
	if (o->bandwidth_mbit)
		snprintf(bandwidth, sizeof bandwidth, "%u Mbit/s per direction", o->bandwidth_mbit);
	snprintf(out, cap, "peer links %u ms one way, jitter %u ms, %s, %s", o->delay_ms, o->jitter_ms,
	         bandwidth, o->tls ? "TLS through nginx (deploy/nginx/dirauthd-proxy.conf)" : "plain HTTP");
}

/* --- registrations ------------------------------------------------------------------------ */

/* Which authorities get registration r: all, except that partial_percent of them (spread evenly)
 * miss one of the ten pairs in turn. */
static unsigned holders_of(size_t r, unsigned partial_percent, size_t *partial_index)
{
	static const unsigned pairs[SEVERAL_PAIRS][2] = {{0, 1}, {2, 3}, {4, 0}, {1, 2}, {3, 4},
	                                                 {0, 2}, {1, 3}, {2, 4}, {3, 0}, {4, 1}};
	if (r % 100 >= partial_percent)
		return SEVERAL_ALL;
	const unsigned *pair = pairs[(*partial_index)++ % SEVERAL_PAIRS];
	return SEVERAL_ALL & ~(CLUSTER_BIT(pair[0]) | CLUSTER_BIT(pair[1]));
}

/* --- what the logs say -------------------------------------------------------------------- */

/* One authority during one epoch: what its log said (times in seconds since the epoch's vote_at
 * was set, as the bench first saw each line), and when it first served the epoch's header. */
struct authority_run {
	int voted, computed, ready, published, reconciled, served;
	double voted_at, computed_at, ready_at, published_at, reconciled_at, served_at;
	unsigned long long build_ms, push_ms;
	/* The vote's pushes as the log counts them, before compression: to how many peers as a delta
	 * of how many bytes, to how many whole of how many bytes. */
	unsigned long long vote_deltas, vote_delta_bytes, vote_wholes, vote_whole_bytes;
	unsigned long long votes_pulled_ms, fetched, fetch_ms, consensus_ms, sign_push_ms;
	unsigned long long notes_wanted, notes_bytes; /* the notes line: the answers' bytes on the wire */
	unsigned long long signatures_pulled_ms, stored_ms, header_bytes, body_bytes;
	unsigned long long reconciled_taken;
	char failure[SEVERAL_LINE_MAX]; /* a "not published" line for the epoch */
	char waiting[SEVERAL_LINE_MAX]; /* the last "no vote yet" or "no consensus yet" line */
	struct harness_tail tail;       /* how far the log was read */
};

struct epoch_run {
	uint64_t epoch;
	size_t n;
	int real_schedule;   /* a "not published" line is a result, not a failure of the bench */
	size_t served_count; /* authorities that served the epoch's header */
	double t0;           /* monotonic time at which the clocks were set to vote_at */
	struct authority_run a[CLUSTER_MAX_AUTHORITIES];
	double total_seconds;   /* vote_at set until the last authority served the header */
	double publish_seconds; /* start set until the last authority served the header */
	double ready_seconds;   /* vote_at set until the last authority logged ready */
	char clock_steps[256];  /* the deadlines the clock had to be moved to, if any */
};

static int starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* One complete log line of authority i (docs/operating.md, "Logs": the time, then the epoch, the
 * program and the namespace, then the sentence). A step line that does not read as server/round
 * writes it aborts the bench: its figures would be wrong. */
static void log_line(struct epoch_run *run, size_t i, const char *line, double t)
{
	struct authority_run *a = &run->a[i];
	char prefix[128];
	int n = snprintf(prefix, sizeof prefix,
	                 " epoch %llu dirauthd: namespace %s: ", (unsigned long long)run->epoch,
	                 CLUSTER_NAMESPACE);
	const char *at = strstr(line, prefix);
	if (!at)
		return;
	const char *s = at + n, *p;
	int parsed = 1;
	int signatures = 0;
	unsigned long long records = 0;
	if (starts_with(s, "voted: ")) {
		p = strstr(s, "; built in ");
		parsed = p && sscanf(p,
		                     "; built in %llu ms, pushed in %llu ms (%llu as a delta of %llu bytes, "
		                     "%llu whole of %llu bytes)",
		                     &a->build_ms, &a->push_ms, &a->vote_deltas, &a->vote_delta_bytes,
		                     &a->vote_wholes, &a->vote_whole_bytes) == 6;
		a->voted = 1;
		a->voted_at = t;
	} else if (starts_with(s, "computed and signed: ")) {
		p = strstr(s, "votes pulled in ");
		parsed = p && sscanf(p,
		                     "votes pulled in %llu ms, %llu notes fetched in %llu ms, consensus in "
		                     "%llu ms, signed and pushed in %llu ms",
		                     &a->votes_pulled_ms, &a->fetched, &a->fetch_ms, &a->consensus_ms,
		                     &a->sign_push_ms) == 5;
		a->computed = 1;
		a->computed_at = t;
	} else if (starts_with(s, "notes: ") && strstr(s, " wanted, ")) {
		p = strstr(s, " requests (");
		parsed = sscanf(s, "notes: %llu wanted", &a->notes_wanted) == 1 && p &&
		         sscanf(p, " requests (%llu bytes)", &a->notes_bytes) == 1;
	} else if (starts_with(s, "ready: ")) {
		p = strstr(s, "signatures pulled in ");
		parsed = p && sscanf(p, "signatures pulled in %llu ms", &a->signatures_pulled_ms) == 1;
		a->ready = 1;
		a->ready_at = t;
	} else if (starts_with(s, "published: ")) {
		parsed = sscanf(s,
		                "published: %llu records, header %llu bytes, body %llu bytes, %d signatures; "
		                "stored in %llu ms",
		                &records, &a->header_bytes, &a->body_bytes, &signatures, &a->stored_ms) == 5;
		a->published = 1;
		a->published_at = t;
	} else if (starts_with(s, "reconciled: ")) {
		parsed = sscanf(s, "reconciled: %llu notes", &a->reconciled_taken) == 1;
		a->reconciled = 1;
		a->reconciled_at = t;
	} else if (starts_with(s, "not published")) {
		snprintf(a->failure, sizeof a->failure, "%s", line);
	} else if (starts_with(s, "no vote yet") || starts_with(s, "no consensus yet")) {
		snprintf(a->waiting, sizeof a->waiting, "%s", line);
	}
	ck_assert_msg(parsed, "a log line of %s does not read as expected: %s", prefix, line);
}

struct log_reading {
	struct epoch_run *run;
	size_t i;
	double t;
};

static void log_reading_line(void *context, const char *line)
{
	struct log_reading *reading = context;
	log_line(reading->run, reading->i, line, reading->t);
}

/* Reads what authority i's log gained since the last call. */
static void log_poll(const struct cluster *c, struct epoch_run *run, size_t i)
{
	struct log_reading reading = {run, i, harness_now() - run->t0};
	harness_tail_read(&run->a[i].tail, cluster_log_path(c, i), log_reading_line, &reading);
}

static void logs_poll(const struct cluster *c, struct epoch_run *run)
{
	for (size_t i = 0; i < run->n; i++) {
		log_poll(c, run, i);
		ck_assert_msg(run->real_schedule || !run->a[i].failure[0], "%s: %s", cluster_name(c, i),
		              run->a[i].failure);
	}
}

static int all_ready(const struct epoch_run *run)
{
	for (size_t i = 0; i < run->n; i++)
		if (!run->a[i].ready)
			return 0;
	return 1;
}

/* What the authorities not yet ready last said they wait for. */
static void describe_waits(const struct cluster *c, const struct epoch_run *run, char *out, size_t cap)
{
	size_t len = 0;
	out[0] = 0;
	for (size_t i = 0; i < run->n && len < cap; i++)
		if (!run->a[i].ready)
			len += (size_t)snprintf(out + len, cap - len, "%s%s: %s", len ? "; " : "",
			                        cluster_name(c, i),
			                        run->a[i].waiting[0] ? run->a[i].waiting : "nothing logged");
}

/* --- one epoch ---------------------------------------------------------------------------- */

/* Asks each authority that did not yet serve epoch's header whether it does now; returns how
 * many do. */
static size_t poll_served(struct cluster *c, uint64_t epoch, struct epoch_run *run)
{
	size_t served = 0;
	for (size_t i = 0; i < run->n; i++) {
		struct authority_run *a = &run->a[i];
		struct snapshot_header header;
		if (!a->served && cluster_latest(c, i, &header, NULL) == 0 && header.epoch >= epoch) {
			a->served = 1;
			a->served_at = harness_now() - run->t0;
		}
		served += a->served;
	}
	run->served_count = served;
	return served;
}

/* Runs epoch through its round: the clocks at vote_at until every authority is ready (moved to
 * the vote deadline, then the signature deadline, when a stage takes longer than stage_seconds),
 * then at its start until every authority serves its header. */
static void drive_epoch(struct cluster *c, uint64_t epoch, double stage_seconds, struct epoch_run *run)
{
	memset(run, 0, sizeof *run);
	run->epoch = epoch;
	run->n = cluster_size(c);
	struct epoch_phases phases;
	cluster_epoch_phases(c, epoch, &phases);
	const uint64_t stages[3] = {phases.vote_at, phases.vote_deadline, phases.signature_deadline};
	const char *const stage_names[3] = {"vote_at", "the vote deadline", "the signature deadline"};
	run->t0 = harness_now();
	cluster_clock_set(c, phases.vote_at);
	for (size_t s = 0; s < 3 && !all_ready(run); s++) {
		if (s > 0) {
			size_t len = strlen(run->clock_steps);
			snprintf(run->clock_steps + len, sizeof run->clock_steps - len, "%s%s after %.1f s",
			         len ? ", " : "", stage_names[s], harness_now() - run->t0);
			cluster_clock_set(c, stages[s]);
		}
		double deadline = harness_now() + stage_seconds;
		for (;;) {
			logs_poll(c, run);
			if (all_ready(run) || harness_now() >= deadline)
				break;
			cluster_check_alive(c);
			test_sleep_ms(SEVERAL_POLL_MS);
		}
	}
	if (!all_ready(run)) {
		char waits[2048];
		describe_waits(c, run, waits, sizeof waits);
		ck_abort_msg("epoch %llu: not every authority was ready by its signature deadline: %s",
		             (unsigned long long)epoch, waits);
	}
	run->ready_seconds = harness_now() - run->t0;
	double start_set = harness_now();
	cluster_clock_set(c, phases.start);
	double deadline = start_set + stage_seconds;
	for (;;) {
		size_t served = poll_served(c, epoch, run);
		if (served == run->n)
			break;
		logs_poll(c, run);
		ck_assert_msg(harness_now() < deadline,
		              "epoch %llu: %zu of %zu authorities serve it after %.0f s",
		              (unsigned long long)epoch, served, run->n, stage_seconds);
		cluster_check_alive(c);
		test_sleep_ms(SEVERAL_POLL_MS);
	}
	double end = harness_now();
	run->total_seconds = end - run->t0;
	run->publish_seconds = end - start_set;
	logs_poll(c, run);
}

/* --real-schedule: epoch's round with the clocks running at real speed from its vote_at, as in
 * production; the bench only watches. Ends when all serve its header, or SEVERAL_REAL_GRACE
 * seconds after its start (those that do not serve it by then have failed it). */
static void drive_epoch_real(struct cluster *c, uint64_t epoch, struct epoch_run *run)
{
	memset(run, 0, sizeof *run);
	run->epoch = epoch;
	run->n = cluster_size(c);
	run->real_schedule = 1;
	struct epoch_phases phases;
	cluster_epoch_phases(c, epoch, &phases);
	run->t0 = harness_now();
	cluster_clock_set(c, phases.vote_at);
	for (;;) {
		double elapsed = harness_now() - run->t0;
		uint64_t now = phases.vote_at + (uint64_t)elapsed;
		if (now > cluster_now(c))
			cluster_clock_set(c, now);
		logs_poll(c, run);
		if (run->ready_seconds == 0 && all_ready(run))
			run->ready_seconds = elapsed;
		if ((now >= phases.signature_deadline || all_ready(run)) &&
		    poll_served(c, epoch, run) == run->n)
			break;
		if (now >= phases.start + SEVERAL_REAL_GRACE)
			break;
		cluster_check_alive(c);
		test_sleep_ms(SEVERAL_POLL_MS);
	}
	double end = harness_now();
	run->total_seconds = end - run->t0;
	run->publish_seconds = end - (run->t0 + (double)(phases.start - phases.vote_at));
	logs_poll(c, run);
}

static void run_epoch(struct cluster *c, uint64_t epoch, const struct several_options *o,
                      struct epoch_run *run)
{
	if (o->real_schedule)
		drive_epoch_real(c, epoch, run);
	else
		drive_epoch(c, epoch, o->stage_seconds, run);
}

/* Waits until every authority that lacked a registration of the epoch logged its reconciliation
 * (or stage_seconds passed); returns the seconds since vote_at was set. */
static double wait_reconciled(struct cluster *c, struct epoch_run *run, unsigned expected,
                              double stage_seconds)
{
	double deadline = harness_now() + stage_seconds;
	for (;;) {
		logs_poll(c, run);
		unsigned done = 0;
		for (size_t i = 0; i < run->n; i++)
			if (run->a[i].reconciled)
				done |= CLUSTER_BIT(i);
		if ((done & expected) == expected || harness_now() >= deadline)
			break;
		test_sleep_ms(SEVERAL_POLL_MS);
	}
	return harness_now() - run->t0;
}

/* --- bytes, memory ------------------------------------------------------------------------ */

/* What each authority sent over its peer links: its requests to its peers and its answers to
 * theirs (cluster_link_bytes). */
struct wire_sent {
	uint64_t requests[CLUSTER_MAX_AUTHORITIES];
	uint64_t answers[CLUSTER_MAX_AUTHORITIES];
};

/* So far, since the cluster started. */
static void wire_sent_read(struct cluster *c, struct wire_sent *out)
{
	memset(out, 0, sizeof *out);
	for (size_t i = 0; i < cluster_size(c); i++) {
		struct cluster_link_bytes bytes;
		cluster_link_bytes(c, i, &bytes);
		out->requests[i] = bytes.requests_sent;
		out->answers[i] = bytes.answers_sent;
	}
}

static void wire_sent_since(const struct wire_sent *now, const struct wire_sent *before,
                            struct wire_sent *out)
{
	for (size_t i = 0; i < CLUSTER_MAX_AUTHORITIES; i++) {
		out->requests[i] = now->requests[i] - before->requests[i];
		out->answers[i] = now->answers[i] - before->answers[i];
	}
}

/* The peak resident set (VmHWM) of the cluster's dirauthd processes, in bytes: the largest and
 * the sum. */
static void dirauthd_memory(const struct cluster *c, uint64_t *largest, uint64_t *sum)
{
	*largest = *sum = 0;
	DIR *proc = opendir("/proc");
	if (!proc)
		return;
	struct dirent *entry;
	while ((entry = readdir(proc)) != NULL) {
		if (entry->d_name[0] < '0' || entry->d_name[0] > '9')
			continue;
		char path[300], text[8192];
		snprintf(path, sizeof path, "/proc/%s/cmdline", entry->d_name);
		FILE *file = fopen(path, "r");
		if (!file)
			continue;
		size_t len = fread(text, 1, sizeof text - 1, file);
		fclose(file);
		for (size_t k = 0; k < len; k++)
			if (text[k] == 0)
				text[k] = ' ';
		text[len] = 0;
		if (!strstr(text, "server/dirauthd ") || !strstr(text, cluster_dir(c)))
			continue;
		snprintf(path, sizeof path, "/proc/%s/status", entry->d_name);
		if (!(file = fopen(path, "r")))
			continue;
		char line[256];
		unsigned long long kb = 0;
		while (fgets(line, sizeof line, file))
			if (sscanf(line, "VmHWM: %llu kB", &kb) == 1)
				break;
		fclose(file);
		uint64_t bytes = (uint64_t)kb * 1024;
		*sum += bytes;
		if (bytes > *largest)
			*largest = bytes;
	}
	closedir(proc);
}

/* --- checks --------------------------------------------------------------------------------- */

/* Every authority serves one header text for epoch, with at least k members' signatures and
 * every record; the body of authority 0 is fetched (zstd) and verified in full. Sets the header
 * and the zstd body's size. */
static void check_published(struct cluster *c, uint64_t epoch, size_t records, struct snapshot_header *header,
                            size_t *body_zstd_len)
{
	struct buffer first_text;
	buffer_init(&first_text);
	for (size_t i = 0; i < cluster_size(c); i++) {
		struct buffer note_bytes;
		ck_assert_msg(cluster_snapshot(c, i, epoch, &note_bytes, NULL) == 0,
		              "%s does not serve epoch %llu", cluster_name(c, i), (unsigned long long)epoch);
		int signers = cluster_signers(c, note_bytes.data, note_bytes.len, NULL);
		ck_assert_msg(signers >= (int)cluster_threshold(c), "%s serves epoch %llu with %d signatures",
		              cluster_name(c, i), (unsigned long long)epoch, signers);
		struct note *note = NULL;
		ck_assert(note_parse(note_bytes.data, note_bytes.len, &note) == 0);
		if (i == 0) {
			ck_assert(snapshot_header_parse(note->text, note->text_len, header) == 0);
			ck_assert(buffer_append(&first_text, note->text, note->text_len) == 0);
		} else {
			ck_assert_msg(note->text_len == first_text.len &&
			                  memcmp(note->text, first_text.data, first_text.len) == 0,
			              "%s and %s serve different headers for epoch %llu", cluster_name(c, 0),
			              cluster_name(c, i), (unsigned long long)epoch);
		}
		note_free(note);
		buffer_free(&note_bytes);
	}
	buffer_free(&first_text);
	ck_assert_msg(header->record_count == records, "epoch %llu holds %llu records, %zu were registered",
	              (unsigned long long)epoch, (unsigned long long)header->record_count, records);
	char url[256];
	snprintf(url, sizeof url, "%s/v1/%s/snapshots/%llu/body", cluster_url(c, 0), CLUSTER_NAMESPACE,
	         (unsigned long long)epoch);
	struct cluster_response response;
	long status = cluster_http(url, NULL, 0, "Accept-Encoding: zstd", 60000, &response);
	ck_assert_msg(status == 200, "GET %s: %ld", url, status);
	struct buffer plain;
	buffer_init(&plain);
	int rc = compress_decode(ENCODING_ZSTD, response.body.data, response.body.len,
	                         (size_t)header->body_size, &plain);
	if (rc == 0)
		rc = snapshot_body_verify(header, plain.data, plain.len, records);
	ck_assert_msg(rc == 0, "the body of epoch %llu: %s", (unsigned long long)epoch, dirauth_strerror(rc));
	*body_zstd_len = response.body.len;
	buffer_free(&plain);
	cluster_response_free(&response);
}

/* --- the measurements --------------------------------------------------------------------- */

struct single_figures {
	double ingest_seconds;
	size_t posted;
	double publish_seconds;
	char load[64];
};

/* One epoch of the five, from vote_at to the end of the reconciliation that follows it. */
struct measured_epoch {
	struct epoch_run run;
	double reconciled_seconds;
	struct wire_sent sent;  /* vote_at to the last reconciliation */
	struct wire_sent after; /* of which after the last authority served the header */
	uint64_t body_len, body_zstd_len;
	char load[64]; /* after the five published */
};

struct several_figures {
	struct several_options options; /* the run's: its network */
	double ingest_seconds;
	size_t posted, partial;
	struct epoch_run warm_up;
	struct measured_epoch first; /* publishes the N records */
	/* The steady state (--churn-percent): churned services re-registered at sequence 2, of which
	 * churn_partial with three authorities only, then one more epoch. */
	size_t churned, churn_partial, churn_posted;
	double churn_ingest_seconds;
	struct measured_epoch steady;
	uint64_t memory_largest, memory_sum;
};

static void measure_single(const struct several_options *o, const struct several_schedule *s,
                           struct single_figures *f)
{
	struct cluster *c = start_cluster(1, 1, s, o);
	printf("single authority: building %zu signed registrations...\n", o->records);
	struct buffer *notes = cluster_registrations(c, SEVERAL_LABEL, 0, o->records, 1);
	unsigned *holders = malloc(o->records * sizeof *holders);
	ck_assert(holders != NULL);
	for (size_t r = 0; r < o->records; r++)
		holders[r] = CLUSTER_BIT(0);
	printf("single authority: posting them from %u threads...\n", o->threads);
	f->posted = cluster_register_all(c, notes, holders, o->records, o->threads, &f->ingest_seconds);
	free(holders);
	cluster_registrations_free(notes, o->records);

	uint64_t epoch = cluster_next_epoch(c);
	struct epoch_phases phases;
	cluster_epoch_phases(c, epoch, &phases);
	double stage = o->stage_seconds;
	double start = harness_now();
	cluster_clock_set(c, phases.start);
	struct snapshot_header header;
	ck_assert_msg(cluster_wait_epoch(c, 0, epoch, (int)(stage * 1000), &header, NULL) == 0,
	              "the single authority did not publish epoch %llu within %.0f s",
	              (unsigned long long)epoch, stage);
	f->publish_seconds = harness_now() - start;
	harness_load_average(f->load);
	ck_assert_msg(header.epoch == epoch && header.record_count == o->records,
	              "the single authority published epoch %llu with %llu records, not %llu with %zu",
	              (unsigned long long)header.epoch, (unsigned long long)header.record_count,
	              (unsigned long long)epoch, o->records);
	cluster_free(c);
}

/* Builds the registrations of services [0, count) at sequence and posts them to the five, the
 * partial share (holders_of) to three only. Returns the authorities that lack some of them. */
static unsigned post_registrations(struct cluster *c, const struct several_options *o, size_t count,
                                   uint64_t sequence, size_t *partial, size_t *posted, double *seconds)
{
	printf("5 authorities: building %zu signed registrations of sequence %llu...\n", count,
	       (unsigned long long)sequence);
	struct buffer *notes = cluster_registrations(c, SEVERAL_LABEL, 0, count, sequence);
	unsigned *holders = malloc(count * sizeof *holders);
	ck_assert(holders != NULL);
	unsigned lacking = 0;
	*partial = 0;
	for (size_t r = 0; r < count; r++) {
		holders[r] = holders_of(r, o->partial_percent, partial);
		lacking |= SEVERAL_ALL & ~holders[r];
	}
	printf("5 authorities: posting them from %u threads (%zu to 3 authorities only)...\n", o->threads,
	       *partial);
	*posted = cluster_register_all(c, notes, holders, count, o->threads, seconds);
	free(holders);
	cluster_registrations_free(notes, count);
	return lacking;
}

/* Runs the next epoch and measures it: its round, the bytes each authority sent until the
 * authorities in lacking reconciled, and (when all five published it) the checks. */
static void measure_epoch(struct cluster *c, const struct several_options *o, unsigned lacking,
                          struct measured_epoch *m)
{
	uint64_t epoch = cluster_next_epoch(c);
	struct wire_sent before, published, end;
	wire_sent_read(c, &before);
	printf("5 authorities: epoch %llu, from vote_at to published...\n", (unsigned long long)epoch);
	run_epoch(c, epoch, o, &m->run);
	wire_sent_read(c, &published);
	harness_load_average(m->load);
	if (m->run.served_count == SEVERAL_N)
		m->reconciled_seconds = wait_reconciled(c, &m->run, lacking, o->stage_seconds);
	wire_sent_read(c, &end);
	wire_sent_since(&end, &before, &m->sent);
	wire_sent_since(&end, &published, &m->after);
	if (m->run.served_count < SEVERAL_N)
		return; /* only with the real schedule: the round did not fit its windows */
	struct snapshot_header header;
	size_t zstd_len = 0;
	check_published(c, epoch, o->records, &header, &zstd_len);
	m->body_len = header.body_size;
	m->body_zstd_len = zstd_len;
}

static void measure_several(const struct several_options *o, const struct several_schedule *s,
                            struct several_figures *f)
{
	char network[256];
	network_text(o, network, sizeof network);
	f->options = *o;
	printf("5 authorities: %s%s\n", network,
	       o->real_schedule ? ", clocks at real speed through the windows" : "");
	struct cluster *c = start_cluster(SEVERAL_N, SEVERAL_K, s, o);
	printf("5 authorities: a warm-up epoch without registrations...\n");
	run_epoch(c, cluster_next_epoch(c), o, &f->warm_up);
	unsigned lacking =
	    post_registrations(c, o, o->records, 1, &f->partial, &f->posted, &f->ingest_seconds);
	measure_epoch(c, o, lacking, &f->first);
	if (f->first.run.served_count == SEVERAL_N && o->churn_percent) {
		f->churned = o->records * o->churn_percent / 100;
		f->churned = f->churned ? f->churned : 1;
		printf("5 authorities: the steady state: %zu of the services (%u%%) register anew\n",
		       f->churned, o->churn_percent);
		lacking = post_registrations(c, o, f->churned, 2, &f->churn_partial, &f->churn_posted,
		                             &f->churn_ingest_seconds);
		measure_epoch(c, o, lacking, &f->steady);
	}
	dirauthd_memory(c, &f->memory_largest, &f->memory_sum);
	cluster_free(c);
}

/* --- the figures -------------------------------------------------------------------------- */

static int compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Median and maximum of n values. */
static void median_max(const double *values, size_t n, double *median, double *max)
{
	double sorted[CLUSTER_MAX_AUTHORITIES];
	memcpy(sorted, values, n * sizeof *values);
	qsort(sorted, n, sizeof *sorted, compare_double);
	*median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
	*max = sorted[n - 1];
}

/* The phases of one authority, in seconds, in the order of phase_names. */
static void phases_of(const struct authority_run *a, double out[SEVERAL_PHASES])
{
	out[0] = (double)(a->build_ms + a->push_ms + a->votes_pulled_ms) / 1e3;
	out[1] = (double)a->fetch_ms / 1e3;
	out[2] = (double)a->consensus_ms / 1e3;
	out[3] = (double)(a->sign_push_ms + a->signatures_pulled_ms) / 1e3;
	out[4] = (double)a->stored_ms / 1e3;
}

/* What each authority of an epoch sent, in all: median and maximum. */
static void sent_median_max(const struct measured_epoch *m, size_t n, double *median, double *max)
{
	double values[CLUSTER_MAX_AUTHORITIES];
	for (size_t i = 0; i < n; i++)
		values[i] = (double)(m->sent.requests[i] + m->sent.answers[i]);
	median_max(values, n, median, max);
}

/* The bytes of one measured epoch: what each authority sent on the wire, split as the proxies can
 * split it (its requests, its answers), next to what its log says it pushed and received. */
static void print_sent(const struct measured_epoch *m, const char *what)
{
	size_t n = m->run.n;
	double median, max;
	char text[64], other[64], body[64], body_zstd[64];
	sent_median_max(m, n, &median, &max);
	harness_format_bytes(median, text, sizeof text);
	harness_format_bytes(max, other, sizeof other);
	harness_format_bytes((double)m->body_len, body, sizeof body);
	harness_format_bytes((double)m->body_zstd_len, body_zstd, sizeof body_zstd);
	printf("sent per authority %s (peer links, requests and answers, with reconciliation after "
	       "publication): median %s, max %s; the snapshot body %s: ratio %.2fx; its zstd %s: ratio "
	       "%.2fx\n",
	       what, text, other, body, median / (double)m->body_len, body_zstd,
	       median / (double)m->body_zstd_len);
	for (size_t i = 0; i < n; i++) {
		const struct authority_run *a = &m->run.a[i];
		uint64_t sent = m->sent.requests[i] + m->sent.answers[i];
		char total[64], requests[64], answers[64], after[64], delta[64], whole[64], notes[64];
		harness_format_bytes((double)sent, total, sizeof total);
		harness_format_bytes((double)m->sent.requests[i], requests, sizeof requests);
		harness_format_bytes((double)m->sent.answers[i], answers, sizeof answers);
		harness_format_bytes((double)(m->after.requests[i] + m->after.answers[i]), after,
		                     sizeof after);
		harness_format_bytes((double)a->vote_delta_bytes, delta, sizeof delta);
		harness_format_bytes((double)a->vote_whole_bytes, whole, sizeof whole);
		harness_format_bytes((double)a->notes_bytes, notes, sizeof notes);
		printf("  authority%zu: %s: its requests %s, its answers %s; %s after publication, "
		       "reconciled %llu registrations; ratio to the zstd body %.2fx; its log: vote pushed "
		       "to %llu as a delta of %s, to %llu whole (%s), notes received %s for %llu wanted\n",
		       i, total, requests, answers, after, a->reconciled_taken,
		       (double)sent / (double)m->body_zstd_len, a->vote_deltas, delta, a->vote_wholes, whole,
		       notes, a->notes_wanted);
	}
	printf("  (the proxies count each link's bytes per direction, not per kind of request: an "
	       "authority's requests are its vote's and signature's pushes, its vote pulls and its notes "
	       "requests; its answers are what its peers asked of it. The log's vote sizes are before "
	       "compression, its notes bytes the answers' on the wire.)\n");
}

static const char *const phase_names[SEVERAL_PHASES] = {
    "vote (build, sign, push; pull any missing)", "fetch of missing notes", "consensus",
    "signatures (sign, push, pull)", "publication (store, serve)"};
static const char *const phase_short[SEVERAL_PHASES] = {"vote", "fetch", "consensus", "signatures",
                                                        "publication"};

/* The time and phases of one measured epoch against the single authority's publication. */
static void print_epoch(const struct measured_epoch *m, const char *what, double anchor,
                        double phase_median[SEVERAL_PHASES])
{
	const struct epoch_run *run = &m->run;
	size_t n = run->n;
	double median = 0, max = 0, values[CLUSTER_MAX_AUTHORITIES] = {0};
	char other[64];
	for (size_t i = 0; i < n; i++)
		values[i] = run->a[i].served_at;
	median_max(values, n, &median, &max);
	printf("5 authorities, %s: vote_at to published %.2f s (max over 5; median %.2f s), "
	       "single authority %.2f s: ratio %.1fx%s%s\n",
	       what, run->total_seconds, median, anchor, run->total_seconds / anchor,
	       run->clock_steps[0] ? "; the clock had to move to " : "", run->clock_steps);

	double per[CLUSTER_MAX_AUTHORITIES][SEVERAL_PHASES];
	for (size_t i = 0; i < n; i++)
		phases_of(&run->a[i], per[i]);
	for (size_t p = 0; p < SEVERAL_PHASES; p++) {
		for (size_t i = 0; i < n; i++)
			values[i] = per[i][p];
		median_max(values, n, &phase_median[p], &max);
		if (p == 1) {
			double fetched[CLUSTER_MAX_AUTHORITIES], fetched_median, fetched_max;
			for (size_t i = 0; i < n; i++)
				fetched[i] = (double)run->a[i].fetched;
			median_max(fetched, n, &fetched_median, &fetched_max);
			snprintf(other, sizeof other, " (notes fetched: median %.0f, max %.0f)",
			         fetched_median, fetched_max);
		} else {
			other[0] = 0;
		}
		printf(
		    "  %s%s: median %.3f s, max %.3f s, %.0f%% of the total; single authority %.2f s: ratio "
		    "%.2fx\n",
		    phase_names[p], other, phase_median[p], max, 100 * phase_median[p] / run->total_seconds,
		    anchor, phase_median[p] / anchor);
	}
	/* What no step of an authority accounts for: waiting for the slowest peer's vote or
	 * signature, the scheduler's 20 ms ticks, the bench's polling and its clock steps. */
	for (size_t i = 0; i < n; i++) {
		double sum = 0;
		for (size_t p = 0; p < SEVERAL_PHASES; p++)
			sum += per[i][p];
		values[i] = run->a[i].served_at - sum;
	}
	median_max(values, n, &median, &max);
	printf("  waiting (for the slowest peer, ticks, the bench's clock steps): median %.3f s, max %.3f s, "
	       "%.0f%% of the total; single authority %.2f s: ratio %.2fx\n",
	       median, max, 100 * median / run->total_seconds, anchor, median / anchor);
	double voted_last = 0, computed_last = 0, published_last = 0;
	for (size_t i = 0; i < n; i++) {
		voted_last = run->a[i].voted_at > voted_last ? run->a[i].voted_at : voted_last;
		computed_last = run->a[i].computed_at > computed_last ? run->a[i].computed_at : computed_last;
		published_last =
		    run->a[i].published_at > published_last ? run->a[i].published_at : published_last;
	}
	printf(
	    "  timeline (seconds after vote_at, as the last authority logged it): voted %.2f, computed %.2f, "
	    "ready %.2f, clock to the epoch's start, published %.2f, all serving %.2f (start to all serving "
	    "%.2f s; single authority %.2f s: ratio %.2fx)\n",
	    voted_last, computed_last, run->ready_seconds, published_last, run->total_seconds,
	    run->publish_seconds, anchor, run->publish_seconds / anchor);
}

static void print_figures(const struct several_schedule *s, const struct single_figures *single,
                          const struct several_figures *f)
{
	const struct several_options *o = &f->options;
	const struct measured_epoch *first = &f->first, *steady = &f->steady;
	int has_steady = f->churned && steady->run.served_count == SEVERAL_N;
	double anchor = single->publish_seconds;
	char network[256], what[128];
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	network_text(o, network, sizeof network);

	printf(
	    "\nbench_several: %d authorities (k = %d) on one machine of %ld cores, each with its own "
	    "dirauthd, "
	    "dirauth-signer and store, peer links through fault proxies in the bench process (%s); %zu "
	    "records, %zu of them (%u%%) given to 3 authorities only; epochs of %llu s (prepare %llu, vote "
	    "%llu, signature %llu), %s\n",
	    SEVERAL_N, SEVERAL_K, cores, network, o->records, f->partial, o->partial_percent,
	    (unsigned long long)s->length, (unsigned long long)s->prepare, (unsigned long long)s->vote,
	    (unsigned long long)s->signature,
	    o->real_schedule ? "clocks at real speed through the windows"
	                     : "clocks held at vote_at while the phases run");
	printf("load average (1, 5, 15 min): %s after the 5 authorities published, %s after the single one\n",
	       first->load, single->load);
	printf("ingest (setup, not in the figures below): 5 authorities %zu registrations (202) in %.1f s, "
	       "%.0f /s; single authority %zu in %.1f s, %.0f /s: ratio %.2fx\n",
	       f->posted, f->ingest_seconds, (double)f->posted / f->ingest_seconds, single->posted,
	       single->ingest_seconds, (double)single->posted / single->ingest_seconds,
	       ((double)f->posted / f->ingest_seconds) / ((double)single->posted / single->ingest_seconds));

	double phase_median[SEVERAL_PHASES], steady_phases[SEVERAL_PHASES];
	snprintf(what, sizeof what, "%zu records", o->records);
	print_epoch(first, what, anchor, phase_median);
	print_sent(first, "per epoch");

	if (f->churned && !has_steady)
		printf(
		    "\nsteady state: epoch %llu was not published by all 5 within its windows: no figures\n",
		    (unsigned long long)steady->run.epoch);
	if (has_steady) {
		printf(
		    "\nsteady state: epoch %llu after %zu of the %zu services (%u%%) registered sequence 2 "
		    "(%zu of them with 3 authorities only; %zu registrations (202) in %.1f s); "
		    "load average %s\n",
		    (unsigned long long)steady->run.epoch, f->churned, o->records, o->churn_percent,
		    f->churn_partial, f->churn_posted, f->churn_ingest_seconds, steady->load);
		snprintf(what, sizeof what, "steady state, %u%% churn", o->churn_percent);
		print_epoch(steady, what, anchor, steady_phases);
		print_sent(steady, "in the steady state");
	}
	char memory[64], memory_sum[64];
	harness_format_bytes((double)f->memory_largest, memory, sizeof memory);
	harness_format_bytes((double)f->memory_sum, memory_sum, sizeof memory_sum);
	printf("memory: peak resident set of a dirauthd %s (largest of 5; %s together)\n", memory,
	       memory_sum);

	/* The whole in one line. */
	char sent_text[64], requests_text[64], answers_text[64];
	double median, max, values[CLUSTER_MAX_AUTHORITIES];
	size_t n = first->run.n;
	sent_median_max(first, n, &median, &max);
	harness_format_bytes(median, sent_text, sizeof sent_text);
	for (size_t i = 0; i < n; i++)
		values[i] = (double)first->sent.requests[i];
	median_max(values, n, &median, &max);
	harness_format_bytes(median, requests_text, sizeof requests_text);
	for (size_t i = 0; i < n; i++)
		values[i] = (double)first->sent.answers[i];
	median_max(values, n, &median, &max);
	harness_format_bytes(median, answers_text, sizeof answers_text);
	printf("\nsummary: 5 authorities, %zu records: vote_at to published %.2f s (max over 5), single "
	       "authority %.2f s: ratio %.1fx; phases (median):",
	       o->records, first->run.total_seconds, anchor, first->run.total_seconds / anchor);
	for (size_t p = 0; p < SEVERAL_PHASES; p++)
		printf("%s %s %.2f s (%.0f%%)", p ? "," : "", phase_short[p], phase_median[p],
		       100 * phase_median[p] / first->run.total_seconds);
	printf("; sent per authority per epoch: %s (median; its requests %s, its answers %s)", sent_text,
	       requests_text, answers_text);
	if (has_steady) {
		char zstd[64];
		sent_median_max(steady, n, &median, &max);
		harness_format_bytes(median, sent_text, sizeof sent_text);
		harness_format_bytes((double)steady->body_zstd_len, zstd, sizeof zstd);
		printf("; steady state (%u%% churn): vote_at to published %.2f s, sent per authority %s "
		       "against the zstd body's %s: ratio %.2fx (target at most 0.5x)",
		       o->churn_percent, steady->run.total_seconds, sent_text, zstd,
		       median / (double)steady->body_zstd_len);
	}
	printf("; load average %s; %s\n", first->load, network);
}

/* The median over the authorities of an epoch of the time spent in the steps that talk to peers
 * (the vote's push and pulls, the notes' fetch and check, the signature's push and pulls) and in
 * those that only compute and store (the vote's build, the consensus, the publication). */
static void step_medians(const struct measured_epoch *m, double *talking, double *computing)
{
	double talk[CLUSTER_MAX_AUTHORITIES] = {0}, compute[CLUSTER_MAX_AUTHORITIES] = {0}, max;
	for (size_t i = 0; i < m->run.n; i++) {
		const struct authority_run *a = &m->run.a[i];
		talk[i] = (double)(a->push_ms + a->votes_pulled_ms + a->fetch_ms + a->sign_push_ms +
		                   a->signatures_pulled_ms) /
		          1e3;
		compute[i] = (double)(a->build_ms + a->consensus_ms + a->stored_ms) / 1e3;
	}
	median_max(talk, m->run.n, talking, &max);
	median_max(compute, m->run.n, computing, &max);
}

/* --against-loopback: the time the links add to an epoch, in seconds and in round trips. */
static void print_against_loopback(const struct several_figures *loopback, const struct several_figures *f)
{
	const struct several_options *o = &f->options;
	char network[256];
	network_text(o, network, sizeof network);
	double round_trip = 2.0 * o->delay_ms / 1e3;
	printf("\nagainst loopback: the same run's 5 authorities on loopback (no delay, no bandwidth cap, "
	       "plain HTTP) are the anchor; the measured run's %s; a round trip is 2 x %u ms (the delay "
	       "each way, without the jitter)\n",
	       network, o->delay_ms);
	const struct measured_epoch *pairs[2][2] = {{&loopback->first, &f->first},
	                                            {&loopback->steady, &f->steady}};
	for (size_t e = 0; e < 2; e++) {
		const struct measured_epoch *anchor = pairs[e][0], *measured = pairs[e][1];
		if (e == 1 && !f->churned)
			break;
		char what[96];
		if (e == 0)
			snprintf(what, sizeof what, "%zu records published", o->records);
		else
			snprintf(what, sizeof what, "steady state, %u%% churn", o->churn_percent);
		if (anchor->run.served_count != SEVERAL_N || measured->run.served_count != SEVERAL_N) {
			printf("  %s: not published by all 5 in one of the runs: no comparison\n", what);
			continue;
		}
		double longer = measured->run.total_seconds - anchor->run.total_seconds;
		char trips[96] = "no delay: no round trips";
		if (round_trip > 0)
			snprintf(trips, sizeof trips, "%.1f round trips of %.0f ms", longer / round_trip,
			         round_trip * 1e3);
		double median, max, anchor_median;
		sent_median_max(measured, measured->run.n, &median, &max);
		sent_median_max(anchor, anchor->run.n, &anchor_median, &max);
		char sent[64], anchor_sent[64];
		harness_format_bytes(median, sent, sizeof sent);
		harness_format_bytes(anchor_median, anchor_sent, sizeof anchor_sent);
		printf(
		    "  %s: vote_at to published by all 5 %.2f s on these links, %.2f s on loopback: %.2f s "
		    "longer, %s (target: at most 10 round trips, %.2f s); sent per authority %s, %s on "
		    "loopback\n",
		    what, measured->run.total_seconds, anchor->run.total_seconds, longer, trips,
		    10 * round_trip, sent, anchor_sent);
		/* The two runs share the machine with whatever else runs: the steps that compute move
		 * with its load, the steps that talk to peers with the links. */
		double talking, computing, anchor_talking, anchor_computing;
		step_medians(measured, &talking, &computing);
		step_medians(anchor, &anchor_talking, &anchor_computing);
		if (round_trip > 0)
			snprintf(trips, sizeof trips, "%.1f round trips",
			         (talking - anchor_talking) / round_trip);
		printf("    of which the steps that talk to peers (vote push and pulls, notes fetched and "
		       "checked, signature push and pulls; median of 5) %.2f s, %.2f s on loopback: %.2f s "
		       "longer, %s; the steps that compute and store (vote build, consensus, publication) "
		       "%.2f s, %.2f s on loopback: %+.2f s, with the load average %s, %s on loopback\n",
		       talking, anchor_talking, talking - anchor_talking, trips, computing, anchor_computing,
		       computing - anchor_computing, measured->load, anchor->load);
	}
}

/* --real-schedule: for each epoch, whether all five published it and when each was ready. */
static void print_schedule_report(const struct several_schedule *s, const struct several_figures *f)
{
	const struct epoch_run *runs[3] = {&f->warm_up, &f->first.run, &f->steady.run};
	const char *const names[3] = {"warm-up", "measured", "steady state"};
	printf("\nreal schedule (votes due %llu s and signatures %llu s after vote_at, the epoch starts "
	       "at %llu s):\n",
	       (unsigned long long)s->vote, (unsigned long long)(s->vote + s->signature),
	       (unsigned long long)s->prepare);
	for (size_t r = 0; r < 3; r++) {
		const struct epoch_run *run = runs[r];
		if (!run->n)
			continue;
		printf("  epoch %llu (%s): %s by %zu of %zu; ready after vote_at:",
		       (unsigned long long)run->epoch, names[r],
		       run->served_count == run->n ? "published" : "NOT published by all: served",
		       run->served_count, run->n);
		for (size_t i = 0; i < run->n; i++) {
			const struct authority_run *a = &run->a[i];
			if (a->ready) {
				printf("%s authority%zu %.2f s", i ? "," : "", i, a->ready_at);
				continue;
			}
			char last[96] = "no vote";
			if (a->computed)
				snprintf(last, sizeof last, "computed and signed at %.2f s", a->computed_at);
			else if (a->voted)
				snprintf(last, sizeof last, "voted at %.2f s", a->voted_at);
			printf("%s authority%zu not ready (%s; %s)", i ? "," : "", i, last,
			       a->failure[0]   ? a->failure
			       : a->waiting[0] ? a->waiting
			                       : "nothing more logged");
		}
		printf("\n");
	}
}

/* --- the run ------------------------------------------------------------------------------ */

/* Measures the five with the options' network, printing the figures (or why there are none). */
static void run_several(const struct several_options *o, const struct several_schedule *s,
                        const struct single_figures *single, struct several_figures *f)
{
	measure_several(o, s, f);
	if (f->first.run.served_count == f->first.run.n)
		print_figures(s, single, f);
	else
		printf("\nbench_several: epoch %llu was not published by all 5 within its windows: no "
		       "figures\n",
		       (unsigned long long)f->first.run.epoch);
	if (o->real_schedule)
		print_schedule_report(s, f);
}

static void bench_run(void)
{
	const struct several_options *o = several_run_options;
	struct several_schedule schedule;
	schedule_for(o->records, &schedule);
	struct single_figures single;
	struct several_figures *several = calloc(1, sizeof *several);
	struct several_figures *loopback = calloc(1, sizeof *loopback);
	ck_assert(several != NULL && loopback != NULL);
	memset(&single, 0, sizeof single);
	measure_single(o, &schedule, &single);
	printf("single authority: %zu records published %.2f s after the epoch's start\n", o->records,
	       single.publish_seconds);
	if (o->against_loopback) {
		struct several_options plain = *o;
		plain.delay_ms = plain.jitter_ms = plain.bandwidth_mbit = 0;
		plain.tls = 0;
		printf("the anchor: 5 authorities on loopback\n");
		run_several(&plain, &schedule, &single, loopback);
		printf("\nthe measured run: 5 authorities on the links of the options\n");
	}
	run_several(o, &schedule, &single, several);
	if (o->against_loopback)
		print_against_loopback(loopback, several);
	free(loopback);
	free(several);
}

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: bench_several [options]\n"
	        "  --records N           signed registrations of distinct services (default 10000)\n"
	        "  --partial-percent P   share of them given to 3 of the 5 authorities only (default 10)\n"
	        "  --threads M           client threads posting them (default 8, at most 32)\n"
	        "  --stage-seconds S     real time each stage of the epoch may take before the clock\n"
	        "                        moves to the next deadline (default 60 + 2 ms per record)\n"
	        "  --delay-ms D          every peer link's one-way delay (default 0)\n"
	        "  --jitter-ms J         plus a uniform draw in [0, J] per chunk (default 0)\n"
	        "  --bandwidth-mbit B    every peer link's bandwidth per direction (default: no cap)\n"
	        "  --tls                 each authority behind its own nginx running the shipped\n"
	        "                        deploy/nginx/dirauthd-proxy.conf, peers over https\n"
	        "  --real-schedule       the clocks run at real speed through each epoch's windows\n"
	        "                        instead of being held at vote_at\n"
	        "  --churn-percent C     after the measured epoch, C%% of the services register anew\n"
	        "                        and one more epoch is measured: the steady state (default 5;\n"
	        "                        0: no such epoch)\n"
	        "  --against-loopback    measure the five on loopback first (no delay, no cap, plain\n"
	        "                        HTTP), then with the network options, and print how much\n"
	        "                        longer the epochs took, in seconds and round trips\n");
}

/* --stage-seconds: a whole number of seconds, up to a day. */
static int take_stage_seconds(void *stage_seconds, const char *value)
{
	size_t seconds = 0;
	if (harness_parse_count(value, 1, 86400, &seconds) != 0)
		return -1;
	*(double *)stage_seconds = (double)seconds;
	return 0;
}

static int parse_options(int argc, char **argv, struct several_options *o)
{
	const struct harness_option options[] = {
	    HARNESS_OPTION_COUNT("--records", &o->records, 1, SEVERAL_MAX_RECORDS),
	    HARNESS_OPTION_UNSIGNED("--partial-percent", &o->partial_percent, 0, 100),
	    HARNESS_OPTION_UNSIGNED("--threads", &o->threads, 1, CLUSTER_REGISTER_THREADS_MAX),
	    HARNESS_OPTION_CALL("--stage-seconds", take_stage_seconds, &o->stage_seconds),
	    HARNESS_OPTION_UNSIGNED("--delay-ms", &o->delay_ms, 0, SEVERAL_MAX_DELAY_MS),
	    HARNESS_OPTION_UNSIGNED("--jitter-ms", &o->jitter_ms, 0, SEVERAL_MAX_DELAY_MS),
	    HARNESS_OPTION_UNSIGNED("--bandwidth-mbit", &o->bandwidth_mbit, 0, SEVERAL_MAX_MBIT),
	    HARNESS_OPTION_FLAG("--tls", &o->tls),
	    HARNESS_OPTION_FLAG("--real-schedule", &o->real_schedule),
	    HARNESS_OPTION_UNSIGNED("--churn-percent", &o->churn_percent, 0, 100),
	    HARNESS_OPTION_FLAG("--against-loopback", &o->against_loopback),
	};
	memset(o, 0, sizeof *o);
	o->records = 10000;
	o->partial_percent = 10;
	o->threads = 8;
	o->churn_percent = 5;
	if (harness_parse_options("bench_several", argc, argv, options, sizeof(options) / sizeof(options[0]),
	                          NULL, usage) != 0)
		return -1;
	if (o->stage_seconds == 0)
		o->stage_seconds = 60 + (double)o->records * 0.002;
	return 0;
}

int main(int argc, char **argv)
{
	struct several_options options;
	if (parse_options(argc, argv, &options) != 0)
		return 2;
	if (options.tls && !cluster_nginx_installed()) {
		printf("bench_several: --tls needs nginx (scripts/install-test-tools.sh): skipped\n");
		return SEVERAL_SKIPPED;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		fprintf(stderr, "bench_several: curl_global_init failed\n");
		return 1;
	}
	several_run_options = &options;
	/* Ingest, the clusters and their epochs, with room: the stages are bounded by stage_seconds
	 * (with the real schedule, by the windows of the epochs). */
	double clusters = options.against_loopback ? 3 : 2;
	int failed =
	    cluster_run_alone("bench_several", bench_run,
	                      clusters * (300 + options.stage_seconds * 8 + (double)options.records * 0.02));
	curl_global_cleanup();
	return failed ? 1 : 0;
}
