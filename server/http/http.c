/*
 * http.c: request routing and the handlers of the HTTP API.
 *
 * libmicrohttpd calls the access handler several times per request: once when the headers
 * are in (upload_data NULL), then once per piece of uploaded body, then once more with no data.
 * GET requests are answered on the first call. A registration upload is counted as it
 * arrives: a Content-Length over the cap is answered 413 before any body is read. A chunked
 * upload keeps at most cap bytes; once its count passes the cap the rest is dropped unread
 * and answered 413 when it ends (libmicrohttpd 0.9.75 cannot answer in the middle of an
 * upload), or, past HTTP_UPLOAD_DISCARD_MAX dropped bytes, the connection is closed.
 *
 * Snapshot responses come prepared (prepared.h): a request picks the one for its encoding and
 * its If-None-Match and queues it. Only the "latest" header is built per request, because its
 * max-age shrinks as the epoch runs out.
 *
 * Every path has one spelling. libmicrohttpd would decode percent-escapes before the handler
 * sees the path, so "/v1/mix/snapshots/%32%31" would reach the canonical-decimal check as "21"
 * and one epoch would have many URLs, each cached apart. The unescape callback leaves the path
 * as it came, and a path holding '%' is refused (404) before routing.
 *
 * Error answers are never stored by caches (Cache-Control: no-store): a 404 for an epoch not yet
 * published, or for "latest" before the first snapshot, would otherwise be kept by heuristic
 * freshness and served after publication. Every answer on a body path carries Vary:
 * Accept-Encoding, errors included, since what is answered there depends on that header.
 */
#include "server/http/http.h"

#include "server/api/api_error.h"
#include "schema/encoding.h"
#include "server/scheduler/scheduler.h"
#include "schema/error.h"
#include "server/intake/submit.h"

#include <microhttpd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define HTTP_PREFIX             "/v1/"
#define HTTP_EPOCH_TEXT_MAX     20 /* digits of UINT64_MAX */
/* How much of an oversized chunked upload is read and dropped so that its sender still gets
 * its 413; past this the connection is closed instead. */
#define HTTP_UPLOAD_DISCARD_MAX (1024 * 1024)

struct http_server {
	struct http_options options;
	struct MHD_Daemon *daemon;
};

/* Per-request state of a registration upload. */
struct upload {
	struct buffer body;
	int too_large;
	size_t discarded; /* bytes dropped after the cap was passed */
};

static int is_get(const char *method)
{
	return strcmp(method, MHD_HTTP_METHOD_GET) == 0 || strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
}

static enum MHD_Result queue_and_destroy(struct MHD_Connection *connection, unsigned status,
                                         struct MHD_Response *response)
{
	if (!response)
		return MHD_NO;
	enum MHD_Result result = MHD_queue_response(connection, status, response);
	MHD_destroy_response(response);
	return result;
}

static enum MHD_Result respond_bytes(struct MHD_Connection *connection, unsigned status,
                                     const char *content_type, const void *data, size_t len)
{
	struct MHD_Response *response =
	    MHD_create_response_from_buffer(len, (void *)data, MHD_RESPMEM_MUST_COPY);
	if (!response)
		return MHD_NO;
	if (MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, content_type) != MHD_YES) {
		MHD_destroy_response(response);
		return MHD_NO;
	}
	return queue_and_destroy(connection, status, response);
}

/* What a route adds to its error answers: the methods it allows (for a 405) and whether its
 * answers vary with Accept-Encoding. */
struct route {
	const char *allow;
	int vary;
};

static const struct route route_none = {NULL, 0};
static const struct route route_post = {"POST", 0};
static const struct route route_get = {"GET, HEAD", 0};

