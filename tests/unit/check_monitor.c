/*
 * check_monitor.c: dirauthctl monitor and verify-evidence against a real dirauthd in the test
 * process (http_fixture.h: the real signer with the example keys, a real store, the HTTP server
 * on loopback) and a second source the test controls (tests/harness/stub_http.h), which serves
 * what an authority that equivocates would: a second header for an epoch signed with the
 * authority's own signing key, a forked checkpoint signed by the log key and cosigned, a forked
 * checkpoint of a larger size with its (fork's) consistency proof, the authority's own kept
 * evidence.
 *
 *   - honest: rounds over epochs, gaps fetched, every header in the log, checkpoints held
 *     consistent, a header not yet in the log pending and checked the next round; no evidence;
 *   - each contradiction becomes exactly one evidence file (found again, the same file) that
 *     ctl_evidence_verify and dirauthctl verify-evidence prove, naming the authority or the keys;
 *   - refusals: an unreachable source, a header by an unknown key, a proof of another header, a
 *     checkpoint by another log key, a corrupt state: failures (exit 1), never evidence; the
 *     options of both commands; invalid evidence files (exit 1) of every kind.
 */
#include "http_fixture.h"
#include "test_signed_notes.h"

#include "ctl/evidence.h"
#include "ctl/fetch.h"
#include "ctl/files.h"
#include "ctl/monitor.h"
#include "ctl/proof.h"
#include "schema/checkpoint.h"
#include "schema/evidence.h"
#include "crypto/merkle.h"
#include "schema/trust_bundle.h"
#include "schema/vote.h"
#include "schema/vote_envelope.h"
#include "server/publish/publish.h"
#include "server/store/tlog_table.h"
#include "server/tlog/translog.h"
#include "signer/key.h"
#include "tests/harness/stub_http.h"
#include "tlog/consistency.h"
#include "tlog/proof.h"

#include <dirent.h>
#include <inttypes.h>
#include <sys/stat.h>

#define FIRST_EPOCH 11
#define ORIGIN      "dirauth.example/mix"

struct world {
	struct fixture f;
	char url[64];
	char stub_url[64];
	char state[700];
	char evidence[700];
	char bundle_path[700];
	struct trust_bundle bundle;
	struct ctl_log_pins pins;
	char log_key[NOTE_VERIFIER_KEY_MAX + 1];
	char witness[NOTE_VERIFIER_KEY_MAX + 1];
	struct signer_key *log_signer;
	struct signer_key *cosigner;
	struct signer_key *signing;
	struct note_verifier cosigner_verifier;
	struct stub_http *stub;
	struct buffer certificates;
};

static uint64_t time_of(uint64_t epoch)
{
	return GENESIS + epoch * LENGTH + 1;
}

static void publish(struct world *w, uint64_t epoch)
{
	write_clock(&w->f, time_of(epoch));
	w->f.signer_process.now = time_of(epoch);
	struct publication p;
	char detail[256] = "";
	int rc = publish_snapshot(w->f.config, w->f.store, w->f.signer, 0, epoch, &p, detail, sizeof detail);
	ck_assert_msg(rc == 0, "publish %" PRIu64 ": %s %s", epoch, dirauth_strerror(rc), detail);
	ck_assert_int_eq(prepared_set_install(w->f.prepared, 0, &p.header_note), 0);
	publication_clear(&p);
}

static void catch_up(struct world *w, uint64_t expected_size)
{
	struct translog_outcome outcome;
	int rc = translog_catch_up(w->f.store, w->f.config, w->f.signer, 0, &outcome);
	ck_assert_msg(rc == 0, "catch up: %s: %s", dirauth_strerror(rc), outcome.detail);
	ck_assert_uint_eq(outcome.checkpoint_size, expected_size);
}

static void get_ok(struct world *w, const char *path, struct buffer *out)
{
	struct response r;
	request(&w->f, "GET", path, NULL, 0, 0, NULL, &r);
	ck_assert_msg(r.status == 200, "%s: %ld", path, r.status);
	buffer_reset(out);
	ck_assert_int_eq(buffer_append(out, r.body.data, r.body.len), 0);
	response_free(&r);
}

static void world_open(struct world *w)
{
	memset(w, 0, sizeof *w);
	fixture_open(&w->f, 0);
	snprintf(w->url, sizeof w->url, "http://127.0.0.1:%u", w->f.port);
	snprintf(w->state, sizeof w->state, "%s/monitor", w->f.dir);
	snprintf(w->evidence, sizeof w->evidence, "%s/monitor/evidence", w->f.dir);
	snprintf(w->bundle_path, sizeof w->bundle_path, "%s/trust.txt", w->f.dir);
	char identity[NOTE_VERIFIER_KEY_MAX + 1], text[2048];
	note_verifier_format(&w->f.signer_process.identity, identity);
	int n = snprintf(text, sizeof text,
	                 "dirauth trust v1\nnamespace mix " ORIGIN "\nauthority %s\nthreshold 1\n", identity);
	test_write_file(w->bundle_path, text, (size_t)n, 0644);
	ck_assert_int_eq(trust_bundle_parse((const uint8_t *)text, (size_t)n, &w->bundle, NULL), 0);
	ck_assert_int_eq(signer_key_load(w->f.signer_process.log_key_path, &w->log_signer), 0);
	ck_assert_int_eq(signer_key_load(w->f.signer_process.cosignature_key_path, &w->cosigner), 0);
	ck_assert_int_eq(signer_key_load(w->f.signer_process.key_path, &w->signing), 0);
	ck_assert_int_eq(cosignature_verifier_from_ed25519(signer_key_verifier(w->cosigner)->name,
	                                                   signer_key_verifier(w->cosigner)->public_key,
	                                                   &w->cosigner_verifier),
	                 0);
	note_verifier_format(signer_key_verifier(w->log_signer), w->log_key);
	note_verifier_format(&w->cosigner_verifier, w->witness);
	const char *log_keys[] = {w->log_key};
	const char *witnesses[] = {w->witness};
	struct ctl_report report;
	ctl_report_init(&report);
	ck_assert_int_eq(ctl_log_pins_parse("test", log_keys, 1, witnesses, 1, NULL, 1, &w->pins, &report),
	                 0);
	ck_assert_int_eq(stub_http_start(0, &w->stub), 0);
	snprintf(w->stub_url, sizeof w->stub_url, "http://127.0.0.1:%u", stub_http_port(w->stub));
	buffer_init(&w->certificates);
	get_ok(w, "/v1/certificates", &w->certificates);
	ck_assert_int_eq(stub_http_route(w->stub, "GET", "/v1/certificates", 200, NULL, w->certificates.data,
	                                 w->certificates.len),
	                 0);
}

