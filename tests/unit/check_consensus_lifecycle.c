/*
 * check_consensus_lifecycle.c: consensus method 2 (registrations, health, revocations): the
 * vectors under tests/vectors/consensus/method-2/ (votes, previous snapshots and notes in; the
 * outcome, header text and body bytes out, compared byte for byte), and every refusal that
 * method 2 adds.
 *
 * Each vector is a case table below: who votes, naming which previous snapshot, holding which
 * registration versions, which health statements and which revocations. The test builds the case
 * from the EXAMPLE keys (provider.example, other-provider.example for forgeries, the endpoint key
 * endpoint.example and the operator key operator.example of lifecycle_fixture.h), writes or
 * compares its files, loads the case back from the files alone, computes it, and compares. A
 * "forged" statement or revocation is a note signed by other-provider.example in someone else's
 * name: a digest a minority invents, whose note nobody can supply.
 *
 * The computing authority holds every valid note of the vectors (notes/); its callbacks check a
 * registration as intake does (provider enrolled, fields, not expired), a statement only for its
 * target (the module checks its signature against the published registration itself), and a
 * revocation's right to revoke (provider.example for a provider revocation, operator.example for
 * an operator one).
 */
#include "consensus/consensus.h"
#include "lifecycle_fixture.h"
#include "crypto/crypto.h"
#include "schema/encoding.h"
#include "base/error.h"
#include "schema/lines.h"
#include "schedule/schedule.h"
#include "test_keys.h"
#include "test_published.h"
#include "test_support.h"

#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VECTOR_DIR        "tests/vectors/consensus/method-2/"
#define NAMESPACE         LIFECYCLE_NAMESPACE
#define ORIGIN            "dirauth.example/example-net"
#define EPOCH             29453762ull
#define EPOCH_LENGTH      60
#define VALIDITY_EPOCHS   60
#define FRESHNESS         (2 * EPOCH_LENGTH)
#define MAX_RECORDS       1000
#define MAX_HEALTH        1000
#define MAX_REVOCATIONS   100
#define MAX_BODY_BYTES    (512u * 1024 * 1024)
#define MAX_VOTES         5
#define MAX_HELD          5
#define MAX_LINES         8
#define MAX_NOTES         128
#define PREVIOUS_METHOD_1 0 /* epoch E-1, method 1, empty */
#define PREVIOUS_REVOKING 1 /* epoch E-1, method 2, listing two revocations */
#define PREVIOUS_OLDER    2 /* epoch E-2, method 1, empty */
#define PREVIOUS_METHOD_2 3 /* epoch E-1, method 2, empty */
#define PREVIOUS_COUNT    4

/* ---- the catalogue of statements and revocations the cases use ---- */

/* A health statement on endpoint `endpoint` of example registration `reg`, issued `issued`
 * seconds from the epoch's valid-after (stale at -FRESHNESS and before). */
struct statement_spec {
	unsigned reg, endpoint;
	enum health_signer signer;
	enum health_class health_class;
	int issued;
	uint64_t sequence;
	int forged;
};

static const struct statement_spec statements[] = {
    {0},
    /* health */
    {1, 0, HEALTH_SIGNER_ENDPOINT, HEALTH_HEALTHY, -30, 3, 0},  /* 1: all hold it */
    {1, 1, HEALTH_SIGNER_PROVIDER, HEALTH_DRAINING, -10, 2, 0}, /* 2: newer, one vote */
    {1, 1, HEALTH_SIGNER_PROVIDER, HEALTH_HEALTHY, -60, 1, 0},  /* 3: older, one vote */
    {1, 2, HEALTH_SIGNER_PROVIDER, HEALTH_DEGRADED, -30, 1, 0}, /* 4: one vote only */
    {2, 0, HEALTH_SIGNER_PROVIDER, HEALTH_HEALTHY, -120, 1, 0}, /* 5: stale */
    {2, 1, HEALTH_SIGNER_ENDPOINT, HEALTH_HEALTHY, -30, 1, 0},  /* 6: the endpoint has no key */
    /* health-minority */
    {1, 0, HEALTH_SIGNER_ENDPOINT, HEALTH_HEALTHY, -10, 5, 0},      /* 7: honest, new */
    {1, 0, HEALTH_SIGNER_ENDPOINT, HEALTH_UNAVAILABLE, -110, 1, 0}, /* 8: old, replayed */
    {1, 0, HEALTH_SIGNER_ENDPOINT, HEALTH_HEALTHY, 0, 6, 1},        /* 9: invented, newest */
    {1, 1, HEALTH_SIGNER_PROVIDER, HEALTH_DRAINING, -30, 2, 0},     /* 10: honest; withheld */
    {1, 2, HEALTH_SIGNER_PROVIDER, HEALTH_UNAVAILABLE, -5, 3, 0},   /* 11: true, newer, minority only */
    {1, 2, HEALTH_SIGNER_PROVIDER, HEALTH_HEALTHY, -40, 2, 0},      /* 12: honest */
    {2, 0, HEALTH_SIGNER_PROVIDER, HEALTH_HEALTHY, -20, 4, 0},      /* 13: one honest, new */
    {2, 0, HEALTH_SIGNER_PROVIDER, HEALTH_DEGRADED, -50, 3, 1},     /* 14: invented, between */
    {2, 0, HEALTH_SIGNER_PROVIDER, HEALTH_DRAINING, -70, 2, 0},     /* 15: two honest, old */
    /* revocations, revocation-carried */
    {1, 0, HEALTH_SIGNER_ENDPOINT, HEALTH_HEALTHY, -10, 7, 0}, /* 16: of a revoked endpoint */
    {2, 0, HEALTH_SIGNER_PROVIDER, HEALTH_HEALTHY, -10, 5, 0}, /* 17 */
    {3, 0, HEALTH_SIGNER_PROVIDER, HEALTH_HEALTHY, -10, 1, 0}, /* 18 */
};

#define STATEMENT_COUNT (sizeof(statements) / sizeof(statements[0]))

/* A revocation of endpoint `endpoint` of example registration `reg` (-1: the whole service). */
struct revocation_spec {
	unsigned reg;
	int endpoint;
	enum revocation_signer signer;
	enum revocation_reason reason;
	int forged;
};

static const struct revocation_spec revocations[] = {
    {0},
    {1, 0, REVOCATION_SIGNER_PROVIDER, REVOCATION_KEY_COMPROMISE, 0},   /* 1: one honest vote */
    {2, -1, REVOCATION_SIGNER_PROVIDER, REVOCATION_RETIRED, 1},         /* 2: invented */
    {3, -1, REVOCATION_SIGNER_PROVIDER, REVOCATION_RETIRED, 0},         /* 3: withheld by the minority */
    {4, 1, REVOCATION_SIGNER_OPERATOR, REVOCATION_OPERATOR_ACTION, 0},  /* 4: a minority's true one */
    {1, 0, REVOCATION_SIGNER_PROVIDER, REVOCATION_SUPERSEDED, 0},       /* 5: carried */
    {4, -1, REVOCATION_SIGNER_OPERATOR, REVOCATION_OPERATOR_ACTION, 0}, /* 6: carried, expired */
    {2, 1, REVOCATION_SIGNER_OPERATOR, REVOCATION_SUPERSEDED, 0},       /* 7: new beside carried */
};

#define REVOCATION_COUNT (sizeof(revocations) / sizeof(revocations[0]))

/* ---- the case tables ---- */

struct held {
	unsigned reg; /* example registration index; 0 ends the list */
	uint64_t sequence;
};

struct vote_spec {
	unsigned previous;
	size_t method_count;
	uint64_t methods[2];
	struct held held[MAX_HELD];
	unsigned statements[MAX_LINES];  /* catalogue indexes; 0 ends */
	unsigned revocations[MAX_LINES]; /* catalogue indexes; 0 ends */
};

struct case_spec {
	const char *name;
	const char *outcome;
	size_t authorities, threshold, vote_count;
	unsigned supplied; /* the previous snapshot the computing authority holds */
	struct vote_spec votes[MAX_VOTES];
};

#define M12                                                                                                  \
	2,                                                                                                   \
	{                                                                                                    \
		1, 2                                                                                         \
	}
#define REGS_1_2                                                                                             \
	{                                                                                                    \
		{1, 1},                                                                                      \
		{                                                                                            \
			2, 1                                                                                 \
		}                                                                                            \
	}
#define REGS_1_2_3_4                                                                                         \
	{                                                                                                    \
		{1, 1}, {2, 1}, {3, 1},                                                                      \
		{                                                                                            \
			4, 1                                                                                 \
		}                                                                                            \
	}

