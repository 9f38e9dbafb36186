/*
 * compute.c: step 2 of a round: the votes, the consensus, the signed header.
 *
 * The votes still missing at the deadline are pulled from their authors, all at once, and
 * checked exactly as pushed ones are. The consensus runs over every vote held (each was verified
 * when it was kept). The rule asks for the note of each version it chose; a note held here is
 * read from the store, one held only by peers is fetched from a member whose vote listed it and
 * checked as intake would check a provider's (and its digest against the vote), so that every
 * record of the body is a note this authority verified itself. Method 2 asks likewise for health
 * statements and revocations (GET /v1/<ns>/statements/<sha256>): a peer's statement must hash to
 * the line's digest and carry the line's fields (its signature the consensus checks against the
 * published registration); a peer's revocation passes intake's checks for one learned from a
 * peer. The previous snapshot held here is the one whose revocations the rule carries. Notes stay in memory
 * until the body is built: the consensus needs them all at once.
 */
#include "server/round/internal.h"

#include "schema/crypto.h"
#include "schema/error.h"
#include "schema/note.h"
#include "schema/vote.h"
#include "schema/vote_envelope.h"
#include "schema/health.h"
#include "server/intake/lifecycle.h"
#include "server/intake/submit.h"
#include "server/publish/vote.h"
#include "server/store/lifecycle.h"
#include "server/store/votes.h"

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

