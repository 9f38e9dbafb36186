/*
 * test_mirror.c: `dirauthctl mirror` changes nothing when an update is refused, and leaves a
 * tree that serves one consistent epoch when it is killed at any step of an update.
 *
 * A real dirauthd and dirauth-signer (tests/harness/mirror_authority.h) publish epochs with their
 * log. Refusals: a canned server (tests/harness/stub_http.h) serves the authority's own answers
 * for an update of two epochs, one of them tampered with at a time: the latest header's signature,
 * the header of the epoch between missing (a broken chain), the consistency proof from the held
 * checkpoint (an inconsistent log), a tile, the body. Each run is refused with 65 and the tree,
 * every file and byte of it, is what it was; the untampered answers are then taken. Crashes: for
 * each fault point of an update (ctl/mirror.h) a new epoch is published and the mirror is killed
 * with SIGKILL at the point; the tree then serves the old epoch or the new one, each with all it
 * names (header, body, proof, the checkpoint's tiles), and the next run completes the update. A
 * run with nothing newer changes nothing; a run while another holds the tree exits 75. A log past
 * one full tile is verified and served tile for tile. Once a snapshot revokes a service, the
 * older bodies that hold it leave the tree, and their record shards with them. A mirror takes each new body
 * as a diff from the one it serves, and serves the authority's diffs, byte for byte, built from the bodies it
 * keeps; a diff leaves the tree with its base. `dirauthctl lookup` against a canned server refuses a
 * tampered record shard, a shard of another epoch and a namespace the bundle does not pin, and
 * reports a shard the server does not have; against the authority it prints a registered
 * endpoint's published health (draining) and its other endpoint's as unknown.
 */
#include "test_http.h"
#include "test_support.h"
#include "tests/harness/mirror_authority.h"
#include "tests/harness/stub_http.h"

#include "base/buffer.h"
#include "schema/checkpoint.h"
#include "schema/note.h"
#include "schema/encoding.h"
#include "schema/record_shard.h"
#include "schema/snapshot.h"

#include <check.h>
#include <curl/curl.h>

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define E0 MIRROR_AUTHORITY_FIRST_EPOCH

/* The tree size of the checkpoint served at url (an authority or a tree's file). */
static uint64_t checkpoint_size(const uint8_t *bytes, size_t len)
{
	struct note *note = NULL;
	struct checkpoint checkpoint;
	ck_assert(note_parse(bytes, len, &note) == 0);
	ck_assert(checkpoint_parse(note->text, note->text_len, &checkpoint) == 0);
	note_free(note);
	return checkpoint.tree_size;
}

static uint64_t header_epoch(const uint8_t *bytes, size_t len)
{
	struct note *note = NULL;
	struct snapshot_header header;
	ck_assert(note_parse(bytes, len, &note) == 0);
	ck_assert(snapshot_header_parse(note->text, note->text_len, &header) == 0);
	note_free(note);
	return header.epoch;
}

/* ---- refusals ---- */

struct canned {
	struct stub_http *stub;
	char url[64];
	char paths[16][160];
	struct buffer bodies[16];
	size_t count;
};

static void canned_copy(struct canned *c, const char *authority, const char *path)
{
	ck_assert(c->count < 16);
	snprintf(c->paths[c->count], sizeof(c->paths[0]), "%s", path);
	c->bodies[c->count] = test_http_get_ok(authority, path);
	ck_assert(stub_http_route(c->stub, "GET", path, 200, NULL, c->bodies[c->count].data,
	                          c->bodies[c->count].len) == 0);
	c->count++;
}

static size_t canned_find(const struct canned *c, const char *path)
{
	for (size_t i = 0; i < c->count; i++)
		if (strcmp(c->paths[i], path) == 0)
			return i;
	ck_abort_msg("no canned %s", path);
	return 0;
}

/* Serves path with one byte at offset (from the end when negative) changed. */
static void canned_tamper(struct canned *c, const char *path, long offset)
{
	size_t i = canned_find(c, path);
	struct buffer copy;
	buffer_init(&copy);
	ck_assert(buffer_append(&copy, c->bodies[i].data, c->bodies[i].len) == 0);
	size_t at = offset < 0 ? copy.len - (size_t)(-offset) : (size_t)offset;
	copy.data[at] = copy.data[at] == 'A' ? 'B' : 'A';
	ck_assert(stub_http_route(c->stub, "GET", path, 200, NULL, copy.data, copy.len) == 0);
	buffer_free(&copy);
}

static void canned_missing(struct canned *c, const char *path)
{
	static const char body[] =
	    "{\"error\":\"not_found\",\"detail\":\"Nothing is published at this path.\"}";
	canned_find(c, path);
	ck_assert(stub_http_route(c->stub, "GET", path, 404, "application/json", (const uint8_t *)body,
	                          strlen(body)) == 0);
}

