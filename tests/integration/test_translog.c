/*
 * test_translog.c: the transparency log survives SIGKILL at every step between a publication
 * and its checkpoint, with no gap and no fork.
 *
 * The real dirauth-signer binary (the example signing, log and cosignature keys, its own ledger)
 * and the real dirauthd binary run on one file clock. dirauthd appends each header it publishes
 * to the log, and after its first tick catches the log up with whatever was published before;
 * the test holds it at a pause point of translog_catch_up (DIRAUTH_PAUSE_AT) and kills it there
 * with SIGKILL. For each step in turn: (1) dirauthd publishes one epoch and is killed once the
 * signer has signed the log's next tree head, before anything is appended, so that the log lacks
 * a published header and the signer's latest tree head is one leaf ahead of it; (2) one epoch
 * later dirauthd starts again, its first tick publishes that epoch and the log catches up with the
 * two headers it lacks, and dirauthd is killed at the step: after the signatures and before any
 * append, after the first of the two appends, after both and before the checkpoint is stored,
 * after the checkpoint; (3) the store, opened by the test, holds exactly as many of the published
 * headers as the step says; (4) dirauthd started once more completes the log. Every time, the
 * log's leaves are the published headers' texts in epoch order and nothing past them, its stored
 * hashes make schema/merkle's root over them, and its checkpoint verifies against the log key and
 * the cosigner, has the root of the headers it covers, and is consistent with every checkpoint
 * before it; after (4) the checkpoint covers every published header, it is the signer's latest
 * tree head, dirauthd serves it, and its root is rebuilt from the tiles dirauthd serves.
 */
#include "test_example_authority.h"
#include "test_http.h"
#include "test_support.h"
#include "tests/harness/launcher.h"

#include "base/buffer.h"
#include "schema/certificate.h"
#include "schema/checkpoint.h"
#include "base/error.h"
#include "crypto/merkle.h"
#include "schema/note.h"
#include "schema/snapshot.h"
#include "server/signing/signer_client.h"
#include "server/store/snapshots.h"
#include "server/store/tlog_table.h"
#include "server/store/store.h"
#include "server/tlog/translog.h"
#include "signer/key.h"
#include "tlog/policy.h"
#include "tlog/tile.h"
#include "tlog/tree.h"

#include <check.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define EPOCH_LENGTH 60
#define START_TIME   1800000000ULL /* a multiple of EPOCH_LENGTH */
#define ORIGIN       "dirauth.example/mix"
#define MAX_EPOCHS   64    /* more than the test publishes */
#define WAIT_MS      30000 /* a sanitized dirauthd opening its store can take seconds */

struct authority {
	struct launcher run;
	unsigned runs; /* of dirauthd, each with its own log */
	uint64_t now;
	struct note_verifier log_key, cosigner;
};

/* ---- the authority ---- */

static void set_clock(struct authority *a, uint64_t now)
{
	launcher_set_clock(&a->run, now);
	a->now = now;
}

/* Keys, certificate, both configurations and the clock in a fresh directory. */
static void authority_prepare(struct authority *a)
{
	char dir[256];
	memset(a, 0, sizeof(*a));
	test_make_tempdir(dir, sizeof(dir));
	launcher_lay_out(&a->run, dir);
	char command[1024];
	snprintf(command, sizeof(command), "bash '%s' '%s/keys' >/dev/null",
	         test_source_path("scripts/example-keys.sh"), a->run.dir);
	ck_assert_msg(system(command) == 0, "example-keys.sh failed");

	test_write_authority_certificate(a->run.dir, START_TIME - 86400, START_TIME + 30 * 86400);
	struct signer_key *log = test_run_key(a->run.dir, "log.key");
	a->log_key = *signer_key_verifier(log);
	signer_key_free(log);
	struct signer_key *cosigner = test_run_key(a->run.dir, "cosignature.key");
	ck_assert(cosignature_verifier_from_ed25519(signer_key_verifier(cosigner)->name,
	                                            signer_key_verifier(cosigner)->public_key,
	                                            &a->cosigner) == 0);
	signer_key_free(cosigner);

	set_clock(a, START_TIME + 1);

	struct run_directory_signer signer = {"authority1.dirauth.example", "authority1.key",
	                                      "authority1.cert", 1, 0};
	const struct launcher_namespace mix = {"mix", NULL};
	launcher_write_configs(&a->run, &signer, EPOCH_LENGTH, 3, &mix, 1, LAUNCHER_EXAMPLE_PROVIDERS);
}

