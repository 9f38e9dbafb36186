/*
 * flood.c: the hostile connections of bench_flood (flood.h).
 *
 * One thread owns every connection: a descriptor, its state (closed, connecting, open) and the
 * time of its next step (the next byte, the connect deadline or the next attempt). epoll tells it
 * which connects finished and which connections the server closed; a tick every FLOOD_TICK_MS
 * sends the bytes that are due and starts the connects that are due. Nothing is shared with the
 * caller but the counters, which are atomics.
 */
#include "bench/flood.h"

#include <errno.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define FLOOD_HEAD_MAX 4096 /* the trickled head: at one byte per 100 ms, seven minutes */
#define FLOOD_RETRY_MS 100  /* after a socket, bind or connect that failed at once */
#define FLOOD_EVENTS   256
#define FLOOD_BODY_HEAD                                                                                      \
	"POST /v1/registrations HTTP/1.1\r\nHost: 127.0.0.1\r\n"                                             \
	"Content-Type: text/plain\r\nContent-Length: 60000\r\n\r\n"

enum hostile_kind { HOSTILE_TRICKLE, HOSTILE_IDLE, HOSTILE_BODY };
enum hostile_state { HOSTILE_CLOSED, HOSTILE_CONNECTING, HOSTILE_OPEN };

struct hostile {
	int fd;
	enum hostile_kind kind;
	enum hostile_state state;
	struct in_addr source;
	size_t sent;      /* bytes of the current request */
	uint64_t next_ms; /* the next byte, the connect deadline, or the next attempt */
};

struct flood {
	struct harness *harness;
	struct flood_options options;
	struct hostile *hostiles;
	size_t count;
	int epoll_fd;
	pthread_t thread;
	int running;
	atomic_int stop;
	char head[FLOOD_HEAD_MAX];
	size_t head_len;
	uint64_t random; /* xorshift64 state: where in the interval each connection's bytes fall */
	struct flood_counters counters;
	double cpu_seconds;
};

static uint64_t now_ms(void)
{
	return (uint64_t)(harness_now() * 1000.0);
}

static uint64_t next_random(struct flood *flood)
{
	uint64_t x = flood->random;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	flood->random = x;
	return x;
}

static void hostile_close(struct flood *flood, struct hostile *h)
{
	epoll_ctl(flood->epoll_fd, EPOLL_CTL_DEL, h->fd, NULL);
	close(h->fd);
	h->fd = -1;
	if (h->state == HOSTILE_OPEN)
		atomic_fetch_sub(&flood->counters.open, 1);
	h->state = HOSTILE_CLOSED;
	h->next_ms = now_ms(); /* opened again at once: the flood keeps its size */
}

/* The server closed or reset h, or a send failed. */
static void hostile_lost(struct flood *flood, struct hostile *h)
{
	atomic_fetch_add(&flood->counters.closed, 1);
	hostile_close(flood, h);
}

static void hostile_refused(struct flood *flood, struct hostile *h)
{
	atomic_fetch_add(&flood->counters.refused, 1);
	if (h->fd >= 0) {
		hostile_close(flood, h);
	} else {
		h->state = HOSTILE_CLOSED;
		h->next_ms = now_ms() + FLOOD_RETRY_MS;
	}
}

static void hostile_opened(struct flood *flood, struct hostile *h)
{
	struct flood_counters *c = &flood->counters;
	h->state = HOSTILE_OPEN;
	h->sent = 0;
	size_t open = atomic_fetch_add(&c->open, 1) + 1;
	if (open > atomic_load(&c->peak_open))
		atomic_store(&c->peak_open, open);
	atomic_fetch_add(&c->opened, 1);
	struct epoll_event event = {.events = EPOLLIN | EPOLLRDHUP, .data.ptr = h};
	epoll_ctl(flood->epoll_fd, EPOLL_CTL_MOD, h->fd, &event);
	h->next_ms = now_ms() + next_random(flood) % (flood->options.interval_ms + 1);
	if (h->kind == HOSTILE_BODY) {
		static const char head[] = FLOOD_BODY_HEAD;
		ssize_t n = send(h->fd, head, sizeof(head) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n != (ssize_t)(sizeof(head) - 1)) {
			hostile_lost(flood, h);
			return;
		}
		atomic_fetch_add(&c->bytes, (uint64_t)n);
	}
}

