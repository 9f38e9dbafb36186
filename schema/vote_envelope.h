/*
 * vote_envelope.h: a vote as it travels between authorities: the signed vote note and the vote
 * body it commits to, each framed by its byte length (grammar in schema/vote-envelope.md):
 *
 *   dirauth vote-envelope v1
 *   note <length>
 *   <exactly length bytes: the signed vote note>
 *   body <length>
 *   <exactly length bytes: the vote body>
 *
 * Nothing may follow the body. The parser checks only the framing and its bounds; the note, the
 * vote text and the body are parsed and checked by their own codecs (and the body against the
 * vote's body-sha256 by consensus_vote_body_load). The parts point into the caller's buffer.
 */
#ifndef DIRAUTH_SCHEMA_VOTE_ENVELOPE_H
#define DIRAUTH_SCHEMA_VOTE_ENVELOPE_H

#include "schema/buffer.h"

#include <stddef.h>
#include <stdint.h>

/* The longest signed vote note: the text and the most signature lines a note may carry. */
#define VOTE_ENVELOPE_NOTE_MAX 16384

struct vote_envelope {
	const uint8_t *note;
	size_t note_len;
	const uint8_t *body;
	size_t body_len;
};

/* Appends the envelope of note and body. Returns 0, DIRAUTH_ERR_SYNTAX (an empty part),
 * DIRAUTH_ERR_BOUNDS (a note over VOTE_ENVELOPE_NOTE_MAX), DIRAUTH_ERR_NOMEM. */
int vote_envelope_encode(const uint8_t *note, size_t note_len, const uint8_t *body, size_t body_len,
                         struct buffer *out);

/* Parses an envelope of at most max_body body bytes. Returns 0 with *out pointing into buf,
 * DIRAUTH_ERR_SYNTAX (not the framing above, a length that is not a canonical decimal or is 0,
 * bytes after the body), DIRAUTH_ERR_BOUNDS (a note over VOTE_ENVELOPE_NOTE_MAX, a body over
 * max_body, a length past the input, a line over 32 bytes). On error *out is zeroed. */
int vote_envelope_parse(const uint8_t *buf, size_t len, size_t max_body, struct vote_envelope *out);

#endif
