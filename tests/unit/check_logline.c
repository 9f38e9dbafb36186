/*
 * check_logline.c: the log line's shape (logline.h): the time in UTC to the millisecond, the
 * epoch field ("-" for none), the namespace part, control bytes made harmless, the cut at
 * LOGLINE_MAX; one write per line, and the lines of several threads whole; the current epoch of
 * a schedule by a clock.
 */
#define _GNU_SOURCE /* fopencookie */
#include "logline/logline.h"

#include "clock/clock.h"
#include "base/error.h"
#include "schedule/schedule.h"
#include "test_support.h"

#include <check.h>

#include <pthread.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The shape docs/operating.md gives a line, for lines of the program "check". */
#define LINE_PATTERN                                                                                         \
	"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z epoch (-|[0-9]+) check: "        \
	"(namespace [^ :]+: )?[^[:cntrl:]]*\n$"

static void assert_time(time_t seconds, long nanoseconds, const char *expected)
{
	struct timespec t = {seconds, nanoseconds};
	char out[LOGLINE_TIME_SIZE];
	ck_assert_int_eq(logline_time_format(&t, out), 0);
	ck_assert_str_eq(out, expected);
}

START_TEST(test_time_utc_to_the_millisecond)
{
	assert_time(0, 0, "1970-01-01T00:00:00.000Z");
	assert_time(1796558400, 123000000, "2026-12-06T12:00:00.123Z");
	/* Truncated, never rounded up into the next second. */
	assert_time(1796558400, 123999999, "2026-12-06T12:00:00.123Z");
	assert_time(1796558400 + 86399, 999999999, "2026-12-07T11:59:59.999Z");
	assert_time(951782400, 1000000, "2000-02-29T00:00:00.001Z");
	/* UTC whatever the process's time zone. */
	setenv("TZ", "Asia/Kolkata", 1);
	tzset();
	assert_time(1796558400, 5000000, "2026-12-06T12:00:00.005Z");
	unsetenv("TZ");
	tzset();
	/* A year of five digits keeps the line's shape and says it is wrong. */
	struct timespec far = {(time_t)253402300800LL, 0};
	char out[LOGLINE_TIME_SIZE];
	ck_assert_int_eq(logline_time_format(&far, out), DIRAUTH_ERR_BOUNDS);
	ck_assert_str_eq(out, "0000-00-00T00:00:00.000Z");
}
END_TEST

START_TEST(test_fields)
{
	struct timespec t = {1796558400, 123456789};
	char line[LOGLINE_MAX + 1];
	size_t len = logline_format(line, &t, "dirauthd", 12, "mix", "voted: %d records", 3);
	ck_assert_str_eq(line,
	                 "2026-12-06T12:00:00.123Z epoch 12 dirauthd: namespace mix: voted: 3 records\n");
	ck_assert_uint_eq(len, strlen(line));
	logline_format(line, &t, "dirauth-signer", LOGLINE_EPOCH_NONE, NULL, "listening on %s", "s.sock");
	ck_assert_str_eq(line, "2026-12-06T12:00:00.123Z epoch - dirauth-signer: listening on s.sock\n");
	logline_format(line, &t, "dirauthd", 0, NULL, "stopping");
	ck_assert_str_eq(line, "2026-12-06T12:00:00.123Z epoch 0 dirauthd: stopping\n");
	logline_format(line, &t, "dirauthd", LOGLINE_EPOCH_NONE - 1, NULL, "far");
	ck_assert_str_eq(line, "2026-12-06T12:00:00.123Z epoch 18446744073709551614 dirauthd: far\n");
	/* The epoch is greppable as " epoch N ", and N never matches a longer number. */
	logline_format(line, &t, "dirauthd", 1234, NULL, "x");
	ck_assert_ptr_nonnull(strstr(line, " epoch 1234 "));
	ck_assert_ptr_null(strstr(line, " epoch 123 "));
	/* Control bytes, a newline among them, cannot make a second line. */
	logline_format(line, &t, "dirauthd", 1, "mix", "a\nb\tc\rd%ce", 0x7f);
	ck_assert_str_eq(line, "2026-12-06T12:00:00.123Z epoch 1 dirauthd: namespace mix: a?b?c?d?e\n");
	/* UTF-8 passes. */
	logline_format(line, &t, "dirauthd", 1, NULL, "caf\xc3\xa9");
	ck_assert_str_eq(line, "2026-12-06T12:00:00.123Z epoch 1 dirauthd: caf\xc3\xa9\n");
}
END_TEST

