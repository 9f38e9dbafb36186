/*
 * command.c: one parser for the command line of every dirauthctl command (command.h).
 *
 * The options are one table, option_specs, indexed by enum ctl_option: the spelling, whether it
 * is a flag, takes a value or may be repeated, and the member of struct ctl_arguments that keeps
 * it. A command's getopt_long table is built from the options its entry lists, so that a command
 * accepts exactly those (and their unambiguous prefixes) and no spelling is written twice.
 * Nothing here allocates; everything a parse keeps points into argv.
 */
#include "ctl/command.h"

#include "ctl/exchange.h"

#include "ctl/monitor.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

enum option_shape {
	OPTION_VALUE, /* a const char *, the last one given */
	OPTION_FLAG,  /* an int set to 1 */
	OPTION_LIST,  /* a struct ctl_argument_list, every one given */
};

struct option_spec {
	const char *name; /* the spelling after "--" */
	enum option_shape shape;
	size_t member; /* offsetof the struct ctl_arguments member that keeps it */
	/* A list: how many values it keeps, and the bound and noun of its refusal past that. */
	size_t kept;
	int bound;
	const char *noun;
};

#define MEMBER(name) offsetof(struct ctl_arguments, name)
/* The fields of a repeated option: its member, how many it keeps, the bound its refusal names. */
#define LIST(name, kept_values, bound_shown, noun_shown)                                                     \
	.shape = OPTION_LIST, .member = MEMBER(name), .kept = (kept_values), .bound = (bound_shown),         \
	.noun = (noun_shown)

static const struct option_spec option_specs[CTL_OPTION_COUNT] = {
    [CTL_OPTION_NAME] = {.name = "name", .member = MEMBER(name)},
    [CTL_OPTION_OUT] = {.name = "out", .member = MEMBER(out)},
    [CTL_OPTION_KEY] = {.name = "key", .member = MEMBER(key)},
    [CTL_OPTION_SERVICE] = {.name = "service", .member = MEMBER(service)},
    [CTL_OPTION_SERVER] = {.name = "server",
                           LIST(servers, CTL_COMMAND_SERVERS_MAX, CTL_COMMAND_SERVERS_MAX, "servers")},
    [CTL_OPTION_DRY_RUN] = {.name = "dry-run", .shape = OPTION_FLAG, .member = MEMBER(dry_run)},
    [CTL_OPTION_TRUST] = {.name = "trust", .member = MEMBER(trust)},
    [CTL_OPTION_VERBOSE] = {.name = "verbose", .shape = OPTION_FLAG, .member = MEMBER(verbose)},
    [CTL_OPTION_NOW] = {.name = "now", .member = MEMBER(now_text)},
    [CTL_OPTION_NAMESPACE] = {.name = "namespace", .member = MEMBER(namespace_name)},
    [CTL_OPTION_IDENTITY] = {.name = "identity", .member = MEMBER(identity)},
    [CTL_OPTION_SIGNING_VERIFIER] = {.name = "signing-verifier", .member = MEMBER(signing_verifier)},
    [CTL_OPTION_SIGNING_KEY] = {.name = "signing-key", .member = MEMBER(signing_key)},
    [CTL_OPTION_VALID_AFTER] = {.name = "valid-after", .member = MEMBER(valid_after_text)},
    [CTL_OPTION_VALID_UNTIL] = {.name = "valid-until", .member = MEMBER(valid_until_text)},
    [CTL_OPTION_DAYS] = {.name = "days", .member = MEMBER(days_text)},
    [CTL_OPTION_KEY_OUT] = {.name = "key-out", .member = MEMBER(key_out)},
    [CTL_OPTION_CERT_OUT] = {.name = "cert-out", .member = MEMBER(cert_out)},
    [CTL_OPTION_PREVIOUS] = {.name = "previous", .member = MEMBER(previous)},
    [CTL_OPTION_ALLOW_GAP] = {.name = "allow-gap", .shape = OPTION_FLAG, .member = MEMBER(allow_gap)},
    [CTL_OPTION_CLOCK_SKEW] = {.name = "clock-skew", .member = MEMBER(clock_skew_text)},
    [CTL_OPTION_MAX_VALIDITY] = {.name = "max-validity", .member = MEMBER(max_validity_text)},
    [CTL_OPTION_MAX_CHAIN] = {.name = "max-chain", .member = MEMBER(max_chain_text)},
    [CTL_OPTION_CAPABILITY_FILE] = {.name = "capability-file", .member = MEMBER(capability_file)},
    [CTL_OPTION_LOG_KEY] = {.name = "log-key",
                            LIST(log_keys, CTL_LOG_KEYS_MAX + 1, CTL_LOG_KEYS_MAX, "log keys")},
    [CTL_OPTION_WITNESS_KEY] = {.name = "witness-key",
                                LIST(witness_keys, CTL_LOG_WITNESSES_MAX + 1, CTL_LOG_WITNESSES_MAX,
                                     "witnesses")},
    [CTL_OPTION_WITNESS_THRESHOLD] = {.name = "witness-threshold", .member = MEMBER(witness_threshold_text)},
    [CTL_OPTION_CERTIFICATES] = {.name = "certificates", .member = MEMBER(certificates)},
    [CTL_OPTION_EPOCH] = {.name = "epoch", .member = MEMBER(epoch_text)},
    [CTL_OPTION_SERVICE_ID] = {.name = "service-id", .member = MEMBER(service_id)},
    [CTL_OPTION_ENDPOINT] = {.name = "endpoint", .member = MEMBER(endpoint)},
    [CTL_OPTION_SIGNER] = {.name = "signer", .member = MEMBER(signer)},
    [CTL_OPTION_CLASS] = {.name = "class", .member = MEMBER(class_text)},
    [CTL_OPTION_CAPACITY] = {.name = "capacity", .member = MEMBER(capacity)},
    [CTL_OPTION_REASON] = {.name = "reason", .member = MEMBER(reason)},
    [CTL_OPTION_SEQUENCE] = {.name = "sequence", .member = MEMBER(sequence_text)},
    [CTL_OPTION_STATE] = {.name = "state", .member = MEMBER(state)},
    [CTL_OPTION_EVERY] = {.name = "every", .member = MEMBER(every_text)},
    [CTL_OPTION_RECEIPTS] = {.name = "receipts", .member = MEMBER(receipts)},
    [CTL_OPTION_SOURCE] = {.name = "source",
                           LIST(sources, CTL_MONITOR_SOURCES_MAX, CTL_MONITOR_SOURCES_MAX, "sources")},
    [CTL_OPTION_EVIDENCE_DIR] = {.name = "evidence-dir", .member = MEMBER(evidence_dir)},
    [CTL_OPTION_KEEP_EPOCHS] = {.name = "keep-epochs", .member = MEMBER(keep_epochs_text)},
    [CTL_OPTION_EPOCHS] = {.name = "epochs", .member = MEMBER(epochs_text)},
};

