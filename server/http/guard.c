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
 * Room. A connection counts against max_connections (and max_per_address) from the moment it is
 * handed over until libmicrohttpd reports it closed. Shutting a connection down does not free its
 * place at once: libmicrohttpd counts it until the thread that serves it sees the shutdown, closes
 * it and cleans it up (and for a moment after it has reported it closed); it counts a connection
 * handed over only once that thread takes it from its queue; and a connection handed over beyond
 * one of its limits is closed unanswered (a reset, for a client that sent a whole request). So
 * the guard counts for itself, shut and queued connections included, hands a connection over only
 * while that count is under max_connections, and gives libmicrohttpd limits no mix of
 * connections can reach (http.c). A connection whose head is complete while there is no room
 * waits on the room list, in arrival order, until a close makes room (libmicrohttpd's "closed"
 * notification wakes the admission thread) or head_timeout_ms pass. A connection handed over
 * is "admitted" until libmicrohttpd reads its head: it has sent a whole request, and is never
 * taken for one idle between requests.
 *
 * The watchdog thread wakes every GUARD_TICK_MS, walks the connections libmicrohttpd holds, shuts
 * down those past their deadline or, when crowded, those that have waited longest for a head
 * between requests, and writes the aggregate line. The table of those connections is guarded by
 * a mutex that the watchdog holds while it calls shutdown(2), and libmicrohttpd's "closed"
 * notification takes it before the descriptor is closed, so the watchdog never shuts down a
 * descriptor that has been reused; a connection handed over but not yet started by libmicrohttpd
 * is never shut down (libmicrohttpd may close it without a notification). Phases are atomics the
 * request callbacks store without taking the mutex.
 */
#define _DEFAULT_SOURCE /* SO_PEEK_OFF */
#include "server/http/guard.h"
#include "server/http/guard_tally.h"

#include "base/buffer.h"
#include "base/error.h"
#include "server/api/api_error.h"
#include "server/http/framing.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
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

#define GUARD_TICK_MS      100
#define GUARD_LINGER_MS    1000
#define GUARD_EPOLL_EVENTS 64
#define GUARD_DRAIN_MAX    (64 * 1024)
#define GUARD_SEEN_MIN     1024 /* first size of a pending connection's copy of its head */

enum guard_phase {
	GUARD_ADMITTED,  /* handed over with its first head complete; libmicrohttpd has not read it */
	GUARD_WAITING,   /* kept alive between requests: waiting for the next head */
	GUARD_RECEIVING, /* its head read, its body arriving */
	GUARD_ANSWERING,
};

/* Where a connection the admission thread holds is. */
enum pending_state {
	PENDING_HEAD,      /* the pending queue: its first head not complete yet */
	PENDING_ROOM,      /* the room list: its head complete, waiting for room in libmicrohttpd */
	PENDING_LINGERING, /* answered by the guard; on the lingering list */
};

/* A connection in the pending queue, on the room list or on the lingering list (admission thread
 * only). */
struct pending {
	int fd;
	struct sockaddr_storage address;
	socklen_t address_len;
	uint64_t deadline_ms;
	uint8_t *seen; /* the head's bytes so far, once the socket has a peek offset */
	size_t seen_len, seen_cap;
	enum pending_state state;
	bool gone; /* closed or handed over; freed after the current batch of events */
	struct pending *prev, *next;
};

struct pending_list {
	struct pending *head, *tail;
	size_t count;
};

/* A connection handed to libmicrohttpd, from the handover until libmicrohttpd reports it closed:
 * on the starting list until libmicrohttpd starts it (its "started" notification), then on the
 * tracked list. */
/* A client's address, without its port: what max_per_address counts by. */
struct guard_address {
	sa_family_t family; /* AF_INET, AF_INET6, or 0 when unknown (counted with no other) */
	uint8_t bytes[16];
};

struct tracked {
	int fd;
	struct guard_address address;
	atomic_int phase;
	atomic_uint_fast64_t since_ms;
	bool shut;
	struct tracked *prev, *next;
};