/* Whether text[0..len) is valid UTF-8 (for the bytes this test writes: 1 or 2 bytes each). */
static int utf8_whole(const char *text, size_t len)
{
	for (size_t i = 0; i < len;) {
		unsigned char c = (unsigned char)text[i];
		if (c < 0x80) {
			i++;
		} else if ((c & 0xE0) == 0xC0) {
			if (i + 1 >= len || ((unsigned char)text[i + 1] & 0xC0) != 0x80)
				return 0;
			i += 2;
		} else {
			return 0;
		}
	}
	return 1;
}

START_TEST(test_cut_at_the_bound)
{
	struct timespec t = {0, 0};
	char line[LOGLINE_MAX + 1];
	const char *prefix = "1970-01-01T00:00:00.000Z epoch 7 dirauthd: ";
	size_t fits = LOGLINE_MAX - 1 - strlen(prefix); /* the newline takes the last byte */
	char *sentence = malloc(100001);
	ck_assert_ptr_nonnull(sentence);
	memset(sentence, 'a', 100000);
	sentence[100000] = 0;

	/* Exactly as long as a line may be: whole. */
	sentence[fits] = 0;
	size_t len = logline_format(line, &t, "dirauthd", 7, NULL, "%s", sentence);
	ck_assert_uint_eq(len, LOGLINE_MAX);
	ck_assert_uint_eq(strlen(line), LOGLINE_MAX);
	ck_assert_int_eq(line[LOGLINE_MAX - 1], '\n');
	ck_assert_int_eq(strncmp(line + LOGLINE_MAX - 4, "aaa\n", 4), 0);
	/* One byte more: cut, marked, still LOGLINE_MAX bytes and one line. */
	sentence[fits] = 'b';
	sentence[fits + 1] = 0;
	len = logline_format(line, &t, "dirauthd", 7, NULL, "%s", sentence);
	ck_assert_uint_eq(len, LOGLINE_MAX);
	ck_assert_str_eq(line + LOGLINE_MAX - 1 - strlen(LOGLINE_CUT), LOGLINE_CUT "\n");
	ck_assert_int_eq(strncmp(line, prefix, strlen(prefix)), 0);
	ck_assert_ptr_null(strchr(line, 'b'));
	/* Far longer: the same bound. */
	sentence[fits + 1] = 'a';
	len = logline_format(line, &t, "dirauthd", 7, NULL, "%s", sentence);
	ck_assert_uint_eq(len, LOGLINE_MAX);
	ck_assert_ptr_eq(strchr(line, '\n'), line + LOGLINE_MAX - 1);
	/* A cut never splits a UTF-8 character. */
	for (size_t shift = 0; shift < 2; shift++) {
		memset(sentence, 'a', shift);
		for (size_t i = shift; i + 1 < 10000; i += 2)
			memcpy(sentence + i, "\xc3\xa9", 2);
		sentence[10000 - (10000 - shift) % 2] = 0;
		len = logline_format(line, &t, "dirauthd", 7, NULL, "%s", sentence);
		ck_assert_uint_le(len, LOGLINE_MAX);
		ck_assert_uint_ge(len, LOGLINE_MAX - 1);
		ck_assert_str_eq(line + len - 1 - strlen(LOGLINE_CUT), LOGLINE_CUT "\n");
		ck_assert(utf8_whole(line, len));
	}
	/* A namespace name too long for a line is cut like a sentence. */
	memset(sentence, 'n', 5000);
	sentence[5000] = 0;
	len = logline_format(line, &t, "dirauthd", 7, sentence, "never seen");
	ck_assert_uint_eq(len, LOGLINE_MAX);
	ck_assert_ptr_null(strstr(line, "never seen"));
	ck_assert_str_eq(line + LOGLINE_MAX - 1 - strlen(LOGLINE_CUT), LOGLINE_CUT "\n");
	free(sentence);
}
END_TEST

