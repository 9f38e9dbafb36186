/*
 * statements.c: consensus method 2 (the lifecycle method): registrations as method 1, then the revocations
 * the snapshot lists, the chosen versions they exclude, and the published health of every endpoint.
 *
 * The three parts need different counting rules, argued in consensus/consensus.md ("Method 2"):
 *
 * - A revocation is a signed statement that every authority checks itself, so one vote listing it
 *   is enough: a minority cannot forge one (the signature), and cannot hold one back that a single
 *   honest vote lists. One that no one can supply, or that fails its checks, is simply not listed:
 *   otherwise a single vote listing an invented digest would stop every epoch. Revocations already
 *   listed by the previous snapshot (which k votes named) are carried forward without asking
 *   anyone until revocation_epochs have passed since the first snapshot that listed them, so a
 *   revocation outlives every snapshot that could still show what it revokes.
 * - A chosen registration version is left out when a listed revocation revokes its service or
 *   names one of its endpoints, whatever its sequence: a revoked endpoint does not come back by a
 *   newer registration while its revocation is listed.
 * - Health, per endpoint of each published record: the counting votes' statements ranked newest
 *   first; walking down, holders of statements that verify are counted, and the statement at
 *   which the count reaches k is published. So at least k votes hold that statement or a newer
 *   verified one (k-1 liars cannot push an old one: an honest vote holds one at least as new) and
 *   when k honest votes hold a statement, what is published is at least as new (k-1 liars cannot
 *   hide it: they rank at most k-1 holders above it). An invented digest verifies nowhere and
 *   counts for nothing. A statement older than the freshness bound is never published: the
 *   endpoint is then unknown, which has no entry and which a client treats as unavailable.
 *
 * Everything published traces to a note the caller supplied through its callback and that this
 * file checked against its digest, its fields and its signature; nothing is invented. The merge
 * over the votes' health lists walks them once, in the order of the published endpoints, so the
 * cost is that of method 1 plus one pass over the health lines and at most one callback per
 * distinct statement of a published endpoint. The body's head counts the published records, known
 * only once every chosen version is judged: so the body is written (body.c) in a second walk of
 * the chosen versions (registrations.c's merge, which keeps none of them), which asks again for
 * each published record's note and each published statement, holding none of them between the
 * walks.
 */
#include "consensus/method.h"

#include "crypto/crypto.h"
#include "base/error.h"
#include "schema/health.h"
#include "schema/revocation.h"
#include "schema/snapshot.h"

#include <stdlib.h>
#include <string.h>

struct lifecycle_state {
	struct consensus_run *run;
	const struct consensus_lifecycle *life;
	struct snapshot_body *previous;     /* the previous snapshot's body, when method 2 */
	struct snapshot_revocation *listed; /* the listed revocations, in target order */
	size_t listed_count;
	uint8_t (*revoked_endpoints)[ENDPOINT_ID_SIZE]; /* sorted */
	size_t revoked_endpoint_count;
	size_t kept_count;              /* the published records */
	struct snapshot_health *health; /* the published health entries, parallel to result->health
	                                   (their notes are asked for again when written) */
	size_t health_cap;
	size_t excluded_cap;
	size_t health_cursor[CONSENSUS_AUTHORITIES_MAX]; /* per counting vote, into its health lines */
};

/* A callback's refusal that judged the note (leaves it out) rather than failed to judge it. */
static int is_judged_refusal(int rc)
{
	switch (rc) {
	case DIRAUTH_ERR_NOT_FOUND:
	case DIRAUTH_ERR_REFUSED:
	case DIRAUTH_ERR_SIGNATURE:
	case DIRAUTH_ERR_UNKNOWN_KEY:
	case DIRAUTH_ERR_MISMATCH:
	case DIRAUTH_ERR_SYNTAX:
	case DIRAUTH_ERR_BOUNDS:
	case DIRAUTH_ERR_STALE:
		return 1;
	default:
		return 0;
	}
}