struct tracked_list {
	struct tracked *head;
	size_t count;
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
	struct pending_list room;      /* admission thread only */
	struct pending_list lingering; /* admission thread only */
	struct pending *graveyard;     /* gone entries that events of this batch may still name */
	atomic_size_t pending_count;   /* mirror of pending.count for other threads */
	atomic_size_t room_count;      /* mirror of room.count: the admission thread is woken when a
	                                  connection closes while it is not 0 */

	pthread_mutex_t tracked_lock; /* guards both lists, live and each entry's shut flag */
	struct tracked_list starting; /* handed over, not yet started by libmicrohttpd */
	struct tracked_list tracked;  /* started */
	size_t live;                  /* entries of both lists not shut down */

	struct guard_tally tally; /* its line written by the watchdog, then by http_guard_stop */

	pthread_mutex_t wait_lock; /* the watchdog's sleep */
	pthread_cond_t wait_cond;
};

/* A limit a reload may change (http_guard_set_limits): each is read and written whole, atomically,
 * and each is independent of the others, so a thread reads either the old value or the new. */
#define LIMIT(guard, field) __atomic_load_n(&(guard)->options.limits.field, __ATOMIC_RELAXED)

static uint64_t now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

void http_guard_count(struct http_guard *guard, enum http_guard_reason reason)
{
	if (guard)
		guard_tally_count(&guard->tally, reason);
}

/* ---- the connections libmicrohttpd holds (under tracked_lock) ---- */

static void address_of(const struct sockaddr *address, struct guard_address *out)
{
	memset(out, 0, sizeof *out);
	if (address && address->sa_family == AF_INET) {
		out->family = AF_INET;
		memcpy(out->bytes, &((const struct sockaddr_in *)(const void *)address)->sin_addr, 4);
	} else if (address && address->sa_family == AF_INET6) {
		out->family = AF_INET6;
		memcpy(out->bytes, &((const struct sockaddr_in6 *)(const void *)address)->sin6_addr, 16);
	}
}

static bool same_address(const struct guard_address *a, const struct guard_address *b)
{
	return a->family && a->family == b->family && memcmp(a->bytes, b->bytes, sizeof a->bytes) == 0;
}

static void tracked_insert(struct tracked_list *list, struct tracked *t)
{
	t->prev = NULL;
	t->next = list->head;
	if (t->next)
		t->next->prev = t;
	list->head = t;
	list->count++;
}

static void tracked_remove(struct tracked_list *list, struct tracked *t)
{
	if (t->prev)
		t->prev->next = t->next;
	else
		list->head = t->next;
	if (t->next)
		t->next->prev = t->prev;
	list->count--;
}

/* Connections libmicrohttpd holds or will hold, shut ones included: what counts against
 * max_connections. */
static size_t admitted_count(const struct http_guard *guard)
{
	return guard->starting.count + guard->tracked.count;
}

/* Those of address, shut ones included. */
static size_t address_count(const struct http_guard *guard, const struct guard_address *address)
{
	size_t count = 0;
	for (const struct tracked *t = guard->starting.head; t; t = t->next)
		count += same_address(&t->address, address);
	for (const struct tracked *t = guard->tracked.head; t; t = t->next)
		count += same_address(&t->address, address);
	return count;
}

/* Removes t from list (under tracked_lock) and frees it. */
static void tracked_forget(struct http_guard *guard, struct tracked_list *list, struct tracked *t)
{
	tracked_remove(list, t);
	if (!t->shut)
		guard->live--;
	free(t);
}

