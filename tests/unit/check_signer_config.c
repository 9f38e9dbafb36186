/*
 * check_signer_config.c: dirauth-signer's configuration reader (signer/signer_config.c) accepts
 * the documented schema, with its defaults, and refuses, with the line at fault, everything
 * else.
 *
 * Checked: every key of a complete configuration is read into its field; the optional keys take
 * their defaults when absent (no log or cosignature key, the audit log on standard error, the
 * system clock, a skew of 300 s, 16 connections); relative paths resolve against the
 * configuration's directory and absolute ones stay; the example configuration in keys-example/
 * loads and names the same namespaces and epoch schedule as dirauthd's example; and each
 * refusal (an unknown or missing key, a value of the wrong kind or out of range, an invalid
 * name, a socket path too long, a namespace twice) names its line.
 */
#include "server/config/config.h"
#include "base/error.h"
#include "signer/signer_config.h"
#include "test_support.h"

#include <check.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A complete valid configuration; extra is spliced in at the end of the root mapping. */
static char *valid_text(const char *extra)
{
	static char text[8192];
	snprintf(text, sizeof text,
	         "# example\n"                                                  /* 1 */
	         "authority: authority1.dirauth.example\n"                      /* 2 */
	         "socket: run/signer.sock\n"                                    /* 3 */
	         "allowed_uid: 998\n"                                           /* 4 */
	         "state_dir: state\n"                                           /* 5 */
	         "signing_key: keys/signing.key\n"                              /* 6 */
	         "certificates: [keys/signing.cert, /etc/old.cert]\n"           /* 7 */
	         "log_key: keys/log.key\n"                                      /* 8 */
	         "cosignature_key: /etc/keys/cosignature.key\n"                 /* 9 */
	         "audit_log: audit.log\n"                                       /* 10 */
	         "clock_skew_seconds: 120\n"                                    /* 11 */
	         "clock: { source: file, path: clock }\n"                       /* 12 */
	         "max_connections: 4\n"                                         /* 13 */
	         "namespaces:\n"                                                /* 14 */
	         "  - name: mix\n"                                              /* 15 */
	         "    origin: dirauth.example/mix\n"                            /* 16 */
	         "    genesis: 1000\n"                                          /* 17 */
	         "    length_seconds: 60\n"                                     /* 18 */
	         "    validity_epochs: 3\n"                                     /* 19 */
	         "  - { name: mail, origin: dirauth.example/mail, genesis: 0, " /* 20 */
	         "length_seconds: 3600, validity_epochs: 24 }\n"
	         "%s",
	         extra ? extra : "");
	return text;
}

/* The smallest configuration that loads. */
static const char *minimal_text =
    "authority: a.example\n"
    "socket: s\n"
    "allowed_uid: 0\n"
    "state_dir: /var/lib/signer\n"
    "signing_key: k\n"
    "certificates: [c]\n"
    "namespaces: [ { name: a, origin: o, genesis: 0, length_seconds: 1, validity_epochs: 1 } ]\n";

static int parse(const char *text, struct signer_config **config, struct settings_error *error)
{
	return signer_config_parse((const uint8_t *)text, strlen(text), "/etc/dirauth-signer", config, error);
}

/* Replaces the first occurrence of from in the valid text by to (or, with to_end, everything
 * from there to the end), and parses. */
static int parse_edit(const char *from, const char *to, int to_end, struct settings_error *error)
{
	const char *base = valid_text(NULL);
	const char *at = strstr(base, from);
	ck_assert_msg(at != NULL, "no '%s' in the template", from);
	static char text[16384];
	snprintf(text, sizeof text, "%.*s%s%s", (int)(at - base), base, to, to_end ? "" : at + strlen(from));
	struct signer_config *config = NULL;
	int rc = parse(text, &config, error);
	if (rc)
		ck_assert_ptr_null(config);
	signer_config_free(config);
	return rc;
}

static void expect_refusal_edit(const char *from, const char *to, int to_end, size_t line, const char *words)
{
	struct settings_error error;
	ck_assert_int_eq(parse_edit(from, to, to_end, &error), DIRAUTH_ERR_CONFIG);
	ck_assert_msg(error.line == line, "'%s': expected line %zu, got %zu (%s)", to, line, error.line,
	              error.message);
	ck_assert_msg(strstr(error.message, words) != NULL, "message '%s' lacks '%s'", error.message, words);
}

static void expect_refusal(const char *from, const char *to, size_t line, const char *words)
{
	expect_refusal_edit(from, to, 0, line, words);
}

