/*
 * check_tlog.c: the transparency log's core (tlog/): tile coordinates and paths, tiles, roots and
 * proofs from stored hashes, the appender, entry bundles, offline proof files and the checkpoint
 * policy.
 *
 * The log's stored hashes live here in a small in-memory store that appends through
 * tlog_append(), as a real store will. What it computes is checked against crypto/merkle.c's
 * in-memory functions (themselves checked against the transparency-dev vectors), against the RFC
 * 6962 reference tree and the happy paths of those vectors directly, and against the tlog-tiles
 * examples; the tiles of trees around every tile boundary are then served from a map of paths to
 * bytes, and a client reading nothing but those tiles must find the same root and proofs.
 */
#include "schema/checkpoint.h"
#include "crypto/crypto.h"
#include "schema/encoding.h"
#include "base/error.h"
#include "crypto/merkle.h"
#include "test_keys.h"
#include "test_support.h"
#include "tlog/bundle.h"
#include "tlog/policy.h"
#include "tlog/proof.h"
#include "tlog/tile.h"
#include "tlog/tree.h"

#include <check.h>

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ck_assert records where it stands on every call (a write to Check's pipe); the loops over
 * millions of hashes check with REQUIRE instead, which costs nothing until it fails. */
#define REQUIRE(condition)                                                                                   \
	do {                                                                                                 \
		if (!(condition))                                                                            \
			ck_abort_msg("%s:%d: %s", __FILE__, __LINE__, #condition);                           \
	} while (0)

/* ---- an in-memory store of stored hashes ---- */

struct memory_store {
	merkle_hash *levels[64];
	uint64_t counts[64];
	uint64_t capacity; /* leaves */
	uint64_t size;     /* leaves appended */
	uint64_t hash_reads;
	int fail_reads; /* when set, every read fails with DIRAUTH_ERR_STORE */
};

static int store_read(void *context, uint8_t level, uint64_t index, uint64_t count, merkle_hash *out)
{
	struct memory_store *store = context;
	if (store->fail_reads)
		return DIRAUTH_ERR_STORE;
	REQUIRE(count >= 1);
	if (level >= 64 || index >= store->counts[level] || count > store->counts[level] - index)
		return DIRAUTH_ERR_NOT_FOUND;
	memcpy(out, store->levels[level] + index, count * MERKLE_HASH_SIZE);
	store->hash_reads += count;
	return 0;
}

static struct tlog_hash_reader store_reader(struct memory_store *store)
{
	struct tlog_hash_reader reader = {store_read, store};
	return reader;
}

static void store_init(struct memory_store *store, uint64_t capacity)
{
	memset(store, 0, sizeof(*store));
	store->capacity = capacity;
	for (unsigned level = 0; level < 64 && (capacity >> level) > 0; level++) {
		store->levels[level] = malloc((capacity >> level) * MERKLE_HASH_SIZE);
		ck_assert_ptr_nonnull(store->levels[level]);
	}
}

static void store_free(struct memory_store *store)
{
	for (unsigned level = 0; level < 64; level++)
		free(store->levels[level]);
	memset(store, 0, sizeof(*store));
}

/* Appends through tlog_append() and writes the records it asks for, checking that each is the
 * next hash of its level (a store appends; it never overwrites). */
static void store_append(struct memory_store *store, const merkle_hash leaf_hash)
{
	struct tlog_record records[TLOG_APPEND_MAX];
	size_t count = 0;
	struct tlog_hash_reader reader = store_reader(store);
	REQUIRE(store->size < store->capacity);
	REQUIRE(tlog_append(&reader, store->size, leaf_hash, records, &count) == 0);
	REQUIRE(count >= 1);
	for (size_t i = 0; i < count; i++) {
		uint8_t level = records[i].level;
		REQUIRE(records[i].index == store->counts[level]);
		memcpy(store->levels[level][store->counts[level]], records[i].hash, MERKLE_HASH_SIZE);
		store->counts[level]++;
	}
	store->size++;
}

/* A cheap synthetic leaf hash for leaf i (no SHA-256: the trees here are large). */
static void synthetic_leaf(uint64_t i, merkle_hash out)
{
	uint64_t x = i * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
	for (int word = 0; word < 4; word++) {
		x ^= x >> 31;
		x *= 0xbf58476d1ce4e5b9ull;
		x ^= x >> 27;
		x *= 0x94d049bb133111ebull;
		for (int b = 0; b < 8; b++)
			out[word * 8 + b] = (uint8_t)(x >> (8 * b));
	}
}

/* A store of count synthetic leaves; leaves (may be NULL) gets a copy of the leaf hashes. */
static void store_fill(struct memory_store *store, uint64_t count, merkle_hash **leaves)
{
	store_init(store, count);
	for (uint64_t i = 0; i < count; i++) {
		merkle_hash leaf;
		synthetic_leaf(i, leaf);
		store_append(store, leaf);
	}
	if (leaves) {
		*leaves = malloc(count * MERKLE_HASH_SIZE);
		ck_assert_ptr_nonnull(*leaves);
		memcpy(*leaves, store->levels[0], count * MERKLE_HASH_SIZE);
	}
}

static void hash_from_hex(const char *hex, merkle_hash out)
{
	ck_assert_int_eq(hex_decode(hex, strlen(hex), out, MERKLE_HASH_SIZE), 0);
}

static int popcount(uint64_t n)
{
	int bits = 0;
	for (; n; n &= n - 1)
		bits++;
	return bits;
}

/* ---- tile paths ---- */

static void expect_path(enum tlog_tile_kind kind, uint8_t level, uint64_t index, uint16_t width,
                        const char *path)
{
	struct tlog_tile tile = {kind, level, index, width}, parsed;
	char text[TLOG_TILE_PATH_MAX + 1];
	ck_assert_int_eq(tlog_tile_path_format(&tile, text), 0);
	ck_assert_str_eq(text, path);
	ck_assert_int_eq(tlog_tile_path_parse(path, strlen(path), &parsed), 0);
	ck_assert_int_eq(parsed.kind, kind);
	ck_assert_uint_eq(parsed.level, level);
	ck_assert_uint_eq(parsed.index, index);
	ck_assert_uint_eq(parsed.width, width);
}

START_TEST(test_path_encoding)
{
	/* The spec's example, and the group boundaries. */
	expect_path(TLOG_TILE_HASHES, 0, 1234067, 256, "tile/0/x001/x234/067");
	expect_path(TLOG_TILE_HASHES, 0, 0, 256, "tile/0/000");
	expect_path(TLOG_TILE_HASHES, 1, 67, 256, "tile/1/067");
	expect_path(TLOG_TILE_HASHES, 2, 999, 256, "tile/2/999");
	expect_path(TLOG_TILE_HASHES, 3, 1000, 256, "tile/3/x001/000");
	expect_path(TLOG_TILE_HASHES, 7, 1000000, 256, "tile/7/x001/x000/000");
	expect_path(TLOG_TILE_HASHES, 0, 999999, 1, "tile/0/x999/999.p/1");
	expect_path(TLOG_TILE_HASHES, 0, 1, 255, "tile/0/001.p/255");
	expect_path(TLOG_TILE_HASHES, 63, UINT64_MAX, 17, "tile/63/x018/x446/x744/x073/x709/x551/615.p/17");
	expect_path(TLOG_TILE_HASHES, 10, 5, 256, "tile/10/005");
	expect_path(TLOG_TILE_ENTRIES, 0, 1234067, 256, "tile/entries/x001/x234/067");
	expect_path(TLOG_TILE_ENTRIES, 0, 0, 112, "tile/entries/000.p/112");
	expect_path(TLOG_TILE_ENTRIES, 0, UINT64_MAX, 255,
	            "tile/entries/x018/x446/x744/x073/x709/x551/615.p/255");

	/* Every width and a spread of indexes round trip. */
	for (unsigned width = 1; width <= 256; width++) {
		uint64_t index = (uint64_t)width * width * width * 1000003u;
		struct tlog_tile tile = {width % 2 ? TLOG_TILE_HASHES : TLOG_TILE_ENTRIES, 0, index,
		                         (uint16_t)width},
		                 parsed;
		if (tile.kind == TLOG_TILE_HASHES)
			tile.level = (uint8_t)(width % 64);
		char text[TLOG_TILE_PATH_MAX + 1];
		ck_assert_int_eq(tlog_tile_path_format(&tile, text), 0);
		ck_assert_int_eq(tlog_tile_path_parse(text, strlen(text), &parsed), 0);
		ck_assert(parsed.kind == tile.kind && parsed.level == tile.level &&
		          parsed.index == tile.index && parsed.width == tile.width);
	}

	/* Coordinates that have no path. */
	char text[TLOG_TILE_PATH_MAX + 1];
	struct tlog_tile bad[] = {
	    {TLOG_TILE_HASHES, 0, 0, 0},    {TLOG_TILE_HASHES, 0, 0, 257},     {TLOG_TILE_HASHES, 64, 0, 1},
	    {TLOG_TILE_ENTRIES, 1, 0, 256}, {(enum tlog_tile_kind)7, 0, 0, 1},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(tlog_tile_path_format(&bad[i], text), DIRAUTH_ERR_SYNTAX);
		ck_assert_int_eq(tlog_tile_is_valid(&bad[i]), 0);
	}
}
END_TEST

START_TEST(test_path_refusals)
{
	static const char *const refused[] = {
	    "",
	    "tile",
	    "tile/",
	    "tile/0",
	    "tile/0/",
	    "/tile/0/000",
	    "tile//000",
	    "tile/00/000",                                   /* leading zero in the level */
	    "tile/01/000",                                   /* leading zero in the level */
	    "tile/64/000",                                   /* level above 63 */
	    "tile/100/000",                                  /* level above 63 */
	    "tile/+1/000",                                   /* a sign */
	    "tile/-1/000",                                   /* a sign */
	    "tile/a/000",                                    /* not a number */
	    "tile/0/67",                                     /* a group of two digits */
	    "tile/0/0067",                                   /* a group of four digits */
	    "tile/0/x000/067",                               /* a leading zero group */
	    "tile/0/x000/x001/067",                          /* a leading zero group */
	    "tile/0/x001",                                   /* 'x' on the last element */
	    "tile/0/x001/x234",                              /* 'x' on the last element */
	    "tile/0/x001/",                                  /* no last element */
	    "tile/0/x01/234",                                /* an x-group of two digits */
	    "tile/0/x0001/234",                              /* an x-group of four digits */
	    "tile/0/X001/234",                               /* upper-case X */
	    "tile/0/x001x234",                               /* no separator */
	    "tile/0/001/234",                                /* a second group without 'x' */
	    "tile/0/001/",                                   /* trailing slash */
	    "tile/0/001 ",                                   /* trailing space */
	    "tile/0/001\n",                                  /* trailing newline */
	    "tile/0/x018/x446/x744/x073/x709/x551/616",      /* 2^64 */
	    "tile/0/x001/x018/x446/x744/x073/x709/x551/615", /* past 2^64 */
	    "tile/0/001.p/0",                                /* width 0 */
	    "tile/0/001.p/256",      /* width 256 is a full tile, written without .p */
	    "tile/0/001.p/300",      /* width over 256 */
	    "tile/0/001.p/007",      /* leading zeros in the width */
	    "tile/0/001.p/07",       /* leading zero in the width */
	    "tile/0/001.p/1000",     /* four digits */
	    "tile/0/001.p/",         /* no width */
	    "tile/0/001.p",          /* no width */
	    "tile/0/001.p/5/",       /* trailing slash */
	    "tile/0/001.p/5.p/5",    /* twice */
	    "tile/0/001.P/5",        /* upper case */
	    "tile/0/001.q/5",        /* another suffix */
	    "tile/0/x001.p/5/234",   /* the suffix inside the index */
	    "tile/entries/0/000",    /* a level on a bundle */
	    "tile/entries/",         /* no index */
	    "tile/entries/67",       /* a group of two digits */
	    "tile/entries/x000/067", /* a leading zero group */
	    "tile/entries/001.p/0",  /* width 0 */
	    "tile/entry/000",        /* not the bundle spelling */
	    "tile/data/000",         /* the old sumdb spelling */
	    "tile/8/data/000",       /* the old sumdb spelling */
	    "tiles/0/000",
	    "TILE/0/000",
	    "tile/0/000/../000",
	    "tile/0/x001/x234/067/",
	};
	struct tlog_tile tile;
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		int rc = tlog_tile_path_parse(refused[i], strlen(refused[i]), &tile);
		ck_assert_msg(rc == DIRAUTH_ERR_SYNTAX, "accepted \"%s\"", refused[i]);
		ck_assert_uint_eq(tile.index, 0);
		ck_assert_uint_eq(tile.width, 0);
	}
	/* A NUL inside, and a valid path followed by more bytes than the length says. */
	ck_assert_int_eq(tlog_tile_path_parse("tile/0/0\0001", 10, &tile), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(tlog_tile_path_parse("tile/0/0011", 10, &tile), 0);
	ck_assert_uint_eq(tile.index, 1);
	/* Too long to be a path at all. */
	char long_path[200];
	memset(long_path, 'x', sizeof(long_path));
	memcpy(long_path, "tile/0/", 7);
	ck_assert_int_eq(tlog_tile_path_parse(long_path, sizeof(long_path), &tile), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(tlog_tile_path_parse(NULL, 0, &tile), DIRAUTH_ERR_SYNTAX);
}
END_TEST

/* ---- tile coordinates ---- */

START_TEST(test_tile_coordinates)
{
	/* The spec's example: a tree of 70,000 has 273 full level-0 tiles, a partial one of width
	 * 112, one full level-1 tile, a partial level-1 tile of 17, a partial level-2 tile of 1. */
	ck_assert_uint_eq(tlog_tile_full_count(70000, 0), 273);
	ck_assert_uint_eq(tlog_tile_partial_width(70000, 0), 112);
	ck_assert_uint_eq(tlog_tile_full_count(70000, 1), 1);
	ck_assert_uint_eq(tlog_tile_partial_width(70000, 1), 17);
	ck_assert_uint_eq(tlog_tile_full_count(70000, 2), 0);
	ck_assert_uint_eq(tlog_tile_partial_width(70000, 2), 1);
	ck_assert_uint_eq(tlog_tile_partial_width(70000, 3), 0);
	/* A tree of 256: one full level-0 tile and a level-1 tile of width 1. */
	ck_assert_uint_eq(tlog_tile_full_count(256, 0), 1);
	ck_assert_uint_eq(tlog_tile_partial_width(256, 0), 0);
	ck_assert_uint_eq(tlog_tile_partial_width(256, 1), 1);
	/* The largest tree: 255 hashes at level 56, in a partial tile of level 7. */
	ck_assert_uint_eq(tlog_tile_full_count(UINT64_MAX, 7), 0);
	ck_assert_uint_eq(tlog_tile_partial_width(UINT64_MAX, 7), 255);
	ck_assert_uint_eq(tlog_tile_partial_width(UINT64_MAX, 8), 0);
	ck_assert_uint_eq(tlog_tile_full_count(UINT64_MAX, 63), 0);
	ck_assert_uint_eq(tlog_tile_partial_width(UINT64_MAX, 63), 0);

	struct tlog_tile tile = {TLOG_TILE_HASHES, 0, 273, 112};
	ck_assert(tlog_tile_is_of_tree(&tile, 70000));
	ck_assert_int_eq(tlog_tile_check(&tile, 70000), 0);
	tile.width = 111; /* a partial tile of an earlier size: inside, but not one of this tree's */
	ck_assert(!tlog_tile_is_of_tree(&tile, 70000));
	ck_assert_int_eq(tlog_tile_check(&tile, 70000), 0);
	tile.width = 113;
	ck_assert(!tlog_tile_is_of_tree(&tile, 70000));
	ck_assert_int_eq(tlog_tile_check(&tile, 70000), DIRAUTH_ERR_NOT_FOUND);
	tile.width = 256;
	ck_assert_int_eq(tlog_tile_check(&tile, 70000), DIRAUTH_ERR_NOT_FOUND);
	tile.index = 272;
	ck_assert(tlog_tile_is_of_tree(&tile, 70000));
	tile.kind = TLOG_TILE_ENTRIES;
	ck_assert(tlog_tile_is_of_tree(&tile, 70000));
	tile = (struct tlog_tile){TLOG_TILE_HASHES, 2, 0, 1};
	ck_assert(tlog_tile_is_of_tree(&tile, 70000));
	tile.level = 3;
	ck_assert_int_eq(tlog_tile_check(&tile, 70000), DIRAUTH_ERR_NOT_FOUND);
	/* Levels the grammar allows but no tree reaches; indexes whose position overflows. */
	tile = (struct tlog_tile){TLOG_TILE_HASHES, 8, 0, 1};
	ck_assert_int_eq(tlog_tile_check(&tile, UINT64_MAX), DIRAUTH_ERR_NOT_FOUND);
	tile = (struct tlog_tile){TLOG_TILE_HASHES, 7, 0, 255};
	ck_assert_int_eq(tlog_tile_check(&tile, UINT64_MAX), 0);
	tile = (struct tlog_tile){TLOG_TILE_HASHES, 0, UINT64_MAX, 256};
	ck_assert_int_eq(tlog_tile_check(&tile, UINT64_MAX), DIRAUTH_ERR_NOT_FOUND);
	tile = (struct tlog_tile){TLOG_TILE_HASHES, 0, UINT64_MAX / 256, 255};
	ck_assert_int_eq(tlog_tile_check(&tile, UINT64_MAX), 0);
	tile.width = 256;
	ck_assert_int_eq(tlog_tile_check(&tile, UINT64_MAX), DIRAUTH_ERR_NOT_FOUND);
	tile = (struct tlog_tile){TLOG_TILE_HASHES, 0, 0, 0};
	ck_assert_int_eq(tlog_tile_check(&tile, 100), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(tlog_tile_is_of_tree(&tile, 100), 0);
	tile = (struct tlog_tile){TLOG_TILE_HASHES, 0, 0, 1};
	ck_assert_int_eq(tlog_tile_check(&tile, 0), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(tlog_tile_is_of_tree(&tile, 0), 0);

	/* Which tile holds a stored hash. */
	ck_assert_int_eq(tlog_tile_for_hash(70000, 0, 69999, &tile), 0);
	ck_assert(tile.kind == TLOG_TILE_HASHES && tile.level == 0 && tile.index == 273 && tile.width == 112);
	ck_assert_int_eq(tlog_tile_for_hash(70000, 0, 100, &tile), 0);
	ck_assert(tile.level == 0 && tile.index == 0 && tile.width == 256);
	ck_assert_int_eq(tlog_tile_for_hash(70000, 5, 2184, &tile), 0); /* leaves 69888..69919 */
	ck_assert(tile.level == 0 && tile.index == 273 && tile.width == 112);
	ck_assert_int_eq(tlog_tile_for_hash(70000, 8, 272, &tile), 0);
	ck_assert(tile.level == 1 && tile.index == 1 && tile.width == 17);
	ck_assert_int_eq(tlog_tile_for_hash(70000, 16, 0, &tile), 0);
	ck_assert(tile.level == 2 && tile.index == 0 && tile.width == 1);
	ck_assert_int_eq(tlog_tile_for_hash(70000, 16, 1, &tile), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(tlog_tile_for_hash(70000, 0, 70000, &tile), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(tlog_tile_for_hash(70000, 17, 0, &tile), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(tlog_tile_for_hash(UINT64_MAX, 63, 0, &tile), 0);
	ck_assert(tile.level == 7 && tile.index == 0 && tile.width == 255);
	ck_assert_int_eq(tlog_tile_for_hash(UINT64_MAX, 64, 0, &tile), DIRAUTH_ERR_NOT_FOUND);
}
END_TEST

START_TEST(test_tile_hash)
{
	merkle_hash data[TLOG_TILE_WIDTH], out, expected;
	for (unsigned i = 0; i < TLOG_TILE_WIDTH; i++)
		synthetic_leaf(i, data[i]);
	const uint8_t *bytes = (const uint8_t *)data;
	struct tlog_tile tile = {TLOG_TILE_HASHES, 1, 3, 256};
	/* Level 8 index 768 + i is hash i; level 8 + k covers 2^k of them; level 16 the whole tile. */
	for (unsigned depth = 0; depth <= 8; depth++) {
		uint64_t span = (uint64_t)1 << depth;
		for (uint64_t i = 0; i < 256 / span; i++) {
			uint64_t index = (3 * 256) / span + i;
			ck_assert_int_eq(
			    tlog_tile_hash(&tile, bytes, sizeof(data), (uint8_t)(8 + depth), index, out), 0);
			ck_assert_int_eq(merkle_root(data + i * span, span, expected), 0);
			ck_assert(memcmp(out, expected, MERKLE_HASH_SIZE) == 0);
		}
	}
	/* Outside the tile, below or above its levels, or not covered by a partial tile. */
	ck_assert_int_eq(tlog_tile_hash(&tile, bytes, sizeof(data), 8, 767, out), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(tlog_tile_hash(&tile, bytes, sizeof(data), 8, 1024, out), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(tlog_tile_hash(&tile, bytes, sizeof(data), 7, 1536, out), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(tlog_tile_hash(&tile, bytes, sizeof(data), 17, 1, out), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(tlog_tile_hash(&tile, bytes, sizeof(data), 64, 0, out), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(tlog_tile_hash(&tile, bytes, sizeof(data), 16, UINT64_MAX, out),
	                 DIRAUTH_ERR_NOT_FOUND);
	tile.width = 100;
	ck_assert_int_eq(tlog_tile_hash(&tile, bytes, 100 * 32, 8, 867, out), 0);
	ck_assert_int_eq(tlog_tile_hash(&tile, bytes, 100 * 32, 8, 868, out), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(tlog_tile_hash(&tile, bytes, 100 * 32, 10, 3 * 64 + 24, out), 0); /* 96..99 */
	ck_assert_int_eq(tlog_tile_hash(&tile, bytes, 100 * 32, 10, 3 * 64 + 25, out), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(tlog_tile_hash(&tile, bytes, 100 * 32, 15, 6, out), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(tlog_tile_hash(&tile, bytes, 100 * 32, 16, 3, out), DIRAUTH_ERR_NOT_FOUND);
	/* The bytes must be exactly the width's. */
	ck_assert_int_eq(tlog_tile_hash(&tile, bytes, 99 * 32, 8, 800, out), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(tlog_tile_hash(&tile, bytes, 100 * 32 + 1, 8, 800, out), DIRAUTH_ERR_BOUNDS);
	/* Not a hash tile, or not a tile. */
	tile.kind = TLOG_TILE_ENTRIES;
	tile.level = 0;
	ck_assert_int_eq(tlog_tile_hash(&tile, bytes, 100 * 32, 0, 0, out), DIRAUTH_ERR_SYNTAX);
	tile = (struct tlog_tile){TLOG_TILE_HASHES, 0, UINT64_MAX, 1};
	ck_assert_int_eq(tlog_tile_hash(&tile, bytes, 32, 0, UINT64_MAX, out), DIRAUTH_ERR_NOT_FOUND);
}
END_TEST

/* ---- the tree from stored hashes ---- */

START_TEST(test_appender_records)
{
	enum { LEAVES = 600 };
	struct memory_store store;
	store_init(&store, LEAVES);
	merkle_hash leaves[LEAVES], expected;
	struct tlog_hash_reader reader = store_reader(&store);
	for (uint64_t n = 0; n < LEAVES; n++) {
		synthetic_leaf(n, leaves[n]);
		struct tlog_record records[TLOG_APPEND_MAX];
		size_t count = 0;
		uint64_t reads = store.hash_reads;
		REQUIRE((tlog_append(&reader, n, leaves[n], records, &count)) == (0));
		/* One record per complete subtree the leaf completes: 1 + the trailing ones of n,
		 * each read once. */
		uint64_t trailing_ones = 0;
		while ((n >> trailing_ones) & 1)
			trailing_ones++;
		REQUIRE((count) == (1 + trailing_ones));
		REQUIRE((store.hash_reads - reads) == (trailing_ones));
		for (size_t i = 0; i < count; i++) {
			REQUIRE((records[i].level) == (i));
			REQUIRE((records[i].index) == (n >> i));
			REQUIRE((merkle_root(leaves + (n >> i << i), (uint64_t)1 << i, expected)) == (0));
			REQUIRE(memcmp(records[i].hash, expected, MERKLE_HASH_SIZE) == 0);
			memcpy(store.levels[i][store.counts[i]++], records[i].hash, MERKLE_HASH_SIZE);
		}
		store.size++;
	}
	/* After n appends each level holds n >> level hashes. */
	for (unsigned level = 0; level < 64; level++)
		REQUIRE((store.counts[level]) == ((uint64_t)LEAVES >> level));

	/* A full tree takes no leaf; a failing read fails the append and asks to store nothing. */
	struct tlog_record records[TLOG_APPEND_MAX];
	size_t count = 99;
	REQUIRE((tlog_append(&reader, UINT64_MAX, leaves[0], records, &count)) == (DIRAUTH_ERR_BOUNDS));
	REQUIRE((count) == (0));
	store.fail_reads = 1;
	count = 99;
	REQUIRE((tlog_append(&reader, 599, leaves[0], records, &count)) == (DIRAUTH_ERR_STORE));
	REQUIRE((count) == (0));
	store_free(&store);
}
END_TEST

static int any_hash_read(void *context, uint8_t level, uint64_t index, uint64_t count, merkle_hash *out)
{
	(void)context;
	for (uint64_t i = 0; i < count; i++) {
		memset(out[i], 0, MERKLE_HASH_SIZE);
		out[i][0] = level;
		memcpy(out[i] + 1, &index, sizeof(index));
	}
	return 0;
}

START_TEST(test_appender_largest_trees)
{
	struct tlog_hash_reader reader = {any_hash_read, NULL};
	struct tlog_record records[TLOG_APPEND_MAX];
	size_t count = 0;
	merkle_hash leaf = {1};
	/* The largest append: leaf 2^63 − 1 completes 63 subtrees, up to the one of 2^63 leaves. A
	 * reader that invents hashes is enough to see the records. */
	ck_assert_int_eq(tlog_append(&reader, ((uint64_t)1 << 63) - 1, leaf, records, &count), 0);
	ck_assert_uint_eq(count, TLOG_APPEND_MAX);
	for (size_t i = 0; i < count; i++) {
		ck_assert_uint_eq(records[i].level, i);
		ck_assert_uint_eq(records[i].index, (((uint64_t)1 << 63) - 1) >> i);
	}
	/* The last leaf a tree can take completes nothing. */
	ck_assert_int_eq(tlog_append(&reader, UINT64_MAX - 1, leaf, records, &count), 0);
	ck_assert_uint_eq(count, 1);
	/* The root of the largest tree reads one hash per set bit. */
	merkle_hash root;
	ck_assert_int_eq(tlog_tree_root(&reader, UINT64_MAX, root), 0);
}
END_TEST

/* The RFC 6962 reference tree (tests/vectors/README.md) in a store. */
static void reference_store(struct memory_store *store, merkle_hash leaves[8])
{
	static const char *leaves_hex[8] = {"",
	                                    "00",
	                                    "10",
	                                    "2021",
	                                    "3031",
	                                    "40414243",
	                                    "5051525354555657",
	                                    "606162636465666768696a6b6c6d6e6f"};
	store_init(store, 8);
	for (size_t i = 0; i < 8; i++) {
		uint8_t leaf[16];
		size_t len = strlen(leaves_hex[i]) / 2;
		ck_assert_int_eq(hex_decode(leaves_hex[i], 2 * len, leaf, len), 0);
		ck_assert_int_eq(merkle_leaf_hash(leaf, len, leaves[i]), 0);
		store_append(store, leaves[i]);
	}
}

START_TEST(test_rfc6962_reference_tree)
{
	struct memory_store store;
	merkle_hash leaves[8], root, expected;
	reference_store(&store, leaves);
	struct tlog_hash_reader reader = store_reader(&store);
	ck_assert_int_eq(tlog_tree_root(&reader, 8, root), 0);
	hash_from_hex("5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328", expected);
	ck_assert(memcmp(root, expected, MERKLE_HASH_SIZE) == 0);
	ck_assert_int_eq(tlog_tree_root(&reader, 0, root), 0);
	hash_from_hex("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", expected);
	ck_assert(memcmp(root, expected, MERKLE_HASH_SIZE) == 0);
	ck_assert_int_eq(tlog_tree_root(&reader, 1, root), 0);
	hash_from_hex("6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d", expected);
	ck_assert(memcmp(root, expected, MERKLE_HASH_SIZE) == 0);
	for (uint64_t n = 1; n <= 8; n++) {
		ck_assert_int_eq(tlog_tree_root(&reader, n, root), 0);
		ck_assert_int_eq(merkle_root(leaves, n, expected), 0);
		ck_assert(memcmp(root, expected, MERKLE_HASH_SIZE) == 0);
	}
	store_free(&store);
}
END_TEST

/* ---- the transparency-dev vectors' happy paths, generated from the reference tree ---- */

/* The value of "key" in a vector file, after the colon and spaces; NULL when absent. */
static const char *json_value(const char *text, const char *key)
{
	char quoted[32];
	snprintf(quoted, sizeof(quoted), "\"%s\"", key);
	const char *at = strstr(text, quoted);
	if (!at)
		return NULL;
	at += strlen(quoted);
	while (*at == ' ' || *at == '\n')
		at++;
	ck_assert_int_eq(*at, ':');
	at++;
	while (*at == ' ' || *at == '\n')
		at++;
	return at;
}

static int json_u64(const char *text, const char *key, uint64_t *out)
{
	const char *at = json_value(text, key);
	if (!at)
		return 0;
	size_t len = strspn(at, "0123456789");
	ck_assert_int_eq(decimal_parse(at, len, out), 0);
	return 1;
}

/* A base64 string value; 1 when it decodes to 32 bytes. */
static int json_hash_at(const char *at, merkle_hash out, const char **end)
{
	ck_assert_int_eq(*at, '"');
	const char *close = strchr(at + 1, '"');
	ck_assert_ptr_nonnull(close);
	*end = close + 1;
	uint8_t bytes[96];
	size_t len = 0;
	if (base64_decode(at + 1, (size_t)(close - at - 1), bytes, sizeof(bytes), &len) != 0 ||
	    len != MERKLE_HASH_SIZE)
		return 0;
	memcpy(out, bytes, MERKLE_HASH_SIZE);
	return 1;
}

static int json_hash(const char *text, const char *key, merkle_hash out)
{
	const char *end;
	const char *at = json_value(text, key);
	return at && json_hash_at(at, out, &end);
}

/* The proof array (or null); 0 when an element is not a 32-byte hash. */
static int json_proof(const char *text, merkle_hash *proof, size_t *len)
{
	const char *at = json_value(text, "proof");
	*len = 0;
	ck_assert_ptr_nonnull(at);
	if (strncmp(at, "null", 4) == 0)
		return 1;
	ck_assert_int_eq(*at, '[');
	at++;
	for (;;) {
		while (*at == ' ' || *at == '\n' || *at == ',')
			at++;
		if (*at == ']')
			return 1;
		if (*len == 80)
			return 0;
		if (!json_hash_at(at, proof[*len], &at))
			return 0;
		(*len)++;
	}
}

struct vector_totals {
	unsigned files, on_reference, happy_on_reference, happy_elsewhere;
};

/* A vector whose tree is the reference tree (sizes ≤ 8, hashes those of the reference tree):
 * the proof generated from stored hashes must be the vector's exactly when the vector is a
 * happy path. Other vectors (made-up trees) must all be refusals but two, which are counted. */
static void vector_check(const char *path, struct memory_store *store, const merkle_hash leaves[8],
                         struct vector_totals *totals)
{
	size_t len = 0;
	char *text = (char *)test_read_file(path, &len);
	struct tlog_hash_reader reader = store_reader(store);
	merkle_hash *proof = malloc(80 * MERKLE_HASH_SIZE);
	merkle_hash generated[MERKLE_MAX_PROOF], root1, root2, leaf, expected1, expected2;
	ck_assert_ptr_nonnull(proof);
	size_t proof_len = 0, generated_len = 0;
	int want_error = strstr(text, "\"wantErr\": true") != NULL;
	ck_assert(want_error || strstr(text, "\"wantErr\": false") != NULL);
	int proof_ok = json_proof(text, proof, &proof_len);
	int on_reference = 0;
	uint64_t index, tree_size, size1, size2;
	if (json_u64(text, "leafIdx", &index)) {
		ck_assert(json_u64(text, "treeSize", &tree_size));
		if (tree_size >= 1 && tree_size <= 8 && index < tree_size && json_hash(text, "root", root1) &&
		    json_hash(text, "leafHash", leaf) && proof_ok) {
			ck_assert_int_eq(tlog_tree_root(&reader, tree_size, expected1), 0);
			on_reference =
			    memcmp(root1, expected1, 32) == 0 && memcmp(leaf, leaves[index], 32) == 0;
		}
		if (on_reference) {
			ck_assert_int_eq(
			    tlog_inclusion_proof(&reader, tree_size, index, generated, &generated_len), 0);
			ck_assert_int_eq(
			    merkle_inclusion_verify(index, tree_size, leaf, generated, generated_len, root1),
			    0);
		}
	} else {
		ck_assert(json_u64(text, "size1", &size1) && json_u64(text, "size2", &size2));
		if (size1 >= 1 && size1 <= size2 && size2 <= 8 && json_hash(text, "root1", root1) &&
		    json_hash(text, "root2", root2) && proof_ok) {
			ck_assert_int_eq(tlog_tree_root(&reader, size1, expected1), 0);
			ck_assert_int_eq(tlog_tree_root(&reader, size2, expected2), 0);
			on_reference = memcmp(root1, expected1, 32) == 0 && memcmp(root2, expected2, 32) == 0;
		}
		if (on_reference) {
			ck_assert_int_eq(
			    tlog_consistency_proof(&reader, size2, size1, generated, &generated_len), 0);
			ck_assert_int_eq(
			    merkle_consistency_verify(size1, size2, root1, root2, generated, generated_len),
			    0);
		}
	}
	if (on_reference) {
		int same =
		    generated_len == proof_len && memcmp(generated, proof, proof_len * MERKLE_HASH_SIZE) == 0;
		ck_assert_msg(same == !want_error, "%s: generated proof %s the vector's", path,
		              same ? "equals" : "differs from");
		totals->on_reference++;
		totals->happy_on_reference += !want_error;
	} else if (!want_error) {
		totals->happy_elsewhere++;
	}
	totals->files++;
	free(proof);
	free(text);
}

static void vector_walk(const char *dir, struct memory_store *store, const merkle_hash leaves[8],
                        struct vector_totals *totals, int depth)
{
	ck_assert_int_lt(depth, 8);
	DIR *d = opendir(dir);
	ck_assert_msg(d != NULL, "cannot open %s", dir);
	struct dirent *entry;
	while ((entry = readdir(d)) != NULL) {
		char path[PATH_MAX];
		struct stat st;
		if (entry->d_name[0] == '.')
			continue;
		int n = snprintf(path, sizeof path, "%s/%s", dir, entry->d_name);
		ck_assert(n > 0 && (size_t)n < sizeof path);
		ck_assert_int_eq(stat(path, &st), 0);
		size_t name_len = strlen(entry->d_name);
		if (S_ISDIR(st.st_mode))
			vector_walk(path, store, leaves, totals, depth + 1);
		else if (name_len > 5 && strcmp(entry->d_name + name_len - 5, ".json") == 0)
			vector_check(path, store, leaves, totals);
	}
	closedir(d);
}

START_TEST(test_vectors_from_stored_hashes)
{
	struct memory_store store;
	merkle_hash leaves[8];
	reference_store(&store, leaves);
	struct vector_totals totals = {0, 0, 0, 0};
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s", test_source_path("tests/vectors/merkle"));
	vector_walk(dir, &store, leaves, &totals, 0);
	ck_assert_uint_eq(totals.files, 196);
	/* Every happy path of both kinds is a proof of the reference tree (5 + 5), and the stored
	 * hashes give exactly it; the two other happy paths are made-up single-leaf trees. */
	ck_assert_uint_eq(totals.happy_on_reference, 10);
	ck_assert_uint_eq(totals.happy_elsewhere, 2);
	ck_assert_uint_gt(totals.on_reference, totals.happy_on_reference);
	store_free(&store);
}
END_TEST

START_TEST(test_proofs_agree_with_merkle_small_trees)
{
	enum { LEAVES = 80 };
	struct memory_store store;
	merkle_hash *leaves = NULL;
	store_fill(&store, LEAVES, &leaves);
	struct tlog_hash_reader reader = store_reader(&store);
	merkle_hash proof[MERKLE_MAX_PROOF], expected[MERKLE_MAX_PROOF], root, expected_root;
	size_t proof_len, expected_len;
	for (uint64_t n = 1; n <= LEAVES; n++) {
		uint64_t reads = store.hash_reads;
		REQUIRE((tlog_tree_root(&reader, n, root)) == (0));
		REQUIRE((store.hash_reads - reads) == ((uint64_t)popcount(n)));
		REQUIRE((merkle_root(leaves, n, expected_root)) == (0));
		REQUIRE(memcmp(root, expected_root, MERKLE_HASH_SIZE) == 0);
		for (uint64_t i = 0; i < n; i++) {
			REQUIRE((tlog_inclusion_proof(&reader, n, i, proof, &proof_len)) == (0));
			REQUIRE((merkle_inclusion_proof(leaves, n, i, expected, &expected_len)) == (0));
			REQUIRE((proof_len) == (expected_len));
			REQUIRE(memcmp(proof, expected, proof_len * MERKLE_HASH_SIZE) == 0);
		}
		for (uint64_t m = 1; m <= n; m++) {
			REQUIRE((tlog_consistency_proof(&reader, n, m, proof, &proof_len)) == (0));
			REQUIRE((merkle_consistency_proof(leaves, n, m, expected, &expected_len)) == (0));
			REQUIRE((proof_len) == (expected_len));
			REQUIRE(memcmp(proof, expected, proof_len * MERKLE_HASH_SIZE) == 0);
		}
		/* Refusals, as merkle's: an index outside the tree, old size 0 or past the tree. */
		REQUIRE((tlog_inclusion_proof(&reader, n, n, proof, &proof_len)) == (DIRAUTH_ERR_PROOF));
		REQUIRE((proof_len) == (0));
		REQUIRE((tlog_consistency_proof(&reader, n, 0, proof, &proof_len)) == (DIRAUTH_ERR_PROOF));
		REQUIRE((tlog_consistency_proof(&reader, n, n + 1, proof, &proof_len)) ==
		        (DIRAUTH_ERR_PROOF));
	}
	REQUIRE((tlog_inclusion_proof(&reader, 0, 0, proof, &proof_len)) == (DIRAUTH_ERR_PROOF));

	/* Range hashes: any aligned range is MTH of its leaves; others are refused. */
	for (uint64_t start = 0; start < LEAVES; start++) {
		for (uint64_t end = start + 1; end <= LEAVES; end++) {
			uint64_t largest = 1;
			while (largest * 2 <= end - start)
				largest *= 2;
			int rc = tlog_range_hash(&reader, LEAVES, start, end, root);
			if (start % largest != 0) {
				REQUIRE((rc) == (DIRAUTH_ERR_PROOF));
				continue;
			}
			REQUIRE((rc) == (0));
			REQUIRE((merkle_root(leaves + start, end - start, expected_root)) == (0));
			REQUIRE(memcmp(root, expected_root, MERKLE_HASH_SIZE) == 0);
		}
	}
	REQUIRE((tlog_range_hash(&reader, LEAVES, 4, 4, root)) == (DIRAUTH_ERR_PROOF));
	REQUIRE((tlog_range_hash(&reader, 64, 0, 65, root)) == (DIRAUTH_ERR_PROOF));

	/* The reader's error comes back unchanged. */
	store.fail_reads = 1;
	REQUIRE((tlog_tree_root(&reader, 5, root)) == (DIRAUTH_ERR_STORE));
	REQUIRE((tlog_inclusion_proof(&reader, 5, 1, proof, &proof_len)) == (DIRAUTH_ERR_STORE));
	REQUIRE((tlog_consistency_proof(&reader, 5, 3, proof, &proof_len)) == (DIRAUTH_ERR_STORE));
	store.fail_reads = 0;
	/* A store smaller than the tree asked for says so. */
	REQUIRE((tlog_tree_root(&reader, LEAVES + 1, root)) == (DIRAUTH_ERR_NOT_FOUND));
	free(leaves);
	store_free(&store);
}
END_TEST

/* ---- tiles served from a map of paths, read by a client ---- */

struct served_tile {
	char path[TLOG_TILE_PATH_MAX + 1];
	uint8_t data[TLOG_TILE_BYTES];
	size_t len;
};

struct tile_server {
	struct served_tile *tiles;
	size_t count, capacity;
	unsigned fetches;
	int corrupt_length; /* answer one byte short */
};

static int server_fetch(void *context, const struct tlog_tile *tile, uint8_t out[TLOG_TILE_BYTES],
                        size_t *len)
{
	struct tile_server *server = context;
	char path[TLOG_TILE_PATH_MAX + 1];
	REQUIRE((tlog_tile_path_format(tile, path)) == (0));
	server->fetches++;
	for (size_t i = 0; i < server->count; i++) {
		if (strcmp(server->tiles[i].path, path) == 0) {
			memcpy(out, server->tiles[i].data, server->tiles[i].len);
			*len = server->tiles[i].len - (server->corrupt_length ? 1 : 0);
			return 0;
		}
	}
	return DIRAUTH_ERR_NOT_FOUND;
}

/* Serves every tile of the tree of tree_size leaves, and only those. */
static void serve_tree(struct memory_store *store, uint64_t tree_size, struct tile_server *server)
{
	struct tlog_hash_reader reader = store_reader(store);
	server->count = 0;
	server->fetches = 0;
	for (uint8_t level = 0; level < 8; level++) {
		uint64_t full = tlog_tile_full_count(tree_size, level);
		uint16_t partial = tlog_tile_partial_width(tree_size, level);
		for (uint64_t n = 0; n < full + (partial ? 1 : 0); n++) {
			struct tlog_tile tile = {TLOG_TILE_HASHES, level, n,
			                         n < full ? TLOG_TILE_WIDTH : partial};
			REQUIRE(tlog_tile_is_of_tree(&tile, tree_size));
			if (server->count == server->capacity) {
				server->capacity = server->capacity ? 2 * server->capacity : 64;
				server->tiles =
				    realloc(server->tiles, server->capacity * sizeof(*server->tiles));
				ck_assert_ptr_nonnull(server->tiles);
			}
			struct served_tile *served = &server->tiles[server->count++];
			REQUIRE((tlog_tile_path_format(&tile, served->path)) == (0));
			REQUIRE((tlog_tile_read(&reader, tree_size, &tile, served->data, &served->len)) ==
			        (0));
			REQUIRE((served->len) == ((size_t)tile.width * MERKLE_HASH_SIZE));
		}
	}
}

START_TEST(test_tiles_rebuild_root_at_boundaries)
{
	static const uint64_t sizes[] = {1,   2,   3,   255,   256,   257,   511,   512,  513,
	                                 767, 768, 769, 65280, 65535, 65536, 65537, 65793};
	enum { LEAVES = 65793 };
	struct memory_store store;
	merkle_hash *leaves = NULL;
	store_fill(&store, LEAVES, &leaves);
	struct tlog_hash_reader reader = store_reader(&store);
	struct tile_server server = {NULL, 0, 0, 0, 0};

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		uint64_t size = sizes[s];
		merkle_hash expected, from_store, from_tiles;
		REQUIRE((merkle_root(leaves, size, expected)) == (0));
		REQUIRE((tlog_tree_root(&reader, size, from_store)) == (0));
		REQUIRE(memcmp(from_store, expected, MERKLE_HASH_SIZE) == 0);

		serve_tree(&store, size, &server);
		struct tlog_tile_source source = {server_fetch, &server, size, 0, {0, 0, 0, 0}, 0, {0}};
		struct tlog_hash_reader tiles = {tlog_tile_source_read, &source};
		REQUIRE((tlog_tree_root(&tiles, size, from_tiles)) == (0));
		ck_assert_msg(memcmp(from_tiles, expected, MERKLE_HASH_SIZE) == 0, "size %llu",
		              (unsigned long long)size);

		/* Proofs from the tiles alone are the store's. */
		uint64_t indexes[3] = {0, size / 2, size - 1};
		for (int k = 0; k < 3; k++) {
			merkle_hash a[MERKLE_MAX_PROOF], b[MERKLE_MAX_PROOF];
			size_t a_len, b_len;
			REQUIRE((tlog_inclusion_proof(&tiles, size, indexes[k], a, &a_len)) == (0));
			REQUIRE((tlog_inclusion_proof(&reader, size, indexes[k], b, &b_len)) == (0));
			REQUIRE((a_len) == (b_len));
			REQUIRE(memcmp(a, b, a_len * MERKLE_HASH_SIZE) == 0);
			REQUIRE((merkle_inclusion_verify(indexes[k], size, leaves[indexes[k]], a, a_len,
			                                 expected)) == (0));
			if (indexes[k] == 0)
				continue;
			REQUIRE((tlog_consistency_proof(&tiles, size, indexes[k], a, &a_len)) == (0));
			REQUIRE((tlog_consistency_proof(&reader, size, indexes[k], b, &b_len)) == (0));
			REQUIRE((a_len) == (b_len));
			REQUIRE(memcmp(a, b, a_len * MERKLE_HASH_SIZE) == 0);
		}

		/* The tiles' own contents: full tiles are 8,192 bytes; a level-1 hash is the root of the
		 * full level-0 tile under it, a level-2 hash the root of 65,536 leaves. */
		for (size_t t = 0; t < server.count; t++) {
			struct tlog_tile tile;
			REQUIRE((tlog_tile_path_parse(server.tiles[t].path, strlen(server.tiles[t].path),
			                              &tile)) == (0));
			if (tile.width == TLOG_TILE_WIDTH)
				REQUIRE((server.tiles[t].len) == (8192));
			if (tile.level == 0)
				REQUIRE(memcmp(server.tiles[t].data, leaves[tile.index * 256],
				               server.tiles[t].len) == 0);
			for (unsigned i = 0; tile.level > 0 && i < tile.width; i++) {
				uint64_t span = (uint64_t)1 << (8 * tile.level);
				REQUIRE((merkle_root(leaves + (tile.index * 256 + i) * span, span,
				                     expected)) == (0));
				REQUIRE(memcmp(server.tiles[t].data + i * 32, expected, 32) == 0);
			}
		}
	}

	/* The tree of 65,537 is served as 256 full level-0 tiles and one of width 1, one full level-1
	 * tile, and a level-2 tile of width 1. */
	serve_tree(&store, 65537, &server);
	ck_assert_uint_eq(server.count, 256 + 1 + 1 + 1);
	ck_assert_str_eq(server.tiles[256].path, "tile/0/256.p/1");
	ck_assert_str_eq(server.tiles[257].path, "tile/1/000");
	ck_assert_str_eq(server.tiles[258].path, "tile/2/000.p/1");

	/* A client refuses a tile of the wrong length, passes a missing tile's error on, and reads
	 * nothing past its tree. */
	struct tlog_tile_source source = {server_fetch, &server, 65537, 0, {0, 0, 0, 0}, 0, {0}};
	struct tlog_hash_reader tiles = {tlog_tile_source_read, &source};
	merkle_hash root, one[2];
	server.corrupt_length = 1;
	ck_assert_int_eq(tlog_tree_root(&tiles, 65537, root), DIRAUTH_ERR_MISMATCH);
	server.corrupt_length = 0;
	source.has_tile = 0;
	ck_assert_int_eq(tlog_tile_source_read(&source, 0, 65537, 1, one), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(tlog_tile_source_read(&source, 0, 65536, 2, one), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(tlog_tile_source_read(&source, 17, 0, 1, one), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(tlog_tile_source_read(&source, 16, 0, 1, one), 0);
	source.tree_size = 65538; /* a tree the server has no tiles for */
	source.has_tile = 0;
	ck_assert_int_eq(tlog_tree_root(&tiles, 65538, root), DIRAUTH_ERR_NOT_FOUND);

	/* The store refuses tiles outside the tree, and bundles (not hashes). */
	uint8_t data[TLOG_TILE_BYTES];
	size_t len = 1;
	struct tlog_tile tile = {TLOG_TILE_HASHES, 0, 257, 1};
	ck_assert_int_eq(tlog_tile_read(&reader, 65793, &tile, data, &len), 0);
	ck_assert_int_eq(tlog_tile_read(&reader, 65792, &tile, data, &len), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_uint_eq(len, 0);
	tile.kind = TLOG_TILE_ENTRIES;
	ck_assert_int_eq(tlog_tile_read(&reader, 65793, &tile, data, &len), DIRAUTH_ERR_SYNTAX);
	tile = (struct tlog_tile){TLOG_TILE_HASHES, 0, 0, 0};
	ck_assert_int_eq(tlog_tile_read(&reader, 65793, &tile, data, &len), DIRAUTH_ERR_SYNTAX);
	free(server.tiles);
	free(leaves);
	store_free(&store);
}
END_TEST

START_TEST(test_partial_tiles_every_width)
{
	enum { LEAVES = 256 * 256 + 1024 };
	struct memory_store store;
	merkle_hash *leaves = NULL;
	store_fill(&store, LEAVES, &leaves);
	struct tlog_hash_reader reader = store_reader(&store);
	uint8_t full0[TLOG_TILE_BYTES], full1[TLOG_TILE_BYTES], data[TLOG_TILE_BYTES];
	size_t len;
	struct tlog_tile tile = {TLOG_TILE_HASHES, 0, 3, 256};
	REQUIRE((tlog_tile_read(&reader, LEAVES, &tile, full0, &len)) == (0));
	tile = (struct tlog_tile){TLOG_TILE_HASHES, 1, 0, 256};
	REQUIRE((tlog_tile_read(&reader, LEAVES, &tile, full1, &len)) == (0));
	for (uint16_t width = 1; width < 256; width++) {
		/* Level 0: the tree of 3·256 + w leaves has the partial tile 3 of width w: its bytes are
		 * the leaf hashes and a prefix of the full tile it grows into. */
		uint64_t size = 3 * 256 + width;
		tile = (struct tlog_tile){TLOG_TILE_HASHES, 0, 3, width};
		REQUIRE(tlog_tile_is_of_tree(&tile, size));
		REQUIRE((tlog_tile_read(&reader, size, &tile, data, &len)) == (0));
		REQUIRE((len) == ((size_t)width * 32));
		REQUIRE(memcmp(data, leaves[768], len) == 0);
		REQUIRE(memcmp(data, full0, len) == 0);
		REQUIRE((tlog_tile_read(&reader, size - 1, &tile, data, &len)) == (DIRAUTH_ERR_NOT_FOUND));
		char path[TLOG_TILE_PATH_MAX + 1], expected[TLOG_TILE_PATH_MAX + 1];
		snprintf(expected, sizeof(expected), "tile/0/003.p/%u", (unsigned)width);
		REQUIRE((tlog_tile_path_format(&tile, path)) == (0));
		ck_assert_str_eq(path, expected);

		/* Level 1: the tree of 256·w + 5 leaves has the level-1 tile 0 of width w, the roots of
		 * its w full level-0 tiles. */
		size = 256 * (uint64_t)width + 5;
		tile = (struct tlog_tile){TLOG_TILE_HASHES, 1, 0, width};
		REQUIRE(tlog_tile_is_of_tree(&tile, size));
		REQUIRE((tlog_tile_read(&reader, size, &tile, data, &len)) == (0));
		REQUIRE((len) == ((size_t)width * 32));
		REQUIRE(memcmp(data, full1, len) == 0);
		merkle_hash root;
		REQUIRE((merkle_root(leaves + 256 * (width - 1), 256, root)) == (0));
		REQUIRE(memcmp(data + (width - 1) * 32, root, 32) == 0);
		REQUIRE((tlog_tile_path_format(&tile, path)) == (0));
		snprintf(expected, sizeof(expected), "tile/1/000.p/%u", (unsigned)width);
		ck_assert_str_eq(path, expected);
	}
	free(leaves);
	store_free(&store);
}
END_TEST

/* ---- large trees from stored hashes ---- */

static uint64_t random_state = 0x243f6a8885a308d3ull;

static uint64_t random_below(uint64_t bound)
{
	random_state ^= random_state << 13;
	random_state ^= random_state >> 7;
	random_state ^= random_state << 17;
	return random_state % bound;
}

START_TEST(test_large_tree_random_proofs)
{
	/* 2^21 + 54,321 leaves: the right edge is partial at many levels. */
	const uint64_t leaves_count = ((uint64_t)1 << 21) + 54321;
	struct memory_store store;
	store_fill(&store, leaves_count, NULL);
	struct tlog_hash_reader reader = store_reader(&store);
	merkle_hash full_root, root, old_root, proof[MERKLE_MAX_PROOF];
	size_t proof_len;

	/* The root of the whole tree, from the stored hashes and from the leaves by crypto/merkle.c.
	 * Every other root below is then tied to it by a consistency proof that the vector-checked
	 * verifier accepts, so no root here is believed on tlog's word alone. */
	REQUIRE((tlog_tree_root(&reader, leaves_count, full_root)) == (0));
	REQUIRE((merkle_root((const merkle_hash *)store.levels[0], leaves_count, root)) == (0));
	REQUIRE(memcmp(full_root, root, MERKLE_HASH_SIZE) == 0);

	for (int round = 0; round < 300; round++) {
		uint64_t size = 1 + random_below(leaves_count);
		if (round < 4)
			size = leaves_count - (uint64_t)round;
		uint64_t index = random_below(size);
		uint64_t old_size = 1 + random_below(size);
		REQUIRE((tlog_tree_root(&reader, size, root)) == (0));
		REQUIRE((tlog_tree_root(&reader, old_size, old_root)) == (0));
		REQUIRE((tlog_consistency_proof(&reader, leaves_count, size, proof, &proof_len)) == (0));
		REQUIRE((merkle_consistency_verify(size, leaves_count, root, full_root, proof, proof_len)) ==
		        (0));

		uint64_t reads = store.hash_reads;
		REQUIRE((tlog_inclusion_proof(&reader, size, index, proof, &proof_len)) == (0));
		REQUIRE((store.hash_reads - reads) <= (64 * 64));
		REQUIRE((merkle_inclusion_verify(index, size, store.levels[0][index], proof, proof_len,
		                                 root)) == (0));
		if (size > 1)
			REQUIRE((merkle_inclusion_verify(index, size, store.levels[0][(index + 1) % size],
			                                 proof, proof_len, root)) == (DIRAUTH_ERR_PROOF));

		REQUIRE((tlog_consistency_proof(&reader, size, old_size, proof, &proof_len)) == (0));
		REQUIRE((merkle_consistency_verify(old_size, size, old_root, root, proof, proof_len)) == (0));
		if (proof_len > 0) {
			proof[proof_len / 2][7] ^= 0x10;
			REQUIRE((merkle_consistency_verify(old_size, size, old_root, root, proof,
			                                   proof_len)) == (DIRAUTH_ERR_PROOF));
		}
	}
	store_free(&store);
}
END_TEST

START_TEST(test_proofs_agree_with_merkle_random_midsize)
{
	enum { LEAVES = 5000 };
	struct memory_store store;
	merkle_hash *leaves = NULL;
	store_fill(&store, LEAVES, &leaves);
	struct tlog_hash_reader reader = store_reader(&store);
	merkle_hash proof[MERKLE_MAX_PROOF], expected[MERKLE_MAX_PROOF];
	size_t proof_len, expected_len;
	for (int round = 0; round < 60; round++) {
		uint64_t size = 1 + random_below(LEAVES);
		uint64_t index = random_below(size), old_size = 1 + random_below(size);
		REQUIRE((tlog_inclusion_proof(&reader, size, index, proof, &proof_len)) == (0));
		REQUIRE((merkle_inclusion_proof(leaves, size, index, expected, &expected_len)) == (0));
		REQUIRE((proof_len) == (expected_len));
		REQUIRE(memcmp(proof, expected, proof_len * MERKLE_HASH_SIZE) == 0);
		REQUIRE((tlog_consistency_proof(&reader, size, old_size, proof, &proof_len)) == (0));
		REQUIRE((merkle_consistency_proof(leaves, size, old_size, expected, &expected_len)) == (0));
		REQUIRE((proof_len) == (expected_len));
		REQUIRE(memcmp(proof, expected, proof_len * MERKLE_HASH_SIZE) == 0);
	}
	free(leaves);
	store_free(&store);
}
END_TEST

/* ---- entry bundles ---- */

START_TEST(test_bundles)
{
	enum { WIDTH = 256 };
	static uint8_t payload[TLOG_ENTRY_MAX];
	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7 + 3);
	struct tlog_entry entries[WIDTH], parsed[WIDTH];
	/* Lengths 0 and the maximum, and a spread between. */
	for (size_t i = 0; i < WIDTH; i++) {
		entries[i].data = payload + i;
		entries[i].len = i == 0 ? 0 : i == 1 ? TLOG_ENTRY_MAX - 1 : (i * 37) % 500;
	}
	entries[1].data = payload;
	entries[1].len = TLOG_ENTRY_MAX;
	struct buffer bundle;
	buffer_init(&bundle);
	ck_assert_int_eq(tlog_bundle_encode(entries, WIDTH, &bundle), 0);
	/* Big-endian uint16 lengths. */
	ck_assert_uint_eq(bundle.data[0], 0);
	ck_assert_uint_eq(bundle.data[1], 0);
	ck_assert_uint_eq(bundle.data[2], 0xff);
	ck_assert_uint_eq(bundle.data[3], 0xff);
	ck_assert_int_eq(tlog_bundle_parse(bundle.data, bundle.len, WIDTH, parsed), 0);
	for (size_t i = 0; i < WIDTH; i++) {
		ck_assert_uint_eq(parsed[i].len, entries[i].len);
		ck_assert(parsed[i].len == 0 || memcmp(parsed[i].data, entries[i].data, parsed[i].len) == 0);
	}

	/* The bundle matches the level-0 tile of a log of those entries. */
	struct memory_store store;
	store_init(&store, WIDTH);
	for (size_t i = 0; i < WIDTH; i++) {
		merkle_hash leaf;
		ck_assert_int_eq(merkle_leaf_hash(entries[i].data, entries[i].len, leaf), 0);
		store_append(&store, leaf);
	}
	struct tlog_hash_reader reader = store_reader(&store);
	struct tlog_tile tile = {TLOG_TILE_HASHES, 0, 0, WIDTH};
	uint8_t data[TLOG_TILE_BYTES];
	size_t len;
	ck_assert_int_eq(tlog_tile_read(&reader, WIDTH, &tile, data, &len), 0);
	ck_assert_int_eq(tlog_bundle_check_tile(parsed, WIDTH, data, len), 0);
	ck_assert_int_eq(tlog_bundle_check_tile(parsed, WIDTH - 1, data, len), DIRAUTH_ERR_MISMATCH);
	ck_assert_int_eq(tlog_bundle_check_tile(parsed, WIDTH - 1, data, len - 32), 0);
	parsed[5].len--;
	ck_assert_int_eq(tlog_bundle_check_tile(parsed, WIDTH, data, len), DIRAUTH_ERR_MISMATCH);
	store_free(&store);

	/* Refusals: another width than the bytes hold, a cut length prefix, a length past the end,
	 * trailing bytes, widths out of bounds. */
	ck_assert_int_eq(tlog_bundle_parse(bundle.data, bundle.len, WIDTH - 1, parsed), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(tlog_bundle_parse(bundle.data, bundle.len - 1, WIDTH, parsed), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(tlog_bundle_parse(bundle.data, bundle.len, 0, parsed), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(tlog_bundle_parse(bundle.data, bundle.len, 257, parsed), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(tlog_bundle_parse(bundle.data, TLOG_BUNDLE_MAX_BYTES + 1, WIDTH, parsed),
	                 DIRAUTH_ERR_BOUNDS);
	struct buffer small;
	buffer_init(&small);
	ck_assert_int_eq(tlog_bundle_append(&small, (const uint8_t *)"abc", 3), 0);
	ck_assert_int_eq(tlog_bundle_append(&small, (const uint8_t *)"", 0), 0);
	ck_assert_uint_eq(small.len, 7);
	ck_assert(memcmp(small.data,
	                 "\x00\x03"
	                 "abc\x00\x00",
	                 7) == 0);
	ck_assert_int_eq(tlog_bundle_parse(small.data, small.len, 2, parsed), 0);
	ck_assert_int_eq(tlog_bundle_parse(small.data, small.len, 3, parsed), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(tlog_bundle_parse(small.data, 6, 2, parsed), DIRAUTH_ERR_SYNTAX); /* cut prefix */
	ck_assert_int_eq(tlog_bundle_parse(small.data, 4, 1, parsed), DIRAUTH_ERR_SYNTAX); /* cut entry */
	ck_assert_int_eq(tlog_bundle_parse(small.data, 5, 1, parsed), 0);
	ck_assert_int_eq(tlog_bundle_parse(small.data, 6, 1, parsed), DIRAUTH_ERR_SYNTAX); /* trailing */
	ck_assert_int_eq(tlog_bundle_parse((const uint8_t *)"", 0, 1, parsed), DIRAUTH_ERR_SYNTAX);
	/* An entry over 65,535 bytes cannot be framed; counts out of bounds are refused; nothing is
	 * appended on error. */
	size_t before = small.len;
	ck_assert_int_eq(tlog_bundle_append(&small, payload, TLOG_ENTRY_MAX + 1), DIRAUTH_ERR_BOUNDS);
	ck_assert_uint_eq(small.len, before);
	struct tlog_entry too_big[2] = {{payload, 1}, {payload, TLOG_ENTRY_MAX + 1}};
	ck_assert_int_eq(tlog_bundle_encode(too_big, 2, &small), DIRAUTH_ERR_BOUNDS);
	ck_assert_uint_eq(small.len, before);
	ck_assert_int_eq(tlog_bundle_encode(entries, 0, &small), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(tlog_bundle_encode(entries, 257, &small), DIRAUTH_ERR_BOUNDS);
	buffer_free(&small);
	buffer_free(&bundle);
}
END_TEST

/* ---- checkpoints, cosignatures and proof files ---- */

#define LOG_ORIGIN "dirauth.example/example-net"
#define LOG_SIZE   1000
#define TIMESTAMP  1767225600ull

struct cosigner {
	struct test_key key;           /* signs; its verifier is the plain (0x01) one */
	struct note_verifier verifier; /* the same key as a cosigner (0x04) */
};

static void cosigner_load(struct cosigner *c, const char *name, uint8_t seed_base)
{
	uint8_t seed[32];
	for (int i = 0; i < 32; i++)
		seed[i] = (uint8_t)(seed_base + i);
	test_key_from_seed(seed, name, &c->key);
	ck_assert_int_eq(cosignature_verifier_from_ed25519(name, c->key.verifier.public_key, &c->verifier),
	                 0);
}

/* A cosignature line by c over text, under the verifier's name and key id. */
static void cosign(const struct cosigner *c, const struct note_verifier *as, const uint8_t *text, size_t len,
                   struct note_signature *out)
{
	struct buffer message;
	buffer_init(&message);
	ck_assert_int_eq(cosignature_message(TIMESTAMP, text, len, &message), 0);
	struct note_signature plain;
	test_key_signature(&c->key, message.data, message.len, &plain);
	cosignature_signature(as, TIMESTAMP, plain.signature, out);
	buffer_free(&message);
}

/* The example log: LOG_SIZE snapshot-header-like entries, its log key and three cosigners. */
struct example_log {
	struct memory_store store;
	struct buffer entries[LOG_SIZE];
	struct test_key log_key;
	struct cosigner cosigners[3];
	struct note_verifier cosigner_keys[3];
	struct buffer checkpoint_text;
};

static void example_log_load(struct example_log *log)
{
	store_init(&log->store, LOG_SIZE);
	for (size_t i = 0; i < LOG_SIZE; i++) {
		buffer_init(&log->entries[i]);
		ck_assert_int_eq(
		    buffer_appendf(&log->entries[i],
		                   "dirauth snapshot v1\nnamespace example-net\norigin " LOG_ORIGIN
		                   "\nepoch %zu\n",
		                   29453762 + i),
		    0);
		merkle_hash leaf;
		ck_assert_int_eq(merkle_leaf_hash(log->entries[i].data, log->entries[i].len, leaf), 0);
		store_append(&log->store, leaf);
	}
	uint8_t seed[32];
	for (int i = 0; i < 32; i++)
		seed[i] = (uint8_t)(0xa0 + i);
	test_key_from_seed(seed, LOG_ORIGIN, &log->log_key);
	cosigner_load(&log->cosigners[0], "witness.example/w1", 0xc0);
	cosigner_load(&log->cosigners[1], "authority-2.example/cosign", 0x40);
	cosigner_load(&log->cosigners[2], "authority-3.example/cosign", 0x60);
	for (int i = 0; i < 3; i++)
		log->cosigner_keys[i] = log->cosigners[i].verifier;

	struct checkpoint *c = calloc(1, sizeof(*c));
	ck_assert_ptr_nonnull(c);
	snprintf(c->origin, sizeof(c->origin), "%s", LOG_ORIGIN);
	c->tree_size = LOG_SIZE;
	struct tlog_hash_reader reader = store_reader(&log->store);
	ck_assert_int_eq(tlog_tree_root(&reader, LOG_SIZE, c->root), 0);
	buffer_init(&log->checkpoint_text);
	ck_assert_int_eq(checkpoint_encode(c, &log->checkpoint_text), 0);
	free(c);
}

static void example_log_free(struct example_log *log)
{
	for (size_t i = 0; i < LOG_SIZE; i++)
		buffer_free(&log->entries[i]);
	buffer_free(&log->checkpoint_text);
	test_key_free(&log->log_key);
	for (int i = 0; i < 3; i++)
		test_key_free(&log->cosigners[i].key);
	store_free(&log->store);
}

/* The checkpoint note of text signed by the log (when log_signs) and cosigned by the cosigners
 * whose bit is set in cosigners_mask. */
static void checkpoint_note(struct example_log *log, const struct buffer *text, int log_signs,
                            unsigned cosigners_mask, struct buffer *out)
{
	struct note_signature lines[4];
	size_t count = 0;
	if (log_signs)
		test_key_signature(&log->log_key, text->data, text->len, &lines[count++]);
	for (int i = 0; i < 3; i++) {
		if (cosigners_mask & (1u << i))
			cosign(&log->cosigners[i], &log->cosigners[i].verifier, text->data, text->len,
			       &lines[count++]);
	}
	ck_assert_int_eq(note_format(text->data, text->len, lines, count, out), 0);
}

static struct note *parse_note(const struct buffer *bytes)
{
	struct note *note = NULL;
	ck_assert_int_eq(note_parse(bytes->data, bytes->len, &note), 0);
	return note;
}

START_TEST(test_checkpoint_policy)
{
	struct example_log *log = calloc(1, sizeof(*log));
	ck_assert_ptr_nonnull(log);
	example_log_load(log);
	struct tlog_policy policy = {LOG_ORIGIN, &log->log_key.verifier, log->cosigner_keys, 3, 2};
	struct checkpoint *c = calloc(1, sizeof(*c));
	ck_assert_ptr_nonnull(c);
	struct buffer bytes;
	buffer_init(&bytes);
	uint8_t cosigned[4];
	size_t count = 99;

	/* The log and all three cosigners. */
	checkpoint_note(log, &log->checkpoint_text, 1, 7, &bytes);
	struct note *note = parse_note(&bytes);
	ck_assert_int_eq(tlog_checkpoint_verify(note, &policy, c, cosigned, &count), 0);
	ck_assert_uint_eq(count, 3);
	ck_assert(cosigned[0] && cosigned[1] && cosigned[2]);
	ck_assert_uint_eq(c->tree_size, LOG_SIZE);
	ck_assert_str_eq(c->origin, LOG_ORIGIN);
	policy.quorum = 3;
	ck_assert_int_eq(tlog_checkpoint_verify(note, &policy, c, NULL, NULL), 0);
	/* A quorum no list of three distinct keys can meet is a broken policy. */
	policy.quorum = 4;
	ck_assert_int_eq(tlog_checkpoint_verify(note, &policy, c, NULL, NULL), DIRAUTH_ERR_CONFIG);
	/* Quorum 0 asks for the log's signature only. */
	policy.quorum = 0;
	ck_assert_int_eq(tlog_checkpoint_verify(note, &policy, c, NULL, &count), 0);
	ck_assert_uint_eq(count, 3);
	policy.cosigner_count = 0;
	ck_assert_int_eq(tlog_checkpoint_verify(note, &policy, c, cosigned, &count), 0);
	ck_assert_uint_eq(count, 0);
	policy.cosigner_count = 3;
	note_free(note);

	/* Two of three cosigned: a quorum of 2 passes, 3 does not, and says how many did. */
	buffer_reset(&bytes);
	checkpoint_note(log, &log->checkpoint_text, 1, 5, &bytes);
	note = parse_note(&bytes);
	policy.quorum = 2;
	ck_assert_int_eq(tlog_checkpoint_verify(note, &policy, c, cosigned, &count), 0);
	ck_assert_uint_eq(count, 2);
	ck_assert(cosigned[0] && !cosigned[1] && cosigned[2]);
	policy.quorum = 3;
	ck_assert_int_eq(tlog_checkpoint_verify(note, &policy, c, cosigned, &count), DIRAUTH_ERR_THRESHOLD);
	ck_assert_uint_eq(count, 2);
	ck_assert_uint_eq(c->tree_size, LOG_SIZE);

	/* A key listed twice counts once, and the list then cannot meet 3. */
	struct note_verifier twice[3] = {log->cosigner_keys[0], log->cosigner_keys[0], log->cosigner_keys[2]};
	policy.cosigners = twice;
	policy.quorum = 2;
	ck_assert_int_eq(tlog_checkpoint_verify(note, &policy, c, cosigned, &count), 0);
	ck_assert_uint_eq(count, 2);
	ck_assert(cosigned[0] && !cosigned[1] && cosigned[2]);
	policy.quorum = 3;
	ck_assert_int_eq(tlog_checkpoint_verify(note, &policy, c, NULL, NULL), DIRAUTH_ERR_CONFIG);
	note_free(note);

	/* One key under two names: the cosignature, which does not sign the name, copied under the
	 * second name's key id verifies for both, and still counts once. */
	struct note_verifier renamed;
	ck_assert_int_eq(cosignature_verifier_from_ed25519(
	                     "witness.example/w1-again", log->cosigners[0].key.verifier.public_key, &renamed),
	                 0);
	struct note_verifier aliases[3] = {log->cosigner_keys[0], renamed, log->cosigner_keys[2]};
	struct note_signature lines[4];
	test_key_signature(&log->log_key, log->checkpoint_text.data, log->checkpoint_text.len, &lines[0]);
	cosign(&log->cosigners[0], &log->cosigners[0].verifier, log->checkpoint_text.data,
	       log->checkpoint_text.len, &lines[1]);
	cosign(&log->cosigners[0], &renamed, log->checkpoint_text.data, log->checkpoint_text.len, &lines[2]);
	buffer_reset(&bytes);
	ck_assert_int_eq(note_format(log->checkpoint_text.data, log->checkpoint_text.len, lines, 3, &bytes),
	                 0);
	note = parse_note(&bytes);
	policy.cosigners = aliases;
	policy.quorum = 1;
	ck_assert_int_eq(tlog_checkpoint_verify(note, &policy, c, cosigned, &count), 0);
	ck_assert_uint_eq(count, 1);
	ck_assert(cosigned[0] && !cosigned[1] && !cosigned[2]);
	policy.quorum = 2;
	ck_assert_int_eq(tlog_checkpoint_verify(note, &policy, c, NULL, &count), DIRAUTH_ERR_THRESHOLD);
	ck_assert_uint_eq(count, 1);
	note_free(note);
	policy.cosigners = log->cosigner_keys;

	/* Cosignatures by keys the policy does not name are ignored; the log's own key as a plain
	 * note key does not make a cosignature. */
	struct cosigner stranger;
	cosigner_load(&stranger, "stranger.example/w9", 0x10);
	cosign(&stranger, &stranger.verifier, log->checkpoint_text.data, log->checkpoint_text.len, &lines[1]);
	buffer_reset(&bytes);
	ck_assert_int_eq(note_format(log->checkpoint_text.data, log->checkpoint_text.len, lines, 2, &bytes),
	                 0);
	note = parse_note(&bytes);
	policy.quorum = 1;
	ck_assert_int_eq(tlog_checkpoint_verify(note, &policy, c, NULL, &count), DIRAUTH_ERR_THRESHOLD);
	ck_assert_uint_eq(count, 0);
	policy.quorum = 0;
	ck_assert_int_eq(tlog_checkpoint_verify(note, &policy, c, NULL, &count), 0);
	note_free(note);
	test_key_free(&stranger.key);

	/* A bad cosignature by a named cosigner rejects the note, whatever the others say. */
	checkpoint_note(log, &log->checkpoint_text, 1, 7, &bytes);
	buffer_reset(&bytes);
	test_key_signature(&log->log_key, log->checkpoint_text.data, log->checkpoint_text.len, &lines[0]);
	for (int i = 0; i < 3; i++)
		cosign(&log->cosigners[i], &log->cosigners[i].verifier, log->checkpoint_text.data,
		       log->checkpoint_text.len, &lines[1 + i]);
	lines[2].signature[20] ^= 1;
	ck_assert_int_eq(note_format(log->checkpoint_text.data, log->checkpoint_text.len, lines, 4, &bytes),
	                 0);
	note = parse_note(&bytes);
	policy.quorum = 1;
	ck_assert_int_eq(tlog_checkpoint_verify(note, &policy, c, NULL, &count), DIRAUTH_ERR_SIGNATURE);
	note_free(note);

	/* No log signature; a bad one; another origin; a text that is not a checkpoint. */
	buffer_reset(&bytes);
	checkpoint_note(log, &log->checkpoint_text, 0, 7, &bytes);
	note = parse_note(&bytes);
	ck_assert_int_eq(tlog_checkpoint_verify(note, &policy, c, NULL, NULL), DIRAUTH_ERR_UNKNOWN_KEY);
	note_free(note);
	lines[0].signature[3] ^= 1;
	buffer_reset(&bytes);
	ck_assert_int_eq(note_format(log->checkpoint_text.data, log->checkpoint_text.len, lines, 1, &bytes),
	                 0);
	note = parse_note(&bytes);
	ck_assert_int_eq(tlog_checkpoint_verify(note, &policy, c, NULL, NULL), DIRAUTH_ERR_SIGNATURE);
	policy.origin = "dirauth.example/other-net";
	ck_assert_int_eq(tlog_checkpoint_verify(note, &policy, c, NULL, NULL), DIRAUTH_ERR_MISMATCH);
	policy.origin = LOG_ORIGIN;
	note_free(note);
	buffer_reset(&bytes);
	struct buffer not_checkpoint;
	buffer_init(&not_checkpoint);
	ck_assert_int_eq(buffer_append_string(&not_checkpoint, "dirauth snapshot v1\nnamespace x\n"), 0);
	checkpoint_note(log, &not_checkpoint, 1, 7, &bytes);
	note = parse_note(&bytes);
	ck_assert_int_eq(tlog_checkpoint_verify(note, &policy, c, NULL, NULL), DIRAUTH_ERR_SYNTAX);
	note_free(note);
	buffer_free(&not_checkpoint);

	/* Malformed policies. */
	buffer_reset(&bytes);
	checkpoint_note(log, &log->checkpoint_text, 1, 7, &bytes);
	note = parse_note(&bytes);
	policy.log_key = &log->cosigner_keys[0]; /* a cosigner key as the log key */
	ck_assert_int_eq(tlog_checkpoint_verify(note, &policy, c, NULL, NULL), DIRAUTH_ERR_CONFIG);
	policy.log_key = &log->log_key.verifier;
	struct note_verifier plain_keys[3] = {log->cosigners[0].key.verifier, log->cosigner_keys[1],
	                                      log->cosigner_keys[2]};
	policy.cosigners = plain_keys; /* a plain note key as a cosigner */
	ck_assert_int_eq(tlog_checkpoint_verify(note, &policy, c, NULL, NULL), DIRAUTH_ERR_CONFIG);
	policy.cosigners = log->cosigner_keys;
	policy.origin = "bad origin";
	ck_assert_int_eq(tlog_checkpoint_verify(note, &policy, c, NULL, NULL), DIRAUTH_ERR_CONFIG);
	policy.origin = LOG_ORIGIN;
	ck_assert_int_eq(tlog_checkpoint_verify(note, &policy, c, NULL, NULL), 0);
	note_free(note);

	buffer_free(&bytes);
	free(c);
	example_log_free(log);
	free(log);
}
END_TEST

static int parse_proof_rc(const struct buffer *bytes)
{
	struct tlog_proof *proof = (struct tlog_proof *)1;
	int rc = tlog_proof_parse(bytes->data, bytes->len, &proof);
	if (rc)
		ck_assert_ptr_null(proof);
	tlog_proof_free(proof);
	return rc;
}

/* bytes := prefix || note || suffix */
static void build(struct buffer *bytes, const char *prefix, const struct buffer *note, const char *suffix)
{
	buffer_reset(bytes);
	ck_assert_int_eq(buffer_append_string(bytes, prefix), 0);
	if (note)
		ck_assert_int_eq(buffer_append(bytes, note->data, note->len), 0);
	ck_assert_int_eq(buffer_append_string(bytes, suffix), 0);
}

START_TEST(test_proof_files)
{
	struct example_log *log = calloc(1, sizeof(*log));
	ck_assert_ptr_nonnull(log);
	example_log_load(log);
	struct tlog_policy policy = {LOG_ORIGIN, &log->log_key.verifier, log->cosigner_keys, 3, 2};
	struct tlog_hash_reader reader = store_reader(&log->store);
	struct buffer note_bytes, file, again;
	buffer_init(&note_bytes);
	buffer_init(&file);
	buffer_init(&again);
	checkpoint_note(log, &log->checkpoint_text, 1, 7, &note_bytes);

	/* An inclusion proof of entry 417 with extra data, written, read back and verified. */
	merkle_hash path[MERKLE_MAX_PROOF], leaf;
	size_t path_len;
	ck_assert_int_eq(tlog_inclusion_proof(&reader, LOG_SIZE, 417, path, &path_len), 0);
	ck_assert_uint_eq(path_len, 10);
	static const uint8_t extra[] = "the signed header note would go here";
	ck_assert_int_eq(tlog_proof_encode(417, path, path_len, extra, sizeof(extra), note_bytes.data,
	                                   note_bytes.len, &file),
	                 0);
	ck_assert(strncmp((const char *)file.data, "c2sp.org/tlog-proof@v1\nextra dGhlIHNpZ25l", 41) == 0);
	struct tlog_proof *proof = NULL;
	ck_assert_int_eq(tlog_proof_parse(file.data, file.len, &proof), 0);
	ck_assert_uint_eq(proof->index, 417);
	ck_assert_uint_eq(proof->path_len, path_len);
	ck_assert(memcmp(proof->path, path, path_len * MERKLE_HASH_SIZE) == 0);
	ck_assert_uint_eq(proof->extra_len, sizeof(extra));
	ck_assert(memcmp(proof->extra, extra, sizeof(extra)) == 0);
	ck_assert_uint_eq(proof->checkpoint_note_len, note_bytes.len);
	ck_assert(memcmp(proof->checkpoint_note, note_bytes.data, note_bytes.len) == 0);
	ck_assert_uint_eq(proof->checkpoint.tree_size, LOG_SIZE);
	ck_assert_uint_eq(proof->note->signature_count, 4);
	ck_assert_int_eq(tlog_proof_encode(proof->index, proof->path, proof->path_len, proof->extra,
	                                   proof->extra_len, proof->checkpoint_note,
	                                   proof->checkpoint_note_len, &again),
	                 0);
	ck_assert_uint_eq(again.len, file.len);
	ck_assert(memcmp(again.data, file.data, file.len) == 0);

	ck_assert_int_eq(tlog_proof_verify_entry(proof, log->entries[417].data, log->entries[417].len), 0);
	ck_assert_int_eq(merkle_leaf_hash(log->entries[417].data, log->entries[417].len, leaf), 0);
	ck_assert_int_eq(tlog_proof_verify_leaf_hash(proof, leaf), 0);
	size_t count = 0;
	ck_assert_int_eq(tlog_proof_verify(proof, &policy, leaf, &count), 0);
	ck_assert_uint_eq(count, 3);
	/* Another entry, another index, a changed path hash. */
	ck_assert_int_eq(tlog_proof_verify_entry(proof, log->entries[418].data, log->entries[418].len),
	                 DIRAUTH_ERR_PROOF);
	ck_assert_int_eq(tlog_proof_verify_entry(proof, log->entries[417].data, log->entries[417].len - 1),
	                 DIRAUTH_ERR_PROOF);
	proof->index = 416;
	ck_assert_int_eq(tlog_proof_verify_leaf_hash(proof, leaf), DIRAUTH_ERR_PROOF);
	proof->index = LOG_SIZE;
	ck_assert_int_eq(tlog_proof_verify(proof, &policy, leaf, NULL), DIRAUTH_ERR_PROOF);
	proof->index = 417;
	proof->path[3][0] ^= 1;
	ck_assert_int_eq(tlog_proof_verify(proof, &policy, leaf, NULL), DIRAUTH_ERR_PROOF);
	proof->path[3][0] ^= 1;
	proof->path_len--;
	ck_assert_int_eq(tlog_proof_verify(proof, &policy, leaf, NULL), DIRAUTH_ERR_PROOF);
	proof->path_len++;
	/* The checkpoint must pass the policy before the inclusion means anything. */
	policy.quorum = 3;
	ck_assert_int_eq(tlog_proof_verify(proof, &policy, leaf, NULL), 0);
	tlog_proof_free(proof);

	/* A file with two cosigners fails a quorum of three, though its inclusion proof holds. */
	buffer_reset(&note_bytes);
	checkpoint_note(log, &log->checkpoint_text, 1, 3, &note_bytes);
	buffer_reset(&file);
	ck_assert_int_eq(
	    tlog_proof_encode(417, path, path_len, NULL, 0, note_bytes.data, note_bytes.len, &file), 0);
	ck_assert(strncmp((const char *)file.data, "c2sp.org/tlog-proof@v1\nindex 417\n", 33) == 0);
	ck_assert_int_eq(tlog_proof_parse(file.data, file.len, &proof), 0);
	ck_assert_ptr_null(proof->extra);
	ck_assert_int_eq(tlog_proof_verify_leaf_hash(proof, leaf), 0);
	ck_assert_int_eq(tlog_proof_verify(proof, &policy, leaf, &count), DIRAUTH_ERR_THRESHOLD);
	ck_assert_uint_eq(count, 2);
	tlog_proof_free(proof);

	/* Every entry of the log has a proof that verifies, and only for itself. */
	for (uint64_t i = 0; i < LOG_SIZE; i += 37) {
		ck_assert_int_eq(tlog_inclusion_proof(&reader, LOG_SIZE, i, path, &path_len), 0);
		buffer_reset(&file);
		ck_assert_int_eq(
		    tlog_proof_encode(i, path, path_len, NULL, 0, note_bytes.data, note_bytes.len, &file), 0);
		ck_assert_int_eq(tlog_proof_parse(file.data, file.len, &proof), 0);
		ck_assert_int_eq(tlog_proof_verify_entry(proof, log->entries[i].data, log->entries[i].len),
		                 0);
		ck_assert_int_eq(tlog_proof_verify_entry(proof, log->entries[(i + 1) % LOG_SIZE].data,
		                                         log->entries[(i + 1) % LOG_SIZE].len),
		                 DIRAUTH_ERR_PROOF);
		tlog_proof_free(proof);
	}
	buffer_free(&again);
	buffer_free(&file);
	buffer_free(&note_bytes);
	example_log_free(log);
	free(log);
}
END_TEST

START_TEST(test_proof_file_refusals)
{
	struct example_log *log = calloc(1, sizeof(*log));
	ck_assert_ptr_nonnull(log);
	example_log_load(log);
	struct buffer note, bytes;
	buffer_init(&note);
	buffer_init(&bytes);
	checkpoint_note(log, &log->checkpoint_text, 1, 1, &note);
	const char *hash = "gSKyXoYZUgZ6jduWYrkDOARinOMGJveXjgMkBTcdPlQ=\n";

	/* The reference: it parses. */
	build(&bytes, "c2sp.org/tlog-proof@v1\nindex 7\n\n", &note, "");
	ck_assert_int_eq(parse_proof_rc(&bytes), 0);
	build(&bytes, "c2sp.org/tlog-proof@v1\nextra AA==\nindex 0\n", NULL, "");
	ck_assert_int_eq(buffer_append_string(&bytes, hash), 0);
	ck_assert_int_eq(buffer_append_string(&bytes, "\n"), 0);
	ck_assert_int_eq(buffer_append(&bytes, note.data, note.len), 0);
	ck_assert_int_eq(parse_proof_rc(&bytes), 0);

	static const char *const bad_heads[] = {
	    "c2sp.org/tlog-proof@v2\nindex 7\n\n",
	    "c2sp.org/tlog-proof\nindex 7\n\n",
	    "C2SP.org/tlog-proof@v1\nindex 7\n\n",
	    "c2sp.org/tlog-proof@v1 \nindex 7\n\n",
	    "\nc2sp.org/tlog-proof@v1\nindex 7\n\n",
	    "c2sp.org/tlog-proof@v1\r\nindex 7\n\n",
	    "c2sp.org/tlog-proof@v1\nindex 7\r\n\n",
	    "c2sp.org/tlog-proof@v1\n\n",                             /* no index */
	    "c2sp.org/tlog-proof@v1\nindex\n\n",                      /* no value */
	    "c2sp.org/tlog-proof@v1\nindex \n\n",                     /* empty value */
	    "c2sp.org/tlog-proof@v1\nindex 07\n\n",                   /* leading zero */
	    "c2sp.org/tlog-proof@v1\nindex +7\n\n",                   /* sign */
	    "c2sp.org/tlog-proof@v1\nindex  7\n\n",                   /* two spaces */
	    "c2sp.org/tlog-proof@v1\nindex 7 \n\n",                   /* trailing space */
	    "c2sp.org/tlog-proof@v1\nindex 18446744073709551616\n\n", /* 2^64 */
	    "c2sp.org/tlog-proof@v1\nIndex 7\n\n",
	    "c2sp.org/tlog-proof@v1\nindex 7\nextra AA==\n\n",             /* extra after the index */
	    "c2sp.org/tlog-proof@v1\nextra AA==\nextra AA==\nindex 7\n\n", /* two extras */
	    "c2sp.org/tlog-proof@v1\nextra \nindex 7\n\n",                 /* empty extra */
	    "c2sp.org/tlog-proof@v1\nextra\nindex 7\n\n",                  /* no extra value */
	    "c2sp.org/tlog-proof@v1\nextra AB==\nindex 7\n\n",             /* non-canonical base64 */
	    "c2sp.org/tlog-proof@v1\nextra AA\nindex 7\n\n",               /* unpadded */
	    "c2sp.org/tlog-proof@v1\nextra A-==\nindex 7\n\n",             /* URL alphabet */
	    "c2sp.org/tlog-proof@v1\nextra  AA==\nindex 7\n\n",
	    "c2sp.org/tlog-proof@v1\nindex 7\ngSKyXoYZUgZ6jduWYrkDOARinOMGJveXjgMkBTcdPl==\n\n", /* 31 bytes
	                                                                                          */
	    "c2sp.org/tlog-proof@v1\nindex 7\ngSKyXoYZUgZ6jduWYrkDOARinOMGJveXjgMkBTcdPlQ\n\n", /* unpadded */
	    "c2sp.org/tlog-proof@v1\nindex 7\ngSKyXoYZUgZ6jduWYrkDOARinOMGJveXjgMkBTcdPlR=\n\n", /* bits */
	    "c2sp.org/tlog-proof@v1\nindex 7\n gSKyXoYZUgZ6jduWYrkDOARinOMGJveXjgMkBTcdPlQ=\n\n",
	    "c2sp.org/tlog-proof@v1\nindex 7\ngSKyXoYZUgZ6jduWYrkDOARinOMGJveXjgMkBTcdPlQ=gSKy\n\n",
	    "c2sp.org/tlog-proof@v1\nindex 7\n\n\n", /* two blank lines */
	};
	for (size_t i = 0; i < sizeof(bad_heads) / sizeof(bad_heads[0]); i++) {
		build(&bytes, bad_heads[i], &note, "");
		ck_assert_msg(parse_proof_rc(&bytes) == DIRAUTH_ERR_SYNTAX, "accepted head %zu", i);
	}

	/* No blank line, no note, a note without signatures, trailing bytes, no final newline. */
	build(&bytes, "c2sp.org/tlog-proof@v1\nindex 7\n", &note, "");
	ck_assert_int_eq(parse_proof_rc(&bytes), DIRAUTH_ERR_SYNTAX);
	build(&bytes, "c2sp.org/tlog-proof@v1\nindex 7\n\n", NULL, "");
	ck_assert_int_eq(parse_proof_rc(&bytes), DIRAUTH_ERR_SYNTAX);
	build(&bytes, "c2sp.org/tlog-proof@v1\nindex 7\n", NULL, "");
	ck_assert_int_eq(parse_proof_rc(&bytes), DIRAUTH_ERR_SYNTAX);
	build(&bytes, "c2sp.org/tlog-proof@v1\nindex 7\n\n", &log->checkpoint_text, "");
	ck_assert_int_eq(parse_proof_rc(&bytes), DIRAUTH_ERR_SYNTAX);
	build(&bytes, "c2sp.org/tlog-proof@v1\nindex 7\n\n", &note, "\n");
	ck_assert_int_eq(parse_proof_rc(&bytes), DIRAUTH_ERR_SYNTAX);
	build(&bytes, "c2sp.org/tlog-proof@v1\nindex 7\n\n", &note, "garbage\n");
	ck_assert_int_eq(parse_proof_rc(&bytes), DIRAUTH_ERR_SYNTAX);
	build(&bytes, "c2sp.org/tlog-proof@v1\nindex 7\n\n", &note, "");
	bytes.len--;
	ck_assert_int_eq(parse_proof_rc(&bytes), DIRAUTH_ERR_SYNTAX);
	build(&bytes, "c2sp.org/tlog-proof@v1", NULL, "");
	ck_assert_int_eq(parse_proof_rc(&bytes), DIRAUTH_ERR_SYNTAX);
	build(&bytes, "", NULL, "");
	ck_assert_int_eq(parse_proof_rc(&bytes), DIRAUTH_ERR_SYNTAX);
	/* A note whose text is not a checkpoint. */
	struct buffer other_text, other_note;
	buffer_init(&other_text);
	buffer_init(&other_note);
	ck_assert_int_eq(buffer_append_string(&other_text, "dirauth snapshot v1\n"), 0);
	checkpoint_note(log, &other_text, 1, 0, &other_note);
	build(&bytes, "c2sp.org/tlog-proof@v1\nindex 7\n\n", &other_note, "");
	ck_assert_int_eq(parse_proof_rc(&bytes), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(tlog_proof_encode(7, NULL, 0, NULL, 0, other_note.data, other_note.len, &bytes),
	                 DIRAUTH_ERR_SYNTAX);
	buffer_free(&other_text);
	buffer_free(&other_note);

	/* Bounds: 64 hashes pass, 65 do not; an extra at the bound passes, one byte more does not;
	 * a file over 256 KiB is refused before it is read. */
	buffer_reset(&bytes);
	ck_assert_int_eq(buffer_append_string(&bytes, "c2sp.org/tlog-proof@v1\nindex 7\n"), 0);
	for (int i = 0; i < MERKLE_MAX_PROOF; i++)
		ck_assert_int_eq(buffer_append_string(&bytes, hash), 0);
	size_t head = bytes.len;
	ck_assert_int_eq(buffer_append_string(&bytes, "\n"), 0);
	ck_assert_int_eq(buffer_append(&bytes, note.data, note.len), 0);
	ck_assert_int_eq(parse_proof_rc(&bytes), 0);
	buffer_truncate(&bytes, head);
	ck_assert_int_eq(buffer_append_string(&bytes, hash), 0);
	ck_assert_int_eq(buffer_append_string(&bytes, "\n"), 0);
	ck_assert_int_eq(buffer_append(&bytes, note.data, note.len), 0);
	ck_assert_int_eq(parse_proof_rc(&bytes), DIRAUTH_ERR_BOUNDS);

	uint8_t *big = calloc(1, TLOG_PROOF_EXTRA_MAX + 3);
	ck_assert_ptr_nonnull(big);
	buffer_reset(&bytes);
	ck_assert_int_eq(
	    tlog_proof_encode(7, NULL, 0, big, TLOG_PROOF_EXTRA_MAX, note.data, note.len, &bytes), 0);
	struct tlog_proof *proof = NULL;
	ck_assert_int_eq(tlog_proof_parse(bytes.data, bytes.len, &proof), 0);
	ck_assert_uint_eq(proof->extra_len, TLOG_PROOF_EXTRA_MAX);
	tlog_proof_free(proof);
	ck_assert_int_eq(
	    tlog_proof_encode(7, NULL, 0, big, TLOG_PROOF_EXTRA_MAX + 1, note.data, note.len, &bytes),
	    DIRAUTH_ERR_BOUNDS);
	{
		size_t text_len = base64_encoded_length(TLOG_PROOF_EXTRA_MAX + 3);
		char *text = malloc(text_len + 1);
		ck_assert_ptr_nonnull(text);
		base64_encode(big, TLOG_PROOF_EXTRA_MAX + 3, text);
		buffer_reset(&bytes);
		ck_assert_int_eq(
		    buffer_appendf(&bytes, "c2sp.org/tlog-proof@v1\nextra %s\nindex 7\n\n", text), 0);
		ck_assert_int_eq(buffer_append(&bytes, note.data, note.len), 0);
		ck_assert_int_eq(parse_proof_rc(&bytes), DIRAUTH_ERR_BOUNDS);
		free(text);
	}
	free(big);
	buffer_reset(&bytes);
	ck_assert_int_eq(buffer_reserve(&bytes, TLOG_PROOF_MAX_BYTES + 1), 0);
	memset(bytes.data, 'a', TLOG_PROOF_MAX_BYTES + 1);
	bytes.len = TLOG_PROOF_MAX_BYTES + 1;
	ck_assert_int_eq(parse_proof_rc(&bytes), DIRAUTH_ERR_BOUNDS);

	/* Encoder refusals. */
	merkle_hash path[MERKLE_MAX_PROOF + 1];
	memset(path, 0, sizeof(path));
	buffer_reset(&bytes);
	ck_assert_int_eq(
	    tlog_proof_encode(7, path, MERKLE_MAX_PROOF + 1, NULL, 0, note.data, note.len, &bytes),
	    DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(tlog_proof_encode(7, path, 1, (const uint8_t *)"", 0, note.data, note.len, &bytes),
	                 DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(tlog_proof_encode(7, path, 1, NULL, 5, note.data, note.len, &bytes),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(tlog_proof_encode(7, path, 1, NULL, 0, note.data, note.len - 1, &bytes),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_uint_eq(bytes.len, 0);

	/* The spec's example, with its signature lines (elided in the spec) replaced by real ones of
	 * an example key for example.com/fancylog: the head parses as the spec says. The proof is
	 * illustrative (5 hashes for a tree of 109,482, which needs 17), so it does not verify. */
	struct test_key fancy;
	uint8_t seed[32];
	for (int i = 0; i < 32; i++)
		seed[i] = (uint8_t)(0x70 + i);
	test_key_from_seed(seed, "example.com/fancylog", &fancy);
	struct buffer spec_text, spec_note;
	buffer_init(&spec_text);
	buffer_init(&spec_note);
	ck_assert_int_eq(
	    buffer_append_string(
	        &spec_text, "example.com/fancylog\n109482\nsFodV/vSp5O8n9a8QpW6PRY97tfOSW5bsc2Xl/EQi08=\n"),
	    0);
	test_key_sign_note(&fancy, 1, spec_text.data, spec_text.len, &spec_note);
	build(&bytes,
	      "c2sp.org/tlog-proof@v1\n"
	      "extra YWdlLXYxLjIuMS1kYXJ3aW4tYXJtNjQudGFyLmd6kYXJ3aW4tYXJ\n"
	      "index 73894\n"
	      "gSKyXoYZUgZ6jduWYrkDOARinOMGJveXjgMkBTcdPlQ=\n"
	      "B95lDa8R83lS8n0eG+o0buTxRKQTYFi//1U8anccXmA=\n"
	      "EKNzoDWG8LGC0Yp9o+sv3qllpMP9uHQ9B20KNL+Q1zs=\n"
	      "RoopEkOdqkYqMB4MJXrbt/hMjOxsVn0IrWjpz1ZMMes=\n"
	      "AHCioX9nLjsrse6YhjRRmk1WUEirVOLLRoOQ6vfO5vk=\n"
	      "\n",
	      &spec_note, "");
	ck_assert_int_eq(tlog_proof_parse(bytes.data, bytes.len, &proof), 0);
	ck_assert_uint_eq(proof->index, 73894);
	ck_assert_uint_eq(proof->path_len, 5);
	ck_assert_uint_eq(proof->checkpoint.tree_size, 109482);
	ck_assert_str_eq(proof->checkpoint.origin, "example.com/fancylog");
	ck_assert_uint_eq(proof->extra_len, 39);
	ck_assert(memcmp(proof->extra, "age-v1.2.1-darwin-arm64.tar.gz", 30) == 0);
	merkle_hash leaf = {0};
	ck_assert_int_eq(tlog_proof_verify_leaf_hash(proof, leaf), DIRAUTH_ERR_PROOF);
	struct tlog_policy policy = {"example.com/fancylog", &fancy.verifier, NULL, 0, 0};
	ck_assert_int_eq(tlog_checkpoint_verify(proof->note, &policy, &proof->checkpoint, NULL, NULL), 0);
	tlog_proof_free(proof);
	test_key_free(&fancy);
	buffer_free(&spec_text);
	buffer_free(&spec_note);

	buffer_free(&bytes);
	buffer_free(&note);
	example_log_free(log);
	free(log);
}
END_TEST

static Suite *tlog_suite(void)
{
	Suite *s = suite_create("tlog");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_path_encoding);
	tcase_add_test(tc, test_path_refusals);
	tcase_add_test(tc, test_tile_coordinates);
	tcase_add_test(tc, test_tile_hash);
	tcase_add_test(tc, test_appender_records);
	tcase_add_test(tc, test_appender_largest_trees);
	tcase_add_test(tc, test_rfc6962_reference_tree);
	tcase_add_test(tc, test_vectors_from_stored_hashes);
	tcase_add_test(tc, test_proofs_agree_with_merkle_small_trees);
	tcase_add_test(tc, test_proofs_agree_with_merkle_random_midsize);
	tcase_add_test(tc, test_tiles_rebuild_root_at_boundaries);
	tcase_add_test(tc, test_partial_tiles_every_width);
	tcase_add_test(tc, test_large_tree_random_proofs);
	tcase_add_test(tc, test_bundles);
	tcase_add_test(tc, test_checkpoint_policy);
	tcase_add_test(tc, test_proof_files);
	tcase_add_test(tc, test_proof_file_refusals);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *runner = srunner_create(tlog_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
