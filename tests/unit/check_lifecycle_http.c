/*
 * check_lifecycle_http.c: an endpoint's life through the HTTP API of one authority over real
 * loopback sockets (http_fixture.h), with a real store, a real dirauth-signer and real signed
 * documents: health statements (accepted and published with their class and signer, the
 * endpoint's own key among them; stale published as unknown; every refusal, each with its code
 * and nothing stored), revocations (the revoked endpoint absent from the next snapshot and listed
 * in its revocation section, never back by a higher sequence, also after a restart; every
 * refusal), deregistrations (the signed receipt verified, the service absent afterwards; every
 * refusal) and a provider's outage (its endpoints go unknown, then its service leaves at expiry
 * with no operator action).
 *
 * The namespace "mix" is configured with "lifecycle: true", "mail" is not; the operator key is
 * the EXAMPLE key operator.example (lifecycle_fixture.h), the first endpoint of every example
 * registration posted here names the EXAMPLE key endpoint.example as its own.
 */
#include "http_fixture.h"
#include "lifecycle_fixture.h"

#include "schema/deregistration.h"
#include "schema/deregistration_receipt.h"
#include "schema/encoding.h"
#include "schema/health.h"
#include "schema/revocation.h"
#include "server/store/lifecycle.h"

#define FRESHNESS (2 * LENGTH)

static struct test_key endpoint_key, operator_key;

static void lc_start_serving(struct fixture *f)
{
	ck_assert_int_eq(prepared_set_create(f->config, f->store, &f->prepared), 0);
	struct epoch_scheduler_options scheduler_options = {.config = f->config,
	                                                    .store = f->store,
	                                                    .signer = f->signer,
	                                                    .signer_health = f->health,
	                                                    .clock = f->clock,
	                                                    .prepared = f->prepared,
	                                                    .log = f->log};
	ck_assert_int_eq(epoch_scheduler_create(&scheduler_options, &f->scheduler), 0);
	struct http_options http_options = {.config = f->config,
	                                    .store = f->store,
	                                    .signer = f->signer,
	                                    .signer_health = f->health,
	                                    .clock = f->clock,
	                                    .prepared = f->prepared,
	                                    .log = f->log};
	ck_assert_int_eq(http_server_start(&http_options, &f->http), 0);
}

static void lc_open(struct fixture *f)
{
	memset(f, 0, sizeof *f);
	test_make_tempdir(f->dir, sizeof f->dir);
	signer_fixture_prepare(&f->signer_process, f->dir, GENESIS + 10 * LENGTH, GENESIS - 86400,
	                       GENESIS + 30 * 86400);
	signer_fixture_start(&f->signer_process);
	test_key_load(TEST_KEY_PROVIDER, &f->provider);
	test_key_load(TEST_KEY_OTHER, &f->other);
	test_key_load(TEST_KEY_AUTHORITY_2, &f->stranger);
	lifecycle_key_load(LIFECYCLE_KEY_ENDPOINT, &endpoint_key);
	lifecycle_key_load(LIFECYCLE_KEY_OPERATOR, &operator_key);
	f->port = test_free_port();
	char text[8192], keys[3][NOTE_VERIFIER_KEY_MAX + 1];
	snprintf(keys[0], sizeof keys[0], "%s", test_key_verifier_string(&f->provider));
	snprintf(keys[1], sizeof keys[1], "%s", test_key_verifier_string(&f->other));
	snprintf(keys[2], sizeof keys[2], "%s", test_key_verifier_string(&operator_key));
	snprintf(text, sizeof text,
	         "authority: { name: authority1.dirauth.example, signer_socket: signer/signer.sock }\n"
	         "listen: { address: 127.0.0.1, port: %u }\n"
	         "data_dir: data\n"
	         "epoch: { length_seconds: %llu, genesis: %llu, validity_epochs: 3 }\n"
	         "clock: { source: file, path: clock }\n"
	         "namespaces:\n"
	         "  - { name: mix, origin: dirauth.example/mix, lifecycle: true }\n"
	         "  - { name: mail, origin: dirauth.example/mail }\n"
	         "providers:\n"
	         "  - { key: \"%s\", namespaces: [mix, mail], classes: [mix-gateway] }\n"
	         "  - { key: \"%s\", namespaces: [mix], classes: [mix-gateway] }\n"
	         "operators: [\"%s\"]\n"
	         "bounds: { registration_body: %d, endpoints_per_service: 3, max_validity_seconds: 86400 }\n"
	         "http: { threads: 2 }\n",
	         f->port, LENGTH, GENESIS, keys[0], keys[1], keys[2], BODY_CAP);
	struct settings_error error;
	ck_assert_msg(config_parse((const uint8_t *)text, strlen(text), f->dir, &f->config, &error) == 0,
	              "%zu: %s", error.line, error.message);
	ck_assert_int_eq(signer_client_open(f->config->signer_socket, 5000, &f->signer), 0);
	ck_assert_int_eq(clock_open_file(f->config->clock_path, &f->clock), 0);
	ck_assert_int_eq(signer_health_create(f->signer, f->config->authority_name, f->clock, &f->health), 0);
	write_clock(f, GENESIS + 10 * LENGTH + 1);
	struct store_options options = {.path = f->config->data_dir};
	ck_assert_int_eq(store_open(&options, &f->store), 0);
	char log_path[1024];
	snprintf(log_path, sizeof log_path, "%s/dirauthd.log", f->dir);
	f->log = fopen(log_path, "w");
	ck_assert_ptr_nonnull(f->log);
	lc_start_serving(f);
}

