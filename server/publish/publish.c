/*
 * publish.c: one snapshot, from the store's registrations to a stored, signed header and body.
 *
 * The order of the steps is the safety argument: every bound is checked and every byte is
 * built before the signer is asked, and the store holds the signed snapshot before any caller
 * can serve it, so what a mirror fetches has always been durably recorded (hard rule 2: the
 * store refuses an epoch that does not grow).
 */
#include "server/publish/publish.h"

#include "schema/crypto.h"
#include "schema/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void publication_clear(struct publication *p)
{
	if (!p)
		return;
	buffer_free(&p->header_note);
	for (int i = 0; i < ENCODING_COUNT; i++)
		buffer_free(&p->encoded[i]);
	memset(p, 0, sizeof *p);
}

int publish_encode_body(const struct config *config, struct publication *p)
{
	const struct buffer *body = &p->encoded[ENCODING_IDENTITY];
	if (body->len > config->bounds.snapshot_body_uncompressed)
		return DIRAUTH_ERR_BOUNDS;
	for (int e = 0; e < ENCODING_COUNT; e++) {
		if (e == ENCODING_IDENTITY)
			continue;
		buffer_reset(&p->encoded[e]);
		int rc =
		    compress_encode((enum content_encoding)e, body->data ? body->data : (const uint8_t *)"",
		                    body->len, &p->encoded[e]);
		if (rc)
			return rc;
		if (p->encoded[e].len > config->bounds.snapshot_body_compressed)
			return DIRAUTH_ERR_BOUNDS;
	}
	return 0;
}

/* The records gathered from the store: copies, because the store's pointers live only during
 * its callback. */
struct record_list {
	struct snapshot_record *records;
	size_t count;
	size_t cap;
	size_t max;
};

static void record_list_free(struct record_list *list)
{
	for (size_t i = 0; i < list->count; i++)
		free((void *)list->records[i].note);
	free(list->records);
	memset(list, 0, sizeof *list);
}

static int record_list_visit(void *context, const uint8_t service_id[32], const uint8_t *note,
                             size_t note_len)
{
	struct record_list *list = context;
	if (list->count >= list->max)
		return DIRAUTH_ERR_BOUNDS;
	if (list->count == list->cap) {
		size_t cap = list->cap ? list->cap * 2 : 64;
		struct snapshot_record *records = realloc(list->records, cap * sizeof *records);
		if (!records)
			return DIRAUTH_ERR_NOMEM;
		list->records = records;
		list->cap = cap;
	}
	uint8_t *copy = malloc(note_len ? note_len : 1);
	if (!copy)
		return DIRAUTH_ERR_NOMEM;
	memcpy(copy, note, note_len);
	struct snapshot_record *record = &list->records[list->count++];
	memcpy(record->service_id, service_id, SERVICE_ID_SIZE);
	record->note = copy;
	record->note_len = note_len;
	return 0;
}

/* The digest of the latest stored header of namespace_name, zeros when there is none, and the
 * epoch it had. */
static int previous_header_digest(struct store *store, const char *namespace_name, int *have_previous,
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

int publish_snapshot(const struct config *config, struct store *store, struct signer_client *signer,
                     size_t namespace_index, uint64_t epoch, struct publication *out, char *detail,
                     size_t detail_cap)
{
	struct record_list list = {.max = config->bounds.records_per_snapshot};
	struct publication p;
	struct buffer text;
	struct note_signature signature;
	int rc, have_previous;
	uint64_t previous_epoch = 0;

	memset(&p, 0, sizeof p);
	memset(out, 0, sizeof *out);
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
	h->consensus_method = SNAPSHOT_CONSENSUS_METHOD;
	struct epoch_times times;
	if ((rc = schedule_epoch_times(&config->epoch, epoch, &times)))
		goto cleanup;
	h->valid_after = times.valid_after;
	h->fresh_until = times.fresh_until;
	h->valid_until = times.valid_until;
	if ((rc = previous_header_digest(store, ns->name, &have_previous, &previous_epoch, h->previous)))
		goto cleanup;
	if (have_previous && epoch <= previous_epoch) {
		rc = DIRAUTH_ERR_ROLLBACK;
		goto cleanup;
	}
	/* Records still valid when the snapshot starts to be valid. */
	if ((rc = store_registration_foreach(store, ns->name, h->valid_after, record_list_visit, &list)))
		goto cleanup;
	if ((rc = snapshot_body_encode(ns->name, epoch, list.records, list.count,
	                               &p.encoded[ENCODING_IDENTITY])))
		goto cleanup;
	h->record_count = list.count;
	h->body_size = p.encoded[ENCODING_IDENTITY].len;
	if ((rc = snapshot_records_root(list.records, list.count, h->records_root)) ||
	    (rc = crypto_sha256(p.encoded[ENCODING_IDENTITY].data, p.encoded[ENCODING_IDENTITY].len,
	                        h->body_sha256)) ||
	    (rc = publish_encode_body(config, &p)))
		goto cleanup;
	if ((rc = snapshot_header_encode(h, &text)) ||
	    (rc = signer_client_sign(signer, SIGNER_OP_SIGN_SNAPSHOT_HEADER, text.data, text.len, 0, NULL, 0,
	                             &signature, detail, detail_cap)) ||
	    (rc = note_format(text.data, text.len, &signature, 1, &p.header_note)))
		goto cleanup;
	if ((rc = store_snapshot_put(store, ns->name, epoch, p.header_note.data, p.header_note.len,
	                             p.encoded[ENCODING_IDENTITY].data, p.encoded[ENCODING_IDENTITY].len)))
		goto cleanup;
	*out = p;
	memset(&p, 0, sizeof p);
cleanup:
	publication_clear(&p);
	record_list_free(&list);
	buffer_free(&text);
	return rc;
}
