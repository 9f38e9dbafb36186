/*
 * check_private.c: private namespaces over real HTTP on loopback (http_fixture.h: a real signer,
 * store, scheduler and HTTP server in the test process), as an outsider, a capability holder, a
 * provider and another authority see them.
 *
 * The authority serves mix as a private namespace (capability SECRET) and mail as a public one.
 * Every route family under /v1/mix/ (snapshots, bodies, the log, votes, signatures,
 * registrations, evidence) answers a request without the capability, with a wrong one or with
 * another scheme exactly as it answers for a namespace that does not exist: the whole response,
 * status line, headers (but Date) and body, byte for byte; with the capability it answers, and
 * its answers are never for shared caches. A provider writes only where it is enrolled: a write
 * into the public namespace by a provider enrolled elsewhere is 403, into the private one by
 * anyone not enrolled there (a stranger, a provider of mail, a forged signature of mix's own
 * provider) the same 404 as for a namespace that does not exist. The same holds for health
 * statements, revocations and deregistrations in mix and in vpn, a private namespace that takes
 * none: until a statement is shown to be signed by a key that may write there, its refusal is
 * that of a namespace that does not exist, and only then does vpn say it takes none. No route of mail reads
 * what mix holds, an id taken in mix is refused in mail with the same answer as one taken in mail, and the
 * metrics never name mix. The peer client presents the capability read from capability_file.
 */
#include "http_fixture.h"
#include "lifecycle_fixture.h"

#include "schema/deregistration.h"
#include "schema/encoding.h"
#include "server/config/capability.h"
#include "server/http/access.h"
#include "server/peers/peer_client.h"
#include "server/tlog/translog.h"

#include <sys/stat.h>

#define SECRET          "cHJpdmF0ZS1taXgtY2FwYWJpbGl0eS0wMDAwMDAwMDE="
#define WRONG_SECRET    "d3JvbmctbWl4LWNhcGFiaWxpdHktMDAwMDAwMDAwMDA="
#define AUTHORIZATION   "Authorization: Bearer " SECRET
#define NOT_SERVED      "This namespace is not served here."
#define NOT_SERVED_BODY "{\"error\":\"not_found\",\"detail\":\"" NOT_SERVED "\"}"

/* The fixture with mix private and mail public, and a third provider (enrolled for mail). */
struct private_fixture {
	struct fixture f;
	struct test_key third;
};

static void secret_digest_hex(const char *secret, char hex[65])
{
	uint8_t digest[32];
	ck_assert_int_eq(crypto_sha256((const uint8_t *)secret, strlen(secret), digest), 0);
	hex_encode(digest, sizeof digest, hex);
}

/* The fixture's configuration; with lifecycle, mix and mail take lifecycle statements and vpn, a
 * second private namespace (same capability) that takes none, is mix's provider's too.
 * provider_namespaces and other_namespaces, when not NULL, enrol the fixture's provider and mix's
 * provider (f->other) for those instead. */
static void private_config(struct private_fixture *p, bool lifecycle, const char *provider_namespaces,
                           const char *other_namespaces, char *text, size_t cap)
{
	struct fixture *f = &p->f;
	char hex[65], provider[NOTE_VERIFIER_KEY_MAX + 1], other[NOTE_VERIFIER_KEY_MAX + 1];
	secret_digest_hex(SECRET, hex);
	snprintf(provider, sizeof provider, "%s", test_key_verifier_string(&f->provider));
	snprintf(other, sizeof other, "%s", test_key_verifier_string(&f->other));
	const char *takes = lifecycle ? ", lifecycle: true" : "";
	char vpn[256] = "";
	if (lifecycle)
		snprintf(vpn, sizeof vpn,
		         "  - { name: vpn, origin: dirauth.example/vpn, private: true, "
		         "capability_sha256: %s }\n",
		         hex);
	snprintf(text, cap,
	         "authority: { name: authority1.dirauth.example, signer_socket: signer/signer.sock }\n"
	         "listen: { address: 127.0.0.1, port: %u }\n"
	         "data_dir: data\n"
	         "epoch: { length_seconds: %llu, genesis: %llu, validity_epochs: 3 }\n"
	         "clock: { source: file, path: clock }\n"
	         "namespaces:\n"
	         "  - { name: mix, origin: dirauth.example/mix, private: true, capability_sha256: %s%s }\n"
	         "  - { name: mail, origin: dirauth.example/mail, private: false%s }\n"
	         "%s"
	         "providers:\n"
	         "  - { key: \"%s\", namespaces: %s, classes: [mix-gateway] }\n"
	         "  - { key: \"%s\", namespaces: %s, classes: [mix-gateway] }\n"
	         "  - { key: \"%s\", namespaces: [mail], classes: [mix-gateway] }\n"
	         "bounds: { registration_body: %d, endpoints_per_service: 3, max_validity_seconds: 86400 }\n"
	         "http: { threads: 2 }\n",
	         f->port, LENGTH, GENESIS, hex, takes, takes, vpn, provider,
	         provider_namespaces ? provider_namespaces : "[mail]", other,
	         other_namespaces ? other_namespaces
	         : lifecycle      ? "[mix, vpn]"
	                          : "[mix]",
	         test_key_verifier_string(&p->third), BODY_CAP);
}

static void open_private_with(struct private_fixture *p, bool lifecycle)
{
	struct fixture *f = &p->f;
	char text[4096];
	fixture_prepare(f);
	test_key_load(TEST_KEY_AUTHORITY_3, &p->third);
	private_config(p, lifecycle, NULL, NULL, text, sizeof text);
	fixture_start(f, 0, text);
	ck_assert(config_namespace_is_private(f->config, 0));
	ck_assert(!config_namespace_is_private(f->config, 1));
}

/* dirauthd restarted over the same store with the two providers enrolled anew, as after an
 * operator's change of the configuration. */
static void reenrol(struct private_fixture *p, const char *provider_namespaces, const char *other_namespaces)
{
	struct fixture *f = &p->f;
	struct settings_error error;
	char text[4096];
	private_config(p, true, provider_namespaces, other_namespaces, text, sizeof text);
	fixture_stop_serving(f);
	config_free(f->config);
	ck_assert_msg(config_parse((const uint8_t *)text, strlen(text), f->dir, &f->config, &error) == 0,
	              "%zu: %s", error.line, error.message);
	fixture_serve(f);
}

static void open_private(struct private_fixture *p)
{
	open_private_with(p, false);
}

