/*
 * round.h: one authority's part in each epoch's round with the others (docs/protocol.md): its
 * vote, the votes and signatures it takes, the consensus it computes, the header it signs, and
 * the snapshot it publishes once k members signed it.
 *
 * The round of epoch E of a namespace runs from vote_at(E) to vote_at(E + 1)
 * (schedule/schedule.h). round_tick, called by the scheduler's thread, moves it on, each step once
 * and in order, every step idempotent and re-derived from the store after a restart:
 *   1. from vote_at(E): catch up (fetch and store the snapshots the peers published that this
 *      authority lacks, verified as a mirror verifies), seal E in the store, build the vote from
 *      the sealed view, have the signer sign it, keep it and push it to every peer;
 *   2. from the vote deadline, or once all n votes are held: pull the votes still missing,
 *      compute the consensus (consensus/consensus.h) over the valid votes, fetching from a
 *      member that listed it every chosen registration note not held here and checking it as
 *      intake would; keep the header text, have the signer sign it, keep the signature and push
 *      it to every peer;
 *   3. from the signature deadline, or once all n signatures are held: pull the signatures still
 *      missing; with k distinct members' valid signatures over the header the epoch is ready;
 *      with fewer it fails, is logged, and nothing is published for it;
 *   4. from start(E): publish a ready epoch: the body files, the header note with every valid
 *      signature in member order, stored durably, then served (prepared.h); then take into the
 *      store, checked as intake would, the registrations the peers' votes listed with a higher
 *      sequence than this authority holds (reconciliation, bounded per epoch).
 * A namespace configured with "lifecycle: true" votes methods 1 and 2 and, once the previous
 * snapshot is of method 2, the sections of method 2 (server/publish/vote.h: per endpoint the
 * latest health statement, the revocations the previous snapshot does not list); step 2 then
 * also fetches, by digest from a member whose vote lists it, every health statement and
 * revocation the consensus asks for and this authority lacks, and hands the consensus the
 * previous snapshot's revocations to carry; step 4 also takes the revocations the latest snapshot
 * and the peers' votes list whose target this authority holds no revocation of, and the health
 * statements the peers' votes list with a higher sequence than its own vote's
 * (docs/protocol.md, "Consensus method 2").
 * A step that cannot run yet (signer away, peers unreachable) is retried at the next tick while
 * its phase lasts. Heavy work (consensus, bodies) runs on the scheduler's thread only.
 *
 * round_accept_vote and round_accept_signature are called by HTTP threads for what peers push;
 * each verifies the statement against the member's certified keys (server/peers) before the
 * store keeps it, and refuses, with its own API error and nothing changed, a statement that is
 * malformed, too large, for another epoch, late, or not signed by a certified key of a member.
 * A second different vote of a member, or a member's signature over another header, is kept as
 * evidence (server/store/votes.h) and refused. These calls and the reads of votes, signatures
 * and evidence below are for a round with peers: an authority alone takes no statements, and
 * server/http, given no round, says so.
 *
 * One authority alone is the round with n = k = 1: it has no peer to catch up with, to push to
 * or to pull from, and its own vote meets the threshold, so round_tick takes steps 1 to 4 as one
 * at the epoch's start (the window phases of a set of one are 0): the seal, the vote
 * (server/publish/vote.h), the consensus of that one vote (consensus/consensus.h) with its body
 * streamed to the store's body files, the header signed and stored (server/publish/publish.h),
 * then served. Its vote is neither signed nor kept, as nobody receives it. While the signer is
 * away the epoch is retried at every tick (one line per epoch says so: "not published yet:
 * ...; retrying until the epoch ends"); any other failure is logged once and ends the epoch. The
 * line of each publication is "published namespace <ns> epoch <e>: ...".
 */
#ifndef DIRAUTH_SERVER_ROUND_ROUND_H
#define DIRAUTH_SERVER_ROUND_ROUND_H

#include "clock/clock.h"
#include "base/buffer.h"
#include "compress/compress.h"
#include "schema/registration.h"
#include "server/api/api_error.h"
#include "server/config/config.h"
#include "server/config/live.h"
#include "server/peers/authority_set.h"
#include "server/peers/peer_client.h"
#include "server/readpath/prepared.h"
#include "server/signing/signer_client.h"
#include "server/signing/signer_health.h"
#include "server/store/store.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define ROUND_DETAIL_MAX 256

/* Registrations taken from the peers' votes per namespace and epoch, at most. */
#define ROUND_RECONCILE_MAX 20000

struct round;
struct publish_diffs; /* server/publish/diffs.h */

