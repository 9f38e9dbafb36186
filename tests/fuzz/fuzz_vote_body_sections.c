/*
 * fuzz_vote_body_sections.c: vote_body_parse_sections() on arbitrary bytes, under small and large
 * bounds. What it accepts must re-encode to the same bytes and stay within its bounds; what the
 * method-1 parser accepts it must accept with the same records and no sections.
 */
#include "schema/vote_body.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_bound(const uint8_t *data, size_t size, const struct vote_body_limits *limits)
{
	struct vote_body *body = NULL;
	if (vote_body_parse_sections(data, size, limits, &body) != 0) {
		if (body)
			abort();
		return;
	}
	if (body->record_count > limits->max_records || body->health_count > limits->max_health ||
	    body->revocation_count > limits->max_revocations || size > vote_body_sections_max_bytes(limits))
		abort();
	struct buffer out;
	buffer_init(&out);
	if (vote_body_encode(body, &out) != 0 || out.len != size || memcmp(out.data, data, size) != 0)
		abort();
	buffer_free(&out);
	struct vote_body *plain = NULL;
	if (vote_body_parse(data, size, limits->max_records, &plain) == 0) {
		if (body->health_count || body->revocation_count ||
		    plain->record_count != body->record_count ||
		    (plain->record_count && memcmp(plain->records, body->records,
		                                   plain->record_count * sizeof(*plain->records)) != 0))
			abort();
		vote_body_free(plain);
	}
	vote_body_free(body);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct vote_body_limits small = {3, 3, 3}, large = {1000000, 32000000, 100000};
	check_bound(data, size, &small);
	check_bound(data, size, &large);
	return 0;
}
