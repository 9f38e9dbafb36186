/*
 * store.c: dirauthd's durable state, on kv/ (LMDB underneath).
 *
 * Layout: five named databases in one environment.
 *   services         service id (32) -> u16 namespace length, namespace, u16 provider length,
 *                    provider, u64 highest sequence, u64 expires, u32 note length, note
 *   endpoints        endpoint id (32) -> service id (32)
 *   namespace_index  namespace, 0x00, service id (32) -> empty; keys are kept sorted, so one
 *                    prefix walk yields a namespace's services in ascending id order. Names never
 *                    hold 0x00, so "a\0" sorts before "a-b\0" and prefixes cannot overlap.
 *   snapshots        namespace, 0x00, epoch (u64) -> u32 header length, header, body
 *   latest           namespace -> epoch (u64)
 * Integers are big-endian and fixed-width; every length is written and checked on reading, so a
 * damaged record is reported as DIRAUTH_ERR_STORE instead of being read past its end.
 *
 * Durability is kv's (LMDB's default): a commit returns after fsync. To keep many concurrent
 * submissions from each paying for one fsync, submissions are group-committed: callers queue a
 * request and sleep; one committer thread takes up to max_batch requests, applies each in a nested
 * transaction of one write transaction (so a refused request leaves no trace while the others
 * proceed, and a later request sees what an earlier one wrote), commits once and wakes every
 * caller with its own result. When the commit fails, nobody in the batch is told 0.
 *
 * Transactions are kv's (kv/kv.h), which keep the first error: the code applying a request is a
 * straight sequence of reads, checks and writes ending in one commit, which aborts instead when
 * anything before it failed.
 */
#include "server/store/store.h"

#include "schema/buffer.h"
#include "schema/error.h"
#include "kv/kv.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define STORE_ID_LEN          32
#define STORE_DEFAULT_MAP     ((size_t)1 << 30)
#define STORE_DEFAULT_BATCH   256
#define STORE_QUEUE_PER_BATCH 4 /* the queue holds this many batches before submitters wait */
#define STORE_KEY_MAX         (STORE_NAME_MAX + 1 + STORE_ID_LEN)

/* One queued submission. It lives on the submitter's stack: the submitter sleeps until done. */
struct store_request {
	const struct store_registration *registration;
	int result;
	bool done;
	struct store_request *next;
};

struct store {
	struct kv_env *env;
	struct kv_db services;
	struct kv_db endpoints;
	struct kv_db namespace_index;
	struct kv_db snapshots;
	struct kv_db latest;
	size_t max_batch;
	size_t queue_limit;

	pthread_mutex_t lock;       /* guards everything below */
	pthread_cond_t work;        /* the committer waits for requests or stopping */
	pthread_cond_t space;       /* submitters wait for room in the queue */
	pthread_cond_t answered;    /* submitters wait for their request's result */
	struct store_request *head; /* queue, oldest first */
	struct store_request *tail;
	size_t queued;
	bool stopping;
	struct store_statistics statistics;
	pthread_t committer;
};

/* ---- encoding ---- */

static void store_put_u16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void store_put_u32(uint8_t *p, uint32_t v)
{
	for (int i = 3; i >= 0; i--) {
		p[i] = (uint8_t)v;
		v >>= 8;
	}
}

static uint64_t store_get_uint(const uint8_t *p, size_t width)
{
	uint64_t v = 0;
	for (size_t i = 0; i < width; i++)
		v = (v << 8) | p[i];
	return v;
}

/* A bounded reader over a stored value. */
struct store_reader {
	const uint8_t *data;
	size_t len;
	size_t at;
	bool failed;
};

static const uint8_t *store_read_bytes(struct store_reader *r, size_t n)
{
	if (r->failed || n > r->len - r->at) {
		r->failed = true;
		return NULL;
	}
	const uint8_t *p = r->data + r->at;
	r->at += n;
	return p;
}

static uint64_t store_read_uint(struct store_reader *r, size_t width)
{
	const uint8_t *p = store_read_bytes(r, width);
	return p ? store_get_uint(p, width) : 0;
}

/* A decoded services value; pointers into the value it was decoded from. */
struct store_service_record {
	const uint8_t *namespace_name;
	size_t namespace_len;
	const uint8_t *provider;
	size_t provider_len;
	uint64_t highest_sequence;
	uint64_t expires;
	const uint8_t *note;
	size_t note_len;
};

