/*
 * test_libdirauth.c: the resolution side's scenarios, each through libdirauth against a real
 * authority on loopback (dirauthd and dirauth-signer, tests/harness/mirror_authority.h: one
 * namespace "mix" with the lifecycle, so its snapshots publish health and revocations, and a
 * transparency log cosigned by the authority). The library's fetch is libcurl here
 * (test_http_get), from the authority itself or from a canned server (tests/harness/stub_http.h)
 * that serves the authority's own answers with one of them changed.
 *
 *   - the draining endpoint is never offered, the same sample query twice gives different
 *     samples, and nothing the library asks for or stores says who asks (every path it asked for,
 *     and the state it wrote, which is the header note every client holds alike); the header is
 *     checked in the log under the cosigned checkpoint;
 *   - a revoked endpoint, offered from the cache while the snapshot that held it is the latest,
 *     is never selected after the snapshot that lists its revocation, and a newer snapshot that
 *     brings it back (signed by the authority's key) is refused whole;
 *   - a tampered body or header is refused, an older snapshot is refused (also by a new context
 *     over the same state: never going back), two conflicting headers for one epoch are a split
 *     view whose evidence is both signed notes, and two contexts with different trust bundles in
 *     one process each believe only their own;
 *   - one service by proof (a lookup: the header, then the record shard that holds the service):
 *     present with its healthy endpoints, draining not offered (and reported, with its statement,
 *     by dirauth_lookup_record), absent proven, a revoked service
 *     proven absent after its revocation's snapshot, a tampered shard and an older snapshot's
 *     refused.
 */
#include "test_http.h"
#include "test_libdirauth_client.h"
#include "test_support.h"
#include "tests/harness/mirror_authority.h"
#include "tests/harness/stub_http.h"
#include "tests/support/test_example_authority.h"

#include <dirauth/dirauth.h>

#include "base/buffer.h"
#include "crypto/crypto.h"
#include "schema/encoding.h"
#include "schema/note.h"
#include "schema/snapshot.h"
#include "signer/key.h"

#include <check.h>
#include <curl/curl.h>

#include <inttypes.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define E0 MIRROR_AUTHORITY_FIRST_EPOCH

/* The caller of the library: the test client's state, clock and random source, and a fetch from
 * base_url that records every path asked for. */
struct resolver {
	struct test_client client;
	char base_url[64];
	char paths[64][256];
	size_t path_count;
};

static int resolver_fetch(void *user, const char *path, long *status, char encoding[DIRAUTH_ENCODING_MAX],
                          struct dirauth_sink *sink)
{
	struct resolver *r = (struct resolver *)((char *)user - offsetof(struct resolver, client));
	char url[512];
	struct test_http_response response;
	if (r->path_count < 64)
		snprintf(r->paths[r->path_count++], sizeof(r->paths[0]), "%s", path);
	snprintf(url, sizeof(url), "%s%s", r->base_url, path);
	CURLcode rc = test_http_get(url, &response);
	*status = response.status;
	encoding[0] = '\0';
	int failed = rc != CURLE_OK || dirauth_sink_append(sink, response.body.data, response.body.len) != 0;
	buffer_free(&response.body);
	return failed ? -1 : 0;
}

static void resolver_init(struct resolver *r, const struct mirror_authority *a, const char *base_url)
{
	memset(r, 0, sizeof(*r));
	test_client_init(&r->client, a->now);
	r->client.callbacks.fetch = resolver_fetch;
	snprintf(r->base_url, sizeof(r->base_url), "%s", base_url);
}

/* A context for the authority's trust bundle, with its log pinned when log is nonzero. */
static struct dirauth_context *resolver_context(struct resolver *r, const struct mirror_authority *a, int log)
{
	const char *log_keys[] = {a->log_key};
	const char *witness_keys[] = {a->witness_key};
	struct dirauth_options options = {0};
	if (log) {
		options.log_keys = log_keys;
		options.log_key_count = 1;
		options.witness_keys = witness_keys;
		options.witness_key_count = 1;
		options.witness_quorum = 1;
	}
	return test_client_context(&r->client, a->bundle_path, &options);
}

static enum dirauth_status update(struct resolver *r, struct dirauth_context *context,
                                  const struct mirror_authority *a, struct dirauth_result *result)
{
	r->client.now = a->now;
	return dirauth_update_run(context, "mix", result);
}

static void endpoint_hex(unsigned i, char out[65])
{
	snprintf(out, 65, "5b%062x", i);
}

static void service_hex(unsigned i, char out[65])
{
	snprintf(out, 65, "5a%062x", i);
}

/* dirauthctl health (or revoke) about service i's endpoint, at the authority's time. */
static void lifecycle(const struct mirror_authority *a, const char *command, unsigned i, const char *word)
{
	char key[LAUNCHER_PATH_MAX + 32], service[LAUNCHER_PATH_MAX + 32], now[32], endpoint[65];
	struct test_outcome outcome;
	snprintf(key, sizeof(key), "%s/keys/provider-a.key", a->run.dir);
	snprintf(service, sizeof(service), "%s/service-%u.yaml", a->run.dir, i);
	snprintf(now, sizeof(now), "%" PRIu64, a->now);
	endpoint_hex(i, endpoint);
	const char *option = strcmp(command, "health") == 0 ? "--class" : "--reason";
	const char *args[] = {command, "--key", key,        "--service", service, "--endpoint", endpoint,
	                      option,  word,    "--server", a->run.url,  "--now", now,          NULL};
	test_run_program(test_binary_path("ctl/dirauthctl"), args, a->run.dir, &outcome);
	ck_assert_msg(outcome.status == 0, "%s %u: %s", command, i, outcome.err);
	test_outcome_free(&outcome);
}

