/*
 * check_net.c: net/, the HTTP client of every outgoing request, against real servers on loopback.
 *
 * The server is libmicrohttpd, started inside the test with handlers that answer what a test
 * needs on demand: a large body with and without a Content-Length, a redirect, a gzip body, 503
 * and 429 answers that stop after a count, a 404, an echo of the posted body and of the request's
 * headers. Each path counts its requests, so that a test sees how many attempts reached the
 * server. A timeout is shown against a socket that listens and never answers, a refused connection
 * against a port nobody listens on. TLS is shown against the same server with a self-signed
 * certificate made in the test with OpenSSL: refused without the certificate as a trust anchor,
 * accepted with it, refused again under a host name the certificate does not carry. Several
 * threads run requests at once, as dirauthd's peers will. A server's error answer is read
 * strictly (net/error_answer.h): every malformed object refused, and a body that only looks like
 * one gives no code to dirauthctl or the peer client.
 *
 * The pool (net/pool.h) is shown against the same server, which counts the connections it
 * accepts and the requests it serves at once (a thread per connection, idle ones closed after a
 * second): many requests over one connection, never more at once than the bound, a connection
 * the server closed replaced, and every guarantee above kept. TLS session resumption is shown
 * against a small TLS server written here with OpenSSL, which counts full and resumed handshakes.
 */
#include "net/client.h"
#include "net/error_answer.h"
#include "net/pool.h"
#include "base/buffer.h"
#include "compress/compress.h"
#include "base/error.h"
#include "test_http_server.h"
#include "test_support.h"

#include <arpa/inet.h>
#include <check.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BIG_BYTES        (64 * 1024)
#define MAX_PATHS        16
#define HELLO            "hello\n"
#define NOT_FOUND_JSON   "{\"error\":\"not_found\",\"detail\":\"no such document.\"}"
#define UNAVAILABLE_JSON "{\"error\":\"unavailable\"}"
#define TLS_SUBJECT_IP   "IP:127.0.0.1"
#define SLOW_MS          150 /* how long /slow takes */
#define IDLE_TIMEOUT_S   1   /* the server closes a connection idle this long */

struct path_count {
	char path[64];
	unsigned count;
};

struct test_server {
	struct MHD_Daemon *daemon;
	unsigned port;
	pthread_mutex_t lock;
	struct path_count counts[MAX_PATHS];
	unsigned failures_left; /* /flaky and /busy fail this many times, then answer 200 */
	int saw_accept_encoding;
	unsigned connections;   /* accepted */
	unsigned in_flight;     /* /slow requests being served */
	unsigned max_in_flight; /* the most at once */
};

static struct test_server server;
static uint8_t big[BIG_BYTES];
static struct buffer gzipped;

static unsigned count_of(const char *path)
{
	unsigned count = 0;

	pthread_mutex_lock(&server.lock);
	for (size_t i = 0; i < MAX_PATHS; i++) {
		if (strcmp(server.counts[i].path, path) == 0)
			count = server.counts[i].count;
	}
	pthread_mutex_unlock(&server.lock);
	return count;
}

static void count_request(const char *path, struct MHD_Connection *connection)
{
	pthread_mutex_lock(&server.lock);
	for (size_t i = 0; i < MAX_PATHS; i++) {
		if (server.counts[i].path[0] == '\0')
			snprintf(server.counts[i].path, sizeof(server.counts[i].path), "%s", path);
		if (strcmp(server.counts[i].path, path) == 0) {
			server.counts[i].count++;
			break;
		}
	}
	if (MHD_lookup_connection_value(connection, MHD_HEADER_KIND, "Accept-Encoding") != NULL)
		server.saw_accept_encoding = 1;
	pthread_mutex_unlock(&server.lock);
}

/* A body of unannounced length, so that it goes out chunked. */
static ssize_t stream_big(void *context, uint64_t position, char *out, size_t max)
{
	size_t left;

	(void)context;
	if (position >= BIG_BYTES)
		return MHD_CONTENT_READER_END_OF_STREAM;
	left = BIG_BYTES - (size_t)position;
	if (left > max)
		left = max;
	memcpy(out, big + position, left);
	return (ssize_t)left;
}

/* Fails while failures_left lasts, with status. */
static int failing(void)
{
	int fail;

	pthread_mutex_lock(&server.lock);
	fail = server.failures_left > 0;
	if (fail)
		server.failures_left--;
	pthread_mutex_unlock(&server.lock);
	return fail;
}

static enum MHD_Result handle(void *context, struct MHD_Connection *connection, const char *url,
                              const char *method, const char *version, const char *upload_data,
                              size_t *upload_data_size, void **request_context)
{
	struct buffer *posted = NULL;
	enum MHD_Result early;

	(void)context;
	(void)version;
	/* The body arrives over several calls; answer once it is all there. */
	if (!test_http_server_body(request_context, upload_data, upload_data_size, &posted, &early))
		return early;
	count_request(url, connection);
	if (strcmp(url, "/ok") == 0)
		return test_http_server_answer(connection, 200, HELLO, strlen(HELLO), "Content-Type",
		                               "text/plain");
	if (strcmp(url, "/echo") == 0 && strcmp(method, "POST") == 0)
		return test_http_server_answer(connection, 200, posted->data, posted->len, NULL, NULL);
	if (strcmp(url, "/agent") == 0) {
		const char *agent = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, "User-Agent");
		return test_http_server_answer(connection, 200, agent != NULL ? agent : "",
		                               agent != NULL ? strlen(agent) : 0, NULL, NULL);
	}
	if (strcmp(url, "/big") == 0)
		return test_http_server_answer(connection, 200, big, sizeof(big), NULL, NULL);
	if (strcmp(url, "/big-chunked") == 0) {
		struct MHD_Response *response =
		    MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, stream_big, NULL, NULL);
		enum MHD_Result result = MHD_queue_response(connection, 200, response);
		MHD_destroy_response(response);
		return result;
	}
	if (strcmp(url, "/redirect") == 0)
		return test_http_server_answer(connection, 302, "", 0, "Location", "/ok");
	if (strcmp(url, "/gzip") == 0)
		return test_http_server_answer(connection, 200, gzipped.data, gzipped.len, "Content-Encoding",
		                               "gzip");
	if (strcmp(url, "/flaky") == 0)
		return failing() ? test_http_server_answer(connection, 503, UNAVAILABLE_JSON,
		                                           strlen(UNAVAILABLE_JSON), NULL, NULL)
		                 : test_http_server_answer(connection, 200, HELLO, strlen(HELLO), NULL, NULL);
	if (strcmp(url, "/busy") == 0)
		return failing() ? test_http_server_answer(connection, 429, "", 0, "Retry-After", "1")
		                 : test_http_server_answer(connection, 200, HELLO, strlen(HELLO), NULL, NULL);
	if (strcmp(url, "/always503") == 0)
		return test_http_server_answer(connection, 503, "", 0, NULL, NULL);
	if (strcmp(url, "/close") == 0)
		return test_http_server_answer(connection, 200, HELLO, strlen(HELLO), "Connection", "close");
	if (strcmp(url, "/slow") == 0) {
		struct timespec pause = {.tv_sec = 0, .tv_nsec = SLOW_MS * 1000000L};
		pthread_mutex_lock(&server.lock);
		if (++server.in_flight > server.max_in_flight)
			server.max_in_flight = server.in_flight;
		pthread_mutex_unlock(&server.lock);
		nanosleep(&pause, NULL);
		pthread_mutex_lock(&server.lock);
		server.in_flight--;
		pthread_mutex_unlock(&server.lock);
		return test_http_server_answer(connection, 200, HELLO, strlen(HELLO), NULL, NULL);
	}
	return test_http_server_answer(connection, 404, NOT_FOUND_JSON, strlen(NOT_FOUND_JSON), NULL, NULL);
}

