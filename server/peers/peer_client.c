/*
 * peer_client.c: the bounded exchange with one other member of the authority set (see
 * peer_client.h; all of them at once is peer_client_broadcast.c).
 *
 * net_perform already bounds one exchange (caps, timeouts, no redirects); what this file adds is
 * the policy of peer traffic around it. The retry loop is its own rather than net's, because
 * peers are retried after transport failures and 5xx only (net also retries 429, which a peer's
 * front door uses for "not from you, not now"), and it runs under one deadline for the whole
 * operation, so a hanging peer costs one timeout and not one per attempt. Each member has its own
 * pool of connections, so a slow member holds only its own. What differs between operations
 * (method, content type, whether a body is compressed and an answer decoded) is one row of
 * operation_kinds; their paths are build_url's and their caps peer_client_answer_cap's. A
 * broadcast runs this same loop for each member (peer_client_broadcast.c).
 */
#include "server/peers/peer_client.h"
#include "server/peers/peer_client_internal.h"

#include "net/client.h"
#include "net/pool.h"
#include "compress/compress.h"
#include "crypto/crypto.h"
#include "schema/encoding.h"
#include "base/error.h"
#include "schema/vote_body.h"
#include "schema/vote_envelope.h"
#include "server/peers/capabilities.h"
#include "verify/snapshot.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* An attempt that failed this close to its connect budget, or later, ran out of time. */
#define TIMEOUT_SLACK_MS 50u

/* What sets an operation apart, but for its path (build_url) and its cap (peer_client_answer_cap). */
struct operation_kind {
	const char *method;          /* "GET" or "POST" */
	const char *content_type;    /* the header line of a POST's body; NULL for a GET */
	const char *accept_encoding; /* the header line naming the encodings the answer may come in */
	int has_namespace;           /* the path names a namespace */
	int compressed;              /* a body of PEER_COMPRESS_MIN bytes or more goes as zstd */
	int decoded;                 /* an answer that comes as zstd is decoded here */
};

#define POST_NOTE     "POST", "Content-Type: text/plain; charset=utf-8"
#define POST_ENVELOPE "POST", "Content-Type: application/octet-stream"
#define GET           "GET", NULL
#define ZSTD          "Accept-Encoding: zstd"

static const struct operation_kind operation_kinds[PEER_OPERATION_COUNT] = {
    [PEER_PUSH_VOTE] = {POST_ENVELOPE, ZSTD, 1, 1, 1},
    [PEER_PULL_VOTE] = {GET, ZSTD, 1, 0, 1},
    [PEER_PUSH_SIGNATURE] = {POST_NOTE, ZSTD, 1, 1, 1},
    [PEER_PULL_SIGNATURES] = {GET, ZSTD, 1, 0, 1},
    [PEER_FETCH_REGISTRATION] = {GET, ZSTD, 1, 0, 1},
    [PEER_FETCH_CERTIFICATES] = {GET, ZSTD, 0, 0, 1},
    [PEER_FETCH_LATEST_HEADER] = {GET, ZSTD, 1, 0, 1},
    [PEER_FETCH_HEADER] = {GET, ZSTD, 1, 0, 1},
    /* As served: verify/snapshot.h decodes it with the header's own bounds. */
    [PEER_FETCH_BODY] = {GET, "Accept-Encoding: zstd, gzip", 1, 0, 0},
    /* c2sp.org/tlog-witness says nothing of encodings: its body goes as the spec has it. */
    [PEER_ADD_CHECKPOINT] = {POST_NOTE, ZSTD, 1, 0, 1},
    [PEER_FETCH_STATEMENT] = {GET, ZSTD, 1, 0, 1},
    [PEER_FETCH_NOTES] = {POST_NOTE, ZSTD, 1, 1, 1},
    [PEER_FETCH_HEADERS] = {GET, ZSTD, 1, 0, 1},
};

#undef POST_NOTE
#undef POST_ENVELOPE
#undef GET
#undef ZSTD

static const char *const transport_names[] = {
    [PEER_TRANSPORT_ANSWERED] = "answered", [PEER_TRANSPORT_UNREACHABLE] = "unreachable",
    [PEER_TRANSPORT_TIMEOUT] = "timeout",   [PEER_TRANSPORT_TOO_LARGE] = "too_large",
    [PEER_TRANSPORT_FAILED] = "failed",     [PEER_TRANSPORT_SKIPPED] = "skipped",
};

const char *peer_transport_name(enum peer_transport_outcome transport)
{
	if ((size_t)transport >= sizeof(transport_names) / sizeof(transport_names[0]))
		return "failed";
	return transport_names[transport];
}

