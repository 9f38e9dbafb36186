/*
 * publish.c: one snapshot, from the store's sealed view to a stored, signed header and body files.
 *
 * The order of the steps is the safety argument: the view is sealed first, so it cannot change
 * under the build; every bound is checked and every byte is written before the signer is asked;
 * and the store holds the signed header, with its body files durable, before any caller can serve
 * it (hard rule 2: the store refuses an epoch that does not grow).
 *
 * The snapshot is the consensus of this authority's one vote (n = k = 1): the vote's lines are
 * counted in one walk of the sealed view (vote.h) and read again by the rule a page at a time,
 * each page with its records' notes, which the rule then asks for; it asks the store for each
 * statement by digest, and writes the body piece by piece into the store's body writer, which
 * compresses and hashes it as it goes. So neither the vote's record lines nor the body are ever
 * held whole: a page of lines and notes, one statement at a time in a buffer the next read
 * replaces (revocations, few, are kept until the rule returns). The store's digest of what it
 * wrote must be the one the header commits to.
 */
#include "server/publish/publish.h"

#include "consensus/consensus.h"
#include "base/error.h"
#include "schedule/schedule.h"
#include "faults/faults.h"
#include "server/publish/vote.h"
#include "server/store/registrations.h"
#include "server/store/snapshots.h"
#include "server/store/statements.h"
#include "server/store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void publication_clear(struct publication *p)
{
	if (!p)
		return;
	buffer_free(&p->header_note);
	memset(p, 0, sizeof *p);
}

int publish_latest_digest(struct store *store, const char *namespace_name, int *have_previous,
                          uint64_t *previous_epoch, uint8_t digest[32])
{
	struct buffer header;
	struct note *note = NULL;
	buffer_init(&header);
	memset(digest, 0, 32);
	*have_previous = 0;
	int rc = store_snapshot_latest(store, namespace_name, previous_epoch);
	if (rc == DIRAUTH_ERR_NOT_FOUND)
		return 0;
	if (rc)
		return rc;
	if ((rc = store_snapshot_get(store, namespace_name, *previous_epoch, &header, NULL)) ||
	    (rc = note_parse(header.data, header.len, &note)) ||
	    (rc = snapshot_header_digest(note->text, note->text_len, digest)))
		goto cleanup;
	*have_previous = 1;
cleanup:
	note_free(note);
	buffer_free(&header);
	return rc;
}

/* The sizes the configuration allows, checked on a finished body: 0 or DIRAUTH_ERR_BOUNDS. */
static int check_body_bounds(const struct config *config, const struct store_body_info *info)
{
	if (info->size[ENCODING_IDENTITY] > config->bounds.snapshot_body_uncompressed)
		return DIRAUTH_ERR_BOUNDS;
	for (int e = 0; e < ENCODING_COUNT; e++)
		if (e != ENCODING_IDENTITY && info->size[e] > config->bounds.snapshot_body_compressed)
			return DIRAUTH_ERR_BOUNDS;
	return 0;
}

/* ---- the consensus of the one vote ---- */

/* The notes the consensus asks for, from the store: a registration by its version, a health
 * statement or revocation by its digest. Registration and health notes are read into one buffer
 * each, which the next read replaces (consensus.h allows no more); revocations, few and small, are
 * kept until the computation returns, as consensus.h asks. */
struct store_source {
	struct store *store;
	const char *name;
	const struct publish_view_lines *lines; /* the page of the vote's lines being read */
	struct buffer registration, health;
	struct buffer *revocations;
	size_t revocation_count;
};

static int store_registration_note(void *context, const uint8_t service_id[SERVICE_ID_SIZE],
                                   uint64_t sequence, const uint8_t digest[32], const uint8_t **note,
                                   size_t *note_len)
{
	(void)digest; /* the consensus checks it */
	struct store_source *s = context;
	if (publish_view_lines_note(s->lines, service_id, sequence, note, note_len) == 0)
		return 0; /* read with the page of lines that holds its version */
	buffer_reset(&s->registration);
	int rc = store_registration_get(s->store, s->name, service_id, sequence, &s->registration);
	*note = s->registration.data;
	*note_len = s->registration.len;
	return rc;
}

static int store_health_note(void *context, const uint8_t service_id[SERVICE_ID_SIZE],
                             const uint8_t endpoint_id[ENDPOINT_ID_SIZE], uint64_t issued_at,
                             uint64_t sequence, const uint8_t digest[32], const uint8_t **note,
                             size_t *note_len)
{
	(void)service_id, (void)endpoint_id, (void)issued_at, (void)sequence;
	struct store_source *s = context;
	buffer_reset(&s->health);
	int rc = store_statement_get(s->store, s->name, digest, &s->health);
	*note = s->health.data;
	*note_len = s->health.len;
	return rc;
}

