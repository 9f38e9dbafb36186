/*
 * respond.c: answers of the HTTP API (respond.h).
 */
#include "server/http/respond.h"

#include "base/buffer.h"
#include "compress/compress.h"

#include <string.h>
#include <strings.h>

enum MHD_Result respond_queue_and_destroy(struct MHD_Connection *connection, unsigned status,
                                          struct MHD_Response *response)
{
	if (!response)
		return MHD_NO;
	enum MHD_Result result = MHD_queue_response(connection, status, response);
	MHD_destroy_response(response);
	return result;
}

/* A response holding a copy of data, with the headers given (each NULL or 0: left out). */
static struct MHD_Response *response_of(const void *data, size_t len, const char *content_type,
                                        const char *content_encoding, const char *cache_control, int vary)
{
	struct MHD_Response *response =
	    MHD_create_response_from_buffer(len, (void *)data, MHD_RESPMEM_MUST_COPY);
	if (!response)
		return NULL;
	if (MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, content_type) != MHD_YES ||
	    (content_encoding && MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_ENCODING,
	                                                 content_encoding) != MHD_YES) ||
	    (cache_control &&
	     MHD_add_response_header(response, MHD_HTTP_HEADER_CACHE_CONTROL, cache_control) != MHD_YES) ||
	    (vary && MHD_add_response_header(response, MHD_HTTP_HEADER_VARY, "Accept-Encoding") != MHD_YES)) {
		MHD_destroy_response(response);
		return NULL;
	}
	return response;
}

struct MHD_Response *respond_response_taking(struct buffer *body, const char *content_type,
                                             const char *cache_control)
{
	struct MHD_Response *response =
	    MHD_create_response_from_buffer(body->len, body->len ? body->data : NULL, MHD_RESPMEM_MUST_FREE);
	if (!response) {
		buffer_free(body);
		return NULL;
	}
	if (body->len)
		buffer_init(body); /* the response owns the bytes now */
	else
		buffer_free(body);
	if (MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, content_type) != MHD_YES ||
	    (cache_control &&
	     MHD_add_response_header(response, MHD_HTTP_HEADER_CACHE_CONTROL, cache_control) != MHD_YES)) {
		MHD_destroy_response(response);
		return NULL;
	}
	return response;
}

enum MHD_Result respond_bytes(struct MHD_Connection *connection, unsigned status, const char *content_type,
                              const void *data, size_t len)
{
	return respond_queue_and_destroy(connection, status,
	                                 response_of(data, len, content_type, NULL, NULL, 0));
}

/* The request's Accept-Encoding fields, joined into one list. */
struct accept_fields {
	const char *first; /* libmicrohttpd's, alive as long as the request */
	size_t count;
	struct buffer joined; /* all of them, when there are several; cut one byte past the bound */
	int failed;
};

/* Appends text to the joined list, up to one byte past what compress_negotiate reads: enough for
 * it to see that the list is too long. */
static void accept_join(struct accept_fields *a, const char *text)
{
	size_t cap = COMPRESS_ACCEPT_MAX + 1;
	size_t len = a->joined.len < cap ? strnlen(text, cap - a->joined.len) : 0;
	if (len && buffer_append(&a->joined, text, len) != 0)
		a->failed = 1;
}

static enum MHD_Result collect_accept(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	(void)kind;
	struct accept_fields *a = cls;
	if (!key || strcasecmp(key, MHD_HTTP_HEADER_ACCEPT_ENCODING) != 0)
		return MHD_YES;
	value = value ? value : "";
	if (a->count++ == 0) {
		a->first = value;
		return MHD_YES;
	}
	if (a->count == 2)
		accept_join(a, a->first);
	accept_join(a, ", ");
	accept_join(a, value);
	return MHD_YES;
}