/* The namespaces section replaced by to. */
static void expect_namespaces_refusal(const char *to, size_t line, const char *words)
{
	expect_refusal_edit("namespaces:\n", to, 1, line, words);
}

START_TEST(test_every_key)
{
	struct signer_config *config = NULL;
	struct settings_error error;
	ck_assert_msg(parse(valid_text(NULL), &config, &error) == 0, "%zu: %s", error.line, error.message);
	ck_assert_str_eq(config->authority, "authority1.dirauth.example");
	ck_assert_str_eq(config->socket_path, "/etc/dirauth-signer/run/signer.sock");
	ck_assert_uint_eq(config->allowed_uid, 998);
	ck_assert_str_eq(config->state_dir, "/etc/dirauth-signer/state");
	ck_assert_str_eq(config->signing_key_path, "/etc/dirauth-signer/keys/signing.key");
	ck_assert_uint_eq(config->certificate_count, 2);
	ck_assert_str_eq(config->certificate_paths[0], "/etc/dirauth-signer/keys/signing.cert");
	ck_assert_str_eq(config->certificate_paths[1], "/etc/old.cert");
	ck_assert_str_eq(config->log_key_path, "/etc/dirauth-signer/keys/log.key");
	ck_assert_str_eq(config->cosignature_key_path, "/etc/keys/cosignature.key");
	ck_assert_str_eq(config->audit_log_path, "/etc/dirauth-signer/audit.log");
	ck_assert_uint_eq(config->clock_skew_seconds, 120);
	ck_assert_int_eq(config->clock_source, SIGNER_CONFIG_CLOCK_FILE);
	ck_assert_str_eq(config->clock_path, "/etc/dirauth-signer/clock");
	ck_assert_uint_eq(config->max_connections, 4);
	ck_assert_uint_eq(config->namespace_count, 2);
	ck_assert_str_eq(config->namespaces[0].name, "mix");
	ck_assert_str_eq(config->namespaces[0].origin, "dirauth.example/mix");
	ck_assert_uint_eq(config->namespaces[0].schedule.genesis, 1000);
	ck_assert_uint_eq(config->namespaces[0].schedule.length, 60);
	ck_assert_uint_eq(config->namespaces[0].schedule.validity_epochs, 3);
	ck_assert_str_eq(config->namespaces[1].name, "mail");
	ck_assert_str_eq(config->namespaces[1].origin, "dirauth.example/mail");
	ck_assert_uint_eq(config->namespaces[1].schedule.genesis, 0);
	ck_assert_uint_eq(config->namespaces[1].schedule.length, 3600);
	ck_assert_uint_eq(config->namespaces[1].schedule.validity_epochs, 24);
	signer_config_free(config);
	signer_config_free(NULL);
}
END_TEST

START_TEST(test_defaults_and_relative_paths)
{
	struct signer_config *config = NULL;
	struct settings_error error;
	ck_assert_msg(parse(minimal_text, &config, &error) == 0, "%zu: %s", error.line, error.message);
	ck_assert_str_eq(config->log_key_path, "");
	ck_assert_str_eq(config->cosignature_key_path, "");
	ck_assert_str_eq(config->audit_log_path, "");
	ck_assert_int_eq(config->clock_source, SIGNER_CONFIG_CLOCK_SYSTEM);
	ck_assert_str_eq(config->clock_path, "");
	ck_assert_uint_eq(config->clock_skew_seconds, 300);
	ck_assert_uint_eq(config->max_connections, SIGNER_LISTENER_DEFAULT_CONNECTIONS);
	ck_assert_uint_eq(config->certificate_count, 1);
	ck_assert_str_eq(config->socket_path, "/etc/dirauth-signer/s");
	ck_assert_str_eq(config->state_dir, "/var/lib/signer"); /* absolute: kept */
	signer_config_free(config);

	/* Without a base directory, relative paths resolve against ".". */
	ck_assert_int_eq(
	    signer_config_parse((const uint8_t *)minimal_text, strlen(minimal_text), NULL, &config, &error),
	    0);
	ck_assert_str_eq(config->socket_path, "./s");
	ck_assert_str_eq(config->signing_key_path, "./k");
	signer_config_free(config);
	/* A system clock, said explicitly. */
	char text[1024];
	snprintf(text, sizeof text, "%sclock: { source: system }\n", minimal_text);
	ck_assert_int_eq(parse(text, &config, &error), 0);
	ck_assert_int_eq(config->clock_source, SIGNER_CONFIG_CLOCK_SYSTEM);
	signer_config_free(config);
}
END_TEST

