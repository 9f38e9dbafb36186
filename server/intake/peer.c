/*
 * peer.c: notes from peers taken many at a time (see peer.h).
 *
 * Each note goes through the one asynchronous path every submission takes (pending.h), marked as
 * coming from a peer; the callbacks count down, and the caller's thread waits for the count to
 * reach zero. The store bounds what may wait for its committer and blocks the submitter beyond
 * that, so a long list never floods it.
 */
#include "server/intake/peer.h"

#include "server/intake/pending.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

struct take_batch {
	pthread_mutex_t lock;
	pthread_cond_t done;
	size_t waiting;
	size_t stored;
};

struct take_slot {
	struct take_batch *batch;
	struct intake_peer_note *note;
};

static const struct intake_pending_kind *peer_kind(enum intake_peer_kind kind)
{
	switch (kind) {
	case INTAKE_PEER_REGISTRATION:
		return &intake_registration_kind;
	case INTAKE_PEER_HEALTH:
		return &intake_health_kind;
	case INTAKE_PEER_REVOCATION:
		return &intake_revocation_kind;
	}
	return NULL;
}

static void on_taken(void *context, struct submit_result *result)
{
	struct take_slot *slot = context;
	struct take_batch *batch = slot->batch;
	slot->note->error = result->error;
	buffer_free(&result->receipt);
	pthread_mutex_lock(&batch->lock);
	if (result->error == API_ERROR_NONE)
		batch->stored++;
	if (--batch->waiting == 0)
		pthread_cond_signal(&batch->done);
	pthread_mutex_unlock(&batch->lock);
}

size_t intake_take_peer_notes(const struct submit_context *context, struct intake_peer_note *notes,
                              size_t count)
{
	struct take_batch batch = {.waiting = 1, .stored = 0};
	struct take_slot *slots = count ? calloc(count, sizeof *slots) : NULL;
	if (count && !slots) {
		for (size_t n = 0; n < count; n++)
			notes[n].error = API_ERROR_INTERNAL;
		return 0;
	}
	pthread_mutex_init(&batch.lock, NULL);
	pthread_cond_init(&batch.done, NULL);
	for (size_t n = 0; n < count; n++) {
		const struct intake_pending_kind *kind = peer_kind(notes[n].kind);
		struct submit_result refused;
		slots[n] = (struct take_slot){&batch, &notes[n]};
		if (!kind) {
			notes[n].error = API_ERROR_INTERNAL;
			continue;
		}
		pthread_mutex_lock(&batch.lock);
		batch.waiting++;
		pthread_mutex_unlock(&batch.lock);
		enum api_error error = intake_pending_start(kind, context, notes[n].note, notes[n].len, true,
		                                            on_taken, &slots[n], &refused);
		if (error != API_ERROR_NONE) {
			/* Refused before the store: the callback will not come. */
			notes[n].error = error;
			buffer_free(&refused.receipt);
			pthread_mutex_lock(&batch.lock);
			batch.waiting--;
			pthread_mutex_unlock(&batch.lock);
		}
	}
	pthread_mutex_lock(&batch.lock);
	batch.waiting--; /* the count's own hold, taken so that it cannot reach 0 while starting */
	while (batch.waiting > 0)
		pthread_cond_wait(&batch.done, &batch.lock);
	size_t stored = batch.stored;
	pthread_mutex_unlock(&batch.lock);
	pthread_cond_destroy(&batch.done);
	pthread_mutex_destroy(&batch.lock);
	free(slots);
	return stored;
}