static enum MHD_Result respond_route_error(struct MHD_Connection *connection, const struct route *route,
                                           enum api_error error, const char *detail)
{
	struct buffer body;
	buffer_init(&body);
	if (api_error_json(error, detail, &body) != 0) {
		buffer_free(&body);
		return MHD_NO;
	}
	struct MHD_Response *response =
	    MHD_create_response_from_buffer(body.len, body.data, MHD_RESPMEM_MUST_COPY);
	buffer_free(&body);
	if (!response)
		return MHD_NO;
	if (MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json") != MHD_YES ||
	    MHD_add_response_header(response, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store") != MHD_YES ||
	    (error == API_ERROR_METHOD_NOT_ALLOWED && route->allow &&
	     MHD_add_response_header(response, MHD_HTTP_HEADER_ALLOW, route->allow) != MHD_YES) ||
	    (route->vary &&
	     MHD_add_response_header(response, MHD_HTTP_HEADER_VARY, "Accept-Encoding") != MHD_YES)) {
		MHD_destroy_response(response);
		return MHD_NO;
	}
	return queue_and_destroy(connection, api_error_status(error), response);
}

/* An error answer of a path that adds nothing (no Allow, no Vary). */
static enum MHD_Result respond_error(struct MHD_Connection *connection, enum api_error error,
                                     const char *detail)
{
	return respond_route_error(connection, &route_none, error, detail);
}

/* Weak comparison (RFC 9110 13.1.2) of etag against an If-None-Match value: "*" or a list of
 * entity tags, each maybe W/-prefixed. */
static int etag_matches(const char *if_none_match, const char *etag)
{
	if (!if_none_match)
		return 0;
	size_t etag_len = strlen(etag);
	const char *p = if_none_match;
	while (*p) {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		if (*p == '*')
			return 1;
		if (p[0] == 'W' && p[1] == '/')
			p += 2;
		if (*p != '"')
			return 0;
		const char *end = strchr(p + 1, '"');
		if (!end)
			return 0;
		size_t len = (size_t)(end - p) + 1;
		if (len == etag_len && memcmp(p, etag, len) == 0)
			return 1;
		p = end + 1;
	}
	return 0;
}

static const char *request_header(struct MHD_Connection *connection, const char *name)
{
	return MHD_lookup_connection_value(connection, MHD_HEADER_KIND, name);
}

/* ---- snapshots ---- */

static enum MHD_Result serve_latest_header(struct http_server *server, struct MHD_Connection *connection,
                                           size_t namespace_index)
{
	struct prepared_snapshot *snapshot = NULL;
	if (prepared_set_latest(server->options.prepared, namespace_index, &snapshot) != 0)
		return respond_error(connection, API_ERROR_NOT_FOUND,
		                     "Nothing has been published in this namespace yet.");
	uint64_t now = 0, max_age = 0;
	if (clock_now(server->options.clock, &now) == 0 && now < snapshot->fresh_until)
		max_age = snapshot->fresh_until - now;
	char cache_control[64];
	snprintf(cache_control, sizeof cache_control, "public, max-age=%llu", (unsigned long long)max_age);
	int not_modified =
	    etag_matches(request_header(connection, MHD_HTTP_HEADER_IF_NONE_MATCH), snapshot->header_etag);
	struct MHD_Response *response =
	    not_modified ? MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT)
	                 : MHD_create_response_from_buffer(snapshot->header_note_len, snapshot->header_note,
	                                                   MHD_RESPMEM_MUST_COPY);
	enum MHD_Result result = MHD_NO;
	if (response &&
	    MHD_add_response_header(response, MHD_HTTP_HEADER_ETAG, snapshot->header_etag) == MHD_YES &&
	    MHD_add_response_header(response, MHD_HTTP_HEADER_CACHE_CONTROL, cache_control) == MHD_YES &&
	    (not_modified || MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE,
	                                             "text/plain; charset=utf-8") == MHD_YES)) {
		result = queue_and_destroy(connection, not_modified ? MHD_HTTP_NOT_MODIFIED : MHD_HTTP_OK,
		                           response);
		response = NULL;
	}
	if (response)
		MHD_destroy_response(response);
	prepared_snapshot_release(snapshot);
	return result;
}