/* getopt_long answers an option of the table with its enum ctl_option plus this, above every
 * character it answers with itself ('h', ':', '?'). */
#define GETOPT_VALUE_BASE 256
/* The most words a command with an operand may be given. */
#define OPERAND_WORDS_MAX 64

_Static_assert(CTL_ARGUMENT_LIST_MAX >= CTL_COMMAND_SERVERS_MAX &&
                   CTL_ARGUMENT_LIST_MAX >= CTL_MONITOR_SOURCES_MAX &&
                   CTL_ARGUMENT_LIST_MAX >= CTL_LOG_KEYS_MAX + 1 &&
                   CTL_ARGUMENT_LIST_MAX >= CTL_LOG_WITNESSES_MAX + 1,
               "a list keeps every value its option allows");

/* The options of list before its end (at most CTL_COMMAND_OPTIONS_MAX). */
static size_t list_length(const enum ctl_option *list)
{
	size_t length = 0;
	while (length < CTL_COMMAND_OPTIONS_MAX && list[length] != CTL_OPTION_END)
		length++;
	return length;
}

/* An option of a command's list, without its CTL_REQUIRED mark. */
static enum ctl_option unmarked(enum ctl_option option)
{
	return (enum ctl_option)(option & ~CTL_OPTION_REQUIRED_MARK);
}

/* The getopt_long table of the options command recognizes, --help last. */
static void build_long_options(const struct ctl_command *command,
                               struct option long_options[CTL_COMMAND_OPTIONS_MAX + 2])
{
	size_t length = list_length(command->options);

	for (size_t i = 0; i < length; i++) {
		enum ctl_option option = unmarked(command->options[i]);
		const struct option_spec *spec = &option_specs[option];
		long_options[i] =
		    (struct option){spec->name, spec->shape == OPTION_FLAG ? no_argument : required_argument,
		                    NULL, GETOPT_VALUE_BASE + (int)option};
	}
	long_options[length] = (struct option){"help", no_argument, NULL, 'h'};
	long_options[length + 1] = (struct option){NULL, 0, NULL, 0};
}

