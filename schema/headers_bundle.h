/*
 * headers_bundle.h: the signed snapshot headers an authority stores from an epoch on, in one
 * answer, for an authority or a mirror catching up (GET /v1/<ns>/snapshots/from/<epoch>; grammar,
 * bounds and an example in schema/headers-bundle.md):
 *
 *   dirauth headers v1
 *   latest <epoch: the answering authority's latest stored epoch>
 *   header <epoch> <length>
 *   <exactly length bytes: the signed header note as stored>
 *   ... strictly ascending by epoch, each from <= epoch <= through
 *   through <epoch>
 *
 * The answer holds every stored header of an epoch from `from` through `through` (an epoch
 * without one failed, or is not kept). through = latest when the answer is complete; when it
 * stopped early (HEADERS_BUNDLE_MAX_COUNT headers, or HEADERS_BUNDLE_MAX_BYTES) through is its last
 * header's epoch and the caller asks again from through + 1. When latest < from the answer holds
 * no header and through = latest. The codec checks framing, order and bounds only: each note is
 * parsed and verified by its caller.
 *
 * An answer is written with a struct headers_bundle_writer: begin, add each header in ascending
 * epoch, end. A header that does not fit is refused whole, and the writer ends the answer there.
 */
#ifndef DIRAUTH_SCHEMA_HEADERS_BUNDLE_H
#define DIRAUTH_SCHEMA_HEADERS_BUNDLE_H

#include "base/buffer.h"

#include <stddef.h>
#include <stdint.h>

/* The most headers in one answer. */
#define HEADERS_BUNDLE_MAX_COUNT         1024
/* The longest answer, through line included. */
#define HEADERS_BUNDLE_MAX_BYTES         ((size_t)4 << 20)
/* The room every answer keeps for its through line: "through " and 20 digits and '\n', the
 * longest. The text before the through line is at most HEADERS_BUNDLE_MAX_BYTES -
 * HEADERS_BUNDLE_THROUGH_MAX_BYTES. */
#define HEADERS_BUNDLE_THROUGH_MAX_BYTES 29

/* The state of an answer being written into a caller's buffer, so that the writer refuses what
 * the parser would. Filled by headers_bundle_begin(); the caller reads nothing in it. */
struct headers_bundle_writer {
	struct buffer *out;
	size_t start; /* where the answer begins in out */
	uint64_t from;
	uint64_t latest;
	size_t count;        /* headers added */
	uint64_t last_epoch; /* epoch of the last header added, when count > 0 */
};

/* Starts the answer to a request from epoch from at the end of out, which may already hold other
 * bytes: writes its first two lines and points writer at out, which must stay alive and be
 * appended to only through writer until headers_bundle_end(). latest is the answering
 * authority's latest stored epoch. Returns 0, DIRAUTH_ERR_NOMEM or DIRAUTH_ERR_BOUNDS (out past
 * BUFFER_MAX); on error out is as it was. */
int headers_bundle_begin(struct headers_bundle_writer *writer, struct buffer *out, uint64_t from,
                         uint64_t latest);

/* Appends note[0..len), the stored header of epoch. max_bytes is the caller's bound on the answer
 * (HEADERS_BUNDLE_MAX_BYTES when larger). Returns 0; DIRAUTH_ERR_SYNTAX (len 0, an epoch below from,
 * above latest, or not above the last one added); DIRAUTH_ERR_BOUNDS when the answer holds
 * HEADERS_BUNDLE_MAX_COUNT headers already, or with this one and the room of its through line
 * (HEADERS_BUNDLE_THROUGH_MAX_BYTES) would pass max_bytes: nothing is appended, and the caller
 * ends the answer with through = the last epoch added; DIRAUTH_ERR_NOMEM (nothing appended). */
int headers_bundle_add(struct headers_bundle_writer *writer, uint64_t epoch, const uint8_t *note, size_t len,
                       size_t max_bytes);

/* Ends the answer with its through line: latest when the answer is complete, or the last epoch
 * added when it stopped early. Returns 0; DIRAUTH_ERR_SYNTAX (any other through);
 * DIRAUTH_ERR_NOMEM. On error nothing is appended. */
int headers_bundle_end(struct headers_bundle_writer *writer, uint64_t through);

struct headers_bundle_item {
	uint64_t epoch;
	const uint8_t *note; /* points into the parsed buffer and lives as long as it */
	size_t len;
};

struct headers_bundle {
	uint64_t latest;
	uint64_t through;
	size_t count;
	struct headers_bundle_item *items; /* malloc'd, NULL when count is 0 */
};

/* Parses the answer to a request from epoch from, each note at most max_note bytes. Accepts
 * exactly the bytes a writer writes. Returns 0 with *out filled (release it with
 * headers_bundle_clear); DIRAUTH_ERR_SYNTAX: not the grammar, epochs not strictly ascending, an
 * epoch below from or above through, through above latest, through below latest without being
 * the last header's epoch (or with no header), a length that is 0 or not a canonical decimal,
 * anything after the through line; DIRAUTH_ERR_BOUNDS: len over HEADERS_BUNDLE_MAX_BYTES (checked
 * before anything is read), the text before the through line over HEADERS_BUNDLE_MAX_BYTES -
 * HEADERS_BUNDLE_THROUGH_MAX_BYTES, more than HEADERS_BUNDLE_MAX_COUNT headers, a note over
 * max_note or past the input, a line over its bound; DIRAUTH_ERR_NOMEM. On error *out is
 * zeroed. */
int headers_bundle_parse(const uint8_t *buf, size_t len, uint64_t from, size_t max_note,
                         struct headers_bundle *out);

/* Frees the items of bundle and zeroes it. Accepts a zeroed bundle. */
void headers_bundle_clear(struct headers_bundle *bundle);

#endif
