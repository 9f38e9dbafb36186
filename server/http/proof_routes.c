/*
 * proof_routes.c: the proofs of each namespace's transparency log, under /v1/<namespace>/log/
 * beside the tiles (docs/api.md, "Proofs").
 *
 *   proof/<epoch>               the c2sp.org/tlog-proof file of that epoch's header against the
 *                               latest checkpoint
 *   proof/<epoch>/<size>        the same against the checkpoint of that tree size
 *   consistency/<old>/<new>     the consistency proof from tree size old to the checkpointed size
 *                               new, one base64 hash per line
 * The numbers are path segments in their one canonical decimal spelling, like every epoch of the
 * API (no query strings anywhere). A proof file carries a checkpoint note, which gains
 * cosignatures and, for the latest, moves on with each publication: cached a few seconds, like
 * the checkpoint. A consistency proof between two sizes of an append-only tree never changes once
 * new is checkpointed: immutable. Refusals are no-store, each with its code: 400 for a number that
 * is not canonical or sizes out of order, 404 for a log without a checkpoint, an epoch not in the
 * log or not in the tree asked for, a size never checkpointed.
 *
 * Each answer made is kept (answer_cache.h, bounded by http.log_cache_bytes) and queued again for
 * the next request of its path: a consistency proof as it is, a proof file tagged with the
 * store's log generation (store_log_generation), so that a request finds it only while no
 * checkpoint note was stored or published since it was made (a new checkpoint, or one more
 * cosignature, makes the file anew). A kept answer costs a lookup instead of a dozen read
 * transactions, note parsing and base64.
 */
#include "server/http/routes.h"

#include "schema/checkpoint.h"
#include "schema/encoding.h"
#include "base/error.h"
#include "server/tlog/cosigning.h"
#include "server/store/tlog_table.h"
#include "server/tlog/translog.h"

#include <string.h>

#define PROOF_NUMBER_TEXT_MAX 20 /* digits of UINT64_MAX */

/* The route's capture number index as a canonical decimal; -1 when it is not one. */
static int capture_number(const struct http_request *request, size_t index, uint64_t *out)
{
	const struct router_capture *text = &request->match.captures[index];
	if (text->len == 0 || text->len > PROOF_NUMBER_TEXT_MAX ||
	    decimal_parse(text->data, text->len, out) != 0)
		return -1;
	return 0;
}

/* The tree size of a checkpoint note as stored. Returns 0 or DIRAUTH_ERR_STORE. */
static int note_size(const struct buffer *note, uint64_t *size)
{
	struct note *parsed = NULL;
	struct checkpoint checkpoint;
	int rc = note_parse(note->data, note->len, &parsed);
	if (rc == 0)
		rc = checkpoint_parse(parsed->text, parsed->text_len, &checkpoint);
	if (rc == 0)
		*size = checkpoint.tree_size;
	note_free(parsed);
	return rc ? DIRAUTH_ERR_STORE : 0;
}

/* The route's path below the log's prefix, its numbers as they came (canonical, checked):
 * "<word>/<capture 1>[/<capture 2>]", the key its answer is kept by. Returns its length. */
static size_t answer_key(const struct http_request *request, const char *word, char key[ANSWER_CACHE_KEY_MAX])
{
	size_t len = strlen(word);
	memcpy(key, word, len);
	for (size_t i = 1; i < request->match.count && i < 3; i++) {
		const struct router_capture *c = &request->match.captures[i];
		key[len++] = '/';
		memcpy(key + len, c->data, c->len); /* at most PROOF_NUMBER_TEXT_MAX */
		len += c->len;
	}
	return len;
}

/* The store's log generation as a kept answer's tag. */
static void put_generation(uint8_t tag[8], uint64_t generation)
{
	for (size_t i = 0; i < 8; i++)
		tag[i] = (uint8_t)(generation >> (8 * i));
}

static enum MHD_Result answer(struct http_request *request, const char *cache, struct buffer *body)
{
	return respond_queue_and_destroy(request->connection, MHD_HTTP_OK,
	                                 respond_response_taking(body, "text/plain; charset=utf-8", cache));
}

static enum MHD_Result refuse_missing(struct http_request *request, enum translog_proof_miss miss)
{
	enum api_error error = API_ERROR_LOG_NO_CHECKPOINT;
	if (miss == TRANSLOG_PROOF_MISS_EPOCH_NOT_IN_LOG)
		error = API_ERROR_LOG_EPOCH_NOT_IN_LOG;
	else if (miss == TRANSLOG_PROOF_MISS_EPOCH_NOT_IN_TREE)
		error = API_ERROR_LOG_EPOCH_NOT_IN_TREE;
	else if (miss == TRANSLOG_PROOF_MISS_SIZE_NOT_CHECKPOINTED)
		error = API_ERROR_LOG_SIZE_NOT_CHECKPOINTED;
	return respond_error(request->connection, request->route, error, NULL);
}

/* The answer of proof/<epoch>/<size> when no checkpoint of size could be read: made as it always
 * was, so that what is missing is told apart (no checkpoint, no such size). */
static enum MHD_Result answer_proof_unkept(struct http_request *request, uint64_t epoch, uint64_t size)
{
	struct buffer file;
	enum translog_proof_miss miss = TRANSLOG_PROOF_MISS_NONE;
	buffer_init(&file);
	int rc = translog_inclusion_proof(request->server->options.store, http_namespace_name(request), epoch,
	                                  size, &file, &miss);
	enum MHD_Result result;
	if (rc == DIRAUTH_ERR_NOT_FOUND)
		result = refuse_missing(request, miss);
	else if (rc)
		result = respond_error(request->connection, request->route, API_ERROR_INTERNAL,
		                       dirauth_strerror(rc));
	else
		result = answer(request, http_namespace_cache_control(request, HTTP_CACHE_LATEST_CHECKPOINT),
		                &file);
	buffer_free(&file);
	return result;
}

