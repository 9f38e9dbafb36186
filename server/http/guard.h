/*
 * guard.h: the connection guard in front of libmicrohttpd (internal to server/http).
 *
 * libmicrohttpd's timeout is per idle period, so a client that sends its request one byte at a
 * time keeps its connection for ever; its connection limits count slow and idle connections
 * like any other, so a few thousand of them lock every legitimate client out; and it answers a
 * malformed Content-Length itself, with a doubled header block. The guard takes these off it:
 *
 *   - Admission. The guard owns the listening socket. A new connection waits in the guard's
 *     pending queue, without costing libmicrohttpd anything, until its first request head is
 *     complete (read with MSG_PEEK, so the bytes stay for libmicrohttpd). The head is judged by
 *     framing.h: a refused head is answered by the guard itself (one JSON error, Connection:
 *     close, then a short lingering close); a good one is handed to libmicrohttpd with
 *     MHD_add_connection, when there is room for it (below). A head not complete within
 *     head_timeout_ms is closed. The queue holds at most max_pending connections; past that the
 *     oldest pending one is closed, so a flood of slow connections, from any number of
 *     addresses, only ever displaces itself: a client that sends its head at once spends
 *     microseconds in the queue.
 *   - Deadlines. Every connection handed over is tracked through libmicrohttpd's connection
 *     notifications and the request callbacks: waiting for a request head (between requests of a
 *     kept-alive connection) it must complete one within head_timeout_ms; receiving a body it
 *     must finish within body_timeout_ms, however it trickles. A watchdog thread shuts down
 *     (shutdown(2)) the connections past their deadline, and libmicrohttpd then closes them.
 *   - Room. At most max_connections connections are handed to libmicrohttpd, counted from the
 *     handover until libmicrohttpd has closed them (a connection shut down holds its place until
 *     then). Above nine tenths of it, the connections that have waited longest for the next head
 *     of a kept-alive connection are shut down first, one before each handover and, by the
 *     watchdog, down to eight tenths. A connection handed over whose head libmicrohttpd has not
 *     read yet has sent a whole request: it is never taken for an idle one. A complete head that
 *     finds no room waits, in arrival order, until a close makes room, or is closed when
 *     head_timeout_ms more have passed; it counts against max_pending, displaced only when no
 *     incomplete head is left. At most max_per_address connections come from one client address,
 *     counted the same way; one more is closed when its turn comes. libmicrohttpd itself is given
 *     limits it never reaches, so that it never refuses or resets a connection the guard handed
 *     over.
 *   - Counts, not lines. Every refusal and every closed connection is counted by reason, and the
 *     watchdog writes one aggregate line per log interval in which something happened, never one
 *     line per client, and never an address (hard rule 8). libmicrohttpd's own messages are
 *     counted the same way, by message.
 */
#ifndef DIRAUTH_SERVER_HTTP_GUARD_H
#define DIRAUTH_SERVER_HTTP_GUARD_H

#include "clock/clock.h"
#include "schedule/schedule.h"
#include "server/api/api_error.h"

#include <microhttpd.h>

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The limits a reload of the configuration may change while the guard runs
 * (http_guard_set_limits; the others, and the listening socket, stay as created), each read whole
 * at every decision. */
struct http_guard_limits {
	unsigned head_timeout_ms; /* a request head must be complete within this */
	unsigned body_timeout_ms; /* a request body must be complete within this */
	size_t max_pending;       /* connections waiting for their first head */
	size_t max_per_address;   /* of the connections handed over, from one client address */
	unsigned log_interval_ms; /* one aggregate line at most this often */
};

struct http_guard_options {
	int listen_fd;                   /* bound, listening, non-blocking; the guard closes it */
	struct http_guard_limits limits; /* the limits a reload may change */
	size_t max_connections;          /* connections handed to libmicrohttpd */
	FILE *log;                       /* its lines (logline.h); NULL: stderr */
	/* The epoch of its lines, the current one (logline_epoch_now); NULL: "epoch -". */
	const struct clock *clock;
	const struct epoch_schedule *schedule;
};

