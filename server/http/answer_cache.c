/*
 * answer_cache.c: kept answers of the log's read side (answer_cache.h).
 *
 * A hash table of entries chained per bucket (the buckets a power of two, at least the entry
 * bound, so chains stay short), threaded on a recency list whose tail is dropped first. The
 * workload is many readers of few hot entries on a few threads: one mutex, held for a lookup or
 * an insertion only. An entry is counted by its users: the table holds one reference, and a
 * request that found it holds another from the lookup until libmicrohttpd has taken the response
 * (MHD_queue_response counts the connection as a user of the response until it is done), so an
 * entry dropped by another thread meanwhile is freed by whichever lets go last, and the response
 * itself by libmicrohttpd once no connection sends it.
 */
#include "server/http/answer_cache.h"

#include "base/error.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct entry {
	struct entry *chain;         /* the next in its bucket */
	struct entry *newer, *older; /* the recency list */
	atomic_size_t references;
	uint64_t hash;
	size_t namespace_index;
	size_t key_len, tag_len;
	size_t counted; /* what the entry counts against max_bytes */
	struct MHD_Response *response;
	uint8_t *tag; /* tag_len bytes, or NULL */
	char key[ANSWER_CACHE_KEY_MAX];
};

struct answer_cache {
	pthread_mutex_t lock;
	size_t max_entries, max_bytes;
	struct entry **buckets;
	size_t bucket_mask;
	struct entry *newest, *oldest;
	struct answer_cache_statistics statistics;
};

int answer_cache_create(size_t max_entries, size_t max_bytes, struct answer_cache **out)
{
	*out = NULL;
	struct answer_cache *cache = calloc(1, sizeof *cache);
	if (!cache)
		return DIRAUTH_ERR_NOMEM;
	size_t buckets = 1;
	while (buckets < max_entries && buckets < ((size_t)1 << 24))
		buckets <<= 1;
	cache->buckets = calloc(buckets, sizeof *cache->buckets);
	if (!cache->buckets) {
		free(cache);
		return DIRAUTH_ERR_NOMEM;
	}
	cache->bucket_mask = buckets - 1;
	cache->max_entries = max_entries;
	cache->max_bytes = max_bytes;
	pthread_mutex_init(&cache->lock, NULL);
	*out = cache;
	return 0;
}

/* Drops one reference; the last frees the entry and drops its reference on the response. */
static void entry_release(struct entry *e)
{
	if (atomic_fetch_sub(&e->references, 1) != 1)
		return;
	MHD_destroy_response(e->response);
	free(e->tag);
	free(e);
}

void answer_cache_free(struct answer_cache *cache)
{
	if (!cache)
		return;
	struct entry *e = cache->newest;
	while (e) {
		struct entry *next = e->older;
		entry_release(e);
		e = next;
	}
	pthread_mutex_destroy(&cache->lock);
	free(cache->buckets);
	free(cache);
}

