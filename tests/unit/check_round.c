/*
 * check_round.c: server/round's rules, each on its own, in one process: three authorities with a
 * threshold of two (n = 3, k = 2) over the simulated network of tests/sim (simnet.h), each case on
 * a fixed seed with the faults it sets itself, and what it asserts read from the nodes' stores and
 * rounds.
 *
 *   - publication: with all three up, every epoch is published by all three with one header text,
 *     signed by all three;
 *   - k of n: with one down, the other two publish (k is met), without its signature; restarted,
 *     it catches up and its chain is theirs, header for header, each following the one before it
 *     (verify_history_follows); with two down nothing is published (no snapshot below k) until one
 *     comes back;
 *   - the votes peers push (round_accept_vote, docs/protocol.md): the same vote twice is kept once
 *     (202, then 200); a second, different vote of one member for one epoch is refused
 *     (conflicting_vote) and both are kept as evidence; a vote of another epoch (wrong_epoch), one
 *     after the vote deadline (too_late), one by a non-member (unknown_authority) and one whose
 *     signature does not verify (bad_signature) are refused and change nothing held; so is a
 *     member's signature over the header that does not verify;
 *   - the window: a peer slower than the round's window, with the third member down, leaves the
 *     epoch unpublished (the round gives up at its window's end rather than wait) and the next
 *     epoch publishes once the peer is back to speed.
 *
 * One authority alone (n = 1) is the round with no peer, which publishes in one tick at the
 * epoch's start; check_publish drives it through the scheduler. A failing case prints its seed; SIMNET_KEEP=1
 * keeps the run's directory with each node's round log, SIMNET_LOG=1 prints the harness's lines.
 */
#include "base/buffer.h"
#include "base/error.h"
#include "schema/note.h"
#include "schema/vote.h"
#include "schema/vote_envelope.h"
#include "server/api/api_error.h"
#include "server/round/round.h"
#include "test_keys.h"
#include "tests/sim/simnet.h"
#include "verify/history.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MEMBERS   3
#define THRESHOLD 2
#define LOG_ENV   "SIMNET_LOG" /* 1: the harness's lines on stderr */

/* ---- the set ---- */

/* Three authorities, k = 2, a light workload (one registration an epoch), two epochs published. */
static struct simnet *start_set(uint64_t seed)
{
	struct simnet_options o;
	simnet_options_init(&o);
	o.seed = seed;
	o.members = MEMBERS;
	o.threshold = THRESHOLD;
	o.registrations = 1;
	o.health = 0;
	o.revocation_permille = 0;
	const char *log = getenv(LOG_ENV);
	o.log = log && strcmp(log, "1") == 0 ? stderr : NULL;
	struct simnet *net = NULL;
	char why[768];
	int rc = simnet_create(&o, &net, why, sizeof why);
	ck_assert_msg(rc == 0, "seed %llu: %s (%s)", (unsigned long long)seed, why, dirauth_strerror(rc));
	ck_assert_int_eq(simnet_run_epochs(net, 2), 0);
	return net;
}

/* No safety invariant broken (liveness is each case's own business). */
static void expect_safe(struct simnet *net)
{
	static const enum simnet_invariant safety[] = {SIMNET_SIGNATURES, SIMNET_VOTES, SIMNET_REVOCATION,
	                                               SIMNET_AGREEMENT, SIMNET_HARNESS};
	for (size_t s = 0; s < sizeof safety / sizeof safety[0]; s++)
		if (simnet_violations_of(net, safety[s]) != 0) {
			simnet_violations_print(net, stderr);
			ck_abort_msg("%s broken (the run: %s)", simnet_invariant_name(safety[s]),
			             simnet_dir(net));
		}
}

static uint64_t latest_of(struct simnet *net, size_t node)
{
	uint64_t epoch = 0;
	ck_assert_int_eq(simnet_latest(net, node, &epoch), 0);
	return epoch;
}

/* The header node stores for epoch, read back as the history checks take it. Returns 0 or
 * DIRAUTH_ERR_NOT_FOUND. */
static int stored_header(struct simnet *net, size_t node, uint64_t epoch, struct verify_held *out)
{
	struct buffer note;
	buffer_init(&note);
	int rc = simnet_stored_header(net, node, epoch, &note);
	if (rc == 0)
		ck_assert_int_eq(verify_held_parse(note.data, note.len, out, NULL, 0), 0);
	buffer_free(&note);
	return rc;
}

