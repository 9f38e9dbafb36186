/*
 * fetch.c: the downloads of one snapshot, verify/'s checks in order, then the files (see
 * fetch.h).
 *
 * The order of the checks is the point: signatures before anything their text says is
 * believed, history before the (large) body is downloaded, the body before any file is written,
 * and latest.header last, so that a crash or a refusal at any step leaves the mirror's idea of
 * "latest" where it was. Every decision is verify/'s; a refusal is its detail behind "fetch <ns>: "
 * with the exit status of ctl_exit_code_for_verification, except where the command knows more:
 * the held header's file, the evidence file of an equivocation, the way to re-seed.
 */
#include "ctl/fetch.h"

#include "ctl/fetch_diff.h"
#include "ctl/fetch_revocations.h"

#include "ctl/evidence.h"
#include "ctl/exchange.h"
#include "ctl/files.h"
#include "ctl/keyring.h"
#include "net/client.h"
#include "net/pool.h"
#include "base/error.h"
#include "schema/evidence.h"
#include "schema/note.h"
#include "verify/history.h"
#include "verify/keyring.h"

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

int ctl_fetch_verify_header(const struct trust_bundle *bundle, const char *namespace_name,
                            const uint8_t *note, size_t note_len, const uint8_t *certificates,
                            size_t certificates_len, uint64_t now,
                            const struct verify_snapshot_policy *policy, struct snapshot_header *header,
                            struct ctl_fetch_result *result, struct ctl_report *report)
{
	struct verify_signers signers;
	char detail[VERIFY_DETAIL_MAX];
	char what[WHAT_MAX];
	int rc;

