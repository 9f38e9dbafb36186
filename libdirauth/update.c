/*
 * update.c: one update of one namespace, as a sequence of requests the caller fetches.
 *
 * The library never opens a socket: each step names the path it needs, the caller fetches it
 * from whichever server it chose and feeds the answer back, and the step checks it before the
 * next is named. The steps, each of which can only refuse:
 *
 *   certificates  GET /v1/certificates: the authorities' signing keys, believed only where an
 *                 identity the bundle pins certified them (verify/keyring.h);
 *   latest        GET /v1/<ns>/snapshots/latest: the header, verified by verify_snapshot_header
 *                 (threshold, namespace and origin, freshness by the caller's clock, bounds), then
 *                 against the header held in the state (verify_history_compare): an older epoch is
 *                 a rollback, another text for the held epoch a split view with both notes as
 *                 evidence;
 *   links         GET /v1/<ns>/snapshots/<e> for e from the new epoch - 1 down, until the chain of
 *                 `previous` digests reaches the held header (verify/history.h; a 404 is an epoch
 *                 with no snapshot); further than max_chain epochs is DIRAUTH_E_TOO_FAR;
 *   log           GET /v1/<ns>/log/proof/<epoch>, when log keys are pinned: the header is in a
 *                 checkpoint signed by a pinned log key and cosigned by the witness quorum; with
 *                 a checkpoint held (checkpoint_read), the new one is the same or, larger,
 *                 proven consistent with it: GET /v1/<ns>/log/consistency/<held>/<new>;
 *   diff or body  GET /v1/<ns>/snapshots/<epoch>/diff/<sha256 of the base> when a base is held
 *                 (the body installed in the context, else the held body the caller kept,
 *                 body_read, taken only when it hashes to what the held header signed); any
 *                 answer but a diff that verifies falls back to GET .../body; either is verified
 *                 against the header (verify_snapshot_diff, verify_snapshot_body), and nothing the
 *                 base revoked may come back;
 *   install       the checkpoint (checkpoint_write) and the header note (state_write) written,
 *                 while dirauth_update_verified already answers, and only then the view built.
 *
 * The paths carry a namespace, an epoch or a digest of a public body: nothing of who asks.
 */
#include "libdirauth/internal.h"

#include "base/error.h"
#include "compress/compress.h"
#include "crypto/crypto.h"
#include "schema/certificate.h"
#include "schema/encoding.h"
#include "schema/evidence.h"
#include "schema/record_shard.h"
#include "tlog/consistency.h"
#include "tlog/proof.h"
#include "verify/history.h"
#include "verify/keyring.h"
#include "verify/record_proof.h"
#include "verify/verify.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum update_step {
	STEP_CERTIFICATES,
	STEP_LATEST,
	STEP_LINK,
	STEP_LOG,
	STEP_CONSISTENCY,
	STEP_DIFF,
	STEP_BODY,
	STEP_SHARD,
	STEP_DONE
};

struct dirauth_update {
	struct dirauth_context *context;
	struct client_view *view;
	const char *namespace_name; /* the bundle's copy */
	enum update_step step;
	enum dirauth_status status;
	char path[256];
	size_t max_bytes;
	int has_held;
	struct buffer held_note;
	struct verify_held held;
	struct buffer certificates;
	struct buffer note; /* the new header note */
	struct snapshot_header header;
	struct verify_signers signers;
	struct certificate_keyring *ring;
	struct verify_chain chain;
	uint64_t link_epoch;
	/* A lookup (dirauth_lookup_begin): the service, and once its shard is verified, the shard's
	 * bytes and what they proved (the record borrows its note from them). */
	int lookup;
	uint8_t service_id[SERVICE_ID_SIZE];
	struct buffer shard;
	struct verify_record record;
	char shard_name[RECORD_SHARD_NAME_MAX + 1];
	int looked_up;
	/* The base a diff is asked from when this context installed nothing: the held body, as the
	 * caller kept it (callbacks->body_read). */
	struct client_view base;
	/* How the body came (dirauth_verified). */
	int diff_asked;
	int diff_missing;
	int diff_used;
	uint64_t diff_base_epoch;
	size_t body_served_len;
	int body_held; /* the body was the base's: the same snapshot, nothing downloaded */
	char diff_why[DIRAUTH_WHY_MAX];
	char base_why[DIRAUTH_WHY_MAX]; /* why the held body the caller kept is no base */
	/* The log: the checkpoint held (callbacks->checkpoint_read), the proof as served, what it
	 * showed, and whether every check of it passed. */
	int has_held_checkpoint;
	struct checkpoint held_checkpoint;
	struct buffer proof;
	struct client_log_shown log;
	int log_checked;
	/* Every check passed: what dirauth_update_verified reads, the body it points at. */
	int verified;
	const struct buffer *verified_body;
};

_Static_assert(VERIFY_NAMES_MAX <= DIRAUTH_SIGNER_NAMES_MAX, "the signers' names fit the public view");
_Static_assert(RECORD_SHARD_NAME_MAX < sizeof(((struct dirauth_record_view *)0)->shard),
               "a shard's name fits the public view");
_Static_assert(NOTE_NAME_MAX < sizeof(((struct dirauth_record_view *)0)->provider),
               "a provider key's name fits the public view");

struct dirauth_sink {
	struct buffer bytes;
	size_t max;
	int over;
};

DIRAUTH_EXPORT int dirauth_sink_append(struct dirauth_sink *sink, const void *bytes, size_t len)
{
	if (sink == NULL || sink->over)
		return -1;
	if (len > sink->max - sink->bytes.len) {
		sink->over = 1;
		return -1;
	}
	if (len > 0 && buffer_append(&sink->bytes, bytes, len) != 0) {
		sink->over = 1;
		return -1;
	}
	return 0;
}

static enum dirauth_status end(struct dirauth_update *update, enum dirauth_status status)
{
	update->status = status;
	update->step = STEP_DONE;
	return status;
}

/* Ends the update with status, the detail prefixed with the namespace. */
static enum dirauth_status refuse(struct dirauth_update *update, struct dirauth_result *result,
                                  enum dirauth_status status, const char *detail)
{
	client_fail(result, status, "%s: %s", update->namespace_name, detail);
	return end(update, status);
}

