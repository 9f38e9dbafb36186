/*
 * proof.c: the text of c2sp.org/tlog-proof files, and their inclusion check.
 *
 * A proof file is carried by hand, by mail, next to a download: whoever checks it has nothing
 * else from the log. So the reader is strict and bounded before it is anything else: the whole
 * file, the extra data and the note each have a byte bound checked before they are decoded, the
 * lines are read by the line reader of every document (schema/lines.h), each value has one
 * spelling, and the checkpoint note at the end is parsed by the same code as every other signed
 * note and must be its own canonical spelling, so that one proof never has two byte forms.
 */
#include "tlog/proof.h"

#include "schema/encoding.h"
#include "base/error.h"
#include "schema/lines.h"

#include <stdlib.h>
#include <string.h>

#define HASH_BASE64_LEN 44 /* base64 of 32 bytes, padded */
#define INDEX_KEYWORD   "index"
#define EXTRA_KEYWORD   "extra"

/* Checks that note_bytes is a signed checkpoint note in its canonical spelling; *note (may be
 * NULL) gets the parsed note, owned by the caller. */
static int checkpoint_note_check(const uint8_t *note_bytes, size_t len, struct note **note_out,
                                 struct checkpoint *checkpoint)
{
	struct note *note = NULL;
	struct buffer again;
	buffer_init(&again);
	if (len > TLOG_PROOF_NOTE_MAX)
		return DIRAUTH_ERR_BOUNDS;
	int rc = note_parse(note_bytes, len, &note);
	if (rc == 0)
		rc = checkpoint_parse(note->text, note->text_len, checkpoint);
	if (rc == 0)
		rc = note_format(note->text, note->text_len, note->signatures, note->signature_count, &again);
	if (rc == 0 && (again.len != len || memcmp(again.data, note_bytes, len) != 0))
		rc = DIRAUTH_ERR_SYNTAX;
	buffer_free(&again);
	if (rc == 0 && note_out)
		*note_out = note;
	else
		note_free(note);
	return rc;
}

int tlog_proof_encode(uint64_t index, const merkle_hash *path, size_t path_len, const uint8_t *extra,
                      size_t extra_len, const uint8_t *checkpoint_note, size_t checkpoint_note_len,
                      struct buffer *out)
{
	if (!extra && extra_len > 0)
		return DIRAUTH_ERR_SYNTAX;
	if ((extra && (extra_len == 0 || extra_len > TLOG_PROOF_EXTRA_MAX)) || path_len > MERKLE_MAX_PROOF)
		return DIRAUTH_ERR_BOUNDS;
	struct checkpoint *checkpoint = malloc(sizeof(*checkpoint));
	if (!checkpoint)
		return DIRAUTH_ERR_NOMEM;
	int rc = checkpoint_note_check(checkpoint_note, checkpoint_note_len, NULL, checkpoint);
	free(checkpoint);
	if (rc)
		return rc;

	size_t start = out->len;
	rc = buffer_append_string(out, TLOG_PROOF_FIRST_LINE "\n");
	if (rc == 0 && extra) {
		char *text = malloc(base64_encoded_length(extra_len) + 1);
		if (!text) {
			rc = DIRAUTH_ERR_NOMEM;
		} else {
			base64_encode(extra, extra_len, text);
			rc = buffer_appendf(out, EXTRA_KEYWORD " %s\n", text);
			free(text);
		}
	}
	if (rc == 0)
		rc = buffer_appendf(out, INDEX_KEYWORD " %llu\n", (unsigned long long)index);
	for (size_t i = 0; rc == 0 && i < path_len; i++) {
		char hash[HASH_BASE64_LEN + 1];
		base64_encode(path[i], MERKLE_HASH_SIZE, hash);
		rc = buffer_appendf(out, "%s\n", hash);
	}
	if (rc == 0)
		rc = buffer_append(out, "\n", 1);
	if (rc == 0)
		rc = buffer_append(out, checkpoint_note, checkpoint_note_len);
	if (rc)
		buffer_truncate(out, start);
	return rc;
}

static int parse_extra(struct text_span value, struct tlog_proof *proof)
{
	size_t len = value.len;
	if (len == 0)
		return DIRAUTH_ERR_SYNTAX;
	if (len > base64_encoded_length(TLOG_PROOF_EXTRA_MAX))
		return DIRAUTH_ERR_BOUNDS;
	size_t cap = len / 4 * 3 + 3;
	proof->extra = malloc(cap);
	if (!proof->extra)
		return DIRAUTH_ERR_NOMEM;
	if (base64_decode(value.data, len, proof->extra, cap, &proof->extra_len) != 0 ||
	    proof->extra_len == 0)
		return DIRAUTH_ERR_SYNTAX;
	return proof->extra_len > TLOG_PROOF_EXTRA_MAX ? DIRAUTH_ERR_BOUNDS : 0;
}

