/*
 * test_authority.c: one authority end to end, as its users see it.
 *
 * Each test starts the real dirauth-signer binary (the example signing key, a certificate for it
 * issued here by the example identity key, its own ledger) and the real dirauthd binary on a
 * loopback port, with a real LMDB data directory and one file clock for both (so epochs advance
 * when the test writes the clock file, without sleeping), talks to dirauthd over HTTP with
 * libcurl, and checks what a provider, a mirror and an operator rely on:
 *   - a provider registers two services and gets signed receipts that promise an epoch;
 *   - that epoch's snapshot appears, and `dirauthctl fetch`, pinning only the identity key,
 *     verifies it through the certificates dirauthd serves, and writes it;
 *   - dirauthd killed with SIGKILL in the middle of a burst of registrations loses none that
 *     received a 202, and no sequence goes backwards after the restart;
 *   - with the signer killed, dirauthd keeps serving snapshots, is not ready, and refuses
 *     registrations without storing them; with the signer back, it is ready again and publishes
 *     the epoch it could not sign;
 *   - after a publication dirauthd builds the diff to the new body from the one before, and a
 *     mirror holding the old body rebuilds the new one from it byte for byte; and the epoch's
 *     record shards, from which `dirauthctl lookup` verifies a present service (exit 0, its
 *     endpoints) and an absent one (exit 1) without the body, and whose route refuses a
 *     malformed shard name (400) and one of another width (404);
 *   - every line of dirauthd's log, the signer's log and its audit log has the shape
 *     docs/operating.md gives it ("Logs"): the real time in UTC to the millisecond, the epoch it
 *     concerns, the program, the sentence.
 */
#include "test_example_authority.h"
#include "test_support.h"
#include "tests/harness/launcher.h"

#include "base/buffer.h"
#include "compress/compress.h"
#include "schema/certificate.h"
#include "crypto/crypto.h"
#include "schema/encoding.h"
#include "base/error.h"
#include "signer/key.h"
#include "schema/note.h"
#include "schema/receipt.h"
#include "schema/registration.h"
#include "schema/snapshot.h"
#include "schema/snapshot_diff.h"

#include <check.h>
#include <curl/curl.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <regex.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define EPOCH_LENGTH 60
#define START_TIME   1800000000ULL /* a multiple of EPOCH_LENGTH: epoch 30000000 starts here */

struct authority {
	struct launcher run;
	char verifier[NOTE_VERIFIER_KEY_MAX + 1];          /* the signing key: signs receipts, headers */
	char identity_verifier[NOTE_VERIFIER_KEY_MAX + 1]; /* the identity key: what mirrors pin */
	struct signer_key *provider_a;
	struct signer_key *provider_b;
};

struct http_response {
	long status;
	struct buffer body;
};

static size_t http_collect(char *data, size_t size, size_t count, void *context)
{
	struct buffer *body = context;
	if (buffer_append(body, data, size * count) != 0)
		return 0;
	return size * count;
}

/* One HTTP request; body may be NULL for a GET. Returns the curl result. */
static CURLcode http_request(const char *url, const uint8_t *body, size_t body_len, const char *header,
                             struct http_response *response)
{
	CURL *curl = curl_easy_init();
	ck_assert(curl != NULL);
	struct curl_slist *headers = NULL;
	if (header)
		headers = curl_slist_append(headers, header);
	headers = curl_slist_append(headers, "Expect:");
	buffer_init(&response->body);
	response->status = 0;
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, http_collect);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, &response->body);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT, 30L);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	if (body) {
		curl_easy_setopt(curl, CURLOPT_POSTFIELDS, (const char *)body);
		curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, (long)body_len);
	}
	CURLcode rc = curl_easy_perform(curl);
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response->status);
	curl_slist_free_all(headers);
	curl_easy_cleanup(curl);
	return rc;
}

static int contains(const uint8_t *haystack, size_t haystack_len, const uint8_t *needle, size_t needle_len)
{
	for (size_t i = 0; needle_len <= haystack_len && i <= haystack_len - needle_len; i++)
		if (memcmp(haystack + i, needle, needle_len) == 0)
			return 1;
	return 0;
}

static void format_verifier(const struct signer_key *key, char out[NOTE_VERIFIER_KEY_MAX + 1])
{
	note_verifier_format(signer_key_verifier(key), out);
}

/* Lays out keys, config and clock in a fresh directory; does not start the daemon. */
static void authority_prepare(struct authority *a)
{
	char dir[256];
	memset(a, 0, sizeof(*a));
	test_make_tempdir(dir, sizeof(dir));
	launcher_lay_out(&a->run, dir);
	char command[1024];
	snprintf(command, sizeof(command), "bash '%s' '%s/keys' >/dev/null",
	         test_source_path("scripts/example-keys.sh"), a->run.dir);
	ck_assert_msg(system(command) == 0, "example-keys.sh failed");

	/* The identity key certifies the signing key for a month around the test's time. */
	struct signer_key *authority = test_run_key(a->run.dir, "authority1.key");
	struct signer_key *identity = test_run_key(a->run.dir, "authority1-identity.key");
	format_verifier(authority, a->verifier);
	format_verifier(identity, a->identity_verifier);
	test_write_authority_certificate(a->run.dir, START_TIME - 86400, START_TIME + 30 * 86400);
	signer_key_free(authority);
	signer_key_free(identity);
	a->provider_a = test_run_key(a->run.dir, "provider-a.key");
	a->provider_b = test_run_key(a->run.dir, "provider-b.key");
	char verifier_a[NOTE_VERIFIER_KEY_MAX + 1], verifier_b[NOTE_VERIFIER_KEY_MAX + 1];
	format_verifier(a->provider_a, verifier_a);
	format_verifier(a->provider_b, verifier_b);

	launcher_set_clock(&a->run, START_TIME);

	struct run_directory_signer signer = {"authority1.dirauth.example", "authority1.key",
	                                      "authority1.cert", 0, 0};
	const struct launcher_namespace mix = {"mix", NULL};
	char providers[1024];
	snprintf(providers, sizeof providers,
	         "providers:\n"
	         "  - { key: \"%s\", namespaces: [mix], classes: [mix-gateway] }\n"
	         "  - { key: \"%s\", namespaces: [mix], classes: [bridge, mailbox-provider] }\n",
	         verifier_a, verifier_b);
	launcher_write_configs(&a->run, &signer, EPOCH_LENGTH, 3, &mix, 1, providers);
}

/* Polls GET /v1/ready until it answers status (dirauthd caches the signer's state ~1 s). */
static void wait_ready(const struct authority *a, long status)
{
	char url[128];
	snprintf(url, sizeof(url), "%s/v1/ready", a->run.url);
	for (int attempt = 0; attempt < 1000; attempt++) {
		struct http_response response;
		CURLcode rc = http_request(url, NULL, 0, NULL, &response);
		buffer_free(&response.body);
		if (rc == CURLE_OK && response.status == status)
			return;
		test_sleep_ms(20);
	}
	ck_abort_msg("/v1/ready never answered %ld; see %s", status, a->run.log_path);
}

