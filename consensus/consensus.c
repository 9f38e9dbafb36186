/*
 * consensus.c: the steps every consensus method shares, and the method table.
 *
 * n authorities each sign a vote; at least k of them must agree before anything is published,
 * and k is more than half of n so that two disjoint groups can never both reach it. This file
 * judges what it was given before it counts anything: the parameters, then each vote on its
 * own (namespace, origin, epoch, the body against the vote, the order of its records, its method
 * list and previous), then that no authority votes twice. Only then does it apply the rule's
 * first steps, in the order consensus.md gives: (a) at least k votes, (b) the highest known
 * method that k votes support, (c) the previous snapshot that k votes name, keeping those votes.
 * The method chosen does the rest.
 *
 * Every loop here is over votes (at most CONSENSUS_AUTHORITIES_MAX) or over one vote's records;
 * the one pass over all records of all votes is the method's merge.
 */
#include "consensus/consensus.h"

#include "consensus/method.h"
#include "crypto/crypto.h"
#include "schema/encoding.h"
#include "base/error.h"
#include "schema/lines.h"
#include "schema/names.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The method table: one row per method this code implements, ascending by number. A row never
 * changes meaning: a new rule is a new row. */
static const struct consensus_method consensus_methods[] = {
    {CONSENSUS_METHOD_REGISTRATIONS, "registrations only", consensus_registrations_compute},
    {CONSENSUS_METHOD_LIFECYCLE, "registrations, health and revocations", consensus_lifecycle_compute},
};

#define CONSENSUS_METHOD_COUNT (sizeof(consensus_methods) / sizeof(consensus_methods[0]))

static const uint64_t consensus_method_numbers[] = {CONSENSUS_METHOD_REGISTRATIONS,
                                                    CONSENSUS_METHOD_LIFECYCLE};

_Static_assert(sizeof(consensus_method_numbers) / sizeof(consensus_method_numbers[0]) ==
                   CONSENSUS_METHOD_COUNT,
               "every method of the table is listed in consensus_method_numbers");

static const struct consensus_method *method_find(uint64_t number)
{
	for (size_t i = 0; i < CONSENSUS_METHOD_COUNT; i++)
		if (consensus_methods[i].number == number)
			return &consensus_methods[i];
	return NULL;
}

int consensus_method_is_known(uint64_t method)
{
	return method_find(method) != NULL;
}

const uint64_t *consensus_methods_known(size_t *count)
{
	*count = CONSENSUS_METHOD_COUNT;
	return consensus_method_numbers;
}

static const struct {
	const char *name;
	int rc;
} outcome_table[] = {
    [CONSENSUS_OK] = {"ok", 0},
    [CONSENSUS_TOO_FEW_VOTES] = {"too-few-votes", DIRAUTH_ERR_THRESHOLD},
    [CONSENSUS_NO_METHOD] = {"no-method", DIRAUTH_ERR_THRESHOLD},
    [CONSENSUS_NO_PREVIOUS] = {"no-previous", DIRAUTH_ERR_THRESHOLD},
    [CONSENSUS_NOTE_MISSING] = {"note-missing", DIRAUTH_ERR_NOT_FOUND},
    [CONSENSUS_NOTE_REFUSED] = {"note-refused", DIRAUTH_ERR_REFUSED},
    [CONSENSUS_TOO_MANY_RECORDS] = {"too-many-records", DIRAUTH_ERR_BOUNDS},
    [CONSENSUS_BODY_TOO_LARGE] = {"body-too-large", DIRAUTH_ERR_BOUNDS},
    [CONSENSUS_TOO_MANY_STATEMENTS] = {"too-many-statements", DIRAUTH_ERR_BOUNDS},
    [CONSENSUS_PREVIOUS_MISSING] = {"previous-missing", DIRAUTH_ERR_NOT_FOUND},
    [CONSENSUS_BAD_PARAMETERS] = {"bad-parameters", DIRAUTH_ERR_CONFIG},
    [CONSENSUS_OTHER_NAMESPACE] = {"other-namespace", DIRAUTH_ERR_MISMATCH},
    [CONSENSUS_OTHER_EPOCH] = {"other-epoch", DIRAUTH_ERR_MISMATCH},
    [CONSENSUS_DUPLICATE_AUTHORITY] = {"duplicate-authority", DIRAUTH_ERR_EXISTS},
    [CONSENSUS_BAD_VOTE] = {"bad-vote", 0},
    [CONSENSUS_FAILED] = {"failed", 0},
};