/* keys-example/dirauth-signer.yaml loads, from its own directory, and its namespaces and
 * schedules are dirauthd's example's, namespace for namespace. */
START_TEST(test_example_matches_dirauthd)
{
	struct signer_config *signer = NULL;
	struct config *dirauthd = NULL;
	struct settings_error error;
	char path[4096];
	snprintf(path, sizeof path, "%s", test_source_path("keys-example/dirauth-signer.yaml"));
	ck_assert_msg(signer_config_load(path, &signer, &error) == 0, "%zu: %s", error.line, error.message);
	snprintf(path, sizeof path, "%s", test_source_path("keys-example/signer.sock"));
	ck_assert_str_eq(signer->socket_path, path);
	snprintf(path, sizeof path, "%s", test_source_path("keys-example/dirauthd.yaml"));
	size_t len;
	uint8_t *text = test_read_file(path, &len);
	ck_assert_msg(config_parse(text, len, "/tmp", &dirauthd, &error) == 0, "%zu: %s", error.line,
	              error.message);
	free(text);
	ck_assert_uint_eq(signer->namespace_count, dirauthd->namespace_count);
	for (size_t i = 0; i < signer->namespace_count; i++) {
		const struct signer_namespace *ns = &signer->namespaces[i];
		ck_assert_str_eq(ns->name, dirauthd->namespaces[i].name);
		ck_assert_str_eq(ns->origin, dirauthd->namespaces[i].origin);
		ck_assert_uint_eq(ns->schedule.genesis, dirauthd->epoch.genesis);
		ck_assert_uint_eq(ns->schedule.length, dirauthd->epoch.length);
		ck_assert_uint_eq(ns->schedule.validity_epochs, dirauthd->epoch.validity_epochs);
	}
	ck_assert_str_eq(signer->authority, dirauthd->authority_name);
	config_free(dirauthd);
	signer_config_free(signer);

	/* A file that cannot be read: line 0. */
	ck_assert_int_eq(signer_config_load("/nonexistent/dirauth-signer.yaml", &signer, &error),
	                 DIRAUTH_ERR_CONFIG);
	ck_assert_ptr_null(signer);
	ck_assert_uint_eq(error.line, 0);
}
END_TEST

START_TEST(test_refusals_name_their_line)
{
	/* The file as a whole. */
	expect_refusal("# example\n", "# example\nbogus: 1\n", 2, "bogus");
	expect_refusal("socket: run/signer.sock\n", "socket: a\nsocket: b\n", 4, "socket");
	/* A missing key: the line of the mapping that lacks it. */
	expect_refusal("authority: authority1.dirauth.example\n", "", 2, "authority");
	expect_refusal("socket: run/signer.sock\n", "", 2, "socket");
	expect_refusal("allowed_uid: 998\n", "", 2, "allowed_uid");
	expect_refusal("state_dir: state\n", "", 2, "state_dir");
	expect_refusal("signing_key: keys/signing.key\n", "", 2, "signing_key");
	expect_refusal("certificates: [keys/signing.cert, /etc/old.cert]\n", "", 2, "certificates");
	expect_namespaces_refusal("", 2, "namespaces");
	struct settings_error error;
	struct signer_config *config = NULL;
	ck_assert_int_eq(parse("- a\n- b\n", &config, &error), DIRAUTH_ERR_CONFIG);
	ck_assert_ptr_null(config);

	/* Values. */
	expect_refusal("authority: authority1.dirauth.example\n", "authority: \"two words\"\n", 2,
	               "authority");
	char long_socket[200];
	memset(long_socket, 'a', sizeof long_socket);
	memcpy(long_socket, "socket: ", 8);
	memcpy(long_socket + sizeof long_socket - 2, "\n", 2);
	expect_refusal("socket: run/signer.sock\n", long_socket, 3, "socket path is longer");
	expect_refusal("allowed_uid: 998\n", "allowed_uid: -1\n", 4, "allowed_uid");
	expect_refusal("allowed_uid: 998\n", "allowed_uid: 4294967295\n", 4, "allowed_uid");
	expect_refusal("certificates: [keys/signing.cert, /etc/old.cert]\n", "certificates: []\n", 7,
	               "at least one");
	expect_refusal("certificates: [keys/signing.cert, /etc/old.cert]\n",
	               "certificates: keys/signing.cert\n", 7, "certificates");
	expect_refusal("certificates: [keys/signing.cert, /etc/old.cert]\n", "certificates: [a, [b]]\n", 7,
	               "certificate");
	expect_refusal("certificates: [keys/signing.cert, /etc/old.cert]\n",
	               "certificates: [a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a]\n", 7,
	               "at most 16");
	expect_refusal("clock_skew_seconds: 120\n", "clock_skew_seconds: 0\n", 11, "clock_skew_seconds");
	expect_refusal("clock_skew_seconds: 120\n", "clock_skew_seconds: 86401\n", 11, "clock_skew_seconds");
	expect_refusal("clock: { source: file, path: clock }\n", "clock: { source: sundial }\n", 12,
	               "source");
	expect_refusal("max_connections: 4\n", "max_connections: 0\n", 13, "max_connections");
	expect_refusal("max_connections: 4\n", "max_connections: 1025\n", 13, "max_connections");
	expect_refusal("max_connections: 4\n", "max_connections: many\n", 13, "max_connections");
}
END_TEST

