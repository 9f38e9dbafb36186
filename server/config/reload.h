/*
 * reload.h: what a reload (SIGHUP) takes of a new configuration file, and what it keeps.
 *
 * A running dirauthd has built objects from its configuration that a new file cannot rebuild
 * under it: a listening socket, an open store, a signer connection, the epoch schedule its round
 * follows, the namespaces whose snapshots it publishes, the authority set that co-signs them. So
 * each key of the file is one of two kinds, written once in the table of reload.c:
 *
 *   - live: applied by the reload, for the next request that reads it: the enrolled providers
 *     (providers), the authority operators (operators), bounds.max_validity_seconds, the HTTP
 *     guard's limits (http.header_timeout_seconds, http.body_timeout_seconds,
 *     http.max_pending_connections, http.max_connections_per_ip, http.log_interval_seconds), and
 *     how the peers are reached (each member's url, authorities.timeout_seconds,
 *     authorities.connect_timeout_seconds, authorities.retries);
 *   - restart-only: every other key. When one differs from the running value, the reload keeps
 *     the running value (the merged configuration carries it), says so in one line
 *     ("<key> changed; needs a restart; kept <running value>"), and applies the live keys all
 *     the same: an operator who edits a port and a provider at once gets the provider now and
 *     the port at the next restart, and is told.
 *
 * A new file that does not load (config_load: syntax, schema, every check of --check-config) is
 * refused whole by the caller before it gets here. The merge then checks again what couples a
 * live key to a kept one (the peers' timeouts against the running epoch's windows): a merged
 * configuration that fails is refused whole too, and the running one stays.
 *
 * Providers enrol for namespaces by name, stored as a bit per configured namespace; when the
 * namespaces changed (and are kept), each provider's bits are re-read by name against the running
 * namespaces, and a namespace the running configuration does not serve is dropped from it (it
 * takes effect with the restart that adds the namespace).
 */
#ifndef DIRAUTH_SERVER_CONFIG_RELOAD_H
#define DIRAUTH_SERVER_CONFIG_RELOAD_H

#include "server/config/config.h"

#include <stddef.h>

#define CONFIG_RELOAD_KEYS_MAX 64  /* more than the table's rows */
#define CONFIG_RELOAD_LINE_MAX 384 /* one "<key> changed; needs a restart; kept <value>" */

/* What a merge found. */
struct config_reload_report {
	/* One sentence per restart-only key whose value changed:
	 * "<key> changed; needs a restart; kept <running value>". */
	size_t restart_count;
	char restart[CONFIG_RELOAD_KEYS_MAX][CONFIG_RELOAD_LINE_MAX];
	/* The live keys whose value changed, by name (static storage): what the reload applies. */
	size_t applied_count;
	const char *applied[CONFIG_RELOAD_KEYS_MAX];
	/* Refused: why, in one sentence. */
	char refusal[CONFIG_RELOAD_LINE_MAX];
};

/* Makes loaded (a configuration config_load accepted) the one to install over running: every
 * restart-only value of loaded is overwritten by running's, each one that differed reported;
 * each live key that differs is listed; provider namespaces are re-read by name when the
 * namespaces differ. Returns 0 with loaded ready to install; DIRAUTH_ERR_CONFIG when the merged
 * configuration fails a check (report->refusal says which; loaded is then to be freed). Pure:
 * no I/O. */
int config_reload_merge(const struct config *running, struct config *loaded,
                        struct config_reload_report *report);

/* 1 when key (as written in the report, e.g. "listen.port", "providers") is live, 0 when it needs
 * a restart or is not a key of the table. */
int config_reload_key_is_live(const char *key);

#endif
