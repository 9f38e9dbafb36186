/*
 * fetch.c: verify-then-store of one snapshot, and the downloads that feed it (see fetch.h).
 *
 * The order of the checks is the point: signatures before parsing what they cover is trusted,
 * history before the (large) body is downloaded, the body before any file is written, and
 * latest.header last, so that a crash or a refusal at any step leaves the mirror's idea of
 * "latest" where it was.
 */
#include "ctl/fetch.h"

#include "schema/compress.h"
#include "schema/error.h"
#include "ctl/files.h"
#include "ctl/http_client.h"
#include "ctl/keyring.h"
#include "schema/note.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PATH_CAPACITY 4096
#define LATEST_HEADER "latest.header"
#define CERTIFICATES  "certificates"

void ctl_fetch_policy_default(struct ctl_fetch_policy *policy)
{
	policy->clock_skew = CTL_FETCH_DEFAULT_CLOCK_SKEW;
	policy->max_validity = CTL_FETCH_DEFAULT_MAX_VALIDITY;
	policy->max_chain = CTL_FETCH_DEFAULT_MAX_CHAIN;
}

/* Counts the pinned identities whose certified signing keys signed the note, each certificate
 * covering both the header's time and now. */
static int verify_signatures(const struct trust_bundle *bundle, const char *namespace_name,
                             const uint8_t *certificates, size_t certificates_len, const struct note *note,
                             uint64_t at, uint64_t now, struct ctl_fetch_result *result,
                             struct ctl_report *report)
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
	rc = ctl_keyring_verify_both(what, ring, note, at, now, bundle->threshold, &verified_count,
	                             result->signer_names, sizeof(result->signer_names), report);
	if (rc == 0) {
		result->signer_count = verified_count;
		result->authority_count = bundle->authority_count;
	}
	free(ring);
	return rc;
}

/* The header's own times against the clock and the policy. */
static int check_times(const char *namespace_name, const struct snapshot_header *header, uint64_t now,
                       const struct ctl_fetch_policy *policy, struct ctl_report *report)
{
	uint64_t latest_start = now > UINT64_MAX - policy->clock_skew ? UINT64_MAX : now + policy->clock_skew;

	if (header->valid_after > latest_start) {
		ctl_report_fail(report, CTL_EXIT_DATA,
		                "fetch %s: header: not yet valid: epoch %" PRIu64 " is valid after %" PRIu64
		                ", now is %" PRIu64 " and the allowed clock skew is %" PRIu64 " s",
		                namespace_name, header->epoch, header->valid_after, now, policy->clock_skew);
		return DIRAUTH_ERR_STALE;
	}
	if (header->valid_until <= now) {
		ctl_report_fail(report, CTL_EXIT_DATA,
		                "fetch %s: header: stale: epoch %" PRIu64 " was valid until %" PRIu64
		                ", now is %" PRIu64,
		                namespace_name, header->epoch, header->valid_until, now);
		return DIRAUTH_ERR_STALE;
	}
	/* The parser guarantees valid-after < valid-until. */
	if (header->valid_until - header->valid_after > policy->max_validity) {
		ctl_report_fail(report, CTL_EXIT_DATA,
		                "fetch %s: header: valid for %" PRIu64 " s (from %" PRIu64 " until %" PRIu64
		                "), longer than the allowed %" PRIu64 " s",
		                namespace_name, header->valid_until - header->valid_after,
		                header->valid_after, header->valid_until, policy->max_validity);
		return DIRAUTH_ERR_BOUNDS;
	}
	return 0;
}

int ctl_fetch_verify_header(const struct trust_bundle *bundle, const char *namespace_name,
                            const uint8_t *note_bytes, size_t note_len, const uint8_t *certificates,
                            size_t certificates_len, uint64_t now, const struct ctl_fetch_policy *policy,
                            struct snapshot_header *header, struct ctl_fetch_result *result,
                            struct ctl_report *report)
{
	const struct trust_namespace *pinned;
	struct ctl_fetch_policy defaults;
	struct note *note = NULL;
	int rc;

