/*
 * vote_delta.h: a vote body written as its difference from a base body, so that a vote crosses
 * the authority set in the bytes of what changed (grammar, bounds and an example in
 * schema/vote-delta.md):
 *
 *   dirauth vote-delta v1
 *   base <SHA-256 of the base snapshot's header text: 64 lower-case hex>
 *   records <count>
 *   del <service id>
 *   put <service id> <sequence> <registration sha256>
 *   health <count>
 *   del <service id> <endpoint id>
 *   put <service id> <endpoint id> <issued-at> <sequence> <statement sha256>
 *   revocations <count>
 *   del <service id> <endpoint id | -> <revocation sha256>
 *   put <service id> <endpoint id | -> <revocation sha256>
 *
 * The base is the body an authority derives from a snapshot both sides hold: its records as
 * record lines, its published health entries as health lines, no revocations. The three section
 * lines are always there, in this order, counts possibly 0. Within a section the operations are
 * strictly ascending by the section's key (records: service id; health: service id, endpoint id;
 * revocations: the whole item, in the order of vote_body_revocation_compare), and they are
 * applied to the base's items, sorted the same way, in one linear merge. `del` names a key the
 * base holds and removes that item; `put` adds an item, or replaces the base's item of its key,
 * which it must differ from. So a delta is the smallest one between its base and its target, and
 * has one spelling.
 *
 * The target's preamble (namespace, epoch, authority) is not in the delta: the applier takes it
 * from its caller (the vote's own lines), and checks the rebuilt body against the vote's
 * body-sha256.
 */
#ifndef DIRAUTH_SCHEMA_VOTE_DELTA_H
#define DIRAUTH_SCHEMA_VOTE_DELTA_H

#include "base/buffer.h"
#include "schema/vote_body.h"

#include <stddef.h>
#include <stdint.h>

/* Longest delta line without its '\n' (a health put is at most 240 bytes). */
#define VOTE_DELTA_LINE_MAX 256

/* Appends the smallest delta from base to target: one operation per item that differs, none
 * for an item both hold unchanged. base_digest is the SHA-256 of the base snapshot's header text;
 * the preambles of base and target are not read. Returns 0; DIRAUTH_ERR_SYNTAX (in base or
 * target, a section not sorted strictly as the file comment says, an item with sequence 0 or an
 * endpoint flag other than 0 or 1, a count above 0 with a NULL array); DIRAUTH_ERR_BOUNDS (out
 * past BUFFER_MAX); DIRAUTH_ERR_NOMEM. On error out is as it was. */
int vote_delta_encode(const struct vote_body *base, const struct vote_body *target,
                      const uint8_t base_digest[32], struct buffer *out);

/* Reads the first two lines of delta only: the digest of the header of the snapshot whose body
 * it applies to, so that the caller can find that base. Returns 0 with base_digest filled;
 * DIRAUTH_ERR_SYNTAX (not "dirauth vote-delta v1" then a base line of 64 lower-case hex);
 * DIRAUTH_ERR_BOUNDS (a line over VOTE_DELTA_LINE_MAX). */
int vote_delta_base(const uint8_t *delta, size_t len, uint8_t base_digest[32]);

/* Applies delta to base and returns the target body in *out: a new body (free it with
 * vote_body_free; nothing in it borrows from delta or base) with namespace_name, epoch and
 * authority from the caller. The base line is read but not compared: the caller chose base by
 * it (vote_delta_base). base must be a valid body, as vote_body_encode() accepts it; an item of
 * it out of order is refused as DIRAUTH_ERR_SYNTAX. Accepts exactly the bytes vote_delta_encode()
 * writes for this base. Refuses, before allocating for a section: a count above the base's items
 * of the section plus its bound in limits (max_records, max_health, max_revocations: no delta
 * within the bounds needs more) as DIRAUTH_ERR_BOUNDS, and a count the bytes left cannot hold as
 * DIRAUTH_ERR_SYNTAX. DIRAUTH_ERR_SYNTAX also: not the grammar, a non-canonical spelling,
 * operations out of order or repeated, a del of a key the base does not hold, a put equal to the
 * base's item (a revocation the base holds), sequence 0, a namespace or authority that is not a
 * name, anything after the revocations section. DIRAUTH_ERR_BOUNDS also: a result with more items
 * in a section than its bound, a line over VOTE_DELTA_LINE_MAX. DIRAUTH_ERR_NOMEM. On error *out
 * is NULL. */
int vote_delta_apply(const struct vote_body *base, const uint8_t *delta, size_t len,
                     const struct vote_body_limits *limits, const char *namespace_name, uint64_t epoch,
                     const char *authority, struct vote_body **out);

#endif
