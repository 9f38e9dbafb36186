/*
 * check_config.c: the configuration reader accepts the documented schema and refuses, with the
 * line at fault, everything else.
 */
#include "compress/compress.h"
#include "server/config/config.h"
#include "base/error.h"
#include "signer/key.h"
#include "schema/note.h"
#include "test_support.h"

#include <check.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char provider_key[NOTE_VERIFIER_KEY_MAX + 1];

static void make_provider_key(void)
{
	struct signer_key *key = NULL;
	ck_assert_int_eq(signer_key_generate("provider-a.example", &key), 0);
	note_verifier_format(signer_key_verifier(key), provider_key);
	signer_key_free(key);
}

/* A complete valid configuration; extra is spliced in at the end of the root mapping. */
static char *valid_text(const char *extra)
{
	static char text[32768];
	snprintf(text, sizeof text,
	         "# example\n"                                        /* 1 */
	         "authority:\n"                                       /* 2 */
	         "  name: authority1.dirauth.example\n"               /* 3 */
	         "  signer_socket: run/signer.sock\n"                 /* 4 */
	         "listen: { address: 127.0.0.1, port: 8080 }\n"       /* 5 */
	         "data_dir: data/authority1\n"                        /* 6 */
	         "epoch:\n"                                           /* 7 */
	         "  length_seconds: 60\n"                             /* 8 */
	         "  genesis: 0\n"                                     /* 9 */
	         "  validity_epochs: 3\n"                             /* 10 */
	         "clock: { source: file, path: clock }\n"             /* 11 */
	         "namespaces:\n"                                      /* 12 */
	         "  - { name: mix, origin: dirauth.example/mix }\n"   /* 13 */
	         "  - { name: mail, origin: dirauth.example/mail }\n" /* 14 */
	         "providers:\n"                                       /* 15 */
	         "  - key: \"%s\"\n"                                  /* 16 */
	         "    namespaces: [mix]\n"                            /* 17 */
	         "    classes: [mix-gateway, bridge]\n"               /* 18 */
	         "%s",
	         provider_key, extra ? extra : "");
	return text;
}

static int parse(const char *text, struct config **config, struct settings_error *error)
{
	return config_parse((const uint8_t *)text, strlen(text), "/etc/dirauth", config, error);
}

/* Replaces the first occurrence of from in the valid text by to, and parses. */
static int parse_edit(const char *from, const char *to, struct settings_error *error)
{
	const char *base = valid_text(NULL);
	const char *at = strstr(base, from);
	ck_assert_msg(at != NULL, "no '%s' in the template", from);
	static char text[40000];
	snprintf(text, sizeof text, "%.*s%s%s", (int)(at - base), base, to, at + strlen(from));
	struct config *config = NULL;
	int rc = parse(text, &config, error);
	config_free(config);
	return rc;
}

static void expect_refusal(const char *from, const char *to, size_t line, const char *words)
{
	struct settings_error error;
	ck_assert_int_eq(parse_edit(from, to, &error), DIRAUTH_ERR_CONFIG);
	ck_assert_msg(error.line == line, "expected line %zu, got %zu (%s)", line, error.line, error.message);
	ck_assert_msg(strstr(error.message, words) != NULL, "message '%s' lacks '%s'", error.message, words);
}

