/*
 * check_dirauthctl_endpoint.c: dirauthctl health, revoke and deregister as a provider runs them,
 * against a real dirauthd serving the lifecycle over loopback (lifecycle_http_fixture.h: real
 * signer, store, scheduler and HTTP server), with real key files and service files:
 *
 *   - health posted and published with its class and signer, the provider's key or the
 *     endpoint's own (named by the service file's `key:`), draining published as draining, the
 *     sequence kept in a state file; every refusal with its exit status and one stderr line: a
 *     bad class or signer word (64), an endpoint not in the service file, an endpoint key that is
 *     not the endpoint's or an endpoint that names none (65), the server's refusals (76: another
 *     provider's key, a replayed sequence), a server that is not there (69), several servers of
 *     which one is down (75, one line per server);
 *   - health --every posts a new statement each round and stops on SIGTERM;
 *   - revoke by the provider (an endpoint) and by an operator (a whole service): both absent from
 *     the next snapshot and listed; refusals (64, 76);
 *   - replay-revocations: an authority restored from a backup taken before two revocations holds
 *     them again once the body of a snapshot that listed them is replayed (lowest sequence first,
 *     though the body lists them the other way), and answers them as held when replayed again; a
 *     spoiled one is refused and named and its key's later one not posted; one that a later
 *     revocation by its key passed over since the restore is superseded; in a private namespace,
 *     one answered as replayed stops the replay (76) unless the capability is given, which tells
 *     it held; refusals (64, 65, 66, 69);
 *   - deregister: the receipt verified against the authority's certificate and kept, its
 *     last-listed epoch printed, the service absent from the snapshot after it; refusals.
 */
#include "lifecycle_http_fixture.h"

#include "ctl/report.h"
#include "schema/trust_bundle.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

/* Everything a test needs besides the fixture. */
struct world {
	struct fixture f;
	char url[64];
	char now[32];
	char provider_key[700], endpoint_key_path[700], operator_key_path[700], other_key[700];
	char bundle[700];
};

/* A key file for an example key (the format of signer/key.h), mode 0600. */
static void write_key_file(const char *path, unsigned index, const char *name)
{
	uint8_t seed[32], typed[33];
	char base64[64], text[512];
	struct test_key key;

	test_key_example_seed(index, seed);
	test_key_from_seed(seed, name, &key);
	typed[0] = 0x01;
	memcpy(typed + 1, seed, 32);
	base64_encode(typed, sizeof typed, base64);
	int n = snprintf(text, sizeof text, "PRIVATE+KEY+%s+%08" PRIx32 "+%s\n", name, key.verifier.key_id,
	                 base64);
	test_write_file(path, text, (size_t)n, 0600);
	test_key_free(&key);
}

/* The world with mix private behind the capability of that SHA-256 (hex), or public for NULL. */
static void world_open_with(struct world *w, const char *capability_sha256)
{
	memset(w, 0, sizeof *w);
	lc_open_with(&w->f, capability_sha256);
	snprintf(w->url, sizeof w->url, "http://127.0.0.1:%u", w->f.port);
	snprintf(w->now, sizeof w->now, "%" PRIu64, w->f.now);
	snprintf(w->provider_key, sizeof w->provider_key, "%s/provider.key", w->f.dir);
	snprintf(w->endpoint_key_path, sizeof w->endpoint_key_path, "%s/endpoint.key", w->f.dir);
	snprintf(w->operator_key_path, sizeof w->operator_key_path, "%s/operator.key", w->f.dir);
	snprintf(w->other_key, sizeof w->other_key, "%s/other.key", w->f.dir);
	write_key_file(w->provider_key, TEST_KEY_PROVIDER, w->f.provider.verifier.name);
	write_key_file(w->endpoint_key_path, LIFECYCLE_KEY_ENDPOINT, "endpoint.example");
	write_key_file(w->operator_key_path, LIFECYCLE_KEY_OPERATOR, "operator.example");
	write_key_file(w->other_key, TEST_KEY_OTHER, w->f.other.verifier.name);

	char identity[NOTE_VERIFIER_KEY_MAX + 1], text[2048];
	note_verifier_format(&w->f.signer_process.identity, identity);
	int n = snprintf(text, sizeof text,
	                 "dirauth trust v1\nnamespace mix dirauth.example/mix\n"
	                 "namespace mail dirauth.example/mail\nauthority %s\nthreshold 1\n",
	                 identity);
	snprintf(w->bundle, sizeof w->bundle, "%s/trust.txt", w->f.dir);
	test_write_file(w->bundle, text, (size_t)n, 0644);
}

static void world_open(struct world *w)
{
	world_open_with(w, NULL);
}

static void world_close(struct world *w)
{
	lc_close(&w->f);
}

/* The service file of example registration index (its first endpoint naming endpoint.example as
 * its own key), sequence 1, valid for an hour; *r gets the registration it describes. */