static void canned_restore(struct canned *c, const char *path)
{
	size_t i = canned_find(c, path);
	ck_assert(stub_http_route(c->stub, "GET", path, 200, NULL, c->bodies[i].data, c->bodies[i].len) == 0);
}

/* A run from the canned server is refused with 65 and leaves the tree as it was. */
static void expect_refused(const struct mirror_authority *a, const struct canned *c, const char *tree,
                           const char *log, const char *what)
{
	struct buffer before, after;
	buffer_init(&before);
	buffer_init(&after);
	mirror_tree_listing(tree, &before);
	unlink(log);
	int status = mirror_authority_run_mirror(a, c->url, tree, log);
	mirror_tree_listing(tree, &after);
	ck_assert_msg(status == 65, "%s: the mirror exited %d, not 65; see %s", what, status, log);
	size_t len = 0;
	char *text = (char *)test_read_file(log, &len);
	printf("refused, %s: %s", what, text);
	free(text);
	ck_assert_msg(before.len == after.len && memcmp(before.data, after.data, before.len) == 0,
	              "%s: the refused update changed the tree", what);
	buffer_free(&before);
	buffer_free(&after);
}

START_TEST(test_refused_update_changes_no_file)
{
	struct mirror_authority a;
	struct canned c;
	char tree[LAUNCHER_PATH_MAX], log[LAUNCHER_PATH_MAX], path[160];

	mirror_authority_start(&a);
	snprintf(tree, sizeof(tree), "%s/tree", a.run.dir);
	snprintf(log, sizeof(log), "%s/mirror.log", a.run.dir);
	mirror_authority_publish(&a, E0);
	ck_assert_int_eq(mirror_authority_run_mirror(&a, a.run.url, tree, log), 0);
	struct buffer held = test_http_get_ok(a.run.url, "/v1/mix/log/checkpoint");
	uint64_t held_size = checkpoint_size(held.data, held.len);
	buffer_free(&held);

	mirror_authority_publish(&a, E0 + 1);
	mirror_authority_publish(&a, E0 + 2);
	memset(&c, 0, sizeof(c));
	ck_assert(stub_http_start(0, &c.stub) == 0);
	snprintf(c.url, sizeof(c.url), "http://127.0.0.1:%u", stub_http_port(c.stub));
	struct buffer checkpoint = test_http_get_ok(a.run.url, "/v1/mix/log/checkpoint");
	uint64_t size = checkpoint_size(checkpoint.data, checkpoint.len);
	buffer_free(&checkpoint);
	ck_assert_uint_eq(size, held_size + 2);
	canned_copy(&c, a.run.url, "/v1/certificates");
	canned_copy(&c, a.run.url, "/v1/mix/snapshots/latest");
	ck_assert_uint_eq(header_epoch(c.bodies[1].data, c.bodies[1].len), E0 + 2);
	snprintf(path, sizeof(path), "/v1/mix/snapshots/%llu", (unsigned long long)(E0 + 1));
	canned_copy(&c, a.run.url, path);
	snprintf(path, sizeof(path), "/v1/mix/snapshots/%llu/body", (unsigned long long)(E0 + 1));
	canned_copy(&c, a.run.url, path);
	snprintf(path, sizeof(path), "/v1/mix/snapshots/%llu/body", (unsigned long long)(E0 + 2));
	canned_copy(&c, a.run.url, path);
	snprintf(path, sizeof(path), "/v1/mix/log/proof/%llu", (unsigned long long)(E0 + 2));
	canned_copy(&c, a.run.url, path);
	snprintf(path, sizeof(path), "/v1/mix/log/consistency/%llu/%llu", (unsigned long long)held_size,
	         (unsigned long long)size);
	canned_copy(&c, a.run.url, path);
	snprintf(path, sizeof(path), "/v1/mix/log/tile/0/000.p/%llu", (unsigned long long)size);
	canned_copy(&c, a.run.url, path);
	snprintf(path, sizeof(path), "/v1/mix/log/tile/entries/000.p/%llu", (unsigned long long)size);
	canned_copy(&c, a.run.url, path);

	/* The latest header's signature: the last base64 character before its padding. */
	canned_tamper(&c, "/v1/mix/snapshots/latest", -3);
	expect_refused(&a, &c, tree, log, "a bad signature");
	canned_restore(&c, "/v1/mix/snapshots/latest");

	snprintf(path, sizeof(path), "/v1/mix/snapshots/%llu", (unsigned long long)(E0 + 1));
	canned_missing(&c, path);
	expect_refused(&a, &c, tree, log, "a broken chain");
	canned_restore(&c, path);

	snprintf(path, sizeof(path), "/v1/mix/log/consistency/%llu/%llu", (unsigned long long)held_size,
	         (unsigned long long)size);
	canned_tamper(&c, path, 2);
	expect_refused(&a, &c, tree, log, "an inconsistent checkpoint");
	canned_restore(&c, path);

	snprintf(path, sizeof(path), "/v1/mix/log/tile/0/000.p/%llu", (unsigned long long)size);
	canned_tamper(&c, path, 5);
	expect_refused(&a, &c, tree, log, "a tampered tile");
	canned_restore(&c, path);

	snprintf(path, sizeof(path), "/v1/mix/log/tile/entries/000.p/%llu", (unsigned long long)size);
	canned_tamper(&c, path, 10);
	expect_refused(&a, &c, tree, log, "a tampered entry bundle");
	canned_restore(&c, path);

	snprintf(path, sizeof(path), "/v1/mix/snapshots/%llu/body", (unsigned long long)(E0 + 1));
	canned_tamper(&c, path, -2);
	expect_refused(&a, &c, tree, log, "a tampered body of the epoch between");
	canned_restore(&c, path);

	/* The same answers, untampered, are taken. */
	ck_assert_int_eq(mirror_authority_run_mirror(&a, c.url, tree, log), 0);
	char latest[LAUNCHER_PATH_MAX + 32];
	snprintf(latest, sizeof(latest), "%s/v1/mix/snapshots/latest", tree);
	size_t len = 0;
	uint8_t *bytes = test_read_file(latest, &len);
	ck_assert_uint_eq(header_epoch(bytes, len), E0 + 2);
	free(bytes);

	/* A run with nothing newer leaves the tree as it is. */
	struct buffer before, after;
	buffer_init(&before);
	buffer_init(&after);
	mirror_tree_listing(tree, &before);
	ck_assert_int_eq(mirror_authority_run_mirror(&a, a.run.url, tree, log), 0);
	mirror_tree_listing(tree, &after);
	ck_assert(before.len == after.len && memcmp(before.data, after.data, before.len) == 0);
	buffer_free(&before);
	buffer_free(&after);

	stub_http_stop(c.stub);
	for (size_t i = 0; i < c.count; i++)
		buffer_free(&c.bodies[i]);
	mirror_authority_stop(&a);
}
END_TEST

