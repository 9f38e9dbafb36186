/*
 * engine.c: the store's environment and its group commit (engine.h).
 *
 * Database of its own: meta "sealed" -> u64, the sealed epoch once one is written (the tables
 * keep their own keys in meta beside it).
 *
 * Durability is kv's (LMDB's default): a commit returns after fsync. The committer instead ends
 * each batch with an unflushed commit (its pages synced, its meta page written) and hands the
 * batch, refusals too, to the answerer; then it takes the next batch at once, so that the flush
 * that makes a commit durable overlaps the next batch's work instead of lengthening the one
 * serial stage. A refusal too waits for the commits before it: it may rest on what they wrote.
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include "server/store/engine.h"

#include "kv/kv.h"
#include "base/error.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* One queued work with what the committer decided about it. */
struct store_request {
	struct store_work work;
	struct store_stamp stamp;
	int result;
	uint64_t commits_before; /* commits made when its batch ended: durable once these are */
	struct store_request *next;
};

struct store_engine {
	struct kv_env *env;
	struct kv_db meta;
	size_t max_batch;
	size_t queue_limit;
	unsigned refuse_percent;
	void (*committed)(void *context);
	void *committed_context;

	pthread_mutex_t lock;   /* guards everything below */
	pthread_cond_t work;    /* the committer waits for requests or stopping */
	pthread_cond_t space;   /* submitters wait for room in the queue */
	pthread_cond_t settled; /* sealers wait for the batch in flight */
	pthread_cond_t decided; /* the answerer waits for decided requests or the committer's end */
	struct store_request *head, *tail;                 /* waiting for the committer */
	struct store_request *decided_head, *decided_tail; /* decided, in order, waiting for the answerer */
	uint64_t commits_made;                             /* the committer's commits so far */
	uint64_t commits_durable;                          /* how many of them are known synced */
	bool committer_ended;
	size_t queued;     /* requests waiting for the committer */
	size_t unanswered; /* requests taken by the committer and not yet answered */
	bool stopping;
	bool in_flight;
	bool started;
	bool have_sealed;
	uint64_t sealed;        /* raised by store_engine_seal before it is committed */
	uint64_t highest_stamp; /* the highest the committer gave since the engine was opened */
	bool seal_unwritten;    /* sealed is not yet committed (its commit is running or failed) */
	struct store_statistics statistics;
	pthread_t committer, answerer;
};

static void put_u64(uint8_t *p, uint64_t v)
{
	for (size_t i = 8; i-- > 0;) {
		p[i] = (uint8_t)v;
		v >>= 8;
	}
}

static uint64_t get_u64(const uint8_t *p)
{
	uint64_t v = 0;
	for (size_t i = 0; i < 8; i++)
		v = (v << 8) | p[i];
	return v;
}

/* ---- the map's fill ---- */

static bool over_refuse_line(struct store_engine *engine)
{
	struct kv_env_info info;
	size_t free = 0;
	if (kv_env_info(engine->env, &info) != 0)
		return true;
	size_t line = info.map_size / 100 * engine->refuse_percent;
	if (info.used <= line)
		return false; /* the file's high-water mark is under it: no need to walk the free list */
	/* The pages on the free list are written again before the file grows: only the rest is
	 * taken, so the line is crossed back down once expiry and replacements free pages. */
	return kv_env_free(engine->env, &free) != 0 || info.used - free > line;
}

/* ---- the committer and the answerer ---- */

/* Applies a detached list of requests in one write transaction, sets their results and
 * commits it unflushed (kv.h): durable at the next sync of the file, before which none of it is
 * answered. Returns whether it committed; *synced_earlier whether the commit synced the file,
 * making an earlier unflushed batch durable. */
static bool apply_batch(struct store_engine *engine, struct store_request *first, bool *synced_earlier)
{
	*synced_earlier = false;
	struct kv_txn batch;
	size_t accepted;
	bool full = over_refuse_line(engine);
	enum store_apply_mode mode = STORE_APPLY_STEP;

again:
	accepted = 0;
	kv_txn_begin(engine->env, &batch, KV_WRITE);
	for (struct store_request *req = first; req; req = req->next) {
		if (full && !req->work.takes_reserve) {
			req->result = DIRAUTH_ERR_FULL;
			continue;
		}
		bool partial = false;
		req->result = req->work.apply(req->work.context, &batch, &req->stamp, mode, &partial);
		if (partial) {
			kv_txn_abort(&batch);
			mode = STORE_APPLY_NESTED;
			goto again;
		}
		if (req->result == 0)
			accepted++;
	}
	if (accepted == 0) {
		/* Nothing to make durable: every request already carries its refusal. */
		kv_txn_abort(&batch);
		return false;
	}
	int rc = kv_txn_commit_unflushed(&batch, synced_earlier);
	if (rc) {
		/* The accepted ones failed with the commit; the refused keep their own refusal. */
		for (struct store_request *req = first; req; req = req->next)
			if (req->result == 0)
				req->result = rc;
		return false;
	}
	if (engine->committed)
		engine->committed(engine->committed_context);
	return true;
}

