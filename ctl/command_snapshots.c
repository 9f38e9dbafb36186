/*
 * command_snapshots.c: the bodies of dirauthctl's commands that read what the authorities
 * publish: fetch (ctl/fetch.h), the transparency log's proof and its offline verification
 * (ctl/proof.h), and the monitor's entry (ctl/monitor.h).
 *
 * fetch tries the --server URLs in order until one serves a snapshot that verifies; nothing is
 * written before it does. The monitor's loop and its words are its module's own
 * (monitor_command.c); here it gets the stop signals.
 */
#include "ctl/command_bodies.h"

#include "ctl/capability.h"
#include "ctl/fetch.h"
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

int ctl_command_fetch(const struct ctl_arguments *arguments, struct ctl_report *report)
{
	char authorization[CTL_AUTHORIZATION_MAX];
	struct ctl_fetch_options fetch_options;
	struct ctl_log_pins log_pins;
	struct verify_snapshot_policy policy;
	struct ctl_fetch_result result;
	struct trust_bundle *bundle = NULL;
	int rc;

	if (ctl_command_check_servers("fetch", &arguments->servers, CTL_FETCH_SERVERS_MAX, report) != 0 ||
	    ctl_command_check_namespace_name("fetch", arguments->namespace_name, report) != 0)
		return report->exit_code;
	verify_snapshot_policy_default(&policy);
	if (ctl_command_parse_decimal_option("fetch", "--clock-skew", arguments->clock_skew_text, 0,
	                                     UINT64_MAX, 0, &policy.clock_skew, report) != 0 ||
	    ctl_command_parse_decimal_option("fetch", "--max-validity", arguments->max_validity_text, 1,
	                                     UINT64_MAX, 0, &policy.max_validity, report) != 0 ||
	    ctl_command_parse_decimal_option("fetch", "--max-chain", arguments->max_chain_text, 1,
	                                     CTL_FETCH_MAX_CHAIN_LIMIT, 0, &policy.max_chain, report) != 0)
		return report->exit_code;
	memset(&fetch_options, 0, sizeof(fetch_options));
	fetch_options.policy = &policy;
	if (ctl_command_read_clock("fetch", arguments->now_text, &fetch_options.now, report) != 0)
		return report->exit_code;
	rc = ctl_command_load_bundle("fetch", arguments->trust, &bundle, report);
	if (rc != 0)
		goto done;
	fetch_options.server_url = arguments->servers.values[0];
	fetch_options.bundle = bundle;
	fetch_options.namespace_name = arguments->namespace_name;
	fetch_options.directory = arguments->out != NULL ? arguments->out : CTL_FETCH_DEFAULT_DIRECTORY;
	/* The log is checked when a log key is given. */
	rc = ctl_command_parse_log_pins("fetch", arguments, bundle, &log_pins, report);
	if (rc != 0)
		goto done;
	fetch_options.log = &log_pins;
	if (arguments->capability_file != NULL) {
		rc = ctl_capability_read("fetch", arguments->capability_file, authorization, report);
		if (rc != 0)
			goto done;
		fetch_options.authorization = authorization;
	}
	if (arguments->servers.count > 1) {
		rc = fetch_from_servers(&fetch_options, &arguments->servers, report);
		goto done;
	}
	rc = ctl_fetch_run(&fetch_options, &result, report);
	if (rc == 0)
		print_fetched(&result, NULL);
done:
	crypto_wipe(authorization, sizeof(authorization));
	free(bundle);
	return rc == 0 ? CTL_EXIT_OK : report->exit_code;
}

/* ---- the transparency log's proofs (ctl/proof.h) ---- */

int ctl_command_verify(const struct ctl_arguments *arguments, struct ctl_report *report)
{
	struct ctl_proof_result *result = NULL;
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
	       result->log.index, result->origin, result->log.tree_size, result->log.cosigned,
	       result->log.witness_count, result->log.quorum);
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