/* ---- crashes ---- */

static long long monotonic_ms(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

static void wait_paused(pid_t pid, const char *log, const char *name)
{
	char line[128];
	snprintf(line, sizeof(line), "dirauth: paused at %s\n", name);
	for (long long deadline = monotonic_ms() + 60000; monotonic_ms() < deadline;) {
		size_t len = 0;
		int found = 0;
		if (access(log, F_OK) == 0) {
			char *text = (char *)test_read_file(log, &len);
			found = strstr(text, line) != NULL;
			free(text);
		}
		if (found)
			return;
		ck_assert_msg(waitpid(pid, NULL, WNOHANG) == 0, "the mirror exited before %s; see %s", name,
		              log);
		test_sleep_ms(10);
	}
	ck_abort_msg("the mirror never paused at %s; see %s", name, log);
}

static int tree_file_exists(const char *tree, const char *relative)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/v1/mix/%s", tree, relative);
	return access(path, F_OK) == 0;
}

/* The tree serves one epoch with everything it names; returns that epoch. */
static uint64_t check_consistent(const char *tree)
{
	char path[1024], relative[256];
	size_t len = 0, header_len = 0, checkpoint_len = 0;

	snprintf(path, sizeof(path), "%s/v1/mix/snapshots/latest", tree);
	uint8_t *latest = test_read_file(path, &len);
	uint64_t epoch = header_epoch(latest, len);
	snprintf(path, sizeof(path), "%s/v1/mix/snapshots/%llu/header", tree, (unsigned long long)epoch);
	uint8_t *header = test_read_file(path, &header_len);
	ck_assert(header_len == len && memcmp(header, latest, len) == 0);
	free(header);
	free(latest);
	snprintf(relative, sizeof(relative), "snapshots/%llu/body", (unsigned long long)epoch);
	ck_assert_msg(tree_file_exists(tree, relative), "%s is missing", relative);
	snprintf(relative, sizeof(relative), "log/proof/%llu/latest", (unsigned long long)epoch);
	ck_assert_msg(tree_file_exists(tree, relative), "%s is missing", relative);
	snprintf(path, sizeof(path), "%s/v1/mix/log/checkpoint", tree);
	uint8_t *checkpoint = test_read_file(path, &checkpoint_len);
	uint64_t size = checkpoint_size(checkpoint, checkpoint_len);
	free(checkpoint);
	snprintf(relative, sizeof(relative), "log/tile/0/000.p/%llu", (unsigned long long)size);
	ck_assert_msg(tree_file_exists(tree, relative), "%s is missing", relative);
	snprintf(relative, sizeof(relative), "log/tile/entries/000.p/%llu", (unsigned long long)size);
	ck_assert_msg(tree_file_exists(tree, relative), "%s is missing", relative);
	return epoch;
}