static const struct case_spec cases[] = {
    /* Method 2 chosen for the first time, after a method-1 snapshot: the bodies carry no sections
     * yet, and the snapshot body is the method-1 body of the same versions. */
    {"first-epoch",
     "ok",
     3,
     2,
     3,
     PREVIOUS_METHOD_1,
     {{PREVIOUS_METHOD_1, M12, {{1, 1}, {2, 1}, {3, 1}}, {0}, {0}},
      {PREVIOUS_METHOD_1, M12, {{1, 1}, {2, 1}, {3, 1}}, {0}, {0}},
      {PREVIOUS_METHOD_1, M12, {{1, 1}, {2, 1}}, {0}, {0}}}},
    /* Registration 1: its first endpoint by its own key (all votes); its second, split 1 and 1
     * between a newer and an older statement, gets the k-th newest (the older); its third is held by
     * one vote only: unknown. Registration 2: a stale statement (unknown) and one claiming the
     * endpoint's key for an endpoint that names none (it does not verify: unknown). */
    {"health",
     "ok",
     3,
     2,
     3,
     PREVIOUS_METHOD_2,
     {{PREVIOUS_METHOD_2, M12, REGS_1_2, {1, 2, 4, 5, 6}, {0}},
      {PREVIOUS_METHOD_2, M12, REGS_1_2, {1, 3, 5, 6}, {0}},
      {PREVIOUS_METHOD_2, M12, REGS_1_2, {1, 5, 6}, {0}}}},
    /* Votes 4 and 5 lie. First endpoint: an invented newest digest and a replayed old statement
     * against the honest new one: the new one. Second: the minority withholds it: still published.
     * Third: the minority holds a true newer statement the honest votes do not: the honest one,
     * since k holders are reached only there. Registration 2: the honest votes split 1 and 2, and
     * the minority invents a statement between them: it counts for nothing, the older honest one
     * is published. */
    {"health-minority",
     "ok",
     5,
     3,
     5,
     PREVIOUS_METHOD_2,
     {{PREVIOUS_METHOD_2, M12, REGS_1_2, {7, 10, 12, 13}, {0}},
      {PREVIOUS_METHOD_2, M12, REGS_1_2, {7, 10, 12, 15}, {0}},
      {PREVIOUS_METHOD_2, M12, REGS_1_2, {7, 10, 12, 15}, {0}},
      {PREVIOUS_METHOD_2, M12, REGS_1_2, {9, 11, 14}, {0}},
      {PREVIOUS_METHOD_2, M12, REGS_1_2, {8, 11, 14}, {0}}}},
    /* A revocation one honest vote holds (registration 1's first endpoint) is listed and takes its
     * registration out; the minority's invented revocation of service 2 is left out and the epoch
     * goes on; the minority withholds the revocation of service 3, which is listed anyway; a true
     * operator revocation only a minority vote holds is listed too. */
    {"revocations",
     "ok",
     5,
     3,
     5,
     PREVIOUS_METHOD_2,
     {{PREVIOUS_METHOD_2, M12, REGS_1_2_3_4, {16, 17}, {1, 3}},
      {PREVIOUS_METHOD_2, M12, REGS_1_2_3_4, {16, 17}, {3}},
      {PREVIOUS_METHOD_2, M12, REGS_1_2_3_4, {16, 17}, {3}},
      {PREVIOUS_METHOD_2, M12, REGS_1_2_3_4, {16, 17}, {2, 4}},
      {PREVIOUS_METHOD_2, M12, REGS_1_2_3_4, {16, 17}, {2}}}},
    /* The previous snapshot lists the revocation of registration 1's first endpoint (since E-5)
     * and of service 4 (since E-60, so no longer listed at E with 60 revocation epochs). No vote
     * repeats the first but one, yet sequence 2 of registration 1, which still names the endpoint,
     * stays out; a new revocation of registration 2's second endpoint is listed beside it. */
    {"revocation-carried",
     "ok",
     3,
     2,
     3,
     PREVIOUS_REVOKING,
     {{PREVIOUS_REVOKING, M12, {{1, 2}, {2, 1}, {3, 1}}, {18}, {5, 7}},
      {PREVIOUS_REVOKING, M12, {{1, 2}, {2, 1}, {3, 1}}, {18}, {0}},
      {PREVIOUS_REVOKING, M12, {{1, 2}, {2, 1}, {3, 1}}, {18}, {0}}}},
    /* The votes name the snapshot of E-2; the computing authority holds only that of E-1. */
    {"previous-missing",
     "previous-missing",
     3,
     2,
     3,
     PREVIOUS_METHOD_1,
     {{PREVIOUS_OLDER, M12, REGS_1_2, {0}, {0}},
      {PREVIOUS_OLDER, M12, REGS_1_2, {0}, {0}},
      {PREVIOUS_OLDER, M12, REGS_1_2, {0}, {0}}}},
};

#define CASE_COUNT (sizeof(cases) / sizeof(cases[0]))

/* ---- notes ---- */

struct note_entry {
	struct buffer note;
	uint8_t digest[32];
};

struct note_pool {
	struct note_entry entries[MAX_NOTES];
	size_t count;
};

static void pool_free(struct note_pool *pool)
{
	for (size_t i = 0; i < pool->count; i++)
		buffer_free(&pool->entries[i].note);
	pool->count = 0;
}

static const struct note_entry *pool_find(const struct note_pool *pool, const uint8_t digest[32])
{
	for (size_t i = 0; i < pool->count; i++)
		if (memcmp(pool->entries[i].digest, digest, 32) == 0)
			return &pool->entries[i];
	return NULL;
}

static void pool_add(struct note_pool *pool, const uint8_t *note, size_t len)
{
	uint8_t digest[32];
	ck_assert_int_eq(crypto_sha256(note, len, digest), 0);
	if (pool_find(pool, digest))
		return;
	ck_assert_uint_lt(pool->count, MAX_NOTES);
	struct note_entry *entry = &pool->entries[pool->count++];
	buffer_init(&entry->note);
	ck_assert_int_eq(buffer_append(&entry->note, note, len), 0);
	memcpy(entry->digest, digest, 32);
}

static void epoch_times(uint64_t epoch, struct epoch_times *times)
{
	struct epoch_schedule schedule = {0, EPOCH_LENGTH, VALIDITY_EPOCHS, 0, 0, 0};
	ck_assert_int_eq(schedule_epoch_times(&schedule, epoch, times), 0);
}

/* Example registration reg (with the endpoint key of lifecycle_registration) at sequence. */
static void make_registration(unsigned reg, uint64_t sequence, struct registration *r)
{
	lifecycle_registration(reg, r);
	r->sequence = sequence;
	r->issued_at += (sequence - 1) * 60;
}

static void sign_registration(unsigned reg, uint64_t sequence, struct buffer *note)
{
	struct test_key provider;
	struct registration r;
	test_key_load(TEST_KEY_PROVIDER, &provider);
	make_registration(reg, sequence, &r);
	test_sign_registration(&r, &provider, note);
	registration_clear(&r);
	test_key_free(&provider);
}

/* Statement i of the catalogue, signed; *line gets its vote line. */
static void sign_statement(unsigned i, struct buffer *note, struct vote_body_health *line)
{
	const struct statement_spec *spec = &statements[i];
	struct epoch_times times;
	struct test_key key;
	struct registration r;
	struct health_statement s;
	epoch_times(EPOCH, &times);
	make_registration(spec->reg, 1, &r);
	lifecycle_statement(&r, spec->endpoint, spec->signer, spec->health_class, 0, spec->sequence, &s);
	s.issued_at = (uint64_t)((int64_t)times.valid_after + spec->issued);
	if (spec->forged)
		test_key_load(TEST_KEY_OTHER, &key);
	else if (spec->signer == HEALTH_SIGNER_ENDPOINT)
		lifecycle_key_load(LIFECYCLE_KEY_ENDPOINT, &key);
	else
		test_key_load(TEST_KEY_PROVIDER, &key);
	lifecycle_sign_statement(&s, &key, note);
	memset(line, 0, sizeof(*line));
	memcpy(line->service_id, s.service_id, SERVICE_ID_SIZE);
	memcpy(line->endpoint_id, s.endpoint_id, ENDPOINT_ID_SIZE);
	line->issued_at = s.issued_at;
	line->sequence = s.sequence;
	ck_assert_int_eq(crypto_sha256(note->data, note->len, line->statement_sha256), 0);
	registration_clear(&r);
	test_key_free(&key);
}

