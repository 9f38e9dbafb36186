/*
 * fuzz_router.c: router_match_path() on arbitrary paths against patterns of every shape the API
 * uses; every capture must lie inside the path, and a literal-only pattern matches only itself.
 */
#include "server/http/router.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const patterns[] = {
	    "/v1/registrations",
	    "/v1/{namespace}/snapshots/latest",
	    "/v1/{namespace}/snapshots/{epoch}",
	    "/v1/{namespace}/snapshots/{epoch}/body",
	    "/v1/{namespace}/log/tile/{...}",
	    "/{a}/{b}/{c}/{d}/{e}",
	};
	const char *path = (const char *)data;
	for (size_t i = 0; i < sizeof patterns / sizeof patterns[0]; i++) {
		struct router_match m;
		if (!router_match_path(patterns[i], path, size, &m))
			continue;
		if (m.count > ROUTER_MAX_CAPTURES)
			abort();
		for (size_t c = 0; c < m.count; c++)
			if (m.captures[c].data < path || m.captures[c].data + m.captures[c].len > path + size)
				abort();
		if (i == 0 && (size != strlen(patterns[0]) || memcmp(path, patterns[0], size) != 0))
			abort();
	}
	return 0;
}
