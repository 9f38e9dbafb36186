/*
 * check_http_guard.c: the front door over raw loopback sockets. Every ambiguous or malformed
 * framing of RFC 9112 gets exactly one JSON error, the connection closed after it, and nothing
 * stored, whether it is the first request of a connection or a later one; a request head or
 * body that trickles is cut off at its deadline however slowly it trickles, and one that comes in
 * many pieces within it is judged on all of them; hundreds of slow connections from many source
 * addresses do not lock a legitimate client out, nor stop a registration from committing; refusals are logged
 * as aggregate counts, never with an address.
 *
 * These are not timing tests: each waits for something that either happens or, without the
 * guard, never happens at all (a trickling connection closing), with a generous bound.
 */
#include "http_fixture.h"

#include "server/http/framing.h"
#include "server/http/guard.h"
#include "server/http/routes.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>

static uint64_t monotonic_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

/* A TCP connection to the fixture from source (an IPv4 literal; NULL: any). */
static int raw_connect(struct fixture *f, const char *source)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(fd, 0);
	if (source) {
		struct sockaddr_in local = {.sin_family = AF_INET};
		ck_assert_int_eq(inet_pton(AF_INET, source, &local.sin_addr), 1);
		ck_assert_msg(bind(fd, (struct sockaddr *)&local, sizeof local) == 0, "bind %s: %s", source,
		              strerror(errno));
	}
	struct sockaddr_in server = {.sin_family = AF_INET, .sin_port = htons((uint16_t)f->port)};
	inet_pton(AF_INET, "127.0.0.1", &server.sin_addr);
	ck_assert_msg(connect(fd, (struct sockaddr *)&server, sizeof server) == 0, "connect: %s",
	              strerror(errno));
	return fd;
}

static void raw_send(int fd, const char *text, size_t len)
{
	ck_assert_int_eq(send(fd, text, len, MSG_NOSIGNAL), (ssize_t)len);
}

/* Reads into out until the server closes (returns 1) or wait_ms pass without it (returns 0). */
static int raw_read_until_closed(int fd, struct buffer *out, int wait_ms)
{
	uint64_t deadline = monotonic_ms() + (uint64_t)wait_ms;
	for (;;) {
		uint64_t now = monotonic_ms();
		if (now >= deadline)
			return 0;
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, (int)(deadline - now)) <= 0)
			continue;
		char chunk[4096];
		ssize_t n = recv(fd, chunk, sizeof chunk, 0);
		if (n <= 0)
			return 1;
		ck_assert_int_eq(buffer_append(out, chunk, (size_t)n), 0);
	}
}

static size_t count_occurrences(const struct buffer *b, const char *needle)
{
	size_t count = 0, len = strlen(needle);
	for (size_t i = 0; b->len >= len && i <= b->len - len; i++)
		if (memcmp(b->data + i, needle, len) == 0)
			count++;
	return count;
}

/* Waits for the start of an answer on fd and returns its first bytes (static storage). */
static const char *answer_of(int fd)
{
	static char text[1024];
	struct pollfd p = {.fd = fd, .events = POLLIN};
	text[0] = 0;
	if (poll(&p, 1, 10000) != 1)
		return "(no answer in 10 s)";
	ssize_t n = recv(fd, text, sizeof text - 1, 0);
	if (n < 0)
		snprintf(text, sizeof text, "(%s)", strerror(errno));
	else
		text[n] = 0;
	return n == 0 ? "(closed without an answer)" : text;
}

/* One answer, with status and the JSON error code, and then the connection closed. */
static void expect_one_closing_error(const char *what, struct buffer *answer, int closed, unsigned status,
                                     const char *code)
{
	char status_line[64], error[96];
	snprintf(status_line, sizeof status_line, "HTTP/1.1 %u ", status);
	snprintf(error, sizeof error, "{\"error\":\"%s\",", code);
	ck_assert_int_eq(buffer_append(answer, "", 1), 0);
	ck_assert_msg(closed, "%s: the connection stayed open after: %s", what, answer->data);
	ck_assert_msg(count_occurrences(answer, "\r\nContent-Type: ") == 1, "%s: not exactly one answer: %s",
	              what, answer->data);
	ck_assert_msg(strncmp((const char *)answer->data, status_line, strlen(status_line)) == 0, "%s: %s",
	              what, answer->data);
	ck_assert_msg(strstr((const char *)answer->data, "Connection: close\r\n"), "%s: %s", what,
	              answer->data);
	ck_assert_msg(strstr((const char *)answer->data, "Content-Type: application/json\r\n"), "%s: %s",
	              what, answer->data);
	ck_assert_msg(strstr((const char *)answer->data, error), "%s: %s", what, answer->data);
}

struct hostile {
	const char *what;
	const char *head; /* %s: the body's length, when the case carries the registration */
	unsigned status;
	const char *code;
	int head_alone; /* 1: the head is sent with nothing behind it (no body, no next request) */
};

