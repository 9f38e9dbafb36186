/*
 * keygen.h: dirauthctl keygen and identity-keygen, a new Ed25519 key for a provider, an
 * authority's online signing key, or an authority's offline identity key.
 *
 * The private key goes to a new file only (mode 0600, never over an existing file: a key
 * silently replaced is an identity lost); the public verifier key is what the user passes on to
 * the authorities' operators, so it is returned for printing.
 */
#ifndef DIRAUTH_CTL_KEYGEN_H
#define DIRAUTH_CTL_KEYGEN_H

#include "schema/note.h"
#include "ctl/report.h"

/* Generates a key called name and saves it to out_path; verifier gets its verifier-key string.
 * Returns 0, or a negative error with the failure in report: 64 for a name that is not a valid
 * key name, 73 when the file exists or cannot be created, 70 for a crypto failure. */
int ctl_keygen_run(const char *name, const char *out_path, char verifier[NOTE_VERIFIER_KEY_MAX + 1],
                   struct ctl_report *report);

/* ctl_keygen_run for an authority's offline identity key (failures say "identity-keygen"). The
 * key file is the same format; what differs is where it lives: on an offline machine, used only
 * by certify and rotate to sign key certificates, its verifier pinned in trust bundles. */
int ctl_identity_keygen_run(const char *name, const char *out_path, char verifier[NOTE_VERIFIER_KEY_MAX + 1],
                            struct ctl_report *report);

#endif
