/*
 * lookup.c: dirauthctl lookup (lookup.h): libdirauth's lookup, fed from the network, and its
 * report printed.
 *
 * Every check is the library's (dirauth_lookup_begin, then dirauth_update_next and
 * dirauth_update_feed until it ends): the header and the certificates under the trust bundle, the
 * shard's proof against the header's records root. What is left here is the network (net/,
 * through ctl_exchange_get, whose refusals and exit statuses every command shares), the clock
 * and the state the library asks for, and the words: which status exits how, and how a person
 * reads what the proof showed (dirauth_lookup_record).
 */
#include "ctl/lookup.h"

#include "base/buffer.h"
#include "base/error.h"
#include "ctl/client.h"
#include "ctl/exchange.h"
#include "net/client.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WHAT_MAX (NAMESPACE_NAME_MAX + 16)

int ctl_lookup_parse_service(const char *text)
{
	if (!text || strlen(text) != 2 * SERVICE_ID_SIZE)
		return DIRAUTH_ERR_SYNTAX;
	for (const char *c = text; *c; c++)
		if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f')))
			return DIRAUTH_ERR_SYNTAX;
	return 0;
}

void ctl_lookup_result_free(struct ctl_lookup_result *result)
{
	free(result->view.endpoints);
	free(result->view.revocations);
	memset(result, 0, sizeof(*result));
}

/* The library's callbacks: the command's clock, and a state that lives as long as the lookup. */
struct lookup_session {
	uint64_t now;
	struct buffer state;
};

static uint64_t session_now(void *user)
{
	return ((const struct lookup_session *)user)->now;
}

static int session_state_read(void *user, const char *namespace_name, uint8_t *out, size_t cap, size_t *len)
{
	(void)user;
	(void)namespace_name;
	(void)out;
	(void)cap;
	*len = 0; /* a lookup starts from nothing held */
	return 0;
}

static int session_state_write(void *user, const char *namespace_name, const uint8_t *bytes, size_t len)
{
	struct lookup_session *session = user;
	(void)namespace_name;
	buffer_reset(&session->state);
	return buffer_append(&session->state, bytes, len) == 0 ? 0 : -1;
}

/* What a path the library asks for is, in a refusal's words. */
static const char *label_of(const char *path)
{
	if (strstr(path, "/records/") != NULL)
		return "record shard";
	if (strcmp(path, "/v1/certificates") == 0)
		return "certificates";
	return "latest header";
}

/* The report's arrays, sized by what the proof holds. */
static int read_view(const struct dirauth_update *lookup, struct dirauth_record_view *view,
                     struct dirauth_result *result)
{
	memset(view, 0, sizeof(*view));
	if (dirauth_lookup_record(lookup, view, result) != DIRAUTH_SUCCESS)
		return -1;
	size_t endpoints = view->endpoint_count, revocations = view->revocation_count;
	view->endpoints = calloc(endpoints > 0 ? endpoints : 1, sizeof(*view->endpoints));
	view->revocations = calloc(revocations > 0 ? revocations : 1, sizeof(*view->revocations));
	if (view->endpoints == NULL || view->revocations == NULL)
		return -1;
	view->endpoint_cap = endpoints;
	view->revocation_cap = revocations;
	return dirauth_lookup_record(lookup, view, result) == DIRAUTH_SUCCESS ? 0 : -1;
}

int ctl_lookup_run(const struct ctl_lookup_options *options, struct ctl_lookup_result *result,
                   struct ctl_report *report)
{
	const char *const headers[] = {options->authorization, NULL};
	const char *const shard_headers[] = {"Accept-Encoding: zstd", options->authorization, NULL};
	struct lookup_session session = {.now = options->now};
	struct dirauth_callbacks callbacks = {.user = &session,
	                                      .now = session_now,
	                                      .state_read = session_state_read,
	                                      .state_write = session_state_write};
	struct dirauth_context *context = NULL;
	struct dirauth_update *lookup = NULL;
	struct dirauth_result outcome = {0};
	struct net_response response;
	struct buffer url;
	char what[WHAT_MAX];
	const char *path = "";
	size_t max_bytes = 0;
	enum dirauth_status status;
	int rc = DIRAUTH_ERR_CONFIG;

