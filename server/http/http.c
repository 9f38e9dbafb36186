/*
 * http.c: the daemon, the route table and the dispatch of each request to its handler.
 *
 * libmicrohttpd calls the access handler several times per request: once when the headers are
 * in, then once per piece of uploaded body, then once more with no data. Answers are queued on a
 * call after the first: libmicrohttpd 0.9.75 closes the connection after an answer queued on the
 * first call, and every answer here keeps the connection alive unless it must not. An answer is
 * queued on the first call only to refuse a body that will not be read (a declared length over
 * the cap), which must close the connection anyway.
 *
 * A route that takes a body (POST) gets it whole, counted as it arrives: a chunked upload keeps
 * at most the cap; once its count passes the cap the rest is dropped unread and answered 413 when
 * it ends (libmicrohttpd 0.9.75 cannot answer in the middle of an upload), or, past
 * HTTP_UPLOAD_DISCARD_MAX dropped bytes, the connection is closed. A body sent to a route that
 * takes none is dropped the same way before the route's answer.
 *
 * The kind of a route's body says whether it may come as Content-Encoding: zstd
 * (http_body_encodings: the votes and signatures peers push across continents). Such a body is
 * counted against the route's cap as it arrives, compressed, then decoded under the same cap
 * before the handler sees it, so the handler only ever gets plain bytes, and a bomb is cut as it
 * inflates (413). Any other Content-Encoding, or zstd where the route does not take it, is read
 * (within the cap, not kept) and answered 415 unsupported_encoding, the connection kept: the
 * sender may send the same body again, plain.
 *
 * Every path has one spelling. libmicrohttpd would decode percent-escapes before the handler
 * sees the path, so "/v1/mix/snapshots/%32%31" would reach the canonical-decimal check as "21"
 * and one epoch would have many URLs, each cached apart. The unescape callback leaves the path
 * as it came, and a path holding '%' is refused (404) before routing. A target in absolute form
 * ("http://host/v1/health", RFC 9112 3.2.2) is routed by the path it names (framing.h,
 * http_target_path), under the same rules.
 *
 * Nothing about a client (its address above all: hard rule 8) is logged or stored.
 */
#include "server/http/http.h"

#include "compress/compress.h"
#include "schema/encoding.h"
#include "base/error.h"
#include "schema/notes_bundle.h"
#include "server/http/access.h"
#include "server/http/framing.h"
#include "server/http/guard.h"
#include "server/http/routes.h"

#include "server/readpath/prepared.h"
#include "server/round/round.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

/* How much of a body that is not kept is read and dropped so that its sender still gets an
 * answer; past this the connection is closed instead. */
#define HTTP_UPLOAD_DISCARD_MAX (1024 * 1024)

enum http_methods { HTTP_METHODS_GET, HTTP_METHODS_POST };

/* The largest body a POST route keeps. */
enum http_body {
	HTTP_BODY_NONE,
	HTTP_BODY_REGISTRATION,   /* bounds.registration_body */
	HTTP_BODY_VOTE,           /* the largest vote envelope (server/round) */
	HTTP_BODY_SIGNATURE,      /* the largest signed header note */
	HTTP_BODY_ADD_CHECKPOINT, /* TRANSLOG_ADD_CHECKPOINT_MAX */
	HTTP_BODY_NOTES,          /* the longest notes request (schema/notes_bundle.h) */
};

/* The Content-Encodings a body is taken in. */
enum http_body_encodings {
	HTTP_BODY_AS_IS,         /* none (or identity) */
	HTTP_BODY_AS_IS_OR_ZSTD, /* also zstd, decoded under the route's cap before its handler */
};

/* Per kind of body: the encodings it may come in (its cap is route_body_cap's). A route opts in
 * to zstd bodies through the kind of its body. */
static const enum http_body_encodings http_body_encodings[] = {
    [HTTP_BODY_NONE] = HTTP_BODY_AS_IS,
    [HTTP_BODY_REGISTRATION] = HTTP_BODY_AS_IS,
    /* Pushed by peers, across continents: megabytes for a vote. */
    [HTTP_BODY_VOTE] = HTTP_BODY_AS_IS_OR_ZSTD,
    [HTTP_BODY_SIGNATURE] = HTTP_BODY_AS_IS_OR_ZSTD,
    /* c2sp.org/tlog-witness: as its spec has it. */
    [HTTP_BODY_ADD_CHECKPOINT] = HTTP_BODY_AS_IS,
    /* A list of up to 4,096 items between authorities. */
    [HTTP_BODY_NOTES] = HTTP_BODY_AS_IS_OR_ZSTD,
};

