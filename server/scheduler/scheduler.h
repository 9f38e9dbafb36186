/*
 * scheduler.h: the thread that follows the epochs and drives the round.
 *
 * Time is cut into epochs by config->epoch (the arithmetic is schedule/schedule.h). The scheduler is
 * a thread that polls the injectable clock (every EPOCH_POLL_FILE_MS for a file clock, so tests
 * advance epochs quickly by writing the file; every EPOCH_POLL_SYSTEM_MS for the system clock).
 * Each tick moves every namespace's round on (server/round/round.h), which publishes each epoch's
 * snapshot, stores it and swaps its prepared responses in (prepared.h); for an authority alone
 * that is the consensus of its one vote at the epoch's start (n = k = 1). The scheduler reads back
 * the latest epoch stored after each tick.
 * Epochs missed while the server was down are skipped, not back-filled: a snapshot is only ever
 * built for the epoch that is current. What the round cannot do yet (the signer unreachable, peers
 * away) it retries at the next tick while the epoch's phase lasts, and logs once per epoch; a
 * clock that cannot be read is logged and the tick skipped.
 */
#ifndef DIRAUTH_SERVER_SCHEDULER_SCHEDULER_H
#define DIRAUTH_SERVER_SCHEDULER_SCHEDULER_H

#include "clock/clock.h"
#include "server/config/config.h"
#include "server/readpath/prepared.h"
#include "server/round/round.h"
#include "server/store/store.h"

#include <stdint.h>
#include <stdio.h>

#define EPOCH_POLL_FILE_MS   20
#define EPOCH_POLL_SYSTEM_MS 200

struct epoch_scheduler;

struct epoch_scheduler_options {
	const struct config *config;
	struct store *store;
	const struct clock *clock;
	struct prepared_set *prepared;
	FILE *log; /* one line (logline.h) per failure to read the clock; NULL: stderr */
	/* The round that prepares and publishes each epoch (server/round), over the same
	 * configuration, store and prepared set; required. The round logs its own steps. */
	struct round *round;
	/* Called once per namespace with its latest stored epoch after the first tick's
	 * publications (NULL: nothing); the round calls its own after each publication. */
	void (*on_published)(void *context, size_t namespace_index, uint64_t epoch);
	void *on_published_context;
};

/* A scheduler over options (all of which must outlive it). Loads the latest stored snapshot of
 * every namespace and installs its prepared responses, so a restarted server serves at once.
 * Does not start the thread. Returns 0, DIRAUTH_ERR_CONFIG (no round), DIRAUTH_ERR_NOMEM, or the
 * errors of loading a stored snapshot. */
int epoch_scheduler_create(const struct epoch_scheduler_options *options, struct epoch_scheduler **out);

/* One poll: reads the clock and moves every namespace's round on (round_tick). Returns 0 when
 * nothing failed; the clock's error when it could not be read; otherwise the first error of the
 * round (already logged; DIRAUTH_ERR_UNAVAILABLE while the signer is away). For tests and for
 * the thread. */
int epoch_scheduler_tick(struct epoch_scheduler *scheduler);

/* The latest epoch published (or loaded at start) for namespace_index. Returns 0 or
 * DIRAUTH_ERR_NOT_FOUND. Thread-safe. */
int epoch_scheduler_latest(struct epoch_scheduler *scheduler, size_t namespace_index, uint64_t *epoch);

/* Starts the polling thread. Returns 0 or DIRAUTH_ERR_INTERNAL. */
int epoch_scheduler_start(struct epoch_scheduler *scheduler);

/* Stops the thread (if started; waits for a publication in progress) and frees. Accepts NULL. */
void epoch_scheduler_free(struct epoch_scheduler *scheduler);

#endif
