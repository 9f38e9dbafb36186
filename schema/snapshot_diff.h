/*
 * snapshot_diff.h: a snapshot body written as its difference from an older body, so that a
 * mirror holding the body of one epoch fetches the next in the bytes of what changed (grammar,
 * bounds, rules and an example in schema/snapshot-diff.md):
 *
 *   dirauth snapshot-diff v1
 *   base <SHA-256 of the base body: the base header's body-sha256>
 *   target <SHA-256 of the target body: the target header's body-sha256>
 *   target-size <bytes of the target body>
 *   namespace <the target's namespace>
 *   epoch <the target's epoch>
 *   records <the target's record count>
 *   records-root <the target's records root>
 *   health <the target's health entries>
 *   revocations <the target's revocation entries>
 *   record-changes <count>
 *   del <service id>                                   | a record entry, as in a body
 *   health-changes <count>
 *   del <service id> <endpoint id>                     | a health entry, as in a body
 *   revocation-changes <count>
 *   del <service id> <endpoint id | ->                 | a revocation entry, as in a body
 *
 * Each section's changes are strictly ascending by the section's key (records: service id;
 * health: service id, endpoint id; revocations: their target, in the body's order), one change
 * per key that differs: `del` removes the base's entry of its key; an entry spelled as the body
 * spells it (its line and its note) puts the target's entry of its key in place of the base's, or
 * adds it. Applying is one linear merge of the base's sorted entries with the changes; building,
 * one linear merge of the two bodies' entries. There is one spelling of the diff between two
 * bodies, so a diff can be cached and named by its base and target digests.
 *
 * A diff is pure bytes in, bytes out: no I/O, no clock. The base is named by the SHA-256 of its
 * body bytes, which is the value a co-signed snapshot header's body-sha256 commits to, so a client
 * that holds a verified body can ask for the diff from it, and a client that applies a diff holds
 * afterwards exactly the bytes the diff names as its target: the applier refuses any other result.
 * It does not check signatures: the client verifies the rebuilt body against its co-signed header
 * (snapshot_body_verify_sections) as it would a body fetched whole.
 *
 * Caveats: both functions hold the base and the result (or the target) whole, as a body is held
 * to verify it; memory is O(base + diff + target), time linear in them.
 */
#ifndef DIRAUTH_SCHEMA_SNAPSHOT_DIFF_H
#define DIRAUTH_SCHEMA_SNAPSHOT_DIFF_H

#include "base/buffer.h"
#include "schema/names.h"
#include "schema/snapshot.h"

#include <stddef.h>
#include <stdint.h>

/* Longest diff line without its '\n': a body's section line bound (a revocation entry's line is at
 * most 166 bytes); the notes that follow entry lines are bounded by their documents. */
#define SNAPSHOT_DIFF_LINE_MAX SNAPSHOT_SECTION_LINE_MAX

/* The longest head (its ten lines) a diff can have: a reader needs no more bytes to call
 * snapshot_diff_parse_head. */
#define SNAPSHOT_DIFF_HEAD_MAX 1024

/* A diff is offered only when it is at most this share (percent) of the full body it replaces,
 * both measured the same way (both uncompressed, or both in the encoding they would be served
 * in): past it, fetching the body whole costs about as much and needs no base. */
#define SNAPSHOT_DIFF_OFFER_PERCENT 50

/* What the first ten lines of a diff say: the base it applies to and the target it yields. */
struct snapshot_diff_head {
	uint8_t base_sha256[32];   /* SHA-256 of the base body's bytes */
	uint8_t target_sha256[32]; /* SHA-256 of the target body's bytes */
	uint64_t target_size;      /* the target body's length in bytes */
	char namespace_name[NAMESPACE_NAME_MAX + 1];
	uint64_t epoch;            /* the target body's epoch line */
	uint64_t record_count;     /* the target's records */
	uint8_t records_root[32];  /* snapshot_records_root of the target's records */
	uint64_t health_count;     /* the target's health entries (0: no health section) */
	uint64_t revocation_count; /* the target's revocation entries (0: no revocation section) */
};

