/*
 * fuzz_note.c: libFuzzer target for the signed-note parser and verifier.
 *
 * Every signed document reaches the project through note_parse, so it must survive any bytes.
 * Parsed notes are also verified against a fixed known key (the C2SP example key), so that the
 * matching, counting and signature paths run on hostile signatures too, and formatted back to
 * check that what the parser accepts the formatter can write.
 */
#include "base/buffer.h"
#include "schema/note.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char known_key[] = "example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct note_verifier keys[2];
	if (note_verifier_parse(known_key, strlen(known_key), &keys[0]) != 0)
		abort();
	keys[1] = keys[0]; /* a repeated verifier must never count twice */

	struct note *note = NULL;
	if (note_parse(data, size, &note) != 0)
		return 0;
	uint8_t verified[2];
	size_t count = 0;
	if (note_verify(note, keys, 2, verified, &count) == 0 && count > 1)
		abort();
	(void)note_verify_threshold(note, keys, 2, 1);

	struct buffer out;
	buffer_init(&out);
	if (note_format(note->text, note->text_len, note->signatures, note->signature_count, &out) != 0)
		abort();
	if (out.len != size || memcmp(out.data, data, size) != 0)
		abort(); /* one spelling per note: a parsed note formats back to its own bytes */
	buffer_free(&out);
	note_free(note);
	return 0;
}