/* Tells each request of the batch its outcome and frees it. */
static void answer_batch(struct store_request *first)
{
	for (struct store_request *req = first; req;) {
		/* Read next first: once told, the submitter may free what the request points to. */
		struct store_request *next = req->next;
		req->work.done(req->work.done_context, req->result, req->stamp.stamp);
		free(req);
		req = next;
	}
}

/* Takes up to max_batch requests off the queue and stamps them; called with the lock held. */
static struct store_request *batch_take(struct store_engine *engine, struct store_request **last_out,
                                        size_t *count_out)
{
	struct store_request *first = engine->head, *last = first;
	size_t count = 1;
	while (last->next && count < engine->max_batch) {
		last = last->next;
		count++;
	}
	engine->head = last->next;
	if (!engine->head)
		engine->tail = NULL;
	last->next = NULL;
	engine->queued -= count;
	engine->unanswered += count;
	/* Stamped while the lock is held: a seal waits for this batch. */
	for (struct store_request *req = first; req; req = req->next) {
		uint64_t floor = engine->have_sealed ? engine->sealed + 1 : 0;
		if (floor < engine->highest_stamp)
			floor = engine->highest_stamp;
		req->stamp.stamp = req->work.epoch > floor ? req->work.epoch : floor;
		engine->highest_stamp = req->stamp.stamp;
		req->stamp.sealed = engine->have_sealed ? engine->sealed : 0;
	}
	engine->in_flight = true;
	*last_out = last;
	*count_out = count;
	return first;
}

static void *committer_main(void *argument)
{
	struct store_engine *engine = argument;

	pthread_mutex_lock(&engine->lock);
	for (;;) {
		if (!engine->head && !engine->stopping) {
			struct timespec from, to;
			clock_gettime(CLOCK_MONOTONIC, &from);
			while (!engine->head && !engine->stopping)
				pthread_cond_wait(&engine->work, &engine->lock);
			clock_gettime(CLOCK_MONOTONIC, &to);
			engine->statistics.committer_idle_ns +=
			    (uint64_t)(to.tv_sec - from.tv_sec) * 1000000000u + (uint64_t)to.tv_nsec -
			    (uint64_t)from.tv_nsec;
		}
		if (!engine->head)
			break; /* stopping and drained */

		struct store_request *last;
		size_t count;
		struct store_request *first = batch_take(engine, &last, &count);
		pthread_mutex_unlock(&engine->lock);

		bool synced_earlier = false;
		bool committed = apply_batch(engine, first, &synced_earlier);

		pthread_mutex_lock(&engine->lock);
		engine->in_flight = false;
		engine->statistics.batches++;
		engine->statistics.submissions += count;
		if (committed) {
			/* Its sync made every earlier commit durable. */
			if (synced_earlier && engine->commits_durable < engine->commits_made)
				engine->commits_durable = engine->commits_made;
			engine->commits_made++;
			engine->statistics.commits++;
		}
		for (struct store_request *req = first; req; req = req->next) {
			req->commits_before = engine->commits_made;
			if (req->result == DIRAUTH_ERR_FULL)
				engine->statistics.refused_full++;
		}
		if (engine->decided_tail)
			engine->decided_tail->next = first;
		else
			engine->decided_head = first;
		engine->decided_tail = last;
		pthread_cond_signal(&engine->decided);
		pthread_cond_broadcast(&engine->settled);
	}
	engine->committer_ended = true;
	pthread_cond_signal(&engine->decided);
	pthread_mutex_unlock(&engine->lock);
	return NULL;
}

/* The answerer. It takes every decided request waiting, syncs the file unless a later commit
 * already made their commits durable, and tells each its outcome in the order decided. A failed
 * sync leaves those commits' durability unknown: their requests are answered as a store failure. */
