/*
 * fuzz_peer_error.c: peer_error_answer_parse() on arbitrary bytes, as a peer's error answer
 * arrives: an accepted answer has a code spelled as codes are and a printable detail, both
 * NUL-terminated within their arrays, and the same bytes parse the same way twice.
 */
#include "server/peers/error_answer.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct peer_error_answer first, second;
	size_t code_len, detail_len;

	if (peer_error_answer_parse(data, size, &first) != 0)
		return 0;
	code_len = strnlen(first.code, sizeof(first.code));
	detail_len = strnlen(first.detail, sizeof(first.detail));
	if (code_len == 0 || code_len > PEER_ERROR_CODE_MAX || detail_len > PEER_ERROR_DETAIL_MAX)
		abort();
	for (size_t i = 0; i < code_len; i++) {
		char ch = first.code[i];
		if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_'))
			abort();
	}
	for (size_t i = 0; i < detail_len; i++) {
		if (first.detail[i] < 0x20 || first.detail[i] > 0x7e)
			abort();
	}
	if (peer_error_answer_parse(data, size, &second) != 0 || memcmp(&first, &second, sizeof(first)) != 0)
		abort();
	return 0;
}
