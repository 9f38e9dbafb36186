/*
 * check_http.c: the HTTP API over real loopback sockets, with libcurl as the client: a real
 * store, a real dirauth-signer on a UNIX socket in the test process (signer_fixture.h), real
 * signed registrations. Every refusal code is provoked and shown to change nothing; snapshots
 * are fetched in every encoding with their caching headers; with the signer down, reads go on,
 * readiness and registrations answer 503 and nothing is stored, and all recovers when it is
 * back.
 */
#define _DEFAULT_SOURCE /* realpath */
#include "http_fixture.h"
#include "schema/encoding.h"
#include "schema/headers_bundle.h"
#include "schema/notes_bundle.h"
#include "server/http/respond.h"
#include "server/store/snapshots.h"

/* Posts a new registration of service index by the provider in mix: r, note and response are the
 * caller's to check and free. */
static void post_new(struct fixture *f, unsigned index, struct registration *r, struct buffer *note,
                     struct response *response)
{
	make_registration(f, index, "mix", &f->provider, r);
	sign(r, &f->provider, note);
	post(f, note, response);
}

/* A new registration of service index by the provider in mix is accepted (202). */
static void post_accepted(struct fixture *f, unsigned index)
{
	struct registration r;
	struct buffer note;
	struct response response;
	post_new(f, index, &r, &note, &response);
	ck_assert_msg(response.status == 202, "%ld %s", response.status, response.body.data);
	response_free(&response);
	buffer_free(&note);
	registration_clear(&r);
}

/* An Accept-Encoding field that refuses every coding, then 1,500 more entries (static storage). */
static const char *refusal_then_entries(void)
{
	static char text[12 * 1024];
	size_t len = (size_t)snprintf(text, sizeof text, "Accept-Encoding: identity;q=0, *;q=0");
	for (int i = 0; i < 1500; i++)
		len += (size_t)snprintf(text + len, sizeof text - len, ", x-%d", i);
	ck_assert_uint_lt(len, sizeof text - 1);
	return text;
}

/* GET path with headers is 406 not_acceptable, varying with Accept-Encoding like every answer
 * of a negotiated path. */
static void expect_not_acceptable(struct fixture *f, const char *path, const char *const *headers)
{
	struct response response;
	request(f, "GET", path, NULL, 0, 0, headers, &response);
	expect_error(&response, 406, "not_acceptable");
	ck_assert_str_eq(header(&response, "Vary"), "Accept-Encoding");
	response_free(&response);
}

/* The clock reads now and the epoch it begins is published. */
static void publish_at(struct fixture *f, uint64_t now)
{
	write_clock(f, now);
	ck_assert_int_eq(epoch_scheduler_tick(f->scheduler), 0);
}

/* Posting note answers the error status and code. */
static void post_note_expect_error(struct fixture *f, const struct buffer *note, long status,
                                   const char *code)
{
	struct response response;
	post(f, note, &response);
	expect_error(&response, status, code);
	response_free(&response);
}

/* Opens f with service 1's registration accepted and published in epoch 11, the latest. */
static void open_with_epoch_11(struct fixture *f)
{
	fixture_open(f, 0);
	post_accepted(f, 1);
	publish_at(f, GENESIS + 11 * LENGTH);
}

/* method path, with no body and no extra headers, answers status. */
static void expect_status(struct fixture *f, const char *method, const char *path, long status)
{
	struct response response;
	request(f, method, path, NULL, 0, 0, NULL, &response);
	ck_assert_msg(response.status == status, "%s %s: %ld, expected %ld", method, path, response.status,
	              status);
	response_free(&response);
}

/* GET path, with no extra headers, answers the error status and code. */
static void get_expect_error(struct fixture *f, const char *path, long status, const char *code)
{
	struct response response;
	request(f, "GET", path, NULL, 0, 0, NULL, &response);
	expect_error(&response, status, code);
	response_free(&response);
}

/* GET /v1/ready answers 503 unavailable, saying why. */
static void expect_not_ready(struct fixture *f, const char *reason)
{
	struct response response;
	request(f, "GET", "/v1/ready", NULL, 0, 0, NULL, &response);
	expect_error(&response, 503, "unavailable");
	ck_assert_ptr_nonnull(strstr((const char *)response.body.data, reason));
	response_free(&response);
}

/* A new registration of service index is refused 503 unavailable, saying that nothing was stored,
 * and nothing is: r and note are left to the caller. */
static void post_not_stored(struct fixture *f, unsigned index, struct registration *r, struct buffer *note)
{
	struct response response;
	post_new(f, index, r, note, &response);
	expect_error(&response, 503, "unavailable");
	ck_assert_ptr_nonnull(strstr((const char *)response.body.data, "Nothing was stored"));
	response_free(&response);
	ck_assert_uint_eq(sequence_of(f, r->service_id), 0);
}

START_TEST(test_accept_and_publish)
{
	struct fixture f;
	fixture_open(&f, 0);
	struct registration r;
	struct buffer note;
	struct response response;
	post_new(&f, 1, &r, &note, &response);
	ck_assert_msg(response.status == 202, "%ld %s", response.status, response.body.data);
	ck_assert_str_eq(header(&response, "Content-Type"), "text/plain; charset=utf-8");

	/* The receipt: signed by the authority, naming exactly what was accepted. */
	struct note *receipt_note = NULL;
	ck_assert_int_eq(note_parse(response.body.data, response.body.len, &receipt_note), 0);
	ck_assert_int_eq(note_verify_threshold(receipt_note, &f.signer_process.signing, 1, 1), 0);
	struct receipt receipt;
	ck_assert_int_eq(receipt_parse(receipt_note->text, receipt_note->text_len, &receipt), 0);
	ck_assert_str_eq(receipt.authority, "authority1.dirauth.example");
	ck_assert_str_eq(receipt.namespace_name, "mix");
	ck_assert_mem_eq(receipt.service_id, r.service_id, 32);
	ck_assert_uint_eq(receipt.sequence, 1);
	uint8_t digest[32];
	ck_assert_int_eq(crypto_sha256(note.data, note.len, digest), 0);
	ck_assert_mem_eq(receipt.registration_digest, digest, 32);
	ck_assert_uint_eq(receipt.accepted_at, f.now);
	ck_assert_uint_eq(receipt.publish_by_epoch, 11);
	ck_assert_uint_eq(sequence_of(&f, r.service_id), 1);
	note_free(receipt_note);
	response_free(&response);

	/* Nothing published yet. */
	get_expect_error(&f, "/v1/mix/snapshots/latest", 404, "not_found");

	/* The promised epoch holds it. */
	publish_at(&f, GENESIS + 11 * LENGTH);
	request(&f, "GET", "/v1/mix/snapshots/latest", NULL, 0, 0, NULL, &response);
	ck_assert_int_eq(response.status, 200);
	ck_assert_str_eq(header(&response, "Content-Type"), "text/plain; charset=utf-8");
	ck_assert_str_eq(header(&response, "Cache-Control"), "public, max-age=60");
	struct note *header_note = NULL;
	struct snapshot_header h;
	ck_assert_int_eq(note_parse(response.body.data, response.body.len, &header_note), 0);
	ck_assert_int_eq(note_verify_threshold(header_note, &f.signer_process.signing, 1, 1), 0);
	ck_assert_int_eq(snapshot_header_parse(header_note->text, header_note->text_len, &h), 0);
	ck_assert_uint_eq(h.epoch, 11);
	ck_assert_uint_eq(h.record_count, 1);
	note_free(header_note);
	response_free(&response);

	/* The body in every encoding verifies against the header. */
	const char *accept[ENCODING_COUNT] = {"Accept-Encoding: identity", "Accept-Encoding: gzip",
	                                      "Accept-Encoding: zstd, gzip"};
	for (int e = 0; e < ENCODING_COUNT; e++) {
		const char *headers[] = {accept[e], NULL};
		request(&f, "GET", "/v1/mix/snapshots/11/body", NULL, 0, 0, headers, &response);
		ck_assert_int_eq(response.status, 200);
		const char *encoding = header(&response, "Content-Encoding");
		if (e == ENCODING_IDENTITY)
			ck_assert_ptr_null(encoding);
		else
			ck_assert_str_eq(encoding, content_encoding_name((enum content_encoding)e));
		ck_assert_str_eq(header(&response, "Vary"), "Accept-Encoding");
		struct buffer body;
		buffer_init(&body);
		ck_assert_int_eq(compress_decode((enum content_encoding)e, response.body.data,
		                                 response.body.len, 1 << 20, &body),
		                 0);
		ck_assert_int_eq(snapshot_body_verify(&h, body.data, body.len, 10), 0);
		buffer_free(&body);
		response_free(&response);
	}
	buffer_free(&note);
	registration_clear(&r);
	fixture_close(&f);
}
END_TEST

