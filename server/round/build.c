/*
 * build.c: step 1 of a round: catch up, seal, vote, push.
 *
 * Catching up comes first (catchup.c), so that the vote names as previous the latest snapshot the
 * set published; it may take the vote window but for the time the vote's push needs.
 *
 * The vote lists, per service, the version the sealed view of the epoch holds: sequence and
 * registration digest, and the Merkle root over those notes; for a namespace with the endpoint
 * lifecycle, methods 1 and 2 and, once the previous snapshot is of method 2, method 2's sections
 * (a body with them is unreadable to method 1; server/publish/vote.h builds the body, as for the
 * single authority). A previous snapshot whose body cannot be read here gets a vote without the
 * sections, which method 2 counts as holding no statement. Its text is a function of the sealed
 * view and the stored latest, so a restart builds the same vote, which the signer signs again.
 */
#include "server/round/internal.h"

#include "crypto/crypto.h"
#include "base/error.h"
#include "crypto/merkle.h"
#include "schema/note.h"
#include "schema/vote.h"
#include "schema/vote_delta.h"
#include "schema/vote_envelope.h"
#include "server/publish/publish.h"
#include "server/publish/vote.h"
#include "server/store/votes.h"

#include <stdlib.h>
#include <string.h>

/* ---- the vote ---- */

/* Builds, signs and keeps the own vote of the sealed epoch; *envelope gets it. */
static int build_vote(struct round *round, size_t i, uint64_t epoch, struct buffer *envelope)
{
	const struct config *config = round->o.config;
	const struct config_namespace *ns = &config->namespaces[i];
	struct round_namespace *rn = &round->ns[i];
	struct vote_body lines;
	struct publish_previous previous;
	struct vote vote;
	struct buffer text, note, body;
	struct note_signature signature;
	struct epoch_times times;
	merkle_hash records_root;
	char why[SIGNER_DETAIL_MAX + 1] = "";
	memset(&lines, 0, sizeof lines);
	memset(&vote, 0, sizeof vote);
	buffer_init(&text);
	buffer_init(&note);
	buffer_init(&body);

	/* A lifecycle namespace votes method 2's sections once the previous snapshot its vote names
	 * is of method 2 (consensus.md, "Methods": a body with them is unreadable to method 1). */
	int rc = publish_previous_load(config, round->o.store, i, &previous);
	if (rc && previous.have) {
		round_log(round, i, epoch,
		          "the previous snapshot's body cannot be read (%s): voting without "
		          "method 2's sections",
		          dirauth_strerror(rc));
		rc = 0;
	}
	bool sections = ns->lifecycle && previous.have && previous.parsed;
	if (rc == 0)
		rc = schedule_epoch_times(&config->epoch, epoch, &times);
	if (rc == 0)
		rc = publish_vote_body(config, round->o.store, i, epoch, times.valid_after, sections,
		                       previous.parsed, &lines, records_root);
	if (rc == 0)
		rc = vote_body_encode(&lines, &body);
	if (rc == 0) {
		publish_vote_text(config, i, epoch, &previous, &lines, records_root, &vote);
		rc = crypto_sha256(body.data, body.len, vote.body_sha256);
	}
	if (rc == 0)
		rc = vote_encode(&vote, &text);
	if (rc == 0) {
		rc = signer_client_sign(round->o.signer, SIGNER_OP_SIGN_VOTE, text.data, text.len, 0, NULL, 0,
		                        &signature, why, sizeof why);
		signer_health_note(round->o.signer_health, rc, why);
		if (rc && !rn->logged_wait) {
			round_log(
			    round, i, epoch,
			    "no vote yet: the signer did not sign it: %s; retrying until the vote deadline",
			    why[0] ? why : dirauth_strerror(rc));
			rn->logged_wait = true;
		}
	}
	if (rc == 0)
		rc = note_format(text.data, text.len, &signature, 1, &note);
	if (rc == 0)
		rc = vote_envelope_encode(note.data, note.len, body.data, body.len, envelope);
	if (rc == 0) {
		rc = store_vote_put(round->o.store, ns->name, epoch, (unsigned)config->self_index,
		                    envelope->data, envelope->len);
		uint64_t now;
		if (rc == 0 && clock_now(round->o.clock, &now) == 0)
			round_figures_received(round, i, config->self_index, epoch, false, now);
		if (rc == DIRAUTH_ERR_EXISTS)
			rc = 0;
	}
	if (rc == 0) {
		struct vote_body *own = malloc(sizeof *own);
		if (own) {
			*own = lines;
			memset(&lines, 0, sizeof lines);
			rn->own_body = own;
		}
	}
	publish_vote_body_clear(&lines);
	publish_previous_clear(&previous);
	buffer_free(&text);
	buffer_free(&note);
	buffer_free(&body);
	return rc;
}

