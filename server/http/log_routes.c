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
 * its own code. For the same reason a tile's answer, once made, is kept (answer_cache.h, bounded
 * by http.log_cache_bytes) and queued again for the next request of its path: the hot tiles and
 * bundles cost a lookup instead of a read transaction and a walk over 256 records.
 */
#include "server/http/routes.h"

#include "base/error.h"
#include "server/tlog/cosigning.h"
#include "server/tlog/translog.h"

#include <string.h>

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
		result = respond_queue_and_destroy(
		    request->connection, MHD_HTTP_OK,
		    respond_response_taking(
		        &note, "text/plain; charset=utf-8",
		        http_namespace_cache_control(request, HTTP_CACHE_LATEST_CHECKPOINT)));
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
	struct answer_cache *kept = request->server->log_answers;
	enum MHD_Result result;
	if (answer_cache_queue(kept, request->connection, request->namespace_index, path, len, NULL, 0,
	                       &result))
		return result;

	struct buffer body;
	enum translog_miss miss = TRANSLOG_MISS_NONE;
	buffer_init(&body);
	int rc = translog_tile(request->server->options.store, http_namespace_name(request), path, len, &body,
	                       &miss);
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
		/* Served once, a tile's bytes are its bytes for ever: kept without a tag. */
		size_t body_len = body.len;
		result = answer_cache_keep_and_queue(
		    kept, request->connection, request->namespace_index, path, len, NULL, 0,
		    respond_response_taking(&body, "application/octet-stream",
		                            http_namespace_cache_control(request, HTTP_CACHE_IMMUTABLE)),
		    body_len);
	}
	buffer_free(&body);
	return result;
}
