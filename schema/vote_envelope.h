/*
 * vote_envelope.h: a vote as it travels between authorities: the signed vote note and the vote
 * body it commits to, each framed by its byte length (grammar in schema/vote-envelope.md). Two
 * versions:
 *
 *   dirauth vote-envelope v1             dirauth vote-envelope v2
 *   note <length>                        note <length>
 *   <the signed vote note>               <the signed vote note>
 *   body <length>                        delta <length>
 *   <the vote body>                      <the vote body as a vote delta (schema/vote_delta.h)>
 *
 * Each part is exactly length bytes, length a canonical decimal >= 1; nothing may follow the
 * second part. v2 carries the body as its difference from a base snapshot both authorities hold:
 * the receiver rebuilds the body with vote_delta_apply() and checks it against the vote's
 * body-sha256, and one that does not hold the base (or reads v1 only) refuses it, so that the
 * sender sends v1. The parser checks only the framing and its bounds; the note, the vote text and
 * the body or delta are parsed and checked by their own codecs. The parts point into the
 * caller's buffer.
 */
#ifndef DIRAUTH_SCHEMA_VOTE_ENVELOPE_H
#define DIRAUTH_SCHEMA_VOTE_ENVELOPE_H

#include "base/buffer.h"

#include <stddef.h>
#include <stdint.h>

/* The longest signed vote note: the text and the most signature lines a note may carry. */
#define VOTE_ENVELOPE_NOTE_MAX 16384

struct vote_envelope {
	const uint8_t *note;
	size_t note_len;
	const uint8_t *body; /* the vote body (v1) or the vote delta (v2) */
	size_t body_len;
	int delta; /* 1: v2, body holds a vote delta; 0: v1, body holds a vote body */
};

/* Appends the v1 envelope of note and body. Returns 0, DIRAUTH_ERR_SYNTAX (an empty part),
 * DIRAUTH_ERR_BOUNDS (a note over VOTE_ENVELOPE_NOTE_MAX, or out past BUFFER_MAX),
 * DIRAUTH_ERR_NOMEM; on error out is as it was. */
int vote_envelope_encode(const uint8_t *note, size_t note_len, const uint8_t *body, size_t body_len,
                         struct buffer *out);

/* Appends the v2 envelope of note and the vote delta of its body. The same errors as
 * vote_envelope_encode(); the delta is not parsed here. */
int vote_envelope_encode_delta(const uint8_t *note, size_t note_len, const uint8_t *delta, size_t delta_len,
                               struct buffer *out);

/* Parses an envelope of either version whose second part (body or delta) is at most max_body
 * bytes. Returns 0 with *out pointing into buf and out->delta saying which version it was;
 * DIRAUTH_ERR_SYNTAX (neither framing above, a length that is not a canonical decimal or is 0,
 * bytes after the second part); DIRAUTH_ERR_BOUNDS (a note over VOTE_ENVELOPE_NOTE_MAX, a second
 * part over max_body, a length past the input, a line over 32 bytes). On error *out is zeroed. */
int vote_envelope_parse(const uint8_t *buf, size_t len, size_t max_body, struct vote_envelope *out);

#endif