/* Revocation i of the catalogue, signed; *line gets its vote line. */
static void sign_revocation(unsigned i, struct buffer *note, struct vote_body_revocation *line)
{
	const struct revocation_spec *spec = &revocations[i];
	struct test_key key, signing;
	struct registration r;
	struct revocation rev;
	make_registration(spec->reg, 1, &r);
	if (spec->signer == REVOCATION_SIGNER_OPERATOR)
		lifecycle_key_load(LIFECYCLE_KEY_OPERATOR, &key);
	else
		test_key_load(TEST_KEY_PROVIDER, &key);
	lifecycle_revocation(&r, spec->endpoint, spec->signer, &key, spec->reason, 30 * i, 1, &rev);
	if (spec->forged)
		test_key_load(TEST_KEY_OTHER, &signing);
	else
		signing = key;
	lifecycle_sign_revocation(&rev, &signing, note);
	memset(line, 0, sizeof(*line));
	memcpy(line->service_id, rev.service_id, SERVICE_ID_SIZE);
	line->has_endpoint = rev.has_endpoint;
	memcpy(line->endpoint_id, rev.endpoint_id, ENDPOINT_ID_SIZE);
	ck_assert_int_eq(crypto_sha256(note->data, note->len, line->revocation_sha256), 0);
	if (spec->forged)
		test_key_free(&signing);
	registration_clear(&r);
	test_key_free(&key);
}

/* ---- the previous snapshots ---- */

struct previous_snapshot {
	struct buffer header;
	struct buffer body;
	uint64_t epoch;
	uint8_t digest[32];
};

/* 0 and 2: empty method-1 snapshots of E-1 and E-2; 1: a method-2 snapshot of E-1 without records
 * listing revocation 5 (since E-5) and revocation 6 (since E-60); 3: an empty method-2 snapshot of
 * E-1. Their files are vectors. */
static void previous_build(unsigned index, struct previous_snapshot *p, struct note_pool *pool)
{
	struct snapshot_header h;
	struct epoch_times times;
	buffer_init(&p->header);
	buffer_init(&p->body);
	p->epoch = index == PREVIOUS_OLDER ? EPOCH - 2 : EPOCH - 1;
	struct buffer notes[2];
	struct snapshot_revocation entries[2];
	struct snapshot_sections sections = {NULL, 0, entries, 0};
	if (index == PREVIOUS_REVOKING) {
		for (size_t i = 0; i < 2; i++) {
			struct vote_body_revocation line;
			buffer_init(&notes[i]);
			sign_revocation(5 + (unsigned)i, &notes[i], &line);
			pool_add(pool, notes[i].data, notes[i].len);
			memset(&entries[i], 0, sizeof(entries[i]));
			memcpy(entries[i].service_id, line.service_id, SERVICE_ID_SIZE);
			entries[i].has_endpoint = line.has_endpoint;
			memcpy(entries[i].endpoint_id, line.endpoint_id, ENDPOINT_ID_SIZE);
			entries[i].since = i == 0 ? EPOCH - 5 : EPOCH - VALIDITY_EPOCHS;
			entries[i].note = notes[i].data;
			entries[i].note_len = notes[i].len;
		}
		if (memcmp(entries[0].service_id, entries[1].service_id, SERVICE_ID_SIZE) > 0) {
			struct snapshot_revocation swap = entries[0];
			entries[0] = entries[1];
			entries[1] = swap;
		}
		sections.revocation_count = 2;
	}
	ck_assert_int_eq(snapshot_body_encode_sections(NAMESPACE, p->epoch, NULL, 0, &sections, &p->body), 0);
	if (index == PREVIOUS_REVOKING)
		for (size_t i = 0; i < 2; i++)
			buffer_free(&notes[i]);
	memset(&h, 0, sizeof(h));
	strcpy(h.namespace_name, NAMESPACE);
	strcpy(h.origin, ORIGIN);
	h.epoch = p->epoch;
	epoch_times(p->epoch, &times);
	h.valid_after = times.valid_after;
	h.fresh_until = times.fresh_until;
	h.valid_until = times.valid_until;
	ck_assert_int_eq(snapshot_records_root(NULL, 0, h.records_root), 0);
	h.body_size = p->body.len;
	ck_assert_int_eq(crypto_sha256(p->body.data, p->body.len, h.body_sha256), 0);
	h.consensus_method = index == PREVIOUS_REVOKING || index == PREVIOUS_METHOD_2 ? 2 : 1;
	ck_assert_int_eq(snapshot_header_encode(&h, &p->header), 0);
	ck_assert_int_eq(snapshot_header_digest(p->header.data, p->header.len, p->digest), 0);
}

static void previous_free(struct previous_snapshot *p)
{
	buffer_free(&p->header);
	buffer_free(&p->body);
}

static const char *const previous_names[PREVIOUS_COUNT] = {"method-1", "method-2-revoking", "older",
                                                           "method-2"};

/* ---- a case in memory ---- */

struct fixture {
	struct consensus_params params;
	struct consensus_lifecycle lifecycle;
	char namespace_name[NAMESPACE_NAME_MAX + 1];
	char origin[SNAPSHOT_ORIGIN_MAX + 1];
	size_t vote_count;
	struct vote votes[MAX_VOTES];
	struct vote_body bodies[MAX_VOTES];
	struct vote_body *loaded[MAX_VOTES];
	struct vote_body_record records[MAX_VOTES][MAX_HELD];
	struct vote_body_health health[MAX_VOTES][MAX_LINES];
	struct vote_body_revocation revocation_lines[MAX_VOTES][MAX_LINES];
	struct buffer body_text[MAX_VOTES];
	struct consensus_vote inputs[MAX_VOTES];
	struct previous_snapshot previous[PREVIOUS_COUNT];
	unsigned supplied;
	struct note_pool pool; /* the valid notes the computing authority holds */
};

static void fixture_free(struct fixture *f)
{
	for (size_t i = 0; i < MAX_VOTES; i++) {
		buffer_free(&f->body_text[i]);
		vote_body_free(f->loaded[i]);
	}
	for (size_t i = 0; i < PREVIOUS_COUNT; i++)
		previous_free(&f->previous[i]);
	pool_free(&f->pool);
	memset(f, 0, sizeof(*f));
}

static void fixture_supply(struct fixture *f, unsigned supplied)
{
	f->supplied = supplied;
	f->lifecycle.previous_header = f->previous[supplied].header.data;
	f->lifecycle.previous_header_len = f->previous[supplied].header.len;
	f->lifecycle.previous_body = f->previous[supplied].body.data;
	f->lifecycle.previous_body_len = f->previous[supplied].body.len;
}

static int health_line_order(const void *a, const void *b)
{
	return vote_body_health_compare(a, b);
}

static int revocation_line_order(const void *a, const void *b)
{
	return vote_body_revocation_compare(a, b);
}

static int record_order(const void *a, const void *b)
{
	return memcmp(((const struct snapshot_record *)a)->service_id,
	              ((const struct snapshot_record *)b)->service_id, SERVICE_ID_SIZE);
}

static void fixture_vote(struct fixture *f, size_t i, const struct vote_spec *spec)
{
	struct buffer notes[MAX_HELD];
	struct snapshot_record held[MAX_HELD];
	size_t count = 0;
	for (; count < MAX_HELD && spec->held[count].reg; count++) {
		buffer_init(&notes[count]);
		sign_registration(spec->held[count].reg, spec->held[count].sequence, &notes[count]);
		pool_add(&f->pool, notes[count].data, notes[count].len);
		struct registration r;
		struct note *parsed = NULL;
		ck_assert_int_eq(registration_parse_note(notes[count].data, notes[count].len, &r, &parsed),
		                 0);
		memcpy(held[count].service_id, r.service_id, SERVICE_ID_SIZE);
		held[count].note = notes[count].data;
		held[count].note_len = notes[count].len;
		registration_clear(&r);
		note_free(parsed);
	}
	qsort(held, count, sizeof(held[0]), record_order);
	struct vote_body *body = &f->bodies[i];
	memset(body, 0, sizeof(*body));
	strcpy(body->namespace_name, NAMESPACE);
	body->epoch = EPOCH;
	snprintf(body->authority, sizeof(body->authority), "authority-%zu.example", i + 1);
	for (size_t j = 0; j < count; j++) {
		struct vote_body_record *record = &f->records[i][j];
		struct registration r;
		ck_assert_int_eq(registration_parse_signed(held[j].note, held[j].note_len, &r, NULL), 0);
		memcpy(record->service_id, held[j].service_id, SERVICE_ID_SIZE);
		record->sequence = r.sequence;
		ck_assert_int_eq(crypto_sha256(held[j].note, held[j].note_len, record->registration_sha256),
		                 0);
		registration_clear(&r);
	}
	body->record_count = count;
	body->records = f->records[i];
	size_t lines = 0;
	for (; lines < MAX_LINES && spec->statements[lines]; lines++) {
		struct buffer note;
		buffer_init(&note);
		sign_statement(spec->statements[lines], &note, &f->health[i][lines]);
		if (!statements[spec->statements[lines]].forged)
			pool_add(&f->pool, note.data, note.len);
		buffer_free(&note);
	}
	qsort(f->health[i], lines, sizeof(f->health[i][0]), health_line_order);
	body->health_count = lines;
	body->health = lines ? f->health[i] : NULL;
	lines = 0;
	for (; lines < MAX_LINES && spec->revocations[lines]; lines++) {
		struct buffer note;
		buffer_init(&note);
		sign_revocation(spec->revocations[lines], &note, &f->revocation_lines[i][lines]);
		if (!revocations[spec->revocations[lines]].forged)
			pool_add(&f->pool, note.data, note.len);
		buffer_free(&note);
	}
	qsort(f->revocation_lines[i], lines, sizeof(f->revocation_lines[i][0]), revocation_line_order);
	body->revocation_count = lines;
	body->revocations = lines ? f->revocation_lines[i] : NULL;
	buffer_init(&f->body_text[i]);
	ck_assert_int_eq(vote_body_encode(body, &f->body_text[i]), 0);

	struct vote *vote = &f->votes[i];
	memset(vote, 0, sizeof(*vote));
	strcpy(vote->namespace_name, NAMESPACE);
	strcpy(vote->origin, ORIGIN);
	vote->epoch = EPOCH;
	strcpy(vote->authority, body->authority);
	vote->record_count = count;
	ck_assert_int_eq(snapshot_records_root(held, count, vote->records_root), 0);
	ck_assert_int_eq(crypto_sha256(f->body_text[i].data, f->body_text[i].len, vote->body_sha256), 0);
	vote->previous_epoch = f->previous[spec->previous].epoch;
	memcpy(vote->previous, f->previous[spec->previous].digest, 32);
	vote->method_count = spec->method_count;
	memcpy(vote->methods, spec->methods, spec->method_count * sizeof(uint64_t));
	for (size_t j = 0; j < count; j++)
		buffer_free(&notes[j]);
	consensus_vote_init(&f->inputs[i], vote, body);
}

