/*
 * fuzz_record_shard.c: record_shard_parse() and verify_record_proof() on arbitrary bytes.
 *
 * An accepted shard must re-encode to the same bytes and stay within its bounds. It is then
 * verified against a method-2 header that takes the shard's own claims (namespace, epoch, count,
 * root), for the id of each of its records and for an id next to the first, which drives the run's
 * checks, the range proof, and the signatures of a record and its health statements. Whatever the
 * verdict, a record found present is one of the shard's own, at the leaf its run gives it, and an
 * absent id lies strictly between the neighbours returned.
 */
#include "schema/record_shard.h"
#include "verify/record_proof.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void look_up(const struct snapshot_header *header, const uint8_t *data, size_t size,
                    const struct record_shard *shard, const uint8_t id[SERVICE_ID_SIZE])
{
	struct verify_record found;
	char detail[256];
	if (verify_record_proof(header, data, size, id, &found, detail, sizeof detail) != 0) {
		if (found.present || found.health || found.revocations)
			abort();
		return;
	}
	if (found.present) {
		uint64_t i = found.leaf_index - shard->first;
		if (found.leaf_index < shard->first || i >= shard->run_count ||
		    memcmp(shard->records[i].service_id, id, SERVICE_ID_SIZE) != 0 ||
		    found.note != shard->records[i].note)
			abort();
	} else {
		if ((found.has_before && memcmp(found.before_id, id, SERVICE_ID_SIZE) >= 0) ||
		    (found.has_after && memcmp(found.after_id, id, SERVICE_ID_SIZE) <= 0))
			abort();
	}
	verify_record_clear(&found);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct record_shard *shard = NULL;
	if (record_shard_parse(data, size, &shard) != 0) {
		if (shard)
			abort();
		return 0;
	}
	if (shard->run_count > RECORD_SHARD_RUN_MAX || shard->proof_count > RECORD_SHARD_PROOF_MAX ||
	    shard->first + shard->run_count > shard->record_count)
		abort();
	struct buffer out;
	buffer_init(&out);
	if (record_shard_encode(shard, &out) != 0 || out.len != size || memcmp(out.data, data, size) != 0)
		abort();
	buffer_free(&out);

	struct snapshot_header header;
	memset(&header, 0, sizeof header);
	memcpy(header.namespace_name, shard->namespace_name, sizeof header.namespace_name);
	strcpy(header.origin, "dirauth.example/fuzz");
	header.epoch = shard->epoch;
	header.valid_after = 1767225720;
	header.fresh_until = header.valid_after + 120;
	header.valid_until = header.valid_after + 3600;
	header.record_count = shard->record_count;
	memcpy(header.records_root, shard->records_root, sizeof header.records_root);
	header.consensus_method = 2;
	for (size_t i = 0; i < shard->run_count && i < 8; i++)
		look_up(&header, data, size, shard, shard->records[i].service_id);
	uint8_t near[SERVICE_ID_SIZE] = {0};
	if (shard->run_count > 0) {
		memcpy(near, shard->records[0].service_id, SERVICE_ID_SIZE);
		near[SERVICE_ID_SIZE - 1] ^= 1;
	}
	look_up(&header, data, size, shard, near);
	record_shard_free(shard);
	return 0;
}
