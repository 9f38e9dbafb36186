/*
 * fuzz_net_error_answer.c: what dirauthctl reads from a server's error answer (net/client.h),
 * net_error_code() and net_describe_error(), on arbitrary bytes as the body of a 409: the code and
 * the description are NUL-terminated within their arrays and printable ASCII, a small array
 * truncates rather than overflows, and the same bytes give the same words twice.
 */
#include "net/client.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void expect_printable(const char *text, size_t cap)
{
	size_t len = strnlen(text, cap);
	if (len == cap)
		abort();
	for (size_t i = 0; i < len; i++)
		if (text[i] < 0x20 || text[i] > 0x7e)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct net_response response;
	char code[64], again[64], small[4], line[256], line_again[256];

	net_response_init(&response);
	response.status = 409;
	if (buffer_append(&response.body, data, size) != 0) {
		net_response_free(&response);
		return 0;
	}
	int found = net_error_code(&response, code, sizeof code);
	expect_printable(code, sizeof code);
	if (!found && code[0] != '\0')
		abort();
	if (net_error_code(&response, again, sizeof again) != found || strcmp(code, again) != 0)
		abort();
	if (net_error_code(&response, small, sizeof small) != found)
		abort();
	expect_printable(small, sizeof small);
	net_describe_error(&response, line, sizeof line);
	expect_printable(line, sizeof line);
	net_describe_error(&response, line_again, sizeof line_again);
	if (strcmp(line, line_again) != 0)
		abort();
	net_response_free(&response);
	return 0;
}
