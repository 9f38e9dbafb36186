/*
 * bench_mirror.c: a mirror following one authority epoch after epoch with `dirauthctl fetch`,
 * which asks for each new body as a diff from the body it holds (ctl/fetch.h, libdirauth's base), against the
 * same mirror fetching each body whole, measured on the same epochs in the same run.
 *
 * The run: dirauth-signer and dirauthd on loopback (harness.h, file clock); N services registered
 * and the first epoch published; a trust bundle pinning the authority's identity key; one
 * `dirauthctl fetch --out MIRROR` (the real binary, a whole body: nothing is held yet). Then, for
 * each of E epochs: C% of the services registered again at a new sequence (their records
 * replaced; the share moves on through the services, wrapping), the clock moved to the epoch the
 * receipts promised, and the bench waits until its header is served, the diff from the previous
 * body is served (GET .../diff/<sha256 of the previous body> with Accept-Encoding: zstd answers
 * 200) and dirauthd has logged that the epoch's diffs are all built (so that no diff building
 * runs beside the fetches). Then:
 *
 *   - the anchor's bytes: GET .../body with Accept-Encoding: zstd, what a mirror without diffs
 *     downloads for the body;
 *   - the anchor's fetch: `dirauthctl fetch` into a fresh directory holding only the mirror's
 *     latest.header (the previous epoch's header) and not its body. That fetch does what the
 *     mirror's does (the header, the certificate bundle, the history check of one epoch, the
 *     whole verification of the body, the files) but must take the body whole (its output says
 *     "body: fetched whole (the held body is not kept)"): the same work but for the diff;
 *   - the mirror's fetch: `dirauthctl fetch --out MIRROR`, whose output must say "body: rebuilt
 *     from a diff of B bytes against the body of epoch E-1"; B is the figure, and must equal the
 *     size of the diff the bench got as zstd;
 *   - both fetched bodies must equal the body dirauthd serves as identity (GET .../body), byte for
 *     byte (each fetch has also verified its body against the co-signed header).
 *
 * The CPU time of each fetch is its child's (wait4 rusage, user + system): the mirror's work, not
 * the server's. The mirror keeps only its latest body (the bench removes the older one once the
 * new one is held), as a mirror following a namespace would; the anchor's directory is removed
 * after each epoch. The bytes compared are those of the body alone; the header, certificates and
 * history, the same for both, are not counted.
 */
#include "bench/harness.h"

#include "schema/encoding.h"
#include "signer/key.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BENCH_SNAPSHOT_SECONDS 1800.0
#define BENCH_DIFF_SECONDS     600.0 /* for the diff to be served and the epoch's diffs built */
#define BENCH_FETCH_SECONDS    1800.0

struct options {
	char dirauthd[PATH_MAX];
	char signer[PATH_MAX];
	const char *dirauthctl;
	char dirauthctl_default[PATH_MAX];
	size_t records;
	size_t epochs;
	unsigned churn_percent;
	unsigned threads;
};

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: bench_mirror [options]\n"
	    "  --dirauthd PATH      the dirauthd binary (default: ../server/dirauthd next to this program)\n"
	    "  --signer PATH        the dirauth-signer binary (default: ../signer/dirauth-signer)\n"
	    "  --dirauthctl PATH    the dirauthctl binary (default: ../ctl/dirauthctl)\n"
	    "  --records N          services registered (default 100000)\n"
	    "  --epochs E           epochs the mirror follows after the first (default 100)\n"
	    "  --churn-percent C    services registered again each epoch (default 1, at least one)\n"
	    "  --threads M          client threads posting registrations (default 32)\n"
	    "  --temp-dir DIR       where the temporary directories go (default $TMPDIR or /tmp)\n");
}