#define OUTCOME_COUNT (sizeof(outcome_table) / sizeof(outcome_table[0]))

const char *consensus_outcome_name(enum consensus_outcome outcome)
{
	return (size_t)outcome < OUTCOME_COUNT ? outcome_table[outcome].name : "unknown";
}

int consensus_run_fail(struct consensus_run *run, enum consensus_outcome outcome, int cause)
{
	struct consensus_failure *failure = run->failure;
	failure->outcome = outcome;
	int rc = (size_t)outcome < OUTCOME_COUNT ? outcome_table[outcome].rc : 0;
	if (rc == 0) /* BAD_VOTE and FAILED return their cause */
		rc = cause < 0 ? cause : DIRAUTH_ERR_INTERNAL;
	failure->cause = cause < 0 ? cause : rc;
	return rc;
}

/* Refuses vote index for outcome, naming it in the failure. */
static int vote_fail(struct consensus_run *run, size_t index, enum consensus_outcome outcome, int cause)
{
	const struct vote *vote = run->votes[index].vote;
	run->failure->vote_index = index;
	if (vote && strnlen(vote->authority, sizeof(vote->authority)) < sizeof(vote->authority))
		memcpy(run->failure->authority, vote->authority, sizeof(vote->authority));
	return consensus_run_fail(run, outcome, cause);
}

static int string_equals(const char *field, size_t cap, const char *expected)
{
	return strnlen(field, cap) < cap && strcmp(field, expected) == 0;
}

static int params_are_valid(const struct consensus_params *p, size_t vote_count)
{
	if (!p->namespace_name || !p->origin)
		return 0;
	struct text_span name = {p->namespace_name, strnlen(p->namespace_name, NAMESPACE_NAME_MAX + 1)};
	if (!text_is_name(name, NAMESPACE_NAME_MAX) ||
	    !names_origin_is_valid(p->origin, strnlen(p->origin, SNAPSHOT_ORIGIN_MAX + 1)))
		return 0;
	if (!(p->times.valid_after < p->times.fresh_until && p->times.fresh_until <= p->times.valid_until))
		return 0;
	if (p->authorities < 1 || p->authorities > CONSENSUS_AUTHORITIES_MAX)
		return 0;
	if (p->threshold <= p->authorities / 2 || p->threshold > p->authorities)
		return 0; /* k must be a majority of n, so that one previous can reach it */
	return vote_count <= p->authorities && p->max_body_bytes >= 1;
}

static int digest_is_zero(const uint8_t digest[32])
{
	uint8_t any = 0;
	for (size_t i = 0; i < 32; i++)
		any |= digest[i];
	return any == 0;
}

/* A vote's own inputs: its method list and its previous. */
static int vote_inputs_are_valid(const struct consensus_vote *v, uint64_t epoch)
{
	if (v->method_count < 1 || v->method_count > CONSENSUS_VOTE_METHODS_MAX)
		return 0;
	for (size_t i = 0; i < v->method_count; i++)
		if (v->methods[i] < 1 || (i > 0 && v->methods[i - 1] >= v->methods[i]))
			return 0;
	if (digest_is_zero(v->previous))
		return v->previous_epoch == 0; /* none */
	return v->previous_epoch < epoch;
}

/* A body's array of record lines, judged before the rule starts; lines read through the caller's
 * reader are judged as they are read (registrations.c). */
static int records_are_valid(const struct consensus_vote *v)
{
	const struct vote_body *body = v->body;
	if (v->lines)
		return v->lines->record && !body->records;
	if (body->record_count > 0 && !body->records)
		return 0;
	for (size_t i = 0; i < body->record_count; i++) {
		if (body->records[i].sequence == 0)
			return 0;
		if (i > 0 && memcmp(body->records[i - 1].service_id, body->records[i].service_id,
		                    SERVICE_ID_SIZE) >= 0)
			return 0;
	}
	return 1;
}

