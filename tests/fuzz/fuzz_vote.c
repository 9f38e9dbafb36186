/*
 * fuzz_vote.c: vote_parse() on arbitrary bytes; what it accepts must re-encode to the same
 * bytes.
 */
#include "schema/vote.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vote v;
	if (vote_parse(data, size, &v) != 0)
		return 0;
	struct buffer out;
	buffer_init(&out);
	if (vote_encode(&v, &out) != 0 || out.len != size || memcmp(out.data, data, size) != 0)
		abort();
	buffer_free(&out);
	return 0;
}
