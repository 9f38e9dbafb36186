/*
 * fetch.c: one libdirauth update, fed from a source, whose state is the mirror's directory (see
 * fetch.h).
 *
 * The library decides; this file answers it. It names each path, a source answers
 * (fetch_source.h: the server through net/, or a snapshot already downloaded), and the library's callbacks
 * are the mirror's files: latest.header as the state, latest.checkpoint as the log's, the held body as the
 * base, and the writes in the order that keeps every promise through a crash (the proof and the
 * checkpoint, the body, the header, the certificates, latest.header last). What is left to say is
 * in words: a refusal is the library's detail behind "fetch <ns>: ", with the exit status of its
 * class (ctl/client.h), except where the command knows more: a file of its own that failed, the
 * evidence file of a split view, a stale header, the way to re-seed.
 */
#include "ctl/fetch.h"

#include "ctl/fetch_revocations.h"
#include "ctl/fetch_source.h"

#include "ctl/client.h"
#include "ctl/evidence.h"
#include "ctl/exchange.h"
#include "ctl/files.h"
#include "base/error.h"
#include "schema/evidence.h"
#include "schema/note.h"
#include "tlog/proof.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PATH_CAPACITY 4096
#define LATEST_HEADER "latest.header"
#define CERTIFICATES  "certificates"

/* "fetch <ns>", the start of every message. */
#define WHAT_MAX (NAMESPACE_NAME_MAX + 16)

static void what_of(const char *namespace_name, char what[WHAT_MAX])
{
	snprintf(what, WHAT_MAX, "fetch %s", namespace_name);
}

/* Whether a header verify/ refused as out of time (DIRAUTH_ERR_STALE) is past its valid-until, as
 * opposed to not yet valid: the note parsed and its signatures counted before the times were
 * judged, so it parses again here. */