static void hostile_connect(struct flood *flood, struct hostile *h)
{
	int one = 1;
	struct sockaddr_in local = {.sin_family = AF_INET, .sin_addr = h->source};
	struct sockaddr_in server = {.sin_family = AF_INET,
	                             .sin_port = htons((uint16_t)flood->options.port),
	                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	h->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (h->fd < 0) {
		hostile_refused(flood, h);
		return;
	}
	/* The port is chosen at connect, per (source, destination), so that many more than the 28k
	 * ephemeral ports of one bind fit. */
	setsockopt(h->fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one));
	setsockopt(h->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	struct epoll_event event = {.events = EPOLLOUT, .data.ptr = h};
	if (bind(h->fd, (struct sockaddr *)&local, sizeof(local)) != 0 ||
	    (connect(h->fd, (struct sockaddr *)&server, sizeof(server)) != 0 && errno != EINPROGRESS) ||
	    epoll_ctl(flood->epoll_fd, EPOLL_CTL_ADD, h->fd, &event) != 0) {
		close(h->fd);
		h->fd = -1;
		hostile_refused(flood, h);
		return;
	}
	h->state = HOSTILE_CONNECTING;
	h->next_ms = now_ms() + FLOOD_CONNECT_MS;
}

static void hostile_event(struct flood *flood, struct hostile *h, uint32_t events)
{
	if (h->state == HOSTILE_CONNECTING) {
		int error = 0;
		socklen_t len = sizeof(error);
		if (getsockopt(h->fd, SOL_SOCKET, SO_ERROR, &error, &len) != 0 || error != 0 ||
		    (events & (EPOLLERR | EPOLLHUP)))
			hostile_refused(flood, h);
		else
			hostile_opened(flood, h);
		return;
	}
	if (h->state != HOSTILE_OPEN)
		return;
	char scratch[4096];
	for (;;) {
		ssize_t n = recv(h->fd, scratch, sizeof(scratch), MSG_DONTWAIT);
		if (n > 0) {
			atomic_fetch_add(&flood->counters.answered, 1);
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n < 0 && errno == EINTR)
			continue;
		hostile_lost(flood, h);
		return;
	}
}

/* One tick: the bytes that are due, the connects that are due or overdue. */
static void flood_tick(struct flood *flood, uint64_t now)
{
	for (size_t i = 0; i < flood->count; i++) {
		struct hostile *h = &flood->hostiles[i];
		if (h->state == HOSTILE_CLOSED && now >= h->next_ms) {
			hostile_connect(flood, h);
		} else if (h->state == HOSTILE_CONNECTING && now >= h->next_ms) {
			hostile_refused(flood, h);
		} else if (h->state == HOSTILE_OPEN && h->kind != HOSTILE_IDLE && now >= h->next_ms) {
			const char *byte =
			    h->kind == HOSTILE_TRICKLE ? &flood->head[h->sent % flood->head_len] : "x";
			ssize_t n = send(h->fd, byte, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
			if (n == 1) {
				h->sent++;
				atomic_fetch_add(&flood->counters.bytes, 1);
			} else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
				hostile_lost(flood, h);
				continue;
			}
			h->next_ms = now + flood->options.interval_ms;
		}
	}
}

static void *flood_main(void *context)
{
	struct flood *flood = context;
	struct epoll_event events[FLOOD_EVENTS];
	/* On Linux the nice value is the calling thread's own (setpriority(2), BUGS): the clients
	 * and the rest of the benchmark keep theirs. */
	if (flood->options.nice && setpriority(PRIO_PROCESS, 0, flood->options.nice) != 0)
		harness_fail("setpriority: %s (the flood runs at the benchmark's priority)", strerror(errno));
	uint64_t next_tick = now_ms();
	while (!atomic_load(&flood->stop) && !harness_stopped(flood->harness)) {
		uint64_t now = now_ms();
		int timeout = next_tick > now ? (int)(next_tick - now) : 0;
		int n = epoll_wait(flood->epoll_fd, events, FLOOD_EVENTS, timeout);
		for (int i = 0; i < n; i++)
			hostile_event(flood, events[i].data.ptr, events[i].events);
		now = now_ms();
		if (now >= next_tick) {
			flood_tick(flood, now);
			next_tick = now + FLOOD_TICK_MS;
		}
	}
	for (size_t i = 0; i < flood->count; i++)
		if (flood->hostiles[i].state != HOSTILE_CLOSED)
			hostile_close(flood, &flood->hostiles[i]);
	struct timespec cpu;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) == 0)
		flood->cpu_seconds = (double)cpu.tv_sec + (double)cpu.tv_nsec / 1e9;
	return NULL;
}

