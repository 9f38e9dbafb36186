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

#include "server/http/answer_cache.h"
#include "server/http/guard.h"
#include "server/http/http.h"
#include "server/http/respond.h"
#include "server/http/router.h"
#include "server/intake/submit.h"
#include "server/tlog/witness.h"
#include "base/buffer.h"

#include <microhttpd.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct http_request;

struct http_server {
	struct http_options options;
	struct MHD_Daemon *daemon;
	struct http_guard *guard;
	pthread_mutex_t deferred_lock; /* guards deferred_count and stopping */
	pthread_cond_t deferred_idle;
	size_t deferred_count;      /* requests suspended for an answer made elsewhere, until answered */
	bool stopping;              /* http_server_stop has begun: no request is suspended any more */
	atomic_size_t vote_uploads; /* vote bodies being received */
	struct translog_witness *witness; /* add-checkpoint; NULL without a store and a signer */
	struct answer_cache *log_answers; /* the log's answers kept (log_routes.c, proof_routes.c) */
};

/* The most answers of the log kept at once; their bytes are bounded by http.log_cache_bytes. */
#define HTTP_LOG_ANSWERS_MAX 65536

/* An answer made outside the request's thread (a registration waiting for its commit and its
 * receipt): the handler suspends the connection and starts the work; whatever finishes it fills
 * the answer and calls http_deferred_finish, which resumes the connection; libmicrohttpd then
 * calls the handler again, which queues the answer. */
struct http_deferred {
	bool started;
	atomic_bool ready;
	struct http_server *server;
	struct MHD_Connection *connection;
	enum api_error error; /* API_ERROR_NONE: body is the answer */
	char detail[256];
	unsigned status;
	const char *content_type;
	struct buffer body;
};

/* Suspends the request's connection for an answer made elsewhere. Call from the handler before
 * starting the work. Returns false, suspending nothing, once the server is stopping: the caller
 * answers at once instead. */
bool http_deferred_begin(struct http_request *request);

/* Marks the answer ready and resumes the connection. Any thread, once per begin; the request
 * counts as deferred until libmicrohttpd has ended it (its completion callback). */
void http_deferred_finish(struct http_deferred *deferred);

/* Queues a ready deferred answer. */
enum MHD_Result http_deferred_respond(struct http_request *request);

struct http_request {
	struct http_server *server;
	/* The configuration whose live keys (server/config/reload.h: the enrolled providers, ...)
	 * a request with a body (a statement posted) reads: the one current when it began, held until
	 * it completes, so a reload during the request changes nothing under it. A request without a
	 * body gets the configuration the server started with (its restart-only keys are the same). */
	const struct config *config;
	struct MHD_Connection *connection;
	const struct respond_route *route; /* Allow and Vary of the matched route */
	struct router_match match;         /* the pattern's captures */
	size_t namespace_index;            /* for a route whose first capture is {namespace} */
	const uint8_t *body;               /* the uploaded body of a route that takes one */
	size_t body_len;
	struct http_deferred *deferred;      /* this request's slot for an answer made elsewhere */
	struct prepared_body **body_sending; /* this request's slot for the snapshot body it sends */
};

typedef enum MHD_Result (*http_handler)(struct http_request *request);

/* The value of request header name, or NULL. */
const char *http_request_header(const struct http_request *request, const char *name);

/* The name of the request's namespace (a "{namespace}" route). */
const char *http_namespace_name(const struct http_request *request);

/* How long an answer of a namespace may be kept: a year, as it never changes (a log tile, a
 * statement named by its digest, a consistency proof), or 5 s (the latest checkpoint and the
 * proofs to it). */
enum http_cache_lifetime { HTTP_CACHE_IMMUTABLE, HTTP_CACHE_LATEST_CHECKPOINT };

/* The Cache-Control of such an answer of the request's namespace: "public" in a public namespace,
 * "private" in a private one, whose answers are for its capability holders and never for a shared
 * cache (the latest snapshot header's, whose max-age is computed, comes from server/readpath). */
const char *http_namespace_cache_control(const struct http_request *request,
                                         enum http_cache_lifetime lifetime);

