/*
 * bench_log_serve.c: the transparency log of a real dirauthd store at a million leaves: how fast
 * it is appended and checkpointed, how fast proofs are made, and how fast dirauthd serves its
 * tiles, entry bundles and proofs against stock nginx serving the very same bytes at the very same
 * paths, both driven by wrk in the same run with the same threads and connections (keep-alive).
 *
 * The run, every phase bounded:
 *   1. the authority's directory (harness.h: keys, certificate, both configurations, the file
 *      clock), its signer given the example log and cosignature keys;
 *   2. fill: N synthetic snapshot headers of mix (empty bodies, chained by their previous
 *      digests, each signed by the authority's key in this process, as the signer would) stored as
 *      published, epochs up to the clock's current one, through the store API: the leaves to be;
 *   3. append: with the real dirauth-signer running, translog_catch_up appends the first N − K
 *      headers, in rounds of TRANSLOG_ROUND_MAX under one checkpoint each (signed by the log key
 *      and cosigned through the signer, one store transaction per leaf): leaves per second against
 *      the rate of one-put LMDB write transactions on the same file system (an append is one);
 *   4. checkpoint: the last K headers one at a time, each caught up alone (one leaf, a checkpoint
 *      signed and cosigned through the signer, stored): checkpoints per second against OpenSSL's
 *      Ed25519 signing rate (openssl speed);
 *   5. proofs in this process on the store: inclusion proof files of random epochs and
 *      consistency proofs from random sizes, both to the latest checkpoint, against the rate of
 *      single stored-hash reads (one read transaction each);
 *   6. dirauthd started on that store; for each target (random full tiles of level 0 and of
 *      level 1, random full entry bundles, proof/<epoch> of random epochs, consistency/<old>/<size>
 *      of random old sizes) P paths are fetched once and checked, written to the same paths under
 *      a temporary nginx's root, and wrk runs a script cycling through those paths against dirauthd
 *      and then against nginx for S seconds each, R rounds alternating between the two, the fastest
 *      run of each counting, with each server's CPU time per answer over all its runs. Any socket
 *      error or non-2xx answer fails the run. dirauthd runs as many HTTP threads as the machine has online
 * cores (--threads), as nginx runs worker_processes auto: the same number of event loops on each side. It
 * prints a table of figure, value, anchor and ratio with the load average at each figure. Exit status 0 on
 * success, 1 on a failure, 2 for a bad option, 77 when wrk is not installed.
 */
#include "bench/harness.h"

#include "kv/kv.h"
#include "schema/checkpoint.h"
#include "crypto/crypto.h"
#include "base/error.h"
#include "schedule/schedule.h"
#include "server/config/config.h"
#include "server/signing/signer_client.h"
#include "server/store/snapshots.h"
#include "server/store/tlog_table.h"
#include "server/store/store.h"
#include "server/tlog/translog.h"
#include "tlog/tile.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define BENCH_SKIPPED      77
#define BENCH_PREFIX       "/v1/" HARNESS_NAMESPACE "/log/"
#define BENCH_TARGETS      5
#define BENCH_CHECKPOINTS  20 /* K: single-leaf checkpoints, at most */
#define BENCH_WAIT_SECONDS 120.0

struct options {
	char dirauthd[PATH_MAX];
	char signer[PATH_MAX];
	char nginx[PATH_MAX];
	char wrk[PATH_MAX];
	int nginx_disabled;
	size_t leaves;
	size_t paths;
	unsigned connections;
	unsigned wrk_threads;
	unsigned threads; /* dirauthd's http.threads; 0: its default */
	unsigned seconds;
	unsigned rounds; /* wrk runs per target and server, alternating; the best of each counts */
	double proof_seconds;
	unsigned anchor_seconds;
};

/* A figure measured in this process: its rate and its anchor's. */
struct figure {
	const char *name;
	const char *anchor_name;
	double rate, anchor;
	char load[64];
};

