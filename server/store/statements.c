/*
 * statements.c: the statements table of the store: health statements, revocations and
 * deregistrations (statements.h).
 *
 * Databases (keys big-endian; "ns" the namespace's u16 id; a "target" is a service id then 0x00
 * for the whole service, or 0x01 and an endpoint id, so that a service sorts before its endpoints):
 *   health           ns, service id, endpoint id, u64 stamp -> u64 issued-at, u64 sequence,
 *                    32 bytes digest, the note. Deleted with the service's record when it expires
 *                    (statements_forget_health, from the seal's pruning)
 *   revocations      ns, target -> u64 stamp, u64 sequence, 32 bytes digest, the note
 *   revocation_keys  verifier key text, 0x00, u64 sequence -> 32 bytes digest: every (key,
 *                    sequence) accepted, so a replay is known whatever the target
 *   deregistrations  ns, service id, u64 sequence withdrawn -> u64 stamp, 32 bytes digest, the note
 *   statements       32 bytes digest -> u8 kind (1 health, 2 revocation), the key in its database
 *
 * Versions. A health statement or deregistration accepted while the sealed epoch's view still
 * holds an earlier one does not replace it: each is kept under its stamp, and the view of epoch E
 * takes, per endpoint, the highest sequence stamped at or before E (per service, every
 * deregistration stamped at or before E). A version is removed in the transaction that adds a new
 * one, once another version with a higher sequence is visible to every epoch from the sealed one
 * on that sees it (its stamp, raised to the sealed epoch, is no later): so no view that can still
 * be read changes, and a few versions per endpoint and service remain. Revocations have no
 * versions: the first per target stays for ever.
 *
 * Every write happens in the committer's batch (engine.h), stamped there, so a statement and the
 * registrations it must refuse are judged in one order, and a seal waits for it like for a
 * registration.
 */
#include "server/store/statements.h"

#include "server/store/internal.h"

#include "kv/kv.h"
#include "schema/deregistration.h"
#include "base/error.h"
#include "schema/health.h"
#include "schema/note.h"
#include "schema/registration.h"
#include "schema/revocation.h"
#include "server/store/engine.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define SERVICE_PREFIX_LEN   (STORE_NS_LEN + STORE_ID_LEN)
#define HEALTH_PREFIX_LEN    (SERVICE_PREFIX_LEN + STORE_ID_LEN)
#define HEALTH_KEY_LEN       (HEALTH_PREFIX_LEN + 8)
#define HEALTH_VALUE_FIXED   (8 + 8 + 32)
#define TARGET_SERVICE_LEN   (SERVICE_PREFIX_LEN + 1)
#define TARGET_ENDPOINT_LEN  (TARGET_SERVICE_LEN + STORE_ID_LEN)
#define REVOCATION_FIXED     (8 + 8 + 32)
#define DEREG_KEY_LEN        (SERVICE_PREFIX_LEN + 8)
#define DEREG_FIXED          (8 + 32)
#define KEY_TEXT_MAX         (NOTE_VERIFIER_KEY_MAX + 1 + 8)
#define STATEMENT_HEALTH     1
#define STATEMENT_REVOCATION 2

size_t statements_databases(struct store *store, struct kv_database *out)
{
	const struct kv_database mine[] = {
	    {"health", &store->health},
	    {"revocations", &store->revocations},
	    {"revocation_keys", &store->revocation_keys},
	    {"deregistrations", &store->deregistrations},
	    {"statements", &store->statements},
	};
	memcpy(out, mine, sizeof mine);
	return sizeof mine / sizeof mine[0];
}

/* ---- keys ---- */

static void service_prefix(uint8_t key[SERVICE_PREFIX_LEN], uint16_t ns, const uint8_t *service_id)
{
	put_uint(key, ns, STORE_NS_LEN);
	memcpy(key + STORE_NS_LEN, service_id, STORE_ID_LEN);
}

/* The key of a revocation's target; returns its length. */
static size_t target_key(uint8_t key[TARGET_ENDPOINT_LEN], uint16_t ns, const uint8_t *service_id,
                         const uint8_t *endpoint_id)
{
	service_prefix(key, ns, service_id);
	key[SERVICE_PREFIX_LEN] = endpoint_id ? 1 : 0;
	if (!endpoint_id)
		return TARGET_SERVICE_LEN;
	memcpy(key + TARGET_SERVICE_LEN, endpoint_id, STORE_ID_LEN);
	return TARGET_ENDPOINT_LEN;
}

/* "<verifier key>\0" then the u64 sequence, or without the sequence (a prefix); returns the
 * length. */