/* The snapshot a diff is asked from and whose revocations the new body must respect: the one
 * installed in the context, else the held body the caller kept; NULL when there is neither. */
static const struct client_view *base_of(const struct dirauth_update *update)
{
	if (update->view->installed)
		return update->view;
	return update->base.installed ? &update->base : NULL;
}

static void name_request(struct dirauth_update *update, enum update_step step, size_t max_bytes)
{
	update->step = step;
	update->max_bytes = max_bytes;
	switch (step) {
	case STEP_CERTIFICATES:
		snprintf(update->path, sizeof(update->path), "/v1/certificates");
		break;
	case STEP_LATEST:
		snprintf(update->path, sizeof(update->path), "/v1/%s/snapshots/latest",
		         update->namespace_name);
		break;
	case STEP_LINK:
		snprintf(update->path, sizeof(update->path), "/v1/%s/snapshots/%" PRIu64,
		         update->namespace_name, update->link_epoch);
		break;
	case STEP_LOG:
		snprintf(update->path, sizeof(update->path), "/v1/%s/log/proof/%" PRIu64,
		         update->namespace_name, update->header.epoch);
		break;
	case STEP_CONSISTENCY:
		snprintf(update->path, sizeof(update->path), "/v1/%s/log/consistency/%" PRIu64 "/%" PRIu64,
		         update->namespace_name, update->held_checkpoint.tree_size,
		         update->log.checkpoint.tree_size);
		break;
	case STEP_DIFF: {
		char base[2 * 32 + 1];
		hex_encode(base_of(update)->header.body_sha256, 32, base);
		snprintf(update->path, sizeof(update->path), "/v1/%s/snapshots/%" PRIu64 "/diff/%s",
		         update->namespace_name, update->header.epoch, base);
		break;
	}
	case STEP_BODY:
		snprintf(update->path, sizeof(update->path), "/v1/%s/snapshots/%" PRIu64 "/body",
		         update->namespace_name, update->header.epoch);
		break;
	case STEP_SHARD: {
		unsigned bits = 0;
		char name[RECORD_SHARD_NAME_MAX + 1] = "0";
		/* A count past the shards' bound has no shard: the request names shard "0" and the answer
		 * is refused by the proof (the header's count is signed, so this is the authorities'). */
		if (record_shard_bits(update->header.record_count, &bits) == 0)
			record_shard_name(record_shard_of(update->service_id, bits), bits, name);
		memcpy(update->shard_name, name, sizeof(name));
		snprintf(update->path, sizeof(update->path), "/v1/%s/snapshots/%" PRIu64 "/records/%s",
		         update->namespace_name, update->header.epoch, name);
		break;
	}
	case STEP_DONE:
		update->path[0] = '\0';
		break;
	}
}

/* The held body as the caller kept it (body_read), taken as the base when it is the body the held
 * header commits to; anything else leaves no base, as if none were kept. Its records were verified
 * when it was taken, and the digest the held header signed says it is that body. */
static void load_base(struct dirauth_update *update)
{
	const struct dirauth_context *context = update->context;
	const struct snapshot_header *held = &update->held.header;
	uint64_t bound = context->bundle.max_body_uncompressed;
	struct dirauth_sink sink = {{0}, bound > SIZE_MAX ? SIZE_MAX : (size_t)bound, 0};
	uint8_t digest[CRYPTO_SHA256_SIZE];

	buffer_init(&sink.bytes);
	const char *why = NULL;
	if (held->body_size > sink.max)
		why = "the held body is larger than the trust bundle allows";
	else if (context->callbacks.body_read(context->callbacks.user, update->namespace_name, held->epoch,
	                                      &sink) != 0 ||
	         sink.over)
		why = "the held body is not kept";
	else if (sink.bytes.len != held->body_size ||
	         crypto_sha256(sink.bytes.data, sink.bytes.len, digest) != 0 ||
	         memcmp(digest, held->body_sha256, sizeof(digest)) != 0)
		why = "the held body is not the one its header commits to";
	else if (client_view_build(&update->base, &context->bundle, update->held_note.data,
	                           update->held_note.len, held, 0, &sink.bytes, NULL, false,
	                           NULL) != DIRAUTH_SUCCESS)
		why = "the held body cannot be read back";
	if (why != NULL)
		snprintf(update->base_why, sizeof(update->base_why), "%s", why);
	buffer_free(&sink.bytes);
}

/* The checkpoint held (checkpoint_read), read back; none held leaves the first that verifies to be
 * believed. */
static enum dirauth_status read_held_checkpoint(struct dirauth_update *update, struct dirauth_result *result)
{
	const struct dirauth_context *context = update->context;
	struct buffer bytes;
	size_t len = 0;
	enum dirauth_status status = DIRAUTH_SUCCESS;

	buffer_init(&bytes);
	if (buffer_reserve(&bytes, TLOG_PROOF_NOTE_MAX) != 0)
		return client_fail(result, DIRAUTH_E_NOMEM, "out of memory");
	if (context->callbacks.checkpoint_read(context->callbacks.user, update->namespace_name, bytes.data,
	                                       TLOG_PROOF_NOTE_MAX, &len) != 0 ||
	    len > TLOG_PROOF_NOTE_MAX)
		status = client_fail(result, DIRAUTH_E_STATE, "%s: the checkpoint held cannot be read",
		                     update->namespace_name);
	else if (len > 0) {
		status = client_log_held_parse(bytes.data, len, &update->held_checkpoint, result);
		update->has_held_checkpoint = status == DIRAUTH_SUCCESS;
	}
	buffer_free(&bytes);
	return status;
}

DIRAUTH_EXPORT enum dirauth_status dirauth_update_begin(struct dirauth_context *context,
                                                        const char *namespace_name,
                                                        struct dirauth_update **out,
                                                        struct dirauth_result *result)
{
	char detail[VERIFY_DETAIL_MAX];
	size_t len = 0;

