/*
 * faultproxy.c: the fault-injecting TCP proxy (faultproxy.h).
 *
 * One thread polls the listening socket, a wake-up pipe and both sockets of every connection.
 * Each connection has two directions (client to target, target to client), each a bounded
 * linear buffer and a short queue of chunks stamped with the time they become due: in pass mode
 * a chunk is due when it arrives, with shaping or in delay mode later (the delays, a jitter
 * draw, the bucket's debt), and a direction writes only its due prefix, so bytes keep their
 * order whatever the hold becomes. A direction whose source ended is shut down for writing once
 * drained (half-close is forwarded); a connection ends when both directions are, or at the first
 * error on either side (an error is passed on as a reset).
 *
 * The bandwidth cap is a token bucket per direction of the proxy, spent when bytes are read: a
 * socket is read only while its bucket has credit, a read takes at most a burst, and the credit
 * may go below zero by that read (the bytes are then held until the debt is paid, their
 * serialisation time). Connections are serviced from a rotating first one, so that parallel
 * connections take turns at the credit.
 *
 * The mode, the shaping, the target and the counters are shared with the test's threads under
 * one mutex. A mode or shaping change bumps a generation and wakes the thread, which applies it
 * to the open connections before it accepts anything else and then signals the waiting caller.
 */
#define _GNU_SOURCE /* accept4, pipe2: close-on-exec at once, as the test thread may be starting a daemon */
#include "tests/harness/faultproxy.h"

#include "base/error.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define CHUNKS_MAX       256
#define ACCEPTS_PER_POLL 64
#define GARBAGE_BLOCK    16384
#define LINGER_MS        2000 /* how long an answered garbage connection may stay to be read */
#define APPLY_TIMEOUT_S  5
#define BURST_MS         10   /* a bucket holds at most this long of its rate */
#define BURST_MIN_BYTES  4096 /* and at least this */
#define DEFAULT_SEED     0x6a09e667f3bcc908ull
#define TLS_HANDSHAKE    0x16 /* the content type of a TLS handshake record */

enum connection_state {
	STATE_CONNECTING, /* the target connection is being made; the client is read meanwhile */
	STATE_FORWARDING,
	STATE_HELD,     /* blackhole: the client is read and dropped, nothing is written */
	STATE_GARBAGE,  /* garbage is being written to the client */
	STATE_DRAINING, /* garbage written and the client shut down for writing: waiting for its end */
};

struct chunk {
	size_t end;      /* offset in the direction's buffer just past this chunk */
	uint64_t due_ms; /* monotonic time from which it may be written */
};

/* Bytes held are data[start, len); chunk ends are offsets in data, chunks a ring from
 * chunk_head. */
struct direction {
	uint8_t *data; /* buffer_bytes, owned */
	size_t start;
	size_t len;
	struct chunk chunks[CHUNKS_MAX];
	size_t chunk_head;
	size_t chunk_count;
	int eof;  /* its source ended */
	int shut; /* its sink was shut down for writing */
};

/* A token bucket: credit in bytes, below zero while a read is being paid for. */
struct bucket {
	double credit;
	uint64_t updated_ns;
};

/* What a chunk read now is held for, besides the bucket's debt. */
struct hold {
	uint64_t delay_ms;     /* the shaping's delay, plus the delay mode's */
	uint32_t jitter_ms;    /* a uniform draw in [0, jitter_ms] per chunk */
	uint64_t handshake_ms; /* more for a connection's first bytes from its client */
};

struct connection {
	int client;
	int target; /* -1 when there is none */
	enum connection_state state;
	struct direction to_target;
	struct direction to_client;
	uint64_t garbage_left;
	uint64_t linger_until_ms;
	int client_eof;   /* the client ended its side (garbage: the answer goes on) */
	int client_spoke; /* the client's first byte was read */
	int dead;         /* to be closed at the end of this poll */
	int reset;        /* close with SO_LINGER 0 */
};

struct faultproxy {
	int listener;
	int wake[2];
	unsigned port;
	size_t max_connections;
	size_t buffer_bytes;
	struct connection *connections; /* max_connections slots, connection_count used */
	size_t connection_count;
	struct pollfd *pollfds; /* 2 + 2 * max_connections */
	uint64_t random_state;
	uint64_t jitter_state;    /* the jitter's draws: seeded, so that a run can be replayed */
	struct bucket buckets[2]; /* client to target, target to client */
	size_t rotation;          /* the connection serviced first in the next poll */
	uint8_t garbage[GARBAGE_BLOCK];
	struct faultproxy_counters local; /* the thread's own counters, published each poll */

