/*
 * fuzz_http_head.c: http_head_parse() on arbitrary bytes: it never reads past them, an accepted
 * head ends in a blank line within the input, every span it returns lies inside the input, and
 * the path its target names (origin or absolute form) lies inside the target.
 */
#include "server/http/framing.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_span(struct http_span s, const uint8_t *data, size_t size)
{
	if (s.len && ((const uint8_t *)s.data < data || (const uint8_t *)s.data + s.len > data + size))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http_head head;
	struct http_framing_verdict verdict;
	int rc = http_head_parse(data, size, &head, &verdict);
	if (rc == -1 && (verdict.error == API_ERROR_NONE || !verdict.detail[0]))
		abort();
	if (rc != 0)
		return 0;
	if (head.head_len < 4 || head.head_len > size || head.head_len > HTTP_HEAD_MAX ||
	    memcmp(data + head.head_len - 4, "\r\n\r\n", 4) != 0)
		abort();
	check_span(head.method, data, size);
	check_span(head.target, data, size);
	if (head.path.data < head.target.data ||
	    head.path.data + head.path.len > head.target.data + head.target.len)
		abort();
	check_span(head.version, data, size);
	for (size_t i = 0; i < head.field_count; i++) {
		check_span(head.fields[i].name, data, size);
		check_span(head.fields[i].value, data, size);
	}
	return 0;
}