static void lc_close(struct fixture *f)
{
	test_key_free(&endpoint_key);
	test_key_free(&operator_key);
	fixture_close(f);
}

/* dirauthd restarted: store, prepared responses, scheduler and HTTP server all new. */
static void lc_restart(struct fixture *f)
{
	http_server_stop(f->http);
	epoch_scheduler_free(f->scheduler);
	prepared_set_free(f->prepared);
	store_close(f->store);
	struct store_options options = {.path = f->config->data_dir};
	ck_assert_int_eq(store_open(&options, &f->store), 0);
	lc_start_serving(f);
}

/* ---- documents ---- */

/* Example registration index of key at sequence, its first endpoint naming endpoint.example,
 * valid from now for validity seconds, posted; expects 202 or the refusal. */
static void registration_of(struct fixture *f, unsigned index, const struct test_key *key, uint64_t sequence,
                            uint64_t validity, struct registration *r)
{
	make_registration(f, index, "mix", key, r);
	r->sequence = sequence;
	r->expires = f->now + validity;
	r->endpoints[0].has_key = 1;
	r->endpoints[0].key = endpoint_key.verifier;
}

static void post_to(struct fixture *f, const char *path, const struct buffer *note, struct response *out)
{
	request(f, "POST", path, note->data, note->len, 0, NULL, out);
}

static void post_registration(struct fixture *f, const struct registration *r, const struct test_key *key,
                              long status, const char *code)
{
	struct buffer note;
	struct response response;
	sign(r, key, &note);
	post(f, &note, &response);
	if (status == 202)
		ck_assert_msg(response.status == 202, "%ld %s", response.status, response.body.data);
	else
		expect_error(&response, status, code);
	response_free(&response);
	buffer_free(&note);
}

static void register_example(struct fixture *f, unsigned index, uint64_t validity, struct registration *r)
{
	registration_of(f, index, &f->provider, 1, validity, r);
	post_registration(f, r, &f->provider, 202, NULL);
}

/* The statement on endpoint e of r, issued at, signed by key. */
static void health_note(const struct registration *r, size_t e, enum health_signer signer,
                        enum health_class c, uint64_t issued_at, uint64_t sequence,
                        const struct test_key *key, struct buffer *out)
{
	struct health_statement s;
	lifecycle_statement(r, e, signer, c, 0, sequence, &s);
	s.issued_at = issued_at;
	buffer_init(out);
	lifecycle_sign_statement(&s, key, out);
}

/* The revocation of endpoint e (-1: the whole service) of r, signed by key. */
static void revocation_note(const struct registration *r, int e, enum revocation_signer signer,
                            const struct test_key *key, uint64_t sequence, struct buffer *out)
{
	struct revocation v;
	lifecycle_revocation(r, e, signer, key, REVOCATION_KEY_COMPROMISE, 0, sequence, &v);
	buffer_init(out);
	lifecycle_sign_revocation(&v, key, out);
}

static void deregistration_note(const struct registration *r, const struct test_key *key, uint64_t sequence,
                                uint64_t at, struct buffer *out)
{
	struct deregistration d;
	struct buffer text;
	memset(&d, 0, sizeof d);
	strcpy(d.namespace_name, r->namespace_name);
	memcpy(d.service_id, r->service_id, SERVICE_ID_SIZE);
	d.provider = key->verifier;
	d.sequence = sequence;
	d.requested_at = at;
	buffer_init(&text);
	buffer_init(out);
	ck_assert_int_eq(deregistration_encode(&d, &text), 0);
	test_key_sign_note(key, 1, text.data, text.len, out);
	buffer_free(&text);
}

/* The note with one byte of its signature changed: same key id, a signature that fails. */
static void spoil_signature(struct buffer *note)
{
	size_t at = note->len - 10;
	note->data[at] = note->data[at] == 'A' ? 'B' : 'A';
}

/* Posts note to path: expects status and code (202: accepted), and, for a refusal, that nothing
 * was kept under its digest. */
