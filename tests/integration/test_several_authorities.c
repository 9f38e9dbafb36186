/*
 * test_several_authorities.c: the failure behaviour of several authorities (issue 9, "Failure
 * behaviour"), with real processes on loopback.
 *
 * Every test starts a cluster (tests/harness/cluster.h): five authorities, k = 3, each its own
 * dirauthd and dirauth-signer, LMDB and file clock, every peer link through its own fault proxy.
 * Epochs are 6 s long (cut-off 4 s before the start, 2 s for votes, 2 s for signatures, clock
 * skew bound 2 s) and the test moves the clocks one second per 250 ms of real time, so an epoch
 * takes 1.5 s: the twenty epochs of the first test take about 35 s, the whole file about 2
 * minutes (DIRAUTH_CLUSTER_MS_PER_SECOND slows the pace, e.g. for sanitizer builds).
 *
 *   - 5 authorities, k = 3, 20 epochs: every epoch publishes, all 5 serve byte-identical header
 *     text and body, chained by previous, and a mirror verifies the last with the trust bundle;
 *   - any 2 killed with SIGKILL: every epoch still publishes; restarted, they catch up (serve the
 *     epochs they missed, the same bytes) and sign again;
 *   - 3 killed: nothing is published; the last snapshot is served until its valid-until, and
 *     then `dirauthctl fetch` reports it stale with its own exit status;
 *   - partition 2 + 3: only the side of 3 publishes; after healing the 2 catch up; and no two
 *     different headers for one epoch ever carry k valid signatures (checked after every epoch
 *     of every test, over every header and signature set any authority serves);
 *   - a member that votes twice, or signs two headers, for one epoch: the second is refused and
 *     both are kept as evidence and served; a vote declared larger than any vote is refused;
 *   - votes that are late, malformed, for the wrong epoch, signed by an uncertified key or by
 *     no member, refused each with its status and code, change nothing and block no epoch, and
 *     neither do a peer answering with 10 MB of garbage nor one that never answers;
 *   - a minority of 2 voting for invented registrations (unsigned, signed by an unenrolled key, a
 *     forged sequence) cannot get them into the snapshot nor into the others' stores, and a
 *     minority withholding a registration cannot keep it out when 3 honest authorities hold it;
 *   - an authority whose clock is skewed within the bound takes part; one beyond it is refused
 *     and says why in its log.
 *
 * A member that behaves as no honest authority would (the minority, a member sending bad
 * votes) is played by the test: its processes are killed and every link to it is sent to a
 * stub HTTP server (tests/harness/stub_http.h) that serves its certificates, the votes the test
 * forged with its signing key, and the notes those votes list.
 */
#include "test_keys.h"
#include "test_support.h"

#include "consensus/consensus.h"
#include "crypto/crypto.h"
#include "schema/encoding.h"
#include "base/error.h"
#include "schema/note.h"
#include "schema/registration.h"
#include "schema/snapshot.h"
#include "schema/vote.h"
#include "schema/vote_body.h"
#include "schema/vote_envelope.h"
#include "tests/harness/cluster.h"
#include "tests/harness/stub_http.h"

#include <check.h>
#include <unistd.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <curl/curl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N                5
#define K                3
#define SKEW             2 /* bounds.clock_skew_seconds of every authority and signer */
#define LENGTH           6 /* seconds per epoch */
#define PREPARE          4 /* the cut-off, 4 s before the epoch's start */
#define PHASE            2 /* seconds for votes, and for signatures */
#define ALL              ((1u << N) - 1)
/* How long an authority may take, in real time, to serve an epoch once its start is reached. */
#define PUBLISH_WAIT_MS  8000
/* How long to wait, in real time, before concluding that an epoch was not published. */
#define NOTHING_WAIT_MS  1500
/* dirauthctl fetch's exit status for a snapshot that is past its valid-until (docs/dirauthctl.md:
 * try again later, since the authorities have published nothing newer). */
#define FETCH_EXIT_STALE 75
/* Words an authority beyond the skew bound logs about why its votes are refused. */
static const char *const skew_log_words[] = {"skew", "wrong_epoch", "too_late"};

static struct cluster *start_cluster(void)
{
	struct cluster_options options = {.authorities = N,
	                                  .threshold = K,
	                                  .epoch_length = LENGTH,
	                                  .prepare_seconds = PREPARE,
	                                  .vote_seconds = PHASE,
	                                  .signature_seconds = PHASE,
	                                  .clock_skew_seconds = SKEW,
	                                  .ms_per_second = 250};
	return cluster_start(&options);
}

/* --- what the authorities serve ------------------------------------------------------------- */

/* The text (without signature lines) of a signed note. */
static void note_text(const struct buffer *note, struct buffer *text)
{
	struct note *parsed = NULL;
	ck_assert_int_eq(note_parse(note->data, note->len, &parsed), 0);
	buffer_init(text);
	ck_assert(buffer_append(text, parsed->text, parsed->text_len) == 0);
	note_free(parsed);
}

static int buffer_equal(const struct buffer *a, const struct buffer *b)
{
	return a->len == b->len && memcmp(a->data, b->data, a->len) == 0;
}

/* After an epoch: among every header note any authority serves for it (the published snapshot,
 * and the signatures it collected), those with k valid signatures by members are one text. */
static void check_one_header(struct cluster *c, uint64_t epoch)
{
	struct buffer agreed;
	buffer_init(&agreed);
	int have = 0;
	for (size_t i = 0; i < N; i++) {
		if (!cluster_running(c, i))
			continue;
		char paths[2][96];
		snprintf(paths[0], sizeof paths[0], "/v1/%s/snapshots/%llu", CLUSTER_NAMESPACE,
		         (unsigned long long)epoch);
		snprintf(paths[1], sizeof paths[1], "/v1/%s/signatures/%llu", CLUSTER_NAMESPACE,
		         (unsigned long long)epoch);
		for (size_t p = 0; p < 2; p++) {
			struct cluster_response response;
			if (cluster_get(c, i, paths[p], &response) != 200) {
				cluster_response_free(&response);
				continue;
			}
			int signers = cluster_signers(c, response.body.data, response.body.len, NULL);
			ck_assert_msg(signers >= 0, "%s serves %s with a bad signature by a member",
			              cluster_name(c, i), paths[p]);
			if ((size_t)signers >= K) {
				struct buffer text;
				note_text(&response.body, &text);
				if (!have) {
					agreed = text;
					have = 1;
				} else {
					ck_assert_msg(
					    buffer_equal(&agreed, &text),
					    "two different headers for epoch %llu carry %d valid signatures "
					    "(%s serves %s)",
					    (unsigned long long)epoch, signers, cluster_name(c, i), paths[p]);
					buffer_free(&text);
				}
			}
			cluster_response_free(&response);
		}
	}
	buffer_free(&agreed);
}

