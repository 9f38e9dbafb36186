/*
 * command_provider.c: the bodies of dirauthctl's commands on a provider's statements:
 * register (ctl/register.h), the endpoint's life, health, revoke and deregister
 * (ctl/endpoint.h), and replay-revocations, which posts a snapshot's revocations again to an
 * authority restored from a backup (ctl/replay.h).
 *
 * Each posts to every --server and prints one line per server: what it accepted, or why not, a
 * statement another server's answer already counted for said once. health --every keeps
 * posting, a new statement each round at about the period asked (plus or minus a tenth, so that
 * many endpoints started together drift apart), until SIGINT or SIGTERM.
 */
#include "ctl/command_bodies.h"

#include "ctl/capability.h"
#include "ctl/endpoint.h"
#include "ctl/files.h"
#include "ctl/register.h"
#include "ctl/replay.h"
#include "crypto/crypto.h"
#include "base/error.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The longest --every: a year. A period is a count of seconds turned into milliseconds and
 * added to clock readings, so it is bounded well below any overflow. */
#define CTL_EVERY_MAX_SECONDS (365ULL * 86400)

/* The line of a server that did not accept, "URL outcome: why", why without the command's prefix
 * (and a refusal's). */
static void print_unaccepted(const char *command, const char *server_url, enum ctl_register_outcome outcome,
                             const char *message)
{
	const char *detail = ctl_command_without_prefix(message, command);

	if (outcome == CTL_REGISTER_REFUSED)
		detail = ctl_command_without_prefix(detail, "refused");
	printf("%s %s: %s\n", server_url, ctl_register_outcome_name(outcome), detail);
}

/* What follows an accepted answer another server's answer already counted for. */
static const char *counted_note(int counted)
{
	return counted ? "" : " (counted once: another server answered for it)";
}

/* ---- registration (ctl/register.h) ---- */

/* register with several --server: one line per server, in the order given. */
static void print_answers(const struct ctl_register_result *result, int verbose)
{
	for (size_t i = 0; i < result->answer_count; i++) {
		const struct ctl_register_answer *answer = &result->answers[i];

		if (answer->outcome != CTL_REGISTER_ACCEPTED) {
			print_unaccepted("register", answer->server_url, answer->outcome,
			                 answer->report.message);
			continue;
		}
		printf("%s accepted: published by epoch %" PRIu64 ", receipt signed by %s%s\n",
		       answer->server_url, answer->receipt.publish_by_epoch, answer->receipt_signer,
		       counted_note(answer->counted));
		if (verbose)
			fwrite(answer->receipt_note.data, 1, answer->receipt_note.len, stdout);
	}
}

int ctl_command_register(const struct ctl_arguments *arguments, struct ctl_report *report)
{
	struct ctl_register_options register_options;
	struct ctl_register_result result;
	int exit_code;

	if (!arguments->dry_run && ctl_command_require("register", arguments->servers.values[0],
	                                               "--server (or --dry-run)", report) != 0)
		return report->exit_code;
	if (ctl_command_check_servers("register", &arguments->servers, CTL_REGISTER_SERVERS_MAX, report) != 0)
		return report->exit_code;
	memset(&register_options, 0, sizeof(register_options));
	register_options.key_path = arguments->key;
	register_options.service_path = arguments->service;
	register_options.server_url = arguments->servers.values[0];
	register_options.server_urls = arguments->servers.values;
	register_options.server_count = arguments->servers.count;
	register_options.trust_path = arguments->trust;
	register_options.dry_run = arguments->dry_run;
	if (ctl_command_read_clock("register", arguments->now_text, &register_options.now, report) != 0)
		return report->exit_code;

	ctl_register_result_init(&result);
	if (ctl_register_run(&register_options, &result, report) != 0) {
		exit_code = report->exit_code;
		print_answers(&result, arguments->verbose);
		goto done;
	}
	exit_code = CTL_EXIT_OK;
	if (arguments->dry_run) {
		fwrite(result.note.data, 1, result.note.len, stdout);
		goto done;
	}
	if (result.answer_count > 0) {
		print_answers(&result, arguments->verbose);
		printf("accepted: service %s sequence %" PRIu64 " by %zu of %zu authorities (%s), the trust "
		       "bundle requires %zu\n",
		       result.service_hex, result.sequence, result.accepted_count, result.authority_count,
		       result.accepted_names, result.threshold);
		goto done;
	}
	printf("accepted: service %s sequence %" PRIu64 ", published by epoch %" PRIu64
	       ", receipt signed by %s%s\n",
	       result.service_hex, result.sequence, result.receipt.publish_by_epoch, result.receipt_signer,
	       result.receipt_verified ? "" : " (signature not verified: no --trust)");
	if (arguments->verbose)
		fwrite(result.receipt_note.data, 1, result.receipt_note.len, stdout);
done:
	ctl_register_result_free(&result);
	return exit_code;
}

