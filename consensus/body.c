/*
 * body.c: the snapshot body as the methods choose it, written in order to the caller's writer, and
 * the header that commits to it.
 *
 * A method knows the body's lines one at a time: the head (whose last line is the record count),
 * then each published record, then method 2's sections. Each piece goes to the caller's
 * consensus_body_fn as soon as it is known, and this file keeps only what the header needs of the
 * bytes gone by: their count, a running SHA-256 and the Merkle builder over the record notes
 * (RFC 6962, what snapshot_records_root computes over the whole list). So the computation holds
 * one line at a time, never the body, whatever its size; the caller decides where the bytes go
 * (a buffer for consensus_compute, the store's body files for a publication). The bound on the
 * body's size is judged before each piece is written, so a body over it is never written past it.
 *
 * The header of a computed snapshot is filled here and nowhere else: the epoch's parameters, the
 * previous the votes agreed on, the method, and the records root, size and digest of the body
 * just written.
 */
#include "consensus/method.h"

#include "base/error.h"

#include <string.h>

int consensus_body_begin(struct consensus_run *run, struct consensus_body_writer *w, uint64_t record_count)
{
	memset(w, 0, sizeof(*w));
	w->run = run;
	buffer_init(&w->line);
	merkle_builder_init(&w->tree);
	if (!(w->sha256 = crypto_sha256_new()))
		return consensus_run_fail(run, CONSENSUS_FAILED, DIRAUTH_ERR_NOMEM);
	int rc = snapshot_body_encode_head(run->params->namespace_name, run->params->epoch, record_count,
	                                   &w->line);
	if (rc)
		return consensus_run_fail(run, CONSENSUS_FAILED, rc);
	return consensus_body_write(w, w->line.data, w->line.len, NULL, 0);
}

/* Fails for an encoder's refusal: a note over its bound is a body too large, anything else a
 * computation that could not run. */
static int encoder_fail(struct consensus_body_writer *w, int rc)
{
	return consensus_run_fail(w->run,
	                          rc == DIRAUTH_ERR_BOUNDS ? CONSENSUS_BODY_TOO_LARGE : CONSENSUS_FAILED, rc);
}

int consensus_body_write(struct consensus_body_writer *w, const uint8_t *line, size_t line_len,
                         const uint8_t *note, size_t note_len)
{
	struct consensus_run *run = w->run;
	uint64_t size = w->size + line_len + note_len;
	if (size > run->params->max_body_bytes)
		return consensus_run_fail(run, CONSENSUS_BODY_TOO_LARGE, DIRAUTH_ERR_BOUNDS);
	int rc = crypto_sha256_update(w->sha256, line, line_len);
	if (rc == 0 && note_len > 0)
		rc = crypto_sha256_update(w->sha256, note, note_len);
	if (rc)
		return consensus_run_fail(run, CONSENSUS_FAILED, rc);
	rc = run->body(run->body_context, line, line_len);
	if (rc == 0 && note_len > 0)
		rc = run->body(run->body_context, note, note_len);
	if (rc)
		return consensus_run_fail(run, CONSENSUS_FAILED, rc < 0 ? rc : DIRAUTH_ERR_INTERNAL);
	w->size = size;
	return 0;
}

int consensus_body_record(struct consensus_body_writer *w, const uint8_t service_id[SERVICE_ID_SIZE],
                          const uint8_t *note, size_t note_len)
{
	merkle_hash leaf;
	buffer_reset(&w->line);
	int rc = snapshot_body_encode_record_line(service_id, note_len, &w->line);
	if (rc)
		return encoder_fail(w, rc);
	if ((rc = consensus_body_write(w, w->line.data, w->line.len, note, note_len)) != 0)
		return rc;
	if ((rc = merkle_leaf_hash(note, note_len, leaf)) != 0 ||
	    (rc = merkle_builder_add(&w->tree, leaf)) != 0)
		return consensus_run_fail(w->run, CONSENSUS_FAILED, rc);
	w->records++;
	return 0;
}

int consensus_body_section(struct consensus_body_writer *w, const char *keyword, size_t count)
{
	if (count == 0)
		return 0; /* an empty section is never written */
	buffer_reset(&w->line);
	int rc = snapshot_body_encode_section_count(keyword, count, &w->line);
	return rc ? encoder_fail(w, rc) : consensus_body_write(w, w->line.data, w->line.len, NULL, 0);
}

int consensus_body_health(struct consensus_body_writer *w, const struct snapshot_health *entry)
{
	buffer_reset(&w->line);
	int rc = snapshot_body_encode_health_line(entry, &w->line);
	return rc ? encoder_fail(w, rc)
	          : consensus_body_write(w, w->line.data, w->line.len, entry->note, entry->note_len);
}

int consensus_body_revocation(struct consensus_body_writer *w, const struct snapshot_revocation *entry)
{
	buffer_reset(&w->line);
	int rc = snapshot_body_encode_revocation_line(entry, &w->line);
	return rc ? encoder_fail(w, rc)
	          : consensus_body_write(w, w->line.data, w->line.len, entry->note, entry->note_len);
}

int consensus_body_finish(struct consensus_body_writer *w)
{
	struct consensus_run *run = w->run;
	struct consensus_result *result = run->result;
	const struct consensus_params *p = run->params;
	struct snapshot_header *h = &result->header;
	memset(h, 0, sizeof(*h));
	memcpy(h->namespace_name, p->namespace_name, strlen(p->namespace_name) + 1);
	memcpy(h->origin, p->origin, strlen(p->origin) + 1);
	h->epoch = p->epoch;
	h->valid_after = p->times.valid_after;
	h->fresh_until = p->times.fresh_until;
	h->valid_until = p->times.valid_until;
	h->record_count = w->records;
	h->body_size = w->size;
	memcpy(h->previous, result->previous, 32);
	h->consensus_method = result->method;
	int rc = crypto_sha256_finish(w->sha256, h->body_sha256); /* which frees it */
	w->sha256 = NULL;
	if (rc != 0 || (rc = merkle_builder_root(&w->tree, h->records_root)) != 0 ||
	    (rc = snapshot_header_encode(h, &result->header_text)) != 0)
		return consensus_run_fail(run, CONSENSUS_FAILED, rc);
	return 0;
}

void consensus_body_clear(struct consensus_body_writer *w)
{
	crypto_sha256_free(w->sha256);
	buffer_free(&w->line);
	memset(w, 0, sizeof(*w));
}
