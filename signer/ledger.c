/*
 * ledger.c: the signer's memory of what it signed, on its own LMDB environment.
 *
 * The ledger is what makes a stolen or buggy dirauthd harmless to the signer's word: whatever
 * it asks, the signer never signs two different statements for one (origin, epoch), never
 * goes back to a lower epoch, and never signs or cosigns a checkpoint that does not extend the
 * last one it signed or cosigned for that origin: the log key and the cosignature key answer
 * for one tree per origin, so the signer cannot sign one tree head and cosign another. That
 * memory must survive crashes exactly, so every check and its record are one write
 * transaction, committed with kv's synchronous durability (fsynced before the commit returns)
 * before the caller may sign. A crash before the commit leaves the ledger as it was and no
 * signature left the process; a crash after it leaves a record that at worst describes a
 * signature nobody received, which only makes the signer stricter.
 *
 * Layout: two named databases.
 *   epochs       kind (u8), origin -> highest epoch (u64), SHA-256 of the statement (32)
 *   checkpoints  kind (u8), origin -> tree size (u64), root hash (32): the latest signed with
 *                the log key (kind 0) and the latest cosigned (kind 1); a new checkpoint of
 *                either kind must extend the larger of the two
 * Integers are big-endian. A stored value of the wrong length is reported as
 * DIRAUTH_ERR_STORE, never read past its end. Nothing is ever deleted.
 *
 * The environment is kv's (kv/kv.h), where no flag that weakens sync exists. Transactions keep
 * their first error, so each operation reads as a straight sequence of reads, checks and writes
 * ending in one commit (or an abort when anything failed).
 */
#include "signer/ledger.h"

#include "base/error.h"
#include "kv/kv.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define LEDGER_MAP_SIZE   ((size_t)64 << 20) /* a few records per origin: far more than enough */
#define LEDGER_ORIGIN_MAX 255                /* the longest origin of a snapshot or checkpoint */
#define LEDGER_KEY_MAX    (1 + LEDGER_ORIGIN_MAX)
#define LEDGER_VALUE_SIZE (8 + 32)

struct ledger {
	struct kv_env *env;
	struct kv_db epochs;
	struct kv_db checkpoints;
};

/* ---- encoding ---- */

/* Builds the key kind || origin. Returns 0 or DIRAUTH_ERR_BOUNDS for an empty or too long
 * origin (keys are bounded, KV_KEY_MAX, and no valid origin is that long). */
static int ledger_key(uint8_t kind, const char *origin, uint8_t key[LEDGER_KEY_MAX], size_t *key_len)
{
	size_t len = origin ? strnlen(origin, LEDGER_ORIGIN_MAX + 1) : 0;
	if (len == 0 || len > LEDGER_ORIGIN_MAX)
		return DIRAUTH_ERR_BOUNDS;
	key[0] = kind;
	memcpy(key + 1, origin, len);
	*key_len = 1 + len;
	return 0;
}

/* Decodes a stored (u64, 32 bytes) value. Returns false for a damaged one. */
static bool ledger_value_decode(const struct kv_val *value, uint64_t *number, uint8_t hash[32])
{
	if (value->len != LEDGER_VALUE_SIZE)
		return false;
	*number = kv_get_u64(value->data);
	memcpy(hash, value->data + 8, 32);
	return true;
}

/* ---- opening and closing ---- */

/* Creates directory (and missing parents) mode 0700; an existing directory is fine. */
int ledger_open(const char *directory, struct ledger **out)
{
	struct ledger *ledger = NULL;
	int rc;

	*out = NULL;
	if (!directory)
		return DIRAUTH_ERR_IO;
	ledger = calloc(1, sizeof(*ledger));
	if (!ledger)
		return DIRAUTH_ERR_NOMEM;
	const struct kv_database databases[] = {
	    {"epochs", &ledger->epochs},
	    {"checkpoints", &ledger->checkpoints},
	};
	rc = kv_env_open(directory, LEDGER_MAP_SIZE, databases, sizeof databases / sizeof databases[0],
	                 &ledger->env);
	if (rc)
		goto cleanup;
	*out = ledger;
	ledger = NULL;
cleanup:
	ledger_close(ledger);
	return rc;
}

void ledger_close(struct ledger *ledger)
{
	if (!ledger)
		return;
	kv_env_close(ledger->env);
	free(ledger);
}

/* ---- epochs ---- */