static int store_service_record_decode(const struct kv_val *value, struct store_service_record *out)
{
	struct store_reader r = {.data = value->data, .len = value->len};
	out->namespace_len = (size_t)store_read_uint(&r, 2);
	out->namespace_name = store_read_bytes(&r, out->namespace_len);
	out->provider_len = (size_t)store_read_uint(&r, 2);
	out->provider = store_read_bytes(&r, out->provider_len);
	out->highest_sequence = store_read_uint(&r, 8);
	out->expires = store_read_uint(&r, 8);
	out->note_len = (size_t)store_read_uint(&r, 4);
	out->note = store_read_bytes(&r, out->note_len);
	if (r.failed || r.at != r.len)
		return DIRAUTH_ERR_STORE;
	return 0;
}

static int store_service_record_encode(const struct store_registration *reg, struct buffer *out)
{
	size_t namespace_len = strlen(reg->namespace_name);
	size_t provider_len = strlen(reg->provider);
	uint8_t field[8];
	int rc;

	store_put_u16(field, (uint16_t)namespace_len);
	rc = buffer_append(out, field, 2);
	if (!rc)
		rc = buffer_append(out, reg->namespace_name, namespace_len);
	store_put_u16(field, (uint16_t)provider_len);
	if (!rc)
		rc = buffer_append(out, field, 2);
	if (!rc)
		rc = buffer_append(out, reg->provider, provider_len);
	kv_put_u64(field, reg->sequence);
	if (!rc)
		rc = buffer_append(out, field, 8);
	kv_put_u64(field, reg->expires);
	if (!rc)
		rc = buffer_append(out, field, 8);
	store_put_u32(field, (uint32_t)reg->note_len);
	if (!rc)
		rc = buffer_append(out, field, 4);
	if (!rc)
		rc = buffer_append(out, reg->note, reg->note_len);
	return rc;
}

/* Checks a namespace name's presence and length; *len receives it. */
static int store_check_name(const char *name, size_t *len)
{
	if (!name || !*name)
		return DIRAUTH_ERR_SYNTAX;
	size_t n = strnlen(name, STORE_NAME_MAX + 1);
	if (n > STORE_NAME_MAX)
		return DIRAUTH_ERR_BOUNDS;
	*len = n;
	return 0;
}

/* Writes namespace, 0x00, suffix into key (STORE_KEY_MAX bytes); returns the key's length. */
static size_t store_prefixed_key(uint8_t *key, const char *name, size_t name_len, const uint8_t *suffix,
                                 size_t suffix_len)
{
	memcpy(key, name, name_len);
	key[name_len] = 0;
	if (suffix_len)
		memcpy(key + name_len + 1, suffix, suffix_len);
	return name_len + 1 + suffix_len;
}

/* ---- applying registrations (committer thread only) ---- */

/* Applies one registration inside a nested transaction of batch: all of it or, on any refusal
 * or failure, none of it. */
static int store_apply_registration(struct store *store, struct kv_txn *batch,
                                    const struct store_registration *reg)
{
	struct kv_txn t;
	struct store_service_record old;
	struct buffer record;
	uint8_t key[STORE_KEY_MAX];
	size_t namespace_len = strlen(reg->namespace_name);
	size_t provider_len = strlen(reg->provider);
	struct kv_val found;

	buffer_init(&record);
	kv_txn_begin_nested(batch, &t);
	if (kv_txn_get(&t, store->services, reg->service_id, STORE_ID_LEN, &found)) {
		if (store_service_record_decode(&found, &old))
			kv_txn_fail(&t, DIRAUTH_ERR_STORE);
		else if (old.namespace_len != namespace_len ||
		         memcmp(old.namespace_name, reg->namespace_name, namespace_len) != 0 ||
		         old.provider_len != provider_len ||
		         memcmp(old.provider, reg->provider, provider_len) != 0)
			kv_txn_fail(&t, DIRAUTH_ERR_COLLISION);
		else if (reg->sequence <= old.highest_sequence)
			kv_txn_fail(&t, DIRAUTH_ERR_ROLLBACK);
	}
	for (size_t i = 0; i < reg->endpoint_count; i++) {
		const uint8_t *endpoint = reg->endpoint_ids + i * STORE_ID_LEN;
		if (kv_txn_get(&t, store->endpoints, endpoint, STORE_ID_LEN, &found) &&
		    (found.len != STORE_ID_LEN || memcmp(found.data, reg->service_id, STORE_ID_LEN) != 0))
			kv_txn_fail(&t, DIRAUTH_ERR_COLLISION);
	}
	if (!t.rc)
		kv_txn_fail(&t, store_service_record_encode(reg, &record));
	kv_txn_put(&t, store->services, reg->service_id, STORE_ID_LEN, record.data, record.len);
	for (size_t i = 0; i < reg->endpoint_count; i++)
		kv_txn_put(&t, store->endpoints, reg->endpoint_ids + i * STORE_ID_LEN, STORE_ID_LEN,
		           reg->service_id, STORE_ID_LEN);
	size_t key_len =
	    store_prefixed_key(key, reg->namespace_name, namespace_len, reg->service_id, STORE_ID_LEN);
	kv_txn_put(&t, store->namespace_index, key, key_len, "", 0);
	int rc = kv_txn_commit(&t);
	buffer_free(&record);
	return rc;
}

