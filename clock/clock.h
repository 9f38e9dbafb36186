/*
 * clock.h: the injectable source of "now" for every program of dirauth that depends on time.
 *
 * Production reads the system clock. Tests and demos use a file clock: a file holding unix
 * seconds as a decimal, read afresh at each call, so that a test drives the epochs by writing
 * the file instead of sleeping. A file clock that cannot be read or holds anything but a
 * canonical decimal is an error the caller must handle (the scheduler logs it and skips the
 * tick; a request handler denies): a check that cannot run denies.
 */
#ifndef DIRAUTH_CLOCK_CLOCK_H
#define DIRAUTH_CLOCK_CLOCK_H

#include <stdint.h>

#define CLOCK_FILE_MAX_BYTES 64 /* a unix time and a newline fit many times over */

struct clock;

/* A clock that reads time(). Returns 0 or DIRAUTH_ERR_NOMEM. */
int clock_open_system(struct clock **out);

/* A clock that reads the file at path at each call (the file need not exist yet). path is
 * copied. Returns 0, DIRAUTH_ERR_NOMEM or DIRAUTH_ERR_BOUNDS (path too long). */
int clock_open_file(const char *path, struct clock **out);

/* A clock that reads what clock_set last set (start until then): for a process that runs its
 * own simulated time, such as a simulation of several authorities in one process. Returns 0 or
 * DIRAUTH_ERR_NOMEM. */
int clock_open_manual(uint64_t start, struct clock **out);

/* Sets a manual clock (clock_open_manual) to now; DIRAUTH_ERR_CONFIG for another kind of clock.
 * Thread-safe: a reader sees the old time or the new. */
int clock_set(struct clock *clock, uint64_t now);

/* Sets a manual clock to now_ms milliseconds: clock_now reads now_ms / 1000, and
 * clock_monotonic_ms now_ms. DIRAUTH_ERR_CONFIG for another kind of clock. Thread-safe. */
int clock_set_ms(struct clock *clock, uint64_t now_ms);

/* Milliseconds on the clock's monotonic scale, what the deadlines of work timed against the clock
 * are points on: CLOCK_MONOTONIC for the system and file clocks, the milliseconds last set for a
 * manual clock (clock_set's seconds × 1000), so that a simulation's deadlines are on its own time.
 * Never fails (0 if the system's monotonic clock cannot be read). Thread-safe. */
uint64_t clock_monotonic_ms(const struct clock *clock);

/* True for a file clock (the scheduler polls it more often). */
int clock_is_file(const struct clock *clock);

/* The current unix time in seconds. Returns 0; for a file clock DIRAUTH_ERR_IO when the file
 * cannot be read, DIRAUTH_ERR_BOUNDS when it is longer than CLOCK_FILE_MAX_BYTES,
 * DIRAUTH_ERR_SYNTAX when it is not a canonical decimal optionally followed by one '\n'.
 * Thread-safe. */
int clock_now(const struct clock *clock, uint64_t *now);

/* Frees the clock. Accepts NULL. */
void clock_close(struct clock *clock);

#endif
