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
 * The whole file runs in about 5 s.
 */
#include "test_support.h"

#include "schema/error.h"
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

static void echo_start(struct echo *echo)
{
	memset(echo, 0, sizeof *echo);
	echo->listener = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert(echo->listener >= 0);
	struct sockaddr_in address;
	memset(&address, 0, sizeof address);
	address.sin_family = AF_INET;
	address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t len = sizeof address;
	ck_assert(bind(echo->listener, (struct sockaddr *)&address, sizeof address) == 0);
	ck_assert(listen(echo->listener, 64) == 0);
	ck_assert(getsockname(echo->listener, (struct sockaddr *)&address, &len) == 0);
	echo->port = ntohs(address.sin_port);
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
	ck_assert_uint_lt(round_trip(fd, "before"), 200);

	/* 300 ms each way: a round trip takes at least 600 ms, on the open connection and a new one. */
	ck_assert_int_eq(faultproxy_set_mode(proxy, FAULTPROXY_DELAY, 300), 0);
	uint64_t delayed = round_trip(fd, "held");
	ck_assert_uint_ge(delayed, 600);
	ck_assert_uint_lt(delayed, 3000);
	int other = connect_to(faultproxy_port(proxy));
	ck_assert_uint_ge(round_trip(other, "held too"), 600);

	/* Back to pass: at once again, and nothing was lost or reordered on the way. */
	ck_assert_int_eq(faultproxy_set_mode(proxy, FAULTPROXY_PASS, 0), 0);
	ck_assert_uint_lt(round_trip(fd, "after"), 200);
	ck_assert_uint_lt(round_trip(other, "after too"), 200);
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
