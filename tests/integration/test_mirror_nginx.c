/*
 * test_mirror_nginx.c: a tree kept by `dirauthctl mirror`, served by Debian's nginx with the
 * shipped deploy/nginx/dirauth-mirror.conf, answers as the authority does.
 *
 * A real dirauthd and dirauth-signer (tests/harness/mirror_authority.h) publish four epochs; the
 * mirror takes the first, then two at once (the epoch between walked and kept), then the fourth,
 * into a world-readable tree. nginx runs the shipped server block with only what a deployment
 * substitutes changed (the listen address, root, error_log; the TLS lines left out). Then:
 *   - the bytes: every kept epoch's header, its body in identity, gzip and zstd (the encoding
 *     named alike, the bytes the same), latest, the certificates, the checkpoint, the tiles and
 *     bundles, the proof of each kept epoch and the consistency proofs are the authority's, with
 *     the same Content-Type; the caching is the shipped one (immutable for what never changes,
 *     10 s for the pointers) and every body answer varies on Accept-Encoding;
 *   - the diffs: the diff to the latest body from each kept one is the authority's, byte for byte
 *     in identity (one spelling) and in gzip and zstd, cached as immutable, varying on
 *     Accept-Encoding;
 *   - the record shards: every shard of the latest epoch is the authority's, byte for byte,
 *     cached as immutable; `dirauthctl lookup` against nginx verifies a present service (exit 0)
 *     and an absent one (exit 1); a shard not kept is dirauthd's no_record_shard answer and a
 *     malformed name its record_shard_malformed answer, byte for byte;
 *   - the errors: an epoch not kept is dirauthd's 404 JSON answer, never cached; a diff not
 *     offered is dirauthd's 404 no_diff answer, byte for byte; a POST is 405;
 *   - the clients: `dirauthctl fetch` (with the log) holding the previous epoch rebuilds the new
 *     body from nginx's diff; `dirauthctl monitor` and `dirauthctl proof` then `dirauthctl verify`
 *     succeed against nginx as against an authority;
 *   - a mirror of the mirror: `dirauthctl mirror --server <nginx>` takes the next epoch as a diff
 *     from nginx, serves its own diff, and writes a tree whose every file is the first tree's.
 * Skipped (77) when nginx is not installed (scripts/setup.sh installs it).
 */
#include "test_support.h"
#include "tests/harness/mirror_authority.h"
#include "tests/support/test_programs.h"

#include "base/buffer.h"
#include "schema/checkpoint.h"
#include "schema/note.h"
#include "schema/encoding.h"
#include "schema/record_shard.h"
#include "schema/snapshot.h"

#include <check.h>
#include <curl/curl.h>

#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define E0 MIRROR_AUTHORITY_FIRST_EPOCH

/* ---- HTTP with the answer's headers ---- */

struct answer {
	long status;
	struct buffer body;
	char content_type[128], content_encoding[64], cache_control[128], vary[128], allow[64];
};

static size_t take_body(char *data, size_t size, size_t count, void *context)
{
	struct answer *answer = context;
	ck_assert(buffer_append(&answer->body, (const uint8_t *)data, size * count) == 0);
	return size * count;
}

static void header_value(const char *line, size_t len, const char *name, char *out, size_t cap)
{
	size_t name_len = strlen(name);
	if (len <= name_len + 1 || strncasecmp(line, name, name_len) != 0 || line[name_len] != ':')
		return;
	const char *value = line + name_len + 1;
	size_t value_len = len - name_len - 1;
	while (value_len > 0 && (*value == ' ' || *value == '\t'))
		value++, value_len--;
	while (value_len > 0 && (value[value_len - 1] == '\r' || value[value_len - 1] == '\n'))
		value_len--;
	snprintf(out, cap, "%.*s", (int)value_len, value);
}