const char *peer_failure_name(enum peer_failure failure)
{
	static const char *const names[PEER_FAILURE_COUNT] = {"unreachable", "timeout", "too_large",
	                                                      "server_error", "other"};
	return (size_t)failure < PEER_FAILURE_COUNT ? names[failure] : "other";
}

static void count_failure(const struct peer_client *client, size_t member, const struct peer_answer *answer)
{
	enum peer_failure failure;
	if (member >= client->member_count)
		return;
	switch (answer->transport) {
	case PEER_TRANSPORT_ANSWERED:
		if (answer->status < 500)
			return;
		failure = PEER_FAILURE_SERVER_ERROR;
		break;
	case PEER_TRANSPORT_UNREACHABLE:
		failure = PEER_FAILURE_UNREACHABLE;
		break;
	case PEER_TRANSPORT_TIMEOUT:
		failure = PEER_FAILURE_TIMEOUT;
		break;
	case PEER_TRANSPORT_TOO_LARGE:
		failure = PEER_FAILURE_TOO_LARGE;
		break;
	case PEER_TRANSPORT_SKIPPED:
		return;
	default:
		failure = PEER_FAILURE_OTHER;
		break;
	}
	atomic_fetch_add_explicit(&client->failures[member][failure], 1, memory_order_relaxed);
}

void peer_client_failures(const struct peer_client *client, size_t member, uint64_t out[PEER_FAILURE_COUNT])
{
	for (size_t f = 0; f < PEER_FAILURE_COUNT; f++)
		out[f] = member < client->member_count
		             ? atomic_load_explicit(&client->failures[member][f], memory_order_relaxed)
		             : 0;
}

static char *copy_string(const char *text)
{
	size_t len;
	char *copy;

	if (text == NULL)
		return NULL;
	len = strlen(text);
	copy = malloc(len + 1);
	if (copy != NULL)
		memcpy(copy, text, len + 1);
	return copy;
}