	memset(result, 0, sizeof(*result));
	memset(header, 0, sizeof(*header));
	if (policy == NULL) {
		ctl_fetch_policy_default(&defaults);
		policy = &defaults;
	}
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
	 * parsed first; nothing it says is believed until the signatures below verified. The keys
	 * must be certified now as well: the header's time is the signers' choice, the clock is not. */
	rc = snapshot_header_parse(note->text, note->text_len, header);
	if (rc != 0) {
		ctl_report_fail(report, CTL_EXIT_DATA, "fetch %s: header: not a snapshot header: %s",
		                namespace_name, dirauth_strerror(rc));
		goto done;
	}
	rc = verify_signatures(bundle, namespace_name, certificates, certificates_len, note,
	                       header->valid_after, now, result, report);
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
	rc = check_times(namespace_name, header, now, policy, report);
	if (rc != 0)
		goto done;
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
	rc = ctl_file_read(path, CTL_FETCH_HEADER_NOTE_MAX, &bytes, &len);
	if (rc != 0) {
		ctl_report_fail(report, rc == DIRAUTH_ERR_BOUNDS ? CTL_EXIT_DATA : CTL_EXIT_IO,
		                "fetch %s: held header %s: %s", namespace_name, path, dirauth_strerror(rc));
		return rc;
	}
	rc = buffer_append(held, bytes, len);
	if (rc != 0)
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "fetch %s: out of memory", namespace_name);
	free(bytes);
	return rc;
}

/* Parses a held header note back into its note and header; a failure is put in words. */
static int parse_held(const char *namespace_name, const uint8_t *held_bytes, size_t held_len,
                      struct note **held, struct snapshot_header *held_header, struct ctl_report *report)
{
	int rc;

	*held = NULL;
	rc = note_parse(held_bytes, held_len, held);
	if (rc == 0)
		rc = snapshot_header_parse((*held)->text, (*held)->text_len, held_header);
	if (rc != 0) {
		/* Without the held epoch there is no rollback check, and a check that cannot run denies. */
		ctl_report_fail(report, rc == DIRAUTH_ERR_NOMEM ? CTL_EXIT_SOFTWARE : CTL_EXIT_DATA,
		                "fetch %s: held header %s cannot be read back: %s", namespace_name,
		                LATEST_HEADER, dirauth_strerror(rc));
		note_free(*held);
		*held = NULL;
	}
	return rc;
}