int ledger_record_epoch(struct ledger *ledger, enum ledger_epoch_kind kind, const char *origin,
                        uint64_t epoch, const uint8_t digest[32])
{
	uint8_t key[LEDGER_KEY_MAX];
	size_t key_len;
	uint8_t value[LEDGER_VALUE_SIZE];
	struct kv_txn t;
	struct kv_val found;
	int rc;

	if (kind != LEDGER_VOTE && kind != LEDGER_SNAPSHOT_HEADER)
		return DIRAUTH_ERR_INTERNAL;
	rc = ledger_key((uint8_t)kind, origin, key, &key_len);
	if (rc)
		return rc;

	kv_txn_begin(ledger->env, &t, KV_WRITE);
	if (kv_txn_get(&t, ledger->epochs, key, key_len, &found)) {
		uint64_t highest;
		uint8_t highest_digest[32];
		if (!ledger_value_decode(&found, &highest, highest_digest))
			kv_txn_fail(&t, DIRAUTH_ERR_STORE);
		else if (epoch < highest)
			kv_txn_fail(&t, DIRAUTH_ERR_ROLLBACK);
		else if (epoch == highest) {
			/* Already recorded and durable: the same bytes are a repeat, others equivocate. */
			rc = memcmp(highest_digest, digest, 32) == 0 ? 0 : DIRAUTH_ERR_COLLISION;
			kv_txn_abort(&t);
			return t.rc ? t.rc : rc;
		}
	}
	kv_put_u64(value, epoch);
	memcpy(value + 8, digest, 32);
	kv_txn_put(&t, ledger->epochs, key, key_len, value, sizeof(value));
	return kv_txn_commit(&t);
}

/* ---- checkpoints ---- */

int ledger_checkpoint_latest(struct ledger *ledger, enum ledger_checkpoint_kind kind, const char *origin,
                             uint64_t *size, merkle_hash root)
{
	uint8_t key[LEDGER_KEY_MAX];
	size_t key_len;
	struct kv_txn t;
	struct kv_val found;
	int rc;

	if (kind != LEDGER_CHECKPOINT_SIGNED && kind != LEDGER_CHECKPOINT_COSIGNED)
		return DIRAUTH_ERR_INTERNAL;
	rc = ledger_key((uint8_t)kind, origin, key, &key_len);
	if (rc)
		return rc;
	kv_txn_begin(ledger->env, &t, KV_READ);
	if (kv_txn_get(&t, ledger->checkpoints, key, key_len, &found)) {
		if (!ledger_value_decode(&found, size, root))
			kv_txn_fail(&t, DIRAUTH_ERR_STORE);
	} else {
		kv_txn_fail(&t, DIRAUTH_ERR_NOT_FOUND);
	}
	rc = t.rc;
	kv_txn_abort(&t);
	return rc;
}

/* The verdict on a new checkpoint (size, root) given the latest recorded one, if any: 0 to
 * record it, 1 for a repeat of the latest, or the refusal. */
static int ledger_checkpoint_verdict(bool have_latest, uint64_t latest_size, const merkle_hash latest_root,
                                     uint64_t size, const merkle_hash root, uint64_t old_size,
                                     const merkle_hash *proof, size_t proof_count)
{
	if (!have_latest || (latest_size == 0 && size > 0)) {
		/* Nothing to be consistent with: the proof starts from the empty tree. */
		if (old_size != 0)
			return DIRAUTH_ERR_MISMATCH;
		return proof_count == 0 ? 0 : DIRAUTH_ERR_PROOF;
	}
	if (size < latest_size)
		return DIRAUTH_ERR_ROLLBACK;
	if (size == latest_size) {
		if (memcmp(root, latest_root, sizeof(merkle_hash)) != 0)
			return DIRAUTH_ERR_COLLISION;
		/* The tree head is already signed, so signing it again contradicts nothing, whatever
		 * head the caller extended it from: two callers of one signer (this authority's log,
		 * and its cosigning of another's) may each ask for the same head, one after the other
		 * took it past the head the first had read. */
		if (old_size > size)
			return DIRAUTH_ERR_MISMATCH;
		return old_size == size && proof_count != 0 ? DIRAUTH_ERR_PROOF : 1;
	}
	if (old_size != latest_size)
		return DIRAUTH_ERR_MISMATCH;
	if (proof_count > MERKLE_MAX_PROOF)
		return DIRAUTH_ERR_PROOF;
	return merkle_consistency_verify(latest_size, size, latest_root, root, proof, proof_count) == 0
	           ? 0
	           : DIRAUTH_ERR_PROOF;
}

/* Reads the record of (kind, origin) into *size and root; false when there is none (or the
 * transaction failed, which it then records). */