/* A real authority with count services registered after epoch E0, each endpoint published healthy
 * in epoch E0 + 1 but the draining-th (1-based; 0: none), which is draining. */
static void start_with_services(struct mirror_authority *a, unsigned count, unsigned draining)
{
	mirror_authority_start(a);
	mirror_authority_publish(a, E0);
	mirror_authority_register(a, count);
	for (unsigned i = 1; i <= count; i++)
		lifecycle(a, "health", i, i == draining ? "draining" : "healthy");
	mirror_authority_publish(a, E0 + 1);
}

static int offered(const struct dirauth_endpoint *endpoints, size_t count, const char *endpoint_id)
{
	for (size_t i = 0; i < count; i++)
		if (strcmp(endpoints[i].endpoint_id, endpoint_id) == 0)
			return 1;
	return 0;
}

/* Every path the library asked for names only the namespace, an epoch, a digest or the
 * certificates: nothing that could say who asks. */
static void assert_paths_anonymous(const struct resolver *r)
{
	regex_t allowed;
	ck_assert(regcomp(&allowed,
	                  "^/v1/(certificates|mix/snapshots/"
	                  "(latest|[0-9]+|[0-9]+/body|[0-9]+/diff/[0-9a-f]{64}|[0-9]+/records/[0-9a-f]{1,6})"
	                  "|mix/log/proof/[0-9]+)$",
	                  REG_EXTENDED | REG_NOSUB) == 0);
	ck_assert_uint_gt(r->path_count, 0);
	for (size_t i = 0; i < r->path_count; i++)
		ck_assert_msg(regexec(&allowed, r->paths[i], 0, NULL, 0) == 0, "asked for %s", r->paths[i]);
	regfree(&allowed);
}

START_TEST(test_draining_never_offered_samples_differ_nothing_identifies)
{
	struct mirror_authority a;
	struct resolver r;
	struct dirauth_result result = {0};
	struct dirauth_endpoint endpoints[16];
	size_t count = 0;
	char draining[65], service[65], path[128];

	start_with_services(&a, 5, 5);

	resolver_init(&r, &a, a.run.url);
	struct dirauth_context *context = resolver_context(&r, &a, 1);
	ck_assert_msg(update(&r, context, &a, &result) == DIRAUTH_SUCCESS, "%s", result.detail);
	/* The header was checked in the log. */
	snprintf(path, sizeof(path), "/v1/mix/log/proof/%" PRIu64, (uint64_t)(E0 + 1));
	int asked_proof = 0;
	for (size_t i = 0; i < r.path_count; i++)
		asked_proof |= strcmp(r.paths[i], path) == 0;
	ck_assert(asked_proof);
	struct buffer proof = test_http_get_ok(a.run.url, path);
	ck_assert_int_eq(dirauth_verify_log_proof(context, "mix", proof.data, proof.len, &result),
	                 DIRAUTH_SUCCESS);
	proof.data[proof.len - 10] ^= 1; /* the checkpoint's cosignature */
	ck_assert_int_ne(dirauth_verify_log_proof(context, "mix", proof.data, proof.len, &result),
	                 DIRAUTH_SUCCESS);
	buffer_free(&proof);

	/* The draining endpoint is never offered: not in the class, not by its service, never sampled. */
	endpoint_hex(5, draining);
	ck_assert_int_eq(dirauth_endpoints(context, "mix", "mix-gateway", endpoints, 16, &count, &result),
	                 DIRAUTH_SUCCESS);
	ck_assert_uint_eq(count, 4);
	ck_assert(!offered(endpoints, count, draining));
	for (size_t i = 0; i < count; i++)
		ck_assert_str_eq(endpoints[i].health, "healthy");
	service_hex(5, service);
	ck_assert_int_eq(dirauth_service(context, "mix", service, endpoints, 16, &count, &result),
	                 DIRAUTH_SUCCESS);
	ck_assert_uint_eq(count, 0);
	service_hex(1, service);
	ck_assert_int_eq(dirauth_service(context, "mix", service, endpoints, 16, &count, &result),
	                 DIRAUTH_SUCCESS);
	ck_assert_uint_eq(count, 1);

	/* The same query twice: samples from the random source, not a fixed answer. */
	char first[2][65];
	int differed = 0;
	for (int round = 0; round < 40 && !differed; round++) {
		ck_assert_int_eq(dirauth_sample(context, "mix", "mix-gateway", 2, endpoints, &count, &result),
		                 DIRAUTH_SUCCESS);
		ck_assert_uint_eq(count, 2);
		ck_assert_str_ne(endpoints[0].endpoint_id, endpoints[1].endpoint_id);
		ck_assert(!offered(endpoints, count, draining));
		if (round == 0) {
			memcpy(first[0], endpoints[0].endpoint_id, 65);
			memcpy(first[1], endpoints[1].endpoint_id, 65);
		} else {
			differed = strcmp(first[0], endpoints[0].endpoint_id) != 0 ||
			           strcmp(first[1], endpoints[1].endpoint_id) != 0;
		}
	}
	ck_assert_msg(differed, "40 samples of 2 among 4, all the same");

	/* Nothing identifies the querying party: the paths asked for, and the state written, which
	 * is byte for byte the header note the authority serves to everyone. The queries asked for
	 * nothing at all. */
	size_t asked = r.path_count;
	assert_paths_anonymous(&r);
	snprintf(path, sizeof(path), "/v1/mix/snapshots/%" PRIu64, (uint64_t)(E0 + 1));
	struct buffer header = test_http_get_ok(a.run.url, path);
	ck_assert_uint_eq(r.client.state_writes, 1);
	ck_assert_uint_eq(r.client.state.len, header.len);
	ck_assert(memcmp(r.client.state.data, header.data, header.len) == 0);
	ck_assert_str_eq(r.client.state_namespace, "mix");
	buffer_free(&header);
	ck_assert_uint_eq(r.path_count, asked);

	/* The example resolver (examples/resolver.c) over the installed library does the same. */
	char state_dir[LAUNCHER_PATH_MAX + 16], now[32], expected[128];
	struct test_outcome outcome;
	snprintf(state_dir, sizeof(state_dir), "%s/resolver-state", a.run.dir);
	ck_assert(mkdir(state_dir, 0700) == 0);
	snprintf(now, sizeof(now), "%" PRIu64, a.now);
	setenv("RESOLVER_NOW", now, 1);
	const char *args[] = {a.bundle_path, a.run.url, "mix", "mix-gateway", "2", state_dir, NULL};
	test_run_program(test_binary_path("libdirauth/dirauth-resolver-example"), args, a.run.dir, &outcome);
	unsetenv("RESOLVER_NOW");
	ck_assert_msg(outcome.status == 0, "resolver: %s", outcome.err);
	snprintf(expected, sizeof(expected),
	         "mix epoch %" PRIu64 ": 2 of the mix-gateway endpoints offered\n", (uint64_t)(E0 + 1));
	ck_assert_msg(strncmp(outcome.out, expected, strlen(expected)) == 0, "%s", outcome.out);
	ck_assert(strstr(outcome.out, draining) == NULL);
	ck_assert(strstr(outcome.out, " healthy\n") != NULL);
	test_outcome_free(&outcome);

	dirauth_result_clear(&result);
	dirauth_context_free(context);
	test_client_free(&r.client);
	mirror_authority_stop(&a);
}
END_TEST

