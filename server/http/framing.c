/*
 * framing.c: HTTP/1.1 request heads and framing rules (framing.h).
 *
 * The head parser is a single pass over at most HTTP_HEAD_MAX bytes: it finds each CRLF, and
 * refuses every byte that RFC 9112 does not allow where it stands, rather than skipping or
 * repairing it.
 */
#include "server/http/framing.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static int refuse(struct http_framing_verdict *verdict, enum api_error error, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

static int refuse(struct http_framing_verdict *verdict, enum api_error error, const char *format, ...)
{
	va_list args;
	verdict->error = error;
	va_start(args, format);
	vsnprintf(verdict->detail, sizeof verdict->detail, format, args);
	va_end(args);
	return -1;
}

/* RFC 9110 5.6.2: tchar. */
static int is_tchar(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

static int is_token(struct http_span s)
{
	if (s.len == 0)
		return 0;
	for (size_t i = 0; i < s.len; i++)
		if (!is_tchar((unsigned char)s.data[i]))
			return 0;
	return 1;
}

static int span_equals_caseless(struct http_span s, const char *text)
{
	size_t len = strlen(text);
	return s.len == len && strncasecmp(s.data, text, len) == 0;
}

static int span_equals(struct http_span s, const char *text)
{
	size_t len = strlen(text);
	return s.len == len && memcmp(s.data, text, len) == 0;
}

/* 1*DIGIT, of any number of digits: its value, or UINT64_MAX for any larger one. A length is
 * malformed only when it is not a number; how large a number may be is the body's bound. */
static int parse_length(struct http_span s, uint64_t *out)
{
	uint64_t v = 0;
	if (s.len == 0)
		return -1;
	for (size_t i = 0; i < s.len; i++) {
		if (s.data[i] < '0' || s.data[i] > '9')
			return -1;
		uint64_t digit = (uint64_t)(s.data[i] - '0');
		v = v > (UINT64_MAX - digit) / 10 ? UINT64_MAX : v * 10 + digit;
	}
	*out = v;
	return 0;
}

int http_framing_check(struct http_span version, struct http_span method, const struct http_field *fields,
                       size_t field_count, struct http_framing *framing, struct http_framing_verdict *verdict)
{
	size_t lengths = 0, codings = 0, hosts = 0;
	struct http_span length = {NULL, 0}, coding = {NULL, 0};

	memset(framing, 0, sizeof *framing);
	verdict->error = API_ERROR_NONE;
	verdict->detail[0] = 0;
	if (span_equals(version, "HTTP/1.1"))
		framing->http_1_1 = 1;
	else if (!span_equals(version, "HTTP/1.0"))
		return refuse(verdict, API_ERROR_BAD_REQUEST, "Only HTTP/1.1 and HTTP/1.0 are spoken here.");
	if (!is_token(method))
		return refuse(verdict, API_ERROR_BAD_REQUEST, "The method is not a token.");
	if (field_count > HTTP_HEAD_MAX_FIELDS)
		return refuse(verdict, API_ERROR_HEADERS_TOO_LARGE, "More than %d header fields.",
		              HTTP_HEAD_MAX_FIELDS);
	for (size_t i = 0; i < field_count; i++) {
		const struct http_field *f = &fields[i];
		if (!is_token(f->name))
			return refuse(verdict, API_ERROR_BAD_REQUEST,
			              "A header field name is not a token (a space before its colon?).");
		for (size_t j = 0; j < f->value.len; j++) {
			unsigned char c = (unsigned char)f->value.data[j];
			if ((c < 0x20 && c != '\t') || c == 0x7f)
				return refuse(verdict, API_ERROR_BAD_REQUEST,
				              "A header field value holds a control character.");
		}
		if (span_equals_caseless(f->name, "Content-Length")) {
			lengths++;
			length = f->value;
		} else if (span_equals_caseless(f->name, "Transfer-Encoding")) {
			codings++;
			coding = f->value;
		} else if (span_equals_caseless(f->name, "Host")) {
			hosts++;
		}
	}
	if (lengths && codings)
		return refuse(verdict, API_ERROR_BAD_REQUEST,
		              "Content-Length and Transfer-Encoding together (RFC 9112 6.1).");
	if (lengths > 1)
		return refuse(verdict, API_ERROR_BAD_REQUEST, "More than one Content-Length (RFC 9112 6.3).");
	if (lengths) {
		if (parse_length(length, &framing->length) != 0)
			return refuse(verdict, API_ERROR_BAD_REQUEST,
			              "The Content-Length is not a decimal length.");
		framing->has_length = 1;
	}
	if (codings) {
		if (!framing->http_1_1)
			return refuse(verdict, API_ERROR_NOT_IMPLEMENTED,
			              "Transfer-Encoding in an HTTP/1.0 request.");
		if (codings > 1 || !span_equals_caseless(coding, "chunked"))
			return refuse(verdict, API_ERROR_NOT_IMPLEMENTED,
			              "The only transfer coding accepted is a single \"chunked\".");
		framing->chunked = 1;
	}
	if (framing->http_1_1 && hosts != 1)
		return refuse(verdict, API_ERROR_BAD_REQUEST, "An HTTP/1.1 request needs exactly one Host.");
	if (span_equals(method, "POST") && !framing->has_length && !framing->chunked)
		return refuse(verdict, API_ERROR_LENGTH_REQUIRED,
		              "A POST needs a Content-Length or chunked coding.");
	if (framing->has_length && framing->length > HTTP_LENGTH_MAX)
		return refuse(verdict, API_ERROR_BODY_TOO_LARGE,
		              "The Content-Length is past every body taken here.");
	return 0;
}

/* The next line of the head from at (its CRLF not included) into *line; returns the offset past
 * its CRLF, 0 when no CRLF is in the bytes yet, or -1 for a bare CR or LF. */
static long next_line(const char *buf, size_t len, size_t at, struct http_span *line)
{
	for (size_t i = at; i < len; i++) {
		if (buf[i] == '\n')
			return -1;
		if (buf[i] != '\r')
			continue;
		if (i + 1 == len)
			return 0;
		if (buf[i + 1] != '\n')
			return -1;
		line->data = buf + at;
		line->len = i - at;
		return (long)(i + 2);
	}
	return 0;
}

/* The length of s's prefix that is scheme "://", for the schemes served here (any case), or 0. */
static size_t absolute_prefix(struct http_span s)
{
	static const char *const schemes[] = {"http://", "https://"};
	for (size_t i = 0; i < sizeof schemes / sizeof schemes[0]; i++) {
		size_t len = strlen(schemes[i]);
		if (s.len >= len && strncasecmp(s.data, schemes[i], len) == 0)
			return len;
	}
	return 0;
}

int http_target_path(struct http_span target, struct http_span *path)
{
	const char *end = target.data + target.len, *at = target.data;
	if (target.len == 0)
		return -1;
	if (target.data[0] != '/') {
		size_t prefix = absolute_prefix(target);
		if (!prefix)
			return -1;
		/* The authority: up to the path or the query; a host is needed, userinfo refused
		 * (RFC 9110 4.2.1, 4.2.4). */
		const char *authority = target.data + prefix;
		at = authority;
		while (at < end && *at != '/' && *at != '?') {
			if (*at == '@')
				return -1;
			at++;
		}
		if (at == authority)
			return -1;
	}
	const char *query = memchr(at, '?', (size_t)(end - at));
	*path = (struct http_span){at, (size_t)((query ? query : end) - at)};
	return 0;
}

static int parse_request_line(struct http_span line, struct http_head *head,
                              struct http_framing_verdict *verdict)
{
	const char *first = memchr(line.data, ' ', line.len);
	if (!first)
		return refuse(verdict, API_ERROR_BAD_REQUEST,
		              "The request line is not \"METHOD /target HTTP/1.x\".");
	const char *target = first + 1, *end = line.data + line.len;
	const char *second = memchr(target, ' ', (size_t)(end - target));
	if (!second || memchr(second + 1, ' ', (size_t)(end - second - 1)))
		return refuse(verdict, API_ERROR_BAD_REQUEST,
		              "The request line is not \"METHOD /target HTTP/1.x\".");
	head->method = (struct http_span){line.data, (size_t)(first - line.data)};
	head->target = (struct http_span){target, (size_t)(second - target)};
	head->version = (struct http_span){second + 1, (size_t)(end - second - 1)};
	for (size_t i = 0; i < head->target.len; i++) {
		unsigned char c = (unsigned char)head->target.data[i];
		if (c <= 0x20 || c >= 0x7f)
			return refuse(verdict, API_ERROR_BAD_REQUEST,
			              "The request target holds a byte it may not.");
	}
	if (http_target_path(head->target, &head->path) != 0)
		return refuse(verdict, API_ERROR_BAD_REQUEST, HTTP_TARGET_REFUSED);
	return 0;
}

static int parse_field(struct http_span line, struct http_field *field, struct http_framing_verdict *verdict)
{
	if (line.data[0] == ' ' || line.data[0] == '\t')
		return refuse(verdict, API_ERROR_BAD_REQUEST,
		              "A header line is folded (obs-fold, RFC 9112 5.2).");
	const char *colon = memchr(line.data, ':', line.len);
	if (!colon)
		return refuse(verdict, API_ERROR_BAD_REQUEST, "A header line has no colon.");
	field->name = (struct http_span){line.data, (size_t)(colon - line.data)};
	const char *value = colon + 1, *end = line.data + line.len;
	while (value < end && (*value == ' ' || *value == '\t'))
		value++;
	while (end > value && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	field->value = (struct http_span){value, (size_t)(end - value)};
	return 0;
}

int http_head_parse(const uint8_t *bytes, size_t len, struct http_head *head,
                    struct http_framing_verdict *verdict)
{
	const char *buf = (const char *)bytes;
	size_t limit = len < HTTP_HEAD_MAX ? len : HTTP_HEAD_MAX;
	struct http_span line;
	size_t at = 0;
	int have_request_line = 0;

	memset(head, 0, sizeof *head);
	verdict->error = API_ERROR_NONE;
	verdict->detail[0] = 0;
	for (;;) {
		long next = next_line(buf, limit, at, &line);
		if (next < 0)
			return refuse(verdict, API_ERROR_BAD_REQUEST,
			              "A line of the head does not end in CRLF.");
		if (next == 0) {
			if (limit == HTTP_HEAD_MAX)
				return refuse(verdict, API_ERROR_HEADERS_TOO_LARGE,
				              "The request head is over %d bytes.", HTTP_HEAD_MAX);
			return 1;
		}
		at = (size_t)next;
		if (!have_request_line) {
			/* RFC 9112 2.2 lets a server skip empty lines before the request line. */
			if (line.len == 0)
				continue;
			if (parse_request_line(line, head, verdict) != 0)
				return -1;
			have_request_line = 1;
			continue;
		}
		if (line.len == 0)
			break;
		if (head->field_count == HTTP_HEAD_MAX_FIELDS)
			return refuse(verdict, API_ERROR_HEADERS_TOO_LARGE, "More than %d header fields.",
			              HTTP_HEAD_MAX_FIELDS);
		if (parse_field(line, &head->fields[head->field_count], verdict) != 0)
			return -1;
		head->field_count++;
	}
	head->head_len = at;
	return http_framing_check(head->version, head->method, head->fields, head->field_count,
	                          &head->framing, verdict);
}