START_TEST(test_refusals_change_nothing)
{
	struct fixture f;
	fixture_open(&f, 0);
	struct registration r;
	struct buffer note, other_note;
	struct response response;

	/* Accepted first, so that later refusals have something to collide and roll back with. */
	make_registration(&f, 1, "mix", &f.provider, &r);
	r.sequence = 2;
	sign(&r, &f.provider, &note);
	post(&f, &note, &response);
	ck_assert_int_eq(response.status, 202);
	response_free(&response);
	buffer_free(&note);

	/* 409 rollback: the same sequence again, and a lower one. */
	post_expect(&f, &r, &f.provider, 409, "rollback");
	r.sequence = 1;
	post_expect(&f, &r, &f.provider, 409, "rollback");
	registration_clear(&r);

	/* 409 service_collision: another enrolled provider claims the service id. */
	make_registration(&f, 1, "mix", &f.other, &r);
	r.sequence = 3;
	post_expect(&f, &r, &f.other, 409, "service_collision");
	registration_clear(&r);

	/* 409 endpoint_collision: a new service reusing service 1's endpoints. */
	struct registration first;
	make_registration(&f, 1, "mix", &f.provider, &first);
	make_registration(&f, 5, "mix", &f.provider, &r);
	memcpy(r.endpoints, first.endpoints, first.endpoint_count * sizeof *r.endpoints);
	post_expect(&f, &r, &f.provider, 409, "endpoint_collision");
	ck_assert_uint_eq(sequence_of(&f, r.service_id), 0);
	registration_clear(&r);
	registration_clear(&first);

	/* 404 unknown_namespace, 403 unknown_provider, 403 namespace_not_allowed, 403
	 * class_not_allowed. */
	make_registration(&f, 6, "nowhere", &f.provider, &r);
	post_expect(&f, &r, &f.provider, 404, "unknown_namespace");
	registration_clear(&r);
	make_registration(&f, 6, "mix", &f.stranger, &r);
	post_expect(&f, &r, &f.stranger, 403, "unknown_provider");
	registration_clear(&r);
	make_registration(&f, 6, "mail", &f.provider, &r);
	post_expect(&f, &r, &f.provider, 403, "namespace_not_allowed");
	registration_clear(&r);
	make_registration(&f, 6, "mix", &f.provider, &r);
	r.service_class = SERVICE_CLASS_BRIDGE;
	post_expect(&f, &r, &f.provider, 403, "class_not_allowed");
	registration_clear(&r);

	/* 403 bad_signature: signed by someone other than the named provider, and a signature by
	 * the named provider over other text. */
	make_registration(&f, 6, "mix", &f.provider, &r);
	post_expect(&f, &r, &f.other, 403, "bad_signature");
	sign(&r, &f.provider, &note);
	r.sequence = 9;
	sign(&r, &f.provider, &other_note);
	const char *signatures = strstr((const char *)other_note.data, "\n\n");
	const char *own = strstr((const char *)note.data, "\n\n");
	ck_assert_ptr_nonnull(signatures);
	ck_assert_ptr_nonnull(own);
	struct buffer spliced;
	buffer_init(&spliced);
	ck_assert_int_eq(buffer_append(&spliced, note.data, (size_t)(own - (const char *)note.data)), 0);
	ck_assert_int_eq(buffer_append_string(&spliced, signatures), 0);
	post_note_expect_error(&f, &spliced, 403, "bad_signature");
	buffer_free(&spliced);
	buffer_free(&note);
	buffer_free(&other_note);
	registration_clear(&r);

	/* 413 too_many_endpoints: four, where three are allowed. */
	make_registration(&f, 6, "mix", &f.provider, &r);
	struct endpoint_descriptor *more = realloc(r.endpoints, 4 * sizeof *more);
	ck_assert_ptr_nonnull(more);
	r.endpoints = more;
	r.endpoints[3] = r.endpoints[2];
	memset(r.endpoints[3].endpoint_id, 0xff, ENDPOINT_ID_SIZE);
	r.endpoint_count = 4;
	post_expect(&f, &r, &f.provider, 413, "too_many_endpoints");
	registration_clear(&r);

	/* 422: validity too long, expired, issued in the future. */
	make_registration(&f, 6, "mix", &f.provider, &r);
	r.expires = r.issued_at + 86401;
	post_expect(&f, &r, &f.provider, 422, "validity_too_long");
	r.issued_at = f.now - 100;
	r.expires = f.now;
	post_expect(&f, &r, &f.provider, 422, "expired");
	r.issued_at = f.now + 301;
	r.expires = f.now + 3000;
	post_expect(&f, &r, &f.provider, 422, "issued_in_future");
	r.issued_at = f.now + 300; /* within the skew: accepted */
	sign(&r, &f.provider, &note);
	post(&f, &note, &response);
	ck_assert_int_eq(response.status, 202);
	response_free(&response);
	buffer_free(&note);
	registration_clear(&r);

	/* 400 malformed: not a note; a note whose text is not a registration. */
	struct buffer junk;
	buffer_init(&junk);
	ck_assert_int_eq(buffer_append_string(&junk, "hello\n"), 0);
	post_note_expect_error(&f, &junk, 400, "malformed");
	buffer_reset(&junk);
	test_key_sign_note(&f.provider, 1, (const uint8_t *)"hello\n", 6, &junk);
	post_note_expect_error(&f, &junk, 400, "malformed");

	/* 413 body_too_large: by Content-Length, and by counting a chunked upload. */
	buffer_reset(&junk);
	for (int i = 0; i < BODY_CAP + 1; i++)
		ck_assert_int_eq(buffer_append(&junk, "a", 1), 0);
	post_note_expect_error(&f, &junk, 413, "body_too_large");
	request(&f, "POST", "/v1/registrations", NULL, 0, 3 * BODY_CAP, NULL, &response);
	expect_error(&response, 413, "body_too_large");
	response_free(&response);
	/* An endless chunked upload is cut off: the connection is closed, nothing is answered 2xx. */
	CURLcode cut =
	    request_raw(&f, "POST", "/v1/registrations", NULL, 0, 64 * 1024 * 1024, NULL, &response);
	ck_assert_msg(cut != CURLE_OK || response.status == 413, "%d %ld", (int)cut, response.status);
	response_free(&response);
	/* A chunked upload within the cap is read whole (and is then malformed). */
	request(&f, "POST", "/v1/registrations", NULL, 0, BODY_CAP, NULL, &response);
	expect_error(&response, 400, "malformed");
	response_free(&response);
	buffer_free(&junk);

	/* 503 unavailable: the clock cannot be read. */
	char clock_path[900];
	snprintf(clock_path, sizeof clock_path, "%s/clock", f.dir);
	ck_assert_int_eq(unlink(clock_path), 0);
	make_registration(&f, 7, "mix", &f.provider, &r);
	post_expect(&f, &r, &f.provider, 503, "unavailable");
	get_expect_error(&f, "/v1/ready", 503, "unavailable");
	get_expect_error(&f, "/v1/status", 503, "unavailable");
	registration_clear(&r);
	write_clock(&f, f.now);
	expect_status(&f, "GET", "/v1/ready", 200);

	/* Only the two accepted registrations changed anything. */
	unsigned indexes[] = {1, 5, 6, 7};
	uint64_t expected[] = {2, 0, 1, 0};
	for (size_t i = 0; i < 4; i++) {
		test_example_registration(indexes[i], "mix", &f.provider, &r);
		ck_assert_uint_eq(sequence_of(&f, r.service_id), expected[i]);
		registration_clear(&r);
	}
	publish_at(&f, GENESIS + 11 * LENGTH);
	struct prepared_snapshot *s = NULL;
	ck_assert_int_eq(prepared_set_latest(f.prepared, 0, &s), 0);
	struct note *header_note = NULL;
	struct snapshot_header h;
	size_t note_len = 0;
	const uint8_t *note_bytes = prepared_snapshot_header_note(s, &note_len);
	ck_assert_int_eq(note_parse(note_bytes, note_len, &header_note), 0);
	ck_assert_int_eq(snapshot_header_parse(header_note->text, header_note->text_len, &h), 0);
	ck_assert_uint_eq(h.record_count, 2);
	note_free(header_note);
	prepared_snapshot_release(s);
	fixture_close(&f);
}
END_TEST

START_TEST(test_body_larger_than_the_connection_pool)
{
	/* libmicrohttpd reads a body through the connection's memory pool in pieces: a registration
	 * body four times the smallest pool is read whole, by Content-Length and chunked alike, and a
	 * real registration after it on the same kind of connection is taken. */
	enum { POOL = 16384, CAP = 65536, LARGE = 4 * POOL };
	struct fixture f;
	fixture_open_bounded(&f, 0, CAP, "http: { threads: 2, connection_memory_limit: 16384 }");
	struct buffer junk;
	struct response response;
	buffer_init(&junk);
	for (int i = 0; i < LARGE; i++)
		ck_assert_int_eq(buffer_append(&junk, "a", 1), 0);
	post_note_expect_error(&f, &junk, 400, "malformed");
	request(&f, "POST", "/v1/registrations", NULL, 0, LARGE, NULL, &response);
	expect_error(&response, 400, "malformed");
	response_free(&response);
	buffer_free(&junk);
	post_accepted(&f, 1);
	fixture_close(&f);
}
END_TEST

START_TEST(test_store_full)
{
	struct fixture f;
	fixture_open(&f, 256 * 1024);
	struct registration r;
	struct buffer note;
	struct response response;
	long status = 202;
	unsigned index;
	for (index = 1; index < 2000 && status == 202; index++) {
		post_new(&f, index, &r, &note, &response);
		status = response.status;
		if (status != 202)
			expect_error(&response, 507, "store_full");
		response_free(&response);
		buffer_free(&note);
		if (status == 202)
			registration_clear(&r);
	}
	ck_assert_int_eq(status, 507);
	ck_assert_uint_eq(sequence_of(&f, r.service_id), 0);
	registration_clear(&r);
	fixture_close(&f);
}
END_TEST

/* An authority alone takes no votes or signatures; any authority serves a registration note by
 * service and sequence, as a peer fetching what a vote listed asks for it. */