/* Node's stored chain from epoch first to last, both stored: each header stored follows the one
 * stored before it (an epoch that failed is a gap the next header's previous steps over). */
static void expect_chain(struct simnet *net, size_t node, uint64_t first, uint64_t last)
{
	struct verify_held before, header;
	char detail[256];
	ck_assert_msg(stored_header(net, node, first, &before) == 0, "node %zu lacks epoch %llu", node,
	              (unsigned long long)first);
	ck_assert_msg(stored_header(net, node, last, &header) == 0, "node %zu lacks epoch %llu", node,
	              (unsigned long long)last);
	for (uint64_t e = first + 1; e <= last; e++) {
		if (stored_header(net, node, e, &header) != 0)
			continue;
		ck_assert_msg(verify_history_follows(&before, &header.header, detail, sizeof detail) == 0,
		              "node %zu: %s", node, detail);
		before = header;
	}
}

/* Nodes a and b store the same header text for each epoch from first to last. */
static void expect_same_headers(struct simnet *net, size_t a, size_t b, uint64_t first, uint64_t last)
{
	for (uint64_t e = first; e <= last; e++) {
		struct verify_held x, y;
		ck_assert_msg(stored_header(net, a, e, &x) == 0, "node %zu lacks epoch %llu", a,
		              (unsigned long long)e);
		ck_assert_msg(stored_header(net, b, e, &y) == 0, "node %zu lacks epoch %llu", b,
		              (unsigned long long)e);
		ck_assert_msg(memcmp(x.digest, y.digest, 32) == 0, "nodes %zu and %zu differ at epoch %llu",
		              a, b, (unsigned long long)e);
	}
}

/* The round's figures of node's namespace 0 agree with its status: every epoch published or
 * failed is counted once, under one reason (none here is published late). */
static void expect_figures_match_status(struct simnet *net, size_t node)
{
	struct round_status status;
	struct round_statistics figures;
	round_status_get(simnet_round(net, node), 0, &status);
	round_statistics_get(simnet_round(net, node), 0, &figures);
	uint64_t failed = 0;
	for (int r = 0; r < ROUND_FAILURE_COUNT; r++)
		failed += figures.failed_total[r];
	ck_assert_uint_eq(figures.published_total, status.published_total);
	ck_assert_uint_eq(failed, status.failed_total);
	ck_assert_uint_eq(figures.epoch, status.epoch);
}

/* Node's count of refusals of member's statements for reason, and of all its refusals. */
static uint64_t refusals_of(struct simnet *net, size_t node, size_t member, enum round_refusal reason,
                            uint64_t *all)
{
	uint64_t counts[CONFIG_MAX_MEMBERS][ROUND_REFUSAL_COUNT];
	round_refusals_get(simnet_round(net, node), counts);
	*all = 0;
	for (size_t m = 0; m < CONFIG_MAX_MEMBERS; m++)
		for (int r = 0; r < ROUND_REFUSAL_COUNT; r++)
			*all += counts[m][r];
	return counts[member][reason];
}

/* ---- publication ---- */

START_TEST(test_all_publish_the_same_header)
{
	struct simnet *net = start_set(301);
	uint64_t first = latest_of(net, 0) + 1;
	ck_assert_int_eq(simnet_run_epochs(net, 4), 0);
	uint64_t last = latest_of(net, 0);
	ck_assert_uint_ge(last, first + 3);
	for (size_t node = 0; node < MEMBERS; node++) {
		ck_assert_uint_eq(latest_of(net, node), last);
		expect_chain(net, node, first - 1, last);
		if (node > 0)
			expect_same_headers(net, 0, node, first, last);
	}
	for (uint64_t e = first; e <= last; e++)
		for (size_t member = 0; member < MEMBERS; member++)
			ck_assert_msg(simnet_signed_by(net, e, member) == 1,
			              "member %zu did not sign epoch %llu", member, (unsigned long long)e);
	/* Each member's metrics: every member's vote and signature of the last epoch kept, each
	 * step timed once per epoch, nothing failed or refused. */
	for (size_t node = 0; node < MEMBERS; node++) {
		struct round_statistics figures;
		round_statistics_get(simnet_round(net, node), 0, &figures);
		for (size_t member = 0; member < MEMBERS; member++) {
			ck_assert_uint_ge(figures.members[member].vote_epoch, last);
			ck_assert_uint_ge(figures.members[member].signature_epoch, last);
		}
		ck_assert_uint_ge(figures.published_total, last - first + 1);
		ck_assert_uint_eq(figures.phases[ROUND_PHASE_PUBLICATION].count, figures.published_total);
		ck_assert_uint_ge(figures.phases[ROUND_PHASE_VOTE].count, figures.published_total);
		expect_figures_match_status(net, node);
		uint64_t all;
		refusals_of(net, node, 0, ROUND_REFUSAL_OTHER, &all);
		ck_assert_uint_eq(all, 0);
	}
	ck_assert_uint_eq(simnet_violation_count(net), 0);
	simnet_free(net);
}
END_TEST

