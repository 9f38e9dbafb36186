/*
 * build.c: step 1 of a round: catch up, seal, vote.
 *
 * Catching up comes first, so that the vote names as previous the latest snapshot the set
 * published: from the first peer whose latest header verifies (k certified signatures at its
 * valid-after and now) and is newer than the latest stored here, the headers back to the one
 * stored here are fetched epoch by epoch (a 404 is an epoch that failed), each verified and
 * chained by its previous to the next, then stored oldest first with their bodies (checked
 * against their header; a body the peer no longer keeps leaves the header stored alone). A chain
 * that does not reach the stored header is refused: nothing is stored from it, and the vote names
 * this authority's own latest.
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

#include "schema/compress.h"
#include "schema/crypto.h"
#include "schema/error.h"
#include "schema/merkle.h"
#include "schema/note.h"
#include "schema/snapshot.h"
#include "schema/vote.h"
#include "schema/vote_envelope.h"
#include "server/publish/publish.h"
#include "server/publish/vote.h"
#include "server/store/votes.h"
#include "verify/snapshot.h"

#include <stdlib.h>
#include <string.h>

/* ---- catching up ---- */

/* Headers fetched from a peer, newest first, while walking back. */
struct fetched_header {
	uint64_t epoch;
	struct buffer note;
	struct snapshot_header header;
	uint8_t digest[32];
};

#define CATCH_UP_MAX 256 /* epochs walked back in one catch-up */

/* Fetches epoch's header from member and verifies it: 0, DIRAUTH_ERR_NOT_FOUND (the peer has
 * none: the epoch failed), or another error. */
static int fetch_header(struct round *round, size_t i, size_t member, uint64_t epoch, bool latest,
                        uint64_t now, struct fetched_header *out)
{
	const struct config_namespace *ns = &round->o.config->namespaces[i];
	struct peer_answer answer;
	struct note *note = NULL;
	peer_answer_init(&answer);
	int rc = latest ? peer_fetch_latest_header(round->o.peers, member, ns->name, &answer)
	                : peer_fetch_header(round->o.peers, member, ns->name, epoch, &answer);
	if (rc == 0 && answer.status == 404)
		rc = DIRAUTH_ERR_NOT_FOUND;
	else if (rc == 0 && answer.status != 200)
		rc = DIRAUTH_ERR_UNAVAILABLE;
	if (rc == 0)
		rc = note_parse(answer.body.data, answer.body.len, &note);
	if (rc == 0)
		rc = snapshot_header_parse(note->text, note->text_len, &out->header);
	if (rc == 0 && (strcmp(out->header.namespace_name, ns->name) != 0 ||
	                strcmp(out->header.origin, ns->origin) || (!latest && out->header.epoch != epoch)))
		rc = DIRAUTH_ERR_MISMATCH;
	if (rc == 0) {
		uint8_t counted[CONFIG_MAX_MEMBERS];
		size_t signers = 0;
		rc = authority_set_count_signers(round->o.authorities, note, out->header.valid_after, now,
		                                 counted, &signers);
		if (rc == 0 && signers < round->o.config->threshold)
			rc = DIRAUTH_ERR_THRESHOLD;
	}
	if (rc == 0)
		rc = snapshot_header_digest(note->text, note->text_len, out->digest);
	if (rc == 0) {
		out->epoch = out->header.epoch;
		buffer_init(&out->note);
		rc = buffer_append(&out->note, answer.body.data, answer.body.len);
	}
	note_free(note);
	peer_answer_free(&answer);
	return rc;
}

/* The body of a verified header from member, decoded and checked; DIRAUTH_ERR_NOT_FOUND when the
 * peer no longer keeps it. */
