/*
 * proof_routes.c: the proofs of each namespace's transparency log, under /v1/<namespace>/log/
 * beside the tiles (docs/api.md, "Proofs").
 *
 *   proof/<epoch>               the c2sp.org/tlog-proof file of that epoch's header against the
 *                               latest checkpoint
 *   proof/<epoch>/<size>        the same against the checkpoint of that tree size
 *   consistency/<old>/<new>     the consistency proof from tree size old to the checkpointed size
 *                               new, one base64 hash per line
 * The numbers are path segments in their one canonical decimal spelling, like every epoch of the
 * API (no query strings anywhere). A proof file carries a checkpoint note, which gains
 * cosignatures and, for the latest, moves on with each publication: cached a few seconds, like
 * the checkpoint. A consistency proof between two sizes of an append-only tree never changes once
 * new is checkpointed: immutable. Refusals are no-store, each with its code: 400 for a number that
 * is not canonical or sizes out of order, 404 for a log without a checkpoint, an epoch not in the
 * log or not in the tree asked for, a size never checkpointed.
 */
#include "server/http/routes.h"

#include "schema/checkpoint.h"
#include "schema/encoding.h"
#include "base/error.h"
#include "server/tlog/cosigning.h"
#include "server/tlog/translog.h"

#define PROOF_NUMBER_TEXT_MAX 20 /* digits of UINT64_MAX */

/* The route's capture number index as a canonical decimal; -1 when it is not one. */
static int capture_number(const struct http_request *request, size_t index, uint64_t *out)
{
	const struct router_capture *text = &request->match.captures[index];
	if (text->len == 0 || text->len > PROOF_NUMBER_TEXT_MAX ||
	    decimal_parse(text->data, text->len, out) != 0)
		return -1;
	return 0;
}

/* The tree size of the checkpoint the log route serves (log_routes.c: the published one, cosigned
 * by k authorities once several cosign): a proof against "the latest checkpoint" is against that
 * one, which a client can fetch beside it. */
static int served_size(const struct http_request *request, uint64_t *size)
{
	struct buffer note;
	struct note *parsed = NULL;
	struct checkpoint checkpoint;
	buffer_init(&note);
	int rc = translog_checkpoint_served(request->server->options.store, request->server->options.config,
	                                    request->namespace_index, &note);
	if (rc == 0)
		rc = note_parse(note.data, note.len, &parsed);
	if (rc == 0)
		rc = checkpoint_parse(parsed->text, parsed->text_len, &checkpoint);
	if (rc == 0)
		*size = checkpoint.tree_size;
	else if (rc != DIRAUTH_ERR_NOT_FOUND)
		rc = DIRAUTH_ERR_STORE;
	note_free(parsed);
	buffer_free(&note);
	return rc;
}

static enum MHD_Result answer(struct http_request *request, const char *cache, const uint8_t *body,
                              size_t len)
{
	struct MHD_Response *response = MHD_create_response_from_buffer(
	    len, (void *)(len ? body : (const uint8_t *)""), MHD_RESPMEM_MUST_COPY);
	if (!response)
		return MHD_NO;
	if (MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8") !=
	        MHD_YES ||
	    MHD_add_response_header(response, MHD_HTTP_HEADER_CACHE_CONTROL, cache) != MHD_YES) {
		MHD_destroy_response(response);
		return MHD_NO;
	}
	return respond_queue_and_destroy(request->connection, MHD_HTTP_OK, response);
}

static enum MHD_Result refuse_missing(struct http_request *request, enum translog_proof_miss miss)
{
	enum api_error error = API_ERROR_LOG_NO_CHECKPOINT;
	if (miss == TRANSLOG_PROOF_MISS_EPOCH_NOT_IN_LOG)
		error = API_ERROR_LOG_EPOCH_NOT_IN_LOG;
	else if (miss == TRANSLOG_PROOF_MISS_EPOCH_NOT_IN_TREE)
		error = API_ERROR_LOG_EPOCH_NOT_IN_TREE;
	else if (miss == TRANSLOG_PROOF_MISS_SIZE_NOT_CHECKPOINTED)
		error = API_ERROR_LOG_SIZE_NOT_CHECKPOINTED;
	return respond_error(request->connection, request->route, error, NULL);
}

enum MHD_Result http_serve_log_proof(struct http_request *request)
{
	uint64_t epoch = 0, size = 0;
	if (capture_number(request, 1, &epoch) != 0)
		return respond_error(request->connection, request->route, API_ERROR_LOG_PROOF_MALFORMED,
		                     "The epoch is not a canonical decimal.");
	if (request->match.count > 2 && (capture_number(request, 2, &size) != 0 || size == 0))
		return respond_error(request->connection, request->route, API_ERROR_LOG_PROOF_MALFORMED,
		                     "The tree size is not a canonical decimal of at least 1.");

	struct buffer file;
	enum translog_proof_miss miss = TRANSLOG_PROOF_MISS_NONE;
	int rc = 0;
	if (size == 0) {
		rc = served_size(request, &size);
		if (rc == DIRAUTH_ERR_NOT_FOUND)
			return respond_error(request->connection, request->route, API_ERROR_LOG_NO_CHECKPOINT,
			                     NULL);
		if (rc)
			return respond_error(request->connection, request->route, API_ERROR_INTERNAL,
			                     dirauth_strerror(rc));
	}
	buffer_init(&file);
	rc = translog_inclusion_proof(request->server->options.store, http_namespace_name(request), epoch,
	                              size, &file, &miss);
	enum MHD_Result result;
	if (rc == DIRAUTH_ERR_NOT_FOUND)
		result = refuse_missing(request, miss);
	else if (rc)
		result = respond_error(request->connection, request->route, API_ERROR_INTERNAL,
		                       dirauth_strerror(rc));
	else
		result = answer(request, http_namespace_cache_control(request, HTTP_CACHE_LATEST_CHECKPOINT),
		                file.data, file.len);
	buffer_free(&file);
	return result;
}

enum MHD_Result http_serve_log_consistency(struct http_request *request)
{
	uint64_t old_size = 0, new_size = 0;
	if (capture_number(request, 1, &old_size) != 0 || capture_number(request, 2, &new_size) != 0)
		return respond_error(request->connection, request->route, API_ERROR_LOG_PROOF_MALFORMED,
		                     "A tree size is not a canonical decimal.");
	if (new_size == 0 || old_size > new_size)
		return respond_error(request->connection, request->route, API_ERROR_LOG_PROOF_MALFORMED,
		                     "The new tree size must be at least 1 and not below the old one.");

	struct buffer text;
	enum translog_proof_miss miss = TRANSLOG_PROOF_MISS_NONE;
	buffer_init(&text);
	int rc = translog_consistency_proof(request->server->options.store, http_namespace_name(request),
	                                    old_size, new_size, &text, &miss);
	enum MHD_Result result;
	if (rc == DIRAUTH_ERR_NOT_FOUND)
		result = refuse_missing(request, miss);
	else if (rc)
		result = respond_error(request->connection, request->route, API_ERROR_INTERNAL,
		                       dirauth_strerror(rc));
	else
		result = answer(request, http_namespace_cache_control(request, HTTP_CACHE_IMMUTABLE),
		                text.data, text.len);
	buffer_free(&text);
	return result;
}