/* A served target: its paths, the bytes of each, and the two wrk runs. */
struct target {
	const char *name;
	char **paths;
	size_t count;
	size_t min_bytes;
	char script[PATH_MAX];
	struct harness_wrk_result dirauthd, nginx; /* the fastest run of each */
	/* Each server's CPU seconds over all its runs, and the answers those runs counted. */
	double dirauthd_cpu, nginx_cpu;
	uint64_t dirauthd_answers, nginx_answers;
	char load[64];
};

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: bench_log_serve [options]\n"
	    "  --leaves N          leaves of the log (default 1000000)\n"
	    "  --paths P           distinct random paths per served target (default 1000)\n"
	    "  --connections C     wrk connections, kept alive (default 32)\n"
	    "  --wrk-threads T     wrk threads (default 2)\n"
	    "  --threads N         dirauthd's http.threads (default: dirauthd's default; nginx runs\n"
	    "                      worker_processes auto, one per online core)\n"
	    "  --seconds S         wrk duration per target, server and round (default 5)\n"
	    "  --rounds R          wrk runs per target and server, alternating between the servers;\n"
	    "                      the fastest of each server counts (default 3)\n"
	    "  --proof-seconds S   duration of each in-process proof figure (default 2)\n"
	    "  --dirauthd PATH     the dirauthd binary (default: ../server/dirauthd next to this program)\n"
	    "  --signer PATH       the dirauth-signer binary (default: ../signer/dirauth-signer)\n"
	    "  --nginx PATH        the nginx binary (default: looked up in PATH and /usr/sbin)\n"
	    "  --no-nginx          skip the nginx anchor\n"
	    "  --wrk PATH          the wrk binary (default: looked up in PATH)\n"
	    "  --temp-dir DIR      where the store and the nginx root go (default $TMPDIR or /tmp)\n");
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
	    HARNESS_OPTION_COUNT("--leaves", &o->leaves, 2 * BENCH_CHECKPOINTS, 100000000),
	    HARNESS_OPTION_COUNT("--paths", &o->paths, 1, 100000),
	    HARNESS_OPTION_UNSIGNED("--connections", &o->connections, 1, 1000),
	    HARNESS_OPTION_UNSIGNED("--wrk-threads", &o->wrk_threads, 1, 64),
	    HARNESS_OPTION_UNSIGNED("--threads", &o->threads, 1, 256),
	    HARNESS_OPTION_UNSIGNED("--seconds", &o->seconds, 1, 3600),
	    HARNESS_OPTION_UNSIGNED("--rounds", &o->rounds, 1, 100),
	    HARNESS_OPTION_UNSIGNED("--anchor-seconds", &o->anchor_seconds, 1, 60),
	    HARNESS_OPTION_SECONDS("--proof-seconds", &o->proof_seconds),
	};
	memset(o, 0, sizeof(*o));
	harness_program_defaults(&programs);
	o->leaves = 1000000;
	o->paths = 1000;
	o->connections = 32;
	o->wrk_threads = 2;
	o->threads = 0; /* dirauthd's own default */
	o->seconds = 5;
	o->rounds = 3;
	o->proof_seconds = 2;
	o->anchor_seconds = 2;
	if (harness_parse_options("bench_log_serve", argc, argv, options,
	                          sizeof(options) / sizeof(options[0]), &programs, usage) != 0)
		return -1;
	if (o->wrk_threads > o->connections)
		o->wrk_threads = o->connections;
	if (harness_programs_check("bench_log_serve", o->dirauthd, o->signer) != 0)
		return -1;
	return 0;
}

/* xorshift64*, seeded: the random paths and sizes. */
static uint64_t next_random(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 2685821657736338717ULL;
}

