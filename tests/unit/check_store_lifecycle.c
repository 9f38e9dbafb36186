/*
 * check_store_lifecycle.c: the promises of server/store/statements.h on real LMDB: health
 * statements keep one latest per endpoint and never go back in sequence; a statement accepted
 * after a seal leaves the sealed view as it was; revocations are one per target, never replayed,
 * refuse every later registration naming the revoked service or endpoint (also after reopening),
 * and leave the view from their stamp on; deregistrations withdraw a service from their stamp on
 * and refuse registrations up to the sequence withdrawn; statements are found by digest, never
 * across namespaces.
 *
 * Registrations are real signed example notes (tests/support/test_keys.h): the view parses a
 * note to know whether a revoked endpoint is one of its own.
 */
#include "crypto/crypto.h"
#include "base/error.h"
#include "schema/registration.h"
#include "server/store/registrations.h"
#include "server/store/statements.h"
#include "server/store/store.h"
#include "test_keys.h"
#include "test_support.h"

#include <check.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAMESPACE "example-net"
#define PROVIDER  "provider.example"

static char dir[256];
static struct store *store;
static struct test_key provider, operator_key;

static struct store *open_store(void)
{
	struct store_options options = {.path = dir};
	struct store *opened = NULL;
	ck_assert_int_eq(store_open(&options, &opened), 0);
	return opened;
}

static void setup(void)
{
	test_make_tempdir(dir, sizeof dir);
	store = open_store();
	test_key_load(TEST_KEY_PROVIDER, &provider);
	test_key_load(TEST_KEY_OTHER, &operator_key);
}

static void teardown(void)
{
	store_close(store);
	test_key_free(&provider);
	test_key_free(&operator_key);
	test_remove_tree(dir);
}

/* A real registration (example number index, the given sequence) as the store takes it. */
struct held_registration {
	struct registration r;
	struct buffer note;
	uint8_t digest[32];
	uint8_t endpoint_ids[3 * 32];
	struct store_registration s;
};

static void make_registration(struct held_registration *h, unsigned index, uint64_t sequence, uint64_t epoch)
{
	memset(h, 0, sizeof *h);
	test_example_registration(index, NAMESPACE, &provider, &h->r);
	h->r.sequence = sequence;
	buffer_init(&h->note);
	test_sign_registration(&h->r, &provider, &h->note);
	ck_assert_int_eq(crypto_sha256(h->note.data, h->note.len, h->digest), 0);
	for (size_t i = 0; i < h->r.endpoint_count; i++)
		memcpy(h->endpoint_ids + 32 * i, h->r.endpoints[i].endpoint_id, 32);
	h->s = (struct store_registration){.namespace_name = NAMESPACE,
	                                   .service_id = h->r.service_id,
	                                   .provider = PROVIDER,
	                                   .sequence = sequence,
	                                   .expires = h->r.expires,
	                                   .digest = h->digest,
	                                   .endpoint_ids = h->endpoint_ids,
	                                   .endpoint_count = h->r.endpoint_count,
	                                   .note = h->note.data,
	                                   .note_len = h->note.len,
	                                   .epoch = epoch,
	                                   .max_records = UINT64_MAX,
	                                   .max_bytes = UINT64_MAX};
}

static void free_registration(struct held_registration *h)
{
	registration_clear(&h->r);
	buffer_free(&h->note);
}

static int submit_registration(unsigned index, uint64_t sequence, uint64_t epoch)
{
	struct held_registration h;
	make_registration(&h, index, sequence, epoch);
	int rc = store_registration_submit(store, &h.s, NULL);
	free_registration(&h);
	return rc;
}

/* The services (their first id byte... the whole id) the view of epoch holds, as a count and
 * whether service_id is among them. */
struct view_probe {
	const uint8_t *service_id;
	int found;
	size_t count;
	uint64_t sequence;
	size_t health_count;
	uint64_t health_sequence;
};

static int probe_visit(void *context, const struct store_record *record, const struct store_statement *health,
                       size_t health_count)
{
	struct view_probe *p = context;
	p->count++;
	if (memcmp(record->service_id, p->service_id, 32) == 0) {
		p->found = 1;
		p->sequence = record->sequence;
		p->health_count = health_count;
		p->health_sequence = health_count ? health[0].sequence : 0;
	}
	return 0;
}

