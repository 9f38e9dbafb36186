/*
 * compute.c: step 2 of a round: the votes, the notes they list, the consensus, the signed header.
 *
 * The votes still missing at the vote deadline are pulled from their authors, all at once, and
 * checked exactly as pushed ones are. Then every note the held votes list that this authority
 * lacks is gathered from the members that listed it (gather.c: in bulk, in parallel, checked,
 * stored), and the consensus runs over every vote held (each was verified when it was kept),
 * reading each note it chose from the store or from what was gathered, never from the network,
 * so that every record of the body is a note this authority verified itself. The previous
 * snapshot held here is the one whose revocations method 2 carries. Every peer request is bounded
 * by the time left in the window: the header must still be signed and pushed before the
 * signature deadline.
 */
#include "server/round/internal.h"

#include "crypto/crypto.h"
#include "base/error.h"
#include "schema/note.h"
#include "schema/registration.h"
#include "schema/vote.h"
#include "schema/vote_envelope.h"
#include "schema/health.h"
#include "server/publish/vote.h"
#include "server/store/registrations.h"
#include "server/store/statements.h"
#include "server/store/votes.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Pulls member m's vote from m itself. */
struct pull_context {
	struct round *round;
	size_t namespace_index;
	uint64_t now;
};

static void on_pulled_vote(void *context, size_t member, const struct peer_answer *answer)
{
	struct pull_context *c = context;
	struct round_answer verdict;
	struct vote vote;
	struct vote_body *body = NULL;
	size_t author = member;
	if (answer->transport != PEER_TRANSPORT_ANSWERED || answer->status != 200)
		return;
	bool refused = round_check_vote(c->round, c->namespace_index, answer->body.data, answer->body.len,
	                                c->now, &vote, &body, &author, &verdict) != API_ERROR_NONE;
	if (refused)
		round_figures_refused(c->round, member, verdict.error);
	if (refused || author != member) {
		round_log(c->round, c->namespace_index, c->round->ns[c->namespace_index].epoch,
		          "the vote pulled from %s is refused: %s", c->round->o.config->members[member].name,
		          refused ? verdict.detail : "it is not that member's");
		vote_body_free(body);
		return;
	}
	vote_body_free(body);
	if (vote.epoch == c->round->ns[c->namespace_index].epoch)
		round_keep_vote(c->round, c->namespace_index, vote.epoch, member, answer->body.data,
		                answer->body.len, &verdict);
}

/* Pulls each missing vote from its author, all at once, by deadline_ms. */
static void pull_votes(struct round *round, size_t i, uint64_t now, uint64_t deadline_ms)
{
	const struct config *config = round->o.config;
	struct round_namespace *rn = &round->ns[i];
	struct pull_context context = {round, i, now};
	struct peer_call calls[CONFIG_MAX_MEMBERS];
	const struct peer_call *asked[CONFIG_MAX_MEMBERS] = {0};
	uint32_t held = 0;
	if (store_votes_held(round->o.store, config->namespaces[i].name, rn->epoch, &held) != 0)
		return;
	for (size_t m = 0; m < config->member_count; m++) {
		if (m == config->self_index || (held & ((uint32_t)1 << m)))
			continue;
		calls[m] = (struct peer_call){.operation = PEER_PULL_VOTE,
		                              .namespace_name = config->namespaces[i].name,
		                              .epoch = rn->epoch,
		                              .voter = config->members[m].name,
		                              .deadline_ms = deadline_ms};
		asked[m] = &calls[m];
	}
	struct peers_broadcast_options options = {NULL, on_pulled_vote, &context};
	struct peer_answer answers[CONFIG_MAX_MEMBERS];
	if (peers_call_each(round->o.peers, asked, &options, answers) == 0)
		peer_answers_free(answers, config->member_count);
}

/* The votes held, parsed and loaded. */
struct held_votes {
	size_t count;
	size_t member[CONFIG_MAX_MEMBERS];
	struct vote votes[CONFIG_MAX_MEMBERS];
	struct vote_body *bodies[CONFIG_MAX_MEMBERS];
	struct consensus_vote inputs[CONFIG_MAX_MEMBERS];
};

