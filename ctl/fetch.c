/*
 * fetch.c: verify-then-store of one snapshot, and the downloads that feed it (see fetch.h).
 *
 * The order of the checks is the point: signatures before parsing what they cover is trusted,
 * history before the (large) body is downloaded, the body before any file is written, and
 * latest.header last, so that a crash or a refusal at any step leaves the mirror's idea of
 * "latest" where it was.
 */
#include "fetch.h"

#include "compress.h"
#include "error.h"
#include "files.h"
#include "http_client.h"
#include "keyring.h"
#include "note.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PATH_CAPACITY 4096
#define LATEST_HEADER "latest.header"
#define CERTIFICATES  "certificates"

/* Counts the pinned identities whose certified signing keys signed the note at time at. */
static int verify_signatures(const struct trust_bundle *bundle, const char *namespace_name,
                             const uint8_t *certificates, size_t certificates_len, const struct note *note,
                             uint64_t at, struct ctl_fetch_result *result, struct ctl_report *report)
{
	struct certificate_keyring *ring = NULL;
	char what[NAMESPACE_NAME_MAX + 32];
	size_t verified_count = 0;
	int rc;

	snprintf(what, sizeof(what), "fetch %s", namespace_name);
	rc = ctl_keyring_build(what, bundle, certificates, certificates_len, &ring, NULL, report);
	if (rc != 0)
		return rc;
	snprintf(what, sizeof(what), "fetch %s: header", namespace_name);
	rc = ctl_keyring_verify(what, ring, note, at, bundle->threshold, &verified_count,
	                        result->signer_names, sizeof(result->signer_names), report);
	if (rc == 0) {
		result->signer_count = verified_count;
		result->authority_count = bundle->authority_count;
	}
	free(ring);
	return rc;
}

int ctl_fetch_verify_header(const struct trust_bundle *bundle, const char *namespace_name,
                            const uint8_t *note_bytes, size_t note_len, const uint8_t *certificates,
                            size_t certificates_len, uint64_t now, struct snapshot_header *header,
                            struct ctl_fetch_result *result, struct ctl_report *report)
{
	const struct trust_namespace *pinned;
	struct note *note = NULL;
	int rc;

