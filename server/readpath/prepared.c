/*
 * prepared.c: prepared snapshot responses and the per-namespace set of them.
 *
 * Body bytes are handed to libmicrohttpd with a free callback, so each encoding exists once in
 * memory and lives exactly as long as the last response (and so the last connection) that
 * uses it. The set's lock guards only pointer swaps, the cache and the counters; reading the
 * store, compressing and building responses happen outside it. A snapshot's own body_lock
 * guards only its body responses and in-progress markers, and is never held across a load
 * either: a request that finds another one building the same encoding waits on body_built for
 * that encoding alone, so a slow load stalls only the requests that need its result.
 *
 * Two requests missing the same older epoch at once may both read its header (a small read);
 * the second to finish finds the first's entry and keeps that one.
 */
#include "server/readpath/prepared.h"

#include "schema/crypto.h"
#include "schema/encoding.h"
#include "schema/error.h"
#include "schema/note.h"
#include "schema/snapshot.h"

#include <microhttpd.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PREPARED_IMMUTABLE "public, max-age=31536000, immutable"

struct prepared_snapshot {
	char namespace_name[NAMESPACE_NAME_MAX + 1];
	struct snapshot_header header; /* parsed from header_note */
	uint8_t *header_note;          /* owned; the signed header note */
	size_t header_note_len;
	char header_etag[PREPARED_ETAG_MAX];
	char body_etag[ENCODING_COUNT][PREPARED_ETAG_MAX];
	struct MHD_Response *header_response;                   /* 200, immutable */
	struct MHD_Response *header_not_modified;               /* 304, immutable */
	struct MHD_Response *body_not_modified[ENCODING_COUNT]; /* 304, immutable */
	/* 200 with the body, immutable. Built with the snapshot for a publication, on first use for
	 * an epoch loaded from the store: read only through prepared_set_body. Guarded by body_lock;
	 * once set, never changed until the snapshot is freed. */
	struct MHD_Response *body_response[ENCODING_COUNT];
	bool body_building[ENCODING_COUNT]; /* a request is building that encoding now */
	pthread_mutex_t body_lock;
	pthread_cond_t body_built;
	atomic_size_t references;
};

struct cache_entry {
	struct prepared_snapshot *snapshot; /* NULL: free slot */
	uint64_t last_used;                 /* use_clock at the last lookup or insertion */
};

struct prepared_set {
	const struct config *config;
	struct store *store;
	pthread_mutex_t lock; /* guards latest, cache, use_clock and statistics */
	struct prepared_snapshot *latest[CONFIG_MAX_NAMESPACES];
	struct cache_entry cache[PREPARED_CACHE_SIZE]; /* older epochs, any namespace */
	uint64_t use_clock;                            /* counts cache uses, for LRU replacement */
	struct prepared_statistics statistics;
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
	pthread_cond_destroy(&s->body_built);
	pthread_mutex_destroy(&s->body_lock);
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

static const char *content_encoding_header(enum content_encoding encoding)
{
	return encoding == ENCODING_IDENTITY ? NULL : content_encoding_name(encoding);
}

/* The 200 response of s's body in encoding, taking bytes (freed on failure too). */
static int body_response_create(const struct prepared_snapshot *s, enum content_encoding encoding,
                                uint8_t *bytes, size_t len, struct MHD_Response **out)
{
	*out = NULL;
	struct MHD_Response *response = MHD_create_response_from_buffer_with_free_callback(len, bytes, &free);
	if (!response) {
		free(bytes);
		return DIRAUTH_ERR_NOMEM;
	}
	if (MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, "application/octet-stream") !=
	        MHD_YES ||
	    add_headers(response, s->body_etag[encoding], content_encoding_header(encoding), 1)) {
		MHD_destroy_response(response);
		return DIRAUTH_ERR_NOMEM;
	}
	*out = response;
	return 0;
}

/* Parses a signed header note and checks that it is a header of namespace_name (and of epoch,
 * unless epoch is UINT64_MAX). */
static int header_parse(const char *namespace_name, uint64_t epoch, const struct buffer *header_note,
                        struct snapshot_header *header)
{
	struct note *note = NULL;
	int rc = note_parse(header_note->data, header_note->len, &note);
	if (rc == 0)
		rc = snapshot_header_parse(note->text, note->text_len, header);
	if (rc == 0 && (strcmp(header->namespace_name, namespace_name) != 0 ||
	                (epoch != UINT64_MAX && header->epoch != epoch)))
		rc = DIRAUTH_ERR_MISMATCH;
	note_free(note);
	return rc;
}

/* Reads the stored body of header's snapshot into body (reset first) and checks it against the
 * header's size and digest. */