/* CPU seconds of process pid and of its children (nginx's workers under its master). */
static double server_cpu(pid_t pid)
{
	double total = harness_process_cpu(pid);
	DIR *proc = opendir("/proc");
	struct dirent *entry;
	while (proc && (entry = readdir(proc))) {
		char path[300], text[512];
		if (entry->d_name[0] < '1' || entry->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/stat", entry->d_name);
		FILE *file = fopen(path, "r");
		if (!file)
			continue;
		size_t n = fread(text, 1, sizeof text - 1, file);
		fclose(file);
		text[n] = 0;
		char *p = strrchr(text, ')');
		int parent = 0;
		if (p && sscanf(p + 2, "%*c %d", &parent) == 1 && parent == (int)pid)
			total += harness_process_cpu((pid_t)atoi(entry->d_name));
	}
	if (proc)
		closedir(proc);
	return total;
}

/* ---- the fill: synthetic published headers ---- */

struct filler {
	struct store *store;
	const struct config *config;
	struct signer_key *key;
	uint64_t last_epoch; /* the one header stored with its body */
	uint8_t previous[32];
};

/* Stores the published header of epoch: an empty body, chained to the previous header. */
static int store_header(struct filler *f, uint64_t epoch)
{
	const struct config_namespace *ns = &f->config->namespaces[0];
	struct snapshot_header h;
	struct epoch_times times;
	struct buffer body, text, note;
	struct note_signature signature;
	memset(&h, 0, sizeof(h));
	buffer_init(&body);
	buffer_init(&text);
	buffer_init(&note);
	snprintf(h.namespace_name, sizeof(h.namespace_name), "%s", ns->name);
	snprintf(h.origin, sizeof(h.origin), "%s", ns->origin);
	h.epoch = epoch;
	h.consensus_method = SNAPSHOT_CONSENSUS_METHOD;
	memcpy(h.previous, f->previous, 32);
	int rc = schedule_epoch_times(&f->config->epoch, epoch, &times);
	if (rc == 0) {
		h.valid_after = times.valid_after;
		h.fresh_until = times.fresh_until;
		h.valid_until = times.valid_until;
		rc = snapshot_body_encode(ns->name, epoch, NULL, 0, &body);
	}
	if (rc == 0)
		rc = snapshot_records_root(NULL, 0, h.records_root);
	if (rc == 0) {
		h.body_size = body.len;
		rc = crypto_sha256(body.data, body.len, h.body_sha256);
	}
	if (rc == 0)
		rc = snapshot_header_encode(&h, &text);
	if (rc == 0)
		rc = signer_key_sign(f->key, text.data, text.len, &signature);
	if (rc == 0)
		rc = note_format(text.data, text.len, &signature, 1, &note);
	/* Only the latest keeps its body (dirauthd serves it); the older ones are stored as though
	 * retention had removed theirs. */
	struct store_body_info info;
	struct store_body_writer *writer = NULL;
	int with_body = epoch == f->last_epoch;
	if (rc == 0 && with_body && (rc = store_body_begin(f->store, ns->name, epoch, &writer)) == 0) {
		rc = store_body_write(writer, body.data, body.len);
		if (rc == 0)
			rc = store_body_finish(writer, &info);
		else
			store_body_discard(writer);
	}
	if (rc == 0)
		rc = store_snapshot_put(f->store, ns->name, epoch, note.data, note.len,
		                        with_body ? &info : NULL);
	if (rc == 0)
		rc = snapshot_header_digest(text.data, text.len, f->previous);
	buffer_free(&body);
	buffer_free(&text);
	buffer_free(&note);
	if (rc != 0)
		harness_fail("the header of epoch %llu: %s", (unsigned long long)epoch, dirauth_strerror(rc));
	return rc == 0 ? 0 : -1;
}

/* Adds the log and cosignature keys (scripts/example-keys.sh made them) to the signer's
 * configuration. */
static int give_signer_log_keys(const struct harness_authority *authority)
{
	FILE *file = fopen(authority->signer_config_path, "a");
	if (!file || fputs("log_key: keys/log.key\ncosignature_key: keys/cosignature.key\n", file) < 0) {
		harness_fail("%s: %s", authority->signer_config_path, strerror(errno));
		if (file)
			fclose(file);
		return -1;
	}
	return fclose(file) == 0 ? 0 : -1;
}

/* 1 when something accepts connections on the UNIX socket at path. */
static int signer_listening(const char *path)
{
	struct sockaddr_un address;
	if (strlen(path) >= sizeof(address.sun_path))
		return 0;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	memset(&address, 0, sizeof(address));
	address.sun_family = AF_UNIX;
	memcpy(address.sun_path, path, strlen(path) + 1);
	int connected = connect(fd, (struct sockaddr *)&address, sizeof(address)) == 0;
	close(fd);
	return connected;
}

/* Catches the log up once; -1 (with why) unless it succeeds. */
static int catch_up(struct store *store, const struct config *config, struct signer_client *signer,
                    struct translog_outcome *outcome)
{
	int rc = translog_catch_up(store, config, signer, 0, outcome);
	if (rc != 0) {
		harness_fail("translog_catch_up: %s: %s", dirauth_strerror(rc), outcome->detail);
		return -1;
	}
	return 0;
}

/* ---- anchors and in-process figures ---- */

/* One-put write transactions committed per second, in a fresh environment under dir. */
static int kv_commit_rate(const char *dir, double seconds, double *rate)
{
	struct kv_db db;
	struct kv_database databases[] = {{"anchor", &db}};
	struct kv_env *env = NULL;
	int rc = kv_env_open(dir, (size_t)1 << 30, databases, 1, &env);
	if (rc != 0) {
		harness_fail("%s: %s", dir, dirauth_strerror(rc));
		return -1;
	}
	uint8_t key[8], value[32];
	memset(value, 0x5a, sizeof(value));
	uint64_t count = 0;
	double start = harness_now(), end = start + seconds;
	while (rc == 0 && harness_now() < end) {
		struct kv_txn t;
		kv_put_u64(key, count++);
		kv_txn_begin(env, &t, KV_WRITE);
		kv_txn_put(&t, db, key, sizeof(key), value, sizeof(value));
		rc = kv_txn_commit(&t);
	}
	*rate = (double)count / (harness_now() - start);
	kv_env_close(env);
	if (rc != 0)
		harness_fail("kv commit: %s", dirauth_strerror(rc));
	return rc == 0 ? 0 : -1;
}

/* Single stored-hash reads per second, at random leaves of a tree of size leaves. */
static int hash_read_rate(struct store *store, uint64_t size, double seconds, uint64_t *seed, double *rate)
{
	struct store_log_reader reader;
	int rc = store_log_reader_open(store, HARNESS_NAMESPACE, &reader);
	uint64_t count = 0;
	double start = harness_now(), end = start + seconds;
	while (rc == 0 && harness_now() < end) {
		merkle_hash hash;
		rc = store_log_read_hashes(&reader, 0, next_random(seed) % size, 1, &hash);
		count++;
	}
	*rate = (double)count / (harness_now() - start);
	if (rc != 0)
		harness_fail("store_log_read_hashes: %s", dirauth_strerror(rc));
	return rc == 0 ? 0 : -1;
}

/* Inclusion proof files (kind 0) of random epochs, or consistency proofs (kind 1) from random
 * sizes, to the latest checkpoint (size leaves, epochs first..), per second. */
static int proof_rate(struct store *store, int kind, uint64_t first, uint64_t size, double seconds,
                      uint64_t *seed, double *rate)
{
	struct buffer out;
	buffer_init(&out);
	int rc = 0;
	uint64_t count = 0;
	double start = harness_now(), end = start + seconds;
	while (rc == 0 && harness_now() < end) {
		/* an epoch of the log; an old size 1 .. size − 1 */
		uint64_t pick = next_random(seed) % (kind == 0 ? size : size - 1);
		rc = kind == 0
		         ? translog_inclusion_proof(store, HARNESS_NAMESPACE, first + pick, 0, &out, NULL)
		         : translog_consistency_proof(store, HARNESS_NAMESPACE, pick + 1, size, &out, NULL);
		if (rc == 0 && out.len == 0)
			rc = DIRAUTH_ERR_INTERNAL;
		count++;
	}
	*rate = (double)count / (harness_now() - start);
	buffer_free(&out);
	if (rc != 0)
		harness_fail("%s proof: %s", kind == 0 ? "inclusion" : "consistency", dirauth_strerror(rc));
	return rc == 0 ? 0 : -1;
}

/* ---- the served targets ---- */

/* Makes every missing directory of path's parent. */
static int make_parents(const char *path)
{
	char copy[2 * PATH_MAX];
	snprintf(copy, sizeof(copy), "%s", path);
	for (char *p = copy + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(copy, 0755) != 0 && errno != EEXIST) {
			harness_fail("mkdir %s: %s", copy, strerror(errno));
			return -1;
		}
		*p = '/';
	}
	return 0;
}

