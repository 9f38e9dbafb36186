/*
 * check_consensus.c: the consensus rule, method 1: the vectors under tests/vectors/consensus/
 * (votes and inputs in, header text and body bytes out, compared byte for byte), the choice rule
 * against a direct computation on random votes, and every refusal of consensus_compute.
 *
 * Each vector is a case table below: who votes, naming which previous snapshot and which
 * methods, holding which registration versions. The test builds the case from the EXAMPLE keys
 * (tests/support/test_keys.c), writes or compares its input files (inputs.txt, each vote's text
 * and body, the registration notes), then loads the case back from those files alone, runs the
 * rule, and compares the outcome (expected.txt), header (header.txt) and body (body.txt) with the
 * vector. So the vectors are exactly what another implementation needs. DIRAUTH_WRITE_VECTORS=1
 * writes them instead (remove tests/vectors/consensus/registrations/ first when cases change).
 *
 * The computing authority of every vector holds every valid registration note of the vectors
 * (registrations/) and checks each note it supplies as an authority's intake does: signed by its
 * provider, the provider enrolled (provider.example), namespace, service id and sequence as
 * chosen, not expired at valid-after.
 */
#include "consensus/consensus.h"
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

#define VECTOR_DIR      "tests/vectors/consensus/"
#define NAMESPACE       "example-net"
#define ORIGIN          "dirauth.example/example-net"
#define EPOCH           29453762ull
#define EPOCH_LENGTH    60
#define VALIDITY_EPOCHS 60
#define MAX_RECORDS     1000
#define MAX_BODY_BYTES  (512u * 1024 * 1024)
#define MAX_VOTES       5
#define MAX_HELD        6
#define PREVIOUS_COUNT  4
#define PREVIOUS_NONE   3

/* ---- registration notes ---- */

struct note_entry {
	struct buffer note;
	uint8_t digest[32];
};

struct note_pool {
	struct note_entry *entries;
	size_t count;
	size_t cap;
};

static void pool_free(struct note_pool *pool)
{
	for (size_t i = 0; i < pool->count; i++)
		buffer_free(&pool->entries[i].note);
	free(pool->entries);
	memset(pool, 0, sizeof(*pool));
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
	if (pool->count == pool->cap) {
		pool->cap = pool->cap ? pool->cap * 2 : 16;
		pool->entries = realloc(pool->entries, pool->cap * sizeof(*pool->entries));
		ck_assert_ptr_nonnull(pool->entries);
	}
	struct note_entry *entry = &pool->entries[pool->count++];
	buffer_init(&entry->note);
	ck_assert_int_eq(buffer_append(&entry->note, note, len), 0);
	memcpy(entry->digest, digest, 32);
}

/* Example registration number service at sequence, signed by signer. A sequence moves issued-at
 * on by a minute per step; variant v lengthens the validity by v days: the same sequence with
 * other bytes, as a provider that signed twice would make. */
static void make_registration(unsigned service, uint64_t sequence, unsigned variant, unsigned signer,
                              struct buffer *note, uint8_t service_id[SERVICE_ID_SIZE])
{
	struct test_key provider, signing;
	struct registration r;
	test_key_load(TEST_KEY_PROVIDER, &provider);
	test_key_load(signer, &signing);
	test_example_registration(service, NAMESPACE, &provider, &r);
	r.sequence = sequence;
	r.issued_at += (sequence - 1) * 60;
	r.expires += (uint64_t)variant * 86400;
	test_sign_registration(&r, &signing, note);
	if (service_id)
		memcpy(service_id, r.service_id, SERVICE_ID_SIZE);
	registration_clear(&r);
	test_key_free(&provider);
	test_key_free(&signing);
}

/* ---- the case tables ---- */

/* A version a vote holds. forged: the note was signed by other-provider.example in the name of
 * provider.example, so no honest authority holds it: a version a minority invents. */
struct held {
	unsigned service; /* example registration index; 0 ends the list */
	uint64_t sequence;
	unsigned variant;
	unsigned forged;
};

struct vote_spec {
	unsigned previous; /* index into the previous snapshots, PREVIOUS_NONE for none */
	size_t method_count;
	uint64_t methods[4];
	struct held held[MAX_HELD];
};

struct case_spec {
	const char *name;
	const char *outcome; /* what the case shows */
	size_t authorities, threshold, vote_count;
	struct vote_spec votes[MAX_VOTES];
	struct held chosen[MAX_HELD]; /* for "ok": the versions the snapshot must carry */
};

#define M1                                                                                                   \
	1,                                                                                                   \
	{                                                                                                    \
		1                                                                                            \
	}
#define HOLD_1_2_3                                                                                           \
	{                                                                                                    \
		{1, 1, 0, 0}, {2, 1, 0, 0},                                                                  \
		{                                                                                            \
			3, 1, 0, 0                                                                           \
		}                                                                                            \
	}

static const struct case_spec cases[] = {
    {"agreement",
     "ok",
     3,
     2,
     3,
     {{0, M1, HOLD_1_2_3}, {0, 2, {1, 2}, HOLD_1_2_3}, {0, 2, {1, 5}, HOLD_1_2_3}},
     HOLD_1_2_3},
    /* authority-3 has not yet seen sequence 2 of service 1, nor service 3 at all. */
    {"lagging-authority",
     "ok",
     3,
     2,
     3,
     {{0, M1, {{1, 2, 0, 0}, {2, 1, 0, 0}, {3, 1, 0, 0}}},
      {0, M1, {{1, 2, 0, 0}, {2, 1, 0, 0}, {3, 1, 0, 0}}},
      {0, M1, {{1, 1, 0, 0}, {2, 1, 0, 0}}}},
     {{1, 2, 0, 0}, {2, 1, 0, 0}, {3, 1, 0, 0}}},
    /* authorities 4 and 5 vote a forged sequence 9 of service 1 and a forged service 4. */
    {"forged-minority",
     "ok",
     5,
     3,
     5,
     {{0, M1, HOLD_1_2_3},
      {0, M1, HOLD_1_2_3},
      {0, M1, HOLD_1_2_3},
      {0, M1, {{1, 9, 0, 1}, {2, 1, 0, 0}, {3, 1, 0, 0}, {4, 1, 0, 1}}},
      {0, M1, {{1, 9, 0, 1}, {2, 1, 0, 0}, {3, 1, 0, 0}, {4, 1, 0, 1}}}},
     HOLD_1_2_3},
    /* authorities 4 and 5 leave service 2 out, and hold service 3 back at sequence 1. */
    {"withholding-minority",
     "ok",
     5,
     3,
     5,
     {{0, M1, {{1, 1, 0, 0}, {2, 1, 0, 0}, {3, 2, 0, 0}}},
      {0, M1, {{1, 1, 0, 0}, {2, 1, 0, 0}, {3, 2, 0, 0}}},
      {0, M1, {{1, 1, 0, 0}, {2, 1, 0, 0}, {3, 2, 0, 0}}},
      {0, M1, {{1, 1, 0, 0}, {3, 1, 0, 0}}},
      {0, M1, {{1, 1, 0, 0}, {3, 1, 0, 0}}}},
     {{1, 1, 0, 0}, {2, 1, 0, 0}, {3, 2, 0, 0}}},
    /* Service 1: 3,3,2,2,2 gives 2. Service 2: 3,3,3,2,2 gives 3. Service 3: two notes with
     * sequence 1 held by two votes each, one vote without: the lower digest is third. */
    {"split-sequences",
     "ok",
     5,
     3,
     5,
     {{0, M1, {{1, 3, 0, 0}, {2, 3, 0, 0}, {3, 1, 0, 0}}},
      {0, M1, {{1, 3, 0, 0}, {2, 3, 0, 0}, {3, 1, 0, 0}}},
      {0, M1, {{1, 2, 0, 0}, {2, 3, 0, 0}, {3, 1, 1, 0}}},
      {0, M1, {{1, 2, 0, 0}, {2, 2, 0, 0}, {3, 1, 1, 0}}},
      {0, M1, {{1, 2, 0, 0}, {2, 2, 0, 0}}}},
     {{1, 2, 0, 0}, {2, 3, 0, 0}, {3, 1, 99, 0}}}, /* variant 99: the lower digest of 0 and 1 */
    {"too-few-votes", "too-few-votes", 3, 2, 1, {{0, M1, HOLD_1_2_3}}, {{0, 0, 0, 0}}},
    /* Five votes, three different previous snapshots, none named by three. */
    {"previous-disagreement",
     "no-previous",
     5,
     3,
     5,
     {{0, M1, HOLD_1_2_3},
      {0, M1, HOLD_1_2_3},
      {1, M1, HOLD_1_2_3},
      {1, M1, HOLD_1_2_3},
      {2, M1, HOLD_1_2_3}},
     {{0, 0, 0, 0}}},
    /* authority-3 names another previous: it does not count, so service 4, held by authority-1
     * and authority-3, has one counting holder and is out. */
    {"previous-minority",
     "ok",
     3,
     2,
     3,
     {{0, M1, {{1, 1, 0, 0}, {2, 1, 0, 0}, {3, 1, 0, 0}, {4, 1, 0, 0}}},
      {0, M1, HOLD_1_2_3},
      {1, M1, {{1, 1, 0, 0}, {2, 1, 0, 0}, {3, 1, 0, 0}, {4, 1, 0, 0}}}},
     HOLD_1_2_3},
    /* The honest votes disagree on service 1 (3 against 1, 1) and the minority votes a forged
     * sequence 2 between them: the third version is forged, no note can be supplied, and the
     * whole consensus fails naming the service rather than leaving it out. */
    {"forged-between-split",
     "note-missing",
     5,
     3,
     5,
     {{0, M1, {{1, 3, 0, 0}, {2, 1, 0, 0}}},
      {0, M1, {{1, 1, 0, 0}, {2, 1, 0, 0}}},
      {0, M1, {{1, 1, 0, 0}, {2, 1, 0, 0}}},
      {0, M1, {{1, 2, 0, 1}, {2, 1, 0, 0}}},
      {0, M1, {{1, 2, 0, 1}, {2, 1, 0, 0}}}},
     {{0, 0, 0, 0}}},
};

