/*
 * bench_reads.c: how fast dirauthd serves the latest header and a snapshot body in each content
 * encoding, against stock nginx serving the very same bytes as static files, both measured with
 * wrk in the same run with the same threads and connections (keep-alive).
 *
 * The read path answers every client with bytes prepared once per epoch (the header note in
 * memory, the bodies as the store's files mapped read-only), so nothing should make it slower
 * than a static file server: nginx is the anchor, and the ratio is dirauthd's rate over nginx's.
 *
 * The run: dirauth-signer and dirauthd on loopback (harness.h) on the system clock, as in
 * production (the latest header's max-age is computed from the clock at every answer, and a file
 * clock would cost every answer an open and a read), with epochs of a day of which the next
 * begins --lead seconds after the start; N signed registrations POSTed before then, and the
 * snapshot that epoch publishes must hold them all (with --file-clock, the clock file is moved to
 * the promised epoch instead). Then each answer is
 * fetched once and checked (the header verifies; each body is the size the store recorded and
 * decodes to the header's body digest), the same bytes are written where a temporary nginx serves
 * them with the same Content-Encoding, and for each target (latest header; body as zstd, gzip and
 * identity) wrk runs against dirauthd and against nginx, S seconds each, R rounds with the two
 * alternating (and the one going first alternating too), each server's best run kept: on a machine
 * doing other work the load changes from one run to the next, and a run can only be slowed by it.
 * Besides the rates, each server's CPU time (user + system; nginx's with its workers') over all
 * its runs per answer: nginx's over dirauthd's is the efficiency ratio, which does not depend on
 * the share of the cores each run got. wrk's own CPU per answer is printed beside it: the client
 * shares the machine, so when the cores are busy the rate follows the sum of the two, and a
 * server whose way of sending costs its client more is slower by that much. Any socket error or
 * non-2xx answer fails the run.
 */
#include "bench/harness.h"

#include "compress/compress.h"
#include "crypto/crypto.h"
#include "base/error.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BENCH_SNAPSHOT_SECONDS 600.0
#define BENCH_SKIPPED          77 /* ctest's SKIP_RETURN_CODE: a tool is missing */

struct options {
	char dirauthd[PATH_MAX];
	char signer[PATH_MAX];
	char nginx[PATH_MAX];
	char wrk[PATH_MAX];
	int nginx_disabled;
	int file_clock;
	unsigned lead_seconds; /* with the system clock: the start to the epoch that publishes */
	const char *http;      /* keys added to dirauthd's http settings, or NULL */
	size_t records;
	unsigned connections;
	unsigned wrk_threads;
	unsigned seconds;
	unsigned rounds;
};

/* One thing to read: its dirauthd path, the nginx file, the request header, the bytes. */
struct target {
	const char *name;
	char path[128];
	const char *file;
	const char *header;      /* Accept-Encoding, or NULL */
	const char *encoding;    /* the Content-Encoding answered ("" for none) */
	const char *nginx_extra; /* directives of its nginx location */
	struct buffer bytes;
	struct harness_wrk_result dirauthd, nginx;
	/* CPU seconds each server spent over all its runs, and the requests it answered in them. */
	double dirauthd_cpu, nginx_cpu;
	double dirauthd_client_cpu, nginx_client_cpu; /* wrk's, in the same runs */
	uint64_t dirauthd_requests, nginx_requests;
	char load[64];
};