static size_t add_saturated(size_t a, size_t b)
{
	return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

static size_t at_most_buffer(size_t cap)
{
	return cap > BUFFER_MAX - 1 ? BUFFER_MAX - 1 : cap;
}

/* The members' urls, the timeouts and the retries of config: at creation, and at each reload. */
static void set_reachability(struct peer_client *client, const struct config *config)
{
	for (size_t i = 0; i < client->member_count && i < config->member_count; i++)
		snprintf(client->members[i].url, sizeof(client->members[i].url), "%s",
		         config->members[i].url);
	client->timeout_ms =
	    (uint32_t)(config->peers.timeout_seconds != 0 ? config->peers.timeout_seconds : 5) * 1000u;
	client->connect_timeout_ms =
	    (uint32_t)(config->peers.connect_timeout_seconds != 0 ? config->peers.connect_timeout_seconds
	                                                          : 2) *
	    1000u;
	client->retries = config->peers.retries < NET_RETRY_MAX_ATTEMPTS ? config->peers.retries
	                                                                 : NET_RETRY_MAX_ATTEMPTS - 1;
}

void peer_client_reconfigure(struct peer_client *client, const struct config *config)
{
	pthread_mutex_lock(client->settings_lock);
	set_reachability(client, config);
	pthread_mutex_unlock(client->settings_lock);
}

int peer_client_new(const struct config *config, const struct peer_client_options *options,
                    struct peer_client **out)
{
	struct peer_client *client;
	size_t uncompressed = config->bounds.snapshot_body_uncompressed;
	size_t compressed = config->bounds.snapshot_body_compressed;

	*out = NULL;
	if (config->member_count == 0 || config->member_count > CONFIG_MAX_MEMBERS ||
	    config->members == NULL || config->self_index >= config->member_count)
		return DIRAUTH_ERR_CONFIG;
	client = calloc(1, sizeof(*client));
	if (client == NULL)
		return DIRAUTH_ERR_NOMEM;
	client->members = calloc(config->member_count, sizeof(*client->members));
	if (client->members == NULL)
		goto nomem;
	client->failures = calloc(config->member_count, sizeof(*client->failures));
	if (client->failures == NULL)
		goto nomem;
	client->member_count = config->member_count;
	client->self_index = config->self_index;
	client->settings_lock = malloc(sizeof(*client->settings_lock));
	if (client->settings_lock == NULL)
		goto nomem;
	if (pthread_mutex_init(client->settings_lock, NULL) != 0) {
		free(client->settings_lock);
		client->settings_lock = NULL;
		goto nomem;
	}
	for (size_t i = 0; i < config->member_count; i++)
		snprintf(client->members[i].name, sizeof(client->members[i].name), "%s",
		         config->members[i].name);
	set_reachability(client, config);
	client->backoff.base_delay_ms =
	    options != NULL && options->retry_base_ms != 0 ? options->retry_base_ms : PEER_RETRY_BASE_MS;
	client->backoff.max_delay_ms =
	    options != NULL && options->retry_max_ms != 0 ? options->retry_max_ms : PEER_RETRY_MAX_MS;
	/* An envelope: its two framing lines, the note, and the largest body of the namespace bound
	 * (with method 2's sections when a namespace carries the endpoint lifecycle). */
	size_t vote_body_cap = vote_body_max_bytes(config->bounds.records_per_snapshot);
	for (size_t i = 0; i < config->namespace_count; i++)
		if (config->namespaces[i].lifecycle) {
			struct vote_body_limits limits = {config->bounds.records_per_snapshot,
			                                  config_max_health(config),
			                                  config->namespaces[i].max_revocations};
			size_t sections = vote_body_sections_max_bytes(&limits);
			if (sections > vote_body_cap)
				vote_body_cap = sections;
		}
	client->vote_cap =
	    at_most_buffer(add_saturated(add_saturated(VOTE_ENVELOPE_NOTE_MAX, 128), vote_body_cap));
	client->registration_cap =
	    config->bounds.registration_body != 0 ? config->bounds.registration_body : REGISTRATION_MAX_BYTES;
	client->body_cap = at_most_buffer(compressed > uncompressed ? compressed : uncompressed);
	if (client->body_cap == 0)
		client->body_cap = at_most_buffer((size_t)1 << 30);
	if (options != NULL && options->ca_file != NULL &&
	    (client->ca_file = copy_string(options->ca_file)) == NULL)
		goto nomem;
	if (options != NULL && options->user_agent != NULL &&
	    (client->user_agent = copy_string(options->user_agent)) == NULL)
		goto nomem;
	if (peer_capabilities_new(config, &client->capabilities) != 0)
		goto nomem;
	if (options != NULL && options->transport != NULL) {
		client->has_transport = 1;
		client->transport = *options->transport;
	} else {
		struct net_pool_options pool_options = {
		    .connections_per_origin = config->peers.connections_per_peer, .origins = 1};
		client->pools = calloc(config->member_count, sizeof(*client->pools));
		if (client->pools == NULL)
			goto nomem;
		for (size_t i = 0; i < config->member_count; i++) {
			int rc = net_pool_new(&pool_options, &client->pools[i]);
			if (rc != 0) {
				peer_client_free(client);
				return rc;
			}
		}
	}
	*out = client;
	return 0;
nomem:
	peer_client_free(client);
	return DIRAUTH_ERR_NOMEM;
}

void peer_client_free(struct peer_client *client)
{
	if (client == NULL)
		return;
	for (size_t i = 0; client->pools != NULL && i < client->member_count; i++)
		net_pool_free(client->pools[i]);
	free(client->pools);
	free(client->members);
	if (client->settings_lock != NULL) {
		pthread_mutex_destroy(client->settings_lock);
		free(client->settings_lock);
	}
	free(client->failures);
	free(client->ca_file);
	free(client->user_agent);
	peer_capabilities_free(client->capabilities);
	free(client);
}

size_t peer_client_member_count(const struct peer_client *client)
{
	return client->member_count;
}

size_t peer_client_self_index(const struct peer_client *client)
{
	return client->self_index;
}

size_t peer_client_answer_cap(const struct peer_client *client, enum peer_operation operation)
{
	switch (operation) {
	case PEER_PUSH_VOTE:
	case PEER_PUSH_SIGNATURE:
	case PEER_ADD_CHECKPOINT:
		return PEER_ACK_MAX;
	case PEER_PULL_VOTE:
		return client->vote_cap;
	case PEER_PULL_SIGNATURES:
	case PEER_FETCH_LATEST_HEADER:
	case PEER_FETCH_HEADER:
		return VERIFY_HEADER_NOTE_MAX;
	case PEER_FETCH_REGISTRATION:
		return client->registration_cap;
	case PEER_FETCH_CERTIFICATES:
		return PEER_CERTIFICATES_MAX;
	case PEER_FETCH_BODY:
		return client->body_cap;
	case PEER_FETCH_STATEMENT:
		return PEER_STATEMENT_MAX;
	case PEER_FETCH_NOTES:
		return PEER_NOTES_ANSWER_MAX;
	case PEER_FETCH_HEADERS:
		return PEER_HEADERS_ANSWER_MAX;
	case PEER_OPERATION_COUNT:
		break;
	}
	return 0;
}

void peer_answer_init(struct peer_answer *answer)
{
	memset(answer, 0, sizeof(*answer));
	buffer_init(&answer->body);
}

void peer_answer_free(struct peer_answer *answer)
{
	if (answer == NULL)
		return;
	buffer_free(&answer->body);
}

void peer_answers_free(struct peer_answer *answers, size_t count)
{
	if (answers == NULL)
		return;
	for (size_t i = 0; i < count; i++)
		peer_answer_free(&answers[i]);
}

/* Empties an answer but keeps its allocation. */
static void answer_reset(struct peer_answer *answer)
{
	struct buffer body = answer->body;

	memset(answer, 0, sizeof(*answer));
	answer->body = body;
	buffer_reset(&answer->body);
}

/* 1 when text can stand as one path segment, as sent and as the server matches it. */
static int segment_is_safe(const char *text)
{
	size_t len;

	if (text == NULL)
		return 0;
	len = strnlen(text, NOTE_NAME_MAX + 1);
	if (len == 0 || len > NOTE_NAME_MAX || strcmp(text, ".") == 0 || strcmp(text, "..") == 0)
		return 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)text[i];
		if (ch <= 0x20 || ch >= 0x7f || ch == '/' || ch == '?' || ch == '#' || ch == '%')
			return 0;
	}
	return 1;
}

