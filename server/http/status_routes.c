/*
 * status_routes.c: what the authority says about itself: liveness, readiness, its clock and the
 * signer's key certificates.
 */
#include "server/http/routes.h"

#include "base/error.h"
#include "server/signing/signer_client.h"
#include "server/signing/signer_health.h"
#include "server/store/snapshots.h"

#include <stdio.h>

enum MHD_Result http_serve_health(struct http_request *request)
{
	static const char ok[] = "{\"status\":\"ok\"}";
	return respond_bytes(request->connection, MHD_HTTP_OK, "application/json", ok, sizeof ok - 1);
}

/* Ready: the store, the clock and the signer answer. */
enum MHD_Result http_serve_ready(struct http_request *request)
{
	const struct http_options *o = &request->server->options;
	uint64_t value;
	char why[SIGNER_HEALTH_DETAIL_MAX];
	int rc = store_snapshot_latest(o->store, o->config->namespaces[0].name, &value);
	if (rc != 0 && rc != DIRAUTH_ERR_NOT_FOUND)
		return respond_error(request->connection, NULL, API_ERROR_UNAVAILABLE,
		                     "The store cannot be read.");
	if (clock_now(o->clock, &value) != 0)
		return respond_error(request->connection, NULL, API_ERROR_UNAVAILABLE,
		                     "The clock cannot be read.");
	if (signer_health_check(o->signer_health, why, sizeof why) != 0)
		return respond_error(request->connection, NULL, API_ERROR_UNAVAILABLE, why);
	static const char ready[] = "{\"status\":\"ready\"}";
	return respond_bytes(request->connection, MHD_HTTP_OK, "application/json", ready, sizeof ready - 1);
}

/* The authority's name and the time by the clock it runs on. The HTTP Date header comes from the
 * system clock (libmicrohttpd's), which is not the clock that decides the epochs; a health page
 * comparing authorities needs the latter, and the name to tell which member answered. Not
 * cached: a stale time would read as skew. */
enum MHD_Result http_serve_status(struct http_request *request)
{
	const struct http_options *o = &request->server->options;
	uint64_t now;
	char name[2 * NOTE_NAME_MAX + 1], answer[2 * NOTE_NAME_MAX + 64];
	size_t used = 0;
	if (clock_now(o->clock, &now) != 0)
		return respond_error(request->connection, NULL, API_ERROR_UNAVAILABLE,
		                     "The clock cannot be read.");
	/* A key name is printable ASCII without spaces; '"' and '\\' are escaped for JSON. */
	for (const char *p = o->config->authority_name; *p && used + 2 < sizeof name; p++) {
		if (*p == '"' || *p == '\\')
			name[used++] = '\\';
		name[used++] = *p;
	}
	name[used] = '\0';
	int len = snprintf(answer, sizeof answer, "{\"authority\":\"%s\",\"time\":%llu}", name,
	                   (unsigned long long)now);
	return respond_bytes(request->connection, MHD_HTTP_OK, "application/json", answer, (size_t)len);
}

/* The signer's certificate bundle, asked afresh: it changes only when the operator rotates the
 * signing key, and a minute of caching downstream covers the load. */
enum MHD_Result http_serve_certificates(struct http_request *request)
{
	const struct http_options *o = &request->server->options;
	struct buffer bundle;
	char why[SIGNER_DETAIL_MAX + 1], detail[SIGNER_DETAIL_MAX + 64];
	buffer_init(&bundle);
	int rc =
	    signer_client_query(o->signer, SIGNER_OP_GET_CERTIFICATES, NULL, 0, &bundle, why, sizeof why);
	signer_health_note(o->signer_health, rc == DIRAUTH_ERR_UNAVAILABLE ? rc : 0, why);
	if (rc) {
		buffer_free(&bundle);
		snprintf(detail, sizeof detail, "signer %s: %s",
		         rc == DIRAUTH_ERR_UNAVAILABLE ? "unreachable" : "refused",
		         why[0] ? why : dirauth_strerror(rc));
		return respond_error(request->connection, NULL, API_ERROR_UNAVAILABLE, detail);
	}
	if (o->authorities) {
		/* A member of several authorities serves the whole set's certificates, so that a mirror
		 * asking it alone can count every member's signature. */
		struct buffer set;
		buffer_init(&set);
		rc = authority_set_bundle(o->authorities, bundle.data, bundle.len, &set);
		buffer_free(&bundle);
		if (rc) {
			buffer_free(&set);
			return respond_error(request->connection, NULL, API_ERROR_INTERNAL,
			                     dirauth_strerror(rc));
		}
		bundle = set;
	}
	struct MHD_Response *response = MHD_create_response_from_buffer(
	    bundle.len, bundle.data ? (void *)bundle.data : (void *)"", MHD_RESPMEM_MUST_COPY);
	buffer_free(&bundle);
	if (!response)
		return MHD_NO;
	if (MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8") !=
	        MHD_YES ||
	    MHD_add_response_header(response, MHD_HTTP_HEADER_CACHE_CONTROL, "public, max-age=60") !=
	        MHD_YES) {
		MHD_destroy_response(response);
		return MHD_NO;
	}
	return respond_queue_and_destroy(request->connection, MHD_HTTP_OK, response);
}