/* Stops the computation because a check could not run, naming what it was for. */
static int callback_failed(struct consensus_run *run, const uint8_t service_id[SERVICE_ID_SIZE],
                           const uint8_t digest[32], int rc)
{
	memcpy(run->failure->service_id, service_id, SERVICE_ID_SIZE);
	memcpy(run->failure->digest, digest, 32);
	return consensus_run_fail(run, CONSENSUS_FAILED, rc < 0 ? rc : DIRAUTH_ERR_INTERNAL);
}

static int bad_vote(struct consensus_run *run, size_t index, int cause)
{
	const struct vote *vote = run->votes[index].vote;
	run->failure->vote_index = index;
	memcpy(run->failure->authority, vote->authority, sizeof(run->failure->authority));
	return consensus_run_fail(run, CONSENSUS_BAD_VOTE, cause);
}

/* Each vote's method-2 sections within their bounds, sorted strictly, sequences >= 1. */
static int judge_sections(struct consensus_run *run)
{
	const struct consensus_lifecycle *life = run->params->lifecycle;
	for (size_t v = 0; v < run->vote_count; v++) {
		const struct vote_body *body = run->votes[v].body;
		if (body->health_count > life->max_health || body->revocation_count > life->max_revocations)
			return bad_vote(run, v, DIRAUTH_ERR_BOUNDS);
		if ((body->health_count > 0 && !body->health) ||
		    (body->revocation_count > 0 && !body->revocations))
			return bad_vote(run, v, DIRAUTH_ERR_SYNTAX);
		for (size_t i = 0; i < body->health_count; i++)
			if (body->health[i].sequence == 0 ||
			    (i > 0 && vote_body_health_compare(&body->health[i - 1], &body->health[i]) >= 0))
				return bad_vote(run, v, DIRAUTH_ERR_SYNTAX);
		for (size_t i = 0; i < body->revocation_count; i++) {
			const struct vote_body_revocation *r = &body->revocations[i];
			if ((r->has_endpoint != 0 && r->has_endpoint != 1) ||
			    (i > 0 && vote_body_revocation_compare(&body->revocations[i - 1], r) >= 0))
				return bad_vote(run, v, DIRAUTH_ERR_SYNTAX);
		}
	}
	return 0;
}

static int listed_append(struct lifecycle_state *st, const struct snapshot_revocation *entry, int carried,
                         size_t *cap)
{
	struct consensus_run *run = st->run;
	struct consensus_result *result = run->result;
	if (st->listed_count >= st->life->max_revocations) {
		run->failure->held = st->listed_count;
		run->failure->required = st->life->max_revocations;
		return consensus_run_fail(run, CONSENSUS_TOO_MANY_STATEMENTS, DIRAUTH_ERR_BOUNDS);
	}
	if (st->listed_count == *cap) {
		size_t grown = *cap ? *cap * 2 : 16;
		struct snapshot_revocation *listed = realloc(st->listed, grown * sizeof(*listed));
		if (listed)
			st->listed = listed;
		struct consensus_revocation *info = realloc(result->revocations, grown * sizeof(*info));
		if (info)
			result->revocations = info;
		if (!listed || !info)
			return consensus_run_fail(run, CONSENSUS_FAILED, DIRAUTH_ERR_NOMEM);
		*cap = grown;
	}
	struct consensus_revocation *info = &result->revocations[st->listed_count];
	memset(info, 0, sizeof(*info));
	memcpy(info->service_id, entry->service_id, SERVICE_ID_SIZE);
	info->has_endpoint = entry->has_endpoint;
	memcpy(info->endpoint_id, entry->endpoint_id, ENDPOINT_ID_SIZE);
	info->since = entry->since;
	info->carried = carried;
	int rc = crypto_sha256(entry->note, entry->note_len, info->digest);
	if (rc)
		return consensus_run_fail(run, CONSENSUS_FAILED, rc);
	st->listed[st->listed_count++] = *entry;
	result->revocation_count = st->listed_count;
	return 0;
}

static int previous_fail(struct consensus_run *run, int cause)
{
	return consensus_run_fail(run, CONSENSUS_PREVIOUS_MISSING, cause);
}

