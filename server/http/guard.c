/*
 * guard.c: admission, deadlines and aggregate counts for dirauthd's connections (guard.h).
 *
 * Two threads. The admission thread owns the listening socket and the pending queue: it
 * accepts, peeks at each new connection's first request head as its bytes arrive (edge-triggered
 * epoll, so a trickling client costs one wakeup per segment), and hands good connections to
 * libmicrohttpd. The pending queue is a list in arrival order, so its head is always the next to
 * time out and the oldest to displace. A head that is not complete at the first peek is copied
 * as it comes: the socket gets a peek offset (SO_PEEK_OFF, for TCP since Linux 6.10), so that each
 * later peek returns only the bytes that arrived since instead of the whole prefix again (a head
 * trickled a byte per segment would otherwise cost the square of its length, every segment walked
 * and copied at every byte); without the option every peek reads the prefix. A refused
 * connection is answered, its write side shut, and kept a moment on the lingering list, reading
 * and dropping what the client still sends, so that closing it does not reset the connection
 * under the answer.
 *
 * The watchdog thread wakes every GUARD_TICK_MS, walks the connections libmicrohttpd holds, shuts
 * down those past their deadline or, when crowded, those that have waited longest for a head,
 * and writes the aggregate line. The table of those connections is guarded by a mutex that the
 * watchdog holds while it calls shutdown(2), and libmicrohttpd's "closed" notification takes it
 * before the descriptor is closed, so the watchdog never shuts down a descriptor that has been
 * reused. Phases are atomics the request callbacks store without taking the mutex.
 */
#define _DEFAULT_SOURCE /* SO_PEEK_OFF */
#include "server/http/guard.h"

#include "logline/logline.h"
#include "schema/buffer.h"
#include "schema/error.h"
#include "server/api/api_error.h"
#include "server/http/framing.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define GUARD_TICK_MS       100
#define GUARD_LINGER_MS     1000
#define GUARD_EPOLL_EVENTS  64
#define GUARD_MESSAGE_KINDS 32
#define GUARD_DRAIN_MAX     (64 * 1024)
#define GUARD_SEEN_MIN      1024 /* first size of a pending connection's copy of its head */

enum guard_phase { GUARD_WAITING, GUARD_RECEIVING, GUARD_ANSWERING };

/* A connection in the pending queue or on the lingering list (admission thread only). */
struct pending {
	int fd;
	struct sockaddr_storage address;
	socklen_t address_len;
	uint64_t deadline_ms;
	uint8_t *seen; /* the head's bytes so far, once the socket has a peek offset */
	size_t seen_len, seen_cap;
	bool lingering; /* answered; on the lingering list */
	bool gone;      /* closed or handed over; freed after the current batch of events */
	struct pending *prev, *next;
};

struct pending_list {
	struct pending *head, *tail;
	size_t count;
};

/* A connection libmicrohttpd holds. */
struct tracked {
	int fd;
	atomic_int phase;
	atomic_uint_fast64_t since_ms;
	bool shut;
	struct tracked *prev, *next;
};

struct guard_message {
	const char *format; /* libmicrohttpd's format string: static, and holds no client data */
	uint64_t count;
	uint64_t logged;
};

struct http_guard {
	struct http_guard_options options;
	struct MHD_Daemon *daemon;
	int epoll_fd;
	int wake_fd;
	bool started;
	atomic_bool stopping;
	pthread_t admission_thread;
	pthread_t watchdog_thread;
	char listen_tag, wake_tag; /* their addresses mark epoll events */

	struct pending_list pending;   /* admission thread only */
	struct pending_list lingering; /* admission thread only */
	struct pending *graveyard;     /* gone entries that events of this batch may still name */
	atomic_size_t pending_count;   /* mirror of pending.count for other threads */

	pthread_mutex_t tracked_lock; /* guards the list and each entry's shut flag */
	struct tracked *tracked_head;
	size_t tracked_count;

