/*
 * diffs.c: the builder of each published body's diffs from the older bodies kept (diffs.h).
 *
 * One thread waits for requests. A request sets its namespace's pending epoch (an older pending
 * one is dropped); the thread takes the pending epochs one namespace after another, round robin,
 * so a busy namespace cannot starve another. For an epoch it reads the target body once and then,
 * base by base from the newest, reads the base body, builds the diff (snapshot_diff_build), writes
 * it through the store's diff writer (compressed on the way, part files fsynced), measures it, and
 * keeps it (renamed) only when it is worth offering. A crash anywhere leaves part files, which the
 * store's next open removes, and never a final name over a partial diff; the next start asks again
 * for the latest epoch's diffs.
 *
 * Why a thread and not the scheduler's idle time: the scheduler's thread runs the round, whose
 * steps have deadlines; a diff of a large body takes about as long as compressing it, and no
 * deadline should wait for it. The thread only reads stored bodies and writes diff files, which
 * no other step touches, under the store's own rule against retention (store_diff_keep).
 *
 * The same thread then writes the epoch's record shards (schema/record-shard.md): every shard of
 * the body, packed in one file beside it (store_record_shards_*), built from the body in one pass
 * (record_shard_builder_*), so that a client can verify one service without the body. They are
 * derived from the body as the diffs are, kept as long, and built after publication for the same
 * reason; shards held already are not built again. The body is read from the store once for
 * both (struct target_body), since at 100,000 records it is tens of megabytes.
 */
#include "server/publish/diffs.h"

#include "base/buffer.h"
#include "base/error.h"
#include "compress/compress.h"
#include "faults/faults.h"
#include "logline/logline.h"
#include "schema/record_shard.h"
#include "schema/snapshot.h"
#include "schema/snapshot_diff.h"
#include "server/publish/vote.h"
#include "server/store/snapshots.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct publish_diffs {
	struct publish_diffs_options o;
	pthread_t thread;
	pthread_mutex_t lock; /* guards everything below */
	pthread_cond_t changed;
	bool stopping;
	bool busy; /* an epoch is being built */
	bool pending[CONFIG_MAX_NAMESPACES];
	uint64_t pending_epoch[CONFIG_MAX_NAMESPACES];
	size_t next; /* the namespace the round robin looks at first */
	struct publish_diffs_statistics statistics;
};

/* What one epoch's diffs came to, for its log line. */
struct epoch_outcome {
	size_t built, held, not_offered, failed, stale;
	uint64_t bytes[ENCODING_COUNT]; /* of the diffs built, per encoding */
	int first_error;
	uint64_t first_error_base;
};

static bool stopping(struct publish_diffs *d)
{
	pthread_mutex_lock(&d->lock);
	bool stop = d->stopping;
	pthread_mutex_unlock(&d->lock);
	return stop;
}

/* Writes diff to the store as the diff to target's body from base_digest, and keeps it if it is
 * worth offering against the target's zstd body of target_zstd bytes. Returns 0 kept, 1 not worth
 * offering (dropped), or an error (DIRAUTH_ERR_STALE: the base or the target was removed
 * meanwhile). */
static int diff_store(struct publish_diffs *d, const char *name, uint64_t target,
                      const uint8_t base_digest[32], const struct buffer *diff, uint64_t target_zstd,
                      struct store_body_info *measured)
{
	struct store_body_writer *writer = NULL;
	int rc = store_diff_begin(d->o.store, name, target, base_digest, &writer);
	if (rc)
		return rc;
	if ((rc = store_body_write(writer, diff->data, diff->len)) == 0)
		rc = store_diff_measure(writer, measured);
	/* The diff is written and synced under its part names, not yet offered. */
	fault_point("diffs-measured");
	if (rc == 0 &&
	    !snapshot_diff_worth_offering((size_t)measured->size[ENCODING_ZSTD], (size_t)target_zstd))
		rc = 1;
	if (rc) {
		store_body_discard(writer);
		return rc;
	}
	return store_diff_keep(writer);
}

/* The body of one epoch, read from the store at most once for all that is built from it. */
struct target_body {
	struct buffer bytes; /* decoded, as publish_stored_body_read gives it */
	bool read;
};

