/*
 * http.h: dirauthd's HTTP API on libmicrohttpd (the routes and statuses are in docs/api.md).
 *
 *   POST /v1/registrations                 a signed registration note -> 202 + signed receipt
 *   GET  /v1/<ns>/snapshots/latest         the latest signed snapshot header
 *   GET  /v1/<ns>/snapshots/<epoch>        the signed header of an epoch (immutable)
 *   GET  /v1/<ns>/snapshots/<epoch>/body   the body, Content-Encoding zstd, gzip or identity
 *   GET  /v1/certificates                  the signer's key-certificate bundle (certificate.h)
 *   GET  /v1/health, /v1/ready             ready: store, clock and signer answer
 *   GET  /v1/status                        the authority's name and the time by its clock
 *
 * Every error is {"error":"<code>","detail":"..."} with a stable code (api_error.h). The daemon
 * runs a pool of epoll threads; every connection has a timeout, a memory limit and a per-address
 * connection limit from the configuration. The registration body is capped while it arrives
 * (by Content-Length before any of it is read, and by counting the bytes of a chunked upload),
 * so no request can make the server hold more than the cap. Nothing about a client (its
 * address above all: hard rule 8) is logged or stored.
 */
#ifndef DIRAUTH_SERVER_HTTP_HTTP_H
#define DIRAUTH_SERVER_HTTP_HTTP_H

#include "clock/clock.h"
#include "server/config/config.h"
#include "server/config/live.h"
#include "server/peers/authority_set.h"
#include "server/peers/peer_client.h"
#include "server/readpath/prepared.h"
#include "server/round/round.h"
#include "server/signing/signer_client.h"
#include "server/signing/signer_health.h"
#include "server/store/store.h"
#include "server/tlog/cosigning.h"

struct http_options {
	const struct config *config; /* listen address and port, bounds, http limits */
	struct store *store;
	struct signer_client *signer;
	struct signer_health *signer_health;
	const struct clock *clock;
	struct prepared_set *prepared;
	FILE *log;           /* the aggregate lines of refusals (guard.h); NULL: stderr */
	struct round *round; /* the round with the other authorities; NULL for an authority alone */
	struct authority_set *authorities; /* their certificates, served with this authority's; or NULL */
	/* The configuration as reloads replace it (live.h), whose current snapshot each request
	 * takes when it begins and reads its live keys from; NULL: config, for ever. */
	struct config_live *live;
	/* Read by GET /v1/metrics only; each may be NULL, its families then left out: the round (an
	 * authority alone's too), the client of the other members, the cosigning of the log. */
	struct round *measured_round;
	const struct peer_client *peers;
	struct translog_cosigning *cosigning;
};

struct http_server;

/* Starts serving on config->listen_address:listen_port. Everything in options must outlive
 * the server. Returns 0, DIRAUTH_ERR_CONFIG (the address does not parse), DIRAUTH_ERR_IO (the
 * daemon could not start, e.g. the port is taken), DIRAUTH_ERR_NOMEM. */
int http_server_start(const struct http_options *options, struct http_server **out);

/* Applies the live HTTP limits of config (server/config/reload.h: the guard's head and body
 * timeouts, pending connections, connections per address, log interval) to the running server,
 * for the connections and deadlines judged from now on. The other limits stay as started.
 * Thread-safe. */
void http_server_reconfigure(struct http_server *server, const struct config *config);

/* Stops accepting, closes every connection, waits for the threads, frees. Accepts NULL. */
void http_server_stop(struct http_server *server);

#endif
