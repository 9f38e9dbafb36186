/*
 * verify.c: what every part of verify/ shares: the time as details quote it, and the writing of
 * detail sentences (verify.h, detail.h).
 */
#include "verify/verify.h"

#include "verify/detail.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

void verify_format_time(uint64_t seconds, char out[VERIFY_TIME_TEXT_MAX])
{
	struct tm calendar;
	time_t value = (time_t)seconds;
	char date[32];

	/* 253402300799 is 9999-12-31 23:59:59, the last second a four-digit year can name. */
	if (seconds > (uint64_t)253402300799ULL || (uint64_t)value != seconds ||
	    gmtime_r(&value, &calendar) == NULL ||
	    strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S", &calendar) == 0) {
		snprintf(out, VERIFY_TIME_TEXT_MAX, "%" PRIu64, seconds);
		return;
	}
	snprintf(out, VERIFY_TIME_TEXT_MAX, "%" PRIu64 " (%s UTC)", seconds, date);
}

void verify_detail_set(char *detail, size_t cap, const char *format, ...)
{
	va_list args;

	if (detail == NULL || cap == 0)
		return;
	va_start(args, format);
	vsnprintf(detail, cap, format, args);
	va_end(args);
}

void verify_detail_clear(char *detail, size_t cap)
{
	if (detail != NULL && cap > 0)
		detail[0] = '\0';
}
