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
 * finding the smallest id, and no memory per record: the merge is walked twice (the body's head
 * counts the records, so they are counted before they are written) and keeps nothing between the
 * walks. No step is quadratic in the records, so a million records per vote is a few passes over
 * memory, or over the caller's store when a vote's lines come from it (consensus_record_lines):
 * the cursors read each vote's lines in order and judge each line as they read it.
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

/* Refuses a vote whose lines, read through the caller's reader, break the body's rules. */
static int line_refused(struct consensus_run *run, const struct consensus_line_cursor *cursor)
{
	const struct vote *vote = cursor->vote->vote;
	run->failure->vote_index = cursor->vote_index;
	memcpy(run->failure->authority, vote->authority, sizeof(run->failure->authority));
	return consensus_run_fail(run, CONSENSUS_BAD_VOTE, DIRAUTH_ERR_SYNTAX);
}

/* The line under the cursor: 1 with it in cursor->current, 0 past the last line, or a refusal. */
static int cursor_peek(struct consensus_run *run, struct consensus_line_cursor *cursor)
{
	const struct consensus_vote *v = cursor->vote;
	if (cursor->next >= v->body->record_count)
		return 0;
	if (cursor->loaded)
		return 1;
	struct vote_body_record line;
	if (!v->lines) {
		line = v->body->records[cursor->next];
	} else {
		int rc = v->lines->record(v->lines->context, cursor->next, &line);
		if (rc)
			return consensus_run_fail(run, CONSENSUS_FAILED, rc < 0 ? rc : DIRAUTH_ERR_INTERNAL);
	}
	if (line.sequence == 0 ||
	    (cursor->next > 0 && memcmp(cursor->current.service_id, line.service_id, SERVICE_ID_SIZE) >= 0))
		return line_refused(run, cursor);
	cursor->current = line;
	cursor->loaded = 1;
	return 1;
}

void consensus_choice_begin(struct consensus_run *run, struct consensus_choice *choice)
{
	memset(choice, 0, sizeof(*choice));
	choice->count = run->counting_count;
	for (size_t c = 0; c < choice->count; c++) {
		choice->cursors[c].vote = &run->votes[run->counting[c]];
		choice->cursors[c].vote_index = run->counting[c];
	}
}

/* (d): one step of the merge of the counting votes' sorted lists per chosen version. */
int consensus_choice_next(struct consensus_run *run, struct consensus_choice *choice,
                          struct vote_body_record *version)
{
	struct vote_body_record held[CONSENSUS_AUTHORITIES_MAX];
	const struct vote_body_record *versions[CONSENSUS_AUTHORITIES_MAX];
	size_t k = run->params->threshold;
	for (;;) {
		const uint8_t *service = NULL;
		for (size_t c = 0; c < choice->count; c++) {
			struct consensus_line_cursor *cursor = &choice->cursors[c];
			int rc = cursor_peek(run, cursor);
			if (rc < 0)
				return rc;
			if (rc == 1 &&
			    (!service || memcmp(cursor->current.service_id, service, SERVICE_ID_SIZE) < 0))
				service = cursor->current.service_id;
		}
		if (!service)
			return 0;
		uint8_t service_id[SERVICE_ID_SIZE];
		memcpy(service_id, service, SERVICE_ID_SIZE);
		size_t count = 0;
		for (size_t c = 0; c < choice->count; c++) {
			struct consensus_line_cursor *cursor = &choice->cursors[c];
			if (cursor->loaded &&
			    memcmp(cursor->current.service_id, service_id, SERVICE_ID_SIZE) == 0) {
				held[count] = cursor->current;
				versions[count] = &held[count];
				count++;
				cursor->loaded = 0;
				cursor->next++;
			}
		}
		if (count < k)
			continue; /* fewer than k votes hold any version: the service is out */
		if (choice->chosen >= run->params->max_records) {
			run->failure->held = choice->chosen;
			run->failure->required = run->params->max_records;
			return consensus_run_fail(run, CONSENSUS_TOO_MANY_RECORDS, DIRAUTH_ERR_BOUNDS);
		}
		rank_versions(versions, count);
		*version = *versions[k - 1];
		choice->chosen++;
		return 1;
	}
}

