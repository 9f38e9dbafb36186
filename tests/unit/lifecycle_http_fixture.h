/*
 * lifecycle_http_fixture.h: one authority serving the endpoint lifecycle, for the tests that drive
 * it through its HTTP API (check_lifecycle_http.c, check_lifecycle_scenarios.c,
 * check_dirauthctl_endpoint.c): http_fixture.h's dirauthd (real signer, store, scheduler and
 * HTTP server on loopback) with the namespace "mix" configured with "lifecycle: true" and "mail"
 * without, provider.example and other.example enrolled, the EXAMPLE key operator.example
 * (lifecycle_fixture.h) as the operator key (lc_open_with can make mix a private namespace); and
 * the documents and snapshot readers those tests share. The first endpoint of every example
 * registration posted here names the EXAMPLE key endpoint.example as its own. Static functions,
 * like http_fixture.h; everything aborts the test on failure.
 */
#ifndef DIRAUTH_TEST_LIFECYCLE_HTTP_FIXTURE_H
#define DIRAUTH_TEST_LIFECYCLE_HTTP_FIXTURE_H

#include "http_fixture.h"
#include "lifecycle_fixture.h"

#include "schema/deregistration.h"
#include "schema/deregistration_receipt.h"
#include "schema/encoding.h"
#include "schema/health.h"
#include "schema/revocation.h"
#include "server/store/snapshots.h"
#include "server/store/statements.h"

#define FRESHNESS (2 * LENGTH)

static struct test_key endpoint_key, operator_key;

/* The authority with mix private behind the capability whose SHA-256 is capability_sha256 (64
 * hex digits), or public when it is NULL. */
static inline void lc_open_with(struct fixture *f, const char *capability_sha256)
{
	fixture_prepare(f);
	lifecycle_key_load(LIFECYCLE_KEY_ENDPOINT, &endpoint_key);
	lifecycle_key_load(LIFECYCLE_KEY_OPERATOR, &operator_key);
	char text[8192], keys[3][NOTE_VERIFIER_KEY_MAX + 1], mix_access[128];
	if (capability_sha256)
		snprintf(mix_access, sizeof mix_access, ", private: true, capability_sha256: %s",
		         capability_sha256);
	else
		mix_access[0] = '\0';
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
	         "  - { name: mix, origin: dirauth.example/mix, lifecycle: true%s }\n"
	         "  - { name: mail, origin: dirauth.example/mail }\n"
	         "providers:\n"
	         "  - { key: \"%s\", namespaces: [mix, mail], classes: [mix-gateway] }\n"
	         "  - { key: \"%s\", namespaces: [mix], classes: [mix-gateway] }\n"
	         "operators: [\"%s\"]\n"
	         "bounds: { registration_body: %d, endpoints_per_service: 3, max_validity_seconds: 86400 }\n"
	         "http: { threads: 2 }\n",
	         f->port, LENGTH, GENESIS, mix_access, keys[0], keys[1], keys[2], BODY_CAP);
	fixture_start(f, 0, text);
}

static inline void lc_open(struct fixture *f)
{
	lc_open_with(f, NULL);
}

static inline void lc_close(struct fixture *f)
{
	test_key_free(&endpoint_key);
	test_key_free(&operator_key);
	fixture_close(f);
}

/* dirauthd restarted: store, prepared responses, scheduler and HTTP server all new. */
static inline void lc_restart(struct fixture *f)
{
	fixture_stop_serving(f);
	store_close(f->store);
	struct store_options options = {.path = f->config->data_dir};
	ck_assert_int_eq(store_open(&options, &f->store), 0);
	fixture_serve(f);
}

/* ---- documents ---- */

/* Example registration index of key at sequence, its first endpoint naming endpoint.example,
 * valid from now for validity seconds, posted; expects 202 or the refusal. */
static inline void registration_of(struct fixture *f, unsigned index, const struct test_key *key,
                                   uint64_t sequence, uint64_t validity, struct registration *r)
{
	make_registration(f, index, "mix", key, r);
	r->sequence = sequence;
	r->expires = f->now + validity;
	r->endpoints[0].has_key = 1;
	r->endpoints[0].key = endpoint_key.verifier;
}

static inline void post_to(struct fixture *f, const char *path, const struct buffer *note,
                           struct response *out)
{
	request(f, "POST", path, note->data, note->len, 0, NULL, out);
}

static inline void post_registration(struct fixture *f, const struct registration *r,
                                     const struct test_key *key, long status, const char *code)
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

static inline void register_example(struct fixture *f, unsigned index, uint64_t validity,
                                    struct registration *r)
{
	registration_of(f, index, &f->provider, 1, validity, r);
	post_registration(f, r, &f->provider, 202, NULL);
}

/* The statement on endpoint e of r, issued at, signed by key. */
static inline void health_note(const struct registration *r, size_t e, enum health_signer signer,
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
static inline void revocation_note(const struct registration *r, int e, enum revocation_signer signer,
                                   const struct test_key *key, uint64_t sequence, struct buffer *out)
{
	struct revocation v;
	lifecycle_revocation(r, e, signer, key, REVOCATION_KEY_COMPROMISE, 0, sequence, &v);
	buffer_init(out);
	lifecycle_sign_revocation(&v, key, out);
}

static inline void deregistration_note(const struct registration *r, const struct test_key *key,
                                       uint64_t sequence, uint64_t at, struct buffer *out)
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
static inline void spoil_signature(struct buffer *note)
{
	size_t at = note->len - 10;
	note->data[at] = note->data[at] == 'A' ? 'B' : 'A';
}

/* Posts note to path: expects status and code (202: accepted), and, for a refusal, that nothing
 * was kept under its digest. */
static inline void post_expect_code(struct fixture *f, const char *path, const struct buffer *note,
                                    long status, const char *code)
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

static inline void statement_path(const struct buffer *note, char *path, size_t cap)
{
	uint8_t digest[32];
	char hex[65];
	ck_assert_int_eq(crypto_sha256(note->data, note->len, digest), 0);
	hex_encode(digest, 32, hex);
	snprintf(path, cap, "/v1/mix/statements/%s", hex);
}

/* ---- snapshots ---- */

static inline void publish_epoch(struct fixture *f, uint64_t epoch)
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
static inline void published_get(struct fixture *f, uint64_t epoch, struct published *out)
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

static inline void published_free(struct published *p)
{
	snapshot_body_free(p->body);
	buffer_free(&p->bytes);
}

static inline int has_record(const struct published *p, const uint8_t *service_id)
{
	for (size_t i = 0; i < p->body->record_count; i++)
		if (memcmp(p->body->records[i].service_id, service_id, SERVICE_ID_SIZE) == 0)
			return 1;
	return 0;
}

static inline const struct snapshot_health *health_of(const struct published *p, const struct registration *r,
                                                      size_t e)
{
	for (size_t i = 0; i < p->body->health_count; i++)
		if (memcmp(p->body->health[i].service_id, r->service_id, SERVICE_ID_SIZE) == 0 &&
		    memcmp(p->body->health[i].endpoint_id, r->endpoints[e].endpoint_id, ENDPOINT_ID_SIZE) ==
		        0)
			return &p->body->health[i];
	return NULL;
}

static inline const struct snapshot_revocation *revocation_of(const struct published *p,
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

#endif
