/*
 * finish.c: steps 3 and 4 of a round: the signatures, the publication, the reconciliation.
 *
 * At the signature deadline the signatures still missing are pulled from every member that
 * lacks one here (a member serves every valid signature it holds over its header, so one answer
 * may bring several); each is checked as a pushed one is. The snapshot is ready with k valid
 * signatures by distinct members over the header computed here; it is published at the epoch's
 * start with every valid signature held, in member order, and only when the header stored here
 * last is the one it names as previous (a gap would fork this authority's history: it is caught
 * up with at the next vote instead).
 *
 * Reconciliation then takes into the store the registrations the counting votes listed with a
 * higher sequence than this authority holds, fetched from a member that listed them and checked
 * as a provider's are (server/intake), so that a registration given to one authority reaches the
 * next epoch's votes of all. For a namespace with the endpoint lifecycle it also takes the
 * revocations the latest stored snapshot lists and those the peers' votes list whose target this
 * authority holds no revocation of (so an authority restored from an older backup learns them
 * again), and the health statements the peers' votes list with a higher sequence than its own
 * vote's, each checked as intake checks one learned from a peer. It is bounded per epoch
 * (ROUND_RECONCILE_MAX) and stops before the next round's vote.
 */
#include "server/round/internal.h"

#include "schema/crypto.h"
#include "schema/error.h"
#include "schema/note.h"
#include "server/intake/lifecycle.h"
#include "server/intake/submit.h"
#include "server/publish/publish.h"
#include "server/publish/vote.h"
#include "server/store/lifecycle.h"
#include "server/store/votes.h"

#include <stdlib.h>
#include <string.h>

struct signature_pull {
	struct round *round;
	size_t namespace_index;
	uint64_t now;
};

/* Every signature line of a pulled header note, each judged as a pushed signature. */
static void on_pulled_signatures(void *context, size_t member, const struct peer_answer *answer)
{
	(void)member;
	struct signature_pull *c = context;
	struct note *note = NULL;
	struct buffer single;
	if (answer->transport != PEER_TRANSPORT_ANSWERED || answer->status != 200 ||
	    note_parse(answer->body.data, answer->body.len, &note) != 0)
		return;
	buffer_init(&single);
	for (size_t s = 0; s < note->signature_count; s++) {
		struct round_answer verdict;
		buffer_reset(&single);
		if (note_format(note->text, note->text_len, &note->signatures[s], 1, &single) == 0)
			round_take_signature(c->round, c->namespace_index, single.data, single.len, c->now,
			                     &verdict);
	}
	buffer_free(&single);
	note_free(note);
}

static int popcount(uint32_t v)
{
	return __builtin_popcount(v);
}

int round_decide(struct round *round, size_t i, uint64_t now)
{
	const struct config *config = round->o.config;
	struct round_namespace *rn = &round->ns[i];
	const struct buffer *text = &rn->result.header_text;
	uint32_t valid = 0;
	uint64_t started = round_monotonic_ms();
	int rc = round_count_signatures(round, i, rn->epoch, text->data, text->len, &valid);
	if (rc)
		return rc;
	uint8_t targets[CONFIG_MAX_MEMBERS] = {0};
	size_t missing = 0;
	for (size_t m = 0; m < config->member_count; m++)
		if (m != config->self_index && !(valid & ((uint32_t)1 << m))) {
			targets[m] = 1;
			missing++;
		}
	if (missing) {
		struct signature_pull context = {round, i, now};
		struct peer_call call = {.operation = PEER_PULL_SIGNATURES,
		                         .namespace_name = config->namespaces[i].name,
		                         .epoch = rn->epoch};
		struct peers_broadcast_options options = {targets, on_pulled_signatures, &context};
		struct peer_answer answers[CONFIG_MAX_MEMBERS];
		if (peers_broadcast(round->o.peers, &call, &options, answers) == 0)
			peer_answers_free(answers, config->member_count);
		if ((rc = round_count_signatures(round, i, rn->epoch, text->data, text->len, &valid)) != 0)
			return rc;
	}
	char names[CONFIG_MAX_MEMBERS * (NOTE_NAME_MAX + 2) + 1] = "";
	size_t len = 0;
	for (size_t m = 0; m < config->member_count; m++)
		if (valid & ((uint32_t)1 << m))
			len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", len ? ", " : "",
			                        config->members[m].name);
	pthread_mutex_lock(&round->lock);
	rn->signatures = valid;
	rn->decided = true;
	rn->ready = (size_t)popcount(valid) >= config->threshold;
	if (!rn->ready) {
		rn->failed = true;
		rn->failed_total++;
	}
	pthread_mutex_unlock(&round->lock);
	uint64_t decided = round_monotonic_ms();
	if (rn->ready)
		round_log(round, i, rn->epoch,
		          "ready: signed by %s (%d of %zu, %zu needed); signatures pulled in %llu ms", names,
		          popcount(valid), config->member_count, config->threshold,
		          (unsigned long long)(decided - started));
	else
		round_log(round, i, rn->epoch, "not published: %d of %zu members signed (%s), %zu needed",
		          popcount(valid), config->member_count, names[0] ? names : "none",
		          config->threshold);
	return 0;
}