enum content_encoding respond_negotiate(struct MHD_Connection *connection)
{
	struct accept_fields a = {NULL, 0, {0}, 0};
	buffer_init(&a.joined);
	MHD_get_connection_values(connection, MHD_HEADER_KIND, collect_accept, &a);
	enum content_encoding encoding;
	if (a.count <= 1)
		encoding = compress_negotiate(a.first);
	else if (a.failed || !a.joined.data)
		encoding = ENCODING_COUNT; /* out of memory: nothing is agreed with a list not read */
	else
		encoding = compress_negotiate((const char *)a.joined.data); /* NUL-terminated */
	buffer_free(&a.joined);
	return encoding;
}

enum MHD_Result respond_bytes_negotiated(struct MHD_Connection *connection, const struct respond_route *route,
                                         unsigned status, const char *content_type, const char *cache_control,
                                         const void *data, size_t len)
{
	enum content_encoding encoding = respond_negotiate(connection);
	const char *content_encoding = NULL;
	struct buffer packed;

	if (encoding == ENCODING_COUNT)
		return respond_error(connection, route, API_ERROR_NOT_ACCEPTABLE, NULL);
	buffer_init(&packed);
	/* A compression that fails (memory) leaves the bytes as they are: identity is acceptable. */
	if (encoding == ENCODING_ZSTD && len >= RESPOND_COMPRESS_MIN &&
	    compress_encode_fast(ENCODING_ZSTD, data, len, &packed) == 0) {
		data = packed.data;
		len = packed.len;
		content_encoding = content_encoding_name(ENCODING_ZSTD);
	}
	struct MHD_Response *response =
	    response_of(data, len, content_type, content_encoding, cache_control, 1);
	buffer_free(&packed);
	return respond_queue_and_destroy(connection, status, response);
}

/* The JSON error answer of error, with what route adds, and Connection: close when closing. */
static enum MHD_Result error_answer(struct MHD_Connection *connection, const struct respond_route *route,
                                    enum api_error error, const char *detail, int closing)
{
	static const struct respond_route none = {NULL, 0};
	struct buffer body;

	if (!route)
		route = &none;
	buffer_init(&body);
	if (api_error_json(error, detail, &body) != 0) {
		buffer_free(&body);
		return MHD_NO;
	}
	struct MHD_Response *response =
	    MHD_create_response_from_buffer(body.len, body.data, MHD_RESPMEM_MUST_COPY);
	buffer_free(&body);
	if (!response)
		return MHD_NO;
	if (MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json") != MHD_YES ||
	    MHD_add_response_header(response, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store") != MHD_YES ||
	    (error == API_ERROR_METHOD_NOT_ALLOWED && route->allow &&
	     MHD_add_response_header(response, MHD_HTTP_HEADER_ALLOW, route->allow) != MHD_YES) ||
	    (route->vary &&
	     MHD_add_response_header(response, MHD_HTTP_HEADER_VARY, "Accept-Encoding") != MHD_YES) ||
	    (closing && MHD_add_response_header(response, MHD_HTTP_HEADER_CONNECTION, "close") != MHD_YES)) {
		MHD_destroy_response(response);
		return MHD_NO;
	}
	return respond_queue_and_destroy(connection, api_error_status(error), response);
}

enum MHD_Result respond_error(struct MHD_Connection *connection, const struct respond_route *route,
                              enum api_error error, const char *detail)
{
	return error_answer(connection, route, error, detail, 0);
}

enum MHD_Result respond_error_closing(struct MHD_Connection *connection, enum api_error error,
                                      const char *detail)
{
	return error_answer(connection, NULL, error, detail, 1);
}

int respond_etag_matches(const char *if_none_match, const char *etag)
{
	if (!if_none_match)
		return 0;
	size_t etag_len = strlen(etag);
	const char *p = if_none_match;
	while (*p) {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		if (*p == '*')
			return 1;
		if (p[0] == 'W' && p[1] == '/')
			p += 2;
		if (*p != '"')
			return 0;
		const char *end = strchr(p + 1, '"');
		if (!end)
			return 0;
		size_t len = (size_t)(end - p) + 1;
		if (len == etag_len && memcmp(p, etag, len) == 0)
			return 1;
		p = end + 1;
	}
	return 0;
}
