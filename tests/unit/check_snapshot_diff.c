/*
 * check_snapshot_diff.c: snapshot_diff_build(), snapshot_diff_apply(), snapshot_diff_parse_head()
 * and snapshot_diff_worth_offering() (schema/snapshot-diff.md).
 *
 * The example of the page is the vector tests/vectors/snapshot-diff/: its base is the method-2
 * snapshot body of tests/vectors/documents/snapshot-method-2/, its target the next epoch's body
 * (one health entry dropped, one added), rebuilt here and compared byte for byte, and the page
 * shows the diff. Then round trips over bodies of real signed notes (registrations, health
 * statements, revocations of the example keys) changed at random with fixed seeds, method 1 and
 * method 2, identical bodies, bodies of no record; every bit of a small diff flipped and every
 * truncation refused, never a wrong body; the wrong base refused; and each refusal of the applier
 * with its error.
 */
#include "lifecycle_fixture.h"
#include "base/error.h"
#include "crypto/crypto.h"
#include "schema/snapshot.h"
#include "schema/snapshot_diff.h"
#include "test_keys.h"
#include "test_support.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VECTOR_DIR "tests/vectors/snapshot-diff/"
#define BASE_BODY  "tests/vectors/documents/snapshot-method-2/body.txt"
#define NAMESPACE  "example-net"
#define EPOCH      29453762ull

static const struct snapshot_body_limits limits = {1000, 1000, 1000};

/* A byte that out must still hold after a refused apply: the caller's bytes before the result. */
#define SENTINEL "kept"

/* Applies diff to base into a buffer holding SENTINEL; on success *target gets the result (the
 * caller frees it) and 0 is returned; on failure the buffer must still hold SENTINEL alone. */
static int apply(const uint8_t *base, size_t base_len, const uint8_t *diff, size_t diff_len,
                 const struct snapshot_body_limits *bounds, struct buffer *target)
{
	struct buffer out;
	buffer_init(&out);
	ck_assert_int_eq(buffer_append_string(&out, SENTINEL), 0);
	int rc = snapshot_diff_apply(base, base_len, diff, diff_len, bounds, &out);
	if (rc) {
		ck_assert_uint_eq(out.len, strlen(SENTINEL));
		ck_assert_mem_eq(out.data, SENTINEL, strlen(SENTINEL));
	} else {
		buffer_init(target);
		ck_assert_int_eq(
		    buffer_append(target, out.data + strlen(SENTINEL), out.len - strlen(SENTINEL)), 0);
	}
	buffer_free(&out);
	return rc;
}

/* Builds the diff from base to target, applies it and expects target byte for byte; the head says
 * the digests, size and counts of both; building again writes the same bytes. *diff_out (may be
 * NULL) gets the diff. */
static void round_trip(const struct buffer *base, const struct buffer *target, struct buffer *diff_out)
{
	struct buffer diff, again, rebuilt;
	buffer_init(&diff);
	buffer_init(&again);
	ck_assert_int_eq(
	    snapshot_diff_build(base->data, base->len, target->data, target->len, &limits, &diff), 0);
	ck_assert_int_eq(
	    snapshot_diff_build(base->data, base->len, target->data, target->len, &limits, &again), 0);
	ck_assert_uint_eq(again.len, diff.len);
	ck_assert_mem_eq(again.data, diff.data, diff.len);
	ck_assert_int_eq(apply(base->data, base->len, diff.data, diff.len, &limits, &rebuilt), 0);
	ck_assert_uint_eq(rebuilt.len, target->len);
	ck_assert_mem_eq(rebuilt.data, target->data, target->len);

	struct snapshot_diff_head head;
	uint8_t digest[32];
	struct snapshot_body *parsed = NULL;
	ck_assert_int_eq(snapshot_diff_parse_head(diff.data, diff.len, &head), 0);
	ck_assert_int_eq(crypto_sha256(base->data, base->len, digest), 0);
	ck_assert_mem_eq(head.base_sha256, digest, 32);
	ck_assert_int_eq(crypto_sha256(target->data, target->len, digest), 0);
	ck_assert_mem_eq(head.target_sha256, digest, 32);
	ck_assert_uint_eq(head.target_size, target->len);
	ck_assert_int_eq(snapshot_body_parse_sections(target->data, target->len, &limits, &parsed), 0);
	ck_assert_uint_eq(head.record_count, parsed->record_count);
	ck_assert_uint_eq(head.health_count, parsed->health_count);
	ck_assert_uint_eq(head.revocation_count, parsed->revocation_count);
	ck_assert_uint_eq(head.epoch, parsed->epoch);
	ck_assert_str_eq(head.namespace_name, parsed->namespace_name);
	merkle_hash root;
	ck_assert_int_eq(snapshot_records_root(parsed->records, parsed->record_count, root), 0);
	ck_assert_mem_eq(head.records_root, root, 32);
	snapshot_body_free(parsed);
	/* The head alone is enough to read it, and a diff never needs more bytes for its head. */
	size_t head_len = diff.len < SNAPSHOT_DIFF_HEAD_MAX ? diff.len : SNAPSHOT_DIFF_HEAD_MAX;
	ck_assert_int_eq(snapshot_diff_parse_head(diff.data, head_len, &head), 0);

	buffer_free(&rebuilt);
	buffer_free(&again);
	if (diff_out)
		*diff_out = diff;
	else
		buffer_free(&diff);
}