/* Keeps value (NULL for a flag) as option's in arguments. */
static int keep_option(const char *command, enum ctl_option option, const char *value,
                       struct ctl_arguments *arguments, struct ctl_report *report)
{
	const struct option_spec *spec = &option_specs[option];
	char *member = (char *)arguments + spec->member;
	struct ctl_argument_list *list;

	switch (spec->shape) {
	case OPTION_FLAG:
		*(int *)(void *)member = 1;
		return 0;
	case OPTION_VALUE:
		if (*(const char **)(void *)member) {
			ctl_report_fail(report, CTL_EXIT_USAGE, "%s: --%s given twice", command, spec->name);
			return -1;
		}
		*(const char **)(void *)member = value;
		return 0;
	case OPTION_LIST:
	default:
		list = (struct ctl_argument_list *)(void *)member;
		if (list->count == spec->kept) {
			ctl_report_fail(report, CTL_EXIT_USAGE, "%s: --%s: at most %d %s", command,
			                spec->name, spec->bound, spec->noun);
			return -1;
		}
		list->values[list->count++] = value;
		return 0;
	}
}

/* Whether option was given: a flag set, a value or at least one of a list. */
static int option_given(const struct ctl_arguments *arguments, enum ctl_option option)
{
	const struct option_spec *spec = &option_specs[option];
	const char *member = (const char *)arguments + spec->member;

	switch (spec->shape) {
	case OPTION_FLAG:
		return *(const int *)(const void *)member != 0;
	case OPTION_VALUE:
		return *(const char *const *)(const void *)member != NULL;
	case OPTION_LIST:
	default:
		return ((const struct ctl_argument_list *)(const void *)member)->count > 0;
	}
}

/* The value of option (of a list, the first), or NULL. */
static const char *option_value(const struct ctl_arguments *arguments, enum ctl_option option)
{
	const struct option_spec *spec = &option_specs[option];
	const char *member = (const char *)arguments + spec->member;

	if (spec->shape == OPTION_LIST)
		return ((const struct ctl_argument_list *)(const void *)member)->values[0];
	if (spec->shape == OPTION_VALUE)
		return *(const char *const *)(const void *)member;
	return NULL;
}

/* Reads the words into *arguments, operand the one picked out before (or NULL). getopt_long
 * permutes, so the words that are no options are left at the end: any is an unexpected argument. */