	pthread_t thread;
	int thread_started;
	pthread_mutex_t lock;
	pthread_cond_t applied_cond;
	/* Under lock: */
	enum faultproxy_mode mode;
	uint64_t parameter;
	struct faultproxy_shaping shaping;
	struct sockaddr_in target;
	uint64_t generation;      /* bumped by every change of the mode or the shaping */
	uint64_t mode_generation; /* bumped by a change of the mode */
	uint64_t applied;
	uint64_t counters_asked;    /* faultproxy_counters calls waiting for a fresh copy */
	uint64_t counters_answered; /* the last of them a copy was published for */
	int stopping;
	struct faultproxy_counters counters;
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ms(void)
{
	return now_ns() / 1000000u;
}

static int set_nonblocking(int fd)
{
	int flags = fcntl(fd, F_GETFL);
	return flags < 0 ? -1 : fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

static void close_socket(int fd, int reset)
{
	if (fd < 0)
		return;
	if (reset) {
		struct linger linger = {1, 0};
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, sizeof linger);
	}
	close(fd);
}

static int mode_check(enum faultproxy_mode mode, uint64_t parameter)
{
	switch (mode) {
	case FAULTPROXY_PASS:
	case FAULTPROXY_CUT:
	case FAULTPROXY_RESET:
	case FAULTPROXY_BLACKHOLE:
		return 0;
	case FAULTPROXY_DELAY:
		return parameter >= 1 && parameter <= FAULTPROXY_MAX_DELAY_MS ? 0 : DIRAUTH_ERR_CONFIG;
	case FAULTPROXY_GARBAGE:
		return parameter >= 1 && parameter <= FAULTPROXY_MAX_GARBAGE_BYTES ? 0 : DIRAUTH_ERR_CONFIG;
	}
	return DIRAUTH_ERR_CONFIG;
}

static int shaping_check(const struct faultproxy_shaping *shaping)
{
	uint64_t bandwidth = shaping->bandwidth_bits_per_second;
	if (shaping->delay_ms > FAULTPROXY_MAX_DELAY_MS || shaping->jitter_ms > FAULTPROXY_MAX_DELAY_MS ||
	    (bandwidth != 0 &&
	     (bandwidth < FAULTPROXY_MIN_BANDWIDTH || bandwidth > FAULTPROXY_MAX_BANDWIDTH)))
		return DIRAUTH_ERR_CONFIG;
	return 0;
}

static int parse_target(const char *host, unsigned port, struct sockaddr_in *out)
{
	memset(out, 0, sizeof *out);
	out->sin_family = AF_INET;
	if (!host || port == 0 || port > 65535 || inet_pton(AF_INET, host, &out->sin_addr) != 1)
		return DIRAUTH_ERR_CONFIG;
	out->sin_port = htons((uint16_t)port);
	return 0;
}

const char *faultproxy_mode_name(enum faultproxy_mode mode)
{
	switch (mode) {
	case FAULTPROXY_PASS:
		return "pass";
	case FAULTPROXY_DELAY:
		return "delay";
	case FAULTPROXY_CUT:
		return "cut";
	case FAULTPROXY_RESET:
		return "reset";
	case FAULTPROXY_BLACKHOLE:
		return "blackhole";
	case FAULTPROXY_GARBAGE:
		return "garbage";
	}
	return "unknown";
}

/* xorshift64*: garbage needs to look random, and jitter to be drawn evenly and replayable, not
 * either to be unpredictable. */
static uint64_t random_next(uint64_t *state)
{
	uint64_t x = *state;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 2685821657736338717ull;
}

static void fill_garbage(struct faultproxy *p)
{
	for (size_t i = 0; i + 8 <= sizeof p->garbage; i += 8) {
		uint64_t word = random_next(&p->random_state);
		memcpy(p->garbage + i, &word, 8);
	}
}

/* --- the bandwidth cap ---------------------------------------------------------------------- */

static double bucket_rate(const struct faultproxy_shaping *shaping)
{
	return (double)shaping->bandwidth_bits_per_second / 8.0; /* bytes per second */
}

static double bucket_burst(const struct faultproxy_shaping *shaping)
{
	double burst = bucket_rate(shaping) * BURST_MS / 1000.0;
	return burst > BURST_MIN_BYTES ? burst : BURST_MIN_BYTES;
}

/* Adds the credit earned since the last refill, up to a burst. */
static void bucket_refill(struct bucket *b, const struct faultproxy_shaping *shaping, uint64_t now)
{
	if (shaping->bandwidth_bits_per_second == 0 || now <= b->updated_ns) {
		b->updated_ns = now > b->updated_ns ? now : b->updated_ns;
		return;
	}
	b->credit += bucket_rate(shaping) * (double)(now - b->updated_ns) / 1e9;
	double burst = bucket_burst(shaping);
	if (b->credit > burst)
		b->credit = burst;
	b->updated_ns = now;
}

/* How many bytes a read may take now: 0 while the bucket has no credit, else at most a burst
 * (SIZE_MAX without a cap). */
static size_t bucket_allowance(const struct bucket *b, const struct faultproxy_shaping *shaping)
{
	if (shaping->bandwidth_bits_per_second == 0)
		return SIZE_MAX;
	return b->credit > 0 ? (size_t)bucket_burst(shaping) : 0;
}

/* Spends n bytes; returns how many milliseconds the bytes wait for the debt to be paid. */
static uint64_t bucket_spend(struct bucket *b, const struct faultproxy_shaping *shaping, size_t n)
{
	if (shaping->bandwidth_bits_per_second == 0)
		return 0;
	b->credit -= (double)n;
	return b->credit < 0 ? (uint64_t)(-b->credit * 1000.0 / bucket_rate(shaping)) + 1 : 0;
}

/* When (monotonic ms) an empty bucket has credit again; UINT64_MAX when it has some (a read then
 * waits for its socket, not for time). */
static uint64_t bucket_next_ms(const struct bucket *b, const struct faultproxy_shaping *shaping, uint64_t now)
{
	if (shaping->bandwidth_bits_per_second == 0 || b->credit > 0)
		return UINT64_MAX;
	return now + (uint64_t)(-b->credit * 1000.0 / bucket_rate(shaping)) + 1;
}

/* --- directions ----------------------------------------------------------------------------- */

static struct chunk *direction_chunk(struct direction *d, size_t i)
{
	return &d->chunks[(d->chunk_head + i) % CHUNKS_MAX];
}

static const struct chunk *direction_chunk_const(const struct direction *d, size_t i)
{
	return &d->chunks[(d->chunk_head + i) % CHUNKS_MAX];
}

/* The offset in d->data up to which bytes are due at now (d->start when none are). */
static size_t direction_ready_end(const struct direction *d, uint64_t now)
{
	size_t end = d->start;
	for (size_t i = 0; i < d->chunk_count && direction_chunk_const(d, i)->due_ms <= now; i++)
		end = direction_chunk_const(d, i)->end;
	return end;
}

static int direction_has_ready(const struct direction *d, uint64_t now)
{
	return direction_ready_end(d, now) > d->start;
}

static int direction_has_room(const struct faultproxy *p, const struct direction *d)
{
	return !d->eof && d->len - d->start < p->buffer_bytes && d->chunk_count < CHUNKS_MAX;
}

/* The earliest time a chunk of d becomes due after now, or UINT64_MAX. */
static uint64_t direction_next_due(const struct direction *d, uint64_t now)
{
	for (size_t i = 0; i < d->chunk_count; i++)
		if (direction_chunk_const(d, i)->due_ms > now)
			return direction_chunk_const(d, i)->due_ms;
	return UINT64_MAX;
}

/* Records n bytes just read into d as due at due_ms. A chunk not later than the last one joins
 * it (it cannot be written before the last anyway, which keeps the order), which keeps the queue
 * short in pass mode. */
static void direction_append(struct direction *d, size_t n, uint64_t due_ms, uint64_t now)
{
	d->len += n;
	if (d->chunk_count > 0) {
		struct chunk *last = direction_chunk(d, d->chunk_count - 1);
		if (due_ms <= last->due_ms || (last->due_ms <= now && due_ms <= now)) {
			last->end = d->len;
			if (due_ms > last->due_ms)
				last->due_ms = due_ms;
			return;
		}
	}
	struct chunk *chunk = direction_chunk(d, d->chunk_count);
	chunk->end = d->len;
	chunk->due_ms = due_ms;
	d->chunk_count++;
}

/* n bytes from d->start were written: they and the chunks they end leave. */
static void direction_consume(struct direction *d, size_t n)
{
	d->start += n;
	while (d->chunk_count > 0 && d->chunks[d->chunk_head].end <= d->start) {
		d->chunk_head = (d->chunk_head + 1) % CHUNKS_MAX;
		d->chunk_count--;
	}
	if (d->start == d->len)
		d->start = d->len = 0; /* the chunks all ended at or before start: none is left */
}

/* Moves the held bytes to the front of the buffer, so that a read has all the room there is. */
static void direction_compact(struct direction *d)
{
	if (d->start == 0)
		return;
	memmove(d->data, d->data + d->start, d->len - d->start);
	for (size_t i = 0; i < d->chunk_count; i++)
		direction_chunk(d, i)->end -= d->start;
	d->len -= d->start;
	d->start = 0;
}

/* Reads what fd has into d, as much as the bucket allows, and stamps it with its hold (and
 * extra_ms more). Returns 1
 * when something was read, 0 when nothing is there yet (or the bucket has no credit), -1 on an
 * error (the connection must end). Sets d->eof at the end of the stream. */
static int direction_read(struct faultproxy *p, struct direction *d, int fd, struct bucket *bucket,
                          const struct faultproxy_shaping *shaping, const struct hold *hold,
                          uint64_t extra_ms, uint64_t now)
{
	if (!direction_has_room(p, d))
		return 0;
	size_t allowance = bucket_allowance(bucket, shaping);
	if (allowance == 0)
		return 0;
	if (d->len == p->buffer_bytes || d->start >= p->buffer_bytes / 2)
		direction_compact(d);
	size_t room = p->buffer_bytes - d->len;
	ssize_t n = recv(fd, d->data + d->len, room < allowance ? room : allowance, 0);
	if (n > 0) {
		uint64_t due = now + hold->delay_ms + extra_ms + bucket_spend(bucket, shaping, (size_t)n);
		if (hold->jitter_ms > 0) {
			uint64_t draw = random_next(&p->jitter_state) % ((uint64_t)hold->jitter_ms + 1);
			due += draw;
			p->local.jitter_draws++;
			p->local.jitter_drawn_ms += draw;
		}
		direction_append(d, (size_t)n, due, now);
		return 1;
	}
	if (n == 0) {
		d->eof = 1;
		return 1;
	}
	return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
}

/* Writes d's due prefix to fd and, once d's source ended and all is written, shuts fd down for
 * writing. Returns 0, or -1 on an error. */
static int direction_write(struct direction *d, int fd, uint64_t now, uint64_t *counter)
{
	size_t end = direction_ready_end(d, now);
	if (end > d->start) {
		ssize_t n = send(fd, d->data + d->start, end - d->start, MSG_NOSIGNAL);
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
		direction_consume(d, (size_t)n);
		*counter += (uint64_t)n;
	}
	if (d->eof && d->len == d->start && !d->shut) {
		shutdown(fd, SHUT_WR);
		d->shut = 1;
	}
	return 0;
}

/* Reads and drops what the client sends. Returns 1 at its end, -1 on an error, else 0. */
static int drop_client_input(struct faultproxy *p, struct connection *c)
{
	uint8_t scratch[16384];
	for (int rounds = 0; rounds < 16; rounds++) {
		ssize_t n = recv(c->client, scratch, sizeof scratch, 0);
		if (n > 0) {
			p->local.dropped_bytes += (uint64_t)n;
			continue;
		}
		if (n == 0)
			return 1;
		return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
	}
	return 0;
}

static void connection_free_buffers(struct connection *c)
{
	free(c->to_target.data);
	free(c->to_client.data);
	c->to_target.data = NULL;
	c->to_client.data = NULL;
}

static void connection_close(struct faultproxy *p, struct connection *c)
{
	close_socket(c->client, c->reset);
	close_socket(c->target, c->reset);
	connection_free_buffers(c);
	(void)p;
}

/* Takes a new client in the current mode. */
static void accept_client(struct faultproxy *p, int client, enum faultproxy_mode mode, uint64_t parameter,
                          const struct sockaddr_in *target)
{
	p->local.accepted++;
	if (set_nonblocking(client) != 0 || p->connection_count >= p->max_connections ||
	    mode == FAULTPROXY_CUT) {
		p->local.refused++;
		close_socket(client, 0);
		return;
	}
	if (mode == FAULTPROXY_RESET) {
		p->local.reset++;
		close_socket(client, 1);
		return;
	}
	struct connection *c = &p->connections[p->connection_count];
	memset(c, 0, sizeof *c);
	c->client = client;
	c->target = -1;
	if (mode == FAULTPROXY_BLACKHOLE) {
		c->state = STATE_HELD;
		p->local.held++;
		p->connection_count++;
		return;
	}
	if (mode == FAULTPROXY_GARBAGE) {
		c->state = STATE_GARBAGE;
		c->garbage_left = parameter;
		p->local.garbage_answers++;
		p->connection_count++;
		return;
	}
	c->to_target.data = malloc(p->buffer_bytes);
	c->to_client.data = malloc(p->buffer_bytes);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (!c->to_target.data || !c->to_client.data || fd < 0 || set_nonblocking(fd) != 0) {
		if (fd >= 0)
			close(fd);
		connection_free_buffers(c);
		p->local.reset++;
		close_socket(client, 1);
		return;
	}
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	c->target = fd;
	if (connect(fd, (const struct sockaddr *)target, sizeof *target) == 0) {
		c->state = STATE_FORWARDING;
		p->local.forwarded++;
	} else if (errno == EINPROGRESS) {
		c->state = STATE_CONNECTING;
	} else {
		close(fd);
		connection_free_buffers(c);
		p->local.reset++;
		close_socket(client, 1);
		return;
	}
	p->connection_count++;
}

/* Applies a new mode to the open connections (faultproxy.h's table). */
static void apply_mode(struct faultproxy *p, enum faultproxy_mode mode)
{
	for (size_t i = 0; i < p->connection_count; i++) {
		struct connection *c = &p->connections[i];
		switch (mode) {
		case FAULTPROXY_CUT:
		case FAULTPROXY_GARBAGE:
			c->dead = 1;
			break;
		case FAULTPROXY_RESET:
			c->dead = 1;
			c->reset = 1;
			p->local.reset++;
			break;
		case FAULTPROXY_BLACKHOLE:
			if (c->state == STATE_CONNECTING || c->state == STATE_FORWARDING) {
				c->state = STATE_HELD; /* the target stays open and is never read again */
				p->local.held++;
			}
			break;
		case FAULTPROXY_PASS:
		case FAULTPROXY_DELAY:
			break;
		}
	}
}

/* One connection after a poll: reads, writes and state changes. */
static void service(struct faultproxy *p, struct connection *c, short client_events, short target_events,
                    const struct faultproxy_shaping *shaping, const struct hold *hold, uint64_t now)
{
	if (c->state == STATE_CONNECTING && (target_events & (POLLOUT | POLLERR | POLLHUP))) {
		int error = 0;
		socklen_t len = sizeof error;
		if (getsockopt(c->target, SOL_SOCKET, SO_ERROR, &error, &len) != 0 || error != 0) {
			p->local.reset++;
			c->dead = c->reset = 1;
			return;
		}
		c->state = STATE_FORWARDING;
		p->local.forwarded++;
	}
	switch (c->state) {
	case STATE_CONNECTING:
	case STATE_FORWARDING:
		if ((client_events & (POLLIN | POLLHUP | POLLERR)) &&
		    direction_read(p, &c->to_target, c->client, &p->buckets[0], shaping, hold,
		                   c->client_spoke ? 0 : hold->handshake_ms, now) < 0) {
			c->dead = c->reset = 1;
			return;
		}
		if (!c->client_spoke && c->to_target.len > c->to_target.start) {
			c->client_spoke = 1;
			p->local.tls_clients += c->to_target.data[c->to_target.start] == TLS_HANDSHAKE;
		}
		if (c->state == STATE_CONNECTING)
			return;
		if ((target_events & (POLLIN | POLLHUP | POLLERR)) &&
		    direction_read(p, &c->to_client, c->target, &p->buckets[1], shaping, hold, 0, now) < 0) {
			c->dead = c->reset = 1;
			return;
		}
		if (direction_write(&c->to_target, c->target, now, &p->local.bytes_to_target) != 0 ||
		    direction_write(&c->to_client, c->client, now, &p->local.bytes_to_client) != 0) {
			c->dead = c->reset = 1;
			return;
		}
		if (c->to_target.shut && c->to_client.shut)
			c->dead = 1;
		return;
	case STATE_HELD:
		if ((client_events & (POLLIN | POLLHUP | POLLERR)) && drop_client_input(p, c) != 0)
			c->dead = 1;
		return;
	case STATE_GARBAGE:
		if (client_events & (POLLIN | POLLHUP | POLLERR)) {
			int end = drop_client_input(p, c);
			if (end < 0) {
				c->dead = 1;
				return;
			}
			if (end > 0)
				c->client_eof = 1;
		}
		if (client_events & POLLOUT) {
			fill_garbage(p);
			size_t n =
			    c->garbage_left < sizeof p->garbage ? (size_t)c->garbage_left : sizeof p->garbage;
			ssize_t sent = send(c->client, p->garbage, n, MSG_NOSIGNAL);
			if (sent < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
				c->dead = 1;
				return;
			}
			if (sent > 0) {
				c->garbage_left -= (uint64_t)sent;
				p->local.garbage_bytes += (uint64_t)sent;
			}
		}
		if (c->garbage_left == 0) {
			shutdown(c->client, SHUT_WR);
			c->state = STATE_DRAINING;
			c->linger_until_ms = now + LINGER_MS;
		}
		return;
	case STATE_DRAINING:
		if (c->client_eof || now >= c->linger_until_ms ||
		    ((client_events & (POLLIN | POLLHUP | POLLERR)) && drop_client_input(p, c) != 0))
			c->dead = 1;
		return;
	}
}

static short client_interest(const struct faultproxy *p, const struct connection *c,
                             const struct faultproxy_shaping *shaping, uint64_t now)
{
	switch (c->state) {
	case STATE_CONNECTING:
	case STATE_FORWARDING: {
		short events = 0;
		if (direction_has_room(p, &c->to_target) && bucket_allowance(&p->buckets[0], shaping) > 0)
			events |= POLLIN;
		if (direction_has_ready(&c->to_client, now))
			events |= POLLOUT;
		return events;
	}
	case STATE_HELD:
	case STATE_DRAINING:
		return POLLIN;
	case STATE_GARBAGE:
		return (short)(c->client_eof ? POLLOUT : POLLIN | POLLOUT);
	}
	return 0;
}

static short target_interest(const struct faultproxy *p, const struct connection *c,
                             const struct faultproxy_shaping *shaping, uint64_t now)
{
	if (c->state == STATE_CONNECTING)
		return POLLOUT;
	if (c->state != STATE_FORWARDING)
		return 0;
	short events = 0;
	if (direction_has_room(p, &c->to_client) && bucket_allowance(&p->buckets[1], shaping) > 0)
		events |= POLLIN;
	if (direction_has_ready(&c->to_target, now))
		events |= POLLOUT;
	return events;
}

/* How long the next poll may wait: until the next chunk is due, a drain ends, or a bucket that a
 * connection waits on has credit again. */
static int poll_timeout(const struct faultproxy *p, const struct faultproxy_shaping *shaping, uint64_t now)
{
	uint64_t next = now + 1000;
	for (size_t i = 0; i < p->connection_count; i++) {
		const struct connection *c = &p->connections[i];
		if (c->state == STATE_FORWARDING || c->state == STATE_CONNECTING) {
			uint64_t a = direction_next_due(&c->to_target, now);
			uint64_t b = direction_next_due(&c->to_client, now);
			if (a < next)
				next = a;
			if (b < next)
				next = b;
			const struct direction *directions[2] = {&c->to_target, &c->to_client};
			for (size_t k = 0; k < 2; k++) {
				uint64_t credit = bucket_next_ms(&p->buckets[k], shaping, now);
				if (direction_has_room(p, directions[k]) && credit < next)
					next = credit;
			}
		}
		if (c->state == STATE_DRAINING && c->linger_until_ms < next)
			next = c->linger_until_ms;
	}
	return next <= now ? 0 : (int)(next - now);
}

/* Closes the connections marked dead and packs the others. */
static void close_dead(struct faultproxy *p)
{
	size_t kept = 0;
	for (size_t i = 0; i < p->connection_count; i++) {
		if (p->connections[i].dead)
			connection_close(p, &p->connections[i]);
		else if (kept++ != i)
			p->connections[kept - 1] = p->connections[i];
	}
	p->connection_count = kept;
}

static void *proxy_thread(void *context)
{
	struct faultproxy *p = context;
	uint64_t applied = 0, mode_applied = 0;
	for (;;) {
		pthread_mutex_lock(&p->lock);
		int stopping = p->stopping;
		enum faultproxy_mode mode = p->mode;
		uint64_t parameter = p->parameter;
		struct faultproxy_shaping shaping = p->shaping;
		struct sockaddr_in target = p->target;
		uint64_t generation = p->generation, mode_generation = p->mode_generation;
		pthread_mutex_unlock(&p->lock);
		if (stopping)
			break;
		if (mode_generation != mode_applied) {
			apply_mode(p, mode);
			mode_applied = mode_generation;
		}
		struct hold hold = {.delay_ms = shaping.delay_ms + (mode == FAULTPROXY_DELAY ? parameter : 0),
		                    .jitter_ms = shaping.jitter_ms,
		                    .handshake_ms = 2 * (uint64_t)shaping.delay_ms};

		/* Connections a mode change ended are closed before anything is accepted. */
		uint64_t now_nanoseconds = now_ns(), now = now_nanoseconds / 1000000u;
		for (size_t k = 0; k < 2; k++)
			bucket_refill(&p->buckets[k], &shaping, now_nanoseconds);
		close_dead(p);
		if (generation != applied) {
			applied = generation;
			p->local.open = p->connection_count;
			pthread_mutex_lock(&p->lock);
			p->applied = applied;
			p->counters = p->local;
			pthread_cond_broadcast(&p->applied_cond);
			pthread_mutex_unlock(&p->lock);
		}

		size_t count = 0;
		p->pollfds[count++] = (struct pollfd){.fd = p->wake[0], .events = POLLIN};
		p->pollfds[count++] = (struct pollfd){.fd = p->listener, .events = POLLIN};
		size_t client_slot[FAULTPROXY_MAX_CONNECTIONS], target_slot[FAULTPROXY_MAX_CONNECTIONS];
		for (size_t i = 0; i < p->connection_count; i++) {
			struct connection *c = &p->connections[i];
			short events = client_interest(p, c, &shaping, now);
			client_slot[i] = target_slot[i] = SIZE_MAX;
			if (events) {
				client_slot[i] = count;
				p->pollfds[count++] = (struct pollfd){.fd = c->client, .events = events};
			}
			events = c->target >= 0 ? target_interest(p, c, &shaping, now) : 0;
			if (events) {
				target_slot[i] = count;
				p->pollfds[count++] = (struct pollfd){.fd = c->target, .events = events};
			}
		}
		int ready = poll(p->pollfds, (nfds_t)count, poll_timeout(p, &shaping, now));
		if (ready < 0 && errno != EINTR)
			break;
		now_nanoseconds = now_ns();
		now = now_nanoseconds / 1000000u;
		for (size_t k = 0; k < 2; k++)
			bucket_refill(&p->buckets[k], &shaping, now_nanoseconds);
		if (ready > 0 && (p->pollfds[0].revents & POLLIN)) {
			uint8_t scratch[64];
			while (read(p->wake[0], scratch, sizeof scratch) > 0)
				;
		}
		/* From a rotating first connection: with a bandwidth cap, the first to read takes the
		 * bucket's credit, and parallel connections take turns. */
		size_t open_before = p->connection_count;
		for (size_t n = 0; n < open_before; n++) {
			size_t i = (p->rotation + n) % open_before;
			short client_events =
			    client_slot[i] == SIZE_MAX ? 0 : p->pollfds[client_slot[i]].revents;
			short target_events =
			    target_slot[i] == SIZE_MAX ? 0 : p->pollfds[target_slot[i]].revents;
			service(p, &p->connections[i], client_events, target_events, &shaping, &hold, now);
		}
		p->rotation = open_before ? (p->rotation + 1) % open_before : 0;
		/* A mode changed during the poll is applied before anything more is accepted; the
		 * target is read afresh (faultproxy_set_target does not wake the thread). */
		pthread_mutex_lock(&p->lock);
		int changed = p->generation != applied || p->stopping;
		target = p->target;
		pthread_mutex_unlock(&p->lock);
		if (!changed && ready > 0 && (p->pollfds[1].revents & POLLIN)) {
			for (int n = 0; n < ACCEPTS_PER_POLL; n++) {
				int client = accept4(p->listener, NULL, NULL, SOCK_CLOEXEC);
				if (client < 0)
					break;
				accept_client(p, client, mode, parameter, &target);
			}
		}
		close_dead(p);
		p->local.open = p->connection_count;
		pthread_mutex_lock(&p->lock);
		p->counters = p->local;
		if (p->counters_answered != p->counters_asked) {
			p->counters_answered = p->counters_asked;
			pthread_cond_broadcast(&p->applied_cond);
		}
		pthread_mutex_unlock(&p->lock);
	}
	return NULL;
}

int faultproxy_start(const struct faultproxy_options *options, struct faultproxy **out)
{
	*out = NULL;
	struct sockaddr_in target;
	if (parse_target(options->target_host, options->target_port, &target) != 0 ||
	    options->listen_port > 65535 || options->max_connections > FAULTPROXY_MAX_CONNECTIONS ||
	    options->buffer_bytes > FAULTPROXY_MAX_BUFFER_BYTES ||
	    mode_check(options->mode, options->mode_parameter) != 0 || shaping_check(&options->shaping) != 0)
		return DIRAUTH_ERR_CONFIG;
	struct faultproxy *p = calloc(1, sizeof *p);
	if (!p)
		return DIRAUTH_ERR_NOMEM;
	p->listener = p->wake[0] = p->wake[1] = -1;
	p->max_connections =
	    options->max_connections ? options->max_connections : FAULTPROXY_DEFAULT_MAX_CONNECTIONS;
	p->buffer_bytes = options->buffer_bytes ? options->buffer_bytes : FAULTPROXY_DEFAULT_BUFFER_BYTES;
	p->target = target;
	p->mode = options->mode;
	p->parameter = options->mode_parameter;
	p->shaping = options->shaping;
	p->jitter_state = options->seed ? options->seed : DEFAULT_SEED;
	for (size_t k = 0; k < 2; k++)
		p->buckets[k] = (struct bucket){bucket_burst(&p->shaping), now_ns()};
	p->random_state = now_ms() ^ (uint64_t)(uintptr_t)p ^ 0x9e3779b97f4a7c15ull;
	p->connections = calloc(p->max_connections, sizeof *p->connections);
	p->pollfds = calloc(2 + 2 * p->max_connections, sizeof *p->pollfds);
	int rc = DIRAUTH_ERR_NOMEM;
	if (!p->connections || !p->pollfds)
		goto fail;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->applied_cond, NULL);

