/*
 * clock.c: the system clock, the file clock and the manual clock (which keeps milliseconds, so
 * that a simulation's monotonic time is its own).
 *
 * The file clock opens and reads the file at every call rather than caching a descriptor, so
 * a test may replace the file atomically (write a temporary, rename) and the next call sees
 * the new time. The read is bounded to CLOCK_FILE_MAX_BYTES + 1 bytes.
 */
#include "clock/clock.h"

#include "schema/encoding.h"
#include "base/error.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum clock_kind { CLOCK_SYSTEM, CLOCK_FILE, CLOCK_MANUAL };

struct clock {
	enum clock_kind kind;
	_Atomic uint64_t manual_ms; /* CLOCK_MANUAL: the time set, in milliseconds */
	char path[PATH_MAX];
};

int clock_open_system(struct clock **out)
{
	*out = calloc(1, sizeof **out);
	return *out ? 0 : DIRAUTH_ERR_NOMEM;
}

int clock_open_file(const char *path, struct clock **out)
{
	*out = NULL;
	size_t len = strlen(path);
	if (len == 0 || len >= PATH_MAX)
		return DIRAUTH_ERR_BOUNDS;
	struct clock *clock = calloc(1, sizeof *clock);
	if (!clock)
		return DIRAUTH_ERR_NOMEM;
	clock->kind = CLOCK_FILE;
	memcpy(clock->path, path, len + 1);
	*out = clock;
	return 0;
}

/* A manual clock keeps milliseconds; seconds past what they can hold stay at the most. */
static uint64_t seconds_to_ms(uint64_t seconds)
{
	return seconds > UINT64_MAX / 1000 ? UINT64_MAX / 1000 * 1000 : seconds * 1000;
}

int clock_open_manual(uint64_t start, struct clock **out)
{
	struct clock *clock = calloc(1, sizeof *clock);
	*out = clock;
	if (!clock)
		return DIRAUTH_ERR_NOMEM;
	clock->kind = CLOCK_MANUAL;
	atomic_store(&clock->manual_ms, seconds_to_ms(start));
	return 0;
}

int clock_set(struct clock *clock, uint64_t now)
{
	return clock_set_ms(clock, seconds_to_ms(now));
}

int clock_set_ms(struct clock *clock, uint64_t now_ms)
{
	if (clock->kind != CLOCK_MANUAL)
		return DIRAUTH_ERR_CONFIG;
	atomic_store(&clock->manual_ms, now_ms);
	return 0;
}

uint64_t clock_monotonic_ms(const struct clock *clock)
{
	if (clock->kind == CLOCK_MANUAL)
		return atomic_load(&clock->manual_ms);
	struct timespec t;
	if (clock_gettime(CLOCK_MONOTONIC, &t) != 0)
		return 0;
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

int clock_is_file(const struct clock *clock)
{
	return clock->kind == CLOCK_FILE;
}

static int clock_read_file(const char *path, uint64_t *now)
{
	char text[CLOCK_FILE_MAX_BYTES + 1];
	size_t len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return DIRAUTH_ERR_IO;
	while (len < sizeof text) {
		ssize_t n = read(fd, text + len, sizeof text - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			close(fd);
			return DIRAUTH_ERR_IO;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (len > CLOCK_FILE_MAX_BYTES)
		return DIRAUTH_ERR_BOUNDS;
	if (len > 0 && text[len - 1] == '\n')
		len--;
	return decimal_parse(text, len, now) == 0 ? 0 : DIRAUTH_ERR_SYNTAX;
}

int clock_now(const struct clock *clock, uint64_t *now)
{
	if (clock->kind == CLOCK_FILE)
		return clock_read_file(clock->path, now);
	if (clock->kind == CLOCK_MANUAL) {
		*now = atomic_load(&clock->manual_ms) / 1000;
		return 0;
	}
	time_t t = time(NULL);
	if (t < 0)
		return DIRAUTH_ERR_IO;
	*now = (uint64_t)t;
	return 0;
}

void clock_close(struct clock *clock)
{
	free(clock);
}
