/*
 * proof.h: offline proof files (c2sp.org/tlog-proof): a checkpoint with its signatures, the
 * index of an entry, the entry's inclusion proof in that checkpoint's tree, optional extra data.
 *
 *   c2sp.org/tlog-proof@v1\n
 *   [extra <base64 of 1..TLOG_PROOF_EXTRA_MAX bytes>\n]
 *   index <canonical decimal>\n
 *   <base64 of a 32-byte hash>\n       0..MERKLE_MAX_PROOF lines, from the leaf's sibling up
 *   \n
 *   <the signed checkpoint note, verbatim: text, blank line, signature lines>
 *
 * Base64 is standard, padded and canonical (schema/encoding.h). The parser accepts exactly what
 * tlog_proof_encode() writes: the note must parse (schema/note.h, at least one signature), its
 * text must be a checkpoint (schema/checkpoint.h), and it must be the note's one spelling.
 * Parsing checks form only: whether the index lies in the tree and the proof has the right
 * length is for verification, whose answer is the same refusal (DIRAUTH_ERR_PROOF).
 *
 * Verifying a proof file is three steps, all needed: the checkpoint against the log's policy
 * (tlog_checkpoint_verify, tlog/policy.h); the inclusion of the leaf in that checkpoint
 * (tlog_proof_verify_leaf_hash / _entry); and whatever the application requires of the entry
 * itself. The extra data is not authenticated by anything here. tlog_proof_verify() does the
 * first two. How dirauth fills the file is in tlog/tlog.md.
 */
#ifndef DIRAUTH_TLOG_PROOF_H
#define DIRAUTH_TLOG_PROOF_H

#include "base/buffer.h"
#include "schema/checkpoint.h"
#include "crypto/merkle.h"
#include "schema/note.h"
#include "tlog/policy.h"

#include <stddef.h>
#include <stdint.h>

#define TLOG_PROOF_FIRST_LINE "c2sp.org/tlog-proof@v1"
#define TLOG_PROOF_EXTRA_MAX  (128 * 1024) /* bytes of extra data */
#define TLOG_PROOF_NOTE_MAX   (64 * 1024)  /* bytes of the signed checkpoint note */
#define TLOG_PROOF_MAX_BYTES  (256 * 1024) /* bytes of the whole file */

struct tlog_proof {
	uint8_t *extra;   /* owned; NULL when the file has no extra line */
	size_t extra_len; /* 1..TLOG_PROOF_EXTRA_MAX when extra is not NULL */
	uint64_t index;
	merkle_hash path[MERKLE_MAX_PROOF];
	size_t path_len;
	uint8_t *checkpoint_note; /* owned: the signed checkpoint note as it stands in the file */
	size_t checkpoint_note_len;
	struct note *note;            /* owned: checkpoint_note parsed */
	struct checkpoint checkpoint; /* the note's text parsed */
};

/*
 * Appends a proof file to out. extra is NULL (no extra line, extra_len 0) or 1..
 * TLOG_PROOF_EXTRA_MAX bytes; path has path_len ≤ MERKLE_MAX_PROOF hashes; checkpoint_note is
 * the signed checkpoint note to carry. Returns 0; DIRAUTH_ERR_SYNTAX when the note does not
 * parse, is not a checkpoint or not canonical, or extra is NULL with a length; DIRAUTH_ERR_BOUNDS
 * for an empty or oversized extra, a path too long, a note over TLOG_PROOF_NOTE_MAX;
 * DIRAUTH_ERR_NOMEM. On error out is unchanged.
 */
int tlog_proof_encode(uint64_t index, const merkle_hash *path, size_t path_len, const uint8_t *extra,
                      size_t extra_len, const uint8_t *checkpoint_note, size_t checkpoint_note_len,
                      struct buffer *out);

/* Parses a proof file. Returns 0 with a new proof the caller frees with tlog_proof_free();
 * DIRAUTH_ERR_SYNTAX for anything but the grammar above; DIRAUTH_ERR_BOUNDS for a file over
 * TLOG_PROOF_MAX_BYTES, an extra over its bound, more than MERKLE_MAX_PROOF hashes, a note over
 * TLOG_PROOF_NOTE_MAX or over the note parser's bounds; DIRAUTH_ERR_NOMEM. */
int tlog_proof_parse(const uint8_t *buf, size_t len, struct tlog_proof **out);

/* Frees a parsed proof. Accepts NULL. */
void tlog_proof_free(struct tlog_proof *proof);

/* Checks that leaf_hash is entry proof->index of the tree of the proof's checkpoint, with its
 * root. Does not look at signatures. Returns 0, DIRAUTH_ERR_PROOF or DIRAUTH_ERR_CRYPTO. */
int tlog_proof_verify_leaf_hash(const struct tlog_proof *proof, const merkle_hash leaf_hash);

/* tlog_proof_verify_leaf_hash() for the RFC 6962 leaf hash of entry (len bytes). */
int tlog_proof_verify_entry(const struct tlog_proof *proof, const uint8_t *entry, size_t len);

/* The checkpoint against policy (tlog_checkpoint_verify: its errors, DIRAUTH_ERR_THRESHOLD
 * included), then the inclusion of leaf_hash (DIRAUTH_ERR_PROOF). *cosigned_count (may be NULL)
 * gets the cosigners counted. Returns 0 only when both hold. */
int tlog_proof_verify(const struct tlog_proof *proof, const struct tlog_policy *policy,
                      const merkle_hash leaf_hash, size_t *cosigned_count);

#endif