static void authority_cleanup(struct authority *a)
{
	launcher_stop(&a->run);
	signer_key_free(a->provider_a);
	signer_key_free(a->provider_b);
	test_remove_tree(a->run.dir);
}

/* A log line, as docs/operating.md ("Logs") gives it: "<time> epoch <N|-> <program>: [namespace
 * <name>: ]<sentence>". Groups: 1 the time to the second, 2 the epoch. */
#define LOG_LINE_PATTERN                                                                                     \
	"^([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2})\\.[0-9]{3}Z epoch (-|[0-9]+) "             \
	"(dirauthd|dirauth-signer|dirauth): (namespace [^ :]+: )?[^[:cntrl:]]+$"

/* t in UTC to the second, as a log line begins. */
static void log_second(time_t t, char out[32])
{
	struct tm parts;
	ck_assert_ptr_nonnull(gmtime_r(&t, &parts));
	ck_assert_uint_gt(strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &parts), 0);
}

/* The epoch a line's sentence names in the field named field ("epoch=" in an audit line, the
 * epoch of a publication), or NULL. */
static const char *named_epoch(const char *sentence, const char *field, char out[32])
{
	const char *at = strstr(sentence, field);
	if (!at)
		return NULL;
	at += strlen(field);
	size_t n = strspn(at, *at == '-' ? "-" : "0123456789");
	ck_assert(n > 0 && n < 32);
	memcpy(out, at, n);
	out[n] = 0;
	return out;
}

/* Now by the clock the logs read (CLOCK_REALTIME): time() reads a coarser clock, which may still
 * name the previous second just after a line was written in the next. */
static time_t wall_seconds(void)
{
	struct timespec now;
	ck_assert_int_eq(clock_gettime(CLOCK_REALTIME, &now), 0);
	return now.tv_sec;
}

/* Checks that the log at path is whole lines, each of the shape above, written between from and
 * to by the real-time clock, and carrying the epoch its sentence names, if it names one. Returns
 * its text (malloc'd). */
static char *assert_log_lines(const char *path, time_t from, time_t to)
{
	regex_t pattern;
	regmatch_t match[3];
	char earliest[32], latest[32], second[32], epoch[32], named[32];
	size_t len = 0, lines = 0;
	ck_assert_int_eq(regcomp(&pattern, LOG_LINE_PATTERN, REG_EXTENDED), 0);
	log_second(from, earliest);
	log_second(to, latest);
	char *text = (char *)test_read_file(path, &len);
	ck_assert_msg(len > 0 && text[len - 1] == '\n', "%s does not end with a whole line", path);
	for (char *line = text; line < text + len; lines++) {
		char *end = strchr(line, '\n');
		*end = 0;
		ck_assert_msg(regexec(&pattern, line, 3, match, 0) == 0, "%s: not a log line: '%s'", path,
		              line);
		snprintf(second, sizeof second, "%.*s", (int)(match[1].rm_eo - match[1].rm_so),
		         line + match[1].rm_so);
		snprintf(epoch, sizeof epoch, "%.*s", (int)(match[2].rm_eo - match[2].rm_so),
		         line + match[2].rm_so);
		ck_assert_msg(strcmp(second, earliest) >= 0 && strcmp(second, latest) <= 0,
		              "%s: '%s' is not between %s and %s", path, line, earliest, latest);
		const char *sentence = strchr(line + match[2].rm_eo, ':');
		if (named_epoch(sentence, " epoch=", named) ||
		    named_epoch(sentence, "published namespace mix epoch ", named))
			ck_assert_msg(strcmp(named, epoch) == 0, "%s: '%s' is not of epoch %s", path, line,
			              named);
		*end = '\n';
		line = end + 1;
	}
	ck_assert_uint_gt(lines, 0);
	regfree(&pattern);
	return text;
}

static void assert_log_has(const char *log, const char *path, const char *text)
{
	ck_assert_msg(strstr(log, text), "%s lacks '%s':\n%s", path, text, log);
}

static void make_id(const char *label, uint64_t number, uint8_t out[32])
{
	char text[128];
	int n = snprintf(text, sizeof(text), "%s-%llu", label, (unsigned long long)number);
	/* Any 32 bytes do; a hash keeps them distinct and sorted arbitrarily. */
	ck_assert(crypto_sha256((const uint8_t *)text, (size_t)n, out) == 0);
}

/* A signed registration of service (label, number) with endpoint_count endpoints. */
static void build_registration(const struct signer_key *provider, enum service_class service_class,
                               const char *label, uint64_t number, uint64_t sequence, size_t endpoint_count,
                               struct buffer *out)
{
	struct registration r;
	memset(&r, 0, sizeof(r));
	struct endpoint_descriptor endpoints[4];
	ck_assert(endpoint_count <= 4);
	strcpy(r.namespace_name, "mix");
	make_id(label, number, r.service_id);
	r.service_class = service_class;
	r.provider = *signer_key_verifier(provider);
	r.sequence = sequence;
	r.issued_at = START_TIME;
	r.expires = START_TIME + 86400;
	for (size_t i = 0; i < endpoint_count; i++) {
		memset(&endpoints[i], 0, sizeof(endpoints[i]));
		make_id(label, number * 16 + i + 1000000, endpoints[i].endpoint_id);
		endpoints[i].transport = TRANSPORT_QUIC;
		snprintf(endpoints[i].address, sizeof(endpoints[i].address), "192.0.2.%zu:443", 10 + i);
		strcpy(endpoints[i].region, "eu-west");
		endpoints[i].capacity = CAPACITY_MEDIUM;
		endpoints[i].profile = PROFILE_MODERN;
	}
	r.endpoint_count = endpoint_count;
	r.endpoints = endpoints;
	registration_sort_endpoints(&r);

	struct buffer text;
	buffer_init(&text);
	int rc = registration_encode(&r, &text);
	ck_assert_msg(rc == 0, "registration_encode: %s", dirauth_strerror(rc));
	struct note_signature signature;
	ck_assert(signer_key_sign(provider, text.data, text.len, &signature) == 0);
	buffer_init(out);
	ck_assert(note_format(text.data, text.len, &signature, 1, out) == 0);
	buffer_free(&text);
}

static long post_registration(const struct authority *a, const struct buffer *note, struct buffer *receipt)
{
	char url[128];
	snprintf(url, sizeof(url), "%s/v1/registrations", a->run.url);
	struct http_response response;
	CURLcode rc = http_request(url, note->data, note->len, NULL, &response);
	long status = rc == CURLE_OK ? response.status : -1;
	if (receipt)
		*receipt = response.body;
	else
		buffer_free(&response.body);
	return status;
}