	memset(result, 0, sizeof(*result));
	memset(header, 0, sizeof(*header));
	pinned = trust_bundle_namespace(bundle, namespace_name);
	if (pinned == NULL) {
		ctl_report_fail(report, CTL_EXIT_CONFIG, "fetch %s: namespace not in the trust bundle",
		                namespace_name);
		return DIRAUTH_ERR_CONFIG;
	}
	if (note_len > CTL_FETCH_HEADER_NOTE_MAX) {
		ctl_report_fail(report, CTL_EXIT_DATA, "fetch %s: header: larger than %d bytes",
		                namespace_name, CTL_FETCH_HEADER_NOTE_MAX);
		return DIRAUTH_ERR_BOUNDS;
	}
	rc = note_parse(note_bytes, note_len, &note);
	if (rc != 0) {
		ctl_report_fail(report, rc == DIRAUTH_ERR_NOMEM ? CTL_EXIT_SOFTWARE : CTL_EXIT_DATA,
		                "fetch %s: header: not a signed note: %s", namespace_name,
		                dirauth_strerror(rc));
		goto done;
	}
	if (note->text_len > SNAPSHOT_HEADER_MAX_BYTES) {
		rc = DIRAUTH_ERR_BOUNDS;
		ctl_report_fail(report, CTL_EXIT_DATA, "fetch %s: header: text larger than %d bytes",
		                namespace_name, SNAPSHOT_HEADER_MAX_BYTES);
		goto done;
	}
	/* The signatures count only for keys certified at the header's own time, so the text is
	 * parsed first; nothing it says is believed until the signatures below verified. */
	rc = snapshot_header_parse(note->text, note->text_len, header);
	if (rc != 0) {
		ctl_report_fail(report, CTL_EXIT_DATA, "fetch %s: header: not a snapshot header: %s",
		                namespace_name, dirauth_strerror(rc));
		goto done;
	}
	rc = verify_signatures(bundle, namespace_name, certificates, certificates_len, note,
	                       header->valid_after, result, report);
	if (rc != 0)
		goto done;
	if (strcmp(header->namespace_name, namespace_name) != 0) {
		rc = DIRAUTH_ERR_MISMATCH;
		ctl_report_fail(report, CTL_EXIT_DATA, "fetch %s: header: wrong namespace '%s'",
		                namespace_name, header->namespace_name);
		goto done;
	}
	if (strcmp(header->origin, pinned->origin) != 0) {
		rc = DIRAUTH_ERR_MISMATCH;
		ctl_report_fail(report, CTL_EXIT_DATA,
		                "fetch %s: header: wrong origin '%s', the trust bundle pins '%s'",
		                namespace_name, header->origin, pinned->origin);
		goto done;
	}
	if (header->valid_until <= now) {
		rc = DIRAUTH_ERR_STALE;
		ctl_report_fail(report, CTL_EXIT_DATA,
		                "fetch %s: header: stale: epoch %" PRIu64 " was valid until %" PRIu64
		                ", now is %" PRIu64,
		                namespace_name, header->epoch, header->valid_until, now);
		goto done;
	}
	if (header->record_count > bundle->max_records) {
		rc = DIRAUTH_ERR_BOUNDS;
		ctl_report_fail(report, CTL_EXIT_DATA,
		                "fetch %s: header: %" PRIu64 " records, the trust bundle allows %" PRIu64,
		                namespace_name, header->record_count, bundle->max_records);
		goto done;
	}
	if (header->body_size > bundle->max_body_uncompressed) {
		rc = DIRAUTH_ERR_BOUNDS;
		ctl_report_fail(report, CTL_EXIT_DATA,
		                "fetch %s: header: body of %" PRIu64
		                " bytes, the trust bundle allows %" PRIu64,
		                namespace_name, header->body_size, bundle->max_body_uncompressed);
		goto done;
	}
	snprintf(result->namespace_name, sizeof(result->namespace_name), "%s", namespace_name);
	result->epoch = header->epoch;
	result->record_count = header->record_count;
done:
	note_free(note);
	return rc;
}

/* Joins directory/namespace_name[/name] into out. */
static int join_path(char *out, size_t cap, const char *directory, const char *namespace_name,
                     const char *name)
{
	int n;

	if (name != NULL)
		n = snprintf(out, cap, "%s/%s/%s", directory, namespace_name, name);
	else
		n = snprintf(out, cap, "%s/%s", directory, namespace_name);
	return n < 0 || (size_t)n >= cap ? DIRAUTH_ERR_BOUNDS : 0;
}

/* Both notes, length-framed like a snapshot body, so the file is checkable offline. */
static int write_evidence(const char *directory, const char *namespace_name, uint64_t epoch,
                          const uint8_t *held, size_t held_len, const uint8_t *fetched, size_t fetched_len,
                          char *path, size_t path_cap)
{
	struct buffer evidence;
	char name[64];
	char namespace_directory[PATH_CAPACITY];
	int rc;

	buffer_init(&evidence);
	snprintf(name, sizeof(name), "evidence-%" PRIu64 ".txt", epoch);
	rc = join_path(namespace_directory, sizeof(namespace_directory), directory, namespace_name, NULL);
	if (rc == 0)
		rc = join_path(path, path_cap, directory, namespace_name, name);
	if (rc == 0)
		rc = buffer_appendf(
		    &evidence,
		    "dirauth evidence v1\nkind snapshot-equivocation\nnamespace %s\nepoch %" PRIu64
		    "\nstatement %zu\n",
		    namespace_name, epoch, held_len);
	if (rc == 0)
		rc = buffer_append(&evidence, held, held_len);
	if (rc == 0)
		rc = buffer_appendf(&evidence, "statement %zu\n", fetched_len);
	if (rc == 0)
		rc = buffer_append(&evidence, fetched, fetched_len);
	if (rc == 0)
		rc = ctl_file_write_atomic(namespace_directory, name, evidence.data, evidence.len);
	buffer_free(&evidence);
	return rc;
}