static long long monotonic_ms(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* Starts dirauthd, its output in a log of its own; with pause_at, held at that pause point
 * (DIRAUTH_PAUSE_AT) until it is killed. Does not wait for it to listen. */
static void dirauthd_start(struct authority *a, const char *pause_at)
{
	snprintf(a->run.log_path, sizeof(a->run.log_path), "%s/dirauthd-%u.log", a->run.dir, ++a->runs);
	if (pause_at) {
		setenv("DIRAUTH_PAUSE_AT", pause_at, 1);
		setenv("DIRAUTH_PAUSE_MS", "600000", 1);
	}
	launcher_spawn_dirauthd(&a->run);
	unsetenv("DIRAUTH_PAUSE_AT");
	unsetenv("DIRAUTH_PAUSE_MS");
}

/* Waits until this run of dirauthd says it is paused at name. */
static void wait_paused(const struct authority *a, const char *name)
{
	char line[128];
	snprintf(line, sizeof(line), "dirauth: paused at %s\n", name);
	for (long long deadline = monotonic_ms() + WAIT_MS; monotonic_ms() < deadline;) {
		size_t len = 0;
		int found = 0;
		if (access(a->run.log_path, F_OK) == 0) {
			char *text = (char *)test_read_file(a->run.log_path, &len);
			found = strstr(text, line) != NULL;
			free(text);
		}
		if (found)
			return;
		ck_assert_msg(waitpid(a->run.pid, NULL, WNOHANG) == 0, "dirauthd exited before %s; see %s",
		              name, a->run.log_path);
		test_sleep_ms(10);
	}
	ck_abort_msg("dirauthd never paused at %s; see %s", name, a->run.log_path);
}

/* Kills dirauthd with signal and reaps it; with SIGTERM, it must stop cleanly. */
static void dirauthd_stop(struct authority *a, int signal)
{
	int status = launcher_stop_dirauthd(&a->run, signal);
	if (signal == SIGKILL)
		ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
		              "dirauthd was not killed (status %d); see %s", status, a->run.log_path);
	else
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		              "dirauthd did not stop cleanly (status %d); see %s", status, a->run.log_path);
}

/* The checkpoint dirauthd serves, verified, once it covers size headers (never more). */
static struct checkpoint wait_checkpoint(const struct authority *a, uint64_t size)
{
	char url[128];
	snprintf(url, sizeof(url), "%s/v1/mix/log/checkpoint", a->run.url);
	struct tlog_policy policy = {ORIGIN, &a->log_key, &a->cosigner, 1, 1};
	struct checkpoint served;
	memset(&served, 0, sizeof(served));
	for (long long deadline = monotonic_ms() + WAIT_MS; monotonic_ms() < deadline;) {
		struct test_http_response response;
		CURLcode rc = test_http_get(url, &response);
		if (rc == CURLE_OK && response.status == 200) {
			struct note *note = NULL;
			ck_assert_int_eq(note_parse(response.body.data, response.body.len, &note), 0);
			ck_assert_int_eq(tlog_checkpoint_verify(note, &policy, &served, NULL, NULL), 0);
			note_free(note);
		}
		buffer_free(&response.body);
		ck_assert_uint_le(served.tree_size, size);
		if (served.tree_size == size)
			return served;
		ck_assert_msg(waitpid(a->run.pid, NULL, WNOHANG) == 0, "dirauthd exited; see %s",
		              a->run.log_path);
		test_sleep_ms(20);
	}
	ck_abort_msg("dirauthd never served a checkpoint of %llu entries (last %llu); see %s",
	             (unsigned long long)size, (unsigned long long)served.tree_size, a->run.log_path);
	return served;
}

