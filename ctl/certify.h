/*
 * certify.h: dirauthctl certify, rotate and certificate show: an authority's offline identity
 * key vouching for its online signing keys.
 *
 * An authority has two keys with one name. The identity key stays on an offline machine; its
 * verifier is what trust bundles pin. The signing key lives with the signer and signs every
 * statement. A key certificate (schema/certificate.h), signed by the identity key, binds the two
 * for a window [valid-after, valid-until), at most CERTIFICATE_MAX_WINDOW long. Verifiers count a
 * statement's signature only if a certificate from a pinned identity covers the statement's own
 * time, so the window is the whole of a signing key's authority: short windows limit what a
 * stolen signing key can do.
 *
 * certify issues one certificate for a signing key given by its verifier (the private half never
 * needs to reach the offline machine). rotate makes a new signing key and its certificate, and
 * insists that the new window start no later than the previous certificate ends, so that there
 * is no moment when the authority has no valid key. Certificates are written once (O_EXCL, mode
 * 0644: they are public) and never overwritten. certificate show prints a certificate or a
 * certificate bundle and checks each identity signature.
 */
#ifndef DIRAUTH_CTL_CERTIFY_H
#define DIRAUTH_CTL_CERTIFY_H

#include "base/buffer.h"
#include "schema/certificate.h"
#include "signer/key.h"
#include "schema/note.h"
#include "ctl/report.h"
#include "schema/trust_bundle.h"

#include <stddef.h>
#include <stdint.h>

#define CTL_CERTIFY_DAY_SECONDS 86400ULL

/* Loads a private key file for command what (e.g. "certify: identity key"), with the failure in
 * report as "<what> <path>: <why>": 77 for an unsafe file (not a regular file, a symlink, or
 * readable by group or other), 66 when missing, 65 when not a key file, else the error's status
 * (ctl_exit_code_for_error). Returns 0 with *key set (free it with signer_key_free), or the errors
 * of signer_key_load. */
int ctl_certify_load_key(const char *what, const char *path, struct signer_key **key,
                         struct ctl_report *report);

/* The end of a window starting at valid_after: valid_after + days days when days > 0, else
 * valid_until (exactly one of the two must be given, non-zero). Returns 0, or
 * DIRAUTH_ERR_SYNTAX with a usage failure (64) in report: both or neither given, an empty
 * window, a window longer than CERTIFICATE_MAX_WINDOW, an overflow. */
int ctl_certify_window(const char *command, uint64_t valid_after, uint64_t days, uint64_t valid_until,
                       uint64_t *out, struct ctl_report *report);

/* Builds the certificate binding signing_key to identity for [valid_after, valid_until), signs
 * its text with identity and appends the signed note to note. *certificate gets the fields.
 * Returns 0, or a negative error with the refusal in report: DIRAUTH_ERR_MISMATCH (65) when the
 * signing key's name is not the identity key's, DIRAUTH_ERR_SYNTAX (65) when the two keys are
 * the same key, DIRAUTH_ERR_SYNTAX (64) for an empty or too long window, DIRAUTH_ERR_CRYPTO or
 * DIRAUTH_ERR_NOMEM (70). */
int ctl_certificate_issue(const char *command, const struct signer_key *identity,
                          const struct note_verifier *signing_key, uint64_t valid_after, uint64_t valid_until,
                          struct certificate *certificate, struct buffer *note, struct ctl_report *report);

/* Writes a signed certificate note to a new file (mode 0644, never over an existing file).
 * Returns 0, or the failure in report: DIRAUTH_ERR_EXISTS (73), other errors of
 * ctl_file_create (73 or 74). */
int ctl_certificate_write(const char *command, const char *path, const struct buffer *note,
                          struct ctl_report *report);