START_TEST(test_namespace_refusals)
{
	expect_namespaces_refusal("namespaces: []\n", 14, "at least one");
	expect_namespaces_refusal("namespaces: mix\n", 14, "namespaces");
	expect_namespaces_refusal("namespaces: { name: mix }\n", 14, "namespaces");
	expect_refusal("  - name: mix\n", "  - name: Mix\n", 15, "namespace name");
	expect_refusal("  - name: mix\n", "  - name: -mix\n", 15, "namespace name");
	expect_refusal("    origin: dirauth.example/mix\n", "    origin: \"dirauth example\"\n", 16,
	               "origin");
	expect_refusal("    origin: dirauth.example/mix\n", "    origin: dirauth+example\n", 16, "origin");
	expect_refusal("    genesis: 1000\n", "    genesis: 1099511627777\n", 17, "genesis");
	expect_refusal("    genesis: 1000\n", "    genesis: -1\n", 17, "genesis");
	expect_refusal("    length_seconds: 60\n", "    length_seconds: 0\n", 18, "length_seconds");
	expect_refusal("    length_seconds: 60\n", "    length_seconds: 604801\n", 18, "length_seconds");
	expect_refusal("    validity_epochs: 3\n", "    validity_epochs: 0\n", 19, "validity_epochs");
	expect_refusal("    validity_epochs: 3\n", "    validity_epochs: 1001\n", 19, "validity_epochs");
	expect_refusal("    validity_epochs: 3\n", "    validity_epochs: 3\n    extra: 1\n", 20, "extra");
	/* Each field is required. */
	expect_refusal("  - name: mix\n", "  - \n", 16, "name");
	expect_refusal("    origin: dirauth.example/mix\n", "", 15, "origin");
	expect_refusal("    genesis: 1000\n", "", 15, "genesis");
	expect_refusal("    length_seconds: 60\n", "", 15, "length_seconds");
	expect_refusal("    validity_epochs: 3\n", "", 15, "validity_epochs");
	/* Twice the same name or origin. */
	expect_refusal("{ name: mail,", "{ name: mix,", 20, "duplicate namespace 'mix'");
	expect_refusal("origin: dirauth.example/mail,", "origin: dirauth.example/mix,", 20,
	               "duplicate namespace origin");
	/* Not a mapping, and too many. */
	expect_refusal("  - name: mix\n", "  - mix\n  - name: mix\n", 15, "namespace");
	char many[16384];
	size_t used = (size_t)snprintf(many, sizeof many, "namespaces:\n");
	for (int i = 0; i <= SIGNER_CONFIG_MAX_NAMESPACES; i++)
		used += (size_t)snprintf(many + used, sizeof many - used,
		                         "  - { name: n%d, origin: o%d, genesis: 0, length_seconds: 1, "
		                         "validity_epochs: 1 }\n",
		                         i, i);
	expect_namespaces_refusal(many, 14 + SIGNER_CONFIG_MAX_NAMESPACES + 1, "at most 64");
}
END_TEST

static Suite *signer_config_suite(void)
{
	Suite *suite = suite_create("signer_config");
	TCase *tc = tcase_create("signer_config");
	tcase_add_test(tc, test_every_key);
	tcase_add_test(tc, test_defaults_and_relative_paths);
	tcase_add_test(tc, test_example_matches_dirauthd);
	tcase_add_test(tc, test_refusals_name_their_line);
	tcase_add_test(tc, test_namespace_refusals);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(signer_config_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
