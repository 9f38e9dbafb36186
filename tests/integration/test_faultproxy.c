/*
 * test_faultproxy.c: the fault proxy of the test harness (tests/harness/faultproxy.h), proven with
 * real sockets on loopback.
 *
 * The tests of several authorities rely on it to break links exactly as they say, so each mode
 * is shown here against a real upstream (an echo server in this file, and the harness's stub
 * HTTP server for what curl sees): pass forwards both ways and the half-close; delay holds each
 * direction's bytes; cut closes what is open and refuses what comes; reset sends RST; blackhole
 * accepts and never answers and never reaches the upstream; garbage answers 10 MB of random
 * bytes without the upstream; the connection bound, the counters, retargeting and a clean stop.
 * Shaping, as measured from outside: the one-way hold of each chunk between the delay and the
 * delay plus the jitter (a round trip more for a connection's first bytes), the same holds for
 * the same seed, order kept under jitter, a transfer
 * no faster than the bandwidth cap, two parallel connections sharing it, and the fault modes
 * still winning over it. The whole file runs in about 12 s.
 */
#include "test_support.h"

#include "base/error.h"
#include "tests/harness/faultproxy.h"
#include "tests/harness/stub_http.h"
#include "tests/harness/cluster.h"

#include <check.h>
#include <curl/curl.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* --- an echo server: each connection's bytes come back, and its end ends the answer --------- */

struct echo {
	int listener;
	unsigned port;
	atomic_uint accepted;
	atomic_int stop;
	pthread_t thread;
};

static void *echo_connection(void *context)
{
	int fd = (int)(intptr_t)context;
	uint8_t data[16384];
	for (;;) {
		ssize_t n = recv(fd, data, sizeof data, 0);
		if (n <= 0)
			break;
		for (ssize_t sent = 0; sent < n;) {
			ssize_t m = send(fd, data + sent, (size_t)(n - sent), MSG_NOSIGNAL);
			if (m <= 0)
				goto done;
			sent += m;
		}
	}
	shutdown(fd, SHUT_WR);
done:
	close(fd);
	return NULL;
}

static void *echo_accept(void *context)
{
	struct echo *echo = context;
	while (!atomic_load(&echo->stop)) {
		struct pollfd pfd = {.fd = echo->listener, .events = POLLIN};
		if (poll(&pfd, 1, 50) <= 0)
			continue;
		int fd = accept(echo->listener, NULL, NULL);
		if (fd < 0)
			continue;
		atomic_fetch_add(&echo->accepted, 1);
		pthread_t thread;
		if (pthread_create(&thread, NULL, echo_connection, (void *)(intptr_t)fd) == 0)
			pthread_detach(thread);
		else
			close(fd);
	}
	return NULL;
}

/* A listening socket on a free loopback port, *port set: the echo server's, or one the test
 * accepts on itself as the far end of a proxied connection, to see when each byte arrives. */
static int listen_on_loopback(unsigned *port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert(fd >= 0);
	struct sockaddr_in address;
	memset(&address, 0, sizeof address);
	address.sin_family = AF_INET;
	address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t len = sizeof address;
	ck_assert(bind(fd, (struct sockaddr *)&address, sizeof address) == 0);
	ck_assert(listen(fd, 64) == 0);
	ck_assert(getsockname(fd, (struct sockaddr *)&address, &len) == 0);
	*port = ntohs(address.sin_port);
	return fd;
}

static void echo_start(struct echo *echo)
{
	memset(echo, 0, sizeof *echo);
	echo->listener = listen_on_loopback(&echo->port);
	ck_assert(pthread_create(&echo->thread, NULL, echo_accept, echo) == 0);
}

static void echo_stop(struct echo *echo)
{
	atomic_store(&echo->stop, 1);
	pthread_join(echo->thread, NULL);
	close(echo->listener);
}

/* --- a client ------------------------------------------------------------------------------- */

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int connect_to(unsigned port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert(fd >= 0);
	struct sockaddr_in address;
	memset(&address, 0, sizeof address);
	address.sin_family = AF_INET;
	address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	address.sin_port = htons((uint16_t)port);
	ck_assert_msg(connect(fd, (struct sockaddr *)&address, sizeof address) == 0, "connect: %s",
	              strerror(errno));
	return fd;
}

/* How a read ended. */
enum ending { ENDING_DATA, ENDING_EOF, ENDING_RESET, ENDING_TIMEOUT };

/* Sends len bytes (then shuts down writing when shut), reads at most cap bytes into out until
 * the stream ends or timeout_ms pass, at the same time so that nothing deadlocks. */