/* An epoch's header, or its body (route->vary set). An older epoch comes from the store header
 * first: the header answers and the body's 304s never read the body, and a body is read and
 * compressed in the one encoding asked for. */
static enum MHD_Result serve_epoch(struct http_server *server, struct MHD_Connection *connection,
                                   const struct route *route, size_t namespace_index, uint64_t epoch)
{
	int body = route->vary;
	enum content_encoding encoding =
	    body ? compress_negotiate(request_header(connection, MHD_HTTP_HEADER_ACCEPT_ENCODING))
	         : ENCODING_IDENTITY;
	struct prepared_snapshot *snapshot = NULL;
	int rc = prepared_set_epoch(server->options.prepared, namespace_index, epoch, &snapshot);
	if (rc == DIRAUTH_ERR_NOT_FOUND)
		return respond_route_error(connection, route, API_ERROR_NOT_FOUND,
		                           "No snapshot of this epoch is stored here.");
	if (rc)
		return respond_route_error(connection, route, API_ERROR_INTERNAL, dirauth_strerror(rc));
	const char *if_none_match = request_header(connection, MHD_HTTP_HEADER_IF_NONE_MATCH);
	enum MHD_Result result;
	if (!body) {
		if (etag_matches(if_none_match, snapshot->header_etag))
			result = MHD_queue_response(connection, MHD_HTTP_NOT_MODIFIED,
			                            snapshot->header_not_modified);
		else
			result = MHD_queue_response(connection, MHD_HTTP_OK, snapshot->header_response);
	} else if (encoding == ENCODING_COUNT) {
		result = respond_route_error(connection, route, API_ERROR_NOT_ACCEPTABLE, NULL);
	} else if (etag_matches(if_none_match, snapshot->body_etag[encoding])) {
		result = MHD_queue_response(connection, MHD_HTTP_NOT_MODIFIED,
		                            snapshot->body_not_modified[encoding]);
	} else {
		struct MHD_Response *response = NULL;
		rc = prepared_set_body(server->options.prepared, snapshot, encoding, &response);
		if (rc)
			result =
			    respond_route_error(connection, route, API_ERROR_INTERNAL, dirauth_strerror(rc));
		else
			result = MHD_queue_response(connection, MHD_HTTP_OK, response);
	}
	/* A queued response holds its own reference. */
	prepared_snapshot_release(snapshot);
	return result;
}

/* Routes "/v1/<ns>/snapshots/..." (rest is what follows "/v1/"). Returns -1 when the path is
 * not a snapshot path. */
static int route_snapshot(struct http_server *server, struct MHD_Connection *connection, const char *method,
                          const char *rest, enum MHD_Result *result)
{
	const char *slash = strchr(rest, '/');
	if (!slash || strncmp(slash, "/snapshots/", 11) != 0)
		return -1;
	const char *what = slash + 11;
	const char *epoch_end = strchr(what, '/');
	if (epoch_end && strcmp(epoch_end, "/body") != 0)
		return -1;
	/* A body path: every answer, errors too, varies with Accept-Encoding. */
	struct route route = {"GET, HEAD", epoch_end != NULL};
	if (!is_get(method)) {
		*result = respond_route_error(connection, &route, API_ERROR_METHOD_NOT_ALLOWED, NULL);
		return 0;
	}
	int index = config_namespace_index(server->options.config, rest, (size_t)(slash - rest));
	if (index < 0) {
		*result = respond_route_error(connection, &route, API_ERROR_NOT_FOUND,
		                              "This namespace is not served here.");
		return 0;
	}
	if (strcmp(what, "latest") == 0) {
		*result = serve_latest_header(server, connection, (size_t)index);
		return 0;
	}
	size_t epoch_len = epoch_end ? (size_t)(epoch_end - what) : strlen(what);
	uint64_t epoch;
	if (epoch_len > HTTP_EPOCH_TEXT_MAX || decimal_parse(what, epoch_len, &epoch) != 0) {
		*result = respond_route_error(connection, &route, API_ERROR_NOT_FOUND,
		                              "The epoch is not a canonical decimal.");
		return 0;
	}
	*result = serve_epoch(server, connection, &route, (size_t)index, epoch);
	return 0;
}