static bool ledger_checkpoint_read(struct ledger *ledger, struct kv_txn *t, enum ledger_checkpoint_kind kind,
                                   const char *origin, uint64_t *size, merkle_hash root)
{
	uint8_t key[LEDGER_KEY_MAX];
	size_t key_len;
	struct kv_val found;
	int rc = ledger_key((uint8_t)kind, origin, key, &key_len);
	if (rc) {
		kv_txn_fail(t, rc);
		return false;
	}
	if (!kv_txn_get(t, ledger->checkpoints, key, key_len, &found))
		return false;
	if (!ledger_value_decode(&found, size, root)) {
		kv_txn_fail(t, DIRAUTH_ERR_STORE);
		return false;
	}
	return true;
}

static int count_visit(void *context, struct kv_val key, struct kv_val value)
{
	(void)key;
	(void)value;
	(*(size_t *)context)++;
	return 0;
}

int ledger_checkpoint_room(struct ledger *ledger, const char *origin, size_t most)
{
	struct kv_txn t;
	uint64_t size;
	merkle_hash root;
	size_t records = 0;
	kv_txn_begin(ledger->env, &t, KV_READ);
	bool known = ledger_checkpoint_read(ledger, &t, LEDGER_CHECKPOINT_SIGNED, origin, &size, root) ||
	             ledger_checkpoint_read(ledger, &t, LEDGER_CHECKPOINT_COSIGNED, origin, &size, root);
	if (!known && !t.rc) {
		int walked = kv_txn_walk_prefix(&t, ledger->checkpoints, NULL, 0, count_visit, &records);
		if (walked < 0)
			kv_txn_fail(&t, walked);
	}
	int rc = t.rc;
	kv_txn_abort(&t);
	if (rc)
		return rc;
	/* At most two records an origin, one per kind. */
	return known || records / 2 < most ? 0 : DIRAUTH_ERR_FULL;
}

int ledger_record_checkpoint(struct ledger *ledger, enum ledger_checkpoint_kind kind, const char *origin,
                             uint64_t size, const merkle_hash root, uint64_t old_size,
                             const merkle_hash *proof, size_t proof_count)
{
	uint8_t key[LEDGER_KEY_MAX];
	size_t key_len;
	uint8_t value[LEDGER_VALUE_SIZE];
	uint64_t sizes[2] = {0, 0};
	merkle_hash roots[2];
	bool have[2];
	struct kv_txn t;
	int rc;

	if (kind != LEDGER_CHECKPOINT_SIGNED && kind != LEDGER_CHECKPOINT_COSIGNED)
		return DIRAUTH_ERR_INTERNAL;
	rc = ledger_key((uint8_t)kind, origin, key, &key_len);
	if (rc)
		return rc;

	memset(roots, 0, sizeof(roots));
	kv_txn_begin(ledger->env, &t, KV_WRITE);
	have[0] = ledger_checkpoint_read(ledger, &t, LEDGER_CHECKPOINT_SIGNED, origin, &sizes[0], roots[0]);
	have[1] = ledger_checkpoint_read(ledger, &t, LEDGER_CHECKPOINT_COSIGNED, origin, &sizes[1], roots[1]);
	if (t.rc) {
		kv_txn_abort(&t);
		return t.rc;
	}
	/* One tree per origin whichever key speaks for it: the latest is the larger of the two
	 * records, each of which was proven consistent with the other's state when it was written.
	 * Two heads of one size that differ can only come from a ledger written before both kinds
	 * were held to one tree; nothing more is signed for that origin. */
	if (have[0] && have[1] && sizes[0] == sizes[1] &&
	    memcmp(roots[0], roots[1], sizeof(merkle_hash)) != 0) {
		kv_txn_abort(&t);
		return DIRAUTH_ERR_COLLISION;
	}
	size_t latest = have[1] && (!have[0] || sizes[1] > sizes[0]) ? 1 : 0;
	rc = ledger_checkpoint_verdict(have[0] || have[1], sizes[latest], roots[latest], size, root, old_size,
	                               proof, proof_count);
	size_t own = kind == LEDGER_CHECKPOINT_SIGNED ? 0 : 1;
	if (rc == 1 && have[own] && sizes[own] == size)
		rc = 2; /* a repeat of what this key itself holds: nothing to write */
	if (rc != 0 && rc != 1) {
		kv_txn_abort(&t);
		return rc == 2 ? 0 : rc;
	}
	kv_put_u64(value, size);
	memcpy(value + 8, root, sizeof(merkle_hash));
	kv_txn_put(&t, ledger->checkpoints, key, key_len, value, sizeof(value));
	return kv_txn_commit(&t);
}
