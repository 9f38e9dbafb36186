/*
 * read.c: the log as c2sp.org/tlog-tiles serves it: the latest checkpoint, hash tiles and entry
 * bundles (translog.h).
 *
 * The serving rule of tlog/tlog.md: a full tile once it lies inside the tree of the latest
 * checkpoint; a partial tile only when it is exactly the partial tile of some checkpointed size
 * (store_log_partial_tile), so that every checkpoint ever published can be verified from tiles
 * and nothing is served that a later checkpoint could contradict. The bytes are read from the
 * stored hashes for the tree of the latest checkpoint, which holds every tile it serves.
 */
#include "server/tlog/translog.h"

#include "base/error.h"
#include "server/store/tlog_table.h"
#include "tlog/bundle.h"
#include "tlog/tile.h"
#include "tlog/tree.h"

#include <string.h>

int translog_checkpoint(struct store *store, const char *namespace_name, struct buffer *note)
{
	return store_log_checkpoint(store, namespace_name, note, NULL);
}

static int bundle_visit(void *context, uint64_t index, uint64_t epoch, const uint8_t *leaf, size_t len)
{
	(void)index;
	(void)epoch;
	return tlog_bundle_append(context, leaf, len);
}

int translog_tile(struct store *store, const char *namespace_name, const char *path, size_t len,
                  struct buffer *out, enum translog_miss *miss)
{
	struct tlog_tile tile;
	struct store_log_state state;
	enum translog_miss ignored;
	int rc;

	if (!miss)
		miss = &ignored;
	*miss = TRANSLOG_MISS_NONE;
	if (!store || !path || !out)
		return DIRAUTH_ERR_SYNTAX;
	if ((rc = tlog_tile_path_parse(path, len, &tile)) != 0)
		return rc;
	if ((rc = store_log_state(store, namespace_name, &state)) != 0)
		return rc;
	if (!state.has_checkpoint) {
		*miss = TRANSLOG_MISS_NO_CHECKPOINT;
		return DIRAUTH_ERR_NOT_FOUND;
	}
	uint64_t size = state.checkpoint_size;
	if (tlog_tile_check(&tile, size) != 0) {
		*miss = TRANSLOG_MISS_BEYOND_TREE;
		return DIRAUTH_ERR_NOT_FOUND;
	}
	if (tile.width < TLOG_TILE_WIDTH) {
		rc = store_log_partial_tile(store, namespace_name, tile.level, tile.index, tile.width);
		if (rc == DIRAUTH_ERR_NOT_FOUND)
			*miss = TRANSLOG_MISS_NOT_CHECKPOINTED;
		if (rc)
			return rc;
	}
	buffer_reset(out);
	if (tile.kind == TLOG_TILE_ENTRIES)
		return store_log_leaves(store, namespace_name, tile.index * TLOG_TILE_WIDTH, tile.width,
		                        bundle_visit, out);

	struct store_log_reader reader;
	if ((rc = store_log_reader_open(store, namespace_name, &reader)) != 0)
		return rc;
	if (reader.tree_size < size)
		return DIRAUTH_ERR_STORE; /* a checkpoint of a tree the store does not have */
	reader.tree_size = size;
	struct tlog_hash_reader hashes = {store_log_read_hashes, &reader};
	uint8_t bytes[TLOG_TILE_BYTES];
	size_t tile_len = 0;
	if ((rc = tlog_tile_read(&hashes, size, &tile, bytes, &tile_len)) != 0)
		return rc;
	return buffer_append(out, bytes, tile_len);
}
