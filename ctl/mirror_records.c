/*
 * mirror_records.c: the record shards a mirror's tree serves (mirror_internal.h), at dirauthd's
 * path GET /v1/NS/snapshots/<epoch>/records/<shard>, so that dirauthctl lookup (and any client of
 * schema/record-shard.md) reads a static mirror as it reads an authority.
 *
 * As with the diffs, a mirror does not copy the authority's shards: it builds them from the body it
 * verified (record_shard_builder_*). A body has one set of shards, byte for byte, whoever builds
 * them, so a mirror of a mirror serves them too. Each shard is then judged against the co-signed
 * header as a client would judge it (verify_record_shard: the run brackets its shard, the notes
 * carry their ids, the range proof rebuilds the records root) before it is written: the tree never
 * serves what its own check would refuse.
 *
 * The shards of an epoch are written as files into one directory of the scratch area, and that
 * directory is renamed into the tree at once (snapshots/<e>/records), with the other immutable
 * files, before any pointer: a client that read the new latest header finds every shard of it.
 * Pruning removes the directory with the epoch's body (mirror.c), also when the body goes for what
 * a newer snapshot revokes.
 */
#include "ctl/mirror_internal.h"

#include "base/error.h"
#include "ctl/files.h"
#include "schema/record_shard.h"
#include "verify/record_proof.h"
#include "verify/snapshot.h"
#include "verify/verify.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every shard of one body, verified, written into directory. */
static int write_shards(struct mirror *m, const struct epoch_header *h, const uint8_t *body, size_t len,
                        const char *directory, struct ctl_report *report)
{
	struct snapshot_body_limits limits;
	struct record_shard_builder *builder = NULL;
	struct buffer shard;
	char detail[VERIFY_DETAIL_MAX], name[RECORD_SHARD_NAME_MAX + 1];
	int rc;

	verify_snapshot_body_limits(m->fetch->bundle, &limits);
	buffer_init(&shard);
	rc = record_shard_builder_new(body, len, &limits, &builder);
	if (rc != 0) {
		ctl_report_fail(report, rc == DIRAUTH_ERR_NOMEM ? CTL_EXIT_SOFTWARE : CTL_EXIT_DATA,
		                "%s: epoch %" PRIu64 ": no record shards can be built: %s", m->what, h->epoch,
		                dirauth_strerror(rc));
		return rc;
	}
	rc = ctl_directory_create(directory);
	if (rc != 0)
		rc = ctl_mirror_file_failure(m, "records", rc, report);
	unsigned bits = record_shard_builder_bits(builder);
	for (uint32_t index = 0; rc == 0 && index < (UINT32_C(1) << bits); index++) {
		buffer_reset(&shard);
		record_shard_name(index, bits, name);
		rc = record_shard_builder_shard(builder, index, &shard);
		if (rc == 0)
			rc = verify_record_shard(&h->header, shard.data, shard.len, index, detail,
			                         sizeof detail);
		if (rc != 0) {
			ctl_report_fail(report, rc == DIRAUTH_ERR_NOMEM ? CTL_EXIT_SOFTWARE : CTL_EXIT_DATA,
			                "%s: epoch %" PRIu64 ": record shard %s refused: %s", m->what,
			                h->epoch, name, detail[0] ? detail : dirauth_strerror(rc));
			break;
		}
		rc = ctl_file_write_atomic(directory, name, shard.data, shard.len);
		if (rc != 0)
			rc = ctl_mirror_file_failure(m, "records", rc, report);
	}
	record_shard_builder_free(builder);
	buffer_free(&shard);
	return rc;
}

int ctl_mirror_records_stage(struct mirror *m, struct epoch_header **headers, size_t count, size_t *written,
                             struct ctl_report *report)
{
	int rc = 0;

	*written = 0;
	for (size_t i = 0; rc == 0 && i < count; i++) {
		const struct epoch_header *h = headers[i];
		char relative[96], directory[CTL_MIRROR_PATH_CAPACITY];
		uint8_t *body = NULL;
		size_t len = 0;
		if (!h->keep || h->body_revoked)
			continue;
		snprintf(relative, sizeof(relative), "snapshots/%" PRIu64 "/records", h->epoch);
		if (ctl_mirror_served_exists(m, relative))
			continue;
		int found = ctl_mirror_read_body(m, h, &body, &len);
		if (found < 0)
			rc = ctl_mirror_out_of_memory(m, report);
		if (found <= 0)
			continue; /* no body kept: no shards */
		rc = ctl_mirror_path(directory, "%s/records-%" PRIu64, m->scratch, h->epoch);
		if (rc != 0)
			rc = ctl_mirror_file_failure(m, "records", rc, report);
		if (rc == 0)
			rc = write_shards(m, h, body, len, directory, report);
		if (rc == 0)
			rc = ctl_mirror_stage_file(m, &m->immutable, directory, relative, report);
		*written += rc == 0;
		free(body);
	}
	return rc;
}