START_TEST(test_killed_at_each_step_serves_one_epoch)
{
	static const struct {
		const char *point;
		int serves_new;
	} steps[] = {
	    {"mirror-verified", 0},   {"mirror-immutable", 0}, {"mirror-proofs", 0},
	    {"mirror-checkpoint", 0}, {"mirror-latest", 1},    {"mirror-pruned", 1},
	};
	struct mirror_authority a;
	char tree[LAUNCHER_PATH_MAX], log[LAUNCHER_PATH_MAX];

	mirror_authority_start(&a);
	snprintf(tree, sizeof(tree), "%s/tree", a.run.dir);
	mirror_authority_publish(&a, E0);
	snprintf(log, sizeof(log), "%s/mirror.log", a.run.dir);
	ck_assert_int_eq(mirror_authority_run_mirror(&a, a.run.url, tree, log), 0);
	ck_assert_uint_eq(check_consistent(tree), E0);
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		uint64_t epoch = E0 + 1 + i;
		mirror_authority_publish(&a, epoch);
		snprintf(log, sizeof(log), "%s/mirror-%s.log", a.run.dir, steps[i].point);
		pid_t pid = mirror_authority_spawn_mirror(&a, a.run.url, tree, steps[i].point, log);
		wait_paused(pid, log, steps[i].point);
		if (i == 0) {
			/* One run at a time: another meanwhile is told to try again later. */
			char second[LAUNCHER_PATH_MAX + 16];
			snprintf(second, sizeof(second), "%s/mirror-second.log", a.run.dir);
			ck_assert_int_eq(mirror_authority_run_mirror(&a, a.run.url, tree, second), 75);
		}
		int status = test_kill(pid, SIGKILL);
		ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
		uint64_t served = check_consistent(tree);
		ck_assert_msg(served == (steps[i].serves_new ? epoch : epoch - 1),
		              "killed at %s, the tree serves epoch %llu", steps[i].point,
		              (unsigned long long)served);
		snprintf(log, sizeof(log), "%s/mirror-%s-again.log", a.run.dir, steps[i].point);
		ck_assert_int_eq(mirror_authority_run_mirror(&a, a.run.url, tree, log), 0);
		ck_assert_uint_eq(check_consistent(tree), epoch);
	}
	mirror_authority_stop(&a);
}
END_TEST

/* A log past one full tile: the full tile and bundle are verified against the tree above them,
 * served as the authority serves them, and read back from the tree (not downloaded) by the next
 * run, whose new partial tiles are again the authority's. */
START_TEST(test_log_past_one_full_tile)
{
	struct mirror_authority a;
	char tree[LAUNCHER_PATH_MAX], log[LAUNCHER_PATH_MAX], path[160], file[LAUNCHER_PATH_MAX + 160];

	mirror_authority_start(&a);
	snprintf(tree, sizeof(tree), "%s/tree", a.run.dir);
	snprintf(log, sizeof(log), "%s/mirror.log", a.run.dir);
	mirror_authority_publish(&a, E0);
	ck_assert_int_eq(mirror_authority_run_mirror(&a, a.run.url, tree, log), 0);
	uint64_t epoch = E0;
	for (;;) {
		struct buffer checkpoint = test_http_get_ok(a.run.url, "/v1/mix/log/checkpoint");
		uint64_t size = checkpoint_size(checkpoint.data, checkpoint.len);
		buffer_free(&checkpoint);
		if (size > 258)
			break;
		mirror_authority_publish(&a, ++epoch);
	}
	ck_assert_int_eq(mirror_authority_run_mirror(&a, a.run.url, tree, log), 0);
	mirror_authority_publish(&a, ++epoch);
	ck_assert_int_eq(mirror_authority_run_mirror(&a, a.run.url, tree, log), 0);
	struct buffer checkpoint = test_http_get_ok(a.run.url, "/v1/mix/log/checkpoint");
	uint64_t size = checkpoint_size(checkpoint.data, checkpoint.len);
	buffer_free(&checkpoint);
	const char *tiles[] = {"tile/0/000", "tile/entries/000", NULL, NULL};
	char partial[2][64];
	snprintf(partial[0], sizeof(partial[0]), "tile/0/001.p/%llu", (unsigned long long)(size - 256));
	snprintf(partial[1], sizeof(partial[1]), "tile/entries/001.p/%llu", (unsigned long long)(size - 256));
	tiles[2] = partial[0];
	tiles[3] = partial[1];
	for (size_t i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "/v1/mix/log/%s", tiles[i]);
		struct buffer served = test_http_get_ok(a.run.url, path);
		size_t len = 0;
		snprintf(file, sizeof(file), "%s/v1/mix/log/%s", tree, tiles[i]);
		uint8_t *kept = test_read_file(file, &len);
		ck_assert_msg(len == served.len && memcmp(kept, served.data, len) == 0, "%s differs",
		              tiles[i]);
		free(kept);
		buffer_free(&served);
	}
	snprintf(path, sizeof(path), "/v1/mix/log/tile/1/000.p/1");
	struct buffer served = test_http_get_ok(a.run.url, path);
	size_t len = 0;
	snprintf(file, sizeof(file), "%s/v1/mix/log/tile/1/000.p/1", tree);
	uint8_t *kept = test_read_file(file, &len);
	ck_assert(len == served.len && memcmp(kept, served.data, len) == 0);
	free(kept);
	buffer_free(&served);
	mirror_authority_stop(&a);
}
END_TEST