static void world_close(struct world *w)
{
	stub_http_stop(w->stub);
	buffer_free(&w->certificates);
	signer_key_free(w->log_signer);
	signer_key_free(w->cosigner);
	signer_key_free(w->signing);
	fixture_close(&w->f);
}

static void serve(struct world *w, const char *path, const struct buffer *body)
{
	ck_assert_int_eq(stub_http_route(w->stub, "GET", path, 200, NULL, body->data, body->len), 0);
}

static int round_of(struct world *w, const char *first, const char *second, struct ctl_monitor_round *r)
{
	const char *sources[2] = {first, second};
	struct ctl_monitor_options options = {&w->bundle, sources, second != NULL ? 2 : 1, &w->pins, w->state,
	                                      NULL,       NULL};
	int outcome = ctl_monitor_round_run(&options, r);
	for (size_t i = 0; i < r->failure_count && i < CTL_MONITOR_FAILURES_MAX; i++)
		fprintf(stderr, "round failure: %s\n", r->failures[i]);
	return outcome;
}

static size_t evidence_files(const struct world *w)
{
	DIR *dir = opendir(w->evidence);
	size_t count = 0;
	if (dir == NULL)
		return 0;
	for (struct dirent *entry; (entry = readdir(dir)) != NULL;)
		count += entry->d_name[0] != '.';
	closedir(dir);
	return count;
}

/* The first evidence file the round names, read into out; its path into path. */
static void round_evidence(const struct ctl_monitor_round *r, size_t which, char *path, size_t cap,
                           struct buffer *out)
{
	const char *at = r->evidence;
	for (size_t i = 0; i < which; i++) {
		at = strstr(at, ", ");
		ck_assert_ptr_nonnull(at);
		at += 2;
	}
	const char *end = strstr(at, ", ");
	size_t len = end != NULL ? (size_t)(end - at) : strlen(at);
	ck_assert_uint_lt(len, cap);
	memcpy(path, at, len);
	path[len] = '\0';
	size_t file_len = 0;
	uint8_t *bytes = test_read_file(path, &file_len);
	ck_assert_ptr_nonnull(bytes);
	buffer_reset(out);
	ck_assert_int_eq(buffer_append(out, bytes, file_len), 0);
	free(bytes);
}

/* A header of epoch like the real one, with another record count, signed by the authority's
 * own signing key. */
static void second_header(struct world *w, const struct buffer *real, struct buffer *out)
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
	ck_assert_int_eq(signer_key_sign(w->signing, text.data, text.len, &signature), 0);
	buffer_reset(out);
	ck_assert_int_eq(note_format(text.data, text.len, &signature, 1, out), 0);
	buffer_free(&text);
}

static void text_of(const struct buffer *note_bytes, struct buffer *text)
{
	ck_assert_int_eq(test_note_text(note_bytes, text), 0);
}

/* A checkpoint of (size, root) signed by the example log key and cosigned by the example
 * cosignature key, as check_fetch_log makes one. */
static void sign_checkpoint(const struct world *w, uint64_t size, const merkle_hash root, struct buffer *out)
{
	buffer_reset(out);
	ck_assert_int_eq(test_cosigned_checkpoint(w->log_signer, w->cosigner, &w->cosigner_verifier, ORIGIN,
	                                          size, root, time_of(30), out),
	                 0);
}

/* The leaf hashes of the published headers of epochs FIRST_EPOCH .. FIRST_EPOCH + count - 1. */
static void leaves_of(struct world *w, size_t count, merkle_hash *leaves)
{
	struct buffer note, text;
	char path[64];
	buffer_init(&note);
	buffer_init(&text);
	for (size_t i = 0; i < count; i++) {
		snprintf(path, sizeof path, "/v1/mix/snapshots/%" PRIu64, (uint64_t)FIRST_EPOCH + i);
		get_ok(w, path, &note);
		text_of(&note, &text);
		ck_assert_int_eq(merkle_leaf_hash(text.data, text.len, leaves[i]), 0);
	}
	buffer_free(&note);
	buffer_free(&text);
}

/* A proof file of header (the note of leaf index) in the tree of leaves, under a checkpoint of
 * that tree signed and cosigned by the example keys. */
static void proof_in(struct world *w, const merkle_hash *leaves, size_t count, uint64_t index,
                     const struct buffer *header, struct buffer *out)
{
	merkle_hash root, path[MERKLE_MAX_PROOF];
	size_t path_len = 0;
	struct buffer checkpoint;
	buffer_init(&checkpoint);
	ck_assert_int_eq(merkle_root(leaves, count, root), 0);
	ck_assert_int_eq(merkle_inclusion_proof(leaves, count, index, path, &path_len), 0);
	sign_checkpoint(w, count, root, &checkpoint);
	buffer_reset(out);
	ck_assert_int_eq(tlog_proof_encode(index, path, path_len, header->data, header->len, checkpoint.data,
	                                   checkpoint.len, out),
	                 0);
	buffer_free(&checkpoint);
}

static int run_command(int (*command)(int, char **, struct ctl_report *), const char *const *args,
                       struct ctl_report *report)
{
	char *argv[32];
	int argc = 0;
	while (args[argc] != NULL) {
		argv[argc] = (char *)args[argc];
		argc++;
	}
	argv[argc] = NULL;
	ctl_report_init(report);
	return command(argc, argv, report);
}

static volatile sig_atomic_t never_stop;

static int monitor_command(int argc, char **argv, struct ctl_report *report)
{
	return ctl_monitor_command(argc, argv, &never_stop, report);
}

/* ---- honest ---- */

