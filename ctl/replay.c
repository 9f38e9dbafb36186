/*
 * replay.c: a snapshot's revocations posted again, lowest sequence first (replay.h).
 */
#include "ctl/replay.h"

#include "ctl/exchange.h"
#include "ctl/fetch_revocations.h"
#include "ctl/files.h"
#include "ctl/lifecycle.h"
#include "schema/crypto.h"
#include "schema/encoding.h"
#include "schema/error.h"
#include "schema/note.h"
#include "schema/revocation.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WHAT "replay-revocations"

/* A listed revocation, with what its note says it is. */
struct listed {
	const struct snapshot_revocation *entry;
	uint64_t sequence;
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
	int rc = ctl_file_read(path, bound, data, &len);
	if (rc == DIRAUTH_ERR_NOT_FOUND) {
		ctl_report_fail(report, CTL_EXIT_NO_INPUT, WHAT ": %s: no such file", path);
		return rc;
	}
	if (rc == DIRAUTH_ERR_BOUNDS) {
		ctl_report_fail(report, CTL_EXIT_DATA,
		                WHAT ": %s: larger than the trust bundle's max-body-uncompressed (%zu bytes)",
		                path, bound);
		return rc;
	}
	if (rc != 0) {
		ctl_report_fail(report, ctl_exit_code_for_error(rc), WHAT ": %s: %s", path,
		                dirauth_strerror(rc));
		return rc;
	}
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
		listed[i] = (struct listed){.entry = entry, .sequence = r.sequence};
	}
	qsort(listed, body->revocation_count, sizeof *listed, by_sequence);
	*out = listed;
	return 0;
}

/* Posts one revocation (its sequence given); counts its answer in result. Returns 0, or the
 * error that stops the replay, with report filled. */
static int post_one(const char *server_url, const struct listed *listed, struct ctl_replay_result *result,
                    struct ctl_report *report)
{
	const struct snapshot_revocation *entry = listed->entry;
	struct net_response response;
	struct ctl_report answer;
	char target[200], code[64];
	uint8_t digest[32], named[32];
	uint64_t epoch = 0;
	int rc;

	target_text(entry, target, sizeof target);
	net_response_init(&response);
	ctl_report_init(&answer);
	rc = ctl_exchange_post(WHAT, server_url, "/v1/revocations", entry->note, entry->note_len,
	                       CTL_LIFECYCLE_RESPONSE_MAX, &response, &answer);
	if (rc == 0) {
		if (crypto_sha256(entry->note, entry->note_len, digest) != 0 ||
		    ctl_lifecycle_parse_accepted(response.body.data, response.body.len, named, &epoch) != 0 ||
		    memcmp(digest, named, 32) != 0) {
			ctl_report_fail(report, CTL_EXIT_DATA,
			                WHAT
			                ": %s: the answer to the revocation of %s does not name its note",
			                server_url, target);
			rc = DIRAUTH_ERR_MISMATCH;
		} else {
			result->taken++;
		}
	} else if (rc == DIRAUTH_ERR_REFUSED && response.status == 409 &&
	           net_error_code(&response, code, sizeof code) &&
	           (strcmp(code, "replayed") == 0 || strcmp(code, "revoked") == 0)) {
		result->held++;
		rc = 0;
	} else if (rc == DIRAUTH_ERR_REFUSED) {
		/* Once a later revocation of the same key is taken, this one never could be: stop. */
		const char *why = answer.message;
		if (strncmp(why, WHAT ": ", strlen(WHAT ": ")) == 0)
			why += strlen(WHAT ": ");
		result->refused++;
		ctl_report_fail(report, CTL_EXIT_PROTOCOL,
		                WHAT ": the revocation of %s (sequence %" PRIu64
		                     ") was refused, and none after it was posted: %s",
		                target, listed->sequence, why);
	} else {
		*report = answer; /* unreachable, 5xx, or an answer over its bound: the replay stops */
	}
	net_response_free(&response);
	return rc;
}

int ctl_replay_revocations(const struct trust_bundle *bundle, const char *body_path, const char *server_url,
                           struct ctl_replay_result *result, struct ctl_report *report)
{
	uint8_t *data = NULL;
	struct snapshot_body *body = NULL;
	struct listed *listed = NULL;
	int rc;

	memset(result, 0, sizeof *result);
	rc = read_body(bundle, body_path, &data, &body, report);
	if (rc != 0)
		goto done;
	snprintf(result->namespace_name, sizeof result->namespace_name, "%s", body->namespace_name);
	result->epoch = body->epoch;
	result->listed = body->revocation_count;
	rc = order_revocations(body, &listed, report);
	for (size_t i = 0; rc == 0 && i < body->revocation_count; i++)
		rc = post_one(server_url, &listed[i], result, report);
done:
	free(listed);
	snapshot_body_free(body);
	free(data);
	return rc;
}
