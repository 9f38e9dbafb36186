/*
 * router.h: matching a request path against the route patterns of the HTTP API.
 *
 * A pattern is a path whose segments are literals or captures: "/v1/{namespace}/snapshots/{epoch}".
 * A capture matches one whole segment (possibly empty, never holding '/'); a final "{...}" matches
 * the rest of the path, slashes included. Matching is byte-exact and never decodes anything: the
 * HTTP layer refuses percent-escapes before routing, so each resource has one URL. The captured
 * values point into the path. Pure code: the table of routes and what they do is in http.c.
 */
#ifndef DIRAUTH_SERVER_HTTP_ROUTER_H
#define DIRAUTH_SERVER_HTTP_ROUTER_H

#include <stddef.h>

#define ROUTER_MAX_CAPTURES 4

struct router_capture {
	const char *data; /* into the path; not NUL-terminated */
	size_t len;
};

struct router_match {
	struct router_capture captures[ROUTER_MAX_CAPTURES]; /* in pattern order */
	size_t count;
};

/* 1 when path (len bytes, no query string) matches pattern, with the captures in *out; else 0.
 * A pattern with more than ROUTER_MAX_CAPTURES captures never matches. */
int router_match_path(const char *pattern, const char *path, size_t len, struct router_match *out);

#endif
