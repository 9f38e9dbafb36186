/*
 * check_store_votes.c: the store's round tables (server/store/votes.h) and a header stored
 * without its body, on a real LMDB store in a temporary directory.
 *
 * What a round relies on: a member's first vote and first signature for an epoch stay, the same
 * bytes again are "already held", different bytes are refused and leave the first; the tables
 * survive a reopen; evidence is kept once per (member, epoch, kind) and listed in order; and
 * retention removes exactly the epochs below what it is given.
 */
#include "base/buffer.h"
#include "base/error.h"
#include "server/store/snapshots.h"
#include "server/store/store.h"
#include "server/store/votes.h"
#include "test_support.h"

#include <check.h>
#include <string.h>

#define NS "mix"

static char dir[256];
static struct store *store;

static void open_store(void)
{
	struct store_options options = {.path = dir};
	ck_assert_int_eq(store_open(&options, &store), 0);
}

static void setup(void)
{
	test_make_tempdir(dir, sizeof dir);
	open_store();
}

static void teardown(void)
{
	store_close(store);
	store = NULL;
	test_remove_tree(dir);
}

static void assert_vote(uint64_t epoch, unsigned member, const char *expected)
{
	struct buffer out;
	buffer_init(&out);
	ck_assert_int_eq(store_vote_get(store, NS, epoch, member, &out), 0);
	ck_assert_uint_eq(out.len, strlen(expected));
	ck_assert_int_eq(memcmp(out.data, expected, out.len), 0);
	buffer_free(&out);
}