static void service_file(struct world *w, unsigned index, char *path, size_t cap, struct registration *r)
{
	struct buffer text;
	char hex[2 * ENDPOINT_ID_SIZE + 1];

	registration_of(&w->f, index, &w->f.provider, 1, 3600, r);
	buffer_init(&text);
	hex_encode(r->service_id, SERVICE_ID_SIZE, hex);
	buffer_appendf(&text,
	               "namespace: mix\nservice: %s\nclass: %s\nsequence: 1\nvalidity_seconds: 3600\n"
	               "endpoints:\n",
	               hex, service_class_name(r->service_class));
	for (size_t e = 0; e < r->endpoint_count; e++) {
		const struct endpoint_descriptor *d = &r->endpoints[e];
		hex_encode(d->endpoint_id, ENDPOINT_ID_SIZE, hex);
		buffer_appendf(&text,
		               "  - id: %s\n    transport: %s\n    address: \"%s\"\n    region: %s\n"
		               "    capacity: %s\n    profile: %s\n",
		               hex, transport_name(d->transport), d->address, d->region,
		               capacity_class_name(d->capacity), capability_profile_name(d->profile));
		if (d->has_key) {
			char key[NOTE_VERIFIER_KEY_MAX + 1];
			note_verifier_format(&d->key, key);
			buffer_appendf(&text, "    key: %s\n", key);
		}
	}
	snprintf(path, cap, "%s/service-%u.yaml", w->f.dir, index);
	test_write_file(path, text.data, text.len, 0644);
	buffer_free(&text);
}

static void run(const struct world *w, const char *const *args, struct test_outcome *outcome)
{
	test_run_program(test_binary_path("ctl/dirauthctl"), args, w->f.dir, outcome);
}

/* Runs args: expects status and words on stdout (0) or in the one stderr line (else). */
static void expect_run(const struct world *w, const char *const *args, int status, const char *words)
{
	struct test_outcome outcome;
	run(w, args, &outcome);
	ck_assert_msg(outcome.status == status, "exit %d, expected %d: %s%s", outcome.status, status,
	              outcome.out, outcome.err);
	const char *where = status == 0 ? outcome.out : outcome.err;
	ck_assert_msg(strstr(where, words) != NULL, "'%s' lacks '%s'", where, words);
	if (status != 0)
		ck_assert_msg(strncmp(outcome.err, "dirauthctl: ", 12) == 0 &&
		                  strchr(outcome.err, '\n') == outcome.err + outcome.err_len - 1,
		              "not one line: %s", outcome.err);
	else
		ck_assert_uint_eq(outcome.err_len, 0);
	test_outcome_free(&outcome);
}

static void register_file(struct world *w, const char *path)
{
	const char *args[] = {"register", "--key", w->provider_key, "--service", path,
	                      "--server", w->url,  "--now",         w->now,      NULL};
	expect_run(w, args, 0, "accepted: service");
}

static void endpoint_hex(const struct registration *r, size_t e, char hex[2 * ENDPOINT_ID_SIZE + 1])
{
	hex_encode(r->endpoints[e].endpoint_id, ENDPOINT_ID_SIZE, hex);
}

