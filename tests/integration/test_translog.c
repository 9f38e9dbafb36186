/*
 * test_translog.c: the transparency log survives SIGKILL at every step between a publication
 * and its checkpoint, with no gap and no fork.
 *
 * The real dirauth-signer binary (the example signing, log and cosignature keys, its own ledger)
 * and the real dirauthd binary run on one file clock; dirauthd publishes each epoch and is killed
 * with SIGKILL right after a publication, before anything is appended to the log. The log is then
 * caught up by this test's own binary run as a separate process ("--catch-up CONFIG": what the
 * scheduler's hook will do inside dirauthd, translog_catch_up over the same store and signer),
 * held at one of the pause points of translog_catch_up (DIRAUTH_PAUSE_AT) and killed with SIGKILL
 * there: after the signatures and before any append, after the first of two appends, after every
 * append and before the checkpoint is stored, after the checkpoint. Run again, it completes; and
 * every time the log holds exactly the published headers in epoch order, its checkpoint verifies
 * against the log key and the cosigner, its root is schema/merkle's over the headers, and it is
 * consistent with every checkpoint before it. At the end dirauthd serves that checkpoint, and its
 * root rebuilt from the tiles dirauthd serves.
 */
#include "test_support.h"

#include "schema/buffer.h"
#include "schema/certificate.h"
#include "schema/checkpoint.h"
#include "schema/error.h"
#include "schema/merkle.h"
#include "schema/note.h"
#include "schema/snapshot.h"
#include "server/config/config.h"
#include "server/signing/signer_client.h"
#include "server/store/log.h"
#include "server/store/store.h"
#include "server/translog/translog.h"
#include "signer/key.h"
#include "tlog/policy.h"
#include "tlog/tile.h"
#include "tlog/tree.h"

#include <check.h>
#include <curl/curl.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define EPOCH_LENGTH 60
#define START_TIME   1800000000ULL /* a multiple of EPOCH_LENGTH */
#define ORIGIN       "dirauth.example/mix"

struct authority {
	char dir[256];
	char config_path[512];
	char clock_path[512];
	char log_path[512];
	char signer_config_path[512];
	char signer_log_path[512];
	char socket_path[512];
	char url[64];
	unsigned port;
	pid_t pid;
	pid_t signer_pid;
	uint64_t now;
	struct note_verifier log_key, cosigner;
};

/* ---- the catch-up process ---- */

/* What the scheduler's hook does: one translog_catch_up of mix over dirauthd's store and signer. */
static int run_catch_up(const char *config_path)
{
	struct config *config = NULL;
	struct settings_error error;
	struct store *store = NULL;
	struct signer_client *signer = NULL;
	struct translog_outcome outcome;
	if (config_load(config_path, &config, &error) != 0) {
		fprintf(stderr, "catch-up: %s:%zu: %s\n", config_path, error.line, error.message);
		return 2;
	}
	struct store_options options = {.path = config->data_dir};
	int rc = store_open(&options, &store);
	if (rc == 0)
		rc = signer_client_open(config->signer_socket, 5000, &signer);
	if (rc == 0)
		rc = translog_catch_up(store, config, signer, 0, &outcome);
	fprintf(stderr, "catch-up: %s appended %llu, size %llu, checkpoint %llu %s\n", dirauth_strerror(rc),
	        (unsigned long long)outcome.appended, (unsigned long long)outcome.tree_size,
	        (unsigned long long)outcome.checkpoint_size, outcome.detail);
	signer_client_close(signer);
	store_close(store);
	config_free(config);
	return rc ? 1 : 0;
}

/* ---- the authority ---- */

struct http_response {
	long status;
	struct buffer body;
};

static size_t http_collect(char *data, size_t size, size_t count, void *context)
{
	return buffer_append(context, data, size * count) == 0 ? size * count : 0;
}

static CURLcode http_get(const char *url, struct http_response *response)
{
	CURL *curl = curl_easy_init();
	ck_assert(curl != NULL);
	buffer_init(&response->body);
	response->status = 0;
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, http_collect);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, &response->body);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT, 30L);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	CURLcode rc = curl_easy_perform(curl);
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response->status);
	curl_easy_cleanup(curl);
	return rc;
}

static void set_clock(struct authority *a, uint64_t now)
{
	char text[32], temp[600];
	int n = snprintf(text, sizeof(text), "%llu\n", (unsigned long long)now);
	snprintf(temp, sizeof(temp), "%s.tmp", a->clock_path);
	test_write_file(temp, text, (size_t)n, 0644);
	ck_assert(rename(temp, a->clock_path) == 0);
	a->now = now;
}