START_TEST(test_honest_rounds_find_nothing)
{
	struct world w;
	struct ctl_monitor_round r;
	world_open(&w);
	for (uint64_t e = FIRST_EPOCH; e < FIRST_EPOCH + 5; e++)
		publish(&w, e);
	catch_up(&w, 5);

	ck_assert_int_eq(round_of(&w, w.url, NULL, &r), 0);
	ck_assert_uint_eq(r.headers, 1);
	ck_assert_uint_eq(r.included, 1);
	ck_assert_uint_eq(r.checkpoints, 1);
	ck_assert_uint_eq(r.held_size, 5);
	ck_assert_uint_eq(r.failure_count, 0);
	ck_assert_msg(strstr(r.line,
	                     "monitor: 1 of 1 sources answered; 1 namespaces; 1 headers verified, 1 in "
	                     "the log") != NULL,
	              "%s", r.line);
	ck_assert_ptr_nonnull(strstr(r.line, "no misbehaviour found"));
	/* The checkpoint is kept as dirauthd stored it. */
	struct buffer expected;
	buffer_init(&expected);
	ck_assert_int_eq(store_log_checkpoint_at(w.f.store, "mix", 5, &expected), 0);
	char path[1024];
	snprintf(path, sizeof path, "%s/mix/%s", w.state, CTL_FETCH_LOG_HELD);
	size_t len = 0;
	uint8_t *kept = test_read_file(path, &len);
	ck_assert_ptr_nonnull(kept);
	ck_assert_uint_eq(len, expected.len);
	ck_assert_mem_eq(kept, expected.data, len);
	free(kept);

	/* Two epochs later: the one in between is fetched too; the new checkpoint is consistent. */
	publish(&w, 16);
	publish(&w, 17);
	catch_up(&w, 7);
	ck_assert_int_eq(round_of(&w, w.url, NULL, &r), 0);
	ck_assert_uint_eq(r.headers, 2);
	ck_assert_uint_eq(r.included, 2);
	ck_assert_uint_ge(r.consistent, 1);
	ck_assert_uint_eq(r.held_size, 7);
	/* Published, not yet in the log: pending, and checked once it is. */
	publish(&w, 18);
	ck_assert_int_eq(round_of(&w, w.url, NULL, &r), 0);
	ck_assert_uint_eq(r.headers, 1);
	ck_assert_uint_eq(r.pending, 1);
	ck_assert_uint_eq(r.held_size, 7);
	catch_up(&w, 8);
	ck_assert_int_eq(round_of(&w, w.url, NULL, &r), 0);
	ck_assert_uint_eq(r.headers, 1);
	ck_assert_uint_eq(r.included, 1);
	ck_assert_uint_eq(r.held_size, 8);
	ck_assert_uint_eq(evidence_files(&w), 0);

	/* The command: one round, exit 0, the same with a stub mirroring the honest header. */
	const char *args[] = {"monitor", "--trust",       w.bundle_path, "--source", w.url,   "--log-key",
	                      w.log_key, "--witness-key", w.witness,     "--state",  w.state, NULL};
	struct ctl_report report;
	ck_assert_int_eq(run_command(monitor_command, args, &report), 0);
	ck_assert_uint_eq(evidence_files(&w), 0);
	buffer_free(&expected);
	world_close(&w);
}
END_TEST

/* ---- two headers ---- */

START_TEST(test_two_headers_are_evidence)
{
	struct world w;
	struct ctl_monitor_round r;
	struct buffer real, forged, file;
	char path[1024];
	world_open(&w);
	buffer_init(&real);
	buffer_init(&forged);
	buffer_init(&file);
	for (uint64_t e = FIRST_EPOCH; e < FIRST_EPOCH + 3; e++)
		publish(&w, e);
	catch_up(&w, 3);
	get_ok(&w, "/v1/mix/snapshots/13", &real);
	second_header(&w, &real, &forged);
	serve(&w, "/v1/mix/snapshots/latest", &forged);

	/* A round's requests to a source share one kept connection (the certificates come over one
	 * of their own, ctl/keyring.c). */
	stub_http_keep_alive(w.stub, 1);
	ck_assert_int_eq(round_of(&w, w.url, w.stub_url, &r), CTL_MONITOR_EXIT_FOUND);
	ck_assert_uint_ge(stub_http_total(w.stub), 4);
	ck_assert_uint_eq(stub_http_connections(w.stub), 2);
	ck_assert_uint_eq(r.found, 1);
	ck_assert_uint_eq(r.written, 1);
	ck_assert_uint_eq(r.pending, 1); /* the stub's header is in no log */
	ck_assert_ptr_nonnull(strstr(r.line, "MISBEHAVIOUR: 1 evidence files (1 new)"));
	ck_assert_uint_eq(evidence_files(&w), 1);
	round_evidence(&r, 0, path, sizeof path, &file);
	ck_assert_ptr_nonnull(strstr(path, "/headers-mix-13-"));

	struct ctl_evidence_verdict verdict;
	char detail[VERIFY_DETAIL_MAX];
	ck_assert_int_eq(ctl_evidence_verify(&w.bundle, file.data, file.len, &verdict, detail, sizeof detail),
	                 0);
	ck_assert_int_eq(verdict.proven, 1);
	ck_assert_uint_eq(verdict.named_count, 1);
	ck_assert_ptr_nonnull(strstr(verdict.named, w.f.signer_process.identity.name));
	/* Offline without the bundle: the identity keys the file lists. */
	ck_assert_int_eq(ctl_evidence_verify(NULL, file.data, file.len, &verdict, detail, sizeof detail), 0);
	ck_assert_int_eq(verdict.proven, 1);
	struct ctl_report report;
	const char *args[] = {"verify-evidence", path, "--trust", w.bundle_path, NULL};
	ck_assert_int_eq(run_command(ctl_evidence_command, args, &report), CTL_EVIDENCE_EXIT_PROVEN);
	const char *bare[] = {"verify-evidence", path, NULL};
	ck_assert_int_eq(run_command(ctl_evidence_command, bare, &report), CTL_EVIDENCE_EXIT_PROVEN);

	/* Found again: the same file. */
	ck_assert_int_eq(round_of(&w, w.url, w.stub_url, &r), CTL_MONITOR_EXIT_FOUND);
	ck_assert_uint_eq(r.found, 1);
	ck_assert_uint_eq(r.written, 0);
	ck_assert_uint_eq(evidence_files(&w), 1);

	/* Across rounds: a fresh state sees the honest header, then the other one alone. */
	snprintf(w.state, sizeof w.state, "%s/monitor2", w.f.dir);
	snprintf(w.evidence, sizeof w.evidence, "%s/monitor2/evidence", w.f.dir);
	ck_assert_int_eq(round_of(&w, w.url, NULL, &r), 0);
	ck_assert_int_eq(round_of(&w, w.stub_url, NULL, &r), CTL_MONITOR_EXIT_FOUND);
	ck_assert_uint_eq(r.written, 1);
	ck_assert_uint_eq(evidence_files(&w), 1);
	/* The command says so too: exit 3. */
	const char *monitor_args[] = {"monitor",  "--trust", w.bundle_path, "--source",
	                              w.stub_url, "--state", w.state,       NULL};
	ck_assert_int_eq(run_command(monitor_command, monitor_args, &report), CTL_MONITOR_EXIT_FOUND);

	buffer_free(&real);
	buffer_free(&forged);
	buffer_free(&file);
	world_close(&w);
}
END_TEST

