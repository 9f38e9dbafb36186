/*
 * test_http.c: the integration tests' HTTP GET (test_http.h).
 */
#include "test_http.h"

#include <check.h>
#include <stdio.h>

static size_t collect(char *data, size_t size, size_t count, void *context)
{
	return buffer_append(context, data, size * count) == 0 ? size * count : 0;
}

CURLcode test_http_get(const char *url, struct test_http_response *response)
{
	CURL *curl = curl_easy_init();
	ck_assert(curl != NULL);
	buffer_init(&response->body);
	response->status = 0;
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, &response->body);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT, 30L);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	CURLcode rc = curl_easy_perform(curl);
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response->status);
	curl_easy_cleanup(curl);
	return rc;
}

struct buffer test_http_get_ok(const char *base, const char *path)
{
	char url[1024];
	struct test_http_response response;
	snprintf(url, sizeof(url), "%s%s", base, path);
	ck_assert(test_http_get(url, &response) == CURLE_OK);
	ck_assert_msg(response.status == 200, "%s: HTTP %ld", url, response.status);
	return response.body;
}
