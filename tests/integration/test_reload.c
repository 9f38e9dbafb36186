/*
 * test_reload.c: dirauthd reloads its configuration on SIGHUP while providers register.
 *
 * One real dirauthd and dirauth-signer (tests/harness/launcher.h) on a file clock, started by a
 * "service manager" (a datagram socket in $NOTIFY_SOCKET, as systemd's). Three threads register
 * services of an enrolled provider as fast as the authority answers, each its own service with a
 * growing sequence, while the test reloads the configuration with SIGHUP:
 *   - enrolling a second provider: once the manager hears READY=1, its registration is accepted;
 *   - a file that does not load: refused, the running configuration kept (the second provider
 *     still registers), one log line with FILE:LINE;
 *   - a changed listen port, which needs a restart: one log line, the port kept, the rest applied;
 *   - the same file eight times over, back to back;
 * and each reload is RELOADING=1 with MONOTONIC_USEC (between the signal and READY=1), then
 * READY=1. Then: no registration of the load was refused, and the next snapshot holds every
 * service at a sequence no lower than the last acknowledged (nothing acknowledged was lost).
 * Finally a reload that withdraws the second provider: its next registration is refused; and
 * dirauth-signer, at SIGHUP, says it reloads nothing and keeps signing.
 */
#include "base/buffer.h"
#include "base/error.h"
#include "schema/note.h"
#include "schema/registration.h"
#include "schema/snapshot.h"
#include "signer/key.h"
#include "tests/harness/launcher.h"
#include "test_example_authority.h"
#include "test_http.h"
#include "test_keys.h"
#include "test_support.h"

#include <check.h>
#include <curl/curl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define EPOCH_LENGTH 60
#define START_TIME   1800000000ULL /* a multiple of EPOCH_LENGTH */
#define WORKERS      3
#define OTHER_BASE   100 /* the second provider's services: 100, 101, ... */

struct reload_run {
	struct launcher run;
	struct test_key provider, other;
	char providers_one[1024], providers_two[2048];
	int manager; /* the service manager's socket */
};

/* dirauthd's configuration (and the signer's) as the launcher as would write it, with tail (the
 * providers section, and anything else) at its end. */
static void write_config(const struct launcher *as, const char *tail)
{
	struct run_directory_signer signer = {"authority1.dirauth.example", "authority1.key",
	                                      "authority1.cert", 0, 0};
	const struct launcher_namespace mix = {"mix", NULL};
	launcher_write_configs(as, &signer, EPOCH_LENGTH, 3, &mix, 1, tail);
}

static void manager_open(struct reload_run *r)
{
	char path[LAUNCHER_PATH_MAX + 16];
	snprintf(path, sizeof path, "%s/notify.sock", r->run.dir);
	struct sockaddr_un address = {.sun_family = AF_UNIX};
	ck_assert_uint_lt(strlen(path), sizeof address.sun_path);
	strcpy(address.sun_path, path);
	r->manager = socket(AF_UNIX, SOCK_DGRAM, 0);
	ck_assert_int_ge(r->manager, 0);
	ck_assert_int_eq(bind(r->manager, (struct sockaddr *)&address, sizeof address), 0);
	ck_assert_int_eq(setenv("NOTIFY_SOCKET", path, 1), 0);
}

/* The next message to the manager within 10 s; "" when none came. */
static void manager_receive(const struct reload_run *r, char *out, size_t cap)
{
	struct pollfd p = {.fd = r->manager, .events = POLLIN};
	out[0] = 0;
	if (poll(&p, 1, 10000) != 1)
		return;
	ssize_t n = recv(r->manager, out, cap - 1, 0);
	out[n > 0 ? n : 0] = 0;
}

static unsigned long long monotonic_usec(void)
{
	struct timespec now;
	ck_assert_int_eq(clock_gettime(CLOCK_MONOTONIC, &now), 0);
	return (unsigned long long)now.tv_sec * 1000000ull + (unsigned long long)now.tv_nsec / 1000ull;
}

/* SIGHUP, then what the manager hears: RELOADING=1 stamped between the signal and READY=1, then
 * READY=1. Returns once dirauthd has said READY=1. */
static void reload_and_wait(struct reload_run *r)
{
	char got[2][600];
	unsigned long long before = monotonic_usec();
	ck_assert_int_eq(kill(r->run.pid, SIGHUP), 0);
	manager_receive(r, got[0], sizeof got[0]);
	manager_receive(r, got[1], sizeof got[1]);
	unsigned long long after = monotonic_usec(), usec = 0;
	int consumed = 0;
	ck_assert_msg(sscanf(got[0], "RELOADING=1\nMONOTONIC_USEC=%llu\n%n", &usec, &consumed) == 1 &&
	                  consumed > 0,
	              "first message: '%s'", got[0]);
	ck_assert_str_eq(got[0] + consumed, "STATUS=reloading the configuration");
	ck_assert_msg(usec >= before && usec <= after, "MONOTONIC_USEC %llu not in [%llu, %llu]", usec,
	              before, after);
	ck_assert_str_eq(got[1], "READY=1\nSTATUS=serving");
}

