/*
 * answers.c: the two answers of the signer that the log reads: its keys (GET_KEYS) and its
 * latest checkpoints of an origin (CHECKPOINT_STATE).
 *
 * The signer is this authority's own, but what it says decides which tree head the log extends
 * and which keys its checkpoints are checked against, so its answers are parsed as strictly as
 * anything from outside: bounded, line by line, each line once, in the order the signer writes
 * them, every value in its one canonical spelling (signer_protocol/signer-protocol.md).
 */
#include "server/tlog/translog.h"

#include "schema/checkpoint.h"
#include "schema/encoding.h"
#include "base/error.h"

#include <string.h>

/* One "<word> <value>\n" line starting at *position: *value and *value_len get the value, and
 * *position moves past the line. Returns 0, or DIRAUTH_ERR_SYNTAX when the bytes there are not
 * such a line for word. */
static int answer_line(const uint8_t *payload, size_t len, size_t *position, const char *word,
                       const char **value, size_t *value_len)
{
	size_t word_len = strlen(word);
	size_t at = *position;
	if (len - at < word_len + 2 || memcmp(payload + at, word, word_len) != 0 ||
	    payload[at + word_len] != ' ')
		return DIRAUTH_ERR_SYNTAX;
	const uint8_t *start = payload + at + word_len + 1;
	const uint8_t *end = memchr(start, '\n', len - (at + word_len + 1));
	if (!end || end == start)
		return DIRAUTH_ERR_SYNTAX;
	*value = (const char *)start;
	*value_len = (size_t)(end - start);
	*position = (size_t)(end - payload) + 1;
	return 0;
}

/* 1 when the line at position begins with word and a space. */
static int answer_line_is(const uint8_t *payload, size_t len, size_t position, const char *word)
{
	size_t word_len = strlen(word);
	return len - position > word_len && memcmp(payload + position, word, word_len) == 0 &&
	       payload[position + word_len] == ' ';
}

int translog_signer_keys_parse(const uint8_t *payload, size_t len, struct translog_signer_keys *out)
{
	const char *value;
	size_t value_len, position = 0;
	struct note_verifier signing;

	memset(out, 0, sizeof *out);
	if (!payload && len)
		return DIRAUTH_ERR_SYNTAX;
	if (len > TRANSLOG_ANSWER_MAX)
		return DIRAUTH_ERR_BOUNDS;
	if (answer_line(payload, len, &position, "signing-key", &value, &value_len) != 0 ||
	    note_verifier_parse(value, value_len, &signing) != 0)
		goto refuse;
	if (answer_line_is(payload, len, position, "log-key")) {
		if (answer_line(payload, len, &position, "log-key", &value, &value_len) != 0 ||
		    note_verifier_parse(value, value_len, &out->log_key) != 0)
			goto refuse;
		out->has_log_key = 1;
	}
	if (answer_line_is(payload, len, position, "cosignature-key")) {
		if (answer_line(payload, len, &position, "cosignature-key", &value, &value_len) != 0 ||
		    cosignature_verifier_parse(value, value_len, &out->cosigner) != 0)
			goto refuse;
		out->has_cosigner = 1;
	}
	if (position != len)
		goto refuse;
	return 0;
refuse:
	memset(out, 0, sizeof *out);
	return DIRAUTH_ERR_SYNTAX;
}

/* "<size> <root base64>" into *size and root. */
static int answer_tree_head(const char *value, size_t len, uint64_t *size, merkle_hash root)
{
	const char *space = memchr(value, ' ', len);
	size_t decoded = 0;
	if (!space)
		return DIRAUTH_ERR_SYNTAX;
	size_t size_len = (size_t)(space - value);
	size_t root_len = len - size_len - 1;
	if (decimal_parse(value, size_len, size) != 0 || root_len != 44 ||
	    base64_decode(space + 1, root_len, root, MERKLE_HASH_SIZE, &decoded) != 0 ||
	    decoded != MERKLE_HASH_SIZE)
		return DIRAUTH_ERR_SYNTAX;
	return 0;
}

int translog_signer_state_parse(const uint8_t *payload, size_t len, struct translog_signer_state *out)
{
	const char *value;
	size_t value_len, position = 0;

	memset(out, 0, sizeof *out);
	if (!payload && len)
		return DIRAUTH_ERR_SYNTAX;
	if (len > TRANSLOG_ANSWER_MAX)
		return DIRAUTH_ERR_BOUNDS;
	if (answer_line_is(payload, len, position, "signed")) {
		if (answer_line(payload, len, &position, "signed", &value, &value_len) != 0 ||
		    answer_tree_head(value, value_len, &out->signed_size, out->signed_root) != 0)
			goto refuse;
		out->has_signed = 1;
	}
	if (answer_line_is(payload, len, position, "cosigned")) {
		if (answer_line(payload, len, &position, "cosigned", &value, &value_len) != 0 ||
		    answer_tree_head(value, value_len, &out->cosigned_size, out->cosigned_root) != 0)
			goto refuse;
		out->has_cosigned = 1;
	}
	if (position != len)
		goto refuse;
	return 0;
refuse:
	memset(out, 0, sizeof *out);
	return DIRAUTH_ERR_SYNTAX;
}

int translog_signer_state_latest(const struct translog_signer_state *state, uint64_t *size, merkle_hash root)
{
	if (!state->has_signed && !state->has_cosigned)
		return DIRAUTH_ERR_NOT_FOUND;
	if (state->has_signed && state->has_cosigned && state->signed_size == state->cosigned_size &&
	    memcmp(state->signed_root, state->cosigned_root, MERKLE_HASH_SIZE) != 0)
		return DIRAUTH_ERR_MISMATCH;
	int cosigned =
	    state->has_cosigned && (!state->has_signed || state->cosigned_size > state->signed_size);
	*size = cosigned ? state->cosigned_size : state->signed_size;
	memcpy(root, cosigned ? state->cosigned_root : state->signed_root, MERKLE_HASH_SIZE);
	return 0;
}