/* (r), first half: the previous snapshot the counting votes name, as its header commits to it,
 * and the revocations it lists that are still within revocation_epochs. */
static int carry_revocations(struct lifecycle_state *st, size_t *cap)
{
	struct consensus_run *run = st->run;
	const struct consensus_params *p = run->params;
	const struct consensus_lifecycle *life = st->life;
	static const uint8_t none[32];
	if (memcmp(run->result->previous, none, 32) == 0)
		return 0; /* the namespace's first snapshot */
	if (!life->previous_header)
		return previous_fail(run, DIRAUTH_ERR_NOT_FOUND);
	uint8_t digest[CRYPTO_SHA256_SIZE];
	struct snapshot_header header;
	int rc = snapshot_header_digest(life->previous_header, life->previous_header_len, digest);
	if (rc)
		return consensus_run_fail(run, CONSENSUS_FAILED, rc);
	if (memcmp(digest, run->result->previous, 32) != 0)
		return previous_fail(run, DIRAUTH_ERR_NOT_FOUND); /* the caller holds another one */
	if ((rc = snapshot_header_parse(life->previous_header, life->previous_header_len, &header)) != 0)
		return previous_fail(run, rc);
	if (header.epoch != run->result->previous_epoch ||
	    strcmp(header.namespace_name, p->namespace_name) != 0 || strcmp(header.origin, p->origin) != 0)
		return previous_fail(run, DIRAUTH_ERR_MISMATCH);
	if (header.consensus_method == CONSENSUS_METHOD_REGISTRATIONS)
		return 0; /* a method-1 snapshot lists no revocation */
	if (header.consensus_method != CONSENSUS_METHOD_LIFECYCLE)
		return previous_fail(run, DIRAUTH_ERR_SYNTAX);
	if (!life->previous_body)
		return previous_fail(run, DIRAUTH_ERR_NOT_FOUND);
	if (life->previous_body_len != header.body_size)
		return previous_fail(run, DIRAUTH_ERR_MISMATCH);
	if ((rc = crypto_sha256(life->previous_body, life->previous_body_len, digest)) != 0)
		return consensus_run_fail(run, CONSENSUS_FAILED, rc);
	if (memcmp(digest, header.body_sha256, 32) != 0)
		return previous_fail(run, DIRAUTH_ERR_MISMATCH);
	struct snapshot_body_limits limits = {p->max_records, life->max_health, life->max_revocations};
	if ((rc = snapshot_body_parse_sections(life->previous_body, life->previous_body_len, &limits,
	                                       &st->previous)) != 0)
		return previous_fail(run, rc);
	if (strcmp(st->previous->namespace_name, header.namespace_name) != 0 ||
	    st->previous->epoch != header.epoch)
		return previous_fail(run, DIRAUTH_ERR_MISMATCH);
	for (size_t i = 0; i < st->previous->revocation_count; i++) {
		const struct snapshot_revocation *entry = &st->previous->revocations[i];
		if (entry->since > header.epoch)
			return previous_fail(run, DIRAUTH_ERR_MISMATCH);
		if (!consensus_revocation_is_listed(entry->since, p->epoch, life->revocation_epochs))
			continue; /* no snapshot that held what it revokes is still valid */
		if ((rc = snapshot_revocation_note_check(entry, p->namespace_name)) != 0)
			return previous_fail(run, rc);
		if ((rc = listed_append(st, entry, 1, cap)) != 0)
			return rc;
	}
	return 0;
}

static int revocation_line_order(const void *a, const void *b)
{
	return vote_body_revocation_compare(*(const struct vote_body_revocation *const *)a,
	                                    *(const struct vote_body_revocation *const *)b);
}

/* 1 when a carried revocation (the first carried_count entries of listed, sorted) or the last new
 * one already lists the target of line. */
