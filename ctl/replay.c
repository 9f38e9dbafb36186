/*
 * replay.c: a snapshot's revocations posted again, lowest sequence first (replay.h).
 */
#include "ctl/replay.h"

#include "ctl/endpoint.h"
#include "ctl/exchange.h"
#include "ctl/fetch_revocations.h"
#include "ctl/files.h"
#include "crypto/crypto.h"
#include "schema/encoding.h"
#include "base/error.h"
#include "schema/note.h"
#include "schema/revocation.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WHAT "replay-revocations"

/* A listed revocation, with what its note says it is. */
struct listed {
	const struct snapshot_revocation *entry;
	uint64_t sequence;
	struct note_verifier key; /* the key that signed it */
};

/* What the replay has seen so far: the keys a revocation of which was refused (their later ones
 * are not posted) and the first problem, for the message. */
struct replay {
	const char *server_url;
	const char *authorization; /* for a private namespace's statements; may be NULL */
	const char *namespace_name;
	bool namespace_readable; /* its latest snapshot was served to this client */
	struct ctl_replay_result *result;
	const struct note_verifier **refused_keys;
	size_t refused_key_count;
	char first_problem[CTL_REPORT_MAX];
};

static int by_sequence(const void *a, const void *b)
{
	uint64_t x = ((const struct listed *)a)->sequence, y = ((const struct listed *)b)->sequence;
	return (x > y) - (x < y);
}

/* "service <id>" or "endpoint <id> of service <id>", for messages. */
static void target_text(const struct snapshot_revocation *entry, char *out, size_t cap)
{
	char service[2 * SERVICE_ID_SIZE + 1], endpoint[2 * ENDPOINT_ID_SIZE + 1];
	hex_encode(entry->service_id, SERVICE_ID_SIZE, service);
	if (!entry->has_endpoint) {
		snprintf(out, cap, "service %s", service);
		return;
	}
	hex_encode(entry->endpoint_id, ENDPOINT_ID_SIZE, endpoint);
	snprintf(out, cap, "endpoint %s of service %s", endpoint, service);
}

static int read_body(const struct trust_bundle *bundle, const char *path, uint8_t **data,
                     struct snapshot_body **body, struct ctl_report *report)
{
	struct snapshot_body_limits limits;
	size_t len = 0, bound = bundle->max_body_uncompressed > SIZE_MAX
	                            ? SIZE_MAX
	                            : (size_t)bundle->max_body_uncompressed;
	const struct ctl_file_limit limit = {bound, "the trust bundle's max-body-uncompressed",
	                                     CTL_EXIT_DATA};
	int rc = ctl_file_read_reported(path, &limit, data, &len, report, WHAT ": %s", path);
	if (rc != 0)
		return rc;
	ctl_fetch_body_limits(bundle, &limits);
	rc = snapshot_body_parse_sections(*data, len, &limits, body);
	if (rc != 0)
		ctl_report_fail(report, rc == DIRAUTH_ERR_NOMEM ? CTL_EXIT_SOFTWARE : CTL_EXIT_DATA,
		                WHAT ": %s: not a snapshot body: %s", path, dirauth_strerror(rc));
	return rc;
}

/* The body's revocations in the order they are posted; *out (free it) has body->revocation_count
 * entries. */
static int order_revocations(const struct snapshot_body *body, struct listed **out, struct ctl_report *report)
{
	struct listed *listed = calloc(body->revocation_count ? body->revocation_count : 1, sizeof *listed);
	if (listed == NULL) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, WHAT ": out of memory");
		return DIRAUTH_ERR_NOMEM;
	}
	for (size_t i = 0; i < body->revocation_count; i++) {
		const struct snapshot_revocation *entry = &body->revocations[i];
		struct note *note = NULL;
		struct revocation r;
		int rc = note_parse(entry->note, entry->note_len, &note);
		if (rc == 0)
			rc = revocation_parse(note->text, note->text_len, &r);
		note_free(note);
		if (rc != 0) {
			char target[200];
			target_text(entry, target, sizeof target);
			ctl_report_fail(report, rc == DIRAUTH_ERR_NOMEM ? CTL_EXIT_SOFTWARE : CTL_EXIT_DATA,
			                WHAT ": the revocation of %s listed does not parse: %s", target,
			                dirauth_strerror(rc));
			free(listed);
			return rc;
		}
		listed[i] = (struct listed){.entry = entry, .sequence = r.sequence, .key = r.key};
	}
	qsort(listed, body->revocation_count, sizeof *listed, by_sequence);
	*out = listed;
	return 0;
}

