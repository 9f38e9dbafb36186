/*
 * pool.c: kept-alive curl handles per origin, one share of TLS sessions and names (see pool.h).
 *
 * One mutex guards the table of origins; one condition variable, on the monotonic clock, wakes
 * the requests waiting for a handle whenever one is given back. A handle is created outside the
 * lock (its slot reserved first, so the bound holds meanwhile), and the handles of an evicted
 * origin are closed outside it too: closing a TLS connection writes to its socket. libcurl's
 * share takes its own locks, one mutex per kind of data, through the callbacks below.
 */
#include "net/pool_lease.h"

#include "base/error.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ORIGIN_MAX 320 /* "https://" and a host name of 253 bytes and ":65535", with room */

struct pool_origin {
	char key[ORIGIN_MAX]; /* "scheme://host:port" in lower case; "" for a free slot */
	unsigned in_use;      /* handles taken */
	unsigned idle_count;  /* handles kept in idle[] */
	CURL *idle[NET_POOL_CONNECTIONS_MAX];
	uint64_t last_used; /* the pool's use counter when last taken, to evict the oldest */
};

struct net_pool {
	unsigned per_origin;
	size_t origin_count;
	struct pool_origin *origins; /* origin_count slots */
	pthread_mutex_t lock;        /* guards origins and uses */
	pthread_cond_t given_back;   /* on CLOCK_MONOTONIC */
	uint64_t uses;
	CURLSH *share;
	pthread_mutex_t share_locks[CURL_LOCK_DATA_LAST];
};

static void share_lock(CURL *handle, curl_lock_data data, curl_lock_access access, void *context)
{
	struct net_pool *pool = context;

	(void)handle;
	(void)access;
	if ((unsigned)data < CURL_LOCK_DATA_LAST)
		pthread_mutex_lock(&pool->share_locks[data]);
}

static void share_unlock(CURL *handle, curl_lock_data data, void *context)
{
	struct net_pool *pool = context;

	(void)handle;
	if ((unsigned)data < CURL_LOCK_DATA_LAST)
		pthread_mutex_unlock(&pool->share_locks[data]);
}

int net_pool_new(const struct net_pool_options *options, struct net_pool **out)
{
	unsigned per_origin = options != NULL ? options->connections_per_origin : 0;
	unsigned origins = options != NULL ? options->origins : 0;
	pthread_condattr_t attributes;
	struct net_pool *pool;
	int rc = DIRAUTH_ERR_INTERNAL;

	*out = NULL;
	if (per_origin > NET_POOL_CONNECTIONS_MAX || origins > NET_POOL_ORIGINS_MAX)
		return DIRAUTH_ERR_CONFIG;
	pool = calloc(1, sizeof(*pool));
	if (pool == NULL)
		return DIRAUTH_ERR_NOMEM;
	pool->per_origin = per_origin != 0 ? per_origin : NET_POOL_DEFAULT_CONNECTIONS;
	pool->origin_count = origins != 0 ? origins : NET_POOL_DEFAULT_ORIGINS;
	pool->origins = calloc(pool->origin_count, sizeof(*pool->origins));
	if (pool->origins == NULL) {
		free(pool);
		return DIRAUTH_ERR_NOMEM;
	}
	pthread_mutex_init(&pool->lock, NULL);
	for (size_t i = 0; i < CURL_LOCK_DATA_LAST; i++)
		pthread_mutex_init(&pool->share_locks[i], NULL);
	if (pthread_condattr_init(&attributes) != 0 ||
	    pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC) != 0 ||
	    pthread_cond_init(&pool->given_back, &attributes) != 0)
		goto fail_locks;
	pthread_condattr_destroy(&attributes);
	pool->share = curl_share_init();
	if (pool->share == NULL) {
		rc = DIRAUTH_ERR_NOMEM;
		goto fail;
	}
	if (curl_share_setopt(pool->share, CURLSHOPT_LOCKFUNC, share_lock) != CURLSHE_OK ||
	    curl_share_setopt(pool->share, CURLSHOPT_UNLOCKFUNC, share_unlock) != CURLSHE_OK ||
	    curl_share_setopt(pool->share, CURLSHOPT_USERDATA, pool) != CURLSHE_OK ||
	    curl_share_setopt(pool->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION) != CURLSHE_OK ||
	    curl_share_setopt(pool->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS) != CURLSHE_OK)
		goto fail;
	*out = pool;
	return 0;
fail:
	if (pool->share != NULL)
		curl_share_cleanup(pool->share);
	pthread_cond_destroy(&pool->given_back);
fail_locks:
	for (size_t i = 0; i < CURL_LOCK_DATA_LAST; i++)
		pthread_mutex_destroy(&pool->share_locks[i]);
	pthread_mutex_destroy(&pool->lock);
	free(pool->origins);
	free(pool);
	return rc;
}

void net_pool_free(struct net_pool *pool)
{
	if (pool == NULL)
		return;
	for (size_t i = 0; i < pool->origin_count; i++) {
		struct pool_origin *origin = &pool->origins[i];
		for (unsigned j = 0; j < origin->idle_count; j++)
			curl_easy_cleanup(origin->idle[j]);
	}
	/* Every handle that used the share is gone, so the share is no longer in use. */
	curl_share_cleanup(pool->share);
	pthread_cond_destroy(&pool->given_back);
	for (size_t i = 0; i < CURL_LOCK_DATA_LAST; i++)
		pthread_mutex_destroy(&pool->share_locks[i]);
	pthread_mutex_destroy(&pool->lock);
	free(pool->origins);
	free(pool);
}