START_TEST(test_valid)
{
	make_provider_key();
	struct config *config = NULL;
	struct settings_error error;
	ck_assert_int_eq(parse(valid_text(NULL), &config, &error), 0);
	ck_assert_str_eq(config->authority_name, "authority1.dirauth.example");
	ck_assert_str_eq(config->signer_socket, "/etc/dirauth/run/signer.sock");
	ck_assert_str_eq(config->listen_address, "127.0.0.1");
	ck_assert_int_eq(config->listen_port, 8080);
	ck_assert_str_eq(config->data_dir, "/etc/dirauth/data/authority1");
	ck_assert_uint_eq(config->epoch.length, 60);
	ck_assert_uint_eq(config->epoch.genesis, 0);
	ck_assert_uint_eq(config->epoch.validity_epochs, 3);
	ck_assert_int_eq(config->clock_source, CONFIG_CLOCK_FILE);
	ck_assert_str_eq(config->clock_path, "/etc/dirauth/clock");
	ck_assert_uint_eq(config->namespace_count, 2);
	ck_assert_str_eq(config->namespaces[1].name, "mail");
	ck_assert_str_eq(config->namespaces[0].origin, "dirauth.example/mix");
	ck_assert_uint_eq(config->provider_count, 1);
	ck_assert_uint_eq(config->providers[0].namespace_mask, 1);
	ck_assert_uint_eq(config->providers[0].class_mask,
	                  (1u << SERVICE_CLASS_MIX_GATEWAY) | (1u << SERVICE_CLASS_BRIDGE));
	ck_assert_ptr_eq(config_provider_find(config, &config->providers[0].key), &config->providers[0]);
	struct note_verifier other = config->providers[0].key;
	other.public_key[0] ^= 1;
	ck_assert_ptr_null(config_provider_find(config, &other));
	ck_assert_int_eq(config_namespace_index(config, "mail", 4), 1);
	ck_assert_int_eq(config_namespace_index(config, "mai", 3), -1);
	/* Defaults (docs/decisions.md, "Bounds"): a million records of about a kilobyte, and a
	 * compressed bound that the uncompressed one fits however it compresses. */
	ck_assert_uint_eq(config->bounds.registration_body, 65536);
	ck_assert_uint_eq(config->bounds.endpoints_per_service, 32);
	ck_assert_uint_eq(config->bounds.records_per_snapshot, 1000000);
	ck_assert_uint_eq(config->bounds.snapshot_body_compressed, 1082130432);
	ck_assert_uint_eq(config->bounds.snapshot_body_uncompressed, 1073741824);
	ck_assert_uint_le(
	    compress_bound(ENCODING_ZSTD, config->bounds.namespace_bytes + CONFIG_BODY_HEAD_MAX),
	    config->bounds.snapshot_body_compressed);
	ck_assert_uint_le(
	    compress_bound(ENCODING_GZIP, config->bounds.namespace_bytes + CONFIG_BODY_HEAD_MAX),
	    config->bounds.snapshot_body_compressed);
	ck_assert_uint_ge(config->bounds.namespace_bytes, 1000000ULL * 1000);
	ck_assert_uint_eq(config->store.body_retention_epochs, 2 * config->epoch.validity_epochs);
	/* Diffs from every snapshot still valid (docs/operating.md, "diffs"). */
	ck_assert_uint_eq(config->diffs.bases, config->epoch.validity_epochs);
	ck_assert_uint_eq(config->bounds.clock_skew_seconds, 300);
	ck_assert_uint_eq(config->bounds.max_validity_seconds, 604800);
	ck_assert_uint_eq(config->http.threads, 8);
	ck_assert_uint_eq(config->http.connection_timeout_seconds, 10);
	ck_assert_uint_eq(config->http.log_cache_bytes, 64 * 1024 * 1024);
	config_free(config);
}
END_TEST

START_TEST(test_optional_sections)
{
	make_provider_key();
	struct config *config = NULL;
	struct settings_error error;
	ck_assert_int_eq(
	    parse(valid_text("bounds:\n"
	                     "  registration_body: 4096\n"
	                     "  endpoints_per_service: 4\n"
	                     "  clock_skew_seconds: 0\n"
	                     "http: { threads: 2, max_connections: 10, max_connections_per_ip: 5,\n"
	                     "        log_cache_bytes: 0 }\n"),
	          &config, &error),
	    0);
	ck_assert_uint_eq(config->http.log_cache_bytes, 0); /* 0: the log's answers are not kept */
	ck_assert_uint_eq(config->bounds.registration_body, 4096);
	ck_assert_uint_eq(config->bounds.endpoints_per_service, 4);
	ck_assert_uint_eq(config->bounds.clock_skew_seconds, 0);
	ck_assert_uint_eq(config->http.threads, 2);
	ck_assert_uint_eq(config->http.max_connections_per_ip, 5);
	config_free(config);

	/* diffs: as many bases as the retention window keeps bodies, or none at all. */
	ck_assert_int_eq(parse(valid_text("diffs: { bases: 6 }\n"), &config, &error), 0);
	ck_assert_uint_eq(config->diffs.bases, 6);
	config_free(config);
	ck_assert_int_eq(
	    parse(valid_text("diffs: { bases: 0 }\nstore: { body_retention_epochs: 3 }\n"), &config, &error),
	    0);
	ck_assert_uint_eq(config->diffs.bases, 0);
	config_free(config);
	ck_assert_int_eq(parse(valid_text("diffs: {}\n"), &config, &error), 0);
	ck_assert_uint_eq(config->diffs.bases, 3);
	config_free(config);

	/* The system clock is the default, and the example file in the tree is valid. */
	ck_assert_int_eq(parse_edit("clock: { source: file, path: clock }\n", "", &error), 0);
	ck_assert_int_eq(config_load(test_source_path("keys-example/dirauthd.yaml"), &config, &error), 0);
	ck_assert_ptr_nonnull(strstr(config->signer_socket, "keys-example/signer.sock"));
	config_free(config);
}
END_TEST

