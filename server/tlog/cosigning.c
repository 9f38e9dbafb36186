/*
 * cosigning.c: collecting the other authorities' cosignatures of this authority's checkpoints
 * with add-checkpoint, and deciding which checkpoint a log serves (cosigning.h).
 *
 * A round reads the latest stored checkpoint, counts the cosignatures it holds, asks everyone
 * pinned who has not cosigned it yet, adds what verifies, stores the note again and publishes it
 * once it holds the quorum. Nothing here is trusted to a peer: the size a member names in a 409 is
 * only a starting point for a proof computed from this authority's own stored tree, and a line it
 * answers counts only when it verifies under the key this configuration pins for it. A round is
 * bounded by two broadcasts (each about one peer timeout) and, per outside witness, two requests
 * of one peer timeout each.
 */
#include "server/tlog/cosigning.h"

#include "logline/logline.h"
#include "net/client.h"
#include "schema/checkpoint.h"
#include "schema/encoding.h"
#include "base/error.h"
#include "server/store/tlog_table.h"
#include "server/tlog/translog.h"
#include "server/tlog/witness.h"
#include "tlog/tree.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SIZE_ANSWER_MAX 21 /* "<20 digits>\n" */

/* What a member or witness is believed to have cosigned last. */
struct hint {
	bool known;
	uint64_t size;
};

struct translog_cosigning {
	struct translog_cosigning_options options;
	pthread_t thread;
	bool thread_started;
	pthread_mutex_t lock; /* guards what follows up to the hints */
	pthread_cond_t wake;
	bool stopping;
	uint64_t kicked;                             /* a bit per namespace */
	uint64_t retry_size[CONFIG_MAX_NAMESPACES];  /* the checkpoint being retried */
	unsigned attempts[CONFIG_MAX_NAMESPACES];    /* rounds spent on it */
	uint64_t retry_at_ms[CONFIG_MAX_NAMESPACES]; /* monotonic; 0: no retry due */
	/* Only the round's thread touches these. */
	struct hint members[CONFIG_MAX_NAMESPACES][CONFIG_MAX_MEMBERS];
	struct hint witnesses[CONFIG_MAX_NAMESPACES][CONFIG_MAX_WITNESSES];
	struct translog_cosigning_statistics figures; /* under lock */
};

/* ---- the quorum and the served checkpoint ---- */

size_t translog_quorum(const struct config *config)
{
	for (size_t i = 0; i < config->member_count; i++)
		if (i != config->self_index && config->members[i].has_cosigner)
			return config->threshold;
	return 1;
}

size_t translog_cosigners(const struct config *config, const struct note_verifier *own,
                          struct note_verifier *keys, size_t *members)
{
	size_t count = 0;
	if (own) {
		keys[count] = *own;
		if (members)
			members[count] = config->self_index;
		count++;
	}
	for (size_t i = 0; i < config->member_count && count < CONFIG_MAX_MEMBERS; i++) {
		if (i == config->self_index || !config->members[i].has_cosigner)
			continue;
		keys[count] = config->members[i].cosigner;
		if (members)
			members[count] = i;
		count++;
	}
	return count;
}

size_t translog_cosigned_count(const struct note *note, const struct note_verifier *keys, size_t count,
                               uint8_t *cosigned)
{
	size_t distinct = 0;
	for (size_t i = 0; i < count; i++) {
		uint64_t timestamp = 0;
		int ok = cosignature_verify(note, &keys[i], &timestamp) == 0;
		for (size_t j = 0; ok && j < i; j++)
			if (memcmp(keys[j].public_key, keys[i].public_key, sizeof keys[i].public_key) == 0)
				ok = 0; /* one key counts once (hard rule 10) */
		if (cosigned)
			cosigned[i] = (uint8_t)ok;
		distinct += (size_t)ok;
	}
	return distinct;
}