/* Epoch E0 published, service (keys-example/service-a.yaml) registered with key by dirauthctl,
 * then epoch E0 + 1 published with it. */
static void publish_service_a(struct mirror_authority *a, const char *key, const char *service)
{
	struct test_outcome outcome;
	char now[32];
	mirror_authority_publish(a, E0);
	snprintf(now, sizeof(now), "%llu", (unsigned long long)a->now);
	const char *register_args[] = {"register", "--key",    key,     "--service", service,
	                               "--server", a->run.url, "--now", now,         NULL};
	test_run_program(test_binary_path("ctl/dirauthctl"), register_args, a->run.dir, &outcome);
	ck_assert_msg(outcome.status == 0, "register: %s", outcome.err);
	test_outcome_free(&outcome);
	mirror_authority_publish(a, E0 + 1);
}

/* Revocation overrides the cache, in the tree too: once a snapshot revokes a service, the bodies
 * of the older epochs that hold it leave the tree (their headers stay, for the chain). */
START_TEST(test_revoked_bodies_leave_the_tree)
{
	struct mirror_authority a;
	char tree[LAUNCHER_PATH_MAX], log[LAUNCHER_PATH_MAX], key[LAUNCHER_PATH_MAX + 32], now[32];
	char relative[128];
	char service[1024];
	snprintf(service, sizeof(service), "%s", test_source_path("keys-example/service-a.yaml"));
	struct test_outcome outcome;

	mirror_authority_start(&a);
	snprintf(tree, sizeof(tree), "%s/tree", a.run.dir);
	snprintf(log, sizeof(log), "%s/mirror.log", a.run.dir);
	snprintf(key, sizeof(key), "%s/keys/provider-a.key", a.run.dir);
	publish_service_a(&a, key, service);
	ck_assert_int_eq(mirror_authority_run_mirror(&a, a.run.url, tree, log), 0);
	snprintf(relative, sizeof(relative), "snapshots/%llu/body", (unsigned long long)(E0 + 1));
	ck_assert(tree_file_exists(tree, relative));
	/* Its record shards (shard 0 among them) hold the service to be revoked. */
	snprintf(relative, sizeof(relative), "snapshots/%llu/records/0", (unsigned long long)(E0 + 1));
	ck_assert(tree_file_exists(tree, relative));

	snprintf(now, sizeof(now), "%llu", (unsigned long long)a.now);
	const char *revoke_args[] = {"revoke",  "--key",    key,       "--service", service, "--reason",
	                             "retired", "--server", a.run.url, "--now",     now,     NULL};
	test_run_program(test_binary_path("ctl/dirauthctl"), revoke_args, a.run.dir, &outcome);
	ck_assert_msg(outcome.status == 0, "revoke: %s", outcome.err);
	test_outcome_free(&outcome);
	mirror_authority_publish(&a, E0 + 2);
	mirror_authority_publish(&a, E0 + 3);
	unlink(log);
	ck_assert_int_eq(mirror_authority_run_mirror(&a, a.run.url, tree, log), 0);
	static const char *const bodies[] = {"body", "body.gz", "body.zst"};
	for (size_t i = 0; i < 3; i++) {
		snprintf(relative, sizeof(relative), "snapshots/%llu/%s", (unsigned long long)(E0 + 1),
		         bodies[i]);
		ck_assert_msg(!tree_file_exists(tree, relative), "%s is still served", relative);
	}
	/* The record shards of the dropped body go with it: they hold the revoked record too. */
	snprintf(relative, sizeof(relative), "snapshots/%llu/records", (unsigned long long)(E0 + 1));
	ck_assert_msg(!tree_file_exists(tree, relative), "%s is still served", relative);
	snprintf(relative, sizeof(relative), "snapshots/%llu/records/0", (unsigned long long)(E0 + 3));
	ck_assert(tree_file_exists(tree, relative));
	snprintf(relative, sizeof(relative), "snapshots/%llu/header", (unsigned long long)(E0 + 1));
	ck_assert(tree_file_exists(tree, relative));
	snprintf(relative, sizeof(relative), "snapshots/%llu/body", (unsigned long long)(E0 + 3));
	ck_assert(tree_file_exists(tree, relative));
	size_t len = 0;
	char *text = (char *)test_read_file(log, &len);
	ck_assert_msg(strstr(text, "dropped for what it revokes") != NULL, "%s", text);
	free(text);
	mirror_authority_stop(&a);
}
END_TEST

