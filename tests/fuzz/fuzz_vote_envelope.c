/*
 * fuzz_vote_envelope.c: vote_envelope_parse() on arbitrary bytes: accepted parts lie inside the
 * input and re-encode, by the encoder of the version read (v1 body, v2 delta), to exactly the
 * input.
 */
#include "schema/vote_envelope.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vote_envelope e;
	if (vote_envelope_parse(data, size, 1 << 20, &e) != 0)
		return 0;
	if (e.note < data || e.note + e.note_len > data + size || e.body < data ||
	    e.body + e.body_len > data + size)
		abort();
	struct buffer out;
	buffer_init(&out);
	int rc = e.delta ? vote_envelope_encode_delta(e.note, e.note_len, e.body, e.body_len, &out)
	                 : vote_envelope_encode(e.note, e.note_len, e.body, e.body_len, &out);
	if (rc != 0 || out.len != size || memcmp(out.data, data, size) != 0)
		abort();
	buffer_free(&out);
	return 0;
}
