/*
 * check_peers.c: server/peers, the client side of the authority protocol, against real HTTP peers
 * on loopback.
 *
 * Each test starts small libmicrohttpd servers, one per peer, that serve what a peer serves: a
 * certificate bundle at /v1/certificates made in the test from real identity and signing keys
 * (certificate_fixture.h), and canned answers for the protocol's routes. A peer can be told to
 * change its bundle mid-test (a rotation), to fail its next requests with a status (5xx to be
 * retried, 4xx not), to answer every request with 10 MB of garbage, or to redirect. A hanging peer
 * is a socket that listens and never accepts; an unreachable one, a port nobody listens on. Every
 * server counts its requests per path, so a test sees what reached it: how many attempts, whether
 * an on-demand refresh was rate-limited, whether a redirect's target was asked for.
 *
 * Times are the caller's: the authority set judges windows and refresh intervals on the `now` it
 * is given, so the tests move time by passing another now, never by sleeping (the one real wait
 * is the hanging peer's timeout of one second).
 *
 * Each server also counts the connections it accepts (the client keeps them alive), records the
 * Content-Encoding of what was posted, and can refuse every encoded body with 415 as an authority
 * that takes none would. A transport of the test's own stands in for HTTP to show the seam a
 * simulation uses.
 */
#include "certificate_fixture.h"
#include "net/client.h"
#include "net/pool.h"
#include "base/buffer.h"
#include "compress/compress.h"
#include "schema/certificate.h"
#include "base/error.h"
#include "schema/note.h"
#include "schema/vote.h"
#include "server/config/config.h"
#include "server/peers/authority_set.h"
#include "server/peers/peer_client.h"
#include "signer/key.h"
#include "test_http_server.h"
#include "test_support.h"
#include "verify/keyring.h"

#include <arpa/inet.h>
#include <check.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NOW          1767225600ULL /* 2026-01-01 00:00:00 UTC */
#define DAY          86400ULL
#define NS           "mix"
#define EPOCH        5ULL
#define MAX_MEMBERS  4
#define MAX_CANNED   12
#define MAX_COUNTS   24
#define GARBAGE_SIZE (10u * 1024 * 1024)

/* ---- a peer: a libmicrohttpd server with canned answers ---- */

struct canned_answer {
	char method[8];
	char path[192];
	unsigned status;
	struct buffer body;
	char header[32]; /* an extra header of the answer, "" for none */
	char value[192];
};

struct path_count {
	char path[192];
	unsigned count;
};

enum peer_mode { MODE_NORMAL, MODE_GARBAGE_STREAM, MODE_GARBAGE_LENGTH, MODE_REDIRECT, MODE_NO_ENCODINGS };

struct test_peer {
	struct MHD_Daemon *daemon;
	unsigned port;
	pthread_mutex_t lock;
	enum peer_mode mode;
	struct buffer certificates;
	struct canned_answer canned[MAX_CANNED];
	size_t canned_count;
	struct path_count counts[MAX_COUNTS];
	unsigned fail_left; /* the next requests but certificates are answered fail_status */
	unsigned fail_status;
	char fail_code[32];
	char last_method[8];
	char last_path[192];
	char last_accept_encoding[64];
	char last_content_type[64];
	char last_content_encoding[64];
	struct buffer last_body;
	unsigned connections; /* accepted */
};

static uint8_t *garbage;

static unsigned peer_count_of(struct test_peer *peer, const char *path)
{
	unsigned count = 0;

	pthread_mutex_lock(&peer->lock);
	for (size_t i = 0; i < MAX_COUNTS; i++) {
		if (strcmp(peer->counts[i].path, path) == 0)
			count = peer->counts[i].count;
	}
	pthread_mutex_unlock(&peer->lock);
	return count;
}

/* Under the lock. */
static void count_path(struct test_peer *peer, const char *path)
{
	for (size_t i = 0; i < MAX_COUNTS; i++) {
		if (peer->counts[i].path[0] == '\0')
			snprintf(peer->counts[i].path, sizeof(peer->counts[i].path), "%s", path);
		if (strcmp(peer->counts[i].path, path) == 0) {
			peer->counts[i].count++;
			return;
		}
	}
}

static ssize_t stream_garbage(void *context, uint64_t position, char *out, size_t max)
{
	size_t left;

	(void)context;
	if (position >= GARBAGE_SIZE)
		return MHD_CONTENT_READER_END_OF_STREAM;
	left = GARBAGE_SIZE - (size_t)position;
	if (left > max)
		left = max;
	memcpy(out, garbage, left);
	return (ssize_t)left;
}

static enum MHD_Result handle(void *context, struct MHD_Connection *connection, const char *url,
                              const char *method, const char *version, const char *upload_data,
                              size_t *upload_data_size, void **request_context)
{
	struct test_peer *peer = context;
	struct buffer *posted = NULL;
	const char *accept_encoding;
	const char *content_type;
	const char *content_encoding;
	enum MHD_Result result;

	(void)version;
	/* Never answered on the first call: a peer keeps the connection alive, as dirauthd does. */
	if (!test_http_server_body(request_context, upload_data, upload_data_size, &posted, &result))
		return result;
	accept_encoding = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, "Accept-Encoding");
	content_type = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, "Content-Type");
	content_encoding = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, "Content-Encoding");
	pthread_mutex_lock(&peer->lock);
	count_path(peer, url);
	snprintf(peer->last_method, sizeof(peer->last_method), "%s", method);
	snprintf(peer->last_path, sizeof(peer->last_path), "%s", url);
	snprintf(peer->last_accept_encoding, sizeof(peer->last_accept_encoding), "%s",
	         accept_encoding != NULL ? accept_encoding : "");
	snprintf(peer->last_content_type, sizeof(peer->last_content_type), "%s",
	         content_type != NULL ? content_type : "");
	snprintf(peer->last_content_encoding, sizeof(peer->last_content_encoding), "%s",
	         content_encoding != NULL ? content_encoding : "");
	buffer_reset(&peer->last_body);
	if (posted->len > 0)
		buffer_append(&peer->last_body, posted->data, posted->len);

	if (peer->mode == MODE_NO_ENCODINGS && content_encoding != NULL) {
		static const char refused[] =
		    "{\"error\":\"unsupported_encoding\",\"detail\":\"none taken.\"}";
		pthread_mutex_unlock(&peer->lock);
		return test_http_server_answer(connection, 415, refused, strlen(refused), "Content-Type",
		                               "application/json");
	}

	if (peer->mode == MODE_GARBAGE_STREAM) {
		pthread_mutex_unlock(&peer->lock);
		struct MHD_Response *response = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64 * 1024,
		                                                                  stream_garbage, NULL, NULL);
		result = MHD_queue_response(connection, 200, response);
		MHD_destroy_response(response);
		return result;
	}
	if (peer->mode == MODE_GARBAGE_LENGTH) {
		pthread_mutex_unlock(&peer->lock);
		struct MHD_Response *response =
		    MHD_create_response_from_buffer(GARBAGE_SIZE, garbage, MHD_RESPMEM_PERSISTENT);
		result = MHD_queue_response(connection, 200, response);
		MHD_destroy_response(response);
		return result;
	}
	if (peer->mode == MODE_REDIRECT && strcmp(url, "/v1/elsewhere") != 0) {
		char location[96];
		snprintf(location, sizeof(location), "http://127.0.0.1:%u/v1/elsewhere", peer->port);
		pthread_mutex_unlock(&peer->lock);
		return test_http_server_answer(connection, 302, "", 0, "Location", location);
	}
	if (strcmp(url, "/v1/certificates") == 0) {
		struct buffer copy;
		buffer_init(&copy);
		buffer_append(&copy, peer->certificates.data, peer->certificates.len);
		pthread_mutex_unlock(&peer->lock);
		result = test_http_server_answer(connection, 200, copy.data, copy.len, "Content-Type",
		                                 "text/plain; charset=utf-8");
		buffer_free(&copy);
		return result;
	}
	if (peer->fail_left > 0) {
		char json[128];
		int n = snprintf(json, sizeof(json), "{\"error\":\"%s\",\"detail\":\"failing on purpose.\"}",
		                 peer->fail_code);
		unsigned status = peer->fail_status;
		peer->fail_left--;
		pthread_mutex_unlock(&peer->lock);
		return test_http_server_answer(connection, status, json, (size_t)n, "Content-Type",
		                               "application/json");
	}
	for (size_t i = 0; i < peer->canned_count; i++) {
		struct canned_answer *canned = &peer->canned[i];
		if (strcmp(canned->method, method) != 0 || strcmp(canned->path, url) != 0)
			continue;
		struct buffer copy;
		buffer_init(&copy);
		buffer_append(&copy, canned->body.data, canned->body.len);
		unsigned status = canned->status;
		char header[32], value[192];
		snprintf(header, sizeof(header), "%s", canned->header);
		snprintf(value, sizeof(value), "%s", canned->value);
		pthread_mutex_unlock(&peer->lock);
		result = test_http_server_answer(connection, status, copy.data, copy.len, header, value);
		buffer_free(&copy);
		return result;
	}
	pthread_mutex_unlock(&peer->lock);
	static const char missing[] = "{\"error\":\"not_found\",\"detail\":\"no such document.\"}";
	return test_http_server_answer(connection, 404, missing, strlen(missing), "Content-Type",
	                               "application/json");
}

static void count_connection(void *context, struct MHD_Connection *connection, void **socket_context,
                             enum MHD_ConnectionNotificationCode code)
{
	struct test_peer *peer = context;

	(void)connection;
	(void)socket_context;
	if (code != MHD_CONNECTION_NOTIFY_STARTED)
		return;
	pthread_mutex_lock(&peer->lock);
	peer->connections++;
	pthread_mutex_unlock(&peer->lock);
}

static unsigned peer_connections(struct test_peer *peer)
{
	unsigned count;

	pthread_mutex_lock(&peer->lock);
	count = peer->connections;
	pthread_mutex_unlock(&peer->lock);
	return count;
}

static void peer_start(struct test_peer *peer)
{
	struct sockaddr_in address;
	const union MHD_DaemonInfo *info;

	memset(peer, 0, sizeof(*peer));
	pthread_mutex_init(&peer->lock, NULL);
	memset(&address, 0, sizeof(address));
	address.sin_family = AF_INET;
	address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	peer->daemon =
	    MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD, 0, NULL, NULL, handle, peer, MHD_OPTION_SOCK_ADDR,
	                     &address, MHD_OPTION_NOTIFY_COMPLETED, test_http_server_request_done, NULL,
	                     MHD_OPTION_NOTIFY_CONNECTION, count_connection, peer, MHD_OPTION_END);
	ck_assert_ptr_nonnull(peer->daemon);
	info = MHD_get_daemon_info(peer->daemon, MHD_DAEMON_INFO_BIND_PORT);
	ck_assert_ptr_nonnull(info);
	peer->port = info->port;
}

static void peer_stop(struct test_peer *peer)
{
	MHD_stop_daemon(peer->daemon);
	buffer_free(&peer->certificates);
	buffer_free(&peer->last_body);
	for (size_t i = 0; i < peer->canned_count; i++)
		buffer_free(&peer->canned[i].body);
	pthread_mutex_destroy(&peer->lock);
}

static void peer_serve_certificates(struct test_peer *peer, const struct buffer *bundle)
{
	pthread_mutex_lock(&peer->lock);
	buffer_reset(&peer->certificates);
	ck_assert_int_eq(buffer_append(&peer->certificates, bundle->data, bundle->len), 0);
	pthread_mutex_unlock(&peer->lock);
}

