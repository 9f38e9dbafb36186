/*
 * capabilities.h: the Authorization header of the requests for a private namespace's routes,
 * which the other authorities of the set serve only to holders of its capability
 * (server/config/capability.h; docs/operating.md, "Private namespaces").
 *
 * Every authority of a set holds the capability of each private namespace it serves, named by
 * the namespace's capability_file; the peer client sends `Authorization: Bearer <secret>` on every
 * request under /v1/<namespace>/ of a private namespace, and nothing on the others (a public
 * namespace's routes and /v1/certificates never see a secret).
 */
#ifndef DIRAUTH_SERVER_PEERS_CAPABILITIES_H
#define DIRAUTH_SERVER_PEERS_CAPABILITIES_H

#include "server/config/config.h"

struct peer_capabilities;

/* The header lines of config's private namespaces whose secret config_load read (config may be
 * freed after). *out gets them (an empty set when there are none). Returns 0 or
 * DIRAUTH_ERR_NOMEM. */
int peer_capabilities_new(const struct config *config, struct peer_capabilities **out);

/* Wipes and frees. Accepts NULL. */
void peer_capabilities_free(struct peer_capabilities *capabilities);

/* The "Authorization: Bearer <secret>" line for the requests of namespace_name, or NULL for a
 * public namespace, one without a secret, or a NULL name or set. Borrowed from capabilities. */
const char *peer_capabilities_header(const struct peer_capabilities *capabilities,
                                     const char *namespace_name);

#endif
