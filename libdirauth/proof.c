/*
 * proof.c: a proof file checked offline (dirauth_verify_proof_file): what a monitor, an auditor
 * or `dirauthctl verify` believes of a snapshot header someone kept, long after it was current.
 *
 * A tlog-proof file as dirauthd serves it carries the header's signed note as its extra data, so
 * it holds everything needed but the trust: the bundle of the context, the certificate bundle the
 * caller gives, the log keys and witnesses of the context's options. Nothing the file says is
 * believed before what vouches for it verified, and the order of the checks is the point: the
 * header first, by the trust bundle, so that a refusal says whether the authorities or the log
 * failed; the checkpoint then by the log's pins; the inclusion last, of the header's own text,
 * never of anything the file claims the leaf is. The header is judged at its own valid-after (its
 * signing keys certified then), never by the clock: a proof is a statement about the past, and an
 * old proof of an expired snapshot still verifies. No installed snapshot is read and no state is
 * written, so the check is the same in any context of the bundle.
 *
 * The log part is log.c's (client_log_check), the update's log step's own check.
 */
#include "libdirauth/internal.h"

#include "base/error.h"
#include "schema/note.h"
#include "schema/registration.h"
#include "schema/snapshot.h"
#include "schema/trust_bundle.h"
#include "tlog/proof.h"
#include "verify/keyring.h"
#include "verify/snapshot.h"
#include "verify/verify.h"

#include <stdio.h>
#include <string.h>

_Static_assert(NAMESPACE_NAME_MAX < sizeof(((struct dirauth_proof_info *)0)->namespace_name),
               "a namespace name fits the proof's info");
_Static_assert(SNAPSHOT_ORIGIN_MAX < sizeof(((struct dirauth_proof_info *)0)->origin),
               "an origin fits the proof's info");
_Static_assert(VERIFY_NAMES_MAX <= sizeof(((struct dirauth_proof_info *)0)->signer_names),
               "the signers' names fit the proof's info");
_Static_assert(MERKLE_HASH_SIZE == sizeof(((struct dirauth_proof_info *)0)->root), "a root hash fits");

/* The header the file carries (its extra) parsed into *note and *header. The caller frees *note. */
static enum dirauth_status read_header(const struct tlog_proof *proof, struct note **note,
                                       struct snapshot_header *header, struct dirauth_result *result)
{
	if (proof->extra == NULL)
		return client_fail(result, DIRAUTH_E_MALFORMED,
		                   "proof: carries no snapshot header (no extra line): nothing to verify the "
		                   "authorities' signatures of");
	if (proof->extra_len > VERIFY_HEADER_NOTE_MAX)
		return client_fail(result, DIRAUTH_E_MALFORMED,
		                   "header: larger than a header note (%zu bytes, at most %zu)",
		                   proof->extra_len, (size_t)VERIFY_HEADER_NOTE_MAX);
	int rc = note_parse(proof->extra, proof->extra_len, note);
	if (rc == 0)
		rc = snapshot_header_parse((*note)->text, (*note)->text_len, header);
	if (rc != 0)
		return client_fail(result, rc == DIRAUTH_ERR_NOMEM ? DIRAUTH_E_NOMEM : DIRAUTH_E_MALFORMED,
		                   "header: the proof's extra is not a signed snapshot header note: %s",
		                   dirauth_strerror(rc));
	return DIRAUTH_SUCCESS;
}

/* The header, by the trust bundle at its own time: a namespace the bundle pins, with its origin,
 * signed by its threshold with keys certified at valid-after. Fills the header's part of info. */
static enum dirauth_status judge_header(const struct dirauth_context *context, const uint8_t *certificates,
                                        size_t certificates_len, const struct note *note,
                                        const struct snapshot_header *header, struct dirauth_proof_info *info,
                                        struct dirauth_result *result)
{
	const struct trust_bundle *bundle = &context->bundle;
	struct certificate_keyring *ring = NULL;
	struct verify_signers signers;
	char detail[VERIFY_DETAIL_MAX];