int ctl_fetch_check_history(const char *directory, const char *namespace_name, const uint8_t *note_bytes,
                            size_t note_len, const struct snapshot_header *header, struct ctl_report *report)
{
	char path[PATH_CAPACITY];
	char evidence_path[PATH_CAPACITY];
	struct snapshot_header held_header;
	struct note *held = NULL;
	struct note *fetched = NULL;
	uint8_t *held_bytes = NULL;
	size_t held_len = 0;
	int rc;

	rc = join_path(path, sizeof(path), directory, namespace_name, LATEST_HEADER);
	if (rc != 0) {
		ctl_report_fail(report, CTL_EXIT_CANNOT_CREATE, "fetch %s: mirror directory path too long",
		                namespace_name);
		return rc;
	}
	if (!ctl_file_exists(path))
		return 0;
	rc = ctl_file_read(path, CTL_FETCH_HEADER_NOTE_MAX, &held_bytes, &held_len);
	if (rc != 0) {
		ctl_report_fail(report, rc == DIRAUTH_ERR_BOUNDS ? CTL_EXIT_DATA : CTL_EXIT_IO,
		                "fetch %s: held header %s: %s", namespace_name, path, dirauth_strerror(rc));
		goto done;
	}
	rc = note_parse(held_bytes, held_len, &held);
	if (rc == 0)
		rc = snapshot_header_parse(held->text, held->text_len, &held_header);
	if (rc == 0)
		rc = note_parse(note_bytes, note_len, &fetched);
	if (rc != 0) {
		/* Without the held epoch there is no rollback check, and a check that cannot run denies. */
		ctl_report_fail(report, rc == DIRAUTH_ERR_NOMEM ? CTL_EXIT_SOFTWARE : CTL_EXIT_DATA,
		                "fetch %s: held header %s cannot be read back: %s", namespace_name, path,
		                dirauth_strerror(rc));
		goto done;
	}
	if (held_header.epoch > header->epoch) {
		rc = DIRAUTH_ERR_ROLLBACK;
		ctl_report_fail(report, CTL_EXIT_DATA,
		                "fetch %s: rollback: the server offers epoch %" PRIu64
		                ", this mirror holds epoch %" PRIu64,
		                namespace_name, header->epoch, held_header.epoch);
		goto done;
	}
	/* The same epoch may come back with more cosignatures; only different text is two histories. */
	if (held_header.epoch == header->epoch &&
	    (held->text_len != fetched->text_len || memcmp(held->text, fetched->text, held->text_len) != 0)) {
		int written = write_evidence(directory, namespace_name, header->epoch, held_bytes, held_len,
		                             note_bytes, note_len, evidence_path, sizeof(evidence_path));
		rc = DIRAUTH_ERR_MISMATCH;
		if (written == 0)
			ctl_report_fail(
			    report, CTL_EXIT_DATA,
			    "fetch %s: equivocation: two different headers signed for epoch %" PRIu64
			    "; evidence written to %s",
			    namespace_name, header->epoch, evidence_path);
		else
			ctl_report_fail(
			    report, CTL_EXIT_DATA,
			    "fetch %s: equivocation: two different headers signed for epoch %" PRIu64
			    "; evidence could not be written: %s",
			    namespace_name, header->epoch, dirauth_strerror(written));
		goto done;
	}
done:
	note_free(held);
	note_free(fetched);
	free(held_bytes);
	return rc;
}