struct canned {
	struct stub_http *stub;
	char url[64];
};
static void canned_serve(struct canned *c, const char *path, const uint8_t *bytes, size_t len);
static void canned_copy(struct canned *c, const char *authority, const char *path);

/* A successor of the held header note (epoch + 1, previous its digest), signed by the authority's
 * own key, whose method-1 body holds the one record note of service_id: what an authority would
 * sign to bring a revoked record back. */
static void forge_successor(const struct mirror_authority *a, const struct buffer *held_note,
                            const uint8_t service_id[32], const uint8_t *record_note, size_t record_len,
                            struct buffer *header_out, struct buffer *body_out)
{
	struct note *held = NULL;
	struct snapshot_header header;
	struct snapshot_record record;
	struct note_signature signature;
	struct buffer text;
	ck_assert(note_parse(held_note->data, held_note->len, &held) == 0);
	ck_assert(snapshot_header_parse(held->text, held->text_len, &header) == 0);
	ck_assert(snapshot_header_digest(held->text, held->text_len, header.previous) == 0);
	note_free(held);
	memcpy(record.service_id, service_id, 32);
	record.note = record_note;
	record.note_len = record_len;
	ck_assert(snapshot_body_encode("mix", header.epoch + 1, &record, 1, body_out) == 0);
	header.epoch++;
	header.valid_after = header.epoch * MIRROR_AUTHORITY_EPOCH_LENGTH;
	header.fresh_until = header.valid_after + MIRROR_AUTHORITY_EPOCH_LENGTH;
	header.valid_until = header.valid_after + 3 * MIRROR_AUTHORITY_EPOCH_LENGTH;
	header.record_count = 1;
	ck_assert(snapshot_records_root(&record, 1, header.records_root) == 0);
	header.body_size = body_out->len;
	ck_assert(crypto_sha256(body_out->data, body_out->len, header.body_sha256) == 0);
	header.consensus_method = 1;
	buffer_init(&text);
	ck_assert(snapshot_header_encode(&header, &text) == 0);
	struct signer_key *key = test_run_key(a->run.dir, "authority1.key");
	ck_assert(signer_key_sign(key, text.data, text.len, &signature) == 0);
	ck_assert(note_format(text.data, text.len, &signature, 1, header_out) == 0);
	signer_key_free(key);
	buffer_free(&text);
}

