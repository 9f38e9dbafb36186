/*
 * bench_diff.c: what a snapshot diff (schema/snapshot-diff.md) saves a mirror, and what it costs
 * the authority that builds it and the mirror that applies it, at 1% and 10% churn of a body of
 * 100,000 records.
 *
 * The anchor is the full body compressed with zstd as the authority stores and serves it
 * (compress_encode, ENCODING_ZSTD), measured in the same run: its size is what a mirror fetches
 * without a diff, and its compression time is what the authority already spends on every body.
 * So the figures are the diff's size, raw and zstd-compressed, against the zstd body, and the
 * diff's build and apply times against the time to compress the full body. The targets:
 * a 1% diff at most 3% of the zstd body, a 10% diff at most 20%.
 *
 * The records are real signed registrations (bench/harness.h, harness_registrations: two
 * endpoints each, about 660 bytes), so the body compresses as a real one does. A churn of c% of
 * n records replaces a third of c% of them (sequence 2), removes a third and adds a third as new
 * services; service ids are hashes, so the changes fall all over the sorted body. The bodies are
 * of method 1 (records only). Signing is not timed. Each time is the fastest of --runs runs.
 *
 *   bench_diff [--records N] [--runs R] [--threads T]
 *
 * Exit status 0, 1 on a failure (a diff that does not rebuild the target), 2 for a bad option. It
 * asserts no speed; its smoke run (ctest bench_smoke_diff, label bench) uses 2,000 records.
 */
#include "base/error.h"
#include "bench/harness.h"
#include "compress/compress.h"
#include "schema/encoding.h"
#include "schema/snapshot.h"
#include "schema/snapshot_diff.h"
#include "signer/key.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_EPOCH 29453762ull

struct options {
	size_t records;
	size_t runs;
	unsigned threads;
};

static void usage(FILE *out)
{
	fprintf(out, "usage: bench_diff [options]\n"
	             "  --records N   records of the base body (default 100000)\n"
	             "  --runs R      runs of each timed step, the fastest counts (default 3)\n"
	             "  --threads T   threads that sign the registrations (default 2)\n");
}

/* The body of the given notes (any order) into out. */
static int body_of(struct buffer *const *notes, size_t count, struct buffer *out)
{
	struct snapshot_record *records = calloc(count ? count : 1, sizeof(*records));
	int rc = records ? 0 : DIRAUTH_ERR_NOMEM;
	for (size_t i = 0; rc == 0 && i < count; i++) {
		rc = harness_service_id_of(notes[i], records[i].service_id);
		records[i].note = notes[i]->data;
		records[i].note_len = notes[i]->len;
	}
	if (rc == 0) {
		qsort(records, count, sizeof(*records), harness_record_order);
		buffer_reset(out);
		rc = snapshot_body_encode("mix", BENCH_EPOCH, records, count, out);
	}
	free(records);
	return rc;
}

/* The fastest of runs calls of step, in seconds; -1 when a call fails. */
struct timed {
	int (*step)(void *context);
	void *context;
};

static double fastest(size_t runs, struct timed timed)
{
	double best = -1;
	for (size_t r = 0; r < runs; r++) {
		double start = harness_now();
		if (timed.step(timed.context) != 0)
			return -1;
		double took = harness_now() - start;
		if (best < 0 || took < best)
			best = took;
	}
	return best;
}

struct work {
	const struct buffer *base, *target, *diff;
	struct buffer *out;
	struct snapshot_body_limits limits;
};

static int compress_step(void *context)
{
	struct work *w = context;
	buffer_reset(w->out);
	return compress_encode(ENCODING_ZSTD, w->target->data, w->target->len, w->out);
}

static int build_step(void *context)
{
	struct work *w = context;
	buffer_reset(w->out);
	return snapshot_diff_build(w->base->data, w->base->len, w->target->data, w->target->len, &w->limits,
	                           w->out);
}

static int apply_step(void *context)
{
	struct work *w = context;
	buffer_reset(w->out);
	return snapshot_diff_apply(w->base->data, w->base->len, w->diff->data, w->diff->len, &w->limits,
	                           w->out);
}