/* A GET of options->path padded with one long header: no deadline lets it finish a byte at a
 * time. */
static int build_head(struct flood *flood)
{
	int n = snprintf(
	    flood->head, sizeof(flood->head),
	    "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: flood\r\nX-Padding: ", flood->options.path);
	if (n < 0 || (size_t)n >= sizeof(flood->head) / 2)
		return -1;
	flood->head_len = (size_t)n;
	while (flood->head_len < sizeof(flood->head) - 4)
		flood->head[flood->head_len++] = 'a';
	memcpy(flood->head + flood->head_len, "\r\n\r\n", 4);
	flood->head_len += 4;
	return 0;
}

int flood_start(struct harness *harness, const struct flood_options *options, struct flood **out)
{
	*out = NULL;
	struct flood *flood = calloc(1, sizeof(*flood));
	if (!flood) {
		harness_fail("out of memory");
		return -1;
	}
	flood->harness = harness;
	flood->options = *options;
	flood->epoll_fd = -1;
	flood->random = 0x9e3779b97f4a7c15ULL;
	flood->count = options->trickle + options->idle + options->body;
	flood->hostiles = calloc(flood->count ? flood->count : 1, sizeof(*flood->hostiles));
	flood->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (!flood->hostiles || flood->epoll_fd < 0 || build_head(flood) != 0) {
		harness_fail("cannot set up the flood: %s", strerror(errno));
		flood_free(flood);
		return -1;
	}
	for (size_t i = 0; i < flood->count; i++) {
		struct hostile *h = &flood->hostiles[i];
		h->fd = -1;
		h->kind = i < options->trickle                   ? HOSTILE_TRICKLE
		          : i < options->trickle + options->idle ? HOSTILE_IDLE
		                                                 : HOSTILE_BODY;
		h->source.s_addr =
		    htonl(ntohl(options->source_first.s_addr) + (uint32_t)(i % options->sources));
		h->state = HOSTILE_CLOSED;
	}
	if (pthread_create(&flood->thread, NULL, flood_main, flood) != 0) {
		harness_fail("cannot start the flood thread");
		flood_free(flood);
		return -1;
	}
	flood->running = 1;
	*out = flood;
	return 0;
}

size_t flood_size(const struct flood *flood)
{
	return flood->count;
}

const struct flood_counters *flood_counters(const struct flood *flood)
{
	return &flood->counters;
}

void flood_stop(struct flood *flood)
{
	if (!flood || !flood->running)
		return;
	atomic_store(&flood->stop, 1);
	pthread_join(flood->thread, NULL);
	flood->running = 0;
}

double flood_cpu_seconds(const struct flood *flood)
{
	return flood->running ? 0 : flood->cpu_seconds;
}

void flood_free(struct flood *flood)
{
	if (!flood)
		return;
	flood_stop(flood);
	if (flood->epoll_fd >= 0)
		close(flood->epoll_fd);
	free(flood->hostiles);
	free(flood);
}