/* CPU seconds (user + system) of a process and of its children (nginx's workers), so far. */
static double server_cpu(pid_t pid)
{
	double total = harness_process_cpu(pid);
	DIR *proc = opendir("/proc");
	if (!proc)
		return total;
	struct dirent *entry;
	while ((entry = readdir(proc)) != NULL) {
		char path[300], text[512];
		if (entry->d_name[0] < '1' || entry->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", entry->d_name);
		FILE *file = fopen(path, "r");
		if (!file)
			continue;
		size_t n = fread(text, 1, sizeof(text) - 1, file);
		fclose(file);
		text[n] = 0;
		const char *p = strrchr(text, ')'); /* the command name may hold spaces */
		int parent = 0;
		if (p && sscanf(p + 2, "%*c %d", &parent) == 1 && parent == (int)pid)
			total += harness_process_cpu((pid_t)atoi(entry->d_name));
	}
	closedir(proc);
	return total;
}

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: bench_reads [options]\n"
	    "  --dirauthd PATH     the dirauthd binary (default: ../server/dirauthd next to this program)\n"
	    "  --signer PATH       the dirauth-signer binary (default: ../signer/dirauth-signer)\n"
	    "  --records N         registrations in the snapshot (default 10000)\n"
	    "  --connections C     wrk connections, kept alive (default 32)\n"
	    "  --wrk-threads T     wrk threads (default 2)\n"
	    "  --seconds S         wrk duration per target, server and round (default 5)\n"
	    "  --rounds R          runs per target and server, alternating the two (default 3)\n"
	    "  --nginx PATH        the nginx binary (default: looked up in PATH and /usr/sbin)\n"
	    "  --no-nginx          skip the nginx anchor\n"
	    "  --file-clock        dirauthd on a file clock moved by the benchmark (each clock reading\n"
	    "                      opens and reads a file) instead of the system clock\n"
	    "  --lead S            with the system clock, the epoch that publishes the registrations\n"
	    "                      begins S seconds after the start (default 10 + 1 per 1,000 records)\n"
	    "  --http 'K: V, ...'  keys added to dirauthd's http settings (a setting under test)\n"
	    "  --wrk PATH          the wrk binary (default: looked up in PATH)\n"
	    "  --temp-dir DIR      where the temporary directories go (default $TMPDIR or /tmp)\n");
}

static int parse_options(int argc, char **argv, struct options *o, struct harness *harness)
{
	const struct harness_program_options programs = {.dirauthd = o->dirauthd,
	                                                 .signer = o->signer,
	                                                 .nginx = o->nginx,
	                                                 .wrk = o->wrk,
	                                                 .temp_parent = &harness->temp_parent};
	const struct harness_option options[] = {
	    HARNESS_OPTION_FLAG("--no-nginx", &o->nginx_disabled),
	    HARNESS_OPTION_FLAG("--file-clock", &o->file_clock),
	    HARNESS_OPTION_UNSIGNED("--lead", &o->lead_seconds, 2, 3600),
	    HARNESS_OPTION_TEXT("--http", &o->http),
	    HARNESS_OPTION_COUNT("--records", &o->records, 1, 10000000),
	    HARNESS_OPTION_UNSIGNED("--connections", &o->connections, 1, 1000),
	    HARNESS_OPTION_UNSIGNED("--wrk-threads", &o->wrk_threads, 1, 64),
	    HARNESS_OPTION_UNSIGNED("--rounds", &o->rounds, 1, 100),
	    HARNESS_OPTION_UNSIGNED("--seconds", &o->seconds, 1, 3600),
	};
	memset(o, 0, sizeof(*o));
	harness_program_defaults(&programs);
	o->records = 10000;
	o->connections = 32;
	o->wrk_threads = 2;
	o->seconds = 5;
	o->rounds = 3;
	if (harness_parse_options("bench_reads", argc, argv, options, sizeof(options) / sizeof(options[0]),
	                          &programs, usage) != 0)
		return -1;
	if (!o->lead_seconds)
		o->lead_seconds = 10 + (unsigned)(o->records / 1000);
	if (o->wrk_threads > o->connections)
		o->wrk_threads = o->connections;
	if (harness_programs_check("bench_reads", o->dirauthd, o->signer) != 0)
		return -1;
	return 0;
}

/* Fetches target from dirauthd once and checks it: a header that verifies, or a body of the
 * stored size in the right encoding that decodes to the header's digest. */