/* The header note with every valid signature, in member order. */
static int signed_note(struct round *round, size_t i, struct buffer *out)
{
	const struct config *config = round->o.config;
	struct round_namespace *rn = &round->ns[i];
	struct note_signature signatures[CONFIG_MAX_MEMBERS];
	struct buffer held;
	size_t count = 0;
	int rc = 0;
	buffer_init(&held);
	for (size_t m = 0; rc == 0 && m < config->member_count; m++) {
		if (!(rn->signatures & ((uint32_t)1 << m)))
			continue;
		struct note *note = NULL;
		if ((rc = store_signature_get(round->o.store, config->namespaces[i].name, rn->epoch,
		                              (unsigned)m, &held)) == 0 &&
		    (rc = note_parse(held.data, held.len, &note)) == 0)
			signatures[count++] = note->signatures[0];
		note_free(note);
	}
	buffer_free(&held);
	if (rc == 0)
		rc = note_format(rn->result.header_text.data, rn->result.header_text.len, signatures, count,
		                 out);
	return rc;
}

int round_publish(struct round *round, size_t i, uint64_t now)
{
	(void)now;
	const struct config *config = round->o.config;
	const char *name = config->namespaces[i].name;
	struct round_namespace *rn = &round->ns[i];
	struct buffer note;
	int have = 0;
	uint64_t latest = 0;
	uint8_t digest[32];
	buffer_init(&note);
	uint64_t started = round_monotonic_ms();
	int rc = publish_latest_digest(round->o.store, name, &have, &latest, digest);
	if (rc == 0 && memcmp(digest, rn->result.header.previous, 32) != 0) {
		round_log(round, i, rn->epoch,
		          "not published here: it follows a snapshot not stored here (the latest here is "
		          "epoch %llu); "
		          "it will be caught up with",
		          (unsigned long long)latest);
		pthread_mutex_lock(&round->lock);
		rn->published = true; /* nothing more to do for it here */
		pthread_mutex_unlock(&round->lock);
		consensus_result_clear(&rn->result);
		return 0;
	}
	if (rc == 0)
		rc = signed_note(round, i, &note);
	if (rc == 0)
		rc = publish_signed_snapshot(config, round->o.store, &rn->result.header, note.data, note.len,
		                             rn->result.body.data, rn->result.body.len);
	if (rc) {
		round_log(round, i, rn->epoch, "not published: %s", dirauth_strerror(rc));
		buffer_free(&note);
		pthread_mutex_lock(&round->lock);
		rn->failed = true;
		rn->failed_total++;
		pthread_mutex_unlock(&round->lock);
		return rc;
	}
	size_t header_size = note.len;
	uint64_t records = rn->result.record_count, body_size = rn->result.body.len;
	rc = prepared_set_install(round->o.prepared, i, &note);
	buffer_free(&note);
	pthread_mutex_lock(&round->lock);
	rn->published = true;
	rn->published_total++;
	pthread_mutex_unlock(&round->lock);
	consensus_result_clear(&rn->result);
	if (rc)
		round_log(round, i, rn->epoch, "stored but not prepared: %s", dirauth_strerror(rc));
	else
		round_log(round, i, rn->epoch,
		          "published: %llu records, header %zu bytes, body %llu bytes, %d signatures; stored "
		          "in %llu ms",
		          (unsigned long long)records, header_size, (unsigned long long)body_size,
		          popcount(rn->signatures), (unsigned long long)(round_monotonic_ms() - started));
	if (round->o.on_published)
		round->o.on_published(round->o.on_published_context, i, rn->epoch);
	/* Retention: bodies past the window, rounds past a few epochs, evidence much longer. */
	uint64_t window = config->store.body_retention_epochs;
	if (rn->epoch >= window)
		store_retain(round->o.store, name, rn->epoch - window + 1);
	uint64_t round_keep = 4, evidence_keep = window * 16;
	store_round_retain(round->o.store, name, rn->epoch >= round_keep ? rn->epoch - round_keep + 1 : 0,
	                   rn->epoch >= evidence_keep ? rn->epoch - evidence_keep + 1 : 0);
	return rc;
}

