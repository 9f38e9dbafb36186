/*
 * signer_protocol.c: the byte codec of the requests dirauthd sends to dirauth-signer and of the
 * signer's answers.
 *
 * The signer holds the keys and dirauthd faces the network, so the signer must assume the
 * process at the other end of its socket may be compromised: this decoder is the first code that
 * sees what such a process sends. It reads fixed-width big-endian fields, checks every length
 * against both its bound and the bytes that remain before using it, and refuses unknown
 * versions and operations, fields that an operation does not use, and trailing bytes. The
 * encoders refuse exactly what the decoders refuse, so a message that encodes always decodes to
 * the same values, and each message has one encoding.
 *
 * Which operations exist, and whether each signs or queries, takes text or a proof, is written
 * once, in the table below: the codec, dirauthd's client and the signer's own policy table all
 * read it, so an operation added here is known to all three or refused by all three.
 */
#include "signer_protocol/signer_protocol.h"

#include "base/error.h"

#include <string.h>

#define FRAME_PREFIX_SIZE 4

/* A cursor over a message body: every read checks what remains first. */
struct reader {
	const uint8_t *buf;
	size_t len;
	size_t pos;
};

static int read_bytes(struct reader *r, size_t n, const uint8_t **out)
{
	if (n > r->len - r->pos)
		return DIRAUTH_ERR_SYNTAX; /* truncated */
	*out = r->buf + r->pos;
	r->pos += n;
	return 0;
}

static int read_u8(struct reader *r, uint8_t *out)
{
	const uint8_t *p;
	int rc = read_bytes(r, 1, &p);
	if (rc == 0)
		*out = p[0];
	return rc;
}

static int read_u16(struct reader *r, uint16_t *out)
{
	const uint8_t *p;
	int rc = read_bytes(r, 2, &p);
	if (rc == 0)
		*out = (uint16_t)(p[0] << 8 | p[1]);
	return rc;
}

static int read_u32(struct reader *r, uint32_t *out)
{
	const uint8_t *p;
	int rc = read_bytes(r, 4, &p);
	if (rc == 0)
		*out = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
	return rc;
}

/* The start of every body: its bound, then the protocol version byte. */
static int read_version(struct reader *r)
{
	uint8_t version;
	if (r->len > SIGNER_FRAME_MAX)
		return DIRAUTH_ERR_BOUNDS;
	int rc = read_u8(r, &version);
	if (rc)
		return rc;
	return version == SIGNER_PROTOCOL_VERSION ? 0 : DIRAUTH_ERR_SYNTAX;
}

/* The last field of every body: n bytes, after which nothing may follow. */
static int read_last_bytes(struct reader *r, size_t n, const uint8_t **out)
{
	int rc = read_bytes(r, n, out);
	if (rc == 0 && r->pos != r->len)
		rc = DIRAUTH_ERR_SYNTAX; /* trailing bytes */
	return rc;
}

static int read_u64(struct reader *r, uint64_t *out)
{
	uint32_t high, low;
	int rc = read_u32(r, &high);
	if (rc == 0)
		rc = read_u32(r, &low);
	if (rc == 0)
		*out = (uint64_t)high << 32 | low;
	return rc;
}

static int append_u8(struct buffer *b, uint8_t value)
{
	return buffer_append(b, &value, 1);
}

static int append_u16(struct buffer *b, uint16_t value)
{
	uint8_t bytes[2] = {(uint8_t)(value >> 8), (uint8_t)value};
	return buffer_append(b, bytes, sizeof(bytes));
}

static int append_u32(struct buffer *b, uint32_t value)
{
	uint8_t bytes[4] = {(uint8_t)(value >> 24), (uint8_t)(value >> 16), (uint8_t)(value >> 8),
	                    (uint8_t)value};
	return buffer_append(b, bytes, sizeof(bytes));
}

static int append_u64(struct buffer *b, uint64_t value)
{
	int rc = append_u32(b, (uint32_t)(value >> 32));
	if (rc == 0)
		rc = append_u32(b, (uint32_t)value);
	return rc;
}

