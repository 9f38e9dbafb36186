/*
 * prepared.c: prepared snapshot responses and the per-namespace set of them.
 *
 * Bodies are served from the store's body files, each mapped read-only once: libmicrohttpd
 * hands the whole rest of an answer to send(2), so a connection's send queue can hold the body
 * as far as the kernel's buffers allow. With a descriptor, libmicrohttpd 0.9.75 sends at most
 * 128 KiB per sendfile(2) call and turn of its event loop; on loopback, where a TLS proxy sits in
 * front of an authority, that kept the client's receive window small and cost the client twice
 * the CPU per answer (docs/decisions.md, Read path). The mapped pages are the page cache's own;
 * they count in this process's resident set while mapped in, so each body counts the requests
 * sending it and the last to end drops its pages from the process (MADV_DONTNEED leaves them in
 * the page cache). A file that cannot be mapped is sent with sendfile. Body files are written
 * under another name and renamed, never truncated, so a mapping never loses its pages.
 *
 * The set's lock guards only pointer swaps, the cache and the counters; reading the store and
 * checking files happen outside it. A snapshot's own body_lock guards only its body responses
 * and in-progress markers, and is never held across a load either: a request that finds another
 * one building the same encoding waits on body_built for that encoding alone.
 *
 * Two requests missing the same older epoch at once may both read its header (a small read);
 * the second to finish finds the first's entry and keeps that one.
 */
#define _DEFAULT_SOURCE /* madvise, MADV_DONTNEED: posix_madvise leaves the pages mapped in */
#include "server/readpath/prepared.h"

#include "crypto/crypto.h"
#include "schema/encoding.h"
#include "base/error.h"
#include "schema/note.h"
#include "schema/snapshot.h"
#include "server/store/snapshots.h"

#include <microhttpd.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PREPARED_IMMUTABLE     "public, max-age=31536000, immutable"
/* What a prepared response costs besides the bytes it names: libmicrohttpd's response and its
 * header list, a conservative figure for the cache's byte bound. */
#define PREPARED_RESPONSE_COST 1024

/* A private namespace's snapshots are for its capability holders: no shared cache keeps them. */
#define PREPARED_IMMUTABLE_PRIVATE "private, max-age=31536000, immutable"

/* One body file mapped for sending. Referenced by its response (released by libmicrohttpd when
 * it destroys the response) and by every request sending it. */
struct prepared_body {
	void *address;
	size_t length;
	atomic_size_t references;
	atomic_size_t senders; /* requests sending it now */
};

struct prepared_snapshot {
	char namespace_name[NAMESPACE_NAME_MAX + 1];
	bool is_private;               /* its namespace is private: no shared cache keeps it */
	const char *cache_control;     /* PREPARED_IMMUTABLE, or its private form */
	struct snapshot_header header; /* parsed from header_note */
	uint8_t *header_note;          /* owned; the signed header note */
	size_t header_note_len;
	size_t memory; /* what the snapshot holds in memory, for the cache's bound */
	char header_etag[PREPARED_ETAG_MAX];
	char body_etag[ENCODING_COUNT][PREPARED_ETAG_MAX];
	struct MHD_Response *header_response;                   /* 200, immutable */
	struct MHD_Response *header_not_modified;               /* 304, immutable */
	struct MHD_Response *body_not_modified[ENCODING_COUNT]; /* 304, immutable */
	/* 200 with the body, immutable, over the body file. Built with the snapshot for a
	 * publication, on first use for an epoch loaded from the store: read only through
	 * prepared_set_body. Guarded by body_lock; once set, never changed until the snapshot is
	 * freed. */
	struct MHD_Response *body_response[ENCODING_COUNT];
	struct prepared_body *body[ENCODING_COUNT]; /* the mapping body_response sends, or NULL */
	bool body_building[ENCODING_COUNT];         /* a request is building that encoding now */
	pthread_mutex_t body_lock;
	pthread_cond_t body_built;
	/* The header's answers as the latest snapshot, 200 and 304, whose max-age counts down to
	 * fresh-until: built for latest_second and shared by that second's requests. Guarded by
	 * latest_lock, held while one is queued, so that none is destroyed before libmicrohttpd
	 * holds it. */
	pthread_mutex_t latest_lock;
	struct MHD_Response *latest_answer[2];
	uint64_t latest_second;
	atomic_size_t references;
};

