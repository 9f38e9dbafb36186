/*
 * test_several_lifecycle.c: consensus method 2 across several authorities (issue 10, "the same
 * scenarios with 3 authorities"), with real processes on loopback.
 *
 * Three authorities, k = 2, each its own dirauthd and dirauth-signer (tests/harness/cluster.h),
 * serve one namespace configured with "lifecycle: true". Epochs are 6 s long and the clocks move
 * one second per 250 ms of real time (DIRAUTH_CLUSTER_MS_PER_SECOND slows the pace), so the test
 * takes about 15 s. Along six epochs:
 *   - every epoch is published with consensus method 2 by all three, with one header text and
 *     one body, which `dirauthctl fetch` verifies as a mirror does;
 *   - a revocation of an endpoint posted to one authority only leaves the next snapshot at every
 *     authority and is listed there; one posted to two while the third withholds it (its vote
 *     lacks it) cannot keep the endpoint in the consensus, and the third learns it (it then
 *     refuses a newer registration naming the revoked endpoint);
 *   - a health statement posted to one authority only is unknown while one vote holds it (k = 2)
 *     and published with its class and signer once the others took it from that vote; a newer
 *     one posted to one authority only is published once two hold it, the older until then (the
 *     k-th newest, docs/protocol.md);
 *   - the older statement replayed is refused (outside the clock skew by now), one signed again
 *     with its lower sequence is refused as replayed at each authority, and neither changes
 *     anything: the newer one stays published;
 *   - an authority restored from a backup taken before the revocations catches up, publishes
 *     the same snapshot, and learns the revocations again from the latest snapshot;
 *   - a deregistration posted to one authority leaves the service listed (two votes still hold
 *     it, k = 2); posted to a second, the service is gone from the next snapshot at all three
 *     (n - k + 1 = 2 stopped listing it), and the first refuses the withdrawn sequence.
 */
#include "test_keys.h"
#include "test_support.h"

#include "schema/deregistration.h"
#include "base/error.h"
#include "schema/health.h"
#include "schema/note.h"
#include "schema/registration.h"
#include "schema/revocation.h"
#include "schema/snapshot.h"
#include "schema/vote_body.h"
#include "schema/vote_envelope.h"
#include "signer/key.h"
#include "tests/harness/cluster.h"

#include <check.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N      3
#define K      2
#define LENGTH 6

/* Health stays fresh 4 epochs and revocations listed 6, so that each step below sees what the
 * one before posted, and the restored authority still finds the revocations listed. */
static struct cluster *start_cluster(void)
{
	struct cluster_options options = {
	    .authorities = N,
	    .threshold = K,
	    .epoch_length = LENGTH,
	    .ms_per_second = 250,
	    .namespace_extra = ", lifecycle: true, health_freshness_epochs: 4, revocation_epochs: 6"};
	return cluster_start(&options);
}

/* --- what a provider signs ------------------------------------------------------------------ */

struct service {
	struct buffer note;
	struct registration r;
};

static void service_register(struct cluster *c, const char *label, uint64_t number, uint64_t sequence,
                             struct service *out)
{
	struct note *parsed = NULL;
	cluster_registration(c, cluster_provider_key(c, 0), label, number, sequence, &out->note);
	ck_assert_int_eq(registration_parse_note(out->note.data, out->note.len, &out->r, &parsed), 0);
	note_free(parsed);
	ck_assert_uint_eq(
	    cluster_register(c, CLUSTER_BIT(0) | CLUSTER_BIT(1) | CLUSTER_BIT(2), &out->note, NULL), N);
}

static void service_free(struct service *s)
{
	buffer_free(&s->note);
	registration_clear(&s->r);
}

static void sign_text(struct cluster *c, const struct buffer *text, struct buffer *out)
{
	struct note_signature signature;
	ck_assert(signer_key_sign(cluster_provider_key(c, 0), text->data, text->len, &signature) == 0);
	buffer_init(out);
	ck_assert(note_format(text->data, text->len, &signature, 1, out) == 0);
}

