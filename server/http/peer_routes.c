/*
 * peer_routes.c: the routes between authorities (docs/protocol.md): votes, signatures, the
 * registration notes a vote lists, and the evidence kept.
 *
 * The handlers only translate: the round (server/round) judges and keeps every statement, and
 * what it answers is sent as it is. An authority alone has no round; its vote and signature
 * routes answer 404, while a registration note can be fetched from any authority.
 *
 * What is served here is made for the request, and goes as zstd to a peer that takes it
 * (respond_bytes_negotiated): a vote or the evidence can be megabytes, across continents.
 *
 * Statements are judged in the request's thread: a vote's body is parsed whole (bounded by the
 * namespace's records per snapshot), which is the heaviest request dirauthd takes, so at most as
 * many vote uploads as there are other members are taken at once (http.c).
 */
#include "server/http/routes.h"

#include "schema/encoding.h"
#include "base/error.h"
#include "schema/registration.h"
#include "server/readpath/bulk.h"
#include "server/round/round.h"
#include "server/store/registrations.h"

#include <stdio.h>
#include <string.h>

#define PEER_EPOCH_TEXT_MAX 20
#define EVIDENCE_ANSWER_MAX ((size_t)256 << 20)

static enum MHD_Result alone(struct http_request *request)
{
	return respond_error(request->connection, request->route, API_ERROR_NOT_FOUND,
	                     "This authority is not part of a set of authorities; it takes no votes.");
}

static enum MHD_Result answer_round(struct http_request *request, const struct round_answer *answer)
{
	if (answer->error != API_ERROR_NONE)
		return respond_error(request->connection, request->route, answer->error, answer->detail);
	char text[ROUND_DETAIL_MAX + 2];
	int n = snprintf(text, sizeof text, "%s\n", answer->detail);
	return respond_bytes(request->connection, answer->status, "text/plain; charset=utf-8", text,
	                     (size_t)n);
}

/* The decimal of capture c, or a 404 queued in *result. */
static int capture_decimal(struct http_request *request, size_t c, uint64_t *value, enum MHD_Result *result,
                           const char *what)
{
	const struct router_capture *text = &request->match.captures[c];
	if (text->len > PEER_EPOCH_TEXT_MAX || decimal_parse(text->data, text->len, value) != 0) {
		char sentence[96];
		snprintf(sentence, sizeof sentence, "The %s is not a canonical decimal.", what);
		*result = respond_error(request->connection, request->route, API_ERROR_NOT_FOUND, sentence);
		return -1;
	}
	return 0;
}

static enum MHD_Result answer_bytes(struct http_request *request, int rc, struct buffer *bytes,
                                    const char *content_type, const char *missing)
{
	enum MHD_Result result;
	if (rc == 0)
		result = respond_bytes_negotiated(
		    request->connection, request->route, MHD_HTTP_OK, content_type, NULL,
		    bytes->data ? (const void *)bytes->data : (const void *)"", bytes->len);
	else if (rc == DIRAUTH_ERR_NOT_FOUND)
		result = respond_error(request->connection, request->route, API_ERROR_NOT_FOUND, missing);
	else
		result = respond_error(request->connection, request->route, API_ERROR_INTERNAL,
		                       dirauth_strerror(rc));
	buffer_free(bytes);
	return result;
}

enum MHD_Result http_accept_vote(struct http_request *request)
{
	struct round *round = request->server->options.round;
	struct round_answer answer;
	if (!round)
		return alone(request);
	round_accept_vote(round, request->namespace_index,
	                  request->body ? request->body : (const uint8_t *)"", request->body_len, &answer);
	return answer_round(request, &answer);
}