static const struct hostile hostile_requests[] = {
    {"Content-Length and chunked",
     "POST /v1/registrations HTTP/1.1\r\nHost: a\r\nContent-Length: %zu\r\nTransfer-Encoding: "
     "chunked\r\n\r\n",
     400, "bad_request", 0},
    {"two Content-Lengths",
     "POST /v1/registrations HTTP/1.1\r\nHost: a\r\nContent-Length: %zu\r\nContent-Length: 3\r\n\r\n", 400,
     "bad_request", 0},
    {"gzip, chunked",
     "POST /v1/registrations HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501,
     "not_implemented", 0},
    {"xchunked", "POST /v1/registrations HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: xchunked\r\n\r\n", 501,
     "not_implemented", 0},
    {"Content-Length -1", "POST /v1/registrations HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", 400,
     "bad_request", 0},
    {"Content-Length +10", "POST /v1/registrations HTTP/1.1\r\nHost: a\r\nContent-Length: +10\r\n\r\n", 400,
     "bad_request", 0},
    {"Content-Length 0x10", "POST /v1/registrations HTTP/1.1\r\nHost: a\r\nContent-Length: 0x10\r\n\r\n", 400,
     "bad_request", 0},
    {"Content-Length 1e3", "POST /v1/registrations HTTP/1.1\r\nHost: a\r\nContent-Length: 1e3\r\n\r\n", 400,
     "bad_request", 0},
    {"empty Content-Length", "POST /v1/registrations HTTP/1.1\r\nHost: a\r\nContent-Length: \r\n\r\n", 400,
     "bad_request", 0},
    /* A length is a number however large (413 past the route's bound, before the body is
     * read); only what is not a number is malformed. */
    {"Content-Length past 2^64",
     "POST /v1/registrations HTTP/1.1\r\nHost: a\r\nContent-Length: 18446744073709551617\r\n\r\n", 413,
     "body_too_large", 0},
    {"Content-Length of 40 digits",
     "POST /v1/registrations HTTP/1.1\r\nHost: a\r\nContent-Length: "
     "9999999999999999999999999999999999999999\r\n\r\n",
     413, "body_too_large", 0},
    /* libmicrohttpd reads 2^64 - 1 as "length unknown". */
    {"a length of 2^64 - 1",
     "POST /v1/registrations HTTP/1.1\r\nHost: a\r\nContent-Length: 18446744073709551615\r\n\r\n", 413,
     "body_too_large", 0},
    {"a length of 2^63",
     "POST /v1/registrations HTTP/1.1\r\nHost: a\r\nContent-Length: 9223372036854775808\r\n\r\n", 413,
     "body_too_large", 0},
    {"a length of 2^63 - 1 on a GET",
     "GET /v1/health HTTP/1.1\r\nHost: a\r\nContent-Length: 9223372036854775807\r\n\r\n", 413,
     "body_too_large", 0},
    {"a length past the route's bound",
     "POST /v1/registrations HTTP/1.1\r\nHost: a\r\nContent-Length: 1000000\r\n\r\n", 413, "body_too_large",
     0},
    {"no Host", "GET /v1/health HTTP/1.1\r\n\r\n", 400, "bad_request", 0},
    /* A target is a path, or an absolute http(s) URI naming one (RFC 9112 3.2). */
    {"an absolute target of another scheme", "GET ftp://a/v1/health HTTP/1.1\r\nHost: a\r\n\r\n", 400,
     "bad_request", 0},
    {"an absolute target with userinfo", "GET http://u@a/v1/health HTTP/1.1\r\nHost: a\r\n\r\n", 400,
     "bad_request", 0},
    {"an absolute target without a host", "GET http:///v1/health HTTP/1.1\r\nHost: a\r\n\r\n", 400,
     "bad_request", 0},
    {"the asterisk form", "OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n", 400, "bad_request", 0},
    {"the authority form", "CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n", 400, "bad_request", 0},
    {"two Hosts", "GET /v1/health HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, "bad_request", 0},
    {"space before a colon", "GET /v1/health HTTP/1.1\r\nHost: a\r\nAccept : */*\r\n\r\n", 400, "bad_request",
     0},
    {"POST without a length", "POST /v1/registrations HTTP/1.1\r\nHost: a\r\n\r\n", 411, "length_required",
     0},
    {"a length on a line after a bare LF",
     "POST /v1/registrations HTTP/1.1\r\nHost: a\r\nX-A: y\nContent-Length: %zu\r\n\r\n", 400, "bad_request",
     0},
    {"a length folded onto a line (obs-fold)",
     "POST /v1/registrations HTTP/1.1\r\nHost: a\r\nContent-Length: %zu\r\nX-A: a\r\n Content-Length: "
     "3\r\n\r\n",
     400, "bad_request", 0},
    {"a request line ending in a bare LF",
     "POST /v1/registrations HTTP/1.1\nHost: a\r\nContent-Length: %zu\r\n\r\n", 400, "bad_request", 0},
    {"a last line ending in a bare LF",
     "POST /v1/registrations HTTP/1.1\r\nHost: a\r\nContent-Length: %zu\n\r\n", 400, "bad_request", 0},
    {"a blank line that is a bare LF",
     "POST /v1/registrations HTTP/1.1\r\nHost: a\r\nContent-Length: %zu\r\n\n", 400, "bad_request", 0},
    {"bare LFs only", "GET /v1/health HTTP/1.1\nHost: a\n\n", 400, "bad_request", 0},
    {"a bare CR in a field", "GET /v1/health HTTP/1.1\r\nHost: a\r\nX-A: a\rb\r\n\r\n", 400, "bad_request",
     0},
    /* libmicrohttpd parses a head as soon as its blank line is in; what follows it in memory is
     * then whatever came with it, or nothing yet. */
    {"a GET's last line ending in a bare LF, nothing behind it", "GET /v1/health HTTP/1.1\r\nHost: a\n\r\n",
     400, "bad_request", 1},
    {"a GET's blank line a bare LF, nothing behind it", "GET /v1/health HTTP/1.1\r\nHost: a\r\n\n", 400,
     "bad_request", 1},
    {"an HTTP/1.0 head of two bare LFs, nothing behind it", "GET /v1/health HTTP/1.0\n\n", 400, "bad_request",
     1},
    {"a POST's last line ending in a bare LF, its body not sent yet",
     "POST /v1/registrations HTTP/1.1\r\nHost: a\r\nContent-Length: %zu\n\r\n", 400, "bad_request", 1},
    {"a POST's blank line a bare LF, its body not sent yet",
     "POST /v1/registrations HTTP/1.1\r\nHost: a\r\nContent-Length: %zu\r\n\n", 400, "bad_request", 1},
};

/* A hostile head carrying a real signed registration, then a pipelined request behind it; or
 * the head alone. */
static void build_hostile(const struct hostile *h, const struct buffer *note, struct buffer *out)
{
	/* The case's head, with the body's length where it says "%zu". */
	char length[32];
	snprintf(length, sizeof length, "%zu", note->len);
	buffer_init(out);
	const char *mark = strstr(h->head, "%zu");
	if (mark) {
		ck_assert_int_eq(buffer_append(out, h->head, (size_t)(mark - h->head)), 0);
		ck_assert_int_eq(buffer_append_string(out, length), 0);
		ck_assert_int_eq(buffer_append_string(out, mark + 3), 0);
	} else {
		ck_assert_int_eq(buffer_append_string(out, h->head), 0);
	}
	if (h->head_alone)
		return;
	ck_assert_int_eq(buffer_append(out, note->data, note->len), 0);
	ck_assert_int_eq(buffer_append_string(out, "GET /v1/health HTTP/1.1\r\nHost: a\r\n\r\n"), 0);
}

START_TEST(test_hostile_framing_first_request)
{
	struct fixture f;
	fixture_open(&f, 0);
	struct registration r;
	struct buffer note;
	make_registration(&f, 1, "mix", &f.provider, &r);
	sign(&r, &f.provider, &note);
	for (size_t i = 0; i < sizeof hostile_requests / sizeof hostile_requests[0]; i++) {
		const struct hostile *h = &hostile_requests[i];
		struct buffer request_bytes, answer;
		build_hostile(h, &note, &request_bytes);
		buffer_init(&answer);
		int fd = raw_connect(&f, NULL);
		raw_send(fd, (const char *)request_bytes.data, request_bytes.len);
		int closed = raw_read_until_closed(fd, &answer, 5000);
		expect_one_closing_error(h->what, &answer, closed, h->status, h->code);
		close(fd);
		buffer_free(&answer);
		buffer_free(&request_bytes);
		ck_assert_msg(sequence_of(&f, r.service_id) == 0, "%s: the registration was stored", h->what);
	}
	/* The same registration, framed honestly, is accepted: the refusals were about framing. */
	struct response response;
	post(&f, &note, &response);
	ck_assert_int_eq(response.status, 202);
	response_free(&response);
	buffer_free(&note);
	registration_clear(&r);
	fixture_close(&f);
}
END_TEST

START_TEST(test_hostile_framing_later_request)
{
	/* The guard judges a connection's first head; later heads of a kept-alive connection are
	 * judged by the access handler on libmicrohttpd's parse. libmicrohttpd answers a malformed
	 * Content-Length itself before any handler runs, so those cases are first-request only
	 * (docs/operating.md). */
	struct fixture f;
	fixture_open(&f, 0);
	struct registration r;
	struct buffer note;
	make_registration(&f, 2, "mix", &f.provider, &r);
	sign(&r, &f.provider, &note);
	const char *first = "GET /v1/health HTTP/1.1\r\nHost: a\r\n\r\n";
	for (size_t i = 0; i < sizeof hostile_requests / sizeof hostile_requests[0]; i++) {
		const struct hostile *h = &hostile_requests[i];
		if (strstr(h->what, "Content-Length ") || strstr(h->what, "empty Content-Length"))
			continue;
		struct buffer request_bytes, answer;
		build_hostile(h, &note, &request_bytes);
		buffer_init(&answer);
		int fd = raw_connect(&f, NULL);
		raw_send(fd, first, strlen(first));
		/* The first answer comes, and the connection stays open for the next request. */
		const char *answer_text = answer_of(fd);
		ck_assert_msg(strncmp(answer_text, "HTTP/1.1 200 ", 13) == 0 &&
		                  !strstr(answer_text, "Connection: close"),
		              "%s", answer_text);
		raw_send(fd, (const char *)request_bytes.data, request_bytes.len);
		int closed = raw_read_until_closed(fd, &answer, 5000);
		expect_one_closing_error(h->what, &answer, closed, h->status, h->code);
		close(fd);
		buffer_free(&answer);
		buffer_free(&request_bytes);
		ck_assert_msg(sequence_of(&f, r.service_id) == 0, "%s: the registration was stored", h->what);
	}
	buffer_free(&note);
	registration_clear(&r);
	fixture_close(&f);
}
END_TEST

START_TEST(test_absolute_form_later_request)
{
	/* A target in absolute form is taken on a kept-alive connection too (libmicrohttpd's parse
	 * there, not the guard's), under the rules of paths. */
	struct fixture f;
	fixture_open(&f, 0);
	int fd = raw_connect(&f, NULL);
	const char *requests[] = {"GET /v1/health HTTP/1.1\r\nHost: a\r\n\r\n",
	                          "GET http://dirauth.example/v1/health HTTP/1.1\r\nHost: b\r\n\r\n",
	                          "GET HTTPS://b:8443/v1/health?x=1 HTTP/1.1\r\nHost: a\r\n\r\n",
	                          "GET http://a/v1/h%65alth HTTP/1.1\r\nHost: a\r\n\r\n",
	                          "GET http://a HTTP/1.1\r\nHost: a\r\n\r\n"};
	const char *expected[] = {"HTTP/1.1 200 ", "HTTP/1.1 200 ", "HTTP/1.1 200 ", "HTTP/1.1 404 ",
	                          "HTTP/1.1 404 "};
	for (size_t i = 0; i < sizeof requests / sizeof requests[0]; i++) {
		raw_send(fd, requests[i], strlen(requests[i]));
		const char *answer_text = answer_of(fd);
		ck_assert_msg(strncmp(answer_text, expected[i], strlen(expected[i])) == 0 &&
		                  !strstr(answer_text, "Connection: close"),
		              "%s: %s", requests[i], answer_text);
	}
	close(fd);
	fixture_close(&f);
}
END_TEST

/* Sends text one byte every interval_ms until the server closes; returns how long that took,
 * or 0 if it did not close within limit_ms. */
static uint64_t trickle(struct fixture *f, const char *text, int interval_ms, int limit_ms)
{
	int fd = raw_connect(f, NULL);
	uint64_t start = monotonic_ms();
	size_t len = strlen(text);
	for (size_t i = 0;; i = (i + 1) % len) {
		if (monotonic_ms() - start > (uint64_t)limit_ms) {
			close(fd);
			return 0;
		}
		if (send(fd, text + i, 1, MSG_NOSIGNAL) != 1)
			break;
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, interval_ms) == 1) {
			char chunk[512];
			if (recv(fd, chunk, sizeof chunk, 0) <= 0)
				break;
		}
	}
	close(fd);
	return monotonic_ms() - start;
}