START_TEST(test_refusals)
{
	make_provider_key();
	expect_refusal("  genesis: 0\n", "  genesis: 0\n  colour: blue\n", 10, "unknown key 'colour'");
	expect_refusal("data_dir: data/authority1\n",
	               "data_dir: data/authority1\nstore: { body_retention_epochs: 2 }\n", 7,
	               "less than epoch.validity_epochs");
	expect_refusal("data_dir: data/authority1\n", "data_dir: data/authority1\ndata_dir: x\n", 7,
	               "duplicate key 'data_dir'");
	/* A base older than the retention window is never kept; 256 bases at most. */
	expect_refusal("data_dir: data/authority1\n", "data_dir: data/authority1\ndiffs: { bases: 7 }\n", 7,
	               "exceeds store.body_retention_epochs 6");
	expect_refusal("data_dir: data/authority1\n",
	               "data_dir: data/authority1\nstore: { body_retention_epochs: 1000 }\n"
	               "diffs: { bases: 257 }\n",
	               8, "between");
	expect_refusal("data_dir: data/authority1\n", "data_dir: data/authority1\ndiffs: { base: 2 }\n", 7,
	               "unknown key 'base'");
	expect_refusal("  length_seconds: 60\n", "  length_seconds: sixty\n", 8, "unsigned decimal");
	expect_refusal("  length_seconds: 60\n", "  length_seconds: \"60\"\n", 8, "unsigned decimal");
	expect_refusal("  length_seconds: 60\n", "  length_seconds: 0\n", 8, "between");
	expect_refusal("  length_seconds: 60\n", "  length_seconds: [60]\n", 8, "must be a scalar");
	expect_refusal("listen: { address: 127.0.0.1, port: 8080 }\n",
	               "listen: { address: 127.0.0.1, port: 70000 }\n", 5, "between");
	expect_refusal("listen: { address: 127.0.0.1, port: 8080 }\n",
	               "listen: { address: localhost, port: 80 }\n", 5, "address literal");
	expect_refusal("listen: { address: 127.0.0.1, port: 8080 }\n", "listen: 8080\n", 5,
	               "must be a mapping");
	expect_refusal("  validity_epochs: 3\n", "", 8, "missing required key 'validity_epochs'");
	/* The log's answer cache is bounded in bytes like every other cache. */
	expect_refusal("data_dir: data/authority1\n",
	               "data_dir: data/authority1\nhttp: { log_cache_bytes: 2199023255553 }\n", 7,
	               "http.log_cache_bytes");
	expect_refusal("data_dir: data/authority1\n",
	               "data_dir: data/authority1\nhttp: { log_cache_bytes: lots }\n", 7,
	               "http.log_cache_bytes");
	expect_refusal("data_dir: data/authority1\n", "", 2, "missing required key 'data_dir'");
	expect_refusal("  name: authority1.dirauth.example\n", "  name: bad+name\n", 3,
	               "not a valid key name");
	/* dirauthd holds no key: the old key setting is refused, the signer socket is required and
	 * must fit a UNIX socket address once resolved. */
	expect_refusal("  signer_socket: run/signer.sock\n", "  signing_key: keys/authority1.key\n", 4,
	               "unknown key 'signing_key'");
	expect_refusal("  signer_socket: run/signer.sock\n", "", 3, "missing required key 'signer_socket'");
	expect_refusal("  signer_socket: run/signer.sock\n",
	               "  signer_socket: /run/dirauth/a-socket-path-that-goes-on-and-on-and-on-well-past-the-"
	               "limit-of-a-unix-socket-address-which-is-one-hundred-and-eight-bytes.sock\n",
	               4, "UNIX socket path");
	expect_refusal("  - { name: mail,", "  - { name: Mail,", 14, "namespace name 'Mail'");
	expect_refusal("  - { name: mail,", "  - { name: mix-,", 14, "namespace name");
	expect_refusal("  - { name: mail, origin: dirauth.example/mail }\n",
	               "  - { name: mix, origin: dirauth.example/other }\n", 14, "duplicate namespace 'mix'");
	expect_refusal("  - { name: mail, origin: dirauth.example/mail }\n",
	               "  - { name: mail, origin: dirauth.example/mix }\n", 14, "duplicate namespace origin");
	expect_refusal("  - { name: mail, origin: dirauth.example/mail }\n",
	               "  - { name: mail, origin: a b }\n", 14, "origin");
	expect_refusal("  - key: \"", "  - key: \"x", 16, "not a valid Ed25519 verifier key");
	expect_refusal("    namespaces: [mix]\n", "    namespaces: [nowhere]\n", 17,
	               "'nowhere' is not configured");
	expect_refusal("    namespaces: [mix]\n", "    namespaces: [mix, mix]\n", 17, "listed twice");
	expect_refusal("    namespaces: [mix]\n", "    namespaces: []\n", 17, "at least one");
	expect_refusal("    classes: [mix-gateway, bridge]\n", "    classes: [mix-gateway, teleporter]\n", 18,
	               "unknown service class 'teleporter'");
	expect_refusal("clock: { source: file, path: clock }\n", "clock: { source: sundial }\n", 11,
	               "'system' or 'file'");
	expect_refusal("clock: { source: file, path: clock }\n", "clock: { source: file }\n", 11,
	               "missing required key 'path'");
	expect_refusal("clock: { source: file, path: clock }\n", "clock: { source: system, path: clock }\n",
	               11, "only for source: file");
	expect_refusal("data_dir: data/authority1\n", "data_dir: &anchor data/authority1\n", 6, "anchors");
	expect_refusal("data_dir: data/authority1\n", "data_dir: !!str data/authority1\n", 6, "tags");
	expect_refusal("data_dir: data/authority1\n", "data_dir: [unclosed\n", 7, "");
	expect_refusal("# example\n", "# example\n--- {}\n--- {}\n", 3, "one YAML document");
}
END_TEST