START_TEST(test_routes_between_authorities)
{
	struct fixture f;
	fixture_open(&f, 0);
	struct registration r;
	struct buffer note;
	struct response response;
	post_new(&f, 1, &r, &note, &response);
	ck_assert_int_eq(response.status, 202);
	response_free(&response);

	char hex[2 * SERVICE_ID_SIZE + 1], path[256];
	hex_encode(r.service_id, SERVICE_ID_SIZE, hex);
	snprintf(path, sizeof path, "/v1/mix/registrations/%s/1", hex);
	request(&f, "GET", path, NULL, 0, 0, NULL, &response);
	ck_assert_int_eq(response.status, 200);
	ck_assert_uint_eq(response.body.len, note.len);
	ck_assert_mem_eq(response.body.data, note.data, note.len);
	response_free(&response);
	/* Another sequence, another namespace, a malformed id or sequence: 404, nothing else. */
	char paths[4][256];
	snprintf(paths[0], sizeof paths[0], "/v1/mix/registrations/%s/2", hex);
	snprintf(paths[1], sizeof paths[1], "/v1/mail/registrations/%s/1", hex);
	snprintf(paths[2], sizeof paths[2], "/v1/mix/registrations/%s/01", hex);
	snprintf(paths[3], sizeof paths[3], "/v1/mix/registrations/%.63s/1", hex);
	for (size_t i = 0; i < 4; i++)
		get_expect_error(&f, paths[i], 404, "not_found");

	const uint8_t vote[] = "not a vote";
	request(&f, "POST", "/v1/mix/votes", vote, sizeof vote - 1, 0, NULL, &response);
	expect_error(&response, 404, "not_found");
	response_free(&response);
	request(&f, "POST", "/v1/mix/signatures", vote, sizeof vote - 1, 0, NULL, &response);
	expect_error(&response, 404, "not_found");
	response_free(&response);
	get_expect_error(&f, "/v1/mix/votes/11/authority1.dirauth.example", 404, "not_found");
	get_expect_error(&f, "/v1/mix/signatures/11", 404, "not_found");
	get_expect_error(&f, "/v1/mix/evidence", 404, "not_found");
	get_expect_error(&f, "/v1/mix/votes", 405, "method_not_allowed");
	buffer_free(&note);
	registration_clear(&r);
	fixture_close(&f);
}
END_TEST

START_TEST(test_routes)
{
	struct fixture f;
	fixture_open(&f, 0);
	struct response response;
	request(&f, "GET", "/v1/health", NULL, 0, 0, NULL, &response);
	ck_assert_int_eq(response.status, 200);
	ck_assert_str_eq((const char *)response.body.data, "{\"status\":\"ok\"}");
	ck_assert_str_eq(header(&response, "Content-Type"), "application/json");
	response_free(&response);
	expect_status(&f, "GET", "/v1/ready", 200);
	/* The status: the authority's name and the time by its own (file) clock, read afresh. */
	char expected[256];
	const uint64_t base = f.now;
	for (uint64_t later = 0; later < 2; later++) {
		write_clock(&f, base + later * 1000);
		request(&f, "GET", "/v1/status", NULL, 0, 0, NULL, &response);
		ck_assert_int_eq(response.status, 200);
		snprintf(expected, sizeof expected, "{\"authority\":\"%s\",\"time\":%llu}",
		         f.config->authority_name, (unsigned long long)(base + later * 1000));
		ck_assert_str_eq((const char *)response.body.data, expected);
		ck_assert_str_eq(header(&response, "Content-Type"), "application/json");
		response_free(&response);
	}
	write_clock(&f, base);

	const char *not_found[] = {"/",
	                           "/v1",
	                           "/v1/",
	                           "/v2/health",
	                           "/v1/nowhere/snapshots/latest",
	                           "/v1/mix/snapshots/",
	                           "/v1/mix/snapshots/12",
	                           "/v1/mix/snapshots/012",
	                           "/v1/mix/snapshots/-1",
	                           "/v1/mix/snapshots/99999999999999999999999",
	                           "/v1/mix/snapshots/12/body",
	                           "/v1/mix/snapshots/12/other",
	                           "/v1/mix/snapshots/latest/body",
	                           "/v1/mix/other"};
	for (size_t i = 0; i < sizeof not_found / sizeof not_found[0]; i++)
		get_expect_error(&f, not_found[i], 404, "not_found");
	/* Errors on a body path vary with Accept-Encoding like its other answers; others do not. */
	const char *body_paths[] = {"/v1/mix/snapshots/12/body", "/v1/nowhere/snapshots/12/body",
	                            "/v1/mix/snapshots/012/body", "/v1/mix/snapshots/latest/body"};
	for (size_t i = 0; i < sizeof body_paths / sizeof body_paths[0]; i++) {
		request(&f, "GET", body_paths[i], NULL, 0, 0, NULL, &response);
		expect_error(&response, 404, "not_found");
		ck_assert_msg(header(&response, "Vary") &&
		                  strcmp(header(&response, "Vary"), "Accept-Encoding") == 0,
		              "%s", body_paths[i]);
		response_free(&response);
	}
	request(&f, "GET", "/v1/mix/snapshots/12", NULL, 0, 0, NULL, &response);
	expect_error(&response, 404, "not_found");
	ck_assert_ptr_null(header(&response, "Vary"));
	response_free(&response);

	/* 405 names the methods of its own path. */
	struct {
		const char *method, *path, *allow;
		int vary;
	} not_allowed[] = {
	    {"GET", "/v1/registrations", "POST", 0},
	    {"HEAD", "/v1/registrations", "POST", 0},
	    {"DELETE", "/v1/mix/snapshots/latest", "GET, HEAD", 0},
	    {"PUT", "/v1/mix/snapshots/12", "GET, HEAD", 0},
	    {"DELETE", "/v1/mix/snapshots/12/body", "GET, HEAD", 1},
	    {"POST", "/v1/health", "GET, HEAD", 0},
	    {"POST", "/v1/ready", "GET, HEAD", 0},
	    {"POST", "/v1/status", "GET, HEAD", 0},
	    {"POST", "/v1/certificates", "GET, HEAD", 0},
	};
	struct buffer body;
	buffer_init(&body);
	ck_assert_int_eq(buffer_append_string(&body, "x"), 0);
	for (size_t i = 0; i < sizeof not_allowed / sizeof not_allowed[0]; i++) {
		int post_body = strcmp(not_allowed[i].method, "POST") == 0;
		request(&f, not_allowed[i].method, not_allowed[i].path, post_body ? body.data : NULL,
		        post_body ? body.len : 0, 0, NULL, &response);
		ck_assert_msg(response.status == 405, "%s %s: %ld", not_allowed[i].method,
		              not_allowed[i].path, response.status);
		ck_assert_str_eq(header(&response, "Cache-Control"), "no-store");
		ck_assert_msg(header(&response, "Allow") &&
		                  strcmp(header(&response, "Allow"), not_allowed[i].allow) == 0,
		              "%s %s: Allow %s", not_allowed[i].method, not_allowed[i].path,
		              header(&response, "Allow") ? header(&response, "Allow") : "(none)");
		if (not_allowed[i].vary)
			ck_assert_str_eq(header(&response, "Vary"), "Accept-Encoding");
		else
			ck_assert_ptr_null(header(&response, "Vary"));
		if (strcmp(not_allowed[i].method, "HEAD") != 0)
			expect_error(&response, 405, "method_not_allowed");
		response_free(&response);
	}
	buffer_free(&body);
	fixture_close(&f);
}
END_TEST