	atomic_uint_fast64_t counts[GUARD_REASON_COUNT];
	uint64_t logged[GUARD_REASON_COUNT]; /* watchdog only */
	uint64_t last_log_ms;                /* watchdog only */

	pthread_mutex_t message_lock;
	struct guard_message messages[GUARD_MESSAGE_KINDS];
	uint64_t other_messages, other_logged;

	pthread_mutex_t wait_lock; /* the watchdog's sleep */
	pthread_cond_t wait_cond;
};

static const char *const guard_reason_names[GUARD_REASON_COUNT] = {
    [GUARD_REFUSED_BAD_REQUEST] = "bad_request",
    [GUARD_REFUSED_LENGTH_REQUIRED] = "length_required",
    [GUARD_REFUSED_HEADERS_TOO_LARGE] = "headers_too_large",
    [GUARD_REFUSED_NOT_IMPLEMENTED] = "not_implemented",
    [GUARD_REFUSED_BODY_TOO_LARGE] = "body_too_large",
    [GUARD_CLOSED_HEAD_TIMEOUT] = "head_timeout",
    [GUARD_CLOSED_BODY_TIMEOUT] = "body_timeout",
    [GUARD_CLOSED_PENDING_FULL] = "pending_full",
    [GUARD_CLOSED_CROWDED] = "crowded",
    [GUARD_CLOSED_NOT_ADMITTED] = "not_admitted",
};

static uint64_t now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

void http_guard_count(struct http_guard *guard, enum http_guard_reason reason)
{
	if (guard && (unsigned)reason < GUARD_REASON_COUNT)
		atomic_fetch_add(&guard->counts[reason], 1);
}

const char *http_guard_reason_name(enum http_guard_reason reason)
{
	return (unsigned)reason < GUARD_REASON_COUNT ? guard_reason_names[reason] : "unknown";
}

/* ---- the pending queue (admission thread) ---- */

static void list_append(struct pending_list *list, struct pending *p)
{
	p->next = NULL;
	p->prev = list->tail;
	if (list->tail)
		list->tail->next = p;
	else
		list->head = p;
	list->tail = p;
	list->count++;
}

static void list_remove(struct pending_list *list, struct pending *p)
{
	if (p->prev)
		p->prev->next = p->next;
	else
		list->head = p->next;
	if (p->next)
		p->next->prev = p->prev;
	else
		list->tail = p->prev;
	list->count--;
}

/* Forgets p (already off its list and out of epoll). It is freed only after the batch of
 * events being handled, which may still name it. */
static void pending_bury(struct http_guard *guard, struct pending *p)
{
	p->gone = true;
	p->next = guard->graveyard;
	guard->graveyard = p;
}

static void pending_close(struct http_guard *guard, struct pending_list *list, struct pending *p)
{
	list_remove(list, p);
	if (list == &guard->pending)
		atomic_store(&guard->pending_count, guard->pending.count);
	epoll_ctl(guard->epoll_fd, EPOLL_CTL_DEL, p->fd, NULL);
	close(p->fd);
	pending_bury(guard, p);
}

static void pending_free(struct pending *p)
{
	free(p->seen);
	free(p);
}

static void graveyard_empty(struct http_guard *guard)
{
	while (guard->graveyard) {
		struct pending *p = guard->graveyard;
		guard->graveyard = p->next;
		pending_free(p);
	}
}