START_TEST(test_health_command)
{
	struct world w;
	struct registration r;
	char path[800], e0[65], e1[65], e2[65], state[800], words[1200];
	world_open(&w);
	service_file(&w, 1, path, sizeof path, &r);
	register_file(&w, path);
	endpoint_hex(&r, 0, e0);
	endpoint_hex(&r, 1, e1);
	endpoint_hex(&r, 2, e2);
	snprintf(state, sizeof state, "%s/health-e1.sequence", w.f.dir);

	/* The endpoint's own key says it is draining. */
	const char *draining[] = {
	    "health",   "--key",    w.endpoint_key_path, "--service",  path, "--endpoint", e0,    "--class",
	    "draining", "--signer", "endpoint",          "--sequence", "1",  "--server",   w.url, "--now",
	    w.now,      NULL};
	snprintf(words, sizeof words,
	         "accepted: draining of endpoint %s, sequence 1, signed by the endpoint's own key, in "
	         "the view of epoch 11\n",
	         e0);
	expect_run(&w, draining, 0, words);
	/* The provider says the second is healthy, twice, its sequence kept in a state file. */
	const char *healthy[] = {"health", "--key",   w.provider_key, "--service", path,  "--endpoint",
	                         e1,       "--class", "healthy",      "--state",   state, "--server",
	                         w.url,    "--now",   w.now,          NULL};
	snprintf(words, sizeof words,
	         "accepted: healthy of endpoint %s, sequence 1, signed by the provider key", e1);
	expect_run(&w, healthy, 0, words);
	snprintf(words, sizeof words, "accepted: healthy of endpoint %s, sequence 2,", e1);
	expect_run(&w, healthy, 0, words);
	size_t len = 0;
	char *kept = (char *)test_read_file(state, &len);
	ck_assert_str_eq(kept, "2\n");
	free(kept);
	/* Degraded with a capacity class, sequence from the clock. */
	const char *degraded[] = {"health", "--key",   w.provider_key, "--service",  path,  "--endpoint",
	                          e2,       "--class", "degraded",     "--capacity", "low", "--server",
	                          w.url,    "--now",   w.now,          NULL};
	snprintf(words, sizeof words, "accepted: degraded of endpoint %s, sequence %s,", e2, w.now);
	expect_run(&w, degraded, 0, words);

	/* Refusals. */
	const char *bad_class[] = {"health", "--key",   w.provider_key, "--service", path,  "--endpoint",
	                           e0,       "--class", "fine",         "--server",  w.url, NULL};
	expect_run(&w, bad_class, CTL_EXIT_USAGE, "--class: 'fine': expected healthy, degraded, draining");
	const char *bad_signer[] = {"health",     "--key",    w.provider_key, "--service", path,
	                            "--endpoint", e0,         "--class",      "healthy",   "--signer",
	                            "myself",     "--server", w.url,          NULL};
	expect_run(&w, bad_signer, CTL_EXIT_USAGE, "--signer: 'myself': expected provider or endpoint");
	const char *bad_every[] = {"health",     "--key",    w.provider_key, "--service", path,
	                           "--endpoint", e0,         "--class",      "healthy",   "--every",
	                           "0",          "--server", w.url,          NULL};
	expect_run(&w, bad_every, CTL_EXIT_USAGE, "--every: expected a decimal of at least 1");
	const char *no_class[] = {"health",     "--key", w.provider_key, "--service", path,
	                          "--endpoint", e0,      "--server",     w.url,       NULL};
	expect_run(&w, no_class, CTL_EXIT_USAGE, "--class is required");
	char unknown[65];
	memset(unknown, '4', 64);
	unknown[64] = '\0';
	const char *unknown_endpoint[] = {"health",     "--key", w.provider_key, "--service", path,
	                                  "--endpoint", unknown, "--class",      "healthy",   "--server",
	                                  w.url,        "--now", w.now,          NULL};
	snprintf(words, sizeof words, "health: endpoint %s is not an endpoint of %s", unknown, path);
	expect_run(&w, unknown_endpoint, CTL_EXIT_DATA, words);
	const char *wrong_endpoint_key[] = {
	    "health",  "--key",    w.provider_key, "--service", path,  "--endpoint", e0,    "--class",
	    "healthy", "--signer", "endpoint",     "--server",  w.url, "--now",      w.now, NULL};
	expect_run(&w, wrong_endpoint_key, CTL_EXIT_DATA, "is not the endpoint's own key");
	const char *no_endpoint_key[] = {
	    "health",  "--key",    w.endpoint_key_path, "--service", path,  "--endpoint", e1,    "--class",
	    "healthy", "--signer", "endpoint",          "--server",  w.url, "--now",      w.now, NULL};
	expect_run(&w, no_endpoint_key, CTL_EXIT_DATA, "names no key of its own");
	/* The server's refusals: another provider's key, a sequence not above the last. */
	const char *other_provider[] = {"health",     "--key", w.other_key, "--service", path,
	                                "--endpoint", e0,      "--class",   "healthy",   "--server",
	                                w.url,        "--now", w.now,       NULL};
	expect_run(&w, other_provider, CTL_EXIT_PROTOCOL, "wrong_signer");
	expect_run(&w, draining, CTL_EXIT_PROTOCOL, "replayed");
	/* No server there; two servers of which one is down. */
	const char *down[] = {
	    "health",  "--key",   w.provider_key, "--service",          path,    "--endpoint", e0,
	    "--class", "healthy", "--server",     "http://127.0.0.1:1", "--now", w.now,        NULL};
	expect_run(&w, down, CTL_EXIT_UNAVAILABLE, "health: http://127.0.0.1:1/v1/endpoint-health");
	const char *one_down[] = {
	    "health",  "--key",       w.provider_key, "--service", path,       "--endpoint",         e0,
	    "--class", "unavailable", "--server",     w.url,       "--server", "http://127.0.0.1:1", "--now",
	    w.now,     NULL};
	struct test_outcome outcome;
	run(&w, one_down, &outcome);
	ck_assert_msg(outcome.status == CTL_EXIT_TEMPFAIL, "%d %s %s", outcome.status, outcome.out,
	              outcome.err);
	snprintf(words, sizeof words,
	         "%s accepted: in the view of epoch 11\nhttp://127.0.0.1:1 unreachable: ", w.url);
	ck_assert_msg(strstr(outcome.out, words) != NULL, "%s", outcome.out);
	ck_assert_str_eq(outcome.err, "dirauthctl: health: accepted by 1 of the 2 servers (each server is "
	                              "listed above)\n");
	test_outcome_free(&outcome);

	/* Published: draining by the endpoint's key, healthy (the later statement) by the provider,
	 * then unavailable by the provider, posted last, on the first. */
	publish_epoch(&w.f, 11);
	struct published p;
	published_get(&w.f, 11, &p);
	const struct snapshot_health *h = health_of(&p, &r, 0);
	ck_assert_ptr_nonnull(h);
	ck_assert_int_eq(h->health_class, HEALTH_UNAVAILABLE);
	ck_assert_int_eq(h->signer, HEALTH_SIGNER_PROVIDER);
	h = health_of(&p, &r, 1);
	ck_assert_ptr_nonnull(h);
	ck_assert_int_eq(h->health_class, HEALTH_HEALTHY);
	ck_assert_int_eq(h->signer, HEALTH_SIGNER_PROVIDER);
	struct health_statement s;
	struct note *note = NULL;
	ck_assert_int_eq(health_parse_signed(h->note, h->note_len, &r, &s, &note), 0);
	ck_assert_uint_eq(s.sequence, 2);
	note_free(note);
	h = health_of(&p, &r, 2);
	ck_assert_ptr_nonnull(h);
	ck_assert_int_eq(h->health_class, HEALTH_DEGRADED);
	published_free(&p);
	registration_clear(&r);
	world_close(&w);
}
END_TEST