/* A published epoch as one authority serves it. */
struct published {
	struct buffer note; /* the signed header note */
	struct buffer text; /* its text */
	struct buffer body; /* the body, identity encoding */
	struct snapshot_header header;
	unsigned signers; /* CLUSTER_BIT mask of members whose signature verifies */
};

static void published_free(struct published *p)
{
	buffer_free(&p->note);
	buffer_free(&p->text);
	buffer_free(&p->body);
}

/* Waits until each authority of members serves epoch as its latest, and checks that they all
 * serve the same header text and body, that the body matches the header and that at least k
 * members signed. *out (may be NULL) gets what the first of them serves. */
static void expect_published(struct cluster *c, uint64_t epoch, unsigned members, struct published *out)
{
	struct published first;
	int have = 0;
	for (size_t i = 0; i < N; i++) {
		if (!(members & CLUSTER_BIT(i)))
			continue;
		struct snapshot_header latest;
		ck_assert_msg(cluster_wait_epoch(c, i, epoch, PUBLISH_WAIT_MS, &latest, NULL) == 0,
		              "%s did not publish epoch %llu; see %s", cluster_name(c, i),
		              (unsigned long long)epoch, cluster_log_path(c, i));
		ck_assert_msg(latest.epoch == epoch, "%s serves epoch %llu, not %llu", cluster_name(c, i),
		              (unsigned long long)latest.epoch, (unsigned long long)epoch);
		struct published p;
		ck_assert_int_eq(cluster_snapshot(c, i, epoch, &p.note, &p.body), 0);
		note_text(&p.note, &p.text);
		ck_assert_int_eq(snapshot_header_parse(p.text.data, p.text.len, &p.header), 0);
		ck_assert_int_eq(snapshot_body_verify(&p.header, p.body.data, p.body.len, 1000), 0);
		int signers = cluster_signers(c, p.note.data, p.note.len, &p.signers);
		ck_assert_msg(signers >= K, "%s serves epoch %llu with %d member signatures",
		              cluster_name(c, i), (unsigned long long)epoch, signers);
		if (!have) {
			first = p;
			have = 1;
			continue;
		}
		ck_assert_msg(buffer_equal(&first.text, &p.text),
		              "%s serves another header text for epoch %llu", cluster_name(c, i),
		              (unsigned long long)epoch);
		ck_assert_msg(buffer_equal(&first.body, &p.body), "%s serves another body for epoch %llu",
		              cluster_name(c, i), (unsigned long long)epoch);
		published_free(&p);
	}
	ck_assert(have);
	check_one_header(c, epoch);
	if (out)
		*out = first;
	else
		published_free(&first);
}

/* No authority of members serves a snapshot of epoch, nor any newer one. */
static void expect_nothing(struct cluster *c, uint64_t epoch, unsigned members)
{
	test_sleep_ms(NOTHING_WAIT_MS);
	for (size_t i = 0; i < N; i++) {
		if (!(members & CLUSTER_BIT(i)))
			continue;
		ck_assert_msg(cluster_snapshot(c, i, epoch, NULL, NULL) == DIRAUTH_ERR_NOT_FOUND,
		              "%s published epoch %llu", cluster_name(c, i), (unsigned long long)epoch);
		struct snapshot_header latest;
		if (cluster_latest(c, i, &latest, NULL) == 0)
			ck_assert_uint_lt(latest.epoch, epoch);
	}
	check_one_header(c, epoch);
}

static int body_holds(const struct buffer *body, const struct buffer *note)
{
	struct snapshot_body *parsed = NULL;
	ck_assert_int_eq(snapshot_body_parse(body->data, body->len, 1000, &parsed), 0);
	int found = 0;
	for (size_t r = 0; r < parsed->record_count && !found; r++)
		found = parsed->records[r].note_len == note->len &&
		        memcmp(parsed->records[r].note, note->data, note->len) == 0;
	snapshot_body_free(parsed);
	return found;
}

static size_t body_count(const struct buffer *body)
{
	struct snapshot_body *parsed = NULL;
	ck_assert_int_eq(snapshot_body_parse(body->data, body->len, 1000, &parsed), 0);
	size_t count = parsed->record_count;
	snapshot_body_free(parsed);
	return count;
}

/* Registers note with every authority of members, each of which must accept it. */
static void register_with(struct cluster *c, unsigned members, const struct buffer *note)
{
	long statuses[N];
	size_t expected = 0;
	for (size_t i = 0; i < N; i++)
		expected += (members & CLUSTER_BIT(i)) != 0;
	size_t accepted = cluster_register(c, members, note, statuses);
	ck_assert_msg(accepted == expected, "%zu of %zu accepted; statuses %ld %ld %ld %ld %ld (%s); see %s",
	              accepted, expected, statuses[0], statuses[1], statuses[2], statuses[3], statuses[4],
	              cluster_last_refusal(c), cluster_log_path(c, 0));
}

/* Runs epoch and expects members to publish it; returns what they serve in *out (may be NULL). */
static void run_published(struct cluster *c, uint64_t epoch, unsigned members, struct published *out)
{
	cluster_run_epoch(c, epoch);
	expect_published(c, epoch, members, out);
	cluster_check_alive(c);
}

/* --- forging what a member would send ------------------------------------------------------- */

struct vote_record {
	uint8_t service_id[SERVICE_ID_SIZE];
	uint64_t sequence;
	const struct buffer *note;
};

static int record_order(const void *a, const void *b)
{
	return memcmp(((const struct vote_record *)a)->service_id,
	              ((const struct vote_record *)b)->service_id, SERVICE_ID_SIZE);
}

/* The envelope of a vote for epoch by authority (a key name), signed by key, holding notes
 * (signed registration notes, valid or not: each is listed with the service id and sequence its
 * text names), building on previous_note (the latest published header note; NULL: none). */
static void forge_vote(const struct signer_key *key, const char *authority, uint64_t epoch,
                       const struct buffer *const *notes, size_t count, const struct buffer *previous_note,
                       struct buffer *envelope)
{
	struct vote_record records[16];
	ck_assert_uint_le(count, 16);
	for (size_t i = 0; i < count; i++) {
		struct note *parsed = NULL;
		ck_assert_int_eq(note_parse(notes[i]->data, notes[i]->len, &parsed), 0);
		struct registration r;
		ck_assert_int_eq(registration_parse(parsed->text, parsed->text_len, &r), 0);
		memcpy(records[i].service_id, r.service_id, SERVICE_ID_SIZE);
		records[i].sequence = r.sequence;
		records[i].note = notes[i];
		registration_clear(&r);
		note_free(parsed);
	}
	qsort(records, count, sizeof records[0], record_order);

