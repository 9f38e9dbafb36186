/*
 * fuzz_net_error_answer.c: a server's error answer as it arrives, arbitrary bytes as the body of
 * a 409, read by net_error_answer_parse() (net/error_answer.h) and by what dirauthctl and dirauthd
 * show and branch on, net_error_code() and net_describe_error() (net/client.h). An accepted answer
 * has a code spelled as codes are and a printable detail, both NUL-terminated within their
 * arrays; the code and the description are printable ASCII, a small array truncates rather than
 * overflows, net_error_code finds a code exactly when the parse accepts, and the same bytes give
 * the same words twice.
 */
#include "net/client.h"
#include "net/error_answer.h"

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

/* Returns whether the parse accepted, having checked what it gave. */
static int check_parse(const uint8_t *data, size_t size)
{
	struct net_error_answer first, second;
	size_t code_len;

	if (net_error_answer_parse(data, size, &first) != 0)
		return 0;
	code_len = strnlen(first.code, sizeof(first.code));
	if (code_len == 0 || code_len > NET_ERROR_CODE_MAX)
		abort();
	for (size_t i = 0; i < code_len; i++) {
		char ch = first.code[i];
		if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_'))
			abort();
	}
	expect_printable(first.detail, sizeof(first.detail));
	if (net_error_answer_parse(data, size, &second) != 0 || memcmp(&first, &second, sizeof(first)) != 0)
		abort();
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct net_response response;
	char code[64], again[64], small[4], line[256], line_again[256];
	int accepted = check_parse(data, size);

	net_response_init(&response);
	response.status = 409;
	if (buffer_append(&response.body, data, size) != 0) {
		net_response_free(&response);
		return 0;
	}
	int found = net_error_code(&response, code, sizeof code);
	expect_printable(code, sizeof code);
	if (found != accepted || (!found && code[0] != '\0'))
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
