/*
 * flood.h: the hostile side of bench_flood: many slow and idle TCP connections to one server on
 * loopback, from many source addresses, driven by one thread.
 *
 * Three kinds of connection, each bound to its source address before connect: one that trickles
 * a request head one byte per interval (a head far longer than any deadline lets it finish), one
 * that sends nothing, and one that sends a POST head at once and then trickles its body. Every
 * connection the server closes (or resets, or does not accept within FLOOD_CONNECT_MS) is opened
 * again at once, so the flood keeps its size for as long as it runs. The thread waits on epoll
 * for connects and closes and wakes every FLOOD_TICK_MS for the bytes that are due; the bytes of
 * the connections are spread over the interval so that they do not all come on one tick. It
 * reads and drops whatever the server answers. It holds one descriptor per connection: the
 * caller raises RLIMIT_NOFILE first (harness_raise_descriptor_limit).
 */
#ifndef DIRAUTH_BENCH_FLOOD_H
#define DIRAUTH_BENCH_FLOOD_H

#include "bench/harness.h"

#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define FLOOD_CONNECT_MS 10000 /* a connect not done by then is given up and tried again */
#define FLOOD_TICK_MS    5

struct flood_options {
	unsigned port;    /* the server's, on 127.0.0.1 */
	const char *path; /* the trickled GET's path, e.g. "/v1/mix/snapshots/latest" */
	size_t trickle;   /* connections trickling a request head */
	size_t idle;      /* connections sending nothing */
	size_t body;      /* connections sending a POST head, then trickling its body */
	size_t sources;   /* source addresses, from source_first on; connection i uses i % sources */
	struct in_addr source_first;
	size_t interval_ms; /* one byte per connection per interval */
	int nice;           /* the flood thread's nice value (0: the caller's) */
};

/* What the flood saw from its side; read while it runs (atomics) or after flood_stop. */
struct flood_counters {
	atomic_size_t open;            /* connected now */
	atomic_size_t peak_open;       /* the most connected at once */
	atomic_uint_fast64_t opened;   /* connects that succeeded */
	atomic_uint_fast64_t refused;  /* connects refused, failed, or not done within FLOOD_CONNECT_MS */
	atomic_uint_fast64_t closed;   /* connections the server closed or reset */
	atomic_uint_fast64_t answered; /* reads that got bytes back */
	atomic_uint_fast64_t bytes;    /* bytes sent */
};

struct flood;

/* Starts the thread of options->trickle + idle + body connections (options are copied; path
 * must outlive the flood). It stops early when harness is interrupted. Returns 0, or -1 with a
 * message (out of memory, epoll, the thread). */
int flood_start(struct harness *harness, const struct flood_options *options, struct flood **out);

/* The connections the flood holds, and its counters (live until flood_free). */
size_t flood_size(const struct flood *flood);
const struct flood_counters *flood_counters(const struct flood *flood);

/* Stops the thread and closes every connection. Accepts NULL; may be called twice. */
void flood_stop(struct flood *flood);
/* CPU seconds the flood's thread used (known after flood_stop; 0 before). */
double flood_cpu_seconds(const struct flood *flood);

/* Stops (if need be) and frees. Accepts NULL. */
void flood_free(struct flood *flood);

#endif
