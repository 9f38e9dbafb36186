/*
 * internal.h: what the round's files share: the round, the state of each namespace's current
 * epoch, and the steps each file provides.
 *
 * The state below is the scheduler thread's alone, except what the lock guards (read by HTTP
 * threads for status). Everything a step needs after a restart is in the store: the seal, the
 * votes, the computed header, the signatures; the state here only remembers which steps are done
 * for the epoch in progress, and the consensus result (header and body) between computing it and
 * publishing it.
 */
#ifndef DIRAUTH_SERVER_ROUND_INTERNAL_H
#define DIRAUTH_SERVER_ROUND_INTERNAL_H

#include "consensus/consensus.h"
#include "schedule/schedule.h"
#include "server/round/round.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>

/* How often the signatures of an epoch decided without k of them are pulled again, until the
 * next round. */
#define ROUND_LATE_PULL_SECONDS 2

enum round_note_kind { ROUND_NOTE_REGISTRATION, ROUND_NOTE_HEALTH, ROUND_NOTE_REVOCATION };

/* A note fetched from a peer this epoch and checked (gather.c): what the consensus reads beside
 * the store. */
struct round_note {
	uint8_t digest[32]; /* its SHA-256, what the votes list */
	enum round_note_kind kind;
	uint8_t *note; /* owned */
	size_t len;
	bool stored; /* taken into the store (round_notes_store) */
};

/* The notes gathered in an epoch, found by digest. */
struct round_notes {
	struct round_note *items; /* the first `sorted` ascending by digest, the rest as added */
	size_t count, cap, sorted;
};

/* What one gathering did, for the log. */
struct round_gather_stats {
	size_t wanted;  /* notes the votes list that were held nowhere here */
	size_t fetched; /* of them, fetched and checked */
	size_t refused; /* notes a member gave that failed their checks */
	size_t missing; /* wanted notes nobody gave */
	size_t members; /* members asked */
	size_t failed;  /* members whose request failed (not asked again) */
	char failure[PEER_REASON_MAX + NOTE_NAME_MAX + 8]; /* the first: \"name: reason\" */
	size_t requests;                                   /* requests answered */
	size_t bytes;                                      /* bytes received for them */
	uint64_t ms;                                       /* in all, of which: */
	uint64_t collect_ms;                               /* finding what is wanted */
	uint64_t fetch_ms; /* asking the members and checking what they gave */
};

/* One namespace's round in progress. */
struct round_namespace {
	uint64_t epoch; /* the epoch in progress */
	bool active;    /* epoch is set */
	struct epoch_phases phases;
	bool voted;                     /* step 1 done: the own vote is kept (pushing it is best effort) */
	bool computed;                  /* step 2 done: the header is computed, signed and kept */
	bool decided;                   /* step 3 done: ready or failed */
	bool ready;                     /* k valid signatures are held */
	bool published;                 /* step 4 done */
	bool reconciled;                /* the peers' registrations were taken in */
	bool logged_wait;               /* a line saying what step 1 or 2 waits for was written this epoch */
	bool caught_up;                 /* step 0 done: nothing newer than the latest stored is known */
	bool tried_catch_up;            /* step 0 was tried at least once this round */
	bool caught_up_after_start;     /* step 0 was taken again after the epoch's start */
	uint64_t late_pull_at;          /* when the signatures of a failed epoch are pulled again */
	bool logged_behind;             /* a line saying the vote waits for the catch-up was written */
	struct consensus_result result; /* while computed and not published; empty otherwise */
	struct vote_body *own_body;     /* the own vote's body, for reconciliation */
	struct vote_body *bodies[CONFIG_MAX_MEMBERS]; /* the counting votes' bodies, likewise */
	struct round_notes notes;                     /* what was gathered from peers this epoch */
	size_t notes_stored;                          /* of them, taken into the store */
	uint32_t signatures;                          /* valid signatures over the header, by member */
	uint64_t step_began_ms[ROUND_PHASE_COUNT];    /* monotonic ms of each step's first try; 0: none */
	uint64_t published_total, failed_total;
	bool failed;
};

struct round_base;

struct round {
	struct round_options o;
	pthread_mutex_t lock; /* guards each namespace's status fields read by round_status_get */
	bool refresh_logged;  /* a failed certificate refresh was logged (once per run) */
	struct round_namespace ns[CONFIG_MAX_NAMESPACES];
	/* The figures of GET /v1/metrics (statistics.c), under lock. */
	struct round_statistics figures[CONFIG_MAX_NAMESPACES];
	bool figures_seeded[CONFIG_MAX_NAMESPACES]; /* round_figures_seed ran */
	uint64_t refusals[CONFIG_MAX_MEMBERS][ROUND_REFUSAL_COUNT];
	pthread_mutex_t base_lock;                       /* guards bases (the pointers) */
	struct round_base *bases[CONFIG_MAX_NAMESPACES]; /* each namespace's delta base (base.c) */
};

