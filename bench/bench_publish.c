/*
 * bench_publish.c: the publication of one snapshot of N records, against the public tools doing
 * the work it cannot avoid on the same bytes, and dirauthd's memory against the body's size.
 *
 * Publishing an epoch means reading the sealed view out of the store, writing the body in three
 * encodings (identity, gzip at COMPRESS_GZIP_LEVEL 6, zstd at COMPRESS_ZSTD_LEVEL 9: schema/
 * compress.c), hashing it, building the Merkle root, having the header signed and storing it. So
 * the anchor is `zstd -9`, `gzip -6` and `sha256sum` run one after the other over the very body
 * file dirauthd wrote (warm in the page cache), their wall times added: what one thread must
 * spend on those bytes at the least. The ratio is publication time over that sum. On a machine
 * doing other work the wall times depend on the share of the cores each gets, so the CPU time
 * dirauthd spent during the publication (user + system, /proc/<pid>/stat) is also given against
 * the anchors' CPU time: that ratio does not depend on the load.
 *
 * The run: dirauth-signer and dirauthd on loopback (harness.h, file clock, default bounds); N
 * registrations POSTed (in chunks of 100,000); the bytes LMDB uses per record (the store's
 * map-used gauge after the load less before, over N; and the data file's size over N); the
 * peak RSS so far is noted and reset (/proc/<pid>/clear_refs); the clock moves to the promised
 * epoch, and the time until the header of that epoch is served (polled every 5 ms) is the
 * publication. Then the body is fetched once from dirauthd in each encoding (identity, zstd,
 * gzip), decoded under the header's size, and must hash to the header's digest; dirauthd's peak
 * RSS during publication, while serving those bodies (each body file is mapped in while it is
 * sent) and over its life, against the uncompressed body; the anchors; and sha256sum's digest
 * must be the header's body digest too.
 */
#include "bench/harness.h"

#include "compress/compress.h"
#include "crypto/crypto.h"
#include "schema/encoding.h"
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
	unsigned threads;
	int skip_anchors; /* --no-anchors */
};

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: bench_publish [options]\n"
	    "  --dirauthd PATH     the dirauthd binary (default: ../server/dirauthd next to this program)\n"
	    "  --signer PATH       the dirauth-signer binary (default: ../signer/dirauth-signer)\n"
	    "  --records N         registrations in the snapshot (default 10000; 100000 and 1000000\n"
	    "                      are the sizes of bench/README.md)\n"
	    "  --threads M         client threads posting them (default 32)\n"
	    "  --no-anchors        skip zstd, gzip and sha256sum\n"
	    "  --temp-dir DIR      where the temporary directories go (default $TMPDIR or /tmp)\n");
}

static int parse_options(int argc, char **argv, struct options *o, struct harness *harness)
{
	const struct harness_program_options programs = {
	    .dirauthd = o->dirauthd, .signer = o->signer, .temp_parent = &harness->temp_parent};
	const struct harness_option options[] = {
	    HARNESS_OPTION_FLAG("--no-anchors", &o->skip_anchors),
	    HARNESS_OPTION_COUNT("--records", &o->records, 1, 10000000),
	    HARNESS_OPTION_UNSIGNED("--threads", &o->threads, 1, HARNESS_MAX_THREADS),
	};
	memset(o, 0, sizeof(*o));
	harness_program_defaults(&programs);
	o->records = 10000;
	o->threads = 32;
	if (harness_parse_options("bench_publish", argc, argv, options, sizeof(options) / sizeof(options[0]),
	                          &programs, usage) != 0)
		return -1;
	if (harness_programs_check("bench_publish", o->dirauthd, o->signer) != 0)
		return -1;
	return 0;
}

/* One anchor tool over the body file: its wall and CPU seconds. */
struct anchor {
	const char *name;
	struct harness_usage usage;
};

static int run_anchor(struct harness *harness, const char *file, const char *output, struct anchor *a,
                      char *const argv[])
{
	(void)file;
	printf("anchor: %s...\n", a->name);
	fflush(stdout);
	return harness_run(harness, argv, NULL, output, 3600, &a->usage);
}

/* sha256sum's first word must be the header's body digest. */
static int check_digest(const char *output, const uint8_t digest[32])
{
	char text[128] = "", expected[65];
	FILE *file = fopen(output, "r");
	if (file) {
		if (!fgets(text, sizeof(text), file))
			text[0] = 0;
		fclose(file);
	}
	hex_encode(digest, 32, expected);
	if (strncmp(text, expected, 64) != 0) {
		harness_fail("sha256sum of the body file is not the header's body digest");
		return -1;
	}
	return 0;
}

/* GETs the body from dirauthd in each encoding; each must decode to the bytes the header names
 * (decompressed under the header's size). */
