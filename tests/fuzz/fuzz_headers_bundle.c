/*
 * fuzz_headers_bundle.c: headers_bundle_parse() on arbitrary bytes, from a few epochs: what it
 * accepts has its headers inside the input, ascending within [from, through], through = latest or
 * the last header's epoch, within the bounds, and a writer writes exactly the input again.
 */
#include "schema/headers_bundle.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_from(const uint8_t *data, size_t size, uint64_t from, size_t max_note)
{
	struct headers_bundle bundle;
	if (headers_bundle_parse(data, size, from, max_note, &bundle) != 0) {
		if (bundle.items || bundle.count || bundle.latest || bundle.through)
			abort();
		return;
	}
	if (bundle.count > HEADERS_BUNDLE_MAX_COUNT || size > HEADERS_BUNDLE_MAX_BYTES ||
	    bundle.through > bundle.latest ||
	    (bundle.through != bundle.latest &&
	     (bundle.count == 0 || bundle.items[bundle.count - 1].epoch != bundle.through)))
		abort();
	struct headers_bundle_writer writer;
	struct buffer out;
	buffer_init(&out);
	if (headers_bundle_begin(&writer, &out, from, bundle.latest) != 0)
		abort();
	for (size_t i = 0; i < bundle.count; i++) {
		const struct headers_bundle_item *item = &bundle.items[i];
		if (item->epoch < from || item->epoch > bundle.through ||
		    (i > 0 && item->epoch <= bundle.items[i - 1].epoch) || item->len == 0 ||
		    item->len > max_note || item->note < data || item->note + item->len > data + size)
			abort();
		if (headers_bundle_add(&writer, item->epoch, item->note, item->len,
		                       HEADERS_BUNDLE_MAX_BYTES) != 0)
			abort();
	}
	if (headers_bundle_end(&writer, bundle.through) != 0 || out.len != size ||
	    memcmp(out.data, data, size) != 0)
		abort();
	buffer_free(&out);
	headers_bundle_clear(&bundle);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_from(data, size, 0, 64);
	check_from(data, size, 3, 64 * 1024);
	check_from(data, size, UINT64_MAX, 64 * 1024);
	return 0;
}
