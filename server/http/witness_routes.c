/*
 * witness_routes.c: POST /v1/<namespace>/log/add-checkpoint, c2sp.org/tlog-witness (docs/api.md,
 * "add-checkpoint"): this authority cosigning another authority's checkpoint of a log it follows.
 *
 * The handler only translates: the witness (server/tlog/witness.h) judges the request and
 * says what to answer. The statuses are the spec's; a 200 carries the cosignature line and a 409
 * the witness's tree size as text/x.tlog.size, exactly as the spec writes them, and every other
 * refusal is the API's JSON error. The body is capped at TRANSLOG_ADD_CHECKPOINT_MAX while it
 * arrives (http.c), so a larger one is 413 before it is read.
 */
#include "server/http/routes.h"

#include "base/error.h"

static enum api_error error_of(enum translog_witness_outcome outcome)
{
	switch (outcome) {
	case TRANSLOG_WITNESS_BAD_REQUEST:
		return API_ERROR_MALFORMED;
	case TRANSLOG_WITNESS_BAD_SIGNATURE:
		return API_ERROR_BAD_SIGNATURE;
	case TRANSLOG_WITNESS_UNKNOWN_LOG:
		return API_ERROR_LOG_UNKNOWN;
	case TRANSLOG_WITNESS_TOO_LARGE:
		return API_ERROR_BODY_TOO_LARGE;
	case TRANSLOG_WITNESS_INCONSISTENT:
		return API_ERROR_LOG_INCONSISTENT;
	case TRANSLOG_WITNESS_UNAVAILABLE:
		return API_ERROR_UNAVAILABLE;
	case TRANSLOG_WITNESS_COSIGNED:
	case TRANSLOG_WITNESS_CONFLICT:
	case TRANSLOG_WITNESS_FAILED:
		break;
	}
	return API_ERROR_INTERNAL;
}

enum MHD_Result http_accept_add_checkpoint(struct http_request *request)
{
	struct translog_witness *witness = request->server->witness;
	struct translog_witness_answer answer;
	if (!witness)
		return respond_error(request->connection, request->route, API_ERROR_UNAVAILABLE,
		                     "This authority has no signer to cosign with.");
	translog_witness_answer_init(&answer);
	int rc = translog_witness_add_checkpoint(witness, request->namespace_index,
	                                         request->body ? request->body : (const uint8_t *)"",
	                                         request->body_len, &answer);
	enum MHD_Result result;
	if (rc)
		result = respond_error(request->connection, request->route, API_ERROR_INTERNAL,
		                       dirauth_strerror(rc));
	else if (answer.outcome == TRANSLOG_WITNESS_COSIGNED)
		result = respond_bytes(request->connection, MHD_HTTP_OK, "text/plain; charset=utf-8",
		                       answer.body.data, answer.body.len);
	else if (answer.outcome == TRANSLOG_WITNESS_CONFLICT)
		result = respond_bytes(request->connection, MHD_HTTP_CONFLICT, TRANSLOG_SIZE_CONTENT_TYPE,
		                       answer.body.data, answer.body.len);
	else
		result = respond_error(request->connection, request->route, error_of(answer.outcome),
		                       answer.detail);
	translog_witness_answer_free(&answer);
	return result;
}
