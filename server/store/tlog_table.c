/*
 * tlog_table.c: each namespace's transparency log in the store's environment (tlog_table.h).
 *
 * The log must stay a function of the published headers whatever its caller does and wherever
 * a crash lands, so each change is one write transaction that checks, against the state it
 * reads, everything the change claims: an append is the next published epoch with its header's
 * exact text and its own hashes, a checkpoint is of the stored tree. Appends cost one
 * transaction per leaf (an fsync), which is one per epoch in steady state; only a log caught up
 * from a long history pays one per past epoch, once.
 *
 * Databases ("ns" is the namespace's u16 id, internal.h; integers big-endian, fixed-width; every
 * stored length is checked when read, a wrong one is DIRAUTH_ERR_STORE):
 *   log_hashes       ns, u8 level, u64 index -> the 32-byte stored hash (tlog/tree.h)
 *   log_leaves       ns, u64 leaf index -> u64 epoch, the leaf's text (a record of the u64 epoch
 *                    alone, as stores written before the text was kept have, takes the text
 *                    from the header: both read alike, and nothing needs migrating)
 *   log_epochs       ns, u64 epoch -> u64 leaf index
 *   log_state        ns -> u64 size, u64 last epoch, u8 has checkpoint, u64 checkpoint size
 *   log_checkpoints  ns, u64 tree size -> the signed checkpoint note last stored for that size
 *   log_partials     ns, u8 tile level, u64 tile index, u16 width -> empty: the partial tiles
 *                    of every checkpointed tree, so that serving one is a single lookup
 *   log_witness      ns, 'w' -> u64 size, the 32-byte root: the tree head last witnessed
 *                    ns, 'p' -> u64 size: the tree size of the published checkpoint
 * A leaf's text is a copy of its header's note text in snapshots (snapshots.c), written in the same
 * transaction as the rest of its append once checked to be that text: an entry bundle is then a
 * single cursor walk over 256 consecutive records, and a tile one walk over 256 hashes. Nothing
 * here is ever deleted.
 */
#include "server/store/tlog_table.h"

#include "server/store/internal.h"

#include "kv/kv.h"
#include "schema/checkpoint.h"
#include "base/error.h"
#include "crypto/merkle.h"
#include "schema/note.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define LOG_HASH_KEY_LEN    (STORE_NS_LEN + 1 + 8)
#define LOG_STATE_LEN       (8 + 8 + 1 + 8)
#define LOG_PARTIAL_KEY_LEN (STORE_NS_LEN + 1 + 8 + 2)
#define LOG_TILE_LEVELS     8  /* tile levels that hold anything: hash levels 0, 8 .. 56 */
#define LOG_WALK_MIN        16 /* hashes from which a read walks a cursor (hash_read_walk) */

size_t log_table_databases(struct store *store, struct kv_database *out)
{
	const struct kv_database mine[] = {
	    {"log_hashes", &store->log_hashes},           {"log_leaves", &store->log_leaves},
	    {"log_epochs", &store->log_epochs},           {"log_state", &store->log_state},
	    {"log_checkpoints", &store->log_checkpoints}, {"log_partials", &store->log_partials},
	    {"log_witness", &store->log_witness},
	};
	memcpy(out, mine, sizeof mine);
	return sizeof mine / sizeof mine[0];
}

/* ---- encodings ---- */

static void hash_key(uint8_t key[LOG_HASH_KEY_LEN], uint16_t ns, uint8_t level, uint64_t index)
{
	put_uint(key, ns, STORE_NS_LEN);
	key[STORE_NS_LEN] = level;
	put_uint(key + STORE_NS_LEN + 1, index, 8);
}

static void partial_key(uint8_t key[LOG_PARTIAL_KEY_LEN], uint16_t ns, uint8_t level, uint64_t index,
                        uint16_t width)
{
	put_uint(key, ns, STORE_NS_LEN);
	key[STORE_NS_LEN] = level;
	put_uint(key + STORE_NS_LEN + 1, index, 8);
	put_uint(key + STORE_NS_LEN + 9, width, 2);
}

/* The log's state in t (zeros when it has none). A damaged record fails t. */
static void state_get(struct kv_txn *t, struct store *store, uint16_t ns, struct store_log_state *out)
{
	uint8_t key[STORE_NS_LEN];
	struct kv_val value;
	memset(out, 0, sizeof *out);
	put_uint(key, ns, STORE_NS_LEN);
	if (!kv_txn_get(t, store->log_state, key, sizeof key, &value))
		return;
	if (value.len != LOG_STATE_LEN || value.data[16] > 1) {
		kv_txn_fail(t, DIRAUTH_ERR_STORE);
		return;
	}
	out->size = get_uint(value.data, 8);
	out->last_epoch = get_uint(value.data + 8, 8);
	out->has_checkpoint = value.data[16] == 1;
	out->checkpoint_size = get_uint(value.data + 17, 8);
}

static void state_put(struct kv_txn *t, struct store *store, uint16_t ns, const struct store_log_state *state)
{
	uint8_t key[STORE_NS_LEN], value[LOG_STATE_LEN];
	put_uint(key, ns, STORE_NS_LEN);
	put_uint(value, state->size, 8);
	put_uint(value + 8, state->last_epoch, 8);
	value[16] = state->has_checkpoint ? 1 : 0;
	put_uint(value + 17, state->checkpoint_size, 8);
	kv_txn_put(t, store->log_state, key, sizeof key, value, sizeof value);
}

/* The namespace id of name in t. Returns 0, DIRAUTH_ERR_NOT_FOUND, or a check_name error. */
static int namespace_of(struct kv_txn *t, struct store *store, const char *name, uint16_t *ns)
{
	size_t len;
	int rc = check_name(name, &len);
	if (rc)
		return rc;
	return namespace_find(t, store, name, len, ns);
}