static int parse_encoding(const char *text, enum content_encoding *out)
{
	if (text == NULL || text[0] == '\0' || strcmp(text, "identity") == 0)
		*out = ENCODING_IDENTITY;
	else if (strcmp(text, "gzip") == 0)
		*out = ENCODING_GZIP;
	else if (strcmp(text, "zstd") == 0)
		*out = ENCODING_ZSTD;
	else
		return DIRAUTH_ERR_SYNTAX;
	return 0;
}

int ctl_fetch_verify_body(const struct trust_bundle *bundle, const struct snapshot_header *header,
                          const char *encoding_text, const uint8_t *data, size_t len, struct buffer *body,
                          struct ctl_report *report)
{
	const char *namespace_name = header->namespace_name;
	enum content_encoding encoding;
	size_t max_records;
	int rc;

	rc = parse_encoding(encoding_text, &encoding);
	if (rc != 0) {
		ctl_report_fail(report, CTL_EXIT_DATA, "fetch %s: body: unsupported content encoding '%.32s'",
		                namespace_name, encoding_text);
		return rc;
	}
	if (len > bundle->max_body_compressed) {
		ctl_report_fail(
		    report, CTL_EXIT_DATA,
		    "fetch %s: body: %zu bytes as served, larger than the trust bundle's bound of %" PRIu64,
		    namespace_name, len, bundle->max_body_compressed);
		return DIRAUTH_ERR_BOUNDS;
	}
	buffer_reset(body);
	/* The header's body-size is signed, so it is the exact output bound while inflating. */
	rc = compress_decode(encoding, data, len, (size_t)header->body_size, body);
	if (rc == DIRAUTH_ERR_BOUNDS) {
		ctl_report_fail(
		    report, CTL_EXIT_DATA,
		    "fetch %s: body: decompresses past its bound (the header's body-size of %" PRIu64
		    " bytes, or the ratio guard)",
		    namespace_name, header->body_size);
		return rc;
	}
	if (rc != 0) {
		ctl_report_fail(report, rc == DIRAUTH_ERR_NOMEM ? CTL_EXIT_SOFTWARE : CTL_EXIT_DATA,
		                "fetch %s: body: cannot decode %s data: %s", namespace_name,
		                content_encoding_name(encoding), dirauth_strerror(rc));
		return rc;
	}
	max_records = bundle->max_records > SIZE_MAX ? SIZE_MAX : (size_t)bundle->max_records;
	rc = snapshot_body_verify(header, body->data, body->len, max_records);
	if (rc == DIRAUTH_ERR_SIGNATURE || rc == DIRAUTH_ERR_UNKNOWN_KEY) {
		ctl_report_fail(report, CTL_EXIT_DATA,
		                "fetch %s: body: a record's provider signature does not verify",
		                namespace_name);
		return rc;
	}
	if (rc == DIRAUTH_ERR_MISMATCH) {
		ctl_report_fail(
		    report, CTL_EXIT_DATA,
		    "fetch %s: body: does not match the signed header (digest, size, count or root)",
		    namespace_name);
		return rc;
	}
	if (rc != 0) {
		ctl_report_fail(report,
		                rc == DIRAUTH_ERR_NOMEM || rc == DIRAUTH_ERR_CRYPTO ? CTL_EXIT_SOFTWARE
		                                                                    : CTL_EXIT_DATA,
		                "fetch %s: body: refused: %s", namespace_name, dirauth_strerror(rc));
		return rc;
	}
	return 0;
}

static int store_failure(struct ctl_report *report, const char *namespace_name, const char *what, int rc)
{
	ctl_report_fail(report, rc == DIRAUTH_ERR_IO ? CTL_EXIT_IO : CTL_EXIT_CANNOT_CREATE,
	                "fetch %s: cannot write %s: %s", namespace_name, what, dirauth_strerror(rc));
	return rc;
}