/* Reads target's body into t unless it was read already. Returns 0 or publish_stored_body_read's
 * error. */
static int target_body_read(struct publish_diffs *d, size_t i, uint64_t target, struct target_body *t)
{
	struct snapshot_header header;
	if (t->read)
		return 0;
	buffer_reset(&t->bytes);
	int rc = publish_stored_body_read(d->o.config, d->o.store, d->o.config->namespaces[i].name, target,
	                                  &header, &t->bytes);
	t->read = rc == 0;
	return rc;
}

/* Builds the diffs to namespace i's body of target from each base within diffs.bases; the target's
 * body is read into t when a first diff is to be built. */
static void epoch_build(struct publish_diffs *d, size_t i, uint64_t target, struct target_body *t,
                        struct epoch_outcome *out)
{
	const struct config *config = d->o.config;
	const struct config_namespace *ns = &config->namespaces[i];
	const struct snapshot_body_limits limits = {config->bounds.records_per_snapshot,
	                                            config_max_health(config), ns->max_revocations};
	struct snapshot_header base_header;
	struct store_body_info target_info, base_info;
	struct buffer base_body, note, diff;
	buffer_init(&base_body);
	buffer_init(&note);
	buffer_init(&diff);
	memset(out, 0, sizeof *out);
	int rc = store_snapshot_get(d->o.store, ns->name, target, &note, &target_info);
	for (uint64_t back = 1; rc == 0 && back <= config->diffs.bases && back <= target; back++) {
		uint64_t base = target - back;
		if (stopping(d))
			break;
		int fd;
		uint64_t size;
		int found = store_snapshot_get(d->o.store, ns->name, base, &note, &base_info);
		if (found == DIRAUTH_ERR_NOT_FOUND || found == DIRAUTH_ERR_STALE)
			continue; /* never published here, or past the retention window */
		if (found == 0 &&
		    store_diff_open(d->o.store, ns->name, target, base_info.sha256[ENCODING_IDENTITY],
		                    ENCODING_IDENTITY, &fd, &size) == 0) {
			close(fd);
			out->held++;
			continue;
		}
		/* The target is read once, when a first diff is to be built. */
		int step = found;
		if (step == 0 && !t->read) {
			step = target_body_read(d, i, target, t);
			if (step) {
				rc = step; /* no diff to a target that cannot be read */
				base = target;
			}
		}
		buffer_reset(&base_body);
		buffer_reset(&diff);
		if (step == 0)
			step = publish_stored_body_read(config, d->o.store, ns->name, base, &base_header,
			                                &base_body);
		if (step == 0)
			step = snapshot_diff_build(base_body.data, base_body.len, t->bytes.data, t->bytes.len,
			                           &limits, &diff);
		struct store_body_info measured;
		if (step == 0)
			step = diff_store(d, ns->name, target, base_info.sha256[ENCODING_IDENTITY], &diff,
			                  target_info.size[ENCODING_ZSTD], &measured);
		if (step == 0) {
			out->built++;
			for (int e = 0; e < ENCODING_COUNT; e++)
				out->bytes[e] += measured.size[e];
		} else if (step == 1) {
			out->not_offered++;
		} else if (step == DIRAUTH_ERR_STALE) {
			out->stale++; /* retention removed the base meanwhile: nothing to offer */
		} else {
			out->failed++;
			if (!out->first_error) {
				out->first_error = step;
				out->first_error_base = base;
			}
		}
	}
	if (rc && rc != DIRAUTH_ERR_NOT_FOUND && rc != DIRAUTH_ERR_STALE && !out->first_error) {
		out->failed++;
		out->first_error = rc;
		out->first_error_base = target;
	}
	buffer_free(&base_body);
	buffer_free(&note);
	buffer_free(&diff);
}

/* Builds and stores namespace i's record shards of epoch unless they are held, from its body in t
 * (read now unless the diffs read it). Returns 0 built, 1 held already or stopped, or an error
 * (DIRAUTH_ERR_NOT_FOUND, DIRAUTH_ERR_STALE: no body to build from). */