/* ---- k of n ---- */

START_TEST(test_one_down_the_others_publish_and_it_catches_up)
{
	struct simnet *net = start_set(302);
	const size_t down = 2;
	ck_assert_int_eq(simnet_crash(net, down), 0);
	uint64_t before = latest_of(net, 0);
	ck_assert_int_eq(simnet_run_epochs(net, 4), 0);
	uint64_t last = latest_of(net, 0);
	ck_assert_uint_ge(last, before + 3);
	ck_assert_uint_eq(latest_of(net, 1), last);
	expect_same_headers(net, 0, 1, before + 1, last);
	for (uint64_t e = before + 1; e <= last; e++) {
		ck_assert_int_eq(simnet_signed_by(net, e, 0), 1);
		ck_assert_int_eq(simnet_signed_by(net, e, 1), 1);
		ck_assert_int_eq(simnet_signed_by(net, e, down), 0);
	}
	/* Back: it takes what was published while it was away, and signs again. */
	ck_assert_int_eq(simnet_restart(net, down), 0);
	uint64_t restarted = simnet_epoch_now(net);
	ck_assert_int_eq(simnet_run_epochs(net, 3), 0);
	uint64_t now_latest = latest_of(net, 0);
	ck_assert_uint_eq(latest_of(net, down), now_latest);
	expect_chain(net, down, before, now_latest);
	expect_same_headers(net, 0, down, before, now_latest);
	int signed_again = 0;
	for (uint64_t e = restarted; e <= now_latest && !signed_again; e++)
		signed_again = simnet_signed_by(net, e, down) == 1;
	ck_assert_msg(signed_again, "member %zu signed nothing since its restart", down);
	ck_assert_uint_eq(simnet_check_converged(net), 0);
	expect_safe(net);
	simnet_free(net);
}
END_TEST

START_TEST(test_two_down_nothing_published_until_one_returns)
{
	struct simnet *net = start_set(303);
	ck_assert_int_eq(simnet_crash(net, 1), 0);
	ck_assert_int_eq(simnet_crash(net, 2), 0);
	uint64_t before = latest_of(net, 0);
	struct round_status status;
	round_status_get(simnet_round(net, 0), 0, &status);
	uint64_t failed_before = status.failed_total;
	ck_assert_int_eq(simnet_run_epochs(net, 3), 0);
	ck_assert_uint_eq(latest_of(net, 0), before);
	round_status_get(simnet_round(net, 0), 0, &status);
	ck_assert_uint_ge(status.failed_total, failed_before + 2);
	/* Alone of three, its own vote makes no consensus: the figures say so, and that the others'
	 * votes stopped. */
	struct round_statistics figures;
	round_statistics_get(simnet_round(net, 0), 0, &figures);
	ck_assert_uint_ge(figures.failed_total[ROUND_FAILURE_CONSENSUS], 2);
	ck_assert_uint_lt(figures.members[1].vote_epoch, figures.members[0].vote_epoch - 1);
	expect_figures_match_status(net, 0);
	/* One back makes k again. */
	ck_assert_int_eq(simnet_restart(net, 1), 0);
	ck_assert_int_eq(simnet_run_epochs(net, 3), 0);
	uint64_t last = latest_of(net, 0);
	ck_assert_uint_gt(last, before);
	ck_assert_uint_eq(latest_of(net, 1), last);
	expect_same_headers(net, 0, 1, last, last);
	expect_chain(net, 0, before, last);
	expect_safe(net);
	simnet_free(net);
}
END_TEST