static int past_valid_until(const uint8_t *note_bytes, size_t note_len, uint64_t now)
{
	struct snapshot_header header;
	struct note *note = NULL;
	int past = 0;

	if (note_parse(note_bytes, note_len, &note) == 0 &&
	    snapshot_header_parse(note->text, note->text_len, &header) == 0)
		past = header.valid_until <= now;
	note_free(note);
	return past;
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

/* The certificate bundle kept with the held header (DIR/NS/certificates); none when it cannot
 * be read, and then the fetched one must certify both headers' keys. The caller frees *out. */
static void read_held_certificates(const char *directory, const char *namespace_name, uint8_t **out,
                                   size_t *len)
{
	char path[PATH_CAPACITY];

	*out = NULL;
	*len = 0;
	if (join_path(path, sizeof(path), directory, namespace_name, CERTIFICATES) != 0 ||
	    !ctl_file_exists(path) || ctl_file_read(path, CERTIFICATE_BUNDLE_MAX_BYTES, out, len) != 0) {
		*out = NULL;
		*len = 0;
	}
}

/* An equivocation as a headers evidence file (ctl/evidence.h): the held note and the fetched one,
 * the bundle's identity keys, and the certificates of each header, the held one's as kept and the
 * fetched ones. Written into DIR/NS only when it proves that an authority signed both, so that
 * verify-evidence names it; path gets the file's path, else why gets the reason. */
static int keep_equivocation(const char *directory, const struct trust_bundle *bundle,
                             const char *namespace_name, const uint8_t *held_bytes, size_t held_len,
                             const uint8_t *note, size_t note_len, const uint8_t *certificates,
                             size_t certificates_len, char *path, size_t path_cap, char *why, size_t why_cap)
{
	char namespace_directory[PATH_CAPACITY];
	uint8_t *held_certificates = NULL;
	size_t held_certificates_len = 0;
	struct snapshot_header header;
	struct note *offered = NULL;
	struct evidence e;
	int rc;

	rc = join_path(namespace_directory, sizeof(namespace_directory), directory, namespace_name, NULL);
	if (rc == 0)
		rc = note_parse(note, note_len, &offered);
	if (rc == 0)
		rc = snapshot_header_parse(offered->text, offered->text_len, &header);
	note_free(offered);
	if (rc != 0) {
		snprintf(why, why_cap, "%s", dirauth_strerror(rc));
		return rc;
	}
	ctl_evidence_between(&e, EVIDENCE_HEADERS, bundle, header.origin, header.epoch, held_bytes, held_len,
	                     note, note_len);
	read_held_certificates(directory, namespace_name, &held_certificates, &held_certificates_len);
	ctl_evidence_add_certificates(&e, held_certificates, held_certificates_len);
	ctl_evidence_add_certificates(&e, certificates, certificates_len);
	rc = ctl_evidence_keep(bundle, &e, namespace_directory, namespace_name, header.epoch, path, path_cap,
	                       NULL, why, why_cap);
	free(held_certificates);
	return rc;
}

static const struct ctl_file_limit held_header_limit = {CTL_FETCH_HEADER_NOTE_MAX, "a header note",
                                                        CTL_EXIT_DATA};

int ctl_fetch_read_held(const char *directory, const char *namespace_name, struct buffer *held,
                        struct ctl_report *report)
{
	char path[PATH_CAPACITY];
	uint8_t *bytes = NULL;
	size_t len = 0;
	int rc;

	buffer_reset(held);
	rc = join_path(path, sizeof(path), directory, namespace_name, LATEST_HEADER);
	if (rc != 0) {
		ctl_report_fail(report, CTL_EXIT_CANNOT_CREATE, "fetch %s: mirror directory path too long",
		                namespace_name);
		return rc;
	}
	if (!ctl_file_exists(path))
		return 0;
	rc = ctl_file_read_reported(path, &held_header_limit, &bytes, &len, report,
	                            "fetch %s: held header %s", namespace_name, path);
	if (rc != 0)
		return rc;
	rc = buffer_append(held, bytes, len);
	if (rc != 0)
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "fetch %s: out of memory", namespace_name);
	free(bytes);
	return rc;
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
	/* The body before its header: a mirror serves no header whose body it lacks. None given: the
	 * one kept is the snapshot's already. */
	snprintf(name, sizeof(name), "%" PRIu64 ".body", epoch);
	rc = body != NULL ? ctl_file_write_atomic(namespace_directory, name, body, body_len) : 0;
	if (rc != 0)
		return store_failure(report, namespace_name, name, rc);
	snprintf(name, sizeof(name), "%" PRIu64 ".header", epoch);
	rc = ctl_file_write_atomic(namespace_directory, name, note, note_len);
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

/* ---- the library's callbacks: the clock and the mirror's files ---- */

/* What the library is given for one fetch: the mirror's directory for the namespace, the clock,
 * the update being run (its verified snapshot is what the writes write), and what a callback
 * could not do, in the command's words. */
struct session {
	const struct trust_bundle *bundle;
	const char *directory;
	const char *namespace_name;
	uint64_t now;
	struct dirauth_update *update;
	struct ctl_report failure;
};

static uint64_t session_now(void *user)
{
	return ((const struct session *)user)->now;
}

/* latest.header: the state the library holds the new snapshot to. */
static int session_state_read(void *user, const char *namespace_name, uint8_t *out, size_t cap, size_t *len)
{
	struct session *session = user;
	struct buffer held;
	int rc;

	buffer_init(&held);
	rc = ctl_fetch_read_held(session->directory, namespace_name, &held, &session->failure);
	if (rc == 0 && held.len > cap) {
		ctl_report_fail(&session->failure, CTL_EXIT_DATA,
		                "fetch %s: held header %s is larger than a header note", namespace_name,
		                LATEST_HEADER);
		rc = DIRAUTH_ERR_BOUNDS;
	}
	if (rc == 0) {
		if (held.len > 0)
			memcpy(out, held.data, held.len);
		*len = held.len;
	}
	buffer_free(&held);
	return rc;
}

/* The verified snapshot being kept, for the writes. */
static int session_verified(struct session *session, struct dirauth_verified *verified)
{
	struct dirauth_result outcome = {0};
	enum dirauth_status status = dirauth_update_verified(session->update, verified, &outcome);
	dirauth_result_clear(&outcome);
	if (status != DIRAUTH_SUCCESS) {
		ctl_report_fail(&session->failure, CTL_EXIT_SOFTWARE, "fetch %s: nothing verified to write",
		                session->namespace_name);
		return DIRAUTH_ERR_INTERNAL;
	}
	return 0;
}

/* Step 4: <epoch>.body, <epoch>.header, certificates, and last latest.header (ctl_fetch_store),
 * written once the library verified everything and before it believes the snapshot. */
static int session_state_write(void *user, const char *namespace_name, const uint8_t *bytes, size_t len)
{
	struct session *session = user;
	struct dirauth_verified verified;
	int rc = session_verified(session, &verified);
	/* The same snapshot as held: the library read DIR/NS/<epoch>.body and found it the one the
	 * header signs, so it stays as it is. */
	if (rc == 0)
		rc = ctl_fetch_store(session->directory, namespace_name, verified.epoch, bytes, len,
		                     verified.body_held ? NULL : verified.body, verified.body_len,
		                     verified.certificates, verified.certificates_len, &session->failure);
	return rc;
}

/* NS/<epoch>.body, the held body the library takes as the base of a diff and of the revocations
 * the new snapshot must respect (it checks the digest the held header signed). */
static int session_body_read(void *user, const char *namespace_name, uint64_t epoch,
                             struct dirauth_sink *sink)
{
	const struct session *session = user;
	char path[PATH_CAPACITY];
	char name[64];
	uint8_t *bytes = NULL;
	size_t len = 0;
	uint64_t bound = session->bundle->max_body_uncompressed;

	snprintf(name, sizeof(name), "%" PRIu64 ".body", epoch);
	if (join_path(path, sizeof(path), session->directory, namespace_name, name) != 0 ||
	    !ctl_file_exists(path) ||
	    ctl_file_read(path, bound > SIZE_MAX ? SIZE_MAX : (size_t)bound, &bytes, &len) != 0)
		return -1;
	int rc = dirauth_sink_append(sink, bytes, len);
	free(bytes);
	return rc;
}

static const struct ctl_file_limit held_checkpoint_limit = {TLOG_PROOF_NOTE_MAX, "a checkpoint note",
                                                            CTL_EXIT_DATA};

/* latest.checkpoint: the checkpoint the library holds the log to. */
static int session_checkpoint_read(void *user, const char *namespace_name, uint8_t *out, size_t cap,
                                   size_t *len)
{
	struct session *session = user;
	char path[PATH_CAPACITY];
	uint8_t *bytes = NULL;
	int rc;

	*len = 0;
	if (join_path(path, sizeof(path), session->directory, namespace_name, CTL_FETCH_LOG_HELD) != 0) {
		ctl_report_fail(&session->failure, CTL_EXIT_CANNOT_CREATE,
		                "fetch %s: mirror directory path too long", namespace_name);
		return DIRAUTH_ERR_BOUNDS;
	}
	if (!ctl_file_exists(path))
		return 0;
	rc = ctl_file_read_reported(path, &held_checkpoint_limit, &bytes, len, &session->failure,
	                            "fetch %s: log: held checkpoint %s", namespace_name, path);
	if (rc == 0 && *len <= cap)
		memcpy(out, bytes, *len);
	free(bytes);
	return rc;
}

/* <epoch>.tlog-proof, then latest.checkpoint: written before the snapshot's files, so that the
 * next fetch holds the log to what this one saw. */
static int session_checkpoint_write(void *user, const char *namespace_name, const uint8_t *bytes, size_t len)
{
	struct session *session = user;
	struct dirauth_verified verified;
	char directory[PATH_CAPACITY];
	char name[64];
	int rc = session_verified(session, &verified);

	if (rc != 0)
		return rc;
	snprintf(name, sizeof(name), "%" PRIu64 CTL_FETCH_LOG_PROOF_FILE, verified.epoch);
	rc = join_path(directory, sizeof(directory), session->directory, namespace_name, NULL);
	if (rc == 0)
		rc = ctl_directory_create(directory);
	if (rc == 0)
		rc = ctl_file_write_atomic(directory, name, verified.log_proof, verified.log_proof_len);
	if (rc == 0)
		rc = ctl_file_write_atomic(directory, CTL_FETCH_LOG_HELD, bytes, len);
	if (rc != 0)
		ctl_report_fail(&session->failure,
		                rc == DIRAUTH_ERR_IO ? CTL_EXIT_IO : CTL_EXIT_CANNOT_CREATE,
		                "fetch %s: log: cannot write %s or %s in %s: %s", namespace_name, name,
		                CTL_FETCH_LOG_HELD, directory, dirauth_strerror(rc));
	return rc;
}

/* ---- one fetch: the library's update, fed from a source, and its outcome in words ---- */

/* What the library's verified snapshot showed, for the summary. */
static void fill_result(const struct dirauth_verified *v, const char *namespace_name,
                        struct ctl_fetch_result *result)
{
	memset(result, 0, sizeof(*result));
	snprintf(result->namespace_name, sizeof(result->namespace_name), "%s", namespace_name);
	result->epoch = v->epoch;
	result->record_count = v->record_count;
	result->signer_count = v->signer_count;
	result->authority_count = v->authority_count;
	snprintf(result->signer_names, sizeof(result->signer_names), "%.*s",
	         (int)sizeof(result->signer_names) - 1, v->signer_names);
	result->log_checked = v->log_checked;
	result->log.index = v->log_index;
	result->log.tree_size = v->log_tree_size;
	memcpy(result->log.root, v->log_root, sizeof(result->log.root));
	result->log.cosigned = v->log_cosigned;
	result->log.witness_count = v->log_witness_count;
	result->log.quorum = v->log_quorum;
	result->log_had_held = v->log_had_held;
	result->log_held_size = v->log_held_size;
	result->diff.asked = v->diff_asked;
	result->diff.missing = v->diff_missing;
	result->diff.used = v->diff_used;
	result->diff.held = v->body_held;
	result->diff.base_epoch = v->diff_base_epoch;
	result->diff.bytes = v->diff_used ? v->body_served_len : 0;
	snprintf(result->diff.why, sizeof(result->diff.why), "%s", v->diff_why);
}

/* What the run saw of the answers it fed: the latest header and the certificates, as served. */
struct seen {
	struct buffer latest;
	struct buffer certificates;
};

/* The refusal the library ended the update with, in the command's words. */
static int refusal(const struct session *session, const struct seen *seen, enum dirauth_status status,
                   const struct dirauth_result *outcome, struct ctl_report *report)
{
	const char *namespace_name = session->namespace_name;
	const char *detail = ctl_client_detail(outcome, namespace_name);
	char what[WHAT_MAX];

	what_of(namespace_name, what);
	if (session->failure.exit_code != CTL_EXIT_OK) {
		/* A file of the mirror's, not the server's data. */
		*report = session->failure;
		return DIRAUTH_ERR_IO;
	}
	switch (status) {
	case DIRAUTH_E_SPLIT_VIEW: {
		char path[PATH_CAPACITY];
		char why[VERIFY_DETAIL_MAX + 64] = "";
		/* Two headers of one epoch: both signed notes are kept, the held one first, for anyone
		 * to check. */
		if (keep_equivocation(session->directory, session->bundle, namespace_name,
		                      outcome->evidence_held, outcome->evidence_held_len,
		                      outcome->evidence_offered, outcome->evidence_offered_len,
		                      seen->certificates.data, seen->certificates.len, path, sizeof(path),
		                      why, sizeof(why)) == 0)
			ctl_report_fail(report, CTL_EXIT_DATA, "%s: %s; evidence written to %s", what, detail,
			                path);
		else
			ctl_report_fail(report, CTL_EXIT_DATA, "%s: %s; evidence could not be written: %s",
			                what, detail, why);
		return DIRAUTH_ERR_MISMATCH;
	}
	case DIRAUTH_E_STALE:
		/* Signed by the threshold, but its time is over: the authorities published nothing
		 * newer. Its own status, so that a script never takes it for fresh; not yet valid is
		 * the data's fault. */
		ctl_report_fail(report,
		                past_valid_until(seen->latest.data, seen->latest.len, session->now)
		                    ? CTL_EXIT_TEMPFAIL
		                    : CTL_EXIT_DATA,
		                "%s: %s", what, detail);
		return DIRAUTH_ERR_STALE;
	case DIRAUTH_E_STATE:
		/* The mirror's files read, but latest.header (or latest.checkpoint) is none: a check
		 * that cannot run denies. */
		ctl_report_fail(report, CTL_EXIT_DATA, "%s: %s", what, detail);
		return DIRAUTH_ERR_SYNTAX;
	case DIRAUTH_E_TOO_FAR:
		/* Too far to walk: only the operator can say the new snapshot is the one to believe. */
		ctl_report_fail(
		    report, CTL_EXIT_DATA,
		    "%s: %s: check the new snapshot by other means, then delete %s/%s and fetch again", what,
		    detail, namespace_name, LATEST_HEADER);
		return DIRAUTH_ERR_BOUNDS;
	default:
		ctl_report_fail(report, ctl_client_exit_code(status), "%s: %s", what, detail);
		return status == DIRAUTH_E_NOMEM ? DIRAUTH_ERR_NOMEM : DIRAUTH_ERR_REFUSED;
	}
}

/* The whole fetch over source: the library's update from the held files to the snapshot source
 * offers, every file written by its callbacks once it verified everything, then step 5. */
static int run_update(const struct trust_bundle *bundle, const char *namespace_name, const char *directory,
                      uint64_t now, const struct verify_snapshot_policy *policy,
                      const struct ctl_log_pins *log, struct ctl_fetch_source *source,
                      struct ctl_fetch_result *result, struct ctl_report *report)
{
	struct session session = {bundle, directory, namespace_name, now, NULL, {0}};
	struct dirauth_callbacks callbacks = {.user = &session,
	                                      .now = session_now,
	                                      .state_read = session_state_read,
	                                      .state_write = session_state_write,
	                                      .body_read = session_body_read,
	                                      .checkpoint_read = session_checkpoint_read,
	                                      .checkpoint_write = session_checkpoint_write};
	struct dirauth_context *context = NULL;
	struct dirauth_result outcome = {0};
	struct dirauth_verified verified;
	struct seen seen;
	char what[WHAT_MAX];
	const char *path = NULL;
	size_t max_bytes = 0;
	enum dirauth_status status;
	int rc;

	memset(result, 0, sizeof(*result));
	ctl_report_init(&session.failure);
	buffer_init(&seen.latest);
	buffer_init(&seen.certificates);
	what_of(namespace_name, what);
	const struct trust_namespace *pinned = trust_bundle_namespace(bundle, namespace_name);
	if (pinned == NULL) {
		ctl_report_fail(report, CTL_EXIT_CONFIG, "%s: namespace not in the trust bundle", what);
		rc = DIRAUTH_ERR_CONFIG;
		goto done;
	}
	char log_what[WHAT_MAX + 8];
	snprintf(log_what, sizeof(log_what), "%s: log", what);
	rc = ctl_client_log_pins_fit(log_what, log, pinned->origin, report);
	if (rc == 0)
		rc = ctl_client_context_new(what, bundle, policy, log, &callbacks, &context, report);
	if (rc != 0)
		goto done;
	status = dirauth_update_begin(context, namespace_name, &session.update, &outcome);
	if (status == DIRAUTH_E_TRUST) {
		rc = DIRAUTH_ERR_CONFIG;
		ctl_report_fail(report, CTL_EXIT_CONFIG, "%s: namespace not in the trust bundle", what);
		goto done;
	}
	if (status != DIRAUTH_SUCCESS) {
		rc = refusal(&session, &seen, status, &outcome, report);
		goto done;
	}
	while (dirauth_update_next(session.update, &path, &max_bytes)) {
		struct ctl_fetch_request request;
		struct ctl_fetch_answer answer;
		ctl_fetch_request_of(path, namespace_name, &request);
		rc = source->answer(source, namespace_name, &request, max_bytes, &answer, report);
		if (rc != 0)
			goto done;
		struct buffer *kept = request.kind == CTL_FETCH_REQUEST_LATEST         ? &seen.latest
		                      : request.kind == CTL_FETCH_REQUEST_CERTIFICATES ? &seen.certificates
		                                                                       : NULL;
		if (kept != NULL && answer.status == 200) {
			buffer_reset(kept);
			if (buffer_append(kept, answer.body, answer.len) != 0) {
				rc = DIRAUTH_ERR_NOMEM;
				ctl_report_fail(report, CTL_EXIT_SOFTWARE, "%s: out of memory", what);
				goto done;
			}
		}
		status = dirauth_update_feed(session.update, answer.status, answer.encoding, answer.body,
		                             answer.len, &outcome);
		if (status != DIRAUTH_SUCCESS) {
			rc = refusal(&session, &seen, status, &outcome, report);
			goto done;
		}
	}
	if (dirauth_update_verified(session.update, &verified, &outcome) != DIRAUTH_SUCCESS) {
		rc = DIRAUTH_ERR_INTERNAL;
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "%s: %s", what, outcome.detail);
		goto done;
	}
	fill_result(&verified, namespace_name, result);
	/* Step 5: revocation overrides the cache. */
	rc = ctl_fetch_drop_revoked(bundle, directory, namespace_name, verified.epoch, verified.body,
	                            verified.body_len, result->dropped, &result->dropped_count, report);
done:
	dirauth_result_clear(&outcome);
	dirauth_update_free(session.update);
	dirauth_context_free(context);
	buffer_free(&seen.latest);
	buffer_free(&seen.certificates);
	return rc;
}