/* The refusals made before anything is sent; reason (capacity cap) gets the words. */
int peer_client_check_call(const struct peer_call *call, char *reason, size_t cap)
{
	const struct operation_kind *kind;

	if ((unsigned)call->operation >= PEER_OPERATION_COUNT) {
		snprintf(reason, cap, "no such peer operation");
		return DIRAUTH_ERR_CONFIG;
	}
	kind = &operation_kinds[call->operation];
	if (kind->has_namespace && !segment_is_safe(call->namespace_name)) {
		snprintf(reason, cap, "the namespace name cannot stand in a URL path");
		return DIRAUTH_ERR_SYNTAX;
	}
	if (call->operation == PEER_PULL_VOTE && !segment_is_safe(call->voter)) {
		snprintf(reason, cap, "the voter's name cannot stand in a URL path");
		return DIRAUTH_ERR_SYNTAX;
	}
	if (strcmp(kind->method, "POST") == 0 && (call->body == NULL || call->body_len == 0)) {
		snprintf(reason, cap, "nothing to post");
		return DIRAUTH_ERR_SYNTAX;
	}
	return 0;
}

/* Appends the operation's URL at member's base URL. */
static int build_url(const struct peer_member *member, const struct peer_call *call, struct buffer *url)
{
	const char *ns = call->namespace_name;
	unsigned long long epoch = (unsigned long long)call->epoch;
	char service[2 * SERVICE_ID_SIZE + 1];

	switch (call->operation) {
	case PEER_PUSH_VOTE:
		return buffer_appendf(url, "%s/v1/%s/votes", member->url, ns);
	case PEER_PULL_VOTE:
		return buffer_appendf(url, "%s/v1/%s/votes/%llu/%s", member->url, ns, epoch, call->voter);
	case PEER_PUSH_SIGNATURE:
		return buffer_appendf(url, "%s/v1/%s/signatures", member->url, ns);
	case PEER_PULL_SIGNATURES:
		return buffer_appendf(url, "%s/v1/%s/signatures/%llu", member->url, ns, epoch);
	case PEER_FETCH_REGISTRATION:
		hex_encode(call->service_id, SERVICE_ID_SIZE, service);
		return buffer_appendf(url, "%s/v1/%s/registrations/%s/%llu", member->url, ns, service,
		                      (unsigned long long)call->sequence);
	case PEER_FETCH_CERTIFICATES:
		return buffer_appendf(url, "%s/v1/certificates", member->url);
	case PEER_FETCH_LATEST_HEADER:
		return buffer_appendf(url, "%s/v1/%s/snapshots/latest", member->url, ns);
	case PEER_FETCH_HEADER:
		return buffer_appendf(url, "%s/v1/%s/snapshots/%llu", member->url, ns, epoch);
	case PEER_FETCH_BODY:
		return buffer_appendf(url, "%s/v1/%s/snapshots/%llu/body", member->url, ns, epoch);
	case PEER_ADD_CHECKPOINT:
		return buffer_appendf(url, "%s/v1/%s/log/add-checkpoint", member->url, ns);
	case PEER_FETCH_STATEMENT:
		hex_encode(call->digest, 32, service);
		return buffer_appendf(url, "%s/v1/%s/statements/%s", member->url, ns, service);
	case PEER_FETCH_NOTES:
		return buffer_appendf(url, "%s/v1/%s/notes", member->url, ns);
	case PEER_FETCH_HEADERS:
		return buffer_appendf(url, "%s/v1/%s/snapshots/from/%llu", member->url, ns, epoch);
	case PEER_OPERATION_COUNT:
		break;
	}
	return DIRAUTH_ERR_CONFIG;
}