START_TEST(test_revoked_endpoint_not_selected_after_its_revocation)
{
	struct mirror_authority a;
	struct resolver r;
	struct dirauth_result result = {0};
	struct dirauth_endpoint endpoints[16];
	size_t count = 0;
	char revoked[65], service[65];

	start_with_services(&a, 3, 0);
	resolver_init(&r, &a, a.run.url);
	struct dirauth_context *context = resolver_context(&r, &a, 0);
	ck_assert_msg(update(&r, context, &a, &result) == DIRAUTH_SUCCESS, "%s", result.detail);
	endpoint_hex(1, revoked);
	ck_assert_int_eq(dirauth_endpoints(context, "mix", "mix-gateway", endpoints, 16, &count, &result),
	                 DIRAUTH_SUCCESS);
	ck_assert_uint_eq(count, 3);
	ck_assert(offered(endpoints, count, revoked));

	/* The provider revokes endpoint 1; the others stay healthy. While the cached snapshot is the
	 * latest and valid, it answers as it was signed. */
	a.now += 2;
	lifecycle(&a, "revoke", 1, "key-compromise");
	for (unsigned i = 2; i <= 3; i++)
		lifecycle(&a, "health", i, "healthy");
	r.client.now = a.now;
	ck_assert_int_eq(dirauth_endpoints(context, "mix", "mix-gateway", endpoints, 16, &count, &result),
	                 DIRAUTH_SUCCESS);
	ck_assert(offered(endpoints, count, revoked));

	/* After the snapshots that list the revocation: never selected again. The update walks the
	 * chain from the held epoch through the one between. */
	mirror_authority_publish(&a, E0 + 2);
	mirror_authority_publish(&a, E0 + 3);
	ck_assert_msg(update(&r, context, &a, &result) == DIRAUTH_SUCCESS, "%s", result.detail);
	struct dirauth_snapshot_info info;
	ck_assert_int_eq(dirauth_snapshot(context, "mix", &info, &result), DIRAUTH_SUCCESS);
	ck_assert_uint_eq(info.epoch, E0 + 3);
	char link[128];
	int walked = 0;
	snprintf(link, sizeof(link), "/v1/mix/snapshots/%" PRIu64, (uint64_t)(E0 + 2));
	for (size_t i = 0; i < r.path_count; i++)
		walked |= strcmp(r.paths[i], link) == 0;
	ck_assert(walked);
	ck_assert_int_eq(dirauth_endpoints(context, "mix", "mix-gateway", endpoints, 16, &count, &result),
	                 DIRAUTH_SUCCESS);
	ck_assert_uint_eq(count, 2);
	ck_assert(!offered(endpoints, count, revoked));
	service_hex(1, service);
	ck_assert_int_eq(dirauth_service(context, "mix", service, endpoints, 16, &count, &result),
	                 DIRAUTH_E_NOT_FOUND);
	for (int round = 0; round < 20; round++) {
		ck_assert_int_eq(dirauth_sample(context, "mix", "mix-gateway", 1, endpoints, &count, &result),
		                 DIRAUTH_SUCCESS);
		ck_assert_uint_eq(count, 1);
		ck_assert_str_ne(endpoints[0].endpoint_id, revoked);
	}
	/* The new body was asked for as a diff from the cached one first. */
	int asked_diff = 0;
	for (size_t i = 0; i < r.path_count; i++)
		asked_diff |= strstr(r.paths[i], "/diff/") != NULL;
	ck_assert(asked_diff);
	assert_paths_anonymous(&r);

	/* A newer snapshot, signed by the authority's own key, that brings the revoked record back
	 * (its registration as the older body held it, in a body that lists no revocation) is refused
	 * whole: what the held snapshot revoked never comes back. */
	struct canned c;
	struct buffer header, body, forged_header, forged_body;
	struct snapshot_body *parsed = NULL;
	struct snapshot_body_limits limits = {100, 100, 100};
	char path[160];
	uint8_t id[32];
	ck_assert(stub_http_start(0, &c.stub) == 0);
	snprintf(c.url, sizeof(c.url), "http://127.0.0.1:%u", stub_http_port(c.stub));
	snprintf(path, sizeof(path), "/v1/mix/snapshots/%" PRIu64 "/body", (uint64_t)(E0 + 1));
	body = test_http_get_ok(a.run.url, path);
	ck_assert(snapshot_body_parse_sections(body.data, body.len, &limits, &parsed) == 0);
	ck_assert(hex_decode(service, 64, id, sizeof(id)) == 0);
	ck_assert_mem_eq(parsed->records[0].service_id, id, 32);
	buffer_init(&header);
	ck_assert(buffer_append(&header, r.client.state.data, r.client.state.len) == 0);
	buffer_init(&forged_header);
	buffer_init(&forged_body);
	forge_successor(&a, &header, id, parsed->records[0].note, parsed->records[0].note_len, &forged_header,
	                &forged_body);
	canned_copy(&c, a.run.url, "/v1/certificates");
	canned_serve(&c, "/v1/mix/snapshots/latest", forged_header.data, forged_header.len);
	snprintf(path, sizeof(path), "/v1/mix/snapshots/%" PRIu64 "/body", (uint64_t)(E0 + 4));
	canned_serve(&c, path, forged_body.data, forged_body.len);
	snprintf(r.base_url, sizeof(r.base_url), "%s", c.url);
	unsigned writes = r.client.state_writes;
	r.client.now = (E0 + 4) * MIRROR_AUTHORITY_EPOCH_LENGTH + 1;
	ck_assert_int_eq(dirauth_update_run(context, "mix", &result), DIRAUTH_E_MISMATCH);
	ck_assert_msg(strstr(result.detail, "never comes back") != NULL, "%s", result.detail);
	ck_assert_uint_eq(r.client.state_writes, writes);
	ck_assert_int_eq(dirauth_snapshot(context, "mix", &info, &result), DIRAUTH_SUCCESS);
	ck_assert_uint_eq(info.epoch, E0 + 3);

	/* The same from a context that installed nothing, holding only what a mirror keeps on disk:
	 * the state and the held body (body_read), taken as the base because it hashes to what the
	 * held header signed. A body that does not is no base, and then nothing is said of it. */
	struct dirauth_context *restarted = resolver_context(&r, &a, 0);
	snprintf(path, sizeof(path), "/v1/mix/snapshots/%" PRIu64 "/body", (uint64_t)(E0 + 3));
	struct buffer held_body = test_http_get_ok(a.run.url, path);
	ck_assert(buffer_append(&r.client.kept_body, held_body.data, held_body.len) == 0);
	r.client.kept_body.data[0] ^= 1;
	writes = r.client.state_writes;
	ck_assert_msg(dirauth_update_run(restarted, "mix", &result) == DIRAUTH_SUCCESS, "%s", result.detail);
	ck_assert_uint_eq(r.client.state_writes, writes + 1);
	/* (Back to the held header: the state a mirror kept.) */
	dirauth_context_free(restarted);
	restarted = resolver_context(&r, &a, 0);
	buffer_reset(&r.client.state);
	ck_assert(buffer_append(&r.client.state, header.data, header.len) == 0);
	r.client.kept_body.data[0] ^= 1;
	unsigned reads = r.client.body_reads;
	ck_assert_int_eq(dirauth_update_run(restarted, "mix", &result), DIRAUTH_E_MISMATCH);
	ck_assert_msg(strstr(result.detail, "never comes back") != NULL, "%s", result.detail);
	ck_assert_uint_eq(r.client.body_reads, reads + 1);
	ck_assert_uint_eq(r.client.state_writes, writes + 1);
	dirauth_context_free(restarted);
	buffer_free(&held_body);
	snapshot_body_free(parsed);
	buffer_free(&body);
	buffer_free(&header);
	buffer_free(&forged_header);
	buffer_free(&forged_body);
	stub_http_stop(c.stub);

	dirauth_result_clear(&result);
	dirauth_context_free(context);
	test_client_free(&r.client);
	mirror_authority_stop(&a);
}
END_TEST