static void fixture_params(struct fixture *f, size_t authorities, size_t threshold)
{
	strcpy(f->namespace_name, NAMESPACE);
	strcpy(f->origin, ORIGIN);
	f->params.namespace_name = f->namespace_name;
	f->params.origin = f->origin;
	f->params.epoch = EPOCH;
	epoch_times(EPOCH, &f->params.times);
	f->params.authorities = authorities;
	f->params.threshold = threshold;
	f->params.max_records = MAX_RECORDS;
	f->params.max_body_bytes = MAX_BODY_BYTES;
	f->params.lifecycle = &f->lifecycle;
	f->lifecycle.freshness_seconds = FRESHNESS;
	f->lifecycle.revocation_epochs = VALIDITY_EPOCHS;
	f->lifecycle.max_health = MAX_HEALTH;
	f->lifecycle.max_revocations = MAX_REVOCATIONS;
}

static void fixture_build(const struct case_spec *spec, struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	for (unsigned i = 0; i < PREVIOUS_COUNT; i++)
		previous_build(i, &f->previous[i], &f->pool);
	fixture_params(f, spec->authorities, spec->threshold);
	f->vote_count = spec->vote_count;
	for (size_t i = 0; i < spec->vote_count; i++)
		fixture_vote(f, i, &spec->votes[i]);
	fixture_supply(f, spec->supplied);
}

static const struct case_spec *case_named(const char *name)
{
	for (size_t i = 0; i < CASE_COUNT; i++)
		if (strcmp(cases[i].name, name) == 0)
			return &cases[i];
	ck_abort_msg("no case %s", name);
	return NULL;
}

/* ---- the computing authority ---- */

struct authority_view {
	const struct note_pool *pool;
	uint64_t valid_after;
	struct note_verifier provider, operator_key;
	size_t registration_calls, health_calls, revocation_calls;
	int fail_with; /* when not 0, every health and revocation callback returns it */
};

static void view_init(struct authority_view *view, const struct note_pool *pool,
                      const struct consensus_params *p)
{
	struct test_key provider, operator_key;
	memset(view, 0, sizeof(*view));
	view->pool = pool;
	view->valid_after = p->times.valid_after;
	test_key_load(TEST_KEY_PROVIDER, &provider);
	lifecycle_key_load(LIFECYCLE_KEY_OPERATOR, &operator_key);
	view->provider = provider.verifier;
	view->operator_key = operator_key.verifier;
	test_key_free(&provider);
	test_key_free(&operator_key);
}

static int view_registration(void *context, const uint8_t service_id[SERVICE_ID_SIZE], uint64_t sequence,
                             const uint8_t digest[32], const uint8_t **note, size_t *note_len)
{
	struct authority_view *view = context;
	view->registration_calls++;
	const struct note_entry *entry = pool_find(view->pool, digest);
	if (!entry)
		return DIRAUTH_ERR_NOT_FOUND;
	struct registration r;
	int rc = registration_parse_signed(entry->note.data, entry->note.len, &r, NULL);
	if (rc)
		return rc;
	if (!note_verifier_equal(&r.provider, &view->provider))
		rc = DIRAUTH_ERR_REFUSED;
	else if (strcmp(r.namespace_name, NAMESPACE) != 0 ||
	         memcmp(r.service_id, service_id, SERVICE_ID_SIZE) != 0 || r.sequence != sequence)
		rc = DIRAUTH_ERR_MISMATCH;
	else if (r.expires <= view->valid_after)
		rc = DIRAUTH_ERR_STALE;
	registration_clear(&r);
	if (rc == 0) {
		*note = entry->note.data;
		*note_len = entry->note.len;
	}
	return rc;
}

static int view_health(void *context, const uint8_t service_id[SERVICE_ID_SIZE],
                       const uint8_t endpoint_id[ENDPOINT_ID_SIZE], uint64_t issued_at, uint64_t sequence,
                       const uint8_t digest[32], const uint8_t **note, size_t *note_len)
{
	struct authority_view *view = context;
	(void)issued_at;
	(void)sequence;
	view->health_calls++;
	if (view->fail_with)
		return view->fail_with;
	const struct note_entry *entry = pool_find(view->pool, digest);
	if (!entry)
		return DIRAUTH_ERR_NOT_FOUND;
	struct health_statement s;
	struct note *parsed = NULL;
	int rc = health_parse_note(entry->note.data, entry->note.len, &s, &parsed);
	note_free(parsed);
	if (rc)
		return rc;
	if (memcmp(s.service_id, service_id, SERVICE_ID_SIZE) != 0 ||
	    memcmp(s.endpoint_id, endpoint_id, ENDPOINT_ID_SIZE) != 0)
		return DIRAUTH_ERR_MISMATCH;
	*note = entry->note.data;
	*note_len = entry->note.len;
	return 0;
}

static int view_revocation(void *context, const uint8_t service_id[SERVICE_ID_SIZE],
                           const uint8_t *endpoint_id, const uint8_t digest[32], const uint8_t **note,
                           size_t *note_len)
{
	struct authority_view *view = context;
	view->revocation_calls++;
	if (view->fail_with)
		return view->fail_with;
	const struct note_entry *entry = pool_find(view->pool, digest);
	if (!entry)
		return DIRAUTH_ERR_NOT_FOUND;
	struct revocation r;
	int rc = revocation_parse_signed(entry->note.data, entry->note.len, &r, NULL);
	if (rc)
		return rc;
	const struct note_verifier *allowed =
	    r.signer == REVOCATION_SIGNER_PROVIDER ? &view->provider : &view->operator_key;
	if (!note_verifier_equal(&r.key, allowed))
		return DIRAUTH_ERR_REFUSED;
	if (memcmp(r.service_id, service_id, SERVICE_ID_SIZE) != 0 ||
	    r.has_endpoint != (endpoint_id != NULL) ||
	    (endpoint_id && memcmp(r.endpoint_id, endpoint_id, ENDPOINT_ID_SIZE) != 0))
		return DIRAUTH_ERR_MISMATCH;
	*note = entry->note.data;
	*note_len = entry->note.len;
	return 0;
}

static int compute(struct fixture *f, struct authority_view *view, struct consensus_result *result,
                   struct consensus_failure *failure)
{
	f->lifecycle.health = view_health;
	f->lifecycle.revocation = view_revocation;
	f->lifecycle.context = view;
	return consensus_compute(&f->params, f->inputs, f->vote_count, view_registration, view, result,
	                         failure);
}

/* ---- the vector files ---- */

static void append_hex(struct buffer *out, const uint8_t *data, size_t len)
{
	char hex[65];
	ck_assert_uint_le(len, 32);
	hex_encode(data, len, hex);
	ck_assert_int_eq(buffer_append_string(out, hex), 0);
}

static void case_path(char *out, size_t cap, const char *name, const char *file)
{
	int n = snprintf(out, cap, VECTOR_DIR "%s/%s", name, file);
	ck_assert(n > 0 && (size_t)n < cap);
}

