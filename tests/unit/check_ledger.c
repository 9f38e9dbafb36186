/*
 * check_ledger.c: the signer's ledger on a real LMDB environment.
 *
 * The ledger is the whole of the signer's refusal to equivocate, so every refusal is checked
 * here, each against state that has been closed and reopened (what a restart after a crash
 * sees): a lower epoch, a second statement for an epoch, a checkpoint that is smaller, forks at
 * the same size, names the wrong old size, or comes with a proof that does not verify. A
 * repeat of the same bytes is accepted (signing it again yields the same signature).
 */
#include "test_support.h"

#include "base/error.h"
#include "signer/ledger.h"
#include "crypto/merkle.h"

#include <check.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define TREE_MAX 64

static char dir[512];
static char ledger_dir[600];

static void setup(void)
{
	test_make_tempdir(dir, sizeof(dir));
	snprintf(ledger_dir, sizeof(ledger_dir), "%s/state/ledger", dir);
}

static void teardown(void)
{
	test_remove_tree(dir);
}

static struct ledger *open_ledger(void)
{
	struct ledger *ledger = NULL;
	ck_assert_int_eq(ledger_open(ledger_dir, &ledger), 0);
	ck_assert_ptr_nonnull(ledger);
	return ledger;
}

static struct ledger *reopen(struct ledger *ledger)
{
	ledger_close(ledger);
	return open_ledger();
}

static void digest_of(const char *text, uint8_t digest[32])
{
	memset(digest, 0, 32);
	size_t len = strlen(text);
	memcpy(digest, text, len < 32 ? len : 32);
}

/* Leaf hashes of a tree of TREE_MAX leaves "leaf 0", "leaf 1", ... */
static merkle_hash leaves[TREE_MAX];

static void make_leaves(const char *prefix)
{
	for (unsigned i = 0; i < TREE_MAX; i++) {
		char leaf[64];
		int len = snprintf(leaf, sizeof(leaf), "%s %u", prefix, i);
		ck_assert_int_eq(merkle_leaf_hash((const uint8_t *)leaf, (size_t)len, leaves[i]), 0);
	}
}

static void root_of(uint64_t size, merkle_hash root)
{
	ck_assert_int_eq(merkle_root(leaves, size, root), 0);
}

static void proof_of(uint64_t old_size, uint64_t size, merkle_hash *proof, size_t *count)
{
	ck_assert_int_eq(merkle_consistency_proof(leaves, size, old_size, proof, count), 0);
}

/* The latest checkpoint the log key of "log" signed is (size, root). */
static void assert_signed_latest(struct ledger *ledger, uint64_t size, const merkle_hash root)
{
	uint64_t latest_size = 0;
	merkle_hash latest;
	ck_assert_int_eq(
	    ledger_checkpoint_latest(ledger, LEDGER_CHECKPOINT_SIGNED, "log", &latest_size, latest), 0);
	ck_assert_uint_eq(latest_size, size);
	ck_assert_mem_eq(latest, root, sizeof(merkle_hash));
}