/* The latest tree head of the log's origin that the signer signed or cosigned (size 0: none). */
static uint64_t signer_tree_head(const struct authority *a, merkle_hash root)
{
	struct signer_client *signer = NULL;
	struct buffer payload;
	struct translog_signer_state state;
	char why[SIGNER_DETAIL_MAX + 1] = "";
	uint64_t size = 0;
	buffer_init(&payload);
	ck_assert_int_eq(signer_client_open(a->run.socket_path, 5000, &signer), 0);
	ck_assert_msg(signer_client_query(signer, SIGNER_OP_CHECKPOINT_STATE, (const uint8_t *)ORIGIN,
	                                  strlen(ORIGIN), &payload, why, sizeof(why)) == 0,
	              "CHECKPOINT_STATE: %s", why);
	ck_assert_int_eq(translog_signer_state_parse(payload.data, payload.len, &state), 0);
	int rc = translog_signer_state_latest(&state, &size, root);
	ck_assert(rc == 0 || rc == DIRAUTH_ERR_NOT_FOUND);
	buffer_free(&payload);
	signer_client_close(signer);
	return rc == 0 ? size : 0;
}

/* ---- what the log must be ---- */

/* The published epochs of mix, in order (at most cap). */
static size_t published_epochs(struct store *store, uint64_t *epochs, size_t cap)
{
	size_t count = 0;
	uint64_t epoch = 0;
	const uint64_t *after = NULL;
	while (count < cap && store_log_next_published(store, "mix", after, &epoch) == 0) {
		epochs[count++] = epoch;
		after = &epochs[count - 1];
	}
	return count;
}

/* What the store holds of mix and its log. */
struct log_view {
	uint64_t published;           /* headers published: one per epoch, from the first */
	uint64_t size;                /* leaves in the log */
	struct checkpoint checkpoint; /* the stored one (tree_size 0: none) */
};

/* The log in the store (opened here; no dirauthd runs) is the published headers, in order, up to
 * its size (all of them when complete), and its stored hashes make their tree; its checkpoint
 * (when complete, of every header) verifies, has that tree's root, and is consistent with each of
 * the earlier checkpoints. */
