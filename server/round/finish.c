/*
 * finish.c: steps 3 and 4 of a round: the signatures, the publication, the reconciliation.
 *
 * At the signature deadline the signatures still missing are pulled from every member that
 * lacks one here (a member serves every valid signature it holds over its header, so one answer
 * may bring several), all at once and by the epoch's start; each is checked as a pushed one is.
 * The snapshot is ready with k valid signatures by distinct members over the header computed
 * here; it is published at the epoch's start with every valid signature held, in member order,
 * and only when the header stored here last is the one it names as previous: when it is not,
 * this authority missed a snapshot the others published, catches up first (catchup.c), and
 * publishes if that brought the missing one.
 *
 * Reconciliation then asks again for the notes the counting votes listed that the consensus's
 * gathering could not get (gather.c already took every one it got into the store), until the
 * next round's vote is near; and, for a namespace with the endpoint lifecycle, takes the
 * revocations the latest stored snapshot lists whose target this authority holds no revocation
 * of, so that an authority restored from an older backup, or caught up, learns them again.
 *
 * An authority with no peer has nothing to wait for between the steps: at the epoch's start it
 * publishes the consensus of its own vote through publish_snapshot (server/publish/publish.h),
 * which streams the body to the store's body files, and serves and logs it here. Its vote is
 * neither signed nor kept (nobody receives it), and there is nothing to reconcile.
 */
#include "server/round/internal.h"

#include "logline/logline.h"
#include "crypto/crypto.h"
#include "base/error.h"
#include "schema/note.h"
#include "server/intake/statements.h"
#include "server/intake/submit.h"
#include "server/publish/diffs.h"
#include "server/publish/publish.h"
#include "server/publish/vote.h"
#include "server/store/snapshots.h"
#include "server/store/statements.h"
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
		if (note_format(note->text, note->text_len, &note->signatures[s], 1, &single) == 0) {
			round_take_signature(c->round, c->namespace_index, single.data, single.len, c->now,
			                     &verdict);
			if (verdict.error != API_ERROR_NONE)
				round_figures_refused(
				    c->round, round_claimed_member(c->round, single.data, single.len, false),
				    verdict.error);
		}
	}
	buffer_free(&single);
	note_free(note);
}

static int popcount(uint32_t v)
{
	return __builtin_popcount(v);
}

int round_decide(struct round *round, size_t i, uint64_t now, bool late)
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
		struct epoch_phases next;
		uint64_t until = late && schedule_epoch_phases(&config->epoch, rn->epoch + 1, &next) == 0
		                     ? next.vote_at
		                     : rn->phases.start;
		struct peer_call call = {.operation = PEER_PULL_SIGNATURES,
		                         .namespace_name = config->namespaces[i].name,
		                         .epoch = rn->epoch,
		                         .deadline_ms = round_deadline_ms(round, until)};
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
	bool ready = (size_t)popcount(valid) >= config->threshold;
	if (late && !ready)
		return 0; /* still short: asked again later, quietly */
	pthread_mutex_lock(&round->lock);
	rn->signatures = valid;
	rn->decided = true;
	rn->ready = ready;
	if (late) {
		rn->failed = false; /* it was counted failed at the deadline */
		rn->failed_total--;
	} else if (!ready) {
		rn->failed = true;
		rn->failed_total++;
		round->figures[i].failed_total[ROUND_FAILURE_SIGNATURES]++;
	}
	pthread_mutex_unlock(&round->lock);
	uint64_t decided = round_monotonic_ms();
	if (late)
		round_log(
		    round, i, rn->epoch,
		    "ready after the deadline: signed by %s (%d of %zu, %zu needed); published late rather "
		    "than leave the members that got k signatures alone with it",
		    names, popcount(valid), config->member_count, config->threshold);
	else if (rn->ready)
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

/* What follows a stored snapshot of rn->epoch, for several authorities and for one alone: the
 * read path serves it, the epoch counts as published, and returns prepared_set_install's code
 * (the snapshot stays stored whatever it is: requests by epoch load it from the store). */
static int serve_stored(struct round *round, size_t i, struct buffer *note)
{
	struct round_namespace *rn = &round->ns[i];
	int rc = prepared_set_install(round->o.prepared, i, note);
	pthread_mutex_lock(&round->lock);
	rn->published = true;
	rn->published_total++;
	round->figures[i].published_total++;
	pthread_mutex_unlock(&round->lock);
	return rc;
}