/* ---- a canned server that serves the authority's answers, one of them changed ---- */

static void canned_serve(struct canned *c, const char *path, const uint8_t *bytes, size_t len)
{
	ck_assert(stub_http_route(c->stub, "GET", path, 200, NULL, bytes, len) == 0);
}

static void canned_copy(struct canned *c, const char *authority, const char *path)
{
	struct buffer body = test_http_get_ok(authority, path);
	canned_serve(c, path, body.data, body.len);
	buffer_free(&body);
}

/* The authority's answers of epoch e as the latest: certificates, header, body. */
static void canned_epoch(struct canned *c, const char *authority, uint64_t e)
{
	char path[128];
	canned_copy(c, authority, "/v1/certificates");
	snprintf(path, sizeof(path), "/v1/mix/snapshots/%" PRIu64, e);
	struct buffer header = test_http_get_ok(authority, path);
	canned_serve(c, "/v1/mix/snapshots/latest", header.data, header.len);
	buffer_free(&header);
	snprintf(path, sizeof(path), "/v1/mix/snapshots/%" PRIu64 "/body", e);
	canned_copy(c, authority, path);
}

/* Serves path as the authority does with the byte at offset (from the end when negative) changed. */
static void canned_tamper(struct canned *c, const char *authority, const char *source_path, const char *path,
                          long offset)
{
	struct buffer body = test_http_get_ok(authority, source_path);
	size_t at = offset < 0 ? body.len - (size_t)(-offset) : (size_t)offset;
	body.data[at] = body.data[at] == 'A' ? 'B' : 'A';
	canned_serve(c, path, body.data, body.len);
	buffer_free(&body);
}

/* A second header for the epoch of note: its text with the records root changed, signed by the
 * authority's own signing key (what an authority that equivocates would serve). */
static void forge_header(const struct mirror_authority *a, const struct buffer *note_bytes,
                         struct buffer *out)
{
	struct note *note = NULL;
	struct note_signature signature;
	ck_assert(note_parse(note_bytes->data, note_bytes->len, &note) == 0);
	char *root = strstr((char *)note->text, "records-root ");
	ck_assert(root != NULL);
	root += strlen("records-root ");
	*root = *root == '0' ? '1' : '0';
	struct signer_key *key = test_run_key(a->run.dir, "authority1.key");
	ck_assert(signer_key_sign(key, note->text, note->text_len, &signature) == 0);
	ck_assert(note_format(note->text, note->text_len, &signature, 1, out) == 0);
	signer_key_free(key);
	note_free(note);
}