	struct vote_body_record body_records[16];
	struct snapshot_record snapshot_records[16];
	for (size_t i = 0; i < count; i++) {
		memcpy(body_records[i].service_id, records[i].service_id, SERVICE_ID_SIZE);
		body_records[i].sequence = records[i].sequence;
		ck_assert(crypto_sha256(records[i].note->data, records[i].note->len,
		                        body_records[i].registration_sha256) == 0);
		memcpy(snapshot_records[i].service_id, records[i].service_id, SERVICE_ID_SIZE);
		snapshot_records[i].note = records[i].note->data;
		snapshot_records[i].note_len = records[i].note->len;
	}
	struct vote_body body = {.epoch = epoch, .record_count = count, .records = body_records};
	snprintf(body.namespace_name, sizeof body.namespace_name, "%s", CLUSTER_NAMESPACE);
	snprintf(body.authority, sizeof body.authority, "%s", authority);
	struct buffer body_bytes;
	buffer_init(&body_bytes);
	ck_assert_int_eq(vote_body_encode(&body, &body_bytes), 0);

	struct vote vote;
	memset(&vote, 0, sizeof vote);
	snprintf(vote.namespace_name, sizeof vote.namespace_name, "%s", CLUSTER_NAMESPACE);
	snprintf(vote.origin, sizeof vote.origin, "%s", CLUSTER_ORIGIN);
	snprintf(vote.authority, sizeof vote.authority, "%s", authority);
	vote.epoch = epoch;
	vote.record_count = count;
	ck_assert_int_eq(snapshot_records_root(snapshot_records, count, vote.records_root), 0);
	ck_assert(crypto_sha256(body_bytes.data, body_bytes.len, vote.body_sha256) == 0);
	if (previous_note) {
		struct buffer text;
		struct snapshot_header previous;
		note_text(previous_note, &text);
		ck_assert_int_eq(snapshot_header_parse(text.data, text.len, &previous), 0);
		vote.previous_epoch = previous.epoch;
		ck_assert_int_eq(snapshot_header_digest(text.data, text.len, vote.previous), 0);
		buffer_free(&text);
	}
	vote.method_count = 1;
	vote.methods[0] = 1;
	struct buffer text, signed_vote;
	buffer_init(&text);
	buffer_init(&signed_vote);
	ck_assert_int_eq(vote_encode(&vote, &text), 0);
	struct note_signature signature;
	ck_assert_int_eq(signer_key_sign(key, text.data, text.len, &signature), 0);
	ck_assert_int_eq(note_format(text.data, text.len, &signature, 1, &signed_vote), 0);
	buffer_init(envelope);
	ck_assert_int_eq(vote_envelope_encode(signed_vote.data, signed_vote.len, body_bytes.data,
	                                      body_bytes.len, envelope),
	                 0);
	buffer_free(&text);
	buffer_free(&signed_vote);
	buffer_free(&body_bytes);

	/* What was forged is a well-formed vote whose body is the one it commits to, so that a
	 * refusal can only be about what the vote says or who signed it. */
	struct vote_envelope parts;
	ck_assert_int_eq(vote_envelope_parse(envelope->data, envelope->len, 1 << 20, &parts), 0);
	struct note *parsed = NULL;
	ck_assert_int_eq(note_parse(parts.note, parts.note_len, &parsed), 0);
	struct vote reparsed;
	ck_assert_int_eq(vote_parse(parsed->text, parsed->text_len, &reparsed), 0);
	struct vote_body *loaded = NULL;
	ck_assert_int_eq(consensus_vote_body_load(&reparsed, parts.body, parts.body_len, 1000, &loaded), 0);
	vote_body_free(loaded);
	note_free(parsed);
}

/* Posts a vote envelope to authority i; with status > 0 checks the answer's status and error
 * code (docs/protocol.md, "Votes"). Returns the status. */
static long post_vote(struct cluster *c, size_t i, const struct buffer *envelope, long status,
                      const char *code)
{
	char path[64];
	snprintf(path, sizeof path, "/v1/%s/votes", CLUSTER_NAMESPACE);
	struct cluster_response response;
	long got = cluster_post(c, i, path, envelope->data, envelope->len, &response);
	if (status > 0) {
		ck_assert_msg(got == status, "%s answered a vote with %ld, not %ld: %.*s", cluster_name(c, i),
		              got, status, (int)response.body.len,
		              response.body.data ? (const char *)response.body.data : "");
		if (code) {
			char quoted[64];
			snprintf(quoted, sizeof quoted, "\"%s\"", code);
			ck_assert_msg(response.body.data && strstr((const char *)response.body.data, quoted),
			              "%s answered a vote without %s: %.*s", cluster_name(c, i), quoted,
			              (int)response.body.len,
			              response.body.data ? (const char *)response.body.data : "");
		}
	}
	cluster_response_free(&response);
	return got;
}

/* The vote authority i holds of member for epoch (GET /v1/<ns>/votes/<epoch>/<member>): the
 * status, with the envelope in *envelope (may be NULL) when 200. */
static long held_vote(struct cluster *c, size_t i, uint64_t epoch, const char *member_name,
                      struct buffer *envelope)
{
	char path[256];
	snprintf(path, sizeof path, "/v1/%s/votes/%llu/%s", CLUSTER_NAMESPACE, (unsigned long long)epoch,
	         member_name);
	struct cluster_response response;
	long status = cluster_get(c, i, path, &response);
	if (envelope && status == 200)
		*envelope = response.body;
	else
		cluster_response_free(&response);
	return status;
}

/* A stand-in for member i: its processes are killed and every link to it reaches this server,
 * which serves i's certificates and takes what peers push (202) without acting on it. */
static struct stub_http *impersonate(struct cluster *c, size_t i)
{
	struct stub_http *stub = NULL;
	ck_assert_int_eq(stub_http_start(0, &stub), 0);
	const struct buffer *bundle = cluster_certificate_bundle(c, i);
	char path[64];
	ck_assert_int_eq(
	    stub_http_route(stub, "GET", "/v1/certificates", 200, NULL, bundle->data, bundle->len), 0);
	snprintf(path, sizeof path, "/v1/%s/votes", CLUSTER_NAMESPACE);
	ck_assert_int_eq(
	    stub_http_route(stub, "POST", path, 202, "application/json", (const uint8_t *)"{}", 2), 0);
	snprintf(path, sizeof path, "/v1/%s/signatures", CLUSTER_NAMESPACE);
	ck_assert_int_eq(
	    stub_http_route(stub, "POST", path, 202, "application/json", (const uint8_t *)"{}", 2), 0);
	cluster_impersonate(c, i, stub_http_port(stub));
	return stub;
}