/* "scheme://host:port" of url in lower case, the port explicit, into out (capacity cap).
 * Returns 0, DIRAUTH_ERR_CONFIG, DIRAUTH_ERR_NOMEM. */
static int origin_of(const char *url, char *out, size_t cap)
{
	CURLU *parsed = curl_url();
	char *scheme = NULL, *host = NULL, *port = NULL;
	int rc = DIRAUTH_ERR_CONFIG;

	if (parsed == NULL)
		return DIRAUTH_ERR_NOMEM;
	if (curl_url_set(parsed, CURLUPART_URL, url, 0) == CURLUE_OK &&
	    curl_url_get(parsed, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
	    curl_url_get(parsed, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
	    curl_url_get(parsed, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK) {
		int n = snprintf(out, cap, "%s://%s:%s", scheme, host, port);
		if (n > 0 && (size_t)n < cap) {
			for (char *c = out; *c != '\0'; c++)
				*c = (char)tolower((unsigned char)*c);
			rc = 0;
		}
	}
	curl_free(scheme);
	curl_free(host);
	curl_free(port);
	curl_url_cleanup(parsed);
	return rc;
}

/* The slot of key: its own, or a free one, or the one used longest ago among those with nothing
 * running, whose idle handles move to *evicted (closed by the caller, outside the lock). NULL when
 * every slot has a request running. Under the lock. */
static struct pool_origin *origin_slot(struct net_pool *pool, const char *key, CURL **evicted,
                                       unsigned *evicted_count)
{
	struct pool_origin *oldest = NULL;

	for (size_t i = 0; i < pool->origin_count; i++)
		if (strcmp(pool->origins[i].key, key) == 0)
			return &pool->origins[i];
	for (size_t i = 0; i < pool->origin_count; i++) {
		struct pool_origin *origin = &pool->origins[i];
		if (origin->key[0] == '\0') {
			oldest = origin;
			break;
		}
		if (origin->in_use == 0 && (oldest == NULL || origin->last_used < oldest->last_used))
			oldest = origin;
	}
	if (oldest == NULL)
		return NULL;
	memcpy(evicted, oldest->idle, oldest->idle_count * sizeof(*evicted));
	*evicted_count = oldest->idle_count;
	memset(oldest, 0, sizeof(*oldest));
	snprintf(oldest->key, sizeof(oldest->key), "%s", key);
	return oldest;
}

int net_pool_lease_take(struct net_pool *pool, const char *url, uint64_t deadline_ms,
                        struct net_pool_lease *lease, char *error, size_t cap)
{
	struct timespec deadline = {.tv_sec = (time_t)(deadline_ms / 1000u),
	                            .tv_nsec = (long)(deadline_ms % 1000u) * 1000000L};
	CURL *evicted[NET_POOL_CONNECTIONS_MAX];
	unsigned evicted_count = 0;
	struct pool_origin *origin = NULL;
	char key[ORIGIN_MAX];
	CURL *curl = NULL;
	int rc;

	lease->curl = NULL;
	rc = origin_of(url, key, sizeof(key));
	if (rc != 0) {
		snprintf(error, cap, rc == DIRAUTH_ERR_NOMEM ? "out of memory" : "not a URL with a host");
		return rc;
	}
	pthread_mutex_lock(&pool->lock);
	for (;;) {
		/* Looked up again after every wait: a slot may have changed hands meanwhile. */
		origin = origin_slot(pool, key, evicted, &evicted_count);
		if (origin != NULL && (origin->idle_count > 0 || origin->in_use < pool->per_origin))
			break;
		if (pthread_cond_timedwait(&pool->given_back, &pool->lock, &deadline) != 0) {
			pthread_mutex_unlock(&pool->lock);
			if (origin != NULL)
				snprintf(error, cap,
				         "all %u connections to %s stayed busy until the deadline",
				         pool->per_origin, key);
			else
				snprintf(error, cap,
				         "no room for %s: requests to %zu other origins stayed busy "
				         "until the deadline",
				         key, pool->origin_count);
			return DIRAUTH_ERR_UNAVAILABLE;
		}
	}
	if (origin->idle_count > 0)
		curl = origin->idle[--origin->idle_count];
	origin->in_use++;
	origin->last_used = ++pool->uses;
	lease->origin = (size_t)(origin - pool->origins);
	pthread_mutex_unlock(&pool->lock);

	for (unsigned i = 0; i < evicted_count; i++)
		curl_easy_cleanup(evicted[i]);
	if (curl == NULL) {
		curl = curl_easy_init();
		if (curl == NULL || curl_easy_setopt(curl, CURLOPT_SHARE, pool->share) != CURLE_OK) {
			curl_easy_cleanup(curl);
			pthread_mutex_lock(&pool->lock);
			pool->origins[lease->origin].in_use--;
			pthread_cond_broadcast(&pool->given_back);
			pthread_mutex_unlock(&pool->lock);
			snprintf(error, cap, "cannot start a transfer");
			return DIRAUTH_ERR_NOMEM;
		}
	}
	lease->curl = curl;
	return 0;
}

void net_pool_lease_give_back(struct net_pool *pool, struct net_pool_lease *lease)
{
	struct pool_origin *origin = &pool->origins[lease->origin];

	/* The options only: the connection stays in the handle's cache, the share stays set. */
	curl_easy_reset(lease->curl);
	pthread_mutex_lock(&pool->lock);
	origin->idle[origin->idle_count++] = lease->curl;
	origin->in_use--;
	/* Waiters may be of any origin (one freed slot can serve another): wake them all. */
	pthread_cond_broadcast(&pool->given_back);
	pthread_mutex_unlock(&pool->lock);
	lease->curl = NULL;
}
