/*
 * check_command.c: the one parser of every dirauthctl command line (ctl/command.h), driven
 * directly with small command entries of the test's own.
 *
 * Each entry's body records the arguments it received, so that a test asserts what reached the
 * body when the words pass, and that the body was not called when they are refused. Every refusal
 * is asserted by its exact message and its sysexits status (64, usage), as a script or a person
 * reading stderr relies on them.
 */
#include "ctl/command.h"
#include "ctl/monitor.h"
#include "ctl/proof.h"
#include "ctl/report.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* EX_USAGE of sysexits(3): every refusal of the parser. */
#define USAGE_STATUS 64
#define WORDS_MAX    80
#define WORD_MAX     64

/* What the last body call received. */
static struct {
	int calls;
	struct ctl_arguments arguments;
	int status; /* what the body returns */
} received;

static int record_body(const struct ctl_arguments *arguments, struct ctl_report *report)
{
	received.calls++;
	received.arguments = *arguments;
	if (received.status != 0)
		ctl_report_fail(report, received.status, "test make: the body failed");
	return received.status;
}

/* A command without an operand: two required options, in the table's order service then key
 * (the enum's order is key then service), lists, a flag, and a sibling's option (--reason). Its
 * messages point at "dirauthctl test --help". */
static const struct ctl_command make_command = {
    .name = "test make",
    .help_name = "test",
    .usage = "usage: dirauthctl test make --service S --key K\n",
    .options = {CTL_OPTION_NAME, CTL_REQUIRED(CTL_OPTION_SERVICE), CTL_OPTION_SERVER,
                CTL_REQUIRED(CTL_OPTION_KEY), CTL_OPTION_DRY_RUN, CTL_OPTION_LOG_KEY, CTL_OPTION_SOURCE,
                CTL_OPTION_REASON},
    .foreign = {CTL_OPTION_REASON},
    .run = record_body,
};

/* A command with one operand, FILE; no help_name, so its messages name it. */
static const struct ctl_command show_command = {
    .name = "show",
    .usage = "usage: dirauthctl show [--trust T] [--out O] [--verbose] FILE\n",
    .operand = "FILE",
    .options = {CTL_OPTION_TRUST, CTL_OPTION_OUT, CTL_OPTION_VERBOSE},
    .run = record_body,
};

/* A command line: argv points into text, which getopt_long may permute but not write. */
struct words {
	int argc;
	char *argv[WORDS_MAX + 1];
	char text[WORDS_MAX][WORD_MAX];
};

static void words_set(struct words *words, const char *const *list)
{
	memset(words, 0, sizeof(*words));
	for (; list[words->argc] != NULL; words->argc++) {
		ck_assert_int_lt(words->argc, WORDS_MAX);
		ck_assert_uint_lt(strlen(list[words->argc]), WORD_MAX);
		strcpy(words->text[words->argc], list[words->argc]);
		words->argv[words->argc] = words->text[words->argc];
	}
}

/* Appends word to words. */
static void words_add(struct words *words, const char *word)
{
	ck_assert_int_lt(words->argc, WORDS_MAX);
	ck_assert_uint_lt(strlen(word), WORD_MAX);
	strcpy(words->text[words->argc], word);
	words->argv[words->argc] = words->text[words->argc];
	words->argc++;
}

/* Runs command on words with a fresh report and a fresh record of the body. */
static int run_words(const struct ctl_command *command, struct words *words, struct ctl_report *report)
{
	int status = received.status;

	memset(&received, 0, sizeof(received));
	received.status = status;
	ctl_report_init(report);
	return ctl_command_run(command, words->argc, words->argv, report);
}

static int run_list(const struct ctl_command *command, const char *const *list, struct words *words,
                    struct ctl_report *report)
{
	words_set(words, list);
	return run_words(command, words, report);
}

/* The words pass: status 0, no message, the body called once. */
static void expect_passed(int status, const struct ctl_report *report)
{
	ck_assert_int_eq(status, 0);
	ck_assert_int_eq(report->exit_code, CTL_EXIT_OK);
	ck_assert_str_eq(report->message, "");
	ck_assert_int_eq(received.calls, 1);
}

