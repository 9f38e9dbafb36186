/*
 * scheduler.h: the thread that publishes one snapshot per namespace per epoch.
 *
 * Time is cut into epochs by config->epoch (the arithmetic is schedule/schedule.h). The scheduler is
 * a thread that polls the injectable clock (every EPOCH_POLL_FILE_MS for a file clock, so tests
 * advance epochs quickly by writing the file; every EPOCH_POLL_SYSTEM_MS for the system clock).
 * When the current epoch is above the latest one published for a namespace, it has that epoch's
 * snapshot computed, signed and stored (publish.h: the consensus of this authority's one vote),
 * then swaps its prepared responses in (prepared.h).
 * Epochs missed while the server was down are skipped, not back-filled: a snapshot is only ever
 * built for the epoch that is current. A snapshot that cannot be published because the signer is
 * unreachable is retried at every tick of its epoch (each tick first asks signer_health.h, so a
 * down signer costs no snapshot builds), and the failure is logged once per epoch: a signer that
 * comes back publishes the epoch late rather than never. Any other failure (a bound, a signer
 * refusal, the store) is logged once and not retried within its epoch. A clock that cannot be read
 * is logged and the tick skipped.
 *
 * With several authorities the scheduler publishes nothing itself: each tick moves every
 * namespace's round on (server/round/round.h), which publishes what k authorities signed.
 */
#ifndef DIRAUTH_SERVER_SCHEDULER_SCHEDULER_H
#define DIRAUTH_SERVER_SCHEDULER_SCHEDULER_H

#include "clock/clock.h"
#include "server/config/config.h"
#include "server/readpath/prepared.h"
#include "server/round/round.h"
#include "server/signing/signer_client.h"
#include "server/signing/signer_health.h"
#include "server/store/store.h"

#include <stdint.h>
#include <stdio.h>

#define EPOCH_POLL_FILE_MS   20
#define EPOCH_POLL_SYSTEM_MS 200

struct epoch_scheduler;

struct epoch_scheduler_options {
	const struct config *config;
	struct store *store;
	struct signer_client *signer;
	struct signer_health *signer_health;
	const struct clock *clock;
	struct prepared_set *prepared;
	FILE *log; /* one line (logline.h) per published snapshot and per failure; NULL: stderr */
	/* Several authorities: the round that prepares each epoch with the others (server/round),
	 * driven by the scheduler's ticks instead of publishing alone. NULL for one authority. */
	struct round *round;
	/* Called after each publication by this authority alone, and once per namespace with its
	 * latest stored epoch after the first tick's publications (NULL: nothing). */
	void (*on_published)(void *context, size_t namespace_index, uint64_t epoch);
	void *on_published_context;
};

/* A scheduler over options (all of which must outlive it). Loads the latest stored snapshot of
 * every namespace and installs its prepared responses, so a restarted server serves at once.
 * Does not start the thread. Returns 0, DIRAUTH_ERR_NOMEM, or the errors of loading a stored
 * snapshot. */
int epoch_scheduler_create(const struct epoch_scheduler_options *options, struct epoch_scheduler **out);

/* One poll: reads the clock and publishes what is due. Returns 0 when nothing failed; the
 * clock's error when it could not be read; otherwise the first publication error (already
 * logged). For tests and for the thread. */
int epoch_scheduler_tick(struct epoch_scheduler *scheduler);

/* The latest epoch published (or loaded at start) for namespace_index. Returns 0 or
 * DIRAUTH_ERR_NOT_FOUND. Thread-safe. */
int epoch_scheduler_latest(struct epoch_scheduler *scheduler, size_t namespace_index, uint64_t *epoch);

/* Starts the polling thread. Returns 0 or DIRAUTH_ERR_INTERNAL. */
int epoch_scheduler_start(struct epoch_scheduler *scheduler);

/* Stops the thread (if started; waits for a publication in progress) and frees. Accepts NULL. */
void epoch_scheduler_free(struct epoch_scheduler *scheduler);

#endif
