/*
 * metrics_routes.c: GET /v1/metrics, the authority's counters and gauges in the Prometheus text
 * format (version 0.0.4).
 *
 * Every figure is an aggregate over the whole server: counts of submissions, commits and
 * refusals by reason, how full the store is, what the read path loaded, the latest epoch of each
 * namespace. None names or counts a client (hard rule 8): there is no per-address or per-request
 * figure, and refusals are counted by reason only. The metrics are public, so the figures of one
 * namespace are those of the public namespaces only: a private namespace appears in no line, not
 * even as a count of private namespaces, as its existence is for its capability holders
 * (server/http/access.h). Its traffic is in the server-wide totals, which name nothing.
 */
#include "server/http/routes.h"

#include "base/buffer.h"
#include "server/readpath/prepared.h"
#include "server/store/registrations.h"
#include "server/store/snapshots.h"
#include "server/store/store.h"

#include <stdio.h>

static int metric(struct buffer *out, const char *name, const char *type, const char *help)
{
	return buffer_appendf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

enum MHD_Result http_serve_metrics(struct http_request *request)
{
	const struct http_options *o = &request->server->options;
	struct store_statistics store;
	struct prepared_statistics prepared;
	uint64_t guard[GUARD_REASON_COUNT];
	size_t pending = 0, waiting = 0, admitted = 0;
	struct buffer out;
	int rc = 0;

	buffer_init(&out);
	if (store_statistics(o->store, &store) != 0)
		return respond_error(request->connection, NULL, API_ERROR_UNAVAILABLE,
		                     "The store cannot be read.");
	prepared_set_statistics(o->prepared, &prepared);
	http_guard_counts(request->server->guard, guard);
	http_guard_connection_counts(request->server->guard, &pending, &waiting, &admitted);

	rc |= metric(&out, "dirauth_store_submissions_total", "counter", "Registrations the store answered.");
	rc |= buffer_appendf(&out, "dirauth_store_submissions_total %llu\n",
	                     (unsigned long long)store.submissions);
	rc |= metric(&out, "dirauth_store_commits_total", "counter", "Group commits that stored something.");
	rc |= buffer_appendf(&out, "dirauth_store_commits_total %llu\n", (unsigned long long)store.commits);
	rc |= metric(&out, "dirauth_store_committer_idle_seconds_total", "counter",
	             "Time the store's committer waited for work; the rest of the time it was busy.");
	rc |= buffer_appendf(&out, "dirauth_store_committer_idle_seconds_total %.6f\n",
	                     (double)store.committer_idle_ns / 1e9);
	rc |= metric(&out, "dirauth_store_refused_full_total", "counter",
	             "Registrations refused because the store was past its fill line.");
	rc |= buffer_appendf(&out, "dirauth_store_refused_full_total %llu\n",
	                     (unsigned long long)store.refused_full);
	rc |= metric(&out, "dirauth_store_map_bytes", "gauge", "Bytes the database may grow to.");
	rc |= buffer_appendf(&out, "dirauth_store_map_bytes %zu\n", store.map_size);
	rc |= metric(&out, "dirauth_store_used_bytes", "gauge",
	             "Bytes of the database in use (high-water mark).");
	rc |= buffer_appendf(&out, "dirauth_store_used_bytes %zu\n", store.map_used);
	rc |=
	    metric(&out, "dirauth_store_free_bytes", "gauge",
	           "Of the bytes in use, those of freed pages that are written again before the file grows.");
	rc |= buffer_appendf(&out, "dirauth_store_free_bytes %zu\n", store.map_free);
	rc |= metric(&out, "dirauth_store_refuse_bytes", "gauge",
	             "Bytes in use less free bytes above which registrations are refused.");
	rc |= buffer_appendf(&out, "dirauth_store_refuse_bytes %zu\n",
	                     store.map_size / 100 * o->config->store.refuse_percent);

	rc |= metric(&out, "dirauth_namespace_records", "gauge", "Latest registrations a namespace holds.");
	for (size_t i = 0; i < o->config->namespace_count; i++) {
		struct store_namespace_usage usage;
		if (config_namespace_is_private(o->config, i))
			continue;
		if (store_namespace_usage(o->store, o->config->namespaces[i].name, &usage) == 0)
			rc |=
			    buffer_appendf(&out, "dirauth_namespace_records{namespace=\"%s\"} %llu\n",
			                   o->config->namespaces[i].name, (unsigned long long)usage.records);
	}
	rc |= metric(&out, "dirauth_namespace_latest_epoch", "gauge",
	             "The latest published epoch of a namespace.");
	for (size_t i = 0; i < o->config->namespace_count; i++) {
		uint64_t epoch;
		if (config_namespace_is_private(o->config, i))
			continue;
		if (store_snapshot_latest(o->store, o->config->namespaces[i].name, &epoch) == 0)
			rc |= buffer_appendf(&out, "dirauth_namespace_latest_epoch{namespace=\"%s\"} %llu\n",
			                     o->config->namespaces[i].name, (unsigned long long)epoch);
	}

	rc |= metric(&out, "dirauth_http_refused_total", "counter",
	             "Connections refused or closed by the front door, by reason.");
	for (int r = 0; r < GUARD_REASON_COUNT; r++)
		rc |= buffer_appendf(&out, "dirauth_http_refused_total{reason=\"%s\"} %llu\n",
		                     http_guard_reason_name((enum http_guard_reason)r),
		                     (unsigned long long)guard[r]);
	rc |= metric(&out, "dirauth_http_connections", "gauge",
	             "Open connections: waiting for a first head, waiting for room, or served.");
	rc |= buffer_appendf(&out, "dirauth_http_connections{state=\"pending\"} %zu\n", pending);
	rc |= buffer_appendf(&out, "dirauth_http_connections{state=\"waiting\"} %zu\n", waiting);
	rc |= buffer_appendf(&out, "dirauth_http_connections{state=\"served\"} %zu\n", admitted);
	rc |= metric(&out, "dirauth_readpath_loads_total", "counter", "Older epochs loaded from the store.");
	rc |= buffer_appendf(&out, "dirauth_readpath_loads_total{part=\"header\"} %llu\n",
	                     (unsigned long long)prepared.header_loads);
	rc |= buffer_appendf(&out, "dirauth_readpath_loads_total{part=\"body\"} %llu\n",
	                     (unsigned long long)prepared.body_loads);
	if (rc) {
		buffer_free(&out);
		return respond_error(request->connection, NULL, API_ERROR_INTERNAL, "Out of memory.");
	}
	enum MHD_Result result = respond_bytes(request->connection, MHD_HTTP_OK,
	                                       "text/plain; version=0.0.4; charset=utf-8", out.data, out.len);
	buffer_free(&out);
	return result;
}
