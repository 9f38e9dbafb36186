/*
 * fuzz_tlog_bundle.c: tlog_bundle_parse() on arbitrary bytes, at the width the first byte names
 * (1..256). A bundle it accepts must be re-encoded byte for byte from the entries it returns, and
 * every entry must lie inside the input.
 */
#include "base/error.h"
#include "tlog/bundle.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	size_t width = (size_t)data[0] + 1;
	const uint8_t *bytes = data + 1;
	size_t len = size - 1;
	static struct tlog_entry entries[TLOG_BUNDLE_MAX_ENTRIES];
	int rc = tlog_bundle_parse(bytes, len, width, entries);
	if (rc != 0) {
		if (rc != DIRAUTH_ERR_SYNTAX && rc != DIRAUTH_ERR_BOUNDS)
			abort();
		return 0;
	}
	for (size_t i = 0; i < width; i++) {
		if (entries[i].len > TLOG_ENTRY_MAX || entries[i].data < bytes ||
		    entries[i].len > (size_t)(bytes + len - entries[i].data))
			abort();
	}
	struct buffer out;
	buffer_init(&out);
	if (tlog_bundle_encode(entries, width, &out) != 0 || out.len != len ||
	    (len > 0 && memcmp(out.data, bytes, len) != 0))
		abort();
	buffer_free(&out);
	return 0;
}