static void count_connection(void *context, struct MHD_Connection *connection, void **socket_context,
                             enum MHD_ConnectionNotificationCode code)
{
	(void)context;
	(void)connection;
	(void)socket_context;
	if (code != MHD_CONNECTION_NOTIFY_STARTED)
		return;
	pthread_mutex_lock(&server.lock);
	server.connections++;
	pthread_mutex_unlock(&server.lock);
}

/* One of the server's counters, read under its lock. */
static unsigned server_counter(const unsigned *counter)
{
	unsigned count;

	pthread_mutex_lock(&server.lock);
	count = *counter;
	pthread_mutex_unlock(&server.lock);
	return count;
}

static unsigned connections_accepted(void)
{
	return server_counter(&server.connections);
}

/* Starts the server on a free loopback port, over TLS with key and certificate when given: a
 * thread per connection, so that slow requests run at once. */
static void server_start(const char *key_pem, const char *certificate_pem)
{
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION;
	struct sockaddr_in address;
	const union MHD_DaemonInfo *info;

	memset(&server, 0, sizeof(server));
	pthread_mutex_init(&server.lock, NULL);
	memset(&address, 0, sizeof(address));
	address.sin_family = AF_INET;
	address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (key_pem != NULL) {
		flags |= MHD_USE_TLS;
		server.daemon = MHD_start_daemon(
		    flags, 0, NULL, NULL, handle, NULL, MHD_OPTION_SOCK_ADDR, &address,
		    MHD_OPTION_NOTIFY_COMPLETED, test_http_server_request_done, NULL,
		    MHD_OPTION_NOTIFY_CONNECTION, count_connection, NULL, MHD_OPTION_CONNECTION_TIMEOUT,
		    (unsigned)IDLE_TIMEOUT_S, MHD_OPTION_HTTPS_MEM_KEY, key_pem, MHD_OPTION_HTTPS_MEM_CERT,
		    certificate_pem, MHD_OPTION_END);
	} else {
		server.daemon =
		    MHD_start_daemon(flags, 0, NULL, NULL, handle, NULL, MHD_OPTION_SOCK_ADDR, &address,
		                     MHD_OPTION_NOTIFY_COMPLETED, test_http_server_request_done, NULL,
		                     MHD_OPTION_NOTIFY_CONNECTION, count_connection, NULL,
		                     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)IDLE_TIMEOUT_S, MHD_OPTION_END);
	}
	ck_assert_ptr_nonnull(server.daemon);
	info = MHD_get_daemon_info(server.daemon, MHD_DAEMON_INFO_BIND_PORT);
	ck_assert_ptr_nonnull(info);
	server.port = info->port;
	ck_assert_uint_ne(server.port, 0);
}

static void server_stop(void)
{
	MHD_stop_daemon(server.daemon);
	pthread_mutex_destroy(&server.lock);
}

static void setup(void)
{
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)('a' + i % 26);
	buffer_init(&gzipped);
	ck_assert_int_eq(compress_encode(ENCODING_GZIP, (const uint8_t *)HELLO, strlen(HELLO), &gzipped), 0);
	server_start(NULL, NULL);
}

static void teardown(void)
{
	server_stop();
	buffer_free(&gzipped);
}

static void url_of(const char *path, char *out, size_t cap)
{
	snprintf(out, cap, "http://127.0.0.1:%u%s", server.port, path);
}

/* A GET of path with the given response bound, into response. */
/* A GET of path through pool (NULL: none), ending within total_timeout_ms (0: the default). */
static int get_through(struct net_pool *pool, const char *path, size_t max_bytes, uint32_t total_timeout_ms,
                       const struct net_retry *retry, struct net_response *response)
{
	struct net_request request;
	char url[128];

	memset(&request, 0, sizeof(request));
	url_of(path, url, sizeof(url));
	request.method = "GET";
	request.url = url;
	request.max_response_bytes = max_bytes;
	request.total_timeout_ms = total_timeout_ms;
	request.pool = pool;
	if (retry != NULL)
		request.retry = *retry;
	return net_perform(&request, response);
}

static int get(const char *path, size_t max_bytes, const struct net_retry *retry,
               struct net_response *response)
{
	return get_through(NULL, path, max_bytes, 0, retry, response);
}

/* A socket that listens (the kernel accepts into its backlog) and never answers. */
static int silent_socket(char *url, size_t cap)
{
	unsigned port;
	int fd = test_http_server_silent(4, &port);
	snprintf(url, cap, "http://127.0.0.1:%u/", port);
	return fd;
}

static uint64_t elapsed_ms(const struct timespec *since)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)(now.tv_sec - since->tv_sec) * 1000u + (uint64_t)(now.tv_nsec / 1000000) -
	       (uint64_t)(since->tv_nsec / 1000000);
}

START_TEST(test_get_and_post)
{
	static const char *const headers[] = {"Content-Type: text/plain", NULL};
	static const char note[] = "a posted note\n";
	struct net_response response;
	struct net_request request;
	char url[128];

	net_response_init(&response);
	ck_assert_int_eq(get("/ok", 1024, NULL, &response), 0);
	ck_assert_int_eq(response.status, 200);
	ck_assert_uint_eq(response.body.len, strlen(HELLO));
	ck_assert_int_eq(memcmp(response.body.data, HELLO, strlen(HELLO)), 0);
	ck_assert_str_eq(response.content_type, "text/plain");
	ck_assert_uint_eq(response.attempts, 1);
	/* A POST carries its body; the default User-Agent is the project's. */
	memset(&request, 0, sizeof(request));
	url_of("/echo", url, sizeof(url));
	request.method = "POST";
	request.url = url;
	request.headers = headers;
	request.body = (const uint8_t *)note;
	request.body_len = strlen(note);
	request.max_response_bytes = 1024;
	ck_assert_int_eq(net_perform(&request, &response), 0);
	ck_assert_int_eq(response.status, 200);
	ck_assert_uint_eq(response.body.len, strlen(note));
	ck_assert_int_eq(memcmp(response.body.data, note, strlen(note)), 0);
	ck_assert_int_eq(get("/agent", 1024, NULL, &response), 0);
	ck_assert_int_eq(buffer_append(&response.body, "", 1), 0);
	ck_assert_str_eq((const char *)response.body.data, NET_DEFAULT_USER_AGENT);
	/* A status is not a failure at this level. */
	ck_assert_int_eq(get("/missing", 1024, NULL, &response), 0);
	ck_assert_int_eq(response.status, 404);
	net_response_free(&response);
}
END_TEST

/* The cap holds whether the server announces the length (refused before any byte) or not (the
 * write callback cuts the transfer). */
START_TEST(test_body_cap_aborts)
{
	struct net_response response;
	int rc;

	net_response_init(&response);
	rc = get(_i == 0 ? "/big" : "/big-chunked", BIG_BYTES - 1, NULL, &response);
	ck_assert_int_eq(rc, DIRAUTH_ERR_BOUNDS);
	ck_assert_str_eq(response.error, "response larger than 65535 bytes");
	ck_assert_uint_lt(response.body.len, BIG_BYTES);
	/* Exactly the cap is allowed. */
	ck_assert_int_eq(get(_i == 0 ? "/big" : "/big-chunked", BIG_BYTES, NULL, &response), 0);
	ck_assert_uint_eq(response.body.len, BIG_BYTES);
	ck_assert_int_eq(memcmp(response.body.data, big, BIG_BYTES), 0);
	net_response_free(&response);
}
END_TEST