	memset(result, 0, sizeof(*result));
	rc = verify_snapshot_header(bundle, namespace_name, certificates, certificates_len, note, note_len,
	                            now, policy, header, &signers, detail, sizeof(detail));
	if (rc != 0) {
		what_of(namespace_name, what);
		if (rc == DIRAUTH_ERR_STALE && past_valid_until(note, note_len, now)) {
			/* Signed by the threshold, but its time is over: the authorities published
			 * nothing newer. Its own status, so that a script never takes it for fresh. */
			ctl_report_fail(report, CTL_EXIT_TEMPFAIL, "%s: %s", what, detail);
			return rc;
		}
		return ctl_verification_fail(report, what, rc, detail);
	}
	snprintf(result->namespace_name, sizeof(result->namespace_name), "%s", namespace_name);
	result->epoch = header->epoch;
	result->record_count = header->record_count;
	result->signer_count = signers.count;
	result->authority_count = bundle->authority_count;
	snprintf(result->signer_names, sizeof(result->signer_names), "%s", signers.names);
	return 0;
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
                             const struct snapshot_header *header, const uint8_t *held_bytes, size_t held_len,
                             const uint8_t *note, size_t note_len, const uint8_t *certificates,
                             size_t certificates_len, char *path, size_t path_cap, char *why, size_t why_cap)
{
	const char *namespace_name = header->namespace_name;
	char namespace_directory[PATH_CAPACITY];
	uint8_t *held_certificates = NULL;
	size_t held_certificates_len = 0;
	struct evidence e;
	int rc;

	rc = join_path(namespace_directory, sizeof(namespace_directory), directory, namespace_name, NULL);
	if (rc != 0) {
		snprintf(why, why_cap, "%s", dirauth_strerror(rc));
		return rc;
	}
	ctl_evidence_between(&e, EVIDENCE_HEADERS, bundle, header->origin, header->epoch, held_bytes,
	                     held_len, note, note_len);
	read_held_certificates(directory, namespace_name, &held_certificates, &held_certificates_len);
	ctl_evidence_add_certificates(&e, held_certificates, held_certificates_len);
	ctl_evidence_add_certificates(&e, certificates, certificates_len);
	rc = ctl_evidence_keep(bundle, &e, namespace_directory, namespace_name, header->epoch, path, path_cap,
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

/* Reads the held header note back; without it there is no rollback check, and a check that
 * cannot run denies. */
static int parse_held(const char *namespace_name, const uint8_t *held_bytes, size_t held_len,
                      struct verify_held *held, struct ctl_report *report)
{
	int rc = verify_held_parse(held_bytes, held_len, held, NULL, 0);

	if (rc != 0)
		ctl_report_fail(report,
		                rc == DIRAUTH_ERR_NOMEM || rc == DIRAUTH_ERR_CRYPTO ? CTL_EXIT_SOFTWARE
		                                                                    : CTL_EXIT_DATA,
		                "fetch %s: held header %s cannot be read back: %s", namespace_name,
		                LATEST_HEADER, dirauth_strerror(rc));
	return rc;
}

/* Step 2a: the new header against the held one; an equivocation leaves its evidence file.
 * *newer gets whether the chain must be walked. */
static int check_history(const char *directory, const struct trust_bundle *bundle, const uint8_t *held_bytes,
                         size_t held_len, const struct verify_held *held, const uint8_t *note,
                         size_t note_len, const struct snapshot_header *header, const uint8_t *certificates,
                         size_t certificates_len, int *newer, struct ctl_report *report)
{
	char evidence_path[PATH_CAPACITY];
	char detail[VERIFY_DETAIL_MAX];
	char why[VERIFY_DETAIL_MAX + 64] = "";
	char what[WHAT_MAX];
	int rc;

	rc = verify_history_compare(held, note, note_len, header, newer, detail, sizeof(detail));
	if (rc == 0)
		return 0;
	what_of(header->namespace_name, what);
	if (rc != DIRAUTH_ERR_MISMATCH)
		return ctl_verification_fail(report, what, rc, detail);
	/* Two headers of one epoch (the only mismatch compare finds): both signed notes are kept, the
	 * held one first, for anyone to check. */
	if (keep_equivocation(directory, bundle, header, held_bytes, held_len, note, note_len, certificates,
	                      certificates_len, evidence_path, sizeof(evidence_path), why, sizeof(why)) == 0)
		ctl_report_fail(report, CTL_EXIT_DATA, "%s: %s; evidence written to %s", what, detail,
		                evidence_path);
	else
		ctl_report_fail(report, CTL_EXIT_DATA, "%s: %s; evidence could not be written: %s", what,
		                detail, why);
	return rc;
}

/* The walk of step 2b, begun: the keyring of the bundle and the certificates, and the chain from
 * header back to held. The caller frees *ring (also on failure). */
static int chain_begin(const struct trust_bundle *bundle, const uint8_t *certificates,
                       size_t certificates_len, const struct verify_held *held,
                       const struct snapshot_header *header, uint64_t max_chain,
                       struct certificate_keyring **ring, struct verify_chain *chain,
                       struct ctl_report *report)
{
	const char *namespace_name = header->namespace_name;
	struct verify_pins pins;
	char detail[VERIFY_DETAIL_MAX];
	char what[WHAT_MAX + 16];
	int rc;

	snprintf(what, sizeof(what), "fetch %s: history", namespace_name);
	rc = ctl_keyring_build(what, bundle, certificates, certificates_len, ring, NULL, report);
	if (rc != 0)
		return rc;
	pins.ring = *ring;
	pins.threshold = bundle->threshold;
	pins.pinned_by = VERIFY_TRUST_BUNDLE_PINNED_BY;
	rc = verify_chain_begin(chain, &pins, held, header, max_chain, detail, sizeof(detail));
	what_of(namespace_name, what);
	if (rc == DIRAUTH_ERR_BOUNDS) {
		/* Too far to walk: only the operator can say the new snapshot is the one to believe. */
		ctl_report_fail(
		    report, CTL_EXIT_DATA,
		    "%s: %s: check the new snapshot by other means, then delete %s/%s and fetch again", what,
		    detail, namespace_name, LATEST_HEADER);
		return rc;
	}
	if (rc != 0)
		return ctl_verification_fail(report, what, rc, detail);
	return 0;
}

static int chain_add(struct verify_chain *chain, uint64_t epoch, const uint8_t *note, size_t note_len,
                     struct ctl_report *report)
{
	char detail[VERIFY_DETAIL_MAX];
	char what[WHAT_MAX];
	int rc;

	rc = verify_chain_add(chain, epoch, note, note_len, detail, sizeof(detail));
	if (rc != 0) {
		what_of(chain->namespace_name, what);
		return ctl_verification_fail(report, what, rc, detail);
	}
	return 0;
}

static int chain_finish(const struct verify_chain *chain, struct ctl_report *report)
{
	char detail[VERIFY_DETAIL_MAX];
	char what[WHAT_MAX];
	int rc;

	rc = verify_chain_finish(chain, detail, sizeof(detail));
	if (rc != 0) {
		what_of(chain->namespace_name, what);
		return ctl_verification_fail(report, what, rc, detail);
	}
	return 0;
}

/* Step 2b over links already downloaded, from a parsed held header. */
static int walk_links(const struct trust_bundle *bundle, const uint8_t *certificates, size_t certificates_len,
                      const struct verify_held *held, const struct snapshot_header *header,
                      const struct ctl_fetch_link *links, size_t link_count, uint64_t max_chain,
                      struct ctl_report *report)
{
	struct certificate_keyring *ring = NULL;
	struct verify_chain chain;
	int rc;

	rc = chain_begin(bundle, certificates, certificates_len, held, header, max_chain, &ring, &chain,
	                 report);
	for (size_t i = 0; rc == 0 && i < link_count && !verify_chain_reached(&chain); i++)
		rc = chain_add(&chain, links[i].epoch, links[i].note, links[i].note_len, report);
	if (rc == 0)
		rc = chain_finish(&chain, report);
	verify_keyring_free(ring);
	return rc;
}

int ctl_fetch_verify_chain(const struct trust_bundle *bundle, const uint8_t *certificates,
                           size_t certificates_len, const uint8_t *held_bytes, size_t held_len,
                           const struct snapshot_header *header, const struct ctl_fetch_link *links,
                           size_t link_count, uint64_t max_chain, struct ctl_report *report)
{
	struct verify_held held;
	int rc;

	rc = parse_held(header->namespace_name, held_bytes, held_len, &held, report);
	if (rc == 0)
		rc = walk_links(bundle, certificates, certificates_len, &held, header, links, link_count,
		                max_chain, report);
	return rc;
}

/* Step 3, with the refusal in words: 70 when the body could not be checked, 65 otherwise. */
static int verify_body(const struct trust_bundle *bundle, const struct snapshot_header *header,
                       const char *encoding, const uint8_t *data, size_t len, struct buffer *body,
                       struct ctl_report *report)
{
	char detail[VERIFY_DETAIL_MAX];
	int rc;

	rc = verify_snapshot_body(bundle, header, encoding, data, len, body, detail, sizeof(detail));
	if (rc != 0)
		ctl_report_fail(report,
		                rc == DIRAUTH_ERR_NOMEM || rc == DIRAUTH_ERR_CRYPTO ? CTL_EXIT_SOFTWARE
		                                                                    : CTL_EXIT_DATA,
		                "fetch %s: %s", header->namespace_name, detail);
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
	/* The body before its header: a mirror serves no header whose body it lacks. */
	snprintf(name, sizeof(name), "%" PRIu64 ".body", epoch);
	rc = ctl_file_write_atomic(namespace_directory, name, body, body_len);
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

/* Where the headers of a walk come from: downloaded one epoch at a time (the network half), or
 * the links already in memory. */
struct walk_source {
	const struct ctl_fetch_options *options; /* the network half: download each epoch */
	size_t base_len;                         /* of options->server_url, without trailing '/' */
	struct net_pool *pool;                   /* the run's kept-alive connections, or NULL */
	const struct ctl_fetch_link *links;      /* or these, already downloaded */
	size_t link_count;
};

/* Step 2b over the network: GET the header of each epoch from the new one's - 1 down, skipping
 * those the server has none for (404), until the chain reaches the held header. */
static int walk_network(const struct walk_source *source, const uint8_t *certificates,
                        size_t certificates_len, const struct verify_held *held,
                        const struct snapshot_header *header, uint64_t max_chain, struct ctl_report *report)
{
	const struct ctl_fetch_options *options = source->options;
	const char *namespace_name = options->namespace_name;
	const char *const namespace_headers[] = {options->authorization, NULL};
	struct certificate_keyring *ring = NULL;
	struct net_response response;
	struct verify_chain chain;
	struct buffer url;
	char what[WHAT_MAX];
	char label[64];
	int rc;

	memset(&chain, 0, sizeof(chain));
	net_response_init(&response);
	buffer_init(&url);
	what_of(namespace_name, what);
	rc = chain_begin(options->bundle, certificates, certificates_len, held, header, max_chain, &ring,
	                 &chain, report);
	/* begin bounded header->epoch - held epoch by max_chain, so the loop is bounded too. */
	for (uint64_t epoch = header->epoch - 1;
	     rc == 0 && !verify_chain_reached(&chain) && epoch > held->header.epoch; epoch--) {
		buffer_reset(&url);
		rc = buffer_appendf(&url, "%.*s/v1/%s/snapshots/%" PRIu64, (int)source->base_len,
		                    options->server_url, namespace_name, epoch);
		if (rc != 0) {
			ctl_report_fail(report, CTL_EXIT_USAGE, "%s: server URL too long", what);
			break;
		}
		snprintf(label, sizeof(label), "history: epoch %" PRIu64, epoch);
		rc = ctl_exchange_get_pooled(source->pool, what, label, (const char *)url.data,
		                             namespace_headers, CTL_FETCH_HEADER_NOTE_MAX, 1, &response,
		                             report);
		if (rc == 0 && response.status == 200)
			rc = chain_add(&chain, epoch, response.body.data, response.body.len, report);
	}
	if (rc == 0)
		rc = chain_finish(&chain, report);
	verify_keyring_free(ring);
	net_response_free(&response);
	buffer_free(&url);
	return rc;
}

/* Steps 2a and 2b for a verified header and the held bytes (none held: nothing to check). */
static int check_held(const char *directory, const struct trust_bundle *bundle,
                      const struct walk_source *source, const uint8_t *held_bytes, size_t held_len,
                      const uint8_t *note, size_t note_len, const struct snapshot_header *header,
                      const uint8_t *certificates, size_t certificates_len, uint64_t max_chain,
                      struct ctl_report *report)
{
	const char *namespace_name = header->namespace_name;
	struct verify_held held;
	int newer = 0;
	int rc;

	if (held_len == 0)
		return 0;
	rc = parse_held(namespace_name, held_bytes, held_len, &held, report);
	if (rc == 0)
		rc = check_history(directory, bundle, held_bytes, held_len, &held, note, note_len, header,
		                   certificates, certificates_len, &newer, report);
	if (rc != 0 || !newer)
		return rc;
	if (source->options != NULL)
		return walk_network(source, certificates, certificates_len, &held, header, max_chain, report);
	return walk_links(bundle, certificates, certificates_len, &held, header, source->links,
	                  source->link_count, max_chain, report);
}

/* ---- Step 2c: the log (fetch_log.h) ---- */

/* The consistency proof of an input already in memory. */
static int given_consistency(void *context, uint64_t old_size, uint64_t new_size, struct buffer *out,
                             struct ctl_report *report)
{
	const struct ctl_fetch_input *input = context;

	if (input->consistency == NULL) {
		ctl_report_fail(report, CTL_EXIT_DATA,
		                "fetch %s: log: no consistency proof from size %" PRIu64 " to %" PRIu64,
		                input->namespace_name, old_size, new_size);
		return DIRAUTH_ERR_PROOF;
	}
	if (buffer_append(out, input->consistency, input->consistency_len) != 0) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "fetch %s: out of memory", input->namespace_name);
		return DIRAUTH_ERR_NOMEM;
	}
	return 0;
}

/* What step 2c showed, for the summary. */
static void log_result(const struct ctl_fetch_log *log, struct ctl_fetch_result *result)
{
	result->log_checked = log->checked;
	result->log = log->inclusion;
	result->log_had_held = log->had_held;
	result->log_held_size = log->held_size;
}

/* A snapshot as it came: the header note, the certificate bundle it was verified with, and the
 * body as sent (in body_encoding). */
struct fetched {
	const uint8_t *header_note;
	size_t header_note_len;
	const uint8_t *certificates;
	size_t certificates_len;
	const char *body_encoding;
	const uint8_t *body;
	size_t body_len;
	int verified; /* body is already decoded and verified (rebuilt from a diff: fetch_diff.h) */
};

/* What every fetch does once the header, the held history and the log have passed (fetch.h):
 * step 3 (the body against header), 3b (against the revocations of held, the mirror's latest held
 * header note), 4 (the files, with what step 2c showed in log) and 5 (the older snapshots the new
 * one revokes dropped, in result). */
static int take_body(const struct trust_bundle *bundle, const char *directory, const char *namespace_name,
                     const struct snapshot_header *header, const struct fetched *fetched,
                     const struct buffer *held, const struct ctl_fetch_log *log,
                     struct ctl_fetch_result *result, struct ctl_report *report)
{
	struct buffer body;
	buffer_init(&body);
	int rc = fetched->verified ? buffer_append(&body, fetched->body, fetched->body_len)
	                           : verify_body(bundle, header, fetched->body_encoding, fetched->body,
	                                         fetched->body_len, &body, report);
	if (rc != 0 && fetched->verified)
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "fetch %s: out of memory", namespace_name);
	if (rc == 0)
		rc = ctl_fetch_check_revoked(bundle, directory, namespace_name, held->data, held->len,
		                             body.data, body.len, report);
	if (rc == 0)
		rc = ctl_fetch_log_store(directory, namespace_name, header->epoch, log, report);
	if (rc == 0)
		rc = ctl_fetch_store(directory, namespace_name, header->epoch, fetched->header_note,
		                     fetched->header_note_len, body.data, body.len, fetched->certificates,
		                     fetched->certificates_len, report);
	result->dropped_count = 0;
	if (rc == 0)
		rc = ctl_fetch_drop_revoked(bundle, directory, namespace_name, header->epoch, body.data,
		                            body.len, result->dropped, &result->dropped_count, report);
	if (rc == 0)
		log_result(log, result);
	buffer_free(&body);
	return rc;
}