/* ---- reconciliation ---- */

/* The sequence of service_id in the own vote's body, 0 when it lists none. */
static uint64_t own_sequence(const struct vote_body *own, const uint8_t *service_id)
{
	size_t low = 0, high = own ? own->record_count : 0;
	while (low < high) {
		size_t middle = low + (high - low) / 2;
		int order = memcmp(own->records[middle].service_id, service_id, SERVICE_ID_SIZE);
		if (order == 0)
			return own->records[middle].sequence;
		if (order < 0)
			low = middle + 1;
		else
			high = middle;
	}
	return 0;
}

/* The sequence of the own vote's health line for an endpoint, 0 when it lists none. */
static uint64_t own_health_sequence(const struct vote_body *own, const struct vote_body_health *line)
{
	size_t low = 0, high = own ? own->health_count : 0;
	while (low < high) {
		size_t middle = low + (high - low) / 2;
		const struct vote_body_health *h = &own->health[middle];
		int order = memcmp(h->service_id, line->service_id, SERVICE_ID_SIZE);
		if (order == 0)
			order = memcmp(h->endpoint_id, line->endpoint_id, ENDPOINT_ID_SIZE);
		if (order == 0)
			return h->sequence;
		if (order < 0)
			low = middle + 1;
		else
			high = middle;
	}
	return 0;
}

/* What the reconciliation of one epoch did. */
struct reconciled {
	size_t registrations, revocations, health, refused, tried;
};

/* Whether the next round's vote is near: reconciliation stops then. */
static bool next_vote_near(struct round *round, const struct epoch_phases *next)
{
	uint64_t t;
	return clock_now(round->o.clock, &t) == 0 && t + 1 >= next->vote_at;
}

/* A statement a peer listed, fetched by digest from member m and taken as intake takes one
 * learned from a peer. */
static void take_statement(struct round *round, size_t i, const struct submit_context *submit, size_t m,
                           bool health, const uint8_t *digest, struct reconciled *counts)
{
	struct peer_answer answer;
	struct submit_result result;
	uint8_t actual[32];
	counts->tried++;
	peer_answer_init(&answer);
	if (peer_fetch_statement(round->o.peers, m, round->o.config->namespaces[i].name, digest, &answer) ==
	        0 &&
	    answer.status == 200) {
		enum api_error error = API_ERROR_MALFORMED;
		if (crypto_sha256(answer.body.data, answer.body.len, actual) == 0 &&
		    memcmp(actual, digest, 32) == 0)
			error =
			    health
			        ? submit_peer_health(submit, answer.body.data, answer.body.len, &result)
			        : submit_peer_revocation(submit, answer.body.data, answer.body.len, &result);
		if (error == API_ERROR_NONE)
			*(health ? &counts->health : &counts->revocations) += 1;
		else if (error != API_ERROR_REPLAYED && error != API_ERROR_REVOKED)
			counts->refused++;
		buffer_free(&result.receipt);
	}
	peer_answer_free(&answer);
}

/* Method 2: the revocations the latest stored snapshot lists and those the peers' votes list,
 * when this authority holds no revocation of their target (an authority restored from an older
 * backup learns them again so), and the health statements the peers' votes list with a higher
 * sequence than its own vote's, so that a statement posted to one authority reaches the next
 * votes of all. */
