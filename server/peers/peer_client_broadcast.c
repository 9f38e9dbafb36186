/*
 * peer_client_broadcast.c: calls against every member of the authority set at once (see
 * peer_client.h: peers_broadcast, peers_broadcast_start and _finish, peers_call_each).
 *
 * A broadcast is a thread per member, each running the one path of a call
 * (peer_client_dispatch); the threads share nothing but the client, the call they were given and
 * their own slot, so none can hold another back. The broadcast owns copies of its calls, so the
 * caller's may go before it finishes, and a call given for several members is copied and
 * compressed once. With a transport instead of HTTP, the same broadcast runs its members one
 * after the other in the caller's thread, in member order, so that a simulation is a function of
 * its seed.
 */
#include "server/peers/peer_client_internal.h"

#include "base/error.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A call a broadcast owns: copied, with its strings and body, and its body as it goes on the wire. */
struct broadcast_call {
	struct peer_call call; /* its strings and body point at the copies below */
	char *namespace_name;
	char *voter;
	uint8_t *body;
	struct peer_call_body wire;
};

/* One member's part of a broadcast. */
struct broadcast_slot {
	struct peers_broadcast *broadcast;
	size_t member;
	const struct broadcast_call *call; /* NULL: not sent to */
	int started;                       /* its thread runs and must be joined */
	pthread_t thread;
	struct peer_answer answer;
};

struct peers_broadcast {
	const struct peer_client *client;
	peers_answer_callback on_answer;
	void *context;
	size_t call_count;
	struct broadcast_call calls[CONFIG_MAX_MEMBERS]; /* the distinct calls, call_count of them */
	struct broadcast_slot slots[CONFIG_MAX_MEMBERS];
};

static void *broadcast_run(void *argument)
{
	struct broadcast_slot *slot = argument;
	struct peers_broadcast *broadcast = slot->broadcast;

	(void)peer_client_dispatch(broadcast->client, slot->member, &slot->call->call, &slot->call->wire,
	                           &slot->answer);
	if (broadcast->on_answer != NULL)
		broadcast->on_answer(broadcast->context, slot->member, &slot->answer);
	return NULL;
}

static void broadcast_free(struct peers_broadcast *broadcast)
{
	for (size_t i = 0; i < CONFIG_MAX_MEMBERS; i++)
		peer_answer_free(&broadcast->slots[i].answer);
	for (size_t i = 0; i < broadcast->call_count; i++) {
		struct broadcast_call *copy = &broadcast->calls[i];
		free(copy->namespace_name);
		free(copy->voter);
		free(copy->body);
		peer_call_body_free(&copy->wire);
	}
	free(broadcast);
}

/* Copies call, its strings and body, into copy, and prepares its body for the wire (compressed
 * with a transport never: a transport takes the call as it is). Returns 0 or DIRAUTH_ERR_NOMEM. */
static int broadcast_call_copy(const struct peer_client *client, const struct peer_call *call,
                               struct broadcast_call *copy)
{
	copy->call = *call;
	buffer_init(&copy->wire.zstd);
	if ((call->namespace_name != NULL && (copy->namespace_name = strdup(call->namespace_name)) == NULL) ||
	    (call->voter != NULL && (copy->voter = strdup(call->voter)) == NULL))
		return DIRAUTH_ERR_NOMEM;
	if (call->body != NULL && call->body_len > 0) {
		copy->body = malloc(call->body_len);
		if (copy->body == NULL)
			return DIRAUTH_ERR_NOMEM;
		memcpy(copy->body, call->body, call->body_len);
	}
	copy->call.namespace_name = copy->namespace_name;
	copy->call.voter = copy->voter;
	copy->call.body = copy->body;
	if (!client->has_transport)
		peer_call_body_prepare(&copy->call, &copy->wire);
	return 0;
}

/* Starts calls[m] against every member m that has one and is a target (this authority never):
 * the broadcast machinery under peers_broadcast_start and peers_call_each. */
