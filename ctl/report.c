/*
 * report.c: the single failure record of a dirauthctl command (see report.h).
 */
#include "ctl/report.h"

#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void ctl_report_init(struct ctl_report *report)
{
	report->exit_code = CTL_EXIT_OK;
	report->message[0] = '\0';
}

void ctl_report_fail(struct ctl_report *report, int exit_code, const char *format, ...)
{
	va_list args;

	if (report == NULL || report->exit_code != CTL_EXIT_OK)
		return;
	report->exit_code = exit_code == CTL_EXIT_OK ? CTL_EXIT_SOFTWARE : exit_code;
	va_start(args, format);
	vsnprintf(report->message, sizeof(report->message), format, args);
	va_end(args);
	/* One line means one line: a newline from a server's text must not start a second one. */
	for (char *p = report->message; *p != '\0'; p++) {
		if ((unsigned char)*p < 0x20 || (unsigned char)*p == 0x7f)
			*p = ' ';
	}
}

int ctl_report_failed(const struct ctl_report *report)
{
	return report->exit_code != CTL_EXIT_OK;
}

void ctl_report_print(const struct ctl_report *report, FILE *stream)
{
	if (ctl_report_failed(report))
		fprintf(stream, "dirauthctl: %s\n", report->message);
}

int ctl_exit_code_for_error(int rc)
{
	switch (rc) {
	case DIRAUTH_OK:
		return CTL_EXIT_OK;
	case DIRAUTH_ERR_SYNTAX:
	case DIRAUTH_ERR_BOUNDS:
	case DIRAUTH_ERR_SIGNATURE:
	case DIRAUTH_ERR_UNKNOWN_KEY:
	case DIRAUTH_ERR_THRESHOLD:
	case DIRAUTH_ERR_ROLLBACK:
	case DIRAUTH_ERR_MISMATCH:
	case DIRAUTH_ERR_STALE:
	case DIRAUTH_ERR_PROOF:
	case DIRAUTH_ERR_COLLISION:
		return CTL_EXIT_DATA;
	case DIRAUTH_ERR_NOT_FOUND:
		return CTL_EXIT_NO_INPUT;
	case DIRAUTH_ERR_UNAVAILABLE:
		return CTL_EXIT_UNAVAILABLE;
	case DIRAUTH_ERR_IO:
		return CTL_EXIT_IO;
	case DIRAUTH_ERR_EXISTS:
		return CTL_EXIT_CANNOT_CREATE;
	case DIRAUTH_ERR_PERMISSION:
		return CTL_EXIT_PERMISSION;
	case DIRAUTH_ERR_CONFIG:
		return CTL_EXIT_CONFIG;
	case DIRAUTH_ERR_REFUSED:
		return CTL_EXIT_PROTOCOL;
	default:
		return CTL_EXIT_SOFTWARE;
	}
}