static size_t key_sequence_key(uint8_t out[KEY_TEXT_MAX], const struct note_verifier *key, bool with_sequence,
                               uint64_t sequence)
{
	char text[NOTE_VERIFIER_KEY_MAX + 1];
	note_verifier_format(key, text);
	size_t len = strlen(text);
	memcpy(out, text, len);
	out[len++] = 0;
	if (with_sequence) {
		put_uint(out + len, sequence, 8);
		len += 8;
	}
	return len;
}

/* ---- versions ---- */

/* The versions of one endpoint's health or one service's deregistrations. */
struct version {
	uint64_t stamp;
	uint64_t sequence;
	uint8_t key[HEALTH_KEY_LEN]; /* the longer of the two keys */
	size_t key_len;
	uint8_t digest[32];
};

struct versions {
	struct version *items;
	size_t count, cap;
	bool health; /* health keys and values; else deregistrations' */
};

static int versions_visit(void *context, struct kv_val key, struct kv_val value)
{
	struct versions *v = context;
	size_t key_len = v->health ? HEALTH_KEY_LEN : DEREG_KEY_LEN;
	size_t fixed = v->health ? HEALTH_VALUE_FIXED : DEREG_FIXED;
	if (key.len != key_len || value.len < fixed)
		return DIRAUTH_ERR_STORE;
	if (v->count == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 4;
		struct version *grown = realloc(v->items, cap * sizeof *grown);
		if (!grown)
			return DIRAUTH_ERR_NOMEM;
		v->items = grown;
		v->cap = cap;
	}
	struct version *item = &v->items[v->count++];
	uint64_t last = get_uint(key.data + key_len - 8, 8);
	item->stamp = v->health ? last : get_uint(value.data, 8);
	item->sequence = v->health ? get_uint(value.data + 8, 8) : last;
	memcpy(item->digest, value.data + fixed - 32, 32);
	memcpy(item->key, key.data, key.len);
	item->key_len = key.len;
	return 0;
}

static uint64_t raised(uint64_t stamp, uint64_t sealed)
{
	return stamp > sealed ? stamp : sealed;
}

/* 1 when another version, or the new one (stamp, sequence), has a higher sequence and is visible
 * to every epoch from the sealed one on that sees item. */
static bool version_dominated(const struct versions *v, const struct version *item, uint64_t stamp,
                              uint64_t sequence, uint64_t sealed)
{
	if (sequence > item->sequence && raised(stamp, sealed) <= raised(item->stamp, sealed))
		return true;
	for (size_t i = 0; i < v->count; i++)
		if (v->items[i].sequence > item->sequence &&
		    raised(v->items[i].stamp, sealed) <= raised(item->stamp, sealed))
			return true;
	return false;
}

/* ---- applying (committer thread only) ---- */

/* The keys and digests of health versions, collected before they are deleted (a walk's cursor
 * must not see its own deletions). */
struct health_keys {
	uint8_t (*keys)[HEALTH_KEY_LEN];
	uint8_t (*digests)[32];
	size_t count, cap;
};

static int health_keys_visit(void *context, struct kv_val key, struct kv_val value)
{
	struct health_keys *h = context;
	if (key.len != HEALTH_KEY_LEN || value.len < HEALTH_VALUE_FIXED)
		return DIRAUTH_ERR_STORE;
	if (h->count == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 8;
		uint8_t(*keys)[HEALTH_KEY_LEN] = realloc(h->keys, cap * sizeof *keys);
		if (keys)
			h->keys = keys;
		uint8_t(*digests)[32] = keys ? realloc(h->digests, cap * sizeof *digests) : NULL;
		if (!digests)
			return DIRAUTH_ERR_NOMEM;
		h->digests = digests;
		h->cap = cap;
	}
	memcpy(h->keys[h->count], key.data, HEALTH_KEY_LEN);
	memcpy(h->digests[h->count], value.data + 16, 32);
	h->count++;
	return 0;
}

void statements_forget_health(struct kv_txn *t, struct store *store, const uint8_t *record_key)
{
	struct health_keys found = {0};
	int walked =
	    kv_txn_walk_prefix(t, store->health, record_key, SERVICE_PREFIX_LEN, health_keys_visit, &found);
	if (walked < 0)
		kv_txn_fail(t, walked);
	for (size_t i = 0; i < found.count && !t->rc; i++) {
		kv_txn_delete(t, store->health, found.keys[i], HEALTH_KEY_LEN);
		kv_txn_delete(t, store->statements, found.digests[i], 32);
	}
	free(found.keys);
	free(found.digests);
}

/* A statement on its way to the committer. */
struct statement_work {
	struct store *store;
	const void *statement; /* a struct store_health, store_revocation or store_deregistration */
	store_submission_done done;
	void *context;
};

