/*
 * mirror_diffs.c: the snapshot diffs a mirror's tree serves (mirror_internal.h), at dirauthd's
 * path GET /v1/NS/snapshots/<epoch>/diff/<base sha256>.
 *
 * A mirror does not copy the authority's diffs: it builds them, as dirauthd does, from the bodies
 * it keeps. There is one spelling of the diff between two bodies (schema/snapshot-diff.md), so the
 * bytes are the authority's whichever builds them, and a mirror of a mirror gets diffs as well,
 * from the bodies it keeps. The rule is dirauthd's (server/publish/diffs.c): for each epoch new to
 * the tree, from each body kept of an earlier epoch, the diff is built (snapshot_diff_build) and
 * offered only when its zstd form is worth offering against the target's zstd body
 * (snapshot_diff_worth_offering); the target's zstd body is measured as the server sent it
 * (body.zst), or compressed here when the server sent none. The kept bodies are the mirror's
 * retention (--keep-epochs and the epochs still valid), not dirauthd's diffs.bases.
 *
 * The bodies are read from the tree, or from the scratch directory for those staged this run;
 * they were verified against their co-signed headers when taken, and a base is used only while
 * its bytes still hash to its header's body-sha256, which names the diff. The diff is staged as
 * immutable files (identity, .gz, .zst, like a body), renamed into the tree with the other
 * immutable files before any pointer; it goes with its target's body or its base's (mirror.c's
 * pruning calls ctl_mirror_diffs_remove_from).
 */
#include "ctl/mirror_internal.h"