START_TEST(test_redirect_not_followed)
{
	struct net_response response;

	net_response_init(&response);
	ck_assert_int_eq(get("/redirect", 1024, NULL, &response), 0);
	ck_assert_int_eq(response.status, 302);
	ck_assert_uint_eq(response.body.len, 0);
	ck_assert_uint_eq(count_of("/redirect"), 1);
	ck_assert_uint_eq(count_of("/ok"), 0);
	net_response_free(&response);
}
END_TEST

/* The bytes as served: curl neither asks for an encoding nor decodes one. */
START_TEST(test_content_decoding_never_enabled)
{
	struct net_response response;

	net_response_init(&response);
	ck_assert_int_eq(get("/gzip", 1024, NULL, &response), 0);
	ck_assert_int_eq(response.status, 200);
	ck_assert_str_eq(response.content_encoding, "gzip");
	ck_assert_uint_eq(response.body.len, gzipped.len);
	ck_assert_int_eq(memcmp(response.body.data, gzipped.data, gzipped.len), 0);
	pthread_mutex_lock(&server.lock);
	ck_assert_int_eq(server.saw_accept_encoding, 0);
	pthread_mutex_unlock(&server.lock);
	net_response_free(&response);
}
END_TEST

START_TEST(test_only_http_and_https)
{
	static const char *const refused[] = {"ftp://127.0.0.1/x", "file:///etc/passwd", "127.0.0.1:80/x",
	                                      "gopher://x", ""};
	struct net_response response;
	struct net_request request;

	net_response_init(&response);
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		memset(&request, 0, sizeof(request));
		request.method = "GET";
		request.url = refused[i];
		request.max_response_bytes = 1024;
		ck_assert_int_eq(net_perform(&request, &response), DIRAUTH_ERR_CONFIG);
		ck_assert_str_ne(response.error, "");
	}
	/* Nor another method, nor more attempts than allowed. */
	memset(&request, 0, sizeof(request));
	request.method = "PUT";
	request.url = "http://127.0.0.1:1/";
	ck_assert_int_eq(net_perform(&request, &response), DIRAUTH_ERR_CONFIG);
	request.method = "GET";
	request.retry.attempts = NET_RETRY_MAX_ATTEMPTS + 1;
	ck_assert_int_eq(net_perform(&request, &response), DIRAUTH_ERR_CONFIG);
	ck_assert_uint_eq(response.attempts, 0);
	net_response_free(&response);
}
END_TEST

START_TEST(test_connection_refused_is_unavailable)
{
	struct net_retry retry = {.attempts = 3, .base_delay_ms = 10, .max_delay_ms = 20};
	struct net_response response;
	struct net_request request;
	char url[64];

	net_response_init(&response);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/ok", test_free_port());
	memset(&request, 0, sizeof(request));
	request.method = "GET";
	request.url = url;
	request.max_response_bytes = 1024;
	ck_assert_int_eq(net_perform(&request, &response), DIRAUTH_ERR_UNAVAILABLE);
	ck_assert_uint_eq(response.attempts, 1);
	/* A transport failure is retried, and the last error says how often it was tried. */
	request.retry = retry;
	ck_assert_int_eq(net_perform(&request, &response), DIRAUTH_ERR_UNAVAILABLE);
	ck_assert_uint_eq(response.attempts, 3);
	ck_assert_ptr_nonnull(strstr(response.error, "(after 3 attempts)"));
	net_response_free(&response);
}
END_TEST

/* A server that accepts the connection (the kernel does, from the listen backlog) and never
 * answers: the total timeout ends the exchange. */
START_TEST(test_total_timeout)
{
	struct net_response response;
	struct net_request request;
	struct timespec start;
	char url[64];
	int fd = silent_socket(url, sizeof(url));
	int rc;

	net_response_init(&response);
	memset(&request, 0, sizeof(request));
	request.method = "GET";
	request.url = url;
	request.max_response_bytes = 1024;
	request.total_timeout_ms = 300;
	clock_gettime(CLOCK_MONOTONIC, &start);
	rc = net_perform(&request, &response);
	ck_assert_int_eq(rc, DIRAUTH_ERR_UNAVAILABLE);
	ck_assert_uint_ge(elapsed_ms(&start), 250);
	ck_assert_uint_lt(elapsed_ms(&start), 5000);
	/* Retries do not stretch it: waits and attempts all fit in the one total. */
	request.retry.attempts = NET_RETRY_MAX_ATTEMPTS;
	request.retry.base_delay_ms = 50;
	clock_gettime(CLOCK_MONOTONIC, &start);
	rc = net_perform(&request, &response);
	ck_assert_int_eq(rc, DIRAUTH_ERR_UNAVAILABLE);
	ck_assert_uint_lt(elapsed_ms(&start), 5000);
	ck_assert_uint_lt(response.attempts, NET_RETRY_MAX_ATTEMPTS);
	net_response_free(&response);
	close(fd);
}
END_TEST

START_TEST(test_retry_succeeds_after_5xx_and_429)
{
	struct net_retry retry = {.attempts = 4, .base_delay_ms = 10, .max_delay_ms = 40};
	struct net_response response;

	net_response_init(&response);
	pthread_mutex_lock(&server.lock);
	server.failures_left = 3;
	pthread_mutex_unlock(&server.lock);
	ck_assert_int_eq(get("/flaky", 1024, &retry, &response), 0);
	ck_assert_int_eq(response.status, 200);
	ck_assert_uint_eq(response.attempts, 4);
	ck_assert_uint_eq(count_of("/flaky"), 4);
	ck_assert_uint_eq(response.body.len, strlen(HELLO));
	/* A server asking to slow down is tried again too. */
	pthread_mutex_lock(&server.lock);
	server.failures_left = 1;
	pthread_mutex_unlock(&server.lock);
	ck_assert_int_eq(get("/busy", 1024, &retry, &response), 0);
	ck_assert_int_eq(response.status, 200);
	ck_assert_uint_eq(count_of("/busy"), 2);
	net_response_free(&response);
}
END_TEST

START_TEST(test_retry_stops_at_the_limit)
{
	struct net_retry retry = {.attempts = 3, .base_delay_ms = 10, .max_delay_ms = 20};
	struct net_response response;

	net_response_init(&response);
	/* The last 5xx is the answer. */
	ck_assert_int_eq(get("/always503", 1024, &retry, &response), 0);
	ck_assert_int_eq(response.status, 503);
	ck_assert_uint_eq(response.attempts, 3);
	ck_assert_uint_eq(count_of("/always503"), 3);
	/* Without a retry asked for, one attempt. */
	ck_assert_int_eq(get("/always503", 1024, NULL, &response), 0);
	ck_assert_uint_eq(count_of("/always503"), 4);
	net_response_free(&response);
}
END_TEST

START_TEST(test_no_retry_on_4xx_or_bounds)
{
	struct net_retry retry = {.attempts = 5, .base_delay_ms = 10, .max_delay_ms = 20};
	struct net_response response;

	net_response_init(&response);
	ck_assert_int_eq(get("/missing", 1024, &retry, &response), 0);
	ck_assert_int_eq(response.status, 404);
	ck_assert_uint_eq(response.attempts, 1);
	ck_assert_uint_eq(count_of("/missing"), 1);
	/* An answer too large is the server's fault, not a passing failure. */
	ck_assert_int_eq(get("/big", 1024, &retry, &response), DIRAUTH_ERR_BOUNDS);
	ck_assert_uint_eq(count_of("/big"), 1);
	/* Nor on a redirect. */
	ck_assert_int_eq(get("/redirect", 1024, &retry, &response), 0);
	ck_assert_uint_eq(count_of("/redirect"), 1);
	net_response_free(&response);
}
END_TEST

