/*
 * round.c: the round's state and the order of its steps.
 *
 * round_tick decides which step is due from the clock and from what is done, and runs it; the
 * steps themselves are in build.c, compute.c and finish.c. An authority with no peer (n = 1)
 * takes its steps as one at the epoch's start (finish.c: round_publish_alone): there is nothing
 * to wait for between them. A new epoch's round starts when the
 * clock passes its vote_at; whatever the previous round had not finished by then is over (an
 * epoch not published by the start of the next round is not published at all, here; a peer that
 * did publish it is caught up with at the next vote).
 */
#include "server/round/internal.h"

#include "logline/logline.h"
#include "base/error.h"
#include "schema/vote_body.h"
#include "schema/vote_envelope.h"
#include "server/store/snapshots.h"
#include "server/store/store.h"
#include "server/store/votes.h"
#include "verify/snapshot.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

uint64_t round_monotonic_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

size_t round_push_refusals(const struct config *config, const struct peer_answer *answers, char *out,
                           size_t cap)
{
	size_t len = 0, taken = 0;
	if (cap)
		out[0] = 0;
	for (size_t m = 0; m < config->member_count; m++) {
		const struct peer_answer *a = &answers[m];
		if (m == config->self_index)
			continue;
		if (a->transport == PEER_TRANSPORT_ANSWERED && (a->status == 200 || a->status == 202))
			taken++;
		else if (len < cap)
			len += (size_t)snprintf(out + len, cap - len, "%s%s: %s", len ? "; " : "",
			                        config->members[m].name,
			                        a->reason[0] ? a->reason : peer_transport_name(a->transport));
	}
	return taken;
}

uint64_t round_leaving(const struct config *config, uint64_t end, uint64_t window)
{
	uint64_t room =
	    config->peers.timeout_seconds < window / 2 ? config->peers.timeout_seconds : window / 2;
	return end > room ? end - room : 0;
}

uint64_t round_deadline_ms(struct round *round, uint64_t at)
{
	uint64_t now = 0, monotonic = clock_monotonic_ms(round->o.clock);
	if (clock_now(round->o.clock, &now) != 0 || at <= now)
		return monotonic;
	uint64_t left = at - now;
	return left > UINT64_MAX / 1000 - monotonic ? UINT64_MAX : monotonic + left * 1000;
}

void round_log(struct round *round, size_t namespace_index, uint64_t epoch, const char *format, ...)
{
	va_list args;
	va_start(args, format);
	logline_vwrite(round->o.log, "dirauthd", epoch, round->o.config->namespaces[namespace_index].name,
	               format, args);
	va_end(args);
}

enum api_error round_window(const struct config *config, uint64_t epoch, uint64_t now, bool signatures)
{
	struct epoch_phases phases, next;
	uint64_t skew = config->bounds.clock_skew_seconds;
	if (schedule_epoch_phases(&config->epoch, epoch, &phases) != 0 ||
	    schedule_epoch_phases(&config->epoch, epoch + 1, &next) != 0)
		return API_ERROR_WRONG_EPOCH;
	if (now + skew < phases.vote_at || now >= next.vote_at + skew)
		return API_ERROR_WRONG_EPOCH;
	uint64_t deadline = signatures ? phases.signature_deadline : phases.vote_deadline;
	if (now > deadline + skew)
		return API_ERROR_TOO_LATE;
	return API_ERROR_NONE;
}

size_t round_vote_body_max(const struct config *config)
{
	size_t body = vote_body_max_bytes(config->bounds.records_per_snapshot);
	for (size_t i = 0; i < config->namespace_count; i++) {
		struct vote_body_limits limits;
		if (round_vote_limits(config, i, &limits) && vote_body_sections_max_bytes(&limits) > body)
			body = vote_body_sections_max_bytes(&limits);
	}
	if (body > SIZE_MAX - VOTE_ENVELOPE_NOTE_MAX - 64)
		return SIZE_MAX;
	return VOTE_ENVELOPE_NOTE_MAX + body + 64; /* the two length lines */
}

