/*
 * register.h: dirauthctl register, from a YAML service description to an accepted, signed
 * registration.
 *
 * The provider's key signs; the authority only answers. So the tool builds the registration
 * itself (provider line = the key's own verifier, issued-at = now, expires = now + validity,
 * endpoints sorted by id as the grammar wants), signs it as a C2SP note, and either prints it
 * (dry run) or posts it to <server>/v1/registrations. An accepted registration comes back as a
 * receipt note, which is checked before success is claimed: it must name this namespace,
 * service and sequence and the SHA-256 of the exact note submitted, and with a trust bundle it
 * must carry a valid signature by one of the bundle's authorities (a receipt is the promise of
 * one authority, so the threshold is 1) made with a signing key that the authority's pinned
 * identity key certified for the receipt's accepted-at, and that authority must be the one the
 * receipt names. The certificates come from the authority's GET /v1/certificates, fetched
 * before the registration is submitted (keyring.h).
 */
#ifndef DIRAUTH_CTL_REGISTER_H
#define DIRAUTH_CTL_REGISTER_H

#include "schema/buffer.h"
#include "schema/certificate.h"
#include "signer/key.h"
#include "schema/receipt.h"
#include "ctl/report.h"
#include "ctl/service_file.h"
#include "schema/trust_bundle.h"

#include <stddef.h>
#include <stdint.h>

/* The largest answer read from the server: a receipt note from one authority, or an error. */
#define CTL_REGISTER_RESPONSE_MAX (64 * 1024)

struct ctl_register_options {
	const char *key_path;
	const char *service_path;
	const char *server_url; /* may be NULL for a dry run */
	const char *trust_path; /* may be NULL: the receipt's signature is then not verified */
	int dry_run;
	uint64_t now; /* unix seconds, from the caller's clock */
};

struct ctl_register_result {
	struct buffer note; /* the signed registration note (submitted unless dry run) */
	uint8_t note_sha256[32];
	char namespace_name[NAMESPACE_NAME_MAX + 1];
	char service_hex[2 * SERVICE_ID_SIZE + 1];
	uint64_t sequence;
	int accepted;         /* a receipt came back and passed the checks */
	int receipt_verified; /* its signature was verified against a trust bundle */
	struct receipt receipt;
	char receipt_signer[NOTE_NAME_MAX + 1]; /* verified signer, or the receipt's authority line */
	struct buffer receipt_note;             /* the receipt note as received */
};

/* Zeroes a result. */
void ctl_register_result_init(struct ctl_register_result *result);

/* Frees the buffers of a result. Accepts NULL. */
void ctl_register_result_free(struct ctl_register_result *result);

/* Builds the registration of file for key at time now and appends the signed note to note.
 * *sequence gets the sequence used (the file's, or now). Returns 0, or a negative error with
 * the refusal in report (65 when the fields do not make a valid registration). */
int ctl_register_build(const struct signer_key *key, const struct ctl_service_file *file, uint64_t now,
                       struct buffer *note, uint64_t *sequence, struct ctl_report *report);

/* Checks a receipt note returned for the note whose SHA-256 is note_sha256, which registered
 * (namespace_name, service_id, sequence). ring may be NULL (no signature check); otherwise the
 * receipt must be signed, at its accepted-at, by a key certified for a pinned identity, and by
 * the authority the receipt names. On success fills result's receipt, receipt_signer and
 * receipt_verified. Returns 0, or a negative error with the refusal in report (65):
 * DIRAUTH_ERR_UNKNOWN_KEY (no certified key of a pinned identity signed), DIRAUTH_ERR_SIGNATURE,
 * DIRAUTH_ERR_MISMATCH (a field, or the named authority did not sign), DIRAUTH_ERR_SYNTAX. */
int ctl_register_check_receipt(const uint8_t *receipt_note, size_t len, const char *namespace_name,
                               const uint8_t service_id[SERVICE_ID_SIZE], uint64_t sequence,
                               const uint8_t note_sha256[32], const struct certificate_keyring *ring,
                               struct ctl_register_result *result, struct ctl_report *report);

/* The whole command: load the key (77 when its file mode is unsafe, 66 when missing), the
 * service file (65 with FILE:LINE on a refusal, 66 when missing), the trust bundle if named
 * (78); build and sign; unless dry_run, GET the certificates when there is a trust bundle (the
 * errors of ctl_keyring_download), POST and check the receipt (69 unreachable or 5xx, 76
 * for a 4xx or any answer other than 202, 65 for a receipt that does not check). Returns 0 with
 * *result filled, or a negative error with the failure in report. */
int ctl_register_run(const struct ctl_register_options *options, struct ctl_register_result *result,
                     struct ctl_report *report);

#endif
