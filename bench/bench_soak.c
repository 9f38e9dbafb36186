/*
 * bench_soak.c: many epochs of one authority under churn, showing whether the store's size and
 * dirauthd's memory level off.
 *
 * The store keeps every header for ever (they are the transparency log's leaves) but a body only
 * for the retention window, a replaced registration only while a sealed epoch still needs it, and
 * LMDB reuses freed pages; so under steady churn the map in use, the data file and the body files
 * on disk must stop growing after the first few windows, and the peak RSS must stay where the
 * first publications put it. This program shows it: N registrations, then E epochs on a fast
 * file clock, each re-registering P% of the records (the next share in rotation, sequence + 1,
 * so the store replaces and frees) before the clock moves to the next epoch and the bench waits
 * for its header, which must hold all N records. Every K epochs (and at the first and last) it
 * prints the epoch, the publication time, LMDB's map in use (dirauthd's gauge), the data file,
 * the body files on disk, and dirauthd's peak and current RSS against the uncompressed body. It
 * ends with the growth of each over the second half of the run.
 *
 * Defaults are short (10,000 records, 20 epochs); --full is the soak of bench/README.md
 * (100,000 records, 200 epochs); --records 100000 --epochs 50 is the memory figure over fifty
 * publications.
 */
#include "bench/harness.h"

#include "base/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BENCH_SNAPSHOT_SECONDS 1800.0

struct options {
	char dirauthd[PATH_MAX];
	char signer[PATH_MAX];
	size_t records;
	size_t epochs;
	size_t churn_percent;
	size_t every;
	unsigned threads;
};

/* What one epoch left. */
struct sample {
	uint64_t epoch;
	double publish_seconds;
	double map_used;
	uint64_t data_file, bodies, body_size;
	uint64_t peak_kib, rss_kib;
};

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: bench_soak [options]\n"
	    "  --dirauthd PATH     the dirauthd binary (default: ../server/dirauthd next to this program)\n"
	    "  --signer PATH       the dirauth-signer binary (default: ../signer/dirauth-signer)\n"
	    "  --records N         registrations kept in the namespace (default 10000)\n"
	    "  --epochs E          epochs published after the first (default 20)\n"
	    "  --churn P           percent of the records re-registered each epoch (default 5)\n"
	    "  --every K           print the sizes every K epochs (default 10)\n"
	    "  --full              100000 records, 200 epochs\n"
	    "  --threads M         client threads posting (default 32)\n"
	    "  --temp-dir DIR      where the temporary directories go (default $TMPDIR or /tmp)\n");
}

/* --full: the long run's sizes (a later --records or --epochs still counts). */
static int full_sizes(void *context, const char *value)
{
	struct options *o = context;
	(void)value;
	o->records = 100000;
	o->epochs = 200;
	return 0;
}

static int parse_options(int argc, char **argv, struct options *o, struct harness *harness)
{
	const struct harness_program_options programs = {
	    .dirauthd = o->dirauthd, .signer = o->signer, .temp_parent = &harness->temp_parent};
	const struct harness_option options[] = {
	    HARNESS_OPTION_ACTION("--full", full_sizes, o),
	    HARNESS_OPTION_COUNT("--records", &o->records, 1, 10000000),
	    HARNESS_OPTION_COUNT("--epochs", &o->epochs, 1, 100000),
	    HARNESS_OPTION_COUNT("--churn", &o->churn_percent, 0, 100),
	    HARNESS_OPTION_COUNT("--every", &o->every, 1, 100000),
	    HARNESS_OPTION_UNSIGNED("--threads", &o->threads, 1, HARNESS_MAX_THREADS),
	};
	memset(o, 0, sizeof(*o));
	harness_program_defaults(&programs);
	o->records = 10000;
	o->epochs = 20;
	o->churn_percent = 5;
	o->every = 10;
	o->threads = 32;
	if (harness_parse_options("bench_soak", argc, argv, options, sizeof(options) / sizeof(options[0]),
	                          &programs, usage) != 0)
		return -1;
	if (harness_programs_check("bench_soak", o->dirauthd, o->signer) != 0)
		return -1;
	return 0;
}

static int take_sample(struct harness_authority *authority, const struct snapshot_header *header,
                       double publish_seconds, struct sample *out)
{
	char path[PATH_MAX + 16];
	out->epoch = header->epoch;
	out->publish_seconds = publish_seconds;
	out->body_size = header->body_size;
	if (harness_metric(authority, "dirauth_store_used_bytes", &out->map_used) != 0)
		return -1;
	snprintf(path, sizeof(path), "%s/data.mdb", authority->data_dir);
	out->data_file = harness_file_size(path);
	snprintf(path, sizeof(path), "%s/bodies", authority->data_dir);
	out->bodies = harness_tree_bytes(path);
	out->peak_kib = harness_peak_rss_kib(authority->dirauthd.pid);
	out->rss_kib = harness_rss_kib(authority->dirauthd.pid);
	return 0;
}

