/*
 * fuzz_notes_request.c: notes_request_parse() on arbitrary bytes: what it accepts holds 1 to
 * NOTES_REQUEST_MAX_ITEMS valid items and re-encodes to exactly the input.
 */
#include "schema/notes_bundle.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct notes_item *items = NULL;
	size_t count = 0;
	if (notes_request_parse(data, size, &items, &count) != 0) {
		if (items || count)
			abort();
		return 0;
	}
	if (count == 0 || count > NOTES_REQUEST_MAX_ITEMS || size > notes_request_max_bytes())
		abort();
	for (size_t i = 0; i < count; i++)
		if (items[i].kind == NOTES_ITEM_REGISTRATION && items[i].sequence == 0)
			abort();
	struct buffer out;
	buffer_init(&out);
	if (notes_request_encode(items, count, &out) != 0 || out.len != size ||
	    memcmp(out.data, data, size) != 0)
		abort();
	buffer_free(&out);
	free(items);
	return 0;
}
