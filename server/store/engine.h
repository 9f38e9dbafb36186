/*
 * engine.h: the store's engine: one LMDB environment (through kv/) and its group commit, knowing
 * nothing of what the tables keep in it.
 *
 * The tables of server/store (registrations.h, statements.h, snapshots.h, votes.h, tlog_table.h)
 * name their databases; the engine opens them in one environment beside its own, meta, where it
 * keeps the sealed epoch (a table keeps its own counters there under names of its own).
 *
 * Group commit. A table hands the engine a piece of work: an apply callback and its context, and
 * the epoch its caller names. One committer thread takes up to max_batch queued works, stamps each
 * (below), runs every apply in one write transaction, in the order queued (so a batch behaves
 * exactly like the same works one after another: each sees what the earlier ones wrote), commits
 * once, and hands the batch to a second thread, the answerer, which reports each work's own result
 * once the commit is durable: it syncs the file while the committer works on the next batch, or
 * finds that the next commit's own sync already did. When the commit fails, nobody in the batch is
 * told 0. Submitters wait for room while max_batch * STORE_QUEUE_PER_BATCH works are unanswered.
 *
 * Stamps and the seal. The committer stamps each work with max(its epoch, sealed + 1, the highest
 * stamp it gave since the engine was opened) while it holds the engine's lock to take the batch,
 * and marks the batch in flight; store_engine_seal raises the sealed epoch only when no batch is
 * in flight, so no commit stamped at or below a sealed epoch can land after the seal, and stamps
 * never go down.
 *
 * The map's fill. Above refuse_percent of the map (counting the pages on LMDB's free list as free)
 * a work is refused with DIRAUTH_ERR_FULL before its apply runs, unless it takes the reserve (a
 * revocation, which must never wait for space).
 *
 * Threading: every function is safe from any thread.
 */
#ifndef DIRAUTH_SERVER_STORE_ENGINE_H
#define DIRAUTH_SERVER_STORE_ENGINE_H

#include "kv/kv.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct store_engine;

/* Batches of max_batch unanswered (queued or taken) before submitters wait for room. */
#define STORE_QUEUE_PER_BATCH 4

/* Called once with the outcome of a submission (from the answerer thread, in the order the
 * committer decided the submissions: it must not block, and must not submit again). stamp is the
 * epoch of the first snapshot that may hold what was stored (when result is 0). */
typedef void (*store_submission_done)(void *context, int result, uint64_t stamp);

/* How the committer runs an apply. A work whose refusals are all decided before its first write
 * may run as a step of the batch (kv.h: nothing to undo, no nested transaction to pay for); if it
 * fails after writing as a step it sets *partial, and the committer aborts the batch and runs it
 * again with every work in STORE_APPLY_NESTED mode, where each must run in a nested transaction of
 * the batch, all of it or none. A work that always nests may ignore the mode. */
enum store_apply_mode {
	STORE_APPLY_STEP,
	STORE_APPLY_NESTED,
};

/* What the committer gave a work: its stamp, and the sealed epoch when its batch was taken (0
 * before any seal). */
struct store_stamp {
	uint64_t stamp;
	uint64_t sealed;
};

/* Runs one work inside the batch's write transaction. Returns its outcome: 0 (kept, answered once
 * durable) or a refusal, after which nothing it wrote may stay in batch (or *partial is set). */
typedef int (*store_apply)(void *context, struct kv_txn *batch, const struct store_stamp *stamp,
                           enum store_apply_mode mode, bool *partial);

/* One piece of work for the committer. context must stay valid until done is called. */
struct store_work {
	store_apply apply;
	void *context;
	uint64_t epoch;     /* the first epoch whose cut-off has not passed, by the caller's clock */
	bool takes_reserve; /* applied above refuse_percent too */
	store_submission_done done;
	void *done_context;
};

/* Counters and gauges, for tests and metrics. */
struct store_statistics {
	uint64_t submissions;       /* works the committer decided, accepted or refused */
	uint64_t batches;           /* write transactions the committer ran, one per batch */
	uint64_t commits;           /* of those, the ones committed (a batch refused entirely is not) */
	uint64_t refused_full;      /* works refused because the map is too full */
	uint64_t committer_idle_ns; /* time the committer waited for work (the rest it was busy) */
	size_t map_size;            /* bytes the database may grow to */
	size_t map_used;            /* bytes in use (a high-water mark: freed pages are reused) */
	size_t map_free;            /* of map_used, the bytes of freed pages waiting to be reused */
};