/* Loads the kept own vote's body (after a restart). */
static void load_own_body(struct round *round, size_t i, const struct buffer *envelope)
{
	struct vote_envelope parts;
	struct round_namespace *rn = &round->ns[i];
	struct vote_body_limits limits;
	round_vote_limits(round->o.config, i, &limits);
	if (vote_envelope_parse(envelope->data, envelope->len, round_vote_body_max(round->o.config),
	                        &parts) == 0)
		vote_body_parse_sections(parts.body, parts.body_len, &limits, &rn->own_body);
}

/* The own vote as a delta against the latest stored snapshot (schema/vote-delta.md), which the
 * vote names as its previous: 0 with *out the v2 envelope when this authority holds that
 * snapshot's body and the delta is smaller than the whole vote, else an error (send the whole). */
static int delta_envelope(struct round *round, size_t i, const struct buffer *envelope, struct buffer *out)
{
	struct round_namespace *rn = &round->ns[i];
	struct vote_envelope parts;
	struct note *note = NULL;
	struct vote vote;
	struct round_base *base = NULL;
	struct buffer delta;
	uint8_t digest[32];
	buffer_init(&delta);
	if (!rn->own_body)
		return DIRAUTH_ERR_NOT_FOUND;
	int rc =
	    vote_envelope_parse(envelope->data, envelope->len, round_vote_body_max(round->o.config), &parts);
	if (rc == 0)
		rc = note_parse(parts.note, parts.note_len, &note);
	if (rc == 0)
		rc = vote_parse(note->text, note->text_len, &vote);
	if (rc == 0)
		rc = round_base_latest(round, i, &base);
	if (rc == 0) {
		const struct vote_body *body = round_base_body(base, digest);
		if (memcmp(digest, vote.previous, 32) != 0)
			rc = DIRAUTH_ERR_MISMATCH;
		else
			rc = vote_delta_encode(body, rn->own_body, digest, &delta);
	}
	if (rc == 0)
		rc = vote_envelope_encode_delta(parts.note, parts.note_len, delta.data, delta.len, out);
	if (rc == 0 && out->len >= envelope->len)
		rc = DIRAUTH_ERR_BOUNDS;
	round_base_release(round, base);
	note_free(note);
	buffer_free(&delta);
	return rc;
}

/* Whether a member's answer to a delta asks for the whole vote: it does not hold the base
 * (409 unknown_base), or reads the first envelope version only (400 malformed, 415). */
static bool wants_whole_vote(const struct peer_answer *answer)
{
	return answer->transport == PEER_TRANSPORT_ANSWERED &&
	       ((answer->status == 409 && strcmp(answer->error_code, "unknown_base") == 0) ||
	        answer->status == 400 || answer->status == 415);
}

/* Pushes the own vote to every other member, as a delta where it can, the whole vote to those
 * that ask for it, and logs who took it and who refused it, and why. */