/* ---- */

int ctl_fetch_verify_and_store(const struct ctl_fetch_input *input, struct ctl_fetch_result *result,
                               struct ctl_report *report)
{
	struct verify_snapshot_policy defaults;
	const struct verify_snapshot_policy *policy = input->policy;
	struct walk_source source = {.links = input->links, .link_count = input->link_count};
	struct snapshot_header header;
	struct ctl_fetch_log log;
	struct buffer held;
	int rc;

	if (policy == NULL) {
		verify_snapshot_policy_default(&defaults);
		policy = &defaults;
	}
	buffer_init(&held);
	ctl_fetch_log_init(&log);
	rc = ctl_fetch_verify_header(input->bundle, input->namespace_name, input->header_note,
	                             input->header_note_len, input->certificates, input->certificates_len,
	                             input->now, policy, &header, result, report);
	if (rc == 0)
		rc = ctl_fetch_read_held(input->directory, input->namespace_name, &held, report);
	if (rc == 0)
		rc = check_held(input->directory, input->bundle, &source, held.data, held.len,
		                input->header_note, input->header_note_len, &header, input->certificates,
		                input->certificates_len, policy->max_chain, report);
	if (rc == 0)
		rc = ctl_fetch_log_verify(input->log, input->directory, &header, input->header_note,
		                          input->header_note_len, input->proof, input->proof_len,
		                          given_consistency, (void *)input, &log, report);
	if (rc == 0) {
		const struct fetched fetched = {.header_note = input->header_note,
		                                .header_note_len = input->header_note_len,
		                                .certificates = input->certificates,
		                                .certificates_len = input->certificates_len,
		                                .body_encoding = input->body_encoding,
		                                .body = input->body,
		                                .body_len = input->body_len};
		rc = take_body(input->bundle, input->directory, input->namespace_name, &header, &fetched,
		               &held, &log, result, report);
	}
	ctl_fetch_log_free(&log);
	buffer_free(&held);
	return rc;
}

