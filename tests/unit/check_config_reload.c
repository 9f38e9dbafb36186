/*
 * check_config_reload.c: what a reload takes of a new configuration (server/config/reload.h) and
 * the holder readers take it from (server/config/live.h): the live keys applied and listed, each
 * restart-only key kept at its running value with its sentence, providers re-read by namespace
 * name when the namespaces are kept, a merge whose live keys no longer fit the kept ones refused,
 * and a configuration replaced under a reader that stays whole until the reader gives it back.
 */
#include "server/config/config.h"
#include "server/config/live.h"
#include "server/config/reload.h"
#include "base/error.h"
#include "signer/key.h"
#include "schema/note.h"
#include "test_support.h"

#include <check.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void make_key(const char *name, char out[NOTE_VERIFIER_KEY_MAX + 1])
{
	struct signer_key *key = NULL;
	ck_assert_int_eq(signer_key_generate(name, &key), 0);
	note_verifier_format(signer_key_verifier(key), out);
	signer_key_free(key);
}

/* A complete configuration: the parts a test varies are arguments. */
struct shape {
	unsigned port;
	const char *data_dir;
	const char *namespaces; /* the namespaces section's items */
	const char *providers;  /* the providers section's items */
	const char *extra;      /* appended at the end of the root mapping */
};

static struct config *parse_shape(const struct shape *s)
{
	static char text[65536];
	snprintf(text, sizeof text,
	         "authority:\n"
	         "  name: authority1.dirauth.example\n"
	         "  signer_socket: run/signer.sock\n"
	         "listen: { address: 127.0.0.1, port: %u }\n"
	         "data_dir: %s\n"
	         "epoch: { length_seconds: 60, genesis: 0, validity_epochs: 3 }\n"
	         "clock: { source: file, path: clock }\n"
	         "namespaces:\n%s"
	         "providers:\n%s"
	         "%s",
	         s->port, s->data_dir, s->namespaces, s->providers, s->extra ? s->extra : "");
	struct config *config = NULL;
	struct settings_error error;
	int rc = config_parse((const uint8_t *)text, strlen(text), "/etc/dirauth", &config, &error);
	ck_assert_msg(rc == 0, "line %zu: %s", error.line, error.message);
	return config;
}

static char key_a[NOTE_VERIFIER_KEY_MAX + 1], key_b[NOTE_VERIFIER_KEY_MAX + 1];
static char one_provider[1024], two_providers[2048];
static const char *const mix_and_mail = "  - { name: mix, origin: dirauth.example/mix }\n"
                                        "  - { name: mail, origin: dirauth.example/mail }\n";

static void make_providers(void)
{
	make_key("provider-a.example", key_a);
	make_key("provider-b.example", key_b);
	snprintf(one_provider, sizeof one_provider,
	         "  - { key: \"%s\", namespaces: [mix], classes: [bridge] }\n", key_a);
	snprintf(two_providers, sizeof two_providers,
	         "%s  - { key: \"%s\", namespaces: [mail], classes: [bridge] }\n", one_provider, key_b);
}

static const struct note_verifier *verifier_of(const char *text, struct note_verifier *out)
{
	ck_assert_int_eq(note_verifier_parse(text, strlen(text), out), 0);
	return out;
}

static int report_lists(const struct config_reload_report *report, const char *key)
{
	for (size_t i = 0; i < report->applied_count; i++)
		if (strcmp(report->applied[i], key) == 0)
			return 1;
	return 0;
}

static int report_says(const struct config_reload_report *report, const char *sentence)
{
	for (size_t i = 0; i < report->restart_count; i++)
		if (strcmp(report->restart[i], sentence) == 0)
			return 1;
	return 0;
}

