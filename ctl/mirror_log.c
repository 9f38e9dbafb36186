/*
 * mirror_log.c: the transparency log a mirror serves (mirror_internal.h), as c2sp.org/tlog-tiles
 * lays it out under dirauthd's paths.
 *
 * A run holds every hash tile and entry bundle of the checkpoint's tree in memory: those the tree
 * serves already are read back (a full tile never changes), the others downloaded. Nothing of
 * them is trusted until the whole tree is checked: the root computed from the tiles is the
 * checkpoint's (which fetch verified: signed, cosigned, consistent with the one held), each full
 * hash tile hashes to its entry in the tile above, each entry bundle to its level-0 tile. The
 * proofs the tree serves are then computed from these verified tiles (tlog/tree.h), never taken
 * from the server: an inclusion proof of each kept epoch's header against the checkpoint, and the
 * consistency proofs from the sizes just below it. The tiles live only for one run: a tree of
 * CTL_MIRROR_TREE_MAX leaves is at most a few hundred megabytes of hashes, and a usual one a few
 * kilobytes.
 */
#include "ctl/mirror_internal.h"

#include "base/error.h"
#include "tlog/bundle.h"
#include "tlog/consistency.h"
#include "tlog/proof.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the log's tiles, held in memory for one run ---- */

static void tile_set_free(struct tile_set *set)
{
	for (size_t i = 0; i < set->count; i++)
		buffer_free(&set->items[i].data);
	free(set->items);
	memset(set, 0, sizeof(*set));
}

static int tile_equal(const struct tlog_tile *a, const struct tlog_tile *b)
{
	return a->kind == b->kind && a->level == b->level && a->index == b->index && a->width == b->width;
}

/* The order tiles are loaded in (load_tiles): by level, then kind, then index; one tile per place. */
static int tile_order(const struct tlog_tile *a, const struct tlog_tile *b)
{
	if (a->level != b->level)
		return a->level < b->level ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->index != b->index)
		return a->index < b->index ? -1 : 1;
	return 0;
}

static const struct tile_entry *tile_set_find(const struct tile_set *set, const struct tlog_tile *tile)
{
	size_t low = 0, high = set->count;

	while (low < high) {
		size_t middle = low + (high - low) / 2;
		int order = tile_order(&set->items[middle].tile, tile);
		if (order == 0)
			return tile_equal(&set->items[middle].tile, tile) ? &set->items[middle] : NULL;
		if (order < 0)
			low = middle + 1;
		else
			high = middle;
	}
	return NULL;
}

/* tlog_fetch_tile over the tiles in memory: the tree's hashes come only from what was loaded. */
static int tile_set_fetch(void *context, const struct tlog_tile *tile, uint8_t out[TLOG_TILE_BYTES],
                          size_t *len)
{
	const struct tile_entry *entry = tile_set_find(context, tile);

	if (entry == NULL)
		return DIRAUTH_ERR_NOT_FOUND;
	if (entry->data.len > TLOG_TILE_BYTES)
		return DIRAUTH_ERR_MISMATCH;
	memcpy(out, entry->data.data, entry->data.len);
	*len = entry->data.len;
	return 0;
}

/* ---- step 2, the log: tiles and bundles, verified against the checkpoint ---- */

static int tile_add(struct mirror *m, const struct tlog_tile *tile, struct ctl_report *report)
{
	char path[TLOG_TILE_PATH_MAX + 1], relative[TLOG_TILE_PATH_MAX + 8];
	size_t max_bytes = tile->kind == TLOG_TILE_ENTRIES ? TLOG_BUNDLE_MAX_BYTES : TLOG_TILE_BYTES;
	struct tile_set *set = &m->tiles;
	struct tile_entry *entry;
	int present = 0;
	int rc;

	if (set->count == set->capacity) {
		size_t capacity = set->capacity == 0 ? 256 : set->capacity * 2;
		struct tile_entry *items = realloc(set->items, capacity * sizeof(*items));
		if (items == NULL)
			return ctl_mirror_out_of_memory(m, report);
		set->items = items;
		set->capacity = capacity;
	}
	entry = &set->items[set->count];
	memset(entry, 0, sizeof(*entry));
	entry->tile = *tile;
	buffer_init(&entry->data);
	set->count++;
	rc = tlog_tile_path_format(tile, path);
	if (rc != 0)
		return ctl_mirror_out_of_memory(m, report);
	snprintf(relative, sizeof(relative), "log/%s", path);
	rc = ctl_mirror_read_served(m, relative, max_bytes, &entry->data, &present, report);
	if (rc != 0 || present)
		return rc;
	struct net_response response;
	net_response_init(&response);
	rc = ctl_mirror_download(m, "tile", relative, NULL, max_bytes, 0, &response, report);
	if (rc == 0 && buffer_append(&entry->data, response.body.data, response.body.len) != 0)
		rc = ctl_mirror_out_of_memory(m, report);
	net_response_free(&response);
	entry->fresh = 1;
	return rc;
}

/* Every hash tile and entry bundle of the tree of size leaves: read from the tree when held (a
 * full tile never changes), else downloaded. */