static void post_expect_code(struct fixture *f, const char *path, const struct buffer *note, long status,
                             const char *code)
{
	struct response response;
	post_to(f, path, note, &response);
	if (status == 202) {
		ck_assert_msg(response.status == 202, "%s: %ld %s", path, response.status,
		              response.body.data);
	} else {
		expect_error(&response, status, code);
		uint8_t digest[32];
		struct buffer kept;
		buffer_init(&kept);
		ck_assert_int_eq(crypto_sha256(note->data, note->len, digest), 0);
		ck_assert_int_eq(store_statement_get(f->store, "mix", digest, &kept), DIRAUTH_ERR_NOT_FOUND);
		buffer_free(&kept);
	}
	response_free(&response);
}

static void statement_path(const struct buffer *note, char *path, size_t cap)
{
	uint8_t digest[32];
	char hex[65];
	ck_assert_int_eq(crypto_sha256(note->data, note->len, digest), 0);
	hex_encode(digest, 32, hex);
	snprintf(path, cap, "/v1/mix/statements/%s", hex);
}

/* ---- snapshots ---- */

static void publish_epoch(struct fixture *f, uint64_t epoch)
{
	write_clock(f, GENESIS + epoch * LENGTH);
	ck_assert_int_eq(epoch_scheduler_tick(f->scheduler), 0);
}

struct published {
	struct snapshot_header header;
	struct buffer bytes;
	struct snapshot_body *body;
};

/* The stored snapshot of epoch, its body verified as a mirror verifies it, and parsed. */
static void published_get(struct fixture *f, uint64_t epoch, struct published *out)
{
	struct buffer header;
	struct note *note = NULL;
	int fd;
	uint64_t size;
	buffer_init(&header);
	buffer_init(&out->bytes);
	ck_assert_int_eq(store_snapshot_get(f->store, "mix", epoch, &header, NULL), 0);
	ck_assert_int_eq(note_parse(header.data, header.len, &note), 0);
	ck_assert_int_eq(note_verify_threshold(note, &f->signer_process.signing, 1, 1), 0);
	ck_assert_int_eq(snapshot_header_parse(note->text, note->text_len, &out->header), 0);
	ck_assert_uint_eq(out->header.consensus_method, 2);
	note_free(note);
	buffer_free(&header);
	ck_assert_int_eq(store_body_open(f->store, "mix", epoch, ENCODING_IDENTITY, &fd, &size), 0);
	uint8_t chunk[4096];
	ssize_t n;
	while ((n = read(fd, chunk, sizeof chunk)) > 0)
		ck_assert_int_eq(buffer_append(&out->bytes, chunk, (size_t)n), 0);
	close(fd);
	struct snapshot_body_limits limits = {1000, 3000, 1000};
	int rc =
	    snapshot_body_verify_sections(&out->header, out->bytes.data, out->bytes.len, &limits, FRESHNESS);
	ck_assert_msg(rc == 0, "the snapshot of epoch %llu does not verify: %s", (unsigned long long)epoch,
	              dirauth_strerror(rc));
	ck_assert_int_eq(snapshot_body_parse_sections(out->bytes.data, out->bytes.len, &limits, &out->body),
	                 0);
}

static void published_free(struct published *p)
{
	snapshot_body_free(p->body);
	buffer_free(&p->bytes);
}

static int has_record(const struct published *p, const uint8_t *service_id)
{
	for (size_t i = 0; i < p->body->record_count; i++)
		if (memcmp(p->body->records[i].service_id, service_id, SERVICE_ID_SIZE) == 0)
			return 1;
	return 0;
}

static const struct snapshot_health *health_of(const struct published *p, const struct registration *r,
                                               size_t e)
{
	for (size_t i = 0; i < p->body->health_count; i++)
		if (memcmp(p->body->health[i].service_id, r->service_id, SERVICE_ID_SIZE) == 0 &&
		    memcmp(p->body->health[i].endpoint_id, r->endpoints[e].endpoint_id, ENDPOINT_ID_SIZE) ==
		        0)
			return &p->body->health[i];
	return NULL;
}

static const struct snapshot_revocation *revocation_of(const struct published *p,
                                                       const struct registration *r, int e)
{
	for (size_t i = 0; i < p->body->revocation_count; i++) {
		const struct snapshot_revocation *v = &p->body->revocations[i];
		if (memcmp(v->service_id, r->service_id, SERVICE_ID_SIZE) == 0 &&
		    v->has_endpoint == (e >= 0) &&
		    (e < 0 || memcmp(v->endpoint_id, r->endpoints[e].endpoint_id, ENDPOINT_ID_SIZE) == 0))
			return v;
	}
	return NULL;
}

/* ---- health ---- */

