/*
 * access.h: which served namespace a "/v1/{namespace}/" request may see (internal to
 * server/http; docs/api.md, "Private namespaces").
 *
 * A public namespace answers everyone. A private one answers only a request whose Authorization
 * header is "Bearer <its capability>" (server/config/capability.h); any other request for it,
 * with no header, another scheme or a wrong secret, is answered exactly as a request for a
 * namespace that is not served at all, so that its existence does not leak. That includes the
 * time it takes as far as it can: the presented secret (or nothing) is hashed and compared with
 * a digest in every case, and the path's name is compared with every configured name.
 *
 * Pure code over the configuration; the header value comes from libmicrohttpd.
 */
#ifndef DIRAUTH_SERVER_HTTP_ACCESS_H
#define DIRAUTH_SERVER_HTTP_ACCESS_H

#include "server/config/config.h"

#include <stddef.h>

/* The longest Authorization value whose token is looked at; a longer one opens nothing. */
#define HTTP_ACCESS_VALUE_MAX 1024

/* The token of a "Bearer" Authorization value (RFC 6750 section 2.1: the scheme, matched without
 * regard to case, one or more spaces, then the token, which ends the value). On 0, *token points
 * into value and *len is its length (at least 1). Returns 0, or -1 for NULL, another scheme, no
 * token, a token holding a space or a control byte, or a value longer than
 * HTTP_ACCESS_VALUE_MAX. */
int http_access_bearer(const char *value, const char **token, size_t *len);

/* The index of the namespace called name (len bytes) in config that a request carrying the
 * Authorization value authorization (NULL: none) may see: a public namespace whatever the request
 * carries, a private one only with its capability. -1 for a name that is not served and for a
 * private namespace without its capability; the caller answers both alike. */
int http_access_namespace(const struct config *config, const char *name, size_t len,
                          const char *authorization);

#endif