/* ---- the example of schema/snapshot-diff.md ---- */

/* The vector's target: the base of epoch EPOCH at EPOCH + 1, the provider's statement on
 * registration 1's second endpoint gone (stale: unknown), and a statement by the provider on
 * registration 2's second endpoint (healthy) added. */
static void vector_target(const uint8_t *base, size_t base_len, struct buffer *target,
                          struct buffer *statement)
{
	struct snapshot_body *parsed = NULL;
	ck_assert_int_eq(snapshot_body_parse_sections(base, base_len, &limits, &parsed), 0);
	ck_assert_uint_eq(parsed->health_count, 2);
	struct registration r;
	struct health_statement s;
	struct test_key provider;
	test_key_load(TEST_KEY_PROVIDER, &provider);
	lifecycle_registration(2, &r);
	lifecycle_statement(&r, 1, HEALTH_SIGNER_PROVIDER, HEALTH_HEALTHY, 110, 1, &s);
	lifecycle_sign_statement(&s, &provider, statement);
	struct snapshot_health health[2];
	health[0] = parsed->health[0];
	memset(&health[1], 0, sizeof(health[1]));
	memcpy(health[1].service_id, s.service_id, SERVICE_ID_SIZE);
	memcpy(health[1].endpoint_id, s.endpoint_id, ENDPOINT_ID_SIZE);
	health[1].health_class = s.health_class;
	health[1].signer = s.signer;
	health[1].note = statement->data;
	health[1].note_len = statement->len;
	if (snapshot_health_order(&health[0], &health[1]) > 0) {
		struct snapshot_health swap = health[0];
		health[0] = health[1];
		health[1] = swap;
	}
	struct snapshot_sections sections = {health, 2, parsed->revocations, parsed->revocation_count};
	ck_assert_int_eq(snapshot_body_encode_sections(parsed->namespace_name, parsed->epoch + 1,
	                                               parsed->records, parsed->record_count, &sections,
	                                               target),
	                 0);
	registration_clear(&r);
	test_key_free(&provider);
	snapshot_body_free(parsed);
}

START_TEST(test_vector)
{
	size_t base_len;
	uint8_t *base = test_read_file(test_source_path(BASE_BODY), &base_len);
	struct buffer base_buffer = {base, base_len, base_len}, target, statement, diff;
	buffer_init(&target);
	buffer_init(&statement);
	vector_target(base, base_len, &target, &statement);
	test_vector_expect(VECTOR_DIR "target-body.txt", target.data, target.len);
	round_trip(&base_buffer, &target, &diff);
	test_vector_expect(VECTOR_DIR "diff.txt", diff.data, diff.len);
	lifecycle_page_shows("schema/snapshot-diff.md", diff.data, diff.len);
	/* One put and one del in the health section, nothing else. */
	ck_assert_ptr_nonnull(
	    strstr((const char *)diff.data, "\nrecord-changes 0\nhealth-changes 2\nhealth "));
	ck_assert_ptr_nonnull(strstr((const char *)diff.data, "\nrevocation-changes 0\n"));
	ck_assert_int_eq(snapshot_diff_worth_offering(diff.len, target.len), 1);
	buffer_free(&diff);
	buffer_free(&statement);
	buffer_free(&target);
	free(base);
}
END_TEST

/* ---- bodies changed at random ---- */