START_TEST(test_health_published)
{
	struct fixture f;
	struct registration r;
	struct buffer draining, healthy;
	struct response response;
	char path[256];
	lc_open(&f);
	register_example(&f, 1, 3600, &r);

	/* The endpoint's own key says it is draining; the provider says the next one is healthy. */
	health_note(&r, 0, HEALTH_SIGNER_ENDPOINT, HEALTH_DRAINING, f.now, 1, &endpoint_key, &draining);
	post_to(&f, "/v1/endpoint-health", &draining, &response);
	ck_assert_msg(response.status == 202, "%ld %s", response.status, response.body.data);
	ck_assert_str_eq(header(&response, "Content-Type"), "application/json");
	statement_path(&draining, path, sizeof path);
	char expected[400];
	snprintf(expected, sizeof expected, "{\"status\":\"accepted\",\"sha256\":\"%s\",\"epoch\":11}",
	         path + strlen("/v1/mix/statements/"));
	ck_assert_str_eq((const char *)response.body.data, expected);
	response_free(&response);
	health_note(&r, 1, HEALTH_SIGNER_PROVIDER, HEALTH_HEALTHY, f.now, 1, &f.provider, &healthy);
	post_expect_code(&f, "/v1/endpoint-health", &healthy, 202, NULL);

	/* A peer fetches what a vote lists by its digest; nothing is answered across namespaces. */
	request(&f, "GET", path, NULL, 0, 0, NULL, &response);
	ck_assert_int_eq(response.status, 200);
	ck_assert_uint_eq(response.body.len, draining.len);
	ck_assert_mem_eq(response.body.data, draining.data, draining.len);
	ck_assert_str_eq(header(&response, "Cache-Control"), "public, max-age=31536000, immutable");
	response_free(&response);
	char other[400];
	snprintf(other, sizeof other, "/v1/mail/%s", path + strlen("/v1/mix/"));
	request(&f, "GET", other, NULL, 0, 0, NULL, &response);
	expect_error(&response, 404, "not_found");
	response_free(&response);
	request(&f, "GET", "/v1/mix/statements/ABC", NULL, 0, 0, NULL, &response);
	expect_error(&response, 404, "not_found");
	response_free(&response);
	/* The server's own liveness is another route. */
	request(&f, "GET", "/v1/health", NULL, 0, 0, NULL, &response);
	ck_assert_int_eq(response.status, 200);
	ck_assert_str_eq((const char *)response.body.data, "{\"status\":\"ok\"}");
	response_free(&response);

	publish_epoch(&f, 11);
	struct published p;
	published_get(&f, 11, &p);
	ck_assert(has_record(&p, r.service_id));
	const struct snapshot_health *h = health_of(&p, &r, 0);
	ck_assert_ptr_nonnull(h);
	ck_assert_int_eq(h->health_class, HEALTH_DRAINING);
	ck_assert_int_eq(h->signer, HEALTH_SIGNER_ENDPOINT);
	ck_assert_uint_eq(h->note_len, draining.len);
	h = health_of(&p, &r, 1);
	ck_assert_ptr_nonnull(h);
	ck_assert_int_eq(h->health_class, HEALTH_HEALTHY);
	ck_assert_int_eq(h->signer, HEALTH_SIGNER_PROVIDER);
	ck_assert_ptr_null(health_of(&p, &r, 2)); /* no statement: unknown */
	published_free(&p);
	buffer_free(&draining);
	buffer_free(&healthy);
	registration_clear(&r);
	lc_close(&f);
}
END_TEST