/* Ends the read transaction t of a read that came to rc: t's error first, else rc. */
static int read_end(struct kv_txn *t, int rc)
{
	rc = t->rc ? t->rc : rc;
	kv_txn_abort(t);
	return rc;
}

/* The note text of the published header of (ns, epoch), parsed into *note (the caller frees
 * it). Returns 0, DIRAUTH_ERR_NOT_FOUND (not published), DIRAUTH_ERR_STORE (does not parse),
 * DIRAUTH_ERR_NOMEM, or t's error. */
static int header_note(struct kv_txn *t, struct store *store, uint16_t ns, uint64_t epoch, struct note **note)
{
	uint8_t key[STORE_EPOCH_KEY_LEN];
	struct kv_val value;
	*note = NULL;
	epoch_key(key, ns, epoch);
	if (!kv_txn_get(t, store->snapshots, key, sizeof key, &value))
		return t->rc ? t->rc : DIRAUTH_ERR_NOT_FOUND;
	int rc = note_parse(value.data, value.len, note);
	if (rc)
		return rc == DIRAUTH_ERR_NOMEM ? rc : DIRAUTH_ERR_STORE;
	return 0;
}

/* 1 when leaf is the note text of the published header of (ns, epoch), 0 when it is not; or a
 * negative error (header_note's). */
static int leaf_is_header(struct kv_txn *t, struct store *store, uint16_t ns, uint64_t epoch,
                          const uint8_t *leaf, size_t leaf_len)
{
	struct note *note = NULL;
	int rc = header_note(t, store, ns, epoch, &note);
	if (rc)
		return rc;
	rc = note->text_len == leaf_len && memcmp(note->text, leaf, leaf_len) == 0;
	note_free(note);
	return rc;
}

struct scan {
	uint64_t from;
	uint64_t found;
	bool have;
};

static int scan_visit(void *context, struct kv_val key, struct kv_val value)
{
	(void)value;
	struct scan *scan = context;
	if (key.len != STORE_EPOCH_KEY_LEN)
		return DIRAUTH_ERR_STORE;
	uint64_t epoch = get_uint(key.data + STORE_NS_LEN, 8);
	if (epoch < scan->from)
		return 0;
	scan->found = epoch;
	scan->have = true;
	return 1;
}

/* The first published epoch of ns in [from, to]. From 0 it is the namespace's first snapshot;
 * otherwise the snapshots are walked one block of 256 epochs (a 7-byte epoch prefix) at a time,
 * so a run of epochs that published nothing costs one cursor seek per block. Returns 0 with
 * *found, DIRAUTH_ERR_NOT_FOUND, DIRAUTH_ERR_STORE. */
static int scan_published(struct kv_txn *t, struct store *store, uint16_t ns, uint64_t from, uint64_t to,
                          uint64_t *found)
{
	struct scan scan = {.from = from};
	if (from > to)
		return DIRAUTH_ERR_NOT_FOUND;
	if (from == 0) {
		/* From the first: the namespace's first snapshot key, one seek. */
		uint8_t prefix[STORE_NS_LEN];
		put_uint(prefix, ns, STORE_NS_LEN);
		int rc = kv_txn_walk_prefix(t, store->snapshots, prefix, sizeof prefix, scan_visit, &scan);
		if (rc < 0)
			return rc;
		if (!scan.have || scan.found > to)
			return DIRAUTH_ERR_NOT_FOUND;
		*found = scan.found;
		return 0;
	}
	for (uint64_t block = from >> 8;; block++) {
		uint8_t prefix[STORE_NS_LEN + 7];
		put_uint(prefix, ns, STORE_NS_LEN);
		put_uint(prefix + STORE_NS_LEN, block, 7);
		int rc = kv_txn_walk_prefix(t, store->snapshots, prefix, sizeof prefix, scan_visit, &scan);
		if (rc < 0)
			return rc;
		if (scan.have) {
			if (scan.found > to)
				return DIRAUTH_ERR_NOT_FOUND;
			*found = scan.found;
			return 0;
		}
		if (block == to >> 8)
			return DIRAUTH_ERR_NOT_FOUND;
	}
}

/* The namespace's latest published epoch in t. Returns 0, DIRAUTH_ERR_NOT_FOUND, t's error. */
static int latest_published(struct kv_txn *t, struct store *store, uint16_t ns, uint64_t *epoch)
{
	uint8_t key[STORE_NS_LEN];
	struct kv_val value;
	put_uint(key, ns, STORE_NS_LEN);
	if (!kv_txn_get(t, store->latest, key, sizeof key, &value))
		return t->rc ? t->rc : DIRAUTH_ERR_NOT_FOUND;
	if (value.len != 8) {
		kv_txn_fail(t, DIRAUTH_ERR_STORE);
		return DIRAUTH_ERR_STORE;
	}
	*epoch = get_uint(value.data, 8);
	return 0;
}

/* The stored hash (level, index) of ns into out. Returns 0, DIRAUTH_ERR_NOT_FOUND, or
 * DIRAUTH_ERR_STORE for a damaged one (t failed). */
static int hash_get(struct kv_txn *t, struct store *store, uint16_t ns, uint8_t level, uint64_t index,
                    merkle_hash out)
{
	uint8_t key[LOG_HASH_KEY_LEN];
	struct kv_val value;
	hash_key(key, ns, level, index);
	if (!kv_txn_get(t, store->log_hashes, key, sizeof key, &value))
		return t->rc ? t->rc : DIRAUTH_ERR_NOT_FOUND;
	if (value.len != MERKLE_HASH_SIZE) {
		kv_txn_fail(t, DIRAUTH_ERR_STORE);
		return DIRAUTH_ERR_STORE;
	}
	memcpy(out, value.data, MERKLE_HASH_SIZE);
	return 0;
}

