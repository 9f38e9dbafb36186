/*
 * fuzz_snapshot_body.c: snapshot_body_parse() and snapshot_body_verify() on arbitrary bytes.
 *
 * An accepted body must re-encode to the same bytes. It is then verified against a header built
 * to commit to it (size, digest, count, root), which drives every record through the signed
 * registration checks.
 */
#include "crypto/crypto.h"
#include "schema/snapshot.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct snapshot_body *body = NULL;
	if (snapshot_body_parse(data, size, 1000, &body) != 0)
		return 0;
	struct buffer out;
	buffer_init(&out);
	if (snapshot_body_encode(body->namespace_name, body->epoch, body->records, body->record_count,
	                         &out) != 0 ||
	    out.len != size || memcmp(out.data, data, size) != 0)
		abort();
	buffer_free(&out);

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
	h.consensus_method = SNAPSHOT_CONSENSUS_METHOD;
	if (snapshot_records_root(body->records, body->record_count, h.records_root) == 0 &&
	    crypto_sha256(data, size, h.body_sha256) == 0)
		(void)snapshot_body_verify(&h, data, size, 1000);
	snapshot_body_free(body);
	return 0;
}