START_TEST(test_health_refusals)
{
	struct fixture f;
	struct registration r, unregistered, in_mail;
	struct buffer note, text;
	lc_open(&f);
	register_example(&f, 1, 3600, &r);
	registration_of(&f, 2, &f.provider, 1, 3600, &unregistered);

	/* Over its bound (413), before anything is read. */
	buffer_init(&note);
	for (int i = 0; i < HEALTH_MAX_BYTES + 1; i++)
		buffer_append(&note, "x", 1);
	post_expect_code(&f, "/v1/endpoint-health", &note, 413, "body_too_large");
	buffer_free(&note);
	/* A figure the grammar cannot express (400), signed by the right key. */
	const char *figures[][2] = {{"class healthy\n", "class healthy\nload 0.73\n"},
	                            {"class healthy\n", "class healthy 73\n"},
	                            {"class healthy\n", "latency-ms 12\nclass healthy\n"}};
	for (size_t i = 0; i < sizeof figures / sizeof figures[0]; i++) {
		struct health_statement s;
		struct buffer figure;
		lifecycle_statement(&r, 0, HEALTH_SIGNER_PROVIDER, HEALTH_HEALTHY, 0, 1, &s);
		s.issued_at = f.now;
		buffer_init(&text);
		buffer_init(&figure);
		buffer_init(&note);
		ck_assert_int_eq(health_encode(&s, &text), 0);
		test_text_replace(text.data, text.len, figures[i][0], figures[i][1], &figure);
		test_key_sign_note(&f.provider, 1, figure.data, figure.len, &note);
		post_expect_code(&f, "/v1/endpoint-health", &note, 400, "malformed");
		buffer_free(&text);
		buffer_free(&figure);
		buffer_free(&note);
	}
	/* A namespace not served, one without the lifecycle (404). */
	struct health_statement s;
	lifecycle_statement(&r, 0, HEALTH_SIGNER_PROVIDER, HEALTH_HEALTHY, 0, 1, &s);
	s.issued_at = f.now;
	strcpy(s.namespace_name, "nowhere");
	buffer_init(&note);
	lifecycle_sign_statement(&s, &f.provider, &note);
	post_expect_code(&f, "/v1/endpoint-health", &note, 404, "unknown_namespace");
	buffer_free(&note);
	make_registration(&f, 3, "mail", &f.provider, &in_mail);
	post_registration(&f, &in_mail, &f.provider, 202, NULL);
	health_note(&in_mail, 0, HEALTH_SIGNER_PROVIDER, HEALTH_HEALTHY, f.now, 1, &f.provider, &note);
	post_expect_code(&f, "/v1/endpoint-health", &note, 404, "lifecycle_disabled");
	buffer_free(&note);
	/* An unknown service, an endpoint the registration does not list (404). */
	health_note(&unregistered, 0, HEALTH_SIGNER_PROVIDER, HEALTH_HEALTHY, f.now, 1, &f.provider, &note);
	post_expect_code(&f, "/v1/endpoint-health", &note, 404, "unknown_service");
	buffer_free(&note);
	lifecycle_statement(&r, 0, HEALTH_SIGNER_PROVIDER, HEALTH_HEALTHY, 0, 1, &s);
	s.issued_at = f.now;
	memset(s.endpoint_id, 0x42, sizeof s.endpoint_id);
	buffer_init(&note);
	lifecycle_sign_statement(&s, &f.provider, &note);
	post_expect_code(&f, "/v1/endpoint-health", &note, 404, "unknown_endpoint");
	buffer_free(&note);
	/* Neither the provider nor the endpoint's key (403 wrong_signer): another provider's key,
	 * the endpoint key claimed for an endpoint that names none, the endpoint key signing for the
	 * provider; the right key with a signature that fails (403 bad_signature). */
	health_note(&r, 0, HEALTH_SIGNER_PROVIDER, HEALTH_HEALTHY, f.now, 1, &f.other, &note);
	post_expect_code(&f, "/v1/endpoint-health", &note, 403, "wrong_signer");
	buffer_free(&note);
	health_note(&r, 1, HEALTH_SIGNER_ENDPOINT, HEALTH_HEALTHY, f.now, 1, &endpoint_key, &note);
	post_expect_code(&f, "/v1/endpoint-health", &note, 403, "wrong_signer");
	buffer_free(&note);
	health_note(&r, 0, HEALTH_SIGNER_PROVIDER, HEALTH_HEALTHY, f.now, 1, &endpoint_key, &note);
	post_expect_code(&f, "/v1/endpoint-health", &note, 403, "wrong_signer");
	buffer_free(&note);
	health_note(&r, 0, HEALTH_SIGNER_ENDPOINT, HEALTH_HEALTHY, f.now, 1, &endpoint_key, &note);
	spoil_signature(&note);
	post_expect_code(&f, "/v1/endpoint-health", &note, 403, "bad_signature");
	buffer_free(&note);
	/* Future-dated and too old (422). */
	health_note(&r, 0, HEALTH_SIGNER_PROVIDER, HEALTH_HEALTHY, f.now + 301, 1, &f.provider, &note);
	post_expect_code(&f, "/v1/endpoint-health", &note, 422, "outside_clock_skew");
	buffer_free(&note);
	health_note(&r, 0, HEALTH_SIGNER_PROVIDER, HEALTH_HEALTHY, f.now - 301, 1, &f.provider, &note);
	post_expect_code(&f, "/v1/endpoint-health", &note, 422, "outside_clock_skew");
	buffer_free(&note);

	/* Nothing above changed anything: sequence 5 is the endpoint's first. Then replayed, lower,
	 * and the same sequence by the other key (409). */
	health_note(&r, 0, HEALTH_SIGNER_PROVIDER, HEALTH_HEALTHY, f.now, 5, &f.provider, &note);
	post_expect_code(&f, "/v1/endpoint-health", &note, 202, NULL);
	struct response response;
	post_to(&f, "/v1/endpoint-health", &note, &response);
	expect_error(&response, 409, "replayed");
	response_free(&response);
	buffer_free(&note);
	health_note(&r, 0, HEALTH_SIGNER_PROVIDER, HEALTH_DEGRADED, f.now, 4, &f.provider, &note);
	post_expect_code(&f, "/v1/endpoint-health", &note, 409, "replayed");
	buffer_free(&note);
	health_note(&r, 0, HEALTH_SIGNER_ENDPOINT, HEALTH_DEGRADED, f.now, 5, &endpoint_key, &note);
	post_expect_code(&f, "/v1/endpoint-health", &note, 409, "replayed");
	buffer_free(&note);
	/* Only the statement accepted is published. */
	publish_epoch(&f, 11);
	struct published p;
	published_get(&f, 11, &p);
	ck_assert_uint_eq(p.body->health_count, 1);
	ck_assert_int_eq(health_of(&p, &r, 0)->health_class, HEALTH_HEALTHY);
	published_free(&p);
	registration_clear(&r);
	registration_clear(&unregistered);
	registration_clear(&in_mail);
	lc_close(&f);
}
END_TEST