/* A stream that records each write it is given. */
struct recorder {
	size_t writes;
	char last[LOGLINE_MAX + 1];
	size_t last_len;
};

static ssize_t recorder_write(void *cookie, const char *data, size_t len)
{
	struct recorder *r = cookie;
	r->writes++;
	r->last_len = len < LOGLINE_MAX ? len : LOGLINE_MAX;
	memcpy(r->last, data, r->last_len);
	r->last[r->last_len] = 0;
	return (ssize_t)len;
}

START_TEST(test_one_write_per_line)
{
	cookie_io_functions_t io = {.read = NULL, .write = recorder_write, .seek = NULL, .close = NULL};
	regex_t pattern;
	ck_assert_int_eq(regcomp(&pattern, LINE_PATTERN, REG_EXTENDED | REG_NOSUB), 0);
	char *long_sentence = malloc(LOGLINE_MAX * 2);
	ck_assert_ptr_nonnull(long_sentence);
	memset(long_sentence, 'x', LOGLINE_MAX * 2 - 1);
	long_sentence[LOGLINE_MAX * 2 - 1] = 0;
	/* Unbuffered as standard error is, and fully buffered as a file is. */
	for (int buffered = 0; buffered < 2; buffered++) {
		struct recorder r = {0};
		FILE *stream = fopencookie(&r, "w", io);
		ck_assert_ptr_nonnull(stream);
		ck_assert_int_eq(setvbuf(stream, NULL, buffered ? _IOFBF : _IONBF, buffered ? 8192 : 0), 0);
		for (int i = 0; i < 5; i++) {
			size_t before = r.writes;
			ck_assert_int_eq(logline_write(stream, "check", (uint64_t)i, i % 2 ? "mix" : NULL,
			                               "line %d of %s", i, buffered ? "a file" : "stderr"),
			                 0);
			ck_assert_uint_eq(r.writes, before + 1);
			ck_assert_msg(regexec(&pattern, r.last, 0, NULL, 0) == 0, "%s", r.last);
		}
		size_t before = r.writes;
		ck_assert_int_eq(
		    logline_write(stream, "check", LOGLINE_EPOCH_NONE, NULL, "%s", long_sentence), 0);
		ck_assert_uint_eq(r.writes, before + 1);
		ck_assert_uint_eq(r.last_len, LOGLINE_MAX);
		ck_assert_msg(regexec(&pattern, r.last, 0, NULL, 0) == 0, "%s", r.last);
		fclose(stream);
	}
	free(long_sentence);
	regfree(&pattern);
}
END_TEST

START_TEST(test_write_error)
{
	/* A stream that cannot be written says so. */
	FILE *stream = fopen("/dev/null", "r");
	ck_assert_ptr_nonnull(stream);
	ck_assert_int_eq(logline_write(stream, "check", 1, NULL, "nowhere"), DIRAUTH_ERR_IO);
	fclose(stream);
}
END_TEST

#define THREADS          6
#define LINES_PER_THREAD 400

struct writer {
	FILE *stream;
	int thread;
};

static void *writer_main(void *argument)
{
	const struct writer *w = argument;
	char filler[1200];
	memset(filler, 'x', sizeof filler - 1);
	filler[sizeof filler - 1] = 0;
	for (int i = 0; i < LINES_PER_THREAD; i++) {
		int width = (i * 37 + w->thread * 11) % (int)(sizeof filler - 1);
		logline_write(w->stream, "check", (uint64_t)w->thread, "mix", "thread %d line %d: %.*s end",
		              w->thread, i, width, filler);
	}
	return NULL;
}