static int shards_build(struct publish_diffs *d, size_t i, uint64_t epoch, struct target_body *t,
                        uint32_t *shards)
{
	const struct config *config = d->o.config;
	const struct config_namespace *ns = &config->namespaces[i];
	const struct snapshot_body_limits limits = {config->bounds.records_per_snapshot,
	                                            config_max_health(config), ns->max_revocations};
	struct buffer shard;
	struct record_shard_builder *builder = NULL;
	struct store_record_shards_writer *writer = NULL;
	*shards = 0;
	if (store_record_shards_held(d->o.store, ns->name, epoch))
		return 1;
	buffer_init(&shard);
	int rc = target_body_read(d, i, epoch, t);
	if (rc == 0)
		rc = record_shard_builder_new(t->bytes.data, t->bytes.len, &limits, &builder);
	if (rc == 0)
		rc = store_record_shards_begin(d->o.store, ns->name, epoch,
		                               record_shard_builder_bits(builder), &writer);
	uint32_t count = rc == 0 ? UINT32_C(1) << record_shard_builder_bits(builder) : 0;
	bool stopped = false;
	for (uint32_t index = 0; rc == 0 && index < count; index++) {
		/* A stop drops the part file; the next start builds the shards again. */
		if ((index & 1023) == 0 && (stopped = stopping(d)))
			break;
		buffer_reset(&shard);
		rc = record_shard_builder_shard(builder, index, &shard);
		if (rc == 0)
			rc = store_record_shards_add(writer, shard.data, shard.len);
	}
	if (rc == 0 && !stopped) {
		rc = store_record_shards_finish(writer);
		*shards = count;
	} else {
		store_record_shards_discard(writer);
		rc = stopped ? 1 : rc;
	}
	record_shard_builder_free(builder);
	buffer_free(&shard);
	return rc;
}

static void epoch_log(struct publish_diffs *d, size_t i, uint64_t target, const struct epoch_outcome *e)
{
	const char *name = d->o.config->namespaces[i].name;
	FILE *log = d->o.log ? d->o.log : stderr;
	if (e->failed)
		logline_write(log, "dirauthd", target, name,
		              "diffs of epoch %llu: %zu built, %zu held already, %zu not worth offering, %zu "
		              "failed (first: from epoch %llu: %s)",
		              (unsigned long long)target, e->built, e->held, e->not_offered, e->failed,
		              (unsigned long long)e->first_error_base, dirauth_strerror(e->first_error));
	else if (e->built || e->not_offered)
		logline_write(
		    log, "dirauthd", target, name,
		    "diffs of epoch %llu: %zu built, %zu held already, %zu not worth offering (over "
		    "%d%% of the zstd body)",
		    (unsigned long long)target, e->built, e->held, e->not_offered,
		    SNAPSHOT_DIFF_OFFER_PERCENT);
}

