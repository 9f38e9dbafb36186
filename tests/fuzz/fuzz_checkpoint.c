/*
 * fuzz_checkpoint.c: checkpoint_parse() on arbitrary bytes (what it accepts must re-encode to
 * the same bytes), and the same bytes as a signed note whose cosignatures are checked: once
 * against a fixed cosigner key, and once against that key under the name and key id of the
 * note's first signature line, so that the timestamp and signature checks run on hostile lines.
 * Nobody can forge the fixed key, so no cosignature may ever verify.
 */
#include "schema/checkpoint.h"
#include "base/error.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t fixed_key[32] = {0x3b, 0x6a, 0x27, 0xbc, 0xce, 0xb6, 0xa4, 0x2d, 0x62, 0xa3, 0xa8,
                                      0xd0, 0x2a, 0x6f, 0x0d, 0x73, 0x65, 0x32, 0x15, 0x77, 0x1d, 0xe2,
                                      0x43, 0xa6, 0x3a, 0xc0, 0x48, 0xa1, 0x8b, 0x59, 0xda, 0x29};

static void check_text(const uint8_t *data, size_t size)
{
	struct checkpoint c;
	if (checkpoint_parse(data, size, &c) != 0)
		return;
	struct buffer out;
	buffer_init(&out);
	if (checkpoint_encode(&c, &out) != 0 || out.len != size || memcmp(out.data, data, size) != 0)
		abort();
	buffer_free(&out);
}

static void check_note(const uint8_t *data, size_t size)
{
	struct note *note = NULL;
	if (size > CHECKPOINT_MAX_BYTES * 2 || note_parse(data, size, &note) != 0)
		return;
	struct checkpoint c;
	(void)checkpoint_parse(note->text, note->text_len, &c);
	struct note_verifier cosigner;
	uint64_t timestamp = 0;
	if (cosignature_verifier_from_ed25519("witness.example/w1", fixed_key, &cosigner) != 0)
		abort();
	if (cosignature_verify(note, &cosigner, &timestamp) == 0)
		abort();
	if (note->signature_count > 0) {
		memcpy(cosigner.name, note->signatures[0].name, sizeof(cosigner.name));
		cosigner.key_id = note->signatures[0].key_id;
		if (cosignature_verify(note, &cosigner, &timestamp) == 0)
			abort();
	}
	note_free(note);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_text(data, size);
	check_note(data, size);
	return 0;
}
