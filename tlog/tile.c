/*
 * tile.c: tile coordinates, tile paths and the hashes inside a tile (c2sp.org/tlog-tiles).
 *
 * The paths are what mirrors store as files and what CDNs cache, so each tile has exactly one
 * spelling: the parser walks the path byte by byte, accepts only what tlog_tile_path_format()
 * writes, and never builds a number it has not bounded first. All tree arithmetic is done on
 * counts of stored hashes per level (tree_size >> level), which cannot overflow, instead of on
 * leaf positions (index · 256^level), which can.
 */
#include "tlog/tile.h"

#include "base/error.h"

#include <stdio.h>
#include <string.h>

#define INDEX_GROUPS_MAX 7 /* 2^64 − 1 has 20 decimal digits: 7 groups of three */

/* Stored hashes at hash level (0..63+) of a tree of tree_size leaves. */
static uint64_t hashes_at_level(uint64_t tree_size, unsigned level)
{
	return level >= 64 ? 0 : tree_size >> level;
}

int tlog_tile_is_valid(const struct tlog_tile *tile)
{
	if (tile->kind != TLOG_TILE_HASHES && tile->kind != TLOG_TILE_ENTRIES)
		return 0;
	if (tile->level > TLOG_TILE_LEVEL_MAX || (tile->kind == TLOG_TILE_ENTRIES && tile->level != 0))
		return 0;
	return tile->width >= 1 && tile->width <= TLOG_TILE_WIDTH;
}