/* ---- health ---- */

static enum MHD_Result serve_ready(struct http_server *server, struct MHD_Connection *connection)
{
	const struct http_options *o = &server->options;
	uint64_t value;
	char why[SIGNER_HEALTH_DETAIL_MAX];
	int rc = store_snapshot_latest(o->store, o->config->namespaces[0].name, &value);
	if (rc != 0 && rc != DIRAUTH_ERR_NOT_FOUND)
		return respond_error(connection, API_ERROR_UNAVAILABLE, "The store cannot be read.");
	if (clock_now(o->clock, &value) != 0)
		return respond_error(connection, API_ERROR_UNAVAILABLE, "The clock cannot be read.");
	if (signer_health_check(o->signer_health, why, sizeof why) != 0)
		return respond_error(connection, API_ERROR_UNAVAILABLE, why);
	static const char ready[] = "{\"status\":\"ready\"}";
	return respond_bytes(connection, MHD_HTTP_OK, "application/json", ready, sizeof ready - 1);
}

/* The signer's certificate bundle, asked afresh: it changes only when the operator rotates the
 * signing key, and a minute of caching downstream covers the load. */
static enum MHD_Result serve_certificates(struct http_server *server, struct MHD_Connection *connection)
{
	const struct http_options *o = &server->options;
	struct buffer bundle;
	char why[SIGNER_DETAIL_MAX + 1], detail[SIGNER_DETAIL_MAX + 64];
	buffer_init(&bundle);
	int rc =
	    signer_client_query(o->signer, SIGNER_OP_GET_CERTIFICATES, NULL, 0, &bundle, why, sizeof why);
	signer_health_note(o->signer_health, rc == DIRAUTH_ERR_UNAVAILABLE ? rc : 0, why);
	if (rc) {
		buffer_free(&bundle);
		snprintf(detail, sizeof detail, "signer %s: %s",
		         rc == DIRAUTH_ERR_UNAVAILABLE ? "unreachable" : "refused",
		         why[0] ? why : dirauth_strerror(rc));
		return respond_error(connection, API_ERROR_UNAVAILABLE, detail);
	}
	struct MHD_Response *response = MHD_create_response_from_buffer(
	    bundle.len, bundle.data ? (void *)bundle.data : (void *)"", MHD_RESPMEM_MUST_COPY);
	buffer_free(&bundle);
	if (!response)
		return MHD_NO;
	if (MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8") !=
	        MHD_YES ||
	    MHD_add_response_header(response, MHD_HTTP_HEADER_CACHE_CONTROL, "public, max-age=60") !=
	        MHD_YES) {
		MHD_destroy_response(response);
		return MHD_NO;
	}
	return queue_and_destroy(connection, MHD_HTTP_OK, response);
}

/* ---- registrations ---- */

static enum MHD_Result finish_registration(struct http_server *server, struct MHD_Connection *connection,
                                           struct upload *upload)
{
	const struct http_options *o = &server->options;
	struct submit_context context = {o->config, o->store, o->signer, o->signer_health, o->clock};
	struct submit_result result;
	enum api_error error = submit_registration(
	    &context, upload->body.data ? upload->body.data : (const uint8_t *)"", upload->body.len, &result);
	enum MHD_Result answer;
	if (error != API_ERROR_NONE)
		answer = respond_error(connection, error, result.detail);
	else
		answer = respond_bytes(connection, MHD_HTTP_ACCEPTED, "text/plain; charset=utf-8",
		                       result.receipt.data, result.receipt.len);
	buffer_free(&result.receipt);
	return answer;
}

