/*
 * fuzz_tlog_consistency.c: tlog_consistency_parse() on arbitrary bytes. A text it accepts must be
 * re-encoded byte for byte from the hashes it returns; a refusal is a syntax or bounds error and
 * leaves no hash counted.
 */
#include "base/error.h"
#include "tlog/consistency.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static merkle_hash proof[MERKLE_MAX_PROOF];
	size_t len = 0;
	int rc = tlog_consistency_parse(data, size, proof, &len);
	if (rc != 0) {
		if ((rc != DIRAUTH_ERR_SYNTAX && rc != DIRAUTH_ERR_BOUNDS) || len != 0)
			abort();
		return 0;
	}
	if (len > MERKLE_MAX_PROOF)
		abort();
	struct buffer out;
	buffer_init(&out);
	if (tlog_consistency_encode(proof, len, &out) != 0 || out.len != size ||
	    (size > 0 && memcmp(out.data, data, size) != 0))
		abort();
	buffer_free(&out);
	return 0;
}