/* ---- the endpoint's life: health, revoke, deregister (ctl/endpoint.h) ---- */

/* A word of a table ("healthy", "provider", ...) into *out through parse; absent leaves *out. */
static int parse_word(const char *command, const char *option, const char *text,
                      int (*parse)(const char *, size_t, void *), void *out, const char *expected,
                      struct ctl_report *report)
{
	if (text == NULL)
		return 0;
	if (parse(text, strlen(text), out) != 0) {
		ctl_report_fail(report, CTL_EXIT_USAGE, "%s: %s: '%.64s': expected %s", command, option, text,
		                expected);
		return -1;
	}
	return 0;
}

static int parse_health_class(const char *text, size_t len, void *out)
{
	return health_class_parse(text, len, out);
}

static int parse_health_signer(const char *text, size_t len, void *out)
{
	return health_signer_parse(text, len, out);
}

static int parse_capacity(const char *text, size_t len, void *out)
{
	return capacity_class_parse(text, len, out);
}

static int parse_revocation_signer(const char *text, size_t len, void *out)
{
	return revocation_signer_parse(text, len, out);
}

static int parse_reason(const char *text, size_t len, void *out)
{
	return revocation_reason_parse(text, len, out);
}

/* What one server answered, after it was accepted. */
static void print_accepted_answer(enum ctl_endpoint_kind kind, const struct ctl_endpoint_answer *answer)
{
	if (kind == CTL_ENDPOINT_DEREGISTRATION)
		printf("last listed in epoch %" PRIu64 ", receipt signed by %s%s, kept in %s",
		       answer->receipt.last_listed_epoch, answer->receipt_signer,
		       answer->receipt_verified ? "" : " (signature not verified: no --trust)",
		       answer->receipt_path);
	else
		printf("in the view of epoch %" PRIu64, answer->epoch);
}

/* A kept deregistration receipt, as received. */
static void print_receipt(const struct ctl_endpoint_answer *answer)
{
	uint8_t *data = NULL;
	size_t len = 0;

	if (ctl_file_read(answer->receipt_path, 2 * DEREGISTRATION_RECEIPT_MAX_BYTES, &data, &len) == 0)
		fwrite(data, 1, len, stdout);
	free(data);
}

/* With several --server: one line per server, in the order given. */
static void print_endpoint_answers(enum ctl_endpoint_kind kind, const struct ctl_endpoint_result *result,
                                   int verbose)
{
	for (size_t i = 0; i < result->answer_count; i++) {
		const struct ctl_endpoint_answer *answer = &result->answers[i];

		if (answer->outcome != CTL_REGISTER_ACCEPTED) {
			print_unaccepted(ctl_endpoint_command_name(kind), answer->server_url, answer->outcome,
			                 answer->report.message);
			continue;
		}
		printf("%s accepted: ", answer->server_url);
		print_accepted_answer(kind, answer);
		printf("%s\n", counted_note(answer->counted));
		if (verbose && kind == CTL_ENDPOINT_DEREGISTRATION)
			print_receipt(answer);
	}
}

