/*
 * fuzz_endpoint_answer.c: libFuzzer target for dirauthctl's reading of an authority's answer to
 * an accepted health statement or revocation (ctl_endpoint_parse_accepted, ctl/endpoint.h).
 *
 * The answer comes from a server the tool does not trust, so the properties checked are: no
 * crash, leak or overread on any input; an answer over its bound is refused as such; an accepted
 * answer names a digest and an epoch that read back from the input's own text.
 */
#include "ctl/endpoint.h"
#include "schema/encoding.h"
#include "base/error.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int contains(const uint8_t *data, size_t size, const char *text)
{
	size_t len = strlen(text);
	for (size_t i = 0; i + len <= size; i++)
		if (memcmp(data + i, text, len) == 0)
			return 1;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t digest[32];
	uint64_t epoch = 0;
	int rc = ctl_endpoint_parse_accepted(data, size, digest, &epoch);

	if (size > CTL_ENDPOINT_RESPONSE_MAX) {
		if (rc != DIRAUTH_ERR_BOUNDS)
			abort();
		return 0;
	}
	if (rc != 0) {
		if (rc != DIRAUTH_ERR_SYNTAX)
			abort();
		return 0;
	}
	/* What was read is in the input: the digest's hex and the epoch's decimal. */
	char hex[65], key[96], number[32];
	hex_encode(digest, sizeof(digest), hex);
	snprintf(key, sizeof(key), "\"sha256\":\"%s\"", hex);
	snprintf(number, sizeof(number), "\"epoch\":%" PRIu64, epoch);
	if (!contains(data, size, key) || !contains(data, size, number))
		abort();
	return 0;
}