static uint64_t monotonic_ms(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)now.tv_sec * 1000u + (uint64_t)now.tv_nsec / 1000000u;
}

static void sleep_ms(uint32_t ms)
{
	struct timespec wait = {.tv_sec = ms / 1000u, .tv_nsec = (long)(ms % 1000u) * 1000000L};

	while (nanosleep(&wait, &wait) != 0 && errno == EINTR)
		;
}

/* Compresses call's body when its operation sends a long one as zstd. A compression that fails
 * (memory) leaves the body to go as it is: compression saves bytes, it is never needed. */
void peer_call_body_prepare(const struct peer_call *call, struct peer_call_body *body)
{
	buffer_init(&body->zstd);
	if (!operation_kinds[call->operation].compressed || call->body_len < PEER_COMPRESS_MIN)
		return;
	if (compress_encode_fast(ENCODING_ZSTD, call->body, call->body_len, &body->zstd) != 0)
		buffer_free(&body->zstd);
}

void peer_call_body_free(struct peer_call_body *body)
{
	buffer_free(&body->zstd);
}

/* Decodes a zstd answer of an operation that asks for one, bounded by cap, into response's body.
 * Returns 0 (the body plain, its encoding cleared), or the failure in answer with
 * DIRAUTH_ERR_BOUNDS, DIRAUTH_ERR_IO or DIRAUTH_ERR_NOMEM. */
static int decode_answer(const struct operation_kind *kind, size_t cap, struct net_response *response,
                         struct peer_answer *answer)
{
	const char *encoding = response->content_encoding;
	struct buffer plain;
	int rc;

	if (!kind->decoded)
		return 0;
	if (encoding[0] == '\0' || strcasecmp(encoding, "identity") == 0) {
		response->content_encoding[0] = '\0';
		return 0;
	}
	if (strcasecmp(encoding, "zstd") != 0) {
		answer->transport = PEER_TRANSPORT_FAILED;
		snprintf(answer->reason, sizeof(answer->reason),
		         "HTTP %ld: an answer in an encoding not asked for: %.64s", response->status,
		         encoding);
		return DIRAUTH_ERR_IO;
	}
	buffer_init(&plain);
	rc = compress_decode(ENCODING_ZSTD, response->body.data, response->body.len, cap, &plain);
	if (rc != 0) {
		buffer_free(&plain);
		answer->transport =
		    rc == DIRAUTH_ERR_BOUNDS ? PEER_TRANSPORT_TOO_LARGE : PEER_TRANSPORT_FAILED;
		if (rc == DIRAUTH_ERR_BOUNDS)
			snprintf(answer->reason, sizeof(answer->reason),
			         "HTTP %ld: the zstd answer of %zu bytes inflates past %zu bytes",
			         response->status, response->body.len, cap);
		else
			snprintf(answer->reason, sizeof(answer->reason),
			         "HTTP %ld: the zstd answer does not decode: %s", response->status,
			         dirauth_strerror(rc));
		return rc == DIRAUTH_ERR_BOUNDS || rc == DIRAUTH_ERR_NOMEM ? rc : DIRAUTH_ERR_IO;
	}
	buffer_free(&response->body);
	response->body = plain;
	response->content_encoding[0] = '\0';
	return 0;
}

/* Fills what an answered exchange says: its bytes (decoded), headers, and a JSON error's code.
 * Returns 0, or decode_answer's failure. */
static int take_answer(const struct operation_kind *kind, size_t cap, struct net_response *response,
                       struct peer_answer *answer)
{
	int rc;