/* The draining statement of the endpoint's own key, published as such, on its own. */
START_TEST(test_health_draining_by_endpoint_key)
{
	struct world w;
	struct registration r;
	char path[800], e0[65];
	world_open(&w);
	service_file(&w, 2, path, sizeof path, &r);
	register_file(&w, path);
	endpoint_hex(&r, 0, e0);
	const char *draining[] = {
	    "health",   "--key",    w.endpoint_key_path, "--service", path,  "--endpoint", e0,    "--class",
	    "draining", "--signer", "endpoint",          "--server",  w.url, "--now",      w.now, NULL};
	expect_run(&w, draining, 0, "accepted: draining of endpoint");
	publish_epoch(&w.f, 11);
	struct published p;
	published_get(&w.f, 11, &p);
	const struct snapshot_health *h = health_of(&p, &r, 0);
	ck_assert_ptr_nonnull(h);
	ck_assert_int_eq(h->health_class, HEALTH_DRAINING);
	ck_assert_int_eq(h->signer, HEALTH_SIGNER_ENDPOINT);
	ck_assert_ptr_null(health_of(&p, &r, 1));
	published_free(&p);
	registration_clear(&r);
	world_close(&w);
}
END_TEST

/* health --every: a new statement each round until SIGTERM. */
START_TEST(test_health_every)
{
	struct world w;
	struct registration r;
	char path[800], e0[65], state[800], out_path[800];
	world_open(&w);
	service_file(&w, 1, path, sizeof path, &r);
	register_file(&w, path);
	endpoint_hex(&r, 0, e0);
	snprintf(state, sizeof state, "%s/every.sequence", w.f.dir);
	snprintf(out_path, sizeof out_path, "%s/every.out", w.f.dir);

	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || dup2(fd, 1) < 0)
			_exit(127);
		char *const argv[] = {(char *)"dirauthctl",
		                      (char *)"health",
		                      (char *)"--key",
		                      w.provider_key,
		                      (char *)"--service",
		                      path,
		                      (char *)"--endpoint",
		                      e0,
		                      (char *)"--class",
		                      (char *)"healthy",
		                      (char *)"--state",
		                      state,
		                      (char *)"--every",
		                      (char *)"1",
		                      (char *)"--server",
		                      w.url,
		                      (char *)"--now",
		                      w.now,
		                      NULL};
		execv(test_binary_path("ctl/dirauthctl"), argv);
		_exit(127);
	}
	/* Wait for the second round (at most 20 s), then stop it. */
	char *out = NULL;
	size_t len = 0;
	for (int i = 0; i < 200; i++) {
		struct stat info;
		free(out);
		out = stat(out_path, &info) == 0 ? (char *)test_read_file(out_path, &len) : NULL;
		if (out != NULL && strstr(out, "round 2:") != NULL)
			break;
		test_sleep_ms(100);
	}
	ck_assert_msg(out != NULL && strstr(out, "round 2:") != NULL, "%s", out ? out : "(nothing)");
	free(out);
	ck_assert_int_eq(kill(pid, SIGTERM), 0);
	int status = 0;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
	out = (char *)test_read_file(out_path, &len);
	ck_assert_msg(strstr(out, "round 1: sequence 1 healthy: accepted by 1 of 1 servers\n"
	                          "round 2: sequence 2 healthy: accepted by 1 of 1 servers\n") == out,
	              "%s", out);
	ck_assert_msg(strstr(out, "stopped\n") != NULL, "%s", out);
	free(out);
	/* The latest statement is the one published. */
	publish_epoch(&w.f, 11);
	struct published p;
	published_get(&w.f, 11, &p);
	const struct snapshot_health *h = health_of(&p, &r, 0);
	ck_assert_ptr_nonnull(h);
	struct health_statement s;
	ck_assert_int_eq(health_parse_signed(h->note, h->note_len, &r, &s, NULL), 0);
	ck_assert_uint_ge(s.sequence, 2);
	published_free(&p);
	registration_clear(&r);
	world_close(&w);
}
END_TEST

/* The world with example registrations 1 and 2 registered from their service files (paths of
 * cap bytes). */
static void open_with_two_services(struct world *w, char *first_path, struct registration *first,
                                   char *second_path, struct registration *second, size_t cap)
{
	world_open(w);
	service_file(w, 1, first_path, cap, first);
	service_file(w, 2, second_path, cap, second);
	register_file(w, first_path);
	register_file(w, second_path);
}