static size_t take_header(char *data, size_t size, size_t count, void *context)
{
	struct answer *answer = context;
	size_t len = size * count;
	header_value(data, len, "Content-Type", answer->content_type, sizeof(answer->content_type));
	header_value(data, len, "Content-Encoding", answer->content_encoding,
	             sizeof(answer->content_encoding));
	header_value(data, len, "Cache-Control", answer->cache_control, sizeof(answer->cache_control));
	header_value(data, len, "Vary", answer->vary, sizeof(answer->vary));
	header_value(data, len, "Allow", answer->allow, sizeof(answer->allow));
	return len;
}

/* method GET or POST on base + path, with Accept-Encoding when given (curl decodes nothing). */
static void request(const char *method, const char *base, const char *path, const char *accept_encoding,
                    struct answer *answer)
{
	char url[512], accept[128];
	struct curl_slist *headers = NULL;
	memset(answer, 0, sizeof(*answer));
	buffer_init(&answer->body);
	snprintf(url, sizeof(url), "%s%s", base, path);
	CURL *curl = curl_easy_init();
	ck_assert(curl != NULL);
	if (accept_encoding != NULL) {
		snprintf(accept, sizeof(accept), "Accept-Encoding: %s", accept_encoding);
		headers = curl_slist_append(headers, accept);
		curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	}
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
	if (strcmp(method, "POST") == 0)
		curl_easy_setopt(curl, CURLOPT_POSTFIELDS, "x");
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, take_body);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, answer);
	curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, take_header);
	curl_easy_setopt(curl, CURLOPT_HEADERDATA, answer);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT, 30L);
	ck_assert_msg(curl_easy_perform(curl) == CURLE_OK, "%s %s failed", method, url);
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &answer->status);
	curl_easy_cleanup(curl);
	curl_slist_free_all(headers);
}

/* The authority's answer and nginx's for path are the same bytes and type; returns nginx's. */
static void same_as_authority(const char *authority, const char *nginx, const char *path,
                              const char *accept_encoding, struct answer *served)
{
	struct answer original;
	request("GET", authority, path, accept_encoding, &original);
	request("GET", nginx, path, accept_encoding, served);
	ck_assert_msg(original.status == 200, "%s from the authority: %ld", path, original.status);
	ck_assert_msg(served->status == 200, "%s from nginx: %ld", path, served->status);
	ck_assert_msg(original.body.len == served->body.len &&
	                  memcmp(original.body.data, served->body.data, original.body.len) == 0,
	              "%s (%s): nginx serves other bytes", path, accept_encoding ? accept_encoding : "-");
	ck_assert_msg(strcasecmp(original.content_type, served->content_type) == 0,
	              "%s: Content-Type %s, not %s", path, served->content_type, original.content_type);
	ck_assert_msg(strcmp(original.content_encoding, served->content_encoding) == 0,
	              "%s (%s): Content-Encoding '%s', not '%s'", path,
	              accept_encoding ? accept_encoding : "-", served->content_encoding,
	              original.content_encoding);
	buffer_free(&original.body);
}

static void expect_cache(const char *nginx, const char *path, const char *cache_control)
{
	struct answer served;
	request("GET", nginx, path, NULL, &served);
	ck_assert_msg(strcmp(served.cache_control, cache_control) == 0, "%s: Cache-Control '%s'", path,
	              served.cache_control);
	buffer_free(&served.body);
}

/* ---- nginx with the shipped configuration ---- */

struct nginx {
	char dir[LAUNCHER_PATH_MAX];
	char url[64];
	pid_t pid;
};

/* The shipped server block with what a deployment substitutes: one line each, which must be
 * there. */
