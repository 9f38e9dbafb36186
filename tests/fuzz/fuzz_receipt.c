/*
 * fuzz_receipt.c: receipt_parse() on arbitrary bytes; what it accepts must re-encode to the
 * same bytes.
 */
#include "schema/receipt.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct receipt r;
	if (receipt_parse(data, size, &r) != 0)
		return 0;
	struct buffer out;
	buffer_init(&out);
	if (receipt_encode(&r, &out) != 0 || out.len != size || memcmp(out.data, data, size) != 0)
		abort();
	buffer_free(&out);
	return 0;
}