/* The authorities section for members named in names (authority1 is this one), threshold k, with
 * identity keys made here. */
static void authorities_text(const char *const *names, size_t count, unsigned k, char *out, size_t cap)
{
	int n = snprintf(out, cap, "authorities:\n  threshold: %u\n  members:\n", k);
	for (size_t i = 0; i < count; i++) {
		struct signer_key *key = NULL;
		char verifier[NOTE_VERIFIER_KEY_MAX + 1];
		ck_assert_int_eq(signer_key_generate(names[i], &key), 0);
		note_verifier_format(signer_key_verifier(key), verifier);
		signer_key_free(key);
		n += snprintf(out + n, cap - (size_t)n,
		              "    - { name: %s, identity: \"%s\", url: \"http://127.0.0.%zu:8080\" }\n",
		              names[i], verifier, i + 1);
	}
}

static int parse_with(const char *extra, struct config **config, struct settings_error *error)
{
	return parse(valid_text(extra), config, error);
}

START_TEST(test_authority_set)
{
	make_provider_key();
	static const char *const three[] = {"authority1.dirauth.example", "authority2.dirauth.example",
	                                    "authority3.dirauth.example"};
	char extra[8192];
	struct config *config = NULL;
	struct settings_error error;

	/* Without a section, this authority alone: n = k = 1, no phases. */
	ck_assert_int_eq(parse_with(NULL, &config, &error), 0);
	ck_assert_uint_eq(config->member_count, 1);
	ck_assert_uint_eq(config->threshold, 1);
	ck_assert_str_eq(config->members[0].name, "authority1.dirauth.example");
	ck_assert_uint_eq(config->epoch.prepare, 0);
	config_free(config);

	/* Three members, k = 2: this one found, the phases in the epoch's second half. */
	authorities_text(three, 3, 2, extra, sizeof extra);
	ck_assert_msg(parse_with(extra, &config, &error) == 0, "%zu: %s", error.line, error.message);
	ck_assert_uint_eq(config->member_count, 3);
	ck_assert_uint_eq(config->threshold, 2);
	ck_assert_uint_eq(config->self_index, 0);
	ck_assert_str_eq(config->members[2].url, "http://127.0.0.3:8080");
	ck_assert_uint_eq(config->epoch.prepare, 30);
	ck_assert_uint_eq(config->epoch.vote, 6);
	ck_assert_uint_eq(config->epoch.signature, 18);
	ck_assert_uint_eq(config->peers.timeout_seconds, 5);
	ck_assert_uint_eq(config->peers.connections_per_peer, 4);
	config_free(config);
	/* Connections kept to each peer: 1 to 16. */
	authorities_text(three, 3, 2, extra, sizeof extra);
	size_t members_end = strlen(extra);
	snprintf(extra + members_end, sizeof extra - members_end, "  connections_per_peer: 16\n");
	ck_assert_msg(parse_with(extra, &config, &error) == 0, "%zu: %s", error.line, error.message);
	ck_assert_uint_eq(config->peers.connections_per_peer, 16);
	config_free(config);
	static const char *const refused_connections[] = {"0", "17", "-1", "four"};
	for (size_t i = 0; i < sizeof refused_connections / sizeof refused_connections[0]; i++) {
		snprintf(extra + members_end, sizeof extra - members_end, "  connections_per_peer: %s\n",
		         refused_connections[i]);
		ck_assert_int_eq(parse_with(extra, &config, &error), DIRAUTH_ERR_CONFIG);
		ck_assert_ptr_nonnull(strstr(error.message, "authorities.connections_per_peer"));
	}

	/* k must be a majority of n. */
	authorities_text(three, 3, 1, extra, sizeof extra);
	ck_assert_int_eq(parse_with(extra, &config, &error), DIRAUTH_ERR_CONFIG);
	ck_assert_ptr_nonnull(strstr(error.message, "not a majority of 3"));
	static const char *const four[] = {"authority1.dirauth.example", "a2", "a3", "a4"};
	authorities_text(four, 4, 2, extra, sizeof extra);
	ck_assert_int_eq(parse_with(extra, &config, &error), DIRAUTH_ERR_CONFIG);
	ck_assert_ptr_nonnull(strstr(error.message, "not a majority of 4"));
	authorities_text(four, 4, 3, extra, sizeof extra);
	ck_assert_int_eq(parse_with(extra, &config, &error), 0);
	config_free(config);
	authorities_text(three, 3, 4, extra, sizeof extra);
	ck_assert_int_eq(parse_with(extra, &config, &error), DIRAUTH_ERR_CONFIG);

	/* A name twice; one key for two names; this authority not a member. */
	static const char *const twice[] = {"authority1.dirauth.example", "a2", "a2"};
	authorities_text(twice, 3, 2, extra, sizeof extra);
	ck_assert_int_eq(parse_with(extra, &config, &error), DIRAUTH_ERR_CONFIG);
	ck_assert_ptr_nonnull(strstr(error.message, "listed twice"));
	static const char *const others[] = {"a1", "a2", "a3"};
	authorities_text(others, 3, 2, extra, sizeof extra);
	ck_assert_int_eq(parse_with(extra, &config, &error), DIRAUTH_ERR_CONFIG);
	ck_assert_ptr_nonnull(strstr(error.message, "not one of authorities.members"));
	authorities_text(three, 3, 2, extra, sizeof extra);
	char *second = strstr(extra, "identity: \"authority2");
	char *first = strstr(extra, "identity: \"authority1");
	ck_assert(first && second);
	/* Same key bytes under another name: the key id differs, the identity key does not. */
	char *first_key = strchr(strchr(first, '+') + 1, '+') + 1;
	char *second_key = strchr(strchr(second, '+') + 1, '+') + 1;
	memcpy(second_key, first_key, 44);
	ck_assert_int_eq(parse_with(extra, &config, &error), DIRAUTH_ERR_CONFIG);

	/* Urls and identity names. */
	authorities_text(three, 3, 2, extra, sizeof extra);
	char *url = strstr(extra, "http://127.0.0.2:8080");
	memcpy(url, "ftp:", 4);
	ck_assert_int_eq(parse_with(extra, &config, &error), DIRAUTH_ERR_CONFIG);
	ck_assert_ptr_nonnull(strstr(error.message, "http://"));

	/* Explicit phases, and phases that cannot fit. */
	authorities_text(three, 3, 2, extra, sizeof extra);
	char with_phases[9000];
	snprintf(with_phases, sizeof with_phases, "%s", extra);
	const char *base = valid_text(with_phases);
	static char text[40000];
	snprintf(text, sizeof text, "%s", base);
	char *validity = strstr(text, "  validity_epochs: 3\n");
	ck_assert_ptr_nonnull(validity);
	char tail[16384];
	snprintf(tail, sizeof tail, "%s", validity + strlen("  validity_epochs: 3\n"));
	snprintf(validity, sizeof text - (size_t)(validity - text),
	         "  validity_epochs: 3\n  prepare_seconds: 20\n  vote_seconds: 5\n  signature_seconds: 5\n%s",
	         tail);
	ck_assert_msg(parse(text, &config, &error) == 0, "%s", error.message);
	ck_assert_uint_eq(config->epoch.prepare, 20);
	ck_assert_uint_eq(config->epoch.vote, 5);
	config_free(config);
	char *prepare = strstr(text, "prepare_seconds: 20");
	memcpy(prepare, "prepare_seconds: 60", 19);
	ck_assert_int_eq(parse(text, &config, &error), DIRAUTH_ERR_CONFIG);
	ck_assert_ptr_nonnull(strstr(error.message, "prepare_seconds"));
}
END_TEST