/* The started connection that has waited longest for a head between requests, or NULL. */
static struct tracked *longest_waiting(const struct http_guard *guard)
{
	struct tracked *oldest = NULL;
	for (struct tracked *t = guard->tracked.head; t; t = t->next)
		if (!t->shut && atomic_load(&t->phase) == GUARD_WAITING &&
		    (!oldest || atomic_load(&t->since_ms) < atomic_load(&oldest->since_ms)))
			oldest = t;
	return oldest;
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

/* The list a connection of state is on. */
static struct pending_list *list_of(struct http_guard *guard, enum pending_state state)
{
	return state == PENDING_HEAD   ? &guard->pending
	       : state == PENDING_ROOM ? &guard->room
	                               : &guard->lingering;
}

static void counts_mirror(struct http_guard *guard)
{
	atomic_store(&guard->pending_count, guard->pending.count);
	atomic_store(&guard->room_count, guard->room.count);
}

static void pending_close(struct http_guard *guard, struct pending *p)
{
	list_remove(list_of(guard, p->state), p);
	counts_mirror(guard);
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

/* Hands p, whose first head is complete, to libmicrohttpd if there is room; returns false when
 * there is none, p left as it is. The connections not shut down are kept under nine tenths
 * of max_connections: before one more is handed over, the one that has waited longest for a head
 * between requests is shut down; it makes room once libmicrohttpd has closed it. A connection
 * from an address that holds max_per_address already (those being closed included) is closed
 * instead. The lock is held across MHD_add_connection (which only queues the connection for a
 * thread of libmicrohttpd), so that on a refusal, libmicrohttpd having closed the descriptor, no
 * entry names it while it may be reused. */
static bool hand_over(struct http_guard *guard, struct pending *p)
{
	size_t max = guard->options.max_connections;
	struct guard_address address;
	address_of((const struct sockaddr *)&p->address, &address);
	pthread_mutex_lock(&guard->tracked_lock);
	if (guard->live >= max - max / 10) {
		struct tracked *oldest = longest_waiting(guard);
		if (oldest)
			tracked_shut(guard, oldest, GUARD_CLOSED_CROWDED);
	}
	if (admitted_count(guard) >= max) {
		pthread_mutex_unlock(&guard->tracked_lock);
		return false;
	}
	struct tracked *t = NULL;
	size_t per_address = LIMIT(guard, max_per_address);
	if ((admitted_count(guard) >= per_address && address_count(guard, &address) >= per_address) ||
	    !(t = calloc(1, sizeof *t))) {
		close(p->fd);
		http_guard_count(guard, GUARD_CLOSED_NOT_ADMITTED);
		pthread_mutex_unlock(&guard->tracked_lock);
		return true;
	}
	/* An entry not started with this descriptor is stale: libmicrohttpd closed it without
	 * starting it, and the number was given to this connection. */
	for (struct tracked *s = guard->starting.head; s; s = s->next)
		if (s->fd == p->fd) {
			tracked_forget(guard, &guard->starting, s);
			break;
		}
	t->fd = p->fd;
	t->address = address;
	atomic_init(&t->phase, GUARD_ADMITTED);
	atomic_init(&t->since_ms, now_ms());
	tracked_insert(&guard->starting, t);
	guard->live++;
	/* libmicrohttpd owns the descriptor from here, and closes it if it refuses it. */
	if (MHD_add_connection(guard->daemon, p->fd, (const struct sockaddr *)&p->address, p->address_len) !=
	    MHD_YES) {
		tracked_forget(guard, &guard->starting, t);
		http_guard_count(guard, GUARD_CLOSED_NOT_ADMITTED);
	}
	pthread_mutex_unlock(&guard->tracked_lock);
	return true;
}

/* Hands over the connections on the room list, oldest first, while there is room. */
static void admit_waiting(struct http_guard *guard)
{
	while (guard->room.head && hand_over(guard, guard->room.head)) {
		struct pending *p = guard->room.head;
		list_remove(&guard->room, p);
		counts_mirror(guard);
		pending_bury(guard, p); /* its descriptor is libmicrohttpd's now */
	}
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
			pending_close(guard, p); /* the client went away */
			return;
		}
		bytes = p->seen;
		len = p->seen_len;
	} else {
		ssize_t n = recv(p->fd, scratch, HTTP_HEAD_MAX, MSG_PEEK | MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			return;
		if (n <= 0) {
			pending_close(guard, p); /* the client went away */
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
	counts_mirror(guard);
	if (rc == 0) {
		/* Its bytes are libmicrohttpd's to read: no more events here. Behind those already
		 * waiting for room, for a head's time at most (so the room list is in deadline order). */
		epoll_ctl(guard->epoll_fd, EPOLL_CTL_DEL, p->fd, NULL);
		if (p->seen) {
			int traditional = -1; /* libmicrohttpd never peeks; leave the socket as accepted */
			setsockopt(p->fd, SOL_SOCKET, SO_PEEK_OFF, &traditional, sizeof traditional);
		}
		free(p->seen);
		p->seen = NULL;
		p->state = PENDING_ROOM;
		p->deadline_ms = now_ms() + LIMIT(guard, head_timeout_ms);
		list_append(&guard->room, p);
		counts_mirror(guard);
		admit_waiting(guard);
		return;
	}
	http_guard_count(guard, http_guard_reason_of(verdict.error));
	free(p->seen);
	p->seen = NULL;
	if (drain(p->fd) != 0) {
		epoll_ctl(guard->epoll_fd, EPOLL_CTL_DEL, p->fd, NULL);
		close(p->fd);
		pending_bury(guard, p);
		return;
	}
	answer_refusal(p, &verdict);
	shutdown(p->fd, SHUT_WR);
	p->deadline_ms = now_ms() + GUARD_LINGER_MS;
	p->state = PENDING_LINGERING;
	list_append(&guard->lingering, p);
}

static void lingering_service(struct http_guard *guard, struct pending *p)
{
	if (drain(p->fd) != 0)
		pending_close(guard, p);
}

/* Closes the oldest connection whose first head is not complete, to make room for a new one; only
 * when there is none, the oldest waiting for room. A flood of slow connections displaces itself,
 * not the clients that sent a whole request. */
static void displace_oldest(struct http_guard *guard)
{
	struct pending *p = guard->pending.head ? guard->pending.head : guard->room.head;
	if (!p)
		return;
	http_guard_count(guard, GUARD_CLOSED_PENDING_FULL);
	pending_close(guard, p);
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
			if ((error == EMFILE || error == ENFILE) &&
			    (guard->pending.head || guard->room.head)) {
				/* Out of descriptors: make room by displacing the oldest waiting one. */
				displace_oldest(guard);
				continue;
			}
			return; /* EAGAIN, or an error the next readiness retries */
		}
		if (fcntl(p->fd, F_SETFL, O_NONBLOCK) != 0 || fcntl(p->fd, F_SETFD, FD_CLOEXEC) != 0) {
			close(p->fd);
			free(p);
			continue;
		}
		if (guard->pending.count + guard->room.count >= LIMIT(guard, max_pending))
			displace_oldest(guard);
		p->deadline_ms = now_ms() + LIMIT(guard, head_timeout_ms);
		struct epoll_event event = {.events = EPOLLIN | EPOLLRDHUP | EPOLLET, .data.ptr = p};
		if (epoll_ctl(guard->epoll_fd, EPOLL_CTL_ADD, p->fd, &event) != 0) {
			close(p->fd);
			free(p);
			continue;
		}
		p->state = PENDING_HEAD;
		list_append(&guard->pending, p);
		counts_mirror(guard);
		pending_service(guard, p, scratch);
	}
}

static void expire(struct http_guard *guard, uint64_t now)
{
	while (guard->pending.head && guard->pending.head->deadline_ms <= now) {
		http_guard_count(guard, GUARD_CLOSED_HEAD_TIMEOUT);
		pending_close(guard, guard->pending.head);
	}
	/* No room came within a head's time. */
	while (guard->room.head && guard->room.head->deadline_ms <= now) {
		http_guard_count(guard, GUARD_CLOSED_NOT_ADMITTED);
		pending_close(guard, guard->room.head);
	}
	while (guard->lingering.head && guard->lingering.head->deadline_ms <= now)
		pending_close(guard, guard->lingering.head);
}

static int next_timeout(const struct http_guard *guard, uint64_t now)
{
	uint64_t deadline = UINT64_MAX;
	if (guard->pending.head)
		deadline = guard->pending.head->deadline_ms;
	if (guard->room.head && guard->room.head->deadline_ms < deadline)
		deadline = guard->room.head->deadline_ms;
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
			if (tag == &guard->wake_tag) {
				/* A connection closed while some wait for room: admit_waiting below. */
				uint64_t count;
				ssize_t got = read(guard->wake_fd, &count, sizeof count);
				(void)got;
				continue;
			}
			if (tag == &guard->listen_tag) {
				accept_all(guard, scratch);
				continue;
			}
			struct pending *p = tag;
			if (p->gone)
				continue;
			if (p->state == PENDING_LINGERING)
				lingering_service(guard, p);
			else if (p->state == PENDING_HEAD)
				pending_service(guard, p, scratch);
		}
		admit_waiting(guard);
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
		*socket_context = NULL;
		if (!info)
			return;
		pthread_mutex_lock(&guard->tracked_lock);
		/* The entry made at the handover; a new one if it was forgotten (watch). */
		struct tracked *t = guard->starting.head;
		while (t && t->fd != info->connect_fd)
			t = t->next;
		if (t) {
			tracked_remove(&guard->starting, t);
		} else if ((t = calloc(1, sizeof *t))) {
			const union MHD_ConnectionInfo *client =
			    MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
			t->fd = info->connect_fd;
			address_of(client ? client->client_addr : NULL, &t->address);
			atomic_init(&t->phase, GUARD_ADMITTED);
			atomic_init(&t->since_ms, now_ms());
			guard->live++;
		}
		if (t)
			tracked_insert(&guard->tracked, t);
		pthread_mutex_unlock(&guard->tracked_lock);
		if (!t)
			shutdown(info->connect_fd, SHUT_RDWR); /* one that cannot be given deadlines */
		*socket_context = t;
		return;
	}
	struct tracked *t = *socket_context;
	if (!t)
		return;
	pthread_mutex_lock(&guard->tracked_lock);
	tracked_forget(guard, &guard->tracked, t);
	pthread_mutex_unlock(&guard->tracked_lock);
	*socket_context = NULL;
	if (atomic_load(&guard->room_count)) {
		uint64_t one = 1;
		ssize_t written = write(guard->wake_fd, &one, sizeof one);
		(void)written;
	}
}