int ctl_fetch_check_history(const char *directory, const char *namespace_name, const uint8_t *held_bytes,
                            size_t held_len, const uint8_t *note_bytes, size_t note_len,
                            const struct snapshot_header *header, struct ctl_report *report)
{
	char evidence_path[PATH_CAPACITY];
	struct snapshot_header held_header;
	struct note *held = NULL;
	struct note *fetched = NULL;
	int rc;

	if (held_len == 0)
		return 0;
	rc = parse_held(namespace_name, held_bytes, held_len, &held, &held_header, report);
	if (rc != 0)
		return rc;
	rc = note_parse(note_bytes, note_len, &fetched);
	if (rc != 0) {
		ctl_report_fail(report, rc == DIRAUTH_ERR_NOMEM ? CTL_EXIT_SOFTWARE : CTL_EXIT_DATA,
		                "fetch %s: header: not a signed note: %s", namespace_name,
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
	return rc;
}

/* The refusal every broken link ends in, with what broke. */
static int chain_broken(const struct ctl_fetch_chain *chain, struct ctl_report *report, const char *format,
                        ...) __attribute__((format(printf, 3, 4)));

static int chain_broken(const struct ctl_fetch_chain *chain, struct ctl_report *report, const char *format,
                        ...)
{
	char detail[CTL_REPORT_MAX / 2];
	va_list args;

	va_start(args, format);
	vsnprintf(detail, sizeof(detail), format, args);
	va_end(args);
	ctl_report_fail(report, CTL_EXIT_DATA,
	                "fetch %s: history does not chain to the held snapshot (epoch %" PRIu64 "): %s",
	                chain->namespace_name, chain->held_epoch, detail);
	return DIRAUTH_ERR_MISMATCH;
}

int ctl_fetch_chain_begin(struct ctl_fetch_chain *chain, const struct trust_bundle *bundle,
                          const uint8_t *certificates, size_t certificates_len, const uint8_t *held_bytes,
                          size_t held_len, const struct snapshot_header *header, uint64_t max_chain,
                          struct ctl_report *report)
{
	struct snapshot_header held_header;
	struct note *held = NULL;
	char what[NAMESPACE_NAME_MAX + 32];
	int rc;

	memset(chain, 0, sizeof(*chain));
	chain->bundle = bundle;
	snprintf(chain->namespace_name, sizeof(chain->namespace_name), "%s", header->namespace_name);
	snprintf(chain->origin, sizeof(chain->origin), "%s", header->origin);
	rc = parse_held(chain->namespace_name, held_bytes, held_len, &held, &held_header, report);
	if (rc != 0)
		return rc;
	rc = snapshot_header_digest(held->text, held->text_len, chain->held_digest);
	note_free(held);
	if (rc != 0) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "fetch %s: cannot hash the held header: %s",
		                chain->namespace_name, dirauth_strerror(rc));
		return rc;
	}
	chain->held_epoch = held_header.epoch;
	chain->held_valid_after = held_header.valid_after;
	if (header->epoch <= held_header.epoch) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE,
		                "fetch %s: history: epoch %" PRIu64
		                " is not newer than the held epoch %" PRIu64,
		                chain->namespace_name, header->epoch, held_header.epoch);
		return DIRAUTH_ERR_INTERNAL;
	}
	if (header->epoch - held_header.epoch > max_chain) {
		ctl_report_fail(
		    report, CTL_EXIT_DATA,
		    "fetch %s: history: the server offers epoch %" PRIu64 ", %" PRIu64
		    " epochs past the held epoch %" PRIu64 ", more than the %" PRIu64
		    " this mirror walks back to check that one descends from the other; a mirror away that "
		    "long must be re-seeded deliberately: check the new snapshot by other means, then "
		    "delete %s/%s and fetch again",
		    chain->namespace_name, header->epoch, header->epoch - held_header.epoch,
		    held_header.epoch, max_chain, chain->namespace_name, LATEST_HEADER);
		return DIRAUTH_ERR_BOUNDS;
	}
	chain->next_epoch = header->epoch;
	chain->next_valid_after = header->valid_after;
	memcpy(chain->expected, header->previous, sizeof(chain->expected));
	if (header->valid_after < chain->held_valid_after)
		return chain_broken(chain, report,
		                    "epoch %" PRIu64 " is valid after %" PRIu64
		                    ", before the held header's valid-after %" PRIu64,
		                    header->epoch, header->valid_after, chain->held_valid_after);
	snprintf(what, sizeof(what), "fetch %s: history", chain->namespace_name);
	rc = ctl_keyring_build(what, bundle, certificates, certificates_len, &chain->ring, NULL, report);
	if (rc != 0)
		return rc;
	chain->reached = memcmp(chain->expected, chain->held_digest, sizeof(chain->expected)) == 0;
	return 0;
}

