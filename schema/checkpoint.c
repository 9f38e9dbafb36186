/*
 * checkpoint.c: transparency-log checkpoints (c2sp.org/tlog-checkpoint) and Ed25519
 * cosignatures (c2sp.org/tlog-cosignature, cosignature/v1).
 *
 * A checkpoint is the log's signed statement "the tree of this size has this root"; the signer
 * signs one only when it is consistent with the last it signed, and cosigners (witnesses) add
 * their timestamped signature to show they saw the same. Checkpoints go to tools we did not write,
 * so the text is exactly C2SP's; within that grammar the parser is as strict as every dirauth
 * codec (one spelling, re-encoded and compared), so the signer can never be handed two spellings
 * of one tree head. A cosignature signs a different message than a log signature over the same
 * text ("cosignature/v1\ntime T\n" in front) and uses a different key id (type 0x04), so neither
 * can be replayed as the other; cosignature_verify() checks only lines under the 0x04 key id.
 */
#include "schema/checkpoint.h"

#include "crypto/crypto.h"
#include "schema/encoding.h"
#include "base/error.h"
#include "schema/names.h"
#include "schema/lines.h"

#include <string.h>

#define ROOT_BASE64_LEN  44 /* base64 of 32 bytes, padded */
#define TIMESTAMP_MAX    0x7fffffffffffffffULL
#define COSIGNATURE_SIZE (8 + CRYPTO_ED25519_SIGNATURE_SIZE)

/* An extension line as the line reader accepts it: 1..CHECKPOINT_ORIGIN_MAX printable ASCII
 * bytes, single spaces between words, none leading or trailing. */
static int extension_is_valid(const char *line, size_t len)
{
	if (len == 0 || len > CHECKPOINT_ORIGIN_MAX || line[0] == ' ' || line[len - 1] == ' ')
		return 0;
	for (size_t i = 0; i < len; i++) {
		if (line[i] < 0x20 || line[i] > 0x7e)
			return 0;
		if (line[i] == ' ' && line[i + 1] == ' ')
			return 0;
	}
	return 1;
}

static int empty_tree_root(merkle_hash out)
{
	return crypto_sha256((const uint8_t *)"", 0, out);
}

static int checkpoint_check(const struct checkpoint *c)
{
	if (!names_origin_field_is_valid(c->origin, sizeof(c->origin)))
		return DIRAUTH_ERR_SYNTAX;
	if (c->extension_count > CHECKPOINT_MAX_EXTENSIONS)
		return DIRAUTH_ERR_BOUNDS;
	for (size_t i = 0; i < c->extension_count; i++) {
		size_t len = strnlen(c->extensions[i], sizeof(c->extensions[i]));
		if (len == sizeof(c->extensions[i]) || !extension_is_valid(c->extensions[i], len))
			return DIRAUTH_ERR_SYNTAX;
	}
	/* The empty tree has one root; any other would be a second spelling of "nothing logged". */
	if (c->tree_size == 0) {
		merkle_hash empty;
		int rc = empty_tree_root(empty);
		if (rc)
			return rc;
		if (memcmp(empty, c->root, sizeof(empty)) != 0)
			return DIRAUTH_ERR_SYNTAX;
	}
	return 0;
}

int checkpoint_encode(const struct checkpoint *c, struct buffer *out)
{
	int rc = checkpoint_check(c);
	if (rc)
		return rc;
	char root[ROOT_BASE64_LEN + 1];
	base64_encode(c->root, sizeof(c->root), root);
	size_t start = out->len;
	rc = buffer_appendf(out, "%s\n%llu\n%s\n", c->origin, (unsigned long long)c->tree_size, root);
	for (size_t i = 0; rc == 0 && i < c->extension_count; i++)
		rc = buffer_appendf(out, "%s\n", c->extensions[i]);
	if (rc == 0 && out->len - start > CHECKPOINT_MAX_BYTES)
		rc = DIRAUTH_ERR_BOUNDS;
	if (rc)
		buffer_truncate(out, start);
	return rc;
}

static int parse_fields(const uint8_t *text, size_t len, void *parsed)
{
	struct checkpoint *out = parsed;
	struct line_reader reader;
	struct text_span line;
	int rc;
	lines_init(&reader, text, len, CHECKPOINT_ORIGIN_MAX);
	if ((rc = lines_next(&reader, &line)) != 0)
		return rc;
	if (!names_origin_is_valid(line.data, line.len))
		return DIRAUTH_ERR_SYNTAX;
	if ((rc = text_copy(line, out->origin, sizeof(out->origin))) != 0)
		return rc;
	if ((rc = lines_next(&reader, &line)) != 0 || (rc = text_parse_u64(line, &out->tree_size)) != 0)
		return rc;
	if ((rc = lines_next(&reader, &line)) != 0)
		return rc;
	size_t root_len = 0;
	if (line.len != ROOT_BASE64_LEN ||
	    base64_decode(line.data, line.len, out->root, sizeof(out->root), &root_len) != 0 ||
	    root_len != sizeof(out->root))
		return DIRAUTH_ERR_SYNTAX;
	while (!lines_at_end(&reader)) {
		if (out->extension_count == CHECKPOINT_MAX_EXTENSIONS)
			return DIRAUTH_ERR_BOUNDS;
		if ((rc = lines_next(&reader, &line)) != 0)
			return rc;
		if ((rc = text_copy(line, out->extensions[out->extension_count],
		                    sizeof(out->extensions[out->extension_count]))) != 0)
			return rc;
		out->extension_count++;
	}
	return 0;
}

