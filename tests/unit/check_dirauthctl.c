/*
 * check_dirauthctl.c: the dirauthctl program as a user runs it: arguments, stdout, the single
 * "dirauthctl: <what>: <why>" line on stderr, and the sysexits status of each outcome.
 *
 * The command modules have their own tests (check_service_file, check_fetch, check_register);
 * this one runs the built binary so that what main adds (option parsing, usage errors, output
 * and the mapping of reports to exit codes) is held to the documented interface.
 */
#include "base/error.h"
#include "schema/checkpoint.h"
#include "schema/note.h"
#include "schema/registration.h"
#include "test_support.h"

#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char directory[4096];

static void setup(void)
{
	test_make_tempdir(directory, sizeof(directory));
}

static void teardown(void)
{
	test_remove_tree(directory);
}

static const char *temp_path(const char *name)
{
	static char paths[16][4200];
	static int next;
	char *path = paths[next++ % 16];
	snprintf(path, sizeof(paths[0]), "%s/%s", directory, name);
	return path;
}

/* Runs dirauthctl with args (NULL-terminated, without argv[0]). */
static void run(const char *const *args, struct test_outcome *outcome)
{
	test_run_program(test_binary_path("ctl/dirauthctl"), args, directory, outcome);
}

/* A failure: the status, and exactly one stderr line "dirauthctl: ..." containing word. */
static void expect_failure(const char *const *args, int status, const char *word)
{
	struct test_outcome outcome;

	run(args, &outcome);
	ck_assert_msg(outcome.status == status, "exit %d, expected %d; stderr: %s", outcome.status, status,
	              outcome.err);
	ck_assert_msg(strncmp(outcome.err, "dirauthctl: ", 12) == 0, "stderr: %s", outcome.err);
	ck_assert_msg(strchr(outcome.err, '\n') == outcome.err + outcome.err_len - 1, "not one line: %s",
	              outcome.err);
	ck_assert_msg(strstr(outcome.err, word) != NULL, "stderr '%s' lacks '%s'", outcome.err, word);
	test_outcome_free(&outcome);
}

START_TEST(test_help_and_usage_errors)
{
	static const char *const help[] = {"--help", NULL};
	static const char *const keygen_help[] = {"keygen", "--help", NULL};
	static const char *const register_help[] = {"register", "--help", NULL};
	static const char *const fetch_help[] = {"fetch", "-h", NULL};
	static const char *const nothing[] = {NULL};
	static const char *const unknown_command[] = {"frobnicate", NULL};
	static const char *const unknown_option[] = {"fetch", "--colour", NULL};
	static const char *const missing_value[] = {"keygen", "--name", NULL};
	static const char *const missing_option[] = {"register", "--key", "k", "--dry-run", NULL};
	static const char *const stray_argument[] = {"keygen", "--name", "a", "--out", "b", "extra", NULL};
	static const char *const bad_namespace[] = {"fetch",    "--trust",     "t",      "--server",
	                                            "http://x", "--namespace", "Bad/NS", NULL};
	static const char *const bad_now[] = {"fetch",       "--trust", "t",     "--server",  "http://x",
	                                      "--namespace", "mix",     "--now", "yesterday", NULL};
	const char *const *helps[] = {help, keygen_help, register_help, fetch_help};
	struct test_outcome outcome;

	for (size_t i = 0; i < sizeof(helps) / sizeof(helps[0]); i++) {
		run(helps[i], &outcome);
		ck_assert_int_eq(outcome.status, 0);
		ck_assert_ptr_nonnull(strstr(outcome.out, "usage: dirauthctl"));
		ck_assert_uint_eq(outcome.err_len, 0);
		test_outcome_free(&outcome);
	}
	/* The key-certificate commands are listed (their own tests are in check_certify). */
	run(help, &outcome);
	ck_assert_ptr_nonnull(strstr(outcome.out, "\n  identity-keygen "));
	ck_assert_ptr_nonnull(strstr(outcome.out, "\n  certify "));
	ck_assert_ptr_nonnull(strstr(outcome.out, "\n  rotate "));
	ck_assert_ptr_nonnull(strstr(outcome.out, "\n  certificate show "));
	/* And the commands of an endpoint's life (check_dirauthctl_endpoint runs them). */
	ck_assert_ptr_nonnull(strstr(outcome.out, "\n  health "));
	ck_assert_ptr_nonnull(strstr(outcome.out, "\n  revoke "));
	ck_assert_ptr_nonnull(strstr(outcome.out, "\n  deregister "));
	test_outcome_free(&outcome);
	{
		static const char *const words[] = {"health", "revoke", "deregister"};
		for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
			const char *const args[] = {words[i], "--help", NULL};
			char usage[64];
			snprintf(usage, sizeof(usage), "usage: dirauthctl %s ", words[i]);
			run(args, &outcome);
			ck_assert_int_eq(outcome.status, 0);
			ck_assert_ptr_nonnull(strstr(outcome.out, usage));
			test_outcome_free(&outcome);
		}
	}
	expect_failure(nothing, 64, "missing command");
	expect_failure(unknown_command, 64, "unknown command");
	expect_failure(unknown_option, 64, "unknown option '--colour'");
	expect_failure(missing_value, 64, "needs a value");
	expect_failure(missing_option, 64, "--service is required");
	expect_failure(stray_argument, 64, "unexpected argument 'extra'");
	expect_failure(bad_namespace, 64, "not a namespace name");
	expect_failure(bad_now, 64, "--now");
	/* The fetch limits: canonical decimals within their ranges. */
	{
		static const char *const limits[][2] = {{"--clock-skew", "-1"},
		                                        {"--clock-skew", "5m"},
		                                        {"--max-validity", "0"},
		                                        {"--max-chain", "0"},
		                                        {"--max-chain", "1000001"}};
		for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
			const char *const args[] = {"fetch",      "--trust",     "t",   "--server",
			                            "http://x",   "--namespace", "mix", limits[i][0],
			                            limits[i][1], NULL};
			expect_failure(args, 64, limits[i][0]);
		}
	}
}
END_TEST