static enum MHD_Result handle_registration(struct http_server *server, struct MHD_Connection *connection,
                                           const char *upload_data, size_t *upload_data_size,
                                           void **request_state)
{
	size_t cap = server->options.config->bounds.registration_body;
	struct upload *upload = *request_state;
	if (!upload) {
		/* Headers only so far: refuse a declared oversize before reading any of the body. */
		const char *length_text = request_header(connection, MHD_HTTP_HEADER_CONTENT_LENGTH);
		uint64_t length;
		if (length_text &&
		    (decimal_parse(length_text, strlen(length_text), &length) != 0 || length > cap)) {
			if (decimal_parse(length_text, strlen(length_text), &length) != 0)
				return respond_error(connection, API_ERROR_MALFORMED,
				                     "The Content-Length is not valid.");
			return respond_error(connection, API_ERROR_BODY_TOO_LARGE, NULL);
		}
		upload = calloc(1, sizeof *upload);
		if (!upload)
			return MHD_NO;
		buffer_init(&upload->body);
		*request_state = upload;
		return MHD_YES;
	}
	if (*upload_data_size) {
		size_t size = *upload_data_size;
		*upload_data_size = 0;
		if (upload->too_large) {
			/* Past the cap: count and drop. An upload that goes on and on is cut off by
			 * closing the connection, without an answer. */
			upload->discarded += size;
			return upload->discarded > HTTP_UPLOAD_DISCARD_MAX ? MHD_NO : MHD_YES;
		}
		if (size > cap - upload->body.len) {
			/* libmicrohttpd 0.9.75 refuses a response queued while an upload is under way
			 * (MHD_queue_response answers MHD_NO), so the 413 goes out when the upload ends.
			 * Nothing past the cap is kept. */
			upload->too_large = 1;
			upload->discarded = size;
			buffer_free(&upload->body);
			return MHD_YES;
		}
		if (buffer_append(&upload->body, upload_data, size) != 0)
			return MHD_NO;
		return MHD_YES;
	}
	if (upload->too_large)
		return respond_error(connection, API_ERROR_BODY_TOO_LARGE, NULL);
	return finish_registration(server, connection, upload);
}

static void request_completed(void *cls, struct MHD_Connection *connection, void **request_state,
                              enum MHD_RequestTerminationCode code)
{
	(void)cls;
	(void)connection;
	(void)code;
	struct upload *upload = *request_state;
	if (upload) {
		buffer_free(&upload->body);
		free(upload);
		*request_state = NULL;
	}
}

/* A path ending in "/body": its error answers carry Vary like its other answers. */
static int is_body_path(const char *url)
{
	size_t len = strlen(url);
	return len >= 5 && strcmp(url + len - 5, "/body") == 0;
}

static enum MHD_Result handle_request(void *cls, struct MHD_Connection *connection, const char *url,
                                      const char *method, const char *version, const char *upload_data,
                                      size_t *upload_data_size, void **request_state)
{
	(void)version;
	struct http_server *server = cls;
	if (strchr(url, '%')) {
		/* url is undecoded (unescape_none): a percent-escape would give a second URL to what
		 * has one. */
		struct route route = {NULL, is_body_path(url)};
		return respond_route_error(connection, &route, API_ERROR_NOT_FOUND,
		                           "A path here never holds a percent-escape.");
	}
	if (strcmp(url, "/v1/registrations") == 0) {
		if (strcmp(method, MHD_HTTP_METHOD_POST) != 0)
			return respond_route_error(connection, &route_post, API_ERROR_METHOD_NOT_ALLOWED,
			                           NULL);
		return handle_registration(server, connection, upload_data, upload_data_size, request_state);
	}
	if (strcmp(url, "/v1/health") == 0) {
		if (!is_get(method))
			return respond_route_error(connection, &route_get, API_ERROR_METHOD_NOT_ALLOWED,
			                           NULL);
		static const char ok[] = "{\"status\":\"ok\"}";
		return respond_bytes(connection, MHD_HTTP_OK, "application/json", ok, sizeof ok - 1);
	}
	if (strcmp(url, "/v1/certificates") == 0) {
		if (!is_get(method))
			return respond_route_error(connection, &route_get, API_ERROR_METHOD_NOT_ALLOWED,
			                           NULL);
		return serve_certificates(server, connection);
	}
	if (strcmp(url, "/v1/ready") == 0) {
		if (!is_get(method))
			return respond_route_error(connection, &route_get, API_ERROR_METHOD_NOT_ALLOWED,
			                           NULL);
		return serve_ready(server, connection);
	}
	if (strncmp(url, HTTP_PREFIX, strlen(HTTP_PREFIX)) == 0) {
		enum MHD_Result result;
		if (route_snapshot(server, connection, method, url + strlen(HTTP_PREFIX), &result) == 0)
			return result;
	}
	struct route route = {NULL, is_body_path(url)};
	return respond_route_error(connection, &route, API_ERROR_NOT_FOUND, NULL);
}