/* ---- votes pushed ---- */

/* The vote envelope node holds of member for epoch. */
static void vote_held(struct simnet *net, size_t node, uint64_t epoch, size_t member, struct buffer *out)
{
	buffer_reset(out);
	ck_assert_int_eq(
	    round_vote_get(simnet_round(net, node), 0, epoch, simnet_member_name(net, member), out), 0);
}

static void push_vote(struct simnet *net, size_t node, const struct buffer *envelope,
                      struct round_answer *answer)
{
	memset(answer, 0, sizeof *answer);
	round_accept_vote(simnet_round(net, node), 0, envelope->data, envelope->len, answer);
}

static void expect_answer(const struct round_answer *answer, unsigned status, enum api_error error)
{
	ck_assert_msg(answer->status == status && answer->error == error,
	              "answered %u %s (%s), expected %u %s", answer->status, api_error_code(answer->error),
	              answer->detail, status, api_error_code(error));
}

/* The evidence node serves from epoch on (docs/protocol.md, "Evidence"). */
static void evidence_of(struct simnet *net, size_t node, uint64_t epoch, struct buffer *out)
{
	buffer_reset(out);
	ck_assert_int_eq(round_evidence_get(simnet_round(net, node), 0, epoch, 1 << 20, out), 0);
	ck_assert_int_eq(buffer_append(out, (const uint8_t *)"", 1), 0); /* as a string */
}

START_TEST(test_a_vote_pushed_twice_is_kept_once)
{
	struct simnet *net = start_set(304);
	uint64_t e = simnet_epoch_now(net) + 1;
	/* Nodes 0 and 1 cannot reach each other: 1 has no vote of 0's but the one pushed here. */
	simnet_cut(net, 0, 1, 1);
	simnet_cut(net, 1, 0, 1);
	ck_assert_int_eq(simnet_run_until(net, simnet_vote_at_ms(net, e) + 2000), 0);
	struct buffer vote, held, evidence;
	buffer_init(&vote);
	buffer_init(&held);
	buffer_init(&evidence);
	vote_held(net, 0, e, 0, &vote);
	ck_assert_int_eq(round_vote_get(simnet_round(net, 1), 0, e, simnet_member_name(net, 0), &held),
	                 DIRAUTH_ERR_NOT_FOUND);
	struct round_answer answer;
	push_vote(net, 1, &vote, &answer);
	expect_answer(&answer, 202, API_ERROR_NONE);
	push_vote(net, 1, &vote, &answer);
	expect_answer(&answer, 200, API_ERROR_NONE);
	vote_held(net, 1, e, 0, &held);
	ck_assert_uint_eq(held.len, vote.len);
	ck_assert_int_eq(memcmp(held.data, vote.data, vote.len), 0);
	evidence_of(net, 1, e, &evidence);
	ck_assert_str_eq((const char *)evidence.data, "dirauth evidence v1\n");
	simnet_heal(net);
	ck_assert_int_eq(simnet_run_epochs(net, 2), 0);
	expect_safe(net);
	buffer_free(&vote);
	buffer_free(&held);
	buffer_free(&evidence);
	simnet_free(net);
}
END_TEST