static void close_private(struct private_fixture *p)
{
	test_key_free(&p->third);
	fixture_close(&p->f);
}

/* What a response is, but the Date header: the status line, every other header line as sent, and
 * the body. */
static void normalized(const struct response *r, struct buffer *out)
{
	const char *p = (const char *)r->headers.data;
	const char *end = p + r->headers.len;
	buffer_init(out);
	while (p && p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		size_t n = eol ? (size_t)(eol - p) + 1 : (size_t)(end - p);
		if (!(n >= 5 && strncasecmp(p, "date:", 5) == 0))
			ck_assert_int_eq(buffer_append(out, p, n), 0);
		p += n;
	}
	ck_assert_int_eq(buffer_append_string(out, "--body--\r\n"), 0);
	if (r->body.len)
		ck_assert_int_eq(buffer_append(out, r->body.data, r->body.len), 0);
}

/* Asserts that a and b are the same response but their Date. */
static void expect_same(const struct response *a, const struct response *b, const char *what)
{
	struct buffer x, y;
	normalized(a, &x);
	normalized(b, &y);
	ck_assert_msg(x.len == y.len && memcmp(x.data, y.data, x.len) == 0,
	              "%s: the answers differ:\n%.*s\n----\n%.*s", what, (int)x.len, (const char *)x.data,
	              (int)y.len, (const char *)y.data);
	buffer_free(&x);
	buffer_free(&y);
}

/* path with its first "/mix/" replaced by "/xim/", a namespace that does not exist. */
static void unknown_path(const char *path, char *out, size_t cap)
{
	const char *at = strstr(path, "/mix/");
	ck_assert_ptr_nonnull(at);
	snprintf(out, cap, "%.*s/xim/%s", (int)(at - path), path, at + 5);
}

static int contains(const struct buffer *haystack, const char *needle)
{
	size_t len = strlen(needle);
	for (size_t i = 0; haystack->len >= len && i <= haystack->len - len; i++)
		if (memcmp(haystack->data + i, needle, len) == 0)
			return 1;
	return 0;
}

static int is_hidden(const struct response *r)
{
	return r->status == 404 && r->body.len == strlen(NOT_SERVED_BODY) &&
	       memcmp(r->body.data, NOT_SERVED_BODY, r->body.len) == 0;
}

/* A registration of index in namespace_name by key, posted; returns the status. */
static long post_registration(struct fixture *f, unsigned index, const char *namespace_name,
                              const struct test_key *named, const struct test_key *signer,
                              const char *const *headers, struct response *out)
{
	struct registration r;
	struct buffer note;
	make_registration(f, index, namespace_name, named, &r);
	sign(&r, signer, &note);
	request(f, "POST", "/v1/registrations", note.data, note.len, 0, headers, out);
	buffer_free(&note);
	registration_clear(&r);
	return out->status;
}

/* Registers index in mix (by other) and in mail (by provider), publishes epoch 11 and lets mix's
 * log take it. */
static void publish_both(struct private_fixture *p)
{
	struct fixture *f = &p->f;
	struct response r;
	ck_assert_int_eq(post_registration(f, 1, "mix", &f->other, &f->other, NULL, &r), 202);
	response_free(&r);
	ck_assert_int_eq(post_registration(f, 2, "mail", &f->provider, &f->provider, NULL, &r), 202);
	response_free(&r);
	write_clock(f, GENESIS + 11 * LENGTH);
	ck_assert_int_eq(epoch_scheduler_tick(f->scheduler), 0);
	struct translog_outcome outcome;
	int rc = translog_catch_up(f->store, f->config, f->signer, 0, &outcome);
	ck_assert_msg(rc == 0, "catch up: %s: %s", dirauth_strerror(rc), outcome.detail);
	ck_assert_uint_eq(outcome.checkpoint_size, 1);
}

struct route_case {
	const char *method;
	const char *path;
	int expect_ok;             /* 200 with the capability */
	const char *cache_control; /* of that 200, or NULL */
};

