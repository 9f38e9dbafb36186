/*
 * notes_bundle.h: many notes asked of another authority in one round trip
 * (POST /v1/<ns>/notes), the request and its answer (grammar, bounds and an example in
 * schema/notes-bundle.md):
 *
 *   dirauth notes-request v1                   dirauth notes v1
 *   registration <service id> <sequence>       note <index> <length>
 *   statement <sha256>                         <exactly length bytes: the note>
 *   ... 1..NOTES_REQUEST_MAX_ITEMS items       ... indexes strictly ascending, each < covered
 *                                              end <covered>
 *
 * An item asks for what GET /v1/<ns>/registrations/<service id>/<sequence> or
 * GET /v1/<ns>/statements/<sha256> would answer; items are in any order, repeats allowed, and
 * the answer names them by their 0-based index in the request. Items below covered without a
 * note are not held by the answering authority; items from covered on were not reached (the
 * answer was full) and are asked again. The codec checks the framing, the order and the bounds;
 * each note is parsed and checked (digest, signature) by its caller.
 *
 * An answer is written with a struct notes_answer_writer: begin, add each note in ascending
 * index, end. A note that does not fit is refused whole, and the writer ends the answer there.
 */
#ifndef DIRAUTH_SCHEMA_NOTES_BUNDLE_H
#define DIRAUTH_SCHEMA_NOTES_BUNDLE_H

#include "base/buffer.h"
#include "schema/registration.h"

#include <stddef.h>
#include <stdint.h>

/* The most items one request asks for. */
#define NOTES_REQUEST_MAX_ITEMS    4096
/* The longest answer, end line included. */
#define NOTES_ANSWER_MAX_BYTES     ((size_t)4 << 20)
/* The room every answer keeps for its end line: "end 4096\n", the longest. The text before the
 * end line is at most NOTES_ANSWER_MAX_BYTES - NOTES_ANSWER_END_MAX_BYTES. */
#define NOTES_ANSWER_END_MAX_BYTES 9

enum notes_item_kind {
	NOTES_ITEM_REGISTRATION, /* a signed registration note: service_id and sequence */
	NOTES_ITEM_STATEMENT,    /* a health statement or revocation note: digest, its SHA-256 */
};

/* One item of a request. The fields the kind does not use are ignored by the encoder and left
 * zero by the parser. */
struct notes_item {
	enum notes_item_kind kind;
	uint8_t service_id[SERVICE_ID_SIZE];
	uint64_t sequence; /* >= 1 */
	uint8_t digest[32];
};

/* The longest request: its first line and NOTES_REQUEST_MAX_ITEMS of the longest item line (a
 * registration with a 20-digit sequence). A server caps the request body it reads at this. Never
 * fails. */
size_t notes_request_max_bytes(void);

/* Appends the request for items[0..count). Returns 0; DIRAUTH_ERR_SYNTAX (count 0, a kind not
 * of the enum, a registration with sequence 0); DIRAUTH_ERR_BOUNDS (count over
 * NOTES_REQUEST_MAX_ITEMS); DIRAUTH_ERR_NOMEM. On error out is as it was. */
int notes_request_encode(const struct notes_item *items, size_t count, struct buffer *out);

/* Parses a request. Accepts exactly the bytes notes_request_encode() writes. Returns 0 with
 * *items a malloc'd array of *count (1..NOTES_REQUEST_MAX_ITEMS) items, in the request's order,
 * that the caller frees with free(); nothing in it borrows from buf. DIRAUTH_ERR_SYNTAX: not the
 * grammar (no item, an unknown line, sequence 0, a non-canonical decimal, hex not in lower case,
 * anything after the last item line); DIRAUTH_ERR_BOUNDS: len over notes_request_max_bytes()
 * (checked before anything is read or allocated), more than NOTES_REQUEST_MAX_ITEMS items, a line
 * over its bound; DIRAUTH_ERR_NOMEM. On error *items is NULL and *count 0. */
int notes_request_parse(const uint8_t *buf, size_t len, struct notes_item **items, size_t *count);

/* The state of an answer being written into a caller's buffer, so that the writer refuses what
 * the parser would. Filled by notes_answer_begin(); the caller reads nothing in it. */
struct notes_answer_writer {
	struct buffer *out;
	size_t start;         /* where the answer begins in out */
	size_t request_count; /* the request's items */
	size_t count;         /* notes added */
	size_t last_index;    /* index of the last note added, when count > 0 */
};

/* Starts the answer to a request of request_count items (1..NOTES_REQUEST_MAX_ITEMS) at the end
 * of out, which may already hold other bytes: writes its first line and points writer at out,
 * which must stay alive and be appended to only through writer until notes_answer_end().
 * Returns 0; DIRAUTH_ERR_BOUNDS (request_count outside its range, out past BUFFER_MAX);
 * DIRAUTH_ERR_NOMEM. On error out is as it was. */
int notes_answer_begin(struct notes_answer_writer *writer, struct buffer *out, size_t request_count);

/* Appends note[0..len), the answer to the request's item at index. max_bytes is the caller's
 * bound on the answer (NOTES_ANSWER_MAX_BYTES when larger). Returns 0; DIRAUTH_ERR_SYNTAX (len 0,
 * an index not above the last one added or not below the request's item count);
 * DIRAUTH_ERR_BOUNDS when the answer with this note and the room of its end line
 * (NOTES_ANSWER_END_MAX_BYTES) would pass max_bytes: nothing is appended, and the caller ends the
 * answer with covered = index; DIRAUTH_ERR_NOMEM (nothing appended). */
int notes_answer_add(struct notes_answer_writer *writer, size_t index, const uint8_t *note, size_t len,
                     size_t max_bytes);

/* Ends the answer with its end line. covered is the number of request items the answer speaks
 * for: above every index added and at most the request's item count (the request's item count
 * when every item was reached, the index of the note that did not fit otherwise). Returns 0;
 * DIRAUTH_ERR_SYNTAX (covered out of that range); DIRAUTH_ERR_NOMEM. On error nothing is
 * appended. */
int notes_answer_end(struct notes_answer_writer *writer, size_t covered);

/* One note of a parsed answer. note points into the parsed buffer and lives as long as it. */
struct notes_answer_note {
	size_t index; /* the item's index in the request */
	const uint8_t *note;
	size_t len;
};

/* Parses the answer to a request of request_count items (1..NOTES_REQUEST_MAX_ITEMS), each
 * note at most max_note bytes. Accepts exactly the bytes a writer writes. Returns 0 with *notes
 * a malloc'd array of *count notes (NULL when there is none) that the caller frees with free(),
 * and *covered: the items below it without a note are not held, those from it on are to be asked
 * again. DIRAUTH_ERR_SYNTAX: not the grammar, indexes not strictly ascending, an index not below
 * covered, covered over request_count, a length that is 0 or not a canonical decimal, anything
 * after the end line. DIRAUTH_ERR_BOUNDS: request_count outside its range, len over
 * NOTES_ANSWER_MAX_BYTES (checked before anything is read), the text before the end line over
 * NOTES_ANSWER_MAX_BYTES - NOTES_ANSWER_END_MAX_BYTES, a note over max_note or past the input, a
 * line over its bound. DIRAUTH_ERR_NOMEM. On error *notes is NULL and *count and *covered 0. */
int notes_answer_parse(const uint8_t *buf, size_t len, size_t request_count, size_t max_note,
                       struct notes_answer_note **notes, size_t *count, size_t *covered);

#endif