/* The RFC 6962 root of the tree of size leaves, folded from its stored hashes right to left.
 * Returns 0, DIRAUTH_ERR_STORE (a hash missing), DIRAUTH_ERR_CRYPTO. */
static int tree_root(struct kv_txn *t, struct store *store, uint16_t ns, uint64_t size, merkle_hash out)
{
	merkle_hash parts[64];
	size_t count = 0;
	uint64_t position = 0;
	if (size == 0)
		return merkle_root(NULL, 0, out);
	for (int bit = 63; bit >= 0; bit--) {
		if (!((size >> bit) & 1))
			continue;
		int rc = hash_get(t, store, ns, (uint8_t)bit, position >> bit, parts[count++]);
		if (rc)
			return rc == DIRAUTH_ERR_NOT_FOUND ? DIRAUTH_ERR_STORE : rc;
		position += (uint64_t)1 << bit;
	}
	memcpy(out, parts[count - 1], MERKLE_HASH_SIZE);
	for (size_t i = count - 1; i-- > 0;) {
		merkle_hash folded;
		if (merkle_node_hash(parts[i], out, folded) != 0)
			return DIRAUTH_ERR_CRYPTO;
		memcpy(out, folded, MERKLE_HASH_SIZE);
	}
	return 0;
}

/* Checks that hashes are the records of leaf (leaf_hash) appended at index size: the leaf hash
 * at (0, size), then each complete subtree it completes, lowest first, each the node hash of its
 * stored left sibling and the record below. Returns 0, DIRAUTH_ERR_MISMATCH, DIRAUTH_ERR_SYNTAX,
 * DIRAUTH_ERR_STORE, DIRAUTH_ERR_CRYPTO. */
static int check_records(struct kv_txn *t, struct store *store, uint16_t ns, uint64_t size,
                         const merkle_hash leaf_hash, const struct store_log_hash *hashes, size_t count)
{
	size_t expected = 1;
	for (uint64_t index = size; index & 1; index >>= 1)
		expected++;
	if (hashes[0].level != 0 || hashes[0].index != size)
		return DIRAUTH_ERR_MISMATCH;
	if (count != expected)
		return DIRAUTH_ERR_SYNTAX;
	for (size_t j = 0; j < count; j++)
		if (hashes[j].level != j || hashes[j].index != size >> j)
			return DIRAUTH_ERR_SYNTAX;
	if (memcmp(hashes[0].hash, leaf_hash, MERKLE_HASH_SIZE) != 0)
		return DIRAUTH_ERR_MISMATCH;
	for (size_t j = 1; j < count; j++) {
		merkle_hash left, parent;
		int rc = hash_get(t, store, ns, (uint8_t)(j - 1), (size >> (j - 1)) - 1, left);
		if (rc)
			return rc == DIRAUTH_ERR_NOT_FOUND ? DIRAUTH_ERR_STORE : rc;
		if (merkle_node_hash(left, hashes[j - 1].hash, parent) != 0)
			return DIRAUTH_ERR_CRYPTO;
		if (memcmp(parent, hashes[j].hash, MERKLE_HASH_SIZE) != 0)
			return DIRAUTH_ERR_MISMATCH;
	}
	return 0;
}

/* ---- the state and the published headers ---- */

int store_log_state(struct store *store, const char *namespace_name, struct store_log_state *out)
{
	struct kv_txn t;
	uint16_t ns;
	if (!store || !out)
		return DIRAUTH_ERR_SYNTAX;
	memset(out, 0, sizeof *out);
	int rc = namespace_read_begin(store, namespace_name, &t, &ns);
	if (rc)
		return rc == DIRAUTH_ERR_NOT_FOUND ? 0 : rc;
	state_get(&t, store, ns, out);
	return read_end(&t, 0);
}

int store_log_next_published(struct store *store, const char *namespace_name, const uint64_t *after,
                             uint64_t *epoch)
{
	struct kv_txn t;
	uint16_t ns;
	uint64_t latest = 0;
	if (!store || !epoch)
		return DIRAUTH_ERR_SYNTAX;
	int rc = namespace_read_begin(store, namespace_name, &t, &ns);
	if (rc)
		return rc;
	rc = latest_published(&t, store, ns, &latest);
	if (rc == 0) {
		if (after && *after == UINT64_MAX)
			rc = DIRAUTH_ERR_NOT_FOUND;
		else
			rc = scan_published(&t, store, ns, after ? *after + 1 : 0, latest, epoch);
	}
	return read_end(&t, rc);
}

/* ---- appending ---- */