int ctl_fetch_chain_add(struct ctl_fetch_chain *chain, uint64_t epoch, const uint8_t *note_bytes,
                        size_t note_len, struct ctl_report *report)
{
	struct snapshot_header link;
	struct note *note = NULL;
	uint8_t digest[32];
	char what[NAMESPACE_NAME_MAX + 64];
	int rc;

	if (chain->ring == NULL || chain->reached || epoch >= chain->next_epoch ||
	    epoch <= chain->held_epoch) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE,
		                "fetch %s: history: epoch %" PRIu64 " added out of order",
		                chain->namespace_name, epoch);
		return DIRAUTH_ERR_INTERNAL;
	}
	snprintf(what, sizeof(what), "fetch %s: history: epoch %" PRIu64, chain->namespace_name, epoch);
	if (note_len > CTL_FETCH_HEADER_NOTE_MAX) {
		ctl_report_fail(report, CTL_EXIT_DATA, "%s: larger than %d bytes", what,
		                CTL_FETCH_HEADER_NOTE_MAX);
		return DIRAUTH_ERR_BOUNDS;
	}
	rc = note_parse(note_bytes, note_len, &note);
	if (rc != 0) {
		ctl_report_fail(report, rc == DIRAUTH_ERR_NOMEM ? CTL_EXIT_SOFTWARE : CTL_EXIT_DATA,
		                "%s: not a signed note: %s", what, dirauth_strerror(rc));
		goto done;
	}
	rc = note->text_len > SNAPSHOT_HEADER_MAX_BYTES
	         ? DIRAUTH_ERR_BOUNDS
	         : snapshot_header_parse(note->text, note->text_len, &link);
	if (rc != 0) {
		ctl_report_fail(report, CTL_EXIT_DATA, "%s: not a snapshot header: %s", what,
		                dirauth_strerror(rc));
		goto done;
	}
	/* A link is a past statement: its keys are judged at its own time only. */
	rc = ctl_keyring_verify(what, chain->ring, note, link.valid_after, chain->bundle->threshold, NULL,
	                        NULL, 0, report);
	if (rc != 0)
		goto done;
	if (link.epoch != epoch) {
		rc = chain_broken(chain, report,
		                  "the header served for epoch %" PRIu64 " is for epoch %" PRIu64, epoch,
		                  link.epoch);
		goto done;
	}
	if (strcmp(link.namespace_name, chain->namespace_name) != 0 ||
	    strcmp(link.origin, chain->origin) != 0) {
		rc = chain_broken(chain, report, "epoch %" PRIu64 " is of namespace '%s' and origin '%s'",
		                  epoch, link.namespace_name, link.origin);
		goto done;
	}
	if (link.valid_after > chain->next_valid_after || link.valid_after < chain->held_valid_after) {
		rc = chain_broken(chain, report,
		                  "epoch %" PRIu64 " is valid after %" PRIu64
		                  ", outside the held header's %" PRIu64 " and epoch %" PRIu64 "'s %" PRIu64,
		                  epoch, link.valid_after, chain->held_valid_after, chain->next_epoch,
		                  chain->next_valid_after);
		goto done;
	}
	rc = snapshot_header_digest(note->text, note->text_len, digest);
	if (rc != 0) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "%s: cannot hash the header: %s", what,
		                dirauth_strerror(rc));
		goto done;
	}
	if (memcmp(digest, chain->expected, sizeof(digest)) != 0) {
		rc = chain_broken(chain, report,
		                  "epoch %" PRIu64 " is not the previous header of epoch %" PRIu64, epoch,
		                  chain->next_epoch);
		goto done;
	}
	chain->next_epoch = link.epoch;
	chain->next_valid_after = link.valid_after;
	memcpy(chain->expected, link.previous, sizeof(chain->expected));
	chain->reached = memcmp(chain->expected, chain->held_digest, sizeof(chain->expected)) == 0;
done:
	note_free(note);
	return rc;
}

int ctl_fetch_chain_reached(const struct ctl_fetch_chain *chain)
{
	return chain->reached;
}

int ctl_fetch_chain_finish(const struct ctl_fetch_chain *chain, struct ctl_report *report)
{
	if (chain->reached)
		return 0;
	return chain_broken(chain, report,
	                    "the previous of epoch %" PRIu64
	                    " is no header the server holds after the held one, nor the held one",
	                    chain->next_epoch);
}

