/*
 * dirauthctl_main.c: the dirauthctl program: argument parsing and output, nothing else.
 *
 * Each command's work lives in its own module (keygen.h, register.h, fetch.h) and reports its
 * outcome in a struct ctl_report; this file turns command lines into calls, prints what
 * succeeded on stdout and the one failure line on stderr, and exits with the report's
 * sysexits status. The clock is read here, once, and passed down (or taken from --now).
 */
#include "error.h"
#include "fetch.h"
#include "keygen.h"
#include "lines.h"
#include "register.h"
#include "report.h"
#include "trust_file.h"

#include <curl/curl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char main_usage[] =
    "usage: dirauthctl COMMAND [OPTIONS]\n"
    "\n"
    "commands:\n"
    "  keygen    create a signing key file and print its verifier key\n"
    "  register  sign a YAML service description and submit it to an authority\n"
    "  fetch     download, verify and store the latest snapshot of a namespace\n"
    "\n"
    "dirauthctl COMMAND --help shows the options of a command.\n"
    "exit status: 0 ok, 64 usage, 65 bad or unverifiable data, 66 missing input, 69 server\n"
    "unavailable, 70 internal error, 73 cannot create output, 74 I/O error, 76 refused by the\n"
    "server, 77 unsafe key file permissions, 78 bad trust bundle.\n";

static const char keygen_usage[] =
    "usage: dirauthctl keygen --name NAME --out FILE\n"
    "\n"
    "Generates an Ed25519 key called NAME, writes it to FILE (created, mode 0600, never\n"
    "overwritten) and prints its verifier key (NAME+KEYID+BASE64) on stdout.\n"
    "\n"
    "  --name NAME   key name (printable, no spaces or '+')\n"
    "  --out FILE    the private key file to create\n";

static const char register_usage[] =
    "usage: dirauthctl register --key FILE --service SERVICE.yaml (--server URL | --dry-run)\n"
    "                           [--trust BUNDLE] [--verbose] [--now SECONDS]\n"
    "\n"
    "Builds the registration described by SERVICE.yaml, signs it with the provider key FILE and\n"
    "posts it to URL/v1/registrations; checks the receipt the authority returns.\n"
    "\n"
    "  --key FILE          the provider's private key (mode 0600)\n"
    "  --service FILE      the YAML service description\n"
    "  --server URL        the authority, e.g. http://127.0.0.1:8080\n"
    "  --dry-run           print the signed registration note and stop\n"
    "  --trust BUNDLE      verify the receipt's signature against this trust bundle\n"
    "  --verbose           also print the receipt note\n"
    "  --now SECONDS       use this unix time instead of the clock\n";

static const char fetch_usage[] =
    "usage: dirauthctl fetch --trust BUNDLE --server URL --namespace NS [--out DIR] [--now SECONDS]\n"
    "\n"
    "Downloads the latest snapshot of NS, verifies it against the trust bundle (threshold\n"
    "signatures, namespace and origin, freshness, bounds, no rollback or equivocation against the\n"
    "header held in DIR/NS, the body's digest, root and every record's signature), then writes\n"
    "DIR/NS/EPOCH.header, DIR/NS/EPOCH.body and DIR/NS/latest.header.\n"
    "\n"
    "  --trust BUNDLE      the trust bundle (authorities, threshold, namespaces, bounds)\n"
    "  --server URL        the authority or mirror, e.g. http://127.0.0.1:8080\n"
    "  --namespace NS      the namespace to fetch\n"
    "  --out DIR           the mirror directory (default ./mirror)\n"
    "  --now SECONDS       use this unix time instead of the clock\n";

enum option_id {
	OPTION_HELP = 'h',
	OPTION_NAME = 256,
	OPTION_OUT,
	OPTION_KEY,
	OPTION_SERVICE,
	OPTION_SERVER,
	OPTION_DRY_RUN,
	OPTION_TRUST,
	OPTION_VERBOSE,
	OPTION_NOW,
	OPTION_NAMESPACE,
};

/* Parsed command line of any command; each command checks which of these it needs. */
struct arguments {
	const char *name;
	const char *out;
	const char *key;
	const char *service;
	const char *server;
	const char *trust;
	const char *namespace_name;
	const char *now_text;
	int dry_run;
	int verbose;
	int help;
};

static int parse_arguments(const char *command, int argc, char **argv, const struct option *options,
                           struct arguments *arguments, struct ctl_report *report)
{
	int option;

