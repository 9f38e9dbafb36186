/*
 * check_fetch_log.c: dirauthctl's side of the transparency log, against a real dirauthd in the
 * test process (http_fixture.h: the real signer with the example log and cosignature keys, a
 * real store, the HTTP server on loopback).
 *
 *   - fetch with the log's pins: the snapshot is checked to be in a cosigned checkpoint and the
 *     checkpoint kept beside it (latest.checkpoint, <epoch>.tlog-proof); a snapshot published but
 *     not yet in the log is refused as "try again later" and nothing moves; the next fetch holds
 *     the log to the kept checkpoint through the consistency proof dirauthd serves; without pins
 *     a fetch is what it always was, and pins for a namespace that has no log deny;
 *   - the refusals of the log step on bytes from that dirauthd: a proof of another header, an
 *     inclusion proof that does not lead to the root, another log key, too few cosignatures, a
 *     checkpoint older than the one held, and a second log built here (the same log key, another
 *     leaf) whose checkpoint is inconsistent with the one held, of a larger size and of the same
 *     size; each writes nothing;
 *   - dirauthctl verify on a kept proof file, and its exit statuses; dirauthctl proof.
 */
#include "http_fixture.h"
#include "test_signed_notes.h"

#include "ctl/fetch.h"
#include "ctl/fetch.h"
#include "ctl/proof.h"
#include "schema/checkpoint.h"
#include "schema/encoding.h"
#include "crypto/merkle.h"
#include "schema/trust_bundle.h"
#include "server/publish/publish.h"
#include "server/store/tlog_table.h"
#include "server/tlog/translog.h"
#include "signer/key.h"
#include "tlog/proof.h"

#include <inttypes.h>
#include <sys/stat.h>

#define FIRST_EPOCH 11
#define ORIGIN      "dirauth.example/mix"

/* Everything a test needs besides the fixture. */
struct world {
	struct fixture f;
	char url[64];
	char mirror[700];
	char bundle_path[700];
	struct trust_bundle bundle;
	struct ctl_log_pins pins;
	char log_key[NOTE_VERIFIER_KEY_MAX + 1];
	char witness[NOTE_VERIFIER_KEY_MAX + 1];
	struct signer_key *log_signer; /* the example log key */
	struct signer_key *cosigner;   /* the example cosignature key */
	struct note_verifier cosigner_verifier;
};

static uint64_t time_of(uint64_t epoch)
{
	return GENESIS + epoch * LENGTH + 1;
}

/* Publishes mix's (or mail's) empty snapshot of epoch and makes it the latest served. */
static void publish(struct world *w, size_t namespace_index, uint64_t epoch)
{
	write_clock(&w->f, time_of(epoch));
	w->f.signer_process.now = time_of(epoch);
	struct publication p;
	char detail[256] = "";
	int rc = publish_snapshot(w->f.config, w->f.store, w->f.signer, namespace_index, epoch, &p, detail,
	                          sizeof detail);
	ck_assert_msg(rc == 0, "publish %" PRIu64 ": %s %s", epoch, dirauth_strerror(rc), detail);
	ck_assert_int_eq(prepared_set_install(w->f.prepared, namespace_index, &p.header_note), 0);
	publication_clear(&p);
}

static void catch_up(struct world *w, uint64_t expected_size)
{
	struct translog_outcome outcome;
	int rc = translog_catch_up(w->f.store, w->f.config, w->f.signer, 0, &outcome);
	ck_assert_msg(rc == 0, "catch up: %s: %s", dirauth_strerror(rc), outcome.detail);
	ck_assert_uint_eq(outcome.checkpoint_size, expected_size);
}

static void world_open(struct world *w)
{
	memset(w, 0, sizeof *w);
	fixture_open(&w->f, 0);
	snprintf(w->url, sizeof w->url, "http://127.0.0.1:%u", w->f.port);
	snprintf(w->mirror, sizeof w->mirror, "%s/mirror", w->f.dir);
	snprintf(w->bundle_path, sizeof w->bundle_path, "%s/trust.txt", w->f.dir);

	char identity[NOTE_VERIFIER_KEY_MAX + 1], text[2048];
	note_verifier_format(&w->f.signer_process.identity, identity);
	int n = snprintf(text, sizeof text,
	                 "dirauth trust v1\nnamespace mix " ORIGIN "\nnamespace mail dirauth.example/mail\n"
	                 "authority %s\nthreshold 1\n",
	                 identity);
	test_write_file(w->bundle_path, text, (size_t)n, 0644);
	ck_assert_int_eq(trust_bundle_parse((const uint8_t *)text, (size_t)n, &w->bundle, NULL), 0);

	ck_assert_int_eq(signer_key_load(w->f.signer_process.log_key_path, &w->log_signer), 0);
	ck_assert_int_eq(signer_key_load(w->f.signer_process.cosignature_key_path, &w->cosigner), 0);
	ck_assert_int_eq(cosignature_verifier_from_ed25519(signer_key_verifier(w->cosigner)->name,
	                                                   signer_key_verifier(w->cosigner)->public_key,
	                                                   &w->cosigner_verifier),
	                 0);
	note_verifier_format(signer_key_verifier(w->log_signer), w->log_key);
	note_verifier_format(&w->cosigner_verifier, w->witness);
	const char *witnesses[] = {w->witness};
	struct ctl_report report;
	ctl_report_init(&report);
	const char *log_keys[] = {w->log_key};
	ck_assert_int_eq(ctl_log_pins_parse("test", log_keys, 1, witnesses, 1, NULL, w->bundle.threshold,
	                                    &w->pins, &report),
	                 0);
}

static void world_close(struct world *w)
{
	signer_key_free(w->log_signer);
	signer_key_free(w->cosigner);
	fixture_close(&w->f);
}

static const char *mirror_path(const struct world *w, const char *name)
{
	static char path[1024];
	snprintf(path, sizeof path, "%s/mix/%s", w->mirror, name);
	return path;
}

static int mirror_has(const struct world *w, const char *name)
{
	struct stat st;
	return stat(mirror_path(w, name), &st) == 0;
}

