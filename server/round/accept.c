/*
 * accept.c: what peers push and pull: votes, signatures and evidence.
 *
 * The checks run in a fixed order, each with its own error, and nothing is kept before all of
 * them passed: size; the framing and grammar of the statement (a vote of another namespace or
 * origin is malformed here, since it was sent to the wrong route); its epoch against the clock
 * (round_window); the member it names; its signature by a key that member's identity certified
 * at the statement's time and now (server/peers); for a vote, its body against the vote. Then the
 * store keeps it once (server/store/votes.h), and a second different statement of the same
 * member becomes evidence.
 *
 * A signature is over a header text. When this authority has computed its own header for the
 * epoch, a signature over another text is evidence and is refused; before that, it is kept and
 * judged once the header is computed (round_count_signatures), since peers may well be faster.
 */
#include "server/round/internal.h"

#include "crypto/crypto.h"
#include "base/error.h"
#include "schema/note.h"
#include "schema/snapshot.h"
#include "schema/vote.h"
#include "schema/vote_body.h"
#include "schema/vote_delta.h"
#include "schema/vote_envelope.h"
#include "server/store/votes.h"
#include "verify/snapshot.h"

#include <stdlib.h>
#include <string.h>

static void answer_set(struct round_answer *answer, enum api_error error, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

static void answer_set(struct round_answer *answer, enum api_error error, const char *format, ...)
{
	answer->error = error;
	answer->status = api_error_status(error);
	va_list args;
	va_start(args, format);
	vsnprintf(answer->detail, sizeof answer->detail, format, args);
	va_end(args);
}

static void answer_ok(struct round_answer *answer, unsigned status, const char *sentence)
{
	answer->error = API_ERROR_NONE;
	answer->status = status;
	snprintf(answer->detail, sizeof answer->detail, "%s", sentence);
}

/* The member of the set named name. */
static int member_by_name(const struct config *config, const char *name, size_t *member)
{
	for (size_t m = 0; m < config->member_count; m++)
		if (strcmp(config->members[m].name, name) == 0) {
			*member = m;
			return 0;
		}
	return DIRAUTH_ERR_NOT_FOUND;
}

/* The time and window checks shared by votes and signatures. */
static enum api_error check_window(struct round *round, uint64_t epoch, uint64_t now, bool signatures,
                                   struct round_answer *answer)
{
	enum api_error error = round_window(round->o.config, epoch, now, signatures);
	if (error == API_ERROR_WRONG_EPOCH)
		answer_set(answer, error, "Epoch %llu is not being %s now.", (unsigned long long)epoch,
		           signatures ? "signed" : "voted on");
	else if (error == API_ERROR_TOO_LATE)
		answer_set(answer, error, "The %s deadline of epoch %llu has passed.",
		           signatures ? "signature" : "vote", (unsigned long long)epoch);
	return error;
}

/* The signature of note by member, at the statement's time at and now. */
static enum api_error check_signature(struct round *round, size_t member, const struct note *note,
                                      uint64_t at, uint64_t now, struct round_answer *answer)
{
	char why[ROUND_DETAIL_MAX];
	int rc = authority_set_verify(round->o.authorities, member, note, at, now, why, sizeof why);
	if (rc == 0)
		return API_ERROR_NONE;
	if (rc == DIRAUTH_ERR_NOMEM || rc == DIRAUTH_ERR_CRYPTO || rc == DIRAUTH_ERR_INTERNAL)
		return answer_set(answer, API_ERROR_INTERNAL, "The signature could not be checked: %s", why),
		       API_ERROR_INTERNAL;
	answer_set(answer, API_ERROR_BAD_SIGNATURE, "No valid signature by a key that %s certified: %s",
	           round->o.config->members[member].name, why);
	return API_ERROR_BAD_SIGNATURE;
}

enum api_error round_check_vote(struct round *round, size_t i, const uint8_t *envelope, size_t len,
                                uint64_t now, struct vote *vote, struct vote_body **body, size_t *member,
                                struct round_answer *answer)
{
	const struct config *config = round->o.config;
	const struct config_namespace *ns = &config->namespaces[i];
	struct vote_envelope parts;
	struct note *note = NULL;
	struct epoch_phases phases;
	enum api_error error = API_ERROR_NONE;
	int rc = 0;
	*body = NULL;
	size_t max = round_vote_body_max(config);
	if (len > max) {
		answer_set(answer, API_ERROR_BODY_TOO_LARGE, "The vote is larger than %zu bytes.", max);
		error = API_ERROR_BODY_TOO_LARGE;
		goto cleanup;
	}
	rc = vote_envelope_parse(envelope, len, max, &parts);
	if (rc == 0)
		rc = note_parse(parts.note, parts.note_len, &note);
	if (rc == 0 && note->signature_count != 1)
		rc = DIRAUTH_ERR_SYNTAX;
	if (rc == 0)
		rc = vote_parse(note->text, note->text_len, vote);
	if (rc) {
		answer_set(answer, API_ERROR_MALFORMED, "Not a vote envelope with one signed vote: %s",
		           dirauth_strerror(rc));
		error = API_ERROR_MALFORMED;
		goto cleanup;
	}
	if (strcmp(vote->namespace_name, ns->name) != 0 || strcmp(vote->origin, ns->origin) != 0) {
		answer_set(answer, API_ERROR_MALFORMED, "The vote is for namespace '%s', origin '%s'.",
		           vote->namespace_name, vote->origin);
		error = API_ERROR_MALFORMED;
		goto cleanup;
	}
	if ((error = check_window(round, vote->epoch, now, false, answer)) != API_ERROR_NONE)
		goto cleanup;
	if (member_by_name(config, vote->authority, member) != 0 ||
	    strcmp(note->signatures[0].name, vote->authority) != 0) {
		answer_set(answer, API_ERROR_UNKNOWN_AUTHORITY, "'%s' is no member of this authority set.",
		           vote->authority);
		error = API_ERROR_UNKNOWN_AUTHORITY;
		goto cleanup;
	}
	schedule_epoch_phases(&config->epoch, vote->epoch, &phases);
	if ((error = check_signature(round, *member, note, phases.vote_at, now, answer)) != API_ERROR_NONE)
		goto cleanup;
	rc = round_vote_body_load(config, i, vote, parts.body, parts.body_len, body);
	if (rc == DIRAUTH_ERR_NOMEM) {
		answer_set(answer, API_ERROR_INTERNAL, "Out of memory.");
		error = API_ERROR_INTERNAL;
	} else if (rc) {
		answer_set(answer, API_ERROR_MALFORMED, "The vote body does not match its vote: %s",
		           dirauth_strerror(rc));
		error = API_ERROR_MALFORMED;
	}
cleanup:
	note_free(note);
	return error;
}

static void store_failed(struct round_answer *answer, int rc)
{
	if (rc == DIRAUTH_ERR_FULL)
		answer_set(answer, API_ERROR_STORE_FULL, "The store is full; nothing was kept.");
	else
		answer_set(answer, API_ERROR_INTERNAL, "The store failed: %s", dirauth_strerror(rc));
}

void round_keep_vote(struct round *round, size_t i, uint64_t epoch, size_t member, const uint8_t *envelope,
                     size_t len, struct round_answer *answer)
{
	const char *name = round->o.config->namespaces[i].name;
	const char *who = round->o.config->members[member].name;
	int rc = store_vote_put(round->o.store, name, epoch, (unsigned)member, envelope, len);
	uint64_t now;
	if (rc == 0 && clock_now(round->o.clock, &now) == 0)
		round_figures_received(round, i, member, epoch, false, now);
	if (rc == 0)
		return answer_ok(answer, 202, "The vote is kept.");
	if (rc == DIRAUTH_ERR_EXISTS)
		return answer_ok(answer, 200, "The vote was already held.");
	if (rc != DIRAUTH_ERR_MISMATCH)
		return store_failed(answer, rc);
	struct buffer held;
	buffer_init(&held);
	rc = store_vote_get(round->o.store, name, epoch, (unsigned)member, &held);
	if (rc == 0)
		rc = store_evidence_put(round->o.store, name, epoch, (unsigned)member,
		                        STORE_EVIDENCE_CONFLICTING_VOTES, held.data, held.len, envelope, len);
	buffer_free(&held);
	if (rc == 0)
		round_log(round, i, epoch, "%s sent a second, different vote; both are kept as evidence",
		          who);
	answer_set(answer, API_ERROR_CONFLICTING_VOTE,
	           "Another vote of %s for epoch %llu is held; both are kept as evidence.", who,
	           (unsigned long long)epoch);
}

/* A vote pushed as a delta (vote envelope v2) rebuilt into the whole envelope (v1), from the
 * base this authority holds: the latest snapshot stored here, which the vote must name as its
 * previous. The rebuilt body is then judged like any other, against the vote's body-sha256. */
static enum api_error rebuild_whole(struct round *round, size_t i, const struct vote_envelope *parts,
                                    struct buffer *whole, struct round_answer *answer)
{
	struct note *note = NULL;
	struct vote vote;
	struct round_base *base = NULL;
	struct vote_body *body = NULL;
	struct vote_body_limits limits;
	struct buffer text;
	uint8_t named[32], held[32];
	enum api_error error = API_ERROR_NONE;
	buffer_init(&text);
	int rc = note_parse(parts->note, parts->note_len, &note);
	if (rc == 0)
		rc = vote_parse(note->text, note->text_len, &vote);
	if (rc == 0)
		rc = vote_delta_base(parts->body, parts->body_len, named);
	if (rc) {
		error = API_ERROR_MALFORMED;
		answer_set(answer, error, "Not a vote and a vote delta: %s", dirauth_strerror(rc));
		goto out;
	}
	if (memcmp(named, vote.previous, 32) != 0) {
		error = API_ERROR_MALFORMED;
		answer_set(answer, error, "The delta is against a snapshot other than the vote's previous.");
		goto out;
	}
	rc = round_base_latest(round, i, &base);
	if (rc == 0 && (round_base_body(base, held), memcmp(held, named, 32) != 0))
		rc = DIRAUTH_ERR_NOT_FOUND;
	if (rc == DIRAUTH_ERR_NOT_FOUND) {
		error = API_ERROR_UNKNOWN_BASE;
		answer_set(answer, error, "The vote's previous snapshot is not the latest stored here.");
		goto out;
	}
	if (rc) {
		error = API_ERROR_INTERNAL;
		answer_set(answer, error, "The base snapshot cannot be read: %s", dirauth_strerror(rc));
		goto out;
	}
	round_vote_limits(round->o.config, i, &limits);
	rc = vote_delta_apply(round_base_body(base, NULL), parts->body, parts->body_len, &limits,
	                      vote.namespace_name, vote.epoch, vote.authority, &body);
	if (rc == 0)
		rc = vote_body_encode(body, &text);
	if (rc == 0)
		rc = vote_envelope_encode(parts->note, parts->note_len, text.data, text.len, whole);
	if (rc == DIRAUTH_ERR_NOMEM) {
		error = API_ERROR_INTERNAL;
		answer_set(answer, error, "Out of memory.");
	} else if (rc) {
		error = API_ERROR_MALFORMED;
		answer_set(answer, error, "The vote delta does not apply to its base: %s",
		           dirauth_strerror(rc));
	}
out:
	vote_body_free(body);
	round_base_release(round, base);
	note_free(note);
	buffer_free(&text);
	return error;
}

void round_accept_vote(struct round *round, size_t i, const uint8_t *body, size_t len,
                       struct round_answer *answer)
{
	struct vote vote;
	struct vote_body *parsed = NULL;
	struct vote_envelope parts;
	struct buffer whole;
	size_t member;
	uint64_t now;
	buffer_init(&whole);
	answer->error = API_ERROR_NONE;
	if (clock_now(round->o.clock, &now) != 0)
		return answer_set(answer, API_ERROR_UNAVAILABLE, "The clock cannot be read.");
	const uint8_t *sent = body;
	size_t sent_len = len;
	/* A delta becomes the whole vote first; from then on both are one. */
	if (len <= round_vote_body_max(round->o.config) &&
	    vote_envelope_parse(body, len, round_vote_body_max(round->o.config), &parts) == 0 &&
	    parts.delta) {
		if (rebuild_whole(round, i, &parts, &whole, answer) != API_ERROR_NONE) {
			round_figures_refused(round, round_claimed_member(round, sent, sent_len, true),
			                      answer->error);
			buffer_free(&whole);
			return;
		}
		body = whole.data;
		len = whole.len;
	}
	if (round_check_vote(round, i, body, len, now, &vote, &parsed, &member, answer) == API_ERROR_NONE) {
		vote_body_free(parsed);
		round_keep_vote(round, i, vote.epoch, member, body, len, answer);
	}
	if (answer->error != API_ERROR_NONE)
		round_figures_refused(round, round_claimed_member(round, body, len, true), answer->error);
	buffer_free(&whole);
}

/* ---- signatures ---- */

/* Keeps evidence that member signed text_b for an epoch for which it also signed, or for which
 * this authority computed, another text. */
static void keep_header_evidence(struct round *round, size_t i, uint64_t epoch, size_t member,
                                 enum store_evidence_kind kind, const uint8_t *first, size_t first_len,
                                 const uint8_t *second, size_t second_len)
{
	int rc = store_evidence_put(round->o.store, round->o.config->namespaces[i].name, epoch,
	                            (unsigned)member, kind, first, first_len, second, second_len);
	if (rc == 0)
		round_log(
		    round, i, epoch, "%s signed %s; kept as evidence", round->o.config->members[member].name,
		    kind == STORE_EVIDENCE_CONFLICTING_HEADERS ? "two different headers"
		                                               : "a header other than the one computed here");
}

/* The text of a stored signed header note. */
static int note_text_equals(const uint8_t *note_bytes, size_t len, const uint8_t *text, size_t text_len)
{
	struct note *note = NULL;
	if (note_parse(note_bytes, len, &note) != 0)
		return 0;
	int equal = note->text_len == text_len && memcmp(note->text, text, text_len) == 0;
	note_free(note);
	return equal;
}

void round_take_signature(struct round *round, size_t i, const uint8_t *note_bytes, size_t len, uint64_t now,
                          struct round_answer *answer)
{
	const struct config *config = round->o.config;
	const struct config_namespace *ns = &config->namespaces[i];
	struct note *note = NULL;
	struct snapshot_header header;
	struct buffer ours, held;
	size_t member;
	int rc = 0;
	buffer_init(&ours);
	buffer_init(&held);
	if (len > VERIFY_HEADER_NOTE_MAX) {
		answer_set(answer, API_ERROR_BODY_TOO_LARGE, "The signed header is larger than %zu bytes.",
		           (size_t)VERIFY_HEADER_NOTE_MAX);
		goto done;
	}
	rc = note_parse(note_bytes, len, &note);
	if (rc == 0 && note->signature_count != 1)
		rc = DIRAUTH_ERR_SYNTAX;
	if (rc == 0)
		rc = snapshot_header_parse(note->text, note->text_len, &header);
	if (rc) {
		answer_set(answer, API_ERROR_MALFORMED, "Not a snapshot header with one signature: %s",
		           dirauth_strerror(rc));
		goto done;
	}
	if (strcmp(header.namespace_name, ns->name) != 0 || strcmp(header.origin, ns->origin) != 0) {
		answer_set(answer, API_ERROR_MALFORMED, "The header is for namespace '%s', origin '%s'.",
		           header.namespace_name, header.origin);
		goto done;
	}
	if (check_window(round, header.epoch, now, true, answer) != API_ERROR_NONE)
		goto done;
	if (member_by_name(config, note->signatures[0].name, &member) != 0) {
		answer_set(answer, API_ERROR_UNKNOWN_AUTHORITY, "'%s' is no member of this authority set.",
		           note->signatures[0].name);
		goto done;
	}
	if (check_signature(round, member, note, header.valid_after, now, answer) != API_ERROR_NONE)
		goto done;
	rc = store_consensus_get(round->o.store, ns->name, header.epoch, &ours);
	if (rc == 0 && (ours.len != note->text_len || memcmp(ours.data, note->text, ours.len) != 0)) {
		keep_header_evidence(round, i, header.epoch, member, STORE_EVIDENCE_OTHER_HEADER, note_bytes,
		                     len, NULL, 0);
		answer_set(
		    answer, API_ERROR_CONFLICTING_HEADER,
		    "The signature of %s is over another header than the one computed here for epoch %llu.",
		    config->members[member].name, (unsigned long long)header.epoch);
		goto done;
	}
	if (rc && rc != DIRAUTH_ERR_NOT_FOUND) {
		store_failed(answer, rc);
		goto done;
	}
	rc = store_signature_put(round->o.store, ns->name, header.epoch, (unsigned)member, note_bytes, len);
	if (rc == 0) {
		round_figures_received(round, i, member, header.epoch, true, now);
		answer_ok(answer, 202, "The signature is kept.");
	} else if (rc == DIRAUTH_ERR_EXISTS) {
		answer_ok(answer, 200, "The signature was already held.");
	} else if (rc == DIRAUTH_ERR_MISMATCH && store_signature_get(round->o.store, ns->name, header.epoch,
	                                                             (unsigned)member, &held) == 0) {
		if (note_text_equals(held.data, held.len, note->text, note->text_len)) {
			answer_ok(answer, 200,
			          "A signature of that member over this header was already held.");
		} else {
			keep_header_evidence(round, i, header.epoch, member,
			                     STORE_EVIDENCE_CONFLICTING_HEADERS, held.data, held.len,
			                     note_bytes, len);
			answer_set(
			    answer, API_ERROR_CONFLICTING_HEADER,
			    "%s already signed another header for epoch %llu; both are kept as evidence.",
			    config->members[member].name, (unsigned long long)header.epoch);
		}
	} else {
		store_failed(answer, rc);
	}
done:
	buffer_free(&ours);
	buffer_free(&held);
	note_free(note);
}

void round_accept_signature(struct round *round, size_t i, const uint8_t *body, size_t len,
                            struct round_answer *answer)
{
	uint64_t now;
	if (clock_now(round->o.clock, &now) != 0)
		return answer_set(answer, API_ERROR_UNAVAILABLE, "The clock cannot be read.");
	round_take_signature(round, i, body, len, now, answer);
	if (answer->error != API_ERROR_NONE)
		round_figures_refused(round, round_claimed_member(round, body, len, false), answer->error);
}

int round_count_signatures(struct round *round, size_t i, uint64_t epoch, const uint8_t *text,
                           size_t text_len, uint32_t *valid)
{
	const char *name = round->o.config->namespaces[i].name;
	struct buffer held;
	uint32_t members = 0;
	*valid = 0;
	int rc = store_signatures_held(round->o.store, name, epoch, &members);
	if (rc)
		return rc;
	buffer_init(&held);
	for (size_t m = 0; m < round->o.config->member_count; m++) {
		if (!(members & ((uint32_t)1 << m)))
			continue;
		if ((rc = store_signature_get(round->o.store, name, epoch, (unsigned)m, &held)) != 0)
			break;
		if (note_text_equals(held.data, held.len, text, text_len))
			*valid |= (uint32_t)1 << m;
		else
			keep_header_evidence(round, i, epoch, m, STORE_EVIDENCE_OTHER_HEADER, held.data,
			                     held.len, NULL, 0);
	}
	buffer_free(&held);
	return rc;
}

/* ---- what peers pull ---- */

int round_vote_get(struct round *round, size_t i, uint64_t epoch, const char *member_name, struct buffer *out)
{
	size_t member;
	if (member_by_name(round->o.config, member_name, &member) != 0)
		return DIRAUTH_ERR_NOT_FOUND;
	return store_vote_get(round->o.store, round->o.config->namespaces[i].name, epoch, (unsigned)member,
	                      out);
}

int round_signatures_get(struct round *round, size_t i, uint64_t epoch, struct buffer *out)
{
	const char *name = round->o.config->namespaces[i].name;
	struct buffer text, held;
	struct note_signature signatures[CONFIG_MAX_MEMBERS];
	size_t count = 0;
	uint32_t valid = 0;
	buffer_init(&text);
	buffer_init(&held);
	int rc = store_consensus_get(round->o.store, name, epoch, &text);
	if (rc == 0)
		rc = round_count_signatures(round, i, epoch, text.data, text.len, &valid);
	for (size_t m = 0; rc == 0 && m < round->o.config->member_count; m++) {
		if (!(valid & ((uint32_t)1 << m)))
			continue;
		struct note *note = NULL;
		if ((rc = store_signature_get(round->o.store, name, epoch, (unsigned)m, &held)) == 0 &&
		    (rc = note_parse(held.data, held.len, &note)) == 0)
			signatures[count++] = note->signatures[0];
		note_free(note);
	}
	if (rc == 0 && count == 0)
		rc = DIRAUTH_ERR_NOT_FOUND;
	if (rc == 0) {
		buffer_reset(out);
		rc = note_format(text.data, text.len, signatures, count, out);
	}
	buffer_free(&text);
	buffer_free(&held);
	return rc;
}

/* The evidence text: "dirauth evidence v1\n", then per piece a line
 * "evidence <epoch> <member> <kind> <first length> <second length>\n" and the two statements'
 * bytes (docs/protocol.md, "Evidence"). */
struct evidence_text {
	const struct config *config;
	struct buffer *out;
	size_t max_bytes;
};

static const char *evidence_kind_name(enum store_evidence_kind kind)
{
	switch (kind) {
	case STORE_EVIDENCE_CONFLICTING_VOTES:
		return "conflicting-votes";
	case STORE_EVIDENCE_CONFLICTING_HEADERS:
		return "conflicting-headers";
	case STORE_EVIDENCE_OTHER_HEADER:
		return "other-header";
	}
	return "unknown";
}

static int evidence_visit(void *context, const struct store_evidence *e)
{
	struct evidence_text *w = context;
	char line[NOTE_NAME_MAX + 128];
	const char *who =
	    e->member < w->config->member_count ? w->config->members[e->member].name : "unknown";
	int n = snprintf(line, sizeof line, "evidence %llu %s %s %zu %zu\n", (unsigned long long)e->epoch,
	                 who, evidence_kind_name(e->kind), e->first_len, e->second_len);
	if (w->out->len + (size_t)n + e->first_len + e->second_len > w->max_bytes)
		return DIRAUTH_ERR_BOUNDS;
	int rc = buffer_append(w->out, line, (size_t)n);
	if (!rc)
		rc = buffer_append(w->out, e->first, e->first_len);
	if (!rc && e->second_len)
		rc = buffer_append(w->out, e->second, e->second_len);
	return rc;
}

int round_evidence_get(struct round *round, size_t i, uint64_t from_epoch, size_t max_bytes,
                       struct buffer *out)
{
	buffer_reset(out);
	int rc = buffer_append(out, "dirauth evidence v1\n", 20);
	if (rc)
		return rc;
	struct evidence_text w = {round->o.config, out, max_bytes};
	return store_evidence_foreach(round->o.store, round->o.config->namespaces[i].name, from_epoch,
	                              evidence_visit, &w);
}