static int load_tiles(struct mirror *m, uint64_t size, struct ctl_report *report)
{
	int rc = 0;

	m->tiles.tree_size = size;
	for (uint8_t level = 0;
	     rc == 0 && level * TLOG_TILE_HEIGHT < 64 && (size >> (level * TLOG_TILE_HEIGHT)) > 0; level++) {
		uint64_t full = tlog_tile_full_count(size, level);
		uint16_t partial = tlog_tile_partial_width(size, level);
		for (int kind = TLOG_TILE_HASHES;
		     rc == 0 && kind <= (level == 0 ? TLOG_TILE_ENTRIES : TLOG_TILE_HASHES); kind++) {
			for (uint64_t index = 0; rc == 0 && index < full; index++) {
				struct tlog_tile tile = {(enum tlog_tile_kind)kind, level, index,
				                         TLOG_TILE_WIDTH};
				rc = tile_add(m, &tile, report);
			}
			if (rc == 0 && partial > 0) {
				struct tlog_tile tile = {(enum tlog_tile_kind)kind, level, full, partial};
				rc = tile_add(m, &tile, report);
			}
		}
	}
	return rc;
}

int ctl_mirror_log_refused(struct mirror *m, int rc, const char *why, struct ctl_report *report)
{
	ctl_report_fail(
	    report, rc == DIRAUTH_ERR_NOMEM || rc == DIRAUTH_ERR_CRYPTO ? CTL_EXIT_SOFTWARE : CTL_EXIT_DATA,
	    "%s: log: %s (%s)", m->what, why, dirauth_strerror(rc));
	return rc;
}

/* The tree is the checkpoint's: its root from the tiles, each full hash tile against the hash
 * above it, each bundle against its level-0 tile. Together these tie every byte to the root. */
static int verify_tiles(struct mirror *m, const struct checkpoint *checkpoint, struct ctl_report *report)
{
	struct tlog_entry *entries = NULL;
	merkle_hash root;
	int rc;

	rc = tlog_tree_root(&m->reader, checkpoint->tree_size, root);
	if (rc != 0)
		return ctl_mirror_log_refused(m, rc, "the tiles do not make a tree", report);
	if (memcmp(root, checkpoint->root, MERKLE_HASH_SIZE) != 0)
		return ctl_mirror_log_refused(m, DIRAUTH_ERR_MISMATCH,
		                              "the tiles' root is not the checkpoint's", report);
	entries = calloc(TLOG_BUNDLE_MAX_ENTRIES, sizeof(*entries));
	if (entries == NULL)
		return ctl_mirror_out_of_memory(m, report);
	for (size_t i = 0; rc == 0 && i < m->tiles.count; i++) {
		const struct tile_entry *entry = &m->tiles.items[i];
		if (entry->tile.kind == TLOG_TILE_ENTRIES) {
			struct tlog_tile hashes = entry->tile;
			const struct tile_entry *level0;
			hashes.kind = TLOG_TILE_HASHES;
			level0 = tile_set_find(&m->tiles, &hashes);
			rc = level0 == NULL ? DIRAUTH_ERR_NOT_FOUND
			                    : tlog_bundle_parse(entry->data.data, entry->data.len,
			                                        entry->tile.width, entries);
			if (rc == 0)
				rc = tlog_bundle_check_tile(entries, entry->tile.width, level0->data.data,
				                            level0->data.len);
			if (rc != 0)
				rc = ctl_mirror_log_refused(
				    m, rc, "an entry bundle does not hash to its tile", report);
		} else if (entry->tile.width == TLOG_TILE_WIDTH) {
			uint8_t parent = (uint8_t)((entry->tile.level + 1) * TLOG_TILE_HEIGHT);
			merkle_hash computed, expected;
			rc = tlog_tile_hash(&entry->tile, entry->data.data, entry->data.len, parent,
			                    entry->tile.index, computed);
			if (rc == 0)
				rc = tlog_tile_source_read(&m->source, parent, entry->tile.index, 1,
				                           &expected);
			if (rc == 0 && memcmp(computed, expected, MERKLE_HASH_SIZE) != 0)
				rc = DIRAUTH_ERR_MISMATCH;
			if (rc != 0)
				rc = ctl_mirror_log_refused(
				    m, rc, "a hash tile does not hash to the tree above it", report);
		}
	}
	free(entries);
	return rc;
}

/* The leaf of each header: the entries are searched from the newest, where kept epochs are. */
static int find_leaves(struct mirror *m, struct epoch_header **headers, size_t count,
                       struct ctl_report *report)
{
	struct tlog_entry *entries = calloc(TLOG_BUNDLE_MAX_ENTRIES, sizeof(*entries));
	size_t found = 0;
	int rc = 0;

