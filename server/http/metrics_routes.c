/*
 * metrics_routes.c: GET /v1/metrics, the authority's counters, gauges and histograms in the
 * Prometheus text format (version 0.0.4); every family is listed in docs/api.md ("Metrics").
 *
 * Every figure is an aggregate over the whole server: counts of submissions, commits and
 * refusals by reason, how full the store is, what the read path loaded, each namespace's round
 * (epochs published and failed by reason, how long its steps took, its latest snapshot and diffs,
 * its log), each member of the authority set (labelled by its configured name, never an address:
 * what it sent and when, what was refused of it, the exchanges with it that failed, when its
 * certificate ends), the
 * cosigning of the log and the signer. None names or counts a client (hard rule 8): there is no
 * per-address or per-request figure, and refusals are counted by reason only. The metrics are
 * public, so the figures of one namespace are those of the public namespaces only: a private
 * namespace appears in no line, not even as a count of private namespaces, as its existence is
 * for its capability holders (server/http/access.h). Its traffic is in the server-wide and
 * per-member totals, which name no namespace.
 *
 * Each module counts its own figures where they happen and hands them over through its header
 * (store_statistics, round_statistics_get, peer_client_failures, authority_set_certificate_not_after,
 * translog_cosigning_statistics, signer_health_statistics); this file only chooses the lines, and
 * metrics_format.h spells them.
 */
#include "server/http/routes.h"

#include "base/buffer.h"
#include "base/error.h"
#include "schema/note.h"
#include "schema/snapshot.h"
#include "server/http/metrics_format.h"
#include "server/readpath/prepared.h"
#include "server/store/registrations.h"
#include "server/store/snapshots.h"
#include "server/store/store.h"
#include "server/store/tlog_table.h"

#include <stdio.h>
#include <stdlib.h>

/* The families that were there first: the store, the namespaces' records and latest epochs, the
 * front door and the read path. */
static int store_and_front_door(struct http_request *request, const struct store_statistics *store,
                                struct buffer *out)
{
	const struct http_options *o = &request->server->options;
	struct prepared_statistics prepared;
	uint64_t guard[GUARD_REASON_COUNT];
	size_t pending = 0, waiting = 0, admitted = 0;
	int rc = 0;
	prepared_set_statistics(o->prepared, &prepared);
	http_guard_counts(request->server->guard, guard);
	http_guard_connection_counts(request->server->guard, &pending, &waiting, &admitted);

	rc |= metrics_family(out, "dirauth_store_submissions_total", "counter",
	                     "Registrations the store answered.");
	rc |= metrics_sample_u64(out, "dirauth_store_submissions_total", NULL, store->submissions);
	rc |= metrics_family(out, "dirauth_store_commits_total", "counter",
	                     "Group commits that stored something.");
	rc |= metrics_sample_u64(out, "dirauth_store_commits_total", NULL, store->commits);
	rc |= metrics_family(out, "dirauth_store_committer_idle_seconds_total", "counter",
	                     "Time the store's committer waited for work; the rest of the time it was busy.");
	rc |= metrics_sample_double(out, "dirauth_store_committer_idle_seconds_total", NULL,
	                            (double)store->committer_idle_ns / 1e9);
	rc |= metrics_family(out, "dirauth_store_refused_full_total", "counter",
	                     "Registrations refused because the store was past its fill line.");
	rc |= metrics_sample_u64(out, "dirauth_store_refused_full_total", NULL, store->refused_full);
	rc |= metrics_family(out, "dirauth_store_map_bytes", "gauge", "Bytes the database may grow to.");
	rc |= metrics_sample_u64(out, "dirauth_store_map_bytes", NULL, store->map_size);
	rc |= metrics_family(out, "dirauth_store_used_bytes", "gauge",
	                     "Bytes of the database in use (high-water mark).");
	rc |= metrics_sample_u64(out, "dirauth_store_used_bytes", NULL, store->map_used);
	rc |= metrics_family(
	    out, "dirauth_store_free_bytes", "gauge",
	    "Of the bytes in use, those of freed pages that are written again before the file grows.");
	rc |= metrics_sample_u64(out, "dirauth_store_free_bytes", NULL, store->map_free);
	rc |= metrics_family(out, "dirauth_store_refuse_bytes", "gauge",
	                     "Bytes in use less free bytes above which registrations are refused.");
	rc |= metrics_sample_u64(out, "dirauth_store_refuse_bytes", NULL,
	                         store->map_size / 100 * o->config->store.refuse_percent);

