/*
 * registrations.c: the registrations table of the store (registrations.h).
 *
 * Databases (integers big-endian and fixed-width; every length is written and checked on
 * reading, so a damaged record is DIRAUTH_ERR_STORE, never read past its end; "ns" is a
 * namespace's u16 id, internal.h):
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
 *                   record's slot (record_codec.h) is taken from meta "next_slot" when it is
 *                   written, so a batch's entries land together after those written before with
 *                   the same expiry; a record written before format 3 has none and its entry is
 *                   u64 expires, ns, service id -> empty
 *   usage           ns -> u64 records, u64 bytes, u64 endpoints: what records holds, for the
 *                   bounds (format 4; before it, without the endpoints)
 * and meta "next_key" -> u32, "next_slot" -> u64.
 *
 * Every write is a piece of the engine's group commit (engine.h): a registration is applied in
 * the committer's batch, stamped there, checked against the state the earlier ones in the batch
 * left. Stamps never go down: two submitters whose clocks straddle a cut-off may reach the
 * committer in either order, and a request stamped E after one stamped E + 1 would add to epoch E
 * after a replacement stamped E + 1 had freed room under the namespace's bounds, room that epoch
 * E's view still fills with the replaced version. In stamp order, every version an epoch's view
 * holds was, when the last request stamped for that epoch was committed, a namespace's latest,
 * and so within the bounds checked then. A registration replacing a version stamped for an
 * earlier epoch moves that version to previous: that epoch's snapshot still holds it, whether it
 * is sealed yet or not. Several versions of one service can be kept at once (one per epoch not
 * yet sealed past), so that a version replaced before its epoch is sealed does not take the
 * sealed epoch's version with it.
 *
 * What the statements table withdraws (statements.h) is read here, in the same transactions: a
 * registration it refuses is refused by the committer, and a version it hides is left out of a
 * view.
 */
#include "server/store/registrations.h"

#include "server/store/internal.h"

#include "kv/kv.h"
#include "base/error.h"
#include "schema/note.h"
#include "schema/registration.h"
#include "server/store/engine.h"
#include "server/store/record_codec.h"
#include "server/store/statements.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

size_t registrations_databases(struct store *store, struct kv_database *out)
{
	const struct kv_database mine[] = {
	    {"provider_keys", &store->provider_keys},
	    {"services", &store->services},
	    {"endpoints", &store->endpoints},
	    {"records", &store->records},
	    {"previous", &store->previous},
	    {"replaced", &store->replaced},
	    {"expiry", &store->expiry},
	    {"usage", &store->usage},
	};
	memcpy(out, mine, sizeof mine);
	return sizeof mine / sizeof mine[0];
}

/* ---- the provider key cache ---- */

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

static int keys_cached(struct store *store, uint32_t ref, struct note_verifier *out)
{
	pthread_mutex_lock(&store->keys_lock);
	int rc = ref >= 1 && ref <= store->key_count ? 0 : DIRAUTH_ERR_NOT_FOUND;
	if (!rc)
		*out = store->keys[ref - 1];
	pthread_mutex_unlock(&store->keys_lock);
	return rc;
}

/* A reader may meet a record committed a moment before the committer's refresh
 * (registrations_keys_refresh), or after a refresh that failed (no memory): a ref past the cache
 * is then loaded before it is refused. */
static int keys_lookup(void *context, uint32_t ref, struct note_verifier *out)
{
	struct keys_context *k = context;
	if (keys_cached(k->store, ref, out) == 0)
		return 0;
	if (ref == 0 || k->t || registrations_keys_refresh(k->store) != 0)
		return DIRAUTH_ERR_STORE;
	return keys_cached(k->store, ref, out) == 0 ? 0 : DIRAUTH_ERR_STORE;
}

/* Finds key's ref, or records a new one in the write transaction. A new key enters the cache
 * only once its transaction commits (registrations_keys_refresh); until then refs past the cache
 * are pending. */
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

int registrations_keys_refresh(struct store *store)
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

/* ---- applying registrations (committer thread only) ---- */

/* A registration on its way to the committer. */
struct registration_work {
	struct store *store;
	const struct store_registration *registration;
	bool compact; /* record_rebuilds for it, found by the submitter's thread */
	store_submission_done done;
	void *context;
};

/* Applies one registration in batch, as mode says (engine.h). Every refusal of a registration is
 * decided before its first write (the checks only read), so it runs as a step of the batch; a
 * step that fails after its first write (its namespace is new, or a write or the record's
 * encoding fails) sets *partial. */