/* A set on the system clock with the given phases of a 120-s epoch, peer timeouts and skew:
 * parse's return, the message in error. */
static int parse_windows(uint64_t prepare, uint64_t vote, uint64_t signature, unsigned timeout,
                         unsigned connect, unsigned skew, struct settings_error *error)
{
	static const char *const three[] = {"authority1.dirauth.example", "authority2.dirauth.example",
	                                    "authority3.dirauth.example"};
	char extra[8192], text[40000];
	int n = snprintf(extra, sizeof extra, "bounds: { clock_skew_seconds: %u }\n", skew);
	authorities_text(three, 3, 2, extra + n, sizeof extra - (size_t)n);
	n = (int)strlen(extra);
	snprintf(extra + n, sizeof extra - (size_t)n,
	         "  timeout_seconds: %u\n  connect_timeout_seconds: %u\n", timeout, connect);
	const char *base = valid_text(extra);
	const char *clock = strstr(base, "clock: { source: file, path: clock }\n");
	const char *validity = strstr(base, "  validity_epochs: 3\n");
	ck_assert(clock && validity && validity < clock);
	snprintf(text, sizeof text,
	         "%.*s  length_seconds: 120\n  genesis: 0\n  validity_epochs: 3\n  prepare_seconds: %llu\n"
	         "  vote_seconds: %llu\n  signature_seconds: %llu\nclock: { source: system }\n%s",
	         (int)(strstr(base, "  length_seconds") - base), base, (unsigned long long)prepare,
	         (unsigned long long)vote, (unsigned long long)signature,
	         clock + strlen("clock: { source: file, path: clock }\n"));
	struct config *config = NULL;
	int rc = parse(text, &config, error);
	config_free(config);
	return rc;
}

