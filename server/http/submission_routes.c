/*
 * submission_routes.c: the signed statements providers post (server/intake/), and the one way
 * every such route answers.
 *
 * A statement's checks run in the request's thread (a signature verification is the expensive
 * part, and the thread pool spreads it over the cores); then the connection is suspended while
 * the store commits it with others and, for what earns a receipt, the signer signs it with
 * others, so no thread waits for either, and the group commits and receipt batches grow with
 * the load (a thread waits only while the store holds its most unanswered requests, until the
 * committer answers a batch: store.h). lifecycle_routes.c posts its statements through the same
 * http_accept_submission.
 */
#include "server/http/routes.h"

#include <stdio.h>

/* What a finished submission answers: its receipt (or JSON acknowledgement), or its refusal. */
static void answer(struct http_deferred *deferred, struct submit_result *result, const char *content_type)
{
	deferred->error = result->error;
	snprintf(deferred->detail, sizeof deferred->detail, "%s", result->detail);
	deferred->status = MHD_HTTP_ACCEPTED;
	deferred->content_type = content_type;
	deferred->body = result->receipt;
	http_deferred_finish(deferred);
}

void http_submission_receipted(void *context, struct submit_result *result)
{
	answer(context, result, "text/plain; charset=utf-8");
}

void http_submission_acknowledged(void *context, struct submit_result *result)
{
	answer(context, result, "application/json");
}

enum MHD_Result http_accept_submission(struct http_request *request, http_submit_fn submit, submit_done done)
{
	const struct http_options *o = &request->server->options;
	struct http_deferred *deferred = request->deferred;
	if (atomic_load(&deferred->ready))
		return http_deferred_respond(request);
	if (deferred->started)
		return MHD_YES; /* still waiting */
	struct submit_context context = {request->config, o->store, o->signer, o->signer_health, o->clock};
	struct submit_result result;
	if (!http_deferred_begin(request))
		return respond_error_closing(request->connection, API_ERROR_UNAVAILABLE,
		                             "The authority is stopping; nothing was stored.");
	enum api_error error = submit(&context, request->body ? request->body : (const uint8_t *)"",
	                              request->body_len, done, deferred, &result);
	if (error != API_ERROR_NONE)
		done(deferred, &result);
	return MHD_YES;
}

enum MHD_Result http_accept_registration(struct http_request *request)
{
	return http_accept_submission(request, submit_registration_async, http_submission_receipted);
}