/* ---- forked checkpoints ---- */

START_TEST(test_forked_checkpoints_are_evidence)
{
	struct world w;
	struct ctl_monitor_round r;
	struct buffer header, proof, file, consistency;
	merkle_hash leaves[8], fork[8], proof_hashes[MERKLE_MAX_PROOF];
	size_t proof_len = 0;
	char path[1024], detail[VERIFY_DETAIL_MAX];
	struct ctl_evidence_verdict verdict;
	struct ctl_report report;
	world_open(&w);
	buffer_init(&header);
	buffer_init(&proof);
	buffer_init(&file);
	buffer_init(&consistency);
	for (uint64_t e = FIRST_EPOCH; e < FIRST_EPOCH + 4; e++)
		publish(&w, e);
	catch_up(&w, 4);
	ck_assert_int_eq(round_of(&w, w.url, NULL, &r), 0);
	ck_assert_uint_eq(r.held_size, 4);

	/* The stub serves the real header of 14 with a proof under a fork of the same size: leaf 0
	 * is another. */
	leaves_of(&w, 4, leaves);
	memcpy(fork, leaves, sizeof leaves);
	fork[0][0] ^= 1;
	get_ok(&w, "/v1/mix/snapshots/14", &header);
	serve(&w, "/v1/mix/snapshots/latest", &header);
	proof_in(&w, fork, 4, 3, &header, &proof);
	serve(&w, "/v1/mix/log/proof/14", &proof);
	ck_assert_int_eq(round_of(&w, w.stub_url, NULL, &r), CTL_MONITOR_EXIT_FOUND);
	ck_assert_uint_eq(r.found, 1);
	ck_assert_uint_eq(r.held_size, 4);
	round_evidence(&r, 0, path, sizeof path, &file);
	ck_assert_ptr_nonnull(strstr(path, "/checkpoints-mix-4-"));
	ck_assert_int_eq(ctl_evidence_verify(NULL, file.data, file.len, &verdict, detail, sizeof detail), 0);
	ck_assert_int_eq(verdict.proven, 1);
	ck_assert_uint_eq(verdict.named_count, 2); /* the log key and the witness signed both */
	ck_assert_ptr_nonnull(strstr(verdict.named, ORIGIN "+"));
	ck_assert_ptr_nonnull(strstr(verdict.named, w.cosigner_verifier.name));
	ck_assert_ptr_nonnull(strstr(verdict.summary, "with different roots"));
	const char *args[] = {"verify-evidence", path, NULL};
	ck_assert_int_eq(run_command(ctl_evidence_command, args, &report), CTL_EVIDENCE_EXIT_PROVEN);

	/* A fork one entry larger, with the fork's own consistency proof: it does not verify from
	 * the held root. */
	memset(fork[4], 0x5a, MERKLE_HASH_SIZE);
	proof_in(&w, fork, 5, 3, &header, &proof);
	serve(&w, "/v1/mix/log/proof/14", &proof);
	ck_assert_int_eq(merkle_consistency_proof(fork, 5, 4, proof_hashes, &proof_len), 0);
	ck_assert_int_eq(tlog_consistency_encode(proof_hashes, proof_len, &consistency), 0);
	serve(&w, "/v1/mix/log/consistency/4/5", &consistency);
	ck_assert_int_eq(round_of(&w, w.stub_url, NULL, &r), CTL_MONITOR_EXIT_FOUND);
	ck_assert_uint_eq(r.found, 1);
	ck_assert_uint_eq(r.held_size, 4);
	round_evidence(&r, 0, path, sizeof path, &file);
	ck_assert_int_eq(ctl_evidence_verify(NULL, file.data, file.len, &verdict, detail, sizeof detail), 0);
	ck_assert_int_eq(verdict.proven, 1);
	ck_assert_ptr_nonnull(strstr(verdict.summary, "does not verify"));
	ck_assert_uint_eq(evidence_files(&w), 2);

	/* The honest log's own checkpoints with its own proof are one tree: no misbehaviour. */
	publish(&w, 15);
	catch_up(&w, 5);
	struct buffer four, five, honest;
	buffer_init(&four);
	buffer_init(&five);
	buffer_init(&honest);
	ck_assert_int_eq(store_log_checkpoint_at(w.f.store, "mix", 4, &four), 0);
	ck_assert_int_eq(store_log_checkpoint_at(w.f.store, "mix", 5, &five), 0);
	get_ok(&w, "/v1/mix/log/consistency/4/5", &consistency);
	struct evidence e;
	memset(&e, 0, sizeof e);
	e.kind = EVIDENCE_CHECKPOINTS;
	snprintf(e.origin, sizeof e.origin, "%s", ORIGIN);
	e.keys[0] = *signer_key_verifier(w.log_signer);
	e.key_count = 1;
	e.statements[0] = (struct evidence_part){four.data, four.len};
	e.statements[1] = (struct evidence_part){five.data, five.len};
	e.has_consistency = 1;
	e.consistency = (struct evidence_part){consistency.data, consistency.len};
	ck_assert_int_eq(evidence_encode(&e, &honest), 0);
	ck_assert_int_eq(ctl_evidence_verify(NULL, honest.data, honest.len, &verdict, detail, sizeof detail),
	                 0);
	ck_assert_int_eq(verdict.proven, 0);
	char honest_path[1024];
	snprintf(honest_path, sizeof honest_path, "%s/honest.evidence", w.f.dir);
	test_write_file(honest_path, honest.data, honest.len, 0644);
	const char *honest_args[] = {"verify-evidence", honest_path, NULL};
	ck_assert_int_eq(run_command(ctl_evidence_command, honest_args, &report), 0);
	/* Without the proof, two sizes show nothing: not evidence. */
	e.has_consistency = 0;
	buffer_reset(&honest);
	ck_assert_int_eq(evidence_encode(&e, &honest), 0);
	ck_assert_int_eq(ctl_evidence_verify(NULL, honest.data, honest.len, &verdict, detail, sizeof detail),
	                 DIRAUTH_ERR_MISMATCH);
	ck_assert_ptr_nonnull(strstr(detail, "without a consistency proof"));
	/* Signed by none of the keys listed: not evidence. */
	struct signer_key *stranger = NULL;
	ck_assert_int_eq(signer_key_generate(ORIGIN, &stranger), 0);
	e.keys[0] = *signer_key_verifier(stranger);
	signer_key_free(stranger);
	e.has_consistency = 1;
	buffer_reset(&honest);
	ck_assert_int_eq(evidence_encode(&e, &honest), 0);
	ck_assert_int_eq(ctl_evidence_verify(NULL, honest.data, honest.len, &verdict, detail, sizeof detail),
	                 DIRAUTH_ERR_UNKNOWN_KEY);
	/* The same checkpoint twice. */
	e.keys[0] = *signer_key_verifier(w.log_signer);
	e.statements[1] = e.statements[0];
	buffer_reset(&honest);
	ck_assert_int_eq(evidence_encode(&e, &honest), 0);
	ck_assert_int_eq(ctl_evidence_verify(NULL, honest.data, honest.len, &verdict, detail, sizeof detail),
	                 DIRAUTH_ERR_MISMATCH);
	ck_assert_ptr_nonnull(strstr(detail, "the same checkpoint twice"));
	buffer_free(&four);
	buffer_free(&five);
	buffer_free(&honest);

	buffer_free(&header);
	buffer_free(&proof);
	buffer_free(&file);
	buffer_free(&consistency);
	world_close(&w);
}
END_TEST

