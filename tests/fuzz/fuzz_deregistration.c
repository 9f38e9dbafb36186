/*
 * fuzz_deregistration.c: deregistration_parse() and deregistration_parse_signed() on arbitrary
 * bytes. Whatever is accepted must be canonical: its re-encoding is the input text, byte for byte.
 */
#include "schema/deregistration.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_canonical(const struct deregistration *d, const uint8_t *text, size_t len)
{
	struct buffer out;
	buffer_init(&out);
	if (deregistration_encode(d, &out) != 0 || out.len != len || memcmp(out.data, text, len) != 0)
		abort();
	buffer_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct deregistration d;
	if (deregistration_parse(data, size, &d) == 0)
		check_canonical(&d, data, size);
	struct note *note = NULL;
	if (deregistration_parse_signed(data, size, &d, &note) == 0) {
		check_canonical(&d, note->text, note->text_len);
		note_free(note);
	} else if (note) {
		abort();
	}
	return 0;
}