static int fetch_body(struct round *round, size_t i, size_t member, const struct snapshot_header *header,
                      struct buffer *body)
{
	const struct config *config = round->o.config;
	struct peer_answer answer;
	peer_answer_init(&answer);
	int rc = peer_fetch_body(round->o.peers, member, config->namespaces[i].name, header->epoch, &answer);
	if (rc == 0 && (answer.status == 404 || answer.status == 410))
		rc = DIRAUTH_ERR_NOT_FOUND;
	else if (rc == 0 && answer.status != 200)
		rc = DIRAUTH_ERR_UNAVAILABLE;
	enum content_encoding encoding = ENCODING_IDENTITY;
	if (rc == 0 && answer.content_encoding[0]) {
		if (strcmp(answer.content_encoding, "gzip") == 0)
			encoding = ENCODING_GZIP;
		else if (strcmp(answer.content_encoding, "zstd") == 0)
			encoding = ENCODING_ZSTD;
		else
			rc = DIRAUTH_ERR_SYNTAX;
	}
	if (rc == 0 && header->body_size > config->bounds.snapshot_body_uncompressed)
		rc = DIRAUTH_ERR_BOUNDS;
	if (rc == 0) {
		buffer_reset(body);
		if (encoding == ENCODING_IDENTITY)
			rc = buffer_append(body, answer.body.data, answer.body.len);
		else
			rc = compress_decode(encoding, answer.body.data, answer.body.len,
			                     (size_t)header->body_size, body);
	}
	if (rc == 0 && header->consensus_method == CONSENSUS_METHOD_LIFECYCLE) {
		const struct config_namespace *ns = &config->namespaces[i];
		struct snapshot_body_limits limits = {config->bounds.records_per_snapshot,
		                                      config_max_health(config), ns->max_revocations};
		rc = snapshot_body_verify_sections(header, body->data, body->len, &limits,
		                                   ns->health_freshness_epochs * config->epoch.length);
	} else if (rc == 0) {
		rc = snapshot_body_verify(header, body->data, body->len, config->bounds.records_per_snapshot);
	}
	peer_answer_free(&answer);
	return rc;
}

/* Stores what was fetched, oldest first, and serves the newest. */
static int store_fetched(struct round *round, size_t i, size_t member, struct fetched_header *chain,
                         size_t count)
{
	struct buffer body;
	buffer_init(&body);
	int rc = 0;
	for (size_t c = count; c-- > 0;) {
		struct fetched_header *f = &chain[c];
		rc = fetch_body(round, i, member, &f->header, &body);
		if (rc == 0)
			rc = publish_signed_snapshot(round->o.config, round->o.store, &f->header,
			                             f->note.data, f->note.len, body.data, body.len);
		else if (rc == DIRAUTH_ERR_NOT_FOUND)
			rc = store_snapshot_put(round->o.store, f->header.namespace_name, f->epoch,
			                        f->note.data, f->note.len, NULL);
		if (rc)
			break;
		round_log(round, i, f->epoch, "caught up from %s", round->o.config->members[member].name);
		if (round->o.on_published)
			round->o.on_published(round->o.on_published_context, i, f->epoch);
	}
	if (rc == 0 && count > 0) {
		struct buffer newest;
		buffer_init(&newest);
		rc = buffer_append(&newest, chain[0].note.data, chain[0].note.len);
		if (rc == 0 && chain[0].header.body_size == body.len)
			rc = prepared_set_install(round->o.prepared, i, &newest);
		buffer_free(&newest);
	}
	buffer_free(&body);
	return rc;
}

/* Catches up from member, if it published something newer. */
static int catch_up_from(struct round *round, size_t i, size_t member, uint64_t now)
{
	const char *name = round->o.config->namespaces[i].name;
	int have = 0;
	uint64_t latest = 0;
	uint8_t latest_digest[32];
	int rc = publish_latest_digest(round->o.store, name, &have, &latest, latest_digest);
	if (rc)
		return rc;
	struct fetched_header *chain = calloc(CATCH_UP_MAX, sizeof *chain);
	if (!chain)
		return DIRAUTH_ERR_NOMEM;
	size_t count = 0;
	rc = fetch_header(round, i, member, 0, true, now, &chain[0]);
	if (rc == 0 && have && chain[0].epoch <= latest) {
		buffer_free(&chain[0].note);
		free(chain);
		return 0;
	}
	if (rc == 0)
		count = 1;
	/* Walk back from the newest to the one stored here. */
	const uint8_t *wanted = rc == 0 ? chain[0].header.previous : NULL;
	for (uint64_t e = rc == 0 ? chain[0].epoch : 0; rc == 0 && e-- > (have ? latest + 1 : 0);) {
		static const uint8_t zeros[32];
		if (!have && memcmp(wanted, zeros, 32) == 0)
			break; /* reached the first snapshot */
		if (count == CATCH_UP_MAX) {
			rc = DIRAUTH_ERR_BOUNDS;
			break;
		}
		int got = fetch_header(round, i, member, e, false, now, &chain[count]);
		if (got == DIRAUTH_ERR_NOT_FOUND)
			continue;
		if (got) {
			rc = got;
			break;
		}
		if (memcmp(chain[count].digest, wanted, 32) != 0) {
			buffer_free(&chain[count].note);
			rc = DIRAUTH_ERR_MISMATCH;
			break;
		}
		wanted = chain[count].header.previous;
		count++;
	}
	if (rc == 0 && have && memcmp(wanted, latest_digest, 32) != 0)
		rc = DIRAUTH_ERR_MISMATCH; /* the chain does not reach the header stored here */
	if (rc == 0)
		rc = store_fetched(round, i, member, chain, count);
	for (size_t c = 0; c < count; c++)
		buffer_free(&chain[c].note);
	free(chain);
	return rc;
}