/* Checks a receipt's signature and contents; returns its publish-by epoch. */
static uint64_t check_receipt(const struct authority *a, const struct buffer *receipt_note,
                              const struct buffer *note, uint64_t sequence)
{
	struct note_verifier authority;
	ck_assert(note_verifier_parse(a->verifier, strlen(a->verifier), &authority) == 0);
	struct note *parsed = NULL;
	ck_assert_msg(note_parse(receipt_note->data, receipt_note->len, &parsed) == 0, "receipt: %s",
	              receipt_note->data);
	ck_assert_int_eq(note_verify_threshold(parsed, &authority, 1, 1), 0);
	struct receipt receipt;
	ck_assert_int_eq(receipt_parse(parsed->text, parsed->text_len, &receipt), 0);
	note_free(parsed);
	uint8_t digest[32];
	ck_assert(crypto_sha256(note->data, note->len, digest) == 0);
	ck_assert_mem_eq(receipt.registration_digest, digest, 32);
	ck_assert_uint_eq(receipt.sequence, sequence);
	ck_assert_str_eq(receipt.namespace_name, "mix");
	ck_assert_str_eq(receipt.authority, "authority1.dirauth.example");
	ck_assert_uint_eq(receipt.publish_by_epoch, START_TIME / EPOCH_LENGTH + 1);
	return receipt.publish_by_epoch;
}

/* Waits until the latest snapshot of mix has at least epoch; returns the header note. */
static void wait_for_snapshot(const struct authority *a, uint64_t epoch, struct snapshot_header *header,
                              struct buffer *header_note)
{
	char url[128];
	snprintf(url, sizeof(url), "%s/v1/mix/snapshots/latest", a->run.url);
	for (int attempt = 0; attempt < 1000; attempt++) {
		struct http_response response;
		if (http_request(url, NULL, 0, NULL, &response) == CURLE_OK && response.status == 200) {
			struct note *parsed = NULL;
			ck_assert(note_parse(response.body.data, response.body.len, &parsed) == 0);
			ck_assert(snapshot_header_parse(parsed->text, parsed->text_len, header) == 0);
			note_free(parsed);
			if (header->epoch >= epoch) {
				*header_note = response.body;
				return;
			}
		}
		buffer_free(&response.body);
		test_sleep_ms(20);
	}
	ck_abort_msg("no snapshot for epoch %llu; see %s", (unsigned long long)epoch, a->run.log_path);
}

/* A bundle pinning the authority's identity key (a->identity_verifier). */
static void write_trust_bundle(const struct authority *a, const char *path)
{
	struct buffer bundle;
	buffer_init(&bundle);
	ck_assert(buffer_appendf(&bundle,
	                         "dirauth trust v1\n"
	                         "namespace mix dirauth.example/mix\n"
	                         "authority %s\n"
	                         "threshold 1\n",
	                         a->identity_verifier) == 0);
	test_write_file(path, bundle.data, bundle.len, 0644);
	buffer_free(&bundle);
}

static int run_fetch(const struct authority *a, const char *bundle_path, const char *out_dir)
{
	char binary[4096];
	snprintf(binary, sizeof(binary), "%s", test_binary_path("ctl/dirauthctl"));
	/* The snapshot is judged at the authority's (file clock) time, not the machine's. */
	char now[32];
	size_t clock_len = 0;
	uint8_t *clock_text = test_read_file(a->run.clock_path, &clock_len);
	snprintf(now, sizeof(now), "%.*s", (int)strcspn((const char *)clock_text, "\n"),
	         (const char *)clock_text);
	free(clock_text);
	char *argv[] = {
	    binary,        "fetch", "--trust", (char *)bundle_path, "--server", (char *)a->run.url,
	    "--namespace", "mix",   "--out",   (char *)out_dir,     "--now",    now,
	    NULL};
	pid_t pid = test_spawn(argv, a->run.log_path);
	return test_wait_exit(pid, 60000);
}

/* dirauthctl lookup of service (64 hex digits) at the authority's time; its output in out_path. */
static int run_lookup(const struct authority *a, const char *bundle_path, const char *service,
                      const char *out_path)
{
	char binary[4096], now[32];
	snprintf(binary, sizeof(binary), "%s", test_binary_path("ctl/dirauthctl"));
	size_t clock_len = 0;
	uint8_t *clock_text = test_read_file(a->run.clock_path, &clock_len);
	snprintf(now, sizeof(now), "%.*s", (int)strcspn((const char *)clock_text, "\n"),
	         (const char *)clock_text);
	free(clock_text);
	unlink(out_path);
	char *argv[] = {
	    binary, "lookup", "--trust", (char *)bundle_path, "--server", (char *)a->run.url, "--namespace",
	    "mix",  "--now",  now,       (char *)service,     NULL};
	pid_t pid = test_spawn(argv, out_path);
	return test_wait_exit(pid, 60000);
}

START_TEST(test_register_publish_fetch)
{
	struct authority a;
	authority_prepare(&a);
	launcher_start(&a.run);

	struct buffer note_a, note_b, receipt;
	build_registration(a.provider_a, SERVICE_CLASS_MIX_GATEWAY, "gateway", 1, 1, 2, &note_a);
	build_registration(a.provider_b, SERVICE_CLASS_BRIDGE, "bridge", 1, 1, 1, &note_b);
	ck_assert_int_eq(post_registration(&a, &note_a, &receipt), 202);
	uint64_t publish_epoch = check_receipt(&a, &receipt, &note_a, 1);
	buffer_free(&receipt);
	ck_assert_int_eq(post_registration(&a, &note_b, &receipt), 202);
	check_receipt(&a, &receipt, &note_b, 1);
	buffer_free(&receipt);

	/* A replay of the same registration is a rollback and changes nothing. */
	ck_assert_int_eq(post_registration(&a, &note_a, NULL), 409);

	/* The promised epoch begins: its snapshot holds both records. */
	launcher_set_clock(&a.run, publish_epoch * EPOCH_LENGTH);
	struct snapshot_header header;
	struct buffer header_note;
	wait_for_snapshot(&a, publish_epoch, &header, &header_note);
	ck_assert_uint_eq(header.epoch, publish_epoch);
	ck_assert_uint_eq(header.record_count, 2);
	buffer_free(&header_note);

	char bundle_path[512], mirror[512], body_path[600];
	snprintf(bundle_path, sizeof(bundle_path), "%s/trust-bundle.txt", a.run.dir);
	snprintf(mirror, sizeof(mirror), "%s/mirror", a.run.dir);
	write_trust_bundle(&a, bundle_path);
	ck_assert_int_eq(run_fetch(&a, bundle_path, mirror), 0);
	snprintf(body_path, sizeof(body_path), "%s/mix/%llu.body", mirror, (unsigned long long)publish_epoch);
	size_t body_len = 0;
	uint8_t *body = test_read_file(body_path, &body_len);
	ck_assert_int_eq(snapshot_body_verify(&header, body, body_len, 1000), 0);
	ck_assert(contains(body, body_len, note_a.data, note_a.len));
	ck_assert(contains(body, body_len, note_b.data, note_b.len));
	free(body);

	/* A bundle that pins the signing key instead of the identity key refuses the snapshot
	 * (no certificate is signed by it), and so does one pinning another authority's key. */
	char pinned_signing[512];
	snprintf(pinned_signing, sizeof(pinned_signing), "%s/signing-bundle.txt", a.run.dir);
	char identity[NOTE_VERIFIER_KEY_MAX + 1];
	memcpy(identity, a.identity_verifier, sizeof(identity));
	memcpy(a.identity_verifier, a.verifier, sizeof(identity));
	write_trust_bundle(&a, pinned_signing);
	memcpy(a.identity_verifier, identity, sizeof(identity));
	snprintf(mirror, sizeof(mirror), "%s/signing-mirror", a.run.dir);
	ck_assert_int_ne(run_fetch(&a, pinned_signing, mirror), 0);
	struct signer_key *stranger = NULL;
	ck_assert(signer_key_generate("authority1.dirauth.example", &stranger) == 0);
	format_verifier(stranger, a.identity_verifier);
	signer_key_free(stranger);
	char other_bundle[512], other_mirror[512];
	snprintf(other_bundle, sizeof(other_bundle), "%s/other-bundle.txt", a.run.dir);
	snprintf(other_mirror, sizeof(other_mirror), "%s/other-mirror", a.run.dir);
	write_trust_bundle(&a, other_bundle);
	ck_assert_int_ne(run_fetch(&a, other_bundle, other_mirror), 0);

	buffer_free(&note_a);
	buffer_free(&note_b);
	authority_cleanup(&a);
}
END_TEST

