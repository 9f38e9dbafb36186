/*
 * capability.h: the bearer secret of a private namespace, as dirauthctl makes and presents it
 * (docs/operating.md, "Private namespaces"; docs/dirauthctl.md, "capability new").
 *
 * An authority serves a private namespace only to requests carrying `Authorization: Bearer
 * <secret>`; its configuration holds only the secret's SHA-256. `dirauthctl capability new`
 * writes a new secret (32 random bytes in base64, one line) to a new file of mode 0600 and prints
 * the lines an operator puts under the namespace in dirauthd.yaml. `dirauthctl fetch
 * --capability-file FILE` reads such a file and sends the header on every request for the
 * namespace's routes (never to /v1/certificates).
 *
 * The secret is 16 to 256 bytes of [A-Za-z0-9-._~+/=]; its file holds it and at most one final
 * newline.
 */
#ifndef DIRAUTH_CTL_CAPABILITY_H
#define DIRAUTH_CTL_CAPABILITY_H

#include "ctl/report.h"

#include <stddef.h>

#define CTL_CAPABILITY_MIN    16
#define CTL_CAPABILITY_MAX    256
#define CTL_CAPABILITY_BYTES  32 /* random bytes in a new secret */
/* "Authorization: Bearer " and the longest secret, with its NUL. */
#define CTL_AUTHORIZATION_MAX (22 + CTL_CAPABILITY_MAX + 1)

/* Reads the secret in the file at path and writes "Authorization: Bearer <secret>" to
 * authorization (CTL_AUTHORIZATION_MAX bytes). Returns 0, or a negative error with the failure
 * in report ("<what>: --capability-file PATH: ..."): 66 no such file, 77 not readable, 65 not
 * one secret of the alphabet and length above, 74 another read failure. Every other copy of the
 * secret is wiped; the caller wipes authorization. */
int ctl_capability_read(const char *what, const char *path, char authorization[CTL_AUTHORIZATION_MAX],
                        struct ctl_report *report);

/* Writes a new secret to the new file out_path (mode 0600, never over an existing file) and its
 * SHA-256 in lower-case hex to sha256_hex. Returns 0, or a negative error with the failure in
 * report: 73 when the file exists or cannot be created, 70 without the random source. */
int ctl_capability_new(const char *out_path, char sha256_hex[65], struct ctl_report *report);

/* `dirauthctl capability new --out FILE` (argv[0] is "capability"; the words after "new" are read
 * by ctl_command_run, ctl/command.h): ctl_capability_new, then the configuration lines on stdout.
 * Returns the exit status, the failure in report. */
int ctl_capability_command(int argc, char **argv, struct ctl_report *report);

#endif
