/*
 * scheduler.c: the publishing scheduler.
 *
 * The scheduler keeps, per namespace, the latest epoch it published and the latest epoch it
 * tried; both only grow. Publication happens on the scheduler's own thread (or the caller's,
 * for epoch_scheduler_tick), one namespace after another: building a snapshot is the only
 * heavy work in dirauthd and it must not run on the HTTP threads.
 */
#include "server/scheduler/scheduler.h"

#include "logline/logline.h"
#include "base/error.h"
#include "server/publish/publish.h"
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
	pthread_mutex_t lock; /* guards published, attempted, retry and stopping */
	pthread_cond_t wake;
	bool have_published[CONFIG_MAX_NAMESPACES];
	uint64_t published[CONFIG_MAX_NAMESPACES];
	bool have_attempted[CONFIG_MAX_NAMESPACES];
	uint64_t attempted[CONFIG_MAX_NAMESPACES];
	/* The epoch whose publication waits for the signer, per namespace, and whether that wait
	 * has been logged: one line per epoch, not one per tick. */
	bool retry[CONFIG_MAX_NAMESPACES]; /* the attempted epoch failed for want of the signer */
	bool waiting[CONFIG_MAX_NAMESPACES];
	uint64_t waiting_epoch[CONFIG_MAX_NAMESPACES];
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
		scheduler->have_published[i] = scheduler->have_attempted[i] = true;
		scheduler->published[i] = scheduler->attempted[i] = epoch;
	}
	if (rc) {
		epoch_scheduler_free(scheduler);
		return rc;
	}
	*out = scheduler;
	return 0;
}

/* Logs that namespace i cannot publish epoch for want of the signer, once per epoch. */
static void log_waiting(struct epoch_scheduler *scheduler, size_t i, uint64_t epoch, const char *why)
{
	if (scheduler->waiting[i] && scheduler->waiting_epoch[i] == epoch)
		return;
	scheduler->waiting[i] = true;
	scheduler->waiting_epoch[i] = epoch;
	scheduler_log(scheduler, scheduler->options.config->namespaces[i].name, epoch,
	              "not published yet: %s; retrying until the epoch ends", why);
}

/* Publishes namespace i for epoch and installs it. */
static int publish_one(struct epoch_scheduler *scheduler, size_t i, uint64_t epoch)
{
	const struct epoch_scheduler_options *o = &scheduler->options;
	const char *name = o->config->namespaces[i].name;
	struct publication p;
	char why[SIGNER_DETAIL_MAX + 1];
	int rc;
	if (o->signer_health && (rc = signer_health_check(o->signer_health, why, sizeof why)) != 0) {
		log_waiting(scheduler, i, epoch, why);
		return DIRAUTH_ERR_UNAVAILABLE;
	}
	rc = publish_snapshot(o->config, o->store, o->signer, i, epoch, &p, why, sizeof why);
	signer_health_note(o->signer_health, rc, why);
	if (rc == DIRAUTH_ERR_UNAVAILABLE) {
		char sentence[SIGNER_DETAIL_MAX + 32];
		snprintf(sentence, sizeof sentence, "signer unreachable: %s", why[0] ? why : "no answer");
		log_waiting(scheduler, i, epoch, sentence);
		return rc;
	}
	if (rc) {
		scheduler_log(scheduler, name, epoch, "not published: %s%s%s", dirauth_strerror(rc),
		              why[0] ? ": " : "", why);
		return rc;
	}
	unsigned long long records = p.header.record_count;
	size_t sizes[ENCODING_COUNT], header_size = p.header_note.len;
	for (int e = 0; e < ENCODING_COUNT; e++)
		sizes[e] = (size_t)p.body.size[e];
	/* Stored: from here on the snapshot exists whatever happens to the prepared responses;
	 * requests for it by epoch load it from the store. */
	rc = prepared_set_install(o->prepared, i, &p.header_note);
	publication_clear(&p);
	pthread_mutex_lock(&scheduler->lock);
	scheduler->have_published[i] = true;
	scheduler->published[i] = epoch;
	pthread_mutex_unlock(&scheduler->lock);
	if (rc) {
		scheduler_log(scheduler, name, epoch, "stored but not prepared: %s", dirauth_strerror(rc));
		return rc;
	}
	scheduler_log(scheduler, NULL, epoch,
	              "published namespace %s epoch %llu: %llu records, header %zu bytes, body %zu bytes "
	              "(gzip %zu, zstd %zu)",
	              name, (unsigned long long)epoch, records, header_size, sizes[ENCODING_IDENTITY],
	              sizes[ENCODING_GZIP], sizes[ENCODING_ZSTD]);
	if (o->on_published)
		o->on_published(o->on_published_context, i, epoch);
	/* Retention: bodies older than the window go; headers stay. */
	uint64_t window = o->config->store.body_retention_epochs;
	if (epoch >= window && (rc = store_retain(o->store, name, epoch - window + 1)) != 0)
		scheduler_log(scheduler, name, epoch, "old bodies not removed: %s", dirauth_strerror(rc));
	return 0;
}

static int tick_publish(struct epoch_scheduler *scheduler);

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
	int rc = tick_publish(scheduler);
	catch_up_once(scheduler);
	return rc;
}

static int tick_publish(struct epoch_scheduler *scheduler)
{
	const struct config *config = scheduler->options.config;
	uint64_t now, epoch;
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
	if (scheduler->options.round) {
		for (size_t i = 0; i < config->namespace_count; i++) {
			rc = round_tick(scheduler->options.round, i, now);
			pthread_mutex_lock(&scheduler->lock);
			uint64_t latest;
			if (store_snapshot_latest(scheduler->options.store, config->namespaces[i].name,
			                          &latest) == 0) {
				scheduler->have_published[i] = true;
				scheduler->published[i] = latest;
			}
			pthread_mutex_unlock(&scheduler->lock);
			if (rc && !first_error)
				first_error = rc;
		}
		return first_error;
	}
	if (schedule_epoch_of(&config->epoch, now, &epoch) != 0)
		return 0;
	for (size_t i = 0; i < config->namespace_count; i++) {
		pthread_mutex_lock(&scheduler->lock);
		bool due = !scheduler->have_attempted[i] || scheduler->attempted[i] < epoch ||
		           (scheduler->retry[i] && scheduler->attempted[i] == epoch);
		if (due) {
			scheduler->have_attempted[i] = true;
			scheduler->attempted[i] = epoch;
		}
		pthread_mutex_unlock(&scheduler->lock);
		if (!due)
			continue;
		rc = publish_one(scheduler, i, epoch);
		/* The signer is away: the epoch stays due, the next tick tries again. */
		pthread_mutex_lock(&scheduler->lock);
		scheduler->retry[i] = rc == DIRAUTH_ERR_UNAVAILABLE;
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