static const struct signer_operation_info operations[] = {
    {SIGNER_OP_SIGN_RECEIPT, "receipt", SIGNER_OPERATION_SIGNS, 1, 0},
    {SIGNER_OP_SIGN_VOTE, "vote", SIGNER_OPERATION_SIGNS, 1, 0},
    {SIGNER_OP_SIGN_SNAPSHOT_HEADER, "snapshot-header", SIGNER_OPERATION_SIGNS, 1, 0},
    {SIGNER_OP_SIGN_CHECKPOINT, "checkpoint", SIGNER_OPERATION_SIGNS, 1, 1},
    {SIGNER_OP_COSIGN_CHECKPOINT, "cosignature", SIGNER_OPERATION_SIGNS, 1, 1},
    {SIGNER_OP_GET_KEYS, "get-keys", SIGNER_OPERATION_QUERIES, 0, 0},
    {SIGNER_OP_GET_CERTIFICATES, "get-certificates", SIGNER_OPERATION_QUERIES, 0, 0},
    {SIGNER_OP_CHECKPOINT_STATE, "checkpoint-state", SIGNER_OPERATION_QUERIES, 1, 0},
    {SIGNER_OP_SIGN_DEREGISTRATION_RECEIPT, "deregistration-receipt", SIGNER_OPERATION_SIGNS, 1, 0},
};

const struct signer_operation_info *signer_operation_find(int operation)
{
	for (size_t i = 0; i < sizeof(operations) / sizeof(operations[0]); i++)
		if ((int)operations[i].operation == operation)
			return &operations[i];
	return NULL;
}

int signer_operation_signs(int operation)
{
	const struct signer_operation_info *info = signer_operation_find(operation);
	return info && info->kind == SIGNER_OPERATION_SIGNS;
}

int signer_operation_is_query(int operation)
{
	const struct signer_operation_info *info = signer_operation_find(operation);
	return info && info->kind == SIGNER_OPERATION_QUERIES;
}

/* The rules a request must follow beyond its framing; shared by both directions. */
static int request_check(uint8_t operation, uint64_t old_size, size_t proof_count, size_t text_len)
{
	const struct signer_operation_info *info = signer_operation_find(operation);
	if (!info)
		return DIRAUTH_ERR_SYNTAX;
	if (proof_count > MERKLE_MAX_PROOF || text_len > SIGNER_TEXT_MAX)
		return DIRAUTH_ERR_BOUNDS;
	if (!info->takes_proof && (old_size != 0 || proof_count != 0))
		return DIRAUTH_ERR_SYNTAX;
	if (!info->takes_text && text_len != 0)
		return DIRAUTH_ERR_SYNTAX;
	return 0;
}

/* Appends a length prefix placeholder; frame_finish writes it once the body is complete. */
static int frame_start(struct buffer *frame, size_t *body_start)
{
	static const uint8_t placeholder[FRAME_PREFIX_SIZE] = {0, 0, 0, 0};
	int rc = buffer_append(frame, placeholder, sizeof(placeholder));
	*body_start = frame->len;
	return rc;
}

static int frame_finish(struct buffer *frame, size_t body_start)
{
	size_t body_len = frame->len - body_start;
	if (body_len > SIGNER_FRAME_MAX)
		return DIRAUTH_ERR_BOUNDS;
	uint8_t *prefix = frame->data + body_start - FRAME_PREFIX_SIZE;
	prefix[0] = (uint8_t)(body_len >> 24);
	prefix[1] = (uint8_t)(body_len >> 16);
	prefix[2] = (uint8_t)(body_len >> 8);
	prefix[3] = (uint8_t)body_len;
	return 0;
}

int signer_request_encode(const struct signer_request *request, struct buffer *frame)
{
	int rc =
	    request_check(request->operation, request->old_size, request->proof_count, request->text_len);
	if (rc)
		return rc;
	if (request->text_len > 0 && !request->text)
		return DIRAUTH_ERR_SYNTAX;
	size_t start = frame->len;
	size_t body_start = 0;
	rc = frame_start(frame, &body_start);
	if (rc == 0)
		rc = append_u8(frame, SIGNER_PROTOCOL_VERSION);
	if (rc == 0)
		rc = append_u8(frame, request->operation);
	if (rc == 0)
		rc = append_u64(frame, request->old_size);
	if (rc == 0)
		rc = append_u8(frame, (uint8_t)request->proof_count);
	for (size_t i = 0; rc == 0 && i < request->proof_count; i++)
		rc = buffer_append(frame, request->proof[i], MERKLE_HASH_SIZE);
	if (rc == 0)
		rc = append_u32(frame, (uint32_t)request->text_len);
	if (rc == 0 && request->text_len > 0)
		rc = buffer_append(frame, request->text, request->text_len);
	if (rc == 0)
		rc = frame_finish(frame, body_start);
	if (rc)
		buffer_truncate(frame, start);
	return rc;
}

