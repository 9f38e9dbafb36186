/*
 * base.c: the base of votes sent as deltas: the vote body the latest snapshot stored here stands
 * for (publish_vote_base), built once per snapshot and shared.
 *
 * Every member votes with the latest published snapshot as its previous, so its vote differs
 * from what that snapshot holds by what changed in one epoch: a few percent of the records. A
 * vote is pushed as a delta against it (schema/vote-delta.md), and the receiver rebuilds the body
 * from the same base. Building a base reads and hashes the whole snapshot body, so it is kept:
 * one per namespace, for the latest snapshot, replaced when a newer one is stored. It is shared
 * by the scheduler's thread (pushing) and the HTTP threads (accepting): a reference keeps a base
 * alive while it is read, and the lock only guards the pointer.
 *
 * Only the latest stored snapshot is ever a base, so a stranger's request cannot make this
 * authority read and hash an old body: a delta against anything else is refused as unknown.
 */
#include "server/round/internal.h"

#include "base/error.h"
#include "server/publish/publish.h"
#include "server/publish/vote.h"

#include <stdlib.h>
#include <string.h>

struct round_base {
	uint64_t epoch;
	uint8_t digest[32];
	struct vote_body *body;
	unsigned references; /* under the round's base_lock */
};

static void base_drop(struct round_base *base)
{
	if (base && --base->references == 0) {
		vote_body_free(base->body);
		free(base);
	}
}

void round_base_release(struct round *round, struct round_base *base)
{
	if (!base)
		return;
	pthread_mutex_lock(&round->base_lock);
	base_drop(base);
	pthread_mutex_unlock(&round->base_lock);
}

const struct vote_body *round_base_body(const struct round_base *base, uint8_t digest[32])
{
	if (digest)
		memcpy(digest, base->digest, 32);
	return base->body;
}

int round_base_latest(struct round *round, size_t i, struct round_base **out)
{
	const struct config *config = round->o.config;
	int have = 0;
	uint64_t epoch = 0;
	uint8_t digest[32];
	*out = NULL;
	int rc = publish_latest_digest(round->o.store, config->namespaces[i].name, &have, &epoch, digest);
	if (rc)
		return rc;
	if (!have)
		return DIRAUTH_ERR_NOT_FOUND;
	pthread_mutex_lock(&round->base_lock);
	struct round_base *base = round->bases[i];
	if (base && base->epoch == epoch && memcmp(base->digest, digest, 32) == 0) {
		base->references++;
		pthread_mutex_unlock(&round->base_lock);
		*out = base;
		return 0;
	}
	pthread_mutex_unlock(&round->base_lock);
	/* Built outside the lock: two threads may build the same base at once; one is kept. */
	struct round_base *built = calloc(1, sizeof *built);
	if (!built)
		return DIRAUTH_ERR_NOMEM;
	built->epoch = epoch;
	memcpy(built->digest, digest, 32);
	built->references = 2; /* the cache's and the caller's */
	if ((rc = publish_vote_base(config, round->o.store, i, epoch, digest, &built->body)) != 0) {
		free(built);
		return rc;
	}
	pthread_mutex_lock(&round->base_lock);
	struct round_base *old = round->bases[i];
	if (!old || old->epoch < epoch) {
		round->bases[i] = built;
		if (old)
			base_drop(old);
	} else {
		built->references--; /* not cached: a newer one was */
	}
	pthread_mutex_unlock(&round->base_lock);
	*out = built;
	return 0;
}

void round_bases_free(struct round *round)
{
	for (size_t i = 0; i < CONFIG_MAX_NAMESPACES; i++) {
		if (round->bases[i])
			base_drop(round->bases[i]);
		round->bases[i] = NULL;
	}
}