/* Fetches each of the target's paths from dirauthd once (a 200 of at least min_bytes; tiles of
 * exactly 8,192), writes the bytes at the same path under root (when root is not NULL), and
 * writes the wrk script that cycles through the paths. */
static int prepare_target(struct harness *harness, const struct harness_authority *authority,
                          const char *root, struct target *t)
{
	char dir[HARNESS_DIR_MAX];
	if (harness_make_temp_dir(harness->temp_parent, "wrk-script", dir) != 0)
		return -1;
	snprintf(t->script, sizeof(t->script), "%s/paths.lua", dir);
	FILE *script = fopen(t->script, "w");
	if (!script) {
		harness_fail("%s: %s", t->script, strerror(errno));
		return -1;
	}
	fprintf(script, "paths = {\n");
	int rc = 0;
	t->min_bytes = SIZE_MAX;
	for (size_t i = 0; rc == 0 && i < t->count; i++) {
		char url[512];
		long status = 0;
		struct buffer body;
		buffer_init(&body);
		snprintf(url, sizeof(url), "%s%s", authority->url, t->paths[i]);
		rc = harness_http(url, NULL, NULL, &status, &body, NULL, 0);
		int is_tile = strstr(t->paths[i], "/tile/") && !strstr(t->paths[i], "/entries/");
		if (rc != 0 || status != 200 || body.len == 0 || (is_tile && body.len != TLOG_TILE_BYTES)) {
			harness_fail("GET %s: status %ld, %zu bytes", url, status, body.len);
			rc = -1;
		}
		if (rc == 0 && root) {
			char file[PATH_MAX + 600];
			snprintf(file, sizeof(file), "%s%s", root, t->paths[i]);
			rc = make_parents(file) == 0 &&
			             harness_write_file(file, body.data, body.len, 0644) == 0
			         ? 0
			         : -1;
		}
		if (body.len < t->min_bytes)
			t->min_bytes = body.len;
		buffer_free(&body);
		fprintf(script, "  \"%s\",\n", t->paths[i]);
	}
	fprintf(script, "}\n"
	                "local threads = 0\n"
	                "function setup(thread)\n"
	                "  thread:set(\"start\", threads * 7919)\n"
	                "  threads = threads + 1\n"
	                "end\n"
	                "function init(args)\n"
	                "  i = start or 0\n"
	                "end\n"
	                "function request()\n"
	                "  i = i %% #paths + 1\n"
	                "  return wrk.format(\"GET\", paths[i])\n"
	                "end\n");
	if (fclose(script) != 0 && rc == 0) {
		harness_fail("%s: %s", t->script, strerror(errno));
		rc = -1;
	}
	return rc;
}

