/*
 * peer_client.c: the bounded exchanges with the other members of the authority set, one by one and
 * all at once (see peer_client.h).
 *
 * net_perform already bounds one exchange (caps, timeouts, no redirects); what this file adds is
 * the policy of peer traffic around it. The retry loop is its own rather than net's, because
 * peers are retried after transport failures and 5xx only (net also retries 429, which a peer's
 * front door uses for "not from you, not now"), and it runs under one deadline for the whole
 * operation, so a hanging peer costs one timeout and not one per attempt. A broadcast is a thread
 * per member, each running that loop; the threads share nothing but the immutable client and
 * their own slot, so none can hold another back.
 */
#include "server/peers/peer_client.h"

#include "net/client.h"
#include "server/peers/capabilities.h"
#include "schema/crypto.h"
#include "schema/error.h"
#include "schema/encoding.h"
#include "schema/vote_body.h"
#include "schema/vote_envelope.h"
#include "verify/snapshot.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* An attempt that failed this close to its connect budget, or later, ran out of time. */
#define TIMEOUT_SLACK_MS 50u

struct peer_member {
	char name[NOTE_NAME_MAX + 1];
	char url[CONFIG_URL_MAX];
};

struct peer_client {
	size_t member_count;
	size_t self_index;
	struct peer_member *members; /* owned */
	uint32_t timeout_ms;
	uint32_t connect_timeout_ms;
	unsigned retries;
	struct net_retry backoff; /* only its delays: attempts are counted here */
	size_t vote_cap;
	size_t registration_cap;
	size_t body_cap;
	char *ca_file;                          /* owned; NULL: the system's */
	char *user_agent;                       /* owned; NULL: net's default */
	struct peer_capabilities *capabilities; /* owned; private namespaces' Authorization lines */
};

static const char *const transport_names[] = {
    [PEER_TRANSPORT_ANSWERED] = "answered", [PEER_TRANSPORT_UNREACHABLE] = "unreachable",
    [PEER_TRANSPORT_TIMEOUT] = "timeout",   [PEER_TRANSPORT_TOO_LARGE] = "too_large",
    [PEER_TRANSPORT_FAILED] = "failed",     [PEER_TRANSPORT_SKIPPED] = "skipped",
};