bool round_vote_limits(const struct config *config, size_t namespace_index, struct vote_body_limits *limits)
{
	const struct config_namespace *ns = &config->namespaces[namespace_index];
	limits->max_records = config->bounds.records_per_snapshot;
	limits->max_health = ns->lifecycle ? config_max_health(config) : 0;
	limits->max_revocations = ns->lifecycle ? ns->max_revocations : 0;
	return ns->lifecycle != 0;
}

int round_vote_body_load(const struct config *config, size_t namespace_index, const struct vote *vote,
                         const uint8_t *body, size_t len, struct vote_body **out)
{
	struct vote_body_limits limits;
	if (!round_vote_limits(config, namespace_index, &limits))
		return consensus_vote_body_load(vote, body, len, limits.max_records, out);
	return consensus_vote_body_load_sections(vote, body, len, &limits, out);
}

size_t round_signature_body_max(void)
{
	return VERIFY_HEADER_NOTE_MAX;
}

int round_create(const struct round_options *options, struct round **out)
{
	*out = NULL;
	if (!options->config ||
	    (options->config->member_count > 1 && (!options->peers || !options->authorities)))
		return DIRAUTH_ERR_CONFIG;
	struct round *round = calloc(1, sizeof *round);
	if (!round)
		return DIRAUTH_ERR_NOMEM;
	round->o = *options;
	if (pthread_mutex_init(&round->lock, NULL) != 0) {
		free(round);
		return DIRAUTH_ERR_NOMEM;
	}
	if (pthread_mutex_init(&round->base_lock, NULL) != 0) {
		pthread_mutex_destroy(&round->lock);
		free(round);
		return DIRAUTH_ERR_NOMEM;
	}
	*out = round;
	return 0;
}

void round_fail(struct round *round, size_t i, enum round_failure reason)
{
	struct round_namespace *rn = &round->ns[i];
	pthread_mutex_lock(&round->lock);
	rn->failed = true;
	rn->failed_total++;
	round->figures[i].failed_total[reason]++;
	pthread_mutex_unlock(&round->lock);
}

void round_namespace_reset(struct round_namespace *rn)
{
	uint64_t published_total = rn->published_total, failed_total = rn->failed_total;
	consensus_result_clear(&rn->result);
	vote_body_free(rn->own_body);
	for (size_t m = 0; m < CONFIG_MAX_MEMBERS; m++)
		vote_body_free(rn->bodies[m]);
	round_notes_clear(&rn->notes);
	memset(rn, 0, sizeof *rn);
	rn->published_total = published_total;
	rn->failed_total = failed_total;
}

void round_free(struct round *round)
{
	if (!round)
		return;
	for (size_t i = 0; i < CONFIG_MAX_NAMESPACES; i++)
		round_namespace_reset(&round->ns[i]);
	round_bases_free(round);
	pthread_mutex_destroy(&round->base_lock);
	pthread_mutex_destroy(&round->lock);
	free(round);
}

/* Starts the round of epoch for namespace i: what a restart finds already done is taken as done. */
static int begin_epoch(struct round *round, size_t i, uint64_t epoch)
{
	struct round_namespace *rn = &round->ns[i];
	const char *name = round->o.config->namespaces[i].name;
	if (rn->active && !rn->published && !rn->failed && rn->computed)
		round_log(round, i, rn->epoch, "not published: its round ended before it could be");
	pthread_mutex_lock(&round->lock);
	if (rn->active && !rn->published && !rn->failed) {
		rn->failed_total++;
		round->figures[i].failed_total[ROUND_FAILURE_ROUND_ENDED]++;
	}
	round_namespace_reset(rn);
	rn->epoch = epoch;
	rn->active = true;
	pthread_mutex_unlock(&round->lock);
	int rc = schedule_epoch_phases(&round->o.config->epoch, epoch, &rn->phases);
	if (rc)
		return rc;
	if (round->o.config->member_count > 1)
		round_figures_seed(round, i, epoch);
	uint64_t latest;
	rc = store_snapshot_latest(round->o.store, name, &latest);
	if (rc == 0 && latest >= epoch) {
		rn->voted = rn->computed = rn->decided = rn->ready = rn->published = true;
		rn->reconciled = true;
	} else if (rc && rc != DIRAUTH_ERR_NOT_FOUND) {
		return rc;
	}
	return 0;
}