int signer_request_decode(const uint8_t *body, size_t len, struct signer_request *out)
{
	struct reader r = {body, len, 0};
	uint8_t operation, proof_count;
	uint64_t old_size;
	uint32_t text_len;
	const uint8_t *bytes;
	int rc;
	memset(out, 0, sizeof(*out));
	if ((rc = read_version(&r)) != 0)
		return rc;
	if ((rc = read_u8(&r, &operation)) != 0 || (rc = read_u64(&r, &old_size)) != 0 ||
	    (rc = read_u8(&r, &proof_count)) != 0)
		goto fail;
	if (proof_count > MERKLE_MAX_PROOF) {
		rc = DIRAUTH_ERR_BOUNDS;
		goto fail;
	}
	for (size_t i = 0; i < proof_count; i++) {
		if ((rc = read_bytes(&r, MERKLE_HASH_SIZE, &bytes)) != 0)
			goto fail;
		memcpy(out->proof[i], bytes, MERKLE_HASH_SIZE);
	}
	if ((rc = read_u32(&r, &text_len)) != 0)
		goto fail;
	if ((rc = request_check(operation, old_size, proof_count, text_len)) != 0)
		goto fail;
	if ((rc = read_last_bytes(&r, text_len, &bytes)) != 0)
		goto fail;
	out->operation = operation;
	out->old_size = old_size;
	out->proof_count = proof_count;
	out->text = text_len > 0 ? bytes : NULL;
	out->text_len = text_len;
	return 0;
fail:
	memset(out, 0, sizeof(*out));
	return rc;
}

/* A detail is a sentence for a log line or a terminal: printable ASCII, so that what the signer
 * says cannot forge another line where it is shown. */
static int detail_is_valid(const char *detail, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (detail[i] < 0x20 || detail[i] > 0x7e)
			return 0;
	}
	return 1;
}

int signer_response_encode(const struct signer_response *response, struct buffer *frame)
{
	size_t detail_len = strnlen(response->detail, sizeof(response->detail));
	size_t name_len = 0;
	if (response->result > 0)
		return DIRAUTH_ERR_SYNTAX;
	if (detail_len > SIGNER_DETAIL_MAX)
		return DIRAUTH_ERR_BOUNDS;
	if (!detail_is_valid(response->detail, detail_len))
		return DIRAUTH_ERR_SYNTAX;
	if (response->has_signature) {
		const struct note_signature *signature = &response->signature;
		if (response->result != 0)
			return DIRAUTH_ERR_SYNTAX; /* a refusal carries no signature */
		name_len = strnlen(signature->name, sizeof(signature->name));
		if (!note_name_is_valid(signature->name, name_len))
			return DIRAUTH_ERR_SYNTAX;
		if (signature->signature_len == 0)
			return DIRAUTH_ERR_SYNTAX;
		if (signature->signature_len > NOTE_SIGNATURE_MAX)
			return DIRAUTH_ERR_BOUNDS;
	}
	if (response->payload_len > SIGNER_PAYLOAD_MAX)
		return DIRAUTH_ERR_BOUNDS;
	if (response->payload_len > 0 && !response->payload)
		return DIRAUTH_ERR_SYNTAX;

	size_t start = frame->len;
	size_t body_start = 0;
	int rc = frame_start(frame, &body_start);
	if (rc == 0)
		rc = append_u8(frame, SIGNER_PROTOCOL_VERSION);
	if (rc == 0)
		rc = append_u32(frame, (uint32_t)response->result);
	if (rc == 0)
		rc = append_u16(frame, (uint16_t)detail_len);
	if (rc == 0)
		rc = buffer_append(frame, response->detail, detail_len);
	if (rc == 0)
		rc = append_u8(frame, response->has_signature ? 1 : 0);
	if (rc == 0 && response->has_signature) {
		const struct note_signature *signature = &response->signature;
		rc = append_u8(frame, (uint8_t)name_len);
		if (rc == 0)
			rc = buffer_append(frame, signature->name, name_len);
		if (rc == 0)
			rc = append_u32(frame, signature->key_id);
		if (rc == 0)
			rc = append_u16(frame, (uint16_t)signature->signature_len);
		if (rc == 0)
			rc = buffer_append(frame, signature->signature, signature->signature_len);
	}
	if (rc == 0)
		rc = append_u32(frame, (uint32_t)response->payload_len);
	if (rc == 0 && response->payload_len > 0)
		rc = buffer_append(frame, response->payload, response->payload_len);
	if (rc == 0)
		rc = frame_finish(frame, body_start);
	if (rc)
		buffer_truncate(frame, start);
	return rc;
}