/* The guard's own answer to a refused head: one JSON error and Connection: close. */
static void answer_refusal(struct pending *p, const struct http_framing_verdict *verdict)
{
	struct buffer body, message;
	char head[256];
	buffer_init(&body);
	buffer_init(&message);
	unsigned status = api_error_status(verdict->error);
	if (api_error_json(verdict->error, verdict->detail, &body) == 0) {
		const char *reason = MHD_get_reason_phrase_for(status);
		int n =
		    snprintf(head, sizeof head,
		             "HTTP/1.1 %u %s\r\nContent-Type: application/json\r\nCache-Control: no-store\r\n"
		             "Connection: close\r\nContent-Length: %zu\r\n\r\n",
		             status, reason && *reason ? reason : "Error", body.len);
		if (n > 0 && (size_t)n < sizeof head && buffer_append(&message, head, (size_t)n) == 0 &&
		    buffer_append(&message, body.data, body.len) == 0) {
			/* The socket's send buffer is empty: a short answer goes out whole or not at all. */
			ssize_t sent = send(p->fd, message.data, message.len, MSG_NOSIGNAL | MSG_DONTWAIT);
			(void)sent;
		}
	}
	buffer_free(&body);
	buffer_free(&message);
}

enum http_guard_reason http_guard_reason_of(enum api_error error)
{
	switch (error) {
	case API_ERROR_LENGTH_REQUIRED:
		return GUARD_REFUSED_LENGTH_REQUIRED;
	case API_ERROR_HEADERS_TOO_LARGE:
		return GUARD_REFUSED_HEADERS_TOO_LARGE;
	case API_ERROR_NOT_IMPLEMENTED:
		return GUARD_REFUSED_NOT_IMPLEMENTED;
	case API_ERROR_BODY_TOO_LARGE:
		return GUARD_REFUSED_BODY_TOO_LARGE;
	default:
		return GUARD_REFUSED_BAD_REQUEST;
	}
}

/* Reads and drops what the client sent; returns 0 while the connection stays open. */
static int drain(int fd)
{
	char scratch[4096];
	size_t total = 0;
	for (;;) {
		ssize_t n = recv(fd, scratch, sizeof scratch, MSG_DONTWAIT);
		if (n > 0) {
			total += (size_t)n;
			if (total > GUARD_DRAIN_MAX)
				return -1;
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n < 0 && errno == EINTR)
			continue;
		return -1; /* end of stream or an error */
	}
}

static void tracked_shut(struct http_guard *guard, struct tracked *t, enum http_guard_reason reason);

/* The connections libmicrohttpd holds are kept under nine tenths of max_connections: before one
 * more is handed over, the one that has waited longest for a request head makes room. */
static void make_room(struct http_guard *guard)
{
	size_t high = guard->options.max_connections - guard->options.max_connections / 10;
	pthread_mutex_lock(&guard->tracked_lock);
	size_t open = 0;
	struct tracked *oldest = NULL;
	for (struct tracked *t = guard->tracked_head; t; t = t->next) {
		if (t->shut)
			continue;
		open++;
		if (atomic_load(&t->phase) == GUARD_WAITING &&
		    (!oldest || atomic_load(&t->since_ms) < atomic_load(&oldest->since_ms)))
			oldest = t;
	}
	if (open >= high && oldest)
		tracked_shut(guard, oldest, GUARD_CLOSED_CROWDED);
	pthread_mutex_unlock(&guard->tracked_lock);
}

/* Keeps the n bytes of an incomplete head in p->seen and sets the socket's peek offset past
 * them; nothing when the kernel has no peek offset for TCP (every peek then reads the prefix). */
static void seen_start(struct pending *p, const uint8_t *bytes, size_t n)
{
	int offset = (int)n;
	size_t cap = n * 2 > GUARD_SEEN_MIN ? n * 2 : GUARD_SEEN_MIN;
	if (cap > HTTP_HEAD_MAX)
		cap = HTTP_HEAD_MAX;
	uint8_t *seen = malloc(cap);
	if (!seen)
		return;
	if (setsockopt(p->fd, SOL_SOCKET, SO_PEEK_OFF, &offset, sizeof offset) != 0) {
		free(seen);
		return;
	}
	memcpy(seen, bytes, n);
	p->seen = seen;
	p->seen_len = n;
	p->seen_cap = cap;
}

/* Peeks the bytes after those seen, growing p->seen up to HTTP_HEAD_MAX: 1 when some came, 0
 * when none did, -1 when the connection failed or memory ran out. */
