/*
 * prepared.c: prepared snapshot responses and the per-namespace set of them.
 *
 * Body bytes are handed to libmicrohttpd with a free callback, so each encoding exists once in
 * memory and lives exactly as long as the last response (and so the last connection) that
 * uses it. The set's lock guards only pointer swaps and the cache; building responses and
 * loading from the store happen outside it.
 */
#include "prepared.h"

#include "crypto.h"
#include "encoding.h"
#include "error.h"

#include <microhttpd.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PREPARED_IMMUTABLE "public, max-age=31536000, immutable"

struct prepared_set {
	const struct config *config;
	struct store *store;
	pthread_mutex_t lock; /* guards latest and cache */
	struct prepared_snapshot *latest[CONFIG_MAX_NAMESPACES];
	struct prepared_snapshot *cache[PREPARED_CACHE_SIZE]; /* older epochs, any namespace */
	size_t cache_next;                                    /* round-robin replacement */
	pthread_mutex_t load_lock;                            /* one load from the store at a time */
};

static void prepared_snapshot_free(struct prepared_snapshot *s)
{
	if (!s)
		return;
	if (s->header_response)
		MHD_destroy_response(s->header_response);
	if (s->header_not_modified)
		MHD_destroy_response(s->header_not_modified);
	for (int e = 0; e < ENCODING_COUNT; e++) {
		if (s->body_response[e])
			MHD_destroy_response(s->body_response[e]);
		if (s->body_not_modified[e])
			MHD_destroy_response(s->body_not_modified[e]);
	}
	free(s->header_note);
	free(s);
}

void prepared_snapshot_acquire(struct prepared_snapshot *snapshot)
{
	atomic_fetch_add(&snapshot->references, 1);
}

void prepared_snapshot_release(struct prepared_snapshot *snapshot)
{
	if (snapshot && atomic_fetch_sub(&snapshot->references, 1) == 1)
		prepared_snapshot_free(snapshot);
}

static int add_headers(struct MHD_Response *response, const char *etag, const char *encoding, int vary)
{
	if (MHD_add_response_header(response, MHD_HTTP_HEADER_ETAG, etag) != MHD_YES ||
	    MHD_add_response_header(response, MHD_HTTP_HEADER_CACHE_CONTROL, PREPARED_IMMUTABLE) != MHD_YES)
		return DIRAUTH_ERR_NOMEM;
	if (vary && MHD_add_response_header(response, MHD_HTTP_HEADER_VARY, "Accept-Encoding") != MHD_YES)
		return DIRAUTH_ERR_NOMEM;
	if (encoding &&
	    MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_ENCODING, encoding) != MHD_YES)
		return DIRAUTH_ERR_NOMEM;
	return 0;
}

static struct MHD_Response *empty_response(void)
{
	return MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
}

int prepared_snapshot_create(struct publication *p, struct prepared_snapshot **out)
{
	struct prepared_snapshot *s = calloc(1, sizeof *s);
	uint8_t digest[CRYPTO_SHA256_SIZE];
	char hex[2 * CRYPTO_SHA256_SIZE + 1];
	int rc = DIRAUTH_ERR_NOMEM;

	*out = NULL;
	if (!s)
		goto cleanup;
	atomic_init(&s->references, 1);
	snprintf(s->namespace_name, sizeof s->namespace_name, "%s", p->namespace_name);
	s->epoch = p->header.epoch;
	s->fresh_until = p->header.fresh_until;
	if ((rc = crypto_sha256(p->header_note.data, p->header_note.len, digest)))
		goto cleanup;
	hex_encode(digest, sizeof digest, hex);
	snprintf(s->header_etag, sizeof s->header_etag, "\"%s\"", hex);
	rc = DIRAUTH_ERR_NOMEM;
	s->header_note = buffer_steal(&p->header_note, &s->header_note_len);
	if (!s->header_note)
		goto cleanup;
	s->header_response =
	    MHD_create_response_from_buffer(s->header_note_len, s->header_note, MHD_RESPMEM_MUST_COPY);
	s->header_not_modified = empty_response();
	if (!s->header_response || !s->header_not_modified ||
	    MHD_add_response_header(s->header_response, MHD_HTTP_HEADER_CONTENT_TYPE,
	                            "text/plain; charset=utf-8") != MHD_YES ||
	    add_headers(s->header_response, s->header_etag, NULL, 0) ||
	    add_headers(s->header_not_modified, s->header_etag, NULL, 0))
		goto cleanup;

	hex_encode(p->header.body_sha256, sizeof p->header.body_sha256, hex);
	for (int e = 0; e < ENCODING_COUNT; e++) {
		const char *name = content_encoding_name((enum content_encoding)e);
		snprintf(s->body_etag[e], sizeof s->body_etag[e], "\"%s-%s\"", hex, name);
		size_t len = 0;
		uint8_t *bytes = buffer_steal(&p->encoded[e], &len);
		if (!bytes)
			goto cleanup;
		s->body_response[e] = MHD_create_response_from_buffer_with_free_callback(len, bytes, &free);
		if (!s->body_response[e]) {
			free(bytes);
			goto cleanup;
		}
		s->body_not_modified[e] = empty_response();
		const char *content_encoding = e == ENCODING_IDENTITY ? NULL : name;
		if (!s->body_not_modified[e] ||
		    MHD_add_response_header(s->body_response[e], MHD_HTTP_HEADER_CONTENT_TYPE,
		                            "application/octet-stream") != MHD_YES ||
		    add_headers(s->body_response[e], s->body_etag[e], content_encoding, 1) ||
		    add_headers(s->body_not_modified[e], s->body_etag[e], content_encoding, 1))
			goto cleanup;
	}
	*out = s;
	s = NULL;
	rc = 0;
cleanup:
	prepared_snapshot_free(s);
	publication_clear(p);
	return rc;
}

