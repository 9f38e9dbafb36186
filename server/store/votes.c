/*
 * votes.c: the round tables of the store.
 *
 * Databases (keys big-endian; "ns" the namespace's u16 id, "m" the member's index as one byte):
 *   votes       ns, u64 epoch, m -> the vote envelope as received
 *   consensus   ns, u64 epoch    -> the header text this authority computed
 *   signatures  ns, u64 epoch, m -> the member's signed header note (text and its one signature)
 *   evidence    ns, u64 epoch, m, u8 kind -> u32 length, first statement, second statement
 *
 * A statement is written once: every put reads the key first in the same write transaction, so
 * two threads racing to keep different votes of one member keep the first and refuse the
 * second. The writes here are small and rare (a few per member and epoch), so each is its own
 * write transaction beside the committer's batches.
 */
#include "server/store/votes.h"

#include "server/store/internal.h"

#include <stdlib.h>
#include <string.h>

#define ROUND_KEY_LEN    (STORE_EPOCH_KEY_LEN + 1)
#define EVIDENCE_KEY_LEN (ROUND_KEY_LEN + 1)

size_t votes_databases(struct store *store, struct kv_database *out)
{
	const struct kv_database mine[] = {
	    {"votes", &store->votes},
	    {"signatures", &store->signatures},
	    {"consensus", &store->consensus},
	    {"evidence", &store->evidence},
	};
	memcpy(out, mine, sizeof mine);
	return sizeof mine / sizeof mine[0];
}

static void round_key(uint8_t key[ROUND_KEY_LEN], uint16_t ns, uint64_t epoch, unsigned member)
{
	epoch_key(key, ns, epoch);
	key[STORE_EPOCH_KEY_LEN] = (uint8_t)member;
}

/* Begins t on the namespace: in a write transaction the namespace is given an id if it has none;
 * in a read transaction an unknown namespace is DIRAUTH_ERR_NOT_FOUND in *ns_rc. */
static int begin(struct store *store, const char *namespace_name, enum kv_txn_mode mode, struct kv_txn *t,
                 uint16_t *ns)
{
	size_t len;
	if (!store)
		return DIRAUTH_ERR_SYNTAX;
	int rc = check_name(namespace_name, &len);
	if (rc)
		return rc;
	kv_txn_begin(store->env, t, mode);
	if (mode == KV_WRITE) {
		namespace_intern(t, store, namespace_name, len, ns);
		return 0;
	}
	rc = namespace_find(t, store, namespace_name, len, ns);
	if (rc)
		kv_txn_abort(t);
	return rc;
}

/* Writes value under key unless the key holds something: the same bytes are DIRAUTH_ERR_EXISTS,
 * others DIRAUTH_ERR_MISMATCH. */
static int put_once(struct kv_txn *t, struct kv_db db, const uint8_t *key, size_t key_len,
                    const uint8_t *value, size_t len)
{
	struct kv_val found;
	if (kv_txn_get(t, db, key, key_len, &found)) {
		int same = found.len == len && memcmp(found.data, value, len) == 0;
		kv_txn_abort(t);
		return same ? DIRAUTH_ERR_EXISTS : DIRAUTH_ERR_MISMATCH;
	}
	kv_txn_put(t, db, key, key_len, value, len);
	return kv_txn_commit(t);
}

static int round_put(struct store *store, struct kv_db *db, const char *namespace_name, uint64_t epoch,
                     int member, const uint8_t *value, size_t len)
{
	struct kv_txn t;
	uint16_t ns = 0;
	uint8_t key[ROUND_KEY_LEN];
	if (!value || !len)
		return DIRAUTH_ERR_SYNTAX;
	if (member >= STORE_MEMBERS_MAX)
		return DIRAUTH_ERR_BOUNDS;
	int rc = begin(store, namespace_name, KV_WRITE, &t, &ns);
	if (rc)
		return rc;
	round_key(key, ns, epoch, member < 0 ? 0 : (unsigned)member);
	return put_once(&t, *db, key, member < 0 ? STORE_EPOCH_KEY_LEN : ROUND_KEY_LEN, value, len);
}

static int round_get(struct store *store, struct kv_db *db, const char *namespace_name, uint64_t epoch,
                     int member, struct buffer *out)
{
	struct kv_txn t;
	struct kv_val found;
	uint16_t ns;
	uint8_t key[ROUND_KEY_LEN];
	if (!out)
		return DIRAUTH_ERR_SYNTAX;
	if (member >= STORE_MEMBERS_MAX)
		return DIRAUTH_ERR_BOUNDS;
	int rc = begin(store, namespace_name, KV_READ, &t, &ns);
	if (rc)
		return rc;
	round_key(key, ns, epoch, member < 0 ? 0 : (unsigned)member);
	if (!kv_txn_get(&t, *db, key, member < 0 ? STORE_EPOCH_KEY_LEN : ROUND_KEY_LEN, &found)) {
		kv_txn_fail(&t, DIRAUTH_ERR_NOT_FOUND);
	} else {
		buffer_reset(out);
		kv_txn_fail(&t, buffer_append(out, found.data, found.len));
	}
	kv_txn_abort(&t);
	return t.rc;
}