	memset(result, 0, sizeof(*result));
	snprintf(result->namespace_name, sizeof(result->namespace_name), "%s", options->namespace_name);
	snprintf(what, sizeof what, "lookup %s", options->namespace_name);
	buffer_init(&session.state);
	buffer_init(&url);
	net_response_init(&response);
	size_t base_len = ctl_exchange_url_length(options->server_url);
	rc = ctl_client_context_new(what, options->bundle, options->policy, NULL, &callbacks, &context,
	                            report);
	if (rc != 0)
		goto done;
	rc = DIRAUTH_ERR_CONFIG;
	status =
	    dirauth_lookup_begin(context, options->namespace_name, options->service_id, &lookup, &outcome);
	if (status == DIRAUTH_E_TRUST) {
		ctl_report_fail(report, CTL_EXIT_CONFIG, "%s: namespace not in the trust bundle", what);
		goto done;
	}
	if (status != DIRAUTH_SUCCESS) {
		ctl_report_fail(report, ctl_client_exit_code(status), "%s: %s", what, outcome.detail);
		goto done;
	}
	while (dirauth_update_next(lookup, &path, &max_bytes)) {
		const char *label = label_of(path);
		int shard = strcmp(label, "record shard") == 0;
		buffer_reset(&url);
		if ((rc = buffer_appendf(&url, "%.*s%s", (int)base_len, options->server_url, path)) != 0) {
			ctl_report_fail(report, CTL_EXIT_USAGE, "%s: server URL too long", what);
			goto done;
		}
		net_response_free(&response);
		net_response_init(&response);
		if ((rc = ctl_exchange_get(what, label, (const char *)url.data,
		                           shard ? shard_headers : headers, max_bytes, 0, &response,
		                           report)) != 0)
			goto done;
		if (shard)
			result->shard_bytes = response.body.len;
		status = dirauth_update_feed(lookup, response.status, response.content_encoding,
		                             response.body.data, response.body.len, &outcome);
		if (status != DIRAUTH_SUCCESS) {
			rc = DIRAUTH_ERR_REFUSED;
			ctl_report_fail(report, ctl_client_exit_code(status), "%s: %s: %s (%s)", what, label,
			                ctl_client_detail(&outcome, options->namespace_name),
			                dirauth_status_name(status));
			goto done;
		}
	}
	if (read_view(lookup, &result->view, &outcome) != 0) {
		rc = DIRAUTH_ERR_NOMEM;
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "%s: the proof cannot be read: %s", what,
		                outcome.detail[0] ? outcome.detail : "out of memory");
		goto done;
	}
	rc = 0;
done:
	if (rc == 0 && report->exit_code != CTL_EXIT_OK)
		rc = DIRAUTH_ERR_REFUSED;
	dirauth_result_clear(&outcome);
	dirauth_update_free(lookup);
	dirauth_context_free(context);
	net_response_free(&response);
	buffer_free(&url);
	buffer_free(&session.state);
	return rc;
}

void ctl_lookup_print(const struct ctl_lookup_result *result, FILE *out)
{
	const struct dirauth_record_view *view = &result->view;
	fprintf(out,
	        "verified snapshot %s epoch %" PRIu64 ": %" PRIu64
	        " records, signed by %zu of %zu authorities (%s)\n",
	        result->namespace_name, view->epoch, view->record_count, view->signer_count,
	        view->authority_count, view->signer_names);
	fprintf(out, "record shard %s: %zu bytes as served, proven against the records root\n", view->shard,
	        result->shard_bytes);
	if (!view->present) {
		fprintf(out, "absent: no record between ");
		if (view->has_before)
			fprintf(out, "leaf %" PRIu64 " (%s)", view->leaf_index - 1, view->before_id);
		else
			fprintf(out, "the start of the tree");
		fprintf(out, " and ");
		if (view->has_after)
			fprintf(out, "leaf %" PRIu64 " (%s)\n", view->leaf_index, view->after_id);
		else
			fprintf(out, "the end of the tree\n");
		for (size_t i = 0; i < view->revocation_count && i < view->revocation_cap; i++) {
			const struct dirauth_record_revocation *r = &view->revocations[i];
			if (r->whole_service)
				fprintf(out, "revoked: the whole service, since epoch %" PRIu64 "\n",
				        r->since);
			else
				fprintf(out, "revoked: endpoint %s, since epoch %" PRIu64 "\n",
				        r->endpoint_id, r->since);
		}
		return;
	}
	fprintf(out, "service %s: present at leaf %" PRIu64 ", not revoked in this snapshot\n",
	        view->service_id, view->leaf_index);
	fprintf(out, "class %s, provider %s, sequence %" PRIu64 ", expires %" PRIu64 "\n",
	        view->service_class, view->provider, view->sequence, view->expires);
	for (size_t i = 0; i < view->endpoint_count && i < view->endpoint_cap; i++) {
		const struct dirauth_record_endpoint *e = &view->endpoints[i];
		fprintf(out, "endpoint %s %s %s %s %s %s health %s", e->endpoint.endpoint_id,
		        e->endpoint.transport, e->endpoint.address, e->endpoint.region, e->endpoint.capacity,
		        e->endpoint.profile, e->has_statement ? e->endpoint.health : "unknown");
		if (e->has_statement)
			fprintf(out, " (by the %s key, issued at %" PRIu64 "%s%s)", e->health_signer,
			        e->health_issued_at, e->health_capacity[0] ? ", capacity " : "",
			        e->health_capacity);
		else
			fprintf(out, " (no fresh statement: treat as unavailable)");
		fprintf(out, "\n");
	}
}