/* A provider enrolled, a bound and HTTP limits changed: all applied, nothing needs a restart. */
START_TEST(test_live_keys_are_applied)
{
	make_providers();
	struct shape s = {8080, "data/authority1", mix_and_mail, one_provider, NULL};
	struct config *running = parse_shape(&s);
	s.providers = two_providers;
	s.extra =
	    "bounds: { max_validity_seconds: 3600 }\n"
	    "http: { header_timeout_seconds: 3, max_pending_connections: 77, max_connections_per_ip: 9 }\n";
	struct config *loaded = parse_shape(&s);
	struct config_reload_report report;
	ck_assert_int_eq(config_reload_merge(running, loaded, &report), 0);
	ck_assert_uint_eq(report.restart_count, 0);
	ck_assert(report_lists(&report, "providers"));
	ck_assert(report_lists(&report, "bounds.max_validity_seconds"));
	ck_assert(report_lists(&report, "http.header_timeout_seconds"));
	ck_assert(report_lists(&report, "http.max_pending_connections"));
	ck_assert(report_lists(&report, "http.max_connections_per_ip"));
	ck_assert_uint_eq(report.applied_count, 5);
	struct note_verifier b;
	ck_assert_ptr_nonnull(config_provider_find(loaded, verifier_of(key_b, &b)));
	ck_assert_ptr_null(config_provider_find(running, &b));
	ck_assert_uint_eq(loaded->http.max_pending_connections, 77);
	ck_assert_uint_eq(loaded->bounds.max_validity_seconds, 3600);

	/* The same file again: nothing to apply, nothing to say. */
	struct config *same = parse_shape(&s);
	ck_assert_int_eq(config_reload_merge(loaded, same, &report), 0);
	ck_assert_uint_eq(report.applied_count, 0);
	ck_assert_uint_eq(report.restart_count, 0);
	config_free(same);
	config_free(loaded);
	config_free(running);
}
END_TEST

/* Restart-only keys changed with a live one: each kept at its running value and said in one
 * sentence, the live one applied all the same. */
START_TEST(test_restart_keys_are_kept_and_said)
{
	make_providers();
	struct shape s = {8080, "data/authority1", mix_and_mail, one_provider, NULL};
	struct config *running = parse_shape(&s);
	s.port = 9090;
	s.data_dir = "data/elsewhere";
	s.providers = two_providers;
	s.extra = "bounds: { records_per_snapshot: 1000 }\nhttp: { threads: 7 }\n";
	struct config *loaded = parse_shape(&s);
	struct config_reload_report report;
	ck_assert_int_eq(config_reload_merge(running, loaded, &report), 0);
	ck_assert(report_says(&report, "listen.port changed; needs a restart; kept 8080"));
	ck_assert(
	    report_says(&report, "data_dir changed; needs a restart; kept /etc/dirauth/data/authority1"));
	char sentence[CONFIG_RELOAD_LINE_MAX];
	snprintf(sentence, sizeof sentence, "bounds.records_per_snapshot changed; needs a restart; kept %zu",
	         running->bounds.records_per_snapshot);
	ck_assert(report_says(&report, sentence));
	snprintf(sentence, sizeof sentence, "http.threads changed; needs a restart; kept %u",
	         running->http.threads);
	ck_assert(report_says(&report, sentence));
	ck_assert_uint_eq(report.restart_count, 4);
	ck_assert_uint_eq(loaded->listen_port, 8080);
	ck_assert_str_eq(loaded->data_dir, running->data_dir);
	ck_assert_uint_eq(loaded->bounds.records_per_snapshot, running->bounds.records_per_snapshot);
	ck_assert_uint_eq(loaded->bounds.namespace_bytes, running->bounds.namespace_bytes);
	ck_assert_uint_eq(loaded->http.threads, running->http.threads);
	ck_assert(report_lists(&report, "providers"));
	ck_assert_uint_eq(loaded->provider_count, 2);
	/* What the table says of each. */
	ck_assert(!config_reload_key_is_live("listen.port"));
	ck_assert(!config_reload_key_is_live("namespaces"));
	ck_assert(!config_reload_key_is_live("authorities.members"));
	ck_assert(config_reload_key_is_live("providers"));
	ck_assert(config_reload_key_is_live("authorities.members.url"));
	ck_assert(config_reload_key_is_live("authorities.timeout_seconds"));
	ck_assert(!config_reload_key_is_live("no.such.key"));
	config_free(loaded);
	config_free(running);
}
END_TEST

/* Namespaces changed: kept, and each provider's namespaces re-read by name against the running
 * ones (one the running configuration does not serve waits for the restart). */