	rc |= metrics_family(out, "dirauth_http_refused_total", "counter",
	                     "Connections refused or closed by the front door, by reason.");
	for (int r = 0; r < GUARD_REASON_COUNT; r++) {
		struct metrics_labels labels;
		metrics_labels_init(&labels);
		metrics_labels_add(&labels, "reason", http_guard_reason_name((enum http_guard_reason)r));
		rc |= metrics_sample_u64(out, "dirauth_http_refused_total", &labels, guard[r]);
	}
	rc |= metrics_family(out, "dirauth_http_connections", "gauge",
	                     "Open connections: waiting for a first head, waiting for room, or served.");
	const char *states[] = {"pending", "waiting", "served"};
	size_t counts[] = {pending, waiting, admitted};
	for (size_t s = 0; s < 3; s++) {
		struct metrics_labels labels;
		metrics_labels_init(&labels);
		metrics_labels_add(&labels, "state", states[s]);
		rc |= metrics_sample_u64(out, "dirauth_http_connections", &labels, counts[s]);
	}
	rc |= metrics_family(out, "dirauth_readpath_loads_total", "counter",
	                     "Older epochs loaded from the store.");
	struct metrics_labels header_part, body_part;
	metrics_labels_init(&header_part);
	metrics_labels_add(&header_part, "part", "header");
	metrics_labels_init(&body_part);
	metrics_labels_add(&body_part, "part", "body");
	rc |= metrics_sample_u64(out, "dirauth_readpath_loads_total", &header_part, prepared.header_loads);
	rc |= metrics_sample_u64(out, "dirauth_readpath_loads_total", &body_part, prepared.body_loads);
	return rc;
}

/* The public namespaces' indexes, in configuration order. */
static size_t public_namespaces(const struct config *config, size_t *out)
{
	size_t count = 0;
	for (size_t i = 0; i < config->namespace_count; i++)
		if (!config_namespace_is_private(config, i))
			out[count++] = i;
	return count;
}

static void namespace_labels(struct metrics_labels *labels, const struct config *config, size_t i)
{
	metrics_labels_init(labels);
	metrics_labels_add(labels, "namespace", config->namespaces[i].name);
}

/* What the store holds of each public namespace: registrations, the latest snapshot (epoch,
 * records, body bytes per encoding) and the log. */
static int namespaces_stored(struct http_request *request, const size_t *public, size_t count,
                             struct buffer *out)
{
	const struct http_options *o = &request->server->options;
	const struct config *config = o->config;
	struct latest {
		int have;
		uint64_t epoch, records;
		int have_body;
		struct store_body_info body;
		struct store_log_state log;
		int have_log;
		uint64_t served;
		int have_served;
	} *latest = calloc(count ? count : 1, sizeof *latest);
	struct buffer note;
	int rc = 0;
	if (!latest)
		return DIRAUTH_ERR_NOMEM;
	buffer_init(&note);
	for (size_t p = 0; p < count; p++) {
		const char *name = config->namespaces[public[p]].name;
		struct latest *l = &latest[p];
		if (store_snapshot_latest(o->store, name, &l->epoch) == 0) {
			l->have = 1;
			int got = store_snapshot_get(o->store, name, l->epoch, &note, &l->body);
			if (got == DIRAUTH_ERR_STALE)
				got = store_snapshot_get(o->store, name, l->epoch, &note, NULL);
			else if (got == 0)
				l->have_body = 1;
			struct note *parsed = NULL;
			struct snapshot_header header;
			if (got == 0 && note_parse(note.data, note.len, &parsed) == 0 &&
			    snapshot_header_parse(parsed->text, parsed->text_len, &header) == 0)
				l->records = header.record_count;
			note_free(parsed);
		}
		l->have_log = store_log_state(o->store, name, &l->log) == 0;
		l->have_served = store_log_published(o->store, name, &l->served) == 0;
	}
	buffer_free(&note);