static enum ending exchange(int fd, const uint8_t *data, size_t len, int shut, uint8_t *out, size_t cap,
                            size_t *got, int timeout_ms)
{
	size_t sent = 0;
	*got = 0;
	uint64_t deadline = now_ms() + (uint64_t)timeout_ms;
	int shut_done = 0;
	uint8_t scratch[65536];
	for (;;) {
		if (sent == len && shut && !shut_done) {
			shutdown(fd, SHUT_WR);
			shut_done = 1;
		}
		uint64_t now = now_ms();
		if (now >= deadline)
			return ENDING_TIMEOUT;
		struct pollfd pfd = {.fd = fd, .events = (short)(POLLIN | (sent < len ? POLLOUT : 0))};
		if (poll(&pfd, 1, (int)(deadline - now)) <= 0)
			continue;
		if ((pfd.revents & POLLOUT) && sent < len) {
			ssize_t n = send(fd, data + sent, len - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
			if (n > 0)
				sent += (size_t)n;
			else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
				return errno == ECONNRESET || errno == EPIPE ? ENDING_RESET : ENDING_EOF;
		}
		if (pfd.revents & (POLLIN | POLLHUP | POLLERR)) {
			ssize_t n = recv(fd, scratch, sizeof scratch, MSG_DONTWAIT);
			if (n > 0) {
				size_t keep = (size_t)n;
				if (out && *got < cap) {
					size_t room = cap - *got;
					memcpy(out + *got, scratch, keep < room ? keep : room);
				}
				*got += keep;
				if (!out && *got >= cap)
					return ENDING_DATA; /* read as much as was asked for */
			} else if (n == 0) {
				return ENDING_EOF;
			} else if (errno != EAGAIN && errno != EWOULDBLOCK) {
				return errno == ECONNRESET ? ENDING_RESET : ENDING_EOF;
			}
		}
		if (out && *got >= cap && cap > 0 && sent == len)
			return ENDING_DATA;
	}
}

/* One echo round trip of a small message through fd; returns the milliseconds it took. */
static uint64_t round_trip(int fd, const char *message)
{
	uint8_t back[256];
	size_t got = 0;
	uint64_t started = now_ms();
	enum ending ending =
	    exchange(fd, (const uint8_t *)message, strlen(message), 0, back, strlen(message), &got, 5000);
	ck_assert_int_eq(ending, ENDING_DATA);
	ck_assert_uint_eq(got, strlen(message));
	ck_assert(memcmp(back, message, got) == 0);
	return now_ms() - started;
}

/* Sends a short message on from and returns the milliseconds until it is all read on to. */
static uint64_t one_way(int from, int to, const char *message)
{
	size_t len = strlen(message), got = 0;
	char back[64];
	ck_assert(len < sizeof back);
	uint64_t started = now_ms();
	ck_assert(send(from, message, len, MSG_NOSIGNAL) == (ssize_t)len);
	while (got < len) {
		struct pollfd pfd = {.fd = to, .events = POLLIN};
		ck_assert_msg(poll(&pfd, 1, 5000) == 1, "nothing arrived within 5 s");
		ssize_t n = recv(to, back + got, len - got, 0);
		ck_assert(n > 0);
		got += (size_t)n;
	}
	uint64_t took = now_ms() - started;
	ck_assert(memcmp(back, message, len) == 0);
	return took;
}

static uint8_t pattern_byte(size_t i, unsigned stream)
{
	return (uint8_t)(i * 7 + i / 251 + stream * 13);
}

/* Sends len patterned bytes on each of count connections to the echo server at once, shuts each
 * down for writing, and reads every echo to its end, checking each byte. finished[i] gets the
 * milliseconds connection i took; returns the milliseconds all took. */
static uint64_t echo_in_parallel(const int *fds, size_t count, size_t len, uint64_t *finished)
{
	size_t sent[4] = {0}, got[4] = {0};
	int done[4] = {0}, shut[4] = {0};
	uint8_t block[65536];
	ck_assert(count <= 4);
	uint64_t started = now_ms();
	for (size_t left = count; left > 0;) {
		struct pollfd pfds[4];
		for (size_t i = 0; i < count; i++)
			pfds[i] = (struct pollfd){.fd = done[i] ? -1 : fds[i],
			                          .events = (short)(POLLIN | (sent[i] < len ? POLLOUT : 0))};
		ck_assert_msg(poll(pfds, (nfds_t)count, 20000) > 0, "the transfer stalled");
		for (size_t i = 0; i < count; i++) {
			if (done[i])
				continue;
			if ((pfds[i].revents & POLLOUT) && sent[i] < len) {
				size_t n = len - sent[i] < sizeof block ? len - sent[i] : sizeof block;
				for (size_t b = 0; b < n; b++)
					block[b] = pattern_byte(sent[i] + b, (unsigned)i);
				ssize_t m = send(fds[i], block, n, MSG_NOSIGNAL | MSG_DONTWAIT);
				if (m > 0)
					sent[i] += (size_t)m;
			}
			if (sent[i] == len && !shut[i]) {
				shutdown(fds[i], SHUT_WR);
				shut[i] = 1;
			}
			if (pfds[i].revents & (POLLIN | POLLHUP | POLLERR)) {
				ssize_t m = recv(fds[i], block, sizeof block, MSG_DONTWAIT);
				if (m > 0) {
					/* Compared before asserting: Check records every assertion it passes.
					 */
					for (ssize_t b = 0; b < m; b++)
						if (block[b] != pattern_byte(got[i] + (size_t)b, (unsigned)i))
							ck_abort_msg("connection %zu: byte %zu differs", i,
							             got[i] + (size_t)b);
					got[i] += (size_t)m;
				} else if (m == 0) {
					ck_assert_uint_eq(got[i], len);
					done[i] = 1;
					finished[i] = now_ms() - started;
					left--;
				} else {
					ck_assert_msg(errno == EAGAIN || errno == EWOULDBLOCK, "recv: %s",
					              strerror(errno));
				}
			}
		}
	}
	return now_ms() - started;
}

static struct faultproxy *proxy_to(unsigned port, size_t max_connections)
{
	struct faultproxy_options options = {
	    .target_host = "127.0.0.1", .target_port = port, .max_connections = max_connections};
	struct faultproxy *proxy = NULL;
	ck_assert_int_eq(faultproxy_start(&options, &proxy), 0);
	ck_assert_uint_ne(faultproxy_port(proxy), 0);
	return proxy;
}

START_TEST(test_pass_forwards_both_ways_and_the_half_close)
{
	struct echo echo;
	echo_start(&echo);
	struct faultproxy *proxy = proxy_to(echo.port, 0);

	/* 1 MiB of patterned bytes out and back, with the client's end passed on to the upstream and
	 * the upstream's end passed back. */
	size_t len = 1024 * 1024;
	uint8_t *data = malloc(len), *back = malloc(len + 1);
	ck_assert(data && back);
	for (size_t i = 0; i < len; i++)
		data[i] = (uint8_t)(i * 7 + i / 256);
	int fd = connect_to(faultproxy_port(proxy));
	size_t got = 0;
	ck_assert_int_eq(exchange(fd, data, len, 1, back, len + 1, &got, 10000), ENDING_EOF);
	ck_assert_uint_eq(got, len);
	ck_assert(memcmp(data, back, len) == 0);
	close(fd);

	struct faultproxy_counters counters;
	for (int i = 0; i < 100; i++) {
		faultproxy_counters(proxy, &counters);
		if (counters.open == 0)
			break;
		test_sleep_ms(10);
	}
	ck_assert_uint_eq(counters.accepted, 1);
	ck_assert_uint_eq(counters.forwarded, 1);
	ck_assert_uint_eq(counters.bytes_to_target, len);
	ck_assert_uint_eq(counters.bytes_to_client, len);
	ck_assert_uint_eq(counters.open, 0);
	ck_assert_uint_eq(atomic_load(&echo.accepted), 1);

	/* And an HTTP exchange, as curl sees it. */
	struct stub_http *stub = NULL;
	ck_assert_int_eq(stub_http_start(0, &stub), 0);
	ck_assert_int_eq(stub_http_route(stub, "GET", "/v1/health", 200, "application/json",
	                                 (const uint8_t *)"{\"status\":\"ok\"}", 15),
	                 0);
	ck_assert_int_eq(faultproxy_set_target(proxy, "127.0.0.1", stub_http_port(stub)), 0);
	char url[128];
	snprintf(url, sizeof url, "http://127.0.0.1:%u/v1/health", faultproxy_port(proxy));
	struct cluster_response response;
	ck_assert_int_eq(cluster_http(url, NULL, 0, NULL, 5000, &response), 200);
	ck_assert_uint_eq(response.body.len, 15);
	ck_assert(memcmp(response.body.data, "{\"status\":\"ok\"}", 15) == 0);
	cluster_response_free(&response);
	ck_assert_uint_eq(stub_http_hits(stub, "GET", "/v1/health", NULL), 1);
	/* A POST that waits for "100 Continue" before its body, as curl sends large ones. */
	ck_assert_int_eq(stub_http_route(stub, "POST", "/v1/mix/votes", 202, NULL, (const uint8_t *)"{}", 2),
	                 0);
	const char *post = "POST /v1/mix/votes HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
	                   "Expect: 100-continue\r\n\r\n";
	fd = connect_to(faultproxy_port(proxy));
	char answer[512];
	ck_assert_int_eq(
	    exchange(fd, (const uint8_t *)post, strlen(post), 0, (uint8_t *)answer, 25, &got, 5000),
	    ENDING_DATA);
	ck_assert(memcmp(answer, "HTTP/1.1 100 Continue\r\n\r\n", 25) == 0);
	ck_assert_int_eq(
	    exchange(fd, (const uint8_t *)"hello", 5, 1, (uint8_t *)answer, sizeof answer - 1, &got, 5000),
	    ENDING_EOF);
	answer[got] = 0;
	ck_assert_msg(strncmp(answer, "HTTP/1.1 202", 12) == 0, "%s", answer);
	close(fd);
	size_t posted = 0;
	ck_assert_uint_eq(stub_http_hits(stub, "POST", "/v1/mix/votes", &posted), 1);
	ck_assert_uint_eq(posted, 5);
	ck_assert_uint_eq(stub_http_total(stub), 2);

	faultproxy_stop(proxy);
	stub_http_stop(stub);
	echo_stop(&echo);
	free(data);
	free(back);
}
END_TEST

START_TEST(test_delay_holds_each_direction)
{
	struct echo echo;
	echo_start(&echo);
	struct faultproxy *proxy = proxy_to(echo.port, 0);
	int fd = connect_to(faultproxy_port(proxy));
	ck_assert_uint_lt(round_trip(fd, "before"), 500);

	/* 300 ms each way: a round trip takes at least 600 ms, on the open connection and a new one. */
	ck_assert_int_eq(faultproxy_set_mode(proxy, FAULTPROXY_DELAY, 300), 0);
	uint64_t delayed = round_trip(fd, "held");
	ck_assert_uint_ge(delayed, 600);
	ck_assert_uint_lt(delayed, 3000);
	int other = connect_to(faultproxy_port(proxy));
	ck_assert_uint_ge(round_trip(other, "held too"), 600);

	/* Back to pass: under 500 ms, faster than any delayed round trip (the bound leaves room for a
	 * loaded machine), and nothing was lost or reordered on the way. */
	ck_assert_int_eq(faultproxy_set_mode(proxy, FAULTPROXY_PASS, 0), 0);
	ck_assert_uint_lt(round_trip(fd, "after"), 500);
	ck_assert_uint_lt(round_trip(other, "after too"), 500);
	uint64_t parameter = 0;
	ck_assert_int_eq(faultproxy_mode(proxy, &parameter), FAULTPROXY_PASS);
	close(fd);
	close(other);
	faultproxy_stop(proxy);
	echo_stop(&echo);
}
END_TEST

START_TEST(test_cut_closes_open_connections_and_refuses_new_ones)
{
	struct echo echo;
	echo_start(&echo);
	struct faultproxy *proxy = proxy_to(echo.port, 0);
	int fd = connect_to(faultproxy_port(proxy));
	round_trip(fd, "up");

	ck_assert_int_eq(faultproxy_set_mode(proxy, FAULTPROXY_CUT, 0), 0);
	size_t got = 0;
	ck_assert_int_eq(exchange(fd, NULL, 0, 0, NULL, 1, &got, 2000), ENDING_EOF);
	ck_assert_uint_eq(got, 0);
	close(fd);

	/* A new connection is accepted and closed at once, and never reaches the upstream. */
	for (int i = 0; i < 3; i++) {
		fd = connect_to(faultproxy_port(proxy));
		enum ending ending = exchange(fd, (const uint8_t *)"hello", 5, 0, NULL, 1, &got, 2000);
		ck_assert_msg(ending == ENDING_EOF || ending == ENDING_RESET, "ending %d", ending);
		ck_assert_uint_eq(got, 0);
		close(fd);
	}
	struct faultproxy_counters counters;
	faultproxy_counters(proxy, &counters);
	ck_assert_uint_eq(counters.refused, 3);
	ck_assert_uint_eq(counters.forwarded, 1);
	ck_assert_uint_eq(atomic_load(&echo.accepted), 1);

	/* Pass again: connections go through. */
	ck_assert_int_eq(faultproxy_set_mode(proxy, FAULTPROXY_PASS, 0), 0);
	fd = connect_to(faultproxy_port(proxy));
	round_trip(fd, "back");
	close(fd);
	faultproxy_stop(proxy);
	echo_stop(&echo);
}
END_TEST

START_TEST(test_reset_sends_rst)
{
	struct echo echo;
	echo_start(&echo);
	struct faultproxy *proxy = proxy_to(echo.port, 0);
	int fd = connect_to(faultproxy_port(proxy));
	round_trip(fd, "up");

	ck_assert_int_eq(faultproxy_set_mode(proxy, FAULTPROXY_RESET, 0), 0);
	size_t got = 0;
	ck_assert_int_eq(exchange(fd, NULL, 0, 0, NULL, 1, &got, 2000), ENDING_RESET);
	close(fd);
	fd = connect_to(faultproxy_port(proxy));
	ck_assert_int_eq(exchange(fd, NULL, 0, 0, NULL, 1, &got, 2000), ENDING_RESET);
	close(fd);

	/* curl sees a transport failure, not an answer. */
	char url[128];
	snprintf(url, sizeof url, "http://127.0.0.1:%u/", faultproxy_port(proxy));
	struct cluster_response response;
	ck_assert_int_eq(cluster_http(url, NULL, 0, NULL, 2000, &response), -1);
	cluster_response_free(&response);
	struct faultproxy_counters counters;
	faultproxy_counters(proxy, &counters);
	ck_assert_uint_ge(counters.reset, 3);
	ck_assert_uint_eq(atomic_load(&echo.accepted), 1);
	faultproxy_stop(proxy);
	echo_stop(&echo);
}
END_TEST

START_TEST(test_blackhole_never_answers_and_never_reaches_the_upstream)
{
	struct echo echo;
	echo_start(&echo);
	struct faultproxy *proxy = proxy_to(echo.port, 0);
	int open_fd = connect_to(faultproxy_port(proxy));
	round_trip(open_fd, "up");

	ck_assert_int_eq(faultproxy_set_mode(proxy, FAULTPROXY_BLACKHOLE, 0), 0);
	/* The open connection goes silent: what it sends never comes back. */
	size_t got = 0;
	ck_assert_int_eq(exchange(open_fd, (const uint8_t *)"anyone?", 7, 0, NULL, 1, &got, 500),
	                 ENDING_TIMEOUT);
	ck_assert_uint_eq(got, 0);
	/* A new one is accepted (connect succeeds) and then nothing, not even its end. */
	int fd = connect_to(faultproxy_port(proxy));
	ck_assert_int_eq(exchange(fd, (const uint8_t *)"GET / HTTP/1.1\r\n\r\n", 18, 0, NULL, 1, &got, 500),
	                 ENDING_TIMEOUT);
	ck_assert_uint_eq(got, 0);
	char url[128];
	snprintf(url, sizeof url, "http://127.0.0.1:%u/", faultproxy_port(proxy));
	struct cluster_response response;
	uint64_t started = now_ms();
	ck_assert_int_eq(cluster_http(url, NULL, 0, NULL, 400, &response), -1);
	ck_assert_uint_ge(now_ms() - started, 350); /* it waited for its own timeout */
	cluster_response_free(&response);
	ck_assert_uint_eq(atomic_load(&echo.accepted), 1);
	struct faultproxy_counters counters;
	faultproxy_counters(proxy, &counters);
	ck_assert_uint_eq(counters.forwarded, 1);
	ck_assert_uint_ge(counters.held, 3);
	ck_assert_uint_eq(counters.bytes_to_client, 2); /* "up" */

	/* Held connections stay held; new ones pass again. */
	ck_assert_int_eq(faultproxy_set_mode(proxy, FAULTPROXY_PASS, 0), 0);
	ck_assert_int_eq(exchange(open_fd, (const uint8_t *)"still?", 6, 0, NULL, 1, &got, 300),
	                 ENDING_TIMEOUT);
	int again = connect_to(faultproxy_port(proxy));
	round_trip(again, "through");
	close(again);
	close(fd);
	close(open_fd);
	faultproxy_stop(proxy);
	echo_stop(&echo);
}
END_TEST

START_TEST(test_garbage_answers_ten_megabytes_of_random_bytes)
{
	struct echo echo;
	echo_start(&echo);
	struct faultproxy *proxy = proxy_to(echo.port, 0);
	const size_t garbage = 10 * 1024 * 1024;
	ck_assert_int_eq(faultproxy_set_mode(proxy, FAULTPROXY_GARBAGE, garbage), 0);

	int fd = connect_to(faultproxy_port(proxy));
	uint8_t *answer = malloc(garbage + 1);
	ck_assert(answer != NULL);
	size_t got = 0;
	const char *request = "GET /v1/mix/votes/11/authority0.dirauth.example HTTP/1.1\r\nHost: x\r\n\r\n";
	ck_assert_int_eq(
	    exchange(fd, (const uint8_t *)request, strlen(request), 1, answer, garbage + 1, &got, 10000),
	    ENDING_EOF);
	close(fd);
	ck_assert_uint_eq(got, garbage);
	/* Random-looking: every byte value occurs, none dominates, and it is no HTTP answer. */
	size_t histogram[256] = {0};
	for (size_t i = 0; i < got; i++)
		histogram[answer[i]]++;
	for (size_t v = 0; v < 256; v++) {
		ck_assert_uint_gt(histogram[v], garbage / 256 / 2);
		ck_assert_uint_lt(histogram[v], garbage / 256 * 2);
	}
	ck_assert(memcmp(answer, "HTTP/", 5) != 0);
	free(answer);

	/* curl gets no answer out of it. */
	char url[128];
	snprintf(url, sizeof url, "http://127.0.0.1:%u/", faultproxy_port(proxy));
	struct cluster_response response;
	ck_assert_int_eq(cluster_http(url, NULL, 0, NULL, 5000, &response), -1);
	cluster_response_free(&response);

	struct faultproxy_counters counters;
	faultproxy_counters(proxy, &counters);
	ck_assert_uint_eq(counters.garbage_answers, 2);
	ck_assert_uint_ge(counters.garbage_bytes, garbage);
	ck_assert_uint_ge(counters.dropped_bytes, strlen(request));
	ck_assert_uint_eq(counters.forwarded, 0);
	ck_assert_uint_eq(atomic_load(&echo.accepted), 0);
	faultproxy_stop(proxy);
	echo_stop(&echo);
}
END_TEST

START_TEST(test_bounds_parameters_retarget_and_clean_stop)
{
	struct echo echo, other_echo;
	echo_start(&echo);
	echo_start(&other_echo);

	/* Out-of-range settings are refused and change nothing. */
	struct faultproxy *proxy = NULL;
	struct faultproxy_options bad = {.target_host = "localhost", .target_port = echo.port};
	ck_assert_int_eq(faultproxy_start(&bad, &proxy), DIRAUTH_ERR_CONFIG);
	ck_assert_ptr_null(proxy);
	bad.target_host = "127.0.0.1";
	bad.target_port = 0;
	ck_assert_int_eq(faultproxy_start(&bad, &proxy), DIRAUTH_ERR_CONFIG);
	proxy = proxy_to(echo.port, 2);
	ck_assert_int_eq(faultproxy_set_mode(proxy, FAULTPROXY_DELAY, 0), DIRAUTH_ERR_CONFIG);
	ck_assert_int_eq(faultproxy_set_mode(proxy, FAULTPROXY_GARBAGE, 0), DIRAUTH_ERR_CONFIG);
	ck_assert_int_eq(faultproxy_set_mode(proxy, FAULTPROXY_DELAY, FAULTPROXY_MAX_DELAY_MS + 1),
	                 DIRAUTH_ERR_CONFIG);
	ck_assert_int_eq(faultproxy_mode(proxy, NULL), FAULTPROXY_PASS);
	ck_assert_int_eq(faultproxy_set_target(proxy, "not an address", 80), DIRAUTH_ERR_CONFIG);
	ck_assert_str_eq(faultproxy_mode_name(FAULTPROXY_BLACKHOLE), "blackhole");

	/* At most two connections: the third is accepted and closed at once. */
	int first = connect_to(faultproxy_port(proxy));
	int second = connect_to(faultproxy_port(proxy));
	round_trip(first, "one");
	round_trip(second, "two");
	int third = connect_to(faultproxy_port(proxy));
	size_t got = 0;
	enum ending ending = exchange(third, (const uint8_t *)"three", 5, 0, NULL, 1, &got, 2000);
	ck_assert_msg(ending == ENDING_EOF || ending == ENDING_RESET, "ending %d", ending);
	ck_assert_uint_eq(got, 0);
	close(third);
	struct faultproxy_counters counters;
	faultproxy_counters(proxy, &counters);
	ck_assert_uint_eq(counters.refused, 1);
	ck_assert_uint_eq(counters.open, 2);

	/* A new target takes new connections; the open ones keep theirs. */
	close(second);
	for (int i = 0; i < 100 && (faultproxy_counters(proxy, &counters), counters.open > 1); i++)
		test_sleep_ms(10);
	ck_assert_int_eq(faultproxy_set_target(proxy, "127.0.0.1", other_echo.port), 0);
	int moved = connect_to(faultproxy_port(proxy));
	round_trip(moved, "moved");
	round_trip(first, "stayed");
	ck_assert_uint_eq(atomic_load(&other_echo.accepted), 1);
	ck_assert_uint_eq(atomic_load(&echo.accepted), 2);

	/* Stop closes what is open and frees the port. */
	unsigned port = faultproxy_port(proxy);
	faultproxy_stop(proxy);
	ck_assert_int_eq(exchange(first, NULL, 0, 0, NULL, 1, &got, 2000), ENDING_EOF);
	close(first);
	close(moved);
	struct faultproxy_options again = {
	    .target_host = "127.0.0.1", .target_port = echo.port, .listen_port = port};
	ck_assert_int_eq(faultproxy_start(&again, &proxy), 0);
	ck_assert_uint_eq(faultproxy_port(proxy), port);
	faultproxy_stop(proxy);
	faultproxy_stop(NULL);
	echo_stop(&echo);
	echo_stop(&other_echo);
}
END_TEST

/* What a machine running two suites at once, and builds beside them, may add to a hold of the
 * proxy's: a bound above catches a hold many times too long, the bound below is exact. */
#define LOAD_ROOM_MS 1000

START_TEST(test_shaping_holds_each_chunk_between_delay_and_delay_plus_jitter)
{
	unsigned port = 0;
	int listener = listen_on_loopback(&port);
	struct faultproxy_options options = {.target_host = "127.0.0.1",
	                                     .target_port = port,
	                                     .shaping = {.delay_ms = 40, .jitter_ms = 60},
	                                     .seed = 7};
	struct faultproxy *proxy = NULL;
	ck_assert_int_eq(faultproxy_start(&options, &proxy), 0);
	int client = connect_to(faultproxy_port(proxy));
	int far = accept(listener, NULL, NULL);
	ck_assert(far >= 0);

	/* The first bytes of a connection wait a round trip more: the handshake of a real link. A
	 * loaded machine may add to any hold (LOAD_ROOM_MS), never take from it. */
	uint64_t first = one_way(client, far, "hello");
	ck_assert_msg(first >= 3 * 40 && first <= 3 * 40 + 60 + LOAD_ROOM_MS, "the first bytes took %llu ms",
	              (unsigned long long)first);

	/* Then each message is one chunk: its one-way time is its hold, 40 ms plus a draw in
	 * [0, 60], with room for a loaded machine above; the draws are spread, not one value. Both
	 * ways. */
	uint64_t lowest = UINT64_MAX, highest = 0;
	for (int i = 0; i < 20; i++) {
		char message[32];
		snprintf(message, sizeof message, "message %d", i);
		uint64_t took = i % 2 ? one_way(far, client, message) : one_way(client, far, message);
		ck_assert_msg(took >= 40 && took <= 40 + 60 + LOAD_ROOM_MS, "message %d took %llu ms", i,
		              (unsigned long long)took);
		lowest = took < lowest ? took : lowest;
		highest = took > highest ? took : highest;
	}
	ck_assert_msg(highest - lowest >= 15, "20 holds between %llu and %llu ms: no jitter",
	              (unsigned long long)lowest, (unsigned long long)highest);

	/* The delay mode adds its delay to the shaping's; pass takes it away again. */
	ck_assert_int_eq(faultproxy_set_mode(proxy, FAULTPROXY_DELAY, 200), 0);
	ck_assert_uint_ge(one_way(client, far, "shaped and delayed"), 240);
	ck_assert_int_eq(faultproxy_set_mode(proxy, FAULTPROXY_PASS, 0), 0);
	struct faultproxy_shaping shaping = {.delay_ms = 0};
	ck_assert_int_eq(faultproxy_set_shaping(proxy, &shaping), 0);
	uint64_t unshaped = UINT64_MAX; /* the least of a few: a loaded machine stalls now and then */
	for (int i = 0; i < 5; i++) {
		uint64_t took = one_way(client, far, "unshaped");
		unshaped = took < unshaped ? took : unshaped;
	}
	ck_assert_uint_lt(unshaped, 30);
	faultproxy_shaping(proxy, &shaping);
	ck_assert_uint_eq(shaping.delay_ms + shaping.jitter_ms + shaping.bandwidth_bits_per_second, 0);

	/* Out of range: refused, and nothing changes. */
	struct faultproxy_shaping bad = {.delay_ms = FAULTPROXY_MAX_DELAY_MS + 1};
	ck_assert_int_eq(faultproxy_set_shaping(proxy, &bad), DIRAUTH_ERR_CONFIG);
	bad = (struct faultproxy_shaping){.jitter_ms = FAULTPROXY_MAX_DELAY_MS + 1};
	ck_assert_int_eq(faultproxy_set_shaping(proxy, &bad), DIRAUTH_ERR_CONFIG);
	bad = (struct faultproxy_shaping){.bandwidth_bits_per_second = FAULTPROXY_MIN_BANDWIDTH - 1};
	ck_assert_int_eq(faultproxy_set_shaping(proxy, &bad), DIRAUTH_ERR_CONFIG);
	bad = (struct faultproxy_shaping){.bandwidth_bits_per_second = FAULTPROXY_MAX_BANDWIDTH + 1};
	ck_assert_int_eq(faultproxy_set_shaping(proxy, &bad), DIRAUTH_ERR_CONFIG);
	options.shaping = bad;
	struct faultproxy *refused = NULL;
	ck_assert_int_eq(faultproxy_start(&options, &refused), DIRAUTH_ERR_CONFIG);
	ck_assert_ptr_null(refused);
	ck_assert_uint_lt(one_way(client, far, "still unshaped"), 30);
	close(client);
	close(far);
	faultproxy_stop(proxy);
	close(listener);
}
END_TEST

/* Five messages through a new proxy with the given seed and 0..300 ms of jitter: their one-way
 * holds, and the proxy's own account of its draws. */
static void holds_with_seed(uint64_t seed, uint64_t holds[5], struct faultproxy_counters *counters)
{
	unsigned port = 0;
	int listener = listen_on_loopback(&port);
	struct faultproxy_options options = {
	    .target_host = "127.0.0.1", .target_port = port, .shaping = {.jitter_ms = 300}, .seed = seed};
	struct faultproxy *proxy = NULL;
	ck_assert_int_eq(faultproxy_start(&options, &proxy), 0);
	int client = connect_to(faultproxy_port(proxy));
	int far = accept(listener, NULL, NULL);
	ck_assert(far >= 0);
	for (int i = 0; i < 5; i++)
		holds[i] = one_way(client, far, "which hold?");
	faultproxy_counters(proxy, counters);
	close(client);
	close(far);
	faultproxy_stop(proxy);
	close(listener);
}

START_TEST(test_the_same_seed_draws_the_same_jitter)
{
	/* The draws are compared as the proxy made them: a loaded machine moves the wall times, not
	 * the draws. The wall times must still be at least each draw (never shorter than drawn). */
	uint64_t first[5], again[5], other[5];
	struct faultproxy_counters first_drawn, again_drawn, other_drawn;
	holds_with_seed(11, first, &first_drawn);
	holds_with_seed(11, again, &again_drawn);
	holds_with_seed(12, other, &other_drawn);
	ck_assert_uint_eq(first_drawn.jitter_draws, 5);
	ck_assert_uint_eq(again_drawn.jitter_draws, 5);
	ck_assert_uint_eq(first_drawn.jitter_drawn_ms, again_drawn.jitter_drawn_ms);
	ck_assert_msg(first_drawn.jitter_drawn_ms != other_drawn.jitter_drawn_ms,
	              "seed 12 drew the holds of seed 11");
	uint64_t walls = 0;
	for (int i = 0; i < 5; i++)
		walls += first[i];
	ck_assert_uint_ge(walls, first_drawn.jitter_drawn_ms);
	(void)again, (void)other;
}
END_TEST

START_TEST(test_jitter_never_reorders_bytes)
{
	struct echo echo;
	echo_start(&echo);
	struct faultproxy_options options = {.target_host = "127.0.0.1",
	                                     .target_port = echo.port,
	                                     .shaping = {.delay_ms = 5, .jitter_ms = 40},
	                                     .seed = 3};
	struct faultproxy *proxy = NULL;
	ck_assert_int_eq(faultproxy_start(&options, &proxy), 0);
	int fd = connect_to(faultproxy_port(proxy));

	/* 300 small writes a millisecond apart: each is read as its own chunk and drawn its own
	 * hold, in both directions; what comes back is every byte in order. */
	const size_t piece = 1000, pieces = 300;
	uint8_t *data = malloc(piece * pieces), *back = malloc(piece * pieces);
	ck_assert(data && back);
	for (size_t i = 0; i < piece * pieces; i++)
		data[i] = pattern_byte(i, 0);
	size_t got = 0;
	for (size_t i = 0; i < pieces; i++) {
		ck_assert(send(fd, data + i * piece, piece, MSG_NOSIGNAL) == (ssize_t)piece);
		ssize_t n;
		while ((n = recv(fd, back + got, piece * pieces - got, MSG_DONTWAIT)) > 0)
			got += (size_t)n;
		test_sleep_ms(1);
	}
	size_t more = 0;
	ck_assert_int_eq(exchange(fd, NULL, 0, 1, back + got, piece * pieces - got, &more, 10000),
	                 got + more == piece * pieces ? ENDING_DATA : ENDING_EOF);
	ck_assert_uint_eq(got + more, piece * pieces);
	ck_assert(memcmp(data, back, piece * pieces) == 0);
	close(fd);
	faultproxy_stop(proxy);
	echo_stop(&echo);
	free(data);
	free(back);
}
END_TEST

START_TEST(test_bandwidth_cap_bounds_a_transfer)
{
	struct echo echo;
	echo_start(&echo);
	const uint64_t cap = 16000000; /* bits per second: 2 MB/s each way */
	struct faultproxy_options options = {.target_host = "127.0.0.1",
	                                     .target_port = echo.port,
	                                     .shaping = {.bandwidth_bits_per_second = cap}};
	struct faultproxy *proxy = NULL;
	ck_assert_int_eq(faultproxy_start(&options, &proxy), 0);

	/* 4 MiB out and back: at least 4 MiB at 2 MB/s (2.1 s; the bucket starts with 10 ms of
	 * credit), and not grossly more. */
	const size_t len = 4u << 20;
	double least_ms = (double)len * 8 / (double)cap * 1000 - 20;
	int fd = connect_to(faultproxy_port(proxy));
	uint64_t finished[1];
	uint64_t took = echo_in_parallel(&fd, 1, len, finished);
	ck_assert_msg((double)took >= least_ms, "4 MiB at 16 Mbit/s took %llu ms", (unsigned long long)took);
	ck_assert_msg(took < 3 * least_ms, "4 MiB at 16 Mbit/s took %llu ms", (unsigned long long)took);
	close(fd);

	/* Lifted: the same transfer goes at loopback speed. */
	struct faultproxy_shaping none = {0};
	ck_assert_int_eq(faultproxy_set_shaping(proxy, &none), 0);
	fd = connect_to(faultproxy_port(proxy));
	took = echo_in_parallel(&fd, 1, len, finished);
	ck_assert_msg((double)took < least_ms / 2, "4 MiB without a cap took %llu ms",
	              (unsigned long long)took);
	close(fd);
	faultproxy_stop(proxy);
	echo_stop(&echo);
}
END_TEST

START_TEST(test_parallel_connections_share_the_cap)
{
	struct echo echo;
	echo_start(&echo);
	const uint64_t cap = 16000000;
	struct faultproxy_options options = {.target_host = "127.0.0.1",
	                                     .target_port = echo.port,
	                                     .shaping = {.delay_ms = 20, .bandwidth_bits_per_second = cap},
	                                     .buffer_bytes = 256 * 1024};
	struct faultproxy *proxy = NULL;
	ck_assert_int_eq(faultproxy_start(&options, &proxy), 0);

	/* Two connections of 2 MiB each at once: together no faster than the cap (2.1 s for the
	 * 4 MiB), and taking turns at it, so that neither is done in half that time. */
	const size_t len = 2u << 20;
	double least_ms = (double)(2 * len) * 8 / (double)cap * 1000 - 20;
	int fds[2] = {connect_to(faultproxy_port(proxy)), connect_to(faultproxy_port(proxy))};
	uint64_t finished[2];
	uint64_t took = echo_in_parallel(fds, 2, len, finished);
	ck_assert_msg((double)took >= least_ms, "2 × 2 MiB at 16 Mbit/s took %llu ms",
	              (unsigned long long)took);
	ck_assert_msg(took < 3 * least_ms, "2 × 2 MiB at 16 Mbit/s took %llu ms", (unsigned long long)took);
	uint64_t first = finished[0] < finished[1] ? finished[0] : finished[1];
	ck_assert_msg((double)first >= 0.7 * least_ms, "one connection was done after %llu ms of %llu",
	              (unsigned long long)first, (unsigned long long)took);
	struct faultproxy_counters counters;
	faultproxy_counters(proxy, &counters);
	ck_assert_uint_eq(counters.bytes_to_target, 2 * len);
	ck_assert_uint_eq(counters.bytes_to_client, 2 * len);
	ck_assert_uint_eq(counters.tls_clients, 0);
	close(fds[0]);
	close(fds[1]);
	faultproxy_stop(proxy);
	echo_stop(&echo);
}
END_TEST

START_TEST(test_fault_modes_win_over_shaping)
{
	struct echo echo;
	echo_start(&echo);
	struct faultproxy_options options = {
	    .target_host = "127.0.0.1",
	    .target_port = echo.port,
	    .shaping = {.delay_ms = 30, .jitter_ms = 10, .bandwidth_bits_per_second = 1000000}};
	struct faultproxy *proxy = NULL;
	ck_assert_int_eq(faultproxy_start(&options, &proxy), 0);
	int fd = connect_to(faultproxy_port(proxy));
	ck_assert_uint_ge(round_trip(fd, "shaped"), 60);

	/* Cut closes the shaped connection and refuses the next; garbage answers at once, at
	 * loopback speed; the shaping is still there once the link passes again. */
	ck_assert_int_eq(faultproxy_set_mode(proxy, FAULTPROXY_CUT, 0), 0);
	size_t got = 0;
	ck_assert_int_eq(exchange(fd, NULL, 0, 0, NULL, 1, &got, 2000), ENDING_EOF);
	close(fd);
	ck_assert_int_eq(faultproxy_set_mode(proxy, FAULTPROXY_GARBAGE, 1 << 20), 0);
	fd = connect_to(faultproxy_port(proxy));
	uint64_t started = now_ms();
	ck_assert_int_eq(exchange(fd, NULL, 0, 1, NULL, 1 << 20, &got, 5000), ENDING_DATA);
	ck_assert_uint_lt(now_ms() - started, 2000); /* 8 s at the 1 Mbit/s of the shaping */
	close(fd);
	ck_assert_int_eq(faultproxy_set_mode(proxy, FAULTPROXY_PASS, 0), 0);
	fd = connect_to(faultproxy_port(proxy));
	ck_assert_uint_ge(round_trip(fd, "shaped again"), 60);
	close(fd);
	faultproxy_stop(proxy);
	echo_stop(&echo);
}
END_TEST

static Suite *faultproxy_suite(void)
{
	Suite *suite = suite_create("faultproxy");
	TCase *modes = tcase_create("modes");
	tcase_set_timeout(modes, 30);
	tcase_add_test(modes, test_pass_forwards_both_ways_and_the_half_close);
	tcase_add_test(modes, test_delay_holds_each_direction);
	tcase_add_test(modes, test_cut_closes_open_connections_and_refuses_new_ones);
	tcase_add_test(modes, test_reset_sends_rst);
	tcase_add_test(modes, test_blackhole_never_answers_and_never_reaches_the_upstream);
	tcase_add_test(modes, test_garbage_answers_ten_megabytes_of_random_bytes);
	tcase_add_test(modes, test_bounds_parameters_retarget_and_clean_stop);
	suite_add_tcase(suite, modes);
	TCase *shaping = tcase_create("shaping");
	tcase_set_timeout(shaping, 60);
	tcase_add_test(shaping, test_shaping_holds_each_chunk_between_delay_and_delay_plus_jitter);
	tcase_add_test(shaping, test_the_same_seed_draws_the_same_jitter);
	tcase_add_test(shaping, test_jitter_never_reorders_bytes);
	tcase_add_test(shaping, test_bandwidth_cap_bounds_a_transfer);
	tcase_add_test(shaping, test_parallel_connections_share_the_cap);
	tcase_add_test(shaping, test_fault_modes_win_over_shaping);
	suite_add_tcase(suite, shaping);
	return suite;
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	SRunner *runner = srunner_create(faultproxy_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	curl_global_cleanup();
	return failures ? 1 : 0;
}