static int vote_judge(struct consensus_run *run, size_t index)
{
	const struct consensus_params *p = run->params;
	const struct consensus_vote *v = &run->votes[index];
	if (!v->vote || !v->body)
		return vote_fail(run, index, CONSENSUS_BAD_VOTE, DIRAUTH_ERR_SYNTAX);
	const struct vote *vote = v->vote;
	const struct vote_body *body = v->body;
	if (!string_equals(vote->namespace_name, sizeof(vote->namespace_name), p->namespace_name) ||
	    !string_equals(vote->origin, sizeof(vote->origin), p->origin) ||
	    !string_equals(body->namespace_name, sizeof(body->namespace_name), p->namespace_name))
		return vote_fail(run, index, CONSENSUS_OTHER_NAMESPACE, DIRAUTH_ERR_MISMATCH);
	if (vote->epoch != p->epoch || body->epoch != p->epoch)
		return vote_fail(run, index, CONSENSUS_OTHER_EPOCH, DIRAUTH_ERR_MISMATCH);
	size_t authority_len = strnlen(vote->authority, sizeof(vote->authority));
	if (authority_len == sizeof(vote->authority) ||
	    !names_key_name_is_ascii(vote->authority, authority_len))
		return vote_fail(run, index, CONSENSUS_BAD_VOTE, DIRAUTH_ERR_SYNTAX);
	if (!string_equals(body->authority, sizeof(body->authority), vote->authority) ||
	    body->record_count != vote->record_count)
		return vote_fail(run, index, CONSENSUS_BAD_VOTE, DIRAUTH_ERR_MISMATCH);
	if (body->record_count > p->max_records)
		return vote_fail(run, index, CONSENSUS_BAD_VOTE, DIRAUTH_ERR_BOUNDS);
	if (!records_are_valid(v) || !vote_inputs_are_valid(v, p->epoch))
		return vote_fail(run, index, CONSENSUS_BAD_VOTE, DIRAUTH_ERR_SYNTAX);
	return 0;
}

static int vote_supports(const struct consensus_vote *v, uint64_t method)
{
	for (size_t i = 0; i < v->method_count; i++)
		if (v->methods[i] == method)
			return 1;
	return 0;
}

/* (b): the highest method of the table that at least k votes list. */
static int choose_method(struct consensus_run *run, const struct consensus_method **out)
{
	size_t k = run->params->threshold, most = 0;
	for (size_t m = CONSENSUS_METHOD_COUNT; m-- > 0;) {
		size_t supporters = 0;
		for (size_t i = 0; i < run->vote_count; i++)
			supporters += (size_t)vote_supports(&run->votes[i], consensus_methods[m].number);
		if (supporters >= k) {
			*out = &consensus_methods[m];
			return 0;
		}
		if (supporters > most)
			most = supporters;
	}
	run->failure->held = most;
	run->failure->required = k;
	return consensus_run_fail(run, CONSENSUS_NO_METHOD, DIRAUTH_ERR_THRESHOLD);
}

static int same_previous(const struct consensus_vote *a, const struct consensus_vote *b)
{
	return a->previous_epoch == b->previous_epoch && memcmp(a->previous, b->previous, 32) == 0;
}

/* (c): the (previous epoch, digest) that at least k votes name, and the votes that name it. As k
 * is a majority of n and no more than n votes are given, at most one pair can reach k. */
static int choose_previous(struct consensus_run *run)
{
	size_t k = run->params->threshold, most = 0;
	for (size_t i = 0; i < run->vote_count; i++) {
		size_t agreeing = 0;
		for (size_t j = 0; j < run->vote_count; j++)
			agreeing += (size_t)same_previous(&run->votes[i], &run->votes[j]);
		if (agreeing > most)
			most = agreeing;
		if (agreeing < k)
			continue;
		const struct consensus_vote *chosen = &run->votes[i];
		run->counting_count = 0;
		for (size_t j = 0; j < run->vote_count; j++)
			if (same_previous(chosen, &run->votes[j]))
				run->counting[run->counting_count++] = j;
		run->result->previous_epoch = chosen->previous_epoch;
		memcpy(run->result->previous, chosen->previous, 32);
		run->result->counting_votes = run->counting_count;
		return 0;
	}
	run->failure->held = most;
	run->failure->required = k;
	return consensus_run_fail(run, CONSENSUS_NO_PREVIOUS, DIRAUTH_ERR_THRESHOLD);
}

int consensus_compute_streamed(const struct consensus_params *params, const struct consensus_vote *votes,
                               size_t vote_count, consensus_note_fn note, void *note_context,
                               consensus_body_fn body, void *body_context, struct consensus_result *out,
                               struct consensus_failure *failure)
{
	struct consensus_failure local_failure;
	struct consensus_run run;
	const struct consensus_method *method = NULL;
	int rc;
	memset(out, 0, sizeof(*out));
	if (!failure)
		failure = &local_failure;
	memset(failure, 0, sizeof(*failure));
	memset(&run, 0, sizeof(run));
	run.params = params;
	run.votes = votes;
	run.vote_count = vote_count;
	run.note = note;
	run.note_context = note_context;
	run.body = body;
	run.body_context = body_context;
	run.result = out;
	run.failure = failure;