int ctl_fetch_store(const char *directory, const char *namespace_name, uint64_t epoch, const uint8_t *note,
                    size_t note_len, const uint8_t *body, size_t body_len, const uint8_t *certificates,
                    size_t certificates_len, struct ctl_report *report)
{
	char namespace_directory[PATH_CAPACITY];
	char name[64];
	int rc;

	rc = join_path(namespace_directory, sizeof(namespace_directory), directory, namespace_name, NULL);
	if (rc != 0)
		return store_failure(report, namespace_name, "the mirror directory", rc);
	rc = ctl_directory_create(namespace_directory);
	if (rc != 0)
		return store_failure(report, namespace_name, namespace_directory, rc);
	snprintf(name, sizeof(name), "%" PRIu64 ".header", epoch);
	rc = ctl_file_write_atomic(namespace_directory, name, note, note_len);
	if (rc != 0)
		return store_failure(report, namespace_name, name, rc);
	snprintf(name, sizeof(name), "%" PRIu64 ".body", epoch);
	rc = ctl_file_write_atomic(namespace_directory, name, body, body_len);
	if (rc != 0)
		return store_failure(report, namespace_name, name, rc);
	/* The certificates that made the header's signatures count, so the mirror can be verified
	 * again offline; before latest.header, which must never name a header they do not cover. */
	rc = ctl_file_write_atomic(namespace_directory, CERTIFICATES, certificates, certificates_len);
	if (rc != 0)
		return store_failure(report, namespace_name, CERTIFICATES, rc);
	/* Last: from here on the next fetch measures rollback against this epoch. */
	rc = ctl_file_write_atomic(namespace_directory, LATEST_HEADER, note, note_len);
	if (rc != 0)
		return store_failure(report, namespace_name, LATEST_HEADER, rc);
	return 0;
}

int ctl_fetch_verify_and_store(const struct ctl_fetch_input *input, struct ctl_fetch_result *result,
                               struct ctl_report *report)
{
	struct snapshot_header header;
	struct buffer body;
	int rc;

	buffer_init(&body);
	rc = ctl_fetch_verify_header(input->bundle, input->namespace_name, input->header_note,
	                             input->header_note_len, input->certificates, input->certificates_len,
	                             input->now, &header, result, report);
	if (rc == 0)
		rc = ctl_fetch_check_history(input->directory, input->namespace_name, input->header_note,
		                             input->header_note_len, &header, report);
	if (rc == 0)
		rc = ctl_fetch_verify_body(input->bundle, &header, input->body_encoding, input->body,
		                           input->body_len, &body, report);
	if (rc == 0)
		rc = ctl_fetch_store(input->directory, input->namespace_name, header.epoch,
		                     input->header_note, input->header_note_len, body.data, body.len,
		                     input->certificates, input->certificates_len, report);
	buffer_free(&body);
	return rc;
}

/* GETs url into response, bounded by max_bytes, and insists on 200. */
static int download(const char *namespace_name, const char *what, const char *url, const char *const *headers,
                    size_t max_bytes, struct ctl_http_response *response, struct ctl_report *report)
{
	struct ctl_http_request request = {
	    .method = "GET",
	    .url = url,
	    .headers = headers,
	    .max_response_bytes = max_bytes,
	};
	int rc;

	rc = ctl_http_perform(&request, response);
	if (rc == DIRAUTH_ERR_BOUNDS) {
		ctl_report_fail(report, CTL_EXIT_DATA, "fetch %s: %s: %s", namespace_name, what,
		                response->error);
		return rc;
	}
	if (rc != 0) {
		ctl_report_fail(report,
		                rc == DIRAUTH_ERR_UNAVAILABLE ? CTL_EXIT_UNAVAILABLE
		                                              : ctl_exit_code_for_error(rc),
		                "fetch %s: %s: %s", namespace_name, url, response->error);
		return rc;
	}
	if (response->status != 200) {
		char description[CTL_REPORT_MAX / 2];
		ctl_http_describe_error(response, description, sizeof(description));
		ctl_report_fail(report, ctl_http_exit_code_for_status(response->status), "fetch %s: %s: %s",
		                namespace_name, what, description);
		return response->status >= 500 ? DIRAUTH_ERR_UNAVAILABLE : DIRAUTH_ERR_REFUSED;
	}
	return 0;
}

