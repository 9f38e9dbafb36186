/*
 * evidence.h: an evidence file, two signed statements that cannot both be honest, with what a
 * verifier needs to check them offline (grammar and meaning in schema/evidence.md).
 *
 *   dirauth evidence-file v1\n
 *   kind <checkpoints|headers|votes>\n
 *   origin <origin>\n
 *   [epoch <canonical decimal>\n]            headers and votes only, and there required
 *   key <verifier key>\n                     0..EVIDENCE_KEYS_MAX, distinct, canonical
 *   statement <length>\n<length bytes>       exactly two
 *   [consistency <length>\n<length bytes>]   checkpoints only, at most once
 *   certificates <length>\n<length bytes>    headers and votes: one or two; checkpoints: none
 *
 * Nothing may follow. Lengths are canonical decimals, at least 1 (a consistency proof may be 0
 * bytes long: the proof between equal sizes is empty), bounded per part. The key lines hold the
 * public keys the statements are checked against: for checkpoints the log keys (type 0x01, named
 * by the origin) and cosignature keys (type 0x04); for headers and votes the authorities'
 * identity keys (type 0x01), used when no trust bundle is given. The parser checks the framing,
 * the bounds, the order and the spelling of every line; what the statements say, and whether
 * they conflict, is the verifier's (ctl/evidence.h). The parts point into the caller's buffer.
 */
#ifndef DIRAUTH_SCHEMA_EVIDENCE_H
#define DIRAUTH_SCHEMA_EVIDENCE_H

#include "base/buffer.h"
#include "schema/certificate.h"
#include "crypto/merkle.h"
#include "schema/note.h"
#include "schema/snapshot.h"

#include <stddef.h>
#include <stdint.h>

#define EVIDENCE_FIRST_LINE       "dirauth evidence-file v1"
#define EVIDENCE_KEYS_MAX         32
#define EVIDENCE_STATEMENT_MAX    (64 * 1024)             /* bytes of one signed statement */
#define EVIDENCE_CONSISTENCY_MAX  (MERKLE_MAX_PROOF * 45) /* a consistency proof's text */
#define EVIDENCE_CERTIFICATES_MAX 2
#define EVIDENCE_MAX_BYTES                                                                                   \
	(4096 + EVIDENCE_KEYS_MAX * (NOTE_VERIFIER_KEY_MAX + 5) + 2 * (EVIDENCE_STATEMENT_MAX + 32) +        \
	 EVIDENCE_CONSISTENCY_MAX + 32 + EVIDENCE_CERTIFICATES_MAX * (CERTIFICATE_BUNDLE_MAX_BYTES + 32))

enum evidence_kind {
	EVIDENCE_CHECKPOINTS = 1, /* two checkpoint notes of one origin that are not one tree */
	EVIDENCE_HEADERS = 2,     /* two snapshot header notes for one (origin, epoch) */
	EVIDENCE_VOTES = 3,       /* two vote notes of one authority for one (origin, epoch) */
};

struct evidence_part {
	const uint8_t *data;
	size_t len;
};

struct evidence {
	enum evidence_kind kind;
	char origin[SNAPSHOT_ORIGIN_MAX + 1];
	uint64_t epoch; /* headers and votes */
	size_t key_count;
	struct note_verifier keys[EVIDENCE_KEYS_MAX];
	struct evidence_part statements[2];
	int has_consistency;
	struct evidence_part consistency;
	size_t certificate_count;
	struct evidence_part certificates[EVIDENCE_CERTIFICATES_MAX];
};

/* The kind's keyword ("checkpoints", "headers", "votes"); "unknown" for another value. */
const char *evidence_kind_name(enum evidence_kind kind);

/* Appends the file of evidence to out. Returns 0; DIRAUTH_ERR_SYNTAX for an unknown kind, an
 * origin that is not printable ASCII without space or '+', an empty statement, a consistency
 * proof with another kind than checkpoints, certificates with checkpoints or none with headers
 * and votes, two keys with the same public key and type; DIRAUTH_ERR_BOUNDS for a part or count
 * past its bound; DIRAUTH_ERR_NOMEM. On error out is unchanged. */
int evidence_encode(const struct evidence *evidence, struct buffer *out);

/* Parses an evidence file (len bytes) into *out, whose parts then point into buf. Returns 0;
 * DIRAUTH_ERR_BOUNDS for a file over EVIDENCE_MAX_BYTES, a part over its bound or a length past
 * the end, more than EVIDENCE_KEYS_MAX keys; DIRAUTH_ERR_SYNTAX for anything else that is not
 * the grammar above, spelled as evidence_encode writes it. On error *out is zeroed. */
int evidence_parse(const uint8_t *buf, size_t len, struct evidence *out);

#endif