static int load_body_checked(struct store *store, const struct snapshot_header *header, struct buffer *body)
{
	uint8_t digest[CRYPTO_SHA256_SIZE];
	int rc = store_snapshot_get(store, header->namespace_name, header->epoch, NULL, body);
	if (rc)
		return rc;
	if (body->len != header->body_size)
		return DIRAUTH_ERR_MISMATCH;
	if ((rc = crypto_sha256(body->data ? body->data : (const uint8_t *)"", body->len, digest)))
		return rc;
	return memcmp(digest, header->body_sha256, sizeof digest) == 0 ? 0 : DIRAUTH_ERR_MISMATCH;
}

/* The stored body of header's snapshot in encoding, into out (reset first): checked, then
 * compressed unless identity. */
static int load_body(struct store *store, const struct snapshot_header *header,
                     enum content_encoding encoding, struct buffer *out)
{
	buffer_reset(out);
	if (encoding == ENCODING_IDENTITY)
		return load_body_checked(store, header, out);
	struct buffer body;
	buffer_init(&body);
	int rc = load_body_checked(store, header, &body);
	if (rc == 0)
		rc = compress_encode(encoding, body.data ? body.data : (const uint8_t *)"", body.len, out);
	buffer_free(&body);
	return rc;
}

/* Builds a snapshot of namespace_name from its signed header note, with its header and 304
 * responses, and with the body responses too when bodies is not NULL (bodies[e] then holds
 * encoding e). The header note must parse as a header of namespace_name (and of epoch, unless
 * epoch is UINT64_MAX). Takes the buffers; they are emptied in every case. */
static int snapshot_build(const char *namespace_name, uint64_t epoch, struct buffer *header_note,
                          struct buffer *bodies, struct prepared_snapshot **out)
{
	struct prepared_snapshot *s = calloc(1, sizeof *s);
	uint8_t digest[CRYPTO_SHA256_SIZE];
	char hex[2 * CRYPTO_SHA256_SIZE + 1];
	int rc = DIRAUTH_ERR_NOMEM;

	*out = NULL;
	if (!s)
		goto cleanup;
	if (pthread_mutex_init(&s->body_lock, NULL) != 0) {
		free(s);
		s = NULL;
		goto cleanup;
	}
	if (pthread_cond_init(&s->body_built, NULL) != 0) {
		pthread_mutex_destroy(&s->body_lock);
		free(s);
		s = NULL;
		goto cleanup;
	}
	atomic_init(&s->references, 1);
	snprintf(s->namespace_name, sizeof s->namespace_name, "%s", namespace_name);
	if ((rc = header_parse(namespace_name, epoch, header_note, &s->header)) ||
	    (rc = crypto_sha256(header_note->data, header_note->len, digest)))
		goto cleanup;
	hex_encode(digest, sizeof digest, hex);
	snprintf(s->header_etag, sizeof s->header_etag, "\"%s\"", hex);
	rc = DIRAUTH_ERR_NOMEM;
	s->header_note = buffer_steal(header_note, &s->header_note_len);
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

	/* The body's ETags and 304s come from the digest the header commits to: no body needed. */
	hex_encode(s->header.body_sha256, sizeof s->header.body_sha256, hex);
	for (int e = 0; e < ENCODING_COUNT; e++) {
		enum content_encoding encoding = (enum content_encoding)e;
		snprintf(s->body_etag[e], sizeof s->body_etag[e], "\"%s-%s\"", hex,
		         content_encoding_name(encoding));
		s->body_not_modified[e] = empty_response();
		if (!s->body_not_modified[e] || add_headers(s->body_not_modified[e], s->body_etag[e],
		                                            content_encoding_header(encoding), 1))
			goto cleanup;
		if (!bodies)
			continue;
		size_t len = 0;
		uint8_t *bytes = buffer_steal(&bodies[e], &len);
		if (!bytes)
			goto cleanup;
		if ((rc = body_response_create(s, encoding, bytes, len, &s->body_response[e])))
			goto cleanup;
		rc = DIRAUTH_ERR_NOMEM;
	}
	*out = s;
	s = NULL;
	rc = 0;
cleanup:
	prepared_snapshot_free(s);
	buffer_free(header_note);
	for (int e = 0; bodies && e < ENCODING_COUNT; e++)
		buffer_free(&bodies[e]);
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
		prepared_snapshot_release(set->cache[i].snapshot);
	pthread_mutex_destroy(&set->lock);
	free(set);
}

static int same_snapshot(const struct prepared_snapshot *s, const char *name, uint64_t epoch)
{
	return s && s->header.epoch == epoch && strcmp(s->namespace_name, name) == 0;
}

/* Puts snapshot (whose reference the cache takes) in the cache: in place of an entry for the same
 * epoch, else in a free slot, else in place of the least recently used. Caller holds the lock. */