static int registration_apply(void *context, struct kv_txn *batch, const struct store_stamp *stamping,
                              enum store_apply_mode mode, bool *partial)
{
	const struct registration_work *work = context;
	struct store *store = work->store;
	const struct store_registration *reg = work->registration;
	bool compact = work->compact;
	uint64_t stamp = stamping->stamp;
	struct kv_txn t;
	struct kv_val found;
	struct buffer value;
	struct service_owner owner;
	struct store_namespace_usage usage;
	uint8_t key[STORE_RECORD_KEY_LEN], index_key[STORE_EXPIRY_OLD_LEN];
	size_t namespace_len = strlen(reg->namespace_name), provider_len = strlen(reg->provider);
	uint16_t ns = 0;

	buffer_init(&value);
	if (mode == STORE_APPLY_NESTED)
		kv_txn_begin_nested(batch, &t);
	else
		kv_txn_begin_step(batch, &t);
	/* A new namespace is written before the checks: a step refused after it is partial. */
	bool wrote =
	    namespace_find(&t, store, reg->namespace_name, namespace_len, &ns) == DIRAUTH_ERR_NOT_FOUND;
	if (wrote)
		namespace_intern(&t, store, reg->namespace_name, namespace_len, &ns);
	/* Revoked or deregistered: refused first. */
	statements_refuse_registration(&t, store, ns, reg->service_id, reg->sequence, reg->endpoint_ids,
	                               reg->endpoint_count);
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
	*partial = rc && wrote && mode == STORE_APPLY_STEP;
	buffer_free(&value);
	return rc;
}

/* ---- submissions and reads ---- */

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

static void registration_done(void *context, int result, uint64_t stamp)
{
	struct registration_work *work = context;
	work->done(work->context, result, stamp);
	free(work);
}

int store_registration_submit_async(struct store *store, const struct store_registration *r,
                                    store_submission_done done, void *context)
{
	int rc = check_registration(r);
	if (rc)
		return rc;
	if (!store || !done)
		return DIRAUTH_ERR_SYNTAX;
	struct registration_work *work = malloc(sizeof *work);
	if (!work)
		return DIRAUTH_ERR_NOMEM;
	/* The rebuild check is the most work of keeping a record that needs no transaction: it is
	 * done here, in the submitter's thread, not in the committer's, the one serial stage. */
	*work = (struct registration_work){
	    .store = store,
	    .registration = r,
	    .compact = record_rebuilds(r->namespace_name, r->service_id, r->sequence, r->expires, r->note,
	                               r->note_len, r->parsed, r->signature),
	    .done = done,
	    .context = context,
	};
	struct store_work engine_work = {
	    .apply = registration_apply,
	    .context = work,
	    .epoch = r->epoch,
	    .done = registration_done,
	    .done_context = work,
	};
	if ((rc = store_engine_submit(store->engine, &engine_work)) != 0)
		free(work);
	return rc;
}

int store_registration_submit(struct store *store, const struct store_registration *r, uint64_t *stamp)
{
	struct store_waiter waiter;
	store_waiter_init(&waiter);
	return store_waiter_wait(
	    &waiter, store_registration_submit_async(store, r, store_waiter_done, &waiter), stamp);
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

/* The name of namespace id ns into out, in t; fails t (DIRAUTH_ERR_STORE) when there is none. */
static int namespace_name_of(struct kv_txn *t, struct store *store, uint16_t ns, char out[STORE_NAME_MAX + 1])
{
	struct name_search search = {ns, out, 0};
	kv_txn_walk_prefix(t, store->namespaces, NULL, 0, name_search_visit, &search);
	if (!t->rc && !search.found)
		kv_txn_fail(t, DIRAUTH_ERR_STORE);
	return t->rc;
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
	if (!t.rc && namespace_name_of(&t, store, owner.ns, namespace_name) == 0)
		memcpy(provider, owner.provider, strlen(owner.provider) + 1);
	kv_txn_abort(&t);
	return t.rc;
}

/* ---- pruning at the seal ---- */

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
			statements_forget_health(&t, store, key);
		}
	}
	size_t count = c.count;
	free(c.entries);
	int rc = kv_txn_commit(&t);
	return rc ? rc : (int)count;
}