START_TEST(test_trickling_is_cut_off)
{
	struct fixture f;
	fixture_open_with(&f, 0,
	                  "http: { threads: 2, header_timeout_seconds: 1, body_timeout_seconds: 1, "
	                  "connection_timeout_seconds: 30, log_interval_seconds: 1 }");
	/* The idle timeout (30 s) never fires: a byte comes every 200 ms. */
	uint64_t head =
	    trickle(&f, "GET /v1/health HTTP/1.1\r\nHost: a\r\nX-Padding: aaaaaaaaaaaaaaaaaaaa", 200, 15000);
	ck_assert_msg(head > 0, "a trickling request head kept its connection");
	/* A head sent at once, then a body that trickles. */
	int fd = raw_connect(&f, NULL);
	const char *post_head = "POST /v1/registrations HTTP/1.1\r\nHost: a\r\nContent-Length: 4000\r\n\r\n";
	raw_send(fd, post_head, strlen(post_head));
	uint64_t start = monotonic_ms();
	int closed = 0;
	while (!closed && monotonic_ms() - start < 15000) {
		if (send(fd, "x", 1, MSG_NOSIGNAL) != 1)
			break;
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, 200) == 1) {
			char chunk[512];
			closed = recv(fd, chunk, sizeof chunk, 0) <= 0;
		}
	}
	ck_assert_msg(monotonic_ms() - start < 15000, "a trickling body kept its connection");
	close(fd);
	/* A later request head on a kept-alive connection has its deadline too. */
	fd = raw_connect(&f, NULL);
	const char *first = "GET /v1/health HTTP/1.1\r\nHost: a\r\n\r\n";
	raw_send(fd, first, strlen(first));
	struct buffer answer;
	buffer_init(&answer);
	start = monotonic_ms();
	while (monotonic_ms() - start < 15000) {
		if (send(fd, "G", 1, MSG_NOSIGNAL) != 1)
			break;
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, 200) == 1) {
			char chunk[512];
			ssize_t n = recv(fd, chunk, sizeof chunk, 0);
			if (n <= 0)
				break;
		}
	}
	ck_assert_msg(monotonic_ms() - start < 15000, "a trickling second head kept its connection");
	close(fd);
	buffer_free(&answer);
	/* Counted in an aggregate line, without an address. */
	char *log = NULL;
	for (int i = 0; i < 50; i++) {
		free(log);
		log = read_log(&f);
		if (strstr(log, "head_timeout") && strstr(log, "body_timeout"))
			break;
		test_sleep_ms(100);
	}
	ck_assert_msg(strstr(log, "dirauthd: http: in the last") && strstr(log, "head_timeout") &&
	                  strstr(log, "body_timeout"),
	              "%s", log);
	ck_assert_msg(!strstr(log, "127.0.0."), "%s", log);
	free(log);
	fixture_close(&f);
}
END_TEST

