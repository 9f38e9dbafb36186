/*
 * fuzz_vote_body.c: vote_body_parse() on arbitrary bytes, under a small and a large record
 * bound. What it accepts must re-encode to the same bytes and stay within its bounds.
 */
#include "schema/vote_body.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_bound(const uint8_t *data, size_t size, size_t max_records)
{
	struct vote_body *body = NULL;
	if (vote_body_parse(data, size, max_records, &body) != 0) {
		if (body)
			abort();
		return;
	}
	if (body->record_count > max_records || size > vote_body_max_bytes(max_records))
		abort();
	struct buffer out;
	buffer_init(&out);
	if (vote_body_encode(body, &out) != 0 || out.len != size || memcmp(out.data, data, size) != 0)
		abort();
	buffer_free(&out);
	vote_body_free(body);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_bound(data, size, 3);
	check_bound(data, size, 1000000);
	return 0;
}