/* Applies a detached list of requests in one write transaction and sets their results.
 * Returns whether the transaction was committed. */
static bool store_apply_batch(struct store *store, struct store_request *first)
{
	struct kv_txn batch;
	size_t accepted = 0;

	kv_txn_begin(store->env, &batch, KV_WRITE);
	for (struct store_request *req = first; req; req = req->next) {
		req->result = store_apply_registration(store, &batch, req->registration);
		if (req->result == 0)
			accepted++;
	}
	if (accepted == 0) {
		/* Nothing to make durable: every request already carries its refusal. */
		kv_txn_abort(&batch);
		return false;
	}
	int rc = kv_txn_commit(&batch);
	if (rc) {
		for (struct store_request *req = first; req; req = req->next)
			req->result = rc;
		return false;
	}
	return true;
}

static void *store_committer_main(void *argument)
{
	struct store *store = argument;

	pthread_mutex_lock(&store->lock);
	for (;;) {
		while (!store->head && !store->stopping)
			pthread_cond_wait(&store->work, &store->lock);
		if (!store->head)
			break; /* stopping and drained */

		struct store_request *first = store->head, *last = first;
		size_t count = 1;
		while (last->next && count < store->max_batch) {
			last = last->next;
			count++;
		}
		store->head = last->next;
		if (!store->head)
			store->tail = NULL;
		last->next = NULL;
		store->queued -= count;
		pthread_cond_broadcast(&store->space);
		pthread_mutex_unlock(&store->lock);

		bool committed = store_apply_batch(store, first);

		pthread_mutex_lock(&store->lock);
		store->statistics.batches++;
		store->statistics.submissions += count;
		if (committed)
			store->statistics.commits++;
		for (struct store_request *req = first; req;) {
			/* Read next before done: once done, the submitter may return and free req. */
			struct store_request *next = req->next;
			req->done = true;
			req = next;
		}
		pthread_cond_broadcast(&store->answered);
	}
	pthread_mutex_unlock(&store->lock);
	return NULL;
}

/* ---- opening and closing ---- */