static void held_votes_free(struct held_votes *h)
{
	for (size_t v = 0; v < h->count; v++)
		vote_body_free(h->bodies[v]);
	h->count = 0;
}

/* The members of whom two different votes for the epoch were received (the evidence kept): */
struct equivocators {
	uint64_t epoch;
	uint32_t members;
};

static int equivocator_visit(void *context, const struct store_evidence *evidence)
{
	struct equivocators *e = context;
	if (evidence->epoch > e->epoch)
		return 1; /* in epoch order: the rest are later */
	if (evidence->epoch == e->epoch && evidence->kind == STORE_EVIDENCE_CONFLICTING_VOTES &&
	    evidence->member < 32)
		e->members |= (uint32_t)1 << evidence->member;
	return 0;
}

/* The held votes of the epoch, but none of a member who sent two different ones: neither counts
 * (consensus/consensus.md, "Before computing"), so that every member holding both computes
 * without either, whichever it received first. */
static int load_votes(struct round *round, size_t i, struct held_votes *h)
{
	const struct config *config = round->o.config;
	const char *name = config->namespaces[i].name;
	uint64_t epoch = round->ns[i].epoch;
	struct buffer envelope;
	uint32_t held = 0;
	struct equivocators equivocators = {epoch, 0};
	memset(h, 0, sizeof *h);
	int rc = store_votes_held(round->o.store, name, epoch, &held);
	if (rc == 0) {
		rc = store_evidence_foreach(round->o.store, name, epoch, equivocator_visit, &equivocators);
		rc = rc == 1 ? 0 : rc;
	}
	buffer_init(&envelope);
	for (size_t m = 0; rc == 0 && m < config->member_count; m++) {
		if (!(held & ((uint32_t)1 << m)) || (equivocators.members & ((uint32_t)1 << m)))
			continue;
		struct vote_envelope parts;
		struct note *note = NULL;
		size_t v = h->count;
		rc = store_vote_get(round->o.store, name, epoch, (unsigned)m, &envelope);
		if (rc == 0)
			rc = vote_envelope_parse(envelope.data, envelope.len, round_vote_body_max(config),
			                         &parts);
		if (rc == 0)
			rc = note_parse(parts.note, parts.note_len, &note);
		if (rc == 0)
			rc = vote_parse(note->text, note->text_len, &h->votes[v]);
		if (rc == 0)
			rc = round_vote_body_load(config, i, &h->votes[v], parts.body, parts.body_len,
			                          &h->bodies[v]);
		note_free(note);
		if (rc == 0) {
			consensus_vote_init(&h->inputs[v], &h->votes[v], h->bodies[v]);
			h->member[v] = m;
			h->count++;
		}
	}
	buffer_free(&envelope);
	if (rc)
		held_votes_free(h);
	return rc;
}

/* ---- the notes the consensus asks for ---- */

/* The consensus reads each note it chose from the store, or from the notes gathered from peers
 * this epoch (gather.c), never from the network: every note it may ask for was fetched before it
 * ran. A registration or health statement read from the store is held until the rule asks for
 * the next note (consensus.h allows no more); a revocation is copied, since it must stay valid
 * until the rule returns. */
struct note_source {
	struct round *round;
	size_t namespace_index;
	struct buffer current; /* the last registration or health statement read from the store */
	uint8_t **copies;      /* the store's revocations handed out, freed after the consensus */
	size_t count, cap;
	/* The versions handed out that name a target revoked here and that the own vote does not
	 * list (result_revives_revoked); none in the usual epoch. */
	struct vote_body_record *revived;
	size_t revived_count, revived_cap;
};

