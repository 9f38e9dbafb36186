/*
 * fuzz_registration.c: registration_parse() and registration_parse_signed() on arbitrary bytes.
 *
 * Besides not crashing, whatever is accepted must be canonical: its re-encoding is the input
 * text, byte for byte. Anything else aborts, so the fuzzer reports it.
 */
#include "schema/registration.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_canonical(const struct registration *r, const uint8_t *text, size_t len)
{
	struct buffer out;
	buffer_init(&out);
	if (registration_encode(r, &out) != 0 || out.len != len || memcmp(out.data, text, len) != 0)
		abort();
	buffer_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct registration r;
	if (registration_parse(data, size, &r) == 0) {
		check_canonical(&r, data, size);
		registration_clear(&r);
	}
	struct note *note = NULL;
	if (registration_parse_signed(data, size, &r, &note) == 0) {
		check_canonical(&r, note->text, note->text_len);
		registration_clear(&r);
		note_free(note);
	}
	return 0;
}