static void push_vote(struct round *round, size_t i, const struct buffer *envelope, uint64_t deadline_ms,
                      uint64_t build_ms)
{
	const struct config *config = round->o.config;
	struct round_namespace *rn = &round->ns[i];
	const char *name = config->namespaces[i].name;
	uint64_t started = round_monotonic_ms();
	struct buffer delta;
	struct peer_answer answers[CONFIG_MAX_MEMBERS], whole[CONFIG_MAX_MEMBERS];
	uint8_t targets[CONFIG_MAX_MEMBERS] = {0};
	size_t sent = 0, deltas = 0, wholes = 0;
	buffer_init(&delta);
	bool as_delta = delta_envelope(round, i, envelope, &delta) == 0;
	struct peer_call call = {.operation = PEER_PUSH_VOTE,
	                         .namespace_name = name,
	                         .body = as_delta ? delta.data : envelope->data,
	                         .body_len = as_delta ? delta.len : envelope->len,
	                         .deadline_ms = deadline_ms};
	if (peers_broadcast(round->o.peers, &call, NULL, answers) != 0)
		goto cleanup;
	size_t retry = 0;
	for (size_t m = 0; m < config->member_count; m++) {
		if (m == config->self_index)
			continue;
		sent += call.body_len;
		if (as_delta && wants_whole_vote(&answers[m])) {
			targets[m] = 1;
			retry++;
		} else if (as_delta) {
			deltas++;
		} else {
			wholes++;
		}
	}
	if (retry) {
		call.body = envelope->data;
		call.body_len = envelope->len;
		struct peers_broadcast_options options = {targets, NULL, NULL};
		if (peers_broadcast(round->o.peers, &call, &options, whole) == 0) {
			for (size_t m = 0; m < config->member_count; m++)
				if (targets[m]) {
					peer_answer_free(&answers[m]);
					answers[m] = whole[m];
					peer_answer_init(&whole[m]);
					sent += envelope->len;
					wholes++;
				}
			peer_answers_free(whole, config->member_count);
		}
	}
	char refused[1024];
	size_t accepted = round_push_refusals(config, answers, refused, sizeof refused);
	round_log(round, i, rn->epoch,
	          "voted: %zu records; taken by %zu of %zu peers%s%s%s; built in %llu ms, pushed in %llu ms "
	          "(%zu as a delta of %zu bytes, %zu whole of %zu bytes), %zu bytes sent",
	          rn->own_body ? rn->own_body->record_count : 0, accepted, config->member_count - 1,
	          refused[0] ? " (refused by " : "", refused, refused[0] ? ")" : "",
	          (unsigned long long)build_ms, (unsigned long long)(round_monotonic_ms() - started), deltas,
	          as_delta ? delta.len : 0, wholes, envelope->len, sent);
	peer_answers_free(answers, config->member_count);
cleanup:
	buffer_free(&delta);
}

int round_vote(struct round *round, size_t i, uint64_t now)
{
	(void)now; /* the seal and the vote are the epoch's; the catch-up before them is step 0 */
	const struct config *config = round->o.config;
	struct round_namespace *rn = &round->ns[i];
	const char *name = config->namespaces[i].name;
	uint64_t epoch = rn->epoch;
	uint64_t started = round_monotonic_ms();
	struct buffer envelope;
	buffer_init(&envelope);

	int rc = store_vote_get(round->o.store, name, epoch, (unsigned)config->self_index, &envelope);
	if (rc == 0) {
		load_own_body(round, i, &envelope);
	} else if (rc == DIRAUTH_ERR_NOT_FOUND) {
		struct epoch_times times;
		if ((rc = schedule_epoch_times(&config->epoch, epoch, &times)) == 0 &&
		    (rc = store_seal(round->o.store, epoch, times.valid_after)) == 0)
			rc = build_vote(round, i, epoch, &envelope);
	}
	if (rc) {
		if (!rn->logged_wait)
			round_log(round, i, epoch, "no vote yet: %s; retrying until the vote deadline",
			          dirauth_strerror(rc));
		rn->logged_wait = true;
	} else {
		rn->voted = true;
		uint64_t built = round_monotonic_ms();
		uint64_t push_until = rn->phases.vote_deadline + config->bounds.clock_skew_seconds;
		push_vote(round, i, &envelope, round_deadline_ms(round, push_until), built - started);
	}
	buffer_free(&envelope);
	return rc;
}
