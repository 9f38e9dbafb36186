/*
 * snapshot_routes.c: the snapshot reads of the HTTP API.
 *
 * Snapshot responses come prepared (server/readpath/prepared.h): a request picks the one for its
 * encoding and its If-None-Match and queues it. Only the "latest" header is built per request,
 * because its max-age shrinks as the epoch runs out. An older epoch comes from the store header
 * first: the header answers and the body's 304s never read the body, and a body is read and
 * compressed in the one encoding asked for.
 *
 * A diff (schema/snapshot-diff.md) is sent from the store's diff file of the encoding asked for,
 * opened per request: diffs are small beside bodies, made off the publication's path
 * (server/publish/diffs.h), and exist only once built, so nothing about them is prepared.
 * A record shard (schema/record-shard.md) likewise: read from the epoch's packed shard file per
 * request (a few KB), immutable, encoded as the request allows.
 */
#include "server/http/routes.h"

#include "schema/encoding.h"
#include "base/error.h"
#include "schema/record_shard.h"
#include "server/readpath/bulk.h"
#include "server/readpath/prepared.h"
#include "server/store/snapshots.h"

#include <stdio.h>
#include <unistd.h>

#define SNAPSHOT_EPOCH_TEXT_MAX 20 /* digits of UINT64_MAX */

enum MHD_Result http_serve_latest_header(struct http_request *request)
{
	const struct http_options *o = &request->server->options;
	struct prepared_snapshot *snapshot = NULL;
	if (prepared_set_latest(o->prepared, request->namespace_index, &snapshot) != 0)
		return respond_error(request->connection, request->route, API_ERROR_NOT_FOUND,
		                     "Nothing has been published in this namespace yet.");
	/* An unreadable clock reads as past fresh-until: max-age 0. */
	uint64_t now = 0;
	if (clock_now(o->clock, &now) != 0)
		now = UINT64_MAX;
	bool not_modified = respond_etag_matches(http_request_header(request, MHD_HTTP_HEADER_IF_NONE_MATCH),
	                                         prepared_snapshot_header_etag(snapshot));
	enum MHD_Result result =
	    prepared_snapshot_queue_latest_header(snapshot, request->connection, now, not_modified) ? MHD_YES
	                                                                                            : MHD_NO;
	prepared_snapshot_release(snapshot);
	return result;
}

/* The epoch of the route's second capture, with a reference on its snapshot; 0, or the answer
 * already queued in *result. */
static int find_epoch(struct http_request *request, struct prepared_snapshot **snapshot,
                      enum MHD_Result *result)
{
	const struct router_capture *text = &request->match.captures[1];
	uint64_t epoch;
	if (text->len > SNAPSHOT_EPOCH_TEXT_MAX || decimal_parse(text->data, text->len, &epoch) != 0) {
		*result = respond_error(request->connection, request->route, API_ERROR_NOT_FOUND,
		                        "The epoch is not a canonical decimal.");
		return -1;
	}
	int rc =
	    prepared_set_epoch(request->server->options.prepared, request->namespace_index, epoch, snapshot);
	if (rc == DIRAUTH_ERR_NOT_FOUND)
		*result = respond_error(request->connection, request->route, API_ERROR_NOT_FOUND,
		                        "No snapshot of this epoch is stored here.");
	else if (rc)
		*result = respond_error(request->connection, request->route, API_ERROR_INTERNAL,
		                        dirauth_strerror(rc));
	return rc ? -1 : 0;
}

enum MHD_Result http_serve_epoch_header(struct http_request *request)
{
	struct prepared_snapshot *snapshot = NULL;
	enum MHD_Result result;
	if (find_epoch(request, &snapshot, &result) != 0)
		return result;
	const char *if_none_match = http_request_header(request, MHD_HTTP_HEADER_IF_NONE_MATCH);
	if (respond_etag_matches(if_none_match, prepared_snapshot_header_etag(snapshot)))
		result = MHD_queue_response(request->connection, MHD_HTTP_NOT_MODIFIED,
		                            prepared_snapshot_header_not_modified(snapshot));
	else
		result = MHD_queue_response(request->connection, MHD_HTTP_OK,
		                            prepared_snapshot_header_response(snapshot));
	/* A queued response holds its own reference. */
	prepared_snapshot_release(snapshot);
	return result;
}

