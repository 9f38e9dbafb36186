/*
 * command_snapshots.c: the bodies of dirauthctl's commands that read what the authorities
 * publish: fetch (ctl/fetch.h), the mirror's static tree (ctl/mirror.h), the transparency log's
 * proof and its offline verification (ctl/proof.h), and the monitor's entry (ctl/monitor.h).
 *
 * fetch tries the --server URLs in order until one serves a snapshot that verifies; nothing is
 * written before it does. The monitor's loop and its words are its module's own
 * (monitor_command.c); here it gets the stop signals.
 */
#include "ctl/command_bodies.h"

#include "ctl/capability.h"
#include "ctl/fetch.h"
#include "ctl/files.h"
#include "ctl/lookup.h"
#include "ctl/mirror.h"
#include "ctl/monitor.h"
#include "ctl/proof.h"
#include "crypto/crypto.h"
#include "base/error.h"
#include "verify/snapshot.h"
#include "verify/verify.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- fetch (ctl/fetch.h) ---- */

/* The summary of a stored snapshot; with several servers, which one served it. */
static void print_fetched(const struct ctl_fetch_result *result, const char *server_url)
{
	printf("verified snapshot %s epoch %" PRIu64 ": %" PRIu64
	       " records, signed by %zu of %zu authorities (%s)",
	       result->namespace_name, result->epoch, result->record_count, result->signer_count,
	       result->authority_count, result->signer_names);
	if (server_url != NULL)
		printf(", from %s", server_url);
	printf("\n");
	if (result->diff.used)
		printf("body: rebuilt from a diff of %zu bytes against the body of epoch %" PRIu64 "\n",
		       result->diff.bytes, result->diff.base_epoch);
	else if (result->diff.held)
		printf("body: the one held (the same snapshot), not fetched again\n");
	else if (result->diff.why[0] != '\0' && !result->diff.missing)
		printf("body: fetched whole (%s)\n", result->diff.why);
	if (result->log_checked) {
		printf("in the log: entry %" PRIu64 " of the checkpoint of size %" PRIu64
		       ", cosigned by %zu of %zu witnesses (%zu required), ",
		       result->log.index, result->log.tree_size, result->log.cosigned,
		       result->log.witness_count, result->log.quorum);
		if (result->log_had_held)
			printf("consistent with the held checkpoint of size %" PRIu64 "\n",
			       result->log_held_size);
		else
			printf("the first checkpoint held\n");
	}
	if (result->dropped_count > 0) {
		printf("dropped %zu older kept snapshot%s that still held what this one revokes (epoch%s",
		       result->dropped_count, result->dropped_count == 1 ? "" : "s",
		       result->dropped_count == 1 ? "" : "s");
		for (size_t i = 0; i < result->dropped_count && i < CTL_FETCH_DROPPED_MAX; i++)
			printf("%s%" PRIu64, i == 0 ? " " : ", ", result->dropped[i]);
		printf("%s)\n", result->dropped_count > CTL_FETCH_DROPPED_MAX ? ", ..." : "");
	}
}

/* fetch with several --server: one "skipped URL: why" line per server passed over, then the
 * summary of the snapshot stored, or the failure (in report). */
static int fetch_from_servers(const struct ctl_fetch_options *options,
                              const struct ctl_argument_list *servers, struct ctl_report *report)
{
	struct ctl_fetch_attempt *attempts = calloc(servers->count, sizeof(*attempts));
	struct ctl_fetch_result result;
	char what[NAMESPACE_NAME_MAX + 16];
	size_t attempt_count = 0;
	int rc;

	if (attempts == NULL) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "fetch: out of memory");
		return -1;
	}
	snprintf(what, sizeof(what), "fetch %s", options->namespace_name);
	rc = ctl_fetch_run_servers(options, servers->values, servers->count, attempts, &attempt_count,
	                           &result, report);
	for (size_t i = 0; i < attempt_count; i++) {
		if (attempts[i].exit_code != CTL_EXIT_OK)
			printf("skipped %s: %s\n", attempts[i].server_url,
			       ctl_command_without_prefix(attempts[i].message, what));
	}
	if (rc == 0)
		print_fetched(&result, attempts[attempt_count - 1].server_url);
	free(attempts);
	return rc;
}