/* Each window of the round must hold the peer operations that run in it at their full timeout
 * (docs/operating.md, "Sizing the windows"), so --check-config (exit 78) refuses a schedule in
 * which a round could not finish in time. */
START_TEST(test_windows_hold_the_peer_operations)
{
	make_provider_key();
	struct settings_error error;
	/* The shipped five-authority schedule: 60 s prepared, 20 s votes, 20 s signatures. */
	ck_assert_msg(parse_windows(60, 20, 20, 5, 2, 5, &error) == 0, "%s", error.message);
	ck_assert_int_eq(parse_windows(60, 20, 30, 10, 2, 5, &error), 0);
	/* The vote's push; the signature window's three operations; the pull of signatures. */
	ck_assert_int_eq(parse_windows(60, 4, 20, 5, 2, 3, &error), DIRAUTH_ERR_CONFIG);
	ck_assert_msg(strstr(error.message, "vote_seconds (4) cannot hold"), "%s", error.message);
	ck_assert_int_eq(parse_windows(60, 20, 14, 5, 2, 5, &error), DIRAUTH_ERR_CONFIG);
	ck_assert_msg(strstr(error.message, "signature_seconds (14) cannot hold"), "%s", error.message);
	ck_assert_int_eq(parse_windows(44, 20, 20, 5, 2, 5, &error), DIRAUTH_ERR_CONFIG);
	ck_assert_msg(strstr(error.message, "(4) cannot hold the pull of missing signatures"), "%s",
	              error.message);
	/* A connect budget longer than the request's. */
	ck_assert_int_eq(parse_windows(60, 20, 20, 5, 6, 5, &error), DIRAUTH_ERR_CONFIG);
	ck_assert_msg(strstr(error.message, "connect_timeout_seconds (6)"), "%s", error.message);
}
END_TEST

