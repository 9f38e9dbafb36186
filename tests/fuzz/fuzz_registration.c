/*
 * fuzz_registration.c: registration_parse(), registration_parse_signed() and
 * registration_note_sequence() on arbitrary bytes.
 *
 * Besides not crashing, whatever is accepted must be canonical: its re-encoding is the input
 * text, byte for byte; and a text that parses whole has the sequence its first lines give.
 * Anything else aborts, so the fuzzer reports it.
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
	uint64_t sequence = 0;
	int sequence_rc = registration_note_sequence(data, size, &sequence);
	if (registration_parse(data, size, &r) == 0) {
		check_canonical(&r, data, size);
		if (sequence_rc != 0 || sequence != r.sequence)
			abort();
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
