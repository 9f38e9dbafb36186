/*
 * statistics.c: the round's figures for GET /v1/metrics: epochs published and failed by reason,
 * how long each step took, and per member of the set what arrived when and what was refused.
 *
 * An operator of one authority among several wants to know, without reading logs, which member
 * went quiet, whose votes arrive late, what this authority refuses of whom, and why an epoch
 * failed. Every figure is counted where the round decides it, under the round's lock (a few
 * additions, never a wait on anything else), and bounded by the configuration: namespaces and
 * members are the configured ones, reasons and steps fixed tables. server/http formats them and
 * leaves out the private namespaces.
 */
#include "server/round/internal.h"

#include "schema/note.h"
#include "schema/vote_envelope.h"
#include "server/publish/diffs.h"
#include "server/store/votes.h"

#include <stdlib.h>
#include <string.h>

const double round_duration_bounds_seconds[ROUND_DURATION_BUCKETS] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                                      0.5,   1,    2.5,   5,    10,  30};

const char *round_failure_name(enum round_failure failure)
{
	static const char *const names[ROUND_FAILURE_COUNT] = {"consensus",  "revoked",     "no_header",
	                                                       "signatures", "publication", "round_ended"};
	return (unsigned)failure < ROUND_FAILURE_COUNT ? names[failure] : "unknown";
}

const char *round_refusal_name(enum round_refusal refusal)
{
	static const char *const names[ROUND_REFUSAL_COUNT] = {
	    "too_late", "wrong_epoch", "bad_signature", "malformed", "unknown_base", "conflicting", "other"};
	return (unsigned)refusal < ROUND_REFUSAL_COUNT ? names[refusal] : "unknown";
}

const char *round_phase_name(enum round_phase phase)
{
	static const char *const names[ROUND_PHASE_COUNT] = {"vote", "consensus", "decision", "publication"};
	return (unsigned)phase < ROUND_PHASE_COUNT ? names[phase] : "unknown";
}

void round_figures_seed(struct round *round, size_t i, uint64_t epoch)
{
	const char *name = round->o.config->namespaces[i].name;
	if (round->figures_seeded[i])
		return;
	round->figures_seeded[i] = true;
	for (uint64_t back = 3; back >= 1; back--) {
		uint32_t votes = 0, signatures = 0;
		if (epoch < back)
			continue;
		store_votes_held(round->o.store, name, epoch - back, &votes);
		store_signatures_held(round->o.store, name, epoch - back, &signatures);
		pthread_mutex_lock(&round->lock);
		for (size_t m = 0; m < round->o.config->member_count && m < 32; m++) {
			struct round_member_figures *f = &round->figures[i].members[m];
			if (votes & ((uint32_t)1 << m) && f->vote_epoch < epoch - back)
				f->vote_epoch = epoch - back;
			if (signatures & ((uint32_t)1 << m) && f->signature_epoch < epoch - back)
				f->signature_epoch = epoch - back;
		}
		pthread_mutex_unlock(&round->lock);
	}
}

void round_figures_failed(struct round *round, size_t i, enum round_failure reason)
{
	pthread_mutex_lock(&round->lock);
	round->figures[i].failed_total[reason]++;
	pthread_mutex_unlock(&round->lock);
}

void round_figures_phase(struct round *round, size_t i, enum round_phase phase, uint64_t ms)
{
	size_t b = 0;
	while (b < ROUND_DURATION_BUCKETS && (double)ms / 1000.0 > round_duration_bounds_seconds[b])
		b++;
	pthread_mutex_lock(&round->lock);
	struct round_duration_histogram *h = &round->figures[i].phases[phase];
	h->buckets[b]++;
	h->count++;
	h->sum_ms += ms;
	pthread_mutex_unlock(&round->lock);
}

void round_step_trying(struct round *round, size_t i, enum round_phase phase)
{
	if (!round->ns[i].step_began_ms[phase])
		round->ns[i].step_began_ms[phase] = round_monotonic_ms();
}

void round_step_tried(struct round *round, size_t i, enum round_phase phase, bool done)
{
	uint64_t began = round->ns[i].step_began_ms[phase];
	if (done && began)
		round_figures_phase(round, i, phase, round_monotonic_ms() - began);
}