/* A provider that stops posting: its endpoints go unknown after the freshness bound (2 epochs),
 * then its service leaves once its registration expires, with nothing done by anyone. */
START_TEST(test_provider_outage)
{
	struct fixture f;
	struct registration r;
	struct buffer note;
	lc_open(&f);
	register_example(&f, 1, 300, &r); /* expires at GENESIS + 901 */
	for (size_t e = 0; e < 3; e++) {
		health_note(&r, e, HEALTH_SIGNER_PROVIDER, HEALTH_HEALTHY, f.now, 1, &f.provider, &note);
		post_expect_code(&f, "/v1/endpoint-health", &note, 202, NULL);
		buffer_free(&note);
	}
	struct published p;
	publish_epoch(&f, 11);
	published_get(&f, 11, &p);
	ck_assert_uint_eq(p.body->health_count, 3);
	published_free(&p);
	publish_epoch(&f, 12); /* valid-after 720: issued 601 + 120 > 720, still fresh */
	published_get(&f, 12, &p);
	ck_assert_uint_eq(p.body->health_count, 3);
	published_free(&p);
	publish_epoch(&f, 13); /* 601 + 120 <= 780: stale, unknown, never healthy */
	published_get(&f, 13, &p);
	ck_assert(has_record(&p, r.service_id));
	ck_assert_uint_eq(p.body->health_count, 0);
	published_free(&p);
	publish_epoch(&f, 15); /* valid-after 900: the registration is still valid */
	published_get(&f, 15, &p);
	ck_assert(has_record(&p, r.service_id));
	published_free(&p);
	publish_epoch(&f, 16); /* valid-after 960: expired, gone */
	published_get(&f, 16, &p);
	ck_assert_uint_eq(p.body->record_count, 0);
	ck_assert_uint_eq(p.body->health_count, 0);
	published_free(&p);
	registration_clear(&r);
	lc_close(&f);
}
END_TEST

/* ---- revocations ---- */

