/*
 * snapshot.c: a snapshot header against a trust bundle, a body against its header (see
 * snapshot.h).
 *
 * The order is the point: the signatures are checked before anything the text says is believed
 * (the text is parsed first only because the signatures count at the header's own time), and the
 * body is decoded with the signed body-size as the hard bound.
 */
#include "verify/snapshot.h"

#include "compress/compress.h"
#include "base/error.h"
#include "verify/detail.h"
#include "schema/snapshot_diff.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void verify_snapshot_policy_default(struct verify_snapshot_policy *policy)
{
	policy->clock_skew = VERIFY_DEFAULT_CLOCK_SKEW;
	policy->max_validity = VERIFY_DEFAULT_MAX_VALIDITY;
	policy->max_chain = VERIFY_DEFAULT_MAX_CHAIN;
}

int verify_keyring_from_trust_bundle(const struct trust_bundle *bundle, const uint8_t *certificates,
                                     size_t certificates_len, struct certificate_keyring **out, size_t *added,
                                     char *detail, size_t detail_cap)
{
	struct certificate_keyring *ring = NULL;
	int rc;

	*out = NULL;
	if (added != NULL)
		*added = 0;
	/* verify_keyring_new, with the refusal of the pins in the bundle's words. */
	ring = malloc(sizeof(*ring));
	if (ring == NULL) {
		verify_detail_set(detail, detail_cap, "out of memory");
		return DIRAUTH_ERR_NOMEM;
	}
	rc = certificate_keyring_init(ring, bundle->authorities, bundle->authority_count);
	if (rc != 0) {
		verify_detail_set(detail, detail_cap, "the trust bundle's authorities cannot be pinned: %s",
		                  dirauth_strerror(rc));
		verify_keyring_free(ring);
		return DIRAUTH_ERR_CONFIG;
	}
	rc = verify_keyring_add_certificates(ring, certificates, certificates_len, added, detail, detail_cap);
	if (rc != 0) {
		verify_keyring_free(ring);
		return rc;
	}
	*out = ring;
	return 0;
}

/* Counts the pinned identities whose certified signing keys signed the note, each certificate
 * covering both the header's time and now. */
static int verify_signatures(const struct trust_bundle *bundle, const uint8_t *certificates,
                             size_t certificates_len, const struct note *note, uint64_t at, uint64_t now,
                             struct verify_signers *signers, char *detail, size_t detail_cap)
{
	struct certificate_keyring *ring = NULL;
	struct verify_pins pins;
	char why[VERIFY_DETAIL_MAX];
	int rc;

	rc = verify_keyring_from_trust_bundle(bundle, certificates, certificates_len, &ring, NULL, detail,
	                                      detail_cap);
	if (rc != 0)
		return rc;
	pins.ring = ring;
	pins.threshold = bundle->threshold;
	pins.pinned_by = VERIFY_TRUST_BUNDLE_PINNED_BY;
	rc = verify_note(&pins, note, at, now, signers, why, sizeof(why));
	if (rc != 0)
		verify_detail_set(detail, detail_cap, "header: %s", why);
	verify_keyring_free(ring);
	return rc;
}