START_TEST(test_every_route_family)
{
	struct private_fixture p;
	struct fixture *f = &p.f;
	open_private(&p);
	publish_both(&p);
	struct registration mine;
	char service[65], registration_path[160];
	make_registration(f, 1, "mix", &f->other, &mine);
	hex_encode(mine.service_id, 32, service);
	registration_clear(&mine);
	snprintf(registration_path, sizeof registration_path, "/v1/mix/registrations/%s/1", service);

	const struct route_case cases[] = {
	    {"GET", "/v1/mix/snapshots/latest", 1, NULL},
	    {"HEAD", "/v1/mix/snapshots/latest", 1, NULL},
	    {"GET", "/v1/mix/snapshots/11", 1, "private, max-age=31536000, immutable"},
	    {"GET", "/v1/mix/snapshots/12", 0, NULL},
	    {"GET", "/v1/mix/snapshots/11/body", 1, "private, max-age=31536000, immutable"},
	    {"HEAD", "/v1/mix/snapshots/11/body", 1, "private, max-age=31536000, immutable"},
	    /* No diff is built here: hidden without the capability, 404 no_diff with it. */
	    {"GET",
	     "/v1/mix/snapshots/11/diff/0000000000000000000000000000000000000000000000000000000000000000", 0,
	     NULL},
	    {"GET", "/v1/mix/log/checkpoint", 1, "private, max-age=5"},
	    {"GET", "/v1/mix/log/tile/0/000.p/1", 1, "private, max-age=31536000, immutable"},
	    {"GET", "/v1/mix/log/tile/entries/000.p/1", 1, "private, max-age=31536000, immutable"},
	    {"GET", "/v1/mix/log/tile/9/000", 0, NULL},
	    {"GET", "/v1/mix/log/proof/11", 0, NULL},
	    {"GET", registration_path, 1, NULL},
	    {"POST", "/v1/mix/votes", 0, NULL},
	    {"GET", "/v1/mix/votes/11/authority1.dirauth.example", 0, NULL},
	    {"POST", "/v1/mix/signatures", 0, NULL},
	    {"GET", "/v1/mix/signatures/11", 0, NULL},
	    {"GET", "/v1/mix/evidence", 0, NULL},
	    {"GET", "/v1/mix/evidence/11", 0, NULL},
	};
	const char *const without[] = {NULL};
	const char *const wrong[] = {"Authorization: Bearer " WRONG_SECRET, NULL};
	const char *const basic[] = {"Authorization: Basic " SECRET, NULL};
	const char *const lower[] = {"authorization: bearer " SECRET "x", NULL};
	const char *const right[] = {AUTHORIZATION, NULL};
	const char *const right_gzip[] = {AUTHORIZATION, "Accept-Encoding: gzip", NULL};
	const char *const *refused[] = {without, wrong, basic, lower};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct route_case *c = &cases[i];
		const uint8_t *body = strcmp(c->method, "POST") == 0 ? (const uint8_t *)"x" : NULL;
		char unknown[256];
		unknown_path(c->path, unknown, sizeof unknown);
		struct response absent, absent_with;
		/* The namespace that does not exist, with and without the capability. */
		request(f, c->method, unknown, body, body ? 1 : 0, 0, without, &absent);
		request(f, c->method, unknown, body, body ? 1 : 0, 0, right, &absent_with);
		ck_assert_int_eq(absent.status, 404);
		expect_same(&absent, &absent_with, unknown);
		for (size_t k = 0; k < sizeof refused / sizeof refused[0]; k++) {
			struct response hidden;
			request(f, c->method, c->path, body, body ? 1 : 0, 0, refused[k], &hidden);
			char what[400];
			snprintf(what, sizeof what, "%s %s (%s)", c->method, c->path,
			         refused[k][0] ? refused[k][0] : "no Authorization");
			expect_same(&hidden, &absent, what);
			response_free(&hidden);
		}
		struct response opened;
		request(f, c->method, c->path, body, body ? 1 : 0, 0,
		        strstr(c->path, "/body") ? right_gzip : right, &opened);
		ck_assert_msg(!is_hidden(&opened), "%s %s stays hidden with the capability", c->method,
		              c->path);
		if (c->expect_ok) {
			ck_assert_msg(opened.status == 200, "%s %s: %ld %s", c->method, c->path,
			              opened.status, opened.body.data ? (const char *)opened.body.data : "");
			if (c->cache_control)
				ck_assert_str_eq(header(&opened, "Cache-Control"), c->cache_control);
		}
		const char *cache = header(&opened, "Cache-Control");
		ck_assert_msg(!cache || strncmp(cache, "public", 6) != 0, "%s %s: %s", c->method, c->path,
		              cache);
		response_free(&opened);
		response_free(&absent);
		response_free(&absent_with);
	}
	/* The latest header's max-age is the time left, for private caches only. */
	struct response latest;
	request(f, "GET", "/v1/mix/snapshots/latest", NULL, 0, 0, right, &latest);
	ck_assert_str_eq(header(&latest, "Cache-Control"), "private, max-age=60");
	response_free(&latest);
	/* The public namespace needs nothing and stays for every cache. */
	request(f, "GET", "/v1/mail/snapshots/latest", NULL, 0, 0, NULL, &latest);
	ck_assert_int_eq(latest.status, 200);
	ck_assert_str_eq(header(&latest, "Cache-Control"), "public, max-age=60");
	response_free(&latest);
	request(f, "GET", "/v1/mail/snapshots/11", NULL, 0, 0, wrong, &latest);
	ck_assert_int_eq(latest.status, 200);
	ck_assert_str_eq(header(&latest, "Cache-Control"), "public, max-age=31536000, immutable");
	response_free(&latest);
	/* Other methods are refused as for every path: whether or not the namespace exists. */
	struct response a, b;
	request(f, "DELETE", "/v1/mix/snapshots/latest", NULL, 0, 0, NULL, &a);
	request(f, "DELETE", "/v1/xim/snapshots/latest", NULL, 0, 0, NULL, &b);
	expect_error(&a, 405, "method_not_allowed");
	expect_same(&a, &b, "DELETE");
	response_free(&a);
	response_free(&b);
	close_private(&p);
}
END_TEST

/* A refusal of a registration in mix compared with the same refusal in xim, which does not exist:
 * the same but the name in the sentence. */
static void expect_unknown_namespace(struct fixture *f, unsigned index, const struct test_key *named,
                                     const struct test_key *signer, const char *const *headers)
{
	struct response in_mix, in_xim;
	post_registration(f, index, "mix", named, signer, headers, &in_mix);
	post_registration(f, index, "xim", named, signer, headers, &in_xim);
	expect_error(&in_mix, 404, "unknown_namespace");
	struct buffer renamed;
	buffer_init(&renamed);
	test_text_replace(in_mix.body.data, in_mix.body.len, "'mix'", "'xim'", &renamed);
	buffer_free(&in_mix.body);
	in_mix.body = renamed;
	expect_same(&in_mix, &in_xim, named->verifier.name);
	response_free(&in_mix);
	response_free(&in_xim);
}

START_TEST(test_writes_only_where_enrolled)
{
	struct private_fixture p;
	struct fixture *f = &p.f;
	struct response r;
	open_private(&p);
	const char *const capability[] = {AUTHORIZATION, NULL};

	/* mix's own provider writes there as before, with or without the capability. */
	ck_assert_int_eq(post_registration(f, 1, "mix", &f->other, &f->other, NULL, &r), 202);
	response_free(&r);
	ck_assert_int_eq(post_registration(f, 2, "mix", &f->other, &f->other, capability, &r), 202);
	response_free(&r);
	/* A provider of mail, a stranger, and a note naming mix's provider but not signed by it:
	 * mix does not exist for them. The capability opens reads, not writes. */
	expect_unknown_namespace(f, 3, &f->provider, &f->provider, NULL);
	expect_unknown_namespace(f, 3, &f->provider, &f->provider, capability);
	expect_unknown_namespace(f, 4, &f->stranger, &f->stranger, NULL);
	expect_unknown_namespace(f, 5, &f->other, &f->provider, NULL);
	expect_unknown_namespace(f, 6, &p.third, &p.third, NULL);

	/* In the public namespace the refusals say what they are, as before. */
	post_registration(f, 7, "mail", &f->other, &f->other, NULL, &r);
	expect_error(&r, 403, "namespace_not_allowed");
	response_free(&r);
	post_registration(f, 8, "mail", &f->stranger, &f->stranger, NULL, &r);
	expect_error(&r, 403, "unknown_provider");
	response_free(&r);
	post_registration(f, 9, "mail", &f->provider, &f->other, NULL, &r);
	expect_error(&r, 403, "bad_signature");
	response_free(&r);
	ck_assert_int_eq(post_registration(f, 10, "mail", &f->provider, &f->provider, NULL, &r), 202);
	response_free(&r);

	/* Nothing refused was stored. */
	struct registration refused;
	for (unsigned index = 3; index <= 9; index++) {
		make_registration(f, index, "mix", &f->provider, &refused);
		ck_assert_uint_eq(sequence_of(f, refused.service_id), 0);
		registration_clear(&refused);
	}
	close_private(&p);
}
END_TEST