	answer->wire_bytes = response->body.len;
	rc = decode_answer(kind, cap, response, answer);
	if (rc != 0)
		return rc;
	answer->transport = PEER_TRANSPORT_ANSWERED;
	answer->status = response->status;
	snprintf(answer->content_type, sizeof(answer->content_type), "%s", response->content_type);
	snprintf(answer->content_encoding, sizeof(answer->content_encoding), "%s",
	         response->content_encoding);
	if (answer->status >= 300) {
		struct net_error_answer parsed;
		int ok = net_error_answer_parse(response->body.data, response->body.len, &parsed) == 0;
		if (ok)
			memcpy(answer->error_code, parsed.code, sizeof(parsed.code));
		else
			answer->error_code[0] = '\0';
		net_error_answer_describe(answer->status, ok ? &parsed : NULL, answer->reason,
		                          sizeof(answer->reason));
	}
	buffer_free(&answer->body);
	answer->body = response->body;
	buffer_init(&response->body);
	return 0;
}

/* How one call reaches its member: the client's settings as they stood when it began. */
struct peer_reach {
	struct peer_member member;
	uint32_t timeout_ms;
	uint32_t connect_timeout_ms;
	unsigned retries;
};

static void reach_read(const struct peer_client *client, size_t member, struct peer_reach *reach)
{
	pthread_mutex_lock(client->settings_lock);
	reach->member = client->members[member];
	reach->timeout_ms = client->timeout_ms;
	reach->connect_timeout_ms = client->connect_timeout_ms;
	reach->retries = client->retries;
	pthread_mutex_unlock(client->settings_lock);
}

/* Attempts request until an answer or a failure that may not be retried, the retries spent, or
 * deadline. answer->attempts counts on from where it stands, and answer->transport tells a timeout
 * from an unreachable peer. Returns net_perform's last return. */
static int exchange(const struct peer_client *client, const struct peer_reach *reach,
                    struct net_request *request, uint64_t deadline, struct net_response *response,
                    struct peer_answer *answer)
{
	unsigned attempts = reach->retries + 1;
	int rc = DIRAUTH_ERR_UNAVAILABLE;

	snprintf(response->error, sizeof(response->error), "the deadline passed before an attempt");
	answer->transport = PEER_TRANSPORT_TIMEOUT;
	for (unsigned attempt = 1;; attempt++) {
		uint64_t started = monotonic_ms();
		uint64_t left = deadline > started ? deadline - started : 0;
		uint32_t connect_ms;
		uint32_t random_value = 0;
		uint32_t wait;

		if (left == 0) {
			/* The deadline came during a wait: the last outcome stands. */
			break;
		}
		connect_ms = reach->connect_timeout_ms < left ? reach->connect_timeout_ms : (uint32_t)left;
		request->connect_timeout_ms = connect_ms;
		request->total_timeout_ms = left < UINT32_MAX ? (uint32_t)left : UINT32_MAX;
		rc = net_perform(request, response);
		answer->attempts++;
		if (rc == DIRAUTH_ERR_UNAVAILABLE)
			answer->transport = monotonic_ms() - started + TIMEOUT_SLACK_MS >= connect_ms
			                        ? PEER_TRANSPORT_TIMEOUT
			                        : PEER_TRANSPORT_UNREACHABLE;
		/* Again only what may pass: a transport failure or the peer's own failure (5xx). */
		if (!(rc == DIRAUTH_ERR_UNAVAILABLE || (rc == 0 && response->status >= 500)))
			break;
		if (attempt == attempts)
			break;
		/* Without the system's randomness the wait is the ceiling: still bounded, not spread. */
		if (crypto_random((uint8_t *)&random_value, sizeof(random_value)) != 0)
			random_value = UINT32_MAX;
		wait = net_backoff_delay_ms(&client->backoff, attempt, random_value);
		if (monotonic_ms() + wait >= deadline)
			break;
		sleep_ms(wait);
	}
	return rc;
}