int store_log_append(struct store *store, const char *namespace_name, uint64_t epoch, const uint8_t *leaf,
                     size_t leaf_len, const struct store_log_hash *hashes, size_t count)
{
	struct kv_txn t;
	struct kv_val value;
	struct store_log_state state;
	merkle_hash leaf_hash;
	uint8_t key[STORE_EPOCH_KEY_LEN], field[8];
	uint16_t ns = 0;
	uint64_t gap;
	int rc;

	if (!store || !leaf || leaf_len == 0 || !hashes || count == 0)
		return DIRAUTH_ERR_SYNTAX;
	if (count > STORE_LOG_APPEND_MAX)
		return DIRAUTH_ERR_SYNTAX;
	if (leaf_len > STORE_LOG_LEAF_MAX)
		return DIRAUTH_ERR_BOUNDS;
	if ((rc = merkle_leaf_hash(leaf, leaf_len, leaf_hash)) != 0)
		return rc;

	kv_txn_begin(store->env, &t, KV_WRITE);
	if ((rc = namespace_of(&t, store, namespace_name, &ns)) != 0)
		goto refuse;
	state_get(&t, store, ns, &state);
	epoch_key(key, ns, epoch);
	if (kv_txn_get(&t, store->log_epochs, key, sizeof key, &value)) {
		/* Already in the log: the same leaf again changes nothing. */
		rc = leaf_is_header(&t, store, ns, epoch, leaf, leaf_len);
		rc = rc == 1                       ? 0
		     : rc == 0                     ? DIRAUTH_ERR_MISMATCH
		     : rc == DIRAUTH_ERR_NOT_FOUND ? DIRAUTH_ERR_STORE
		                                   : rc;
		goto refuse;
	}
	if (t.rc)
		goto refuse;
	if (state.size > 0 && epoch < state.last_epoch) {
		rc = DIRAUTH_ERR_ROLLBACK;
		goto refuse;
	}
	if (state.size == UINT64_MAX) {
		rc = DIRAUTH_ERR_BOUNDS;
		goto refuse;
	}
	rc = leaf_is_header(&t, store, ns, epoch, leaf, leaf_len);
	if (rc != 1) {
		rc = rc == 0 ? DIRAUTH_ERR_MISMATCH : rc;
		goto refuse;
	}
	/* No published epoch may be skipped: the one before epoch must be the log's last. */
	if (epoch > 0) {
		rc =
		    scan_published(&t, store, ns, state.size > 0 ? state.last_epoch + 1 : 0, epoch - 1, &gap);
		if (rc != DIRAUTH_ERR_NOT_FOUND) {
			rc = rc == 0 ? DIRAUTH_ERR_MISMATCH : rc;
			goto refuse;
		}
	}
	if ((rc = check_records(&t, store, ns, state.size, leaf_hash, hashes, count)) != 0)
		goto refuse;

	for (size_t j = 0; j < count; j++) {
		uint8_t hkey[LOG_HASH_KEY_LEN];
		hash_key(hkey, ns, hashes[j].level, hashes[j].index);
		kv_txn_put(&t, store->log_hashes, hkey, sizeof hkey, hashes[j].hash, MERKLE_HASH_SIZE);
	}
	/* The leaf's record: its epoch, then its text, so that reading a bundle is one walk. */
	uint8_t leaf_key[STORE_EPOCH_KEY_LEN];
	uint8_t *leaf_value = malloc(8 + leaf_len);
	if (!leaf_value) {
		rc = DIRAUTH_ERR_NOMEM;
		goto refuse;
	}
	epoch_key(leaf_key, ns, state.size);
	put_uint(leaf_value, epoch, 8);
	memcpy(leaf_value + 8, leaf, leaf_len);
	kv_txn_put(&t, store->log_leaves, leaf_key, sizeof leaf_key, leaf_value, 8 + leaf_len);
	free(leaf_value);
	put_uint(field, state.size, 8);
	kv_txn_put(&t, store->log_epochs, key, sizeof key, field, sizeof field);
	state.size++;
	state.last_epoch = epoch;
	state_put(&t, store, ns, &state);
	return kv_txn_commit(&t);

refuse:
	kv_txn_abort(&t);
	return t.rc ? t.rc : rc;
}

/* ---- reading hashes and leaves ---- */

int store_log_reader_open(struct store *store, const char *namespace_name, struct store_log_reader *reader)
{
	struct kv_txn t;
	struct store_log_state state;
	uint16_t ns = 0;
	if (!store || !reader)
		return DIRAUTH_ERR_SYNTAX;
	memset(reader, 0, sizeof *reader);
	int rc = namespace_read_begin(store, namespace_name, &t, &ns);
	if (rc)
		return rc;
	state_get(&t, store, ns, &state);
	reader->store = store;
	reader->namespace_id = ns;
	reader->tree_size = state.size;
	return read_end(&t, 0);
}

/* A walk over consecutive stored hashes of one level: records below from are skipped, each
 * next one must be the index expected (a gap inside the tree is DIRAUTH_ERR_STORE). */
struct hash_walk {
	uint64_t from;
	uint64_t next;  /* the index expected next */
	uint64_t count; /* hashes still wanted */
	merkle_hash *out;
};

static int hash_walk_visit(void *context, struct kv_val key, struct kv_val value)
{
	struct hash_walk *walk = context;
	if (key.len != LOG_HASH_KEY_LEN)
		return DIRAUTH_ERR_STORE;
	uint64_t index = get_uint(key.data + STORE_NS_LEN + 1, 8);
	if (index < walk->from)
		return 0;
	if (index != walk->next || value.len != MERKLE_HASH_SIZE)
		return DIRAUTH_ERR_STORE;
	memcpy(walk->out[index - walk->from], value.data, MERKLE_HASH_SIZE);
	walk->next++;
	return --walk->count == 0 ? 1 : 0;
}

/* Hashes from .. from + count - 1 of level of ns into out, by cursor: one walk per block of 256
 * indexes (a 7-byte index prefix; at most two blocks for a read of STORE_LOG_READ_MAX), each a
 * single seek then the next records in key order, instead of one lookup from the root per hash.
 * A walk starts at its block's first index, so a read that does not start on a block costs up to
 * 255 skipped records: reads shorter than LOG_WALK_MIN look each hash up instead. Returns 0 or
 * DIRAUTH_ERR_STORE (a hash missing or damaged), t's error. */
static int hash_read_walk(struct kv_txn *t, struct store *store, uint16_t ns, uint8_t level, uint64_t from,
                          uint64_t count, merkle_hash *out)
{
	struct hash_walk walk = {.from = from, .next = from, .count = count, .out = out};
	uint64_t last_block = (from + count - 1) >> 8;
	for (uint64_t block = from >> 8; block <= last_block && walk.count > 0; block++) {
		uint8_t prefix[STORE_NS_LEN + 1 + 7];
		put_uint(prefix, ns, STORE_NS_LEN);
		prefix[STORE_NS_LEN] = level;
		put_uint(prefix + STORE_NS_LEN + 1, block, 7);
		int rc =
		    kv_txn_walk_prefix(t, store->log_hashes, prefix, sizeof prefix, hash_walk_visit, &walk);
		if (rc < 0)
			return rc;
		if (walk.count > 0 && walk.next >> 8 == block)
			return DIRAUTH_ERR_STORE; /* the block ended before the hashes wanted */
	}
	return walk.count == 0 ? 0 : DIRAUTH_ERR_STORE;
}

