/*
 * test_dirauthctl_authorities.c: dirauthctl against several real authorities, as a provider
 * and a mirror use it.
 *
 * Four independent authorities run, each its own dirauth-signer and dirauthd (own identity key,
 * own signing key certified by it here, own LMDB, own file clock) on loopback:
 *   a, b  enrol the provider;
 *   c     does not (it refuses the registration: 403 unknown_provider);
 *   d     enrols the provider but is pinned by no trust bundle (its receipts and snapshots are
 *         well formed and signed, by an identity nobody trusts).
 * One trust bundle pins a, b and c with threshold 2 (the provider's), another pins a and b with
 * threshold 1 (a mirror's: each authority here signs alone). What is checked:
 *   - register to a, b, c: two accepted, one refused; exit 0, one line per server;
 *   - register to a, d and a dead port: one accepted, one invalid receipt, one unreachable; exit
 *     75 with the count on stderr, the lines on stdout;
 *   - register to a alone prints exactly what it always did;
 *   - fetch from d, a dead port, then a: the two are skipped with their reasons, a's snapshot is
 *     stored; from d and the dead port only: nothing stored, 65;
 *   - fetch at a time past valid-until: stale, 75, nothing written; a stale snapshot from b (kept
 *     at an older epoch) is never installed over the fresher one held from a, alone (75) or
 *     listed before a (skipped as stale, a's used).
 */
#include "test_signed_notes.h"
#include "test_http.h"
#include "test_support.h"
#include "tests/harness/launcher.h"

#include "base/buffer.h"
#include "schema/certificate.h"
#include "base/error.h"
#include "schema/note.h"
#include "schema/snapshot.h"
#include "signer/key.h"

#include <check.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define EPOCH_LENGTH    60
#define VALIDITY_EPOCHS 3
#define START_TIME      1800000000ULL /* a multiple of EPOCH_LENGTH */
#define START_EPOCH     (START_TIME / EPOCH_LENGTH)

enum { A, B, C, D, AUTHORITY_COUNT };

struct authority {
	struct launcher run;
	char name[64];
	char identity_verifier[NOTE_VERIFIER_KEY_MAX + 1];
};

static struct authority authorities[AUTHORITY_COUNT];
static char work[256];
static char provider_key_path[512];
static char provider_verifier[NOTE_VERIFIER_KEY_MAX + 1];
static char bundle_k2[512]; /* a, b, c; threshold 2 */
static char bundle_k1[512]; /* a, b; threshold 1 */
static char dead_url[64];   /* a port nothing listens on */

static void save_key(const struct signer_key *key, const char *dir, const char *file)
{
	char path[600];
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	ck_assert_int_eq(signer_key_save(key, path), 0);
}

/* Keys, certificate, signer and dirauthd configs and clock of one authority; enrols_provider
 * says whether its config lists the provider. */
static void authority_prepare(struct authority *a, const char *name, int enrols_provider)
{
	struct signer_key *identity = NULL, *signing = NULL;
	char keys[400], certificate_path[500];

	memset(a, 0, sizeof(*a));
	snprintf(a->name, sizeof(a->name), "%s", name);
	char dir[330];
	snprintf(dir, sizeof(dir), "%s/%s", work, name);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	launcher_lay_out(&a->run, dir);
	snprintf(keys, sizeof(keys), "%s/keys", a->run.dir);
	ck_assert_int_eq(mkdir(keys, 0700), 0);
	ck_assert_int_eq(signer_key_generate(name, &identity), 0);
	ck_assert_int_eq(signer_key_generate(name, &signing), 0);
	save_key(signing, keys, "signing.key");
	note_verifier_format(signer_key_verifier(identity), a->identity_verifier);
	snprintf(certificate_path, sizeof(certificate_path), "%s/signing.cert", keys);
	/* The identity key certifies the signing key for a month around the test's time. */
	ck_assert_int_eq(test_certificate_write(identity, name, signer_key_verifier(signing),
	                                        START_TIME - 86400, START_TIME + 30 * 86400,
	                                        certificate_path),
	                 0);
	signer_key_free(identity);
	signer_key_free(signing);

	launcher_set_clock(&a->run, START_TIME);

	struct run_directory_signer signer = {name, "signing.key", "signing.cert", 0, 0};
	/* A provider list is required; c's names a provider that is not the test's. */
	const struct launcher_namespace mix = {"mix", NULL};
	char providers[512];
	snprintf(providers, sizeof providers,
	         "providers:\n  - { key: \"%s\", namespaces: [mix], classes: [mix-gateway] }\n",
	         enrols_provider ? provider_verifier : a->identity_verifier);
	launcher_write_configs(&a->run, &signer, EPOCH_LENGTH, VALIDITY_EPOCHS, &mix, 1, providers);
}

