/*
 * fuzz_command.c: ctl_command_read() (ctl/command.h), the parser of every dirauthctl command
 * line, on arbitrary words. The input is split at each NUL byte into at most 80 words of at most
 * 200 bytes (a command line's words are C strings); its first byte picks one of two tables, one
 * with an operand and one without, between them every kind of option (values, flags, repeated
 * ones, required ones and a sibling's). Whatever the words: the parser answers 0 (the body would
 * run) or -1; a refusal is exit 64 with a message naming the command; an answer of 0 has every
 * required option and the operand given and not empty, every value one of the words (or inside
 * one, after its '='), and no list past its bound. The same words parsed twice give the same
 * answer: nothing of one parse leaks into the next.
 */
#include "ctl/command.h"
#include "ctl/report.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WORDS_MAX 80
#define WORD_MAX  200

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int never_run(const struct ctl_arguments *arguments, struct ctl_report *report)
{
	(void)arguments;
	(void)report;
	abort(); /* ctl_command_read never calls the body */
}

static const struct ctl_command plain = {
    .name = "fuzz plain",
    .help_name = "fuzz",
    .usage = "usage: dirauthctl fuzz plain\n",
    .options = {CTL_REQUIRED(CTL_OPTION_SERVICE), CTL_OPTION_NAME, CTL_OPTION_SERVER,
                CTL_REQUIRED(CTL_OPTION_KEY), CTL_OPTION_DRY_RUN, CTL_OPTION_LOG_KEY, CTL_OPTION_WITNESS_KEY,
                CTL_OPTION_SOURCE, CTL_OPTION_REASON, CTL_OPTION_NOW},
    .foreign = {CTL_OPTION_REASON},
    .run = never_run,
};

static const struct ctl_command with_operand = {
    .name = "fuzz show",
    .usage = "usage: dirauthctl fuzz show FILE\n",
    .operand = "FILE",
    .options = {CTL_OPTION_TRUST, CTL_REQUIRED(CTL_OPTION_OUT), CTL_OPTION_VERBOSE, CTL_OPTION_SERVER},
    .run = never_run,
};

struct words {
	int argc;
	char *argv[WORDS_MAX + 2];
	char text[WORDS_MAX + 1][WORD_MAX + 1];
};

static void words_make(struct words *w, const char *name, const uint8_t *data, size_t size)
{
	memset(w, 0, sizeof(*w));
	snprintf(w->text[0], sizeof(w->text[0]), "%s", name);
	w->argv[w->argc] = w->text[w->argc];
	w->argc++;
	size_t pos = 0;
	while (pos < size && w->argc <= WORDS_MAX) {
		size_t len = 0;
		while (pos + len < size && data[pos + len] != 0 && len < WORD_MAX)
			len++;
		memcpy(w->text[w->argc], data + pos, len);
		w->argv[w->argc] = w->text[w->argc];
		w->argc++;
		pos += len + 1;
	}
}

/* True when value is NULL or points into one of the words. */
static int from_words(const struct words *w, const char *value)
{
	if (value == NULL)
		return 1;
	for (int i = 0; i < w->argc; i++)
		if (value >= w->text[i] && value <= w->text[i] + WORD_MAX)
			return 1;
	return 0;
}

static int parse(const struct ctl_command *command, const struct words *given,
                 struct ctl_arguments *arguments, struct ctl_report *report)
{
	struct words w = *given;
	for (int i = 0; i < w.argc; i++)
		w.argv[i] = w.text[i];
	ctl_report_init(report);
	memset(arguments, 0, sizeof(*arguments));
	int rc = ctl_command_read(command, w.argc, w.argv, arguments, report);
	if (rc != 0 && rc != -1)
		abort();
	if (rc == -1 && !arguments->help) {
		if (report->exit_code != CTL_EXIT_USAGE ||
		    strncmp(report->message, command->name, strlen(command->name)) != 0)
			abort();
	}
	if (rc == 0) {
		const char *values[] = {arguments->service, arguments->key,      arguments->name,
		                        arguments->reason,  arguments->now_text, arguments->trust,
		                        arguments->out,     arguments->operand};
		for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
			if (!from_words(&w, values[i]))
				abort();
		if (command == &plain &&
		    (!arguments->service || !*arguments->service || !arguments->key || !*arguments->key))
			abort();
		if (command == &with_operand &&
		    (!arguments->out || !*arguments->out || !arguments->operand || !*arguments->operand))
			abort();
		const struct ctl_argument_list *lists[] = {&arguments->servers, &arguments->log_keys,
		                                           &arguments->witness_keys, &arguments->sources};
		for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
			if (lists[i]->count > CTL_ARGUMENT_LIST_MAX)
				abort();
			for (size_t j = 0; j < lists[i]->count; j++)
				if (!from_words(&w, lists[i]->values[j]))
					abort();
		}
	}
	/* The words themselves are argv's; a parse only reorders argv, never writes a word. */
	for (int i = 0; i < w.argc; i++)
		if (memcmp(w.text[i], given->text[i], sizeof(w.text[i])) != 0)
			abort();
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int quiet;
	if (!quiet) {
		quiet = 1;
		if (!freopen("/dev/null", "w", stdout)) /* --help prints the usage */
			return 0;
	}
	if (size == 0)
		return 0;
	const struct ctl_command *command = (data[0] & 1) ? &with_operand : &plain;
	static struct words words;
	words_make(&words, command->name, data + 1, size - 1);
	struct ctl_arguments first, second;
	struct ctl_report first_report, second_report;
	int rc = parse(command, &words, &first, &first_report);
	if (parse(command, &words, &second, &second_report) != rc ||
	    first_report.exit_code != second_report.exit_code ||
	    strcmp(first_report.message, second_report.message) != 0 || first.help != second.help)
		abort();
	return 0;
}