static int encode_checkpoint(const void *value, struct buffer *out)
{
	return checkpoint_encode(value, out);
}

static const struct lines_codec checkpoint_codec = {
    .max_bytes = CHECKPOINT_MAX_BYTES,
    .value_size = sizeof(struct checkpoint),
    .parse_fields = parse_fields,
    .encode = encode_checkpoint,
};

int checkpoint_parse(const uint8_t *text, size_t len, struct checkpoint *out)
{
	return lines_parse_document(&checkpoint_codec, text, len, out);
}

void cosignature_signature(const struct note_verifier *cosigner, uint64_t timestamp,
                           const uint8_t ed25519[64], struct note_signature *out)
{
	memset(out, 0, sizeof(*out));
	memcpy(out->name, cosigner->name, sizeof(out->name));
	out->key_id = cosigner->key_id;
	for (int i = 0; i < 8; i++)
		out->signature[i] = (uint8_t)(timestamp >> (56 - 8 * i));
	memcpy(out->signature + 8, ed25519, 64);
	out->signature_len = 72;
}

int cosignature_message(uint64_t timestamp, const uint8_t *checkpoint_text, size_t len, struct buffer *out)
{
	if (timestamp > TIMESTAMP_MAX)
		return DIRAUTH_ERR_SYNTAX;
	if (len > 0 && !checkpoint_text)
		return DIRAUTH_ERR_SYNTAX;
	size_t start = out->len;
	int rc = buffer_appendf(out, "cosignature/v1\ntime %llu\n", (unsigned long long)timestamp);
	if (rc == 0 && len > 0)
		rc = buffer_append(out, checkpoint_text, len);
	if (rc)
		buffer_truncate(out, start);
	return rc;
}

int cosignature_verifier_from_ed25519(const char *name, const uint8_t public_key[32],
                                      struct note_verifier *out)
{
	return note_verifier_from_key(name, NOTE_KEY_TYPE_COSIGNATURE_V1, public_key, out);
}

int cosignature_verifier_parse(const char *text, size_t len, struct note_verifier *out)
{
	return note_verifier_parse_typed(text, len, NOTE_KEY_TYPE_COSIGNATURE_V1, out);
}

/* Checks one signature line of the cosigner: timestamp, then Ed25519 over the cosigned message. */
static int cosignature_check(const struct note *checkpoint_note, const struct note_verifier *cosigner,
                             const struct note_signature *signature, uint64_t *timestamp)
{
	if (signature->signature_len != COSIGNATURE_SIZE)
		return DIRAUTH_ERR_SIGNATURE;
	uint64_t stamp = 0;
	for (size_t i = 0; i < 8; i++)
		stamp = stamp << 8 | signature->signature[i];
	if (stamp > TIMESTAMP_MAX)
		return DIRAUTH_ERR_SIGNATURE;
	struct buffer message;
	buffer_init(&message);
	int rc = cosignature_message(stamp, checkpoint_note->text, checkpoint_note->text_len, &message);
	if (rc == 0)
		rc = crypto_ed25519_verify(cosigner->public_key, message.data, message.len,
		                           signature->signature + 8);
	buffer_free(&message);
	if (rc == 0)
		*timestamp = stamp;
	return rc;
}

int cosignature_verify(const struct note *checkpoint_note, const struct note_verifier *cosigner,
                       uint64_t *timestamp)
{
	/* Only a type 0x04 key: an Ed25519 note key here would accept a log signature as a
	 * cosignature. This is the caller's mistake, not a verdict on the note. */
	if (cosigner->type != NOTE_KEY_TYPE_COSIGNATURE_V1)
		return DIRAUTH_ERR_CRYPTO;
	int found = 0;
	uint64_t first = 0;
	/* Every line under the cosigner's name and key id is checked: none may fail. */
	for (size_t s = 0; s < checkpoint_note->signature_count; s++) {
		const struct note_signature *signature = &checkpoint_note->signatures[s];
		if (signature->key_id != cosigner->key_id || strcmp(signature->name, cosigner->name) != 0)
			continue;
		uint64_t stamp = 0;
		int rc = cosignature_check(checkpoint_note, cosigner, signature, &stamp);
		if (rc)
			return rc;
		if (!found)
			first = stamp;
		found = 1;
	}
	if (!found)
		return DIRAUTH_ERR_UNKNOWN_KEY;
	*timestamp = first;
	return 0;
}