int store_open(const struct store_options *options, struct store **out)
{
	struct store *store = NULL;
	bool sync_ready = false;
	int rc;

	if (!out)
		return DIRAUTH_ERR_SYNTAX;
	*out = NULL;
	if (!options || !options->path || !*options->path)
		return DIRAUTH_ERR_CONFIG;
	store = calloc(1, sizeof *store);
	if (!store)
		return DIRAUTH_ERR_NOMEM;
	store->max_batch = options->max_batch ? options->max_batch : STORE_DEFAULT_BATCH;
	store->queue_limit = store->max_batch > SIZE_MAX / STORE_QUEUE_PER_BATCH
	                         ? SIZE_MAX
	                         : store->max_batch * STORE_QUEUE_PER_BATCH;

	const struct kv_database databases[] = {
	    {"services", &store->services},
	    {"endpoints", &store->endpoints},
	    {"namespace_index", &store->namespace_index},
	    {"snapshots", &store->snapshots},
	    {"latest", &store->latest},
	};
	rc = kv_env_open(options->path, options->map_size ? options->map_size : STORE_DEFAULT_MAP, databases,
	                 sizeof databases / sizeof databases[0], &store->env);
	if (rc)
		goto fail;

	if (pthread_mutex_init(&store->lock, NULL) != 0) {
		rc = DIRAUTH_ERR_NOMEM;
		goto fail;
	}
	if (pthread_cond_init(&store->work, NULL) != 0) {
		pthread_mutex_destroy(&store->lock);
		rc = DIRAUTH_ERR_NOMEM;
		goto fail;
	}
	if (pthread_cond_init(&store->space, NULL) != 0) {
		pthread_cond_destroy(&store->work);
		pthread_mutex_destroy(&store->lock);
		rc = DIRAUTH_ERR_NOMEM;
		goto fail;
	}
	if (pthread_cond_init(&store->answered, NULL) != 0) {
		pthread_cond_destroy(&store->space);
		pthread_cond_destroy(&store->work);
		pthread_mutex_destroy(&store->lock);
		rc = DIRAUTH_ERR_NOMEM;
		goto fail;
	}
	sync_ready = true;
	if (pthread_create(&store->committer, NULL, store_committer_main, store) != 0) {
		rc = DIRAUTH_ERR_NOMEM;
		goto fail;
	}
	*out = store;
	return 0;

fail:
	if (sync_ready) {
		pthread_cond_destroy(&store->answered);
		pthread_cond_destroy(&store->space);
		pthread_cond_destroy(&store->work);
		pthread_mutex_destroy(&store->lock);
	}
	kv_env_close(store->env);
	free(store);
	return rc;
}

void store_close(struct store *store)
{
	if (!store)
		return;
	pthread_mutex_lock(&store->lock);
	store->stopping = true;
	pthread_cond_broadcast(&store->work);
	pthread_cond_broadcast(&store->space);
	pthread_mutex_unlock(&store->lock);
	pthread_join(store->committer, NULL);
	kv_env_close(store->env);
	pthread_cond_destroy(&store->answered);
	pthread_cond_destroy(&store->space);
	pthread_cond_destroy(&store->work);
	pthread_mutex_destroy(&store->lock);
	free(store);
}

/* ---- registrations ---- */

static int store_check_registration(const struct store_registration *r)
{
	size_t len;
	int rc;

	if (!r || !r->service_id || !r->provider || (!r->note && r->note_len) ||
	    (!r->endpoint_ids && r->endpoint_count))
		return DIRAUTH_ERR_SYNTAX;
	rc = store_check_name(r->namespace_name, &len);
	if (rc)
		return rc;
	rc = store_check_name(r->provider, &len);
	if (rc)
		return rc;
	if (r->note_len > UINT32_MAX || r->endpoint_count > SIZE_MAX / STORE_ID_LEN)
		return DIRAUTH_ERR_BOUNDS;
	return 0;
}

int store_registration_submit(struct store *store, const struct store_registration *r)
{
	struct store_request request = {.registration = r};
	int rc;

	if (!store)
		return DIRAUTH_ERR_SYNTAX;
	rc = store_check_registration(r);
	if (rc)
		return rc;

	pthread_mutex_lock(&store->lock);
	while (!store->stopping && store->queued >= store->queue_limit)
		pthread_cond_wait(&store->space, &store->lock);
	if (store->stopping) {
		pthread_mutex_unlock(&store->lock);
		return DIRAUTH_ERR_STORE;
	}
	if (store->tail)
		store->tail->next = &request;
	else
		store->head = &request;
	store->tail = &request;
	store->queued++;
	pthread_cond_signal(&store->work);
	while (!request.done)
		pthread_cond_wait(&store->answered, &store->lock);
	rc = request.result;
	pthread_mutex_unlock(&store->lock);
	return rc;
}

int store_service_sequence(struct store *store, const uint8_t service_id[32], uint64_t *sequence)
{
	struct kv_txn t;
	struct store_service_record record;
	struct kv_val found;

	if (!store || !service_id || !sequence)
		return DIRAUTH_ERR_SYNTAX;
	kv_txn_begin(store->env, &t, KV_READ);
	if (kv_txn_get(&t, store->services, service_id, STORE_ID_LEN, &found)) {
		if (store_service_record_decode(&found, &record))
			kv_txn_fail(&t, DIRAUTH_ERR_STORE);
		else
			*sequence = record.highest_sequence;
	} else {
		kv_txn_fail(&t, DIRAUTH_ERR_NOT_FOUND);
	}
	kv_txn_abort(&t);
	return t.rc;
}

