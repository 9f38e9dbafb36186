/*
 * test_log_witness.c: three authorities (k = 2) cosigning each other's checkpoints with
 * c2sp.org/tlog-witness add-checkpoint, on the cluster harness (tests/harness/cluster.h), whose
 * configurations pin every member's log and cosignature keys.
 *
 * Over five epochs of 6 s, after each publication every authority serves at
 * GET /v1/mix/log/checkpoint a checkpoint of the log of every header published so far, signed by
 * its own log key and cosigned by at least k distinct authorities: tlog_checkpoint_verify accepts
 * it with the policy of that log key and the three cosignature keys with quorum k, its root is
 * the RFC 6962 root of the published header texts (so every authority's checkpoints are of one
 * tree, consistent across authorities and epochs), and all three agree on it. Then a forged
 * checkpoint signed by authority 0's log key is sent to authority 1: of the size it cosigned last
 * with another root, 409 with that size as text/x.tlog.size; one entry larger with a proof that
 * does not verify, 422; each logged, and the honest log goes on cosigned. About 15 s.
 */
#include "test_support.h"

#include "schema/checkpoint.h"
#include "base/error.h"
#include "crypto/merkle.h"
#include "server/tlog/witness.h"
#include "signer/key.h"
#include "tests/harness/cluster.h"
#include "tlog/policy.h"

#include <check.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N       3
#define K       2
#define EPOCHS  5
#define WAIT_MS 30000 /* a bound, not a pace: each wait ends as soon as its condition holds */

/* The note text of a signed note. */
static void note_text(const struct buffer *note, struct buffer *text)
{
	struct note *parsed = NULL;
	ck_assert_int_eq(note_parse(note->data, note->len, &parsed), 0);
	buffer_init(text);
	ck_assert_int_eq(buffer_append(text, parsed->text, parsed->text_len), 0);
	note_free(parsed);
}

/* Authority i's served checkpoint, checked against the policy of its log key and the three
 * cosignature keys with quorum K: 0 with *out and *cosigned, or the verification's error. */
static int served_checkpoint(struct cluster *c, size_t i, struct checkpoint *out, size_t *cosigned,
                             struct buffer *note_out)
{
	struct cluster_response response;
	long status = cluster_get(c, i, "/v1/mix/log/checkpoint", &response);
	if (status != 200) {
		cluster_response_free(&response);
		return DIRAUTH_ERR_NOT_FOUND;
	}
	struct note *note = NULL;
	ck_assert_int_eq(note_parse(response.body.data, response.body.len, &note), 0);
	struct note_verifier cosigners[N];
	for (size_t j = 0; j < N; j++)
		cosigners[j] = *cluster_cosigner(c, j);
	struct tlog_policy policy = {.origin = CLUSTER_ORIGIN,
	                             .log_key = signer_key_verifier(cluster_log_key(c, i)),
	                             .cosigners = cosigners,
	                             .cosigner_count = N,
	                             .quorum = K};
	int rc = tlog_checkpoint_verify(note, &policy, out, NULL, cosigned);
	note_free(note);
	if (note_out) {
		buffer_init(note_out);
		ck_assert_int_eq(buffer_append(note_out, response.body.data, response.body.len), 0);
	}
	cluster_response_free(&response);
	return rc;
}

/* Waits until authority i serves a checkpoint of size entries that verifies with quorum K. */
static void expect_checkpoint(struct cluster *c, size_t i, uint64_t size, const merkle_hash root)
{
	struct checkpoint served;
	size_t cosigned = 0;
	int rc = DIRAUTH_ERR_NOT_FOUND;
	for (int waited = 0; waited < WAIT_MS; waited += 100) {
		rc = served_checkpoint(c, i, &served, &cosigned, NULL);
		if (rc == 0 && served.tree_size >= size)
			break;
		test_sleep_ms(100);
	}
	ck_assert_msg(rc == 0, "%s serves no checkpoint that verifies with %d cosignatures (%s); see %s",
	              cluster_name(c, i), K, dirauth_strerror(rc), cluster_log_path(c, i));
	ck_assert_msg(served.tree_size == size, "%s serves a checkpoint of %llu entries, not %llu",
	              cluster_name(c, i), (unsigned long long)served.tree_size, (unsigned long long)size);
	ck_assert_uint_ge(cosigned, K);
	ck_assert_msg(memcmp(served.root, root, MERKLE_HASH_SIZE) == 0,
	              "%s's checkpoint of %llu entries is not the tree of the published headers",
	              cluster_name(c, i), (unsigned long long)size);
}