START_TEST(test_keygen_then_register_dry_run)
{
	const char *key = temp_path("provider.key");
	const char *const keygen[] = {"keygen", "--name", "provider.test", "--out", key, NULL};
	const char *const keygen_bad_name[] = {"keygen", "--name",           "has space",
	                                       "--out",  temp_path("x.key"), NULL};
	const char *const dry_run[] = {
	    "register",  "--key", key,          "--service", test_source_path("keys-example/service-a.yaml"),
	    "--dry-run", "--now", "1767225600", NULL};
	struct note_verifier verifier;
	struct registration registration;
	struct test_outcome outcome;
	struct stat info;

	run(keygen, &outcome);
	ck_assert_msg(outcome.status == 0, "%s", outcome.err);
	ck_assert_uint_gt(outcome.out_len, 1);
	ck_assert_int_eq(outcome.out[outcome.out_len - 1], '\n');
	ck_assert_int_eq(note_verifier_parse(outcome.out, outcome.out_len - 1, &verifier), 0);
	ck_assert_str_eq(verifier.name, "provider.test");
	test_outcome_free(&outcome);
	ck_assert_int_eq(stat(key, &info), 0);
	ck_assert_int_eq(info.st_mode & 0777, 0600);
	/* Never over an existing key. */
	expect_failure(keygen, 73, "already exists");
	expect_failure(keygen_bad_name, 64, "invalid key name");

	/* The verifier keys of the key: the one keygen printed, and its cosignature form (type 0x04). */
	const char *const verifiers[] = {"key-verifiers", "--key", key, NULL};
	run(verifiers, &outcome);
	ck_assert_msg(outcome.status == 0, "%s", outcome.err);
	const char *ed25519 = strstr(outcome.out, "\ned25519 "),
	           *cosignature = strstr(outcome.out, "\ncosignature ");
	ck_assert_ptr_nonnull(ed25519);
	ck_assert_ptr_nonnull(cosignature);
	struct note_verifier same, cosigner;
	ed25519 += strlen("\ned25519 ");
	cosignature += strlen("\ncosignature ");
	ck_assert_int_eq(note_verifier_parse(ed25519, strcspn(ed25519, "\n"), &same), 0);
	ck_assert_int_eq(memcmp(&same, &verifier, sizeof(same)), 0);
	ck_assert_int_eq(cosignature_verifier_parse(cosignature, strcspn(cosignature, "\n"), &cosigner), 0);
	ck_assert_str_eq(cosigner.name, "provider.test");
	ck_assert_mem_eq(cosigner.public_key, verifier.public_key, 32);
	test_outcome_free(&outcome);
	const char *const missing_key[] = {"key-verifiers", "--key", temp_path("absent.key"), NULL};
	expect_failure(missing_key, 66, "no such file");

	run(dry_run, &outcome);
	ck_assert_msg(outcome.status == 0, "%s", outcome.err);
	ck_assert_int_eq(
	    registration_parse_signed((const uint8_t *)outcome.out, outcome.out_len, &registration, NULL), 0);
	ck_assert_uint_eq(registration.issued_at, 1767225600);
	ck_assert_uint_eq(registration.sequence, 1767225600);
	ck_assert_uint_eq(registration.expires, 1767225600 + 86400);
	ck_assert_int_eq(memcmp(&registration.provider, &verifier, sizeof(verifier)), 0);
	registration_clear(&registration);
	test_outcome_free(&outcome);

	/* A key others can read is refused. */
	ck_assert_int_eq(chmod(key, 0644), 0);
	expect_failure(dry_run, 77, "chmod 600");
}
END_TEST