/* The words are refused with exactly message and status 64, and the body is not called. */
static void expect_refused(int status, const struct ctl_report *report, const char *message)
{
	ck_assert_int_eq(status, USAGE_STATUS);
	ck_assert_int_eq(report->exit_code, USAGE_STATUS);
	ck_assert_str_eq(report->message, message);
	ck_assert_int_eq(received.calls, 0);
}

static void expect_list_refused(const struct ctl_command *command, const char *const *list,
                                const char *message)
{
	struct words words;
	struct ctl_report report;

	expect_refused(run_list(command, list, &words, &report), &report, message);
}

/* stdout, redirected into a temporary file while a parse runs. */
struct captured {
	int saved;
	FILE *file;
	char text[1024];
};

static void capture_begin(struct captured *captured)
{
	fflush(stdout);
	captured->file = tmpfile();
	ck_assert_ptr_nonnull(captured->file);
	captured->saved = dup(STDOUT_FILENO);
	ck_assert_int_ge(captured->saved, 0);
	ck_assert_int_ge(dup2(fileno(captured->file), STDOUT_FILENO), 0);
}

static void capture_end(struct captured *captured)
{
	size_t length;

	fflush(stdout);
	ck_assert_int_ge(dup2(captured->saved, STDOUT_FILENO), 0);
	close(captured->saved);
	rewind(captured->file);
	length = fread(captured->text, 1, sizeof(captured->text) - 1, captured->file);
	captured->text[length] = '\0';
	fclose(captured->file);
}

START_TEST(test_words_reach_the_body)
{
	static const char *const list[] = {"make",     "--service", "svc",       "--name",   "n",
	                                   "--key",    "k.key",     "--dry-run", "--server", "http://a",
	                                   "--server", "http://b",  NULL};
	struct words words;
	struct ctl_report report;

	expect_passed(run_list(&make_command, list, &words, &report), &report);
	ck_assert_str_eq(received.arguments.service, "svc");
	ck_assert_str_eq(received.arguments.name, "n");
	ck_assert_str_eq(received.arguments.key, "k.key");
	ck_assert_int_eq(received.arguments.dry_run, 1);
	ck_assert_uint_eq(received.arguments.servers.count, 2);
	ck_assert_str_eq(received.arguments.servers.values[0], "http://a");
	ck_assert_str_eq(received.arguments.servers.values[1], "http://b");
	ck_assert_ptr_null(received.arguments.servers.values[2]);
	ck_assert_ptr_null(received.arguments.out);
	ck_assert_ptr_null(received.arguments.operand);
	ck_assert_int_eq(received.arguments.verbose, 0);
	ck_assert_int_eq(received.arguments.help, 0);
}
END_TEST

START_TEST(test_body_status_is_the_exit_status)
{
	static const char *const list[] = {"make", "--service", "s", "--key", "k", NULL};
	struct words words;
	struct ctl_report report;
	int status;

	received.status = CTL_EXIT_DATA;
	status = run_list(&make_command, list, &words, &report);
	received.status = 0;
	ck_assert_int_eq(status, 65);
	ck_assert_int_eq(report.exit_code, 65);
	ck_assert_str_eq(report.message, "test make: the body failed");
	ck_assert_int_eq(received.calls, 1);
}
END_TEST

START_TEST(test_unknown_option)
{
	static const char *const long_word[] = {"make", "--service", "s", "--colour", "--key", "k", NULL};
	static const char *const with_value[] = {"make", "--colour=red", "--service", "s", "--key", "k",
	                                         NULL};
	static const char *const short_word[] = {"make", "-x", "--service", "s", "--key", "k", NULL};
	static const char *const cluster[] = {"make", "--service", "s", "-xh", "--key", "k", NULL};
	static const char *const flag_with_value[] = {"make",  "--dry-run=1", "--service", "s",
	                                              "--key", "k",           NULL};
	static const char *const other_table[] = {"show", "--service", "s", "FILE", NULL};

	expect_list_refused(&make_command, long_word, "test make: unknown option '--colour'");
	expect_list_refused(&make_command, with_value, "test make: unknown option '--colour=red'");
	expect_list_refused(&make_command, short_word, "test make: unknown option '-x'");
	/* Inside a cluster, the option is named, not the word before the cluster. */
	expect_list_refused(&make_command, cluster, "test make: unknown option '-x'");
	/* A flag takes no value: given one, it is refused as the word it is. */
	expect_list_refused(&make_command, flag_with_value, "test make: unknown option '--dry-run=1'");
	/* An option is known only to the commands whose table lists it. */
	expect_list_refused(&show_command, other_table, "show: unknown option '--service'");
}
END_TEST