/* The burst: each worker owns one service and registers ever higher sequences of it. */
#define BURST_WORKERS          4
#define BURST_ACKS_BEFORE_KILL 150

struct burst {
	struct authority *authority;
	atomic_uint_fast64_t acknowledged[BURST_WORKERS]; /* highest sequence that got a 202 */
	atomic_uint total_acknowledged;
	atomic_int stop;
};

struct burst_worker {
	struct burst *burst;
	unsigned index;
};

static void *burst_run(void *context)
{
	struct burst_worker *worker = context;
	struct burst *burst = worker->burst;
	for (uint64_t sequence = 1; !atomic_load(&burst->stop); sequence++) {
		struct buffer note;
		build_registration(burst->authority->provider_a, SERVICE_CLASS_MIX_GATEWAY, "burst",
		                   worker->index, sequence, 2, &note);
		long status = post_registration(burst->authority, &note, NULL);
		buffer_free(&note);
		if (status == 202) {
			atomic_store(&burst->acknowledged[worker->index], sequence);
			atomic_fetch_add(&burst->total_acknowledged, 1);
		} else {
			break; /* the daemon is gone: what was not acknowledged may or may not be there */
		}
	}
	return NULL;
}

START_TEST(test_sigkill_during_burst_loses_nothing_acknowledged)
{
	struct authority a;
	authority_prepare(&a);
	launcher_start(&a.run);

	struct burst burst;
	memset(&burst, 0, sizeof(burst));
	burst.authority = &a;
	pthread_t threads[BURST_WORKERS];
	struct burst_worker workers[BURST_WORKERS];
	for (unsigned i = 0; i < BURST_WORKERS; i++) {
		workers[i].burst = &burst;
		workers[i].index = i;
		ck_assert(pthread_create(&threads[i], NULL, burst_run, &workers[i]) == 0);
	}
	for (int waited = 0; atomic_load(&burst.total_acknowledged) < BURST_ACKS_BEFORE_KILL; waited++) {
		ck_assert_msg(waited < 60000, "burst too slow: %u acknowledged",
		              atomic_load(&burst.total_acknowledged));
		test_sleep_ms(1);
	}
	launcher_stop_dirauthd(&a.run, SIGKILL);
	atomic_store(&burst.stop, 1);
	for (unsigned i = 0; i < BURST_WORKERS; i++)
		pthread_join(threads[i], NULL);

	launcher_start(&a.run);
	/* Every acknowledged sequence is still the floor: submitting it again is a rollback. */
	for (unsigned i = 0; i < BURST_WORKERS; i++) {
		uint64_t acknowledged = atomic_load(&burst.acknowledged[i]);
		ck_assert_uint_gt(acknowledged, 0);
		struct buffer note;
		build_registration(a.provider_a, SERVICE_CLASS_MIX_GATEWAY, "burst", i, acknowledged, 2,
		                   &note);
		ck_assert_int_eq(post_registration(&a, &note, NULL), 409);
		buffer_free(&note);
	}

	/* And the next snapshot publishes, for every service, a sequence no lower than acknowledged. */
	uint64_t epoch = START_TIME / EPOCH_LENGTH + 1;
	launcher_set_clock(&a.run, epoch * EPOCH_LENGTH);
	struct snapshot_header header;
	struct buffer header_note;
	wait_for_snapshot(&a, epoch, &header, &header_note);
	buffer_free(&header_note);
	ck_assert_uint_eq(header.record_count, BURST_WORKERS);
	char url[160];
	snprintf(url, sizeof(url), "%s/v1/mix/snapshots/%llu/body", a.run.url,
	         (unsigned long long)header.epoch);
	struct http_response response;
	ck_assert(http_request(url, NULL, 0, "Accept-Encoding: identity", &response) == CURLE_OK);
	ck_assert_int_eq(response.status, 200);
	ck_assert_int_eq(snapshot_body_verify(&header, response.body.data, response.body.len, 1000), 0);
	struct snapshot_body *body = NULL;
	ck_assert(snapshot_body_parse(response.body.data, response.body.len, 1000, &body) == 0);
	for (unsigned i = 0; i < BURST_WORKERS; i++) {
		uint8_t service_id[32];
		make_id("burst", i, service_id);
		int found = 0;
		for (size_t r = 0; r < body->record_count; r++) {
			if (memcmp(body->records[r].service_id, service_id, 32) != 0)
				continue;
			struct registration registration;
			ck_assert(registration_parse_signed(body->records[r].note, body->records[r].note_len,
			                                    &registration, NULL) == 0);
			ck_assert_uint_ge(registration.sequence, atomic_load(&burst.acknowledged[i]));
			registration_clear(&registration);
			found = 1;
		}
		ck_assert_msg(found, "service of worker %u missing from the snapshot", i);
	}
	snapshot_body_free(body);
	buffer_free(&response.body);
	authority_cleanup(&a);
}
END_TEST