/* What fetch and mirror read from their command lines alike: the checks' policy, the clock, the
 * trust bundle (*bundle, the caller frees it), the log's pins and, when given, the capability
 * (into authorization, which the caller wipes). Returns 0 or the report's status. */
struct fetch_command {
	struct ctl_fetch_options options;
	struct ctl_log_pins log_pins;
	struct verify_snapshot_policy policy;
	struct trust_bundle *bundle;
	char authorization[CTL_AUTHORIZATION_MAX];
};

static int fetch_command_read(const char *command, const struct ctl_arguments *arguments,
                              struct fetch_command *fetch, struct ctl_report *report)
{
	int rc;

	memset(fetch, 0, sizeof(*fetch));
	if (ctl_command_check_servers(command, &arguments->servers, CTL_FETCH_SERVERS_MAX, report) != 0 ||
	    ctl_command_check_namespace_name(command, arguments->namespace_name, report) != 0)
		return report->exit_code;
	verify_snapshot_policy_default(&fetch->policy);
	if (ctl_command_parse_decimal_option(command, "--clock-skew", arguments->clock_skew_text, 0,
	                                     UINT64_MAX, 0, &fetch->policy.clock_skew, report) != 0 ||
	    ctl_command_parse_decimal_option(command, "--max-validity", arguments->max_validity_text, 1,
	                                     UINT64_MAX, 0, &fetch->policy.max_validity, report) != 0 ||
	    ctl_command_parse_decimal_option(command, "--max-chain", arguments->max_chain_text, 1,
	                                     CTL_FETCH_MAX_CHAIN_LIMIT, 0, &fetch->policy.max_chain,
	                                     report) != 0)
		return report->exit_code;
	fetch->options.policy = &fetch->policy;
	if (ctl_command_read_clock(command, arguments->now_text, &fetch->options.now, report) != 0)
		return report->exit_code;
	rc = ctl_command_load_bundle(command, arguments->trust, &fetch->bundle, report);
	if (rc != 0)
		return report->exit_code;
	fetch->options.server_url = arguments->servers.values[0];
	fetch->options.bundle = fetch->bundle;
	fetch->options.namespace_name = arguments->namespace_name;
	fetch->options.directory = arguments->out != NULL ? arguments->out : CTL_FETCH_DEFAULT_DIRECTORY;
	/* The log is checked when a log key is given. */
	rc = ctl_command_parse_log_pins(command, arguments, fetch->bundle, &fetch->log_pins, report);
	if (rc != 0)
		return report->exit_code;
	fetch->options.log = &fetch->log_pins;
	if (arguments->capability_file != NULL) {
		rc = ctl_capability_read(command, arguments->capability_file, fetch->authorization, report);
		if (rc != 0)
			return report->exit_code;
		fetch->options.authorization = fetch->authorization;
	}
	return 0;
}

static void fetch_command_free(struct fetch_command *fetch)
{
	crypto_wipe(fetch->authorization, sizeof(fetch->authorization));
	free(fetch->bundle);
}

int ctl_command_fetch(const struct ctl_arguments *arguments, struct ctl_report *report)
{
	struct fetch_command fetch;
	struct ctl_fetch_result result;
	int rc;

	rc = fetch_command_read("fetch", arguments, &fetch, report);
	if (rc != 0)
		goto done;
	if (arguments->servers.count > 1) {
		rc = fetch_from_servers(&fetch.options, &arguments->servers, report);
		goto done;
	}
	rc = ctl_fetch_run(&fetch.options, &result, report);
	if (rc == 0)
		print_fetched(&result, NULL);
done:
	fetch_command_free(&fetch);
	return rc == 0 ? CTL_EXIT_OK : report->exit_code;
}