static int keep_copy(struct note_source *s, const struct buffer *held, const uint8_t **note, size_t *len)
{
	if (s->count == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 1024;
		uint8_t **grown = realloc(s->copies, cap * sizeof *grown);
		if (!grown)
			return DIRAUTH_ERR_NOMEM;
		s->copies = grown;
		s->cap = cap;
	}
	uint8_t *copy = malloc(held->len ? held->len : 1);
	if (!copy)
		return DIRAUTH_ERR_NOMEM;
	memcpy(copy, held->data, held->len);
	s->copies[s->count++] = copy;
	*note = copy;
	*len = held->len;
	return 0;
}

static void note_source_free(struct note_source *s)
{
	for (size_t n = 0; n < s->count; n++)
		free(s->copies[n]);
	free(s->copies);
	free(s->revived);
	buffer_free(&s->current);
}

/* Whether this authority's own vote lists exactly this version: its sealed view holds it, and
 * the store keeps nothing revoked in a view. */
static bool own_vote_lists(const struct vote_body *own, const uint8_t *service_id, uint64_t sequence,
                           const uint8_t *digest)
{
	size_t low = 0, high = own ? own->record_count : 0;
	while (low < high) {
		size_t middle = low + (high - low) / 2;
		int order = memcmp(own->records[middle].service_id, service_id, SERVICE_ID_SIZE);
		if (order == 0)
			return own->records[middle].sequence == sequence &&
			       memcmp(own->records[middle].registration_sha256, digest, 32) == 0;
		if (order < 0)
			low = middle + 1;
		else
			high = middle;
	}
	return false;
}

/* Whether a registration note names a service or endpoint this authority holds a revocation of
 * (a note that cannot be read counts as one). */
static bool revoked_here(struct round *round, size_t i, const uint8_t *note, size_t len)
{
	const char *name = round->o.config->namespaces[i].name;
	struct registration r;
	struct note *parsed = NULL;
	if (registration_parse_note(note, len, &r, &parsed) != 0)
		return true;
	note_free(parsed);
	bool revoked =
	    store_revocation_find(round->o.store, name, r.service_id, NULL, NULL) != DIRAUTH_ERR_NOT_FOUND;
	for (size_t e = 0; !revoked && e < r.endpoint_count; e++)
		revoked = store_revocation_find(round->o.store, name, r.service_id,
		                                r.endpoints[e].endpoint_id, NULL) != DIRAUTH_ERR_NOT_FOUND;
	registration_clear(&r);
	return revoked;
}

/* Keeps a version handed out that names a target revoked here, when the own vote does not list
 * it: only such a version can (the sealed view keeps nothing revoked). */
static int note_revived(struct note_source *s, const uint8_t service_id[SERVICE_ID_SIZE], uint64_t sequence,
                        const uint8_t digest[32], const uint8_t *note, size_t note_len)
{
	const struct round_namespace *rn = &s->round->ns[s->namespace_index];
	if (own_vote_lists(rn->own_body, service_id, sequence, digest) ||
	    !revoked_here(s->round, s->namespace_index, note, note_len))
		return 0;
	if (s->revived_count == s->revived_cap) {
		size_t cap = s->revived_cap ? s->revived_cap * 2 : 16;
		struct vote_body_record *grown = realloc(s->revived, cap * sizeof *grown);
		if (!grown)
			return DIRAUTH_ERR_NOMEM;
		s->revived = grown;
		s->revived_cap = cap;
	}
	struct vote_body_record *version = &s->revived[s->revived_count++];
	memcpy(version->service_id, service_id, SERVICE_ID_SIZE);
	version->sequence = sequence;
	memcpy(version->registration_sha256, digest, 32);
	return 0;
}

static int supply_note(void *context, const uint8_t service_id[SERVICE_ID_SIZE], uint64_t sequence,
                       const uint8_t digest[32], const uint8_t **note, size_t *note_len)
{
	struct note_source *s = context;
	struct round *round = s->round;
	size_t i = s->namespace_index;
	const char *name = round->o.config->namespaces[i].name;
	uint8_t actual[32];
	buffer_reset(&s->current);
	int rc = store_registration_get(round->o.store, name, service_id, sequence, &s->current);
	if (rc == 0 && crypto_sha256(s->current.data, s->current.len, actual) == 0 &&
	    memcmp(actual, digest, 32) == 0) {
		*note = s->current.data;
		*note_len = s->current.len;
	} else if ((rc = round_notes_find(&round->ns[i].notes, digest, note, note_len)) != 0) {
		return rc;
	}
	return note_revived(s, service_id, sequence, digest, *note, *note_len);
}