static int seen_more(struct pending *p)
{
	int got = 0;
	while (p->seen_len < HTTP_HEAD_MAX) {
		if (p->seen_len == p->seen_cap) {
			size_t cap = p->seen_cap * 2 < HTTP_HEAD_MAX ? p->seen_cap * 2 : HTTP_HEAD_MAX;
			uint8_t *grown = realloc(p->seen, cap);
			if (!grown)
				return -1;
			p->seen = grown;
			p->seen_cap = cap;
		}
		size_t room = p->seen_cap - p->seen_len;
		ssize_t n = recv(p->fd, p->seen + p->seen_len, room, MSG_PEEK | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return got;
		if (n == 0) /* the client shut its side: its deadline closes it, as without an offset */
			return got;
		if (n < 0)
			return -1;
		p->seen_len += (size_t)n;
		got = 1;
		if ((size_t)n < room)
			return 1; /* the queue is empty: the socket's next readiness brings the rest */
	}
	return got;
}

/* Judges what a pending connection has sent so far. */
static void pending_service(struct http_guard *guard, struct pending *p, uint8_t *scratch)
{
	struct http_head head;
	struct http_framing_verdict verdict;
	const uint8_t *bytes = scratch;
	size_t len;
	if (p->seen) {
		int more = seen_more(p);
		if (more == 0)
			return;
		if (more < 0) {
			pending_close(guard, &guard->pending, p); /* the client went away */
			return;
		}
		bytes = p->seen;
		len = p->seen_len;
	} else {
		ssize_t n = recv(p->fd, scratch, HTTP_HEAD_MAX, MSG_PEEK | MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			return;
		if (n <= 0) {
			pending_close(guard, &guard->pending, p); /* the client went away */
			return;
		}
		len = (size_t)n;
	}
	int rc = http_head_parse(bytes, len, &head, &verdict);
	if (rc == 1) {
		if (!p->seen)
			seen_start(p, scratch, len);
		return;
	}
	list_remove(&guard->pending, p);
	atomic_store(&guard->pending_count, guard->pending.count);
	if (rc == 0) {
		epoll_ctl(guard->epoll_fd, EPOLL_CTL_DEL, p->fd, NULL);
		if (p->seen) {
			int traditional = -1; /* libmicrohttpd never peeks; leave the socket as accepted */
			setsockopt(p->fd, SOL_SOCKET, SO_PEEK_OFF, &traditional, sizeof traditional);
		}
		make_room(guard);
		/* libmicrohttpd owns the descriptor from here, and closes it if it refuses it. */
		if (MHD_add_connection(guard->daemon, p->fd, (const struct sockaddr *)&p->address,
		                       p->address_len) != MHD_YES)
			http_guard_count(guard, GUARD_CLOSED_NOT_ADMITTED);
		pending_free(p);
		return;
	}
	http_guard_count(guard, http_guard_reason_of(verdict.error));
	free(p->seen);
	p->seen = NULL;
	if (drain(p->fd) != 0) {
		epoll_ctl(guard->epoll_fd, EPOLL_CTL_DEL, p->fd, NULL);
		close(p->fd);
		pending_free(p);
		return;
	}
	answer_refusal(p, &verdict);
	shutdown(p->fd, SHUT_WR);
	p->deadline_ms = now_ms() + GUARD_LINGER_MS;
	p->lingering = true;
	list_append(&guard->lingering, p);
}

static void lingering_service(struct http_guard *guard, struct pending *p)
{
	if (drain(p->fd) != 0)
		pending_close(guard, &guard->lingering, p);
}

static void accept_all(struct http_guard *guard, uint8_t *scratch)
{
	for (;;) {
		struct pending *p = calloc(1, sizeof *p);
		if (!p)
			return;
		p->address_len = sizeof p->address;
		p->fd = accept(guard->options.listen_fd, (struct sockaddr *)&p->address, &p->address_len);
		if (p->fd < 0) {
			int error = errno;
			free(p);
			if ((error == EMFILE || error == ENFILE) && guard->pending.head) {
				/* Out of descriptors: make room by displacing the oldest pending one. */
				http_guard_count(guard, GUARD_CLOSED_PENDING_FULL);
				pending_close(guard, &guard->pending, guard->pending.head);
				continue;
			}
			return; /* EAGAIN, or an error the next readiness retries */
		}
		if (fcntl(p->fd, F_SETFL, O_NONBLOCK) != 0 || fcntl(p->fd, F_SETFD, FD_CLOEXEC) != 0) {
			close(p->fd);
			free(p);
			continue;
		}
		if (guard->pending.count >= guard->options.max_pending && guard->pending.head) {
			http_guard_count(guard, GUARD_CLOSED_PENDING_FULL);
			pending_close(guard, &guard->pending, guard->pending.head);
		}
		p->deadline_ms = now_ms() + guard->options.head_timeout_ms;
		struct epoll_event event = {.events = EPOLLIN | EPOLLRDHUP | EPOLLET, .data.ptr = p};
		if (epoll_ctl(guard->epoll_fd, EPOLL_CTL_ADD, p->fd, &event) != 0) {
			close(p->fd);
			free(p);
			continue;
		}
		list_append(&guard->pending, p);
		atomic_store(&guard->pending_count, guard->pending.count);
		pending_service(guard, p, scratch);
	}
}

static void expire(struct http_guard *guard, uint64_t now)
{
	while (guard->pending.head && guard->pending.head->deadline_ms <= now) {
		http_guard_count(guard, GUARD_CLOSED_HEAD_TIMEOUT);
		pending_close(guard, &guard->pending, guard->pending.head);
	}
	while (guard->lingering.head && guard->lingering.head->deadline_ms <= now)
		pending_close(guard, &guard->lingering, guard->lingering.head);
}

static int next_timeout(const struct http_guard *guard, uint64_t now)
{
	uint64_t deadline = UINT64_MAX;
	if (guard->pending.head)
		deadline = guard->pending.head->deadline_ms;
	if (guard->lingering.head && guard->lingering.head->deadline_ms < deadline)
		deadline = guard->lingering.head->deadline_ms;
	if (deadline == UINT64_MAX)
		return -1;
	return deadline <= now ? 0 : (int)(deadline - now > 60000 ? 60000 : deadline - now);
}

static void *admission_main(void *argument)
{
	struct http_guard *guard = argument;
	struct epoll_event events[GUARD_EPOLL_EVENTS];
	uint8_t *scratch = malloc(HTTP_HEAD_MAX);
	if (!scratch)
		return NULL;
	while (!atomic_load(&guard->stopping)) {
		int n =
		    epoll_wait(guard->epoll_fd, events, GUARD_EPOLL_EVENTS, next_timeout(guard, now_ms()));
		for (int i = 0; i < n; i++) {
			void *tag = events[i].data.ptr;
			if (tag == &guard->wake_tag)
				continue;
			if (tag == &guard->listen_tag) {
				accept_all(guard, scratch);
				continue;
			}
			struct pending *p = tag;
			if (p->gone)
				continue;
			if (p->lingering)
				lingering_service(guard, p);
			else
				pending_service(guard, p, scratch);
		}
		expire(guard, now_ms());
		graveyard_empty(guard);
	}
	free(scratch);
	return NULL;
}

/* ---- connections libmicrohttpd holds ---- */

static struct tracked *tracked_of(struct MHD_Connection *connection)
{
	const union MHD_ConnectionInfo *info =
	    MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return info ? info->socket_context : NULL;
}

static void set_phase(struct MHD_Connection *connection, enum guard_phase phase)
{
	struct tracked *t = tracked_of(connection);
	if (!t)
		return;
	/* since before phase: a watchdog that sees the new phase sees its time. */
	atomic_store(&t->since_ms, now_ms());
	atomic_store(&t->phase, phase);
}

void http_guard_request_receiving(struct MHD_Connection *connection)
{
	set_phase(connection, GUARD_RECEIVING);
}

void http_guard_request_answering(struct MHD_Connection *connection)
{
	set_phase(connection, GUARD_ANSWERING);
}

void http_guard_request_done(struct MHD_Connection *connection)
{
	set_phase(connection, GUARD_WAITING);
}

void http_guard_notify_connection(void *cls, struct MHD_Connection *connection, void **socket_context,
                                  enum MHD_ConnectionNotificationCode code)
{
	struct http_guard *guard = cls;
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *info =
		    MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
		struct tracked *t = calloc(1, sizeof *t);
		*socket_context = t;
		if (!t || !info) {
			/* A connection that cannot be given deadlines is not served. */
			if (info)
				shutdown(info->connect_fd, SHUT_RDWR);
			free(t);
			*socket_context = NULL;
			return;
		}
		t->fd = info->connect_fd;
		atomic_init(&t->since_ms, now_ms());
		atomic_init(&t->phase, GUARD_WAITING);
		pthread_mutex_lock(&guard->tracked_lock);
		t->next = guard->tracked_head;
		if (t->next)
			t->next->prev = t;
		guard->tracked_head = t;
		guard->tracked_count++;
		pthread_mutex_unlock(&guard->tracked_lock);
		return;
	}
	struct tracked *t = *socket_context;
	if (!t)
		return;
	pthread_mutex_lock(&guard->tracked_lock);
	if (t->prev)
		t->prev->next = t->next;
	else
		guard->tracked_head = t->next;
	if (t->next)
		t->next->prev = t->prev;
	guard->tracked_count--;
	pthread_mutex_unlock(&guard->tracked_lock);
	free(t);
	*socket_context = NULL;
}

/* Shuts t down (the caller holds tracked_lock); libmicrohttpd then closes it. */
static void tracked_shut(struct http_guard *guard, struct tracked *t, enum http_guard_reason reason)
{
	t->shut = true;
	shutdown(t->fd, SHUT_RDWR);
	http_guard_count(guard, reason);
}

/* Deadlines, then crowding: above nine tenths of max_connections, the connections that have
 * waited longest for a head go until eight tenths remain. */
static void watch(struct http_guard *guard, uint64_t now)
{
	size_t high = guard->options.max_connections - guard->options.max_connections / 10;
	size_t low = guard->options.max_connections - guard->options.max_connections / 5;
	pthread_mutex_lock(&guard->tracked_lock);
	size_t open = 0;
	for (struct tracked *t = guard->tracked_head; t; t = t->next) {
		if (t->shut)
			continue;
		int phase = atomic_load(&t->phase);
		uint64_t since = atomic_load(&t->since_ms);
		uint64_t age = now > since ? now - since : 0;
		if (phase == GUARD_WAITING && age > guard->options.head_timeout_ms)
			tracked_shut(guard, t, GUARD_CLOSED_HEAD_TIMEOUT);
		else if (phase == GUARD_RECEIVING && age > guard->options.body_timeout_ms)
			tracked_shut(guard, t, GUARD_CLOSED_BODY_TIMEOUT);
		else
			open++;
	}
	while (open > high) {
		struct tracked *oldest = NULL;
		for (struct tracked *t = guard->tracked_head; t; t = t->next)
			if (!t->shut && atomic_load(&t->phase) == GUARD_WAITING &&
			    (!oldest || atomic_load(&t->since_ms) < atomic_load(&oldest->since_ms)))
				oldest = t;
		if (!oldest)
			break;
		tracked_shut(guard, oldest, GUARD_CLOSED_CROWDED);
		if (--open <= low)
			break;
	}
	pthread_mutex_unlock(&guard->tracked_lock);
}

/* ---- the aggregate line ---- */

void http_guard_log(void *cls, const char *format, va_list args)
{
	struct http_guard *guard = cls;
	(void)args; /* the arguments may describe a client: only the message kind is kept */
	pthread_mutex_lock(&guard->message_lock);
	size_t i = 0;
	while (i < GUARD_MESSAGE_KINDS && guard->messages[i].format && guard->messages[i].format != format)
		i++;
	if (i == GUARD_MESSAGE_KINDS) {
		guard->other_messages++;
	} else {
		guard->messages[i].format = format;
		guard->messages[i].count++;
	}
	pthread_mutex_unlock(&guard->message_lock);
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

/* Writes one line of what happened since the last one, if anything did. */
static void log_round(struct http_guard *guard, uint64_t now, bool final)
{
	if (!final && now - guard->last_log_ms < guard->options.log_interval_ms)
		return;
	uint64_t seconds = (now - guard->last_log_ms + 500) / 1000;
	guard->last_log_ms = now;
	struct buffer line;
	char part[96];
	int any = 0;
	buffer_init(&line);
	snprintf(part, sizeof part, "http: in the last %llu s:", (unsigned long long)seconds);
	buffer_append_string(&line, part);
	for (int r = 0; r < GUARD_REASON_COUNT; r++) {
		uint64_t count = atomic_load(&guard->counts[r]);
		if (count == guard->logged[r])
			continue;
		snprintf(part, sizeof part, "%s %llu %s", any ? "," : "",
		         (unsigned long long)(count - guard->logged[r]), guard_reason_names[r]);
		buffer_append_string(&line, part);
		guard->logged[r] = count;
		any = 1;
	}
	pthread_mutex_lock(&guard->message_lock);
	for (size_t i = 0; i < GUARD_MESSAGE_KINDS && guard->messages[i].format; i++) {
		struct guard_message *m = &guard->messages[i];
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
	if (guard->other_messages != guard->other_logged) {
		snprintf(part, sizeof part, "%s %llu x other libmicrohttpd messages", any ? "," : "",
		         (unsigned long long)(guard->other_messages - guard->other_logged));
		buffer_append_string(&line, part);
		guard->other_logged = guard->other_messages;
		any = 1;
	}
	pthread_mutex_unlock(&guard->message_lock);
	if (any)
		logline_write(guard->options.log, "dirauthd",
		              logline_epoch_now(guard->options.clock, guard->options.schedule), NULL, "%.*s",
		              (int)line.len, (const char *)line.data);
	buffer_free(&line);
}

static void *watchdog_main(void *argument)
{
	struct http_guard *guard = argument;
	pthread_mutex_lock(&guard->wait_lock);
	while (!atomic_load(&guard->stopping)) {
		struct timespec deadline;
		clock_gettime(CLOCK_MONOTONIC, &deadline);
		deadline.tv_nsec += GUARD_TICK_MS * 1000000L;
		deadline.tv_sec += deadline.tv_nsec / 1000000000L;
		deadline.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&guard->wait_cond, &guard->wait_lock, &deadline);
		if (atomic_load(&guard->stopping))
			break;
		pthread_mutex_unlock(&guard->wait_lock);
		uint64_t now = now_ms();
		watch(guard, now);
		log_round(guard, now, false);
		pthread_mutex_lock(&guard->wait_lock);
	}
	pthread_mutex_unlock(&guard->wait_lock);
	return NULL;
}

/* ---- life cycle ---- */

int http_guard_create(const struct http_guard_options *options, struct http_guard **out)
{
	*out = NULL;
	struct http_guard *guard = calloc(1, sizeof *guard);
	if (!guard)
		return DIRAUTH_ERR_NOMEM;
	guard->options = *options;
	guard->epoll_fd = guard->wake_fd = -1;
	pthread_condattr_t attributes;
	if (pthread_mutex_init(&guard->tracked_lock, NULL) != 0 ||
	    pthread_mutex_init(&guard->message_lock, NULL) != 0 ||
	    pthread_mutex_init(&guard->wait_lock, NULL) != 0 || pthread_condattr_init(&attributes) != 0) {
		free(guard);
		return DIRAUTH_ERR_NOMEM;
	}
	pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC);
	int rc = pthread_cond_init(&guard->wait_cond, &attributes);
	pthread_condattr_destroy(&attributes);
	if (rc != 0) {
		free(guard);
		return DIRAUTH_ERR_NOMEM;
	}
	guard->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	guard->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	struct epoll_event listen_event = {.events = EPOLLIN, .data.ptr = &guard->listen_tag};
	struct epoll_event wake_event = {.events = EPOLLIN, .data.ptr = &guard->wake_tag};
	if (guard->epoll_fd < 0 || guard->wake_fd < 0 ||
	    epoll_ctl(guard->epoll_fd, EPOLL_CTL_ADD, options->listen_fd, &listen_event) != 0 ||
	    epoll_ctl(guard->epoll_fd, EPOLL_CTL_ADD, guard->wake_fd, &wake_event) != 0) {
		http_guard_free(guard);
		return DIRAUTH_ERR_IO;
	}
	guard->last_log_ms = now_ms();
	*out = guard;
	return 0;
}

int http_guard_start(struct http_guard *guard, struct MHD_Daemon *daemon)
{
	guard->daemon = daemon;
	if (pthread_create(&guard->admission_thread, NULL, admission_main, guard) != 0)
		return DIRAUTH_ERR_INTERNAL;
	if (pthread_create(&guard->watchdog_thread, NULL, watchdog_main, guard) != 0) {
		atomic_store(&guard->stopping, true);
		uint64_t one = 1;
		ssize_t written = write(guard->wake_fd, &one, sizeof one);
		(void)written;
		pthread_join(guard->admission_thread, NULL);
		return DIRAUTH_ERR_INTERNAL;
	}
	guard->started = true;
	return 0;
}

void http_guard_stop(struct http_guard *guard)
{
	if (!guard)
		return;
	if (guard->started) {
		atomic_store(&guard->stopping, true);
		uint64_t one = 1;
		ssize_t written = write(guard->wake_fd, &one, sizeof one);
		(void)written;
		pthread_mutex_lock(&guard->wait_lock);
		pthread_cond_signal(&guard->wait_cond);
		pthread_mutex_unlock(&guard->wait_lock);
		pthread_join(guard->admission_thread, NULL);
		pthread_join(guard->watchdog_thread, NULL);
		guard->started = false;
		log_round(guard, now_ms(), true);
	}
	while (guard->pending.head)
		pending_close(guard, &guard->pending, guard->pending.head);
	while (guard->lingering.head)
		pending_close(guard, &guard->lingering, guard->lingering.head);
	graveyard_empty(guard);
	if (guard->options.listen_fd >= 0) {
		close(guard->options.listen_fd);
		guard->options.listen_fd = -1;
	}
}

void http_guard_free(struct http_guard *guard)
{
	if (!guard)
		return;
	http_guard_stop(guard);
	if (guard->epoll_fd >= 0)
		close(guard->epoll_fd);
	if (guard->wake_fd >= 0)
		close(guard->wake_fd);
	pthread_cond_destroy(&guard->wait_cond);
	pthread_mutex_destroy(&guard->wait_lock);
	pthread_mutex_destroy(&guard->message_lock);
	pthread_mutex_destroy(&guard->tracked_lock);
	free(guard);
}

void http_guard_counts(struct http_guard *guard, uint64_t out[GUARD_REASON_COUNT])
{
	for (int r = 0; r < GUARD_REASON_COUNT; r++)
		out[r] = atomic_load(&guard->counts[r]);
}

void http_guard_connection_counts(struct http_guard *guard, size_t *pending, size_t *admitted)
{
	*pending = atomic_load(&guard->pending_count);
	pthread_mutex_lock(&guard->tracked_lock);
	*admitted = guard->tracked_count;
	pthread_mutex_unlock(&guard->tracked_lock);
}