/* Each statement runs in a nested transaction of the batch, whatever the mode. */
static int apply_health(void *context, struct kv_txn *batch, const struct store_stamp *stamping,
                        enum store_apply_mode mode, bool *partial)
{
	(void)mode;
	(void)partial;
	const struct statement_work *work = context;
	struct store *store = work->store;
	const struct store_health *h = work->statement;
	struct kv_txn t;
	struct versions versions = {NULL, 0, 0, true};
	struct buffer value;
	uint8_t key[HEALTH_KEY_LEN], index[1 + HEALTH_KEY_LEN];
	uint16_t ns = 0;

	buffer_init(&value);
	kv_txn_begin_nested(batch, &t);
	namespace_intern(&t, store, h->namespace_name, strlen(h->namespace_name), &ns);
	service_prefix(key, ns, h->service_id);
	memcpy(key + SERVICE_PREFIX_LEN, h->endpoint_id, STORE_ID_LEN);
	int walked = kv_txn_walk_prefix(&t, store->health, key, HEALTH_PREFIX_LEN, versions_visit, &versions);
	if (walked < 0)
		kv_txn_fail(&t, walked);
	for (size_t i = 0; i < versions.count; i++)
		if (h->sequence <= versions.items[i].sequence)
			kv_txn_fail(&t, DIRAUTH_ERR_ROLLBACK);
	for (size_t i = 0; i < versions.count && !t.rc; i++) {
		const struct version *item = &versions.items[i];
		if (!version_dominated(&versions, item, stamping->stamp, h->sequence, stamping->sealed))
			continue;
		kv_txn_delete(&t, store->health, item->key, item->key_len);
		kv_txn_delete(&t, store->statements, item->digest, 32);
	}
	put_uint(key + HEALTH_PREFIX_LEN, stamping->stamp, 8);
	uint8_t fixed[HEALTH_VALUE_FIXED];
	put_uint(fixed, h->issued_at, 8);
	put_uint(fixed + 8, h->sequence, 8);
	memcpy(fixed + 16, h->digest, 32);
	if (buffer_append(&value, fixed, sizeof fixed) || buffer_append(&value, h->note, h->note_len))
		kv_txn_fail(&t, DIRAUTH_ERR_NOMEM);
	kv_txn_put(&t, store->health, key, sizeof key, value.data, value.len);
	index[0] = STATEMENT_HEALTH;
	memcpy(index + 1, key, sizeof key);
	kv_txn_put(&t, store->statements, h->digest, 32, index, sizeof index);
	int rc = kv_txn_commit(&t);
	free(versions.items);
	buffer_free(&value);
	return rc;
}

static int highest_sequence_visit(void *context, struct kv_val key, struct kv_val value)
{
	(void)value;
	uint64_t *highest = context;
	if (key.len < 9)
		return DIRAUTH_ERR_STORE;
	uint64_t sequence = get_uint(key.data + key.len - 8, 8);
	if (sequence > *highest)
		*highest = sequence;
	return 0;
}

static int apply_revocation(void *context, struct kv_txn *batch, const struct store_stamp *stamping,
                            enum store_apply_mode mode, bool *partial)
{
	(void)mode;
	(void)partial;
	const struct statement_work *work = context;
	struct store *store = work->store;
	const struct store_revocation *r = work->statement;
	struct kv_txn t;
	struct kv_val found;
	struct buffer value;
	uint8_t target[TARGET_ENDPOINT_LEN], key_seq[KEY_TEXT_MAX], index[1 + TARGET_ENDPOINT_LEN];
	uint16_t ns = 0;

	buffer_init(&value);
	kv_txn_begin_nested(batch, &t);
	namespace_intern(&t, store, r->namespace_name, strlen(r->namespace_name), &ns);
	size_t key_seq_len = key_sequence_key(key_seq, r->key, true, r->sequence);
	if (kv_txn_get(&t, store->revocation_keys, key_seq, key_seq_len, &found))
		kv_txn_fail(&t, DIRAUTH_ERR_ROLLBACK); /* this (key, sequence) was accepted before */
	if (r->in_order) {
		uint64_t highest = 0;
		int walked = kv_txn_walk_prefix(&t, store->revocation_keys, key_seq, key_seq_len - 8,
		                                highest_sequence_visit, &highest);
		if (walked < 0)
			kv_txn_fail(&t, walked);
		if (r->sequence <= highest)
			kv_txn_fail(&t, DIRAUTH_ERR_ROLLBACK);
	}
	/* An endpoint of a service revoked whole is revoked already: nothing about a revoked
	 * service is taken again. */
	if (r->endpoint_id &&
	    kv_txn_get(&t, store->revocations, target, target_key(target, ns, r->service_id, NULL), &found))
		kv_txn_fail(&t, DIRAUTH_ERR_EXISTS);
	size_t target_len = target_key(target, ns, r->service_id, r->endpoint_id);
	if (kv_txn_get(&t, store->revocations, target, target_len, &found))
		kv_txn_fail(&t, DIRAUTH_ERR_EXISTS); /* one revocation per target, the first */
	uint8_t fixed[REVOCATION_FIXED];
	put_uint(fixed, stamping->stamp, 8);
	put_uint(fixed + 8, r->sequence, 8);
	memcpy(fixed + 16, r->digest, 32);
	if (buffer_append(&value, fixed, sizeof fixed) || buffer_append(&value, r->note, r->note_len))
		kv_txn_fail(&t, DIRAUTH_ERR_NOMEM);
	kv_txn_put(&t, store->revocations, target, target_len, value.data, value.len);
	kv_txn_put(&t, store->revocation_keys, key_seq, key_seq_len, r->digest, 32);
	index[0] = STATEMENT_REVOCATION;
	memcpy(index + 1, target, target_len);
	kv_txn_put(&t, store->statements, r->digest, 32, index, 1 + target_len);
	int rc = kv_txn_commit(&t);
	buffer_free(&value);
	return rc;
}