int ctl_fetch_run(const struct ctl_fetch_options *options, struct ctl_fetch_result *result,
                  struct ctl_report *report)
{
	/* A private namespace's routes answer only to its capability; the certificates never see it. */
	const char *const namespace_headers[] = {options->authorization, NULL};
	const char *const body_headers[] = {"Accept-Encoding: zstd, gzip", options->authorization, NULL};
	const char *directory = options->directory != NULL ? options->directory : CTL_FETCH_DEFAULT_DIRECTORY;
	const char *namespace_name = options->namespace_name;
	struct walk_source source = {.options = options};
	struct net_response header_response;
	struct net_response body_response;
	struct snapshot_header header;
	struct ctl_fetch_log log;
	struct buffer url;
	struct buffer certificates;
	struct buffer held;
	struct buffer rebuilt;
	struct verify_snapshot_policy defaults;
	const struct verify_snapshot_policy *policy = options->policy;
	char what[WHAT_MAX];
	size_t max_compressed;
	int rc;

	if (policy == NULL) {
		verify_snapshot_policy_default(&defaults);
		policy = &defaults;
	}
	buffer_init(&held);
	ctl_fetch_log_init(&log);
	net_response_init(&header_response);
	net_response_init(&body_response);
	buffer_init(&url);
	buffer_init(&certificates);
	buffer_init(&rebuilt);
	what_of(namespace_name, what);
	source.base_len = ctl_exchange_url_length(options->server_url);
	/* The run's requests to the server share kept-alive connections: a history of many epochs
	 * costs one connection, not one each. Without a pool (no memory), each opens its own. */
	if (net_pool_new(NULL, &source.pool) != 0)
		source.pool = NULL;