/* The stand-in serves envelope as its vote for epoch, and each note at its registration path. */
static void stub_serve_vote(struct stub_http *stub, const char *member_name, uint64_t epoch,
                            const struct buffer *envelope, const struct buffer *const *notes, size_t count)
{
	char path[256];
	snprintf(path, sizeof path, "/v1/%s/votes/%llu/%s", CLUSTER_NAMESPACE, (unsigned long long)epoch,
	         member_name);
	ck_assert_int_eq(stub_http_route(stub, "GET", path, 200, NULL, envelope->data, envelope->len), 0);
	for (size_t i = 0; i < count; i++) {
		struct note *parsed = NULL;
		struct registration r;
		ck_assert_int_eq(note_parse(notes[i]->data, notes[i]->len, &parsed), 0);
		ck_assert_int_eq(registration_parse(parsed->text, parsed->text_len, &r), 0);
		char hex[2 * SERVICE_ID_SIZE + 1];
		hex_encode(r.service_id, SERVICE_ID_SIZE, hex);
		snprintf(path, sizeof path, "/v1/%s/registrations/%s/%llu", CLUSTER_NAMESPACE, hex,
		         (unsigned long long)r.sequence);
		ck_assert_int_eq(stub_http_route(stub, "GET", path, 200, NULL, notes[i]->data, notes[i]->len),
		                 0);
		registration_clear(&r);
		note_free(parsed);
	}
}

/* --- the tests -------------------------------------------------------------------------------- */

START_TEST(test_five_authorities_twenty_epochs_byte_identical)
{
	struct cluster *c = start_cluster();
	struct buffer notes[6];
	for (unsigned s = 0; s < 4; s++) {
		cluster_registration(c, cluster_provider_key(c, s % 2), "service", s, 1, &notes[s]);
		register_with(c, ALL, &notes[s]);
	}
	uint64_t first = cluster_next_epoch(c), change = first + 8;
	struct buffer previous_text;
	buffer_init(&previous_text);
	for (uint64_t epoch = first; epoch < first + 20; epoch++) {
		if (epoch == change) {
			/* New content half way, committed before the epoch's cut-off: a newer version of
			 * one service and a new service. */
			cluster_registration(c, cluster_provider_key(c, 0), "service", 0, 2, &notes[4]);
			cluster_registration(c, cluster_provider_key(c, 1), "service", 4, 1, &notes[5]);
			register_with(c, ALL, &notes[4]);
			register_with(c, ALL, &notes[5]);
		}
		struct published p;
		run_published(c, epoch, ALL, &p);
		ck_assert_uint_eq(p.header.epoch, epoch);
		if (epoch > first) {
			/* Each header builds on the one before it. */
			uint8_t digest[32];
			ck_assert_int_eq(
			    snapshot_header_digest(previous_text.data, previous_text.len, digest), 0);
			ck_assert_mem_eq(p.header.previous, digest, 32);
		}
		if (epoch < change) {
			ck_assert_uint_eq(body_count(&p.body), 4);
			for (unsigned s = 0; s < 4; s++)
				ck_assert(body_holds(&p.body, &notes[s]));
		} else {
			ck_assert_uint_eq(body_count(&p.body), 5);
			ck_assert(body_holds(&p.body, &notes[4]) && !body_holds(&p.body, &notes[0]));
			ck_assert(body_holds(&p.body, &notes[5]));
		}
		buffer_free(&previous_text);
		previous_text = p.text; /* kept for the next epoch's previous */
		buffer_init(&p.text);
		published_free(&p);
	}
	buffer_free(&previous_text);
	/* A mirror pinning the five identity keys and k = 3 verifies the last snapshot. */
	for (size_t i = 0; i < N; i++) {
		char mirror[512];
		snprintf(mirror, sizeof mirror, "%s/mirror-%zu", cluster_dir(c), i);
		struct test_outcome outcome;
		ck_assert_msg(cluster_fetch(c, i, mirror, cluster_now(c), &outcome) == 0, "fetch from %s: %s",
		              cluster_name(c, i), outcome.err);
		ck_assert(strstr(outcome.out, "verified snapshot") != NULL);
		test_outcome_free(&outcome);
	}
	for (unsigned s = 0; s < 6; s++)
		buffer_free(&notes[s]);
	cluster_free(c);
}
END_TEST

START_TEST(test_any_two_killed_still_publish_and_catch_up)
{
	struct cluster *c = start_cluster();
	struct buffer note;
	cluster_registration(c, cluster_provider_key(c, 0), "service", 1, 1, &note);
	register_with(c, ALL, &note);
	uint64_t epoch = cluster_next_epoch(c);
	run_published(c, epoch++, ALL, NULL);

	static const unsigned pairs[][2] = {{1, 3}, {0, 4}};
	for (size_t p = 0; p < 2; p++) {
		unsigned killed = CLUSTER_BIT(pairs[p][0]) | CLUSTER_BIT(pairs[p][1]);
		cluster_kill(c, pairs[p][0]);
		cluster_kill(c, pairs[p][1]);
		uint64_t missed = epoch;
		struct buffer during;
		cluster_registration(c, cluster_provider_key(c, 1), "while-down", p, 1, &during);
		register_with(c, ALL & ~killed, &during);
		struct published served[2];
		for (int e = 0; e < 2; e++) {
			run_published(c, epoch++, ALL & ~killed, &served[e]);
			ck_assert_uint_eq(served[e].signers & killed, 0);
		}
		ck_assert(body_holds(&served[1].body, &during));

		/* Back: they serve what they missed, byte for byte, and sign again. */
		cluster_restart(c, pairs[p][0]);
		cluster_restart(c, pairs[p][1]);
		int rejoined = 0;
		for (int e = 0; e < 2 && !rejoined; e++) {
			struct published after;
			cluster_run_epoch(c, epoch);
			expect_published(c, epoch++, e == 0 ? ALL & ~killed : ALL, &after);
			rejoined = (after.signers & killed) == killed &&
			           cluster_wait_epoch(c, pairs[p][0], after.header.epoch, PUBLISH_WAIT_MS,
			                              &after.header, NULL) == 0 &&
			           cluster_wait_epoch(c, pairs[p][1], after.header.epoch, PUBLISH_WAIT_MS,
			                              &after.header, NULL) == 0;
			published_free(&after);
		}
		ck_assert_msg(rejoined, "%s and %s did not catch up and sign again",
		              cluster_name(c, pairs[p][0]), cluster_name(c, pairs[p][1]));
		for (int e = 0; e < 2; e++) {
			for (unsigned k = 0; k < 2; k++) {
				struct buffer header_note, body, text;
				ck_assert_msg(cluster_snapshot(c, pairs[p][k], missed + (uint64_t)e,
				                               &header_note, &body) == 0,
				              "%s does not serve epoch %llu it missed",
				              cluster_name(c, pairs[p][k]),
				              (unsigned long long)(missed + (uint64_t)e));
				note_text(&header_note, &text);
				ck_assert(buffer_equal(&text, &served[e].text));
				ck_assert(buffer_equal(&body, &served[e].body));
				buffer_free(&header_note);
				buffer_free(&body);
				buffer_free(&text);
			}
			published_free(&served[e]);
		}
		buffer_free(&during);
	}
	buffer_free(&note);
	cluster_free(c);
}
END_TEST

