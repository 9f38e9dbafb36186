/*
 * bench_signer_crash.c: a long kill -9 soak of dirauth-signer, beyond what the test suite runs.
 *
 *   bench_signer_crash [--cycles N] [--seed S] [--signer PATH]
 *
 * Each cycle starts the real dirauth-signer (the example keys, a certificate issued at run
 * time by the example identity key, a file clock, one state directory for the whole run),
 * checks that the refusal state left by the previous cycle is intact, sends a random run of
 * snapshot-header requests for new, current and older epochs with equivocating texts, and
 * SIGKILLs the signer 0-5 ms after the last request was sent; the file clock is moved to each
 * requested epoch (one-second epochs) before its request, so that the signer's schedule admits
 * it and every refusal is the ledger's. Every signature that reaches the
 * client is recorded and checked: it must verify, and no two different header texts may be
 * signed for one epoch. It prints cycles per second (each cycle is a process start, an LMDB
 * open, several fsynced ledger records and a kill) and exits 1 at the first violation.
 *
 * The default is 1000 cycles; tests/integration/test_signer.c runs the same loop for 100.
 */
#include "base/buffer.h"
#include "base/error.h"
#include "signer/key.h"
#include "schema/note.h"
#include "signer_protocol/signer_protocol.h"
#include "schema/snapshot.h"
#include "tests/support/test_signed_notes.h"
#include "tests/support/test_signer_socket.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define AUTHORITY  "authority1.dirauth.example"
#define ORIGIN     "dirauth.example/mix"
#define NOW        1800000000ULL
#define GENESIS    NOW /* epoch 0 begins at NOW */
#define LENGTH     1ULL
#define MAX_EPOCHS 65536 /* at one second each, well inside the certificate's 30 days */

struct bench {
	char dir[128];
	char key_dir[160];
	char config_path[200];
	char socket_path[200];
	char log_path[200];
	const char *signer;
	struct note_verifier signing_verifier;
	uint64_t random_state;
	int signed_variant[MAX_EPOCHS]; /* -1: nothing returned for the epoch */
	uint8_t signature[MAX_EPOCHS][64];
	uint64_t next_epoch;
	uint64_t highest_returned;
	int any_returned;
	unsigned long signatures, refusals, lost;
};

static void fail(const char *format, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *format, ...)
{
	va_list args;
	va_start(args, format);
	fputs("bench_signer_crash: ", stderr);
	vfprintf(stderr, format, args);
	fputc('\n', stderr);
	va_end(args);
	exit(1);
}

static double seconds_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void sleep_us(long microseconds)
{
	struct timespec t = {.tv_sec = microseconds / 1000000, .tv_nsec = (microseconds % 1000000) * 1000};
	while (nanosleep(&t, &t) != 0 && errno == EINTR)
		;
}

static uint64_t random_next(struct bench *b)
{
	b->random_state ^= b->random_state >> 12;
	b->random_state ^= b->random_state << 25;
	b->random_state ^= b->random_state >> 27;
	return b->random_state * 2685821657736338717ULL;
}

static unsigned random_below(struct bench *b, unsigned n)
{
	return (unsigned)(random_next(b) % n);
}

static void write_file(const char *path, const void *data, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	if (fd < 0 || write(fd, data, len) != (ssize_t)len || fchmod(fd, mode) != 0 || close(fd) != 0)
		fail("cannot write %s: %s", path, strerror(errno));
}

static void copy_key(struct bench *b, const char *name)
{
	char from[PATH_MAX], to[PATH_MAX], data[512];
	snprintf(from, sizeof(from), "%s/keys-example/%s", DIRAUTH_SOURCE_DIR, name);
	snprintf(to, sizeof(to), "%s/%s", b->key_dir, name);
	int fd = open(from, O_RDONLY);
	ssize_t len = fd >= 0 ? read(fd, data, sizeof(data)) : -1;
	if (len <= 0)
		fail("cannot read %s", from);
	close(fd);
	write_file(to, data, (size_t)len, 0600);
}