struct cache_entry {
	struct prepared_snapshot *snapshot; /* NULL: free slot */
	uint64_t last_used;                 /* use_clock at the last lookup or insertion */
};

struct prepared_set {
	const struct config *config;
	struct store *store;
	size_t cache_bytes;   /* the bound on what cached older epochs hold in memory */
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
	for (int i = 0; i < 2; i++)
		if (s->latest_answer[i])
			MHD_destroy_response(s->latest_answer[i]);
	pthread_mutex_destroy(&s->latest_lock);
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

static int add_headers(struct MHD_Response *response, const char *cache_control, const char *etag,
                       const char *encoding, int vary)
{
	if (MHD_add_response_header(response, MHD_HTTP_HEADER_ETAG, etag) != MHD_YES ||
	    MHD_add_response_header(response, MHD_HTTP_HEADER_CACHE_CONTROL, cache_control) != MHD_YES)
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

static void prepared_body_release(struct prepared_body *body)
{
	if (atomic_fetch_sub(&body->references, 1) == 1) {
		munmap(body->address, body->length);
		free(body);
	}
}

/* libmicrohttpd's free callback of a mapped body's response. */
static void body_response_freed(void *cls)
{
	prepared_body_release(cls);
}

void prepared_body_sent(struct prepared_body *body)
{
	if (!body)
		return;
	/* A request starting to send it meanwhile only faults the pages in again. */
	if (atomic_fetch_sub(&body->senders, 1) == 1)
		madvise(body->address, body->length, MADV_DONTNEED);
	prepared_body_release(body);
}

/* A response sending size bytes of fd (taken: closed in every case) from a read-only mapping,
 * with *body its mapping; or, when the file cannot be mapped, with sendfile, and *body NULL. */
static struct MHD_Response *file_response(int fd, uint64_t size, struct prepared_body **body)
{
	struct MHD_Response *response = NULL;
	struct prepared_body *b = NULL;
	*body = NULL;
	void *address = size == 0 || size > SIZE_MAX ? MAP_FAILED
	                                             : mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd, 0);
	if (address == MAP_FAILED) {
		/* The response owns the descriptor from here, and closes it when it is destroyed. */
		response = MHD_create_response_from_fd64(size, fd);
		if (!response)
			close(fd);
		return response;
	}
	close(fd);
	b = malloc(sizeof *b);
	if (b) {
		b->address = address;
		b->length = (size_t)size;
		atomic_init(&b->references, 1);
		atomic_init(&b->senders, 0);
		response = MHD_create_response_from_buffer_with_free_callback_cls(b->length, address,
		                                                                  body_response_freed, b);
	}
	if (!response) {
		munmap(address, (size_t)size);
		free(b);
		return NULL;
	}
	*body = b;
	return response;
}

/* The 200 response of s's body in encoding, over its body file. With check, the file is read
 * whole and checked against its stored digest first (an epoch loaded from the store); without,
 * only its size is (a body this process has just written). */
static int body_response_create(struct prepared_set *set, const struct prepared_snapshot *s,
                                enum content_encoding encoding, bool check, struct MHD_Response **out,
                                struct prepared_body **body)
{
	int fd = -1;
	uint64_t size = 0;
	*out = NULL;
	*body = NULL;
	int rc = check ? store_body_check(set->store, s->namespace_name, s->header.epoch, encoding) : 0;
	if (!rc)
		rc = store_body_open(set->store, s->namespace_name, s->header.epoch, encoding, &fd, &size);
	if (!rc && encoding == ENCODING_IDENTITY && size != s->header.body_size)
		rc = DIRAUTH_ERR_MISMATCH;
	if (rc) {
		if (fd >= 0)
			close(fd);
		return rc;
	}
	struct MHD_Response *response = file_response(fd, size, body);
	if (!response)
		return DIRAUTH_ERR_NOMEM;
	if (MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, "application/octet-stream") !=
	        MHD_YES ||
	    add_headers(response, s->cache_control, s->body_etag[encoding], content_encoding_header(encoding),
	                1)) {
		MHD_destroy_response(response);
		*body = NULL;
		return DIRAUTH_ERR_NOMEM;
	}
	*out = response;
	return 0;
}

