/*
 * log.c: a snapshot header shown in its namespace's transparency log.
 *
 * A header signed by the threshold is what the authorities say; its inclusion in the log under a
 * checkpoint cosigned by witnesses is what makes saying two things to two clients visible. The
 * check is tlog/'s: the proof file parses (tlog/proof.h), its checkpoint is of the namespace's
 * origin, signed by one of the pinned log keys and cosigned by the witness quorum
 * (tlog/policy.h), and the header's text is the entry the proof names. A log key's name is the
 * origin (tlog/tlog.md), so a key of another name is another log's.
 */
#include "libdirauth/internal.h"

#include "base/error.h"
#include "schema/checkpoint.h"
#include "tlog/consistency.h"
#include "tlog/policy.h"
#include "tlog/proof.h"

#include <inttypes.h>
#include <string.h>

/* Whether the proof's extra (dirauthd's proofs carry the header's signed note there) is a note of
 * the very text verified: a proof of another header is no proof of this one. */
static int extra_is_header(const struct tlog_proof *proof, const uint8_t *header_text, size_t header_text_len)
{
	struct note *carried = NULL;
	int same = note_parse(proof->extra, proof->extra_len, &carried) == 0 &&
	           carried->text_len == header_text_len &&
	           memcmp(carried->text, header_text, header_text_len) == 0;
	note_free(carried);
	return same;
}

/* Why the proof's checkpoint is not believed, in words. */
static enum dirauth_status checkpoint_refused(const struct dirauth_context *context,
                                              const struct tlog_proof *proof, const char *origin, int rc,
                                              size_t cosigned, struct dirauth_result *result)
{
	switch (rc) {
	case DIRAUTH_ERR_NOMEM:
		return client_fail(result, DIRAUTH_E_NOMEM, "out of memory");
	case DIRAUTH_ERR_CRYPTO:
		return client_fail(result, DIRAUTH_E_INTERNAL, "log: checkpoint: cannot verify");
	case DIRAUTH_ERR_CONFIG:
		return client_fail(result, DIRAUTH_E_TRUST, "log: checkpoint: the log's pins cannot be met");
	case DIRAUTH_ERR_MISMATCH:
		return client_fail(result, DIRAUTH_E_LOG,
		                   "log: checkpoint: of the log '%s', not of the namespace's log '%s'",
		                   proof->checkpoint.origin, origin);
	case DIRAUTH_ERR_SIGNATURE:
		return client_fail(
		    result, DIRAUTH_E_LOG,
		    "log: checkpoint: a signature by the log key or a pinned witness does not verify");
	case DIRAUTH_ERR_UNKNOWN_KEY: {
		size_t named = 0;
		for (size_t i = 0; i < context->log_key_count; i++)
			named += strcmp(context->log_keys[i].name, origin) == 0;
		return client_fail(result, DIRAUTH_E_LOG,
		                   "log: checkpoint: signed by none of the %zu pinned log keys", named);
	}
	case DIRAUTH_ERR_THRESHOLD:
		return client_fail(
		    result, DIRAUTH_E_LOG,
		    "log: checkpoint: cosigned by %zu of the %zu pinned witnesses, %zu required", cosigned,
		    context->witness_count, context->witness_quorum);
	default:
		return client_fail(result, DIRAUTH_E_LOG, "log: checkpoint: not a checkpoint: %s",
		                   dirauth_strerror(rc));
	}
}

enum dirauth_status client_log_check(const struct dirauth_context *context, const char *origin,
                                     const uint8_t *header_text, size_t header_text_len,
                                     const uint8_t *proof_bytes, size_t proof_len,
                                     struct client_log_shown *shown, struct dirauth_result *result)
{
	struct tlog_proof *proof = NULL;
	struct checkpoint checkpoint;
	size_t cosigned = 0;
	int rc;

	if (context->log_key_count == 0)
		return client_fail(result, DIRAUTH_E_LOG, "log: no log key is pinned");
	rc = tlog_proof_parse(proof_bytes, proof_len, &proof);
	if (rc != 0)
		return client_fail(result, rc == DIRAUTH_ERR_NOMEM ? DIRAUTH_E_NOMEM : DIRAUTH_E_MALFORMED,
		                   "log: not a c2sp.org/tlog-proof file: %s", dirauth_strerror(rc));
	if (proof->extra != NULL && !extra_is_header(proof, header_text, header_text_len)) {
		tlog_proof_free(proof);
		return client_fail(result, DIRAUTH_E_LOG,
		                   "log: the proof carries another header than the one verified");
	}
	rc = DIRAUTH_ERR_UNKNOWN_KEY;
	for (size_t i = 0; i < context->log_key_count && rc == DIRAUTH_ERR_UNKNOWN_KEY; i++) {
		if (strcmp(context->log_keys[i].name, origin) != 0)
			continue;
		struct tlog_policy policy = {origin, &context->log_keys[i], context->witnesses,
		                             context->witness_count, context->witness_quorum};
		cosigned = 0;
		rc = tlog_checkpoint_verify(proof->note, &policy, &checkpoint, NULL, &cosigned);
	}
	if (rc != 0) {
		enum dirauth_status status = checkpoint_refused(context, proof, origin, rc, cosigned, result);
		tlog_proof_free(proof);
		return status;
	}
	rc = tlog_proof_verify_entry(proof, header_text, header_text_len);
	uint64_t index = proof->index;
	if (rc == 0 && shown != NULL) {
		shown->index = index;
		shown->checkpoint = checkpoint;
		shown->cosigned = cosigned;
		buffer_reset(&shown->checkpoint_note);
		if (buffer_append(&shown->checkpoint_note, proof->checkpoint_note,
		                  proof->checkpoint_note_len) != 0)
			rc = DIRAUTH_ERR_NOMEM;
	}
	tlog_proof_free(proof);
	if (rc == DIRAUTH_ERR_NOMEM)
		return client_fail(result, DIRAUTH_E_NOMEM, "out of memory");
	if (rc == DIRAUTH_ERR_PROOF)
		return client_fail(result, DIRAUTH_E_LOG,
		                   "log: inclusion: the header is not entry %" PRIu64
		                   " of the checkpoint's tree of %" PRIu64
		                   " (the proof does not lead from its text to the checkpoint's root)",
		                   index, checkpoint.tree_size);
	if (rc != 0)
		return client_fail(result, DIRAUTH_E_INTERNAL, "log: cannot verify: %s",
		                   dirauth_strerror(rc));
	return DIRAUTH_SUCCESS;
}

