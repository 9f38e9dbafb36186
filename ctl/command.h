/*
 * command.h: the command line of dirauthctl's commands, said once.
 *
 * Every option any command takes is named once here (enum ctl_option, and the member of struct
 * ctl_arguments that keeps its value) and spelled once in command.c. A command is a table entry:
 * how messages name it, its usage text, the options it takes, the ones it requires, the one operand
 * it may take, and its body. ctl_command_run does for every command what each would otherwise
 * repeat: it parses the words, answers --help with the usage text, refuses a missing operand, an
 * option of a sibling command and a missing required option, and only then calls the body with the
 * parsed arguments. What a body checks beyond that (an option required only without another, values
 * that must parse) it checks itself, with ctl_command_require for the first.
 *
 * Usage failures are exit status 64 with one message in the report, worded the same for every
 * command: "<command>: unknown option '--x'", "<command>: option '--x' needs a value",
 * "<command>: unexpected argument 'x'", "<command>: --x is required (see dirauthctl <command>
 * --help)". Options and the operand may come in any order; after "--" the next word is the
 * operand even when it begins with '-'.
 */
#ifndef DIRAUTH_CTL_COMMAND_H
#define DIRAUTH_CTL_COMMAND_H

#include "ctl/proof.h"
#include "ctl/report.h"

#include <stddef.h>

/* Every option of every command. CTL_OPTION_END ends a list of options; CTL_REQUIRED(option) in
 * a command's list marks one the command requires. */
enum ctl_option {
	CTL_OPTION_END = 0,
	CTL_OPTION_NAME,
	CTL_OPTION_OUT,
	CTL_OPTION_KEY,
	CTL_OPTION_SERVICE,
	CTL_OPTION_SERVER,
	CTL_OPTION_DRY_RUN,
	CTL_OPTION_TRUST,
	CTL_OPTION_VERBOSE,
	CTL_OPTION_NOW,
	CTL_OPTION_NAMESPACE,
	CTL_OPTION_IDENTITY,
	CTL_OPTION_SIGNING_VERIFIER,
	CTL_OPTION_SIGNING_KEY,
	CTL_OPTION_VALID_AFTER,
	CTL_OPTION_VALID_UNTIL,
	CTL_OPTION_DAYS,
	CTL_OPTION_KEY_OUT,
	CTL_OPTION_CERT_OUT,
	CTL_OPTION_PREVIOUS,
	CTL_OPTION_ALLOW_GAP,
	CTL_OPTION_CLOCK_SKEW,
	CTL_OPTION_MAX_VALIDITY,
	CTL_OPTION_MAX_CHAIN,
	CTL_OPTION_CAPABILITY_FILE,
	CTL_OPTION_LOG_KEY,
	CTL_OPTION_WITNESS_KEY,
	CTL_OPTION_WITNESS_THRESHOLD,
	CTL_OPTION_CERTIFICATES,
	CTL_OPTION_EPOCH,
	CTL_OPTION_SERVICE_ID,
	CTL_OPTION_ENDPOINT,
	CTL_OPTION_SIGNER,
	CTL_OPTION_CLASS,
	CTL_OPTION_CAPACITY,
	CTL_OPTION_REASON,
	CTL_OPTION_SEQUENCE,
	CTL_OPTION_STATE,
	CTL_OPTION_EVERY,
	CTL_OPTION_RECEIPTS,
	CTL_OPTION_SOURCE,
	CTL_OPTION_EVIDENCE_DIR,
	CTL_OPTION_KEEP_EPOCHS,
	CTL_OPTION_EPOCHS,
	CTL_OPTION_COUNT,
	CTL_OPTION_REQUIRED_MARK = 0x100
};

#define CTL_REQUIRED(option) ((enum ctl_option)((option) | CTL_OPTION_REQUIRED_MARK))

/* The most --server options one command line may give (each command has its own bound, at most
 * this: CTL_REGISTER_SERVERS_MAX, CTL_FETCH_SERVERS_MAX). --source keeps CTL_MONITOR_SOURCES_MAX. */
#define CTL_COMMAND_SERVERS_MAX 32
/* A repeated option keeps up to this many values. --log-key and --witness-key keep one past their
 * bound, so that ctl_log_pins_parse words the refusal. */
#define CTL_ARGUMENT_LIST_MAX   33
/* The most options one command's table lists. */
#define CTL_COMMAND_OPTIONS_MAX 24

/* The values of a repeated option, in the order given; the unused places are NULL. */
struct ctl_argument_list {
	const char *values[CTL_ARGUMENT_LIST_MAX];
	size_t count;
};

