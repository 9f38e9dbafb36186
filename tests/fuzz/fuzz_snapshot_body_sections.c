/*
 * fuzz_snapshot_body_sections.c: snapshot_body_parse_sections() and
 * snapshot_body_verify_sections() on arbitrary bytes.
 *
 * An accepted body must re-encode to the same bytes, stay within its bounds, and read the same
 * records through the method-1 parser when that one accepts it (then without sections). It is
 * then verified against a method-2 header built to commit to it, which drives every record,
 * statement and revocation through their signature checks; a verified body never lists a record
 * that one of its revocations excludes.
 */
#include "crypto/crypto.h"
#include "schema/revocation.h"
#include "schema/snapshot.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_no_excluded(const struct snapshot_body *body)
{
	for (size_t r = 0; r < body->revocation_count; r++) {
		struct revocation revocation;
		if (revocation_parse_signed(body->revocations[r].note, body->revocations[r].note_len,
		                            &revocation, NULL) != 0)
			abort();
		for (size_t i = 0; i < body->record_count; i++) {
			struct registration registration;
			if (registration_parse_signed(body->records[i].note, body->records[i].note_len,
			                              &registration, NULL) != 0)
				abort();
			if (revocation_excludes(&revocation, &registration))
				abort();
			registration_clear(&registration);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct snapshot_body_limits limits = {1000, 1000, 1000};
	struct snapshot_body *body = NULL;
	if (snapshot_body_parse_sections(data, size, &limits, &body) != 0) {
		if (body)
			abort();
		return 0;
	}
	if (body->record_count > limits.max_records || body->health_count > limits.max_health ||
	    body->revocation_count > limits.max_revocations)
		abort();
	struct snapshot_sections sections = {body->health, body->health_count, body->revocations,
	                                     body->revocation_count};
	struct buffer out;
	buffer_init(&out);
	if (snapshot_body_encode_sections(body->namespace_name, body->epoch, body->records,
	                                  body->record_count, &sections, &out) != 0 ||
	    out.len != size || memcmp(out.data, data, size) != 0)
		abort();
	buffer_free(&out);
	struct snapshot_body *plain = NULL;
	if (snapshot_body_parse(data, size, limits.max_records, &plain) == 0) {
		if (body->health_count || body->revocation_count || plain->record_count != body->record_count)
			abort();
		snapshot_body_free(plain);
	}

	struct snapshot_header h;
	memset(&h, 0, sizeof(h));
	memcpy(h.namespace_name, body->namespace_name, sizeof(h.namespace_name));
	strcpy(h.origin, "fuzz.example");
	h.epoch = body->epoch;
	h.valid_after = 1;
	h.fresh_until = 2;
	h.valid_until = 3;
	h.record_count = body->record_count;
	h.body_size = size;
	h.consensus_method = 2;
	if (snapshot_records_root(body->records, body->record_count, h.records_root) == 0 &&
	    crypto_sha256(data, size, h.body_sha256) == 0 &&
	    snapshot_body_verify_sections(&h, data, size, &limits, 120) == 0)
		check_no_excluded(body);
	snapshot_body_free(body);
	return 0;
}
