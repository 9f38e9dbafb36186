/*
 * check_publish_diffs.c: the diffs of each published body from the older bodies kept
 * (server/publish/diffs.h), stored beside the bodies (server/store/snapshots.h) and served at
 * GET /v1/<ns>/snapshots/<epoch>/diff/<base sha256> (docs/api.md), over a real store, a real
 * signer and real HTTP on loopback (http_fixture.h).
 *
 * One authority publishes epochs with churn (services added and replaced); after each, the
 * builder is asked for the new body's diffs, as the round asks it, and the store's retention is
 * applied as the round applies it. Every diff offered is fetched in each encoding, decoded, and
 * applied with snapshot_diff_apply to the base body fetched from the server: the result is the
 * target body fetched from the server, byte for byte, and its digest is the target header's.
 * A diff from an unknown base, from a base past retention (its files gone), to a target past
 * retention, or not worth offering (from an empty body: every record is a change) is 404 no_diff.
 * A process killed while writing a diff (the pause point "diffs-measured") leaves nothing served
 * after the store opens again, and the diff is built whole afterwards.
 *
 * The same builder writes each published body's record shards (schema/record-shard.md), served at
 * GET /v1/<ns>/snapshots/<epoch>/records/<shard>: every shard of the latest epoch, in identity and
 * zstd, verifies against the header, and every record of the body is found from its shard; the
 * shards of an epoch past retention go with its body (404 no_record_shard, no file); a malformed
 * name is 400 record_shard_malformed, one of another width 404; shards held are not built again.
 */
#include "http_fixture.h"

#include "schema/encoding.h"
#include "schema/snapshot_diff.h"
#include "server/publish/diffs.h"
#include "server/store/snapshots.h"
#include "schema/record_shard.h"
#include "verify/record_proof.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

static const char *const accept_of[ENCODING_COUNT] = {"Accept-Encoding: identity", "Accept-Encoding: gzip",
                                                      "Accept-Encoding: zstd"};

/* A GET of path with an Accept-Encoding line. */
static void get(struct fixture *f, const char *path, const char *accept, struct response *out)
{
	const char *headers[] = {accept, NULL};
	request(f, "GET", path, NULL, 0, 0, headers, out);
}