int ctl_fetch_run(const struct ctl_fetch_options *options, struct ctl_fetch_result *result,
                  struct ctl_report *report)
{
	static const char *const body_headers[] = {"Accept-Encoding: zstd, gzip", NULL};
	const char *directory = options->directory != NULL ? options->directory : CTL_FETCH_DEFAULT_DIRECTORY;
	const char *namespace_name = options->namespace_name;
	struct ctl_http_response header_response;
	struct ctl_http_response body_response;
	struct snapshot_header header;
	struct buffer url;
	struct buffer body;
	struct buffer certificates;
	char what[NAMESPACE_NAME_MAX + 16];
	size_t base_len;
	size_t max_compressed;
	int rc;

	ctl_http_response_init(&header_response);
	ctl_http_response_init(&body_response);
	buffer_init(&url);
	buffer_init(&body);
	buffer_init(&certificates);
	base_len = strlen(options->server_url);
	while (base_len > 0 && options->server_url[base_len - 1] == '/')
		base_len--;

	rc = buffer_appendf(&url, "%.*s/v1/%s/snapshots/latest", (int)base_len, options->server_url,
	                    namespace_name);
	if (rc != 0) {
		ctl_report_fail(report, CTL_EXIT_USAGE, "fetch %s: server URL too long", namespace_name);
		goto done;
	}
	if (trust_bundle_namespace(options->bundle, namespace_name) == NULL) {
		rc = DIRAUTH_ERR_CONFIG;
		ctl_report_fail(report, CTL_EXIT_CONFIG, "fetch %s: namespace not in the trust bundle",
		                namespace_name);
		goto done;
	}
	rc = download(namespace_name, "latest header", (const char *)url.data, NULL,
	              CTL_FETCH_HEADER_NOTE_MAX, &header_response, report);
	if (rc != 0)
		goto done;
	snprintf(what, sizeof(what), "fetch %s", namespace_name);
	rc = ctl_keyring_download(what, options->server_url, &certificates, report);
	if (rc != 0)
		goto done;
	rc = ctl_fetch_verify_header(options->bundle, namespace_name, header_response.body.data,
	                             header_response.body.len, certificates.data, certificates.len,
	                             options->now, &header, result, report);
	if (rc != 0)
		goto done;
	rc = ctl_fetch_check_history(directory, namespace_name, header_response.body.data,
	                             header_response.body.len, &header, report);
	if (rc != 0)
		goto done;

	buffer_reset(&url);
	rc = buffer_appendf(&url, "%.*s/v1/%s/snapshots/%" PRIu64 "/body", (int)base_len, options->server_url,
	                    namespace_name, header.epoch);
	if (rc != 0) {
		ctl_report_fail(report, CTL_EXIT_USAGE, "fetch %s: server URL too long", namespace_name);
		goto done;
	}
	max_compressed = options->bundle->max_body_compressed > SIZE_MAX
	                     ? SIZE_MAX
	                     : (size_t)options->bundle->max_body_compressed;
	rc = download(namespace_name, "body", (const char *)url.data, body_headers, max_compressed,
	              &body_response, report);
	if (rc != 0)
		goto done;
	rc = ctl_fetch_verify_body(options->bundle, &header, body_response.content_encoding,
	                           body_response.body.data, body_response.body.len, &body, report);
	if (rc != 0)
		goto done;
	rc = ctl_fetch_store(directory, namespace_name, header.epoch, header_response.body.data,
	                     header_response.body.len, body.data, body.len, certificates.data,
	                     certificates.len, report);
done:
	ctl_http_response_free(&header_response);
	ctl_http_response_free(&body_response);
	buffer_free(&url);
	buffer_free(&body);
	buffer_free(&certificates);
	return rc;
}