/* The tree's file at relative equals bytes. */
static void expect_tree_file(const char *tree, const char *relative, const struct buffer *bytes)
{
	char path[1024];
	size_t len = 0;
	snprintf(path, sizeof(path), "%s/v1/mix/%s", tree, relative);
	uint8_t *kept = test_read_file(path, &len);
	ck_assert_msg(kept != NULL, "%s is missing", relative);
	ck_assert_msg(len == bytes->len && memcmp(kept, bytes->data, len) == 0, "%s is not the authority's",
	              relative);
	free(kept);
}

/* A mirror following an authority takes each new body as a diff from the body it serves, and its
 * tree serves diffs as the authority does: from each kept earlier body to each new one, the
 * identity bytes the authority's, in gzip and zstd beside them; a diff leaves with its base. */
START_TEST(test_diffs_taken_and_served)
{
	struct mirror_authority a;
	char tree[LAUNCHER_PATH_MAX], log[LAUNCHER_PATH_MAX], relative[256];
	char base1[65], base2[65];
	struct buffer diff;
	buffer_init(&diff);

	mirror_authority_start(&a);
	snprintf(tree, sizeof(tree), "%s/tree", a.run.dir);
	snprintf(log, sizeof(log), "%s/mirror.log", a.run.dir);
	mirror_authority_publish(&a, E0);
	mirror_authority_register(&a, 12);
	mirror_authority_publish(&a, E0 + 1);
	ck_assert_int_eq(mirror_authority_run_mirror(&a, a.run.url, tree, log), 0);

	/* The next epoch: the mirror's download is the diff from the body it serves. */
	mirror_authority_publish(&a, E0 + 2);
	mirror_authority_body_sha256(&a, E0 + 1, base1);
	mirror_authority_wait_for_diff(&a, E0 + 2, base1, &diff);
	unlink(log);
	ck_assert_int_eq(mirror_authority_run_mirror(&a, a.run.url, tree, log), 0);
	size_t len = 0;
	char *text = (char *)test_read_file(log, &len);
	ck_assert_msg(strstr(text, "body: rebuilt from a diff of") != NULL, "%s", text);
	ck_assert_msg(strstr(text, "1 diff new") != NULL, "%s", text);
	free(text);
	snprintf(relative, sizeof(relative), "snapshots/%llu/diff/%s", (unsigned long long)(E0 + 2), base1);
	expect_tree_file(tree, relative, &diff);
	static const char *const encodings[] = {".gz", ".zst"};
	for (size_t i = 0; i < 2; i++) {
		char encoded[300];
		snprintf(encoded, sizeof(encoded), "%s%s", relative, encodings[i]);
		ck_assert_msg(tree_file_exists(tree, encoded), "%s is missing", encoded);
	}
	char diff_zstd[LAUNCHER_PATH_MAX + 300], body_zstd[LAUNCHER_PATH_MAX + 64];
	struct stat diff_status, body_status;
	snprintf(diff_zstd, sizeof(diff_zstd), "%s/v1/mix/%s.zst", tree, relative);
	snprintf(body_zstd, sizeof(body_zstd), "%s/v1/mix/snapshots/%llu/body.zst", tree,
	         (unsigned long long)(E0 + 2));
	ck_assert(stat(diff_zstd, &diff_status) == 0 && stat(body_zstd, &body_status) == 0);
	printf("12 records: the diff is %lld bytes in zstd, the body %lld\n", (long long)diff_status.st_size,
	       (long long)body_status.st_size);
	ck_assert(diff_status.st_size * 2 <= body_status.st_size);

	/* Two epochs at once: diffs to the epoch between and to the latest, from each kept body. The
	 * first body's epoch is no longer valid: it leaves, and every diff from it. */
	mirror_authority_publish(&a, E0 + 3);
	mirror_authority_publish(&a, E0 + 4);
	mirror_authority_body_sha256(&a, E0 + 2, base2);
	buffer_reset(&diff);
	mirror_authority_wait_for_diff(&a, E0 + 4, base2, &diff);
	ck_assert_int_eq(mirror_authority_run_mirror(&a, a.run.url, tree, log), 0);
	snprintf(relative, sizeof(relative), "snapshots/%llu/diff/%s", (unsigned long long)(E0 + 4), base2);
	expect_tree_file(tree, relative, &diff);
	snprintf(relative, sizeof(relative), "snapshots/%llu/diff/%s", (unsigned long long)(E0 + 3), base2);
	ck_assert_msg(tree_file_exists(tree, relative), "%s is missing", relative);
	snprintf(relative, sizeof(relative), "snapshots/%llu/body", (unsigned long long)(E0 + 1));
	ck_assert_msg(!tree_file_exists(tree, relative), "%s is still served", relative);
	snprintf(relative, sizeof(relative), "snapshots/%llu/body", (unsigned long long)(E0 + 2));
	ck_assert_msg(tree_file_exists(tree, relative), "%s is missing", relative);
	snprintf(relative, sizeof(relative), "snapshots/%llu/diff/%s", (unsigned long long)(E0 + 2), base1);
	ck_assert_msg(!tree_file_exists(tree, relative), "%s outlived its base", relative);
	buffer_free(&diff);
	mirror_authority_stop(&a);
}
END_TEST