static int parse_options(int argc, char **argv, struct options *o, struct harness *harness)
{
	const struct harness_program_options programs = {
	    .dirauthd = o->dirauthd, .signer = o->signer, .temp_parent = &harness->temp_parent};
	const struct harness_option options[] = {
	    HARNESS_OPTION_TEXT("--dirauthctl", &o->dirauthctl),
	    HARNESS_OPTION_COUNT("--records", &o->records, 1, 10000000),
	    HARNESS_OPTION_COUNT("--epochs", &o->epochs, 1, 100000),
	    HARNESS_OPTION_UNSIGNED("--churn-percent", &o->churn_percent, 1, 100),
	    HARNESS_OPTION_UNSIGNED("--threads", &o->threads, 1, HARNESS_MAX_THREADS),
	};
	memset(o, 0, sizeof(*o));
	harness_program_defaults(&programs);
	harness_default_program("ctl/dirauthctl", o->dirauthctl_default);
	o->dirauthctl = o->dirauthctl_default;
	o->records = 100000;
	o->epochs = 100;
	o->churn_percent = 1;
	o->threads = 32;
	if (harness_parse_options("bench_mirror", argc, argv, options, sizeof(options) / sizeof(options[0]),
	                          &programs, usage) != 0)
		return -1;
	if (harness_programs_check("bench_mirror", o->dirauthd, o->signer) != 0)
		return -1;
	if (access(o->dirauthctl, X_OK) != 0) {
		fprintf(stderr, "bench_mirror: no dirauthctl at %s (build it, or pass --dirauthctl)\n",
		        o->dirauthctl);
		return -1;
	}
	return 0;
}