/* The base of vote deltas for namespace_index: the vote body its latest stored snapshot stands
 * for (base.c), with a reference the caller gives back with round_base_release. Returns 0;
 * DIRAUTH_ERR_NOT_FOUND (no snapshot stored, or its body is no longer kept); the errors of
 * publish_vote_base. Thread-safe. */
int round_base_latest(struct round *round, size_t namespace_index, struct round_base **out);
void round_base_release(struct round *round, struct round_base *base);

/* A base's body (borrowed while the reference is held) and, when digest is not NULL, the SHA-256
 * of its snapshot's header text there. */
const struct vote_body *round_base_body(const struct round_base *base, uint8_t digest[32]);

/* Drops every cached base (round_free). */
void round_bases_free(struct round *round);

/* A monotonic clock in milliseconds, for the time each step takes (logged) and the deadlines of
 * peer requests. */
uint64_t round_monotonic_ms(void);

/* The millisecond on the round's clock's monotonic scale (clock_monotonic_ms: CLOCK_MONOTONIC but
 * for a simulation's manual clock) at which the round's clock reads the unix time `at` (now when
 * the clock cannot be read or `at` has passed): the deadline of a peer request that must end by a
 * phase's end. */
uint64_t round_deadline_ms(struct round *round, uint64_t at);

/* When a step that must leave room in its window for the step after it stops: end, less one peer
 * timeout or half the window, whichever is less (the vote's push after a catch-up, the header's
 * signing and push after the gathering of notes). */
uint64_t round_leaving(const struct config *config, uint64_t end, uint64_t window);

/* The gathered note with digest: 0 with *note borrowed from notes (valid until they are
 * cleared), or DIRAUTH_ERR_NOT_FOUND. */
int round_notes_find(const struct round_notes *notes, const uint8_t digest[32], const uint8_t **note,
                     size_t *len);
void round_notes_clear(struct round_notes *notes);

/* Gathers every note the bodies (bodies[m]: member m's counting vote body, NULL for none) list
 * that this authority holds neither in its own vote nor in its store nor among the notes
 * gathered before: fetched from the members that listed them by deadline_ms, checked as intake
 * checks a peer's and added to the namespace's notes (gather.c). Returns 0 (whatever could not be
 * fetched: stats says), DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_CRYPTO. */
int round_gather(struct round *round, size_t namespace_index, const struct vote_body *const *bodies,
                 uint64_t now, uint64_t deadline_ms, struct round_gather_stats *stats);

/* Takes the namespace's gathered notes not yet stored into the store, as intake takes a peer's
 * (registrations first); a note the store holds, or holds a newer version of, changes nothing.
 * Off the round's critical path: after the header is signed and pushed, or when the round will
 * not compute one. Returns how many were stored. */
size_t round_notes_store(struct round *round, size_t namespace_index);

/* Catches up (catchup.c): stores, verified as a mirror verifies, the snapshots the peers
 * published after this authority's latest, by deadline_ms. Returns 0 when nothing newer is
 * known (also when no member could be asked: that is logged) or all of it was stored;
 * DIRAUTH_ERR_STALE when a member showed a newer snapshot and not all of it could be stored in
 * time (logged, with why): this authority is behind. */
int round_catch_up(struct round *round, size_t namespace_index, uint64_t now, uint64_t deadline_ms);

/* Takes the revocations a method-2 snapshot body lists whose target this authority holds no
 * revocation of, from the body itself, as intake takes one learned from a peer: so an authority
 * restored from an older backup, or catching up on snapshots it missed, learns every revocation
 * they listed. *taken and *refused count what happened (added to; an endpoint of a service revoked
 * whole here is neither: it is revoked already). */
void round_take_listed_revocations(struct round *round, size_t namespace_index,
                                   const struct snapshot_body *body, size_t *taken, size_t *refused);

/* The members of a push's answers that did not take it (answered 200 or 202), with why, as
 * "name: reason; name: reason" in out (capacity cap, truncated); returns how many took it. */
size_t round_push_refusals(const struct config *config, const struct peer_answer *answers, char *out,
                           size_t cap);

/* Writes one line to the round's log (logline.h):
 * "<time> epoch <e> dirauthd: namespace <ns>: <sentence>". */
void round_log(struct round *round, size_t namespace_index, uint64_t epoch, const char *format, ...)
    __attribute__((format(printf, 4, 5)));

/* Whether now is within the time statements for epoch are taken: from vote_at(epoch) - skew
 * until deadline + skew. Returns API_ERROR_NONE, API_ERROR_WRONG_EPOCH (before, or the round of a
 * later epoch has begun), API_ERROR_TOO_LATE (after the deadline, within the epoch's round). */
enum api_error round_window(const struct config *config, uint64_t epoch, uint64_t now, bool signatures);

/* The bounds of namespace_index's vote bodies: records_per_snapshot and, for a namespace
 * configured with "lifecycle: true", the health and revocation lines of method 2 (0 otherwise).
 * Returns whether the namespace carries the lifecycle. */
bool round_vote_limits(const struct config *config, size_t namespace_index, struct vote_body_limits *limits);

/* Checks a vote body against its vote and parses it (consensus_vote_body_load, or
 * consensus_vote_body_load_sections under round_vote_limits for a lifecycle namespace). Same
 * returns. */
