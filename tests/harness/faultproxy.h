/*
 * faultproxy.h: a fault-injecting TCP proxy for tests, run in the test's own process.
 *
 * A proxy listens on a loopback port and forwards every connection to one target host:port. A
 * test puts one in front of each link it wants to break (the cluster harness puts one on every
 * directed peer link between authorities) and switches its mode at any time, from any thread:
 *
 *   mode       new connections                          connections already open
 *   pass       forwarded                                forwarded
 *   delay N    forwarded, each direction's bytes held   bytes read from now on are held
 *              N ms after they arrive                   N ms too
 *   cut        accepted and closed at once              closed
 *   reset      accepted and reset at once (RST:         reset
 *              SO_LINGER 0, then close)
 *   blackhole  accepted and held: never answered, no    no longer forwarded either way (the
 *              connection to the target                 target is never read again); held
 *   garbage N  answered with N bytes of random garbage  closed
 *              (then closed), never forwarded
 *
 * Held connections (blackhole) are read and what they send is dropped, so that the proxy sees
 * their end and frees their slot; a connection that was held stays held until it ends, whatever
 * the mode becomes. A connection whose target cannot be reached is reset, as a refused
 * connection would be.
 *
 * Shaping makes the link look like a long one, whatever the mode (faultproxy_set_shaping); the
 * modes that break a connection (cut, reset, blackhole, garbage) act on it as they would on any:
 *
 *   delay_ms    every chunk of bytes (what one read from a socket got) is held this long after
 *               it was read, plus the delay mode's milliseconds in delay mode; a connection's
 *               first bytes from its client a round trip (2 × delay_ms) more: the TCP handshake a
 *               real link takes before them, which the kernel completes at once on loopback
 *   jitter_ms   plus a uniform draw in [0, jitter_ms] per chunk, from a generator seeded by
 *               options.seed (a run with the same seed draws the same holds); a chunk is never
 *               released before the chunk read before it in the same direction of the same
 *               connection, so bytes keep their order
 *   bandwidth   a token bucket per direction of the link (client to target, target to client),
 *               shared by all its connections: bytes are read from a socket at most at that rate
 *               on average, in bursts of at most 10 ms of it (at least 4 KiB), and a chunk is
 *               held, besides the delay, until the bucket has paid for it (its serialisation
 *               time). Two parallel connections share the rate, taking turns.
 *
 * A delayed direction holds at most buffer_bytes, like a TCP window: its throughput is at most
 * buffer_bytes per hold time, so a link of B bits/s and delay D needs buffer_bytes of at least
 * B × D / 8 to carry B (the cluster harness sizes it so).
 *
 * Bounds: at most max_connections open at once (the next is accepted and closed at once, and
 * counted as refused); at most buffer_bytes held per direction of a connection (a full buffer
 * stops reading that side, which is TCP's own back-pressure), in at most 256 chunks. One thread
 * polls everything, so a proxy costs one thread and two descriptors per connection.
 *
 * The proxy never blocks: every socket is non-blocking, and a mode or shaping change is applied
 * by the proxy's thread between two polls (faultproxy_set_mode and faultproxy_set_shaping return
 * once it was applied) to the bytes read from then on; bytes already held keep their release
 * time.
 */
#ifndef DIRAUTH_TESTS_HARNESS_FAULTPROXY_H
#define DIRAUTH_TESTS_HARNESS_FAULTPROXY_H

#include <stddef.h>
#include <stdint.h>

#define FAULTPROXY_DEFAULT_MAX_CONNECTIONS 64
#define FAULTPROXY_DEFAULT_BUFFER_BYTES    (64 * 1024)
#define FAULTPROXY_MAX_CONNECTIONS         1024
#define FAULTPROXY_MAX_BUFFER_BYTES        (16 * 1024 * 1024)
#define FAULTPROXY_MAX_DELAY_MS            600000u
#define FAULTPROXY_MAX_GARBAGE_BYTES       (1024ull * 1024 * 1024)
#define FAULTPROXY_MIN_BANDWIDTH           8000ull         /* bits per second: 1 kB/s */
#define FAULTPROXY_MAX_BANDWIDTH           100000000000ull /* bits per second: 100 Gbit/s */

enum faultproxy_mode {
	FAULTPROXY_PASS = 0,
	FAULTPROXY_DELAY,     /* parameter: milliseconds, 1..FAULTPROXY_MAX_DELAY_MS */
	FAULTPROXY_CUT,       /* parameter ignored */
	FAULTPROXY_RESET,     /* parameter ignored */
	FAULTPROXY_BLACKHOLE, /* parameter ignored */
	FAULTPROXY_GARBAGE,   /* parameter: bytes per connection, 1..FAULTPROXY_MAX_GARBAGE_BYTES */
};