/* call (checked) against member over HTTP, its body as prepared in body. */
static int call_over_http(const struct peer_client *client, size_t member, const struct peer_call *call,
                          const struct peer_call_body *body, struct peer_answer *answer)
{
	const struct operation_kind *kind = &operation_kinds[call->operation];
	const char *headers[5];
	size_t header_count = 0;
	struct net_request request;
	struct net_response response;
	struct buffer url;
	struct peer_reach reach;
	reach_read(client, member, &reach);
	uint64_t now = monotonic_ms();
	uint64_t deadline = now + reach.timeout_ms;
	int compressed = body->zstd.len > 0;
	int rc;

	if (call->deadline_ms != 0 && call->deadline_ms < deadline)
		deadline = call->deadline_ms;
	if (deadline <= now) {
		answer->transport = PEER_TRANSPORT_TIMEOUT;
		snprintf(answer->reason, sizeof(answer->reason),
		         "the call's deadline had passed: nothing was sent");
		return DIRAUTH_ERR_UNAVAILABLE;
	}
	buffer_init(&url);
	rc = build_url(&reach.member, call, &url);
	if (rc != 0) {
		buffer_free(&url);
		answer->transport = PEER_TRANSPORT_FAILED;
		snprintf(answer->reason, sizeof(answer->reason), "cannot build the URL: %s",
		         dirauth_strerror(rc));
		return rc;
	}
	if (kind->content_type != NULL)
		headers[header_count++] = kind->content_type;
	headers[header_count++] = kind->accept_encoding;
	/* A private namespace's routes answer only to its capability (capabilities.h). */
	if (kind->has_namespace) {
		const char *authorization =
		    peer_capabilities_header(client->capabilities, call->namespace_name);
		if (authorization != NULL)
			headers[header_count++] = authorization;
	}
	if (compressed)
		headers[header_count++] = "Content-Encoding: zstd";
	headers[header_count] = NULL;
	memset(&request, 0, sizeof(request));
	request.method = kind->method;
	request.url = (const char *)url.data;
	request.headers = headers;
	request.max_response_bytes = peer_client_answer_cap(client, call->operation);
	request.user_agent = client->user_agent;
	request.ca_file = client->ca_file;
	request.pool = client->pools[member];
	request.body = compressed ? body->zstd.data : call->body;
	request.body_len = compressed ? body->zstd.len : call->body_len;
	net_response_init(&response);
	rc = exchange(client, &reach, &request, deadline, &response, answer);
	if (rc == 0 && compressed && (response.status == 415 || response.status == 400) &&
	    monotonic_ms() < deadline) {
		/* A peer that takes no zstd body (415), or an older one that reads the compressed bytes
		 * as the document and refuses them (400): the same call once more, as it is, in the time
		 * left. A body that was malformed anyway is refused again, at the cost of one request. */
		headers[--header_count] = NULL;
		request.body = call->body;
		request.body_len = call->body_len;
		rc = exchange(client, &reach, &request, deadline, &response, answer);
	}
	if (rc == 0) {
		rc = take_answer(kind, request.max_response_bytes, &response, answer);
	} else {
		if (rc == DIRAUTH_ERR_BOUNDS)
			answer->transport = PEER_TRANSPORT_TOO_LARGE;
		else if (rc != DIRAUTH_ERR_UNAVAILABLE)
			answer->transport = PEER_TRANSPORT_FAILED;
		if (answer->transport == PEER_TRANSPORT_TIMEOUT)
			snprintf(answer->reason, sizeof(answer->reason),
			         "no answer within the timeout: %s (%u %s)", response.error, answer->attempts,
			         answer->attempts == 1 ? "attempt" : "attempts");
		else
			snprintf(answer->reason, sizeof(answer->reason), "%s (%u %s)", response.error,
			         answer->attempts, answer->attempts == 1 ? "attempt" : "attempts");
	}
	net_response_free(&response);
	buffer_free(&url);
	return rc;
}

/* call (checked, for a member of the set) through the client's transport or over HTTP; answer
 * emptied first. */
int peer_client_dispatch(const struct peer_client *client, size_t member, const struct peer_call *call,
                         const struct peer_call_body *body, struct peer_answer *answer)
{
	int rc;
	answer_reset(answer);
	if (client->has_transport)
		rc = client->transport.call(client->transport.context, member, call, answer);
	else
		rc = call_over_http(client, member, call, body, answer);
	count_failure(client, member, answer);
	return rc;
}

/* The refusals of a call made before anything is sent, in answer. */
static int call_refusal(const struct peer_client *client, size_t member, const struct peer_call *call,
                        struct peer_answer *answer)
{
	int rc;

	if (member >= client->member_count) {
		snprintf(answer->reason, sizeof(answer->reason), "no member %zu in the authority set",
		         member);
		answer->transport = PEER_TRANSPORT_FAILED;
		return DIRAUTH_ERR_NOT_FOUND;
	}
	rc = peer_client_check_call(call, answer->reason, sizeof(answer->reason));
	if (rc != 0)
		answer->transport = PEER_TRANSPORT_FAILED;
	return rc;
}

int peer_client_call(const struct peer_client *client, size_t member, const struct peer_call *call,
                     struct peer_answer *answer)
{
	struct peer_call_body body;
	int rc;

	answer_reset(answer);
	rc = call_refusal(client, member, call, answer);
	if (rc != 0)
		return rc;
	if (client->has_transport)
		return peer_client_dispatch(client, member, call, NULL, answer);
	peer_call_body_prepare(call, &body);
	rc = peer_client_dispatch(client, member, call, &body, answer);
	peer_call_body_free(&body);
	return rc;
}