START_TEST(test_providers_follow_the_kept_namespaces)
{
	make_providers();
	struct shape s = {8080, "data/authority1", mix_and_mail, one_provider, NULL};
	struct config *running = parse_shape(&s);
	char providers[2048];
	snprintf(providers, sizeof providers,
	         "  - { key: \"%s\", namespaces: [mail, web], classes: [bridge] }\n", key_b);
	s.namespaces = "  - { name: web, origin: dirauth.example/web }\n"
	               "  - { name: mail, origin: dirauth.example/mail }\n";
	s.providers = providers;
	struct config *loaded = parse_shape(&s);
	struct config_reload_report report;
	ck_assert_int_eq(config_reload_merge(running, loaded, &report), 0);
	ck_assert(report_says(&report, "namespaces changed; needs a restart; kept mix, mail"));
	ck_assert_uint_eq(loaded->namespace_count, 2);
	ck_assert_str_eq(loaded->namespaces[0].name, "mix");
	struct note_verifier b;
	const struct config_provider *provider = config_provider_find(loaded, verifier_of(key_b, &b));
	ck_assert_ptr_nonnull(provider);
	ck_assert_uint_eq(provider->namespace_mask, (uint64_t)1 << 1); /* mail, and not web */
	config_free(loaded);
	config_free(running);
}
END_TEST

/* The authorities section for three members with the given keys and urls, and peer timeouts. */
static void authorities(const char *const keys[3], const char *url2, unsigned timeout, char *out, size_t cap)
{
	snprintf(
	    out, cap,
	    "authorities:\n  threshold: 2\n  timeout_seconds: %u\n  connect_timeout_seconds: 1\n"
	    "  members:\n"
	    "    - { name: authority1.dirauth.example, identity: \"%s\", url: \"http://127.0.0.1:8080\" }\n"
	    "    - { name: authority2.dirauth.example, identity: \"%s\", url: \"%s\" }\n"
	    "    - { name: authority3.dirauth.example, identity: \"%s\", url: \"http://127.0.0.3:8080\" }\n",
	    timeout, keys[0], keys[1], url2, keys[2]);
}

/* A member's url and the peer timeouts are live; the members themselves are not (their urls then
 * stay too, as the running set's). */
START_TEST(test_members_and_their_urls)
{
	make_providers();
	char k1[NOTE_VERIFIER_KEY_MAX + 1], k2[NOTE_VERIFIER_KEY_MAX + 1], k3[NOTE_VERIFIER_KEY_MAX + 1],
	    other[NOTE_VERIFIER_KEY_MAX + 1];
	make_key("authority1.dirauth.example", k1);
	make_key("authority2.dirauth.example", k2);
	make_key("authority3.dirauth.example", k3);
	make_key("authority2.dirauth.example", other);
	const char *keys[3] = {k1, k2, k3};
	char section[4096];
	authorities(keys, "http://127.0.0.2:8080", 2, section, sizeof section);
	struct shape s = {8080, "data/authority1", mix_and_mail, one_provider, section};
	struct config *running = parse_shape(&s);

	char moved[4096];
	authorities(keys, "https://authority2.example:8443", 3, moved, sizeof moved);
	s.extra = moved;
	struct config *loaded = parse_shape(&s);
	struct config_reload_report report;
	ck_assert_int_eq(config_reload_merge(running, loaded, &report), 0);
	ck_assert_uint_eq(report.restart_count, 0);
	ck_assert(report_lists(&report, "authorities.members.url"));
	ck_assert(report_lists(&report, "authorities.timeout_seconds"));
	ck_assert_str_eq(loaded->members[1].url, "https://authority2.example:8443");
	config_free(loaded);

	/* Another identity for authority2 (and its url): the set is kept whole, url included. */
	const char *rekeyed[3] = {k1, other, k3};
	authorities(rekeyed, "https://authority2.example:8443", 2, moved, sizeof moved);
	s.extra = moved;
	loaded = parse_shape(&s);
	ck_assert_int_eq(config_reload_merge(running, loaded, &report), 0);
	ck_assert(report_says(&report, "authorities.members changed; needs a restart; kept 2 of 3: "
	                               "authority1.dirauth.example authority2.dirauth.example "
	                               "authority3.dirauth.example"));
	ck_assert(!report_lists(&report, "authorities.members.url"));
	ck_assert_str_eq(loaded->members[1].url, "http://127.0.0.2:8080");
	ck_assert_mem_eq(&loaded->members[1].identity, &running->members[1].identity,
	                 sizeof running->members[1].identity);
	config_free(loaded);
	config_free(running);
}
END_TEST

