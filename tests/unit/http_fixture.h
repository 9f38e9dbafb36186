/*
 * http_fixture.h: a whole dirauthd in a test process, for the tests of its HTTP API
 * (check_http.c, check_http_guard.c): a real dirauth-signer on a UNIX socket (signer_fixture.h),
 * a real LMDB store, the scheduler on a file clock and the HTTP server on a free loopback port,
 * with libcurl as the client. Like signer_fixture.h, a header of static functions for the files
 * that include it; everything aborts the test on failure.
 */
#ifndef DIRAUTH_TEST_HTTP_FIXTURE_H
#define DIRAUTH_TEST_HTTP_FIXTURE_H

#include "clock/clock.h"
#include "compress/compress.h"
#include "server/config/config.h"
#include "crypto/crypto.h"
#include "server/peers/authority_set.h"
#include "server/peers/peer_client.h"
#include "server/round/round.h"
#include "server/scheduler/scheduler.h"
#include "base/error.h"
#include "server/http/http.h"
#include "schema/certificate.h"
#include "schema/note.h"
#include "server/readpath/prepared.h"
#include "schema/receipt.h"
#include "server/signing/signer_client.h"
#include "signer_fixture.h"
#include "server/signing/signer_health.h"
#include "schema/snapshot.h"
#include "server/store/registrations.h"
#include "server/store/store.h"
#include "server/publish/publish.h"
#include "server/tlog/translog.h"
#include "schema/checkpoint.h"
#include "signer/key.h"
#include "tlog/policy.h"
#include "test_keys.h"
#include "test_support.h"

#include <check.h>
#include <curl/curl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define GENESIS  1767225000ULL
#define LENGTH   60ULL
#define BODY_CAP 4096

struct fixture {
	char dir[512];
	unsigned port;
	uint64_t now;
	struct config *config;
	struct signer_fixture signer_process;
	struct signer_client *signer;
	struct signer_health *health;
	struct clock *clock;
	struct store *store;
	struct prepared_set *prepared;
	struct peer_client *peers;         /* with an authorities section only */
	struct authority_set *authorities; /* likewise */
	struct round *round;
	struct epoch_scheduler *scheduler;
	struct http_server *http;
	struct test_key provider, other, stranger;
	FILE *log;
	/* When set, requests name their target in absolute form: this, then the path (RFC 9112
	 * 3.2.2), the Host field still 127.0.0.1 and the port. */
	const char *absolute_prefix;
};

struct response {
	long status;
	struct buffer body;
	struct buffer headers;
};

static inline void write_clock(struct fixture *f, uint64_t now)
{
	char path[900], text[32];
	snprintf(path, sizeof path, "%s/clock", f->dir);
	int n = snprintf(text, sizeof text, "%llu\n", (unsigned long long)now);
	test_write_file(path, text, (size_t)n, 0644);
	f->now = now;
}

/* The first half of fixture_open_with: the directory, the signer, the keys and the port. */
static inline void fixture_prepare(struct fixture *f)
{
	memset(f, 0, sizeof *f);
	test_make_tempdir(f->dir, sizeof f->dir);
	signer_fixture_prepare(&f->signer_process, f->dir, GENESIS + 10 * LENGTH, GENESIS - 86400,
	                       GENESIS + 30 * 86400);
	signer_fixture_start(&f->signer_process);
	test_key_load(TEST_KEY_PROVIDER, &f->provider);
	test_key_load(TEST_KEY_OTHER, &f->other);
	test_key_load(TEST_KEY_AUTHORITY_2, &f->stranger);
	f->port = test_free_port();
}

/* What dirauthd serves from f's store: the prepared set, the scheduler and the HTTP server. */
static inline void fixture_serve(struct fixture *f)
{
	ck_assert_int_eq(prepared_set_create(f->config, f->store, &f->prepared), 0);
	/* A member of several (an authorities section): the round's peer client and keyrings, which
	 * ask nothing until the round ticks. */
	if (f->config->member_count > 1) {
		char why[512];
		ck_assert_int_eq(peer_client_new(f->config, NULL, &f->peers), 0);
		ck_assert_msg(authority_set_new(f->config, f->peers, NULL, 0, NULL, &f->authorities, why,
		                                sizeof why) == 0,
		              "%s", why);
	}
	struct round_options round_options = {.config = f->config,
	                                      .store = f->store,
	                                      .signer = f->signer,
	                                      .signer_health = f->health,
	                                      .clock = f->clock,
	                                      .authorities = f->authorities,
	                                      .peers = f->peers,
	                                      .prepared = f->prepared,
	                                      .log = f->log};
	ck_assert_int_eq(round_create(&round_options, &f->round), 0);
	struct epoch_scheduler_options scheduler_options = {.config = f->config,
	                                                    .store = f->store,
	                                                    .clock = f->clock,
	                                                    .prepared = f->prepared,
	                                                    .log = f->log,
	                                                    .round = f->round};
	ck_assert_int_eq(epoch_scheduler_create(&scheduler_options, &f->scheduler), 0);
	struct http_options http_options = {.config = f->config,
	                                    .store = f->store,
	                                    .signer = f->signer,
	                                    .signer_health = f->health,
	                                    .clock = f->clock,
	                                    .prepared = f->prepared,
	                                    .log = f->log,
	                                    .measured_round = f->round,
	                                    .peers = f->peers};
	ck_assert_int_eq(http_server_start(&http_options, &f->http), 0);
}

