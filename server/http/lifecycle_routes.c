/*
 * lifecycle_routes.c: the routes of an endpoint's life after its registration (server/intake/
 * statements.h): providers post signed health statements, revocations and deregistrations, and
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
 * deregistration, while the signer signs its receipt), through submission_routes.c's
 * http_accept_submission, as registrations are.
 */
#include "server/http/routes.h"

#include "schema/encoding.h"
#include "base/error.h"
#include "server/intake/statements.h"
#include "server/store/statements.h"

enum MHD_Result http_accept_endpoint_health(struct http_request *request)
{
	return http_accept_submission(request, submit_health_async, http_submission_acknowledged);
}

enum MHD_Result http_accept_revocation(struct http_request *request)
{
	return http_accept_submission(request, submit_revocation_async, http_submission_acknowledged);
}

enum MHD_Result http_accept_deregistration(struct http_request *request)
{
	return http_accept_submission(request, submit_deregistration_async, http_submission_receipted);
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
	/* Named by its digest, the answer never changes; a private namespace's is for its capability
	 * holders only. As zstd to a peer that takes it. */
	enum MHD_Result result = respond_bytes_negotiated(
	    request->connection, request->route, MHD_HTTP_OK, "text/plain; charset=utf-8",
	    http_namespace_cache_control(request, HTTP_CACHE_IMMUTABLE),
	    note.data ? (const void *)note.data : "", note.len);
	buffer_free(&note);
	return result;
}
