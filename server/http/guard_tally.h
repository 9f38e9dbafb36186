/*
 * guard_tally.h: what the guard (guard.h) counts and reports: its refusals and closings by
 * reason, libmicrohttpd's messages by kind, and the aggregate line that reports what changed,
 * at most once per interval.
 *
 * Internal to server/http: guard.c embeds one tally in each guard. Counting is lock-free (an
 * atomic per reason) and may happen on any thread; the messages are kept under the tally's own
 * lock; the line is written by one thread at a time (the watchdog, then the thread that stops
 * the guard after the watchdog has been joined).
 */
#ifndef DIRAUTH_SERVER_HTTP_GUARD_TALLY_H
#define DIRAUTH_SERVER_HTTP_GUARD_TALLY_H

#include "server/http/guard.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define GUARD_MESSAGE_KINDS 32

/* One kind of libmicrohttpd message, known by its format string. */
struct guard_message {
	const char *format; /* libmicrohttpd's format string: static, and holds no client data */
	uint64_t count;
	uint64_t logged;
};

struct guard_tally {
	atomic_uint_fast64_t counts[GUARD_REASON_COUNT];
	uint64_t logged[GUARD_REASON_COUNT]; /* the line's writer only */
	uint64_t last_log_ms;                /* the line's writer only */

	pthread_mutex_t message_lock;
	struct guard_message messages[GUARD_MESSAGE_KINDS];
	uint64_t other_messages, other_logged; /* past GUARD_MESSAGE_KINDS kinds */
};

/* Starts a tally at now_ms (the monotonic clock's milliseconds): no counts, the first line due
 * an interval from now. Returns 0 or DIRAUTH_ERR_NOMEM. */
int guard_tally_init(struct guard_tally *tally, uint64_t now_ms);
void guard_tally_destroy(struct guard_tally *tally);

/* Counts one refusal or closing by reason (ignored past GUARD_REASON_COUNT). */
void guard_tally_count(struct guard_tally *tally, enum http_guard_reason reason);

/* Counts one libmicrohttpd message by its format string; its arguments are never kept, since
 * they may describe a client. */
void guard_tally_message(struct guard_tally *tally, const char *format);

/* Writes one line (logline.h, to options->log) of what was counted since the last one, if
 * anything was: when final, or when options->limits.log_interval_ms have passed since the last. */
void guard_tally_write(struct guard_tally *tally, const struct http_guard_options *options, uint64_t now_ms,
                       bool final);

/* The counts since the tally started. */
void guard_tally_counts(struct guard_tally *tally, uint64_t out[GUARD_REASON_COUNT]);

#endif