static int target_listed(const struct lifecycle_state *st, size_t carried_count,
                         const struct snapshot_revocation *target)
{
	size_t low = 0, high = carried_count;
	while (low < high) {
		size_t middle = low + (high - low) / 2;
		int order = snapshot_revocation_order(&st->listed[middle], target);
		if (order == 0)
			return 1;
		if (order < 0)
			low = middle + 1;
		else
			high = middle;
	}
	return st->listed_count > carried_count &&
	       snapshot_revocation_order(&st->listed[st->listed_count - 1], target) == 0;
}

/* (r), second half: every revocation any vote lists, in line order, for a target not yet listed,
 * whose note the caller supplies and that checks out. */
static int new_revocations(struct lifecycle_state *st, size_t *cap)
{
	struct consensus_run *run = st->run;
	const struct consensus_params *p = run->params;
	size_t total = 0, carried_count = st->listed_count;
	for (size_t v = 0; v < run->vote_count; v++)
		total += run->votes[v].body->revocation_count;
	if (total == 0)
		return 0;
	const struct vote_body_revocation **lines = malloc(total * sizeof(*lines));
	if (!lines)
		return consensus_run_fail(run, CONSENSUS_FAILED, DIRAUTH_ERR_NOMEM);
	size_t count = 0;
	for (size_t v = 0; v < run->vote_count; v++)
		for (size_t i = 0; i < run->votes[v].body->revocation_count; i++)
			lines[count++] = &run->votes[v].body->revocations[i];
	qsort(lines, count, sizeof(*lines), revocation_line_order);
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < count; i++) {
		const struct vote_body_revocation *line = lines[i];
		if (i > 0 && vote_body_revocation_compare(lines[i - 1], line) == 0)
			continue; /* the same revocation in another vote */
		struct snapshot_revocation entry;
		memset(&entry, 0, sizeof(entry));
		memcpy(entry.service_id, line->service_id, SERVICE_ID_SIZE);
		entry.has_endpoint = line->has_endpoint;
		memcpy(entry.endpoint_id, line->endpoint_id, ENDPOINT_ID_SIZE);
		entry.since = p->epoch;
		if (target_listed(st, carried_count, &entry))
			continue; /* listed already: one revocation per target */
		rc = st->life->revocation(st->life->context, line->service_id,
		                          line->has_endpoint ? line->endpoint_id : NULL,
		                          line->revocation_sha256, &entry.note, &entry.note_len);
		if (rc) {
			if (is_judged_refusal(rc))
				rc = 0;
			else
				rc = callback_failed(run, line->service_id, line->revocation_sha256, rc);
			continue;
		}
		uint8_t digest[CRYPTO_SHA256_SIZE];
		if (!entry.note || entry.note_len == 0 || entry.note_len > REVOCATION_MAX_BYTES)
			continue;
		if ((rc = crypto_sha256(entry.note, entry.note_len, digest)) != 0) {
			rc = consensus_run_fail(run, CONSENSUS_FAILED, rc);
			continue;
		}
		if (memcmp(digest, line->revocation_sha256, 32) != 0)
			continue;
		int check = snapshot_revocation_note_check(&entry, p->namespace_name);
		if (check == DIRAUTH_ERR_CRYPTO || check == DIRAUTH_ERR_NOMEM) {
			rc = callback_failed(run, line->service_id, line->revocation_sha256, check);
			continue;
		}
		if (check == 0)
			rc = listed_append(st, &entry, 0, cap);
	}
	free(lines);
	return rc;
}