static void *builder_run(void *context)
{
	struct publish_diffs *d = context;
	size_t count = d->o.config->namespace_count;
	pthread_mutex_lock(&d->lock);
	for (;;) {
		size_t chosen = count;
		for (size_t k = 0; k < count && chosen == count; k++)
			if (d->pending[(d->next + k) % count])
				chosen = (d->next + k) % count;
		if (d->stopping)
			break;
		if (chosen == count) {
			pthread_cond_wait(&d->changed, &d->lock);
			continue;
		}
		uint64_t epoch = d->pending_epoch[chosen];
		d->pending[chosen] = false;
		d->next = (chosen + 1) % count;
		d->busy = true;
		pthread_mutex_unlock(&d->lock);

		struct epoch_outcome outcome;
		struct target_body target = {{0}, false};
		buffer_init(&target.bytes);
		epoch_build(d, chosen, epoch, &target, &outcome);
		epoch_log(d, chosen, epoch, &outcome);
		uint32_t shards;
		int shards_rc = stopping(d) ? 1 : shards_build(d, chosen, epoch, &target, &shards);
		buffer_free(&target.bytes);
		/* Not found or stale: no body to build from (gone by retention), which is no failure. */
		bool shards_failed =
		    shards_rc < 0 && shards_rc != DIRAUTH_ERR_NOT_FOUND && shards_rc != DIRAUTH_ERR_STALE;
		if (shards_failed)
			logline_write(d->o.log ? d->o.log : stderr, "dirauthd", epoch,
			              d->o.config->namespaces[chosen].name,
			              "record shards of epoch %llu failed: %s", (unsigned long long)epoch,
			              dirauth_strerror(shards_rc));

		pthread_mutex_lock(&d->lock);
		d->busy = false;
		d->statistics.built += outcome.built;
		d->statistics.held += outcome.held;
		d->statistics.not_offered += outcome.not_offered;
		d->statistics.failed += outcome.failed;
		d->statistics.epochs++;
		for (int e = 0; e < ENCODING_COUNT; e++)
			d->statistics.bytes[chosen][e] += outcome.bytes[e];
		d->statistics.shard_epochs += shards_rc == 0;
		d->statistics.shard_failures += shards_failed;
		pthread_cond_broadcast(&d->changed);
	}
	d->busy = false;
	pthread_cond_broadcast(&d->changed);
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

int publish_diffs_start(const struct publish_diffs_options *options, struct publish_diffs **out)
{
	*out = NULL;
	struct publish_diffs *d = calloc(1, sizeof *d);
	if (!d)
		return DIRAUTH_ERR_NOMEM;
	d->o = *options;
	if (pthread_mutex_init(&d->lock, NULL) != 0) {
		free(d);
		return DIRAUTH_ERR_INTERNAL;
	}
	if (pthread_cond_init(&d->changed, NULL) != 0) {
		pthread_mutex_destroy(&d->lock);
		free(d);
		return DIRAUTH_ERR_INTERNAL;
	}
	/* What a stop or a crash may have left unbuilt. */
	for (size_t i = 0; i < options->config->namespace_count; i++) {
		uint64_t latest;
		if (store_snapshot_latest(options->store, options->config->namespaces[i].name, &latest) ==
		    0) {
			d->pending[i] = true;
			d->pending_epoch[i] = latest;
		}
	}
	if (pthread_create(&d->thread, NULL, builder_run, d) != 0) {
		pthread_cond_destroy(&d->changed);
		pthread_mutex_destroy(&d->lock);
		free(d);
		return DIRAUTH_ERR_INTERNAL;
	}
	*out = d;
	return 0;
}

void publish_diffs_request(struct publish_diffs *d, size_t namespace_index, uint64_t epoch)
{
	if (!d || namespace_index >= d->o.config->namespace_count)
		return;
	pthread_mutex_lock(&d->lock);
	if (d->pending[namespace_index] && d->pending_epoch[namespace_index] != epoch)
		d->statistics.dropped++;
	d->pending[namespace_index] = true;
	d->pending_epoch[namespace_index] = epoch;
	pthread_cond_broadcast(&d->changed);
	pthread_mutex_unlock(&d->lock);
}

void publish_diffs_wait_idle(struct publish_diffs *d)
{
	if (!d)
		return;
	pthread_mutex_lock(&d->lock);
	for (;;) {
		bool pending = false;
		for (size_t i = 0; i < d->o.config->namespace_count; i++)
			pending = pending || d->pending[i];
		if (d->stopping || (!pending && !d->busy))
			break;
		pthread_cond_wait(&d->changed, &d->lock);
	}
	pthread_mutex_unlock(&d->lock);
}

void publish_diffs_statistics(struct publish_diffs *d, struct publish_diffs_statistics *out)
{
	memset(out, 0, sizeof *out);
	if (!d)
		return;
	pthread_mutex_lock(&d->lock);
	*out = d->statistics;
	pthread_mutex_unlock(&d->lock);
}

void publish_diffs_stop(struct publish_diffs *d)
{
	if (!d)
		return;
	pthread_mutex_lock(&d->lock);
	d->stopping = true;
	pthread_cond_broadcast(&d->changed);
	pthread_mutex_unlock(&d->lock);
	pthread_join(d->thread, NULL);
	pthread_cond_destroy(&d->changed);
	pthread_mutex_destroy(&d->lock);
	free(d);
}
