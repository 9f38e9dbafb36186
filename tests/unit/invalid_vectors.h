/*
 * invalid_vectors.h: the refusal vectors of a document codec, for the tests of the documents that
 * ship them (check_health, check_revocation, check_receipt, check_snapshot, check_deregistration).
 *
 * Each case is one edit of the valid text (the first from replaced by to) that the parser must
 * refuse with the expected error. The edited text is also checked in under the document's
 * vectors, where another implementation can test itself against it: the edit must make exactly
 * that file, and the file is what is parsed. Like canned_http.h, a header of static functions,
 * because the build links only the support sources into the unit tests; everything aborts the
 * test on failure.
 */
#ifndef DIRAUTH_TEST_INVALID_VECTORS_H
#define DIRAUTH_TEST_INVALID_VECTORS_H

#include "base/buffer.h"
#include "test_keys.h"
#include "test_support.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

struct invalid_case {
	const char *name;
	const char *from;
	const char *to;
	int expected;
};

/* For each of cases[0..count): the edit of valid equals the vector <folder><name>.txt (folder
 * relative to the source tree, ending in '/'), and parse refuses that file with the case's
 * expected error. */
__attribute__((unused)) static void invalid_vectors_check(const char *folder, const struct buffer *valid,
                                                          const struct invalid_case *cases, size_t count,
                                                          int (*parse)(const uint8_t *text, size_t len))
{
	for (size_t i = 0; i < count; i++) {
		const struct invalid_case *c = &cases[i];
		char relative[256];
		snprintf(relative, sizeof(relative), "%s%s.txt", folder, c->name);
		struct buffer variant;
		buffer_init(&variant);
		test_text_replace(valid->data, valid->len, c->from, c->to, &variant);
		test_vector_expect(relative, variant.data, variant.len);
		size_t len;
		uint8_t *file = test_read_file(test_source_path(relative), &len);
		int rc = parse(file, len);
		ck_assert_msg(rc == c->expected, "%s: got %d, expected %d", relative, rc, c->expected);
		free(file);
		buffer_free(&variant);
	}
}

#endif