START_TEST(test_backoff_grows_capped_and_jittered)
{
	struct net_retry retry = {.attempts = 5, .base_delay_ms = 100, .max_delay_ms = 1000};
	struct net_retry defaults = {.attempts = 5};
	static const uint32_t randoms[] = {0, 1, 12345, 0x7fffffff, 0xffffffff};
	uint32_t lowest = UINT32_MAX;
	uint32_t highest = 0;

	for (size_t r = 0; r < sizeof(randoms) / sizeof(randoms[0]); r++) {
		/* Retry n waits within [c / 2, c], c = 100 * 2^(n-1) up to 1000. */
		uint32_t first = net_backoff_delay_ms(&retry, 1, randoms[r]);
		uint32_t second = net_backoff_delay_ms(&retry, 2, randoms[r]);
		uint32_t late = net_backoff_delay_ms(&retry, 5, randoms[r]);
		uint32_t very_late = net_backoff_delay_ms(&retry, 1000, randoms[r]);
		ck_assert_uint_ge(first, 50);
		ck_assert_uint_le(first, 100);
		ck_assert_uint_ge(second, 100);
		ck_assert_uint_le(second, 200);
		ck_assert_uint_ge(late, 500);
		ck_assert_uint_le(late, 1000);
		ck_assert_uint_ge(very_late, 500);
		ck_assert_uint_le(very_late, 1000);
		lowest = first < lowest ? first : lowest;
		highest = first > highest ? first : highest;
		ck_assert_uint_le(net_backoff_delay_ms(&defaults, 1, randoms[r]), NET_DEFAULT_RETRY_BASE_MS);
		ck_assert_uint_le(net_backoff_delay_ms(&defaults, 30, randoms[r]), NET_DEFAULT_RETRY_MAX_MS);
	}
	/* The random value spreads the wait over the whole window. */
	ck_assert_uint_eq(lowest, 50);
	ck_assert_uint_gt(highest, lowest);
}
END_TEST

struct worker {
	unsigned ok;
};

static void *run_requests(void *context)
{
	struct worker *worker = context;
	struct net_response response;

	net_response_init(&response);
	for (int i = 0; i < 8; i++) {
		if (get("/ok", 1024, NULL, &response) == 0 && response.status == 200 &&
		    response.body.len == strlen(HELLO))
			worker->ok++;
	}
	net_response_free(&response);
	return NULL;
}

/* Several threads at once, each with its own requests. */
START_TEST(test_concurrent_requests)
{
	pthread_t threads[4];
	struct worker workers[4];

	memset(workers, 0, sizeof(workers));
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_create(&threads[i], NULL, run_requests, &workers[i]), 0);
	for (int i = 0; i < 4; i++) {
		pthread_join(threads[i], NULL);
		ck_assert_uint_eq(workers[i].ok, 8);
	}
	ck_assert_uint_eq(count_of("/ok"), 32);
}
END_TEST

START_TEST(test_describe_error)
{
	struct net_response response;
	char text[256];

	net_response_init(&response);
	ck_assert_int_eq(get("/missing", 1024, NULL, &response), 0);
	net_describe_error(&response, text, sizeof(text));
	ck_assert_str_eq(text, "HTTP 404: not_found: no such document.");
	ck_assert_int_eq(get("/always503", 1024, NULL, &response), 0);
	net_describe_error(&response, text, sizeof(text));
	ck_assert_str_eq(text, "HTTP 503: unexpected answer");
	net_response_free(&response);
}
END_TEST

/* ---- the pool ---- */

static unsigned in_flight(void)
{
	return server_counter(&server.in_flight);
}

/* Many requests, GET and POST, one connection: libcurl keeps it in the handle the pool keeps. */
START_TEST(test_pool_keeps_one_connection)
{
	static const char note[] = "a posted note\n";
	struct net_pool *pool = NULL;
	struct net_response response;
	struct net_request request;
	char url[128];

	ck_assert_int_eq(net_pool_new(NULL, &pool), 0);
	net_response_init(&response);
	for (unsigned i = 0; i < 5; i++) {
		ck_assert_int_eq(get_through(pool, "/ok", 1024, 0, NULL, &response), 0);
		ck_assert_int_eq(response.status, 200);
		ck_assert_uint_eq(response.connects, i == 0 ? 1 : 0);
	}
	memset(&request, 0, sizeof(request));
	url_of("/echo", url, sizeof(url));
	request.method = "POST";
	request.url = url;
	request.body = (const uint8_t *)note;
	request.body_len = strlen(note);
	request.max_response_bytes = 1024;
	request.pool = pool;
	ck_assert_int_eq(net_perform(&request, &response), 0);
	ck_assert_int_eq(response.status, 200);
	ck_assert_uint_eq(response.body.len, strlen(note));
	ck_assert_uint_eq(response.connects, 0);
	ck_assert_int_eq(get_through(pool, "/ok", 1024, 0, NULL, &response), 0);
	ck_assert_uint_eq(count_of("/ok"), 6);
	ck_assert_uint_eq(count_of("/echo"), 1);
	ck_assert_uint_eq(connections_accepted(), 1);
	/* Without a pool, a connection per request, as before. */
	ck_assert_int_eq(get("/ok", 1024, NULL, &response), 0);
	ck_assert_uint_eq(response.connects, 1);
	ck_assert_int_eq(get("/ok", 1024, NULL, &response), 0);
	ck_assert_uint_eq(connections_accepted(), 3);
	net_response_free(&response);
	net_pool_free(pool);
}
END_TEST

struct pooled_worker {
	struct net_pool *pool;
	const char *path;
	uint32_t timeout_ms;
	int rc;
	long status;
};

static void *run_pooled(void *context)
{
	struct pooled_worker *worker = context;
	struct net_response response;

	net_response_init(&response);
	worker->rc = get_through(worker->pool, worker->path, 1024, worker->timeout_ms, NULL, &response);
	worker->status = response.status;
	net_response_free(&response);
	return NULL;
}

/* Eight threads at once through a pool of two: never more than two requests at the server, over
 * two connections at most; a request beyond waits, or fails when its deadline comes first. */
START_TEST(test_pool_bound_holds)
{
	struct net_pool_options options = {.connections_per_origin = 2};
	struct net_pool *pool = NULL;
	pthread_t threads[8];
	struct pooled_worker workers[8];
	struct net_response response;
	struct timespec start;

	ck_assert_int_eq(net_pool_new(&options, &pool), 0);
	for (size_t i = 0; i < 8; i++) {
		workers[i] = (struct pooled_worker){.pool = pool, .path = "/slow", .timeout_ms = 20000};
		ck_assert_int_eq(pthread_create(&threads[i], NULL, run_pooled, &workers[i]), 0);
	}
	for (size_t i = 0; i < 8; i++) {
		pthread_join(threads[i], NULL);
		ck_assert_int_eq(workers[i].rc, 0);
		ck_assert_int_eq(workers[i].status, 200);
	}
	ck_assert_uint_eq(count_of("/slow"), 8);
	unsigned most = server_counter(&server.max_in_flight);
	ck_assert_uint_le(most, 2);
	ck_assert_uint_ge(most, 1);
	ck_assert_uint_le(connections_accepted(), 2);
	net_pool_free(pool);

	/* One connection, held by a slow request: a request with less time than it needs gives up
	 * without sending anything; one with time enough waits its turn. */
	options.connections_per_origin = 1;
	ck_assert_int_eq(net_pool_new(&options, &pool), 0);
	workers[0] = (struct pooled_worker){.pool = pool, .path = "/slow", .timeout_ms = 20000};
	ck_assert_int_eq(pthread_create(&threads[0], NULL, run_pooled, &workers[0]), 0);
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (in_flight() == 0 && elapsed_ms(&start) < 5000) {
		struct timespec pause = {.tv_sec = 0, .tv_nsec = 1000000L};
		nanosleep(&pause, NULL);
	}
	ck_assert_uint_eq(in_flight(), 1);
	net_response_init(&response);
	clock_gettime(CLOCK_MONOTONIC, &start);
	ck_assert_int_eq(get_through(pool, "/ok", 1024, 40, NULL, &response), DIRAUTH_ERR_UNAVAILABLE);
	ck_assert_uint_lt(elapsed_ms(&start), SLOW_MS);
	ck_assert_msg(strstr(response.error, "busy") != NULL, "%s", response.error);
	ck_assert_int_eq(response.status, 0);
	ck_assert_uint_eq(count_of("/ok"), 0);
	ck_assert_int_eq(get_through(pool, "/ok", 1024, 10000, NULL, &response), 0);
	ck_assert_int_eq(response.status, 200);
	pthread_join(threads[0], NULL);
	ck_assert_int_eq(workers[0].rc, 0);
	net_response_free(&response);
	net_pool_free(pool);
}
END_TEST

