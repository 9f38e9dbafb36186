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
#include "tlog/policy.h"
#include "tlog/proof.h"

#include <inttypes.h>
#include <string.h>

enum dirauth_status client_log_check(const struct dirauth_context *context, const char *origin,
                                     const uint8_t *header_text, size_t header_text_len,
                                     const uint8_t *proof_bytes, size_t proof_len,
                                     struct dirauth_result *result)
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
		                   "log: not a tlog-proof file: %s", dirauth_strerror(rc));
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
		tlog_proof_free(proof);
		if (rc == DIRAUTH_ERR_NOMEM)
			return client_fail(result, DIRAUTH_E_NOMEM, "out of memory");
		return client_fail(result, DIRAUTH_E_LOG,
		                   "log: the checkpoint is not believed (%s; %zu of the %zu witnesses needed "
		                   "cosigned)",
		                   dirauth_strerror(rc), cosigned, context->witness_quorum);
	}
	rc = tlog_proof_verify_entry(proof, header_text, header_text_len);
	uint64_t index = proof->index;
	tlog_proof_free(proof);
	if (rc == DIRAUTH_ERR_PROOF)
		return client_fail(result, DIRAUTH_E_LOG,
		                   "log: the header is not entry %" PRIu64
		                   " of the checkpoint's tree of %" PRIu64,
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
	                          proof != NULL ? proof : (const uint8_t *)"", proof_len, result);
	note_free(note);
	return status;
}