START_TEST(test_revoke_command)
{
	struct world w;
	struct registration r, second;
	char path[800], second_path[800], e0[65], service_hex[65], words[400];
	open_with_two_services(&w, path, &r, second_path, &second, sizeof path);
	endpoint_hex(&r, 0, e0);
	hex_encode(second.service_id, SERVICE_ID_SIZE, service_hex);

	/* The provider revokes its first endpoint: its key is compromised. */
	const char *revoke[] = {"revoke",     "--key",    w.provider_key, "--service",      path,
	                        "--endpoint", e0,         "--reason",     "key-compromise", "--sequence",
	                        "1",          "--server", w.url,          "--now",          w.now,
	                        NULL};
	{
		struct test_outcome outcome;
		run(&w, revoke, &outcome);
		ck_assert_msg(outcome.status == 0, "%s", outcome.err);
		snprintf(words, sizeof words, "accepted: revoked endpoint %s of service ", e0);
		ck_assert_msg(strstr(outcome.out, words) == outcome.out, "%s", outcome.out);
		ck_assert_ptr_nonnull(strstr(outcome.out,
		                             " (key-compromise), sequence 1, signed by the provider "
		                             "key, in the view of epoch 11\n"));
		test_outcome_free(&outcome);
	}
	/* Refusals: the same again (replayed), a higher sequence (revoked already), a bad reason, an
	 * operator revocation signed by a key that is no operator's. */
	expect_run(&w, revoke, CTL_EXIT_PROTOCOL, "replayed");
	const char *again[] = {"revoke", "--key",    w.provider_key, "--service",  path, "--endpoint",
	                       e0,       "--reason", "retired",      "--sequence", "2",  "--server",
	                       w.url,    "--now",    w.now,          NULL};
	expect_run(&w, again, CTL_EXIT_PROTOCOL, "revoked");
	const char *bad_reason[] = {"revoke",   "--key",   w.provider_key, "--service", path,
	                            "--reason", "because", "--server",     w.url,       NULL};
	expect_run(&w, bad_reason, CTL_EXIT_USAGE, "--reason: 'because': expected key-compromise");
	const char *no_reason[] = {"revoke", "--key",    w.provider_key, "--service",
	                           path,     "--server", w.url,          NULL};
	expect_run(&w, no_reason, CTL_EXIT_USAGE, "--reason is required");
	const char *both[] = {"revoke",      "--key",    w.provider_key, "--service", path,
	                      "--namespace", "mix",      "--service-id", service_hex, "--reason",
	                      "retired",     "--server", w.url,          NULL};
	expect_run(&w, both, CTL_EXIT_USAGE, "not both");
	const char *bad_id[] = {"revoke", "--key",    w.provider_key, "--namespace", "mix", "--service-id",
	                        "xyz",    "--reason", "retired",      "--server",    w.url, NULL};
	expect_run(&w, bad_id, CTL_EXIT_USAGE, "--service-id: expected 64 lower-case hex digits");
	const char *fake_operator[] = {"revoke",
	                               "--key",
	                               w.provider_key,
	                               "--namespace",
	                               "mix",
	                               "--service-id",
	                               service_hex,
	                               "--signer",
	                               "operator",
	                               "--reason",
	                               "operator-action",
	                               "--server",
	                               w.url,
	                               "--now",
	                               w.now,
	                               NULL};
	expect_run(&w, fake_operator, CTL_EXIT_PROTOCOL, "wrong_signer");
	/* An operator revokes the whole second service, with a state file for its numbers. */
	char state[800];
	snprintf(state, sizeof state, "%s/operator.sequence", w.f.dir);
	const char *by_operator[] = {"revoke",
	                             "--key",
	                             w.operator_key_path,
	                             "--namespace",
	                             "mix",
	                             "--service-id",
	                             service_hex,
	                             "--signer",
	                             "operator",
	                             "--reason",
	                             "operator-action",
	                             "--state",
	                             state,
	                             "--server",
	                             w.url,
	                             "--now",
	                             w.now,
	                             NULL};
	snprintf(words, sizeof words,
	         "accepted: revoked service %s (operator-action), sequence 1, signed by the operator key",
	         service_hex);
	expect_run(&w, by_operator, 0, words);

	/* The next snapshot: both services absent (an endpoint revocation takes the registration
	 * naming it out), both revocations listed. */
	publish_epoch(&w.f, 11);
	struct published p;
	published_get(&w.f, 11, &p);
	ck_assert(!has_record(&p, r.service_id));
	ck_assert(!has_record(&p, second.service_id));
	ck_assert_ptr_nonnull(revocation_of(&p, &r, 0));
	ck_assert_ptr_nonnull(revocation_of(&p, &second, -1));
	published_free(&p);
	/* Registering it again does not bring it back. */
	const char *again_register[] = {"register", "--key", w.provider_key, "--service", path,
	                                "--server", w.url,   "--now",        w.now,       NULL};
	expect_run(&w, again_register, CTL_EXIT_PROTOCOL, "revoked");
	registration_clear(&r);
	registration_clear(&second);
	world_close(&w);
}
END_TEST

/* The provider revokes endpoint e of r at sequence. */
static void revoke_endpoint(struct world *w, const char *service_path, const struct registration *r, size_t e,
                            const char *sequence)
{
	char e0[2 * ENDPOINT_ID_SIZE + 1];
	endpoint_hex(r, e, e0);
	const char *revoke[] = {"revoke",     "--key",    w->provider_key, "--service", service_path,
	                        "--endpoint", e0,         "--reason",      "retired",   "--sequence",
	                        sequence,     "--server", w->url,          "--now",     w->now,
	                        NULL};
	expect_run(w, revoke, 0, "accepted: revoked endpoint");
}

/* GET /v1/mix/statements/<the note's SHA-256>: whether the authority holds it. */
static long statement_status(struct world *w, const uint8_t *note, size_t len)
{
	struct buffer held = {.data = (uint8_t *)note, .len = len};
	struct response response;
	char path[256];
	statement_path(&held, path, sizeof path);
	request(&w->f, "GET", path, NULL, 0, 0, NULL, &response);
	long status = response.status;
	response_free(&response);
	return status;
}

/* Runs args, which fail, and expects their stdout to end with counts. */
static void expect_counts(const struct world *w, const char *const *args, const char *counts)
{
	struct test_outcome outcome;
	run(w, args, &outcome);
	size_t len = strlen(counts);
	ck_assert_msg(outcome.out_len >= len && strcmp(outcome.out + outcome.out_len - len, counts) == 0,
	              "'%s' does not end with '%s'", outcome.out, counts);
	test_outcome_free(&outcome);
}