static void inputs_text(const struct fixture *f, struct buffer *out)
{
	const struct consensus_params *p = &f->params;
	const struct consensus_lifecycle *l = &f->lifecycle;
	ck_assert_int_eq(
	    buffer_appendf(
	        out,
	        "consensus-vector v1\nnamespace %s\norigin %s\nepoch %llu\nvalid-after %llu\n"
	        "fresh-until %llu\nvalid-until %llu\nauthorities %zu\nthreshold %zu\n"
	        "max-records %zu\nmax-body-bytes %zu\nfreshness-seconds %llu\nrevocation-epochs %llu\n"
	        "max-health %zu\nmax-revocations %zu\nprevious-snapshot %s\nvotes %zu\n",
	        p->namespace_name, p->origin, (unsigned long long)p->epoch,
	        (unsigned long long)p->times.valid_after, (unsigned long long)p->times.fresh_until,
	        (unsigned long long)p->times.valid_until, p->authorities, p->threshold, p->max_records,
	        p->max_body_bytes, (unsigned long long)l->freshness_seconds,
	        (unsigned long long)l->revocation_epochs, l->max_health, l->max_revocations,
	        previous_names[f->supplied], f->vote_count),
	    0);
	for (size_t i = 0; i < f->vote_count; i++) {
		const struct consensus_vote *v = &f->inputs[i];
		ck_assert_int_eq(buffer_appendf(out, "vote %zu previous-epoch %llu previous ", i + 1,
		                                (unsigned long long)v->previous_epoch),
		                 0);
		append_hex(out, v->previous, 32);
		ck_assert_int_eq(buffer_append_string(out, " consensus-methods"), 0);
		for (size_t m = 0; m < v->method_count; m++)
			ck_assert_int_eq(buffer_appendf(out, " %llu", (unsigned long long)v->methods[m]), 0);
		ck_assert_int_eq(buffer_append_string(out, "\n"), 0);
	}
}

static void fixture_write(const struct case_spec *spec, const struct fixture *f)
{
	char path[256], file[64];
	struct buffer text;
	buffer_init(&text);
	inputs_text(f, &text);
	case_path(path, sizeof(path), spec->name, "inputs.txt");
	test_vector_expect(path, text.data, text.len);
	for (size_t i = 0; i < f->vote_count; i++) {
		buffer_reset(&text);
		ck_assert_int_eq(vote_encode(&f->votes[i], &text), 0);
		snprintf(file, sizeof(file), "vote-%zu.txt", i + 1);
		case_path(path, sizeof(path), spec->name, file);
		test_vector_expect(path, text.data, text.len);
		snprintf(file, sizeof(file), "vote-%zu-body.txt", i + 1);
		case_path(path, sizeof(path), spec->name, file);
		test_vector_expect(path, f->body_text[i].data, f->body_text[i].len);
	}
	for (size_t i = 0; i < PREVIOUS_COUNT; i++) {
		snprintf(path, sizeof(path), VECTOR_DIR "previous/%s-header.txt", previous_names[i]);
		test_vector_expect(path, f->previous[i].header.data, f->previous[i].header.len);
		snprintf(path, sizeof(path), VECTOR_DIR "previous/%s-body.txt", previous_names[i]);
		test_vector_expect(path, f->previous[i].body.data, f->previous[i].body.len);
	}
	for (size_t i = 0; i < f->pool.count; i++) {
		char hex[65];
		hex_encode(f->pool.entries[i].digest, 32, hex);
		snprintf(path, sizeof(path), VECTOR_DIR "notes/%s.note", hex);
		test_vector_expect(path, f->pool.entries[i].note.data, f->pool.entries[i].note.len);
	}
	buffer_free(&text);
}

static struct text_span next_field(struct text_span *rest)
{
	struct text_span field;
	ck_assert_int_eq(text_next_field(rest, &field), 0);
	return field;
}

static uint64_t field_u64(struct text_span *rest)
{
	uint64_t value;
	ck_assert_int_eq(text_parse_u64(next_field(rest), &value), 0);
	return value;
}

static uint64_t expect_u64(struct line_reader *reader, const char *keyword)
{
	uint64_t value;
	ck_assert_msg(lines_expect_u64(reader, keyword, &value) == 0, "inputs.txt: line %s", keyword);
	return value;
}

static uint8_t *read_vector(const char *relative, size_t *len)
{
	return test_read_file(test_source_path(relative), len);
}

/* Loads a case from its files alone. */
static void fixture_load(const char *name, struct fixture *f)
{
	char path[256], file[64];
	size_t len;
	struct line_reader reader;
	struct text_span value;
	memset(f, 0, sizeof(*f));
	case_path(path, sizeof(path), name, "inputs.txt");
	uint8_t *inputs = read_vector(path, &len);
	lines_init(&reader, inputs, len, 512);
	ck_assert_int_eq(lines_expect_exact(&reader, "consensus-vector v1"), 0);
	ck_assert_int_eq(lines_expect(&reader, "namespace", &value), 0);
	ck_assert_int_eq(text_copy(value, f->namespace_name, sizeof(f->namespace_name)), 0);
	ck_assert_int_eq(lines_expect(&reader, "origin", &value), 0);
	ck_assert_int_eq(text_copy(value, f->origin, sizeof(f->origin)), 0);
	struct consensus_params *p = &f->params;
	struct consensus_lifecycle *l = &f->lifecycle;
	p->namespace_name = f->namespace_name;
	p->origin = f->origin;
	p->lifecycle = l;
	p->epoch = expect_u64(&reader, "epoch");
	p->times.valid_after = expect_u64(&reader, "valid-after");
	p->times.fresh_until = expect_u64(&reader, "fresh-until");
	p->times.valid_until = expect_u64(&reader, "valid-until");
	p->authorities = (size_t)expect_u64(&reader, "authorities");
	p->threshold = (size_t)expect_u64(&reader, "threshold");
	p->max_records = (size_t)expect_u64(&reader, "max-records");
	p->max_body_bytes = (size_t)expect_u64(&reader, "max-body-bytes");
	l->freshness_seconds = expect_u64(&reader, "freshness-seconds");
	l->revocation_epochs = expect_u64(&reader, "revocation-epochs");
	l->max_health = (size_t)expect_u64(&reader, "max-health");
	l->max_revocations = (size_t)expect_u64(&reader, "max-revocations");
	ck_assert_int_eq(lines_expect(&reader, "previous-snapshot", &value), 0);
	unsigned supplied = PREVIOUS_COUNT;
	for (unsigned i = 0; i < PREVIOUS_COUNT; i++)
		if (text_equals(value, previous_names[i]))
			supplied = i;
	ck_assert_uint_lt(supplied, PREVIOUS_COUNT);
	for (unsigned i = 0; i < PREVIOUS_COUNT; i++) {
		buffer_init(&f->previous[i].header);
		buffer_init(&f->previous[i].body);
		if (i != supplied)
			continue;
		snprintf(path, sizeof(path), VECTOR_DIR "previous/%s-header.txt", previous_names[i]);
		uint8_t *data = read_vector(path, &len);
		ck_assert_int_eq(buffer_append(&f->previous[i].header, data, len), 0);
		free(data);
		snprintf(path, sizeof(path), VECTOR_DIR "previous/%s-body.txt", previous_names[i]);
		data = read_vector(path, &len);
		ck_assert_int_eq(buffer_append(&f->previous[i].body, data, len), 0);
		free(data);
	}
	fixture_supply(f, supplied);
	f->vote_count = (size_t)expect_u64(&reader, "votes");
	ck_assert_uint_le(f->vote_count, MAX_VOTES);
	struct vote_body_limits limits = {p->max_records, l->max_health, l->max_revocations};
	for (size_t i = 0; i < f->vote_count; i++) {
		struct text_span rest;
		ck_assert_int_eq(lines_expect(&reader, "vote", &rest), 0);
		ck_assert_uint_eq(field_u64(&rest), i + 1);
		snprintf(file, sizeof(file), "vote-%zu.txt", i + 1);
		case_path(path, sizeof(path), name, file);
		size_t vote_len, body_len;
		uint8_t *vote_text = read_vector(path, &vote_len);
		ck_assert_int_eq(vote_parse(vote_text, vote_len, &f->votes[i]), 0);
		snprintf(file, sizeof(file), "vote-%zu-body.txt", i + 1);
		case_path(path, sizeof(path), name, file);
		uint8_t *body = read_vector(path, &body_len);
		ck_assert_int_eq(
		    consensus_vote_body_load_sections(&f->votes[i], body, body_len, &limits, &f->loaded[i]),
		    0);
		consensus_vote_init(&f->inputs[i], &f->votes[i], f->loaded[i]);
		/* The inputs line says what the vote text says. */
		ck_assert(text_equals(next_field(&rest), "previous-epoch"));
		ck_assert_uint_eq(field_u64(&rest), f->inputs[i].previous_epoch);
		free(vote_text);
		free(body);
	}
	ck_assert(lines_at_end(&reader));
	free(inputs);

	DIR *dir = opendir(test_source_path(VECTOR_DIR "notes"));
	ck_assert_ptr_nonnull(dir);
	struct dirent *entry;
	while ((entry = readdir(dir)) != NULL) {
		if (entry->d_name[0] == '.')
			continue;
		int n = snprintf(path, sizeof(path), VECTOR_DIR "notes/%s", entry->d_name);
		ck_assert(n > 0 && (size_t)n < sizeof(path));
		uint8_t *note = read_vector(path, &len);
		pool_add(&f->pool, note, len);
		char hex[65], expected[80];
		hex_encode(f->pool.entries[f->pool.count - 1].digest, 32, hex);
		snprintf(expected, sizeof(expected), "%s.note", hex);
		ck_assert_str_eq(entry->d_name, expected);
		free(note);
	}
	closedir(dir);
}