/* Stops what fixture_serve started; the store stays open. */
static inline void fixture_stop_serving(struct fixture *f)
{
	http_server_stop(f->http);
	epoch_scheduler_free(f->scheduler);
	round_free(f->round);
	authority_set_free(f->authorities);
	peer_client_free(f->peers);
	f->authorities = NULL;
	f->peers = NULL;
	prepared_set_free(f->prepared);
}

/* Restarts the prepared set, the scheduler and the HTTP server over the same store, as after a
 * restart of dirauthd: nothing but the latest snapshot is in memory. */
static inline void fixture_restart_serving(struct fixture *f)
{
	fixture_stop_serving(f);
	fixture_serve(f);
}

/* The second half of fixture_open_with: the configuration text (for f->port, with data_dir
 * "data", signer_socket "signer/signer.sock" and the file clock "clock") parsed, and kept as
 * <dir>/dirauthd.yaml for a process the test starts over the same store, then the store, the
 * scheduler and the HTTP server started. */
static inline void fixture_start(struct fixture *f, size_t map_size, const char *text)
{
	char config_path[1024];
	snprintf(config_path, sizeof config_path, "%s/dirauthd.yaml", f->dir);
	test_write_file(config_path, text, strlen(text), 0600);
	struct settings_error error;
	ck_assert_msg(config_parse((const uint8_t *)text, strlen(text), f->dir, &f->config, &error) == 0,
	              "%zu: %s", error.line, error.message);
	ck_assert_int_eq(signer_client_open(f->config->signer_socket, 5000, &f->signer), 0);
	ck_assert_int_eq(clock_open_file(f->config->clock_path, &f->clock), 0);
	ck_assert_int_eq(signer_health_create(f->signer, f->config->authority_name, f->clock, &f->health), 0);
	write_clock(f, GENESIS + 10 * LENGTH + 1);
	struct store_options options = {.path = f->config->data_dir, .map_size = map_size};
	ck_assert_int_eq(store_open(&options, &f->store), 0);
	char log_path[1024];
	snprintf(log_path, sizeof log_path, "%s/dirauthd.log", f->dir);
	f->log = fopen(log_path, "w");
	ck_assert_ptr_nonnull(f->log);
	fixture_serve(f);
}

/* Opens the fixture: a signer, a store of map_size bytes (0: the default), the scheduler and the
 * HTTP server on a free port, taking registration bodies of at most body_cap bytes. http is the
 * configuration's http section (NULL: two threads). */
static inline void fixture_open_bounded(struct fixture *f, size_t map_size, unsigned body_cap,
                                        const char *http)
{
	fixture_prepare(f);
	char text[4096], other_key[NOTE_VERIFIER_KEY_MAX + 1];
	snprintf(other_key, sizeof other_key, "%s", test_key_verifier_string(&f->other));
	snprintf(text, sizeof text,
	         "authority: { name: authority1.dirauth.example, signer_socket: signer/signer.sock }\n"
	         "listen: { address: 127.0.0.1, port: %u }\n"
	         "data_dir: data\n"
	         "epoch: { length_seconds: %llu, genesis: %llu, validity_epochs: 3 }\n"
	         "clock: { source: file, path: clock }\n"
	         "namespaces:\n"
	         "  - { name: mix, origin: dirauth.example/mix }\n"
	         "  - { name: mail, origin: dirauth.example/mail }\n"
	         "providers:\n"
	         "  - { key: \"%s\", namespaces: [mix], classes: [mix-gateway] }\n"
	         "  - { key: \"%s\", namespaces: [mix, mail], classes: [mix-gateway, bridge] }\n"
	         "bounds: { registration_body: %u, endpoints_per_service: 3, max_validity_seconds: 86400 }\n"
	         "%s\n",
	         f->port, LENGTH, GENESIS, test_key_verifier_string(&f->provider), other_key, body_cap,
	         http ? http : "http: { threads: 2 }");
	fixture_start(f, map_size, text);
}