/* The bytes of a mirror file (the caller frees). */
static uint8_t *mirror_read(const struct world *w, const char *name, size_t *len)
{
	uint8_t *bytes = test_read_file(mirror_path(w, name), len);
	ck_assert_msg(bytes != NULL, "%s", mirror_path(w, name));
	return bytes;
}

static void assert_mirror_file(const struct world *w, const char *name, const struct buffer *expected)
{
	size_t len = 0;
	uint8_t *bytes = mirror_read(w, name, &len);
	ck_assert_uint_eq(len, expected->len);
	ck_assert_mem_eq(bytes, expected->data, len);
	free(bytes);
}

/* GETs path from the fixture into out (200 required). */
static void get_ok(struct world *w, const char *path, struct buffer *out)
{
	struct response r;
	request(&w->f, "GET", path, NULL, 0, 0, NULL, &r);
	ck_assert_msg(r.status == 200, "%s: %ld %s", path, r.status, r.body.data ? (char *)r.body.data : "");
	buffer_reset(out);
	ck_assert_int_eq(buffer_append(out, r.body.data, r.body.len), 0);
	response_free(&r);
}

static int fetch(struct world *w, const char *namespace_name, uint64_t now, const struct ctl_log_pins *pins,
                 struct ctl_fetch_result *result, struct ctl_report *report)
{
	struct ctl_fetch_options options;
	memset(&options, 0, sizeof options);
	options.server_url = w->url;
	options.bundle = &w->bundle;
	options.namespace_name = namespace_name;
	options.directory = w->mirror;
	options.now = now;
	options.log = pins;
	ctl_report_init(report);
	return ctl_fetch_run(&options, result, report);
}

static void expect_fetched(struct world *w, uint64_t epoch, uint64_t size, int had_held, uint64_t held_size)
{
	struct ctl_fetch_result result;
	struct ctl_report report;
	int rc = fetch(w, "mix", time_of(epoch), &w->pins, &result, &report);
	ck_assert_msg(rc == 0, "fetch: %s", report.message);
	ck_assert_uint_eq(result.epoch, epoch);
	ck_assert_int_eq(result.log_checked, 1);
	ck_assert_uint_eq(result.log.index, epoch - FIRST_EPOCH);
	ck_assert_uint_eq(result.log.tree_size, size);
	ck_assert_uint_eq(result.log.cosigned, 1);
	ck_assert_int_eq(result.log_had_held, had_held);
	ck_assert_uint_eq(result.log_held_size, held_size);

	/* Kept: the checkpoint as stored at dirauthd, and the proof file as served. */
	struct buffer expected;
	char path[128], name[64];
	buffer_init(&expected);
	ck_assert_int_eq(store_log_checkpoint_at(w->f.store, "mix", size, &expected), 0);
	assert_mirror_file(w, CTL_FETCH_LOG_HELD, &expected);
	snprintf(path, sizeof path, "/v1/mix/log/proof/%" PRIu64, epoch);
	get_ok(w, path, &expected);
	snprintf(name, sizeof name, "%" PRIu64 ".tlog-proof", epoch);
	assert_mirror_file(w, name, &expected);
	buffer_free(&expected);
}

START_TEST(test_fetch_checks_and_keeps_the_log)
{
	struct world w;
	struct ctl_fetch_result result;
	struct ctl_report report;
	struct buffer held_header, held_checkpoint, note;
	world_open(&w);
	buffer_init(&held_header);
	buffer_init(&held_checkpoint);
	buffer_init(&note);

	for (uint64_t e = FIRST_EPOCH; e < FIRST_EPOCH + 5; e++)
		publish(&w, 0, e);
	catch_up(&w, 5);
	/* First fetch: no checkpoint held, the first that verifies is taken. */
	expect_fetched(&w, 15, 5, 0, 0);

	/* The kept proof verifies offline with the kept certificates. */
	struct dirauth_proof_info proof_result;
	char certificates[1100];
	snprintf(certificates, sizeof certificates, "%s", mirror_path(&w, "certificates"));
	ctl_report_init(&report);
	int rc = ctl_proof_verify_files(&w.bundle, certificates, &w.pins, mirror_path(&w, "15.tlog-proof"),
	                                &proof_result, &report);
	ck_assert_msg(rc == 0, "verify: %s", report.message);
	ck_assert_str_eq(proof_result.namespace_name, "mix");
	ck_assert_uint_eq(proof_result.epoch, 15);
	ck_assert_uint_eq(proof_result.signer_count, 1);
	ck_assert_uint_eq(proof_result.index, 4);
	ck_assert_uint_eq(proof_result.tree_size, 5);

	/* Published but not yet in the log: try again later, and nothing moves. */
	publish(&w, 0, 16);
	size_t len = 0;
	uint8_t *bytes = mirror_read(&w, "latest.header", &len);
	ck_assert_int_eq(buffer_append(&held_header, bytes, len), 0);
	free(bytes);
	bytes = mirror_read(&w, CTL_FETCH_LOG_HELD, &len);
	ck_assert_int_eq(buffer_append(&held_checkpoint, bytes, len), 0);
	free(bytes);
	rc = fetch(&w, "mix", time_of(16), &w.pins, &result, &report);
	ck_assert_int_ne(rc, 0);
	ck_assert_int_eq(report.exit_code, CTL_EXIT_TEMPFAIL);
	ck_assert_msg(strstr(report.message, "fetch mix: log: epoch 16 is not yet under a checkpoint") !=
	                  NULL,
	              "%s", report.message);
	ck_assert_ptr_nonnull(strstr(report.message, "epoch_not_in_log"));
	assert_mirror_file(&w, "latest.header", &held_header);
	assert_mirror_file(&w, CTL_FETCH_LOG_HELD, &held_checkpoint);
	ck_assert(!mirror_has(&w, "16.header"));
	ck_assert(!mirror_has(&w, "16.tlog-proof"));

	/* Caught up: the new checkpoint is consistent with the one held. */
	catch_up(&w, 6);
	expect_fetched(&w, 16, 6, 1, 5);
	/* Two epochs under one checkpoint, two walked back. */
	publish(&w, 0, 17);
	publish(&w, 0, 18);
	catch_up(&w, 8);
	expect_fetched(&w, 18, 8, 1, 6);
	/* The same epoch again: the same checkpoint, its own consistency. */
	expect_fetched(&w, 18, 8, 1, 8);

	/* Without pins the log is not looked at (a namespace whose authorities keep none). */
	publish(&w, 1, 20);
	rc = fetch(&w, "mail", time_of(20), NULL, &result, &report);
	ck_assert_msg(rc == 0, "%s", report.message);
	ck_assert_int_eq(result.log_checked, 0);
	/* Pins of another namespace's log do not fit this one: 78, before anything is asked. */
	publish(&w, 1, 21);
	rc = fetch(&w, "mail", time_of(21), &w.pins, &result, &report);
	ck_assert_int_ne(rc, 0);
	ck_assert_int_eq(report.exit_code, CTL_EXIT_CONFIG);
	ck_assert_msg(strstr(report.message, "fetch mail: log: --log-key is named 'dirauth.example/mix'") !=
	                  NULL,
	              "%s", report.message);

	buffer_free(&held_header);
	buffer_free(&held_checkpoint);
	buffer_free(&note);
	world_close(&w);
}
END_TEST