START_TEST(test_caching_headers)
{
	struct fixture f;
	open_with_epoch_11(&f);
	struct response response;
	publish_at(&f, GENESIS + 12 * LENGTH + 20);

	/* Latest: max-age runs to fresh-until. A past epoch: immutable. */
	request(&f, "GET", "/v1/mix/snapshots/latest", NULL, 0, 0, NULL, &response);
	ck_assert_int_eq(response.status, 200);
	ck_assert_str_eq(header(&response, "Cache-Control"), "public, max-age=40");
	char etag[128];
	snprintf(etag, sizeof etag, "%s", header(&response, "ETag"));
	ck_assert_uint_eq(strlen(etag), 66);
	response_free(&response);
	request(&f, "GET", "/v1/mix/snapshots/12", NULL, 0, 0, NULL, &response);
	ck_assert_int_eq(response.status, 200);
	ck_assert_str_eq(header(&response, "ETag"), etag);
	ck_assert_str_eq(header(&response, "Cache-Control"), "public, max-age=31536000, immutable");
	response_free(&response);
	request(&f, "HEAD", "/v1/mix/snapshots/11", NULL, 0, 0, NULL, &response);
	ck_assert_int_eq(response.status, 200);
	ck_assert_str_ne(header(&response, "ETag"), etag);
	ck_assert_uint_eq(response.body.len, 0);
	response_free(&response);

	/* 304 on a matching If-None-Match, weak or in a list; 200 otherwise. */
	char if_none_match[600];
	const char *headers[] = {if_none_match, NULL};
	snprintf(if_none_match, sizeof if_none_match, "If-None-Match: %s", etag);
	request(&f, "GET", "/v1/mix/snapshots/latest", NULL, 0, 0, headers, &response);
	ck_assert_int_eq(response.status, 304);
	ck_assert_str_eq(header(&response, "ETag"), etag);
	ck_assert_str_eq(header(&response, "Cache-Control"), "public, max-age=40");
	response_free(&response);
	/* The latest header's max-age follows the clock, second by second, in the 200 and the 304
	 * alike, and is 0 once fresh-until has passed. */
	const uint64_t later[] = {GENESIS + 12 * LENGTH + 21, GENESIS + 12 * LENGTH + 59,
	                          GENESIS + 13 * LENGTH + 30};
	const char *expected[] = {"public, max-age=39", "public, max-age=1", "public, max-age=0"};
	for (size_t i = 0; i < 3; i++) {
		write_clock(&f, later[i]);
		for (int conditional = 0; conditional < 2; conditional++) {
			request(&f, "GET", "/v1/mix/snapshots/latest", NULL, 0, 0,
			        conditional ? headers : NULL, &response);
			ck_assert_int_eq(response.status, conditional ? 304 : 200);
			ck_assert_str_eq(header(&response, "Cache-Control"), expected[i]);
			ck_assert_str_eq(header(&response, "ETag"), etag);
			response_free(&response);
		}
	}
	snprintf(if_none_match, sizeof if_none_match, "If-None-Match: \"nope\", W/%s", etag);
	request(&f, "GET", "/v1/mix/snapshots/12", NULL, 0, 0, headers, &response);
	ck_assert_int_eq(response.status, 304);
	ck_assert_str_eq(header(&response, "Cache-Control"), "public, max-age=31536000, immutable");
	response_free(&response);
	snprintf(if_none_match, sizeof if_none_match, "If-None-Match: \"nope\"");
	request(&f, "GET", "/v1/mix/snapshots/12", NULL, 0, 0, headers, &response);
	ck_assert_int_eq(response.status, 200);
	response_free(&response);

	/* Bodies: one strong ETag per encoding, 304 only for the encoding it names. */
	char body_etag[ENCODING_COUNT][128];
	const char *accept[ENCODING_COUNT] = {"Accept-Encoding: gzip;q=0, zstd;q=0", "Accept-Encoding: gzip",
	                                      "Accept-Encoding: zstd"};
	for (int e = 0; e < ENCODING_COUNT; e++) {
		const char *accept_headers[] = {accept[e], NULL};
		request(&f, "GET", "/v1/mix/snapshots/12/body", NULL, 0, 0, accept_headers, &response);
		ck_assert_int_eq(response.status, 200);
		snprintf(body_etag[e], sizeof body_etag[e], "%s", header(&response, "ETag"));
		ck_assert_ptr_nonnull(strstr(body_etag[e], content_encoding_name((enum content_encoding)e)));
		ck_assert_str_eq(header(&response, "Cache-Control"), "public, max-age=31536000, immutable");
		ck_assert_str_eq(header(&response, "Vary"), "Accept-Encoding");
		response_free(&response);
	}
	ck_assert_str_ne(body_etag[ENCODING_GZIP], body_etag[ENCODING_ZSTD]);
	for (int e = 0; e < ENCODING_COUNT; e++) {
		const char *both[] = {accept[ENCODING_ZSTD], if_none_match, NULL};
		snprintf(if_none_match, sizeof if_none_match, "If-None-Match: %s", body_etag[e]);
		request(&f, "GET", "/v1/mix/snapshots/12/body", NULL, 0, 0, both, &response);
		ck_assert_int_eq(response.status, e == ENCODING_ZSTD ? 304 : 200);
		ck_assert_str_eq(header(&response, "ETag"), body_etag[ENCODING_ZSTD]);
		response_free(&response);
	}

	/* 406 when nothing acceptable is offered; the same whatever follows the refusal: 1,500 more
	 * entries are read to the end, and so is a second Accept-Encoding field (the two are one
	 * list); only naming a coding again counts. */
	const char *refusals[][3] = {{"Accept-Encoding: identity;q=0", NULL, NULL},
	                             {refusal_then_entries(), NULL, NULL},
	                             {"Accept-Encoding: identity;q=0, *;q=0", "Accept-Encoding: x-1", NULL},
	                             {"Accept-Encoding: identity;q=0", refusal_then_entries(), NULL}};
	for (size_t i = 0; i < sizeof refusals / sizeof refusals[0]; i++)
		expect_not_acceptable(&f, "/v1/mix/snapshots/12/body", refusals[i]);
	const char *gzip_later[] = {"Accept-Encoding: identity;q=0, *;q=0", "Accept-Encoding: gzip", NULL};
	request(&f, "GET", "/v1/mix/snapshots/12/body", NULL, 0, 0, gzip_later, &response);
	ck_assert_int_eq(response.status, 200);
	ck_assert_str_eq(header(&response, "Content-Encoding"), "gzip");
	response_free(&response);
	/* Nothing changed: the body is served as before. */
	const char *plain[] = {accept[ENCODING_IDENTITY], NULL};
	request(&f, "GET", "/v1/mix/snapshots/12/body", NULL, 0, 0, plain, &response);
	ck_assert_int_eq(response.status, 200);
	ck_assert_str_eq(header(&response, "ETag"), body_etag[ENCODING_IDENTITY]);
	response_free(&response);

	/* An epoch not yet published: 404, not to be cached, so that it is fetched once it is. */
	get_expect_error(&f, "/v1/mix/snapshots/13", 404, "not_found");
	publish_at(&f, GENESIS + 13 * LENGTH);
	expect_status(&f, "GET", "/v1/mix/snapshots/13", 200);
	fixture_close(&f);
}
END_TEST

/* Polls GET /v1/ready until it answers status (the signer's state is cached for about a
 * second). */
static void wait_ready_status(struct fixture *f, long status)
{
	struct response response;
	for (int i = 0; i < 500; i++) {
		request(f, "GET", "/v1/ready", NULL, 0, 0, NULL, &response);
		long got = response.status;
		response_free(&response);
		if (got == status)
			return;
		test_sleep_ms(10);
	}
	ck_abort_msg("/v1/ready never answered %ld", status);
}

START_TEST(test_certificates)
{
	struct fixture f;
	fixture_open(&f, 0);
	struct response response;
	request(&f, "GET", "/v1/certificates", NULL, 0, 0, NULL, &response);
	ck_assert_int_eq(response.status, 200);
	ck_assert_str_eq(header(&response, "Content-Type"), "text/plain; charset=utf-8");
	ck_assert_str_eq(header(&response, "Cache-Control"), "public, max-age=60");
	/* A verifier pinning the identity key learns the signing key from it, and then accepts a
	 * receipt made by that key at its accepted-at. */
	struct certificate_keyring *ring = calloc(1, sizeof *ring);
	ck_assert_ptr_nonnull(ring);
	ck_assert_int_eq(certificate_keyring_init(ring, &f.signer_process.identity, 1), 0);
	size_t added = 0;
	ck_assert_int_eq(certificate_keyring_add_bundle(ring, response.body.data, response.body.len, &added),
	                 0);
	ck_assert_uint_eq(added, 1);
	response_free(&response);

	struct registration r;
	struct buffer note;
	post_new(&f, 1, &r, &note, &response);
	ck_assert_int_eq(response.status, 202);
	struct note *receipt_note = NULL;
	ck_assert_int_eq(note_parse(response.body.data, response.body.len, &receipt_note), 0);
	ck_assert_int_eq(certificate_keyring_verify(ring, receipt_note, f.now, 1, NULL, NULL, 0), 0);
	/* The identity key itself did not sign it, and a ring pinning another identity refuses. */
	ck_assert_int_ne(note_verify_threshold(receipt_note, &f.signer_process.identity, 1, 1), 0);
	ck_assert_int_eq(certificate_keyring_init(ring, &f.stranger.verifier, 1), 0);
	ck_assert_int_eq(certificate_keyring_verify(ring, receipt_note, f.now, 1, NULL, NULL, 0),
	                 DIRAUTH_ERR_UNKNOWN_KEY);
	note_free(receipt_note);
	response_free(&response);
	buffer_free(&note);
	registration_clear(&r);
	free(ring);

	expect_status(&f, "HEAD", "/v1/certificates", 200);
	struct buffer body;
	buffer_init(&body);
	ck_assert_int_eq(buffer_append_string(&body, "x"), 0);
	request(&f, "POST", "/v1/certificates", body.data, body.len, 0, NULL, &response);
	expect_error(&response, 405, "method_not_allowed");
	response_free(&response);
	buffer_free(&body);
	fixture_close(&f);
}
END_TEST

START_TEST(test_signer_down_fails_closed)
{
	struct fixture f;
	/* Something published while the signer is up. */
	open_with_epoch_11(&f);
	struct registration r;
	struct buffer note;
	struct response response;
	wait_ready_status(&f, 200);

	/* The signer stops. */
	signer_fixture_stop(&f.signer_process);
	wait_ready_status(&f, 503);
	expect_not_ready(&f, "signer unreachable");
	/* A registration is refused and nothing is stored. */
	post_not_stored(&f, 2, &r, &note);
	/* Reads go on: the latest snapshot, a past epoch's body. */
	expect_status(&f, "GET", "/v1/mix/snapshots/latest", 200);
	expect_status(&f, "GET", "/v1/mix/snapshots/11/body", 200);
	get_expect_error(&f, "/v1/certificates", 503, "unavailable");
	/* The next epoch is not published while the signer is away. */
	write_clock(&f, GENESIS + 12 * LENGTH);
	ck_assert_int_eq(epoch_scheduler_tick(f.scheduler), DIRAUTH_ERR_UNAVAILABLE);
	uint64_t latest = 0;
	ck_assert_int_eq(store_snapshot_latest(f.store, "mix", &latest), 0);
	ck_assert_uint_eq(latest, 11);

	/* Back: ready, the registration is accepted, and the waiting epoch is published late. */
	signer_fixture_start(&f.signer_process);
	wait_ready_status(&f, 200);
	post(&f, &note, &response);
	ck_assert_int_eq(response.status, 202);
	response_free(&response);
	ck_assert_uint_eq(sequence_of(&f, r.service_id), 1);
	ck_assert_int_eq(epoch_scheduler_tick(f.scheduler), 0);
	request(&f, "GET", "/v1/mix/snapshots/latest", NULL, 0, 0, NULL, &response);
	ck_assert_int_eq(response.status, 200);
	ck_assert_ptr_nonnull(strstr((const char *)response.body.data, "\nepoch 12\n"));
	response_free(&response);
	buffer_free(&note);
	registration_clear(&r);

	/* The signer answers but refuses the receipt (its certificate has expired): the
	 * registration was committed first, and the answer says so with its own code. */
	f.signer_process.now = GENESIS + 31 * 86400;
	post_new(&f, 3, &r, &note, &response);
	expect_error(&response, 503, "stored_without_receipt");
	ck_assert_ptr_nonnull(strstr((const char *)response.body.data, "was stored"));
	ck_assert_ptr_nonnull(strstr((const char *)response.body.data, "higher sequence"));
	response_free(&response);
	ck_assert_uint_eq(sequence_of(&f, r.service_id), 1);
	buffer_free(&note);
	registration_clear(&r);

	/* By dirauthd's own clock the certificate has expired: not ready, and nothing is stored. */
	write_clock(&f, GENESIS + 31 * 86400);
	wait_ready_status(&f, 503);
	expect_not_ready(&f, "certificate");
	post_not_stored(&f, 4, &r, &note);
	buffer_free(&note);
	registration_clear(&r);
	fixture_close(&f);
}
END_TEST

