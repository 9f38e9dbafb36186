/*
 * client.c: bounded, redirect-free HTTP exchanges over libcurl, with an optional jittered retry
 * (see client.h).
 *
 * One attempt is one curl easy handle: made and cleaned up inside the attempt when the request
 * names no pool, so nothing is shared between threads but libcurl's global state; or leased from
 * the request's pool (pool.h) for the attempt and given back after it, its connection kept. Either
 * way the handle's options are all set for the attempt, from libcurl's defaults. The total timeout
 * is a deadline on the monotonic clock taken when the exchange starts: the wait for a pooled
 * handle ends there, each attempt gets what is left of it as its own curl timeout, and a retry
 * whose wait would reach the deadline is not made, so the caller gets the last answer in time
 * rather than a wait that cannot help.
 */
#include "net/client.h"

#include "net/error_answer.h"
#include "net/pool_lease.h"

#include "crypto/crypto.h"
#include "base/error.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

int net_global_init(void)
{
	return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : DIRAUTH_ERR_INTERNAL;
}

void net_global_cleanup(void)
{
	curl_global_cleanup();
}

void net_response_init(struct net_response *response)
{
	memset(response, 0, sizeof(*response));
	buffer_init(&response->body);
}

void net_response_free(struct net_response *response)
{
	if (response == NULL)
		return;
	buffer_free(&response->body);
}

struct transfer {
	struct net_response *response;
	size_t max_bytes;
	int exceeded;
	int out_of_memory;
};

static size_t on_body(char *data, size_t size, size_t count, void *context)
{
	struct transfer *transfer = context;
	size_t len = size * count;

	/* Returning less than len makes curl abort the transfer with CURLE_WRITE_ERROR. */
	if (len > transfer->max_bytes - transfer->response->body.len) {
		transfer->exceeded = 1;
		return 0;
	}
	if (buffer_append(&transfer->response->body, data, len) != 0) {
		transfer->out_of_memory = 1;
		return 0;
	}
	return len;
}

/* Copies a header's value (trimmed) when the line names it. */
static void capture_header(const char *line, size_t len, const char *name, char *out, size_t cap)
{
	size_t name_len = strlen(name);
	size_t start;
	size_t end;

	if (len <= name_len || line[name_len] != ':' || strncasecmp(line, name, name_len) != 0)
		return;
	start = name_len + 1;
	end = len;
	while (start < end && (line[start] == ' ' || line[start] == '\t'))
		start++;
	while (end > start && (line[end - 1] == '\r' || line[end - 1] == '\n' || line[end - 1] == ' ' ||
	                       line[end - 1] == '\t'))
		end--;
	if (end - start >= cap)
		end = start + cap - 1;
	memcpy(out, line + start, end - start);
	out[end - start] = '\0';
}

static size_t on_header(char *data, size_t size, size_t count, void *context)
{
	struct transfer *transfer = context;
	struct net_response *response = transfer->response;
	size_t len = size * count;

	/* A status line starts a new header block (an interim 1xx answer has its own). */
	if (len >= 5 && memcmp(data, "HTTP/", 5) == 0) {
		response->content_encoding[0] = '\0';
		response->content_type[0] = '\0';
	}
	capture_header(data, len, "Content-Encoding", response->content_encoding,
	               sizeof(response->content_encoding));
	capture_header(data, len, "Content-Type", response->content_type, sizeof(response->content_type));
	return len;
}

static int error_for_curl(CURLcode code)
{
	switch (code) {
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
	case CURLE_COULDNT_CONNECT:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_GOT_NOTHING:
	case CURLE_RECV_ERROR:
	case CURLE_SEND_ERROR:
	case CURLE_PARTIAL_FILE:
	case CURLE_SSL_CONNECT_ERROR:
		return DIRAUTH_ERR_UNAVAILABLE;
	case CURLE_UNSUPPORTED_PROTOCOL:
	case CURLE_URL_MALFORMAT:
		return DIRAUTH_ERR_CONFIG;
	case CURLE_OUT_OF_MEMORY:
		return DIRAUTH_ERR_NOMEM;
	default:
		return DIRAUTH_ERR_IO;
	}
}