/* Whether the computed result publishes a record naming a target revoked here that its own
 * rule did not leave out: a version handed out to the rule (note_revived) that method 2 did not
 * exclude. */
static bool result_revives_revoked(const struct note_source *s, const struct consensus_result *result)
{
	for (size_t r = 0; r < s->revived_count; r++) {
		const struct vote_body_record *version = &s->revived[r];
		bool excluded = false;
		for (size_t e = 0; !excluded && e < result->excluded_count; e++)
			excluded = vote_body_record_same(&result->excluded[e], version);
		if (!excluded)
			return true;
	}
	return false;
}

/* A health statement or revocation: the store's (held as the current note, or copied when kept),
 * else one gathered (and checked) this epoch. */
static int supply_statement(struct note_source *s, const uint8_t *digest, bool kept, const uint8_t **note,
                            size_t *note_len)
{
	struct round *round = s->round;
	const char *name = round->o.config->namespaces[s->namespace_index].name;
	buffer_reset(&s->current);
	int rc = store_statement_get(round->o.store, name, digest, &s->current);
	if (rc == 0 && kept)
		return keep_copy(s, &s->current, note, note_len);
	if (rc == 0) {
		*note = s->current.data;
		*note_len = s->current.len;
		return 0;
	}
	if (rc == DIRAUTH_ERR_NOT_FOUND)
		rc = round_notes_find(&round->ns[s->namespace_index].notes, digest, note, note_len);
	return rc;
}

static int supply_health(void *context, const uint8_t service_id[SERVICE_ID_SIZE],
                         const uint8_t endpoint_id[ENDPOINT_ID_SIZE], uint64_t issued_at, uint64_t sequence,
                         const uint8_t digest[32], const uint8_t **note, size_t *note_len)
{
	(void)service_id, (void)endpoint_id, (void)issued_at, (void)sequence;
	return supply_statement(context, digest, false, note, note_len);
}

static int supply_revocation(void *context, const uint8_t service_id[SERVICE_ID_SIZE],
                             const uint8_t *endpoint_id, const uint8_t digest[32], const uint8_t **note,
                             size_t *note_len)
{
	(void)service_id, (void)endpoint_id;
	return supply_statement(context, digest, true, note, note_len);
}

/* ---- the step ---- */

/* Pushes the signed header note to every peer, by the signature deadline, and logs the members
 * that refused it and those that computed another header. */
static void push_signature(struct round *round, size_t i, const struct buffer *note)
{
	const struct config *config = round->o.config;
	uint64_t epoch = round->ns[i].epoch;
	struct peer_call call = {.operation = PEER_PUSH_SIGNATURE,
	                         .namespace_name = config->namespaces[i].name,
	                         .body = note->data,
	                         .body_len = note->len,
	                         .deadline_ms =
	                             round_deadline_ms(round, round->ns[i].phases.signature_deadline +
	                                                          config->bounds.clock_skew_seconds)};
	struct peer_answer answers[CONFIG_MAX_MEMBERS];
	if (peers_broadcast(round->o.peers, &call, NULL, answers) != 0)
		return;
	char refused[1024];
	size_t taken = round_push_refusals(config, answers, refused, sizeof refused);
	for (size_t m = 0; m < config->member_count; m++)
		if (m != config->self_index && answers[m].transport == PEER_TRANSPORT_ANSWERED &&
		    answers[m].status == 409 && strcmp(answers[m].error_code, "conflicting_header") == 0)
			round_log(round, i, epoch, "%s computed another header", config->members[m].name);
	if (refused[0])
		round_log(round, i, epoch, "signature taken by %zu of %zu peers (refused by %s)", taken,
		          config->member_count - 1, refused);
	peer_answers_free(answers, config->member_count);
}