static void derive_configuration(const char *tree, const char *dir, unsigned port, struct buffer *out)
{
	size_t len = 0;
	char *shipped = (char *)test_read_file(test_source_path("deploy/nginx/dirauth-mirror.conf"), &len);
	int listen = 0, root = 0, error_log = 0;
	for (char *line = shipped; line < shipped + len;) {
		char *end = memchr(line, '\n', (size_t)(shipped + len - line));
		size_t line_len = end ? (size_t)(end - line) : (size_t)(shipped + len - line);
		char text[1024];
		snprintf(text, sizeof(text), "%.*s", (int)line_len, line);
		const char *word = text + strspn(text, " \t");
		if (strcmp(word, "listen 80;") == 0) {
			ck_assert(buffer_appendf(out, "\tlisten 127.0.0.1:%u;\n", port) == 0);
			listen = 1;
		} else if (strncmp(word, "listen ", 7) == 0 || strncmp(word, "ssl_", 4) == 0) {
			/* The TLS and IPv6 listens: a test listens on loopback, in plain HTTP. */
		} else if (strcmp(word, "root /srv/dirauth;") == 0) {
			ck_assert(buffer_appendf(out, "\troot %s;\n", tree) == 0);
			root = 1;
		} else if (strncmp(word, "error_log ", 10) == 0) {
			ck_assert(buffer_appendf(out, "\terror_log %s/mirror.error.log crit;\n", dir) == 0);
			error_log = 1;
		} else {
			ck_assert(buffer_appendf(out, "%s\n", text) == 0);
		}
		line += line_len + 1;
	}
	free(shipped);
	ck_assert_msg(listen && root && error_log,
	              "the shipped configuration lacks a line the test substitutes");
}

static void nginx_start(struct nginx *n, const char *program, const char *tree, const char *run_dir)
{
	struct buffer conf;
	char path[LAUNCHER_PATH_MAX + 32];
	unsigned port = test_free_port();
	snprintf(n->dir, sizeof(n->dir), "%s/nginx", run_dir);
	ck_assert(mkdir(n->dir, 0755) == 0);
	snprintf(n->url, sizeof(n->url), "http://127.0.0.1:%u", port);
	buffer_init(&conf);
	derive_configuration(tree, n->dir, port, &conf);
	snprintf(path, sizeof(path), "%s/dirauth-mirror.conf", n->dir);
	test_write_file(path, conf.data, conf.len, 0644);
	buffer_reset(&conf);
	ck_assert(test_nginx_user(&conf) == 0);
	ck_assert(buffer_appendf(&conf,
	                         "daemon off;\nmaster_process on;\nworker_processes 1;\npid %s/nginx.pid;\n"
	                         "error_log %s/error.log;\nevents { worker_connections 64; }\nhttp {\n",
	                         n->dir, n->dir) == 0);
	ck_assert(test_nginx_temp_paths(program, n->dir, &conf) == 0);
	ck_assert(buffer_appendf(&conf, "include %s/dirauth-mirror.conf;\n}\n", n->dir) == 0);
	snprintf(path, sizeof(path), "%s/nginx.conf", n->dir);
	test_write_file(path, conf.data, conf.len, 0644);
	buffer_free(&conf);
	char prefix[LAUNCHER_PATH_MAX + 2], error_log[LAUNCHER_PATH_MAX + 32], log[LAUNCHER_PATH_MAX + 32];
	snprintf(prefix, sizeof(prefix), "%s/", n->dir);
	snprintf(error_log, sizeof(error_log), "%s/error.log", n->dir);
	snprintf(log, sizeof(log), "%s/nginx.out", n->dir);
	char *argv[] = {(char *)program, "-p", prefix, "-e", error_log, "-c", path, NULL};
	n->pid = test_spawn(argv, log);
	for (int i = 0; i < 500; i++) {
		struct answer answer;
		CURL *probe = curl_easy_init();
		curl_easy_setopt(probe, CURLOPT_URL, n->url);
		curl_easy_setopt(probe, CURLOPT_NOBODY, 1L);
		curl_easy_setopt(probe, CURLOPT_TIMEOUT, 1L);
		CURLcode rc = curl_easy_perform(probe);
		curl_easy_cleanup(probe);
		if (rc == CURLE_OK) {
			request("GET", n->url, "/v1/mix/snapshots/latest", NULL, &answer);
			ck_assert_msg(answer.status == 200, "nginx answers latest with %ld; see %s",
			              answer.status, error_log);
			buffer_free(&answer.body);
			return;
		}
		test_sleep_ms(20);
	}
	ck_abort_msg("nginx does not answer; see %s", error_log);
}