static struct log_view check_log(const struct authority *a, int complete, const struct checkpoint *earlier,
                                 size_t earlier_count)
{
	char data[600];
	snprintf(data, sizeof(data), "%s/data", a->run.dir);
	struct store_options options = {.path = data};
	struct store *store = NULL;
	ck_assert_int_eq(store_open(&options, &store), 0);
	uint64_t epochs[MAX_EPOCHS];
	size_t count = published_epochs(store, epochs, MAX_EPOCHS);
	ck_assert_uint_lt(count, MAX_EPOCHS);
	for (size_t i = 0; i < count; i++)
		ck_assert_uint_eq(epochs[i], START_TIME / EPOCH_LENGTH + i);
	struct store_log_state state;
	ck_assert_int_eq(store_log_state(store, "mix", &state), 0);
	ck_assert_uint_le(state.size, count);
	if (complete)
		ck_assert_uint_eq(state.size, count);
	struct log_view view = {.published = count, .size = state.size};

	/* No gap, no fork: leaf i is the i-th published header's text. */
	merkle_hash leaves[MAX_EPOCHS];
	struct buffer leaf, header;
	buffer_init(&leaf);
	buffer_init(&header);
	for (uint64_t i = 0; i < count; i++) {
		struct note *note = NULL;
		ck_assert_int_eq(store_snapshot_get(store, "mix", epochs[i], &header, NULL), 0);
		ck_assert_int_eq(note_parse(header.data, header.len, &note), 0);
		ck_assert_int_eq(merkle_leaf_hash(note->text, note->text_len, leaves[i]), 0);
		if (i < state.size) {
			uint64_t epoch = 0;
			ck_assert_int_eq(store_log_leaf(store, "mix", i, &epoch, &leaf), 0);
			ck_assert_uint_eq(epoch, epochs[i]);
			ck_assert_uint_eq(leaf.len, note->text_len);
			ck_assert_mem_eq(leaf.data, note->text, leaf.len);
		}
		note_free(note);
	}
	for (uint64_t i = 0; i < count; i++) {
		uint64_t index = 0;
		int rc = store_log_epoch_leaf(store, "mix", epochs[i], &index);
		ck_assert_int_eq(rc, i < state.size ? 0 : DIRAUTH_ERR_NOT_FOUND);
		if (rc == 0)
			ck_assert_uint_eq(index, i);
	}
	ck_assert_int_eq(store_log_leaf(store, "mix", state.size, NULL, &leaf), DIRAUTH_ERR_NOT_FOUND);
	struct store_log_reader reader;
	ck_assert_int_eq(store_log_reader_open(store, "mix", &reader), 0);
	struct tlog_hash_reader hashes = {store_log_read_hashes, &reader};
	merkle_hash root, expected;
	ck_assert_int_eq(tlog_tree_root(&hashes, state.size, root), 0);
	ck_assert_int_eq(merkle_root(leaves, state.size, expected), 0);
	ck_assert_mem_eq(root, expected, MERKLE_HASH_SIZE);

	memset(&view.checkpoint, 0, sizeof(view.checkpoint));
	if (state.has_checkpoint) {
		struct note *note = NULL;
		struct tlog_policy policy = {ORIGIN, &a->log_key, &a->cosigner, 1, 1};
		ck_assert_int_eq(store_log_checkpoint(store, "mix", &header, NULL), 0);
		ck_assert_int_eq(note_parse(header.data, header.len, &note), 0);
		ck_assert_int_eq(tlog_checkpoint_verify(note, &policy, &view.checkpoint, NULL, NULL), 0);
		note_free(note);
		ck_assert_uint_le(view.checkpoint.tree_size, state.size);
		ck_assert_uint_eq(view.checkpoint.tree_size, state.checkpoint_size);
		ck_assert_int_eq(merkle_root(leaves, view.checkpoint.tree_size, expected), 0);
		ck_assert_mem_eq(view.checkpoint.root, expected, MERKLE_HASH_SIZE);
	}
	if (complete)
		ck_assert_uint_eq(view.checkpoint.tree_size, count);
	for (size_t i = 0; i < earlier_count; i++) {
		const struct checkpoint *old = &earlier[i];
		merkle_hash proof[MERKLE_MAX_PROOF];
		size_t proof_count = 0;
		ck_assert_uint_ge(view.checkpoint.tree_size, old->tree_size);
		ck_assert_int_eq(merkle_consistency_proof(leaves, view.checkpoint.tree_size, old->tree_size,
		                                          proof, &proof_count),
		                 0);
		ck_assert_int_eq(merkle_consistency_verify(old->tree_size, view.checkpoint.tree_size,
		                                           old->root, view.checkpoint.root, proof,
		                                           proof_count),
		                 0);
	}
	buffer_free(&leaf);
	buffer_free(&header);
	store_close(store);
	return view;
}

/* A tlog_fetch_tile from dirauthd over HTTP. */
static int fetch_tile(void *context, const struct tlog_tile *tile, uint8_t out[TLOG_TILE_BYTES], size_t *len)
{
	const struct authority *a = context;
	char path[TLOG_TILE_PATH_MAX + 1], url[256];
	ck_assert_int_eq(tlog_tile_path_format(tile, path), 0);
	snprintf(url, sizeof(url), "%s/v1/mix/log/%s", a->run.url, path);
	struct test_http_response response;
	int rc = test_http_get(url, &response) == CURLE_OK && response.status == 200 &&
	                 response.body.len <= TLOG_TILE_BYTES
	             ? 0
	             : DIRAUTH_ERR_NOT_FOUND;
	if (rc == 0) {
		memcpy(out, response.body.data, response.body.len);
		*len = response.body.len;
	}
	buffer_free(&response.body);
	return rc;
}

/* The root of served rebuilt from the tiles dirauthd serves. */
static void check_tiles(struct authority *a, const struct checkpoint *served)
{
	struct tlog_tile_source *source = calloc(1, sizeof(*source));
	ck_assert(source != NULL);
	source->fetch = fetch_tile;
	source->context = a;
	source->tree_size = served->tree_size;
	struct tlog_hash_reader reader = {tlog_tile_source_read, source};
	merkle_hash root;
	ck_assert_int_eq(tlog_tree_root(&reader, served->tree_size, root), 0);
	ck_assert_mem_eq(root, served->root, MERKLE_HASH_SIZE);
	free(source);
}

