/*
 * simnet_network.c: the in-memory network (simnet.h, "The network"): each node's peer client
 * hands its calls here; each call is routed to the node running the member, charged its delays,
 * judged against its bounds and the faults in force, and handled by the target in this thread
 * through the functions the HTTP handlers call (server/http/peer_routes.c, snapshot_routes.c,
 * lifecycle_routes.c, status_routes.c), whose answer is filled in as the HTTP client fills it:
 * status, Content-Type, the error code read back from the JSON error body, the reason line.
 *
 * Time is charged to the caller's own time (sim_node.now_ms), which its clock follows; within a
 * broadcast each member's exchange starts at the broadcast's start (the lanes), and the broadcast
 * ends when its longest member did.
 */
#include "tests/sim/simnet_internal.h"

#include "net/error_answer.h"
#include "base/error.h"
#include "server/api/api_error.h"
#include "server/readpath/bulk.h"
#include "server/store/registrations.h"
#include "server/store/snapshots.h"
#include "server/store/statements.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the answers, as the HTTP client reads them ---- */

static void answer_bytes(struct peer_answer *answer, long status, const char *content_type,
                         struct buffer *body)
{
	answer->status = status;
	snprintf(answer->content_type, sizeof answer->content_type, "%s", content_type);
	buffer_free(&answer->body);
	answer->body = *body;
	buffer_init(body);
}

static void answer_error(struct peer_answer *answer, enum api_error error, const char *detail)
{
	struct buffer json;
	struct net_error_answer parsed;
	buffer_init(&json);
	api_error_json(error, detail, &json);
	answer_bytes(answer, (long)api_error_status(error), "application/json", &json);
	int ok = net_error_answer_parse(answer->body.data, answer->body.len, &parsed) == 0;
	if (ok)
		memcpy(answer->error_code, parsed.code, sizeof parsed.code);
	net_error_answer_describe(answer->status, ok ? &parsed : NULL, answer->reason, sizeof answer->reason);
}

static void answer_round(struct peer_answer *answer, const struct round_answer *verdict)
{
	if (verdict->error != API_ERROR_NONE) {
		answer_error(answer, verdict->error, verdict->detail);
		return;
	}
	struct buffer text;
	buffer_init(&text);
	buffer_appendf(&text, "%s\n", verdict->detail);
	answer_bytes(answer, (long)verdict->status, "text/plain; charset=utf-8", &text);
}

/* A read: 200 with out, 404 with missing, or 500. */
static void answer_read(struct peer_answer *answer, int rc, struct buffer *out, const char *content_type,
                        const char *missing)
{
	if (rc == 0)
		answer_bytes(answer, 200, content_type, out);
	else if (rc == DIRAUTH_ERR_NOT_FOUND)
		answer_error(answer, API_ERROR_NOT_FOUND, missing);
	else
		answer_error(answer, API_ERROR_INTERNAL, dirauth_strerror(rc));
	buffer_free(out);
}

/* ---- the routes ---- */

/* GET /v1/<ns>/snapshots/<epoch>/body, as served: the zstd file (the client asks "zstd, gzip"). */
static void serve_body(struct sim_node *to, const struct peer_call *call, struct peer_answer *answer)
{
	struct buffer out;
	uint64_t size = 0;
	int fd = -1;
	buffer_init(&out);
	int rc = store_body_open(to->store, call->namespace_name, call->epoch, ENCODING_ZSTD, &fd, &size);
	if (rc == DIRAUTH_ERR_STALE) {
		answer_error(answer, API_ERROR_BODY_NOT_KEPT, NULL);
		return;
	}
	if (rc == 0 && (rc = buffer_reserve(&out, (size_t)size)) == 0) {
		size_t got = 0;
		while (got < size) {
			ssize_t n = read(fd, out.data + got, (size_t)size - got);
			if (n <= 0) {
				rc = DIRAUTH_ERR_IO;
				break;
			}
			got += (size_t)n;
		}
		out.len = got;
	}
	if (fd >= 0)
		close(fd);
	if (rc == 0)
		snprintf(answer->content_encoding, sizeof answer->content_encoding, "zstd");
	answer_read(answer, rc, &out, "application/octet-stream",
	            "No snapshot body of this epoch is stored here.");
}

static void serve_certificates(struct sim_node *to, struct peer_answer *answer)
{
	struct buffer own, bundle;
	char why[SIGNER_DETAIL_MAX + 1];
	buffer_init(&own);
	buffer_init(&bundle);
	int rc = signer_client_query(to->signer, SIGNER_OP_GET_CERTIFICATES, NULL, 0, &own, why, sizeof why);
	if (rc) {
		answer_error(answer, API_ERROR_UNAVAILABLE, why);
		buffer_free(&own);
		return;
	}
	rc = authority_set_bundle(to->set, own.data, own.len, &bundle);
	buffer_free(&own);
	answer_read(answer, rc, &bundle, "text/plain; charset=utf-8", "");
}