/* ---- the test ---- */

/* `dirauthctl fetch` with args succeeds and says it rebuilt the body from a diff. */
static void expect_rebuilt_from_diff(const char *work, const char *const *args)
{
	struct test_outcome outcome;
	test_run_program(test_binary_path("ctl/dirauthctl"), args, work, &outcome);
	ck_assert_msg(outcome.status == 0, "fetch: %d\n%s%s", outcome.status, outcome.out, outcome.err);
	ck_assert_msg(strstr(outcome.out, "body: rebuilt from a diff of") != NULL, "fetch: %s", outcome.out);
	test_outcome_free(&outcome);
}

static int run_ctl(const char *work, const char *const *args)
{
	struct test_outcome outcome;
	test_run_program(test_binary_path("ctl/dirauthctl"), args, work, &outcome);
	int status = outcome.status;
	if (status != 0)
		fprintf(stderr, "dirauthctl %s: %d\n%s%s", args[0], status, outcome.out, outcome.err);
	test_outcome_free(&outcome);
	return status;
}

static uint64_t served_size(const char *base)
{
	struct answer answer;
	struct note *note = NULL;
	struct checkpoint checkpoint;
	request("GET", base, "/v1/mix/log/checkpoint", NULL, &answer);
	ck_assert(note_parse(answer.body.data, answer.body.len, &note) == 0);
	ck_assert(checkpoint_parse(note->text, note->text_len, &checkpoint) == 0);
	note_free(note);
	buffer_free(&answer.body);
	return checkpoint.tree_size;
}