/* A health statement on the first endpoint of registration index in namespace_name (as
 * make_registration makes it, by named), by the provider's key, signed by signer. */
static void post_health(struct fixture *f, unsigned index, const char *namespace_name,
                        const struct test_key *named, const struct test_key *signer, struct response *out)
{
	struct registration r;
	struct health_statement s;
	struct buffer note;
	make_registration(f, index, namespace_name, named, &r);
	memset(&s, 0, sizeof s);
	strcpy(s.namespace_name, namespace_name);
	memcpy(s.service_id, r.service_id, SERVICE_ID_SIZE);
	memcpy(s.endpoint_id, r.endpoints[0].endpoint_id, ENDPOINT_ID_SIZE);
	s.signer = HEALTH_SIGNER_PROVIDER;
	s.health_class = HEALTH_HEALTHY;
	s.issued_at = f->now;
	s.sequence = 1;
	buffer_init(&note);
	lifecycle_sign_statement(&s, signer, &note);
	request(f, "POST", "/v1/endpoint-health", note.data, note.len, 0, NULL, out);
	buffer_free(&note);
	registration_clear(&r);
}

/* A revocation of registration index's service, naming key as its provider, signed by signer. */
static void post_revocation(struct fixture *f, unsigned index, const char *namespace_name,
                            const struct test_key *named, const struct test_key *key,
                            const struct test_key *signer, struct response *out)
{
	struct registration r;
	struct revocation rev;
	struct buffer note;
	make_registration(f, index, namespace_name, named, &r);
	memset(&rev, 0, sizeof rev);
	strcpy(rev.namespace_name, namespace_name);
	memcpy(rev.service_id, r.service_id, SERVICE_ID_SIZE);
	rev.signer = REVOCATION_SIGNER_PROVIDER;
	rev.key = key->verifier;
	rev.reason = REVOCATION_RETIRED;
	rev.revoked_at = f->now;
	rev.sequence = 1;
	buffer_init(&note);
	lifecycle_sign_revocation(&rev, signer, &note);
	request(f, "POST", "/v1/revocations", note.data, note.len, 0, NULL, out);
	buffer_free(&note);
	registration_clear(&r);
}

/* A deregistration of registration index's service by key, signed by signer. */
static void post_deregistration(struct fixture *f, unsigned index, const char *namespace_name,
                                const struct test_key *named, const struct test_key *key,
                                const struct test_key *signer, struct response *out)
{
	struct registration r;
	struct deregistration d;
	struct buffer text, note;
	make_registration(f, index, namespace_name, named, &r);
	memset(&d, 0, sizeof d);
	strcpy(d.namespace_name, namespace_name);
	memcpy(d.service_id, r.service_id, SERVICE_ID_SIZE);
	d.provider = key->verifier;
	d.sequence = r.sequence + 1;
	d.requested_at = f->now;
	buffer_init(&text);
	buffer_init(&note);
	ck_assert_int_eq(deregistration_encode(&d, &text), 0);
	test_key_sign_note(signer, 1, text.data, text.len, &note);
	request(f, "POST", "/v1/deregistrations", note.data, note.len, 0, NULL, out);
	buffer_free(&text);
	buffer_free(&note);
	registration_clear(&r);
}

enum statement_kind { STATEMENT_HEALTH, STATEMENT_REVOCATION, STATEMENT_DEREGISTRATION };

/* The statement of kind on registration index in namespace_name (made by named), by key (the
 * statement's provider), signed by signer. */
static void post_statement(struct fixture *f, enum statement_kind kind, unsigned index,
                           const char *namespace_name, const struct test_key *named,
                           const struct test_key *key, const struct test_key *signer, struct response *out)
{
	if (kind == STATEMENT_HEALTH)
		post_health(f, index, namespace_name, named, signer, out);
	else if (kind == STATEMENT_REVOCATION)
		post_revocation(f, index, namespace_name, named, key, signer, out);
	else
		post_deregistration(f, index, namespace_name, named, key, signer, out);
}

/* The statement in namespace_name is answered as the same statement in xim, which does not
 * exist: the same response but the name in the sentence. */
static void expect_statement_hidden(struct fixture *f, enum statement_kind kind, unsigned index,
                                    const char *namespace_name, const struct test_key *named,
                                    const struct test_key *key, const struct test_key *signer)
{
	struct response in_namespace, in_xim;
	post_statement(f, kind, index, namespace_name, named, key, signer, &in_namespace);
	post_statement(f, kind, index, "xim", named, key, signer, &in_xim);
	char what[160], quoted[80];
	snprintf(what, sizeof what, "statement %d on %u in %s by %s", (int)kind, index, namespace_name,
	         signer->verifier.name);
	ck_assert_msg(in_namespace.status == 404 && in_namespace.body.data &&
	                  strstr((const char *)in_namespace.body.data, "\"unknown_namespace\""),
	              "%s: %ld %s", what, in_namespace.status,
	              in_namespace.body.data ? (const char *)in_namespace.body.data : "");
	snprintf(quoted, sizeof quoted, "'%s'", namespace_name);
	struct buffer renamed;
	buffer_init(&renamed);
	test_text_replace(in_namespace.body.data, in_namespace.body.len, quoted, "'xim'", &renamed);
	buffer_free(&in_namespace.body);
	in_namespace.body = renamed;
	expect_same(&in_namespace, &in_xim, what);
	response_free(&in_namespace);
	response_free(&in_xim);
}

static void expect_statement_error(struct fixture *f, enum statement_kind kind, unsigned index,
                                   const char *namespace_name, const struct test_key *named,
                                   const struct test_key *key, const struct test_key *signer, long status,
                                   const char *code)
{
	struct response r;
	post_statement(f, kind, index, namespace_name, named, key, signer, &r);
	expect_error(&r, status, code);
	response_free(&r);
}