struct http_route {
	const char *pattern;
	enum http_methods methods;
	struct respond_route answer; /* Allow and Vary */
	http_handler handler;
	enum http_body body;
};

/* The API (docs/api.md). A route whose pattern starts with "/v1/{namespace}/" is resolved to a
 * served namespace before its handler runs. Patterns are tried in order. */
static const struct http_route http_routes[] = {
    {"/v1/registrations", HTTP_METHODS_POST, {"POST", 0}, http_accept_registration, HTTP_BODY_REGISTRATION},
    /* The endpoint lifecycle (lifecycle_routes.c); each document's own bound is checked by intake. */
    {"/v1/endpoint-health",
     HTTP_METHODS_POST,
     {"POST", 0},
     http_accept_endpoint_health,
     HTTP_BODY_REGISTRATION},
    {"/v1/revocations", HTTP_METHODS_POST, {"POST", 0}, http_accept_revocation, HTTP_BODY_REGISTRATION},
    {"/v1/deregistrations",
     HTTP_METHODS_POST,
     {"POST", 0},
     http_accept_deregistration,
     HTTP_BODY_REGISTRATION},
    {"/v1/{namespace}/statements/{digest}",
     HTTP_METHODS_GET,
     {"GET, HEAD", 1},
     http_serve_statement,
     HTTP_BODY_NONE},
    {"/v1/health", HTTP_METHODS_GET, {"GET, HEAD", 0}, http_serve_health, HTTP_BODY_NONE},
    {"/v1/ready", HTTP_METHODS_GET, {"GET, HEAD", 0}, http_serve_ready, HTTP_BODY_NONE},
    {"/v1/status", HTTP_METHODS_GET, {"GET, HEAD", 0}, http_serve_status, HTTP_BODY_NONE},
    {"/v1/certificates", HTTP_METHODS_GET, {"GET, HEAD", 0}, http_serve_certificates, HTTP_BODY_NONE},
    {"/v1/metrics", HTTP_METHODS_GET, {"GET, HEAD", 0}, http_serve_metrics, HTTP_BODY_NONE},
    {"/v1/{namespace}/snapshots/latest",
     HTTP_METHODS_GET,
     {"GET, HEAD", 0},
     http_serve_latest_header,
     HTTP_BODY_NONE},
    {"/v1/{namespace}/snapshots/{epoch}",
     HTTP_METHODS_GET,
     {"GET, HEAD", 0},
     http_serve_epoch_header,
     HTTP_BODY_NONE},
    {"/v1/{namespace}/snapshots/from/{epoch}",
     HTTP_METHODS_GET,
     {"GET, HEAD", 1},
     http_serve_headers_from,
     HTTP_BODY_NONE},
    {"/v1/{namespace}/snapshots/{epoch}/body",
     HTTP_METHODS_GET,
     {"GET, HEAD", 1},
     http_serve_epoch_body,
     HTTP_BODY_NONE},
    {"/v1/{namespace}/snapshots/{epoch}/diff/{base}",
     HTTP_METHODS_GET,
     {"GET, HEAD", 1},
     http_serve_epoch_diff,
     HTTP_BODY_NONE},
    {"/v1/{namespace}/snapshots/{epoch}/records/{shard}",
     HTTP_METHODS_GET,
     {"GET, HEAD", 1},
     http_serve_record_shard,
     HTTP_BODY_NONE},
    {"/v1/{namespace}/votes", HTTP_METHODS_POST, {"POST", 0}, http_accept_vote, HTTP_BODY_VOTE},
    {"/v1/{namespace}/votes/{epoch}/{member}",
     HTTP_METHODS_GET,
     {"GET, HEAD", 1},
     http_serve_vote,
     HTTP_BODY_NONE},
    {"/v1/{namespace}/signatures",
     HTTP_METHODS_POST,
     {"POST", 0},
     http_accept_signature,
     HTTP_BODY_SIGNATURE},
    {"/v1/{namespace}/signatures/{epoch}",
     HTTP_METHODS_GET,
     {"GET, HEAD", 1},
     http_serve_signatures,
     HTTP_BODY_NONE},
    {"/v1/{namespace}/registrations/{service}/{sequence}",
     HTTP_METHODS_GET,
     {"GET, HEAD", 1},
     http_serve_registration,
     HTTP_BODY_NONE},
    {"/v1/{namespace}/notes", HTTP_METHODS_POST, {"POST", 1}, http_serve_notes, HTTP_BODY_NOTES},
    {"/v1/{namespace}/evidence", HTTP_METHODS_GET, {"GET, HEAD", 1}, http_serve_evidence, HTTP_BODY_NONE},
    {"/v1/{namespace}/evidence/{epoch}",
     HTTP_METHODS_GET,
     {"GET, HEAD", 1},
     http_serve_evidence,
     HTTP_BODY_NONE},
    /* The transparency log (log_routes.c). */
    {"/v1/{namespace}/log/checkpoint",
     HTTP_METHODS_GET,
     {"GET, HEAD", 0},
     http_serve_log_checkpoint,
     HTTP_BODY_NONE},
    {"/v1/{namespace}/log/tile/{...}",
     HTTP_METHODS_GET,
     {"GET, HEAD", 0},
     http_serve_log_tile,
     HTTP_BODY_NONE},
    /* c2sp.org/tlog-witness: this authority cosigns the others' checkpoints (witness_routes.c). */
    {"/v1/{namespace}/log/add-checkpoint",
     HTTP_METHODS_POST,
     {"POST", 0},
     http_accept_add_checkpoint,
     HTTP_BODY_ADD_CHECKPOINT},
    /* The log's proofs (proof_routes.c). */
    {"/v1/{namespace}/log/proof/{epoch}",
     HTTP_METHODS_GET,
     {"GET, HEAD", 0},
     http_serve_log_proof,
     HTTP_BODY_NONE},
    {"/v1/{namespace}/log/proof/{epoch}/{size}",
     HTTP_METHODS_GET,
     {"GET, HEAD", 0},
     http_serve_log_proof,
     HTTP_BODY_NONE},
    {"/v1/{namespace}/log/consistency/{old}/{new}",
     HTTP_METHODS_GET,
     {"GET, HEAD", 0},
     http_serve_log_consistency,
     HTTP_BODY_NONE},
};