#include "base/error.h"
#include "compress/compress.h"
#include "crypto/crypto.h"
#include "ctl/files.h"
#include "schema/snapshot_diff.h"
#include "verify/snapshot.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void hex_of(const uint8_t digest[32], char out[65])
{
	for (size_t i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", digest[i]);
}

static int append_to(void *context, const uint8_t *data, size_t len)
{
	return buffer_append(context, data, len);
}

/* data in encoding as dirauthd's store writes a diff: one stream, fed at once (compress.h; a
 * stream's zstd frame does not carry the content size that compress_encode's does), so that the
 * size measured, and the bytes served, are the authority's. */
static int encode_as_stored(enum content_encoding encoding, const uint8_t *data, size_t len,
                            struct buffer *out)
{
	struct compress_stream *stream = NULL;
	int rc;

	if (encoding == ENCODING_IDENTITY)
		return buffer_append(out, data, len);
	rc = compress_stream_new(encoding, &stream);
	if (rc == 0)
		rc = compress_stream_write(stream, data, len, append_to, out);
	if (rc == 0) {
		rc = compress_stream_finish(stream, append_to, out);
		stream = NULL;
	}
	compress_stream_free(stream);
	return rc;
}

/* Reads the body of epoch h (staged this run or served) when there is one and it still hashes to
 * its header's body-sha256. Returns 1 with *body and *len (the caller frees *body), 0 when there
 * is none to use, or a negative error (memory). */
int ctl_mirror_read_body(const struct mirror *m, const struct epoch_header *h, uint8_t **body, size_t *len)
{
	const struct trust_bundle *bundle = m->fetch->bundle;
	size_t bound =
	    bundle->max_body_uncompressed > SIZE_MAX ? SIZE_MAX : (size_t)bundle->max_body_uncompressed;
	char relative[96], path[CTL_MIRROR_PATH_CAPACITY];
	uint8_t digest[32];
	int rc;

	*body = NULL;
	*len = 0;
	snprintf(relative, sizeof(relative), "snapshots/%" PRIu64 "/body", h->epoch);
	if (!ctl_mirror_staged_or_served(m, relative, path))
		return 0;
	rc = ctl_file_read(path, bound, body, len);
	if (rc == DIRAUTH_ERR_NOMEM)
		return rc;
	if (rc != 0 || crypto_sha256(*body, *len, digest) != 0 ||
	    memcmp(digest, h->header.body_sha256, sizeof(digest)) != 0) {
		free(*body);
		*body = NULL;
		return 0;
	}
	return 1;
}

/* The size of the target's zstd body as served (body.zst), else compressed here. */
static int target_zstd_size(const struct mirror *m, const struct epoch_header *target, const uint8_t *body,
                            size_t len, size_t *size)
{
	char relative[96], path[CTL_MIRROR_PATH_CAPACITY];
	struct stat status;
	struct buffer zstd;
	int rc;

	snprintf(relative, sizeof(relative), "snapshots/%" PRIu64 "/body.zst", target->epoch);
	if (ctl_mirror_staged_or_served(m, relative, path) && stat(path, &status) == 0 &&
	    status.st_size >= 0) {
		*size = (size_t)status.st_size;
		return 0;
	}
	buffer_init(&zstd);
	rc = encode_as_stored(ENCODING_ZSTD, body, len, &zstd);
	*size = zstd.len;
	buffer_free(&zstd);
	return rc;
}

/* The diff from base to target, staged when worth offering. Returns 0 (staged or not worth it:
 * *staged says which), or an error, reported. */
static int stage_one(struct mirror *m, const struct epoch_header *target, const uint8_t *target_body,
                     size_t target_len, size_t target_zstd, const struct epoch_header *base,
                     const struct snapshot_body_limits *limits, int *staged, struct ctl_report *report)
{
	static const enum content_encoding encodings[] = {ENCODING_IDENTITY, ENCODING_GZIP, ENCODING_ZSTD};
	static const char *const suffixes[] = {"", ".gz", ".zst"};
	struct buffer forms[3];
	char hex[65], relative[192];
	uint8_t *base_body = NULL;
	size_t base_len = 0;
	int rc;

	*staged = 0;
	hex_of(base->header.body_sha256, hex);
	snprintf(relative, sizeof(relative), "snapshots/%" PRIu64 "/diff/%s", target->epoch, hex);
	if (ctl_mirror_served_exists(m, relative))
		return 0;
	rc = ctl_mirror_read_body(m, base, &base_body, &base_len);
	if (rc <= 0)
		return rc == 0 ? 0 : ctl_mirror_out_of_memory(m, report);
	rc = 0;
	for (size_t i = 0; i < 3; i++)
		buffer_init(&forms[i]);
	rc = snapshot_diff_build(base_body, base_len, target_body, target_len, limits, &forms[0]);
	for (size_t i = 1; rc == 0 && i < 3; i++)
		rc = encode_as_stored(encodings[i], forms[0].data, forms[0].len, &forms[i]);
	if (rc == DIRAUTH_ERR_NOMEM) {
		rc = ctl_mirror_out_of_memory(m, report);
	} else if (rc != 0) {
		rc = 0; /* verified bodies that do not make a diff: none is offered, as by dirauthd */
	} else if (snapshot_diff_worth_offering(forms[2].len, target_zstd)) {
		for (size_t i = 0; rc == 0 && i < 3; i++) {
			snprintf(relative, sizeof(relative), "snapshots/%" PRIu64 "/diff/%s%s", target->epoch,
			         hex, suffixes[i]);
			rc = ctl_mirror_stage_bytes(m, &m->immutable, relative, forms[i].data, forms[i].len,
			                            report);
		}
		*staged = rc == 0;
	}
	for (size_t i = 0; i < 3; i++)
		buffer_free(&forms[i]);
	free(base_body);
	return rc;
}

int ctl_mirror_diffs_stage(struct mirror *m, struct epoch_header **headers, size_t count, size_t *written,
                           struct ctl_report *report)
{
	struct snapshot_body_limits limits;
	int rc = 0;

	*written = 0;
	verify_snapshot_body_limits(m->fetch->bundle, &limits);
	for (size_t t = 0; rc == 0 && t < count; t++) {
		const struct epoch_header *target = headers[t];
		uint8_t *body = NULL;
		size_t len = 0, zstd = 0;
		if (!target->fresh || !target->keep)
			continue;
		int found = ctl_mirror_read_body(m, target, &body, &len);
		if (found < 0)
			rc = ctl_mirror_out_of_memory(m, report);
		if (found <= 0)
			continue; /* none: an epoch between whose body the server no longer kept */
		for (size_t b = 0; rc == 0 && b < count; b++) {
			const struct epoch_header *base = headers[b];
			int staged = 0;
			if (base->epoch >= target->epoch || !base->keep || base->body_revoked)
				continue;
			if (zstd == 0 && (rc = target_zstd_size(m, target, body, len, &zstd)) != 0) {
				rc = ctl_mirror_out_of_memory(m, report);
				break;
			}
			rc = stage_one(m, target, body, len, zstd, base, &limits, &staged, report);
			*written += (size_t)staged;
		}
		free(body);
	}
	return rc;
}

int ctl_mirror_diffs_remove_from(struct mirror *m, const struct epoch_header *base,
                                 struct epoch_header **headers, size_t count, struct ctl_report *report)
{
	static const char *const suffixes[] = {".zst", ".gz", ""};
	char hex[65], relative[192];
	int rc = 0;

	hex_of(base->header.body_sha256, hex);
	for (size_t i = 0; rc == 0 && i < count; i++) {
		if (headers[i] == base || headers[i]->epoch <= base->epoch)
			continue;
		for (size_t k = 0; rc == 0 && k < 3; k++) {
			snprintf(relative, sizeof(relative), "snapshots/%" PRIu64 "/diff/%s%s",
			         headers[i]->epoch, hex, suffixes[k]);
			rc = ctl_mirror_remove_served(m, relative, report);
		}
	}
	return rc;
}