START_TEST(test_signer_of_another_authority)
{
	struct fixture f;
	fixture_open(&f, 0);
	/* dirauthd configured for another name than the signer's key: not ready, nothing stored. */
	signer_health_free(f.health);
	ck_assert_int_eq(signer_health_create(f.signer, "authority2.dirauth.example", f.clock, &f.health), 0);
	http_server_stop(f.http);
	struct http_options http_options = {.config = f.config,
	                                    .store = f.store,
	                                    .signer = f.signer,
	                                    .signer_health = f.health,
	                                    .clock = f.clock,
	                                    .prepared = f.prepared,
	                                    .log = f.log};
	ck_assert_int_eq(http_server_start(&http_options, &f.http), 0);
	expect_not_ready(&f, "authority2.dirauth.example");
	struct registration r;
	make_registration(&f, 1, "mix", &f.provider, &r);
	post_expect(&f, &r, &f.provider, 503, "unavailable");
	ck_assert_uint_eq(sequence_of(&f, r.service_id), 0);
	registration_clear(&r);
	fixture_close(&f);
}
END_TEST

START_TEST(test_percent_escapes_refused)
{
	struct fixture f;
	fixture_open(&f, 0);
	struct response response;
	publish_at(&f, GENESIS + 12 * LENGTH);
	expect_status(&f, "GET", "/v1/mix/snapshots/12", 200);

	/* Each resource has one URL: a percent-escape, even of a character that needs none, is
	 * refused rather than decoded. */
	const char *escaped[] = {"/v1/mix/snapshots/%31%32",
	                         "/v1/mix/snapshots/1%32",
	                         "/v1/mix/snapshots/%31%32/body",
	                         "/v1/mix/snapshots/12%2fbody",
	                         "/v1/m%69x/snapshots/latest",
	                         "/v1/mix/snapshots/latest%00",
	                         "/v1/h%65alth",
	                         "/v1/mix/snapshots/12/bod%79",
	                         "/v1/mix/snapshots/12%"};
	for (size_t i = 0; i < sizeof escaped / sizeof escaped[0]; i++) {
		request(&f, "GET", escaped[i], NULL, 0, 0, NULL, &response);
		ck_assert_msg(response.status == 404, "%s: %ld", escaped[i], response.status);
		expect_error(&response, 404, "not_found");
		response_free(&response);
	}
	request(&f, "GET", "/v1/mix/snapshots/%31%32/body", NULL, 0, 0, NULL, &response);
	ck_assert_str_eq(header(&response, "Vary"), "Accept-Encoding");
	response_free(&response);
	/* The query string is not part of the path: it is ignored, escapes and all. */
	request(&f, "GET", "/v1/mix/snapshots/12?x=%31", NULL, 0, 0, NULL, &response);
	ck_assert_int_eq(response.status, 200);
	ck_assert_ptr_nonnull(strstr((const char *)response.body.data, "\nepoch 12\n"));
	response_free(&response);

	/* A registration posted to an escaped path is not accepted, and nothing is stored. */
	struct registration r;
	struct buffer note;
	make_registration(&f, 1, "mix", &f.provider, &r);
	sign(&r, &f.provider, &note);
	request(&f, "POST", "/v1/registration%73", note.data, note.len, 0, NULL, &response);
	expect_error(&response, 404, "not_found");
	response_free(&response);
	ck_assert_uint_eq(sequence_of(&f, r.service_id), 0);
	buffer_free(&note);
	registration_clear(&r);
	fixture_close(&f);
}
END_TEST

/* RFC 9112 3.2.2: a server must accept a target in absolute form. Every route answers it as
 * the origin-form path it names, whatever host it names (the Host field names another), with
 * the rules of paths unchanged; any other form of target is refused and changes nothing. */
START_TEST(test_absolute_form)
{
	struct fixture f;
	fixture_open(&f, 0);
	struct response origin, absolute;
	publish_at(&f, GENESIS + 12 * LENGTH);
	char service[2 * SERVICE_ID_SIZE + 1], digest[65], paths[3][256];
	memset(service, 'a', sizeof service - 1);
	service[sizeof service - 1] = 0;
	memset(digest, 'b', sizeof digest - 1);
	digest[sizeof digest - 1] = 0;
	snprintf(paths[0], sizeof paths[0], "/v1/mix/statements/%s", digest);
	snprintf(paths[1], sizeof paths[1], "/v1/mix/registrations/%s/1", service);
	snprintf(paths[2], sizeof paths[2], "/v1/mix/votes/12/authority1.dirauth.example");
	/* One request per route of the table (server/http/http.c), and paths no route has. */
	const struct {
		const char *method, *path;
	} routes[] = {
	    {"POST", "/v1/registrations"},
	    {"POST", "/v1/endpoint-health"},
	    {"POST", "/v1/revocations"},
	    {"POST", "/v1/deregistrations"},
	    {"GET", paths[0]},
	    {"GET", "/v1/health"},
	    {"GET", "/v1/ready"},
	    {"GET", "/v1/certificates"},
	    {"GET", "/v1/metrics"},
	    {"GET", "/v1/mix/snapshots/latest"},
	    {"GET", "/v1/mix/snapshots/12"},
	    {"HEAD", "/v1/mix/snapshots/12"},
	    {"GET", "/v1/mix/snapshots/from/12"},
	    {"GET", "/v1/mix/snapshots/12/body"},
	    {"POST", "/v1/mix/votes"},
	    {"GET", paths[2]},
	    {"POST", "/v1/mix/signatures"},
	    {"GET", "/v1/mix/signatures/12"},
	    {"GET", paths[1]},
	    {"POST", "/v1/mix/notes"},
	    {"GET", "/v1/mix/evidence"},
	    {"GET", "/v1/mix/evidence/12"},
	    {"GET", "/v1/mix/log/checkpoint"},
	    {"GET", "/v1/mix/log/tile/0/000"},
	    {"POST", "/v1/mix/log/add-checkpoint"},
	    {"GET", "/v1/mix/log/proof/12"},
	    {"GET", "/v1/mix/log/proof/12/1"},
	    {"GET", "/v1/mix/log/consistency/0/1"},
	    {"GET", "/v1/mix/snapshots/12?x=1"},
	    {"POST", "/v1/health"},
	    {"GET", "/v1/mix/snapshots/%31%32"},
	    {"GET", "/v1/mix/snapshots/%31%32/body"},
	    {"GET", "/v1/mix/snapshots/12/"},
	    {"GET", "/v1//health"},
	    {"GET", "/v1/nothing"},
	    {"GET", "/"},
	};
	static const char *const prefixes[] = {"http://dirauth.example", "HTTPS://[2001:db8::1]:8443",
	                                       "http://a"};
	for (size_t p = 0; p < sizeof prefixes / sizeof prefixes[0]; p++)
		for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
			const uint8_t *body =
			    strcmp(routes[i].method, "POST") == 0 ? (const uint8_t *)"x" : NULL;
			f.absolute_prefix = NULL;
			request(&f, routes[i].method, routes[i].path, body, body ? 1 : 0, 0, NULL, &origin);
			f.absolute_prefix = prefixes[p];
			request(&f, routes[i].method, routes[i].path, body, body ? 1 : 0, 0, NULL, &absolute);
			ck_assert_msg(absolute.status == origin.status, "%s %s%s: %ld, as origin form %ld",
			              routes[i].method, prefixes[p], routes[i].path, absolute.status,
			              origin.status);
			const char *type = header(&origin, "Content-Type");
			char origin_type[128];
			snprintf(origin_type, sizeof origin_type, "%s", type ? type : "");
			type = header(&absolute, "Content-Type");
			ck_assert_str_eq(type ? type : "", origin_type);
			if (strcmp(routes[i].path, "/v1/metrics") != 0) {
				ck_assert_uint_eq(absolute.body.len, origin.body.len);
				if (origin.body.len)
					ck_assert_mem_eq(absolute.body.data, origin.body.data,
					                 origin.body.len);
			}
			response_free(&origin);
			response_free(&absolute);
		}
	/* The host named may be any, and a path may be missing: "/", which is no resource. */
	f.absolute_prefix = "http://dirauth.example";
	get_expect_error(&f, "", 404, "not_found");
	get_expect_error(&f, "?x=1", 404, "not_found");
	/* "//host/path" is a path in origin form, of no resource. */
	f.absolute_prefix = "/";
	get_expect_error(&f, "/dirauth.example/v1/health", 404, "not_found");
	f.absolute_prefix = "http://dirauth.example";

	/* A registration posted in absolute form is taken. */
	struct registration r;
	struct buffer note;
	post_new(&f, 1, &r, &note, &absolute);
	ck_assert_msg(absolute.status == 202, "%ld %s", absolute.status, absolute.body.data);
	response_free(&absolute);
	ck_assert_uint_eq(sequence_of(&f, r.service_id), 1);

	/* Any other target is refused with the connection closed, and nothing is stored. */
	struct registration second;
	struct buffer second_note;
	make_registration(&f, 2, "mix", &f.provider, &second);
	sign(&second, &f.provider, &second_note);
	static const char *const refused[] = {"ftp://dirauth.example",
	                                      "http://user@dirauth.example",
	                                      "http://",
	                                      "http:",
	                                      "*",
	                                      "dirauth.example",
	                                      "http:/dirauth.example",
	                                      "httpx://dirauth.example",
	                                      "http://user:pass@dirauth.example"};
	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
		f.absolute_prefix = refused[i];
		request(&f, "POST", "/v1/registrations", second_note.data, second_note.len, 0, NULL,
		        &absolute);
		expect_error(&absolute, 400, "bad_request");
		ck_assert_str_eq(header(&absolute, "Connection"), "close");
		response_free(&absolute);
	}
	f.absolute_prefix = NULL;
	ck_assert_uint_eq(sequence_of(&f, second.service_id), 0);
	buffer_free(&note);
	buffer_free(&second_note);
	registration_clear(&r);
	registration_clear(&second);
	fixture_close(&f);
}
END_TEST