int ctl_fetch_verify_and_store(const struct ctl_fetch_input *input, struct ctl_fetch_result *result,
                               struct ctl_report *report)
{
	struct ctl_fetch_memory_source source;
	ctl_fetch_memory_source_init(&source, input);
	return run_update(input->bundle, input->namespace_name, input->directory, input->now, input->policy,
	                  input->log, &source.source, result, report);
}

int ctl_fetch_run(const struct ctl_fetch_options *options, struct ctl_fetch_result *result,
                  struct ctl_report *report)
{
	const char *directory = options->directory != NULL ? options->directory : CTL_FETCH_DEFAULT_DIRECTORY;
	struct ctl_fetch_network_source source;
	char what[WHAT_MAX];
	int rc;

	memset(result, 0, sizeof(*result));
	what_of(options->namespace_name, what);
	/* Before any download: a namespace the bundle does not pin cannot be verified. */
	if (trust_bundle_namespace(options->bundle, options->namespace_name) == NULL) {
		ctl_report_fail(report, CTL_EXIT_CONFIG, "%s: namespace not in the trust bundle", what);
		return DIRAUTH_ERR_CONFIG;
	}
	ctl_fetch_network_source_init(&source, options);
	rc = run_update(options->bundle, options->namespace_name, directory, options->now, options->policy,
	                options->log, &source.source, result, report);
	ctl_fetch_network_source_release(&source);
	return rc;
}

