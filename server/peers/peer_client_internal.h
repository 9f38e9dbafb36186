/*
 * peer_client_internal.h: what the peer client's two files share (peer_client.h is its public
 * face): the client itself, a call's body as it goes on the wire, and the one path of a call.
 *
 * peer_client.c makes one call to one member: the checks before anything is sent, the URL, the
 * retry loop under one deadline, the answer's bounds and decoding. peer_client_broadcast.c runs
 * calls against many members at once, each member's through that same path. Nothing here is for
 * other modules.
 */
#ifndef DIRAUTH_SERVER_PEERS_PEER_CLIENT_INTERNAL_H
#define DIRAUTH_SERVER_PEERS_PEER_CLIENT_INTERNAL_H

#include "net/client.h"
#include "net/pool.h"
#include "base/buffer.h"
#include "server/peers/capabilities.h"
#include "server/peers/peer_client.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct peer_member {
	char name[NOTE_NAME_MAX + 1];
	char url[CONFIG_URL_MAX];
};

struct peer_client {
	size_t member_count;
	size_t self_index;
	/* The members' urls, the timeouts and the retries may change while calls run
	 * (peer_client_reconfigure): they are written, and copied by each call as it begins, under
	 * settings_lock (owned, a pointer so that a call on a const client can take it). */
	pthread_mutex_t *settings_lock;
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
	struct net_pool **pools;                /* owned; one per member; NULL with a transport */
	int has_transport;
	struct peer_transport transport;
	/* Failed exchanges by member and enum peer_failure (owned, member_count rows), counted by
	 * peer_client_dispatch; atomics, as the client is shared and immutable otherwise. */
	_Atomic uint64_t (*failures)[PEER_FAILURE_COUNT];
};

/* A call's body as it goes on the wire: compressed once, for all its attempts and members. */
struct peer_call_body {
	struct buffer zstd; /* the body as zstd; empty: the body goes as it is */
};

/* The refusals made before anything is sent (no such operation, a path segment that is not
 * safe, ...): 0, or a negative dirauth_error with reason (capacity cap) getting the words. */
int peer_client_check_call(const struct peer_call *call, char *reason, size_t cap);

/* Compresses call's body when its operation sends a long one as zstd. A compression that fails
 * (memory) leaves the body to go as it is: compression saves bytes, it is never needed. body is
 * the caller's, freed with peer_call_body_free. */
void peer_call_body_prepare(const struct peer_call *call, struct peer_call_body *body);
void peer_call_body_free(struct peer_call_body *body);

/* call (checked, for a member of the set) through the client's transport or over HTTP with body
 * (NULL with a transport); answer emptied first. Returns what peer_client_call returns. */
int peer_client_dispatch(const struct peer_client *client, size_t member, const struct peer_call *call,
                         const struct peer_call_body *body, struct peer_answer *answer);

#endif