	client_result_reset(result);
	if (context == NULL || out == NULL)
		return client_fail(result, DIRAUTH_E_ARGUMENT, "no context or no place for the update");
	*out = NULL;
	struct client_view *view = client_view_of(context, namespace_name, result);
	if (view == NULL)
		return DIRAUTH_E_TRUST;
	struct dirauth_update *update = calloc(1, sizeof(*update));
	if (update == NULL)
		return client_fail(result, DIRAUTH_E_NOMEM, "out of memory");
	update->context = context;
	update->view = view;
	update->namespace_name = context->bundle.namespaces[view - context->views].name;
	buffer_init(&update->held_note);
	buffer_init(&update->certificates);
	buffer_init(&update->note);
	buffer_init(&update->shard);
	buffer_init(&update->proof);
	buffer_init(&update->log.checkpoint_note);
	buffer_init(&update->base.header_note);
	buffer_init(&update->base.body);
	if (buffer_reserve(&update->held_note, DIRAUTH_STATE_MAX) != 0) {
		dirauth_update_free(update);
		return client_fail(result, DIRAUTH_E_NOMEM, "out of memory");
	}
	if (context->callbacks.state_read(context->callbacks.user, update->namespace_name,
	                                  update->held_note.data, DIRAUTH_STATE_MAX, &len) != 0 ||
	    len > DIRAUTH_STATE_MAX) {
		dirauth_update_free(update);
		return client_fail(result, DIRAUTH_E_STATE, "%s: the state cannot be read", namespace_name);
	}
	update->held_note.len = len;
	if (len > 0) {
		int rc =
		    verify_held_parse(update->held_note.data, len, &update->held, detail, sizeof(detail));
		if (rc == 0 && strcmp(update->held.header.namespace_name, update->namespace_name) != 0)
			rc = DIRAUTH_ERR_MISMATCH;
		if (rc != 0) {
			dirauth_update_free(update);
			return client_fail(result, DIRAUTH_E_STATE,
			                   "%s: the state held is no header note of this namespace: %s",
			                   namespace_name,
			                   rc == DIRAUTH_ERR_MISMATCH ? "another namespace" : detail);
		}
		update->has_held = 1;
	}
	/* What this context installed counts as held too: a state that went back (restored from an
	 * old copy) cannot take the context back with it. */
	if (view->installed && (!update->has_held || update->held.header.epoch < view->header.epoch)) {
		buffer_reset(&update->held_note);
		if (buffer_append(&update->held_note, view->header_note.data, view->header_note.len) != 0 ||
		    verify_held_parse(update->held_note.data, update->held_note.len, &update->held, NULL,
		                      0) != 0) {
			dirauth_update_free(update);
			return client_fail(result, DIRAUTH_E_NOMEM, "out of memory");
		}
		update->has_held = 1;
	}
	if (update->has_held && !view->installed && context->callbacks.body_read != NULL)
		load_base(update);
	if (context->log_key_count > 0 && context->callbacks.checkpoint_read != NULL) {
		enum dirauth_status status = read_held_checkpoint(update, result);
		if (status != DIRAUTH_SUCCESS) {
			dirauth_update_free(update);
			return status;
		}
	}
	name_request(update, STEP_CERTIFICATES, CERTIFICATE_BUNDLE_MAX_BYTES);
	*out = update;
	return DIRAUTH_SUCCESS;
}

DIRAUTH_EXPORT int dirauth_update_next(struct dirauth_update *update, const char **path, size_t *max_bytes)
{
	if (update == NULL || update->step == STEP_DONE) {
		if (path != NULL)
			*path = NULL;
		return 0;
	}
	if (path != NULL)
		*path = update->path;
	if (max_bytes != NULL)
		*max_bytes = update->max_bytes;
	return 1;
}

DIRAUTH_EXPORT enum dirauth_status dirauth_update_status(const struct dirauth_update *update)
{
	return update == NULL ? DIRAUTH_E_ARGUMENT : update->status;
}

DIRAUTH_EXPORT void dirauth_update_free(struct dirauth_update *update)
{
	if (update == NULL)
		return;
	buffer_free(&update->held_note);
	buffer_free(&update->certificates);
	buffer_free(&update->note);
	verify_record_clear(&update->record);
	buffer_free(&update->shard);
	verify_keyring_free(update->ring);
	client_view_clear(&update->base);
	buffer_free(&update->proof);
	buffer_free(&update->log.checkpoint_note);
	free(update);
}

/* What every check allowed is kept, the checkpoint before the state that it holds the log for;
 * only then is anything believed. */
static enum dirauth_status persist(struct dirauth_update *update, struct dirauth_result *result)
{
	const struct dirauth_callbacks *callbacks = &update->context->callbacks;
	update->verified = 1;
	if (update->log_checked && callbacks->checkpoint_write != NULL &&
	    callbacks->checkpoint_write(callbacks->user, update->namespace_name,
	                                update->log.checkpoint_note.data,
	                                update->log.checkpoint_note.len) != 0) {
		update->verified = 0;
		return refuse(update, result, DIRAUTH_E_STATE,
		              "the checkpoint cannot be written: nothing installed");
	}
	if (callbacks->state_write(callbacks->user, update->namespace_name, update->note.data,
	                           update->note.len) != 0) {
		update->verified = 0;
		return refuse(update, result, DIRAUTH_E_STATE,
		              "the state cannot be written: nothing installed");
	}
	return DIRAUTH_SUCCESS;
}

/* The header and body are verified and follow the held ones: build the new view (the last check:
 * nothing the installed snapshot revoked comes back), write the state, and only then replace the
 * installed view with it. */
static enum dirauth_status install(struct dirauth_update *update, struct buffer *body,
                                   struct dirauth_result *result)
{
	struct dirauth_context *context = update->context;
	struct client_view fresh;
	memset(&fresh, 0, sizeof(fresh));
	buffer_init(&fresh.header_note);
	buffer_init(&fresh.body);
	enum dirauth_status status =
	    client_view_build(&fresh, &context->bundle, update->note.data, update->note.len, &update->header,
	                      update->signers.count, body, base_of(update), true, result);
	if (status != DIRAUTH_SUCCESS) {
		char detail[DIRAUTH_DETAIL_MAX];
		snprintf(detail, sizeof(detail), "%s", result != NULL ? result->detail : "");
		return refuse(update, result, status, detail);
	}
	update->verified_body = &fresh.body;
	status = persist(update, result);
	if (status != DIRAUTH_SUCCESS) {
		update->verified_body = NULL;
		client_view_clear(&fresh);
		return status;
	}
	client_view_clear(update->view);
	*update->view = fresh;
	update->verified_body = &update->view->body;
	return end(update, DIRAUTH_SUCCESS);
}

