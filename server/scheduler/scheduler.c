/*
 * scheduler.c: the thread that drives the round.
 *
 * The scheduler keeps, per namespace, the latest epoch stored, read back after each of the
 * round's ticks. The round's work happens on the scheduler's own thread (or the caller's, for
 * epoch_scheduler_tick), one namespace after another: building a snapshot is the only heavy work
 * in dirauthd and it must not run on the HTTP threads.
 */
#include "server/scheduler/scheduler.h"

#include "logline/logline.h"
#include "base/error.h"
#include "server/store/snapshots.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct epoch_scheduler {
	struct epoch_scheduler_options options;
	pthread_mutex_t lock; /* guards published and stopping */
	pthread_cond_t wake;
	bool have_published[CONFIG_MAX_NAMESPACES];
	uint64_t published[CONFIG_MAX_NAMESPACES];
	bool clock_failed; /* log a clock failure once until it recovers */
	bool caught_up;    /* on_published was called for every namespace once since start */
	bool stopping;
	bool started;
	pthread_t thread;
};

/* One line of the log (logline.h) about epoch and the namespace named namespace_name (NULL:
 * none). */
static void scheduler_log(const struct epoch_scheduler *scheduler, const char *namespace_name, uint64_t epoch,
                          const char *format, ...) __attribute__((format(printf, 4, 5)));
static void scheduler_log(const struct epoch_scheduler *scheduler, const char *namespace_name, uint64_t epoch,
                          const char *format, ...)
{
	va_list args;
	va_start(args, format);
	logline_vwrite(scheduler->options.log, "dirauthd", epoch, namespace_name, format, args);
	va_end(args);
}

int epoch_scheduler_create(const struct epoch_scheduler_options *options, struct epoch_scheduler **out)
{
	int rc = 0;
	*out = NULL;
	if (!options->round)
		return DIRAUTH_ERR_CONFIG;
	struct epoch_scheduler *scheduler = calloc(1, sizeof *scheduler);
	if (!scheduler)
		return DIRAUTH_ERR_NOMEM;
	scheduler->options = *options;
	if (pthread_mutex_init(&scheduler->lock, NULL) != 0) {
		free(scheduler);
		return DIRAUTH_ERR_NOMEM;
	}
	if (pthread_cond_init(&scheduler->wake, NULL) != 0) {
		pthread_mutex_destroy(&scheduler->lock);
		free(scheduler);
		return DIRAUTH_ERR_NOMEM;
	}
	const struct config *config = options->config;
	for (size_t i = 0; i < config->namespace_count; i++) {
		uint64_t epoch;
		rc = store_snapshot_latest(options->store, config->namespaces[i].name, &epoch);
		if (rc == DIRAUTH_ERR_NOT_FOUND) {
			rc = 0;
			continue;
		}
		if (rc)
			break;
		if ((rc = prepared_set_load_latest(options->prepared, i)))
			break;
		scheduler->have_published[i] = true;
		scheduler->published[i] = epoch;
	}
	if (rc) {
		epoch_scheduler_free(scheduler);
		return rc;
	}
	*out = scheduler;
	return 0;
}

static int tick_rounds(struct epoch_scheduler *scheduler);

/* After the first tick's publications: what was published before a restart gets the
 * publication callback too (the transparency log catches up with it). */
static void catch_up_once(struct epoch_scheduler *scheduler)
{
	const struct epoch_scheduler_options *o = &scheduler->options;
	if (scheduler->caught_up || !o->on_published)
		return;
	scheduler->caught_up = true;
	for (size_t i = 0; i < o->config->namespace_count; i++) {
		uint64_t latest;
		if (store_snapshot_latest(o->store, o->config->namespaces[i].name, &latest) == 0)
			o->on_published(o->on_published_context, i, latest);
	}
}

int epoch_scheduler_tick(struct epoch_scheduler *scheduler)
{
	int rc = tick_rounds(scheduler);
	catch_up_once(scheduler);
	return rc;
}

static int tick_rounds(struct epoch_scheduler *scheduler)
{
	const struct config *config = scheduler->options.config;
	uint64_t now;
	int rc = clock_now(scheduler->options.clock, &now);
	if (rc) {
		if (!scheduler->clock_failed)
			scheduler_log(scheduler, NULL, LOGLINE_EPOCH_NONE, "cannot read the clock: %s",
			              dirauth_strerror(rc));
		scheduler->clock_failed = true;
		return rc;
	}
	scheduler->clock_failed = false;
	int first_error = 0;
	for (size_t i = 0; i < config->namespace_count; i++) {
		rc = round_tick(scheduler->options.round, i, now);
		pthread_mutex_lock(&scheduler->lock);
		uint64_t latest;
		if (store_snapshot_latest(scheduler->options.store, config->namespaces[i].name, &latest) ==
		    0) {
			scheduler->have_published[i] = true;
			scheduler->published[i] = latest;
		}
		pthread_mutex_unlock(&scheduler->lock);
		if (rc && !first_error)
			first_error = rc;
	}
	return first_error;
}

int epoch_scheduler_latest(struct epoch_scheduler *scheduler, size_t namespace_index, uint64_t *epoch)
{
	int rc = DIRAUTH_ERR_NOT_FOUND;
	if (namespace_index >= CONFIG_MAX_NAMESPACES)
		return rc;
	pthread_mutex_lock(&scheduler->lock);
	if (scheduler->have_published[namespace_index]) {
		*epoch = scheduler->published[namespace_index];
		rc = 0;
	}
	pthread_mutex_unlock(&scheduler->lock);
	return rc;
}

static void *scheduler_main(void *argument)
{
	struct epoch_scheduler *scheduler = argument;
	long interval_ms =
	    clock_is_file(scheduler->options.clock) ? EPOCH_POLL_FILE_MS : EPOCH_POLL_SYSTEM_MS;
	pthread_mutex_lock(&scheduler->lock);
	while (!scheduler->stopping) {
		pthread_mutex_unlock(&scheduler->lock);
		epoch_scheduler_tick(scheduler);
		pthread_mutex_lock(&scheduler->lock);
		if (scheduler->stopping)
			break;
		struct timespec deadline;
		clock_gettime(CLOCK_REALTIME, &deadline);
		deadline.tv_nsec += interval_ms * 1000000L;
		deadline.tv_sec += deadline.tv_nsec / 1000000000L;
		deadline.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&scheduler->wake, &scheduler->lock, &deadline);
	}
	pthread_mutex_unlock(&scheduler->lock);
	return NULL;
}

int epoch_scheduler_start(struct epoch_scheduler *scheduler)
{
	if (scheduler->started)
		return DIRAUTH_ERR_INTERNAL;
	if (pthread_create(&scheduler->thread, NULL, scheduler_main, scheduler) != 0)
		return DIRAUTH_ERR_INTERNAL;
	scheduler->started = true;
	return 0;
}

void epoch_scheduler_free(struct epoch_scheduler *scheduler)
{
	if (!scheduler)
		return;
	if (scheduler->started) {
		pthread_mutex_lock(&scheduler->lock);
		scheduler->stopping = true;
		pthread_cond_signal(&scheduler->wake);
		pthread_mutex_unlock(&scheduler->lock);
		pthread_join(scheduler->thread, NULL);
	}
	pthread_cond_destroy(&scheduler->wake);
	pthread_mutex_destroy(&scheduler->lock);
	free(scheduler);
}