static void cache_put_locked(struct prepared_set *set, struct prepared_snapshot *snapshot)
{
	size_t slot = PREPARED_CACHE_SIZE;
	for (size_t i = 0; i < PREPARED_CACHE_SIZE && slot == PREPARED_CACHE_SIZE; i++)
		if (same_snapshot(set->cache[i].snapshot, snapshot->namespace_name, snapshot->header.epoch))
			slot = i;
	for (size_t i = 0; i < PREPARED_CACHE_SIZE && slot == PREPARED_CACHE_SIZE; i++)
		if (!set->cache[i].snapshot)
			slot = i;
	if (slot == PREPARED_CACHE_SIZE) {
		slot = 0;
		for (size_t i = 1; i < PREPARED_CACHE_SIZE; i++)
			if (set->cache[i].last_used < set->cache[slot].last_used)
				slot = i;
	}
	struct prepared_snapshot *old = set->cache[slot].snapshot;
	set->cache[slot].snapshot = snapshot;
	set->cache[slot].last_used = ++set->use_clock;
	/* Releasing under the lock is cheap: at worst it frees memory. */
	prepared_snapshot_release(old);
}

static struct prepared_snapshot *cache_find_locked(struct prepared_set *set, const char *name, uint64_t epoch)
{
	for (size_t i = 0; i < PREPARED_CACHE_SIZE; i++) {
		if (same_snapshot(set->cache[i].snapshot, name, epoch)) {
			set->cache[i].last_used = ++set->use_clock;
			return set->cache[i].snapshot;
		}
	}
	return NULL;
}