START_TEST(test_duplicate_provider)
{
	make_provider_key();
	char extra[1024];
	snprintf(extra, sizeof extra,
	         "  - key: \"%s\"\n" /* 19 */
	         "    namespaces: [mail]\n"
	         "    classes: [bridge]\n",
	         provider_key);
	const char *base = valid_text(NULL);
	static char text[40000];
	snprintf(text, sizeof text, "%s%s", base, extra);
	struct config *config = NULL;
	struct settings_error error;
	ck_assert_int_eq(parse(text, &config, &error), DIRAUTH_ERR_CONFIG);
	ck_assert_uint_eq(error.line, 19);
	ck_assert_ptr_nonnull(strstr(error.message, "duplicate provider"));
}
END_TEST

START_TEST(test_nesting_bound)
{
	make_provider_key();
	struct config *config = NULL;
	struct settings_error error;
	static char text[40000];
	/* Seven levels under the root mapping is the bound's edge: refused as an unknown key, not
	 * as depth. Eight levels under it is refused for depth, at the line of the ninth opening. */
	snprintf(text, sizeof text, "%sbounds:\n  x: [[[[[[1]]]]]]\n", valid_text(NULL));
	ck_assert_int_eq(parse(text, &config, &error), DIRAUTH_ERR_CONFIG);
	ck_assert_uint_eq(error.line, 20);
	ck_assert_ptr_nonnull(strstr(error.message, "unknown key 'x'"));
	snprintf(text, sizeof text, "%sbounds:\n  x:\n   [[[[[[[1]]]]]]]\n", valid_text(NULL));
	ck_assert_int_eq(parse(text, &config, &error), DIRAUTH_ERR_CONFIG);
	ck_assert_uint_eq(error.line, 21);
	ck_assert_ptr_nonnull(strstr(error.message, "nesting deeper"));
	/* A hostile depth far past the bound is refused without building anything. */
	size_t n = 100000;
	char *deep = malloc(2 * n + 1);
	ck_assert_ptr_nonnull(deep);
	memset(deep, '[', n);
	memset(deep + n, ']', n);
	deep[2 * n] = 0;
	ck_assert_int_eq(parse(deep, &config, &error), DIRAUTH_ERR_CONFIG);
	ck_assert_uint_eq(error.line, 1);
	ck_assert_ptr_nonnull(strstr(error.message, "nesting deeper"));
	free(deep);
}
END_TEST

START_TEST(test_files)
{
	make_provider_key();
	char dir[512], path[640];
	test_make_tempdir(dir, sizeof dir);
	snprintf(path, sizeof path, "%s/dirauthd.yaml", dir);
	const char *text = valid_text(NULL);
	test_write_file(path, text, strlen(text), 0644);
	struct config *config = NULL;
	struct settings_error error;
	ck_assert_int_eq(config_load(path, &config, &error), 0);
	char expected[800];
	snprintf(expected, sizeof expected, "%s/run/signer.sock", dir);
	ck_assert_str_eq(config->signer_socket, expected);
	config_free(config);

	/* Oversized: refused for the file as a whole (line 0) before parsing. */
	size_t big = SETTINGS_MAX_BYTES + 1;
	char *padding = malloc(big);
	ck_assert_ptr_nonnull(padding);
	memset(padding, '#', big);
	test_write_file(path, padding, big, 0644);
	ck_assert_int_eq(config_load(path, &config, &error), DIRAUTH_ERR_CONFIG);
	ck_assert_uint_eq(error.line, 0);
	ck_assert_ptr_nonnull(strstr(error.message, "larger than"));
	ck_assert_int_eq(config_parse((const uint8_t *)padding, big, ".", &config, &error),
	                 DIRAUTH_ERR_CONFIG);
	ck_assert_uint_eq(error.line, 0);
	free(padding);

	snprintf(path, sizeof path, "%s/missing.yaml", dir);
	ck_assert_int_eq(config_load(path, &config, &error), DIRAUTH_ERR_CONFIG);
	ck_assert_ptr_nonnull(strstr(error.message, "cannot open"));
	ck_assert_int_eq(config_parse((const uint8_t *)"", 0, ".", &config, &error), DIRAUTH_ERR_CONFIG);
	test_remove_tree(dir);
}
END_TEST

