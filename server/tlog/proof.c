/*
 * proof.c: the log's proofs as dirauthd serves them (translog.h, "proofs"): the offline proof
 * file (c2sp.org/tlog-proof) of a published header in a checkpointed tree, and the consistency
 * proof between a tree size and a checkpointed one.
 *
 * A proof is only ever given against a stored checkpoint, so that what a client checks it with is
 * a root the log signed: the inclusion proof file carries that checkpoint note verbatim (with the
 * cosignatures it has now), the consistency proof ends at a checkpointed size. Everything is read
 * from the stored hashes of the tree of that size (tlog/tree.h), never recomputed from leaves.
 * The proof file's extra is the header's signed note as stored, the one the snapshot routes serve,
 * so that the file stands alone (tlog/tlog.md, "Offline proof files").
 */
#include "server/tlog/translog.h"

#include "base/error.h"
#include "server/store/snapshots.h"
#include "server/store/tlog_table.h"
#include "tlog/consistency.h"
#include "tlog/proof.h"
#include "tlog/tree.h"

static void set_miss(enum translog_proof_miss *miss, enum translog_proof_miss value)
{
	if (miss)
		*miss = value;
}

/* The stored checkpoint note of size (0: the latest) into note; *size_out gets its size. */
static int checkpoint_of(struct store *store, const char *namespace_name, uint64_t size, struct buffer *note,
                         uint64_t *size_out, enum translog_proof_miss *miss)
{
	struct store_log_state state;
	int rc = store_log_state(store, namespace_name, &state);
	if (rc)
		return rc;
	if (!state.has_checkpoint) {
		set_miss(miss, TRANSLOG_PROOF_MISS_NO_CHECKPOINT);
		return DIRAUTH_ERR_NOT_FOUND;
	}
	if (size == 0) {
		rc = store_log_checkpoint(store, namespace_name, note, size_out);
		if (rc == DIRAUTH_ERR_NOT_FOUND)
			set_miss(miss, TRANSLOG_PROOF_MISS_NO_CHECKPOINT);
		return rc;
	}
	rc = store_log_checkpoint_at(store, namespace_name, size, note);
	if (rc == DIRAUTH_ERR_NOT_FOUND)
		set_miss(miss, TRANSLOG_PROOF_MISS_SIZE_NOT_CHECKPOINTED);
	if (rc == 0)
		*size_out = size;
	return rc;
}

/* A reader of the stored hashes for the tree of size leaves. */
static int reader_for(struct store *store, const char *namespace_name, uint64_t size,
                      struct store_log_reader *reader)
{
	int rc = store_log_reader_open(store, namespace_name, reader);
	if (rc)
		return rc;
	if (reader->tree_size < size)
		return DIRAUTH_ERR_STORE; /* a checkpoint of a tree the store does not have */
	reader->tree_size = size;
	return 0;
}

int translog_inclusion_proof_against(struct store *store, const char *namespace_name, uint64_t epoch,
                                     const uint8_t *checkpoint, size_t checkpoint_len, uint64_t tree_size,
                                     struct buffer *out, enum translog_proof_miss *miss)
{
	struct buffer header;
	struct store_log_reader reader;
	merkle_hash path[MERKLE_MAX_PROOF];
	size_t path_len = 0;
	uint64_t index = 0;

	set_miss(miss, TRANSLOG_PROOF_MISS_NONE);
	if (!store || !namespace_name || !checkpoint || !out)
		return DIRAUTH_ERR_SYNTAX;
	buffer_init(&header);
	int rc = store_log_epoch_leaf(store, namespace_name, epoch, &index);
	if (rc == DIRAUTH_ERR_NOT_FOUND)
		set_miss(miss, TRANSLOG_PROOF_MISS_EPOCH_NOT_IN_LOG);
	if (rc == 0 && index >= tree_size) {
		set_miss(miss, TRANSLOG_PROOF_MISS_EPOCH_NOT_IN_TREE);
		rc = DIRAUTH_ERR_NOT_FOUND;
	}
	if (rc == 0)
		rc = reader_for(store, namespace_name, tree_size, &reader);
	if (rc == 0) {
		struct tlog_hash_reader hashes = {store_log_read_hashes, &reader};
		rc = tlog_inclusion_proof(&hashes, tree_size, index, path, &path_len);
	}
	if (rc == 0) {
		/* A leaf's header is never deleted: missing, it is a damaged store. */
		rc = store_snapshot_get(store, namespace_name, epoch, &header, NULL);
		if (rc == DIRAUTH_ERR_NOT_FOUND || rc == DIRAUTH_ERR_STALE)
			rc = DIRAUTH_ERR_STORE;
	}
	if (rc == 0) {
		buffer_reset(out);
		rc = tlog_proof_encode(index, path, path_len, header.data, header.len, checkpoint,
		                       checkpoint_len, out);
		if (rc != 0 && rc != DIRAUTH_ERR_NOMEM)
			rc = DIRAUTH_ERR_STORE; /* a stored note or header the codec refuses */
	}
	buffer_free(&header);
	return rc;
}

int translog_inclusion_proof(struct store *store, const char *namespace_name, uint64_t epoch, uint64_t size,
                             struct buffer *out, enum translog_proof_miss *miss)
{
	struct buffer checkpoint;
	uint64_t tree_size = 0;

	set_miss(miss, TRANSLOG_PROOF_MISS_NONE);
	if (!store || !namespace_name || !out)
		return DIRAUTH_ERR_SYNTAX;
	buffer_init(&checkpoint);
	int rc = checkpoint_of(store, namespace_name, size, &checkpoint, &tree_size, miss);
	if (rc == 0)
		rc = translog_inclusion_proof_against(store, namespace_name, epoch, checkpoint.data,
		                                      checkpoint.len, tree_size, out, miss);
	buffer_free(&checkpoint);
	return rc;
}

int translog_consistency_proof(struct store *store, const char *namespace_name, uint64_t old_size,
                               uint64_t new_size, struct buffer *out, enum translog_proof_miss *miss)
{
	merkle_hash proof[MERKLE_MAX_PROOF];
	struct buffer checkpoint;
	struct store_log_reader reader;
	size_t proof_len = 0;
	uint64_t tree_size = 0;
	int rc;

	set_miss(miss, TRANSLOG_PROOF_MISS_NONE);
	if (!store || !namespace_name || !out)
		return DIRAUTH_ERR_SYNTAX;
	if (new_size == 0 || old_size > new_size)
		return DIRAUTH_ERR_PROOF;
	buffer_init(&checkpoint);
	rc = checkpoint_of(store, namespace_name, new_size, &checkpoint, &tree_size, miss);
	buffer_free(&checkpoint);
	if (rc)
		return rc;
	/* From the empty tree, or to the same size, the proof is empty. */
	if (old_size != 0 && old_size != new_size) {
		if ((rc = reader_for(store, namespace_name, new_size, &reader)) != 0)
			return rc;
		struct tlog_hash_reader hashes = {store_log_read_hashes, &reader};
		if ((rc = tlog_consistency_proof(&hashes, new_size, old_size, proof, &proof_len)) != 0)
			return rc;
	}
	buffer_reset(out);
	return tlog_consistency_encode(proof, proof_len, out);
}
