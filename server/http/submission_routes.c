/*
 * submission_routes.c: the signed statements providers post (server/intake/).
 *
 * A registration's checks run in the request's thread (its signature verification is the
 * expensive part, and the thread pool spreads it over the cores); then the connection is
 * suspended while the store commits it with others and the signer signs its receipt with
 * others, so no thread waits for either, and the group commits and receipt batches grow with the
 * load.
 */
#include "server/http/routes.h"

#include "server/intake/submit.h"

#include <stdio.h>

static void registration_done(void *context, struct submit_result *result)
{
	struct http_deferred *deferred = context;
	deferred->error = result->error;
	snprintf(deferred->detail, sizeof deferred->detail, "%s", result->detail);
	deferred->status = MHD_HTTP_ACCEPTED;
	deferred->content_type = "text/plain; charset=utf-8";
	deferred->body = result->receipt;
	http_deferred_finish(deferred);
}

enum MHD_Result http_accept_registration(struct http_request *request)
{
	const struct http_options *o = &request->server->options;
	struct http_deferred *deferred = request->deferred;
	if (atomic_load(&deferred->ready))
		return http_deferred_respond(request);
	if (deferred->started)
		return MHD_YES; /* still waiting */
	struct submit_context context = {o->config, o->store, o->signer, o->signer_health, o->clock};
	struct submit_result result;
	http_deferred_begin(request);
	enum api_error error =
	    submit_registration_async(&context, request->body ? request->body : (const uint8_t *)"",
	                              request->body_len, registration_done, deferred, &result);
	if (error != API_ERROR_NONE)
		registration_done(deferred, &result);
	return MHD_YES;
}