/* One churn: the target, its zstd anchor, the diff and its figures. */
static int churn_run(const struct options *o, const struct buffer *base, struct buffer *const *base_notes,
                     struct buffer *replaced, struct buffer *added, size_t changes, unsigned percent)
{
	size_t third = changes / 3, removed = changes - 2 * third;
	size_t kept = o->records - removed, count = kept + third;
	struct buffer **notes = calloc(count ? count : 1, sizeof(*notes));
	struct buffer target, zstd_body, diff, zstd_diff, result;
	buffer_init(&target);
	buffer_init(&zstd_body);
	buffer_init(&diff);
	buffer_init(&zstd_diff);
	buffer_init(&result);
	int status = 1;
	if (!notes)
		return 1;
	/* Services 0..third are replaced, third..third + removed removed, the rest kept; third added. */
	for (size_t i = 0; i < third; i++)
		notes[i] = &replaced[i];
	for (size_t i = third + removed; i < o->records; i++)
		notes[i - removed] = base_notes[i];
	for (size_t i = 0; i < third; i++)
		notes[kept + i] = &added[i];
	if (body_of(notes, count, &target) != 0) {
		harness_fail("the target body of %u%% churn", percent);
		goto cleanup;
	}
	struct work w = {base, &target, &diff, &zstd_body, {o->records * 2, 0, 0}};
	double compress_seconds = fastest(o->runs, (struct timed){compress_step, &w});
	w.out = &diff;
	double build_seconds = fastest(o->runs, (struct timed){build_step, &w});
	w.out = &result;
	double apply_seconds = fastest(o->runs, (struct timed){apply_step, &w});
	if (compress_seconds < 0 || build_seconds < 0 || apply_seconds < 0 ||
	    compress_encode(ENCODING_ZSTD, diff.data, diff.len, &zstd_diff) != 0) {
		harness_fail("%u%% churn: a step failed", percent);
		goto cleanup;
	}
	if (result.len != target.len || memcmp(result.data, target.data, target.len) != 0) {
		harness_fail("%u%% churn: the diff does not rebuild the target", percent);
		goto cleanup;
	}
	double zstd_share = (double)zstd_diff.len / (double)zstd_body.len;
	double target_share = percent <= 1 ? 0.03 : 0.20;
	printf(
	    "\n%u%% churn: %zu records replaced, %zu removed, %zu added (target body %zu bytes, zstd %zu)\n",
	    percent, third, removed, third, target.len, zstd_body.len);
	printf("  %-34s %12zu bytes  %6.2f%% of the body\n", "diff, raw", diff.len,
	       100.0 * (double)diff.len / (double)target.len);
	printf("  %-34s %12zu bytes  %6.2f%% of the zstd body (target <= %.0f%%: %s)\n", "diff, zstd",
	       zstd_diff.len, 100.0 * zstd_share, 100.0 * target_share,
	       zstd_share <= target_share ? "met" : "NOT met");
	printf("  %-34s %12s        %s\n", "offered (raw, 50% share)", "",
	       snapshot_diff_worth_offering(diff.len, target.len) ? "yes" : "no");
	printf("  %-34s %9.3f s   %6.3f x the zstd of the full body (%.3f s)\n", "build", build_seconds,
	       build_seconds / compress_seconds, compress_seconds);
	printf("  %-34s %9.3f s   %6.3f x the zstd of the full body\n", "apply (with its checks)",
	       apply_seconds, apply_seconds / compress_seconds);
	status = 0;
cleanup:
	free(notes);
	buffer_free(&target);
	buffer_free(&zstd_body);
	buffer_free(&diff);
	buffer_free(&zstd_diff);
	buffer_free(&result);
	return status;
}

int main(int argc, char **argv)
{
	struct options o = {100000, 3, 2};
	const struct harness_option options[] = {
	    HARNESS_OPTION_COUNT("--records", &o.records, 10, 10000000),
	    HARNESS_OPTION_COUNT("--runs", &o.runs, 1, 100),
	    HARNESS_OPTION_UNSIGNED("--threads", &o.threads, 1, 64),
	};
	if (harness_parse_options("bench_diff", argc, argv, options, sizeof(options) / sizeof(options[0]),
	                          NULL, usage) != 0)
		return 2;
	static const unsigned percents[] = {1, 10};
	size_t most = o.records / 10 / 3 + 1; /* a third of the largest churn, and one */
	struct signer_key *provider = NULL;
	struct buffer *base_notes = calloc(o.records, sizeof(*base_notes));
	struct buffer **base_pointers = calloc(o.records, sizeof(*base_pointers));
	struct buffer *replaced = calloc(most, sizeof(*replaced)), *added = calloc(most, sizeof(*added));
	struct buffer base;
	buffer_init(&base);
	int status = 1;
	char load[64];
	if (!base_notes || !base_pointers || !replaced || !added ||
	    signer_key_generate("provider.example", &provider) != 0) {
		harness_fail("out of memory, or no key");
		goto cleanup;
	}
	double start = harness_now();
	/* The base's services 0..records at sequence 1; the replaced ones at sequence 2; new ones after. */
	if (harness_registrations(provider, 0, o.records, 1, HARNESS_START_TIME, o.threads, base_notes) !=
	        0 ||
	    harness_registrations(provider, 0, most, 2, HARNESS_START_TIME, o.threads, replaced) != 0 ||
	    harness_registrations(provider, o.records, most, 1, HARNESS_START_TIME, o.threads, added) != 0) {
		harness_fail("signing the registrations");
		goto cleanup;
	}
	for (size_t i = 0; i < o.records; i++)
		base_pointers[i] = &base_notes[i];
	if (body_of(base_pointers, o.records, &base) != 0) {
		harness_fail("the base body");
		goto cleanup;
	}
	harness_load_average(load);
	printf("bench_diff: base body of %zu records, %zu bytes (%.1f bytes per record); signed in %.1f s; "
	       "load %s\n",
	       o.records, base.len, (double)base.len / (double)o.records, harness_now() - start, load);
	printf(
	    "anchor: the full target body compressed with zstd (compress_encode) in the same run; each time "
	    "the fastest of %zu runs\n",
	    o.runs);
	status = 0;
	for (size_t p = 0; status == 0 && p < sizeof(percents) / sizeof(percents[0]); p++) {
		size_t changes = o.records * percents[p] / 100;
		if (changes < 3)
			changes = 3;
		status = churn_run(&o, &base, base_pointers, replaced, added, changes, percents[p]);
	}
cleanup:
	if (base_notes)
		harness_buffers_free(base_notes, o.records);
	if (replaced)
		harness_buffers_free(replaced, most);
	if (added)
		harness_buffers_free(added, most);
	free(base_notes);
	free(base_pointers);
	free(replaced);
	free(added);
	buffer_free(&base);
	signer_key_free(provider);
	return status;
}