/* Waits until a's latest snapshot of mix is at least epoch; returns its header. */
static void wait_for_snapshot(const struct authority *a, uint64_t epoch, struct snapshot_header *header)
{
	char url[128];
	snprintf(url, sizeof(url), "%s/v1/mix/snapshots/latest", a->run.url);
	for (int attempt = 0; attempt < 1000; attempt++) {
		struct test_http_response response;
		if (test_http_get(url, &response) == CURLE_OK && response.status == 200) {
			struct note *parsed = NULL;
			ck_assert(note_parse(response.body.data, response.body.len, &parsed) == 0);
			ck_assert(snapshot_header_parse(parsed->text, parsed->text_len, header) == 0);
			note_free(parsed);
			buffer_free(&response.body);
			if (header->epoch >= epoch)
				return;
		} else {
			buffer_free(&response.body);
		}
		test_sleep_ms(20);
	}
	ck_abort_msg("no snapshot for epoch %llu; see %s", (unsigned long long)epoch, a->run.log_path);
}

static void write_bundle(const char *path, const int *members, size_t member_count, size_t threshold)
{
	struct buffer bundle;
	buffer_init(&bundle);
	ck_assert_int_eq(
	    buffer_append_string(&bundle, "dirauth trust v1\nnamespace mix dirauth.example/mix\n"), 0);
	for (size_t i = 0; i < member_count; i++)
		ck_assert_int_eq(
		    buffer_appendf(&bundle, "authority %s\n", authorities[members[i]].identity_verifier), 0);
	ck_assert_int_eq(buffer_appendf(&bundle, "threshold %zu\n", threshold), 0);
	test_write_file(path, bundle.data, bundle.len, 0644);
	buffer_free(&bundle);
}

/* A service file for the provider with an explicit sequence, so that each run supersedes. */
static const char *service_file(uint64_t sequence)
{
	static char path[600];
	char text[1024];
	int n = snprintf(text, sizeof(text),
	                 "namespace: mix\n"
	                 "service: 5a00000000000000000000000000000000000000000000000000000000000001\n"
	                 "class: mix-gateway\n"
	                 "sequence: %llu\n"
	                 "endpoints:\n"
	                 "  - id: 5a01000000000000000000000000000000000000000000000000000000000001\n"
	                 "    transport: quic\n"
	                 "    address: 192.0.2.10:443\n"
	                 "    region: eu-west\n"
	                 "    capacity: medium\n"
	                 "    profile: modern\n",
	                 (unsigned long long)sequence);
	snprintf(path, sizeof(path), "%s/service-%llu.yaml", work, (unsigned long long)sequence);
	test_write_file(path, text, (size_t)n, 0644);
	return path;
}

