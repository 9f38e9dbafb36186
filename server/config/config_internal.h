/*
 * config_internal.h: what the files of dirauthd's configuration share (config.h is its public
 * face). config.c walks the tree section by section in dependency order; the authority set's
 * section and the checks that depend on it are config_authorities.c's. Nothing here is for other
 * modules.
 */
#ifndef DIRAUTH_SERVER_CONFIG_CONFIG_INTERNAL_H
#define DIRAUTH_SERVER_CONFIG_CONFIG_INTERNAL_H

#include "server/config/config.h"
#include "settings/settings.h"

/* The authorities section into config (members, threshold, peers, witnesses, CA file's path).
 * The epoch section is parsed before it. Returns 0 or the refusal in state. */
int config_parse_authorities(struct settings_reader *state, const struct settings_node *node,
                             struct config *config);

/* Without an authorities section, this authority alone is the set (n = k = 1); with one, it must
 * be a member: sets config->self_index. Returns 0 or the refusal in state. */
int config_set_authority_set(struct settings_reader *state, struct config *config);

/* Whether each window of a round holds the peer operations that run in it, each at its full
 * timeout (docs/operating.md, "Sizing the windows"); a file clock's windows are not judged.
 * Returns 0 or the refusal in state. */
int config_check_windows(struct settings_reader *state, const struct config *config);

/* authorities.ca_file, if given, is a regular file this process can read. Returns 0 or the
 * refusal in state. */
int config_check_ca_file(struct settings_reader *state, const struct config *config);

#endif