#define HTTP_ROUTE_COUNT (sizeof http_routes / sizeof http_routes[0])

/* How a request's body is coded, by its Content-Encoding and what its route takes. */
enum body_coding {
	BODY_AS_IS,   /* no Content-Encoding, or identity */
	BODY_ZSTD,    /* to be decoded before the handler */
	BODY_REFUSED, /* counted as it arrives, not kept, answered 415 */
};

/* Per-request state, from the first call of the handler to the completion callback. */
struct request_state {
	struct http_span path;          /* what the target names, in libmicrohttpd's url */
	const struct http_route *route; /* NULL: no route matched */
	struct router_match match;
	struct buffer body; /* kept when the route takes a body */
	size_t received;    /* of the body, as sent */
	int too_large;
	enum body_coding coding;
	int decoded;      /* body holds the decoded bytes of a zstd body */
	size_t discarded; /* bytes dropped */
	struct http_deferred deferred;
	int vote_upload;                    /* counted in the server's vote_uploads */
	struct prepared_body *body_sending; /* the snapshot body this request sends, or NULL */
	const struct config *config;        /* taken from options.live, given back at completion */
};

bool http_deferred_begin(struct http_request *request)
{
	struct http_deferred *d = request->deferred;
	struct http_server *server = request->server;
	pthread_mutex_lock(&server->deferred_lock);
	bool stopping = server->stopping;
	if (!stopping)
		server->deferred_count++;
	pthread_mutex_unlock(&server->deferred_lock);
	if (stopping)
		return false;
	d->started = true;
	d->server = server;
	d->connection = request->connection;
	MHD_suspend_connection(request->connection);
	return true;
}

void http_deferred_finish(struct http_deferred *d)
{
	atomic_store(&d->ready, true);
	MHD_resume_connection(d->connection);
}

/* A deferred request has ended (its answer sent, or its connection failed): one fewer for
 * http_server_stop to wait for. */
static void deferred_ended(struct http_server *server)
{
	pthread_mutex_lock(&server->deferred_lock);
	if (--server->deferred_count == 0)
		pthread_cond_broadcast(&server->deferred_idle);
	pthread_mutex_unlock(&server->deferred_lock);
}

enum MHD_Result http_deferred_respond(struct http_request *request)
{
	struct http_deferred *d = request->deferred;
	if (d->error != API_ERROR_NONE)
		return respond_error(request->connection, request->route, d->error, d->detail);
	return respond_bytes(request->connection, d->status, d->content_type,
	                     d->body.data ? d->body.data : (void *)"", d->body.len);
}

const char *http_request_header(const struct http_request *request, const char *name)
{
	return MHD_lookup_connection_value(request->connection, MHD_HEADER_KIND, name);
}

const char *http_namespace_name(const struct http_request *request)
{
	return request->server->options.config->namespaces[request->namespace_index].name;
}

const char *http_namespace_cache_control(const struct http_request *request,
                                         enum http_cache_lifetime lifetime)
{
	int immutable = lifetime == HTTP_CACHE_IMMUTABLE;
	if (config_namespace_is_private(request->server->options.config, request->namespace_index))
		return immutable ? "private, max-age=31536000, immutable" : "private, max-age=5";
	return immutable ? "public, max-age=31536000, immutable" : "public, max-age=5";
}