/* POSTs an add-checkpoint body to authority i. */
static long add_checkpoint(struct cluster *c, size_t i, const struct buffer *body, struct cluster_response *r)
{
	return cluster_post(c, i, "/v1/mix/log/add-checkpoint", body->data, body->len, r);
}

/* A checkpoint note of (size, root) signed by key. */
static void forged_note(const struct signer_key *key, uint64_t size, const merkle_hash root,
                        struct buffer *out)
{
	struct checkpoint forged;
	struct buffer text;
	struct note_signature signature;
	memset(&forged, 0, sizeof forged);
	snprintf(forged.origin, sizeof forged.origin, "%s", CLUSTER_ORIGIN);
	forged.tree_size = size;
	memcpy(forged.root, root, MERKLE_HASH_SIZE);
	buffer_init(&text);
	ck_assert_int_eq(checkpoint_encode(&forged, &text), 0);
	ck_assert_int_eq(signer_key_sign(key, text.data, text.len, &signature), 0);
	buffer_init(out);
	ck_assert_int_eq(note_format(text.data, text.len, &signature, 1, out), 0);
	buffer_free(&text);
}

START_TEST(test_three_authorities_cosign_each_others_checkpoints)
{
	struct cluster_options options = {.authorities = N, .threshold = K};
	struct cluster *c = cluster_start(&options);
	struct buffer registration;
	cluster_registration(c, cluster_provider_key(c, 0), "service", 0, 1, &registration);
	ck_assert_uint_eq(
	    cluster_register(c, CLUSTER_BIT(0) | CLUSTER_BIT(1) | CLUSTER_BIT(2), &registration, NULL), N);
	buffer_free(&registration);

	merkle_hash leaves[EPOCHS + 1], root;
	uint64_t first = cluster_next_epoch(c);
	for (uint64_t e = 0; e < EPOCHS; e++) {
		uint64_t epoch = first + e;
		cluster_run_epoch(c, epoch);
		struct snapshot_header latest;
		for (size_t i = 0; i < N; i++)
			ck_assert_msg(cluster_wait_epoch(c, i, epoch, WAIT_MS, &latest, NULL) == 0,
			              "%s did not publish epoch %llu; see %s", cluster_name(c, i),
			              (unsigned long long)epoch, cluster_log_path(c, i));
		/* Leaf e is the text of the header published for epoch first + e. */
		struct buffer note, text;
		ck_assert_int_eq(cluster_snapshot(c, 0, epoch, &note, NULL), 0);
		note_text(&note, &text);
		ck_assert_int_eq(merkle_leaf_hash(text.data, text.len, leaves[e]), 0);
		buffer_free(&note);
		buffer_free(&text);
		ck_assert_int_eq(merkle_root(leaves, e + 1, root), 0);
		for (size_t i = 0; i < N; i++)
			expect_checkpoint(c, i, e + 1, root);
		cluster_check_alive(c);
	}
	/* One tree head, three checkpoints: each signed by its own authority's log key only. */
	struct buffer notes[N];
	for (size_t i = 0; i < N; i++) {
		struct checkpoint served;
		size_t cosigned = 0;
		ck_assert_int_eq(served_checkpoint(c, i, &served, &cosigned, &notes[i]), 0);
		for (size_t j = 0; j < N; j++) {
			if (j == i)
				continue;
			struct note *parsed = NULL;
			size_t verified = 0;
			ck_assert_int_eq(note_parse(notes[i].data, notes[i].len, &parsed), 0);
			ck_assert_int_eq(note_verify(parsed, signer_key_verifier(cluster_log_key(c, j)), 1,
			                             NULL, &verified),
			                 0);
			ck_assert_uint_eq(verified, 0);
			note_free(parsed);
		}
		buffer_free(&notes[i]);
	}

	/* A fork signed by authority 0's log key, sent to authority 1, which cosigned EPOCHS entries:
	 * the same size with another root is 409 naming that size. */
	merkle_hash other;
	memcpy(other, root, MERKLE_HASH_SIZE);
	other[0] ^= 1;
	struct buffer note, body;
	struct cluster_response response;
	forged_note(cluster_log_key(c, 0), EPOCHS, other, &note);
	buffer_init(&body);
	ck_assert_int_eq(translog_add_checkpoint_encode(EPOCHS, NULL, 0, note.data, note.len, &body), 0);
	char size_line[32];
	snprintf(size_line, sizeof size_line, "%d\n", EPOCHS);
	ck_assert_int_eq(add_checkpoint(c, 1, &body, &response), 409);
	ck_assert_uint_eq(response.body.len, strlen(size_line));
	ck_assert(memcmp(response.body.data, size_line, strlen(size_line)) == 0);
	cluster_response_free(&response);
	buffer_free(&body);
	buffer_free(&note);
	/* One entry more, with a proof of a tree that is not the one cosigned: 422. */
	merkle_hash forked[EPOCHS + 1], proof[MERKLE_MAX_PROOF], forked_root;
	size_t proof_len = 0;
	memcpy(forked, leaves, sizeof forked);
	forked[0][0] ^= 1;
	memset(forked[EPOCHS], 7, MERKLE_HASH_SIZE);
	ck_assert_int_eq(merkle_root(forked, EPOCHS + 1, forked_root), 0);
	ck_assert_int_eq(merkle_consistency_proof(forked, EPOCHS + 1, EPOCHS, proof, &proof_len), 0);
	forged_note(cluster_log_key(c, 0), EPOCHS + 1, forked_root, &note);
	buffer_init(&body);
	ck_assert_int_eq(translog_add_checkpoint_encode(EPOCHS, proof, proof_len, note.data, note.len, &body),
	                 0);
	ck_assert_int_eq(add_checkpoint(c, 1, &body, &response), 422);
	cluster_response_free(&response);
	/* Authority 2 refuses it as well. */
	ck_assert_int_eq(add_checkpoint(c, 2, &body, &response), 422);
	cluster_response_free(&response);
	buffer_free(&body);
	buffer_free(&note);
	/* The honest next tree head under a log key named by the origin that nobody pinned: 403. */
	struct signer_key *stranger = NULL;
	ck_assert_int_eq(signer_key_generate(CLUSTER_ORIGIN, &stranger), 0);
	forged_note(stranger, EPOCHS, root, &note);
	buffer_init(&body);
	ck_assert_int_eq(translog_add_checkpoint_encode(EPOCHS, NULL, 0, note.data, note.len, &body), 0);
	ck_assert_int_eq(add_checkpoint(c, 1, &body, &response), 403);
	cluster_response_free(&response);
	buffer_free(&body);
	buffer_free(&note);
	signer_key_free(stranger);
	ck_assert(cluster_log_contains(c, 1, "add-checkpoint refused (409)"));
	ck_assert(cluster_log_contains(c, 1, "add-checkpoint refused (422)"));
	ck_assert(cluster_log_contains(c, 2, "add-checkpoint refused (422)"));

	/* The honest log goes on, cosigned. */
	uint64_t epoch = first + EPOCHS;
	cluster_run_epoch(c, epoch);
	struct snapshot_header latest;
	for (size_t i = 0; i < N; i++)
		ck_assert_int_eq(cluster_wait_epoch(c, i, epoch, WAIT_MS, &latest, NULL), 0);
	struct buffer header, text;
	ck_assert_int_eq(cluster_snapshot(c, 0, epoch, &header, NULL), 0);
	note_text(&header, &text);
	ck_assert_int_eq(merkle_leaf_hash(text.data, text.len, leaves[EPOCHS]), 0);
	buffer_free(&header);
	buffer_free(&text);
	ck_assert_int_eq(merkle_root(leaves, EPOCHS + 1, root), 0);
	for (size_t i = 0; i < N; i++)
		expect_checkpoint(c, i, EPOCHS + 1, root);
	cluster_check_alive(c);
	cluster_free(c);
}
END_TEST

static Suite *log_witness_suite(void)
{
	Suite *s = suite_create("log_witness");
	TCase *t = tcase_create("three");
	tcase_set_timeout(t, 240);
	tcase_add_test(t, test_three_authorities_cosign_each_others_checkpoints);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	SRunner *runner = srunner_create(log_witness_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