/* ---- lookup (ctl/lookup.h) ---- */

int ctl_command_lookup(const struct ctl_arguments *arguments, struct ctl_report *report)
{
	struct fetch_command fetch;
	struct ctl_lookup_options options;
	struct ctl_lookup_result result;
	int present = 0;
	int rc;

	memset(&result, 0, sizeof(result));
	rc = fetch_command_read("lookup", arguments, &fetch, report);
	if (rc != 0)
		goto done;
	memset(&options, 0, sizeof(options));
	if (ctl_lookup_parse_service(arguments->operand) != 0) {
		ctl_report_fail(report, CTL_EXIT_USAGE,
		                "lookup: SERVICE must be a service id of 64 lower-case hex digits");
		rc = -1;
		goto done;
	}
	options.bundle = fetch.options.bundle;
	options.namespace_name = arguments->namespace_name;
	options.server_url = arguments->servers.values[0];
	options.now = fetch.options.now;
	options.policy = fetch.options.policy;
	options.authorization = fetch.options.authorization;
	options.service_id = arguments->operand;
	rc = ctl_lookup_run(&options, &result, report);
	if (rc == 0)
		ctl_lookup_print(&result, stdout);
	present = result.view.present;
done:
	ctl_lookup_result_free(&result);
	fetch_command_free(&fetch);
	if (rc != 0)
		return report->exit_code;
	return present ? CTL_EXIT_OK : CTL_LOOKUP_EXIT_ABSENT;
}

/* ---- mirror (ctl/mirror.h) ---- */

int ctl_command_mirror(const struct ctl_arguments *arguments, struct ctl_report *report)
{
	struct ctl_mirror_options options;
	struct ctl_mirror_result result;
	struct ctl_fetch_attempt *attempts = NULL;
	struct fetch_command fetch;
	char what[NAMESPACE_NAME_MAX + 16];
	size_t attempt_count = 0;
	int rc;

	rc = fetch_command_read("mirror", arguments, &fetch, report);
	if (rc != 0)
		goto done;
	memset(&options, 0, sizeof(options));
	options.keep_epochs = CTL_MIRROR_KEEP_EPOCHS_DEFAULT;
	rc = ctl_command_parse_decimal_option("mirror", "--keep-epochs", arguments->keep_epochs_text, 1,
	                                      CTL_MIRROR_KEEP_EPOCHS_MAX, 0, &options.keep_epochs, report);
	if (rc != 0)
		goto done;
	attempts = calloc(arguments->servers.count, sizeof(*attempts));
	if (attempts == NULL) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "mirror: out of memory");
		rc = -1;
		goto done;
	}
	options.fetch = &fetch.options;
	options.server_urls = arguments->servers.values;
	options.server_count = arguments->servers.count;
	options.directory = arguments->out;
	rc = ctl_mirror_run(&options, attempts, &attempt_count, &result, report);
	snprintf(what, sizeof(what), "fetch %s", arguments->namespace_name);
	for (size_t i = 0; i < attempt_count; i++)
		if (attempts[i].exit_code != CTL_EXIT_OK)
			printf("skipped %s: %s\n", attempts[i].server_url,
			       ctl_command_without_prefix(attempts[i].message, what));
	if (rc != 0)
		goto done;
	print_fetched(&result.fetched, result.server_url);
	printf("mirrored %s epoch %" PRIu64 " into %s: %zu epoch%s written, log of %" PRIu64
	       " entries (%zu tile%s new), %zu epoch%s pruned",
	       arguments->namespace_name, result.fetched.epoch, arguments->out, result.epochs_written,
	       result.epochs_written == 1 ? "" : "s", result.tree_size, result.tiles_written,
	       result.tiles_written == 1 ? "" : "s", result.epochs_pruned,
	       result.epochs_pruned == 1 ? "" : "s");
	if (result.diffs_written > 0)
		printf(", %zu diff%s new", result.diffs_written, result.diffs_written == 1 ? "" : "s");
	if (result.record_epochs_written > 0)
		printf(", record shards of %zu epoch%s", result.record_epochs_written,
		       result.record_epochs_written == 1 ? "" : "s");
	if (result.bodies_dropped > 0)
		printf(", %zu bod%s dropped for what it revokes", result.bodies_dropped,
		       result.bodies_dropped == 1 ? "y" : "ies");
	printf("\n");