static void peer_can(struct test_peer *peer, const char *method, const char *path, unsigned status,
                     const void *body, size_t len, const char *header, const char *value)
{
	pthread_mutex_lock(&peer->lock);
	ck_assert_uint_lt(peer->canned_count, MAX_CANNED);
	struct canned_answer *canned = &peer->canned[peer->canned_count++];
	memset(canned, 0, sizeof(*canned));
	snprintf(canned->method, sizeof(canned->method), "%s", method);
	snprintf(canned->path, sizeof(canned->path), "%s", path);
	canned->status = status;
	buffer_init(&canned->body);
	ck_assert_int_eq(buffer_append(&canned->body, body, len), 0);
	if (header != NULL) {
		snprintf(canned->header, sizeof(canned->header), "%s", header);
		snprintf(canned->value, sizeof(canned->value), "%s", value);
	}
	pthread_mutex_unlock(&peer->lock);
}

static void peer_fail(struct test_peer *peer, unsigned count, unsigned status, const char *code)
{
	pthread_mutex_lock(&peer->lock);
	peer->fail_left = count;
	peer->fail_status = status;
	snprintf(peer->fail_code, sizeof(peer->fail_code), "%s", code);
	pthread_mutex_unlock(&peer->lock);
}

static void peer_set_mode(struct test_peer *peer, enum peer_mode mode)
{
	pthread_mutex_lock(&peer->lock);
	peer->mode = mode;
	pthread_mutex_unlock(&peer->lock);
}

/* ---- the authority set of a test: keys, certificates, configuration ---- */

struct member_keys {
	char name[64];
	struct signer_key *identity;
	struct signer_key *signing; /* certified from the start */
	struct signer_key *rotated; /* certified only once the test says so */
	struct signer_key *later;   /* likewise, later still */
	struct signer_key *expired; /* certified for a window that ended */
	struct signer_key *unknown; /* never certified */
};

static struct member_keys keys[MAX_MEMBERS];

static void keys_make(size_t count)
{
	for (size_t i = 0; i < count; i++) {
		struct member_keys *k = &keys[i];
		snprintf(k->name, sizeof(k->name), "a%zu.dirauth.example", i + 1);
		ck_assert_int_eq(signer_key_generate(k->name, &k->identity), 0);
		ck_assert_int_eq(signer_key_generate(k->name, &k->signing), 0);
		ck_assert_int_eq(signer_key_generate(k->name, &k->rotated), 0);
		ck_assert_int_eq(signer_key_generate(k->name, &k->later), 0);
		ck_assert_int_eq(signer_key_generate(k->name, &k->expired), 0);
		ck_assert_int_eq(signer_key_generate(k->name, &k->unknown), 0);
	}
}

static void keys_free(size_t count)
{
	for (size_t i = 0; i < count; i++) {
		signer_key_free(keys[i].identity);
		signer_key_free(keys[i].signing);
		signer_key_free(keys[i].rotated);
		signer_key_free(keys[i].later);
		signer_key_free(keys[i].expired);
		signer_key_free(keys[i].unknown);
	}
	memset(keys, 0, sizeof(keys));
}

/* The bundle member i serves: its signing key for [NOW - DAY, NOW + DAY), its expired key for a
 * window that ended a day ago, and the rotated and later keys when asked. */
static void bundle_of(size_t i, int with_rotated, int with_later, struct buffer *out)
{
	struct buffer notes[4];
	size_t count = 0;

	for (size_t j = 0; j < 4; j++)
		buffer_init(&notes[j]);
	fixture_certificate(keys[i].identity, keys[i].signing, NOW - DAY, NOW + DAY, &notes[count++]);
	fixture_certificate(keys[i].identity, keys[i].expired, NOW - 3 * DAY, NOW - DAY, &notes[count++]);
	if (with_rotated)
		fixture_certificate(keys[i].identity, keys[i].rotated, NOW - DAY, NOW + DAY, &notes[count++]);
	if (with_later)
		fixture_certificate(keys[i].identity, keys[i].later, NOW - DAY, NOW + DAY, &notes[count++]);
	buffer_reset(out);
	fixture_certificate_bundle(notes, count, out);
	for (size_t j = 0; j < 4; j++)
		buffer_free(&notes[j]);
}

/* A configuration of count members, this authority member 0, member i answering at urls[i]. */
static struct config *config_make(size_t count, char urls[][64])
{
	struct config *config = calloc(1, sizeof(*config));

	ck_assert_ptr_nonnull(config);
	config->members = calloc(count, sizeof(*config->members));
	ck_assert_ptr_nonnull(config->members);
	config->member_count = count;
	config->self_index = 0;
	config->threshold = count / 2 + 1;
	snprintf(config->authority_name, sizeof(config->authority_name), "%s", keys[0].name);
	for (size_t i = 0; i < count; i++) {
		snprintf(config->members[i].name, sizeof(config->members[i].name), "%.63s", keys[i].name);
		config->members[i].identity = *signer_key_verifier(keys[i].identity);
		snprintf(config->members[i].url, sizeof(config->members[i].url), "%s", urls[i]);
	}
	config->peers.timeout_seconds = 1;
	config->peers.connect_timeout_seconds = 1;
	config->peers.retries = 2;
	config->bounds.registration_body = 64 * 1024;
	config->bounds.records_per_snapshot = 1000;
	config->bounds.snapshot_body_compressed = 1 << 20;
	config->bounds.snapshot_body_uncompressed = 1 << 20;
	return config;
}

/* A fast retry: waits of at most 20 and 40 ms, so a test of three attempts stays quick. */
static const struct peer_client_options fast_retries = {.retry_base_ms = 20, .retry_max_ms = 40};

/* A vote of member i for EPOCH, signed by key, parsed. */
static struct note *vote_signed(size_t i, const struct signer_key *key)
{
	struct vote vote;
	struct buffer text, signed_note;
	struct note_signature signature;
	struct note *note = NULL;

	memset(&vote, 0, sizeof(vote));
	snprintf(vote.namespace_name, sizeof(vote.namespace_name), NS);
	snprintf(vote.origin, sizeof(vote.origin), "dirauth.example/" NS);
	vote.epoch = EPOCH;
	snprintf(vote.authority, sizeof(vote.authority), "%s", keys[i].name);
	vote.method_count = 1;
	vote.methods[0] = 1;
	buffer_init(&text);
	buffer_init(&signed_note);
	ck_assert_int_eq(vote_encode(&vote, &text), 0);
	ck_assert_int_eq(signer_key_sign(key, text.data, text.len, &signature), 0);
	ck_assert_int_eq(note_format(text.data, text.len, &signature, 1, &signed_note), 0);
	ck_assert_int_eq(note_parse(signed_note.data, signed_note.len, &note), 0);
	buffer_free(&text);
	buffer_free(&signed_note);
	return note;
}

/* One note over text signed by each of signers in order. */
static struct note *note_signed_by(const char *text, struct signer_key *const *signers, size_t count)
{
	struct note_signature signatures[MAX_MEMBERS + 2];
	struct buffer signed_note;
	struct note *note = NULL;

	ck_assert_uint_le(count, MAX_MEMBERS + 2);
	for (size_t i = 0; i < count; i++)
		ck_assert_int_eq(
		    signer_key_sign(signers[i], (const uint8_t *)text, strlen(text), &signatures[i]), 0);
	buffer_init(&signed_note);
	ck_assert_int_eq(note_format((const uint8_t *)text, strlen(text), signatures, count, &signed_note),
	                 0);
	ck_assert_int_eq(note_parse(signed_note.data, signed_note.len, &note), 0);
	buffer_free(&signed_note);
	return note;
}

static uint64_t monotonic_ms(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)now.tv_sec * 1000u + (uint64_t)now.tv_nsec / 1000000u;
}

/* Three members: a1 (this authority, its bundle installed), a2 and a3 served by test peers. */
struct trio {
	struct test_peer peers[3]; /* [0] unused */
	struct config *config;
	struct peer_client *client;
	struct authority_set *set;
	struct buffer own;
};

static void trio_open(struct trio *t)
{
	char urls[3][64];
	struct buffer bundle;
	char detail[VERIFY_DETAIL_MAX];

	memset(t, 0, sizeof(*t));
	keys_make(3);
	snprintf(urls[0], sizeof(urls[0]), "http://127.0.0.1:1");
	buffer_init(&bundle);
	for (size_t i = 1; i < 3; i++) {
		peer_start(&t->peers[i]);
		snprintf(urls[i], sizeof(urls[i]), "http://127.0.0.1:%u", t->peers[i].port);
		bundle_of(i, 0, 0, &bundle);
		peer_serve_certificates(&t->peers[i], &bundle);
	}
	buffer_free(&bundle);
	t->config = config_make(3, urls);
	ck_assert_int_eq(peer_client_new(t->config, &fast_retries, &t->client), 0);
	buffer_init(&t->own);
	bundle_of(0, 0, 0, &t->own);
	int rc = authority_set_new(t->config, t->client, t->own.data, t->own.len, NULL, &t->set, detail,
	                           sizeof(detail));
	ck_assert_msg(rc == 0, "%s", detail);
}

static void trio_close(struct trio *t)
{
	authority_set_free(t->set);
	peer_client_free(t->client);
	config_free(t->config);
	for (size_t i = 1; i < 3; i++)
		peer_stop(&t->peers[i]);
	buffer_free(&t->own);
	keys_free(3);
}

static size_t index_of(const struct authority_set *set, const char *name)
{
	size_t index = 99;
	ck_assert_int_eq(authority_set_member_by_name(set, name, &index), 0);
	return index;
}

/* ---- the authority set ---- */

