/*
 * policy.h: what a verifier trusts about one log, and a checkpoint checked against it.
 *
 * A policy names the log's origin, its Ed25519 signed-note key (type 0x01), the cosigners whose
 * cosignatures (c2sp.org/tlog-cosignature, cosignature/v1, type 0x04) it accepts, and how many
 * distinct cosigners must have cosigned (the quorum, in the sense of c2sp.org/tlog-policy). A
 * checkpoint note passes when its text is a checkpoint of that origin, the log's signature
 * verifies, and at least quorum distinct cosigners cosigned it.
 *
 * Counting follows the signed-note rules and hard rule 10: signature lines by keys the policy
 * does not name are ignored; a line under a named key (name and key id) that fails rejects the
 * whole note; each cosigner counts once however many lines it has; and cosigners are told apart
 * by public key, not by name, because an Ed25519 cosignature does not sign the cosigner's name:
 * one key listed under two names could otherwise be counted twice from one signature copied
 * under the second name's key id.
 *
 * The policy's pointers are borrowed for the duration of each call.
 */
#ifndef DIRAUTH_TLOG_POLICY_H
#define DIRAUTH_TLOG_POLICY_H

#include "schema/checkpoint.h"
#include "schema/note.h"

#include <stddef.h>
#include <stdint.h>

struct tlog_policy {
	const char *origin;                    /* the checkpoint origin line, NUL-terminated */
	const struct note_verifier *log_key;   /* type NOTE_KEY_TYPE_ED25519 */
	const struct note_verifier *cosigners; /* type NOTE_KEY_TYPE_COSIGNATURE_V1 each */
	size_t cosigner_count;
	size_t quorum; /* distinct cosigners required; 0 asks for the log's signature only */
};

/*
 * Checks a signed checkpoint note against policy. On success returns 0 with *out the parsed
 * checkpoint, *cosigned_count (may be NULL) the number of distinct cosigners that cosigned, and
 * cosigned (may be NULL, else cosigner_count entries) 1 for each cosigner counted (the first of
 * each public key), 0 for the others.
 *
 * Errors, in the order checked: DIRAUTH_ERR_CONFIG for a policy that cannot be met or is
 * malformed (origin not a valid origin, a log key not of type 0x01, a cosigner not of type
 * 0x04, a quorum above the number of distinct cosigner keys); DIRAUTH_ERR_SYNTAX or
 * DIRAUTH_ERR_BOUNDS when the note text is not a checkpoint; DIRAUTH_ERR_MISMATCH for another
 * origin; DIRAUTH_ERR_SIGNATURE when a line under the log key or a cosigner fails;
 * DIRAUTH_ERR_UNKNOWN_KEY when the log did not sign; DIRAUTH_ERR_THRESHOLD when fewer than
 * quorum cosigners cosigned (out, cosigned and *cosigned_count are then set as on success);
 * DIRAUTH_ERR_NOMEM; DIRAUTH_ERR_CRYPTO. Cosignature timestamps are not judged against a clock:
 * cosignature_verify() gives them to a caller that wants to.
 */
int tlog_checkpoint_verify(const struct note *note, const struct tlog_policy *policy, struct checkpoint *out,
                           uint8_t *cosigned, size_t *cosigned_count);

#endif