/* After the published line: the transparency log told, the diffs to the new body asked for (built
 * off this thread, server/publish/diffs.h), and the store's windows applied: bodies past the
 * retention window (with the diffs from or to them), rounds past a few epochs, evidence much
 * longer. */
static void keep_stored(struct round *round, size_t i)
{
	const struct config *config = round->o.config;
	const char *name = config->namespaces[i].name;
	struct round_namespace *rn = &round->ns[i];
	int rc;
	if (round->o.on_published)
		round->o.on_published(round->o.on_published_context, i, rn->epoch);
	publish_diffs_request(round->o.diffs, i, rn->epoch);
	uint64_t window = config->store.body_retention_epochs;
	if (rn->epoch >= window && (rc = store_retain(round->o.store, name, rn->epoch - window + 1)) != 0)
		round_log(round, i, rn->epoch, "old bodies not removed: %s", dirauth_strerror(rc));
	uint64_t round_keep = 4, evidence_keep = window * 16;
	store_round_retain(round->o.store, name, rn->epoch >= round_keep ? rn->epoch - round_keep + 1 : 0,
	                   rn->epoch >= evidence_keep ? rn->epoch - evidence_keep + 1 : 0);
}

int round_publish(struct round *round, size_t i, uint64_t now)
{
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
		/* The others published one this authority lacks: take it, then look again. */
		struct epoch_phases next;
		if (schedule_epoch_phases(&config->epoch, rn->epoch + 1, &next) == 0 &&
		    round_catch_up(round, i, now, round_deadline_ms(round, next.vote_at)) == 0)
			rc = publish_latest_digest(round->o.store, name, &have, &latest, digest);
	}
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
		goto cleanup;
	}
	if (rc == 0)
		rc = signed_note(round, i, &note);
	if (rc == 0)
		rc = publish_signed_snapshot(config, round->o.store, &rn->result.header, note.data, note.len,
		                             rn->result.body.data, rn->result.body.len);
	if (rc) {
		round_log(round, i, rn->epoch, "not published: %s", dirauth_strerror(rc));
		round_fail(round, i, ROUND_FAILURE_PUBLICATION);
		goto cleanup;
	}
	size_t header_size = note.len;
	uint64_t records = rn->result.record_count, body_size = rn->result.body.len;
	rc = serve_stored(round, i, &note);
	consensus_result_clear(&rn->result);
	if (rc)
		round_log(round, i, rn->epoch, "stored but not prepared: %s", dirauth_strerror(rc));
	else
		round_log(round, i, rn->epoch,
		          "published: %llu records, header %zu bytes, body %llu bytes, %d signatures; stored "
		          "in %llu ms",
		          (unsigned long long)records, header_size, (unsigned long long)body_size,
		          popcount(rn->signatures), (unsigned long long)(round_monotonic_ms() - started));
	keep_stored(round, i);
cleanup:
	buffer_free(&note);
	return rc;
}

/* ---- an authority with no peer ---- */

/* Logs that namespace i cannot publish yet for want of the signer, once per epoch. */
static void log_waiting(struct round *round, size_t i, const char *why)
{
	struct round_namespace *rn = &round->ns[i];
	if (rn->logged_wait)
		return;
	rn->logged_wait = true;
	round_log(round, i, rn->epoch, "not published yet: %s; retrying until the epoch ends", why);
}