START_TEST(test_foreign_option)
{
	static const char *const list[] = {"make", "--service", "s", "--key", "k", "--reason", "r", NULL};
	/* The sibling's option is refused before a missing required option is. */
	static const char *const alone[] = {"make", "--reason", "r", NULL};

	expect_list_refused(&make_command, list,
	                    "test make: an option of another command (see dirauthctl test --help)");
	expect_list_refused(&make_command, alone,
	                    "test make: an option of another command (see dirauthctl test --help)");
}
END_TEST

START_TEST(test_missing_value)
{
	static const char *const at_end[] = {"make", "--service", "s", "--key", "k", "--name", NULL};
	static const char *const prefix_at_end[] = {"make", "--service", "s", "--key", "k", "--na", NULL};
	static const char *const list_at_end[] = {"make", "--service", "s", "--key", "k", "--server", NULL};
	static const char *const operand_command[] = {"show", "FILE", "--out", NULL};

	expect_list_refused(&make_command, at_end, "test make: option '--name' needs a value");
	/* The word is quoted as it was typed. */
	expect_list_refused(&make_command, prefix_at_end, "test make: option '--na' needs a value");
	expect_list_refused(&make_command, list_at_end, "test make: option '--server' needs a value");
	expect_list_refused(&show_command, operand_command, "show: option '--out' needs a value");
}
END_TEST

START_TEST(test_value_given_twice)
{
	static const char *const twice[] = {"make", "--service", "s", "--key", "k", "--key", "k2", NULL};
	static const char *const with_equals[] = {"make", "--service=s", "--service=t", "--key", "k", NULL};

	/* One value each: a second is refused, not taken in place of the first. */
	expect_list_refused(&make_command, twice, "test make: --key given twice");
	expect_list_refused(&make_command, with_equals, "test make: --service given twice");
}
END_TEST

START_TEST(test_empty_value_after_equals)
{
	/* "--name=" gives --name the empty value: an option not required passes it to the body as
	 * given (not NULL), for the body to judge. */
	static const char *const list[] = {"make", "--name=", "--service", "s", "--key", "k", NULL};
	struct words words;
	struct ctl_report report;

	expect_passed(run_list(&make_command, list, &words, &report), &report);
	ck_assert_ptr_nonnull(received.arguments.name);
	ck_assert_str_eq(received.arguments.name, "");
}
END_TEST

START_TEST(test_empty_required_value_is_missing)
{
	static const char *const equals[] = {"make", "--service=", "--key", "k", NULL};
	static const char *const separate[] = {"make", "--service", "s", "--key", "", NULL};

	expect_list_refused(&make_command, equals,
	                    "test make: --service is required (see dirauthctl test --help)");
	expect_list_refused(&make_command, separate,
	                    "test make: --key is required (see dirauthctl test --help)");
}
END_TEST

START_TEST(test_missing_required_option)
{
	static const char *const no_key[] = {"make", "--service", "s", NULL};
	static const char *const no_service[] = {"make", "--key", "k", NULL};
	/* Both missing: the first of the table (service) is named, not the first of the enum (key). */
	static const char *const neither[] = {"make", "--name", "n", NULL};
	static const char *const nothing[] = {"make", NULL};

	expect_list_refused(&make_command, no_key,
	                    "test make: --key is required (see dirauthctl test --help)");
	expect_list_refused(&make_command, no_service,
	                    "test make: --service is required (see dirauthctl test --help)");
	expect_list_refused(&make_command, neither,
	                    "test make: --service is required (see dirauthctl test --help)");
	expect_list_refused(&make_command, nothing,
	                    "test make: --service is required (see dirauthctl test --help)");
}
END_TEST