	rc |= metrics_family(out, "dirauth_namespace_records", "gauge",
	                     "Latest registrations a namespace holds.");
	for (size_t p = 0; p < count; p++) {
		struct store_namespace_usage usage;
		struct metrics_labels labels;
		namespace_labels(&labels, config, public[p]);
		if (store_namespace_usage(o->store, config->namespaces[public[p]].name, &usage) == 0)
			rc |= metrics_sample_u64(out, "dirauth_namespace_records", &labels, usage.records);
	}
	rc |= metrics_family(out, "dirauth_namespace_latest_epoch", "gauge",
	                     "The latest published epoch of a namespace.");
	for (size_t p = 0; p < count; p++) {
		struct metrics_labels labels;
		namespace_labels(&labels, config, public[p]);
		if (latest[p].have)
			rc |= metrics_sample_u64(out, "dirauth_namespace_latest_epoch", &labels,
			                         latest[p].epoch);
	}
	rc |= metrics_family(out, "dirauth_snapshot_records", "gauge",
	                     "Records of a namespace's latest published snapshot.");
	for (size_t p = 0; p < count; p++) {
		struct metrics_labels labels;
		namespace_labels(&labels, config, public[p]);
		if (latest[p].have)
			rc |= metrics_sample_u64(out, "dirauth_snapshot_records", &labels, latest[p].records);
	}
	rc |= metrics_family(out, "dirauth_snapshot_body_bytes", "gauge",
	                     "Bytes of a namespace's latest published body, per content encoding.");
	for (size_t p = 0; p < count; p++)
		for (int e = 0; latest[p].have_body && e < ENCODING_COUNT; e++) {
			struct metrics_labels labels;
			namespace_labels(&labels, config, public[p]);
			metrics_labels_add(&labels, "encoding",
			                   content_encoding_name((enum content_encoding)e));
			rc |= metrics_sample_u64(out, "dirauth_snapshot_body_bytes", &labels,
			                         latest[p].body.size[e]);
		}
	rc |= metrics_family(out, "dirauth_log_entries", "gauge",
	                     "Leaves of a namespace's transparency log (one per published snapshot).");
	for (size_t p = 0; p < count; p++) {
		struct metrics_labels labels;
		namespace_labels(&labels, config, public[p]);
		if (latest[p].have_log)
			rc |= metrics_sample_u64(out, "dirauth_log_entries", &labels, latest[p].log.size);
	}
	rc |= metrics_family(out, "dirauth_log_checkpoint_entries", "gauge",
	                     "Tree size of a namespace's latest stored checkpoint.");
	for (size_t p = 0; p < count; p++) {
		struct metrics_labels labels;
		namespace_labels(&labels, config, public[p]);
		if (latest[p].have_log && latest[p].log.has_checkpoint)
			rc |= metrics_sample_u64(out, "dirauth_log_checkpoint_entries", &labels,
			                         latest[p].log.checkpoint_size);
	}
	rc |=
	    metrics_family(out, "dirauth_log_served_entries", "gauge",
	                   "Tree size of the checkpoint a namespace's log serves (cosigned by the quorum).");
	for (size_t p = 0; p < count; p++) {
		struct metrics_labels labels;
		namespace_labels(&labels, config, public[p]);
		if (latest[p].have_served)
			rc |=
			    metrics_sample_u64(out, "dirauth_log_served_entries", &labels, latest[p].served);
	}
	free(latest);
	return rc;
}

