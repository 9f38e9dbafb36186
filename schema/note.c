/*
 * note.c: C2SP signed notes and their verifier keys.
 *
 * Every signed document dirauth serves or accepts (registrations, receipts, snapshots,
 * checkpoints, trust bundles) travels as a signed note, so this parser sees hostile input first.
 * It therefore checks everything before it allocates anything that depends on the input: the
 * split between text and signatures, the UTF-8 of the whole note, every signature line, and the
 * number of signatures. Verification is the spec's rule made explicit: only signatures whose
 * (name, key id) pair names a known key are checked; any such signature that fails rejects the
 * note, because a known key vouching for different bytes means someone is lying; and only
 * distinct known keys are counted, so that repeating a signature or a verifier cannot reach a
 * threshold.
 */
#include "schema/note.h"

#include "crypto/crypto.h"
#include "schema/encoding.h"
#include "base/error.h"
#include "schema/lines.h"
#include "schema/names.h"

#include <stdlib.h>
#include <string.h>

/* U+2014 EM DASH then a space: the start of every signature line. */
static const uint8_t signature_prefix[] = {0xe2, 0x80, 0x94, ' '};
#define SIGNATURE_PREFIX_LEN sizeof(signature_prefix)
#define KEY_ID_SIZE          4
/* base64 of the longest key id and signature a line may carry. */
#define SIGNATURE_BASE64_MAX (((KEY_ID_SIZE + NOTE_SIGNATURE_MAX) + 2) / 3 * 4)

/*
 * Decodes one UTF-8 sequence at buf[0..len). Strict: no overlong forms, no surrogates, nothing
 * above U+10FFFF, no truncated sequence. Returns the sequence length (1..4) with *code_point
 * set, or 0 when the bytes are not valid UTF-8.
 */
static size_t utf8_decode(const uint8_t *buf, size_t len, uint32_t *code_point)
{
	if (len == 0)
		return 0;
	uint8_t lead = buf[0];
	size_t need;
	uint32_t value;
	uint32_t minimum;
	if (lead < 0x80) {
		*code_point = lead;
		return 1;
	} else if (lead >= 0xc2 && lead <= 0xdf) {
		need = 2;
		value = lead & 0x1fu;
		minimum = 0x80;
	} else if (lead >= 0xe0 && lead <= 0xef) {
		need = 3;
		value = lead & 0x0fu;
		minimum = 0x800;
	} else if (lead >= 0xf0 && lead <= 0xf4) {
		need = 4;
		value = lead & 0x07u;
		minimum = 0x10000;
	} else {
		return 0; /* a continuation byte, an overlong 2-byte lead (C0, C1), or F5..FF */
	}
	if (len < need)
		return 0;
	for (size_t i = 1; i < need; i++) {
		if ((buf[i] & 0xc0) != 0x80)
			return 0;
		value = value << 6 | (buf[i] & 0x3fu);
	}
	if (value < minimum || value > 0x10ffff || (value >= 0xd800 && value <= 0xdfff))
		return 0;
	*code_point = value;
	return need;
}