/* Builds a snapshot of namespace_name from its signed header note (taken, emptied in every case),
 * with its header and 304 responses. The note must parse as a header of namespace_name (and of
 * epoch, unless epoch is UINT64_MAX). */
static int snapshot_build(const char *namespace_name, int is_private, uint64_t epoch,
                          struct buffer *header_note, struct prepared_snapshot **out)
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
	if (pthread_mutex_init(&s->latest_lock, NULL) != 0) {
		pthread_cond_destroy(&s->body_built);
		pthread_mutex_destroy(&s->body_lock);
		free(s);
		s = NULL;
		goto cleanup;
	}
	atomic_init(&s->references, 1);
	snprintf(s->namespace_name, sizeof s->namespace_name, "%s", namespace_name);
	s->is_private = is_private;
	s->cache_control = is_private ? PREPARED_IMMUTABLE_PRIVATE : PREPARED_IMMUTABLE;
	if ((rc = header_parse(namespace_name, epoch, header_note, &s->header)) ||
	    (rc = crypto_sha256(header_note->data, header_note->len, digest)))
		goto cleanup;
	hex_encode(digest, sizeof digest, hex);
	snprintf(s->header_etag, sizeof s->header_etag, "\"%s\"", hex);
	rc = DIRAUTH_ERR_NOMEM;
	s->header_note = buffer_steal(header_note, &s->header_note_len);
	if (!s->header_note)
		goto cleanup;
	/* A copy: a connection may still be sending the response after the snapshot is freed. */
	s->header_response =
	    MHD_create_response_from_buffer(s->header_note_len, s->header_note, MHD_RESPMEM_MUST_COPY);
	s->header_not_modified = empty_response();
	if (!s->header_response || !s->header_not_modified ||
	    MHD_add_response_header(s->header_response, MHD_HTTP_HEADER_CONTENT_TYPE,
	                            "text/plain; charset=utf-8") != MHD_YES ||
	    add_headers(s->header_response, s->cache_control, s->header_etag, NULL, 0) ||
	    add_headers(s->header_not_modified, s->cache_control, s->header_etag, NULL, 0))
		goto cleanup;

	/* The body's ETags and 304s come from the digest the header commits to: no body needed. */
	hex_encode(s->header.body_sha256, sizeof s->header.body_sha256, hex);
	for (int e = 0; e < ENCODING_COUNT; e++) {
		enum content_encoding encoding = (enum content_encoding)e;
		snprintf(s->body_etag[e], sizeof s->body_etag[e], "\"%s-%s\"", hex,
		         content_encoding_name(encoding));
		s->body_not_modified[e] = empty_response();
		if (!s->body_not_modified[e] ||
		    add_headers(s->body_not_modified[e], s->cache_control, s->body_etag[e],
		                content_encoding_header(encoding), 1))
			goto cleanup;
	}
	s->memory = sizeof *s + 2 * s->header_note_len + (2 + 2 * ENCODING_COUNT) * PREPARED_RESPONSE_COST;
	*out = s;
	s = NULL;
	rc = 0;
cleanup:
	prepared_snapshot_free(s);
	buffer_free(header_note);
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
	set->cache_bytes = config->http.old_epochs_cache_bytes;
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

/* The least recently used occupied slot, or PREPARED_CACHE_SIZE. Caller holds the lock. */
static size_t cache_oldest_locked(const struct prepared_set *set)
{
	size_t slot = PREPARED_CACHE_SIZE;
	for (size_t i = 0; i < PREPARED_CACHE_SIZE; i++)
		if (set->cache[i].snapshot &&
		    (slot == PREPARED_CACHE_SIZE || set->cache[i].last_used < set->cache[slot].last_used))
			slot = i;
	return slot;
}

static size_t cache_memory_locked(const struct prepared_set *set)
{
	size_t total = 0;
	for (size_t i = 0; i < PREPARED_CACHE_SIZE; i++)
		if (set->cache[i].snapshot)
			total += set->cache[i].snapshot->memory;
	return total;
}

