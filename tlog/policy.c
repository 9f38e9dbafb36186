/*
 * policy.c: a checkpoint note against the policy of one log: its origin, its key, and a quorum
 * of distinct cosigners.
 *
 * This is the check before any proof is believed: an inclusion or consistency proof only says
 * something about the checkpoint it is checked against, and a checkpoint only says something
 * when the log signed it and enough witnesses saw the same tree head. The checks are done
 * by schema/note.c and schema/checkpoint.c; what this file adds is the counting of cosigners by
 * public key and the order of the refusals.
 */
#include "tlog/policy.h"

#include "base/error.h"
#include "schema/names.h"

#include <stdlib.h>
#include <string.h>

/* 1 when cosigner i has the public key of an earlier cosigner in the list. */
static int key_seen_before(const struct note_verifier *cosigners, size_t i)
{
	for (size_t j = 0; j < i; j++) {
		if (memcmp(cosigners[j].public_key, cosigners[i].public_key,
		           sizeof(cosigners[i].public_key)) == 0)
			return 1;
	}
	return 0;
}

static int policy_check(const struct tlog_policy *policy)
{
	if (!policy->origin ||
	    !names_origin_is_valid(policy->origin, strnlen(policy->origin, NAMES_ORIGIN_MAX + 1)))
		return DIRAUTH_ERR_CONFIG;
	if (!policy->log_key || policy->log_key->type != NOTE_KEY_TYPE_ED25519)
		return DIRAUTH_ERR_CONFIG;
	if (policy->cosigner_count > 0 && !policy->cosigners)
		return DIRAUTH_ERR_CONFIG;
	size_t distinct = 0;
	for (size_t i = 0; i < policy->cosigner_count; i++) {
		if (policy->cosigners[i].type != NOTE_KEY_TYPE_COSIGNATURE_V1)
			return DIRAUTH_ERR_CONFIG;
		if (!key_seen_before(policy->cosigners, i))
			distinct++;
	}
	return policy->quorum > distinct ? DIRAUTH_ERR_CONFIG : 0;
}

int tlog_checkpoint_verify(const struct note *note, const struct tlog_policy *policy, struct checkpoint *out,
                           uint8_t *cosigned, size_t *cosigned_count)
{
	uint8_t *counted = NULL;
	int rc = policy_check(policy);
	if (rc)
		return rc;
	if ((rc = checkpoint_parse(note->text, note->text_len, out)) != 0)
		return rc;
	if (strcmp(out->origin, policy->origin) != 0) {
		rc = DIRAUTH_ERR_MISMATCH;
		goto cleanup;
	}
	size_t log_signed = 0;
	if ((rc = note_verify(note, policy->log_key, 1, NULL, &log_signed)) != 0)
		goto cleanup;
	if (log_signed == 0) {
		rc = DIRAUTH_ERR_UNKNOWN_KEY;
		goto cleanup;
	}
	if (policy->cosigner_count > 0 && !(counted = calloc(policy->cosigner_count, 1))) {
		rc = DIRAUTH_ERR_NOMEM;
		goto cleanup;
	}
	/* Every cosigner's lines are checked, a repeated key's too: none may fail. */
	size_t count = 0;
	for (size_t i = 0; i < policy->cosigner_count; i++) {
		uint64_t timestamp = 0;
		rc = cosignature_verify(note, &policy->cosigners[i], &timestamp);
		if (rc == DIRAUTH_ERR_UNKNOWN_KEY) {
			rc = 0;
			continue;
		}
		if (rc)
			goto cleanup;
		counted[i] = 1;
	}
	for (size_t i = 0; i < policy->cosigner_count; i++) {
		if (!counted[i])
			continue;
		/* A key counted under an earlier name counts zero here. */
		for (size_t j = 0; j < i; j++) {
			if (counted[j] &&
			    memcmp(policy->cosigners[j].public_key, policy->cosigners[i].public_key,
			           sizeof(policy->cosigners[i].public_key)) == 0) {
				counted[i] = 0;
				break;
			}
		}
		count += counted[i];
	}
	if (cosigned && counted)
		memcpy(cosigned, counted, policy->cosigner_count);
	if (cosigned_count)
		*cosigned_count = count;
	rc = count < policy->quorum ? DIRAUTH_ERR_THRESHOLD : 0;
cleanup:
	free(counted);
	if (rc && rc != DIRAUTH_ERR_THRESHOLD)
		memset(out, 0, sizeof(*out));
	return rc;
}