/* Whether a failure is the mirror's own (its files, its memory), which no other server changes. */
static int local_failure(int exit_code)
{
	return exit_code == CTL_EXIT_CANNOT_CREATE || exit_code == CTL_EXIT_IO ||
	       exit_code == CTL_EXIT_SOFTWARE || exit_code == CTL_EXIT_USAGE;
}

int ctl_fetch_run_servers(const struct ctl_fetch_options *options, const char *const *server_urls,
                          size_t server_count, struct ctl_fetch_attempt *attempts, size_t *attempt_count,
                          struct ctl_fetch_result *result, struct ctl_report *report)
{
	struct ctl_fetch_options one = *options;
	char what[WHAT_MAX];
	int any_stale = 0, any_data = 0;
	int rc = DIRAUTH_ERR_INTERNAL;

	*attempt_count = 0;
	what_of(options->namespace_name, what);
	if (server_count == 0 || server_count > CTL_FETCH_SERVERS_MAX) {
		ctl_report_fail(report, CTL_EXIT_USAGE, "%s: from 1 to %d servers", what,
		                CTL_FETCH_SERVERS_MAX);
		return DIRAUTH_ERR_CONFIG;
	}
	/* Before any download: no server can make up for a namespace the bundle does not pin. */
	if (trust_bundle_namespace(options->bundle, options->namespace_name) == NULL) {
		ctl_report_fail(report, CTL_EXIT_CONFIG, "%s: namespace not in the trust bundle", what);
		return DIRAUTH_ERR_CONFIG;
	}
	for (size_t i = 0; i < server_count; i++) {
		struct ctl_fetch_attempt *attempt = &attempts[i];
		struct ctl_report own;

		ctl_report_init(&own);
		one.server_url = server_urls[i];
		rc = ctl_fetch_run(&one, result, &own);
		attempt->server_url = server_urls[i];
		attempt->exit_code = own.exit_code;
		snprintf(attempt->message, sizeof(attempt->message), "%s", own.message);
		*attempt_count = i + 1;
		if (rc == 0)
			return 0;
		any_stale |= own.exit_code == CTL_EXIT_TEMPFAIL;
		any_data |= own.exit_code == CTL_EXIT_DATA;
		if (local_failure(own.exit_code)) {
			/* Not the server's fault: another would fail the same way. */
			*report = own;
			return rc;
		}
	}
	if (any_stale)
		ctl_report_fail(report, CTL_EXIT_TEMPFAIL,
		                "%s: stale: none of the %zu servers served a snapshot that is valid now "
		                "(each is listed above)",
		                what, server_count);
	else
		ctl_report_fail(report, any_data ? CTL_EXIT_DATA : attempts[0].exit_code,
		                "%s: none of the %zu servers served a snapshot that verifies (each is "
		                "listed above)",
		                what, server_count);
	return rc;
}