/* What the target does with the call, in the HTTP handlers' words. */
static void handle(struct sim_node *to, const struct peer_call *call, struct peer_answer *answer)
{
	const struct config *config = to->config;
	struct round_answer verdict;
	struct buffer out;
	int ns = -1;
	buffer_init(&out);
	if (call->operation != PEER_FETCH_CERTIFICATES) {
		ns = config_namespace_index(config, call->namespace_name, strlen(call->namespace_name));
		if (ns < 0) {
			answer_error(answer, API_ERROR_UNKNOWN_NAMESPACE, NULL);
			return;
		}
	}
	size_t i = (size_t)ns;
	const char *name = call->namespace_name;
	int rc;
	switch (call->operation) {
	case PEER_PUSH_VOTE:
		round_accept_vote(to->round, i, call->body, call->body_len, &verdict);
		answer_round(answer, &verdict);
		break;
	case PEER_PUSH_SIGNATURE:
		round_accept_signature(to->round, i, call->body, call->body_len, &verdict);
		answer_round(answer, &verdict);
		break;
	case PEER_PULL_VOTE:
		rc = round_vote_get(to->round, i, call->epoch, call->voter, &out);
		answer_read(answer, rc, &out, "application/octet-stream",
		            "No vote of that member for that epoch is held here.");
		break;
	case PEER_PULL_SIGNATURES:
		rc = round_signatures_get(to->round, i, call->epoch, &out);
		answer_read(answer, rc, &out, "text/plain; charset=utf-8",
		            "No header with a signature is held here for that epoch.");
		break;
	case PEER_FETCH_REGISTRATION:
		rc = store_registration_get(to->store, name, call->service_id, call->sequence, &out);
		answer_read(answer, rc, &out, "text/plain; charset=utf-8",
		            "No registration of that service and sequence is kept here.");
		break;
	case PEER_FETCH_CERTIFICATES:
		serve_certificates(to, answer);
		break;
	case PEER_FETCH_LATEST_HEADER: {
		uint64_t latest = 0;
		rc = store_snapshot_latest(to->store, name, &latest);
		if (rc == 0)
			rc = store_snapshot_get(to->store, name, latest, &out, NULL);
		answer_read(answer, rc, &out, "text/plain; charset=utf-8",
		            "Nothing has been published in this namespace yet.");
		break;
	}
	case PEER_FETCH_HEADER:
		rc = store_snapshot_get(to->store, name, call->epoch, &out, NULL);
		answer_read(answer, rc, &out, "text/plain; charset=utf-8",
		            "No snapshot of this epoch is stored here.");
		break;
	case PEER_FETCH_BODY:
		serve_body(to, call, answer);
		break;
	case PEER_FETCH_STATEMENT:
		if (!config->namespaces[i].lifecycle) {
			answer_error(answer, API_ERROR_NOT_FOUND,
			             "This namespace keeps no health statements or revocations.");
			break;
		}
		rc = store_statement_get(to->store, name, call->digest, &out);
		answer_read(answer, rc, &out, "text/plain; charset=utf-8",
		            "No statement with that digest is kept here.");
		break;
	case PEER_FETCH_NOTES:
		rc = readpath_notes_answer(to->store, name, call->body, call->body_len,
		                           config->bounds.registration_body, &out);
		if (rc == DIRAUTH_ERR_SYNTAX || rc == DIRAUTH_ERR_BOUNDS) {
			buffer_free(&out);
			answer_error(answer, API_ERROR_MALFORMED,
			             "The body is not a notes request (schema/notes-bundle.md).");
			break;
		}
		answer_read(answer, rc, &out, "application/octet-stream", "");
		break;
	case PEER_FETCH_HEADERS:
		rc = readpath_headers_from(to->store, name, call->epoch, &out);
		answer_read(answer, rc, &out, "application/octet-stream",
		            "Nothing has been published in this namespace yet.");
		break;
	default: /* add-checkpoint: no log is kept in a simulation */
		answer_error(answer, API_ERROR_LOG_UNKNOWN, NULL);
		break;
	}
}

/* ---- routing and time ---- */

/* The process that answers for member, seen from from: the one in from's partition group when
 * the member runs twice (a clone), else the original. */
static struct sim_node *route(struct simnet *net, const struct sim_node *from, size_t member)
{
	struct sim_node *original = NULL, *near = NULL;
	for (size_t i = 0; i < net->node_count; i++) {
		struct sim_node *node = net->nodes[i];
		if (node->member != member || node->retired)
			continue;
		if (!node->clone)
			original = node;
		if (node->up && node->group == from->group && !near)
			near = node;
	}
	return net->partitioned && near ? near : original;
}