	if (!params || !note || !body || (vote_count > 0 && !votes) || !params_are_valid(params, vote_count))
		return consensus_run_fail(&run, CONSENSUS_BAD_PARAMETERS, DIRAUTH_ERR_CONFIG);
	for (size_t i = 0; i < vote_count; i++)
		if ((rc = vote_judge(&run, i)) != 0)
			return rc;
	for (size_t i = 1; i < vote_count; i++)
		for (size_t j = 0; j < i; j++)
			if (strcmp(votes[i].vote->authority, votes[j].vote->authority) == 0)
				return vote_fail(&run, i, CONSENSUS_DUPLICATE_AUTHORITY, DIRAUTH_ERR_EXISTS);

	/* (a) */
	if (vote_count < params->threshold) {
		failure->held = vote_count;
		failure->required = params->threshold;
		return consensus_run_fail(&run, CONSENSUS_TOO_FEW_VOTES, DIRAUTH_ERR_THRESHOLD);
	}
	/* (b), (c) */
	if ((rc = choose_method(&run, &method)) != 0 || (rc = choose_previous(&run)) != 0)
		return rc;
	out->method = method->number;
	/* (d), (e): the method's own */
	if ((rc = method->compute(&run)) != 0) {
		consensus_result_clear(out);
		return rc;
	}
	return 0;
}

/* consensus_compute's writer: the body into the result's buffer. */
static int append_to_result(void *context, const uint8_t *bytes, size_t len)
{
	return buffer_append(context, bytes, len);
}

int consensus_compute(const struct consensus_params *params, const struct consensus_vote *votes,
                      size_t vote_count, consensus_note_fn note, void *note_context,
                      struct consensus_result *out, struct consensus_failure *failure)
{
	struct buffer body;
	buffer_init(&body);
	int rc = consensus_compute_streamed(params, votes, vote_count, note, note_context, append_to_result,
	                                    &body, out, failure);
	if (rc == 0)
		out->body = body;
	else
		buffer_free(&body);
	return rc;
}

int consensus_revocation_is_listed(uint64_t since, uint64_t epoch, uint64_t revocation_epochs)
{
	return since <= epoch && epoch - since < revocation_epochs;
}

void consensus_result_clear(struct consensus_result *result)
{
	if (!result)
		return;
	free(result->health);
	free(result->revocations);
	free(result->excluded);
	buffer_free(&result->header_text);
	buffer_free(&result->body);
	memset(result, 0, sizeof(*result));
}

/* Both loaders: the digest, the parse (limits NULL: method 1's parser), the lines. */
static int vote_body_load(const struct vote *vote, const uint8_t *body, size_t body_len, size_t max_records,
                          const struct vote_body_limits *limits, struct vote_body **out)
{
	uint8_t digest[CRYPTO_SHA256_SIZE];
	*out = NULL;
	int rc = crypto_sha256(body, body_len, digest);
	if (rc)
		return rc;
	if (memcmp(digest, vote->body_sha256, sizeof(digest)) != 0)
		return DIRAUTH_ERR_MISMATCH;
	struct vote_body *parsed = NULL;
	rc = limits ? vote_body_parse_sections(body, body_len, limits, &parsed)
	            : vote_body_parse(body, body_len, max_records, &parsed);
	if (rc)
		return rc;
	if (strcmp(parsed->namespace_name, vote->namespace_name) != 0 || parsed->epoch != vote->epoch ||
	    strcmp(parsed->authority, vote->authority) != 0 || parsed->record_count != vote->record_count) {
		vote_body_free(parsed);
		return DIRAUTH_ERR_MISMATCH;
	}
	*out = parsed;
	return 0;
}

int consensus_vote_body_load(const struct vote *vote, const uint8_t *body, size_t body_len,
                             size_t max_records, struct vote_body **out)
{
	return vote_body_load(vote, body, body_len, max_records, NULL, out);
}

int consensus_vote_body_load_sections(const struct vote *vote, const uint8_t *body, size_t body_len,
                                      const struct vote_body_limits *limits, struct vote_body **out)
{
	return vote_body_load(vote, body, body_len, limits->max_records, limits, out);
}

static void describe(char *out, size_t cap, const char *format, ...) __attribute__((format(printf, 3, 4)));

static void describe(char *out, size_t cap, const char *format, ...)
{
	va_list args;
	va_start(args, format);
	vsnprintf(out, cap, format, args);
	va_end(args);
}