#define SERVICES  40
#define ENDPOINTS 3 /* the example registrations' endpoints */

/* Every note a body of the tests can hold: each service's registration at sequence 1 and 2, a
 * statement of two classes on each endpoint, and the revocation of the whole service and of its
 * first endpoint, all signed by the example provider. */
struct universe {
	struct buffer registrations[SERVICES][2];
	struct buffer statements[SERVICES][ENDPOINTS][2];
	struct buffer revocations[SERVICES][2]; /* [0] the whole service, [1] its first endpoint */
	uint8_t service_ids[SERVICES][SERVICE_ID_SIZE];
	uint8_t endpoint_ids[SERVICES][ENDPOINTS][ENDPOINT_ID_SIZE];
	size_t order[SERVICES];                     /* services by service id */
	size_t endpoint_order[SERVICES][ENDPOINTS]; /* each service's endpoints by endpoint id */
};

/* Which variant of each note a body holds: 0 none, 1 or 2. A revocation's two variants are the
 * same note listed since two epochs. */
struct body_state {
	unsigned char record[SERVICES];
	unsigned char health[SERVICES][ENDPOINTS];
	unsigned char revocation[SERVICES][2];
};

static struct universe universe;

static int service_order(const void *a, const void *b)
{
	return memcmp(universe.service_ids[*(const size_t *)a], universe.service_ids[*(const size_t *)b],
	              SERVICE_ID_SIZE);
}

static size_t sorting_service;
static int endpoint_order(const void *a, const void *b)
{
	return memcmp(universe.endpoint_ids[sorting_service][*(const size_t *)a],
	              universe.endpoint_ids[sorting_service][*(const size_t *)b], ENDPOINT_ID_SIZE);
}

static const struct universe *universe_of(void)
{
	static int built;
	if (built)
		return &universe;
	struct test_key provider;
	test_key_load(TEST_KEY_PROVIDER, &provider);
	for (size_t i = 0; i < SERVICES; i++) {
		struct registration r;
		test_example_registration((unsigned)i + 1, NAMESPACE, &provider, &r);
		ck_assert_uint_eq(r.endpoint_count, ENDPOINTS);
		memcpy(universe.service_ids[i], r.service_id, SERVICE_ID_SIZE);
		for (size_t v = 0; v < 2; v++) {
			r.sequence = v + 1;
			buffer_init(&universe.registrations[i][v]);
			test_sign_registration(&r, &provider, &universe.registrations[i][v]);
		}
		for (size_t e = 0; e < ENDPOINTS; e++) {
			memcpy(universe.endpoint_ids[i][e], r.endpoints[e].endpoint_id, ENDPOINT_ID_SIZE);
			for (size_t v = 0; v < 2; v++) {
				struct health_statement s;
				lifecycle_statement(&r, e, HEALTH_SIGNER_PROVIDER,
				                    v ? HEALTH_DEGRADED : HEALTH_HEALTHY, 60 + v, v + 1, &s);
				buffer_init(&universe.statements[i][e][v]);
				lifecycle_sign_statement(&s, &provider, &universe.statements[i][e][v]);
			}
			universe.endpoint_order[i][e] = e;
		}
		for (int k = 0; k < 2; k++) {
			struct revocation rev;
			lifecycle_revocation(&r, k ? 0 : -1, REVOCATION_SIGNER_PROVIDER, &provider,
			                     REVOCATION_RETIRED, 30, 1, &rev);
			buffer_init(&universe.revocations[i][k]);
			lifecycle_sign_revocation(&rev, &provider, &universe.revocations[i][k]);
		}
		universe.order[i] = i;
		registration_clear(&r);
	}
	qsort(universe.order, SERVICES, sizeof(size_t), service_order);
	for (size_t i = 0; i < SERVICES; i++) {
		sorting_service = i;
		qsort(universe.endpoint_order[i], ENDPOINTS, sizeof(size_t), endpoint_order);
	}
	test_key_free(&provider);
	built = 1;
	return &universe;
}