/* wrk's "12.34MB" into bytes. */
/* wrk with the target's script against base (http://host:port), keep-alive. */
static int run_wrk(struct harness *harness, const struct options *o, const char *base, const struct target *t,
                   struct harness_wrk_result *out)
{
	char dir[HARNESS_DIR_MAX], output[PATH_MAX], threads[16], connections[16], duration[16];
	char program[PATH_MAX], script[PATH_MAX], url[256];
	memset(out, 0, sizeof(*out));
	if (harness_make_temp_dir(harness->temp_parent, "wrk", dir) != 0)
		return -1;
	snprintf(output, sizeof(output), "%s/wrk.txt", dir);
	snprintf(program, sizeof(program), "%s", o->wrk);
	snprintf(script, sizeof(script), "%s", t->script);
	snprintf(url, sizeof(url), "%s/", base);
	snprintf(threads, sizeof(threads), "%u", o->wrk_threads);
	snprintf(connections, sizeof(connections), "%u", o->connections);
	snprintf(duration, sizeof(duration), "%us", o->seconds);
	char *argv[] = {program,     "-t",  threads, "-c",   connections, "-d", duration,
	                "--timeout", "10s", "-s",    script, url,         NULL};
	struct harness_usage usage;
	int rc = harness_run(harness, argv, NULL, output, o->seconds + 30.0, &usage);
	int have_rate = rc == 0 && harness_wrk_read(output, out);
	harness_remove_tree(dir);
	if (rc == 0 && !have_rate) {
		harness_fail("wrk printed no rate for %s on %s", t->name, base);
		rc = -1;
	}
	if (rc == 0 && out->errors) {
		harness_fail("wrk %s on %s: %llu errors or non-2xx answers", t->name, base,
		             (unsigned long long)out->errors);
		rc = -1;
	}
	/* wrk counts the bytes read, headers included: fewer than the smallest body per answer
	 * means answers were cut short. */
	if (rc == 0 && out->bytes_per_second < out->requests_per_second * (double)t->min_bytes * 0.99) {
		harness_fail("wrk %s on %s: fewer bytes per answer than the bodies", t->name, base);
		rc = -1;
	}
	return rc;
}

/* The tree size of the checkpoint dirauthd serves, once it serves one of at least size. */
static int wait_checkpoint(struct harness *harness, const struct harness_authority *authority, uint64_t size,
                           uint64_t *served)
{
	char url[256];
	snprintf(url, sizeof(url), "%s" BENCH_PREFIX "checkpoint", authority->url);
	double deadline = harness_now() + BENCH_WAIT_SECONDS;
	while (harness_now() < deadline && !harness_stopped(harness)) {
		long status = 0;
		struct buffer body;
		struct note *note = NULL;
		struct checkpoint checkpoint;
		buffer_init(&body);
		int ok = harness_http(url, NULL, NULL, &status, &body, NULL, 0) == 0 && status == 200 &&
		         note_parse(body.data, body.len, &note) == 0 &&
		         checkpoint_parse(note->text, note->text_len, &checkpoint) == 0;
		note_free(note);
		buffer_free(&body);
		if (ok && checkpoint.tree_size >= size) {
			*served = checkpoint.tree_size;
			return 0;
		}
		harness_sleep_ms(100);
	}
	harness_fail("dirauthd served no checkpoint of %llu leaves", (unsigned long long)size);
	return -1;
}

static char *proof_path(uint64_t epoch)
{
	char text[128];
	snprintf(text, sizeof(text), BENCH_PREFIX "proof/%llu", (unsigned long long)epoch);
	return strdup(text);
}

static char *consistency_path(uint64_t old_size, uint64_t size)
{
	char text[128];
	snprintf(text, sizeof(text), BENCH_PREFIX "consistency/%llu/%llu", (unsigned long long)old_size,
	         (unsigned long long)size);
	return strdup(text);
}

static char *tile_path(enum tlog_tile_kind kind, uint8_t level, uint64_t index)
{
	struct tlog_tile tile = {.kind = kind, .level = level, .index = index, .width = TLOG_TILE_WIDTH};
	char path[TLOG_TILE_PATH_MAX + 1];
	if (tlog_tile_path_format(&tile, path) != 0)
		return NULL;
	char text[TLOG_TILE_PATH_MAX + sizeof(BENCH_PREFIX)];
	snprintf(text, sizeof(text), BENCH_PREFIX "%s", path);
	return strdup(text);
}