/* After the history (and the log): the body, as a diff from the body held when there is one. */
static enum dirauth_status ask_body(struct dirauth_update *update, struct dirauth_result *result)
{
	if (update->lookup) {
		name_request(update, STEP_SHARD, RECORD_SHARD_MAX_BYTES);
		return DIRAUTH_SUCCESS;
	}
	const struct client_view *base = base_of(update);
	if (base != NULL && base->header.epoch == update->header.epoch &&
	    memcmp(base->header.body_sha256, update->header.body_sha256, 32) == 0) {
		/* The same snapshot, held already (installed, or the body the caller kept, which hashes
		 * to the digest this header signs): keep its body, take the note (it may carry more
		 * signatures), download nothing. The body is copied: the base is read until replaced. */
		struct buffer body;
		buffer_init(&body);
		if (buffer_append(&body, base->body.data, base->body.len) != 0)
			return refuse(update, result, DIRAUTH_E_NOMEM, "out of memory");
		update->body_held = 1;
		enum dirauth_status status = install(update, &body, result);
		buffer_free(&body);
		return status;
	}
	if (base != NULL && base->header.epoch < update->header.epoch) {
		update->diff_asked = 1;
		update->diff_base_epoch = base->header.epoch;
		name_request(update, STEP_DIFF, (size_t)update->context->bundle.max_body_compressed);
	} else {
		/* No base to ask a diff from: say why, when a newer epoch would have had one. */
		if (base == NULL && update->has_held && update->held.header.epoch < update->header.epoch)
			snprintf(update->diff_why, sizeof(update->diff_why), "%s", update->base_why);
		name_request(update, STEP_BODY, (size_t)update->context->bundle.max_body_compressed);
	}
	return DIRAUTH_SUCCESS;
}

static enum dirauth_status after_history(struct dirauth_update *update, struct dirauth_result *result)
{
	if (update->context->log_key_count > 0) {
		name_request(update, STEP_LOG, TLOG_PROOF_MAX_BYTES);
		return DIRAUTH_SUCCESS;
	}
	return ask_body(update, result);
}

/* Walks on to the next link, or finishes the chain. */
static enum dirauth_status next_link(struct dirauth_update *update, struct dirauth_result *result)
{
	char detail[VERIFY_DETAIL_MAX];
	if (!verify_chain_reached(&update->chain) && update->link_epoch > update->held.header.epoch + 1) {
		update->link_epoch--;
		name_request(update, STEP_LINK, VERIFY_HEADER_NOTE_MAX);
		return DIRAUTH_SUCCESS;
	}
	int rc = verify_chain_finish(&update->chain, detail, sizeof(detail));
	if (rc != 0)
		return refuse(update, result, client_status_of(rc), detail);
	return after_history(update, result);
}

/* The split view's evidence file: both notes, the bundle's authorities, the certificates served. */
static void evidence_file(const struct dirauth_update *update, struct dirauth_result *result)
{
	const struct trust_bundle *bundle = &update->context->bundle;
	struct evidence *evidence = calloc(1, sizeof(*evidence));
	struct buffer file;
	buffer_init(&file);
	if (evidence == NULL)
		return;
	evidence->kind = EVIDENCE_HEADERS;
	snprintf(evidence->origin, sizeof(evidence->origin), "%s", update->header.origin);
	evidence->epoch = update->header.epoch;
	evidence->key_count =
	    bundle->authority_count < EVIDENCE_KEYS_MAX ? bundle->authority_count : EVIDENCE_KEYS_MAX;
	memcpy(evidence->keys, bundle->authorities, evidence->key_count * sizeof(evidence->keys[0]));
	evidence->statements[0] = (struct evidence_part){update->held_note.data, update->held_note.len};
	evidence->statements[1] = (struct evidence_part){update->note.data, update->note.len};
	evidence->certificate_count = 1;
	evidence->certificates[0] =
	    (struct evidence_part){update->certificates.data, update->certificates.len};
	if (evidence_encode(evidence, &file) == 0) {
		result->evidence_file = file.data; /* handed over: freed by dirauth_result_clear */
		result->evidence_file_len = file.len;
	} else {
		buffer_free(&file);
	}
	free(evidence);
}

static enum dirauth_status split_view(struct dirauth_update *update, const char *detail,
                                      struct dirauth_result *result)
{
	if (result != NULL) {
		result->evidence_held = malloc(update->held_note.len);
		result->evidence_offered = malloc(update->note.len);
		if (result->evidence_held == NULL || result->evidence_offered == NULL) {
			dirauth_result_clear(result);
			return refuse(update, result, DIRAUTH_E_NOMEM, "out of memory");
		}
		memcpy(result->evidence_held, update->held_note.data, update->held_note.len);
		result->evidence_held_len = update->held_note.len;
		memcpy(result->evidence_offered, update->note.data, update->note.len);
		result->evidence_offered_len = update->note.len;
		evidence_file(update, result);
	}
	return refuse(update, result, DIRAUTH_E_SPLIT_VIEW, detail);
}

/* The latest header (update->note, as served), over the certificates that came before it. */
static enum dirauth_status take_latest(struct dirauth_update *update, struct dirauth_result *result)
{
	struct dirauth_context *context = update->context;
	const uint8_t *body = update->note.data;
	size_t len = update->note.len;
	char detail[VERIFY_DETAIL_MAX];
	int newer = 0;

