/*
 * router.c: segment-by-segment matching of a path against a pattern (router.h).
 */
#include "server/http/router.h"

#include <string.h>

/* The length of the segment starting at s, up to end or the next '/'. */
static size_t segment_length(const char *s, const char *end)
{
	const char *slash = memchr(s, '/', (size_t)(end - s));
	return slash ? (size_t)(slash - s) : (size_t)(end - s);
}

int router_match_path(const char *pattern, const char *path, size_t len, struct router_match *out)
{
	const char *p = pattern, *p_end = pattern + strlen(pattern);
	const char *s = path, *s_end = path + len;

	out->count = 0;
	if (p == p_end || s == s_end || *p != '/' || *s != '/')
		return 0;
	p++;
	s++;
	for (;;) {
		size_t p_len = segment_length(p, p_end);
		int capture = p_len >= 2 && p[0] == '{' && p[p_len - 1] == '}';
		int rest = capture && p_len == 5 && memcmp(p, "{...}", 5) == 0;
		size_t s_len = rest ? (size_t)(s_end - s) : segment_length(s, s_end);
		if (capture) {
			if (out->count == ROUTER_MAX_CAPTURES)
				return 0;
			out->captures[out->count].data = s;
			out->captures[out->count].len = s_len;
			out->count++;
		} else if (p_len != s_len || memcmp(p, s, p_len) != 0) {
			return 0;
		}
		p += p_len;
		s += s_len;
		if (p == p_end || s == s_end)
			return p == p_end && s == s_end;
		/* Both stand on a '/': step over it. */
		p++;
		s++;
		if (p == p_end)
			return s == s_end; /* a pattern ending in '/' */
	}
}