/* Puts snapshot (whose reference the cache takes) in the cache: in place of an entry for the same
 * epoch, else in a free slot, else in place of the least recently used; then drops the least
 * recently used others while the cache holds more than its byte bound. A snapshot larger than
 * the bound alone is not cached. Caller holds the lock. */
static void cache_put_locked(struct prepared_set *set, struct prepared_snapshot *snapshot)
{
	if (snapshot->memory > set->cache_bytes) {
		prepared_snapshot_release(snapshot);
		return;
	}
	size_t slot = PREPARED_CACHE_SIZE;
	for (size_t i = 0; i < PREPARED_CACHE_SIZE && slot == PREPARED_CACHE_SIZE; i++)
		if (same_snapshot(set->cache[i].snapshot, snapshot->namespace_name, snapshot->header.epoch))
			slot = i;
	for (size_t i = 0; i < PREPARED_CACHE_SIZE && slot == PREPARED_CACHE_SIZE; i++)
		if (!set->cache[i].snapshot)
			slot = i;
	if (slot == PREPARED_CACHE_SIZE)
		slot = cache_oldest_locked(set);
	/* Releasing under the lock is cheap: at worst it frees memory. */
	prepared_snapshot_release(set->cache[slot].snapshot);
	set->cache[slot].snapshot = snapshot;
	set->cache[slot].last_used = ++set->use_clock;
	while (cache_memory_locked(set) > set->cache_bytes) {
		size_t oldest = cache_oldest_locked(set);
		prepared_snapshot_release(set->cache[oldest].snapshot);
		set->cache[oldest].snapshot = NULL;
	}
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

/* A snapshot of namespace_index from its header note, with every body response built. */
static int build_with_bodies(struct prepared_set *set, size_t namespace_index, uint64_t epoch,
                             struct buffer *header_note, bool check, struct prepared_snapshot **out)
{
	struct prepared_snapshot *s = NULL;
	int rc =
	    snapshot_build(set->config->namespaces[namespace_index].name,
	                   config_namespace_is_private(set->config, namespace_index), epoch, header_note, &s);
	for (int e = 0; rc == 0 && e < ENCODING_COUNT; e++)
		rc = body_response_create(set, s, (enum content_encoding)e, check, &s->body_response[e],
		                          &s->body[e]);
	if (rc) {
		prepared_snapshot_release(s);
		return rc;
	}
	*out = s;
	return 0;
}

int prepared_set_install(struct prepared_set *set, size_t namespace_index, struct buffer *header_note)
{
	struct prepared_snapshot *snapshot = NULL;
	if (namespace_index >= set->config->namespace_count) {
		buffer_free(header_note);
		return DIRAUTH_ERR_NOT_FOUND;
	}
	int rc = build_with_bodies(set, namespace_index, UINT64_MAX, header_note, false, &snapshot);
	return rc ? rc : install(set, namespace_index, snapshot);
}

int prepared_set_load_latest(struct prepared_set *set, size_t namespace_index)
{
	struct buffer header_note;
	struct prepared_snapshot *snapshot = NULL;
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
	rc = store_snapshot_get(set->store, name, epoch, &header_note, NULL);
	if (rc == 0)
		rc = build_with_bodies(set, namespace_index, epoch, &header_note, true, &snapshot);
	buffer_free(&header_note);
	return rc ? rc : install(set, namespace_index, snapshot);
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
		rc = snapshot_build(name, config_namespace_is_private(set->config, namespace_index), epoch,
		                    &header_note, &s);
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

/* The response of snapshot's body in encoding, and with sending, one more sender of its mapping.
 * Caller holds snapshot's body_lock, and the response is built. */
static void body_take_locked(struct prepared_snapshot *snapshot, enum content_encoding encoding,
                             struct MHD_Response **out, struct prepared_body **sending)
{
	struct prepared_body *body = snapshot->body[encoding];
	*out = snapshot->body_response[encoding];
	if (sending && body) {
		atomic_fetch_add(&body->references, 1);
		atomic_fetch_add(&body->senders, 1);
		*sending = body;
	}
}

int prepared_set_body(struct prepared_set *set, struct prepared_snapshot *snapshot,
                      enum content_encoding encoding, struct MHD_Response **out,
                      struct prepared_body **sending)
{
	struct MHD_Response *response = NULL;
	struct prepared_body *body = NULL;

	*out = NULL;
	if (sending)
		*sending = NULL;
	if ((unsigned)encoding >= ENCODING_COUNT)
		return DIRAUTH_ERR_INTERNAL;
	pthread_mutex_lock(&snapshot->body_lock);
	while (!snapshot->body_response[encoding] && snapshot->body_building[encoding])
		pthread_cond_wait(&snapshot->body_built, &snapshot->body_lock);
	if (snapshot->body_response[encoding]) {
		body_take_locked(snapshot, encoding, out, sending);
		pthread_mutex_unlock(&snapshot->body_lock);
		return 0;
	}
	snapshot->body_building[encoding] = true;
	pthread_mutex_unlock(&snapshot->body_lock);

	int rc = body_response_create(set, snapshot, encoding, true, &response, &body);
	pthread_mutex_lock(&set->lock);
	set->statistics.body_loads++;
	pthread_mutex_unlock(&set->lock);

	pthread_mutex_lock(&snapshot->body_lock);
	snapshot->body_building[encoding] = false;
	if (rc == 0) {
		snapshot->body_response[encoding] = response;
		snapshot->body[encoding] = body;
		body_take_locked(snapshot, encoding, out, sending);
	}
	pthread_cond_broadcast(&snapshot->body_built);
	pthread_mutex_unlock(&snapshot->body_lock);
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

/* The latest header's answer, 200 (note) or 304 (none), with Cache-Control of max_age. */
static struct MHD_Response *latest_answer_create(const struct prepared_snapshot *s, bool note,
                                                 uint64_t max_age)
{
	char cache_control[64];
	snprintf(cache_control, sizeof cache_control, "%s, max-age=%llu",
	         s->is_private ? "private" : "public", (unsigned long long)max_age);
	struct MHD_Response *response =
	    note ? MHD_create_response_from_buffer(s->header_note_len, s->header_note, MHD_RESPMEM_MUST_COPY)
	         : empty_response();
	if (response &&
	    (MHD_add_response_header(response, MHD_HTTP_HEADER_ETAG, s->header_etag) != MHD_YES ||
	     MHD_add_response_header(response, MHD_HTTP_HEADER_CACHE_CONTROL, cache_control) != MHD_YES ||
	     (note && MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE,
	                                      "text/plain; charset=utf-8") != MHD_YES))) {
		MHD_destroy_response(response);
		response = NULL;
	}
	return response;
}

int prepared_snapshot_queue_latest_header(struct prepared_snapshot *snapshot,
                                          struct MHD_Connection *connection, uint64_t now, bool not_modified)
{
	pthread_mutex_lock(&snapshot->latest_lock);
	if (!snapshot->latest_answer[0] || snapshot->latest_second != now) {
		uint64_t fresh_until = snapshot->header.fresh_until;
		uint64_t max_age = now < fresh_until ? fresh_until - now : 0;
		struct MHD_Response *ok = latest_answer_create(snapshot, true, max_age);
		struct MHD_Response *unchanged = ok ? latest_answer_create(snapshot, false, max_age) : NULL;
		if (!unchanged) {
			if (ok)
				MHD_destroy_response(ok);
			pthread_mutex_unlock(&snapshot->latest_lock);
			return 0;
		}
		/* A connection that queued the old ones keeps them until it has sent them. */
		for (int i = 0; i < 2; i++)
			if (snapshot->latest_answer[i])
				MHD_destroy_response(snapshot->latest_answer[i]);
		snapshot->latest_answer[0] = ok;
		snapshot->latest_answer[1] = unchanged;
		snapshot->latest_second = now;
	}
	enum MHD_Result result =
	    MHD_queue_response(connection, not_modified ? MHD_HTTP_NOT_MODIFIED : MHD_HTTP_OK,
	                       snapshot->latest_answer[not_modified ? 1 : 0]);
	pthread_mutex_unlock(&snapshot->latest_lock);
	return result == MHD_YES;
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