/* The server closes a kept connection, by saying so or by its idle timeout: the next request on
 * the pool opens another and succeeds, with no retry asked for. */
START_TEST(test_pool_replaces_closed_connections)
{
	struct net_pool *pool = NULL;
	struct net_response response;
	struct timespec pause = {.tv_sec = IDLE_TIMEOUT_S + 1, .tv_nsec = 200000000L};

	ck_assert_int_eq(net_pool_new(NULL, &pool), 0);
	net_response_init(&response);
	ck_assert_int_eq(get_through(pool, "/ok", 1024, 0, NULL, &response), 0);
	ck_assert_int_eq(get_through(pool, "/close", 1024, 0, NULL, &response), 0);
	ck_assert_int_eq(response.status, 200);
	ck_assert_uint_eq(response.connects, 0);
	ck_assert_int_eq(get_through(pool, "/ok", 1024, 0, NULL, &response), 0);
	ck_assert_int_eq(response.status, 200);
	ck_assert_uint_eq(response.connects, 1);
	ck_assert_uint_eq(response.attempts, 1);
	ck_assert_uint_eq(connections_accepted(), 2);
	nanosleep(&pause, NULL);
	ck_assert_int_eq(get_through(pool, "/ok", 1024, 0, NULL, &response), 0);
	ck_assert_int_eq(response.status, 200);
	ck_assert_uint_eq(response.attempts, 1);
	ck_assert_uint_eq(connections_accepted(), 3);
	ck_assert_uint_eq(count_of("/ok"), 3);
	net_response_free(&response);
	net_pool_free(pool);
}
END_TEST

/* Through a pool as without one: the caps, no redirect, bytes as served, the timeout, the retry,
 * the schemes; and a transfer cut at its cap leaves the pool usable. */