int registrations_prune(struct store *store, uint64_t epoch, uint64_t valid_after)
{
	/* What the sealed epoch cannot hold any more: versions replaced by registrations it holds,
	 * and records expired when it starts; a chunk per write transaction, until a chunk finds
	 * nothing (an epoch may replace or expire many more than one chunk). */
	int pruned;
	while ((pruned = prune_chunk(store, false, epoch, epoch)) > 0)
		;
	if (pruned < 0)
		return pruned;
	while ((pruned = prune_chunk(store, true, valid_after, epoch)) > 0)
		;
	return pruned < 0 ? pruned : 0;
}

/* ---- the view of the sealed epoch ---- */

struct view_walk {
	struct store *store;
	struct kv_txn *t;
	const char *namespace_name;
	uint64_t epoch;
	uint64_t valid_after;
	const uint8_t *after;       /* the service id the walk starts above; NULL: from the first */
	store_record_visitor visit; /* one of the two visitors */
	store_lifecycle_visitor lifecycle_visit;
	void *context;
	struct buffer note;
	struct store_statement *health; /* for lifecycle_visit: the record's health statements */
	size_t health_count, health_cap;
};

static int view_visit(void *context, struct kv_val key, struct kv_val value)
{
	struct view_walk *w = context;
	struct record_header h;
	if (key.len != STORE_RECORD_KEY_LEN || record_decode_header(value.data, value.len, &h) != 0)
		return DIRAUTH_ERR_STORE;
	if (w->after && memcmp(key.data + STORE_NS_LEN, w->after, 32) == 0)
		return 0; /* where the walk resumes: the last record of the page before */
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
	uint16_t ns = (uint16_t)get_uint(key.data, STORE_NS_LEN);
	rc = statements_view_hides(w->t, w->store, ns, key.data + STORE_NS_LEN, h.sequence, w->epoch,
	                           w->note.data, w->note.len);
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
	if (!w->lifecycle_visit)
		return w->visit(w->context, &record);
	rc = statements_health_held(w->t, w->store, ns, record.service_id, w->epoch, &w->health,
	                            &w->health_count, &w->health_cap);
	return rc ? rc : w->lifecycle_visit(w->context, &record, w->health, w->health_count);
}

/* Walks the sealed view of a namespace (w's store, epoch and visitors set) in one read
 * transaction. */
static int view_walk_run(struct view_walk *w, const char *namespace_name)
{
	struct kv_txn t;
	size_t namespace_len;
	uint16_t ns;

	/* The name is judged before the epoch, and a namespace never recorded has nothing to visit. */
	int rc = check_name(namespace_name, &namespace_len);
	if (rc)
		return rc;
	uint64_t sealed;
	if (store_engine_sealed(w->store->engine, &sealed) != 0 || sealed != w->epoch)
		return DIRAUTH_ERR_STALE;
	if ((rc = namespace_read_begin(w->store, namespace_name, &t, &ns)) != 0)
		return rc == DIRAUTH_ERR_NOT_FOUND ? 0 : rc;
	uint8_t prefix[STORE_NS_LEN];
	put_uint(prefix, ns, STORE_NS_LEN);
	w->t = &t;
	w->namespace_name = namespace_name;
	buffer_init(&w->note);
	uint8_t start[STORE_RECORD_KEY_LEN];
	memcpy(start, prefix, sizeof prefix);
	if (w->after)
		memcpy(start + STORE_NS_LEN, w->after, 32);
	int result = w->after
	                 ? kv_txn_walk_from(&t, w->store->records, prefix, sizeof prefix, start, sizeof start,
	                                    view_visit, w)
	                 : kv_txn_walk_prefix(&t, w->store->records, prefix, sizeof prefix, view_visit, w);
	buffer_free(&w->note);
	free(w->health);
	rc = t.rc;
	kv_txn_abort(&t);
	return rc ? rc : result;
}

int store_view_foreach(struct store *store, const char *namespace_name, uint64_t epoch, uint64_t valid_after,
                       store_record_visitor visit, void *context)
{
	return store_view_foreach_after(store, namespace_name, epoch, valid_after, NULL, visit, context);
}

int store_view_foreach_after(struct store *store, const char *namespace_name, uint64_t epoch,
                             uint64_t valid_after, const uint8_t after[32], store_record_visitor visit,
                             void *context)
{
	if (!store || !visit)
		return DIRAUTH_ERR_SYNTAX;
	struct view_walk w = {.store = store,
	                      .epoch = epoch,
	                      .valid_after = valid_after,
	                      .after = after,
	                      .visit = visit,
	                      .context = context};
	return view_walk_run(&w, namespace_name);
}

