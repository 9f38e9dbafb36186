/*
 * gather.c: the notes the held votes list that this authority lacks, fetched in bulk from the
 * members that listed them, checked, stored, and kept for the consensus.
 *
 * Once the votes are in, every registration, health statement and revocation the rule may ask
 * for is known: what some counting vote lists and this authority holds neither in its own vote,
 * nor in its store, nor among the notes gathered earlier in the epoch. So they are fetched before
 * the rule runs, never from inside it: many per request (POST /v1/<ns>/notes, at most
 * NOTES_REQUEST_MAX_ITEMS items and NOTES_ANSWER_MAX_BYTES of answer), from every member at
 * once, each member asked only for notes its own vote listed. The wanted notes are dealt out as
 * shares, each to the least loaded member that listed it; each member's thread then asks for its
 * share request after request on its kept-alive connection (peer_client.h), so a slow member
 * delays only its own share and a fast one is never held back by it.
 *
 * A note counts only when its SHA-256 is the digest the vote listed and it passes the checks
 * intake makes of a note learned from a peer (server/intake): a registration its provider's
 * enrolment, signature and fields; a health statement its grammar and the line's fields (its
 * signature the rule checks against the published registration); a revocation who may make it
 * and its signature. A member that answers without a note it listed, or with one that fails, has
 * declined it; a member whose request fails is dropped for the rest of the gathering; what they
 * held back is dealt again, once per pass, to another member that listed it, until every note is
 * here, no member is left to ask, or the deadline passes.
 *
 * What was fetched is kept twice over: in the round's notes (round_notes), which the consensus
 * reads beside the store, and in the store, into which every note newer than what it holds is
 * taken as intake takes one from a peer (server/intake/peer.h), registrations first so that the
 * statements about them find them. So work is never thrown away: an epoch that fails still leaves
 * its notes stored, and the next epoch's vote lists them without fetching them again.
 */
#include "server/round/internal.h"

#include "crypto/crypto.h"
#include "base/error.h"
#include "schema/health.h"
#include "schema/notes_bundle.h"
#include "server/intake/statements.h"
#include "server/intake/peer.h"
#include "server/intake/submit.h"
#include "server/store/registrations.h"
#include "server/store/statements.h"

#include <stdlib.h>
#include <string.h>

/* Passes over the notes still wanted, each dealing them out again to members not yet asked. */
#define GATHER_PASSES 4

/* ---- the notes gathered ---- */

static int note_compare(const void *a, const void *b)
{
	return memcmp(((const struct round_note *)a)->digest, ((const struct round_note *)b)->digest, 32);
}

int round_notes_find(const struct round_notes *notes, const uint8_t digest[32], const uint8_t **note,
                     size_t *len)
{
	size_t low = 0, high = notes->sorted;
	while (low < high) {
		size_t middle = low + (high - low) / 2;
		int order = memcmp(notes->items[middle].digest, digest, 32);
		if (order == 0) {
			*note = notes->items[middle].note;
			*len = notes->items[middle].len;
			return 0;
		}
		if (order < 0)
			low = middle + 1;
		else
			high = middle;
	}
	/* Those added since the last sort. */
	for (size_t n = notes->sorted; n < notes->count; n++)
		if (memcmp(notes->items[n].digest, digest, 32) == 0) {
			*note = notes->items[n].note;
			*len = notes->items[n].len;
			return 0;
		}
	return DIRAUTH_ERR_NOT_FOUND;
}

/* Adds a copy of note under digest. */
static int notes_add(struct round_notes *notes, enum round_note_kind kind, const uint8_t digest[32],
                     const uint8_t *note, size_t len)
{
	if (notes->count == notes->cap) {
		size_t cap = notes->cap ? notes->cap * 2 : 256;
		struct round_note *grown = realloc(notes->items, cap * sizeof *grown);
		if (!grown)
			return DIRAUTH_ERR_NOMEM;
		notes->items = grown;
		notes->cap = cap;
	}
	struct round_note *n = &notes->items[notes->count];
	n->note = malloc(len ? len : 1);
	if (!n->note)
		return DIRAUTH_ERR_NOMEM;
	memcpy(n->note, note, len);
	memcpy(n->digest, digest, 32);
	n->len = len;
	n->kind = kind;
	n->stored = false;
	notes->count++;
	return 0;
}