/* The summary line of a command that succeeded. */
static void print_endpoint_summary(const struct ctl_endpoint_options *options,
                                   const struct ctl_endpoint_result *result)
{
	const struct ctl_endpoint_answer *first = &result->answers[0];
	uint64_t last_listed = 0;

	switch (options->kind) {
	case CTL_ENDPOINT_HEALTH:
		printf("accepted: %s of endpoint %s, sequence %" PRIu64 ", signed by the %s key",
		       health_class_name(options->health_class), options->endpoint_hex, result->sequence,
		       options->signer == HEALTH_SIGNER_ENDPOINT ? "endpoint's own" : "provider");
		break;
	case CTL_ENDPOINT_REVOCATION:
		if (options->endpoint_hex != NULL)
			printf("accepted: revoked endpoint %s of service %s", options->endpoint_hex,
			       result->service_hex);
		else
			printf("accepted: revoked service %s", result->service_hex);
		printf(" (%s), sequence %" PRIu64 ", signed by the %s key",
		       revocation_reason_name(options->reason), result->sequence,
		       revocation_signer_name((enum revocation_signer)options->signer));
		break;
	case CTL_ENDPOINT_DEREGISTRATION:
	default:
		for (size_t i = 0; i < result->answer_count; i++)
			if (result->answers[i].counted &&
			    result->answers[i].receipt.last_listed_epoch > last_listed)
				last_listed = result->answers[i].receipt.last_listed_epoch;
		printf("accepted: service %s withdrawn up to sequence %" PRIu64, result->service_hex,
		       result->sequence);
		if (result->answer_count > 1)
			printf(" by %zu of the authorities (%s), absent from every snapshot after epoch "
			       "%" PRIu64,
			       result->accepted_count, result->accepted_names, last_listed);
		break;
	}
	if (result->answer_count == 1) {
		printf(", ");
		print_accepted_answer(options->kind, first);
	} else if (options->kind != CTL_ENDPOINT_DEREGISTRATION) {
		printf(", by %zu of %zu servers", result->accepted_count, result->answer_count);
	}
	printf("\n");
}

/* One round of health --every: "round N: sequence S <class>: accepted by A of M servers" and,
 * for each server that did not accept, "; URL: why". */
static void print_round(uint64_t round, const struct ctl_endpoint_options *options,
                        const struct ctl_endpoint_result *result)
{
	printf("round %" PRIu64 ": sequence %" PRIu64 " %s: accepted by %zu of %zu servers", round,
	       result->sequence, health_class_name(options->health_class), result->accepted_count,
	       result->answer_count);
	for (size_t i = 0; i < result->answer_count; i++) {
		const struct ctl_endpoint_answer *answer = &result->answers[i];
		if (answer->outcome != CTL_REGISTER_ACCEPTED)
			printf("; %s %s: %s", answer->server_url, ctl_register_outcome_name(answer->outcome),
			       ctl_command_without_prefix(answer->report.message, "health"));
	}
	printf("\n");
	fflush(stdout);
}

/* Seconds since an arbitrary start, from the monotonic clock. */
static uint64_t monotonic_seconds(void)
{
	struct timespec now;
	if (clock_gettime(CLOCK_MONOTONIC, &now) != 0)
		return 0;
	return (uint64_t)now.tv_sec;
}

/* health --every: a new statement each round until SIGINT or SIGTERM. A round that fails before
 * anything is posted (the key, the file, the state) ends the command with its status; a round
 * the servers refuse is reported and the next one follows. */
static int health_every(struct ctl_endpoint_options *options, uint64_t every, struct ctl_report *report)
{
	struct ctl_endpoint_result result;
	uint64_t start = monotonic_seconds(), first_now = options->now, last_sequence = 0;
	int exit_code = CTL_EXIT_OK;

	volatile sig_atomic_t *stop_requested = ctl_command_catch_stop_signals();
	ctl_endpoint_result_init(&result);
	for (uint64_t round = 1; !*stop_requested; round++) {
		struct ctl_report round_report;
		uint64_t elapsed = monotonic_seconds() - start;

		ctl_report_init(&round_report);
		options->now = first_now + elapsed;
		if (round > 1 && options->state_path == NULL) {
			/* Without a state file each round's sequence is the clock's, always above the last.
			 */
			options->has_sequence = 1;
			options->sequence = options->now > last_sequence ? options->now : last_sequence + 1;
		}
		if (ctl_endpoint_run(options, &result, &round_report) != 0 && result.answer_count == 0) {
			*report = round_report;
			exit_code = report->exit_code;
			break;
		}
		last_sequence = result.sequence;
		if (options->state_path == NULL && round == 1 && options->has_sequence)
			last_sequence = options->sequence;
		print_round(round, options, &result);
		ctl_command_sleep(every, stop_requested);
	}
	if (exit_code == CTL_EXIT_OK)
		printf("stopped\n");
	ctl_endpoint_result_free(&result);
	return exit_code;
}

