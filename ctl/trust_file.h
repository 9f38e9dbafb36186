/*
 * trust_file.h: loading the trust bundle a user names on the command line.
 *
 * The bundle is the root of trust of every verification dirauthctl makes, so a bundle that does
 * not parse is a configuration error (exit 78) reported with its line and what is wrong with
 * it, never a reason to go on with fewer checks.
 */
#ifndef DIRAUTH_CTL_TRUST_FILE_H
#define DIRAUTH_CTL_TRUST_FILE_H

#include "ctl/report.h"
#include "schema/trust_bundle.h"

/* Reads and parses the bundle at path into *out. On failure records in report: 66 when the file
 * is missing, 74 when it cannot be read (77 when it may not be), 78 when it is larger than
 * TRUST_BUNDLE_MAX_BYTES or does not parse, then as "trust bundle PATH:LINE: <what is wrong with
 * the line>" (trust_bundle_parse_explained); the file's refusals are ctl_file_read_reported's.
 * Returns 0 or the underlying error code. */
int ctl_trust_bundle_load(const char *path, struct trust_bundle *out, struct ctl_report *report);

#endif
