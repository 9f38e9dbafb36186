/*
 * translog.c: catching a namespace's log up with its published headers (translog.h).
 *
 * Order of a round, and why. The new leaves' hashes are computed in memory over the stored ones
 * (an overlay: per hash level, the hashes past the stored tree, which tlog_append fills in
 * order), so that the tree head exists before anything is written. The signer is asked first:
 * its ledger decides whether this tree head may be signed at all (it must extend the origin's
 * last checkpoint, whichever of the log key and the cosignature key made it), and a refusal then
 * leaves the store untouched. Once both signatures are in hand and verify, the leaves are
 * appended, each in its own store transaction, and the checkpoint note is stored last. A crash
 * between any two of these steps leaves a log of published headers only, in epoch order, whose
 * next round appends the same leaves and reaches the same tree head, which the signer signs
 * again as a repeat. The pause points name these steps for the crash tests:
 *   translog-signed        both signatures made, nothing appended
 *   translog-appending     the first of several leaves appended
 *   translog-appended      every leaf appended, the checkpoint not stored
 *   translog-checkpointed  the checkpoint stored
 */
#include "server/tlog/translog.h"

#include "faults/faults.h"
#include "schema/checkpoint.h"
#include "schema/encoding.h"
#include "base/error.h"
#include "schema/note.h"
#include "server/store/snapshots.h"
#include "server/store/tlog_table.h"
#include "tlog/policy.h"
#include "tlog/tree.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Hashes one round can add at each level: level l gets at most (TRANSLOG_ROUND_MAX >> l) + 1. */
#define OVERLAY_LEVELS   64
#define OVERLAY_CAPACITY (2 * TRANSLOG_ROUND_MAX + OVERLAY_LEVELS)

/* The stored tree of base.tree_size leaves, and the hashes of the leaves appended past it in
 * memory: those of level l are indexes (stored >> l) .. (size >> l) − 1, kept at offset[l]. */
struct overlay {
	struct store_log_reader base;
	uint64_t stored; /* leaves in the store */
	uint64_t size;   /* leaves with the ones in memory */
	size_t offset[OVERLAY_LEVELS];
	size_t count[OVERLAY_LEVELS];
	merkle_hash hashes[OVERLAY_CAPACITY];
};

/* Room for the hashes of level in one round. */
static size_t overlay_room(unsigned level)
{
	return ((size_t)TRANSLOG_ROUND_MAX >> level) + 1;
}

static void overlay_init(struct overlay *o, const struct store_log_reader *base)
{
	size_t offset = 0;
	o->base = *base;
	o->stored = base->tree_size;
	o->size = base->tree_size;
	for (unsigned level = 0; level < OVERLAY_LEVELS; level++) {
		o->offset[level] = offset;
		o->count[level] = 0;
		offset += overlay_room(level);
	}
}

/* A tlog_read_hashes over the overlay (the context). */
static int overlay_read(void *context, uint8_t level, uint64_t index, uint64_t count, merkle_hash *out)
{
	struct overlay *o = context;
	if (level >= OVERLAY_LEVELS)
		return DIRAUTH_ERR_NOT_FOUND;
	uint64_t split = o->stored >> level;
	uint64_t available = split + o->count[level];
	if (count == 0 || index >= available || count > available - index)
		return DIRAUTH_ERR_NOT_FOUND;
	if (index < split) {
		uint64_t from_store = split - index < count ? split - index : count;
		int rc = store_log_read_hashes(&o->base, level, index, from_store, out);
		if (rc)
			return rc;
		index += from_store;
		count -= from_store;
		out += from_store;
	}
	if (count)
		memcpy(out, o->hashes[o->offset[level] + (index - split)], (size_t)count * MERKLE_HASH_SIZE);
	return 0;
}

/* Adds the records of one appended leaf. Returns 0, or DIRAUTH_ERR_INTERNAL when a record is
 * not the next hash of its level. */
static int overlay_add(struct overlay *o, const struct tlog_record *records, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		unsigned level = records[i].level;
		if (level >= OVERLAY_LEVELS || records[i].index != (o->stored >> level) + o->count[level] ||
		    o->count[level] == overlay_room(level))
			return DIRAUTH_ERR_INTERNAL;
		memcpy(o->hashes[o->offset[level] + o->count[level]], records[i].hash, MERKLE_HASH_SIZE);
		o->count[level]++;
	}
	o->size++;
	return 0;
}