START_TEST(test_statements_only_where_shown)
{
	struct private_fixture p;
	struct fixture *f = &p.f;
	struct response r;
	open_private_with(&p, true);
	/* mix's provider's service 1 in mix and 2 in vpn, mail's provider's 3 in mail. */
	ck_assert_int_eq(post_registration(f, 1, "mix", &f->other, &f->other, NULL, &r), 202);
	response_free(&r);
	ck_assert_int_eq(post_registration(f, 2, "vpn", &f->other, &f->other, NULL, &r), 202);
	response_free(&r);
	ck_assert_int_eq(post_registration(f, 3, "mail", &f->provider, &f->provider, NULL, &r), 202);
	response_free(&r);

	const enum statement_kind kinds[] = {STATEMENT_HEALTH, STATEMENT_REVOCATION,
	                                     STATEMENT_DEREGISTRATION};
	for (size_t k = 0; k < 3; k++) {
		enum statement_kind kind = kinds[k];
		/* A stranger on a service it made up, in mix (takes statements) and in vpn (takes
		 * none): as in a namespace that does not exist. */
		expect_statement_hidden(f, kind, 9, "mix", &f->stranger, &f->stranger, &f->stranger);
		expect_statement_hidden(f, kind, 9, "vpn", &f->stranger, &f->stranger, &f->stranger);
		/* On mix's real service: a stranger's key, mail's provider, and mix's provider's name
		 * with another's signature. */
		expect_statement_hidden(f, kind, 1, "mix", &f->other, &f->stranger, &f->stranger);
		expect_statement_hidden(f, kind, 1, "mix", &f->other, &f->provider, &f->provider);
		expect_statement_hidden(f, kind, 1, "mix", &f->other, &f->other, &f->provider);
		expect_statement_hidden(f, kind, 2, "vpn", &f->other, &f->other, &f->provider);
		/* Shown to be by vpn's own provider, vpn says it takes no statements. */
		expect_statement_error(f, kind, 2, "vpn", &f->other, &f->other, &f->other, 404,
		                       "lifecycle_disabled");
		/* The public namespace says what is wrong, as before. */
		expect_statement_error(f, kind, 9, "mail", &f->provider, &f->provider, &f->provider, 404,
		                       "unknown_service");
	}
	expect_statement_error(f, STATEMENT_REVOCATION, 3, "mail", &f->provider, &f->stranger, &f->stranger,
	                       403, "wrong_signer");
	expect_statement_error(f, STATEMENT_HEALTH, 3, "mail", &f->provider, &f->provider, &f->other, 403,
	                       "wrong_signer");
	/* mix's provider is heard in mix. */
	post_statement(f, STATEMENT_HEALTH, 1, "mix", &f->other, &f->other, &f->other, &r);
	ck_assert_msg(r.status == 202, "health in mix: %ld %s", r.status,
	              r.body.data ? (const char *)r.body.data : "");
	/* The statement is read back with the capability, never for a shared cache, and is hidden
	 * without it. */
	const char *digest = strstr((const char *)r.body.data, "\"sha256\":\"");
	ck_assert_ptr_nonnull(digest);
	char path[128], absent[128];
	snprintf(path, sizeof path, "/v1/mix/statements/%.64s", digest + 10);
	unknown_path(path, absent, sizeof absent);
	response_free(&r);
	const char *const capability[] = {AUTHORIZATION, NULL};
	struct response kept, hidden, in_xim;
	request(f, "GET", path, NULL, 0, 0, capability, &kept);
	ck_assert_int_eq(kept.status, 200);
	ck_assert_str_eq(header(&kept, "Cache-Control"), "private, max-age=31536000, immutable");
	request(f, "GET", path, NULL, 0, 0, NULL, &hidden);
	request(f, "GET", absent, NULL, 0, 0, NULL, &in_xim);
	expect_same(&hidden, &in_xim, path);
	response_free(&kept);
	response_free(&hidden);
	response_free(&in_xim);
	post_statement(f, STATEMENT_REVOCATION, 1, "mix", &f->other, &f->other, &f->other, &r);
	ck_assert_msg(r.status == 202, "revocation in mix: %ld %s", r.status,
	              r.body.data ? (const char *)r.body.data : "");
	response_free(&r);
	close_private(&p);
}
END_TEST

/* A provider whose enrolment for a namespace ends may not deregister its services there: in a
 * public namespace it is told so; in a private one it is told nothing more than a stranger. */
START_TEST(test_deregistration_needs_enrolment)
{
	struct private_fixture p;
	struct fixture *f = &p.f;
	struct response r;
	open_private_with(&p, true);
	ck_assert_int_eq(post_registration(f, 2, "vpn", &f->other, &f->other, NULL, &r), 202);
	response_free(&r);
	ck_assert_int_eq(post_registration(f, 3, "mail", &f->provider, &f->provider, NULL, &r), 202);
	response_free(&r);
	reenrol(&p, "[mix]", "[mix]");
	expect_statement_hidden(f, STATEMENT_DEREGISTRATION, 2, "vpn", &f->other, &f->other, &f->other);
	expect_statement_error(f, STATEMENT_DEREGISTRATION, 3, "mail", &f->provider, &f->provider,
	                       &f->provider, 403, "namespace_not_allowed");
	/* Enrolled again, each is heard: vpn takes no statements, mail takes the deregistration. */
	reenrol(&p, NULL, NULL);
	expect_statement_error(f, STATEMENT_DEREGISTRATION, 2, "vpn", &f->other, &f->other, &f->other, 404,
	                       "lifecycle_disabled");
	post_statement(f, STATEMENT_DEREGISTRATION, 3, "mail", &f->provider, &f->provider, &f->provider, &r);
	ck_assert_msg(r.status == 202, "deregistration in mail: %ld %s", r.status,
	              r.body.data ? (const char *)r.body.data : "");
	response_free(&r);
	close_private(&p);
}
END_TEST

/* Posts a registration of index in mail by provider whose first endpoint id is that of index
 * endpoint_of (0: its own). */
static void post_taking(struct fixture *f, unsigned index, unsigned endpoint_of, struct response *out)
{
	struct registration r, donor;
	struct buffer note;
	make_registration(f, index, "mail", &f->provider, &r);
	if (endpoint_of) {
		make_registration(f, endpoint_of, "mail", &f->provider, &donor);
		memcpy(r.endpoints[0].endpoint_id, donor.endpoints[0].endpoint_id, ENDPOINT_ID_SIZE);
		registration_clear(&donor);
		registration_sort_endpoints(&r);
	}
	sign(&r, &f->provider, &note);
	post(f, &note, out);
	buffer_free(&note);
	registration_clear(&r);
}

