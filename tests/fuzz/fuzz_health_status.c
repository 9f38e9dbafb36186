/*
 * fuzz_health_status.c: libFuzzer target for dirauthctl health-page's reading of an authority's
 * GET /v1/status answer (ctl_health_status_parse, ctl/health_page.h).
 *
 * The answer comes from a server the tool does not trust, so the properties checked are: no
 * crash or overread on any input; an answer over its bound is refused as such; an accepted
 * answer names a valid key name whose bytes, escaped again, and whose time, written again, give
 * back the input.
 */
#include "ctl/health_page.h"
#include "base/error.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char name[NOTE_NAME_MAX + 1];
	uint64_t time = 0;
	int rc = ctl_health_status_parse(data, size, name, &time);
	if (size > CTL_HEALTH_STATUS_MAX) {
		if (rc != DIRAUTH_ERR_BOUNDS)
			abort();
		return 0;
	}
	if (rc != 0)
		return 0;
	if (!note_name_is_valid(name, strlen(name)))
		abort();
	char again[2 * NOTE_NAME_MAX + 64], escaped[2 * NOTE_NAME_MAX + 1];
	size_t used = 0;
	for (const char *p = name; *p; p++) {
		if (*p == '"' || *p == '\\')
			escaped[used++] = '\\';
		escaped[used++] = *p;
	}
	escaped[used] = '\0';
	int n = snprintf(again, sizeof again, "{\"authority\":\"%s\",\"time\":%" PRIu64 "}", escaped, time);
	if (n < 0 || (size_t)n != size || memcmp(again, data, size) != 0)
		abort();
	return 0;
}
