/*
 * fuzz_snapshot_header.c: snapshot_header_parse() on arbitrary bytes; what it accepts must
 * re-encode to the same bytes.
 */
#include "schema/snapshot.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct snapshot_header h;
	if (snapshot_header_parse(data, size, &h) != 0)
		return 0;
	struct buffer out;
	buffer_init(&out);
	if (snapshot_header_encode(&h, &out) != 0 || out.len != size || memcmp(out.data, data, size) != 0)
		abort();
	buffer_free(&out);
	return 0;
}
