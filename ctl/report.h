/*
 * report.h: how dirauthctl says what went wrong, and with which exit status.
 *
 * Every command ends in exactly one outcome. A failure is one line on stderr,
 * "dirauthctl: <what>: <why>", and a sysexits(3) status a script can branch on: 64 usage,
 * 65 bad data (including every verification failure), 66 missing input, 69 server unavailable,
 * 70 internal, 73 cannot create output, 74 I/O, 75 try again later (a snapshot offered is stale;
 * fewer authorities accepted a registration than the trust bundle's threshold), 76 the server
 * refused, 77 permission, 78 bad configuration. The functions below keep that outcome in one struct that the
 * command code fills at the place where it knows best what failed, and that main prints once. Keeping the
 * message and the status together means a test can check both without running the program.
 */
#ifndef DIRAUTH_CTL_REPORT_H
#define DIRAUTH_CTL_REPORT_H

#include <stdint.h>
#include <stdio.h>

#define CTL_REPORT_MAX 1024

/* The sysexits(3) values dirauthctl uses, spelled out so that the program does not depend on a
 * BSD header for its interface. */
enum ctl_exit {
	CTL_EXIT_OK = 0,
	CTL_EXIT_USAGE = 64,
	CTL_EXIT_DATA = 65,
	CTL_EXIT_NO_INPUT = 66,
	CTL_EXIT_UNAVAILABLE = 69,
	CTL_EXIT_SOFTWARE = 70,
	CTL_EXIT_CANNOT_CREATE = 73,
	CTL_EXIT_IO = 74,
	CTL_EXIT_TEMPFAIL = 75,
	CTL_EXIT_PROTOCOL = 76,
	CTL_EXIT_PERMISSION = 77,
	CTL_EXIT_CONFIG = 78,
};

struct ctl_report {
	int exit_code;                /* an enum ctl_exit; CTL_EXIT_OK while nothing failed */
	char message[CTL_REPORT_MAX]; /* "<what>: <why>", without the program name */
};

/* Clears the report to "nothing failed". Never fails. */
void ctl_report_init(struct ctl_report *report);

/* Records a failure: the exit status and the formatted message (truncated to fit). Only the
 * first failure recorded is kept, because it is the cause and later ones are consequences.
 * Accepts a NULL report (the failure is then not recorded anywhere). */
void ctl_report_fail(struct ctl_report *report, int exit_code, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* True when a failure was recorded. */
int ctl_report_failed(const struct ctl_report *report);

/* Prints "dirauthctl: <message>\n" to stream when a failure was recorded. */
void ctl_report_print(const struct ctl_report *report, FILE *stream);

/* The usual exit status for a project error code (base/error.h) when nothing more precise is
 * known: syntax, bounds, signature and mismatch errors are bad data (65), a missing file is 66,
 * unavailable is 69, I/O is 74, permission is 77, config is 78, everything else is 70. */
int ctl_exit_code_for_error(int rc);

#endif