#define CASE_COUNT (sizeof(cases) / sizeof(cases[0]))

/* ---- the previous snapshots the votes name ---- */

struct previous_set {
	uint64_t epoch[PREVIOUS_COUNT];
	uint8_t digest[PREVIOUS_COUNT][32];
};

static void epoch_times(uint64_t epoch, struct epoch_times *times)
{
	struct epoch_schedule schedule = {0, EPOCH_LENGTH, VALIDITY_EPOCHS, 0, 0, 0};
	ck_assert_int_eq(schedule_epoch_times(&schedule, epoch, times), 0);
}

/* Header text of a snapshot of epoch holding the example registration 1 or nothing. */
static void previous_header(uint64_t epoch, int with_record, struct buffer *text)
{
	struct buffer note, body;
	struct snapshot_record record;
	struct snapshot_header h;
	struct epoch_times times;
	buffer_init(&note);
	buffer_init(&body);
	make_registration(1, 1, 0, TEST_KEY_PROVIDER, &note, record.service_id);
	record.note = note.data;
	record.note_len = note.len;
	size_t count = with_record ? 1 : 0;
	ck_assert_int_eq(snapshot_body_encode(NAMESPACE, epoch, &record, count, &body), 0);
	memset(&h, 0, sizeof(h));
	strcpy(h.namespace_name, NAMESPACE);
	strcpy(h.origin, ORIGIN);
	h.epoch = epoch;
	epoch_times(epoch, &times);
	h.valid_after = times.valid_after;
	h.fresh_until = times.fresh_until;
	h.valid_until = times.valid_until;
	h.record_count = count;
	ck_assert_int_eq(snapshot_records_root(&record, count, h.records_root), 0);
	h.body_size = body.len;
	ck_assert_int_eq(crypto_sha256(body.data, body.len, h.body_sha256), 0);
	h.consensus_method = 1;
	ck_assert_int_eq(snapshot_header_encode(&h, text), 0);
	buffer_free(&note);
	buffer_free(&body);
}

/* 0: epoch E-1, empty; 1: epoch E-1, another header (one record); 2: epoch E-2; 3: none. Their
 * texts are vectors too, so that each digest traces to a header. */
static void previous_snapshots(struct previous_set *set)
{
	static const char *const files[] = {"previous-0.txt", "previous-1.txt", "previous-2.txt"};
	const uint64_t epochs[] = {EPOCH - 1, EPOCH - 1, EPOCH - 2};
	const int with_record[] = {0, 1, 0};
	for (size_t i = 0; i < 3; i++) {
		struct buffer text;
		char path[128];
		buffer_init(&text);
		previous_header(epochs[i], with_record[i], &text);
		snprintf(path, sizeof(path), VECTOR_DIR "%s", files[i]);
		test_vector_expect(path, text.data, text.len);
		set->epoch[i] = epochs[i];
		ck_assert_int_eq(snapshot_header_digest(text.data, text.len, set->digest[i]), 0);
		buffer_free(&text);
	}
	set->epoch[PREVIOUS_NONE] = 0;
	memset(set->digest[PREVIOUS_NONE], 0, 32);
}

/* ---- a case in memory ---- */

struct fixture {
	struct consensus_params params;
	char namespace_name[NAMESPACE_NAME_MAX + 1];
	char origin[SNAPSHOT_ORIGIN_MAX + 1];
	size_t vote_count;
	struct vote votes[MAX_VOTES];
	struct vote_body bodies[MAX_VOTES];
	struct vote_body *loaded[MAX_VOTES]; /* bodies parsed from files, when loaded */
	struct vote_body_record records[MAX_VOTES][MAX_HELD];
	struct buffer body_text[MAX_VOTES];
	struct consensus_vote inputs[MAX_VOTES];
	struct note_pool pool; /* the valid notes */
};

static void fixture_free(struct fixture *f)
{
	for (size_t i = 0; i < MAX_VOTES; i++) {
		buffer_free(&f->body_text[i]);
		vote_body_free(f->loaded[i]);
	}
	pool_free(&f->pool);
	memset(f, 0, sizeof(*f));
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
}

static int record_order(const void *a, const void *b)
{
	return memcmp(((const struct snapshot_record *)a)->service_id,
	              ((const struct snapshot_record *)b)->service_id, SERVICE_ID_SIZE);
}

/* One vote of the case: its body, its text (records-root over the notes it holds), its inputs. */
static void fixture_vote(struct fixture *f, size_t i, const struct vote_spec *spec,
                         const struct previous_set *previous)
{
	struct buffer notes[MAX_HELD];
	struct snapshot_record held[MAX_HELD];
	size_t count = 0;
	for (; count < MAX_HELD && spec->held[count].service; count++) {
		const struct held *h = &spec->held[count];
		buffer_init(&notes[count]);
		make_registration(h->service, h->sequence, h->variant,
		                  h->forged ? TEST_KEY_OTHER : TEST_KEY_PROVIDER, &notes[count],
		                  held[count].service_id);
		held[count].note = notes[count].data;
		held[count].note_len = notes[count].len;
		if (!h->forged)
			pool_add(&f->pool, notes[count].data, notes[count].len);
	}
	qsort(held, count, sizeof(held[0]), record_order);
	struct vote_body *body = &f->bodies[i];
	memset(body, 0, sizeof(*body));
	strcpy(body->namespace_name, NAMESPACE);
	body->epoch = EPOCH;
	snprintf(body->authority, sizeof(body->authority), "authority-%zu.example", i + 1);
	for (size_t j = 0; j < count; j++) {
		struct vote_body_record *record = &f->records[i][j];
		memcpy(record->service_id, held[j].service_id, SERVICE_ID_SIZE);
		ck_assert_int_eq(crypto_sha256(held[j].note, held[j].note_len, record->registration_sha256),
		                 0);
		struct registration r;
		struct note *parsed = NULL;
		ck_assert_int_eq(registration_parse_note(held[j].note, held[j].note_len, &r, &parsed), 0);
		record->sequence = r.sequence;
		registration_clear(&r);
		note_free(parsed);
	}
	body->record_count = count;
	body->records = f->records[i];
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
	for (size_t j = 0; j < count; j++)
		buffer_free(&notes[j]);

	struct consensus_vote *input = &f->inputs[i];
	memset(input, 0, sizeof(*input));
	input->vote = vote;
	input->body = body;
	input->previous_epoch = previous->epoch[spec->previous];
	memcpy(input->previous, previous->digest[spec->previous], 32);
	input->method_count = spec->method_count;
	memcpy(input->methods, spec->methods, spec->method_count * sizeof(uint64_t));
	/* The vote text carries the same. */
	vote->previous_epoch = input->previous_epoch;
	memcpy(vote->previous, input->previous, 32);
	vote->method_count = input->method_count;
	memcpy(vote->methods, input->methods, input->method_count * sizeof(uint64_t));
}

static void fixture_build(const struct case_spec *spec, struct fixture *f)
{
	struct previous_set previous;
	memset(f, 0, sizeof(*f));
	previous_snapshots(&previous);
	fixture_params(f, spec->authorities, spec->threshold);
	f->vote_count = spec->vote_count;
	for (size_t i = 0; i < spec->vote_count; i++)
		fixture_vote(f, i, &spec->votes[i], &previous);
}

static const struct case_spec *case_named(const char *name)
{
	for (size_t i = 0; i < CASE_COUNT; i++)
		if (strcmp(cases[i].name, name) == 0)
			return &cases[i];
	ck_abort_msg("no case %s", name);
	return NULL;
}

/* ---- the computing authority's notes ---- */

struct authority_view {
	const struct note_pool *pool;
	const char *namespace_name;
	uint64_t valid_after;
	struct note_verifier enrolled;
	size_t calls;
};

static void view_init(struct authority_view *view, const struct note_pool *pool,
                      const struct consensus_params *p)
{
	struct test_key provider;
	memset(view, 0, sizeof(*view));
	view->pool = pool;
	view->namespace_name = p->namespace_name;
	view->valid_after = p->times.valid_after;
	test_key_load(TEST_KEY_PROVIDER, &provider);
	view->enrolled = provider.verifier;
	test_key_free(&provider);
}