/* fixture_open_bounded with bodies of at most BODY_CAP bytes. */
static inline void fixture_open_with(struct fixture *f, size_t map_size, const char *http)
{
	fixture_open_bounded(f, map_size, BODY_CAP, http);
}

static inline void fixture_open(struct fixture *f, size_t map_size)
{
	fixture_open_with(f, map_size, NULL);
}

static inline void fixture_close(struct fixture *f)
{
	fixture_stop_serving(f);
	store_close(f->store);
	clock_close(f->clock);
	signer_health_free(f->health);
	signer_client_close(f->signer);
	signer_fixture_stop(&f->signer_process);
	config_free(f->config);
	test_key_free(&f->provider);
	test_key_free(&f->other);
	test_key_free(&f->stranger);
	fclose(f->log);
	test_remove_tree(f->dir);
}

/* ---- the transparency log of the first namespace (mix) ---- */

/* Publishes mix's snapshot of epoch, the signer's clock and dirauthd's at its start. */
static inline void fixture_publish_epoch(struct fixture *f, uint64_t epoch)
{
	uint64_t now = GENESIS + epoch * LENGTH + 1;
	write_clock(f, now);
	f->signer_process.now = now;
	struct publication p;
	char detail[256] = "";
	int rc = publish_snapshot(f->config, f->store, f->signer, 0, epoch, &p, detail, sizeof detail);
	ck_assert_msg(rc == 0, "publish %llu: %s %s", (unsigned long long)epoch, dirauth_strerror(rc),
	              detail);
	publication_clear(&p);
}

/* Catches mix's log up with what was published; its checkpoint must then be of expected_size. */
static inline void fixture_catch_up(struct fixture *f, uint64_t expected_size)
{
	struct translog_outcome outcome;
	int rc = translog_catch_up(f->store, f->config, f->signer, 0, &outcome);
	ck_assert_msg(rc == 0, "catch up: %s: %s", dirauth_strerror(rc), outcome.detail);
	ck_assert_uint_eq(outcome.checkpoint_size, expected_size);
}

/* Mix's log policy: the log key and the cosigner of the signer's key files, a quorum of one. */
struct fixture_log_keys {
	struct note_verifier log_key, cosigner;
	struct tlog_policy policy;
};

static inline void fixture_log_keys_load(struct fixture *f, struct fixture_log_keys *k)
{
	struct signer_key *key = NULL;
	ck_assert_int_eq(signer_key_load(f->signer_process.log_key_path, &key), 0);
	k->log_key = *signer_key_verifier(key);
	signer_key_free(key);
	ck_assert_int_eq(signer_key_load(f->signer_process.cosignature_key_path, &key), 0);
	ck_assert_int_eq(cosignature_verifier_from_ed25519(signer_key_verifier(key)->name,
	                                                   signer_key_verifier(key)->public_key,
	                                                   &k->cosigner),
	                 0);
	signer_key_free(key);
	struct tlog_policy policy = {"dirauth.example/mix", &k->log_key, &k->cosigner, 1, 1};
	k->policy = policy;
}

static inline size_t collect(char *data, size_t size, size_t count, void *context)
{
	ck_assert_int_eq(buffer_append(context, data, size * count), 0);
	return size * count;
}

struct chunked_source {
	size_t remaining;
};

static inline size_t chunked_read(char *out, size_t size, size_t count, void *context)
{
	struct chunked_source *source = context;
	size_t n = size * count < source->remaining ? size * count : source->remaining;
	n = n > 1000 ? 1000 : n;
	memset(out, 'x', n);
	source->remaining -= n;
	return n;
}

/* One request. body NULL: no body; chunked_size > 0: a chunked upload of that many bytes
 * without Content-Length. headers: NULL-terminated, may be NULL. */