static void pull_votes(struct round *round, size_t i, uint64_t now)
{
	const struct config *config = round->o.config;
	struct round_namespace *rn = &round->ns[i];
	struct peers_broadcast *started[CONFIG_MAX_MEMBERS] = {0};
	struct pull_context context = {round, i, now};
	uint32_t held = 0;
	if (store_votes_held(round->o.store, config->namespaces[i].name, rn->epoch, &held) != 0)
		return;
	for (size_t m = 0; m < config->member_count; m++) {
		if (m == config->self_index || (held & ((uint32_t)1 << m)))
			continue;
		uint8_t targets[CONFIG_MAX_MEMBERS] = {0};
		targets[m] = 1;
		struct peer_call call = {.operation = PEER_PULL_VOTE,
		                         .namespace_name = config->namespaces[i].name,
		                         .epoch = rn->epoch,
		                         .voter = config->members[m].name};
		struct peers_broadcast_options options = {targets, on_pulled_vote, &context};
		peers_broadcast_start(round->o.peers, &call, &options, &started[m]);
	}
	for (size_t m = 0; m < config->member_count; m++)
		if (started[m]) {
			struct peer_answer answers[CONFIG_MAX_MEMBERS];
			peers_broadcast_finish(started[m], answers);
			peer_answers_free(answers, config->member_count);
		}
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

enum note_kind { NOTE_REGISTRATION, NOTE_HEALTH, NOTE_REVOCATION };

struct note_source {
	struct round *round;
	size_t namespace_index;
	uint64_t now;
	uint64_t valid_after;
	struct held_votes *votes;
	uint8_t **notes; /* every note handed out, freed after the consensus */
	size_t *lengths;
	bool *from_peer;       /* notes[i] was fetched from a peer (kept for reconciliation) */
	enum note_kind *kinds; /* what notes[i] is */
	size_t count, cap;
	size_t fetched, refused;
	uint64_t fetch_ms; /* time spent fetching notes from peers */
};

static int keep_note(struct note_source *s, enum note_kind kind, const uint8_t *data, size_t len,
                     bool from_peer, const uint8_t **note)
{
	if (s->count == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 1024;
		uint8_t **notes = realloc(s->notes, cap * sizeof *notes);
		if (notes)
			s->notes = notes;
		size_t *lengths = notes ? realloc(s->lengths, cap * sizeof *lengths) : NULL;
		if (lengths)
			s->lengths = lengths;
		bool *flags = lengths ? realloc(s->from_peer, cap * sizeof *flags) : NULL;
		if (flags)
			s->from_peer = flags;
		enum note_kind *kinds = flags ? realloc(s->kinds, cap * sizeof *kinds) : NULL;
		if (!kinds)
			return DIRAUTH_ERR_NOMEM;
		s->kinds = kinds;
		s->cap = cap;
	}
	uint8_t *copy = malloc(len ? len : 1);
	if (!copy)
		return DIRAUTH_ERR_NOMEM;
	memcpy(copy, data, len);
	s->lengths[s->count] = len;
	s->from_peer[s->count] = from_peer;
	s->kinds[s->count] = kind;
	s->notes[s->count++] = copy;
	*note = copy;
	return 0;
}

/* Whether vote body lists exactly this version. */
static bool body_lists(const struct vote_body *body, const uint8_t *service_id, uint64_t sequence,
                       const uint8_t *digest)
{
	size_t low = 0, high = body->record_count;
	while (low < high) {
		size_t middle = low + (high - low) / 2;
		int order = memcmp(body->records[middle].service_id, service_id, SERVICE_ID_SIZE);
		if (order == 0)
			return body->records[middle].sequence == sequence &&
			       memcmp(body->records[middle].registration_sha256, digest, 32) == 0;
		if (order < 0)
			low = middle + 1;
		else
			high = middle;
	}
	return false;
}

/* A peer's note checked as intake checks a provider's, for this service and sequence. */
static int check_peer_note(struct note_source *s, const uint8_t *data, size_t len, const uint8_t *service_id,
                           uint64_t sequence, const uint8_t *digest)
{
	const struct config *config = s->round->o.config;
	struct registration r;
	struct note *parsed = NULL;
	struct submit_result result;
	uint8_t actual[32];
	if (crypto_sha256(data, len, actual) != 0 || memcmp(actual, digest, 32) != 0)
		return DIRAUTH_ERR_MISMATCH;
	if (submit_check_note(config, data, len, s->now, &r, &parsed, &result) != API_ERROR_NONE)
		return DIRAUTH_ERR_REFUSED;
	int rc = 0;
	if (strcmp(r.namespace_name, config->namespaces[s->namespace_index].name) != 0 ||
	    memcmp(r.service_id, service_id, SERVICE_ID_SIZE) != 0 || r.sequence != sequence ||
	    r.expires <= s->valid_after)
		rc = DIRAUTH_ERR_REFUSED;
	registration_clear(&r);
	note_free(parsed);
	return rc;
}

static int supply_note(void *context, const uint8_t service_id[SERVICE_ID_SIZE], uint64_t sequence,
                       const uint8_t digest[32], const uint8_t **note, size_t *note_len)
{
	struct note_source *s = context;
	struct round *round = s->round;
	const struct config *config = round->o.config;
	const char *name = config->namespaces[s->namespace_index].name;
	struct buffer held;
	uint8_t actual[32];
	buffer_init(&held);
	int rc = store_registration_get(round->o.store, name, service_id, sequence, &held);
	if (rc == 0 && crypto_sha256(held.data, held.len, actual) == 0 && memcmp(actual, digest, 32) == 0) {
		rc = keep_note(s, NOTE_REGISTRATION, held.data, held.len, false, note);
		*note_len = held.len;
		buffer_free(&held);
		return rc;
	}
	buffer_free(&held);
	/* Held by peers only: ask each member whose vote lists it. */
	rc = DIRAUTH_ERR_NOT_FOUND;
	for (size_t v = 0; v < s->votes->count; v++) {
		size_t m = s->votes->member[v];
		if (m == config->self_index || !body_lists(s->votes->bodies[v], service_id, sequence, digest))
			continue;
		struct peer_answer answer;
		peer_answer_init(&answer);
		uint64_t asked = round_monotonic_ms();
		int got = peer_fetch_registration(round->o.peers, m, name, service_id, sequence, &answer);
		s->fetch_ms += round_monotonic_ms() - asked;
		if (got == 0 && answer.status == 200) {
			s->fetched++;
			got = check_peer_note(s, answer.body.data, answer.body.len, service_id, sequence,
			                      digest);
			if (got == 0) {
				rc = keep_note(s, NOTE_REGISTRATION, answer.body.data, answer.body.len, true,
				               note);
				*note_len = answer.body.len;
				peer_answer_free(&answer);
				return rc;
			}
			s->refused++;
			rc = DIRAUTH_ERR_REFUSED;
		}
		peer_answer_free(&answer);
	}
	return rc;
}

/* ---- method 2: the health statements and revocations the consensus asks for ---- */

static bool body_lists_statement(const struct vote_body *body, bool health, const uint8_t *digest)
{
	if (health) {
		for (size_t h = 0; h < body->health_count; h++)
			if (memcmp(body->health[h].statement_sha256, digest, 32) == 0)
				return true;
	} else {
		for (size_t r = 0; r < body->revocation_count; r++)
			if (memcmp(body->revocations[r].revocation_sha256, digest, 32) == 0)
				return true;
	}
	return false;
}

/* A peer's health statement for the line the votes list: its digest, its grammar (coarse
 * classes only) and size, and its fields the line's, not issued later than the clock skew
 * allows. Its signature is checked by the consensus against the published registration, whose
 * provider's enrolment supply_note checked. A refusal is one consensus_health_fn may judge. */
static int check_peer_health(struct note_source *s, const uint8_t *data, size_t len,
                             const uint8_t *service_id, const uint8_t *endpoint_id, uint64_t issued_at,
                             uint64_t sequence, const uint8_t *digest)
{
	const struct config *config = s->round->o.config;
	struct health_statement statement;
	struct note *parsed = NULL;
	uint8_t actual[32];
	if (len > HEALTH_MAX_BYTES)
		return DIRAUTH_ERR_BOUNDS;
	int rc = crypto_sha256(data, len, actual);
	if (rc)
		return rc;
	if (memcmp(actual, digest, 32) != 0)
		return DIRAUTH_ERR_MISMATCH;
	rc = health_parse_note(data, len, &statement, &parsed);
	note_free(parsed);
	if (rc)
		return rc == DIRAUTH_ERR_NOMEM ? rc : DIRAUTH_ERR_SYNTAX;
	if (strcmp(statement.namespace_name, config->namespaces[s->namespace_index].name) != 0 ||
	    memcmp(statement.service_id, service_id, SERVICE_ID_SIZE) != 0 ||
	    memcmp(statement.endpoint_id, endpoint_id, ENDPOINT_ID_SIZE) != 0 ||
	    statement.issued_at != issued_at || statement.sequence != sequence)
		return DIRAUTH_ERR_MISMATCH;
	if (statement.issued_at > s->now + config->bounds.clock_skew_seconds)
		return DIRAUTH_ERR_REFUSED;
	return 0;
}

/* A peer's revocation: its digest, then the checks of intake for a revocation learned from a
 * peer (submit_check_peer_revocation: the target registered here, who may revoke it, the
 * signature). */
static int check_peer_revocation(struct note_source *s, const uint8_t *data, size_t len,
                                 const uint8_t *digest)
{
	const struct round_options *o = &s->round->o;
	struct submit_context submit = {o->config, o->store, o->signer, o->signer_health, o->clock};
	struct submit_result result;
	uint8_t actual[32];
	int rc = crypto_sha256(data, len, actual);
	if (rc)
		return rc;
	if (memcmp(actual, digest, 32) != 0)
		return DIRAUTH_ERR_MISMATCH;
	enum api_error error = submit_check_peer_revocation(&submit, data, len, &result);
	if (error == API_ERROR_INTERNAL)
		return DIRAUTH_ERR_INTERNAL;
	return error == API_ERROR_NONE ? 0 : DIRAUTH_ERR_REFUSED;
}

/* The note of a statement: the one held here, else one fetched from a member whose vote lists
 * it and checked by check. */
static int supply_statement(struct note_source *s, bool health, const uint8_t *service_id,
                            const uint8_t *endpoint_id, uint64_t issued_at, uint64_t sequence,
                            const uint8_t *digest, const uint8_t **note, size_t *note_len)
{
	struct round *round = s->round;
	const struct config *config = round->o.config;
	const char *name = config->namespaces[s->namespace_index].name;
	enum note_kind kind = health ? NOTE_HEALTH : NOTE_REVOCATION;
	struct buffer held;
	buffer_init(&held);
	int rc = store_statement_get(round->o.store, name, digest, &held);
	if (rc == 0) {
		rc = keep_note(s, kind, held.data, held.len, false, note);
		*note_len = held.len;
		buffer_free(&held);
		return rc;
	}
	buffer_free(&held);
	if (rc != DIRAUTH_ERR_NOT_FOUND)
		return rc;
	for (size_t v = 0; v < s->votes->count; v++) {
		size_t m = s->votes->member[v];
		if (m == config->self_index || !body_lists_statement(s->votes->bodies[v], health, digest))
			continue;
		struct peer_answer answer;
		peer_answer_init(&answer);
		uint64_t asked = round_monotonic_ms();
		int got = peer_fetch_statement(round->o.peers, m, name, digest, &answer);
		s->fetch_ms += round_monotonic_ms() - asked;
		if (got == 0 && answer.status == 200) {
			s->fetched++;
			got = health ? check_peer_health(s, answer.body.data, answer.body.len, service_id,
			                                 endpoint_id, issued_at, sequence, digest)
			             : check_peer_revocation(s, answer.body.data, answer.body.len, digest);
			if (got == 0) {
				rc = keep_note(s, kind, answer.body.data, answer.body.len, true, note);
				*note_len = answer.body.len;
				peer_answer_free(&answer);
				return rc;
			}
			s->refused++;
			if (got == DIRAUTH_ERR_NOMEM || got == DIRAUTH_ERR_CRYPTO ||
			    got == DIRAUTH_ERR_INTERNAL) {
				peer_answer_free(&answer);
				return got;
			}
			rc = got;
		}
		peer_answer_free(&answer);
	}
	return rc;
}

static int supply_health(void *context, const uint8_t service_id[SERVICE_ID_SIZE],
                         const uint8_t endpoint_id[ENDPOINT_ID_SIZE], uint64_t issued_at, uint64_t sequence,
                         const uint8_t digest[32], const uint8_t **note, size_t *note_len)
{
	return supply_statement(context, true, service_id, endpoint_id, issued_at, sequence, digest, note,
	                        note_len);
}

static int supply_revocation(void *context, const uint8_t service_id[SERVICE_ID_SIZE],
                             const uint8_t *endpoint_id, const uint8_t digest[32], const uint8_t **note,
                             size_t *note_len)
{
	return supply_statement(context, false, service_id, endpoint_id, 0, 0, digest, note, note_len);
}

/* Frees the notes handed out, moving those fetched from peers to the round for reconciliation
 * (when keep is given): registrations to keep->fetched, statements to keep->statements. */
static void note_source_free(struct note_source *s, struct round_namespace *keep)
{
	size_t registrations = 0, statements = 0;
	for (size_t n = 0; n < s->count; n++)
		if (s->from_peer[n]) {
			if (s->kinds[n] == NOTE_REGISTRATION)
				registrations++;
			else
				statements++;
		}
	if (keep && registrations) {
		keep->fetched = calloc(registrations, sizeof *keep->fetched);
		keep->fetched_len = calloc(registrations, sizeof *keep->fetched_len);
		if (!keep->fetched || !keep->fetched_len) {
			free(keep->fetched);
			free(keep->fetched_len);
			keep->fetched = NULL;
			keep->fetched_len = NULL;
		}
	}
	if (keep && statements)
		keep->statements = calloc(statements, sizeof *keep->statements);
	size_t kept = 0, kept_statements = 0;
	for (size_t n = 0; n < s->count; n++) {
		if (s->from_peer[n] && keep && s->kinds[n] == NOTE_REGISTRATION && keep->fetched) {
			keep->fetched[kept] = s->notes[n];
			keep->fetched_len[kept++] = s->lengths[n];
		} else if (s->from_peer[n] && keep && s->kinds[n] != NOTE_REGISTRATION && keep->statements) {
			keep->statements[kept_statements++] = (struct round_statement){
			    .health = s->kinds[n] == NOTE_HEALTH, .note = s->notes[n], .len = s->lengths[n]};
		} else {
			free(s->notes[n]);
		}
	}
	if (keep) {
		keep->fetched_count = kept;
		keep->statement_count = kept_statements;
	}
	free(s->notes);
	free(s->lengths);
	free(s->from_peer);
	free(s->kinds);
}

/* ---- the step ---- */

/* Signs the header and keeps and pushes the signature. */
static int sign_header(struct round *round, size_t i, const struct buffer *text)
{
	const struct config *config = round->o.config;
	const char *name = config->namespaces[i].name;
	uint64_t epoch = round->ns[i].epoch;
	struct note_signature signature;
	struct buffer note;
	char why[SIGNER_DETAIL_MAX + 1] = "";
	buffer_init(&note);
	int rc = signer_client_sign(round->o.signer, SIGNER_OP_SIGN_SNAPSHOT_HEADER, text->data, text->len, 0,
	                            NULL, 0, &signature, why, sizeof why);
	signer_health_note(round->o.signer_health, rc, why);
	if (rc) {
		round_log(round, i, epoch, "the signer did not sign the header: %s",
		          why[0] ? why : dirauth_strerror(rc));
		return rc;
	}
	if ((rc = note_format(text->data, text->len, &signature, 1, &note)) == 0) {
		rc = store_signature_put(round->o.store, name, epoch, (unsigned)config->self_index, note.data,
		                         note.len);
		if (rc == DIRAUTH_ERR_EXISTS)
			rc = 0;
	}
	if (rc == 0) {
		struct peer_call call = {.operation = PEER_PUSH_SIGNATURE,
		                         .namespace_name = name,
		                         .body = note.data,
		                         .body_len = note.len};
		struct peer_answer answers[CONFIG_MAX_MEMBERS];
		if (peers_broadcast(round->o.peers, &call, NULL, answers) == 0) {
			for (size_t m = 0; m < config->member_count; m++)
				if (m != config->self_index &&
				    answers[m].transport == PEER_TRANSPORT_ANSWERED &&
				    answers[m].status == 409 &&
				    strcmp(answers[m].error_code, "conflicting_header") == 0)
					round_log(round, i, epoch, "%s computed another header",
					          config->members[m].name);
			peer_answers_free(answers, config->member_count);
		}
	}
	buffer_free(&note);
	return rc;
}

int round_compute(struct round *round, size_t i, uint64_t now)
{
	const struct config *config = round->o.config;
	const struct config_namespace *ns = &config->namespaces[i];
	struct round_namespace *rn = &round->ns[i];
	struct held_votes *held = calloc(1, sizeof *held);
	struct consensus_failure failure;
	struct buffer stored;
	if (!held)
		return DIRAUTH_ERR_NOMEM;
	buffer_init(&stored);
	uint64_t started = round_monotonic_ms();
	pull_votes(round, i, now);
	uint64_t pulled = round_monotonic_ms();
	int rc = load_votes(round, i, held);
	if (rc) {
		round_log(round, i, rn->epoch, "the votes held cannot be read: %s", dirauth_strerror(rc));
		free(held);
		return rc;
	}
	struct consensus_params params = {
	    .namespace_name = ns->name,
	    .origin = ns->origin,
	    .epoch = rn->epoch,
	    .threshold = config->threshold,
	    .authorities = config->member_count,
	    .max_records = config->bounds.records_per_snapshot,
	    .max_body_bytes = config->bounds.snapshot_body_uncompressed,
	};
	schedule_epoch_times(&config->epoch, rn->epoch, &params.times);
	struct note_source source = {.round = round,
	                             .namespace_index = i,
	                             .now = now,
	                             .valid_after = params.times.valid_after,
	                             .votes = held};
	/* Method 2's inputs: the namespace's parameters and the previous snapshot held here, the one
	 * the own vote names (the rule checks that the votes agree on it). */
	struct publish_previous previous;
	int previous_rc = publish_previous_load(config, round->o.store, i, &previous);
	if (previous_rc && ns->lifecycle)
		round_log(round, i, rn->epoch, "the previous snapshot cannot be read: %s",
		          dirauth_strerror(previous_rc));
	struct consensus_lifecycle lifecycle = {
	    .freshness_seconds = ns->health_freshness_epochs * config->epoch.length,
	    .revocation_epochs = ns->revocation_epochs,
	    .max_health = config_max_health(config),
	    .max_revocations = ns->max_revocations,
	    .previous_header = previous.have && previous.text.len ? previous.text.data : NULL,
	    .previous_header_len = previous.text.len,
	    .previous_body = previous.parsed ? previous.body.data : NULL,
	    .previous_body_len = previous.parsed ? previous.body.len : 0,
	    .health = supply_health,
	    .revocation = supply_revocation,
	    .context = &source,
	};
	if (ns->lifecycle)
		params.lifecycle = &lifecycle;
	consensus_result_clear(&rn->result);
	rc = consensus_compute(&params, held->inputs, held->count, supply_note, &source, &rn->result,
	                       &failure);
	publish_previous_clear(&previous);
	for (size_t n = 0; n < rn->fetched_count; n++)
		free(rn->fetched[n]);
	free(rn->fetched);
	free(rn->fetched_len);
	rn->fetched = NULL;
	rn->fetched_len = NULL;
	rn->fetched_count = 0;
	for (size_t n = 0; n < rn->statement_count; n++)
		free(rn->statements[n].note);
	free(rn->statements);
	rn->statements = NULL;
	rn->statement_count = 0;
	note_source_free(&source, rc == 0 ? rn : NULL);
	if (rc && failure.outcome == CONSENSUS_NOTE_MISSING) {
		/* A peer that holds the note may answer at the next tick, until the signature deadline. */
		if (!rn->logged_wait) {
			char why[512];
			consensus_failure_describe(&failure, why, sizeof why);
			round_log(round, i, rn->epoch, "no consensus yet: %s; retrying", why);
			rn->logged_wait = true;
		}
		held_votes_free(held);
		free(held);
		return rc;
	}
	if (rc) {
		char why[512];
		consensus_failure_describe(&failure, why, sizeof why);
		round_log(round, i, rn->epoch, "not published: %s", why);
		pthread_mutex_lock(&round->lock);
		rn->failed = true;
		rn->failed_total++;
		pthread_mutex_unlock(&round->lock);
		held_votes_free(held);
		free(held);
		return 0;
	}
	/* The bodies stay for reconciliation. */
	for (size_t v = 0; v < held->count; v++) {
		vote_body_free(rn->bodies[held->member[v]]);
		rn->bodies[held->member[v]] = held->bodies[v];
		held->bodies[v] = NULL;
	}
	held->count = 0;
	free(held);
	rc = store_consensus_put(round->o.store, ns->name, rn->epoch, rn->result.header_text.data,
	                         rn->result.header_text.len);
	if (rc == DIRAUTH_ERR_EXISTS) {
		rc = 0;
	} else if (rc == DIRAUTH_ERR_MISMATCH) {
		round_log(round, i, rn->epoch,
		          "the consensus differs from the one computed before the restart");
	}
	uint64_t computed = round_monotonic_ms();
	if (rc == 0)
		rc = sign_header(round, i, &rn->result.header_text);
	if (rc) {
		consensus_result_clear(&rn->result);
		return rc;
	}
	pthread_mutex_lock(&round->lock);
	rn->computed = true;
	pthread_mutex_unlock(&round->lock);
	uint64_t signed_at = round_monotonic_ms();
	round_log(round, i, rn->epoch,
	          "computed and signed: %llu records from %zu votes by method %llu; votes pulled in %llu ms, "
	          "%zu notes fetched in %llu ms, consensus in %llu ms, signed and pushed in %llu ms",
	          (unsigned long long)rn->result.record_count, rn->result.counting_votes,
	          (unsigned long long)rn->result.method, (unsigned long long)(pulled - started),
	          source.fetched, (unsigned long long)source.fetch_ms,
	          (unsigned long long)(computed - pulled - source.fetch_ms),
	          (unsigned long long)(signed_at - computed));
	if (rn->result.method == CONSENSUS_METHOD_LIFECYCLE)
		round_log(round, i, rn->epoch,
		          "method 2: %zu health entries, %zu revocations listed, %zu records left out",
		          rn->result.health_count, rn->result.revocation_count, rn->result.excluded_count);
	buffer_free(&stored);
	return 0;
}
