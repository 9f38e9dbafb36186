/*
 * ledger.c: the signer's memory of what it signed, on its own LMDB environment.
 *
 * The ledger is what makes a stolen or buggy dirauthd harmless to the signer's word: whatever
 * it asks, the signer never signs two different statements for one (origin, epoch), never
 * goes back to a lower epoch, and never signs or cosigns a checkpoint that does not extend the
 * last one it signed. That memory must survive crashes exactly, so every check and its record
 * are one write transaction, committed with kv's synchronous durability (fsynced before the
 * commit returns) before the caller may sign. A crash before the commit leaves the ledger as it
 * was and no signature left the process; a crash after it leaves a record that at worst
 * describes a signature nobody received, which only makes the signer stricter.
 *
 * Layout: two named databases.
 *   epochs       kind (u8), origin -> highest epoch (u64), SHA-256 of the statement (32)
 *   checkpoints  kind (u8), origin -> tree size (u64), root hash (32)
 * Integers are big-endian. A stored value of the wrong length is reported as
 * DIRAUTH_ERR_STORE, never read past its end. Nothing is ever deleted.
 *
 * The environment is kv's (kv/kv.h), where no flag that weakens sync exists. Transactions keep
 * their first error, so each operation reads as a straight sequence of reads, checks and writes
 * ending in one commit (or an abort when anything failed).
 */
#include "signer/ledger.h"

#include "schema/error.h"
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
		if (old_size != latest_size)
			return DIRAUTH_ERR_MISMATCH;
		return proof_count == 0 ? 1 : DIRAUTH_ERR_PROOF;
	}
	if (old_size != latest_size)
		return DIRAUTH_ERR_MISMATCH;
	if (proof_count > MERKLE_MAX_PROOF)
		return DIRAUTH_ERR_PROOF;
	return merkle_consistency_verify(latest_size, size, latest_root, root, proof, proof_count) == 0
	           ? 0
	           : DIRAUTH_ERR_PROOF;
}

int ledger_record_checkpoint(struct ledger *ledger, enum ledger_checkpoint_kind kind, const char *origin,
                             uint64_t size, const merkle_hash root, uint64_t old_size,
                             const merkle_hash *proof, size_t proof_count)
{
	uint8_t key[LEDGER_KEY_MAX];
	size_t key_len;
	uint8_t value[LEDGER_VALUE_SIZE];
	uint64_t latest_size = 0;
	merkle_hash latest_root;
	bool have_latest = false;
	struct kv_txn t;
	struct kv_val found;
	int rc;

	if (kind != LEDGER_CHECKPOINT_SIGNED && kind != LEDGER_CHECKPOINT_COSIGNED)
		return DIRAUTH_ERR_INTERNAL;
	rc = ledger_key((uint8_t)kind, origin, key, &key_len);
	if (rc)
		return rc;

	memset(latest_root, 0, sizeof(latest_root));
	kv_txn_begin(ledger->env, &t, KV_WRITE);
	if (kv_txn_get(&t, ledger->checkpoints, key, key_len, &found)) {
		if (!ledger_value_decode(&found, &latest_size, latest_root))
			kv_txn_fail(&t, DIRAUTH_ERR_STORE);
		have_latest = true;
	}
	if (t.rc) {
		kv_txn_abort(&t);
		return t.rc;
	}
	rc = ledger_checkpoint_verdict(have_latest, latest_size, latest_root, size, root, old_size, proof,
	                               proof_count);
	if (rc != 0) {
		kv_txn_abort(&t);
		return rc == 1 ? 0 : rc;
	}
	kv_put_u64(value, size);
	memcpy(value + 8, root, sizeof(merkle_hash));
	kv_txn_put(&t, ledger->checkpoints, key, key_len, value, sizeof(value));
	return kv_txn_commit(&t);
}