/* Shuts t down (the caller holds tracked_lock); libmicrohttpd then closes it. */
static void tracked_shut(struct http_guard *guard, struct tracked *t, enum http_guard_reason reason)
{
	t->shut = true;
	guard->live--;
	shutdown(t->fd, SHUT_RDWR);
	http_guard_count(guard, reason);
}

static uint64_t age_of(const struct tracked *t, uint64_t now)
{
	uint64_t since = atomic_load(&t->since_ms);
	return now > since ? now - since : 0;
}

/* Deadlines, then crowding: above nine tenths of max_connections, the connections that have
 * waited longest for a head between requests go until eight tenths remain. */
static void watch(struct http_guard *guard, uint64_t now)
{
	size_t high = guard->options.max_connections - guard->options.max_connections / 10;
	size_t low = guard->options.max_connections - guard->options.max_connections / 5;
	pthread_mutex_lock(&guard->tracked_lock);
	/* One handed over and never started within a head's time was closed by libmicrohttpd
	 * unannounced (or its thread is stuck): forgotten, never shut down, as its descriptor may
	 * be another's by now. */
	for (struct tracked *t = guard->starting.head, *next; t; t = next) {
		next = t->next;
		if (age_of(t, now) > LIMIT(guard, head_timeout_ms))
			tracked_forget(guard, &guard->starting, t);
	}
	for (struct tracked *t = guard->tracked.head; t; t = t->next) {
		if (t->shut)
			continue;
		int phase = atomic_load(&t->phase);
		uint64_t age = age_of(t, now);
		if ((phase == GUARD_WAITING || phase == GUARD_ADMITTED) &&
		    age > LIMIT(guard, head_timeout_ms))
			tracked_shut(guard, t, GUARD_CLOSED_HEAD_TIMEOUT);
		else if (phase == GUARD_RECEIVING && age > LIMIT(guard, body_timeout_ms))
			tracked_shut(guard, t, GUARD_CLOSED_BODY_TIMEOUT);
	}
	while (guard->live > high) {
		struct tracked *oldest = longest_waiting(guard);
		if (!oldest)
			break;
		tracked_shut(guard, oldest, GUARD_CLOSED_CROWDED);
		if (guard->live <= low)
			break;
	}
	pthread_mutex_unlock(&guard->tracked_lock);
}