/* The listed revocations merged into one target order, and the sorted revoked endpoint ids. */
static int listed_finish(struct lifecycle_state *st, size_t carried_count)
{
	struct consensus_run *run = st->run;
	struct consensus_result *result = run->result;
	size_t count = st->listed_count, endpoints = 0;
	if (count == 0)
		return 0;
	struct snapshot_revocation *merged = malloc(count * sizeof(*merged));
	struct consensus_revocation *info = malloc(count * sizeof(*info));
	if (!merged || !info) {
		free(merged);
		free(info);
		return consensus_run_fail(run, CONSENSUS_FAILED, DIRAUTH_ERR_NOMEM);
	}
	size_t a = 0, b = carried_count, out = 0;
	while (a < carried_count || b < count) {
		size_t take = (b == count || (a < carried_count &&
		                              snapshot_revocation_order(&st->listed[a], &st->listed[b]) < 0))
		                  ? a++
		                  : b++;
		merged[out] = st->listed[take];
		info[out++] = result->revocations[take];
		endpoints += (size_t)(st->listed[take].has_endpoint != 0);
	}
	free(st->listed);
	free(result->revocations);
	st->listed = merged;
	result->revocations = info;
	if (endpoints > 0) {
		st->revoked_endpoints = malloc(endpoints * sizeof(*st->revoked_endpoints));
		if (!st->revoked_endpoints)
			return consensus_run_fail(run, CONSENSUS_FAILED, DIRAUTH_ERR_NOMEM);
		for (size_t i = 0; i < count; i++)
			if (st->listed[i].has_endpoint)
				memcpy(st->revoked_endpoints[st->revoked_endpoint_count++],
				       st->listed[i].endpoint_id, ENDPOINT_ID_SIZE);
		revocation_endpoints_sort(st->revoked_endpoints, st->revoked_endpoint_count);
	}
	return 0;
}

/* 1 when a listed revocation revokes the whole service. */
static int service_revoked(const struct lifecycle_state *st, const uint8_t service_id[SERVICE_ID_SIZE])
{
	struct snapshot_revocation target;
	memset(&target, 0, sizeof(target));
	memcpy(target.service_id, service_id, SERVICE_ID_SIZE);
	size_t low = 0, high = st->listed_count;
	while (low < high) {
		size_t middle = low + (high - low) / 2;
		int order = snapshot_revocation_order(&st->listed[middle], &target);
		if (order == 0)
			return 1;
		if (order < 0)
			low = middle + 1;
		else
			high = middle;
	}
	return 0;
}

/* 1 when a listed revocation names an endpoint the registration lists. */
static int endpoint_revoked(const struct lifecycle_state *st, const struct registration *r)
{
	return revocation_endpoints_name_any((const uint8_t(*)[ENDPOINT_ID_SIZE])st->revoked_endpoints,
	                                     st->revoked_endpoint_count, r);
}

static int exclude(struct lifecycle_state *st, const struct vote_body_record *version)
{
	struct consensus_result *result = st->run->result;
	if (result->excluded_count == st->excluded_cap) {
		size_t grown = st->excluded_cap ? st->excluded_cap * 2 : 16;
		struct vote_body_record *more = realloc(result->excluded, grown * sizeof(*more));
		if (!more)
			return consensus_run_fail(st->run, CONSENSUS_FAILED, DIRAUTH_ERR_NOMEM);
		result->excluded = more;
		st->excluded_cap = grown;
	}
	result->excluded[result->excluded_count++] = *version;
	return 0;
}

/* A health line ranks above another: later issued-at, then higher sequence, then higher digest. */
static int statement_ranks_before(const struct vote_body_health *a, const struct vote_body_health *b)
{
	if (a->issued_at != b->issued_at)
		return a->issued_at > b->issued_at;
	if (a->sequence != b->sequence)
		return a->sequence > b->sequence;
	return memcmp(a->statement_sha256, b->statement_sha256, 32) > 0;
}

static int same_statement(const struct vote_body_health *a, const struct vote_body_health *b)
{
	return a->issued_at == b->issued_at && a->sequence == b->sequence &&
	       memcmp(a->statement_sha256, b->statement_sha256, 32) == 0;
}

/* One candidate statement: the caller's note, then its digest, fields and signature against the
 * published registration r. Returns 1 when it verifies (with *statement, *note, *note_len), 0
 * when it does not, or a refusal when a check could not run. */