/* A reload (http_server_reconfigure) shortens the head deadline of a running server: a head that
 * trickles is cut off within seconds, where the limit it started with would keep it 30 s. */
START_TEST(test_a_reload_changes_the_deadlines)
{
	struct fixture f;
	fixture_open_with(&f, 0,
	                  "http: { threads: 2, header_timeout_seconds: 30, body_timeout_seconds: 30, "
	                  "connection_timeout_seconds: 60, log_interval_seconds: 1 }");
	struct config reloaded = *f.config; /* a shallow copy: only its http section is read */
	reloaded.http.header_timeout_seconds = 1;
	http_server_reconfigure(f.http, &reloaded);
	uint64_t head =
	    trickle(&f, "GET /v1/health HTTP/1.1\r\nHost: a\r\nX-Padding: aaaaaaaaaaaaaaaaaaaa", 200, 10000);
	ck_assert_msg(head > 0, "the reloaded head deadline was not applied");
	fixture_close(&f);
}
END_TEST

/* Sends bytes in pieces of piece bytes, pause_ms apart, then reads until the server closes. */
static int send_in_pieces(int fd, const uint8_t *bytes, size_t len, size_t piece, int pause_ms,
                          struct buffer *answer)
{
	for (size_t at = 0; at < len; at += piece) {
		size_t n = len - at < piece ? len - at : piece;
		if (send(fd, bytes + at, n, MSG_NOSIGNAL) != (ssize_t)n)
			break;
		test_sleep_ms(pause_ms);
	}
	return raw_read_until_closed(fd, answer, 5000);
}

