/*
 * tlog_checkpoints.c: the checkpoints of each namespace's transparency log, the partial tiles of
 * every checkpointed tree, and the heads last witnessed and published (tlog_table.h).
 *
 * A checkpoint is kept only for a tree the store holds: its size at most the log's, its root the
 * one the stored hashes fold to, in the transaction that stores it, with the partial tiles of that
 * tree recorded so that serving one is a single lookup. The witnessed head only moves forward from
 * the one it expects, and the published size never past the witnessed one. The databases and
 * their encodings are described in tlog_table.c.
 */
#include "server/store/tlog_table.h"

#include "server/store/internal.h"
#include "server/store/tlog_internal.h"

#include "kv/kv.h"
#include "schema/checkpoint.h"
#include "base/error.h"
#include "crypto/merkle.h"
#include "schema/note.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
	if ((rc = log_table_namespace_of(&t, store, namespace_name, &ns)) != 0)
		goto refuse;
	log_table_state_get(&t, store, ns, &state);
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
	if ((rc = log_table_tree_root(&t, store, ns, size, root)) != 0)
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
		log_table_partial_key(pkey, ns, (uint8_t)level, index, width);
		kv_txn_put(&t, store->log_partials, pkey, sizeof pkey, NULL, 0);
	}
	state.has_checkpoint = true;
	state.checkpoint_size = size;
	log_table_state_put(&t, store, ns, &state);
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
	log_table_state_get(&t, store, ns, &state);
	rc = state.has_checkpoint ? 0 : DIRAUTH_ERR_NOT_FOUND;
	if (rc == 0 && !t.rc) {
		rc = checkpoint_get(&t, store, ns, state.checkpoint_size, note);
		if (rc == DIRAUTH_ERR_NOT_FOUND)
			rc = DIRAUTH_ERR_STORE; /* the state names it */
	}
	if (rc == 0 && size)
		*size = state.checkpoint_size;
	return log_table_read_end(&t, rc);
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
	return log_table_read_end(&t, rc);
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
	log_table_partial_key(key, ns, level, index, width);
	if (!kv_txn_get(&t, store->log_partials, key, sizeof key, &value))
		rc = DIRAUTH_ERR_NOT_FOUND;
	return log_table_read_end(&t, rc);
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
	return log_table_read_end(&t, 0);
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
	return log_table_read_end(&t, rc);
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
	int rc = log_table_namespace_of(&t, store, namespace_name, &ns);
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