START_TEST(test_open_creates_private_directory)
{
	struct stat st;
	struct ledger *ledger = open_ledger();
	ck_assert_int_eq(stat(ledger_dir, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	ck_assert_int_eq(st.st_mode & 0777, 0700);
	ledger_close(ledger);

	/* A file where the directory should be. */
	char path[700];
	struct ledger *other = NULL;
	snprintf(path, sizeof(path), "%s/file", dir);
	test_write_file(path, "x", 1, 0600);
	ck_assert_int_eq(ledger_open(path, &other), DIRAUTH_ERR_IO);
	ck_assert_ptr_null(other);
	ledger_close(NULL);
}
END_TEST

START_TEST(test_epoch_rules)
{
	uint8_t a[32], b[32];
	struct ledger *ledger = open_ledger();
	digest_of("header a", a);
	digest_of("header b", b);

	ck_assert_int_eq(ledger_record_epoch(ledger, LEDGER_SNAPSHOT_HEADER, "dirauth.example/mix", 10, a),
	                 0);
	/* The same bytes again: a repeat. */
	ck_assert_int_eq(ledger_record_epoch(ledger, LEDGER_SNAPSHOT_HEADER, "dirauth.example/mix", 10, a),
	                 0);
	/* Another statement for the same epoch: equivocation. */
	ck_assert_int_eq(ledger_record_epoch(ledger, LEDGER_SNAPSHOT_HEADER, "dirauth.example/mix", 10, b),
	                 DIRAUTH_ERR_COLLISION);
	/* A lower epoch, with either digest. */
	ck_assert_int_eq(ledger_record_epoch(ledger, LEDGER_SNAPSHOT_HEADER, "dirauth.example/mix", 9, b),
	                 DIRAUTH_ERR_ROLLBACK);
	ck_assert_int_eq(ledger_record_epoch(ledger, LEDGER_SNAPSHOT_HEADER, "dirauth.example/mix", 9, a),
	                 DIRAUTH_ERR_ROLLBACK);
	/* A higher epoch moves the mark; the old epoch is then below it. */
	ck_assert_int_eq(ledger_record_epoch(ledger, LEDGER_SNAPSHOT_HEADER, "dirauth.example/mix", 12, b),
	                 0);
	ck_assert_int_eq(ledger_record_epoch(ledger, LEDGER_SNAPSHOT_HEADER, "dirauth.example/mix", 10, a),
	                 DIRAUTH_ERR_ROLLBACK);
	ck_assert_int_eq(ledger_record_epoch(ledger, LEDGER_SNAPSHOT_HEADER, "dirauth.example/mix", 12, a),
	                 DIRAUTH_ERR_COLLISION);
	ledger_close(ledger);
}
END_TEST

START_TEST(test_epoch_kinds_and_origins_are_separate)
{
	uint8_t a[32], b[32];
	struct ledger *ledger = open_ledger();
	digest_of("statement a", a);
	digest_of("statement b", b);

	ck_assert_int_eq(ledger_record_epoch(ledger, LEDGER_SNAPSHOT_HEADER, "dirauth.example/mix", 10, a),
	                 0);
	/* A vote for the same origin and epoch is another kind: its own record. */
	ck_assert_int_eq(ledger_record_epoch(ledger, LEDGER_VOTE, "dirauth.example/mix", 10, b), 0);
	ck_assert_int_eq(ledger_record_epoch(ledger, LEDGER_VOTE, "dirauth.example/mix", 3, b),
	                 DIRAUTH_ERR_ROLLBACK);
	/* Another origin starts from nothing. */
	ck_assert_int_eq(ledger_record_epoch(ledger, LEDGER_SNAPSHOT_HEADER, "dirauth.example/mail", 1, b),
	                 0);
	ck_assert_int_eq(ledger_record_epoch(ledger, LEDGER_SNAPSHOT_HEADER, "dirauth.example/mix", 10, b),
	                 DIRAUTH_ERR_COLLISION);
	ledger_close(ledger);
}
END_TEST

START_TEST(test_epoch_state_survives_reopen)
{
	uint8_t a[32], b[32];
	struct ledger *ledger = open_ledger();
	digest_of("header a", a);
	digest_of("header b", b);
	ck_assert_int_eq(ledger_record_epoch(ledger, LEDGER_SNAPSHOT_HEADER, "dirauth.example/mix", 100, a),
	                 0);
	ck_assert_int_eq(ledger_record_epoch(ledger, LEDGER_VOTE, "dirauth.example/mix", 100, b), 0);
	ledger = reopen(ledger);
	ck_assert_int_eq(ledger_record_epoch(ledger, LEDGER_SNAPSHOT_HEADER, "dirauth.example/mix", 100, b),
	                 DIRAUTH_ERR_COLLISION);
	ck_assert_int_eq(ledger_record_epoch(ledger, LEDGER_SNAPSHOT_HEADER, "dirauth.example/mix", 99, a),
	                 DIRAUTH_ERR_ROLLBACK);
	ck_assert_int_eq(ledger_record_epoch(ledger, LEDGER_SNAPSHOT_HEADER, "dirauth.example/mix", 100, a),
	                 0);
	ck_assert_int_eq(ledger_record_epoch(ledger, LEDGER_VOTE, "dirauth.example/mix", 100, a),
	                 DIRAUTH_ERR_COLLISION);
	ledger_close(ledger);
}
END_TEST

START_TEST(test_epoch_bad_origin)
{
	uint8_t a[32];
	char long_origin[300];
	struct ledger *ledger = open_ledger();
	digest_of("a", a);
	memset(long_origin, 'o', sizeof(long_origin) - 1);
	long_origin[sizeof(long_origin) - 1] = '\0';
	ck_assert_int_eq(ledger_record_epoch(ledger, LEDGER_VOTE, long_origin, 1, a), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(ledger_record_epoch(ledger, LEDGER_VOTE, "", 1, a), DIRAUTH_ERR_BOUNDS);
	ledger_close(ledger);
}
END_TEST

START_TEST(test_checkpoint_first)
{
	merkle_hash root, latest, proof[MERKLE_MAX_PROOF];
	size_t proof_count;
	uint64_t size = 0;
	struct ledger *ledger = open_ledger();
	make_leaves("leaf");
	root_of(5, root);

	ck_assert_int_eq(ledger_checkpoint_latest(ledger, LEDGER_CHECKPOINT_SIGNED, "log", &size, latest),
	                 DIRAUTH_ERR_NOT_FOUND);
	/* With nothing recorded the proof must start from the empty tree. */
	ck_assert_int_eq(
	    ledger_record_checkpoint(ledger, LEDGER_CHECKPOINT_SIGNED, "log", 5, root, 3, NULL, 0),
	    DIRAUTH_ERR_MISMATCH);
	proof_of(3, 5, proof, &proof_count);
	ck_assert_int_eq(
	    ledger_record_checkpoint(ledger, LEDGER_CHECKPOINT_SIGNED, "log", 5, root, 0, proof, proof_count),
	    DIRAUTH_ERR_PROOF);
	ck_assert_int_eq(ledger_checkpoint_latest(ledger, LEDGER_CHECKPOINT_SIGNED, "log", &size, latest),
	                 DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(
	    ledger_record_checkpoint(ledger, LEDGER_CHECKPOINT_SIGNED, "log", 5, root, 0, NULL, 0), 0);
	assert_signed_latest(ledger, 5, root);
	/* The cosigned record is separate. */
	ck_assert_int_eq(ledger_checkpoint_latest(ledger, LEDGER_CHECKPOINT_COSIGNED, "log", &size, latest),
	                 DIRAUTH_ERR_NOT_FOUND);
	ledger_close(ledger);
}
END_TEST

/* Room for a first checkpoint of a log is bounded by the logs already recorded, counting a log
 * once whether signed, cosigned or both; a log recorded already always has room. */
START_TEST(test_checkpoint_room)
{
	merkle_hash root;
	struct ledger *ledger = open_ledger();
	make_leaves("leaf");
	root_of(5, root);
	ck_assert_int_eq(ledger_checkpoint_room(ledger, "log-a", 2), 0);
	ck_assert_int_eq(
	    ledger_record_checkpoint(ledger, LEDGER_CHECKPOINT_SIGNED, "log-a", 5, root, 0, NULL, 0), 0);
	ck_assert_int_eq(
	    ledger_record_checkpoint(ledger, LEDGER_CHECKPOINT_COSIGNED, "log-a", 5, root, 0, NULL, 0), 0);
	ck_assert_int_eq(ledger_checkpoint_room(ledger, "log-b", 2), 0);
	ck_assert_int_eq(
	    ledger_record_checkpoint(ledger, LEDGER_CHECKPOINT_COSIGNED, "log-b", 5, root, 0, NULL, 0), 0);
	ck_assert_int_eq(
	    ledger_record_checkpoint(ledger, LEDGER_CHECKPOINT_SIGNED, "log-b", 5, root, 0, NULL, 0), 0);
	ck_assert_int_eq(ledger_checkpoint_room(ledger, "log-c", 2), DIRAUTH_ERR_FULL);
	ck_assert_int_eq(ledger_checkpoint_room(ledger, "log-c", 3), 0);
	ck_assert_int_eq(ledger_checkpoint_room(ledger, "log-a", 2), 0);
	ck_assert_int_eq(ledger_checkpoint_room(ledger, "log-b", 1), 0);
	ck_assert_int_eq(ledger_checkpoint_room(ledger, "", 3), DIRAUTH_ERR_BOUNDS);
	ledger_close(ledger);
}
END_TEST

START_TEST(test_checkpoint_from_empty_tree)
{
	merkle_hash empty, root;
	struct ledger *ledger = open_ledger();
	make_leaves("leaf");
	root_of(0, empty);
	root_of(4, root);
	ck_assert_int_eq(
	    ledger_record_checkpoint(ledger, LEDGER_CHECKPOINT_COSIGNED, "log", 0, empty, 0, NULL, 0), 0);
	/* From size 0 anything is consistent: no proof, old size 0. */
	ck_assert_int_eq(
	    ledger_record_checkpoint(ledger, LEDGER_CHECKPOINT_COSIGNED, "log", 4, root, 0, NULL, 0), 0);
	ck_assert_int_eq(
	    ledger_record_checkpoint(ledger, LEDGER_CHECKPOINT_COSIGNED, "log", 0, empty, 4, NULL, 0),
	    DIRAUTH_ERR_ROLLBACK);
	ledger_close(ledger);
}
END_TEST

START_TEST(test_checkpoint_consistency)
{
	merkle_hash root5, root9, root12, proof[MERKLE_MAX_PROOF], other_root, bad[MERKLE_MAX_PROOF];
	size_t proof_count, bad_count;
	uint64_t size = 0;
	merkle_hash latest;
	struct ledger *ledger = open_ledger();
	make_leaves("leaf");
	root_of(5, root5);
	root_of(9, root9);
	root_of(12, root12);

	ck_assert_int_eq(
	    ledger_record_checkpoint(ledger, LEDGER_CHECKPOINT_SIGNED, "log", 5, root5, 0, NULL, 0), 0);
	proof_of(5, 9, proof, &proof_count);
	ck_assert_uint_gt(proof_count, 0);

	/* The wrong old size: the proof is for another starting point. */
	ck_assert_int_eq(ledger_record_checkpoint(ledger, LEDGER_CHECKPOINT_SIGNED, "log", 9, root9, 4, proof,
	                                          proof_count),
	                 DIRAUTH_ERR_MISMATCH);
	ck_assert_int_eq(ledger_record_checkpoint(ledger, LEDGER_CHECKPOINT_SIGNED, "log", 9, root9, 0, proof,
	                                          proof_count),
	                 DIRAUTH_ERR_MISMATCH);
	/* A damaged proof. */
	memcpy(bad, proof, sizeof(merkle_hash) * proof_count);
	bad[0][0] ^= 1;
	ck_assert_int_eq(
	    ledger_record_checkpoint(ledger, LEDGER_CHECKPOINT_SIGNED, "log", 9, root9, 5, bad, proof_count),
	    DIRAUTH_ERR_PROOF);
	/* No proof at all. */
	ck_assert_int_eq(
	    ledger_record_checkpoint(ledger, LEDGER_CHECKPOINT_SIGNED, "log", 9, root9, 5, NULL, 0),
	    DIRAUTH_ERR_PROOF);
	/* A fork: a tree of 9 leaves whose first 5 differ, with its own valid-looking proof. */
	make_leaves("fork");
	root_of(9, other_root);
	proof_of(5, 9, bad, &bad_count);
	ck_assert_int_eq(ledger_record_checkpoint(ledger, LEDGER_CHECKPOINT_SIGNED, "log", 9, other_root, 5,
	                                          bad, bad_count),
	                 DIRAUTH_ERR_PROOF);
	make_leaves("leaf");

	/* The honest extension. */
	ck_assert_int_eq(ledger_record_checkpoint(ledger, LEDGER_CHECKPOINT_SIGNED, "log", 9, root9, 5, proof,
	                                          proof_count),
	                 0);
	assert_signed_latest(ledger, 9, root9);

	/* Smaller: rollback, with or without a proof. */
	ck_assert_int_eq(
	    ledger_record_checkpoint(ledger, LEDGER_CHECKPOINT_SIGNED, "log", 5, root5, 9, NULL, 0),
	    DIRAUTH_ERR_ROLLBACK);
	/* Same size, other root: a fork. */
	ck_assert_int_eq(
	    ledger_record_checkpoint(ledger, LEDGER_CHECKPOINT_SIGNED, "log", 9, other_root, 9, NULL, 0),
	    DIRAUTH_ERR_COLLISION);
	/* Same size and root: a repeat, which carries no proof. */
	ck_assert_int_eq(
	    ledger_record_checkpoint(ledger, LEDGER_CHECKPOINT_SIGNED, "log", 9, root9, 9, NULL, 0), 0);
	ck_assert_int_eq(ledger_record_checkpoint(ledger, LEDGER_CHECKPOINT_SIGNED, "log", 9, root9, 9, proof,
	                                          proof_count),
	                 DIRAUTH_ERR_PROOF);

	/* Everything holds after a reopen. */
	ledger = reopen(ledger);
	ck_assert_int_eq(
	    ledger_record_checkpoint(ledger, LEDGER_CHECKPOINT_SIGNED, "log", 5, root5, 9, NULL, 0),
	    DIRAUTH_ERR_ROLLBACK);
	ck_assert_int_eq(
	    ledger_record_checkpoint(ledger, LEDGER_CHECKPOINT_SIGNED, "log", 9, other_root, 9, NULL, 0),
	    DIRAUTH_ERR_COLLISION);
	proof_of(9, 12, proof, &proof_count);
	ck_assert_int_eq(ledger_record_checkpoint(ledger, LEDGER_CHECKPOINT_SIGNED, "log", 12, root12, 5,
	                                          proof, proof_count),
	                 DIRAUTH_ERR_MISMATCH);
	ck_assert_int_eq(ledger_record_checkpoint(ledger, LEDGER_CHECKPOINT_SIGNED, "log", 12, root12, 9,
	                                          proof, proof_count),
	                 0);
	ledger = reopen(ledger);
	assert_signed_latest(ledger, 12, root12);
	/* The cosigned kind and another origin were never touched. */
	ck_assert_int_eq(ledger_checkpoint_latest(ledger, LEDGER_CHECKPOINT_COSIGNED, "log", &size, latest),
	                 DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(ledger_checkpoint_latest(ledger, LEDGER_CHECKPOINT_SIGNED, "other", &size, latest),
	                 DIRAUTH_ERR_NOT_FOUND);
	ledger_close(ledger);
}
END_TEST

/* The log key signed 5; the cosignature key then took the tree to 9 (another authority's
 * checkpoint of the same log). This authority's own log, which read 5 as the latest before that,
 * asks for 9 from 5 with its proof: the same head, already signed, is a repeat, not a mismatch.
 * A head beside it or below it is still refused. */
START_TEST(test_checkpoint_repeat_from_an_older_head)
{
	merkle_hash root5, root9, proof[MERKLE_MAX_PROOF], other_root;
	size_t proof_count;
	struct ledger *ledger = open_ledger();
	make_leaves("leaf");
	root_of(5, root5);
	root_of(9, root9);
	memcpy(other_root, root9, sizeof(merkle_hash));
	other_root[0] ^= 1;
	proof_of(5, 9, proof, &proof_count);

	ck_assert_int_eq(
	    ledger_record_checkpoint(ledger, LEDGER_CHECKPOINT_SIGNED, "log", 5, root5, 0, NULL, 0), 0);
	ck_assert_int_eq(ledger_record_checkpoint(ledger, LEDGER_CHECKPOINT_COSIGNED, "log", 9, root9, 5,
	                                          proof, proof_count),
	                 0);
	ck_assert_int_eq(ledger_record_checkpoint(ledger, LEDGER_CHECKPOINT_SIGNED, "log", 9, root9, 5, proof,
	                                          proof_count),
	                 0);
	assert_signed_latest(ledger, 9, root9);
	/* Not another root of that size, not an old size past it, not a smaller head. */
	ck_assert_int_eq(ledger_record_checkpoint(ledger, LEDGER_CHECKPOINT_SIGNED, "log", 9, other_root, 5,
	                                          proof, proof_count),
	                 DIRAUTH_ERR_COLLISION);
	ck_assert_int_eq(
	    ledger_record_checkpoint(ledger, LEDGER_CHECKPOINT_SIGNED, "log", 9, root9, 12, NULL, 0),
	    DIRAUTH_ERR_MISMATCH);
	ck_assert_int_eq(
	    ledger_record_checkpoint(ledger, LEDGER_CHECKPOINT_SIGNED, "log", 5, root5, 0, NULL, 0),
	    DIRAUTH_ERR_ROLLBACK);
	ledger_close(ledger);
}
END_TEST

static Suite *ledger_suite(void)
{
	Suite *suite = suite_create("ledger");
	TCase *tc = tcase_create("ledger");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_open_creates_private_directory);
	tcase_add_test(tc, test_epoch_rules);
	tcase_add_test(tc, test_epoch_kinds_and_origins_are_separate);
	tcase_add_test(tc, test_epoch_state_survives_reopen);
	tcase_add_test(tc, test_epoch_bad_origin);
	tcase_add_test(tc, test_checkpoint_first);
	tcase_add_test(tc, test_checkpoint_room);
	tcase_add_test(tc, test_checkpoint_from_empty_tree);
	tcase_add_test(tc, test_checkpoint_consistency);
	tcase_add_test(tc, test_checkpoint_repeat_from_an_older_head);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(ledger_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