int store_service_owner(struct store *store, const uint8_t service_id[32],
                        char namespace_name[STORE_NAME_MAX + 1], char provider[STORE_NAME_MAX + 1])
{
	struct kv_txn t;
	struct store_service_record record;
	struct kv_val found;

	if (!store || !service_id || !namespace_name || !provider)
		return DIRAUTH_ERR_SYNTAX;
	kv_txn_begin(store->env, &t, KV_READ);
	if (!kv_txn_get(&t, store->services, service_id, STORE_ID_LEN, &found))
		kv_txn_fail(&t, DIRAUTH_ERR_NOT_FOUND);
	else if (store_service_record_decode(&found, &record) || record.namespace_len > STORE_NAME_MAX ||
	         record.provider_len > STORE_NAME_MAX)
		kv_txn_fail(&t, DIRAUTH_ERR_STORE);
	if (!t.rc) {
		memcpy(namespace_name, record.namespace_name, record.namespace_len);
		namespace_name[record.namespace_len] = 0;
		memcpy(provider, record.provider, record.provider_len);
		provider[record.provider_len] = 0;
	}
	kv_txn_abort(&t);
	return t.rc;
}

/* The state of one store_registration_foreach walk, handed to store_index_visit. */
struct store_walk {
	struct store *store;
	struct kv_txn *txn;
	const char *namespace_name;
	size_t namespace_len;
	size_t prefix_len;
	uint64_t now;
	store_registration_visitor visit;
	void *context;
};

/* One namespace_index entry: finds its service, checks that it agrees with the index, and
 * hands an unexpired one to the caller's visitor. */
static int store_index_visit(void *context, struct kv_val key, struct kv_val value)
{
	struct store_walk *w = context;
	struct store_service_record record;
	struct kv_val found;

	(void)value;
	if (key.len != w->prefix_len + STORE_ID_LEN) {
		kv_txn_fail(w->txn, DIRAUTH_ERR_STORE);
		return DIRAUTH_ERR_STORE;
	}
	const uint8_t *service_id = key.data + w->prefix_len;
	if (!kv_txn_get(w->txn, w->store->services, service_id, STORE_ID_LEN, &found)) {
		kv_txn_fail(w->txn, DIRAUTH_ERR_STORE); /* an index entry without its service */
		return DIRAUTH_ERR_STORE;
	}
	if (store_service_record_decode(&found, &record) || record.namespace_len != w->namespace_len ||
	    memcmp(record.namespace_name, w->namespace_name, w->namespace_len) != 0) {
		kv_txn_fail(w->txn, DIRAUTH_ERR_STORE);
		return DIRAUTH_ERR_STORE;
	}
	if (record.expires <= w->now)
		return 0;
	return w->visit(w->context, service_id, record.note, record.note_len);
}

int store_registration_foreach(struct store *store, const char *namespace_name, uint64_t now,
                               store_registration_visitor visit, void *context)
{
	struct kv_txn t;
	uint8_t prefix[STORE_KEY_MAX];
	size_t namespace_len;

	if (!store || !visit)
		return DIRAUTH_ERR_SYNTAX;
	int rc = store_check_name(namespace_name, &namespace_len);
	if (rc)
		return rc;
	size_t prefix_len = store_prefixed_key(prefix, namespace_name, namespace_len, NULL, 0);

	struct store_walk walk = {
	    .store = store,
	    .txn = &t,
	    .namespace_name = namespace_name,
	    .namespace_len = namespace_len,
	    .prefix_len = prefix_len,
	    .now = now,
	    .visit = visit,
	    .context = context,
	};
	kv_txn_begin(store->env, &t, KV_READ);
	rc = kv_txn_walk_prefix(&t, store->namespace_index, prefix, prefix_len, store_index_visit, &walk);
	kv_txn_abort(&t);
	return rc;
}

/* ---- snapshots ---- */

