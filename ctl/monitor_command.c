/*
 * monitor_command.c: dirauthctl monitor's command line and its loop (see monitor.h): the words
 * read through the one table parser (command.h), the trust bundle and the log's pins loaded
 * once, then one round (ctl_monitor_round_run, monitor.c) after another, every --every seconds
 * give or take a tenth, until a stop is asked for.
 *
 * Each round prints its one line on stdout and its failures on stderr; the exit status is the
 * worst seen over all rounds: misbehaviour found, else something left unchecked, else 0.
 */
#include "ctl/monitor.h"

#include "ctl/command.h"
#include "ctl/command_bodies.h"
#include "ctl/trust_file.h"
#include "net/pool.h"
#include "schema/encoding.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char monitor_usage[] =
    "usage: dirauthctl monitor --trust BUNDLE --source URL [--source URL ...]\n"
    "                          [--log-key VKEY ... [--witness-key VKEY ...] [--witness-threshold K]]\n"
    "                          [--state DIR] [--evidence-dir DIR] [--every SECONDS]\n"
    "\n"
    "Watches the authorities and mirrors given as sources: verifies every snapshot header they\n"
    "publish, checks that it is in the log (with --log-key), that every checkpoint is consistent\n"
    "with the one kept in DIR, that no two headers exist for one epoch, and reads the evidence\n"
    "the authorities keep. Any contradiction is written as an evidence file (dirauthctl\n"
    "verify-evidence checks it). Prints one line per round.\n"
    "\n"
    "  --trust BUNDLE          the trust bundle (namespaces, authorities, threshold)\n"
    "  --source URL            an authority or mirror (repeat, at most 16)\n"
    "  --log-key VKEY          a log key of the namespaces' log (repeat, one per authority)\n"
    "  --witness-key VKEY      a cosignature key (repeat); --witness-threshold K of them must\n"
    "                          have cosigned (default: the trust bundle's threshold)\n"
    "  --state DIR             where the checkpoints and headers seen are kept (default: .)\n"
    "  --evidence-dir DIR      where evidence files are written (default: DIR/evidence)\n"
    "  --every SECONDS         run a round every SECONDS (+-10%) until SIGTERM\n"
    "\n"
    "exit status: 0 nothing found, 3 misbehaviour found (evidence written), 1 something could\n"
    "not be checked, 64 usage, 66/74/78 the trust bundle, 78 unusable --log-key pins.\n";

/* Its body is ctl_monitor_command's own, which takes the stop flag besides the arguments. */
static const struct ctl_command monitor_command = {
    .name = "monitor",
    .usage = monitor_usage,
    .options = {CTL_REQUIRED(CTL_OPTION_TRUST), CTL_REQUIRED(CTL_OPTION_SOURCE), CTL_OPTION_LOG_KEY,
                CTL_OPTION_WITNESS_KEY, CTL_OPTION_WITNESS_THRESHOLD, CTL_OPTION_STATE,
                CTL_OPTION_EVIDENCE_DIR, CTL_OPTION_EVERY},
};

int ctl_monitor_command(int argc, char **argv, const volatile sig_atomic_t *stop, struct ctl_report *report)
{
	struct ctl_arguments a;
	struct ctl_monitor_options options;
	struct ctl_monitor_round *round = NULL;
	struct trust_bundle *bundle = NULL;
	struct ctl_log_pins pins;
	const struct ctl_argument_list *sources = &a.sources;
	uint64_t every = 0;
	int exit_code = CTL_EXIT_OK, found = 0, unchecked = 0;

	memset(&options, 0, sizeof options);
	if (ctl_command_read(&monitor_command, argc, argv, &a, report) != 0)
		return report->exit_code;
	for (size_t i = 0; i < sources->count; i++) {
		if (strncmp(sources->values[i], "http://", 7) != 0 &&
		    strncmp(sources->values[i], "https://", 8) != 0) {
			ctl_report_fail(report, CTL_EXIT_USAGE,
			                "monitor: --source '%.64s' is not an http(s) URL",
			                sources->values[i]);
			return report->exit_code;
		}
	}
	if (ctl_command_urls_distinct("monitor", "--source", sources, report) != 0)
		return report->exit_code;
	if (a.every_text != NULL && (decimal_parse(a.every_text, strlen(a.every_text), &every) != 0 ||
	                             every == 0 || every > 7 * 24 * 3600)) {
		ctl_report_fail(report, CTL_EXIT_USAGE, "monitor: --every: expected seconds, 1 to 604800");
		return report->exit_code;
	}
	bundle = malloc(sizeof *bundle);
	round = malloc(sizeof *round);
	if (bundle == NULL || round == NULL) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "monitor: out of memory");
		exit_code = report->exit_code;
		goto done;
	}
	if (ctl_trust_bundle_load(a.trust, bundle, report) != 0 ||
	    ctl_log_pins_parse("monitor", a.log_keys.values, a.log_keys.count, a.witness_keys.values,
	                       a.witness_keys.count, a.witness_threshold_text, bundle->threshold, &pins,
	                       report) != 0) {
		exit_code = report->exit_code;
		goto done;
	}
	options.bundle = bundle;
	options.sources = sources->values;
	options.source_count = sources->count;
	options.pins = &pins;
	options.state_dir = a.state != NULL ? a.state : ".";
	options.evidence_dir = a.evidence_dir;
	/* Every round's requests to the sources share kept-alive connections. */
	if (net_pool_new(NULL, &options.pool) != 0)
		options.pool = NULL;
	for (;;) {
		int outcome = ctl_monitor_round_run(&options, round);
		for (size_t i = 0; i < round->failure_count && i < CTL_MONITOR_FAILURES_MAX; i++)
			fprintf(stderr, "dirauthctl: %s\n", round->failures[i]);
		if (round->failure_count > CTL_MONITOR_FAILURES_MAX)
			fprintf(stderr, "dirauthctl: monitor: and %zu more failures\n",
			        round->failure_count - CTL_MONITOR_FAILURES_MAX);
		printf("%s\n", round->line);
		fflush(stdout);
		found |= outcome == CTL_MONITOR_EXIT_FOUND;
		unchecked |= outcome == CTL_MONITOR_EXIT_UNCHECKED;
		if (every == 0 || *stop)
			break;
		ctl_command_sleep(every, stop);
		if (*stop)
			break;
	}
	exit_code = found ? CTL_MONITOR_EXIT_FOUND : unchecked ? CTL_MONITOR_EXIT_UNCHECKED : CTL_EXIT_OK;
done:
	net_pool_free(options.pool);
	free(bundle);
	free(round);
	return exit_code;
}
