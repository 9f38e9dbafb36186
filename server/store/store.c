/*
 * store.c: dirauthd's durable state, on kv/ (LMDB underneath), and its body files.
 *
 * Databases of the one environment (integers big-endian and fixed-width; every length is
 * written and checked on reading, so a damaged record is DIRAUTH_ERR_STORE, never read past its
 * end; "ns" is a namespace's u16 id, assigned at its first use and kept in namespaces):
 *   meta            "format" -> u32 STORE_FORMAT; "sealed" -> u64; "next_ns" -> u16; "next_key" -> u32;
 *                   "next_slot" -> u64
 *   namespaces      name -> ns
 *   provider_keys   verifier key text -> u32 ref, and 0x00 ref -> verifier key text
 *   services        service id -> ns, u8 length + provider key name, u64 highest sequence
 *   endpoints       endpoint id -> service id
 *   records         ns, service id -> the latest registration (record_codec.h)
 *   previous        ns, service id, u64 stamp -> a version replaced by a later-stamped one,
 *                   kept while an epoch at or after the sealed one may hold it (epochs stamp up
 *                   to the next version's stamp - 1); a service's kept stamps rise towards the
 *                   stamp of its version in records
 *   replaced        u64 stamp of the next version, previous key -> empty: so that sealing at or
 *                   past that stamp finds what no epoch can hold any more
 *   expiry          u64 expires, u64 slot -> ns, service id: records by expiry, for sealing. A
 *                   record's slot (record_codec.h) is taken from next_slot when it is written, so
 *                   a batch's entries land together after those written before with the same
 *                   expiry; a record written before format 3 has none and its entry is
 *                   u64 expires, ns, service id -> empty
 *   usage           ns -> u64 records, u64 bytes, u64 endpoints: what records holds, for the
 *                   bounds (format 4; before it, without the endpoints)
 *   snapshots       ns, u64 epoch -> the signed header note
 *   bodies          ns, u64 epoch -> per encoding u64 size, 32 bytes sha256 (while the files exist)
 *   latest          ns -> u64 epoch
 * and those of votes.c (votes, signatures, consensus, evidence) and log.c (log_hashes,
 * log_leaves, log_epochs, log_state, log_checkpoints, log_partials, log_witness), described there,
 * and those of lifecycle.c (health, revocations, revocation_keys, deregistrations, statements).
 *
 * Body files: <path>/bodies/<namespace>/<epoch>.<encoding>, written under a ".part" name,
 * fsynced, renamed, and the directory fsynced before the header is stored; so a stored header
 * always has its files, and files without a header (a crash before the header) are removed at
 * open.
 *
 * Durability is kv's (LMDB's default): a commit returns after fsync. Submissions are
 * group-committed: callers queue a request; one committer thread takes up to max_batch
 * requests, applies each in a nested transaction of one write transaction (a refused request
 * leaves no trace while the others proceed, and a later request sees what an earlier one wrote),
 * commits once; the answerer thread reports every result once the commit is durable. When the
 * commit fails, nobody in the batch is told 0.
 *
 * The seal. The committer stamps each request with max(its epoch, sealed + 1, the highest stamp it
 * gave) while it holds the store's lock to take the batch, and marks the batch in flight;
 * store_seal raises sealed only when no batch is in flight, so no commit stamped at or below a
 * sealed epoch can land after the seal. Stamps never go down: two submitters whose clocks straddle
 * a cut-off may reach the committer in either order, and a request stamped E after one stamped
 * E + 1 would add to epoch E after a replacement stamped E + 1 had freed room under the
 * namespace's bounds, room that epoch E's view still fills with the replaced version. In stamp order, every
 * version an epoch's view holds was, when the last request stamped for that epoch was committed, a
 * namespace's latest, and so within the bounds checked then. A registration replacing a version
 * stamped for an earlier epoch moves that version to previous: that epoch's snapshot still holds
 * it, whether it is sealed yet or not. Several versions of one service can be kept at once (one per
 * epoch not yet sealed past), so that a version replaced before its epoch is sealed does not take
 * the sealed epoch's version with it.
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include "server/store/store.h"

#include "server/store/internal.h"

#include "kv/kv.h"
#include "schema/crypto.h"
#include "schema/error.h"
#include "schema/note.h"
#include "schema/registration.h"
#include "server/store/record_codec.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- encoding ---- */

/* The provider key cache: ref -> verifier, loaded at open, grown as keys are interned. */
static int keys_cache_add(struct store *store, uint32_t ref, const struct note_verifier *key)
{
	if (ref == 0 || ref > store->key_count + 1)
		return ref <= store->key_count ? 0 : DIRAUTH_ERR_STORE;
	if (store->key_count == store->key_cap) {
		size_t cap = store->key_cap ? store->key_cap * 2 : 16;
		struct note_verifier *grown = realloc(store->keys, cap * sizeof *grown);
		if (!grown)
			return DIRAUTH_ERR_NOMEM;
		store->keys = grown;
		store->key_cap = cap;
	}
	store->keys[store->key_count++] = *key;
	return 0;
}

struct keys_context {
	struct store *store;
	struct kv_txn *t; /* the write transaction interning keys; NULL for lookups only */
};

static int keys_refresh(struct store *store);

static int keys_cached(struct store *store, uint32_t ref, struct note_verifier *out)
{
	pthread_mutex_lock(&store->keys_lock);
	int rc = ref >= 1 && ref <= store->key_count ? 0 : DIRAUTH_ERR_NOT_FOUND;
	if (!rc)
		*out = store->keys[ref - 1];
	pthread_mutex_unlock(&store->keys_lock);
	return rc;
}

/* A reader may meet a record committed a moment before the committer's keys_refresh, or after a
 * refresh that failed (no memory): a ref past the cache is then loaded before it is refused. */
static int keys_lookup(void *context, uint32_t ref, struct note_verifier *out)
{
	struct keys_context *k = context;
	if (keys_cached(k->store, ref, out) == 0)
		return 0;
	if (ref == 0 || k->t || keys_refresh(k->store) != 0)
		return DIRAUTH_ERR_STORE;
	return keys_cached(k->store, ref, out) == 0 ? 0 : DIRAUTH_ERR_STORE;
}

/* Finds key's ref, or records a new one in the write transaction. A new key enters the cache
 * only once its transaction commits (keys_commit); until then refs past the cache are pending. */
static int keys_intern(void *context, const struct note_verifier *key, uint32_t *ref)
{
	struct keys_context *k = context;
	struct store *store = k->store;
	char text[NOTE_VERIFIER_KEY_MAX + 1];
	struct kv_val value;
	note_verifier_format(key, text);
	size_t len = strlen(text);
	if (kv_txn_get(k->t, store->provider_keys, text, len, &value)) {
		if (value.len != 4)
			kv_txn_fail(k->t, DIRAUTH_ERR_STORE);
		*ref = (uint32_t)get_uint(value.data, 4);
		return k->t->rc;
	}
	if (k->t->rc)
		return k->t->rc;
	uint64_t next = 1;
	if (kv_txn_get(k->t, store->meta, "next_key", 8, &value))
		next = value.len == 4 ? get_uint(value.data, 4) : 0;
	if (next == 0 || next >= UINT32_MAX)
		kv_txn_fail(k->t, next ? DIRAUTH_ERR_FULL : DIRAUTH_ERR_STORE);
	uint8_t field[4], reverse[5];
	put_uint(field, next, 4);
	reverse[0] = 0;
	put_uint(reverse + 1, next, 4);
	kv_txn_put(k->t, store->provider_keys, text, len, field, 4);
	kv_txn_put(k->t, store->provider_keys, reverse, sizeof reverse, text, len);
	put_uint(field, next + 1, 4);
	kv_txn_put(k->t, store->meta, "next_key", 8, field, 4);
	*ref = (uint32_t)next;
	return k->t->rc;
}

/* After a commit: loads the keys the store holds beyond the cache. */
static int keys_refresh(struct store *store)
{
	struct kv_txn t;
	struct kv_val value;
	int rc = 0;
	pthread_mutex_lock(&store->keys_lock);
	kv_txn_begin(store->env, &t, KV_READ);
	for (;;) {
		uint8_t reverse[5];
		uint32_t ref = (uint32_t)store->key_count + 1;
		reverse[0] = 0;
		put_uint(reverse + 1, ref, 4);
		if (!kv_txn_get(&t, store->provider_keys, reverse, sizeof reverse, &value))
			break;
		struct note_verifier key;
		if (note_verifier_parse((const char *)value.data, value.len, &key) != 0 ||
		    (rc = keys_cache_add(store, ref, &key)) != 0) {
			rc = rc ? rc : DIRAUTH_ERR_STORE;
			break;
		}
	}
	if (!rc)
		rc = t.rc;
	kv_txn_abort(&t);
	pthread_mutex_unlock(&store->keys_lock);
	return rc;
}

/* ---- usage counters ---- */

static void usage_get(struct kv_txn *t, struct store *store, uint16_t ns, struct store_namespace_usage *out)
{
	uint8_t key[STORE_NS_LEN];
	struct kv_val value;
	put_uint(key, ns, STORE_NS_LEN);
	memset(out, 0, sizeof *out);
	if (kv_txn_get(t, store->usage, key, sizeof key, &value)) {
		if (value.len != STORE_USAGE_LEN) {
			kv_txn_fail(t, DIRAUTH_ERR_STORE);
			return;
		}
		out->records = get_uint(value.data, 8);
		out->bytes = get_uint(value.data + 8, 8);
		out->endpoints = get_uint(value.data + 16, 8);
	}
}

static void usage_put(struct kv_txn *t, struct store *store, uint16_t ns,
                      const struct store_namespace_usage *u)
{
	uint8_t key[STORE_NS_LEN], value[STORE_USAGE_LEN];
	put_uint(key, ns, STORE_NS_LEN);
	put_uint(value, u->records, 8);
	put_uint(value + 8, u->bytes, 8);
	put_uint(value + 16, u->endpoints, 8);
	kv_txn_put(t, store->usage, key, sizeof key, value, sizeof value);
}

/* ---- applying registrations (committer thread only) ---- */

bool store_service_decode(const struct kv_val *value, struct service_owner *out)
{
	if (value->len < STORE_NS_LEN + 1 + 8)
		return false;
	size_t name_len = value->data[STORE_NS_LEN];
	if (value->len != STORE_NS_LEN + 1 + name_len + 8)
		return false;
	out->ns = (uint16_t)get_uint(value->data, STORE_NS_LEN);
	memcpy(out->provider, value->data + STORE_NS_LEN + 1, name_len);
	out->provider[name_len] = 0;
	out->highest_sequence = get_uint(value->data + STORE_NS_LEN + 1 + name_len, 8);
	return true;
}