/* Each public namespace's round: epochs, failures, step durations, diffs, and the members. */
static int rounds(struct http_request *request, const size_t *public, size_t count, struct buffer *out)
{
	const struct http_options *o = &request->server->options;
	const struct config *config = o->config;
	struct round_statistics *figures = calloc(count ? count : 1, sizeof *figures);
	int rc = 0;
	if (!figures)
		return DIRAUTH_ERR_NOMEM;
	for (size_t p = 0; p < count; p++)
		round_statistics_get(o->measured_round, public[p], &figures[p]);

	rc |= metrics_family(out, "dirauth_round_epoch", "gauge", "The epoch whose round is in progress.");
	for (size_t p = 0; p < count; p++) {
		struct metrics_labels labels;
		namespace_labels(&labels, config, public[p]);
		rc |= metrics_sample_u64(out, "dirauth_round_epoch", &labels, figures[p].epoch);
	}
	rc |= metrics_family(out, "dirauth_epochs_published_total", "counter",
	                     "Epochs this authority published since it started.");
	for (size_t p = 0; p < count; p++) {
		struct metrics_labels labels;
		namespace_labels(&labels, config, public[p]);
		rc |= metrics_sample_u64(out, "dirauth_epochs_published_total", &labels,
		                         figures[p].published_total);
	}
	rc |= metrics_family(out, "dirauth_epochs_failed_total", "counter",
	                     "Epochs this authority did not publish, by reason.");
	for (size_t p = 0; p < count; p++)
		for (int r = 0; r < ROUND_FAILURE_COUNT; r++) {
			struct metrics_labels labels;
			namespace_labels(&labels, config, public[p]);
			metrics_labels_add(&labels, "reason", round_failure_name((enum round_failure)r));
			rc |= metrics_sample_u64(out, "dirauth_epochs_failed_total", &labels,
			                         figures[p].failed_total[r]);
		}
	rc |= metrics_family(out, "dirauth_round_phase_duration_seconds", "histogram",
	                     "Time each step of a round took, from its first try to its completion.");
	for (size_t p = 0; p < count; p++)
		for (int ph = 0; ph < ROUND_PHASE_COUNT; ph++) {
			const struct round_duration_histogram *h = &figures[p].phases[ph];
			struct metrics_labels labels;
			namespace_labels(&labels, config, public[p]);
			metrics_labels_add(&labels, "phase", round_phase_name((enum round_phase)ph));
			rc |= metrics_histogram(out, "dirauth_round_phase_duration_seconds", &labels,
			                        round_duration_bounds_seconds, ROUND_DURATION_BUCKETS,
			                        h->buckets, (double)h->sum_ms / 1000.0);
		}
	rc |= metrics_family(out, "dirauth_snapshot_diff_bytes_total", "counter",
	                     "Bytes of the diffs built to a namespace's bodies, per content encoding.");
	for (size_t p = 0; p < count; p++)
		for (int e = 0; e < ENCODING_COUNT; e++) {
			struct metrics_labels labels;
			namespace_labels(&labels, config, public[p]);
			metrics_labels_add(&labels, "encoding",
			                   content_encoding_name((enum content_encoding)e));
			rc |= metrics_sample_u64(out, "dirauth_snapshot_diff_bytes_total", &labels,
			                         figures[p].diff_bytes[e]);
		}

	/* The members: only in a set of several (an authority alone keeps no vote). */
	if (config->member_count > 1) {
		static const struct {
			const char *name, *help;
			int signature, lateness;
		} member_families[] = {
		    {"dirauth_member_vote_epoch", "The latest epoch of which a member's vote was kept here.",
		     0, 0},
		    {"dirauth_member_signature_epoch",
		     "The latest epoch of which a member's signature over the header was kept here.", 1, 0},
		    {"dirauth_member_vote_lateness_seconds",
		     "How long after its epoch's vote time a member's latest vote arrived.", 0, 1},
		    {"dirauth_member_signature_lateness_seconds",
		     "How long after its epoch's vote deadline a member's latest signature arrived.", 1, 1},
		};
		for (size_t f = 0; f < sizeof member_families / sizeof member_families[0]; f++) {
			rc |= metrics_family(out, member_families[f].name, "gauge", member_families[f].help);
			for (size_t p = 0; p < count; p++)
				for (size_t m = 0; m < config->member_count; m++) {
					const struct round_member_figures *mf = &figures[p].members[m];
					uint64_t epoch = member_families[f].signature ? mf->signature_epoch
					                                              : mf->vote_epoch;
					struct metrics_labels labels;
					namespace_labels(&labels, config, public[p]);
					metrics_labels_add(&labels, "member", config->members[m].name);
					if (!member_families[f].lateness)
						rc |= metrics_sample_u64(out, member_families[f].name,
						                         &labels, epoch);
					else if (epoch)
						rc |=
						    metrics_sample_i64(out, member_families[f].name, &labels,
						                       member_families[f].signature
						                           ? mf->signature_lateness_seconds
						                           : mf->vote_lateness_seconds);
				}
		}
		uint64_t(*refusals)[ROUND_REFUSAL_COUNT] = calloc(CONFIG_MAX_MEMBERS, sizeof *refusals);
		if (!refusals) {
			free(figures);
			return DIRAUTH_ERR_NOMEM;
		}
		round_refusals_get(o->measured_round, refusals);
		rc |=
		    metrics_family(out, "dirauth_member_refusals_total", "counter",
		                   "Votes and signatures naming a member that were refused here, by reason.");
		for (size_t m = 0; m < config->member_count; m++)
			for (int r = 0; r < ROUND_REFUSAL_COUNT; r++) {
				struct metrics_labels labels;
				metrics_labels_init(&labels);
				metrics_labels_add(&labels, "member", config->members[m].name);
				metrics_labels_add(&labels, "reason",
				                   round_refusal_name((enum round_refusal)r));
				rc |= metrics_sample_u64(out, "dirauth_member_refusals_total", &labels,
				                         refusals[m][r]);
			}
		free(refusals);
	}
	free(figures);
	return rc;
}