START_TEST(test_no_route_across_namespaces)
{
	struct private_fixture p;
	struct fixture *f = &p.f;
	open_private(&p);
	publish_both(&p);
	struct response r;
	/* A service of mail's third provider, next to mix's service 1 (other's). */
	ck_assert_int_eq(post_registration(f, 3, "mail", &p.third, &p.third, NULL, &r), 202);
	response_free(&r);

	/* Reads: mail's routes never answer with what mix holds. */
	struct registration in_mix;
	char path[200], absent[200], service[65];
	make_registration(f, 1, "mix", &f->other, &in_mix);
	hex_encode(in_mix.service_id, 32, service);
	snprintf(path, sizeof path, "/v1/mail/registrations/%s/1", service);
	memset(service, 'a', 64);
	snprintf(absent, sizeof absent, "/v1/mail/registrations/%s/1", service);
	struct response held_elsewhere, never_held;
	request(f, "GET", path, NULL, 0, 0, NULL, &held_elsewhere);
	request(f, "GET", absent, NULL, 0, 0, NULL, &never_held);
	expect_error(&held_elsewhere, 404, "not_found");
	expect_same(&held_elsewhere, &never_held, path);
	response_free(&held_elsewhere);
	response_free(&never_held);
	const char *const capability[] = {AUTHORIZATION, NULL};
	request(f, "GET", path, NULL, 0, 0, capability, &held_elsewhere);
	expect_error(&held_elsewhere, 404, "not_found");
	response_free(&held_elsewhere);
	const char *const identity[] = {"Accept-Encoding: identity", NULL};
	request(f, "GET", "/v1/mail/snapshots/11/body", NULL, 0, 0, identity, &r);
	ck_assert_int_eq(r.status, 200);
	hex_encode(in_mix.service_id, 32, service);
	ck_assert(!contains(&r.body, service));
	ck_assert(!contains(&r.body, "dirauth.example/mix"));
	response_free(&r);
	registration_clear(&in_mix);

	/* Writes: an id taken in private mix is refused in mail with the very answer of an id taken
	 * by another provider of mail. */
	struct response taken_in_mix, taken_in_mail;
	post_taking(f, 1, 0, &taken_in_mix);  /* service 1 is other's, in mix */
	post_taking(f, 3, 0, &taken_in_mail); /* service 3 is third's, in mail */
	expect_error(&taken_in_mix, 409, "service_collision");
	expect_same(&taken_in_mix, &taken_in_mail, "service collision");
	ck_assert_ptr_null(strstr((const char *)taken_in_mix.body.data, "mix"));
	response_free(&taken_in_mix);
	response_free(&taken_in_mail);
	post_taking(f, 20, 1, &taken_in_mix);  /* an endpoint of mix's service 1 */
	post_taking(f, 21, 3, &taken_in_mail); /* an endpoint of mail's service 3 */
	expect_error(&taken_in_mix, 409, "endpoint_collision");
	expect_same(&taken_in_mix, &taken_in_mail, "endpoint collision");
	response_free(&taken_in_mix);
	response_free(&taken_in_mail);
	close_private(&p);
}
END_TEST

START_TEST(test_metrics_name_no_private_namespace)
{
	struct private_fixture p;
	struct fixture *f = &p.f;
	open_private(&p);
	publish_both(&p);
	const char *const capability[] = {AUTHORIZATION, NULL};
	for (int with = 0; with < 2; with++) {
		struct response r;
		request(f, "GET", "/v1/metrics", NULL, 0, 0, with ? capability : NULL, &r);
		ck_assert_int_eq(r.status, 200);
		const char *text = (const char *)r.body.data;
		ck_assert_ptr_nonnull(strstr(text, "dirauth_namespace_records{namespace=\"mail\"} 1\n"));
		ck_assert_ptr_nonnull(
		    strstr(text, "dirauth_namespace_latest_epoch{namespace=\"mail\"} 11\n"));
		ck_assert_msg(strstr(text, "mix") == NULL, "the metrics name mix:\n%s", text);
		/* Its traffic is in the totals, which name nothing. */
		ck_assert_ptr_nonnull(strstr(text, "dirauth_store_submissions_total 2\n"));
		response_free(&r);
	}
	char *log = read_log(f);
	ck_assert_ptr_null(strstr(log, SECRET));
	free(log);
	close_private(&p);
}
END_TEST

/* ---- the configuration ---- */

static int parse_namespaces(const char *namespaces, struct settings_error *error)
{
	char text[2048];
	snprintf(text, sizeof text,
	         "authority: { name: a.example, signer_socket: s.sock }\n"
	         "listen: { address: 127.0.0.1, port: 8080 }\n"
	         "data_dir: data\n"
	         "epoch: { length_seconds: 60, genesis: 0, validity_epochs: 3 }\n"
	         "namespaces:\n%s"
	         "providers: []\n",
	         namespaces);
	struct config *config = NULL;
	int rc = config_parse((const uint8_t *)text, strlen(text), "/tmp", &config, error);
	config_free(config);
	return rc;
}

START_TEST(test_config_keys)
{
	struct settings_error error;
	char hex[65], line[512];
	secret_digest_hex(SECRET, hex);
	snprintf(line, sizeof line,
	         "  - { name: mix, origin: o/mix, private: true, capability_sha256: %s }\n", hex);
	ck_assert_int_eq(parse_namespaces(line, &error), 0);
	ck_assert_int_eq(parse_namespaces("  - { name: mix, origin: o/mix, private: true }\n", &error),
	                 DIRAUTH_ERR_CONFIG);
	ck_assert_ptr_nonnull(strstr(error.message, "needs capability_sha256"));
	ck_assert_uint_eq(error.line, 6);
	ck_assert_int_eq(parse_namespaces("  - { name: mix, origin: o/mix, private: yes }\n", &error),
	                 DIRAUTH_ERR_CONFIG);
	ck_assert_ptr_nonnull(strstr(error.message, "true or false"));
	for (size_t i = 0; i < 64; i++)
		hex[i] = hex[i] >= 'a' ? (char)(hex[i] - 'a' + 'A') : hex[i];
	snprintf(line, sizeof line,
	         "  - { name: mix, origin: o/mix, private: true, capability_sha256: %s }\n", hex);
	ck_assert_int_eq(parse_namespaces(line, &error), DIRAUTH_ERR_CONFIG);
	ck_assert_ptr_nonnull(strstr(error.message, "lower-case hex"));
	ck_assert_int_eq(
	    parse_namespaces("  - { name: mix, origin: o/mix, capability_sha256: 00 }\n", &error),
	    DIRAUTH_ERR_CONFIG);
	ck_assert_ptr_nonnull(strstr(error.message, "for a private namespace"));
	ck_assert_int_eq(
	    parse_namespaces("  - { name: mix, origin: o/mix, private: true, capability_sha256: 00 }\n",
	                     &error),
	    DIRAUTH_ERR_CONFIG);
}
END_TEST