static void *answerer_main(void *argument)
{
	struct store_engine *engine = argument;

	pthread_mutex_lock(&engine->lock);
	for (;;) {
		while (!engine->decided_head && !engine->committer_ended)
			pthread_cond_wait(&engine->decided, &engine->lock);
		if (!engine->decided_head)
			break; /* the committer has ended and everything is answered */
		struct store_request *first = engine->decided_head;
		uint64_t needed = engine->decided_tail->commits_before;
		engine->decided_head = engine->decided_tail = NULL;
		bool durable = needed <= engine->commits_durable;
		pthread_mutex_unlock(&engine->lock);

		int rc = durable ? 0 : kv_env_flush(engine->env);

		pthread_mutex_lock(&engine->lock);
		if (rc == 0 && engine->commits_durable < needed)
			engine->commits_durable = needed;
		pthread_mutex_unlock(&engine->lock);
		size_t count = 0;
		for (struct store_request *req = first; req; req = req->next) {
			count++;
			if (rc && req->result == 0)
				req->result = rc;
		}
		answer_batch(first);
		pthread_mutex_lock(&engine->lock);
		/* Room for submitters only now: the requests in flight, decided or not, are bounded. */
		engine->unanswered -= count;
		pthread_cond_broadcast(&engine->space);
	}
	pthread_mutex_unlock(&engine->lock);
	return NULL;
}

/* ---- opening and closing ---- */

int store_engine_open(const struct store_engine_options *options, const struct kv_database *databases,
                      size_t count, struct kv_db *meta, struct store_engine **out)
{
	*out = NULL;
	struct store_engine *engine = calloc(1, sizeof *engine);
	struct kv_database *all = calloc(count + 1, sizeof *all);
	if (!engine || !all) {
		free(engine);
		free(all);
		return DIRAUTH_ERR_NOMEM;
	}
	engine->max_batch = options->max_batch ? options->max_batch : 1;
	engine->queue_limit = engine->max_batch * STORE_QUEUE_PER_BATCH;
	engine->refuse_percent = options->refuse_percent;
	engine->committed = options->committed;
	engine->committed_context = options->committed_context;
	all[0] = (struct kv_database){"meta", &engine->meta};
	memcpy(all + 1, databases, count * sizeof *all);
	int rc = kv_env_open(options->path, options->map_size, all, count + 1, &engine->env);
	free(all);
	if (rc) {
		free(engine);
		return rc;
	}
	pthread_mutex_init(&engine->lock, NULL);
	pthread_cond_init(&engine->work, NULL);
	pthread_cond_init(&engine->space, NULL);
	pthread_cond_init(&engine->settled, NULL);
	pthread_cond_init(&engine->decided, NULL);
	*meta = engine->meta;
	*out = engine;
	return 0;
}

struct kv_env *store_engine_env(struct store_engine *engine)
{
	return engine->env;
}

int store_engine_start(struct store_engine *engine)
{
	struct kv_txn t;
	struct kv_val value;
	kv_txn_begin(engine->env, &t, KV_READ);
	if (kv_txn_get(&t, engine->meta, "sealed", 6, &value)) {
		if (value.len != 8)
			kv_txn_fail(&t, DIRAUTH_ERR_STORE);
		else {
			engine->sealed = get_u64(value.data);
			engine->have_sealed = true;
		}
	}
	int rc = t.rc;
	kv_txn_abort(&t);
	if (rc)
		return rc;
	if (pthread_create(&engine->answerer, NULL, answerer_main, engine) != 0)
		return DIRAUTH_ERR_NOMEM;
	if (pthread_create(&engine->committer, NULL, committer_main, engine) != 0) {
		pthread_mutex_lock(&engine->lock);
		engine->committer_ended = true;
		pthread_cond_signal(&engine->decided);
		pthread_mutex_unlock(&engine->lock);
		pthread_join(engine->answerer, NULL);
		return DIRAUTH_ERR_NOMEM;
	}
	engine->started = true;
	/* For ps, top and perf; the committer's name is the benchmarks' too. */
	pthread_setname_np(engine->committer, STORE_COMMITTER_THREAD_NAME);
	pthread_setname_np(engine->answerer, STORE_ANSWERER_THREAD_NAME);
	return 0;
}

void store_engine_close(struct store_engine *engine)
{
	if (!engine)
		return;
	if (engine->started) {
		pthread_mutex_lock(&engine->lock);
		engine->stopping = true;
		pthread_cond_broadcast(&engine->work);
		pthread_cond_broadcast(&engine->space);
		pthread_mutex_unlock(&engine->lock);
		pthread_join(engine->committer, NULL);
		pthread_join(engine->answerer, NULL); /* ends once the committer's last batch is answered */
	}
	kv_env_close(engine->env);
	pthread_cond_destroy(&engine->decided);
	pthread_cond_destroy(&engine->settled);
	pthread_cond_destroy(&engine->space);
	pthread_cond_destroy(&engine->work);
	pthread_mutex_destroy(&engine->lock);
	free(engine);
}

/* ---- submissions ---- */