static void set_up(struct bench *b)
{
	char path[PATH_MAX], config[1024];
	struct signer_key *identity = NULL, *signing = NULL;

	snprintf(b->dir, sizeof(b->dir), "/tmp/bench_signer_crash.XXXXXX");
	if (!mkdtemp(b->dir))
		fail("mkdtemp: %s", strerror(errno));
	snprintf(b->key_dir, sizeof(b->key_dir), "%s/keys", b->dir);
	snprintf(b->config_path, sizeof(b->config_path), "%s/signer.yaml", b->dir);
	snprintf(b->socket_path, sizeof(b->socket_path), "%s/signer.sock", b->dir);
	snprintf(b->log_path, sizeof(b->log_path), "%s/signer.log", b->dir);
	if (mkdir(b->key_dir, 0700) != 0)
		fail("mkdir %s: %s", b->key_dir, strerror(errno));
	copy_key(b, "authority1.key");
	copy_key(b, "authority1-identity.key");

	snprintf(path, sizeof(path), "%s/authority1-identity.key", b->key_dir);
	if (signer_key_load(path, &identity) != 0)
		fail("cannot load %s", path);
	snprintf(path, sizeof(path), "%s/authority1.key", b->key_dir);
	if (signer_key_load(path, &signing) != 0)
		fail("cannot load %s", path);
	b->signing_verifier = *signer_key_verifier(signing);
	snprintf(path, sizeof(path), "%s/authority1.cert", b->key_dir);
	if (test_certificate_write(identity, AUTHORITY, &b->signing_verifier, NOW - 86400, NOW + 30 * 86400,
	                           path) != 0)
		fail("cannot issue the certificate");
	signer_key_free(identity);
	signer_key_free(signing);

	snprintf(path, sizeof(path), "%s/clock", b->dir);
	snprintf(config, sizeof(config), "%llu\n", (unsigned long long)NOW);
	write_file(path, config, strlen(config), 0644);
	int len =
	    snprintf(config, sizeof(config),
	             "authority: " AUTHORITY "\nsocket: signer.sock\nallowed_uid: %u\nstate_dir: state\n"
	             "signing_key: keys/authority1.key\ncertificates: [keys/authority1.cert]\n"
	             "audit_log: audit.log\nclock: { source: file, path: clock }\n"
	             "namespaces: [ { name: mix, origin: " ORIGIN ", genesis: %llu, length_seconds: %llu, "
	             "validity_epochs: 3 } ]\n",
	             (unsigned)getuid(), (unsigned long long)GENESIS, (unsigned long long)LENGTH);
	write_file(b->config_path, config, (size_t)len, 0644);
	for (size_t i = 0; i < MAX_EPOCHS; i++)
		b->signed_variant[i] = -1;
}

