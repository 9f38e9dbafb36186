/*
 * fuzz_add_checkpoint.c: the c2sp.org/tlog-witness add-checkpoint request body as a witness
 * reads it (translog_add_checkpoint_parse, server/tlog/witness.h), on arbitrary bytes. A body
 * the parser accepts must be written back byte for byte by translog_add_checkpoint_encode from
 * what it returned (the request has one spelling), with at most 63 proof hashes and a checkpoint
 * text that parses; a refusal is a syntax or bounds error and leaves nothing to free.
 */
#include "base/error.h"
#include "server/tlog/witness.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct translog_add_checkpoint request;
	int rc = translog_add_checkpoint_parse(data, size, &request);
	if (rc != 0) {
		if ((rc != DIRAUTH_ERR_SYNTAX && rc != DIRAUTH_ERR_BOUNDS && rc != DIRAUTH_ERR_NOMEM) ||
		    request.note != NULL)
			abort();
		return 0;
	}
	if (request.proof_count > TRANSLOG_ADD_CHECKPOINT_PROOF_MAX || !request.note ||
	    request.note_bytes < data || request.note_bytes + request.note_len != data + size ||
	    request.old_size > UINT64_MAX)
		abort();
	struct checkpoint again;
	if (checkpoint_parse(request.note->text, request.note->text_len, &again) != 0 ||
	    again.tree_size != request.checkpoint.tree_size)
		abort();
	struct buffer out;
	buffer_init(&out);
	if (translog_add_checkpoint_encode(request.old_size, request.proof, request.proof_count,
	                                   request.note_bytes, request.note_len, &out) != 0 ||
	    out.len != size || memcmp(out.data, data, size) != 0)
		abort();
	buffer_free(&out);
	translog_add_checkpoint_free(&request);
	return 0;
}