/* Snapshot reads (snapshot_routes.c). The capture after {namespace} is the epoch text. */
enum MHD_Result http_serve_latest_header(struct http_request *request);
enum MHD_Result http_serve_epoch_header(struct http_request *request);
enum MHD_Result http_serve_epoch_body(struct http_request *request);
/* GET /v1/<ns>/snapshots/<epoch>/diff/<base>: the third capture is the base body's SHA-256 in
 * hex; 404 no_diff when no diff from it to the epoch's body is kept (server/store/snapshots.h). */
enum MHD_Result http_serve_epoch_diff(struct http_request *request);
/* GET /v1/<ns>/snapshots/<epoch>/records/<shard>: the third capture is the shard's name
 * (schema/record-shard.md); 400 record_shard_malformed for a name that is not 1 to 6 lower-case
 * hex digits, 404 no_record_shard when the epoch's shards are not kept or have no such name. */
enum MHD_Result http_serve_record_shard(struct http_request *request);

/* The authority's own state (status_routes.c). */
enum MHD_Result http_serve_health(struct http_request *request);
enum MHD_Result http_serve_ready(struct http_request *request);
/* GET /v1/status: {"authority":"<its name>","time":<unix seconds>}, the time by the authority's
 * own clock (the injectable one the round runs on, not the system's), so that a health page can
 * tell which member answered and its clock skew. */
enum MHD_Result http_serve_status(struct http_request *request);
enum MHD_Result http_serve_certificates(struct http_request *request);
enum MHD_Result http_serve_metrics(struct http_request *request);

/* The transparency log, c2sp.org/tlog-tiles (log_routes.c). The capture after {namespace} of
 * the tile route is the rest of the path after "log/tile/". */
enum MHD_Result http_serve_log_checkpoint(struct http_request *request);
enum MHD_Result http_serve_log_tile(struct http_request *request);

/* c2sp.org/tlog-witness add-checkpoint (witness_routes.c). */
enum MHD_Result http_accept_add_checkpoint(struct http_request *request);

/* The log's proofs (proof_routes.c). Captures after {namespace}: the epoch, then the tree size
 * (proof/<epoch>/<size>); or the old and the new tree size (consistency). */
enum MHD_Result http_serve_log_proof(struct http_request *request);
enum MHD_Result http_serve_log_consistency(struct http_request *request);

/* Submissions (submission_routes.c). */
enum MHD_Result http_accept_registration(struct http_request *request);

/* How intake takes a posted statement without waiting (submit_registration_async's form). */
typedef enum api_error (*http_submit_fn)(const struct submit_context *context, const uint8_t *body,
                                         size_t len, submit_done done, void *done_context,
                                         struct submit_result *result);

/* The handler of every route that posts a statement: on its first call, submits the body and
 * suspends the connection until done has filled the answer (a refusal answers at once, through
 * done too); on the call after the resume, queues it. */
enum MHD_Result http_accept_submission(struct http_request *request, http_submit_fn submit, submit_done done);

/* done for http_accept_submission: a 202 with the result's signed receipt (text), or with its
 * JSON acknowledgement; a refusal as its error. */
void http_submission_receipted(void *context, struct submit_result *result);
void http_submission_acknowledged(void *context, struct submit_result *result);

/* The endpoint lifecycle (lifecycle_routes.c): health statements, revocations, deregistrations,
 * and the statements a vote lists, by digest (the capture after {namespace}). */
enum MHD_Result http_accept_endpoint_health(struct http_request *request);
enum MHD_Result http_accept_revocation(struct http_request *request);
enum MHD_Result http_accept_deregistration(struct http_request *request);
enum MHD_Result http_serve_statement(struct http_request *request);

/* Between authorities (peer_routes.c). Captures after {namespace}: the epoch, then the member;
 * or the service id, then the sequence. */
enum MHD_Result http_accept_vote(struct http_request *request);
enum MHD_Result http_serve_vote(struct http_request *request);
enum MHD_Result http_accept_signature(struct http_request *request);
enum MHD_Result http_serve_signatures(struct http_request *request);
enum MHD_Result http_serve_registration(struct http_request *request);
enum MHD_Result http_serve_evidence(struct http_request *request);
enum MHD_Result http_serve_notes(struct http_request *request);
enum MHD_Result http_serve_headers_from(struct http_request *request);

#endif