START_TEST(test_a_second_different_vote_is_refused_and_kept_as_evidence)
{
	struct simnet *net = start_set(305);
	uint64_t e = simnet_epoch_now(net) + 1;
	/* A second process of member 0 (a restored machine started beside the original, with a
	 * ledger of its own) that lacks a registration the original takes after the copy, so that
	 * its vote of e is another; its own calls are cut, so that only the test pushes its vote. */
	size_t clone = 0;
	ck_assert_int_eq(simnet_clone(net, 0, &clone), 0);
	for (size_t to = 0; to < MEMBERS; to++)
		simnet_cut(net, clone, to, 1);
	ck_assert_uint_eq(simnet_register(net, 0, 1), 1);
	ck_assert_int_eq(simnet_run_until(net, simnet_vote_at_ms(net, e) + 2000), 0);
	struct buffer original, second, held, evidence;
	buffer_init(&original);
	buffer_init(&second);
	buffer_init(&held);
	buffer_init(&evidence);
	vote_held(net, 0, e, 0, &original);
	vote_held(net, clone, e, 0, &second);
	ck_assert(original.len != second.len || memcmp(original.data, second.data, original.len) != 0);
	vote_held(net, 1, e, 0, &held); /* the original's, pushed by it */
	struct round_answer answer;
	push_vote(net, 1, &second, &answer);
	expect_answer(&answer, api_error_status(API_ERROR_CONFLICTING_VOTE), API_ERROR_CONFLICTING_VOTE);
	/* The vote held is still the first; both are evidence, in the order received. */
	struct buffer after;
	buffer_init(&after);
	vote_held(net, 1, e, 0, &after);
	ck_assert_uint_eq(after.len, held.len);
	ck_assert_int_eq(memcmp(after.data, held.data, held.len), 0);
	evidence_of(net, 1, e, &evidence);
	char line[256];
	snprintf(line, sizeof line, "dirauth evidence v1\nevidence %llu %s conflicting-votes %zu %zu\n",
	         (unsigned long long)e, simnet_member_name(net, 0), held.len, second.len);
	ck_assert_msg(strncmp((const char *)evidence.data, line, strlen(line)) == 0, "evidence: %.200s",
	              (const char *)evidence.data);
	ck_assert_int_eq(memcmp(evidence.data + strlen(line), held.data, held.len), 0);
	ck_assert_int_eq(memcmp(evidence.data + strlen(line) + held.len, second.data, second.len), 0);
	/* Pushed again, it is refused again, and the evidence is kept once. */
	push_vote(net, 1, &second, &answer);
	expect_answer(&answer, api_error_status(API_ERROR_CONFLICTING_VOTE), API_ERROR_CONFLICTING_VOTE);
	uint64_t all;
	ck_assert_uint_eq(refusals_of(net, 1, 0, ROUND_REFUSAL_CONFLICTING, &all), 2);
	ck_assert_uint_eq(all, 2);
	struct buffer again;
	buffer_init(&again);
	evidence_of(net, 1, e, &again);
	ck_assert_uint_eq(again.len, evidence.len);
	ck_assert_int_eq(simnet_crash(net, clone), 0);
	buffer_free(&original);
	buffer_free(&second);
	buffer_free(&held);
	buffer_free(&after);
	buffer_free(&evidence);
	buffer_free(&again);
	simnet_free(net);
}
END_TEST

/* envelope's vote made another's: with key, its authority renamed to key's name and signed by key
 * (a vote of whoever holds key); with key NULL, its own signature with one bit flipped. */
static void vote_forged(const struct buffer *envelope, const struct test_key *key, struct buffer *out)
{
	struct vote_envelope parts;
	struct note *note = NULL;
	struct vote vote;
	struct buffer text;
	buffer_init(&text);
	buffer_reset(out);
	ck_assert_int_eq(vote_envelope_parse(envelope->data, envelope->len, SIZE_MAX, &parts), 0);
	ck_assert_int_eq(note_parse(parts.note, parts.note_len, &note), 0);
	struct buffer signed_note;
	buffer_init(&signed_note);
	if (key) {
		ck_assert_int_eq(vote_parse(note->text, note->text_len, &vote), 0);
		snprintf(vote.authority, sizeof vote.authority, "%s", key->verifier.name);
		ck_assert_int_eq(vote_encode(&vote, &text), 0);
		test_key_sign_note(key, 1, text.data, text.len, &signed_note);
	} else {
		note->signatures[0].signature[7] ^= 0x20;
		ck_assert_int_eq(note_format(note->text, note->text_len, note->signatures,
		                             note->signature_count, &signed_note),
		                 0);
	}
	ck_assert_int_eq(
	    vote_envelope_encode(signed_note.data, signed_note.len, parts.body, parts.body_len, out), 0);
	note_free(note);
	buffer_free(&text);
	buffer_free(&signed_note);
}

