/*
 * note.h: C2SP signed notes (c2sp.org/signed-note) and verifier keys.
 *
 * A signed note is UTF-8 text ending in '\n', then a blank line, then one signature line per
 * signature: "— <key name> <base64(key id || signature)>\n" (U+2014 EM DASH, a space, the name,
 * a space, the base64). The split between text and signatures is the last "\n\n".
 *
 * Parsing is strict and bounded: valid UTF-8; no control characters but '\n' in the text; no
 * '\r'; at most NOTE_MAX_SIGNATURES signature lines (more is DIRAUTH_ERR_BOUNDS); key names are
 * non-empty, without spaces or '+', and at most NOTE_NAME_MAX bytes; every signature line well
 * formed. Text limits belong to the caller, who passes the whole note's byte bound.
 *
 * Verification follows the spec: signatures by keys not in the verifier set are ignored; a
 * signature whose (name, key id) matches a known key but does not verify rejects the whole note;
 * the result is the number of distinct known keys that verified (hard rule 10: duplicates and
 * unknown keys count zero).
 *
 * Verifier keys are "<name>+<key id as 8 hex digits>+<base64(type || public key)>"; dirauth uses
 * Ed25519 (type 0x01) and the key id is the first 4 bytes, big-endian, of
 * SHA-256(name || 0x0A || type || public key).
 */
#ifndef DIRAUTH_SCHEMA_NOTE_H
#define DIRAUTH_SCHEMA_NOTE_H

#include "base/buffer.h"

#include <stddef.h>
#include <stdint.h>

#define NOTE_NAME_MAX         128
#define NOTE_MAX_SIGNATURES   100
#define NOTE_SIGNATURE_MAX    256 /* longest signature (after the key id) read from a line */
#define NOTE_KEY_TYPE_ED25519 0x01
#define NOTE_VERIFIER_KEY_MAX 256 /* longest verifier-key string, without NUL */

struct note_verifier {
	char name[NOTE_NAME_MAX + 1];
	uint32_t key_id;
	uint8_t type; /* NOTE_KEY_TYPE_ED25519 */
	uint8_t public_key[32];
};

struct note_signature {
	char name[NOTE_NAME_MAX + 1];
	uint32_t key_id;
	uint8_t signature[NOTE_SIGNATURE_MAX];
	size_t signature_len; /* 64 for Ed25519 */
};

struct note {
	uint8_t *text; /* owned; the text including its final '\n'; NUL-terminated */
	size_t text_len;
	struct note_signature *signatures; /* owned array */
	size_t signature_count;
};

/* True when name is a valid key name (non-empty, ≤ NOTE_NAME_MAX, printable, no space, no '+'). */
int note_name_is_valid(const char *name, size_t len);

/* 1 when a and b are the same key: name, key id, type and public key all equal. Else 0. */
int note_verifier_equal(const struct note_verifier *a, const struct note_verifier *b);

/* The key id of (name, type, public key). Returns 0 or DIRAUTH_ERR_CRYPTO. */
int note_key_id(const char *name, uint8_t type, const uint8_t *public_key, size_t public_key_len,
                uint32_t *key_id);

/* Builds the Ed25519 verifier for name and public key (computes the key id). Returns 0,
 * DIRAUTH_ERR_SYNTAX for a bad name, or DIRAUTH_ERR_CRYPTO. */
int note_verifier_from_ed25519(const char *name, const uint8_t public_key[32], struct note_verifier *out);

/* The verifier of an Ed25519 public key used with another signature type (the key id covers the
 * type: a cosignature key, type 0x04, has another key id than the same key as type 0x01). */
int note_verifier_from_key(const char *name, uint8_t type, const uint8_t public_key[32],
                           struct note_verifier *out);

/* note_verifier_parse for a verifier key of the given type (its first key byte). */
int note_verifier_parse_typed(const char *text, size_t len, uint8_t type, struct note_verifier *out);

