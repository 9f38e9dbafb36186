/*
 * logline.h: one line of dirauthd's or dirauth-signer's log (docs/operating.md, "Logs").
 *
 * An operator follows one epoch across authorities on several continents by their logs, so
 * every line says when it was written and which epoch it concerns, in one shape:
 *
 *   2026-12-06T12:00:00.123Z epoch 12 dirauthd: namespace mix: voted: 3 records; built in 4 ms, ...
 *   2026-12-06T12:00:00.456Z epoch - dirauth-signer: listening on /run/dirauth/signer.sock
 *
 * that is "<time> epoch <epoch> <program>: [namespace <name>: ]<sentence>\n", where
 *   - time is the system's real-time clock (CLOCK_REALTIME, whatever clock the schedule uses)
 *     in UTC, ISO 8601 to the millisecond (truncated, never rounded up): always 24 bytes;
 *   - epoch is the epoch the line concerns in decimal, or "-" when it concerns none that can be
 *     read (a line that concerns no particular epoch carries the current one, logline_epoch_now);
 *   - the namespace part is there when the line concerns one namespace;
 *   - the sentence is the caller's, with every control byte (newline included) written as '?',
 *     so a line is always exactly one line.
 * A line is at most LOGLINE_MAX bytes, its newline included; a longer one is cut at a UTF-8
 * character boundary and ends in "...".
 *
 * The formatter is pure (it takes the time); the writer reads the clock and writes each line
 * under the stream's lock and writes the line with one fwrite and one fflush, so the lines of two
 * threads never interleave and leave in the order in which their times were read.
 */
#ifndef DIRAUTH_LOGLINE_LOGLINE_H
#define DIRAUTH_LOGLINE_LOGLINE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

struct clock;
struct epoch_schedule;

#define LOGLINE_MAX        4096       /* bytes of one line, its newline included */
#define LOGLINE_TIME_SIZE  25         /* "2026-12-06T12:00:00.123Z" and its NUL */
#define LOGLINE_EPOCH_NONE UINT64_MAX /* the line concerns no epoch that can be read: "epoch -" */
#define LOGLINE_CUT        "..."      /* the end of a line that was cut to LOGLINE_MAX */

/* Writes time as "YYYY-MM-DDTHH:MM:SS.mmmZ" in UTC, the milliseconds truncated, into out.
 * Returns 0, or DIRAUTH_ERR_BOUNDS for a time whose year is not of four digits (out then holds
 * "0000-00-00T00:00:00.000Z", so the line keeps its shape). */
int logline_time_format(const struct timespec *time, char out[LOGLINE_TIME_SIZE]);

/* Formats one line, at time, into out (LOGLINE_MAX + 1 bytes: the line and a NUL) and returns
 * its length, the newline included (at most LOGLINE_MAX). program is the writer's name
 * ("dirauthd"); epoch is LOGLINE_EPOCH_NONE for "-"; namespace_name may be NULL (no namespace
 * part). Never fails: a line too long is cut. */
size_t logline_vformat(char *out, const struct timespec *time, const char *program, uint64_t epoch,
                       const char *namespace_name, const char *format, va_list args)
    __attribute__((format(printf, 6, 0)));
size_t logline_format(char *out, const struct timespec *time, const char *program, uint64_t epoch,
                      const char *namespace_name, const char *format, ...)
    __attribute__((format(printf, 6, 7)));

/* Writes one line, at the real-time clock's now, to stream (NULL: stderr) with one fwrite, and
 * flushes it; thread-safe. Returns 0, or DIRAUTH_ERR_IO when the line could not be written or
 * flushed whole. */
int logline_vwrite(FILE *stream, const char *program, uint64_t epoch, const char *namespace_name,
                   const char *format, va_list args) __attribute__((format(printf, 5, 0)));
int logline_write(FILE *stream, const char *program, uint64_t epoch, const char *namespace_name,
                  const char *format, ...) __attribute__((format(printf, 5, 6)));

/* The epoch of a line that concerns no particular epoch: the current epoch of schedule at
 * clock's now (schedule_current_epoch: the epoch being prepared or served), or
 * LOGLINE_EPOCH_NONE when clock or schedule is NULL, the clock cannot be read, or no epoch has
 * begun. Thread-safe. */
uint64_t logline_epoch_now(const struct clock *clock, const struct epoch_schedule *schedule);

#endif
