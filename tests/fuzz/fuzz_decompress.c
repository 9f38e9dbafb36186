/*
 * fuzz_decompress.c: libFuzzer target for bounded decompression.
 *
 * The first input byte picks the encoding (modulo the number of encodings); the rest is the
 * compressed data, decoded with a 1 MiB output bound as a client would decode a snapshot body.
 * Beyond not crashing, it checks the contract: on success the output is within the bound, on
 * failure the buffer is left empty and the error is one the header lists.
 */
#include "compress/compress.h"

#include "base/buffer.h"
#include "base/error.h"

#include <stdlib.h>

#define FUZZ_MAX_OUTPUT ((size_t)1024 * 1024)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buffer out;
	int rc;

	if (size < 1)
		return 0;
	enum content_encoding encoding = (enum content_encoding)(data[0] % ENCODING_COUNT);
	buffer_init(&out);
	rc = compress_decode(encoding, data + 1, size - 1, FUZZ_MAX_OUTPUT, &out);
	if (rc == 0 && out.len > FUZZ_MAX_OUTPUT)
		abort();
	if (rc != 0 && (out.len != 0 ||
	                (rc != DIRAUTH_ERR_SYNTAX && rc != DIRAUTH_ERR_BOUNDS && rc != DIRAUTH_ERR_NOMEM)))
		abort();
	buffer_free(&out);
	return 0;
}