/* The header's own times against the clock and the policy. */
static int check_times(const struct snapshot_header *header, uint64_t now,
                       const struct verify_snapshot_policy *policy, char *detail, size_t detail_cap)
{
	uint64_t latest_start = now > UINT64_MAX - policy->clock_skew ? UINT64_MAX : now + policy->clock_skew;

	if (header->valid_after > latest_start) {
		verify_detail_set(detail, detail_cap,
		                  "header: not yet valid: epoch %" PRIu64 " is valid after %" PRIu64
		                  ", now is %" PRIu64 " and the allowed clock skew is %" PRIu64 " s",
		                  header->epoch, header->valid_after, now, policy->clock_skew);
		return DIRAUTH_ERR_STALE;
	}
	if (header->valid_until <= now) {
		verify_detail_set(detail, detail_cap,
		                  "header: stale: epoch %" PRIu64 " was valid until %" PRIu64
		                  ", now is %" PRIu64,
		                  header->epoch, header->valid_until, now);
		return DIRAUTH_ERR_STALE;
	}
	/* The parser guarantees valid-after < valid-until. */
	if (header->valid_until - header->valid_after > policy->max_validity) {
		verify_detail_set(detail, detail_cap,
		                  "header: valid for %" PRIu64 " s (from %" PRIu64 " until %" PRIu64
		                  "), longer than the allowed %" PRIu64 " s",
		                  header->valid_until - header->valid_after, header->valid_after,
		                  header->valid_until, policy->max_validity);
		return DIRAUTH_ERR_BOUNDS;
	}
	return 0;
}