START_TEST(test_votes_kept_once)
{
	const uint8_t *a = (const uint8_t *)"vote a", *b = (const uint8_t *)"vote b";
	uint32_t held = 7;
	ck_assert_int_eq(store_votes_held(store, NS, 5, &held), 0);
	ck_assert_uint_eq(held, 0);
	ck_assert_int_eq(store_vote_put(store, NS, 5, 2, a, 6), 0);
	ck_assert_int_eq(store_vote_put(store, NS, 5, 2, a, 6), DIRAUTH_ERR_EXISTS);
	ck_assert_int_eq(store_vote_put(store, NS, 5, 2, b, 6), DIRAUTH_ERR_MISMATCH);
	assert_vote(5, 2, "vote a");
	ck_assert_int_eq(store_vote_put(store, NS, 5, 0, b, 6), 0);
	ck_assert_int_eq(store_vote_put(store, NS, 6, 2, b, 6), 0);
	ck_assert_int_eq(store_votes_held(store, NS, 5, &held), 0);
	ck_assert_uint_eq(held, 0x5);
	struct buffer out;
	buffer_init(&out);
	ck_assert_int_eq(store_vote_get(store, NS, 5, 1, &out), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(store_vote_get(store, "other", 5, 2, &out), DIRAUTH_ERR_NOT_FOUND);
	buffer_free(&out);
	/* Refusals change nothing. */
	ck_assert_int_eq(store_vote_put(store, NS, 5, STORE_MEMBERS_MAX, a, 6), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(store_vote_put(store, NS, 5, 3, a, 0), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(store_vote_put(store, "", 5, 3, a, 6), DIRAUTH_ERR_SYNTAX);
	/* A restart keeps what was kept. */
	store_close(store);
	open_store();
	assert_vote(5, 2, "vote a");
	assert_vote(6, 2, "vote b");
	ck_assert_int_eq(store_vote_put(store, NS, 5, 2, b, 6), DIRAUTH_ERR_MISMATCH);
}
END_TEST

START_TEST(test_consensus_and_signatures)
{
	const uint8_t *text = (const uint8_t *)"header text\n";
	struct buffer out;
	uint32_t held = 0;
	buffer_init(&out);
	ck_assert_int_eq(store_consensus_get(store, NS, 9, &out), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(store_consensus_put(store, NS, 9, text, 12), 0);
	ck_assert_int_eq(store_consensus_put(store, NS, 9, text, 12), DIRAUTH_ERR_EXISTS);
	ck_assert_int_eq(store_consensus_put(store, NS, 9, (const uint8_t *)"other text\n", 11),
	                 DIRAUTH_ERR_MISMATCH);
	ck_assert_int_eq(store_consensus_get(store, NS, 9, &out), 0);
	ck_assert_uint_eq(out.len, 12);
	ck_assert_int_eq(store_signature_put(store, NS, 9, 1, (const uint8_t *)"sig one", 7), 0);
	ck_assert_int_eq(store_signature_put(store, NS, 9, 4, (const uint8_t *)"sig four", 8), 0);
	ck_assert_int_eq(store_signature_put(store, NS, 9, 4, (const uint8_t *)"sig other", 9),
	                 DIRAUTH_ERR_MISMATCH);
	ck_assert_int_eq(store_signatures_held(store, NS, 9, &held), 0);
	ck_assert_uint_eq(held, (1u << 1) | (1u << 4));
	ck_assert_int_eq(store_signature_get(store, NS, 9, 4, &out), 0);
	ck_assert_int_eq(memcmp(out.data, "sig four", 8), 0);
	buffer_free(&out);
}
END_TEST

struct listed {
	size_t count;
	uint64_t epochs[8];
	unsigned members[8];
	enum store_evidence_kind kinds[8];
	size_t second_len[8];
};

static int list_visit(void *context, const struct store_evidence *e)
{
	struct listed *l = context;
	ck_assert_uint_lt(l->count, 8);
	l->epochs[l->count] = e->epoch;
	l->members[l->count] = e->member;
	l->kinds[l->count] = e->kind;
	l->second_len[l->count] = e->second_len;
	l->count++;
	return 0;
}

START_TEST(test_evidence)
{
	const uint8_t *a = (const uint8_t *)"first", *b = (const uint8_t *)"second";
	ck_assert_int_eq(store_evidence_put(store, NS, 7, 2, STORE_EVIDENCE_CONFLICTING_VOTES, a, 5, b, 6),
	                 0);
	/* One piece per member, epoch and kind: a flood of conflicts keeps the first. */
	ck_assert_int_eq(store_evidence_put(store, NS, 7, 2, STORE_EVIDENCE_CONFLICTING_VOTES, b, 6, a, 5),
	                 DIRAUTH_ERR_EXISTS);
	ck_assert_int_eq(store_evidence_put(store, NS, 7, 2, STORE_EVIDENCE_OTHER_HEADER, a, 5, NULL, 0), 0);
	ck_assert_int_eq(store_evidence_put(store, NS, 3, 1, STORE_EVIDENCE_CONFLICTING_HEADERS, a, 5, b, 6),
	                 0);
	ck_assert_int_eq(store_evidence_put(store, NS, 3, 1, 0, a, 5, b, 6), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(store_evidence_put(store, NS, 3, 1, STORE_EVIDENCE_OTHER_HEADER, NULL, 0, NULL, 0),
	                 DIRAUTH_ERR_SYNTAX);
	struct listed l = {0};
	ck_assert_int_eq(store_evidence_foreach(store, NS, 0, list_visit, &l), 0);
	ck_assert_uint_eq(l.count, 3);
	ck_assert_uint_eq(l.epochs[0], 3);
	ck_assert_int_eq(l.kinds[0], STORE_EVIDENCE_CONFLICTING_HEADERS);
	ck_assert_uint_eq(l.second_len[0], 6);
	ck_assert_uint_eq(l.epochs[1], 7);
	ck_assert_int_eq(l.kinds[1], STORE_EVIDENCE_CONFLICTING_VOTES);
	ck_assert_int_eq(l.kinds[2], STORE_EVIDENCE_OTHER_HEADER);
	ck_assert_uint_eq(l.second_len[2], 0);
	memset(&l, 0, sizeof l);
	ck_assert_int_eq(store_evidence_foreach(store, NS, 4, list_visit, &l), 0);
	ck_assert_uint_eq(l.count, 2);
	memset(&l, 0, sizeof l);
	ck_assert_int_eq(store_evidence_foreach(store, "unknown", 0, list_visit, &l), 0);
	ck_assert_uint_eq(l.count, 0);
}
END_TEST

START_TEST(test_retention)
{
	const uint8_t *v = (const uint8_t *)"v";
	for (uint64_t e = 1; e <= 2000; e++) {
		ck_assert_int_eq(store_vote_put(store, NS, e, 0, v, 1), 0);
		ck_assert_int_eq(store_signature_put(store, NS, e, 1, v, 1), 0);
	}
	ck_assert_int_eq(store_consensus_put(store, NS, 10, v, 1), 0);
	ck_assert_int_eq(store_evidence_put(store, NS, 10, 0, STORE_EVIDENCE_OTHER_HEADER, v, 1, NULL, 0), 0);
	ck_assert_int_eq(store_evidence_put(store, NS, 1500, 0, STORE_EVIDENCE_OTHER_HEADER, v, 1, NULL, 0),
	                 0);
	ck_assert_int_eq(store_vote_put(store, "other", 1, 0, v, 1), 0);
	/* More than one chunk of keys goes. */
	ck_assert_int_eq(store_round_retain(store, NS, 1999, 11), 0);
	uint32_t held;
	ck_assert_int_eq(store_votes_held(store, NS, 1998, &held), 0);
	ck_assert_uint_eq(held, 0);
	ck_assert_int_eq(store_votes_held(store, NS, 1999, &held), 0);
	ck_assert_uint_eq(held, 1);
	ck_assert_int_eq(store_signatures_held(store, NS, 1, &held), 0);
	ck_assert_uint_eq(held, 0);
	ck_assert_int_eq(store_signatures_held(store, NS, 2000, &held), 0);
	ck_assert_uint_eq(held, 2);
	struct buffer out;
	buffer_init(&out);
	ck_assert_int_eq(store_consensus_get(store, NS, 10, &out), DIRAUTH_ERR_NOT_FOUND);
	buffer_free(&out);
	struct listed l = {0};
	ck_assert_int_eq(store_evidence_foreach(store, NS, 0, list_visit, &l), 0);
	ck_assert_uint_eq(l.count, 1);
	ck_assert_uint_eq(l.epochs[0], 1500);
	/* Another namespace is untouched. */
	ck_assert_int_eq(store_votes_held(store, "other", 1, &held), 0);
	ck_assert_uint_eq(held, 1);
}
END_TEST

START_TEST(test_header_without_body)
{
	const uint8_t *header = (const uint8_t *)"a caught-up header";
	struct buffer out;
	struct store_body_info info;
	uint64_t latest;
	buffer_init(&out);
	ck_assert_int_eq(store_snapshot_put(store, NS, 4, header, 18, NULL), 0);
	ck_assert_int_eq(store_snapshot_latest(store, NS, &latest), 0);
	ck_assert_uint_eq(latest, 4);
	ck_assert_int_eq(store_snapshot_get(store, NS, 4, &out, NULL), 0);
	ck_assert_uint_eq(out.len, 18);
	ck_assert_int_eq(store_snapshot_get(store, NS, 4, &out, &info), DIRAUTH_ERR_STALE);
	int fd = -1;
	uint64_t size;
	ck_assert_int_ne(store_body_open(store, NS, 4, ENCODING_IDENTITY, &fd, &size), 0);
	ck_assert_int_eq(store_snapshot_put(store, NS, 4, header, 18, NULL), DIRAUTH_ERR_ROLLBACK);
	buffer_free(&out);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("store_votes");
	TCase *t = tcase_create("store_votes");
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 30);
	tcase_add_test(t, test_votes_kept_once);
	tcase_add_test(t, test_consensus_and_signatures);
	tcase_add_test(t, test_evidence);
	tcase_add_test(t, test_retention);
	tcase_add_test(t, test_header_without_body);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	SRunner *runner = srunner_create(suite());
	srunner_run_all(runner, CK_NORMAL);
	int failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed ? 1 : 0;
}
