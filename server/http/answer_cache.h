/*
 * answer_cache.h: ready-made 200 answers of requests whose answer does not change, kept between
 * requests (internal to server/http).
 *
 * The transparency log's read side (log_routes.c, proof_routes.c) answers the same requests
 * again and again with the same bytes: a tile or an entry bundle never changes once it is
 * served, nor does a consistency proof between two checkpointed sizes, and an inclusion proof
 * file changes only when the checkpoint it carries does. Making such an answer costs read
 * transactions, a walk over up to 256 records, note parsing and base64; sending a kept one costs
 * a lookup. So each answer made is kept here as the libmicrohttpd response itself, headers and
 * all, and every later request for the same path queues that response (libmicrohttpd counts its
 * users; nothing is copied).
 *
 * An entry is found by its key (the namespace's index and the path below the log's prefix) and
 * may carry a tag: bytes naming the state the answer was made from, where that state can change
 * while the path stays (a proof file carries the checkpoint note served when it was made: its
 * tag is the store's log generation, which moves whenever a checkpoint note is stored). A lookup
 * with a tag finds an entry only when the tags are equal, so an answer is never served after what
 * it was made from has changed; the entry made from the new state replaces it.
 *
 * Bounded in entries (max_entries) and in bytes (max_bytes: each entry counts its body, its key,
 * its tag and ANSWER_CACHE_ENTRY_OVERHEAD for its bookkeeping and its response's headers). When
 * adding an entry would pass either bound, the least recently used entries are dropped until it
 * fits; an answer larger than max_bytes is not kept. A response dropped while connections still
 * send it lives until the last of them is done. max_entries or max_bytes 0: nothing is kept.
 *
 * Thread-safe: one mutex guards the table and the recency list, held only for a lookup or an
 * insertion (never while an answer is made or sent).
 */
#ifndef DIRAUTH_SERVER_HTTP_ANSWER_CACHE_H
#define DIRAUTH_SERVER_HTTP_ANSWER_CACHE_H

#include <microhttpd.h>

#include <stddef.h>
#include <stdint.h>

#define ANSWER_CACHE_KEY_MAX        128         /* bytes of a path kept as a key; longer ones are not kept */
#define ANSWER_CACHE_TAG_MAX        (64 * 1024) /* bytes of a tag; a longer one is not kept */
#define ANSWER_CACHE_ENTRY_OVERHEAD 512         /* bytes an entry counts beyond its body, key and tag */

struct answer_cache;

/* Counters, for tests and metrics. */
struct answer_cache_statistics {
	uint64_t hits;
	uint64_t misses;
	uint64_t evictions; /* entries dropped to make room */
	size_t entries;     /* held now */
	size_t bytes;       /* counted now */
};

/* A cache holding at most max_entries answers and max_bytes counted bytes. Returns 0 or
 * DIRAUTH_ERR_NOMEM. */
int answer_cache_create(size_t max_entries, size_t max_bytes, struct answer_cache **out);

/* Drops every entry (each response lives on while a connection sends it) and frees. Accepts
 * NULL. */
void answer_cache_free(struct answer_cache *cache);

/*
 * Queues on connection, with status 200, the kept answer of (namespace_index, path, path_len)
 * whose tag is tag (tag_len bytes; 0: none). Returns 1 when one was found, with *result what
 * MHD_queue_response returned; 0 when none is kept (the caller makes the answer), *result
 * untouched. A NULL cache finds nothing.
 */
int answer_cache_queue(struct answer_cache *cache, struct MHD_Connection *connection, size_t namespace_index,
                       const char *path, size_t path_len, const uint8_t *tag, size_t tag_len,
                       enum MHD_Result *result);

/*
 * Queues response (a complete 200 answer whose body is body_len bytes; consumed, as
 * respond_queue_and_destroy consumes it) on connection, and keeps it as the answer of
 * (namespace_index, path, path_len) with tag (tag_len bytes, copied; 0: none), replacing the one
 * kept for that key and dropping the least recently used entries to stay within the bounds.
 * Keeping is an optimization, never a requirement: nothing is kept for a key or tag over its
 * maximum, an answer over the bounds, a NULL cache, or when memory runs out, and the answer is
 * queued all the same. Returns what MHD_queue_response returned (MHD_NO for a NULL response).
 */
enum MHD_Result answer_cache_keep_and_queue(struct answer_cache *cache, struct MHD_Connection *connection,
                                            size_t namespace_index, const char *path, size_t path_len,
                                            const uint8_t *tag, size_t tag_len, struct MHD_Response *response,
                                            size_t body_len);

/* The counters now. */
void answer_cache_statistics(struct answer_cache *cache, struct answer_cache_statistics *out);

#endif
