/*
 * fuzz_tlog_path.c: tlog_tile_path_parse() on arbitrary bytes. A path it accepts must be written
 * back byte for byte by tlog_tile_path_format() (one spelling per tile), and the coordinates it
 * returns must be valid and answer tlog_tile_check() and tlog_tile_is_of_tree() without
 * overflowing, for trees of a few sizes including the largest.
 */
#include "base/error.h"
#include "tlog/tile.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tlog_tile tile;
	if (tlog_tile_path_parse((const char *)data, size, &tile) != 0)
		return 0;
	char path[TLOG_TILE_PATH_MAX + 1];
	if (!tlog_tile_is_valid(&tile) || tlog_tile_path_format(&tile, path) != 0)
		abort();
	if (strlen(path) != size || memcmp(path, data, size) != 0)
		abort();
	static const uint64_t sizes[] = {0, 1, 255, 256, 65536, 70000, UINT64_MAX};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		int rc = tlog_tile_check(&tile, sizes[i]);
		if (rc != 0 && rc != DIRAUTH_ERR_NOT_FOUND)
			abort();
		/* A tile of the tree is always inside it. */
		if (tlog_tile_is_of_tree(&tile, sizes[i]) && rc != 0)
			abort();
	}
	return 0;
}