/* The whole of a file into out (reset first). */
static int read_file(const char *path, struct buffer *out)
{
	buffer_reset(out);
	FILE *file = fopen(path, "rb");
	if (!file) {
		harness_fail("cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	uint8_t chunk[65536];
	size_t n;
	int rc = 0;
	while (rc == 0 && (n = fread(chunk, 1, sizeof(chunk), file)) > 0)
		rc = buffer_append(out, chunk, n);
	if (rc == 0 && ferror(file))
		rc = -1;
	fclose(file);
	if (rc != 0)
		harness_fail("cannot read %s", path);
	return rc == 0 ? 0 : -1;
}

/* A trust bundle pinning the authority's identity key (the example key the harness certified the
 * signing key with), threshold 1: what the mirror's operator writes. */
static int write_trust_bundle(const struct harness_authority *authority, const char *path)
{
	char key_path[PATH_MAX + 64], verifier[NOTE_VERIFIER_KEY_MAX + 1];
	struct signer_key *identity = NULL;
	snprintf(key_path, sizeof(key_path), "%s/keys/authority1-identity.key", authority->dir);
	if (signer_key_load(key_path, &identity) != 0) {
		harness_fail("cannot load %s", key_path);
		return -1;
	}
	note_verifier_format(signer_key_verifier(identity), verifier);
	signer_key_free(identity);
	char text[NOTE_VERIFIER_KEY_MAX + 256];
	int len = snprintf(text, sizeof(text),
	                   "dirauth trust v1\n"
	                   "namespace " HARNESS_NAMESPACE " dirauth.example/" HARNESS_NAMESPACE "\n"
	                   "authority %s\n"
	                   "threshold 1\n",
	                   verifier);
	return harness_write_file(path, text, (size_t)len, 0644);
}

/* One run of `dirauthctl fetch`: what it printed about the body, and its usage. */
struct fetch_run {
	struct harness_usage usage;
	int from_diff;       /* "body: rebuilt from a diff of ..." */
	int whole_said;      /* "body: fetched whole (...)" */
	size_t diff_bytes;   /* when from_diff */
	uint64_t base;       /* the epoch of the diff's base, when from_diff */
	char whole_why[256]; /* when whole_said */
};

/* Runs dirauthctl fetch into out_dir at the authority's clock, its stdout and stderr into the
 * file output, and reads what it said about the body. A fetch that does not exit 0 fails. */
static int run_fetch(struct harness *harness, const struct options *o,
                     const struct harness_authority *authority, const char *bundle, const char *out_dir,
                     const char *output, struct fetch_run *run)
{
	char now[32];
	snprintf(now, sizeof(now), "%" PRIu64, authority->now);
	/* sh execs dirauthctl in its place (so the rusage is the fetch's) with stderr on stdout, so
	 * that a refusal is kept in the output file. */
	char *argv[] = {"/bin/sh",
	                "-c",
	                "exec \"$0\" \"$@\" 2>&1",
	                (char *)o->dirauthctl,
	                "fetch",
	                "--trust",
	                (char *)bundle,
	                "--server",
	                (char *)authority->url,
	                "--namespace",
	                HARNESS_NAMESPACE,
	                "--out",
	                (char *)out_dir,
	                "--now",
	                now,
	                NULL};
	memset(run, 0, sizeof(*run));
	if (harness_run(harness, argv, NULL, output, BENCH_FETCH_SECONDS, &run->usage) != 0)
		return -1;
	FILE *file = fopen(output, "r");
	char line[1024];
	while (file && fgets(line, sizeof(line), file)) {
		unsigned long long base = 0;
		size_t bytes = 0;
		if (sscanf(line, "body: rebuilt from a diff of %zu bytes against the body of epoch %llu",
		           &bytes, &base) == 2) {
			run->from_diff = 1;
			run->diff_bytes = bytes;
			run->base = base;
		} else if (strncmp(line, "body: fetched whole (", 21) == 0) {
			run->whole_said = 1;
			snprintf(run->whole_why, sizeof(run->whole_why), "%.*s",
			         (int)strcspn(line + 21, ")\n"), line + 21);
		}
	}
	if (file)
		fclose(file);
	if (run->usage.exit_status != 0) {
		harness_fail("dirauthctl fetch --out %s exited with %d; it said:", out_dir,
		             run->usage.exit_status);
		file = fopen(output, "r");
		while (file && fgets(line, sizeof(line), file))
			fprintf(stderr, "  %s", line);
		if (file)
			fclose(file);
		return -1;
	}
	return 0;
}

/* What the bench waits for in dirauthd's log: "diffs of epoch E: ...". */
struct diffs_logged {
	char needle[64];
	int seen;
};

static void on_log_line(void *context, const char *line)
{
	struct diffs_logged *wait = context;
	if (strstr(line, wait->needle))
		wait->seen = 1;
}

/* Waits until dirauthd serves the diff of epoch from base_sha256 as zstd (200), and has logged the
 * epoch's diffs. *diff_bytes gets the size of the diff as served. */
static int wait_for_diff(struct harness_authority *authority, struct harness_tail *tail, uint64_t epoch,
                         const uint8_t base_sha256[32], size_t *diff_bytes)
{
	char hex[65], url[256];
	hex_encode(base_sha256, 32, hex);
	snprintf(url, sizeof(url), "%s/v1/%s/snapshots/%" PRIu64 "/diff/%s", authority->url,
	         HARNESS_NAMESPACE, epoch, hex);
	struct diffs_logged wait = {.seen = 0};
	snprintf(wait.needle, sizeof(wait.needle), "diffs of epoch %" PRIu64 ":", epoch);
	struct buffer body;
	buffer_init(&body);
	double deadline = harness_now() + BENCH_DIFF_SECONDS;
	int served = 0;
	long status = 0;
	char encoding[64] = "";
	while (harness_now() < deadline && !harness_stopped(authority->harness)) {
		if (!served) {
			buffer_reset(&body);
			encoding[0] = 0;
			if (harness_http(url, "Accept-Encoding: zstd", NULL, &status, &body, encoding,
			                 sizeof(encoding)) == 0 &&
			    status == 200) {
				if (strcmp(encoding, "zstd") != 0) {
					harness_fail("%s: served as \"%s\", not zstd", url, encoding);
					break;
				}
				served = 1;
				*diff_bytes = body.len;
			}
		}
		if (!wait.seen)
			harness_tail_read(tail, authority->dirauthd.log_path, on_log_line, &wait);
		if (served && wait.seen)
			break;
		harness_sleep_ms(20);
	}
	buffer_free(&body);
	if (served && wait.seen)
		return 0;
	if (!harness_stopped(authority->harness))
		harness_fail("epoch %" PRIu64 ": %s", epoch,
		             !served ? "the diff from the previous body was not served (last status below)"
		                     : "dirauthd did not log the epoch's diffs");
	if (!served)
		fprintf(stderr, "  GET %s: status %ld\n", url, status);
	return -1;
}

/* The body of epoch as dirauthd serves it with encoding (a header line), into out. */
static int get_body(const struct harness_authority *authority, uint64_t epoch, const char *accept,
                    const char *expected_encoding, struct buffer *out)
{
	char url[256], encoding[64] = "";
	long status = 0;
	snprintf(url, sizeof(url), "%s/v1/%s/snapshots/%" PRIu64 "/body", authority->url, HARNESS_NAMESPACE,
	         epoch);
	buffer_reset(out);
	if (harness_http(url, accept, NULL, &status, out, encoding, sizeof(encoding)) != 0 || status != 200 ||
	    strcmp(encoding, expected_encoding) != 0) {
		harness_fail("GET %s (%s): status %ld, encoding \"%s\"", url, accept, status, encoding);
		return -1;
	}
	return 0;
}

/* The body file a fetch kept in directory must be the identity body, byte for byte. */
static int check_kept_body(const char *directory, uint64_t epoch, const struct buffer *identity,
                           struct buffer *scratch)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof(path), "%s/%s/%" PRIu64 ".body", directory, HARNESS_NAMESPACE, epoch);
	if (read_file(path, scratch) != 0)
		return -1;
	if (scratch->len != identity->len || memcmp(scratch->data, identity->data, identity->len) != 0) {
		harness_fail("%s (%zu bytes) is not the body dirauthd serves (%zu bytes)", path, scratch->len,
		             identity->len);
		return -1;
	}
	return 0;
}