START_TEST(test_three_killed_publish_nothing_and_fetch_says_stale)
{
	struct cluster *c = start_cluster();
	struct buffer note;
	cluster_registration(c, cluster_provider_key(c, 0), "service", 1, 1, &note);
	register_with(c, ALL, &note);
	uint64_t last = cluster_next_epoch(c);
	struct published p;
	run_published(c, last, ALL, &p);

	cluster_kill(c, 0);
	cluster_kill(c, 1);
	cluster_kill(c, 2);
	const unsigned survivors = CLUSTER_BIT(3) | CLUSTER_BIT(4);
	struct epoch_times times;
	cluster_epoch_times(c, last, &times);
	char mirror[512];
	snprintf(mirror, sizeof mirror, "%s/mirror", cluster_dir(c));
	for (uint64_t epoch = last + 1; cluster_now(c) < times.valid_until; epoch++) {
		cluster_run_epoch(c, epoch);
		expect_nothing(c, epoch, survivors);
		if (cluster_now(c) >= times.valid_until)
			break;
		/* Until its valid-until the last snapshot is still served, and verifies. */
		for (size_t i = 3; i < N; i++) {
			struct snapshot_header latest;
			struct buffer served;
			ck_assert_int_eq(cluster_latest(c, i, &latest, &served), 0);
			ck_assert_uint_eq(latest.epoch, last);
			buffer_free(&served);
			struct test_outcome outcome;
			ck_assert_msg(cluster_fetch(c, i, mirror, cluster_now(c), &outcome) == 0, "fetch: %s",
			              outcome.err);
			test_outcome_free(&outcome);
		}
	}
	/* Past it: still served as the latest, and fetch says it is stale, never fresh. */
	cluster_run_to(c, times.valid_until + 1);
	for (size_t i = 3; i < N; i++) {
		struct snapshot_header latest;
		ck_assert_int_eq(cluster_latest(c, i, &latest, NULL), 0);
		ck_assert_uint_eq(latest.epoch, last);
		struct test_outcome outcome;
		int status = cluster_fetch(c, i, mirror, cluster_now(c), &outcome);
		ck_assert_msg(status == FETCH_EXIT_STALE, "fetch exited %d: %s", status, outcome.err);
		ck_assert_msg(strstr(outcome.err, "stale") != NULL, "%s", outcome.err);
		test_outcome_free(&outcome);
	}
	published_free(&p);
	buffer_free(&note);
	cluster_free(c);
}
END_TEST

START_TEST(test_partition_two_three_only_the_three_publish)
{
	struct cluster *c = start_cluster();
	struct buffer note;
	cluster_registration(c, cluster_provider_key(c, 0), "service", 1, 1, &note);
	register_with(c, ALL, &note);
	uint64_t epoch = cluster_next_epoch(c);
	struct published before;
	run_published(c, epoch++, ALL, &before);

	const unsigned two = CLUSTER_BIT(0) | CLUSTER_BIT(1),
	               three = CLUSTER_BIT(2) | CLUSTER_BIT(3) | CLUSTER_BIT(4);
	cluster_partition(c, two, three, 0u);
	uint64_t split = epoch;
	struct published served[3];
	for (int e = 0; e < 3; e++) {
		run_published(c, epoch, three, &served[e]);
		ck_assert_uint_eq(served[e].signers & two, 0);
		for (size_t i = 0; i < 2; i++) {
			ck_assert_int_eq(cluster_snapshot(c, i, epoch, NULL, NULL), DIRAUTH_ERR_NOT_FOUND);
			struct snapshot_header latest;
			ck_assert_int_eq(cluster_latest(c, i, &latest, NULL), 0);
			ck_assert_uint_eq(latest.epoch, before.header.epoch);
		}
		epoch++;
	}

	/* Healed: all five publish again, and the two serve what the three published meanwhile. */
	cluster_heal(c);
	run_published(c, epoch++, three, NULL);
	run_published(c, epoch++, ALL, NULL);
	for (int e = 0; e < 3; e++) {
		for (size_t i = 0; i < 2; i++) {
			struct buffer header_note, text;
			ck_assert_int_eq(cluster_snapshot(c, i, split + (uint64_t)e, &header_note, NULL), 0);
			note_text(&header_note, &text);
			ck_assert(buffer_equal(&text, &served[e].text));
			buffer_free(&header_note);
			buffer_free(&text);
		}
		check_one_header(c, split + (uint64_t)e);
		published_free(&served[e]);
	}
	published_free(&before);
	buffer_free(&note);
	cluster_free(c);
}
END_TEST

START_TEST(test_bad_votes_change_nothing_and_block_no_epoch)
{
	struct cluster *c = start_cluster();
	struct buffer note;
	cluster_registration(c, cluster_provider_key(c, 0), "service", 1, 1, &note);
	register_with(c, ALL, &note);
	/* Member 4 is played by the test: it sends only the votes below. */
	struct stub_http *stub = impersonate(c, 4);
	const unsigned honest = ALL & ~CLUSTER_BIT(4);
	uint64_t epoch = cluster_next_epoch(c);
	struct published previous;
	run_published(c, epoch++, honest, &previous);

	struct signer_key *uncertified = NULL;
	ck_assert_int_eq(signer_key_generate(cluster_name(c, 1), &uncertified), 0);
	struct signer_key *outsider = NULL;
	ck_assert_int_eq(signer_key_generate("authority9.dirauth.example", &outsider), 0);
	const struct buffer *holds[] = {&note};
	for (int round = 0; round < 2; round++, epoch++) {
		struct epoch_phases phases;
		cluster_epoch_phases(c, epoch, &phases);
		cluster_run_to(c, phases.vote_at);
		struct buffer wrong_epoch, by_uncertified, by_outsider, mismatched, good;
		forge_vote(cluster_signing_key(c, 4), cluster_name(c, 4), epoch + 3, holds, 1, &previous.note,
		           &wrong_epoch);
		forge_vote(uncertified, cluster_name(c, 1), epoch, holds, 1, &previous.note, &by_uncertified);
		forge_vote(outsider, "authority9.dirauth.example", epoch, holds, 1, &previous.note,
		           &by_outsider);
		forge_vote(cluster_signing_key(c, 4), cluster_name(c, 4), epoch, holds, 1, &previous.note,
		           &good);
		/* An envelope whose body is not the one its vote commits to. */
		struct vote_envelope parts;
		ck_assert_int_eq(vote_envelope_parse(good.data, good.len, 1 << 20, &parts), 0);
		buffer_init(&mismatched);
		ck_assert_int_eq(vote_envelope_encode(parts.note, parts.note_len,
		                                      (const uint8_t *)"dirauth vote-body v1\n", 21,
		                                      &mismatched),
		                 0);
		struct buffer noise;
		buffer_init(&noise);
		for (int b = 0; b < 4096; b++) {
			uint8_t byte = (uint8_t)(b * 131 + 7);
			ck_assert(buffer_append(&noise, &byte, 1) == 0);
		}
		for (size_t i = 0; i < N; i++) {
			if (!(honest & CLUSTER_BIT(i)))
				continue;
			post_vote(c, i, &noise, 400, "malformed");
			post_vote(c, i, &mismatched, 400, "malformed");
			post_vote(c, i, &wrong_epoch, 409, "wrong_epoch");
			if (i != 1)
				post_vote(c, i, &by_uncertified, 403, "bad_signature");
			post_vote(c, i, &by_outsider, 403, "unknown_authority");
		}
		/* Past the vote deadline and the skew (and the publication): member 4's only valid
		 * vote is late. */
		ck_assert_uint_le(phases.vote_deadline + SKEW, phases.start);
		cluster_run_epoch(c, epoch);
		published_free(&previous);
		expect_published(c, epoch, honest, &previous);
		cluster_run_to(c, phases.start + 1);
		for (size_t i = 0; i < N; i++)
			if (honest & CLUSTER_BIT(i))
				post_vote(c, i, &good, 409, "too_late");
		/* Nothing changed: member 4's vote is held nowhere, member 1's own vote is the one held
		 * for it, the header is signed by the four honest members and not by 4. */
		ck_assert_uint_eq(previous.signers & CLUSTER_BIT(4), 0);
		ck_assert_uint_eq(previous.signers & honest, honest);
		ck_assert(body_holds(&previous.body, &note));
		struct buffer own;
		ck_assert_int_eq(held_vote(c, 1, epoch, cluster_name(c, 1), &own), 200);
		for (size_t i = 0; i < N; i++) {
			if (!(honest & CLUSTER_BIT(i)))
				continue;
			ck_assert_int_eq(held_vote(c, i, epoch, cluster_name(c, 4), NULL), 404);
			struct buffer held;
			ck_assert_int_eq(held_vote(c, i, epoch, cluster_name(c, 1), &held), 200);
			ck_assert(buffer_equal(&held, &own));
			buffer_free(&held);
		}
		buffer_free(&own);
		buffer_free(&wrong_epoch);
		buffer_free(&by_uncertified);
		buffer_free(&by_outsider);
		buffer_free(&mismatched);
		buffer_free(&good);
		buffer_free(&noise);
	}
	run_published(c, epoch, honest, NULL);
	signer_key_free(uncertified);
	signer_key_free(outsider);
	published_free(&previous);
	buffer_free(&note);
	cluster_free(c);
	stub_http_stop(stub);
}
END_TEST