static void notes_sort(struct round_notes *notes)
{
	if (notes->count > 1) /* none gathered yet: items is NULL, which qsort may not be given */
		qsort(notes->items, notes->count, sizeof *notes->items, note_compare);
	notes->sorted = notes->count;
}

void round_notes_clear(struct round_notes *notes)
{
	for (size_t n = 0; n < notes->count; n++)
		free(notes->items[n].note);
	free(notes->items);
	memset(notes, 0, sizeof *notes);
}

/* ---- what is wanted ---- */

enum wanted_state { WANTED_PENDING, WANTED_ASKED, WANTED_DONE, WANTED_UNAVAILABLE };

struct wanted {
	enum round_note_kind kind;
	uint8_t digest[32];
	uint8_t service_id[SERVICE_ID_SIZE];
	uint8_t endpoint_id[ENDPOINT_ID_SIZE]; /* health */
	uint64_t sequence;                     /* registration, health */
	uint64_t issued_at;                    /* health */
	uint32_t listed;                       /* members whose vote lists it */
	uint32_t declined;                     /* members that did not give it (or gave a bad one) */
	int share;                             /* the member it is dealt to; -1 none */
	enum wanted_state state;
};

struct gathering {
	struct round *round;
	size_t namespace_index;
	uint64_t now;
	uint64_t valid_after;
	uint64_t deadline_ms;
	pthread_mutex_t lock; /* guards items' state, the round's notes, failed and the counts */
	struct wanted *items;
	size_t count, cap, limit;
	bool over_limit;
	uint32_t failed; /* members whose request failed: not asked again */
	size_t load[CONFIG_MAX_MEMBERS];
	struct round_gather_stats *stats;
};

static int wanted_compare(const void *a, const void *b)
{
	const struct wanted *x = a, *y = b;
	int order = memcmp(x->digest, y->digest, 32);
	return order ? order : (int)x->kind - (int)y->kind;
}

static int wanted_add(struct gathering *g, const struct wanted *w)
{
	if (g->count == g->limit) {
		g->over_limit = true;
		return 0;
	}
	if (g->count == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 1024;
		struct wanted *grown = realloc(g->items, cap * sizeof *grown);
		if (!grown)
			return DIRAUTH_ERR_NOMEM;
		g->items = grown;
		g->cap = cap;
	}
	g->items[g->count++] = *w;
	return 0;
}

/* One entry per note: the same digest listed by several members merges their marks. */
static void wanted_merge(struct gathering *g)
{
	if (g->count == 0)
		return;
	qsort(g->items, g->count, sizeof *g->items, wanted_compare);
	size_t kept = 1;
	for (size_t n = 1; n < g->count; n++) {
		if (wanted_compare(&g->items[kept - 1], &g->items[n]) == 0)
			g->items[kept - 1].listed |= g->items[n].listed;
		else
			g->items[kept++] = g->items[n];
	}
	g->count = kept;
}

static const struct vote_body_record *own_record(const struct vote_body *own, const uint8_t *service_id)
{
	size_t low = 0, high = own ? own->record_count : 0;
	while (low < high) {
		size_t middle = low + (high - low) / 2;
		int order = memcmp(own->records[middle].service_id, service_id, SERVICE_ID_SIZE);
		if (order == 0)
			return &own->records[middle];
		if (order < 0)
			low = middle + 1;
		else
			high = middle;
	}
	return NULL;
}

