/*
 * test_several_over_tls.c: three authorities (k = 2) on links that look like theirs: each behind
 * its own nginx running the shipped deploy/nginx/dirauthd-proxy.conf (tests/harness/nginx_front.h)
 * with a certificate of the test's CA, every peer link delayed 50 ms each way with a few ms of
 * jitter (tests/harness/faultproxy.h), every dirauthd verifying its peers against that CA
 * (authorities.ca_file).
 *
 * Two epochs are published by all three, one header text with at least k member signatures, and
 * each authority serves a log checkpoint cosigned by k authorities, so votes, signatures,
 * certificates, notes and add-checkpoint all crossed the TLS links. That it was TLS: every
 * connection each link's proxy forwarded opened with a TLS handshake record, and a plain HTTP
 * request into a link is refused by the nginx behind it. Then the shipped configuration's bounds,
 * through TLS: every POST route of the API reaches dirauthd (whose JSON answers it) with a body
 * of its bound, and a byte more is refused by nginx; a zstd-encoded vote passes as sent.
 *
 * Skipped (77) when nginx is not installed (scripts/setup.sh installs it). About 12 s.
 */
#include "test_support.h"

#include "schema/checkpoint.h"
#include "base/error.h"
#include "schema/note.h"
#include "schema/notes_bundle.h"
#include "schema/snapshot.h"
#include "signer/key.h"
#include "tests/harness/cluster.h"
#include "tlog/policy.h"

#include <check.h>
#include <curl/curl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N        3
#define K        2
#define DELAY_MS 50
#define JITTER   5
#define WAIT_MS  30000 /* a bound, not a pace: each wait ends as soon as its condition holds */

static struct cluster *start_cluster(void)
{
	/* Phases of seconds at half speed: a vote's round of pushes and pulls over TLS, with a
	 * handshake of two round trips of 100 ms on every new connection, fits with room. */
	struct cluster_options options = {.authorities = N,
	                                  .threshold = K,
	                                  .epoch_length = 10,
	                                  .prepare_seconds = 6,
	                                  .vote_seconds = 3,
	                                  .signature_seconds = 3,
	                                  .ms_per_second = 500,
	                                  .links = {.delay_ms = DELAY_MS, .jitter_ms = JITTER, .seed = 1},
	                                  .tls = 1};
	return cluster_start(&options);
}

/* Waits until every authority serves epoch, checks that they serve one header text with at
 * least K member signatures. */
static void expect_published(struct cluster *c, uint64_t epoch)
{
	struct buffer first;
	buffer_init(&first);
	for (size_t i = 0; i < N; i++) {
		struct snapshot_header header;
		struct buffer note;
		buffer_init(&note);
		ck_assert_msg(cluster_wait_epoch(c, i, epoch, WAIT_MS, &header, &note) == 0,
		              "%s did not publish epoch %llu; see %s", cluster_name(c, i),
		              (unsigned long long)epoch, cluster_log_path(c, i));
		ck_assert_uint_eq(header.epoch, epoch);
		ck_assert_uint_eq(header.record_count, 1);
		ck_assert_int_ge(cluster_signers(c, note.data, note.len, NULL), K);
		struct note *parsed = NULL;
		ck_assert_int_eq(note_parse(note.data, note.len, &parsed), 0);
		if (i == 0)
			ck_assert_int_eq(buffer_append(&first, parsed->text, parsed->text_len), 0);
		else
			ck_assert_msg(parsed->text_len == first.len &&
			                  memcmp(parsed->text, first.data, first.len) == 0,
			              "%s serves another header for epoch %llu", cluster_name(c, i),
			              (unsigned long long)epoch);
		note_free(parsed);
		buffer_free(&note);
	}
	buffer_free(&first);
}

/* Waits until authority i serves a checkpoint that verifies with K of the three cosigners: the
 * others cosigned it through add-checkpoint, over the links. */
static void expect_cosigned_checkpoint(struct cluster *c, size_t i)
{
	struct note_verifier cosigners[N];
	for (size_t j = 0; j < N; j++)
		cosigners[j] = *cluster_cosigner(c, j);
	struct tlog_policy policy = {.origin = CLUSTER_ORIGIN,
	                             .log_key = signer_key_verifier(cluster_log_key(c, i)),
	                             .cosigners = cosigners,
	                             .cosigner_count = N,
	                             .quorum = K};
	int rc = DIRAUTH_ERR_NOT_FOUND;
	for (int waited = 0; rc != 0 && waited < WAIT_MS; waited += 100) {
		struct cluster_response response;
		if (cluster_get(c, i, "/v1/mix/log/checkpoint", &response) == 200) {
			struct note *note = NULL;
			struct checkpoint checkpoint;
			size_t cosigned = 0;
			ck_assert_int_eq(note_parse(response.body.data, response.body.len, &note), 0);
			rc = tlog_checkpoint_verify(note, &policy, &checkpoint, NULL, &cosigned);
			note_free(note);
		}
		cluster_response_free(&response);
		if (rc != 0)
			test_sleep_ms(100);
	}
	ck_assert_msg(rc == 0, "%s serves no checkpoint cosigned by %d authorities (%s); see %s",
	              cluster_name(c, i), K, dirauth_strerror(rc), cluster_log_path(c, i));
}

/* The answer came from dirauthd (its JSON error body), not from nginx (an HTML page). */
static int from_dirauthd(const struct cluster_response *response)
{
	return response->body.len > 9 && memcmp(response->body.data, "{\"error\":", 9) == 0;
}