static int apply_deregistration(void *context, struct kv_txn *batch, const struct store_stamp *stamping,
                                enum store_apply_mode mode, bool *partial)
{
	(void)mode;
	(void)partial;
	const struct statement_work *work = context;
	struct store *store = work->store;
	const struct store_deregistration *d = work->statement;
	struct kv_txn t;
	struct kv_val found;
	struct service_owner owner;
	struct versions versions = {NULL, 0, 0, false};
	struct buffer value;
	uint8_t key[DEREG_KEY_LEN];
	uint16_t ns = 0;

	buffer_init(&value);
	kv_txn_begin_nested(batch, &t);
	int rc = namespace_find(&t, store, d->namespace_name, strlen(d->namespace_name), &ns);
	if (rc == DIRAUTH_ERR_NOT_FOUND)
		kv_txn_fail(&t, rc);
	if (!kv_txn_get(&t, store->services, d->service_id, STORE_ID_LEN, &found))
		kv_txn_fail(&t, DIRAUTH_ERR_NOT_FOUND);
	else if (!store_service_decode(&found, &owner))
		kv_txn_fail(&t, DIRAUTH_ERR_STORE);
	else if (owner.ns != ns)
		kv_txn_fail(&t, DIRAUTH_ERR_NOT_FOUND);
	else if (d->sequence < owner.highest_sequence)
		kv_txn_fail(&t, DIRAUTH_ERR_ROLLBACK);
	service_prefix(key, ns, d->service_id);
	int walked = kv_txn_walk_prefix(&t, store->deregistrations, key, SERVICE_PREFIX_LEN, versions_visit,
	                                &versions);
	if (walked < 0)
		kv_txn_fail(&t, walked);
	for (size_t i = 0; i < versions.count; i++)
		if (d->sequence <= versions.items[i].sequence)
			kv_txn_fail(&t, DIRAUTH_ERR_ROLLBACK);
	for (size_t i = 0; i < versions.count && !t.rc; i++)
		if (version_dominated(&versions, &versions.items[i], stamping->stamp, d->sequence,
		                      stamping->sealed))
			kv_txn_delete(&t, store->deregistrations, versions.items[i].key,
			              versions.items[i].key_len);
	put_uint(key + SERVICE_PREFIX_LEN, d->sequence, 8);
	uint8_t fixed[DEREG_FIXED];
	put_uint(fixed, stamping->stamp, 8);
	memcpy(fixed + 8, d->digest, 32);
	if (buffer_append(&value, fixed, sizeof fixed) || buffer_append(&value, d->note, d->note_len))
		kv_txn_fail(&t, DIRAUTH_ERR_NOMEM);
	kv_txn_put(&t, store->deregistrations, key, sizeof key, value.data, value.len);
	rc = kv_txn_commit(&t);
	free(versions.items);
	buffer_free(&value);
	return rc;
}

/* ---- what a registration may not be ---- */

/* The highest sequence a deregistration of the service withdrew (0: none, as a deregistration
 * withdraws at least sequence 1), in t. */
static uint64_t withdrawn_sequence(struct kv_txn *t, struct store *store, uint16_t ns,
                                   const uint8_t *service_id)
{
	uint8_t prefix[SERVICE_PREFIX_LEN];
	uint64_t highest = 0;
	service_prefix(prefix, ns, service_id);
	int walked = kv_txn_walk_prefix(t, store->deregistrations, prefix, sizeof prefix,
	                                highest_sequence_visit, &highest);
	if (walked < 0)
		kv_txn_fail(t, walked);
	return highest;
}

/* Whether the service, or one of the endpoint ids (each revoked under the service that owns it),
 * is revoked, in t. */