START_TEST(test_unexpected_argument)
{
	static const char *const second_operand[] = {"show", "FILE", "extra", NULL};
	static const char *const among_options[] = {"show",  "--trust", "t",     "FILE",
	                                            "--out", "o",       "extra", NULL};
	static const char *const no_operand[] = {"make", "--service", "s", "stray", "--key", "k", NULL};
	static const char *const dash[] = {"make", "--service", "s", "--key", "k", "-", NULL};

	expect_list_refused(&show_command, second_operand, "show: unexpected argument 'extra'");
	expect_list_refused(&show_command, among_options, "show: unexpected argument 'extra'");
	expect_list_refused(&make_command, no_operand, "test make: unexpected argument 'stray'");
	expect_list_refused(&make_command, dash, "test make: unexpected argument '-'");
}
END_TEST

START_TEST(test_missing_operand)
{
	static const char *const options_only[] = {"show", "--trust", "t", "--verbose", NULL};
	static const char *const nothing[] = {"show", NULL};
	/* The word after an option that takes a value is that value, not the operand. */
	static const char *const value_only[] = {"show", "--out", "FILE", NULL};

	expect_list_refused(&show_command, options_only,
	                    "show: FILE is required (see dirauthctl show --help)");
	expect_list_refused(&show_command, nothing, "show: FILE is required (see dirauthctl show --help)");
	expect_list_refused(&show_command, value_only, "show: FILE is required (see dirauthctl show --help)");
}
END_TEST

START_TEST(test_operand_among_options)
{
	static const char *const first[] = {"show", "FILE", "--trust", "t", NULL};
	static const char *const middle[] = {"show", "--trust", "t", "FILE", "--out", "o", NULL};
	/* A value that starts with '-' is still the option's. */
	static const char *const dashed_value[] = {"show", "--out", "-o", "FILE", NULL};
	struct words words;
	struct ctl_report report;

	expect_passed(run_list(&show_command, first, &words, &report), &report);
	ck_assert_str_eq(received.arguments.operand, "FILE");
	ck_assert_str_eq(received.arguments.trust, "t");

	expect_passed(run_list(&show_command, middle, &words, &report), &report);
	ck_assert_str_eq(received.arguments.operand, "FILE");
	ck_assert_str_eq(received.arguments.trust, "t");
	ck_assert_str_eq(received.arguments.out, "o");

	expect_passed(run_list(&show_command, dashed_value, &words, &report), &report);
	ck_assert_str_eq(received.arguments.operand, "FILE");
	ck_assert_str_eq(received.arguments.out, "-o");
}
END_TEST

START_TEST(test_double_dash_before_operand)
{
	static const char *const list[] = {"show", "--trust", "t", "--", "FILE", NULL};
	static const char *const then_extra[] = {"show", "--", "FILE", "extra", NULL};
	/* Past "--", a word that looks like an option is the operand. */
	static const char *const dashed[] = {"show", "--trust", "t", "--", "-FILE", NULL};
	static const char *const option_word[] = {"show", "--", "--out", NULL};
	static const char *const after_operand[] = {"show", "FILE", "--", "-x", NULL};
	struct words words;
	struct ctl_report report;

	expect_passed(run_list(&show_command, list, &words, &report), &report);
	ck_assert_str_eq(received.arguments.operand, "FILE");
	ck_assert_str_eq(received.arguments.trust, "t");

	expect_list_refused(&show_command, then_extra, "show: unexpected argument 'extra'");

	expect_passed(run_list(&show_command, dashed, &words, &report), &report);
	ck_assert_str_eq(received.arguments.operand, "-FILE");
	ck_assert_str_eq(received.arguments.trust, "t");

	expect_passed(run_list(&show_command, option_word, &words, &report), &report);
	ck_assert_str_eq(received.arguments.operand, "--out");
	ck_assert_ptr_null(received.arguments.out);

	expect_list_refused(&show_command, after_operand, "show: unexpected argument '-x'");
}
END_TEST