void round_figures_received(struct round *round, size_t i, size_t member, uint64_t epoch, bool signature,
                            uint64_t now)
{
	struct epoch_phases phases;
	if (member >= round->o.config->member_count ||
	    schedule_epoch_phases(&round->o.config->epoch, epoch, &phases) != 0)
		return;
	uint64_t from = signature ? phases.vote_deadline : phases.vote_at;
	int64_t lateness = now >= from ? (int64_t)(now - from) : -(int64_t)(from - now);
	pthread_mutex_lock(&round->lock);
	struct round_member_figures *f = &round->figures[i].members[member];
	if (signature && epoch >= f->signature_epoch) {
		f->signature_epoch = epoch;
		f->signature_lateness_seconds = lateness;
	} else if (!signature && epoch >= f->vote_epoch) {
		f->vote_epoch = epoch;
		f->vote_lateness_seconds = lateness;
	}
	pthread_mutex_unlock(&round->lock);
}

static int refusal_of(enum api_error error, enum round_refusal *out)
{
	switch (error) {
	case API_ERROR_NONE:
	case API_ERROR_UNAVAILABLE:
		return -1;
	case API_ERROR_TOO_LATE:
		*out = ROUND_REFUSAL_TOO_LATE;
		break;
	case API_ERROR_WRONG_EPOCH:
		*out = ROUND_REFUSAL_WRONG_EPOCH;
		break;
	case API_ERROR_BAD_SIGNATURE:
		*out = ROUND_REFUSAL_BAD_SIGNATURE;
		break;
	case API_ERROR_MALFORMED:
	case API_ERROR_BODY_TOO_LARGE:
		*out = ROUND_REFUSAL_MALFORMED;
		break;
	case API_ERROR_UNKNOWN_BASE:
		*out = ROUND_REFUSAL_UNKNOWN_BASE;
		break;
	case API_ERROR_CONFLICTING_VOTE:
	case API_ERROR_CONFLICTING_HEADER:
		*out = ROUND_REFUSAL_CONFLICTING;
		break;
	default:
		*out = ROUND_REFUSAL_OTHER;
		break;
	}
	return 0;
}

void round_figures_refused(struct round *round, size_t member, enum api_error error)
{
	enum round_refusal reason;
	if (member >= round->o.config->member_count || refusal_of(error, &reason) != 0)
		return;
	pthread_mutex_lock(&round->lock);
	round->refusals[member][reason]++;
	pthread_mutex_unlock(&round->lock);
}

size_t round_claimed_member(const struct round *round, const uint8_t *bytes, size_t len, bool envelope)
{
	const struct config *config = round->o.config;
	struct vote_envelope parts;
	struct note *note = NULL;
	size_t member = config->member_count;
	if (envelope) {
		size_t max = round_vote_body_max(config);
		if (len > max || vote_envelope_parse(bytes, len, max, &parts) != 0)
			return member;
		bytes = parts.note;
		len = parts.note_len;
	}
	if (note_parse(bytes, len, &note) != 0)
		return member;
	if (note->signature_count == 1)
		for (size_t m = 0; m < config->member_count; m++)
			if (strcmp(config->members[m].name, note->signatures[0].name) == 0)
				member = m;
	note_free(note);
	return member;
}

void round_statistics_get(struct round *round, size_t i, struct round_statistics *out)
{
	memset(out, 0, sizeof *out);
	if (i >= round->o.config->namespace_count)
		return;
	pthread_mutex_lock(&round->lock);
	*out = round->figures[i];
	out->epoch = round->ns[i].epoch;
	pthread_mutex_unlock(&round->lock);
	struct publish_diffs_statistics *diffs = malloc(sizeof *diffs);
	if (diffs) {
		publish_diffs_statistics(round->o.diffs, diffs);
		memcpy(out->diff_bytes, diffs->bytes[i], sizeof out->diff_bytes);
		free(diffs);
	}
}

void round_refusals_get(struct round *round, uint64_t out[CONFIG_MAX_MEMBERS][ROUND_REFUSAL_COUNT])
{
	pthread_mutex_lock(&round->lock);
	memcpy(out, round->refusals, sizeof round->refusals);
	pthread_mutex_unlock(&round->lock);
}
