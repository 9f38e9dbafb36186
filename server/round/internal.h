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
#include "schema/schedule.h"
#include "server/round/round.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>

/* A health statement or revocation note fetched from a peer for the consensus (method 2). */
struct round_statement {
	bool health; /* a health statement; else a revocation */
	uint8_t *note;
	size_t len;
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
	struct consensus_result result; /* while computed and not published; empty otherwise */
	struct vote_body *own_body;     /* the own vote's body, for reconciliation */
	struct vote_body *bodies[CONFIG_MAX_MEMBERS]; /* the counting votes' bodies, likewise */
	uint8_t **fetched;                            /* notes fetched from peers for the consensus, */
	size_t *fetched_len;                          /* checked: reconciliation stores them first */
	size_t fetched_count;
	struct round_statement *statements; /* health statements and revocations fetched likewise */
	size_t statement_count;
	uint32_t signatures; /* valid signatures over the header, by member */
	uint64_t published_total, failed_total;
	bool failed;
};

struct round {
	struct round_options o;
	pthread_mutex_t lock; /* guards each namespace's status fields read by round_status_get */
	bool refresh_logged;  /* a failed certificate refresh was logged (once per run) */
	struct round_namespace ns[CONFIG_MAX_NAMESPACES];
};

/* A monotonic clock in milliseconds, for the time each step takes (logged). */
uint64_t round_monotonic_ms(void);

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
int round_decide(struct round *round, size_t namespace_index, uint64_t now);
int round_publish(struct round *round, size_t namespace_index, uint64_t now);
int round_reconcile(struct round *round, size_t namespace_index, uint64_t now);

/* Clears a namespace's round state for a new epoch, freeing what it holds. */
void round_namespace_reset(struct round_namespace *rn);

/* Bit mask of the members whose valid signature over text (the header computed here) the store
 * holds; the others (another text) are kept as evidence. */
int round_count_signatures(struct round *round, size_t namespace_index, uint64_t epoch, const uint8_t *text,
                           size_t text_len, uint32_t *valid);

#endif
