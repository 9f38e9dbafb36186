/*
 * fuzz_translog_answers.c: the signer's answers as the transparency log reads them, on arbitrary
 * bytes: translog_signer_keys_parse() (GET_KEYS) when the first byte is even,
 * translog_signer_state_parse() (CHECKPOINT_STATE) when it is odd. An answer either parser accepts
 * must be written back byte for byte from what it returned (each has one spelling), and the latest
 * tree head of a state is one of its two.
 */
#include "schema/checkpoint.h"
#include "schema/encoding.h"
#include "base/error.h"
#include "server/tlog/translog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void expect_same(const struct buffer *written, const uint8_t *bytes, size_t len)
{
	if (written->len != len || (len > 0 && memcmp(written->data, bytes, len) != 0))
		abort();
}

static void check_keys(const uint8_t *bytes, size_t len)
{
	struct translog_signer_keys keys;
	int rc = translog_signer_keys_parse(bytes, len, &keys);
	if (rc != 0) {
		if (rc != DIRAUTH_ERR_SYNTAX && rc != DIRAUTH_ERR_BOUNDS)
			abort();
		return;
	}
	/* The signing key's line is not returned: write back what follows it. */
	const uint8_t *end = memchr(bytes, '\n', len);
	if (!end)
		abort();
	size_t rest = len - (size_t)(end + 1 - bytes);
	struct buffer out;
	char text[NOTE_VERIFIER_KEY_MAX + 1];
	buffer_init(&out);
	if (keys.has_log_key) {
		if (keys.log_key.type != NOTE_KEY_TYPE_ED25519)
			abort();
		note_verifier_format(&keys.log_key, text);
		buffer_appendf(&out, "log-key %s\n", text);
	}
	if (keys.has_cosigner) {
		if (keys.cosigner.type != NOTE_KEY_TYPE_COSIGNATURE_V1)
			abort();
		note_verifier_format(&keys.cosigner, text);
		buffer_appendf(&out, "cosignature-key %s\n", text);
	}
	expect_same(&out, end + 1, rest);
	buffer_free(&out);
}

static void check_state(const uint8_t *bytes, size_t len)
{
	struct translog_signer_state state;
	int rc = translog_signer_state_parse(bytes, len, &state);
	if (rc != 0) {
		if (rc != DIRAUTH_ERR_SYNTAX && rc != DIRAUTH_ERR_BOUNDS)
			abort();
		return;
	}
	struct buffer out;
	char root[45];
	buffer_init(&out);
	if (state.has_signed) {
		base64_encode(state.signed_root, MERKLE_HASH_SIZE, root);
		buffer_appendf(&out, "signed %llu %s\n", (unsigned long long)state.signed_size, root);
	}
	if (state.has_cosigned) {
		base64_encode(state.cosigned_root, MERKLE_HASH_SIZE, root);
		buffer_appendf(&out, "cosigned %llu %s\n", (unsigned long long)state.cosigned_size, root);
	}
	expect_same(&out, bytes, len);
	buffer_free(&out);
	uint64_t size = 0;
	merkle_hash latest;
	rc = translog_signer_state_latest(&state, &size, latest);
	if (rc == 0 && !((state.has_signed && size == state.signed_size &&
	                  memcmp(latest, state.signed_root, MERKLE_HASH_SIZE) == 0) ||
	                 (state.has_cosigned && size == state.cosigned_size &&
	                  memcmp(latest, state.cosigned_root, MERKLE_HASH_SIZE) == 0)))
		abort();
	if (rc != 0 && rc != DIRAUTH_ERR_NOT_FOUND && rc != DIRAUTH_ERR_MISMATCH)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	if (data[0] & 1)
		check_state(data + 1, size - 1);
	else
		check_keys(data + 1, size - 1);
	return 0;
}