void ctl_fetch_chain_free(struct ctl_fetch_chain *chain)
{
	free(chain->ring);
	chain->ring = NULL;
}

int ctl_fetch_verify_chain(const struct trust_bundle *bundle, const uint8_t *certificates,
                           size_t certificates_len, const uint8_t *held, size_t held_len,
                           const struct snapshot_header *header, const struct ctl_fetch_link *links,
                           size_t link_count, uint64_t max_chain, struct ctl_report *report)
{
	struct ctl_fetch_chain chain;
	int rc;

	rc = ctl_fetch_chain_begin(&chain, bundle, certificates, certificates_len, held, held_len, header,
	                           max_chain, report);
	for (size_t i = 0; rc == 0 && i < link_count && !ctl_fetch_chain_reached(&chain); i++)
		rc = ctl_fetch_chain_add(&chain, links[i].epoch, links[i].note, links[i].note_len, report);
	if (rc == 0)
		rc = ctl_fetch_chain_finish(&chain, report);
	ctl_fetch_chain_free(&chain);
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

/* Whether a header is newer than the held one, so that its chain must be walked (a held header
 * that cannot be read says yes: the walk then refuses with the reason). */
static int newer_than_held(const uint8_t *held_bytes, size_t held_len, const struct snapshot_header *header)
{
	struct snapshot_header held_header;
	struct note *held = NULL;
	int newer = 1;

	if (held_len == 0)
		return 0;
	if (note_parse(held_bytes, held_len, &held) == 0 &&
	    snapshot_header_parse(held->text, held->text_len, &held_header) == 0)
		newer = header->epoch > held_header.epoch;
	note_free(held);
	return newer;
}

int ctl_fetch_verify_and_store(const struct ctl_fetch_input *input, struct ctl_fetch_result *result,
                               struct ctl_report *report)
{
	struct ctl_fetch_policy defaults;
	const struct ctl_fetch_policy *policy = input->policy;
	struct snapshot_header header;
	struct buffer held;
	struct buffer body;
	int rc;

	if (policy == NULL) {
		ctl_fetch_policy_default(&defaults);
		policy = &defaults;
	}
	buffer_init(&held);
	buffer_init(&body);
	rc = ctl_fetch_verify_header(input->bundle, input->namespace_name, input->header_note,
	                             input->header_note_len, input->certificates, input->certificates_len,
	                             input->now, policy, &header, result, report);
	if (rc == 0)
		rc = ctl_fetch_read_held(input->directory, input->namespace_name, &held, report);
	if (rc == 0)
		rc = ctl_fetch_check_history(input->directory, input->namespace_name, held.data, held.len,
		                             input->header_note, input->header_note_len, &header, report);
	if (rc == 0 && newer_than_held(held.data, held.len, &header))
		rc = ctl_fetch_verify_chain(input->bundle, input->certificates, input->certificates_len,
		                            held.data, held.len, &header, input->links, input->link_count,
		                            policy->max_chain, report);
	if (rc == 0)
		rc = ctl_fetch_verify_body(input->bundle, &header, input->body_encoding, input->body,
		                           input->body_len, &body, report);
	if (rc == 0)
		rc = ctl_fetch_store(input->directory, input->namespace_name, header.epoch,
		                     input->header_note, input->header_note_len, body.data, body.len,
		                     input->certificates, input->certificates_len, report);
	buffer_free(&held);
	buffer_free(&body);
	return rc;
}

/* GETs url into response, bounded by max_bytes, and insists on 200 (or, with allow_missing, 200
 * or 404, which the caller tells apart by response->status). */
static int download_or_missing(const char *namespace_name, const char *what, const char *url,
                               const char *const *headers, size_t max_bytes, int allow_missing,
                               struct ctl_http_response *response, struct ctl_report *report)
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
	if (response->status != 200 && !(allow_missing && response->status == 404)) {
		char description[CTL_REPORT_MAX / 2];
		ctl_http_describe_error(response, description, sizeof(description));
		ctl_report_fail(report, ctl_http_exit_code_for_status(response->status), "fetch %s: %s: %s",
		                namespace_name, what, description);
		return response->status >= 500 ? DIRAUTH_ERR_UNAVAILABLE : DIRAUTH_ERR_REFUSED;
	}
	return 0;
}

