/*
 * fuzz_deregistration_receipt.c: deregistration_receipt_parse() on arbitrary bytes; what it
 * accepts must re-encode to the same bytes.
 */
#include "schema/deregistration_receipt.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct deregistration_receipt r;
	if (deregistration_receipt_parse(data, size, &r) != 0)
		return 0;
	struct buffer out;
	buffer_init(&out);
	if (deregistration_receipt_encode(&r, &out) != 0 || out.len != size ||
	    memcmp(out.data, data, size) != 0)
		abort();
	buffer_free(&out);
	return 0;
}