static int fetch_target(struct harness_authority *authority, const struct snapshot_header *header,
                        struct target *t)
{
	char url[256], encoding[64];
	long status = 0;
	snprintf(url, sizeof(url), "%s%s", authority->url, t->path);
	buffer_init(&t->bytes);
	if (harness_http(url, t->header, NULL, &status, &t->bytes, encoding, sizeof(encoding)) != 0 ||
	    status != 200) {
		harness_fail("GET %s: status %ld", url, status);
		return -1;
	}
	if (strcmp(encoding, t->encoding) != 0) {
		harness_fail("GET %s: Content-Encoding '%s', expected '%s'", url, encoding, t->encoding);
		return -1;
	}
	if (!t->header && strcmp(t->name, "latest header") == 0)
		return 0;
	enum content_encoding kind = strcmp(t->encoding, "zstd") == 0   ? ENCODING_ZSTD
	                             : strcmp(t->encoding, "gzip") == 0 ? ENCODING_GZIP
	                                                                : ENCODING_IDENTITY;
	struct buffer plain;
	buffer_init(&plain);
	uint8_t digest[32];
	int rc = kind == ENCODING_IDENTITY
	             ? buffer_append(&plain, t->bytes.data, t->bytes.len)
	             : compress_decode(kind, t->bytes.data, t->bytes.len, (size_t)header->body_size, &plain);
	if (rc == 0)
		rc = crypto_sha256(plain.data, plain.len, digest);
	if (rc == 0 && (plain.len != header->body_size || memcmp(digest, header->body_sha256, 32) != 0))
		rc = DIRAUTH_ERR_MISMATCH;
	buffer_free(&plain);
	if (rc != 0) {
		harness_fail("GET %s: the body does not match its header: %s", url, dirauth_strerror(rc));
		return -1;
	}
	return 0;
}

/* Microseconds of CPU per answer. */
static double cpu_per_request(double cpu, uint64_t requests)
{
	return requests ? 1e6 * cpu / (double)requests : 0;
}

/* One row of a CPU table: dirauthd's figure, nginx's and their ratio (the last two "skipped" and
 * empty without the nginx anchor). */
static void print_cpu_row(const char *name, double mine, double anchor, double ratio, int nginx)
{
	char anchor_text[32] = "skipped", ratio_text[32] = "";
	if (nginx) {
		snprintf(anchor_text, sizeof(anchor_text), "%.1f", anchor);
		snprintf(ratio_text, sizeof(ratio_text), "%.3f", ratio);
	}
	printf("%-22s %16.1f %16s %16s\n", name, mine, anchor_text, ratio_text);
}

static void print_figures(const struct options *o, struct target *targets, size_t count, int nginx)
{
	printf("\ndirauth reads: %ld online cores, wrk -t %u -c %u -d %us (keep-alive), client on the same "
	       "machine; best of %u alternating runs each\n",
	       sysconf(_SC_NPROCESSORS_ONLN), o->wrk_threads, o->connections, o->seconds, o->rounds);
	harness_print_anchor_head(22);
	for (size_t i = 0; i < count; i++) {
		const struct target *t = &targets[i];
		harness_print_anchor_row(22, t->name, t->bytes.len, &t->dirauthd, nginx ? &t->nginx : NULL,
		                         t->load);
	}
	/* The server's CPU per answer over all its runs: what the machine's load does not change. */
	printf("\n%-22s %16s %16s %16s\n", "server CPU per answer", "dirauthd us", "nginx us",
	       "nginx/dirauthd");
	for (size_t i = 0; i < count; i++) {
		const struct target *t = &targets[i];
		double mine = cpu_per_request(t->dirauthd_cpu, t->dirauthd_requests);
		double anchor = cpu_per_request(t->nginx_cpu, t->nginx_requests);
		print_cpu_row(t->name, mine, anchor, mine > 0 ? anchor / mine : 0, nginx);
	}
	/* The client's CPU per answer against each server, and the two together: with the client on
	 * the same busy cores, the rate ratio follows the sums' ratio. */
	printf("\n%-22s %16s %16s %16s\n", "wrk CPU per answer", "with dirauthd us", "with nginx us",
	       "sums: nginx/dirauthd");
	for (size_t i = 0; i < count; i++) {
		const struct target *t = &targets[i];
		double mine = cpu_per_request(t->dirauthd_client_cpu, t->dirauthd_requests);
		double anchor = cpu_per_request(t->nginx_client_cpu, t->nginx_requests);
		double mine_sum = mine + cpu_per_request(t->dirauthd_cpu, t->dirauthd_requests);
		double anchor_sum = anchor + cpu_per_request(t->nginx_cpu, t->nginx_requests);
		print_cpu_row(t->name, mine, anchor, mine_sum > 0 ? anchor_sum / mine_sum : 0, nginx);
	}
	if (!nginx)
		printf("\nthe nginx anchor was skipped\n");
}