	rc = buffer_appendf(&url, "%.*s/v1/%s/snapshots/latest", (int)source.base_len, options->server_url,
	                    namespace_name);
	if (rc != 0) {
		ctl_report_fail(report, CTL_EXIT_USAGE, "%s: server URL too long", what);
		goto done;
	}
	/* Before any download: a namespace the bundle does not pin cannot be verified. */
	if (trust_bundle_namespace(options->bundle, namespace_name) == NULL) {
		rc = DIRAUTH_ERR_CONFIG;
		ctl_report_fail(report, CTL_EXIT_CONFIG, "%s: namespace not in the trust bundle", what);
		goto done;
	}
	rc = ctl_exchange_get_pooled(source.pool, what, "latest header", (const char *)url.data,
	                             namespace_headers, CTL_FETCH_HEADER_NOTE_MAX, 0, &header_response,
	                             report);
	if (rc != 0)
		goto done;
	rc = ctl_keyring_download(what, options->server_url, &certificates, report);
	if (rc != 0)
		goto done;
	rc = ctl_fetch_verify_header(options->bundle, namespace_name, header_response.body.data,
	                             header_response.body.len, certificates.data, certificates.len,
	                             options->now, policy, &header, result, report);
	if (rc != 0)
		goto done;
	rc = ctl_fetch_read_held(directory, namespace_name, &held, report);
	if (rc != 0)
		goto done;
	rc = check_held(directory, options->bundle, &source, held.data, held.len, header_response.body.data,
	                header_response.body.len, &header, certificates.data, certificates.len,
	                policy->max_chain, report);
	if (rc != 0)
		goto done;
	rc = ctl_fetch_log_run(options->log, options->server_url, options->authorization, directory, &header,
	                       header_response.body.data, header_response.body.len, &log, report);
	if (rc != 0)
		goto done;