/* The body a state describes, at epoch. */
static void body_of(const struct body_state *state, uint64_t epoch, struct buffer *out)
{
	const struct universe *u = universe_of();
	struct snapshot_record records[SERVICES];
	struct snapshot_health health[SERVICES * ENDPOINTS];
	struct snapshot_revocation revocations[SERVICES * 2];
	size_t record_count = 0, health_count = 0, revocation_count = 0;
	memset(health, 0, sizeof(health));
	memset(revocations, 0, sizeof(revocations));
	for (size_t k = 0; k < SERVICES; k++) {
		size_t i = u->order[k];
		unsigned v = state->record[i];
		if (v) {
			memcpy(records[record_count].service_id, u->service_ids[i], SERVICE_ID_SIZE);
			records[record_count].note = u->registrations[i][v - 1].data;
			records[record_count].note_len = u->registrations[i][v - 1].len;
			record_count++;
			for (size_t n = 0; n < ENDPOINTS; n++) {
				size_t e = u->endpoint_order[i][n];
				unsigned h = state->health[i][e];
				if (!h)
					continue;
				struct snapshot_health *entry = &health[health_count++];
				memcpy(entry->service_id, u->service_ids[i], SERVICE_ID_SIZE);
				memcpy(entry->endpoint_id, u->endpoint_ids[i][e], ENDPOINT_ID_SIZE);
				entry->health_class = h == 2 ? HEALTH_DEGRADED : HEALTH_HEALTHY;
				entry->signer = HEALTH_SIGNER_PROVIDER;
				entry->note = u->statements[i][e][h - 1].data;
				entry->note_len = u->statements[i][e][h - 1].len;
			}
		}
		for (int t = 0; t < 2; t++) {
			unsigned since = state->revocation[i][t];
			if (!since)
				continue;
			struct snapshot_revocation *entry = &revocations[revocation_count++];
			memcpy(entry->service_id, u->service_ids[i], SERVICE_ID_SIZE);
			entry->has_endpoint = t;
			if (t)
				memcpy(entry->endpoint_id, u->endpoint_ids[i][0], ENDPOINT_ID_SIZE);
			entry->since = epoch - since;
			entry->note = u->revocations[i][t].data;
			entry->note_len = u->revocations[i][t].len;
		}
	}
	struct snapshot_sections sections = {health, health_count, revocations, revocation_count};
	buffer_reset(out);
	ck_assert_int_eq(
	    snapshot_body_encode_sections(NAMESPACE, epoch, records, record_count, &sections, out), 0);
}

