/*
 * fetch_source.c: where a fetch's answers come from (see fetch_source.h): the server, through
 * net/ and the run's kept-alive connections, or a snapshot already downloaded.
 */
#include "ctl/fetch_source.h"

#include "ctl/exchange.h"
#include "base/error.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define WHAT_MAX (NAMESPACE_NAME_MAX + 16)

/* Reads a canonical decimal at *text (advanced past it). */
static int take_number(const char **text, uint64_t *out)
{
	const char *c = *text;
	uint64_t value = 0;
	if (*c < '0' || *c > '9' || (*c == '0' && c[1] >= '0' && c[1] <= '9'))
		return -1;
	for (; *c >= '0' && *c <= '9'; c++) {
		if (value > (UINT64_MAX - (uint64_t)(*c - '0')) / 10)
			return -1;
		value = value * 10 + (uint64_t)(*c - '0');
	}
	*text = c;
	*out = value;
	return 0;
}

/* What path (the library's, for namespace_name) asks for. */
void ctl_fetch_request_of(const char *path, const char *namespace_name, struct ctl_fetch_request *r)
{
	size_t n = strlen(namespace_name);
	const char *rest = path;

	memset(r, 0, sizeof(*r));
	r->path = path;
	r->kind = CTL_FETCH_REQUEST_OTHER;
	snprintf(r->label, sizeof(r->label), "%.48s", path);
	if (strcmp(path, "/v1/certificates") == 0) {
		r->kind = CTL_FETCH_REQUEST_CERTIFICATES;
		snprintf(r->label, sizeof(r->label), "certificates");
		return;
	}
	if (strncmp(rest, "/v1/", 4) != 0 || strncmp(rest + 4, namespace_name, n) != 0 || rest[4 + n] != '/')
		return;
	rest += 5 + n;
	if (strcmp(rest, "snapshots/latest") == 0) {
		r->kind = CTL_FETCH_REQUEST_LATEST;
		snprintf(r->label, sizeof(r->label), "latest header");
	} else if (strncmp(rest, "snapshots/", 10) == 0 && (rest += 10, take_number(&rest, &r->epoch) == 0)) {
		if (*rest == '\0') {
			r->kind = CTL_FETCH_REQUEST_LINK;
			snprintf(r->label, sizeof(r->label), "history: epoch %" PRIu64, r->epoch);
		} else if (strcmp(rest, "/body") == 0) {
			r->kind = CTL_FETCH_REQUEST_BODY;
			snprintf(r->label, sizeof(r->label), "body");
		} else if (strncmp(rest, "/diff/", 6) == 0) {
			r->kind = CTL_FETCH_REQUEST_DIFF;
			snprintf(r->label, sizeof(r->label), "diff");
		}
	} else if (strncmp(rest, "log/proof/", 10) == 0 && (rest += 10, take_number(&rest, &r->epoch) == 0) &&
	           *rest == '\0') {
		r->kind = CTL_FETCH_REQUEST_LOG_PROOF;
		snprintf(r->label, sizeof(r->label), "proof");
	} else if (strncmp(rest, "log/consistency/", 16) == 0 &&
	           (rest += 16, take_number(&rest, &r->old_size) == 0) && *rest == '/' &&
	           (rest++, take_number(&rest, &r->size) == 0) && *rest == '\0') {
		r->kind = CTL_FETCH_REQUEST_CONSISTENCY;
		snprintf(r->label, sizeof(r->label), "consistency");
	}
}

/* The start of a message about r: "fetch <ns>", or "fetch <ns>: log" for the log's documents. */
static void what_of_request(const char *namespace_name, const struct ctl_fetch_request *r,
                            char what[WHAT_MAX + 8])
{
	if (r->kind == CTL_FETCH_REQUEST_LOG_PROOF || r->kind == CTL_FETCH_REQUEST_CONSISTENCY)
		snprintf(what, WHAT_MAX + 8, "fetch %s: log", namespace_name);
	else
		snprintf(what, WHAT_MAX + 8, "fetch %s", namespace_name);
}

/* The stable code of a JSON error body, {"error":"<code>",...}, is code. */
static int error_code_is(const struct buffer *body, const char *code)
{
	char prefix[64];
	int n = snprintf(prefix, sizeof(prefix), "{\"error\":\"%s\"", code);
	return n > 0 && body->len >= (size_t)n && memcmp(body->data, prefix, (size_t)n) == 0;
}

static int network_answer(struct ctl_fetch_source *source, const char *namespace_name,
                          const struct ctl_fetch_request *r, size_t max_bytes, struct ctl_fetch_answer *out,
                          struct ctl_report *report)
{
	struct ctl_fetch_network_source *n = (struct ctl_fetch_network_source *)source;
	const char *authorization = n->options->authorization;
	/* A private namespace's routes answer only to its capability; the certificates never see it. */
	const char *const namespace_headers[] = {authorization, NULL};
	const char *const body_headers[] = {"Accept-Encoding: zstd, gzip", authorization, NULL};
	const char *const *headers = r->kind == CTL_FETCH_REQUEST_CERTIFICATES ? NULL
	                             : r->kind == CTL_FETCH_REQUEST_BODY || r->kind == CTL_FETCH_REQUEST_DIFF
	                                 ? body_headers
	                                 : namespace_headers;
	int allow_missing = r->kind == CTL_FETCH_REQUEST_LINK || r->kind == CTL_FETCH_REQUEST_LOG_PROOF ||
	                    r->kind == CTL_FETCH_REQUEST_DIFF;
	char what[WHAT_MAX + 8];
	struct ctl_report scratch;
	int rc;