static void note_problem(struct replay *replay, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

static void note_problem(struct replay *replay, const char *format, ...)
{
	if (replay->first_problem[0] != '\0')
		return;
	va_list args;
	va_start(args, format);
	vsnprintf(replay->first_problem, sizeof replay->first_problem, format, args);
	va_end(args);
}

static bool key_refused(const struct replay *replay, const struct note_verifier *key)
{
	for (size_t i = 0; i < replay->refused_key_count; i++)
		if (note_verifier_equal(replay->refused_keys[i], key))
			return true;
	return false;
}

/* GETs <server>/v1/<ns><path> with the namespace's capability, allowing 404. Returns 0 with
 * response filled, or a negative error with report filled. */
static int namespace_get(const struct replay *replay, const char *label, const char *path,
                         struct net_response *response, struct ctl_report *report)
{
	const char *const headers[] = {replay->authorization, NULL};
	struct buffer url;
	size_t len = ctl_exchange_url_length(replay->server_url);
	buffer_init(&url);
	int rc =
	    buffer_appendf(&url, "%.*s/v1/%s%s", (int)len, replay->server_url, replay->namespace_name, path);
	if (rc != 0) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, WHAT ": out of memory");
		return rc;
	}
	rc = ctl_exchange_get(WHAT, label, (const char *)url.data, replay->authorization ? headers : NULL,
	                      CTL_ENDPOINT_RESPONSE_MAX, 1, response, report);
	buffer_free(&url);
	return rc;
}

/* Whether the authority keeps this very note (GET /v1/<ns>/statements/<its SHA-256> answers it).
 * A 404 means "not kept" only where the namespace is served to this client: a private one
 * without its capability is answered 404 everywhere, so the first 404 is checked against the
 * namespace's latest snapshot. Returns 1 kept, 0 not, or a negative error with report filled
 * (the replay stops). */
static int statement_kept(struct replay *replay, const struct snapshot_revocation *entry,
                          const uint8_t digest[32], struct ctl_report *report)
{
	struct net_response response;
	char path[16 + 64 + 1], hex[65];
	hex_encode(digest, 32, hex);
	snprintf(path, sizeof path, "/statements/%s", hex);
	net_response_init(&response);
	int rc = namespace_get(replay, "statement", path, &response, report);
	int kept = rc == 0 && response.status == 200 && response.body.len == entry->note_len &&
	           memcmp(response.body.data, entry->note, entry->note_len) == 0;
	bool missing = rc == 0 && response.status == 404;
	net_response_free(&response);
	if (rc != 0 || !missing || replay->namespace_readable)
		return rc != 0 ? rc : kept;
	net_response_init(&response);
	rc = namespace_get(replay, "latest snapshot", "/snapshots/latest", &response, report);
	if (rc == 0 && response.status != 200) {
		ctl_report_fail(report, CTL_EXIT_PROTOCOL,
		                WHAT ": %s serves no snapshot of %s to this client (a private namespace "
		                     "needs --capability-file): whether a revocation is held cannot be told",
		                replay->server_url, replay->namespace_name);
		rc = DIRAUTH_ERR_REFUSED;
	}
	replay->namespace_readable = rc == 0;
	net_response_free(&response);
	return rc != 0 ? rc : 0;
}

/* Posts one revocation; counts its answer in the replay's result. Returns 0, or the error that
 * stops the replay, with report filled. */