enum MHD_Result http_serve_log_proof(struct http_request *request)
{
	uint64_t epoch = 0, size = 0;
	if (capture_number(request, 1, &epoch) != 0)
		return respond_error(request->connection, request->route, API_ERROR_LOG_PROOF_MALFORMED,
		                     "The epoch is not a canonical decimal.");
	if (request->match.count > 2 && (capture_number(request, 2, &size) != 0 || size == 0))
		return respond_error(request->connection, request->route, API_ERROR_LOG_PROOF_MALFORMED,
		                     "The tree size is not a canonical decimal of at least 1.");

	/* A kept file is tagged with the store's log generation read before its checkpoint note
	 * was: while the generation stays, no checkpoint note was stored or published since, so the
	 * note the file carries is still the one it would carry (a request that finds the file reads
	 * nothing from the store). */
	struct store *store = request->server->options.store;
	uint8_t tag[8];
	put_generation(tag, store_log_generation(store));
	char key[ANSWER_CACHE_KEY_MAX];
	size_t key_len = answer_key(request, "proof", key);
	struct answer_cache *kept = request->server->log_answers;
	enum MHD_Result result;
	if (answer_cache_queue(kept, request->connection, request->namespace_index, key, key_len, tag,
	                       sizeof tag, &result))
		return result;

	/* The checkpoint note the file carries: the one the log route serves (log_routes.c: the
	 * published one, cosigned by k authorities once several cosign), which a client can fetch
	 * beside it, or the one stored for the size asked. */
	struct buffer note;
	buffer_init(&note);
	int rc;
	if (size == 0) {
		rc = translog_checkpoint_served(store, request->server->options.config,
		                                request->namespace_index, &note);
		if (rc == DIRAUTH_ERR_NOT_FOUND) {
			buffer_free(&note);
			return respond_error(request->connection, request->route, API_ERROR_LOG_NO_CHECKPOINT,
			                     NULL);
		}
		if (rc) {
			buffer_free(&note);
			return respond_error(request->connection, request->route, API_ERROR_INTERNAL,
			                     dirauth_strerror(DIRAUTH_ERR_STORE));
		}
	} else if (store_log_checkpoint_at(store, http_namespace_name(request), size, &note) != 0) {
		buffer_free(&note);
		return answer_proof_unkept(request, epoch, size);
	}

	struct buffer file;
	enum translog_proof_miss miss = TRANSLOG_PROOF_MISS_NONE;
	buffer_init(&file);
	rc = size ? 0 : note_size(&note, &size);
	if (rc == 0)
		rc = translog_inclusion_proof_against(store, http_namespace_name(request), epoch, note.data,
		                                      note.len, size, &file, &miss);
	if (rc == DIRAUTH_ERR_NOT_FOUND) {
		result = refuse_missing(request, miss);
	} else if (rc) {
		result = respond_error(request->connection, request->route, API_ERROR_INTERNAL,
		                       dirauth_strerror(rc));
	} else {
		size_t file_len = file.len;
		result = answer_cache_keep_and_queue(
		    kept, request->connection, request->namespace_index, key, key_len, tag, sizeof tag,
		    respond_response_taking(
		        &file, "text/plain; charset=utf-8",
		        http_namespace_cache_control(request, HTTP_CACHE_LATEST_CHECKPOINT)),
		    file_len);
	}
	buffer_free(&file);
	buffer_free(&note);
	return result;
}

enum MHD_Result http_serve_log_consistency(struct http_request *request)
{
	uint64_t old_size = 0, new_size = 0;
	if (capture_number(request, 1, &old_size) != 0 || capture_number(request, 2, &new_size) != 0)
		return respond_error(request->connection, request->route, API_ERROR_LOG_PROOF_MALFORMED,
		                     "A tree size is not a canonical decimal.");
	if (new_size == 0 || old_size > new_size)
		return respond_error(request->connection, request->route, API_ERROR_LOG_PROOF_MALFORMED,
		                     "The new tree size must be at least 1 and not below the old one.");
	/* Once new_size is checkpointed the proof never changes: kept without a tag. */
	char key[ANSWER_CACHE_KEY_MAX];
	size_t key_len = answer_key(request, "consistency", key);
	struct answer_cache *kept = request->server->log_answers;
	enum MHD_Result result;
	if (answer_cache_queue(kept, request->connection, request->namespace_index, key, key_len, NULL, 0,
	                       &result))
		return result;

	struct buffer text;
	enum translog_proof_miss miss = TRANSLOG_PROOF_MISS_NONE;
	buffer_init(&text);
	int rc = translog_consistency_proof(request->server->options.store, http_namespace_name(request),
	                                    old_size, new_size, &text, &miss);
	if (rc == DIRAUTH_ERR_NOT_FOUND) {
		result = refuse_missing(request, miss);
	} else if (rc) {
		result = respond_error(request->connection, request->route, API_ERROR_INTERNAL,
		                       dirauth_strerror(rc));
	} else {
		size_t text_len = text.len;
		result = answer_cache_keep_and_queue(
		    kept, request->connection, request->namespace_index, key, key_len, NULL, 0,
		    respond_response_taking(&text, "text/plain; charset=utf-8",
		                            http_namespace_cache_control(request, HTTP_CACHE_IMMUTABLE)),
		    text_len);
	}
	buffer_free(&text);
	return result;
}
