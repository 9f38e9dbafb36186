/*
 * test_equivocation.c: dirauthctl monitor and verify-evidence, as programs, watching three
 * authorities (k = 2) on the cluster harness (tests/harness/cluster.h) and a fourth source the
 * test runs (tests/harness/stub_http.h), which serves what an authority that equivocates would
 * show one client.
 *
 *   1. Honest: over four epochs of 6 s, after each publication `dirauthctl monitor` with the
 *      three authorities as sources, their log and cosignature keys pinned, and one state
 *      directory, exits 0 and writes no evidence: every header verified, in the log (or not yet),
 *      every checkpoint consistent with the one before.
 *   2. Authority 1 equivocates: a second header for the latest epoch, signed with authority 1's
 *      own signing key (the key file the harness made for its signer), is served by the stub as
 *      its latest snapshot, with authority 1's certificates. A monitor running --every 1 with the
 *      four sources writes the evidence file within the epoch, and exits 3 on SIGTERM; the
 *      forked checkpoint of the same size (signed by authority 1's log key and cosigned by two
 *      cosignature keys) served with the real header is caught the same way by a single round.
 *   3. `dirauthctl verify-evidence FILE --trust BUNDLE` names authority 1 (and only it) for the
 *      headers, and authority 1's log key and the two cosigners for the checkpoints: exit 3.
 *
 * About 25 s.
 */
#include "test_support.h"

#include "schema/checkpoint.h"
#include "base/error.h"
#include "crypto/merkle.h"
#include "schema/snapshot.h"
#include "signer/key.h"
#include "tests/harness/cluster.h"
#include "tests/harness/stub_http.h"
#include "tlog/proof.h"

#include <check.h>

#include <dirent.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define N       3
#define K       2
#define EPOCHS  4
#define WAIT_MS 30000 /* a bound, not a pace: each wait ends as soon as its condition holds */
#define LIAR    1

struct watch {
	struct cluster *c;
	struct stub_http *stub;
	char stub_url[64];
	char state[1024];
	char evidence[1024];
	char work[1024];
	char log_keys[N][NOTE_VERIFIER_KEY_MAX + 1];
	char witnesses[N][NOTE_VERIFIER_KEY_MAX + 1];
	const char *args[40];
	size_t arg_count;
};

static void arg(struct watch *w, const char *value)
{
	ck_assert_uint_lt(w->arg_count, sizeof w->args / sizeof w->args[0] - 1);
	w->args[w->arg_count++] = value;
	w->args[w->arg_count] = NULL;
}

/* The monitor's arguments (after argv[0]): the trust bundle, the sources, the log's pins, the
 * state; with_stub adds the stub as a fourth source. */
static void monitor_args(struct watch *w, int with_stub)
{
	w->arg_count = 0;
	arg(w, "monitor");
	arg(w, "--trust");
	arg(w, cluster_trust_bundle_path(w->c));
	for (size_t i = 0; i < N; i++) {
		arg(w, "--source");
		arg(w, cluster_url(w->c, i));
	}
	if (with_stub) {
		arg(w, "--source");
		arg(w, w->stub_url);
	}
	for (size_t i = 0; i < N; i++) {
		arg(w, "--log-key");
		arg(w, w->log_keys[i]);
		arg(w, "--witness-key");
		arg(w, w->witnesses[i]);
	}
	arg(w, "--state");
	arg(w, w->state);
}

static size_t evidence_files(const struct watch *w, char *first, size_t cap)
{
	DIR *dir = opendir(w->evidence);
	size_t count = 0;
	if (dir == NULL)
		return 0;
	for (struct dirent *entry; (entry = readdir(dir)) != NULL;) {
		if (entry->d_name[0] == '.')
			continue;
		if (count++ == 0 && first != NULL)
			snprintf(first, cap, "%s/%s", w->evidence, entry->d_name);
	}
	closedir(dir);
	return count;
}

/* Runs dirauthctl with w->args (argv[0] excluded); returns its exit status, output in *out. */
static int run_ctl(struct watch *w, struct test_outcome *out)
{
	test_run_program(test_binary_path("ctl/dirauthctl"), w->args, w->work, out);
	return out->status;
}