static void remove_tree(const char *path)
{
	pid_t pid = fork();
	if (pid == 0) {
		execlp("rm", "rm", "-rf", path, (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

/* ---- the signer and its protocol ---- */

static pid_t start_signer(struct bench *b, int *fd)
{
	pid_t pid = fork();
	if (pid < 0)
		fail("fork: %s", strerror(errno));
	if (pid == 0) {
		int log = open(b->log_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
		if (log >= 0) {
			dup2(log, 1);
			dup2(log, 2);
			close(log);
		}
		execl(b->signer, b->signer, "--config", b->config_path, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 40000; i++) {
		int status;
		*fd = test_signer_connect(b->socket_path);
		if (*fd >= 0)
			return pid;
		if (waitpid(pid, &status, WNOHANG) == pid)
			fail("dirauth-signer exited (status %d) before listening; see %s", status,
			     b->log_path);
		sleep_us(250);
	}
	fail("dirauth-signer did not start listening");
}

static void kill_signer(pid_t pid, int signal_number)
{
	kill(pid, signal_number);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

static void header_text(uint64_t epoch, unsigned variant, struct buffer *out)
{
	/* The times of the epoch by the signer's schedule. */
	if (test_signer_header_text(ORIGIN, GENESIS, LENGTH, epoch, variant, out) != 0)
		fail("snapshot_header_encode");
}

/* Moves the file clock into epoch, then sends a header for it. */
static void send_header(const struct bench *b, int fd, uint64_t epoch, unsigned variant)
{
	struct signer_request request;
	struct buffer text, frame;
	char path[PATH_MAX], now[32];
	snprintf(path, sizeof(path), "%s/clock", b->dir);
	snprintf(now, sizeof(now), "%llu\n", (unsigned long long)(GENESIS + epoch * LENGTH));
	write_file(path, now, strlen(now), 0644);
	buffer_init(&text);
	buffer_init(&frame);
	header_text(epoch, variant, &text);
	memset(&request, 0, sizeof(request));
	request.operation = SIGNER_OP_SIGN_SNAPSHOT_HEADER;
	request.text = text.data;
	request.text_len = text.len;
	if (signer_request_encode(&request, &frame) != 0 ||
	    send(fd, frame.data, frame.len, MSG_NOSIGNAL) != (ssize_t)frame.len)
		fail("cannot send a request");
	buffer_free(&text);
	buffer_free(&frame);
}

/* Reads one response (its payload is not kept). Returns 0 or -1 when the connection ended. */
static int read_response(int fd, struct signer_response *response)
{
	uint8_t prefix[4], *body;
	size_t len;
	if (test_signer_read_exact(fd, prefix, 4) != 0)
		return -1;
	if (signer_frame_length(prefix, &len) != 0)
		fail("bad frame length from the signer");
	body = malloc(len ? len : 1);
	if (!body || test_signer_read_exact(fd, body, len) != 0) {
		free(body);
		return -1;
	}
	if (signer_response_decode(body, len, response) != 0)
		fail("bad response from the signer");
	response->payload = NULL;
	free(body);
	return 0;
}

/* ---- the checks ---- */

static void verify_signature(const struct bench *b, uint64_t epoch, unsigned variant,
                             const struct signer_response *response)
{
	struct buffer text, note;
	struct note *parsed = NULL;
	buffer_init(&text);
	buffer_init(&note);
	header_text(epoch, variant, &text);
	if (note_format(text.data, text.len, &response->signature, 1, &note) != 0 ||
	    note_parse(note.data, note.len, &parsed) != 0 ||
	    note_verify_threshold(parsed, &b->signing_verifier, 1, 1) != 0)
		fail("a returned signature for epoch %llu does not verify", (unsigned long long)epoch);
	note_free(parsed);
	buffer_free(&text);
	buffer_free(&note);
}

static void record(struct bench *b, uint64_t epoch, unsigned variant, const struct signer_response *response)
{
	if (response->result != 0) {
		if (response->result != DIRAUTH_ERR_COLLISION && response->result != DIRAUTH_ERR_ROLLBACK)
			fail("unexpected refusal %d: %s", response->result, response->detail);
		b->refusals++;
		return;
	}
	if (!response->has_signature || response->signature.signature_len != 64)
		fail("a success without a signature");
	if (b->signed_variant[epoch] >= 0) {
		if (b->signed_variant[epoch] != (int)variant)
			fail("EQUIVOCATION: two different headers signed for epoch %llu",
			     (unsigned long long)epoch);
		if (memcmp(b->signature[epoch], response->signature.signature, 64) != 0)
			fail("a repeat for epoch %llu returned another signature", (unsigned long long)epoch);
	} else {
		verify_signature(b, epoch, variant, response);
		b->signed_variant[epoch] = (int)variant;
		memcpy(b->signature[epoch], response->signature.signature, 64);
	}
	if (!b->any_returned || epoch > b->highest_returned)
		b->highest_returned = epoch;
	b->any_returned = 1;
	b->signatures++;
}

static void check_refusals(struct bench *b, int fd)
{
	struct signer_response response;
	if (!b->any_returned)
		return;
	uint64_t epoch = b->highest_returned;
	send_header(b, fd, epoch, (unsigned)b->signed_variant[epoch] % 3 + 10);
	if (read_response(fd, &response) != 0)
		fail("no answer after restart");
	if (response.result != DIRAUTH_ERR_COLLISION && response.result != DIRAUTH_ERR_ROLLBACK)
		fail("after a restart, another header for epoch %llu was not refused (%d)",
		     (unsigned long long)epoch, response.result);
	if (epoch > 0) {
		send_header(b, fd, epoch - 1, 20);
		if (read_response(fd, &response) != 0 || response.result != DIRAUTH_ERR_ROLLBACK)
			fail("after a restart, epoch %llu was not refused as a rollback",
			     (unsigned long long)epoch - 1);
	}
}

static void cycle(struct bench *b)
{
	struct signer_response response;
	int fd;
	pid_t pid = start_signer(b, &fd);
	check_refusals(b, fd);
	unsigned requests = 1 + random_below(b, 12);
	for (unsigned i = 0; i < requests; i++) {
		uint64_t epoch;
		unsigned kind = random_below(b, 10);
		if (kind < 5 || b->next_epoch == 0)
			epoch = b->next_epoch++;
		else if (kind < 8)
			epoch = b->next_epoch - 1;
		else
			epoch = b->next_epoch - 1 -
			        random_below(b, (unsigned)(b->next_epoch < 4 ? b->next_epoch : 4));
		if (epoch >= MAX_EPOCHS)
			fail("more than %d epochs: use fewer cycles", MAX_EPOCHS);
		unsigned variant = random_below(b, 3);
		send_header(b, fd, epoch, variant);
		if (i + 1 == requests) {
			sleep_us((long)random_below(b, 5001));
			kill_signer(pid, SIGKILL);
			if (read_response(fd, &response) == 0)
				record(b, epoch, variant, &response);
			else
				b->lost++;
		} else {
			if (read_response(fd, &response) != 0)
				fail("the signer closed the connection");
			record(b, epoch, variant, &response);
		}
	}
	close(fd);
}

static const char *default_signer(void)
{
	static char path[PATH_MAX + 32];
	char self[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0)
		return "signer/dirauth-signer";
	self[len] = '\0';
	char *slash = strrchr(self, '/');
	if (slash)
		*slash = '\0';
	snprintf(path, sizeof(path), "%s/../signer/dirauth-signer", self);
	return path;
}

int main(int argc, char **argv)
{
	static struct bench b;
	unsigned long cycles = 1000;
	uint64_t seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);

	b.signer = default_signer();
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--cycles") == 0 && i + 1 < argc)
			cycles = strtoul(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--signer") == 0 && i + 1 < argc)
			b.signer = argv[++i];
		else {
			fprintf(stderr, "usage: %s [--cycles N] [--seed S] [--signer PATH]\n", argv[0]);
			return 64;
		}
	}
	if (cycles == 0)
		cycles = 1;
	b.random_state = seed ? seed : 1;
	signal(SIGPIPE, SIG_IGN);
	set_up(&b);
	printf("bench_signer_crash: %lu cycles, seed %llu, signer %s\n", cycles, (unsigned long long)seed,
	       b.signer);
	fflush(stdout);

	double start = seconds_now();
	for (unsigned long i = 0; i < cycles; i++)
		cycle(&b);
	double elapsed = seconds_now() - start;

	int fd;
	pid_t pid = start_signer(&b, &fd);
	check_refusals(&b, fd);
	close(fd);
	kill_signer(pid, SIGTERM);

	printf("bench_signer_crash: %lu cycles in %.2f s: %.1f cycles/s\n", cycles, elapsed,
	       (double)cycles / elapsed);
	printf(
	    "bench_signer_crash: %llu epochs, %lu signatures returned and checked, %lu refusals, %lu killed "
	    "before answering; no equivocation\n",
	    (unsigned long long)b.next_epoch, b.signatures, b.refusals, b.lost);
	remove_tree(b.dir);
	return 0;
}