/* A provider-signed health statement for endpoint e of s. */
static void health_note(struct cluster *c, const struct service *s, size_t e, enum health_class health_class,
                        uint64_t issued_at, uint64_t sequence, struct buffer *out)
{
	struct health_statement h;
	struct buffer text;
	memset(&h, 0, sizeof h);
	snprintf(h.namespace_name, sizeof h.namespace_name, "%s", CLUSTER_NAMESPACE);
	memcpy(h.service_id, s->r.service_id, SERVICE_ID_SIZE);
	memcpy(h.endpoint_id, s->r.endpoints[e].endpoint_id, ENDPOINT_ID_SIZE);
	h.signer = HEALTH_SIGNER_PROVIDER;
	h.health_class = health_class;
	h.issued_at = issued_at;
	h.sequence = sequence;
	buffer_init(&text);
	ck_assert_int_eq(health_encode(&h, &text), 0);
	sign_text(c, &text, out);
	buffer_free(&text);
}

/* A provider-signed revocation of endpoint e of s (e < 0: the whole service). */
static void revocation_note(struct cluster *c, const struct service *s, int e, uint64_t sequence,
                            struct buffer *out)
{
	struct revocation r;
	struct buffer text;
	memset(&r, 0, sizeof r);
	snprintf(r.namespace_name, sizeof r.namespace_name, "%s", CLUSTER_NAMESPACE);
	memcpy(r.service_id, s->r.service_id, SERVICE_ID_SIZE);
	if (e >= 0) {
		r.has_endpoint = 1;
		memcpy(r.endpoint_id, s->r.endpoints[e].endpoint_id, ENDPOINT_ID_SIZE);
	}
	r.signer = REVOCATION_SIGNER_PROVIDER;
	r.key = *signer_key_verifier(cluster_provider_key(c, 0));
	r.reason = REVOCATION_RETIRED;
	r.revoked_at = cluster_now(c);
	r.sequence = sequence;
	buffer_init(&text);
	ck_assert_int_eq(revocation_encode(&r, &text), 0);
	sign_text(c, &text, out);
	buffer_free(&text);
}

/* A provider-signed deregistration of s up to its sequence. */
static void deregistration_note(struct cluster *c, const struct service *s, struct buffer *out)
{
	struct deregistration d;
	struct buffer text;
	memset(&d, 0, sizeof d);
	snprintf(d.namespace_name, sizeof d.namespace_name, "%s", CLUSTER_NAMESPACE);
	memcpy(d.service_id, s->r.service_id, SERVICE_ID_SIZE);
	d.provider = *signer_key_verifier(cluster_provider_key(c, 0));
	d.sequence = s->r.sequence;
	d.requested_at = cluster_now(c);
	buffer_init(&text);
	ck_assert_int_eq(deregistration_encode(&d, &text), 0);
	sign_text(c, &text, out);
	buffer_free(&text);
}

/* Posts note to path of each authority in members; each must answer expected. */
static void post_expect(struct cluster *c, unsigned members, const char *path, const struct buffer *note,
                        long expected)
{
	for (size_t i = 0; i < N; i++) {
		if (!(members & CLUSTER_BIT(i)))
			continue;
		struct cluster_response response;
		long status = cluster_post(c, i, path, note->data, note->len, &response);
		ck_assert_msg(status == expected, "%s %s: %ld %.*s", cluster_name(c, i), path, status,
		              (int)response.body.len, (const char *)response.body.data);
		cluster_response_free(&response);
	}
}

/* --- what the authorities publish ----------------------------------------------------------- */

/* The published snapshot of epoch, the same at all three: header text and body identical, of
 * consensus method 2, signed by at least k members. *body gets the body, *parsed its sections
 * (borrowing from it). */