static bool over_refuse_line(struct store *store)
{
	struct kv_env_info info;
	size_t free = 0;
	if (kv_env_info(store->env, &info) != 0)
		return true;
	size_t line = info.map_size / 100 * store->refuse_percent;
	if (info.used <= line)
		return false; /* the file's high-water mark is under it: no need to walk the free list */
	/* The pages on the free list are written again before the file grows: only the rest is
	 * taken, so the line is crossed back down once expiry and replacements free pages. */
	return kv_env_free(store->env, &free) != 0 || info.used - free > line;
}

/* ---- kept versions ---- */

/* The stamps of one service's versions in previous, oldest first. */
struct kept_stamps {
	uint64_t *stamps;
	size_t count, cap;
};

static int kept_stamps_visit(void *context, struct kv_val key, struct kv_val value)
{
	(void)value;
	struct kept_stamps *k = context;
	if (key.len != STORE_KEPT_KEY_LEN)
		return DIRAUTH_ERR_STORE;
	if (k->count == k->cap) {
		size_t cap = k->cap ? k->cap * 2 : 8;
		uint64_t *grown = realloc(k->stamps, cap * sizeof *grown);
		if (!grown)
			return DIRAUTH_ERR_NOMEM;
		k->stamps = grown;
		k->cap = cap;
	}
	k->stamps[k->count++] = get_uint(key.data + STORE_RECORD_KEY_LEN, 8);
	return 0;
}

/* Drops the kept versions of record key stamped from or later, and makes the last one left end
 * at from (its replaced entry keyed by from); latest is the stamp of the version in records,
 * which ends the last kept one. from 0 drops them all. */
static void kept_trim(struct kv_txn *t, struct store *store, const uint8_t *key, uint64_t from,
                      uint64_t latest)
{
	struct kept_stamps k = {NULL, 0, 0};
	uint8_t kept[STORE_KEPT_KEY_LEN], index[STORE_REPLACED_LEN];
	int walked = kv_txn_walk_prefix(t, store->previous, key, STORE_RECORD_KEY_LEN, kept_stamps_visit, &k);
	if (walked < 0)
		kv_txn_fail(t, walked);
	for (size_t i = 0; i < k.count && !t->rc; i++) {
		uint64_t next = i + 1 < k.count ? k.stamps[i + 1] : latest;
		kept_key(kept, key, k.stamps[i]);
		if (k.stamps[i] < from && next <= from)
			continue;
		replaced_key(index, next, kept);
		kv_txn_delete(t, store->replaced, index, sizeof index);
		if (k.stamps[i] >= from) {
			kv_txn_delete(t, store->previous, kept, sizeof kept);
		} else {
			replaced_key(index, from, kept);
			kv_txn_put(t, store->replaced, index, sizeof index, "", 0);
		}
	}
	free(k.stamps);
}

/* The kept version of a service that epoch holds: the last stamped at or before it. */
struct kept_pick {
	uint64_t epoch;
	struct kv_val value;
	bool found;
};

static int kept_pick_visit(void *context, struct kv_val key, struct kv_val value)
{
	struct kept_pick *p = context;
	if (key.len != STORE_KEPT_KEY_LEN)
		return DIRAUTH_ERR_STORE;
	if (get_uint(key.data + STORE_RECORD_KEY_LEN, 8) > p->epoch)
		return 1;
	p->value = value;
	p->found = true;
	return 0;
}

/* Takes the next expiry slot (meta "next_slot"). Slots rise with every record written, so that
 * the entries a batch adds to expiry go after the earlier ones of the same expiry time, onto a
 * few pages, instead of one page each in the order of their service ids. 0 when t has failed. */
static uint64_t slot_take(struct kv_txn *t, struct store *store)
{
	struct kv_val value;
	uint64_t next = 1;
	if (kv_txn_get(t, store->meta, "next_slot", 9, &value))
		next = value.len == 8 ? get_uint(value.data, 8) : 0;
	if (next == 0 || next == UINT64_MAX)
		kv_txn_fail(t, DIRAUTH_ERR_STORE);
	uint8_t field[8];
	put_uint(field, next + 1, 8);
	kv_txn_put(t, store->meta, "next_slot", 9, field, 8);
	return t->rc ? 0 : next;
}

/* How apply_batch runs a registration. Every refusal of a registration is decided before its
 * first write (the checks only read), so it can run as a step of the batch, with nothing to undo
 * and no nested transaction to pay for (in paired runs, about a sixth of the committer's time
 * on a core). A step that fails after its first write (its namespace is new, or a write or the
 * record's encoding fails) leaves part of it in the batch; the batch is then aborted and run
 * again with each registration in a nested transaction, all of it or none. */
enum apply_mode {
	APPLY_STEP,
	APPLY_NESTED,
};

/* Applies one registration in batch, as mode says. Returns its outcome; *partial is set when, as a
 * step, it failed after writing, so that batch holds part of it and must be aborted. */
static int apply_registration(struct store *store, struct kv_txn *batch, const struct store_registration *reg,
                              bool compact, uint64_t stamp, enum apply_mode mode, bool *partial)
{
	struct kv_txn t;
	struct kv_val found;
	struct buffer value;
	struct service_owner owner;
	struct store_namespace_usage usage;
	uint8_t key[STORE_RECORD_KEY_LEN], index_key[STORE_EXPIRY_OLD_LEN];
	size_t namespace_len = strlen(reg->namespace_name), provider_len = strlen(reg->provider);
	uint16_t ns = 0;

	buffer_init(&value);
	if (mode == APPLY_NESTED)
		kv_txn_begin_nested(batch, &t);
	else
		kv_txn_begin_step(batch, &t);
	/* A new namespace is written before the checks: a step refused after it is partial. */
	bool wrote =
	    namespace_find(&t, store, reg->namespace_name, namespace_len, &ns) == DIRAUTH_ERR_NOT_FOUND;
	if (wrote)
		namespace_intern(&t, store, reg->namespace_name, namespace_len, &ns);
	lifecycle_check_registration(&t, store, ns, reg); /* revoked or deregistered: refused first */
	if (kv_txn_get(&t, store->services, reg->service_id, STORE_ID_LEN, &found)) {
		if (!store_service_decode(&found, &owner))
			kv_txn_fail(&t, DIRAUTH_ERR_STORE);
		else if (owner.ns != ns || strcmp(owner.provider, reg->provider) != 0)
			kv_txn_fail(&t, DIRAUTH_ERR_COLLISION);
		else if (reg->sequence <= owner.highest_sequence)
			kv_txn_fail(&t, DIRAUTH_ERR_ROLLBACK);
	}
	bool claimed[REGISTRATION_MAX_ENDPOINTS]; /* already the service's: nothing to write */
	for (size_t i = 0; i < reg->endpoint_count; i++) {
		const uint8_t *endpoint = reg->endpoint_ids + i * STORE_ID_LEN;
		claimed[i] = kv_txn_get(&t, store->endpoints, endpoint, STORE_ID_LEN, &found);
		if (claimed[i] &&
		    (found.len != STORE_ID_LEN || memcmp(found.data, reg->service_id, STORE_ID_LEN) != 0))
			kv_txn_fail(&t, DIRAUTH_ERR_COLLISION);
	}

	/* The namespace's bounds, with this registration in place of the version it replaces. */
	record_key(key, ns, reg->service_id);
	usage_get(&t, store, ns, &usage);
	struct record_header old;
	bool have_old = false;
	size_t old_endpoints = 0;
	if (kv_txn_get(&t, store->records, key, sizeof key, &found)) {
		if (record_decode_header(found.data, found.len, &old) != 0 ||
		    record_endpoint_count(found.data, found.len, &old, &old_endpoints) != 0)
			kv_txn_fail(&t, DIRAUTH_ERR_STORE);
		else
			have_old = true;
	}
	uint64_t records = usage.records + (have_old ? 0 : 1);
	uint64_t bytes = usage.bytes + reg->note_len + STORE_RECORD_FRAMING -
	                 (have_old ? (uint64_t)old.note_len + STORE_RECORD_FRAMING : 0);
	uint64_t endpoints = usage.endpoints + reg->endpoint_count - (have_old ? old_endpoints : 0);
	if (!t.rc && (records > reg->max_records || bytes > reg->max_bytes ||
	              endpoints * reg->endpoint_bytes > reg->max_bytes - bytes))
		kv_txn_fail(&t, DIRAUTH_ERR_BOUNDS);

	/* Every refusal is decided: from here on the registration writes. */
	wrote = wrote || !t.rc;
	if (have_old && !t.rc) {
		if (old.stamp < stamp) {
			/* A version stamped for an earlier epoch stays readable for the epochs up to this
			 * stamp, whether or not they are sealed yet: a seal may come after this commit (a
			 * scheduler late at the cut-off), and an epoch's content must not depend on that. */
			uint8_t kept[STORE_KEPT_KEY_LEN], index[STORE_REPLACED_LEN];
			kept_key(kept, key, old.stamp);
			replaced_key(index, stamp, kept);
			kv_txn_put(&t, store->previous, kept, sizeof kept, found.data, found.len);
			kv_txn_put(&t, store->replaced, index, sizeof index, "", 0);
		} else if (old.stamp > stamp) {
			/* Stamped before the version it replaces (submitters' epochs race): this one is
			 * what every epoch from its stamp on holds, also in place of kept versions. */
			kept_trim(&t, store, key, stamp, old.stamp);
		}
		kv_txn_delete(&t, store->expiry, index_key,
		              expiry_key(index_key, old.expires, old.slot, key));
	}

	struct keys_context keys_context = {store, &t};
	struct record_keys keys = {&keys_context, keys_lookup, keys_intern};
	uint64_t slot = slot_take(&t, store);
	if (!t.rc)
		kv_txn_fail(&t, record_encode(reg->sequence, stamp, reg->expires, slot, reg->digest,
		                              reg->note, reg->note_len, reg->endpoint_count, compact,
		                              reg->parsed, reg->signature, &keys, &value));
	kv_txn_put(&t, store->records, key, sizeof key, value.data, value.len);
	kv_txn_put(&t, store->expiry, index_key, expiry_key(index_key, reg->expires, slot, key), key,
	           sizeof key);
	usage.records = records;
	usage.bytes = bytes;
	usage.endpoints = endpoints;
	usage_put(&t, store, ns, &usage);

	uint8_t service[STORE_NS_LEN + 1 + 255 + 8];
	put_uint(service, ns, STORE_NS_LEN);
	service[STORE_NS_LEN] = (uint8_t)provider_len;
	memcpy(service + STORE_NS_LEN + 1, reg->provider, provider_len);
	put_uint(service + STORE_NS_LEN + 1 + provider_len, reg->sequence, 8);
	kv_txn_put(&t, store->services, reg->service_id, STORE_ID_LEN, service,
	           STORE_NS_LEN + 1 + provider_len + 8);
	for (size_t i = 0; i < reg->endpoint_count; i++)
		if (!claimed[i])
			kv_txn_put(&t, store->endpoints, reg->endpoint_ids + i * STORE_ID_LEN, STORE_ID_LEN,
			           reg->service_id, STORE_ID_LEN);
	int rc = kv_txn_commit(&t);
	*partial = rc && wrote && mode == APPLY_STEP;
	buffer_free(&value);
	return rc;
}