/* The authority restored from backup (a directory store_backup filled) and restarted. */
static void restore(struct world *w, const char *backup)
{
	fixture_stop_serving(&w->f);
	store_close(w->f.store);
	test_remove_tree(w->f.config->data_dir);
	ck_assert_int_eq(rename(backup, w->f.config->data_dir), 0);
	struct store_options options = {.path = w->f.config->data_dir};
	ck_assert_int_eq(store_open(&options, &w->f.store), 0);
	fixture_serve(&w->f);
}

/* A backup of the authority's store taken now, into <dir>/backup (its path in backup). */
static void back_up(struct world *w, char *backup, size_t cap)
{
	snprintf(backup, cap, "%s/backup", w->f.dir);
	ck_assert_int_eq(mkdir(backup, 0700), 0);
	ck_assert_int_eq(store_backup(w->f.store, backup), 0);
}

/* Epoch published, *p its snapshot, its body written to <dir>/<epoch>.body as a mirror keeps it
 * (the path in body_path). */
static void publish_and_keep_body(struct world *w, uint64_t epoch, struct published *p, char *body_path,
                                  size_t cap)
{
	publish_epoch(&w->f, epoch);
	published_get(&w->f, epoch, p);
	snprintf(body_path, cap, "%s/%" PRIu64 ".body", w->f.dir, epoch);
	test_write_file(body_path, p->bytes.data, p->bytes.len, 0644);
}

START_TEST(test_replay_revocations_after_restore)
{
	struct world w;
	struct registration a, b;
	char a_path[800], b_path[800], backup[800], body_path[800], spoiled_path[800];
	open_with_two_services(&w, a_path, &a, b_path, &b, sizeof a_path);
	back_up(&w, backup, sizeof backup);

	/* After the backup the provider revokes an endpoint of each service, the one of the service
	 * listed second in the body first: in the body's order the second revocation comes first. */
	int a_first = memcmp(a.service_id, b.service_id, SERVICE_ID_SIZE) < 0;
	revoke_endpoint(&w, a_first ? b_path : a_path, a_first ? &b : &a, 0, "1");
	revoke_endpoint(&w, a_first ? a_path : b_path, a_first ? &a : &b, 0, "2");
	struct published p;
	publish_and_keep_body(&w, 11, &p, body_path, sizeof body_path);
	ck_assert_uint_eq(p.body->revocation_count, 2);
	/* The same body with the signature of the revocation at sequence 1 (listed second) spoiled. */
	const struct snapshot_revocation *last = &p.body->revocations[1];
	size_t at = (size_t)(last->note - p.bytes.data) + last->note_len - 4;
	uint8_t kept = p.bytes.data[at];
	p.bytes.data[at] = kept == 'A' ? 'B' : 'A';
	snprintf(spoiled_path, sizeof spoiled_path, "%s/spoiled.body", w.f.dir);
	test_write_file(spoiled_path, p.bytes.data, p.bytes.len, 0644);
	p.bytes.data[at] = kept;

	/* The authority restored from the backup: both revocations are lost. */
	restore(&w, backup);
	for (size_t i = 0; i < 2; i++)
		ck_assert_int_eq(
		    statement_status(&w, p.body->revocations[i].note, p.body->revocations[i].note_len), 404);

	/* The spoiled one at sequence 1 is refused and named, and the key's at 2 is not posted. */
	const char *spoiled[] = {"replay-revocations", spoiled_path, "--trust", w.bundle,
	                         "--server",           w.url,        NULL};
	expect_run(&w, spoiled, CTL_EXIT_PROTOCOL,
	           "(sequence 1) was refused, and none of its key's after it was posted: refused: HTTP");
	expect_counts(&w, spoiled, "0 taken, 0 held already, 0 superseded, 1 refused, 1 not posted\n");
	/* Replayed from the mirror's body, lowest sequence first: both taken; then both held. */
	const char *replay[] = {"replay-revocations", body_path, "--trust", w.bundle,
	                        "--server",           w.url,     NULL};
	expect_run(&w, replay, 0,
	           "replay-revocations: mix epoch 11 lists 2 revocations: 2 taken, 0 held already, 0 "
	           "superseded, 0 refused, 0 not posted\n");
	expect_run(&w, replay, 0, "lists 2 revocations: 0 taken, 2 held already, 0 superseded");
	for (size_t i = 0; i < 2; i++)
		ck_assert_int_eq(
		    statement_status(&w, p.body->revocations[i].note, p.body->revocations[i].note_len), 200);
	/* The next snapshot lists both again, and neither service. */
	publish_epoch(&w.f, 12);
	struct published next;
	published_get(&w.f, 12, &next);
	ck_assert_ptr_nonnull(revocation_of(&next, &a, 0));
	ck_assert_ptr_nonnull(revocation_of(&next, &b, 0));
	ck_assert(!has_record(&next, a.service_id) && !has_record(&next, b.service_id));
	published_free(&next);

	/* Refusals. */
	const char *no_server[] = {"replay-revocations", body_path, "--trust", w.bundle, NULL};
	expect_run(&w, no_server, CTL_EXIT_USAGE, "--server is required");
	const char *no_body[] = {"replay-revocations", "--trust", w.bundle, "--server", w.url, NULL};
	expect_run(&w, no_body, CTL_EXIT_USAGE, "BODY is required");
	const char *two[] = {
	    "replay-revocations", body_path, "--trust", w.bundle, "--server", w.url, "--server",
	    "http://127.0.0.1:1", NULL};
	expect_run(&w, two, CTL_EXIT_USAGE, "one --server");
	const char *missing[] = {
	    "replay-revocations", "/nonexistent/11.body", "--trust", w.bundle, "--server", w.url, NULL};
	expect_run(&w, missing, CTL_EXIT_NO_INPUT, "no such file");
	const char *not_body[] = {"replay-revocations", w.bundle, "--trust", w.bundle,
	                          "--server",           w.url,    NULL};
	expect_run(&w, not_body, CTL_EXIT_DATA, "not a snapshot body");
	char away[64];
	snprintf(away, sizeof away, "http://127.0.0.1:%u", test_free_port());
	const char *unreachable[] = {"replay-revocations", body_path, "--trust", w.bundle,
	                             "--server",           away,      NULL};
	expect_run(&w, unreachable, CTL_EXIT_UNAVAILABLE, away);

	published_free(&p);
	registration_clear(&a);
	registration_clear(&b);
	world_close(&w);
}
END_TEST