/* The published header of mix's epoch, parsed. */
static void fetch_header(struct fixture *f, uint64_t epoch, struct snapshot_header *out)
{
	char path[128];
	struct response r;
	struct note *note = NULL;
	snprintf(path, sizeof path, "/v1/mix/snapshots/%llu", (unsigned long long)epoch);
	get(f, path, accept_of[ENCODING_IDENTITY], &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_int_eq(note_parse(r.body.data, r.body.len, &note), 0);
	ck_assert_int_eq(snapshot_header_parse(note->text, note->text_len, out), 0);
	note_free(note);
	response_free(&r);
}

/* The body of mix's epoch as served (identity); appended to out. */
static void fetch_body(struct fixture *f, uint64_t epoch, struct buffer *out)
{
	char path[128];
	struct response r;
	snprintf(path, sizeof path, "/v1/mix/snapshots/%llu/body", (unsigned long long)epoch);
	get(f, path, accept_of[ENCODING_IDENTITY], &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_int_eq(buffer_append(out, r.body.data, r.body.len), 0);
	response_free(&r);
}

static void diff_path(uint64_t target, const uint8_t base[32], char *out, size_t cap)
{
	char hex[65];
	hex_encode(base, 32, hex);
	snprintf(out, cap, "/v1/mix/snapshots/%llu/diff/%s", (unsigned long long)target, hex);
}

/* The file of mix's diff to target from base in encoding, in the store's directory. */
static void diff_file(struct fixture *f, uint64_t target, const uint8_t base[32], const char *suffix,
                      char *out, size_t cap)
{
	char hex[65];
	hex_encode(base, 32, hex);
	snprintf(out, cap, "%s/data/bodies/mix/%llu.from-%s.%s", f->dir, (unsigned long long)target, hex,
	         suffix);
}

static int file_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

static void expect_no_diff(struct fixture *f, uint64_t target, const uint8_t base[32])
{
	char path[256];
	struct response r;
	diff_path(target, base, path, sizeof path);
	for (int e = 0; e < ENCODING_COUNT; e++) {
		get(f, path, accept_of[e], &r);
		expect_error(&r, 404, "no_diff");
		response_free(&r);
	}
}

static struct snapshot_body_limits limits_of(const struct fixture *f)
{
	struct snapshot_body_limits limits = {f->config->bounds.records_per_snapshot,
	                                      config_max_health(f->config),
	                                      f->config->namespaces[0].max_revocations};
	return limits;
}

/* The diff to target from base's body, fetched in every encoding (each decoding to the same
 * bytes, each immutable and varying by Accept-Encoding), applied to base's body as served: the
 * target's body as served, whose digest is the target header's. */
static void expect_diff_applies(struct fixture *f, uint64_t target, uint64_t base)
{
	struct snapshot_header target_header, base_header;
	struct buffer target_body, base_body, diffs[ENCODING_COUNT], rebuilt;
	char path[256];
	fetch_header(f, target, &target_header);
	fetch_header(f, base, &base_header);
	buffer_init(&target_body);
	buffer_init(&base_body);
	buffer_init(&rebuilt);
	fetch_body(f, target, &target_body);
	fetch_body(f, base, &base_body);
	diff_path(target, base_header.body_sha256, path, sizeof path);
	for (int e = 0; e < ENCODING_COUNT; e++) {
		struct response r;
		buffer_init(&diffs[e]);
		get(f, path, accept_of[e], &r);
		ck_assert_msg(r.status == 200, "diff %llu from %llu in %s: %ld %s",
		              (unsigned long long)target, (unsigned long long)base,
		              content_encoding_name((enum content_encoding)e), r.status,
		              r.body.data ? (const char *)r.body.data : "");
		ck_assert_str_eq(header(&r, "Cache-Control"), "public, max-age=31536000, immutable");
		ck_assert_str_eq(header(&r, "Vary"), "Accept-Encoding");
		ck_assert_str_eq(header(&r, "Content-Type"), "application/octet-stream");
		if (e == ENCODING_IDENTITY)
			ck_assert_ptr_null(header(&r, "Content-Encoding"));
		else
			ck_assert_str_eq(header(&r, "Content-Encoding"),
			                 content_encoding_name((enum content_encoding)e));
		ck_assert_int_eq(compress_decode((enum content_encoding)e, r.body.data, r.body.len,
		                                 64 * 1024 * 1024, &diffs[e]),
		                 0);
		response_free(&r);
		ck_assert_uint_eq(diffs[e].len, diffs[ENCODING_IDENTITY].len);
		ck_assert_mem_eq(diffs[e].data, diffs[ENCODING_IDENTITY].data, diffs[e].len);
	}
	/* Worth offering: smaller than the body it stands for. */
	ck_assert_uint_lt(diffs[ENCODING_IDENTITY].len, target_body.len);
	struct snapshot_diff_head head;
	ck_assert_int_eq(
	    snapshot_diff_parse_head(diffs[ENCODING_IDENTITY].data, diffs[ENCODING_IDENTITY].len, &head), 0);
	ck_assert_mem_eq(head.base_sha256, base_header.body_sha256, 32);
	ck_assert_mem_eq(head.target_sha256, target_header.body_sha256, 32);
	struct snapshot_body_limits limits = limits_of(f);
	ck_assert_int_eq(snapshot_diff_apply(base_body.data, base_body.len, diffs[ENCODING_IDENTITY].data,
	                                     diffs[ENCODING_IDENTITY].len, &limits, &rebuilt),
	                 0);
	ck_assert_uint_eq(rebuilt.len, target_body.len);
	ck_assert_mem_eq(rebuilt.data, target_body.data, rebuilt.len);
	uint8_t digest[32];
	ck_assert_int_eq(crypto_sha256(rebuilt.data, rebuilt.len, digest), 0);
	ck_assert_mem_eq(digest, target_header.body_sha256, 32);
	for (int e = 0; e < ENCODING_COUNT; e++)
		buffer_free(&diffs[e]);
	buffer_free(&target_body);
	buffer_free(&base_body);
	buffer_free(&rebuilt);
}

/* Registrations in mix: new services, or a service replaced by a higher sequence. */
struct churn {
	unsigned services;
	uint64_t sequence[64];
};

static void churn_post(struct fixture *f, struct churn *c, unsigned index)
{
	struct registration r;
	struct buffer note;
	struct response response;
	ck_assert_uint_lt(index, 64);
	make_registration(f, index, "mix", &f->provider, &r);
	r.sequence = ++c->sequence[index];
	sign(&r, &f->provider, &note);
	post(f, &note, &response);
	ck_assert_msg(response.status == 202, "%ld %s", response.status, response.body.data);
	response_free(&response);
	buffer_free(&note);
	registration_clear(&r);
}

/* Two services added and one replaced. */
static void churn_epoch(struct fixture *f, struct churn *c, uint64_t epoch)
{
	churn_post(f, c, ++c->services);
	churn_post(f, c, ++c->services);
	churn_post(f, c, 1 + (unsigned)(epoch % 20));
}

/* Publishes mix's epoch, asks the builder for its diffs and waits for them, then applies the
 * retention window: the steps that follow a stored snapshot (server/round/finish.c). */
static void publish_with_diffs(struct fixture *f, struct publish_diffs *diffs, uint64_t epoch)
{
	fixture_publish_epoch(f, epoch);
	publish_diffs_request(diffs, 0, epoch);
	publish_diffs_wait_idle(diffs);
	uint64_t window = f->config->store.body_retention_epochs;
	if (epoch >= window)
		ck_assert_int_eq(store_retain(f->store, "mix", epoch - window + 1), 0);
}

static struct publish_diffs *diffs_start(struct fixture *f)
{
	struct publish_diffs *diffs = NULL;
	struct publish_diffs_options options = {f->config, f->store, f->log};
	ck_assert_int_eq(publish_diffs_start(&options, &diffs), 0);
	ck_assert_ptr_nonnull(diffs);
	return diffs;
}

START_TEST(test_diffs_over_http)
{
	struct fixture f;
	struct churn churn = {0};
	struct response r;
	fixture_open(&f, 0);
	/* validity_epochs 3: bodies kept 6 epochs, diffs from the 3 before each. */
	ck_assert_uint_eq(f.config->diffs.bases, 3);
	ck_assert_uint_eq(f.config->store.body_retention_epochs, 6);
	struct publish_diffs *diffs = diffs_start(&f);

	/* Epoch 11 is empty; 12 has 30 services: the diff between them holds every record and is
	 * not offered. */
	publish_with_diffs(&f, diffs, 11);
	for (unsigned i = 0; i < 30; i++)
		churn_post(&f, &churn, ++churn.services);
	publish_with_diffs(&f, diffs, 12);
	struct snapshot_header h11, h12;
	fetch_header(&f, 11, &h11);
	fetch_header(&f, 12, &h12);
	ck_assert_uint_eq(h11.record_count, 0);
	ck_assert_uint_eq(h12.record_count, 30);
	expect_no_diff(&f, 12, h11.body_sha256);
	char file[1024];
	diff_file(&f, 12, h11.body_sha256, "zstd", file, sizeof file);
	ck_assert(!file_exists(file));
	struct publish_diffs_statistics statistics;
	publish_diffs_statistics(diffs, &statistics);
	ck_assert_uint_eq(statistics.not_offered, 1);
	ck_assert_uint_eq(statistics.built, 0);
	for (int k = 0; k < ENCODING_COUNT; k++)
		ck_assert_uint_eq(statistics.bytes[0][k], 0); /* a diff not offered is not counted */

	/* Epochs 13 to 19 with churn: each diff from each kept base of the three before applies. */
	for (uint64_t e = 13; e <= 19; e++) {
		churn_epoch(&f, &churn, e);
		publish_with_diffs(&f, diffs, e);
		for (uint64_t base = e - 3 > 11 ? e - 3 : 11; base < e; base++) {
			struct snapshot_header hb;
			fetch_header(&f, base, &hb);
			if (base == 11) {
				expect_no_diff(&f, e, hb.body_sha256); /* from the empty body */
				continue;
			}
			expect_diff_applies(&f, e, base);
			for (int k = 0; k < ENCODING_COUNT; k++) {
				diff_file(&f, e, hb.body_sha256,
				          content_encoding_name((enum content_encoding)k), file, sizeof file);
				ck_assert_msg(file_exists(file), "%s", file);
			}
		}
	}
	publish_diffs_statistics(diffs, &statistics);
	ck_assert_uint_eq(statistics.failed, 0);
	/* Three bases each, less 13 from 10 (never published) and 13 and 14 from 11 (not offered). */
	ck_assert_uint_eq(statistics.built, 3 * 7 - 3);
	ck_assert_uint_eq(statistics.not_offered, 3);
	/* The bytes of those built, per encoding (GET /v1/metrics): compressed smaller than plain. */
	ck_assert_uint_gt(statistics.bytes[0][ENCODING_IDENTITY], 0);
	ck_assert_uint_gt(statistics.bytes[0][ENCODING_ZSTD], 0);
	ck_assert_uint_lt(statistics.bytes[0][ENCODING_ZSTD], statistics.bytes[0][ENCODING_IDENTITY]);
	ck_assert_uint_lt(statistics.bytes[0][ENCODING_GZIP], statistics.bytes[0][ENCODING_IDENTITY]);
	ck_assert_uint_eq(statistics.bytes[1][ENCODING_IDENTITY], 0);

	/* Epoch 19 keeps bodies from 14 on: the diffs from 13 (to 14, 15, 16) went with its body,
	 * and every diff to 13 with it. */
	struct snapshot_header h13;
	fetch_header(&f, 13, &h13);
	for (uint64_t target = 14; target <= 16; target++) {
		expect_no_diff(&f, target, h13.body_sha256);
		for (int k = 0; k < ENCODING_COUNT; k++) {
			diff_file(&f, target, h13.body_sha256,
			          content_encoding_name((enum content_encoding)k), file, sizeof file);
			ck_assert_msg(!file_exists(file), "%s", file);
		}
	}
	expect_no_diff(&f, 13, h12.body_sha256);
	diff_file(&f, 13, h12.body_sha256, "identity", file, sizeof file);
	ck_assert(!file_exists(file));
	/* What is kept still applies; HEAD answers as GET without the bytes. */
	expect_diff_applies(&f, 17, 14);
	expect_diff_applies(&f, 19, 16);
	struct snapshot_header h16;
	char head_path[256];
	fetch_header(&f, 16, &h16);
	diff_path(19, h16.body_sha256, head_path, sizeof head_path);
	const char *const gzip[] = {accept_of[ENCODING_GZIP], NULL};
	request(&f, "HEAD", head_path, NULL, 0, 0, gzip, &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_uint_eq(r.body.len, 0);
	ck_assert_str_eq(header(&r, "Content-Encoding"), "gzip");
	response_free(&r);

	/* An unknown base is no_diff; a base that is no digest's spelling, or an epoch not
	 * published, is not_found like any other malformed or unknown path. */
	uint8_t unknown[32];
	memset(unknown, 0xab, sizeof unknown);
	expect_no_diff(&f, 19, unknown);
	get(&f,
	    "/v1/mix/snapshots/19/diff/"
	    "ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB",
	    accept_of[ENCODING_ZSTD], &r);
	expect_error(&r, 404, "not_found");
	response_free(&r);
	get(&f, "/v1/mix/snapshots/19/diff/abab", accept_of[ENCODING_ZSTD], &r);
	expect_error(&r, 404, "not_found");
	response_free(&r);
	char path[256];
	diff_path(999, unknown, path, sizeof path);
	get(&f, path, accept_of[ENCODING_ZSTD], &r);
	expect_error(&r, 404, "not_found");
	response_free(&r);

	/* A request for the same epoch again finds its diffs built: nothing is built twice. */
	publish_diffs_request(diffs, 0, 19);
	publish_diffs_wait_idle(diffs);
	struct publish_diffs_statistics again;
	publish_diffs_statistics(diffs, &again);
	ck_assert_uint_eq(again.built, statistics.built);
	ck_assert_uint_eq(again.held, statistics.held + 3);

	publish_diffs_stop(diffs);
	fixture_close(&f);
}
END_TEST

/* The names in mix's body directory that contain needle. */
static size_t files_containing(struct fixture *f, const char *needle)
{
	char directory[1024];
	size_t count = 0;
	snprintf(directory, sizeof directory, "%s/data/bodies/mix", f->dir);
	DIR *d = opendir(directory);
	ck_assert_ptr_nonnull(d);
	struct dirent *entry;
	while ((entry = readdir(d)))
		if (strstr(entry->d_name, needle))
			count++;
	closedir(d);
	return count;
}

/* Run only as the process test_killed_while_writing_a_diff starts (DIFFS_CRASH_DIR set): opens
 * the store of the fixture's configuration and builds the latest epoch's diffs, held at the pause
 * point DIRAUTH_PAUSE_AT until it is killed. */
START_TEST(crash_helper)
{
	const char *dir = getenv("DIFFS_CRASH_DIR");
	if (!dir)
		return;
	char config_path[1024];
	struct config *config = NULL;
	struct settings_error error;
	struct store *store = NULL;
	struct publish_diffs *diffs = NULL;
	snprintf(config_path, sizeof config_path, "%s/dirauthd.yaml", dir);
	ck_assert_int_eq(config_load(config_path, &config, &error), 0);
	struct store_options options = {.path = config->data_dir};
	ck_assert_int_eq(store_open(&options, &store), 0);
	struct publish_diffs_options diffs_options = {config, store, stderr};
	ck_assert_int_eq(publish_diffs_start(&diffs_options, &diffs), 0);
	sleep(600);
}
END_TEST

START_TEST(test_killed_while_writing_a_diff)
{
	struct fixture f;
	struct churn churn = {0};
	fixture_open(&f, 0);
	fixture_publish_epoch(&f, 11);
	for (unsigned i = 0; i < 30; i++)
		churn_post(&f, &churn, ++churn.services);
	fixture_publish_epoch(&f, 12);
	churn_epoch(&f, &churn, 12);
	fixture_publish_epoch(&f, 13);
	struct snapshot_header h12;
	fetch_header(&f, 12, &h12);

	/* dirauthd stops; another process opens the store and is killed while it writes the diff
	 * to 13 from 12: its files are written and synced under their part names. */
	fixture_stop_serving(&f);
	store_close(f.store);
	char log_path[1024];
	snprintf(log_path, sizeof log_path, "%s/crash-helper.log", f.dir);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0 || dup2(fd, STDERR_FILENO) < 0)
			_exit(126);
		setenv("DIFFS_CRASH_DIR", f.dir, 1);
		setenv("DIRAUTH_PAUSE_AT", "diffs-measured", 1);
		setenv("DIRAUTH_PAUSE_MS", "600000", 1);
		setenv("CK_RUN_CASE", "crash_helper", 1);
		setenv("CK_FORK", "no", 1);
		execl("/proc/self/exe", "check_publish_diffs", (char *)NULL);
		_exit(127);
	}
	int paused = 0;
	for (int i = 0; i < 3000 && !paused; i++) {
		size_t len = 0;
		char *text = access(log_path, F_OK) == 0 ? (char *)test_read_file(log_path, &len) : NULL;
		paused = text && strstr(text, "paused at diffs-measured") != NULL;
		free(text);
		ck_assert_msg(paused || waitpid(pid, NULL, WNOHANG) == 0,
		              "the helper exited before the pause");
		struct timespec wait = {0, 10 * 1000 * 1000};
		if (!paused)
			nanosleep(&wait, NULL);
	}
	ck_assert_msg(paused, "the helper never paused at diffs-measured");
	ck_assert_uint_eq(files_containing(&f, ".part"), ENCODING_COUNT);
	ck_assert_uint_eq(files_containing(&f, "13.from-"), ENCODING_COUNT);
	kill(pid, SIGKILL);
	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);

	/* dirauthd starts again: the parts are gone, and nothing is served for the diff. */
	struct store_options options = {.path = f.config->data_dir};
	ck_assert_int_eq(store_open(&options, &f.store), 0);
	fixture_serve(&f);
	ck_assert_uint_eq(files_containing(&f, ".part"), 0);
	ck_assert_uint_eq(files_containing(&f, ".from-"), 0);
	expect_no_diff(&f, 13, h12.body_sha256);

	/* Its builder, started, builds the latest epoch's diffs whole. */
	struct publish_diffs *diffs = diffs_start(&f);
	publish_diffs_wait_idle(diffs);
	expect_diff_applies(&f, 13, 12);
	struct publish_diffs_statistics statistics;
	publish_diffs_statistics(diffs, &statistics);
	ck_assert_uint_eq(statistics.built, 1);
	ck_assert_uint_eq(statistics.not_offered, 1); /* from the empty body of 11 */
	publish_diffs_stop(diffs);
	fixture_close(&f);
}
END_TEST