/* How the link looks (the table above). All zero: a loopback link, as fast as it goes. */
struct faultproxy_shaping {
	uint32_t delay_ms;                  /* 0..FAULTPROXY_MAX_DELAY_MS, one way */
	uint32_t jitter_ms;                 /* 0..FAULTPROXY_MAX_DELAY_MS */
	uint64_t bandwidth_bits_per_second; /* per direction; 0: no cap, else FAULTPROXY_MIN_BANDWIDTH
	                                       ..FAULTPROXY_MAX_BANDWIDTH */
};

struct faultproxy_options {
	const char *target_host;           /* an IPv4 literal, e.g. "127.0.0.1" */
	unsigned target_port;              /* 1..65535 */
	unsigned listen_port;              /* on 127.0.0.1; 0: any free port (faultproxy_port says which) */
	size_t max_connections;            /* 0: FAULTPROXY_DEFAULT_MAX_CONNECTIONS */
	size_t buffer_bytes;               /* per direction of a connection; 0: the default */
	enum faultproxy_mode mode;         /* the mode at start */
	uint64_t mode_parameter;           /* its parameter */
	struct faultproxy_shaping shaping; /* at start */
	uint64_t seed;                     /* of the jitter's draws; 0: a fixed one */
};

/* What a proxy did since it started. */
struct faultproxy_counters {
	uint64_t accepted;        /* connections accepted */
	uint64_t forwarded;       /* connections that reached the target */
	uint64_t refused;         /* accepted and closed at once: cut, or over max_connections */
	uint64_t reset;           /* connections reset: reset mode, or the target unreachable */
	uint64_t held;            /* connections held by blackhole */
	uint64_t garbage_answers; /* connections answered with garbage */
	uint64_t bytes_to_target; /* bytes written to the target */
	uint64_t bytes_to_client; /* bytes of the target's answers written to clients */
	uint64_t garbage_bytes;   /* bytes of garbage written to clients */
	uint64_t dropped_bytes;   /* bytes read from held or garbage-answered clients and dropped */
	uint64_t tls_clients;     /* forwarded connections whose client's first byte opened a TLS
	                             handshake record (0x16): what they carried was TLS */
	uint64_t open;            /* connections open now */
	uint64_t jitter_draws;    /* chunks given a jitter draw */
	uint64_t jitter_drawn_ms; /* the sum of those draws: a run with the same seed draws the same */
};

struct faultproxy;

/* Starts a proxy: binds its port, then its thread. On success *out is the proxy (stop it with
 * faultproxy_stop). Returns 0; DIRAUTH_ERR_CONFIG (a target that is not an IPv4 literal, a
 * port, bound, mode parameter or shaping out of range); DIRAUTH_ERR_IO (the port cannot be bound, or
 * the thread or its wake-up pipe cannot be made); DIRAUTH_ERR_NOMEM. */
int faultproxy_start(const struct faultproxy_options *options, struct faultproxy **out);

/* The port the proxy listens on (127.0.0.1). */
unsigned faultproxy_port(const struct faultproxy *proxy);

/* Switches the mode (table above) and returns once the proxy's thread applied it to the open
 * connections. Returns 0; DIRAUTH_ERR_CONFIG for a parameter out of range (nothing changes);
 * DIRAUTH_ERR_INTERNAL when the thread did not apply it within 5 s. */
int faultproxy_set_mode(struct faultproxy *proxy, enum faultproxy_mode mode, uint64_t parameter);

/* Changes the link's shaping (table above) and returns once the proxy's thread applied it.
 * Returns 0; DIRAUTH_ERR_CONFIG for a value out of range (nothing changes);
 * DIRAUTH_ERR_INTERNAL when the thread did not apply it within 5 s. */
int faultproxy_set_shaping(struct faultproxy *proxy, const struct faultproxy_shaping *shaping);

/* The current shaping. */
void faultproxy_shaping(struct faultproxy *proxy, struct faultproxy_shaping *out);

/* The current mode and its parameter (parameter may be NULL). */
enum faultproxy_mode faultproxy_mode(struct faultproxy *proxy, uint64_t *parameter);

/* Forwards new connections to host:port from now on (open ones keep their target). Returns 0 or
 * DIRAUTH_ERR_CONFIG. */
int faultproxy_set_target(struct faultproxy *proxy, const char *host, unsigned port);

/* A consistent copy of the counters, taken after this call began (so it counts everything a
 * client saw happen before it). */
void faultproxy_counters(struct faultproxy *proxy, struct faultproxy_counters *out);

/* The mode's name ("pass", "delay", ...). Static storage. */
const char *faultproxy_mode_name(enum faultproxy_mode mode);

/* Stops the thread, closes every connection and the port, and frees. Accepts NULL. */
void faultproxy_stop(struct faultproxy *proxy);

#endif