/* dirauthctl lookup of service against url; its exit status, its output in *outcome. */
static int run_lookup(const struct mirror_authority *a, const char *url, const char *namespace_name,
                      const char *service, struct test_outcome *outcome)
{
	char now[32];
	snprintf(now, sizeof(now), "%" PRIu64, a->now);
	const char *args[] = {"lookup",      "--trust",      a->bundle_path, "--server", url,
	                      "--namespace", namespace_name, "--now",        now,        service,
	                      NULL};
	test_run_program(test_binary_path("ctl/dirauthctl"), args, a->run.dir, outcome);
	return outcome->status;
}

START_TEST(test_lookup_refusals)
{
	struct mirror_authority a;
	struct canned c;
	struct test_outcome outcome;
	char path[160], other_path[160], name[RECORD_SHARD_NAME_MAX + 1], service[65];
	mirror_authority_start(&a);
	mirror_authority_register(&a, 6);
	mirror_authority_publish(&a, E0);
	mirror_authority_publish(&a, E0 + 1);
	memset(&c, 0, sizeof(c));
	ck_assert(stub_http_start(0, &c.stub) == 0);
	snprintf(c.url, sizeof(c.url), "http://127.0.0.1:%u", stub_http_port(c.stub));
	canned_copy(&c, a.run.url, "/v1/certificates");
	canned_copy(&c, a.run.url, "/v1/mix/snapshots/latest");
	ck_assert_uint_eq(header_epoch(c.bodies[1].data, c.bodies[1].len), E0 + 1);
	/* Shard 0 of the latest epoch (6 records: bits 1), once built, and a service in it. */
	snprintf(path, sizeof(path), "/v1/mix/snapshots/%" PRIu64 "/records/0", E0 + 1);
	snprintf(other_path, sizeof(other_path), "/v1/mix/snapshots/%" PRIu64 "/records/0", E0);
	struct test_http_response response;
	char url[512];
	for (int attempt = 0; attempt < 500; attempt++) {
		snprintf(url, sizeof(url), "%s%s", a.run.url, path);
		ck_assert(test_http_get(url, &response) == CURLE_OK);
		if (response.status == 200)
			break;
		buffer_free(&response.body);
		test_sleep_ms(20);
	}
	ck_assert_int_eq(response.status, 200);
	struct record_shard *shard = NULL;
	ck_assert(record_shard_parse(response.body.data, response.body.len, &shard) == 0);
	ck_assert_uint_eq(shard->bits, 1);
	size_t inside = shard->run_count;
	for (size_t i = 0; i < shard->run_count; i++)
		if (record_shard_of(shard->records[i].service_id, 1) == 0)
			inside = i;
	ck_assert_uint_lt(inside, shard->run_count);
	hex_encode(shard->records[inside].service_id, 32, service);
	record_shard_name(0, 1, name);
	record_shard_free(shard);
	buffer_free(&response.body);
	canned_copy(&c, a.run.url, path);
	ck_assert_int_eq(run_lookup(&a, c.url, "mix", service, &outcome), 0);
	test_outcome_free(&outcome);

	/* One byte of the shard changed, near its end (the proof, or a note when it has none). */
	canned_tamper(&c, path, -10);
	ck_assert_int_eq(run_lookup(&a, c.url, "mix", service, &outcome), 65);
	ck_assert_msg(strstr(outcome.err, "record shard") != NULL, "%s", outcome.err);
	test_outcome_free(&outcome);
	/* The shard of the epoch before, served for the latest. */
	struct buffer older = test_http_get_ok(a.run.url, other_path);
	ck_assert(stub_http_route(c.stub, "GET", path, 200, NULL, older.data, older.len) == 0);
	ck_assert_int_eq(run_lookup(&a, c.url, "mix", service, &outcome), 65);
	ck_assert_msg(strstr(outcome.err, "another snapshot") != NULL, "%s", outcome.err);
	test_outcome_free(&outcome);
	buffer_free(&older);
	/* No such shard on the server: its 404 is the server's refusal. */
	canned_missing(&c, path);
	ck_assert_int_eq(run_lookup(&a, c.url, "mix", service, &outcome), 76);
	test_outcome_free(&outcome);
	canned_restore(&c, path);
	ck_assert_int_eq(run_lookup(&a, c.url, "mix", service, &outcome), 0);
	test_outcome_free(&outcome);
	/* A namespace the bundle does not pin: refused before any download. */
	ck_assert_int_eq(run_lookup(&a, c.url, "other", service, &outcome), 78);
	test_outcome_free(&outcome);
	for (size_t i = 0; i < c.count; i++)
		buffer_free(&c.bodies[i]);
	stub_http_stop(c.stub);
	mirror_authority_stop(&a);
}
END_TEST