/* Unicode White_Space, which a key name may not contain (the spec says "no Unicode spaces"). */
static int is_unicode_space(uint32_t c)
{
	return (c >= 0x09 && c <= 0x0d) || c == 0x20 || c == 0x85 || c == 0xa0 || c == 0x1680 ||
	       (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f ||
	       c == 0x3000;
}

int note_verifier_equal(const struct note_verifier *a, const struct note_verifier *b)
{
	return a->key_id == b->key_id && a->type == b->type && strcmp(a->name, b->name) == 0 &&
	       memcmp(a->public_key, b->public_key, sizeof a->public_key) == 0;
}

int note_name_is_valid(const char *name, size_t len)
{
	if (!name || len == 0 || len > NOTE_NAME_MAX)
		return 0;
	const uint8_t *bytes = (const uint8_t *)name;
	size_t pos = 0;
	while (pos < len) {
		uint32_t c;
		size_t step = utf8_decode(bytes + pos, len - pos, &c);
		if (step == 0)
			return 0;
		/* Printable only: no C0, DEL or C1 controls, no spaces of any kind, no '+'. */
		if (c < 0x20 || (c >= 0x7f && c <= 0x9f) || is_unicode_space(c) || c == '+')
			return 0;
		pos += step;
	}
	return 1;
}

int note_key_id(const char *name, uint8_t type, const uint8_t *public_key, size_t public_key_len,
                uint32_t *key_id)
{
	static const uint8_t newline = '\n';
	const uint8_t *parts[] = {(const uint8_t *)name, &newline, &type, public_key};
	size_t lengths[] = {strlen(name), 1, 1, public_key_len};
	uint8_t digest[CRYPTO_SHA256_SIZE];
	int rc = crypto_sha256_parts(parts, lengths, 4, digest);
	if (rc)
		return rc;
	*key_id =
	    (uint32_t)digest[0] << 24 | (uint32_t)digest[1] << 16 | (uint32_t)digest[2] << 8 | digest[3];
	return 0;
}

int note_verifier_from_ed25519(const char *name, const uint8_t public_key[32], struct note_verifier *out)
{
	return note_verifier_from_key(name, NOTE_KEY_TYPE_ED25519, public_key, out);
}

int note_verifier_from_key(const char *name, uint8_t type, const uint8_t public_key[32],
                           struct note_verifier *out)
{
	size_t name_len = strnlen(name, NOTE_NAME_MAX + 1);
	if (!note_name_is_valid(name, name_len))
		return DIRAUTH_ERR_SYNTAX;
	struct note_verifier verifier;
	memset(&verifier, 0, sizeof(verifier));
	memcpy(verifier.name, name, name_len);
	verifier.type = type;
	memcpy(verifier.public_key, public_key, sizeof(verifier.public_key));
	int rc = note_key_id(verifier.name, verifier.type, verifier.public_key, sizeof(verifier.public_key),
	                     &verifier.key_id);
	if (rc)
		return rc;
	*out = verifier;
	return 0;
}

int note_verifier_parse(const char *text, size_t len, struct note_verifier *out)
{
	return note_verifier_parse_typed(text, len, NOTE_KEY_TYPE_ED25519, out);
}

int note_verifier_parse_typed(const char *text, size_t len, uint8_t type, struct note_verifier *out)
{
	if (len > NOTE_VERIFIER_KEY_MAX)
		return DIRAUTH_ERR_BOUNDS;
	/* The name cannot hold '+', so the first two '+' are the separators. */
	const char *first = memchr(text, '+', len);
	if (!first)
		return DIRAUTH_ERR_SYNTAX;
	size_t name_len = (size_t)(first - text);
	const char *id_text = first + 1;
	size_t rest_len = len - name_len - 1;
	const char *second = memchr(id_text, '+', rest_len);
	if (!second)
		return DIRAUTH_ERR_SYNTAX;
	size_t id_len = (size_t)(second - id_text);
	const char *key_text = second + 1;
	size_t key_len = rest_len - id_len - 1;

	if (name_len > NOTE_NAME_MAX)
		return DIRAUTH_ERR_BOUNDS;
	if (!note_name_is_valid(text, name_len))
		return DIRAUTH_ERR_SYNTAX;
	uint8_t id_bytes[KEY_ID_SIZE];
	if (hex_decode(id_text, id_len, id_bytes, sizeof(id_bytes)) != 0)
		return DIRAUTH_ERR_SYNTAX;
	uint8_t key[1 + 32];
	size_t decoded = 0;
	int rc = base64_decode(key_text, key_len, key, sizeof(key), &decoded);
	if (rc == DIRAUTH_ERR_BOUNDS)
		return DIRAUTH_ERR_SYNTAX; /* longer than an Ed25519 key: not a key we accept */
	if (rc)
		return rc;
	if (decoded != sizeof(key) || key[0] != type)
		return DIRAUTH_ERR_SYNTAX;

	struct note_verifier verifier;
	memset(&verifier, 0, sizeof(verifier));
	memcpy(verifier.name, text, name_len);
	verifier.type = key[0];
	memcpy(verifier.public_key, key + 1, sizeof(verifier.public_key));
	rc = note_key_id(verifier.name, verifier.type, verifier.public_key, sizeof(verifier.public_key),
	                 &verifier.key_id);
	if (rc)
		return rc;
	uint32_t stated = (uint32_t)id_bytes[0] << 24 | (uint32_t)id_bytes[1] << 16 |
	                  (uint32_t)id_bytes[2] << 8 | id_bytes[3];
	if (stated != verifier.key_id)
		return DIRAUTH_ERR_SYNTAX;
	*out = verifier;
	return 0;
}

static void key_id_to_bytes(uint32_t key_id, uint8_t out[KEY_ID_SIZE])
{
	out[0] = (uint8_t)(key_id >> 24);
	out[1] = (uint8_t)(key_id >> 16);
	out[2] = (uint8_t)(key_id >> 8);
	out[3] = (uint8_t)key_id;
}

void note_verifier_format(const struct note_verifier *verifier, char out[NOTE_VERIFIER_KEY_MAX + 1])
{
	/* name ≤ 128, '+', 8 hex, '+', 44 base64: 182 bytes, inside NOTE_VERIFIER_KEY_MAX. */
	size_t name_len = strnlen(verifier->name, NOTE_NAME_MAX);
	memcpy(out, verifier->name, name_len);
	size_t pos = name_len;
	out[pos++] = '+';
	uint8_t id_bytes[KEY_ID_SIZE];
	key_id_to_bytes(verifier->key_id, id_bytes);
	hex_encode(id_bytes, sizeof(id_bytes), out + pos);
	pos += 2 * sizeof(id_bytes);
	out[pos++] = '+';
	uint8_t key[1 + 32];
	key[0] = verifier->type;
	memcpy(key + 1, verifier->public_key, 32);
	base64_encode(key, sizeof(key), out + pos);
}

int note_verifier_is_canonical(const struct note_verifier *verifier)
{
	size_t name_len = strnlen(verifier->name, sizeof(verifier->name));
	if (name_len == sizeof(verifier->name) || !names_key_name_is_ascii(verifier->name, name_len) ||
	    verifier->type != NOTE_KEY_TYPE_ED25519)
		return 0;
	char text[NOTE_VERIFIER_KEY_MAX + 1];
	struct note_verifier reparsed;
	note_verifier_format(verifier, text);
	return note_verifier_parse(text, strlen(text), &reparsed) == 0 &&
	       note_verifier_equal(&reparsed, verifier);
}

int note_text_check(const uint8_t *text, size_t len)
{
	if (len == 0 || text[len - 1] != '\n')
		return DIRAUTH_ERR_SYNTAX;
	size_t pos = 0;
	while (pos < len) {
		uint32_t c;
		size_t step = utf8_decode(text + pos, len - pos, &c);
		if (step == 0)
			return DIRAUTH_ERR_SYNTAX;
		if ((c < 0x20 && c != '\n') || c == 0x7f)
			return DIRAUTH_ERR_SYNTAX;
		pos += step;
	}
	return 0;
}

/* Parses one signature line (without its '\n') into *out. */
static int parse_signature_line(const uint8_t *line, size_t len, struct note_signature *out)
{
	if (len < SIGNATURE_PREFIX_LEN || memcmp(line, signature_prefix, SIGNATURE_PREFIX_LEN) != 0)
		return DIRAUTH_ERR_SYNTAX;
	line += SIGNATURE_PREFIX_LEN;
	len -= SIGNATURE_PREFIX_LEN;
	const uint8_t *space = memchr(line, ' ', len);
	if (!space)
		return DIRAUTH_ERR_SYNTAX;
	size_t name_len = (size_t)(space - line);
	const char *base64_text = (const char *)space + 1;
	size_t base64_len = len - name_len - 1;
	if (name_len > NOTE_NAME_MAX)
		return DIRAUTH_ERR_BOUNDS;
	if (!note_name_is_valid((const char *)line, name_len))
		return DIRAUTH_ERR_SYNTAX;
	if (base64_len == 0)
		return DIRAUTH_ERR_SYNTAX;
	if (base64_len > SIGNATURE_BASE64_MAX)
		return DIRAUTH_ERR_BOUNDS;
	uint8_t decoded[KEY_ID_SIZE + NOTE_SIGNATURE_MAX];
	size_t decoded_len = 0;
	int rc = base64_decode(base64_text, base64_len, decoded, sizeof(decoded), &decoded_len);
	if (rc)
		return rc;
	if (decoded_len < KEY_ID_SIZE + 1)
		return DIRAUTH_ERR_SYNTAX; /* a key id and at least one signature byte */
	memcpy(out->name, line, name_len);
	out->name[name_len] = 0;
	out->key_id =
	    (uint32_t)decoded[0] << 24 | (uint32_t)decoded[1] << 16 | (uint32_t)decoded[2] << 8 | decoded[3];
	out->signature_len = decoded_len - KEY_ID_SIZE;
	memcpy(out->signature, decoded + KEY_ID_SIZE, out->signature_len);
	return 0;
}

int note_parse(const uint8_t *buf, size_t len, struct note **out)
{
	int rc;
	struct note *note = NULL;
	struct note_signature *signatures = NULL;
	uint8_t *text = NULL;

	if (len < 2 || buf[len - 1] != '\n')
		return DIRAUTH_ERR_SYNTAX;
	/* The last "\n\n" splits the text (which keeps its final '\n') from the signatures. */
	size_t split = len;
	for (size_t i = len - 1; i > 0; i--) {
		if (buf[i - 1] == '\n' && buf[i] == '\n') {
			split = i - 1;
			break;
		}
	}
	if (split == len)
		return DIRAUTH_ERR_SYNTAX;
	size_t text_len = split + 1;
	const uint8_t *block = buf + split + 2;
	size_t block_len = len - split - 2;
	if (block_len == 0)
		return DIRAUTH_ERR_SYNTAX; /* no signatures */
	rc = note_text_check(buf, text_len);
	if (rc)
		return rc;

	/* Count lines first so the array is sized by a bound we checked, not by the input. */
	size_t count = 0;
	for (size_t i = 0; i < block_len; i++) {
		if (block[i] == '\n')
			count++;
	}
	if (count > NOTE_MAX_SIGNATURES)
		return DIRAUTH_ERR_BOUNDS;

	signatures = calloc(count, sizeof(*signatures));
	text = malloc(text_len + 1);
	note = calloc(1, sizeof(*note));
	if (!signatures || !text || !note) {
		rc = DIRAUTH_ERR_NOMEM;
		goto cleanup;
	}
	size_t pos = 0;
	for (size_t i = 0; i < count; i++) {
		const uint8_t *line = block + pos;
		const uint8_t *newline = memchr(line, '\n', block_len - pos);
		size_t line_len = (size_t)(newline - line);
		rc = parse_signature_line(line, line_len, &signatures[i]);
		if (rc)
			goto cleanup;
		pos += line_len + 1;
	}
	memcpy(text, buf, text_len);
	text[text_len] = 0;
	note->text = text;
	note->text_len = text_len;
	note->signatures = signatures;
	note->signature_count = count;
	*out = note;
	return 0;
cleanup:
	free(signatures);
	free(text);
	free(note);
	return rc;
}

void note_free(struct note *note)
{
	if (!note)
		return;
	free(note->text);
	free(note->signatures);
	free(note);
}

static int verifier_matches(const struct note_verifier *key, const struct note_signature *signature)
{
	return key->key_id == signature->key_id && strcmp(key->name, signature->name) == 0;
}

/* True when keys[i] names the same key (name and key id) as an earlier entry that verified. */
static int counted_before(const struct note_verifier *keys, const uint8_t *key_verified, size_t i)
{
	for (size_t j = 0; j < i; j++) {
		if (key_verified[j] && keys[j].key_id == keys[i].key_id &&
		    strcmp(keys[j].name, keys[i].name) == 0)
			return 1;
	}
	return 0;
}

int note_verify(const struct note *note, const struct note_verifier *keys, size_t key_count,
                uint8_t *verified, size_t *verified_count)
{
	int rc = 0;
	uint8_t *key_verified = NULL;
	if (key_count > 0) {
		key_verified = calloc(key_count, 1);
		if (!key_verified)
			return DIRAUTH_ERR_NOMEM;
	}
	/* Every signature that names a known key is checked, even a repeat: none may fail. */
	for (size_t s = 0; s < note->signature_count; s++) {
		const struct note_signature *signature = &note->signatures[s];
		for (size_t k = 0; k < key_count; k++) {
			if (!verifier_matches(&keys[k], signature))
				continue;
			if (keys[k].type != NOTE_KEY_TYPE_ED25519) {
				rc = DIRAUTH_ERR_CRYPTO;
				goto cleanup;
			}
			if (signature->signature_len != CRYPTO_ED25519_SIGNATURE_SIZE) {
				rc = DIRAUTH_ERR_SIGNATURE;
				goto cleanup;
			}
			rc = crypto_ed25519_verify(keys[k].public_key, note->text, note->text_len,
			                           signature->signature);
			if (rc)
				goto cleanup;
			key_verified[k] = 1;
		}
	}
	size_t count = 0;
	for (size_t k = 0; k < key_count; k++) {
		if (key_verified[k] && !counted_before(keys, key_verified, k))
			count++;
	}
	if (verified) {
		for (size_t k = 0; k < key_count; k++)
			verified[k] = key_verified[k];
	}
	*verified_count = count;
cleanup:
	free(key_verified);
	return rc;
}

int note_verify_threshold(const struct note *note, const struct note_verifier *keys, size_t key_count,
                          size_t threshold)
{
	if (threshold == 0)
		return DIRAUTH_ERR_INTERNAL; /* a threshold of zero would accept anything */
	size_t count = 0;
	int rc = note_verify(note, keys, key_count, NULL, &count);
	if (rc)
		return rc;
	if (count == 0)
		return DIRAUTH_ERR_UNKNOWN_KEY;
	if (count < threshold)
		return DIRAUTH_ERR_THRESHOLD;
	return 0;
}

int note_parse_statement(const uint8_t *buf, size_t len, size_t max, const struct lines_codec *codec,
                         void *out, struct note **note_out)
{
	struct note *note = NULL;
	*note_out = NULL;
	if (len > max)
		return DIRAUTH_ERR_BOUNDS;
	int rc = note_parse(buf, len, &note);
	if (rc)
		return rc;
	rc = note->signature_count == 1 ? lines_parse_document(codec, note->text, note->text_len, out)
	                                : DIRAUTH_ERR_SYNTAX;
	if (rc) {
		note_free(note);
		return rc;
	}
	*note_out = note;
	return 0;
}

int note_statement_keep(int rc, struct note *note, struct note **note_out)
{
	if (rc == 0 && note_out)
		*note_out = note;
	else
		note_free(note);
	if (rc && note_out)
		*note_out = NULL;
	return rc;
}

int note_format(const uint8_t *text, size_t text_len, const struct note_signature *signatures,
                size_t signature_count, struct buffer *out)
{
	int rc = note_text_check(text, text_len);
	if (rc)
		return rc;
	if (signature_count == 0 || signature_count > NOTE_MAX_SIGNATURES)
		return DIRAUTH_ERR_SYNTAX;
	for (size_t i = 0; i < signature_count; i++) {
		const struct note_signature *signature = &signatures[i];
		if (!note_name_is_valid(signature->name, strnlen(signature->name, NOTE_NAME_MAX + 1)))
			return DIRAUTH_ERR_SYNTAX;
		if (signature->signature_len == 0 || signature->signature_len > NOTE_SIGNATURE_MAX)
			return DIRAUTH_ERR_SYNTAX;
	}
	size_t start = out->len;
	rc = buffer_append(out, text, text_len);
	if (!rc)
		rc = buffer_append(out, "\n", 1);
	for (size_t i = 0; !rc && i < signature_count; i++) {
		const struct note_signature *signature = &signatures[i];
		uint8_t decoded[KEY_ID_SIZE + NOTE_SIGNATURE_MAX];
		char encoded[SIGNATURE_BASE64_MAX + 1];
		key_id_to_bytes(signature->key_id, decoded);
		memcpy(decoded + KEY_ID_SIZE, signature->signature, signature->signature_len);
		base64_encode(decoded, KEY_ID_SIZE + signature->signature_len, encoded);
		rc = buffer_append(out, signature_prefix, SIGNATURE_PREFIX_LEN);
		if (!rc)
			rc = buffer_append_string(out, signature->name);
		if (!rc)
			rc = buffer_append(out, " ", 1);
		if (!rc)
			rc = buffer_append_string(out, encoded);
		if (!rc)
			rc = buffer_append(out, "\n", 1);
	}
	if (rc) {
		/* Leave out as it was: a half-written note must never be mistaken for one. */
		out->len = start;
		if (out->data)
			out->data[start] = 0;
	}
	return rc;
}