static int is_https(const char *url)
{
	return strncasecmp(url, "https://", 8) == 0;
}

static int is_http(const char *url)
{
	return strncasecmp(url, "http://", 7) == 0;
}

/* Milliseconds on the monotonic clock. */
static uint64_t monotonic_ms(void)
{
	struct timespec now;

	if (clock_gettime(CLOCK_MONOTONIC, &now) != 0)
		return 0;
	return (uint64_t)now.tv_sec * 1000u + (uint64_t)now.tv_nsec / 1000000u;
}

static void sleep_ms(uint32_t ms)
{
	struct timespec wait = {.tv_sec = ms / 1000u, .tv_nsec = (long)(ms % 1000u) * 1000000L};

	while (nanosleep(&wait, &wait) != 0 && errno == EINTR)
		;
}

#define SET(option, value)                                                                                   \
	do {                                                                                                 \
		if (code == CURLE_OK)                                                                        \
			code = curl_easy_setopt(curl, option, value);                                        \
	} while (0)

/* One attempt, ending by deadline (CLOCK_MONOTONIC milliseconds), given at most connect_ms to
 * connect. */
static int perform_once(const struct net_request *request, uint64_t deadline, uint32_t connect_ms,
                        struct net_response *response)
{
	struct transfer transfer;
	struct curl_slist *headers = NULL;
	struct net_pool_lease lease = {NULL, 0};
	char curl_error[CURL_ERROR_SIZE];
	CURLcode code = CURLE_OK;
	CURL *curl;
	uint64_t now;
	uint64_t left;
	long connects = 0;
	int rc = 0;

	buffer_reset(&response->body);
	response->status = 0;
	response->content_encoding[0] = '\0';
	response->content_type[0] = '\0';
	response->error[0] = '\0';
	memset(&transfer, 0, sizeof(transfer));
	transfer.response = response;
	transfer.max_bytes = request->max_response_bytes;
	curl_error[0] = '\0';