/* Adds checkpoint to the history unless it is the latest there already. */
static void remember(struct checkpoint *history, size_t *count, const struct checkpoint *checkpoint)
{
	if (checkpoint->tree_size == 0 ||
	    (*count > 0 && history[*count - 1].tree_size == checkpoint->tree_size))
		return;
	ck_assert_uint_lt(*count, MAX_EPOCHS);
	history[(*count)++] = *checkpoint;
}

/* dirauthd, started without a pause point, completes the log: its checkpoint covers the
 * published headers, it serves it and the tiles that rebuild its root, and once stopped the store
 * holds the complete log, consistent with every earlier checkpoint. */
static void complete_log(struct authority *a, uint64_t published, struct checkpoint *history, size_t *count)
{
	dirauthd_start(a, NULL);
	struct checkpoint served = wait_checkpoint(a, published);
	check_tiles(a, &served);
	dirauthd_stop(a, SIGTERM);
	struct log_view view = check_log(a, 1, history, *count);
	ck_assert_uint_eq(view.published, published);
	ck_assert_mem_eq(view.checkpoint.root, served.root, MERKLE_HASH_SIZE);
	merkle_hash root;
	ck_assert_uint_eq(signer_tree_head(a, root), published);
	ck_assert_mem_eq(root, served.root, MERKLE_HASH_SIZE);
	remember(history, count, &view.checkpoint);
}

START_TEST(test_sigkill_at_every_step_of_the_log)
{
	static const char *const steps[] = {"translog-signed", "translog-appending", "translog-appended",
	                                    "translog-checkpointed"};
	struct authority a;
	struct checkpoint history[MAX_EPOCHS];
	size_t history_count = 0;
	authority_prepare(&a);
	launcher_start_signer(&a.run);

	/* The first epoch, published and logged. */
	complete_log(&a, 1, history, &history_count);

	for (size_t step = 0; step < sizeof(steps) / sizeof(steps[0]); step++) {
		uint64_t before = history[history_count - 1].tree_size;

		/* 1. One epoch published, killed once the signer has signed the log's next tree head
		 *    and before anything is appended: the log lacks a published header, the signer is
		 *    one leaf ahead. */
		dirauthd_start(&a, "translog-signed");
		set_clock(&a, a.now + EPOCH_LENGTH);
		wait_paused(&a, "translog-signed");
		dirauthd_stop(&a, SIGKILL);
		struct log_view view = check_log(&a, 0, history, history_count);
		ck_assert_uint_eq(view.published, before + 1);
		ck_assert_uint_eq(view.size, before);
		ck_assert_uint_eq(view.checkpoint.tree_size, before);
		merkle_hash root;
		ck_assert_uint_eq(signer_tree_head(&a, root), before + 1);

		/* 2. One epoch later: the first tick publishes it, the log catches up with the two
		 *    headers it lacks, and dirauthd is killed at the step. */
		set_clock(&a, a.now + EPOCH_LENGTH);
		dirauthd_start(&a, steps[step]);
		wait_paused(&a, steps[step]);
		dirauthd_stop(&a, SIGKILL);

		/* 3. The log is the published headers, as many appended as the step says. */
		view = check_log(&a, 0, history, history_count);
		ck_assert_uint_eq(view.published, before + 2);
		ck_assert_uint_eq(view.size, step == 0 ? before : step == 1 ? before + 1 : before + 2);
		ck_assert_uint_eq(view.checkpoint.tree_size, step == 3 ? before + 2 : before);
		ck_assert_uint_eq(signer_tree_head(&a, root), before + 2);
		remember(history, &history_count, &view.checkpoint);

		/* 4. Started again, dirauthd completes it. */
		complete_log(&a, before + 2, history, &history_count);
	}
	ck_assert_uint_eq(history[history_count - 1].tree_size, 1 + 2 * (sizeof(steps) / sizeof(steps[0])));
	launcher_stop_signer(&a.run, SIGTERM);
	test_remove_tree(a.run.dir);
}
END_TEST

static Suite *translog_suite(void)
{
	Suite *suite = suite_create("translog");
	TCase *tc = tcase_create("crash");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_sigkill_at_every_step_of_the_log);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	SRunner *runner = srunner_create(translog_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	curl_global_cleanup();
	return failures ? 1 : 0;
}
