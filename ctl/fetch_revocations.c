/*
 * fetch_revocations.c: a mirror never keeps serving, or takes back, what a snapshot revoked (see
 * fetch_revocations.h).
 */
#include "ctl/fetch_revocations.h"

#include "ctl/files.h"
#include "schema/encoding.h"
#include "base/error.h"
#include "schema/lines.h"
#include "schema/note.h"
#include "schema/registration.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PATH_CAPACITY 4096

void ctl_fetch_body_limits(const struct trust_bundle *bundle, struct snapshot_body_limits *limits)
{
	size_t records = bundle->max_records > SIZE_MAX / REGISTRATION_MAX_ENDPOINTS
	                     ? SIZE_MAX / REGISTRATION_MAX_ENDPOINTS
	                     : (size_t)bundle->max_records;
	limits->max_records = records;
	limits->max_health = records * REGISTRATION_MAX_ENDPOINTS;
	limits->max_revocations = records * REGISTRATION_MAX_ENDPOINTS;
}

/* The kept body of epoch, read and parsed; *data and *out are NULL when there is none to use. */
static int read_body(const struct trust_bundle *bundle, const char *directory, const char *namespace_name,
                     uint64_t epoch, uint8_t **data, struct snapshot_body **out)
{
	struct snapshot_body_limits limits;
	char path[PATH_CAPACITY];
	size_t len = 0;
	int n, rc;

	*data = NULL;
	*out = NULL;
	n = snprintf(path, sizeof(path), "%s/%s/%" PRIu64 ".body", directory, namespace_name, epoch);
	if (n < 0 || (size_t)n >= sizeof(path))
		return 0;
	rc = ctl_file_read(
	    path, bundle->max_body_uncompressed > SIZE_MAX ? SIZE_MAX : (size_t)bundle->max_body_uncompressed,
	    data, &len);
	if (rc == DIRAUTH_ERR_NOMEM)
		return rc;
	if (rc != 0)
		return 0;
	ctl_fetch_body_limits(bundle, &limits);
	rc = snapshot_body_parse_sections(*data, len, &limits, out);
	if (rc != 0) {
		free(*data);
		*data = NULL;
		*out = NULL;
		return rc == DIRAUTH_ERR_NOMEM ? rc : 0;
	}
	return 0;
}

/* Whether revocation entry v excludes record (its registration note parsed). */
static int entry_excludes(const struct snapshot_revocation *v, const struct snapshot_record *record,
                          int *excludes)
{
	struct registration registration;
	struct note *note = NULL;
	int rc;

	*excludes = 0;
	if (!v->has_endpoint) {
		*excludes = memcmp(v->service_id, record->service_id, SERVICE_ID_SIZE) == 0;
		return 0;
	}
	memset(&registration, 0, sizeof(registration));
	rc = registration_parse_note(record->note, record->note_len, &registration, &note);
	note_free(note);
	if (rc == DIRAUTH_ERR_NOMEM)
		return rc;
	if (rc == 0)
		*excludes = registration_find_endpoint(&registration, v->endpoint_id) != NULL;
	registration_clear(&registration);
	return 0;
}

/* The first record of body that a revocation of revoking excludes: *record_index and
 * *revocation_index, or *found 0. */
static int find_excluded(const struct snapshot_body *revoking, const struct snapshot_body *body, int *found,
                         size_t *record_index, size_t *revocation_index)
{
	*found = 0;
	for (size_t v = 0; v < revoking->revocation_count; v++) {
		for (size_t r = 0; r < body->record_count; r++) {
			int excludes = 0;
			int rc = entry_excludes(&revoking->revocations[v], &body->records[r], &excludes);
			if (rc != 0)
				return rc;
			if (excludes) {
				*found = 1;
				*record_index = r;
				*revocation_index = v;
				return 0;
			}
		}
	}
	return 0;
}

/* The epoch of a kept "<epoch>.body" file name, or 0 for any other name. */
static int body_file_epoch(const char *name, uint64_t *epoch)
{
	const char *dot = strrchr(name, '.');
	struct text_span span;

	if (dot == NULL || strcmp(dot, ".body") != 0)
		return 0;
	span.data = name;
	span.len = (size_t)(dot - name);
	return text_parse_u64(span, epoch) == 0;
}

static int remove_kept(const char *directory, const char *namespace_name, uint64_t epoch,
                       struct ctl_report *report)
{
	/* The header first: a mirror serves no header whose body it lacks. */
	static const char *const suffixes[] = {"header", "body"};
	char namespace_directory[PATH_CAPACITY], name[64];

	int n =
	    snprintf(namespace_directory, sizeof(namespace_directory), "%s/%s", directory, namespace_name);
	for (size_t i = 0; i < 2; i++) {
		snprintf(name, sizeof(name), "%" PRIu64 ".%s", epoch, suffixes[i]);
		if (n < 0 || (size_t)n >= sizeof(namespace_directory) ||
		    ctl_file_remove(namespace_directory, name) != 0) {
			ctl_report_fail(
			    report, CTL_EXIT_IO,
			    "fetch %s: cannot remove %s/%s, which holds a revoked endpoint or service",
			    namespace_name, namespace_directory, name);
			return DIRAUTH_ERR_IO;
		}
	}
	return 0;
}

int ctl_fetch_drop_revoked(const struct trust_bundle *bundle, const char *directory,
                           const char *namespace_name, uint64_t epoch, const uint8_t *body, size_t body_len,
                           uint64_t dropped[CTL_FETCH_DROPPED_MAX], size_t *dropped_count,
                           struct ctl_report *report)
{
	struct snapshot_body_limits limits;
	struct snapshot_body *fresh = NULL;
	char path[PATH_CAPACITY];
	struct dirent *entry;
	DIR *listing = NULL;
	int n, rc = 0;

	*dropped_count = 0;
	ctl_fetch_body_limits(bundle, &limits);
	if (snapshot_body_parse_sections(body, body_len, &limits, &fresh) != 0 ||
	    fresh->revocation_count == 0)
		goto done;
	n = snprintf(path, sizeof(path), "%s/%s", directory, namespace_name);
	if (n < 0 || (size_t)n >= sizeof(path) || (listing = opendir(path)) == NULL)
		goto done;
	while (rc == 0 && (entry = readdir(listing)) != NULL) {
		struct snapshot_body *kept = NULL;
		uint8_t *data = NULL;
		uint64_t kept_epoch = 0;
		size_t record = 0, revocation = 0;
		int found = 0;

		if (!body_file_epoch(entry->d_name, &kept_epoch) || kept_epoch >= epoch)
			continue;
		rc = read_body(bundle, directory, namespace_name, kept_epoch, &data, &kept);
		if (rc == 0 && kept != NULL)
			rc = find_excluded(fresh, kept, &found, &record, &revocation);
		snapshot_body_free(kept);
		free(data);
		if (rc == DIRAUTH_ERR_NOMEM) {
			ctl_report_fail(report, CTL_EXIT_SOFTWARE, "fetch %s: out of memory", namespace_name);
			break;
		}
		if (rc != 0 || !found)
			continue;
		rc = remove_kept(directory, namespace_name, kept_epoch, report);
		if (rc == 0) {
			if (*dropped_count < CTL_FETCH_DROPPED_MAX)
				dropped[*dropped_count] = kept_epoch;
			(*dropped_count)++;
		}
	}
done:
	if (listing != NULL)
		closedir(listing);
	snapshot_body_free(fresh);
	return rc;
}