static void record_line(struct buffer *out, const char *keyword, const struct vote_body_record *record)
{
	ck_assert_int_eq(buffer_appendf(out, "%s ", keyword), 0);
	append_hex(out, record->service_id, SERVICE_ID_SIZE);
	ck_assert_int_eq(buffer_appendf(out, " %llu ", (unsigned long long)record->sequence), 0);
	append_hex(out, record->registration_sha256, 32);
	ck_assert_int_eq(buffer_append_string(out, "\n"), 0);
}

/* expected.txt: the outcome, and for ok what the snapshot holds and why. */
static void outcome_text(int rc, const struct consensus_result *result,
                         const struct consensus_failure *failure, struct buffer *out)
{
	ck_assert_int_eq(buffer_appendf(out, "outcome %s\n", consensus_outcome_name(failure->outcome)), 0);
	if (rc != 0) {
		ck_assert_int_eq(buffer_appendf(out, "cause %s\n", dirauth_error_name(failure->cause)), 0);
		return;
	}
	ck_assert_int_eq(buffer_appendf(out, "consensus-method %llu\nprevious-epoch %llu\nprevious ",
	                                (unsigned long long)result->method,
	                                (unsigned long long)result->previous_epoch),
	                 0);
	append_hex(out, result->previous, 32);
	ck_assert_int_eq(buffer_appendf(out, "\ncounting-votes %zu\nrecords %zu\n", result->counting_votes,
	                                result->record_count),
	                 0);
	size_t published = 0;
	struct vote_body_record *records =
	    test_published_versions(result->body.data, result->body.len, &published);
	ck_assert_uint_eq(published, result->record_count);
	for (size_t i = 0; i < published; i++)
		record_line(out, "record", &records[i]);
	free(records);
	ck_assert_int_eq(buffer_appendf(out, "excluded %zu\n", result->excluded_count), 0);
	for (size_t i = 0; i < result->excluded_count; i++)
		record_line(out, "excluded", &result->excluded[i]);
	ck_assert_int_eq(buffer_appendf(out, "health %zu\n", result->health_count), 0);
	for (size_t i = 0; i < result->health_count; i++) {
		const struct consensus_health *h = &result->health[i];
		ck_assert_int_eq(buffer_append_string(out, "health "), 0);
		append_hex(out, h->service_id, SERVICE_ID_SIZE);
		ck_assert_int_eq(buffer_append_string(out, " "), 0);
		append_hex(out, h->endpoint_id, ENDPOINT_ID_SIZE);
		ck_assert_int_eq(buffer_appendf(out, " %s %s %llu %llu ", health_class_name(h->health_class),
		                                health_signer_name(h->signer),
		                                (unsigned long long)h->issued_at,
		                                (unsigned long long)h->sequence),
		                 0);
		append_hex(out, h->digest, 32);
		ck_assert_int_eq(buffer_appendf(out, " held-by %zu\n", h->holders), 0);
	}
	ck_assert_int_eq(buffer_appendf(out, "revocations %zu\n", result->revocation_count), 0);
	for (size_t i = 0; i < result->revocation_count; i++) {
		const struct consensus_revocation *r = &result->revocations[i];
		ck_assert_int_eq(buffer_append_string(out, "revocation "), 0);
		append_hex(out, r->service_id, SERVICE_ID_SIZE);
		if (r->has_endpoint) {
			ck_assert_int_eq(buffer_append_string(out, " "), 0);
			append_hex(out, r->endpoint_id, ENDPOINT_ID_SIZE);
		} else {
			ck_assert_int_eq(buffer_append_string(out, " -"), 0);
		}
		ck_assert_int_eq(buffer_appendf(out, " since %llu %s ", (unsigned long long)r->since,
		                                r->carried ? "carried" : "new"),
		                 0);
		append_hex(out, r->digest, 32);
		ck_assert_int_eq(buffer_append_string(out, "\n"), 0);
	}
}

/* The digest of catalogue statement i, and of revocation i. */
static void statement_digest(unsigned i, uint8_t digest[32])
{
	struct buffer note;
	struct vote_body_health line;
	buffer_init(&note);
	sign_statement(i, &note, &line);
	memcpy(digest, line.statement_sha256, 32);
	buffer_free(&note);
}

static void revocation_digest(unsigned i, uint8_t digest[32])
{
	struct buffer note;
	struct vote_body_revocation line;
	buffer_init(&note);
	sign_revocation(i, &note, &line);
	memcpy(digest, line.revocation_sha256, 32);
	buffer_free(&note);
}

static int result_has_statement(const struct consensus_result *result, unsigned i)
{
	uint8_t digest[32];
	statement_digest(i, digest);
	for (size_t j = 0; j < result->health_count; j++)
		if (memcmp(result->health[j].digest, digest, 32) == 0)
			return 1;
	return 0;
}

static int result_has_revocation(const struct consensus_result *result, unsigned i)
{
	uint8_t digest[32];
	revocation_digest(i, digest);
	for (size_t j = 0; j < result->revocation_count; j++)
		if (memcmp(result->revocations[j].digest, digest, 32) == 0)
			return 1;
	return 0;
}

/* What each case must show, beyond its files: checked on the result by catalogue index. */
static void check_case(const char *name, const struct consensus_result *result)
{
	if (strcmp(name, "first-epoch") == 0) {
		ck_assert_uint_eq(result->method, 2);
		ck_assert_uint_eq(result->health_count + result->revocation_count + result->excluded_count,
		                  0);
		ck_assert_uint_eq(result->record_count, 3);
	} else if (strcmp(name, "health") == 0) {
		ck_assert_uint_eq(result->health_count, 2);
		ck_assert(result_has_statement(result, 1));
		ck_assert(result_has_statement(result, 3)); /* the k-th newest, not the newest */
		ck_assert(!result_has_statement(result, 2) && !result_has_statement(result, 4));
		ck_assert(!result_has_statement(result, 5) && !result_has_statement(result, 6));
		ck_assert_int_eq(result->health[0].signer, HEALTH_SIGNER_ENDPOINT);
	} else if (strcmp(name, "health-minority") == 0) {
		ck_assert_uint_eq(result->health_count, 4);
		ck_assert(result_has_statement(result, 7));
		ck_assert(result_has_statement(result, 10));
		ck_assert(result_has_statement(result, 12));
		ck_assert(result_has_statement(result, 15));
		ck_assert(!result_has_statement(result, 8) && !result_has_statement(result, 11));
	} else if (strcmp(name, "revocations") == 0) {
		ck_assert_uint_eq(result->record_count, 1);
		ck_assert_uint_eq(result->excluded_count, 3);
		ck_assert(result_has_revocation(result, 1));
		ck_assert(!result_has_revocation(result, 2));
		ck_assert(result_has_revocation(result, 3));
		ck_assert(result_has_revocation(result, 4));
		ck_assert(result_has_statement(result, 17));
		ck_assert(!result_has_statement(result, 16)); /* its registration is out */
	} else if (strcmp(name, "revocation-carried") == 0) {
		ck_assert_uint_eq(result->record_count, 1);
		ck_assert_uint_eq(result->excluded_count, 2);
		ck_assert(result_has_revocation(result, 5));
		ck_assert(!result_has_revocation(result, 6)); /* 60 epochs since its first listing */
		ck_assert(result_has_revocation(result, 7));
		for (size_t i = 0; i < result->revocation_count; i++)
			ck_assert_uint_eq(result->revocations[i].since,
			                  result->revocations[i].carried ? EPOCH - 5 : EPOCH);
		ck_assert(result_has_statement(result, 18));
	}
}

