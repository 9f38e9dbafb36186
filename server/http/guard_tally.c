/*
 * guard_tally.c: what the guard counts and reports (guard_tally.h): the one table of its reasons,
 * the counts by reason, libmicrohttpd's messages by kind, and the aggregate line.
 *
 * Counts, not lines: a flood of a million slow clients is one line per log interval, "http: in
 * the last 10 s: 812 head_timeout, 95 pending_full", never a line per client, and never an
 * address. libmicrohttpd's messages are kept by their format string alone, since their arguments
 * may describe a client, and printed sanitized. A reason's name is written once, in its row
 * below: the aggregate line and the metrics (metrics_routes.c) both take it from there, and a
 * test checks that every reason has one.
 */
#include "server/http/guard_tally.h"

#include "logline/logline.h"
#include "base/buffer.h"
#include "base/error.h"

#include <stdio.h>
#include <string.h>

static const struct http_guard_reason_row guard_reasons[GUARD_REASON_COUNT] = {
    [GUARD_REFUSED_BAD_REQUEST] = {.name = "bad_request"},
    [GUARD_REFUSED_LENGTH_REQUIRED] = {.name = "length_required", .refusal = API_ERROR_LENGTH_REQUIRED},
    [GUARD_REFUSED_HEADERS_TOO_LARGE] = {.name = "headers_too_large", .refusal = API_ERROR_HEADERS_TOO_LARGE},
    [GUARD_REFUSED_NOT_IMPLEMENTED] = {.name = "not_implemented", .refusal = API_ERROR_NOT_IMPLEMENTED},
    [GUARD_REFUSED_BODY_TOO_LARGE] = {.name = "body_too_large", .refusal = API_ERROR_BODY_TOO_LARGE},
    [GUARD_CLOSED_HEAD_TIMEOUT] = {.name = "head_timeout", .evicts = true},
    [GUARD_CLOSED_BODY_TIMEOUT] = {.name = "body_timeout", .evicts = true},
    [GUARD_CLOSED_PENDING_FULL] = {.name = "pending_full", .evicts = true},
    [GUARD_CLOSED_CROWDED] = {.name = "crowded", .evicts = true},
    [GUARD_CLOSED_NOT_ADMITTED] = {.name = "not_admitted"},
};

const struct http_guard_reason_row *http_guard_reason_row(enum http_guard_reason reason)
{
	return (unsigned)reason < GUARD_REASON_COUNT ? &guard_reasons[reason] : NULL;
}

const char *http_guard_reason_name(enum http_guard_reason reason)
{
	const struct http_guard_reason_row *row = http_guard_reason_row(reason);
	return row && row->name ? row->name : "unknown";
}

enum http_guard_reason http_guard_reason_of(enum api_error error)
{
	for (int r = 0; error != API_ERROR_NONE && r < GUARD_REASON_COUNT; r++)
		if (guard_reasons[r].refusal == error)
			return (enum http_guard_reason)r;
	return GUARD_REFUSED_BAD_REQUEST;
}

int guard_tally_init(struct guard_tally *tally, uint64_t now_ms)
{
	memset(tally, 0, sizeof(*tally));
	for (int r = 0; r < GUARD_REASON_COUNT; r++)
		atomic_init(&tally->counts[r], 0);
	if (pthread_mutex_init(&tally->message_lock, NULL) != 0)
		return DIRAUTH_ERR_NOMEM;
	tally->last_log_ms = now_ms;
	return 0;
}

void guard_tally_destroy(struct guard_tally *tally)
{
	pthread_mutex_destroy(&tally->message_lock);
}

void guard_tally_count(struct guard_tally *tally, enum http_guard_reason reason)
{
	if ((unsigned)reason < GUARD_REASON_COUNT)
		atomic_fetch_add(&tally->counts[reason], 1);
}

void guard_tally_message(struct guard_tally *tally, const char *format)
{
	pthread_mutex_lock(&tally->message_lock);
	size_t i = 0;
	while (i < GUARD_MESSAGE_KINDS && tally->messages[i].format && tally->messages[i].format != format)
		i++;
	if (i == GUARD_MESSAGE_KINDS) {
		tally->other_messages++;
	} else {
		tally->messages[i].format = format;
		tally->messages[i].count++;
	}
	pthread_mutex_unlock(&tally->message_lock);
}

void guard_tally_counts(struct guard_tally *tally, uint64_t out[GUARD_REASON_COUNT])
{
	for (int r = 0; r < GUARD_REASON_COUNT; r++)
		out[r] = atomic_load(&tally->counts[r]);
}

/* Appends text to out, printable ASCII only, without its trailing newline, at most max bytes. */
static void append_sanitized(struct buffer *out, const char *text, size_t max)
{
	for (size_t i = 0; text[i] && i < max; i++) {
		char c = text[i];
		if (c == '\n' && text[i + 1] == 0)
			break;
		buffer_append(out, c >= 0x20 && c < 0x7f && c != '"' ? &c : "?", 1);
	}
}

void guard_tally_write(struct guard_tally *tally, const struct http_guard_options *options, uint64_t now,
                       bool final)
{
	if (!final &&
	    now - tally->last_log_ms < __atomic_load_n(&options->limits.log_interval_ms, __ATOMIC_RELAXED))
		return;
	uint64_t seconds = (now - tally->last_log_ms + 500) / 1000;
	tally->last_log_ms = now;
	struct buffer line;
	char part[96];
	int any = 0;
	buffer_init(&line);
	snprintf(part, sizeof part, "http: in the last %llu s:", (unsigned long long)seconds);
	buffer_append_string(&line, part);
	for (int r = 0; r < GUARD_REASON_COUNT; r++) {
		uint64_t count = atomic_load(&tally->counts[r]);
		if (count == tally->logged[r])
			continue;
		snprintf(part, sizeof part, "%s %llu %s", any ? "," : "",
		         (unsigned long long)(count - tally->logged[r]), guard_reasons[r].name);
		buffer_append_string(&line, part);
		tally->logged[r] = count;
		any = 1;
	}
	pthread_mutex_lock(&tally->message_lock);
	for (size_t i = 0; i < GUARD_MESSAGE_KINDS && tally->messages[i].format; i++) {
		struct guard_message *m = &tally->messages[i];
		if (m->count == m->logged)
			continue;
		snprintf(part, sizeof part, "%s %llu x libmicrohttpd \"", any ? "," : "",
		         (unsigned long long)(m->count - m->logged));
		buffer_append_string(&line, part);
		append_sanitized(&line, m->format, 80);
		buffer_append_string(&line, "\"");
		m->logged = m->count;
		any = 1;
	}
	if (tally->other_messages != tally->other_logged) {
		snprintf(part, sizeof part, "%s %llu x other libmicrohttpd messages", any ? "," : "",
		         (unsigned long long)(tally->other_messages - tally->other_logged));
		buffer_append_string(&line, part);
		tally->other_logged = tally->other_messages;
		any = 1;
	}
	pthread_mutex_unlock(&tally->message_lock);
	if (any)
		logline_write(options->log, "dirauthd", logline_epoch_now(options->clock, options->schedule),
		              NULL, "%.*s", (int)line.len, (const char *)line.data);
	buffer_free(&line);
}