enum MHD_Result http_serve_vote(struct http_request *request)
{
	struct round *round = request->server->options.round;
	struct buffer out;
	uint64_t epoch;
	enum MHD_Result result;
	if (!round)
		return alone(request);
	if (capture_decimal(request, 1, &epoch, &result, "epoch") != 0)
		return result;
	const struct router_capture *member = &request->match.captures[2];
	char name[NOTE_NAME_MAX + 1];
	if (member->len > NOTE_NAME_MAX)
		return respond_error(request->connection, request->route, API_ERROR_NOT_FOUND,
		                     "No member of this authority set has that name.");
	memcpy(name, member->data, member->len);
	name[member->len] = 0;
	buffer_init(&out);
	int rc = round_vote_get(round, request->namespace_index, epoch, name, &out);
	return answer_bytes(request, rc, &out, "application/octet-stream",
	                    "No vote of that member for that epoch is held here.");
}

enum MHD_Result http_accept_signature(struct http_request *request)
{
	struct round *round = request->server->options.round;
	struct round_answer answer;
	if (!round)
		return alone(request);
	round_accept_signature(round, request->namespace_index,
	                       request->body ? request->body : (const uint8_t *)"", request->body_len,
	                       &answer);
	return answer_round(request, &answer);
}

enum MHD_Result http_serve_signatures(struct http_request *request)
{
	struct round *round = request->server->options.round;
	struct buffer out;
	uint64_t epoch;
	enum MHD_Result result;
	if (!round)
		return alone(request);
	if (capture_decimal(request, 1, &epoch, &result, "epoch") != 0)
		return result;
	buffer_init(&out);
	int rc = round_signatures_get(round, request->namespace_index, epoch, &out);
	return answer_bytes(request, rc, &out, "text/plain; charset=utf-8",
	                    "No header with a signature is held here for that epoch.");
}

enum MHD_Result http_serve_registration(struct http_request *request)
{
	const struct http_options *o = &request->server->options;
	const struct router_capture *id = &request->match.captures[1];
	uint8_t service_id[SERVICE_ID_SIZE];
	uint64_t sequence;
	enum MHD_Result result;
	if (id->len != 2 * SERVICE_ID_SIZE ||
	    hex_decode(id->data, id->len, service_id, sizeof service_id) != 0)
		return respond_error(request->connection, request->route, API_ERROR_NOT_FOUND,
		                     "A service id is 64 lower-case hex digits.");
	if (capture_decimal(request, 2, &sequence, &result, "sequence") != 0)
		return result;
	struct buffer out;
	buffer_init(&out);
	int rc = store_registration_get(o->store, http_namespace_name(request), service_id, sequence, &out);
	return answer_bytes(request, rc, &out, "text/plain; charset=utf-8",
	                    "No registration of that service and sequence is kept here.");
}

enum MHD_Result http_serve_evidence(struct http_request *request)
{
	struct round *round = request->server->options.round;
	struct buffer out;
	uint64_t from = 0;
	enum MHD_Result result;
	if (!round)
		return alone(request);
	if (request->match.count > 1 && capture_decimal(request, 1, &from, &result, "epoch") != 0)
		return result;
	buffer_init(&out);
	int rc = round_evidence_get(round, request->namespace_index, from, EVIDENCE_ANSWER_MAX, &out);
	if (rc == DIRAUTH_ERR_BOUNDS) {
		buffer_free(&out);
		return respond_error(request->connection, request->route, API_ERROR_UNAVAILABLE,
		                     "The evidence kept is larger than one answer; ask from a later epoch.");
	}
	return answer_bytes(request, rc, &out, "application/octet-stream", "");
}

enum MHD_Result http_serve_notes(struct http_request *request)
{
	const struct http_options *o = &request->server->options;
	struct buffer out;
	buffer_init(&out);
	int rc = readpath_notes_answer(o->store, http_namespace_name(request),
	                               request->body ? request->body : (const uint8_t *)"", request->body_len,
	                               o->config->bounds.registration_body, &out);
	if (rc == DIRAUTH_ERR_SYNTAX || rc == DIRAUTH_ERR_BOUNDS) {
		buffer_free(&out);
		return respond_error(request->connection, request->route, API_ERROR_MALFORMED,
		                     "The body is not a notes request (schema/notes-bundle.md).");
	}
	return answer_bytes(request, rc, &out, "application/octet-stream", "");
}