static const struct vote_body_health *own_health(const struct vote_body *own,
                                                 const struct vote_body_health *line)
{
	size_t low = 0, high = own ? own->health_count : 0;
	while (low < high) {
		size_t middle = low + (high - low) / 2;
		int order = vote_body_health_compare(&own->health[middle], line);
		if (order == 0)
			return &own->health[middle];
		if (order < 0)
			low = middle + 1;
		else
			high = middle;
	}
	return NULL;
}

/* Whether a statement or revocation with digest is held here: gathered before, or stored. */
static bool statement_held(struct gathering *g, const uint8_t *digest)
{
	struct round *round = g->round;
	const uint8_t *note;
	size_t len;
	if (round_notes_find(&round->ns[g->namespace_index].notes, digest, &note, &len) == 0)
		return true;
	struct buffer held;
	buffer_init(&held);
	int rc = store_statement_get(round->o.store, round->o.config->namespaces[g->namespace_index].name,
	                             digest, &held);
	buffer_free(&held);
	return rc != DIRAUTH_ERR_NOT_FOUND;
}

/* Whether the registration version is held here. */
static bool registration_held(struct gathering *g, const struct vote_body *own,
                              const struct vote_body_record *line)
{
	struct round *round = g->round;
	const struct vote_body_record *mine = own_record(own, line->service_id);
	if (mine && mine->sequence == line->sequence &&
	    memcmp(mine->registration_sha256, line->registration_sha256, 32) == 0)
		return true;
	const uint8_t *note;
	size_t len;
	if (round_notes_find(&round->ns[g->namespace_index].notes, line->registration_sha256, &note, &len) ==
	    0)
		return true;
	struct buffer held;
	uint8_t digest[32];
	buffer_init(&held);
	bool same =
	    store_registration_get(round->o.store, round->o.config->namespaces[g->namespace_index].name,
	                           line->service_id, line->sequence, &held) == 0 &&
	    crypto_sha256(held.data, held.len, digest) == 0 &&
	    memcmp(digest, line->registration_sha256, 32) == 0;
	buffer_free(&held);
	return same;
}

/* Everything the bodies list that is not held here. */
static int collect_wanted(struct gathering *g, const struct vote_body *const *bodies,
                          const struct vote_body *own)
{
	const struct config *config = g->round->o.config;
	int rc = 0;
	for (size_t m = 0; rc == 0 && m < config->member_count; m++) {
		const struct vote_body *body = bodies[m];
		uint32_t bit = (uint32_t)1 << m;
		if (m == config->self_index || !body)
			continue;
		for (size_t r = 0; rc == 0 && r < body->record_count; r++) {
			const struct vote_body_record *line = &body->records[r];
			if (registration_held(g, own, line))
				continue;
			struct wanted w = {.kind = ROUND_NOTE_REGISTRATION,
			                   .sequence = line->sequence,
			                   .listed = bit,
			                   .share = -1};
			memcpy(w.digest, line->registration_sha256, 32);
			memcpy(w.service_id, line->service_id, SERVICE_ID_SIZE);
			rc = wanted_add(g, &w);
		}
		for (size_t h = 0; rc == 0 && h < body->health_count; h++) {
			const struct vote_body_health *line = &body->health[h];
			const struct vote_body_health *mine = own_health(own, line);
			if ((mine && memcmp(mine->statement_sha256, line->statement_sha256, 32) == 0) ||
			    statement_held(g, line->statement_sha256))
				continue;
			struct wanted w = {.kind = ROUND_NOTE_HEALTH,
			                   .sequence = line->sequence,
			                   .issued_at = line->issued_at,
			                   .listed = bit,
			                   .share = -1};
			memcpy(w.digest, line->statement_sha256, 32);
			memcpy(w.service_id, line->service_id, SERVICE_ID_SIZE);
			memcpy(w.endpoint_id, line->endpoint_id, ENDPOINT_ID_SIZE);
			rc = wanted_add(g, &w);
		}
		for (size_t v = 0; rc == 0 && v < body->revocation_count; v++) {
			const struct vote_body_revocation *line = &body->revocations[v];
			if (statement_held(g, line->revocation_sha256))
				continue;
			struct wanted w = {.kind = ROUND_NOTE_REVOCATION, .listed = bit, .share = -1};
			memcpy(w.digest, line->revocation_sha256, 32);
			memcpy(w.service_id, line->service_id, SERVICE_ID_SIZE);
			rc = wanted_add(g, &w);
		}
	}
	if (rc == 0)
		wanted_merge(g);
	return rc;
}