/* Why the guard refused or closed something; the counters of the aggregate line. */
enum http_guard_reason {
	GUARD_REFUSED_BAD_REQUEST,       /* a head framing.h refused with 400 */
	GUARD_REFUSED_LENGTH_REQUIRED,   /* 411 */
	GUARD_REFUSED_HEADERS_TOO_LARGE, /* 431 */
	GUARD_REFUSED_NOT_IMPLEMENTED,   /* 501 */
	GUARD_REFUSED_BODY_TOO_LARGE,    /* 413: a declared length past the bound, before the body */
	GUARD_CLOSED_HEAD_TIMEOUT,       /* no complete head in time */
	GUARD_CLOSED_BODY_TIMEOUT,       /* no complete body in time */
	GUARD_CLOSED_PENDING_FULL,       /* the oldest pending connection, displaced */
	GUARD_CLOSED_CROWDED,            /* a kept-alive connection waiting for its next head, closed
	                                    to keep under max_connections */
	GUARD_CLOSED_NOT_ADMITTED,       /* not handed over: no room within head_timeout_ms, its
	                                    address at max_per_address, or libmicrohttpd refused it */
	GUARD_REASON_COUNT
};

struct http_guard;

/* A guard over options (copied). Starts nothing. Returns 0, DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_IO. */
int http_guard_create(const struct http_guard_options *options, struct http_guard **out);

/* Starts admission and the watchdog, handing admitted connections to daemon (started with
 * MHD_USE_NO_LISTEN_SOCKET and MHD_USE_ITC, with the callbacks below, with no per-address limit
 * and a connection limit of twice max_connections for each of its threads: the guard holds both
 * limits, and libmicrohttpd still counts a connection for a moment after reporting it closed).
 * Returns 0 or DIRAUTH_ERR_INTERNAL. */
int http_guard_start(struct http_guard *guard, struct MHD_Daemon *daemon);

/* Applies limits from the next decision on: a connection admitted or a deadline judged after this
 * call reads the new values; each limit is changed whole (never torn), independently of the
 * others. Thread-safe; any time between create and free. */
void http_guard_set_limits(struct http_guard *guard, const struct http_guard_limits *limits);

/* Stops the threads and closes the pending connections and the listening socket. Call before
 * MHD_stop_daemon. Accepts NULL and a guard never started. */
void http_guard_stop(struct http_guard *guard);

/* Frees (after http_guard_stop and MHD_stop_daemon). Accepts NULL. */
void http_guard_free(struct http_guard *guard);

/* libmicrohttpd callbacks, cls being the guard: MHD_OPTION_NOTIFY_CONNECTION, and the external
 * logger (MHD_OPTION_EXTERNAL_LOGGER). */
void http_guard_notify_connection(void *cls, struct MHD_Connection *connection, void **socket_context,
                                  enum MHD_ConnectionNotificationCode code);
void http_guard_log(void *cls, const char *format, va_list args) __attribute__((format(printf, 2, 0)));

/* What the access handler tells the guard about the request on connection: its head is in and
 * a body follows (receiving), the body is in or there is none (answering), the request is done
 * and the connection waits for the next head (waiting). */
void http_guard_request_receiving(struct MHD_Connection *connection);
void http_guard_request_answering(struct MHD_Connection *connection);
void http_guard_request_done(struct MHD_Connection *connection);

/* Counts one refusal or closing by reason (the handler's own framing refusals, for instance). */
void http_guard_count(struct http_guard *guard, enum http_guard_reason reason);

/* What is known of one reason: its row of the guard's one table of reasons (guard_tally.c), the
 * only place a reason's name is written. */
struct http_guard_reason_row {
	/* The word of the aggregate line and the reason label of dirauth_http_refused_total alike
	 * ("bad_request", "crowded", ...): [a-z_]+, distinct. */
	const char *name;
	/* The framing.h error a refused head is counted under this reason for; API_ERROR_NONE for
	 * GUARD_REFUSED_BAD_REQUEST (every error no other row names) and for the closings. */
	enum api_error refusal;
	/* It closes a connection the guard had taken in (a deadline, a displacement, crowding)
	 * rather than turning one away. */
	bool evicts;
};

/* The row of reason; NULL past GUARD_REASON_COUNT. Static storage. */
const struct http_guard_reason_row *http_guard_reason_row(enum http_guard_reason reason);

/* The reason a refusal of a request head with error is counted under (framing.h's errors; any
 * other is counted as GUARD_REFUSED_BAD_REQUEST). */
enum http_guard_reason http_guard_reason_of(enum api_error error);

/* The name of reason (its row's), "unknown" past GUARD_REASON_COUNT; static storage. */
const char *http_guard_reason_name(enum http_guard_reason reason);

/* The counts since the guard was created, for tests and metrics. */
void http_guard_counts(struct http_guard *guard, uint64_t out[GUARD_REASON_COUNT]);

/* The number of connections waiting for their first head to be complete (pending), with a
 * complete head waiting for room (waiting), and handed to libmicrohttpd and not yet closed by it
 * (admitted, those shut down included). */
void http_guard_connection_counts(struct http_guard *guard, size_t *pending, size_t *waiting,
                                  size_t *admitted);

#endif