int translog_checkpoint_served(struct store *store, const struct config *config, size_t namespace_index,
                               struct buffer *note)
{
	uint64_t size = 0;
	if (!store || !config || !note || namespace_index >= config->namespace_count)
		return DIRAUTH_ERR_INTERNAL;
	const char *name = config->namespaces[namespace_index].name;
	if (translog_quorum(config) <= 1)
		return store_log_checkpoint(store, name, note, NULL);
	int rc = store_log_published(store, name, &size);
	if (rc)
		return rc;
	rc = store_log_checkpoint_at(store, name, size, note);
	return rc == DIRAUTH_ERR_NOT_FOUND ? DIRAUTH_ERR_STORE : rc; /* a published size is stored */
}

/* ---- one round ---- */

static uint64_t monotonic_ms(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)now.tv_sec * 1000u + (uint64_t)now.tv_nsec / 1000000u;
}

/* Everyone a round may ask: the other members with a pinned cosignature key, then the outside
 * witnesses. */
struct target {
	const char *name;
	const struct note_verifier *key;
	size_t member; /* its member index; SIZE_MAX for an outside witness */
	const char *url;
	struct hint *hint;
	bool cosigned; /* the note holds a valid cosignature of key */
	bool asked;
	uint64_t old_size; /* of the request being sent */
	bool retry;        /* a 409 named another size: send once more */
};

struct round {
	struct translog_cosigning *c;
	size_t namespace_index;
	const char *name;
	struct buffer note; /* the stored checkpoint note, then with what was added */
	struct note *parsed;
	uint64_t size;
	struct store_log_reader reader;
	struct target targets[CONFIG_MAX_MEMBERS + CONFIG_MAX_WITNESSES];
	size_t target_count;
	struct note_signature added[CONFIG_MAX_MEMBERS + CONFIG_MAX_WITNESSES];
	size_t added_count;
	struct translog_cosigning_outcome *outcome;
};