/* A second header for the epoch of real, with another record count, signed by key. */
static void second_header(const struct signer_key *key, const struct buffer *real, struct buffer *out)
{
	struct note *note = NULL;
	struct snapshot_header header;
	struct note_signature signature;
	struct buffer text;
	ck_assert_int_eq(note_parse(real->data, real->len, &note), 0);
	ck_assert_int_eq(snapshot_header_parse(note->text, note->text_len, &header), 0);
	note_free(note);
	header.record_count += 1;
	buffer_init(&text);
	ck_assert_int_eq(snapshot_header_encode(&header, &text), 0);
	ck_assert_int_eq(signer_key_sign(key, text.data, text.len, &signature), 0);
	buffer_init(out);
	ck_assert_int_eq(note_format(text.data, text.len, &signature, 1, out), 0);
	buffer_free(&text);
}

/* Authority i's cosignature key, loaded from the key file the harness made. */
static struct signer_key *cosignature_key(struct cluster *c, size_t i)
{
	char path[1024];
	struct signer_key *key = NULL;
	snprintf(path, sizeof path, "%s/a%zu/keys/cosignature.key", cluster_dir(c), i);
	ck_assert_int_eq(signer_key_load(path, &key), 0);
	return key;
}

/* A checkpoint of (size, root) signed by log and cosigned by the cosigners of authorities 1 and 2. */
static void forked_checkpoint(struct cluster *c, uint64_t size, const merkle_hash root, struct buffer *out)
{
	struct checkpoint checkpoint;
	struct buffer text, message;
	struct note_signature signatures[3];
	memset(&checkpoint, 0, sizeof checkpoint);
	snprintf(checkpoint.origin, sizeof checkpoint.origin, "%s", CLUSTER_ORIGIN);
	checkpoint.tree_size = size;
	memcpy(checkpoint.root, root, MERKLE_HASH_SIZE);
	buffer_init(&text);
	buffer_init(&message);
	ck_assert_int_eq(checkpoint_encode(&checkpoint, &text), 0);
	ck_assert_int_eq(signer_key_sign(cluster_log_key(c, LIAR), text.data, text.len, &signatures[0]), 0);
	const uint64_t timestamp = cluster_now(c);
	ck_assert_int_eq(cosignature_message(timestamp, text.data, text.len, &message), 0);
	for (size_t j = 1; j <= 2; j++) {
		struct signer_key *key = cosignature_key(c, j);
		const struct note_verifier *cosigner = cluster_cosigner(c, j);
		uint8_t raw[64];
		ck_assert_int_eq(signer_key_sign_raw(key, message.data, message.len, raw), 0);
		cosignature_signature(cosigner, timestamp, raw, &signatures[j]);
		signer_key_free(key);
	}
	buffer_init(out);
	ck_assert_int_eq(note_format(text.data, text.len, signatures, 3, out), 0);
	buffer_free(&text);
	buffer_free(&message);
}