/* POSTs len bytes of 'x' to path through authority 0's nginx, with an extra header line. */
static long post_through_nginx(struct cluster *c, const char *path, size_t len, const char *header,
                               struct cluster_response *response)
{
	char url[256];
	snprintf(url, sizeof url, "%s%s", cluster_front_url(c, 0), path);
	uint8_t *body = malloc(len ? len : 1);
	ck_assert_ptr_nonnull(body);
	memset(body, 'x', len);
	long status = cluster_https(c, url, body, len, header, 20000, response);
	free(body);
	return status;
}

START_TEST(test_three_authorities_publish_over_tls_on_long_links)
{
	struct cluster *c = start_cluster();
	struct buffer note;
	cluster_registration(c, cluster_provider_key(c, 0), "service", 1, 1, &note);
	ck_assert_msg(cluster_register(c, CLUSTER_BIT(0) | CLUSTER_BIT(1) | CLUSTER_BIT(2), &note, NULL) == N,
	              "%s", cluster_last_refusal(c));
	buffer_free(&note);

	uint64_t first = cluster_next_epoch(c);
	for (uint64_t epoch = first; epoch < first + 2; epoch++) {
		cluster_run_epoch(c, epoch);
		expect_published(c, epoch);
	}
	for (size_t i = 0; i < N; i++)
		expect_cosigned_checkpoint(c, i);
	cluster_check_alive(c);

	/* It was TLS: every connection into every link opened with a TLS handshake record, and a
	 * link's far end refuses plain HTTP (nginx's 400 for a plain request to its TLS port). */
	for (size_t from = 0; from < N; from++)
		for (size_t to = 0; to < N; to++) {
			if (from == to)
				continue;
			struct faultproxy_counters counters;
			faultproxy_counters(cluster_link(c, from, to), &counters);
			ck_assert_msg(counters.forwarded > 0 && counters.bytes_to_target > 0 &&
			                  counters.bytes_to_client > 0,
			              "link %zu->%zu carried nothing", from, to);
			ck_assert_msg(counters.tls_clients == counters.forwarded,
			              "link %zu->%zu: %llu of %llu connections began with a TLS handshake",
			              from, to, (unsigned long long)counters.tls_clients,
			              (unsigned long long)counters.forwarded);
		}
	char url[128];
	snprintf(url, sizeof url, "http://127.0.0.1:%u/v1/health", faultproxy_port(cluster_link(c, 0, 1)));
	struct cluster_response response;
	ck_assert_int_eq(cluster_http(url, NULL, 0, NULL, 5000, &response), 400);
	ck_assert(!from_dirauthd(&response));
	cluster_response_free(&response);
	snprintf(url, sizeof url, "https://127.0.0.1:%u/v1/health", faultproxy_port(cluster_link(c, 0, 1)));
	ck_assert_int_eq(cluster_https(c, url, NULL, 0, NULL, 5000, &response), 200);
	cluster_response_free(&response);

	/* The shipped bounds, through TLS: each POST route takes a body of its bound to dirauthd,
	 * which answers it (a refusal of its own: these bodies are no documents); a byte more is
	 * nginx's 413. */
	const struct {
		const char *path;
		size_t bound;
	} routes[] = {
	    {"/v1/registrations", 64 * 1024},
	    {"/v1/endpoint-health", 64 * 1024},
	    {"/v1/revocations", 64 * 1024},
	    {"/v1/deregistrations", 64 * 1024},
	    {"/v1/mix/signatures", 64 * 1024},
	    {"/v1/mix/votes", 4 * 1024 * 1024}, /* its bound is 200 MB: 4 MiB shows it is not 64 KiB */
	    {"/v1/mix/log/add-checkpoint", 64 * 1024},
	    {"/v1/mix/notes", notes_request_max_bytes()},
	};
	for (size_t r = 0; r < sizeof routes / sizeof routes[0]; r++) {
		long status = post_through_nginx(c, routes[r].path, routes[r].bound, NULL, &response);
		ck_assert_msg(status > 0 && from_dirauthd(&response), "POST %s of %zu bytes: %ld %.*s",
		              routes[r].path, routes[r].bound, status,
		              (int)(response.body.len < 200 ? response.body.len : 200),
		              response.body.data ? (const char *)response.body.data : "");
		cluster_response_free(&response);
	}
	for (size_t r = 0; r < sizeof routes / sizeof routes[0]; r++) {
		if (strcmp(routes[r].path, "/v1/mix/votes") == 0)
			continue;
		long status = post_through_nginx(c, routes[r].path, routes[r].bound + 1, NULL, &response);
		ck_assert_msg(status == 413 && !from_dirauthd(&response), "POST %s of %zu bytes: %ld",
		              routes[r].path, routes[r].bound + 1, status);
		cluster_response_free(&response);
	}
	/* An encoded request body passes as sent: dirauthd judges it, nginx does not touch it. */
	long status = post_through_nginx(c, "/v1/mix/votes", 1000, "Content-Encoding: zstd", &response);
	ck_assert_msg(status > 0 && from_dirauthd(&response), "a zstd vote: %ld", status);
	cluster_response_free(&response);
	cluster_free(c);
}
END_TEST

static Suite *over_tls_suite(void)
{
	Suite *suite = suite_create("several_over_tls");
	TCase *tc = tcase_create("tls");
	tcase_set_timeout(tc, 180);
	tcase_add_test(tc, test_three_authorities_publish_over_tls_on_long_links);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	if (!cluster_nginx_installed()) {
		printf("test_several_over_tls: nginx is not installed (scripts/setup.sh installs it): "
		       "skipped\n");
		return 77;
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	SRunner *runner = srunner_create(over_tls_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	curl_global_cleanup();
	return failures ? 1 : 0;
}
