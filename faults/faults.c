/*
 * faults.c: pause points (faults.h).
 */
#include "faults/faults.h"

#include "logline/logline.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static pthread_once_t fault_once = PTHREAD_ONCE_INIT;
static const char *fault_name;  /* DIRAUTH_PAUSE_AT, or NULL */
static long fault_milliseconds; /* DIRAUTH_PAUSE_MS */

static void fault_read_environment(void)
{
	const char *name = getenv("DIRAUTH_PAUSE_AT");
	const char *ms = getenv("DIRAUTH_PAUSE_MS");
	fault_name = name && *name ? name : NULL;
	fault_milliseconds = ms ? strtol(ms, NULL, 10) : 10000;
	if (fault_milliseconds <= 0 || fault_milliseconds > 3600000)
		fault_milliseconds = 10000;
}

void fault_point(const char *name)
{
	pthread_once(&fault_once, fault_read_environment);
	if (!fault_name || strcmp(fault_name, name) != 0)
		return;
	logline_write(stderr, "dirauth", LOGLINE_EPOCH_NONE, NULL, "paused at %s", name);
	struct timespec pause = {fault_milliseconds / 1000, (fault_milliseconds % 1000) * 1000000L};
	while (nanosleep(&pause, &pause) != 0)
		;
}