static int held_visit(void *context, struct kv_val key, struct kv_val value)
{
	(void)value;
	uint32_t *members = context;
	if (key.len != ROUND_KEY_LEN || key.data[STORE_EPOCH_KEY_LEN] >= STORE_MEMBERS_MAX)
		return DIRAUTH_ERR_STORE;
	*members |= (uint32_t)1 << key.data[STORE_EPOCH_KEY_LEN];
	return 0;
}

static int round_held(struct store *store, struct kv_db *db, const char *namespace_name, uint64_t epoch,
                      uint32_t *members)
{
	struct kv_txn t;
	uint16_t ns;
	uint8_t prefix[STORE_EPOCH_KEY_LEN];
	if (!members)
		return DIRAUTH_ERR_SYNTAX;
	*members = 0;
	int rc = begin(store, namespace_name, KV_READ, &t, &ns);
	if (rc)
		return rc == DIRAUTH_ERR_NOT_FOUND ? 0 : rc;
	epoch_key(prefix, ns, epoch);
	rc = kv_txn_walk_prefix(&t, *db, prefix, sizeof prefix, held_visit, members);
	kv_txn_abort(&t);
	return rc;
}

int store_vote_put(struct store *store, const char *namespace_name, uint64_t epoch, unsigned member,
                   const uint8_t *envelope, size_t len)
{
	return round_put(store, &store->votes, namespace_name, epoch, (int)member, envelope, len);
}

int store_vote_get(struct store *store, const char *namespace_name, uint64_t epoch, unsigned member,
                   struct buffer *out)
{
	return round_get(store, &store->votes, namespace_name, epoch, (int)member, out);
}

int store_votes_held(struct store *store, const char *namespace_name, uint64_t epoch, uint32_t *members)
{
	return round_held(store, &store->votes, namespace_name, epoch, members);
}

int store_consensus_put(struct store *store, const char *namespace_name, uint64_t epoch, const uint8_t *text,
                        size_t len)
{
	if (len > STORE_HEADER_MAX)
		return DIRAUTH_ERR_BOUNDS;
	return round_put(store, &store->consensus, namespace_name, epoch, -1, text, len);
}

int store_consensus_get(struct store *store, const char *namespace_name, uint64_t epoch, struct buffer *out)
{
	return round_get(store, &store->consensus, namespace_name, epoch, -1, out);
}

int store_signature_put(struct store *store, const char *namespace_name, uint64_t epoch, unsigned member,
                        const uint8_t *note, size_t len)
{
	if (len > STORE_HEADER_MAX)
		return DIRAUTH_ERR_BOUNDS;
	return round_put(store, &store->signatures, namespace_name, epoch, (int)member, note, len);
}

int store_signature_get(struct store *store, const char *namespace_name, uint64_t epoch, unsigned member,
                        struct buffer *out)
{
	return round_get(store, &store->signatures, namespace_name, epoch, (int)member, out);
}

int store_signatures_held(struct store *store, const char *namespace_name, uint64_t epoch, uint32_t *members)
{
	return round_held(store, &store->signatures, namespace_name, epoch, members);
}

/* ---- evidence ---- */

int store_evidence_put(struct store *store, const char *namespace_name, uint64_t epoch, unsigned member,
                       enum store_evidence_kind kind, const uint8_t *first, size_t first_len,
                       const uint8_t *second, size_t second_len)
{
	struct kv_txn t;
	struct kv_val found;
	uint16_t ns = 0;
	uint8_t key[EVIDENCE_KEY_LEN];
	if (!first || !first_len || (second_len && !second) || kind < STORE_EVIDENCE_CONFLICTING_VOTES ||
	    kind > STORE_EVIDENCE_OTHER_HEADER)
		return DIRAUTH_ERR_SYNTAX;
	if (member >= STORE_MEMBERS_MAX || first_len > STORE_EVIDENCE_MAX ||
	    second_len > STORE_EVIDENCE_MAX - first_len)
		return DIRAUTH_ERR_BOUNDS;
	size_t len = 4 + first_len + second_len;
	uint8_t *value = malloc(len);
	if (!value)
		return DIRAUTH_ERR_NOMEM;
	put_uint(value, first_len, 4);
	memcpy(value + 4, first, first_len);
	if (second_len)
		memcpy(value + 4 + first_len, second, second_len);
	int rc = begin(store, namespace_name, KV_WRITE, &t, &ns);
	if (rc) {
		free(value);
		return rc;
	}
	round_key(key, ns, epoch, member);
	key[ROUND_KEY_LEN] = (uint8_t)kind;
	if (kv_txn_get(&t, store->evidence, key, sizeof key, &found)) {
		kv_txn_abort(&t);
		rc = DIRAUTH_ERR_EXISTS;
	} else {
		kv_txn_put(&t, store->evidence, key, sizeof key, value, len);
		rc = kv_txn_commit(&t);
	}
	free(value);
	return rc;
}