static void published(struct cluster *c, uint64_t epoch, struct buffer *body, struct snapshot_body **parsed)
{
	struct buffer first_text;
	buffer_init(&first_text);
	buffer_init(body);
	for (size_t i = 0; i < N; i++) {
		struct snapshot_header header;
		struct buffer header_note, served;
		ck_assert_msg(cluster_wait_epoch(c, i, epoch, 10000, &header, NULL) == 0,
		              "%s did not publish epoch %llu", cluster_name(c, i), (unsigned long long)epoch);
		ck_assert_int_eq(cluster_snapshot(c, i, epoch, &header_note, &served), 0);
		ck_assert_int_ge(cluster_signers(c, header_note.data, header_note.len, NULL), K);
		struct note *note = NULL;
		ck_assert_int_eq(note_parse(header_note.data, header_note.len, &note), 0);
		ck_assert_int_eq(snapshot_header_parse(note->text, note->text_len, &header), 0);
		ck_assert_msg(header.consensus_method == 2, "%s epoch %llu: method %llu", cluster_name(c, i),
		              (unsigned long long)epoch, (unsigned long long)header.consensus_method);
		if (i == 0) {
			ck_assert(buffer_append(&first_text, note->text, note->text_len) == 0);
			ck_assert(buffer_append(body, served.data, served.len) == 0);
		} else {
			ck_assert_msg(first_text.len == note->text_len &&
			                  memcmp(first_text.data, note->text, note->text_len) == 0,
			              "%s publishes another header for epoch %llu", cluster_name(c, i),
			              (unsigned long long)epoch);
			ck_assert_msg(body->len == served.len &&
			                  memcmp(body->data, served.data, served.len) == 0,
			              "%s publishes another body for epoch %llu", cluster_name(c, i),
			              (unsigned long long)epoch);
		}
		note_free(note);
		buffer_free(&header_note);
		buffer_free(&served);
	}
	struct snapshot_body_limits limits = {1000, 1000, 1000};
	ck_assert_int_eq(snapshot_body_parse_sections(body->data, body->len, &limits, parsed), 0);
	buffer_free(&first_text);
}

static int lists_record(const struct snapshot_body *b, const struct service *s)
{
	for (size_t i = 0; i < b->record_count; i++)
		if (memcmp(b->records[i].service_id, s->r.service_id, SERVICE_ID_SIZE) == 0)
			return 1;
	return 0;
}

/* The revocation listed for s (e < 0: the whole service), or NULL. */
static const struct snapshot_revocation *listed_revocation(const struct snapshot_body *b,
                                                           const struct service *s, int e)
{
	for (size_t i = 0; i < b->revocation_count; i++) {
		const struct snapshot_revocation *r = &b->revocations[i];
		if (memcmp(r->service_id, s->r.service_id, SERVICE_ID_SIZE) == 0 &&
		    r->has_endpoint == (e >= 0) &&
		    (e < 0 || memcmp(r->endpoint_id, s->r.endpoints[e].endpoint_id, ENDPOINT_ID_SIZE) == 0))
			return r;
	}
	return NULL;
}

/* The health entry published for endpoint e of s, or NULL (unknown). */
static const struct snapshot_health *health_entry(const struct snapshot_body *b, const struct service *s,
                                                  size_t e)
{
	for (size_t i = 0; i < b->health_count; i++)
		if (memcmp(b->health[i].endpoint_id, s->r.endpoints[e].endpoint_id, ENDPOINT_ID_SIZE) == 0)
			return &b->health[i];
	return NULL;
}

/* Authority i's vote for epoch lists a revocation of endpoint e of s. */
static int vote_lists_revocation(struct cluster *c, size_t i, uint64_t epoch, const struct service *s,
                                 size_t e)
{
	char path[256];
	struct cluster_response response;
	snprintf(path, sizeof path, "/v1/%s/votes/%llu/%s", CLUSTER_NAMESPACE, (unsigned long long)epoch,
	         cluster_name(c, i));
	ck_assert_int_eq(cluster_get(c, (i + 1) % N, path, &response), 200);
	struct vote_envelope parts;
	struct vote_body *body = NULL;
	struct vote_body_limits limits = {1000, 1000, 1000};
	ck_assert_int_eq(
	    vote_envelope_parse(response.body.data, response.body.len, response.body.len, &parts), 0);
	ck_assert_int_eq(vote_body_parse_sections(parts.body, parts.body_len, &limits, &body), 0);
	int found = 0;
	for (size_t r = 0; r < body->revocation_count; r++)
		found |= memcmp(body->revocations[r].service_id, s->r.service_id, SERVICE_ID_SIZE) == 0 &&
		         body->revocations[r].has_endpoint &&
		         memcmp(body->revocations[r].endpoint_id, s->r.endpoints[e].endpoint_id,
		                ENDPOINT_ID_SIZE) == 0;
	vote_body_free(body);
	cluster_response_free(&response);
	return found;
}