static int statement_verify(struct lifecycle_state *st, const struct registration *r,
                            const struct vote_body_health *line, struct health_statement *statement,
                            const uint8_t **note, size_t *note_len)
{
	struct consensus_run *run = st->run;
	uint8_t digest[CRYPTO_SHA256_SIZE];
	*note = NULL;
	*note_len = 0;
	int rc = st->life->health(st->life->context, line->service_id, line->endpoint_id, line->issued_at,
	                          line->sequence, line->statement_sha256, note, note_len);
	if (rc)
		return is_judged_refusal(rc)
		           ? 0
		           : callback_failed(run, line->service_id, line->statement_sha256, rc);
	if (!*note || *note_len == 0 || *note_len > HEALTH_MAX_BYTES)
		return 0;
	if ((rc = crypto_sha256(*note, *note_len, digest)) != 0)
		return consensus_run_fail(run, CONSENSUS_FAILED, rc);
	if (memcmp(digest, line->statement_sha256, 32) != 0)
		return 0;
	rc = health_parse_listed(*note, *note_len, r, line->endpoint_id, line->issued_at, line->sequence,
	                         statement); /* namespace, service, endpoint, key, signature, the line */
	if (rc == DIRAUTH_ERR_NOMEM)
		return consensus_run_fail(run, CONSENSUS_FAILED, rc);
	if (rc == DIRAUTH_ERR_CRYPTO)
		return callback_failed(run, line->service_id, line->statement_sha256, rc);
	return rc == 0;
}

static int health_append(struct lifecycle_state *st, const struct vote_body_health *line, size_t holders,
                         const struct health_statement *statement, size_t note_len)
{
	struct consensus_run *run = st->run;
	struct consensus_result *result = run->result;
	if (result->health_count >= st->life->max_health) {
		run->failure->held = result->health_count;
		run->failure->required = st->life->max_health;
		return consensus_run_fail(run, CONSENSUS_TOO_MANY_STATEMENTS, DIRAUTH_ERR_BOUNDS);
	}
	if (result->health_count == st->health_cap) {
		size_t grown = st->health_cap ? st->health_cap * 2 : 64;
		struct snapshot_health *entries = realloc(st->health, grown * sizeof(*entries));
		if (entries)
			st->health = entries;
		struct consensus_health *info = realloc(result->health, grown * sizeof(*info));
		if (info)
			result->health = info;
		if (!entries || !info)
			return consensus_run_fail(run, CONSENSUS_FAILED, DIRAUTH_ERR_NOMEM);
		st->health_cap = grown;
	}
	struct snapshot_health *entry = &st->health[result->health_count];
	struct consensus_health *info = &result->health[result->health_count++];
	memset(entry, 0, sizeof(*entry));
	memset(info, 0, sizeof(*info));
	memcpy(entry->service_id, line->service_id, SERVICE_ID_SIZE);
	memcpy(entry->endpoint_id, line->endpoint_id, ENDPOINT_ID_SIZE);
	entry->health_class = statement->health_class;
	entry->signer = statement->signer;
	entry->note_len = note_len; /* the note itself is asked for again when written */
	memcpy(info->service_id, line->service_id, SERVICE_ID_SIZE);
	memcpy(info->endpoint_id, line->endpoint_id, ENDPOINT_ID_SIZE);
	info->health_class = statement->health_class;
	info->signer = statement->signer;
	info->issued_at = line->issued_at;
	info->sequence = line->sequence;
	memcpy(info->digest, line->statement_sha256, 32);
	info->holders = holders;
	return 0;
}

