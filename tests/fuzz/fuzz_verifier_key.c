/*
 * fuzz_verifier_key.c: libFuzzer target for verifier-key strings.
 *
 * Verifier keys arrive in configuration, trust bundles and registration provider lines. Any
 * string the parser accepts must format back to exactly itself and parse again to the same key:
 * a key with two spellings would let one provider appear as two.
 */
#include "schema/note.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct note_verifier verifier;
	if (note_verifier_parse((const char *)data, size, &verifier) != 0)
		return 0;
	char text[NOTE_VERIFIER_KEY_MAX + 1];
	note_verifier_format(&verifier, text);
	size_t len = strlen(text);
	if (len != size || memcmp(text, data, size) != 0)
		abort();
	struct note_verifier again;
	if (note_verifier_parse(text, len, &again) != 0)
		abort();
	if (strcmp(again.name, verifier.name) != 0 || again.key_id != verifier.key_id ||
	    again.type != verifier.type || memcmp(again.public_key, verifier.public_key, 32) != 0)
		abort();
	return 0;
}