int prepared_set_create(const struct config *config, struct store *store, struct prepared_set **out)
{
	*out = NULL;
	struct prepared_set *set = calloc(1, sizeof *set);
	if (!set)
		return DIRAUTH_ERR_NOMEM;
	set->config = config;
	set->store = store;
	if (pthread_mutex_init(&set->lock, NULL) != 0) {
		free(set);
		return DIRAUTH_ERR_NOMEM;
	}
	if (pthread_mutex_init(&set->load_lock, NULL) != 0) {
		pthread_mutex_destroy(&set->lock);
		free(set);
		return DIRAUTH_ERR_NOMEM;
	}
	*out = set;
	return 0;
}

void prepared_set_free(struct prepared_set *set)
{
	if (!set)
		return;
	for (size_t i = 0; i < CONFIG_MAX_NAMESPACES; i++)
		prepared_snapshot_release(set->latest[i]);
	for (size_t i = 0; i < PREPARED_CACHE_SIZE; i++)
		prepared_snapshot_release(set->cache[i]);
	pthread_mutex_destroy(&set->lock);
	pthread_mutex_destroy(&set->load_lock);
	free(set);
}

/* Puts snapshot (whose reference the cache takes) in the cache; caller holds the lock. */
static void cache_put_locked(struct prepared_set *set, struct prepared_snapshot *snapshot)
{
	struct prepared_snapshot *old = set->cache[set->cache_next];
	set->cache[set->cache_next] = snapshot;
	set->cache_next = (set->cache_next + 1) % PREPARED_CACHE_SIZE;
	/* Releasing under the lock is cheap: at worst it frees memory. */
	prepared_snapshot_release(old);
}

static struct prepared_snapshot *cache_find_locked(struct prepared_set *set, const char *name, uint64_t epoch)
{
	for (size_t i = 0; i < PREPARED_CACHE_SIZE; i++) {
		struct prepared_snapshot *s = set->cache[i];
		if (s && s->epoch == epoch && strcmp(s->namespace_name, name) == 0)
			return s;
	}
	return NULL;
}

int prepared_set_install(struct prepared_set *set, size_t namespace_index, struct prepared_snapshot *snapshot)
{
	if (namespace_index >= set->config->namespace_count) {
		prepared_snapshot_release(snapshot);
		return DIRAUTH_ERR_NOT_FOUND;
	}
	pthread_mutex_lock(&set->lock);
	struct prepared_snapshot *previous = set->latest[namespace_index];
	if (previous && previous->epoch >= snapshot->epoch) {
		pthread_mutex_unlock(&set->lock);
		prepared_snapshot_release(snapshot);
		return DIRAUTH_ERR_ROLLBACK;
	}
	set->latest[namespace_index] = snapshot;
	if (previous)
		cache_put_locked(set, previous);
	pthread_mutex_unlock(&set->lock);
	return 0;
}

int prepared_set_latest(struct prepared_set *set, size_t namespace_index, struct prepared_snapshot **out)
{
	*out = NULL;
	if (namespace_index >= set->config->namespace_count)
		return DIRAUTH_ERR_NOT_FOUND;
	pthread_mutex_lock(&set->lock);
	struct prepared_snapshot *s = set->latest[namespace_index];
	if (s)
		prepared_snapshot_acquire(s);
	pthread_mutex_unlock(&set->lock);
	*out = s;
	return s ? 0 : DIRAUTH_ERR_NOT_FOUND;
}

/* The latest or a cached snapshot, with a reference, or NULL. */
static struct prepared_snapshot *lookup(struct prepared_set *set, size_t namespace_index, uint64_t epoch)
{
	const char *name = set->config->namespaces[namespace_index].name;
	pthread_mutex_lock(&set->lock);
	struct prepared_snapshot *s = set->latest[namespace_index];
	if (!s || s->epoch != epoch)
		s = cache_find_locked(set, name, epoch);
	if (s)
		prepared_snapshot_acquire(s);
	pthread_mutex_unlock(&set->lock);
	return s;
}

int prepared_set_epoch(struct prepared_set *set, size_t namespace_index, uint64_t epoch,
                       struct prepared_snapshot **out)
{
	struct publication p;
	struct prepared_snapshot *s;
	int rc;

	*out = NULL;
	if (namespace_index >= set->config->namespace_count)
		return DIRAUTH_ERR_NOT_FOUND;
	if ((*out = lookup(set, namespace_index, epoch)) != NULL)
		return 0;
	pthread_mutex_lock(&set->load_lock);
	/* Another request may have loaded it while this one waited. */
	if ((*out = lookup(set, namespace_index, epoch)) != NULL) {
		pthread_mutex_unlock(&set->load_lock);
		return 0;
	}
	rc = publish_load(set->config, set->store, namespace_index, epoch, &p);
	if (rc == 0)
		rc = prepared_snapshot_create(&p, &s);
	if (rc == 0) {
		prepared_snapshot_acquire(s); /* one for the cache, one for the caller */
		pthread_mutex_lock(&set->lock);
		cache_put_locked(set, s);
		pthread_mutex_unlock(&set->lock);
		*out = s;
	}
	pthread_mutex_unlock(&set->load_lock);
	return rc;
}