/* The exchanges with each other member that failed. */
static int peer_failures(struct http_request *request, struct buffer *out)
{
	const struct http_options *o = &request->server->options;
	const struct config *config = o->config;
	int rc =
	    metrics_family(out, "dirauth_member_fetch_failures_total", "counter",
	                   "Requests to a member that got no answer or a 5xx, after retries, by reason.");
	for (size_t m = 0; m < config->member_count; m++) {
		uint64_t failures[PEER_FAILURE_COUNT];
		if (m == config->self_index)
			continue;
		peer_client_failures(o->peers, m, failures);
		for (int f = 0; f < PEER_FAILURE_COUNT; f++) {
			struct metrics_labels labels;
			metrics_labels_init(&labels);
			metrics_labels_add(&labels, "member", config->members[m].name);
			metrics_labels_add(&labels, "reason", peer_failure_name((enum peer_failure)f));
			rc |= metrics_sample_u64(out, "dirauth_member_fetch_failures_total", &labels,
			                         failures[f]);
		}
	}
	return rc;
}

/* When each member's latest certificate ends, as its ring here holds it. */
static int member_certificates(struct http_request *request, struct buffer *out)
{
	const struct http_options *o = &request->server->options;
	const struct config *config = o->config;
	int rc = metrics_family(
	    out, "dirauth_member_certificate_not_after_timestamp_seconds", "gauge",
	    "When the latest certificate of a member's signing key held here ends (unix seconds).");
	for (size_t m = 0; m < config->member_count; m++) {
		uint64_t not_after;
		struct metrics_labels labels;
		if (authority_set_certificate_not_after(o->authorities, m, &not_after) != 0)
			continue;
		metrics_labels_init(&labels);
		metrics_labels_add(&labels, "member", config->members[m].name);
		rc |= metrics_sample_u64(out, "dirauth_member_certificate_not_after_timestamp_seconds",
		                         &labels, not_after);
	}
	return rc;
}

/* The cosigning of each public namespace's checkpoints, and the answers to add-checkpoint. */
static int cosigning(struct http_request *request, const size_t *public, size_t count, struct buffer *out)
{
	const struct http_options *o = &request->server->options;
	const struct config *config = o->config;
	struct translog_cosigning_statistics *figures = malloc(sizeof *figures);
	int rc = 0;
	if (!figures)
		return DIRAUTH_ERR_NOMEM;
	translog_cosigning_statistics(o->cosigning, figures);
	rc |= metrics_family(out, "dirauth_log_cosigner_quorum", "gauge",
	                     "Distinct authorities whose cosignatures a checkpoint needs to be served.");
	rc |= metrics_sample_u64(out, "dirauth_log_cosigner_quorum", NULL, figures->quorum);
	rc |= metrics_family(out, "dirauth_log_checkpoint_cosigners", "gauge",
	                     "Distinct authorities whose cosignature a namespace's latest checkpoint holds.");
	for (size_t p = 0; p < count; p++) {
		struct metrics_labels labels;
		namespace_labels(&labels, config, public[p]);
		rc |= metrics_sample_u64(out, "dirauth_log_checkpoint_cosigners", &labels,
		                         figures->cosigners[public[p]]);
	}
	rc |=
	    metrics_family(out, "dirauth_log_cosignatures_added_total", "counter",
	                   "Cosignatures of other members and witnesses added to a namespace's checkpoints.");
	for (size_t p = 0; p < count; p++) {
		struct metrics_labels labels;
		namespace_labels(&labels, config, public[p]);
		rc |= metrics_sample_u64(out, "dirauth_log_cosignatures_added_total", &labels,
		                         figures->added[public[p]]);
	}
	rc |= metrics_family(out, "dirauth_log_witness_answers_total", "counter",
	                     "Answers of members and witnesses asked to cosign a checkpoint, by result.");
	for (size_t w = 0; w < config->member_count + config->peers.witness_count; w++) {
		if (w == config->self_index)
			continue;
		const char *name = w < config->member_count
		                       ? config->members[w].name
		                       : config->peers.witnesses[w - config->member_count].name;
		for (int a = 0; a < TRANSLOG_ANSWER_COUNT; a++) {
			struct metrics_labels labels;
			metrics_labels_init(&labels);
			metrics_labels_add(&labels, "witness", name);
			metrics_labels_add(
			    &labels, "result",
			    translog_witness_answer_name((enum translog_witness_answer_kind)a));
			rc |= metrics_sample_u64(out, "dirauth_log_witness_answers_total", &labels,
			                         figures->answers[w][a]);
		}
	}
	free(figures);
	return rc;
}