/* (h) for one endpoint of a published record. */
static int endpoint_health(struct lifecycle_state *st, const struct registration *r,
                           const uint8_t endpoint_id[ENDPOINT_ID_SIZE])
{
	struct consensus_run *run = st->run;
	const struct vote_body_health *candidates[CONSENSUS_AUTHORITIES_MAX];
	size_t count = 0, k = run->params->threshold;
	struct vote_body_health key;
	memset(&key, 0, sizeof(key));
	memcpy(key.service_id, r->service_id, SERVICE_ID_SIZE);
	memcpy(key.endpoint_id, endpoint_id, ENDPOINT_ID_SIZE);
	for (size_t c = 0; c < run->counting_count; c++) {
		const struct vote_body *body = run->votes[run->counting[c]].body;
		size_t *cursor = &st->health_cursor[c];
		while (*cursor < body->health_count &&
		       vote_body_health_compare(&body->health[*cursor], &key) < 0)
			(*cursor)++;
		if (*cursor < body->health_count &&
		    vote_body_health_compare(&body->health[*cursor], &key) == 0)
			candidates[count++] = &body->health[(*cursor)++];
	}
	if (count < k)
		return 0;                    /* fewer than k votes list a statement: unknown */
	for (size_t i = 1; i < count; i++) { /* insertion sort, newest first: at most n elements */
		const struct vote_body_health *line = candidates[i];
		size_t j = i;
		while (j > 0 && statement_ranks_before(line, candidates[j - 1])) {
			candidates[j] = candidates[j - 1];
			j--;
		}
		candidates[j] = line;
	}
	size_t verified = 0;
	for (size_t start = 0; start < count;) {
		size_t end = start + 1;
		while (end < count && same_statement(candidates[start], candidates[end]))
			end++;
		if (health_is_stale(candidates[start]->issued_at, run->params->lifecycle->freshness_seconds,
		                    run->params->times.valid_after))
			return 0; /* the k-th verified statement would be older still: unknown */
		struct health_statement statement;
		const uint8_t *note;
		size_t note_len;
		int rc = statement_verify(st, r, candidates[start], &statement, &note, &note_len);
		if (rc < 0)
			return rc;
		if (rc == 1 && (verified += end - start) >= k)
			return health_append(st, candidates[start], end - start, &statement, note_len);
		start = end;
	}
	return 0; /* fewer than k holders of verified statements: unknown */
}

/* One chosen version judged: left out (excluded) when a listed revocation revokes its service or
 * names an endpoint its note lists, else counted as published, with (h) for its endpoints. */
static int judge_version(struct lifecycle_state *st, const struct vote_body_record *version)
{
	struct consensus_run *run = st->run;
	const struct consensus_params *p = run->params;
	if (service_revoked(st, version->service_id))
		return exclude(st, version);
	const uint8_t *note = NULL;
	size_t note_len = 0;
	int rc = consensus_note_take(run, version, &note, &note_len);
	if (rc)
		return rc;
	struct registration r;
	struct note *parsed = NULL;
	if ((rc = registration_parse_note(note, note_len, &r, &parsed)) != 0)
		return consensus_note_fail(run, version, CONSENSUS_NOTE_REFUSED, rc);
	note_free(parsed);
	if (strcmp(r.namespace_name, p->namespace_name) != 0 ||
	    memcmp(r.service_id, version->service_id, SERVICE_ID_SIZE) != 0 ||
	    r.sequence != version->sequence)
		rc = consensus_note_fail(run, version, CONSENSUS_NOTE_REFUSED, DIRAUTH_ERR_MISMATCH);
	else if (endpoint_revoked(st, &r))
		rc = exclude(st, version);
	else {
		st->kept_count++;
		for (size_t e = 0; rc == 0 && e < r.endpoint_count; e++)
			rc = endpoint_health(st, &r, r.endpoints[e].endpoint_id);
	}
	registration_clear(&r);
	return rc;
}

/* (x), (e) and (h): the first walk of the chosen versions, judging each. */
static int publish_records(struct lifecycle_state *st)
{
	struct consensus_choice choice;
	struct vote_body_record version;
	int rc;
	consensus_choice_begin(st->run, &choice);
	while ((rc = consensus_choice_next(st->run, &choice, &version)) == 1)
		if ((rc = judge_version(st, &version)) != 0)
			return rc;
	st->run->result->record_count = st->kept_count;
	return rc;
}

/* A published health entry's note, asked for again to be written: it must be the statement
 * judged before. */
