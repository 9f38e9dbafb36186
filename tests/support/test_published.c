/*
 * test_published.c: the versions a snapshot body publishes (test_published.h).
 */
#include "test_published.h"

#include "base/error.h"
#include "crypto/crypto.h"
#include "schema/note.h"
#include "schema/registration.h"
#include "schema/snapshot.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

struct vote_body_record *test_published_versions(const uint8_t *body, size_t body_len, size_t *count)
{
	struct snapshot_body_limits limits = {SIZE_MAX / 2, SIZE_MAX / 2, SIZE_MAX / 2};
	struct snapshot_body *parsed = NULL;
	*count = 0;
	ck_assert_int_eq(snapshot_body_parse_sections(body, body_len, &limits, &parsed), 0);
	struct vote_body_record *versions = NULL;
	if (parsed->record_count > 0) {
		versions = calloc(parsed->record_count, sizeof(*versions));
		ck_assert_ptr_nonnull(versions);
	}
	for (size_t i = 0; i < parsed->record_count; i++) {
		const struct snapshot_record *record = &parsed->records[i];
		struct registration r;
		struct note *note = NULL;
		ck_assert_int_eq(registration_parse_note(record->note, record->note_len, &r, &note), 0);
		memcpy(versions[i].service_id, record->service_id, SERVICE_ID_SIZE);
		versions[i].sequence = r.sequence;
		ck_assert_int_eq(
		    crypto_sha256(record->note, record->note_len, versions[i].registration_sha256), 0);
		registration_clear(&r);
		note_free(note);
	}
	*count = parsed->record_count;
	snapshot_body_free(parsed);
	return versions;
}