int round_vote_body_load(const struct config *config, size_t namespace_index, const struct vote *vote,
                         const uint8_t *body, size_t len, struct vote_body **out);

/* Parses and checks a vote envelope as round_accept_vote does, up to its signature and body.
 * On API_ERROR_NONE *vote is parsed, *body loaded (vote_body_free) and *member set; otherwise
 * answer is filled. Used for pushed votes and for pulled ones alike. */
enum api_error round_check_vote(struct round *round, size_t namespace_index, const uint8_t *envelope,
                                size_t len, uint64_t now, struct vote *vote, struct vote_body **body,
                                size_t *member, struct round_answer *answer);

/* Keeps a checked vote (answer says how it went: 202, 200 or 409 conflicting_vote with the
 * evidence kept). */
void round_keep_vote(struct round *round, size_t namespace_index, uint64_t epoch, size_t member,
                     const uint8_t *envelope, size_t len, struct round_answer *answer);

/* Checks and keeps one member's signed header note as round_accept_signature does. */
void round_take_signature(struct round *round, size_t namespace_index, const uint8_t *note_bytes, size_t len,
                          uint64_t now, struct round_answer *answer);

/* Step 1 (build.c): catch up, seal, vote, push. */
int round_vote(struct round *round, size_t namespace_index, uint64_t now);

/* Step 2 (compute.c): pull missing votes, consensus, sign, push. */
int round_compute(struct round *round, size_t namespace_index, uint64_t now);

/* Step 3 and 4 (finish.c): pull missing signatures and decide; publish; reconcile. */
/* With late, after the deadline: the signatures still missing pulled again, and the epoch made
 * ready (counted published, not failed) only if k are now held; nothing logged otherwise. */
int round_decide(struct round *round, size_t namespace_index, uint64_t now, bool late);
int round_publish(struct round *round, size_t namespace_index, uint64_t now);

/* Steps 1 to 4 of an authority with no peer (n = k = 1), at the epoch's start: the seal, the own
 * vote, the consensus of it, the signed header and the stored snapshot, all by publish_snapshot
 * (server/publish/publish.h: the body streamed to the store's body files, never held whole);
 * then served, logged, handed to on_published. The vote is neither signed nor kept: nobody
 * receives it. While the signer is away the epoch stays due (one line per epoch says so) and
 * DIRAUTH_ERR_UNAVAILABLE is returned; any other failure is logged and fails the epoch. */
int round_publish_alone(struct round *round, size_t namespace_index);
int round_reconcile(struct round *round, size_t namespace_index, uint64_t now);

/* Marks namespace_index's epoch failed here (counted once in failed_total, and in the figures
 * under reason), under the lock round_status_get reads by. Called from the scheduler's thread
 * only, on an epoch not yet failed. */
void round_fail(struct round *round, size_t namespace_index, enum round_failure reason);

/* ---- the figures (statistics.c); each takes the round's lock, so none may be called under it ---- */

/* An epoch of namespace_index failed here for reason (round_fail, and the decisions that mark
 * the failure under the lock themselves: call it after releasing it). */
void round_figures_failed(struct round *round, size_t namespace_index, enum round_failure reason);

/* The members' latest votes and signatures the store holds from the three epochs before epoch,
 * taken into the figures once, at the first round after a start. */
void round_figures_seed(struct round *round, size_t namespace_index, uint64_t epoch);

/* A step of namespace_index's round completed in ms milliseconds. */
void round_figures_phase(struct round *round, size_t namespace_index, enum round_phase phase, uint64_t ms);

/* Around each try of a step: round_step_trying before it notes the first try's time (once per
 * epoch), round_step_tried after it counts the step's duration from then if done says it is now
 * complete. */
void round_step_trying(struct round *round, size_t namespace_index, enum round_phase phase);
void round_step_tried(struct round *round, size_t namespace_index, enum round_phase phase, bool done);

/* A vote (signatures: false) or a signature of member for epoch was kept now (the round's clock,
 * unix seconds); its lateness is measured against epoch's schedule. */
void round_figures_received(struct round *round, size_t namespace_index, size_t member, uint64_t epoch,
                            bool signature, uint64_t now);

/* A statement of member refused with error (API_ERROR_NONE and API_ERROR_UNAVAILABLE, a refusal
 * of this authority's own making, count nothing). */
void round_figures_refused(struct round *round, size_t member, enum api_error error);

/* The member a statement names (the name of its one signature line), or config->member_count for
 * none: a signed note, or with envelope a vote envelope. */
size_t round_claimed_member(const struct round *round, const uint8_t *bytes, size_t len, bool envelope);

/* Clears a namespace's round state for a new epoch, freeing what it holds. */
void round_namespace_reset(struct round_namespace *rn);

/* Bit mask of the members whose valid signature over text (the header computed here) the store
 * holds; the others (another text) are kept as evidence. */
int round_count_signatures(struct round *round, size_t namespace_index, uint64_t epoch, const uint8_t *text,
                           size_t text_len, uint32_t *valid);

#endif