/* ---- the refusals, on bytes served by dirauthd ---- */

/* What a fetch of epoch downloads. */
struct served {
	struct buffer header, body, certificates, proof, consistency;
};

static void served_init(struct served *s)
{
	buffer_init(&s->header);
	buffer_init(&s->body);
	buffer_init(&s->certificates);
	buffer_init(&s->proof);
	buffer_init(&s->consistency);
}

static void served_free(struct served *s)
{
	buffer_free(&s->header);
	buffer_free(&s->body);
	buffer_free(&s->certificates);
	buffer_free(&s->proof);
	buffer_free(&s->consistency);
}

/* The header, body and certificates of epoch, and its proof at proof_path. */
static void download(struct world *w, uint64_t epoch, const char *proof_path, struct served *s)
{
	char path[128];
	snprintf(path, sizeof path, "/v1/mix/snapshots/%" PRIu64, epoch);
	get_ok(w, path, &s->header);
	snprintf(path, sizeof path, "/v1/mix/snapshots/%" PRIu64 "/body", epoch);
	get_ok(w, path, &s->body);
	get_ok(w, "/v1/certificates", &s->certificates);
	if (proof_path)
		get_ok(w, proof_path, &s->proof);
}

static int verify_and_store(struct world *w, uint64_t now, const struct served *s,
                            const struct ctl_log_pins *pins, int with_consistency, struct ctl_report *report)
{
	struct ctl_fetch_input input;
	struct ctl_fetch_result result;
	memset(&input, 0, sizeof input);
	input.bundle = &w->bundle;
	input.namespace_name = "mix";
	input.directory = w->mirror;
	input.now = now;
	input.header_note = s->header.data;
	input.header_note_len = s->header.len;
	input.certificates = s->certificates.data;
	input.certificates_len = s->certificates.len;
	input.body_encoding = "";
	input.body = s->body.data;
	input.body_len = s->body.len;
	input.log = pins;
	input.proof = s->proof.data;
	input.proof_len = s->proof.len;
	if (with_consistency) {
		input.consistency = s->consistency.data;
		input.consistency_len = s->consistency.len;
	}
	ctl_report_init(report);
	return ctl_fetch_verify_and_store(&input, &result, report);
}

/* A refusal: status, words, and the mirror as it was (latest.header and latest.checkpoint as
 * given, no files of epoch). */
static void expect_refused(struct world *w, int rc, const struct ctl_report *report, int exit_code,
                           const char *words, uint64_t epoch, const struct buffer *held_header,
                           const struct buffer *held_checkpoint)
{
	char name[64];
	ck_assert_int_ne(rc, 0);
	ck_assert_msg(report->exit_code == exit_code, "exit %d, expected %d: %s", report->exit_code,
	              exit_code, report->message);
	ck_assert_msg(strstr(report->message, words) != NULL, "'%s' lacks '%s'", report->message, words);
	if (held_header)
		assert_mirror_file(w, "latest.header", held_header);
	else
		ck_assert(!mirror_has(w, "latest.header"));
	if (held_checkpoint)
		assert_mirror_file(w, CTL_FETCH_LOG_HELD, held_checkpoint);
	else
		ck_assert(!mirror_has(w, CTL_FETCH_LOG_HELD));
	snprintf(name, sizeof name, "%" PRIu64 ".header", epoch);
	ck_assert(!mirror_has(w, name));
	snprintf(name, sizeof name, "%" PRIu64 ".tlog-proof", epoch);
	ck_assert(!mirror_has(w, name));
}

/* The note text of a signed note. */
static void text_of(const struct buffer *note_bytes, struct buffer *text)
{
	ck_assert_int_eq(test_note_text(note_bytes, text), 0);
}

/* A checkpoint of (size, root) signed by the example log key and cosigned by the example
 * cosignature key: what a second log with the same keys would publish. */
static void sign_checkpoint(const struct world *w, uint64_t size, const merkle_hash root, struct buffer *out)
{
	buffer_reset(out);
	ck_assert_int_eq(test_cosigned_checkpoint(w->log_signer, w->cosigner, &w->cosigner_verifier, ORIGIN,
	                                          size, root, time_of(30), out),
	                 0);
}