static int download(const char *namespace_name, const char *what, const char *url, const char *const *headers,
                    size_t max_bytes, struct ctl_http_response *response, struct ctl_report *report)
{
	return download_or_missing(namespace_name, what, url, headers, max_bytes, 0, response, report);
}

/* Step 2b over the network: GET the header of each epoch from the new one's - 1 down, skipping
 * those the server has none for (404), until the chain reaches the held header. */
static int walk_chain(const struct ctl_fetch_options *options, size_t base_len, const uint8_t *certificates,
                      size_t certificates_len, const uint8_t *held, size_t held_len,
                      const struct snapshot_header *header, uint64_t max_chain, struct ctl_report *report)
{
	const char *namespace_name = options->namespace_name;
	struct ctl_http_response response;
	struct ctl_fetch_chain chain;
	struct buffer url;
	char what[64];
	int rc;

	ctl_http_response_init(&response);
	buffer_init(&url);
	rc = ctl_fetch_chain_begin(&chain, options->bundle, certificates, certificates_len, held, held_len,
	                           header, max_chain, report);
	/* begin bounded header->epoch - held epoch by max_chain, so the loop is bounded too. */
	for (uint64_t epoch = header->epoch - 1;
	     rc == 0 && !ctl_fetch_chain_reached(&chain) && epoch > chain.held_epoch; epoch--) {
		buffer_reset(&url);
		ctl_http_response_free(&response);
		ctl_http_response_init(&response);
		rc = buffer_appendf(&url, "%.*s/v1/%s/snapshots/%" PRIu64, (int)base_len, options->server_url,
		                    namespace_name, epoch);
		if (rc != 0) {
			ctl_report_fail(report, CTL_EXIT_USAGE, "fetch %s: server URL too long",
			                namespace_name);
			break;
		}
		snprintf(what, sizeof(what), "history: epoch %" PRIu64, epoch);
		rc = download_or_missing(namespace_name, what, (const char *)url.data, NULL,
		                         CTL_FETCH_HEADER_NOTE_MAX, 1, &response, report);
		if (rc == 0 && response.status == 200)
			rc =
			    ctl_fetch_chain_add(&chain, epoch, response.body.data, response.body.len, report);
	}
	if (rc == 0)
		rc = ctl_fetch_chain_finish(&chain, report);
	ctl_fetch_chain_free(&chain);
	ctl_http_response_free(&response);
	buffer_free(&url);
	return rc;
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
	struct buffer held;
	struct ctl_fetch_policy defaults;
	const struct ctl_fetch_policy *policy = options->policy;
	char what[NAMESPACE_NAME_MAX + 16];
	size_t base_len;
	size_t max_compressed;
	int rc;

	if (policy == NULL) {
		ctl_fetch_policy_default(&defaults);
		policy = &defaults;
	}
	buffer_init(&held);
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
	                             options->now, policy, &header, result, report);
	if (rc != 0)
		goto done;
	rc = ctl_fetch_read_held(directory, namespace_name, &held, report);
	if (rc != 0)
		goto done;
	rc = ctl_fetch_check_history(directory, namespace_name, held.data, held.len,
	                             header_response.body.data, header_response.body.len, &header, report);
	if (rc != 0)
		goto done;
	if (newer_than_held(held.data, held.len, &header)) {
		rc = walk_chain(options, base_len, certificates.data, certificates.len, held.data, held.len,
		                &header, policy->max_chain, report);
		if (rc != 0)
			goto done;
	}

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
	buffer_free(&held);
	return rc;
}