START_TEST(test_threads_never_interleave)
{
	/* Unbuffered like standard error: each line is the only thing its write carries. */
	FILE *stream = tmpfile();
	ck_assert_ptr_nonnull(stream);
	setvbuf(stream, NULL, _IONBF, 0);
	pthread_t threads[THREADS];
	struct writer writers[THREADS];
	for (int t = 0; t < THREADS; t++) {
		writers[t] = (struct writer){stream, t};
		ck_assert_int_eq(pthread_create(&threads[t], NULL, writer_main, &writers[t]), 0);
	}
	for (int t = 0; t < THREADS; t++)
		pthread_join(threads[t], NULL);

	regex_t pattern;
	ck_assert_int_eq(regcomp(&pattern, LINE_PATTERN, REG_EXTENDED | REG_NOSUB), 0);
	rewind(stream);
	int next[THREADS] = {0};
	char line[LOGLINE_MAX + 2];
	size_t count = 0;
	while (fgets(line, sizeof line, stream)) {
		ck_assert_msg(regexec(&pattern, line, 0, NULL, 0) == 0, "%s", line);
		const char *sentence = strstr(line, " namespace mix: ");
		ck_assert_ptr_nonnull(sentence);
		int thread, number, consumed = 0;
		ck_assert_int_eq(
		    sscanf(sentence, " namespace mix: thread %d line %d:%n", &thread, &number, &consumed), 2);
		ck_assert(thread >= 0 && thread < THREADS);
		/* Each thread's lines whole, in its order, its epoch with them. */
		ck_assert_int_eq(number, next[thread]++);
		char epoch[32];
		snprintf(epoch, sizeof epoch, " epoch %d check: ", thread);
		ck_assert_ptr_nonnull(strstr(line, epoch));
		int width = (number * 37 + thread * 11) % 1199;
		const char *filler = sentence + consumed + 1;
		ck_assert_int_eq((int)strspn(filler, "x"), width);
		ck_assert_str_eq(filler + width, " end\n");
		count++;
	}
	ck_assert_uint_eq(count, THREADS * LINES_PER_THREAD);
	regfree(&pattern);
	fclose(stream);
}
END_TEST

START_TEST(test_epoch_now)
{
	char dir[512], path[640];
	test_make_tempdir(dir, sizeof dir);
	snprintf(path, sizeof path, "%s/clock", dir);
	struct clock *clock = NULL;
	ck_assert_int_eq(clock_open_file(path, &clock), 0);
	struct epoch_schedule alone = {.genesis = 1000, .length = 60, .validity_epochs = 3};
	/* No clock, no schedule, a clock that cannot be read: no epoch. */
	ck_assert_uint_eq(logline_epoch_now(NULL, &alone), LOGLINE_EPOCH_NONE);
	ck_assert_uint_eq(logline_epoch_now(clock, NULL), LOGLINE_EPOCH_NONE);
	ck_assert_uint_eq(logline_epoch_now(clock, &alone), LOGLINE_EPOCH_NONE);
	/* Before genesis: none yet. */
	test_write_file(path, "999\n", 4, 0644);
	ck_assert_uint_eq(logline_epoch_now(clock, &alone), LOGLINE_EPOCH_NONE);
	test_write_file(path, "1000\n", 5, 0644);
	ck_assert_uint_eq(logline_epoch_now(clock, &alone), 0);
	test_write_file(path, "1359\n", 5, 0644);
	ck_assert_uint_eq(logline_epoch_now(clock, &alone), 5);
	/* With the others, the epoch being prepared from its vote on. */
	struct epoch_schedule several = alone;
	several.prepare = 20;
	several.vote = 10;
	several.signature = 10;
	test_write_file(path, "1339\n", 5, 0644);
	ck_assert_uint_eq(logline_epoch_now(clock, &several), 5);
	test_write_file(path, "1340\n", 5, 0644);
	ck_assert_uint_eq(logline_epoch_now(clock, &several), 6);
	clock_close(clock);
	test_remove_tree(dir);
}
END_TEST

static Suite *logline_suite(void)
{
	Suite *s = suite_create("logline");
	TCase *tc = tcase_create("logline");
	tcase_add_test(tc, test_time_utc_to_the_millisecond);
	tcase_add_test(tc, test_fields);
	tcase_add_test(tc, test_cut_at_the_bound);
	tcase_add_test(tc, test_one_write_per_line);
	tcase_add_test(tc, test_write_error);
	tcase_add_test(tc, test_threads_never_interleave);
	tcase_add_test(tc, test_epoch_now);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *runner = srunner_create(logline_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