	if (request->pool != NULL) {
		rc = net_pool_lease_take(request->pool, request->url, deadline, &lease, response->error,
		                         sizeof(response->error));
		if (rc != 0)
			return rc;
		curl = lease.curl;
	} else {
		curl = curl_easy_init();
		if (curl == NULL) {
			snprintf(response->error, sizeof(response->error), "cannot start a transfer");
			return DIRAUTH_ERR_NOMEM;
		}
	}
	/* What is left once a pooled handle was free; at least 1 ms, as 0 would mean no timeout. */
	now = monotonic_ms();
	left = deadline > now ? deadline - now : 1;
	if (connect_ms > left)
		connect_ms = (uint32_t)left;
	if (request->headers != NULL) {
		for (size_t i = 0; request->headers[i] != NULL; i++) {
			struct curl_slist *grown = curl_slist_append(headers, request->headers[i]);
			if (grown == NULL) {
				rc = DIRAUTH_ERR_NOMEM;
				snprintf(response->error, sizeof(response->error), "out of memory");
				goto done;
			}
			headers = grown;
		}
	}
	if (strcmp(request->method, "POST") == 0) {
		/* No "Expect: 100-continue" round trip: the bodies posted are small. */
		struct curl_slist *grown = curl_slist_append(headers, "Expect:");
		if (grown == NULL) {
			rc = DIRAUTH_ERR_NOMEM;
			snprintf(response->error, sizeof(response->error), "out of memory");
			goto done;
		}
		headers = grown;
		SET(CURLOPT_POST, 1L);
		SET(CURLOPT_POSTFIELDS, request->body != NULL ? (const char *)request->body : "");
		SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)request->body_len);
	} else {
		SET(CURLOPT_HTTPGET, 1L);
	}
	SET(CURLOPT_URL, request->url);
	SET(CURLOPT_PROTOCOLS_STR, "http,https");
	SET(CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	SET(CURLOPT_FOLLOWLOCATION, 0L);
	/* Bytes as served: the caller decodes them with its own bounds. */
	SET(CURLOPT_HTTP_CONTENT_DECODING, 0L);
	/* No signals: the only safe way for several threads, and timeouts still hold. */
	SET(CURLOPT_NOSIGNAL, 1L);
	SET(CURLOPT_CONNECTTIMEOUT_MS, (long)connect_ms);
	SET(CURLOPT_TIMEOUT_MS, (long)left);
	/* One connection per handle (a pooled handle serves one origin), kept alive while idle. */
	SET(CURLOPT_MAXCONNECTS, 1L);
	SET(CURLOPT_TCP_KEEPALIVE, 1L);
	/* A declared Content-Length above the cap fails before any byte is read. */
	SET(CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)request->max_response_bytes);
	SET(CURLOPT_USERAGENT, request->user_agent != NULL ? request->user_agent : NET_DEFAULT_USER_AGENT);
	SET(CURLOPT_HTTPHEADER, headers);
	SET(CURLOPT_WRITEFUNCTION, on_body);
	SET(CURLOPT_WRITEDATA, &transfer);
	SET(CURLOPT_HEADERFUNCTION, on_header);
	SET(CURLOPT_HEADERDATA, &transfer);
	SET(CURLOPT_ERRORBUFFER, curl_error);
	if (is_https(request->url)) {
		/* curl's defaults, stated: a server is believed only with a valid chain for its name. */
		SET(CURLOPT_SSL_VERIFYPEER, 1L);
		SET(CURLOPT_SSL_VERIFYHOST, 2L);
		if (request->ca_file != NULL)
			SET(CURLOPT_CAINFO, request->ca_file);
	}
	if (code != CURLE_OK) {
		rc = code == CURLE_OUT_OF_MEMORY ? DIRAUTH_ERR_NOMEM : DIRAUTH_ERR_CONFIG;
		snprintf(response->error, sizeof(response->error), "cannot set up the transfer: %s",
		         curl_easy_strerror(code));
		goto done;
	}

	code = curl_easy_perform(curl);
	if (curl_easy_getinfo(curl, CURLINFO_NUM_CONNECTS, &connects) == CURLE_OK && connects > 0)
		response->connects += (unsigned)connects;
	if (transfer.exceeded || code == CURLE_FILESIZE_EXCEEDED) {
		rc = DIRAUTH_ERR_BOUNDS;
		snprintf(response->error, sizeof(response->error), "response larger than %zu bytes",
		         request->max_response_bytes);
		goto done;
	}
	if (transfer.out_of_memory) {
		rc = DIRAUTH_ERR_NOMEM;
		snprintf(response->error, sizeof(response->error), "out of memory");
		goto done;
	}
	if (code != CURLE_OK) {
		rc = error_for_curl(code);
		snprintf(response->error, sizeof(response->error), "%s",
		         curl_error[0] != '\0' ? curl_error : curl_easy_strerror(code));
		goto done;
	}
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response->status);
done:
	if (lease.curl != NULL)
		net_pool_lease_give_back(request->pool, &lease);
	else
		curl_easy_cleanup(curl);
	curl_slist_free_all(headers);
	return rc;
}

#undef SET

uint32_t net_backoff_delay_ms(const struct net_retry *retry, unsigned retry_number, uint32_t random_value)
{
	uint64_t base = retry->base_delay_ms != 0 ? retry->base_delay_ms : NET_DEFAULT_RETRY_BASE_MS;
	uint64_t cap = retry->max_delay_ms != 0 ? retry->max_delay_ms : NET_DEFAULT_RETRY_MAX_MS;
	uint64_t ceiling = base;
	uint64_t half;

	for (unsigned i = 1; i < retry_number && ceiling < cap; i++)
		ceiling *= 2;
	if (ceiling > cap)
		ceiling = cap;
	/* The upper half of the ceiling: the waits still grow, and clients that failed together spread
	 * over a window as wide as the wait itself. */
	half = ceiling / 2;
	return (uint32_t)(ceiling - half + (uint64_t)random_value % (half + 1));
}