static struct view_probe view(uint64_t epoch, const uint8_t *service_id)
{
	struct view_probe p = {.service_id = service_id};
	ck_assert_int_eq(store_seal(store, epoch, 0), 0);
	ck_assert_int_eq(store_lifecycle_view_foreach(store, NAMESPACE, epoch, 0, probe_visit, &p), 0);
	return p;
}

/* A statement on endpoint 0 of example registration index, sequence, issued at, stamped for epoch. */
struct held_health {
	struct registration r;
	char note[160];
	uint8_t digest[32];
	struct store_health s;
};

static void make_health(struct held_health *h, unsigned index, uint64_t sequence, uint64_t epoch)
{
	memset(h, 0, sizeof *h);
	test_example_registration(index, NAMESPACE, &provider, &h->r);
	/* The store keeps any note the caller checked; its bytes only need to be distinct. */
	snprintf(h->note, sizeof h->note, "health of %u sequence %llu\n", index,
	         (unsigned long long)sequence);
	ck_assert_int_eq(crypto_sha256((const uint8_t *)h->note, strlen(h->note), h->digest), 0);
	h->s = (struct store_health){.namespace_name = NAMESPACE,
	                             .service_id = h->r.service_id,
	                             .endpoint_id = h->r.endpoints[0].endpoint_id,
	                             .issued_at = 1000 + sequence,
	                             .sequence = sequence,
	                             .digest = h->digest,
	                             .note = (const uint8_t *)h->note,
	                             .note_len = strlen(h->note),
	                             .epoch = epoch};
}

static int submit_health(unsigned index, uint64_t sequence, uint64_t epoch, uint8_t digest[32])
{
	struct held_health h;
	make_health(&h, index, sequence, epoch);
	int rc = store_health_submit(store, &h.s, NULL);
	if (digest)
		memcpy(digest, h.digest, 32);
	registration_clear(&h.r);
	return rc;
}

START_TEST(test_health_latest_and_sealed)
{
	struct registration r;
	uint8_t first[32], second[32], third[32];
	struct buffer note;
	buffer_init(&note);
	test_example_registration(1, NAMESPACE, &provider, &r);
	ck_assert_int_eq(submit_registration(1, 1, 1), 0);
	ck_assert_int_eq(submit_health(1, 5, 1, first), 0);
	/* Not above the last: replayed or older, whatever its epoch. */
	ck_assert_int_eq(submit_health(1, 5, 1, NULL), DIRAUTH_ERR_ROLLBACK);
	ck_assert_int_eq(submit_health(1, 4, 2, NULL), DIRAUTH_ERR_ROLLBACK);
	struct view_probe p = view(1, r.service_id);
	ck_assert(p.found);
	ck_assert_uint_eq(p.health_count, 1);
	ck_assert_uint_eq(p.health_sequence, 5);
	/* Accepted after the seal of 1: stamped 2; the sealed view of 1 is as it was, and the
	 * statement it holds can still be fetched by its digest. */
	ck_assert_int_eq(submit_health(1, 6, 1, second), 0);
	ck_assert_int_eq(submit_health(1, 7, 1, third), 0);
	struct view_probe again = {.service_id = r.service_id};
	ck_assert_int_eq(store_lifecycle_view_foreach(store, NAMESPACE, 1, 0, probe_visit, &again), 0);
	ck_assert_uint_eq(again.health_sequence, 5);
	ck_assert_int_eq(store_statement_get(store, NAMESPACE, first, &note), 0);
	ck_assert_int_eq(store_statement_get(store, NAMESPACE, third, &note), 0);
	ck_assert_str_eq((const char *)note.data, "health of 1 sequence 7\n");
	/* 6 was replaced within epoch 2 before anyone could read it: gone. */
	ck_assert_int_eq(store_statement_get(store, NAMESPACE, second, &note), DIRAUTH_ERR_NOT_FOUND);
	/* Never across namespaces. */
	ck_assert_int_eq(store_statement_get(store, "other-net", third, &note), DIRAUTH_ERR_NOT_FOUND);
	p = view(2, r.service_id);
	ck_assert_uint_eq(p.health_sequence, 7);
	/* Sealed past 1: the statement only epoch 1 held goes with the next write. */
	ck_assert_int_eq(submit_health(1, 8, 3, NULL), 0);
	ck_assert_int_eq(store_statement_get(store, NAMESPACE, first, &note), DIRAUTH_ERR_NOT_FOUND);
	registration_clear(&r);
	buffer_free(&note);
}
END_TEST