START_TEST(test_signer_killed_fails_closed_and_recovers)
{
	struct authority a;
	time_t began = wall_seconds();
	authority_prepare(&a);
	char latest_url[128];
	snprintf(latest_url, sizeof(latest_url), "%s/v1/mix/snapshots/latest", a.run.url);

	/* dirauthd starts without its signer: it serves, but is not ready. */
	launcher_spawn_dirauthd(&a.run);
	launcher_wait_dirauthd(&a.run);
	wait_ready(&a, 503);
	launcher_start_signer(&a.run);
	wait_ready(&a, 200);

	struct buffer note, receipt;
	build_registration(a.provider_a, SERVICE_CLASS_MIX_GATEWAY, "gateway", 1, 1, 2, &note);
	ck_assert_int_eq(post_registration(&a, &note, &receipt), 202);
	uint64_t epoch = check_receipt(&a, &receipt, &note, 1);
	buffer_free(&receipt);
	buffer_free(&note);
	launcher_set_clock(&a.run, epoch * EPOCH_LENGTH);
	struct snapshot_header header;
	struct buffer header_note;
	wait_for_snapshot(&a, epoch, &header, &header_note);
	buffer_free(&header_note);

	/* The signer dies. */
	launcher_stop_signer(&a.run, SIGKILL);
	wait_ready(&a, 503);
	char url[128];
	snprintf(url, sizeof(url), "%s/v1/ready", a.run.url);
	struct http_response response;
	ck_assert(http_request(url, NULL, 0, NULL, &response) == CURLE_OK);
	ck_assert_int_eq(response.status, 503);
	ck_assert_msg(
	    contains(response.body.data, response.body.len, (const uint8_t *)"signer unreachable", 18),
	    "%.*s", (int)response.body.len, response.body.data);
	buffer_free(&response.body);
	/* Reads go on. */
	ck_assert(http_request(latest_url, NULL, 0, NULL, &response) == CURLE_OK);
	ck_assert_int_eq(response.status, 200);
	buffer_free(&response.body);
	/* A registration is refused, and nothing is stored: the same one is accepted later. */
	build_registration(a.provider_b, SERVICE_CLASS_BRIDGE, "bridge", 1, 1, 1, &note);
	ck_assert(post_registration(&a, &note, &receipt) == 503);
	ck_assert(contains(receipt.data, receipt.len, (const uint8_t *)"\"unavailable\"", 13));
	buffer_free(&receipt);
	/* The next epoch begins and cannot be signed. */
	launcher_set_clock(&a.run, (epoch + 1) * EPOCH_LENGTH);

	/* The signer comes back (its socket file is stale after SIGKILL; its ledger is intact). */
	launcher_start_signer(&a.run);
	wait_ready(&a, 200);
	wait_for_snapshot(&a, epoch + 1, &header, &header_note);
	ck_assert_uint_eq(header.epoch, epoch + 1);
	buffer_free(&header_note);
	ck_assert_int_eq(post_registration(&a, &note, &receipt), 202);
	buffer_free(&receipt);
	buffer_free(&note);

	/* Every line of the three logs has its time and its epoch: the start's and the stop's the
	 * current epoch by dirauthd's clock, a publication's its own, the signer's none but its
	 * requests'. */
	launcher_stop(&a.run);
	char expected[256], audit_path[600];
	char *log = assert_log_lines(a.run.log_path, began, wall_seconds());
	snprintf(expected, sizeof expected, " epoch %llu dirauthd: signer unreachable",
	         (unsigned long long)(START_TIME / EPOCH_LENGTH));
	assert_log_has(log, a.run.log_path, expected);
	snprintf(expected, sizeof expected, " epoch %llu dirauthd: listening on 127.0.0.1:%u\n",
	         (unsigned long long)(START_TIME / EPOCH_LENGTH), a.run.port);
	assert_log_has(log, a.run.log_path, expected);
	snprintf(expected, sizeof expected,
	         " epoch %llu dirauthd: published namespace mix epoch %llu: 1 records",
	         (unsigned long long)epoch, (unsigned long long)epoch);
	assert_log_has(log, a.run.log_path, expected);
	snprintf(expected, sizeof expected,
	         " epoch %llu dirauthd: namespace mix: not published yet: signer unreachable",
	         (unsigned long long)(epoch + 1));
	assert_log_has(log, a.run.log_path, expected);
	snprintf(expected, sizeof expected, " epoch %llu dirauthd: stopping (signal %d)\n",
	         (unsigned long long)(epoch + 1), SIGTERM);
	assert_log_has(log, a.run.log_path, expected);
	free(log);
	log = assert_log_lines(a.run.signer_log_path, began, wall_seconds());
	assert_log_has(log, a.run.signer_log_path, " epoch - dirauth-signer: listening on ");
	snprintf(expected, sizeof expected, " epoch - dirauth-signer: stopping (signal %d)\n", SIGTERM);
	assert_log_has(log, a.run.signer_log_path, expected);
	free(log);
	snprintf(audit_path, sizeof audit_path, "%s/signer-audit.log", a.run.dir);
	log = assert_log_lines(audit_path, began, wall_seconds());
	snprintf(
	    expected, sizeof expected,
	    " epoch %llu dirauth-signer: %llu sign snapshot-header origin=dirauth.example/mix epoch=%llu ",
	    (unsigned long long)(epoch + 1), (unsigned long long)((epoch + 1) * EPOCH_LENGTH),
	    (unsigned long long)(epoch + 1));
	assert_log_has(log, audit_path, expected);
	assert_log_has(log, audit_path, " epoch - dirauth-signer: ");
	free(log);
	authority_cleanup(&a);
}
END_TEST

/* The notes of a published epoch's body, by service id: the body fetched in identity and
 * verified against its header. */
static struct snapshot_body *fetch_body(const struct authority *a, uint64_t epoch,
                                        struct snapshot_header *header, struct buffer *bytes)
{
	char url[160];
	struct http_response response;
	snprintf(url, sizeof(url), "%s/v1/mix/snapshots/%llu", a->run.url, (unsigned long long)epoch);
	ck_assert(http_request(url, NULL, 0, NULL, &response) == CURLE_OK);
	ck_assert_int_eq(response.status, 200);
	struct note *parsed = NULL;
	ck_assert(note_parse(response.body.data, response.body.len, &parsed) == 0);
	struct note_verifier authority;
	ck_assert(note_verifier_parse(a->verifier, strlen(a->verifier), &authority) == 0);
	ck_assert_int_eq(note_verify_threshold(parsed, &authority, 1, 1), 0);
	ck_assert(snapshot_header_parse(parsed->text, parsed->text_len, header) == 0);
	note_free(parsed);
	buffer_free(&response.body);
	snprintf(url, sizeof(url), "%s/v1/mix/snapshots/%llu/body", a->run.url, (unsigned long long)epoch);
	ck_assert(http_request(url, NULL, 0, "Accept-Encoding: identity", &response) == CURLE_OK);
	ck_assert_int_eq(response.status, 200);
	ck_assert_int_eq(snapshot_body_verify(header, response.body.data, response.body.len, 1000), 0);
	struct snapshot_body *body = NULL;
	ck_assert(snapshot_body_parse(response.body.data, response.body.len, 1000, &body) == 0);
	*bytes = response.body;
	return body;
}

static int body_holds(const struct snapshot_body *body, const struct buffer *note)
{
	for (size_t r = 0; r < body->record_count; r++)
		if (body->records[r].note_len == note->len &&
		    memcmp(body->records[r].note, note->data, note->len) == 0)
			return 1;
	return 0;
}

/* Waits until the log at path holds text. */
static void wait_for_log(const char *path, const char *text)
{
	for (int attempt = 0; attempt < 1500; attempt++) {
		size_t len = 0;
		uint8_t *log = test_read_file(path, &len);
		int found = strstr((const char *)log, text) != NULL;
		free(log);
		if (found)
			return;
		test_sleep_ms(20);
	}
	ck_abort_msg("'%s' never appeared in %s", text, path);
}

/* Thirteen services over two epochs: the diff dirauthd builds, after the second publication, to
 * its body from the first's is served (zstd), and applied to the first body fetched from dirauthd
 * it gives the second body byte for byte. */
/* The next datagram on fd within 10 s, NUL-terminated in out; "" when none came. */
static void manager_receive(int fd, char *out, size_t cap)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	out[0] = 0;
	if (poll(&p, 1, 10000) != 1)
		return;
	ssize_t n = recv(fd, out, cap - 1, 0);
	out[n > 0 ? n : 0] = 0;
}