/* A status worth another attempt: the server is failing or asks to slow down. */
static int status_is_retryable(long status)
{
	return status >= 500 || status == 429;
}

int net_perform(const struct net_request *request, struct net_response *response)
{
	unsigned attempts = request->retry.attempts > 1 ? request->retry.attempts : 1;
	uint32_t total_ms =
	    request->total_timeout_ms != 0 ? request->total_timeout_ms : NET_DEFAULT_TOTAL_TIMEOUT_MS;
	uint32_t connect_ms =
	    request->connect_timeout_ms != 0 ? request->connect_timeout_ms : NET_DEFAULT_CONNECT_TIMEOUT_MS;
	uint64_t deadline = monotonic_ms() + total_ms;
	int rc = 0;

	buffer_reset(&response->body);
	response->status = 0;
	response->content_encoding[0] = '\0';
	response->content_type[0] = '\0';
	response->error[0] = '\0';
	response->attempts = 0;
	response->connects = 0;
	if (request->method == NULL ||
	    (strcmp(request->method, "GET") != 0 && strcmp(request->method, "POST") != 0)) {
		snprintf(response->error, sizeof(response->error), "unsupported method");
		return DIRAUTH_ERR_CONFIG;
	}
	if (request->url == NULL || !(is_http(request->url) || is_https(request->url))) {
		snprintf(response->error, sizeof(response->error), "not an http:// or https:// URL");
		return DIRAUTH_ERR_CONFIG;
	}
	if (attempts > NET_RETRY_MAX_ATTEMPTS) {
		snprintf(response->error, sizeof(response->error), "more than %u attempts asked for",
		         NET_RETRY_MAX_ATTEMPTS);
		return DIRAUTH_ERR_CONFIG;
	}
	for (unsigned attempt = 1;; attempt++) {
		uint64_t now;
		uint32_t random_value = 0;
		uint32_t wait;

		rc = perform_once(request, deadline, connect_ms, response);
		response->attempts = attempt;
		if (!(rc == DIRAUTH_ERR_UNAVAILABLE || (rc == 0 && status_is_retryable(response->status))))
			break;
		if (attempt == attempts)
			break;
		/* Without the system's randomness the wait is the ceiling: still bounded, just not spread. */
		if (crypto_random((uint8_t *)&random_value, sizeof(random_value)) != 0)
			random_value = UINT32_MAX;
		wait = net_backoff_delay_ms(&request->retry, attempt, random_value);
		now = monotonic_ms();
		if (now + wait >= deadline)
			break;
		sleep_ms(wait);
	}
	if (rc != 0 && response->attempts > 1) {
		size_t used = strnlen(response->error, sizeof(response->error));
		snprintf(response->error + used, sizeof(response->error) - used, " (after %u attempts)",
		         response->attempts);
	}
	return rc;
}

int net_error_code(const struct net_response *response, char *out, size_t cap)
{
	struct net_error_answer parsed;

	if (cap > 0)
		out[0] = '\0';
	if (net_error_answer_parse(response->body.data, response->body.len, &parsed) != 0)
		return 0;
	if (cap > 0)
		snprintf(out, cap, "%s", parsed.code);
	return 1;
}

void net_describe_error(const struct net_response *response, char *out, size_t cap)
{
	struct net_error_answer parsed;
	int ok = net_error_answer_parse(response->body.data, response->body.len, &parsed) == 0;

	net_error_answer_describe(response->status, ok ? &parsed : NULL, out, cap);
}