/* A revocation that a later one of its key passed over since the restore cannot be replayed:
 * superseded, and said so. */
START_TEST(test_replay_superseded_revocation)
{
	struct world w;
	struct registration a, b;
	char a_path[800], b_path[800], backup[800], body_path[800];
	open_with_two_services(&w, a_path, &a, b_path, &b, sizeof a_path);
	publish_epoch(&w.f, 11); /* the backup holds a snapshot: the namespace is served after the restore */
	back_up(&w, backup, sizeof backup);
	revoke_endpoint(&w, a_path, &a, 0, "1");
	struct published p;
	publish_and_keep_body(&w, 12, &p, body_path, sizeof body_path);
	restore(&w, backup);
	/* Before the replay the provider revokes another endpoint, at a higher sequence. */
	revoke_endpoint(&w, a_path, &a, 1, "2");
	const char *replay[] = {"replay-revocations", body_path, "--trust", w.bundle,
	                        "--server",           w.url,     NULL};
	expect_run(&w, replay, CTL_EXIT_PROTOCOL,
	           "(sequence 1) cannot be taken: a later revocation by its key is held; revoke it again");
	expect_counts(&w, replay, "0 taken, 0 held already, 1 superseded, 0 refused, 0 not posted\n");
	ck_assert_int_eq(statement_status(&w, p.body->revocations[0].note, p.body->revocations[0].note_len),
	                 404);
	published_free(&p);
	registration_clear(&a);
	registration_clear(&b);
	world_close(&w);
}
END_TEST

/* In a private namespace a statement not shown and one not held look alike (404): without the
 * capability, a revocation answered as replayed stops the replay, which says why; with it, the
 * revocation is held. */
START_TEST(test_replay_in_a_private_namespace)
{
	static const char secret[] = "cmVwbGF5LWluLWEtcHJpdmF0ZS1uYW1lc3BhY2UtMDE=";
	struct world w;
	struct registration r;
	uint8_t digest[32];
	char hex[65], path[800], backup[800], body_path[800], capability[800];
	ck_assert_int_eq(crypto_sha256((const uint8_t *)secret, strlen(secret), digest), 0);
	hex_encode(digest, sizeof digest, hex);
	world_open_with(&w, hex);
	ck_assert(config_namespace_is_private(w.f.config, 0));
	snprintf(capability, sizeof capability, "%s/mix.capability", w.f.dir);
	test_write_file(capability, secret, strlen(secret), 0600);
	service_file(&w, 1, path, sizeof path, &r);
	register_file(&w, path);
	back_up(&w, backup, sizeof backup);
	revoke_endpoint(&w, path, &r, 0, "1");
	struct published p;
	publish_and_keep_body(&w, 11, &p, body_path, sizeof body_path);
	ck_assert_uint_eq(p.body->revocation_count, 1);
	restore(&w, backup);

	/* Lost in the restore, so taken without asking whether it is held. */
	const char *replay[] = {"replay-revocations", body_path, "--trust", w.bundle,
	                        "--server",           w.url,     NULL};
	expect_run(&w, replay, 0, "lists 1 revocation: 1 taken, 0 held already, 0 superseded");
	/* Posted again it is replayed, and whether it is held cannot be read without the capability. */
	char words[300];
	snprintf(words, sizeof words,
	         "replay-revocations: %s serves no snapshot of mix to this client (a private namespace "
	         "needs --capability-file): whether a revocation is held cannot be told",
	         w.url);
	expect_run(&w, replay, CTL_EXIT_PROTOCOL, words);
	const char *with_capability[] = {
	    "replay-revocations", body_path,  "--trust", w.bundle, "--server", w.url,
	    "--capability-file",  capability, NULL};
	expect_run(&w, with_capability, 0, "lists 1 revocation: 0 taken, 1 held already, 0 superseded");

	published_free(&p);
	registration_clear(&r);
	world_close(&w);
}
END_TEST