static int parse_words(const char *command, int argc, char **argv, const struct option *long_options,
                       const char *operand, struct ctl_arguments *arguments, struct ctl_report *report)
{
	int option;

	memset(arguments, 0, sizeof(*arguments));
	arguments->operand = operand;
	opterr = 0;
	optind = 0; /* 0, not 1: glibc then forgets the state of an earlier parse in this process */
	while ((option = getopt_long(argc, argv, ":h", long_options, NULL)) != -1) {
		if (option == 'h') {
			arguments->help = 1;
		} else if (option == ':') {
			ctl_report_fail(report, CTL_EXIT_USAGE, "%s: option '%s' needs a value", command,
			                argv[optind - 1]);
			return -1;
		} else if (option > GETOPT_VALUE_BASE && option < GETOPT_VALUE_BASE + CTL_OPTION_COUNT) {
			if (keep_option(command, (enum ctl_option)(option - GETOPT_VALUE_BASE), optarg,
			                arguments, report) != 0)
				return -1;
		} else if (optopt > 0 && optopt < GETOPT_VALUE_BASE && optopt != 'h') {
			/* An unknown short option: its word is not yet passed inside a cluster ("-xh").
			 * ('h' as optopt is "--help=x", a long word.) */
			ctl_report_fail(report, CTL_EXIT_USAGE, "%s: unknown option '-%c'", command, optopt);
			return -1;
		} else {
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

/* Whether the long option word ("--name", or an unambiguous prefix of it, as getopt_long reads
 * it) takes a value. An ambiguous or unknown word takes none: getopt_long refuses it. */
static int takes_value(const struct option *long_options, const char *word)
{
	const struct option *match = NULL;
	size_t length, matches = 0;

	if (strncmp(word, "--", 2) != 0 || word[2] == '\0')
		return 0;
	word += 2;
	length = strlen(word);
	for (const struct option *o = long_options; o->name != NULL; o++) {
		if (strcmp(o->name, word) == 0)
			return o->has_arg == required_argument;
		if (strncmp(o->name, word, length) == 0) {
			match = o;
			matches++;
		}
	}
	return matches == 1 && match->has_arg == required_argument;
}

/* Takes the operand, the first word that is neither an option nor an option's value (or the first
 * after "--"), out of argv: words (OPERAND_WORDS_MAX) receives the others, *count how many,
 * *operand it or NULL. */
static int take_operand(const char *command, int argc, char **argv, const struct option *long_options,
                        char **words, int *count, const char **operand, struct ctl_report *report)
{
	*count = 0;
	*operand = NULL;
	if (argc > OPERAND_WORDS_MAX) {
		ctl_report_fail(report, CTL_EXIT_USAGE, "%s: too many arguments", command);
		return -1;
	}
	words[(*count)++] = argv[0];
	for (int i = 1; i < argc; i++) {
		const char *word = argv[i];
		if (*operand == NULL && word[0] != '-') {
			*operand = word;
			continue;
		}
		words[(*count)++] = argv[i];
		if (strcmp(word, "--") == 0) {
			/* Past "--" no word is an option (getopt_long stops there): the operand is the
			 * first, whatever it looks like ("-file"). */
			for (i++; i < argc; i++) {
				if (*operand == NULL)
					*operand = argv[i];
				else
					words[(*count)++] = argv[i];
			}
			break;
		}
		if (word[0] == '-' && strchr(word, '=') == NULL && i + 1 < argc &&
		    takes_value(long_options, word))
			words[(*count)++] = argv[++i];
	}
	return 0;
}

static int require_shown(const char *command, const char *help_name, const char *value, const char *shown,
                         struct ctl_report *report)
{
	if (value != NULL && value[0] != '\0')
		return 0;
	ctl_report_fail(report, CTL_EXIT_USAGE, "%s: %s is required (see dirauthctl %s --help)", command,
	                shown, help_name);
	return -1;
}

int ctl_command_require(const char *command, const char *value, const char *shown, struct ctl_report *report)
{
	return require_shown(command, command, value, shown, report);
}

/* The checks every command's words pass before its body runs (command.h). */
static int check_arguments(const struct ctl_command *command, const struct ctl_arguments *arguments,
                           struct ctl_report *report)
{
	const char *help_name = command->help_name != NULL ? command->help_name : command->name;
	size_t length;

	if (command->operand != NULL &&
	    require_shown(command->name, help_name, arguments->operand, command->operand, report) != 0)
		return -1;
	length = list_length(command->foreign);
	for (size_t i = 0; i < length; i++) {
		if (option_given(arguments, command->foreign[i])) {
			ctl_report_fail(report, CTL_EXIT_USAGE,
			                "%s: an option of another command (see dirauthctl %s --help)",
			                command->name, help_name);
			return -1;
		}
	}
	length = list_length(command->options);
	for (size_t i = 0; i < length; i++) {
		enum ctl_option option = unmarked(command->options[i]);
		char shown[64];

		if (option == command->options[i])
			continue;
		snprintf(shown, sizeof(shown), "--%s", option_specs[option].name);
		if (require_shown(command->name, help_name, option_value(arguments, option), shown, report) !=
		    0)
			return -1;
	}
	return 0;
}

int ctl_command_urls_distinct(const char *command, const char *option, const struct ctl_argument_list *urls,
                              struct ctl_report *report)
{
	for (size_t i = 0; i < urls->count; i++) {
		size_t len = ctl_exchange_url_length(urls->values[i]);
		for (size_t j = 0; j < i; j++) {
			if (ctl_exchange_url_length(urls->values[j]) == len &&
			    strncmp(urls->values[j], urls->values[i], len) == 0) {
				ctl_report_fail(report, CTL_EXIT_USAGE, "%s: %s %.200s given twice", command,
				                option, urls->values[i]);
				return -1;
			}
		}
	}
	return 0;
}

int ctl_command_read(const struct ctl_command *command, int argc, char **argv,
                     struct ctl_arguments *arguments, struct ctl_report *report)
{
	struct option long_options[CTL_COMMAND_OPTIONS_MAX + 2];
	char *words[OPERAND_WORDS_MAX];
	const char *operand = NULL;

	build_long_options(command, long_options);
	if (command->operand != NULL) {
		if (take_operand(command->name, argc, argv, long_options, words, &argc, &operand, report) !=
		    0)
			return -1;
		argv = words;
	}
	if (parse_words(command->name, argc, argv, long_options, operand, arguments, report) != 0)
		return -1;
	if (arguments->help) {
		fputs(command->usage, stdout);
		return -1;
	}
	return check_arguments(command, arguments, report);
}

int ctl_command_run(const struct ctl_command *command, int argc, char **argv, struct ctl_report *report)
{
	struct ctl_arguments arguments;

	if (ctl_command_read(command, argc, argv, &arguments, report) != 0)
		return report->exit_code;
	return command->run(&arguments, report);
}
