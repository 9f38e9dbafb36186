/*
 * log_routes.c: the read side of each namespace's transparency log, c2sp.org/tlog-tiles under
 * /v1/<namespace>/log/ (docs/api.md, "The transparency log").
 *
 *   checkpoint                 the latest checkpoint note; cached a few seconds, as it moves on
 *                              with every publication
 *   tile/<L>/<N>[.p/<W>]       hash tiles
 *   tile/entries/<N>[.p/<W>]   entry bundles
 * A tile's bytes never change once it is served (a partial tile is a prefix of the full tile it
 * grows into, and only tiles of checkpointed trees are served: server/tlog/translog.h), so
 * every tile is immutable for caches; refusals are no-store like every error here. A path that is
 * not a tile's one spelling is 400, a well-formed tile the log does not serve is 404, each with
 * its own code.
 */
#include "server/http/routes.h"

#include "base/error.h"
#include "server/tlog/cosigning.h"
#include "server/tlog/translog.h"

#include <string.h>

/* Queues the response with content type and Cache-Control (consumes response). */
static enum MHD_Result answer_response(struct http_request *request, const char *content_type,
                                       const char *cache, struct MHD_Response *response)
{
	if (!response)
		return MHD_NO;
	if (MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, content_type) != MHD_YES ||
	    MHD_add_response_header(response, MHD_HTTP_HEADER_CACHE_CONTROL, cache) != MHD_YES) {
		MHD_destroy_response(response);
		return MHD_NO;
	}
	return respond_queue_and_destroy(request->connection, MHD_HTTP_OK, response);
}

/* Queues a copy of body (len bytes) with content type and Cache-Control. */
static enum MHD_Result answer(struct http_request *request, const char *content_type, const char *cache,
                              const uint8_t *body, size_t len)
{
	return answer_response(request, content_type, cache,
	                       MHD_create_response_from_buffer(
	                           len, (void *)(len ? body : (const uint8_t *)""), MHD_RESPMEM_MUST_COPY));
}

/* Queues body's bytes with content type and Cache-Control, handing them to the response (which
 * frees them) rather than copying them, as a bundle may be 256 leaves of up to 64 KiB each. body
 * is left empty. */
static enum MHD_Result answer_taking(struct http_request *request, const char *content_type,
                                     const char *cache, struct buffer *body)
{
	if (body->len == 0)
		return answer(request, content_type, cache, NULL, 0);
	struct MHD_Response *response =
	    MHD_create_response_from_buffer(body->len, body->data, MHD_RESPMEM_MUST_FREE);
	if (response)
		buffer_init(body); /* the response owns the bytes now */
	return answer_response(request, content_type, cache, response);
}

enum MHD_Result http_serve_log_checkpoint(struct http_request *request)
{
	struct buffer note;
	buffer_init(&note);
	/* The published checkpoint: with k cosignatures once other authorities cosign (cosigning.h). */
	int rc = translog_checkpoint_served(request->server->options.store, request->server->options.config,
	                                    request->namespace_index, &note);
	enum MHD_Result result;
	if (rc == DIRAUTH_ERR_NOT_FOUND)
		result =
		    respond_error(request->connection, request->route, API_ERROR_LOG_NO_CHECKPOINT, NULL);
	else if (rc)
		result = respond_error(request->connection, request->route, API_ERROR_INTERNAL,
		                       dirauth_strerror(rc));
	else
		result = answer(request, "text/plain; charset=utf-8",
		                http_namespace_cache_control(request, HTTP_CACHE_LATEST_CHECKPOINT),
		                note.data, note.len);
	buffer_free(&note);
	return result;
}

enum MHD_Result http_serve_log_tile(struct http_request *request)
{
	static const char prefix[] = "tile/";
	const struct router_capture *rest = &request->match.captures[1];
	char path[TRANSLOG_TILE_PATH_MAX + 1];
	if (rest->len > TRANSLOG_TILE_PATH_MAX - (sizeof prefix - 1))
		return respond_error(request->connection, request->route, API_ERROR_LOG_PATH_MALFORMED,
		                     "The tile path is longer than any tile's.");
	memcpy(path, prefix, sizeof prefix - 1);
	memcpy(path + sizeof prefix - 1, rest->data, rest->len);
	size_t len = sizeof prefix - 1 + rest->len;

	struct buffer body;
	enum translog_miss miss = TRANSLOG_MISS_NONE;
	buffer_init(&body);
	int rc = translog_tile(request->server->options.store, http_namespace_name(request), path, len, &body,
	                       &miss);
	enum MHD_Result result;
	if (rc == DIRAUTH_ERR_SYNTAX) {
		result =
		    respond_error(request->connection, request->route, API_ERROR_LOG_PATH_MALFORMED, NULL);
	} else if (rc == DIRAUTH_ERR_NOT_FOUND) {
		enum api_error error = miss == TRANSLOG_MISS_NO_CHECKPOINT ? API_ERROR_LOG_NO_CHECKPOINT
		                       : miss == TRANSLOG_MISS_NOT_CHECKPOINTED
		                           ? API_ERROR_LOG_NOT_CHECKPOINTED
		                           : API_ERROR_LOG_BEYOND_TREE;
		result = respond_error(request->connection, request->route, error, NULL);
	} else if (rc) {
		result = respond_error(request->connection, request->route, API_ERROR_INTERNAL,
		                       dirauth_strerror(rc));
	} else {
		result = answer_taking(request, "application/octet-stream",
		                       http_namespace_cache_control(request, HTTP_CACHE_IMMUTABLE), &body);
	}
	buffer_free(&body);
	return result;
}