/* ---- the checks of a fetched note ---- */

/* The configuration whose live keys (the enrolled providers, the operators: server/config/reload.h)
 * a peer's note is checked against: the current one, held for the check; the round's own when it
 * was given no holder. */
static const struct config *live_take(const struct round *round)
{
	return round->o.live ? config_live_acquire(round->o.live) : round->o.config;
}

static void live_give_back(const struct round *round, const struct config *config)
{
	if (round->o.live)
		config_live_release(round->o.live, config);
}

/* A peer's registration checked as intake checks a provider's, for the line's service and
 * sequence, not expired at the epoch's valid-after. */
static int check_registration(struct gathering *g, const struct wanted *w, const uint8_t *data, size_t len)
{
	const struct config *config = g->round->o.config;
	struct registration r;
	struct note *parsed = NULL;
	struct submit_result result;
	const struct config *live = live_take(g->round);
	enum api_error error = submit_check_note(live, data, len, g->now, &r, &parsed, &result);
	live_give_back(g->round, live);
	if (error != API_ERROR_NONE)
		return DIRAUTH_ERR_REFUSED;
	int rc = 0;
	if (strcmp(r.namespace_name, config->namespaces[g->namespace_index].name) != 0 ||
	    memcmp(r.service_id, w->service_id, SERVICE_ID_SIZE) != 0 || r.sequence != w->sequence ||
	    r.expires <= g->valid_after)
		rc = DIRAUTH_ERR_REFUSED;
	registration_clear(&r);
	note_free(parsed);
	return rc;
}

/* A peer's health statement: its grammar (coarse classes only) and size, and the line's fields,
 * not issued later than the clock skew allows. Its signature is checked by the consensus against
 * the published registration. */
static int check_health(struct gathering *g, const struct wanted *w, const uint8_t *data, size_t len)
{
	const struct config *config = g->round->o.config;
	struct health_statement statement;
	struct note *parsed = NULL;
	if (len > HEALTH_MAX_BYTES)
		return DIRAUTH_ERR_BOUNDS;
	int rc = health_parse_note(data, len, &statement, &parsed);
	note_free(parsed);
	if (rc)
		return rc == DIRAUTH_ERR_NOMEM ? rc : DIRAUTH_ERR_SYNTAX;
	if (strcmp(statement.namespace_name, config->namespaces[g->namespace_index].name) != 0 ||
	    memcmp(statement.service_id, w->service_id, SERVICE_ID_SIZE) != 0 ||
	    memcmp(statement.endpoint_id, w->endpoint_id, ENDPOINT_ID_SIZE) != 0 ||
	    statement.issued_at != w->issued_at || statement.sequence != w->sequence)
		return DIRAUTH_ERR_MISMATCH;
	if (statement.issued_at > g->now + config->bounds.clock_skew_seconds)
		return DIRAUTH_ERR_REFUSED;
	return 0;
}

/* A peer's revocation: the checks of intake for a revocation learned from a peer (the target
 * registered here, who may revoke it, the signature). */
static int check_revocation(struct gathering *g, const uint8_t *data, size_t len)
{
	const struct round_options *o = &g->round->o;
	struct submit_context submit = {live_take(g->round), o->store, o->signer, o->signer_health, o->clock};
	struct submit_result result;
	enum api_error error = submit_check_peer_revocation(&submit, data, len, &result);
	live_give_back(g->round, submit.config);
	if (error == API_ERROR_INTERNAL)
		return DIRAUTH_ERR_INTERNAL;
	return error == API_ERROR_NONE ? 0 : DIRAUTH_ERR_REFUSED;
}