START_TEST(test_tampered_old_and_equivocating_servers_refused)
{
	struct mirror_authority a;
	struct resolver r;
	struct canned c;
	struct dirauth_result result = {0};
	struct dirauth_snapshot_info info;
	char path[128];

	mirror_authority_start(&a);
	mirror_authority_publish(&a, E0);
	mirror_authority_register(&a, 2);
	mirror_authority_publish(&a, E0 + 1);
	mirror_authority_publish(&a, E0 + 2);
	ck_assert(stub_http_start(0, &c.stub) == 0);
	snprintf(c.url, sizeof(c.url), "http://127.0.0.1:%u", stub_http_port(c.stub));
	resolver_init(&r, &a, c.url);
	struct dirauth_context *context = resolver_context(&r, &a, 0);

	/* A tampered body (a byte of a record), then a tampered header signature. */
	canned_epoch(&c, a.run.url, E0 + 2);
	snprintf(path, sizeof(path), "/v1/mix/snapshots/%" PRIu64 "/body", (uint64_t)(E0 + 2));
	canned_tamper(&c, a.run.url, path, path, -200);
	ck_assert_int_eq(update(&r, context, &a, &result), DIRAUTH_E_MISMATCH);
	ck_assert_msg(strstr(result.detail, "body") != NULL, "%s", result.detail);
	canned_epoch(&c, a.run.url, E0 + 2);
	snprintf(path, sizeof(path), "/v1/mix/snapshots/%" PRIu64, (uint64_t)(E0 + 2));
	canned_tamper(&c, a.run.url, path, "/v1/mix/snapshots/latest", -8);
	ck_assert_int_eq(update(&r, context, &a, &result), DIRAUTH_E_SIGNATURE);
	ck_assert_uint_eq(r.client.state_writes, 0);
	ck_assert_int_eq(dirauth_snapshot(context, "mix", &info, &result), DIRAUTH_E_NO_SNAPSHOT);

	/* The untampered answers are taken. */
	canned_epoch(&c, a.run.url, E0 + 2);
	ck_assert_msg(update(&r, context, &a, &result) == DIRAUTH_SUCCESS, "%s", result.detail);
	ck_assert_uint_eq(r.client.state_writes, 1);

	/* An older snapshot, signed and still valid, is refused: by this context and by a new one over
	 * the same state (a restart). */
	canned_epoch(&c, a.run.url, E0 + 1);
	ck_assert_int_eq(update(&r, context, &a, &result), DIRAUTH_E_ROLLBACK);
	struct dirauth_context *restarted = resolver_context(&r, &a, 0);
	ck_assert_int_eq(update(&r, restarted, &a, &result), DIRAUTH_E_ROLLBACK);
	ck_assert_int_eq(dirauth_snapshot(restarted, "mix", &info, &result), DIRAUTH_E_NO_SNAPSHOT);
	dirauth_context_free(restarted);
	ck_assert_uint_eq(r.client.state_writes, 1);

	/* Another header for the held epoch, signed by the authority: a split view, with both. */
	struct buffer held, forged;
	buffer_init(&held);
	buffer_init(&forged);
	ck_assert(buffer_append(&held, r.client.state.data, r.client.state.len) == 0);
	forge_header(&a, &held, &forged);
	canned_epoch(&c, a.run.url, E0 + 2);
	canned_serve(&c, "/v1/mix/snapshots/latest", forged.data, forged.len);
	ck_assert_int_eq(update(&r, context, &a, &result), DIRAUTH_E_SPLIT_VIEW);
	ck_assert_str_eq(dirauth_status_name(result.status), "split-view");
	ck_assert_uint_eq(result.evidence_held_len, held.len);
	ck_assert(memcmp(result.evidence_held, held.data, held.len) == 0);
	ck_assert_uint_eq(result.evidence_offered_len, forged.len);
	ck_assert(memcmp(result.evidence_offered, forged.data, forged.len) == 0);
	/* The evidence file proves it offline: dirauthctl verify-evidence names the authority. */
	char evidence_path[LAUNCHER_PATH_MAX + 32];
	struct test_outcome outcome;
	ck_assert(result.evidence_file != NULL);
	snprintf(evidence_path, sizeof(evidence_path), "%s/split-view.evidence", a.run.dir);
	test_write_file(evidence_path, result.evidence_file, result.evidence_file_len, 0644);
	const char *verify_args[] = {"verify-evidence", evidence_path, "--trust", a.bundle_path, NULL};
	test_run_program(test_binary_path("ctl/dirauthctl"), verify_args, a.run.dir, &outcome);
	ck_assert_msg(outcome.status == 3, "verify-evidence: %d %s %s", outcome.status, outcome.out,
	              outcome.err);
	ck_assert_msg(strstr(outcome.out, "misbehaviour proven: authority1.dirauth.example") != NULL, "%s",
	              outcome.out);
	test_outcome_free(&outcome);
	ck_assert_uint_eq(r.client.state_writes, 1);
	ck_assert_int_eq(dirauth_snapshot(context, "mix", &info, &result), DIRAUTH_SUCCESS);
	ck_assert_uint_eq(info.epoch, E0 + 2);
	buffer_free(&held);
	buffer_free(&forged);

	/* Two contexts with different trust bundles in one process: B pins a key that is no
	 * authority's (the provider's), so it believes nothing the authority signs, while A, next to
	 * it, takes the same answers. */
	char bundle_b[LAUNCHER_PATH_MAX + 16], provider[NOTE_VERIFIER_KEY_MAX + 1];
	struct signer_key *key = test_run_key(a.run.dir, "provider-a.key");
	note_verifier_format(signer_key_verifier(key), provider);
	signer_key_free(key);
	struct buffer text;
	buffer_init(&text);
	ck_assert(
	    buffer_appendf(&text,
	                   "dirauth trust v1\nnamespace mix dirauth.example/mix\nauthority %s\nthreshold 1\n",
	                   provider) == 0);
	snprintf(bundle_b, sizeof(bundle_b), "%s/bundle-b.txt", a.run.dir);
	test_write_file(bundle_b, text.data, text.len, 0644);
	buffer_free(&text);
	struct resolver r_a, r_b;
	resolver_init(&r_a, &a, a.run.url);
	resolver_init(&r_b, &a, a.run.url);
	struct dirauth_context *context_a = resolver_context(&r_a, &a, 0);
	struct dirauth_context *context_b = test_client_context(&r_b.client, bundle_b, NULL);
	ck_assert_int_eq(update(&r_b, context_b, &a, &result), DIRAUTH_E_SIGNATURE);
	ck_assert_int_eq(update(&r_a, context_a, &a, &result), DIRAUTH_SUCCESS);
	ck_assert_int_eq(dirauth_snapshot(context_b, "mix", &info, &result), DIRAUTH_E_NO_SNAPSHOT);
	ck_assert_int_eq(dirauth_snapshot(context_a, "mix", &info, &result), DIRAUTH_SUCCESS);
	ck_assert_uint_eq(r_b.client.state_writes, 0);
	dirauth_context_free(context_a);
	dirauth_context_free(context_b);
	test_client_free(&r_a.client);
	test_client_free(&r_b.client);

	dirauth_result_clear(&result);
	dirauth_context_free(context);
	test_client_free(&r.client);
	stub_http_stop(c.stub);
	mirror_authority_stop(&a);
}
END_TEST

