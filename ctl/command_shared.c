/*
 * command_shared.c: what several of dirauthctl's command bodies check and read alike: the
 * --server list, decimals and namespace names, the clock (or --now), the trust bundle, the log's
 * pins, and the stop signals of the commands that loop.
 *
 * A refusal here is worded once, "<command>: <option>: <why>", with the usage status, so that
 * two commands refuse the same mistake in the same words.
 */
#include "ctl/command_bodies.h"

#include "ctl/trust_file.h"
#include "crypto/crypto.h"
#include "schema/lines.h"
#include "schema/names.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* At most maximum --server URLs, none given twice. */
int ctl_command_check_servers(const char *command, const struct ctl_argument_list *servers, size_t maximum,
                              struct ctl_report *report)
{
	if (servers->count > maximum) {
		ctl_report_fail(report, CTL_EXIT_USAGE, "%s: --server: at most %zu servers", command,
		                maximum);
		return -1;
	}
	return ctl_command_urls_distinct(command, "--server", servers, report);
}

/* message without its leading "<prefix>: ", when it has one. */
const char *ctl_command_without_prefix(const char *message, const char *prefix)
{
	size_t len = strlen(prefix);
	if (strncmp(message, prefix, len) == 0 && message[len] == ':' && message[len + 1] == ' ')
		return message + len + 2;
	return message;
}

/* A canonical decimal into *out: 0, or -1 (and *out unspecified). */
int ctl_command_parse_decimal(const char *text, uint64_t *out)
{
	struct text_span span = {text, strlen(text)};
	return text_parse_u64(span, out);
}

/* A decimal option in [minimum, maximum]; absent leaves *out. The refusal says "expected a decimal
 * from minimum to maximum", or with say_at_least "expected a decimal of at least minimum". */
int ctl_command_parse_decimal_option(const char *command, const char *option, const char *text,
                                     uint64_t minimum, uint64_t maximum, int say_at_least, uint64_t *out,
                                     struct ctl_report *report)
{
	uint64_t value;

	if (text == NULL)
		return 0;
	if (ctl_command_parse_decimal(text, &value) == 0 && value >= minimum && value <= maximum) {
		*out = value;
		return 0;
	}
	if (say_at_least)
		ctl_report_fail(report, CTL_EXIT_USAGE, "%s: %s: expected a decimal of at least %" PRIu64,
		                command, option, minimum);
	else
		ctl_report_fail(report, CTL_EXIT_USAGE,
		                "%s: %s: expected a decimal from %" PRIu64 " to %" PRIu64, command, option,
		                minimum, maximum);
	return -1;
}

/* A --namespace that is a namespace name. */
int ctl_command_check_namespace_name(const char *command, const char *name, struct ctl_report *report)
{
	struct text_span span = {name, strlen(name)};

	if (text_is_name(span, NAMESPACE_NAME_MAX))
		return 0;
	ctl_report_fail(report, CTL_EXIT_USAGE, "%s: --namespace: '%.64s' is not a namespace name", command,
	                name);
	return -1;
}

int ctl_command_read_clock(const char *command, const char *now_text, uint64_t *now,
                           struct ctl_report *report)
{
	time_t seconds;

	if (now_text != NULL) {
		if (ctl_command_parse_decimal(now_text, now) != 0) {
			ctl_report_fail(report, CTL_EXIT_USAGE, "%s: --now: expected unix seconds", command);
			return -1;
		}
		return 0;
	}
	seconds = time(NULL);
	if (seconds < 0) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "%s: cannot read the clock", command);
		return -1;
	}
	*now = (uint64_t)seconds;
	return 0;
}

/* The trust bundle at path into a new allocation (*out, for the caller to free; it is large, fixed
 * arrays, and kept off the stack). */
int ctl_command_load_bundle(const char *command, const char *path, struct trust_bundle **out,
                            struct ctl_report *report)
{
	*out = malloc(sizeof(**out));
	if (*out == NULL) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "%s: out of memory", command);
		return -1;
	}
	return ctl_trust_bundle_load(path, *out, report);
}

/* The log's pins (ctl/proof.h) from --log-key, --witness-key and --witness-threshold. */
int ctl_command_parse_log_pins(const char *command, const struct ctl_arguments *arguments,
                               const struct trust_bundle *bundle, struct ctl_log_pins *pins,
                               struct ctl_report *report)
{
	return ctl_log_pins_parse(command, arguments->log_keys.values, arguments->log_keys.count,
	                          arguments->witness_keys.values, arguments->witness_keys.count,
	                          arguments->witness_threshold_text, bundle->threshold, pins, report);
}

/* Set by SIGINT and SIGTERM once ctl_command_catch_stop_signals ran: the loop that watches it
 * ends after the current round. */
static volatile sig_atomic_t stop_requested;

static void request_stop(int signal_number)
{
	(void)signal_number;
	stop_requested = 1;
}

volatile sig_atomic_t *ctl_command_catch_stop_signals(void)
{
	struct sigaction action;

	memset(&action, 0, sizeof(action));
	action.sa_handler = request_stop;
	sigemptyset(&action.sa_mask);
	sigaction(SIGINT, &action, NULL);
	sigaction(SIGTERM, &action, NULL);
	return &stop_requested;
}

void ctl_command_sleep(uint64_t seconds, const volatile sig_atomic_t *stop)
{
	uint32_t random = 0;
	uint64_t ms = seconds * 1000;
	if (crypto_random((uint8_t *)&random, sizeof random) == 0 && ms >= 10)
		ms = ms - ms / 10 + (uint64_t)random % (ms / 5 + 1);
	for (uint64_t slept = 0; slept < ms && !*stop; slept += 100) {
		struct timespec step = {0, 100 * 1000 * 1000};
		nanosleep(&step, NULL);
	}
}