enum MHD_Result http_serve_epoch_body(struct http_request *request)
{
	enum content_encoding encoding = respond_negotiate(request->connection);
	struct prepared_snapshot *snapshot = NULL;
	enum MHD_Result result;
	if (find_epoch(request, &snapshot, &result) != 0)
		return result;
	const char *if_none_match = http_request_header(request, MHD_HTTP_HEADER_IF_NONE_MATCH);
	if (encoding == ENCODING_COUNT) {
		result = respond_error(request->connection, request->route, API_ERROR_NOT_ACCEPTABLE, NULL);
	} else if (respond_etag_matches(if_none_match, prepared_snapshot_body_etag(snapshot, encoding))) {
		result = MHD_queue_response(request->connection, MHD_HTTP_NOT_MODIFIED,
		                            prepared_snapshot_body_not_modified(snapshot, encoding));
	} else {
		struct MHD_Response *response = NULL;
		int rc = prepared_set_body(request->server->options.prepared, snapshot, encoding, &response,
		                           request->body_sending);
		if (rc == DIRAUTH_ERR_STALE)
			result =
			    respond_error(request->connection, request->route, API_ERROR_BODY_NOT_KEPT, NULL);
		else if (rc == DIRAUTH_ERR_NOT_FOUND)
			result = respond_error(request->connection, request->route, API_ERROR_NOT_FOUND,
			                       "No snapshot body of this epoch is stored here.");
		else if (rc)
			result = respond_error(request->connection, request->route, API_ERROR_INTERNAL,
			                       dirauth_strerror(rc));
		else
			result = MHD_queue_response(request->connection, MHD_HTTP_OK, response);
	}
	prepared_snapshot_release(snapshot);
	return result;
}

/* The 200 answer of a diff file (fd taken: closed in every case), immutable as a body is. */
static struct MHD_Response *diff_response(struct http_request *request, int fd, uint64_t size,
                                          enum content_encoding encoding)
{
	struct MHD_Response *response = MHD_create_response_from_fd64(size, fd);
	if (!response) {
		close(fd);
		return NULL;
	}
	if (MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, "application/octet-stream") !=
	        MHD_YES ||
	    MHD_add_response_header(response, MHD_HTTP_HEADER_CACHE_CONTROL,
	                            http_namespace_cache_control(request, HTTP_CACHE_IMMUTABLE)) != MHD_YES ||
	    MHD_add_response_header(response, MHD_HTTP_HEADER_VARY, "Accept-Encoding") != MHD_YES ||
	    (encoding != ENCODING_IDENTITY &&
	     MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_ENCODING,
	                             content_encoding_name(encoding)) != MHD_YES)) {
		MHD_destroy_response(response);
		return NULL;
	}
	return response;
}

enum MHD_Result http_serve_epoch_diff(struct http_request *request)
{
	enum content_encoding encoding = respond_negotiate(request->connection);
	const struct router_capture *base_text = &request->match.captures[2];
	struct prepared_snapshot *snapshot = NULL;
	enum MHD_Result result;
	uint8_t base[32];
	if (find_epoch(request, &snapshot, &result) != 0)
		return result;
	/* The epoch is published here: that is all the diff needs of its snapshot. */
	uint64_t epoch = prepared_snapshot_epoch(snapshot);
	prepared_snapshot_release(snapshot);
	if (base_text->len != 64 || hex_decode(base_text->data, base_text->len, base, sizeof base) != 0)
		return respond_error(request->connection, request->route, API_ERROR_NOT_FOUND,
		                     "The base is not a body's SHA-256 in 64 lower-case hex digits.");
	if (encoding == ENCODING_COUNT)
		return respond_error(request->connection, request->route, API_ERROR_NOT_ACCEPTABLE, NULL);
	int fd = -1;
	uint64_t size = 0;
	int rc = store_diff_open(request->server->options.store, http_namespace_name(request), epoch, base,
	                         encoding, &fd, &size);
	if (rc == DIRAUTH_ERR_NOT_FOUND)
		return respond_error(request->connection, request->route, API_ERROR_NO_DIFF, NULL);
	if (rc)
		return respond_error(request->connection, request->route, API_ERROR_INTERNAL,
		                     dirauth_strerror(rc));
	struct MHD_Response *response = diff_response(request, fd, size, encoding);
	if (!response)
		return respond_error(request->connection, request->route, API_ERROR_INTERNAL,
		                     dirauth_strerror(DIRAUTH_ERR_NOMEM));
	return respond_queue_and_destroy(request->connection, MHD_HTTP_OK, response);
}