static int check_note(struct gathering *g, const struct wanted *w, const uint8_t *data, size_t len)
{
	uint8_t digest[32];
	int rc = crypto_sha256(data, len, digest);
	if (rc)
		return rc;
	if (memcmp(digest, w->digest, 32) != 0)
		return DIRAUTH_ERR_MISMATCH;
	switch (w->kind) {
	case ROUND_NOTE_REGISTRATION:
		return check_registration(g, w, data, len);
	case ROUND_NOTE_HEALTH:
		return check_health(g, w, data, len);
	case ROUND_NOTE_REVOCATION:
		return check_revocation(g, data, len);
	}
	return DIRAUTH_ERR_INTERNAL;
}

/* ---- asking the members ---- */

/* Deals every note not dealt out to the least loaded member that listed it and has neither
 * declined it nor failed; a note nobody is left to give is unavailable. Returns how many are
 * dealt out. Called with the lock held or before the threads start. */
static size_t deal(struct gathering *g)
{
	const struct config *config = g->round->o.config;
	size_t dealt = 0;
	for (size_t n = 0; n < g->count; n++) {
		struct wanted *w = &g->items[n];
		if (w->state != WANTED_PENDING)
			continue;
		if (w->share >= 0) {
			dealt++;
			continue;
		}
		int best = -1;
		/* Start at a member that turns with the note, so that ties spread. */
		for (size_t k = 0; k < config->member_count; k++) {
			size_t m = (n + k) % config->member_count;
			uint32_t bit = (uint32_t)1 << m;
			if (m == config->self_index || !(w->listed & bit) || (w->declined & bit) ||
			    (g->failed & bit))
				continue;
			if (best < 0 || g->load[m] < g->load[best])
				best = (int)m;
		}
		if (best < 0) {
			w->state = WANTED_UNAVAILABLE;
			continue;
		}
		w->share = best;
		g->load[best]++;
		dealt++;
	}
	return dealt;
}

/* One member's request: the indexes of the notes it asks for. */
struct member_batch {
	size_t *items;
	size_t count;
	struct buffer request;
};

/* Takes the next request of member m's share (at most NOTES_REQUEST_MAX_ITEMS notes): 0 with
 * batch filled, or DIRAUTH_ERR_NOT_FOUND when its share is done. */
static int next_batch(struct gathering *g, size_t m, struct member_batch *batch)
{
	struct notes_item *asked = NULL;
	batch->count = 0;
	buffer_reset(&batch->request);
	pthread_mutex_lock(&g->lock);
	for (size_t n = 0; n < g->count && batch->count < NOTES_REQUEST_MAX_ITEMS; n++) {
		struct wanted *w = &g->items[n];
		if (w->state != WANTED_PENDING || w->share != (int)m)
			continue;
		w->state = WANTED_ASKED;
		batch->items[batch->count++] = n;
	}
	pthread_mutex_unlock(&g->lock);
	if (batch->count == 0)
		return DIRAUTH_ERR_NOT_FOUND;
	asked = calloc(batch->count, sizeof *asked);
	if (!asked)
		return DIRAUTH_ERR_NOMEM;
	for (size_t b = 0; b < batch->count; b++) {
		const struct wanted *w = &g->items[batch->items[b]];
		if (w->kind == ROUND_NOTE_REGISTRATION) {
			asked[b].kind = NOTES_ITEM_REGISTRATION;
			memcpy(asked[b].service_id, w->service_id, SERVICE_ID_SIZE);
			asked[b].sequence = w->sequence;
		} else {
			asked[b].kind = NOTES_ITEM_STATEMENT;
		}
		memcpy(asked[b].digest, w->digest, 32);
	}
	int rc = notes_request_encode(asked, batch->count, &batch->request);
	free(asked);
	return rc;
}

