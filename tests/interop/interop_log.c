/*
 * interop_log.c: dirauthd's transparency log, checked by an independent implementation of the
 * C2SP specifications (verify_log.go: the Go checksum database's sumdb/note and sumdb/tlog, and
 * Go's crypto/ed25519 for the cosignatures).
 *
 * A whole dirauthd runs in this process (tests/unit/http_fixture.h: the real signer with the
 * example log and cosignature keys, a real store, the HTTP server on loopback). The test publishes
 * LEAVES snapshots of mix, one per epoch, and catches the log up at each size of CHECKPOINTS, so
 * that the log holds a checkpoint, cosigned, of each: sizes around the tile boundaries (255, 256,
 * 257, 511, 512), small ones and the latest. Then it runs the Go verifier against the log's URL
 * with the log's, the cosigner's and the authority's verifier keys, and passes when it exits 0:
 * every checkpoint, cosignature, tile, entry bundle, inclusion and consistency proof verified.
 *
 * Usage: interop_log VERIFIER. Without a verifier binary (Go was not found when the tree was
 * configured) the test is skipped: exit 77.
 */
#include "http_fixture.h"

#include "schema/checkpoint.h"
#include "server/publish/publish.h"
#include "server/tlog/translog.h"
#include "signer/key.h"

#include <inttypes.h>
#include <sys/wait.h>

#define FIRST_EPOCH 11
#define ORIGIN      "dirauth.example/mix"

static const uint64_t CHECKPOINTS[] = {1, 7, 255, 256, 257, 300, 511, 512, 520};
#define CHECKPOINT_COUNT (sizeof CHECKPOINTS / sizeof CHECKPOINTS[0])

static const char *verifier_path;

/* Publishes mix's empty snapshot of epoch and makes it the latest served. */
static void publish(struct fixture *f, uint64_t epoch)
{
	uint64_t now = GENESIS + epoch * LENGTH + 1;
	write_clock(f, now);
	f->signer_process.now = now;
	struct publication p;
	char detail[256] = "";
	int rc = publish_snapshot(f->config, f->store, f->signer, 0, epoch, &p, detail, sizeof detail);
	ck_assert_msg(rc == 0, "publish %" PRIu64 ": %s %s", epoch, dirauth_strerror(rc), detail);
	ck_assert_int_eq(prepared_set_install(f->prepared, 0, &p.header_note), 0);
	publication_clear(&p);
}

static void verifier_string(const char *key_path, int cosignature, char out[NOTE_VERIFIER_KEY_MAX + 1])
{
	struct signer_key *key = NULL;
	ck_assert_int_eq(signer_key_load(key_path, &key), 0);
	if (cosignature) {
		struct note_verifier verifier;
		ck_assert_int_eq(cosignature_verifier_from_ed25519(signer_key_verifier(key)->name,
		                                                   signer_key_verifier(key)->public_key,
		                                                   &verifier),
		                 0);
		note_verifier_format(&verifier, out);
	} else {
		note_verifier_format(signer_key_verifier(key), out);
	}
	signer_key_free(key);
}

/* Runs the verifier with argv; its exit status (-1 when it did not exit). */
static int run(char *const argv[])
{
	fflush(stdout);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		execv(verifier_path, argv);
		_exit(127);
	}
	int status = 0;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

START_TEST(test_the_go_checksum_database_code_verifies_the_log)
{
	struct fixture f;
	fixture_open(&f, 0);

	uint64_t published = 0;
	for (size_t c = 0; c < CHECKPOINT_COUNT; c++) {
		while (published < CHECKPOINTS[c])
			publish(&f, FIRST_EPOCH + published++);
		struct translog_outcome outcome;
		int rc = translog_catch_up(f.store, f.config, f.signer, 0, &outcome);
		ck_assert_msg(rc == 0, "catch up: %s: %s", dirauth_strerror(rc), outcome.detail);
		ck_assert_uint_eq(outcome.checkpoint_size, CHECKPOINTS[c]);
	}

	char prefix[128], first_epoch[32], sizes[256] = "";
	char log_key[NOTE_VERIFIER_KEY_MAX + 1], cosigner[NOTE_VERIFIER_KEY_MAX + 1];
	char authority[NOTE_VERIFIER_KEY_MAX + 1];
	snprintf(prefix, sizeof prefix, "http://127.0.0.1:%u/v1/mix/log/", f.port);
	snprintf(first_epoch, sizeof first_epoch, "%d", FIRST_EPOCH);
	for (size_t c = 0; c < CHECKPOINT_COUNT; c++)
		snprintf(sizes + strlen(sizes), sizeof sizes - strlen(sizes), "%s%" PRIu64, c ? "," : "",
		         CHECKPOINTS[c]);
	verifier_string(f.signer_process.log_key_path, 0, log_key);
	verifier_string(f.signer_process.cosignature_key_path, 1, cosigner);
	note_verifier_format(&f.signer_process.signing, authority);

	char *argv[] = {(char *)verifier_path,
	                "-prefix",
	                prefix,
	                "-origin",
	                ORIGIN,
	                "-log-key",
	                log_key,
	                "-cosigner",
	                cosigner,
	                "-authority",
	                authority,
	                "-first-epoch",
	                first_epoch,
	                "-sizes",
	                sizes,
	                NULL};
	ck_assert_int_eq(run(argv), 0);

	/* The verifier is not a yes-machine: the same log under another origin, or with another log
	 * key (the cosigner's Ed25519 key as a note key), fails. */
	argv[4] = "dirauth.example/mail";
	ck_assert_int_eq(run(argv), 1);
	argv[4] = ORIGIN;
	char other_log_key[NOTE_VERIFIER_KEY_MAX + 1];
	verifier_string(f.signer_process.cosignature_key_path, 0, other_log_key);
	argv[6] = other_log_key;
	ck_assert_int_eq(run(argv), 1);
	fixture_close(&f);
}
END_TEST

int main(int argc, char **argv)
{
	if (argc < 2 || access(argv[1], X_OK) != 0) {
		printf(
		    "interop_log: no Go verifier (go was not found when the tree was configured): skipped\n");
		return 77;
	}
	verifier_path = argv[1];
	Suite *suite = suite_create("interop");
	TCase *tc = tcase_create("go");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_the_go_checksum_database_code_verifies_the_log);
	suite_add_tcase(suite, tc);
	SRunner *runner = srunner_create(suite);
	srunner_run_all(runner, CK_NORMAL);
	int failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed == 0 ? 0 : 1;
}
