/*
 * pool.h: kept-alive connections for the requests of net/client.h, bounded per origin and shared
 * between threads.
 *
 * The authorities of one set sit on different continents, 150 to 300 ms apart, and each link is
 * TLS: a request on a new connection pays three round trips (TCP, then TLS 1.3, then the request)
 * before its first byte of answer. A pool keeps the connections of finished requests open, so a
 * later request to the same origin (scheme://host:port) pays one round trip, and when a new
 * connection is needed after all, its TLS handshake resumes a session the pool has seen before.
 *
 * How: a pool holds, per origin, up to connections_per_origin curl easy handles. libcurl keeps a
 * finished transfer's connection in the cache of the easy handle that made it, and
 * curl_easy_reset leaves that cache alone (it resets the options only), so a handle put back in
 * the pool keeps its connection for the next request that takes it. TLS sessions and resolved
 * names live in one share of the pool (CURL_LOCK_DATA_SSL_SESSION and CURL_LOCK_DATA_DNS, each
 * under its own mutex), so every handle of the pool resumes every other's sessions. Connections
 * themselves are not shared: one handle, one connection at a time, which is what makes the bound
 * below a bound on connections.
 *
 * The bound: at most connections_per_origin requests to one origin run at once through a pool. A
 * request beyond waits until one of them ends, or until its own deadline (its total timeout,
 * waits included) passes, and then fails DIRAUTH_ERR_UNAVAILABLE without having sent anything.
 * A pool remembers at most `origins` origins; a new one takes the place of the one used longest
 * ago among those with no request running, whose connections are closed.
 *
 * A connection the server closed (its idle timeout, a restart) is found dead by libcurl when the
 * next request takes it, and that request opens a new one on the same handle: libcurl's own
 * reconnect, once, before any byte of answer. Nothing else is retried here; the request's own
 * jittered retry (net/client.h) stays the only retry. libcurl also drops a connection idle for
 * more than 118 s rather than trust it.
 *
 * Caveats:
 *   - A pool may be used by any number of threads at once; it must outlive every request made
 *     through it, and net_pool_free runs when none runs.
 *   - Requests with different TLS settings (ca_file) to one origin share the bound, but a
 *     connection is only reused by a request whose TLS settings match those it was opened with.
 */
#ifndef DIRAUTH_NET_POOL_H
#define DIRAUTH_NET_POOL_H

#define NET_POOL_DEFAULT_CONNECTIONS 4u
#define NET_POOL_CONNECTIONS_MAX     64u
#define NET_POOL_DEFAULT_ORIGINS     16u
#define NET_POOL_ORIGINS_MAX         256u

/* Zeroed: the defaults. */
struct net_pool_options {
	unsigned connections_per_origin; /* requests at once per origin; 0: NET_POOL_DEFAULT_CONNECTIONS */
	unsigned origins;                /* origins kept at once; 0: NET_POOL_DEFAULT_ORIGINS */
};

struct net_pool;

/* A pool (options may be NULL). *out gets it, NULL on failure. Returns 0; DIRAUTH_ERR_CONFIG
 * (connections_per_origin above NET_POOL_CONNECTIONS_MAX, origins above NET_POOL_ORIGINS_MAX);
 * DIRAUTH_ERR_NOMEM; DIRAUTH_ERR_INTERNAL (libcurl refused the share). net_global_init must have
 * run. */
int net_pool_new(const struct net_pool_options *options, struct net_pool **out);

/* Closes every connection and frees the pool. Accepts NULL. No request may be running on it. */
void net_pool_free(struct net_pool *pool);

#endif
