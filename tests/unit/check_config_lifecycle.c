/*
 * check_config_lifecycle.c: the configuration of the endpoint lifecycle: a namespace's
 * "lifecycle" flag (off by default, so existing namespaces stay method 1) and its parameters
 * with their defaults and bounds, and the "operators" list of keys whose revocations are
 * honoured; each refusal names its line.
 */
#include "base/error.h"
#include "schema/note.h"
#include "schema/snapshot.h"
#include "server/config/config.h"
#include "test_keys.h"
#include "test_support.h"

#include <check.h>

#include <stdio.h>
#include <string.h>

static char text[16384];
static char provider_key[NOTE_VERIFIER_KEY_MAX + 1], operator_key[NOTE_VERIFIER_KEY_MAX + 1];

static void make_keys(void)
{
	struct test_key key;
	test_key_load(TEST_KEY_PROVIDER, &key);
	snprintf(provider_key, sizeof provider_key, "%s", test_key_verifier_string(&key));
	test_key_free(&key);
	test_key_load(TEST_KEY_AUTHORITY_3, &key);
	snprintf(operator_key, sizeof operator_key, "%s", test_key_verifier_string(&key));
	test_key_free(&key);
}

/* A valid configuration: namespace is the first namespace's flow mapping body, extra spliced in
 * at the end of the root. The namespaces start on line 8. */
static const char *with(const char *namespace_fields, const char *extra)
{
	snprintf(text, sizeof text,
	         "authority: { name: authority1.dirauth.example, signer_socket: run/signer.sock }\n" /* 1 */
	         "listen: { address: 127.0.0.1, port: 8080 }\n"                                      /* 2 */
	         "data_dir: data\n"                                                                  /* 3 */
	         "epoch: { length_seconds: 60, genesis: 0, validity_epochs: 3 }\n"                   /* 4 */
	         "providers:\n"                                                                      /* 5 */
	         "  - { key: \"%s\", namespaces: [mix], classes: [mix-gateway] }\n"                  /* 6 */
	         "namespaces:\n"                                                                     /* 7 */
	         "  - { name: mix, origin: dirauth.example/mix%s }\n"                                /* 8 */
	         "  - { name: mail, origin: dirauth.example/mail }\n"                                /* 9 */
	         "%s",
	         provider_key, namespace_fields, extra ? extra : "");
	return text;
}

static int parse(const char *t, struct config **config, struct settings_error *error)
{
	return config_parse((const uint8_t *)t, strlen(t), "/etc/dirauth", config, error);
}

static void expect_refusal(const char *t, size_t line, const char *words)
{
	struct config *config = NULL;
	struct settings_error error;
	ck_assert_int_eq(parse(t, &config, &error), DIRAUTH_ERR_CONFIG);
	ck_assert_ptr_null(config);
	ck_assert_msg(error.line == line, "expected line %zu, got %zu (%s)", line, error.line, error.message);
	ck_assert_msg(strstr(error.message, words) != NULL, "message '%s' lacks '%s'", error.message, words);
}

START_TEST(test_defaults)
{
	struct config *config = NULL;
	struct settings_error error;
	make_keys();
	ck_assert_int_eq(parse(with("", NULL), &config, &error), 0);
	for (size_t i = 0; i < 2; i++) {
		ck_assert_int_eq(config->namespaces[i].lifecycle, 0);
		ck_assert_uint_eq(config->namespaces[i].health_freshness_epochs, 2);
		ck_assert_uint_eq(config->namespaces[i].revocation_epochs, 3); /* the validity */
		ck_assert_uint_eq(config->namespaces[i].max_revocations, 65536);
	}
	ck_assert_uint_eq(config->operator_count, 0);
	ck_assert_uint_eq(config_max_health(config), 1000000 * 32);
	/* Without the lifecycle, a namespace's records may take all the room of its body. */
	ck_assert_uint_eq(config_namespace_record_bytes(config, 0), config->bounds.namespace_bytes);
	ck_assert_uint_eq(config_namespace_endpoint_bytes(config, 0), 0);
	config_free(config);
}
END_TEST