static inline CURLcode request_raw(struct fixture *f, const char *method, const char *path,
                                   const uint8_t *body, size_t len, size_t chunked_size,
                                   const char *const *headers, struct response *out)
{
	CURL *curl = curl_easy_init();
	ck_assert_ptr_nonnull(curl);
	char url[2048];
	snprintf(url, sizeof url, "http://127.0.0.1:%u%s", f->port, path);
	memset(out, 0, sizeof *out);
	buffer_init(&out->body);
	buffer_init(&out->headers);
	struct curl_slist *list = NULL;
	for (size_t i = 0; headers && headers[i]; i++)
		list = curl_slist_append(list, headers[i]);
	list = curl_slist_append(list, "Expect:");
	struct chunked_source source = {chunked_size};
	curl_easy_setopt(curl, CURLOPT_URL, url);
	char target[2048];
	if (f->absolute_prefix) {
		snprintf(target, sizeof target, "%s%s", f->absolute_prefix, path);
		curl_easy_setopt(curl, CURLOPT_REQUEST_TARGET, target);
	}
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT, 20L);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, &out->body);
	curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, collect);
	curl_easy_setopt(curl, CURLOPT_HEADERDATA, &out->headers);
	if (chunked_size) {
		list = curl_slist_append(list, "Transfer-Encoding: chunked");
		curl_easy_setopt(curl, CURLOPT_POST, 1L);
		curl_easy_setopt(curl, CURLOPT_READFUNCTION, chunked_read);
		curl_easy_setopt(curl, CURLOPT_READDATA, &source);
	} else if (body) {
		curl_easy_setopt(curl, CURLOPT_POSTFIELDS, (const char *)body);
		curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, (long)len);
	}
	if (strcmp(method, "HEAD") == 0)
		curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
	else
		curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
	CURLcode rc = curl_easy_perform(curl);
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &out->status);
	curl_slist_free_all(list);
	curl_easy_cleanup(curl);
	return rc;
}

static inline void request(struct fixture *f, const char *method, const char *path, const uint8_t *body,
                           size_t len, size_t chunked_size, const char *const *headers, struct response *out)
{
	CURLcode rc = request_raw(f, method, path, body, len, chunked_size, headers, out);
	ck_assert_msg(rc == CURLE_OK, "%s %s: %s", method, path, curl_easy_strerror(rc));
}

static inline void response_free(struct response *r)
{
	buffer_free(&r->body);
	buffer_free(&r->headers);
}

/* The value of a response header (static storage), or NULL. */
static const char *header(const struct response *r, const char *name)
{
	static char value[512];
	const char *p = (const char *)r->headers.data;
	size_t name_len = strlen(name);
	while (p && *p) {
		const char *end = strstr(p, "\r\n");
		if (!end)
			break;
		if ((size_t)(end - p) > name_len + 1 && strncasecmp(p, name, name_len) == 0 &&
		    p[name_len] == ':') {
			const char *v = p + name_len + 1;
			while (*v == ' ')
				v++;
			snprintf(value, sizeof value, "%.*s", (int)(end - v), v);
			return value;
		}
		p = end + 2;
	}
	return NULL;
}

static inline void expect_error(const struct response *r, long status, const char *code)
{
	ck_assert_msg(r->status == status, "expected %ld %s, got %ld: %s", status, code, r->status,
	              r->body.data ? (const char *)r->body.data : "");
	ck_assert_str_eq(header(r, "Content-Type"), "application/json");
	/* No cache may keep an error: a 404 for an epoch not yet published must not outlive its
	 * publication. */
	ck_assert_str_eq(header(r, "Cache-Control"), "no-store");
	char expected[128];
	snprintf(expected, sizeof expected, "{\"error\":\"%s\",\"detail\":\"", code);
	ck_assert_msg(r->body.len > strlen(expected) && memcmp(r->body.data, expected, strlen(expected)) == 0,
	              "body %s lacks %s", r->body.data, expected);
}

/* A signed registration number index of key in namespace_name, valid for an hour from now. */
static inline void make_registration(struct fixture *f, unsigned index, const char *namespace_name,
                                     const struct test_key *key, struct registration *r)
{
	test_example_registration(index, namespace_name, key, r);
	r->issued_at = f->now;
	r->expires = f->now + 3600;
}

static inline void sign(const struct registration *r, const struct test_key *key, struct buffer *out)
{
	buffer_init(out);
	test_sign_registration(r, key, out);
}

static inline void post(struct fixture *f, const struct buffer *note, struct response *out)
{
	request(f, "POST", "/v1/registrations", note->data, note->len, 0, NULL, out);
}

static inline void post_expect(struct fixture *f, const struct registration *r, const struct test_key *key,
                               long status, const char *code)
{
	struct buffer note;
	struct response response;
	sign(r, key, &note);
	post(f, &note, &response);
	expect_error(&response, status, code);
	response_free(&response);
	buffer_free(&note);
}

static inline uint64_t sequence_of(struct fixture *f, const uint8_t *service_id)
{
	uint64_t sequence = 0;
	int rc = store_service_sequence(f->store, service_id, &sequence);
	ck_assert(rc == 0 || rc == DIRAUTH_ERR_NOT_FOUND);
	return rc == 0 ? sequence : 0;
}

/* What dirauthd has logged so far (malloc'd, NUL-terminated). */
static inline char *read_log(struct fixture *f)
{
	char path[1024];
	size_t len;
	fflush(f->log);
	snprintf(path, sizeof path, "%s/dirauthd.log", f->dir);
	return (char *)test_read_file(path, &len);
}

#endif