static int signature_decode(struct reader *r, struct note_signature *out)
{
	uint8_t name_len;
	uint16_t signature_len;
	const uint8_t *bytes;
	int rc = read_u8(r, &name_len);
	if (rc)
		return rc;
	if (name_len > NOTE_NAME_MAX)
		return DIRAUTH_ERR_BOUNDS;
	if ((rc = read_bytes(r, name_len, &bytes)) != 0)
		return rc;
	if (!note_name_is_valid((const char *)bytes, name_len))
		return DIRAUTH_ERR_SYNTAX;
	memcpy(out->name, bytes, name_len);
	out->name[name_len] = 0;
	if ((rc = read_u32(r, &out->key_id)) != 0 || (rc = read_u16(r, &signature_len)) != 0)
		return rc;
	if (signature_len == 0)
		return DIRAUTH_ERR_SYNTAX;
	if (signature_len > NOTE_SIGNATURE_MAX)
		return DIRAUTH_ERR_BOUNDS;
	if ((rc = read_bytes(r, signature_len, &bytes)) != 0)
		return rc;
	memcpy(out->signature, bytes, signature_len);
	out->signature_len = signature_len;
	return 0;
}

int signer_response_decode(const uint8_t *body, size_t len, struct signer_response *out)
{
	struct reader r = {body, len, 0};
	uint8_t has_signature;
	uint32_t result, payload_len;
	uint16_t detail_len;
	const uint8_t *bytes;
	int rc;
	memset(out, 0, sizeof(*out));
	if ((rc = read_version(&r)) != 0)
		return rc;
	if ((rc = read_u32(&r, &result)) != 0 || (rc = read_u16(&r, &detail_len)) != 0)
		goto fail;
	/* Two's complement: the signed value is the wire value less 2^32 when the top bit is set. */
	int32_t result_value =
	    result > INT32_MAX ? (int32_t)(result - 0x80000000u) + INT32_MIN : (int32_t)result;
	if (result_value > 0) {
		rc = DIRAUTH_ERR_SYNTAX;
		goto fail;
	}
	if (detail_len > SIGNER_DETAIL_MAX) {
		rc = DIRAUTH_ERR_BOUNDS;
		goto fail;
	}
	if ((rc = read_bytes(&r, detail_len, &bytes)) != 0)
		goto fail;
	if (!detail_is_valid((const char *)bytes, detail_len)) {
		rc = DIRAUTH_ERR_SYNTAX;
		goto fail;
	}
	memcpy(out->detail, bytes, detail_len);
	out->detail[detail_len] = 0;
	if ((rc = read_u8(&r, &has_signature)) != 0)
		goto fail;
	if (has_signature > 1 || (has_signature && result_value != 0)) {
		rc = DIRAUTH_ERR_SYNTAX;
		goto fail;
	}
	if (has_signature && (rc = signature_decode(&r, &out->signature)) != 0)
		goto fail;
	if ((rc = read_u32(&r, &payload_len)) != 0)
		goto fail;
	if (payload_len > SIGNER_PAYLOAD_MAX) {
		rc = DIRAUTH_ERR_BOUNDS;
		goto fail;
	}
	if ((rc = read_last_bytes(&r, payload_len, &bytes)) != 0)
		goto fail;
	out->result = result_value;
	out->has_signature = has_signature;
	out->payload = payload_len > 0 ? bytes : NULL;
	out->payload_len = payload_len;
	return 0;
fail:
	memset(out, 0, sizeof(*out));
	return rc;
}

int signer_frame_length(const uint8_t prefix[4], size_t *body_len)
{
	uint32_t length =
	    (uint32_t)prefix[0] << 24 | (uint32_t)prefix[1] << 16 | (uint32_t)prefix[2] << 8 | prefix[3];
	if (length > SIGNER_FRAME_MAX)
		return DIRAUTH_ERR_BOUNDS;
	*body_len = length;
	return 0;
}
