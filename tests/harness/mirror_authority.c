/*
 * mirror_authority.c: one authority with a log, and the mirror command against it
 * (mirror_authority.h).
 */
#include "tests/harness/mirror_authority.h"

#include "schema/checkpoint.h"
#include "schema/note.h"
#include "schema/snapshot.h"
#include "signer/key.h"
#include "tests/support/test_example_authority.h"
#include "tests/support/test_http.h"
#include "tests/support/test_support.h"

#include <check.h>

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define ORIGIN  "dirauth.example/mix"
#define WAIT_MS 30000

static long long monotonic_ms(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

static void format_key(const char *dir, const char *file, int cosigner, char out[NOTE_VERIFIER_KEY_MAX + 1])
{
	struct signer_key *key = test_run_key(dir, file);
	if (cosigner) {
		struct note_verifier verifier;
		ck_assert(cosignature_verifier_from_ed25519(signer_key_verifier(key)->name,
		                                            signer_key_verifier(key)->public_key,
		                                            &verifier) == 0);
		note_verifier_format(&verifier, out);
	} else {
		note_verifier_format(signer_key_verifier(key), out);
	}
	signer_key_free(key);
}

void mirror_authority_start(struct mirror_authority *a)
{
	char dir[256], command[1024], identity[NOTE_VERIFIER_KEY_MAX + 1];
	uint64_t start = MIRROR_AUTHORITY_FIRST_EPOCH * MIRROR_AUTHORITY_EPOCH_LENGTH;

	memset(a, 0, sizeof(*a));
	test_make_tempdir(dir, sizeof(dir));
	/* nginx's workers run as nobody when the test runs as root: the tree below must be reachable. */
	chmod(dir, 0755);
	launcher_lay_out(&a->run, dir);
	snprintf(command, sizeof(command), "bash '%s' '%s/keys' >/dev/null",
	         test_source_path("scripts/example-keys.sh"), a->run.dir);
	ck_assert_msg(system(command) == 0, "example-keys.sh failed");
	test_write_authority_certificate(a->run.dir, start - 86400, start + 30 * 86400);
	format_key(a->run.dir, "log.key", 0, a->log_key);
	format_key(a->run.dir, "cosignature.key", 1, a->witness_key);
	format_key(a->run.dir, "authority1-identity.key", 0, identity);

	a->now = start + 1;
	launcher_set_clock(&a->run, a->now);
	struct run_directory_signer signer = {"authority1.dirauth.example", "authority1.key",
	                                      "authority1.cert", 1, 0};
	const struct launcher_namespace mix = {"mix", ", lifecycle: true"};
	launcher_write_configs(&a->run, &signer, MIRROR_AUTHORITY_EPOCH_LENGTH, 3, &mix, 1,
	                       LAUNCHER_EXAMPLE_PROVIDERS);

	struct buffer text;
	buffer_init(&text);
	ck_assert(buffer_appendf(&text,
	                         "dirauth trust v1\n"
	                         "namespace mix " ORIGIN "\n"
	                         "authority %s\n"
	                         "threshold 1\n",
	                         identity) == 0);
	snprintf(a->bundle_path, sizeof(a->bundle_path), "%s/trust-bundle.txt", a->run.dir);
	test_write_file(a->bundle_path, text.data, text.len, 0644);
	buffer_free(&text);
	launcher_start(&a->run);
}

void mirror_authority_publish(struct mirror_authority *a, uint64_t epoch)
{
	char latest[128], proof[160];

	a->now = epoch * MIRROR_AUTHORITY_EPOCH_LENGTH + 1;
	launcher_set_clock(&a->run, a->now);
	snprintf(latest, sizeof(latest), "%s/v1/mix/snapshots/latest", a->run.url);
	snprintf(proof, sizeof(proof), "%s/v1/mix/log/proof/%" PRIu64, a->run.url, epoch);
	for (long long deadline = monotonic_ms() + WAIT_MS; monotonic_ms() < deadline;) {
		struct test_http_response response;
		int published = 0;
		if (test_http_get(latest, &response) == CURLE_OK && response.status == 200) {
			struct note *note = NULL;
			struct snapshot_header header;
			if (note_parse(response.body.data, response.body.len, &note) == 0 &&
			    snapshot_header_parse(note->text, note->text_len, &header) == 0)
				published = header.epoch >= epoch;
			note_free(note);
		}
		buffer_free(&response.body);
		if (published && test_http_get(proof, &response) == CURLE_OK && response.status == 200) {
			buffer_free(&response.body);
			return;
		}
		if (published)
			buffer_free(&response.body);
		test_sleep_ms(20);
	}
	ck_abort_msg("no snapshot of epoch %" PRIu64 " in the log; see %s", epoch, a->run.log_path);
}

void mirror_authority_stop(struct mirror_authority *a)
{
	launcher_stop(&a->run);
	test_remove_tree(a->run.dir);
}

pid_t mirror_authority_spawn_mirror(const struct mirror_authority *a, const char *server_url, const char *out,
                                    const char *pause_at, const char *log_path)
{
	char now[32];
	snprintf(now, sizeof(now), "%" PRIu64, a->now);
	char *argv[] = {(char *)test_binary_path("ctl/dirauthctl"),
	                "mirror",
	                "--trust",
	                (char *)a->bundle_path,
	                "--namespace",
	                "mix",
	                "--server",
	                (char *)server_url,
	                "--out",
	                (char *)out,
	                "--log-key",
	                (char *)a->log_key,
	                "--witness-key",
	                (char *)a->witness_key,
	                "--witness-threshold",
	                "1",
	                "--now",
	                now,
	                NULL};
	if (pause_at != NULL) {
		setenv("DIRAUTH_PAUSE_AT", pause_at, 1);
		setenv("DIRAUTH_PAUSE_MS", "600000", 1);
	}
	pid_t pid = test_spawn(argv, log_path);
	unsetenv("DIRAUTH_PAUSE_AT");
	unsetenv("DIRAUTH_PAUSE_MS");
	return pid;
}

int mirror_authority_run_mirror(const struct mirror_authority *a, const char *server_url, const char *out,
                                const char *log_path)
{
	return test_wait_exit(mirror_authority_spawn_mirror(a, server_url, out, NULL, log_path), 60000);
}

void mirror_authority_register(const struct mirror_authority *a, unsigned count)
{
	char key[LAUNCHER_PATH_MAX + 32], service[LAUNCHER_PATH_MAX + 32], now[32];
	struct test_outcome outcome;
	struct buffer text;
	snprintf(key, sizeof(key), "%s/keys/provider-a.key", a->run.dir);
	snprintf(now, sizeof(now), "%" PRIu64, a->now);
	buffer_init(&text);
	for (unsigned i = 1; i <= count; i++) {
		buffer_reset(&text);
		ck_assert(buffer_appendf(&text,
		                         "namespace: mix\n"
		                         "service: 5a%062x\n"
		                         "class: mix-gateway\n"
		                         "validity_seconds: 86400\n"
		                         "endpoints:\n"
		                         "  - id: 5b%062x\n"
		                         "    transport: quic\n"
		                         "    address: 192.0.2.%u:443\n"
		                         "    region: eu-west\n"
		                         "    capacity: medium\n"
		                         "    profile: modern\n",
		                         i, i, 10 + i) == 0);
		snprintf(service, sizeof(service), "%s/service-%u.yaml", a->run.dir, i);
		test_write_file(service, text.data, text.len, 0644);
		const char *args[] = {"register", "--key",    key,     "--service", service,
		                      "--server", a->run.url, "--now", now,         NULL};
		test_run_program(test_binary_path("ctl/dirauthctl"), args, a->run.dir, &outcome);
		ck_assert_msg(outcome.status == 0, "register: %s", outcome.err);
		test_outcome_free(&outcome);
	}
	buffer_free(&text);
}

void mirror_authority_body_sha256(const struct mirror_authority *a, uint64_t epoch, char hex[65])
{
	char url[160];
	struct test_http_response response;
	struct note *note = NULL;
	struct snapshot_header header;
	snprintf(url, sizeof(url), "%s/v1/mix/snapshots/%" PRIu64, a->run.url, epoch);
	ck_assert(test_http_get(url, &response) == CURLE_OK && response.status == 200);
	ck_assert(note_parse(response.body.data, response.body.len, &note) == 0);
	ck_assert(snapshot_header_parse(note->text, note->text_len, &header) == 0);
	note_free(note);
	buffer_free(&response.body);
	for (size_t i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", header.body_sha256[i]);
}

void mirror_authority_wait_for_diff(const struct mirror_authority *a, uint64_t epoch, const char *base_hex,
                                    struct buffer *out)
{
	char url[256];
	snprintf(url, sizeof(url), "%s/v1/mix/snapshots/%" PRIu64 "/diff/%s", a->run.url, epoch, base_hex);
	for (long long deadline = monotonic_ms() + WAIT_MS; monotonic_ms() < deadline;) {
		struct test_http_response response;
		if (test_http_get(url, &response) == CURLE_OK && response.status == 200) {
			ck_assert(buffer_append(out, response.body.data, response.body.len) == 0);
			buffer_free(&response.body);
			return;
		}
		buffer_free(&response.body);
		test_sleep_ms(20);
	}
	ck_abort_msg("no diff to epoch %" PRIu64 " from %s; see %s", epoch, base_hex, a->run.log_path);
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void list_into(const char *root, const char *relative, struct buffer *out)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s%s%s", root, relative[0] ? "/" : "", relative);
	DIR *directory = opendir(path);
	ck_assert_msg(directory != NULL, "cannot list %s", path);
	char *names[4096];
	size_t count = 0;
	struct dirent *entry;
	while ((entry = readdir(directory)) != NULL) {
		if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
			continue;
		ck_assert(count < sizeof(names) / sizeof(names[0]));
		names[count++] = strdup(entry->d_name);
	}
	closedir(directory);
	qsort(names, count, sizeof(names[0]), compare_names);
	for (size_t i = 0; i < count; i++) {
		char child[2048], child_path[4096];
		struct stat info;
		snprintf(child, sizeof(child), "%.1000s%s%.255s", relative, relative[0] ? "/" : "", names[i]);
		snprintf(child_path, sizeof(child_path), "%.1500s/%.2000s", root, child);
		ck_assert(lstat(child_path, &info) == 0);
		if (S_ISDIR(info.st_mode)) {
			list_into(root, child, out);
		} else {
			size_t len = 0;
			uint8_t *bytes = test_read_file(child_path, &len);
			ck_assert(buffer_appendf(out, "%s %zu\n", child, len) == 0);
			ck_assert(buffer_append(out, bytes, len) == 0);
			free(bytes);
		}
		free(names[i]);
	}
}

void mirror_tree_listing(const char *dir, struct buffer *out)
{
	buffer_reset(out);
	list_into(dir, "", out);
}