START_TEST(test_votes_refused)
{
	struct simnet *net = start_set(306);
	uint64_t e = simnet_epoch_now(net) + 1;
	ck_assert_int_eq(simnet_run_until(net, simnet_vote_at_ms(net, e) + 2000), 0);
	struct buffer vote, previous, forged, held, evidence;
	buffer_init(&vote);
	buffer_init(&previous);
	buffer_init(&forged);
	buffer_init(&held);
	buffer_init(&evidence);
	vote_held(net, 0, e, 0, &vote);
	vote_held(net, 0, e - 1, 0, &previous);
	struct round_answer answer;
	/* A vote by a key of no member, naming it. */
	struct test_key outsider;
	test_key_load(TEST_KEY_AUTHORITY_1, &outsider);
	vote_forged(&vote, &outsider, &forged);
	push_vote(net, 1, &forged, &answer);
	expect_answer(&answer, api_error_status(API_ERROR_UNKNOWN_AUTHORITY), API_ERROR_UNKNOWN_AUTHORITY);
	test_key_free(&outsider);
	/* Member 0's vote with its signature broken. */
	vote_forged(&vote, NULL, &forged);
	push_vote(net, 1, &forged, &answer);
	expect_answer(&answer, api_error_status(API_ERROR_BAD_SIGNATURE), API_ERROR_BAD_SIGNATURE);
	/* Nothing of them was kept: 1 holds 0's own vote, and no evidence. */
	vote_held(net, 1, e, 0, &held);
	ck_assert_uint_eq(held.len, vote.len);
	ck_assert_int_eq(memcmp(held.data, vote.data, vote.len), 0);
	evidence_of(net, 1, e - 1, &evidence);
	ck_assert_str_eq((const char *)evidence.data, "dirauth evidence v1\n");
	/* After the vote deadline and the clock skew, while the epoch's round still runs: its vote is
	 * too late, and the vote of the epoch before is of a round over. */
	ck_assert_int_eq(simnet_run_until(net, simnet_vote_at_ms(net, e) + 15000), 0);
	push_vote(net, 1, &vote, &answer);
	expect_answer(&answer, api_error_status(API_ERROR_TOO_LATE), API_ERROR_TOO_LATE);
	push_vote(net, 1, &previous, &answer);
	expect_answer(&answer, api_error_status(API_ERROR_WRONG_EPOCH), API_ERROR_WRONG_EPOCH);
	/* The metrics of 1 count each refusal under member 0's name and its reason; the outsider's
	 * vote names no member and counts nowhere. */
	uint64_t all;
	ck_assert_uint_eq(refusals_of(net, 1, 0, ROUND_REFUSAL_BAD_SIGNATURE, &all), 1);
	ck_assert_uint_eq(refusals_of(net, 1, 0, ROUND_REFUSAL_TOO_LATE, &all), 1);
	ck_assert_uint_eq(refusals_of(net, 1, 0, ROUND_REFUSAL_WRONG_EPOCH, &all), 1);
	ck_assert_uint_eq(all, 3);
	ck_assert_int_eq(simnet_run_epochs(net, 1), 0);
	ck_assert_uint_eq(simnet_violation_count(net), 0);
	buffer_free(&vote);
	buffer_free(&previous);
	buffer_free(&forged);
	buffer_free(&held);
	buffer_free(&evidence);
	simnet_free(net);
}
END_TEST

/* Member's signature line alone on the header text of signed (the note GET signatures answers),
 * one bit of it flipped when broken: what member pushes to POST signatures, or a forgery of it. */
static void signature_of(const struct buffer *signed_note, const char *member, int broken, struct buffer *out)
{
	struct note *note = NULL;
	buffer_reset(out);
	ck_assert_int_eq(note_parse(signed_note->data, signed_note->len, &note), 0);
	size_t s = 0;
	while (s < note->signature_count && strcmp(note->signatures[s].name, member) != 0)
		s++;
	ck_assert_uint_lt(s, note->signature_count);
	if (broken)
		note->signatures[s].signature[7] ^= 0x20;
	ck_assert_int_eq(note_format(note->text, note->text_len, &note->signatures[s], 1, out), 0);
	note_free(note);
}