static void setup(void)
{
	struct signer_key *provider = NULL;
	static const int k2_members[] = {A, B, C};
	static const int k1_members[] = {A, B};

	ck_assert_int_eq(curl_global_init(CURL_GLOBAL_DEFAULT), 0);
	test_make_tempdir(work, sizeof(work));
	ck_assert_int_eq(signer_key_generate("provider.test", &provider), 0);
	note_verifier_format(signer_key_verifier(provider), provider_verifier);
	snprintf(provider_key_path, sizeof(provider_key_path), "%s/provider.key", work);
	ck_assert_int_eq(signer_key_save(provider, provider_key_path), 0);
	signer_key_free(provider);
	authority_prepare(&authorities[A], "a.dirauth.test", 1);
	authority_prepare(&authorities[B], "b.dirauth.test", 1);
	authority_prepare(&authorities[C], "c.dirauth.test", 0);
	authority_prepare(&authorities[D], "d.dirauth.test", 1);
	for (int i = 0; i < AUTHORITY_COUNT; i++)
		launcher_start(&authorities[i].run);
	snprintf(bundle_k2, sizeof(bundle_k2), "%s/bundle-k2.txt", work);
	snprintf(bundle_k1, sizeof(bundle_k1), "%s/bundle-k1.txt", work);
	write_bundle(bundle_k2, k2_members, 3, 2);
	write_bundle(bundle_k1, k1_members, 2, 1);
	snprintf(dead_url, sizeof(dead_url), "http://127.0.0.1:%u", test_free_port());
}

static void teardown(void)
{
	for (int i = 0; i < AUTHORITY_COUNT; i++)
		launcher_stop(&authorities[i].run);
	test_remove_tree(work);
	curl_global_cleanup();
}

static void run(const char *const *args, struct test_outcome *outcome)
{
	test_run_program(test_binary_path("ctl/dirauthctl"), args, work, outcome);
}

static void expect_line(const struct test_outcome *outcome, const char *line)
{
	ck_assert_msg(strstr(outcome->out, line) != NULL, "stdout lacks '%s':\n%s", line, outcome->out);
}

static size_t count_lines(const char *text)
{
	size_t lines = 0;
	for (const char *p = text; *p != '\0'; p++)
		lines += *p == '\n';
	return lines;
}

#define NOW_TEXT "1800000000"

