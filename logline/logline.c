/*
 * logline.c: the log line's shape (logline.h).
 *
 * A line is formatted whole in a buffer on the stack and written with one fwrite, so nothing
 * but a full line ever reaches the stream; the clock is read under the stream's lock, so two
 * threads' lines leave in the order of their times.
 */
#include "logline/logline.h"

#include "clock/clock.h"
#include "base/error.h"
#include "schedule/schedule.h"

#include <string.h>

int logline_time_format(const struct timespec *time, char out[LOGLINE_TIME_SIZE])
{
	struct tm parts;
	time_t seconds = time->tv_sec;
	long milliseconds = time->tv_nsec / 1000000;
	if (milliseconds < 0 || milliseconds > 999)
		milliseconds = 0;
	if (!gmtime_r(&seconds, &parts) || parts.tm_year < -1900 || parts.tm_year > 9999 - 1900) {
		memcpy(out, "0000-00-00T00:00:00.000Z", LOGLINE_TIME_SIZE);
		return DIRAUTH_ERR_BOUNDS;
	}
	/* The fields are in range, so the text is 24 bytes; the larger buffer is for the compiler,
	 * which cannot know that. */
	char text[64];
	snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", parts.tm_year + 1900,
	         parts.tm_mon + 1, parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec, milliseconds);
	memcpy(out, text, LOGLINE_TIME_SIZE - 1);
	out[LOGLINE_TIME_SIZE - 1] = 0;
	return 0;
}

size_t logline_vformat(char *out, const struct timespec *time, const char *program, uint64_t epoch,
                       const char *namespace_name, const char *format, va_list args)
{
	/* The text goes in out[0 .. LOGLINE_MAX - 1), leaving room for the newline and the NUL. */
	const size_t room = LOGLINE_MAX;
	char when[LOGLINE_TIME_SIZE], number[24];
	size_t len = 0;
	int wanted;

	logline_time_format(time, when);
	if (epoch == LOGLINE_EPOCH_NONE)
		memcpy(number, "-", 2);
	else
		snprintf(number, sizeof number, "%llu", (unsigned long long)epoch);
	if (namespace_name)
		wanted = snprintf(out, room, "%s epoch %s %s: namespace %s: ", when, number, program,
		                  namespace_name);
	else
		wanted = snprintf(out, room, "%s epoch %s %s: ", when, number, program);
	/* A negative count is an encoding error: what it concerns is left out, never garbage. */
	if (wanted > 0)
		len = (size_t)wanted;
	if (len < room) {
		wanted = vsnprintf(out + len, room - len, format, args);
		if (wanted > 0)
			len += (size_t)wanted;
	}
	if (len >= room) {
		/* Too long: cut at the start of a UTF-8 character, and mark the cut. */
		len = room - 1 - strlen(LOGLINE_CUT);
		while (len > 0 && ((unsigned char)out[len] & 0xC0) == 0x80)
			len--;
		memcpy(out + len, LOGLINE_CUT, strlen(LOGLINE_CUT));
		len += strlen(LOGLINE_CUT);
	}
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)out[i] < 0x20 || out[i] == 0x7f)
			out[i] = '?';
	out[len++] = '\n';
	out[len] = 0;
	return len;
}

size_t logline_format(char *out, const struct timespec *time, const char *program, uint64_t epoch,
                      const char *namespace_name, const char *format, ...)
{
	va_list args;
	va_start(args, format);
	size_t len = logline_vformat(out, time, program, epoch, namespace_name, format, args);
	va_end(args);
	return len;
}

int logline_vwrite(FILE *stream, const char *program, uint64_t epoch, const char *namespace_name,
                   const char *format, va_list args)
{
	char line[LOGLINE_MAX + 1];
	struct timespec now;
	if (!stream)
		stream = stderr;
	flockfile(stream);
	clock_gettime(CLOCK_REALTIME, &now);
	size_t len = logline_vformat(line, &now, program, epoch, namespace_name, format, args);
	size_t written = fwrite(line, 1, len, stream);
	int flushed = fflush(stream);
	funlockfile(stream);
	return written == len && flushed == 0 ? 0 : DIRAUTH_ERR_IO;
}

int logline_write(FILE *stream, const char *program, uint64_t epoch, const char *namespace_name,
                  const char *format, ...)
{
	va_list args;
	va_start(args, format);
	int rc = logline_vwrite(stream, program, epoch, namespace_name, format, args);
	va_end(args);
	return rc;
}

uint64_t logline_epoch_now(const struct clock *clock, const struct epoch_schedule *schedule)
{
	uint64_t now, epoch;
	if (!clock || !schedule || clock_now(clock, &now) != 0 ||
	    schedule_current_epoch(schedule, now, &epoch) != 0)
		return LOGLINE_EPOCH_NONE;
	return epoch;
}