START_TEST(test_register_and_fetch_failures)
{
	static const char bad_service[] = "namespace: mix\nservice: 5a\n";
	static const char bad_bundle[] = "dirauth trust v1\nnamespace mix dirauth.test/mix\nthreshold one\n";
	static const char good_bundle[] =
	    "dirauth trust v1\nnamespace mix dirauth.example/mix\n"
	    "authority authority1.dirauth.example+41973d40+AR19CCkJlKVPO9KJSTKdI0q839OUciRTVDOeki/KKRZr\n"
	    "threshold 1\n";
	const char *key = temp_path("p.key");
	const char *const keygen[] = {"keygen", "--name", "p.test", "--out", key, NULL};
	const char *service = temp_path("bad.yaml");
	const char *bundle = temp_path("bad-bundle.txt");
	const char *good = temp_path("bundle.txt");
	char unreachable[64];
	struct test_outcome outcome;

	run(keygen, &outcome);
	ck_assert_int_eq(outcome.status, 0);
	test_outcome_free(&outcome);
	test_write_file(service, bad_service, strlen(bad_service), 0644);
	test_write_file(bundle, bad_bundle, strlen(bad_bundle), 0644);
	test_write_file(good, good_bundle, strlen(good_bundle), 0644);
	snprintf(unreachable, sizeof(unreachable), "http://127.0.0.1:%u", test_free_port());
	{
		const char *const args[] = {"register", "--key",     key, "--service",
		                            service,    "--dry-run", NULL};
		expect_failure(args, 65, "bad.yaml:2: service:");
	}
	{
		const char *const args[] = {"register",  "--key", key, "--service", temp_path("none.yaml"),
		                            "--dry-run", NULL};
		expect_failure(args, 66, "no such file");
	}
	{
		const char *const args[] = {"register",
		                            "--key",
		                            key,
		                            "--service",
		                            test_source_path("keys-example/service-a.yaml"),
		                            "--server",
		                            unreachable,
		                            NULL};
		expect_failure(args, 69, "register:");
	}
	{
		const char *const args[] = {"fetch",     "--trust",     bundle, "--server",
		                            unreachable, "--namespace", "mix",  NULL};
		expect_failure(args, 78, "bad-bundle.txt:3:");
		/* The line, and what is wrong with it. */
		expect_failure(
		    args, 78,
		    "bad-bundle.txt:3: threshold: 'one' is not a canonical decimal (digits, no sign, "
		    "no leading zero)\n");
	}
	{
		const char *const args[] = {"fetch",    "--trust",   temp_path("none.txt"),
		                            "--server", unreachable, "--namespace",
		                            "mix",      NULL};
		expect_failure(args, 66, "no such file");
	}
	{
		const char *const args[] = {"fetch",     "--trust",     good,   "--server",
		                            unreachable, "--namespace", "mail", NULL};
		expect_failure(args, 78, "namespace not in the trust bundle");
	}
	{
		const char *const args[] = {
		    "fetch",       "--trust", good,    "--server",          unreachable,
		    "--namespace", "mix",     "--out", temp_path("mirror"), NULL};
		expect_failure(args, 69, "fetch mix:");
	}
	{
		/* Limits in range are taken; the fetch then goes on to the server. */
		const char *const args[] = {
		    "fetch",       "--trust",     good,           "--server", unreachable,
		    "--namespace", "mix",         "--clock-skew", "0",        "--max-validity",
		    "3600",        "--max-chain", "1000000",      NULL};
		expect_failure(args, 69, "fetch mix:");
	}
}
END_TEST