/* Makes snapshot (whose reference is taken) the latest of namespace_index. */
static int install(struct prepared_set *set, size_t namespace_index, struct prepared_snapshot *snapshot)
{
	pthread_mutex_lock(&set->lock);
	struct prepared_snapshot *previous = set->latest[namespace_index];
	if (previous && previous->header.epoch >= snapshot->header.epoch) {
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

int prepared_set_install(struct prepared_set *set, size_t namespace_index, struct buffer *header_note,
                         struct buffer bodies[ENCODING_COUNT])
{
	struct prepared_snapshot *snapshot = NULL;
	int rc = DIRAUTH_ERR_NOT_FOUND;
	if (namespace_index < set->config->namespace_count)
		rc = snapshot_build(set->config->namespaces[namespace_index].name, UINT64_MAX, header_note,
		                    bodies, &snapshot);
	buffer_free(header_note);
	for (int e = 0; e < ENCODING_COUNT; e++)
		buffer_free(&bodies[e]);
	return rc ? rc : install(set, namespace_index, snapshot);
}

int prepared_set_load_latest(struct prepared_set *set, size_t namespace_index)
{
	struct buffer header_note, bodies[ENCODING_COUNT];
	struct snapshot_header header;
	uint64_t epoch;

	if (namespace_index >= set->config->namespace_count)
		return DIRAUTH_ERR_NOT_FOUND;
	const char *name = set->config->namespaces[namespace_index].name;
	int rc = store_snapshot_latest(set->store, name, &epoch);
	if (rc == DIRAUTH_ERR_NOT_FOUND)
		return 0;
	if (rc)
		return rc;
	buffer_init(&header_note);
	for (int e = 0; e < ENCODING_COUNT; e++)
		buffer_init(&bodies[e]);
	rc = store_snapshot_get(set->store, name, epoch, &header_note, NULL);
	if (rc == 0)
		rc = header_parse(name, epoch, &header_note, &header);
	for (int e = 0; e < ENCODING_COUNT && rc == 0; e++)
		rc = load_body(set->store, &header, (enum content_encoding)e, &bodies[e]);
	if (rc == 0)
		return prepared_set_install(set, namespace_index, &header_note, bodies);
	buffer_free(&header_note);
	for (int e = 0; e < ENCODING_COUNT; e++)
		buffer_free(&bodies[e]);
	return rc;
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

/* The latest or a cached snapshot, with a reference, or NULL. Caller holds the lock. */
static struct prepared_snapshot *lookup_locked(struct prepared_set *set, size_t namespace_index,
                                               uint64_t epoch)
{
	const char *name = set->config->namespaces[namespace_index].name;
	struct prepared_snapshot *s = set->latest[namespace_index];
	if (!s || s->header.epoch != epoch)
		s = cache_find_locked(set, name, epoch);
	if (s)
		prepared_snapshot_acquire(s);
	return s;
}

int prepared_set_epoch(struct prepared_set *set, size_t namespace_index, uint64_t epoch,
                       struct prepared_snapshot **out)
{
	struct buffer header_note;
	struct prepared_snapshot *s = NULL;
	int rc;

	*out = NULL;
	if (namespace_index >= set->config->namespace_count)
		return DIRAUTH_ERR_NOT_FOUND;
	const char *name = set->config->namespaces[namespace_index].name;
	pthread_mutex_lock(&set->lock);
	*out = lookup_locked(set, namespace_index, epoch);
	pthread_mutex_unlock(&set->lock);
	if (*out)
		return 0;
	/* Not held: the header alone, read without any lock held. */
	buffer_init(&header_note);
	rc = store_snapshot_get(set->store, name, epoch, &header_note, NULL);
	if (rc == 0)
		rc = snapshot_build(name, epoch, &header_note, NULL, &s);
	buffer_free(&header_note);
	pthread_mutex_lock(&set->lock);
	set->statistics.header_loads++;
	if (rc == 0) {
		/* Another request may have put it there meanwhile: keep that one. */
		*out = lookup_locked(set, namespace_index, epoch);
		if (!*out) {
			prepared_snapshot_acquire(s); /* one for the cache, one for the caller */
			cache_put_locked(set, s);
			*out = s;
			s = NULL;
		}
	}
	pthread_mutex_unlock(&set->lock);
	prepared_snapshot_release(s);
	return rc;
}

int prepared_set_body(struct prepared_set *set, struct prepared_snapshot *snapshot,
                      enum content_encoding encoding, struct MHD_Response **out)
{
	struct MHD_Response *response = NULL;
	struct buffer bytes;
	int rc;

	*out = NULL;
	if ((unsigned)encoding >= ENCODING_COUNT)
		return DIRAUTH_ERR_INTERNAL;
	pthread_mutex_lock(&snapshot->body_lock);
	while (!snapshot->body_response[encoding] && snapshot->body_building[encoding])
		pthread_cond_wait(&snapshot->body_built, &snapshot->body_lock);
	if (snapshot->body_response[encoding]) {
		*out = snapshot->body_response[encoding];
		pthread_mutex_unlock(&snapshot->body_lock);
		return 0;
	}
	snapshot->body_building[encoding] = true;
	pthread_mutex_unlock(&snapshot->body_lock);

	buffer_init(&bytes);
	rc = load_body(set->store, &snapshot->header, encoding, &bytes);
	pthread_mutex_lock(&set->lock);
	set->statistics.body_loads++;
	if (rc == 0 && encoding != ENCODING_IDENTITY)
		set->statistics.compressions[encoding]++;
	pthread_mutex_unlock(&set->lock);
	if (rc == 0) {
		size_t len = 0;
		uint8_t *data = buffer_steal(&bytes, &len);
		rc =
		    data ? body_response_create(snapshot, encoding, data, len, &response) : DIRAUTH_ERR_NOMEM;
	}
	buffer_free(&bytes);

	pthread_mutex_lock(&snapshot->body_lock);
	snapshot->body_building[encoding] = false;
	if (rc == 0)
		snapshot->body_response[encoding] = response;
	pthread_cond_broadcast(&snapshot->body_built);
	pthread_mutex_unlock(&snapshot->body_lock);
	*out = response;
	return rc;
}

void prepared_set_statistics(struct prepared_set *set, struct prepared_statistics *out)
{
	pthread_mutex_lock(&set->lock);
	*out = set->statistics;
	pthread_mutex_unlock(&set->lock);
}

uint64_t prepared_snapshot_epoch(const struct prepared_snapshot *snapshot)
{
	return snapshot->header.epoch;
}

uint64_t prepared_snapshot_fresh_until(const struct prepared_snapshot *snapshot)
{
	return snapshot->header.fresh_until;
}

const struct snapshot_header *prepared_snapshot_header(const struct prepared_snapshot *snapshot)
{
	return &snapshot->header;
}

const uint8_t *prepared_snapshot_header_note(const struct prepared_snapshot *snapshot, size_t *len)
{
	*len = snapshot->header_note_len;
	return snapshot->header_note;
}

const char *prepared_snapshot_header_etag(const struct prepared_snapshot *snapshot)
{
	return snapshot->header_etag;
}

const char *prepared_snapshot_body_etag(const struct prepared_snapshot *snapshot,
                                        enum content_encoding encoding)
{
	return (unsigned)encoding < ENCODING_COUNT ? snapshot->body_etag[encoding] : NULL;
}

struct MHD_Response *prepared_snapshot_header_response(const struct prepared_snapshot *snapshot)
{
	return snapshot->header_response;
}

struct MHD_Response *prepared_snapshot_header_not_modified(const struct prepared_snapshot *snapshot)
{
	return snapshot->header_not_modified;
}

struct MHD_Response *prepared_snapshot_body_not_modified(const struct prepared_snapshot *snapshot,
                                                         enum content_encoding encoding)
{
	return (unsigned)encoding < ENCODING_COUNT ? snapshot->body_not_modified[encoding] : NULL;
}