/* Started by a service manager of Type=notify units ($NOTIFY_SOCKET): dirauth-signer and dirauthd
 * each say READY=1 once they serve, and STOPPING=1 at SIGTERM. */
START_TEST(test_tells_the_service_manager)
{
	struct authority a;
	authority_prepare(&a);
	char socket_path[LAUNCHER_PATH_MAX + 16], got[4][600];
	snprintf(socket_path, sizeof socket_path, "%s/notify.sock", a.run.dir);
	struct sockaddr_un address = {.sun_family = AF_UNIX};
	ck_assert_uint_lt(strlen(socket_path), sizeof address.sun_path);
	strcpy(address.sun_path, socket_path);
	int manager = socket(AF_UNIX, SOCK_DGRAM, 0);
	ck_assert_int_ge(manager, 0);
	ck_assert_int_eq(bind(manager, (struct sockaddr *)&address, sizeof address), 0);
	ck_assert_int_eq(setenv("NOTIFY_SOCKET", socket_path, 1), 0);
	launcher_start(&a.run);
	unsetenv("NOTIFY_SOCKET"); /* only these two daemons were started by the manager */
	manager_receive(manager, got[0], sizeof got[0]);
	manager_receive(manager, got[1], sizeof got[1]);
	ck_assert_str_eq(got[0], "READY=1\nSTATUS=signing for dirauthd on its socket");
	ck_assert_str_eq(got[1], "READY=1\nSTATUS=serving");
	/* dirauthd says it serves only once it does. */
	struct http_response response;
	char url[128];
	snprintf(url, sizeof url, "%s/v1/health", a.run.url);
	ck_assert(http_request(url, NULL, 0, NULL, &response) == CURLE_OK);
	ck_assert_int_eq(response.status, 200);
	buffer_free(&response.body);
	ck_assert_int_eq(launcher_stop_dirauthd(&a.run, SIGTERM), 0);
	manager_receive(manager, got[2], sizeof got[2]);
	ck_assert_str_eq(got[2], "STOPPING=1\nSTATUS=stopping");
	ck_assert_int_eq(launcher_stop_signer(&a.run, SIGTERM), 0);
	manager_receive(manager, got[3], sizeof got[3]);
	ck_assert_str_eq(got[3], "STOPPING=1\nSTATUS=stopping");
	close(manager);
	authority_cleanup(&a);
}
END_TEST

START_TEST(test_diff_follows_publication)
{
	struct authority a;
	authority_prepare(&a);
	launcher_start(&a.run);
	uint64_t first = START_TIME / EPOCH_LENGTH + 1;
	struct buffer note, header_note;
	struct snapshot_header header, old_header, new_header;
	for (uint64_t i = 1; i <= 13; i++) {
		if (i == 13) {
			launcher_set_clock(&a.run, first * EPOCH_LENGTH);
			wait_for_snapshot(&a, first, &header, &header_note);
			buffer_free(&header_note);
		}
		build_registration(a.provider_a, SERVICE_CLASS_MIX_GATEWAY, "diff", i, 1, 2, &note);
		ck_assert_int_eq(post_registration(&a, &note, NULL), 202);
		buffer_free(&note);
	}
	/* A mirror holding the first snapshot. */
	char bundle_path[4096], mirror[4096], mirrored[4200];
	snprintf(bundle_path, sizeof bundle_path, "%s/trust-bundle.txt", a.run.dir);
	snprintf(mirror, sizeof mirror, "%s/mirror", a.run.dir);
	write_trust_bundle(&a, bundle_path);
	ck_assert_int_eq(run_fetch(&a, bundle_path, mirror), 0);
	launcher_set_clock(&a.run, (first + 1) * EPOCH_LENGTH);
	wait_for_snapshot(&a, first + 1, &header, &header_note);
	buffer_free(&header_note);
	struct buffer old_body, new_body, diff, rebuilt;
	snapshot_body_free(fetch_body(&a, first, &old_header, &old_body));
	snapshot_body_free(fetch_body(&a, first + 1, &new_header, &new_body));
	ck_assert_uint_eq(old_header.record_count, 12);
	ck_assert_uint_eq(new_header.record_count, 13);

	char url[256], base[65];
	hex_encode(old_header.body_sha256, 32, base);
	snprintf(url, sizeof(url), "%s/v1/mix/snapshots/%llu/diff/%s", a.run.url,
	         (unsigned long long)(first + 1), base);
	struct http_response response = {0};
	for (int attempt = 0; attempt < 1000; attempt++) {
		ck_assert(http_request(url, NULL, 0, "Accept-Encoding: zstd", &response) == CURLE_OK);
		if (response.status == 200)
			break;
		ck_assert_int_eq(response.status, 404); /* no_diff until it is built */
		buffer_free(&response.body);
		test_sleep_ms(20);
	}
	ck_assert_msg(response.status == 200, "no diff served; see %s", a.run.log_path);
	buffer_init(&diff);
	buffer_init(&rebuilt);
	ck_assert_int_eq(
	    compress_decode(ENCODING_ZSTD, response.body.data, response.body.len, 1 << 24, &diff), 0);
	struct snapshot_body_limits limits = {1000, 1000, 1000};
	ck_assert_int_eq(
	    snapshot_diff_apply(old_body.data, old_body.len, diff.data, diff.len, &limits, &rebuilt), 0);
	ck_assert_uint_eq(rebuilt.len, new_body.len);
	ck_assert_mem_eq(rebuilt.data, new_body.data, rebuilt.len);
	ck_assert_int_eq(snapshot_body_verify(&new_header, rebuilt.data, rebuilt.len, 1000), 0);
	wait_for_log(a.run.log_path, "diffs of epoch");
	/* The mirror takes the second body as the diff from the first, and holds it byte for byte. */
	ck_assert_int_eq(run_fetch(&a, bundle_path, mirror), 0);
	wait_for_log(a.run.log_path, "body: rebuilt from a diff of");
	snprintf(mirrored, sizeof mirrored, "%s/mix/%llu.body", mirror, (unsigned long long)(first + 1));
	size_t mirrored_len = 0;
	uint8_t *mirrored_body = test_read_file(mirrored, &mirrored_len);
	ck_assert_uint_eq(mirrored_len, new_body.len);
	ck_assert_mem_eq(mirrored_body, new_body.data, new_body.len);
	free(mirrored_body);

	/* The epoch's record shards: 13 records, 4 shards, names of one hex digit. */
	buffer_free(&response.body);
	snprintf(url, sizeof(url), "%s/v1/mix/snapshots/%llu/records/0", a.run.url,
	         (unsigned long long)(first + 1));
	for (int attempt = 0; attempt < 1000; attempt++) {
		memset(&response, 0, sizeof response);
		ck_assert(http_request(url, NULL, 0, NULL, &response) == CURLE_OK);
		if (response.status == 200)
			break;
		ck_assert_int_eq(response.status, 404); /* no_record_shard until they are built */
		buffer_free(&response.body);
		test_sleep_ms(20);
	}
	ck_assert_msg(response.status == 200, "no record shard served; see %s", a.run.log_path);
	ck_assert(contains(response.body.data, response.body.len,
	                   (const uint8_t *)"dirauth record-shard v1\n", 24));
	buffer_free(&response.body);
	static const struct {
		const char *name;
		long status;
		const char *code;
	} refused[] = {{"X", 400, "record_shard_malformed"},
	               {"0000000", 400, "record_shard_malformed"},
	               {"00", 404, "no_record_shard"},
	               {"4", 404, "no_record_shard"}};
	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
		snprintf(url, sizeof(url), "%s/v1/mix/snapshots/%llu/records/%s", a.run.url,
		         (unsigned long long)(first + 1), refused[i].name);
		memset(&response, 0, sizeof response);
		ck_assert(http_request(url, NULL, 0, NULL, &response) == CURLE_OK);
		ck_assert_int_eq(response.status, refused[i].status);
		ck_assert(contains(response.body.data, response.body.len, (const uint8_t *)refused[i].code,
		                   strlen(refused[i].code)));
		buffer_free(&response.body);
	}
	/* dirauthctl lookup: a service of the snapshot, and one that is not. */
	char lookup_out[4200], service[65];
	uint8_t id[32];
	snprintf(lookup_out, sizeof lookup_out, "%s/lookup.out", a.run.dir);
	make_id("diff", 7, id);
	hex_encode(id, 32, service);
	int status = run_lookup(&a, bundle_path, service, lookup_out);
	size_t out_len = 0;
	uint8_t *out = test_read_file(lookup_out, &out_len);
	ck_assert_msg(status == 0, "lookup exit %d: %.*s", status, (int)out_len, out);
	ck_assert_msg(contains(out, out_len, (const uint8_t *)"present at leaf", 15), "%.*s", (int)out_len,
	              out);
	ck_assert(contains(out, out_len, (const uint8_t *)"192.0.2.11:443", 14));
	free(out);
	make_id("diff", 99, id);
	hex_encode(id, 32, service);
	ck_assert_int_eq(run_lookup(&a, bundle_path, service, lookup_out), 1);
	out = test_read_file(lookup_out, &out_len);
	ck_assert_msg(contains(out, out_len, (const uint8_t *)"absent: no record between", 25), "%.*s",
	              (int)out_len, out);
	free(out);
	ck_assert_int_eq(run_lookup(&a, bundle_path, "not-a-service", lookup_out), 64);
	buffer_free(&response.body);
	buffer_free(&diff);
	buffer_free(&rebuilt);
	buffer_free(&old_body);
	buffer_free(&new_body);
	authority_cleanup(&a);
}
END_TEST