START_TEST(test_log_step_refusals)
{
	struct world w;
	struct ctl_report report;
	struct served s;
	struct buffer held_header, held_checkpoint, text;
	world_open(&w);
	served_init(&s);
	buffer_init(&held_header);
	buffer_init(&held_checkpoint);
	buffer_init(&text);

	for (uint64_t e = FIRST_EPOCH; e < FIRST_EPOCH + 6; e++)
		publish(&w, 0, e);
	catch_up(&w, 6); /* epochs 11..16 */
	publish(&w, 0, 17);

	/* A fresh mirror, epoch 16 offered with the proof of epoch 15: another header. */
	download(&w, 16, "/v1/mix/log/proof/15", &s);
	int rc = verify_and_store(&w, time_of(16), &s, &w.pins, 0, &report);
	expect_refused(&w, rc, &report, CTL_EXIT_DATA,
	               "fetch mix: log: the proof carries another header than the one verified", 16, NULL,
	               NULL);

	/* The proof of 15 with 16's header put in: the header is not in the checkpoint. */
	struct tlog_proof *proof = NULL;
	ck_assert_int_eq(tlog_proof_parse(s.proof.data, s.proof.len, &proof), 0);
	buffer_reset(&text);
	ck_assert_int_eq(tlog_proof_encode(proof->index, proof->path, proof->path_len, s.header.data,
	                                   s.header.len, proof->checkpoint_note, proof->checkpoint_note_len,
	                                   &text),
	                 0);
	buffer_reset(&s.proof);
	ck_assert_int_eq(buffer_append(&s.proof, text.data, text.len), 0);
	rc = verify_and_store(&w, time_of(16), &s, &w.pins, 0, &report);
	expect_refused(&w, rc, &report, CTL_EXIT_DATA,
	               "fetch mix: log: inclusion: the header is not entry 4 of the checkpoint's tree of 6",
	               16, NULL, NULL);
	/* Epoch 17, published after the last checkpoint, with the index it will have. */
	struct buffer note17;
	buffer_init(&note17);
	get_ok(&w, "/v1/mix/snapshots/17", &note17);
	buffer_reset(&text);
	ck_assert_int_eq(tlog_proof_encode(6, proof->path, proof->path_len, note17.data, note17.len,
	                                   proof->checkpoint_note, proof->checkpoint_note_len, &text),
	                 0);
	tlog_proof_free(proof);
	download(&w, 17, NULL, &s);
	buffer_reset(&s.proof);
	ck_assert_int_eq(buffer_append(&s.proof, text.data, text.len), 0);
	rc = verify_and_store(&w, time_of(17), &s, &w.pins, 0, &report);
	expect_refused(&w, rc, &report, CTL_EXIT_DATA, "inclusion: the header is not entry 6", 17, NULL,
	               NULL);
	buffer_free(&note17);

	/* A changed hash of the inclusion proof. */
	download(&w, 16, "/v1/mix/log/proof/16", &s);
	ck_assert_int_eq(tlog_proof_parse(s.proof.data, s.proof.len, &proof), 0);
	proof->path[0][3] ^= 0x10;
	buffer_reset(&text);
	ck_assert_int_eq(tlog_proof_encode(proof->index, proof->path, proof->path_len, proof->extra,
	                                   proof->extra_len, proof->checkpoint_note,
	                                   proof->checkpoint_note_len, &text),
	                 0);
	tlog_proof_free(proof);
	struct buffer good;
	buffer_init(&good);
	ck_assert_int_eq(buffer_append(&good, s.proof.data, s.proof.len), 0);
	buffer_reset(&s.proof);
	ck_assert_int_eq(buffer_append(&s.proof, text.data, text.len), 0);
	rc = verify_and_store(&w, time_of(16), &s, &w.pins, 0, &report);
	expect_refused(&w, rc, &report, CTL_EXIT_DATA, "inclusion: the header is not entry 5", 16, NULL,
	               NULL);
	/* Not a proof file at all. */
	buffer_reset(&s.proof);
	ck_assert_int_eq(buffer_append(&s.proof, "c2sp.org/tlog-proof@v1\nindex 5\n", 31), 0);
	rc = verify_and_store(&w, time_of(16), &s, &w.pins, 0, &report);
	expect_refused(&w, rc, &report, CTL_EXIT_DATA, "not a c2sp.org/tlog-proof file", 16, NULL, NULL);
	buffer_reset(&s.proof);
	ck_assert_int_eq(buffer_append(&s.proof, good.data, good.len), 0);

	/* Pins the checkpoint does not meet: another log key; two witnesses required. */
	struct ctl_log_pins other = w.pins;
	ck_assert_int_eq(
	    note_verifier_from_ed25519(ORIGIN, w.f.provider.verifier.public_key, &other.log_keys[0]), 0);
	rc = verify_and_store(&w, time_of(16), &s, &other, 0, &report);
	expect_refused(&w, rc, &report, CTL_EXIT_DATA, "checkpoint: signed by none of the 1 pinned log keys",
	               16, NULL, NULL);
	/* Another authority's log key pinned first, this one's second: each authority signs its
	 * checkpoints with its own, and any one of them will do. */
	other.log_keys[1] = w.pins.log_keys[0];
	other.log_key_count = 2;
	struct tlog_proof *parsed = NULL;
	struct ctl_log_inclusion inclusion;
	ck_assert_int_eq(tlog_proof_parse(s.proof.data, s.proof.len, &parsed), 0);
	text_of(&s.header, &text);
	ctl_report_init(&report);
	ck_assert_int_eq(
	    ctl_log_check_inclusion("test", &other, ORIGIN, parsed, text.data, text.len, &inclusion, &report),
	    0);
	ck_assert_uint_eq(inclusion.tree_size, 6);
	tlog_proof_free(parsed);
	other = w.pins;
	ck_assert_int_eq(cosignature_verifier_from_ed25519("witness2.example", w.f.other.verifier.public_key,
	                                                   &other.witnesses[1]),
	                 0);
	other.witness_count = 2;
	other.quorum = 2;
	rc = verify_and_store(&w, time_of(16), &s, &other, 0, &report);
	expect_refused(&w, rc, &report, CTL_EXIT_DATA,
	               "checkpoint: cosigned by 1 of the 2 pinned witnesses, 2 required", 16, NULL, NULL);
	/* A log key named other than the origin is a pin that cannot fit: 78. */
	other = w.pins;
	ck_assert_int_eq(note_verifier_from_ed25519("dirauth.example/mail",
	                                            signer_key_verifier(w.log_signer)->public_key,
	                                            &other.log_keys[0]),
	                 0);
	rc = verify_and_store(&w, time_of(16), &s, &other, 0, &report);
	expect_refused(&w, rc, &report, CTL_EXIT_CONFIG, "--log-key is named 'dirauth.example/mail'", 16,
	               NULL, NULL);

	/* Accepted; from here on the mirror holds epoch 16 and the checkpoint of size 6. */
	rc = verify_and_store(&w, time_of(16), &s, &w.pins, 0, &report);
	ck_assert_msg(rc == 0, "%s", report.message);
	ck_assert_int_eq(buffer_append(&held_header, s.header.data, s.header.len), 0);
	ck_assert_int_eq(store_log_checkpoint_at(w.f.store, "mix", 6, &held_checkpoint), 0);
	assert_mirror_file(&w, CTL_FETCH_LOG_HELD, &held_checkpoint);

	/* A second log with the same keys: leaves 11..15, another sixth leaf, then 17's header. Its
	 * checkpoint of size 7 includes 17 but does not extend the held checkpoint of size 6. */
	merkle_hash leaves[7], root, path[MERKLE_MAX_PROOF], consistency[MERKLE_MAX_PROOF];
	size_t path_len = 0, consistency_len = 0;
	struct buffer note;
	buffer_init(&note);
	for (uint64_t e = FIRST_EPOCH; e <= 17; e++) {
		char where[64];
		snprintf(where, sizeof where, "/v1/mix/snapshots/%" PRIu64, e);
		get_ok(&w, where, &note);
		text_of(&note, &text);
		if (e == 16)
			ck_assert_int_eq(buffer_append(&text, "forked\n", 7), 0);
		ck_assert_int_eq(merkle_leaf_hash(text.data, text.len, leaves[e - FIRST_EPOCH]), 0);
	}
	ck_assert_int_eq(merkle_root(leaves, 7, root), 0);
	ck_assert_int_eq(merkle_inclusion_proof(leaves, 7, 6, path, &path_len), 0);
	ck_assert_int_eq(merkle_consistency_proof(leaves, 7, 6, consistency, &consistency_len), 0);
	struct buffer fork_checkpoint;
	buffer_init(&fork_checkpoint);
	sign_checkpoint(&w, 7, root, &fork_checkpoint);
	download(&w, 17, NULL, &s);
	buffer_reset(&s.proof);
	ck_assert_int_eq(tlog_proof_encode(6, path, path_len, s.header.data, s.header.len,
	                                   fork_checkpoint.data, fork_checkpoint.len, &s.proof),
	                 0);
	buffer_reset(&s.consistency);
	for (size_t i = 0; i < consistency_len; i++) {
		char line[64];
		base64_encode(consistency[i], MERKLE_HASH_SIZE, line);
		ck_assert_int_eq(buffer_appendf(&s.consistency, "%s\n", line), 0);
	}
	/* On its own the forked checkpoint verifies (a fresh mirror would take it)... */
	struct tlog_proof *fork = NULL;
	ck_assert_int_eq(tlog_proof_parse(s.proof.data, s.proof.len, &fork), 0);
	text_of(&s.header, &text);
	ctl_report_init(&report);
	ck_assert_int_eq(
	    ctl_log_check_inclusion("test", &w.pins, ORIGIN, fork, text.data, text.len, &inclusion, &report),
	    0);
	tlog_proof_free(fork);
	/* ...but not against what this mirror holds. */
	rc = verify_and_store(&w, time_of(17), &s, &w.pins, 1, &report);
	expect_refused(
	    &w, rc, &report, CTL_EXIT_DATA,
	    "fetch mix: log: inconsistent: the server's checkpoint of size 7 does not extend the one "
	    "of size 6 held",
	    17, &held_header, &held_checkpoint);
	/* Without the consistency proof, refused too. */
	rc = verify_and_store(&w, time_of(17), &s, &w.pins, 0, &report);
	expect_refused(&w, rc, &report, CTL_EXIT_DATA, "no consistency proof from size 6 to 7", 17,
	               &held_header, &held_checkpoint);
	/* A consistency proof that is not one. */
	buffer_reset(&s.consistency);
	ck_assert_int_eq(buffer_append(&s.consistency, "nonsense\n", 9), 0);
	rc = verify_and_store(&w, time_of(17), &s, &w.pins, 1, &report);
	expect_refused(&w, rc, &report, CTL_EXIT_DATA, "consistency: the answer is not a consistency proof",
	               17, &held_header, &held_checkpoint);

	/* The real log's checkpoint of size 7 is consistent and accepted... */
	catch_up(&w, 7);
	download(&w, 17, "/v1/mix/log/proof/17", &s);
	get_ok(&w, "/v1/mix/log/consistency/6/7", &s.consistency);
	struct buffer proof17;
	buffer_init(&proof17);
	ck_assert_int_eq(buffer_append(&proof17, s.proof.data, s.proof.len), 0);
	/* ...but first, held the forked one of the same size, its other root is refused. */
	test_write_file(mirror_path(&w, CTL_FETCH_LOG_HELD), fork_checkpoint.data, fork_checkpoint.len, 0644);
	rc = verify_and_store(&w, time_of(17), &s, &w.pins, 1, &report);
	expect_refused(&w, rc, &report, CTL_EXIT_DATA,
	               "inconsistent: the server's checkpoint of size 7 has another root than the one held",
	               17, &held_header, &fork_checkpoint);
	/* A held checkpoint that cannot be read back denies. */
	test_write_file(mirror_path(&w, CTL_FETCH_LOG_HELD), "garbage\n", 8, 0644);
	struct buffer garbage;
	buffer_init(&garbage);
	ck_assert_int_eq(buffer_append(&garbage, "garbage\n", 8), 0);
	rc = verify_and_store(&w, time_of(17), &s, &w.pins, 1, &report);
	expect_refused(&w, rc, &report, CTL_EXIT_DATA, "held checkpoint", 17, &held_header, &garbage);
	buffer_free(&garbage);
	ck_assert_ptr_nonnull(strstr(report.message, "cannot be read back"));
	test_write_file(mirror_path(&w, CTL_FETCH_LOG_HELD), held_checkpoint.data, held_checkpoint.len, 0644);
	rc = verify_and_store(&w, time_of(17), &s, &w.pins, 1, &report);
	ck_assert_msg(rc == 0, "%s", report.message);
	ck_assert_int_eq(store_log_checkpoint_at(w.f.store, "mix", 7, &held_checkpoint), 0);
	assert_mirror_file(&w, CTL_FETCH_LOG_HELD, &held_checkpoint);
	assert_mirror_file(&w, "17.tlog-proof", &proof17);
	buffer_reset(&held_header);
	ck_assert_int_eq(buffer_append(&held_header, s.header.data, s.header.len), 0);

	/* The same header again with a proof against the older checkpoint of size 6: the server's
	 * log is behind what the mirror saw. */
	publish(&w, 0, 18);
	catch_up(&w, 8);
	download(&w, 16, "/v1/mix/log/proof/16/6", &s);
	/* (the mirror holds 17: offering 16 is a rollback of the header, refused before the log) */
	rc = verify_and_store(&w, time_of(17), &s, &w.pins, 0, &report);
	ck_assert_int_ne(rc, 0);
	ck_assert_ptr_nonnull(strstr(report.message, "rollback: the server offers epoch 16"));
	/* 17 held with the checkpoint of size 8; 17 offered under the one of size 7. */
	download(&w, 17, "/v1/mix/log/proof/17/8", &s);
	get_ok(&w, "/v1/mix/log/consistency/7/8", &s.consistency);
	rc = verify_and_store(&w, time_of(17), &s, &w.pins, 1, &report);
	ck_assert_msg(rc == 0, "%s", report.message);
	ck_assert_int_eq(store_log_checkpoint_at(w.f.store, "mix", 8, &held_checkpoint), 0);
	download(&w, 17, "/v1/mix/log/proof/17/7", &s);
	rc = verify_and_store(&w, time_of(17), &s, &w.pins, 0, &report);
	expect_refused(
	    &w, rc, &report, CTL_EXIT_DATA,
	    "fetch mix: log: rollback: the server's checkpoint is of size 7, one of size 8 is held", 18,
	    &held_header, &held_checkpoint);

	buffer_free(&proof17);
	buffer_free(&fork_checkpoint);
	buffer_free(&note);
	buffer_free(&good);
	buffer_free(&held_header);
	buffer_free(&held_checkpoint);
	buffer_free(&text);
	served_free(&s);
	world_close(&w);
}
END_TEST