int store_engine_submit(struct store_engine *engine, const struct store_work *work)
{
	if (!engine || !work || !work->apply || !work->done)
		return DIRAUTH_ERR_SYNTAX;
	struct store_request *request = calloc(1, sizeof *request);
	if (!request)
		return DIRAUTH_ERR_NOMEM;
	request->work = *work;

	pthread_mutex_lock(&engine->lock);
	while (!engine->stopping && engine->queued + engine->unanswered >= engine->queue_limit)
		pthread_cond_wait(&engine->space, &engine->lock);
	if (engine->stopping) {
		pthread_mutex_unlock(&engine->lock);
		free(request);
		return DIRAUTH_ERR_STORE;
	}
	if (engine->tail)
		engine->tail->next = request;
	else
		engine->head = request;
	engine->tail = request;
	engine->queued++;
	pthread_cond_signal(&engine->work);
	pthread_mutex_unlock(&engine->lock);
	return 0;
}

void store_waiter_init(struct store_waiter *waiter)
{
	memset(waiter, 0, sizeof *waiter);
	pthread_mutex_init(&waiter->lock, NULL);
	pthread_cond_init(&waiter->done_cond, NULL);
}

void store_waiter_done(void *context, int result, uint64_t stamp)
{
	struct store_waiter *w = context;
	pthread_mutex_lock(&w->lock);
	w->result = result;
	w->stamp = stamp;
	w->done = true;
	pthread_cond_signal(&w->done_cond);
	pthread_mutex_unlock(&w->lock);
}

int store_waiter_wait(struct store_waiter *waiter, int queued, uint64_t *stamp)
{
	int rc = queued;
	if (rc == 0) {
		pthread_mutex_lock(&waiter->lock);
		while (!waiter->done)
			pthread_cond_wait(&waiter->done_cond, &waiter->lock);
		pthread_mutex_unlock(&waiter->lock);
		rc = waiter->result;
		if (stamp && rc == 0)
			*stamp = waiter->stamp;
	}
	pthread_cond_destroy(&waiter->done_cond);
	pthread_mutex_destroy(&waiter->lock);
	return rc;
}

/* ---- the seal ---- */

int store_engine_seal(struct store_engine *engine, uint64_t epoch, bool *raised)
{
	if (raised)
		*raised = false;
	pthread_mutex_lock(&engine->lock);
	while (engine->in_flight)
		pthread_cond_wait(&engine->settled, &engine->lock);
	if (engine->have_sealed && !engine->seal_unwritten && epoch <= engine->sealed) {
		pthread_mutex_unlock(&engine->lock);
		return 0;
	}
	/* Raised before it is written, so that no batch taken from here on is stamped at or below
	 * it; written again by the next call if this commit fails, so that a seal reported done is
	 * one the next start reads back. */
	if (!engine->have_sealed || epoch > engine->sealed)
		engine->sealed = epoch;
	engine->have_sealed = true;
	engine->seal_unwritten = true;
	uint64_t sealing = engine->sealed;
	pthread_mutex_unlock(&engine->lock);

	/* Write transactions are serial: a higher seal committed first by another call is kept. */
	struct kv_txn t;
	struct kv_val value;
	uint8_t field[8];
	put_u64(field, sealing);
	kv_txn_begin(engine->env, &t, KV_WRITE);
	if (!kv_txn_get(&t, engine->meta, "sealed", 6, &value) || value.len != 8 ||
	    get_u64(value.data) < sealing)
		kv_txn_put(&t, engine->meta, "sealed", 6, field, 8);
	int rc = kv_txn_commit(&t);
	if (rc == 0) {
		pthread_mutex_lock(&engine->lock);
		if (engine->sealed == sealing)
			engine->seal_unwritten = false;
		pthread_mutex_unlock(&engine->lock);
		if (raised)
			*raised = true;
	}
	return rc;
}

int store_engine_sealed(struct store_engine *engine, uint64_t *epoch)
{
	pthread_mutex_lock(&engine->lock);
	int rc = engine->have_sealed ? 0 : DIRAUTH_ERR_NOT_FOUND;
	*epoch = engine->sealed;
	pthread_mutex_unlock(&engine->lock);
	return rc;
}

/* ---- statistics ---- */

int store_engine_statistics(struct store_engine *engine, struct store_statistics *out)
{
	struct kv_env_info info;
	pthread_mutex_lock(&engine->lock);
	*out = engine->statistics;
	pthread_mutex_unlock(&engine->lock);
	int rc = kv_env_info(engine->env, &info);
	out->map_size = info.map_size;
	out->map_used = info.used;
	if (rc == 0)
		rc = kv_env_free(engine->env, &out->map_free);
	return rc;
}