START_TEST(test_pool_keeps_the_guarantees)
{
	struct net_retry retry = {.attempts = 3, .base_delay_ms = 10, .max_delay_ms = 20};
	struct net_pool *pool = NULL;
	struct net_response response;
	struct net_request request;
	struct timespec start;
	char url[64];
	int fd;

	ck_assert_int_eq(net_pool_new(NULL, &pool), 0);
	net_response_init(&response);
	ck_assert_int_eq(get_through(pool, "/big", BIG_BYTES - 1, 0, NULL, &response), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(get_through(pool, "/big-chunked", BIG_BYTES - 1, 0, NULL, &response),
	                 DIRAUTH_ERR_BOUNDS);
	ck_assert_uint_lt(response.body.len, BIG_BYTES);
	ck_assert_int_eq(get_through(pool, "/big-chunked", BIG_BYTES, 0, NULL, &response), 0);
	ck_assert_uint_eq(response.body.len, BIG_BYTES);
	ck_assert_int_eq(get_through(pool, "/redirect", 1024, 0, NULL, &response), 0);
	ck_assert_int_eq(response.status, 302);
	ck_assert_uint_eq(count_of("/ok"), 0);
	ck_assert_int_eq(get_through(pool, "/gzip", 1024, 0, NULL, &response), 0);
	ck_assert_str_eq(response.content_encoding, "gzip");
	ck_assert_uint_eq(response.body.len, gzipped.len);
	pthread_mutex_lock(&server.lock);
	ck_assert_int_eq(server.saw_accept_encoding, 0);
	server.failures_left = 2;
	pthread_mutex_unlock(&server.lock);
	ck_assert_int_eq(get_through(pool, "/flaky", 1024, 0, &retry, &response), 0);
	ck_assert_int_eq(response.status, 200);
	ck_assert_uint_eq(response.attempts, 3);
	/* A silent server: the total timeout ends the exchange, the pool unharmed. */
	fd = silent_socket(url, sizeof(url));
	memset(&request, 0, sizeof(request));
	request.method = "GET";
	request.url = url;
	request.max_response_bytes = 1024;
	request.total_timeout_ms = 300;
	request.pool = pool;
	clock_gettime(CLOCK_MONOTONIC, &start);
	ck_assert_int_eq(net_perform(&request, &response), DIRAUTH_ERR_UNAVAILABLE);
	ck_assert_uint_ge(elapsed_ms(&start), 250);
	ck_assert_uint_lt(elapsed_ms(&start), 5000);
	close(fd);
	request.url = "ftp://127.0.0.1/x";
	ck_assert_int_eq(net_perform(&request, &response), DIRAUTH_ERR_CONFIG);
	ck_assert_int_eq(get_through(pool, "/ok", 1024, 0, NULL, &response), 0);
	ck_assert_int_eq(response.status, 200);
	net_response_free(&response);
	net_pool_free(pool);
	/* Bounds of the pool itself. */
	struct net_pool_options options = {.connections_per_origin = NET_POOL_CONNECTIONS_MAX + 1};
	ck_assert_int_eq(net_pool_new(&options, &pool), DIRAUTH_ERR_CONFIG);
	ck_assert_ptr_null(pool);
	options = (struct net_pool_options){.origins = NET_POOL_ORIGINS_MAX + 1};
	ck_assert_int_eq(net_pool_new(&options, &pool), DIRAUTH_ERR_CONFIG);
	net_pool_free(NULL);
}
END_TEST

/* A pool of one origin at a time: a second origin takes the first's place once nothing runs
 * there, and the first reconnects when asked again. */
START_TEST(test_pool_evicts_idle_origins)
{
	struct net_pool_options options = {.origins = 1};
	struct net_pool *pool = NULL;
	struct net_response response;
	struct net_request request;
	char url[64];

	ck_assert_int_eq(net_pool_new(&options, &pool), 0);
	net_response_init(&response);
	ck_assert_int_eq(get_through(pool, "/ok", 1024, 0, NULL, &response), 0);
	memset(&request, 0, sizeof(request));
	snprintf(url, sizeof(url), "http://localhost:%u/ok", server.port);
	request.method = "GET";
	request.url = url;
	request.max_response_bytes = 1024;
	request.pool = pool;
	if (net_perform(&request, &response) == 0) { /* localhost may resolve to ::1 only */
		ck_assert_int_eq(response.status, 200);
		ck_assert_uint_eq(response.connects, 1);
		ck_assert_int_eq(get_through(pool, "/ok", 1024, 0, NULL, &response), 0);
		ck_assert_uint_eq(response.connects, 1);
	}
	net_response_free(&response);
	net_pool_free(pool);
}
END_TEST

/* ---- the error answer ---- */

static int parse_error(const char *text, struct net_error_answer *out)
{
	return net_error_answer_parse((const uint8_t *)text, strlen(text), out);
}

START_TEST(test_error_answer)
{
	struct net_error_answer e;

	ck_assert_int_eq(
	    parse_error("{\"error\":\"conflicting_vote\",\"detail\":\"a different vote.\"}\n", &e), 0);
	ck_assert_str_eq(e.code, "conflicting_vote");
	ck_assert_str_eq(e.detail, "a different vote.");
	ck_assert_int_eq(
	    parse_error(" { \"detail\" : \"q\\\"\\n\\u00e9\xc3\xa9\" , \"error\" : \"x1\" } ", &e), 0);
	ck_assert_str_eq(e.code, "x1");
	ck_assert_str_eq(e.detail, "q\"????");
	ck_assert_int_eq(parse_error("{\"error\":\"unavailable\",\"other\":\"ignored\"}", &e), 0);
	ck_assert_str_eq(e.detail, "");

	static const char *const refused[] = {
	    "",
	    "{}",
	    "{\"detail\":\"no code\"}",
	    "{\"error\":\"Upper\"}",
	    "{\"error\":\"\"}",
	    "{\"error\":\"a-b\"}",
	    "{\"error\":\"to\\u006f\"}",
	    "{\"error\":\"x\",\"error\":\"y\"}",
	    "{\"error\":\"x\"} trailing",
	    "{\"error\":\"x\",}",
	    "{\"error\":1}",
	    "{\"error\":\"x\",\"n\":null}",
	    "{\"error\":\"x\",\"o\":{}}",
	    "{\"error\":\"x\"",
	    "{\"error\":\"x\",\"detail\":\"bad \\q escape\"}",
	    "{\"error\":\"x\",\"detail\":\"short \\u12\"}",
	    "{\"error\":\"x\",\"detail\":\"raw \n newline\"}",
	    "[\"error\"]",
	    "{\"error\":\"x\"}{}",
	};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		ck_assert_msg(parse_error(refused[i], &e) == DIRAUTH_ERR_SYNTAX, "accepted: %s", refused[i]);
	char long_code[128];
	memset(long_code, 0, sizeof(long_code));
	snprintf(long_code, sizeof(long_code), "{\"error\":\"%065d\"}", 0);
	ck_assert_int_eq(parse_error(long_code, &e), DIRAUTH_ERR_SYNTAX);
	snprintf(long_code, sizeof(long_code), "{\"error\":\"%064d\"}", 0);
	ck_assert_int_eq(parse_error(long_code, &e), 0);
	ck_assert_int_eq(net_error_answer_parse(NULL, 0, &e), DIRAUTH_ERR_SYNTAX);
}
END_TEST

/* What dirauthctl and dirauthd show and branch on, read from the same strict parse. */
static void answer_with(struct net_response *response, long status, const char *body)
{
	net_response_free(response);
	net_response_init(response);
	response->status = status;
	ck_assert_int_eq(buffer_append(&response->body, body, strlen(body)), 0);
}

START_TEST(test_error_code_and_description)
{
	struct net_response response;
	char code[8];
	char text[64];

	net_response_init(&response);
	answer_with(&response, 409, "{\"error\":\"replayed\",\"detail\":\"already\\nthere\"}");
	ck_assert_int_eq(net_error_code(&response, code, sizeof(code)), 1);
	ck_assert_str_eq(code, "replaye"); /* cut to the array */
	net_describe_error(&response, text, sizeof(text));
	ck_assert_str_eq(text, "HTTP 409: replayed: already?there");
	answer_with(&response, 507, "{\"error\":\"store_full\"}");
	net_describe_error(&response, text, sizeof(text));
	ck_assert_str_eq(text, "HTTP 507: store_full");
	/* Looks like an error object but is not one: no code is taken from it. */
	static const char *const not_objects[] = {
	    "{\"error\":\"replayed\",\"retry\":5}",
	    "<html>{\"error\":\"replayed\"}</html>",
	    "{\"error\":\"Replayed\"}",
	    "",
	};
	for (size_t i = 0; i < sizeof(not_objects) / sizeof(not_objects[0]); i++) {
		answer_with(&response, 502, not_objects[i]);
		ck_assert_int_eq(net_error_code(&response, code, sizeof(code)), 0);
		ck_assert_str_eq(code, "");
		net_describe_error(&response, text, sizeof(text));
		ck_assert_str_eq(text, "HTTP 502: unexpected answer");
	}
	net_response_free(&response);
}
END_TEST

/* A self-signed certificate for 127.0.0.1 and its key, in PEM, made here. */
static void make_certificate(char **key_pem, char **certificate_pem)
{
	EVP_PKEY *key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	X509 *certificate = X509_new();
	X509_NAME *name;
	X509_EXTENSION *extension;
	X509V3_CTX context;
	BIO *bio;
	char *data;
	long len;

	ck_assert_ptr_nonnull(key);
	ck_assert_ptr_nonnull(certificate);
	ck_assert_int_eq(X509_set_version(certificate, 2), 1);
	ck_assert_int_eq(ASN1_INTEGER_set(X509_get_serialNumber(certificate), 1), 1);
	ck_assert_ptr_nonnull(X509_gmtime_adj(X509_getm_notBefore(certificate), -3600));
	ck_assert_ptr_nonnull(X509_gmtime_adj(X509_getm_notAfter(certificate), 86400));
	ck_assert_int_eq(X509_set_pubkey(certificate, key), 1);
	name = X509_get_subject_name(certificate);
	ck_assert_int_eq(X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
	                                            (const unsigned char *)"dirauth test", -1, -1, 0),
	                 1);
	ck_assert_int_eq(X509_set_issuer_name(certificate, name), 1);
	X509V3_set_ctx(&context, certificate, certificate, NULL, NULL, 0);
	extension = X509V3_EXT_conf_nid(NULL, &context, NID_subject_alt_name, TLS_SUBJECT_IP);
	ck_assert_ptr_nonnull(extension);
	ck_assert_int_eq(X509_add_ext(certificate, extension, -1), 1);
	X509_EXTENSION_free(extension);
	extension = X509V3_EXT_conf_nid(NULL, &context, NID_basic_constraints, "critical,CA:TRUE");
	ck_assert_ptr_nonnull(extension);
	ck_assert_int_eq(X509_add_ext(certificate, extension, -1), 1);
	X509_EXTENSION_free(extension);
	ck_assert_int_gt(X509_sign(certificate, key, EVP_sha256()), 0);

	bio = BIO_new(BIO_s_mem());
	ck_assert_int_eq(PEM_write_bio_PrivateKey(bio, key, NULL, NULL, 0, NULL, NULL), 1);
	len = BIO_get_mem_data(bio, &data);
	*key_pem = strndup(data, (size_t)len);
	BIO_free(bio);
	bio = BIO_new(BIO_s_mem());
	ck_assert_int_eq(PEM_write_bio_X509(bio, certificate), 1);
	len = BIO_get_mem_data(bio, &data);
	*certificate_pem = strndup(data, (size_t)len);
	BIO_free(bio);
	ck_assert_ptr_nonnull(*key_pem);
	ck_assert_ptr_nonnull(*certificate_pem);
	X509_free(certificate);
	EVP_PKEY_free(key);
}

/* https: the peer's certificate and name are verified, against the system's anchors or the CA
 * file the request names. */