/* Waits until the authority serves the record shard of epoch (built after the publication). */
static void wait_for_shard(const struct mirror_authority *a, uint64_t epoch, const char *name)
{
	char url[256];
	snprintf(url, sizeof(url), "%s/v1/mix/snapshots/%" PRIu64 "/records/%s", a->run.url, epoch, name);
	for (int attempt = 0; attempt < 1500; attempt++) {
		struct test_http_response response;
		CURLcode rc = test_http_get(url, &response);
		buffer_free(&response.body);
		if (rc == CURLE_OK && response.status == 200)
			return;
		test_sleep_ms(20);
	}
	ck_abort_msg("no record shard %s of epoch %" PRIu64 "; see %s", name, epoch, a->run.log_path);
}

/* A lookup of service driven step by step against r's server, so that the completed lookup can be
 * read (dirauth_lookup_run frees it). */
static enum dirauth_status lookup_steps(const struct resolver *r, struct dirauth_context *context,
                                        const char *service, struct dirauth_update **out,
                                        struct dirauth_result *result)
{
	const char *path = NULL;
	size_t max_bytes = 0;
	enum dirauth_status status = dirauth_lookup_begin(context, "mix", service, out, result);
	while (status == DIRAUTH_SUCCESS && dirauth_update_next(*out, &path, &max_bytes)) {
		char url[512];
		struct test_http_response response;
		snprintf(url, sizeof(url), "%s%s", r->base_url, path);
		ck_assert(test_http_get(url, &response) == CURLE_OK);
		status = dirauth_update_feed(*out, response.status, "", response.body.data, response.body.len,
		                             result);
		buffer_free(&response.body);
	}
	return status;
}