/* A parsed command line. A value is NULL, a flag 0, a list empty when its option was not given.
 * The strings are argv's own: they live as long as argv. */
struct ctl_arguments {
	/* keys and certificates */
	const char *name, *out, *identity, *signing_verifier, *signing_key, *key_out, *cert_out, *previous;
	const char *valid_after_text, *valid_until_text, *days_text, *now_text;
	int allow_gap;
	/* a provider's statements */
	const char *key, *service, *namespace_name, *service_id, *endpoint, *signer, *class_text;
	const char *capacity, *reason, *sequence_text, *state, *every_text, *receipts;
	struct ctl_argument_list servers; /* every --server, in order */
	int dry_run, verbose;
	/* snapshots and the log */
	const char *trust, *certificates, *epoch_text, *capability_file;
	const char *clock_skew_text, *max_validity_text, *max_chain_text, *witness_threshold_text;
	struct ctl_argument_list log_keys, witness_keys; /* the log's pins (ctl/proof.h) */
	/* the monitor (its --state and --every are state and every_text) */
	struct ctl_argument_list sources; /* every --source, in order */
	const char *evidence_dir;
	/* the mirror */
	const char *keep_epochs_text;
	/* the health page */
	const char *epochs_text;
	const char *operand; /* the one operand of a command that takes one */
	int help;
};

/* One command. Its lists of options end at the first CTL_OPTION_END (a table leaves the rest
 * zero). */
struct ctl_command {
	const char *name;      /* how its messages name it: "fetch", "certificate show" */
	const char *help_name; /* the command in "(see dirauthctl <help_name> --help)"; NULL: name */
	const char *usage;     /* printed on stdout for --help or -h */
	const char *operand;   /* the one operand it requires ("PROOF"), or NULL when it takes none */
	/* The options it recognizes besides --help and -h; those it requires, marked CTL_REQUIRED,
	 * are refused in this order when missing or empty. */
	enum ctl_option options[CTL_COMMAND_OPTIONS_MAX];
	/* Those of options that are a sibling command's (health, revoke and deregister recognize one
	 * another's): refused as "an option of another command" rather than as unknown. */
	enum ctl_option foreign[CTL_COMMAND_OPTIONS_MAX];
	/* The body: what the command does with arguments that passed the checks above. Returns the
	 * exit status, the failure in report. NULL for a command whose caller reads its words with
	 * ctl_command_read and runs the body itself (one that needs more than the arguments). */
	int (*run)(const struct ctl_arguments *arguments, struct ctl_report *report);
};

/* Runs command on its words: argv[0] is the command's own word ("keygen", "show"), the options
 * follow; an operand may stand before or among them. Parses them (getopt_long, so that an
 * unambiguous prefix of an option is that option and --opt=value is --opt value), answers --help by
 * printing command->usage on stdout (status 0), then refuses with status 64: an unknown or
 * ambiguous option, an option without its value, a repeated option past its bound ("<command>:
 * --server: at most 32 servers"), a word that is not an option or the operand, more than 64 words
 * for a command with an operand ("<command>: too many arguments"), a missing operand ("<command>:
 * PROOF is required (see dirauthctl <help_name> --help)"), an option of a sibling command
 * ("<command>: an option of another command (see dirauthctl <help_name> --help)") and a missing
 * required option. Otherwise returns what command->run returns. The failure is in report. */
int ctl_command_run(const struct ctl_command *command, int argc, char **argv, struct ctl_report *report);

/* What ctl_command_run does before it calls the body: reads command's words into *arguments
 * (pointing into argv) and answers --help and every refusal as above. Returns 0 when the body is
 * to run; -1 when the words were answered instead: the usage printed on stdout for --help (report
 * left as it was, its status 0), or the refusal in report. The caller then exits with
 * report->exit_code. */
int ctl_command_read(const struct ctl_command *command, int argc, char **argv,
                     struct ctl_arguments *arguments, struct ctl_report *report);

/* 0 when value is given and not empty; else -1 and "<command>: <shown> is required (see dirauthctl
 * <command> --help)" with status 64 in report. shown names the option, as "--server (or
 * --dry-run)"; command is the command's name ("health"). */
int ctl_command_require(const char *command, const char *value, const char *shown, struct ctl_report *report);

/* 0 when no URL of urls is given twice (two that differ only in trailing slashes are one: "http://a/"
 * is "http://a"); else -1 and "<command>: <option> <URL> given twice" with status 64 in report, URL
 * the second one as given. option is as shown, "--server". */
int ctl_command_urls_distinct(const char *command, const char *option, const struct ctl_argument_list *urls,
                              struct ctl_report *report);

#endif