START_TEST(test_an_equivocating_authority_is_caught)
{
	struct cluster_options options = {.authorities = N, .threshold = K};
	struct watch w;
	struct test_outcome out;
	memset(&w, 0, sizeof w);
	w.c = cluster_start(&options);
	snprintf(w.state, sizeof w.state, "%s/monitor", cluster_dir(w.c));
	snprintf(w.evidence, sizeof w.evidence, "%s/monitor/evidence", cluster_dir(w.c));
	snprintf(w.work, sizeof w.work, "%s", cluster_dir(w.c));
	for (size_t i = 0; i < N; i++) {
		note_verifier_format(signer_key_verifier(cluster_log_key(w.c, i)), w.log_keys[i]);
		note_verifier_format(cluster_cosigner(w.c, i), w.witnesses[i]);
	}
	struct buffer registration;
	cluster_registration(w.c, cluster_provider_key(w.c, 0), "service", 0, 1, &registration);
	ck_assert_uint_eq(
	    cluster_register(w.c, CLUSTER_BIT(0) | CLUSTER_BIT(1) | CLUSTER_BIT(2), &registration, NULL), N);
	buffer_free(&registration);

	/* 1. Honest epochs: nothing found. */
	uint64_t first = cluster_next_epoch(w.c), epoch = first;
	struct snapshot_header published;
	for (uint64_t e = 0; e < EPOCHS; e++) {
		epoch = first + e;
		cluster_run_epoch(w.c, epoch);
		for (size_t i = 0; i < N; i++)
			ck_assert_msg(cluster_wait_epoch(w.c, i, epoch, WAIT_MS, &published, NULL) == 0,
			              "%s did not publish epoch %" PRIu64 "; see %s", cluster_name(w.c, i),
			              epoch, cluster_log_path(w.c, i));
		monitor_args(&w, 0);
		int status = run_ctl(&w, &out);
		ck_assert_msg(status == 0, "honest epoch %" PRIu64 ": monitor exit %d\n%s%s", epoch, status,
		              out.out, out.err);
		ck_assert_ptr_nonnull(strstr(out.out, "monitor: 3 of 3 sources answered"));
		ck_assert_ptr_nonnull(strstr(out.out, "no misbehaviour found"));
		test_outcome_free(&out);
		cluster_check_alive(w.c);
	}
	ck_assert_uint_eq(evidence_files(&w, NULL, 0), 0);

	/* 2. Authority 1 signs a second header for the latest epoch; the stub shows it to the monitor. */
	struct buffer real, forged;
	ck_assert_int_eq(cluster_snapshot(w.c, LIAR, epoch, &real, NULL), 0);
	second_header(cluster_signing_key(w.c, LIAR), &real, &forged);
	ck_assert_int_eq(stub_http_start(0, &w.stub), 0);
	snprintf(w.stub_url, sizeof w.stub_url, "http://127.0.0.1:%u", stub_http_port(w.stub));
	/* The stub serves what authority 1 serves at /v1/certificates. */
	struct cluster_response certificates;
	ck_assert_int_eq(cluster_get(w.c, LIAR, "/v1/certificates", &certificates), 200);
	ck_assert_int_eq(stub_http_route(w.stub, "GET", "/v1/certificates", 200, NULL, certificates.body.data,
	                                 certificates.body.len),
	                 0);
	cluster_response_free(&certificates);
	monitor_args(&w, 1);
	arg(&w, "--every");
	arg(&w, "1");
	char *argv[42];
	char log_path[1100];
	argv[0] = (char *)test_binary_path("ctl/dirauthctl");
	for (size_t i = 0; i < w.arg_count; i++)
		argv[i + 1] = (char *)w.args[i];
	argv[w.arg_count + 1] = NULL;
	snprintf(log_path, sizeof log_path, "%s/monitor.log", cluster_dir(w.c));
	pid_t monitor = test_spawn(argv, log_path);
	ck_assert_int_eq(
	    stub_http_route(w.stub, "GET", "/v1/mix/snapshots/latest", 200, NULL, forged.data, forged.len),
	    0);
	/* Caught within the epoch: the next one runs meanwhile. */
	char path[1400];
	cluster_run_epoch(w.c, epoch + 1);
	for (int waited = 0; evidence_files(&w, NULL, 0) == 0 && waited < WAIT_MS; waited += 100)
		test_sleep_ms(100);
	ck_assert_msg(evidence_files(&w, path, sizeof path) == 1, "no evidence written; see %s", log_path);
	ck_assert_ptr_nonnull(strstr(path, "/headers-mix-"));
	int wait_status = test_kill(monitor, SIGTERM);
	ck_assert_msg(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 3,
	              "monitor ended with %d; see %s", wait_status, log_path);
	size_t log_len = 0;
	char *log_text = (char *)test_read_file(log_path, &log_len);
	ck_assert_ptr_nonnull(log_text);
	ck_assert_msg(strstr(log_text, "MISBEHAVIOUR") != NULL, "%s", log_text);
	free(log_text);

	/* 3. The evidence names authority 1, and only it. */
	const char *verify[] = {"verify-evidence", path, "--trust", cluster_trust_bundle_path(w.c), NULL};
	test_run_program(test_binary_path("ctl/dirauthctl"), verify, w.work, &out);
	ck_assert_msg(out.status == 3, "verify-evidence exit %d\n%s%s", out.status, out.out, out.err);
	ck_assert_msg(strstr(out.out, "misbehaviour proven: ") != NULL, "%s", out.out);
	ck_assert_ptr_nonnull(strstr(out.out, cluster_name(w.c, LIAR)));
	ck_assert_ptr_null(strstr(out.out, cluster_name(w.c, 0)));
	ck_assert_ptr_null(strstr(out.out, cluster_name(w.c, 2)));
	test_outcome_free(&out);

	/* A forked checkpoint of the size the monitor holds, with the real header: caught in one
	 * round, and the keys that signed both are named. The log holds epochs first .. epoch + 1
	 * once each authority serves the proof of epoch + 1. */
	uint64_t latest = epoch + 1, size = latest - first + 1;
	char proof_path[128];
	snprintf(proof_path, sizeof proof_path, "/v1/mix/log/proof/%" PRIu64, latest);
	for (size_t i = 0; i < N; i++) {
		long got = 0;
		for (int waited = 0; waited < WAIT_MS; waited += 100) {
			struct cluster_response response;
			got = cluster_get(w.c, i, proof_path, &response);
			cluster_response_free(&response);
			if (got == 200)
				break;
			test_sleep_ms(100);
		}
		ck_assert_msg(got == 200, "%s serves no proof of epoch %" PRIu64, cluster_name(w.c, i),
		              latest);
	}
	merkle_hash leaves[EPOCHS + 1], root, path_hashes[MERKLE_MAX_PROOF];
	size_t path_len = 0;
	struct buffer latest_header;
	for (uint64_t e = first; e <= latest; e++) {
		struct buffer note_bytes;
		struct note *note = NULL;
		ck_assert_int_eq(cluster_snapshot(w.c, 0, e, &note_bytes, NULL), 0);
		ck_assert_int_eq(note_parse(note_bytes.data, note_bytes.len, &note), 0);
		ck_assert_int_eq(merkle_leaf_hash(note->text, note->text_len, leaves[e - first]), 0);
		note_free(note);
		if (e == latest)
			latest_header = note_bytes;
		else
			buffer_free(&note_bytes);
	}
	leaves[0][0] ^= 1; /* the fork: another first entry */
	ck_assert_int_eq(merkle_root(leaves, size, root), 0);
	ck_assert_int_eq(merkle_inclusion_proof(leaves, size, size - 1, path_hashes, &path_len), 0);
	struct buffer checkpoint, file;
	forked_checkpoint(w.c, size, root, &checkpoint);
	buffer_init(&file);
	ck_assert_int_eq(tlog_proof_encode(size - 1, path_hashes, path_len, latest_header.data,
	                                   latest_header.len, checkpoint.data, checkpoint.len, &file),
	                 0);
	ck_assert_int_eq(stub_http_route(w.stub, "GET", proof_path, 200, NULL, file.data, file.len), 0);
	/* A fresh state takes the honest checkpoint of that size first. */
	snprintf(w.state, sizeof w.state, "%s/monitor2", cluster_dir(w.c));
	snprintf(w.evidence, sizeof w.evidence, "%s/monitor2/evidence", cluster_dir(w.c));
	monitor_args(&w, 0);
	int status = run_ctl(&w, &out);
	ck_assert_msg(status == 0, "fresh state: monitor exit %d\n%s%s", status, out.out, out.err);
	test_outcome_free(&out);
	ck_assert_int_eq(stub_http_route(w.stub, "GET", "/v1/mix/snapshots/latest", 200, NULL,
	                                 latest_header.data, latest_header.len),
	                 0);
	monitor_args(&w, 1);
	status = run_ctl(&w, &out);
	ck_assert_msg(status == 3, "forked checkpoint: monitor exit %d\n%s%s", status, out.out, out.err);
	test_outcome_free(&out);
	ck_assert_uint_eq(evidence_files(&w, path, sizeof path), 1);
	ck_assert_ptr_nonnull(strstr(path, "/checkpoints-mix-"));
	const char *verify_fork[] = {"verify-evidence", path, NULL};
	test_run_program(test_binary_path("ctl/dirauthctl"), verify_fork, w.work, &out);
	ck_assert_msg(out.status == 3, "verify-evidence exit %d\n%s%s", out.status, out.out, out.err);
	ck_assert_ptr_nonnull(strstr(out.out, "with different roots"));
	ck_assert_ptr_nonnull(strstr(out.out, cluster_cosigner(w.c, 1)->name));
	ck_assert_ptr_nonnull(strstr(out.out, cluster_cosigner(w.c, 2)->name));
	test_outcome_free(&out);
	buffer_free(&latest_header);

	buffer_free(&real);
	buffer_free(&forged);
	buffer_free(&checkpoint);
	buffer_free(&file);
	stub_http_stop(w.stub);
	cluster_free(w.c);
}
END_TEST

static Suite *equivocation_suite(void)
{
	Suite *suite = suite_create("equivocation");
	TCase *tc = tcase_create("equivocation");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_an_equivocating_authority_is_caught);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(equivocation_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
