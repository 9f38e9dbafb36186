/*
 * command_bodies.h: the bodies of dirauthctl's commands, which the one table of commands in
 * dirauthctl_main.c points at (struct ctl_command, command.h), and what several bodies check
 * and read alike.
 *
 * A body starts from arguments ctl_command_run has checked (its required options given, no
 * foreign option), does its command's work through its module, prints what succeeded on stdout
 * and returns the exit status (report.h), the failure in report. The bodies live by area:
 * command_keys.c (keys and certificates), command_provider.c (registration, the endpoint's life,
 * revocations replayed), command_snapshots.c (fetch, the log's proofs, the monitor); what they
 * share is command_shared.c.
 */
#ifndef DIRAUTH_CTL_COMMAND_BODIES_H
#define DIRAUTH_CTL_COMMAND_BODIES_H

#include "ctl/command.h"
#include "ctl/proof.h"
#include "ctl/report.h"
#include "verify/verify.h"

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

/* ---- the bodies of the table's commands ---- */

/* command_keys.c */
int ctl_command_keygen(const struct ctl_arguments *arguments, struct ctl_report *report);
int ctl_command_identity_keygen(const struct ctl_arguments *arguments, struct ctl_report *report);
int ctl_command_key_verifiers(const struct ctl_arguments *arguments, struct ctl_report *report);
int ctl_command_certify(const struct ctl_arguments *arguments, struct ctl_report *report);
int ctl_command_rotate(const struct ctl_arguments *arguments, struct ctl_report *report);
/* command_provider.c */
int ctl_command_register(const struct ctl_arguments *arguments, struct ctl_report *report);
int ctl_command_health(const struct ctl_arguments *arguments, struct ctl_report *report);
int ctl_command_revoke(const struct ctl_arguments *arguments, struct ctl_report *report);
int ctl_command_deregister(const struct ctl_arguments *arguments, struct ctl_report *report);
int ctl_command_replay(const struct ctl_arguments *arguments, struct ctl_report *report);
/* command_snapshots.c */
int ctl_command_fetch(const struct ctl_arguments *arguments, struct ctl_report *report);
int ctl_command_mirror(const struct ctl_arguments *arguments, struct ctl_report *report);
int ctl_command_lookup(const struct ctl_arguments *arguments, struct ctl_report *report);
int ctl_command_verify(const struct ctl_arguments *arguments, struct ctl_report *report);
int ctl_command_proof(const struct ctl_arguments *arguments, struct ctl_report *report);

/* ---- the commands that read their own words (argv[0] is the command's word) ---- */

/* "certificate show CERT" (or inspect): the subcommand's words go to its own table entry. */
int ctl_command_certificate(int argc, char **argv, struct ctl_report *report);
/* "monitor": ctl_monitor_command with the stop signals caught. */
int ctl_command_monitor(int argc, char **argv, struct ctl_report *report);

/* ---- what several bodies check and read (command_shared.c) ---- */
/* Each returns 0, or -1 with the refusal ("<command>: ...") and its exit status in report. */

/* At most maximum --server URLs, none given twice. */
int ctl_command_check_servers(const char *command, const struct ctl_argument_list *servers, size_t maximum,
                              struct ctl_report *report);

/* message without its leading "<prefix>: ", when it has one; a pointer into message. */
const char *ctl_command_without_prefix(const char *message, const char *prefix);

/* A canonical decimal into *out: 0, or -1 (and *out unspecified); reports nothing. */
int ctl_command_parse_decimal(const char *text, uint64_t *out);

/* A decimal option in [minimum, maximum]; absent (text NULL) leaves *out. The refusal says
 * "expected a decimal from minimum to maximum", or with say_at_least "expected a decimal of at
 * least minimum". */
int ctl_command_parse_decimal_option(const char *command, const char *option, const char *text,
                                     uint64_t minimum, uint64_t maximum, int say_at_least, uint64_t *out,
                                     struct ctl_report *report);

/* A --namespace that is a namespace name. */
int ctl_command_check_namespace_name(const char *command, const char *name, struct ctl_report *report);

/* The time: --now's unix seconds when now_text is given, else the system clock. */
int ctl_command_read_clock(const char *command, const char *now_text, uint64_t *now,
                           struct ctl_report *report);

/* The trust bundle at path into a new allocation: *out is the caller's to free (also on
 * failure; NULL when it could not be allocated). */
int ctl_command_load_bundle(const char *command, const char *path, struct trust_bundle **out,
                            struct ctl_report *report);

/* The log's pins (ctl/proof.h) from --log-key, --witness-key and --witness-threshold. */
int ctl_command_parse_log_pins(const char *command, const struct ctl_arguments *arguments,
                               const struct trust_bundle *bundle, struct ctl_log_pins *pins,
                               struct ctl_report *report);

/* Catches SIGINT and SIGTERM for a command that loops (health --every, monitor) and returns the
 * flag they set: the loop ends after the round in which it becomes nonzero. */
volatile sig_atomic_t *ctl_command_catch_stop_signals(void);

/* Sleeps about seconds, give or take a tenth at random (so that many clients started together
 * drift apart), in steps of 100 ms, returning early once *stop is set. */
void ctl_command_sleep(uint64_t seconds, const volatile sig_atomic_t *stop);

#endif