START_TEST(test_https_verifies_the_server)
{
	char directory[4096];
	char ca_path[4200];
	char url[128];
	char *key_pem = NULL;
	char *certificate_pem = NULL;
	struct net_response response;
	struct net_request request;
	int rc;

	if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
		fprintf(stderr, "check_net: libmicrohttpd without TLS, https test skipped\n");
		return;
	}
	make_certificate(&key_pem, &certificate_pem);
	test_make_tempdir(directory, sizeof(directory));
	snprintf(ca_path, sizeof(ca_path), "%s/ca.pem", directory);
	test_write_file(ca_path, certificate_pem, strlen(certificate_pem), 0644);
	server_stop();
	server_start(key_pem, certificate_pem);
	net_response_init(&response);
	memset(&request, 0, sizeof(request));
	snprintf(url, sizeof(url), "https://127.0.0.1:%u/ok", server.port);
	request.method = "GET";
	request.url = url;
	request.max_response_bytes = 1024;
	request.total_timeout_ms = 10000;
	/* Self-signed, so no system anchor vouches for it. */
	rc = net_perform(&request, &response);
	ck_assert_msg(rc == DIRAUTH_ERR_IO, "rc %d: %s", rc, response.error);
	ck_assert_int_eq(response.status, 0);
	ck_assert_uint_eq(count_of("/ok"), 0);
	/* With the certificate as the anchor, the same server is believed. */
	request.ca_file = ca_path;
	rc = net_perform(&request, &response);
	ck_assert_msg(rc == 0, "rc %d: %s", rc, response.error);
	ck_assert_int_eq(response.status, 200);
	ck_assert_uint_eq(count_of("/ok"), 1);
	/* The anchor vouches for 127.0.0.1 only: under another name the host check refuses. */
	snprintf(url, sizeof(url), "https://localhost:%u/ok", server.port);
	rc = net_perform(&request, &response);
	ck_assert_msg(rc != 0, "a certificate for 127.0.0.1 accepted for localhost");
	ck_assert_uint_eq(count_of("/ok"), 1);
	net_response_free(&response);
	test_remove_tree(directory);
	free(key_pem);
	free(certificate_pem);
}
END_TEST

/* ---- TLS session resumption, against a server that counts its handshakes ---- */

#define TLS_CONNECTIONS_MAX 8

struct tls_server {
	SSL_CTX *context;
	int listener;
	unsigned port;
	pthread_t acceptor;
	pthread_t workers[TLS_CONNECTIONS_MAX]; /* the acceptor's until it has been joined */
	size_t worker_count;
	pthread_mutex_t lock;
	pthread_cond_t changed;
	unsigned handshakes; /* completed */
	unsigned resumed;    /* of them, those that resumed a session */
	unsigned holding;    /* GET /hold requests waiting to be released */
	int released;
};

struct tls_connection {
	struct tls_server *server;
	int fd;
};

/* One connection: the handshake, counted, then GETs answered "hello" until the client leaves;
 * /close is answered with Connection: close, /hold only once the test releases it. */
static void *tls_serve(void *context)
{
	struct tls_connection *connection = context;
	struct tls_server *tls = connection->server;
	SSL *ssl = SSL_new(tls->context);
	char head[4096];
	size_t used = 0;

	if (ssl != NULL && SSL_set_fd(ssl, connection->fd) == 1 && SSL_accept(ssl) == 1) {
		pthread_mutex_lock(&tls->lock);
		tls->handshakes++;
		if (SSL_session_reused(ssl))
			tls->resumed++;
		pthread_mutex_unlock(&tls->lock);
		for (;;) {
			int n = SSL_read(ssl, head + used, (int)(sizeof(head) - 1 - used));
			char *end;
			if (n <= 0)
				break;
			used += (size_t)n;
			head[used] = '\0';
			end = strstr(head, "\r\n\r\n");
			if (end == NULL) {
				if (used == sizeof(head) - 1)
					break;
				continue;
			}
			int closing = strncmp(head, "GET /close ", 11) == 0;
			if (strncmp(head, "GET /hold ", 10) == 0) {
				pthread_mutex_lock(&tls->lock);
				tls->holding++;
				pthread_cond_broadcast(&tls->changed);
				while (!tls->released)
					pthread_cond_wait(&tls->changed, &tls->lock);
				pthread_mutex_unlock(&tls->lock);
			}
			const char *reply =
			    closing
			        ? "HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\n" HELLO
			        : "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\n" HELLO;
			if (SSL_write(ssl, reply, (int)strlen(reply)) <= 0 || closing)
				break;
			/* GETs have no body: what follows the head starts the next request. */
			used -= (size_t)(end + 4 - head);
			memmove(head, end + 4, used);
		}
		SSL_shutdown(ssl);
	}
	SSL_free(ssl);
	close(connection->fd);
	free(connection);
	return NULL;
}

static void *tls_accept(void *context)
{
	struct tls_server *tls = context;
	struct timeval patience = {.tv_sec = 10, .tv_usec = 0};

	for (;;) {
		int fd = accept(tls->listener, NULL, NULL);
		struct tls_connection *connection;
		if (fd < 0)
			break; /* the listener was shut down */
		connection = malloc(sizeof(*connection));
		if (connection == NULL || tls->worker_count == TLS_CONNECTIONS_MAX) {
			free(connection);
			close(fd);
			continue;
		}
		/* A client that never leaves does not keep the test waiting past this. */
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof(patience));
		connection->server = tls;
		connection->fd = fd;
		if (pthread_create(&tls->workers[tls->worker_count], NULL, tls_serve, connection) != 0) {
			close(fd);
			free(connection);
			continue;
		}
		tls->worker_count++;
	}
	return NULL;
}

/* Starts the server with the certificate and key files, at most TLS version max_version. */
static void tls_server_start(struct tls_server *tls, const char *certificate_path, const char *key_path,
                             int max_version)
{
	static const unsigned char session_context[] = "check_net";
	struct sockaddr_in address;
	socklen_t address_len = sizeof(address);

	memset(tls, 0, sizeof(*tls));
	pthread_mutex_init(&tls->lock, NULL);
	pthread_cond_init(&tls->changed, NULL);
	tls->context = SSL_CTX_new(TLS_server_method());
	ck_assert_ptr_nonnull(tls->context);
	ck_assert_int_eq(SSL_CTX_use_certificate_file(tls->context, certificate_path, SSL_FILETYPE_PEM), 1);
	ck_assert_int_eq(SSL_CTX_use_PrivateKey_file(tls->context, key_path, SSL_FILETYPE_PEM), 1);
	ck_assert_int_eq(SSL_CTX_set_max_proto_version(tls->context, max_version), 1);
	ck_assert_int_eq(
	    SSL_CTX_set_session_id_context(tls->context, session_context, sizeof(session_context) - 1), 1);
	tls->listener = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(tls->listener, 0);
	memset(&address, 0, sizeof(address));
	address.sin_family = AF_INET;
	address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(tls->listener, (struct sockaddr *)&address, sizeof(address)), 0);
	ck_assert_int_eq(listen(tls->listener, 16), 0);
	ck_assert_int_eq(getsockname(tls->listener, (struct sockaddr *)&address, &address_len), 0);
	tls->port = ntohs(address.sin_port);
	ck_assert_int_eq(pthread_create(&tls->acceptor, NULL, tls_accept, tls), 0);
}

static void tls_release(struct tls_server *tls)
{
	pthread_mutex_lock(&tls->lock);
	tls->released = 1;
	pthread_cond_broadcast(&tls->changed);
	pthread_mutex_unlock(&tls->lock);
}