START_TEST(test_head_in_pieces)
{
	/* A head that comes in many segments is judged on all of them together, whichever way the
	 * guard keeps what it has seen, and the bytes after it reach the handler intact. */
	struct fixture f;
	fixture_open(&f, 0);
	struct buffer answer;
	buffer_init(&answer);
	const char *get = "GET /v1/health HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n";
	int fd = raw_connect(&f, NULL);
	int closed = send_in_pieces(fd, (const uint8_t *)get, strlen(get), 3, 5, &answer);
	close(fd);
	ck_assert_int_eq(buffer_append(&answer, "", 1), 0);
	ck_assert_msg(closed && strncmp((const char *)answer.data, "HTTP/1.1 200 ", 13) == 0, "%s",
	              answer.data);
	ck_assert_msg(count_occurrences(&answer, "HTTP/1.1 ") == 1, "%s", answer.data);

	/* A registration whose head and body come seven bytes at a time is stored. */
	struct registration r;
	struct buffer note, bytes;
	make_registration(&f, 3, "mix", &f.provider, &r);
	sign(&r, &f.provider, &note);
	char head[160];
	snprintf(head, sizeof head,
	         "POST /v1/registrations HTTP/1.1\r\nHost: a\r\nConnection: close\r\n"
	         "Content-Length: %zu\r\n\r\n",
	         note.len);
	buffer_init(&bytes);
	ck_assert_int_eq(buffer_append_string(&bytes, head), 0);
	ck_assert_int_eq(buffer_append(&bytes, note.data, note.len), 0);
	buffer_reset(&answer);
	fd = raw_connect(&f, NULL);
	closed = send_in_pieces(fd, bytes.data, bytes.len, 7, 2, &answer);
	close(fd);
	ck_assert_int_eq(buffer_append(&answer, "", 1), 0);
	ck_assert_msg(closed && strncmp((const char *)answer.data, "HTTP/1.1 202 ", 13) == 0, "%s",
	              answer.data);
	ck_assert_msg(sequence_of(&f, r.service_id) == 1, "the registration sent in pieces was not stored");

	/* A refusal that only the last pieces show. */
	const char *bad = "GET /v1/health HTTP/1.1\r\nHost: a\r\nAccept : */*\r\n\r\n";
	buffer_reset(&answer);
	fd = raw_connect(&f, NULL);
	closed = send_in_pieces(fd, (const uint8_t *)bad, strlen(bad), 4, 5, &answer);
	close(fd);
	expect_one_closing_error("space before a colon, in pieces", &answer, closed, 400, "bad_request");

	/* A head that grows past HTTP_HEAD_MAX in pieces without ending. */
	buffer_reset(&bytes);
	ck_assert_int_eq(buffer_append_string(&bytes, "GET /v1/health HTTP/1.1\r\nHost: a\r\nX-Padding: "),
	                 0);
	while (bytes.len < HTTP_HEAD_MAX + 1000)
		ck_assert_int_eq(buffer_append_string(&bytes, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"), 0);
	buffer_reset(&answer);
	fd = raw_connect(&f, NULL);
	closed = send_in_pieces(fd, bytes.data, bytes.len, 700, 2, &answer);
	close(fd);
	expect_one_closing_error("a head past the limit, in pieces", &answer, closed, 431,
	                         "headers_too_large");

	buffer_free(&bytes);
	buffer_free(&note);
	buffer_free(&answer);
	registration_clear(&r);
	fixture_close(&f);
}
END_TEST

START_TEST(test_slow_crowd_does_not_lock_out)
{
	/* 300 connections trickling from 20 source addresses, more than the pending queue holds and
	 * more than 20 x the per-address limit: a client on another address is still served and a
	 * registration still commits. */
	enum { CROWD = 300, SOURCES = 20 };
	struct fixture f;
	fixture_open_with(
	    &f, 0,
	    "http: { threads: 2, max_connections: 200, max_connections_per_ip: 8, "
	    "max_pending_connections: 128, header_timeout_seconds: 30, log_interval_seconds: 1 }");
	int crowd[CROWD];
	for (int i = 0; i < CROWD; i++) {
		char source[32];
		snprintf(source, sizeof source, "127.0.0.%d", 2 + i % SOURCES);
		crowd[i] = raw_connect(&f, source);
		raw_send(crowd[i], "GET /v1/hea", 11);
	}
	for (int round = 0; round < 5; round++) {
		for (int i = 0; i < CROWD; i++)
			send(crowd[i], "l", 1, MSG_NOSIGNAL);
		struct response response;
		request(&f, "GET", "/v1/health", NULL, 0, 0, NULL, &response);
		ck_assert_int_eq(response.status, 200);
		response_free(&response);
	}
	struct registration r;
	struct buffer note;
	struct response response;
	make_registration(&f, 3, "mix", &f.provider, &r);
	sign(&r, &f.provider, &note);
	post(&f, &note, &response);
	ck_assert_msg(response.status == 202, "%ld %s", response.status, response.body.data);
	response_free(&response);
	ck_assert_uint_eq(sequence_of(&f, r.service_id), 1);
	buffer_free(&note);
	registration_clear(&r);
	for (int i = 0; i < CROWD; i++)
		close(crowd[i]);
	char *log = NULL;
	for (int i = 0; i < 50; i++) {
		free(log);
		log = read_log(&f);
		if (strstr(log, "pending_full"))
			break;
		test_sleep_ms(100);
	}
	ck_assert_msg(strstr(log, "pending_full"), "%s", log);
	ck_assert_msg(!strstr(log, "127.0.0."), "%s", log);
	free(log);
	fixture_close(&f);
}
END_TEST

START_TEST(test_idle_crowd_is_evicted)
{
	/* Kept-alive connections that sent one request and then wait, more than the connection
	 * limit allows: the longest waiting make room, and a new client is served. */
	enum { IDLE = 40 };
	struct fixture f;
	fixture_open_with(
	    &f, 0,
	    "http: { threads: 2, max_connections: 30, max_connections_per_ip: 30, "
	    "header_timeout_seconds: 60, connection_timeout_seconds: 60, log_interval_seconds: 1 }");
	int idle[IDLE];
	const char *get = "GET /v1/health HTTP/1.1\r\nHost: a\r\n\r\n";
	for (int i = 0; i < IDLE; i++) {
		idle[i] = raw_connect(&f, NULL);
		raw_send(idle[i], get, strlen(get));
		struct pollfd p = {.fd = idle[i], .events = POLLIN};
		poll(&p, 1, 2000);
	}
	struct response response;
	request(&f, "GET", "/v1/health", NULL, 0, 0, NULL, &response);
	ck_assert_int_eq(response.status, 200);
	response_free(&response);
	char *log = NULL;
	for (int i = 0; i < 50; i++) {
		free(log);
		log = read_log(&f);
		if (strstr(log, "crowded") || strstr(log, "not_admitted"))
			break;
		test_sleep_ms(100);
	}
	ck_assert_msg(strstr(log, "crowded"), "%s", log);
	free(log);
	for (int i = 0; i < IDLE; i++)
		close(idle[i]);
	fixture_close(&f);
}
END_TEST

/* Waits until the guard holds pending connections whose first head is not complete. */
static void wait_pending(struct fixture *f, size_t pending)
{
	size_t now = 0, waiting, admitted;
	for (int i = 0; i < 500; i++) {
		http_guard_connection_counts(f->http->guard, &now, &waiting, &admitted);
		if (now == pending)
			return;
		test_sleep_ms(10);
	}
	ck_abort_msg("the guard holds %zu pending connections, not %zu", now, pending);
}

/* A connection of a client that sends its request once the guard has accepted it, so that the
 * guard judges its head at that moment. */
static int connect_and_send(struct fixture *f, const char *text)
{
	int fd = raw_connect(f, NULL);
	wait_pending(f, 1);
	raw_send(fd, text, strlen(text));
	wait_pending(f, 0);
	return fd;
}

/* Sends a whole vote POST of body on a new connection and returns the answer's first bytes
 * (static storage); the connection is closed. */
static const char *post_vote(struct fixture *f, const char *body)
{
	char request[256];
	int fd = raw_connect(f, NULL);
	int len = snprintf(request, sizeof request,
	                   "POST /v1/mix/votes HTTP/1.1\r\nHost: a\r\nContent-Length: %zu\r\n\r\n%s",
	                   strlen(body), body);
	raw_send(fd, request, (size_t)len);
	const char *answer = answer_of(fd);
	close(fd);
	return answer;
}

START_TEST(test_vote_uploads_are_bounded)
{
	/* A vote's body may be large, so no more are received at once than there are peers (one for
	 * an authority alone); the place is free again as soon as a vote is answered, so a sender
	 * whose votes follow one another is never refused. */
	struct fixture f;
	fixture_open(&f, 0);
	for (int i = 0; i < 200; i++) {
		const char *answer = post_vote(&f, "not a vote");
		ck_assert_msg(strncmp(answer, "HTTP/1.1 404 ", 13) == 0, "vote %d: %s", i, answer);
	}
	/* One vote being received: another is refused 503 unavailable and its connection closed. */
	int receiving = raw_connect(&f, NULL);
	const char *head = "POST /v1/mix/votes HTTP/1.1\r\nHost: a\r\nContent-Length: 20\r\n\r\nnot a vote";
	raw_send(receiving, head, strlen(head));
	/* Until the server has taken the first vote's place (it does as it reads its body), another
	 * is answered 404; each attempt waits for its answer, however slow the build, and a 503 is
	 * then read to its close. The attempts go on for 20 s (a sanitized build on a loaded machine
	 * is slow to read the first body), within the 30 s the first body is given. */
	int refused = 0;
	uint64_t give_up = monotonic_ms() + 20000;
	for (int i = 0; !refused && monotonic_ms() < give_up; i++) {
		char request[160];
		int fd = raw_connect(&f, NULL);
		int len = snprintf(
		    request, sizeof request,
		    "POST /v1/mix/votes HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nnot a vote");
		raw_send(fd, request, (size_t)len);
		const char *first = answer_of(fd);
		if (strncmp(first, "HTTP/1.1 503 ", 13) == 0) {
			struct buffer answer;
			buffer_init(&answer);
			ck_assert_int_eq(buffer_append(&answer, first, strlen(first)), 0);
			int closed = raw_read_until_closed(fd, &answer, 10000);
			expect_one_closing_error("a second vote at once", &answer, closed, 503,
			                         "unavailable");
			buffer_free(&answer);
			refused = 1;
		} else {
			ck_assert_msg(strncmp(first, "HTTP/1.1 404 ", 13) == 0, "attempt %d: %s", i, first);
			test_sleep_ms(5);
		}
		close(fd);
	}
	ck_assert_msg(refused, "a second vote was never refused while one was being received");
	/* The first ends and is answered; the place is free again. */
	raw_send(receiving, " at all!!!", 10);
	const char *answer = answer_of(receiving);
	ck_assert_msg(strncmp(answer, "HTTP/1.1 404 ", 13) == 0, "%s", answer);
	close(receiving);
	answer = post_vote(&f, "not a vote");
	ck_assert_msg(strncmp(answer, "HTTP/1.1 404 ", 13) == 0, "%s", answer);
	fixture_close(&f);
}
END_TEST

START_TEST(test_eviction_waits_for_the_close)
{
	/* Shutting an idle connection down does not free its place at once: libmicrohttpd counts it
	 * until its thread has closed it. Here that thread is held (it waits for a signer that takes
	 * the question and does not answer), so nothing closes meanwhile: new clients must wait for
	 * room, not be handed over past libmicrohttpd's limits (which closes them unanswered). */
	enum { IDLE = 8, NEW = 3 };
	struct fixture f;
	fixture_open_with(&f, 0,
	                  "http: { threads: 1, max_connections: 10, max_connections_per_ip: 10, "
	                  "header_timeout_seconds: 60, connection_timeout_seconds: 60 }");
	const char *get = "GET /v1/health HTTP/1.1\r\nHost: a\r\n\r\n";
	int idle[IDLE], fresh[NEW];
	for (int i = 0; i < IDLE; i++) {
		idle[i] = connect_and_send(&f, get);
		ck_assert_msg(strncmp(answer_of(idle[i]), "HTTP/1.1 200 ", 13) == 0, "idle %d", i);
	}

	/* The signer replaced by one that takes a question and never answers. The first question
	 * after the real one stops finds it gone, so the next one reaches the silent one. */
	signer_fixture_stop(&f.signer_process);
	struct response response;
	request(&f, "GET", "/v1/certificates", NULL, 0, 0, NULL, &response);
	ck_assert_int_eq(response.status, 503);
	response_free(&response);
	int silent = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un address = {.sun_family = AF_UNIX};
	ck_assert_uint_lt(strlen(f.signer_process.socket_path), sizeof address.sun_path);
	memcpy(address.sun_path, f.signer_process.socket_path, strlen(f.signer_process.socket_path) + 1);
	unlink(address.sun_path);
	ck_assert_int_eq(bind(silent, (struct sockaddr *)&address, sizeof address), 0);
	ck_assert_int_eq(chmod(address.sun_path, 0600), 0);
	ck_assert_int_eq(listen(silent, 4), 0);
	const char *certificates = "GET /v1/certificates HTTP/1.1\r\nHost: a\r\n\r\n";
	int held = connect_and_send(&f, certificates);
	struct pollfd p = {.fd = silent, .events = POLLIN};
	ck_assert_int_eq(poll(&p, 1, 5000), 1);
	int question = accept(silent, NULL, NULL);
	ck_assert_int_ge(question, 0);

	/* libmicrohttpd's only thread now waits for the signer, for up to its 5 s timeout. Eight
	 * idle connections and the held one make nine: nine tenths. Each new client has an idle one
	 * shut down, which stays counted until the thread is back. */
	for (int i = 0; i < NEW; i++)
		fresh[i] = connect_and_send(&f, get);

	/* The thread is back: the held request is answered, the shut ones closed, and every new
	 * client served. */
	close(question);
	ck_assert_msg(strncmp(answer_of(held), "HTTP/1.1 503 ", 13) == 0, "the held request");
	for (int i = 0; i < NEW; i++) {
		const char *answer = answer_of(fresh[i]);
		ck_assert_msg(strncmp(answer, "HTTP/1.1 200 ", 13) == 0, "new client %d: %s", i, answer);
	}
	uint64_t counts[GUARD_REASON_COUNT];
	http_guard_counts(f.http->guard, counts);
	ck_assert_uint_ge(counts[GUARD_CLOSED_CROWDED], 2);
	ck_assert_uint_eq(counts[GUARD_CLOSED_NOT_ADMITTED], 0);

	close(silent);
	unlink(address.sun_path);
	signer_fixture_start(&f.signer_process);
	for (int i = 0; i < NEW; i++)
		close(fresh[i]);
	for (int i = 0; i < IDLE; i++)
		close(idle[i]);
	close(held);
	fixture_close(&f);
}
END_TEST

/* Every reason has one row: a name that is a word of the aggregate line and a label of
 * dirauth_http_refused_total alike ([a-z_]+, no two the same), and a refusal's framing error
 * counts under its own reason. The metrics serve a line for each, labelled by that name. */
START_TEST(test_every_reason_is_named_once)
{
	for (int r = 0; r < GUARD_REASON_COUNT; r++) {
		const struct http_guard_reason_row *row = http_guard_reason_row((enum http_guard_reason)r);
		ck_assert_ptr_nonnull(row);
		ck_assert_msg(row->name && row->name[0], "reason %d has no name", r);
		ck_assert_msg(strspn(row->name, "abcdefghijklmnopqrstuvwxyz_") == strlen(row->name),
		              "reason %d's name %s is not a metric label", r, row->name);
		ck_assert_str_eq(http_guard_reason_name((enum http_guard_reason)r), row->name);
		for (int other = 0; other < r; other++)
			ck_assert_str_ne(http_guard_reason_row((enum http_guard_reason)other)->name,
			                 row->name);
		if (row->refusal != API_ERROR_NONE)
			ck_assert_int_eq(http_guard_reason_of(row->refusal), r);
	}
	ck_assert_ptr_null(http_guard_reason_row(GUARD_REASON_COUNT));
	ck_assert_str_eq(http_guard_reason_name(GUARD_REASON_COUNT), "unknown");
	ck_assert_int_eq(http_guard_reason_of(API_ERROR_MALFORMED), GUARD_REFUSED_BAD_REQUEST);

	struct fixture f;
	fixture_open(&f, 0);
	struct response response;
	request(&f, "GET", "/v1/metrics", NULL, 0, 0, NULL, &response);
	ck_assert_int_eq(response.status, 200);
	const char *text = (const char *)response.body.data;
	for (int r = 0; r < GUARD_REASON_COUNT; r++) {
		char line[128];
		snprintf(line, sizeof line, "\ndirauth_http_refused_total{reason=\"%s\"} ",
		         http_guard_reason_name((enum http_guard_reason)r));
		ck_assert_msg(strstr(text, line), "no metrics line %s", line + 1);
	}
	response_free(&response);
	fixture_close(&f);
}
END_TEST

static Suite *guard_suite(void)
{
	Suite *suite = suite_create("http_guard");
	TCase *tc = tcase_create("http_guard");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_every_reason_is_named_once);
	tcase_add_test(tc, test_hostile_framing_first_request);
	tcase_add_test(tc, test_hostile_framing_later_request);
	tcase_add_test(tc, test_absolute_form_later_request);
	tcase_add_test(tc, test_trickling_is_cut_off);
	tcase_add_test(tc, test_a_reload_changes_the_deadlines);
	tcase_add_test(tc, test_head_in_pieces);
	tcase_add_test(tc, test_slow_crowd_does_not_lock_out);
	tcase_add_test(tc, test_idle_crowd_is_evicted);
	tcase_add_test(tc, test_eviction_waits_for_the_close);
	tcase_add_test(tc, test_vote_uploads_are_bounded);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	SRunner *runner = srunner_create(guard_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	curl_global_cleanup();
	return failures ? 1 : 0;
}