int store_lifecycle_view_foreach(struct store *store, const char *namespace_name, uint64_t epoch,
                                 uint64_t valid_after, store_lifecycle_visitor visit, void *context)
{
	if (!store || !visit)
		return DIRAUTH_ERR_SYNTAX;
	struct view_walk w = {.store = store,
	                      .epoch = epoch,
	                      .valid_after = valid_after,
	                      .lifecycle_visit = visit,
	                      .context = context};
	return view_walk_run(&w, namespace_name);
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

/* The note of the registration of service_id (namespace id ns, named namespace_name) of that
 * sequence, into note (replaced), in t: its latest, or a kept version. Returns 0 or
 * DIRAUTH_ERR_NOT_FOUND with t as it was, or fails t. */
static int registration_note_read(struct kv_txn *t, struct store *store, uint16_t ns,
                                  const char *namespace_name, const uint8_t *service_id, uint64_t sequence,
                                  struct buffer *note)
{
	struct kv_val value;
	struct record_header h;
	uint8_t key[STORE_RECORD_KEY_LEN];
	record_key(key, ns, service_id);
	if (!kv_txn_get(t, store->records, key, sizeof key, &value))
		return t->rc ? t->rc : DIRAUTH_ERR_NOT_FOUND;
	if (record_decode_header(value.data, value.len, &h) != 0) {
		kv_txn_fail(t, DIRAUTH_ERR_STORE);
		return t->rc;
	}
	if (h.sequence != sequence) {
		struct sequence_pick pick = {sequence, {NULL, 0}, false};
		int walked =
		    kv_txn_walk_prefix(t, store->previous, key, sizeof key, sequence_pick_visit, &pick);
		if (walked < 0) {
			kv_txn_fail(t, walked);
			return t->rc;
		}
		if (!pick.found)
			return DIRAUTH_ERR_NOT_FOUND;
		value = pick.value;
	}
	struct keys_context keys_context = {store, NULL};
	struct record_keys keys = {&keys_context, keys_lookup, keys_intern};
	buffer_reset(note);
	kv_txn_fail(t, record_decode_note(value.data, value.len, namespace_name, service_id, &keys, note));
	return t->rc;
}

int store_registration_get(struct store *store, const char *namespace_name, const uint8_t service_id[32],
                           uint64_t sequence, struct buffer *note)
{
	struct kv_txn t;
	uint16_t ns;

	if (!store || !service_id || !note)
		return DIRAUTH_ERR_SYNTAX;
	int rc = namespace_read_begin(store, namespace_name, &t, &ns);
	if (rc)
		return rc;
	rc = registration_note_read(&t, store, ns, namespace_name, service_id, sequence, note);
	kv_txn_abort(&t);
	return rc;
}

int store_service_state(struct store *store, const uint8_t service_id[32], const uint8_t *endpoint_ids,
                        size_t endpoint_count, struct store_service_state *out, struct buffer *note)
{
	struct kv_txn t;
	struct kv_val found;
	struct service_owner owner;

	if (!store || !service_id || !out || !note || (endpoint_count && !endpoint_ids))
		return DIRAUTH_ERR_SYNTAX;
	memset(out, 0, sizeof *out);
	kv_txn_begin(store->env, &t, KV_READ);
	if (!kv_txn_get(&t, store->services, service_id, STORE_ID_LEN, &found))
		kv_txn_fail(&t, DIRAUTH_ERR_NOT_FOUND);
	else if (!store_service_decode(&found, &owner))
		kv_txn_fail(&t, DIRAUTH_ERR_STORE);
	if (!t.rc && namespace_name_of(&t, store, owner.ns, out->namespace_name) == 0) {
		memcpy(out->provider, owner.provider, strlen(owner.provider) + 1);
		int rc = registration_note_read(&t, store, owner.ns, out->namespace_name, service_id,
		                                owner.highest_sequence, note);
		out->current = rc == 0;
		if (out->current)
			out->withdrawal =
			    statements_withdrawal(&t, store, owner.ns, service_id, owner.highest_sequence,
			                          endpoint_ids, endpoint_count);
	}
	int rc = t.rc;
	kv_txn_abort(&t);
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
/* ---- the format upgrade ---- */

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
void registrations_upgrade_usage(struct kv_txn *t, struct store *store)
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