struct ctl_certify_options {
	const char *identity_path;    /* the identity key file */
	const char *signing_verifier; /* the signing key's verifier-key text, or NULL */
	const char *signing_key_path; /* or a signing key file: only its public half is used */
	uint64_t valid_after;         /* unix seconds */
	uint64_t valid_until;         /* unix seconds, after valid_after (see ctl_certify_window) */
	const char *out_path;         /* the certificate file to create */
};

/* The whole certify command: load the identity key (77, 66, 65 as ctl_certify_load_key), read
 * the signing key's verifier (64 when neither or both are given, 65 when the verifier does not
 * parse, the key file's failures otherwise), issue and write the certificate. On success
 * *certificate gets its fields and note (an initialised buffer) the signed note. Returns 0 or a
 * negative error with the failure in report. Refuses before signing when out_path exists (73). */
int ctl_certify_run(const struct ctl_certify_options *options, struct certificate *certificate,
                    struct buffer *note, struct ctl_report *report);

struct ctl_rotate_options {
	const char *identity_path; /* the identity key file */
	const char *name;          /* the authority name: must be the identity key's */
	const char *key_out;       /* the new signing key file to create (0600) */
	const char *cert_out;      /* the new certificate file to create (0644) */
	const char *previous_path; /* the certificate of the signing key being replaced */
	uint64_t valid_after;      /* start of the new window, unix seconds */
	uint64_t days;             /* length of the new window in days, ≥ 1 */
	int allow_gap;             /* accept a new window that starts after the previous one ended */
};

struct ctl_rotate_result {
	struct certificate previous;
	struct certificate certificate;
	char verifier[NOTE_VERIFIER_KEY_MAX + 1]; /* the new signing key's verifier */
	uint64_t overlap_seconds; /* both keys valid: [new valid-after, previous valid-until) */
	uint64_t gap_seconds;     /* no key valid (only with allow_gap) */
};

/* The whole rotate command. Refuses, with the failure in report: a name that is not the identity
 * key's (65); a previous certificate that is missing (66), malformed or not signed by its
 * identity (65), or issued by another identity key or for another authority (65); a new window
 * starting after the previous certificate's valid-until (DIRAUTH_ERR_REFUSED, 65, "gap") unless
 * allow_gap; a new window ending no later than the previous one (DIRAUTH_ERR_REFUSED, 65); an existing
 * key_out or cert_out (73, before anything is generated); a window that ctl_certify_window refuses (64). On
 * success the new key file and certificate file exist and *result is filled; if the certificate cannot be
 * written the new key file is removed again. */
int ctl_rotate_run(const struct ctl_rotate_options *options, struct ctl_rotate_result *result,
                   struct ctl_report *report);

/* One certificate of a file shown by certificate show. */
struct ctl_certificate_entry {
	struct certificate certificate;
	int verified;          /* the note parses and its identity key signed it */
	int error;             /* why not, when not verified (a dirauth_error) */
	int pinned;            /* the trust bundle given pins its identity key exactly */
	char description[128]; /* "valid now", "expired ...", "not yet valid ..." */
};

struct ctl_certificate_listing {
	int is_bundle; /* the file is a certificate bundle ("dirauth certificates v1") */
	size_t count;
	struct ctl_certificate_entry entries[CERTIFICATE_BUNDLE_MAX];
};

/* certificate show: reads path (a signed certificate note, or a certificate bundle, at most
 * CERTIFICATE_BUNDLE_MAX_BYTES), parses and verifies each certificate's identity signature and
 * judges its window at now; with a trust bundle (may be NULL), whether it pins each identity.
 * Returns 0 when every certificate verified (and, with a bundle, is pinned); otherwise the
 * listing is still filled as far as it could be and the first failure is in report: 66 missing
 * file, 74 unreadable, 65 for a malformed file, a certificate whose signature does not verify
 * or whose identity the trust bundle does not pin. */
int ctl_certificate_show(const char *path, const struct trust_bundle *bundle, uint64_t now,
                         struct ctl_certificate_listing *listing, struct ctl_report *report);

#endif