static bool any_revoked(struct kv_txn *t, struct store *store, uint16_t ns, const uint8_t *service_id,
                        const uint8_t *endpoint_ids, size_t endpoint_count)
{
	uint8_t target[TARGET_ENDPOINT_LEN];
	struct kv_val found;
	if (kv_txn_get(t, store->revocations, target, target_key(target, ns, service_id, NULL), &found))
		return true;
	for (size_t i = 0; i < endpoint_count && !t->rc; i++) {
		const uint8_t *endpoint = endpoint_ids + i * STORE_ID_LEN;
		const uint8_t *owner = service_id;
		if (kv_txn_get(t, store->endpoints, endpoint, STORE_ID_LEN, &found) &&
		    found.len == STORE_ID_LEN)
			owner = found.data;
		uint8_t owner_id[STORE_ID_LEN];
		memcpy(owner_id, owner, STORE_ID_LEN);
		if (kv_txn_get(t, store->revocations, target, target_key(target, ns, owner_id, endpoint),
		               &found))
			return true;
	}
	return false;
}

void statements_refuse_registration(struct kv_txn *t, struct store *store, uint16_t ns,
                                    const uint8_t *service_id, uint64_t sequence, const uint8_t *endpoint_ids,
                                    size_t endpoint_count)
{
	if (t->rc)
		return;
	uint64_t withdrawn = withdrawn_sequence(t, store, ns, service_id);
	if (any_revoked(t, store, ns, service_id, endpoint_ids, endpoint_count) ||
	    (withdrawn > 0 && sequence <= withdrawn))
		kv_txn_fail(t, DIRAUTH_ERR_REFUSED);
}

enum store_withdrawal statements_withdrawal(struct kv_txn *t, struct store *store, uint16_t ns,
                                            const uint8_t *service_id, uint64_t sequence,
                                            const uint8_t *endpoint_ids, size_t endpoint_count)
{
	if (any_revoked(t, store, ns, service_id, endpoint_ids, endpoint_count))
		return STORE_WITHDRAWN_REVOKED;
	uint64_t withdrawn = withdrawn_sequence(t, store, ns, service_id);
	return withdrawn > 0 && sequence <= withdrawn ? STORE_WITHDRAWN_DEREGISTERED : STORE_WITHDRAWN_NONE;
}

int store_registration_withdrawn(struct store *store, const char *namespace_name,
                                 const uint8_t service_id[32], uint64_t sequence, const uint8_t *endpoint_ids,
                                 size_t endpoint_count, enum store_withdrawal *out)
{
	struct kv_txn t;
	size_t len;
	uint16_t ns;
	if (!store || !service_id || !out || (endpoint_count && !endpoint_ids))
		return DIRAUTH_ERR_SYNTAX;
	int rc = check_name(namespace_name, &len);
	if (rc)
		return rc;
	*out = STORE_WITHDRAWN_NONE;
	kv_txn_begin(store->env, &t, KV_READ);
	if (namespace_find(&t, store, namespace_name, len, &ns) == 0)
		*out =
		    statements_withdrawal(&t, store, ns, service_id, sequence, endpoint_ids, endpoint_count);
	rc = t.rc == DIRAUTH_ERR_NOT_FOUND ? 0 : t.rc;
	kv_txn_abort(&t);
	return rc;
}

/* ---- the view ---- */

/* What a version of a service meets in an epoch's view: a deregistration withdrawing it, a
 * revocation of the service, and the endpoints revoked under it. */
struct withdrawal_walk {
	uint64_t epoch;
	uint64_t sequence;
	bool hidden;
	const uint8_t **endpoints; /* borrowed from the transaction */
	size_t endpoint_count, cap;
};

static int deregistration_hides_visit(void *context, struct kv_val key, struct kv_val value)
{
	struct withdrawal_walk *w = context;
	if (key.len != DEREG_KEY_LEN || value.len < DEREG_FIXED)
		return DIRAUTH_ERR_STORE;
	if (get_uint(value.data, 8) <= w->epoch && get_uint(key.data + SERVICE_PREFIX_LEN, 8) >= w->sequence)
		w->hidden = true;
	return w->hidden ? 1 : 0;
}

static int revocation_hides_visit(void *context, struct kv_val key, struct kv_val value)
{
	struct withdrawal_walk *w = context;
	if ((key.len != TARGET_SERVICE_LEN && key.len != TARGET_ENDPOINT_LEN) || value.len < REVOCATION_FIXED)
		return DIRAUTH_ERR_STORE;
	if (get_uint(value.data, 8) > w->epoch)
		return 0;
	if (key.len == TARGET_SERVICE_LEN) {
		w->hidden = true;
		return 1;
	}
	if (w->endpoint_count == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 4;
		const uint8_t **grown = realloc(w->endpoints, cap * sizeof *grown);
		if (!grown)
			return DIRAUTH_ERR_NOMEM;
		w->endpoints = grown;
		w->cap = cap;
	}
	w->endpoints[w->endpoint_count++] = key.data + TARGET_SERVICE_LEN;
	return 0;
}