/* Writes dir/dirauthd.yaml with a private namespace whose capability_file is file (NULL: none)
 * and n authorities, then loads it. */
static int load_with(const char *dir, const char *file, const char *digest_of, int several,
                     struct config **out, struct settings_error *error)
{
	char hex[65], text[4096], path[700], members[2048] = "";
	struct test_key one, two;
	secret_digest_hex(digest_of, hex);
	if (several) {
		test_key_load(TEST_KEY_AUTHORITY_1, &one);
		test_key_load(TEST_KEY_AUTHORITY_2, &two);
		snprintf(
		    members, sizeof members,
		    "authorities:\n  threshold: 2\n  members:\n"
		    "    - { name: authority-1.example, identity: \"%s\", url: \"http://127.0.0.1:1\" }\n",
		    test_key_verifier_string(&one));
		size_t len = strlen(members);
		snprintf(
		    members + len, sizeof members - len,
		    "    - { name: authority-2.example, identity: \"%s\", url: \"http://127.0.0.1:2\" }\n",
		    test_key_verifier_string(&two));
		test_key_free(&one);
		test_key_free(&two);
	}
	char file_line[800] = "";
	if (file)
		snprintf(file_line, sizeof file_line, ", capability_file: %s", file);
	snprintf(text, sizeof text,
	         "authority: { name: %s, signer_socket: s.sock }\n"
	         "listen: { address: 127.0.0.1, port: 8080 }\n"
	         "data_dir: data\n"
	         "epoch: { length_seconds: 60, genesis: 0, validity_epochs: 3 }\n"
	         "namespaces:\n"
	         "  - { name: mix, origin: o/mix, private: true, capability_sha256: %s%s }\n"
	         "providers: []\n%s",
	         several ? "authority-1.example" : "a.example", hex, file_line, members);
	snprintf(path, sizeof path, "%s/dirauthd.yaml", dir);
	test_write_file(path, text, strlen(text), 0644);
	return config_load(path, out, error);
}

START_TEST(test_config_capability_file)
{
	char dir[512], secret_path[700], link_path[700];
	struct config *config = NULL;
	struct settings_error error;
	test_make_tempdir(dir, sizeof dir);
	snprintf(secret_path, sizeof secret_path, "%s/mix.capability", dir);
	test_write_file(secret_path, SECRET "\n", strlen(SECRET) + 1, 0600);

	/* Read, checked against the digest, kept for the peers. */
	ck_assert_int_eq(load_with(dir, "mix.capability", SECRET, 1, &config, &error), 0);
	ck_assert_str_eq(config->capabilities[0].secret, SECRET);
	ck_assert_uint_eq(config->capabilities[0].secret_len, strlen(SECRET));
	config_free(config);
	/* Alone, the file may be left out; with several authorities it may not. */
	ck_assert_int_eq(load_with(dir, NULL, SECRET, 0, &config, &error), 0);
	ck_assert_str_eq(config->capabilities[0].secret, "");
	config_free(config);
	ck_assert_int_eq(load_with(dir, NULL, SECRET, 1, &config, &error), DIRAUTH_ERR_CONFIG);
	ck_assert_ptr_null(config);
	ck_assert_ptr_nonnull(strstr(error.message, "needs capability_file"));
	ck_assert_uint_eq(error.line, 6);
	/* Another secret's digest. */
	ck_assert_int_eq(load_with(dir, "mix.capability", WRONG_SECRET, 1, &config, &error),
	                 DIRAUTH_ERR_CONFIG);
	ck_assert_ptr_nonnull(strstr(error.message, "is not the namespace's capability_sha256"));
	ck_assert_uint_eq(error.line, 6);
	/* Readable by others, a symbolic link, missing, not one secret. */
	ck_assert_int_eq(chmod(secret_path, 0640), 0);
	ck_assert_int_eq(load_with(dir, "mix.capability", SECRET, 1, &config, &error), DIRAUTH_ERR_CONFIG);
	ck_assert_ptr_nonnull(strstr(error.message, "group or others"));
	ck_assert_int_eq(chmod(secret_path, 0600), 0);
	snprintf(link_path, sizeof link_path, "%s/link.capability", dir);
	ck_assert_int_eq(symlink(secret_path, link_path), 0);
	ck_assert_int_eq(load_with(dir, "link.capability", SECRET, 1, &config, &error), DIRAUTH_ERR_CONFIG);
	ck_assert_ptr_nonnull(strstr(error.message, "symbolic link"));
	ck_assert_int_eq(load_with(dir, "none.capability", SECRET, 1, &config, &error), DIRAUTH_ERR_CONFIG);
	test_write_file(secret_path, "short\n", 6, 0600);
	ck_assert_int_eq(load_with(dir, "mix.capability", "short", 1, &config, &error), DIRAUTH_ERR_CONFIG);
	ck_assert_ptr_nonnull(strstr(error.message, "must hold one secret"));
	test_write_file(secret_path, SECRET "\n\n", strlen(SECRET) + 2, 0600);
	ck_assert_int_eq(load_with(dir, "mix.capability", SECRET, 1, &config, &error), DIRAUTH_ERR_CONFIG);
	test_remove_tree(dir);
}
END_TEST

/* ---- the Authorization header ---- */

