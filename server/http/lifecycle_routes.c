/*
 * lifecycle_routes.c: the routes of an endpoint's life after its registration (server/intake/
 * lifecycle.h): providers post signed health statements, revocations and deregistrations, and
 * peers fetch the statements a vote lists by their digest.
 *
 *   POST /v1/endpoint-health             a signed health statement  -> 202 + JSON
 *   POST /v1/revocations                 a signed revocation        -> 202 + JSON
 *   POST /v1/deregistrations             a signed deregistration    -> 202 + signed receipt
 *   GET  /v1/<ns>/statements/<sha256>    a kept health statement or revocation note
 *
 * "endpoint-health" is a provider's word about one of its endpoints; GET /v1/health stays this
 * server's own liveness (status_routes.c). Each submission is checked in the request's thread,
 * then the connection is suspended while the store commits it with others (and, for a
 * deregistration, while the signer signs its receipt), as for registrations.
 */
#include "server/http/routes.h"

#include "schema/encoding.h"
#include "schema/error.h"
#include "server/intake/lifecycle.h"
#include "server/store/lifecycle.h"

#include <stdio.h>

/* What a finished submission answers: the JSON acknowledgement, or a deregistration's receipt. */
static void finish(struct http_deferred *deferred, struct submit_result *result, const char *content_type)
{
	deferred->error = result->error;
	snprintf(deferred->detail, sizeof deferred->detail, "%s", result->detail);
	deferred->status = MHD_HTTP_ACCEPTED;
	deferred->content_type = content_type;
	deferred->body = result->receipt;
	http_deferred_finish(deferred);
}

static void acknowledged(void *context, struct submit_result *result)
{
	finish(context, result, "application/json");
}

static void receipted(void *context, struct submit_result *result)
{
	finish(context, result, "text/plain; charset=utf-8");
}

typedef enum api_error (*submit_async_fn)(const struct submit_context *context, const uint8_t *body,
                                          size_t len, submit_done done, void *done_context,
                                          struct submit_result *result);

static enum MHD_Result accept_statement(struct http_request *request, submit_async_fn submit,
                                        submit_done done)
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
	enum api_error error = submit(&context, request->body ? request->body : (const uint8_t *)"",
	                              request->body_len, done, deferred, &result);
	if (error != API_ERROR_NONE)
		done(deferred, &result);
	return MHD_YES;
}

enum MHD_Result http_accept_endpoint_health(struct http_request *request)
{
	return accept_statement(request, submit_health_async, acknowledged);
}

enum MHD_Result http_accept_revocation(struct http_request *request)
{
	return accept_statement(request, submit_revocation_async, acknowledged);
}

enum MHD_Result http_accept_deregistration(struct http_request *request)
{
	return accept_statement(request, submit_deregistration_async, receipted);
}

enum MHD_Result http_serve_statement(struct http_request *request)
{
	const struct http_options *o = &request->server->options;
	const struct config_namespace *ns = &o->config->namespaces[request->namespace_index];
	const struct router_capture *text = &request->match.captures[1];
	uint8_t digest[32];
	if (!ns->lifecycle)
		return respond_error(request->connection, request->route, API_ERROR_NOT_FOUND,
		                     "This namespace keeps no health statements or revocations.");
	if (text->len != 64 || hex_decode(text->data, text->len, digest, sizeof digest) != 0)
		return respond_error(request->connection, request->route, API_ERROR_NOT_FOUND,
		                     "A statement is named by its SHA-256: 64 lower-case hex digits.");
	struct buffer note;
	buffer_init(&note);
	int rc = store_statement_get(o->store, ns->name, digest, &note);
	if (rc) {
		buffer_free(&note);
		return respond_error(request->connection, request->route,
		                     rc == DIRAUTH_ERR_NOT_FOUND ? API_ERROR_NOT_FOUND : API_ERROR_INTERNAL,
		                     rc == DIRAUTH_ERR_NOT_FOUND
		                         ? "No statement with that digest is kept here."
		                         : dirauth_strerror(rc));
	}
	/* Named by its digest, the answer never changes. */
	struct MHD_Response *response =
	    MHD_create_response_from_buffer(note.len, note.data, MHD_RESPMEM_MUST_COPY);
	buffer_free(&note);
	if (!response)
		return MHD_NO;
	if (MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8") !=
	        MHD_YES ||
	    MHD_add_response_header(response, MHD_HTTP_HEADER_CACHE_CONTROL,
	                            "public, max-age=31536000, immutable") != MHD_YES) {
		MHD_destroy_response(response);
		return MHD_NO;
	}
	return respond_queue_and_destroy(request->connection, MHD_HTTP_OK, response);
}
