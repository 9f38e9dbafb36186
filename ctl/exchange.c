/*
 * exchange.c: dirauthctl's requests and their failures in words (see exchange.h).
 */
#include "ctl/exchange.h"

#include "base/buffer.h"
#include "base/error.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

void ctl_exchange_request(struct net_request *request, const char *method, const char *url,
                          size_t max_response_bytes)
{
	memset(request, 0, sizeof(*request));
	request->method = method;
	request->url = url;
	request->max_response_bytes = max_response_bytes;
	request->user_agent = CTL_EXCHANGE_USER_AGENT;
}

int ctl_exchange_exit_code_for_status(long status)
{
	return status >= 500 ? CTL_EXIT_UNAVAILABLE : CTL_EXIT_PROTOCOL;
}

int ctl_exchange_get(const char *what, const char *label, const char *url, const char *const *headers,
                     size_t max_bytes, int allow_missing, struct net_response *response,
                     struct ctl_report *report)
{
	return ctl_exchange_get_pooled(NULL, what, label, url, headers, max_bytes, allow_missing, response,
	                               report);
}

int ctl_exchange_get_pooled(struct net_pool *pool, const char *what, const char *label, const char *url,
                            const char *const *headers, size_t max_bytes, int allow_missing,
                            struct net_response *response, struct ctl_report *report)
{
	struct net_request request;
	int rc;

	ctl_exchange_request(&request, "GET", url, max_bytes);
	request.headers = headers;
	request.pool = pool;
	rc = net_perform(&request, response);
	if (rc == DIRAUTH_ERR_BOUNDS) {
		ctl_report_fail(report, CTL_EXIT_DATA, "%s: %s: %s", what, label, response->error);
		return rc;
	}
	if (rc != 0) {
		ctl_report_fail(report, ctl_exit_code_for_error(rc), "%s: %s: %s", what, url,
		                response->error);
		return rc;
	}
	if (response->status != 200 && !(allow_missing && response->status == 404)) {
		char description[CTL_REPORT_MAX / 2];
		net_describe_error(response, description, sizeof(description));
		ctl_report_fail(report, ctl_exchange_exit_code_for_status(response->status), "%s: %s: %s",
		                what, label, description);
		return response->status >= 500 ? DIRAUTH_ERR_UNAVAILABLE : DIRAUTH_ERR_REFUSED;
	}
	return 0;
}

size_t ctl_exchange_url_length(const char *url)
{
	size_t len = strlen(url);
	while (len > 0 && url[len - 1] == '/')
		len--;
	return len;
}

int ctl_exchange_post(const char *what, const char *server_url, const char *path, const uint8_t *body,
                      size_t body_len, size_t max_response_bytes, struct net_response *response,
                      struct ctl_report *report)
{
	static const char *const headers[] = {"Content-Type: text/plain; charset=utf-8", NULL};
	struct net_request request;
	struct buffer url;
	size_t base_len = ctl_exchange_url_length(server_url);
	int rc;

	buffer_init(&url);
	rc = buffer_appendf(&url, "%.*s%s", (int)base_len, server_url, path);
	if (rc != 0) {
		ctl_report_fail(report, CTL_EXIT_USAGE, "%s: server URL too long", what);
		goto done;
	}
	ctl_exchange_request(&request, "POST", (const char *)url.data, max_response_bytes);
	request.headers = headers;
	request.body = body;
	request.body_len = body_len;
	rc = net_perform(&request, response);
	if (rc == DIRAUTH_ERR_BOUNDS) {
		ctl_report_fail(report, CTL_EXIT_PROTOCOL, "%s: %s: %s", what, request.url, response->error);
		goto done;
	}
	if (rc != 0) {
		ctl_report_fail(report, ctl_exit_code_for_error(rc), "%s: %s: %s", what, request.url,
		                response->error);
		goto done;
	}
	if (response->status != 202) {
		char description[CTL_REPORT_MAX / 2];
		net_describe_error(response, description, sizeof(description));
		ctl_report_fail(report, ctl_exchange_exit_code_for_status(response->status),
		                "%s: refused: %s", what, description);
		rc = response->status >= 500 ? DIRAUTH_ERR_UNAVAILABLE : DIRAUTH_ERR_REFUSED;
	}
done:
	buffer_free(&url);
	return rc;
}

struct exchange_thread {
	void (*work)(void *context, size_t index);
	void *context;
	size_t index;
	pthread_t thread;
	int started;
};

static void *exchange_thread_run(void *argument)
{
	struct exchange_thread *thread = argument;
	thread->work(thread->context, thread->index);
	return NULL;
}

int ctl_exchange_each(size_t count, void (*work)(void *context, size_t index), void *context)
{
	struct exchange_thread *threads = calloc(count > 0 ? count : 1, sizeof(*threads));

	if (threads == NULL)
		return DIRAUTH_ERR_NOMEM;
	for (size_t i = 0; i < count; i++) {
		threads[i].work = work;
		threads[i].context = context;
		threads[i].index = i;
		threads[i].started =
		    pthread_create(&threads[i].thread, NULL, exchange_thread_run, &threads[i]) == 0;
	}
	for (size_t i = 0; i < count; i++) {
		if (threads[i].started)
			pthread_join(threads[i].thread, NULL);
		else
			work(context, i);
	}
	free(threads);
	return 0;
}
