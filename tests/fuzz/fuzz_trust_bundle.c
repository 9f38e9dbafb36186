/*
 * fuzz_trust_bundle.c: trust_bundle_parse_explained() on arbitrary bytes.
 *
 * A bundle is written by people and has many spellings, so the property is that the canonical
 * form of an accepted bundle parses back to the same bundle and encodes to the same bytes; and
 * that a refusal always names a line and says, in a terminated string, what is wrong with it.
 */
#include "base/error.h"
#include "schema/trust_bundle.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct trust_bundle bundle, again;
	char why[TRUST_BUNDLE_WHY_MAX];
	size_t line;
	int rc = trust_bundle_parse_explained(data, size, &bundle, &line, why, sizeof(why));
	if (rc != 0) {
		if (why[0] == '\0' || strnlen(why, sizeof(why)) == sizeof(why) ||
		    (line == 0 && rc != DIRAUTH_ERR_NOMEM && size <= TRUST_BUNDLE_MAX_BYTES))
			abort();
		return 0;
	}
	struct buffer first, second;
	buffer_init(&first);
	buffer_init(&second);
	if (trust_bundle_encode(&bundle, &first) != 0 ||
	    trust_bundle_parse(first.data, first.len, &again, NULL) != 0 ||
	    memcmp(&bundle, &again, sizeof(bundle)) != 0 || trust_bundle_encode(&again, &second) != 0 ||
	    first.len != second.len || memcmp(first.data, second.data, first.len) != 0)
		abort();
	buffer_free(&first);
	buffer_free(&second);
	if (!trust_bundle_namespace(&bundle, bundle.namespaces[0].name))
		abort();
	return 0;
}