/* A registered service with a health statement: lookup prints the endpoint's published health,
 * and the endpoint without one as unknown. */
START_TEST(test_lookup_shows_health)
{
	struct mirror_authority a;
	struct test_outcome outcome;
	char key[LAUNCHER_PATH_MAX + 32], now[32], service[1024];
	snprintf(service, sizeof(service), "%s", test_source_path("keys-example/service-a.yaml"));
	mirror_authority_start(&a);
	snprintf(key, sizeof(key), "%s/keys/provider-a.key", a.run.dir);
	publish_service_a(&a, key, service);
	snprintf(now, sizeof(now), "%llu", (unsigned long long)a.now);
	const char *health_args[] = {"health",
	                             "--key",
	                             key,
	                             "--service",
	                             service,
	                             "--endpoint",
	                             "5a01000000000000000000000000000000000000000000000000000000000001",
	                             "--class",
	                             "draining",
	                             "--server",
	                             a.run.url,
	                             "--now",
	                             now,
	                             NULL};
	test_run_program(test_binary_path("ctl/dirauthctl"), health_args, a.run.dir, &outcome);
	ck_assert_msg(outcome.status == 0, "health: %s%s", outcome.out, outcome.err);
	test_outcome_free(&outcome);
	mirror_authority_publish(&a, E0 + 2);
	const char *id = "5a00000000000000000000000000000000000000000000000000000000000001";
	int status = -1;
	for (int attempt = 0; attempt < 200 && status != 0; attempt++) {
		if (attempt > 0) {
			test_outcome_free(&outcome);
			test_sleep_ms(20);
		}
		status = run_lookup(&a, a.run.url, "mix", id, &outcome);
	}
	ck_assert_msg(status == 0, "lookup: %d %s%s", status, outcome.out, outcome.err);
	ck_assert_msg(strstr(outcome.out,
	                     "192.0.2.10:443 eu-west medium modern health draining (by the provider key") !=
	                  NULL,
	              "%s", outcome.out);
	ck_assert_msg(strstr(outcome.out, "health unknown (no fresh statement: treat as unavailable)") !=
	                  NULL,
	              "%s", outcome.out);
	test_outcome_free(&outcome);
	mirror_authority_stop(&a);
}
END_TEST

static Suite *mirror_suite(void)
{
	Suite *suite = suite_create("mirror");
	TCase *tc = tcase_create("updates");
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_refused_update_changes_no_file);
	tcase_add_test(tc, test_killed_at_each_step_serves_one_epoch);
	tcase_add_test(tc, test_log_past_one_full_tile);
	tcase_add_test(tc, test_revoked_bodies_leave_the_tree);
	tcase_add_test(tc, test_diffs_taken_and_served);
	tcase_add_test(tc, test_lookup_refusals);
	tcase_add_test(tc, test_lookup_shows_health);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	SRunner *runner = srunner_create(mirror_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	curl_global_cleanup();
	return failures ? 1 : 0;
}