/* Registration number index of key at sequence, issued at the authority's time. */
static void registration_note(const struct test_key *key, unsigned index, uint64_t sequence,
                              struct buffer *out)
{
	struct registration reg;
	test_example_registration(index, "mix", key, &reg);
	reg.sequence = sequence;
	reg.issued_at = START_TIME;
	reg.expires = START_TIME + 86400;
	buffer_init(out);
	test_sign_registration(&reg, key, out);
	registration_clear(&reg);
}

/* POSTs a note; the HTTP status, -1 without an answer. */
static long post(const char *base_url, const struct buffer *note)
{
	char url[128];
	snprintf(url, sizeof url, "%s/v1/registrations", base_url);
	CURL *curl = curl_easy_init();
	ck_assert_ptr_nonnull(curl);
	struct curl_slist *headers = curl_slist_append(NULL, "Expect:");
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(curl, CURLOPT_POSTFIELDS, (const char *)note->data);
	curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, (long)note->len);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT, 30L);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	FILE *sink = fopen("/dev/null", "w");
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, sink);
	long status = -1;
	if (curl_easy_perform(curl) == CURLE_OK)
		curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	fclose(sink);
	curl_slist_free_all(headers);
	curl_easy_cleanup(curl);
	return status;
}

static long register_one(const struct reload_run *r, const struct test_key *key, unsigned index,
                         uint64_t sequence)
{
	struct buffer note;
	registration_note(key, index, sequence, &note);
	long status = post(r->run.url, &note);
	buffer_free(&note);
	return status;
}

struct load {
	const struct reload_run *r;
	atomic_int stop;
	atomic_uint_fast64_t acknowledged[WORKERS]; /* the last sequence answered 202, per worker */
	atomic_uint refused;                        /* answers other than 202 */
	atomic_long first_refusal;
};

struct worker {
	struct load *load;
	unsigned index;
};

static void *worker_run(void *argument)
{
	struct worker *w = argument;
	struct load *load = w->load;
	for (uint64_t sequence = 1; !atomic_load(&load->stop); sequence++) {
		long status = register_one(load->r, &load->r->provider, w->index + 1, sequence);
		if (status == 202) {
			atomic_store(&load->acknowledged[w->index], sequence);
		} else {
			long none = 0;
			atomic_compare_exchange_strong(&load->first_refusal, &none, status);
			atomic_fetch_add(&load->refused, 1);
		}
	}
	return NULL;
}

static int log_has(const struct reload_run *r, const char *needle)
{
	size_t len = 0;
	char *text = (char *)test_read_file(r->run.log_path, &len);
	int found = strstr(text, needle) != NULL;
	free(text);
	return found;
}

static uint64_t acknowledged_total(struct load *load)
{
	uint64_t total = 0;
	for (unsigned i = 0; i < WORKERS; i++)
		total += atomic_load(&load->acknowledged[i]);
	return total;
}

/* Lets the load run until it has acknowledged more registrations. */
static void let_the_load_run(struct load *load)
{
	uint64_t from = acknowledged_total(load);
	for (int waited = 0; acknowledged_total(load) < from + 2 * WORKERS; waited++) {
		ck_assert_msg(waited < 20000, "the load stalled at %llu", (unsigned long long)from);
		test_sleep_ms(1);
	}
}

/* The published snapshot of epoch, its body parsed. */
static struct snapshot_body *published_body(const struct reload_run *r, uint64_t epoch, struct buffer *raw)
{
	char url[160];
	snprintf(url, sizeof url, "%s/v1/mix/snapshots/latest", r->run.url);
	struct snapshot_header header;
	for (int attempt = 0;; attempt++) {
		ck_assert_msg(attempt < 1000, "no snapshot of epoch %llu; see %s", (unsigned long long)epoch,
		              r->run.log_path);
		struct test_http_response response;
		if (test_http_get(url, &response) == CURLE_OK && response.status == 200) {
			struct note *parsed = NULL;
			ck_assert_int_eq(note_parse(response.body.data, response.body.len, &parsed), 0);
			ck_assert_int_eq(snapshot_header_parse(parsed->text, parsed->text_len, &header), 0);
			note_free(parsed);
			if (header.epoch >= epoch) {
				buffer_free(&response.body);
				break;
			}
		}
		buffer_free(&response.body);
		test_sleep_ms(20);
	}
	snprintf(url, sizeof url, "%s/v1/mix/snapshots/%llu/body", r->run.url,
	         (unsigned long long)header.epoch);
	struct test_http_response response;
	ck_assert(test_http_get(url, &response) == CURLE_OK);
	ck_assert_int_eq(response.status, 200);
	ck_assert_int_eq(snapshot_body_verify(&header, response.body.data, response.body.len, 1000), 0);
	struct snapshot_body *body = NULL;
	ck_assert_int_eq(snapshot_body_parse(response.body.data, response.body.len, 1000, &body), 0);
	*raw = response.body;
	return body;
}