int statements_view_hides(struct kv_txn *t, struct store *store, uint16_t ns, const uint8_t *service_id,
                          uint64_t sequence, uint64_t epoch, const uint8_t *note, size_t note_len)
{
	struct withdrawal_walk w = {epoch, sequence, false, NULL, 0, 0};
	uint8_t prefix[SERVICE_PREFIX_LEN];
	service_prefix(prefix, ns, service_id);
	int rc = kv_txn_walk_prefix(t, store->deregistrations, prefix, sizeof prefix,
	                            deregistration_hides_visit, &w);
	if (rc >= 0 && !w.hidden)
		rc = kv_txn_walk_prefix(t, store->revocations, prefix, sizeof prefix, revocation_hides_visit,
		                        &w);
	if (rc >= 0 && !w.hidden && w.endpoint_count > 0) {
		/* Endpoints revoked under the service: is one of them this version's? */
		struct registration r;
		struct note *parsed = NULL;
		rc = registration_parse_note(note, note_len, &r, &parsed);
		if (rc)
			rc = rc == DIRAUTH_ERR_NOMEM ? rc : DIRAUTH_ERR_STORE;
		for (size_t e = 0; rc == 0 && e < r.endpoint_count && !w.hidden; e++)
			for (size_t i = 0; i < w.endpoint_count && !w.hidden; i++)
				w.hidden =
				    memcmp(r.endpoints[e].endpoint_id, w.endpoints[i], STORE_ID_LEN) == 0;
		registration_clear(&r);
		note_free(parsed);
	}
	free(w.endpoints);
	if (rc < 0)
		return rc;
	return w.hidden ? 1 : 0;
}

/* The health statements a view holds of one service. */
struct health_walk {
	uint64_t epoch;
	struct store_statement *items;
	size_t count, cap;
};

static int health_view_visit(void *context, struct kv_val key, struct kv_val value)
{
	struct health_walk *w = context;
	if (key.len != HEALTH_KEY_LEN || value.len < HEALTH_VALUE_FIXED)
		return DIRAUTH_ERR_STORE;
	if (get_uint(key.data + HEALTH_PREFIX_LEN, 8) > w->epoch)
		return 0;
	const uint8_t *endpoint = key.data + SERVICE_PREFIX_LEN;
	uint64_t sequence = get_uint(value.data + 8, 8);
	struct store_statement *item = NULL;
	if (w->count > 0 && memcmp(w->items[w->count - 1].endpoint_id, endpoint, STORE_ID_LEN) == 0) {
		if (sequence <= w->items[w->count - 1].sequence)
			return 0;
		item = &w->items[w->count - 1];
	} else {
		if (w->count == w->cap) {
			size_t cap = w->cap ? w->cap * 2 : 8;
			struct store_statement *grown = realloc(w->items, cap * sizeof *grown);
			if (!grown)
				return DIRAUTH_ERR_NOMEM;
			w->items = grown;
			w->cap = cap;
		}
		item = &w->items[w->count++];
	}
	item->endpoint_id = endpoint;
	item->issued_at = get_uint(value.data, 8);
	item->sequence = sequence;
	item->digest = value.data + 16;
	item->note = value.data + HEALTH_VALUE_FIXED;
	item->note_len = value.len - HEALTH_VALUE_FIXED;
	return 0;
}

int statements_health_held(struct kv_txn *t, struct store *store, uint16_t ns, const uint8_t *service_id,
                           uint64_t epoch, struct store_statement **items, size_t *count, size_t *cap)
{
	struct health_walk w = {epoch, *items, 0, *cap};
	uint8_t prefix[SERVICE_PREFIX_LEN];
	service_prefix(prefix, ns, service_id);
	int walked = kv_txn_walk_prefix(t, store->health, prefix, sizeof prefix, health_view_visit, &w);
	*items = w.items;
	*cap = w.cap;
	*count = w.count;
	return walked < 0 ? walked : 0;
}

struct revocation_walk {
	uint64_t epoch;
	store_revocation_visitor visit;
	void *context;
};

static int revocation_view_visit(void *context, struct kv_val key, struct kv_val value)
{
	struct revocation_walk *w = context;
	if ((key.len != TARGET_SERVICE_LEN && key.len != TARGET_ENDPOINT_LEN) ||
	    value.len <= REVOCATION_FIXED)
		return DIRAUTH_ERR_STORE;
	uint64_t stamp = get_uint(value.data, 8);
	if (stamp > w->epoch)
		return 0;
	struct store_listed_revocation r = {
	    .service_id = key.data + STORE_NS_LEN,
	    .endpoint_id = key.len == TARGET_ENDPOINT_LEN ? key.data + TARGET_SERVICE_LEN : NULL,
	    .stamp = stamp,
	    .digest = value.data + 16,
	    .note = value.data + REVOCATION_FIXED,
	    .note_len = value.len - REVOCATION_FIXED,
	};
	return w->visit(w->context, &r);
}