/* Asks every peer, in member order: a peer that is as far behind as this authority has nothing
 * newer, and the next may; once caught up from one, the others have nothing newer (or newer
 * still, which is taken too). */
static int catch_up(struct round *round, size_t i, uint64_t now)
{
	const struct config *config = round->o.config;
	int rc = DIRAUTH_ERR_UNAVAILABLE, any = 0;
	for (size_t m = 0; m < config->member_count; m++) {
		if (m == config->self_index)
			continue;
		if ((rc = catch_up_from(round, i, m, now)) == 0)
			any = 1;
		else if (rc == DIRAUTH_ERR_MISMATCH || rc == DIRAUTH_ERR_BOUNDS)
			round_log(round, i, round->ns[i].epoch, "cannot catch up from %s: %s",
			          config->members[m].name, dirauth_strerror(rc));
	}
	return any ? 0 : rc;
}

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
		                       previous.parsed, &lines, vote.records_root);
	snprintf(vote.namespace_name, sizeof vote.namespace_name, "%s", ns->name);
	snprintf(vote.origin, sizeof vote.origin, "%s", ns->origin);
	snprintf(vote.authority, sizeof vote.authority, "%s", config->authority_name);
	vote.epoch = epoch;
	vote.record_count = lines.record_count;
	if (rc == 0)
		rc = vote_body_encode(&lines, &body);
	if (rc == 0)
		rc = crypto_sha256(body.data, body.len, vote.body_sha256);
	if (rc == 0 && previous.have) {
		vote.previous_epoch = previous.epoch;
		memcpy(vote.previous, previous.digest, 32);
	}
	if (rc == 0) {
		/* The methods this authority can compute for the namespace: method 2 needs the lifecycle
		 * configured (its parameters are the namespace's). */
		vote.method_count = 1;
		vote.methods[0] = CONSENSUS_METHOD_REGISTRATIONS;
		if (ns->lifecycle)
			vote.methods[vote.method_count++] = CONSENSUS_METHOD_LIFECYCLE;
		rc = vote_encode(&vote, &text);
	}
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

int round_vote(struct round *round, size_t i, uint64_t now)
{
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
		catch_up(round, i, now);
		struct epoch_times times;
		if ((rc = schedule_epoch_times(&config->epoch, epoch, &times)) == 0 &&
		    (rc = store_seal(round->o.store, epoch, times.valid_after)) == 0)
			rc = build_vote(round, i, epoch, &envelope);
	}
	if (rc) {
		buffer_free(&envelope);
		if (!rn->logged_wait)
			round_log(round, i, epoch, "no vote yet: %s; retrying until the vote deadline",
			          dirauth_strerror(rc));
		rn->logged_wait = true;
		return rc;
	}
	rn->voted = true;
	uint64_t built = round_monotonic_ms();
	struct peer_call call = {.operation = PEER_PUSH_VOTE,
	                         .namespace_name = name,
	                         .body = envelope.data,
	                         .body_len = envelope.len};
	struct peer_answer answers[CONFIG_MAX_MEMBERS];
	rc = peers_broadcast(round->o.peers, &call, NULL, answers);
	if (rc == 0) {
		char failed[512] = "";
		size_t len = 0, accepted = 0;
		for (size_t m = 0; m < config->member_count; m++) {
			if (m == config->self_index)
				continue;
			if (answers[m].transport == PEER_TRANSPORT_ANSWERED &&
			    (answers[m].status == 200 || answers[m].status == 202))
				accepted++;
			else if (len < sizeof failed)
				len += (size_t)snprintf(
				    failed + len, sizeof failed - len, "%s%s: %s", len ? "; " : "",
				    config->members[m].name,
				    answers[m].transport == PEER_TRANSPORT_ANSWERED
				        ? (answers[m].error_code[0] ? answers[m].error_code : "refused")
				        : peer_transport_name(answers[m].transport));
		}
		uint64_t pushed = round_monotonic_ms();
		round_log(round, i, epoch,
		          "voted: %zu records; taken by %zu of %zu peers%s%s%s; built in %llu ms, pushed in "
		          "%llu ms, "
		          "%zu bytes sent",
		          rn->own_body ? rn->own_body->record_count : 0, accepted, config->member_count - 1,
		          failed[0] ? " (" : "", failed, failed[0] ? ")" : "",
		          (unsigned long long)(built - started), (unsigned long long)(pushed - built),
		          envelope.len * (config->member_count - 1));
		peer_answers_free(answers, config->member_count);
	}
	buffer_free(&envelope);
	return 0;
}