int store_snapshot_put(struct store *store, const char *namespace_name, uint64_t epoch, const uint8_t *header,
                       size_t header_len, const uint8_t *body, size_t body_len)
{
	struct kv_txn t;
	struct buffer value;
	uint8_t key[STORE_KEY_MAX];
	uint8_t field[8];
	size_t namespace_len;
	struct kv_val found;

	if (!store || (!header && header_len) || (!body && body_len))
		return DIRAUTH_ERR_SYNTAX;
	int rc = store_check_name(namespace_name, &namespace_len);
	if (rc)
		return rc;
	if (header_len > UINT32_MAX)
		return DIRAUTH_ERR_BOUNDS;

	buffer_init(&value);
	store_put_u32(field, (uint32_t)header_len);
	rc = buffer_append(&value, field, 4);
	if (!rc)
		rc = buffer_append(&value, header, header_len);
	if (!rc)
		rc = buffer_append(&value, body, body_len);
	if (rc) {
		buffer_free(&value);
		return rc;
	}
	kv_put_u64(field, epoch);
	size_t key_len = store_prefixed_key(key, namespace_name, namespace_len, field, 8);

	kv_txn_begin(store->env, &t, KV_WRITE);
	if (kv_txn_get(&t, store->latest, namespace_name, namespace_len, &found)) {
		if (found.len != 8)
			kv_txn_fail(&t, DIRAUTH_ERR_STORE);
		else if (epoch <= store_get_uint(found.data, 8))
			kv_txn_fail(&t, DIRAUTH_ERR_ROLLBACK);
	}
	kv_txn_put(&t, store->snapshots, key, key_len, value.data, value.len);
	kv_txn_put(&t, store->latest, namespace_name, namespace_len, field, 8);
	rc = kv_txn_commit(&t);
	buffer_free(&value);
	return rc;
}

int store_snapshot_get(struct store *store, const char *namespace_name, uint64_t epoch, struct buffer *header,
                       struct buffer *body)
{
	struct kv_txn t;
	uint8_t key[STORE_KEY_MAX];
	uint8_t field[8];
	size_t namespace_len;
	struct kv_val found;

	if (!store)
		return DIRAUTH_ERR_SYNTAX;
	int rc = store_check_name(namespace_name, &namespace_len);
	if (rc)
		return rc;
	kv_put_u64(field, epoch);
	size_t key_len = store_prefixed_key(key, namespace_name, namespace_len, field, 8);

	kv_txn_begin(store->env, &t, KV_READ);
	if (kv_txn_get(&t, store->snapshots, key, key_len, &found)) {
		struct store_reader r = {.data = found.data, .len = found.len};
		size_t stored_header_len = (size_t)store_read_uint(&r, 4);
		const uint8_t *stored_header = store_read_bytes(&r, stored_header_len);
		if (r.failed)
			kv_txn_fail(&t, DIRAUTH_ERR_STORE);
		/* Copy while the transaction still holds the pages. */
		if (!t.rc && header) {
			buffer_reset(header);
			kv_txn_fail(&t, buffer_append(header, stored_header, stored_header_len));
		}
		if (!t.rc && body) {
			buffer_reset(body);
			kv_txn_fail(&t, buffer_append(body, r.data + r.at, r.len - r.at));
		}
	} else {
		kv_txn_fail(&t, DIRAUTH_ERR_NOT_FOUND);
	}
	kv_txn_abort(&t);
	return t.rc;
}

int store_snapshot_latest(struct store *store, const char *namespace_name, uint64_t *epoch)
{
	struct kv_txn t;
	size_t namespace_len;
	struct kv_val found;

	if (!store || !epoch)
		return DIRAUTH_ERR_SYNTAX;
	int rc = store_check_name(namespace_name, &namespace_len);
	if (rc)
		return rc;
	kv_txn_begin(store->env, &t, KV_READ);
	if (kv_txn_get(&t, store->latest, namespace_name, namespace_len, &found)) {
		if (found.len != 8)
			kv_txn_fail(&t, DIRAUTH_ERR_STORE);
		else
			*epoch = store_get_uint(found.data, 8);
	} else {
		kv_txn_fail(&t, DIRAUTH_ERR_NOT_FOUND);
	}
	kv_txn_abort(&t);
	return t.rc;
}

/* ---- backup ---- */

int store_backup(struct store *store, const char *directory)
{
	if (!store || !directory || !*directory)
		return DIRAUTH_ERR_SYNTAX;
	return kv_env_copy_to_directory(store->env, directory, true);
}

int store_statistics(struct store *store, struct store_statistics *out)
{
	if (!store || !out)
		return DIRAUTH_ERR_SYNTAX;
	pthread_mutex_lock(&store->lock);
	*out = store->statistics;
	pthread_mutex_unlock(&store->lock);
	return 0;
}