/* ---- libmicrohttpd's messages and the aggregate line (guard_tally.h) ---- */

void http_guard_log(void *cls, const char *format, va_list args)
{
	struct http_guard *guard = cls;
	(void)args; /* the arguments may describe a client: only the message kind is kept */
	guard_tally_message(&guard->tally, format);
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
		guard_tally_write(&guard->tally, &guard->options, now, false);
		pthread_mutex_lock(&guard->wait_lock);
	}
	pthread_mutex_unlock(&guard->wait_lock);
	return NULL;
}

void http_guard_set_limits(struct http_guard *guard, const struct http_guard_limits *limits)
{
	__atomic_store_n(&guard->options.limits.head_timeout_ms, limits->head_timeout_ms, __ATOMIC_RELAXED);
	__atomic_store_n(&guard->options.limits.body_timeout_ms, limits->body_timeout_ms, __ATOMIC_RELAXED);
	__atomic_store_n(&guard->options.limits.max_pending, limits->max_pending, __ATOMIC_RELAXED);
	__atomic_store_n(&guard->options.limits.max_per_address, limits->max_per_address, __ATOMIC_RELAXED);
	__atomic_store_n(&guard->options.limits.log_interval_ms, limits->log_interval_ms, __ATOMIC_RELAXED);
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
	    guard_tally_init(&guard->tally, now_ms()) != 0 ||
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
		guard_tally_write(&guard->tally, &guard->options, now_ms(), true);
	}
	while (guard->pending.head)
		pending_close(guard, guard->pending.head);
	while (guard->room.head)
		pending_close(guard, guard->room.head);
	while (guard->lingering.head)
		pending_close(guard, guard->lingering.head);
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
	/* libmicrohttpd has stopped: it reported every connection it started closed, and the
	 * entries left are of connections it never started. */
	while (guard->starting.head)
		tracked_forget(guard, &guard->starting, guard->starting.head);
	while (guard->tracked.head)
		tracked_forget(guard, &guard->tracked, guard->tracked.head);
	if (guard->epoll_fd >= 0)
		close(guard->epoll_fd);
	if (guard->wake_fd >= 0)
		close(guard->wake_fd);
	pthread_cond_destroy(&guard->wait_cond);
	pthread_mutex_destroy(&guard->wait_lock);
	guard_tally_destroy(&guard->tally);
	pthread_mutex_destroy(&guard->tracked_lock);
	free(guard);
}

void http_guard_counts(struct http_guard *guard, uint64_t out[GUARD_REASON_COUNT])
{
	guard_tally_counts(&guard->tally, out);
}

void http_guard_connection_counts(struct http_guard *guard, size_t *pending, size_t *waiting,
                                  size_t *admitted)
{
	*pending = atomic_load(&guard->pending_count);
	*waiting = atomic_load(&guard->room_count);
	pthread_mutex_lock(&guard->tracked_lock);
	*admitted = admitted_count(guard);
	pthread_mutex_unlock(&guard->tracked_lock);
}