#define CRASH_EARLY 8 /* registrations committed before the epoch's cut-off */
#define CRASH_LATE  4 /* registrations committed while its publication is under way */

START_TEST(test_sigkill_at_every_publication_step)
{
	/* At each step of publishing an epoch dirauthd is held, more registrations arrive, and it is
	 * killed with SIGKILL; restarted, it publishes that epoch with exactly the registrations its
	 * receipts promised it (the signer signing the rebuilt header again, not refusing it as a
	 * second header), and the next epoch with the rest. */
	static const char *const steps[] = {"publish-sealed", "publish-body", "publish-signed",
	                                    "publish-stored"};
	const uint64_t epoch = START_TIME / EPOCH_LENGTH + 1;
	for (size_t step = 0; step < sizeof steps / sizeof steps[0]; step++) {
		struct authority a;
		struct buffer early[CRASH_EARLY], late[CRASH_LATE], replaced, receipt;
		authority_prepare(&a);
		/* The current epoch is published at the first start; the step is held for the next. */
		launcher_start(&a.run);
		struct snapshot_header header;
		struct buffer header_note, bytes;
		wait_for_snapshot(&a, epoch - 1, &header, &header_note);
		buffer_free(&header_note);
		launcher_stop_dirauthd(&a.run, SIGTERM);
		setenv("DIRAUTH_PAUSE_AT", steps[step], 1);
		setenv("DIRAUTH_PAUSE_MS", "60000", 1);
		launcher_start(&a.run);
		unsetenv("DIRAUTH_PAUSE_AT");
		unsetenv("DIRAUTH_PAUSE_MS");
		for (unsigned i = 0; i < CRASH_EARLY; i++) {
			build_registration(a.provider_a, SERVICE_CLASS_MIX_GATEWAY, "early", i, 1, 2,
			                   &early[i]);
			ck_assert_int_eq(post_registration(&a, &early[i], &receipt), 202);
			ck_assert_uint_eq(check_receipt(&a, &receipt, &early[i], 1), epoch);
			buffer_free(&receipt);
		}
		/* The epoch begins: dirauthd seals it and stops at the step. */
		launcher_set_clock(&a.run, epoch * EPOCH_LENGTH + 1);
		char paused[64];
		snprintf(paused, sizeof paused, "paused at %s", steps[step]);
		wait_for_log(a.run.log_path, paused);
		/* Meanwhile registrations go on, new services and a newer version of an early one: all
		 * promised the next epoch. */
		for (unsigned i = 0; i < CRASH_LATE; i++) {
			build_registration(a.provider_a, SERVICE_CLASS_MIX_GATEWAY, "late", i, 1, 2,
			                   &late[i]);
			ck_assert_int_eq(post_registration(&a, &late[i], &receipt), 202);
			struct note *parsed = NULL;
			struct receipt promise;
			ck_assert(note_parse(receipt.data, receipt.len, &parsed) == 0);
			ck_assert(receipt_parse(parsed->text, parsed->text_len, &promise) == 0);
			ck_assert_uint_eq(promise.publish_by_epoch, epoch + 1);
			note_free(parsed);
			buffer_free(&receipt);
		}
		build_registration(a.provider_a, SERVICE_CLASS_MIX_GATEWAY, "early", 0, 2, 2, &replaced);
		ck_assert_int_eq(post_registration(&a, &replaced, NULL), 202);
		launcher_stop_dirauthd(&a.run, SIGKILL);

		launcher_start(&a.run);
		wait_for_snapshot(&a, epoch, &header, &header_note);
		buffer_free(&header_note);
		ck_assert_uint_eq(header.epoch, epoch);
		struct snapshot_body *body = fetch_body(&a, epoch, &header, &bytes);
		ck_assert_msg(body->record_count == CRASH_EARLY, "%s: %zu records", steps[step],
		              body->record_count);
		for (unsigned i = 0; i < CRASH_EARLY; i++)
			ck_assert_msg(body_holds(body, &early[i]), "%s: early registration %u missing",
			              steps[step], i);
		for (unsigned i = 0; i < CRASH_LATE; i++)
			ck_assert(!body_holds(body, &late[i]));
		ck_assert(!body_holds(body, &replaced));
		snapshot_body_free(body);
		buffer_free(&bytes);
		size_t log_len = 0;
		uint8_t *log = test_read_file(a.run.log_path, &log_len);
		ck_assert_msg(!strstr((const char *)log, "not published"), "%s: %s", steps[step], log);
		free(log);

		/* The next epoch holds everything, the early service in its newer version. */
		launcher_set_clock(&a.run, (epoch + 1) * EPOCH_LENGTH + 1);
		wait_for_snapshot(&a, epoch + 1, &header, &header_note);
		buffer_free(&header_note);
		body = fetch_body(&a, epoch + 1, &header, &bytes);
		ck_assert_uint_eq(body->record_count, CRASH_EARLY + CRASH_LATE);
		for (unsigned i = 1; i < CRASH_EARLY; i++)
			ck_assert(body_holds(body, &early[i]));
		for (unsigned i = 0; i < CRASH_LATE; i++)
			ck_assert(body_holds(body, &late[i]));
		ck_assert(body_holds(body, &replaced) && !body_holds(body, &early[0]));
		snapshot_body_free(body);
		buffer_free(&bytes);
		for (unsigned i = 0; i < CRASH_EARLY; i++)
			buffer_free(&early[i]);
		for (unsigned i = 0; i < CRASH_LATE; i++)
			buffer_free(&late[i]);
		buffer_free(&replaced);
		authority_cleanup(&a);
	}
}
END_TEST

