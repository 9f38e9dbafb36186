/*
 * consistency.h: a consistency proof as text, the body of dirauthd's
 * GET /v1/<namespace>/log/consistency/<old>/<new> and the form of the proof lines of the
 * c2sp.org/tlog-witness add-checkpoint body: one line per hash, standard padded base64 of its 32
 * bytes, each ending in '\n', in the order of the RFC 9162 §2.1.4 proof, nothing else. An empty
 * proof (from the empty tree, or between equal sizes) is the empty text.
 *
 *   <44 characters of base64>\n        0..MERKLE_MAX_PROOF lines
 *
 * The parser accepts exactly what tlog_consistency_encode writes. Whether the proof is right for
 * two trees is merkle_consistency_verify's question (crypto/merkle.h).
 */
#ifndef DIRAUTH_TLOG_CONSISTENCY_H
#define DIRAUTH_TLOG_CONSISTENCY_H

#include "base/buffer.h"
#include "crypto/merkle.h"

#include <stddef.h>
#include <stdint.h>

#define TLOG_CONSISTENCY_LINE_BYTES 45 /* 44 characters of base64 and '\n' */
#define TLOG_CONSISTENCY_MAX_BYTES  (MERKLE_MAX_PROOF * TLOG_CONSISTENCY_LINE_BYTES)

/* Appends the text of proof (proof_len ≤ MERKLE_MAX_PROOF hashes) to out. Returns 0,
 * DIRAUTH_ERR_BOUNDS for a proof too long, DIRAUTH_ERR_NOMEM. On error out is unchanged. */
int tlog_consistency_encode(const merkle_hash *proof, size_t proof_len, struct buffer *out);

/* Parses the text of a proof (len bytes) into proof (room for MERKLE_MAX_PROOF hashes);
 * *proof_len gets the number of hashes. Returns 0; DIRAUTH_ERR_BOUNDS for more than
 * TLOG_CONSISTENCY_MAX_BYTES bytes; DIRAUTH_ERR_SYNTAX for a line that is not 44 characters of
 * canonical base64 of 32 bytes, a missing final '\n' or any other byte. On error *proof_len is 0. */
int tlog_consistency_parse(const uint8_t *buf, size_t len, merkle_hash proof[MERKLE_MAX_PROOF],
                           size_t *proof_len);

#endif