/* One way from a to b carrying bytes. */
static uint64_t one_way(struct simnet *net, const struct sim_node *a, const struct sim_node *b, size_t bytes)
{
	uint64_t ms = (uint64_t)net->o.delay_ms + a->slow_ms + (b ? b->slow_ms : 0);
	if (net->o.jitter_ms)
		ms += sim_rng_below(&net->rng, (uint64_t)net->o.jitter_ms + 1);
	if (net->o.bandwidth_mbit)
		ms += (uint64_t)bytes * 8 / ((uint64_t)net->o.bandwidth_mbit * 1000);
	return ms;
}

/* The global moment by which call must end: its timeout from now, or its deadline if sooner. The
 * round computes a deadline on its clock's monotonic scale (round_deadline_ms, clock_monotonic_ms),
 * which for a node is its own time in milliseconds: its skew off the global time. */
static uint64_t call_end(const struct sim_node *from, const struct peer_call *call)
{
	uint64_t end = from->now_ms + (uint64_t)from->config->peers.timeout_seconds * 1000;
	if (call->deadline_ms == 0)
		return end;
	int64_t deadline = call->deadline_ms > INT64_MAX ? INT64_MAX : (int64_t)call->deadline_ms;
	int64_t global = deadline - from->skew_ms;
	if (global < 0)
		return 0;
	return (uint64_t)global < end ? (uint64_t)global : end;
}

void sim_transport_broadcast(void *context, enum peer_transport_event event, size_t member)
{
	(void)member;
	struct sim_node *node = context;
	struct sim_lane *lane =
	    node->lane_depth && node->lane_depth <= SIM_LANES_MAX ? &node->lanes[node->lane_depth - 1] : NULL;
	switch (event) {
	case PEER_TRANSPORT_BROADCAST_BEGIN:
		if (node->lane_depth < SIM_LANES_MAX)
			node->lanes[node->lane_depth] = (struct sim_lane){node->now_ms, node->now_ms};
		node->lane_depth++;
		break;
	case PEER_TRANSPORT_BROADCAST_MEMBER:
		if (lane) {
			if (node->now_ms > lane->end)
				lane->end = node->now_ms;
			node->now_ms = lane->t0;
		}
		break;
	case PEER_TRANSPORT_BROADCAST_END:
		if (lane && lane->end > node->now_ms)
			node->now_ms = lane->end;
		if (node->lane_depth)
			node->lane_depth--;
		sim_node_clock(node);
		break;
	}
}

/* Handles call at to, at the global moment at; returns the moment its answer leaves. */
static uint64_t handle_at(struct sim_node *to, const struct peer_call *call, uint64_t at,
                          struct peer_answer *answer)
{
	uint64_t now = to->now_ms, high = to->high_ms;
	to->now_ms = to->high_ms = at;
	sim_node_clock(to);
	handle(to, call, answer);
	uint64_t done = to->now_ms;
	to->now_ms = now;
	to->high_ms = high;
	clock_set_ms(to->clock, sim_node_local_ms(to, high > now ? high : now));
	return done;
}

enum outcome { ANSWERED, UNREACHABLE, TIMED_OUT, TOO_LARGE };