START_TEST(test_garbage_and_silent_peers_block_no_epoch)
{
	struct cluster *c = start_cluster();
	struct buffer note;
	cluster_registration(c, cluster_provider_key(c, 0), "service", 1, 1, &note);
	register_with(c, ALL, &note);
	uint64_t epoch = cluster_next_epoch(c);
	run_published(c, epoch++, ALL, NULL);

	/* Every request to member 3 is answered with 10 MB of garbage; none to member 4 is ever
	 * answered. Their own requests still go out. */
	cluster_links_to(c, 3, FAULTPROXY_GARBAGE, 10 * 1024 * 1024);
	cluster_links_to(c, 4, FAULTPROXY_BLACKHOLE, 0);
	const unsigned others = CLUSTER_BIT(0) | CLUSTER_BIT(1) | CLUSTER_BIT(2);
	for (int e = 0; e < 3; e++) {
		struct published p;
		run_published(c, epoch++, others, &p);
		ck_assert_uint_eq(p.signers & others, others);
		ck_assert(body_holds(&p.body, &note));
		published_free(&p);
	}
	for (size_t i = 0; i < 3; i++) {
		struct faultproxy_counters garbage, silent;
		faultproxy_counters(cluster_link(c, i, 3), &garbage);
		faultproxy_counters(cluster_link(c, i, 4), &silent);
		ck_assert_msg(garbage.garbage_answers > 0, "%s never asked member 3", cluster_name(c, i));
		ck_assert_msg(silent.held > 0, "%s never asked member 4", cluster_name(c, i));
	}
	/* Links back: everyone publishes together again. */
	cluster_heal(c);
	run_published(c, epoch++, others, NULL);
	run_published(c, epoch, ALL, NULL);
	buffer_free(&note);
	cluster_free(c);
}
END_TEST