START_TEST(test_deregister_command)
{
	struct world w;
	struct registration r;
	char path[800], receipts[800], words[1800], expected_path[1200];
	world_open(&w);
	service_file(&w, 3, path, sizeof path, &r);
	register_file(&w, path);
	snprintf(receipts, sizeof receipts, "%s/receipts", w.f.dir);
	ck_assert_int_eq(mkdir(receipts, 0755), 0);
	char service_hex[65];
	hex_encode(r.service_id, SERVICE_ID_SIZE, service_hex);

	/* Refusals first: another provider's key (the server's 403), several servers without a trust
	 * bundle, a trust bundle pinning another authority (the receipt does not verify). */
	const char *other[] = {"deregister", "--key",      w.other_key, "--service", path,  "--server",
	                       w.url,        "--receipts", receipts,    "--now",     w.now, NULL};
	expect_run(&w, other, CTL_EXIT_PROTOCOL, "wrong_signer");
	const char *several[] = {"deregister", "--key", w.provider_key, "--service",          path,
	                         "--server",   w.url,   "--server",     "http://127.0.0.1:1", "--now",
	                         w.now,        NULL};
	expect_run(&w, several, CTL_EXIT_USAGE, "several --server need --trust");
	const char *wrong_option[] = {"deregister", "--key",   w.provider_key, "--service", path,
	                              "--class",    "healthy", "--server",     w.url,       NULL};
	expect_run(&w, wrong_option, CTL_EXIT_USAGE, "an option of another command");

	/* Accepted: the receipt verified against the authority's certificate and kept. */
	const char *withdraw[] = {"deregister", "--key", w.provider_key, "--service", path,
	                          "--server",   w.url,   "--trust",      w.bundle,    "--receipts",
	                          receipts,     "--now", w.now,          NULL};
	snprintf(expected_path, sizeof expected_path,
	         "%s/%s-1.authority1.dirauth.example.deregistration-receipt", receipts, service_hex);
	snprintf(words, sizeof words,
	         "accepted: service %s withdrawn up to sequence 1, last listed in epoch 10, receipt signed "
	         "by authority1.dirauth.example, kept in %s\n",
	         service_hex, expected_path);
	expect_run(&w, withdraw, 0, words);
	size_t len = 0;
	uint8_t *kept = test_read_file(expected_path, &len);
	ck_assert_ptr_nonnull(kept);
	struct note *note = NULL;
	struct deregistration_receipt receipt;
	ck_assert_int_eq(note_parse(kept, len, &note), 0);
	ck_assert_int_eq(note_verify_threshold(note, &w.f.signer_process.signing, 1, 1), 0);
	ck_assert_int_eq(deregistration_receipt_parse(note->text, note->text_len, &receipt), 0);
	ck_assert_uint_eq(receipt.last_listed_epoch, 10);
	ck_assert_mem_eq(receipt.service_id, r.service_id, SERVICE_ID_SIZE);
	note_free(note);
	free(kept);
	/* Again: the same sequence withdraws nothing more (the server's 409). */
	expect_run(&w, withdraw, CTL_EXIT_PROTOCOL, "replayed");

	/* The promise kept: absent from the snapshot after the last-listed epoch, and later ones. */
	publish_epoch(&w.f, 11);
	struct published p;
	published_get(&w.f, 11, &p);
	ck_assert(!has_record(&p, r.service_id));
	published_free(&p);
	publish_epoch(&w.f, 12);
	published_get(&w.f, 12, &p);
	ck_assert(!has_record(&p, r.service_id));
	published_free(&p);
	registration_clear(&r);
	world_close(&w);
}
END_TEST

/* A receipt that does not verify under the bundle given is refused, and not kept. */
START_TEST(test_deregister_receipt_refused)
{
	struct world w;
	struct registration r;
	char path[800], receipts[800], bundle[800];
	world_open(&w);
	service_file(&w, 1, path, sizeof path, &r);
	register_file(&w, path);
	snprintf(receipts, sizeof receipts, "%s/receipts", w.f.dir);
	ck_assert_int_eq(mkdir(receipts, 0755), 0);
	/* A bundle pinning another identity than the authority's. */
	char text[1024];
	int n = snprintf(text, sizeof text,
	                 "dirauth trust v1\nnamespace mix dirauth.example/mix\nauthority %s\nthreshold 1\n",
	                 test_key_verifier_string(&w.f.stranger));
	snprintf(bundle, sizeof bundle, "%s/other-trust.txt", w.f.dir);
	test_write_file(bundle, text, (size_t)n, 0644);
	const char *withdraw[] = {"deregister", "--key", w.provider_key, "--service", path,
	                          "--server",   w.url,   "--trust",      bundle,      "--receipts",
	                          receipts,     "--now", w.now,          NULL};
	expect_run(&w, withdraw, CTL_EXIT_DATA,
	           "deregister: receipt: signed by a key not certified by any pinned identity");
	DIR *listing = opendir(receipts);
	struct dirent *entry;
	while ((entry = readdir(listing)) != NULL)
		ck_assert_msg(entry->d_name[0] == '.', "kept %s", entry->d_name);
	closedir(listing);
	registration_clear(&r);
	world_close(&w);
}
END_TEST

static Suite *dirauthctl_endpoint_suite(void)
{
	Suite *suite = suite_create("dirauthctl_endpoint");
	TCase *tc = tcase_create("dirauthctl_endpoint");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_health_command);
	tcase_add_test(tc, test_health_draining_by_endpoint_key);
	tcase_add_test(tc, test_health_every);
	tcase_add_test(tc, test_revoke_command);
	tcase_add_test(tc, test_replay_revocations_after_restore);
	tcase_add_test(tc, test_replay_superseded_revocation);
	tcase_add_test(tc, test_replay_in_a_private_namespace);
	tcase_add_test(tc, test_deregister_command);
	tcase_add_test(tc, test_deregister_receipt_refused);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	SRunner *runner = srunner_create(dirauthctl_endpoint_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	curl_global_cleanup();
	return failures ? 1 : 0;
}