/* ---- the authority's own evidence ---- */

static void signed_vote(struct world *w, uint64_t records, struct buffer *envelope)
{
	struct vote vote;
	struct buffer text, note;
	struct note_signature signature;
	memset(&vote, 0, sizeof vote);
	snprintf(vote.namespace_name, sizeof vote.namespace_name, "mix");
	snprintf(vote.origin, sizeof vote.origin, "%s", ORIGIN);
	vote.epoch = 13;
	snprintf(vote.authority, sizeof vote.authority, "%s", w->f.signer_process.identity.name);
	vote.record_count = records;
	vote.method_count = 1;
	vote.methods[0] = 1;
	buffer_init(&text);
	buffer_init(&note);
	ck_assert_int_eq(vote_encode(&vote, &text), 0);
	ck_assert_int_eq(signer_key_sign(w->signing, text.data, text.len, &signature), 0);
	ck_assert_int_eq(note_format(text.data, text.len, &signature, 1, &note), 0);
	buffer_reset(envelope);
	ck_assert_int_eq(vote_envelope_encode(note.data, note.len, (const uint8_t *)"body\n", 5, envelope),
	                 0);
	buffer_free(&text);
	buffer_free(&note);
}

START_TEST(test_authority_evidence_is_converted)
{
	struct world w;
	struct ctl_monitor_round r;
	struct buffer real, forged, vote_a, vote_b, list, file;
	char path[1024], detail[VERIFY_DETAIL_MAX];
	struct ctl_evidence_verdict verdict;
	world_open(&w);
	buffer_init(&real);
	buffer_init(&forged);
	buffer_init(&vote_a);
	buffer_init(&vote_b);
	buffer_init(&list);
	buffer_init(&file);
	for (uint64_t e = FIRST_EPOCH; e < FIRST_EPOCH + 3; e++)
		publish(&w, e);
	catch_up(&w, 3);
	get_ok(&w, "/v1/mix/snapshots/13", &real);
	second_header(&w, &real, &forged);
	signed_vote(&w, 1, &vote_a);
	signed_vote(&w, 2, &vote_b);
	const char *member = w.f.signer_process.identity.name;
	ck_assert_int_eq(buffer_appendf(&list,
	                                "dirauth evidence v1\nevidence 13 %s conflicting-votes %zu %zu\n",
	                                member, vote_a.len, vote_b.len),
	                 0);
	ck_assert_int_eq(buffer_append(&list, vote_a.data, vote_a.len), 0);
	ck_assert_int_eq(buffer_append(&list, vote_b.data, vote_b.len), 0);
	ck_assert_int_eq(buffer_appendf(&list, "evidence 13 %s conflicting-headers %zu %zu\n", member,
	                                real.len, forged.len),
	                 0);
	ck_assert_int_eq(buffer_append(&list, real.data, real.len), 0);
	ck_assert_int_eq(buffer_append(&list, forged.data, forged.len), 0);
	ck_assert_int_eq(buffer_appendf(&list, "evidence 13 %s other-header %zu 0\n", member, forged.len), 0);
	ck_assert_int_eq(buffer_append(&list, forged.data, forged.len), 0);
	serve(&w, "/v1/mix/evidence", &list);

	ck_assert_int_eq(round_of(&w, w.stub_url, NULL, &r), CTL_MONITOR_EXIT_FOUND);
	ck_assert_uint_eq(r.peer_pieces, 3);
	ck_assert_uint_eq(r.found, 2);
	ck_assert_uint_eq(evidence_files(&w), 2);
	round_evidence(&r, 0, path, sizeof path, &file);
	ck_assert_ptr_nonnull(strstr(path, "/votes-mix-13-"));
	ck_assert_int_eq(ctl_evidence_verify(&w.bundle, file.data, file.len, &verdict, detail, sizeof detail),
	                 0);
	ck_assert_int_eq(verdict.proven, 1);
	ck_assert_ptr_nonnull(strstr(verdict.named, member));
	round_evidence(&r, 1, path, sizeof path, &file);
	ck_assert_ptr_nonnull(strstr(path, "/headers-mix-13-"));
	ck_assert_int_eq(ctl_evidence_verify(&w.bundle, file.data, file.len, &verdict, detail, sizeof detail),
	                 0);
	ck_assert_int_eq(verdict.proven, 1);

	/* A list that does not parse is a failure, not evidence. */
	ck_assert_int_eq(stub_http_route(w.stub, "GET", "/v1/mix/evidence", 200, NULL,
	                                 (const uint8_t *)"dirauth evidence v1\nevidence x\n", 31),
	                 0);
	ck_assert_int_eq(round_of(&w, w.stub_url, NULL, &r), CTL_MONITOR_EXIT_UNCHECKED);
	ck_assert_uint_eq(r.found, 0);

	buffer_free(&real);
	buffer_free(&forged);
	buffer_free(&vote_a);
	buffer_free(&vote_b);
	buffer_free(&list);
	buffer_free(&file);
	world_close(&w);
}
END_TEST