/* Applies a detached list of requests in one write transaction, sets their results and
 * commits it unflushed (kv.h): durable at the next sync of the file, before which none of it is
 * answered. Returns whether it committed; *synced_earlier whether the commit synced the file,
 * making an earlier unflushed batch durable. */
static bool apply_batch(struct store *store, struct store_request *first, bool *synced_earlier)
{
	*synced_earlier = false;
	struct kv_txn batch;
	size_t accepted;
	bool full = over_refuse_line(store);
	enum apply_mode mode = APPLY_STEP;

again:
	accepted = 0;
	kv_txn_begin(store->env, &batch, KV_WRITE);
	for (struct store_request *req = first; req; req = req->next) {
		if (full && !(req->lifecycle && lifecycle_takes_reserve(req))) {
			req->result = DIRAUTH_ERR_FULL;
			continue;
		}
		bool partial = false;
		req->result = req->lifecycle ? lifecycle_apply(store, &batch, req)
		                             : apply_registration(store, &batch, req->registration,
		                                                  req->compact, req->stamp, mode, &partial);
		if (partial) {
			kv_txn_abort(&batch);
			mode = APPLY_NESTED;
			goto again;
		}
		if (req->result == 0)
			accepted++;
	}
	if (accepted == 0) {
		/* Nothing to make durable: every request already carries its refusal. */
		kv_txn_abort(&batch);
		return false;
	}
	int rc = kv_txn_commit_unflushed(&batch, synced_earlier);
	if (rc) {
		/* The accepted ones failed with the commit; the refused keep their own refusal. */
		for (struct store_request *req = first; req; req = req->next)
			if (req->result == 0)
				req->result = rc;
		return false;
	}
	/* A refresh that fails is made again by the first lookup that misses (keys_lookup). */
	(void)keys_refresh(store);
	return true;
}

/* Tells each request of the batch its outcome and frees it. */
static void answer_batch(struct store_request *first)
{
	for (struct store_request *req = first; req;) {
		/* Read next first: once told, the submitter may free req. */
		struct store_request *next = req->next;
		req->done(req->context, req->result, req->stamp);
		free(req);
		req = next;
	}
}

/* The committer. It applies each batch in one write transaction, commits it unflushed (its pages
 * synced, its meta page written), and hands the batch, refusals too, to the answerer; then it
 * takes the next batch at once, so that the flush that makes a commit durable overlaps the next
 * batch's work instead of lengthening the one serial stage. */
static void *committer_main(void *argument)
{
	struct store *store = argument;

	pthread_mutex_lock(&store->lock);
	for (;;) {
		if (!store->head && !store->stopping) {
			struct timespec from, to;
			clock_gettime(CLOCK_MONOTONIC, &from);
			while (!store->head && !store->stopping)
				pthread_cond_wait(&store->work, &store->lock);
			clock_gettime(CLOCK_MONOTONIC, &to);
			store->statistics.committer_idle_ns +=
			    (uint64_t)(to.tv_sec - from.tv_sec) * 1000000000u + (uint64_t)to.tv_nsec -
			    (uint64_t)from.tv_nsec;
		}
		if (!store->head)
			break; /* stopping and drained */

		struct store_request *first = store->head, *last = first;
		size_t count = 1;
		while (last->next && count < store->max_batch) {
			last = last->next;
			count++;
		}
		store->head = last->next;
		if (!store->head)
			store->tail = NULL;
		last->next = NULL;
		store->queued -= count;
		store->unanswered += count;
		/* Stamped while the lock is held: a seal waits for this batch. */
		uint64_t sealed = store->sealed;
		bool have_sealed = store->have_sealed;
		for (struct store_request *req = first; req; req = req->next) {
			uint64_t floor = have_sealed ? sealed + 1 : 0;
			if (floor < store->highest_stamp)
				floor = store->highest_stamp;
			req->stamp = req->epoch > floor ? req->epoch : floor;
			store->highest_stamp = req->stamp;
			req->sealed = have_sealed ? sealed : 0;
		}
		store->in_flight = true;
		pthread_mutex_unlock(&store->lock);

		bool synced_earlier = false;
		bool committed = apply_batch(store, first, &synced_earlier);

		pthread_mutex_lock(&store->lock);
		store->in_flight = false;
		store->statistics.batches++;
		store->statistics.submissions += count;
		if (committed) {
			/* Its sync made every earlier commit durable. */
			if (synced_earlier && store->commits_durable < store->commits_made)
				store->commits_durable = store->commits_made;
			store->commits_made++;
			store->statistics.commits++;
		}
		/* A refusal too waits for the commits before it: it may rest on what they wrote. */
		for (struct store_request *req = first; req; req = req->next) {
			req->commits_before = store->commits_made;
			if (req->result == DIRAUTH_ERR_FULL)
				store->statistics.refused_full++;
		}
		if (store->decided_tail)
			store->decided_tail->next = first;
		else
			store->decided_head = first;
		store->decided_tail = last;
		pthread_cond_signal(&store->decided);
		pthread_cond_broadcast(&store->settled);
	}
	store->committer_ended = true;
	pthread_cond_signal(&store->decided);
	pthread_mutex_unlock(&store->lock);
	return NULL;
}

/* The answerer. It takes every decided request waiting, syncs the file unless a later commit
 * already made their commits durable, and tells each its outcome in the order decided. A failed
 * sync leaves those commits' durability unknown: their requests are answered as a store failure. */
static void *answerer_main(void *argument)
{
	struct store *store = argument;

	pthread_mutex_lock(&store->lock);
	for (;;) {
		while (!store->decided_head && !store->committer_ended)
			pthread_cond_wait(&store->decided, &store->lock);
		if (!store->decided_head)
			break; /* the committer has ended and everything is answered */
		struct store_request *first = store->decided_head;
		uint64_t needed = store->decided_tail->commits_before;
		store->decided_head = store->decided_tail = NULL;
		bool durable = needed <= store->commits_durable;
		pthread_mutex_unlock(&store->lock);

		int rc = durable ? 0 : kv_env_flush(store->env);

		pthread_mutex_lock(&store->lock);
		if (rc == 0 && store->commits_durable < needed)
			store->commits_durable = needed;
		pthread_mutex_unlock(&store->lock);
		size_t count = 0;
		for (struct store_request *req = first; req; req = req->next) {
			count++;
			if (rc && req->result == 0)
				req->result = rc;
		}
		answer_batch(first);
		pthread_mutex_lock(&store->lock);
		/* Room for submitters only now: the requests in flight, decided or not, are bounded. */
		store->unanswered -= count;
		pthread_cond_broadcast(&store->space);
	}
	pthread_mutex_unlock(&store->lock);
	return NULL;
}

/* ---- body files ---- */

static const char *const encoding_suffix[ENCODING_COUNT] = {"identity", "gzip", "zstd"};

static int body_directory(const struct store *store, const char *namespace_name, char *out, size_t cap)
{
	int n = snprintf(out, cap, "%s/bodies/%s", store->path, namespace_name);
	return n > 0 && (size_t)n < cap ? 0 : DIRAUTH_ERR_BOUNDS;
}

static int body_path(const struct store *store, const char *namespace_name, uint64_t epoch,
                     enum content_encoding encoding, bool part, char *out, size_t cap)
{
	int n = snprintf(out, cap, "%s/bodies/%s/%llu.%s%s", store->path, namespace_name,
	                 (unsigned long long)epoch, encoding_suffix[encoding], part ? ".part" : "");
	return n > 0 && (size_t)n < cap ? 0 : DIRAUTH_ERR_BOUNDS;
}

static int make_directory(const char *path)
{
	if (mkdir(path, 0700) != 0 && errno != EEXIST)
		return DIRAUTH_ERR_IO;
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : DIRAUTH_ERR_IO;
}

static int sync_directory(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return DIRAUTH_ERR_IO;
	int rc = fsync(fd) == 0 ? 0 : DIRAUTH_ERR_IO;
	close(fd);
	return rc;
}

/* One output file of a body: buffered writes, and the digest of what was written. */
struct body_file {
	int fd;
	uint64_t size;
	struct crypto_sha256_stream *digest;
	uint8_t buffer[64 * 1024];
	size_t buffered;
};

struct store_body_writer {
	struct store *store;
	char namespace_name[STORE_NAME_MAX + 1];
	uint64_t epoch;
	struct body_file files[ENCODING_COUNT];
	struct compress_stream *streams[ENCODING_COUNT]; /* NULL for identity */
	int failed;
};