/* ---- the pins of the command line ---- */

START_TEST(test_log_pins_parse)
{
	struct world w;
	struct ctl_log_pins pins;
	struct ctl_report report;
	world_open(&w);
	const char *one[] = {w.witness};
	const char *twice[] = {w.witness, w.witness};
	char renamed[NOTE_VERIFIER_KEY_MAX + 1];
	struct note_verifier alias;
	ck_assert_int_eq(
	    cosignature_verifier_from_ed25519("alias.example", w.cosigner_verifier.public_key, &alias), 0);
	note_verifier_format(&alias, renamed);
	const char *aliased[] = {w.witness, renamed};
	const char *as_log_key[] = {w.log_key};
	const char *log_key[] = {w.log_key};
	const char *witness_as_log_key[] = {w.witness};
	const char *nonsense[] = {"nonsense"};
	const char *log_key_twice[] = {w.log_key, w.log_key};

	ctl_report_init(&report);
	ck_assert_int_eq(ctl_log_pins_parse("fetch", NULL, 0, NULL, 0, NULL, 1, &pins, &report), 0);
	ck_assert_int_eq(pins.enabled, 0);
	ck_assert_int_eq(ctl_log_pins_parse("fetch", log_key, 1, one, 1, "0", 1, &pins, &report), 0);
	ck_assert_int_eq(pins.enabled, 1);
	ck_assert_uint_eq(pins.log_key_count, 1);
	ck_assert_uint_eq(pins.quorum, 0);
	ck_assert_int_eq(ctl_log_pins_parse("fetch", log_key, 1, NULL, 0, "0", 1, &pins, &report), 0);

	struct {
		const char *const *log_keys;
		size_t log_key_count;
		const char *const *witnesses;
		size_t count;
		const char *threshold;
		int exit_code;
		const char *words;
	} refused[] = {
	    {NULL, 0, one, 1, NULL, CTL_EXIT_USAGE, "fetch: --witness-key needs --log-key"},
	    {NULL, 0, NULL, 0, "1", CTL_EXIT_USAGE, "fetch: --witness-threshold needs --log-key"},
	    {log_key, 1, one, 1, "01", CTL_EXIT_USAGE, "--witness-threshold: expected a decimal"},
	    {log_key, 1, one, 1, "2", CTL_EXIT_CONFIG,
	     "--witness-threshold 2 is more than the 1 --witness-key given"},
	    {log_key, 1, NULL, 0, NULL, CTL_EXIT_CONFIG,
	     "by default the checkpoint must be cosigned by the trust bundle's threshold (1) of witnesses, "
	     "but 0"},
	    {witness_as_log_key, 1, one, 1, NULL, CTL_EXIT_CONFIG, "--log-key: '"},
	    {nonsense, 1, one, 1, NULL, CTL_EXIT_CONFIG, "is not an Ed25519 verifier key"},
	    {log_key_twice, 2, one, 1, NULL, CTL_EXIT_CONFIG, "fetch: --log-key dirauth.example/mix+"},
	    {log_key, 1, as_log_key, 1, NULL, CTL_EXIT_CONFIG, "is not a cosignature verifier key"},
	    {log_key, 1, twice, 2, NULL, CTL_EXIT_CONFIG, "given again"},
	    {log_key, 1, aliased, 2, NULL, CTL_EXIT_CONFIG,
	     "--witness-key alias.example: the key of witness"},
	};
	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
		ctl_report_init(&report);
		ck_assert_int_ne(ctl_log_pins_parse("fetch", refused[i].log_keys, refused[i].log_key_count,
		                                    refused[i].witnesses, refused[i].count,
		                                    refused[i].threshold, 1, &pins, &report),
		                 0);
		ck_assert_msg(report.exit_code == refused[i].exit_code, "%zu: exit %d: %s", i,
		              report.exit_code, report.message);
		ck_assert_msg(strstr(report.message, refused[i].words) != NULL, "%zu: %s", i, report.message);
	}
	world_close(&w);
}
END_TEST