/* Signs the header, keeps the signature and pushes it. */
static int sign_header(struct round *round, size_t i, const struct buffer *text)
{
	const struct config *config = round->o.config;
	uint64_t epoch = round->ns[i].epoch;
	struct note_signature signature;
	struct buffer note;
	char why[SIGNER_DETAIL_MAX + 1] = "";
	buffer_init(&note);
	int rc = signer_client_sign(round->o.signer, SIGNER_OP_SIGN_SNAPSHOT_HEADER, text->data, text->len, 0,
	                            NULL, 0, &signature, why, sizeof why);
	signer_health_note(round->o.signer_health, rc, why);
	if (rc)
		round_log(round, i, epoch, "the signer did not sign the header: %s",
		          why[0] ? why : dirauth_strerror(rc));
	if (rc == 0)
		rc = note_format(text->data, text->len, &signature, 1, &note);
	if (rc == 0) {
		rc = store_signature_put(round->o.store, config->namespaces[i].name, epoch,
		                         (unsigned)config->self_index, note.data, note.len);
		uint64_t now;
		if (rc == 0 && clock_now(round->o.clock, &now) == 0)
			round_figures_received(round, i, config->self_index, epoch, true, now);
		if (rc == DIRAUTH_ERR_EXISTS)
			rc = 0;
	}
	if (rc == 0)
		push_signature(round, i, &note);
	buffer_free(&note);
	return rc;
}

/* The consensus over the held votes, the notes already gathered. Fills rn->result; failure
 * says why the rule refused; *revives whether the result publishes a target revoked here
 * (result_revives_revoked). */
static int compute_consensus(struct round *round, size_t i, struct held_votes *held,
                             struct consensus_failure *failure, bool *revives)
{
	const struct config *config = round->o.config;
	const struct config_namespace *ns = &config->namespaces[i];
	struct round_namespace *rn = &round->ns[i];
	struct consensus_params params = {
	    .namespace_name = ns->name,
	    .origin = ns->origin,
	    .epoch = rn->epoch,
	    .threshold = config->threshold,
	    .authorities = config->member_count,
	    .max_records = config->bounds.records_per_snapshot,
	    .max_body_bytes = config->bounds.snapshot_body_uncompressed,
	};
	struct note_source source = {.round = round, .namespace_index = i};
	int rc = schedule_epoch_times(&config->epoch, rn->epoch, &params.times);
	if (rc)
		return rc;
	/* Method 2's inputs: the namespace's parameters and the previous snapshot held here, the one
	 * the own vote names (the rule checks that the votes agree on it). */
	struct publish_previous previous;
	int previous_rc = publish_previous_load(config, round->o.store, i, &previous);
	if (previous_rc && ns->lifecycle)
		round_log(round, i, rn->epoch, "the previous snapshot cannot be read: %s",
		          dirauth_strerror(previous_rc));
	struct consensus_lifecycle lifecycle;
	publish_consensus_lifecycle(config, i, &previous, &lifecycle);
	lifecycle.health = supply_health;
	lifecycle.revocation = supply_revocation;
	lifecycle.context = &source;
	if (ns->lifecycle)
		params.lifecycle = &lifecycle;
	consensus_result_clear(&rn->result);
	rc =
	    consensus_compute(&params, held->inputs, held->count, supply_note, &source, &rn->result, failure);
	*revives = rc == 0 && result_revives_revoked(&source, &rn->result);
	publish_previous_clear(&previous);
	note_source_free(&source);
	return rc;
}

/* One computation of step 2, from the votes to the signed header, run in order by round_compute:
 * gather_votes, fetch_listed_notes, run_rule, sign_result. It holds what each step hands the
 * next; round_compute allocates it and frees it once, however the computation ends. */
struct computation {
	struct round *round;
	size_t namespace_index;
	uint64_t now;
	struct held_votes held;
	struct round_gather_stats gathered;
	/* On the monotonic clock, for the log: when the computation started, the votes were read,
	 * the notes gathered, and the result kept (the consensus computed and stored, before the
	 * header is signed and pushed). */
	uint64_t started, votes_read, notes_gathered, result_kept;
};