static int body_file_flush(struct body_file *f)
{
	size_t done = 0;
	while (done < f->buffered) {
		ssize_t n = write(f->fd, f->buffer + done, f->buffered - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return DIRAUTH_ERR_IO;
		done += (size_t)n;
	}
	f->buffered = 0;
	return 0;
}

static int body_file_sink(void *context, const uint8_t *data, size_t len)
{
	struct body_file *f = context;
	if (crypto_sha256_update(f->digest, data, len) != 0)
		return DIRAUTH_ERR_INTERNAL;
	f->size += len;
	while (len > 0) {
		size_t room = sizeof f->buffer - f->buffered;
		size_t take = len < room ? len : room;
		memcpy(f->buffer + f->buffered, data, take);
		f->buffered += take;
		data += take;
		len -= take;
		if (f->buffered == sizeof f->buffer) {
			int rc = body_file_flush(f);
			if (rc)
				return rc;
		}
	}
	return 0;
}

static void body_writer_remove_parts(struct store_body_writer *w)
{
	char path[STORE_PATH_MAX];
	for (int e = 0; e < ENCODING_COUNT; e++) {
		if (w->files[e].fd >= 0)
			close(w->files[e].fd);
		w->files[e].fd = -1;
		crypto_sha256_free(w->files[e].digest);
		w->files[e].digest = NULL;
		compress_stream_free(w->streams[e]);
		w->streams[e] = NULL;
		if (body_path(w->store, w->namespace_name, w->epoch, (enum content_encoding)e, true, path,
		              sizeof path) == 0)
			unlink(path);
	}
}

int store_body_begin(struct store *store, const char *namespace_name, uint64_t epoch,
                     struct store_body_writer **out)
{
	char path[STORE_PATH_MAX];
	size_t len;
	if (!store || !out)
		return DIRAUTH_ERR_SYNTAX;
	*out = NULL;
	int rc = check_name(namespace_name, &len);
	if (rc)
		return rc;
	/* The name becomes a directory under bodies/: never a path out of it. */
	if (namespace_name[0] == '.' || strchr(namespace_name, '/'))
		return DIRAUTH_ERR_SYNTAX;
	struct store_body_writer *w = calloc(1, sizeof *w);
	if (!w)
		return DIRAUTH_ERR_NOMEM;
	w->store = store;
	memcpy(w->namespace_name, namespace_name, len + 1);
	w->epoch = epoch;
	for (int e = 0; e < ENCODING_COUNT; e++)
		w->files[e].fd = -1;
	if ((rc = body_directory(store, namespace_name, path, sizeof path)) || (rc = make_directory(path)))
		goto fail;
	for (int e = 0; e < ENCODING_COUNT; e++) {
		if ((rc = body_path(store, namespace_name, epoch, (enum content_encoding)e, true, path,
		                    sizeof path)))
			goto fail;
		w->files[e].fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
		w->files[e].digest = crypto_sha256_new();
		if (w->files[e].fd < 0 || !w->files[e].digest) {
			rc = w->files[e].fd < 0 ? DIRAUTH_ERR_IO : DIRAUTH_ERR_NOMEM;
			goto fail;
		}
		if (e != ENCODING_IDENTITY &&
		    (rc = compress_stream_new((enum content_encoding)e, &w->streams[e])))
			goto fail;
	}
	*out = w;
	return 0;
fail:
	body_writer_remove_parts(w);
	free(w);
	return rc;
}

int store_body_write(struct store_body_writer *w, const void *data, size_t len)
{
	if (w->failed)
		return w->failed;
	int rc = body_file_sink(&w->files[ENCODING_IDENTITY], data, len);
	for (int e = 0; !rc && e < ENCODING_COUNT; e++)
		if (w->streams[e])
			rc = compress_stream_write(w->streams[e], data, len, body_file_sink, &w->files[e]);
	w->failed = rc;
	return rc;
}

int store_body_finish(struct store_body_writer *w, struct store_body_info *info)
{
	char part[STORE_PATH_MAX], final[STORE_PATH_MAX], directory[STORE_PATH_MAX];
	int rc = w->failed;
	for (int e = 0; !rc && e < ENCODING_COUNT; e++) {
		if (w->streams[e]) {
			rc = compress_stream_finish(w->streams[e], body_file_sink, &w->files[e]);
			w->streams[e] = NULL;
		}
	}
	for (int e = 0; !rc && e < ENCODING_COUNT; e++) {
		struct body_file *f = &w->files[e];
		if ((rc = body_file_flush(f)) || (rc = fsync(f->fd) == 0 ? 0 : DIRAUTH_ERR_IO))
			break;
		rc = crypto_sha256_finish(f->digest, info->sha256[e]) ? DIRAUTH_ERR_INTERNAL : 0;
		f->digest = NULL;
		info->size[e] = f->size;
	}
	for (int e = 0; !rc && e < ENCODING_COUNT; e++) {
		if ((rc = body_path(w->store, w->namespace_name, w->epoch, (enum content_encoding)e, true,
		                    part, sizeof part)) ||
		    (rc = body_path(w->store, w->namespace_name, w->epoch, (enum content_encoding)e, false,
		                    final, sizeof final)))
			break;
		if (rename(part, final) != 0)
			rc = DIRAUTH_ERR_IO;
	}
	if (!rc && !(rc = body_directory(w->store, w->namespace_name, directory, sizeof directory)))
		rc = sync_directory(directory);
	if (rc)
		body_writer_remove_parts(w);
	for (int e = 0; e < ENCODING_COUNT; e++) {
		if (w->files[e].fd >= 0)
			close(w->files[e].fd);
		crypto_sha256_free(w->files[e].digest);
	}
	free(w);
	return rc;
}

void store_body_discard(struct store_body_writer *w)
{
	if (!w)
		return;
	body_writer_remove_parts(w);
	free(w);
}

/* Removes the files of one body (final names). */
static int body_remove_files(struct store *store, const char *namespace_name, uint64_t epoch)
{
	char path[STORE_PATH_MAX];
	int rc = 0;
	for (int e = 0; e < ENCODING_COUNT; e++)
		if (body_path(store, namespace_name, epoch, (enum content_encoding)e, false, path,
		              sizeof path) != 0 ||
		    (unlink(path) != 0 && errno != ENOENT))
			rc = DIRAUTH_ERR_IO;
	return rc;
}

/* Whether namespace_name's body for epoch is stored (its sizes and digests kept). */
static bool body_stored(struct store *store, const char *namespace_name, uint64_t epoch)
{
	struct kv_txn t;
	struct kv_val found;
	uint8_t key[STORE_EPOCH_KEY_LEN];
	uint16_t ns;
	if (namespace_read_begin(store, namespace_name, &t, &ns) != 0)
		return false;
	epoch_key(key, ns, epoch);
	bool stored = kv_txn_get(&t, store->bodies, key, sizeof key, &found);
	kv_txn_abort(&t);
	return stored;
}

/* At open: removes body files of epochs whose header was never stored, and unfinished parts. */
static int body_files_tidy(struct store *store)
{
	char path[STORE_PATH_MAX];
	if (snprintf(path, sizeof path, "%s/bodies", store->path) >= (int)sizeof path ||
	    make_directory(path) != 0)
		return DIRAUTH_ERR_IO;
	DIR *top = opendir(path);
	if (!top)
		return DIRAUTH_ERR_IO;
	struct dirent *entry;
	while ((entry = readdir(top))) {
		if (entry->d_name[0] == '.')
			continue;
		char directory[STORE_PATH_MAX];
		if (snprintf(directory, sizeof directory, "%s/%s", path, entry->d_name) >=
		    (int)sizeof directory)
			continue;
		DIR *inner = opendir(directory);
		if (!inner)
			continue;
		struct dirent *file;
		while ((file = readdir(inner))) {
			if (file->d_name[0] == '.')
				continue;
			char *end = NULL;
			unsigned long long epoch = strtoull(file->d_name, &end, 10);
			bool part = strstr(file->d_name, ".part") != NULL;
			/* Not only epochs past the latest: a body finished for an epoch that was then
			 * refused (or never stored) may be older than the latest. */
			if (part || !end || *end != '.' || !body_stored(store, entry->d_name, epoch)) {
				char target[STORE_PATH_MAX];
				if (snprintf(target, sizeof target, "%s/%s", directory, file->d_name) <
				    (int)sizeof target)
					unlink(target);
			}
		}
		closedir(inner);
	}
	closedir(top);
	return 0;
}

/* ---- opening and closing ---- */

static int any_record(void *context, struct kv_val key, struct kv_val value)
{
	(void)context;
	(void)key;
	(void)value;
	return 1;
}

int store_format_read(const char *path, uint64_t *format)
{
	struct kv_env *env = NULL;
	struct kv_db meta;
	struct kv_database database = {"meta", &meta};
	struct kv_txn t;
	struct kv_val value;
	int rc = kv_env_open(path, 1 << 20, &database, 1, &env);
	if (rc)
		return rc;
	kv_txn_begin(env, &t, KV_READ);
	rc = DIRAUTH_ERR_NOT_FOUND;
	if (kv_txn_get(&t, meta, "format", 6, &value)) {
		*format = value.len == 4 ? get_uint(value.data, 4) : 0;
		rc = 0;
	}
	kv_txn_abort(&t);
	kv_env_close(env);
	return rc;
}

static int recount_visit(void *context, struct kv_val key, struct kv_val value)
{
	uint64_t *endpoints = context;
	struct record_header h;
	size_t count = 0;
	if (key.len != STORE_RECORD_KEY_LEN || record_decode_header(value.data, value.len, &h) != 0 ||
	    record_endpoint_count(value.data, value.len, &h, &count) != 0)
		return DIRAUTH_ERR_STORE;
	endpoints[get_uint(key.data, STORE_NS_LEN)] += count;
	return 0;
}

/* A namespace's usage as formats before 4 keep it: records and bytes. */
struct old_usage {
	uint16_t ns;
	uint64_t records, bytes;
};

struct old_usages {
	struct old_usage *items; /* room for every namespace */
	size_t count;
};

static int old_usage_visit(void *context, struct kv_val key, struct kv_val value)
{
	struct old_usages *u = context;
	if (key.len != STORE_NS_LEN || value.len != 16 || u->count > STORE_MAX_NAMESPACES)
		return DIRAUTH_ERR_STORE;
	u->items[u->count++] = (struct old_usage){(uint16_t)get_uint(key.data, STORE_NS_LEN),
	                                          get_uint(value.data, 8), get_uint(value.data + 8, 8)};
	return 0;
}

/* Format 4 counts the endpoints of each namespace's records beside its records and bytes: in an
 * older store they are counted once, in t, from the records themselves. */
static void usage_count_endpoints(struct kv_txn *t, struct store *store)
{
	uint64_t *endpoints = calloc(STORE_MAX_NAMESPACES + 1, sizeof *endpoints);
	struct old_usages old = {calloc(STORE_MAX_NAMESPACES + 1, sizeof *old.items), 0};
	int rc = endpoints && old.items ? 0 : DIRAUTH_ERR_NOMEM;
	if (!rc)
		rc = kv_txn_walk_prefix(t, store->records, NULL, 0, recount_visit, endpoints);
	if (!rc)
		rc = kv_txn_walk_prefix(t, store->usage, NULL, 0, old_usage_visit, &old);
	if (rc)
		kv_txn_fail(t, rc);
	for (size_t i = 0; !rc && i < old.count; i++) {
		struct store_namespace_usage u = {old.items[i].records, old.items[i].bytes,
		                                  endpoints[old.items[i].ns]};
		usage_put(t, store, old.items[i].ns, &u);
	}
	free(endpoints);
	free(old.items);
}

static int check_format(struct store *store)
{
	struct kv_txn t;
	struct kv_val value;
	uint8_t field[8];
	kv_txn_begin(store->env, &t, KV_WRITE);
	if (kv_txn_get(&t, store->meta, "format", 6, &value)) {
		uint64_t format = value.len == 4 ? get_uint(value.data, 4) : 0;
		if (format < STORE_FORMAT_OLDEST || format > STORE_FORMAT) {
			kv_txn_fail(&t, DIRAUTH_ERR_STORE);
		} else if (format < STORE_FORMAT) {
			/* Format 2 differs from 3 only in its records without an expiry slot, which later
			 * formats read as they are; 3 from 4 in the usage without its endpoints, counted
			 * now. Marked 4, the store is refused by the binaries before. */
			usage_count_endpoints(&t, store);
			put_uint(field, STORE_FORMAT, 4);
			kv_txn_put(&t, store->meta, "format", 6, field, 4);
		}
	} else {
		/* A new store, or one written before the format was recorded: that one has records
		 * under its old layout and is refused. */
		if (kv_txn_walk_prefix(&t, store->services, NULL, 0, any_record, NULL) == 1)
			kv_txn_fail(&t, DIRAUTH_ERR_STORE);
		put_uint(field, STORE_FORMAT, 4);
		kv_txn_put(&t, store->meta, "format", 6, field, 4);
	}
	if (kv_txn_get(&t, store->meta, "sealed", 6, &value)) {
		if (value.len != 8)
			kv_txn_fail(&t, DIRAUTH_ERR_STORE);
		else {
			store->sealed = get_uint(value.data, 8);
			store->have_sealed = true;
		}
	}
	return kv_txn_commit(&t);
}

int store_open(const struct store_options *options, struct store **out)
{
	struct store *store = NULL;
	int sync_objects = 0;
	int rc;

	if (!out)
		return DIRAUTH_ERR_SYNTAX;
	*out = NULL;
	if (!options || !options->path || !*options->path)
		return DIRAUTH_ERR_CONFIG;
	store = calloc(1, sizeof *store);
	if (!store)
		return DIRAUTH_ERR_NOMEM;
	if (snprintf(store->path, sizeof store->path, "%s", options->path) >= (int)sizeof store->path) {
		free(store);
		return DIRAUTH_ERR_CONFIG;
	}
	store->max_batch = options->max_batch ? options->max_batch : STORE_DEFAULT_BATCH;
	store->queue_limit = store->max_batch * STORE_QUEUE_PER_BATCH;
	store->refuse_percent = options->refuse_percent ? options->refuse_percent : STORE_DEFAULT_REFUSE;
	if (store->refuse_percent > 100)
		store->refuse_percent = 100;

	const struct kv_database databases[] = {
	    {"meta", &store->meta},
	    {"namespaces", &store->namespaces},
	    {"provider_keys", &store->provider_keys},
	    {"services", &store->services},
	    {"endpoints", &store->endpoints},
	    {"records", &store->records},
	    {"previous", &store->previous},
	    {"replaced", &store->replaced},
	    {"expiry", &store->expiry},
	    {"usage", &store->usage},
	    {"snapshots", &store->snapshots},
	    {"bodies", &store->bodies},
	    {"latest", &store->latest},
	    {"votes", &store->votes},
	    {"signatures", &store->signatures},
	    {"consensus", &store->consensus},
	    {"evidence", &store->evidence},
	    {"log_hashes", &store->log_hashes},
	    {"log_leaves", &store->log_leaves},
	    {"log_epochs", &store->log_epochs},
	    {"log_state", &store->log_state},
	    {"log_checkpoints", &store->log_checkpoints},
	    {"log_partials", &store->log_partials},
	    {"log_witness", &store->log_witness},
	    {"health", &store->health},
	    {"revocations", &store->revocations},
	    {"revocation_keys", &store->revocation_keys},
	    {"deregistrations", &store->deregistrations},
	    {"statements", &store->statements},
	};
	rc = kv_env_open(options->path, options->map_size ? options->map_size : STORE_DEFAULT_MAP_SIZE,
	                 databases, sizeof databases / sizeof databases[0], &store->env);
	if (rc)
		goto fail;
	if ((rc = check_format(store)))
		goto fail;
	pthread_mutex_init(&store->lock, NULL);
	pthread_mutex_init(&store->keys_lock, NULL);
	pthread_cond_init(&store->work, NULL);
	pthread_cond_init(&store->space, NULL);
	pthread_cond_init(&store->settled, NULL);
	pthread_cond_init(&store->decided, NULL);
	sync_objects = 1;
	if ((rc = keys_refresh(store)) || (rc = body_files_tidy(store)))
		goto fail;
	if (pthread_create(&store->answerer, NULL, answerer_main, store) != 0) {
		rc = DIRAUTH_ERR_NOMEM;
		goto fail;
	}
	if (pthread_create(&store->committer, NULL, committer_main, store) != 0) {
		pthread_mutex_lock(&store->lock);
		store->committer_ended = true;
		pthread_cond_signal(&store->decided);
		pthread_mutex_unlock(&store->lock);
		pthread_join(store->answerer, NULL);
		rc = DIRAUTH_ERR_NOMEM;
		goto fail;
	}
	/* For ps, top and perf; the committer's name is the benchmarks' too. */
	pthread_setname_np(store->committer, STORE_COMMITTER_THREAD_NAME);
	pthread_setname_np(store->answerer, STORE_ANSWERER_THREAD_NAME);
	*out = store;
	return 0;

fail:
	if (sync_objects) {
		pthread_cond_destroy(&store->decided);
		pthread_cond_destroy(&store->settled);
		pthread_cond_destroy(&store->space);
		pthread_cond_destroy(&store->work);
		pthread_mutex_destroy(&store->keys_lock);
		pthread_mutex_destroy(&store->lock);
	}
	kv_env_close(store->env);
	free(store->keys);
	free(store);
	return rc;
}

void store_close(struct store *store)
{
	if (!store)
		return;
	pthread_mutex_lock(&store->lock);
	store->stopping = true;
	pthread_cond_broadcast(&store->work);
	pthread_cond_broadcast(&store->space);
	pthread_mutex_unlock(&store->lock);
	pthread_join(store->committer, NULL);
	pthread_join(store->answerer, NULL); /* ends once the committer's last batch is answered */
	kv_env_close(store->env);
	pthread_cond_destroy(&store->decided);
	pthread_cond_destroy(&store->settled);
	pthread_cond_destroy(&store->space);
	pthread_cond_destroy(&store->work);
	pthread_mutex_destroy(&store->keys_lock);
	pthread_mutex_destroy(&store->lock);
	free(store->keys);
	free(store);
}

/* ---- registrations ---- */

static int check_registration(const struct store_registration *r)
{
	size_t len;
	int rc;

	if (!r || !r->service_id || !r->provider || !r->digest || !r->note || r->note_len == 0 ||
	    (!r->endpoint_ids && r->endpoint_count))
		return DIRAUTH_ERR_SYNTAX;
	if ((rc = check_name(r->namespace_name, &len)) || (rc = check_name(r->provider, &len)))
		return rc;
	if (len > 255 || r->note_len > UINT32_MAX || r->endpoint_count > REGISTRATION_MAX_ENDPOINTS)
		return DIRAUTH_ERR_SYNTAX;
	return 0;
}

int store_registration_submit_async(struct store *store, const struct store_registration *r,
                                    store_submission_done done, void *context)
{
	int rc = check_registration(r);
	return rc ? rc : store_request_submit(store, r, 0, NULL, r->epoch, done, context);
}

int store_request_submit(struct store *store, const struct store_registration *registration,
                         int lifecycle_kind, const void *lifecycle, uint64_t epoch,
                         store_submission_done done, void *context)
{
	if (!store || !done)
		return DIRAUTH_ERR_SYNTAX;
	struct store_request *request = calloc(1, sizeof *request);
	if (!request)
		return DIRAUTH_ERR_NOMEM;
	request->registration = registration;
	/* The rebuild check is the most work of keeping a record that needs no transaction: it is
	 * done here, in the submitter's thread, not in the committer's, the one serial stage. */
	request->compact =
	    registration &&
	    record_rebuilds(registration->namespace_name, registration->service_id, registration->sequence,
	                    registration->expires, registration->note, registration->note_len,
	                    registration->parsed, registration->signature);
	request->lifecycle_kind = lifecycle_kind;
	request->lifecycle = lifecycle;
	request->epoch = epoch;
	request->done = done;
	request->context = context;

	pthread_mutex_lock(&store->lock);
	while (!store->stopping && store->queued + store->unanswered >= store->queue_limit)
		pthread_cond_wait(&store->space, &store->lock);
	if (store->stopping) {
		pthread_mutex_unlock(&store->lock);
		free(request);
		return DIRAUTH_ERR_STORE;
	}
	if (store->tail)
		store->tail->next = request;
	else
		store->head = request;
	store->tail = request;
	store->queued++;
	pthread_cond_signal(&store->work);
	pthread_mutex_unlock(&store->lock);
	return 0;
}

/* A waiting submitter. */
struct waiter {
	pthread_mutex_t lock;
	pthread_cond_t done_cond;
	bool done;
	int result;
	uint64_t stamp;
};

static void waiter_done(void *context, int result, uint64_t stamp)
{
	struct waiter *w = context;
	pthread_mutex_lock(&w->lock);
	w->result = result;
	w->stamp = stamp;
	w->done = true;
	pthread_cond_signal(&w->done_cond);
	pthread_mutex_unlock(&w->lock);
}

int store_registration_submit(struct store *store, const struct store_registration *r, uint64_t *stamp)
{
	int rc = check_registration(r);
	return rc ? rc : store_request_wait(store, r, 0, NULL, r->epoch, stamp);
}

int store_request_wait(struct store *store, const struct store_registration *registration, int lifecycle_kind,
                       const void *lifecycle, uint64_t epoch, uint64_t *stamp)
{
	struct waiter w = {.done = false};
	pthread_mutex_init(&w.lock, NULL);
	pthread_cond_init(&w.done_cond, NULL);
	int rc = store_request_submit(store, registration, lifecycle_kind, lifecycle, epoch, waiter_done, &w);
	if (rc == 0) {
		pthread_mutex_lock(&w.lock);
		while (!w.done)
			pthread_cond_wait(&w.done_cond, &w.lock);
		pthread_mutex_unlock(&w.lock);
		rc = w.result;
		if (stamp && rc == 0)
			*stamp = w.stamp;
	}
	pthread_cond_destroy(&w.done_cond);
	pthread_mutex_destroy(&w.lock);
	return rc;
}

int store_service_sequence(struct store *store, const uint8_t service_id[32], uint64_t *sequence)
{
	struct kv_txn t;
	struct kv_val found;
	struct service_owner owner;

	if (!store || !service_id || !sequence)
		return DIRAUTH_ERR_SYNTAX;
	kv_txn_begin(store->env, &t, KV_READ);
	if (!kv_txn_get(&t, store->services, service_id, STORE_ID_LEN, &found))
		kv_txn_fail(&t, DIRAUTH_ERR_NOT_FOUND);
	else if (!store_service_decode(&found, &owner))
		kv_txn_fail(&t, DIRAUTH_ERR_STORE);
	else
		*sequence = owner.highest_sequence;
	kv_txn_abort(&t);
	return t.rc;
}

/* The name of namespace id ns (a walk of the small namespaces table). */
struct name_search {
	uint16_t ns;
	char *out;
	int found;
};

static int name_search_visit(void *context, struct kv_val key, struct kv_val value)
{
	struct name_search *s = context;
	if (value.len == STORE_NS_LEN && get_uint(value.data, STORE_NS_LEN) == s->ns &&
	    key.len <= STORE_NAME_MAX) {
		memcpy(s->out, key.data, key.len);
		s->out[key.len] = 0;
		s->found = 1;
		return 1;
	}
	return 0;
}

int store_service_owner(struct store *store, const uint8_t service_id[32],
                        char namespace_name[STORE_NAME_MAX + 1], char provider[STORE_NAME_MAX + 1])
{
	struct kv_txn t;
	struct kv_val found;
	struct service_owner owner;

	if (!store || !service_id || !namespace_name || !provider)
		return DIRAUTH_ERR_SYNTAX;
	kv_txn_begin(store->env, &t, KV_READ);
	if (!kv_txn_get(&t, store->services, service_id, STORE_ID_LEN, &found))
		kv_txn_fail(&t, DIRAUTH_ERR_NOT_FOUND);
	else if (!store_service_decode(&found, &owner))
		kv_txn_fail(&t, DIRAUTH_ERR_STORE);
	if (!t.rc) {
		struct name_search search = {owner.ns, namespace_name, 0};
		kv_txn_walk_prefix(&t, store->namespaces, NULL, 0, name_search_visit, &search);
		if (!t.rc && !search.found)
			kv_txn_fail(&t, DIRAUTH_ERR_STORE);
		memcpy(provider, owner.provider, strlen(owner.provider) + 1);
	}
	kv_txn_abort(&t);
	return t.rc;
}

/* ---- the seal ---- */

/* Removes up to STORE_PRUNE_CHUNK entries of index (replaced or expiry) whose u64 prefix is at
 * most limit, and what they point at. Returns the count removed (0: done) or a negative error. */
struct prune_entry {
	uint8_t key[STORE_REPLACED_LEN]; /* the longest of the indexes' keys */
	size_t key_len;
	const uint8_t *target; /* in key, or record (expiry's entries with a slot) */
	uint8_t record[STORE_RECORD_KEY_LEN];
};

struct prune_collect {
	struct store *store;
	struct kv_txn *t;
	bool expiry;
	uint64_t limit;
	uint64_t sealed;
	struct prune_entry *entries;
	size_t count;
};

/* Whether an expiry entry (its key, of key_len bytes) is h's own: keyed by h's slot, or, for a
 * record without one, by its expiry time and record key. Any other is stale. */
static bool expiry_entry_is_records(const uint8_t *key, size_t key_len, const struct record_header *h)
{
	if (get_uint(key, 8) != h->expires)
		return false;
	return h->slot ? key_len == STORE_EXPIRY_KEY_LEN && get_uint(key + 8, 8) == h->slot
	               : key_len == STORE_EXPIRY_OLD_LEN;
}

static int prune_collect_visit(void *context, struct kv_val key, struct kv_val value)
{
	struct prune_collect *c = context;
	const uint8_t *target = key.data + 8;
	if (!c->expiry) {
		if (key.len != STORE_REPLACED_LEN)
			return DIRAUTH_ERR_STORE;
	} else if (key.len == STORE_EXPIRY_KEY_LEN) {
		if (value.len != STORE_RECORD_KEY_LEN)
			return DIRAUTH_ERR_STORE;
		target = value.data;
	} else if (key.len != STORE_EXPIRY_OLD_LEN) {
		return DIRAUTH_ERR_STORE;
	}
	if (get_uint(key.data, 8) > c->limit || c->count == STORE_PRUNE_CHUNK)
		return 1;
	if (c->expiry) {
		/* A record stamped past the sealed epoch stays until a seal reaches it: the sealed
		 * epoch may still hold the version it replaced. */
		struct kv_val found;
		struct record_header h;
		if (kv_txn_get(c->t, c->store->records, target, STORE_RECORD_KEY_LEN, &found) &&
		    record_decode_header(found.data, found.len, &h) == 0 && h.stamp > c->sealed &&
		    expiry_entry_is_records(key.data, key.len, &h))
			return 0;
	}
	struct prune_entry *e = &c->entries[c->count++];
	memcpy(e->key, key.data, key.len);
	e->key_len = key.len;
	if (target == value.data) {
		memcpy(e->record, target, STORE_RECORD_KEY_LEN);
		e->target = e->record;
	} else {
		e->target = e->key + 8;
	}
	return 0;
}

static int prune_chunk(struct store *store, bool expiry, uint64_t limit, uint64_t sealed)
{
	struct kv_txn t;
	struct prune_collect c = {
	    store, &t, expiry, limit, sealed, calloc(STORE_PRUNE_CHUNK, sizeof *c.entries), 0};
	if (!c.entries)
		return DIRAUTH_ERR_NOMEM;
	kv_txn_begin(store->env, &t, KV_WRITE);
	int walked = kv_txn_walk_prefix(&t, expiry ? store->expiry : store->replaced, NULL, 0,
	                                prune_collect_visit, &c);
	if (walked < 0)
		kv_txn_fail(&t, walked);
	for (size_t i = 0; i < c.count && !t.rc; i++) {
		const struct prune_entry *e = &c.entries[i];
		const uint8_t *key = e->target;
		if (!expiry) {
			kv_txn_delete(&t, store->replaced, e->key, e->key_len);
			kv_txn_delete(&t, store->previous, key, STORE_KEPT_KEY_LEN);
			continue;
		}
		kv_txn_delete(&t, store->expiry, e->key, e->key_len);
		/* An expired record: gone from records (and previous), and from its namespace's usage. */
		struct kv_val found;
		struct record_header h;
		if (kv_txn_get(&t, store->records, key, STORE_RECORD_KEY_LEN, &found)) {
			if (record_decode_header(found.data, found.len, &h) != 0) {
				kv_txn_fail(&t, DIRAUTH_ERR_STORE);
				break;
			}
			if (!expiry_entry_is_records(e->key, e->key_len, &h))
				continue; /* a stale index entry; the record has an entry of its own */
			uint16_t ns = (uint16_t)get_uint(key, STORE_NS_LEN);
			struct store_namespace_usage usage;
			size_t endpoints = 0;
			if (record_endpoint_count(found.data, found.len, &h, &endpoints) != 0) {
				kv_txn_fail(&t, DIRAUTH_ERR_STORE);
				break;
			}
			usage_get(&t, store, ns, &usage);
			usage.records -= usage.records ? 1 : 0;
			uint64_t gone = (uint64_t)h.note_len + STORE_RECORD_FRAMING;
			usage.bytes -= usage.bytes >= gone ? gone : usage.bytes;
			usage.endpoints -= usage.endpoints >= endpoints ? endpoints : usage.endpoints;
			usage_put(&t, store, ns, &usage);
			kv_txn_delete(&t, store->records, key, STORE_RECORD_KEY_LEN);
			kept_trim(&t, store, key, 0, h.stamp);
			lifecycle_forget_health(&t, store, key);
		}
	}
	size_t count = c.count;
	free(c.entries);
	int rc = kv_txn_commit(&t);
	return rc ? rc : (int)count;
}

int store_seal(struct store *store, uint64_t epoch, uint64_t valid_after)
{
	if (!store)
		return DIRAUTH_ERR_SYNTAX;
	pthread_mutex_lock(&store->lock);
	while (store->in_flight)
		pthread_cond_wait(&store->settled, &store->lock);
	if (store->have_sealed && !store->seal_unwritten && epoch <= store->sealed) {
		pthread_mutex_unlock(&store->lock);
		return 0;
	}
	/* Raised before it is written, so that no batch taken from here on is stamped at or below
	 * it; written again by the next call if this commit fails, so that a seal reported done is
	 * one the next start reads back. */
	if (!store->have_sealed || epoch > store->sealed)
		store->sealed = epoch;
	store->have_sealed = true;
	store->seal_unwritten = true;
	uint64_t sealing = store->sealed;
	pthread_mutex_unlock(&store->lock);

	/* Write transactions are serial: a higher seal committed first by another call is kept. */
	struct kv_txn t;
	struct kv_val value;
	uint8_t field[8];
	put_uint(field, sealing, 8);
	kv_txn_begin(store->env, &t, KV_WRITE);
	if (!kv_txn_get(&t, store->meta, "sealed", 6, &value) || value.len != 8 ||
	    get_uint(value.data, 8) < sealing)
		kv_txn_put(&t, store->meta, "sealed", 6, field, 8);
	int rc = kv_txn_commit(&t);
	if (rc == 0) {
		pthread_mutex_lock(&store->lock);
		if (store->sealed == sealing)
			store->seal_unwritten = false;
		pthread_mutex_unlock(&store->lock);
	}
	/* What the sealed epoch cannot hold any more: versions replaced by registrations it holds,
	 * and records expired when it starts; a chunk per write transaction, until a chunk finds
	 * nothing (an epoch may replace or expire many more than one chunk). */
	int pruned = 0;
	while (rc == 0 && (pruned = prune_chunk(store, false, epoch, epoch)) > 0)
		;
	if (rc == 0 && pruned < 0)
		rc = pruned;
	while (rc == 0 && (pruned = prune_chunk(store, true, valid_after, epoch)) > 0)
		;
	if (rc == 0 && pruned < 0)
		rc = pruned;
	return rc;
}

int store_sealed(struct store *store, uint64_t *epoch)
{
	if (!store || !epoch)
		return DIRAUTH_ERR_SYNTAX;
	pthread_mutex_lock(&store->lock);
	int rc = store->have_sealed ? 0 : DIRAUTH_ERR_NOT_FOUND;
	*epoch = store->sealed;
	pthread_mutex_unlock(&store->lock);
	return rc;
}

/* ---- the view of the sealed epoch ---- */

struct view_walk {
	struct store *store;
	struct kv_txn *t;
	const char *namespace_name;
	uint64_t epoch;
	uint64_t valid_after;
	store_record_visitor visit;
	void *context;
	struct buffer note;
};

static int view_visit(void *context, struct kv_val key, struct kv_val value)
{
	struct view_walk *w = context;
	struct record_header h;
	if (key.len != STORE_RECORD_KEY_LEN || record_decode_header(value.data, value.len, &h) != 0)
		return DIRAUTH_ERR_STORE;
	if (h.stamp > w->epoch) {
		/* A later registration: the epoch holds a version it replaced, if one is kept. */
		struct kept_pick pick = {w->epoch, {NULL, 0}, false};
		int walked =
		    kv_txn_walk_prefix(w->t, w->store->previous, key.data, key.len, kept_pick_visit, &pick);
		if (walked < 0 || !pick.found)
			return walked < 0 ? walked : 0;
		value = pick.value;
		if (record_decode_header(value.data, value.len, &h) != 0)
			return DIRAUTH_ERR_STORE;
	}
	if (h.expires <= w->valid_after)
		return 0;
	struct keys_context keys_context = {w->store, NULL};
	struct record_keys keys = {&keys_context, keys_lookup, keys_intern};
	int rc = record_decode_note(value.data, value.len, w->namespace_name, key.data + STORE_NS_LEN, &keys,
	                            &w->note);
	if (rc)
		return rc;
	/* Withdrawn by a deregistration or revocation this epoch holds: not in its view. */
	rc = lifecycle_view_hides(w->t, w->store, (uint16_t)get_uint(key.data, STORE_NS_LEN),
	                          key.data + STORE_NS_LEN, h.sequence, w->epoch, w->note.data, w->note.len);
	if (rc)
		return rc < 0 ? rc : 0;
	struct store_record record = {
	    .service_id = key.data + STORE_NS_LEN,
	    .sequence = h.sequence,
	    .expires = h.expires,
	    .digest = h.digest,
	    .note = w->note.data,
	    .note_len = w->note.len,
	};
	return w->visit(w->context, &record);
}

int store_view_foreach(struct store *store, const char *namespace_name, uint64_t epoch, uint64_t valid_after,
                       store_record_visitor visit, void *context)
{
	struct kv_txn t;
	size_t namespace_len;
	uint16_t ns;

	if (!store || !visit)
		return DIRAUTH_ERR_SYNTAX;
	/* The name is judged before the epoch, and a namespace never recorded has nothing to visit. */
	int rc = check_name(namespace_name, &namespace_len);
	if (rc)
		return rc;
	uint64_t sealed;
	if (store_sealed(store, &sealed) != 0 || sealed != epoch)
		return DIRAUTH_ERR_STALE;
	if ((rc = namespace_read_begin(store, namespace_name, &t, &ns)) != 0)
		return rc == DIRAUTH_ERR_NOT_FOUND ? 0 : rc;
	uint8_t prefix[STORE_NS_LEN];
	put_uint(prefix, ns, STORE_NS_LEN);
	struct view_walk w = {store, &t, namespace_name, epoch, valid_after, visit, context, {0}};
	buffer_init(&w.note);
	int result = kv_txn_walk_prefix(&t, store->records, prefix, sizeof prefix, view_visit, &w);
	buffer_free(&w.note);
	rc = t.rc;
	kv_txn_abort(&t);
	return rc ? rc : result;
}

struct sequence_pick {
	uint64_t sequence;
	struct kv_val value;
	bool found;
};

static int sequence_pick_visit(void *context, struct kv_val key, struct kv_val value)
{
	struct sequence_pick *p = context;
	struct record_header h;
	if (key.len != STORE_KEPT_KEY_LEN || record_decode_header(value.data, value.len, &h) != 0)
		return DIRAUTH_ERR_STORE;
	if (h.sequence != p->sequence)
		return 0;
	p->value = value;
	p->found = true;
	return 1;
}

int store_registration_get(struct store *store, const char *namespace_name, const uint8_t service_id[32],
                           uint64_t sequence, struct buffer *note)
{
	struct kv_txn t;
	struct kv_val value;
	struct record_header h;
	uint16_t ns;
	uint8_t key[STORE_RECORD_KEY_LEN];

	if (!store || !service_id || !note)
		return DIRAUTH_ERR_SYNTAX;
	int rc = namespace_read_begin(store, namespace_name, &t, &ns);
	if (rc)
		return rc;
	record_key(key, ns, service_id);
	if (!kv_txn_get(&t, store->records, key, sizeof key, &value)) {
		kv_txn_fail(&t, DIRAUTH_ERR_NOT_FOUND);
	} else if (record_decode_header(value.data, value.len, &h) != 0) {
		kv_txn_fail(&t, DIRAUTH_ERR_STORE);
	} else if (h.sequence != sequence) {
		struct sequence_pick pick = {sequence, {NULL, 0}, false};
		int walked =
		    kv_txn_walk_prefix(&t, store->previous, key, sizeof key, sequence_pick_visit, &pick);
		if (walked < 0)
			kv_txn_fail(&t, walked);
		else if (!pick.found)
			kv_txn_fail(&t, DIRAUTH_ERR_NOT_FOUND);
		else
			value = pick.value;
	}
	if (!t.rc) {
		struct keys_context keys_context = {store, NULL};
		struct record_keys keys = {&keys_context, keys_lookup, keys_intern};
		buffer_reset(note);
		kv_txn_fail(
		    &t, record_decode_note(value.data, value.len, namespace_name, service_id, &keys, note));
	}
	kv_txn_abort(&t);
	return t.rc;
}

/* ---- snapshots ---- */

static int body_info_encode(const struct store_body_info *info, uint8_t out[ENCODING_COUNT * 40])
{
	for (int e = 0; e < ENCODING_COUNT; e++) {
		put_uint(out + e * 40, info->size[e], 8);
		memcpy(out + e * 40 + 8, info->sha256[e], 32);
	}
	return 0;
}

static int body_info_decode(const struct kv_val *value, struct store_body_info *info)
{
	if (value->len != ENCODING_COUNT * 40)
		return DIRAUTH_ERR_STORE;
	for (int e = 0; e < ENCODING_COUNT; e++) {
		info->size[e] = get_uint(value->data + e * 40, 8);
		memcpy(info->sha256[e], value->data + e * 40 + 8, 32);
	}
	return 0;
}

int store_snapshot_put(struct store *store, const char *namespace_name, uint64_t epoch, const uint8_t *header,
                       size_t header_len, const struct store_body_info *info)
{
	struct kv_txn t;
	struct kv_val found;
	uint8_t key[STORE_EPOCH_KEY_LEN], ns_key[STORE_NS_LEN], field[8], encoded[ENCODING_COUNT * 40];
	size_t namespace_len;
	uint16_t ns = 0;

	if (!store || !header || !header_len)
		return DIRAUTH_ERR_SYNTAX;
	int rc = check_name(namespace_name, &namespace_len);
	if (rc)
		return rc;
	if (header_len > STORE_HEADER_MAX)
		return DIRAUTH_ERR_BOUNDS;
	kv_txn_begin(store->env, &t, KV_WRITE);
	namespace_intern(&t, store, namespace_name, namespace_len, &ns);
	put_uint(ns_key, ns, STORE_NS_LEN);
	if (kv_txn_get(&t, store->latest, ns_key, sizeof ns_key, &found)) {
		if (found.len != 8)
			kv_txn_fail(&t, DIRAUTH_ERR_STORE);
		else if (epoch <= get_uint(found.data, 8))
			kv_txn_fail(&t, DIRAUTH_ERR_ROLLBACK);
	}
	epoch_key(key, ns, epoch);
	put_uint(field, epoch, 8);
	kv_txn_put(&t, store->snapshots, key, sizeof key, header, header_len);
	if (info) {
		body_info_encode(info, encoded);
		kv_txn_put(&t, store->bodies, key, sizeof key, encoded, sizeof encoded);
	}
	kv_txn_put(&t, store->latest, ns_key, sizeof ns_key, field, 8);
	return kv_txn_commit(&t);
}

int store_snapshot_get(struct store *store, const char *namespace_name, uint64_t epoch, struct buffer *header,
                       struct store_body_info *info)
{
	struct kv_txn t;
	struct kv_val found;
	uint8_t key[STORE_EPOCH_KEY_LEN];
	uint16_t ns;

	if (!store || !header)
		return DIRAUTH_ERR_SYNTAX;
	int rc = namespace_read_begin(store, namespace_name, &t, &ns);
	if (rc)
		return rc;
	epoch_key(key, ns, epoch);
	if (!kv_txn_get(&t, store->snapshots, key, sizeof key, &found)) {
		kv_txn_fail(&t, DIRAUTH_ERR_NOT_FOUND);
	} else {
		buffer_reset(header);
		kv_txn_fail(&t, buffer_append(header, found.data, found.len));
	}
	if (info && !t.rc) {
		if (!kv_txn_get(&t, store->bodies, key, sizeof key, &found))
			kv_txn_fail(&t, DIRAUTH_ERR_STALE);
		else
			kv_txn_fail(&t, body_info_decode(&found, info));
	}
	kv_txn_abort(&t);
	return t.rc;
}

struct header_walk {
	store_header_visitor visit;
	void *context;
};

static int header_visit(void *context, struct kv_val key, struct kv_val value)
{
	struct header_walk *w = context;
	if (key.len != STORE_EPOCH_KEY_LEN)
		return DIRAUTH_ERR_STORE;
	return w->visit(w->context, get_uint(key.data + STORE_NS_LEN, 8), value.data, value.len);
}

int store_snapshot_foreach(struct store *store, const char *namespace_name, uint64_t from,
                           store_header_visitor visit, void *context)
{
	struct kv_txn t;
	uint8_t start[STORE_EPOCH_KEY_LEN];
	uint16_t ns;
	if (!store || !visit)
		return DIRAUTH_ERR_SYNTAX;
	int rc = namespace_read_begin(store, namespace_name, &t, &ns);
	if (rc)
		return rc == DIRAUTH_ERR_NOT_FOUND ? 0 : rc;
	epoch_key(start, ns, from);
	struct header_walk w = {visit, context};
	rc = kv_txn_walk_from(&t, store->snapshots, start, STORE_NS_LEN, start, sizeof start, header_visit,
	                      &w);
	kv_txn_abort(&t);
	return rc;
}

int store_snapshot_latest(struct store *store, const char *namespace_name, uint64_t *epoch)
{
	struct kv_txn t;
	struct kv_val found;
	uint16_t ns;

	if (!store || !epoch)
		return DIRAUTH_ERR_SYNTAX;
	int rc = namespace_read_begin(store, namespace_name, &t, &ns);
	if (rc)
		return rc;
	uint8_t ns_key[STORE_NS_LEN];
	put_uint(ns_key, ns, STORE_NS_LEN);
	if (kv_txn_get(&t, store->latest, ns_key, sizeof ns_key, &found)) {
		if (found.len != 8)
			kv_txn_fail(&t, DIRAUTH_ERR_STORE);
		else
			*epoch = get_uint(found.data, 8);
	} else {
		kv_txn_fail(&t, DIRAUTH_ERR_NOT_FOUND);
	}
	kv_txn_abort(&t);
	return t.rc;
}

int store_body_open(struct store *store, const char *namespace_name, uint64_t epoch,
                    enum content_encoding encoding, int *fd, uint64_t *size)
{
	struct buffer header;
	struct store_body_info info;
	char path[STORE_PATH_MAX];
	if ((unsigned)encoding >= ENCODING_COUNT)
		return DIRAUTH_ERR_SYNTAX;
	buffer_init(&header);
	int rc = store_snapshot_get(store, namespace_name, epoch, &header, &info);
	buffer_free(&header);
	if (rc)
		return rc;
	if ((rc = body_path(store, namespace_name, epoch, encoding, false, path, sizeof path)))
		return rc;
	int file = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (file < 0)
		return errno == ENOENT ? DIRAUTH_ERR_STALE : DIRAUTH_ERR_IO;
	struct stat st;
	if (fstat(file, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(file);
		return DIRAUTH_ERR_IO;
	}
	if ((uint64_t)st.st_size != info.size[encoding]) {
		close(file);
		return DIRAUTH_ERR_MISMATCH;
	}
	*fd = file;
	*size = info.size[encoding];
	return 0;
}

int store_body_check(struct store *store, const char *namespace_name, uint64_t epoch,
                     enum content_encoding encoding)
{
	struct buffer header;
	struct store_body_info info;
	int fd;
	uint64_t size;
	int rc = store_body_open(store, namespace_name, epoch, encoding, &fd, &size);
	if (rc)
		return rc;
	buffer_init(&header);
	rc = store_snapshot_get(store, namespace_name, epoch, &header, &info);
	buffer_free(&header);
	struct crypto_sha256_stream *digest = crypto_sha256_new();
	uint8_t chunk[64 * 1024], computed[32];
	if (!rc && !digest)
		rc = DIRAUTH_ERR_NOMEM;
	while (!rc) {
		ssize_t n = read(fd, chunk, sizeof chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			rc = DIRAUTH_ERR_IO;
		if (n <= 0)
			break;
		rc = crypto_sha256_update(digest, chunk, (size_t)n);
	}
	if (!rc) {
		rc = crypto_sha256_finish(digest, computed);
		digest = NULL;
		if (!rc && memcmp(computed, info.sha256[encoding], 32) != 0)
			rc = DIRAUTH_ERR_MISMATCH;
	}
	crypto_sha256_free(digest);
	close(fd);
	return rc;
}

/* The epochs of namespace ns's stored bodies older than keep_from. */
struct retain_collect {
	uint64_t keep_from;
	uint64_t *epochs;
	size_t count, cap;
};

static int retain_visit(void *context, struct kv_val key, struct kv_val value)
{
	(void)value;
	struct retain_collect *c = context;
	if (key.len != STORE_EPOCH_KEY_LEN)
		return DIRAUTH_ERR_STORE;
	uint64_t epoch = get_uint(key.data + STORE_NS_LEN, 8);
	if (epoch >= c->keep_from || c->count == STORE_PRUNE_CHUNK)
		return 1;
	if (c->count == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 16;
		uint64_t *grown = realloc(c->epochs, cap * sizeof *grown);
		if (!grown)
			return DIRAUTH_ERR_NOMEM;
		c->epochs = grown;
		c->cap = cap;
	}
	c->epochs[c->count++] = epoch;
	return 0;
}

int store_retain(struct store *store, const char *namespace_name, uint64_t keep_from)
{
	uint16_t ns;
	int rc;
	for (;;) {
		struct retain_collect c = {keep_from, NULL, 0, 0};
		struct kv_txn t;
		/* A namespace never recorded keeps no bodies. */
		if ((rc = namespace_read_begin(store, namespace_name, &t, &ns)) != 0)
			return rc == DIRAUTH_ERR_NOT_FOUND ? 0 : rc;
		uint8_t prefix[STORE_NS_LEN];
		put_uint(prefix, ns, STORE_NS_LEN);
		int walked = kv_txn_walk_prefix(&t, store->bodies, prefix, sizeof prefix, retain_visit, &c);
		rc = t.rc ? t.rc : walked < 0 ? walked : 0;
		kv_txn_abort(&t);
		if (rc || c.count == 0) {
			free(c.epochs);
			return rc;
		}
		/* Files first: a crash between leaves an entry without files, which reads as removed. */
		for (size_t i = 0; i < c.count && !rc; i++)
			rc = body_remove_files(store, namespace_name, c.epochs[i]);
		kv_txn_begin(store->env, &t, KV_WRITE);
		for (size_t i = 0; i < c.count && !rc; i++) {
			uint8_t key[STORE_EPOCH_KEY_LEN];
			epoch_key(key, ns, c.epochs[i]);
			kv_txn_delete(&t, store->bodies, key, sizeof key);
		}
		if (rc)
			kv_txn_fail(&t, rc);
		rc = kv_txn_commit(&t);
		free(c.epochs);
		if (rc)
			return rc;
	}
}

/* ---- backup ---- */

/* Copies a file into directory/name, 0600, fsynced. */
static int copy_file(const char *from, const char *directory, const char *name)
{
	char to[STORE_PATH_MAX];
	if (snprintf(to, sizeof to, "%s/%s", directory, name) >= (int)sizeof to)
		return DIRAUTH_ERR_BOUNDS;
	int in = open(from, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (in < 0)
		return errno == ENOENT ? 0 : DIRAUTH_ERR_IO; /* removed by retention meanwhile */
	int out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	int rc = out < 0 ? DIRAUTH_ERR_IO : 0;
	uint8_t chunk[64 * 1024];
	while (!rc) {
		ssize_t n = read(in, chunk, sizeof chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? DIRAUTH_ERR_IO : 0;
			break;
		}
		for (ssize_t done = 0; done < n && !rc;) {
			ssize_t w = write(out, chunk + done, (size_t)(n - done));
			if (w < 0 && errno == EINTR)
				continue;
			rc = w <= 0 ? DIRAUTH_ERR_IO : 0;
			done += w > 0 ? w : 0;
		}
	}
	if (!rc && fsync(out) != 0)
		rc = DIRAUTH_ERR_IO;
	if (out >= 0)
		close(out);
	close(in);
	return rc;
}

int store_backup(struct store *store, const char *directory)
{
	if (!store || !directory || !*directory)
		return DIRAUTH_ERR_SYNTAX;
	int rc = kv_env_copy_to_directory(store->env, directory, true);
	if (rc)
		return rc;
	char bodies[STORE_PATH_MAX], source[STORE_PATH_MAX];
	if (snprintf(bodies, sizeof bodies, "%s/bodies", directory) >= (int)sizeof bodies ||
	    snprintf(source, sizeof source, "%s/bodies", store->path) >= (int)sizeof source)
		return DIRAUTH_ERR_BOUNDS;
	if ((rc = make_directory(bodies)))
		return rc;
	DIR *top = opendir(source);
	if (!top)
		return DIRAUTH_ERR_IO;
	struct dirent *entry;
	while (!rc && (entry = readdir(top))) {
		if (entry->d_name[0] == '.')
			continue;
		char from_dir[STORE_PATH_MAX], to_dir[STORE_PATH_MAX];
		if (snprintf(from_dir, sizeof from_dir, "%s/%s", source, entry->d_name) >=
		        (int)sizeof from_dir ||
		    snprintf(to_dir, sizeof to_dir, "%s/%s", bodies, entry->d_name) >= (int)sizeof to_dir) {
			rc = DIRAUTH_ERR_BOUNDS;
			break;
		}
		if ((rc = make_directory(to_dir)))
			break;
		DIR *inner = opendir(from_dir);
		if (!inner) {
			rc = DIRAUTH_ERR_IO;
			break;
		}
		struct dirent *file;
		while (!rc && (file = readdir(inner))) {
			if (file->d_name[0] == '.' || strstr(file->d_name, ".part"))
				continue;
			char from[STORE_PATH_MAX];
			if (snprintf(from, sizeof from, "%s/%s", from_dir, file->d_name) >= (int)sizeof from)
				rc = DIRAUTH_ERR_BOUNDS;
			else
				rc = copy_file(from, to_dir, file->d_name);
		}
		closedir(inner);
		if (!rc)
			rc = sync_directory(to_dir);
	}
	closedir(top);
	if (!rc)
		rc = sync_directory(bodies);
	return rc;
}

/* ---- statistics ---- */

int store_statistics(struct store *store, struct store_statistics *out)
{
	struct kv_env_info info;
	if (!store || !out)
		return DIRAUTH_ERR_SYNTAX;
	pthread_mutex_lock(&store->lock);
	*out = store->statistics;
	pthread_mutex_unlock(&store->lock);
	int rc = kv_env_info(store->env, &info);
	out->map_size = info.map_size;
	out->map_used = info.used;
	if (rc == 0)
		rc = kv_env_free(store->env, &out->map_free);
	return rc;
}

int store_namespace_usage(struct store *store, const char *namespace_name, struct store_namespace_usage *out)
{
	struct kv_txn t;
	uint16_t ns;
	if (!store || !out)
		return DIRAUTH_ERR_SYNTAX;
	memset(out, 0, sizeof *out);
	int rc = namespace_read_begin(store, namespace_name, &t, &ns);
	if (rc)
		return rc == DIRAUTH_ERR_NOT_FOUND ? 0 : rc;
	usage_get(&t, store, ns, out);
	rc = t.rc;
	kv_txn_abort(&t);
	return rc;
}