static void print_figures(const struct options *o, uint64_t size, const char *filesystem,
                          const struct figure *figures, size_t figure_count, const struct target *targets,
                          size_t target_count, int nginx)
{
	printf("\ndirauth log: %llu leaves, %ld online cores, store on %s\n", (unsigned long long)size,
	       sysconf(_SC_NPROCESSORS_ONLN), filesystem);
	printf("%-34s %14s %14s  %-34s %8s  %s\n", "figure", "value /s", "anchor /s", "anchor", "ratio",
	       "load average");
	for (size_t i = 0; i < figure_count; i++) {
		const struct figure *f = &figures[i];
		printf("%-34s %14.1f %14.1f  %-34s %8.4f  %s\n", f->name, f->rate, f->anchor, f->anchor_name,
		       f->anchor > 0 ? f->rate / f->anchor : 0, f->load);
	}
	char threads[32] = "its default http.threads";
	if (o->threads)
		snprintf(threads, sizeof threads, "%u http.threads", o->threads);
	printf("\nserving: wrk -t %u -c %u -d %us (keep-alive), the fastest of %u runs each, alternating, "
	       "%zu random paths per target, the same paths and bytes for both, client on the same "
	       "machine; dirauthd with %s, nginx with worker_processes auto (%ld)\n",
	       o->wrk_threads, o->connections, o->seconds, o->rounds, o->paths, threads,
	       sysconf(_SC_NPROCESSORS_ONLN));
	harness_print_anchor_head(34);
	for (size_t i = 0; i < target_count; i++) {
		const struct target *t = &targets[i];
		if (t->count)
			harness_print_anchor_row(34, t->name, t->min_bytes, &t->dirauthd,
			                         nginx ? &t->nginx : NULL, t->load);
	}
	if (!nginx) {
		printf("\nthe nginx anchor was skipped\n");
		return;
	}
	printf("\nserver CPU per answer over all runs (the servers' own CPU time, client excluded)\n");
	printf("%-34s %14s %14s %8s\n", "target", "dirauthd us", "nginx us", "ratio");
	for (size_t i = 0; i < target_count; i++) {
		const struct target *t = &targets[i];
		if (!t->count || !t->dirauthd_answers || !t->nginx_answers)
			continue;
		double mine = 1e6 * t->dirauthd_cpu / (double)t->dirauthd_answers;
		double theirs = 1e6 * t->nginx_cpu / (double)t->nginx_answers;
		printf("%-34s %14.1f %14.1f %8.3f\n", t->name, mine, theirs, mine > 0 ? theirs / mine : 0);
	}
}