START_TEST(test_minority_cannot_invent_or_withhold)
{
	struct cluster *c = start_cluster();
	struct buffer genuine[4];
	for (unsigned s = 0; s < 4; s++) {
		cluster_registration(c, cluster_provider_key(c, s % 2), "service", s, 1, &genuine[s]);
		register_with(c, ALL, &genuine[s]);
	}
	uint64_t epoch = cluster_next_epoch(c);
	struct published previous;
	run_published(c, epoch++, ALL, &previous);

	/* What the minority claims to hold. */
	struct buffer unsigned_note, unenrolled, forged_sequence;
	{
		/* An invented service under provider 0's name whose signature is not provider 0's. */
		struct buffer real, text;
		cluster_registration(c, cluster_provider_key(c, 0), "invented", 1, 1, &real);
		note_text(&real, &text);
		struct note_signature signature;
		ck_assert_int_eq(signer_key_sign(cluster_provider_key(c, 0), text.data, text.len, &signature),
		                 0);
		memset(signature.signature, 0x5a, signature.signature_len);
		buffer_init(&unsigned_note);
		ck_assert_int_eq(note_format(text.data, text.len, &signature, 1, &unsigned_note), 0);
		buffer_free(&real);
		buffer_free(&text);
		/* A service signed by a provider that no authority enrolled. */
		cluster_registration(c, cluster_stranger_key(c), "invented", 2, 1, &unenrolled);
		/* Service 0 at sequence 100 under its real signature of sequence 1. */
		note_text(&genuine[0], &text);
		struct buffer bumped;
		buffer_init(&bumped);
		test_text_replace(text.data, text.len, "\nsequence 1\n", "\nsequence 100\n", &bumped);
		struct note *parsed = NULL;
		ck_assert_int_eq(note_parse(genuine[0].data, genuine[0].len, &parsed), 0);
		buffer_init(&forged_sequence);
		ck_assert_int_eq(
		    note_format(bumped.data, bumped.len, parsed->signatures, 1, &forged_sequence), 0);
		note_free(parsed);
		buffer_free(&text);
		buffer_free(&bumped);
	}
	/* Services 1, 2, 3 as they are, service 0 forged, two invented; service 1 withheld. */
	const struct buffer *claimed[] = {&forged_sequence, &genuine[2], &genuine[3], &unsigned_note,
	                                  &unenrolled};
	const size_t claimed_count = sizeof claimed / sizeof claimed[0];
	struct stub_http *stubs[2] = {impersonate(c, 3), impersonate(c, 4)};
	const unsigned honest = CLUSTER_BIT(0) | CLUSTER_BIT(1) | CLUSTER_BIT(2);

	for (int round = 0; round < 3; round++, epoch++) {
		struct epoch_phases phases;
		cluster_epoch_phases(c, epoch, &phases);
		cluster_run_to(c, phases.vote_at);
		for (size_t m = 3; m < N; m++) {
			struct buffer vote;
			forge_vote(cluster_signing_key(c, m), cluster_name(c, m), epoch, claimed,
			           claimed_count, &previous.note, &vote);
			stub_serve_vote(stubs[m - 3], cluster_name(c, m), epoch, &vote, claimed,
			                claimed_count);
			for (size_t i = 0; i < 3; i++) {
				/* A valid vote of a member: stored, or already held if it was pulled first.
				 */
				long status = post_vote(c, i, &vote, 0, NULL);
				ck_assert_msg(status == 202 || status == 200,
				              "%s answered %s's vote with %ld", cluster_name(c, i),
				              cluster_name(c, m), status);
			}
			buffer_free(&vote);
		}
		published_free(&previous);
		run_published(c, epoch, honest, &previous);
		/* Exactly the four genuine registrations, the withheld one included. */
		ck_assert_uint_eq(body_count(&previous.body), 4);
		for (unsigned s = 0; s < 4; s++)
			ck_assert_msg(body_holds(&previous.body, &genuine[s]), "epoch %llu lacks service %u",
			              (unsigned long long)epoch, s);
		ck_assert(!body_holds(&previous.body, &forged_sequence));
		ck_assert(!body_holds(&previous.body, &unsigned_note));
		ck_assert(!body_holds(&previous.body, &unenrolled));
		/* And none of the invented versions entered an honest store. */
		for (size_t i = 0; i < 3; i++) {
			char hex[2 * SERVICE_ID_SIZE + 1], path[256];
			uint8_t id[SERVICE_ID_SIZE];
			cluster_service_id("service", 0, id);
			hex_encode(id, SERVICE_ID_SIZE, hex);
			snprintf(path, sizeof path, "/v1/%s/registrations/%s/100", CLUSTER_NAMESPACE, hex);
			struct cluster_response response;
			ck_assert_int_eq(cluster_get(c, i, path, &response), 404);
			cluster_response_free(&response);
			for (unsigned invented = 1; invented <= 2; invented++) {
				cluster_service_id("invented", invented, id);
				hex_encode(id, SERVICE_ID_SIZE, hex);
				snprintf(path, sizeof path, "/v1/%s/registrations/%s/1", CLUSTER_NAMESPACE,
				         hex);
				ck_assert_int_eq(cluster_get(c, i, path, &response), 404);
				cluster_response_free(&response);
			}
		}
	}
	for (unsigned s = 0; s < 4; s++)
		buffer_free(&genuine[s]);
	buffer_free(&unsigned_note);
	buffer_free(&unenrolled);
	buffer_free(&forged_sequence);
	published_free(&previous);
	cluster_free(c);
	stub_http_stop(stubs[0]);
	stub_http_stop(stubs[1]);
}
END_TEST

START_TEST(test_clock_skew_within_the_bound_takes_part)
{
	struct cluster *c = start_cluster();
	struct buffer note;
	cluster_registration(c, cluster_provider_key(c, 0), "service", 1, 1, &note);
	register_with(c, ALL, &note);
	/* Member 4 runs 1 s ahead: within the bound. */
	cluster_clock_skew(c, 4, SKEW - 1);
	uint64_t epoch = cluster_next_epoch(c);
	for (int e = 0; e < 3; e++) {
		struct published p;
		run_published(c, epoch++, ALL, &p);
		ck_assert_msg(p.signers & CLUSTER_BIT(4),
		              "a member skewed within the bound did not sign epoch %llu",
		              (unsigned long long)p.header.epoch);
		published_free(&p);
	}
	buffer_free(&note);
	cluster_free(c);
}
END_TEST

START_TEST(test_clock_skew_beyond_the_bound_is_refused_and_logged)
{
	struct cluster *c = start_cluster();
	struct buffer note;
	cluster_registration(c, cluster_provider_key(c, 0), "service", 1, 1, &note);
	register_with(c, ALL, &note);
	/* Member 4 runs 5 s ahead, past the bound of 2 s: its votes come for an epoch the others are
	 * not voting on yet, and theirs reach it after its deadline. */
	cluster_clock_skew(c, 4, SKEW + 3);
	const unsigned others = ALL & ~CLUSTER_BIT(4);
	uint64_t epoch = cluster_next_epoch(c);
	for (int e = 0; e < 3; e++) {
		struct published p;
		run_published(c, epoch++, others, &p);
		ck_assert_uint_eq(p.signers & CLUSTER_BIT(4), 0);
		ck_assert_uint_eq(p.signers & others, others);
		published_free(&p);
	}
	int said = 0;
	for (size_t w = 0; w < sizeof skew_log_words / sizeof skew_log_words[0]; w++)
		said |= cluster_log_contains(c, 4, skew_log_words[w]);
	ck_assert_msg(said, "%s does not say why it is refused; see %s", cluster_name(c, 4),
	              cluster_log_path(c, 4));
	/* Back in step, it takes part again (once past the epochs its signer already voted in while
	 * it was ahead). */
	cluster_clock_skew(c, 4, 0);
	int signed_again = 0;
	for (int e = 0; e < 3 && !signed_again; e++) {
		struct published p;
		run_published(c, epoch++, others, &p);
		signed_again = (p.signers & CLUSTER_BIT(4)) != 0;
		published_free(&p);
	}
	ck_assert_msg(signed_again, "%s did not sign again; see %s", cluster_name(c, 4),
	              cluster_log_path(c, 4));
	buffer_free(&note);
	cluster_free(c);
}
END_TEST

/* Whether haystack holds the len bytes of needle. */
static int contains(const struct buffer *haystack, const void *needle, size_t len)
{
	for (size_t at = 0; len && at + len <= haystack->len; at++)
		if (memcmp(haystack->data + at, needle, len) == 0)
			return 1;
	return 0;
}

/* A header text for epoch, as the members sign it, with a distinguishing records count. */
static void forge_header(struct cluster *c, uint64_t epoch, uint64_t records, struct buffer *note)
{
	struct snapshot_header h;
	struct epoch_times times;
	struct buffer text;
	struct note_signature signature;
	memset(&h, 0, sizeof h);
	snprintf(h.namespace_name, sizeof h.namespace_name, "%s", CLUSTER_NAMESPACE);
	snprintf(h.origin, sizeof h.origin, "%s", CLUSTER_ORIGIN);
	cluster_epoch_times(c, epoch, &times);
	h.epoch = epoch;
	h.valid_after = times.valid_after;
	h.fresh_until = times.fresh_until;
	h.valid_until = times.valid_until;
	h.record_count = records;
	h.body_size = 100 + records;
	h.consensus_method = SNAPSHOT_CONSENSUS_METHOD;
	buffer_init(&text);
	buffer_init(note);
	ck_assert_int_eq(snapshot_header_encode(&h, &text), 0);
	ck_assert_int_eq(signer_key_sign(cluster_signing_key(c, 4), text.data, text.len, &signature), 0);
	ck_assert_int_eq(note_format(text.data, text.len, &signature, 1, note), 0);
	buffer_free(&text);
}