START_TEST(test_revocation)
{
	struct fixture f;
	struct registration r, second, unregistered, in_mail;
	struct buffer note, revoke, by_operator;
	struct response response;
	char path[256];
	lc_open(&f);
	register_example(&f, 1, 3600, &r);
	register_example(&f, 2, 3600, &second);
	registration_of(&f, 4, &f.provider, 1, 3600, &unregistered);
	health_note(&r, 0, HEALTH_SIGNER_ENDPOINT, HEALTH_HEALTHY, f.now, 1, &endpoint_key, &note);
	post_expect_code(&f, "/v1/endpoint-health", &note, 202, NULL);
	buffer_free(&note);

	/* The provider revokes its first endpoint at once (its key is compromised). */
	revocation_note(&r, 0, REVOCATION_SIGNER_PROVIDER, &f.provider, 1, &revoke);
	post_expect_code(&f, "/v1/revocations", &revoke, 202, NULL);
	statement_path(&revoke, path, sizeof path);
	request(&f, "GET", path, NULL, 0, 0, NULL, &response);
	ck_assert_int_eq(response.status, 200);
	ck_assert_mem_eq(response.body.data, revoke.data, revoke.len);
	response_free(&response);
	/* An operator revokes the whole second service. */
	revocation_note(&second, -1, REVOCATION_SIGNER_OPERATOR, &operator_key, 1, &by_operator);
	post_expect_code(&f, "/v1/revocations", &by_operator, 202, NULL);

	/* Refusals, each changing nothing. */
	post_to(&f, "/v1/revocations", &revoke, &response);
	expect_error(&response, 409, "replayed");
	response_free(&response);
	revocation_note(&r, 0, REVOCATION_SIGNER_PROVIDER, &f.provider, 2, &note);
	post_expect_code(&f, "/v1/revocations", &note, 409, "revoked");
	buffer_free(&note);
	revocation_note(&unregistered, -1, REVOCATION_SIGNER_PROVIDER, &f.provider, 3, &note);
	post_expect_code(&f, "/v1/revocations", &note, 404, "unknown_service");
	buffer_free(&note);
	struct revocation v;
	lifecycle_revocation(&r, 1, REVOCATION_SIGNER_PROVIDER, &f.provider, REVOCATION_RETIRED, 0, 3, &v);
	memset(v.endpoint_id, 0x42, sizeof v.endpoint_id);
	buffer_init(&note);
	lifecycle_sign_revocation(&v, &f.provider, &note);
	post_expect_code(&f, "/v1/revocations", &note, 404, "unknown_endpoint");
	buffer_free(&note);
	revocation_note(&r, 1, REVOCATION_SIGNER_PROVIDER, &f.other, 1, &note); /* not its service */
	post_expect_code(&f, "/v1/revocations", &note, 403, "wrong_signer");
	buffer_free(&note);
	revocation_note(&r, 1, REVOCATION_SIGNER_OPERATOR, &f.stranger, 1, &note); /* no operator key */
	post_expect_code(&f, "/v1/revocations", &note, 403, "wrong_signer");
	buffer_free(&note);
	lifecycle_revocation(&r, 1, REVOCATION_SIGNER_PROVIDER, &f.provider, REVOCATION_RETIRED, 0, 3, &v);
	buffer_init(&note);
	{
		struct buffer text;
		buffer_init(&text);
		ck_assert_int_eq(revocation_encode(&v, &text), 0);
		test_key_sign_note(&operator_key, 1, text.data, text.len,
		                   &note); /* another key than its key line */
		buffer_free(&text);
	}
	post_expect_code(&f, "/v1/revocations", &note, 403, "wrong_signer");
	buffer_free(&note);
	revocation_note(&r, 1, REVOCATION_SIGNER_PROVIDER, &f.provider, 3, &note);
	spoil_signature(&note);
	post_expect_code(&f, "/v1/revocations", &note, 403, "bad_signature");
	buffer_free(&note);
	buffer_init(&note);
	buffer_append_string(&note, "dirauth revocation v1\n\n— nobody AAAA\n");
	post_expect_code(&f, "/v1/revocations", &note, 400, "malformed");
	buffer_free(&note);
	buffer_init(&note);
	for (int i = 0; i < REVOCATION_MAX_BYTES + 1; i++)
		buffer_append(&note, "x", 1);
	post_expect_code(&f, "/v1/revocations", &note, 413, "body_too_large");
	buffer_free(&note);
	make_registration(&f, 3, "mail", &f.provider, &in_mail);
	post_registration(&f, &in_mail, &f.provider, 202, NULL);
	revocation_note(&in_mail, -1, REVOCATION_SIGNER_PROVIDER, &f.provider, 4, &note);
	post_expect_code(&f, "/v1/revocations", &note, 404, "lifecycle_disabled");
	buffer_free(&note);
	/* A health statement on the revoked endpoint. */
	health_note(&r, 0, HEALTH_SIGNER_ENDPOINT, HEALTH_HEALTHY, f.now, 2, &endpoint_key, &note);
	post_expect_code(&f, "/v1/endpoint-health", &note, 409, "revoked");
	buffer_free(&note);

	/* The next snapshot: both services absent, both revocations listed since it. */
	publish_epoch(&f, 11);
	struct published p;
	published_get(&f, 11, &p);
	ck_assert(!has_record(&p, r.service_id));
	ck_assert(!has_record(&p, second.service_id));
	ck_assert_uint_eq(p.body->revocation_count, 2);
	const struct snapshot_revocation *listed = revocation_of(&p, &r, 0);
	ck_assert_ptr_nonnull(listed);
	ck_assert_uint_eq(listed->since, 11);
	ck_assert_uint_eq(listed->note_len, revoke.len);
	ck_assert_mem_eq(listed->note, revoke.data, revoke.len);
	ck_assert_ptr_nonnull(revocation_of(&p, &second, -1));
	published_free(&p);

	/* A higher sequence naming the revoked endpoint never brings it back, nor does a restart. */
	struct registration newer;
	registration_of(&f, 1, &f.provider, 2, 3600, &newer);
	post_registration(&f, &newer, &f.provider, 409, "revoked");
	ck_assert_uint_eq(sequence_of(&f, r.service_id), 1);
	lc_restart(&f);
	newer.sequence = 3;
	post_registration(&f, &newer, &f.provider, 409, "revoked");
	second.sequence = 2;
	post_registration(&f, &second, &f.provider, 409, "revoked");
	publish_epoch(&f, 12);
	published_get(&f, 12, &p);
	ck_assert(!has_record(&p, r.service_id));
	listed = revocation_of(&p, &r, 0);
	ck_assert_ptr_nonnull(listed);
	ck_assert_uint_eq(listed->since, 11); /* carried from the snapshot that first listed it */
	published_free(&p);

	buffer_free(&revoke);
	buffer_free(&by_operator);
	registration_clear(&r);
	registration_clear(&second);
	registration_clear(&unregistered);
	registration_clear(&in_mail);
	registration_clear(&newer);
	lc_close(&f);
}
END_TEST

/* ---- deregistrations ---- */