enum MHD_Result http_serve_record_shard(struct http_request *request)
{
	const struct router_capture *name = &request->match.captures[2];
	struct prepared_snapshot *snapshot = NULL;
	enum MHD_Result result;
	if (find_epoch(request, &snapshot, &result) != 0)
		return result;
	uint64_t epoch = prepared_snapshot_epoch(snapshot);
	prepared_snapshot_release(snapshot);
	bool hex = name->len >= 1 && name->len <= RECORD_SHARD_NAME_MAX;
	for (size_t i = 0; hex && i < name->len; i++)
		hex = (name->data[i] >= '0' && name->data[i] <= '9') ||
		      (name->data[i] >= 'a' && name->data[i] <= 'f');
	if (!hex)
		return respond_error(request->connection, request->route, API_ERROR_RECORD_SHARD_MALFORMED,
		                     NULL);
	/* The epoch's shard bits are the packed file's; the name must be spelled at them. */
	unsigned bits;
	uint32_t index;
	struct buffer shard;
	buffer_init(&shard);
	int rc = store_record_shard_read(request->server->options.store, http_namespace_name(request), epoch,
	                                 UINT32_MAX, &bits, &shard);
	if (rc == 0 && record_shard_name_parse(name->data, name->len, bits, &index) != 0)
		rc = DIRAUTH_ERR_NOT_FOUND;
	if (rc == 0)
		rc = store_record_shard_read(request->server->options.store, http_namespace_name(request),
		                             epoch, index, &bits, &shard);
	if (rc == DIRAUTH_ERR_NOT_FOUND)
		result = respond_error(request->connection, request->route, API_ERROR_NO_RECORD_SHARD, NULL);
	else if (rc)
		result = respond_error(request->connection, request->route, API_ERROR_INTERNAL,
		                       dirauth_strerror(rc));
	else
		result = respond_bytes_negotiated(
		    request->connection, request->route, MHD_HTTP_OK, "application/octet-stream",
		    http_namespace_cache_control(request, HTTP_CACHE_IMMUTABLE), shard.data, shard.len);
	buffer_free(&shard);
	return result;
}

enum MHD_Result http_serve_headers_from(struct http_request *request)
{
	const struct http_options *o = &request->server->options;
	const struct router_capture *text = &request->match.captures[1];
	uint64_t from;
	if (text->len > SNAPSHOT_EPOCH_TEXT_MAX || decimal_parse(text->data, text->len, &from) != 0)
		return respond_error(request->connection, request->route, API_ERROR_NOT_FOUND,
		                     "The epoch is not a canonical decimal.");
	struct buffer out;
	buffer_init(&out);
	int rc = readpath_headers_from(o->store, http_namespace_name(request), from, &out);
	enum MHD_Result result;
	if (rc == DIRAUTH_ERR_NOT_FOUND)
		result = respond_error(request->connection, request->route, API_ERROR_NOT_FOUND,
		                       "Nothing has been published in this namespace yet.");
	else if (rc)
		result = respond_error(request->connection, request->route, API_ERROR_INTERNAL,
		                       dirauth_strerror(rc));
	else
		result = respond_bytes_negotiated(request->connection, request->route, MHD_HTTP_OK,
		                                  "application/octet-stream", "no-cache", out.data, out.len);
	buffer_free(&out);
	return result;
}