int main(int argc, char **argv)
{
	struct harness harness;
	struct options o;
	struct harness_authority authority;
	struct harness_nginx nginx;
	struct config *config = NULL;
	struct store *store = NULL;
	struct signer_client *signer = NULL;
	struct filler filler;
	struct figure figures[5];
	struct target targets[BENCH_TARGETS];
	int rc = 1;
	memset(&harness, 0, sizeof(harness));
	memset(&authority, 0, sizeof(authority));
	memset(&nginx, 0, sizeof(nginx));
	memset(&filler, 0, sizeof(filler));
	memset(figures, 0, sizeof(figures));
	memset(targets, 0, sizeof(targets));
	if (parse_options(argc, argv, &o, &harness) != 0)
		return 2;
	if (harness_start(&harness) != 0)
		goto done;
	if ((rc = harness_require_wrk("bench_log_serve", o.wrk)) != 0)
		goto done;
	rc = 1;
	int have_nginx = !o.nginx_disabled && (o.nginx[0] || harness_find_program("nginx", o.nginx) == 0);
	uint64_t seed = 0x9e3779b97f4a7c15ULL;

	/* 1. The authority's directory, its signer with the log keys. */
	char http_keys[32];
	snprintf(http_keys, sizeof http_keys, "threads: %u", o.threads);
	struct harness_authority_options authority_options = {.dirauthd = o.dirauthd,
	                                                      .signer = o.signer,
	                                                      .connections = o.connections + 16,
	                                                      .http = o.threads ? http_keys : NULL};
	struct settings_error error;
	if (harness_authority_prepare(&harness, &authority_options, &authority) != 0 ||
	    give_signer_log_keys(&authority) != 0)
		goto cleanup;
	if (config_load(authority.config_path, &config, &error) != 0) {
		harness_fail("%s:%zu: %s", authority.config_path, error.line, error.message);
		goto cleanup;
	}
	struct store_options store_options = {.path = config->data_dir};
	char key_path[PATH_MAX + 32];
	snprintf(key_path, sizeof(key_path), "%s/keys/authority1.key", authority.dir);
	if (store_open(&store_options, &store) != 0 || signer_key_load(key_path, &filler.key) != 0) {
		harness_fail("cannot open the store in %s or load %s", config->data_dir, key_path);
		goto cleanup;
	}
	filler.store = store;
	filler.config = config;
	const char *filesystem = harness_filesystem_note(config->data_dir);

	/* 2. The fill: N published headers, the last of the clock's epoch. */
	uint64_t last_epoch = authority.now / authority.epoch_length;
	uint64_t first_epoch = last_epoch - o.leaves + 1;
	filler.last_epoch = last_epoch;
	uint64_t singles = o.leaves / 10 < BENCH_CHECKPOINTS ? o.leaves / 10 : BENCH_CHECKPOINTS;
	uint64_t bulk = o.leaves - singles;
	printf("filling the store with %zu signed headers (%s)...\n", o.leaves, filesystem);
	fflush(stdout);
	double fill_start = harness_now();
	for (uint64_t i = 0; i < bulk; i++) {
		if (harness_stopped(&harness) || store_header(&filler, first_epoch + i) != 0)
			goto cleanup;
		if ((i + 1) % 100000 == 0) {
			printf("  %llu headers, %.0f s\n", (unsigned long long)(i + 1),
			       harness_now() - fill_start);
			fflush(stdout);
		}
	}
	double fill_seconds = harness_now() - fill_start;

	/* 3. The append, through the real signer. */
	char *signer_argv[] = {authority.signer_program, "--config", authority.signer_config_path, NULL};
	if (harness_child_spawn(&authority.signer, signer_argv) != 0)
		goto cleanup;
	for (int attempt = 0; attempt < 750 && !signer; attempt++) {
		if (signer_listening(authority.socket_path) &&
		    signer_client_open(authority.socket_path, 30000, &signer) != 0)
			signer = NULL;
		if (!signer)
			harness_sleep_ms(20);
	}
	if (!signer) {
		harness_fail("dirauth-signer did not listen on %s", authority.socket_path);
		harness_child_log_tail(&authority.signer);
		goto cleanup;
	}
	printf("appending %llu leaves (rounds of %d under one checkpoint each)...\n",
	       (unsigned long long)bulk, TRANSLOG_ROUND_MAX);
	fflush(stdout);
	struct translog_outcome outcome;
	harness_load_average(figures[0].load);
	double append_start = harness_now();
	uint64_t rounds = 0;
	do {
		if (harness_stopped(&harness) || catch_up(store, config, signer, &outcome) != 0)
			goto cleanup;
		rounds++;
	} while (outcome.tree_size < bulk);
	double append_seconds = harness_now() - append_start;
	figures[0] = (struct figure){.name = "append (leaves, catch-up)",
	                             .anchor_name = "LMDB one-put commits",
	                             .rate = (double)bulk / append_seconds};
	harness_load_average(figures[0].load);

	/* 4. Checkpoints of one leaf each. */
	double checkpoint_seconds = 0;
	for (uint64_t i = bulk; i < o.leaves; i++) {
		if (store_header(&filler, first_epoch + i) != 0)
			goto cleanup;
		double start = harness_now();
		if (catch_up(store, config, signer, &outcome) != 0)
			goto cleanup;
		checkpoint_seconds += harness_now() - start;
		if (outcome.appended != 1 || outcome.checkpoint_size != i + 1) {
			harness_fail("a single catch-up appended %llu leaves",
			             (unsigned long long)outcome.appended);
			goto cleanup;
		}
	}
	figures[1] = (struct figure){.name = "checkpoint (1 leaf, sign + cosign)",
	                             .anchor_name = "Ed25519 signs (openssl speed)",
	                             .rate = (double)singles / checkpoint_seconds};
	harness_load_average(figures[1].load);
	signer_client_close(signer);
	signer = NULL;
	harness_child_stop(&authority.signer);

	/* 5. Anchors and proofs in this process. */
	printf("anchors and proofs...\n");
	fflush(stdout);
	char kv_dir[PATH_MAX + 32];
	snprintf(kv_dir, sizeof(kv_dir), "%s/anchor-kv", authority.dir);
	double verify_rate = 0, sign_rate = 0;
	if (kv_commit_rate(kv_dir, o.anchor_seconds, &figures[0].anchor) != 0 ||
	    harness_openssl_ed25519(&harness, o.anchor_seconds, 1, &verify_rate, &sign_rate) != 0)
		goto cleanup;
	figures[1].anchor = sign_rate;
	harness_remove_tree(kv_dir);
	double read_rate = 0;
	if (hash_read_rate(store, o.leaves, o.proof_seconds, &seed, &read_rate) != 0)
		goto cleanup;
	figures[2] = (struct figure){.name = "inclusion proof file (in-process)",
	                             .anchor_name = "stored-hash reads (1 txn each)",
	                             .anchor = read_rate};
	figures[3] = (struct figure){.name = "consistency proof (in-process)",
	                             .anchor_name = "stored-hash reads (1 txn each)",
	                             .anchor = read_rate};
	harness_load_average(figures[2].load);
	if (proof_rate(store, 0, first_epoch, o.leaves, o.proof_seconds, &seed, &figures[2].rate) != 0)
		goto cleanup;
	harness_load_average(figures[3].load);
	if (proof_rate(store, 1, first_epoch, o.leaves, o.proof_seconds, &seed, &figures[3].rate) != 0)
		goto cleanup;
	figures[4] = (struct figure){.name = "fill (headers signed and stored)",
	                             .anchor_name = "Ed25519 signs (openssl speed)",
	                             .rate = (double)bulk / fill_seconds,
	                             .anchor = sign_rate};
	snprintf(figures[4].load, sizeof(figures[4].load), "%s", figures[0].load);
	store_close(store);
	store = NULL;

	/* 6. dirauthd on the store, nginx on the same bytes. */
	if (harness_authority_start(&authority) != 0)
		goto cleanup;
	uint64_t size = 0;
	if (wait_checkpoint(&harness, &authority, o.leaves, &size) != 0)
		goto cleanup;
	char root[PATH_MAX];
	root[0] = 0;
	if (have_nginx) {
		if (harness_nginx_start(&harness, o.nginx, &nginx, "") != 0)
			goto cleanup;
		harness_nginx_root(&nginx, root);
	}
	const char *names[BENCH_TARGETS] = {"tile level 0 (full)", "tile level 1 (full)",
	                                    "entry bundle (full)", "proof/<epoch> (inclusion file)",
	                                    "consistency/<old>/<size>"};
	uint64_t full_0 = size / TLOG_TILE_WIDTH, full_1 = size / TLOG_TILE_WIDTH / TLOG_TILE_WIDTH;
	for (size_t k = 0; k < BENCH_TARGETS; k++) {
		struct target *t = &targets[k];
		t->name = names[k];
		/* old sizes 1 .. size − 1: a consistency proof to the same size is empty */
		uint64_t range = k == 0 || k == 2 ? full_0 : k == 1 ? full_1 : k == 3 ? size : size - 1;
		if (range == 0)
			continue; /* a log too small for a full tile of level 1 */
		t->paths = calloc(o.paths, sizeof(*t->paths));
		if (!t->paths)
			goto cleanup;
		for (size_t i = 0; i < o.paths; i++) {
			uint64_t pick = next_random(&seed) % range;
			t->paths[i] = k == 0   ? tile_path(TLOG_TILE_HASHES, 0, pick)
			              : k == 1 ? tile_path(TLOG_TILE_HASHES, 1, pick)
			              : k == 2 ? tile_path(TLOG_TILE_ENTRIES, 0, pick)
			              : k == 3 ? proof_path(first_epoch + pick)
			                       : consistency_path(pick + 1, size);
			if (!t->paths[i])
				goto cleanup;
			t->count = i + 1;
		}
		printf("fetching %zu paths of %s...\n", t->count, t->name);
		fflush(stdout);
		if (prepare_target(&harness, &authority, have_nginx ? root : NULL, t) != 0)
			goto cleanup;
	}
	for (size_t k = 0; k < BENCH_TARGETS; k++) {
		struct target *t = &targets[k];
		if (!t->count)
			continue;
		char nginx_url[64];
		snprintf(nginx_url, sizeof(nginx_url), "http://127.0.0.1:%u", nginx.port);
		printf("wrk: %s...\n", t->name);
		fflush(stdout);
		harness_load_average(t->load);
		/* Alternating, so that a change in the machine's other load falls on both; other work
		 * can only slow a run down, so the fastest run of each server is its figure. */
		for (unsigned round = 0; round < o.rounds; round++) {
			struct harness_wrk_result run;
			double cpu = server_cpu(authority.dirauthd.pid);
			if (run_wrk(&harness, &o, authority.url, t, &run) != 0)
				goto cleanup;
			t->dirauthd_cpu += server_cpu(authority.dirauthd.pid) - cpu;
			t->dirauthd_answers += run.requests;
			if (run.requests_per_second > t->dirauthd.requests_per_second)
				t->dirauthd = run;
			if (!have_nginx)
				continue;
			cpu = server_cpu(nginx.child.pid);
			if (run_wrk(&harness, &o, nginx_url, t, &run) != 0)
				goto cleanup;
			t->nginx_cpu += server_cpu(nginx.child.pid) - cpu;
			t->nginx_answers += run.requests;
			if (run.requests_per_second > t->nginx.requests_per_second)
				t->nginx = run;
		}
	}
	print_figures(&o, size, filesystem, figures, 5, targets, BENCH_TARGETS, have_nginx);
	printf("append: %llu calls of translog_catch_up, %.1f s; fill %.1f s\n", (unsigned long long)rounds,
	       append_seconds, fill_seconds);
	rc = 0;
cleanup:
	harness_nginx_stop(&nginx);
	signer_client_close(signer);
	store_close(store);
	harness_authority_stop(&authority);
	signer_key_free(filler.key);
	config_free(config);
	for (size_t k = 0; k < BENCH_TARGETS; k++) {
		for (size_t i = 0; i < targets[k].count; i++)
			free(targets[k].paths[i]);
		free(targets[k].paths);
		if (targets[k].script[0]) {
			char *slash = strrchr(targets[k].script, '/');
			*slash = 0;
			harness_remove_tree(targets[k].script);
		}
	}
done:
	harness_finish(&harness);
	if (rc != 0 && rc != BENCH_SKIPPED)
		fprintf(stderr, "bench: FAILED\n");
	return rc;
}