static int method_is_get(const char *method)
{
	return strcmp(method, MHD_HTTP_METHOD_GET) == 0 || strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
}

static int method_allowed(const struct http_route *route, const char *method)
{
	return route->methods == HTTP_METHODS_GET ? method_is_get(method)
	                                          : strcmp(method, MHD_HTTP_METHOD_POST) == 0;
}

/* A path ending in "/body": its error answers carry Vary like its other answers. */
static int is_body_path(struct http_span path)
{
	return path.len >= 5 && memcmp(path.data + path.len - 5, "/body", 5) == 0;
}

static int holds_percent(struct http_span path)
{
	return memchr(path.data, '%', path.len) != NULL;
}

static const struct http_route *route_find(struct http_span path, struct router_match *match)
{
	for (size_t i = 0; i < HTTP_ROUTE_COUNT; i++)
		if (router_match_path(http_routes[i].pattern, path.data, path.len, match))
			return &http_routes[i];
	return NULL;
}

static int route_takes_body(const struct http_route *route, const char *method)
{
	return route && route->methods == HTTP_METHODS_POST && strcmp(method, MHD_HTTP_METHOD_POST) == 0;
}

/* The most a route's body may hold. */
static size_t route_body_cap(const struct http_server *server, const struct http_route *route)
{
	const struct config *config = server->options.config;
	switch (route->body) {
	case HTTP_BODY_REGISTRATION:
		return config->bounds.registration_body;
	case HTTP_BODY_VOTE:
		return round_vote_body_max(config);
	case HTTP_BODY_SIGNATURE:
		return round_signature_body_max();
	case HTTP_BODY_ADD_CHECKPOINT:
		return TRANSLOG_ADD_CHECKPOINT_MAX;
	case HTTP_BODY_NOTES:
		return notes_request_max_bytes();
	case HTTP_BODY_NONE:
		break;
	}
	return 0;
}

/* Decodes the zstd body in state under route's cap, once (a deferred request comes back to
 * dispatch after its resume). Returns API_ERROR_NONE, or the refusal, its words in *detail. */
static enum api_error body_decode(struct http_server *server, const struct http_route *route,
                                  struct request_state *state, const char **detail)
{
	struct buffer plain;
	buffer_init(&plain);
	int rc = compress_decode(ENCODING_ZSTD, state->body.data, state->body.len,
	                         route_body_cap(server, route), &plain);
	if (rc) {
		buffer_free(&plain);
		*detail = rc == DIRAUTH_ERR_BOUNDS   ? "The zstd body inflates past the route's bound."
		          : rc == DIRAUTH_ERR_SYNTAX ? "The body is not one zstd frame."
		                                     : dirauth_strerror(rc);
		return rc == DIRAUTH_ERR_BOUNDS   ? API_ERROR_BODY_TOO_LARGE
		       : rc == DIRAUTH_ERR_SYNTAX ? API_ERROR_MALFORMED
		                                  : API_ERROR_INTERNAL;
	}
	buffer_free(&state->body);
	state->body = plain;
	state->decoded = 1;
	return API_ERROR_NONE;
}

/* The answer of a request whose headers and body are all in. */
static enum MHD_Result dispatch(struct http_server *server, struct MHD_Connection *connection,
                                const char *method, struct request_state *state)
{
	const struct http_route *route = state->route;
	if (holds_percent(state->path)) {
		/* The path is undecoded (unescape_none): a percent-escape would give a second URL to
		 * what has one. */
		struct respond_route answer = {NULL, is_body_path(state->path)};
		return respond_error(connection, &answer, API_ERROR_NOT_FOUND,
		                     "A path here never holds a percent-escape.");
	}
	if (!route) {
		struct respond_route answer = {NULL, is_body_path(state->path)};
		return respond_error(connection, &answer, API_ERROR_NOT_FOUND, NULL);
	}
	if (!method_allowed(route, method))
		return respond_error(connection, &route->answer, API_ERROR_METHOD_NOT_ALLOWED, NULL);
	/* Only a statement posted reads live keys (its provider's enrolment); a read never takes the
	 * holder's lock. */
	if (!state->config && server->options.live && route_takes_body(route, method))
		state->config = config_live_acquire(server->options.live);
	struct http_request request = {
	    .server = server,
	    .config = state->config ? state->config : server->options.config,
	    .connection = connection,
	    .route = &route->answer,
	    .match = state->match,
	    .deferred = &state->deferred,
	    .body_sending = &state->body_sending,
	};
	if (strncmp(route->pattern, "/v1/{namespace}/", 16) == 0) {
		/* A private namespace without its capability is answered as one not served (access.h). */
		const struct router_capture *ns = &state->match.captures[0];
		int index = http_access_namespace(
		    server->options.config, ns->data, ns->len,
		    MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION));
		if (index < 0)
			return respond_error(connection, &route->answer, API_ERROR_NOT_FOUND,
			                     "This namespace is not served here.");
		request.namespace_index = (size_t)index;
	}
	if (route_takes_body(route, method)) {
		if (state->too_large)
			return respond_error(connection, &route->answer, API_ERROR_BODY_TOO_LARGE, NULL);
		if (state->coding == BODY_REFUSED)
			return respond_error(connection, &route->answer, API_ERROR_UNSUPPORTED_ENCODING,
			                     NULL);
		if (state->coding == BODY_ZSTD && !state->decoded) {
			const char *detail = NULL;
			enum api_error refusal = body_decode(server, route, state, &detail);
			if (refusal != API_ERROR_NONE)
				return respond_error(connection, &route->answer, refusal, detail);
		}
		request.body = state->body.data;
		request.body_len = state->body.len;
	}
	return route->handler(&request);
}