START_TEST(test_lifecycle_and_operators)
{
	struct config *config = NULL;
	struct settings_error error;
	char extra[1024];
	make_keys();
	snprintf(extra, sizeof extra, "operators:\n  - \"%s\"\n", operator_key);
	ck_assert_int_eq(parse(with(", lifecycle: true, health_freshness_epochs: 4, revocation_epochs: 10, "
	                            "max_revocations: 500",
	                            extra),
	                       &config, &error),
	                 0);
	ck_assert_int_eq(config->namespaces[0].lifecycle, 1);
	ck_assert_int_eq(config->namespaces[1].lifecycle, 0);
	ck_assert_uint_eq(config->namespaces[0].health_freshness_epochs, 4);
	ck_assert_uint_eq(config->namespaces[0].revocation_epochs, 10);
	ck_assert_uint_eq(config->namespaces[0].max_revocations, 500);
	/* With it, the room of its most revocations and of the sections' count lines is kept out of
	 * what its records may take, and each endpoint they list counts a health entry's room. */
	ck_assert_uint_eq(config_namespace_record_bytes(config, 0), config->bounds.namespace_bytes -
	                                                                2 * SNAPSHOT_SECTION_COUNT_MAX -
	                                                                500 * SNAPSHOT_REVOCATION_ENTRY_MAX);
	ck_assert_uint_eq(config_namespace_endpoint_bytes(config, 0), SNAPSHOT_HEALTH_ENTRY_MAX);
	ck_assert_uint_eq(config_namespace_record_bytes(config, 1), config->bounds.namespace_bytes);
	ck_assert_uint_eq(config->operator_count, 1);
	struct note_verifier key;
	ck_assert_int_eq(note_verifier_parse(operator_key, strlen(operator_key), &key), 0);
	ck_assert_int_eq(config_operator_is_listed(config, &key), 1);
	ck_assert_int_eq(note_verifier_parse(provider_key, strlen(provider_key), &key), 0);
	ck_assert_int_eq(config_operator_is_listed(config, &key), 0);
	config_free(config);
	ck_assert_int_eq(parse(with(", lifecycle: false", NULL), &config, &error), 0);
	ck_assert_int_eq(config->namespaces[0].lifecycle, 0);
	config_free(config);
}
END_TEST

START_TEST(test_refusals)
{
	char extra[2048];
	make_keys();
	expect_refusal(with(", lifecycle: yes", NULL), 8, "lifecycle must be true or false");
	expect_refusal(with(", lifecycle: \"true\"", NULL), 8, "lifecycle must be true or false");
	expect_refusal(with(", health_freshness_epochs: 0", NULL), 8, "health_freshness_epochs");
	/* A revocation must outlive every snapshot that held what it revokes. */
	expect_refusal(with(", revocation_epochs: 2", NULL), 8, "less than epoch.validity_epochs");
	expect_refusal(with(", max_revocations: 0", NULL), 8, "max_revocations");
	/* Revocations whose room would leave none for the largest registration and its health. */
	expect_refusal(with(", lifecycle: true, max_revocations: 1000000", NULL), 0,
	               "namespace mix: its max_revocations (1000000) leave no room");
	expect_refusal(
	    with(", lifecycle: true, max_revocations: 100",
	         "bounds: { snapshot_body_uncompressed: 300000, snapshot_body_compressed: 400000 }\n"),
	    0, "leave no room");
	expect_refusal(with(", lifecycles: true", NULL), 8, "lifecycles");
	expect_refusal(with("", "operators: [\"not a key\"]\n"), 10,
	               "operator key is not an Ed25519 verifier key");
	snprintf(extra, sizeof extra, "operators:\n  - \"%s\"\n  - \"%s\"\n", operator_key, operator_key);
	expect_refusal(with("", extra), 12, "listed twice");
	expect_refusal(with("", "operators: { a: b }\n"), 10, "operators");
}
END_TEST

static Suite *config_lifecycle_suite(void)
{
	Suite *suite = suite_create("config_lifecycle");
	TCase *tc = tcase_create("config_lifecycle");
	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_lifecycle_and_operators);
	tcase_add_test(tc, test_refusals);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(config_lifecycle_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