/* The sequence body publishes for key's registration number index; 0 when absent. */
static uint64_t published_sequence(const struct snapshot_body *body, const struct test_key *key,
                                   unsigned index)
{
	struct registration expected;
	test_example_registration(index, "mix", key, &expected);
	uint64_t sequence = 0;
	for (size_t i = 0; i < body->record_count; i++) {
		if (memcmp(body->records[i].service_id, expected.service_id, SERVICE_ID_SIZE) != 0)
			continue;
		struct registration published;
		ck_assert_int_eq(registration_parse_signed(body->records[i].note, body->records[i].note_len,
		                                           &published, NULL),
		                 0);
		sequence = published.sequence;
		registration_clear(&published);
	}
	registration_clear(&expected);
	return sequence;
}

START_TEST(test_reload_during_registrations)
{
	struct reload_run r;
	memset(&r, 0, sizeof r);
	char dir[256];
	test_make_tempdir(dir, sizeof dir);
	launcher_lay_out(&r.run, dir);
	char command[1024];
	snprintf(command, sizeof command, "bash '%s' '%s/keys' >/dev/null",
	         test_source_path("scripts/example-keys.sh"), r.run.dir);
	ck_assert_msg(system(command) == 0, "example-keys.sh failed");
	test_write_authority_certificate(r.run.dir, START_TIME - 86400, START_TIME + 30 * 86400);
	launcher_set_clock(&r.run, START_TIME);
	test_key_load(TEST_KEY_PROVIDER, &r.provider);
	test_key_load(TEST_KEY_OTHER, &r.other);
	snprintf(r.providers_one, sizeof r.providers_one,
	         "providers:\n  - { key: \"%s\", namespaces: [mix], classes: [mix-gateway] }\n",
	         test_key_verifier_string(&r.provider));
	snprintf(r.providers_two, sizeof r.providers_two,
	         "%s  - { key: \"%s\", namespaces: [mix], classes: [mix-gateway] }\n", r.providers_one,
	         test_key_verifier_string(&r.other));
	write_config(&r.run, r.providers_one);

	manager_open(&r);
	launcher_start(&r.run);
	unsetenv("NOTIFY_SOCKET");
	char got[2][600];
	manager_receive(&r, got[0], sizeof got[0]); /* the signer's READY=1 */
	manager_receive(&r, got[1], sizeof got[1]);
	ck_assert_str_eq(got[1], "READY=1\nSTATUS=serving");
	ck_assert_int_eq(register_one(&r, &r.other, OTHER_BASE, 1), 403); /* not enrolled yet */

	struct load load;
	memset(&load, 0, sizeof load);
	load.r = &r;
	pthread_t threads[WORKERS];
	struct worker workers[WORKERS];
	for (unsigned i = 0; i < WORKERS; i++) {
		workers[i] = (struct worker){&load, i};
		ck_assert_int_eq(pthread_create(&threads[i], NULL, worker_run, &workers[i]), 0);
	}
	let_the_load_run(&load);

	/* (a) The second provider enrolled: accepted as soon as dirauthd said READY=1. */
	write_config(&r.run, r.providers_two);
	reload_and_wait(&r);
	ck_assert_int_eq(register_one(&r, &r.other, OTHER_BASE, 1), 202);
	ck_assert(
	    log_has(&r, "reload: applied providers (2 providers enrolled); 0 changed keys need a restart"));
	let_the_load_run(&load);

	/* (b) A file that does not load: refused whole, with its line; the second provider stays. */
	char broken[4096], expected[LAUNCHER_PATH_MAX + 128];
	snprintf(broken, sizeof broken, "%sbogus_key: 1\n", r.providers_two);
	write_config(&r.run, broken);
	reload_and_wait(&r);
	snprintf(expected, sizeof expected,
	         "reload: refused, kept the running configuration: %s:11: ", r.run.config_path);
	ck_assert_msg(log_has(&r, expected), "no '%s' in %s", expected, r.run.log_path);
	ck_assert_int_eq(register_one(&r, &r.other, OTHER_BASE + 1, 1), 202);
	let_the_load_run(&load);

	/* (c) Another listen port, which needs a restart: said, kept; the rest applied. */
	struct launcher moved = r.run;
	moved.port = r.run.port == 65535 ? r.run.port - 1 : r.run.port + 1;
	write_config(&moved, r.providers_two);
	reload_and_wait(&r);
	snprintf(expected, sizeof expected, "reload: listen.port changed; needs a restart; kept %u",
	         r.run.port);
	ck_assert_msg(log_has(&r, expected), "no '%s' in %s", expected, r.run.log_path);
	ck_assert(
	    log_has(&r, "reload: applied no change (2 providers enrolled); 1 changed keys need a restart"));
	ck_assert_int_eq(register_one(&r, &r.other, OTHER_BASE + 2, 1), 202);
	let_the_load_run(&load);

	/* Reloads back to back under the load: each replaces the configuration requests read. */
	write_config(&r.run, r.providers_two);
	for (int i = 0; i < 8; i++)
		reload_and_wait(&r);
	let_the_load_run(&load);

	atomic_store(&load.stop, 1);
	for (unsigned i = 0; i < WORKERS; i++)
		pthread_join(threads[i], NULL);
	fprintf(stderr, "test_reload: %llu registrations acknowledged by %d workers across 11 reloads\n",
	        (unsigned long long)acknowledged_total(&load), WORKERS);
	ck_assert_msg(atomic_load(&load.refused) == 0, "%u registrations refused, the first with %ld",
	              atomic_load(&load.refused), atomic_load(&load.first_refusal));

	/* Nothing acknowledged was lost: the next snapshot holds every service at its last
	 * acknowledged sequence or later. */
	uint64_t epoch = START_TIME / EPOCH_LENGTH + 1;
	launcher_set_clock(&r.run, epoch * EPOCH_LENGTH);
	struct buffer raw;
	struct snapshot_body *body = published_body(&r, epoch, &raw);
	for (unsigned i = 0; i < WORKERS; i++) {
		uint64_t acknowledged = atomic_load(&load.acknowledged[i]);
		ck_assert_uint_gt(acknowledged, 0);
		ck_assert_uint_ge(published_sequence(body, &r.provider, i + 1), acknowledged);
	}
	for (unsigned i = 0; i < 3; i++)
		ck_assert_uint_eq(published_sequence(body, &r.other, OTHER_BASE + i), 1);
	ck_assert_uint_eq(body->record_count, WORKERS + 3);
	snapshot_body_free(body);
	buffer_free(&raw);

	/* The second provider withdrawn by a reload: refused from its READY=1 on. */
	write_config(&r.run, r.providers_one);
	reload_and_wait(&r);
	ck_assert_int_eq(register_one(&r, &r.other, OTHER_BASE + 3, 1), 403);
	ck_assert_int_eq(register_one(&r, &r.provider, WORKERS + 1, 1), 202);

	/* The signer reloads nothing at SIGHUP: it says so and keeps signing (a receipt). */
	ck_assert_int_eq(kill(r.run.signer_pid, SIGHUP), 0);
	for (int waited = 0;; waited++) {
		size_t len = 0;
		char *text = (char *)test_read_file(r.run.signer_log_path, &len);
		int said = strstr(text, "SIGHUP: nothing reloaded") != NULL;
		free(text);
		if (said)
			break;
		ck_assert_msg(waited < 500, "the signer never answered SIGHUP; see %s",
		              r.run.signer_log_path);
		test_sleep_ms(10);
	}
	ck_assert_int_eq(register_one(&r, &r.provider, WORKERS + 2, 1), 202);

	/* Still one process, still serving on its first port; it stops as it should. */
	if (getenv("TEST_RELOAD_SHOW_LOG")) {
		size_t len = 0;
		char *text = (char *)test_read_file(r.run.log_path, &len);
		fprintf(stderr, "%s", text);
		free(text);
	}
	ck_assert_int_eq(launcher_stop_dirauthd(&r.run, SIGTERM), 0);
	close(r.manager);
	launcher_stop(&r.run);
	test_key_free(&r.provider);
	test_key_free(&r.other);
	test_remove_tree(r.run.dir);
}
END_TEST

static Suite *reload_suite(void)
{
	Suite *suite = suite_create("reload");
	TCase *tc = tcase_create("end_to_end");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_reload_during_registrations);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	SRunner *runner = srunner_create(reload_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	curl_global_cleanup();
	return failures ? 1 : 0;
}