struct round_options {
	const struct config *config;
	struct store *store;
	struct signer_client *signer;
	struct signer_health *signer_health;
	const struct clock *clock;
	/* The other members' keyrings and the client that asks them: required with peers
	 * (member_count > 1), NULL for an authority alone, which asks and verifies nobody. */
	struct authority_set *authorities;
	const struct peer_client *peers;
	struct prepared_set *prepared;
	FILE *log; /* one line per step taken and per failure; NULL: stderr */
	/* Called after each publication (NULL: nothing), e.g. to append to the transparency log. */
	void (*on_published)(void *context, size_t namespace_index, uint64_t epoch);
	void *on_published_context;
	/* Asked for the diffs to each body this round publishes, once it is served
	 * (server/publish/diffs.h); NULL: none are built. */
	struct publish_diffs *diffs;
	/* The configuration as reloads replace it (server/config/live.h): the notes peers hold are
	 * checked against its current enrolled providers and operators. NULL: config's, for ever. */
	struct config_live *live;
};

/* A round over options (all of which must outlive it). Returns 0, DIRAUTH_ERR_CONFIG (no
 * configuration, or several members without peers or authorities), DIRAUTH_ERR_NOMEM. */
int round_create(const struct round_options *options, struct round **out);

/* Frees. Accepts NULL. */
void round_free(struct round *round);

/* Moves namespace_index's round on as far as now allows. Returns 0 when nothing failed, else the
 * first failure (already logged). Called from one thread only. */
int round_tick(struct round *round, size_t namespace_index, uint64_t now);

/* The answer to a peer's statement. */
struct round_answer {
	unsigned status;      /* 202 kept, 200 already held, or the error's status */
	enum api_error error; /* API_ERROR_NONE for 200 and 202 */
	char detail[ROUND_DETAIL_MAX];
};

/* The largest vote envelope config allows (the body of POST /v1/<ns>/votes): the longest vote
 * note and the longest vote body of records_per_snapshot records, with their framing. */
size_t round_vote_body_max(const struct config *config);

/* The largest signed header note (the body of POST /v1/<ns>/signatures). */
size_t round_signature_body_max(void);

/* A vote envelope pushed to POST /v1/<ns>/votes. Refusals: API_ERROR_BODY_TOO_LARGE (over the
 * vote bound), API_ERROR_MALFORMED (envelope, note, vote, body, or a vote of another namespace),
 * API_ERROR_WRONG_EPOCH, API_ERROR_TOO_LATE, API_ERROR_UNKNOWN_AUTHORITY,
 * API_ERROR_BAD_SIGNATURE, API_ERROR_CONFLICTING_VOTE, API_ERROR_UNAVAILABLE (the clock),
 * API_ERROR_STORE_FULL, API_ERROR_INTERNAL. Thread-safe. */
void round_accept_vote(struct round *round, size_t namespace_index, const uint8_t *body, size_t len,
                       struct round_answer *answer);

/* A signed header note pushed to POST /v1/<ns>/signatures: the header text and exactly one
 * signature line, by its sender. Refusals as round_accept_vote, with API_ERROR_CONFLICTING_HEADER
 * for a valid signature over a header text other than the one computed here (or a second header
 * of one member). A signature that arrives before this authority computed its header is kept and
 * judged when it has. Thread-safe. */
void round_accept_signature(struct round *round, size_t namespace_index, const uint8_t *body, size_t len,
                            struct round_answer *answer);

/* GET /v1/<ns>/votes/<epoch>/<member>: the vote envelope held. Returns 0, DIRAUTH_ERR_NOT_FOUND
 * (no such member or vote), DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_STORE. */
int round_vote_get(struct round *round, size_t namespace_index, uint64_t epoch, const char *member,
                   struct buffer *out);

/* GET /v1/<ns>/signatures/<epoch>: the header computed here with every valid signature held over
 * it, in member order. Returns 0, DIRAUTH_ERR_NOT_FOUND (no header computed for epoch),
 * DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_STORE. */
int round_signatures_get(struct round *round, size_t namespace_index, uint64_t epoch, struct buffer *out);

/* GET /v1/<ns>/evidence: the evidence kept from epoch from_epoch on, as the text of
 * docs/protocol.md ("Evidence"). Returns 0, DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_BOUNDS (more than
 * max_bytes), DIRAUTH_ERR_STORE. */
int round_evidence_get(struct round *round, size_t namespace_index, uint64_t from_epoch, size_t max_bytes,
                       struct buffer *out);

/* The state of namespace_index's current round, for the log, metrics and tests. */
struct round_status {
	uint64_t epoch;           /* the round's epoch; 0 before the first */
	uint32_t votes;           /* bit m: member m's vote is held */
	uint32_t signatures;      /* bit m: member m's valid signature over the header is held */
	int computed;             /* a header was computed */
	int published;            /* the epoch was published */
	int failed;               /* the epoch failed (fewer than k votes or signatures) */
	uint64_t published_total; /* epochs this round published since it was created */
	uint64_t failed_total;    /* epochs that failed since it was created */
};

void round_status_get(struct round *round, size_t namespace_index, struct round_status *out);

/* ---- figures for GET /v1/metrics (docs/api.md, "Metrics") ----
 *
 * Counted where the round takes its steps and judges what peers send, under the round's lock,
 * bounded by the configuration: per namespace, per member of the set, and fixed reasons. Nothing
 * here names or counts anything but the configured members. Counts start at zero when the round is
 * created. */