START_TEST(test_unambiguous_prefix_takes_its_value)
{
	static const char *const separate[] = {"show", "--t", "VALUE", "FILE", NULL};
	static const char *const equals[] = {"show", "FILE", "--tr=VALUE", NULL};
	/* A flag's prefix takes no value: the word after it is the operand. */
	static const char *const flag[] = {"show", "--v", "FILE", NULL};
	static const char *const required[] = {"make", "--servi", "s", "--k", "k", NULL};
	struct words words;
	struct ctl_report report;

	expect_passed(run_list(&show_command, separate, &words, &report), &report);
	ck_assert_str_eq(received.arguments.trust, "VALUE");
	ck_assert_str_eq(received.arguments.operand, "FILE");

	expect_passed(run_list(&show_command, equals, &words, &report), &report);
	ck_assert_str_eq(received.arguments.trust, "VALUE");
	ck_assert_str_eq(received.arguments.operand, "FILE");

	expect_passed(run_list(&show_command, flag, &words, &report), &report);
	ck_assert_int_eq(received.arguments.verbose, 1);
	ck_assert_str_eq(received.arguments.operand, "FILE");

	/* "--servi" is --service alone ("--serv" is --service or --server), "--k" is --key. */
	expect_passed(run_list(&make_command, required, &words, &report), &report);
	ck_assert_str_eq(received.arguments.service, "s");
	ck_assert_str_eq(received.arguments.key, "k");
}
END_TEST

START_TEST(test_ambiguous_prefix)
{
	/* --se is --service or --server. */
	static const char *const list[] = {"make", "--se", "s", "--key", "k", NULL};
	static const char *const serv[] = {"make", "--serv=s", "--key", "k", NULL};

	expect_list_refused(&make_command, list, "test make: unknown option '--se'");
	expect_list_refused(&make_command, serv, "test make: unknown option '--serv=s'");
}
END_TEST

/* Runs make with count values of option (besides the required ones). */
static int run_repeated(const char *option, size_t count, struct words *words, struct ctl_report *report)
{
	static const char *const required[] = {"make", "--service", "s", "--key", "k", NULL};

	words_set(words, required);
	for (size_t i = 0; i < count; i++) {
		char value[WORD_MAX];
		snprintf(value, sizeof(value), "value-%zu", i);
		words_add(words, option);
		words_add(words, value);
	}
	return run_words(&make_command, words, report);
}

/* option keeps count values, in order. */
static void expect_kept(const char *option, const struct ctl_argument_list *list, size_t count)
{
	struct words words;
	struct ctl_report report;

	expect_passed(run_repeated(option, count, &words, &report), &report);
	ck_assert_uint_eq(list->count, count);
	for (size_t i = 0; i < count; i++) {
		char value[WORD_MAX];
		snprintf(value, sizeof(value), "value-%zu", i);
		ck_assert_str_eq(list->values[i], value);
	}
}

START_TEST(test_repeated_option_bounds)
{
	struct words words;
	struct ctl_report report;

	ck_assert_int_eq(CTL_COMMAND_SERVERS_MAX, 32);
	expect_kept("--server", &received.arguments.servers, CTL_COMMAND_SERVERS_MAX);
	expect_refused(run_repeated("--server", CTL_COMMAND_SERVERS_MAX + 1, &words, &report), &report,
	               "test make: --server: at most 32 servers");

	ck_assert_int_eq(CTL_MONITOR_SOURCES_MAX, 16);
	expect_kept("--source", &received.arguments.sources, CTL_MONITOR_SOURCES_MAX);
	expect_refused(run_repeated("--source", CTL_MONITOR_SOURCES_MAX + 1, &words, &report), &report,
	               "test make: --source: at most 16 sources");

	/* --log-key keeps one past its bound, for ctl_log_pins_parse to refuse; the parser refuses the
	 * one after that. */
	ck_assert_int_eq(CTL_LOG_KEYS_MAX, 32);
	expect_kept("--log-key", &received.arguments.log_keys, CTL_LOG_KEYS_MAX + 1);
	expect_refused(run_repeated("--log-key", CTL_LOG_KEYS_MAX + 2, &words, &report), &report,
	               "test make: --log-key: at most 32 log keys");
}
END_TEST