int store_log_read_hashes(void *context, uint8_t level, uint64_t index, uint64_t count, merkle_hash *out)
{
	struct store_log_reader *reader = context;
	struct kv_txn t;
	if (!reader || !reader->store || !out)
		return DIRAUTH_ERR_SYNTAX;
	if (count == 0 || count > STORE_LOG_READ_MAX)
		return DIRAUTH_ERR_BOUNDS;
	if (level > 63)
		return DIRAUTH_ERR_NOT_FOUND;
	uint64_t available = reader->tree_size >> level;
	if (index >= available || count > available - index)
		return DIRAUTH_ERR_NOT_FOUND;
	kv_txn_begin(reader->store->env, &t, KV_READ);
	int rc = 0;
	if (count >= LOG_WALK_MIN) {
		rc = hash_read_walk(&t, reader->store, reader->namespace_id, level, index, count, out);
	} else {
		for (uint64_t i = 0; i < count && rc == 0; i++) {
			rc = hash_get(&t, reader->store, reader->namespace_id, level, index + i, out[i]);
			if (rc == DIRAUTH_ERR_NOT_FOUND)
				rc = DIRAUTH_ERR_STORE; /* inside the tree: it must be there */
		}
	}
	return read_end(&t, rc);
}

/* The text of a stored header note of (ns, epoch), borrowed from t: the bytes before the last
 * "\n\n" with the final '\n', as note_parse splits them, without parsing the signatures (the
 * header parsed as a note when it was stored). Returns 0, DIRAUTH_ERR_NOT_FOUND (not published),
 * DIRAUTH_ERR_STORE (not a note's shape, or a text over STORE_LOG_LEAF_MAX), t's error. */
static int header_text(struct kv_txn *t, struct store *store, uint16_t ns, uint64_t epoch,
                       const uint8_t **text, size_t *len)
{
	uint8_t key[STORE_EPOCH_KEY_LEN];
	struct kv_val value;
	epoch_key(key, ns, epoch);
	if (!kv_txn_get(t, store->snapshots, key, sizeof key, &value))
		return t->rc ? t->rc : DIRAUTH_ERR_NOT_FOUND;
	if (value.len < 2 || value.data[value.len - 1] != '\n')
		return DIRAUTH_ERR_STORE;
	for (size_t i = value.len - 1; i > 0; i--) {
		if (value.data[i - 1] == '\n' && value.data[i] == '\n') {
			if (i == 1 || i + 1 == value.len || i > STORE_LOG_LEAF_MAX)
				return DIRAUTH_ERR_STORE; /* an empty text, no signatures, too long */
			*text = value.data;
			*len = i; /* the text keeps its final '\n' */
			return 0;
		}
	}
	return DIRAUTH_ERR_STORE;
}

/* The epoch and, unless text is NULL, the text (borrowed from t) of a log_leaves record of ns.
 * A record of 8 bytes, as stores written before the leaf text was kept beside its epoch have,
 * takes the text from the header. Returns 0, DIRAUTH_ERR_STORE (a damaged record, a missing
 * header), t's error. */
static int leaf_record(struct kv_txn *t, struct store *store, uint16_t ns, struct kv_val value,
                       uint64_t *epoch, const uint8_t **text, size_t *len)
{
	if (value.len < 8 || value.len > 8 + STORE_LOG_LEAF_MAX)
		return DIRAUTH_ERR_STORE;
	*epoch = get_uint(value.data, 8);
	if (!text)
		return 0; /* the epoch alone: no header read */
	if (value.len > 8) {
		*text = value.data + 8;
		*len = value.len - 8;
		return 0;
	}
	int rc = header_text(t, store, ns, *epoch, text, len);
	return rc == DIRAUTH_ERR_NOT_FOUND ? DIRAUTH_ERR_STORE : rc; /* a leaf's header stays */
}

int store_log_leaf(struct store *store, const char *namespace_name, uint64_t index, uint64_t *epoch,
                   struct buffer *leaf)
{
	struct kv_txn t;
	struct kv_val value;
	uint8_t key[STORE_EPOCH_KEY_LEN];
	uint16_t ns;
	uint64_t found = 0;
	const uint8_t *text = NULL;
	size_t len = 0;
	if (!store)
		return DIRAUTH_ERR_SYNTAX;
	int rc = namespace_read_begin(store, namespace_name, &t, &ns);
	if (rc)
		return rc;
	epoch_key(key, ns, index);
	if (!kv_txn_get(&t, store->log_leaves, key, sizeof key, &value))
		rc = DIRAUTH_ERR_NOT_FOUND;
	else
		rc = leaf_record(&t, store, ns, value, &found, leaf ? &text : NULL, &len);
	if (rc == 0 && leaf) {
		buffer_reset(leaf);
		rc = buffer_append(leaf, text, len);
	}
	if (rc == 0 && epoch)
		*epoch = found;
	return read_end(&t, rc);
}

int store_log_epoch_leaf(struct store *store, const char *namespace_name, uint64_t epoch, uint64_t *index)
{
	struct kv_txn t;
	struct kv_val value;
	uint8_t key[STORE_EPOCH_KEY_LEN];
	uint16_t ns;
	if (!store || !index)
		return DIRAUTH_ERR_SYNTAX;
	int rc = namespace_read_begin(store, namespace_name, &t, &ns);
	if (rc)
		return rc;
	epoch_key(key, ns, epoch);
	if (!kv_txn_get(&t, store->log_epochs, key, sizeof key, &value))
		rc = DIRAUTH_ERR_NOT_FOUND;
	else if (value.len != 8)
		rc = DIRAUTH_ERR_STORE;
	else
		*index = get_uint(value.data, 8);
	return read_end(&t, rc);
}