static long post_signature(struct cluster *c, size_t i, const struct buffer *note, char *code, size_t cap)
{
	char path[64];
	snprintf(path, sizeof path, "/v1/%s/signatures", CLUSTER_NAMESPACE);
	struct cluster_response response;
	long status = cluster_post(c, i, path, note->data, note->len, &response);
	snprintf(code, cap, "%.*s", (int)response.body.len,
	         response.body.data ? (const char *)response.body.data : "");
	cluster_response_free(&response);
	return status;
}

/* A POST head declaring a vote larger than any vote may be, sent on a raw socket: the answer's
 * status line. */
static long declare_huge_vote(struct cluster *c, size_t i)
{
	unsigned port = 0;
	ck_assert_int_eq(sscanf(cluster_url(c, i), "http://127.0.0.1:%u", &port), 1);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(fd, 0);
	struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&address, sizeof address), 0);
	char head[256];
	int n =
	    snprintf(head, sizeof head,
	             "POST /v1/%s/votes HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 999999999999\r\n\r\n",
	             CLUSTER_NAMESPACE);
	ck_assert_int_eq(write(fd, head, (size_t)n), n);
	char answer[512] = "";
	ssize_t got = read(fd, answer, sizeof answer - 1);
	close(fd);
	long status = 0;
	if (got > 12)
		sscanf(answer, "HTTP/1.1 %ld", &status);
	return status;
}

/* A member that sends two different votes, or signs two different headers, for one epoch: the
 * second is refused, both are kept as evidence and served; a vote declared larger than any vote
 * is refused before it is read; and the epoch publishes as if nothing happened. */
START_TEST(test_conflicting_statements_are_kept_as_evidence)
{
	struct cluster *c = start_cluster();
	struct buffer note;
	cluster_registration(c, cluster_provider_key(c, 0), "service", 1, 1, &note);
	register_with(c, ALL, &note);
	struct stub_http *stub = impersonate(c, 4);
	const unsigned honest = ALL & ~CLUSTER_BIT(4);
	uint64_t epoch = cluster_next_epoch(c);
	struct published previous;
	run_published(c, epoch++, honest, &previous);

	struct epoch_phases phases;
	cluster_epoch_phases(c, epoch, &phases);
	cluster_run_to(c, phases.vote_at);
	const struct buffer *holds[] = {&note};
	struct buffer first, second;
	forge_vote(cluster_signing_key(c, 4), cluster_name(c, 4), epoch, holds, 1, &previous.note, &first);
	forge_vote(cluster_signing_key(c, 4), cluster_name(c, 4), epoch, holds, 0, &previous.note, &second);
	post_vote(c, 0, &first, 202, NULL);
	post_vote(c, 0, &first, 200, NULL);
	post_vote(c, 0, &second, 409, "conflicting_vote");
	ck_assert_int_eq(declare_huge_vote(c, 0), 413);

	struct buffer header_a, header_b;
	char answer[512];
	forge_header(c, epoch, 7, &header_a);
	forge_header(c, epoch, 8, &header_b);
	long status = post_signature(c, 0, &header_a, answer, sizeof answer);
	/* Before authority0 computed its own header the signature is kept and judged later; after,
	 * it is refused at once. Either way it is evidence, never counted. */
	ck_assert_msg(status == 202 || status == 409, "%ld %s", status, answer);
	status = post_signature(c, 0, &header_b, answer, sizeof answer);
	ck_assert_msg(status == 409 && strstr(answer, "\"conflicting_header\""), "%ld %s", status, answer);

	cluster_run_epoch(c, epoch);
	struct published now;
	expect_published(c, epoch, honest, &now);
	ck_assert_uint_eq(now.signers & CLUSTER_BIT(4), 0);
	ck_assert(body_holds(&now.body, &note));

	char path[64];
	snprintf(path, sizeof path, "/v1/%s/evidence", CLUSTER_NAMESPACE);
	struct cluster_response response;
	ck_assert_int_eq(cluster_get(c, 0, path, &response), 200);
	ck_assert_ptr_nonnull(response.body.data);
	const char *text = (const char *)response.body.data;
	ck_assert(strncmp(text, "dirauth evidence v1\n", 20) == 0);
	char expected[256];
	snprintf(expected, sizeof expected, "evidence %llu %s conflicting-votes %zu %zu\n",
	         (unsigned long long)epoch, cluster_name(c, 4), first.len, second.len);
	ck_assert_msg(contains(&response.body, expected, strlen(expected)), "no '%s' in the evidence",
	              expected);
	ck_assert(contains(&response.body, "conflicting-headers", 19) ||
	          contains(&response.body, "other-header", 12));
	/* Both votes, as received, are in it: anyone can check them offline. */
	ck_assert(contains(&response.body, first.data, first.len));
	ck_assert(contains(&response.body, second.data, second.len));
	cluster_response_free(&response);
	/* An authority that was sent nothing has nothing. */
	ck_assert_int_eq(cluster_get(c, 1, path, &response), 200);
	ck_assert_uint_eq(response.body.len, 20);
	cluster_response_free(&response);

	published_free(&now);
	published_free(&previous);
	buffer_free(&first);
	buffer_free(&second);
	buffer_free(&header_a);
	buffer_free(&header_b);
	buffer_free(&note);
	cluster_free(c);
	stub_http_stop(stub);
}
END_TEST

static Suite *several_authorities_suite(void)
{
	Suite *suite = suite_create("several_authorities");
	TCase *failures = tcase_create("failure_behaviour");
	tcase_set_timeout(failures, 180);
	tcase_add_test(failures, test_five_authorities_twenty_epochs_byte_identical);
	tcase_add_test(failures, test_any_two_killed_still_publish_and_catch_up);
	tcase_add_test(failures, test_three_killed_publish_nothing_and_fetch_says_stale);
	tcase_add_test(failures, test_partition_two_three_only_the_three_publish);
	tcase_add_test(failures, test_bad_votes_change_nothing_and_block_no_epoch);
	tcase_add_test(failures, test_conflicting_statements_are_kept_as_evidence);
	tcase_add_test(failures, test_garbage_and_silent_peers_block_no_epoch);
	tcase_add_test(failures, test_minority_cannot_invent_or_withhold);
	tcase_add_test(failures, test_clock_skew_within_the_bound_takes_part);
	tcase_add_test(failures, test_clock_skew_beyond_the_bound_is_refused_and_logged);
	suite_add_tcase(suite, failures);
	return suite;
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	SRunner *runner = srunner_create(several_authorities_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	curl_global_cleanup();
	return failures ? 1 : 0;
}