int main(int argc, char **argv)
{
	struct harness harness;
	struct options o;
	struct harness_authority authority;
	struct harness_nginx nginx;
	struct buffer *notes = NULL, *receipts = NULL;
	struct target targets[4];
	int rc = 1;
	memset(&harness, 0, sizeof(harness));
	memset(&authority, 0, sizeof(authority));
	memset(&nginx, 0, sizeof(nginx));
	memset(targets, 0, sizeof(targets));
	if (parse_options(argc, argv, &o, &harness) != 0)
		return 2;
	if (harness_start(&harness) != 0)
		goto done;
	if ((rc = harness_require_wrk("bench_reads", o.wrk)) != 0)
		goto done;
	rc = 1;
	int have_nginx = !o.nginx_disabled && (o.nginx[0] || harness_find_program("nginx", o.nginx) == 0);

	notes = calloc(o.records, sizeof(*notes));
	receipts = calloc(o.records, sizeof(*receipts));
	struct harness_authority_options authority_options = {.dirauthd = o.dirauthd,
	                                                      .signer = o.signer,
	                                                      .connections = o.connections + 16,
	                                                      .http = o.http,
	                                                      .system_clock = !o.file_clock,
	                                                      .first_epoch_in_seconds = o.lead_seconds};
	if (!notes || !receipts || harness_authority_prepare(&harness, &authority_options, &authority) != 0 ||
	    harness_authority_start(&authority) != 0)
		goto cleanup;
	printf("building and posting %zu registrations...\n", o.records);
	fflush(stdout);
	struct harness_posted posted;
	uint64_t epoch = 0;
	struct snapshot_header header;
	if (harness_registrations(authority.provider, 0, o.records, 1, authority.now, 2, notes) != 0 ||
	    harness_post(&authority, notes, o.records, 16, 3600, receipts, &posted) != 0 ||
	    harness_check_receipts(&authority, notes, receipts, o.records, &epoch) != 0)
		goto cleanup;
	if (!o.file_clock) {
		/* The first epoch of the day begins o.lead_seconds after the start: every registration
		 * must have been taken before it, to be published in it. */
		uint64_t first = (authority.now - authority.genesis) / authority.epoch_length + 1;
		if (epoch != first) {
			harness_fail(
			    "the registrations were promised epoch %llu, not %llu: posting them took "
			    "longer than --lead %u",
			    (unsigned long long)epoch, (unsigned long long)first, o.lead_seconds);
			goto cleanup;
		}
		printf("waiting for the epoch that begins %u s after the start...\n", o.lead_seconds);
		fflush(stdout);
	}
	if ((o.file_clock && harness_set_clock(&authority, epoch * authority.epoch_length) != 0) ||
	    harness_wait_snapshot(&authority, epoch, o.records, o.lead_seconds + BENCH_SNAPSHOT_SECONDS,
	                          &header) != 0)
		goto cleanup;
	harness_buffers_free(notes, o.records);
	harness_buffers_free(receipts, o.records);

	char body_path[128];
	snprintf(body_path, sizeof(body_path), "/v1/%s/snapshots/%llu/body", HARNESS_NAMESPACE,
	         (unsigned long long)header.epoch);
	targets[0] = (struct target){.name = "latest header",
	                             .file = "latest",
	                             .encoding = "",
	                             .nginx_extra = "default_type \"text/plain; charset=utf-8\";"};
	snprintf(targets[0].path, sizeof(targets[0].path), "/v1/%s/snapshots/latest", HARNESS_NAMESPACE);
	targets[1] = (struct target){.name = "body zstd",
	                             .file = "body.zst",
	                             .header = "Accept-Encoding: zstd",
	                             .encoding = "zstd",
	                             .nginx_extra = "add_header Content-Encoding zstd;"};
	targets[2] = (struct target){.name = "body gzip",
	                             .file = "body.gz",
	                             .header = "Accept-Encoding: gzip",
	                             .encoding = "gzip",
	                             .nginx_extra = "add_header Content-Encoding gzip;"};
	targets[3] = (struct target){.name = "body identity",
	                             .file = "body",
	                             .header = "Accept-Encoding: identity",
	                             .encoding = "",
	                             .nginx_extra = ""};
	for (size_t i = 1; i < 4; i++)
		snprintf(targets[i].path, sizeof(targets[i].path), "%s", body_path);
	for (size_t i = 0; i < 4; i++)
		if (fetch_target(&authority, &header, &targets[i]) != 0)
			goto cleanup;

	if (have_nginx) {
		struct buffer locations;
		buffer_init(&locations);
		int built = 0;
		for (size_t i = 0; i < 4; i++)
			built |= buffer_appendf(&locations, "\t\tlocation = /%s { %s }\n", targets[i].file,
			                        targets[i].nginx_extra);
		int started = built == 0 &&
		              harness_nginx_start(&harness, o.nginx, &nginx,
		                                  locations.data ? (const char *)locations.data : "") == 0;
		buffer_free(&locations);
		if (!started)
			goto cleanup;
		char root[PATH_MAX], file[PATH_MAX + 32];
		harness_nginx_root(&nginx, root);
		for (size_t i = 0; i < 4; i++) {
			snprintf(file, sizeof(file), "%s/%s", root, targets[i].file);
			if (harness_write_file(file, targets[i].bytes.data, targets[i].bytes.len, 0644) != 0)
				goto cleanup;
		}
	}

	for (size_t i = 0; i < 4; i++) {
		struct target *t = &targets[i];
		char url[256], nginx_url[256];
		printf("wrk: %s...\n", t->name);
		fflush(stdout);
		harness_load_average(t->load);
		snprintf(url, sizeof(url), "%s%s", authority.url, t->path);
		snprintf(nginx_url, sizeof(nginx_url), "http://127.0.0.1:%u/%s", nginx.port, t->file);
		for (unsigned round = 0; round < o.rounds; round++) {
			/* The two servers alternate, the one going first too, so that a change in the
			 * machine's load hits both alike; each keeps its best run. */
			for (unsigned turn = 0; turn < 2; turn++) {
				int nginx_turn = (turn + round) % 2 == 1;
				if (nginx_turn && !have_nginx)
					continue;
				struct harness_wrk_result result;
				pid_t server = nginx_turn ? nginx.child.pid : authority.dirauthd.pid;
				double cpu = server_cpu(server);
				if (harness_wrk(&harness, o.wrk, nginx_turn ? nginx_url : url, t->header,
				                o.wrk_threads, o.connections, o.seconds, &result) != 0)
					goto cleanup;
				cpu = server_cpu(server) - cpu;
				*(nginx_turn ? &t->nginx_cpu : &t->dirauthd_cpu) += cpu;
				*(nginx_turn ? &t->nginx_client_cpu : &t->dirauthd_client_cpu) +=
				    result.client_cpu;
				*(nginx_turn ? &t->nginx_requests : &t->dirauthd_requests) += result.requests;
				struct harness_wrk_result *best = nginx_turn ? &t->nginx : &t->dirauthd;
				if (result.requests_per_second > best->requests_per_second)
					*best = result;
			}
		}
		/* wrk counts the bytes read, headers included: fewer than the body per answer means answers
		 * were cut short. */
		if (t->dirauthd.bytes_per_second <
		    t->dirauthd.requests_per_second * (double)t->bytes.len * 0.99) {
			harness_fail("%s: dirauthd sent fewer bytes per answer than the body", t->name);
			goto cleanup;
		}
	}
	print_figures(&o, targets, 4, have_nginx);
	rc = 0;
cleanup:
	harness_nginx_stop(&nginx);
	harness_authority_stop(&authority);
	for (size_t i = 0; i < 4; i++)
		buffer_free(&targets[i].bytes);
	harness_buffers_free(notes, notes ? o.records : 0);
	harness_buffers_free(receipts, receipts ? o.records : 0);
	free(notes);
	free(receipts);
done:
	harness_finish(&harness);
	if (rc != 0 && rc != BENCH_SKIPPED)
		fprintf(stderr, "bench: FAILED\n");
	return rc;
}