/* The coding of a body posted to route with content_encodings Content-Encoding fields, value the
 * last one's. */
static enum body_coding body_coding_of(const struct http_route *route, size_t content_encodings,
                                       const char *value)
{
	if (content_encodings == 0 || (content_encodings == 1 && strcasecmp(value, "identity") == 0))
		return BODY_AS_IS;
	if (content_encodings == 1 && strcasecmp(value, "zstd") == 0 &&
	    http_body_encodings[route->body] == HTTP_BODY_AS_IS_OR_ZSTD)
		return BODY_ZSTD;
	return BODY_REFUSED;
}

/* The header fields libmicrohttpd parsed, as framing.h takes them. */
struct collected_fields {
	struct http_field fields[HTTP_HEAD_MAX_FIELDS + 1];
	size_t count;
};

static enum MHD_Result collect_field(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	(void)kind;
	struct collected_fields *c = cls;
	if (c->count == HTTP_HEAD_MAX_FIELDS + 1)
		return MHD_NO; /* one more than allowed is enough to refuse */
	c->fields[c->count].name = (struct http_span){key, key ? strlen(key) : 0};
	c->fields[c->count].value = (struct http_span){value ? value : "", value ? strlen(value) : 0};
	c->count++;
	return MHD_YES;
}

/* Whether the head libmicrohttpd parsed had CRLF line ends only and no folded line (framing.h
 * refuses both; libmicrohttpd takes a bare LF for a line end and joins a folded line onto the one
 * before, and the guard reads the raw bytes of a connection's first head only). libmicrohttpd
 * 0.9.75 parses a head in place in its read buffer: each line's CRLF becomes two NULs (a bare LF
 * one), a field's colon one, and the method, the version, every name and every value it hands out
 * point into that buffer, in the order of the head (a folded value is copied elsewhere); it also
 * tells the head's size from the method on, blank line included. So the head was CRLF lines
 * without a fold when two NULs follow the version, each name starts right after the two NULs
 * before it and ends in a NUL, its value follows the colon and blanks, two NULs follow the value,
 * and the blank line's two NULs end the head where its size says. The bytes past the head are not
 * read: they are the body, the next request, or memory not yet written. */