/* A set on the system clock whose epoch is length seconds long (its phases by default). */
static void set_text(char *out, size_t cap, unsigned length, const char *section)
{
	snprintf(out, cap,
	         "authority: { name: authority1.dirauth.example, signer_socket: s.sock }\n"
	         "listen: { address: 127.0.0.1, port: 8080 }\n"
	         "data_dir: data\n"
	         "epoch: { length_seconds: %u, genesis: 0, validity_epochs: 3 }\n"
	         "namespaces:\n%s"
	         "providers:\n%s%s",
	         length, mix_and_mail, one_provider, section);
}

/* The peers' timeout (live) raised in a file whose longer epoch (restart-only) holds it: the
 * running epoch, kept, cannot, so the whole reload is refused. */
START_TEST(test_a_merge_that_no_longer_fits_is_refused)
{
	make_providers();
	char k1[NOTE_VERIFIER_KEY_MAX + 1], k2[NOTE_VERIFIER_KEY_MAX + 1], k3[NOTE_VERIFIER_KEY_MAX + 1];
	make_key("authority1.dirauth.example", k1);
	make_key("authority2.dirauth.example", k2);
	make_key("authority3.dirauth.example", k3);
	const char *keys[3] = {k1, k2, k3};
	char section[4096], text[65536];
	authorities(keys, "http://127.0.0.2:8080", 5, section, sizeof section);
	struct config *running = NULL, *loaded = NULL;
	struct settings_error error;
	set_text(text, sizeof text, 120, section);
	ck_assert_int_eq(config_parse((const uint8_t *)text, strlen(text), ".", &running, &error), 0);
	authorities(keys, "http://127.0.0.2:8080", 13, section, sizeof section);
	set_text(text, sizeof text, 300, section);
	ck_assert_msg(config_parse((const uint8_t *)text, strlen(text), ".", &loaded, &error) == 0, "%s",
	              error.message);
	struct config_reload_report report;
	ck_assert_int_eq(config_reload_merge(running, loaded, &report), DIRAUTH_ERR_CONFIG);
	ck_assert_msg(strstr(report.refusal, "vote_seconds (12) cannot hold"), "%s", report.refusal);
	config_free(loaded);
	config_free(running);
}
END_TEST

/* A reader keeps the configuration it took, whole, across replacements; the next reader takes
 * the newest; each is freed by its last release (the sanitizer builds catch a use after free or
 * a leak). */
START_TEST(test_a_reader_keeps_what_it_took)
{
	make_providers();
	struct shape s = {8080, "data/authority1", mix_and_mail, one_provider, NULL};
	struct config_live *live = NULL;
	ck_assert_int_eq(config_live_new(parse_shape(&s), &live), 0);
	ck_assert_uint_eq(config_live_generation(live), 0);
	const struct config *first = config_live_acquire(live);
	s.port = 8081;
	ck_assert_int_eq(config_live_replace(live, parse_shape(&s)), 0);
	const struct config *second = config_live_acquire(live);
	const struct config *second_again = config_live_acquire(live);
	s.port = 8082;
	ck_assert_int_eq(config_live_replace(live, parse_shape(&s)), 0);
	ck_assert_uint_eq(config_live_generation(live), 2);
	ck_assert_uint_eq(first->listen_port, 8080);
	ck_assert_uint_eq(second->listen_port, 8081);
	config_live_release(live, second);
	ck_assert_uint_eq(second_again->listen_port, 8081);
	config_live_release(live, second_again); /* freed here */
	const struct config *third = config_live_acquire(live);
	ck_assert_uint_eq(third->listen_port, 8082);
	ck_assert_uint_eq(first->provider_count, 1);
	config_live_release(live, first);
	/* Replaced with no reader: freed at once. */
	s.port = 8083;
	config_live_release(live, third);
	ck_assert_int_eq(config_live_replace(live, parse_shape(&s)), 0);
	const struct config *fourth = config_live_acquire(live);
	ck_assert_uint_eq(fourth->listen_port, 8083);
	config_live_release(live, fourth);
	config_live_free(live);
	config_live_free(NULL);
}
END_TEST

static Suite *config_reload_suite(void)
{
	Suite *suite = suite_create("config_reload");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_live_keys_are_applied);
	tcase_add_test(tc, test_restart_keys_are_kept_and_said);
	tcase_add_test(tc, test_providers_follow_the_kept_namespaces);
	tcase_add_test(tc, test_members_and_their_urls);
	tcase_add_test(tc, test_a_merge_that_no_longer_fits_is_refused);
	tcase_add_test(tc, test_a_reader_keeps_what_it_took);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(config_reload_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
