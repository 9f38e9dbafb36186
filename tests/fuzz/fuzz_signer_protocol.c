/*
 * fuzz_signer_protocol.c: signer_request_decode() and signer_response_decode() on arbitrary
 * bytes, as the signer and dirauthd would read a frame body from a hostile peer. A body that
 * decodes must re-encode to a frame holding the same bytes, and that frame must decode to equal
 * values; its operation must be one of the protocol's table, either signing or querying, and
 * use only the fields its row allows.
 */
#include "signer_protocol/signer_protocol.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int requests_equal(const struct signer_request *a, const struct signer_request *b)
{
	return a->operation == b->operation && a->old_size == b->old_size &&
	       a->proof_count == b->proof_count &&
	       memcmp(a->proof, b->proof, a->proof_count * MERKLE_HASH_SIZE) == 0 &&
	       a->text_len == b->text_len && (a->text_len == 0 || memcmp(a->text, b->text, a->text_len) == 0);
}

static int responses_equal(const struct signer_response *a, const struct signer_response *b)
{
	if (a->result != b->result || strcmp(a->detail, b->detail) != 0 ||
	    a->has_signature != b->has_signature || a->payload_len != b->payload_len)
		return 0;
	if (a->payload_len > 0 && memcmp(a->payload, b->payload, a->payload_len) != 0)
		return 0;
	if (!a->has_signature)
		return 1;
	return strcmp(a->signature.name, b->signature.name) == 0 &&
	       a->signature.key_id == b->signature.key_id &&
	       a->signature.signature_len == b->signature.signature_len &&
	       memcmp(a->signature.signature, b->signature.signature, a->signature.signature_len) == 0;
}

/* The frame's prefix must announce the body, and the body must be the input. */
static void check_frame(const struct buffer *frame, const uint8_t *data, size_t size)
{
	size_t body_len = 0;
	if (frame->len < 4 || signer_frame_length(frame->data, &body_len) != 0 ||
	    body_len != frame->len - 4 || body_len != size || memcmp(frame->data + 4, data, size) != 0)
		abort();
}

static void check_request(const uint8_t *data, size_t size)
{
	struct signer_request request, again;
	if (signer_request_decode(data, size, &request) != 0)
		return;
	const struct signer_operation_info *info = signer_operation_find(request.operation);
	if (!info ||
	    signer_operation_signs(request.operation) == signer_operation_is_query(request.operation))
		abort();
	if ((!info->takes_text && request.text_len) ||
	    (!info->takes_proof && (request.old_size || request.proof_count)))
		abort();
	struct buffer frame;
	buffer_init(&frame);
	if (signer_request_encode(&request, &frame) != 0)
		abort();
	check_frame(&frame, data, size);
	if (signer_request_decode(frame.data + 4, frame.len - 4, &again) != 0 ||
	    !requests_equal(&request, &again))
		abort();
	buffer_free(&frame);
}

static void check_response(const uint8_t *data, size_t size)
{
	static struct signer_response response, again;
	if (signer_response_decode(data, size, &response) != 0)
		return;
	struct buffer frame;
	buffer_init(&frame);
	if (signer_response_encode(&response, &frame) != 0)
		abort();
	check_frame(&frame, data, size);
	if (signer_response_decode(frame.data + 4, frame.len - 4, &again) != 0 ||
	    !responses_equal(&response, &again))
		abort();
	buffer_free(&frame);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size >= 4) {
		size_t body_len = 0;
		(void)signer_frame_length(data, &body_len);
	}
	check_request(data, size);
	check_response(data, size);
	return 0;
}