/* A service's health goes with its record when the record expires, and its statements can no
 * longer be fetched; the service registered again starts its health anew. */
START_TEST(test_health_forgotten_at_expiry)
{
	struct registration r;
	uint8_t digest[32];
	struct buffer note;
	buffer_init(&note);
	test_example_registration(1, NAMESPACE, &provider, &r);
	ck_assert_int_eq(submit_registration(1, 1, 1), 0);
	ck_assert_int_eq(submit_health(1, 5, 1, digest), 0);
	ck_assert_int_eq(submit_registration(2, 1, 1), 0);
	uint8_t other[32];
	ck_assert_int_eq(submit_health(2, 3, 1, other), 0);
	struct view_probe p = view(1, r.service_id);
	ck_assert_uint_eq(p.health_count, 1);
	/* Sealed with its valid-after past the registrations' expiry: both records and their
	 * health are gone. */
	ck_assert_int_eq(store_seal(store, 2, r.expires), 0);
	ck_assert_int_eq(store_statement_get(store, NAMESPACE, digest, &note), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(store_statement_get(store, NAMESPACE, other, &note), DIRAUTH_ERR_NOT_FOUND);
	struct view_probe gone = {.service_id = r.service_id};
	ck_assert_int_eq(store_lifecycle_view_foreach(store, NAMESPACE, 2, r.expires, probe_visit, &gone), 0);
	ck_assert(!gone.found);
	registration_clear(&r);
	buffer_free(&note);
}
END_TEST

/* A revocation of example registration index (endpoint e, or -1: the whole service). */
struct held_revocation {
	struct registration r;
	char note[400];
	uint8_t digest[32];
	struct store_revocation s;
};

static void make_revocation(struct held_revocation *h, unsigned index, int e, const struct test_key *key,
                            uint64_t sequence, int in_order, uint64_t epoch)
{
	memset(h, 0, sizeof *h);
	test_example_registration(index, NAMESPACE, &provider, &h->r);
	snprintf(h->note, sizeof h->note, "revocation of %u/%d by %s sequence %llu\n", index, e,
	         key->verifier.name, (unsigned long long)sequence);
	ck_assert_int_eq(crypto_sha256((const uint8_t *)h->note, strlen(h->note), h->digest), 0);
	h->s = (struct store_revocation){.namespace_name = NAMESPACE,
	                                 .service_id = h->r.service_id,
	                                 .endpoint_id = e >= 0 ? h->r.endpoints[e].endpoint_id : NULL,
	                                 .key = &key->verifier,
	                                 .sequence = sequence,
	                                 .in_order = in_order,
	                                 .digest = h->digest,
	                                 .note = (const uint8_t *)h->note,
	                                 .note_len = strlen(h->note),
	                                 .epoch = epoch};
}

static int submit_revocation(unsigned index, int e, const struct test_key *key, uint64_t sequence,
                             int in_order, uint64_t epoch, uint64_t *stamp)
{
	struct held_revocation h;
	make_revocation(&h, index, e, key, sequence, in_order, epoch);
	int rc = store_revocation_submit(store, &h.s, stamp);
	registration_clear(&h.r);
	return rc;
}

static enum store_withdrawal withdrawal_of(unsigned index, uint64_t sequence)
{
	struct held_registration h;
	enum store_withdrawal w;
	make_registration(&h, index, sequence, 1);
	ck_assert_int_eq(store_registration_withdrawn(store, NAMESPACE, h.r.service_id, sequence,
	                                              h.endpoint_ids, h.r.endpoint_count, &w),
	                 0);
	free_registration(&h);
	return w;
}

struct revocation_count {
	size_t count;
	uint64_t stamp;
};

static int count_revocations(void *context, const struct store_listed_revocation *r)
{
	struct revocation_count *c = context;
	c->count++;
	c->stamp = r->stamp;
	return 0;
}

START_TEST(test_revocation_for_ever)
{
	struct registration r;
	uint64_t stamp = 0;
	test_example_registration(1, NAMESPACE, &provider, &r);
	ck_assert_int_eq(submit_registration(1, 1, 1), 0);
	ck_assert_int_eq(submit_registration(2, 1, 1), 0);
	ck_assert(view(1, r.service_id).found);

	/* Endpoint 1 of service 1, accepted after the seal of 1: stamped 2. */
	ck_assert_int_eq(submit_revocation(1, 1, &provider, 3, 1, 1, &stamp), 0);
	ck_assert_uint_eq(stamp, 2);
	/* The same (key, sequence) again, whatever the target; a lower one from the key itself. */
	ck_assert_int_eq(submit_revocation(1, 1, &provider, 3, 1, 2, NULL), DIRAUTH_ERR_ROLLBACK);
	ck_assert_int_eq(submit_revocation(2, -1, &provider, 3, 0, 2, NULL), DIRAUTH_ERR_ROLLBACK);
	ck_assert_int_eq(submit_revocation(2, -1, &provider, 2, 1, 2, NULL), DIRAUTH_ERR_ROLLBACK);
	/* The target revoked already, by another key. */
	ck_assert_int_eq(submit_revocation(1, 1, &operator_key, 1, 1, 2, NULL), DIRAUTH_ERR_EXISTS);
	/* From a peer, any unused sequence: out of order is fine. */
	ck_assert_int_eq(submit_revocation(2, 0, &provider, 2, 0, 2, NULL), 0);

	/* Epoch 1 was sealed before: its view still holds service 1. Epoch 2's does not. */
	struct view_probe p = {.service_id = r.service_id};
	ck_assert_int_eq(store_lifecycle_view_foreach(store, NAMESPACE, 1, 0, probe_visit, &p), 0);
	ck_assert(p.found);
	ck_assert(!view(2, r.service_id).found);
	struct revocation_count c = {0, 0};
	ck_assert_int_eq(store_revocation_view_foreach(store, NAMESPACE, 2, count_revocations, &c), 0);
	ck_assert_uint_eq(c.count, 2);
	ck_assert_int_eq(store_revocation_view_foreach(store, NAMESPACE, 1, count_revocations, &c),
	                 DIRAUTH_ERR_STALE);

	/* A higher sequence naming the revoked endpoint, and its replay: refused, also after a
	 * reopen; the store says why. */
	ck_assert_int_eq(submit_registration(1, 2, 3), DIRAUTH_ERR_REFUSED);
	ck_assert_int_eq(withdrawal_of(1, 2), STORE_WITHDRAWN_REVOKED);
	store_close(store);
	store = open_store();
	ck_assert_int_eq(submit_registration(1, 9, 3), DIRAUTH_ERR_REFUSED);
	ck_assert_int_eq(
	    store_revocation_find(store, NAMESPACE, r.service_id, r.endpoints[1].endpoint_id, NULL), 0);
	ck_assert_int_eq(store_revocation_find(store, NAMESPACE, r.service_id, NULL, NULL),
	                 DIRAUTH_ERR_NOT_FOUND);
	ck_assert(!view(3, r.service_id).found);
	ck_assert_int_eq(withdrawal_of(3, 1), STORE_WITHDRAWN_NONE);

	/* Service 2 revoked whole: an endpoint of it is revoked already, in order or from a peer,
	 * and neither refusal keeps anything, its (key, sequence) included. */
	struct registration second;
	test_example_registration(2, NAMESPACE, &provider, &second);
	ck_assert_int_eq(submit_revocation(2, -1, &operator_key, 1, 1, 3, NULL), 0);
	ck_assert_int_eq(submit_revocation(2, 1, &operator_key, 2, 1, 3, NULL), DIRAUTH_ERR_EXISTS);
	ck_assert_int_eq(submit_revocation(2, 1, &provider, 7, 0, 3, NULL), DIRAUTH_ERR_EXISTS);
	ck_assert_int_eq(
	    store_revocation_find(store, NAMESPACE, second.service_id, second.endpoints[1].endpoint_id, NULL),
	    DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(submit_revocation(1, -1, &operator_key, 2, 1, 3, NULL), 0);
	registration_clear(&second);
	registration_clear(&r);
}
END_TEST

START_TEST(test_deregistration)
{
	struct registration r;
	uint8_t digest[32] = {7};
	uint64_t stamp = 0;
	const char *note = "deregistration\n";
	test_example_registration(1, NAMESPACE, &provider, &r);
	struct store_deregistration d = {.namespace_name = NAMESPACE,
	                                 .service_id = r.service_id,
	                                 .sequence = 2,
	                                 .digest = digest,
	                                 .note = (const uint8_t *)note,
	                                 .note_len = strlen(note),
	                                 .epoch = 1};
	/* Unknown here. */
	ck_assert_int_eq(store_deregistration_submit(store, &d, NULL), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(submit_registration(1, 2, 1), 0);
	ck_assert(view(1, r.service_id).found);
	/* Below the highest sequence: it would withdraw nothing listed. */
	d.sequence = 1;
	ck_assert_int_eq(store_deregistration_submit(store, &d, NULL), DIRAUTH_ERR_ROLLBACK);
	d.sequence = 3;
	ck_assert_int_eq(store_deregistration_submit(store, &d, &stamp), 0);
	ck_assert_uint_eq(stamp, 2);
	ck_assert_int_eq(store_deregistration_submit(store, &d, NULL), DIRAUTH_ERR_ROLLBACK);
	ck_assert(!view(2, r.service_id).found);
	/* Up to the sequence withdrawn: refused; above it: a new registration of the service. */
	ck_assert_int_eq(submit_registration(1, 3, 3), DIRAUTH_ERR_REFUSED);
	ck_assert_int_eq(withdrawal_of(1, 3), STORE_WITHDRAWN_DEREGISTERED);
	ck_assert_int_eq(submit_registration(1, 4, 3), 0);
	struct view_probe p = view(3, r.service_id);
	ck_assert(p.found);
	ck_assert_uint_eq(p.sequence, 4);
	registration_clear(&r);
}
END_TEST

/* What a health statement's checks read of a service, in one read transaction: its owner, its
 * current registration's note, and whether that registration (naming the endpoint) is withdrawn. */
START_TEST(test_service_state)
{
	struct held_registration h;
	struct store_service_state state;
	struct buffer note;
	buffer_init(&note);
	make_registration(&h, 1, 2, 1);
	ck_assert_int_eq(store_service_state(store, h.r.service_id, h.endpoint_ids, 1, &state, &note),
	                 DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(store_registration_submit(store, &h.s, NULL), 0);
	ck_assert_int_eq(store_service_state(store, h.r.service_id, h.endpoint_ids, 1, &state, &note), 0);
	ck_assert_str_eq(state.namespace_name, NAMESPACE);
	ck_assert_str_eq(state.provider, PROVIDER);
	ck_assert(state.current);
	ck_assert_int_eq(state.withdrawal, STORE_WITHDRAWN_NONE);
	ck_assert_uint_eq(note.len, h.note.len);
	ck_assert_mem_eq(note.data, h.note.data, note.len);

	/* Its first endpoint revoked: the state says so, for that endpoint. */
	ck_assert_int_eq(submit_revocation(1, 0, &provider, 1, 1, 1, NULL), 0);
	ck_assert_int_eq(store_service_state(store, h.r.service_id, h.endpoint_ids, 1, &state, &note), 0);
	ck_assert_int_eq(state.withdrawal, STORE_WITHDRAWN_REVOKED);
	ck_assert_int_eq(store_service_state(store, h.r.service_id, h.endpoint_ids + 32, 1, &state, &note),
	                 0);
	ck_assert_int_eq(state.withdrawal, STORE_WITHDRAWN_NONE);
	ck_assert_int_eq(store_service_state(store, h.r.service_id, NULL, 1, &state, &note),
	                 DIRAUTH_ERR_SYNTAX);
	buffer_free(&note);
	free_registration(&h);
}
END_TEST

static Suite *store_lifecycle_suite(void)
{
	Suite *suite = suite_create("store_lifecycle");
	TCase *tc = tcase_create("store_lifecycle");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_health_latest_and_sealed);
	tcase_add_test(tc, test_health_forgotten_at_expiry);
	tcase_add_test(tc, test_revocation_for_ever);
	tcase_add_test(tc, test_deregistration);
	tcase_add_test(tc, test_service_state);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(store_lifecycle_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