START_TEST(test_too_many_words_with_operand)
{
	struct words words;
	struct ctl_report report;
	static const char *const first[] = {"show", "FILE", NULL};

	words_set(&words, first);
	while (words.argc < 64)
		words_add(&words, "--verbose");
	expect_passed(run_words(&show_command, &words, &report), &report);
	words_add(&words, "--verbose");
	expect_refused(run_words(&show_command, &words, &report), &report, "show: too many arguments");
}
END_TEST

/* --help or -h in list: the usage on stdout, status 0, nothing in the report, no body. */
static void expect_help(const struct ctl_command *command, const char *const *list)
{
	struct words words;
	struct ctl_report report;
	struct captured captured;
	int status;

	capture_begin(&captured);
	status = run_list(command, list, &words, &report);
	capture_end(&captured);
	ck_assert_int_eq(status, 0);
	ck_assert_int_eq(report.exit_code, CTL_EXIT_OK);
	ck_assert_str_eq(report.message, "");
	ck_assert_str_eq(captured.text, command->usage);
	ck_assert_int_eq(received.calls, 0);
}

START_TEST(test_help_prints_usage)
{
	/* Required options and the operand are not asked for beside --help. */
	static const char *const help[] = {"make", "--help", NULL};
	static const char *const short_help[] = {"make", "-h", NULL};
	static const char *const among[] = {"make", "--service", "s", "--help", "--key", "k", NULL};
	static const char *const prefix[] = {"make", "--he", NULL};
	static const char *const operand_help[] = {"show", "--help", NULL};
	static const char *const operand_short[] = {"show", "FILE", "-h", NULL};

	expect_help(&make_command, help);
	expect_help(&make_command, short_help);
	expect_help(&make_command, among);
	expect_help(&make_command, prefix);
	expect_help(&show_command, operand_help);
	expect_help(&show_command, operand_short);
}
END_TEST

/* list is refused with message, and nothing is printed on stdout. */
static void expect_refused_quietly(const struct ctl_command *command, const char *const *list,
                                   const char *message)
{
	struct words words;
	struct ctl_report report;
	struct captured captured;
	int status;

	capture_begin(&captured);
	status = run_list(command, list, &words, &report);
	capture_end(&captured);
	expect_refused(status, &report, message);
	ck_assert_str_eq(captured.text, "");
}

START_TEST(test_help_after_bad_word_refused)
{
	static const char *const unknown[] = {"make", "--colour", "--help", NULL};
	static const char *const after_help[] = {"make", "--help", "--colour", NULL};
	static const char *const stray[] = {"make", "stray", "--help", NULL};
	static const char *const no_value[] = {"make", "-h", "--name", NULL};
	static const char *const extra_operand[] = {"show", "FILE", "extra", "-h", NULL};

	expect_refused_quietly(&make_command, unknown, "test make: unknown option '--colour'");
	expect_refused_quietly(&make_command, after_help, "test make: unknown option '--colour'");
	expect_refused_quietly(&make_command, stray, "test make: unexpected argument 'stray'");
	expect_refused_quietly(&make_command, no_value, "test make: option '--name' needs a value");
	expect_refused_quietly(&show_command, extra_operand, "show: unexpected argument 'extra'");
}
END_TEST

START_TEST(test_second_parse_starts_clean)
{
	/* The first parse stops inside a cluster of short options, with "h" still to read, and after
	 * getopt_long permuted its words; the second must read only its own. */
	static const char *const first[] = {"make", "stray", "-xh", NULL};
	static const char *const second[] = {"make", "--service", "s", "--key", "k", NULL};
	static const char *const third[] = {"show", "FILE", "--trust", "t", NULL};
	struct words first_words, words;
	struct ctl_report report;
	struct captured captured;
	int status;

	expect_refused(run_list(&make_command, first, &first_words, &report), &report,
	               "test make: unknown option '-x'");

	capture_begin(&captured);
	status = run_list(&make_command, second, &words, &report);
	capture_end(&captured);
	expect_passed(status, &report);
	ck_assert_str_eq(captured.text, "");
	ck_assert_int_eq(received.arguments.help, 0);
	ck_assert_str_eq(received.arguments.service, "s");

	expect_passed(run_list(&show_command, third, &words, &report), &report);
	ck_assert_str_eq(received.arguments.operand, "FILE");
	ck_assert_str_eq(received.arguments.trust, "t");
}
END_TEST