START_TEST(test_record_shards_over_http)
{
	struct fixture f;
	struct churn churn = {0};
	struct response r;
	char path[256], name[RECORD_SHARD_NAME_MAX + 1], detail[1024];
	fixture_open(&f, 0);
	struct publish_diffs *diffs = diffs_start(&f);
	publish_with_diffs(&f, diffs, 11); /* the empty body: one shard, an empty run */
	ck_assert(store_record_shards_held(f.store, "mix", 11));
	for (unsigned i = 0; i < 30; i++)
		churn_post(&f, &churn, ++churn.services);
	for (uint64_t e = 12; e <= 19; e++) {
		churn_epoch(&f, &churn, e);
		publish_with_diffs(&f, diffs, e);
	}
	struct publish_diffs_statistics statistics;
	publish_diffs_statistics(diffs, &statistics);
	ck_assert_uint_eq(statistics.shard_epochs, 9);
	ck_assert_uint_eq(statistics.shard_failures, 0);

	/* Every shard of epoch 19 verifies, in both encodings, and holds every record of its slice. */
	struct snapshot_header h19;
	struct buffer body, shard;
	buffer_init(&body);
	buffer_init(&shard);
	fetch_header(&f, 19, &h19);
	fetch_body(&f, 19, &body);
	struct snapshot_body *parsed = NULL;
	struct snapshot_body_limits limits = limits_of(&f);
	ck_assert_int_eq(snapshot_body_parse_sections(body.data, body.len, &limits, &parsed), 0);
	unsigned bits;
	ck_assert_int_eq(record_shard_bits(h19.record_count, &bits), 0);
	ck_assert_uint_gt(bits, 0);
	for (uint32_t index = 0; index < (UINT32_C(1) << bits); index++) {
		record_shard_name(index, bits, name);
		snprintf(path, sizeof path, "/v1/mix/snapshots/19/records/%s", name);
		for (int e = 0; e < ENCODING_COUNT; e += ENCODING_ZSTD) {
			get(&f, path, accept_of[e], &r);
			ck_assert_int_eq(r.status, 200);
			ck_assert_str_eq(header(&r, "Cache-Control"), "public, max-age=31536000, immutable");
			buffer_reset(&shard);
			ck_assert_int_eq(
			    compress_decode((enum content_encoding)(header(&r, "Content-Encoding")
			                                                ? ENCODING_ZSTD
			                                                : ENCODING_IDENTITY),
			                    r.body.data, r.body.len, RECORD_SHARD_MAX_BYTES, &shard),
			    0);
			response_free(&r);
			ck_assert_msg(verify_record_shard(&h19, shard.data, shard.len, index, detail,
			                                  sizeof detail) == 0,
			              "%s", detail);
		}
	}
	for (size_t i = 0; i < parsed->record_count; i++) {
		struct verify_record found;
		record_shard_name(record_shard_of(parsed->records[i].service_id, bits), bits, name);
		snprintf(path, sizeof path, "/v1/mix/snapshots/19/records/%s", name);
		get(&f, path, accept_of[ENCODING_IDENTITY], &r);
		ck_assert_int_eq(r.status, 200);
		ck_assert_int_eq(verify_record_proof(&h19, r.body.data, r.body.len,
		                                     parsed->records[i].service_id, &found, detail,
		                                     sizeof detail),
		                 0);
		ck_assert_int_eq(found.present, 1);
		ck_assert_uint_eq(found.leaf_index, i);
		verify_record_clear(&found);
		response_free(&r);
	}
	snapshot_body_free(parsed);

	/* Retention keeps bodies from 14 on: the shards of 13 went with its body. */
	ck_assert(!store_record_shards_held(f.store, "mix", 13));
	ck_assert(store_record_shards_held(f.store, "mix", 14));
	char file[1024];
	snprintf(file, sizeof file, "%s/data/bodies/mix/13.records", f.dir);
	ck_assert(!file_exists(file));
	get(&f, "/v1/mix/snapshots/13/records/0", NULL, &r);
	expect_error(&r, 404, "no_record_shard");
	response_free(&r);
	static const struct {
		const char *name;
		long status;
		const char *code;
	} refused[] = {{"zz", 400, "record_shard_malformed"},
	               {"0A", 400, "record_shard_malformed"},
	               {"1234567", 400, "record_shard_malformed"},
	               {"00", 404, "no_record_shard"}};
	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
		snprintf(path, sizeof path, "/v1/mix/snapshots/19/records/%s", refused[i].name);
		get(&f, path, NULL, &r);
		expect_error(&r, refused[i].status, refused[i].code);
		response_free(&r);
	}
	get(&f, "/v1/mix/snapshots/99/records/0", NULL, &r);
	ck_assert_int_eq(r.status, 404);
	response_free(&r);

	/* Asked again (a restart does so), held shards are not built again. */
	publish_diffs_request(diffs, 0, 19);
	publish_diffs_wait_idle(diffs);
	publish_diffs_statistics(diffs, &statistics);
	ck_assert_uint_eq(statistics.shard_epochs, 9);
	buffer_free(&body);
	buffer_free(&shard);
	publish_diffs_stop(diffs);
	fixture_close(&f);
}
END_TEST

static Suite *publish_diffs_suite(void)
{
	Suite *suite = suite_create("publish_diffs");
	TCase *tc = tcase_create("publish_diffs");
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_diffs_over_http);
	tcase_add_test(tc, test_record_shards_over_http);
	tcase_add_test(tc, test_killed_while_writing_a_diff);
	suite_add_tcase(suite, tc);
	/* Never runs on its own: the process test_killed_while_writing_a_diff starts runs it. */
	TCase *helper = tcase_create("crash_helper");
	tcase_set_timeout(helper, 900);
	tcase_add_test(helper, crash_helper);
	suite_add_tcase(suite, helper);
	return suite;
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	SRunner *runner = srunner_create(publish_diffs_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	curl_global_cleanup();
	return failures ? 1 : 0;
}