/* A walk over consecutive log_leaves records, visiting from .. from + count - 1. */
struct leaf_walk {
	struct kv_txn *t;
	struct store *store;
	uint16_t ns;
	uint64_t from;
	uint64_t next;  /* the index expected next */
	uint64_t count; /* leaves still to visit */
	store_log_leaf_visitor visit;
	void *context;
	int visitor_rc; /* the visitor's non-zero return, told apart from the walk's own stop */
};

static int leaf_walk_visit(void *context, struct kv_val key, struct kv_val value)
{
	struct leaf_walk *walk = context;
	uint64_t epoch = 0;
	const uint8_t *text = NULL;
	size_t len = 0;
	if (key.len != STORE_EPOCH_KEY_LEN)
		return DIRAUTH_ERR_STORE;
	uint64_t index = get_uint(key.data + STORE_NS_LEN, 8);
	if (index < walk->from)
		return 0;
	if (index != walk->next)
		return DIRAUTH_ERR_STORE; /* inside the log: it must be there */
	int rc = leaf_record(walk->t, walk->store, walk->ns, value, &epoch, &text, &len);
	if (rc)
		return rc;
	if ((rc = walk->visit(walk->context, index, epoch, text, len)) != 0) {
		walk->visitor_rc = rc;
		return rc;
	}
	walk->next++;
	return --walk->count == 0 ? 1 : 0;
}

int store_log_leaves(struct store *store, const char *namespace_name, uint64_t start, uint64_t count,
                     store_log_leaf_visitor visit, void *context)
{
	struct kv_txn t;
	struct store_log_state state;
	uint16_t ns = 0;
	if (!store || !visit)
		return DIRAUTH_ERR_SYNTAX;
	if (count == 0 || count > STORE_LOG_LEAVES_MAX)
		return DIRAUTH_ERR_BOUNDS;
	int rc = namespace_read_begin(store, namespace_name, &t, &ns);
	if (rc)
		return rc;
	state_get(&t, store, ns, &state);
	if (start >= state.size || count > state.size - start)
		rc = DIRAUTH_ERR_NOT_FOUND;
	/* One cursor walk per block of 256 leaves (a 7-byte index prefix): an entry bundle is one
	 * block, read in key order with the leaf texts beside their epochs. */
	struct leaf_walk walk = {.t = &t,
	                         .store = store,
	                         .ns = ns,
	                         .from = start,
	                         .next = start,
	                         .count = count,
	                         .visit = visit,
	                         .context = context};
	for (uint64_t block = start >> 8; rc == 0 && !t.rc && walk.count > 0; block++) {
		uint8_t prefix[STORE_NS_LEN + 7];
		put_uint(prefix, ns, STORE_NS_LEN);
		put_uint(prefix + STORE_NS_LEN, block, 7);
		rc = kv_txn_walk_prefix(&t, store->log_leaves, prefix, sizeof prefix, leaf_walk_visit, &walk);
		if (walk.visitor_rc)
			rc = walk.visitor_rc;
		else if (rc > 0)
			rc = 0; /* the walk's own stop: every leaf visited */
		else if (rc == 0 && walk.count > 0 && walk.next >> 8 == block)
			rc = DIRAUTH_ERR_STORE; /* the block ended before the leaves wanted */
	}
	return read_end(&t, rc);
}

/* ---- checkpoints ---- */

/* The note stored for (ns, size) into out (replaced). Returns 0, DIRAUTH_ERR_NOT_FOUND,
 * DIRAUTH_ERR_NOMEM, t's error. */
static int checkpoint_get(struct kv_txn *t, struct store *store, uint16_t ns, uint64_t size,
                          struct buffer *out)
{
	uint8_t key[STORE_EPOCH_KEY_LEN];
	struct kv_val value;
	epoch_key(key, ns, size);
	if (!kv_txn_get(t, store->log_checkpoints, key, sizeof key, &value))
		return t->rc ? t->rc : DIRAUTH_ERR_NOT_FOUND;
	buffer_reset(out);
	return buffer_append(out, value.data, value.len);
}

/* Parses a checkpoint note: *note (the caller frees it) and its text as *checkpoint. Returns 0,
 * DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_BOUNDS (too long), DIRAUTH_ERR_NOMEM. */
static int checkpoint_note_parse(const uint8_t *bytes, size_t len, struct note **note,
                                 struct checkpoint *checkpoint)
{
	*note = NULL;
	if (len > STORE_LOG_CHECKPOINT_MAX)
		return DIRAUTH_ERR_BOUNDS;
	int rc = note_parse(bytes, len, note);
	if (rc == 0 && checkpoint_parse((*note)->text, (*note)->text_len, checkpoint) != 0)
		rc = DIRAUTH_ERR_SYNTAX;
	if (rc) {
		note_free(*note);
		*note = NULL;
	}
	return rc == DIRAUTH_ERR_NOMEM || rc == 0 ? rc : DIRAUTH_ERR_SYNTAX;
}

