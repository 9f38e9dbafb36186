/*
 * test_signer.c: the real dirauth-signer program, attacked by a compromised dirauthd.
 *
 * Each test runs the built binary with the example keys (copied 0600 into a 0700 directory),
 * a certificate issued at run time by the example identity key, a file clock and a fresh state
 * directory, and talks to it as dirauthd would, over its UNIX socket with the frame protocol.
 * The client plays a dirauthd that has been taken over: it asks for a second header for an
 * epoch already signed, for a lower epoch, for an inconsistent checkpoint to be cosigned, for
 * raw text to be signed as anything. All are refused, across restarts. A second signer on the
 * same socket is refused while the first runs (its lock file), and starts once the first was
 * killed with SIGKILL. The signer's own epoch schedule: a header for an epoch far ahead (as a
 * compromised dirauthd once asked) is refused as not begun and every real epoch after it still
 * signs; a header whose times are not its epoch's, or of an origin the configuration does not
 * name, is refused. A clock whose file is gone stops every signature, with its reason, until it
 * is back. A peer that connects and says nothing, or trickles its frame, holds up nobody else.
 *
 * The crash test repeats, for CRASH_CYCLES cycles (environment DIRAUTH_SIGNER_CRASH_CYCLES may
 * raise it): start the signer, send a random run of header requests for new, current and old
 * epochs and equivocating texts, and SIGKILL it at a random moment, a few milliseconds after a
 * request was sent (the file clock is moved to each requested epoch before its request, so that
 * every refusal is the ledger's). Every signature that ever reaches the client is recorded (including a
 * response that arrived just before the kill). After each restart the refusal state must be
 * intact, and across the whole run no two different header texts may have been signed for one
 * epoch. The run's random seed is printed so a failure can be replayed.
 */
#include "test_signed_notes.h"
#include "test_signer_socket.h"
#include "test_support.h"

#include "base/buffer.h"
#include "schema/checkpoint.h"
#include "crypto/crypto.h"
#include "base/error.h"
#include "signer/key.h"
#include "crypto/merkle.h"
#include "schema/note.h"
#include "signer_protocol/signer_protocol.h"
#include "schema/snapshot.h"

#include <check.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define AUTHORITY    "authority1.dirauth.example"
#define LOG_ORIGIN   "dirauth.example/mix"
#define OTHER_LOG    "example.org/witnessed-log"
#define NOW          1800000000ULL
#define GENESIS      NOW /* mix's epoch 0 begins at NOW; epochs of LENGTH seconds */
#define LENGTH       60ULL
#define CRASH_CYCLES 100
#define MAX_EPOCHS   4096
#define LEAVES       16

static char dir[256];
static char config_path[320], clock_path[320], log_path[320], socket_path[320], key_dir[300], cert_path[340];
static struct note_verifier signing_verifier;
static merkle_hash leaves[LEAVES];

/* ---- setting up a run directory ---- */

static void copy_example_key(const char *name)
{
	char from[512], to[512];
	size_t len;
	snprintf(from, sizeof(from), "keys-example/%s", name);
	uint8_t *data = test_read_file(test_source_path(from), &len);
	snprintf(to, sizeof(to), "%s/%s", key_dir, name);
	test_write_file(to, data, len, 0600);
	ck_assert_int_eq(chmod(to, 0600), 0);
	free(data);
}

static void write_clock(uint64_t now)
{
	char text[32];
	int len = snprintf(text, sizeof(text), "%llu\n", (unsigned long long)now);
	test_write_file(clock_path, text, (size_t)len, 0644);
}

/* Issues keys/authority1.cert for the example signing key with the example identity key. */
static void issue_certificate(uint64_t after, uint64_t until)
{
	char path[512];
	struct signer_key *identity = NULL, *signing = NULL;

	snprintf(path, sizeof(path), "%s/authority1-identity.key", key_dir);
	ck_assert_int_eq(signer_key_load(path, &identity), 0);
	snprintf(path, sizeof(path), "%s/authority1.key", key_dir);
	ck_assert_int_eq(signer_key_load(path, &signing), 0);
	signing_verifier = *signer_key_verifier(signing);
	ck_assert_int_eq(
	    test_certificate_write(identity, AUTHORITY, &signing_verifier, after, until, cert_path), 0);
	signer_key_free(identity);
	signer_key_free(signing);
}

