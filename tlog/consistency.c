/*
 * consistency.c: a consistency proof as base64 lines (consistency.h).
 */
#include "tlog/consistency.h"

#include "schema/encoding.h"
#include "base/error.h"

#include <string.h>

#define HASH_BASE64_LEN (TLOG_CONSISTENCY_LINE_BYTES - 1)

int tlog_consistency_encode(const merkle_hash *proof, size_t proof_len, struct buffer *out)
{
	char line[HASH_BASE64_LEN + 2];
	size_t start = out->len;
	int rc = 0;

	if (proof_len > MERKLE_MAX_PROOF)
		return DIRAUTH_ERR_BOUNDS;
	for (size_t i = 0; rc == 0 && i < proof_len; i++) {
		base64_encode(proof[i], MERKLE_HASH_SIZE, line);
		line[HASH_BASE64_LEN] = '\n';
		rc = buffer_append(out, line, HASH_BASE64_LEN + 1);
	}
	if (rc) {
		buffer_truncate(out, start);
		return DIRAUTH_ERR_NOMEM;
	}
	return 0;
}

int tlog_consistency_parse(const uint8_t *buf, size_t len, merkle_hash proof[MERKLE_MAX_PROOF],
                           size_t *proof_len)
{
	size_t count = 0;

	*proof_len = 0;
	if (len > TLOG_CONSISTENCY_MAX_BYTES)
		return DIRAUTH_ERR_BOUNDS;
	if (len % TLOG_CONSISTENCY_LINE_BYTES != 0)
		return DIRAUTH_ERR_SYNTAX;
	for (size_t pos = 0; pos < len; pos += TLOG_CONSISTENCY_LINE_BYTES) {
		size_t hash_len = 0;
		if (buf[pos + HASH_BASE64_LEN] != '\n' ||
		    base64_decode((const char *)buf + pos, HASH_BASE64_LEN, proof[count], MERKLE_HASH_SIZE,
		                  &hash_len) != 0 ||
		    hash_len != MERKLE_HASH_SIZE)
			return DIRAUTH_ERR_SYNTAX;
		count++;
	}
	*proof_len = count;
	return 0;
}
