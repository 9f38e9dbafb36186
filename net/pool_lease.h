/*
 * pool_lease.h: how net/client.c borrows a curl handle from a pool (internal to net; pool.h is
 * the contract).
 *
 * A lease is one request's use of one handle of one origin: taken before the request's attempt,
 * given back after it, so that a wait between retries holds no connection.
 */
#ifndef DIRAUTH_NET_POOL_LEASE_H
#define DIRAUTH_NET_POOL_LEASE_H

#include "net/pool.h"

#include <curl/curl.h>
#include <stddef.h>
#include <stdint.h>

struct net_pool_lease {
	CURL *curl;    /* the handle, its options at their defaults but for the pool's share */
	size_t origin; /* the slot of its origin in the pool */
};

/* Takes a handle for url's origin, waiting while connections_per_origin requests to it run, until
 * deadline_ms (CLOCK_MONOTONIC milliseconds). error (capacity cap) says why on failure.
 * Returns 0; DIRAUTH_ERR_UNAVAILABLE (no handle free by the deadline); DIRAUTH_ERR_CONFIG (a URL
 * curl cannot split into an origin); DIRAUTH_ERR_NOMEM. */
int net_pool_lease_take(struct net_pool *pool, const char *url, uint64_t deadline_ms,
                        struct net_pool_lease *lease, char *error, size_t cap);

/* Gives the handle back, its connection kept and its options reset, and wakes a waiting request. */
void net_pool_lease_give_back(struct net_pool *pool, struct net_pool_lease *lease);

#endif