	/* The body as a diff from the held one when the server offers it (fetch_diff.h), else whole. */
	if (ctl_fetch_diff(source.pool, options->server_url, source.base_len, options->authorization,
	                   options->bundle, directory, namespace_name, held.data, held.len, &header, &rebuilt,
	                   &result->diff) == 0) {
		const struct fetched from_diff = {.header_note = header_response.body.data,
		                                  .header_note_len = header_response.body.len,
		                                  .certificates = certificates.data,
		                                  .certificates_len = certificates.len,
		                                  .body = rebuilt.data,
		                                  .body_len = rebuilt.len,
		                                  .verified = 1};
		rc = take_body(options->bundle, directory, namespace_name, &header, &from_diff, &held, &log,
		               result, report);
		goto done;
	}
	buffer_reset(&url);
	rc = buffer_appendf(&url, "%.*s/v1/%s/snapshots/%" PRIu64 "/body", (int)source.base_len,
	                    options->server_url, namespace_name, header.epoch);
	if (rc != 0) {
		ctl_report_fail(report, CTL_EXIT_USAGE, "%s: server URL too long", what);
		goto done;
	}
	max_compressed = options->bundle->max_body_compressed > SIZE_MAX
	                     ? SIZE_MAX
	                     : (size_t)options->bundle->max_body_compressed;
	rc = ctl_exchange_get_pooled(source.pool, what, "body", (const char *)url.data, body_headers,
	                             max_compressed, 0, &body_response, report);
	if (rc != 0)
		goto done;
	const struct fetched fetched = {.header_note = header_response.body.data,
	                                .header_note_len = header_response.body.len,
	                                .certificates = certificates.data,
	                                .certificates_len = certificates.len,
	                                .body_encoding = body_response.content_encoding,
	                                .body = body_response.body.data,
	                                .body_len = body_response.body.len};
	rc = take_body(options->bundle, directory, namespace_name, &header, &fetched, &held, &log, result,
	               report);
done:
	ctl_fetch_log_free(&log);
	net_response_free(&header_response);
	net_response_free(&body_response);
	net_pool_free(source.pool);
	buffer_free(&url);
	buffer_free(&certificates);
	buffer_free(&held);
	buffer_free(&rebuilt);
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
