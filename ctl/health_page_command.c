/*
 * health_page_command.c: the command line of dirauthctl health-page (health_page.h): its options
 * read, the page gathered, judged and written atomically, each warning said on stderr.
 */
#include "ctl/command_bodies.h"
#include "ctl/files.h"
#include "ctl/health_page.h"

#include "base/error.h"
#include "verify/snapshot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COMMAND "health-page"

/* Writes page to path by a temporary file in its directory and a rename. */
static int write_page(const char *path, const struct buffer *page, struct ctl_report *report)
{
	char directory[4096];
	const char *slash = strrchr(path, '/');
	const char *name = slash ? slash + 1 : path;
	if (!*name || strlen(path) >= sizeof directory) {
		ctl_report_fail(report, CTL_EXIT_USAGE, COMMAND ": --out %s: not a file name", path);
		return -1;
	}
	if (!slash)
		snprintf(directory, sizeof directory, ".");
	else if (slash == path)
		snprintf(directory, sizeof directory, "/");
	else
		snprintf(directory, sizeof directory, "%.*s", (int)(slash - path), path);
	int rc = ctl_file_write_atomic(directory, name, page->data, page->len);
	if (rc != 0) {
		ctl_report_fail(report, CTL_EXIT_CANNOT_CREATE, COMMAND ": %s: cannot write: %s", path,
		                dirauth_strerror(rc));
		return -1;
	}
	return 0;
}

int ctl_command_health_page(const struct ctl_arguments *arguments, struct ctl_report *report)
{
	struct trust_bundle *bundle = NULL;
	struct ctl_health_observation *observation = NULL;
	struct ctl_health_warnings *warnings = NULL;
	struct ctl_health_request request = {0};
	struct ctl_log_pins log;
	struct buffer page;
	uint64_t epochs = CTL_HEALTH_EPOCHS_DEFAULT, skew = VERIFY_DEFAULT_CLOCK_SKEW;
	int status;

	buffer_init(&page);
	if (ctl_command_check_servers(COMMAND, &arguments->servers, CTL_HEALTH_SERVERS_MAX, report) != 0 ||
	    ctl_command_check_namespace_name(COMMAND, arguments->namespace_name, report) != 0 ||
	    ctl_command_parse_decimal_option(COMMAND, "--epochs", arguments->epochs_text, 1,
	                                     CTL_HEALTH_EPOCHS_MAX, 0, &epochs, report) != 0 ||
	    ctl_command_parse_decimal_option(COMMAND, "--clock-skew", arguments->clock_skew_text, 0,
	                                     86400 * 365, 0, &skew, report) != 0 ||
	    ctl_command_read_clock(COMMAND, arguments->now_text, &request.now, report) != 0 ||
	    ctl_command_load_bundle(COMMAND, arguments->trust, &bundle, report) != 0 ||
	    ctl_command_parse_log_pins(COMMAND, arguments, bundle, &log, report) != 0)
		goto failed;
	if (!trust_bundle_namespace(bundle, arguments->namespace_name)) {
		ctl_report_fail(report, CTL_EXIT_CONFIG, COMMAND ": namespace %s is not in the trust bundle",
		                arguments->namespace_name);
		goto failed;
	}
	observation = calloc(1, sizeof *observation);
	warnings = calloc(1, sizeof *warnings);
	if (!observation || !warnings) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, COMMAND ": out of memory");
		goto failed;
	}
	request.bundle = bundle;
	request.namespace_name = arguments->namespace_name;
	request.servers = arguments->servers.values;
	request.server_count = arguments->servers.count;
	request.epochs = (size_t)epochs;
	request.now_given = arguments->now_text != NULL;
	request.clock_skew_limit = skew;
	request.log = &log;
	if (ctl_health_gather(&request, observation, report) != 0)
		goto failed;
	ctl_health_check(observation, warnings);
	if (ctl_health_page_write(observation, warnings, &page) != 0) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, COMMAND ": out of memory");
		goto failed;
	}
	if (write_page(arguments->out, &page, report) != 0)
		goto failed;
	for (size_t i = 0; i < warnings->count; i++) {
		const struct ctl_health_warning *w = &warnings->items[i];
		fprintf(stderr, "dirauthctl: " COMMAND ": %s %s: %s\n", ctl_health_severity_name(w->severity),
		        w->check, w->text);
	}
	if (warnings->dropped)
		fprintf(stderr, "dirauthctl: " COMMAND ": %zu more warnings not listed\n", warnings->dropped);
	status = ctl_health_exit_status(warnings);
	printf("%s: %zu warnings, latest epoch %llu\n", arguments->out, warnings->count + warnings->dropped,
	       (unsigned long long)observation->latest.epoch);
	goto done;
failed:
	status = report->exit_code ? report->exit_code : CTL_EXIT_SOFTWARE;
done:
	buffer_free(&page);
	free(observation);
	free(warnings);
	free(bundle);
	return status;
}