static void setup(void)
{
	char config[2048];
	snprintf(dir, sizeof(dir), "/tmp/test_signer.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(key_dir, sizeof(key_dir), "%s/keys", dir);
	ck_assert_int_eq(mkdir(key_dir, 0700), 0);
	snprintf(config_path, sizeof(config_path), "%s/dirauth-signer.yaml", dir);
	snprintf(clock_path, sizeof(clock_path), "%s/clock", dir);
	snprintf(log_path, sizeof(log_path), "%s/signer.log", dir);
	snprintf(socket_path, sizeof(socket_path), "%s/signer.sock", dir);
	snprintf(cert_path, sizeof(cert_path), "%s/authority1.cert", key_dir);
	copy_example_key("authority1.key");
	copy_example_key("authority1-identity.key");
	copy_example_key("log.key");
	copy_example_key("cosignature.key");
	issue_certificate(NOW - 86400, NOW + 30 * 86400);
	write_clock(NOW);
	int len = snprintf(config, sizeof(config),
	                   "authority: " AUTHORITY "\n"
	                   "socket: signer.sock\n"
	                   "allowed_uid: %u\n"
	                   "state_dir: state\n"
	                   "signing_key: keys/authority1.key\n"
	                   "certificates: [keys/authority1.cert]\n"
	                   "log_key: keys/log.key\n"
	                   "cosignature_key: keys/cosignature.key\n"
	                   "audit_log: audit.log\n"
	                   "clock: { source: file, path: clock }\n"
	                   "namespaces:\n"
	                   "  - { name: mix, origin: " LOG_ORIGIN ", genesis: %llu, length_seconds: %llu, "
	                   "validity_epochs: 3 }\n",
	                   (unsigned)getuid(), (unsigned long long)GENESIS, (unsigned long long)LENGTH);
	test_write_file(config_path, config, (size_t)len, 0644);
	for (unsigned i = 0; i < LEAVES; i++) {
		char leaf[32];
		int n = snprintf(leaf, sizeof(leaf), "leaf %u", i);
		ck_assert_int_eq(merkle_leaf_hash((const uint8_t *)leaf, (size_t)n, leaves[i]), 0);
	}
}

static void teardown(void)
{
	test_remove_tree(dir);
}

/* ---- the program ---- */

static void sleep_us(long microseconds)
{
	struct timespec t = {.tv_sec = microseconds / 1000000, .tv_nsec = (microseconds % 1000000) * 1000};
	while (nanosleep(&t, &t) != 0 && errno == EINTR)
		;
}

/* Starts the signer and returns its pid and a connection to it. */
static pid_t start_signer(int *fd)
{
	char *argv[] = {(char *)test_binary_path("signer/dirauth-signer"), "--config", config_path, NULL};
	pid_t pid = test_spawn(argv, log_path);
	for (int i = 0; i < 20000; i++) {
		int status;
		*fd = test_signer_connect(socket_path);
		if (*fd >= 0)
			return pid;
		if (waitpid(pid, &status, WNOHANG) == pid) {
			size_t len;
			char *log = (char *)test_read_file(log_path, &len);
			ck_abort_msg("dirauth-signer exited (status %d) before listening:\n%s", status, log);
		}
		sleep_us(500);
	}
	ck_abort_msg("dirauth-signer did not start listening");
	return -1;
}

/* Runs the signer with extra arguments to completion; returns its exit code and its output. */
static int run_signer(const char *extra, char *output, size_t cap)
{
	char *argv[] = {(char *)test_binary_path("signer/dirauth-signer"), "--config", config_path,
	                (char *)extra, NULL};
	char run_log[400];
	size_t len;
	snprintf(run_log, sizeof(run_log), "%s/run.log", dir);
	unlink(run_log);
	pid_t pid = test_spawn(argv, run_log);
	int code = test_wait_exit(pid, 20000);
	char *text = (char *)test_read_file(run_log, &len);
	snprintf(output, cap, "%s", text);
	free(text);
	return code;
}

/* ---- the protocol ---- */

static void send_request(int fd, uint8_t operation, const struct buffer *text, uint64_t old_size,
                         const merkle_hash *proof, size_t proof_count)
{
	struct signer_request request;
	struct buffer frame;
	memset(&request, 0, sizeof(request));
	request.operation = operation;
	request.text = text ? text->data : NULL;
	request.text_len = text ? text->len : 0;
	request.old_size = old_size;
	request.proof_count = proof_count;
	if (proof_count)
		memcpy(request.proof, proof, proof_count * sizeof(merkle_hash));
	buffer_init(&frame);
	ck_assert_int_eq(signer_request_encode(&request, &frame), 0);
	ck_assert_int_eq(send(fd, frame.data, frame.len, MSG_NOSIGNAL), (ssize_t)frame.len);
	buffer_free(&frame);
}

/* Reads one response; returns 0, or -1 when the connection ended first. The payload is
 * copied into payload (may be NULL). */
static int read_response(int fd, struct signer_response *response, struct buffer *payload)
{
	uint8_t prefix[4];
	size_t len;
	if (test_signer_read_exact(fd, prefix, 4) != 0)
		return -1;
	ck_assert_int_eq(signer_frame_length(prefix, &len), 0);
	uint8_t *body = malloc(len ? len : 1);
	if (test_signer_read_exact(fd, body, len) != 0) {
		free(body);
		return -1;
	}
	ck_assert_int_eq(signer_response_decode(body, len, response), 0);
	if (payload) {
		buffer_reset(payload);
		buffer_append(payload, response->payload, response->payload_len);
	}
	response->payload = NULL;
	free(body);
	return 0;
}

static int call(int fd, uint8_t operation, const struct buffer *text, struct signer_response *response)
{
	send_request(fd, operation, text, 0, NULL, 0);
	ck_assert_int_eq(read_response(fd, response, NULL), 0);
	return response->result;
}

static int call_checkpoint(int fd, uint8_t operation, const struct buffer *text, uint64_t old_size,
                           uint64_t size, struct signer_response *response)
{
	merkle_hash proof[MERKLE_MAX_PROOF];
	size_t proof_count = 0;
	if (old_size > 0 && size > old_size)
		ck_assert_int_eq(merkle_consistency_proof(leaves, size, old_size, proof, &proof_count), 0);
	send_request(fd, operation, text, old_size, proof, proof_count);
	ck_assert_int_eq(read_response(fd, response, NULL), 0);
	return response->result;
}

/* ---- statements ---- */

static void header_text(uint64_t epoch, unsigned variant, struct buffer *out)
{
	/* The times of the epoch by the schedule the signer is configured with. */
	ck_assert_int_eq(test_signer_header_text(LOG_ORIGIN, GENESIS, LENGTH, epoch, variant, out), 0);
}

/* Moves the signer's clock to a moment in epoch. */
static void clock_at_epoch(uint64_t epoch)
{
	write_clock(GENESIS + epoch * LENGTH + 1);
}

static void checkpoint_text(const char *origin, uint64_t size, const merkle_hash *tree, struct buffer *out)
{
	struct checkpoint c;
	memset(&c, 0, sizeof(c));
	snprintf(c.origin, sizeof(c.origin), "%s", origin);
	c.tree_size = size;
	ck_assert_int_eq(merkle_root(tree, size, c.root), 0);
	buffer_reset(out);
	ck_assert_int_eq(checkpoint_encode(&c, out), 0);
}

static void assert_header_signature(const struct buffer *text, const struct signer_response *response)
{
	struct buffer note;
	struct note *parsed = NULL;
	ck_assert(response->has_signature);
	buffer_init(&note);
	ck_assert_int_eq(note_format(text->data, text->len, &response->signature, 1, &note), 0);
	ck_assert_int_eq(note_parse(note.data, note.len, &parsed), 0);
	ck_assert_int_eq(note_verify_threshold(parsed, &signing_verifier, 1, 1), 0);
	note_free(parsed);
	buffer_free(&note);
}

/* ---- a compromised dirauthd ---- */

START_TEST(test_compromised_dirauthd)
{
	struct signer_response response, first;
	struct buffer text, other;
	int fd;
	clock_at_epoch(5);
	pid_t pid = start_signer(&fd);
	buffer_init(&text);
	buffer_init(&other);

	/* One header for epoch 5, then another for the same epoch, then a lower epoch. */
	header_text(5, 1, &text);
	ck_assert_int_eq(call(fd, SIGNER_OP_SIGN_SNAPSHOT_HEADER, &text, &first), 0);
	assert_header_signature(&text, &first);
	header_text(5, 2, &other);
	ck_assert_int_eq(call(fd, SIGNER_OP_SIGN_SNAPSHOT_HEADER, &other, &response), DIRAUTH_ERR_COLLISION);
	ck_assert(!response.has_signature);
	header_text(4, 2, &other);
	ck_assert_int_eq(call(fd, SIGNER_OP_SIGN_SNAPSHOT_HEADER, &other, &response), DIRAUTH_ERR_ROLLBACK);
	/* The same header again: the same signature. */
	ck_assert_int_eq(call(fd, SIGNER_OP_SIGN_SNAPSHOT_HEADER, &text, &response), 0);
	ck_assert_mem_eq(response.signature.signature, first.signature.signature, 64);

	/* Raw text, and one kind passed off as another. */
	buffer_reset(&other);
	buffer_append_string(&other, "please sign this\n");
	for (unsigned op = 0; op <= UINT8_MAX; op++)
		if (signer_operation_signs((uint8_t)op))
			ck_assert_int_eq(call(fd, (uint8_t)op, &other, &response), DIRAUTH_ERR_REFUSED);
	ck_assert_int_eq(call(fd, SIGNER_OP_SIGN_RECEIPT, &text, &response), DIRAUTH_ERR_REFUSED);
	ck_assert_int_eq(call(fd, SIGNER_OP_SIGN_VOTE, &text, &response), DIRAUTH_ERR_REFUSED);
	ck_assert_int_eq(call(fd, SIGNER_OP_COSIGN_CHECKPOINT, &text, &response), DIRAUTH_ERR_REFUSED);

	/* Checkpoints: cosign a tree of 6, then try a fork. */
	checkpoint_text(OTHER_LOG, 6, leaves, &other);
	ck_assert_int_eq(call_checkpoint(fd, SIGNER_OP_COSIGN_CHECKPOINT, &other, 0, 6, &response), 0);
	ck_assert_uint_eq(response.signature.signature_len, 72);
	merkle_hash forked[LEAVES];
	memcpy(forked, leaves, sizeof(forked));
	forked[2][0] ^= 1;
	checkpoint_text(OTHER_LOG, 10, forked, &other);
	{
		merkle_hash proof[MERKLE_MAX_PROOF];
		size_t proof_count = 0;
		/* The fork's own proof from its own size-6 tree: not consistent with what was cosigned. */
		ck_assert_int_eq(merkle_consistency_proof(forked, 10, 6, proof, &proof_count), 0);
		send_request(fd, SIGNER_OP_COSIGN_CHECKPOINT, &other, 6, proof, proof_count);
		ck_assert_int_eq(read_response(fd, &response, NULL), 0);
		ck_assert_int_eq(response.result, DIRAUTH_ERR_PROOF);
	}
	checkpoint_text(OTHER_LOG, 6, forked, &other);
	ck_assert_int_eq(call_checkpoint(fd, SIGNER_OP_COSIGN_CHECKPOINT, &other, 6, 6, &response),
	                 DIRAUTH_ERR_COLLISION);
	checkpoint_text(OTHER_LOG, 3, leaves, &other);
	ck_assert_int_eq(call_checkpoint(fd, SIGNER_OP_COSIGN_CHECKPOINT, &other, 6, 3, &response),
	                 DIRAUTH_ERR_ROLLBACK);
	checkpoint_text(OTHER_LOG, 10, leaves, &other);
	ck_assert_int_eq(call_checkpoint(fd, SIGNER_OP_COSIGN_CHECKPOINT, &other, 6, 10, &response), 0);
	/* The log key signs only its own log. */
	ck_assert_int_eq(call_checkpoint(fd, SIGNER_OP_SIGN_CHECKPOINT, &other, 0, 10, &response),
	                 DIRAUTH_ERR_REFUSED);
	close(fd);

	/* SIGTERM stops it cleanly and removes the socket; after a restart it refuses the same. */
	int status = test_kill(pid, SIGTERM);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	struct stat st;
	ck_assert_int_ne(lstat(socket_path, &st), 0);
	pid = start_signer(&fd);
	header_text(5, 2, &other);
	ck_assert_int_eq(call(fd, SIGNER_OP_SIGN_SNAPSHOT_HEADER, &other, &response), DIRAUTH_ERR_COLLISION);
	checkpoint_text(OTHER_LOG, 6, forked, &other);
	ck_assert_int_eq(call_checkpoint(fd, SIGNER_OP_COSIGN_CHECKPOINT, &other, 10, 6, &response),
	                 DIRAUTH_ERR_ROLLBACK);
	ck_assert_int_eq(call(fd, SIGNER_OP_SIGN_SNAPSHOT_HEADER, &text, &response), 0);
	ck_assert_mem_eq(response.signature.signature, first.signature.signature, 64);
	close(fd);
	test_kill(pid, SIGINT);

	size_t len;
	char *log = (char *)test_read_file(log_path, &len);
	ck_assert_ptr_nonnull(strstr(log, "dirauth-signer: listening on "));
	free(log);
	char audit_path[400];
	snprintf(audit_path, sizeof(audit_path), "%s/audit.log", dir);
	log = (char *)test_read_file(audit_path, &len);
	ck_assert_ptr_nonnull(
	    strstr(log, " refuse snapshot-header origin=" LOG_ORIGIN " epoch=5 reason=collision"));
	ck_assert_ptr_nonnull(strstr(log, " sign cosignature origin=" OTHER_LOG " epoch=- size=10 "));
	free(log);
	buffer_free(&text);
	buffer_free(&other);
}
END_TEST

/* ---- the signer's own schedule and clock ---- */

/* The request a compromised dirauthd once sent, epoch 1796113200 of a 60-second schedule (the
 * times of that epoch in the header), is refused as not begun, and poisons nothing: the real
 * epochs sign after it, across a restart too. Times that are not the epoch's, an epoch that is
 * over and an origin that is not configured are refused, each with its reason, in the audit log. */
START_TEST(test_schedule_refusals)
{
	struct signer_response response;
	struct buffer text;
	struct snapshot_header h;
	int fd;
	clock_at_epoch(0);
	pid_t pid = start_signer(&fd);
	buffer_init(&text);

	memset(&h, 0, sizeof(h));
	snprintf(h.namespace_name, sizeof(h.namespace_name), "mix");
	snprintf(h.origin, sizeof(h.origin), "%s", LOG_ORIGIN);
	h.epoch = 1796113200ULL;
	h.valid_after = GENESIS + h.epoch * LENGTH;
	h.fresh_until = h.valid_after + LENGTH;
	h.valid_until = h.valid_after + 3 * LENGTH;
	h.consensus_method = SNAPSHOT_CONSENSUS_METHOD;
	ck_assert_int_eq(snapshot_header_encode(&h, &text), 0);
	ck_assert_int_eq(call(fd, SIGNER_OP_SIGN_SNAPSHOT_HEADER, &text, &response), DIRAUTH_ERR_STALE);
	ck_assert_msg(strstr(response.detail, "has not begun"), "%s", response.detail);
	for (uint64_t epoch = 0; epoch < 3; epoch++) {
		clock_at_epoch(epoch);
		header_text(epoch, 1, &text);
		ck_assert_int_eq(call(fd, SIGNER_OP_SIGN_SNAPSHOT_HEADER, &text, &response), 0);
		assert_header_signature(&text, &response);
	}
	/* An epoch that is over by the signer's clock (more than the skew ago). */
	clock_at_epoch(20);
	header_text(10, 1, &text);
	ck_assert_int_eq(call(fd, SIGNER_OP_SIGN_SNAPSHOT_HEADER, &text, &response), DIRAUTH_ERR_STALE);
	ck_assert_msg(strstr(response.detail, "is over"), "%s", response.detail);
	/* Times a second off its epoch's. */
	memset(&h, 0, sizeof(h));
	snprintf(h.namespace_name, sizeof(h.namespace_name), "mix");
	snprintf(h.origin, sizeof(h.origin), "%s", LOG_ORIGIN);
	h.epoch = 20;
	h.valid_after = GENESIS + 20 * LENGTH + 1;
	h.fresh_until = h.valid_after + LENGTH;
	h.valid_until = h.valid_after + 3 * LENGTH;
	h.consensus_method = SNAPSHOT_CONSENSUS_METHOD;
	buffer_reset(&text);
	ck_assert_int_eq(snapshot_header_encode(&h, &text), 0);
	ck_assert_int_eq(call(fd, SIGNER_OP_SIGN_SNAPSHOT_HEADER, &text, &response), DIRAUTH_ERR_MISMATCH);
	/* An origin the configuration does not name. */
	snprintf(h.origin, sizeof(h.origin), "example.org/elsewhere");
	h.valid_after = GENESIS + 20 * LENGTH;
	h.fresh_until = h.valid_after + LENGTH;
	h.valid_until = h.valid_after + 3 * LENGTH;
	buffer_reset(&text);
	ck_assert_int_eq(snapshot_header_encode(&h, &text), 0);
	ck_assert_int_eq(call(fd, SIGNER_OP_SIGN_SNAPSHOT_HEADER, &text, &response), DIRAUTH_ERR_REFUSED);
	/* The current epoch signs. */
	header_text(20, 1, &text);
	ck_assert_int_eq(call(fd, SIGNER_OP_SIGN_SNAPSHOT_HEADER, &text, &response), 0);
	close(fd);
	test_kill(pid, SIGTERM);

	/* After a restart too. */
	clock_at_epoch(21);
	pid = start_signer(&fd);
	header_text(21, 1, &text);
	ck_assert_int_eq(call(fd, SIGNER_OP_SIGN_SNAPSHOT_HEADER, &text, &response), 0);
	close(fd);
	test_kill(pid, SIGTERM);

	size_t len;
	char audit_path[400];
	snprintf(audit_path, sizeof(audit_path), "%s/audit.log", dir);
	char *log = (char *)test_read_file(audit_path, &len);
	ck_assert_ptr_nonnull(
	    strstr(log, " refuse snapshot-header origin=" LOG_ORIGIN " epoch=1796113200 reason=stale\n"));
	ck_assert_ptr_nonnull(
	    strstr(log, " refuse snapshot-header origin=" LOG_ORIGIN " epoch=20 reason=mismatch\n"));
	ck_assert_ptr_nonnull(
	    strstr(log, " refuse snapshot-header origin=example.org/elsewhere epoch=20 reason=refused\n"));
	ck_assert_ptr_nonnull(strstr(log, " sign snapshot-header origin=" LOG_ORIGIN " epoch=21 "));
	free(log);
	buffer_free(&text);
}
END_TEST

/* The clock's file goes away while the signer runs: every signature is refused with its
 * reason, the keys are still served, and signing resumes once the clock is back. */
START_TEST(test_clock_unreadable)
{
	struct signer_response response;
	struct buffer text, payload;
	int fd;
	pid_t pid = start_signer(&fd);
	buffer_init(&text);
	buffer_init(&payload);

	ck_assert_int_eq(unlink(clock_path), 0);
	header_text(0, 1, &text);
	ck_assert_int_eq(call(fd, SIGNER_OP_SIGN_SNAPSHOT_HEADER, &text, &response), DIRAUTH_ERR_UNAVAILABLE);
	ck_assert_msg(strstr(response.detail, "the clock cannot be read"), "%s", response.detail);
	checkpoint_text(OTHER_LOG, 4, leaves, &text);
	ck_assert_int_eq(call_checkpoint(fd, SIGNER_OP_COSIGN_CHECKPOINT, &text, 0, 4, &response),
	                 DIRAUTH_ERR_UNAVAILABLE);
	send_request(fd, SIGNER_OP_GET_KEYS, NULL, 0, NULL, 0);
	ck_assert_int_eq(read_response(fd, &response, &payload), 0);
	ck_assert_int_eq(response.result, 0);
	ck_assert_ptr_nonnull(strstr((const char *)payload.data, "signing-key "));

	write_clock(NOW);
	header_text(0, 1, &text);
	ck_assert_int_eq(call(fd, SIGNER_OP_SIGN_SNAPSHOT_HEADER, &text, &response), 0);
	close(fd);
	test_kill(pid, SIGTERM);

	size_t len;
	char audit_path[400];
	snprintf(audit_path, sizeof(audit_path), "%s/audit.log", dir);
	char *log = (char *)test_read_file(audit_path, &len);
	ck_assert_ptr_nonnull(strstr(log, "- refuse snapshot-header origin=- epoch=- reason=unavailable\n"));
	ck_assert_ptr_nonnull(strstr(log, "- refuse cosignature origin=- epoch=- reason=unavailable\n"));
	free(log);
	buffer_free(&text);
	buffer_free(&payload);
}
END_TEST

static int64_t monotonic_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* A peer that connects and says nothing, and one that sends its frame a byte at a time, do not
 * hold up dirauthd's signatures: each connection is served on its own. */
START_TEST(test_slow_peers_do_not_block)
{
	struct signer_response response;
	struct buffer text;
	int fd;
	pid_t pid = start_signer(&fd);
	buffer_init(&text);

	int silent = test_signer_connect(socket_path);
	int trickling = test_signer_connect(socket_path);
	ck_assert_int_ge(silent, 0);
	ck_assert_int_ge(trickling, 0);
	const uint8_t prefix[] = {0, 0, 3, 232};
	ck_assert_int_eq(send(trickling, prefix, sizeof(prefix), MSG_NOSIGNAL), 4);
	for (int i = 0; i < 3; i++) {
		sleep_us(300000);
		ck_assert_int_eq(send(trickling, "x", 1, MSG_NOSIGNAL), 1);
		int64_t start = monotonic_ms();
		header_text((uint64_t)i, 1, &text);
		ck_assert_int_eq(call(fd, SIGNER_OP_SIGN_SNAPSHOT_HEADER, &text, &response), 0);
		int64_t took = monotonic_ms() - start;
		ck_assert_msg(took < 1000, "a signature took %lld ms beside two slow peers", (long long)took);
	}
	/* A new connection is served at once too. */
	int other = test_signer_connect(socket_path);
	ck_assert_int_ge(other, 0);
	header_text(2, 1, &text);
	ck_assert_int_eq(call(other, SIGNER_OP_SIGN_SNAPSHOT_HEADER, &text, &response), 0);
	close(other);
	close(silent);
	close(trickling);
	close(fd);
	test_kill(pid, SIGTERM);
	buffer_free(&text);
}
END_TEST

/* ---- refusing to start ---- */

START_TEST(test_refuses_to_start)
{
	char output[4096], path[400];

	ck_assert_int_eq(run_signer("--check-config", output, sizeof(output)), 0);
	ck_assert_ptr_nonnull(strstr(output, ": ok"));

	/* Usage. */
	char *argv[] = {(char *)test_binary_path("signer/dirauth-signer"), NULL};
	ck_assert_int_eq(test_wait_exit(test_spawn(argv, NULL), 20000), 64);

	/* A key file others can read. */
	snprintf(path, sizeof(path), "%s/authority1.key", key_dir);
	ck_assert_int_eq(chmod(path, 0644), 0);
	ck_assert_int_eq(run_signer("--check-config", output, sizeof(output)), 77);
	ck_assert_msg(strstr(output, path), "%s", output);
	ck_assert_int_eq(chmod(path, 0600), 0);

	/* A key directory others can enter. */
	ck_assert_int_eq(chmod(key_dir, 0755), 0);
	ck_assert_int_eq(run_signer("--check-config", output, sizeof(output)), 77);
	ck_assert_msg(strstr(output, "key directory"), "%s", output);
	ck_assert_int_eq(chmod(key_dir, 0700), 0);

	/* An expired certificate (the clock moved past it). */
	write_clock(NOW + 31 * 86400);
	ck_assert_int_eq(run_signer("--check-config", output, sizeof(output)), 78);
	ck_assert_msg(strstr(output, "expired at"), "%s", output);
	write_clock(NOW);

	/* A certificate not valid yet. */
	issue_certificate(NOW + 3600, NOW + 7200);
	ck_assert_int_eq(run_signer("--check-config", output, sizeof(output)), 78);
	ck_assert_msg(strstr(output, "not valid until"), "%s", output);
	issue_certificate(NOW - 86400, NOW + 30 * 86400);

	/* A configuration error names its line. */
	const char *bad = "authority: " AUTHORITY "\nsocket: s.sock\nbogus: 1\n";
	test_write_file(config_path, bad, strlen(bad), 0644);
	ck_assert_int_eq(run_signer("--check-config", output, sizeof(output)), 78);
	ck_assert_msg(strstr(output, "dirauth-signer.yaml:3:"), "%s", output);
}
END_TEST

START_TEST(test_file_in_place_of_socket)
{
	char output[4096];
	test_write_file(socket_path, "not a socket\n", 13, 0644);
	ck_assert_int_eq(run_signer(NULL, output, sizeof(output)), 69);
	ck_assert_msg(strstr(output, "not a socket"), "%s", output);
}
END_TEST

START_TEST(test_second_signer_refused)
{
	struct signer_response response;
	struct buffer text;
	char output[4096];
	struct stat st;
	int fd;

	pid_t pid = start_signer(&fd);
	/* A second signer on the same socket: the first holds the lock file. */
	ck_assert_int_eq(run_signer(NULL, output, sizeof(output)), 69);
	ck_assert_msg(strstr(output, "another dirauth-signer is running on"), "%s", output);
	/* The first was left alone and still serves. */
	buffer_init(&text);
	header_text(1, 1, &text);
	ck_assert_int_eq(call(fd, SIGNER_OP_SIGN_SNAPSHOT_HEADER, &text, &response), 0);
	close(fd);
	/* Killed, it leaves its socket and its lock file; the kernel released the lock, so a new
	 * signer replaces the socket and starts. */
	test_kill(pid, SIGKILL);
	ck_assert_int_eq(lstat(socket_path, &st), 0);
	ck_assert(S_ISSOCK(st.st_mode));
	pid = start_signer(&fd);
	ck_assert_int_eq(call(fd, SIGNER_OP_SIGN_SNAPSHOT_HEADER, &text, &response), 0);
	close(fd);
	test_kill(pid, SIGTERM);
	buffer_free(&text);
}
END_TEST

/* ---- crash safety ---- */

static uint64_t random_state;

static uint64_t random_next(void)
{
	/* xorshift64*: reproducible from the printed seed. */
	random_state ^= random_state >> 12;
	random_state ^= random_state << 25;
	random_state ^= random_state >> 27;
	return random_state * 2685821657736338717ULL;
}

static unsigned random_below(unsigned n)
{
	return (unsigned)(random_next() % n);
}

/* Every signature ever returned, by epoch: the variant signed and its signature. */
struct crash_record {
	int signed_variant; /* -1: none returned */
	uint8_t signature[64];
};

struct crash_state {
	struct crash_record records[MAX_EPOCHS];
	uint64_t highest_returned; /* highest epoch with a returned signature */
	int any_returned;
	unsigned signatures;
	unsigned refusals;
	unsigned kills_in_flight;
};

/* Records a response to a request for (epoch, variant): a signature must not contradict any
 * returned before; a refusal must be one of the ledger's. */
static void crash_record_response(struct crash_state *state, uint64_t epoch, unsigned variant,
                                  const struct signer_response *response)
{
	struct crash_record *record = &state->records[epoch];
	if (response->result != 0) {
		ck_assert_msg(response->result == DIRAUTH_ERR_COLLISION ||
		                  response->result == DIRAUTH_ERR_ROLLBACK,
		              "unexpected refusal %d: %s", response->result, response->detail);
		state->refusals++;
		return;
	}
	ck_assert(response->has_signature);
	ck_assert_uint_eq(response->signature.signature_len, 64);
	if (record->signed_variant >= 0) {
		ck_assert_msg(record->signed_variant == (int)variant,
		              "two different headers signed for epoch %llu (variants %d and %u)",
		              (unsigned long long)epoch, record->signed_variant, variant);
		ck_assert_mem_eq(record->signature, response->signature.signature, 64);
	} else {
		struct buffer text;
		buffer_init(&text);
		header_text(epoch, variant, &text);
		assert_header_signature(&text, response);
		buffer_free(&text);
		record->signed_variant = (int)variant;
		memcpy(record->signature, response->signature.signature, 64);
	}
	if (!state->any_returned || epoch > state->highest_returned)
		state->highest_returned = epoch;
	state->any_returned = 1;
	state->signatures++;
}

/* After a restart: the highest returned epoch cannot get another header, nor can any lower
 * epoch; its own header is either signed again identically or refused as lower than a newer
 * record (a record whose signature was lost in a kill). */
static void crash_check_refusals(struct crash_state *state, int fd)
{
	struct signer_response response;
	struct buffer text;
	if (!state->any_returned)
		return;
	uint64_t epoch = state->highest_returned;
	int variant = state->records[epoch].signed_variant;
	buffer_init(&text);
	clock_at_epoch(epoch);
	header_text(epoch, (unsigned)(variant + 1) % 3 + 10, &text);
	ck_assert_int_ne(call(fd, SIGNER_OP_SIGN_SNAPSHOT_HEADER, &text, &response), 0);
	ck_assert(response.result == DIRAUTH_ERR_COLLISION || response.result == DIRAUTH_ERR_ROLLBACK);
	if (epoch > 0) {
		header_text(epoch - 1, 20, &text);
		ck_assert_int_eq(call(fd, SIGNER_OP_SIGN_SNAPSHOT_HEADER, &text, &response),
		                 DIRAUTH_ERR_ROLLBACK);
	}
	header_text(epoch, (unsigned)variant, &text);
	send_request(fd, SIGNER_OP_SIGN_SNAPSHOT_HEADER, &text, 0, NULL, 0);
	ck_assert_int_eq(read_response(fd, &response, NULL), 0);
	if (response.result == 0)
		ck_assert_mem_eq(response.signature.signature, state->records[epoch].signature, 64);
	else
		ck_assert_int_eq(response.result, DIRAUTH_ERR_ROLLBACK);
	buffer_free(&text);
}

/* One cycle: start, check, a random run of requests, a kill at a random moment. */
static void crash_cycle(struct crash_state *state, uint64_t *next_epoch)
{
	struct signer_response response;
	struct buffer text;
	int fd;
	pid_t pid = start_signer(&fd);
	buffer_init(&text);

	crash_check_refusals(state, fd);
	unsigned requests = 1 + random_below(12);
	for (unsigned i = 0; i < requests; i++) {
		uint64_t epoch;
		unsigned kind = random_below(10);
		if (kind < 5 || *next_epoch == 0)
			epoch = (*next_epoch)++; /* a new epoch */
		else if (kind < 8)
			epoch = *next_epoch - 1; /* the current one: repeat or equivocate */
		else
			epoch = *next_epoch - 1 - random_below((unsigned)(*next_epoch < 4 ? *next_epoch : 4));
		ck_assert_uint_lt(epoch, MAX_EPOCHS);
		unsigned variant = random_below(3);
		clock_at_epoch(epoch);
		header_text(epoch, variant, &text);
		send_request(fd, SIGNER_OP_SIGN_SNAPSHOT_HEADER, &text, 0, NULL, 0);
		if (i + 1 == requests) {
			/* The last request is in flight when the signer dies. */
			sleep_us((long)random_below(5001));
			test_kill(pid, SIGKILL);
			/* Whatever it answered before dying was returned: record it too. */
			if (read_response(fd, &response, NULL) == 0)
				crash_record_response(state, epoch, variant, &response);
			else
				state->kills_in_flight++;
		} else {
			ck_assert_int_eq(read_response(fd, &response, NULL), 0);
			crash_record_response(state, epoch, variant, &response);
		}
	}
	close(fd);
	buffer_free(&text);
}

START_TEST(test_crash_safety)
{
	static struct crash_state state;
	uint64_t next_epoch = 0;
	unsigned cycles = CRASH_CYCLES;
	const char *env = getenv("DIRAUTH_SIGNER_CRASH_CYCLES");
	if (env && atoi(env) > CRASH_CYCLES)
		cycles = (unsigned)atoi(env);
	random_state = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	if (random_state == 0)
		random_state = 1;
	fprintf(stderr, "test_signer: crash test, %u cycles, seed %llu\n", cycles,
	        (unsigned long long)random_state);

	memset(&state, 0, sizeof(state));
	for (size_t i = 0; i < MAX_EPOCHS; i++)
		state.records[i].signed_variant = -1;
	for (unsigned cycle = 0; cycle < cycles; cycle++)
		crash_cycle(&state, &next_epoch);

	/* A last restart: the state after the final kill holds too. */
	int fd;
	pid_t pid = start_signer(&fd);
	crash_check_refusals(&state, fd);
	close(fd);
	test_kill(pid, SIGTERM);
	fprintf(
	    stderr,
	    "test_signer: %u cycles, %llu epochs, %u signatures returned, %u refusals, %u kills before an "
	    "answer\n",
	    cycles, (unsigned long long)next_epoch, state.signatures, state.refusals, state.kills_in_flight);
	ck_assert_uint_gt(state.signatures, cycles);
	ck_assert_uint_gt(state.refusals, 0);
}
END_TEST

static Suite *signer_suite(void)
{
	Suite *suite = suite_create("dirauth-signer");
	TCase *tc = tcase_create("signer");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_compromised_dirauthd);
	tcase_add_test(tc, test_schedule_refusals);
	tcase_add_test(tc, test_clock_unreadable);
	tcase_add_test(tc, test_slow_peers_do_not_block);
	tcase_add_test(tc, test_refuses_to_start);
	tcase_add_test(tc, test_file_in_place_of_socket);
	tcase_add_test(tc, test_second_signer_refused);
	tcase_add_test(tc, test_crash_safety);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(signer_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