/* FNV-1a over the namespace index and the path. */
static uint64_t key_hash(size_t namespace_index, const char *path, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ (uint64_t)namespace_index;
	for (size_t i = 0; i < len; i++) {
		h ^= (uint8_t)path[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* The entry of the key in cache->lock, or NULL; *link gets the pointer that points to it (or to
 * the end of its bucket's chain). */
static struct entry *find(struct answer_cache *cache, uint64_t hash, size_t namespace_index, const char *path,
                          size_t len, struct entry ***link)
{
	struct entry **at = &cache->buckets[hash & cache->bucket_mask];
	while (*at) {
		struct entry *e = *at;
		if (e->hash == hash && e->namespace_index == namespace_index && e->key_len == len &&
		    memcmp(e->key, path, len) == 0)
			break;
		at = &e->chain;
	}
	*link = at;
	return *at;
}

static void recency_unlink(struct answer_cache *cache, struct entry *e)
{
	if (e->newer)
		e->newer->older = e->older;
	else
		cache->newest = e->older;
	if (e->older)
		e->older->newer = e->newer;
	else
		cache->oldest = e->newer;
	e->newer = e->older = NULL;
}

static void recency_push(struct answer_cache *cache, struct entry *e)
{
	e->older = cache->newest;
	e->newer = NULL;
	if (cache->newest)
		cache->newest->newer = e;
	cache->newest = e;
	if (!cache->oldest)
		cache->oldest = e;
}

/* Takes e out of the table in cache->lock; the caller releases the table's reference. */
static void remove_entry(struct answer_cache *cache, struct entry *e)
{
	struct entry **link;
	find(cache, e->hash, e->namespace_index, e->key, e->key_len, &link);
	if (*link == e)
		*link = e->chain;
	recency_unlink(cache, e);
	cache->statistics.entries--;
	cache->statistics.bytes -= e->counted;
}

int answer_cache_queue(struct answer_cache *cache, struct MHD_Connection *connection, size_t namespace_index,
                       const char *path, size_t path_len, const uint8_t *tag, size_t tag_len,
                       enum MHD_Result *result)
{
	if (!cache || path_len > ANSWER_CACHE_KEY_MAX)
		return 0;
	uint64_t hash = key_hash(namespace_index, path, path_len);
	struct entry **link;
	pthread_mutex_lock(&cache->lock);
	struct entry *e = find(cache, hash, namespace_index, path, path_len, &link);
	if (e && (e->tag_len != tag_len || (tag_len && memcmp(e->tag, tag, tag_len) != 0)))
		e = NULL; /* made from other bytes: the caller makes the answer anew and replaces it */
	if (e) {
		atomic_fetch_add(&e->references, 1);
		if (cache->newest != e) {
			recency_unlink(cache, e);
			recency_push(cache, e);
		}
		cache->statistics.hits++;
	} else {
		cache->statistics.misses++;
	}
	pthread_mutex_unlock(&cache->lock);
	if (!e)
		return 0;
	*result = MHD_queue_response(connection, MHD_HTTP_OK, e->response);
	entry_release(e);
	return 1;
}

/* A new entry holding response, with one reference for the table and one for the caller; NULL
 * when it cannot be kept. */
static struct entry *entry_new(const struct answer_cache *cache, size_t namespace_index, const char *path,
                               size_t path_len, const uint8_t *tag, size_t tag_len,
                               struct MHD_Response *response, size_t body_len)
{
	if (path_len > ANSWER_CACHE_KEY_MAX || tag_len > ANSWER_CACHE_TAG_MAX || cache->max_entries == 0)
		return NULL;
	size_t counted = body_len + path_len + tag_len + ANSWER_CACHE_ENTRY_OVERHEAD;
	if (body_len > cache->max_bytes || counted > cache->max_bytes)
		return NULL;
	struct entry *e = calloc(1, sizeof *e);
	if (!e)
		return NULL;
	if (tag_len && !(e->tag = malloc(tag_len))) {
		free(e);
		return NULL;
	}
	if (tag_len)
		memcpy(e->tag, tag, tag_len);
	memcpy(e->key, path, path_len);
	e->key_len = path_len;
	e->tag_len = tag_len;
	e->namespace_index = namespace_index;
	e->hash = key_hash(namespace_index, path, path_len);
	e->counted = counted;
	e->response = response;
	atomic_init(&e->references, 2);
	return e;
}

enum MHD_Result answer_cache_keep_and_queue(struct answer_cache *cache, struct MHD_Connection *connection,
                                            size_t namespace_index, const char *path, size_t path_len,
                                            const uint8_t *tag, size_t tag_len, struct MHD_Response *response,
                                            size_t body_len)
{
	if (!response)
		return MHD_NO;
	struct entry *e =
	    cache ? entry_new(cache, namespace_index, path, path_len, tag, tag_len, response, body_len)
	          : NULL;
	if (!e) {
		enum MHD_Result result = MHD_queue_response(connection, MHD_HTTP_OK, response);
		MHD_destroy_response(response);
		return result;
	}
	/* The entries dropped, released once the lock is let go: a chain through their recency
	 * links, which no longer serve the list. */
	struct entry *dropped = NULL;
	struct entry **link;
	pthread_mutex_lock(&cache->lock);
	struct entry *old = find(cache, e->hash, namespace_index, path, path_len, &link);
	if (old) {
		remove_entry(cache, old);
		old->older = dropped;
		dropped = old;
	}
	while (cache->oldest && (cache->statistics.entries + 1 > cache->max_entries ||
	                         cache->statistics.bytes + e->counted > cache->max_bytes)) {
		struct entry *victim = cache->oldest;
		remove_entry(cache, victim);
		victim->older = dropped;
		dropped = victim;
		cache->statistics.evictions++;
	}
	find(cache, e->hash, namespace_index, path, path_len, &link);
	*link = e;
	recency_push(cache, e);
	cache->statistics.entries++;
	cache->statistics.bytes += e->counted;
	pthread_mutex_unlock(&cache->lock);
	while (dropped) {
		struct entry *next = dropped->older;
		entry_release(dropped);
		dropped = next;
	}
	enum MHD_Result result = MHD_queue_response(connection, MHD_HTTP_OK, response);
	entry_release(e);
	return result;
}

void answer_cache_statistics(struct answer_cache *cache, struct answer_cache_statistics *out)
{
	memset(out, 0, sizeof *out);
	if (!cache)
		return;
	pthread_mutex_lock(&cache->lock);
	*out = cache->statistics;
	pthread_mutex_unlock(&cache->lock);
}
