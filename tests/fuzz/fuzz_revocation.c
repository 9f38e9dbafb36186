/*
 * fuzz_revocation.c: revocation_parse() and revocation_parse_signed() on arbitrary bytes.
 *
 * Whatever is accepted must be canonical: its re-encoding is the input text, byte for byte.
 * Anything else aborts, so the fuzzer reports it.
 */
#include "schema/revocation.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_canonical(const struct revocation *r, const uint8_t *text, size_t len)
{
	struct buffer out;
	buffer_init(&out);
	if (revocation_encode(r, &out) != 0 || out.len != len || memcmp(out.data, text, len) != 0)
		abort();
	buffer_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct revocation r;
	if (revocation_parse(data, size, &r) == 0)
		check_canonical(&r, data, size);
	struct note *note = NULL;
	if (revocation_parse_signed(data, size, &r, &note) == 0) {
		if (!note || note->signature_count != 1)
			abort();
		check_canonical(&r, note->text, note->text_len);
		note_free(note);
	} else if (note) {
		abort();
	}
	return 0;
}