int store_revocation_view_foreach(struct store *store, const char *namespace_name, uint64_t epoch,
                                  store_revocation_visitor visit, void *context)
{
	struct kv_txn t;
	size_t len;
	uint16_t ns;
	uint64_t sealed;
	if (!store || !visit)
		return DIRAUTH_ERR_SYNTAX;
	int rc = check_name(namespace_name, &len);
	if (rc)
		return rc;
	if (store_engine_sealed(store->engine, &sealed) != 0 || sealed != epoch)
		return DIRAUTH_ERR_STALE;
	kv_txn_begin(store->env, &t, KV_READ);
	if (namespace_find(&t, store, namespace_name, len, &ns) != 0) {
		rc = t.rc == DIRAUTH_ERR_NOT_FOUND ? 0 : t.rc;
		kv_txn_abort(&t);
		return rc;
	}
	uint8_t prefix[STORE_NS_LEN];
	put_uint(prefix, ns, STORE_NS_LEN);
	struct revocation_walk w = {epoch, visit, context};
	int result =
	    kv_txn_walk_prefix(&t, store->revocations, prefix, sizeof prefix, revocation_view_visit, &w);
	rc = t.rc;
	kv_txn_abort(&t);
	return rc ? rc : result;
}

/* ---- reads ---- */

int store_revocation_find(struct store *store, const char *namespace_name, const uint8_t service_id[32],
                          const uint8_t *endpoint_id, struct buffer *note)
{
	struct kv_txn t;
	struct kv_val found;
	uint8_t target[TARGET_ENDPOINT_LEN];
	size_t len;
	uint16_t ns;
	if (!store || !service_id)
		return DIRAUTH_ERR_SYNTAX;
	int rc = check_name(namespace_name, &len);
	if (rc)
		return rc;
	kv_txn_begin(store->env, &t, KV_READ);
	if (namespace_find(&t, store, namespace_name, len, &ns) == 0) {
		if (!kv_txn_get(&t, store->revocations, target,
		                target_key(target, ns, service_id, endpoint_id), &found))
			kv_txn_fail(&t, DIRAUTH_ERR_NOT_FOUND);
		else if (found.len <= REVOCATION_FIXED)
			kv_txn_fail(&t, DIRAUTH_ERR_STORE);
		else if (note) {
			buffer_reset(note);
			kv_txn_fail(&t, buffer_append(note, found.data + REVOCATION_FIXED,
			                              found.len - REVOCATION_FIXED));
		}
	} else {
		kv_txn_fail(&t, DIRAUTH_ERR_NOT_FOUND);
	}
	rc = t.rc;
	kv_txn_abort(&t);
	return rc;
}

int store_endpoint_service(struct store *store, const uint8_t endpoint_id[32], uint8_t service_id[32])
{
	struct kv_txn t;
	struct kv_val found;
	if (!store || !endpoint_id || !service_id)
		return DIRAUTH_ERR_SYNTAX;
	kv_txn_begin(store->env, &t, KV_READ);
	if (!kv_txn_get(&t, store->endpoints, endpoint_id, STORE_ID_LEN, &found))
		kv_txn_fail(&t, DIRAUTH_ERR_NOT_FOUND);
	else if (found.len != STORE_ID_LEN)
		kv_txn_fail(&t, DIRAUTH_ERR_STORE);
	else
		memcpy(service_id, found.data, STORE_ID_LEN);
	int rc = t.rc;
	kv_txn_abort(&t);
	return rc;
}

int store_statement_get(struct store *store, const char *namespace_name, const uint8_t digest[32],
                        struct buffer *note)
{
	struct kv_txn t;
	struct kv_val index, found;
	size_t len;
	uint16_t ns;
	if (!store || !digest || !note)
		return DIRAUTH_ERR_SYNTAX;
	int rc = check_name(namespace_name, &len);
	if (rc)
		return rc;
	kv_txn_begin(store->env, &t, KV_READ);
	if (namespace_find(&t, store, namespace_name, len, &ns) == 0) {
		if (!kv_txn_get(&t, store->statements, digest, 32, &index)) {
			kv_txn_fail(&t, DIRAUTH_ERR_NOT_FOUND);
		} else if (index.len < 1 + STORE_NS_LEN ||
		           (index.data[0] != STATEMENT_HEALTH && index.data[0] != STATEMENT_REVOCATION)) {
			kv_txn_fail(&t, DIRAUTH_ERR_STORE);
		} else if (get_uint(index.data + 1, STORE_NS_LEN) != ns) {
			kv_txn_fail(&t, DIRAUTH_ERR_NOT_FOUND); /* another namespace's: never across */
		} else {
			bool health = index.data[0] == STATEMENT_HEALTH;
			size_t fixed = health ? HEALTH_VALUE_FIXED : REVOCATION_FIXED;
			if (!kv_txn_get(&t, health ? store->health : store->revocations, index.data + 1,
			                index.len - 1, &found) ||
			    found.len <= fixed || memcmp(found.data + fixed - 32, digest, 32) != 0)
				kv_txn_fail(&t, DIRAUTH_ERR_STORE);
			else {
				buffer_reset(note);
				kv_txn_fail(&t, buffer_append(note, found.data + fixed, found.len - fixed));
			}
		}
	} else {
		kv_txn_fail(&t, DIRAUTH_ERR_NOT_FOUND);
	}
	rc = t.rc;
	kv_txn_abort(&t);
	return rc;
}