done:
	free(attempts);
	fetch_command_free(&fetch);
	return rc == 0 ? CTL_EXIT_OK : report->exit_code;
}

/* ---- the transparency log's proofs (ctl/proof.h) ---- */

int ctl_command_verify(const struct ctl_arguments *arguments, struct ctl_report *report)
{
	struct dirauth_proof_info *result = NULL;
	struct trust_bundle *bundle = NULL;
	struct ctl_log_pins pins;
	int rc;

	rc = ctl_command_load_bundle("verify", arguments->trust, &bundle, report);
	if (rc != 0)
		goto done;
	/* Large (fixed arrays); kept off the stack. */
	result = malloc(sizeof(*result));
	if (result == NULL) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "verify: out of memory");
		rc = -1;
		goto done;
	}
	rc = ctl_command_parse_log_pins("verify", arguments, bundle, &pins, report);
	if (rc == 0)
		rc = ctl_proof_verify_files(bundle, arguments->certificates, &pins, arguments->operand,
		                            result, report);
	if (rc != 0)
		goto done;
	printf("verified proof: snapshot %s epoch %" PRIu64 " signed by %zu of %zu authorities (%s)\n",
	       result->namespace_name, result->epoch, result->signer_count, result->authority_count,
	       result->signer_names);
	printf("is entry %" PRIu64 " of the log %s at size %" PRIu64
	       ", signed by its log key and cosigned by %zu of %zu witnesses (%zu required)\n",
	       result->index, result->origin, result->tree_size, result->cosigned, result->witness_count,
	       result->quorum);
done:
	free(bundle);
	free(result);
	return rc == 0 ? CTL_EXIT_OK : report->exit_code;
}

int ctl_command_proof(const struct ctl_arguments *arguments, struct ctl_report *report)
{
	struct ctl_proof_download download;
	uint64_t size = 0, index = 0;

	if (arguments->servers.count > 1) {
		ctl_report_fail(report, CTL_EXIT_USAGE, "proof: --server: one server");
		return report->exit_code;
	}
	if (ctl_command_check_namespace_name("proof", arguments->namespace_name, report) != 0)
		return report->exit_code;
	memset(&download, 0, sizeof(download));
	if (ctl_command_parse_decimal(arguments->epoch_text, &download.epoch) != 0) {
		ctl_report_fail(report, CTL_EXIT_USAGE, "proof: --epoch: expected a decimal");
		return report->exit_code;
	}
	download.server_url = arguments->servers.values[0];
	download.namespace_name = arguments->namespace_name;
	download.out_path = arguments->out;
	if (ctl_proof_download_run(&download, &size, &index, report) != 0)
		return report->exit_code;
	printf("proof written to %s: %s epoch %" PRIu64 ", entry %" PRIu64
	       " of the checkpoint of size %" PRIu64 " (not verified: dirauthctl verify checks it)\n",
	       arguments->out, arguments->namespace_name, download.epoch, index, size);
	return CTL_EXIT_OK;
}

/* ---- the monitor and its evidence (ctl/monitor.h, ctl/evidence.h) ---- */

int ctl_command_monitor(int argc, char **argv, struct ctl_report *report)
{
	return ctl_monitor_command(argc, argv, ctl_command_catch_stop_signals(), report);
}