static struct signer_key *load_key(const char *dir, const char *file)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/keys/%s", dir, file);
	struct signer_key *key = NULL;
	int rc = signer_key_load(path, &key);
	ck_assert_msg(rc == 0, "load %s: %s", path, dirauth_strerror(rc));
	return key;
}

/* Keys, certificate, both configurations and the clock in a fresh directory. */
static void authority_prepare(struct authority *a)
{
	memset(a, 0, sizeof(*a));
	test_make_tempdir(a->dir, sizeof(a->dir));
	char command[1024];
	snprintf(command, sizeof(command), "bash '%s' '%s/keys' >/dev/null",
	         test_source_path("scripts/example-keys.sh"), a->dir);
	ck_assert_msg(system(command) == 0, "example-keys.sh failed");

	struct signer_key *authority = load_key(a->dir, "authority1.key");
	struct signer_key *identity = load_key(a->dir, "authority1-identity.key");
	struct certificate certificate;
	memset(&certificate, 0, sizeof(certificate));
	strcpy(certificate.authority, "authority1.dirauth.example");
	certificate.identity = *signer_key_verifier(identity);
	certificate.signing_key = *signer_key_verifier(authority);
	certificate.valid_after = START_TIME - 86400;
	certificate.valid_until = START_TIME + 30 * 86400;
	struct buffer text, note;
	struct note_signature signature;
	buffer_init(&text);
	buffer_init(&note);
	ck_assert(certificate_encode(&certificate, &text) == 0);
	ck_assert(signer_key_sign(identity, text.data, text.len, &signature) == 0);
	ck_assert(note_format(text.data, text.len, &signature, 1, &note) == 0);
	char path[512];
	snprintf(path, sizeof(path), "%s/keys/authority1.cert", a->dir);
	test_write_file(path, note.data, note.len, 0644);
	buffer_free(&text);
	buffer_free(&note);
	signer_key_free(authority);
	signer_key_free(identity);
	struct signer_key *log = load_key(a->dir, "log.key");
	a->log_key = *signer_key_verifier(log);
	signer_key_free(log);
	struct signer_key *cosigner = load_key(a->dir, "cosignature.key");
	ck_assert(cosignature_verifier_from_ed25519(signer_key_verifier(cosigner)->name,
	                                            signer_key_verifier(cosigner)->public_key,
	                                            &a->cosigner) == 0);
	signer_key_free(cosigner);

	a->port = test_free_port();
	snprintf(a->url, sizeof(a->url), "http://127.0.0.1:%u", a->port);
	snprintf(a->clock_path, sizeof(a->clock_path), "%s/clock", a->dir);
	snprintf(a->log_path, sizeof(a->log_path), "%s/dirauthd.log", a->dir);
	snprintf(a->config_path, sizeof(a->config_path), "%s/dirauthd.yaml", a->dir);
	snprintf(a->signer_config_path, sizeof(a->signer_config_path), "%s/dirauth-signer.yaml", a->dir);
	snprintf(a->signer_log_path, sizeof(a->signer_log_path), "%s/dirauth-signer.log", a->dir);
	snprintf(a->socket_path, sizeof(a->socket_path), "%s/signer.sock", a->dir);
	set_clock(a, START_TIME + 1);

	struct buffer config;
	buffer_init(&config);
	ck_assert(buffer_appendf(&config,
	                         "authority: authority1.dirauth.example\n"
	                         "socket: signer.sock\n"
	                         "allowed_uid: %u\n"
	                         "state_dir: signer-state\n"
	                         "signing_key: keys/authority1.key\n"
	                         "certificates: [keys/authority1.cert]\n"
	                         "log_key: keys/log.key\n"
	                         "cosignature_key: keys/cosignature.key\n"
	                         "audit_log: signer-audit.log\n"
	                         "clock: { source: file, path: clock }\n"
	                         "namespaces:\n"
	                         "  - { name: mix, origin: " ORIGIN ", genesis: 0, "
	                         "length_seconds: %d, validity_epochs: 3 }\n",
	                         (unsigned)getuid(), EPOCH_LENGTH) == 0);
	test_write_file(a->signer_config_path, config.data, config.len, 0644);
	buffer_reset(&config);
	ck_assert(
	    buffer_appendf(
	        &config,
	        "authority:\n"
	        "  name: authority1.dirauth.example\n"
	        "  signer_socket: signer.sock\n"
	        "listen: { address: 127.0.0.1, port: %u }\n"
	        "data_dir: data\n"
	        "epoch: { length_seconds: %d, genesis: 0, validity_epochs: 3 }\n"
	        "clock: { source: file, path: clock }\n"
	        "namespaces:\n"
	        "  - { name: mix, origin: " ORIGIN " }\n"
	        "providers:\n"
	        "  - key: \"provider-a.example+fa6ff7cc+AZCCDZKKDwoh4asmg/XPjHQ3bGSCZXnr01BWPcEqXjZr\"\n"
	        "    namespaces: [mix]\n"
	        "    classes: [mix-gateway]\n",
	        a->port, EPOCH_LENGTH) == 0);
	test_write_file(a->config_path, config.data, config.len, 0644);
	buffer_free(&config);
}

