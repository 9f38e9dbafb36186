/*
 * live.h: the configuration a running dirauthd reads, replaced whole by a reload (SIGHUP).
 *
 * A reload must never show a reader half of one configuration and half of another, nor pull a
 * configuration from under a request in flight. So the configuration is never changed in place:
 * a reload builds a complete new struct config (config_reload_merge, reload.h) and installs it
 * here; a reader takes a reference to the current one (config_live_acquire), reads it as long as
 * it needs (a request, from its first byte to its answer), and gives it back
 * (config_live_release). A configuration replaced is freed when its last reader gives it back.
 *
 * Every configuration installed keeps the running values of the keys that need a restart
 * (reload.h), so a module that kept a pointer to the configuration it was started with reads
 * those keys there, unchanged; only the live keys (the enrolled providers and operators, and
 * the few bounds, HTTP limits and peer settings reload.h lists) differ between snapshots, and a
 * module reads them from an acquired snapshot or is told of them (http_server_reconfigure,
 * peer_client_reconfigure).
 *
 * A reader may hold its reference as long as it lives: dirauthd's main takes one on the
 * configuration it started with and gives it back only when it stops, so every module it gave
 * that pointer to (for the restart-only keys) reads it safely across any number of reloads.
 *
 * Thread-safe: one mutex, held for a few instructions by each acquire, release and replace.
 */
#ifndef DIRAUTH_SERVER_CONFIG_LIVE_H
#define DIRAUTH_SERVER_CONFIG_LIVE_H

#include "server/config/config.h"

#include <stdint.h>

struct config_live;

/* A holder whose current configuration is initial (owned from now on; it is freed with the
 * holder, or when replaced and given back by every reader). Returns 0 or DIRAUTH_ERR_NOMEM
 * (initial is then the caller's still). */
int config_live_new(struct config *initial, struct config_live **out);

/* The current configuration, with a reference the caller gives back with config_live_release.
 * Never NULL. */
const struct config *config_live_acquire(struct config_live *live);

/* Gives back a reference taken by config_live_acquire; the configuration is freed if it was
 * replaced and this was its last reader. */
void config_live_release(struct config_live *live, const struct config *config);

/* Installs next (owned from now on) as the current configuration; the one it replaces is freed
 * once no reader holds it. Returns 0 or DIRAUTH_ERR_NOMEM (next is then the caller's still, and
 * the current one stays). */
int config_live_replace(struct config_live *live, struct config *next);

/* How many configurations were installed since config_live_new: 0 before the first reload. */
uint64_t config_live_generation(struct config_live *live);

/* Frees the holder and its current configuration. Every reference must have been given back.
 * Accepts NULL. */
void config_live_free(struct config_live *live);

#endif