/* The votes still missing pulled from their authors by the signature deadline, then every vote
 * held read into c->held. */
static int gather_votes(struct computation *c)
{
	struct round *round = c->round;
	size_t i = c->namespace_index;
	struct round_namespace *rn = &round->ns[i];
	pull_votes(round, i, c->now, round_deadline_ms(round, rn->phases.signature_deadline));
	int rc = load_votes(round, i, &c->held);
	c->votes_read = round_monotonic_ms();
	if (rc)
		round_log(round, i, rn->epoch, "the votes held cannot be read: %s", dirauth_strerror(rc));
	return rc;
}

/* The notes the held votes list that this authority lacks, gathered from the members that listed
 * them by the time the header must still be signed and pushed (one peer request before the
 * signature deadline). */
static int fetch_listed_notes(struct computation *c)
{
	struct round *round = c->round;
	const struct config *config = round->o.config;
	size_t i = c->namespace_index;
	struct round_namespace *rn = &round->ns[i];
	const struct vote_body *bodies[CONFIG_MAX_MEMBERS] = {0};
	for (size_t v = 0; v < c->held.count; v++)
		bodies[c->held.member[v]] = c->held.bodies[v];
	uint64_t until = round_leaving(config, rn->phases.signature_deadline, config->epoch.signature);
	int rc = round_gather(round, i, bodies, c->now, round_deadline_ms(round, until), &c->gathered);
	c->notes_gathered = round_monotonic_ms();
	if (rc)
		round_log(round, i, rn->epoch, "the notes the votes list cannot be gathered: %s",
		          dirauth_strerror(rc));
	return rc;
}

/* Runs the rule over the held votes into rn->result. A note still missing returns the rule's
 * error, logged once per epoch: a member that holds it may answer at the next tick, until the
 * deadline. A rule that refuses, or a result that would publish a target revoked here, fails the
 * epoch here (logged "not published") and returns 0 with rn->failed set and no result. */
static int run_rule(struct computation *c)
{
	struct round *round = c->round;
	size_t i = c->namespace_index;
	struct round_namespace *rn = &round->ns[i];
	const struct round_gather_stats *gathered = &c->gathered;
	struct consensus_failure failure;
	char why[512];
	bool revives = false;
	int rc = compute_consensus(round, i, &c->held, &failure, &revives);
	if (rc && failure.outcome == CONSENSUS_NOTE_MISSING) {
		if (!rn->logged_wait) {
			consensus_failure_describe(&failure, why, sizeof why);
			round_log(round, i, rn->epoch,
			          "no consensus yet: %s (%zu notes wanted, %zu fetched, %zu refused, %zu "
			          "missing%s%s); "
			          "retrying",
			          why, gathered->wanted, gathered->fetched, gathered->refused,
			          gathered->missing, gathered->failure[0] ? "; " : "", gathered->failure);
			rn->logged_wait = true;
		}
		return rc;
	}
	if (rc) {
		consensus_failure_describe(&failure, why, sizeof why);
		round_log(round, i, rn->epoch, "not published: %s", why);
		round_fail(round, i, ROUND_FAILURE_CONSENSUS);
		return 0;
	}
	/* Hard rule 4 holds here whatever the votes say: a record naming a target this authority holds
	 * a revocation of (one the votes no longer list: a member that missed it votes the old
	 * version) is never signed; the epoch fails at this authority rather than bring it back. */
	if (revives) {
		round_log(round, i, rn->epoch,
		          "not published: the votes chose a version naming a service or endpoint revoked "
		          "here");
		consensus_result_clear(&rn->result);
		round_fail(round, i, ROUND_FAILURE_REVOKED);
	}
	return 0;
}

/* Keeps the result (the held votes' bodies for reconciliation, the header text in the store),
 * then signs and pushes its header; the header is then computed. On failure the result is
 * cleared, computed again at the next tick. */