START_TEST(test_deregistration)
{
	struct fixture f;
	struct registration r, unregistered;
	struct buffer note, withdraw;
	struct response response;
	lc_open(&f);
	register_example(&f, 1, 3600, &r);
	registration_of(&f, 2, &f.provider, 1, 3600, &unregistered);
	publish_epoch(&f, 11);
	struct published p;
	published_get(&f, 11, &p);
	ck_assert(has_record(&p, r.service_id));
	published_free(&p);

	/* Refusals first, each changing nothing. */
	deregistration_note(&unregistered, &f.provider, 1, f.now, &note);
	post_expect_code(&f, "/v1/deregistrations", &note, 404, "unknown_service");
	buffer_free(&note);
	deregistration_note(&r, &f.other, 1, f.now, &note); /* an enrolled key, not the service's */
	post_expect_code(&f, "/v1/deregistrations", &note, 403, "wrong_signer");
	buffer_free(&note);
	deregistration_note(&r, &f.stranger, 1, f.now, &note);
	post_expect_code(&f, "/v1/deregistrations", &note, 403, "unknown_provider");
	buffer_free(&note);
	deregistration_note(&r, &f.provider, 1, f.now, &note);
	spoil_signature(&note);
	post_expect_code(&f, "/v1/deregistrations", &note, 403, "bad_signature");
	buffer_free(&note);
	buffer_init(&note);
	buffer_append_string(&note, "dirauth deregistration v1\n");
	post_expect_code(&f, "/v1/deregistrations", &note, 400, "malformed");
	buffer_free(&note);
	buffer_init(&note);
	for (int i = 0; i < DEREGISTRATION_MAX_BYTES + 1; i++)
		buffer_append(&note, "x", 1);
	post_expect_code(&f, "/v1/deregistrations", &note, 413, "body_too_large");
	buffer_free(&note);

	/* Accepted: the receipt is the authority's, names the request, and promises that no
	 * snapshot after epoch 11 lists the service. */
	deregistration_note(&r, &f.provider, 1, f.now, &withdraw);
	post_to(&f, "/v1/deregistrations", &withdraw, &response);
	ck_assert_msg(response.status == 202, "%ld %s", response.status, response.body.data);
	ck_assert_str_eq(header(&response, "Content-Type"), "text/plain; charset=utf-8");
	struct note *receipt_note = NULL;
	struct deregistration_receipt receipt;
	uint8_t digest[32];
	ck_assert_int_eq(note_parse(response.body.data, response.body.len, &receipt_note), 0);
	ck_assert_int_eq(note_verify_threshold(receipt_note, &f.signer_process.signing, 1, 1), 0);
	ck_assert_int_eq(deregistration_receipt_parse(receipt_note->text, receipt_note->text_len, &receipt),
	                 0);
	ck_assert_str_eq(receipt.authority, "authority1.dirauth.example");
	ck_assert_str_eq(receipt.namespace_name, "mix");
	ck_assert_mem_eq(receipt.service_id, r.service_id, SERVICE_ID_SIZE);
	ck_assert_uint_eq(receipt.sequence, 1);
	ck_assert_int_eq(crypto_sha256(withdraw.data, withdraw.len, digest), 0);
	ck_assert_mem_eq(receipt.deregistration_digest, digest, 32);
	ck_assert_uint_eq(receipt.accepted_at, f.now);
	ck_assert_uint_eq(receipt.last_listed_epoch, 11);
	note_free(receipt_note);
	response_free(&response);
	post_to(&f, "/v1/deregistrations", &withdraw, &response);
	expect_error(&response, 409, "replayed");
	response_free(&response);

	/* The promise kept: absent from the next snapshot; the sequence withdrawn is refused, a
	 * higher one is the provider's choice to come back. */
	publish_epoch(&f, 12);
	published_get(&f, 12, &p);
	ck_assert(!has_record(&p, r.service_id));
	published_free(&p);
	post_registration(&f, &r, &f.provider, 409, "deregistered");
	r.sequence = 2;
	post_registration(&f, &r, &f.provider, 202, NULL);
	deregistration_note(&r, &f.provider, 1, f.now, &note); /* below the highest: withdraws nothing */
	post_expect_code(&f, "/v1/deregistrations", &note, 409, "replayed");
	buffer_free(&note);
	publish_epoch(&f, 13);
	published_get(&f, 13, &p);
	ck_assert(has_record(&p, r.service_id));
	published_free(&p);

	buffer_free(&withdraw);
	registration_clear(&r);
	registration_clear(&unregistered);
	lc_close(&f);
}
END_TEST

static Suite *lifecycle_http_suite(void)
{
	Suite *suite = suite_create("lifecycle_http");
	TCase *tc = tcase_create("lifecycle_http");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_health_published);
	tcase_add_test(tc, test_health_refusals);
	tcase_add_test(tc, test_provider_outage);
	tcase_add_test(tc, test_revocation);
	tcase_add_test(tc, test_deregistration);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	SRunner *runner = srunner_create(lifecycle_http_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	curl_global_cleanup();
	return failures ? 1 : 0;
}