/* splitmix64: a fixed sequence per seed. */
static uint64_t next_random(uint64_t *seed)
{
	uint64_t z = (*seed += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* A variant other than current among 0, 1 and 2. */
static unsigned char other_variant(unsigned char current, uint64_t *seed)
{
	return (unsigned char)((current + 1 + next_random(seed) % 2) % 3);
}

/* Changes each note of state with probability percent / 100: records added, removed, replaced;
 * health entries added, dropped, replaced (method 2); revocations listed, dropped, listed since
 * another epoch (method 2). */
static void churn(struct body_state *state, unsigned percent, int method, uint64_t *seed)
{
	for (size_t i = 0; i < SERVICES; i++) {
		if (next_random(seed) % 100 < percent)
			state->record[i] = other_variant(state->record[i], seed);
		for (size_t e = 0; method == 2 && e < ENDPOINTS; e++)
			if (next_random(seed) % 100 < percent)
				state->health[i][e] = other_variant(state->health[i][e], seed);
		for (int t = 0; method == 2 && t < 2; t++)
			if (next_random(seed) % 100 < percent)
				state->revocation[i][t] = other_variant(state->revocation[i][t], seed);
	}
}

START_TEST(test_round_trips_under_churn)
{
	static const unsigned percents[] = {1, 5, 20, 60, 100};
	struct buffer base, target;
	buffer_init(&base);
	buffer_init(&target);
	size_t trips = 0;
	for (int method = 1; method <= 2; method++) {
		for (uint64_t s = 1; s <= 6; s++) {
			uint64_t seed = s * 1000 + (uint64_t)method;
			struct body_state state;
			memset(&state, 0, sizeof(state));
			churn(&state, 70, method, &seed);
			body_of(&state, EPOCH, &base);
			for (size_t step = 0; step < sizeof(percents) / sizeof(percents[0]); step++) {
				churn(&state, percents[(step + s) % 5], method, &seed);
				body_of(&state, EPOCH + step + 1, &target);
				round_trip(&base, &target, NULL);
				round_trip(&target, &base, NULL); /* and back */
				trips += 2;
				struct buffer swap = base;
				base = target;
				target = swap;
			}
		}
	}
	ck_assert_uint_eq(trips, 2 * 6 * 5 * 2);
	buffer_free(&base);
	buffer_free(&target);
}
END_TEST

/* A full state: every record, health entry and revocation at variant 1. */
static void full_state(struct body_state *state)
{
	memset(state->record, 1, sizeof(state->record));
	memset(state->health, 1, sizeof(state->health));
	memset(state->revocation, 1, sizeof(state->revocation));
}

START_TEST(test_identical_and_empty_bodies)
{
	struct body_state full, empty;
	struct buffer a, b, diff, again;
	buffer_init(&a);
	buffer_init(&b);
	full_state(&full);
	memset(&empty, 0, sizeof(empty));

	/* Identical bodies: three counts of 0, and the result is the base. */
	body_of(&full, EPOCH, &a);
	round_trip(&a, &a, &diff);
	ck_assert_ptr_nonnull(
	    strstr((const char *)diff.data, "record-changes 0\nhealth-changes 0\nrevocation-changes 0\n"));
	ck_assert_uint_lt(diff.len, 700);
	buffer_free(&diff);

	/* From a full body to one of no record, and back; an empty body to itself. */
	body_of(&empty, EPOCH + 1, &b);
	ck_assert_ptr_nonnull(strstr((const char *)b.data, "records 0\n"));
	round_trip(&a, &b, &diff);
	ck_assert_ptr_nonnull(strstr((const char *)diff.data, "\nrecords 0\n"));
	buffer_free(&diff);
	round_trip(&b, &a, &diff);
	/* Everything is a put: the diff is the body's entries and a few lines more. */
	ck_assert_uint_gt(diff.len, a.len);
	ck_assert_int_eq(snapshot_diff_worth_offering(diff.len, a.len), 0);
	buffer_free(&diff);
	round_trip(&b, &b, NULL);

	/* Method 1 to method 2 and back: the sections appear and go. */
	struct body_state records_only = full;
	memset(records_only.health, 0, sizeof(records_only.health));
	memset(records_only.revocation, 0, sizeof(records_only.revocation));
	body_of(&records_only, EPOCH + 2, &b);
	round_trip(&a, &b, NULL);
	round_trip(&b, &a, NULL);

	/* A body's namespace may change with the diff. */
	buffer_init(&again);
	test_text_replace(b.data, b.len, "namespace example-net\n", "namespace other-net\n", &again);
	round_trip(&b, &again, NULL);
	buffer_free(&again);
	buffer_free(&a);
	buffer_free(&b);
}
END_TEST

/* ---- refusals ---- */

/* A small base and target of method 2 and the diff between them (a record replaced, one added, a
 * health entry dropped, a revocation listed). */
struct small_pair {
	struct buffer base, target, diff;
};

static void small_pair(struct small_pair *p)
{
	struct body_state state;
	memset(&state, 0, sizeof(state));
	buffer_init(&p->base);
	buffer_init(&p->target);
	buffer_init(&p->diff);
	state.record[0] = state.record[1] = 1;
	state.health[0][0] = state.health[1][1] = 1;
	body_of(&state, EPOCH, &p->base);
	state.record[1] = 2;
	state.record[2] = 1;
	state.health[0][0] = 0;
	state.revocation[3][0] = 1;
	body_of(&state, EPOCH + 1, &p->target);
	ck_assert_int_eq(
	    snapshot_diff_build(p->base.data, p->base.len, p->target.data, p->target.len, &limits, &p->diff),
	    0);
}

static void small_pair_free(struct small_pair *p)
{
	buffer_free(&p->base);
	buffer_free(&p->target);
	buffer_free(&p->diff);
}

START_TEST(test_every_flipped_bit_refused)
{
	struct small_pair p;
	small_pair(&p);
	struct buffer result;
	size_t refused = 0;
	for (size_t i = 0; i < p.diff.len; i++) {
		for (unsigned bit = 0; bit < 8; bit++) { /* every bit of every byte */
			p.diff.data[i] ^= (uint8_t)(1u << bit);
			int rc = apply(p.base.data, p.base.len, p.diff.data, p.diff.len, &limits, &result);
			p.diff.data[i] ^= (uint8_t)(1u << bit);
			ck_assert_msg(rc != 0, "byte %zu bit %u flipped was accepted", i, bit);
			ck_assert_msg(rc == DIRAUTH_ERR_SYNTAX || rc == DIRAUTH_ERR_BOUNDS ||
			                  rc == DIRAUTH_ERR_MISMATCH,
			              "byte %zu: %d", i, rc);
			refused++;
		}
	}
	ck_assert_uint_eq(refused, 8 * p.diff.len);
	/* Unflipped, it still applies. */
	ck_assert_int_eq(apply(p.base.data, p.base.len, p.diff.data, p.diff.len, &limits, &result), 0);
	buffer_free(&result);
	small_pair_free(&p);
}
END_TEST

START_TEST(test_every_truncation_refused)
{
	struct small_pair p;
	small_pair(&p);
	struct buffer result;
	for (size_t len = 0; len < p.diff.len; len++) {
		int rc = apply(p.base.data, p.base.len, p.diff.data, len, &limits, &result);
		ck_assert_msg(rc == DIRAUTH_ERR_SYNTAX || rc == DIRAUTH_ERR_MISMATCH, "length %zu: %d", len,
		              rc);
	}
	/* And with a byte more. */
	struct buffer longer;
	buffer_init(&longer);
	ck_assert_int_eq(buffer_append(&longer, p.diff.data, p.diff.len), 0);
	ck_assert_int_eq(buffer_append_string(&longer, "\n"), 0);
	ck_assert_int_eq(apply(p.base.data, p.base.len, longer.data, longer.len, &limits, &result),
	                 DIRAUTH_ERR_SYNTAX);
	buffer_free(&longer);
	small_pair_free(&p);
}
END_TEST

START_TEST(test_wrong_base_refused)
{
	struct small_pair p;
	small_pair(&p);
	struct buffer result;
	/* The target, another body; the base with one byte changed in a note; the base cut short. */
	ck_assert_int_eq(apply(p.target.data, p.target.len, p.diff.data, p.diff.len, &limits, &result),
	                 DIRAUTH_ERR_MISMATCH);
	p.base.data[p.base.len - 10] ^= 1;
	ck_assert_int_eq(apply(p.base.data, p.base.len, p.diff.data, p.diff.len, &limits, &result),
	                 DIRAUTH_ERR_MISMATCH);
	p.base.data[p.base.len - 10] ^= 1;
	ck_assert_int_eq(apply(p.base.data, p.base.len - 1, p.diff.data, p.diff.len, &limits, &result),
	                 DIRAUTH_ERR_MISMATCH);
	ck_assert_int_eq(apply(p.base.data, 0, p.diff.data, p.diff.len, &limits, &result),
	                 DIRAUTH_ERR_MISMATCH);
	/* The head names the base: a server files the diff by it, a client checks it first. */
	struct snapshot_diff_head head;
	uint8_t digest[32];
	ck_assert_int_eq(snapshot_diff_parse_head(p.diff.data, p.diff.len, &head), 0);
	ck_assert_int_eq(crypto_sha256(p.base.data, p.base.len, digest), 0);
	ck_assert_mem_eq(head.base_sha256, digest, 32);
	ck_assert_int_eq(apply(p.base.data, p.base.len, p.diff.data, p.diff.len, &limits, &result), 0);
	buffer_free(&result);
	small_pair_free(&p);
}
END_TEST

/* The applier on the small pair's diff with from replaced by to. */
static int apply_edit(const struct small_pair *p, const char *from, const char *to,
                      const struct snapshot_body_limits *bounds)
{
	struct buffer edited, result;
	buffer_init(&edited);
	test_text_replace(p->diff.data, p->diff.len, from, to, &edited);
	int rc = apply(p->base.data, p->base.len, edited.data, edited.len, bounds, &result);
	if (rc == 0)
		buffer_free(&result);
	buffer_free(&edited);
	return rc;
}

/* Service i's record entry at variant v (0 or 1) as a body and a diff spell it: its line and note. */
static void record_entry(const struct universe *u, size_t i, size_t v, struct buffer *out)
{
	ck_assert_int_eq(snapshot_body_encode_record_line(u->service_ids[i], u->registrations[i][v].len, out),
	                 0);
	ck_assert_int_eq(buffer_append(out, u->registrations[i][v].data, u->registrations[i][v].len), 0);
}

/* The line of the diff that starts with prefix, without its '\n', into out (cap bytes). */
static void diff_line(const struct small_pair *p, const char *prefix, char *out, size_t cap)
{
	const char *text = (const char *)p->diff.data;
	const char *line = strstr(text, prefix);
	ck_assert_ptr_nonnull(line);
	const char *end = strchr(line, '\n');
	ck_assert_uint_lt((size_t)(end - line), cap);
	memcpy(out, line, (size_t)(end - line));
	out[end - line] = 0;
}

START_TEST(test_refusals)
{
	struct small_pair p;
	small_pair(&p);
	const struct universe *u = universe_of();
	char line[300], edit[1024], hex[65];

	/* The head: counts over the applier's limits, before anything is merged. */
	const struct snapshot_body_limits few_records = {2, 1000, 1000}, few_health = {1000, 0, 1000},
	                                  few_revocations = {1000, 1000, 0};
	ck_assert_int_eq(apply_edit(&p, "dirauth", "dirauth", &few_records), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(apply_edit(&p, "dirauth", "dirauth", &few_health), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(apply_edit(&p, "dirauth", "dirauth", &few_revocations), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(apply_edit(&p, "dirauth snapshot-diff v1\n", "dirauth snapshot-diff v2\n", &limits),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(apply_edit(&p, "\nepoch ", "\nepoch 0", &limits), DIRAUTH_ERR_SYNTAX);

	/* What the head says of the result: each a mismatch once the result is built. */
	diff_line(&p, "target-size ", line, sizeof(line));
	ck_assert_int_eq(apply_edit(&p, line, "target-size 100", &limits), DIRAUTH_ERR_MISMATCH);
	snprintf(edit, sizeof(edit), "%s0", line);
	ck_assert_int_eq(apply_edit(&p, line, edit, &limits), DIRAUTH_ERR_MISMATCH);
	diff_line(&p, "records-root ", line, sizeof(line));
	ck_assert_int_eq(
	    apply_edit(&p, line,
	               "records-root e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
	               &limits),
	    DIRAUTH_ERR_MISMATCH);
	ck_assert_int_eq(apply_edit(&p, "\nrecords 3\n", "\nrecords 4\n", &limits), DIRAUTH_ERR_MISMATCH);
	ck_assert_int_eq(apply_edit(&p, "\nhealth 1\n", "\nhealth 2\n", &limits), DIRAUTH_ERR_MISMATCH);
	ck_assert_int_eq(apply_edit(&p, "\nrevocations 1\n", "\nrevocations 0\n", &limits),
	                 DIRAUTH_ERR_MISMATCH);
	diff_line(&p, "target ", line, sizeof(line));
	ck_assert_int_eq(apply_edit(&p, line,
	                            "target e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
	                            &limits),
	                 DIRAUTH_ERR_MISMATCH);

	/* The changes: a del of a key the base does not hold; a put equal to the base's entry; out of
	 * order; repeated; a count over what the base and the bounds allow; a count the bytes cannot
	 * hold; a change of another section's spelling. */
	memset(hex, '0', 64); /* before every key: the base's entries are not yet written */
	hex[64] = 0;
	snprintf(edit, sizeof(edit), "health-changes 1\ndel %s %s\n", hex, hex);
	ck_assert_int_eq(apply_edit(&p, "health-changes 1\n", edit, &limits), DIRAUTH_ERR_SYNTAX);
	diff_line(&p, "health-changes ", line, sizeof(line));
	ck_assert_str_eq(line, "health-changes 1");
	diff_line(&p, "del ", line, sizeof(line)); /* the health entry dropped */
	char repeated[400];
	snprintf(repeated, sizeof(repeated), "health-changes 1\n%s\n", line);
	snprintf(edit, sizeof(edit), "health-changes 2\n%s\n%s\n", line, line);
	ck_assert_int_eq(apply_edit(&p, repeated, edit, &limits), DIRAUTH_ERR_SYNTAX);
	/* One change fewer: the result holds a record fewer than the head says. */
	ck_assert_int_eq(apply_edit(&p, "record-changes 2\n", "record-changes 1\n", &limits),
	                 DIRAUTH_ERR_MISMATCH);
	ck_assert_int_eq(apply_edit(&p, "record-changes 2\n", "record-changes 3\n", &limits),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(apply_edit(&p, "record-changes 2\n", "record-changes 900\n", &limits),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(apply_edit(&p, "record-changes 2\n", "record-changes 3000\n", &limits),
	                 DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(apply_edit(&p, "record-changes 2\n", "record-changes 02\n", &limits),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(apply_edit(&p, "health-changes 1\ndel ", "health-changes 1\ndel  ", &limits),
	                 DIRAUTH_ERR_SYNTAX);
	/* An equal put: service 1's entry at sequence 1, which the base holds, in place of the target's
	 * at sequence 2. */
	struct buffer from, to;
	buffer_init(&from);
	buffer_init(&to);
	record_entry(u, 1, 1, &from);
	record_entry(u, 1, 0, &to);
	ck_assert_int_eq(apply_edit(&p, (const char *)from.data, (const char *)to.data, &limits),
	                 DIRAUTH_ERR_SYNTAX);
	/* Out of order: the two record puts (service 1 replaced, service 2 added) swapped. */
	struct buffer in_order, swapped;
	buffer_init(&in_order);
	buffer_init(&swapped);
	buffer_reset(&to);
	record_entry(u, 2, 0, &to);
	const char *diff_text = (const char *)p.diff.data;
	int from_first =
	    strstr(diff_text, (const char *)from.data) < strstr(diff_text, (const char *)to.data);
	const struct buffer *earlier = from_first ? &from : &to, *later = from_first ? &to : &from;
	ck_assert_int_eq(buffer_append(&in_order, earlier->data, earlier->len), 0);
	ck_assert_int_eq(buffer_append(&in_order, later->data, later->len), 0);
	ck_assert_int_eq(buffer_append(&swapped, later->data, later->len), 0);
	ck_assert_int_eq(buffer_append(&swapped, earlier->data, earlier->len), 0);
	ck_assert_int_eq(apply_edit(&p, (const char *)in_order.data, (const char *)swapped.data, &limits),
	                 DIRAUTH_ERR_SYNTAX);
	buffer_free(&in_order);
	buffer_free(&swapped);
	buffer_free(&from);
	buffer_free(&to);
	ck_assert_int_eq(apply_edit(&p, "revocation-changes 1\n", "revocation-changes 1\n\n", &limits),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(apply_edit(&p, "health-changes 1\ndel ", "health-changes 1\nput ", &limits),
	                 DIRAUTH_ERR_SYNTAX);

	/* The builder refuses what is not a body. */
	struct buffer out;
	buffer_init(&out);
	ck_assert_int_eq(
	    snapshot_diff_build(p.base.data, p.base.len - 1, p.target.data, p.target.len, &limits, &out),
	    DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(
	    snapshot_diff_build(p.base.data, p.base.len, p.target.data, p.target.len, &few_records, &out),
	    DIRAUTH_ERR_BOUNDS);
	ck_assert_uint_eq(out.len, 0);
	/* parse_head: a head cut short. */
	struct snapshot_diff_head head;
	ck_assert_int_eq(snapshot_diff_parse_head(p.diff.data, 40, &head), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(head.target_size, 0);
	small_pair_free(&p);
}
END_TEST

START_TEST(test_worth_offering)
{
	ck_assert_int_eq(SNAPSHOT_DIFF_OFFER_PERCENT, 50);
	ck_assert_int_eq(snapshot_diff_worth_offering(0, 0), 0);
	ck_assert_int_eq(snapshot_diff_worth_offering(0, 1), 1);
	ck_assert_int_eq(snapshot_diff_worth_offering(50, 100), 1);
	ck_assert_int_eq(snapshot_diff_worth_offering(51, 100), 0);
	ck_assert_int_eq(snapshot_diff_worth_offering(35000000, 70000000), 1);
	ck_assert_int_eq(snapshot_diff_worth_offering(35000001, 70000000), 0);
	ck_assert_int_eq(snapshot_diff_worth_offering(SIZE_MAX / 2, SIZE_MAX), 1);
	ck_assert_int_eq(snapshot_diff_worth_offering(SIZE_MAX, SIZE_MAX), 0);
}
END_TEST

static Suite *snapshot_diff_suite(void)
{
	Suite *suite = suite_create("snapshot_diff");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_vector);
	tcase_add_test(tc, test_round_trips_under_churn);
	tcase_add_test(tc, test_identical_and_empty_bodies);
	tcase_add_test(tc, test_every_flipped_bit_refused);
	tcase_add_test(tc, test_every_truncation_refused);
	tcase_add_test(tc, test_wrong_base_refused);
	tcase_add_test(tc, test_refusals);
	tcase_add_test(tc, test_worth_offering);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(snapshot_diff_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
