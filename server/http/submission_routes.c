/*
 * submission_routes.c: the signed statements providers post (server/intake/).
 */
#include "server/http/routes.h"

#include "server/intake/submit.h"

enum MHD_Result http_accept_registration(struct http_request *request)
{
	const struct http_options *o = &request->server->options;
	struct submit_context context = {o->config, o->store, o->signer, o->signer_health, o->clock};
	struct submit_result result;
	enum api_error error = submit_registration(
	    &context, request->body ? request->body : (const uint8_t *)"", request->body_len, &result);
	enum MHD_Result answer;
	if (error != API_ERROR_NONE)
		answer = respond_error(request->connection, NULL, error, result.detail);
	else
		answer = respond_bytes(request->connection, MHD_HTTP_ACCEPTED, "text/plain; charset=utf-8",
		                       result.receipt.data, result.receipt.len);
	buffer_free(&result.receipt);
	return answer;
}