static void expect_statistics(struct fixture *f, uint64_t header_loads, uint64_t body_loads)
{
	struct prepared_statistics statistics;
	prepared_set_statistics(f->prepared, &statistics);
	ck_assert_uint_eq(statistics.header_loads, header_loads);
	ck_assert_uint_eq(statistics.body_loads, body_loads);
}

/* The resident kilobytes of this process's mappings of files under directory (/proc/self/smaps),
 * and how many such mappings there are. */
static unsigned long resident_kib_under(const char *directory, int *mappings)
{
	FILE *smaps = fopen("/proc/self/smaps", "r");
	ck_assert_ptr_nonnull(smaps);
	char line[4096];
	unsigned long total = 0, kib = 0;
	bool inside = false;
	*mappings = 0;
	while (fgets(line, sizeof line, smaps)) {
		char *path = strchr(line, '/');
		if (strchr(line, '-') == line + strspn(line, "0123456789abcdef")) {
			/* A mapping's first line: "start-end perms offset device inode path". */
			inside = path && strncmp(path, directory, strlen(directory)) == 0;
			*mappings += inside;
		} else if (inside && sscanf(line, "Rss: %lu kB", &kib) == 1) {
			total += kib;
		}
	}
	fclose(smaps);
	return total;
}

START_TEST(test_body_pages_only_while_sent)
{
	/* A body is sent from a mapping of its file, whose pages are the page cache's: they are in
	 * the process's resident set while a request sends them, and leave it when it has ended. */
	struct fixture f;
	open_with_epoch_11(&f);
	char bodies[600], directory[PATH_MAX];
	snprintf(bodies, sizeof bodies, "%s/data/bodies/mix", f.dir);
	ck_assert_ptr_nonnull(realpath(bodies, directory));
	int mappings = 0;
	ck_assert_uint_eq(resident_kib_under(directory, &mappings), 0);
	ck_assert_int_eq(mappings, ENCODING_COUNT);

	const char *accept[ENCODING_COUNT] = {"Accept-Encoding: identity", "Accept-Encoding: gzip",
	                                      "Accept-Encoding: zstd"};
	for (int e = 0; e < ENCODING_COUNT; e++) {
		const char *headers[] = {accept[e], NULL};
		struct response response;
		request(&f, "GET", "/v1/mix/snapshots/11/body", NULL, 0, 0, headers, &response);
		ck_assert_int_eq(response.status, 200);
		ck_assert_uint_gt(response.body.len, 0);
		response_free(&response);
	}
	/* The answer may reach the client just before libmicrohttpd ends the request. */
	unsigned long resident = 0;
	for (int i = 0; i < 200 && (resident = resident_kib_under(directory, &mappings)) != 0; i++)
		test_sleep_ms(10);
	ck_assert_uint_eq(resident, 0);
	ck_assert_int_eq(mappings, ENCODING_COUNT);
	fixture_close(&f);
}
END_TEST

START_TEST(test_old_epochs_load_lazily)
{
	struct fixture f;
	open_with_epoch_11(&f);
	struct response response;
	publish_at(&f, GENESIS + 12 * LENGTH);
	fixture_restart_serving(&f);
	expect_statistics(&f, 0, 0);

	/* The header of an older epoch, by GET and HEAD: the body is never read. */
	request(&f, "GET", "/v1/mix/snapshots/11", NULL, 0, 0, NULL, &response);
	ck_assert_int_eq(response.status, 200);
	ck_assert_ptr_nonnull(strstr((const char *)response.body.data, "\nepoch 11\n"));
	ck_assert_str_eq(header(&response, "Cache-Control"), "public, max-age=31536000, immutable");
	response_free(&response);
	expect_status(&f, "HEAD", "/v1/mix/snapshots/11", 200);
	expect_statistics(&f, 1, 0);

	/* A body in identity: its file checked once and served from then on. */
	const char *identity[] = {"Accept-Encoding: identity", NULL};
	request(&f, "GET", "/v1/mix/snapshots/11/body", NULL, 0, 0, identity, &response);
	ck_assert_int_eq(response.status, 200);
	ck_assert_ptr_null(header(&response, "Content-Encoding"));
	char identity_etag[128];
	snprintf(identity_etag, sizeof identity_etag, "%s", header(&response, "ETag"));
	response_free(&response);
	expect_statistics(&f, 1, 1);

	/* gzip: its own file, checked once, in gzip alone, however often it is asked for. */
	const char *gzip[] = {"Accept-Encoding: gzip", NULL};
	for (int i = 0; i < 3; i++) {
		request(&f, "GET", "/v1/mix/snapshots/11/body", NULL, 0, 0, gzip, &response);
		ck_assert_int_eq(response.status, 200);
		ck_assert_str_eq(header(&response, "Content-Encoding"), "gzip");
		ck_assert_str_eq(header(&response, "Vary"), "Accept-Encoding");
		struct buffer decoded;
		buffer_init(&decoded);
		ck_assert_int_eq(
		    compress_decode(ENCODING_GZIP, response.body.data, response.body.len, 1 << 20, &decoded),
		    0);
		ck_assert_ptr_nonnull(strstr((const char *)decoded.data, "epoch 11"));
		buffer_free(&decoded);
		response_free(&response);
	}
	expect_statistics(&f, 1, 2);

	/* A conditional request for a body not built yet (zstd) that matches is answered from the
	 * header's digest alone. */
	char zstd_etag[600];
	snprintf(zstd_etag, sizeof zstd_etag, "If-None-Match: %.*s-zstd\"", (int)strlen(identity_etag) - 10,
	         identity_etag);
	const char *zstd_conditional[] = {"Accept-Encoding: zstd", zstd_etag, NULL};
	request(&f, "GET", "/v1/mix/snapshots/11/body", NULL, 0, 0, zstd_conditional, &response);
	ck_assert_int_eq(response.status, 304);
	ck_assert_str_eq(header(&response, "Vary"), "Accept-Encoding");
	response_free(&response);
	expect_statistics(&f, 1, 2);

	/* The latest is prepared at start, every encoding included: nothing to load. */
	request(&f, "GET", "/v1/mix/snapshots/12/body", NULL, 0, 0, gzip, &response);
	ck_assert_int_eq(response.status, 200);
	response_free(&response);
	expect_statistics(&f, 1, 2);
	fixture_close(&f);
}
END_TEST

/* A body retention removed is a 404 with its own code, never a 500, while its header is still
 * served: an authority catching up stores such a header alone (docs/protocol.md). */
START_TEST(test_body_past_retention)
{
	struct fixture f;
	open_with_epoch_11(&f);
	publish_at(&f, GENESIS + 12 * LENGTH);
	ck_assert_int_eq(store_retain(f.store, "mix", 12), 0);
	fixture_restart_serving(&f);
	const char *encodings[] = {"Accept-Encoding: identity", "Accept-Encoding: gzip",
	                           "Accept-Encoding: zstd"};
	for (size_t e = 0; e < 3; e++) {
		const char *headers[] = {encodings[e], NULL};
		struct response response;
		request(&f, "GET", "/v1/mix/snapshots/11/body", NULL, 0, 0, headers, &response);
		expect_error(&response, 404, "body_not_kept");
		ck_assert_str_eq(header(&response, "Vary"), "Accept-Encoding");
		response_free(&response);
	}
	expect_status(&f, "GET", "/v1/mix/snapshots/11", 200);
	expect_status(&f, "GET", "/v1/mix/snapshots/12/body", 200);
	get_expect_error(&f, "/v1/mix/snapshots/10/body", 404, "not_found");
	fixture_close(&f);
}
END_TEST

/* The bulk reads between authorities: many notes in one request (POST /v1/<ns>/notes), and the
 * headers from an epoch on (GET /v1/<ns>/snapshots/from/<epoch>), each with its refusals. */
START_TEST(test_bulk_reads)
{
	struct fixture f;
	fixture_open(&f, 0);
	get_expect_error(&f, "/v1/mix/snapshots/from/0", 404, "not_found");
	struct registration r;
	struct buffer note;
	struct response response;
	post_new(&f, 1, &r, &note, &response);
	ck_assert_int_eq(response.status, 202);
	response_free(&response);
	publish_at(&f, GENESIS + 11 * LENGTH);
	publish_at(&f, GENESIS + 12 * LENGTH);

	/* Notes: the registration held, another sequence and an unknown statement not. */
	struct notes_item items[3];
	memset(items, 0, sizeof items);
	items[0].kind = items[1].kind = NOTES_ITEM_REGISTRATION;
	memcpy(items[0].service_id, r.service_id, SERVICE_ID_SIZE);
	memcpy(items[1].service_id, r.service_id, SERVICE_ID_SIZE);
	items[0].sequence = r.sequence;
	items[1].sequence = r.sequence + 1;
	items[2].kind = NOTES_ITEM_STATEMENT;
	memset(items[2].digest, 0xab, 32);
	struct buffer asked;
	buffer_init(&asked);
	ck_assert_int_eq(notes_request_encode(items, 3, &asked), 0);
	request(&f, "POST", "/v1/mix/notes", asked.data, asked.len, 0, NULL, &response);
	ck_assert_int_eq(response.status, 200);
	struct notes_answer_note *notes = NULL;
	size_t count = 0, covered = 0;
	ck_assert_int_eq(
	    notes_answer_parse(response.body.data, response.body.len, 3, 65536, &notes, &count, &covered), 0);
	ck_assert_uint_eq(covered, 3);
	ck_assert_uint_eq(count, 1);
	ck_assert_uint_eq(notes[0].index, 0);
	ck_assert_uint_eq(notes[0].len, note.len);
	ck_assert_mem_eq(notes[0].note, note.data, note.len);
	free(notes);
	response_free(&response);
	/* Compressed when asked, and the same bytes decoded. */
	const char *zstd[] = {"Accept-Encoding: zstd", NULL};
	request(&f, "POST", "/v1/mix/notes", asked.data, asked.len, 0, zstd, &response);
	ck_assert_int_eq(response.status, 200);
	ck_assert_str_eq(header(&response, "Vary"), "Accept-Encoding");
	response_free(&response);
	/* Not a notes request; another method. */
	request(&f, "POST", "/v1/mix/notes", (const uint8_t *)"hello\n", 6, 0, NULL, &response);
	expect_error(&response, 400, "malformed");
	response_free(&response);
	expect_status(&f, "GET", "/v1/mix/notes", 405);
	buffer_free(&asked);

	/* Headers from an epoch on: both, from 12 the last, past it none; never for another spelling. */
	request(&f, "GET", "/v1/mix/snapshots/from/0", NULL, 0, 0, NULL, &response);
	ck_assert_int_eq(response.status, 200);
	struct headers_bundle bundle;
	ck_assert_int_eq(headers_bundle_parse(response.body.data, response.body.len, 0, 65536, &bundle), 0);
	ck_assert_uint_eq(bundle.latest, 12);
	ck_assert_uint_eq(bundle.through, 12);
	ck_assert_uint_eq(bundle.count, 2);
	ck_assert_uint_eq(bundle.items[0].epoch, 11);
	ck_assert_uint_eq(bundle.items[1].epoch, 12);
	headers_bundle_clear(&bundle);
	response_free(&response);
	request(&f, "GET", "/v1/mix/snapshots/from/12", NULL, 0, 0, NULL, &response);
	ck_assert_int_eq(headers_bundle_parse(response.body.data, response.body.len, 12, 65536, &bundle), 0);
	ck_assert_uint_eq(bundle.count, 1);
	headers_bundle_clear(&bundle);
	response_free(&response);
	request(&f, "GET", "/v1/mix/snapshots/from/13", NULL, 0, 0, NULL, &response);
	ck_assert_int_eq(headers_bundle_parse(response.body.data, response.body.len, 13, 65536, &bundle), 0);
	ck_assert_uint_eq(bundle.count, 0);
	ck_assert_uint_eq(bundle.through, 12);
	headers_bundle_clear(&bundle);
	response_free(&response);
	get_expect_error(&f, "/v1/mix/snapshots/from/012", 404, "not_found");
	get_expect_error(&f, "/v1/mix/snapshots/from/x", 404, "not_found");
	buffer_free(&note);
	registration_clear(&r);
	fixture_close(&f);
}
END_TEST