int verify_snapshot_header(const struct trust_bundle *bundle, const char *namespace_name,
                           const uint8_t *certificates, size_t certificates_len, const uint8_t *note_bytes,
                           size_t note_len, uint64_t now, const struct verify_snapshot_policy *policy,
                           struct snapshot_header *header, struct verify_signers *signers, char *detail,
                           size_t detail_cap)
{
	const struct trust_namespace *pinned;
	struct verify_snapshot_policy defaults;
	struct note *note = NULL;
	int rc;

	verify_detail_clear(detail, detail_cap);
	memset(header, 0, sizeof(*header));
	if (signers != NULL)
		memset(signers, 0, sizeof(*signers));
	if (policy == NULL) {
		verify_snapshot_policy_default(&defaults);
		policy = &defaults;
	}
	pinned = trust_bundle_namespace(bundle, namespace_name);
	if (pinned == NULL) {
		verify_detail_set(detail, detail_cap, "namespace not in the trust bundle");
		return DIRAUTH_ERR_CONFIG;
	}
	if (note_len > VERIFY_HEADER_NOTE_MAX) {
		verify_detail_set(detail, detail_cap, "header: larger than %d bytes", VERIFY_HEADER_NOTE_MAX);
		return DIRAUTH_ERR_BOUNDS;
	}
	rc = note_parse(note_bytes, note_len, &note);
	if (rc != 0) {
		verify_detail_set(detail, detail_cap, "header: not a signed note: %s", dirauth_strerror(rc));
		goto done;
	}
	if (note->text_len > SNAPSHOT_HEADER_MAX_BYTES) {
		rc = DIRAUTH_ERR_BOUNDS;
		verify_detail_set(detail, detail_cap, "header: text larger than %d bytes",
		                  SNAPSHOT_HEADER_MAX_BYTES);
		goto done;
	}
	/* The signatures count only for keys certified at the header's own time, so the text is
	 * parsed first; nothing it says is believed until the signatures below verified. The keys
	 * must be certified now as well: the header's time is the signers' choice, the clock is not. */
	rc = snapshot_header_parse(note->text, note->text_len, header);
	if (rc != 0) {
		verify_detail_set(detail, detail_cap, "header: not a snapshot header: %s",
		                  dirauth_strerror(rc));
		goto done;
	}
	rc = verify_signatures(bundle, certificates, certificates_len, note, header->valid_after, now,
	                       signers, detail, detail_cap);
	if (rc != 0)
		goto done;
	if (strcmp(header->namespace_name, namespace_name) != 0) {
		rc = DIRAUTH_ERR_MISMATCH;
		verify_detail_set(detail, detail_cap, "header: wrong namespace '%s'", header->namespace_name);
		goto done;
	}
	if (strcmp(header->origin, pinned->origin) != 0) {
		rc = DIRAUTH_ERR_MISMATCH;
		verify_detail_set(detail, detail_cap, "header: wrong origin '%s', the trust bundle pins '%s'",
		                  header->origin, pinned->origin);
		goto done;
	}
	if (header->consensus_method > SNAPSHOT_CONSENSUS_METHOD_MAX) {
		rc = DIRAUTH_ERR_SYNTAX;
		verify_detail_set(detail, detail_cap,
		                  "header: consensus method %" PRIu64
		                  " is not one this verifier knows (1..%d): "
		                  "its body cannot be judged",
		                  header->consensus_method, SNAPSHOT_CONSENSUS_METHOD_MAX);
		goto done;
	}
	rc = check_times(header, now, policy, detail, detail_cap);
	if (rc != 0)
		goto done;
	if (header->record_count > bundle->max_records) {
		rc = DIRAUTH_ERR_BOUNDS;
		verify_detail_set(detail, detail_cap,
		                  "header: %" PRIu64 " records, the trust bundle allows %" PRIu64,
		                  header->record_count, bundle->max_records);
		goto done;
	}
	if (header->body_size > bundle->max_body_uncompressed) {
		rc = DIRAUTH_ERR_BOUNDS;
		verify_detail_set(detail, detail_cap,
		                  "header: body of %" PRIu64 " bytes, the trust bundle allows %" PRIu64,
		                  header->body_size, bundle->max_body_uncompressed);
		goto done;
	}
done:
	if (rc != 0)
		memset(header, 0, sizeof(*header));
	note_free(note);
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

void verify_snapshot_body_limits(const struct trust_bundle *bundle, struct snapshot_body_limits *out)
{
	size_t max_records = bundle->max_records > SIZE_MAX ? SIZE_MAX : (size_t)bundle->max_records;
	size_t per_record = REGISTRATION_MAX_ENDPOINTS;
	out->max_records = max_records;
	out->max_health = max_records > SIZE_MAX / per_record ? SIZE_MAX : max_records * per_record;
	out->max_revocations = out->max_health;
}

/* What is judged of a body or a diff as served, before it is decoded: an encoding this verifier
 * reads, and no more bytes than the bundle's max-body-compressed. what is "body" or "diff". */
static int check_served(const struct trust_bundle *bundle, const char *what, const char *encoding_text,
                        size_t len, enum content_encoding *encoding, char *detail, size_t detail_cap)
{
	int rc = parse_encoding(encoding_text, encoding);
	if (rc != 0) {
		verify_detail_set(detail, detail_cap, "%s: unsupported content encoding '%.32s'", what,
		                  encoding_text);
		return rc;
	}
	if (len > bundle->max_body_compressed) {
		verify_detail_set(detail, detail_cap,
		                  "%s: %zu bytes as served, larger than the trust bundle's bound of %" PRIu64,
		                  what, len, bundle->max_body_compressed);
		return DIRAUTH_ERR_BOUNDS;
	}
	return 0;
}

/* The checks of a decoded body against its verified header (verify_snapshot_body's last step). */
static int verify_decoded_body(const struct trust_bundle *bundle, const struct snapshot_header *header,
                               const struct buffer *body, char *detail, size_t detail_cap)
{
	struct snapshot_body_limits limits;
	verify_snapshot_body_limits(bundle, &limits);
	/* Health is fresh for SNAPSHOT_HEALTH_FRESH_EPOCHS epochs of the header's schedule. */
	uint64_t epoch_length = header->fresh_until - header->valid_after;
	int rc = snapshot_body_verify_sections(header, body->data, body->len, &limits,
	                                       epoch_length * SNAPSHOT_HEALTH_FRESH_EPOCHS);
	if (rc == DIRAUTH_ERR_SIGNATURE || rc == DIRAUTH_ERR_UNKNOWN_KEY) {
		verify_detail_set(detail, detail_cap, "body: a record's provider signature does not verify");
		return rc;
	}
	if (rc == DIRAUTH_ERR_MISMATCH) {
		verify_detail_set(detail, detail_cap,
		                  "body: does not match the signed header (digest, size, count or root)");
		return rc;
	}
	if (rc != 0) {
		verify_detail_set(detail, detail_cap, "body: refused: %s", dirauth_strerror(rc));
		return rc;
	}
	return 0;
}

int verify_snapshot_body(const struct trust_bundle *bundle, const struct snapshot_header *header,
                         const char *encoding_text, const uint8_t *data, size_t len, struct buffer *body,
                         char *detail, size_t detail_cap)
{
	enum content_encoding encoding;
	int rc;

	verify_detail_clear(detail, detail_cap);
	buffer_reset(body);
	if ((rc = check_served(bundle, "body", encoding_text, len, &encoding, detail, detail_cap)) != 0)
		return rc;
	/* The header's body-size is signed, so it is the exact output bound while inflating. */
	rc = compress_decode(encoding, data, len,
	                     header->body_size > SIZE_MAX ? SIZE_MAX : (size_t)header->body_size, body);
	if (rc == DIRAUTH_ERR_BOUNDS) {
		verify_detail_set(detail, detail_cap,
		                  "body: decompresses past its bound (the header's body-size of %" PRIu64
		                  " bytes, or the ratio guard)",
		                  header->body_size);
		return rc;
	}
	if (rc != 0) {
		verify_detail_set(detail, detail_cap, "body: cannot decode %s data: %s",
		                  content_encoding_name(encoding), dirauth_strerror(rc));
		return rc;
	}
	return verify_decoded_body(bundle, header, body, detail, detail_cap);
}

int verify_snapshot_diff(const struct trust_bundle *bundle, const struct snapshot_header *header,
                         const uint8_t *base, size_t base_len, const char *encoding_text, const uint8_t *data,
                         size_t len, struct buffer *body, char *detail, size_t detail_cap)
{
	enum content_encoding encoding;
	struct snapshot_diff_head head;
	struct snapshot_body_limits limits;
	struct buffer diff, rebuilt;
	int rc;

	verify_detail_clear(detail, detail_cap);
	buffer_reset(body);
	if ((rc = check_served(bundle, "diff", encoding_text, len, &encoding, detail, detail_cap)) != 0)
		return rc;
	buffer_init(&diff);
	buffer_init(&rebuilt);
	/* A diff is offered only when it is a share of the body it rebuilds: its head aside, never
	 * larger, which bounds it while it inflates. */
	uint64_t bound = header->body_size + SNAPSHOT_DIFF_HEAD_MAX;
	rc = compress_decode(encoding, data, len, bound > SIZE_MAX ? SIZE_MAX : (size_t)bound, &diff);
	if (rc != 0)
		verify_detail_set(detail, detail_cap,
		                  "diff: cannot decode %s data within the body's size: %s",
		                  content_encoding_name(encoding), dirauth_strerror(rc));
	if (rc == 0 && (rc = snapshot_diff_parse_head(diff.data, diff.len, &head)) != 0)
		verify_detail_set(detail, detail_cap, "diff: not a diff: %s", dirauth_strerror(rc));
	if (rc == 0 && (memcmp(head.target_sha256, header->body_sha256, 32) != 0 ||
	                head.target_size != header->body_size)) {
		rc = DIRAUTH_ERR_MISMATCH;
		verify_detail_set(detail, detail_cap, "diff: not to the body the header commits to");
	}
	if (rc == 0) {
		verify_snapshot_body_limits(bundle, &limits);
		rc = snapshot_diff_apply(base, base_len, diff.data, diff.len, &limits, &rebuilt);
		if (rc != 0)
			verify_detail_set(detail, detail_cap, "diff: does not apply to the held body: %s",
			                  dirauth_strerror(rc));
	}
	if (rc == 0)
		rc = verify_decoded_body(bundle, header, &rebuilt, detail, detail_cap);
	if (rc == 0) {
		*body = rebuilt;
		buffer_init(&rebuilt);
	}
	buffer_free(&diff);
	buffer_free(&rebuilt);
	return rc;
}