	int rc = verify_snapshot_header(
	    &context->bundle, update->namespace_name, update->certificates.data, update->certificates.len,
	    body != NULL ? body : (const uint8_t *)"", len, context->callbacks.now(context->callbacks.user),
	    &context->policy, &update->header, &update->signers, detail, sizeof(detail));
	if (rc != 0)
		return refuse(update, result, client_status_of(rc), detail);
	if (!update->has_held)
		return after_history(update, result);
	rc =
	    verify_history_compare(&update->held, body, len, &update->header, &newer, detail, sizeof(detail));
	if (rc == DIRAUTH_ERR_MISMATCH)
		return split_view(update, detail, result);
	if (rc != 0)
		return refuse(update, result, client_status_of(rc), detail);
	if (!newer)
		return after_history(update, result);
	rc = verify_keyring_from_trust_bundle(&context->bundle, update->certificates.data,
	                                      update->certificates.len, &update->ring, NULL, detail,
	                                      sizeof(detail));
	if (rc != 0)
		return refuse(update, result, client_status_of(rc), detail);
	struct verify_pins pins = {update->ring, context->bundle.threshold, VERIFY_TRUST_BUNDLE_PINNED_BY};
	rc = verify_chain_begin(&update->chain, &pins, &update->held, &update->header,
	                        context->policy.max_chain, detail, sizeof(detail));
	if (rc == DIRAUTH_ERR_BOUNDS) /* too far ahead to walk: only a deliberate re-seed moves on */
		return refuse(update, result, DIRAUTH_E_TOO_FAR, detail);
	if (rc != 0)
		return refuse(update, result, client_status_of(rc), detail);
	update->link_epoch = update->header.epoch;
	return next_link(update, result);
}

static enum dirauth_status after_log(struct dirauth_update *update, enum dirauth_status status,
                                     struct dirauth_result *result);

static enum dirauth_status take_log(struct dirauth_update *update, const uint8_t *body, size_t len,
                                    struct dirauth_result *result)
{
	struct note *note = NULL;
	int rc = note_parse(update->note.data, update->note.len, &note);
	if (rc != 0)
		return refuse(update, result, client_status_of(rc), "header: cannot be read again");
	enum dirauth_status status = client_log_check(update->context, update->header.origin, note->text,
	                                              note->text_len, body, len, &update->log, result);
	note_free(note);
	if (status == DIRAUTH_SUCCESS && buffer_append(&update->proof, body, len) != 0)
		status = client_fail(result, DIRAUTH_E_NOMEM, "out of memory");
	if (status == DIRAUTH_SUCCESS && update->has_held_checkpoint) {
		if (update->log.checkpoint.tree_size > update->held_checkpoint.tree_size &&
		    strcmp(update->log.checkpoint.origin, update->held_checkpoint.origin) == 0) {
			name_request(update, STEP_CONSISTENCY, TLOG_CONSISTENCY_MAX_BYTES);
			return DIRAUTH_SUCCESS;
		}
		status =
		    client_log_consistent(&update->held_checkpoint, &update->log.checkpoint, NULL, 0, result);
	}
	return after_log(update, status, result);
}

/* The log step's outcome: refused, or believed and on to the body. */
static enum dirauth_status after_log(struct dirauth_update *update, enum dirauth_status status,
                                     struct dirauth_result *result)
{
	if (status != DIRAUTH_SUCCESS) {
		char detail[DIRAUTH_DETAIL_MAX];
		snprintf(detail, sizeof(detail), "%s", result != NULL ? result->detail : "log");
		return refuse(update, result, status, detail);
	}
	update->log_checked = 1;
	return ask_body(update, result);
}

static enum dirauth_status take_body(struct dirauth_update *update, int diff, const char *encoding,
                                     const uint8_t *data, size_t len, struct dirauth_result *result)
{
	char detail[VERIFY_DETAIL_MAX];
	struct buffer body;
	int rc;

	buffer_init(&body);
	if (diff) {
		const struct client_view *base = base_of(update);
		rc = verify_snapshot_diff(&update->context->bundle, &update->header, base->body.data,
		                          base->body.len, encoding, data, len, &body, detail, sizeof(detail));
		if (rc != 0 && rc != DIRAUTH_ERR_NOMEM) {
			/* A diff is a saving, never a requirement: one refused costs the whole body. */
			buffer_free(&body);
			snprintf(update->diff_why, sizeof(update->diff_why), "%.*s", DIRAUTH_WHY_MAX - 1,
			         detail);
			name_request(update, STEP_BODY, (size_t)update->context->bundle.max_body_compressed);
			return DIRAUTH_SUCCESS;
		}
		update->diff_used = rc == 0;
	} else {
		rc = verify_snapshot_body(&update->context->bundle, &update->header, encoding, data, len,
		                          &body, detail, sizeof(detail));
	}
	if (rc != 0) {
		buffer_free(&body);
		return refuse(update, result, client_status_of(rc), detail);
	}
	update->body_served_len = len;
	enum dirauth_status status = install(update, &body, result);
	buffer_free(&body);
	return status;
}

/* A lookup's shard: the service present or absent by the header's records root. Then the state;
 * a view of an older epoch is dropped, since the newer header may revoke what it offers. */
static enum dirauth_status take_shard(struct dirauth_update *update, const uint8_t *data, size_t len,
                                      struct dirauth_result *result)
{
	char detail[VERIFY_DETAIL_MAX];

	if (buffer_append(&update->shard, data, len) != 0)
		return refuse(update, result, DIRAUTH_E_NOMEM, "out of memory");
	int rc = verify_record_proof(&update->header, update->shard.data, update->shard.len,
	                             update->service_id, &update->record, detail, sizeof(detail));
	if (rc != 0)
		return refuse(update, result, client_status_of(rc), detail);
	update->body_served_len = len;
	enum dirauth_status status = persist(update, result);
	if (status != DIRAUTH_SUCCESS) {
		verify_record_clear(&update->record);
		return status;
	}
	if (update->view->installed && update->view->header.epoch < update->header.epoch)
		client_view_clear(update->view);
	update->looked_up = 1;
	return end(update, DIRAUTH_SUCCESS);
}

static enum dirauth_status step_answer(struct dirauth_update *update, const char *encoding,
                                       const uint8_t *body, size_t len, struct dirauth_result *result);

/* An answer other than a body or a diff (whose encoding verify/ judges with the body's bounds),
 * served compressed by a server the caller's fetch left it to: decoded into out within the step's
 * bound. Returns 0 with *decoded 1 when it was, 0 when it needs no decoding; else a status. */