/* Puts back what a request did not settle: asked again of the same member (not reached), or
 * dealt again (declined; the member failed). */
static void put_back(struct gathering *g, const struct member_batch *batch, size_t from, size_t m,
                     bool declined)
{
	for (size_t b = from; b < batch->count; b++) {
		struct wanted *w = &g->items[batch->items[b]];
		if (w->state != WANTED_ASKED)
			continue;
		w->state = WANTED_PENDING;
		if (declined) {
			w->declined |= (uint32_t)1 << m;
			w->share = -1;
		}
	}
}

/* Judges member m's answer to batch. Returns 0 when the member answered (whatever it held), or
 * an error when it failed: then it is asked nothing more. */
static int take_answer(struct gathering *g, size_t m, const struct member_batch *batch,
                       const struct peer_answer *answer)
{
	const struct config *config = g->round->o.config;
	struct notes_answer_note *notes = NULL;
	size_t count = 0, covered = 0;
	int rc = DIRAUTH_ERR_UNAVAILABLE, fatal = 0;
	if (answer->transport == PEER_TRANSPORT_ANSWERED && answer->status == 200)
		rc = notes_answer_parse(answer->body.data, answer->body.len, batch->count,
		                        config->bounds.registration_body, &notes, &count, &covered);
	pthread_mutex_lock(&g->lock);
	g->stats->requests++;
	g->stats->bytes += answer->wire_bytes;
	if (rc) {
		g->failed |= (uint32_t)1 << m;
		g->stats->failed++;
		if (!g->stats->failure[0])
			snprintf(g->stats->failure, sizeof g->stats->failure, "%s: %s",
			         g->round->o.config->members[m].name,
			         answer->transport != PEER_TRANSPORT_ANSWERED || answer->status != 200
			             ? (answer->reason[0] ? answer->reason
			                                  : peer_transport_name(answer->transport))
			             : "its answer does not parse");
		put_back(g, batch, 0, m, true);
		pthread_mutex_unlock(&g->lock);
		return rc;
	}
	pthread_mutex_unlock(&g->lock);
	/* The checks verify signatures: outside the lock, so the members' threads check at once. */
	int *verdicts = count ? calloc(count, sizeof *verdicts) : NULL;
	if (count && !verdicts) {
		free(notes);
		return DIRAUTH_ERR_NOMEM;
	}
	for (size_t k = 0; k < count; k++)
		verdicts[k] =
		    check_note(g, &g->items[batch->items[notes[k].index]], notes[k].note, notes[k].len);
	pthread_mutex_lock(&g->lock);
	struct round_notes *kept = &g->round->ns[g->namespace_index].notes;
	for (size_t k = 0; k < count; k++) {
		struct wanted *w = &g->items[batch->items[notes[k].index]];
		if (w->state != WANTED_ASKED)
			continue;
		if (verdicts[k] == DIRAUTH_ERR_NOMEM || verdicts[k] == DIRAUTH_ERR_CRYPTO ||
		    verdicts[k] == DIRAUTH_ERR_INTERNAL)
			fatal = fatal ? fatal : verdicts[k];
		if (verdicts[k] == 0 &&
		    notes_add(kept, w->kind, w->digest, notes[k].note, notes[k].len) == 0) {
			w->state = WANTED_DONE;
			g->stats->fetched++;
		} else {
			w->state = WANTED_PENDING;
			w->declined |= (uint32_t)1 << m;
			w->share = -1;
			if (verdicts[k] != 0)
				g->stats->refused++;
		}
	}
	/* Not reached: asked again; reached without a note: declined. */
	for (size_t b = 0; b < covered && b < batch->count; b++) {
		struct wanted *w = &g->items[batch->items[b]];
		if (w->state == WANTED_ASKED) {
			w->state = WANTED_PENDING;
			w->declined |= (uint32_t)1 << m;
			w->share = -1;
		}
	}
	put_back(g, batch, covered, m, false);
	pthread_mutex_unlock(&g->lock);
	free(verdicts);
	free(notes);
	return fatal;
}