static int parse_fields(const uint8_t *buf, size_t len, struct tlog_proof *proof)
{
	struct line_reader reader;
	struct text_span line;
	int rc;
	/* No line bound of the reader's own: each value is bounded by its check. */
	lines_init(&reader, buf, len, TLOG_PROOF_MAX_BYTES);
	if ((rc = lines_expect_exact(&reader, TLOG_PROOF_FIRST_LINE)) != 0)
		return rc;
	rc = lines_expect_optional(&reader, EXTRA_KEYWORD, &line);
	if (rc == 0)
		rc = parse_extra(line, proof);
	if (rc != 0 && rc != DIRAUTH_ERR_NOT_FOUND)
		return rc;
	if ((rc = lines_expect_u64(&reader, INDEX_KEYWORD, &proof->index)) != 0)
		return rc;
	while (!lines_take_blank(&reader)) {
		if ((rc = lines_next(&reader, &line)) != 0)
			return rc;
		if (proof->path_len == MERKLE_MAX_PROOF)
			return DIRAUTH_ERR_BOUNDS;
		size_t hash_len = 0;
		if (line.len != HASH_BASE64_LEN ||
		    base64_decode(line.data, line.len, proof->path[proof->path_len], MERKLE_HASH_SIZE,
		                  &hash_len) != 0 ||
		    hash_len != MERKLE_HASH_SIZE)
			return DIRAUTH_ERR_SYNTAX;
		proof->path_len++;
	}
	/* The rest is the checkpoint note. */
	const uint8_t *note;
	size_t note_len;
	lines_take_rest(&reader, &note, &note_len);
	if ((rc = checkpoint_note_check(note, note_len, &proof->note, &proof->checkpoint)) != 0)
		return rc;
	proof->checkpoint_note = malloc(note_len);
	if (!proof->checkpoint_note)
		return DIRAUTH_ERR_NOMEM;
	memcpy(proof->checkpoint_note, note, note_len);
	proof->checkpoint_note_len = note_len;
	return 0;
}

int tlog_proof_parse(const uint8_t *buf, size_t len, struct tlog_proof **out)
{
	*out = NULL;
	if (len > TLOG_PROOF_MAX_BYTES)
		return DIRAUTH_ERR_BOUNDS;
	struct tlog_proof *proof = calloc(1, sizeof(*proof));
	if (!proof)
		return DIRAUTH_ERR_NOMEM;
	int rc = parse_fields(buf, len, proof);
	if (rc) {
		tlog_proof_free(proof);
		return rc;
	}
	*out = proof;
	return 0;
}

void tlog_proof_free(struct tlog_proof *proof)
{
	if (!proof)
		return;
	free(proof->extra);
	free(proof->checkpoint_note);
	note_free(proof->note);
	free(proof);
}

int tlog_proof_verify_leaf_hash(const struct tlog_proof *proof, const merkle_hash leaf_hash)
{
	return merkle_inclusion_verify(proof->index, proof->checkpoint.tree_size, leaf_hash, proof->path,
	                               proof->path_len, proof->checkpoint.root);
}

int tlog_proof_verify_entry(const struct tlog_proof *proof, const uint8_t *entry, size_t len)
{
	merkle_hash leaf_hash;
	int rc = merkle_leaf_hash(entry, len, leaf_hash);
	return rc ? rc : tlog_proof_verify_leaf_hash(proof, leaf_hash);
}

int tlog_proof_verify(const struct tlog_proof *proof, const struct tlog_policy *policy,
                      const merkle_hash leaf_hash, size_t *cosigned_count)
{
	struct checkpoint *checkpoint = malloc(sizeof(*checkpoint));
	if (!checkpoint)
		return DIRAUTH_ERR_NOMEM;
	int rc = tlog_checkpoint_verify(proof->note, policy, checkpoint, NULL, cosigned_count);
	/* The note was parsed with the proof; the checkpoint it carries is the one verified. */
	if (rc == 0 && (checkpoint->tree_size != proof->checkpoint.tree_size ||
	                memcmp(checkpoint->root, proof->checkpoint.root, MERKLE_HASH_SIZE) != 0))
		rc = DIRAUTH_ERR_INTERNAL;
	free(checkpoint);
	return rc ? rc : tlog_proof_verify_leaf_hash(proof, leaf_hash);
}
