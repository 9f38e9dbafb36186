/*
 * routes.h: the request as the route handlers see it (internal to server/http).
 *
 * http.c matches the path against the route table, checks the method and resolves the
 * namespace of a "{namespace}" route before a handler runs, so a handler starts from a request
 * that is known to be for it. A route that takes a body (POST) gets it whole, capped while it
 * arrived. Handlers queue exactly one answer and return what MHD_queue_response returned.
 */
#ifndef DIRAUTH_SERVER_HTTP_ROUTES_H
#define DIRAUTH_SERVER_HTTP_ROUTES_H

#include "server/http/guard.h"
#include "server/http/http.h"
#include "server/http/respond.h"
#include "server/http/router.h"

#include <microhttpd.h>

#include <stddef.h>
#include <stdint.h>

struct http_server {
	struct http_options options;
	struct MHD_Daemon *daemon;
	struct http_guard *guard;
};

struct http_request {
	struct http_server *server;
	struct MHD_Connection *connection;
	const struct respond_route *route; /* Allow and Vary of the matched route */
	struct router_match match;         /* the pattern's captures */
	size_t namespace_index;            /* for a route whose first capture is {namespace} */
	const uint8_t *body;               /* the uploaded body of a route that takes one */
	size_t body_len;
};

typedef enum MHD_Result (*http_handler)(struct http_request *request);

/* The value of request header name, or NULL. */
const char *http_request_header(const struct http_request *request, const char *name);

/* Snapshot reads (snapshot_routes.c). The capture after {namespace} is the epoch text. */
enum MHD_Result http_serve_latest_header(struct http_request *request);
enum MHD_Result http_serve_epoch_header(struct http_request *request);
enum MHD_Result http_serve_epoch_body(struct http_request *request);

/* The authority's own state (status_routes.c). */
enum MHD_Result http_serve_health(struct http_request *request);
enum MHD_Result http_serve_ready(struct http_request *request);
enum MHD_Result http_serve_certificates(struct http_request *request);

/* Submissions (submission_routes.c). */
enum MHD_Result http_accept_registration(struct http_request *request);

#endif