/* Parses "<name>+<hex key id>+<base64>". Refuses non-Ed25519 types, a key id that does not
 * match the key, and anything not canonical. Returns 0, DIRAUTH_ERR_SYNTAX or
 * DIRAUTH_ERR_BOUNDS. */
int note_verifier_parse(const char *text, size_t len, struct note_verifier *out);

/* Writes the verifier-key string (NUL-terminated) into out, which has room for
 * NOTE_VERIFIER_KEY_MAX + 1 bytes. */
void note_verifier_format(const struct note_verifier *verifier, char out[NOTE_VERIFIER_KEY_MAX + 1]);

/* 1 when verifier is an Ed25519 key with an ASCII name (names.h) that reads back as itself from
 * its verifier-key string: a key id that does not belong to the key is not canonical, since no
 * verifier would accept it later. Else 0. What a document that names a key checks of it. */
int note_verifier_is_canonical(const struct note_verifier *verifier);

/* Checks that text is valid note text: non-empty, valid UTF-8, no control characters other than
 * '\n', ends with '\n'. Returns 0 or DIRAUTH_ERR_SYNTAX. */
int note_text_check(const uint8_t *text, size_t len);

/* Parses a signed note. The note must carry at least one signature. Returns 0 with a new note
 * the caller frees with note_free(), DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_BOUNDS or
 * DIRAUTH_ERR_NOMEM. */
int note_parse(const uint8_t *buf, size_t len, struct note **out);

/* Frees a parsed note. Accepts NULL. */
void note_free(struct note *note);

/* Verifies the note's signatures against known keys. On success returns 0 and sets
 * *verified_count to the number of distinct known keys (by name and key id) with a valid
 * signature; verified (may be NULL, else key_count entries) gets 1 for each key that verified.
 * Returns DIRAUTH_ERR_SIGNATURE if any signature by a known key fails, DIRAUTH_ERR_CRYPTO if a
 * check could not run. */
int note_verify(const struct note *note, const struct note_verifier *keys, size_t key_count,
                uint8_t *verified, size_t *verified_count);

/* note_verify, then DIRAUTH_ERR_THRESHOLD unless at least threshold keys verified (threshold
 * must be ≥ 1; with 0 known signatures the result is DIRAUTH_ERR_UNKNOWN_KEY). */
int note_verify_threshold(const struct note *note, const struct note_verifier *keys, size_t key_count,
                          size_t threshold);

/* A statement's text codec (registration, health, revocation, deregistration): schema/lines.h. */
struct lines_codec;

/* Parses a provider's or operator's statement: a note of at most max bytes carrying exactly one
 * signature line, whose text lines_parse_document reads into out with codec. (A statement that
 * anyone could extend with signature lines would have as many byte strings, and digests in
 * votes, as relays.) The signature is not checked here: the signing key depends on the text. On
 * success *note_out holds the note (note_free); on failure it is NULL. Returns 0,
 * DIRAUTH_ERR_BOUNDS (longer than max), note_parse's errors, DIRAUTH_ERR_SYNTAX (not one
 * signature line), lines_parse_document's errors. */
int note_parse_statement(const uint8_t *buf, size_t len, size_t max, const struct lines_codec *codec,
                         void *out, struct note **note_out);

/* The last step of a statement's parse-and-verify: returns rc, and when it is 0 hands note to
 * *note_out (or frees it when note_out is NULL); when it is not, frees note and sets *note_out
 * (if any) to NULL. */
int note_statement_keep(int rc, struct note *note, struct note **note_out);

/* Appends the signed note (text, blank line, signature lines) to out. text must pass
 * note_text_check. Returns 0, DIRAUTH_ERR_SYNTAX or DIRAUTH_ERR_NOMEM. */
int note_format(const uint8_t *text, size_t text_len, const struct note_signature *signatures,
                size_t signature_count, struct buffer *out);

#endif