int store_log_checkpoint_put(struct store *store, const char *namespace_name, const uint8_t *bytes,
                             size_t len)
{
	struct kv_txn t;
	struct store_log_state state;
	struct checkpoint checkpoint;
	struct note *note = NULL;
	struct buffer stored;
	merkle_hash root;
	uint16_t ns = 0;
	int rc;

	if (!store || !bytes || len == 0)
		return DIRAUTH_ERR_SYNTAX;
	if (len > STORE_LOG_CHECKPOINT_MAX)
		return DIRAUTH_ERR_BOUNDS;
	if ((rc = checkpoint_note_parse(bytes, len, &note, &checkpoint)) != 0)
		return rc;
	buffer_init(&stored);
	kv_txn_begin(store->env, &t, KV_WRITE);
	if ((rc = namespace_of(&t, store, namespace_name, &ns)) != 0)
		goto refuse;
	state_get(&t, store, ns, &state);
	if (t.rc)
		goto refuse;
	uint64_t size = checkpoint.tree_size;
	if (size > state.size) {
		rc = DIRAUTH_ERR_MISMATCH;
		goto refuse;
	}
	if (state.has_checkpoint && size < state.checkpoint_size) {
		rc = DIRAUTH_ERR_ROLLBACK;
		goto refuse;
	}
	if (state.has_checkpoint && size == state.checkpoint_size) {
		/* The same tree head again, with other signatures: its text must be the same. */
		struct note *previous = NULL;
		struct checkpoint ignored;
		rc = checkpoint_get(&t, store, ns, size, &stored);
		if (rc == 0)
			rc = checkpoint_note_parse(stored.data, stored.len, &previous, &ignored);
		if (rc == 0 && (previous->text_len != note->text_len ||
		                memcmp(previous->text, note->text, note->text_len) != 0))
			rc = DIRAUTH_ERR_COLLISION;
		else if (rc == DIRAUTH_ERR_NOT_FOUND || rc == DIRAUTH_ERR_SYNTAX || rc == DIRAUTH_ERR_BOUNDS)
			rc = DIRAUTH_ERR_STORE;
		note_free(previous);
		if (rc)
			goto refuse;
	}
	if ((rc = tree_root(&t, store, ns, size, root)) != 0)
		goto refuse;
	if (memcmp(root, checkpoint.root, MERKLE_HASH_SIZE) != 0) {
		rc = DIRAUTH_ERR_MISMATCH;
		goto refuse;
	}

	uint8_t key[STORE_EPOCH_KEY_LEN];
	epoch_key(key, ns, size);
	kv_txn_put(&t, store->log_checkpoints, key, sizeof key, bytes, len);
	for (unsigned level = 0; level < LOG_TILE_LEVELS; level++) {
		uint16_t width = (uint16_t)((size >> (8 * level)) & 0xff);
		uint64_t index = level + 1 < LOG_TILE_LEVELS ? size >> (8 * (level + 1)) : 0;
		uint8_t pkey[LOG_PARTIAL_KEY_LEN];
		if (width == 0)
			continue;
		partial_key(pkey, ns, (uint8_t)level, index, width);
		kv_txn_put(&t, store->log_partials, pkey, sizeof pkey, NULL, 0);
	}
	state.has_checkpoint = true;
	state.checkpoint_size = size;
	state_put(&t, store, ns, &state);
	rc = kv_txn_commit(&t);
	if (rc == 0)
		atomic_fetch_add(&store->log_generation, 1);
	note_free(note);
	buffer_free(&stored);
	return rc;

refuse:
	kv_txn_abort(&t);
	note_free(note);
	buffer_free(&stored);
	return t.rc ? t.rc : rc;
}

int store_log_checkpoint(struct store *store, const char *namespace_name, struct buffer *note, uint64_t *size)
{
	struct kv_txn t;
	struct store_log_state state;
	uint16_t ns;
	if (!store || !note)
		return DIRAUTH_ERR_SYNTAX;
	int rc = namespace_read_begin(store, namespace_name, &t, &ns);
	if (rc)
		return rc;
	state_get(&t, store, ns, &state);
	rc = state.has_checkpoint ? 0 : DIRAUTH_ERR_NOT_FOUND;
	if (rc == 0 && !t.rc) {
		rc = checkpoint_get(&t, store, ns, state.checkpoint_size, note);
		if (rc == DIRAUTH_ERR_NOT_FOUND)
			rc = DIRAUTH_ERR_STORE; /* the state names it */
	}
	if (rc == 0 && size)
		*size = state.checkpoint_size;
	return read_end(&t, rc);
}

int store_log_checkpoint_at(struct store *store, const char *namespace_name, uint64_t size,
                            struct buffer *note)
{
	struct kv_txn t;
	uint16_t ns;
	if (!store || !note)
		return DIRAUTH_ERR_SYNTAX;
	int rc = namespace_read_begin(store, namespace_name, &t, &ns);
	if (rc)
		return rc;
	rc = checkpoint_get(&t, store, ns, size, note);
	return read_end(&t, rc);
}

int store_log_partial_tile(struct store *store, const char *namespace_name, uint8_t level, uint64_t index,
                           uint16_t width)
{
	struct kv_txn t;
	struct kv_val value;
	uint8_t key[LOG_PARTIAL_KEY_LEN];
	uint16_t ns;
	if (!store)
		return DIRAUTH_ERR_SYNTAX;
	if (level >= LOG_TILE_LEVELS || width == 0 || width > 255)
		return DIRAUTH_ERR_BOUNDS;
	int rc = namespace_read_begin(store, namespace_name, &t, &ns);
	if (rc)
		return rc;
	partial_key(key, ns, level, index, width);
	if (!kv_txn_get(&t, store->log_partials, key, sizeof key, &value))
		rc = DIRAUTH_ERR_NOT_FOUND;
	return read_end(&t, rc);
}

/* ---- witnessed and published ---- */

#define LOG_WITNESS_KEY_LEN (STORE_NS_LEN + 1)
#define LOG_WITNESSED_LEN   (8 + MERKLE_HASH_SIZE)

static void witness_key(uint8_t key[LOG_WITNESS_KEY_LEN], uint16_t ns, char kind)
{
	put_uint(key, ns, STORE_NS_LEN);
	key[STORE_NS_LEN] = (uint8_t)kind;
}