static void print_sample(size_t index, const struct sample *s)
{
	char load[64];
	harness_load_average(load);
	printf("%6zu %10llu %9.2f %11.1f %11.1f %11.1f %9.1f %9.1f %7.2f  %s\n", index,
	       (unsigned long long)s->epoch, s->publish_seconds, s->map_used / 1048576,
	       (double)s->data_file / 1048576, (double)s->bodies / 1048576, (double)s->peak_kib / 1024,
	       (double)s->rss_kib / 1024,
	       (double)s->peak_kib * 1024 / (double)(s->body_size ? s->body_size : 1), load);
	fflush(stdout);
}

/* Growth of a figure from the middle of the run to its end, in percent. */
static double growth(double middle, double end)
{
	return middle > 0 ? 100 * (end - middle) / middle : 0;
}

int main(int argc, char **argv)
{
	struct harness harness;
	struct options o;
	struct harness_authority authority;
	struct sample *samples = NULL;
	int rc = 1;
	memset(&harness, 0, sizeof(harness));
	memset(&authority, 0, sizeof(authority));
	if (parse_options(argc, argv, &o, &harness) != 0)
		return 2;
	if (harness_start(&harness) != 0)
		goto done;
	samples = calloc(o.epochs + 1, sizeof(*samples));
	struct harness_authority_options authority_options = {
	    .dirauthd = o.dirauthd, .signer = o.signer, .connections = o.threads};
	if (!samples || harness_authority_prepare(&harness, &authority_options, &authority) != 0 ||
	    harness_authority_start(&authority) != 0)
		goto cleanup;

	uint64_t epoch = 0;
	printf("registering %zu services...\n", o.records);
	fflush(stdout);
	if (harness_register(&authority, 0, o.records, 1, o.threads, &epoch) != 0)
		goto cleanup;
	size_t share = o.records * o.churn_percent / 100;
	printf("then %zu epochs, each re-registering %zu records (%zu%%) before the clock moves on\n",
	       o.epochs, share, o.churn_percent);
	printf("%6s %10s %9s %11s %11s %11s %9s %9s %7s  %s\n", "epochs", "epoch", "publish", "map MiB",
	       "data.mdb", "bodies MiB", "peak MiB", "RSS MiB", "peak/b", "load average");
	size_t next = 0; /* the first record of the next share */
	for (size_t i = 0; i <= o.epochs; i++) {
		if (i > 0 && share > 0) {
			uint64_t promised = 0;
			size_t first = next;
			size_t count = share;
			if (first + count > o.records) /* the share wraps: take the rest, then start over */
				count = o.records - first;
			if (harness_register(&authority, first, count, i + 1, o.threads, &promised) != 0)
				goto cleanup;
			if (count < share &&
			    harness_register(&authority, 0, share - count, i + 1, o.threads, &promised) != 0)
				goto cleanup;
			next = (first + share) % o.records;
			epoch = promised;
		} else if (i > 0) {
			epoch++;
		}
		struct snapshot_header header;
		double start = harness_now();
		if (harness_set_clock(&authority, epoch * authority.epoch_length) != 0 ||
		    harness_wait_snapshot(&authority, epoch, o.records, BENCH_SNAPSHOT_SECONDS, &header) !=
		        0 ||
		    take_sample(&authority, &header, harness_now() - start, &samples[i]) != 0)
			goto cleanup;
		if (i == 0 || i == o.epochs || i % o.every == 0)
			print_sample(i, &samples[i]);
	}
	const struct sample *middle = &samples[o.epochs / 2], *end = &samples[o.epochs];
	double max_publish = 0;
	for (size_t i = 0; i <= o.epochs; i++)
		if (samples[i].publish_seconds > max_publish)
			max_publish = samples[i].publish_seconds;
	printf("\ngrowth over the second half (epochs %zu to %zu): map used %+.1f%%, data.mdb %+.1f%%, "
	       "bodies %+.1f%%, "
	       "peak RSS %+.1f%%\n",
	       o.epochs / 2, o.epochs, growth(middle->map_used, end->map_used),
	       growth((double)middle->data_file, (double)end->data_file),
	       growth((double)middle->bodies, (double)end->bodies),
	       growth((double)middle->peak_kib, (double)end->peak_kib));
	printf("peak RSS %.1f MiB for a %.1f MiB body: %.2fx; slowest publication %.2f s\n",
	       (double)end->peak_kib / 1024, (double)end->body_size / 1048576,
	       (double)end->peak_kib * 1024 / (double)(end->body_size ? end->body_size : 1), max_publish);
	rc = 0;
cleanup:
	harness_authority_stop(&authority);
	free(samples);
done:
	harness_finish(&harness);
	if (rc != 0)
		fprintf(stderr, "bench: FAILED\n");
	return rc;
}