START_TEST(test_register_with_several_authorities)
{
	struct test_outcome outcome;
	char line[1024];

	/* a and b accept, c refuses: 2 of the threshold 2. */
	{
		const char *const args[] = {"register",
		                            "--key",
		                            provider_key_path,
		                            "--service",
		                            service_file(1),
		                            "--trust",
		                            bundle_k2,
		                            "--now",
		                            NOW_TEXT,
		                            "--server",
		                            authorities[A].run.url,
		                            "--server",
		                            authorities[B].run.url,
		                            "--server",
		                            authorities[C].run.url,
		                            NULL};
		run(args, &outcome);
		ck_assert_msg(outcome.status == 0, "exit %d\n%s%s", outcome.status, outcome.out, outcome.err);
		ck_assert_uint_eq(outcome.err_len, 0);
		snprintf(line, sizeof(line),
		         "%s accepted: published by epoch %llu, receipt signed by a.dirauth.test\n",
		         authorities[A].run.url, (unsigned long long)START_EPOCH + 1);
		expect_line(&outcome, line);
		snprintf(line, sizeof(line),
		         "%s accepted: published by epoch %llu, receipt signed by b.dirauth.test\n",
		         authorities[B].run.url, (unsigned long long)START_EPOCH + 1);
		expect_line(&outcome, line);
		snprintf(line, sizeof(line),
		         "%s refused: HTTP 403: unknown_provider: The provider key 'provider.test' is not "
		         "enrolled.\n",
		         authorities[C].run.url);
		expect_line(&outcome, line);
		expect_line(
		    &outcome,
		    "accepted: service 5a00000000000000000000000000000000000000000000000000000000000001"
		    " sequence 1 by 2 of 3 authorities (a.dirauth.test, b.dirauth.test), the trust "
		    "bundle requires 2\n");
		ck_assert_uint_eq(count_lines(outcome.out), 4);
		/* The lines come in the order of the --server options. */
		ck_assert(strstr(outcome.out, authorities[A].run.url) <
		          strstr(outcome.out, authorities[B].run.url));
		ck_assert(strstr(outcome.out, authorities[B].run.url) <
		          strstr(outcome.out, authorities[C].run.url));
		test_outcome_free(&outcome);
	}
	/* a accepts, d's receipt is signed by no pinned identity, nothing listens on the dead port:
	 * 1 of 2, exit 75, what each said on stdout and the count on stderr. */
	{
		const char *const args[] = {"register",
		                            "--key",
		                            provider_key_path,
		                            "--service",
		                            service_file(2),
		                            "--trust",
		                            bundle_k2,
		                            "--now",
		                            NOW_TEXT,
		                            "--server",
		                            authorities[A].run.url,
		                            "--server",
		                            authorities[D].run.url,
		                            "--server",
		                            dead_url,
		                            NULL};
		run(args, &outcome);
		ck_assert_msg(outcome.status == 75, "exit %d\n%s%s", outcome.status, outcome.out,
		              outcome.err);
		snprintf(line, sizeof(line),
		         "%s accepted: published by epoch %llu, receipt signed by a.dirauth.test\n",
		         authorities[A].run.url, (unsigned long long)START_EPOCH + 1);
		expect_line(&outcome, line);
		snprintf(line, sizeof(line),
		         "%s invalid: receipt: signed by a key not certified by any pinned identity at ",
		         authorities[D].run.url);
		expect_line(&outcome, line);
		expect_line(&outcome, "d.dirauth.test key ");
		snprintf(line, sizeof(line), "%s unreachable: %s/v1/certificates: ", dead_url, dead_url);
		expect_line(&outcome, line);
		ck_assert_uint_eq(count_lines(outcome.out), 3);
		ck_assert_str_eq(
		    outcome.err,
		    "dirauthctl: register: accepted by 1 of the 3 authorities the trust bundle pins "
		    "(a.dirauth.test), it requires 2 (each server is listed above)\n");
		test_outcome_free(&outcome);
	}
	/* None accepts (c refuses, the port is dead): 75 as well. */
	{
		const char *const args[] = {
		    "register", "--key", provider_key_path, "--service", service_file(3),        "--trust",
		    bundle_k2,  "--now", NOW_TEXT,          "--server",  authorities[C].run.url, "--server",
		    dead_url,   NULL};
		run(args, &outcome);
		ck_assert_int_eq(outcome.status, 75);
		ck_assert_ptr_nonnull(strstr(outcome.err,
		                             "accepted by 0 of the 3 authorities the trust bundle "
		                             "pins (none), it requires 2"));
		test_outcome_free(&outcome);
	}
	/* One --server: today's single line, whatever the bundle's threshold. */
	{
		const char *const args[] = {
		    "register", "--key", provider_key_path, "--service", service_file(4),        "--trust",
		    bundle_k2,  "--now", NOW_TEXT,          "--server",  authorities[A].run.url, NULL};
		run(args, &outcome);
		ck_assert_msg(outcome.status == 0, "%s", outcome.err);
		snprintf(line, sizeof(line),
		         "accepted: service 5a00000000000000000000000000000000000000000000000000000000000001 "
		         "sequence 4, published by epoch %llu, receipt signed by a.dirauth.test\n",
		         (unsigned long long)START_EPOCH + 1);
		ck_assert_str_eq(outcome.out, line);
		ck_assert_uint_eq(outcome.err_len, 0);
		test_outcome_free(&outcome);
	}
	/* A receipt is a promise kept: b's snapshot of the promised epoch holds the registration a
	 * and b accepted (sequence 2 reached a and d only). */
	{
		struct snapshot_header header;
		launcher_set_clock(&authorities[B].run, (START_EPOCH + 1) * EPOCH_LENGTH);
		wait_for_snapshot(&authorities[B], START_EPOCH + 1, &header);
		ck_assert_uint_eq(header.record_count, 1);
	}
}
END_TEST

