/*
 * registrations.c: consensus method 1, registrations only: which version of each service the
 * snapshot carries, and the snapshot that carries them.
 *
 * Each counting vote lists, sorted by service id, the version (sequence, registration digest) it
 * holds of each service. One merge walks all the lists at once, the way a merge sort's last
 * pass does: at each step the smallest service id under the cursors is the next service, the
 * cursors on it give its versions (at most one per vote), and those are ranked by descending
 * (sequence, digest). With k the threshold, the k-th ranked version is chosen when at least k
 * votes hold one: at least k votes hold that version or a higher one, and at least one vote holds
 * exactly it. The cost is one pass over every record of every vote, times the number of votes for
 * finding the smallest id, and memory for the chosen records only: no step is quadratic in the
 * records, so a million records per vote is a few passes over memory.
 *
 * Then every chosen version must become a signed registration note: the caller supplies the
 * note, this file checks that its SHA-256 is the digest the votes hold, and the record goes to
 * the body writer (body.c) at once, so that one note at a time is needed. A version whose note is
 * missing or refused stops the whole computation rather than leaving the service out, because
 * another authority that has the note would publish a different body.
 */
#include "consensus/method.h"

#include "crypto/crypto.h"
#include "base/error.h"

#include <stdlib.h>
#include <string.h>

/* 1 when version a ranks before (above) version b: higher sequence, or the same sequence and a
 * digest that is greater as an unsigned big-endian byte string. */
static int version_ranks_before(const struct vote_body_record *a, const struct vote_body_record *b)
{
	if (a->sequence != b->sequence)
		return a->sequence > b->sequence;
	return memcmp(a->registration_sha256, b->registration_sha256, 32) > 0;
}

/* Insertion sort, descending: at most CONSENSUS_AUTHORITIES_MAX versions. */
static void rank_versions(const struct vote_body_record **versions, size_t count)
{
	for (size_t i = 1; i < count; i++) {
		const struct vote_body_record *version = versions[i];
		size_t j = i;
		while (j > 0 && version_ranks_before(version, versions[j - 1])) {
			versions[j] = versions[j - 1];
			j--;
		}
		versions[j] = version;
	}
}

static int append_chosen(struct consensus_run *run, const struct vote_body_record *version, size_t *cap)
{
	struct consensus_result *result = run->result;
	if (result->record_count >= run->params->max_records) {
		run->failure->held = result->record_count;
		run->failure->required = run->params->max_records;
		return consensus_run_fail(run, CONSENSUS_TOO_MANY_RECORDS, DIRAUTH_ERR_BOUNDS);
	}
	if (result->record_count == *cap) {
		size_t grown = *cap ? *cap * 2 : 1024;
		if (grown > run->params->max_records)
			grown = run->params->max_records;
		struct vote_body_record *records = realloc(result->records, grown * sizeof(*records));
		if (!records)
			return consensus_run_fail(run, CONSENSUS_FAILED, DIRAUTH_ERR_NOMEM);
		result->records = records;
		*cap = grown;
	}
	result->records[result->record_count++] = *version;
	return 0;
}

/* (d): the merge of the counting votes' sorted lists. */
int consensus_choose_versions(struct consensus_run *run)
{
	const struct vote_body *bodies[CONSENSUS_AUTHORITIES_MAX];
	size_t cursor[CONSENSUS_AUTHORITIES_MAX];
	const struct vote_body_record *versions[CONSENSUS_AUTHORITIES_MAX];
	size_t count = run->counting_count, k = run->params->threshold, cap = 0;
	for (size_t c = 0; c < count; c++) {
		bodies[c] = run->votes[run->counting[c]].body;
		cursor[c] = 0;
	}
	for (;;) {
		const uint8_t *service = NULL;
		for (size_t c = 0; c < count; c++) {
			if (cursor[c] == bodies[c]->record_count)
				continue;
			const uint8_t *id = bodies[c]->records[cursor[c]].service_id;
			if (!service || memcmp(id, service, SERVICE_ID_SIZE) < 0)
				service = id;
		}
		if (!service)
			return 0;
		uint8_t service_id[SERVICE_ID_SIZE];
		memcpy(service_id, service, SERVICE_ID_SIZE);
		size_t held = 0;
		for (size_t c = 0; c < count; c++) {
			if (cursor[c] < bodies[c]->record_count &&
			    memcmp(bodies[c]->records[cursor[c]].service_id, service_id, SERVICE_ID_SIZE) ==
			        0)
				versions[held++] = &bodies[c]->records[cursor[c]++];
		}
		if (held < k)
			continue; /* fewer than k votes hold any version: the service is out */
		rank_versions(versions, held);
		int rc = append_chosen(run, versions[k - 1], &cap);
		if (rc)
			return rc;
	}
}