static void run_vector(const struct case_spec *spec)
{
	struct fixture built, loaded;
	struct consensus_result result, again;
	struct consensus_failure failure, failure_again;
	struct authority_view view;
	struct buffer text;
	char path[256];

	fixture_build(spec, &built);
	fixture_write(spec, &built);
	fixture_load(spec->name, &loaded);

	view_init(&view, &loaded.pool, &loaded.params);
	int rc = compute(&loaded, &view, &result, &failure);
	ck_assert_msg(strcmp(consensus_outcome_name(failure.outcome), spec->outcome) == 0,
	              "%s: outcome %s, not %s", spec->name, consensus_outcome_name(failure.outcome),
	              spec->outcome);
	buffer_init(&text);
	outcome_text(rc, &result, &failure, &text);
	case_path(path, sizeof(path), spec->name, "expected.txt");
	test_vector_expect(path, text.data, text.len);
	if (rc == 0) {
		check_case(spec->name, &result);
		case_path(path, sizeof(path), spec->name, "header.txt");
		test_vector_expect(path, result.header_text.data, result.header_text.len);
		case_path(path, sizeof(path), spec->name, "body.txt");
		test_vector_expect(path, result.body.data, result.body.len);
		/* What a mirror checks holds: the header parses back and the body verifies against it,
		 * every class with its statement, every revocation with its signature. */
		struct snapshot_header parsed;
		struct snapshot_body_limits limits = {MAX_RECORDS, MAX_HEALTH, MAX_REVOCATIONS};
		ck_assert_int_eq(
		    snapshot_header_parse(result.header_text.data, result.header_text.len, &parsed), 0);
		ck_assert_int_eq(memcmp(&parsed, &result.header, sizeof(parsed)), 0);
		ck_assert_int_eq(snapshot_body_verify_sections(&parsed, result.body.data, result.body.len,
		                                               &limits, FRESHNESS),
		                 0);
	}

	/* The order of the votes changes nothing. */
	struct consensus_vote reversed[MAX_VOTES];
	for (size_t i = 0; i < loaded.vote_count; i++)
		reversed[i] = loaded.inputs[loaded.vote_count - 1 - i];
	memcpy(loaded.inputs, reversed, sizeof(reversed));
	view_init(&view, &loaded.pool, &loaded.params);
	int rc_again = compute(&loaded, &view, &again, &failure_again);
	ck_assert_int_eq(rc_again, rc);
	ck_assert_int_eq(failure_again.outcome, failure.outcome);
	if (rc == 0) {
		ck_assert_uint_eq(again.body.len, result.body.len);
		ck_assert_mem_eq(again.body.data, result.body.data, result.body.len);
		ck_assert_uint_eq(again.header_text.len, result.header_text.len);
		ck_assert_mem_eq(again.header_text.data, result.header_text.data, result.header_text.len);
	}

	/* The vectors say what the code built in memory too. */
	struct consensus_result direct;
	view_init(&view, &built.pool, &built.params);
	ck_assert_int_eq(compute(&built, &view, &direct, NULL), rc);
	ck_assert_uint_eq(direct.body.len, result.body.len);
	if (rc == 0)
		ck_assert_mem_eq(direct.body.data, result.body.data, result.body.len);

	consensus_result_clear(&direct);
	consensus_result_clear(&again);
	consensus_result_clear(&result);
	buffer_free(&text);
	fixture_free(&built);
	fixture_free(&loaded);
}

START_TEST(test_vectors)
{
	run_vector(&cases[_i]);
}
END_TEST

/* The first method-2 snapshot is the method-1 snapshot of the same votes, but for its method. */
START_TEST(test_first_epoch_is_the_method_1_body)
{
	struct fixture f;
	struct authority_view view;
	struct consensus_result two, one;
	fixture_build(case_named("first-epoch"), &f);
	view_init(&view, &f.pool, &f.params);
	ck_assert_int_eq(compute(&f, &view, &two, NULL), 0);
	for (size_t i = 0; i < f.vote_count; i++)
		f.inputs[i].method_count = 1;
	ck_assert_int_eq(compute(&f, &view, &one, NULL), 0);
	ck_assert_uint_eq(one.method, 1);
	ck_assert_uint_eq(two.method, 2);
	ck_assert_uint_eq(one.body.len, two.body.len);
	ck_assert_mem_eq(one.body.data, two.body.data, one.body.len);
	ck_assert_mem_eq(one.header.records_root, two.header.records_root, 32);
	consensus_result_clear(&one);
	consensus_result_clear(&two);
	fixture_free(&f);
}
END_TEST

/* Method 1 still ignores what method 2 adds: sections in the bodies, revocations in votes. */
START_TEST(test_method_1_ignores_sections)
{
	struct fixture f;
	struct authority_view view;
	struct consensus_result result;
	fixture_build(case_named("revocations"), &f);
	for (size_t i = 0; i < f.vote_count; i++)
		f.inputs[i].method_count = 1;
	f.params.lifecycle = NULL;
	view_init(&view, &f.pool, &f.params);
	ck_assert_int_eq(
	    consensus_compute(&f.params, f.inputs, f.vote_count, view_registration, &view, &result, NULL), 0);
	ck_assert_uint_eq(result.method, 1);
	ck_assert_uint_eq(result.record_count, 4); /* nothing revoked under method 1 */
	ck_assert_uint_eq(result.health_count + result.revocation_count + result.excluded_count, 0);
	ck_assert_uint_eq(view.health_calls + view.revocation_calls, 0);
	consensus_result_clear(&result);
	fixture_free(&f);
}
END_TEST

/* Computes f and expects outcome returning rc; returns the failure's cause. */
static int expect_outcome(struct fixture *f, enum consensus_outcome outcome, int rc, const char *what)
{
	struct authority_view view;
	struct consensus_result result;
	struct consensus_failure failure;
	view_init(&view, &f->pool, &f->params);
	int got = compute(f, &view, &result, &failure);
	ck_assert_msg(got == rc && failure.outcome == outcome, "%s: got %s (%s), expected %s (%s)", what,
	              consensus_outcome_name(failure.outcome), dirauth_error_name(got),
	              consensus_outcome_name(outcome), dirauth_error_name(rc));
	if (got) {
		ck_assert_ptr_null(result.body.data);
		ck_assert_ptr_null(result.health);
		ck_assert_ptr_null(result.revocations);
		ck_assert_ptr_null(result.excluded);
	}
	consensus_result_clear(&result);
	return failure.cause;
}

START_TEST(test_refuses_missing_inputs)
{
	struct fixture f;
	fixture_build(case_named("health"), &f);
	f.params.lifecycle = NULL;
	expect_outcome(&f, CONSENSUS_BAD_PARAMETERS, DIRAUTH_ERR_CONFIG, "no lifecycle inputs");
	f.params.lifecycle = &f.lifecycle;
	f.lifecycle.freshness_seconds = 0;
	expect_outcome(&f, CONSENSUS_BAD_PARAMETERS, DIRAUTH_ERR_CONFIG, "freshness 0");
	f.lifecycle.freshness_seconds = FRESHNESS;
	f.lifecycle.revocation_epochs = 0;
	expect_outcome(&f, CONSENSUS_BAD_PARAMETERS, DIRAUTH_ERR_CONFIG, "revocation epochs 0");
	fixture_free(&f);
	/* No callbacks: consensus_compute is given them through the lifecycle, checked here. */
	fixture_build(case_named("health"), &f);
	struct authority_view view;
	struct consensus_result result;
	struct consensus_failure failure;
	view_init(&view, &f.pool, &f.params);
	f.lifecycle.health = NULL;
	f.lifecycle.revocation = view_revocation;
	ck_assert_int_eq(
	    consensus_compute(&f.params, f.inputs, f.vote_count, view_registration, &view, &result, &failure),
	    DIRAUTH_ERR_CONFIG);
	ck_assert_int_eq(failure.outcome, CONSENSUS_BAD_PARAMETERS);
	fixture_free(&f);
}
END_TEST

START_TEST(test_refuses_ill_formed_sections)
{
	struct fixture f;
	fixture_build(case_named("health-minority"), &f);
	f.lifecycle.max_health = 3;
	expect_outcome(&f, CONSENSUS_BAD_VOTE, DIRAUTH_ERR_BOUNDS, "more health lines than max-health");
	fixture_free(&f);
	fixture_build(case_named("revocations"), &f);
	f.lifecycle.max_revocations = 1;
	expect_outcome(&f, CONSENSUS_BAD_VOTE, DIRAUTH_ERR_BOUNDS,
	               "more revocation lines than max-revocations");
	fixture_free(&f);
	fixture_build(case_named("health"), &f);
	struct vote_body_health swap = f.health[0][0];
	f.health[0][0] = f.health[0][1];
	f.health[0][1] = swap;
	expect_outcome(&f, CONSENSUS_BAD_VOTE, DIRAUTH_ERR_SYNTAX, "health lines unsorted");
	fixture_free(&f);
	fixture_build(case_named("health"), &f);
	f.health[1][0].sequence = 0;
	expect_outcome(&f, CONSENSUS_BAD_VOTE, DIRAUTH_ERR_SYNTAX, "health sequence 0");
	fixture_free(&f);
	fixture_build(case_named("revocations"), &f);
	f.revocation_lines[0][1] = f.revocation_lines[0][0];
	expect_outcome(&f, CONSENSUS_BAD_VOTE, DIRAUTH_ERR_SYNTAX, "revocation lines repeated");
	fixture_free(&f);
	fixture_build(case_named("revocations"), &f);
	f.bodies[2].revocations = NULL;
	expect_outcome(&f, CONSENSUS_BAD_VOTE, DIRAUTH_ERR_SYNTAX, "revocations missing");
	fixture_free(&f);
}
END_TEST

