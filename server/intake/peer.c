/*
 * peer.c: notes from peers taken many at a time (see peer.h).
 *
 * Each note goes through the one asynchronous path every statement takes (pending.h), through
 * its kind's entry, from the source INTAKE_FROM_PEER; the callbacks count down, and the caller's thread waits
 * for the count to reach zero. The store bounds what may wait for its committer and blocks the submitter
 * beyond that, so a long list never floods it.
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
		struct submit_result refused;
		slots[n] = (struct take_slot){&batch, &notes[n]};
		pthread_mutex_lock(&batch.lock);
		batch.waiting++;
		pthread_mutex_unlock(&batch.lock);
		enum api_error error =
		    intake_submit_start(notes[n].kind, INTAKE_FROM_PEER, context, notes[n].note, notes[n].len,
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