/* The witnessed head of ns in t (has false when none). A damaged record fails t. */
static void witnessed_get(struct kv_txn *t, struct store *store, uint16_t ns, struct store_log_witnessed *out)
{
	uint8_t key[LOG_WITNESS_KEY_LEN];
	struct kv_val value;
	memset(out, 0, sizeof *out);
	witness_key(key, ns, 'w');
	if (!kv_txn_get(t, store->log_witness, key, sizeof key, &value))
		return;
	if (value.len != LOG_WITNESSED_LEN) {
		kv_txn_fail(t, DIRAUTH_ERR_STORE);
		return;
	}
	out->has = true;
	out->size = get_uint(value.data, 8);
	memcpy(out->root, value.data + 8, MERKLE_HASH_SIZE);
}

/* The published size of ns in t. Returns 0, DIRAUTH_ERR_NOT_FOUND, or t's error. */
static int published_get(struct kv_txn *t, struct store *store, uint16_t ns, uint64_t *size)
{
	uint8_t key[LOG_WITNESS_KEY_LEN];
	struct kv_val value;
	witness_key(key, ns, 'p');
	if (!kv_txn_get(t, store->log_witness, key, sizeof key, &value))
		return t->rc ? t->rc : DIRAUTH_ERR_NOT_FOUND;
	if (value.len != 8) {
		kv_txn_fail(t, DIRAUTH_ERR_STORE);
		return DIRAUTH_ERR_STORE;
	}
	*size = get_uint(value.data, 8);
	return 0;
}

int store_log_witnessed(struct store *store, const char *namespace_name, struct store_log_witnessed *out)
{
	struct kv_txn t;
	uint16_t ns;
	if (!store || !out)
		return DIRAUTH_ERR_SYNTAX;
	memset(out, 0, sizeof *out);
	int rc = namespace_read_begin(store, namespace_name, &t, &ns);
	if (rc)
		return rc == DIRAUTH_ERR_NOT_FOUND ? 0 : rc;
	witnessed_get(&t, store, ns, out);
	return read_end(&t, 0);
}

int store_log_witness_advance(struct store *store, const char *namespace_name, uint64_t expected_size,
                              uint64_t size, const merkle_hash root)
{
	struct kv_txn t;
	struct store_log_witnessed current;
	uint8_t key[LOG_WITNESS_KEY_LEN], value[LOG_WITNESSED_LEN];
	uint16_t ns = 0;
	size_t len;
	int rc;
	if (!store || !root)
		return DIRAUTH_ERR_SYNTAX;
	if ((rc = check_name(namespace_name, &len)) != 0)
		return rc;
	kv_txn_begin(store->env, &t, KV_WRITE);
	namespace_intern(&t, store, namespace_name, len, &ns);
	if (!t.rc)
		witnessed_get(&t, store, ns, &current);
	if (t.rc)
		goto refuse;
	if (current.has && current.size == size) {
		rc = memcmp(current.root, root, MERKLE_HASH_SIZE) == 0 ? 0 : DIRAUTH_ERR_COLLISION;
		goto refuse; /* the same head again changes nothing */
	}
	if (current.has && size < current.size) {
		rc = DIRAUTH_ERR_ROLLBACK;
		goto refuse;
	}
	if ((current.has ? current.size : 0) != expected_size) {
		rc = DIRAUTH_ERR_MISMATCH;
		goto refuse;
	}
	witness_key(key, ns, 'w');
	put_uint(value, size, 8);
	memcpy(value + 8, root, MERKLE_HASH_SIZE);
	kv_txn_put(&t, store->log_witness, key, sizeof key, value, sizeof value);
	return kv_txn_commit(&t);

refuse:
	kv_txn_abort(&t);
	return t.rc ? t.rc : rc;
}

int store_log_published(struct store *store, const char *namespace_name, uint64_t *size)
{
	struct kv_txn t;
	uint16_t ns;
	if (!store || !size)
		return DIRAUTH_ERR_SYNTAX;
	int rc = namespace_read_begin(store, namespace_name, &t, &ns);
	if (rc)
		return rc;
	rc = published_get(&t, store, ns, size);
	return read_end(&t, rc);
}

uint64_t store_log_generation(struct store *store)
{
	return store ? atomic_load(&store->log_generation) : 0;
}

int store_log_publish(struct store *store, const char *namespace_name, uint64_t size)
{
	struct kv_txn t;
	struct kv_val value;
	uint8_t key[LOG_WITNESS_KEY_LEN], checkpoint_key[STORE_EPOCH_KEY_LEN], field[8];
	uint64_t published = 0;
	uint16_t ns = 0;
	if (!store)
		return DIRAUTH_ERR_SYNTAX;
	kv_txn_begin(store->env, &t, KV_WRITE);
	int rc = namespace_of(&t, store, namespace_name, &ns);
	if (rc)
		goto refuse;
	epoch_key(checkpoint_key, ns, size);
	if (!kv_txn_get(&t, store->log_checkpoints, checkpoint_key, sizeof checkpoint_key, &value)) {
		rc = DIRAUTH_ERR_NOT_FOUND;
		goto refuse;
	}
	rc = published_get(&t, store, ns, &published);
	if (rc == 0 && size <= published) {
		rc = size == published ? 0 : DIRAUTH_ERR_ROLLBACK;
		goto refuse;
	}
	if (rc != 0 && rc != DIRAUTH_ERR_NOT_FOUND)
		goto refuse;
	witness_key(key, ns, 'p');
	put_uint(field, size, 8);
	kv_txn_put(&t, store->log_witness, key, sizeof key, field, sizeof field);
	rc = kv_txn_commit(&t);
	if (rc == 0)
		atomic_fetch_add(&store->log_generation, 1);
	return rc;

refuse:
	kv_txn_abort(&t);
	return t.rc ? t.rc : rc;
}