	if (entries == NULL)
		return ctl_mirror_out_of_memory(m, report);
	for (size_t i = m->tiles.count; rc == 0 && found < count && i > 0; i--) {
		const struct tile_entry *entry = &m->tiles.items[i - 1];
		if (entry->tile.kind != TLOG_TILE_ENTRIES)
			continue;
		rc = tlog_bundle_parse(entry->data.data, entry->data.len, entry->tile.width, entries);
		for (size_t e = 0; rc == 0 && e < entry->tile.width; e++) {
			for (size_t h = 0; h < count; h++) {
				if (headers[h]->in_log || headers[h]->text_len != entries[e].len ||
				    memcmp(headers[h]->text, entries[e].data, entries[e].len) != 0)
					continue;
				headers[h]->in_log = 1;
				headers[h]->leaf = entry->tile.index * TLOG_TILE_WIDTH + e;
				found++;
			}
		}
	}
	free(entries);
	return rc == 0 ? 0 : ctl_mirror_log_refused(m, rc, "an entry bundle does not parse", report);
}

/* ---- step 3: the proofs ---- */

static int stage_proofs(struct mirror *m, struct epoch_header **headers, size_t count,
                        const struct buffer *checkpoint_note, uint64_t size, struct ctl_report *report)
{
	merkle_hash path[MERKLE_MAX_PROOF];
	struct buffer out;
	char relative[128];
	int rc = 0;

	buffer_init(&out);
	for (size_t i = 0; rc == 0 && i < count; i++) {
		const struct epoch_header *h = headers[i];
		size_t path_len = 0;
		if (!h->in_log || !h->keep)
			continue;
		buffer_reset(&out);
		rc = tlog_inclusion_proof(&m->reader, size, h->leaf, path, &path_len);
		if (rc == 0)
			rc = tlog_proof_encode(h->leaf, path, path_len, h->note.data, h->note.len,
			                       checkpoint_note->data, checkpoint_note->len, &out);
		if (rc != 0) {
			rc = ctl_mirror_log_refused(m, rc, "cannot make an inclusion proof", report);
			break;
		}
		snprintf(relative, sizeof(relative), "log/proof/%" PRIu64 "/%" PRIu64, h->epoch, size);
		if (!ctl_mirror_served_exists(m, relative))
			rc = ctl_mirror_stage_bytes(m, &m->immutable, relative, out.data, out.len, report);
		snprintf(relative, sizeof(relative), "log/proof/%" PRIu64 "/latest", h->epoch);
		if (rc == 0)
			rc = ctl_mirror_stage_bytes(m, &m->pointers, relative, out.data, out.len, report);
	}
	/* Consistency from the sizes just below: those of the checkpoints clients of this mirror and
	 * of the authorities hold. */
	for (uint64_t old = size > CTL_MIRROR_CONSISTENCY_SPAN ? size - CTL_MIRROR_CONSISTENCY_SPAN : 1;
	     rc == 0 && old < size; old++) {
		size_t proof_len = 0;
		snprintf(relative, sizeof(relative), "log/consistency/%" PRIu64 "/%" PRIu64, old, size);
		if (ctl_mirror_served_exists(m, relative))
			continue;
		buffer_reset(&out);
		rc = tlog_consistency_proof(&m->reader, size, old, path, &proof_len);
		if (rc == 0)
			rc = tlog_consistency_encode(path, proof_len, &out);
		if (rc != 0) {
			rc = ctl_mirror_log_refused(m, rc, "cannot make a consistency proof", report);
			break;
		}
		rc = ctl_mirror_stage_bytes(m, &m->immutable, relative, out.data, out.len, report);
	}
	buffer_free(&out);
	return rc;
}

static int stage_tiles(struct mirror *m, size_t *written, struct ctl_report *report)
{
	char path[TLOG_TILE_PATH_MAX + 1], relative[TLOG_TILE_PATH_MAX + 8];
	int rc = 0;

	*written = 0;
	for (size_t i = 0; rc == 0 && i < m->tiles.count; i++) {
		const struct tile_entry *entry = &m->tiles.items[i];
		if (!entry->fresh)
			continue;
		(void)tlog_tile_path_format(&entry->tile, path);
		snprintf(relative, sizeof(relative), "log/%s", path);
		rc = ctl_mirror_stage_bytes(m, &m->immutable, relative, entry->data.data, entry->data.len,
		                            report);
		(*written)++;
	}
	return rc;
}

int ctl_mirror_log_take(struct mirror *m, const struct checkpoint *checkpoint, struct epoch_header **headers,
                        size_t count, struct ctl_report *report)
{
	int rc;

	m->source.fetch = tile_set_fetch;
	m->source.context = &m->tiles;
	m->source.tree_size = checkpoint->tree_size;
	m->reader.read = tlog_tile_source_read;
	m->reader.context = &m->source;
	rc = load_tiles(m, checkpoint->tree_size, report);
	if (rc == 0)
		rc = verify_tiles(m, checkpoint, report);
	if (rc == 0)
		rc = find_leaves(m, headers, count, report);
	return rc;
}

int ctl_mirror_log_stage(struct mirror *m, struct epoch_header **headers, size_t count,
                         const struct buffer *checkpoint_note, uint64_t size, size_t *tiles_written,
                         struct ctl_report *report)
{
	int rc = stage_tiles(m, tiles_written, report);

	if (rc == 0)
		rc = stage_proofs(m, headers, count, checkpoint_note, size, report);
	return rc;
}

void ctl_mirror_log_free(struct mirror *m)
{
	tile_set_free(&m->tiles);
}