/* One attempt of call from from to to, by end; advances from's time. */
static enum outcome attempt(struct simnet *net, struct sim_node *from, struct sim_node *to,
                            const struct peer_call *call, size_t cap, uint64_t end,
                            struct peer_answer *answer)
{
	uint64_t t = from->now_ms;
	net->stats.attempts++;
	if (!to || !to->up || to == from) {
		uint64_t cost = one_way(net, from, to, 0) + one_way(net, from, to, 0);
		net->stats.refused++;
		if (t + cost > end) {
			from->now_ms = end;
			snprintf(answer->reason, sizeof answer->reason, "no answer before the deadline");
			return TIMED_OUT;
		}
		from->now_ms = t + cost;
		snprintf(answer->reason, sizeof answer->reason, "connection refused");
		return UNREACHABLE;
	}
	int cut = (net->cut[from->index] & ((uint32_t)1 << to->index)) &&
	          !(net->cut_passes[from->index][to->index] & ((uint32_t)1 << call->operation));
	if ((net->partitioned && to->group != from->group) || cut) {
		uint64_t wait = (uint64_t)from->config->peers.connect_timeout_seconds * 1000;
		net->stats.partitioned++;
		from->now_ms = t + wait < end ? t + wait : end;
		snprintf(answer->reason, sizeof answer->reason, "connection timed out (no route)");
		return TIMED_OUT;
	}
	int lost = 0;
	if (net->loss_permille && sim_rng_permille(&net->rng, net->loss_permille))
		lost = 1 + (int)sim_rng_below(&net->rng, 2); /* 1: the request, 2: the answer */
	uint64_t there = one_way(net, from, to, call->body_len);
	if (lost == 1) {
		uint64_t cost = there + one_way(net, to, from, 0);
		net->stats.lost++;
		from->now_ms = t + cost < end ? t + cost : end;
		snprintf(answer->reason, sizeof answer->reason, "connection reset (the request was lost)");
		return UNREACHABLE;
	}
	if (t + there > end) {
		from->now_ms = end;
		snprintf(answer->reason, sizeof answer->reason,
		         "no answer before the deadline (the request was late)");
		return TIMED_OUT;
	}
	net->stats.bytes += call->body_len;
	uint64_t done = handle_at(to, call, t + there, answer);
	size_t bytes = answer->body.len;
	answer->wire_bytes = bytes;
	net->stats.bytes += bytes;
	if (lost == 2) {
		uint64_t back = done + one_way(net, to, from, 0);
		net->stats.lost++;
		from->now_ms = back < end ? back : end;
		snprintf(answer->reason, sizeof answer->reason, "connection reset (the answer was lost)");
		return UNREACHABLE;
	}
	uint64_t back = done + one_way(net, to, from, bytes);
	if (back > end) {
		from->now_ms = end;
		snprintf(answer->reason, sizeof answer->reason,
		         "no answer before the deadline (the answer was late)");
		return TIMED_OUT;
	}
	from->now_ms = back;
	if (bytes > cap) {
		snprintf(answer->reason, sizeof answer->reason, "the answer is larger than %zu bytes", cap);
		return TOO_LARGE;
	}
	return ANSWERED;
}

static void answer_empty(struct peer_answer *answer)
{
	buffer_reset(&answer->body);
	answer->status = 0;
	answer->error_code[0] = 0;
	answer->content_type[0] = 0;
	answer->content_encoding[0] = 0;
	answer->wire_bytes = 0;
}

int sim_transport_call(void *context, size_t member, const struct peer_call *call, struct peer_answer *answer)
{
	struct sim_node *from = context;
	struct simnet *net = from->net;
	struct sim_node *to = route(net, from, member);
	uint64_t end = call_end(from, call);
	size_t cap = peer_client_answer_cap(from->peers, call->operation);
	unsigned retries = from->config->peers.retries;
	enum outcome outcome = TIMED_OUT;
	char why[PEER_REASON_MAX - 40] = "the deadline passed before an attempt";
	net->stats.calls++;
	answer->attempts = 0;
	for (unsigned r = 0; r <= retries; r++) {
		if (r > 0) {
			/* The peer client's backoff: the upper half of [0, base * 2^(r-1)], capped. */
			uint64_t ceiling = (uint64_t)PEER_RETRY_BASE_MS << (r - 1);
			ceiling = ceiling > PEER_RETRY_MAX_MS ? PEER_RETRY_MAX_MS : ceiling;
			uint64_t wait = ceiling / 2 + sim_rng_below(&net->rng, ceiling / 2 + 1);
			if (from->now_ms + wait >= end)
				break;
			from->now_ms += wait;
		}
		if (from->now_ms >= end)
			break;
		answer_empty(answer);
		answer->attempts++;
		outcome = attempt(net, from, to, call, cap, end, answer);
		if (outcome == ANSWERED && answer->status < 500)
			break;
		if (outcome == TOO_LARGE)
			break;
		if (outcome != ANSWERED) {
			size_t n = strnlen(answer->reason, sizeof why - 1);
			memcpy(why, answer->reason, n);
			why[n] = 0;
		}
	}
	sim_node_clock(from);
	switch (outcome) {
	case ANSWERED:
		answer->transport = PEER_TRANSPORT_ANSWERED;
		return 0;
	case TOO_LARGE:
		answer_empty(answer);
		answer->transport = PEER_TRANSPORT_TOO_LARGE;
		return DIRAUTH_ERR_BOUNDS;
	case UNREACHABLE:
	case TIMED_OUT:
		break;
	}
	answer_empty(answer);
	if (outcome == TIMED_OUT)
		net->stats.timeouts++;
	answer->transport = outcome == TIMED_OUT ? PEER_TRANSPORT_TIMEOUT : PEER_TRANSPORT_UNREACHABLE;
	snprintf(answer->reason, sizeof answer->reason, "%s (%u %s)", why, answer->attempts,
	         answer->attempts == 1 ? "attempt" : "attempts");
	return DIRAUTH_ERR_UNAVAILABLE;
}