static int broadcast_begin(const struct peer_client *client,
                           const struct peer_call *const calls[CONFIG_MAX_MEMBERS],
                           const struct peers_broadcast_options *options, struct peers_broadcast **out)
{
	struct peers_broadcast *broadcast;
	char reason[PEER_REASON_MAX];
	int rc;

	*out = NULL;
	for (size_t i = 0; i < client->member_count; i++)
		if (calls[i] != NULL && (rc = peer_client_check_call(calls[i], reason, sizeof(reason))) != 0)
			return rc;
	broadcast = calloc(1, sizeof(*broadcast));
	if (broadcast == NULL)
		return DIRAUTH_ERR_NOMEM;
	broadcast->client = client;
	if (options != NULL) {
		broadcast->on_answer = options->on_answer;
		broadcast->context = options->context;
	}
	for (size_t i = 0; i < CONFIG_MAX_MEMBERS; i++) {
		struct broadcast_slot *slot = &broadcast->slots[i];
		peer_answer_init(&slot->answer);
		slot->answer.transport = PEER_TRANSPORT_SKIPPED;
		slot->broadcast = broadcast;
		slot->member = i;
	}
	for (size_t i = 0; i < client->member_count; i++) {
		if (calls[i] == NULL || i == client->self_index ||
		    (options != NULL && options->targets != NULL && !options->targets[i]))
			continue;
		/* One copy of a call given for several members: copied and compressed once. */
		for (size_t j = 0; j < i && broadcast->slots[i].call == NULL; j++)
			if (calls[j] == calls[i] && broadcast->slots[j].call != NULL)
				broadcast->slots[i].call = broadcast->slots[j].call;
		if (broadcast->slots[i].call != NULL)
			continue;
		struct broadcast_call *copy = &broadcast->calls[broadcast->call_count++];
		if (broadcast_call_copy(client, calls[i], copy) != 0) {
			broadcast_free(broadcast);
			return DIRAUTH_ERR_NOMEM;
		}
		broadcast->slots[i].call = copy;
	}
	if (client->has_transport && client->transport.broadcast != NULL)
		client->transport.broadcast(client->transport.context, PEER_TRANSPORT_BROADCAST_BEGIN, 0);
	for (size_t i = 0; i < client->member_count; i++) {
		struct broadcast_slot *slot = &broadcast->slots[i];
		if (slot->call == NULL)
			continue;
		if (client->has_transport) {
			/* In the caller's thread, in member order: a simulation is a function of its seed. */
			if (client->transport.broadcast != NULL)
				client->transport.broadcast(client->transport.context,
				                            PEER_TRANSPORT_BROADCAST_MEMBER, i);
			broadcast_run(slot);
			continue;
		}
		if (pthread_create(&slot->thread, NULL, broadcast_run, slot) == 0) {
			slot->started = 1;
			continue;
		}
		slot->answer.transport = PEER_TRANSPORT_FAILED;
		snprintf(slot->answer.reason, sizeof(slot->answer.reason), "cannot start a thread");
		if (broadcast->on_answer != NULL)
			broadcast->on_answer(broadcast->context, i, &slot->answer);
	}
	if (client->has_transport && client->transport.broadcast != NULL)
		client->transport.broadcast(client->transport.context, PEER_TRANSPORT_BROADCAST_END, 0);
	*out = broadcast;
	return 0;
}

/* call for every member, as broadcast_begin takes calls. */
static void same_call_for_all(const struct peer_call *call, const struct peer_call *calls[CONFIG_MAX_MEMBERS])
{
	for (size_t i = 0; i < CONFIG_MAX_MEMBERS; i++)
		calls[i] = call;
}

int peers_broadcast_start(const struct peer_client *client, const struct peer_call *call,
                          const struct peers_broadcast_options *options, struct peers_broadcast **out)
{
	const struct peer_call *calls[CONFIG_MAX_MEMBERS];

	same_call_for_all(call, calls);
	return broadcast_begin(client, calls, options, out);
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

/* broadcast_begin, then peers_broadcast_finish; on a refusal, answers all SKIPPED. */
static int broadcast_whole(const struct peer_client *client,
                           const struct peer_call *const calls[CONFIG_MAX_MEMBERS],
                           const struct peers_broadcast_options *options, struct peer_answer *answers)
{
	struct peers_broadcast *broadcast = NULL;
	int rc = broadcast_begin(client, calls, options, &broadcast);

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

int peers_broadcast(const struct peer_client *client, const struct peer_call *call,
                    const struct peers_broadcast_options *options, struct peer_answer *answers)
{
	const struct peer_call *calls[CONFIG_MAX_MEMBERS];

	same_call_for_all(call, calls);
	return broadcast_whole(client, calls, options, answers);
}

int peers_call_each(const struct peer_client *client, const struct peer_call *const calls[CONFIG_MAX_MEMBERS],
                    const struct peers_broadcast_options *options, struct peer_answer *answers)
{
	return broadcast_whole(client, calls, options, answers);
}