START_TEST(test_read_without_body)
{
	static const char *const list[] = {"show", "FILE", "--out", "o", NULL};
	static const char *const help[] = {"show", "--help", NULL};
	static const char *const refused[] = {"show", NULL};
	struct ctl_arguments arguments;
	struct ctl_report report;
	struct captured captured;
	struct words words;

	memset(&received, 0, sizeof(received));
	words_set(&words, list);
	ctl_report_init(&report);
	ck_assert_int_eq(ctl_command_read(&show_command, words.argc, words.argv, &arguments, &report), 0);
	ck_assert_str_eq(arguments.operand, "FILE");
	ck_assert_str_eq(arguments.out, "o");
	ck_assert_int_eq(report.exit_code, CTL_EXIT_OK);

	words_set(&words, help);
	ctl_report_init(&report);
	capture_begin(&captured);
	ck_assert_int_eq(ctl_command_read(&show_command, words.argc, words.argv, &arguments, &report), -1);
	capture_end(&captured);
	ck_assert_str_eq(captured.text, show_command.usage);
	ck_assert_int_eq(report.exit_code, CTL_EXIT_OK);
	ck_assert_str_eq(report.message, "");

	words_set(&words, refused);
	ctl_report_init(&report);
	ck_assert_int_eq(ctl_command_read(&show_command, words.argc, words.argv, &arguments, &report), -1);
	ck_assert_int_eq(report.exit_code, USAGE_STATUS);
	ck_assert_str_eq(report.message, "show: FILE is required (see dirauthctl show --help)");
	ck_assert_int_eq(received.calls, 0);
}
END_TEST

START_TEST(test_require)
{
	struct ctl_report report;

	ctl_report_init(&report);
	ck_assert_int_eq(ctl_command_require("health", "http://a", "--server (or --dry-run)", &report), 0);
	ck_assert_int_eq(report.exit_code, CTL_EXIT_OK);

	ck_assert_int_eq(ctl_command_require("health", NULL, "--server (or --dry-run)", &report), -1);
	ck_assert_int_eq(report.exit_code, USAGE_STATUS);
	ck_assert_str_eq(report.message,
	                 "health: --server (or --dry-run) is required (see dirauthctl health --help)");

	ctl_report_init(&report);
	ck_assert_int_eq(ctl_command_require("health", "", "--server", &report), -1);
	ck_assert_int_eq(report.exit_code, USAGE_STATUS);
	ck_assert_str_eq(report.message, "health: --server is required (see dirauthctl health --help)");
}
END_TEST

static Suite *command_suite(void)
{
	Suite *suite = suite_create("command");
	TCase *tcase = tcase_create("parse");

	tcase_add_test(tcase, test_words_reach_the_body);
	tcase_add_test(tcase, test_body_status_is_the_exit_status);
	tcase_add_test(tcase, test_unknown_option);
	tcase_add_test(tcase, test_foreign_option);
	tcase_add_test(tcase, test_missing_value);
	tcase_add_test(tcase, test_value_given_twice);
	tcase_add_test(tcase, test_empty_value_after_equals);
	tcase_add_test(tcase, test_empty_required_value_is_missing);
	tcase_add_test(tcase, test_missing_required_option);
	tcase_add_test(tcase, test_unexpected_argument);
	tcase_add_test(tcase, test_missing_operand);
	tcase_add_test(tcase, test_operand_among_options);
	tcase_add_test(tcase, test_double_dash_before_operand);
	tcase_add_test(tcase, test_unambiguous_prefix_takes_its_value);
	tcase_add_test(tcase, test_ambiguous_prefix);
	tcase_add_test(tcase, test_repeated_option_bounds);
	tcase_add_test(tcase, test_too_many_words_with_operand);
	tcase_add_test(tcase, test_help_prints_usage);
	tcase_add_test(tcase, test_help_after_bad_word_refused);
	tcase_add_test(tcase, test_second_parse_starts_clean);
	tcase_add_test(tcase, test_read_without_body);
	tcase_add_test(tcase, test_require);
	suite_add_tcase(suite, tcase);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(command_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed == 0 ? 0 : 1;
}