/* health, revoke and deregister, once ctl_command_run has checked --key and --server. */
static int run_endpoint_command(enum ctl_endpoint_kind kind, const struct ctl_arguments *arguments,
                                struct ctl_report *report)
{
	const char *what = ctl_endpoint_command_name(kind);
	struct ctl_endpoint_options endpoint_options;
	struct ctl_endpoint_result result;
	uint64_t every = 0;
	int exit_code;

	if (ctl_command_check_servers(what, &arguments->servers, CTL_REGISTER_SERVERS_MAX, report) != 0)
		return report->exit_code;
	if (kind == CTL_ENDPOINT_HEALTH &&
	    (ctl_command_require(what, arguments->service, "--service", report) != 0 ||
	     ctl_command_require(what, arguments->endpoint, "--endpoint", report) != 0 ||
	     ctl_command_require(what, arguments->class_text, "--class", report) != 0))
		return report->exit_code;
	if (kind == CTL_ENDPOINT_REVOCATION &&
	    ctl_command_require(what, arguments->reason, "--reason", report) != 0)
		return report->exit_code;
	if (arguments->service == NULL &&
	    (ctl_command_require(what, arguments->namespace_name, "--service (or --namespace)", report) !=
	         0 ||
	     ctl_command_require(what, arguments->service_id, "--service-id", report) != 0))
		return report->exit_code;
	if (arguments->service != NULL && (arguments->namespace_name || arguments->service_id)) {
		ctl_report_fail(report, CTL_EXIT_USAGE,
		                "%s: give --service FILE or --namespace and --service-id, not both", what);
		return report->exit_code;
	}
	memset(&endpoint_options, 0, sizeof(endpoint_options));
	endpoint_options.kind = kind;
	endpoint_options.signer =
	    kind == CTL_ENDPOINT_HEALTH ? HEALTH_SIGNER_PROVIDER : REVOCATION_SIGNER_PROVIDER;
	if (parse_word(what, "--class", arguments->class_text, parse_health_class,
	               &endpoint_options.health_class, "healthy, degraded, draining or unavailable",
	               report) != 0 ||
	    parse_word(what, "--capacity", arguments->capacity, parse_capacity, &endpoint_options.capacity,
	               "low, medium or high", report) != 0 ||
	    parse_word(what, "--reason", arguments->reason, parse_reason, &endpoint_options.reason,
	               "key-compromise, retired, superseded or operator-action", report) != 0)
		return report->exit_code;
	if (kind == CTL_ENDPOINT_HEALTH) {
		enum health_signer signer = HEALTH_SIGNER_PROVIDER;
		if (parse_word(what, "--signer", arguments->signer, parse_health_signer, &signer,
		               "provider or endpoint", report) != 0)
			return report->exit_code;
		endpoint_options.signer = (int)signer;
	} else if (kind == CTL_ENDPOINT_REVOCATION) {
		enum revocation_signer signer = REVOCATION_SIGNER_PROVIDER;
		if (parse_word(what, "--signer", arguments->signer, parse_revocation_signer, &signer,
		               "provider or operator", report) != 0)
			return report->exit_code;
		endpoint_options.signer = (int)signer;
	}
	endpoint_options.has_capacity = arguments->capacity != NULL;
	if (ctl_command_parse_decimal_option(what, "--sequence", arguments->sequence_text, 1, UINT64_MAX, 1,
	                                     &endpoint_options.sequence, report) != 0 ||
	    ctl_command_parse_decimal_option(what, "--every", arguments->every_text, 1, CTL_EVERY_MAX_SECONDS,
	                                     1, &every, report) != 0)
		return report->exit_code;
	endpoint_options.has_sequence = arguments->sequence_text != NULL;
	endpoint_options.key_path = arguments->key;
	endpoint_options.service_path = arguments->service;
	endpoint_options.namespace_name = arguments->namespace_name;
	endpoint_options.service_hex = arguments->service_id;
	endpoint_options.endpoint_hex = arguments->endpoint;
	endpoint_options.state_path = arguments->state;
	endpoint_options.server_urls = arguments->servers.values;
	endpoint_options.server_count = arguments->servers.count;
	endpoint_options.trust_path = arguments->trust;
	endpoint_options.receipt_directory = arguments->receipts;
	if (ctl_command_read_clock(what, arguments->now_text, &endpoint_options.now, report) != 0)
		return report->exit_code;
	if (every > 0)
		return health_every(&endpoint_options, every, report);

