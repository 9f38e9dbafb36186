/*
 * checkpoint.h: transparency-log checkpoints (c2sp.org/tlog-checkpoint) and Ed25519
 * cosignatures (c2sp.org/tlog-cosignature, cosignature/v1).
 *
 * Checkpoint text (the note body):
 *   <origin>\n            non-empty, printable, no '+' or spaces here (dirauth origins)
 *   <tree size>\n         canonical decimal
 *   <root hash>\n         standard base64 of 32 bytes
 *   [extension lines]\n   zero or more non-empty lines (bounded: CHECKPOINT_MAX_EXTENSIONS)
 *
 * A cosignature is a note signature by a cosigner key of type 0x04 whose key id is
 * SHA-256(name || "\n" || 0x04 || public key)[:4] and whose signature bytes are
 * timestamp (u64 big-endian) || Ed25519 signature over
 *   "cosignature/v1\ntime <timestamp>\n" || checkpoint text.
 */
#ifndef DIRAUTH_SCHEMA_CHECKPOINT_H
#define DIRAUTH_SCHEMA_CHECKPOINT_H

#include "base/buffer.h"
#include "crypto/merkle.h"
#include "schema/note.h"

#include <stddef.h>
#include <stdint.h>

#define CHECKPOINT_MAX_BYTES         4096
#define CHECKPOINT_MAX_EXTENSIONS    16
#define CHECKPOINT_ORIGIN_MAX        255
#define NOTE_KEY_TYPE_COSIGNATURE_V1 0x04

struct checkpoint {
	char origin[CHECKPOINT_ORIGIN_MAX + 1];
	uint64_t tree_size;
	merkle_hash root;
	size_t extension_count;
	char extensions[CHECKPOINT_MAX_EXTENSIONS][CHECKPOINT_ORIGIN_MAX + 1];
};

/* Canonical checkpoint text. */
int checkpoint_encode(const struct checkpoint *c, struct buffer *out);

/* Parses checkpoint text (a note body, no signatures). Returns 0, DIRAUTH_ERR_SYNTAX,
 * DIRAUTH_ERR_BOUNDS. */
int checkpoint_parse(const uint8_t *text, size_t len, struct checkpoint *out);

/* The message a cosigner signs for checkpoint text at timestamp. */
int cosignature_message(uint64_t timestamp, const uint8_t *checkpoint_text, size_t len, struct buffer *out);

/* The signature line of a cosignature by cosigner at timestamp: its name and key id, and as its
 * bytes the timestamp (8 bytes, big-endian) then the Ed25519 signature over cosignature_message. */
void cosignature_signature(const struct note_verifier *cosigner, uint64_t timestamp,
                           const uint8_t ed25519[64], struct note_signature *out);

/* Builds a cosigner verifier (type 0x04) for name and an Ed25519 public key. */
int cosignature_verifier_from_ed25519(const char *name, const uint8_t public_key[32],
                                      struct note_verifier *out);

/* Parses a cosigner verifier key string "name+keyid+base64(0x04 || key)". */
int cosignature_verifier_parse(const char *text, size_t len, struct note_verifier *out);

/* Verifies the cosignature by cosigner on a checkpoint note. Returns 0 with *timestamp set;
 * DIRAUTH_ERR_UNKNOWN_KEY when the note has no signature line of that cosigner;
 * DIRAUTH_ERR_SIGNATURE when it has one that fails; DIRAUTH_ERR_CRYPTO. */
int cosignature_verify(const struct note *checkpoint_note, const struct note_verifier *cosigner,
                       uint64_t *timestamp);

#endif