/* The operations whose call is a namespace and a body, or a namespace and an epoch: one copy
 * each of the call they make. */
static int call_with_body(const struct peer_client *client, size_t member, enum peer_operation operation,
                          const char *namespace_name, const uint8_t *body, size_t body_len,
                          struct peer_answer *answer)
{
	struct peer_call call = {
	    .operation = operation, .namespace_name = namespace_name, .body = body, .body_len = body_len};
	return peer_client_call(client, member, &call, answer);
}

static int call_for_epoch(const struct peer_client *client, size_t member, enum peer_operation operation,
                          const char *namespace_name, uint64_t epoch, struct peer_answer *answer)
{
	struct peer_call call = {.operation = operation, .namespace_name = namespace_name, .epoch = epoch};
	return peer_client_call(client, member, &call, answer);
}

int peer_push_vote(const struct peer_client *client, size_t member, const char *namespace_name,
                   const uint8_t *envelope, size_t envelope_len, struct peer_answer *answer)
{
	return call_with_body(client, member, PEER_PUSH_VOTE, namespace_name, envelope, envelope_len, answer);
}

int peer_pull_vote(const struct peer_client *client, size_t member, const char *namespace_name,
                   uint64_t epoch, const char *voter, struct peer_answer *answer)
{
	struct peer_call call = {
	    .operation = PEER_PULL_VOTE, .namespace_name = namespace_name, .epoch = epoch, .voter = voter};
	return peer_client_call(client, member, &call, answer);
}

int peer_push_signature(const struct peer_client *client, size_t member, const char *namespace_name,
                        const uint8_t *header_note, size_t header_note_len, struct peer_answer *answer)
{
	return call_with_body(client, member, PEER_PUSH_SIGNATURE, namespace_name, header_note,
	                      header_note_len, answer);
}

int peer_pull_signatures(const struct peer_client *client, size_t member, const char *namespace_name,
                         uint64_t epoch, struct peer_answer *answer)
{
	return call_for_epoch(client, member, PEER_PULL_SIGNATURES, namespace_name, epoch, answer);
}

int peer_fetch_registration(const struct peer_client *client, size_t member, const char *namespace_name,
                            const uint8_t service_id[SERVICE_ID_SIZE], uint64_t sequence,
                            struct peer_answer *answer)
{
	struct peer_call call = {
	    .operation = PEER_FETCH_REGISTRATION, .namespace_name = namespace_name, .sequence = sequence};
	memcpy(call.service_id, service_id, SERVICE_ID_SIZE);
	return peer_client_call(client, member, &call, answer);
}

int peer_fetch_statement(const struct peer_client *client, size_t member, const char *namespace_name,
                         const uint8_t digest[32], struct peer_answer *answer)
{
	struct peer_call call = {.operation = PEER_FETCH_STATEMENT, .namespace_name = namespace_name};
	memcpy(call.digest, digest, 32);
	return peer_client_call(client, member, &call, answer);
}

int peer_fetch_certificates(const struct peer_client *client, size_t member, struct peer_answer *answer)
{
	struct peer_call call = {.operation = PEER_FETCH_CERTIFICATES};
	return peer_client_call(client, member, &call, answer);
}

int peer_fetch_latest_header(const struct peer_client *client, size_t member, const char *namespace_name,
                             struct peer_answer *answer)
{
	struct peer_call call = {.operation = PEER_FETCH_LATEST_HEADER, .namespace_name = namespace_name};
	return peer_client_call(client, member, &call, answer);
}

int peer_fetch_header(const struct peer_client *client, size_t member, const char *namespace_name,
                      uint64_t epoch, struct peer_answer *answer)
{
	return call_for_epoch(client, member, PEER_FETCH_HEADER, namespace_name, epoch, answer);
}

int peer_fetch_body(const struct peer_client *client, size_t member, const char *namespace_name,
                    uint64_t epoch, struct peer_answer *answer)
{
	return call_for_epoch(client, member, PEER_FETCH_BODY, namespace_name, epoch, answer);
}

int peer_fetch_notes(const struct peer_client *client, size_t member, const char *namespace_name,
                     const uint8_t *request, size_t request_len, struct peer_answer *answer)
{
	return call_with_body(client, member, PEER_FETCH_NOTES, namespace_name, request, request_len, answer);
}

int peer_fetch_headers(const struct peer_client *client, size_t member, const char *namespace_name,
                       uint64_t epoch, struct peer_answer *answer)
{
	return call_for_epoch(client, member, PEER_FETCH_HEADERS, namespace_name, epoch, answer);
}
