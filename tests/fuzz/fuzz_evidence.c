/*
 * fuzz_evidence.c: evidence_parse() on arbitrary bytes: every accepted part lies inside the
 * input, and an accepted file re-encodes to exactly the input (one spelling per file).
 */
#include "schema/evidence.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_inside(const struct evidence_part *part, const uint8_t *data, size_t size)
{
	if (part->len > 0 && (part->data < data || part->data + part->len > data + size))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct evidence *e = malloc(sizeof *e);
	if (e == NULL)
		return 0;
	if (evidence_parse(data, size, e) == 0) {
		check_inside(&e->statements[0], data, size);
		check_inside(&e->statements[1], data, size);
		check_inside(&e->consistency, data, size);
		for (size_t i = 0; i < e->certificate_count; i++)
			check_inside(&e->certificates[i], data, size);
		struct buffer out;
		buffer_init(&out);
		if (evidence_encode(e, &out) != 0 || out.len != size || memcmp(out.data, data, size) != 0)
			abort();
		buffer_free(&out);
	}
	free(e);
	return 0;
}