/* The signer: reachable, ready, and the not-after of each certificate it serves. */
static int signer(struct http_request *request, struct buffer *out)
{
	struct signer_health_statistics *figures = malloc(sizeof *figures);
	int rc = 0;
	if (!figures)
		return DIRAUTH_ERR_NOMEM;
	signer_health_statistics(request->server->options.signer_health, figures);
	rc |= metrics_family(out, "dirauth_signer_up", "gauge",
	                     "1 when the signer answered with its keys and certificates, else 0.");
	rc |= metrics_sample_u64(out, "dirauth_signer_up", NULL, (uint64_t)figures->reachable);
	rc |= metrics_family(out, "dirauth_signer_ready", "gauge",
	                     "1 when the signer can sign now (its key and a certificate valid now), else 0.");
	rc |= metrics_sample_u64(out, "dirauth_signer_ready", NULL, (uint64_t)figures->ready);
	rc |= metrics_family(out, "dirauth_signer_certificate_not_after_timestamp_seconds", "gauge",
	                     "When each certificate the signer serves stops being valid (unix seconds).");
	for (size_t c = 0; c < figures->certificate_count; c++) {
		char key_id[9];
		struct metrics_labels labels;
		snprintf(key_id, sizeof key_id, "%08x", (unsigned)figures->certificates[c].signing_key_id);
		metrics_labels_init(&labels);
		metrics_labels_add(&labels, "key_id", key_id);
		rc |= metrics_sample_u64(out, "dirauth_signer_certificate_not_after_timestamp_seconds",
		                         &labels, figures->certificates[c].valid_until);
	}
	free(figures);
	return rc;
}

enum MHD_Result http_serve_metrics(struct http_request *request)
{
	const struct http_options *o = &request->server->options;
	struct store_statistics store;
	size_t public[CONFIG_MAX_NAMESPACES];
	struct buffer out;
	int rc = 0;

	buffer_init(&out);
	if (store_statistics(o->store, &store) != 0)
		return respond_error(request->connection, NULL, API_ERROR_UNAVAILABLE,
		                     "The store cannot be read.");
	size_t count = public_namespaces(o->config, public);
	rc |= store_and_front_door(request, &store, &out);
	rc |= namespaces_stored(request, public, count, &out);
	if (o->measured_round)
		rc |= rounds(request, public, count, &out);
	if (o->peers)
		rc |= peer_failures(request, &out);
	if (o->authorities)
		rc |= member_certificates(request, &out);
	if (o->cosigning)
		rc |= cosigning(request, public, count, &out);
	if (o->signer_health)
		rc |= signer(request, &out);
	if (rc) {
		buffer_free(&out);
		return respond_error(request->connection, NULL, API_ERROR_INTERNAL, "Out of memory.");
	}
	enum MHD_Result result = respond_bytes(request->connection, MHD_HTTP_OK,
	                                       "text/plain; version=0.0.4; charset=utf-8", out.data, out.len);
	buffer_free(&out);
	return result;
}
