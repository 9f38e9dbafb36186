/*
 * tile.h: the tiles of a transparency log (c2sp.org/tlog-tiles): their coordinates, their paths,
 * and the hashes a client reads out of them.
 *
 * A tile is a run of at most 256 consecutive stored hashes of one hash level. Tile level L holds
 * the hashes of hash level 8·L (tlog/tree.h): at tile level 0 the leaf hashes, at tile level 1
 * the roots of the full level-0 tiles, and so on. The tile with index N at tile level L holds
 * hash indexes 256·N .. 256·N + W − 1 of hash level 8·L, W being its width: a full tile has 256
 * hashes (8,192 bytes), a partial tile 1..255. For a tree of s leaves, tile level L has
 * floor(s / 256^(L+1)) full tiles and one partial tile of width floor(s / 256^L) mod 256 when
 * that is not 0. A tile's bytes never change once its hashes exist: a partial tile of width W is
 * a prefix of the full tile it grows into.
 *
 * Paths, relative to the log's URL prefix (no leading '/'):
 *   tile/<L>/<N>[.p/<W>]        the hashes of a tile
 *   tile/entries/<N>[.p/<W>]    the entry bundle of the level-0 tile N (tlog/bundle.h)
 * L is decimal 0..63 without leading zeros; W is decimal 1..255 without leading zeros and is
 * written only for a partial tile; N is written in groups of three zero-padded digits, all but
 * the last prefixed with 'x' ("x001/x234/067" for 1234067, "067" for 67). Exactly one spelling
 * of each tile is accepted: the parser refuses leading zero groups ("x000/067"), groups of
 * another width, 'x' on the last group, ".p/0", ".p/256", ".p/007", an index past 2^64 − 1, and
 * any other byte.
 *
 * Levels past 7 are valid in the path grammar (the spec allows 0..63) but hold no tile of any
 * tree of at most 2^64 − 1 leaves; tlog_tile_check() answers DIRAUTH_ERR_NOT_FOUND for them.
 */
#ifndef DIRAUTH_TLOG_TILE_H
#define DIRAUTH_TLOG_TILE_H

#include "crypto/merkle.h"

#include <stddef.h>
#include <stdint.h>

#define TLOG_TILE_HEIGHT    8                                    /* hash levels per tile level */
#define TLOG_TILE_WIDTH     256                                  /* hashes in a full tile */
#define TLOG_TILE_BYTES     (TLOG_TILE_WIDTH * MERKLE_HASH_SIZE) /* 8,192 */
#define TLOG_TILE_LEVEL_MAX 63 /* the largest level the path grammar accepts */
#define TLOG_TILE_PATH_MAX  64 /* the longest tile path, without its NUL */

enum tlog_tile_kind {
	TLOG_TILE_HASHES = 0,  /* tile/<L>/<N>[.p/<W>] */
	TLOG_TILE_ENTRIES = 1, /* tile/entries/<N>[.p/<W>]; level is 0 */
};

struct tlog_tile {
	enum tlog_tile_kind kind;
	uint8_t level;  /* tile level, 0..TLOG_TILE_LEVEL_MAX; 0 for an entry bundle */
	uint64_t index; /* N */
	uint16_t width; /* 1..TLOG_TILE_WIDTH; TLOG_TILE_WIDTH is a full tile */
};

/* 1 when the coordinates are well formed: a known kind, level ≤ TLOG_TILE_LEVEL_MAX (0 for an
 * entry bundle), width 1..TLOG_TILE_WIDTH. Else 0. Says nothing about any tree. */
int tlog_tile_is_valid(const struct tlog_tile *tile);

/* Writes the tile's path (NUL-terminated) into out. Returns 0 or DIRAUTH_ERR_SYNTAX when the
 * coordinates are not valid (tlog_tile_is_valid). */
int tlog_tile_path_format(const struct tlog_tile *tile, char out[TLOG_TILE_PATH_MAX + 1]);

/* Parses a tile path (len bytes, no NUL needed, no leading '/'). Returns 0 with *out set, or
 * DIRAUTH_ERR_SYNTAX for anything but the one spelling tlog_tile_path_format writes (out is
 * then zeroed). */
int tlog_tile_path_parse(const char *path, size_t len, struct tlog_tile *out);

/* 0 when every hash (or entry) of the tile lies inside the tree of tree_size leaves, so that the
 * tile can be produced for that tree; DIRAUTH_ERR_NOT_FOUND when it does not;
 * DIRAUTH_ERR_SYNTAX when the coordinates are not valid. A partial tile narrower than the
 * tree's own partial tile (one of an earlier tree size), or than a full tile, passes. */
int tlog_tile_check(const struct tlog_tile *tile, uint64_t tree_size);

/* Number of full tiles at tile level for a tree of tree_size leaves: floor(s / 256^(level+1)). */
uint64_t tlog_tile_full_count(uint64_t tree_size, uint8_t level);

/* Width of the partial tile at tile level for a tree of tree_size leaves (floor(s / 256^level)
 * mod 256), 0 when the level has none. */
uint16_t tlog_tile_partial_width(uint64_t tree_size, uint8_t level);

/* 1 when tile is one of the tiles a client of the tree of tree_size leaves fetches: a full tile
 * of the tree, or its partial tile of exactly the tree's partial width at that level. Else 0.
 * Entry bundles follow the level-0 tiles. A log must serve these tiles for every tree size it
 * published a checkpoint for. */
int tlog_tile_is_of_tree(const struct tlog_tile *tile, uint64_t tree_size);

/* The hash tile of the tree of tree_size leaves from which the stored hash (level, index) is
 * read: tile level level / 8, full if the tree has that tile full, else the tree's partial tile.
 * Returns 0, or DIRAUTH_ERR_NOT_FOUND when the tree has no such stored hash (index ≥
 * tree_size >> level, or level > 63). */
int tlog_tile_for_hash(uint64_t tree_size, uint8_t level, uint64_t index, struct tlog_tile *out);

/* Computes the stored hash (level, index) from the bytes of a hash tile: the hash itself when
 * level is the tile's hash level 8·L, else the root of the 2^(level − 8·L) tile hashes it
 * covers (level at most 8·L + 8, which a full tile covers whole). data must hold exactly
 * tile->width hashes. Returns 0; DIRAUTH_ERR_SYNTAX for invalid coordinates or an entry bundle;
 * DIRAUTH_ERR_BOUNDS when len is not width · 32; DIRAUTH_ERR_NOT_FOUND when the tile does not
 * cover the hash; DIRAUTH_ERR_CRYPTO. */
int tlog_tile_hash(const struct tlog_tile *tile, const uint8_t *data, size_t len, uint8_t level,
                   uint64_t index, merkle_hash out);

#endif