START_TEST(test_check_order)
{
	/* The grammar is judged before the namespace: a note with two signatures is malformed (400)
	 * whatever namespace it names; with one signature the unknown namespace answers (404). */
	struct fixture f;
	fixture_open(&f, 0);
	struct registration r;
	struct buffer text, note;
	make_registration(&f, 1, "nowhere", &f.provider, &r);
	buffer_init(&text);
	buffer_init(&note);
	ck_assert_int_eq(registration_encode(&r, &text), 0);
	struct test_key keys[2] = {f.provider, f.other};
	test_key_sign_note(keys, 2, text.data, text.len, &note);
	post_note_expect_error(&f, &note, 400, "malformed");
	buffer_free(&note);
	post_expect(&f, &r, &f.provider, 404, "unknown_namespace");
	buffer_free(&text);
	registration_clear(&r);
	fixture_close(&f);
}
END_TEST

START_TEST(test_metrics)
{
	/* Aggregates only: counts by reason, the store's fill, each namespace's records and latest
	 * epoch; nothing about any client. */
	struct fixture f;
	open_with_epoch_11(&f);
	struct response response;
	request(&f, "GET", "/v1/metrics", NULL, 0, 0, NULL, &response);
	ck_assert_int_eq(response.status, 200);
	ck_assert_str_eq(header(&response, "Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
	const char *text = (const char *)response.body.data;
	ck_assert_ptr_nonnull(strstr(text, "\ndirauth_store_submissions_total 1\n"));
	ck_assert_ptr_nonnull(strstr(text, "\ndirauth_namespace_records{namespace=\"mix\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(text, "\ndirauth_namespace_latest_epoch{namespace=\"mix\"} 11\n"));
	ck_assert_ptr_nonnull(strstr(text, "\ndirauth_store_used_bytes "));
	ck_assert_ptr_nonnull(strstr(text, "\ndirauth_store_free_bytes "));
	ck_assert_ptr_nonnull(strstr(text, "dirauth_http_refused_total{reason=\"bad_request\"} 0\n"));
	ck_assert_ptr_null(strstr(text, "127.0.0.1"));

	/* The round of an authority alone: its epoch published, the publication's duration, no
	 * failure; the latest snapshot's records and body bytes in each encoding. */
	ck_assert_ptr_nonnull(strstr(text, "\ndirauth_round_epoch{namespace=\"mix\"} 11\n"));
	ck_assert_ptr_nonnull(strstr(text, "\ndirauth_epochs_published_total{namespace=\"mix\"} 1\n"));
	ck_assert_ptr_nonnull(
	    strstr(text, "\ndirauth_epochs_failed_total{namespace=\"mix\",reason=\"signatures\"} 0\n"));
	ck_assert_ptr_nonnull(strstr(text, "\ndirauth_round_phase_duration_seconds_count{namespace=\"mix\","
	                                   "phase=\"publication\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(text, "\ndirauth_round_phase_duration_seconds_bucket{namespace=\"mix\","
	                                   "phase=\"publication\",le=\"+Inf\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(text, "\ndirauth_round_phase_duration_seconds_count{namespace=\"mix\","
	                                   "phase=\"vote\"} 0\n"));
	ck_assert_ptr_nonnull(strstr(text, "\ndirauth_snapshot_records{namespace=\"mix\"} 1\n"));
	struct store_body_info info;
	struct buffer stored;
	buffer_init(&stored);
	ck_assert_int_eq(store_snapshot_get(f.store, "mix", 11, &stored, &info), 0);
	buffer_free(&stored);
	const char *encodings[] = {"identity", "gzip", "zstd"};
	for (int e = 0; e < ENCODING_COUNT; e++) {
		char line[160];
		snprintf(line, sizeof line,
		         "\ndirauth_snapshot_body_bytes{namespace=\"mix\",encoding=\"%s\"} %llu\n",
		         encodings[e], (unsigned long long)info.size[e]);
		ck_assert_msg(strstr(text, line), "no line%s", line);
		ck_assert_uint_gt(info.size[e], 0);
	}
	/* The signer: up, ready, and its certificate's not-after (the fixture's, 30 days on). */
	ck_assert_ptr_nonnull(strstr(text, "\ndirauth_signer_up 1\n"));
	ck_assert_ptr_nonnull(strstr(text, "\ndirauth_signer_ready 1\n"));
	char line[160];
	snprintf(line, sizeof line,
	         "\ndirauth_signer_certificate_not_after_timestamp_seconds{key_id=\"%08x\"} %llu\n",
	         (unsigned)f.signer_process.signing.key_id, (unsigned long long)(GENESIS + 30 * 86400));
	ck_assert_msg(strstr(text, line), "no line%s in\n%s", line, text);
	/* An authority alone has no other member: no member's line. */
	ck_assert_ptr_null(strstr(text, "dirauth_member_"));
	response_free(&response);
	fixture_close(&f);
}
END_TEST

/* While the signer is away: the signer's gauges say so, and an epoch its round could not publish
 * before the next began is counted failed, reason round_ended. */
START_TEST(test_metrics_signer_away)
{
	struct fixture f;
	open_with_epoch_11(&f);
	struct response response;
	signer_fixture_stop(&f.signer_process);
	wait_ready_status(&f, 503);
	write_clock(&f, GENESIS + 12 * LENGTH);
	ck_assert_int_eq(epoch_scheduler_tick(f.scheduler), DIRAUTH_ERR_UNAVAILABLE);
	request(&f, "GET", "/v1/metrics", NULL, 0, 0, NULL, &response);
	ck_assert_int_eq(response.status, 200);
	const char *text = (const char *)response.body.data;
	ck_assert_ptr_nonnull(strstr(text, "\ndirauth_signer_up 0\n"));
	ck_assert_ptr_nonnull(strstr(text, "\ndirauth_signer_ready 0\n"));
	ck_assert_ptr_nonnull(strstr(text, "\ndirauth_round_epoch{namespace=\"mix\"} 12\n"));
	ck_assert_ptr_nonnull(
	    strstr(text, "\ndirauth_epochs_failed_total{namespace=\"mix\",reason=\"round_ended\"} 0\n"));
	response_free(&response);

	/* Epoch 13 begins with 12 unpublished: 12 failed, and 13 is not published either. */
	write_clock(&f, GENESIS + 13 * LENGTH);
	ck_assert_int_eq(epoch_scheduler_tick(f.scheduler), DIRAUTH_ERR_UNAVAILABLE);
	request(&f, "GET", "/v1/metrics", NULL, 0, 0, NULL, &response);
	text = (const char *)response.body.data;
	ck_assert_ptr_nonnull(
	    strstr(text, "\ndirauth_epochs_failed_total{namespace=\"mix\",reason=\"round_ended\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(text, "\ndirauth_epochs_published_total{namespace=\"mix\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(text, "\ndirauth_namespace_latest_epoch{namespace=\"mix\"} 11\n"));
	response_free(&response);
	signer_fixture_start(&f.signer_process);
	fixture_close(&f);
}
END_TEST

/* The bytes of a zstd frame of len bytes of ch. */
static void zstd_of_bytes(int ch, size_t len, struct buffer *packed)
{
	uint8_t *plain = malloc(len ? len : 1);
	ck_assert_ptr_nonnull(plain);
	memset(plain, ch, len);
	buffer_init(packed);
	ck_assert_int_eq(compress_encode(ENCODING_ZSTD, plain, len, packed), 0);
	free(plain);
}

/* What peers fetch from each other goes as zstd to a client that takes it (and at least
 * RESPOND_COMPRESS_MIN bytes), else as it is; every answer of those paths, errors included,
 * varies with Accept-Encoding, and a request that accepts nothing is 406 as on the read path. */
START_TEST(test_peer_answers_negotiate_zstd)
{
	struct fixture f;
	fixture_open(&f, 0);
	struct registration r;
	struct buffer note;
	struct response response;
	/* Long host names, so that the note is past RESPOND_COMPRESS_MIN. */
	make_registration(&f, 1, "mix", &f.provider, &r);
	for (size_t i = 0; i < r.endpoint_count; i++)
		if (r.endpoints[i].transport != TRANSPORT_ONION)
			snprintf(r.endpoints[i].address, sizeof r.endpoints[i].address,
			         "gw%zu.%060d.%060d.%060d.example.net:443", i, 0, 0, 0);
	sign(&r, &f.provider, &note);
	post(&f, &note, &response);
	ck_assert_msg(response.status == 202, "%ld %s", response.status, response.body.data);
	response_free(&response);
	char hex[2 * SERVICE_ID_SIZE + 1], path[256];
	hex_encode(r.service_id, SERVICE_ID_SIZE, hex);
	snprintf(path, sizeof path, "/v1/mix/registrations/%s/1", hex);
	ck_assert_uint_ge(note.len, RESPOND_COMPRESS_MIN);

	static const char *const zstd[] = {"Accept-Encoding: zstd", NULL};
	request(&f, "GET", path, NULL, 0, 0, zstd, &response);
	ck_assert_int_eq(response.status, 200);
	ck_assert_str_eq(header(&response, "Content-Encoding"), "zstd");
	ck_assert_str_eq(header(&response, "Vary"), "Accept-Encoding");
	ck_assert_str_eq(header(&response, "Content-Type"), "text/plain; charset=utf-8");
	ck_assert_uint_lt(response.body.len, note.len);
	struct buffer decoded;
	buffer_init(&decoded);
	ck_assert_int_eq(
	    compress_decode(ENCODING_ZSTD, response.body.data, response.body.len, note.len, &decoded), 0);
	ck_assert_uint_eq(decoded.len, note.len);
	ck_assert_mem_eq(decoded.data, note.data, note.len);
	buffer_free(&decoded);
	response_free(&response);
	/* Without zstd among the encodings taken: as it is, still varying. */
	static const char *const others[][2] = {
	    {"Accept-Encoding: gzip", NULL}, {"Accept-Encoding: zstd;q=0, gzip", NULL}, {"X-None: 1", NULL}};
	for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
		request(&f, "GET", path, NULL, 0, 0, others[i], &response);
		ck_assert_int_eq(response.status, 200);
		ck_assert_ptr_null(header(&response, "Content-Encoding"));
		ck_assert_str_eq(header(&response, "Vary"), "Accept-Encoding");
		ck_assert_uint_eq(response.body.len, note.len);
		response_free(&response);
	}
	static const char *const nothing[] = {"Accept-Encoding: zstd;q=0, gzip;q=0, identity;q=0", NULL};
	expect_not_acceptable(&f, path, nothing);
	/* Whatever follows a refusal of everything. */
	const char *const long_nothing[] = {refusal_then_entries(), NULL};
	expect_not_acceptable(&f, path, long_nothing);
	/* A short answer goes as it is, even to a client that takes zstd. */
	struct registration short_r;
	struct buffer short_note;
	post_new(&f, 2, &short_r, &short_note, &response);
	ck_assert_int_eq(response.status, 202);
	response_free(&response);
	ck_assert_uint_lt(short_note.len, RESPOND_COMPRESS_MIN);
	hex_encode(short_r.service_id, SERVICE_ID_SIZE, hex);
	snprintf(path, sizeof path, "/v1/mix/registrations/%s/1", hex);
	request(&f, "GET", path, NULL, 0, 0, zstd, &response);
	ck_assert_int_eq(response.status, 200);
	ck_assert_ptr_null(header(&response, "Content-Encoding"));
	ck_assert_str_eq(header(&response, "Vary"), "Accept-Encoding");
	ck_assert_uint_eq(response.body.len, short_note.len);
	response_free(&response);
	buffer_free(&short_note);
	registration_clear(&short_r);
	/* The errors of these paths vary too. */
	static const char *const errors[] = {"/v1/mix/registrations/00/1", "/v1/mix/votes/11/a",
	                                     "/v1/mix/signatures/11",      "/v1/mix/evidence",
	                                     "/v1/mix/evidence/3",         "/v1/mix/statements/00"};
	for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++) {
		request(&f, "GET", errors[i], NULL, 0, 0, zstd, &response);
		expect_error(&response, 404, "not_found");
		ck_assert_msg(header(&response, "Vary") != NULL, "%s", errors[i]);
		response_free(&response);
	}
	buffer_free(&note);
	registration_clear(&r);
	fixture_close(&f);
}
END_TEST

/* Posting len bytes of data to path with headers answers the error status and code, its detail
 * saying said (NULL: not looked at). */
static void post_expect_error(struct fixture *f, const char *path, const void *data, size_t len,
                              const char *const *headers, long status, const char *code, const char *said)
{
	struct response response;
	request(f, "POST", path, data, len, 0, headers, &response);
	expect_error(&response, status, code);
	if (said)
		ck_assert_ptr_nonnull(strstr((const char *)response.body.data, said));
	response_free(&response);
}

/* The vote and signature pushes take zstd: decoded under the route's cap before the handler (an
 * authority alone answers 404 once it is reached); a frame that does not decode is 400, a bomb
 * 413. Other encodings, or zstd where a route does not take it, are 415 unsupported_encoding.
 * (One vote only: an authority takes as many vote uploads at once as it has peers, counted until
 * libmicrohttpd has ended each, which may be after its client has the answer.) */
START_TEST(test_request_bodies_in_zstd)
{
	struct fixture f;
	fixture_open(&f, 0);
	struct response response;
	struct buffer small, bomb;
	zstd_of_bytes('v', 4096, &small);
	static const char *const zstd[] = {"Content-Encoding: zstd", NULL};
	post_expect_error(&f, "/v1/mix/votes", small.data, small.len, zstd, 404, "not_found",
	                  "takes no votes");
	post_expect_error(&f, "/v1/mix/signatures", small.data, small.len, zstd, 404, "not_found",
	                  "takes no votes");
	static const char *const identity[] = {"Content-Encoding: identity", NULL};
	post_expect_error(&f, "/v1/mix/signatures", (const uint8_t *)"plain", 5, identity, 404, "not_found",
	                  NULL);

	/* Not a zstd frame. */
	post_expect_error(&f, "/v1/mix/signatures", (const uint8_t *)"not zstd at all", 15, zstd, 400,
	                  "malformed", "zstd");
	/* A few kilobytes that inflate past the signature's bound (and past the ratio guard). */
	zstd_of_bytes(0, 8u << 20, &bomb);
	ck_assert_uint_lt(bomb.len, 4096);
	post_expect_error(&f, "/v1/mix/signatures", bomb.data, bomb.len, zstd, 413, "body_too_large",
	                  "inflates");

	/* Refused encodings. */
	static const char *const refused[][3] = {
	    {"Content-Encoding: gzip", NULL, NULL},
	    {"Content-Encoding: zstd, gzip", NULL, NULL},
	    {"Content-Encoding: br", NULL, NULL},
	    {"Content-Encoding: zstd", "Content-Encoding: zstd", NULL},
	};
	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
		post_expect_error(&f, "/v1/mix/signatures", small.data, small.len, refused[i], 415,
		                  "unsupported_encoding", NULL);
	/* zstd where the route takes none: registrations and the witness protocol. */
	post_expect_error(&f, "/v1/registrations", small.data, small.len, zstd, 415, "unsupported_encoding",
	                  NULL);
	post_expect_error(&f, "/v1/mix/log/add-checkpoint", small.data, small.len, zstd, 415,
	                  "unsupported_encoding", NULL);
	/* The bound on what is read holds for a refused body too. */
	uint8_t *large = malloc(BODY_CAP + 1);
	ck_assert_ptr_nonnull(large);
	memset(large, 'x', BODY_CAP + 1);
	post_expect_error(&f, "/v1/registrations", large, BODY_CAP + 1, zstd, 413, "body_too_large", NULL);
	free(large);
	/* A registration that says identity is taken as it is. */
	struct registration r;
	struct buffer note;
	make_registration(&f, 2, "mix", &f.provider, &r);
	sign(&r, &f.provider, &note);
	request(&f, "POST", "/v1/registrations", note.data, note.len, 0, identity, &response);
	ck_assert_msg(response.status == 202, "%ld %s", response.status, response.body.data);
	response_free(&response);
	buffer_free(&note);
	registration_clear(&r);
	buffer_free(&small);
	buffer_free(&bomb);
	fixture_close(&f);
}
END_TEST

static Suite *http_suite(void)
{
	Suite *suite = suite_create("http");
	TCase *tc = tcase_create("http");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_accept_and_publish);
	tcase_add_test(tc, test_refusals_change_nothing);
	tcase_add_test(tc, test_store_full);
	tcase_add_test(tc, test_body_larger_than_the_connection_pool);
	tcase_add_test(tc, test_routes);
	tcase_add_test(tc, test_caching_headers);
	tcase_add_test(tc, test_certificates);
	tcase_add_test(tc, test_signer_down_fails_closed);
	tcase_add_test(tc, test_signer_of_another_authority);
	tcase_add_test(tc, test_percent_escapes_refused);
	tcase_add_test(tc, test_body_pages_only_while_sent);
	tcase_add_test(tc, test_old_epochs_load_lazily);
	tcase_add_test(tc, test_body_past_retention);
	tcase_add_test(tc, test_bulk_reads);
	tcase_add_test(tc, test_metrics);
	tcase_add_test(tc, test_metrics_signer_away);
	tcase_add_test(tc, test_check_order);
	tcase_add_test(tc, test_routes_between_authorities);
	tcase_add_test(tc, test_peer_answers_negotiate_zstd);
	tcase_add_test(tc, test_request_bodies_in_zstd);
	tcase_add_test(tc, test_absolute_form);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	SRunner *runner = srunner_create(http_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	curl_global_cleanup();
	return failures ? 1 : 0;
}