/* 1 when a vote's line for this version's service is exactly this version. A body's array is
 * searched (its records are sorted); lines read through the caller's reader are read from the
 * first, which only a refusal does. */
static int vote_holds(const struct consensus_vote *v, const struct vote_body_record *version)
{
	struct vote_body_record line;
	size_t low = 0, high = v->body->record_count;
	const struct vote_body_record *found = NULL;
	if (v->lines) {
		for (size_t i = 0; !found && i < high; i++) {
			if (v->lines->record(v->lines->context, i, &line) != 0)
				return 0;
			int order = memcmp(line.service_id, version->service_id, SERVICE_ID_SIZE);
			if (order > 0)
				return 0;
			if (order == 0)
				found = &line;
		}
	}
	while (!v->lines && !found && low < high) {
		size_t middle = low + (high - low) / 2;
		int order = memcmp(v->body->records[middle].service_id, version->service_id, SERVICE_ID_SIZE);
		if (order == 0)
			found = &v->body->records[middle];
		else if (order < 0)
			low = middle + 1;
		else
			high = middle;
	}
	return found && vote_body_record_same(found, version);
}

/* The first counting vote that holds exactly this version (there is one: the chosen version is
 * the k-th of the votes' own versions). */
static size_t find_holder(const struct consensus_run *run, const struct vote_body_record *version)
{
	for (size_t c = 0; c < run->counting_count; c++)
		if (vote_holds(&run->votes[run->counting[c]], version))
			return run->counting[c];
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

/* The number of versions the rule chooses: one walk of the merge, keeping none of them. With one
 * counting vote and k = 1 each of its lines is chosen, so its count is known without the walk
 * (the write walk still judges every line). */
static int count_chosen(struct consensus_run *run, size_t *count)
{
	struct consensus_choice choice;
	struct vote_body_record version;
	int rc;
	if (run->counting_count == 1 && run->params->threshold == 1) {
		*count = run->votes[run->counting[0]].body->record_count;
		if (*count <= run->params->max_records)
			return 0;
		run->failure->held = *count;
		run->failure->required = run->params->max_records;
		return consensus_run_fail(run, CONSENSUS_TOO_MANY_RECORDS, DIRAUTH_ERR_BOUNDS);
	}
	consensus_choice_begin(run, &choice);
	while ((rc = consensus_choice_next(run, &choice, &version)) == 1)
		;
	*count = choice.chosen;
	return rc;
}

/* (e): the note of every chosen version, checked against its digest, written with its record
 * line as soon as it is checked; the body's bound is judged before each record is written. The
 * head counts the records, so the versions are counted first and chosen again as they are
 * written. */
int consensus_registrations_compute(struct consensus_run *run)
{
	struct consensus_body_writer w;
	struct consensus_choice choice;
	struct vote_body_record version;
	size_t count = 0;
	int rc = count_chosen(run, &count);
	if (rc)
		return rc;
	rc = consensus_body_begin(run, &w, count);
	consensus_choice_begin(run, &choice);
	while (rc == 0 && (rc = consensus_choice_next(run, &choice, &version)) == 1) {
		const uint8_t *note = NULL;
		size_t note_len = 0;
		if ((rc = consensus_note_take(run, &version, &note, &note_len)) == 0)
			rc = consensus_body_record(&w, version.service_id, note, note_len);
	}
	if (rc == 0 && choice.chosen != count)
		rc = consensus_run_fail(run, CONSENSUS_FAILED, DIRAUTH_ERR_MISMATCH); /* lines that changed */
	if (rc == 0) {
		run->result->record_count = count;
		rc = consensus_body_finish(&w);
	}
	consensus_body_clear(&w);
	return rc;
}