/* Several --server: the refusals of the command line, and what several unreachable servers say. */
START_TEST(test_several_servers)
{
	static const char good_bundle[] =
	    "dirauth trust v1\nnamespace mix dirauth.example/mix\n"
	    "authority authority1.dirauth.example+41973d40+AR19CCkJlKVPO9KJSTKdI0q839OUciRTVDOeki/KKRZr\n"
	    "threshold 1\n";
	const char *key = temp_path("p.key");
	const char *const keygen[] = {"keygen", "--name", "p.test", "--out", key, NULL};
	const char *service = test_source_path("keys-example/service-a.yaml");
	const char *bundle = temp_path("bundle.txt");
	char first[64], second[64], second_slash[80];
	struct test_outcome outcome;

	run(keygen, &outcome);
	ck_assert_int_eq(outcome.status, 0);
	test_outcome_free(&outcome);
	test_write_file(bundle, good_bundle, strlen(good_bundle), 0644);
	snprintf(first, sizeof(first), "http://127.0.0.1:%u", test_free_port());
	snprintf(second, sizeof(second), "http://127.0.0.1:%u", test_free_port());
	snprintf(second_slash, sizeof(second_slash), "%s/", second);
	{
		/* One server twice (a trailing slash is the same URL): a usage error, nothing sent. */
		const char *const args[] = {"register", "--key",    key,          "--service", service,
		                            "--trust",  bundle,     "--server",   second,      "--server",
		                            first,      "--server", second_slash, NULL};
		char word[128];
		snprintf(word, sizeof(word), "register: --server %s given twice\n", second_slash);
		expect_failure(args, 64, word);
	}
	{
		const char *const args[] = {"fetch",    "--trust", bundle,        "--server", first,
		                            "--server", first,     "--namespace", "mix",      NULL};
		expect_failure(args, 64, "fetch: --server http://127.0.0.1:");
	}
	{
		/* Only verified receipts count toward the threshold. */
		const char *const args[] = {"register", "--key", key,        "--service", service,
		                            "--server", first,   "--server", second,      NULL};
		expect_failure(args, 64, "several --server need --trust BUNDLE");
	}
	{
		/* Neither authority answers: one line each on stdout, the count on stderr, 75. */
		const char *const args[] = {"register", "--key",    key,   "--service", service, "--trust",
		                            bundle,     "--server", first, "--server",  second,  NULL};
		char line[256];
		run(args, &outcome);
		ck_assert_int_eq(outcome.status, 75);
		snprintf(line, sizeof(line), "%s unreachable: %s/v1/certificates: ", first, first);
		ck_assert_msg(strncmp(outcome.out, line, strlen(line)) == 0, "%s", outcome.out);
		snprintf(line, sizeof(line), "\n%s unreachable: %s/v1/certificates: ", second, second);
		ck_assert_msg(strstr(outcome.out, line) != NULL, "%s", outcome.out);
		ck_assert_str_eq(outcome.err,
		                 "dirauthctl: register: accepted by 0 of the 1 authorities the "
		                 "trust bundle pins (none), it requires 1 (each server is listed "
		                 "above)\n");
		test_outcome_free(&outcome);
	}
	{
		/* No server answers a fetch: each is skipped with its reason; the first's status, 69. */
		const char *const args[] = {
		    "fetch", "--trust",           bundle,        "--server", first, "--server", second,
		    "--out", temp_path("mirror"), "--namespace", "mix",      NULL};
		char line[256];
		run(args, &outcome);
		ck_assert_int_eq(outcome.status, 69);
		snprintf(line, sizeof(line), "skipped %s: %s/v1/certificates: ", first, first);
		ck_assert_msg(strncmp(outcome.out, line, strlen(line)) == 0, "%s", outcome.out);
		snprintf(line, sizeof(line), "\nskipped %s: %s/v1/certificates: ", second, second);
		ck_assert_msg(strstr(outcome.out, line) != NULL, "%s", outcome.out);
		ck_assert_str_eq(outcome.err,
		                 "dirauthctl: fetch mix: none of the 2 servers served a snapshot "
		                 "that verifies (each is listed above)\n");
		test_outcome_free(&outcome);
	}
}
END_TEST

static Suite *dirauthctl_suite(void)
{
	Suite *suite = suite_create("dirauthctl");
	TCase *tc = tcase_create("program");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_help_and_usage_errors);
	tcase_add_test(tc, test_keygen_then_register_dry_run);
	tcase_add_test(tc, test_register_and_fetch_failures);
	tcase_add_test(tc, test_several_servers);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(dirauthctl_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