	rc = DIRAUTH_ERR_IO;
	if (pipe2(p->wake, O_CLOEXEC) != 0) {
		p->wake[0] = p->wake[1] = -1;
		goto fail_sync;
	}
	if (set_nonblocking(p->wake[0]) != 0 || set_nonblocking(p->wake[1]) != 0)
		goto fail_sync;
	p->listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (p->listener < 0)
		goto fail_sync;
	int one = 1;
	setsockopt(p->listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	struct sockaddr_in address;
	memset(&address, 0, sizeof address);
	address.sin_family = AF_INET;
	address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	address.sin_port = htons((uint16_t)options->listen_port);
	socklen_t len = sizeof address;
	if (bind(p->listener, (struct sockaddr *)&address, sizeof address) != 0 ||
	    listen(p->listener, 128) != 0 || set_nonblocking(p->listener) != 0 ||
	    getsockname(p->listener, (struct sockaddr *)&address, &len) != 0)
		goto fail_sync;
	p->port = ntohs(address.sin_port);
	if (pthread_create(&p->thread, NULL, proxy_thread, p) != 0)
		goto fail_sync;
	p->thread_started = 1;
	*out = p;
	return 0;

fail_sync:
	pthread_cond_destroy(&p->applied_cond);
	pthread_mutex_destroy(&p->lock);
fail:
	if (p->listener >= 0)
		close(p->listener);
	if (p->wake[0] >= 0)
		close(p->wake[0]);
	if (p->wake[1] >= 0)
		close(p->wake[1]);
	free(p->pollfds);
	free(p->connections);
	free(p);
	return rc;
}

unsigned faultproxy_port(const struct faultproxy *proxy)
{
	return proxy->port;
}

static void wake(struct faultproxy *p)
{
	uint8_t byte = 1;
	ssize_t n = write(p->wake[1], &byte, 1);
	(void)n; /* a full pipe already wakes the thread */
}

/* Waits until the thread applied generation. */
static int wait_applied(struct faultproxy *proxy, uint64_t generation)
{
	wake(proxy);
	struct timespec deadline;
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += APPLY_TIMEOUT_S;
	int rc = 0;
	pthread_mutex_lock(&proxy->lock);
	while (proxy->applied < generation && rc == 0)
		rc = pthread_cond_timedwait(&proxy->applied_cond, &proxy->lock, &deadline);
	int applied = proxy->applied >= generation;
	pthread_mutex_unlock(&proxy->lock);
	return applied ? 0 : DIRAUTH_ERR_INTERNAL;
}

int faultproxy_set_mode(struct faultproxy *proxy, enum faultproxy_mode mode, uint64_t parameter)
{
	if (mode_check(mode, parameter) != 0)
		return DIRAUTH_ERR_CONFIG;
	pthread_mutex_lock(&proxy->lock);
	proxy->mode = mode;
	proxy->parameter = parameter;
	proxy->mode_generation++;
	uint64_t generation = ++proxy->generation;
	pthread_mutex_unlock(&proxy->lock);
	return wait_applied(proxy, generation);
}

int faultproxy_set_shaping(struct faultproxy *proxy, const struct faultproxy_shaping *shaping)
{
	if (shaping_check(shaping) != 0)
		return DIRAUTH_ERR_CONFIG;
	pthread_mutex_lock(&proxy->lock);
	proxy->shaping = *shaping;
	uint64_t generation = ++proxy->generation;
	pthread_mutex_unlock(&proxy->lock);
	return wait_applied(proxy, generation);
}

void faultproxy_shaping(struct faultproxy *proxy, struct faultproxy_shaping *out)
{
	pthread_mutex_lock(&proxy->lock);
	*out = proxy->shaping;
	pthread_mutex_unlock(&proxy->lock);
}

enum faultproxy_mode faultproxy_mode(struct faultproxy *proxy, uint64_t *parameter)
{
	pthread_mutex_lock(&proxy->lock);
	enum faultproxy_mode mode = proxy->mode;
	if (parameter)
		*parameter = proxy->parameter;
	pthread_mutex_unlock(&proxy->lock);
	return mode;
}

int faultproxy_set_target(struct faultproxy *proxy, const char *host, unsigned port)
{
	struct sockaddr_in target;
	if (parse_target(host, port, &target) != 0)
		return DIRAUTH_ERR_CONFIG;
	pthread_mutex_lock(&proxy->lock);
	proxy->target = target;
	pthread_mutex_unlock(&proxy->lock);
	return 0;
}

void faultproxy_counters(struct faultproxy *proxy, struct faultproxy_counters *out)
{
	/* The thread publishes its counters at the end of each poll: asking for a copy made after
	 * this call began makes everything a client saw before it counted. */
	pthread_mutex_lock(&proxy->lock);
	uint64_t asked = ++proxy->counters_asked;
	pthread_mutex_unlock(&proxy->lock);
	wake(proxy);
	struct timespec deadline;
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += APPLY_TIMEOUT_S;
	int rc = 0;
	pthread_mutex_lock(&proxy->lock);
	while (proxy->counters_answered < asked && !proxy->stopping && rc == 0)
		rc = pthread_cond_timedwait(&proxy->applied_cond, &proxy->lock, &deadline);
	*out = proxy->counters;
	pthread_mutex_unlock(&proxy->lock);
}

void faultproxy_stop(struct faultproxy *proxy)
{
	if (!proxy)
		return;
	pthread_mutex_lock(&proxy->lock);
	proxy->stopping = 1;
	pthread_mutex_unlock(&proxy->lock);
	wake(proxy);
	if (proxy->thread_started)
		pthread_join(proxy->thread, NULL);
	for (size_t i = 0; i < proxy->connection_count; i++)
		connection_close(proxy, &proxy->connections[i]);
	close(proxy->listener);
	close(proxy->wake[0]);
	close(proxy->wake[1]);
	pthread_cond_destroy(&proxy->applied_cond);
	pthread_mutex_destroy(&proxy->lock);
	free(proxy->pollfds);
	free(proxy->connections);
	free(proxy);
}