/* The first counting vote that holds exactly this version (there is one: the chosen version is
 * the k-th of the votes' own versions). Its records are sorted, so a binary search finds it. */
static size_t find_holder(const struct consensus_run *run, const struct vote_body_record *version)
{
	for (size_t c = 0; c < run->counting_count; c++) {
		const struct vote_body *body = run->votes[run->counting[c]].body;
		size_t low = 0, high = body->record_count;
		while (low < high) {
			size_t middle = low + (high - low) / 2;
			int order =
			    memcmp(body->records[middle].service_id, version->service_id, SERVICE_ID_SIZE);
			if (order == 0) {
				const struct vote_body_record *held = &body->records[middle];
				if (held->sequence == version->sequence &&
				    memcmp(held->registration_sha256, version->registration_sha256, 32) == 0)
					return run->counting[c];
				break;
			}
			if (order < 0)
				low = middle + 1;
			else
				high = middle;
		}
	}
	return run->counting[0];
}

int consensus_note_fail(struct consensus_run *run, const struct vote_body_record *version,
                        enum consensus_outcome outcome, int cause)
{
	struct consensus_failure *failure = run->failure;
	size_t holder = find_holder(run, version);
	const struct vote *vote = run->votes[holder].vote;
	failure->vote_index = holder;
	memcpy(failure->authority, vote->authority, sizeof(failure->authority));
	memcpy(failure->service_id, version->service_id, SERVICE_ID_SIZE);
	failure->sequence = version->sequence;
	memcpy(failure->digest, version->registration_sha256, 32);
	return consensus_run_fail(run, outcome, cause);
}

int consensus_note_take(struct consensus_run *run, const struct vote_body_record *version,
                        const uint8_t **note, size_t *note_len)
{
	uint8_t digest[CRYPTO_SHA256_SIZE];
	*note = NULL;
	*note_len = 0;
	int rc = run->note(run->note_context, version->service_id, version->sequence,
	                   version->registration_sha256, note, note_len);
	if (rc == DIRAUTH_ERR_NOT_FOUND)
		return consensus_note_fail(run, version, CONSENSUS_NOTE_MISSING, rc);
	if (rc)
		return consensus_note_fail(run, version, CONSENSUS_NOTE_REFUSED,
		                           rc < 0 ? rc : DIRAUTH_ERR_INTERNAL);
	if (!*note || *note_len == 0)
		return consensus_note_fail(run, version, CONSENSUS_NOTE_REFUSED, DIRAUTH_ERR_SYNTAX);
	if (*note_len > REGISTRATION_MAX_BYTES)
		return consensus_note_fail(run, version, CONSENSUS_NOTE_REFUSED, DIRAUTH_ERR_BOUNDS);
	if ((rc = crypto_sha256(*note, *note_len, digest)) != 0)
		return consensus_run_fail(run, CONSENSUS_FAILED, rc);
	if (memcmp(digest, version->registration_sha256, sizeof(digest)) != 0)
		return consensus_note_fail(run, version, CONSENSUS_NOTE_REFUSED, DIRAUTH_ERR_MISMATCH);
	return 0;
}

/* (e): the note of every chosen version, checked against its digest, written with its record
 * line as soon as it is checked; the body's bound is judged before each record is written. */
int consensus_registrations_compute(struct consensus_run *run)
{
	struct consensus_body_writer w;
	int rc = consensus_choose_versions(run);
	if (rc)
		return rc;
	const struct consensus_result *result = run->result;
	rc = consensus_body_begin(run, &w, result->record_count);
	for (size_t i = 0; rc == 0 && i < result->record_count; i++) {
		const uint8_t *note = NULL;
		size_t note_len = 0;
		if ((rc = consensus_note_take(run, &result->records[i], &note, &note_len)) == 0)
			rc = consensus_body_record(&w, result->records[i].service_id, note, note_len);
	}
	if (rc == 0)
		rc = consensus_body_finish(&w);
	consensus_body_clear(&w);
	return rc;
}