/* ---- refusals ---- */

static void expect_failure(struct world *w, const char *source, const char *text)
{
	struct ctl_monitor_round r;
	ck_assert_int_eq(round_of(w, source, NULL, &r), CTL_MONITOR_EXIT_UNCHECKED);
	ck_assert_uint_eq(r.found, 0);
	int seen = 0;
	for (size_t i = 0; i < r.failure_count && i < CTL_MONITOR_FAILURES_MAX; i++)
		seen |= strstr(r.failures[i], text) != NULL;
	ck_assert_msg(seen, "no failure says '%s' (%zu failures, first: %s)", text, r.failure_count,
	              r.failure_count ? r.failures[0] : "");
	ck_assert_uint_eq(evidence_files(w), 0);
}

START_TEST(test_monitor_refusals)
{
	struct world w;
	struct buffer real, other, proof, text;
	struct ctl_report report;
	world_open(&w);
	buffer_init(&real);
	buffer_init(&other);
	buffer_init(&proof);
	buffer_init(&text);
	for (uint64_t e = FIRST_EPOCH; e < FIRST_EPOCH + 3; e++)
		publish(&w, e);
	catch_up(&w, 3);

	/* Nothing answers. */
	expect_failure(&w, "http://127.0.0.1:1", "http://127.0.0.1:1");
	/* A header signed by a key no authority certified. */
	get_ok(&w, "/v1/mix/snapshots/13", &real);
	struct signer_key *stranger = NULL;
	ck_assert_int_eq(signer_key_generate("stranger", &stranger), 0);
	struct signer_key *saved = w.signing;
	w.signing = stranger;
	second_header(&w, &real, &other);
	w.signing = saved;
	signer_key_free(stranger);
	serve(&w, "/v1/mix/snapshots/latest", &other);
	expect_failure(&w, w.stub_url, "header:");
	/* The proof of another header. */
	serve(&w, "/v1/mix/snapshots/latest", &real);
	get_ok(&w, "/v1/mix/log/proof/12", &proof);
	serve(&w, "/v1/mix/log/proof/13", &proof);
	expect_failure(&w, w.stub_url, "the proof carries another header than the one served");
	/* A checkpoint signed by another log key. */
	struct tlog_proof *parsed = NULL;
	get_ok(&w, "/v1/mix/log/proof/13", &proof);
	ck_assert_int_eq(tlog_proof_parse(proof.data, proof.len, &parsed), 0);
	struct signer_key *other_log = NULL;
	ck_assert_int_eq(signer_key_generate(ORIGIN, &other_log), 0);
	struct note_signature signature;
	struct buffer note;
	buffer_init(&note);
	ck_assert_int_eq(signer_key_sign(other_log, parsed->note->text, parsed->note->text_len, &signature),
	                 0);
	ck_assert_int_eq(note_format(parsed->note->text, parsed->note->text_len, &signature, 1, &note), 0);
	buffer_reset(&text);
	ck_assert_int_eq(tlog_proof_encode(parsed->index, parsed->path, parsed->path_len, parsed->extra,
	                                   parsed->extra_len, note.data, note.len, &text),
	                 0);
	tlog_proof_free(parsed);
	signer_key_free(other_log);
	buffer_free(&note);
	serve(&w, "/v1/mix/log/proof/13", &text);
	expect_failure(&w, w.stub_url, "checkpoint: signed by none of the 1 pinned log keys");
	/* A state that cannot be read back. */
	char path[1024];
	snprintf(path, sizeof path, "%s/mix", w.state);
	ck_assert_int_eq(ctl_directory_create(path), 0);
	snprintf(path, sizeof path, "%s/mix/%s", w.state, CTL_FETCH_LOG_HELD);
	test_write_file(path, "garbage\n", 8, 0644);
	expect_failure(&w, w.url, "cannot be read back");
	unlink(path);

	/* The command's options. */
	const char *no_trust[] = {"monitor", "--source", w.url, NULL};
	ck_assert_int_eq(run_command(monitor_command, no_trust, &report), CTL_EXIT_USAGE);
	ck_assert_ptr_nonnull(strstr(report.message, "--trust is required"));
	const char *empty_trust[] = {"monitor", "--trust", "", "--source", w.url, NULL};
	ck_assert_int_eq(run_command(monitor_command, empty_trust, &report), CTL_EXIT_USAGE);
	ck_assert_str_eq(report.message, "monitor: --trust is required (see dirauthctl monitor --help)");
	const char *no_source[] = {"monitor", "--trust", w.bundle_path, NULL};
	ck_assert_int_eq(run_command(monitor_command, no_source, &report), CTL_EXIT_USAGE);
	ck_assert_str_eq(report.message, "monitor: --source is required (see dirauthctl monitor --help)");
	const char *no_value[] = {"monitor", "--trust", w.bundle_path, "--source", NULL};
	ck_assert_int_eq(run_command(monitor_command, no_value, &report), CTL_EXIT_USAGE);
	ck_assert_str_eq(report.message, "monitor: option '--source' needs a value");
	const char *not_url[] = {"monitor", "--trust", w.bundle_path, "--source", "ftp://x", NULL};
	ck_assert_int_eq(run_command(monitor_command, not_url, &report), CTL_EXIT_USAGE);
	const char *twice[] = {"monitor", "--trust",  w.bundle_path, "--source",
	                       w.url,     "--source", w.url,         NULL};
	ck_assert_int_eq(run_command(monitor_command, twice, &report), CTL_EXIT_USAGE);
	char url_slash[128], said[192];
	snprintf(url_slash, sizeof url_slash, "%s/", w.url); /* a trailing slash is the same source */
	const char *twice_slash[] = {"monitor", "--trust",  w.bundle_path, "--source",
	                             w.url,     "--source", url_slash,     NULL};
	ck_assert_int_eq(run_command(monitor_command, twice_slash, &report), CTL_EXIT_USAGE);
	snprintf(said, sizeof said, "monitor: --source %s given twice", url_slash);
	ck_assert_str_eq(report.message, said);
	const char *every[] = {"monitor", "--trust", w.bundle_path, "--source", w.url, "--every", "0", NULL};
	ck_assert_int_eq(run_command(monitor_command, every, &report), CTL_EXIT_USAGE);
	const char *witness[] = {"monitor", "--trust",       w.bundle_path, "--source",
	                         w.url,     "--witness-key", w.witness,     NULL};
	ck_assert_int_eq(run_command(monitor_command, witness, &report), CTL_EXIT_USAGE);
	const char *bad_key[] = {"monitor", "--trust",   w.bundle_path, "--source",
	                         w.url,     "--log-key", "nope",        NULL};
	ck_assert_int_eq(run_command(monitor_command, bad_key, &report), CTL_EXIT_CONFIG);
	const char *missing[] = {"monitor", "--trust", "/nonexistent/trust", "--source", w.url, NULL};
	ck_assert_int_eq(run_command(monitor_command, missing, &report), CTL_EXIT_NO_INPUT);
	const char *operand[] = {"monitor", "--trust", w.bundle_path, "--source", w.url, "extra", NULL};
	ck_assert_int_eq(run_command(monitor_command, operand, &report), CTL_EXIT_USAGE);
	ck_assert_str_eq(report.message, "monitor: unexpected argument 'extra'");
	const char *unknown[] = {"monitor", "--frobnicate", NULL};
	ck_assert_int_eq(run_command(monitor_command, unknown, &report), CTL_EXIT_USAGE);
	ck_assert_str_eq(report.message, "monitor: unknown option '--frobnicate'");
	const char *help[] = {"monitor", "--help", NULL};
	ck_assert_int_eq(run_command(monitor_command, help, &report), 0);

	buffer_free(&real);
	buffer_free(&other);
	buffer_free(&proof);
	buffer_free(&text);
	world_close(&w);
}
END_TEST