/* ---- submissions ---- */

static void statement_done(void *context, int result, uint64_t stamp)
{
	struct statement_work *work = context;
	work->done(work->context, result, stamp);
	free(work);
}

static int check_ids(const char *namespace_name, const uint8_t *service_id, const uint8_t *digest,
                     const uint8_t *note, size_t note_len, size_t note_max)
{
	size_t len;
	if (!service_id || !digest || !note || note_len == 0)
		return DIRAUTH_ERR_SYNTAX;
	if (note_len > note_max)
		return DIRAUTH_ERR_BOUNDS;
	return check_name(namespace_name, &len);
}

static int check_health(const struct store_health *h)
{
	if (!h || !h->endpoint_id || h->sequence == 0)
		return DIRAUTH_ERR_SYNTAX;
	return check_ids(h->namespace_name, h->service_id, h->digest, h->note, h->note_len, HEALTH_MAX_BYTES);
}

static int check_revocation(const struct store_revocation *r)
{
	if (!r || !r->key || r->sequence == 0)
		return DIRAUTH_ERR_SYNTAX;
	return check_ids(r->namespace_name, r->service_id, r->digest, r->note, r->note_len,
	                 REVOCATION_MAX_BYTES);
}

static int check_deregistration(const struct store_deregistration *d)
{
	if (!d || d->sequence == 0)
		return DIRAUTH_ERR_SYNTAX;
	return check_ids(d->namespace_name, d->service_id, d->digest, d->note, d->note_len,
	                 DEREGISTRATION_MAX_BYTES);
}

/* Hands a checked statement to the committer, which applies it with apply. */
static int statement_submit(struct store *store, store_apply apply, const void *statement, uint64_t epoch,
                            bool takes_reserve, store_submission_done done, void *context)
{
	if (!store || !done)
		return DIRAUTH_ERR_SYNTAX;
	struct statement_work *work = malloc(sizeof *work);
	if (!work)
		return DIRAUTH_ERR_NOMEM;
	*work = (struct statement_work){store, statement, done, context};
	struct store_work engine_work = {
	    .apply = apply,
	    .context = work,
	    .epoch = epoch,
	    .takes_reserve = takes_reserve,
	    .done = statement_done,
	    .done_context = work,
	};
	int rc = store_engine_submit(store->engine, &engine_work);
	if (rc)
		free(work);
	return rc;
}

int store_health_submit_async(struct store *store, const struct store_health *h, store_submission_done done,
                              void *context)
{
	int rc = check_health(h);
	return rc ? rc : statement_submit(store, apply_health, h, h->epoch, false, done, context);
}

int store_health_submit(struct store *store, const struct store_health *h, uint64_t *stamp)
{
	struct store_waiter waiter;
	store_waiter_init(&waiter);
	return store_waiter_wait(&waiter, store_health_submit_async(store, h, store_waiter_done, &waiter),
	                         stamp);
}

/* A revocation is taken above refuse_percent: it must never wait for space. */
int store_revocation_submit_async(struct store *store, const struct store_revocation *r,
                                  store_submission_done done, void *context)
{
	int rc = check_revocation(r);
	return rc ? rc : statement_submit(store, apply_revocation, r, r->epoch, true, done, context);
}

int store_revocation_submit(struct store *store, const struct store_revocation *r, uint64_t *stamp)
{
	struct store_waiter waiter;
	store_waiter_init(&waiter);
	return store_waiter_wait(&waiter, store_revocation_submit_async(store, r, store_waiter_done, &waiter),
	                         stamp);
}

int store_deregistration_submit_async(struct store *store, const struct store_deregistration *d,
                                      store_submission_done done, void *context)
{
	int rc = check_deregistration(d);
	return rc ? rc : statement_submit(store, apply_deregistration, d, d->epoch, false, done, context);
}

int store_deregistration_submit(struct store *store, const struct store_deregistration *d, uint64_t *stamp)
{
	struct store_waiter waiter;
	store_waiter_init(&waiter);
	return store_waiter_wait(
	    &waiter, store_deregistration_submit_async(store, d, store_waiter_done, &waiter), stamp);
}