static int store_revocation_note(void *context, const uint8_t service_id[SERVICE_ID_SIZE],
                                 const uint8_t *endpoint_id, const uint8_t digest[32], const uint8_t **note,
                                 size_t *note_len)
{
	(void)service_id, (void)endpoint_id;
	struct store_source *s = context;
	struct buffer *grown = realloc(s->revocations, (s->revocation_count + 1) * sizeof *grown);
	if (!grown)
		return DIRAUTH_ERR_NOMEM;
	s->revocations = grown;
	struct buffer *held = &s->revocations[s->revocation_count++];
	buffer_init(held);
	int rc = store_statement_get(s->store, s->name, digest, held);
	*note = held->data;
	*note_len = held->len;
	return rc;
}

static void store_source_clear(struct store_source *s)
{
	buffer_free(&s->registration);
	buffer_free(&s->health);
	for (size_t i = 0; i < s->revocation_count; i++)
		buffer_free(&s->revocations[i]);
	free(s->revocations);
}

/* The consensus's writer: the body goes to the store's body files as it is chosen. */
struct body_output {
	struct store_body_writer *writer;
	uint64_t pieces;
};

static int write_piece(void *context, const uint8_t *bytes, size_t len)
{
	struct body_output *o = context;
	if (o->pieces++ == 1)
		fault_point("publish-body"); /* the head is written, the records follow */
	return store_body_write(o->writer, bytes, len);
}

/* The snapshot of the sealed epoch h->epoch: this authority's one vote (vote.h), built from the
 * sealed view, and the consensus of it with n = k = 1 (consensus/consensus.h), its body written
 * to the store's body files. Fills *h and *info. */
static int compute_snapshot(const struct config *config, struct store *store, size_t namespace_index,
                            const struct publish_previous *previous, struct snapshot_header *h,
                            struct store_body_info *info)
{
	const struct config_namespace *ns = &config->namespaces[namespace_index];
	struct vote_body lines;
	struct publish_view_lines view;
	struct vote vote;
	struct consensus_vote input;
	struct consensus_result result;
	struct consensus_failure failure;
	struct store_source source = {.store = store, .name = ns->name, .lines = &view};
	struct body_output output = {0};
	memset(&result, 0, sizeof result);
	int rc = publish_view_lines_init(&view, store, ns->name, h->epoch, h->valid_after);
	if (rc)
		return rc;
	buffer_init(&source.registration);
	buffer_init(&source.health);
	rc = publish_vote_body_counted(config, store, namespace_index, h->epoch, h->valid_after,
	                               ns->lifecycle, previous->parsed, &lines);
	if (rc) {
		publish_view_lines_clear(&view);
		return rc;
	}
	/* Not sent, so without its records root: the rule does not read it. Its record lines are
	 * read again from the sealed view, a page at a time. */
	publish_vote_text(config, namespace_index, h->epoch, previous, &lines, NULL, &vote);
	consensus_vote_init(&input, &vote, &lines);
	struct consensus_record_lines reader = {publish_view_lines_read, &view};
	input.lines = &reader;
	struct consensus_params params = {
	    .namespace_name = ns->name,
	    .origin = ns->origin,
	    .epoch = h->epoch,
	    .threshold = 1,
	    .authorities = 1,
	    .max_records = config->bounds.records_per_snapshot,
	    .max_body_bytes = config->bounds.snapshot_body_uncompressed,
	};
	struct consensus_lifecycle lifecycle;
	publish_consensus_lifecycle(config, namespace_index, previous, &lifecycle);
	lifecycle.health = store_health_note;
	lifecycle.revocation = store_revocation_note;
	lifecycle.context = &source;
	if (ns->lifecycle)
		params.lifecycle = &lifecycle;
	if ((rc = schedule_epoch_times(&config->epoch, h->epoch, &params.times)) == 0 &&
	    (rc = store_body_begin(store, ns->name, h->epoch, &output.writer)) == 0) {
		rc = consensus_compute_streamed(&params, &input, 1, store_registration_note, &source,
		                                write_piece, &output, &result, &failure);
		if (rc)
			store_body_discard(output.writer);
		else
			rc = store_body_finish(output.writer, info);
	}
	if (rc == 0 && (info->size[ENCODING_IDENTITY] != result.header.body_size ||
	                memcmp(info->sha256[ENCODING_IDENTITY], result.header.body_sha256, 32) != 0))
		rc = DIRAUTH_ERR_INTERNAL; /* the store's files are not the body the header commits to */
	if (rc == 0)
		rc = check_body_bounds(config, info);
	if (rc == 0)
		*h = result.header;
	consensus_result_clear(&result);
	store_source_clear(&source);
	publish_vote_body_clear(&lines);
	publish_view_lines_clear(&view);
	return rc;
}