/* The unescape callback: leaves the path and arguments exactly as received, so that the handler
 * sees (and refuses) a percent-escape instead of its decoded form. */
static size_t unescape_none(void *cls, struct MHD_Connection *connection, char *text)
{
	(void)cls;
	(void)connection;
	return strlen(text);
}

/* libmicrohttpd's own diagnostics. Its messages describe the server, not clients; they go to
 * stderr with a prefix so they are told apart from dirauthd's own lines. */
static void http_log(void *cls, const char *format, va_list args) __attribute__((format(printf, 2, 0)));

static void http_log(void *cls, const char *format, va_list args)
{
	(void)cls;
	fputs("dirauthd: http: ", stderr);
	vfprintf(stderr, format, args);
}

int http_server_start(const struct http_options *options, struct http_server **out)
{
	const struct config *config = options->config;
	struct sockaddr_in address4;
	struct sockaddr_in6 address6;
	const struct sockaddr *address;
	unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG;

	*out = NULL;
	memset(&address4, 0, sizeof address4);
	memset(&address6, 0, sizeof address6);
	if (inet_pton(AF_INET, config->listen_address, &address4.sin_addr) == 1) {
		address4.sin_family = AF_INET;
		address4.sin_port = htons(config->listen_port);
		address = (const struct sockaddr *)&address4;
	} else if (inet_pton(AF_INET6, config->listen_address, &address6.sin6_addr) == 1) {
		address6.sin6_family = AF_INET6;
		address6.sin6_port = htons(config->listen_port);
		address = (const struct sockaddr *)&address6;
		flags |= MHD_USE_IPv6;
	} else {
		return DIRAUTH_ERR_CONFIG;
	}
	struct http_server *server = calloc(1, sizeof *server);
	if (!server)
		return DIRAUTH_ERR_NOMEM;
	server->options = *options;
	server->daemon = MHD_start_daemon(
	    flags, config->listen_port, NULL, NULL, handle_request, server, MHD_OPTION_EXTERNAL_LOGGER,
	    http_log, NULL, MHD_OPTION_SOCK_ADDR, address, MHD_OPTION_THREAD_POOL_SIZE,
	    (unsigned)config->http.threads, MHD_OPTION_CONNECTION_TIMEOUT,
	    (unsigned)config->http.connection_timeout_seconds, MHD_OPTION_CONNECTION_LIMIT,
	    (unsigned)config->http.max_connections, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
	    (unsigned)config->http.max_connections_per_ip, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
	    (size_t)config->http.connection_memory_limit, MHD_OPTION_NOTIFY_COMPLETED, request_completed,
	    NULL, MHD_OPTION_UNESCAPE_CALLBACK, unescape_none, NULL, MHD_OPTION_END);
	if (!server->daemon) {
		free(server);
		return DIRAUTH_ERR_IO;
	}
	*out = server;
	return 0;
}

void http_server_stop(struct http_server *server)
{
	if (!server)
		return;
	MHD_stop_daemon(server->daemon);
	free(server);
}