START_TEST(test_nginx_serves_the_mirror_as_the_authority)
{
	struct mirror_authority a;
	struct nginx n;
	char program[PATH_MAX], tree[LAUNCHER_PATH_MAX], log[LAUNCHER_PATH_MAX], path[256];
	ck_assert(test_program_find("nginx", program) == 0);
	mode_t old_mask = umask(022); /* nginx's workers run as nobody: the tree is world-readable */

	mirror_authority_start(&a);
	snprintf(tree, sizeof(tree), "%s/tree", a.run.dir);
	snprintf(log, sizeof(log), "%s/mirror.log", a.run.dir);
	mirror_authority_publish(&a, E0);
	ck_assert_int_eq(mirror_authority_run_mirror(&a, a.run.url, tree, log), 0);
	mirror_authority_register(&a, 12); /* bodies whose diffs are worth offering */
	mirror_authority_publish(&a, E0 + 1);
	mirror_authority_publish(&a, E0 + 2);
	ck_assert_int_eq(mirror_authority_run_mirror(&a, a.run.url, tree, log), 0);
	/* A client holding epoch E0 + 2, fetched from the authority. */
	char fetched[LAUNCHER_PATH_MAX + 16], now[32];
	snprintf(fetched, sizeof(fetched), "%s/fetched", a.run.dir);
	snprintf(now, sizeof(now), "%" PRIu64, a.now);
	const char *fetch[] = {"fetch",       "--trust",
	                       a.bundle_path, "--server",
	                       a.run.url,     "--namespace",
	                       "mix",         "--out",
	                       fetched,       "--now",
	                       now,           "--log-key",
	                       a.log_key,     "--witness-key",
	                       a.witness_key, "--witness-threshold",
	                       "1",           NULL};
	ck_assert_int_eq(run_ctl(a.run.dir, fetch), 0);
	mirror_authority_publish(&a, E0 + 3);
	char bases[2][65];
	struct buffer authority_diff;
	buffer_init(&authority_diff);
	mirror_authority_body_sha256(&a, E0 + 1, bases[0]);
	mirror_authority_body_sha256(&a, E0 + 2, bases[1]);
	mirror_authority_wait_for_diff(&a, E0 + 3, bases[0], &authority_diff);
	mirror_authority_wait_for_diff(&a, E0 + 3, bases[1], &authority_diff);
	buffer_free(&authority_diff);
	ck_assert_int_eq(mirror_authority_run_mirror(&a, a.run.url, tree, log), 0);
	nginx_start(&n, program, tree, a.run.dir);

	/* The bytes. Epochs E0 + 1 .. E0 + 3 are still valid, E0 was pruned. */
	struct answer served;
	same_as_authority(a.run.url, n.url, "/v1/certificates", NULL, &served);
	buffer_free(&served.body);
	same_as_authority(a.run.url, n.url, "/v1/mix/snapshots/latest", NULL, &served);
	ck_assert_str_eq(served.cache_control, "public, max-age=10");
	buffer_free(&served.body);
	same_as_authority(a.run.url, n.url, "/v1/mix/log/checkpoint", NULL, &served);
	buffer_free(&served.body);
	for (uint64_t epoch = E0 + 1; epoch <= E0 + 3; epoch++) {
		static const char *const encodings[] = {"identity", "gzip", "zstd", "zstd, gzip",
		                                        "gzip, zstd;q=0"};
		snprintf(path, sizeof(path), "/v1/mix/snapshots/%" PRIu64, epoch);
		same_as_authority(a.run.url, n.url, path, NULL, &served);
		ck_assert_str_eq(served.cache_control, "public, max-age=31536000, immutable");
		buffer_free(&served.body);
		snprintf(path, sizeof(path), "/v1/mix/snapshots/%" PRIu64 "/body", epoch);
		for (size_t e = 0; e < sizeof(encodings) / sizeof(encodings[0]); e++) {
			same_as_authority(a.run.url, n.url, path, encodings[e], &served);
			ck_assert_str_eq(served.cache_control, "public, max-age=31536000, immutable");
			ck_assert_str_eq(served.vary, "Accept-Encoding");
			buffer_free(&served.body);
		}
		snprintf(path, sizeof(path), "/v1/mix/log/proof/%" PRIu64, epoch);
		same_as_authority(a.run.url, n.url, path, NULL, &served);
		buffer_free(&served.body);
	}
	uint64_t size = served_size(a.run.url);
	ck_assert_uint_eq(served_size(n.url), size);
	snprintf(path, sizeof(path), "/v1/mix/log/proof/%" PRIu64 "/%" PRIu64, E0 + 3, size);
	same_as_authority(a.run.url, n.url, path, NULL, &served);
	buffer_free(&served.body);
	snprintf(path, sizeof(path), "/v1/mix/log/tile/0/000.p/%" PRIu64, size);
	same_as_authority(a.run.url, n.url, path, NULL, &served);
	ck_assert_str_eq(served.cache_control, "public, max-age=31536000, immutable");
	buffer_free(&served.body);
	snprintf(path, sizeof(path), "/v1/mix/log/tile/entries/000.p/%" PRIu64, size);
	same_as_authority(a.run.url, n.url, path, NULL, &served);
	buffer_free(&served.body);
	for (uint64_t old = 1; old < size; old++) {
		snprintf(path, sizeof(path), "/v1/mix/log/consistency/%" PRIu64 "/%" PRIu64, old, size);
		same_as_authority(a.run.url, n.url, path, NULL, &served);
		ck_assert_str_eq(served.cache_control, "public, max-age=31536000, immutable");
		buffer_free(&served.body);
	}
	expect_cache(n.url, "/v1/mix/log/checkpoint", "public, max-age=10");
	/* The diffs to the latest body from each kept one: one spelling, the authority's bytes, served
	 * like a body. */
	for (size_t b = 0; b < 2; b++) {
		static const char *const encodings[] = {"identity", "gzip", "zstd", "zstd, gzip"};
		snprintf(path, sizeof(path), "/v1/mix/snapshots/%" PRIu64 "/diff/%s", E0 + 3, bases[b]);
		for (size_t e = 0; e < sizeof(encodings) / sizeof(encodings[0]); e++) {
			same_as_authority(a.run.url, n.url, path, encodings[e], &served);
			ck_assert_str_eq(served.cache_control, "public, max-age=31536000, immutable");
			ck_assert_str_eq(served.vary, "Accept-Encoding");
			buffer_free(&served.body);
		}
	}

	/* The record shards of the latest epoch: the authority's bytes, once it has built them. */
	snprintf(path, sizeof(path), "/v1/mix/snapshots/%" PRIu64, E0 + 3);
	request("GET", a.run.url, path, NULL, &served);
	struct note *latest_note = NULL;
	struct snapshot_header latest;
	ck_assert(note_parse(served.body.data, served.body.len, &latest_note) == 0);
	ck_assert(snapshot_header_parse(latest_note->text, latest_note->text_len, &latest) == 0);
	note_free(latest_note);
	buffer_free(&served.body);
	unsigned bits;
	ck_assert(record_shard_bits(latest.record_count, &bits) == 0);
	char shard_name[RECORD_SHARD_NAME_MAX + 1];
	uint8_t present_id[32] = {0}, absent_id[32];
	for (uint32_t index = 0; index < (UINT32_C(1) << bits); index++) {
		ck_assert(record_shard_name(index, bits, shard_name) == 0);
		snprintf(path, sizeof(path), "/v1/mix/snapshots/%" PRIu64 "/records/%s", E0 + 3, shard_name);
		for (int attempt = 0; attempt < 500; attempt++) {
			request("GET", a.run.url, path, NULL, &served);
			if (served.status == 200)
				break;
			buffer_free(&served.body);
			test_sleep_ms(20);
		}
		buffer_free(&served.body);
		same_as_authority(a.run.url, n.url, path, NULL, &served);
		ck_assert_str_eq(served.cache_control, "public, max-age=31536000, immutable");
		struct record_shard *parsed = NULL;
		ck_assert(record_shard_parse(served.body.data, served.body.len, &parsed) == 0);
		for (size_t r = 0; r < parsed->run_count; r++)
			if (record_shard_of(parsed->records[r].service_id, bits) == index)
				memcpy(present_id, parsed->records[r].service_id, 32);
		record_shard_free(parsed);
		buffer_free(&served.body);
	}
	memcpy(absent_id, present_id, 32);
	absent_id[31] ^= 1; /* between the records, or next to one: not a record of a dozen */
	char present_hex[65], absent_hex[65];
	hex_encode(present_id, 32, present_hex);
	hex_encode(absent_id, 32, absent_hex);
	snprintf(now, sizeof(now), "%" PRIu64, a.now);
	const char *lookup[] = {"lookup", "--trust", a.bundle_path, "--server",  n.url, "--namespace",
	                        "mix",    "--now",   now,           present_hex, NULL};
	ck_assert_int_eq(run_ctl(a.run.dir, lookup), 0);
	lookup[9] = absent_hex;
	struct test_outcome looked_up;
	test_run_program(test_binary_path("ctl/dirauthctl"), lookup, a.run.dir, &looked_up);
	ck_assert_msg(looked_up.status == 1 && strstr(looked_up.out, "absent: no record between") != NULL,
	              "lookup of an absent service: %d\n%s%s", looked_up.status, looked_up.out,
	              looked_up.err);
	test_outcome_free(&looked_up);
	static const char *const shard_errors[] = {"records/0000000", "records/X"};
	for (size_t i = 0; i < 3; i++) {
		struct answer from_authority;
		if (i < 2)
			snprintf(path, sizeof(path), "/v1/mix/snapshots/%" PRIu64 "/%s", E0 + 3,
			         shard_errors[i]);
		else
			snprintf(path, sizeof(path), "/v1/mix/snapshots/%" PRIu64 "/records/0", E0 + 9);
		request("GET", a.run.url, path, NULL, &from_authority);
		request("GET", n.url, path, NULL, &served);
		ck_assert_int_eq(served.status, from_authority.status);
		ck_assert_msg(i == 2 ||
		                  (served.body.len == from_authority.body.len &&
		                   memcmp(served.body.data, from_authority.body.data, served.body.len) == 0),
		              "%s: nginx answers %.*s", path, (int)served.body.len, served.body.data);
		buffer_free(&from_authority.body);
		buffer_free(&served.body);
	}

	/* The errors. */
	snprintf(path, sizeof(path), "/v1/mix/snapshots/%" PRIu64, E0);
	request("GET", n.url, path, NULL, &served);
	ck_assert_int_eq(served.status, 404);
	ck_assert_str_eq(served.content_type, "application/json");
	ck_assert_str_eq(served.cache_control, "no-store");
	ck_assert(served.body.len > 20 && memcmp(served.body.data, "{\"error\":\"not_found\",", 21) == 0);
	buffer_free(&served.body);
	snprintf(path, sizeof(path), "/v1/mix/snapshots/%" PRIu64 "/body", E0 + 9);
	request("GET", n.url, path, "zstd", &served);
	ck_assert_int_eq(served.status, 404);
	ck_assert_str_eq(served.vary, "Accept-Encoding");
	buffer_free(&served.body);
	/* A diff not offered: dirauthd's no_diff answer, byte for byte. */
	snprintf(path, sizeof(path), "/v1/mix/snapshots/%" PRIu64 "/diff/%064x", E0 + 3, 7u);
	struct answer from_authority;
	request("GET", a.run.url, path, "zstd", &from_authority);
	request("GET", n.url, path, "zstd", &served);
	ck_assert_int_eq(from_authority.status, 404);
	ck_assert_int_eq(served.status, 404);
	ck_assert_str_eq(served.content_type, "application/json");
	ck_assert_str_eq(served.cache_control, "no-store");
	ck_assert_str_eq(served.vary, "Accept-Encoding");
	ck_assert_msg(served.body.len == from_authority.body.len &&
	                  memcmp(served.body.data, from_authority.body.data, served.body.len) == 0,
	              "no_diff: nginx answers %.*s", (int)served.body.len, served.body.data);
	buffer_free(&from_authority.body);
	buffer_free(&served.body);
	request("GET", n.url, "/v1/mix/snapshots/%32", NULL, &served);
	ck_assert_int_eq(served.status, 404);
	buffer_free(&served.body);
	request("POST", n.url, "/v1/mix/snapshots/latest", NULL, &served);
	ck_assert_int_eq(served.status, 405);
	ck_assert_str_eq(served.allow, "GET, HEAD");
	ck_assert(memcmp(served.body.data, "{\"error\":\"method_not_allowed\",", 30) == 0);
	buffer_free(&served.body);

	/* The clients: fetch, holding E0 + 2, takes E0 + 3 as the diff nginx serves. */
	char state[LAUNCHER_PATH_MAX + 16], proof[LAUNCHER_PATH_MAX + 16],
	    certificates[LAUNCHER_PATH_MAX + 32], epoch_text[32];
	snprintf(state, sizeof(state), "%s/monitor", a.run.dir);
	snprintf(proof, sizeof(proof), "%s/latest.tlog-proof", a.run.dir);
	snprintf(certificates, sizeof(certificates), "%s/v1/certificates", tree);
	snprintf(now, sizeof(now), "%" PRIu64, a.now);
	snprintf(epoch_text, sizeof(epoch_text), "%" PRIu64, E0 + 3);
	fetch[4] = n.url;
	expect_rebuilt_from_diff(a.run.dir, fetch);
	const char *monitor[] = {
	    "monitor",   "--trust", a.bundle_path,   "--source",    n.url,
	    "--log-key", a.log_key, "--witness-key", a.witness_key, "--witness-threshold",
	    "1",         "--state", state,           NULL};
	ck_assert_int_eq(run_ctl(a.run.dir, monitor), 0);
	const char *proof_args[] = {"proof",   "--server", n.url,   "--namespace", "mix",
	                            "--epoch", epoch_text, "--out", proof,         NULL};
	ck_assert_int_eq(run_ctl(a.run.dir, proof_args), 0);
	const char *verify[] = {
	    "verify",    proof,     "--trust",       a.bundle_path, "--certificates",      certificates,
	    "--log-key", a.log_key, "--witness-key", a.witness_key, "--witness-threshold", "1",
	    NULL};
	ck_assert_int_eq(run_ctl(a.run.dir, verify), 0);

	/* A mirror of the mirror: it takes the next epoch as a diff from nginx, builds its own diffs,
	 * and each file it writes is the first tree's. */
	char second[LAUNCHER_PATH_MAX + 16], second_log[LAUNCHER_PATH_MAX + 16];
	snprintf(second, sizeof(second), "%s/second", a.run.dir);
	snprintf(second_log, sizeof(second_log), "%s/second.log", a.run.dir);
	ck_assert_int_eq(mirror_authority_run_mirror(&a, n.url, second, log), 0);
	mirror_authority_publish(&a, E0 + 4);
	ck_assert_int_eq(mirror_authority_run_mirror(&a, a.run.url, tree, log), 0);
	ck_assert_int_eq(mirror_authority_run_mirror(&a, n.url, second, second_log), 0);
	size_t log_len = 0;
	char *log_text = (char *)test_read_file(second_log, &log_len);
	ck_assert_msg(strstr(log_text, "body: rebuilt from a diff of") != NULL, "%s", log_text);
	free(log_text);
	char base3[65], second_diff[LAUNCHER_PATH_MAX + 256];
	mirror_authority_body_sha256(&a, E0 + 3, base3);
	snprintf(second_diff, sizeof(second_diff), "%s/v1/mix/snapshots/%" PRIu64 "/diff/%s", second, E0 + 4,
	         base3);
	ck_assert_msg(access(second_diff, F_OK) == 0, "the second mirror serves no diff %s", second_diff);
	struct buffer listing;
	buffer_init(&listing);
	mirror_tree_listing(second, &listing);
	for (const char *line = (const char *)listing.data;
	     line < (const char *)listing.data + listing.len;) {
		char name[512], first[LAUNCHER_PATH_MAX + 512];
		size_t file_len = 0, len = 0;
		ck_assert(sscanf(line, "%511s %zu", name, &file_len) == 2);
		const char *bytes = strchr(line, '\n') + 1;
		snprintf(first, sizeof(first), "%s/%s", tree, name);
		uint8_t *original = test_read_file(first, &len);
		ck_assert_msg(len == file_len && memcmp(original, bytes, len) == 0,
		              "%s differs between the mirrors", name);
		free(original);
		line = bytes + file_len;
	}
	buffer_free(&listing);

	test_kill(n.pid, SIGTERM);
	umask(old_mask);
	mirror_authority_stop(&a);
}
END_TEST

static Suite *mirror_nginx_suite(void)
{
	Suite *suite = suite_create("mirror_nginx");
	TCase *tc = tcase_create("nginx");
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_nginx_serves_the_mirror_as_the_authority);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	char program[PATH_MAX];
	if (test_program_find("nginx", program) != 0) {
		printf("test_mirror_nginx: nginx is not installed (scripts/setup.sh installs it): skipped\n");
		return 77;
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	SRunner *runner = srunner_create(mirror_nginx_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	curl_global_cleanup();
	return failures ? 1 : 0;
}