struct member_work {
	struct gathering *g;
	struct member_batch batches[CONFIG_MAX_MEMBERS];
	struct peer_call calls[CONFIG_MAX_MEMBERS];
};

/* Member m's first answer, then its next requests, in m's own thread, until its share is done,
 * it failed, or the deadline passed. */
static void on_member_answer(void *context, size_t m, const struct peer_answer *first)
{
	struct member_work *work = context;
	struct gathering *g = work->g;
	struct member_batch *batch = &work->batches[m];
	struct peer_answer answer;
	if (take_answer(g, m, batch, first) != 0)
		return;
	peer_answer_init(&answer);
	while (round_monotonic_ms() < g->deadline_ms && next_batch(g, m, batch) == 0) {
		struct peer_call call = work->calls[m];
		call.body = batch->request.data;
		call.body_len = batch->request.len;
		peer_client_call(g->round->o.peers, m, &call, &answer);
		if (take_answer(g, m, batch, &answer) != 0)
			break;
	}
	peer_answer_free(&answer);
}

/* One pass: every member with a share asked at once; returns once each has finished. */
static int run_pass(struct gathering *g)
{
	const struct config *config = g->round->o.config;
	struct member_work *work = calloc(1, sizeof *work);
	if (!work)
		return DIRAUTH_ERR_NOMEM;
	work->g = g;
	const struct peer_call *calls[CONFIG_MAX_MEMBERS] = {0};
	int rc = 0;
	for (size_t m = 0; rc == 0 && m < config->member_count; m++) {
		struct member_batch *batch = &work->batches[m];
		buffer_init(&batch->request);
		if (m == config->self_index)
			continue;
		batch->items = malloc(NOTES_REQUEST_MAX_ITEMS * sizeof *batch->items);
		if (!batch->items) {
			rc = DIRAUTH_ERR_NOMEM;
			break;
		}
		int got = next_batch(g, m, batch);
		if (got == DIRAUTH_ERR_NOT_FOUND)
			continue;
		if (got) {
			rc = got;
			break;
		}
		work->calls[m] =
		    (struct peer_call){.operation = PEER_FETCH_NOTES,
		                       .namespace_name = config->namespaces[g->namespace_index].name,
		                       .body = batch->request.data,
		                       .body_len = batch->request.len,
		                       .deadline_ms = g->deadline_ms};
		calls[m] = &work->calls[m];
	}
	if (rc == 0) {
		struct peers_broadcast_options options = {NULL, on_member_answer, work};
		struct peer_answer answers[CONFIG_MAX_MEMBERS];
		if ((rc = peers_call_each(g->round->o.peers, calls, &options, answers)) == 0)
			peer_answers_free(answers, config->member_count);
	}
	for (size_t m = 0; m < config->member_count; m++) {
		free(work->batches[m].items);
		buffer_free(&work->batches[m].request);
	}
	free(work);
	return rc;
}

/* ---- taking them into the store ---- */

static int peer_note_compare(const void *a, const void *b)
{
	const struct intake_peer_note *x = a, *y = b;
	return x->kind != y->kind ? (int)x->kind - (int)y->kind : 0;
}