/* Fetches mix into mirror at now from the servers (NULL-terminated). */
static void fetch(const char *bundle, const char *mirror, uint64_t now, const char *const *servers,
                  struct test_outcome *outcome)
{
	const char *args[32];
	char now_text[32];
	size_t n = 0;

	snprintf(now_text, sizeof(now_text), "%llu", (unsigned long long)now);
	args[n++] = "fetch";
	args[n++] = "--trust";
	args[n++] = bundle;
	args[n++] = "--namespace";
	args[n++] = "mix";
	args[n++] = "--out";
	args[n++] = mirror;
	args[n++] = "--now";
	args[n++] = now_text;
	for (size_t i = 0; servers[i] != NULL; i++) {
		args[n++] = "--server";
		args[n++] = servers[i];
	}
	args[n] = NULL;
	run(args, outcome);
}

static uint8_t *read_latest(const char *mirror, size_t *len)
{
	char path[1200];
	snprintf(path, sizeof(path), "%s/mix/latest.header", mirror);
	return test_read_file(path, len);
}

static int exists(const char *mirror, const char *name)
{
	char path[1200];
	struct stat info;
	snprintf(path, sizeof(path), "%s/mix/%s", mirror, name);
	return stat(path, &info) == 0;
}

START_TEST(test_fetch_from_several_servers)
{
	const uint64_t fresh_epoch = START_EPOCH + 4;
	const uint64_t old_epoch = START_EPOCH + 1;
	struct snapshot_header header, other_header, old_header;
	struct test_outcome outcome;
	char mirror[512], line[2048], name[64];
	size_t held_len = 0, again_len = 0;
	uint8_t *held, *again;

	/* a and d publish the fresh epoch; b stays at an older one. */
	launcher_set_clock(&authorities[A].run, fresh_epoch * EPOCH_LENGTH);
	launcher_set_clock(&authorities[D].run, fresh_epoch * EPOCH_LENGTH);
	launcher_set_clock(&authorities[B].run, old_epoch * EPOCH_LENGTH);
	wait_for_snapshot(&authorities[A], fresh_epoch, &header);
	wait_for_snapshot(&authorities[D], fresh_epoch, &other_header);
	wait_for_snapshot(&authorities[B], old_epoch, &old_header);
	ck_assert_uint_eq(old_header.epoch, old_epoch);
	const uint64_t now = fresh_epoch * EPOCH_LENGTH + 10;
	/* At now, b's old epoch has passed its valid-until; a's is fresh. */
	ck_assert_uint_le(old_header.valid_until, now);
	snprintf(mirror, sizeof(mirror), "%s/mirror", work);

	/* d is signed by no pinned identity, the dead port answers nothing: both skipped, a used. */
	{
		const char *const servers[] = {authorities[D].run.url, dead_url, authorities[A].run.url,
		                               NULL};
		fetch(bundle_k1, mirror, now, servers, &outcome);
		ck_assert_msg(outcome.status == 0, "exit %d\n%s%s", outcome.status, outcome.out, outcome.err);
		ck_assert_uint_eq(outcome.err_len, 0);
		snprintf(line, sizeof(line),
		         "skipped %s: header: signed by a key not certified by any pinned identity at ",
		         authorities[D].run.url);
		expect_line(&outcome, line);
		snprintf(line, sizeof(line), "skipped %s: %s/v1/certificates: ", dead_url, dead_url);
		expect_line(&outcome, line);
		snprintf(line, sizeof(line),
		         "verified snapshot mix epoch %llu: 0 records, signed by 1 of 2 authorities "
		         "(a.dirauth.test), from %s\n",
		         (unsigned long long)fresh_epoch, authorities[A].run.url);
		expect_line(&outcome, line);
		ck_assert_uint_eq(count_lines(outcome.out), 3);
		test_outcome_free(&outcome);
	}
	held = read_latest(mirror, &held_len);
	snprintf(name, sizeof(name), "%llu.body", (unsigned long long)fresh_epoch);
	ck_assert(exists(mirror, name));

	/* Only bad servers: nothing changes, 65 (a verification failed), one line each. */
	{
		const char *const servers[] = {authorities[D].run.url, dead_url, NULL};
		char other[600];
		snprintf(other, sizeof(other), "%s/other-mirror", work);
		fetch(bundle_k1, other, now, servers, &outcome);
		ck_assert_int_eq(outcome.status, 65);
		ck_assert_uint_eq(count_lines(outcome.out), 2);
		ck_assert_str_eq(outcome.err,
		                 "dirauthctl: fetch mix: none of the 2 servers served a snapshot "
		                 "that verifies (each is listed above)\n");
		ck_assert(!exists(other, "latest.header"));
		test_outcome_free(&outcome);
	}
	/* b's snapshot is stale: alone it is reported so, 75, and the fresher one held stays. */
	{
		const char *const servers[] = {authorities[B].run.url, NULL};
		fetch(bundle_k1, mirror, now, servers, &outcome);
		ck_assert_int_eq(outcome.status, 75);
		snprintf(
		    line, sizeof(line),
		    "dirauthctl: fetch mix: header: stale: epoch %llu was valid until %llu, now is %llu\n",
		    (unsigned long long)old_epoch, (unsigned long long)old_header.valid_until,
		    (unsigned long long)now);
		ck_assert_str_eq(outcome.err, line);
		ck_assert_uint_eq(outcome.out_len, 0);
		test_outcome_free(&outcome);
		again = read_latest(mirror, &again_len);
		ck_assert_uint_eq(again_len, held_len);
		ck_assert_int_eq(memcmp(again, held, held_len), 0);
		free(again);
		snprintf(name, sizeof(name), "%llu.header", (unsigned long long)old_epoch);
		ck_assert(!exists(mirror, name));
	}
	/* Listed first, b is skipped as stale and a is used. */
	{
		const char *const servers[] = {authorities[B].run.url, authorities[A].run.url, NULL};
		fetch(bundle_k1, mirror, now, servers, &outcome);
		ck_assert_msg(outcome.status == 0, "exit %d\n%s%s", outcome.status, outcome.out, outcome.err);
		snprintf(line, sizeof(line), "skipped %s: header: stale: epoch %llu was valid until ",
		         authorities[B].run.url, (unsigned long long)old_epoch);
		expect_line(&outcome, line);
		test_outcome_free(&outcome);
		again = read_latest(mirror, &again_len);
		ck_assert_uint_eq(again_len, held_len);
		ck_assert_int_eq(memcmp(again, held, held_len), 0);
		free(again);
	}
	/* Only stale snapshots on offer: stale, 75, whatever else failed. */
	{
		const char *const servers[] = {dead_url, authorities[B].run.url, NULL};
		fetch(bundle_k1, mirror, now, servers, &outcome);
		ck_assert_int_eq(outcome.status, 75);
		ck_assert_str_eq(outcome.err, "dirauthctl: fetch mix: stale: none of the 2 servers served a "
		                              "snapshot that is valid now (each is listed above)\n");
		test_outcome_free(&outcome);
	}
	/* Past a's valid-until too, the held snapshot is never refreshed from a stale one. */
	{
		const char *const servers[] = {authorities[A].run.url, NULL};
		fetch(bundle_k1, mirror, header.valid_until, servers, &outcome);
		ck_assert_int_eq(outcome.status, 75);
		ck_assert_ptr_nonnull(strstr(outcome.err, "header: stale: epoch "));
		test_outcome_free(&outcome);
	}
	free(held);
}
END_TEST

static Suite *authorities_suite(void)
{
	Suite *suite = suite_create("dirauthctl_authorities");
	TCase *tc = tcase_create("authorities");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_register_with_several_authorities);
	tcase_add_test(tc, test_fetch_from_several_servers);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(authorities_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