/* One leaf waiting to be appended: its epoch, its bytes, its records. */
struct pending {
	uint64_t epoch;
	struct buffer leaf;
	struct store_log_hash hashes[STORE_LOG_APPEND_MAX];
	size_t hash_count;
};

struct round {
	struct store *store;
	struct signer_client *signer;
	const char *name;
	const char *origin;
	struct translog_outcome *outcome;
	struct overlay *overlay;
	struct pending *pending; /* TRANSLOG_ROUND_MAX */
	size_t pending_count;
};

static void outcome_detail(struct translog_outcome *outcome, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
static void outcome_detail(struct translog_outcome *outcome, const char *format, ...)
{
	va_list args;
	va_start(args, format);
	vsnprintf(outcome->detail, sizeof outcome->detail, format, args);
	va_end(args);
}

/* The signer's keys for this log: a log key named by the origin and a cosignature key. */
static int signer_keys(struct round *r, struct translog_signer_keys *keys)
{
	struct buffer payload;
	char why[SIGNER_DETAIL_MAX + 1] = "";
	buffer_init(&payload);
	int rc = signer_client_query(r->signer, SIGNER_OP_GET_KEYS, NULL, 0, &payload, why, sizeof why);
	if (rc == 0 && (rc = translog_signer_keys_parse(payload.data, payload.len, keys)) != 0)
		snprintf(why, sizeof why, "the signer's key list does not parse");
	buffer_free(&payload);
	if (rc) {
		outcome_detail(r->outcome, "the signer's keys: %s", why);
		return rc;
	}
	if (!keys->has_log_key || strcmp(keys->log_key.name, r->origin) != 0) {
		outcome_detail(r->outcome, "this authority's signer holds no log key named %s", r->origin);
		return DIRAUTH_ERR_CONFIG;
	}
	if (!keys->has_cosigner) {
		outcome_detail(r->outcome, "this authority's signer holds no cosignature key");
		return DIRAUTH_ERR_CONFIG;
	}
	return 0;
}

/* The tree head at the signer that the new one must extend: *size 0 when it holds none. */
static int signer_latest(struct round *r, uint64_t *size, merkle_hash root)
{
	struct buffer payload;
	struct translog_signer_state state;
	char why[SIGNER_DETAIL_MAX + 1] = "";
	buffer_init(&payload);
	int rc = signer_client_query(r->signer, SIGNER_OP_CHECKPOINT_STATE, (const uint8_t *)r->origin,
	                             strlen(r->origin), &payload, why, sizeof why);
	if (rc == 0 && (rc = translog_signer_state_parse(payload.data, payload.len, &state)) != 0)
		snprintf(why, sizeof why, "its answer does not parse");
	buffer_free(&payload);
	if (rc == 0) {
		rc = translog_signer_state_latest(&state, size, root);
		if (rc == DIRAUTH_ERR_NOT_FOUND) {
			*size = 0;
			rc = 0;
		} else if (rc) {
			snprintf(why, sizeof why, "it holds two tree heads of one size");
		}
	}
	if (rc)
		outcome_detail(r->outcome, "the signer's checkpoint state of %s: %s", r->origin, why);
	return rc;
}

/* Reads the published headers the log lacks, up to TRANSLOG_ROUND_MAX, and computes their
 * hashes in the overlay. */
static int collect(struct round *r, const struct store_log_state *state)
{
	struct buffer header;
	uint64_t after = state->last_epoch;
	const uint64_t *from = state->size > 0 ? &after : NULL;
	int rc = 0;
	buffer_init(&header);
	while (r->pending_count < TRANSLOG_ROUND_MAX) {
		struct pending *p = &r->pending[r->pending_count];
		struct note *note = NULL;
		struct tlog_record records[TLOG_APPEND_MAX];
		size_t record_count = 0;
		merkle_hash leaf_hash;
		uint64_t epoch;
		rc = store_log_next_published(r->store, r->name, from, &epoch);
		if (rc == DIRAUTH_ERR_NOT_FOUND) {
			rc = 0;
			break;
		}
		if (rc || (rc = store_snapshot_get(r->store, r->name, epoch, &header, NULL)) != 0)
			break;
		if ((rc = note_parse(header.data, header.len, &note)) != 0) {
			outcome_detail(r->outcome, "the published header of epoch %llu does not parse",
			               (unsigned long long)epoch);
			rc = DIRAUTH_ERR_STORE;
			break;
		}
		p->epoch = epoch;
		buffer_reset(&p->leaf);
		rc = buffer_append(&p->leaf, note->text, note->text_len);
		note_free(note);
		if (rc || (rc = merkle_leaf_hash(p->leaf.data, p->leaf.len, leaf_hash)) != 0)
			break;
		struct tlog_hash_reader reader = {overlay_read, r->overlay};
		if ((rc = tlog_append(&reader, r->overlay->size, leaf_hash, records, &record_count)) != 0 ||
		    (rc = overlay_add(r->overlay, records, record_count)) != 0)
			break;
		for (size_t i = 0; i < record_count; i++) {
			p->hashes[i].level = records[i].level;
			p->hashes[i].index = records[i].index;
			memcpy(p->hashes[i].hash, records[i].hash, MERKLE_HASH_SIZE);
		}
		p->hash_count = record_count;
		r->pending_count++;
		after = epoch;
		from = &after;
	}
	buffer_free(&header);
	return rc;
}

/* Has the signer sign and cosign the checkpoint of the overlay's tree, and formats the note. */
static int sign_checkpoint(struct round *r, const struct translog_signer_keys *keys, struct buffer *note)
{
	struct tlog_hash_reader reader = {overlay_read, r->overlay};
	struct checkpoint checkpoint;
	struct note_signature signatures[2];
	struct buffer text;
	merkle_hash signer_root, ours, proof[MERKLE_MAX_PROOF];
	size_t proof_count = 0;
	uint64_t signer_size = 0, size = r->overlay->size;
	char why[SIGNER_DETAIL_MAX + 1] = "";
	int rc;

	memset(&checkpoint, 0, sizeof checkpoint);
	snprintf(checkpoint.origin, sizeof checkpoint.origin, "%s", r->origin);
	checkpoint.tree_size = size;
	if ((rc = tlog_tree_root(&reader, size, checkpoint.root)) != 0 ||
	    (rc = signer_latest(r, &signer_size, signer_root)) != 0)
		return rc;
	if (signer_size > size) {
		outcome_detail(r->outcome,
		               "the signer has checkpointed %llu entries of %s, more than the %llu headers "
		               "published here",
		               (unsigned long long)signer_size, r->origin, (unsigned long long)size);
		return DIRAUTH_ERR_ROLLBACK;
	}
	if (signer_size > 0) {
		if ((rc = tlog_tree_root(&reader, signer_size, ours)) != 0)
			return rc;
		if (memcmp(ours, signer_root, MERKLE_HASH_SIZE) != 0) {
			outcome_detail(r->outcome,
			               "the signer's checkpoint of %llu entries of %s is not the tree of the "
			               "headers published here",
			               (unsigned long long)signer_size, r->origin);
			return DIRAUTH_ERR_MISMATCH;
		}
		if (signer_size < size &&
		    (rc = tlog_consistency_proof(&reader, size, signer_size, proof, &proof_count)) != 0)
			return rc;
	}
	buffer_init(&text);
	if ((rc = checkpoint_encode(&checkpoint, &text)) != 0)
		goto cleanup;
	rc = signer_client_sign(r->signer, SIGNER_OP_SIGN_CHECKPOINT, text.data, text.len, signer_size, proof,
	                        proof_count, &signatures[0], why, sizeof why);
	if (rc) {
		outcome_detail(r->outcome, "the signer did not sign the checkpoint of %llu entries: %s",
		               (unsigned long long)size, why);
		goto cleanup;
	}
	/* The ledger now holds this tree head: cosigning it is a repeat. */
	rc = signer_client_sign(r->signer, SIGNER_OP_COSIGN_CHECKPOINT, text.data, text.len, size, NULL, 0,
	                        &signatures[1], why, sizeof why);
	if (rc) {
		outcome_detail(r->outcome, "the signer did not cosign the checkpoint of %llu entries: %s",
		               (unsigned long long)size, why);
		goto cleanup;
	}
	buffer_reset(note);
	if ((rc = note_format(text.data, text.len, signatures, 2, note)) != 0)
		goto cleanup;

	/* What is stored and served is checked as any verifier will check it. */
	struct note *parsed = NULL;
	struct checkpoint verified;
	struct tlog_policy policy = {
	    .origin = r->origin,
	    .log_key = &keys->log_key,
	    .cosigners = &keys->cosigner,
	    .cosigner_count = 1,
	    .quorum = 1,
	};
	rc = note_parse(note->data, note->len, &parsed);
	if (rc == 0)
		rc = tlog_checkpoint_verify(parsed, &policy, &verified, NULL, NULL);
	note_free(parsed);
	if (rc) {
		outcome_detail(r->outcome, "the checkpoint the signer signed does not verify: %s",
		               dirauth_strerror(rc));
		rc = rc == DIRAUTH_ERR_NOMEM ? rc : DIRAUTH_ERR_SIGNATURE;
	}
cleanup:
	buffer_free(&text);
	return rc;
}

/* One round: up to TRANSLOG_ROUND_MAX leaves under one checkpoint. *more is set when the round
 * was full and more headers may wait. */
static int catch_up_round(struct round *r, int *more)
{
	struct store_log_state state;
	struct store_log_reader base;
	struct translog_signer_keys keys;
	struct buffer note;
	int rc;

	*more = 0;
	r->pending_count = 0;
	if ((rc = store_log_state(r->store, r->name, &state)) != 0)
		return rc;
	rc = store_log_reader_open(r->store, r->name, &base);
	if (rc == DIRAUTH_ERR_NOT_FOUND)
		return 0; /* nothing was ever published in this namespace */
	if (rc)
		return rc;
	base.tree_size = state.size;
	overlay_init(r->overlay, &base);
	if ((rc = collect(r, &state)) != 0)
		return rc;
	uint64_t size = r->overlay->size;
	if (size == 0 || (r->pending_count == 0 && state.has_checkpoint && state.checkpoint_size == size))
		return 0;
	if ((rc = signer_keys(r, &keys)) != 0)
		return rc;
	buffer_init(&note);
	if ((rc = sign_checkpoint(r, &keys, &note)) != 0)
		goto cleanup;
	fault_point("translog-signed");
	for (size_t i = 0; i < r->pending_count; i++) {
		const struct pending *p = &r->pending[i];
		rc = store_log_append(r->store, r->name, p->epoch, p->leaf.data, p->leaf.len, p->hashes,
		                      p->hash_count);
		if (rc) {
			outcome_detail(r->outcome, "appending the header of epoch %llu: %s",
			               (unsigned long long)p->epoch, dirauth_strerror(rc));
			goto cleanup;
		}
		r->outcome->appended++;
		if (i == 0 && r->pending_count > 1)
			fault_point("translog-appending");
	}
	fault_point("translog-appended");
	if ((rc = store_log_checkpoint_put(r->store, r->name, note.data, note.len)) != 0) {
		outcome_detail(r->outcome, "storing the checkpoint of %llu entries: %s",
		               (unsigned long long)size, dirauth_strerror(rc));
		goto cleanup;
	}
	fault_point("translog-checkpointed");
	*more = r->pending_count == TRANSLOG_ROUND_MAX;
cleanup:
	buffer_free(&note);
	return rc;
}

int translog_catch_up(struct store *store, const struct config *config, struct signer_client *signer,
                      size_t namespace_index, struct translog_outcome *outcome)
{
	struct translog_outcome ignored;
	struct round r;
	int rc, more = 0;

	if (!outcome)
		outcome = &ignored;
	memset(outcome, 0, sizeof *outcome);
	if (!store || !config || !signer || namespace_index >= config->namespace_count)
		return DIRAUTH_ERR_INTERNAL;
	memset(&r, 0, sizeof r);
	r.store = store;
	r.signer = signer;
	r.name = config->namespaces[namespace_index].name;
	r.origin = config->namespaces[namespace_index].origin;
	r.outcome = outcome;
	r.overlay = malloc(sizeof *r.overlay);
	r.pending = calloc(TRANSLOG_ROUND_MAX, sizeof *r.pending);
	if (!r.overlay || !r.pending) {
		rc = DIRAUTH_ERR_NOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < TRANSLOG_ROUND_MAX; i++)
		buffer_init(&r.pending[i].leaf);
	do
		rc = catch_up_round(&r, &more);
	while (rc == 0 && more);
cleanup:
	if (r.pending)
		for (size_t i = 0; i < TRANSLOG_ROUND_MAX; i++)
			buffer_free(&r.pending[i].leaf);
	free(r.pending);
	free(r.overlay);
	struct store_log_state state;
	if (store && store_log_state(store, r.name ? r.name : "", &state) == 0) {
		outcome->tree_size = state.size;
		outcome->has_checkpoint = state.has_checkpoint;
		outcome->checkpoint_size = state.checkpoint_size;
	}
	if (rc && !outcome->detail[0])
		outcome_detail(outcome, "%s", dirauth_strerror(rc));
	return rc;
}