START_TEST(test_one_service_by_proof_against_the_authority)
{
	struct mirror_authority a;
	struct resolver r;
	struct canned c;
	struct dirauth_result result = {0};
	struct dirauth_endpoint endpoints[8];
	size_t count = 0;
	char service[65], endpoint[65], path[160];

	start_with_services(&a, 3, 3);
	wait_for_shard(&a, E0 + 1, "0"); /* 3 records: one shard */
	resolver_init(&r, &a, a.run.url);
	struct dirauth_context *context = resolver_context(&r, &a, 1);

	/* Present, with its healthy endpoint; the draining one's service offers nothing. */
	service_hex(1, service);
	endpoint_hex(1, endpoint);
	ck_assert_msg(dirauth_lookup_run(context, "mix", service, endpoints, 8, &count, &result) ==
	                  DIRAUTH_SUCCESS,
	              "%s", result.detail);
	ck_assert_uint_eq(count, 1);
	ck_assert_str_eq(endpoints[0].endpoint_id, endpoint);
	ck_assert_str_eq(endpoints[0].health, "healthy");
	ck_assert_str_eq(endpoints[0].address, "192.0.2.11:443");
	snprintf(path, sizeof(path), "/v1/mix/snapshots/%" PRIu64 "/records/0", (uint64_t)(E0 + 1));
	ck_assert_str_eq(r.paths[r.path_count - 1], path);
	ck_assert_int_eq(r.client.state_writes, 1);
	service_hex(3, service);
	ck_assert_int_eq(dirauth_lookup_run(context, "mix", service, endpoints, 8, &count, &result),
	                 DIRAUTH_SUCCESS);
	ck_assert_uint_eq(count, 0);
	/* Absent, proven by its neighbours. */
	service_hex(9, service);
	ck_assert_int_eq(dirauth_lookup_run(context, "mix", service, endpoints, 8, &count, &result),
	                 DIRAUTH_E_NOT_FOUND);
	ck_assert_msg(strstr(result.detail, "proven absent") != NULL, "%s", result.detail);

	/* What the proof showed, as a tool reports it: the draining endpoint shown with its statement,
	 * and not offered; the absent service's neighbours. */
	struct dirauth_update *update = NULL;
	struct dirauth_record_endpoint shown[4];
	struct dirauth_record_view view;
	service_hex(3, service);
	endpoint_hex(3, endpoint);
	ck_assert_msg(lookup_steps(&r, context, service, &update, &result) == DIRAUTH_SUCCESS, "%s",
	              result.detail);
	memset(&view, 0, sizeof(view));
	view.endpoints = shown;
	view.endpoint_cap = 4;
	ck_assert_int_eq(dirauth_lookup_record(update, &view, &result), DIRAUTH_SUCCESS);
	ck_assert_int_eq(view.present, 1);
	ck_assert_uint_eq(view.epoch, E0 + 1);
	ck_assert_uint_eq(view.endpoint_count, 1);
	ck_assert_str_eq(shown[0].endpoint.endpoint_id, endpoint);
	ck_assert_str_eq(shown[0].endpoint.health, "draining");
	ck_assert_int_eq(shown[0].has_statement, 1);
	ck_assert_int_eq(shown[0].offered, 0);
	ck_assert(shown[0].health_signer[0] != '\0');
	ck_assert_uint_gt(shown[0].health_issued_at, 0);
	dirauth_update_free(update);
	service_hex(1, service);
	ck_assert_int_eq(lookup_steps(&r, context, service, &update, &result), DIRAUTH_SUCCESS);
	ck_assert_int_eq(dirauth_lookup_record(update, &view, &result), DIRAUTH_SUCCESS);
	ck_assert_uint_eq(view.endpoint_count, 1);
	ck_assert_str_eq(shown[0].endpoint.health, "healthy");
	ck_assert_int_eq(shown[0].offered, 1);
	dirauth_update_free(update);
	service_hex(9, service);
	ck_assert_int_eq(lookup_steps(&r, context, service, &update, &result), DIRAUTH_SUCCESS);
	ck_assert_int_eq(dirauth_lookup_record(update, &view, &result), DIRAUTH_SUCCESS);
	ck_assert_int_eq(view.present, 0);
	ck_assert(view.has_before || view.has_after);
	ck_assert_uint_eq(view.endpoint_count, 0);
	dirauth_update_free(update);

	/* Service 2 revoked: after the snapshot that lists it, proven absent. */
	a.now += 2;
	lifecycle(&a, "revoke", 2, "retired");
	lifecycle(&a, "health", 1, "healthy");
	mirror_authority_publish(&a, E0 + 2);
	wait_for_shard(&a, E0 + 2, "0");
	service_hex(2, service);
	ck_assert_int_eq(dirauth_lookup_run(context, "mix", service, endpoints, 8, &count, &result),
	                 DIRAUTH_E_NOT_FOUND);
	ck_assert_msg(strstr(result.detail, "revoked") != NULL, "%s", result.detail);
	struct dirauth_record_revocation revocations[4];
	memset(&view, 0, sizeof(view));
	view.revocations = revocations;
	view.revocation_cap = 4;
	ck_assert_int_eq(lookup_steps(&r, context, service, &update, &result), DIRAUTH_SUCCESS);
	ck_assert_int_eq(dirauth_lookup_record(update, &view, &result), DIRAUTH_SUCCESS);
	ck_assert_int_eq(view.present, 0);
	ck_assert_uint_ge(view.revocation_count, 1);
	ck_assert_uint_eq(revocations[0].since, E0 + 2);
	dirauth_update_free(update);
	assert_paths_anonymous(&r);
	dirauth_context_free(context);

	/* A canned server: a tampered record in the shard is refused; an older snapshot's shard too
	 * (never going back, from the state). */
	ck_assert(stub_http_start(0, &c.stub) == 0);
	snprintf(c.url, sizeof(c.url), "http://127.0.0.1:%u", stub_http_port(c.stub));
	snprintf(r.base_url, sizeof(r.base_url), "%s", c.url);
	context = resolver_context(&r, &a, 0);
	canned_epoch(&c, a.run.url, E0 + 2);
	snprintf(path, sizeof(path), "/v1/mix/snapshots/%" PRIu64 "/records/0", (uint64_t)(E0 + 2));
	struct buffer shard = test_http_get_ok(a.run.url, path);
	char *address = strstr((char *)shard.data, "192.0.2.11:443");
	ck_assert(address != NULL);
	address[13] = '4'; /* :443 becomes :444 */
	canned_serve(&c, path, shard.data, shard.len);
	buffer_free(&shard);
	service_hex(1, service);
	enum dirauth_status status =
	    dirauth_lookup_run(context, "mix", service, endpoints, 8, &count, &result);
	ck_assert_msg(status == DIRAUTH_E_MISMATCH || status == DIRAUTH_E_SIGNATURE, "%s: %s",
	              dirauth_status_name(status), result.detail);
	ck_assert_uint_eq(count, 0);
	canned_epoch(&c, a.run.url, E0 + 1);
	snprintf(path, sizeof(path), "/v1/mix/snapshots/%" PRIu64 "/records/0", (uint64_t)(E0 + 1));
	canned_copy(&c, a.run.url, path);
	ck_assert_int_eq(dirauth_lookup_run(context, "mix", service, endpoints, 8, &count, &result),
	                 DIRAUTH_E_ROLLBACK);

	dirauth_result_clear(&result);
	dirauth_context_free(context);
	test_client_free(&r.client);
	stub_http_stop(c.stub);
	mirror_authority_stop(&a);
}
END_TEST

static Suite *libdirauth_suite(void)
{
	Suite *s = suite_create("libdirauth against an authority");
	TCase *tc = tcase_create("scenarios");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_draining_never_offered_samples_differ_nothing_identifies);
	tcase_add_test(tc, test_revoked_endpoint_not_selected_after_its_revocation);
	tcase_add_test(tc, test_tampered_old_and_equivocating_servers_refused);
	tcase_add_test(tc, test_one_service_by_proof_against_the_authority);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	SRunner *runner = srunner_create(libdirauth_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	curl_global_cleanup();
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
