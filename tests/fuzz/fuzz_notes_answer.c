/*
 * fuzz_notes_answer.c: notes_answer_parse() on arbitrary bytes, for requests of a few items and
 * of the most: what it accepts has its notes inside the input, in ascending order below covered,
 * within the bounds, and a writer writes exactly the input again from them.
 */
#include "schema/notes_bundle.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_request(const uint8_t *data, size_t size, size_t request_count, size_t max_note)
{
	struct notes_answer_note *notes = NULL;
	size_t count = 0, covered = 0;
	if (notes_answer_parse(data, size, request_count, max_note, &notes, &count, &covered) != 0) {
		if (notes || count || covered)
			abort();
		return;
	}
	if (covered > request_count || count > covered || size > NOTES_ANSWER_MAX_BYTES)
		abort();
	struct notes_answer_writer writer;
	struct buffer out;
	buffer_init(&out);
	if (notes_answer_begin(&writer, &out, request_count) != 0)
		abort();
	for (size_t i = 0; i < count; i++) {
		const struct notes_answer_note *note = &notes[i];
		if (note->index >= covered || (i > 0 && note->index <= notes[i - 1].index) ||
		    note->len == 0 || note->len > max_note || note->note < data ||
		    note->note + note->len > data + size)
			abort();
		if (notes_answer_add(&writer, note->index, note->note, note->len, NOTES_ANSWER_MAX_BYTES) !=
		    0)
			abort();
	}
	if (notes_answer_end(&writer, covered) != 0 || out.len != size || memcmp(out.data, data, size) != 0)
		abort();
	buffer_free(&out);
	free(notes);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_request(data, size, 3, 64);
	check_request(data, size, NOTES_REQUEST_MAX_ITEMS, 64 * 1024);
	return 0;
}