START_TEST(test_certified_vote_verifies)
{
	struct trio t;
	char detail[VERIFY_DETAIL_MAX];
	size_t index = 0;

	trio_open(&t);
	ck_assert_uint_eq(authority_set_member_count(t.set), 3);
	ck_assert_uint_eq(authority_set_threshold(t.set), 2);
	ck_assert_uint_eq(authority_set_self_index(t.set), 0);
	ck_assert_str_eq(authority_set_member_name(t.set, 2), keys[2].name);
	ck_assert_ptr_null(authority_set_member_name(t.set, 3));
	ck_assert_int_eq(authority_set_member_by_name(t.set, "nobody.example", &index),
	                 DIRAUTH_ERR_NOT_FOUND);
	/* Before the first refresh only this authority's own bundle is known. */
	ck_assert_uint_eq(authority_set_certificate_count(t.set, 0), 2);
	ck_assert_uint_eq(authority_set_certificate_count(t.set, 1), 0);
	uint64_t not_after = 1;
	ck_assert_int_eq(authority_set_certificate_not_after(t.set, 1, &not_after), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(authority_set_refresh(t.set, NOW, detail, sizeof(detail)), 0);
	ck_assert_uint_eq(authority_set_certificate_count(t.set, 1), 2);
	ck_assert_uint_eq(authority_set_certificate_count(t.set, 2), 2);
	/* The metrics' figure: the latest not-after of the ring (the expired one ended before). */
	ck_assert_int_eq(authority_set_certificate_not_after(t.set, 1, &not_after), 0);
	ck_assert_uint_eq(not_after, NOW + DAY);
	ck_assert_int_eq(authority_set_certificate_not_after(t.set, 3, &not_after), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_uint_eq(peer_count_of(&t.peers[1], "/v1/certificates"), 1);

	for (size_t i = 0; i < 3; i++) {
		struct note *vote = vote_signed(i, keys[i].signing);
		int rc = authority_set_verify(t.set, index_of(t.set, keys[i].name), vote, NOW - 60, NOW,
		                              detail, sizeof(detail));
		ck_assert_msg(rc == 0, "%s: %s", keys[i].name, detail);
		ck_assert_str_eq(detail, "");
		note_free(vote);
	}
	/* Not due again until refresh_seconds have passed: no request. */
	ck_assert_int_eq(authority_set_refresh(t.set, NOW + 299, detail, sizeof(detail)), 0);
	ck_assert_uint_eq(peer_count_of(&t.peers[1], "/v1/certificates"), 1);
	ck_assert_int_eq(authority_set_refresh(t.set, NOW + 300, detail, sizeof(detail)), 0);
	ck_assert_uint_eq(peer_count_of(&t.peers[1], "/v1/certificates"), 2);
	ck_assert_uint_eq(peer_count_of(&t.peers[2], "/v1/certificates"), 2);
	trio_close(&t);
}
END_TEST

/* The certificates a refresh fetched are kept in the cache directory and believed after a start
 * with every peer unreachable; a cached file that is not a bundle, or a bundle of another
 * identity, adds nothing, and an unchanged bundle is not written again. */
START_TEST(test_certificates_outlive_a_restart)
{
	struct trio t;
	char detail[VERIFY_DETAIL_MAX], directory[] = "/tmp/check_peers_cache_XXXXXX", path[128];
	struct authority_set_options options = {.cache_dir = NULL};
	struct authority_set *later = NULL;
	struct stat before, after;

	trio_open(&t);
	ck_assert_ptr_nonnull(mkdtemp(directory));
	options.cache_dir = directory;
	authority_set_free(t.set);
	ck_assert_int_eq(authority_set_new(t.config, t.client, t.own.data, t.own.len, &options, &t.set,
	                                   detail, sizeof(detail)),
	                 0);
	ck_assert_uint_eq(authority_set_certificate_count(t.set, 1), 0);
	ck_assert_int_eq(authority_set_refresh(t.set, NOW, detail, sizeof(detail)), 0);
	snprintf(path, sizeof path, "%s/%s.certificates", directory, keys[1].name);
	ck_assert_int_eq(stat(path, &before), 0);
	ck_assert_int_gt(before.st_size, 0);
	/* The same bundle again: the file is not rewritten. */
	ck_assert_int_eq(authority_set_refresh(t.set, NOW + 300, detail, sizeof(detail)), 0);
	ck_assert_int_eq(stat(path, &after), 0);
	ck_assert_int_eq(before.st_ino, after.st_ino);

	/* A start with no peer reachable (no client at all): the cached certificates verify votes. */
	ck_assert_int_eq(authority_set_new(t.config, NULL, t.own.data, t.own.len, &options, &later, detail,
	                                   sizeof(detail)),
	                 0);
	ck_assert_uint_eq(authority_set_certificate_count(later, 1), 2);
	ck_assert_uint_eq(authority_set_certificate_count(later, 2), 2);
	struct note *vote = vote_signed(2, keys[2].signing);
	ck_assert_int_eq(authority_set_verify(later, 2, vote, NOW - 60, NOW, detail, sizeof(detail)), 0);
	note_free(vote);
	authority_set_free(later);

	/* a3's file replaced by a2's bundle (not certified by a3's identity), a2's by garbage: a start
	 * believes neither. */
	struct buffer bundle;
	buffer_init(&bundle);
	bundle_of(1, 0, 0, &bundle);
	char other[128];
	snprintf(other, sizeof other, "%s/%s.certificates", directory, keys[2].name);
	FILE *file = fopen(other, "wb");
	ck_assert_ptr_nonnull(file);
	ck_assert_uint_eq(fwrite(bundle.data, 1, bundle.len, file), bundle.len);
	fclose(file);
	file = fopen(path, "wb");
	ck_assert_ptr_nonnull(file);
	fputs("certificates? no\n", file);
	fclose(file);
	buffer_free(&bundle);
	ck_assert_int_eq(authority_set_new(t.config, NULL, t.own.data, t.own.len, &options, &later, detail,
	                                   sizeof(detail)),
	                 0);
	ck_assert_uint_eq(authority_set_certificate_count(later, 1), 0);
	ck_assert_uint_eq(authority_set_certificate_count(later, 2), 0);
	vote = vote_signed(1, keys[1].signing);
	ck_assert_int_ne(authority_set_verify(later, 1, vote, NOW - 60, NOW, detail, sizeof(detail)), 0);
	note_free(vote);
	authority_set_free(later);

	unlink(path);
	unlink(other);
	ck_assert_int_eq(rmdir(directory), 0);
	trio_close(&t);
}
END_TEST

START_TEST(test_refusals_name_their_reason)
{
	struct trio t;
	char detail[VERIFY_DETAIL_MAX];
	struct note *vote;

	trio_open(&t);
	ck_assert_int_eq(authority_set_refresh(t.set, NOW, detail, sizeof(detail)), 0);

	/* A key a2's identity never certified. */
	vote = vote_signed(1, keys[1].unknown);
	ck_assert_int_eq(authority_set_verify(t.set, 1, vote, NOW, NOW, detail, sizeof(detail)),
	                 DIRAUTH_ERR_UNKNOWN_KEY);
	ck_assert_ptr_nonnull(strstr(detail, "signed by a key not certified"));
	ck_assert_ptr_nonnull(
	    strstr(detail, "has no certificate from the pinned identity of a2.dirauth.example"));
	note_free(vote);

	/* a3's own certified key does not speak for a2, and asks nothing of a2's peer. */
	unsigned before = peer_count_of(&t.peers[1], "/v1/certificates");
	vote = vote_signed(2, keys[2].signing);
	ck_assert_int_eq(authority_set_verify(t.set, 1, vote, NOW, NOW, detail, sizeof(detail)),
	                 DIRAUTH_ERR_UNKNOWN_KEY);
	ck_assert_ptr_nonnull(strstr(detail, "a3.dirauth.example key"));
	ck_assert_ptr_nonnull(strstr(detail, "is not an authority of the authority set's pin for a2"));
	ck_assert_int_eq(authority_set_verify(t.set, 2, vote, NOW, NOW, detail, sizeof(detail)), 0);
	note_free(vote);
	ck_assert_uint_eq(peer_count_of(&t.peers[1], "/v1/certificates"), before);

	/* A certificate that ended a day ago: neither the vote's time nor now lies in it. */
	vote = vote_signed(1, keys[1].expired);
	ck_assert_int_eq(authority_set_verify(t.set, 1, vote, NOW, NOW, detail, sizeof(detail)),
	                 DIRAUTH_ERR_UNKNOWN_KEY);
	ck_assert_ptr_nonnull(strstr(detail, "is certified only from"));
	/* Inside the old window but judged now too: still refused. */
	ck_assert_int_eq(authority_set_verify(t.set, 1, vote, NOW - 2 * DAY, NOW, detail, sizeof(detail)),
	                 DIRAUTH_ERR_UNKNOWN_KEY);
	/* Judged only inside it (at = now = then), it counted. */
	ck_assert_int_eq(
	    authority_set_verify(t.set, 1, vote, NOW - 2 * DAY, NOW - 2 * DAY, detail, sizeof(detail)), 0);
	note_free(vote);

	/* The identity key signs certificates, not statements. */
	vote = vote_signed(1, keys[1].identity);
	ck_assert_int_eq(authority_set_verify(t.set, 1, vote, NOW, NOW, detail, sizeof(detail)),
	                 DIRAUTH_ERR_UNKNOWN_KEY);
	ck_assert_ptr_nonnull(strstr(detail, "is a pinned identity key"));
	note_free(vote);

	/* A certified key's signature over other text: refused as a bad signature. */
	vote = vote_signed(1, keys[1].signing);
	vote->text[vote->text_len - 2] = vote->text[vote->text_len - 2] == '1' ? '2' : '1';
	ck_assert_int_eq(authority_set_verify(t.set, 1, vote, NOW, NOW, detail, sizeof(detail)),
	                 DIRAUTH_ERR_SIGNATURE);
	ck_assert_ptr_nonnull(strstr(detail, "bad signature"));
	ck_assert_int_eq(authority_set_verify(t.set, 3, vote, NOW, NOW, detail, sizeof(detail)),
	                 DIRAUTH_ERR_NOT_FOUND);
	note_free(vote);
	trio_close(&t);
}
END_TEST

START_TEST(test_on_demand_refresh_is_rate_limited)
{
	struct trio t;
	char detail[VERIFY_DETAIL_MAX];
	struct buffer bundle;
	struct note *rotated, *later;

	trio_open(&t);
	buffer_init(&bundle);
	ck_assert_int_eq(authority_set_refresh(t.set, NOW, detail, sizeof(detail)), 0);
	ck_assert_uint_eq(peer_count_of(&t.peers[1], "/v1/certificates"), 1);

	/* a2 rotates: its peer now serves a certificate for a new key, and a vote signed by it
	 * arrives. The vote names a key the ring lacks: one fetch, and it verifies. */
	bundle_of(1, 1, 0, &bundle);
	peer_serve_certificates(&t.peers[1], &bundle);
	rotated = vote_signed(1, keys[1].rotated);
	int rc = authority_set_verify(t.set, 1, rotated, NOW + 1, NOW + 1, detail, sizeof(detail));
	ck_assert_msg(rc == 0, "%s", detail);
	ck_assert_uint_eq(peer_count_of(&t.peers[1], "/v1/certificates"), 2);
	ck_assert_uint_eq(authority_set_certificate_count(t.set, 1), 3);
	/* Known now: verifying again asks nothing. */
	ck_assert_int_eq(authority_set_verify(t.set, 1, rotated, NOW + 2, NOW + 2, detail, sizeof(detail)),
	                 0);
	ck_assert_uint_eq(peer_count_of(&t.peers[1], "/v1/certificates"), 2);

	/* A flood of votes under keys a2 never certified: within 10 s of the last on-demand fetch,
	 * not one more request reaches the peer. */
	for (int i = 0; i < 50; i++) {
		struct note *bogus = vote_signed(1, keys[1].unknown);
		ck_assert_int_eq(
		    authority_set_verify(t.set, 1, bogus, NOW + 3, NOW + 3, detail, sizeof(detail)),
		    DIRAUTH_ERR_UNKNOWN_KEY);
		note_free(bogus);
	}
	ck_assert_uint_eq(peer_count_of(&t.peers[1], "/v1/certificates"), 2);

	/* a2 rotates again within the interval: refused until the interval has passed, then one fetch
	 * picks it up. */
	bundle_of(1, 1, 1, &bundle);
	peer_serve_certificates(&t.peers[1], &bundle);
	later = vote_signed(1, keys[1].later);
	ck_assert_int_eq(authority_set_verify(t.set, 1, later, NOW + 10, NOW + 10, detail, sizeof(detail)),
	                 DIRAUTH_ERR_UNKNOWN_KEY);
	ck_assert_uint_eq(peer_count_of(&t.peers[1], "/v1/certificates"), 2);
	ck_assert_int_eq(authority_set_verify(t.set, 1, later, NOW + 11, NOW + 11, detail, sizeof(detail)),
	                 0);
	ck_assert_uint_eq(peer_count_of(&t.peers[1], "/v1/certificates"), 3);
	/* The limit is per member: a3 was never asked on demand. */
	ck_assert_uint_eq(peer_count_of(&t.peers[2], "/v1/certificates"), 1);

	note_free(rotated);
	note_free(later);
	buffer_free(&bundle);
	trio_close(&t);
}
END_TEST

struct verifier_thread {
	struct authority_set *set;
	struct note *vote;
	atomic_int failures;
};

static void *verify_many(void *argument)
{
	struct verifier_thread *v = argument;

	for (int i = 0; i < 300; i++) {
		if (authority_set_verify(v->set, 1, v->vote, NOW, NOW, NULL, 0) != 0)
			atomic_fetch_add(&v->failures, 1);
	}
	return NULL;
}

START_TEST(test_verifies_while_refreshing)
{
	struct trio t;
	struct verifier_thread v;
	pthread_t threads[4];
	struct buffer bundle;
	char detail[VERIFY_DETAIL_MAX];

	trio_open(&t);
	ck_assert_int_eq(authority_set_refresh(t.set, NOW, detail, sizeof(detail)), 0);
	v.set = t.set;
	v.vote = vote_signed(1, keys[1].signing);
	atomic_init(&v.failures, 0);
	buffer_init(&bundle);
	bundle_of(1, 1, 0, &bundle);
	for (size_t i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_create(&threads[i], NULL, verify_many, &v), 0);
	/* Rings swapped under the verifiers, installed and fetched. */
	for (uint64_t i = 0; i < 20; i++) {
		ck_assert_int_eq(
		    authority_set_install(t.set, 1, bundle.data, bundle.len, detail, sizeof(detail)), 0);
		ck_assert_int_eq(authority_set_refresh(t.set, NOW + (i + 1) * 300, detail, sizeof(detail)),
		                 0);
	}
	for (size_t i = 0; i < 4; i++)
		pthread_join(threads[i], NULL);
	ck_assert_int_eq(atomic_load(&v.failures), 0);
	/* A bundle that is no bundle leaves the ring as it was. */
	ck_assert_int_eq(
	    authority_set_install(t.set, 1, (const uint8_t *)"junk\n", 5, detail, sizeof(detail)),
	    DIRAUTH_ERR_SYNTAX);
	ck_assert_ptr_nonnull(strstr(detail, "not a certificate bundle"));
	ck_assert_int_eq(authority_set_verify(t.set, 1, v.vote, NOW, NOW, NULL, 0), 0);
	note_free(v.vote);
	buffer_free(&bundle);
	trio_close(&t);
}
END_TEST

START_TEST(test_count_signers_and_pins)
{
	static const char text[] = "dirauth snapshot-header v1\nnamespace mix\nepoch 5\n";
	struct trio t;
	char detail[VERIFY_DETAIL_MAX];
	struct signer_key *stranger = NULL;
	uint8_t counted[3];
	size_t count = 9;
	struct certificate_keyring *ring = NULL;
	struct verify_pins pins;

	trio_open(&t);
	ck_assert_int_eq(authority_set_refresh(t.set, NOW, detail, sizeof(detail)), 0);
	ck_assert_int_eq(signer_key_generate("stranger.example", &stranger), 0);

	/* a1 and a3 signed, with a stranger, a3 twice (two keys of one member count once), and a2
	 * with a key it never certified. */
	struct signer_key *signers[] = {keys[0].signing, stranger, keys[2].signing, keys[2].rotated,
	                                keys[1].unknown};
	ck_assert_int_eq(authority_set_install(t.set, 2, NULL, 0, NULL, 0), DIRAUTH_ERR_SYNTAX);
	struct buffer bundle;
	buffer_init(&bundle);
	bundle_of(2, 1, 0, &bundle);
	ck_assert_int_eq(authority_set_install(t.set, 2, bundle.data, bundle.len, detail, sizeof(detail)), 0);
	struct note *header = note_signed_by(text, signers, 5);
	ck_assert_int_eq(authority_set_count_signers(t.set, header, NOW, NOW, counted, &count), 0);
	ck_assert_uint_eq(count, 2);
	ck_assert_uint_eq(counted[0], 1);
	ck_assert_uint_eq(counted[1], 0);
	ck_assert_uint_eq(counted[2], 1);

	/* The set's pins, as a mirror of the set holds them: 2 of 3 is the threshold. */
	ck_assert_int_eq(authority_set_pins(t.set, NOW, &ring, &pins), 0);
	ck_assert_uint_eq(pins.threshold, 2);
	ck_assert_str_eq(pins.pinned_by, AUTHORITY_SET_PINNED_BY);
	ck_assert_uint_eq(ring->identity_count, 3);
	/* The expired certificates are not valid now and are left out. */
	ck_assert_uint_eq(ring->certificate_count, 4);
	ck_assert_int_eq(verify_note(&pins, header, NOW, NOW, NULL, detail, sizeof(detail)), 0);
	struct note *alone = note_signed_by(text, signers, 2);
	ck_assert_int_eq(verify_note(&pins, alone, NOW, NOW, NULL, detail, sizeof(detail)),
	                 DIRAUTH_ERR_THRESHOLD);
	ck_assert_ptr_nonnull(strstr(detail, "the authority set requires 2"));
	ck_assert_int_eq(authority_set_count_signers(t.set, alone, NOW, NOW, counted, &count), 0);
	ck_assert_uint_eq(count, 1);

	/* A bad signature by a certified key refuses the note whole, but still says who signed. */
	header->text[5] = 'X';
	ck_assert_int_eq(authority_set_count_signers(t.set, header, NOW, NOW, counted, &count),
	                 DIRAUTH_ERR_SIGNATURE);

	verify_keyring_free(ring);
	note_free(header);
	note_free(alone);
	buffer_free(&bundle);
	signer_key_free(stranger);
	trio_close(&t);
}
END_TEST

START_TEST(test_refresh_reports_unreachable_members)
{
	char urls[3][64];
	struct config *config;
	struct peer_client *client = NULL;
	struct authority_set *set = NULL;
	struct test_peer peer;
	struct buffer bundle;
	char detail[VERIFY_DETAIL_MAX];
	unsigned dead_port = test_free_port();

	keys_make(3);
	peer_start(&peer);
	buffer_init(&bundle);
	bundle_of(1, 0, 0, &bundle);
	peer_serve_certificates(&peer, &bundle);
	snprintf(urls[0], sizeof(urls[0]), "http://127.0.0.1:1");
	snprintf(urls[1], sizeof(urls[1]), "http://127.0.0.1:%u", peer.port);
	snprintf(urls[2], sizeof(urls[2]), "http://127.0.0.1:%u", dead_port);
	config = config_make(3, urls);
	ck_assert_int_eq(peer_client_new(config, &fast_retries, &client), 0);
	ck_assert_int_eq(authority_set_new(config, client, NULL, 0, NULL, &set, detail, sizeof(detail)), 0);
	ck_assert_int_eq(authority_set_refresh(set, NOW, detail, sizeof(detail)), DIRAUTH_ERR_UNAVAILABLE);
	ck_assert_ptr_nonnull(strstr(detail, "a3.dirauth.example: unreachable"));
	ck_assert_ptr_null(strstr(detail, "a2.dirauth.example"));
	ck_assert_uint_eq(authority_set_certificate_count(set, 1), 2);
	ck_assert_uint_eq(authority_set_certificate_count(set, 2), 0);

	/* A configuration the client was not made for is refused. */
	struct authority_set *other = NULL;
	config->member_count = 2;
	ck_assert_int_eq(authority_set_new(config, client, NULL, 0, NULL, &other, detail, sizeof(detail)),
	                 DIRAUTH_ERR_CONFIG);
	ck_assert_ptr_null(other);
	config->member_count = 3;

	authority_set_free(set);
	peer_client_free(client);
	config_free(config);
	buffer_free(&bundle);
	peer_stop(&peer);
	keys_free(3);
}
END_TEST

/* ---- the peer client ---- */

/* One member a1 (this authority) and one peer a2, served by peer. */
struct pair {
	struct test_peer peer;
	struct config *config;
	struct peer_client *client;
};

static void pair_open(struct pair *p)
{
	char urls[2][64];

	memset(p, 0, sizeof(*p));
	keys_make(2);
	peer_start(&p->peer);
	snprintf(urls[0], sizeof(urls[0]), "http://127.0.0.1:1");
	snprintf(urls[1], sizeof(urls[1]), "http://127.0.0.1:%u", p->peer.port);
	p->config = config_make(2, urls);
	ck_assert_int_eq(peer_client_new(p->config, &fast_retries, &p->client), 0);
}

static void pair_close(struct pair *p)
{
	peer_client_free(p->client);
	config_free(p->config);
	peer_stop(&p->peer);
	keys_free(2);
}

START_TEST(test_routes_are_the_protocols)
{
	static const char envelope[] = "dirauth vote-envelope v1\nnote 4\nnote\nbody 4\nbody";
	static const char header[] = "header note\n";
	struct pair p;
	struct peer_answer answer;
	uint8_t service_id[SERVICE_ID_SIZE];
	char path[192];

	pair_open(&p);
	peer_answer_init(&answer);
	for (size_t i = 0; i < SERVICE_ID_SIZE; i++)
		service_id[i] = (uint8_t)(0xa0 + i);
	peer_can(&p.peer, "POST", "/v1/mix/votes", 202, "", 0, NULL, NULL);
	peer_can(&p.peer, "GET", "/v1/mix/votes/5/a1.dirauth.example", 200, envelope, strlen(envelope), NULL,
	         NULL);
	peer_can(&p.peer, "POST", "/v1/mix/signatures", 202, "", 0, NULL, NULL);
	peer_can(&p.peer, "GET", "/v1/mix/signatures/5", 200, header, strlen(header), NULL, NULL);
	peer_can(&p.peer, "GET", "/v1/mix/snapshots/latest", 200, header, strlen(header), NULL, NULL);
	peer_can(&p.peer, "GET", "/v1/mix/snapshots/4", 200, header, strlen(header), NULL, NULL);
	peer_can(&p.peer, "GET", "/v1/mix/snapshots/4/body", 200, "zz", 2, "Content-Encoding", "zstd");
	snprintf(path, sizeof(path),
	         "/v1/mix/registrations/a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf/7");
	peer_can(&p.peer, "GET", path, 200, "note\n", 5, NULL, NULL);

	ck_assert_int_eq(
	    peer_push_vote(p.client, 1, NS, (const uint8_t *)envelope, strlen(envelope), &answer), 0);
	ck_assert_int_eq(answer.status, 202);
	ck_assert_int_eq(answer.transport, PEER_TRANSPORT_ANSWERED);
	ck_assert_str_eq(p.peer.last_method, "POST");
	ck_assert_str_eq(p.peer.last_path, "/v1/mix/votes");
	ck_assert_str_eq(p.peer.last_content_type, "application/octet-stream");
	ck_assert_uint_eq(p.peer.last_body.len, strlen(envelope));
	ck_assert_int_eq(memcmp(p.peer.last_body.data, envelope, strlen(envelope)), 0);

	ck_assert_int_eq(peer_pull_vote(p.client, 1, NS, EPOCH, keys[0].name, &answer), 0);
	ck_assert_int_eq(answer.status, 200);
	ck_assert_uint_eq(answer.body.len, strlen(envelope));
	ck_assert_str_eq(answer.error_code, "");

	ck_assert_int_eq(
	    peer_push_signature(p.client, 1, NS, (const uint8_t *)header, strlen(header), &answer), 0);
	ck_assert_int_eq(answer.status, 202);
	ck_assert_str_eq(p.peer.last_path, "/v1/mix/signatures");
	ck_assert_str_eq(p.peer.last_content_type, "text/plain; charset=utf-8");

	ck_assert_int_eq(peer_pull_signatures(p.client, 1, NS, EPOCH, &answer), 0);
	ck_assert_int_eq(answer.status, 200);
	ck_assert_int_eq(peer_fetch_latest_header(p.client, 1, NS, &answer), 0);
	ck_assert_int_eq(answer.status, 200);
	ck_assert_int_eq(peer_fetch_header(p.client, 1, NS, 4, &answer), 0);
	ck_assert_int_eq(answer.status, 200);
	ck_assert_int_eq(peer_fetch_body(p.client, 1, NS, 4, &answer), 0);
	ck_assert_int_eq(answer.status, 200);
	ck_assert_str_eq(answer.content_encoding, "zstd");
	ck_assert_str_eq(p.peer.last_accept_encoding, "zstd, gzip");
	ck_assert_int_eq(peer_fetch_registration(p.client, 1, NS, service_id, 7, &answer), 0);
	ck_assert_int_eq(answer.status, 200);
	ck_assert_str_eq(p.peer.last_path, path);
	uint8_t digest[32];
	memset(digest, 0xab, sizeof digest);
	peer_fetch_statement(p.client, 1, NS, digest, &answer);
	ck_assert_str_eq(p.peer.last_path,
	                 "/v1/mix/statements/"
	                 "abababababababababababababababababababababababababababababababab");

	/* A refusal's stable code comes with it. */
	ck_assert_int_eq(peer_fetch_header(p.client, 1, NS, 9, &answer), 0);
	ck_assert_int_eq(answer.status, 404);
	ck_assert_str_eq(answer.error_code, "not_found");
	ck_assert_ptr_nonnull(strstr(answer.reason, "HTTP 404: not_found: no such document."));

	/* Names that would change the path are refused before anything is sent. */
	unsigned before = peer_count_of(&p.peer, "/v1/mix/votes/5/a1.dirauth.example");
	ck_assert_int_eq(peer_pull_vote(p.client, 1, NS, EPOCH, "..", &answer), DIRAUTH_ERR_SYNTAX);
	ck_assert_uint_eq(answer.attempts, 0);
	ck_assert_int_eq(peer_pull_vote(p.client, 1, NS, EPOCH, "a/../b", &answer), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(peer_pull_vote(p.client, 1, NS, EPOCH, "a?b", &answer), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(peer_fetch_latest_header(p.client, 1, "mix/../x", &answer), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(peer_fetch_latest_header(p.client, 1, "m%78", &answer), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(peer_push_vote(p.client, 1, NS, NULL, 0, &answer), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(peer_fetch_latest_header(p.client, 2, NS, &answer), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_uint_eq(peer_count_of(&p.peer, "/v1/mix/votes/5/a1.dirauth.example"), before);

	peer_answer_free(&answer);
	pair_close(&p);
}
END_TEST

/* A reload moves a member to another url (peer_client_reconfigure): the next call goes there,
 * the old address hears nothing more. */
START_TEST(test_a_reload_moves_a_member)
{
	static const char header[] = "header note\n";
	struct pair p;
	struct test_peer moved;
	struct peer_answer answer;
	char urls[2][64];

	pair_open(&p);
	peer_answer_init(&answer);
	memset(&moved, 0, sizeof moved);
	peer_start(&moved);
	peer_can(&p.peer, "GET", "/v1/mix/snapshots/latest", 200, header, strlen(header), NULL, NULL);
	peer_can(&moved, "GET", "/v1/mix/snapshots/latest", 200, header, strlen(header), NULL, NULL);
	ck_assert_int_eq(peer_fetch_latest_header(p.client, 1, NS, &answer), 0);
	ck_assert_int_eq(answer.status, 200);
	ck_assert_uint_eq(peer_count_of(&p.peer, "/v1/mix/snapshots/latest"), 1);

	snprintf(urls[0], sizeof(urls[0]), "http://127.0.0.1:1");
	snprintf(urls[1], sizeof(urls[1]), "http://127.0.0.1:%u", moved.port);
	struct config *reloaded = config_make(2, urls);
	peer_client_reconfigure(p.client, reloaded);
	config_free(reloaded); /* the client keeps copies */
	ck_assert_int_eq(peer_fetch_latest_header(p.client, 1, NS, &answer), 0);
	ck_assert_int_eq(answer.status, 200);
	ck_assert_uint_eq(peer_count_of(&moved, "/v1/mix/snapshots/latest"), 1);
	ck_assert_uint_eq(peer_count_of(&p.peer, "/v1/mix/snapshots/latest"), 1);

	peer_answer_free(&answer);
	peer_stop(&moved);
	pair_close(&p);
}
END_TEST

/* The failed exchanges the client counted with member, all reasons, and those of reason. */
static uint64_t failures_of(const struct peer_client *client, size_t member, enum peer_failure reason,
                            uint64_t *all)
{
	uint64_t counts[PEER_FAILURE_COUNT];
	peer_client_failures(client, member, counts);
	*all = 0;
	for (int f = 0; f < PEER_FAILURE_COUNT; f++)
		*all += counts[f];
	return counts[reason];
}

START_TEST(test_garbage_is_cut_at_the_cap)
{
	struct pair p;
	struct peer_answer answer;
	uint64_t started;

	pair_open(&p);
	peer_answer_init(&answer);
	/* Without a Content-Length: cut as the cap is passed. */
	peer_set_mode(&p.peer, MODE_GARBAGE_STREAM);
	started = monotonic_ms();
	ck_assert_int_eq(peer_pull_signatures(p.client, 1, NS, EPOCH, &answer), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(answer.transport, PEER_TRANSPORT_TOO_LARGE);
	ck_assert_uint_eq(answer.body.len, 0);
	ck_assert_uint_eq(answer.attempts, 1); /* not retried */
	ck_assert_ptr_nonnull(strstr(answer.reason, "response larger than"));
	ck_assert_uint_lt(monotonic_ms() - started, 900);
	/* With one announcing 10 MB: refused before a byte is read. */
	peer_set_mode(&p.peer, MODE_GARBAGE_LENGTH);
	ck_assert_int_eq(peer_push_vote(p.client, 1, NS, (const uint8_t *)"x", 1, &answer),
	                 DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(answer.transport, PEER_TRANSPORT_TOO_LARGE);
	ck_assert_uint_eq(answer.body.len, 0);
	/* Certificates have their own cap, as every operation does. */
	ck_assert_int_eq(peer_fetch_certificates(p.client, 1, &answer), DIRAUTH_ERR_BOUNDS);
	ck_assert_uint_eq(peer_client_answer_cap(p.client, PEER_FETCH_CERTIFICATES), PEER_CERTIFICATES_MAX);
	ck_assert_uint_eq(peer_client_answer_cap(p.client, PEER_PUSH_VOTE), PEER_ACK_MAX);
	ck_assert_uint_lt(peer_client_answer_cap(p.client, PEER_PULL_VOTE), GARBAGE_SIZE);
	/* Each of the three counted once, as too large, for GET /v1/metrics. */
	uint64_t all;
	ck_assert_uint_eq(failures_of(p.client, 1, PEER_FAILURE_TOO_LARGE, &all), 3);
	ck_assert_uint_eq(all, 3);
	peer_answer_free(&answer);
	pair_close(&p);
}
END_TEST

START_TEST(test_redirect_is_not_followed)
{
	struct pair p;
	struct peer_answer answer;

	pair_open(&p);
	peer_answer_init(&answer);
	peer_set_mode(&p.peer, MODE_REDIRECT);
	ck_assert_int_eq(peer_fetch_latest_header(p.client, 1, NS, &answer), 0);
	ck_assert_int_eq(answer.status, 302);
	ck_assert_uint_eq(answer.attempts, 1);
	ck_assert_uint_eq(peer_count_of(&p.peer, "/v1/mix/snapshots/latest"), 1);
	ck_assert_uint_eq(peer_count_of(&p.peer, "/v1/elsewhere"), 0);
	peer_answer_free(&answer);
	pair_close(&p);
}
END_TEST

START_TEST(test_5xx_is_retried_4xx_is_not)
{
	static const char header[] = "header note\n";
	struct pair p;
	struct peer_answer answer;

	pair_open(&p);
	peer_answer_init(&answer);
	peer_can(&p.peer, "GET", "/v1/mix/signatures/5", 200, header, strlen(header), NULL, NULL);
	/* Two 503s, then the answer: three attempts, within retries = 2. */
	peer_fail(&p.peer, 2, 503, "unavailable");
	ck_assert_int_eq(peer_pull_signatures(p.client, 1, NS, EPOCH, &answer), 0);
	ck_assert_int_eq(answer.status, 200);
	ck_assert_uint_eq(answer.attempts, 3);
	ck_assert_uint_eq(peer_count_of(&p.peer, "/v1/mix/signatures/5"), 3);
	uint64_t all;
	failures_of(p.client, 1, PEER_FAILURE_SERVER_ERROR, &all);
	ck_assert_uint_eq(all, 0); /* an answer in the end: no failure */
	/* More 5xx than retries: the last one is the answer. */
	peer_fail(&p.peer, 10, 500, "internal");
	ck_assert_int_eq(peer_pull_signatures(p.client, 1, NS, EPOCH, &answer), 0);
	ck_assert_int_eq(answer.status, 500);
	ck_assert_str_eq(answer.error_code, "internal");
	ck_assert_uint_eq(answer.attempts, 3);
	ck_assert_uint_eq(peer_count_of(&p.peer, "/v1/mix/signatures/5"), 6);
	/* A 4xx is the peer's judgement: asked once. */
	peer_fail(&p.peer, 10, 409, "too_late");
	ck_assert_int_eq(peer_push_vote(p.client, 1, NS, (const uint8_t *)"x", 1, &answer), 0);
	ck_assert_int_eq(answer.status, 409);
	ck_assert_str_eq(answer.error_code, "too_late");
	ck_assert_uint_eq(answer.attempts, 1);
	ck_assert_uint_eq(peer_count_of(&p.peer, "/v1/mix/votes"), 1);
	/* 429 too, unlike net's own retry. */
	peer_fail(&p.peer, 10, 429, "busy");
	ck_assert_int_eq(peer_pull_signatures(p.client, 1, NS, EPOCH, &answer), 0);
	ck_assert_int_eq(answer.status, 429);
	ck_assert_uint_eq(answer.attempts, 1);
	/* Of all these, the 500 after its retries is the one failure counted; a 4xx is an answer. */
	ck_assert_uint_eq(failures_of(p.client, 1, PEER_FAILURE_SERVER_ERROR, &all), 1);
	ck_assert_uint_eq(all, 1);
	peer_answer_free(&answer);
	pair_close(&p);
}
END_TEST

/* Two members: this authority, and one at port of loopback; the configuration and a client with
 * fast retries. */
static void two_members(unsigned port, struct config **config, struct peer_client **client)
{
	char urls[2][64];

	keys_make(2);
	snprintf(urls[0], sizeof(urls[0]), "http://127.0.0.1:1");
	snprintf(urls[1], sizeof(urls[1]), "http://127.0.0.1:%u", port);
	*config = config_make(2, urls);
	ck_assert_int_eq(peer_client_new(*config, &fast_retries, client), 0);
}

START_TEST(test_unreachable_is_retried)
{
	struct config *config;
	struct peer_client *client = NULL;
	struct peer_answer answer;

	two_members(test_free_port(), &config, &client);
	peer_answer_init(&answer);
	ck_assert_int_eq(peer_fetch_certificates(client, 1, &answer), DIRAUTH_ERR_UNAVAILABLE);
	ck_assert_int_eq(answer.transport, PEER_TRANSPORT_UNREACHABLE);
	ck_assert_uint_eq(answer.attempts, 3);
	ck_assert_int_eq(answer.status, 0);
	ck_assert_ptr_nonnull(strstr(answer.reason, "(3 attempts)"));
	/* One failure, not one per attempt; nothing under another member or one out of range. */
	uint64_t all;
	ck_assert_uint_eq(failures_of(client, 1, PEER_FAILURE_UNREACHABLE, &all), 1);
	ck_assert_uint_eq(all, 1);
	failures_of(client, 0, PEER_FAILURE_UNREACHABLE, &all);
	ck_assert_uint_eq(all, 0);
	failures_of(client, 7, PEER_FAILURE_UNREACHABLE, &all);
	ck_assert_uint_eq(all, 0);
	ck_assert_str_eq(peer_failure_name(PEER_FAILURE_SERVER_ERROR), "server_error");
	peer_answer_free(&answer);
	peer_client_free(client);
	config_free(config);
	keys_free(2);
}
END_TEST

/* What each member's callback saw, and when. */
struct arrivals {
	pthread_mutex_t lock;
	uint64_t started;
	uint64_t at[MAX_MEMBERS];
	enum peer_transport_outcome transport[MAX_MEMBERS];
	unsigned calls;
};

static void on_answer(void *context, size_t member, const struct peer_answer *answer)
{
	struct arrivals *arrivals = context;

	pthread_mutex_lock(&arrivals->lock);
	arrivals->at[member] = monotonic_ms() - arrivals->started;
	arrivals->transport[member] = answer->transport;
	arrivals->calls++;
	pthread_mutex_unlock(&arrivals->lock);
}

/* Four members: this authority, two test peers (members 1 and 2) and member 3 at port of
 * loopback; a client with fast retries, and what its broadcasts' callbacks saw. */
struct quartet {
	struct test_peer peers[3]; /* [0] unused */
	struct config *config;
	struct peer_client *client;
	struct arrivals arrivals;
};

static void quartet_open(struct quartet *q, unsigned third_port)
{
	char urls[MAX_MEMBERS][64];

	memset(q, 0, sizeof(*q));
	keys_make(MAX_MEMBERS);
	snprintf(urls[0], sizeof(urls[0]), "http://127.0.0.1:1");
	for (size_t i = 1; i < 3; i++) {
		peer_start(&q->peers[i]);
		snprintf(urls[i], sizeof(urls[i]), "http://127.0.0.1:%u", q->peers[i].port);
	}
	snprintf(urls[3], sizeof(urls[3]), "http://127.0.0.1:%u", third_port);
	q->config = config_make(MAX_MEMBERS, urls);
	ck_assert_int_eq(peer_client_new(q->config, &fast_retries, &q->client), 0);
	pthread_mutex_init(&q->arrivals.lock, NULL);
	q->arrivals.started = monotonic_ms();
}

static void quartet_close(struct quartet *q)
{
	pthread_mutex_destroy(&q->arrivals.lock);
	peer_client_free(q->client);
	config_free(q->config);
	for (size_t i = 1; i < 3; i++)
		peer_stop(&q->peers[i]);
	keys_free(MAX_MEMBERS);
}

START_TEST(test_broadcast_outlives_a_hanging_peer)
{
	static const char envelope[] = "an envelope";
	struct quartet q;
	struct peer_answer answers[MAX_MEMBERS];
	struct peers_broadcast *broadcast = NULL;
	unsigned hanging_port;
	int hanging_fd = test_http_server_silent(16, &hanging_port);
	uint64_t took;

	quartet_open(&q, hanging_port);
	for (size_t i = 1; i < 3; i++)
		peer_can(&q.peers[i], "POST", "/v1/mix/votes", 202, "", 0, NULL, NULL);
	struct peer_call call = {.operation = PEER_PUSH_VOTE,
	                         .namespace_name = NS,
	                         .body = (const uint8_t *)envelope,
	                         .body_len = strlen(envelope)};
	struct peers_broadcast_options options = {.on_answer = on_answer, .context = &q.arrivals};
	ck_assert_int_eq(peers_broadcast(q.client, &call, &options, answers), 0);
	took = monotonic_ms() - q.arrivals.started;

	/* This authority is skipped; the healthy two answered; the hanging one timed out once. */
	ck_assert_int_eq(answers[0].transport, PEER_TRANSPORT_SKIPPED);
	ck_assert_uint_eq(answers[0].attempts, 0);
	for (size_t i = 1; i < 3; i++) {
		ck_assert_int_eq(answers[i].transport, PEER_TRANSPORT_ANSWERED);
		ck_assert_int_eq(answers[i].status, 202);
		ck_assert_uint_eq(q.peers[i].last_body.len, strlen(envelope));
		/* Their answers were there long before the hanging peer gave up. */
		ck_assert_uint_lt(q.arrivals.at[i], 500);
		ck_assert_int_eq(q.arrivals.transport[i], PEER_TRANSPORT_ANSWERED);
	}
	ck_assert_int_eq(answers[3].transport, PEER_TRANSPORT_TIMEOUT);
	ck_assert_uint_eq(answers[3].attempts, 1);
	ck_assert_uint_ge(q.arrivals.at[3], 900);
	ck_assert_uint_eq(q.arrivals.calls, 3);
	/* The whole broadcast cost one timeout (1 s), not one per peer or per attempt. */
	ck_assert_uint_ge(took, 900);
	ck_assert_uint_lt(took, 2000);
	peer_answers_free(answers, MAX_MEMBERS);

	/* Started without waiting, and only to the targets asked for. */
	uint8_t targets[MAX_MEMBERS] = {1, 0, 1, 0};
	options.on_answer = NULL;
	options.targets = targets;
	uint64_t start = monotonic_ms();
	ck_assert_int_eq(peers_broadcast_start(q.client, &call, &options, &broadcast), 0);
	ck_assert_uint_lt(monotonic_ms() - start, 200);
	peers_broadcast_finish(broadcast, answers);
	ck_assert_int_eq(answers[0].transport, PEER_TRANSPORT_SKIPPED); /* itself, even as a target */
	ck_assert_int_eq(answers[1].transport, PEER_TRANSPORT_SKIPPED);
	ck_assert_int_eq(answers[2].transport, PEER_TRANSPORT_ANSWERED);
	ck_assert_int_eq(answers[3].transport, PEER_TRANSPORT_SKIPPED);
	ck_assert_uint_eq(peer_count_of(&q.peers[1], "/v1/mix/votes"), 1);
	ck_assert_uint_eq(peer_count_of(&q.peers[2], "/v1/mix/votes"), 2);
	peer_answers_free(answers, MAX_MEMBERS);

	/* A call refused before sending starts nothing. */
	call.namespace_name = "../x";
	ck_assert_int_eq(peers_broadcast(q.client, &call, NULL, answers), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(answers[1].transport, PEER_TRANSPORT_SKIPPED);
	peer_answers_free(answers, MAX_MEMBERS);

	quartet_close(&q);
	close(hanging_fd);
}
END_TEST

/* zstd of len bytes of text (a repeated line), for canned answers and bodies. */
static void zstd_of(const char *line, size_t len, struct buffer *plain, struct buffer *packed)
{
	size_t line_len = strlen(line);
	uint8_t *text = malloc(len);

	ck_assert_ptr_nonnull(text);
	for (size_t at = 0; at < len; at += line_len)
		memcpy(text + at, line, len - at < line_len ? len - at : line_len);
	buffer_init(plain);
	buffer_init(packed);
	ck_assert_int_eq(buffer_append(plain, text, len), 0);
	free(text);
	ck_assert_int_eq(compress_encode(ENCODING_ZSTD, plain->data, plain->len, packed), 0);
}

/* Answers that come as zstd are decoded under the operation's cap: a bomb is cut as it inflates,
 * an encoding not asked for or a frame that does not decode is a failure; the body keeps its
 * encoding, and the caller decodes it. */
START_TEST(test_answers_are_decoded)
{
	struct pair p;
	struct peer_answer answer;
	struct buffer plain, packed, bomb_plain, bomb;
	struct buffer gzipped;

	pair_open(&p);
	peer_answer_init(&answer);
	zstd_of("signature line of a header note\n", 3000, &plain, &packed);
	peer_can(&p.peer, "GET", "/v1/mix/signatures/5", 200, packed.data, packed.len, "Content-Encoding",
	         "zstd");
	ck_assert_int_eq(peer_pull_signatures(p.client, 1, NS, EPOCH, &answer), 0);
	ck_assert_int_eq(answer.status, 200);
	ck_assert_str_eq(p.peer.last_accept_encoding, "zstd");
	ck_assert_uint_eq(answer.body.len, plain.len);
	ck_assert_int_eq(memcmp(answer.body.data, plain.data, plain.len), 0);
	ck_assert_uint_eq(answer.wire_bytes, packed.len);
	ck_assert_str_eq(answer.content_encoding, "");
	/* Identity, said or not: the bytes as they are. */
	peer_can(&p.peer, "GET", "/v1/mix/snapshots/4", 200, "header\n", 7, "Content-Encoding", "identity");
	ck_assert_int_eq(peer_fetch_header(p.client, 1, NS, 4, &answer), 0);
	ck_assert_uint_eq(answer.body.len, 7);
	ck_assert_uint_eq(answer.wire_bytes, 7);
	/* A bomb: a few hundred bytes that would inflate to 4 MiB, past the signatures' cap. */
	zstd_of("0", 4u << 20, &bomb_plain, &bomb);
	ck_assert_uint_lt(bomb.len, 4096);
	peer_can(&p.peer, "GET", "/v1/mix/signatures/6", 200, bomb.data, bomb.len, "Content-Encoding",
	         "zstd");
	ck_assert_int_eq(peer_pull_signatures(p.client, 1, NS, 6, &answer), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(answer.transport, PEER_TRANSPORT_TOO_LARGE);
	ck_assert_uint_eq(answer.body.len, 0);
	ck_assert_uint_eq(answer.attempts, 1);
	ck_assert_uint_eq(answer.wire_bytes, bomb.len);
	ck_assert_ptr_nonnull(strstr(answer.reason, "inflates past"));
	/* Not asked for, or not zstd at all. */
	buffer_init(&gzipped);
	ck_assert_int_eq(compress_encode(ENCODING_GZIP, plain.data, plain.len, &gzipped), 0);
	peer_can(&p.peer, "GET", "/v1/mix/signatures/7", 200, gzipped.data, gzipped.len, "Content-Encoding",
	         "gzip");
	ck_assert_int_eq(peer_pull_signatures(p.client, 1, NS, 7, &answer), DIRAUTH_ERR_IO);
	ck_assert_int_eq(answer.transport, PEER_TRANSPORT_FAILED);
	ck_assert_ptr_nonnull(strstr(answer.reason, "encoding not asked for: gzip"));
	peer_can(&p.peer, "GET", "/v1/mix/signatures/8", 200, "zz", 2, "Content-Encoding", "zstd");
	ck_assert_int_eq(peer_pull_signatures(p.client, 1, NS, 8, &answer), DIRAUTH_ERR_IO);
	ck_assert_int_eq(answer.transport, PEER_TRANSPORT_FAILED);
	ck_assert_ptr_nonnull(strstr(answer.reason, "does not decode"));
	/* A snapshot body is handed over as served: gzip is asked for too, nothing is decoded. */
	peer_can(&p.peer, "GET", "/v1/mix/snapshots/4/body", 200, packed.data, packed.len, "Content-Encoding",
	         "zstd");
	ck_assert_int_eq(peer_fetch_body(p.client, 1, NS, 4, &answer), 0);
	ck_assert_str_eq(p.peer.last_accept_encoding, "zstd, gzip");
	ck_assert_str_eq(answer.content_encoding, "zstd");
	ck_assert_uint_eq(answer.body.len, packed.len);
	buffer_free(&plain);
	buffer_free(&packed);
	buffer_free(&bomb_plain);
	buffer_free(&bomb);
	buffer_free(&gzipped);
	peer_answer_free(&answer);
	pair_close(&p);
}
END_TEST

/* Pushes and notes of PEER_COMPRESS_MIN bytes or more go as zstd, shorter ones as they are; a
 * peer that refuses the encoding (415) gets the same call once more, plain. */
START_TEST(test_requests_are_compressed)
{
	struct pair p;
	struct peer_answer answer;
	struct buffer envelope, packed, decoded;

	pair_open(&p);
	peer_answer_init(&answer);
	buffer_init(&decoded);
	zstd_of("a line of a vote envelope\n", PEER_COMPRESS_MIN, &envelope, &packed);
	peer_can(&p.peer, "POST", "/v1/mix/votes", 202, "", 0, NULL, NULL);
	peer_can(&p.peer, "POST", "/v1/mix/signatures", 202, "", 0, NULL, NULL);
	peer_can(&p.peer, "POST", "/v1/mix/notes", 200, "notes\n", 6, NULL, NULL);
	peer_can(&p.peer, "POST", "/v1/mix/log/add-checkpoint", 200, "cosigned\n", 9, NULL, NULL);
	ck_assert_int_eq(peer_push_vote(p.client, 1, NS, envelope.data, envelope.len, &answer), 0);
	ck_assert_int_eq(answer.status, 202);
	ck_assert_str_eq(p.peer.last_content_encoding, "zstd");
	ck_assert_str_eq(p.peer.last_content_type, "application/octet-stream");
	ck_assert_uint_lt(p.peer.last_body.len, envelope.len);
	ck_assert_int_eq(compress_decode(ENCODING_ZSTD, p.peer.last_body.data, p.peer.last_body.len,
	                                 envelope.len, &decoded),
	                 0);
	ck_assert_uint_eq(decoded.len, envelope.len);
	ck_assert_int_eq(memcmp(decoded.data, envelope.data, envelope.len), 0);
	/* One byte shorter: as it is. */
	ck_assert_int_eq(peer_push_vote(p.client, 1, NS, envelope.data, envelope.len - 1, &answer), 0);
	ck_assert_str_eq(p.peer.last_content_encoding, "");
	ck_assert_uint_eq(p.peer.last_body.len, envelope.len - 1);
	ck_assert_int_eq(peer_push_signature(p.client, 1, NS, envelope.data, envelope.len, &answer), 0);
	ck_assert_str_eq(p.peer.last_content_encoding, "zstd");
	ck_assert_str_eq(p.peer.last_content_type, "text/plain; charset=utf-8");
	ck_assert_int_eq(peer_fetch_notes(p.client, 1, NS, envelope.data, envelope.len, &answer), 0);
	ck_assert_int_eq(answer.status, 200);
	ck_assert_str_eq(p.peer.last_method, "POST");
	ck_assert_str_eq(p.peer.last_path, "/v1/mix/notes");
	ck_assert_str_eq(p.peer.last_content_encoding, "zstd");
	ck_assert_str_eq(p.peer.last_content_type, "text/plain; charset=utf-8");
	/* The witness protocol's body goes as its spec has it. */
	struct peer_call checkpoint = {.operation = PEER_ADD_CHECKPOINT,
	                               .namespace_name = NS,
	                               .body = envelope.data,
	                               .body_len = envelope.len};
	ck_assert_int_eq(peer_client_call(p.client, 1, &checkpoint, &answer), 0);
	ck_assert_str_eq(p.peer.last_content_encoding, "");
	ck_assert_uint_eq(p.peer.last_body.len, envelope.len);

	/* An authority that takes no encoded body. */
	peer_set_mode(&p.peer, MODE_NO_ENCODINGS);
	unsigned before = peer_count_of(&p.peer, "/v1/mix/votes");
	ck_assert_int_eq(peer_push_vote(p.client, 1, NS, envelope.data, envelope.len, &answer), 0);
	ck_assert_int_eq(answer.status, 202);
	ck_assert_uint_eq(answer.attempts, 2);
	ck_assert_uint_eq(peer_count_of(&p.peer, "/v1/mix/votes"), before + 2);
	ck_assert_str_eq(p.peer.last_content_encoding, "");
	ck_assert_uint_eq(p.peer.last_body.len, envelope.len);
	ck_assert_int_eq(memcmp(p.peer.last_body.data, envelope.data, envelope.len), 0);
	/* A 415 to a plain body is an answer like any other: not sent again. */
	peer_fail(&p.peer, 1, 415, "unsupported_encoding");
	ck_assert_int_eq(peer_push_vote(p.client, 1, NS, envelope.data, 10, &answer), 0);
	ck_assert_int_eq(answer.status, 415);
	ck_assert_str_eq(answer.error_code, "unsupported_encoding");
	ck_assert_uint_eq(answer.attempts, 1);
	buffer_free(&envelope);
	buffer_free(&packed);
	buffer_free(&decoded);
	peer_answer_free(&answer);
	pair_close(&p);
}
END_TEST

/* The two operations others build on: their routes, caps and path safety. */
START_TEST(test_notes_and_headers_routes)
{
	struct pair p;
	struct peer_answer answer;

	pair_open(&p);
	peer_answer_init(&answer);
	peer_can(&p.peer, "GET", "/v1/mix/snapshots/from/5", 200, "headers\n", 8, NULL, NULL);
	ck_assert_int_eq(peer_fetch_headers(p.client, 1, NS, EPOCH, &answer), 0);
	ck_assert_int_eq(answer.status, 200);
	ck_assert_str_eq(p.peer.last_method, "GET");
	ck_assert_str_eq(p.peer.last_path, "/v1/mix/snapshots/from/5");
	ck_assert_str_eq(p.peer.last_accept_encoding, "zstd");
	ck_assert_int_eq(peer_fetch_notes(p.client, 1, NS, (const uint8_t *)"want\n", 5, &answer), 0);
	ck_assert_int_eq(answer.status, 404);
	ck_assert_str_eq(p.peer.last_path, "/v1/mix/notes");
	ck_assert_str_eq(p.peer.last_content_encoding, "");
	ck_assert_uint_eq(peer_client_answer_cap(p.client, PEER_FETCH_NOTES), PEER_NOTES_ANSWER_MAX);
	ck_assert_uint_eq(peer_client_answer_cap(p.client, PEER_FETCH_HEADERS), PEER_HEADERS_ANSWER_MAX);
	ck_assert_uint_eq(peer_client_answer_cap(p.client, PEER_OPERATION_COUNT), 0);
	unsigned before = peer_count_of(&p.peer, "/v1/mix/notes");
	ck_assert_int_eq(peer_fetch_notes(p.client, 1, "../x", (const uint8_t *)"want\n", 5, &answer),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(peer_fetch_notes(p.client, 1, NS, NULL, 0, &answer), DIRAUTH_ERR_SYNTAX);
	ck_assert_uint_eq(answer.attempts, 0);
	ck_assert_int_eq(peer_fetch_headers(p.client, 1, "m#x", EPOCH, &answer), DIRAUTH_ERR_SYNTAX);
	ck_assert_uint_eq(peer_count_of(&p.peer, "/v1/mix/notes"), before);
	peer_answer_free(&answer);
	pair_close(&p);
}
END_TEST

/* A call's deadline: one already passed sends nothing; one before the timeout ends the call there. */
START_TEST(test_call_deadline)
{
	struct config *config;
	struct peer_client *client = NULL;
	struct peer_answer answer;
	unsigned hanging_port;
	int hanging_fd = test_http_server_silent(16, &hanging_port);
	struct pair p;

	pair_open(&p);
	peer_answer_init(&answer);
	peer_can(&p.peer, "GET", "/v1/mix/snapshots/latest", 200, "header\n", 7, NULL, NULL);
	struct peer_call call = {
	    .operation = PEER_FETCH_LATEST_HEADER, .namespace_name = NS, .deadline_ms = monotonic_ms() - 1};
	ck_assert_int_eq(peer_client_call(p.client, 1, &call, &answer), DIRAUTH_ERR_UNAVAILABLE);
	ck_assert_int_eq(answer.transport, PEER_TRANSPORT_TIMEOUT);
	ck_assert_uint_eq(answer.attempts, 0);
	ck_assert_ptr_nonnull(strstr(answer.reason, "deadline"));
	ck_assert_uint_eq(peer_count_of(&p.peer, "/v1/mix/snapshots/latest"), 0);
	call.deadline_ms = monotonic_ms() + 5000; /* later than the timeout: the timeout holds */
	ck_assert_int_eq(peer_client_call(p.client, 1, &call, &answer), 0);
	ck_assert_int_eq(answer.status, 200);
	pair_close(&p);

	/* A peer that never answers, a timeout of 1 s, a deadline in 300 ms. */
	two_members(hanging_port, &config, &client);
	uint64_t started = monotonic_ms();
	call.deadline_ms = started + 300;
	ck_assert_int_eq(peer_client_call(client, 1, &call, &answer), DIRAUTH_ERR_UNAVAILABLE);
	ck_assert_int_eq(answer.transport, PEER_TRANSPORT_TIMEOUT);
	ck_assert_uint_ge(monotonic_ms() - started, 250);
	ck_assert_uint_lt(monotonic_ms() - started, 800);
	peer_answer_free(&answer);
	peer_client_free(client);
	config_free(config);
	close(hanging_fd);
	keys_free(2);
}
END_TEST

struct pulling {
	struct peer_client *client;
	unsigned ok;
};

static void *pull_repeatedly(void *context)
{
	struct pulling *pulling = context;
	struct peer_answer answer;

	peer_answer_init(&answer);
	for (int i = 0; i < 4; i++)
		if (peer_pull_signatures(pulling->client, 1, NS, EPOCH, &answer) == 0 && answer.status == 200)
			pulling->ok++;
	peer_answer_free(&answer);
	return NULL;
}

/* A member's requests share kept-alive connections, authorities.connections_per_peer of them: with
 * one, requests from three threads all go over one connection. */
START_TEST(test_connections_are_kept)
{
	static const char header[] = "header note\n";
	char urls[2][64];
	struct test_peer peer;
	struct config *config;
	struct peer_client *client = NULL;
	pthread_t threads[3];
	struct pulling pulling[3];

	keys_make(2);
	peer_start(&peer);
	peer_can(&peer, "GET", "/v1/mix/signatures/5", 200, header, strlen(header), NULL, NULL);
	snprintf(urls[0], sizeof(urls[0]), "http://127.0.0.1:1");
	snprintf(urls[1], sizeof(urls[1]), "http://127.0.0.1:%u", peer.port);
	config = config_make(2, urls);
	config->peers.connections_per_peer = 1;
	ck_assert_int_eq(peer_client_new(config, &fast_retries, &client), 0);
	for (size_t i = 0; i < 3; i++) {
		pulling[i] = (struct pulling){.client = client};
		ck_assert_int_eq(pthread_create(&threads[i], NULL, pull_repeatedly, &pulling[i]), 0);
	}
	for (size_t i = 0; i < 3; i++) {
		pthread_join(threads[i], NULL);
		ck_assert_uint_eq(pulling[i].ok, 4);
	}
	ck_assert_uint_eq(peer_count_of(&peer, "/v1/mix/signatures/5"), 12);
	ck_assert_uint_eq(peer_connections(&peer), 1);
	peer_client_free(client);
	/* Out of the pool's bounds: refused. */
	config->peers.connections_per_peer = NET_POOL_CONNECTIONS_MAX + 1;
	ck_assert_int_eq(peer_client_new(config, NULL, &client), DIRAUTH_ERR_CONFIG);
	ck_assert_ptr_null(client);
	config_free(config);
	peer_stop(&peer);
	keys_free(2);
}
END_TEST

/* Each member its own call, at once: member 1 a vote pull, member 2 a signatures pull, member 3
 * (NULL) nothing. */
START_TEST(test_call_each)
{
	static const char header[] = "header note\n";
	static const char envelope[] = "an envelope";
	struct quartet q;
	struct peer_answer answers[MAX_MEMBERS];

	quartet_open(&q, test_free_port());
	peer_can(&q.peers[1], "GET", "/v1/mix/votes/5/a1.dirauth.example", 200, envelope, strlen(envelope),
	         NULL, NULL);
	peer_can(&q.peers[2], "GET", "/v1/mix/signatures/5", 200, header, strlen(header), NULL, NULL);

	struct peer_call vote = {
	    .operation = PEER_PULL_VOTE, .namespace_name = NS, .epoch = EPOCH, .voter = keys[0].name};
	struct peer_call signatures = {
	    .operation = PEER_PULL_SIGNATURES, .namespace_name = NS, .epoch = EPOCH};
	const struct peer_call *calls[CONFIG_MAX_MEMBERS] = {&vote, &vote, &signatures, NULL};
	struct peers_broadcast_options options = {.on_answer = on_answer, .context = &q.arrivals};
	ck_assert_int_eq(peers_call_each(q.client, calls, &options, answers), 0);
	ck_assert_int_eq(answers[0].transport, PEER_TRANSPORT_SKIPPED); /* itself */
	ck_assert_int_eq(answers[1].status, 200);
	ck_assert_uint_eq(answers[1].body.len, strlen(envelope));
	ck_assert_int_eq(answers[2].status, 200);
	ck_assert_uint_eq(answers[2].body.len, strlen(header));
	ck_assert_int_eq(answers[3].transport, PEER_TRANSPORT_SKIPPED);
	ck_assert_uint_eq(answers[3].attempts, 0);
	ck_assert_uint_eq(q.arrivals.calls, 2);
	ck_assert_uint_eq(peer_count_of(&q.peers[1], "/v1/mix/signatures/5"), 0);
	ck_assert_uint_eq(peer_count_of(&q.peers[2], "/v1/mix/votes/5/a1.dirauth.example"), 0);
	peer_answers_free(answers, MAX_MEMBERS);
	/* Targets skip more; one refused call starts nothing. */
	uint8_t targets[MAX_MEMBERS] = {0, 0, 1, 1};
	options = (struct peers_broadcast_options){.targets = targets};
	ck_assert_int_eq(peers_call_each(q.client, calls, &options, answers), 0);
	ck_assert_int_eq(answers[1].transport, PEER_TRANSPORT_SKIPPED);
	ck_assert_int_eq(answers[2].status, 200);
	peer_answers_free(answers, MAX_MEMBERS);
	struct peer_call refused = {.operation = PEER_PULL_VOTE, .namespace_name = NS, .voter = ".."};
	calls[3] = &refused;
	ck_assert_int_eq(peers_call_each(q.client, calls, NULL, answers), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(answers[1].transport, PEER_TRANSPORT_SKIPPED);
	ck_assert_uint_eq(peer_count_of(&q.peers[1], "/v1/mix/votes/5/a1.dirauth.example"), 1);
	peer_answers_free(answers, MAX_MEMBERS);

	quartet_close(&q);
}
END_TEST

/* ---- the transport seam ---- */

struct simulated {
	pthread_t caller;
	unsigned calls;
	size_t members[16];
	enum peer_operation operations[16];
	int other_thread; /* a call came from another thread than the caller's */
	char shape[64];   /* the broadcast events and calls in order: "[", "m<member>", "c", "]" */
};

static void simulated_shape(struct simulated *simulated, const char *what)
{
	size_t len = strlen(simulated->shape);
	snprintf(simulated->shape + len, sizeof(simulated->shape) - len, "%s", what);
}

static void simulated_broadcast(void *context, enum peer_transport_event event, size_t member)
{
	char what[16];
	if (event == PEER_TRANSPORT_BROADCAST_MEMBER)
		snprintf(what, sizeof(what), "m%zu", member);
	else
		snprintf(what, sizeof(what), "%s", event == PEER_TRANSPORT_BROADCAST_BEGIN ? "[" : "]");
	simulated_shape(context, what);
}

static int simulated_call(void *context, size_t member, const struct peer_call *call,
                          struct peer_answer *answer)
{
	struct simulated *simulated = context;

	if (!pthread_equal(pthread_self(), simulated->caller))
		simulated->other_thread = 1;
	simulated_shape(simulated, "c");
	if (simulated->calls < 16) {
		simulated->members[simulated->calls] = member;
		simulated->operations[simulated->calls] = call->operation;
	}
	simulated->calls++;
	if (member == 2) {
		answer->transport = PEER_TRANSPORT_UNREACHABLE;
		snprintf(answer->reason, sizeof(answer->reason), "partitioned");
		return DIRAUTH_ERR_UNAVAILABLE;
	}
	answer->transport = PEER_TRANSPORT_ANSWERED;
	answer->status = 200;
	answer->attempts = 1;
	return buffer_append(&answer->body, call->namespace_name, strlen(call->namespace_name));
}

struct order {
	size_t members[MAX_MEMBERS];
	size_t count;
	pthread_t caller;
	int other_thread;
};

static void on_answer_in_order(void *context, size_t member, const struct peer_answer *answer)
{
	struct order *order = context;

	(void)answer;
	if (!pthread_equal(pthread_self(), order->caller))
		order->other_thread = 1;
	if (order->count < MAX_MEMBERS)
		order->members[order->count++] = member;
}

/* With a transport, calls are checked as over HTTP and then handed to it; broadcasts and
 * peers_call_each run in the caller's thread, in member order, nothing sent over a network. */
START_TEST(test_transport_seam)
{
	char urls[MAX_MEMBERS][64];
	struct config *config;
	struct peer_client *client = NULL;
	struct peer_answer answer;
	struct peer_answer answers[MAX_MEMBERS];
	struct simulated simulated;
	struct order order;
	struct peers_broadcast *broadcast = NULL;

	keys_make(MAX_MEMBERS);
	for (size_t i = 0; i < MAX_MEMBERS; i++)
		snprintf(urls[i], sizeof(urls[i]), "http://127.0.0.1:1"); /* nobody listens: never asked */
	config = config_make(MAX_MEMBERS, urls);
	memset(&simulated, 0, sizeof(simulated));
	simulated.caller = pthread_self();
	struct peer_transport transport = {
	    .call = simulated_call, .context = &simulated, .broadcast = simulated_broadcast};
	struct peer_client_options options = {.transport = &transport};
	ck_assert_int_eq(peer_client_new(config, &options, &client), 0);
	peer_answer_init(&answer);

	ck_assert_int_eq(peer_fetch_latest_header(client, 3, NS, &answer), 0);
	ck_assert_int_eq(answer.status, 200);
	ck_assert_uint_eq(answer.body.len, strlen(NS));
	ck_assert_uint_eq(simulated.calls, 1);
	ck_assert_int_eq(simulated.operations[0], PEER_FETCH_LATEST_HEADER);
	/* The checks come first: the transport never sees a refused call. */
	ck_assert_int_eq(peer_fetch_latest_header(client, 3, "../x", &answer), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(peer_fetch_latest_header(client, MAX_MEMBERS, NS, &answer), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(peer_push_vote(client, 1, NS, NULL, 0, &answer), DIRAUTH_ERR_SYNTAX);
	ck_assert_uint_eq(simulated.calls, 1);
	ck_assert_int_eq(peer_fetch_latest_header(client, 2, NS, &answer), DIRAUTH_ERR_UNAVAILABLE);
	ck_assert_int_eq(answer.transport, PEER_TRANSPORT_UNREACHABLE);
	ck_assert_str_eq(answer.reason, "partitioned");
	ck_assert_str_eq(simulated.shape, "cc"); /* single calls are no broadcast */

	/* A broadcast: members 1, 2, 3 in that order, in this thread, before the start returns. */
	memset(&simulated, 0, sizeof(simulated));
	simulated.caller = pthread_self();
	memset(&order, 0, sizeof(order));
	order.caller = pthread_self();
	struct peer_call call = {.operation = PEER_PULL_SIGNATURES, .namespace_name = NS, .epoch = EPOCH};
	struct peers_broadcast_options broadcast_options = {.on_answer = on_answer_in_order,
	                                                    .context = &order};
	ck_assert_int_eq(peers_broadcast_start(client, &call, &broadcast_options, &broadcast), 0);
	ck_assert_uint_eq(simulated.calls, 3);
	peers_broadcast_finish(broadcast, answers);
	ck_assert_int_eq(simulated.other_thread, 0);
	ck_assert_int_eq(order.other_thread, 0);
	ck_assert_uint_eq(order.count, 3);
	for (size_t i = 0; i < 3; i++) {
		ck_assert_uint_eq(simulated.members[i], i + 1);
		ck_assert_uint_eq(order.members[i], i + 1);
	}
	ck_assert_int_eq(answers[0].transport, PEER_TRANSPORT_SKIPPED);
	ck_assert_int_eq(answers[1].status, 200);
	ck_assert_int_eq(answers[2].transport, PEER_TRANSPORT_UNREACHABLE);
	ck_assert_int_eq(answers[3].status, 200);
	/* The transport was told that the three calls stand for calls made at once. */
	ck_assert_str_eq(simulated.shape, "[m1cm2cm3c]");
	peer_answers_free(answers, MAX_MEMBERS);

	/* peers_call_each alike, each member its own operation; a long body is not compressed for a
	 * transport, which takes the call as it is. */
	memset(&simulated, 0, sizeof(simulated));
	simulated.caller = pthread_self();
	uint8_t long_body[2 * PEER_COMPRESS_MIN];
	memset(long_body, 'v', sizeof(long_body));
	struct peer_call push = {.operation = PEER_PUSH_VOTE,
	                         .namespace_name = NS,
	                         .body = long_body,
	                         .body_len = sizeof(long_body)};
	struct peer_call headers = {.operation = PEER_FETCH_HEADERS, .namespace_name = NS, .epoch = 3};
	const struct peer_call *calls[CONFIG_MAX_MEMBERS] = {NULL, &headers, NULL, &push};
	ck_assert_int_eq(peers_call_each(client, calls, NULL, answers), 0);
	ck_assert_uint_eq(simulated.calls, 2);
	ck_assert_uint_eq(simulated.members[0], 1);
	ck_assert_int_eq(simulated.operations[0], PEER_FETCH_HEADERS);
	ck_assert_uint_eq(simulated.members[1], 3);
	ck_assert_int_eq(simulated.operations[1], PEER_PUSH_VOTE);
	ck_assert_int_eq(simulated.other_thread, 0);
	ck_assert_str_eq(simulated.shape, "[m1cm3c]");
	ck_assert_int_eq(answers[2].transport, PEER_TRANSPORT_SKIPPED);
	peer_answers_free(answers, MAX_MEMBERS);

	peer_answer_free(&answer);
	peer_client_free(client);
	config_free(config);
	keys_free(MAX_MEMBERS);
}
END_TEST

static Suite *peers_suite(void)
{
	Suite *suite = suite_create("peers");
	TCase *set = tcase_create("authority_set");
	TCase *client = tcase_create("peer_client");

	tcase_set_timeout(set, 30);
	tcase_add_test(set, test_certified_vote_verifies);
	tcase_add_test(set, test_certificates_outlive_a_restart);
	tcase_add_test(set, test_refusals_name_their_reason);
	tcase_add_test(set, test_on_demand_refresh_is_rate_limited);
	tcase_add_test(set, test_verifies_while_refreshing);
	tcase_add_test(set, test_count_signers_and_pins);
	tcase_add_test(set, test_refresh_reports_unreachable_members);
	suite_add_tcase(suite, set);
	tcase_set_timeout(client, 30);
	tcase_add_test(client, test_routes_are_the_protocols);
	tcase_add_test(client, test_a_reload_moves_a_member);
	tcase_add_test(client, test_garbage_is_cut_at_the_cap);
	tcase_add_test(client, test_redirect_is_not_followed);
	tcase_add_test(client, test_5xx_is_retried_4xx_is_not);
	tcase_add_test(client, test_unreachable_is_retried);
	tcase_add_test(client, test_broadcast_outlives_a_hanging_peer);
	tcase_add_test(client, test_answers_are_decoded);
	tcase_add_test(client, test_requests_are_compressed);
	tcase_add_test(client, test_notes_and_headers_routes);
	tcase_add_test(client, test_call_deadline);
	tcase_add_test(client, test_connections_are_kept);
	tcase_add_test(client, test_call_each);
	tcase_add_test(client, test_transport_seam);
	suite_add_tcase(suite, client);
	return suite;
}

int main(void)
{
	int failures;
	SRunner *runner;

	garbage = malloc(GARBAGE_SIZE);
	if (garbage == NULL || net_global_init() != 0)
		return 1;
	memset(garbage, 'x', GARBAGE_SIZE);
	runner = srunner_create(peers_suite());
	srunner_run_all(runner, CK_NORMAL);
	failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	net_global_cleanup();
	free(garbage);
	return failures ? 1 : 0;
}