/* An authority's check of a note it supplies: the same as at intake. */
static int view_note(void *context, const uint8_t service_id[SERVICE_ID_SIZE], uint64_t sequence,
                     const uint8_t digest[32], const uint8_t **note, size_t *note_len)
{
	struct authority_view *view = context;
	view->calls++;
	const struct note_entry *entry = pool_find(view->pool, digest);
	if (!entry)
		return DIRAUTH_ERR_NOT_FOUND;
	struct registration r;
	int rc = registration_parse_signed(entry->note.data, entry->note.len, &r, NULL);
	if (rc)
		return rc;
	if (!note_verifier_equal(&r.provider, &view->enrolled))
		rc = DIRAUTH_ERR_REFUSED;
	else if (strcmp(r.namespace_name, view->namespace_name) != 0 ||
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

/* ---- the vector files ---- */

static void append_hex(struct buffer *out, const uint8_t *data, size_t len)
{
	char hex[65];
	ck_assert_uint_le(len, 32);
	hex_encode(data, len, hex);
	ck_assert_int_eq(buffer_append_string(out, hex), 0);
}

static void inputs_text(const struct fixture *f, struct buffer *out)
{
	const struct consensus_params *p = &f->params;
	ck_assert_int_eq(
	    buffer_appendf(out,
	                   "consensus-vector v1\nnamespace %s\norigin %s\nepoch %llu\nvalid-after %llu\n"
	                   "fresh-until %llu\nvalid-until %llu\nauthorities %zu\nthreshold %zu\n"
	                   "max-records %zu\nmax-body-bytes %zu\nvotes %zu\n",
	                   p->namespace_name, p->origin, (unsigned long long)p->epoch,
	                   (unsigned long long)p->times.valid_after, (unsigned long long)p->times.fresh_until,
	                   (unsigned long long)p->times.valid_until, p->authorities, p->threshold,
	                   p->max_records, p->max_body_bytes, f->vote_count),
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

static void case_path(char *out, size_t cap, const char *name, const char *file)
{
	int n = snprintf(out, cap, VECTOR_DIR "%s/%s", name, file);
	ck_assert(n > 0 && (size_t)n < cap);
}

/* Writes (or compares) every input file of the case. */
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
	for (size_t i = 0; i < f->pool.count; i++) {
		char hex[65];
		hex_encode(f->pool.entries[i].digest, 32, hex);
		snprintf(path, sizeof(path), VECTOR_DIR "registrations/%s.note", hex);
		test_vector_expect(path, f->pool.entries[i].note.data, f->pool.entries[i].note.len);
	}
	buffer_free(&text);
}

static void expect_u64(struct line_reader *reader, const char *keyword, uint64_t *out)
{
	ck_assert_msg(lines_expect_u64(reader, keyword, out) == 0, "inputs.txt: line %s", keyword);
}

static void expect_size(struct line_reader *reader, const char *keyword, size_t *out)
{
	uint64_t value;
	expect_u64(reader, keyword, &value);
	*out = (size_t)value;
}

static void expect_text(struct line_reader *reader, const char *keyword, char *out, size_t cap)
{
	struct text_span value;
	ck_assert_msg(lines_expect(reader, keyword, &value) == 0, "inputs.txt: line %s", keyword);
	ck_assert_int_eq(text_copy(value, out, cap), 0);
}

static struct text_span next_field(struct text_span *rest)
{
	struct text_span field;
	ck_assert_int_eq(text_next_field(rest, &field), 0);
	return field;
}

static void expect_word(struct text_span *rest, const char *word)
{
	ck_assert_msg(text_equals(next_field(rest), word), "inputs.txt: expected %s", word);
}

static uint64_t field_u64(struct text_span *rest)
{
	uint64_t value;
	ck_assert_int_eq(text_parse_u64(next_field(rest), &value), 0);
	return value;
}

/* Loads a case from its files alone: inputs.txt, then each vote's text and its body, checked
 * against each other with consensus_vote_body_load. */
static void fixture_load(const char *name, struct fixture *f)
{
	char path[256], file[64];
	size_t len;
	struct line_reader reader;
	memset(f, 0, sizeof(*f));
	case_path(path, sizeof(path), name, "inputs.txt");
	uint8_t *inputs = test_read_file(test_source_path(path), &len);
	lines_init(&reader, inputs, len, 512);
	ck_assert_int_eq(lines_expect_exact(&reader, "consensus-vector v1"), 0);
	struct consensus_params *p = &f->params;
	expect_text(&reader, "namespace", f->namespace_name, sizeof(f->namespace_name));
	expect_text(&reader, "origin", f->origin, sizeof(f->origin));
	p->namespace_name = f->namespace_name;
	p->origin = f->origin;
	expect_u64(&reader, "epoch", &p->epoch);
	expect_u64(&reader, "valid-after", &p->times.valid_after);
	expect_u64(&reader, "fresh-until", &p->times.fresh_until);
	expect_u64(&reader, "valid-until", &p->times.valid_until);
	expect_size(&reader, "authorities", &p->authorities);
	expect_size(&reader, "threshold", &p->threshold);
	expect_size(&reader, "max-records", &p->max_records);
	expect_size(&reader, "max-body-bytes", &p->max_body_bytes);
	expect_size(&reader, "votes", &f->vote_count);
	ck_assert_uint_le(f->vote_count, MAX_VOTES);
	for (size_t i = 0; i < f->vote_count; i++) {
		struct consensus_vote *input = &f->inputs[i];
		struct text_span rest;
		ck_assert_int_eq(lines_expect(&reader, "vote", &rest), 0);
		ck_assert_uint_eq(field_u64(&rest), i + 1);
		expect_word(&rest, "previous-epoch");
		input->previous_epoch = field_u64(&rest);
		expect_word(&rest, "previous");
		ck_assert_int_eq(text_parse_hex(next_field(&rest), input->previous, 32), 0);
		expect_word(&rest, "consensus-methods");
		while (rest.len > 0) {
			ck_assert_uint_lt(input->method_count, CONSENSUS_VOTE_METHODS_MAX);
			input->methods[input->method_count++] = field_u64(&rest);
		}

		snprintf(file, sizeof(file), "vote-%zu.txt", i + 1);
		case_path(path, sizeof(path), name, file);
		size_t vote_len, body_len;
		uint8_t *vote_text = test_read_file(test_source_path(path), &vote_len);
		ck_assert_int_eq(vote_parse(vote_text, vote_len, &f->votes[i]), 0);
		snprintf(file, sizeof(file), "vote-%zu-body.txt", i + 1);
		case_path(path, sizeof(path), name, file);
		uint8_t *body = test_read_file(test_source_path(path), &body_len);
		ck_assert_int_eq(
		    consensus_vote_body_load(&f->votes[i], body, body_len, p->max_records, &f->loaded[i]), 0);
		input->vote = &f->votes[i];
		input->body = f->loaded[i];
		free(vote_text);
		free(body);
	}
	ck_assert(lines_at_end(&reader));
	free(inputs);

	/* The computing authority holds every valid note of the vectors. */
	DIR *dir = opendir(test_source_path(VECTOR_DIR "registrations"));
	ck_assert_ptr_nonnull(dir);
	struct dirent *entry;
	while ((entry = readdir(dir)) != NULL) {
		if (entry->d_name[0] == '.')
			continue;
		int n = snprintf(path, sizeof(path), VECTOR_DIR "registrations/%s", entry->d_name);
		ck_assert(n > 0 && (size_t)n < sizeof(path));
		uint8_t *note = test_read_file(test_source_path(path), &len);
		pool_add(&f->pool, note, len);
		char hex[65], expected[80];
		hex_encode(f->pool.entries[f->pool.count - 1].digest, 32, hex);
		snprintf(expected, sizeof(expected), "%s.note", hex);
		ck_assert_str_eq(entry->d_name, expected); /* each note is named by its SHA-256 */
		free(note);
	}
	closedir(dir);
}

/* expected.txt: the outcome and what it names. */
static void outcome_text(int rc, const struct consensus_result *result,
                         const struct consensus_failure *failure, struct buffer *out)
{
	ck_assert_int_eq(buffer_appendf(out, "outcome %s\n", consensus_outcome_name(failure->outcome)), 0);
	if (rc == 0) {
		ck_assert_int_eq(buffer_appendf(out, "consensus-method %llu\nprevious-epoch %llu\nprevious ",
		                                (unsigned long long)result->method,
		                                (unsigned long long)result->previous_epoch),
		                 0);
		append_hex(out, result->previous, 32);
		ck_assert_int_eq(buffer_appendf(out, "\ncounting-votes %zu\nrecords %zu\n",
		                                result->counting_votes, result->record_count),
		                 0);
		size_t published = 0;
		struct vote_body_record *records =
		    test_published_versions(result->body.data, result->body.len, &published);
		ck_assert_uint_eq(published, result->record_count);
		for (size_t i = 0; i < result->record_count; i++) {
			const struct vote_body_record *record = &records[i];
			ck_assert_int_eq(buffer_append_string(out, "record "), 0);
			append_hex(out, record->service_id, SERVICE_ID_SIZE);
			ck_assert_int_eq(buffer_appendf(out, " %llu ", (unsigned long long)record->sequence),
			                 0);
			append_hex(out, record->registration_sha256, 32);
			ck_assert_int_eq(buffer_append_string(out, "\n"), 0);
		}
		free(records);
		return;
	}
	switch (failure->outcome) {
	case CONSENSUS_TOO_FEW_VOTES:
	case CONSENSUS_NO_METHOD:
	case CONSENSUS_NO_PREVIOUS:
		ck_assert_int_eq(
		    buffer_appendf(out, "held %zu\nrequired %zu\n", failure->held, failure->required), 0);
		break;
	case CONSENSUS_NOTE_MISSING:
	case CONSENSUS_NOTE_REFUSED:
		ck_assert_int_eq(buffer_append_string(out, "service "), 0);
		append_hex(out, failure->service_id, SERVICE_ID_SIZE);
		ck_assert_int_eq(buffer_appendf(out, "\nsequence %llu\nregistration-sha256 ",
		                                (unsigned long long)failure->sequence),
		                 0);
		append_hex(out, failure->digest, 32);
		ck_assert_int_eq(buffer_appendf(out, "\nheld-by %s\n", failure->authority), 0);
		break;
	default:
		ck_abort_msg("no vector shows outcome %s", consensus_outcome_name(failure->outcome));
	}
}

/* The versions a case says the snapshot carries, against the result. */
static void check_chosen(const struct case_spec *spec, const struct consensus_result *result)
{
	size_t count = 0;
	struct vote_body_record expected[MAX_HELD];
	for (; count < MAX_HELD && spec->chosen[count].service; count++) {
		const struct held *h = &spec->chosen[count];
		struct buffer note;
		unsigned variant = h->variant == 99 ? 0 : h->variant;
		buffer_init(&note);
		make_registration(h->service, h->sequence, variant, TEST_KEY_PROVIDER, &note,
		                  expected[count].service_id);
		expected[count].sequence = h->sequence;
		ck_assert_int_eq(crypto_sha256(note.data, note.len, expected[count].registration_sha256), 0);
		if (h->variant == 99) { /* the lower of the digests of variants 0 and 1 */
			uint8_t other[32];
			buffer_reset(&note);
			make_registration(h->service, h->sequence, 1, TEST_KEY_PROVIDER, &note, NULL);
			ck_assert_int_eq(crypto_sha256(note.data, note.len, other), 0);
			if (memcmp(other, expected[count].registration_sha256, 32) < 0)
				memcpy(expected[count].registration_sha256, other, 32);
		}
		buffer_free(&note);
	}
	ck_assert_uint_eq(result->record_count, count);
	size_t published = 0;
	struct vote_body_record *records =
	    test_published_versions(result->body.data, result->body.len, &published);
	ck_assert_uint_eq(published, count);
	for (size_t i = 0; i < count; i++) {
		int found = 0;
		for (size_t j = 0; j < published; j++)
			found |= memcmp(&records[j], &expected[i], sizeof(expected[i])) == 0;
		ck_assert_msg(found, "%s: chosen version %zu is not in the snapshot", spec->name, i);
	}
	free(records);
}

/* A writer of a streamed computation: the pieces collected, or a failure at the piece fail_at
 * (from 1; 0 never). */
struct collector {
	struct buffer bytes;
	size_t pieces;
	size_t fail_at;
};

static int collect(void *context, const uint8_t *bytes, size_t len)
{
	struct collector *c = context;
	if (++c->pieces == c->fail_at)
		return DIRAUTH_ERR_IO;
	return buffer_append(&c->bytes, bytes, len);
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
	int rc = consensus_compute(&loaded.params, loaded.inputs, loaded.vote_count, view_note, &view,
	                           &result, &failure);
	ck_assert_msg(strcmp(consensus_outcome_name(failure.outcome), spec->outcome) == 0,
	              "%s: outcome %s, not %s", spec->name, consensus_outcome_name(failure.outcome),
	              spec->outcome);
	buffer_init(&text);
	outcome_text(rc, &result, &failure, &text);
	case_path(path, sizeof(path), spec->name, "expected.txt");
	test_vector_expect(path, text.data, text.len);
	if (rc == 0) {
		check_chosen(spec, &result);
		case_path(path, sizeof(path), spec->name, "header.txt");
		test_vector_expect(path, result.header_text.data, result.header_text.len);
		case_path(path, sizeof(path), spec->name, "body.txt");
		test_vector_expect(path, result.body.data, result.body.len);
		/* What a mirror checks holds: the header parses back, the body verifies against it,
		 * every record with its provider's signature. */
		struct snapshot_header parsed;
		ck_assert_int_eq(
		    snapshot_header_parse(result.header_text.data, result.header_text.len, &parsed), 0);
		ck_assert_int_eq(memcmp(&parsed, &result.header, sizeof(parsed)), 0);
		ck_assert_int_eq(
		    snapshot_body_verify(&parsed, result.body.data, result.body.len, MAX_RECORDS), 0);
		ck_assert_uint_eq(view.calls, result.record_count);
	} else {
		ck_assert_uint_eq(result.record_count, 0);
		ck_assert_ptr_null(result.body.data);
	}

	/* The order of the votes changes nothing. */
	struct consensus_vote reversed[MAX_VOTES];
	for (size_t i = 0; i < loaded.vote_count; i++)
		reversed[i] = loaded.inputs[loaded.vote_count - 1 - i];
	int rc_again = consensus_compute(&loaded.params, reversed, loaded.vote_count, view_note, &view,
	                                 &again, &failure_again);
	ck_assert_int_eq(rc_again, rc);
	ck_assert_int_eq(failure_again.outcome, failure.outcome);
	ck_assert_uint_eq(again.header_text.len, result.header_text.len);
	if (rc == 0) {
		ck_assert_mem_eq(again.header_text.data, result.header_text.data, result.header_text.len);
		ck_assert_uint_eq(again.body.len, result.body.len);
		ck_assert_mem_eq(again.body.data, result.body.data, result.body.len);
	} else if (failure.outcome == CONSENSUS_NOTE_MISSING) {
		ck_assert_mem_eq(failure_again.digest, failure.digest, 32);
	}

	/* The vectors say what the code built in memory too. */
	struct consensus_result direct;
	view_init(&view, &built.pool, &built.params);
	ck_assert_int_eq(
	    consensus_compute(&built.params, built.inputs, built.vote_count, view_note, &view, &direct, NULL),
	    rc);
	ck_assert_uint_eq(direct.body.len, result.body.len);
	if (rc == 0)
		ck_assert_mem_eq(direct.body.data, result.body.data, result.body.len);

	/* Streamed to a writer, the same bytes and header, and nothing kept in the result. */
	struct consensus_result streamed;
	struct collector collected = {0};
	buffer_init(&collected.bytes);
	view_init(&view, &loaded.pool, &loaded.params);
	ck_assert_int_eq(consensus_compute_streamed(&loaded.params, loaded.inputs, loaded.vote_count,
	                                            view_note, &view, collect, &collected, &streamed, NULL),
	                 rc);
	ck_assert_ptr_null(streamed.body.data);
	if (rc == 0) {
		ck_assert_uint_eq(streamed.header_text.len, result.header_text.len);
		ck_assert_mem_eq(streamed.header_text.data, result.header_text.data, result.header_text.len);
		ck_assert_uint_eq(collected.bytes.len, result.body.len);
		ck_assert_mem_eq(collected.bytes.data, result.body.data, result.body.len);
		ck_assert_uint_gt(collected.pieces, result.record_count); /* a piece at a time */
	}
	buffer_free(&collected.bytes);

	consensus_result_clear(&streamed);
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

/* One vote, n = 1 and k = 1, holding the example registrations: the consensus is the single
 * authority's snapshot, byte for byte the documents vector. */
START_TEST(test_one_authority_is_the_single_snapshot)
{
	struct fixture f;
	fixture_build(case_named("too-few-votes"), &f);
	f.params.authorities = 1;
	f.params.threshold = 1;
	f.inputs[0].previous_epoch = 0;
	memset(f.inputs[0].previous, 0, 32);
	f.params.times.fresh_until = f.params.times.valid_after + 120; /* the vector's times */
	struct authority_view view;
	struct consensus_result result;
	view_init(&view, &f.pool, &f.params);
	ck_assert_int_eq(consensus_compute(&f.params, f.inputs, 1, view_note, &view, &result, NULL), 0);
	size_t header_len, body_len;
	uint8_t *header =
	    test_read_file(test_source_path("tests/vectors/documents/snapshot/header.txt"), &header_len);
	uint8_t *body =
	    test_read_file(test_source_path("tests/vectors/documents/snapshot/body.txt"), &body_len);
	ck_assert_uint_eq(result.header_text.len, header_len);
	ck_assert_mem_eq(result.header_text.data, header, header_len);
	ck_assert_uint_eq(result.body.len, body_len);
	ck_assert_mem_eq(result.body.data, body, body_len);
	free(header);
	free(body);
	consensus_result_clear(&result);
	fixture_free(&f);
}
END_TEST

/* A writer that fails stops the computation with its code, and the result is empty. */
START_TEST(test_streamed_writer_failure)
{
	struct fixture f;
	fixture_build(case_named("too-few-votes"), &f);
	f.params.authorities = 1;
	f.params.threshold = 1;
	f.inputs[0].previous_epoch = 0;
	memset(f.inputs[0].previous, 0, 32);
	struct authority_view view;
	struct consensus_result result;
	struct consensus_failure failure;
	for (size_t fail_at = 1; fail_at <= 3; fail_at++) {
		struct collector collected = {.fail_at = fail_at};
		buffer_init(&collected.bytes);
		view_init(&view, &f.pool, &f.params);
		ck_assert_int_eq(consensus_compute_streamed(&f.params, f.inputs, 1, view_note, &view, collect,
		                                            &collected, &result, &failure),
		                 DIRAUTH_ERR_IO);
		ck_assert_int_eq(failure.outcome, CONSENSUS_FAILED);
		ck_assert_ptr_null(result.header_text.data);
		ck_assert_uint_eq(result.record_count, 0);
		buffer_free(&collected.bytes);
	}
	/* No writer is bad parameters. */
	ck_assert_int_eq(consensus_compute_streamed(&f.params, f.inputs, 1, view_note, &view, NULL, NULL,
	                                            &result, &failure),
	                 DIRAUTH_ERR_CONFIG);
	fixture_free(&f);
}
END_TEST

/* ---- refusals ---- */

static int compute(struct fixture *f, struct consensus_failure *failure)
{
	struct authority_view view;
	struct consensus_result result;
	view_init(&view, &f->pool, &f->params);
	int rc = consensus_compute(&f->params, f->inputs, f->vote_count, view_note, &view, &result, failure);
	if (rc) {
		ck_assert_uint_eq(result.record_count, 0);
		ck_assert_ptr_null(result.body.data);
		ck_assert_ptr_null(result.header_text.data);
	}
	consensus_result_clear(&result);
	return rc;
}

/* Builds the agreement case, applies change, and expects outcome with rc. */
static void expect_refusal(void (*change)(struct fixture *), enum consensus_outcome outcome, int rc,
                           const char *what)
{
	struct fixture f;
	struct consensus_failure failure;
	fixture_build(case_named("agreement"), &f);
	change(&f);
	int got = compute(&f, &failure);
	ck_assert_msg(got == rc && failure.outcome == outcome, "%s: got %s (%s), expected %s (%s)", what,
	              consensus_outcome_name(failure.outcome), dirauth_error_name(got),
	              consensus_outcome_name(outcome), dirauth_error_name(rc));
	fixture_free(&f);
}

#define REFUSAL(name, body)                                                                                  \
	static void name(struct fixture *f)                                                                  \
	{                                                                                                    \
		body;                                                                                        \
	}

REFUSAL(k_not_majority, f->params.threshold = 1)
REFUSAL(k_above_n, f->params.threshold = 4)
REFUSAL(n_zero, f->params.authorities = 0; f->params.threshold = 0)
REFUSAL(n_too_large, f->params.authorities = CONSENSUS_AUTHORITIES_MAX + 1; f->params.threshold = 30)
REFUSAL(more_votes_than_n, f->params.authorities = 2; f->params.threshold = 2)
REFUSAL(bad_namespace, strcpy(f->namespace_name, "Example"))
REFUSAL(no_namespace, f->params.namespace_name = NULL)
REFUSAL(bad_origin, strcpy(f->origin, "dirauth example"))
REFUSAL(times_empty, f->params.times.fresh_until = f->params.times.valid_after)
REFUSAL(times_reversed, f->params.times.valid_until = f->params.times.fresh_until - 1)
REFUSAL(no_body_bound, f->params.max_body_bytes = 0)

START_TEST(test_refuses_bad_parameters)
{
	expect_refusal(k_not_majority, CONSENSUS_BAD_PARAMETERS, DIRAUTH_ERR_CONFIG, "k not a majority");
	expect_refusal(k_above_n, CONSENSUS_BAD_PARAMETERS, DIRAUTH_ERR_CONFIG, "k above n");
	expect_refusal(n_zero, CONSENSUS_BAD_PARAMETERS, DIRAUTH_ERR_CONFIG, "n zero");
	expect_refusal(n_too_large, CONSENSUS_BAD_PARAMETERS, DIRAUTH_ERR_CONFIG, "n too large");
	expect_refusal(more_votes_than_n, CONSENSUS_BAD_PARAMETERS, DIRAUTH_ERR_CONFIG, "more votes than n");
	expect_refusal(bad_namespace, CONSENSUS_BAD_PARAMETERS, DIRAUTH_ERR_CONFIG, "namespace");
	expect_refusal(no_namespace, CONSENSUS_BAD_PARAMETERS, DIRAUTH_ERR_CONFIG, "no namespace");
	expect_refusal(bad_origin, CONSENSUS_BAD_PARAMETERS, DIRAUTH_ERR_CONFIG, "origin");
	expect_refusal(times_empty, CONSENSUS_BAD_PARAMETERS, DIRAUTH_ERR_CONFIG, "times");
	expect_refusal(times_reversed, CONSENSUS_BAD_PARAMETERS, DIRAUTH_ERR_CONFIG, "times reversed");
	expect_refusal(no_body_bound, CONSENSUS_BAD_PARAMETERS, DIRAUTH_ERR_CONFIG, "body bound");
	/* No callback, no votes array. */
	struct fixture f;
	struct consensus_result result;
	struct consensus_failure failure;
	fixture_build(case_named("agreement"), &f);
	ck_assert_int_eq(consensus_compute(&f.params, f.inputs, 3, NULL, NULL, &result, &failure),
	                 DIRAUTH_ERR_CONFIG);
	ck_assert_int_eq(failure.outcome, CONSENSUS_BAD_PARAMETERS);
	ck_assert_int_eq(consensus_compute(&f.params, NULL, 3, view_note, NULL, &result, &failure),
	                 DIRAUTH_ERR_CONFIG);
	ck_assert_int_eq(consensus_compute(NULL, f.inputs, 3, view_note, NULL, &result, &failure),
	                 DIRAUTH_ERR_CONFIG);
	fixture_free(&f);
}
END_TEST

REFUSAL(vote_namespace, strcpy(f->votes[1].namespace_name, "other-net"))
REFUSAL(vote_origin, strcpy(f->votes[1].origin, "dirauth.example/other-net"))
REFUSAL(body_namespace, strcpy(f->bodies[1].namespace_name, "other-net"))
REFUSAL(vote_epoch, f->votes[1].epoch = EPOCH + 1)
REFUSAL(body_epoch, f->bodies[1].epoch = EPOCH - 1)

START_TEST(test_refuses_votes_for_another_namespace_or_epoch)
{
	expect_refusal(vote_namespace, CONSENSUS_OTHER_NAMESPACE, DIRAUTH_ERR_MISMATCH, "vote namespace");
	expect_refusal(vote_origin, CONSENSUS_OTHER_NAMESPACE, DIRAUTH_ERR_MISMATCH, "vote origin");
	expect_refusal(body_namespace, CONSENSUS_OTHER_NAMESPACE, DIRAUTH_ERR_MISMATCH, "body namespace");
	expect_refusal(vote_epoch, CONSENSUS_OTHER_EPOCH, DIRAUTH_ERR_MISMATCH, "vote epoch");
	expect_refusal(body_epoch, CONSENSUS_OTHER_EPOCH, DIRAUTH_ERR_MISMATCH, "body epoch");
	/* The failure names the vote. */
	struct fixture f;
	struct consensus_failure failure;
	fixture_build(case_named("agreement"), &f);
	f.votes[2].epoch = EPOCH + 1;
	ck_assert_int_eq(compute(&f, &failure), DIRAUTH_ERR_MISMATCH);
	ck_assert_uint_eq(failure.vote_index, 2);
	ck_assert_str_eq(failure.authority, "authority-3.example");
	fixture_free(&f);
}
END_TEST

START_TEST(test_refuses_two_votes_of_one_authority)
{
	struct fixture f;
	struct consensus_failure failure;
	fixture_build(case_named("agreement"), &f);
	strcpy(f.votes[2].authority, f.votes[0].authority);
	strcpy(f.bodies[2].authority, f.bodies[0].authority);
	ck_assert_int_eq(compute(&f, &failure), DIRAUTH_ERR_EXISTS);
	ck_assert_int_eq(failure.outcome, CONSENSUS_DUPLICATE_AUTHORITY);
	ck_assert_uint_eq(failure.vote_index, 2);
	ck_assert_str_eq(failure.authority, "authority-1.example");
	/* Even the same vote given twice. */
	fixture_free(&f);
	fixture_build(case_named("agreement"), &f);
	f.inputs[1] = f.inputs[0];
	ck_assert_int_eq(compute(&f, &failure), DIRAUTH_ERR_EXISTS);
	fixture_free(&f);
}
END_TEST

REFUSAL(no_vote_text, f->inputs[1].vote = NULL)
REFUSAL(no_vote_body, f->inputs[1].body = NULL)
REFUSAL(bad_authority, strcpy(f->votes[1].authority, "two words");
        strcpy(f->bodies[1].authority, "two words"))
REFUSAL(body_of_another, strcpy(f->bodies[1].authority, "authority-9.example"))
REFUSAL(count_differs, f->votes[1].record_count = 2)
REFUSAL(over_max_records, f->params.max_records = 2)
REFUSAL(records_unsorted, struct vote_body_record swap = f->records[1][0];
        f->records[1][0] = f->records[1][1]; f->records[1][1] = swap)
REFUSAL(records_repeated, f->records[1][1] = f->records[1][0])
REFUSAL(sequence_zero, f->records[1][2].sequence = 0)
REFUSAL(records_missing, f->bodies[1].records = NULL)
REFUSAL(no_methods, f->inputs[1].method_count = 0)
REFUSAL(too_many_methods, f->inputs[1].method_count = CONSENSUS_VOTE_METHODS_MAX + 1)
REFUSAL(methods_unsorted, f->inputs[1].methods[0] = 2; f->inputs[1].methods[1] = 1)
REFUSAL(methods_repeated, f->inputs[1].methods[0] = 1; f->inputs[1].methods[1] = 1)
REFUSAL(method_zero, f->inputs[1].methods[0] = 0)
REFUSAL(none_with_epoch, memset(f->inputs[1].previous, 0, 32); f->inputs[1].previous_epoch = 5)
REFUSAL(previous_not_before, f->inputs[1].previous_epoch = EPOCH)

START_TEST(test_refuses_ill_formed_votes)
{
	expect_refusal(no_vote_text, CONSENSUS_BAD_VOTE, DIRAUTH_ERR_SYNTAX, "no vote");
	expect_refusal(no_vote_body, CONSENSUS_BAD_VOTE, DIRAUTH_ERR_SYNTAX, "no body");
	expect_refusal(bad_authority, CONSENSUS_BAD_VOTE, DIRAUTH_ERR_SYNTAX, "authority name");
	expect_refusal(body_of_another, CONSENSUS_BAD_VOTE, DIRAUTH_ERR_MISMATCH,
	               "body of another authority");
	expect_refusal(count_differs, CONSENSUS_BAD_VOTE, DIRAUTH_ERR_MISMATCH, "record count");
	expect_refusal(over_max_records, CONSENSUS_BAD_VOTE, DIRAUTH_ERR_BOUNDS, "max records");
	expect_refusal(records_unsorted, CONSENSUS_BAD_VOTE, DIRAUTH_ERR_SYNTAX, "unsorted");
	expect_refusal(records_repeated, CONSENSUS_BAD_VOTE, DIRAUTH_ERR_SYNTAX, "repeated");
	expect_refusal(sequence_zero, CONSENSUS_BAD_VOTE, DIRAUTH_ERR_SYNTAX, "sequence 0");
	expect_refusal(records_missing, CONSENSUS_BAD_VOTE, DIRAUTH_ERR_SYNTAX, "records missing");
	expect_refusal(no_methods, CONSENSUS_BAD_VOTE, DIRAUTH_ERR_SYNTAX, "no methods");
	expect_refusal(too_many_methods, CONSENSUS_BAD_VOTE, DIRAUTH_ERR_SYNTAX, "too many methods");
	expect_refusal(methods_unsorted, CONSENSUS_BAD_VOTE, DIRAUTH_ERR_SYNTAX, "methods unsorted");
	expect_refusal(methods_repeated, CONSENSUS_BAD_VOTE, DIRAUTH_ERR_SYNTAX, "methods repeated");
	expect_refusal(method_zero, CONSENSUS_BAD_VOTE, DIRAUTH_ERR_SYNTAX, "method 0");
	expect_refusal(none_with_epoch, CONSENSUS_BAD_VOTE, DIRAUTH_ERR_SYNTAX, "no previous with an epoch");
	expect_refusal(previous_not_before, CONSENSUS_BAD_VOTE, DIRAUTH_ERR_SYNTAX, "previous not before");
}
END_TEST

START_TEST(test_too_few_votes)
{
	struct fixture f;
	struct consensus_failure failure;
	struct authority_view view;
	struct consensus_result result;
	fixture_build(case_named("agreement"), &f);
	for (size_t votes = 0; votes < 2; votes++) {
		f.vote_count = votes;
		view_init(&view, &f.pool, &f.params);
		ck_assert_int_eq(
		    consensus_compute(&f.params, f.inputs, votes, view_note, &view, &result, &failure),
		    DIRAUTH_ERR_THRESHOLD);
		ck_assert_int_eq(failure.outcome, CONSENSUS_TOO_FEW_VOTES);
		ck_assert_uint_eq(failure.held, votes);
		ck_assert_uint_eq(failure.required, 2);
		ck_assert_uint_eq(view.calls, 0); /* no note is asked for */
	}
	/* Two of three are enough. */
	f.vote_count = 2;
	ck_assert_int_eq(compute(&f, &failure), 0);
	fixture_free(&f);
}
END_TEST

START_TEST(test_method_choice)
{
	struct fixture f;
	struct consensus_failure failure;
	fixture_build(case_named("agreement"), &f);
	/* Two of three votes support only method 3, unknown here: method 1 has one supporter. */
	for (size_t i = 0; i < 2; i++) {
		f.inputs[i].method_count = 1;
		f.inputs[i].methods[0] = 3;
	}
	ck_assert_int_eq(compute(&f, &failure), DIRAUTH_ERR_THRESHOLD);
	ck_assert_int_eq(failure.outcome, CONSENSUS_NO_METHOD);
	ck_assert_uint_eq(failure.held, 1);
	ck_assert_uint_eq(failure.required, 2);
	/* Unknown methods beside a known one are ignored: method 1 is chosen. */
	f.inputs[0].method_count = 3;
	f.inputs[0].methods[0] = 1;
	f.inputs[0].methods[1] = 7;
	f.inputs[0].methods[2] = UINT64_MAX;
	struct authority_view view;
	struct consensus_result result;
	view_init(&view, &f.pool, &f.params);
	ck_assert_int_eq(consensus_compute(&f.params, f.inputs, 3, view_note, &view, &result, &failure), 0);
	ck_assert_uint_eq(result.method, 1);
	ck_assert_uint_eq(result.header.consensus_method, 1);
	consensus_result_clear(&result);
	fixture_free(&f);

	size_t count = 0;
	const uint64_t *known = consensus_methods_known(&count);
	ck_assert_uint_eq(count, 2);
	ck_assert_uint_eq(known[0], CONSENSUS_METHOD_REGISTRATIONS);
	ck_assert_uint_eq(known[1], CONSENSUS_METHOD_LIFECYCLE);
	ck_assert(consensus_method_is_known(1));
	ck_assert(consensus_method_is_known(2));
	ck_assert(!consensus_method_is_known(0));
	ck_assert(!consensus_method_is_known(3));
}
END_TEST

START_TEST(test_previous_choice)
{
	struct fixture f;
	struct consensus_failure failure;
	fixture_build(case_named("agreement"), &f);
	/* Three different previous snapshots, none held by two votes. */
	f.inputs[1].previous[0] ^= 1;
	f.inputs[2].previous_epoch -= 1;
	ck_assert_int_eq(compute(&f, &failure), DIRAUTH_ERR_THRESHOLD);
	ck_assert_int_eq(failure.outcome, CONSENSUS_NO_PREVIOUS);
	ck_assert_uint_eq(failure.held, 1);
	/* The same digest with another epoch is another previous. */
	fixture_free(&f);
	fixture_build(case_named("agreement"), &f);
	f.inputs[1].previous_epoch -= 1;
	f.inputs[2].previous_epoch -= 2;
	ck_assert_int_eq(compute(&f, &failure), DIRAUTH_ERR_THRESHOLD);
	ck_assert_int_eq(failure.outcome, CONSENSUS_NO_PREVIOUS);
	/* The first snapshot of a namespace: every vote names none. */
	fixture_free(&f);
	fixture_build(case_named("agreement"), &f);
	for (size_t i = 0; i < 3; i++) {
		f.inputs[i].previous_epoch = 0;
		memset(f.inputs[i].previous, 0, 32);
	}
	struct authority_view view;
	struct consensus_result result;
	view_init(&view, &f.pool, &f.params);
	ck_assert_int_eq(consensus_compute(&f.params, f.inputs, 3, view_note, &view, &result, &failure), 0);
	uint8_t zeros[32] = {0};
	ck_assert_mem_eq(result.header.previous, zeros, 32);
	ck_assert_uint_eq(result.counting_votes, 3);
	consensus_result_clear(&result);
	fixture_free(&f);
}
END_TEST

/* A callback wrapper that returns another note, or an empty one. */
struct swapping_view {
	struct authority_view inner;
	int mode; /* 1: the note of another service; 2: an empty note; 3: a positive return */
};

static int swapping_note(void *context, const uint8_t service_id[SERVICE_ID_SIZE], uint64_t sequence,
                         const uint8_t digest[32], const uint8_t **note, size_t *note_len)
{
	struct swapping_view *view = context;
	int rc = view_note(&view->inner, service_id, sequence, digest, note, note_len);
	if (rc)
		return rc;
	if (view->mode == 1) {
		const struct note_entry *other = &view->inner.pool->entries[0];
		if (memcmp(other->digest, digest, 32) == 0)
			other = &view->inner.pool->entries[1];
		*note = other->note.data;
		*note_len = other->note.len;
	} else if (view->mode == 2) {
		*note_len = 0;
	} else if (view->mode == 3) {
		return 1;
	}
	return 0;
}

START_TEST(test_note_missing_or_refused)
{
	struct fixture f;
	struct consensus_failure failure;
	struct consensus_result result;
	fixture_build(case_named("agreement"), &f);
	const struct vote_body_record *first = &f.records[0][0]; /* the lowest service id */

	/* The authority lacks every note: the first chosen service is named. */
	struct note_pool empty = {0};
	struct authority_view view;
	view_init(&view, &empty, &f.params);
	ck_assert_int_eq(consensus_compute(&f.params, f.inputs, 3, view_note, &view, &result, &failure),
	                 DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(failure.outcome, CONSENSUS_NOTE_MISSING);
	ck_assert_mem_eq(failure.service_id, first->service_id, SERVICE_ID_SIZE);
	ck_assert_uint_eq(failure.sequence, 1);
	ck_assert_mem_eq(failure.digest, first->registration_sha256, 32);
	ck_assert_str_eq(failure.authority, "authority-1.example");
	ck_assert_ptr_null(result.body.data);

	/* The note fails the authority's check: expired at valid-after. */
	struct registration r;
	ck_assert_int_eq(
	    registration_parse_signed(f.pool.entries[0].note.data, f.pool.entries[0].note.len, &r, NULL), 0);
	f.params.times.valid_after = r.expires;
	f.params.times.fresh_until = r.expires + 60;
	f.params.times.valid_until = r.expires + 3600;
	registration_clear(&r);
	view_init(&view, &f.pool, &f.params);
	ck_assert_int_eq(consensus_compute(&f.params, f.inputs, 3, view_note, &view, &result, &failure),
	                 DIRAUTH_ERR_REFUSED);
	ck_assert_int_eq(failure.outcome, CONSENSUS_NOTE_REFUSED);
	ck_assert_int_eq(failure.cause, DIRAUTH_ERR_STALE);
	epoch_times(EPOCH, &f.params.times);

	/* The caller hands over bytes that are not the chosen digest's, or none. */
	struct swapping_view swapping;
	view_init(&swapping.inner, &f.pool, &f.params);
	swapping.mode = 1;
	ck_assert_int_eq(
	    consensus_compute(&f.params, f.inputs, 3, swapping_note, &swapping, &result, &failure),
	    DIRAUTH_ERR_REFUSED);
	ck_assert_int_eq(failure.cause, DIRAUTH_ERR_MISMATCH);
	swapping.mode = 2;
	ck_assert_int_eq(
	    consensus_compute(&f.params, f.inputs, 3, swapping_note, &swapping, &result, &failure),
	    DIRAUTH_ERR_REFUSED);
	ck_assert_int_eq(failure.cause, DIRAUTH_ERR_SYNTAX);
	swapping.mode = 3;
	ck_assert_int_eq(
	    consensus_compute(&f.params, f.inputs, 3, swapping_note, &swapping, &result, &failure),
	    DIRAUTH_ERR_REFUSED);
	ck_assert_int_eq(failure.cause, DIRAUTH_ERR_INTERNAL);
	fixture_free(&f);
}
END_TEST

START_TEST(test_result_bounds)
{
	struct fixture f;
	struct consensus_failure failure;
	struct authority_view view;
	struct consensus_result result;
	/* Each vote holds two records, but three are chosen: more than max_records 2. */
	fixture_build(case_named("agreement"), &f);
	for (size_t i = 0; i < 3; i++) {
		memmove(&f.records[i][i], &f.records[i][i + 1], (2 - i) * sizeof(f.records[i][0]));
		f.bodies[i].record_count = 2;
		f.votes[i].record_count = 2;
	}
	f.params.max_records = 2;
	ck_assert_int_eq(compute(&f, &failure), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(failure.outcome, CONSENSUS_TOO_MANY_RECORDS);
	ck_assert_uint_eq(failure.required, 2);
	f.params.max_records = 3;
	ck_assert_int_eq(compute(&f, &failure), 0);
	fixture_free(&f);

	/* The body bound: exactly the body's size passes, one byte less does not. */
	fixture_build(case_named("agreement"), &f);
	view_init(&view, &f.pool, &f.params);
	ck_assert_int_eq(consensus_compute(&f.params, f.inputs, 3, view_note, &view, &result, &failure), 0);
	size_t size = result.body.len;
	consensus_result_clear(&result);
	f.params.max_body_bytes = size;
	ck_assert_int_eq(compute(&f, &failure), 0);
	f.params.max_body_bytes = size - 1;
	ck_assert_int_eq(compute(&f, &failure), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(failure.outcome, CONSENSUS_BODY_TOO_LARGE);
	fixture_free(&f);

	/* No records chosen: an empty snapshot, still signed and chained. */
	fixture_build(case_named("agreement"), &f);
	for (size_t i = 0; i < 3; i++)
		f.bodies[i].record_count = f.votes[i].record_count = 0;
	view_init(&view, &f.pool, &f.params);
	ck_assert_int_eq(consensus_compute(&f.params, f.inputs, 3, view_note, &view, &result, &failure), 0);
	ck_assert_uint_eq(result.record_count, 0);
	ck_assert_uint_eq(result.header.record_count, 0);
	ck_assert_int_eq(snapshot_body_verify(&result.header, result.body.data, result.body.len, 10), 0);
	consensus_result_clear(&result);
	consensus_result_clear(&result);
	consensus_result_clear(NULL);
	fixture_free(&f);
}
END_TEST

START_TEST(test_vote_body_load)
{
	struct fixture f;
	struct vote_body *body = NULL;
	fixture_build(case_named("agreement"), &f);
	struct buffer *text = &f.body_text[0];
	ck_assert_int_eq(consensus_vote_body_load(&f.votes[0], text->data, text->len, MAX_RECORDS, &body), 0);
	ck_assert_uint_eq(body->record_count, 3);
	ck_assert_mem_eq(body->records, f.records[0], 3 * sizeof(f.records[0][0]));
	vote_body_free(body);
	/* Another vote's body: its digest is not this vote's body-sha256. */
	ck_assert_int_eq(consensus_vote_body_load(&f.votes[1], text->data, text->len, MAX_RECORDS, &body),
	                 DIRAUTH_ERR_MISMATCH);
	ck_assert_ptr_null(body);
	/* Under a lower record bound the body is refused. */
	ck_assert_int_eq(consensus_vote_body_load(&f.votes[0], text->data, text->len, 2, &body),
	                 DIRAUTH_ERR_BOUNDS);
	/* A body whose digest matches but whose lines disagree with the vote. */
	struct vote vote = f.votes[0];
	strcpy(vote.authority, "authority-2.example");
	ck_assert_int_eq(consensus_vote_body_load(&vote, text->data, text->len, MAX_RECORDS, &body),
	                 DIRAUTH_ERR_MISMATCH);
	vote = f.votes[0];
	vote.record_count = 2;
	ck_assert_int_eq(consensus_vote_body_load(&vote, text->data, text->len, MAX_RECORDS, &body),
	                 DIRAUTH_ERR_MISMATCH);
	vote = f.votes[0];
	vote.epoch = EPOCH + 1;
	ck_assert_int_eq(consensus_vote_body_load(&vote, text->data, text->len, MAX_RECORDS, &body),
	                 DIRAUTH_ERR_MISMATCH);
	vote = f.votes[0];
	strcpy(vote.namespace_name, "other-net");
	ck_assert_int_eq(consensus_vote_body_load(&vote, text->data, text->len, MAX_RECORDS, &body),
	                 DIRAUTH_ERR_MISMATCH);
	/* A body that does not parse, committed to by its vote. */
	const char *bad = "dirauth vote-body v1\n";
	vote = f.votes[0];
	ck_assert_int_eq(crypto_sha256((const uint8_t *)bad, strlen(bad), vote.body_sha256), 0);
	ck_assert_int_eq(
	    consensus_vote_body_load(&vote, (const uint8_t *)bad, strlen(bad), MAX_RECORDS, &body),
	    DIRAUTH_ERR_SYNTAX);
	fixture_free(&f);
}
END_TEST

START_TEST(test_failure_words)
{
	struct consensus_failure failure;
	char text[512];
	memset(&failure, 0, sizeof(failure));
	failure.outcome = CONSENSUS_TOO_FEW_VOTES;
	failure.held = 1;
	failure.required = 2;
	consensus_failure_describe(&failure, text, sizeof(text));
	ck_assert_str_eq(text, "no consensus: 1 valid vote, the threshold is 2");
	failure.outcome = CONSENSUS_NOTE_MISSING;
	memset(failure.service_id, 0xab, SERVICE_ID_SIZE);
	failure.sequence = 7;
	strcpy(failure.authority, "authority-4.example");
	consensus_failure_describe(&failure, text, sizeof(text));
	ck_assert_ptr_nonnull(
	    strstr(text, "abababababababababababababababababababababababababababababababab"));
	ck_assert_ptr_nonnull(strstr(text, "sequence 7"));
	ck_assert_ptr_nonnull(strstr(text, "authority-4.example"));
	/* Truncated to fit, and nothing without room. */
	consensus_failure_describe(&failure, text, 10);
	ck_assert_uint_eq(strlen(text), 9);
	consensus_failure_describe(&failure, NULL, 0);
	for (int outcome = CONSENSUS_OK; outcome <= CONSENSUS_FAILED; outcome++) {
		failure.outcome = (enum consensus_outcome)outcome;
		ck_assert_str_ne(consensus_outcome_name(failure.outcome), "unknown");
		consensus_failure_describe(&failure, text, sizeof(text));
		ck_assert_uint_gt(strlen(text), 10);
	}
	ck_assert_str_eq(consensus_outcome_name((enum consensus_outcome)(CONSENSUS_FAILED + 1)), "unknown");
	ck_assert_str_eq(consensus_outcome_name(CONSENSUS_NO_PREVIOUS), "no-previous");
}
END_TEST

/* ---- the choice rule against a direct computation ---- */

/* Synthetic notes: the module checks only their digest, so any bytes serve. */
#define RANDOM_SERVICES 200

/* The notes of the random votes, and the versions the rule asked for, in order: method 1 asks once
 * for each version it publishes, as it writes it. */
struct synthetic_notes {
	struct note_pool pool;
	size_t calls;
	struct vote_body_record asked[RANDOM_SERVICES];
};

static int synthetic_note(void *context, const uint8_t service_id[SERVICE_ID_SIZE], uint64_t sequence,
                          const uint8_t digest[32], const uint8_t **note, size_t *note_len)
{
	struct synthetic_notes *notes = context;
	if (notes->calls < RANDOM_SERVICES) {
		struct vote_body_record *asked = &notes->asked[notes->calls];
		memcpy(asked->service_id, service_id, SERVICE_ID_SIZE);
		asked->sequence = sequence;
		memcpy(asked->registration_sha256, digest, 32);
	}
	notes->calls++;
	const struct note_entry *entry = pool_find(&notes->pool, digest);
	if (!entry)
		return DIRAUTH_ERR_NOT_FOUND;
	*note = entry->note.data;
	*note_len = entry->note.len;
	return 0;
}

static uint64_t next_random(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

static int id_order(const void *a, const void *b)
{
	return memcmp(a, b, SERVICE_ID_SIZE);
}

/* A vote's lines read through consensus_record_lines from an array the rule does not see (the
 * body's records pointer is NULL), noting whether the rule reads them in order: each walk from
 * index 0, ascending. */
struct lines_reader {
	const struct vote_body *body;
	const struct vote_body_record *lines; /* the records, outside the body */
	size_t last;                          /* the index read last */
	size_t walks;                         /* walks begun (reads of index 0) */
	int read_any, out_of_order, fail_at_walk;
};

static int lines_reader_read(void *context, size_t index, struct vote_body_record *out)
{
	struct lines_reader *r = context;
	if (index == 0)
		r->walks++;
	else if (!r->read_any || index < r->last)
		r->out_of_order = 1;
	if (r->fail_at_walk && r->walks == (size_t)r->fail_at_walk && index == 1)
		return DIRAUTH_ERR_IO;
	r->last = index;
	r->read_any = 1;
	ck_assert_uint_lt(index, r->body->record_count);
	*out = r->lines[index];
	return 0;
}

static int version_above(const struct vote_body_record *a, const struct vote_body_record *b)
{
	if (a->sequence != b->sequence)
		return a->sequence > b->sequence;
	return memcmp(a->registration_sha256, b->registration_sha256, 32) > 0;
}

START_TEST(test_choice_matches_direct_rule)
{
	static const size_t sets[][2] = {{3, 2}, {4, 3}, {5, 3}, {7, 4}, {9, 5}};
	uint64_t state = 0x9e3779b97f4a7c15ull + (uint64_t)_i;
	size_t n = sets[_i % 5][0], k = sets[_i % 5][1];
	struct synthetic_notes notes = {0};
	uint8_t ids[RANDOM_SERVICES][SERVICE_ID_SIZE];
	for (size_t s = 0; s < RANDOM_SERVICES; s++) {
		char text[32];
		int len = snprintf(text, sizeof(text), "service %zu", s);
		ck_assert_int_eq(crypto_sha256((const uint8_t *)text, (size_t)len, ids[s]), 0);
	}
	/* Sort the ids so that votes list them in order. */
	qsort(ids, RANDOM_SERVICES, SERVICE_ID_SIZE, id_order);
	struct vote votes[9];
	struct vote_body bodies[9];
	struct vote_body_record *records[9];
	struct consensus_vote inputs[9];
	for (size_t v = 0; v < n; v++) {
		records[v] = calloc(RANDOM_SERVICES, sizeof(**records));
		ck_assert_ptr_nonnull(records[v]);
		size_t count = 0;
		for (size_t s = 0; s < RANDOM_SERVICES; s++) {
			if (next_random(&state) % 4 == 0)
				continue; /* this vote lacks this service */
			struct vote_body_record *record = &records[v][count++];
			memcpy(record->service_id, ids[s], SERVICE_ID_SIZE);
			record->sequence = 1 + next_random(&state) % 3;
			char text[64];
			int len = snprintf(text, sizeof(text), "note %zu %llu %llu", s,
			                   (unsigned long long)record->sequence,
			                   (unsigned long long)(next_random(&state) % 2));
			ck_assert_int_eq(
			    crypto_sha256((const uint8_t *)text, (size_t)len, record->registration_sha256),
			    0);
			pool_add(&notes.pool, (const uint8_t *)text, (size_t)len);
		}
		memset(&bodies[v], 0, sizeof(bodies[v]));
		strcpy(bodies[v].namespace_name, NAMESPACE);
		bodies[v].epoch = EPOCH;
		snprintf(bodies[v].authority, sizeof(bodies[v].authority), "authority-%zu.example", v + 1);
		bodies[v].record_count = count;
		bodies[v].records = records[v];
		memset(&votes[v], 0, sizeof(votes[v]));
		strcpy(votes[v].namespace_name, NAMESPACE);
		strcpy(votes[v].origin, ORIGIN);
		votes[v].epoch = EPOCH;
		strcpy(votes[v].authority, bodies[v].authority);
		votes[v].record_count = count;
		memset(&inputs[v], 0, sizeof(inputs[v]));
		inputs[v].vote = &votes[v];
		inputs[v].body = &bodies[v];
		inputs[v].previous_epoch = EPOCH - 1;
		memset(inputs[v].previous, 0x5a, 32);
		/* One vote in five of the larger sets names another previous and does not count. */
		if (n >= 7 && v == n - 1)
			inputs[v].previous[0] = 0;
		inputs[v].method_count = 1;
		inputs[v].methods[0] = 1;
	}
	struct fixture params_holder;
	memset(&params_holder, 0, sizeof(params_holder));
	fixture_params(&params_holder, n, k);
	struct consensus_result result;
	struct consensus_failure failure;
	ck_assert_int_eq(
	    consensus_compute(&params_holder.params, inputs, n, synthetic_note, &notes, &result, &failure),
	    0);

	/* The rule, directly: per service, the counting votes' versions, the k-th highest. */
	size_t chosen = 0, counting = n >= 7 ? n - 1 : n;
	for (size_t s = 0; s < RANDOM_SERVICES; s++) {
		const struct vote_body_record *versions[9];
		size_t held = 0;
		for (size_t v = 0; v < counting; v++)
			for (size_t r = 0; r < bodies[v].record_count; r++)
				if (memcmp(bodies[v].records[r].service_id, ids[s], SERVICE_ID_SIZE) == 0)
					versions[held++] = &bodies[v].records[r];
		if (held < k)
			continue;
		for (size_t a = 0; a < held; a++)
			for (size_t b = a + 1; b < held; b++)
				if (version_above(versions[b], versions[a])) {
					const struct vote_body_record *swap = versions[a];
					versions[a] = versions[b];
					versions[b] = swap;
				}
		ck_assert_uint_lt(chosen, result.record_count);
		ck_assert_mem_eq(&notes.asked[chosen], versions[k - 1], sizeof(*versions[k - 1]));
		chosen++;
	}
	ck_assert_uint_eq(chosen, result.record_count);
	ck_assert_uint_eq(notes.calls, chosen);
	ck_assert_uint_eq(result.counting_votes, counting);

	/* The same votes read through line readers: the same snapshot, byte for byte, each reader
	 * read in ascending order within each of the rule's walks. */
	struct lines_reader readers[9];
	struct consensus_record_lines lines[9];
	for (size_t v = 0; v < n; v++) {
		readers[v] = (struct lines_reader){.body = &bodies[v], .lines = records[v]};
		lines[v] = (struct consensus_record_lines){lines_reader_read, &readers[v]};
		inputs[v].lines = &lines[v];
		bodies[v].records = NULL;
	}
	struct consensus_result read;
	notes.calls = 0;
	ck_assert_int_eq(
	    consensus_compute(&params_holder.params, inputs, n, synthetic_note, &notes, &read, &failure), 0);
	ck_assert_uint_eq(read.record_count, result.record_count);
	ck_assert_uint_eq(read.body.len, result.body.len);
	ck_assert_mem_eq(read.body.data, result.body.data, result.body.len);
	ck_assert_uint_eq(read.header_text.len, result.header_text.len);
	ck_assert_mem_eq(read.header_text.data, result.header_text.data, result.header_text.len);
	for (size_t v = 0; v < n; v++) {
		ck_assert_msg(!readers[v].out_of_order, "vote %zu read out of order", v);
		ck_assert_uint_le(readers[v].walks, 3);
	}
	consensus_result_clear(&read);

	/* Lines that cannot be read stop the rule; lines out of order are a bad vote, as a body's
	 * array would be. */
	readers[0] = (struct lines_reader){.body = &bodies[0], .lines = records[0], .fail_at_walk = 2};
	ck_assert_int_eq(
	    consensus_compute(&params_holder.params, inputs, n, synthetic_note, &notes, &read, &failure),
	    DIRAUTH_ERR_IO);
	ck_assert_int_eq(failure.outcome, CONSENSUS_FAILED);
	ck_assert_ptr_null(read.body.data);
	struct vote_body_record swapped = records[0][3];
	records[0][3] = records[0][4];
	records[0][4] = swapped;
	readers[0] = (struct lines_reader){.body = &bodies[0], .lines = records[0]};
	ck_assert_int_eq(
	    consensus_compute(&params_holder.params, inputs, n, synthetic_note, &notes, &read, &failure),
	    DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(failure.outcome, CONSENSUS_BAD_VOTE);
	ck_assert_uint_eq(failure.vote_index, 0);
	ck_assert_str_eq(failure.authority, votes[0].authority);
	consensus_result_clear(&result);
	for (size_t v = 0; v < n; v++)
		free(records[v]);
	pool_free(&notes.pool);
}
END_TEST

static Suite *consensus_suite(void)
{
	Suite *suite = suite_create("consensus");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_vectors, 0, (int)CASE_COUNT);
	tcase_add_test(tc, test_one_authority_is_the_single_snapshot);
	tcase_add_test(tc, test_streamed_writer_failure);
	tcase_add_test(tc, test_refuses_bad_parameters);
	tcase_add_test(tc, test_refuses_votes_for_another_namespace_or_epoch);
	tcase_add_test(tc, test_refuses_two_votes_of_one_authority);
	tcase_add_test(tc, test_refuses_ill_formed_votes);
	tcase_add_test(tc, test_too_few_votes);
	tcase_add_test(tc, test_method_choice);
	tcase_add_test(tc, test_previous_choice);
	tcase_add_test(tc, test_note_missing_or_refused);
	tcase_add_test(tc, test_result_bounds);
	tcase_add_test(tc, test_vote_body_load);
	tcase_add_test(tc, test_failure_words);
	tcase_add_loop_test(tc, test_choice_matches_direct_rule, 0, 10);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(consensus_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
