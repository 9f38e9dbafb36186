/*
 * bulk.c: many notes, or many headers, in one answer (see bulk.h).
 *
 * A registration is read by its service and sequence (the store keeps the latest version and the
 * versions sealed epochs hold), a statement by its digest. The headers are one walk of the
 * store's snapshots from the asked epoch, ended by the answer's bounds or by the latest stored
 * when the walk began (a header stored during the walk is left for the next request).
 */
#include "server/readpath/bulk.h"

#include "base/error.h"
#include "schema/headers_bundle.h"
#include "schema/notes_bundle.h"
#include "server/store/registrations.h"
#include "server/store/snapshots.h"
#include "server/store/statements.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

int readpath_notes_answer(struct store *store, const char *namespace_name, const uint8_t *request, size_t len,
                          size_t max_note, struct buffer *out)
{
	struct notes_item *items = NULL;
	size_t count = 0, covered = 0;
	struct buffer note;
	int rc = notes_request_parse(request, len, &items, &count);
	if (rc)
		return rc;
	struct notes_answer_writer writer;
	buffer_init(&note);
	buffer_reset(out);
	rc = notes_answer_begin(&writer, out, count);
	for (; rc == 0 && covered < count; covered++) {
		const struct notes_item *item = &items[covered];
		int found = item->kind == NOTES_ITEM_REGISTRATION
		                ? store_registration_get(store, namespace_name, item->service_id,
		                                         item->sequence, &note)
		                : store_statement_get(store, namespace_name, item->digest, &note);
		if (found == DIRAUTH_ERR_NOT_FOUND || (found == 0 && note.len > max_note))
			continue;
		if (found) {
			rc = found;
			break;
		}
		int added = notes_answer_add(&writer, covered, note.data, note.len, NOTES_ANSWER_MAX_BYTES);
		if (added == DIRAUTH_ERR_BOUNDS)
			break; /* full: the asker asks again from covered on */
		rc = added;
	}
	if (rc == 0)
		rc = notes_answer_end(&writer, covered);
	buffer_free(&note);
	free(items);
	return rc;
}

struct headers_walk {
	struct headers_bundle_writer writer;
	uint64_t latest;
	uint64_t last; /* the epoch of the last header added */
	size_t count;
	bool full;
	int rc;
};

static int add_header(void *context, uint64_t epoch, const uint8_t *note, size_t len)
{
	struct headers_walk *w = context;
	if (epoch > w->latest)
		return 1;
	int rc = w->count == HEADERS_BUNDLE_MAX_COUNT
	             ? DIRAUTH_ERR_BOUNDS
	             : headers_bundle_add(&w->writer, epoch, note, len, HEADERS_BUNDLE_MAX_BYTES);
	if (rc == DIRAUTH_ERR_BOUNDS && w->count > 0) {
		w->full = true;
		return 1;
	}
	if (rc) {
		w->rc = rc;
		return 1;
	}
	w->count++;
	w->last = epoch;
	return 0;
}

int readpath_headers_from(struct store *store, const char *namespace_name, uint64_t from, struct buffer *out)
{
	uint64_t latest = 0;
	int rc = store_snapshot_latest(store, namespace_name, &latest);
	if (rc)
		return rc;
	struct headers_walk w = {.latest = latest};
	buffer_reset(out);
	if ((rc = headers_bundle_begin(&w.writer, out, from, latest)) != 0)
		return rc;
	rc = store_snapshot_foreach(store, namespace_name, from, add_header, &w);
	if (rc == 1)
		rc = w.rc;
	/* Complete up to the latest, unless the answer filled up first. */
	if (rc == 0)
		rc = headers_bundle_end(&w.writer, w.full ? w.last : latest);
	return rc;
}