START_TEST(test_bearer_parse)
{
	const char *token = NULL;
	size_t len = 0;
	ck_assert_int_eq(http_access_bearer("Bearer abc", &token, &len), 0);
	ck_assert_uint_eq(len, 3);
	ck_assert_int_eq(memcmp(token, "abc", 3), 0);
	ck_assert_int_eq(http_access_bearer("bEaReR    a+b/c=", &token, &len), 0);
	ck_assert_uint_eq(len, 6);
	ck_assert_int_eq(memcmp(token, "a+b/c=", 6), 0);
	const char *const refused[] = {
	    "",           "Bearer",      "Bearer ",      "Bearer  ",     "Bearerabc",   "Basic abc",
	    "Bearer a b", "Bearer a\tb", "Bearer a\x01", "Bearer a\x7f", "Bearer\tabc", " Bearer abc"};
	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
		ck_assert_msg(http_access_bearer(refused[i], &token, &len) == -1, "'%s'", refused[i]);
	ck_assert_int_eq(http_access_bearer(NULL, &token, &len), -1);
	char *long_value = malloc(HTTP_ACCESS_VALUE_MAX + 2);
	memcpy(long_value, "Bearer ", 7);
	memset(long_value + 7, 'a', HTTP_ACCESS_VALUE_MAX + 1 - 7);
	long_value[HTTP_ACCESS_VALUE_MAX + 1] = 0;
	ck_assert_int_eq(http_access_bearer(long_value, &token, &len), -1);
	long_value[HTTP_ACCESS_VALUE_MAX] = 0;
	ck_assert_int_eq(http_access_bearer(long_value, &token, &len), 0);
	free(long_value);
}
END_TEST

START_TEST(test_access_namespace)
{
	struct config *config = calloc(1, sizeof *config);
	config->namespace_count = 2;
	strcpy(config->namespaces[0].name, "mix");
	strcpy(config->namespaces[1].name, "mail");
	config->capabilities[0].is_private = 1;
	ck_assert_int_eq(
	    crypto_sha256((const uint8_t *)SECRET, strlen(SECRET), config->capabilities[0].sha256), 0);
	ck_assert_int_eq(http_access_namespace(config, "mix", 3, "Bearer " SECRET), 0);
	ck_assert_int_eq(http_access_namespace(config, "mix", 3, "bearer " SECRET), 0);
	ck_assert_int_eq(http_access_namespace(config, "mix", 3, NULL), -1);
	ck_assert_int_eq(http_access_namespace(config, "mix", 3, "Bearer " WRONG_SECRET), -1);
	ck_assert_int_eq(http_access_namespace(config, "mix", 3, "Bearer " SECRET "a"), -1);
	ck_assert_int_eq(http_access_namespace(config, "mix", 3, "Basic " SECRET), -1);
	ck_assert_int_eq(http_access_namespace(config, "mi", 2, "Bearer " SECRET), -1);
	ck_assert_int_eq(http_access_namespace(config, "mixx", 4, "Bearer " SECRET), -1);
	ck_assert_int_eq(http_access_namespace(config, "mail", 4, NULL), 1);
	ck_assert_int_eq(http_access_namespace(config, "mail", 4, "Bearer " WRONG_SECRET), 1);
	ck_assert_int_eq(http_access_namespace(config, "mail", 4, "Bearer " SECRET), 1);
	ck_assert_int_eq(http_access_namespace(config, "xim", 3, "Bearer " SECRET), -1);
	char long_name[200];
	memset(long_name, 'm', sizeof long_name);
	ck_assert_int_eq(http_access_namespace(config, long_name, sizeof long_name, NULL), -1);
	/* A private namespace whose digest is of the empty string still needs a token. */
	ck_assert_int_eq(crypto_sha256((const uint8_t *)"", 0, config->capabilities[0].sha256), 0);
	ck_assert_int_eq(http_access_namespace(config, "mix", 3, NULL), -1);
	free(config);
}
END_TEST

/* ---- another authority's requests ---- */

START_TEST(test_peer_client_presents_the_capability)
{
	struct private_fixture p;
	struct fixture *f = &p.f;
	open_private(&p);
	publish_both(&p);
	char dir[512], path[700];
	test_make_tempdir(dir, sizeof dir);
	snprintf(path, sizeof path, "%s/mix.capability", dir);
	test_write_file(path, SECRET "\n", strlen(SECRET) + 1, 0600);
	/* authority-2's view: the fixture's server is authority-1, its peer. */
	struct config *config = NULL;
	struct settings_error error;
	ck_assert_msg(load_with(dir, "mix.capability", SECRET, 1, &config, &error) == 0, "%zu: %s",
	              error.line, error.message);
	snprintf(config->members[0].url, sizeof config->members[0].url, "http://127.0.0.1:%u", f->port);
	config->self_index = 1;
	struct peer_client *client = NULL;
	struct peer_answer answer;
	peer_answer_init(&answer);
	ck_assert_int_eq(peer_client_new(config, NULL, &client), 0);
	ck_assert_int_eq(peer_fetch_latest_header(client, 0, "mix", &answer), 0);
	ck_assert_int_eq(answer.status, 200);
	ck_assert_int_eq(peer_fetch_body(client, 0, "mix", 11, &answer), 0);
	ck_assert_int_eq(answer.status, 200);
	ck_assert_int_eq(peer_fetch_latest_header(client, 0, "mail", &answer), 0);
	ck_assert_int_eq(answer.status, 200);
	peer_client_free(client);
	/* Without the secret (the configuration parsed but its file not read), mix is not there. */
	config_capability_wipe(&config->capabilities[0]);
	ck_assert_int_eq(peer_client_new(config, NULL, &client), 0);
	ck_assert_int_eq(peer_fetch_latest_header(client, 0, "mix", &answer), 0);
	ck_assert_int_eq(answer.status, 404);
	ck_assert_str_eq(answer.error_code, "not_found");
	peer_client_free(client);
	peer_answer_free(&answer);
	config_free(config);
	test_remove_tree(dir);
	close_private(&p);
}
END_TEST

static Suite *private_suite(void)
{
	Suite *s = suite_create("private");
	TCase *http = tcase_create("http");
	tcase_set_timeout(http, 120);
	tcase_add_test(http, test_every_route_family);
	tcase_add_test(http, test_writes_only_where_enrolled);
	tcase_add_test(http, test_statements_only_where_shown);
	tcase_add_test(http, test_deregistration_needs_enrolment);
	tcase_add_test(http, test_no_route_across_namespaces);
	tcase_add_test(http, test_metrics_name_no_private_namespace);
	tcase_add_test(http, test_peer_client_presents_the_capability);
	suite_add_tcase(s, http);
	TCase *config = tcase_create("config");
	tcase_add_test(config, test_config_keys);
	tcase_add_test(config, test_config_capability_file);
	tcase_add_test(config, test_bearer_parse);
	tcase_add_test(config, test_access_namespace);
	suite_add_tcase(s, config);
	return s;
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	SRunner *runner = srunner_create(private_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	curl_global_cleanup();
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