/* Appends to out the diff from the body base[0..base_len) to the body target[0..target_len):
 * one change per entry (record, health entry, revocation) that differs between them, none for an
 * entry both hold byte for byte. Both bodies are read with snapshot_body_parse_sections under
 * limits, and may be of either consensus method (a method-1 body has no sections); their
 * namespaces and epochs need not be equal. Time and memory are linear in the bodies. Returns 0;
 * snapshot_body_parse_sections's errors for either body (DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_BOUNDS);
 * DIRAUTH_ERR_BOUNDS (out past BUFFER_MAX); DIRAUTH_ERR_NOMEM; DIRAUTH_ERR_CRYPTO (hashing). On
 * error out is as it was. */
int snapshot_diff_build(const uint8_t *base, size_t base_len, const uint8_t *target, size_t target_len,
                        const struct snapshot_body_limits *limits, struct buffer *out);

/* Reads the head of a diff (its first ten lines) into *head, without reading the changes: what a
 * server needs to file a diff under its base and target, and a client to check, before applying
 * it, that it holds the base. len may be the whole diff or only its first bytes
 * (SNAPSHOT_DIFF_HEAD_MAX are always enough). Returns 0; DIRAUTH_ERR_SYNTAX (not the grammar of
 * the head, or cut short); DIRAUTH_ERR_BOUNDS (a line over SNAPSHOT_DIFF_LINE_MAX). It does not
 * compare the counts with any limit: snapshot_diff_apply does. On error *head is zeroed. */
int snapshot_diff_parse_head(const uint8_t *diff, size_t len, struct snapshot_diff_head *head);

/* Applies the diff diff[0..diff_len) to the body base[0..base_len) and appends the target body to
 * out_target. Checks, in this order:
 *   - the head's grammar (DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_BOUNDS for a long line), and its
 *     counts against limits: more records, health or revocation entries than limits allows is
 *     DIRAUTH_ERR_BOUNDS;
 *   - SHA-256 of base equals the head's base digest: otherwise DIRAUTH_ERR_MISMATCH (the diff is
 *     not for this base; nothing else is read);
 *   - base parses as a body under limits (snapshot_body_parse_sections's errors);
 *   - every change, while it is merged: not the grammar, a non-canonical spelling, changes out of
 *     order or repeated, a del of a key the base does not hold, a put equal to the base's entry of
 *     its key (a second spelling), anything after the last section: DIRAUTH_ERR_SYNTAX; a note
 *     over its document's bound, a line over SNAPSHOT_DIFF_LINE_MAX, a change count above the
 *     base's entries of its section plus its bound in limits: DIRAUTH_ERR_BOUNDS;
 *   - the result: its length is the head's target-size, its SHA-256 the head's target digest, it
 *     parses under limits, and its record count, records root, health and revocation counts are
 *     the head's: otherwise DIRAUTH_ERR_MISMATCH (a result growing past target-size is refused as
 *     soon as it does).
 * Also DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_CRYPTO. On success out_target holds, after what it held,
 * exactly the target-size bytes whose SHA-256 the head names; on any error it is as it was: a
 * wrong body is never handed out. Time and memory are linear in base, diff and target. */
int snapshot_diff_apply(const uint8_t *base, size_t base_len, const uint8_t *diff, size_t diff_len,
                        const struct snapshot_body_limits *limits, struct buffer *out_target);

/* Whether a diff of diff_len bytes is worth offering in place of a body of body_len bytes: 1 when
 * diff_len is at most SNAPSHOT_DIFF_OFFER_PERCENT percent of body_len, 0 otherwise (and for an
 * empty body). Both lengths measured the same way (both uncompressed, or both compressed). */
int snapshot_diff_worth_offering(size_t diff_len, size_t body_len);

#endif