START_TEST(test_a_signature_that_does_not_verify_is_refused)
{
	struct simnet *net = start_set(308);
	uint64_t e = simnet_epoch_now(net) + 1;
	/* Within e's signature window, once every header is computed and signed. */
	ck_assert_int_eq(simnet_run_until(net, simnet_vote_at_ms(net, e) + 15000), 0);
	struct buffer signatures, pushed;
	buffer_init(&signatures);
	buffer_init(&pushed);
	ck_assert_int_eq(round_signatures_get(simnet_round(net, 0), 0, e, &signatures), 0);
	struct round_answer answer;
	signature_of(&signatures, simnet_member_name(net, 0), 1, &pushed);
	round_accept_signature(simnet_round(net, 1), 0, pushed.data, pushed.len, &answer);
	expect_answer(&answer, api_error_status(API_ERROR_BAD_SIGNATURE), API_ERROR_BAD_SIGNATURE);
	/* The same line unbroken is the one 1 holds already. */
	signature_of(&signatures, simnet_member_name(net, 0), 0, &pushed);
	round_accept_signature(simnet_round(net, 1), 0, pushed.data, pushed.len, &answer);
	expect_answer(&answer, 200, API_ERROR_NONE);
	uint64_t all;
	ck_assert_uint_eq(refusals_of(net, 1, 0, ROUND_REFUSAL_BAD_SIGNATURE, &all), 1);
	ck_assert_uint_eq(all, 1);
	ck_assert_int_eq(simnet_run_epochs(net, 1), 0);
	ck_assert_int_eq(simnet_signed_by(net, e, 0), 1);
	ck_assert_uint_eq(simnet_violation_count(net), 0);
	buffer_free(&signatures);
	buffer_free(&pushed);
	simnet_free(net);
}
END_TEST

/* ---- the window ---- */

START_TEST(test_a_peer_slower_than_the_window_fails_the_epoch_and_the_next_publishes)
{
	struct simnet *net = start_set(307);
	uint64_t e = simnet_epoch_now(net) + 1;
	/* With 1 down, k = 2 needs 2, whose every exchange takes longer than the whole vote and
	 * signature windows (6 + 18 s of a 60-s epoch). */
	ck_assert_int_eq(simnet_crash(net, 1), 0);
	uint64_t before = latest_of(net, 0);
	simnet_set_slow(net, 2, 30000);
	ck_assert_int_eq(simnet_run_until(net, simnet_epoch_start_ms(net, e) + 5000), 0);
	ck_assert_uint_eq(latest_of(net, 0), before);
	struct round_status status;
	round_status_get(simnet_round(net, 0), 0, &status);
	ck_assert_uint_eq(status.epoch, e);
	ck_assert_int_eq(status.failed, 1);
	ck_assert_int_eq(status.published, 0);
	expect_figures_match_status(net, 0);
	/* Back to speed: the next epochs publish, at 0 and at 2 alike. */
	simnet_set_slow(net, 2, 0);
	ck_assert_int_eq(simnet_run_epochs(net, 3), 0);
	uint64_t last = latest_of(net, 0);
	ck_assert_uint_gt(last, e);
	ck_assert_uint_eq(latest_of(net, 2), last);
	expect_same_headers(net, 0, 2, last, last);
	expect_safe(net);
	simnet_free(net);
}
END_TEST

static Suite *round_suite(void)
{
	Suite *suite = suite_create("round");
	TCase *publication = tcase_create("publication");
	TCase *threshold = tcase_create("threshold");
	TCase *votes = tcase_create("votes");
	TCase *window = tcase_create("window");
	tcase_set_timeout(publication, 120);
	tcase_set_timeout(threshold, 120);
	tcase_set_timeout(votes, 120);
	tcase_set_timeout(window, 120);
	tcase_add_test(publication, test_all_publish_the_same_header);
	tcase_add_test(threshold, test_one_down_the_others_publish_and_it_catches_up);
	tcase_add_test(threshold, test_two_down_nothing_published_until_one_returns);
	tcase_add_test(votes, test_a_vote_pushed_twice_is_kept_once);
	tcase_add_test(votes, test_a_second_different_vote_is_refused_and_kept_as_evidence);
	tcase_add_test(votes, test_votes_refused);
	tcase_add_test(votes, test_a_signature_that_does_not_verify_is_refused);
	tcase_add_test(window, test_a_peer_slower_than_the_window_fails_the_epoch_and_the_next_publishes);
	suite_add_tcase(suite, publication);
	suite_add_tcase(suite, threshold);
	suite_add_tcase(suite, votes);
	suite_add_tcase(suite, window);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(round_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
