/*
 * check_signer_protocol.c: the request and response frames between dirauthd and the signer:
 * round trips, the exact bytes of a small request, and every refusal of the decoders (which
 * face a possibly compromised peer) and of the encoders.
 */
#include "base/error.h"
#include "signer_protocol/signer_protocol.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

static const char checkpoint_text[] =
    "dirauth.example/log\n5\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n";

/* Encodes request, checks the prefix and returns the body (caller frees the buffer). */
static void encode_request(const struct signer_request *request, struct buffer *frame, const uint8_t **body,
                           size_t *body_len)
{
	ck_assert_int_eq(signer_request_encode(request, frame), 0);
	ck_assert_uint_ge(frame->len, 4);
	ck_assert_int_eq(signer_frame_length(frame->data, body_len), 0);
	ck_assert_uint_eq(*body_len, frame->len - 4);
	*body = frame->data + 4;
}

START_TEST(test_request_round_trip)
{
	struct signer_request request, decoded;
	memset(&request, 0, sizeof(request));
	request.operation = SIGNER_OP_SIGN_CHECKPOINT;
	request.old_size = 3;
	request.proof_count = 2;
	memset(request.proof[0], 0xaa, MERKLE_HASH_SIZE);
	memset(request.proof[1], 0xbb, MERKLE_HASH_SIZE);
	request.text = (const uint8_t *)checkpoint_text;
	request.text_len = strlen(checkpoint_text);
	struct buffer frame;
	buffer_init(&frame);
	const uint8_t *body;
	size_t body_len;
	encode_request(&request, &frame, &body, &body_len);
	ck_assert_uint_eq(body_len, 1 + 1 + 8 + 1 + 64 + 4 + strlen(checkpoint_text));
	static const uint8_t head[] = {1, 4, 0, 0, 0, 0, 0, 0, 0, 3, 2};
	ck_assert(memcmp(body, head, sizeof(head)) == 0);
	ck_assert_int_eq(signer_request_decode(body, body_len, &decoded), 0);
	ck_assert_uint_eq(decoded.operation, SIGNER_OP_SIGN_CHECKPOINT);
	ck_assert_uint_eq(decoded.old_size, 3);
	ck_assert_uint_eq(decoded.proof_count, 2);
	ck_assert(memcmp(decoded.proof, request.proof, 2 * MERKLE_HASH_SIZE) == 0);
	ck_assert_uint_eq(decoded.text_len, request.text_len);
	ck_assert(memcmp(decoded.text, checkpoint_text, decoded.text_len) == 0);
	ck_assert(decoded.text >= body && decoded.text < body + body_len);

	/* A request with no text and the exact bytes of its frame. */
	memset(&request, 0, sizeof(request));
	request.operation = SIGNER_OP_GET_KEYS;
	buffer_reset(&frame);
	ck_assert_int_eq(signer_request_encode(&request, &frame), 0);
	static const uint8_t keys_frame[] = {0, 0, 0, 15, 1, 6, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
	ck_assert_uint_eq(frame.len, sizeof(keys_frame));
	ck_assert(memcmp(frame.data, keys_frame, sizeof(keys_frame)) == 0);
	ck_assert_int_eq(signer_request_decode(frame.data + 4, frame.len - 4, &decoded), 0);
	ck_assert_uint_eq(decoded.operation, SIGNER_OP_GET_KEYS);
	ck_assert_ptr_null(decoded.text);

	/* The largest proof and text. */
	memset(&request, 0, sizeof(request));
	request.operation = SIGNER_OP_COSIGN_CHECKPOINT;
	request.old_size = UINT64_MAX;
	request.proof_count = MERKLE_MAX_PROOF;
	uint8_t *text = malloc(SIGNER_TEXT_MAX);
	ck_assert(text != NULL);
	memset(text, 'a', SIGNER_TEXT_MAX);
	request.text = text;
	request.text_len = SIGNER_TEXT_MAX;
	buffer_reset(&frame);
	encode_request(&request, &frame, &body, &body_len);
	ck_assert_int_eq(signer_request_decode(body, body_len, &decoded), 0);
	ck_assert_uint_eq(decoded.old_size, UINT64_MAX);
	ck_assert_uint_eq(decoded.proof_count, MERKLE_MAX_PROOF);
	ck_assert_uint_eq(decoded.text_len, SIGNER_TEXT_MAX);
	free(text);
	buffer_free(&frame);
}
END_TEST

/* A well-formed request body to damage: SIGN_VOTE with a 3-byte text. */
static size_t vote_request_body(uint8_t *out)
{
	static const uint8_t body[] = {1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 'a', 'b', '\n'};
	memcpy(out, body, sizeof(body));
	return sizeof(body);
}

START_TEST(test_request_decode_refusals)
{
	uint8_t body[256];
	struct signer_request decoded;
	size_t len = vote_request_body(body);
	ck_assert_int_eq(signer_request_decode(body, len, &decoded), 0);
	/* Every truncation. */
	for (size_t cut = 0; cut < len; cut++)
		ck_assert_int_eq(signer_request_decode(body, cut, &decoded), DIRAUTH_ERR_SYNTAX);
	/* Trailing byte. */
	body[len] = 0;
	ck_assert_int_eq(signer_request_decode(body, len + 1, &decoded), DIRAUTH_ERR_SYNTAX);
	/* Wrong version. */
	body[0] = 2;
	ck_assert_int_eq(signer_request_decode(body, len, &decoded), DIRAUTH_ERR_SYNTAX);
	body[0] = 0;
	ck_assert_int_eq(signer_request_decode(body, len, &decoded), DIRAUTH_ERR_SYNTAX);
	/* Unknown operations. */
	len = vote_request_body(body);
	body[1] = 0;
	ck_assert_int_eq(signer_request_decode(body, len, &decoded), DIRAUTH_ERR_SYNTAX);
	body[1] = 10;
	ck_assert_int_eq(signer_request_decode(body, len, &decoded), DIRAUTH_ERR_SYNTAX);
	body[1] = 0xff;
	ck_assert_int_eq(signer_request_decode(body, len, &decoded), DIRAUTH_ERR_SYNTAX);
	/* old_size on an operation that takes no proof. */
	len = vote_request_body(body);
	body[9] = 1;
	ck_assert_int_eq(signer_request_decode(body, len, &decoded), DIRAUTH_ERR_SYNTAX);
	/* A proof on an operation that takes none. */
	len = vote_request_body(body);
	memmove(body + 11 + 32, body + 11, len - 11);
	memset(body + 11, 0x11, 32);
	body[10] = 1;
	ck_assert_int_eq(signer_request_decode(body, len + 32, &decoded), DIRAUTH_ERR_SYNTAX);
	body[1] = SIGNER_OP_SIGN_CHECKPOINT;
	ck_assert_int_eq(signer_request_decode(body, len + 32, &decoded), 0);
	/* proof_count over MERKLE_MAX_PROOF. */
	body[10] = MERKLE_MAX_PROOF + 1;
	ck_assert_int_eq(signer_request_decode(body, len + 32, &decoded), DIRAUTH_ERR_BOUNDS);
	/* Text on an operation that takes none. */
	len = vote_request_body(body);
	body[1] = SIGNER_OP_GET_CERTIFICATES;
	ck_assert_int_eq(signer_request_decode(body, len, &decoded), DIRAUTH_ERR_SYNTAX);
	/* A text length past the bytes, and past SIGNER_TEXT_MAX. */
	len = vote_request_body(body);
	body[14] = 4;
	ck_assert_int_eq(signer_request_decode(body, len, &decoded), DIRAUTH_ERR_SYNTAX);
	body[11] = 0xff;
	ck_assert_int_eq(signer_request_decode(body, len, &decoded), DIRAUTH_ERR_BOUNDS);
	body[11] = 0;
	body[13] = (SIGNER_TEXT_MAX + 1) >> 8;
	body[14] = (SIGNER_TEXT_MAX + 1) & 0xff;
	ck_assert_int_eq(signer_request_decode(body, len, &decoded), DIRAUTH_ERR_BOUNDS);
}
END_TEST

START_TEST(test_request_encode_refusals)
{
	struct signer_request request;
	struct buffer frame;
	buffer_init(&frame);
	memset(&request, 0, sizeof(request));
	request.operation = 0;
	ck_assert_int_eq(signer_request_encode(&request, &frame), DIRAUTH_ERR_SYNTAX);
	request.operation = 10;
	ck_assert_int_eq(signer_request_encode(&request, &frame), DIRAUTH_ERR_SYNTAX);
	request.operation = SIGNER_OP_SIGN_CHECKPOINT;
	request.proof_count = MERKLE_MAX_PROOF + 1;
	ck_assert_int_eq(signer_request_encode(&request, &frame), DIRAUTH_ERR_BOUNDS);
	request.proof_count = 0;
	request.text = (const uint8_t *)"x";
	request.text_len = SIGNER_TEXT_MAX + 1;
	ck_assert_int_eq(signer_request_encode(&request, &frame), DIRAUTH_ERR_BOUNDS);
	request.text = NULL;
	request.text_len = 1;
	ck_assert_int_eq(signer_request_encode(&request, &frame), DIRAUTH_ERR_SYNTAX);
	request.operation = SIGNER_OP_SIGN_RECEIPT;
	request.text = (const uint8_t *)"x";
	request.old_size = 1;
	ck_assert_int_eq(signer_request_encode(&request, &frame), DIRAUTH_ERR_SYNTAX);
	request.operation = SIGNER_OP_GET_KEYS;
	request.old_size = 0;
	ck_assert_int_eq(signer_request_encode(&request, &frame), DIRAUTH_ERR_SYNTAX);
	ck_assert_uint_eq(frame.len, 0);
	buffer_free(&frame);
}
END_TEST

static void example_response(struct signer_response *response)
{
	memset(response, 0, sizeof(*response));
	response->result = 0;
	strcpy(response->detail, "signed");
	response->has_signature = 1;
	strcpy(response->signature.name, "authority-1.example");
	response->signature.key_id = 0x01020304;
	response->signature.signature_len = 64;
	for (int i = 0; i < 64; i++)
		response->signature.signature[i] = (uint8_t)i;
	response->payload = (const uint8_t *)"payload\n";
	response->payload_len = 8;
}

START_TEST(test_response_round_trip)
{
	struct signer_response response, decoded;
	struct buffer frame;
	size_t body_len;
	buffer_init(&frame);
	example_response(&response);
	ck_assert_int_eq(signer_response_encode(&response, &frame), 0);
	ck_assert_int_eq(signer_frame_length(frame.data, &body_len), 0);
	ck_assert_uint_eq(body_len, frame.len - 4);
	ck_assert_uint_eq(body_len, 1 + 4 + 2 + 6 + 1 + 1 + 19 + 4 + 2 + 64 + 4 + 8);
	ck_assert_int_eq(signer_response_decode(frame.data + 4, body_len, &decoded), 0);
	ck_assert_int_eq(decoded.result, 0);
	ck_assert_str_eq(decoded.detail, "signed");
	ck_assert_int_eq(decoded.has_signature, 1);
	ck_assert_str_eq(decoded.signature.name, "authority-1.example");
	ck_assert_uint_eq(decoded.signature.key_id, 0x01020304);
	ck_assert_uint_eq(decoded.signature.signature_len, 64);
	ck_assert(memcmp(decoded.signature.signature, response.signature.signature, 64) == 0);
	ck_assert_uint_eq(decoded.payload_len, 8);
	ck_assert(memcmp(decoded.payload, "payload\n", 8) == 0);

	/* A refusal: negative result, detail, no signature, no payload. */
	memset(&response, 0, sizeof(response));
	response.result = DIRAUTH_ERR_ROLLBACK;
	strcpy(response.detail, "epoch 4 is lower than 9, the highest signed");
	buffer_reset(&frame);
	ck_assert_int_eq(signer_response_encode(&response, &frame), 0);
	ck_assert_int_eq(signer_response_decode(frame.data + 4, frame.len - 4, &decoded), 0);
	ck_assert_int_eq(decoded.result, DIRAUTH_ERR_ROLLBACK);
	ck_assert_str_eq(decoded.detail, response.detail);
	ck_assert_int_eq(decoded.has_signature, 0);
	ck_assert_ptr_null(decoded.payload);
	ck_assert_uint_eq(decoded.payload_len, 0);
	/* The most negative result survives. */
	response.result = INT32_MIN;
	buffer_reset(&frame);
	ck_assert_int_eq(signer_response_encode(&response, &frame), 0);
	ck_assert_int_eq(signer_response_decode(frame.data + 4, frame.len - 4, &decoded), 0);
	ck_assert_int_eq(decoded.result, INT32_MIN);

	/* The largest payload and detail. */
	example_response(&response);
	memset(response.detail, 'd', SIGNER_DETAIL_MAX);
	response.detail[SIGNER_DETAIL_MAX] = 0;
	uint8_t *payload = malloc(SIGNER_PAYLOAD_MAX);
	ck_assert(payload != NULL);
	memset(payload, 'p', SIGNER_PAYLOAD_MAX);
	response.payload = payload;
	response.payload_len = SIGNER_PAYLOAD_MAX;
	buffer_reset(&frame);
	ck_assert_int_eq(signer_response_encode(&response, &frame), 0);
	ck_assert_int_eq(signer_frame_length(frame.data, &body_len), 0);
	ck_assert_int_eq(signer_response_decode(frame.data + 4, body_len, &decoded), 0);
	ck_assert_uint_eq(decoded.payload_len, SIGNER_PAYLOAD_MAX);
	ck_assert_uint_eq(strlen(decoded.detail), SIGNER_DETAIL_MAX);
	free(payload);
	buffer_free(&frame);
}
END_TEST

START_TEST(test_response_decode_refusals)
{
	struct signer_response response, decoded;
	struct buffer frame;
	buffer_init(&frame);
	example_response(&response);
	ck_assert_int_eq(signer_response_encode(&response, &frame), 0);
	uint8_t *body = frame.data + 4;
	size_t len = frame.len - 4;
	/* Layout: 0 version, 1..4 result, 5..6 detail_len, 7..12 "signed", 13 has_signature, 14 name_len,
	 * 15..33 name, 34..37 key id, 38..39 sig_len, 40..103 sig, 104..107 payload_len, 108.. payload. */
	for (size_t cut = 0; cut < len; cut++)
		ck_assert_int_eq(signer_response_decode(body, cut, &decoded), DIRAUTH_ERR_SYNTAX);
	uint8_t *copy = malloc(len + 1);
	ck_assert(copy != NULL);
#define RESET() memcpy(copy, body, len)
	RESET();
	copy[len] = 0;
	ck_assert_int_eq(signer_response_decode(copy, len + 1, &decoded), DIRAUTH_ERR_SYNTAX);
	RESET();
	copy[0] = 2;
	ck_assert_int_eq(signer_response_decode(copy, len, &decoded), DIRAUTH_ERR_SYNTAX);
	RESET();
	copy[4] = 1; /* positive result */
	ck_assert_int_eq(signer_response_decode(copy, len, &decoded), DIRAUTH_ERR_SYNTAX);
	RESET();
	copy[1] = 0xff; /* negative result with a signature */
	ck_assert_int_eq(signer_response_decode(copy, len, &decoded), DIRAUTH_ERR_SYNTAX);
	RESET();
	copy[5] = (SIGNER_DETAIL_MAX + 1) >> 8;
	copy[6] = (SIGNER_DETAIL_MAX + 1) & 0xff;
	ck_assert_int_eq(signer_response_decode(copy, len, &decoded), DIRAUTH_ERR_BOUNDS);
	RESET();
	copy[8] = '\n'; /* a control character in the detail */
	ck_assert_int_eq(signer_response_decode(copy, len, &decoded), DIRAUTH_ERR_SYNTAX);
	RESET();
	copy[8] = 0;
	ck_assert_int_eq(signer_response_decode(copy, len, &decoded), DIRAUTH_ERR_SYNTAX);
	RESET();
	copy[13] = 2;
	ck_assert_int_eq(signer_response_decode(copy, len, &decoded), DIRAUTH_ERR_SYNTAX);
	RESET();
	copy[14] = 0; /* empty name */
	ck_assert_int_eq(signer_response_decode(copy, len, &decoded), DIRAUTH_ERR_SYNTAX);
	RESET();
	copy[14] = NOTE_NAME_MAX + 1;
	ck_assert_int_eq(signer_response_decode(copy, len, &decoded), DIRAUTH_ERR_BOUNDS);
	RESET();
	copy[20] = ' '; /* a space in the name */
	ck_assert_int_eq(signer_response_decode(copy, len, &decoded), DIRAUTH_ERR_SYNTAX);
	RESET();
	copy[20] = '+';
	ck_assert_int_eq(signer_response_decode(copy, len, &decoded), DIRAUTH_ERR_SYNTAX);
	RESET();
	copy[38] = 0;
	copy[39] = 0; /* empty signature */
	ck_assert_int_eq(signer_response_decode(copy, len, &decoded), DIRAUTH_ERR_SYNTAX);
	RESET();
	copy[38] = (NOTE_SIGNATURE_MAX + 1) >> 8;
	copy[39] = (NOTE_SIGNATURE_MAX + 1) & 0xff;
	ck_assert_int_eq(signer_response_decode(copy, len, &decoded), DIRAUTH_ERR_BOUNDS);
	RESET();
	copy[105] = 0x10; /* payload_len 1 MiB + 8 */
	ck_assert_int_eq(signer_response_decode(copy, len, &decoded), DIRAUTH_ERR_BOUNDS);
	RESET();
	copy[107] = 9; /* payload past the end */
	ck_assert_int_eq(signer_response_decode(copy, len, &decoded), DIRAUTH_ERR_SYNTAX);
	RESET();
	ck_assert_int_eq(signer_response_decode(copy, len, &decoded), 0);
#undef RESET
	free(copy);
	buffer_free(&frame);
}
END_TEST

START_TEST(test_response_encode_refusals)
{
	struct signer_response response;
	struct buffer frame;
	buffer_init(&frame);
	example_response(&response);
	response.result = 1;
	ck_assert_int_eq(signer_response_encode(&response, &frame), DIRAUTH_ERR_SYNTAX);
	example_response(&response);
	response.result = DIRAUTH_ERR_ROLLBACK; /* a refusal with a signature */
	ck_assert_int_eq(signer_response_encode(&response, &frame), DIRAUTH_ERR_SYNTAX);
	example_response(&response);
	strcpy(response.detail, "two\nlines");
	ck_assert_int_eq(signer_response_encode(&response, &frame), DIRAUTH_ERR_SYNTAX);
	example_response(&response);
	strcpy(response.signature.name, "bad name");
	ck_assert_int_eq(signer_response_encode(&response, &frame), DIRAUTH_ERR_SYNTAX);
	example_response(&response);
	response.signature.signature_len = 0;
	ck_assert_int_eq(signer_response_encode(&response, &frame), DIRAUTH_ERR_SYNTAX);
	response.signature.signature_len = NOTE_SIGNATURE_MAX + 1;
	ck_assert_int_eq(signer_response_encode(&response, &frame), DIRAUTH_ERR_BOUNDS);
	example_response(&response);
	response.payload_len = SIGNER_PAYLOAD_MAX + 1;
	ck_assert_int_eq(signer_response_encode(&response, &frame), DIRAUTH_ERR_BOUNDS);
	response.payload = NULL;
	response.payload_len = 1;
	ck_assert_int_eq(signer_response_encode(&response, &frame), DIRAUTH_ERR_SYNTAX);
	ck_assert_uint_eq(frame.len, 0);
	buffer_free(&frame);
}
END_TEST

START_TEST(test_frame_length)
{
	size_t len = 1;
	const uint8_t zero[4] = {0, 0, 0, 0};
	ck_assert_int_eq(signer_frame_length(zero, &len), 0);
	ck_assert_uint_eq(len, 0);
	const uint8_t max[4] = {(uint8_t)(SIGNER_FRAME_MAX >> 24), (uint8_t)(SIGNER_FRAME_MAX >> 16),
	                        (uint8_t)(SIGNER_FRAME_MAX >> 8), (uint8_t)SIGNER_FRAME_MAX};
	ck_assert_int_eq(signer_frame_length(max, &len), 0);
	ck_assert_uint_eq(len, SIGNER_FRAME_MAX);
	const uint8_t over[4] = {(uint8_t)((SIGNER_FRAME_MAX + 1) >> 24),
	                         (uint8_t)((SIGNER_FRAME_MAX + 1) >> 16),
	                         (uint8_t)((SIGNER_FRAME_MAX + 1) >> 8), (uint8_t)(SIGNER_FRAME_MAX + 1)};
	ck_assert_int_eq(signer_frame_length(over, &len), DIRAUTH_ERR_BOUNDS);
	const uint8_t huge[4] = {0xff, 0xff, 0xff, 0xff};
	ck_assert_int_eq(signer_frame_length(huge, &len), DIRAUTH_ERR_BOUNDS);
}
END_TEST

/* The one table of operations: which exist, which sign, which query, and their names. */
START_TEST(test_operation_table)
{
	static const struct {
		int operation;
		const char *name;
		int signs;
	} expected[] = {{SIGNER_OP_SIGN_RECEIPT, "receipt", 1},
	                {SIGNER_OP_SIGN_VOTE, "vote", 1},
	                {SIGNER_OP_SIGN_SNAPSHOT_HEADER, "snapshot-header", 1},
	                {SIGNER_OP_SIGN_CHECKPOINT, "checkpoint", 1},
	                {SIGNER_OP_COSIGN_CHECKPOINT, "cosignature", 1},
	                {SIGNER_OP_GET_KEYS, "get-keys", 0},
	                {SIGNER_OP_GET_CERTIFICATES, "get-certificates", 0},
	                {SIGNER_OP_CHECKPOINT_STATE, "checkpoint-state", 0},
	                {SIGNER_OP_SIGN_DEREGISTRATION_RECEIPT, "deregistration-receipt", 1}};
	for (size_t i = 0; i < sizeof(expected) / sizeof(expected[0]); i++) {
		const struct signer_operation_info *info = signer_operation_find(expected[i].operation);
		ck_assert_ptr_nonnull(info);
		ck_assert_str_eq(info->name, expected[i].name);
		ck_assert_int_eq(signer_operation_signs(expected[i].operation), expected[i].signs);
		ck_assert_int_eq(signer_operation_is_query(expected[i].operation), !expected[i].signs);
		ck_assert_int_eq(info->takes_proof, expected[i].operation == SIGNER_OP_SIGN_CHECKPOINT ||
		                                        expected[i].operation == SIGNER_OP_COSIGN_CHECKPOINT);
	}
	const int unknown[] = {0, 10, 255, 256, 257, -1};
	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		ck_assert_ptr_null(signer_operation_find(unknown[i]));
		ck_assert(!signer_operation_signs(unknown[i]));
		ck_assert(!signer_operation_is_query(unknown[i]));
	}
}
END_TEST

static Suite *signer_protocol_suite(void)
{
	Suite *suite = suite_create("signer_protocol");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_request_round_trip);
	tcase_add_test(tc, test_request_decode_refusals);
	tcase_add_test(tc, test_request_encode_refusals);
	tcase_add_test(tc, test_response_round_trip);
	tcase_add_test(tc, test_response_decode_refusals);
	tcase_add_test(tc, test_response_encode_refusals);
	tcase_add_test(tc, test_frame_length);
	tcase_add_test(tc, test_operation_table);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(signer_protocol_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