size_t round_notes_store(struct round *round, size_t i)
{
	struct round_notes *notes = &round->ns[i].notes;
	const struct round_options *o = &round->o;
	struct submit_context submit = {o->config, o->store, o->signer, o->signer_health, o->clock};
	size_t count = 0, stored = 0;
	for (size_t n = 0; n < notes->count; n++)
		count += !notes->items[n].stored;
	if (count == 0)
		return 0;
	struct intake_peer_note *taken = calloc(count, sizeof *taken);
	if (!taken)
		return 0;
	count = 0;
	for (size_t n = 0; n < notes->count; n++) {
		struct round_note *note = &notes->items[n];
		if (note->stored)
			continue;
		note->stored = true;
		taken[count].kind = note->kind == ROUND_NOTE_REGISTRATION ? INTAKE_REGISTRATION
		                    : note->kind == ROUND_NOTE_HEALTH     ? INTAKE_HEALTH
		                                                          : INTAKE_REVOCATION;
		taken[count].note = note->note;
		taken[count++].len = note->len;
	}
	/* Registrations first, so that the statements about them find them. Of two versions of one
	 * service, whichever the store takes last is refused if lower: it keeps the latest anyway. */
	qsort(taken, count, sizeof *taken, peer_note_compare);
	size_t registrations = 0;
	while (registrations < count && taken[registrations].kind == INTAKE_REGISTRATION)
		registrations++;
	submit.config = live_take(round);
	stored += intake_take_peer_notes(&submit, taken, registrations);
	stored += intake_take_peer_notes(&submit, taken + registrations, count - registrations);
	live_give_back(round, submit.config);
	/* A version the store holds already, or an older one, is refused and changes nothing; any
	 * other refusal is worth a line. */
	size_t refused = 0;
	enum api_error first = API_ERROR_NONE;
	for (size_t n = 0; n < count; n++) {
		enum api_error e = taken[n].error;
		if (e == API_ERROR_NONE || e == API_ERROR_ROLLBACK || e == API_ERROR_REPLAYED ||
		    e == API_ERROR_REVOKED)
			continue;
		if (!refused++)
			first = e;
	}
	if (refused)
		round_log(
		    round, i, round->ns[i].epoch,
		    "%zu notes gathered from peers were refused by this authority's intake (the first: %s)",
		    refused, api_error_code(first));
	free(taken);
	return stored;
}

/* ---- the step ---- */

int round_gather(struct round *round, size_t i, const struct vote_body *const *bodies, uint64_t now,
                 uint64_t deadline_ms, struct round_gather_stats *stats)
{
	const struct config *config = round->o.config;
	struct round_namespace *rn = &round->ns[i];
	struct epoch_times times;
	struct gathering g = {
	    .round = round, .namespace_index = i, .now = now, .deadline_ms = deadline_ms, .stats = stats};
	uint64_t started = round_monotonic_ms();
	memset(stats, 0, sizeof *stats);
	int rc = schedule_epoch_times(&config->epoch, rn->epoch, &times);
	if (rc)
		return rc;
	g.valid_after = times.valid_after;
	/* What one honest vote may differ by: every record, health line and revocation it may list. */
	struct vote_body_limits limits;
	round_vote_limits(config, i, &limits);
	g.limit = limits.max_records + limits.max_health + limits.max_revocations;
	if ((rc = collect_wanted(&g, bodies, rn->own_body)) != 0) {
		free(g.items);
		return rc;
	}
	stats->wanted = g.count;
	uint64_t collected = round_monotonic_ms();
	stats->collect_ms = collected - started;
	pthread_mutex_init(&g.lock, NULL);
	for (int pass = 0; rc == 0 && pass < GATHER_PASSES && round_monotonic_ms() < deadline_ms; pass++) {
		if (deal(&g) == 0)
			break;
		rc = run_pass(&g);
	}
	pthread_mutex_destroy(&g.lock);
	for (size_t n = 0; n < g.count; n++)
		if (g.items[n].state != WANTED_DONE)
			stats->missing++;
	for (size_t m = 0; m < config->member_count; m++)
		if (g.load[m])
			stats->members++;
	if (g.over_limit)
		round_log(round, i, rn->epoch,
		          "the peers' votes list more notes this authority lacks than one vote may hold "
		          "(%zu); the rest are not fetched this epoch",
		          g.limit);
	free(g.items);
	notes_sort(&rn->notes);
	stats->fetch_ms = round_monotonic_ms() - collected;
	stats->ms = round_monotonic_ms() - started;
	return rc;
}