static int check_served(struct harness_authority *authority, const struct snapshot_header *header)
{
	static const struct {
		const char *accept, *encoding;
		enum content_encoding kind;
	} encodings[] = {{"Accept-Encoding: identity", "", ENCODING_IDENTITY},
	                 {"Accept-Encoding: zstd", "zstd", ENCODING_ZSTD},
	                 {"Accept-Encoding: gzip", "gzip", ENCODING_GZIP}};
	char url[256];
	snprintf(url, sizeof(url), "%s/v1/%s/snapshots/%llu/body", authority->url, HARNESS_NAMESPACE,
	         (unsigned long long)header->epoch);
	for (size_t i = 0; i < sizeof(encodings) / sizeof(encodings[0]); i++) {
		struct buffer body, plain;
		char encoding[64] = "";
		long status = 0;
		uint8_t digest[32];
		buffer_init(&body);
		buffer_init(&plain);
		int rc = harness_http(url, encodings[i].accept, NULL, &status, &body, encoding,
		                      sizeof(encoding)) == 0 &&
		                 status == 200 && strcmp(encoding, encodings[i].encoding) == 0
		             ? 0
		             : -1;
		if (rc == 0)
			rc = encodings[i].kind == ENCODING_IDENTITY
			         ? buffer_append(&plain, body.data, body.len)
			         : compress_decode(encodings[i].kind, body.data, body.len,
			                           (size_t)header->body_size, &plain);
		if (rc == 0 &&
		    (crypto_sha256(plain.data, plain.len, digest) != 0 || plain.len != header->body_size ||
		     memcmp(digest, header->body_sha256, 32) != 0))
			rc = -1;
		buffer_free(&body);
		buffer_free(&plain);
		if (rc != 0) {
			harness_fail("GET %s (%s): status %ld, not the body the header names", url,
			             encodings[i].accept, status);
			return -1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct harness harness;
	struct options o;
	struct harness_authority authority;
	int rc = 1;
	memset(&harness, 0, sizeof(harness));
	memset(&authority, 0, sizeof(authority));
	if (parse_options(argc, argv, &o, &harness) != 0)
		return 2;
	if (harness_start(&harness) != 0)
		goto done;
	struct harness_authority_options authority_options = {
	    .dirauthd = o.dirauthd, .signer = o.signer, .connections = o.threads};
	if (harness_authority_prepare(&harness, &authority_options, &authority) != 0 ||
	    harness_authority_start(&authority) != 0)
		goto cleanup;

	double used_before = 0, used_after = 0;
	uint64_t epoch = 0;
	printf("building and posting %zu registrations...\n", o.records);
	fflush(stdout);
	double load_start = harness_now();
	if (harness_metric(&authority, "dirauth_store_used_bytes", &used_before) != 0 ||
	    harness_register(&authority, 0, o.records, 1, o.threads, &epoch) != 0 ||
	    harness_metric(&authority, "dirauth_store_used_bytes", &used_after) != 0)
		goto cleanup;
	double load_seconds = harness_now() - load_start;
	char data_file[PATH_MAX + 16];
	snprintf(data_file, sizeof(data_file), "%s/data.mdb", authority.data_dir);
	uint64_t data_file_bytes = harness_file_size(data_file);
	uint64_t ingest_peak_kib = harness_peak_rss_kib(authority.dirauthd.pid);
	if (harness_reset_peak_rss(authority.dirauthd.pid) != 0)
		goto cleanup;
	uint64_t rss_before_kib = harness_rss_kib(authority.dirauthd.pid);

	char load[64];
	harness_load_average(load);
	printf("moving the clock to epoch %llu...\n", (unsigned long long)epoch);
	fflush(stdout);
	struct snapshot_header header;
	double cpu_start = harness_process_cpu(authority.dirauthd.pid);
	double start = harness_now();
	if (harness_set_clock(&authority, epoch * authority.epoch_length) != 0 ||
	    harness_wait_snapshot(&authority, epoch, o.records, BENCH_SNAPSHOT_SECONDS, &header) != 0)
		goto cleanup;
	double publish_seconds = harness_now() - start;
	double publish_cpu = harness_process_cpu(authority.dirauthd.pid) - cpu_start;
	uint64_t publish_peak_kib = harness_peak_rss_kib(authority.dirauthd.pid);

	char identity[PATH_MAX], gzip_file[PATH_MAX], zstd_file[PATH_MAX];
	if (harness_body_file(&authority, header.epoch, "identity", identity) != 0 ||
	    harness_body_file(&authority, header.epoch, "gzip", gzip_file) != 0 ||
	    harness_body_file(&authority, header.epoch, "zstd", zstd_file) != 0)
		goto cleanup;
	/* Serving maps each body file in while it is sent: the peak of that, and what stays after. */
	if (harness_reset_peak_rss(authority.dirauthd.pid) != 0 || check_served(&authority, &header) != 0)
		goto cleanup;
	uint64_t serve_peak_kib = harness_peak_rss_kib(authority.dirauthd.pid);
	uint64_t rss_served_kib = harness_rss_kib(authority.dirauthd.pid);
	uint64_t life_peak_kib = publish_peak_kib > ingest_peak_kib ? publish_peak_kib : ingest_peak_kib;
	if (serve_peak_kib > life_peak_kib)
		life_peak_kib = serve_peak_kib;

	struct anchor anchors[3] = {{.name = "zstd -9 -T1"}, {.name = "gzip -6"}, {.name = "sha256sum"}};
	double anchor_wall = 0, anchor_cpu = 0;
	char anchor_load[64] = "";
	char tool[PATH_MAX];
	const char *missing = harness_find_program("zstd", tool) != 0        ? "zstd"
	                      : harness_find_program("gzip", tool) != 0      ? "gzip"
	                      : harness_find_program("sha256sum", tool) != 0 ? "sha256sum"
	                                                                     : NULL;
	if (!o.skip_anchors && missing) {
		printf("the anchors are skipped: %s is not installed\n", missing);
		o.skip_anchors = 1;
	}
	if (!o.skip_anchors) {
		char output[PATH_MAX + 16];
		snprintf(output, sizeof(output), "%s/anchor.out", authority.dir);
		harness_load_average(anchor_load);
		char *zstd_argv[] = {"zstd", "-9", "-T1", "-q", "-c", identity, NULL};
		char *gzip_argv[] = {"gzip", "-6", "-c", identity, NULL};
		char *sha_argv[] = {"sha256sum", identity, NULL};
		if (run_anchor(&harness, identity, "/dev/null", &anchors[0], zstd_argv) != 0 ||
		    run_anchor(&harness, identity, "/dev/null", &anchors[1], gzip_argv) != 0 ||
		    run_anchor(&harness, identity, output, &anchors[2], sha_argv) != 0 ||
		    check_digest(output, header.body_sha256) != 0)
			goto cleanup;
		for (size_t i = 0; i < 3; i++) {
			anchor_wall += anchors[i].usage.wall;
			anchor_cpu += anchors[i].usage.user + anchors[i].usage.system;
		}
	}

	double body = (double)header.body_size;
	printf("\ndirauth publication: %zu records, %ld online cores, data dir on %s\n", o.records,
	       sysconf(_SC_NPROCESSORS_ONLN), harness_filesystem_note(authority.dir));
	printf("load average at publication: %s; at the anchors: %s\n", load,
	       !o.skip_anchors ? anchor_load : "-");
	printf("registrations posted in %.1f s (%.0f /s, %u client threads)\n", load_seconds,
	       (double)o.records / load_seconds, o.threads);
	printf("body: %llu bytes uncompressed, %llu gzip, %llu zstd (%.1f bytes per record)\n",
	       (unsigned long long)header.body_size, (unsigned long long)harness_file_size(gzip_file),
	       (unsigned long long)harness_file_size(zstd_file), body / (double)o.records);
	printf("%-40s %12s %12s %10s\n", "figure", "value", "anchor", "ratio");
	if (!o.skip_anchors) {
		printf("%-40s %10.3f s %10.3f s %10.3f\n", "publication: clock to header served",
		       publish_seconds, anchor_wall, publish_seconds / anchor_wall);
		printf("%-40s %10.3f s %10.3f s %10.3f\n", "publication: dirauthd CPU (user + sys)",
		       publish_cpu, anchor_cpu, publish_cpu / anchor_cpu);
		for (size_t i = 0; i < 3; i++)
			printf("  anchor %-31s %10.3f s  (cpu %.3f s)\n", anchors[i].name,
			       anchors[i].usage.wall, anchors[i].usage.user + anchors[i].usage.system);
	} else {
		printf("%-40s %10.3f s\n", "publication: clock to header served", publish_seconds);
		printf("%-40s %10.3f s\n", "publication: dirauthd CPU (user + sys)", publish_cpu);
	}
	printf("%-40s %8.1f MiB %8.1f MiB %10.3f\n", "dirauthd peak RSS during publication",
	       (double)publish_peak_kib / 1024, body / 1048576, (double)publish_peak_kib * 1024 / body);
	printf("%-40s %8.1f MiB %8.1f MiB %10.3f\n", "dirauthd peak RSS serving the body",
	       (double)serve_peak_kib / 1024, body / 1048576, (double)serve_peak_kib * 1024 / body);
	printf("%-40s %8.1f MiB %8.1f MiB %10.3f\n", "dirauthd peak RSS over its life",
	       (double)life_peak_kib / 1024, body / 1048576, (double)life_peak_kib * 1024 / body);
	printf("  (RSS before publication %.1f MiB, after serving %.1f MiB; the anchor is the uncompressed "
	       "body; target <= 3)\n",
	       (double)rss_before_kib / 1024, (double)rss_served_kib / 1024);
	printf("%-40s %10.0f B\n", "LMDB bytes per record (map used)",
	       (used_after - used_before) / (double)o.records);
	printf("%-40s %10.0f B\n", "LMDB bytes per record (data.mdb size)",
	       (double)data_file_bytes / (double)o.records);
	printf("served: the body fetched from dirauthd as identity, zstd and gzip decodes to the header's "
	       "digest\n");
	rc = 0;
cleanup:
	harness_authority_stop(&authority);
done:
	harness_finish(&harness);
	if (rc != 0)
		fprintf(stderr, "bench: FAILED\n");
	return rc;
}