	ctl_endpoint_result_init(&result);
	exit_code =
	    ctl_endpoint_run(&endpoint_options, &result, report) == 0 ? CTL_EXIT_OK : report->exit_code;
	if (result.answer_count > 1)
		print_endpoint_answers(kind, &result, arguments->verbose);
	if (exit_code == CTL_EXIT_OK) {
		print_endpoint_summary(&endpoint_options, &result);
		if (arguments->verbose && result.answer_count == 1 && kind == CTL_ENDPOINT_DEREGISTRATION)
			print_receipt(&result.answers[0]);
	}
	ctl_endpoint_result_free(&result);
	return exit_code;
}

int ctl_command_health(const struct ctl_arguments *arguments, struct ctl_report *report)
{
	return run_endpoint_command(CTL_ENDPOINT_HEALTH, arguments, report);
}

int ctl_command_revoke(const struct ctl_arguments *arguments, struct ctl_report *report)
{
	return run_endpoint_command(CTL_ENDPOINT_REVOCATION, arguments, report);
}

int ctl_command_deregister(const struct ctl_arguments *arguments, struct ctl_report *report)
{
	return run_endpoint_command(CTL_ENDPOINT_DEREGISTRATION, arguments, report);
}

/* ---- revocations replayed into a restored authority (ctl/replay.h) ---- */

int ctl_command_replay(const struct ctl_arguments *arguments, struct ctl_report *report)
{
	struct trust_bundle *bundle = NULL;
	struct ctl_replay_result result;
	char authorization[CTL_AUTHORIZATION_MAX] = "";
	int rc;

	memset(&result, 0, sizeof result);
	if (arguments->servers.count > 1) {
		ctl_report_fail(report, CTL_EXIT_USAGE,
		                "replay-revocations: one --server: the authority that lost the revocations");
		return report->exit_code;
	}
	rc = ctl_command_load_bundle("replay-revocations", arguments->trust, &bundle, report);
	if (rc == 0 && arguments->capability_file != NULL)
		rc = ctl_capability_read("replay-revocations", arguments->capability_file, authorization,
		                         report);
	if (rc == 0) {
		struct ctl_replay_options options = {.bundle = bundle,
		                                     .body_path = arguments->operand,
		                                     .server_url = arguments->servers.values[0],
		                                     .authorization =
		                                         authorization[0] ? authorization : NULL};
		rc = ctl_replay_revocations(&options, &result, report);
	}
	if (rc == 0 || result.listed > 0)
		printf("replay-revocations: %s epoch %" PRIu64 " lists %zu revocation%s: %zu taken, %zu held "
		       "already, %zu superseded, %zu refused, %zu not posted\n",
		       result.namespace_name, result.epoch, result.listed, result.listed == 1 ? "" : "s",
		       result.taken, result.held, result.superseded, result.refused, result.not_posted);
	crypto_wipe(authorization, sizeof(authorization));
	free(bundle);
	return rc == 0 ? CTL_EXIT_OK : report->exit_code;
}