	memset(arguments, 0, sizeof(*arguments));
	opterr = 0;
	optind = 1;
	while ((option = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
		switch (option) {
		case OPTION_HELP:
			arguments->help = 1;
			break;
		case OPTION_NAME:
			arguments->name = optarg;
			break;
		case OPTION_OUT:
			arguments->out = optarg;
			break;
		case OPTION_KEY:
			arguments->key = optarg;
			break;
		case OPTION_SERVICE:
			arguments->service = optarg;
			break;
		case OPTION_SERVER:
			arguments->server = optarg;
			break;
		case OPTION_DRY_RUN:
			arguments->dry_run = 1;
			break;
		case OPTION_TRUST:
			arguments->trust = optarg;
			break;
		case OPTION_VERBOSE:
			arguments->verbose = 1;
			break;
		case OPTION_NOW:
			arguments->now_text = optarg;
			break;
		case OPTION_NAMESPACE:
			arguments->namespace_name = optarg;
			break;
		case ':':
			ctl_report_fail(report, CTL_EXIT_USAGE, "%s: option '%s' needs a value", command,
			                argv[optind - 1]);
			return -1;
		default:
			ctl_report_fail(report, CTL_EXIT_USAGE, "%s: unknown option '%s'", command,
			                argv[optind - 1]);
			return -1;
		}
	}
	if (optind < argc) {
		ctl_report_fail(report, CTL_EXIT_USAGE, "%s: unexpected argument '%s'", command,
		                argv[optind]);
		return -1;
	}
	return 0;
}

static int require(const char *command, const char *value, const char *option, struct ctl_report *report)
{
	if (value != NULL && value[0] != '\0')
		return 0;
	ctl_report_fail(report, CTL_EXIT_USAGE, "%s: %s is required (see dirauthctl %s --help)", command,
	                option, command);
	return -1;
}

static int read_clock(const char *command, const char *now_text, uint64_t *now, struct ctl_report *report)
{
	time_t seconds;

	if (now_text != NULL) {
		struct text_span span = {now_text, strlen(now_text)};
		if (text_parse_u64(span, now) != 0) {
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

static int command_keygen(int argc, char **argv, struct ctl_report *report)
{
	static const struct option options[] = {
	    {"name", required_argument, NULL, OPTION_NAME},
	    {"out", required_argument, NULL, OPTION_OUT},
	    {"help", no_argument, NULL, OPTION_HELP},
	    {NULL, 0, NULL, 0},
	};
	char verifier[NOTE_VERIFIER_KEY_MAX + 1];
	struct arguments arguments;

	if (parse_arguments("keygen", argc, argv, options, &arguments, report) != 0)
		return report->exit_code;
	if (arguments.help) {
		fputs(keygen_usage, stdout);
		return CTL_EXIT_OK;
	}
	if (require("keygen", arguments.name, "--name", report) != 0 ||
	    require("keygen", arguments.out, "--out", report) != 0)
		return report->exit_code;
	if (ctl_keygen_run(arguments.name, arguments.out, verifier, report) != 0)
		return report->exit_code;
	printf("%s\n", verifier);
	return CTL_EXIT_OK;
}

static int command_register(int argc, char **argv, struct ctl_report *report)
{
	static const struct option options[] = {
	    {"key", required_argument, NULL, OPTION_KEY},
	    {"service", required_argument, NULL, OPTION_SERVICE},
	    {"server", required_argument, NULL, OPTION_SERVER},
	    {"dry-run", no_argument, NULL, OPTION_DRY_RUN},
	    {"trust", required_argument, NULL, OPTION_TRUST},
	    {"verbose", no_argument, NULL, OPTION_VERBOSE},
	    {"now", required_argument, NULL, OPTION_NOW},
	    {"help", no_argument, NULL, OPTION_HELP},
	    {NULL, 0, NULL, 0},
	};
	struct ctl_register_options register_options;
	struct ctl_register_result result;
	struct arguments arguments;
	int exit_code;

	if (parse_arguments("register", argc, argv, options, &arguments, report) != 0)
		return report->exit_code;
	if (arguments.help) {
		fputs(register_usage, stdout);
		return CTL_EXIT_OK;
	}
	if (require("register", arguments.key, "--key", report) != 0 ||
	    require("register", arguments.service, "--service", report) != 0)
		return report->exit_code;
	if (!arguments.dry_run &&
	    require("register", arguments.server, "--server (or --dry-run)", report) != 0)
		return report->exit_code;
	memset(&register_options, 0, sizeof(register_options));
	register_options.key_path = arguments.key;
	register_options.service_path = arguments.service;
	register_options.server_url = arguments.server;
	register_options.trust_path = arguments.trust;
	register_options.dry_run = arguments.dry_run;
	if (read_clock("register", arguments.now_text, &register_options.now, report) != 0)
		return report->exit_code;

	ctl_register_result_init(&result);
	if (ctl_register_run(&register_options, &result, report) != 0) {
		exit_code = report->exit_code;
		goto done;
	}
	exit_code = CTL_EXIT_OK;
	if (arguments.dry_run) {
		fwrite(result.note.data, 1, result.note.len, stdout);
		goto done;
	}
	printf("accepted: service %s sequence %" PRIu64 ", published by epoch %" PRIu64
	       ", receipt signed by %s%s\n",
	       result.service_hex, result.sequence, result.receipt.publish_by_epoch, result.receipt_signer,
	       result.receipt_verified ? "" : " (signature not verified: no --trust)");
	if (arguments.verbose)
		fwrite(result.receipt_note.data, 1, result.receipt_note.len, stdout);
done:
	ctl_register_result_free(&result);
	return exit_code;
}

static int command_fetch(int argc, char **argv, struct ctl_report *report)
{
	static const struct option options[] = {
	    {"trust", required_argument, NULL, OPTION_TRUST},
	    {"server", required_argument, NULL, OPTION_SERVER},
	    {"namespace", required_argument, NULL, OPTION_NAMESPACE},
	    {"out", required_argument, NULL, OPTION_OUT},
	    {"now", required_argument, NULL, OPTION_NOW},
	    {"help", no_argument, NULL, OPTION_HELP},
	    {NULL, 0, NULL, 0},
	};
	struct ctl_fetch_options fetch_options;
	struct ctl_fetch_result result;
	struct trust_bundle *bundle = NULL;
	struct arguments arguments;
	struct text_span namespace_span;
	int exit_code;

	if (parse_arguments("fetch", argc, argv, options, &arguments, report) != 0)
		return report->exit_code;
	if (arguments.help) {
		fputs(fetch_usage, stdout);
		return CTL_EXIT_OK;
	}
	if (require("fetch", arguments.trust, "--trust", report) != 0 ||
	    require("fetch", arguments.server, "--server", report) != 0 ||
	    require("fetch", arguments.namespace_name, "--namespace", report) != 0)
		return report->exit_code;
	namespace_span.data = arguments.namespace_name;
	namespace_span.len = strlen(arguments.namespace_name);
	if (!text_is_name(namespace_span, NAMESPACE_NAME_MAX)) {
		ctl_report_fail(report, CTL_EXIT_USAGE, "fetch: --namespace: '%.64s' is not a namespace name",
		                arguments.namespace_name);
		return report->exit_code;
	}
	memset(&fetch_options, 0, sizeof(fetch_options));
	if (read_clock("fetch", arguments.now_text, &fetch_options.now, report) != 0)
		return report->exit_code;
	/* The bundle is large (fixed arrays); keep it off the stack. */
	bundle = malloc(sizeof(*bundle));
	if (bundle == NULL) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "fetch: out of memory");
		return report->exit_code;
	}
	exit_code = CTL_EXIT_OK;
	if (ctl_trust_bundle_load(arguments.trust, bundle, report) != 0) {
		exit_code = report->exit_code;
		goto done;
	}
	fetch_options.server_url = arguments.server;
	fetch_options.bundle = bundle;
	fetch_options.namespace_name = arguments.namespace_name;
	fetch_options.directory = arguments.out != NULL ? arguments.out : CTL_FETCH_DEFAULT_DIRECTORY;
	if (ctl_fetch_run(&fetch_options, &result, report) != 0) {
		exit_code = report->exit_code;
		goto done;
	}
	printf("verified snapshot %s epoch %" PRIu64 ": %" PRIu64
	       " records, signed by %zu of %zu authorities (%s)\n",
	       result.namespace_name, result.epoch, result.record_count, result.signer_count,
	       result.authority_count, result.signer_names);
done:
	free(bundle);
	return exit_code;
}

int main(int argc, char **argv)
{
	struct ctl_report report;
	const char *command;
	int exit_code;

	ctl_report_init(&report);
	if (argc < 2) {
		fprintf(stderr, "dirauthctl: missing command (see dirauthctl --help)\n");
		return CTL_EXIT_USAGE;
	}
	command = argv[1];
	if (strcmp(command, "--help") == 0 || strcmp(command, "-h") == 0 || strcmp(command, "help") == 0) {
		fputs(main_usage, stdout);
		return CTL_EXIT_OK;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		fprintf(stderr, "dirauthctl: cannot initialise libcurl\n");
		return CTL_EXIT_SOFTWARE;
	}
	if (strcmp(command, "keygen") == 0) {
		exit_code = command_keygen(argc - 1, argv + 1, &report);
	} else if (strcmp(command, "register") == 0) {
		exit_code = command_register(argc - 1, argv + 1, &report);
	} else if (strcmp(command, "fetch") == 0) {
		exit_code = command_fetch(argc - 1, argv + 1, &report);
	} else {
		ctl_report_fail(&report, CTL_EXIT_USAGE, "%.64s: unknown command (see dirauthctl --help)",
		                command);
		exit_code = report.exit_code;
	}
	ctl_report_print(&report, stderr);
	if (fflush(stdout) != 0 && exit_code == CTL_EXIT_OK) {
		fprintf(stderr, "dirauthctl: stdout: write failed\n");
		exit_code = CTL_EXIT_IO;
	}
	curl_global_cleanup();
	return exit_code;
}