static void signer_start(struct authority *a)
{
	char binary[4096];
	snprintf(binary, sizeof(binary), "%s", test_binary_path("signer/dirauth-signer"));
	char *argv[] = {binary, "--config", a->signer_config_path, NULL};
	a->signer_pid = test_spawn(argv, a->signer_log_path);
	for (int attempt = 0; attempt < 1000; attempt++) {
		int fd = socket(AF_UNIX, SOCK_STREAM, 0);
		ck_assert(fd >= 0);
		struct sockaddr_un address;
		memset(&address, 0, sizeof(address));
		address.sun_family = AF_UNIX;
		memcpy(address.sun_path, a->socket_path, strlen(a->socket_path) + 1);
		int connected = connect(fd, (struct sockaddr *)&address, sizeof(address)) == 0;
		close(fd);
		if (connected)
			return;
		ck_assert_msg(waitpid(a->signer_pid, NULL, WNOHANG) == 0, "dirauth-signer exited; see %s",
		              a->signer_log_path);
		test_sleep_ms(20);
	}
	ck_abort_msg("dirauth-signer did not listen; see %s", a->signer_log_path);
}

static void dirauthd_start(struct authority *a)
{
	char binary[4096], url[128];
	snprintf(binary, sizeof(binary), "%s", test_binary_path("server/dirauthd"));
	char *argv[] = {binary, "--config", a->config_path, NULL};
	a->pid = test_spawn(argv, a->log_path);
	snprintf(url, sizeof(url), "%s/v1/health", a->url);
	for (int attempt = 0; attempt < 1000; attempt++) {
		struct http_response response;
		CURLcode rc = http_get(url, &response);
		buffer_free(&response.body);
		if (rc == CURLE_OK && response.status == 200)
			return;
		ck_assert_msg(waitpid(a->pid, NULL, WNOHANG) == 0, "dirauthd exited; see %s", a->log_path);
		test_sleep_ms(20);
	}
	ck_abort_msg("dirauthd did not answer; see %s", a->log_path);
}

/* Waits until dirauthd has published epoch. */
static void wait_for_epoch(const struct authority *a, uint64_t epoch)
{
	char url[128];
	snprintf(url, sizeof(url), "%s/v1/mix/snapshots/%llu", a->url, (unsigned long long)epoch);
	for (int attempt = 0; attempt < 1500; attempt++) {
		struct http_response response;
		CURLcode rc = http_get(url, &response);
		buffer_free(&response.body);
		if (rc == CURLE_OK && response.status == 200)
			return;
		test_sleep_ms(20);
	}
	ck_abort_msg("epoch %llu was never published; see %s", (unsigned long long)epoch, a->log_path);
}

/* dirauthd publishes the next count epochs and is killed with SIGKILL right after the last. */
static void publish_and_kill(struct authority *a, unsigned count)
{
	dirauthd_start(a);
	for (unsigned i = 0; i < count; i++) {
		uint64_t epoch = a->now / EPOCH_LENGTH + 1;
		set_clock(a, epoch * EPOCH_LENGTH + 1);
		wait_for_epoch(a, epoch);
	}
	test_kill(a->pid, SIGKILL);
	a->pid = 0;
}

/* Runs the catch-up process; with pause_at, waits for it to stop there and kills it with
 * SIGKILL. Returns its exit status (-1 when killed). */