/* Why an epoch failed here. */
enum round_failure {
	ROUND_FAILURE_CONSENSUS,   /* the votes held gave no consensus (too few of them, ...) */
	ROUND_FAILURE_REVOKED,     /* the votes chose a version naming something revoked here */
	ROUND_FAILURE_NO_HEADER,   /* no header computed by the signature deadline (no vote, no signer) */
	ROUND_FAILURE_SIGNATURES,  /* fewer than k valid signatures by the signature deadline */
	ROUND_FAILURE_PUBLICATION, /* the snapshot could not be built, signed or stored */
	ROUND_FAILURE_ROUND_ENDED, /* the next epoch's round began before it was published */
	ROUND_FAILURE_COUNT
};

/* "consensus", "revoked", "no_header", "signatures", "publication", "round_ended". */
const char *round_failure_name(enum round_failure failure);

/* Why a statement a member sent (pushed, or answered to a pull) was refused. The member is the
 * one the statement names: a statement refused before its signature was checked (too late, wrong
 * epoch, malformed) may not be that member's own. A statement naming no member is counted
 * nowhere. */
enum round_refusal {
	ROUND_REFUSAL_TOO_LATE,      /* after its deadline (API_ERROR_TOO_LATE) */
	ROUND_REFUSAL_WRONG_EPOCH,   /* for an epoch not being voted on or signed now */
	ROUND_REFUSAL_BAD_SIGNATURE, /* not signed by a key the member certified */
	ROUND_REFUSAL_MALFORMED,     /* malformed or too large */
	ROUND_REFUSAL_UNKNOWN_BASE,  /* a vote delta against a snapshot not the latest here */
	ROUND_REFUSAL_CONFLICTING,   /* a second vote, or a signature over another header: evidence */
	ROUND_REFUSAL_OTHER,         /* this authority could not take it (store full, internal) */
	ROUND_REFUSAL_COUNT
};

/* "too_late", "wrong_epoch", "bad_signature", "malformed", "unknown_base", "conflicting", "other". */
const char *round_refusal_name(enum round_refusal refusal);

/* The steps of a round whose durations are measured: from the call that began a step to the end
 * of the call that completed it (the vote: seal, vote, push, once caught up; the consensus: pulls,
 * gathering, consensus, signing, push; the decision: signature pulls; publication: stored and
 * served; an authority alone has the publication only, its steps being one). */
enum round_phase {
	ROUND_PHASE_VOTE,
	ROUND_PHASE_CONSENSUS,
	ROUND_PHASE_DECISION,
	ROUND_PHASE_PUBLICATION,
	ROUND_PHASE_COUNT
};

/* "vote", "consensus", "decision", "publication". */
const char *round_phase_name(enum round_phase phase);

/* The upper bounds (seconds) of the duration histograms' buckets, ascending; +Inf is implied. */
#define ROUND_DURATION_BUCKETS 12
extern const double round_duration_bounds_seconds[ROUND_DURATION_BUCKETS];

struct round_duration_histogram {
	uint64_t buckets[ROUND_DURATION_BUCKETS + 1]; /* per bucket, not cumulative; the last: +Inf */
	uint64_t count;
	uint64_t sum_ms;
};

/* One member as seen from one namespace's round. */
struct round_member_figures {
	/* The latest epoch of which a vote (a signature) of the member was kept; 0: none. At the
	 * first round after a start, those the store holds of the three epochs before are taken. */
	uint64_t vote_epoch;
	uint64_t signature_epoch;
	/* That vote's arrival after its epoch's vote_at, that signature's after its vote deadline, in
	 * seconds of the round's clock (negative: early, within the clock skew allowed); 0 for a vote
	 * or signature found in the store at start. */
	int64_t vote_lateness_seconds;
	int64_t signature_lateness_seconds;
};

struct round_statistics {
	uint64_t epoch;                             /* the round in progress; 0 before the first */
	uint64_t published_total;                   /* epochs published here */
	uint64_t failed_total[ROUND_FAILURE_COUNT]; /* epochs failed here; an epoch ready only after
	                                               its signature deadline is counted failed
	                                               (signatures) and then published */
	struct round_duration_histogram phases[ROUND_PHASE_COUNT];
	struct round_member_figures members[CONFIG_MAX_MEMBERS]; /* config->member_count of them */
	uint64_t diff_bytes[ENCODING_COUNT]; /* diffs built to this namespace's bodies (diffs.h) */
};

/* Copies namespace_index's figures into out (zeroes for an index out of range). Thread-safe. */
void round_statistics_get(struct round *round, size_t namespace_index, struct round_statistics *out);

/* Refusals of each member's statements, all namespaces together (a member's refusals in a private
 * namespace are in its totals, which name no namespace), into out[member][reason]. Thread-safe. */
void round_refusals_get(struct round *round, uint64_t out[CONFIG_MAX_MEMBERS][ROUND_REFUSAL_COUNT]);

#endif