static const char *plural(size_t count)
{
	return count == 1 ? "" : "s";
}

void consensus_failure_describe(const struct consensus_failure *f, char *out, size_t cap)
{
	if (!out || cap == 0)
		return;
	char service[2 * SERVICE_ID_SIZE + 1], digest[65];
	hex_encode(f->service_id, SERVICE_ID_SIZE, service);
	hex_encode(f->digest, 32, digest);
	const char *authority = f->authority[0] ? f->authority : "(unnamed)";
	switch (f->outcome) {
	case CONSENSUS_OK:
		describe(out, cap, "consensus reached");
		break;
	case CONSENSUS_TOO_FEW_VOTES:
		describe(out, cap, "no consensus: %zu valid vote%s, the threshold is %zu", f->held,
		         plural(f->held), f->required);
		break;
	case CONSENSUS_NO_METHOD:
		describe(out, cap,
		         "no consensus: no consensus method known here is supported by %zu votes (the most "
		         "is %zu)",
		         f->required, f->held);
		break;
	case CONSENSUS_NO_PREVIOUS:
		describe(
		    out, cap,
		    "no consensus: no previous snapshot is named by %zu votes (at most %zu name the same)",
		    f->required, f->held);
		break;
	case CONSENSUS_NOTE_MISSING:
		describe(out, cap,
		         "no consensus: service %s was chosen at sequence %llu, registration %s, and no note "
		         "with that digest can be supplied (the vote of %s holds it)",
		         service, (unsigned long long)f->sequence, digest, authority);
		break;
	case CONSENSUS_NOTE_REFUSED:
		describe(
		    out, cap,
		    "no consensus: service %s was chosen at sequence %llu, registration %s, and its note is "
		    "refused: %s (the vote of %s holds it)",
		    service, (unsigned long long)f->sequence, digest,
		    f->cause == DIRAUTH_ERR_MISMATCH ? "its SHA-256 is not that digest"
		                                     : dirauth_strerror(f->cause),
		    authority);
		break;
	case CONSENSUS_TOO_MANY_RECORDS:
		describe(out, cap, "no consensus: more than %zu records would be chosen", f->required);
		break;
	case CONSENSUS_BODY_TOO_LARGE:
		describe(out, cap, "no consensus: the snapshot body would exceed its bound");
		break;
	case CONSENSUS_TOO_MANY_STATEMENTS:
		describe(out, cap,
		         "no consensus: more than %zu health entries or revocations would be listed",
		         f->required);
		break;
	case CONSENSUS_PREVIOUS_MISSING:
		describe(out, cap,
		         "no consensus: the previous snapshot the votes name is not held here as its header "
		         "commits to it: %s",
		         dirauth_strerror(f->cause));
		break;
	case CONSENSUS_BAD_PARAMETERS:
		describe(
		    out, cap,
		    "consensus refused: invalid parameters (names, times, k not a majority of n, or more "
		    "votes than authorities)");
		break;
	case CONSENSUS_OTHER_NAMESPACE:
		describe(out, cap, "consensus refused: vote %zu (%s) is for another namespace or origin",
		         f->vote_index, authority);
		break;
	case CONSENSUS_OTHER_EPOCH:
		describe(out, cap, "consensus refused: vote %zu (%s) is for another epoch", f->vote_index,
		         authority);
		break;
	case CONSENSUS_DUPLICATE_AUTHORITY:
		describe(out, cap, "consensus refused: vote %zu is a second vote of %s", f->vote_index,
		         authority);
		break;
	case CONSENSUS_BAD_VOTE:
		describe(out, cap, "consensus refused: vote %zu (%s) is not well formed: %s", f->vote_index,
		         authority, dirauth_strerror(f->cause));
		break;
	case CONSENSUS_FAILED:
	default:
		describe(out, cap, "consensus could not be computed: %s", dirauth_strerror(f->cause));
		break;
	}
}

void consensus_vote_init(struct consensus_vote *out, const struct vote *vote, const struct vote_body *body)
{
	memset(out, 0, sizeof *out);
	out->vote = vote;
	out->body = body;
	out->previous_epoch = vote->previous_epoch;
	memcpy(out->previous, vote->previous, sizeof out->previous);
	out->method_count =
	    vote->method_count < CONSENSUS_VOTE_METHODS_MAX ? vote->method_count : CONSENSUS_VOTE_METHODS_MAX;
	memcpy(out->methods, vote->methods, out->method_count * sizeof out->methods[0]);
}