int publish_snapshot(const struct config *config, struct store *store, struct signer_client *signer,
                     size_t namespace_index, uint64_t epoch, struct publication *out, char *detail,
                     size_t detail_cap)
{
	struct publication p;
	struct publish_previous previous;
	struct buffer text;
	struct note_signature signature;
	struct epoch_times times;
	int rc;
	uint64_t sealed;

	memset(&p, 0, sizeof p);
	memset(&previous, 0, sizeof previous);
	memset(out, 0, sizeof *out);
	buffer_init(&p.header_note);
	buffer_init(&text);
	if (detail && detail_cap)
		detail[0] = 0;
	if (namespace_index >= config->namespace_count)
		return DIRAUTH_ERR_NOT_FOUND;
	const struct config_namespace *ns = &config->namespaces[namespace_index];
	struct snapshot_header *h = &p.header;
	snprintf(p.namespace_name, sizeof p.namespace_name, "%s", ns->name);
	h->epoch = epoch;
	if ((rc = schedule_epoch_times(&config->epoch, epoch, &times)))
		goto cleanup;
	h->valid_after = times.valid_after;
	/* The latest stored snapshot: the previous the vote names, and for method 2 the revocations
	 * it lists. A namespace without the lifecycle needs only its digest. */
	rc = publish_previous_load(config, store, namespace_index, &previous);
	if (rc && previous.have && !ns->lifecycle)
		rc = 0;
	if (rc)
		goto cleanup;
	if (previous.have && epoch <= previous.epoch) {
		rc = DIRAUTH_ERR_ROLLBACK;
		goto cleanup;
	}
	if ((rc = store_seal(store, epoch, times.valid_after)))
		goto cleanup;
	if (store_sealed(store, &sealed) != 0 || sealed != epoch) {
		rc = DIRAUTH_ERR_STALE;
		goto cleanup;
	}
	fault_point("publish-sealed");
	if ((rc = compute_snapshot(config, store, namespace_index, &previous, h, &p.body)))
		goto cleanup;
	if ((rc = snapshot_header_encode(h, &text)) ||
	    (rc = signer_client_sign(signer, SIGNER_OP_SIGN_SNAPSHOT_HEADER, text.data, text.len, 0, NULL, 0,
	                             &signature, detail, detail_cap)) ||
	    (rc = note_format(text.data, text.len, &signature, 1, &p.header_note)))
		goto cleanup;
	fault_point("publish-signed");
	if ((rc = store_snapshot_put(store, ns->name, epoch, p.header_note.data, p.header_note.len, &p.body)))
		goto cleanup;
	fault_point("publish-stored");
	*out = p;
	memset(&p, 0, sizeof p);
cleanup:
	publish_previous_clear(&previous);
	publication_clear(&p);
	buffer_free(&text);
	return rc;
}

int publish_signed_snapshot(const struct config *config, struct store *store,
                            const struct snapshot_header *header, const uint8_t *header_note,
                            size_t header_note_len, const uint8_t *body, size_t body_len)
{
	struct store_body_writer *writer = NULL;
	struct store_body_info info;
	if (body_len != header->body_size)
		return DIRAUTH_ERR_MISMATCH;
	if (body_len > config->bounds.snapshot_body_uncompressed)
		return DIRAUTH_ERR_BOUNDS;
	int rc = store_body_begin(store, header->namespace_name, header->epoch, &writer);
	if (rc)
		return rc;
	if ((rc = store_body_write(writer, body, body_len))) {
		store_body_discard(writer);
		return rc;
	}
	if ((rc = store_body_finish(writer, &info)))
		return rc;
	if (memcmp(info.sha256[ENCODING_IDENTITY], header->body_sha256, 32) != 0)
		return DIRAUTH_ERR_MISMATCH;
	if ((rc = check_body_bounds(config, &info)))
		return rc;
	fault_point("publish-signed");
	rc = store_snapshot_put(store, header->namespace_name, header->epoch, header_note, header_note_len,
	                        &info);
	if (!rc)
		fault_point("publish-stored");
	return rc;
}