/* Ends the server once its clients have left (their pools freed). */
static void tls_server_stop(struct tls_server *tls)
{
	tls_release(tls);
	shutdown(tls->listener, SHUT_RDWR);
	pthread_join(tls->acceptor, NULL);
	for (size_t i = 0; i < tls->worker_count; i++)
		pthread_join(tls->workers[i], NULL);
	close(tls->listener);
	SSL_CTX_free(tls->context);
	pthread_cond_destroy(&tls->changed);
	pthread_mutex_destroy(&tls->lock);
}

static void tls_counts(struct tls_server *tls, unsigned *handshakes, unsigned *resumed)
{
	pthread_mutex_lock(&tls->lock);
	*handshakes = tls->handshakes;
	*resumed = tls->resumed;
	pthread_mutex_unlock(&tls->lock);
}

struct tls_get {
	struct net_pool *pool;
	const char *ca_file;
	unsigned port;
	const char *path;
	int rc;
	long status;
};

static void *tls_get_run(void *context)
{
	struct tls_get *get = context;
	struct net_response response;
	struct net_request request;
	char url[128];

	snprintf(url, sizeof(url), "https://127.0.0.1:%u%s", get->port, get->path);
	memset(&request, 0, sizeof(request));
	request.method = "GET";
	request.url = url;
	request.max_response_bytes = 1024;
	request.total_timeout_ms = 10000;
	request.ca_file = get->ca_file;
	request.pool = get->pool;
	net_response_init(&response);
	get->rc = net_perform(&request, &response);
	get->status = response.status;
	net_response_free(&response);
	return NULL;
}

/* A GET of path from tls through pool, which must answer 200. */
static void tls_get(struct net_pool *pool, const char *ca_file, const struct tls_server *tls,
                    const char *path)
{
	struct tls_get get = {.pool = pool, .ca_file = ca_file, .port = tls->port, .path = path};

	tls_get_run(&get);
	ck_assert_msg(get.rc == 0, "GET %s: %d", path, get.rc);
	ck_assert_int_eq(get.status, 200);
}

/* A pool resumes TLS sessions: over TLS 1.3 the connection that replaces one the server closed
 * (a session ticket of the pool's); over TLS 1.2 the second connection of a pool, opened while
 * the first is busy (the first handle's session, found through the pool's share). Without a pool
 * nothing is resumed. */
START_TEST(test_pool_resumes_tls_sessions)
{
	char directory[4096], ca_path[4200], key_path[4200];
	char *key_pem = NULL, *certificate_pem = NULL;
	struct net_pool_options options = {.connections_per_origin = 2};
	struct net_pool *pool = NULL;
	struct tls_server tls;
	unsigned handshakes, resumed;

	make_certificate(&key_pem, &certificate_pem);
	test_make_tempdir(directory, sizeof(directory));
	snprintf(ca_path, sizeof(ca_path), "%s/ca.pem", directory);
	snprintf(key_path, sizeof(key_path), "%s/key.pem", directory);
	test_write_file(ca_path, certificate_pem, strlen(certificate_pem), 0644);
	test_write_file(key_path, key_pem, strlen(key_pem), 0600);
	tls_server_start(&tls, ca_path, key_path, _i == 0 ? TLS1_3_VERSION : TLS1_2_VERSION);
	ck_assert_int_eq(net_pool_new(&options, &pool), 0);

	tls_get(pool, ca_path, &tls, "/ok");
	tls_get(pool, ca_path, &tls, "/ok");
	tls_counts(&tls, &handshakes, &resumed);
	ck_assert_uint_eq(handshakes, 1); /* the second request took the kept connection */
	ck_assert_uint_eq(resumed, 0);
	if (_i == 0) {
		tls_get(pool, ca_path, &tls, "/close");
		tls_get(pool, ca_path, &tls, "/ok");
	} else {
		struct tls_get held = {.pool = pool, .ca_file = ca_path, .port = tls.port, .path = "/hold"};
		pthread_t thread;
		ck_assert_int_eq(pthread_create(&thread, NULL, tls_get_run, &held), 0);
		pthread_mutex_lock(&tls.lock);
		while (tls.holding == 0)
			pthread_cond_wait(&tls.changed, &tls.lock);
		pthread_mutex_unlock(&tls.lock);
		tls_get(pool, ca_path, &tls, "/ok"); /* the pool's second handle, a new connection */
		tls_release(&tls);
		pthread_join(thread, NULL);
		ck_assert_int_eq(held.rc, 0);
		ck_assert_int_eq(held.status, 200);
	}
	tls_counts(&tls, &handshakes, &resumed);
	ck_assert_uint_eq(handshakes, 2);
	ck_assert_uint_eq(resumed, 1);
	tls_get(NULL, ca_path, &tls, "/ok");
	tls_counts(&tls, &handshakes, &resumed);
	ck_assert_uint_eq(handshakes, 3);
	ck_assert_uint_eq(resumed, 1);

	net_pool_free(pool);
	tls_server_stop(&tls);
	test_remove_tree(directory);
	free(key_pem);
	free(certificate_pem);
}
END_TEST

static Suite *net_suite(void)
{
	Suite *suite = suite_create("net");
	TCase *exchange = tcase_create("exchange");
	TCase *retry = tcase_create("retry");
	TCase *tls = tcase_create("tls");
	TCase *pool = tcase_create("pool");
	TCase *answer = tcase_create("error_answer");

	tcase_add_checked_fixture(exchange, setup, teardown);
	tcase_set_timeout(exchange, 30);
	tcase_add_test(exchange, test_get_and_post);
	tcase_add_loop_test(exchange, test_body_cap_aborts, 0, 2);
	tcase_add_test(exchange, test_redirect_not_followed);
	tcase_add_test(exchange, test_content_decoding_never_enabled);
	tcase_add_test(exchange, test_only_http_and_https);
	tcase_add_test(exchange, test_connection_refused_is_unavailable);
	tcase_add_test(exchange, test_total_timeout);
	tcase_add_test(exchange, test_concurrent_requests);
	tcase_add_test(exchange, test_describe_error);
	suite_add_tcase(suite, exchange);

	tcase_add_checked_fixture(retry, setup, teardown);
	tcase_set_timeout(retry, 30);
	tcase_add_test(retry, test_retry_succeeds_after_5xx_and_429);
	tcase_add_test(retry, test_retry_stops_at_the_limit);
	tcase_add_test(retry, test_no_retry_on_4xx_or_bounds);
	tcase_add_test(retry, test_backoff_grows_capped_and_jittered);
	suite_add_tcase(suite, retry);

	tcase_add_checked_fixture(tls, setup, teardown);
	tcase_set_timeout(tls, 30);
	tcase_add_test(tls, test_https_verifies_the_server);
	tcase_add_loop_test(tls, test_pool_resumes_tls_sessions, 0, 2);
	suite_add_tcase(suite, tls);

	tcase_add_checked_fixture(pool, setup, teardown);
	tcase_set_timeout(pool, 30);
	tcase_add_test(pool, test_pool_keeps_one_connection);
	tcase_add_test(pool, test_pool_bound_holds);
	tcase_add_test(pool, test_pool_replaces_closed_connections);
	tcase_add_test(pool, test_pool_keeps_the_guarantees);
	tcase_add_test(pool, test_pool_evicts_idle_origins);
	suite_add_tcase(suite, pool);
	tcase_add_test(answer, test_error_answer);
	tcase_add_test(answer, test_error_code_and_description);
	suite_add_tcase(suite, answer);
	return suite;
}

int main(void)
{
	int failures;
	SRunner *runner;

	if (net_global_init() != 0)
		return 1;
	runner = srunner_create(net_suite());
	srunner_run_all(runner, CK_NORMAL);
	failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	net_global_cleanup();
	return failures ? 1 : 0;
}