/* authorities.ca_file: resolved against the file's directory, and refused at load, with its
 * line, when it cannot be read. */
START_TEST(test_ca_file)
{
	make_provider_key();
	static const char *const three[] = {"authority1.dirauth.example", "authority2.dirauth.example",
	                                    "authority3.dirauth.example"};
	char dir[512], path[640], extra[8192], with_ca[8400], file[700];
	struct config *config = NULL;
	struct settings_error error;
	authorities_text(three, 3, 2, extra, sizeof extra);

	/* Without it, the system's store. */
	ck_assert_int_eq(parse_with(extra, &config, &error), 0);
	ck_assert_str_eq(config->peers.ca_file, "");
	config_free(config);

	test_make_tempdir(dir, sizeof dir);
	snprintf(path, sizeof path, "%s/dirauthd.yaml", dir);
	snprintf(with_ca, sizeof with_ca, "%s  ca_file: tls/ca.pem\n", extra);
	const char *text = valid_text(with_ca);
	size_t line = 1;
	for (const char *c = text; *c; c++)
		line += *c == '\n';
	line--; /* the last line, ca_file's */
	test_write_file(path, text, strlen(text), 0644);
	ck_assert_int_eq(config_load(path, &config, &error), DIRAUTH_ERR_CONFIG);
	ck_assert_uint_eq(error.line, line);
	ck_assert_msg(strstr(error.message, "authorities.ca_file") && strstr(error.message, "tls/ca.pem"),
	              "%s", error.message);
	snprintf(file, sizeof file, "%s/tls", dir);
	ck_assert_int_eq(mkdir(file, 0755), 0);
	snprintf(file, sizeof file, "%s/tls/ca.pem", dir);
	ck_assert_int_eq(mkdir(file, 0755), 0);
	ck_assert_int_eq(config_load(path, &config, &error), DIRAUTH_ERR_CONFIG);
	ck_assert_ptr_nonnull(strstr(error.message, "not a regular file"));
	ck_assert_int_eq(rmdir(file), 0);
	test_write_file(file, "-----BEGIN CERTIFICATE-----\n", 28, 0644);
	ck_assert_msg(config_load(path, &config, &error) == 0, "%zu: %s", error.line, error.message);
	ck_assert_str_eq(config->peers.ca_file, file);
	config_free(config);

	/* A path longer than any path is refused as it is read. */
	char long_path[CONFIG_PATH_MAX + 64];
	memset(long_path, 'a', sizeof long_path - 1);
	long_path[sizeof long_path - 1] = 0;
	char *too_long = malloc(sizeof extra + sizeof long_path + 64);
	ck_assert_ptr_nonnull(too_long);
	sprintf(too_long, "%s  ca_file: /%s\n", extra, long_path);
	ck_assert_int_eq(parse_with(too_long, &config, &error), DIRAUTH_ERR_CONFIG);
	ck_assert_uint_eq(error.line, line);
	free(too_long);
	test_remove_tree(dir);
}
END_TEST

static Suite *config_suite(void)
{
	Suite *suite = suite_create("config");
	TCase *tc = tcase_create("config");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_valid);
	tcase_add_test(tc, test_optional_sections);
	tcase_add_test(tc, test_refusals);
	tcase_add_test(tc, test_duplicate_provider);
	tcase_add_test(tc, test_authority_set);
	tcase_add_test(tc, test_windows_hold_the_peer_operations);
	tcase_add_test(tc, test_nesting_bound);
	tcase_add_test(tc, test_files);
	tcase_add_test(tc, test_ca_file);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(config_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
