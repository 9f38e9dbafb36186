/*
 * publish.c: one snapshot, from the store's sealed view to a stored, signed header and body files.
 *
 * The order of the steps is the safety argument: the view is sealed first, so it cannot change
 * under the build; every bound is checked and every byte is written before the signer is asked;
 * and the store holds the signed header, with its body files durable, before any caller can serve
 * it (hard rule 2: the store refuses an epoch that does not grow).
 *
 * The view is walked twice in two read transactions: once to count the records and size the body
 * (the body's fourth line is its record count), once to write it. The seal guarantees both walks
 * see the same records.
 */
#include "server/publish/publish.h"

#include "server/publish/lifecycle.h"
#include "schema/crypto.h"
#include "schema/error.h"
#include "schema/merkle.h"
#include "schema/schedule.h"
#include "faults/faults.h"
#include "server/store/registrations.h"
#include "server/store/snapshots.h"

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

/* The first walk: how many records, and how large the body. */
struct size_walk {
	uint64_t records;
	uint64_t bytes;
	uint64_t max_records;
};

static int size_visit(void *context, const struct store_record *record)
{
	struct size_walk *w = context;
	if (++w->records > w->max_records)
		return DIRAUTH_ERR_BOUNDS;
	w->bytes += STORE_RECORD_FRAMING + record->note_len;
	return 0;
}

/* The second walk: each record's line and note into the body, its note into the Merkle tree. */
struct write_walk {
	struct store_body_writer *writer;
	struct merkle_builder tree;
	struct buffer line;
	uint64_t records;
	uint64_t expected;
	uint8_t last_id[SERVICE_ID_SIZE];
};

static int write_visit(void *context, const struct store_record *record)
{
	struct write_walk *w = context;
	merkle_hash leaf;
	if (++w->records > w->expected)
		return DIRAUTH_ERR_INTERNAL; /* the sealed view changed between the walks */
	if (w->records == w->expected / 2 + 1)
		fault_point("publish-body");
	buffer_reset(&w->line);
	int rc = snapshot_body_encode_record_line(record->service_id, record->note_len, &w->line);
	if (!rc)
		rc = store_body_write(w->writer, w->line.data, w->line.len);
	if (!rc)
		rc = store_body_write(w->writer, record->note, record->note_len);
	if (!rc)
		rc = merkle_leaf_hash(record->note, record->note_len, leaf);
	if (!rc)
		rc = merkle_builder_add(&w->tree, leaf);
	return rc;
}

int publish_check_body_bounds(const struct config *config, const struct store_body_info *info)
{
	if (info->size[ENCODING_IDENTITY] > config->bounds.snapshot_body_uncompressed)
		return DIRAUTH_ERR_BOUNDS;
	for (int e = 0; e < ENCODING_COUNT; e++)
		if (e != ENCODING_IDENTITY && info->size[e] > config->bounds.snapshot_body_compressed)
			return DIRAUTH_ERR_BOUNDS;
	return 0;
}

/* Writes the body of the sealed view and fills the header's records, root, size and digest. */
static int write_body(const struct config *config, struct store *store, const char *name,
                      struct snapshot_header *h, struct store_body_info *info)
{
	struct size_walk size = {.max_records = config->bounds.records_per_snapshot};
	struct write_walk write = {0};
	struct store_body_writer *writer = NULL;
	int rc = store_view_foreach(store, name, h->epoch, h->valid_after, size_visit, &size);
	if (rc)
		return rc;
	if (size.bytes > config->bounds.snapshot_body_uncompressed)
		return DIRAUTH_ERR_BOUNDS;
	if ((rc = store_body_begin(store, name, h->epoch, &writer)))
		return rc;
	buffer_init(&write.line);
	merkle_builder_init(&write.tree);
	write.writer = writer;
	write.expected = size.records;
	rc = snapshot_body_encode_head(name, h->epoch, size.records, &write.line);
	if (!rc)
		rc = store_body_write(writer, write.line.data, write.line.len);
	if (!rc)
		rc = store_view_foreach(store, name, h->epoch, h->valid_after, write_visit, &write);
	if (!rc && write.records != size.records)
		rc = DIRAUTH_ERR_INTERNAL;
	if (!rc)
		rc = merkle_builder_root(&write.tree, h->records_root);
	buffer_free(&write.line);
	if (rc) {
		store_body_discard(writer);
		return rc;
	}
	if ((rc = store_body_finish(writer, info)))
		return rc;
	h->record_count = size.records;
	h->body_size = info->size[ENCODING_IDENTITY];
	memcpy(h->body_sha256, info->sha256[ENCODING_IDENTITY], sizeof h->body_sha256);
	return publish_check_body_bounds(config, info);
}

int publish_snapshot(const struct config *config, struct store *store, struct signer_client *signer,
                     size_t namespace_index, uint64_t epoch, struct publication *out, char *detail,
                     size_t detail_cap)
{
	struct publication p;
	struct buffer text;
	struct note_signature signature;
	struct epoch_times times;
	int rc, have_previous;
	uint64_t previous_epoch = 0, sealed;

	memset(&p, 0, sizeof p);
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
	snprintf(h->namespace_name, sizeof h->namespace_name, "%s", ns->name);
	snprintf(h->origin, sizeof h->origin, "%s", ns->origin);
	h->epoch = epoch;
	/* A namespace of the endpoint lifecycle is consensus method 2 (server/publish/lifecycle.h). */
	h->consensus_method = ns->lifecycle ? 2 : SNAPSHOT_CONSENSUS_METHOD;
	if ((rc = schedule_epoch_times(&config->epoch, epoch, &times)))
		goto cleanup;
	h->valid_after = times.valid_after;
	h->fresh_until = times.fresh_until;
	h->valid_until = times.valid_until;
	if ((rc = publish_latest_digest(store, ns->name, &have_previous, &previous_epoch, h->previous)))
		goto cleanup;
	if (have_previous && epoch <= previous_epoch) {
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
	rc = ns->lifecycle ? publish_lifecycle_body(config, store, namespace_index, have_previous,
	                                            previous_epoch, h, &p.body)
	                   : write_body(config, store, ns->name, h, &p.body);
	if (rc)
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
	if ((rc = publish_check_body_bounds(config, &info)))
		return rc;
	fault_point("publish-signed");
	rc = store_snapshot_put(store, header->namespace_name, header->epoch, header_note, header_note_len,
	                        &info);
	if (!rc)
		fault_point("publish-stored");
	return rc;
}