int tlog_tile_path_format(const struct tlog_tile *tile, char out[TLOG_TILE_PATH_MAX + 1])
{
	if (!tlog_tile_is_valid(tile))
		return DIRAUTH_ERR_SYNTAX;
	unsigned groups[INDEX_GROUPS_MAX];
	size_t group_count = 0;
	uint64_t rest = tile->index;
	do {
		groups[group_count++] = (unsigned)(rest % 1000);
		rest /= 1000;
	} while (rest > 0);

	size_t len = 0;
	int n;
	if (tile->kind == TLOG_TILE_ENTRIES)
		n = snprintf(out, TLOG_TILE_PATH_MAX + 1, "tile/entries/");
	else
		n = snprintf(out, TLOG_TILE_PATH_MAX + 1, "tile/%u/", (unsigned)tile->level);
	len += (size_t)n;
	/* Largest group first: every group but the last carries the 'x'. */
	for (size_t g = group_count; g-- > 1;) {
		n = snprintf(out + len, TLOG_TILE_PATH_MAX + 1 - len, "x%03u/", groups[g]);
		len += (size_t)n;
	}
	n = snprintf(out + len, TLOG_TILE_PATH_MAX + 1 - len, "%03u", groups[0]);
	len += (size_t)n;
	if (tile->width < TLOG_TILE_WIDTH)
		(void)snprintf(out + len, TLOG_TILE_PATH_MAX + 1 - len, ".p/%u", (unsigned)tile->width);
	return 0;
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Reads a decimal of 1..max_digits digits without a leading zero (except "0" itself) at
 * path[*pos], stopping at the first non-digit. */
static int parse_small_decimal(const char *path, size_t len, size_t *pos, size_t max_digits, unsigned *out)
{
	size_t start = *pos;
	unsigned value = 0;
	while (*pos < len && is_digit(path[*pos])) {
		if (*pos - start == max_digits)
			return DIRAUTH_ERR_SYNTAX;
		value = value * 10 + (unsigned)(path[*pos] - '0');
		(*pos)++;
	}
	if (*pos == start || (path[start] == '0' && *pos - start > 1))
		return DIRAUTH_ERR_SYNTAX;
	*out = value;
	return 0;
}

/* Reads exactly three digits at path[pos]. */
static int parse_group(const char *path, size_t len, size_t pos, unsigned *out)
{
	if (len - pos < 3 || !is_digit(path[pos]) || !is_digit(path[pos + 1]) || !is_digit(path[pos + 2]))
		return DIRAUTH_ERR_SYNTAX;
	*out = (unsigned)(path[pos] - '0') * 100 + (unsigned)(path[pos + 1] - '0') * 10 +
	       (unsigned)(path[pos + 2] - '0');
	return 0;
}

static int append_group(uint64_t *value, unsigned group)
{
	if (*value > (UINT64_MAX - group) / 1000)
		return DIRAUTH_ERR_SYNTAX;
	*value = *value * 1000 + group;
	return 0;
}

/* The index groups at path[*pos]: zero or more "xDDD/", then "DDD". */
static int parse_index(const char *path, size_t len, size_t *pos, uint64_t *out)
{
	uint64_t value = 0;
	unsigned group;
	int rc;
	for (size_t groups = 0;; groups++) {
		if (groups == INDEX_GROUPS_MAX)
			return DIRAUTH_ERR_SYNTAX;
		if (*pos < len && path[*pos] == 'x') {
			if ((rc = parse_group(path, len, *pos + 1, &group)) != 0)
				return rc;
			if (len - *pos < 5 || path[*pos + 4] != '/')
				return DIRAUTH_ERR_SYNTAX;
			if (groups == 0 && group == 0)
				return DIRAUTH_ERR_SYNTAX; /* a leading zero group: a second spelling */
			if ((rc = append_group(&value, group)) != 0)
				return rc;
			*pos += 5;
			continue;
		}
		if ((rc = parse_group(path, len, *pos, &group)) != 0 ||
		    (rc = append_group(&value, group)) != 0)
			return rc;
		*pos += 3;
		*out = value;
		return 0;
	}
}

static int expect(const char *path, size_t len, size_t *pos, const char *literal)
{
	size_t n = strlen(literal);
	if (len - *pos < n || memcmp(path + *pos, literal, n) != 0)
		return DIRAUTH_ERR_SYNTAX;
	*pos += n;
	return 0;
}

static int parse_path(const char *path, size_t len, struct tlog_tile *out)
{
	size_t pos = 0;
	unsigned number;
	int rc;
	if ((rc = expect(path, len, &pos, "tile/")) != 0)
		return rc;
	if (expect(path, len, &pos, "entries/") == 0) {
		out->kind = TLOG_TILE_ENTRIES;
		out->level = 0;
	} else {
		if ((rc = parse_small_decimal(path, len, &pos, 2, &number)) != 0)
			return rc;
		if (number > TLOG_TILE_LEVEL_MAX)
			return DIRAUTH_ERR_SYNTAX;
		out->kind = TLOG_TILE_HASHES;
		out->level = (uint8_t)number;
		if ((rc = expect(path, len, &pos, "/")) != 0)
			return rc;
	}
	if ((rc = parse_index(path, len, &pos, &out->index)) != 0)
		return rc;
	out->width = TLOG_TILE_WIDTH;
	if (pos == len)
		return 0;
	if ((rc = expect(path, len, &pos, ".p/")) != 0 ||
	    (rc = parse_small_decimal(path, len, &pos, 3, &number)) != 0)
		return rc;
	if (number == 0 || number >= TLOG_TILE_WIDTH || pos != len)
		return DIRAUTH_ERR_SYNTAX;
	out->width = (uint16_t)number;
	return 0;
}

int tlog_tile_path_parse(const char *path, size_t len, struct tlog_tile *out)
{
	memset(out, 0, sizeof(*out));
	int rc =
	    len > TLOG_TILE_PATH_MAX || (len > 0 && !path) ? DIRAUTH_ERR_SYNTAX : parse_path(path, len, out);
	if (rc)
		memset(out, 0, sizeof(*out));
	return rc;
}

int tlog_tile_check(const struct tlog_tile *tile, uint64_t tree_size)
{
	if (!tlog_tile_is_valid(tile))
		return DIRAUTH_ERR_SYNTAX;
	/* 256·N + W ≤ hashes at the tile's level, without forming 256·N. */
	uint64_t count = hashes_at_level(tree_size, TLOG_TILE_HEIGHT * (unsigned)tile->level);
	if (count < tile->width || tile->index > (count - tile->width) / TLOG_TILE_WIDTH)
		return DIRAUTH_ERR_NOT_FOUND;
	return 0;
}

uint64_t tlog_tile_full_count(uint64_t tree_size, uint8_t level)
{
	return hashes_at_level(tree_size, TLOG_TILE_HEIGHT * ((unsigned)level + 1));
}

uint16_t tlog_tile_partial_width(uint64_t tree_size, uint8_t level)
{
	return (uint16_t)(hashes_at_level(tree_size, TLOG_TILE_HEIGHT * (unsigned)level) % TLOG_TILE_WIDTH);
}

int tlog_tile_is_of_tree(const struct tlog_tile *tile, uint64_t tree_size)
{
	if (!tlog_tile_is_valid(tile))
		return 0;
	uint64_t full = tlog_tile_full_count(tree_size, tile->level);
	if (tile->width == TLOG_TILE_WIDTH)
		return tile->index < full;
	return tile->index == full && tile->width == tlog_tile_partial_width(tree_size, tile->level);
}

int tlog_tile_for_hash(uint64_t tree_size, uint8_t level, uint64_t index, struct tlog_tile *out)
{
	memset(out, 0, sizeof(*out));
	if (level > 63 || index >= hashes_at_level(tree_size, level))
		return DIRAUTH_ERR_NOT_FOUND;
	unsigned tile_level = level / TLOG_TILE_HEIGHT;
	unsigned depth = level % TLOG_TILE_HEIGHT;
	/* The first tile hash under (level, index); below the tree's count at the tile level. */
	uint64_t first = index << depth;
	uint64_t count = hashes_at_level(tree_size, TLOG_TILE_HEIGHT * tile_level);
	uint64_t tile_index = first / TLOG_TILE_WIDTH;
	uint64_t remaining = count - tile_index * TLOG_TILE_WIDTH;
	out->kind = TLOG_TILE_HASHES;
	out->level = (uint8_t)tile_level;
	out->index = tile_index;
	out->width = (uint16_t)(remaining >= TLOG_TILE_WIDTH ? TLOG_TILE_WIDTH : remaining);
	return 0;
}

int tlog_tile_hash(const struct tlog_tile *tile, const uint8_t *data, size_t len, uint8_t level,
                   uint64_t index, merkle_hash out)
{
	if (!tlog_tile_is_valid(tile) || tile->kind != TLOG_TILE_HASHES)
		return DIRAUTH_ERR_SYNTAX;
	if (len != (size_t)tile->width * MERKLE_HASH_SIZE)
		return DIRAUTH_ERR_BOUNDS;
	unsigned base = TLOG_TILE_HEIGHT * (unsigned)tile->level;
	if (level > 63 || level < base || level > base + TLOG_TILE_HEIGHT)
		return DIRAUTH_ERR_NOT_FOUND;
	unsigned depth = level - base;
	/* No tree holds a tile whose first hash index does not fit in 64 bits, nor a stored hash
	 * whose first tile hash does not. */
	if (tile->index > UINT64_MAX / TLOG_TILE_WIDTH || (depth > 0 && (index >> (64 - depth)) != 0))
		return DIRAUTH_ERR_NOT_FOUND;
	uint64_t first = index << depth;
	uint64_t start = tile->index * TLOG_TILE_WIDTH;
	uint64_t span = (uint64_t)1 << depth;
	if (first < start || first - start > tile->width || tile->width - (first - start) < span)
		return DIRAUTH_ERR_NOT_FOUND;
	const merkle_hash *hashes = (const merkle_hash *)data;
	return merkle_root(hashes + (first - start), span, out);
}