int round_tick(struct round *round, size_t i, uint64_t now)
{
	const struct config *config = round->o.config;
	struct round_namespace *rn = &round->ns[i];
	uint64_t epoch;
	int rc, first = 0;
	if (i >= config->namespace_count)
		return DIRAUTH_ERR_NOT_FOUND;
	if (schedule_current_epoch(&config->epoch, now, &epoch) != 0)
		return 0;
	/* The members' certificates, at most every refresh interval (a member that is away keeps
	 * the ring it had). */
	if (i == 0 && round->o.authorities) {
		char why[512];
		if (authority_set_refresh(round->o.authorities, now, why, sizeof why) != 0 &&
		    !round->refresh_logged) {
			round_log(round, i, epoch, "certificates not refreshed: %s", why);
			round->refresh_logged = true;
		}
	}
	if (!rn->active || rn->epoch != epoch) {
		if ((rc = begin_epoch(round, i, epoch)) != 0) {
			round_log(round, i, epoch, "cannot begin its round: %s", dirauth_strerror(rc));
			rn->active = false;
			return rc;
		}
	}
	const char *name = config->namespaces[i].name;
	size_t n = config->member_count;
	uint32_t all = n >= 32 ? UINT32_MAX : ((uint32_t)1 << n) - 1;

	/* With no peer there is nobody to catch up with, to push to or to pull from, and the own
	 * vote meets k = 1: the vote, its consensus, the signed header and the publication are one
	 * step, taken at the epoch's start and retried while the signer is away (finish.c). */
	if (n == 1) {
		if (!rn->published && !rn->failed && now >= rn->phases.start) {
			round_step_trying(round, i, ROUND_PHASE_PUBLICATION);
			rc = round_publish_alone(round, i);
			round_step_tried(round, i, ROUND_PHASE_PUBLICATION, rn->published);
			return rc;
		}
		return 0;
	}

	/* 0: catching up with what the peers published, first in every round (after a start too):
	 * a vote naming an older previous than theirs counts for nothing, so while this authority is
	 * known to be behind it does not vote, and goes on catching up at each tick for as long as
	 * the round lasts. The first try leaves the vote window room for the vote's push. */
	/* An epoch this authority will not publish itself (it did not compute its header, or did not
	 * get k signatures over it) the others may have: once its start has passed by the skew, catch
	 * up once more rather than wait for the next round. */
	if (rn->caught_up && !rn->published && !rn->ready && !rn->caught_up_after_start &&
	    now >= rn->phases.start + config->bounds.clock_skew_seconds) {
		rn->caught_up_after_start = true;
		rn->caught_up = false;
		rn->tried_catch_up = false;
	}
	if (!rn->caught_up) {
		struct epoch_phases next;
		uint64_t until =
		    !rn->tried_catch_up && now <= rn->phases.vote_deadline
		        ? round_leaving(config, rn->phases.vote_deadline, config->epoch.vote)
		        : (schedule_epoch_phases(&config->epoch, epoch + 1, &next) == 0 ? next.vote_at : now);
		if (now < until || !rn->tried_catch_up) {
			rn->tried_catch_up = true;
			rn->caught_up = round_catch_up(round, i, now, round_deadline_ms(round, until)) !=
			                DIRAUTH_ERR_STALE;
		}
		if (!rn->caught_up && !rn->voted && now >= rn->phases.vote_at &&
		    now <= rn->phases.vote_deadline && !rn->logged_behind) {
			round_log(round, i, epoch,
			          "no vote: this authority is still catching up with its peers");
			rn->logged_behind = true;
		}
	}

	/* 1: the vote, until the vote deadline (after it, peers refuse it). */
	if (!rn->voted && rn->caught_up && now >= rn->phases.vote_at && now <= rn->phases.vote_deadline) {
		round_step_trying(round, i, ROUND_PHASE_VOTE);
		if ((rc = round_vote(round, i, now)) != 0 && !first)
			first = rc;
		round_step_tried(round, i, ROUND_PHASE_VOTE, rn->voted);
	}
	/* 2: the consensus, once every vote is here or the deadline passed; until the signature
	 * deadline. */
	if (!rn->computed && !rn->failed && now <= rn->phases.signature_deadline) {
		uint32_t held = 0;
		if (now < rn->phases.vote_deadline)
			store_votes_held(round->o.store, name, epoch, &held);
		if (now >= rn->phases.vote_deadline || (held & all) == all) {
			round_step_trying(round, i, ROUND_PHASE_CONSENSUS);
			if ((rc = round_compute(round, i, now)) != 0 && !first)
				first = rc;
			round_step_tried(round, i, ROUND_PHASE_CONSENSUS, rn->computed);
		}
	}
	/* 3: the decision, once every signature is here or the deadline passed. */
	if (rn->computed && !rn->decided) {
		uint32_t valid = 0;
		if (now < rn->phases.signature_deadline)
			round_count_signatures(round, i, epoch, rn->result.header_text.data,
			                       rn->result.header_text.len, &valid);
		if (now >= rn->phases.signature_deadline || (valid & all) == all) {
			round_step_trying(round, i, ROUND_PHASE_DECISION);
			if ((rc = round_decide(round, i, now, false)) != 0 && !first)
				first = rc;
			round_step_tried(round, i, ROUND_PHASE_DECISION, rn->decided);
		}
	}
	/* 3, late: an epoch decided without k signatures here may have them elsewhere (a member that
	 * collected k while its pushes to this one were lost); pulled again every few seconds until
	 * the next round, so that no member is left alone with a snapshot the others lack. */
	if (rn->computed && rn->decided && !rn->ready && rn->result.header_text.len &&
	    now >= rn->late_pull_at) {
		struct epoch_phases next;
		if (schedule_epoch_phases(&config->epoch, epoch + 1, &next) == 0 && now + 1 < next.vote_at) {
			rn->late_pull_at = now + ROUND_LATE_PULL_SECONDS;
			if ((rc = round_decide(round, i, now, true)) != 0 && !first)
				first = rc;
		}
	}
	/* 4: publication at the epoch's start, then reconciliation. */
	if (rn->ready && !rn->published && now >= rn->phases.start) {
		round_step_trying(round, i, ROUND_PHASE_PUBLICATION);
		if ((rc = round_publish(round, i, now)) != 0 && !first)
			first = rc;
		round_step_tried(round, i, ROUND_PHASE_PUBLICATION, rn->published);
	}
	if (!rn->reconciled && (rn->published || rn->failed || (rn->decided && now >= rn->phases.start)))
		if ((rc = round_reconcile(round, i, now)) != 0 && !first)
			first = rc;
	if (!rn->computed && !rn->failed && now > rn->phases.signature_deadline) {
		round_fail(round, i, ROUND_FAILURE_NO_HEADER);
		round_log(round, i, epoch, "not published: no header was computed by the signature deadline");
	}
	return first;
}

void round_status_get(struct round *round, size_t i, struct round_status *out)
{
	memset(out, 0, sizeof *out);
	if (i >= round->o.config->namespace_count)
		return;
	struct round_namespace *rn = &round->ns[i];
	pthread_mutex_lock(&round->lock);
	out->epoch = rn->epoch;
	out->signatures = rn->signatures;
	out->computed = rn->computed;
	out->published = rn->published;
	out->failed = rn->failed;
	out->published_total = rn->published_total;
	out->failed_total = rn->failed_total;
	uint64_t epoch = rn->epoch;
	pthread_mutex_unlock(&round->lock);
	store_votes_held(round->o.store, round->o.config->namespaces[i].name, epoch, &out->votes);
}