	const struct trust_namespace *pinned = trust_bundle_namespace(bundle, header->namespace_name);
	if (pinned == NULL)
		return client_fail(result, DIRAUTH_E_TRUST, "header: namespace %s is not in the trust bundle",
		                   header->namespace_name);
	if (strcmp(pinned->origin, header->origin) != 0)
		return client_fail(result, DIRAUTH_E_MISMATCH,
		                   "header: wrong origin '%s', the trust bundle pins '%s'", header->origin,
		                   pinned->origin);
	int rc = verify_keyring_from_trust_bundle(bundle, certificates, certificates_len, &ring, NULL, detail,
	                                          sizeof(detail));
	if (rc != 0)
		return client_fail(result, client_status_of(rc), "certificates: %s", detail);
	struct verify_pins pins = {ring, bundle->threshold, VERIFY_TRUST_BUNDLE_PINNED_BY};
	/* A past statement: its keys certified at its own time. */
	rc = verify_note(&pins, note, header->valid_after, header->valid_after, &signers, detail,
	                 sizeof(detail));
	verify_keyring_free(ring);
	if (rc != 0)
		return client_fail(result, client_status_of(rc), "header: %s", detail);
	snprintf(info->namespace_name, sizeof(info->namespace_name), "%s", header->namespace_name);
	snprintf(info->origin, sizeof(info->origin), "%s", header->origin);
	info->epoch = header->epoch;
	info->signer_count = signers.count;
	info->authority_count = bundle->authority_count;
	snprintf(info->signer_names, sizeof(info->signer_names), "%s", signers.names);
	return DIRAUTH_SUCCESS;
}

/* The log: a key of the header's origin pinned, then log.c's check of the checkpoint and of the
 * header's text as the entry (the update's own). Its details name the log ("log: checkpoint: ...");
 * here the whole check is of a log proof, so the part that refused comes first. Fills the log's
 * part of info. */
static enum dirauth_status judge_log(const struct dirauth_context *context, const uint8_t *proof,
                                     size_t proof_len, const struct note *note, const char *origin,
                                     struct dirauth_proof_info *info, struct dirauth_result *result)
{
	static const char log_prefix[] = "log: ";
	struct client_log_shown shown;
	size_t named = 0;

	for (size_t i = 0; i < context->log_key_count; i++)
		named += strcmp(context->log_keys[i].name, origin) == 0;
	if (context->log_key_count == 0)
		return client_fail(result, DIRAUTH_E_TRUST,
		                   "checkpoint: no log key is pinned, so no checkpoint can be believed");
	if (named == 0)
		return client_fail(
		    result, DIRAUTH_E_TRUST,
		    "checkpoint: none of the %zu pinned log keys is of the log '%s' (a log key "
		    "is named by its origin)",
		    context->log_key_count, origin);
	memset(&shown, 0, sizeof(shown));
	buffer_init(&shown.checkpoint_note);
	enum dirauth_status status =
	    client_log_check(context, origin, note->text, note->text_len, proof, proof_len, &shown, result);
	if (status == DIRAUTH_SUCCESS) {
		info->index = shown.index;
		info->tree_size = shown.checkpoint.tree_size;
		memcpy(info->root, shown.checkpoint.root, sizeof(info->root));
		info->cosigned = shown.cosigned;
	} else if (result != NULL && strncmp(result->detail, log_prefix, strlen(log_prefix)) == 0) {
		memmove(result->detail, result->detail + strlen(log_prefix),
		        strlen(result->detail) - strlen(log_prefix) + 1);
	}
	buffer_free(&shown.checkpoint_note);
	return status;
}

DIRAUTH_EXPORT enum dirauth_status
dirauth_verify_proof_file(const struct dirauth_context *context, const uint8_t *certificates,
                          size_t certificates_len, const uint8_t *proof, size_t proof_len,
                          struct dirauth_proof_info *info, struct dirauth_result *result)
{
	struct dirauth_proof_info ignored;
	struct snapshot_header header;
	struct tlog_proof *parsed = NULL;
	struct note *note = NULL;

	client_result_reset(result);
	if (info == NULL)
		info = &ignored;
	memset(info, 0, sizeof(*info));
	if (context == NULL || (proof == NULL && proof_len > 0) ||
	    (certificates == NULL && certificates_len > 0))
		return client_fail(result, DIRAUTH_E_ARGUMENT,
		                   "no context, or no proof or certificate bytes");
	info->witness_count = context->witness_count;
	info->quorum = context->witness_quorum;
	int rc = tlog_proof_parse(proof != NULL ? proof : (const uint8_t *)"", proof_len, &parsed);
	if (rc != 0)
		return client_fail(result, rc == DIRAUTH_ERR_NOMEM ? DIRAUTH_E_NOMEM : DIRAUTH_E_MALFORMED,
		                   "proof: not a c2sp.org/tlog-proof file: %s", dirauth_strerror(rc));
	enum dirauth_status status = read_header(parsed, &note, &header, result);
	if (status == DIRAUTH_SUCCESS)
		status = judge_header(context, certificates != NULL ? certificates : (const uint8_t *)"",
		                      certificates_len, note, &header, info, result);
	if (status == DIRAUTH_SUCCESS)
		status = judge_log(context, proof, proof_len, note, header.origin, info, result);
	note_free(note);
	tlog_proof_free(parsed);
	return status;
}