START_TEST(test_verify_evidence_refusals)
{
	struct world w;
	struct buffer real, forged, file;
	struct ctl_evidence_verdict verdict;
	struct ctl_report report;
	char detail[VERIFY_DETAIL_MAX], path[1024];
	world_open(&w);
	buffer_init(&real);
	buffer_init(&forged);
	buffer_init(&file);
	for (uint64_t e = FIRST_EPOCH; e < FIRST_EPOCH + 3; e++)
		publish(&w, e);
	get_ok(&w, "/v1/mix/snapshots/13", &real);
	second_header(&w, &real, &forged);
	struct evidence e;
	memset(&e, 0, sizeof e);
	e.kind = EVIDENCE_HEADERS;
	snprintf(e.origin, sizeof e.origin, "%s", ORIGIN);
	e.epoch = 13;
	e.keys[0] = w.f.signer_process.identity;
	e.key_count = 1;
	e.statements[0] = (struct evidence_part){real.data, real.len};
	e.statements[1] = (struct evidence_part){forged.data, forged.len};
	e.certificate_count = 1;
	e.certificates[0] = (struct evidence_part){w.certificates.data, w.certificates.len};
#define EXPECT_INVALID(rc_expected, words)                                                                   \
	do {                                                                                                 \
		buffer_reset(&file);                                                                         \
		ck_assert_int_eq(evidence_encode(&e, &file), 0);                                             \
		ck_assert_int_eq(                                                                            \
		    ctl_evidence_verify(NULL, file.data, file.len, &verdict, detail, sizeof detail),         \
		    rc_expected);                                                                            \
		ck_assert_msg(strstr(detail, words) != NULL, "%s", detail);                                  \
	} while (0)
	/* Valid first. */
	buffer_reset(&file);
	ck_assert_int_eq(evidence_encode(&e, &file), 0);
	ck_assert_int_eq(ctl_evidence_verify(NULL, file.data, file.len, &verdict, detail, sizeof detail), 0);
	ck_assert_int_eq(verdict.proven, 1);
	/* Another epoch than the statements'. */
	e.epoch = 12;
	EXPECT_INVALID(DIRAUTH_ERR_MISMATCH, "the file is about");
	e.epoch = 13;
	/* The same header twice. */
	e.statements[1] = e.statements[0];
	EXPECT_INVALID(DIRAUTH_ERR_MISMATCH, "the same statement twice");
	/* A header not signed by the authority. */
	struct buffer unsigned_header;
	buffer_init(&unsigned_header);
	struct signer_key *stranger = NULL, *saved = w.signing;
	ck_assert_int_eq(signer_key_generate("stranger", &stranger), 0);
	w.signing = stranger;
	second_header(&w, &real, &unsigned_header);
	w.signing = saved;
	signer_key_free(stranger);
	e.statements[1] = (struct evidence_part){unsigned_header.data, unsigned_header.len};
	EXPECT_INVALID(DIRAUTH_ERR_UNKNOWN_KEY, "statement 2: signed by no authority");
	/* A signature by the certified key that does not verify. */
	struct buffer bad;
	buffer_init(&bad);
	ck_assert_int_eq(buffer_append(&bad, forged.data, forged.len), 0);
	bad.data[bad.len - 6] = bad.data[bad.len - 6] == 'A' ? 'B' : 'A';
	e.statements[1] = (struct evidence_part){bad.data, bad.len};
	EXPECT_INVALID(DIRAUTH_ERR_SIGNATURE, "does not verify");
	/* Not a header at all. */
	e.statements[1] = (struct evidence_part){w.certificates.data, w.certificates.len};
	EXPECT_INVALID(DIRAUTH_ERR_SYNTAX, "statement 2: not a signed snapshot header note");
	/* No identity to check against. */
	e.statements[1] = (struct evidence_part){forged.data, forged.len};
	e.key_count = 0;
	EXPECT_INVALID(DIRAUTH_ERR_CONFIG, "no authority identity");
	/* A trust bundle of other origins. */
	struct trust_bundle other = w.bundle;
	snprintf(other.namespaces[0].origin, sizeof other.namespaces[0].origin, "dirauth.example/other");
	buffer_reset(&file);
	ck_assert_int_eq(evidence_encode(&e, &file), 0);
	ck_assert_int_eq(ctl_evidence_verify(&other, file.data, file.len, &verdict, detail, sizeof detail),
	                 DIRAUTH_ERR_CONFIG);
	ck_assert_int_eq(ctl_evidence_verify(&w.bundle, file.data, file.len, &verdict, detail, sizeof detail),
	                 0);
	ck_assert_int_eq(verdict.proven, 1);
	/* Not an evidence file. */
	ck_assert_int_eq(
	    ctl_evidence_verify(NULL, (const uint8_t *)"x\n", 2, &verdict, detail, sizeof detail),
	    DIRAUTH_ERR_SYNTAX);
	ck_assert_ptr_nonnull(strstr(detail, "not an evidence file"));

	/* The command: exit 1 for invalid evidence, 66 missing, 64 usage, 66 a missing bundle. */
	snprintf(path, sizeof path, "%s/garbage.evidence", w.f.dir);
	test_write_file(path, "garbage\n", 8, 0644);
	const char *garbage[] = {"verify-evidence", path, NULL};
	ck_assert_int_eq(run_command(ctl_evidence_command, garbage, &report), CTL_EVIDENCE_EXIT_INVALID);
	ck_assert_ptr_nonnull(strstr(report.message, "invalid evidence"));
	/* An option's unambiguous prefix takes its value: --t BUNDLE is --trust BUNDLE, FILE after. */
	const char *prefix[] = {"verify-evidence", "--t", w.bundle_path, path, NULL};
	ck_assert_int_eq(run_command(ctl_evidence_command, prefix, &report), CTL_EVIDENCE_EXIT_INVALID);
	ck_assert_ptr_nonnull(strstr(report.message, "invalid evidence"));
	const char *missing[] = {"verify-evidence", "/nonexistent.evidence", NULL};
	ck_assert_int_eq(run_command(ctl_evidence_command, missing, &report), CTL_EXIT_NO_INPUT);
	const char *none[] = {"verify-evidence", NULL};
	ck_assert_int_eq(run_command(ctl_evidence_command, none, &report), CTL_EXIT_USAGE);
	ck_assert_str_eq(report.message,
	                 "verify-evidence: FILE is required (see dirauthctl verify-evidence --help)");
	const char *empty[] = {"verify-evidence", "", NULL};
	ck_assert_int_eq(run_command(ctl_evidence_command, empty, &report), CTL_EXIT_USAGE);
	ck_assert_str_eq(report.message,
	                 "verify-evidence: FILE is required (see dirauthctl verify-evidence --help)");
	const char *two[] = {"verify-evidence", path, path, NULL};
	ck_assert_int_eq(run_command(ctl_evidence_command, two, &report), CTL_EXIT_USAGE);
	const char *second[] = {"verify-evidence", path, "second", NULL};
	ck_assert_int_eq(run_command(ctl_evidence_command, second, &report), CTL_EXIT_USAGE);
	ck_assert_str_eq(report.message, "verify-evidence: unexpected argument 'second'");
	const char *no_value[] = {"verify-evidence", path, "--trust", NULL};
	ck_assert_int_eq(run_command(ctl_evidence_command, no_value, &report), CTL_EXIT_USAGE);
	ck_assert_str_eq(report.message, "verify-evidence: option '--trust' needs a value");
	const char *no_bundle[] = {"verify-evidence", path, "--trust", "/nonexistent/trust", NULL};
	ck_assert_int_eq(run_command(ctl_evidence_command, no_bundle, &report), CTL_EXIT_NO_INPUT);
	const char *unknown[] = {"verify-evidence", "--frobnicate", path, NULL};
	ck_assert_int_eq(run_command(ctl_evidence_command, unknown, &report), CTL_EXIT_USAGE);
	ck_assert_str_eq(report.message, "verify-evidence: unknown option '--frobnicate'");
	const char *help_first[] = {"verify-evidence", "--help", "--frobnicate", NULL};
	ck_assert_int_eq(run_command(ctl_evidence_command, help_first, &report), CTL_EXIT_USAGE);
	ck_assert_str_eq(report.message, "verify-evidence: unknown option '--frobnicate'");

	buffer_free(&unsigned_header);
	buffer_free(&bad);
	buffer_free(&real);
	buffer_free(&forged);
	buffer_free(&file);
	world_close(&w);
}
END_TEST

static Suite *monitor_suite(void)
{
	Suite *suite = suite_create("monitor");
	TCase *tc = tcase_create("monitor");
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_honest_rounds_find_nothing);
	tcase_add_test(tc, test_two_headers_are_evidence);
	tcase_add_test(tc, test_forked_checkpoints_are_evidence);
	tcase_add_test(tc, test_authority_evidence_is_converted);
	tcase_add_test(tc, test_monitor_refusals);
	tcase_add_test(tc, test_verify_evidence_refusals);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	SRunner *runner = srunner_create(monitor_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	curl_global_cleanup();
	return failures ? 1 : 0;
}