static int health_note_again(struct lifecycle_state *st, const struct consensus_health *info,
                             const uint8_t **note, size_t *note_len)
{
	struct consensus_run *run = st->run;
	uint8_t digest[CRYPTO_SHA256_SIZE];
	int rc = st->life->health(st->life->context, info->service_id, info->endpoint_id, info->issued_at,
	                          info->sequence, info->digest, note, note_len);
	if (rc)
		return callback_failed(run, info->service_id, info->digest, rc);
	if (!*note || *note_len == 0 || *note_len > HEALTH_MAX_BYTES)
		return callback_failed(run, info->service_id, info->digest, DIRAUTH_ERR_MISMATCH);
	if ((rc = crypto_sha256(*note, *note_len, digest)) != 0)
		return consensus_run_fail(run, CONSENSUS_FAILED, rc);
	if (memcmp(digest, info->digest, 32) != 0)
		return callback_failed(run, info->service_id, info->digest, DIRAUTH_ERR_MISMATCH);
	return 0;
}

/* The body of the published records and sections, written in order (body.c): the chosen
 * versions walked again, those excluded skipped, each record's note and each health entry's
 * statement asked for again, so that none is held between the judging and the writing; then the
 * header that commits to it. */
static int write_snapshot(struct lifecycle_state *st)
{
	struct consensus_run *run = st->run;
	struct consensus_result *result = run->result;
	struct consensus_body_writer w;
	struct consensus_choice choice;
	struct vote_body_record version;
	size_t excluded = 0, written = 0;
	int rc = consensus_body_begin(run, &w, st->kept_count);
	consensus_choice_begin(run, &choice);
	while (rc == 0 && (rc = consensus_choice_next(run, &choice, &version)) == 1) {
		/* The excluded versions are ascending too: the next one to skip is the first left. */
		const uint8_t *note = NULL;
		size_t note_len = 0;
		rc = 0;
		if (excluded < result->excluded_count &&
		    vote_body_record_same(&result->excluded[excluded], &version))
			excluded++;
		else if ((rc = consensus_note_take(run, &version, &note, &note_len)) == 0 &&
		         (rc = consensus_body_record(&w, version.service_id, note, note_len)) == 0)
			written++;
	}
	if (rc == 0 && (written != st->kept_count || excluded != result->excluded_count))
		rc = consensus_run_fail(run, CONSENSUS_FAILED, DIRAUTH_ERR_MISMATCH); /* lines that changed */
	if (rc == 0)
		rc = consensus_body_section(&w, "health", result->health_count);
	for (size_t i = 0; rc == 0 && i < result->health_count; i++) {
		struct snapshot_health entry = st->health[i];
		if (i > 0 && snapshot_health_order(&st->health[i - 1], &entry) >= 0) {
			rc = consensus_run_fail(run, CONSENSUS_FAILED,
			                        DIRAUTH_ERR_SYNTAX); /* the body's order */
			break;
		}
		if ((rc = health_note_again(st, &result->health[i], &entry.note, &entry.note_len)) == 0)
			rc = consensus_body_health(&w, &entry);
	}
	if (rc == 0)
		rc = consensus_body_section(&w, "revocations", st->listed_count);
	for (size_t i = 0; rc == 0 && i < st->listed_count; i++)
		rc = consensus_body_revocation(&w, &st->listed[i]);
	if (rc == 0)
		rc = consensus_body_finish(&w);
	consensus_body_clear(&w);
	return rc;
}

int consensus_lifecycle_compute(struct consensus_run *run)
{
	const struct consensus_lifecycle *life = run->params->lifecycle;
	struct lifecycle_state st;
	size_t cap = 0;
	int rc;
	if (!life || !life->health || !life->revocation || life->freshness_seconds == 0 ||
	    life->revocation_epochs == 0)
		return consensus_run_fail(run, CONSENSUS_BAD_PARAMETERS, DIRAUTH_ERR_CONFIG);
	memset(&st, 0, sizeof(st));
	st.run = run;
	st.life = life;
	if ((rc = judge_sections(run)) == 0 && (rc = carry_revocations(&st, &cap)) == 0) {
		size_t carried_count = st.listed_count;
		if ((rc = new_revocations(&st, &cap)) == 0 && (rc = listed_finish(&st, carried_count)) == 0 &&
		    (rc = publish_records(&st)) == 0)
			rc = write_snapshot(&st);
	}
	free(st.listed);
	free(st.revoked_endpoints);
	free(st.health);
	snapshot_body_free(st.previous);
	return rc;
}