/* A fresh directory for the anchor's fetch holding only the mirror's latest.header. */
static int prepare_whole_directory(const char *mirror, const char *whole)
{
	char from[PATH_MAX + 64], to[PATH_MAX + 64];
	struct buffer header;
	buffer_init(&header);
	harness_remove_tree(whole);
	snprintf(to, sizeof(to), "%s/%s", whole, HARNESS_NAMESPACE);
	if (mkdir(whole, 0755) != 0 || mkdir(to, 0755) != 0) {
		harness_fail("cannot make %s: %s", to, strerror(errno));
		return -1;
	}
	snprintf(from, sizeof(from), "%s/%s/latest.header", mirror, HARNESS_NAMESPACE);
	snprintf(to, sizeof(to), "%s/%s/latest.header", whole, HARNESS_NAMESPACE);
	int rc = read_file(from, &header) == 0 && harness_write_file(to, header.data, header.len, 0644) == 0
	             ? 0
	             : -1;
	buffer_free(&header);
	return rc;
}

static double cpu_of(const struct harness_usage *usage)
{
	return usage->user + usage->system;
}

int main(int argc, char **argv)
{
	struct harness harness;
	struct options o;
	struct harness_authority authority;
	struct buffer identity, zstd_body, scratch;
	int rc = 1;
	memset(&harness, 0, sizeof(harness));
	memset(&authority, 0, sizeof(authority));
	buffer_init(&identity);
	buffer_init(&zstd_body);
	buffer_init(&scratch);
	if (parse_options(argc, argv, &o, &harness) != 0)
		return 2;
	if (harness_start(&harness) != 0)
		goto done;
	struct harness_authority_options authority_options = {
	    .dirauthd = o.dirauthd, .signer = o.signer, .connections = o.threads};
	if (harness_authority_prepare(&harness, &authority_options, &authority) != 0 ||
	    harness_authority_start(&authority) != 0)
		goto cleanup;

	char bundle[HARNESS_DIR_MAX + 64], mirror[HARNESS_DIR_MAX + 64], whole[HARNESS_DIR_MAX + 64],
	    output[HARNESS_DIR_MAX + 64];
	snprintf(bundle, sizeof(bundle), "%s/trust-bundle.txt", authority.dir);
	snprintf(mirror, sizeof(mirror), "%s/mirror", authority.dir);
	snprintf(whole, sizeof(whole), "%s/whole", authority.dir);
	snprintf(output, sizeof(output), "%s/fetch.out", authority.dir);
	if (write_trust_bundle(&authority, bundle) != 0)
		goto cleanup;

	uint64_t epoch = 0;
	printf("building and posting %zu registrations...\n", o.records);
	fflush(stdout);
	if (harness_register(&authority, 0, o.records, 1, o.threads, &epoch) != 0)
		goto cleanup;
	struct snapshot_header previous, header;
	if (harness_set_clock(&authority, epoch * authority.epoch_length) != 0 ||
	    harness_wait_snapshot(&authority, epoch, o.records, BENCH_SNAPSHOT_SECONDS, &previous) != 0)
		goto cleanup;
	struct fetch_run first;
	if (run_fetch(&harness, &o, &authority, bundle, mirror, output, &first) != 0)
		goto cleanup;
	if (first.from_diff) {
		harness_fail("the first fetch, holding nothing, says it took a diff");
		goto cleanup;
	}
	size_t share = o.records * o.churn_percent / 100;
	share = share ? share : 1;
	char text[32];
	harness_format_bytes((double)previous.body_size, text, sizeof(text));
	printf("epoch %" PRIu64 ": %zu records, a body of %s; the mirror's first fetch (whole) took %.2f s, "
	       "%.2f s of CPU\n",
	       previous.epoch, o.records, text, first.usage.wall, cpu_of(&first.usage));
	printf("then %zu epochs, each re-registering %zu services (%u%%) before the clock moves on\n\n",
	       o.epochs, share, o.churn_percent);
	printf("%8s %10s %11s %7s %8s %9s %6s %9s %10s  %s\n", "epoch", "diff B", "zstd body B", "bytes",
	       "CPU diff", "CPU whole", "CPU", "wall diff", "wall whole", "load average");

	struct harness_tail tail;
	memset(&tail, 0, sizeof(tail));
	uint64_t total_diff = 0, total_whole = 0;
	size_t smallest = SIZE_MAX, largest = 0;
	double cpu_diff = 0, cpu_whole = 0, wall_diff = 0, wall_whole = 0;
	long peak_diff_kib = 0, peak_whole_kib = 0; /* the largest resident set of either fetch */
	size_t next = 0;                            /* the first service of the next share */
	size_t done_epochs = 0;
	for (size_t i = 1; i <= o.epochs && !harness_stopped(&harness); i++) {
		uint64_t promised = 0;
		size_t count = share <= o.records - next ? share : o.records - next;
		if (harness_register(&authority, next, count, i + 1, o.threads, &promised) != 0)
			goto stopped;
		if (count < share &&
		    harness_register(&authority, 0, share - count, i + 1, o.threads, &promised) != 0)
			goto stopped;
		next = (next + share) % o.records;
		epoch = promised;
		size_t served_diff = 0;
		if (harness_set_clock(&authority, epoch * authority.epoch_length) != 0 ||
		    harness_wait_snapshot(&authority, epoch, o.records, BENCH_SNAPSHOT_SECONDS, &header) !=
		        0 ||
		    wait_for_diff(&authority, &tail, header.epoch, previous.body_sha256, &served_diff) != 0 ||
		    get_body(&authority, header.epoch, "Accept-Encoding: zstd", "zstd", &zstd_body) != 0)
			goto stopped;

		/* The anchor: the same fetch from the previous header, without its body. */
		struct fetch_run anchor, follow;
		if (prepare_whole_directory(mirror, whole) != 0 ||
		    run_fetch(&harness, &o, &authority, bundle, whole, output, &anchor) != 0)
			goto stopped;
		if (anchor.from_diff || !anchor.whole_said) {
			harness_fail("epoch %" PRIu64
			             ": the anchor's fetch did not say it fetched the body whole",
			             header.epoch);
			goto stopped;
		}
		if (run_fetch(&harness, &o, &authority, bundle, mirror, output, &follow) != 0)
			goto stopped;
		if (!follow.from_diff || follow.base != previous.epoch) {
			harness_fail(
			    "epoch %" PRIu64 ": the mirror did not rebuild the body from a diff against "
			    "epoch %" PRIu64 "%s%s",
			    header.epoch, previous.epoch, follow.whole_said ? ": fetched whole, " : "",
			    follow.whole_said ? follow.whole_why : "");
			goto stopped;
		}
		if (follow.diff_bytes != served_diff) {
			harness_fail("epoch %" PRIu64
			             ": dirauthctl says a diff of %zu bytes, dirauthd served %zu as zstd",
			             header.epoch, follow.diff_bytes, served_diff);
			goto stopped;
		}
		if (get_body(&authority, header.epoch, "Accept-Encoding: identity", "", &identity) != 0 ||
		    check_kept_body(mirror, header.epoch, &identity, &scratch) != 0 ||
		    check_kept_body(whole, header.epoch, &identity, &scratch) != 0)
			goto stopped;
		/* The mirror keeps its latest body only: the one the next diff applies to. */
		char old[PATH_MAX + 96];
		snprintf(old, sizeof(old), "%s/%s/%" PRIu64 ".body", mirror, HARNESS_NAMESPACE,
		         previous.epoch);
		unlink(old);
		harness_remove_tree(whole);

		char load[64];
		harness_load_average(load);
		printf("%8" PRIu64 " %10zu %11zu %6.2f%% %7.2fs %8.2fs %5.3fx %8.2fs %9.2fs  %s\n",
		       header.epoch, follow.diff_bytes, zstd_body.len,
		       100.0 * (double)follow.diff_bytes / (double)zstd_body.len, cpu_of(&follow.usage),
		       cpu_of(&anchor.usage), cpu_of(&follow.usage) / cpu_of(&anchor.usage),
		       follow.usage.wall, anchor.usage.wall, load);
		fflush(stdout);
		total_diff += follow.diff_bytes;
		total_whole += zstd_body.len;
		smallest = follow.diff_bytes < smallest ? follow.diff_bytes : smallest;
		largest = follow.diff_bytes > largest ? follow.diff_bytes : largest;
		cpu_diff += cpu_of(&follow.usage);
		cpu_whole += cpu_of(&anchor.usage);
		wall_diff += follow.usage.wall;
		wall_whole += anchor.usage.wall;
		peak_diff_kib =
		    follow.usage.peak_rss_kib > peak_diff_kib ? follow.usage.peak_rss_kib : peak_diff_kib;
		peak_whole_kib =
		    anchor.usage.peak_rss_kib > peak_whole_kib ? anchor.usage.peak_rss_kib : peak_whole_kib;
		previous = header;
		done_epochs++;
	}
stopped:
	/* Interrupted (SIGINT, SIGTERM or SIGHUP) after some epochs: their figures, then status 1. */
	if (done_epochs == 0 || (done_epochs < o.epochs && !harness_stopped(&harness)))
		goto cleanup;
	if (done_epochs < o.epochs)
		printf("\ninterrupted after %zu of %zu epochs\n", done_epochs, o.epochs);

	double n = (double)done_epochs;
	char diff_text[32], whole_text[32];
	harness_format_bytes((double)total_diff, diff_text, sizeof(diff_text));
	harness_format_bytes((double)total_whole, whole_text, sizeof(whole_text));
	printf(
	    "\nsummary: a mirror following %zu epochs of %zu records at %u%% churn (%zu services an epoch)\n",
	    done_epochs, o.records, o.churn_percent, share);
	printf("  body bytes downloaded: %s as diffs against %s as whole zstd bodies of the same epochs: "
	       "%.2f%% (target: at most 5%%); diffs of %zu to %zu bytes\n",
	       diff_text, whole_text, 100.0 * (double)total_diff / (double)total_whole, smallest, largest);
	printf("  fetch CPU per epoch: %.3f s with the diff against %.3f s whole: %.3fx; wall %.3f s against "
	       "%.3f s: %.3fx\n",
	       cpu_diff / n, cpu_whole / n, cpu_diff / cpu_whole, wall_diff / n, wall_whole / n,
	       wall_diff / wall_whole);
	printf("  fetch peak memory (resident): %.1f MiB with the diff, %.1f MiB whole, for a body of %.1f "
	       "MiB\n",
	       (double)peak_diff_kib / 1024.0, (double)peak_whole_kib / 1024.0,
	       (double)previous.body_size / (1024.0 * 1024.0));
	printf("  every body fetched, from a diff and whole, is byte for byte the body dirauthd serves\n");
	rc = done_epochs == o.epochs ? 0 : 1;
cleanup:
	harness_authority_stop(&authority);
done:
	buffer_free(&identity);
	buffer_free(&zstd_body);
	buffer_free(&scratch);
	harness_finish(&harness);
	if (rc != 0)
		fprintf(stderr, "bench: FAILED\n");
	return rc;
}
