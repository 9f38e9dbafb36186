/*
 * exchange.c: dirauthctl's requests and their failures in words (see exchange.h).
 */
#include "ctl/exchange.h"

#include "schema/error.h"

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
	struct net_request request;
	int rc;

	ctl_exchange_request(&request, "GET", url, max_bytes);
	request.headers = headers;
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