static int head_has_crlf_lines_only(struct MHD_Connection *connection, const char *method,
                                    const char *version, const struct collected_fields *collected)
{
	const union MHD_ConnectionInfo *info =
	    MHD_get_connection_info(connection, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
	if (!info || (uintptr_t)version < (uintptr_t)method)
		return 0;
	const char *end = method + info->header_size;
	const char *at = version + strlen(version);
	for (size_t i = 0; i <= collected->count; i++) {
		if ((uintptr_t)at + 2 > (uintptr_t)end || at[0] != '\0' || at[1] != '\0')
			return 0;
		at += 2;
		if (i == collected->count)
			break;
		const struct http_field *field = &collected->fields[i];
		if (field->name.data != at || field->name.len >= (size_t)(end - at) ||
		    at[field->name.len] != '\0')
			return 0;
		const char *value = at + field->name.len + 1;
		while ((uintptr_t)value < (uintptr_t)field->value.data && (*value == ' ' || *value == '\t'))
			value++;
		if (value != field->value.data || field->value.len > (size_t)(end - value))
			return 0;
		at = value + field->value.len;
	}
	/* The blank line: its two NULs, and the head ends there. */
	return (uintptr_t)at + 2 == (uintptr_t)end && at[0] == '\0' && at[1] == '\0';
}

/* The first call: the headers are in. Every request's framing is judged again here (the guard
 * judged the raw head of a connection's first request; later ones reach only libmicrohttpd's
 * parser, whose line ends head_has_crlf_lines_only checks). Returns MHD_YES to go on, or the
 * answer queued now. */
static enum MHD_Result begin_request(struct http_server *server, struct MHD_Connection *connection,
                                     const char *url, const char *method, const char *version,
                                     void **request_state)
{
	struct collected_fields *collected = malloc(sizeof *collected);
	struct http_framing framing;
	struct http_framing_verdict verdict;
	size_t content_encodings = 0;
	const char *content_encoding = NULL; /* libmicrohttpd's, alive as long as the request */
	if (!collected)
		return MHD_NO;
	collected->count = 0;
	MHD_get_connection_values(connection, MHD_HEADER_KIND, collect_field, collected);
	/* libmicrohttpd hands over the target as it came, its query cut off. */
	struct http_span path;
	int refused = http_target_path((struct http_span){url, strlen(url)}, &path) != 0;
	if (refused) {
		verdict.error = API_ERROR_BAD_REQUEST;
		snprintf(verdict.detail, sizeof verdict.detail, "%s", HTTP_TARGET_REFUSED);
	} else {
		refused = http_framing_check((struct http_span){version, strlen(version)},
		                             (struct http_span){method, strlen(method)}, collected->fields,
		                             collected->count, &framing, &verdict);
	}
	if (!refused && !head_has_crlf_lines_only(connection, method, version, collected)) {
		refused = 1;
		verdict.error = API_ERROR_BAD_REQUEST;
		snprintf(verdict.detail, sizeof verdict.detail,
		         "A line of the head does not end in CRLF, or is folded (obs-fold, RFC 9112 5.2).");
	}
	for (size_t i = 0; i < collected->count && i < HTTP_HEAD_MAX_FIELDS; i++) {
		const struct http_field *field = &collected->fields[i];
		if (field->name.len == 16 && strncasecmp(field->name.data, "Content-Encoding", 16) == 0) {
			content_encodings++;
			content_encoding = field->value.data;
		}
	}
	free(collected);
	if (refused) {
		http_guard_count(server->guard, http_guard_reason_of(verdict.error));
		return respond_error_closing(connection, verdict.error, verdict.detail);
	}
	struct request_state *state = calloc(1, sizeof *state);
	if (!state)
		return MHD_NO;
	buffer_init(&state->body);
	buffer_init(&state->deferred.body);
	atomic_init(&state->deferred.ready, false);
	*request_state = state;
	state->path = path;
	if (!holds_percent(path))
		state->route = route_find(path, &state->match);
	if (route_takes_body(state->route, method))
		state->coding = body_coding_of(state->route, content_encodings, content_encoding);
	if (framing.has_length || framing.chunked)
		http_guard_request_receiving(connection);
	else
		http_guard_request_answering(connection);
	/* A declared body that will not be read whole is refused before any of it is read; the
	 * connection closes, as the body is left unread. */
	size_t cap = route_takes_body(state->route, method) ? route_body_cap(server, state->route)
	                                                    : HTTP_UPLOAD_DISCARD_MAX;
	if (framing.has_length && framing.length > cap) {
		http_guard_count(server->guard, GUARD_REFUSED_BODY_TOO_LARGE);
		return respond_error_closing(connection, API_ERROR_BODY_TOO_LARGE, NULL);
	}
	/* A vote's body may be large: no more of them are taken at once than there are peers. */
	if (route_takes_body(state->route, method) && state->route->body == HTTP_BODY_VOTE) {
		size_t peers =
		    server->options.config->member_count > 1 ? server->options.config->member_count - 1 : 1;
		if (atomic_fetch_add(&server->vote_uploads, 1) >= peers) {
			atomic_fetch_sub(&server->vote_uploads, 1);
			return respond_error_closing(
			    connection, API_ERROR_UNAVAILABLE,
			    "As many votes as there are peers are being received; try again.");
		}
		state->vote_upload = 1;
	}
	return MHD_YES;
}

/* A piece of uploaded body: kept up to the route's cap, else counted and dropped. */
static enum MHD_Result receive_body(struct http_server *server, const char *method,
                                    struct request_state *state, const char *data, size_t size)
{
	if (!route_takes_body(state->route, method) || state->too_large) {
		/* Not kept. A body that goes on and on is cut off by closing the connection, without
		 * an answer. */
		state->discarded += size;
		return state->discarded > HTTP_UPLOAD_DISCARD_MAX ? MHD_NO : MHD_YES;
	}
	size_t cap = route_body_cap(server, state->route);
	if (size > cap - state->received) {
		/* libmicrohttpd 0.9.75 refuses a response queued while an upload is under way
		 * (MHD_queue_response answers MHD_NO), so the 413 goes out when the upload ends.
		 * Nothing past the cap is kept. */
		state->too_large = 1;
		state->discarded = size;
		buffer_free(&state->body);
		return MHD_YES;
	}
	state->received += size;
	if (state->coding == BODY_REFUSED)
		return MHD_YES; /* counted, not kept: it is answered 415 */
	return buffer_append(&state->body, data, size) == 0 ? MHD_YES : MHD_NO;
}

static enum MHD_Result handle_request(void *cls, struct MHD_Connection *connection, const char *url,
                                      const char *method, const char *version, const char *upload_data,
                                      size_t *upload_data_size, void **request_state)
{
	struct http_server *server = cls;
	struct request_state *state = *request_state;
	if (!state)
		return begin_request(server, connection, url, method, version, request_state);
	if (*upload_data_size) {
		size_t size = *upload_data_size;
		*upload_data_size = 0;
		return receive_body(server, method, state, upload_data, size);
	}
	http_guard_request_answering(connection);
	enum MHD_Result queued = dispatch(server, connection, method, state);
	if (state->vote_upload) {
		/* A vote is answered as soon as it is judged: its body is no longer held, so its place
		 * is free for the sender's next vote before this answer has even left. */
		state->vote_upload = 0;
		atomic_fetch_sub(&server->vote_uploads, 1);
		buffer_free(&state->body);
	}
	return queued;
}

static void request_completed(void *cls, struct MHD_Connection *connection, void **request_state,
                              enum MHD_RequestTerminationCode code)
{
	(void)code;
	http_guard_request_done(connection);
	struct request_state *state = *request_state;
	if (state) {
		if (state->vote_upload)
			atomic_fetch_sub(&((struct http_server *)cls)->vote_uploads, 1);
		if (state->deferred.started)
			deferred_ended(cls);
		prepared_body_sent(state->body_sending);
		if (state->config)
			config_live_release(((struct http_server *)cls)->options.live, state->config);
		buffer_free(&state->body);
		buffer_free(&state->deferred.body);
		free(state);
		*request_state = NULL;
	}
}

/* The unescape callback: leaves the path and arguments exactly as received, so that the handler
 * sees (and refuses) a percent-escape instead of its decoded form. */
static size_t unescape_none(void *cls, struct MHD_Connection *connection, char *text)
{
	(void)cls;
	(void)connection;
	return strlen(text);
}

/* A listening socket on config's address and port: non-blocking, as the guard accepts from it. */
static int listen_socket(const struct config *config, int *out)
{
	struct sockaddr_in address4;
	struct sockaddr_in6 address6;
	const struct sockaddr *address;
	socklen_t address_len;
	int family, one = 1;

	memset(&address4, 0, sizeof address4);
	memset(&address6, 0, sizeof address6);
	if (inet_pton(AF_INET, config->listen_address, &address4.sin_addr) == 1) {
		address4.sin_family = AF_INET;
		address4.sin_port = htons(config->listen_port);
		address = (const struct sockaddr *)&address4;
		address_len = sizeof address4;
		family = AF_INET;
	} else if (inet_pton(AF_INET6, config->listen_address, &address6.sin6_addr) == 1) {
		address6.sin6_family = AF_INET6;
		address6.sin6_port = htons(config->listen_port);
		address = (const struct sockaddr *)&address6;
		address_len = sizeof address6;
		family = AF_INET6;
	} else {
		return DIRAUTH_ERR_CONFIG;
	}
	int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return DIRAUTH_ERR_IO;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
	    (family == AF_INET6 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one) != 0) ||
	    bind(fd, address, address_len) != 0 || listen(fd, SOMAXCONN) != 0) {
		close(fd);
		return DIRAUTH_ERR_IO;
	}
	*out = fd;
	return 0;
}