DIRAUTH_EXPORT enum dirauth_status dirauth_verify_log_proof(const struct dirauth_context *context,
                                                            const char *namespace_name, const uint8_t *proof,
                                                            size_t proof_len, struct dirauth_result *result)
{
	struct note *note = NULL;

	client_result_reset(result);
	if (context == NULL || (proof == NULL && proof_len > 0))
		return client_fail(result, DIRAUTH_E_ARGUMENT, "no context or no proof bytes");
	const struct client_view *view;
	enum dirauth_status status = client_installed_view(context, namespace_name, false, &view, result);
	if (status != DIRAUTH_SUCCESS)
		return status;
	int rc = note_parse(view->header_note.data, view->header_note.len, &note);
	if (rc != 0)
		return client_fail(result, client_status_of(rc), "header: cannot be read again");
	status = client_log_check(context, view->header.origin, note->text, note->text_len,
	                          proof != NULL ? proof : (const uint8_t *)"", proof_len, NULL, result);
	note_free(note);
	return status;
}

enum dirauth_status client_log_consistent(const struct checkpoint *held, const struct checkpoint *shown,
                                          const uint8_t *proof_text, size_t proof_len,
                                          struct dirauth_result *result)
{
	merkle_hash proof[MERKLE_MAX_PROOF];
	size_t hashes = 0;

	if (strcmp(held->origin, shown->origin) != 0)
		return client_fail(result, DIRAUTH_E_LOG,
		                   "log: the checkpoint held is of the log '%s', not '%s'", held->origin,
		                   shown->origin);
	if (shown->tree_size < held->tree_size)
		return client_fail(result, DIRAUTH_E_LOG,
		                   "log: rollback: the server's checkpoint is of size %" PRIu64
		                   ", one of size %" PRIu64 " is held",
		                   shown->tree_size, held->tree_size);
	if (shown->tree_size == held->tree_size) {
		if (memcmp(shown->root, held->root, MERKLE_HASH_SIZE) == 0)
			return DIRAUTH_SUCCESS;
		return client_fail(result, DIRAUTH_E_LOG,
		                   "log: inconsistent: the server's checkpoint of size %" PRIu64
		                   " has another root than the one held: the log shows two histories",
		                   held->tree_size);
	}
	int rc = tlog_consistency_parse(proof_text, proof_len, proof, &hashes);
	if (rc != 0)
		return client_fail(result, DIRAUTH_E_LOG,
		                   "log: consistency: the answer is not a consistency proof: %s",
		                   dirauth_strerror(rc));
	rc = merkle_consistency_verify(held->tree_size, shown->tree_size, held->root, shown->root, proof,
	                               hashes);
	if (rc == DIRAUTH_ERR_CRYPTO)
		return client_fail(result, DIRAUTH_E_INTERNAL, "log: consistency: cannot verify");
	if (rc != 0)
		return client_fail(
		    result, DIRAUTH_E_LOG,
		    "log: inconsistent: the server's checkpoint of size %" PRIu64
		    " does not extend the one of size %" PRIu64
		    " held (the consistency proof does not verify): the log shows two histories",
		    shown->tree_size, held->tree_size);
	return DIRAUTH_SUCCESS;
}

enum dirauth_status client_log_held_parse(const uint8_t *bytes, size_t len, struct checkpoint *out,
                                          struct dirauth_result *result)
{
	struct note *note = NULL;
	int rc = len > TLOG_PROOF_NOTE_MAX ? DIRAUTH_ERR_BOUNDS : note_parse(bytes, len, &note);
	if (rc == 0)
		rc = checkpoint_parse(note->text, note->text_len, out);
	note_free(note);
	if (rc == DIRAUTH_ERR_NOMEM)
		return client_fail(result, DIRAUTH_E_NOMEM, "out of memory");
	if (rc != 0)
		return client_fail(result, DIRAUTH_E_STATE,
		                   "log: the held checkpoint cannot be read back: %s", dirauth_strerror(rc));
	return DIRAUTH_SUCCESS;
}