static enum dirauth_status decode_answer(struct dirauth_update *update, const char *encoding,
                                         const uint8_t *data, size_t len, struct buffer *out, int *decoded,
                                         struct dirauth_result *result)
{
	char detail[DIRAUTH_DETAIL_MAX];
	enum content_encoding served = ENCODING_COUNT;
	*decoded = 0;
	if (encoding[0] == '\0' || update->step == STEP_DIFF || update->step == STEP_BODY)
		return DIRAUTH_SUCCESS;
	for (int e = 0; e < ENCODING_COUNT; e++)
		if (strcmp(encoding, content_encoding_name((enum content_encoding)e)) == 0)
			served = (enum content_encoding)e;
	if (served == ENCODING_IDENTITY)
		return DIRAUTH_SUCCESS;
	if (served == ENCODING_COUNT) {
		snprintf(detail, sizeof(detail), "%s: unsupported content encoding '%.32s'", update->path,
		         encoding);
		return refuse(update, result, DIRAUTH_E_MALFORMED, detail);
	}
	int rc = compress_decode(served, data, len, update->max_bytes, out);
	if (rc != 0) {
		snprintf(detail, sizeof(detail),
		         "%s: does not decode (%s) within the %zu bytes this step reads", update->path,
		         encoding, update->max_bytes);
		return refuse(update, result, client_status_of(rc), detail);
	}
	*decoded = 1;
	return DIRAUTH_SUCCESS;
}

DIRAUTH_EXPORT enum dirauth_status dirauth_update_feed(struct dirauth_update *update, long http_status,
                                                       const char *encoding, const uint8_t *body, size_t len,
                                                       struct dirauth_result *result)
{
	char detail[DIRAUTH_DETAIL_MAX];

	client_result_reset(result);
	if (update == NULL || update->step == STEP_DONE)
		return client_fail(result, DIRAUTH_E_ARGUMENT, "no request is pending");
	if (body == NULL && len > 0)
		return refuse(update, result, DIRAUTH_E_ARGUMENT, "no bytes for a length");
	if (body == NULL)
		body = (const uint8_t *)"";
	if (encoding == NULL)
		encoding = "";
	if (len > update->max_bytes) {
		snprintf(detail, sizeof(detail), "%s: %zu bytes, more than the %zu this step reads",
		         update->path, len, update->max_bytes);
		return refuse(update, result, DIRAUTH_E_FETCH, detail);
	}
	if (http_status == 404 && update->step == STEP_LINK)
		return next_link(update, result); /* no snapshot that epoch */
	if (http_status != 200 && update->step == STEP_DIFF) {
		/* A diff is a saving, never a requirement: none offered, or an answer that is none. */
		update->diff_missing = http_status == 404;
		if (http_status == 404)
			snprintf(update->diff_why, sizeof(update->diff_why),
			         "the server offers no diff from epoch %" PRIu64, update->diff_base_epoch);
		else
			snprintf(update->diff_why, sizeof(update->diff_why),
			         "the diff was answered with HTTP %ld", http_status);
		name_request(update, STEP_BODY, (size_t)update->context->bundle.max_body_compressed);
		return DIRAUTH_SUCCESS;
	}
	if (http_status != 200) {
		snprintf(detail, sizeof(detail), "%s: HTTP status %ld", update->path, http_status);
		return refuse(update, result, DIRAUTH_E_FETCH, detail);
	}
	struct buffer decoded;
	int was_decoded = 0;
	buffer_init(&decoded);
	if (decode_answer(update, encoding, body, len, &decoded, &was_decoded, result) != DIRAUTH_SUCCESS) {
		buffer_free(&decoded);
		return update->status;
	}
	enum dirauth_status status = step_answer(update, encoding, was_decoded ? decoded.data : body,
	                                         was_decoded ? decoded.len : len, result);
	buffer_free(&decoded);
	return status;
}

/* The answer (200, decoded) to the pending step. */
static enum dirauth_status step_answer(struct dirauth_update *update, const char *encoding,
                                       const uint8_t *body, size_t len, struct dirauth_result *result)
{
	char detail[DIRAUTH_DETAIL_MAX];
	switch (update->step) {
	case STEP_CERTIFICATES:
		if (buffer_append(&update->certificates, body, len) != 0)
			return refuse(update, result, DIRAUTH_E_NOMEM, "out of memory");
		name_request(update, STEP_LATEST, VERIFY_HEADER_NOTE_MAX);
		return DIRAUTH_SUCCESS;
	case STEP_LATEST:
		if (buffer_append(&update->note, body, len) != 0)
			return refuse(update, result, DIRAUTH_E_NOMEM, "out of memory");
		return take_latest(update, result);
	case STEP_LINK: {
		int rc =
		    verify_chain_add(&update->chain, update->link_epoch, body, len, detail, sizeof(detail));
		if (rc != 0)
			return refuse(update, result, client_status_of(rc), detail);
		return next_link(update, result);
	}
	case STEP_LOG:
		return take_log(update, body, len, result);
	case STEP_CONSISTENCY:
		return after_log(update,
		                 client_log_consistent(&update->held_checkpoint, &update->log.checkpoint,
		                                       body, len, result),
		                 result);
	case STEP_DIFF:
		return take_body(update, 1, encoding, body, len, result);
	case STEP_BODY:
		return take_body(update, 0, encoding, body, len, result);
	case STEP_SHARD:
		return take_shard(update, body, len, result);
	case STEP_DONE:
		break;
	}
	return refuse(update, result, DIRAUTH_E_INTERNAL, "no such step");
}

/* next, fetch, feed until the end, through callbacks->fetch. */
static enum dirauth_status drive(struct dirauth_context *context, struct dirauth_update *update,
                                 struct dirauth_result *result)
{
	const char *path = NULL;
	size_t max_bytes = 0;
	enum dirauth_status status = DIRAUTH_SUCCESS;

	while (status == DIRAUTH_SUCCESS && dirauth_update_next(update, &path, &max_bytes)) {
		struct dirauth_sink sink = {{0}, max_bytes, 0};
		char encoding[DIRAUTH_ENCODING_MAX] = "";
		long http_status = 0;
		buffer_init(&sink.bytes);
		if (context->callbacks.fetch(context->callbacks.user, path, &http_status, encoding, &sink) !=
		    0)
			status = refuse(update, result, DIRAUTH_E_FETCH, "the fetch failed: no answer");
		else if (sink.over)
			status = refuse(update, result, DIRAUTH_E_FETCH,
			                "the answer is larger than this step reads");
		else {
			encoding[DIRAUTH_ENCODING_MAX - 1] = '\0';
			status = dirauth_update_feed(update, http_status, encoding, sink.bytes.data,
			                             sink.bytes.len, result);
		}
		buffer_free(&sink.bytes);
	}
	return status;
}