/* The name of the committer's thread (in /proc/<pid>/task/<tid>/comm), the serial stage of
 * ingest: what the benchmarks watch. */
#define STORE_COMMITTER_THREAD_NAME "dirauth-commit"
/* The thread that makes commits durable and calls the submissions' done callbacks. */
#define STORE_ANSWERER_THREAD_NAME  "dirauth-answer"

struct store_engine_options {
	const char *path;        /* directory of the environment */
	size_t map_size;         /* bytes the database may grow to */
	unsigned refuse_percent; /* 1..100 */
	size_t max_batch;        /* works per commit, >= 1 */
	/* Called by the committer after each commit, before anything of it is answered (a table's
	 * caches of what was committed); may be NULL. */
	void (*committed)(void *context);
	void *committed_context;
};

/* Opens the environment with the tables' databases (each handle set on 0) and meta (*meta set);
 * no thread runs yet. Returns 0, kv_env_open's errors, DIRAUTH_ERR_NOMEM. */
int store_engine_open(const struct store_engine_options *options, const struct kv_database *databases,
                      size_t count, struct kv_db *meta, struct store_engine **out);

/* The environment, for the tables' own transactions (valid until store_engine_close). */
struct kv_env *store_engine_env(struct store_engine *engine);

/* Reads the sealed epoch kept in meta and starts the committer and the answerer. Returns 0,
 * DIRAUTH_ERR_STORE (a damaged sealed epoch), DIRAUTH_ERR_NOMEM. */
int store_engine_start(struct store_engine *engine);

/* Stops the committer after the queued work, waits until all of it is answered, and closes the
 * environment. Accepts NULL. */
void store_engine_close(struct store_engine *engine);

/* Queues work for the next group commit; work->done will be called with the outcome. While the
 * engine holds its most unanswered works, the call waits until the answerer has answered a batch.
 * Returns 0 when queued, or without calling done DIRAUTH_ERR_SYNTAX (no apply or done),
 * DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_STORE (closing). */
int store_engine_submit(struct store_engine *engine, const struct store_work *work);

/* A submitter waiting for its outcome: the one way a submission is made synchronous.
 *   struct store_waiter w;
 *   store_waiter_init(&w);
 *   return store_waiter_wait(&w, x_submit_async(store, x, store_waiter_done, &w), stamp);
 */
struct store_waiter {
	pthread_mutex_t lock;
	pthread_cond_t done_cond;
	bool done;
	int result;
	uint64_t stamp;
};

void store_waiter_init(struct store_waiter *waiter);

/* A store_submission_done whose context is a struct store_waiter. */
void store_waiter_done(void *context, int result, uint64_t stamp);

/* Waits for the outcome if queued is 0 (the submission was queued), and releases the waiter.
 * Returns queued if it is not 0, else the outcome; *stamp (may be NULL) gets the stamp on 0. */
int store_waiter_wait(struct store_waiter *waiter, int queued, uint64_t *stamp);

/* Fixes the sealed epoch: waits for the batch in flight, raises the sealed epoch to epoch (so
 * that no later batch is stamped at or below it) and writes it durably (again, if an earlier
 * call's write failed). Sealing at or below the sealed epoch, written, changes nothing: *raised
 * (may be NULL) tells whether anything was written. Returns 0, DIRAUTH_ERR_FULL,
 * DIRAUTH_ERR_STORE. */
int store_engine_seal(struct store_engine *engine, uint64_t epoch, bool *raised);

/* The sealed epoch (raised, whether written yet or not). Returns 0, or DIRAUTH_ERR_NOT_FOUND when
 * nothing was sealed yet. */
int store_engine_sealed(struct store_engine *engine, uint64_t *epoch);

/* Copies the counters into out. Returns 0, or kv_env_info's errors. */
int store_engine_statistics(struct store_engine *engine, struct store_statistics *out);

#endif
