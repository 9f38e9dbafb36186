/*
 * lifecycle_fixture.h: the example documents of an endpoint's life (health statements,
 * revocations, deregistrations) shared by their tests, the snapshot tests and the method-2
 * consensus tests.
 *
 * Two more EXAMPLE keys, from published seeds like those of tests/support/test_keys.c (byte i of
 * the seed of key number n is n*32 + i): "endpoint.example" (6), the first endpoint's own key of
 * the example registrations here, and "operator.example" (7), an authority operator's key. Never
 * trust them.
 */
#ifndef DIRAUTH_TEST_LIFECYCLE_FIXTURE_H
#define DIRAUTH_TEST_LIFECYCLE_FIXTURE_H

#include "schema/health.h"
#include "schema/registration.h"
#include "schema/revocation.h"
#include "test_keys.h"
#include "test_support.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#define LIFECYCLE_KEY_ENDPOINT 6
#define LIFECYCLE_KEY_OPERATOR 7
#define LIFECYCLE_NAMESPACE    "example-net"
#define LIFECYCLE_ISSUED_AT    1767225600ull /* 2026-01-01, the example registrations' issued-at */

static inline void lifecycle_key_load(unsigned index, struct test_key *key)
{
	uint8_t seed[32];
	test_key_example_seed(index, seed);
	test_key_from_seed(seed, index == LIFECYCLE_KEY_ENDPOINT ? "endpoint.example" : "operator.example",
	                   key);
}

/* Example registration number index of provider.example, its first endpoint naming the key
 * endpoint.example in an endpoint-key line. The caller clears r. */
static inline void lifecycle_registration(unsigned index, struct registration *r)
{
	struct test_key provider, endpoint;
	test_key_load(TEST_KEY_PROVIDER, &provider);
	lifecycle_key_load(LIFECYCLE_KEY_ENDPOINT, &endpoint);
	test_example_registration(index, LIFECYCLE_NAMESPACE, &provider, r);
	r->endpoints[0].has_key = 1;
	r->endpoints[0].key = endpoint.verifier;
	test_key_free(&provider);
	test_key_free(&endpoint);
}

/* A statement on endpoint e (0-based) of r by signer, of class, issued seconds after the
 * example issued-at, with sequence. */
static inline void lifecycle_statement(const struct registration *r, size_t e, enum health_signer signer,
                                       enum health_class health_class, uint64_t issued, uint64_t sequence,
                                       struct health_statement *s)
{
	memset(s, 0, sizeof(*s));
	strcpy(s->namespace_name, r->namespace_name);
	memcpy(s->service_id, r->service_id, SERVICE_ID_SIZE);
	memcpy(s->endpoint_id, r->endpoints[e].endpoint_id, ENDPOINT_ID_SIZE);
	s->signer = signer;
	s->health_class = health_class;
	s->issued_at = LIFECYCLE_ISSUED_AT + issued;
	s->sequence = sequence;
}

/* Appends the statement signed by key (the provider's, the endpoint's or any other). */
static inline void lifecycle_sign_statement(const struct health_statement *s, const struct test_key *key,
                                            struct buffer *out)
{
	struct buffer text;
	buffer_init(&text);
	ck_assert_int_eq(health_encode(s, &text), 0);
	test_key_sign_note(key, 1, text.data, text.len, out);
	buffer_free(&text);
}

/* A revocation of endpoint e of r (e < 0: the whole service) by key as signer. */
static inline void lifecycle_revocation(const struct registration *r, int e, enum revocation_signer signer,
                                        const struct test_key *key, enum revocation_reason reason,
                                        uint64_t revoked, uint64_t sequence, struct revocation *out)
{
	memset(out, 0, sizeof(*out));
	strcpy(out->namespace_name, r->namespace_name);
	memcpy(out->service_id, r->service_id, SERVICE_ID_SIZE);
	if (e >= 0) {
		out->has_endpoint = 1;
		memcpy(out->endpoint_id, r->endpoints[e].endpoint_id, ENDPOINT_ID_SIZE);
	}
	out->signer = signer;
	out->key = key->verifier;
	out->reason = reason;
	out->revoked_at = LIFECYCLE_ISSUED_AT + revoked;
	out->sequence = sequence;
}

static inline void lifecycle_sign_revocation(const struct revocation *r, const struct test_key *key,
                                             struct buffer *out)
{
	struct buffer text;
	buffer_init(&text);
	ck_assert_int_eq(revocation_encode(r, &text), 0);
	test_key_sign_note(key, 1, text.data, text.len, out);
	buffer_free(&text);
}

/* Asserts that the document page at relative (a page under schema/) shows data byte for byte: its
 * examples are the vectors. */
static inline void lifecycle_page_shows(const char *relative, const uint8_t *data, size_t len)
{
	size_t page_len = 0;
	uint8_t *page = test_read_file(test_source_path(relative), &page_len);
	int found = 0;
	for (size_t i = 0; !found && i + len <= page_len; i++)
		found = memcmp(page + i, data, len) == 0;
	ck_assert_msg(found, "%s does not show the vector byte for byte", relative);
	free(page);
}

#endif