/* A keep-alive connection to dirauthd. */
static int raw_connect(const struct authority *a)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert(fd >= 0);
	struct sockaddr_in address;
	memset(&address, 0, sizeof(address));
	address.sin_family = AF_INET;
	address.sin_port = htons((uint16_t)a->run.port);
	address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&address, sizeof(address)), 0);
	return fd;
}

static void raw_post(int fd, const struct buffer *note)
{
	char head[256];
	int n =
	    snprintf(head, sizeof(head),
	             "POST /v1/registrations HTTP/1.1\r\nHost: a\r\nContent-Length: %zu\r\n\r\n", note->len);
	ck_assert_int_eq(send(fd, head, (size_t)n, MSG_NOSIGNAL), n);
	ck_assert_int_eq(send(fd, note->data, note->len, MSG_NOSIGNAL), (ssize_t)note->len);
}

/* Reads one answer (its head and Content-Length bytes) within 10 s; returns its status, and
 * whether it said Connection: close; out (NULL, or cap bytes) gets its text. */
static long raw_answer(int fd, int *closing, char *out, size_t cap)
{
	char text[16384];
	size_t len = 0;
	long status = -1;
	for (int waited = 0; waited < 10000 && len < sizeof(text) - 1;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, 100) <= 0) {
			waited += 100;
			continue;
		}
		ssize_t n = recv(fd, text + len, sizeof(text) - 1 - len, 0);
		if (n <= 0)
			break;
		len += (size_t)n;
		text[len] = 0;
		const char *end = strstr(text, "\r\n\r\n");
		const char *length = strstr(text, "Content-Length: ");
		if (end && length && length < end &&
		    len >= (size_t)(end + 4 - text) + strtoul(length + 16, NULL, 10))
			break;
	}
	text[len] = 0;
	ck_assert_msg(sscanf(text, "HTTP/1.1 %ld ", &status) == 1, "no answer on fd %d: '%s'", fd, text);
	*closing = strstr(text, "\r\nConnection: close\r\n") != NULL;
	if (out && cap > 0) {
		size_t copied = len < cap - 1 ? len : cap - 1;
		memcpy(out, text, copied);
		out[copied] = 0;
	}
	return status;
}

/* A registration on a connection already open when dirauthd is told to stop, while another waits
 * for its receipt: the new one is refused (503, closing), nothing suspended is left behind, the
 * waiting one is answered, and dirauthd exits cleanly. */
START_TEST(test_stopping_refuses_new_work)
{
	struct authority a;
	authority_prepare(&a);
	launcher_start(&a.run);
	wait_ready(&a, 200);
	int waiting = raw_connect(&a), later = raw_connect(&a);
	const char *health = "GET /v1/health HTTP/1.1\r\nHost: a\r\n\r\n";
	ck_assert_int_eq(send(later, health, strlen(health), MSG_NOSIGNAL), (ssize_t)strlen(health));
	int closing = 1;
	ck_assert_int_eq(raw_answer(later, &closing, NULL, 0), 200);
	ck_assert(!closing);

	struct buffer first, second;
	build_registration(a.provider_a, SERVICE_CLASS_MIX_GATEWAY, "stopping", 1, 1, 1, &first);
	build_registration(a.provider_a, SERVICE_CLASS_MIX_GATEWAY, "stopping", 2, 1, 1, &second);
	/* The signer's state just read (dirauthd keeps it a second), the signer stopped: the first
	 * registration passes its checks, is committed and waits for its receipt. */
	test_sleep_ms(1100);
	wait_ready(&a, 200);
	ck_assert_int_eq(kill(a.run.signer_pid, SIGSTOP), 0);
	raw_post(waiting, &first);
	uint8_t service_id[32];
	char service_hex[65], url[256];
	make_id("stopping", 1, service_id);
	hex_encode(service_id, sizeof(service_id), service_hex);
	snprintf(url, sizeof(url), "%s/v1/mix/registrations/%s/1", a.run.url, service_hex);
	long stored = 0;
	for (int attempt = 0; attempt < 100 && stored != 200; attempt++) {
		struct http_response response;
		stored = http_request(url, NULL, 0, NULL, &response) == CURLE_OK ? response.status : -1;
		buffer_free(&response.body);
		if (stored != 200)
			test_sleep_ms(10);
	}
	ck_assert_int_eq(stored, 200);
	ck_assert_int_eq(kill(a.run.pid, SIGTERM), 0);
	test_sleep_ms(300);
	raw_post(later, &second);
	char text[4096];
	ck_assert_int_eq(raw_answer(later, &closing, text, sizeof(text)), 503);
	ck_assert_msg(closing && strstr(text, "\"unavailable\"") && strstr(text, "stopping"), "%s", text);
	ck_assert_int_eq(kill(a.run.signer_pid, SIGCONT), 0);
	ck_assert_int_eq(raw_answer(waiting, &closing, NULL, 0), 202);
	int status = 0;
	ck_assert_int_eq(waitpid(a.run.pid, &status, 0), a.run.pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "dirauthd ended with %d; see %s", status,
	              a.run.log_path);
	a.run.pid = 0;
	close(waiting);
	close(later);
	buffer_free(&first);
	buffer_free(&second);
	authority_cleanup(&a);
}
END_TEST

static Suite *authority_suite(void)
{
	Suite *suite = suite_create("authority");
	TCase *end_to_end = tcase_create("end_to_end");
	tcase_set_timeout(end_to_end, 120);
	tcase_add_test(end_to_end, test_register_publish_fetch);
	tcase_add_test(end_to_end, test_diff_follows_publication);
	tcase_add_test(end_to_end, test_tells_the_service_manager);
	tcase_add_test(end_to_end, test_sigkill_during_burst_loses_nothing_acknowledged);
	tcase_add_test(end_to_end, test_signer_killed_fails_closed_and_recovers);
	tcase_add_test(end_to_end, test_sigkill_at_every_publication_step);
	tcase_add_test(end_to_end, test_stopping_refuses_new_work);
	suite_add_tcase(suite, end_to_end);
	return suite;
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	SRunner *runner = srunner_create(authority_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	curl_global_cleanup();
	return failures ? 1 : 0;
}