const char *peer_transport_name(enum peer_transport transport)
{
	if ((size_t)transport >= sizeof(transport_names) / sizeof(transport_names[0]))
		return "failed";
	return transport_names[transport];
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
	client->member_count = config->member_count;
	client->self_index = config->self_index;
	for (size_t i = 0; i < config->member_count; i++) {
		snprintf(client->members[i].name, sizeof(client->members[i].name), "%s",
		         config->members[i].name);
		snprintf(client->members[i].url, sizeof(client->members[i].url), "%s",
		         config->members[i].url);
	}
	client->timeout_ms =
	    (uint32_t)(config->peers.timeout_seconds != 0 ? config->peers.timeout_seconds : 5) * 1000u;
	client->connect_timeout_ms =
	    (uint32_t)(config->peers.connect_timeout_seconds != 0 ? config->peers.connect_timeout_seconds
	                                                          : 2) *
	    1000u;
	client->retries = config->peers.retries < NET_RETRY_MAX_ATTEMPTS ? config->peers.retries
	                                                                 : NET_RETRY_MAX_ATTEMPTS - 1;
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
	free(client->members);
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

static int operation_has_namespace(enum peer_operation operation)
{
	return operation != PEER_FETCH_CERTIFICATES;
}

static int operation_is_push(enum peer_operation operation)
{
	return operation == PEER_PUSH_VOTE || operation == PEER_PUSH_SIGNATURE ||
	       operation == PEER_ADD_CHECKPOINT;
}

/* The refusals made before anything is sent; reason (capacity cap) gets the words. */
static int call_check(const struct peer_call *call, char *reason, size_t cap)
{
	if ((unsigned)call->operation >= PEER_OPERATION_COUNT) {
		snprintf(reason, cap, "no such peer operation");
		return DIRAUTH_ERR_CONFIG;
	}
	if (operation_has_namespace(call->operation) && !segment_is_safe(call->namespace_name)) {
		snprintf(reason, cap, "the namespace name cannot stand in a URL path");
		return DIRAUTH_ERR_SYNTAX;
	}
	if (call->operation == PEER_PULL_VOTE && !segment_is_safe(call->voter)) {
		snprintf(reason, cap, "the voter's name cannot stand in a URL path");
		return DIRAUTH_ERR_SYNTAX;
	}
	if (operation_is_push(call->operation) && (call->body == NULL || call->body_len == 0)) {
		snprintf(reason, cap, "nothing to push");
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

/* Fills what an answered exchange says: its bytes, headers, and a JSON error's code. */
static void take_answer(struct net_response *response, struct peer_answer *answer)
{
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
}

int peer_client_call(const struct peer_client *client, size_t member, const struct peer_call *call,
                     struct peer_answer *answer)
{
	static const char *const body_headers[] = {"Accept-Encoding: zstd, gzip", NULL};
	static const char *const note_headers[] = {"Content-Type: text/plain; charset=utf-8", NULL};
	static const char *const envelope_headers[] = {"Content-Type: application/octet-stream", NULL};
	struct net_request request;
	struct net_response response;
	struct buffer url;
	uint64_t deadline;
	unsigned attempts;
	int rc;

	answer_reset(answer);
	if (member >= client->member_count) {
		snprintf(answer->reason, sizeof(answer->reason), "no member %zu in the authority set",
		         member);
		answer->transport = PEER_TRANSPORT_FAILED;
		return DIRAUTH_ERR_NOT_FOUND;
	}
	rc = call_check(call, answer->reason, sizeof(answer->reason));
	if (rc != 0) {
		answer->transport = PEER_TRANSPORT_FAILED;
		return rc;
	}
	buffer_init(&url);
	rc = build_url(&client->members[member], call, &url);
	if (rc != 0) {
		buffer_free(&url);
		answer->transport = PEER_TRANSPORT_FAILED;
		snprintf(answer->reason, sizeof(answer->reason), "cannot build the URL: %s",
		         dirauth_strerror(rc));
		return rc;
	}
	memset(&request, 0, sizeof(request));
	request.url = (const char *)url.data;
	request.max_response_bytes = peer_client_answer_cap(client, call->operation);
	request.user_agent = client->user_agent;
	request.ca_file = client->ca_file;
	if (operation_is_push(call->operation)) {
		request.method = "POST";
		request.body = call->body;
		request.body_len = call->body_len;
		request.headers = call->operation == PEER_PUSH_VOTE ? envelope_headers : note_headers;
	} else {
		request.method = "GET";
		if (call->operation == PEER_FETCH_BODY)
			request.headers = body_headers;
	}
	/* A private namespace's routes answer only to its capability (capabilities.h). */
	const char *authorization = operation_has_namespace(call->operation)
	                                ? peer_capabilities_header(client->capabilities, call->namespace_name)
	                                : NULL;
	const char *with_authorization[3] = {NULL, NULL, NULL};
	if (authorization != NULL) {
		size_t n = 0;
		if (request.headers != NULL)
			with_authorization[n++] = request.headers[0]; /* an operation sends one at most */
		with_authorization[n] = authorization;
		request.headers = with_authorization;
	}
	net_response_init(&response);
	attempts = client->retries + 1;
	deadline = monotonic_ms() + client->timeout_ms;
	for (unsigned attempt = 1;; attempt++) {
		uint64_t started = monotonic_ms();
		uint64_t left = deadline > started ? deadline - started : 0;
		uint32_t connect_ms;
		uint32_t random_value = 0;
		uint32_t wait;

		if (left == 0) {
			/* Only after a wait that ended on the deadline: the last outcome stands. */
			break;
		}
		connect_ms = client->connect_timeout_ms < left ? client->connect_timeout_ms : (uint32_t)left;
		request.connect_timeout_ms = connect_ms;
		request.total_timeout_ms = (uint32_t)left;
		rc = net_perform(&request, &response);
		answer->attempts = attempt;
		if (rc == DIRAUTH_ERR_UNAVAILABLE)
			answer->transport = monotonic_ms() - started + TIMEOUT_SLACK_MS >= connect_ms
			                        ? PEER_TRANSPORT_TIMEOUT
			                        : PEER_TRANSPORT_UNREACHABLE;
		/* Again only what may pass: a transport failure or the peer's own failure (5xx). */
		if (!(rc == DIRAUTH_ERR_UNAVAILABLE || (rc == 0 && response.status >= 500)))
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
	if (rc == 0) {
		take_answer(&response, answer);
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

int peer_push_vote(const struct peer_client *client, size_t member, const char *namespace_name,
                   const uint8_t *envelope, size_t envelope_len, struct peer_answer *answer)
{
	struct peer_call call = {.operation = PEER_PUSH_VOTE,
	                         .namespace_name = namespace_name,
	                         .body = envelope,
	                         .body_len = envelope_len};
	return peer_client_call(client, member, &call, answer);
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
	struct peer_call call = {.operation = PEER_PUSH_SIGNATURE,
	                         .namespace_name = namespace_name,
	                         .body = header_note,
	                         .body_len = header_note_len};
	return peer_client_call(client, member, &call, answer);
}

int peer_pull_signatures(const struct peer_client *client, size_t member, const char *namespace_name,
                         uint64_t epoch, struct peer_answer *answer)
{
	struct peer_call call = {
	    .operation = PEER_PULL_SIGNATURES, .namespace_name = namespace_name, .epoch = epoch};
	return peer_client_call(client, member, &call, answer);
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
	struct peer_call call = {
	    .operation = PEER_FETCH_HEADER, .namespace_name = namespace_name, .epoch = epoch};
	return peer_client_call(client, member, &call, answer);
}

int peer_fetch_body(const struct peer_client *client, size_t member, const char *namespace_name,
                    uint64_t epoch, struct peer_answer *answer)
{
	struct peer_call call = {
	    .operation = PEER_FETCH_BODY, .namespace_name = namespace_name, .epoch = epoch};
	return peer_client_call(client, member, &call, answer);
}

/* One member's part of a broadcast. */
struct broadcast_slot {
	struct peers_broadcast *broadcast;
	size_t member;
	int started; /* its thread runs and must be joined */
	pthread_t thread;
	struct peer_answer answer;
};

struct peers_broadcast {
	const struct peer_client *client;
	struct peer_call call; /* its strings and body point at the copies below */
	char *namespace_name;
	char *voter;
	uint8_t *body;
	peers_answer_callback on_answer;
	void *context;
	struct broadcast_slot slots[CONFIG_MAX_MEMBERS];
};

static void *broadcast_run(void *argument)
{
	struct broadcast_slot *slot = argument;
	struct peers_broadcast *broadcast = slot->broadcast;

	(void)peer_client_call(broadcast->client, slot->member, &broadcast->call, &slot->answer);
	if (broadcast->on_answer != NULL)
		broadcast->on_answer(broadcast->context, slot->member, &slot->answer);
	return NULL;
}

static void broadcast_free(struct peers_broadcast *broadcast)
{
	for (size_t i = 0; i < CONFIG_MAX_MEMBERS; i++)
		peer_answer_free(&broadcast->slots[i].answer);
	free(broadcast->namespace_name);
	free(broadcast->voter);
	free(broadcast->body);
	free(broadcast);
}

int peers_broadcast_start(const struct peer_client *client, const struct peer_call *call,
                          const struct peers_broadcast_options *options, struct peers_broadcast **out)
{
	struct peers_broadcast *broadcast;
	char reason[PEER_REASON_MAX];
	int rc;

	*out = NULL;
	rc = call_check(call, reason, sizeof(reason));
	if (rc != 0)
		return rc;
	broadcast = calloc(1, sizeof(*broadcast));
	if (broadcast == NULL)
		return DIRAUTH_ERR_NOMEM;
	broadcast->client = client;
	broadcast->call = *call;
	if (options != NULL) {
		broadcast->on_answer = options->on_answer;
		broadcast->context = options->context;
	}
	if ((call->namespace_name != NULL &&
	     (broadcast->namespace_name = copy_string(call->namespace_name)) == NULL) ||
	    (call->voter != NULL && (broadcast->voter = copy_string(call->voter)) == NULL)) {
		broadcast_free(broadcast);
		return DIRAUTH_ERR_NOMEM;
	}
	if (call->body != NULL && call->body_len > 0) {
		broadcast->body = malloc(call->body_len);
		if (broadcast->body == NULL) {
			broadcast_free(broadcast);
			return DIRAUTH_ERR_NOMEM;
		}
		memcpy(broadcast->body, call->body, call->body_len);
	}
	broadcast->call.namespace_name = broadcast->namespace_name;
	broadcast->call.voter = broadcast->voter;
	broadcast->call.body = broadcast->body;
	for (size_t i = 0; i < CONFIG_MAX_MEMBERS; i++) {
		struct broadcast_slot *slot = &broadcast->slots[i];
		peer_answer_init(&slot->answer);
		slot->answer.transport = PEER_TRANSPORT_SKIPPED;
		slot->broadcast = broadcast;
		slot->member = i;
	}
	for (size_t i = 0; i < client->member_count; i++) {
		struct broadcast_slot *slot = &broadcast->slots[i];
		if (i == client->self_index ||
		    (options != NULL && options->targets != NULL && !options->targets[i]))
			continue;
		if (pthread_create(&slot->thread, NULL, broadcast_run, slot) == 0) {
			slot->started = 1;
			continue;
		}
		slot->answer.transport = PEER_TRANSPORT_FAILED;
		snprintf(slot->answer.reason, sizeof(slot->answer.reason), "cannot start a thread");
		if (broadcast->on_answer != NULL)
			broadcast->on_answer(broadcast->context, i, &slot->answer);
	}
	*out = broadcast;
	return 0;
}

void peers_broadcast_finish(struct peers_broadcast *broadcast, struct peer_answer *answers)
{
	if (broadcast == NULL)
		return;
	for (size_t i = 0; i < broadcast->client->member_count; i++) {
		struct broadcast_slot *slot = &broadcast->slots[i];
		if (slot->started)
			pthread_join(slot->thread, NULL);
		if (answers != NULL) {
			answers[i] = slot->answer;
			peer_answer_init(&slot->answer);
		}
	}
	broadcast_free(broadcast);
}

int peers_broadcast(const struct peer_client *client, const struct peer_call *call,
                    const struct peers_broadcast_options *options, struct peer_answer *answers)
{
	struct peers_broadcast *broadcast = NULL;
	int rc = peers_broadcast_start(client, call, options, &broadcast);

	if (rc != 0) {
		if (answers != NULL) {
			for (size_t i = 0; i < client->member_count; i++) {
				peer_answer_init(&answers[i]);
				answers[i].transport = PEER_TRANSPORT_SKIPPED;
			}
		}
		return rc;
	}
	peers_broadcast_finish(broadcast, answers);
	return 0;
}