static int sign_result(struct computation *c)
{
	struct round *round = c->round;
	size_t i = c->namespace_index;
	struct round_namespace *rn = &round->ns[i];
	for (size_t v = 0; v < c->held.count; v++) {
		vote_body_free(rn->bodies[c->held.member[v]]);
		rn->bodies[c->held.member[v]] = c->held.bodies[v];
		c->held.bodies[v] = NULL;
	}
	int rc = store_consensus_put(round->o.store, round->o.config->namespaces[i].name, rn->epoch,
	                             rn->result.header_text.data, rn->result.header_text.len);
	if (rc == DIRAUTH_ERR_EXISTS)
		rc = 0;
	else if (rc == DIRAUTH_ERR_MISMATCH)
		round_log(round, i, rn->epoch,
		          "the consensus differs from the one computed before the restart");
	c->result_kept = round_monotonic_ms();
	if (rc == 0)
		rc = sign_header(round, i, &rn->result.header_text);
	if (rc) {
		consensus_result_clear(&rn->result);
	} else {
		pthread_mutex_lock(&round->lock);
		rn->computed = true;
		pthread_mutex_unlock(&round->lock);
	}
	return rc;
}

/* The lines of a header computed and signed: how long each step took, what the gathering of
 * notes did, and method 2's sections. */
static void log_computed(const struct computation *c)
{
	struct round *round = c->round;
	size_t i = c->namespace_index;
	const struct round_namespace *rn = &round->ns[i];
	const struct round_gather_stats *gathered = &c->gathered;
	round_log(round, i, rn->epoch,
	          "computed and signed: %llu records from %zu votes by method %llu; votes pulled in %llu ms, "
	          "%zu notes fetched in %llu ms, consensus in %llu ms, signed and pushed in %llu ms",
	          (unsigned long long)rn->result.record_count, rn->result.counting_votes,
	          (unsigned long long)rn->result.method, (unsigned long long)(c->votes_read - c->started),
	          gathered->fetched, (unsigned long long)(c->notes_gathered - c->votes_read),
	          (unsigned long long)(c->result_kept - c->notes_gathered),
	          (unsigned long long)(round_monotonic_ms() - c->result_kept));
	if (gathered->failed)
		round_log(round, i, rn->epoch, "notes: %zu members failed to answer (%s)", gathered->failed,
		          gathered->failure);
	if (gathered->wanted)
		round_log(round, i, rn->epoch,
		          "notes: %zu wanted, %zu fetched from %zu members in %zu requests (%zu bytes), %zu "
		          "refused, %zu missing; found in %llu ms, fetched and checked in %llu ms",
		          gathered->wanted, gathered->fetched, gathered->members, gathered->requests,
		          gathered->bytes, gathered->refused, gathered->missing,
		          (unsigned long long)gathered->collect_ms, (unsigned long long)gathered->fetch_ms);
	if (rn->result.method == CONSENSUS_METHOD_LIFECYCLE)
		round_log(round, i, rn->epoch,
		          "method 2: %zu health entries, %zu revocations listed, %zu records left out",
		          rn->result.health_count, rn->result.revocation_count, rn->result.excluded_count);
}

int round_compute(struct round *round, size_t i, uint64_t now)
{
	struct round_namespace *rn = &round->ns[i];
	struct computation *c = calloc(1, sizeof *c);
	if (!c)
		return DIRAUTH_ERR_NOMEM;
	c->round = round;
	c->namespace_index = i;
	c->now = now;
	c->started = round_monotonic_ms();

	int rc = gather_votes(c);
	if (rc == 0)
		rc = fetch_listed_notes(c);
	if (rc == 0)
		rc = run_rule(c);
	if (rc == 0 && !rn->failed) /* the rule may have failed the epoch here: nothing to sign */
		rc = sign_result(c);
	if (rc == 0 && rn->computed)
		log_computed(c);

	/* What was gathered goes into the store whatever came of the round, once the header (if
	 * any) is signed and pushed: the next epoch's vote lists it. */
	rn->notes_stored += round_notes_store(round, i);
	held_votes_free(&c->held);
	free(c);
	return rc;
}
