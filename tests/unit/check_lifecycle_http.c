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
#include "lifecycle_http_fixture.h"

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
	ck_assert_str_eq(header(&response, "Vary"), "Accept-Encoding"); /* zstd to a peer taking it */
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
	/* Nothing about the service is taken again, a revocation of one of its endpoints neither,
	 * whoever signs it: refused, not kept, and its (key, sequence) not used (the same note again
	 * is "revoked", not "replayed"). */
	revocation_note(&second, 1, REVOCATION_SIGNER_PROVIDER, &f.provider, 5, &note);
	post_to(&f, "/v1/revocations", &note, &response);
	expect_error(&response, 409, "revoked");
	ck_assert_msg(strstr((const char *)response.body.data, "service is revoked whole"), "%s",
	              (const char *)response.body.data);
	response_free(&response);
	post_expect_code(&f, "/v1/revocations", &note, 409, "revoked");
	buffer_free(&note);
	revocation_note(&second, 0, REVOCATION_SIGNER_OPERATOR, &operator_key, 2, &note);
	post_expect_code(&f, "/v1/revocations", &note, 409, "revoked");
	buffer_free(&note);
	for (size_t e = 0; e < second.endpoint_count; e++)
		ck_assert_int_eq(store_revocation_find(f.store, "mix", second.service_id,
		                                       second.endpoints[e].endpoint_id, NULL),
		                 DIRAUTH_ERR_NOT_FOUND);

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