static void reconcile_lifecycle(struct round *round, size_t i, const struct submit_context *submit,
                                const struct epoch_phases *next, struct reconciled *counts)
{
	const struct config *config = round->o.config;
	const char *name = config->namespaces[i].name;
	struct round_namespace *rn = &round->ns[i];
	struct submit_result result;
	for (size_t n = 0; n < rn->statement_count; n++) {
		const struct round_statement *fetched = &rn->statements[n];
		enum api_error error =
		    fetched->health ? submit_peer_health(submit, fetched->note, fetched->len, &result)
		                    : submit_peer_revocation(submit, fetched->note, fetched->len, &result);
		if (error == API_ERROR_NONE)
			*(fetched->health ? &counts->health : &counts->revocations) += 1;
		buffer_free(&result.receipt);
	}
	struct publish_previous latest;
	if (publish_previous_load(config, round->o.store, i, &latest) == 0 && latest.parsed) {
		for (size_t r = 0; r < latest.parsed->revocation_count; r++) {
			const struct snapshot_revocation *listed = &latest.parsed->revocations[r];
			if (store_revocation_find(round->o.store, name, listed->service_id,
			                          listed->has_endpoint ? listed->endpoint_id : NULL,
			                          NULL) != DIRAUTH_ERR_NOT_FOUND)
				continue;
			if (submit_peer_revocation(submit, listed->note, listed->note_len, &result) ==
			    API_ERROR_NONE)
				counts->revocations++;
			else
				counts->refused++;
			buffer_free(&result.receipt);
		}
	}
	publish_previous_clear(&latest);
	for (size_t m = 0; m < config->member_count; m++) {
		const struct vote_body *body = rn->bodies[m];
		if (m == config->self_index || !body)
			continue;
		for (size_t r = 0; r < body->revocation_count && counts->tried < ROUND_RECONCILE_MAX; r++) {
			const struct vote_body_revocation *line = &body->revocations[r];
			if (store_revocation_find(round->o.store, name, line->service_id,
			                          line->has_endpoint ? line->endpoint_id : NULL,
			                          NULL) != DIRAUTH_ERR_NOT_FOUND)
				continue;
			if (next_vote_near(round, next))
				return;
			take_statement(round, i, submit, m, false, line->revocation_sha256, counts);
		}
		for (size_t h = 0; h < body->health_count && counts->tried < ROUND_RECONCILE_MAX; h++) {
			const struct vote_body_health *line = &body->health[h];
			if (line->sequence <= own_health_sequence(rn->own_body, line))
				continue;
			struct buffer held;
			buffer_init(&held);
			int have = store_statement_get(round->o.store, name, line->statement_sha256, &held);
			buffer_free(&held);
			if (have != DIRAUTH_ERR_NOT_FOUND)
				continue;
			if (next_vote_near(round, next))
				return;
			take_statement(round, i, submit, m, true, line->statement_sha256, counts);
		}
	}
}

int round_reconcile(struct round *round, size_t i, uint64_t now)
{
	const struct config *config = round->o.config;
	const char *name = config->namespaces[i].name;
	struct round_namespace *rn = &round->ns[i];
	struct epoch_phases next;
	size_t taken = 0, refused = 0, tried = 0;
	struct reconciled lifecycle = {0};
	rn->reconciled = true;
	if (schedule_epoch_phases(&config->epoch, rn->epoch + 1, &next) != 0)
		return 0;
	struct submit_context submit = {config, round->o.store, round->o.signer, round->o.signer_health,
	                                round->o.clock};
	/* The notes the consensus fetched were checked then; they go first, without a fetch (one this
	 * authority holds by now is refused as a rollback, which changes nothing). */
	for (size_t n = 0; n < rn->fetched_count; n++) {
		struct submit_result result;
		if (submit_peer_registration(&submit, rn->fetched[n], rn->fetched_len[n], &result) ==
		    API_ERROR_NONE)
			taken++;
	}
	for (size_t m = 0; m < config->member_count && tried < ROUND_RECONCILE_MAX; m++) {
		const struct vote_body *body = rn->bodies[m];
		if (m == config->self_index || !body)
			continue;
		for (size_t r = 0; r < body->record_count && tried < ROUND_RECONCILE_MAX; r++) {
			const struct vote_body_record *listed = &body->records[r];
			if (listed->sequence <= own_sequence(rn->own_body, listed->service_id))
				continue;
			uint64_t held = 0;
			if (store_service_sequence(round->o.store, listed->service_id, &held) == 0 &&
			    held >= listed->sequence)
				continue;
			uint64_t t;
			if (clock_now(round->o.clock, &t) == 0 && t + 1 >= next.vote_at)
				goto out; /* the next round's vote comes first */
			tried++;
			struct peer_answer answer;
			struct submit_result result;
			peer_answer_init(&answer);
			if (peer_fetch_registration(round->o.peers, m, name, listed->service_id,
			                            listed->sequence, &answer) == 0 &&
			    answer.status == 200) {
				uint8_t digest[32];
				if (crypto_sha256(answer.body.data, answer.body.len, digest) == 0 &&
				    memcmp(digest, listed->registration_sha256, 32) == 0 &&
				    submit_peer_registration(&submit, answer.body.data, answer.body.len,
				                             &result) == API_ERROR_NONE)
					taken++;
				else
					refused++;
			}
			peer_answer_free(&answer);
		}
	}
out:
	(void)now;
	if (config->namespaces[i].lifecycle) {
		lifecycle.tried = tried;
		reconcile_lifecycle(round, i, &submit, &next, &lifecycle);
	}
	if (taken || refused)
		round_log(round, i, rn->epoch,
		          "reconciled: %zu registrations taken from the peers' votes, %zu refused", taken,
		          refused);
	if (lifecycle.revocations || lifecycle.health || lifecycle.refused)
		round_log(round, i, rn->epoch,
		          "reconciled: %zu revocations and %zu health statements taken from the peers, %zu "
		          "refused",
		          lifecycle.revocations, lifecycle.health, lifecycle.refused);
	return 0;
}