	what_of_request(namespace_name, r, what);
	net_response_free(&n->response);
	net_response_init(&n->response);
	buffer_reset(&n->url);
	if (buffer_appendf(&n->url, "%.*s%s", (int)n->base_len, n->options->server_url, r->path) != 0) {
		ctl_report_fail(report, CTL_EXIT_USAGE, "%s: server URL too long", what);
		return DIRAUTH_ERR_BOUNDS;
	}
	ctl_report_init(&scratch);
	rc = ctl_exchange_get_pooled(n->pool, what, r->label, (const char *)n->url.data, headers, max_bytes,
	                             allow_missing, &n->response,
	                             r->kind == CTL_FETCH_REQUEST_DIFF ? &scratch : report);
	if (rc != 0 && r->kind == CTL_FETCH_REQUEST_DIFF) {
		/* A diff is a saving: a server that fails on it leaves the whole body to be asked for. */
		*out = (struct ctl_fetch_answer){n->response.status, "", NULL, 0};
		return 0;
	}
	if (rc != 0)
		return rc;
	if (r->kind == CTL_FETCH_REQUEST_LOG_PROOF && n->response.status == 404) {
		char description[CTL_REPORT_MAX / 2];
		net_describe_error(&n->response, description, sizeof(description));
		/* Published but not yet under a checkpoint: the log follows the publication. */
		if (error_code_is(&n->response.body, "epoch_not_in_log") ||
		    error_code_is(&n->response.body, "epoch_not_in_tree"))
			ctl_report_fail(
			    report, CTL_EXIT_TEMPFAIL,
			    "%s: epoch %" PRIu64
			    " is not yet under a checkpoint of the server's log (%s); try again later",
			    what, r->epoch, description);
		else
			ctl_report_fail(report, CTL_EXIT_PROTOCOL, "%s: proof: %s", what, description);
		return DIRAUTH_ERR_REFUSED;
	}
	*out = (struct ctl_fetch_answer){n->response.status, n->response.content_encoding,
	                                 n->response.body.data, n->response.body.len};
	return 0;
}

void ctl_fetch_network_source_init(struct ctl_fetch_network_source *n,
                                   const struct ctl_fetch_options *options)
{
	memset(n, 0, sizeof(*n));
	n->source.answer = network_answer;
	n->options = options;
	n->base_len = ctl_exchange_url_length(options->server_url);
	net_response_init(&n->response);
	buffer_init(&n->url);
	/* The run's requests share kept-alive connections: a history of many epochs costs one
	 * connection, not one each. Without a pool (no memory), each opens its own. */
	if (net_pool_new(NULL, &n->pool) != 0)
		n->pool = NULL;
}

void ctl_fetch_network_source_release(struct ctl_fetch_network_source *n)
{
	net_response_free(&n->response);
	net_pool_free(n->pool);
	buffer_free(&n->url);
}

static int memory_answer(struct ctl_fetch_source *source, const char *namespace_name,
                         const struct ctl_fetch_request *r, size_t max_bytes, struct ctl_fetch_answer *out,
                         struct ctl_report *report)
{
	const struct ctl_fetch_input *input = ((struct ctl_fetch_memory_source *)source)->input;
	*out = (struct ctl_fetch_answer){404, "", NULL, 0};
	switch (r->kind) {
	case CTL_FETCH_REQUEST_CERTIFICATES:
		*out = (struct ctl_fetch_answer){200, "", input->certificates, input->certificates_len};
		break;
	case CTL_FETCH_REQUEST_LATEST:
		*out = (struct ctl_fetch_answer){200, "", input->header_note, input->header_note_len};
		break;
	case CTL_FETCH_REQUEST_LINK:
		for (size_t i = 0; i < input->link_count; i++)
			if (input->links[i].epoch == r->epoch)
				*out = (struct ctl_fetch_answer){200, "", input->links[i].note,
				                                 input->links[i].note_len};
		break;
	case CTL_FETCH_REQUEST_LOG_PROOF:
		*out = (struct ctl_fetch_answer){200, "", input->proof, input->proof_len};
		break;
	case CTL_FETCH_REQUEST_CONSISTENCY:
		if (input->consistency == NULL) {
			ctl_report_fail(report, CTL_EXIT_DATA,
			                "fetch %s: log: no consistency proof from size %" PRIu64
			                " to %" PRIu64,
			                namespace_name, r->old_size, r->size);
			return DIRAUTH_ERR_PROOF;
		}
		*out = (struct ctl_fetch_answer){200, "", input->consistency, input->consistency_len};
		break;
	case CTL_FETCH_REQUEST_BODY:
		*out = (struct ctl_fetch_answer){200, input->body_encoding, input->body, input->body_len};
		break;
	case CTL_FETCH_REQUEST_DIFF:
	case CTL_FETCH_REQUEST_OTHER:
		break;
	}
	if (out->len > max_bytes) {
		/* As a download is cut at the step's bound. */
		char what[WHAT_MAX + 8];
		what_of_request(namespace_name, r, what);
		ctl_report_fail(report, CTL_EXIT_DATA, "%s: %s: response larger than %zu bytes", what,
		                r->label, max_bytes);
		return DIRAUTH_ERR_BOUNDS;
	}
	return 0;
}

void ctl_fetch_memory_source_init(struct ctl_fetch_memory_source *m, const struct ctl_fetch_input *input)
{
	m->source.answer = memory_answer;
	m->input = input;
}