static void round_log(const struct round *r, const struct target *t, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
static void round_log(const struct round *r, const struct target *t, const char *format, ...)
{
	const struct translog_cosigning_options *o = &r->c->options;
	char what[640];
	va_list args;
	va_start(args, format);
	vsnprintf(what, sizeof what, format, args);
	va_end(args);
	logline_write(o->log, "dirauthd", logline_epoch_now(o->clock, &o->config->epoch), r->name,
	              "the checkpoint of %llu entries: add-checkpoint to %s: %s", (unsigned long long)r->size,
	              t->name, what);
}

/* The request body for t: its old size, the proof from it, the note as stored. */
static int request_body(struct round *r, const struct target *t, struct buffer *body)
{
	merkle_hash proof[MERKLE_MAX_PROOF];
	size_t proof_count = 0;
	if (t->old_size > 0 && t->old_size < r->size) {
		struct tlog_hash_reader hashes = {store_log_read_hashes, &r->reader};
		int rc = tlog_consistency_proof(&hashes, r->size, t->old_size, proof, &proof_count);
		if (rc)
			return rc;
	}
	buffer_reset(body);
	return translog_add_checkpoint_encode(t->old_size, proof, proof_count, r->note.data, r->note.len,
	                                      body);
}

/* Takes the cosignature of t's key out of a 200 answer's signature lines. */
static void take_cosignature(struct round *r, struct target *t, const uint8_t *lines, size_t len)
{
	struct buffer candidate;
	struct note *answered = NULL;
	buffer_init(&candidate);
	int rc = buffer_append(&candidate, r->note.data, r->note.len);
	if (rc == 0)
		rc = buffer_append(&candidate, lines, len);
	if (rc == 0 && len > 0)
		rc = note_parse(candidate.data, candidate.len, &answered);
	buffer_free(&candidate);
	if (rc || len == 0) {
		round_log(r, t, "the answer is not note signature lines");
		note_free(answered);
		return;
	}
	for (size_t i = r->parsed->signature_count; i < answered->signature_count && !t->cosigned; i++) {
		const struct note_signature *s = &answered->signatures[i];
		if (strcmp(s->name, t->key->name) != 0 || s->key_id != t->key->key_id)
			continue; /* another key's: ignored, as the spec says */
		struct buffer one;
		struct note *single = NULL;
		uint64_t timestamp = 0;
		buffer_init(&one);
		int verified = note_format(r->parsed->text, r->parsed->text_len, s, 1, &one) == 0 &&
		               note_parse(one.data, one.len, &single) == 0 &&
		               cosignature_verify(single, t->key, &timestamp) == 0;
		note_free(single);
		buffer_free(&one);
		if (!verified) {
			round_log(r, t, "its cosignature does not verify under the key pinned for it");
			continue;
		}
		r->added[r->added_count++] = *s;
		t->cosigned = true;
	}
	if (!t->cosigned)
		round_log(r, t, "the answer holds no cosignature by %s+%08x", t->key->name,
		          (unsigned)t->key->key_id);
	note_free(answered);
}

/* Counts an answer of t for the metrics. */
static void count_answer(struct round *r, const struct target *t, enum translog_witness_answer_kind kind)
{
	struct translog_cosigning *c = r->c;
	size_t row = t->member != SIZE_MAX ? t->member
	                                   : c->options.config->member_count +
	                                         (size_t)(t->hint - c->witnesses[r->namespace_index]);
	pthread_mutex_lock(&c->lock);
	c->figures.answers[row][kind]++;
	pthread_mutex_unlock(&c->lock);
}

/* Judges one answer to t (status, content type and body; status 0: no answer, reason why). */
static void take_answer(struct round *r, struct target *t, long status, const char *content_type,
                        const uint8_t *body, size_t len, const char *reason)
{
	bool first = !t->retry;
	t->retry = false;
	if (status == 200) {
		t->hint->known = true;
		t->hint->size = r->size;
		take_cosignature(r, t, body, len);
		count_answer(r, t, t->cosigned ? TRANSLOG_ANSWER_COSIGNED : TRANSLOG_ANSWER_INVALID);
		return;
	}
	count_answer(r, t,
	             status == 409 ? TRANSLOG_ANSWER_CONFLICT
	             : status == 0 ? TRANSLOG_ANSWER_NO_ANSWER
	                           : TRANSLOG_ANSWER_REFUSED);
	if (status == 409) {
		uint64_t named = 0;
		if (strncmp(content_type, TRANSLOG_SIZE_CONTENT_TYPE,
		            sizeof TRANSLOG_SIZE_CONTENT_TYPE - 1) != 0 ||
		    len < 2 || len > SIZE_ANSWER_MAX || body[len - 1] != '\n' ||
		    decimal_parse((const char *)body, len - 1, &named) != 0) {
			round_log(r, t, "409 without a size");
			return;
		}
		t->hint->known = true;
		t->hint->size = named;
		if (named > r->size)
			round_log(r, t, "it has cosigned a tree of %llu entries, larger than this one",
			          (unsigned long long)named);
		else if (named == t->old_size)
			round_log(r, t,
			          "it refuses the tree head at its own size %llu: a fork, or its signer "
			          "refuses it",
			          (unsigned long long)named);
		else if (first)
			t->retry = true; /* once more, from the size it names */
		else
			round_log(r, t, "it names size %llu again after a retry", (unsigned long long)named);
		return;
	}
	if (status == 0)
		round_log(r, t, "%s", reason && *reason ? reason : "no answer");
	else
		round_log(r, t, "HTTP %ld%s%s", status, reason && *reason ? ": " : "", reason ? reason : "");
}

/* Sends to the members among the targets that are asked in this pass (those with old_size set
 * by the caller through `sending`), one broadcast per distinct old size. */
static void ask_members(struct round *r, const bool *sending)
{
	const struct peer_client *peers = r->c->options.peers;
	const struct config *config = r->c->options.config;
	bool done[CONFIG_MAX_MEMBERS + CONFIG_MAX_WITNESSES] = {false};
	if (!peers)
		return;
	for (size_t i = 0; i < r->target_count; i++) {
		struct target *t = &r->targets[i];
		if (!sending[i] || done[i] || t->member == SIZE_MAX)
			continue;
		uint8_t mask[CONFIG_MAX_MEMBERS] = {0};
		for (size_t j = i; j < r->target_count; j++)
			if (sending[j] && !done[j] && r->targets[j].member != SIZE_MAX &&
			    r->targets[j].old_size == t->old_size) {
				mask[r->targets[j].member] = 1;
				done[j] = true;
			}
		struct buffer body;
		buffer_init(&body);
		int rc = request_body(r, t, &body);
		if (rc) {
			round_log(r, t, "no request from size %llu: %s", (unsigned long long)t->old_size,
			          dirauth_strerror(rc));
			buffer_free(&body);
			continue;
		}
		struct peer_call call = {.operation = PEER_ADD_CHECKPOINT,
		                         .namespace_name = r->name,
		                         .body = body.data,
		                         .body_len = body.len};
		struct peers_broadcast_options options = {.targets = mask};
		struct peer_answer answers[CONFIG_MAX_MEMBERS];
		for (size_t m = 0; m < config->member_count; m++)
			peer_answer_init(&answers[m]);
		rc = peers_broadcast(peers, &call, &options, answers);
		buffer_free(&body);
		for (size_t j = 0; j < r->target_count; j++) {
			struct target *u = &r->targets[j];
			if (u->member == SIZE_MAX || !mask[u->member])
				continue;
			const struct peer_answer *a = &answers[u->member];
			u->asked = true;
			r->outcome->asked++;
			if (rc)
				take_answer(r, u, 0, "", NULL, 0, dirauth_strerror(rc));
			else
				take_answer(r, u, a->transport == PEER_TRANSPORT_ANSWERED ? a->status : 0,
				            a->content_type, a->body.data, a->body.len, a->reason);
		}
		peer_answers_free(answers, config->member_count);
	}
}

/* Sends to one outside witness. */
static void ask_witness(struct round *r, struct target *t)
{
	static const char *const headers[] = {"Content-Type: text/plain; charset=utf-8", NULL};
	const struct config *config = r->c->options.config;
	struct buffer body, url;
	struct net_response response;
	buffer_init(&body);
	buffer_init(&url);
	net_response_init(&response);
	int rc = request_body(r, t, &body);
	if (rc == 0)
		rc = buffer_appendf(&url, "%s/add-checkpoint", t->url);
	if (rc) {
		round_log(r, t, "no request: %s", dirauth_strerror(rc));
	} else {
		struct net_request request = {
		    .method = "POST",
		    .url = (const char *)url.data,
		    .headers = headers,
		    .body = body.data,
		    .body_len = body.len,
		    .max_response_bytes = TRANSLOG_WITNESS_ANSWER_MAX,
		    .connect_timeout_ms = config->peers.connect_timeout_seconds * 1000u,
		    .total_timeout_ms = config->peers.timeout_seconds * 1000u,
		};
		t->asked = true;
		r->outcome->asked++;
		rc = net_perform(&request, &response);
		if (rc)
			take_answer(r, t, 0, "", NULL, 0,
			            response.error[0] ? response.error : dirauth_strerror(rc));
		else
			take_answer(r, t, response.status, response.content_type, response.body.data,
			            response.body.len, "");
	}
	net_response_free(&response);
	buffer_free(&url);
	buffer_free(&body);
}

/* Stores the note with the cosignatures added. */
static int store_added(struct round *r)
{
	struct note_signature *all = calloc(r->parsed->signature_count + r->added_count, sizeof *all);
	struct buffer merged;
	if (!all)
		return DIRAUTH_ERR_NOMEM;
	memcpy(all, r->parsed->signatures, r->parsed->signature_count * sizeof *all);
	memcpy(all + r->parsed->signature_count, r->added, r->added_count * sizeof *all);
	buffer_init(&merged);
	int rc = note_format(r->parsed->text, r->parsed->text_len, all,
	                     r->parsed->signature_count + r->added_count, &merged);
	free(all);
	if (rc == 0)
		rc = store_log_checkpoint_put(r->c->options.store, r->name, merged.data, merged.len);
	if (rc == 0) {
		struct note *reparsed = NULL;
		rc = note_parse(merged.data, merged.len, &reparsed);
		if (rc == 0) {
			note_free(r->parsed);
			r->parsed = reparsed;
			buffer_reset(&r->note);
			rc = buffer_append(&r->note, merged.data, merged.len);
		}
		r->outcome->added = r->added_count;
	} else if (rc == DIRAUTH_ERR_ROLLBACK) {
		rc = 0; /* a newer checkpoint was stored meanwhile: its own round follows */
	}
	buffer_free(&merged);
	return rc;
}

/* This authority's cosignature key, from its signer. */
static int own_cosigner(struct translog_cosigning *c, struct note_verifier *out, bool *has)
{
	struct buffer payload;
	struct translog_signer_keys keys;
	char why[SIGNER_DETAIL_MAX + 1];
	buffer_init(&payload);
	int rc =
	    signer_client_query(c->options.signer, SIGNER_OP_GET_KEYS, NULL, 0, &payload, why, sizeof why);
	if (rc == 0)
		rc = translog_signer_keys_parse(payload.data, payload.len, &keys);
	buffer_free(&payload);
	if (rc)
		return rc == DIRAUTH_ERR_UNAVAILABLE ? rc : DIRAUTH_ERR_SYNTAX;
	*has = keys.has_cosigner;
	if (keys.has_cosigner)
		*out = keys.cosigner;
	return 0;
}

/* Counts the authorities' cosignatures and publishes the checkpoint once they make the quorum. */
static int count_and_publish(struct round *r, const struct note_verifier *keys, size_t key_count)
{
	r->outcome->cosigned = translog_cosigned_count(r->parsed, keys, key_count, NULL);
	if (r->outcome->cosigned < r->outcome->quorum)
		return 0;
	int rc = store_log_publish(r->c->options.store, r->name, r->size);
	if (rc == DIRAUTH_ERR_ROLLBACK)
		return 0;
	if (rc == 0)
		r->outcome->published = 1;
	return rc;
}

static int run_round(struct round *r)
{
	struct translog_cosigning *c = r->c;
	const struct config *config = c->options.config;
	struct note_verifier own, keys[CONFIG_MAX_MEMBERS];
	size_t members[CONFIG_MAX_MEMBERS];
	bool has_own = false;
	int rc = store_log_checkpoint(c->options.store, r->name, &r->note, &r->size);
	if (rc == DIRAUTH_ERR_NOT_FOUND)
		return 0;
	if (rc)
		return rc;
	r->outcome->has_checkpoint = 1;
	r->outcome->size = r->size;
	if ((rc = note_parse(r->note.data, r->note.len, &r->parsed)) != 0)
		return rc == DIRAUTH_ERR_NOMEM ? rc : DIRAUTH_ERR_STORE;
	if ((rc = own_cosigner(c, &own, &has_own)) != 0)
		return rc;
	size_t key_count = translog_cosigners(config, has_own ? &own : NULL, keys, members);
	uint8_t cosigned[CONFIG_MAX_MEMBERS];
	translog_cosigned_count(r->parsed, keys, key_count, cosigned);
	if ((rc = count_and_publish(r, keys, key_count)) != 0)
		return rc;

	/* Who is asked. */
	uint64_t published = 0;
	if (store_log_published(c->options.store, r->name, &published) != 0 || published > r->size)
		published = 0;
	for (size_t i = 0; i < key_count; i++) {
		if (members[i] == config->self_index || cosigned[i] || !c->options.peers)
			continue;
		struct target *t = &r->targets[r->target_count++];
		memset(t, 0, sizeof *t);
		t->name = config->members[members[i]].name;
		t->key = &config->members[members[i]].cosigner;
		t->member = members[i];
		t->hint = &c->members[r->namespace_index][members[i]];
	}
	for (size_t w = 0; w < config->peers.witness_count; w++) {
		const struct config_witness *witness = &config->peers.witnesses[w];
		uint64_t timestamp = 0;
		if (cosignature_verify(r->parsed, &witness->key, &timestamp) == 0)
			continue;
		struct target *t = &r->targets[r->target_count++];
		memset(t, 0, sizeof *t);
		t->name = witness->name;
		t->key = &witness->key;
		t->member = SIZE_MAX;
		t->url = witness->url;
		t->hint = &c->witnesses[r->namespace_index][w];
	}
	if (r->target_count == 0)
		return 0;
	if ((rc = store_log_reader_open(c->options.store, r->name, &r->reader)) != 0)
		return rc;
	if (r->reader.tree_size < r->size)
		return DIRAUTH_ERR_STORE; /* a checkpoint of a tree the store does not have */
	r->reader.tree_size = r->size;

	/* Two passes: everyone, then once more those whose 409 named another size. */
	for (int pass = 0; pass < 2; pass++) {
		bool sending[CONFIG_MAX_MEMBERS + CONFIG_MAX_WITNESSES] = {false};
		size_t count = 0;
		for (size_t i = 0; i < r->target_count; i++) {
			struct target *t = &r->targets[i];
			if (pass == 0) {
				t->old_size =
				    t->hint->known && t->hint->size <= r->size ? t->hint->size : published;
				sending[i] = true;
			} else if (t->retry) {
				t->old_size = t->hint->size;
				sending[i] = true;
			}
			count += sending[i];
		}
		if (count == 0)
			break;
		ask_members(r, sending);
		for (size_t i = 0; i < r->target_count; i++)
			if (sending[i] && r->targets[i].member == SIZE_MAX)
				ask_witness(r, &r->targets[i]);
	}
	for (size_t i = 0; i < r->target_count; i++)
		if (!r->targets[i].cosigned)
			r->outcome->missing = 1;
	if (r->added_count > 0 && (rc = store_added(r)) != 0)
		return rc;
	return count_and_publish(r, keys, key_count);
}

int translog_cosigning_round(struct translog_cosigning *c, size_t namespace_index,
                             struct translog_cosigning_outcome *outcome)
{
	struct translog_cosigning_outcome ignored;
	if (!outcome)
		outcome = &ignored;
	memset(outcome, 0, sizeof *outcome);
	if (!c || namespace_index >= c->options.config->namespace_count)
		return DIRAUTH_ERR_INTERNAL;
	outcome->quorum = translog_quorum(c->options.config);
	struct round *r = calloc(1, sizeof *r);
	if (!r)
		return DIRAUTH_ERR_NOMEM;
	r->c = c;
	r->namespace_index = namespace_index;
	r->name = c->options.config->namespaces[namespace_index].name;
	r->outcome = outcome;
	buffer_init(&r->note);
	int rc = run_round(r);
	pthread_mutex_lock(&c->lock);
	if (rc == 0 && outcome->has_checkpoint) /* counted: every round that returns 0 counts */
		c->figures.cosigners[namespace_index] = outcome->cosigned;
	c->figures.added[namespace_index] += outcome->added;
	pthread_mutex_unlock(&c->lock);
	note_free(r->parsed);
	buffer_free(&r->note);
	free(r);
	return rc;
}

const char *translog_witness_answer_name(enum translog_witness_answer_kind kind)
{
	static const char *const names[TRANSLOG_ANSWER_COUNT] = {"cosigned", "invalid", "conflict", "refused",
	                                                         "no_answer"};
	return (unsigned)kind < TRANSLOG_ANSWER_COUNT ? names[kind] : "unknown";
}

void translog_cosigning_statistics(struct translog_cosigning *c, struct translog_cosigning_statistics *out)
{
	memset(out, 0, sizeof *out);
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	*out = c->figures;
	pthread_mutex_unlock(&c->lock);
	out->quorum = translog_quorum(c->options.config);
}

/* ---- the thread ---- */

static void *cosigning_main(void *context)
{
	struct translog_cosigning *c = context;
	const struct config *config = c->options.config;
	pthread_mutex_lock(&c->lock);
	while (!c->stopping) {
		uint64_t now = monotonic_ms(), due = 0, next = 0;
		for (size_t i = 0; i < config->namespace_count; i++) {
			if (!c->retry_at_ms[i])
				continue;
			if (c->retry_at_ms[i] <= now)
				due |= (uint64_t)1 << i;
			else if (!next || c->retry_at_ms[i] < next)
				next = c->retry_at_ms[i];
		}
		uint64_t work = c->kicked | due;
		if (!work) {
			if (next) {
				struct timespec until = {.tv_sec = (time_t)(next / 1000),
				                         .tv_nsec = (long)(next % 1000) * 1000000L};
				pthread_cond_timedwait(&c->wake, &c->lock, &until);
			} else {
				pthread_cond_wait(&c->wake, &c->lock);
			}
			continue;
		}
		c->kicked = 0;
		for (size_t i = 0; i < config->namespace_count; i++)
			if (work & ((uint64_t)1 << i))
				c->retry_at_ms[i] = 0;
		pthread_mutex_unlock(&c->lock);
		for (size_t i = 0; i < config->namespace_count; i++) {
			if (!(work & ((uint64_t)1 << i)))
				continue;
			struct translog_cosigning_outcome outcome;
			int rc = translog_cosigning_round(c, i, &outcome);
			pthread_mutex_lock(&c->lock);
			bool again = rc == DIRAUTH_ERR_UNAVAILABLE || (rc == 0 && outcome.missing);
			if (again && c->retry_size[i] != outcome.size) {
				c->retry_size[i] = outcome.size;
				c->attempts[i] = 0;
			}
			if (again && !c->retry_at_ms[i]) {
				uint64_t wait = TRANSLOG_COSIGNING_RETRY_SECONDS;
				for (unsigned n = c->attempts[i];
				     n > 0 && wait < TRANSLOG_COSIGNING_RETRY_MAX_SECONDS; n--)
					wait *= 2;
				if (wait > TRANSLOG_COSIGNING_RETRY_MAX_SECONDS)
					wait = TRANSLOG_COSIGNING_RETRY_MAX_SECONDS;
				c->attempts[i]++;
				c->retry_at_ms[i] = monotonic_ms() + wait * 1000u;
			}
			pthread_mutex_unlock(&c->lock);
			if (rc && rc != DIRAUTH_ERR_UNAVAILABLE) {
				logline_write(c->options.log, "dirauthd",
				              logline_epoch_now(c->options.clock, &config->epoch),
				              config->namespaces[i].name, "collecting cosignatures: %s",
				              dirauth_strerror(rc));
			}
		}
		pthread_mutex_lock(&c->lock);
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

int translog_cosigning_new(const struct translog_cosigning_options *options, struct translog_cosigning **out)
{
	*out = NULL;
	if (!options || !options->config || !options->store || !options->signer)
		return DIRAUTH_ERR_INTERNAL;
	struct translog_cosigning *c = calloc(1, sizeof *c);
	if (!c)
		return DIRAUTH_ERR_NOMEM;
	c->options = *options;
	pthread_condattr_t attributes;
	pthread_condattr_init(&attributes);
	pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC);
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->wake, &attributes);
	pthread_condattr_destroy(&attributes);
	if (pthread_create(&c->thread, NULL, cosigning_main, c) != 0) {
		pthread_cond_destroy(&c->wake);
		pthread_mutex_destroy(&c->lock);
		free(c);
		return DIRAUTH_ERR_INTERNAL;
	}
	c->thread_started = true;
	*out = c;
	return 0;
}

void translog_cosigning_kick(struct translog_cosigning *c, size_t namespace_index)
{
	if (!c || namespace_index >= c->options.config->namespace_count)
		return;
	pthread_mutex_lock(&c->lock);
	c->kicked |= (uint64_t)1 << namespace_index;
	pthread_cond_signal(&c->wake);
	pthread_mutex_unlock(&c->lock);
}

void translog_cosigning_free(struct translog_cosigning *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	c->stopping = true;
	pthread_cond_signal(&c->wake);
	pthread_mutex_unlock(&c->lock);
	if (c->thread_started)
		pthread_join(c->thread, NULL);
	pthread_cond_destroy(&c->wake);
	pthread_mutex_destroy(&c->lock);
	free(c);
}