/* ---- the commands ---- */

static void run(const struct world *w, const char *const *args, struct test_outcome *outcome)
{
	test_run_program(test_binary_path("ctl/dirauthctl"), args, w->f.dir, outcome);
}

static void expect_run(const struct world *w, const char *const *args, int status, const char *words)
{
	struct test_outcome outcome;
	run(w, args, &outcome);
	ck_assert_msg(outcome.status == status, "exit %d, expected %d: %s%s", outcome.status, status,
	              outcome.out, outcome.err);
	const char *where = status == 0 ? outcome.out : outcome.err;
	ck_assert_msg(strstr(where, words) != NULL, "'%s' lacks '%s'", where, words);
	if (status != 0)
		ck_assert_msg(strncmp(outcome.err, "dirauthctl: ", 12) == 0 &&
		                  strchr(outcome.err, '\n') == outcome.err + outcome.err_len - 1,
		              "not one line: %s", outcome.err);
	test_outcome_free(&outcome);
}

START_TEST(test_verify_and_proof_commands)
{
	struct world w;
	world_open(&w);
	for (uint64_t e = FIRST_EPOCH; e < FIRST_EPOCH + 3; e++)
		publish(&w, 0, e);
	catch_up(&w, 3);

	/* dirauthctl fetch with the log, as a mirror runs it. */
	char now[32];
	snprintf(now, sizeof now, "%" PRIu64, time_of(13));
	const char *fetch_args[] = {
	    "fetch",  "--trust", w.bundle_path, "--server",  w.url,     "--namespace",   "mix",     "--out",
	    w.mirror, "--now",   now,           "--log-key", w.log_key, "--witness-key", w.witness, NULL};
	expect_run(
	    &w, fetch_args, 0,
	    "verified snapshot mix epoch 13: 0 records, signed by 1 of 1 authorities "
	    "(authority1.dirauth.example)\n"
	    "in the log: entry 2 of the checkpoint of size 3, cosigned by 1 of 1 witnesses (1 required), the "
	    "first checkpoint held\n");

	/* dirauthctl proof. */
	char proof_path[800], certificates[1100];
	snprintf(proof_path, sizeof proof_path, "%s/12.tlog-proof", w.f.dir);
	snprintf(certificates, sizeof certificates, "%s", mirror_path(&w, "certificates"));
	const char *proof_args[] = {"proof",   "--server", w.url,   "--namespace", "mix",
	                            "--epoch", "12",       "--out", proof_path,    NULL};
	expect_run(&w, proof_args, 0, "entry 1 of the checkpoint of size 3");
	expect_run(&w, proof_args, CTL_EXIT_CANNOT_CREATE, "exists; it is never overwritten");
	char missing_path[800];
	snprintf(missing_path, sizeof missing_path, "%s/99.tlog-proof", w.f.dir);
	const char *missing_args[] = {"proof",   "--server", w.url,   "--namespace", "mix",
	                              "--epoch", "99",       "--out", missing_path,  NULL};
	expect_run(&w, missing_args, CTL_EXIT_PROTOCOL, "HTTP 404: epoch_not_in_log");
	const char *no_epoch[] = {"proof", "--server", w.url,        "--namespace",
	                          "mix",   "--out",    missing_path, NULL};
	expect_run(&w, no_epoch, CTL_EXIT_USAGE, "--epoch is required");

	/* dirauthctl verify, on the file just downloaded and on the one fetch kept. */
	const char *verify_args[] = {"verify",         proof_path,   "--trust",   w.bundle_path,
	                             "--certificates", certificates, "--log-key", w.log_key,
	                             "--witness-key",  w.witness,    NULL};
	expect_run(
	    &w, verify_args, 0,
	    "verified proof: snapshot mix epoch 12 signed by 1 of 1 authorities "
	    "(authority1.dirauth.example)\n"
	    "is entry 1 of the log dirauth.example/mix at size 3, signed by its log key and cosigned by 1 of "
	    "1 witnesses (1 required)\n");
	const char *kept_args[] = {"verify",
	                           mirror_path(&w, "13.tlog-proof"),
	                           "--trust",
	                           w.bundle_path,
	                           "--certificates",
	                           certificates,
	                           "--log-key",
	                           w.log_key,
	                           "--witness-key",
	                           w.witness,
	                           NULL};
	expect_run(&w, kept_args, 0, "snapshot mix epoch 13");
	/* Option order does not matter, and the operand may come last. */
	const char *reordered[] = {"verify",     "--log-key", w.log_key,     "--witness-key",
	                           w.witness,    "--trust",   w.bundle_path, "--certificates",
	                           certificates, proof_path,  NULL};
	expect_run(&w, reordered, 0, "is entry 1 of the log");

	/* Tampered: one changed byte in the inclusion proof, in the checkpoint's root. */
	size_t len = 0;
	uint8_t *bytes = test_read_file(proof_path, &len);
	char tampered[800];
	snprintf(tampered, sizeof tampered, "%s/tampered.tlog-proof", w.f.dir);
	const char *tampered_args[] = {"verify",         tampered,     "--trust",   w.bundle_path,
	                               "--certificates", certificates, "--log-key", w.log_key,
	                               "--witness-key",  w.witness,    NULL};
	char *index_line = strstr((char *)bytes, "\nindex 1\n");
	ck_assert_ptr_nonnull(index_line);
	char *hash = index_line + 9;
	hash[0] = hash[0] == 'A' ? 'B' : 'A';
	test_write_file(tampered, bytes, len, 0644);
	expect_run(&w, tampered_args, CTL_EXIT_DATA, "verify: inclusion: the header is not entry 1");
	hash[0] = hash[0] == 'A' ? 'B' : 'A';
	index_line[7] = '2';
	test_write_file(tampered, bytes, len, 0644);
	expect_run(&w, tampered_args, CTL_EXIT_DATA, "verify: inclusion: the header is not entry 2");
	index_line[7] = '1';
	char *root = strstr((char *)bytes, "\n3\n");
	ck_assert_ptr_nonnull(root);
	root[3] = root[3] == 'A' ? 'B' : 'A';
	test_write_file(tampered, bytes, len, 0644);
	expect_run(&w, tampered_args, CTL_EXIT_DATA, "verify: checkpoint: a signature by the log key");
	root[3] = root[3] == 'A' ? 'B' : 'A';
	test_write_file(tampered, "not a proof\n", 12, 0644);
	expect_run(&w, tampered_args, CTL_EXIT_DATA, "verify: proof: not a c2sp.org/tlog-proof file");
	free(bytes);

	/* The header's signatures are judged by the trust bundle and the certificates given. */
	char empty_certificates[800], other_bundle[800];
	snprintf(empty_certificates, sizeof empty_certificates, "%s/none.certs", w.f.dir);
	test_write_file(empty_certificates, "dirauth certificates v1\n", 24, 0644);
	const char *uncertified[] = {"verify",         proof_path,         "--trust",   w.bundle_path,
	                             "--certificates", empty_certificates, "--log-key", w.log_key,
	                             "--witness-key",  w.witness,          NULL};
	expect_run(&w, uncertified, CTL_EXIT_DATA, "verify: ");
	snprintf(other_bundle, sizeof other_bundle, "%s/other.txt", w.f.dir);
	char text[1024], stranger[NOTE_VERIFIER_KEY_MAX + 1];
	note_verifier_format(&w.f.stranger.verifier, stranger);
	int n = snprintf(text, sizeof text,
	                 "dirauth trust v1\nnamespace mail dirauth.example/mail\nauthority %s\n"
	                 "threshold 1\n",
	                 stranger);
	test_write_file(other_bundle, text, (size_t)n, 0644);
	const char *unpinned[] = {"verify",         proof_path,   "--trust",   other_bundle,
	                          "--certificates", certificates, "--log-key", w.log_key,
	                          "--witness-key",  w.witness,    NULL};
	expect_run(&w, unpinned, CTL_EXIT_CONFIG, "verify: header: namespace mix is not in the trust bundle");

	/* Pins: required, and fitting the log. */
	const char *no_log_key[] = {"verify",         proof_path,   "--trust", w.bundle_path,
	                            "--certificates", certificates, NULL};
	expect_run(&w, no_log_key, CTL_EXIT_USAGE, "verify: --log-key is required");
	const char *no_witness[] = {"verify",     proof_path,  "--trust", w.bundle_path, "--certificates",
	                            certificates, "--log-key", w.log_key, NULL};
	expect_run(&w, no_witness, CTL_EXIT_CONFIG,
	           "by default the checkpoint must be cosigned by the trust bundle's");
	const char *log_only[] = {
	    "verify",     proof_path,  "--trust", w.bundle_path,         "--certificates",
	    certificates, "--log-key", w.log_key, "--witness-threshold", "0",
	    NULL};
	expect_run(&w, log_only, 0, "cosigned by 0 of 0 witnesses (0 required)");
	const char *too_many[] = {
	    "verify",    proof_path, "--trust",       w.bundle_path, "--certificates",      certificates,
	    "--log-key", w.log_key,  "--witness-key", w.witness,     "--witness-threshold", "2",
	    NULL};
	expect_run(&w, too_many, CTL_EXIT_CONFIG,
	           "--witness-threshold 2 is more than the 1 --witness-key given");
	/* A log key named by another origin is another log's: refused alone and beside the right one. */
	struct note_verifier mail_log;
	char mail_log_key[NOTE_VERIFIER_KEY_MAX + 1];
	ck_assert_int_eq(
	    note_verifier_from_ed25519("dirauth.example/mail", w.cosigner_verifier.public_key, &mail_log), 0);
	note_verifier_format(&mail_log, mail_log_key);
	const char *other_log[] = {"verify",         proof_path,   "--trust",   w.bundle_path,
	                           "--certificates", certificates, "--log-key", mail_log_key,
	                           "--witness-key",  w.witness,    NULL};
	expect_run(&w, other_log, CTL_EXIT_CONFIG,
	           "verify: --log-key is named 'dirauth.example/mail', but the namespace's log is "
	           "'dirauth.example/mix'");
	const char *beside[] = {"verify",        proof_path,  "--trust", w.bundle_path, "--certificates",
	                        certificates,    "--log-key", w.log_key, "--log-key",   mail_log_key,
	                        "--witness-key", w.witness,   NULL};
	expect_run(&w, beside, CTL_EXIT_CONFIG, "verify: --log-key is named 'dirauth.example/mail'");
	/* A certificate bundle that does not parse. */
	char garbled[800];
	snprintf(garbled, sizeof garbled, "%s/garbled.certs", w.f.dir);
	test_write_file(garbled, "certificates\n", 13, 0644);
	const char *garbled_args[] = {"verify",         proof_path, "--trust",   w.bundle_path,
	                              "--certificates", garbled,    "--log-key", w.log_key,
	                              "--witness-key",  w.witness,  NULL};
	expect_run(&w, garbled_args, CTL_EXIT_DATA, "verify: certificates: ");
	char no_file[800];
	snprintf(no_file, sizeof no_file, "%s/nothing.tlog-proof", w.f.dir);
	const char *missing_file[] = {"verify",         no_file,      "--trust",   w.bundle_path,
	                              "--certificates", certificates, "--log-key", w.log_key,
	                              "--witness-key",  w.witness,    NULL};
	expect_run(&w, missing_file, CTL_EXIT_NO_INPUT, "no such file");
	const char *no_operand[] = {"verify", "--trust", w.bundle_path, NULL};
	expect_run(&w, no_operand, CTL_EXIT_USAGE, "verify: PROOF is required");

	world_close(&w);
}
END_TEST

static Suite *fetch_log_suite(void)
{
	Suite *suite = suite_create("fetch_log");
	TCase *tc = tcase_create("fetch_log");
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_fetch_checks_and_keeps_the_log);
	tcase_add_test(tc, test_log_step_refusals);
	tcase_add_test(tc, test_log_pins_parse);
	tcase_add_test(tc, test_verify_and_proof_commands);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	SRunner *runner = srunner_create(fetch_log_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	curl_global_cleanup();
	return failures ? 1 : 0;
}
