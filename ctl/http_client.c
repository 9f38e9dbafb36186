/*
 * http_client.c: bounded, redirect-free HTTP exchanges over libcurl (see http_client.h).
 */
#include "ctl/http_client.h"

#include "schema/error.h"
#include "ctl/report.h"

#include <curl/curl.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

struct transfer {
	struct ctl_http_response *response;
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
	size_t len = size * count;

	capture_header(data, len, "Content-Encoding", transfer->response->content_encoding,
	               sizeof(transfer->response->content_encoding));
	capture_header(data, len, "Content-Type", transfer->response->content_type,
	               sizeof(transfer->response->content_type));
	return len;
}

void ctl_http_response_init(struct ctl_http_response *response)
{
	memset(response, 0, sizeof(*response));
	buffer_init(&response->body);
}

void ctl_http_response_free(struct ctl_http_response *response)
{
	if (response == NULL)
		return;
	buffer_free(&response->body);
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

int ctl_http_perform(const struct ctl_http_request *request, struct ctl_http_response *response)
{
	struct transfer transfer;
	struct curl_slist *headers = NULL;
	char curl_error[CURL_ERROR_SIZE];
	CURL *curl;
	CURLcode code;
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

	curl = curl_easy_init();
	if (curl == NULL) {
		snprintf(response->error, sizeof(response->error), "cannot start a transfer");
		return DIRAUTH_ERR_NOMEM;
	}
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
	/* No "Expect: 100-continue" round trip: the bodies dirauthctl posts are small. */
	if (strcmp(request->method, "POST") == 0) {
		struct curl_slist *grown = curl_slist_append(headers, "Expect:");
		if (grown == NULL) {
			rc = DIRAUTH_ERR_NOMEM;
			snprintf(response->error, sizeof(response->error), "out of memory");
			goto done;
		}
		headers = grown;
		curl_easy_setopt(curl, CURLOPT_POST, 1L);
		curl_easy_setopt(curl, CURLOPT_POSTFIELDS,
		                 request->body != NULL ? (const char *)request->body : "");
		curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)request->body_len);
	} else {
		curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
	}
	curl_easy_setopt(curl, CURLOPT_URL, request->url);
	curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, (long)CTL_HTTP_CONNECT_TIMEOUT_SECONDS);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT, (long)CTL_HTTP_TOTAL_TIMEOUT_SECONDS);
	/* A declared Content-Length above the cap fails before any byte is read. */
	curl_easy_setopt(curl, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)request->max_response_bytes);
	curl_easy_setopt(curl, CURLOPT_USERAGENT, "dirauthctl/1");
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, &transfer);
	curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(curl, CURLOPT_HEADERDATA, &transfer);
	curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, curl_error);

	code = curl_easy_perform(curl);
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
	curl_easy_cleanup(curl);
	curl_slist_free_all(headers);
	return rc;
}

/* Finds "key": "<string>" in a flat JSON object and copies the string (escapes reduced to
 * their character, anything outside printable ASCII to '?'). Returns 1 when found. The server's
 * answer is only ever shown to the user, never acted upon, so a small scanner is enough. */
static int json_string_field(const char *json, size_t len, const char *key, char *out, size_t cap)
{
	size_t key_len = strlen(key);

	for (size_t i = 0; i + key_len + 2 <= len; i++) {
		size_t j;
		size_t used = 0;

		if (json[i] != '"' || memcmp(json + i + 1, key, key_len) != 0 || json[i + 1 + key_len] != '"')
			continue;
		j = i + key_len + 2;
		while (j < len && (json[j] == ' ' || json[j] == '\t' || json[j] == '\n' || json[j] == '\r'))
			j++;
		if (j >= len || json[j] != ':')
			continue;
		j++;
		while (j < len && (json[j] == ' ' || json[j] == '\t' || json[j] == '\n' || json[j] == '\r'))
			j++;
		if (j >= len || json[j] != '"')
			continue;
		j++;
		while (j < len && json[j] != '"') {
			char c = json[j];
			if (c == '\\' && j + 1 < len) {
				j++;
				c = json[j];
				if (c == 'n' || c == 't' || c == 'r')
					c = ' ';
				else if (c == 'u')
					c = '?';
			}
			if ((unsigned char)c < 0x20 || (unsigned char)c > 0x7e)
				c = '?';
			if (used + 1 < cap)
				out[used++] = c;
			j++;
		}
		if (cap > 0)
			out[used] = '\0';
		return 1;
	}
	return 0;
}

void ctl_http_describe_error(const struct ctl_http_response *response, char *out, size_t cap)
{
	char code[64];
	char detail[256];
	const char *body = (const char *)response->body.data;
	size_t len = response->body.len;
	int has_code = 0;
	int has_detail = 0;

	if (body != NULL) {
		has_code = json_string_field(body, len, "error", code, sizeof(code));
		has_detail = json_string_field(body, len, "detail", detail, sizeof(detail));
	}
	if (has_code && has_detail)
		snprintf(out, cap, "HTTP %ld: %s: %s", response->status, code, detail);
	else if (has_code)
		snprintf(out, cap, "HTTP %ld: %s", response->status, code);
	else
		snprintf(out, cap, "HTTP %ld: unexpected answer", response->status);
}

int ctl_http_exit_code_for_status(long status)
{
	return status >= 500 ? CTL_EXIT_UNAVAILABLE : CTL_EXIT_PROTOCOL;
}