DIRAUTH_EXPORT enum dirauth_status
dirauth_update_run(struct dirauth_context *context, const char *namespace_name, struct dirauth_result *result)
{
	struct dirauth_update *update = NULL;
	enum dirauth_status status;

	client_result_reset(result);
	if (context == NULL || context->callbacks.fetch == NULL)
		return client_fail(result, DIRAUTH_E_ARGUMENT, "no fetch callback");
	status = dirauth_update_begin(context, namespace_name, &update, result);
	if (status == DIRAUTH_SUCCESS)
		status = drive(context, update, result);
	dirauth_update_free(update);
	return status;
}

DIRAUTH_EXPORT enum dirauth_status dirauth_lookup_begin(struct dirauth_context *context,
                                                        const char *namespace_name, const char *service_id,
                                                        struct dirauth_update **out,
                                                        struct dirauth_result *result)
{
	uint8_t id[SERVICE_ID_SIZE];

	client_result_reset(result);
	if (out != NULL)
		*out = NULL;
	if (service_id == NULL || strlen(service_id) != 2 * SERVICE_ID_SIZE ||
	    hex_decode(service_id, 2 * SERVICE_ID_SIZE, id, sizeof(id)) != 0)
		return client_fail(result, DIRAUTH_E_ARGUMENT, "a service id is 64 lower-case hex digits");
	enum dirauth_status status = dirauth_update_begin(context, namespace_name, out, result);
	if (status == DIRAUTH_SUCCESS) {
		(*out)->lookup = 1;
		memcpy((*out)->service_id, id, SERVICE_ID_SIZE);
	}
	return status;
}

/* Whether a completed, present lookup offers endpoint j of its record, with the health it is
 * offered with; *entry (when asked) gets the endpoint's health statement or NULL. Only healthy and
 * degraded endpoints are offered where health is published; every endpoint where it is not. */
static int lookup_offers(const struct dirauth_update *lookup, size_t j,
                         const struct verify_record_health **entry, enum client_health *health)
{
	const struct verify_record *record = &lookup->record;
	const struct verify_record_health *found = NULL;
	for (size_t h = 0; h < record->health_count && found == NULL; h++)
		if (memcmp(record->health[h].endpoint_id, record->registration.endpoints[j].endpoint_id,
		           ENDPOINT_ID_SIZE) == 0)
			found = &record->health[h];
	if (entry != NULL)
		*entry = found;
	*health = CLIENT_HEALTH_UNPUBLISHED;
	if (lookup->header.consensus_method < 2)
		return 1;
	if (found == NULL ||
	    (found->health_class != HEALTH_HEALTHY && found->health_class != HEALTH_DEGRADED))
		return 0;
	*health = found->health_class == HEALTH_HEALTHY ? CLIENT_HEALTH_HEALTHY : CLIENT_HEALTH_DEGRADED;
	return 1;
}

DIRAUTH_EXPORT enum dirauth_status dirauth_lookup_endpoints(const struct dirauth_update *lookup,
                                                            struct dirauth_endpoint *out, size_t cap,
                                                            size_t *count, struct dirauth_result *result)
{
	char id[2 * SERVICE_ID_SIZE + 1];

	client_result_reset(result);
	if (lookup == NULL || count == NULL || (out == NULL && cap > 0) || !lookup->lookup)
		return client_fail(result, DIRAUTH_E_ARGUMENT, "no lookup or no place for the answer");
	*count = 0;
	if (!lookup->looked_up)
		return client_fail(result, DIRAUTH_E_ARGUMENT, "the lookup has not completed");
	hex_encode(lookup->service_id, SERVICE_ID_SIZE, id);
	const struct verify_record *record = &lookup->record;
	if (!record->present)
		return client_fail(result, DIRAUTH_E_NOT_FOUND,
		                   "%s: service %s is not in the snapshot of epoch %" PRIu64
		                   " (proven absent by its neighbours%s)",
		                   lookup->namespace_name, id, lookup->header.epoch,
		                   record->revocation_count > 0 ? "; it is revoked" : "");
	const struct registration *registration = &record->registration;
	for (size_t j = 0; j < registration->endpoint_count; j++) {
		enum client_health health;
		if (!lookup_offers(lookup, j, NULL, &health))
			continue; /* unknown, draining, unavailable: never offered */
		if (*count < cap)
			client_fill_endpoint(registration, j, health, &out[*count]);
		(*count)++;
	}
	return DIRAUTH_SUCCESS;
}