int round_publish_alone(struct round *round, size_t i)
{
	const struct round_options *o = &round->o;
	const char *name = o->config->namespaces[i].name;
	struct round_namespace *rn = &round->ns[i];
	struct publication p;
	char why[SIGNER_DETAIL_MAX + 1];
	int rc;
	/* A signer known to be away costs no build: asked first, and again at the next tick. */
	if (o->signer_health && (rc = signer_health_check(o->signer_health, why, sizeof why)) != 0) {
		log_waiting(round, i, why);
		return DIRAUTH_ERR_UNAVAILABLE;
	}
	rc = publish_snapshot(o->config, o->store, o->signer, i, rn->epoch, &p, why, sizeof why);
	signer_health_note(o->signer_health, rc, why);
	if (rc == DIRAUTH_ERR_UNAVAILABLE) {
		char sentence[SIGNER_DETAIL_MAX + 32];
		snprintf(sentence, sizeof sentence, "signer unreachable: %s", why[0] ? why : "no answer");
		log_waiting(round, i, sentence);
		return rc;
	}
	if (rc) {
		round_log(round, i, rn->epoch, "not published: %s%s%s", dirauth_strerror(rc),
		          why[0] ? ": " : "", why);
		round_fail(round, i, ROUND_FAILURE_PUBLICATION);
		return rc;
	}
	unsigned long long records = p.header.record_count;
	size_t sizes[ENCODING_COUNT], header_size = p.header_note.len;
	for (int e = 0; e < ENCODING_COUNT; e++)
		sizes[e] = (size_t)p.body.size[e];
	pthread_mutex_lock(&round->lock);
	rn->voted = rn->computed = rn->decided = rn->ready = rn->reconciled = true;
	rn->signatures = (uint32_t)1 << o->config->self_index;
	pthread_mutex_unlock(&round->lock);
	rc = serve_stored(round, i, &p.header_note);
	publication_clear(&p);
	if (rc) {
		round_log(round, i, rn->epoch, "stored but not prepared: %s", dirauth_strerror(rc));
		return rc;
	}
	logline_write(o->log, "dirauthd", rn->epoch, NULL,
	              "published namespace %s epoch %llu: %llu records, header %zu bytes, body %zu bytes "
	              "(gzip %zu, zstd %zu)",
	              name, (unsigned long long)rn->epoch, records, header_size, sizes[ENCODING_IDENTITY],
	              sizes[ENCODING_GZIP], sizes[ENCODING_ZSTD]);
	keep_stored(round, i);
	return 0;
}

/* ---- reconciliation ---- */

void round_take_listed_revocations(struct round *round, size_t i, const struct snapshot_body *body,
                                   size_t *taken, size_t *refused)
{
	const char *name = round->o.config->namespaces[i].name;
	const struct round_options *o = &round->o;
	struct submit_context submit = {o->config, o->store, o->signer, o->signer_health, o->clock};
	for (size_t r = 0; body && r < body->revocation_count; r++) {
		const struct snapshot_revocation *listed = &body->revocations[r];
		struct submit_result result;
		if (store_revocation_find(o->store, name, listed->service_id,
		                          listed->has_endpoint ? listed->endpoint_id : NULL,
		                          NULL) != DIRAUTH_ERR_NOT_FOUND)
			continue;
		/* An endpoint of a service revoked whole is revoked already: not a refusal worth a word. */
		enum api_error error =
		    submit_peer_revocation(&submit, listed->note, listed->note_len, &result);
		if (error == API_ERROR_NONE)
			(*taken)++;
		else if (error != API_ERROR_REVOKED)
			(*refused)++;
		buffer_free(&result.receipt);
	}
}

/* Method 2: the revocations the latest stored snapshot lists whose target this authority holds
 * no revocation of (an authority restored from an older backup learns them again so). */
static void take_latest_revocations(struct round *round, size_t i, size_t *taken, size_t *refused)
{
	struct publish_previous latest;
	if (publish_previous_load(round->o.config, round->o.store, i, &latest) == 0 && latest.parsed)
		round_take_listed_revocations(round, i, latest.parsed, taken, refused);
	publish_previous_clear(&latest);
}

int round_reconcile(struct round *round, size_t i, uint64_t now)
{
	const struct config *config = round->o.config;
	struct round_namespace *rn = &round->ns[i];
	struct epoch_phases next;
	struct round_gather_stats stats = {0};
	size_t revocations = 0, refused = 0;
	rn->reconciled = true;
	if (schedule_epoch_phases(&config->epoch, rn->epoch + 1, &next) != 0)
		return 0;
	/* What the consensus's gathering left (its deadline passed, a member failed or declined),
	 * asked again until the next round's vote is near. */
	const struct vote_body *bodies[CONFIG_MAX_MEMBERS] = {0};
	bool any = false;
	for (size_t m = 0; m < config->member_count; m++)
		if (m != config->self_index && rn->bodies[m]) {
			bodies[m] = rn->bodies[m];
			any = true;
		}
	size_t after = 0;
	if (any && next.vote_at > now + 1) {
		round_gather(round, i, bodies, now, round_deadline_ms(round, next.vote_at - 1), &stats);
		after = round_notes_store(round, i);
	}
	if (config->namespaces[i].lifecycle)
		take_latest_revocations(round, i, &revocations, &refused);
	round_log(round, i, rn->epoch,
	          "reconciled: %zu notes the peers' votes list taken into the store (%zu before the "
	          "consensus, %zu after it), %zu not given by any member; %zu revocations the latest "
	          "snapshot lists taken, %zu refused",
	          rn->notes_stored + after, rn->notes_stored, after, stats.missing, revocations, refused);
	return 0;
}