/* Waits (the clocks stand still meanwhile) until each authority in members has taken, after
 * publishing epoch, the statements and revocations its peers held (its "reconciled" line). */
static void wait_reconciled(struct cluster *c, unsigned members, uint64_t epoch)
{
	char text[96];
	snprintf(text, sizeof text,
	         " epoch %llu dirauthd: namespace %s: reconciled: ", (unsigned long long)epoch,
	         CLUSTER_NAMESPACE);
	for (size_t i = 0; i < N; i++) {
		int waited = 0;
		while ((members & CLUSTER_BIT(i)) && !cluster_log_contains(c, i, text)) {
			ck_assert_msg(waited < 20000, "%s did not reconcile epoch %llu", cluster_name(c, i),
			              (unsigned long long)epoch);
			test_sleep_ms(50);
			waited += 50;
		}
	}
}

/* Runs to one second before epoch's cut-off: what is posted now is in epoch's views. */
static void run_to_before_vote(struct cluster *c, uint64_t epoch)
{
	struct epoch_phases phases;
	cluster_epoch_phases(c, epoch, &phases);
	if (cluster_now(c) + 1 < phases.vote_at)
		cluster_run_to(c, phases.vote_at - 1);
}

START_TEST(test_three_authorities_method_two)
{
	struct cluster *c = start_cluster();
	struct service a, b, s3;
	service_register(c, "lifecycle-a", 1, 1, &a);
	service_register(c, "lifecycle-b", 2, 1, &b);
	service_register(c, "lifecycle-c", 3, 1, &s3);

	/* The first snapshot: method 2, the same at all three, nothing revoked, no health yet. */
	uint64_t e1 = cluster_next_epoch(c);
	cluster_run_epoch(c, e1);
	struct buffer body;
	struct snapshot_body *p = NULL;
	published(c, e1, &body, &p);
	ck_assert_uint_eq(p->record_count, 3);
	ck_assert_uint_eq(p->revocation_count, 0);
	ck_assert_uint_eq(p->health_count, 0);
	snapshot_body_free(p);
	buffer_free(&body);
	/* Authority 2's backup, taken before any revocation. */
	char command[2048];
	cluster_stop_authority(c, 2);
	snprintf(command, sizeof command, "cp -a '%s/a2/data' '%s/a2/data-backup'", cluster_dir(c),
	         cluster_dir(c));
	ck_assert_int_eq(system(command), 0);
	cluster_restart(c, 2);

	/* Into the views of e1 + 1: health of a's first endpoint to authority 0 only; a revocation of
	 * b's first endpoint to authority 1 only; a revocation of c's second endpoint to 0 and 1,
	 * which authority 2 withholds (it never gets it from a provider). */
	uint64_t e2 = e1 + 1;
	run_to_before_vote(c, e2);
	struct buffer healthy, revoke_b, revoke_c;
	health_note(c, &a, 0, HEALTH_HEALTHY, cluster_now(c), 1, &healthy);
	revocation_note(c, &b, 0, 1, &revoke_b);
	revocation_note(c, &s3, 1, 2, &revoke_c);
	post_expect(c, CLUSTER_BIT(0), "/v1/endpoint-health", &healthy, 202);
	post_expect(c, CLUSTER_BIT(1), "/v1/revocations", &revoke_b, 202);
	post_expect(c, CLUSTER_BIT(0) | CLUSTER_BIT(1), "/v1/revocations", &revoke_c, 202);
	cluster_run_epoch(c, e2);
	published(c, e2, &body, &p);
	wait_reconciled(c, CLUSTER_BIT(0) | CLUSTER_BIT(1) | CLUSTER_BIT(2), e2);
	ck_assert_msg(!vote_lists_revocation(c, 2, e2, &s3, 1),
	              "authority 2's vote should lack c's revocation");
	ck_assert(vote_lists_revocation(c, 0, e2, &s3, 1));
	ck_assert(vote_lists_revocation(c, 1, e2, &s3, 1));
	/* b and c are gone at every authority and listed; a stays, its health unknown: one vote
	 * holds a statement, k = 2 are needed. */
	ck_assert(lists_record(p, &a));
	ck_assert(!lists_record(p, &b));
	ck_assert(!lists_record(p, &s3));
	ck_assert_ptr_nonnull(listed_revocation(p, &b, 0));
	ck_assert_ptr_nonnull(listed_revocation(p, &s3, 1));
	ck_assert_uint_eq(listed_revocation(p, &s3, 1)->since, e2);
	ck_assert_uint_eq(listed_revocation(p, &b, 0)->since, e2);
	ck_assert_ptr_null(health_entry(p, &a, 0));
	snapshot_body_free(p);
	buffer_free(&body);

	/* Into e2 + 1: a newer statement (draining) to authority 0 only. The others took the first
	 * from authority 0's vote, so two votes hold it and one the newer: the first is published,
	 * with its signer. The revocations are carried. */
	uint64_t e3 = e2 + 1;
	run_to_before_vote(c, e3);
	struct buffer draining;
	health_note(c, &a, 0, HEALTH_DRAINING, cluster_now(c), 2, &draining);
	post_expect(c, CLUSTER_BIT(0), "/v1/endpoint-health", &draining, 202);
	cluster_run_epoch(c, e3);
	published(c, e3, &body, &p);
	wait_reconciled(c, CLUSTER_BIT(1) | CLUSTER_BIT(2), e3);
	const struct snapshot_health *h = health_entry(p, &a, 0);
	ck_assert_ptr_nonnull(h);
	ck_assert_int_eq(h->health_class, HEALTH_HEALTHY);
	ck_assert_int_eq(h->signer, HEALTH_SIGNER_PROVIDER);
	ck_assert_uint_eq(h->note_len, healthy.len);
	ck_assert_mem_eq(h->note, healthy.data, healthy.len);
	ck_assert_ptr_nonnull(listed_revocation(p, &b, 0));
	ck_assert_ptr_nonnull(listed_revocation(p, &s3, 1));
	ck_assert(!lists_record(p, &b));
	ck_assert(!lists_record(p, &s3));
	snapshot_body_free(p);
	buffer_free(&body);

	/* Authority 2 learned the revocation of c's endpoint from its peers: a newer registration of
	 * c naming it is refused. */
	struct buffer again;
	long statuses[N];
	cluster_registration(c, cluster_provider_key(c, 0), "lifecycle-c", 3, 2, &again);
	ck_assert_uint_eq(cluster_register(c, CLUSTER_BIT(2), &again, statuses), 0);
	ck_assert_int_eq(statuses[2], 409);
	buffer_free(&again);

	/* Into e3 + 1: the old statement replayed is refused, as is one signed now with the lower
	 * sequence (each authority holds the newer by now); the newer one stays published. */
	uint64_t e4 = e3 + 1;
	run_to_before_vote(c, e4);
	struct buffer lower;
	health_note(c, &a, 0, HEALTH_HEALTHY, cluster_now(c), 1, &lower);
	post_expect(c, CLUSTER_BIT(1), "/v1/endpoint-health", &healthy, 422);
	post_expect(c, CLUSTER_BIT(0) | CLUSTER_BIT(1) | CLUSTER_BIT(2), "/v1/endpoint-health", &lower, 409);
	buffer_free(&lower);
	cluster_run_epoch(c, e4);
	published(c, e4, &body, &p);
	h = health_entry(p, &a, 0);
	ck_assert_ptr_nonnull(h);
	ck_assert_int_eq(h->health_class, HEALTH_DRAINING);
	ck_assert_uint_eq(h->note_len, draining.len);
	ck_assert_mem_eq(h->note, draining.data, draining.len);
	ck_assert(!lists_record(p, &b));
	snapshot_body_free(p);
	buffer_free(&body);
	/* A mirror verifies what the three signed, health and revocations included. */
	char mirror[512];
	snprintf(mirror, sizeof mirror, "%s/mirror", cluster_dir(c));
	struct test_outcome outcome;
	ck_assert_msg(cluster_fetch(c, 1, mirror, cluster_now(c), &outcome) == 0, "fetch: %s", outcome.err);
	ck_assert(strstr(outcome.out, "verified snapshot") != NULL);
	test_outcome_free(&outcome);

	/* Authority 2 restored from its backup has lost both revocations (its vote lists b and c
	 * again). It catches up with the snapshots it missed, publishes the same snapshot as the
	 * others, and learns the revocations again from the latest, which still lists them: newer
	 * registrations naming the revoked endpoints are refused again. */
	cluster_stop_authority(c, 2);
	snprintf(command, sizeof command, "rm -rf '%s/a2/data' && mv '%s/a2/data-backup' '%s/a2/data'",
	         cluster_dir(c), cluster_dir(c), cluster_dir(c));
	ck_assert_int_eq(system(command), 0);
	cluster_restart(c, 2);
	uint64_t e5 = e4 + 1;
	cluster_run_epoch(c, e5);
	published(c, e5, &body, &p);
	wait_reconciled(c, CLUSTER_BIT(2), e5);
	ck_assert(!lists_record(p, &b));
	ck_assert(!lists_record(p, &s3));
	ck_assert_ptr_nonnull(listed_revocation(p, &b, 0));
	ck_assert_ptr_nonnull(listed_revocation(p, &s3, 1));
	snapshot_body_free(p);
	buffer_free(&body);
	cluster_registration(c, cluster_provider_key(c, 0), "lifecycle-c", 3, 3, &again);
	ck_assert_uint_eq(cluster_register(c, CLUSTER_BIT(2), &again, statuses), 0);
	ck_assert_int_eq(statuses[2], 409);
	buffer_free(&again);
	cluster_registration(c, cluster_provider_key(c, 0), "lifecycle-b", 2, 2, &again);
	ck_assert_uint_eq(cluster_register(c, CLUSTER_BIT(2), &again, statuses), 0);
	ck_assert_int_eq(statuses[2], 409);
	buffer_free(&again);

	/* Into e5 + 1: a deregistration of a posted to authority 0 only. Authorities 1 and 2 still
	 * vote for a, which is k votes: a stays. */
	uint64_t e6 = e5 + 1;
	run_to_before_vote(c, e6);
	struct buffer deregister_a;
	deregistration_note(c, &a, &deregister_a);
	post_expect(c, CLUSTER_BIT(0), "/v1/deregistrations", &deregister_a, 202);
	cluster_run_epoch(c, e6);
	published(c, e6, &body, &p);
	ck_assert(lists_record(p, &a));
	snapshot_body_free(p);
	buffer_free(&body);
	/* Into e6 + 1: the same to authority 1. Only authority 2 votes for a now: a is gone from the
	 * snapshot of all three, and the withdrawn sequence is refused. */
	uint64_t e7 = e6 + 1;
	run_to_before_vote(c, e7);
	post_expect(c, CLUSTER_BIT(1), "/v1/deregistrations", &deregister_a, 202);
	cluster_run_epoch(c, e7);
	published(c, e7, &body, &p);
	ck_assert(!lists_record(p, &a));
	snapshot_body_free(p);
	buffer_free(&body);
	ck_assert_uint_eq(cluster_register(c, CLUSTER_BIT(0), &a.note, statuses), 0);
	ck_assert_int_eq(statuses[0], 409);
	buffer_free(&deregister_a);

	cluster_check_alive(c);
	buffer_free(&healthy);
	buffer_free(&draining);
	buffer_free(&revoke_b);
	buffer_free(&revoke_c);
	service_free(&a);
	service_free(&b);
	service_free(&s3);
	cluster_free(c);
}
END_TEST

static Suite *several_lifecycle_suite(void)
{
	Suite *suite = suite_create("several_lifecycle");
	TCase *tc = tcase_create("method2");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_three_authorities_method_two);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(several_lifecycle_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