DIRAUTH_EXPORT enum dirauth_status dirauth_lookup_record(const struct dirauth_update *lookup,
                                                         struct dirauth_record_view *view,
                                                         struct dirauth_result *result)
{
	client_result_reset(result);
	if (lookup == NULL || view == NULL || !lookup->lookup ||
	    (view->endpoints == NULL && view->endpoint_cap > 0) ||
	    (view->revocations == NULL && view->revocation_cap > 0))
		return client_fail(result, DIRAUTH_E_ARGUMENT, "no lookup or no place for the answer");
	if (!lookup->looked_up)
		return client_fail(result, DIRAUTH_E_ARGUMENT, "the lookup has not completed");
	struct dirauth_record_endpoint *endpoints = view->endpoints;
	struct dirauth_record_revocation *revocations = view->revocations;
	size_t endpoint_cap = view->endpoint_cap, revocation_cap = view->revocation_cap;
	const struct verify_record *record = &lookup->record;
	memset(view, 0, sizeof(*view));
	view->endpoints = endpoints;
	view->endpoint_cap = endpoint_cap;
	view->revocations = revocations;
	view->revocation_cap = revocation_cap;
	view->epoch = lookup->header.epoch;
	view->record_count = lookup->header.record_count;
	view->signer_count = lookup->signers.count;
	view->authority_count = lookup->context->bundle.authority_count;
	snprintf(view->signer_names, sizeof(view->signer_names), "%s", lookup->signers.names);
	snprintf(view->shard, sizeof(view->shard), "%s", lookup->shard_name);
	hex_encode(lookup->service_id, SERVICE_ID_SIZE, view->service_id);
	view->present = record->present;
	view->leaf_index = record->leaf_index;
	if (!record->present) {
		view->has_before = record->has_before;
		if (record->has_before)
			hex_encode(record->before_id, SERVICE_ID_SIZE, view->before_id);
		view->has_after = record->has_after;
		if (record->has_after)
			hex_encode(record->after_id, SERVICE_ID_SIZE, view->after_id);
		view->revocation_count = record->revocation_count;
		for (size_t i = 0; i < record->revocation_count && i < revocation_cap; i++) {
			const struct verify_record_revocation *r = &record->revocations[i];
			revocations[i].whole_service = !r->has_endpoint;
			revocations[i].endpoint_id[0] = '\0';
			if (r->has_endpoint)
				hex_encode(r->endpoint_id, ENDPOINT_ID_SIZE, revocations[i].endpoint_id);
			revocations[i].since = r->since;
		}
		return DIRAUTH_SUCCESS;
	}
	const struct registration *registration = &record->registration;
	snprintf(view->service_class, sizeof(view->service_class), "%s",
	         service_class_name(registration->service_class));
	snprintf(view->provider, sizeof(view->provider), "%s", registration->provider.name);
	view->sequence = registration->sequence;
	view->expires = registration->expires;
	view->endpoint_count = registration->endpoint_count;
	for (size_t j = 0; j < registration->endpoint_count && j < endpoint_cap; j++) {
		struct dirauth_record_endpoint *o = &endpoints[j];
		const struct verify_record_health *entry;
		enum client_health health;
		memset(o, 0, sizeof(*o));
		o->offered = lookup_offers(lookup, j, &entry, &health);
		client_fill_endpoint(registration, j, health, &o->endpoint);
		if (entry != NULL) {
			o->has_statement = 1;
			snprintf(o->endpoint.health, sizeof(o->endpoint.health), "%s",
			         health_class_name(entry->health_class));
			snprintf(o->health_signer, sizeof(o->health_signer), "%s",
			         health_signer_name(entry->signer));
			o->health_issued_at = entry->issued_at;
			if (entry->has_capacity)
				snprintf(o->health_capacity, sizeof(o->health_capacity), "%s",
				         capacity_class_name(entry->capacity));
		} else if (lookup->header.consensus_method >= 2) {
			snprintf(o->endpoint.health, sizeof(o->endpoint.health), "unknown");
		}
	}
	return DIRAUTH_SUCCESS;
}

DIRAUTH_EXPORT enum dirauth_status dirauth_lookup_run(struct dirauth_context *context,
                                                      const char *namespace_name, const char *service_id,
                                                      struct dirauth_endpoint *out, size_t cap, size_t *count,
                                                      struct dirauth_result *result)
{
	struct dirauth_update *lookup = NULL;
	enum dirauth_status status;

	client_result_reset(result);
	if (count != NULL)
		*count = 0;
	if (context == NULL || context->callbacks.fetch == NULL)
		return client_fail(result, DIRAUTH_E_ARGUMENT, "no fetch callback");
	status = dirauth_lookup_begin(context, namespace_name, service_id, &lookup, result);
	if (status == DIRAUTH_SUCCESS)
		status = drive(context, lookup, result);
	if (status == DIRAUTH_SUCCESS)
		status = dirauth_lookup_endpoints(lookup, out, cap, count, result);
	dirauth_update_free(lookup);
	return status;
}

DIRAUTH_EXPORT enum dirauth_status dirauth_update_verified(const struct dirauth_update *update,
                                                           struct dirauth_verified *out,
                                                           struct dirauth_result *result)
{
	client_result_reset(result);
	if (update == NULL || out == NULL)
		return client_fail(result, DIRAUTH_E_ARGUMENT, "no update or no place for the answer");
	if (!update->verified || (update->step == STEP_DONE && update->status != DIRAUTH_SUCCESS))
		return client_fail(result, DIRAUTH_E_ARGUMENT, "the update's checks have not all passed");
	memset(out, 0, sizeof(*out));
	out->epoch = update->header.epoch;
	out->record_count = update->header.record_count;
	out->signer_count = update->signers.count;
	out->authority_count = update->context->bundle.authority_count;
	snprintf(out->signer_names, sizeof(out->signer_names), "%s", update->signers.names);
	out->header_note = update->note.data;
	out->header_note_len = update->note.len;
	out->certificates = update->certificates.data;
	out->certificates_len = update->certificates.len;
	if (update->verified_body != NULL) {
		out->body = update->verified_body->data;
		out->body_len = update->verified_body->len;
	}
	out->had_held = update->has_held;
	out->held_epoch = update->has_held ? update->held.header.epoch : 0;
	out->diff_asked = update->diff_asked;
	out->diff_missing = update->diff_missing;
	out->diff_used = update->diff_used;
	out->diff_base_epoch = update->diff_base_epoch;
	out->body_served_len = update->body_served_len;
	out->body_held = update->body_held;
	snprintf(out->diff_why, sizeof(out->diff_why), "%s", update->diff_used ? "" : update->diff_why);
	out->log_checked = update->log_checked;
	if (update->log_checked) {
		out->log_proof = update->proof.data;
		out->log_proof_len = update->proof.len;
		out->checkpoint = update->log.checkpoint_note.data;
		out->checkpoint_len = update->log.checkpoint_note.len;
		out->log_index = update->log.index;
		out->log_tree_size = update->log.checkpoint.tree_size;
		memcpy(out->log_root, update->log.checkpoint.root, sizeof(out->log_root));
		out->log_cosigned = update->log.cosigned;
		out->log_witness_count = update->context->witness_count;
		out->log_quorum = update->context->witness_quorum;
		out->log_had_held = update->has_held_checkpoint;
		out->log_held_size = update->has_held_checkpoint ? update->held_checkpoint.tree_size : 0;
	}
	return DIRAUTH_SUCCESS;
}