static const struct case_spec spread_health = {"spread-health",
                                               "ok",
                                               3,
                                               2,
                                               3,
                                               PREVIOUS_METHOD_2,
                                               {{PREVIOUS_METHOD_2, M12, REGS_1_2, {1, 2}, {0}},
                                                {PREVIOUS_METHOD_2, M12, REGS_1_2, {1, 4}, {0}},
                                                {PREVIOUS_METHOD_2, M12, REGS_1_2, {2, 4}, {0}}}};

START_TEST(test_result_bounds)
{
	struct fixture f;
	/* Three endpoints each held by two of three votes, each vote listing two: three entries
	 * published, two allowed. */
	fixture_build(&spread_health, &f);
	f.lifecycle.max_health = 3;
	expect_outcome(&f, CONSENSUS_OK, 0, "three health entries, three allowed");
	f.lifecycle.max_health = 2;
	expect_outcome(&f, CONSENSUS_TOO_MANY_STATEMENTS, DIRAUTH_ERR_BOUNDS,
	               "three health entries, two allowed");
	fixture_free(&f);
	/* Three revocations listed, two allowed (no vote lists more than two). */
	fixture_build(case_named("revocations"), &f);
	f.lifecycle.max_revocations = 2;
	expect_outcome(&f, CONSENSUS_TOO_MANY_STATEMENTS, DIRAUTH_ERR_BOUNDS,
	               "three revocations, two allowed");
	fixture_free(&f);
	fixture_build(case_named("revocation-carried"), &f);
	f.lifecycle.max_revocations = 2;
	expect_outcome(&f, CONSENSUS_OK, 0, "two listed, two allowed");
	fixture_free(&f);
	/* The body bound counts the sections. */
	fixture_build(case_named("health"), &f);
	struct authority_view view;
	struct consensus_result result;
	view_init(&view, &f.pool, &f.params);
	ck_assert_int_eq(compute(&f, &view, &result, NULL), 0);
	size_t size = result.body.len;
	consensus_result_clear(&result);
	f.params.max_body_bytes = size;
	expect_outcome(&f, CONSENSUS_OK, 0, "body at its bound");
	f.params.max_body_bytes = size - 1;
	expect_outcome(&f, CONSENSUS_BODY_TOO_LARGE, DIRAUTH_ERR_BOUNDS, "body over its bound");
	fixture_free(&f);
}
END_TEST

START_TEST(test_previous_checks)
{
	struct fixture f;
	/* The caller holds none, or another one, or one whose body is not what its header says. */
	fixture_build(case_named("health"), &f);
	f.lifecycle.previous_header = NULL;
	expect_outcome(&f, CONSENSUS_PREVIOUS_MISSING, DIRAUTH_ERR_NOT_FOUND, "no previous held");
	fixture_supply(&f, PREVIOUS_REVOKING);
	expect_outcome(&f, CONSENSUS_PREVIOUS_MISSING, DIRAUTH_ERR_NOT_FOUND, "another previous held");
	fixture_supply(&f, PREVIOUS_METHOD_2);
	f.lifecycle.previous_body = NULL;
	expect_outcome(&f, CONSENSUS_PREVIOUS_MISSING, DIRAUTH_ERR_NOT_FOUND, "no previous body");
	fixture_supply(&f, PREVIOUS_METHOD_2);
	f.lifecycle.previous_body_len--;
	ck_assert_int_eq(expect_outcome(&f, CONSENSUS_PREVIOUS_MISSING, DIRAUTH_ERR_NOT_FOUND,
	                                "a previous body cut short"),
	                 DIRAUTH_ERR_MISMATCH);
	fixture_supply(&f, PREVIOUS_METHOD_2);
	uint8_t *copy = malloc(f.lifecycle.previous_body_len);
	ck_assert_ptr_nonnull(copy);
	memcpy(copy, f.lifecycle.previous_body, f.lifecycle.previous_body_len);
	copy[f.lifecycle.previous_body_len - 3] ^= 1;
	f.lifecycle.previous_body = copy;
	ck_assert_int_eq(
	    expect_outcome(&f, CONSENSUS_PREVIOUS_MISSING, DIRAUTH_ERR_NOT_FOUND, "a previous body altered"),
	    DIRAUTH_ERR_MISMATCH);
	free(copy);
	fixture_free(&f);
	/* A method-1 previous needs no body; the first snapshot of a namespace needs nothing. */
	fixture_build(case_named("first-epoch"), &f);
	f.lifecycle.previous_body = NULL;
	expect_outcome(&f, CONSENSUS_OK, 0, "method-1 previous without body");
	for (size_t i = 0; i < f.vote_count; i++) {
		f.inputs[i].previous_epoch = 0;
		memset(f.inputs[i].previous, 0, 32);
	}
	f.lifecycle.previous_header = NULL;
	expect_outcome(&f, CONSENSUS_OK, 0, "no previous at all");
	fixture_free(&f);
}
END_TEST

START_TEST(test_callback_failures)
{
	struct fixture f;
	struct authority_view view;
	struct consensus_result result;
	struct consensus_failure failure;
	/* A check that cannot run stops the computation; a refusal only leaves the note out. */
	fixture_build(case_named("revocations"), &f);
	view_init(&view, &f.pool, &f.params);
	view.fail_with = DIRAUTH_ERR_IO;
	ck_assert_int_eq(compute(&f, &view, &result, &failure), DIRAUTH_ERR_IO);
	ck_assert_int_eq(failure.outcome, CONSENSUS_FAILED);
	view_init(&view, &f.pool, &f.params);
	view.fail_with = DIRAUTH_ERR_REFUSED;
	ck_assert_int_eq(compute(&f, &view, &result, &failure), 0);
	ck_assert_uint_eq(result.revocation_count, 0);
	ck_assert_uint_eq(result.health_count, 0);
	ck_assert_uint_eq(result.record_count, 4);
	consensus_result_clear(&result);
	fixture_free(&f);
	/* A registration note missing for a revoked service is not asked for; for another it is. */
	fixture_build(case_named("revocations"), &f);
	view_init(&view, &f.pool, &f.params);
	ck_assert_int_eq(compute(&f, &view, &result, &failure), 0);
	/* Judged: services 1, 2 and 4 (service 3 is revoked); then each published one again, to be
	 * written. */
	ck_assert_uint_eq(view.registration_calls, 3 + result.record_count);
	consensus_result_clear(&result);
	fixture_free(&f);
}
END_TEST

START_TEST(test_outcome_words)
{
	struct consensus_failure failure;
	char text[512];
	memset(&failure, 0, sizeof(failure));
	failure.outcome = CONSENSUS_TOO_MANY_STATEMENTS;
	failure.required = 7;
	consensus_failure_describe(&failure, text, sizeof(text));
	ck_assert_ptr_nonnull(strstr(text, "more than 7"));
	failure.outcome = CONSENSUS_PREVIOUS_MISSING;
	failure.cause = DIRAUTH_ERR_NOT_FOUND;
	consensus_failure_describe(&failure, text, sizeof(text));
	ck_assert_ptr_nonnull(strstr(text, "previous snapshot"));
	ck_assert_str_eq(consensus_outcome_name(CONSENSUS_TOO_MANY_STATEMENTS), "too-many-statements");
	ck_assert_str_eq(consensus_outcome_name(CONSENSUS_PREVIOUS_MISSING), "previous-missing");
}
END_TEST

static Suite *lifecycle_suite(void)
{
	Suite *suite = suite_create("consensus_lifecycle");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_vectors, 0, (int)CASE_COUNT);
	tcase_add_test(tc, test_first_epoch_is_the_method_1_body);
	tcase_add_test(tc, test_method_1_ignores_sections);
	tcase_add_test(tc, test_refuses_missing_inputs);
	tcase_add_test(tc, test_refuses_ill_formed_sections);
	tcase_add_test(tc, test_result_bounds);
	tcase_add_test(tc, test_previous_checks);
	tcase_add_test(tc, test_callback_failures);
	tcase_add_test(tc, test_outcome_words);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(lifecycle_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