static int catch_up(struct authority *a, const char *pause_at, unsigned run)
{
	char self[4096], log[640];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	ck_assert(n > 0);
	self[n] = '\0';
	snprintf(log, sizeof(log), "%s/catch-up-%u.log", a->dir, run);
	char *argv[] = {self, "--catch-up", a->config_path, NULL};
	if (pause_at) {
		setenv("DIRAUTH_PAUSE_AT", pause_at, 1);
		setenv("DIRAUTH_PAUSE_MS", "60000", 1);
	}
	pid_t pid = test_spawn(argv, log);
	unsetenv("DIRAUTH_PAUSE_AT");
	unsetenv("DIRAUTH_PAUSE_MS");
	if (!pause_at) {
		int status = test_wait_exit(pid, 60000);
		if (status != 0) {
			size_t len;
			char *text = (char *)test_read_file(log, &len);
			ck_abort_msg("catch-up exited %d: %s", status, text);
		}
		return status;
	}
	char paused[128];
	snprintf(paused, sizeof(paused), "paused at %s", pause_at);
	for (int attempt = 0; attempt < 1500; attempt++) {
		size_t len = 0;
		int found = 0;
		if (access(log, F_OK) == 0) {
			char *text = (char *)test_read_file(log, &len);
			found = strstr(text, paused) != NULL;
			free(text);
		}
		if (found) {
			test_kill(pid, SIGKILL);
			return -1;
		}
		ck_assert_msg(waitpid(pid, NULL, WNOHANG) == 0, "catch-up exited before %s; see %s", pause_at,
		              log);
		test_sleep_ms(20);
	}
	ck_abort_msg("catch-up never paused at %s; see %s", pause_at, log);
	return -1;
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

/* The log in the store is the published headers, in order, under a verified checkpoint of all of
 * them (when complete) consistent with previous (size 0: none). Returns the checkpoint. */
static struct checkpoint check_log(const struct authority *a, int complete, const struct checkpoint *previous,
                                   uint64_t *size)
{
	char data[600];
	snprintf(data, sizeof(data), "%s/data", a->dir);
	struct store_options options = {.path = data};
	struct store *store = NULL;
	ck_assert_int_eq(store_open(&options, &store), 0);
	uint64_t epochs[64];
	size_t count = published_epochs(store, epochs, 64);
	struct store_log_state state;
	ck_assert_int_eq(store_log_state(store, "mix", &state), 0);
	ck_assert_uint_le(state.size, count);
	if (complete)
		ck_assert_uint_eq(state.size, count);
	if (size)
		*size = state.size;

	/* No gap, no fork: leaf i is the i-th published header's text. */
	merkle_hash leaves[64];
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
	struct store_log_reader reader;
	ck_assert_int_eq(store_log_reader_open(store, "mix", &reader), 0);
	struct tlog_hash_reader hashes = {store_log_read_hashes, &reader};
	merkle_hash root, expected;
	ck_assert_int_eq(tlog_tree_root(&hashes, state.size, root), 0);
	ck_assert_int_eq(merkle_root(leaves, state.size, expected), 0);
	ck_assert_mem_eq(root, expected, MERKLE_HASH_SIZE);

	struct checkpoint checkpoint;
	memset(&checkpoint, 0, sizeof(checkpoint));
	if (state.has_checkpoint) {
		struct note *note = NULL;
		struct tlog_policy policy = {ORIGIN, &a->log_key, &a->cosigner, 1, 1};
		ck_assert_int_eq(store_log_checkpoint(store, "mix", &header, NULL), 0);
		ck_assert_int_eq(note_parse(header.data, header.len, &note), 0);
		ck_assert_int_eq(tlog_checkpoint_verify(note, &policy, &checkpoint, NULL, NULL), 0);
		note_free(note);
		ck_assert_int_eq(merkle_root(leaves, checkpoint.tree_size, expected), 0);
		ck_assert_mem_eq(checkpoint.root, expected, MERKLE_HASH_SIZE);
		if (complete)
			ck_assert_uint_eq(checkpoint.tree_size, count);
		if (previous && previous->tree_size > 0) {
			merkle_hash proof[MERKLE_MAX_PROOF];
			size_t proof_count = 0;
			ck_assert_uint_ge(checkpoint.tree_size, previous->tree_size);
			ck_assert_int_eq(merkle_consistency_proof(leaves, checkpoint.tree_size,
			                                          previous->tree_size, proof, &proof_count),
			                 0);
			ck_assert_int_eq(merkle_consistency_verify(previous->tree_size, checkpoint.tree_size,
			                                           previous->root, checkpoint.root, proof,
			                                           proof_count),
			                 0);
		}
	} else {
		ck_assert(!complete);
	}
	buffer_free(&leaf);
	buffer_free(&header);
	store_close(store);
	return checkpoint;
}

/* A tlog_fetch_tile from dirauthd over HTTP. */
static int fetch_tile(void *context, const struct tlog_tile *tile, uint8_t out[TLOG_TILE_BYTES], size_t *len)
{
	const struct authority *a = context;
	char path[TLOG_TILE_PATH_MAX + 1], url[256];
	ck_assert_int_eq(tlog_tile_path_format(tile, path), 0);
	snprintf(url, sizeof(url), "%s/v1/mix/log/%s", a->url, path);
	struct http_response response;
	int rc = http_get(url, &response) == CURLE_OK && response.status == 200 &&
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

START_TEST(test_sigkill_at_every_step_of_the_log)
{
	static const char *const steps[] = {"translog-signed", "translog-appending", "translog-appended",
	                                    "translog-checkpointed"};
	struct authority a;
	struct checkpoint previous;
	memset(&previous, 0, sizeof(previous));
	authority_prepare(&a);
	signer_start(&a);
	unsigned run = 0;

	for (size_t step = 0; step < sizeof(steps) / sizeof(steps[0]); step++) {
		/* Published, killed before the log heard of it: the log lacks two headers or more. */
		uint64_t size = 0, before = previous.tree_size;
		publish_and_kill(&a, 2);
		struct checkpoint now = check_log(&a, 0, &previous, &size);
		ck_assert_uint_eq(size, before);
		/* The catch-up killed at the step; what it left is still the published headers, with
		 * as many appended as the step says. */
		ck_assert_int_eq(catch_up(&a, steps[step], run++), -1);
		now = check_log(&a, 0, &previous, &size);
		if (step == 0)
			ck_assert_uint_eq(size, before);
		else if (step == 1)
			ck_assert_uint_eq(size, before + 1);
		else
			ck_assert_uint_ge(size, before + 2);
		ck_assert_uint_eq(now.tree_size, step == 3 ? size : before);
		/* Run again, it completes, to the same tree the signer already signed (if it did). */
		ck_assert_int_eq(catch_up(&a, NULL, run++), 0);
		previous = check_log(&a, 1, &previous, NULL);
		ck_assert_uint_ge(previous.tree_size, before + 2);
	}

	/* dirauthd serves that checkpoint, and its root rebuilt from the tiles it serves. */
	dirauthd_start(&a);
	char url[128];
	snprintf(url, sizeof(url), "%s/v1/mix/log/checkpoint", a.url);
	struct http_response response;
	ck_assert_int_eq(http_get(url, &response), CURLE_OK);
	ck_assert_int_eq(response.status, 200);
	struct note *note = NULL;
	struct checkpoint served;
	struct tlog_policy policy = {ORIGIN, &a.log_key, &a.cosigner, 1, 1};
	ck_assert_int_eq(note_parse(response.body.data, response.body.len, &note), 0);
	ck_assert_int_eq(tlog_checkpoint_verify(note, &policy, &served, NULL, NULL), 0);
	note_free(note);
	buffer_free(&response.body);
	ck_assert_uint_eq(served.tree_size, previous.tree_size);
	ck_assert_mem_eq(served.root, previous.root, MERKLE_HASH_SIZE);
	struct tlog_tile_source *source = calloc(1, sizeof(*source));
	source->fetch = fetch_tile;
	source->context = &a;
	source->tree_size = served.tree_size;
	struct tlog_hash_reader reader = {tlog_tile_source_read, source};
	merkle_hash root;
	ck_assert_int_eq(tlog_tree_root(&reader, served.tree_size, root), 0);
	ck_assert_mem_eq(root, served.root, MERKLE_HASH_SIZE);
	free(source);
	test_kill(a.pid, SIGTERM);
	test_kill(a.signer_pid, SIGTERM);
	test_remove_tree(a.dir);
}
END_TEST

static Suite *translog_suite(void)
{
	Suite *suite = suite_create("translog");
	TCase *tc = tcase_create("crash");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_sigkill_at_every_step_of_the_log);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--catch-up") == 0)
		return run_catch_up(argv[2]);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	SRunner *runner = srunner_create(translog_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	curl_global_cleanup();
	return failures ? 1 : 0;
}