static int post_one(struct replay *replay, const struct listed *listed, struct ctl_report *report)
{
	const struct snapshot_revocation *entry = listed->entry;
	struct ctl_replay_result *result = replay->result;
	struct net_response response;
	struct ctl_report answer;
	char target[200], code[64];
	uint8_t digest[32], named[32];
	uint64_t epoch = 0;
	int rc;

	target_text(entry, target, sizeof target);
	if (key_refused(replay, &listed->key)) {
		result->not_posted++;
		return 0;
	}
	if (crypto_sha256(entry->note, entry->note_len, digest) != 0) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, WHAT ": SHA-256 failed");
		return DIRAUTH_ERR_CRYPTO;
	}
	net_response_init(&response);
	ctl_report_init(&answer);
	rc = ctl_exchange_post(WHAT, replay->server_url, "/v1/revocations", entry->note, entry->note_len,
	                       CTL_ENDPOINT_RESPONSE_MAX, &response, &answer);
	code[0] = '\0';
	if (rc == DIRAUTH_ERR_REFUSED && response.status == 409)
		net_error_code(&response, code, sizeof code);
	if (rc == 0) {
		if (ctl_endpoint_parse_accepted(response.body.data, response.body.len, named, &epoch) != 0 ||
		    memcmp(digest, named, 32) != 0) {
			ctl_report_fail(report, CTL_EXIT_DATA,
			                WHAT
			                ": %s: the answer to the revocation of %s does not name its note",
			                replay->server_url, target);
			rc = DIRAUTH_ERR_MISMATCH;
		} else {
			result->taken++;
		}
	} else if (strcmp(code, "revoked") == 0) {
		result->held++; /* its target is revoked here */
		rc = 0;
	} else if (strcmp(code, "replayed") == 0) {
		/* Its sequence is not above the key's last here: held, or passed over by a later one. */
		rc = statement_kept(replay, entry, digest, report);
		if (rc == 1) {
			result->held++;
		} else if (rc == 0) {
			result->superseded++;
			note_problem(
			    replay,
			    "the revocation of %s (sequence %" PRIu64
			    ") cannot be taken: a later revocation by its key is held; revoke it again",
			    target, listed->sequence);
		}
		rc = rc < 0 ? rc : 0;
	} else if (rc == DIRAUTH_ERR_REFUSED) {
		/* Were a later revocation of the same key taken, this one never could be: none of that
		 * key's is posted after it. */
		const char *why = answer.message;
		if (strncmp(why, WHAT ": ", strlen(WHAT ": ")) == 0)
			why += strlen(WHAT ": ");
		result->refused++;
		replay->refused_keys[replay->refused_key_count++] = &listed->key; /* at most one each */
		note_problem(replay,
		             "the revocation of %s (sequence %" PRIu64
		             ") was refused, and none of its key's after it was posted: %s",
		             target, listed->sequence, why);
		rc = 0;
	} else {
		*report = answer; /* unreachable, 5xx, or an answer over its bound: the replay stops */
	}
	net_response_free(&response);
	return rc;
}

int ctl_replay_revocations(const struct ctl_replay_options *options, struct ctl_replay_result *result,
                           struct ctl_report *report)
{
	uint8_t *data = NULL;
	struct snapshot_body *body = NULL;
	struct listed *listed = NULL;
	struct replay replay = {
	    .server_url = options->server_url, .authorization = options->authorization, .result = result};
	int rc;

	memset(result, 0, sizeof *result);
	rc = read_body(options->bundle, options->body_path, &data, &body, report);
	if (rc != 0)
		goto done;
	snprintf(result->namespace_name, sizeof result->namespace_name, "%s", body->namespace_name);
	replay.namespace_name = result->namespace_name;
	result->epoch = body->epoch;
	result->listed = body->revocation_count;
	rc = order_revocations(body, &listed, report);
	if (rc == 0) {
		replay.refused_keys =
		    calloc(body->revocation_count ? body->revocation_count : 1, sizeof *replay.refused_keys);
		if (replay.refused_keys == NULL) {
			ctl_report_fail(report, CTL_EXIT_SOFTWARE, WHAT ": out of memory");
			rc = DIRAUTH_ERR_NOMEM;
		}
	}
	for (size_t i = 0; rc == 0 && i < body->revocation_count; i++)
		rc = post_one(&replay, &listed[i], report);
	if (rc == 0 && replay.first_problem[0] != '\0') {
		ctl_report_fail(report, CTL_EXIT_PROTOCOL, WHAT ": %s", replay.first_problem);
		rc = DIRAUTH_ERR_REFUSED;
	}
done:
	free(replay.refused_keys);
	free(listed);
	snapshot_body_free(body);
	free(data);
	return rc;
}
