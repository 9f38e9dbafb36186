/*
 * fuzz_certificate.c: certificate_parse_signed() and certificate_bundle_parse() on arbitrary
 * bytes. A certificate that parses must re-encode to its note's text; a bundle that parses must
 * re-encode to the same bytes, and every entry must lie inside the input.
 */
#include "schema/certificate.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_certificate(const uint8_t *data, size_t size)
{
	struct certificate c;
	if (certificate_parse_signed(data, size, &c) != 0)
		return;
	struct note *note = NULL;
	if (note_parse(data, size, &note) != 0)
		abort();
	struct buffer out;
	buffer_init(&out);
	if (certificate_encode(&c, &out) != 0 || out.len != note->text_len ||
	    memcmp(out.data, note->text, out.len) != 0)
		abort();
	buffer_free(&out);
	note_free(note);
}

static void check_bundle(const uint8_t *data, size_t size)
{
	static struct certificate_bundle_entry entries[CERTIFICATE_BUNDLE_MAX];
	const uint8_t *notes[CERTIFICATE_BUNDLE_MAX];
	size_t lengths[CERTIFICATE_BUNDLE_MAX];
	size_t count = 0;
	if (certificate_bundle_parse(data, size, entries, &count) != 0)
		return;
	if (count > CERTIFICATE_BUNDLE_MAX)
		abort();
	for (size_t i = 0; i < count; i++) {
		if (entries[i].note < data || entries[i].note_len > size ||
		    (size_t)(entries[i].note - data) > size - entries[i].note_len)
			abort();
		notes[i] = entries[i].note;
		lengths[i] = entries[i].note_len;
	}
	struct buffer out;
	buffer_init(&out);
	if (certificate_bundle_encode(notes, lengths, count, &out) != 0 || out.len != size ||
	    memcmp(out.data, data, size) != 0)
		abort();
	buffer_free(&out);
	/* Each entry is then what a keyring would try. */
	for (size_t i = 0; i < count; i++)
		check_certificate(entries[i].note, entries[i].note_len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_certificate(data, size);
	check_bundle(data, size);
	return 0;
}