/* libmicrohttpd's connection limit, which must never bind: the guard holds the limits (guard.h).
 * It hands over at most max_connections, and libmicrohttpd still counts a connection for a moment
 * after reporting it closed, so twice that may be counted at once; libmicrohttpd splits its limit
 * evenly between its threads and gives each connection to one of them by its descriptor's number,
 * so one thread may get them all. A connection handed over past a thread's share would be closed
 * unanswered. (Nor is libmicrohttpd given the per-address limit, which it would apply with the
 * same lag.) */
static unsigned mhd_connection_limit(const struct config_http *h)
{
	unsigned threads = h->threads > 1 ? h->threads : 1;
	return h->max_connections > UINT_MAX / 2 / threads ? UINT_MAX : 2 * h->max_connections * threads;
}

static struct http_guard_limits guard_limits(const struct config_http *h)
{
	struct http_guard_limits limits = {
	    .head_timeout_ms = h->header_timeout_seconds * 1000,
	    .body_timeout_ms = h->body_timeout_seconds * 1000,
	    .max_pending = h->max_pending_connections,
	    .max_per_address = h->max_connections_per_ip,
	    .log_interval_ms = h->log_interval_seconds * 1000,
	};
	return limits;
}

int http_server_start(const struct http_options *options, struct http_server **out)
{
	const struct config *config = options->config;
	const struct config_http *h = &config->http;
	int listen_fd = -1;

	*out = NULL;
	int rc = listen_socket(config, &listen_fd);
	if (rc)
		return rc;
	struct http_server *server = calloc(1, sizeof *server);
	if (!server) {
		close(listen_fd);
		return DIRAUTH_ERR_NOMEM;
	}
	server->options = *options;
	pthread_mutex_init(&server->deferred_lock, NULL);
	pthread_cond_init(&server->deferred_idle, NULL);
	struct http_guard_options guard_options = {
	    .listen_fd = listen_fd,
	    .limits = guard_limits(h),
	    .max_connections = h->max_connections,
	    .log = options->log,
	    .clock = options->clock,
	    .schedule = &config->epoch,
	};
	if ((rc = http_guard_create(&guard_options, &server->guard))) {
		close(listen_fd);
		free(server);
		return rc;
	}
	struct translog_witness_options witness_options = {.config = config,
	                                                   .store = options->store,
	                                                   .signer = options->signer,
	                                                   .log = options->log,
	                                                   .clock = options->clock};
	if (options->store && options->signer &&
	    (rc = translog_witness_new(&witness_options, &server->witness))) {
		http_guard_free(server->guard);
		free(server);
		return rc;
	}
	if ((rc = answer_cache_create(config->http.log_cache_bytes ? HTTP_LOG_ANSWERS_MAX : 0,
	                              config->http.log_cache_bytes, &server->log_answers))) {
		translog_witness_free(server->witness);
		http_guard_free(server->guard);
		free(server);
		return rc;
	}
	server->daemon = MHD_start_daemon(
	    MHD_USE_NO_LISTEN_SOCKET | MHD_USE_ITC | MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG |
	        MHD_ALLOW_SUSPEND_RESUME,
	    0, NULL, NULL, handle_request, server, MHD_OPTION_EXTERNAL_LOGGER, http_guard_log, server->guard,
	    MHD_OPTION_NOTIFY_CONNECTION, http_guard_notify_connection, server->guard,
	    MHD_OPTION_THREAD_POOL_SIZE, h->threads, MHD_OPTION_CONNECTION_TIMEOUT,
	    h->connection_timeout_seconds, MHD_OPTION_CONNECTION_LIMIT, mhd_connection_limit(h),
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT, h->connection_memory_limit, MHD_OPTION_NOTIFY_COMPLETED,
	    request_completed, server, MHD_OPTION_UNESCAPE_CALLBACK, unescape_none, NULL, MHD_OPTION_END);
	if (!server->daemon || (rc = http_guard_start(server->guard, server->daemon))) {
		if (server->daemon)
			MHD_stop_daemon(server->daemon);
		http_guard_free(server->guard);
		translog_witness_free(server->witness);
		answer_cache_free(server->log_answers);
		free(server);
		return rc ? rc : DIRAUTH_ERR_IO;
	}
	*out = server;
	return 0;
}

void http_server_reconfigure(struct http_server *server, const struct config *config)
{
	struct http_guard_limits limits = guard_limits(&config->http);
	http_guard_set_limits(server->guard, &limits);
}

void http_server_stop(struct http_server *server)
{
	if (!server)
		return;
	http_guard_stop(server->guard);
	/* Suspended requests are finished by the store and the signer, which still run: wait for
	 * them to be answered (request_completed), so that nothing finishes a request after
	 * libmicrohttpd has freed it and no answer made is dropped by the daemon's stop. A
	 * connection already open may still bring a request meanwhile: it is refused, not suspended
	 * (http_deferred_begin), so none is suspended when the daemon stops. */
	pthread_mutex_lock(&server->deferred_lock);
	server->stopping = true;
	while (server->deferred_count)
		pthread_cond_wait(&server->deferred_idle, &server->deferred_lock);
	pthread_mutex_unlock(&server->deferred_lock);
	MHD_stop_daemon(server->daemon);
	http_guard_free(server->guard);
	translog_witness_free(server->witness);
	answer_cache_free(server->log_answers);
	pthread_cond_destroy(&server->deferred_idle);
	pthread_mutex_destroy(&server->deferred_lock);
	free(server);
}