struct evidence_walk {
	uint64_t from_epoch;
	store_evidence_visitor visit;
	void *context;
};

static int evidence_visit(void *context, struct kv_val key, struct kv_val value)
{
	struct evidence_walk *w = context;
	if (key.len != EVIDENCE_KEY_LEN || value.len < 4)
		return DIRAUTH_ERR_STORE;
	uint64_t first_len = get_uint(value.data, 4);
	if (first_len == 0 || first_len > value.len - 4)
		return DIRAUTH_ERR_STORE;
	struct store_evidence e = {
	    .epoch = get_uint(key.data + STORE_NS_LEN, 8),
	    .member = key.data[STORE_EPOCH_KEY_LEN],
	    .kind = (enum store_evidence_kind)key.data[ROUND_KEY_LEN],
	    .first = value.data + 4,
	    .first_len = (size_t)first_len,
	    .second_len = value.len - 4 - (size_t)first_len,
	};
	e.second = e.second_len ? e.first + e.first_len : NULL;
	if (e.epoch < w->from_epoch)
		return 0;
	return w->visit(w->context, &e);
}

int store_evidence_foreach(struct store *store, const char *namespace_name, uint64_t from_epoch,
                           store_evidence_visitor visit, void *context)
{
	struct kv_txn t;
	uint16_t ns;
	uint8_t prefix[STORE_NS_LEN];
	if (!visit)
		return DIRAUTH_ERR_SYNTAX;
	int rc = begin(store, namespace_name, KV_READ, &t, &ns);
	if (rc)
		return rc == DIRAUTH_ERR_NOT_FOUND ? 0 : rc;
	put_uint(prefix, ns, STORE_NS_LEN);
	struct evidence_walk w = {from_epoch, visit, context};
	rc = kv_txn_walk_prefix(&t, store->evidence, prefix, sizeof prefix, evidence_visit, &w);
	kv_txn_abort(&t);
	return rc;
}

/* ---- retention ---- */

#define RETAIN_CHUNK 1024

struct retain_walk {
	uint64_t below;
	size_t count;
	size_t key_len;
	uint8_t keys[RETAIN_CHUNK][EVIDENCE_KEY_LEN];
	size_t lengths[RETAIN_CHUNK];
};

static int retain_visit(void *context, struct kv_val key, struct kv_val value)
{
	(void)value;
	struct retain_walk *w = context;
	if (key.len < STORE_EPOCH_KEY_LEN || key.len > EVIDENCE_KEY_LEN)
		return DIRAUTH_ERR_STORE;
	if (get_uint(key.data + STORE_NS_LEN, 8) >= w->below)
		return 1; /* keys ascend by epoch: nothing further is below */
	memcpy(w->keys[w->count], key.data, key.len);
	w->lengths[w->count] = key.len;
	return ++w->count == RETAIN_CHUNK ? 1 : 0;
}

/* Removes the keys of ns below epoch below from db, a chunk per write transaction. */
static int retain_db(struct store *store, struct kv_db db, uint16_t ns, uint64_t below)
{
	struct retain_walk *w = malloc(sizeof *w);
	if (!w)
		return DIRAUTH_ERR_NOMEM;
	uint8_t prefix[STORE_NS_LEN];
	put_uint(prefix, ns, STORE_NS_LEN);
	int rc = 0;
	for (;;) {
		struct kv_txn t;
		w->below = below;
		w->count = 0;
		kv_txn_begin(store->env, &t, KV_WRITE);
		int walked = kv_txn_walk_prefix(&t, db, prefix, sizeof prefix, retain_visit, w);
		if (walked < 0) {
			kv_txn_abort(&t);
			rc = walked;
			break;
		}
		for (size_t i = 0; i < w->count; i++)
			kv_txn_delete(&t, db, w->keys[i], w->lengths[i]);
		size_t removed = w->count;
		if ((rc = kv_txn_commit(&t)) != 0 || removed < RETAIN_CHUNK)
			break;
	}
	free(w);
	return rc;
}

int store_round_retain(struct store *store, const char *namespace_name, uint64_t keep_round_from,
                       uint64_t keep_evidence_from)
{
	struct kv_txn t;
	uint16_t ns;
	int rc = begin(store, namespace_name, KV_READ, &t, &ns);
	if (rc)
		return rc == DIRAUTH_ERR_NOT_FOUND ? 0 : rc;
	kv_txn_abort(&t);
	if ((rc = retain_db(store, store->votes, ns, keep_round_from)) ||
	    (rc = retain_db(store, store->consensus, ns, keep_round_from)) ||
	    (rc = retain_db(store, store->signatures, ns, keep_round_from)))
		return rc;
	return retain_db(store, store->evidence, ns, keep_evidence_from);
}
