/*
 * witness.h: this authority as a witness of its namespaces' logs (c2sp.org/tlog-witness), and
 * the add-checkpoint request that both sides of the protocol speak.
 *
 * Every authority of a set builds the same tree of each namespace (leaf i is the i-th published
 * header's text) and signs its own checkpoints with its own log key, named by the origin
 * (tlog/tlog.md, "Checkpoints of several authorities"). So one origin has as many log keys as
 * authorities keep its log, and a witness keeps one tree head per origin, whichever of them
 * signed: the spec's "public key(s) it trusts for the checkpoint origin". The keys it trusts are
 * the members' log_key of the configuration (pinned, like identities) and its own signer's.
 *
 * The request body (POST <prefix>/add-checkpoint, the prefix of a namespace's log being
 * /v1/<namespace>/log):
 *
 *   old <size>\n                        canonical decimal, "0" when the client knows none
 *   <base64 of a 32-byte hash>\n        0..TRANSLOG_ADD_CHECKPOINT_PROOF_MAX lines: the RFC 6962
 *                                       consistency proof from the old size to the checkpoint's
 *   \n
 *   <the checkpoint note>               text (schema/checkpoint.h), blank line, signature lines
 *
 * at most TRANSLOG_ADD_CHECKPOINT_MAX bytes in all. The parser accepts exactly what
 * translog_add_checkpoint_encode writes: no '\r', padded canonical base64, the note in its one
 * spelling (schema/note.h) with at least one signature, its text a checkpoint.
 *
 * The witness answers exactly as the spec says, in its order of checks:
 *   404  the checkpoint's origin is not the namespace's, or no log key is known for it;
 *   403  no signature by a known log key verifies (or one by a known key fails);
 *   400  a body that does not parse, or an old size above the checkpoint's;
 *   409  the old size is not the size of the tree head it cosigned last (answer: that size and
 *        '\n', as text/x.tlog.size), or it is, and so is the checkpoint's, with another root;
 *   422  the consistency proof does not verify, or the signer refuses the tree head as
 *        inconsistent with what it signed or cosigned;
 *   200  the cosignature line of this authority's cosignature key (c2sp.org/tlog-cosignature,
 *        dated by its signer), after the new tree head was recorded.
 * and 413 (the HTTP layer, before the body is read), 503 when the signer cannot be reached.
 * Refusals change nothing. A known log's checkpoint refused 409 for a root, or 422, is logged
 * with its sizes and roots: it may be evidence of a fork.
 *
 * The tree head it cosigned last is kept in the store (store_log_witnessed) and, because the
 * signer cosigns nothing inconsistent with what it signed or cosigned (one tree per origin for
 * both keys: signer/ledger.h), it is also the signer's latest tree head of the origin: the larger
 * of the two is the witness's state (the signer's is ahead after a crash between cosigning and
 * recording, or when this authority's own log signed a larger tree). Judging, cosigning and
 * recording one request is one step under a lock, so two requests can never both move the head
 * from the same size.
 */
#ifndef DIRAUTH_SERVER_TLOG_WITNESS_H
#define DIRAUTH_SERVER_TLOG_WITNESS_H

#include "clock/clock.h"
#include "base/buffer.h"
#include "schema/checkpoint.h"
#include "crypto/merkle.h"
#include "schema/note.h"
#include "server/config/config.h"
#include "server/signing/signer_client.h"
#include "server/store/store.h"

#include <stdio.h>

#define TRANSLOG_ADD_CHECKPOINT_MAX       (64 * 1024) /* bytes of a request body */
#define TRANSLOG_ADD_CHECKPOINT_PROOF_MAX 63          /* proof lines: the spec's bound */
#define TRANSLOG_SIZE_CONTENT_TYPE        "text/x.tlog.size"

/* A parsed add-checkpoint request. */
struct translog_add_checkpoint {
	uint64_t old_size;
	size_t proof_count;
	merkle_hash proof[TRANSLOG_ADD_CHECKPOINT_PROOF_MAX];
	const uint8_t *note_bytes; /* borrowed from the body: the checkpoint note as sent */
	size_t note_len;
	struct note *note;            /* owned: note_bytes parsed */
	struct checkpoint checkpoint; /* its text parsed */
};

/* Parses a request body. Returns 0 with *out filled (free with translog_add_checkpoint_free);
 * DIRAUTH_ERR_BOUNDS for a body over TRANSLOG_ADD_CHECKPOINT_MAX or more than
 * TRANSLOG_ADD_CHECKPOINT_PROOF_MAX proof lines; DIRAUTH_ERR_SYNTAX for anything else than the
 * grammar above; DIRAUTH_ERR_NOMEM. On error out holds nothing to free. */
int translog_add_checkpoint_parse(const uint8_t *body, size_t len, struct translog_add_checkpoint *out);

/* Frees what a parsed request owns. Accepts NULL. */
void translog_add_checkpoint_free(struct translog_add_checkpoint *request);

/* Appends a request body to out. Returns 0; DIRAUTH_ERR_BOUNDS for more than
 * TRANSLOG_ADD_CHECKPOINT_PROOF_MAX hashes or a body over TRANSLOG_ADD_CHECKPOINT_MAX;
 * DIRAUTH_ERR_SYNTAX when note is not a checkpoint note in its one spelling; DIRAUTH_ERR_NOMEM.
 * On error out is unchanged. */
int translog_add_checkpoint_encode(uint64_t old_size, const merkle_hash *proof, size_t proof_count,
                                   const uint8_t *note, size_t note_len, struct buffer *out);

/* Appends the note signature line of signature ("— <name> <base64(key id || bytes)>\n"), as a
 * witness answers it. Returns 0, DIRAUTH_ERR_SYNTAX (a name that cannot stand in a line),
 * DIRAUTH_ERR_NOMEM. */
int translog_signature_line(const struct note_signature *signature, struct buffer *out);

/* ---- the witness ---- */

struct translog_witness_options {
	const struct config *config;
	struct store *store;
	struct signer_client *signer;
	FILE *log;                 /* refusals that may be evidence (logline.h); NULL: stderr */
	const struct clock *clock; /* their epoch, the current one; NULL: "epoch -" */
};

struct translog_witness;

/* A witness over options (borrowed: they must outlive it). Returns 0, DIRAUTH_ERR_INTERNAL (an
 * option missing), DIRAUTH_ERR_NOMEM. */
int translog_witness_new(const struct translog_witness_options *options, struct translog_witness **out);

/* Frees a witness. Accepts NULL. No request may be running on it. */
void translog_witness_free(struct translog_witness *witness);

/* What a request gets. */
enum translog_witness_outcome {
	TRANSLOG_WITNESS_COSIGNED = 0,  /* 200: body holds the cosignature line */
	TRANSLOG_WITNESS_BAD_REQUEST,   /* 400 */
	TRANSLOG_WITNESS_BAD_SIGNATURE, /* 403 */
	TRANSLOG_WITNESS_UNKNOWN_LOG,   /* 404 */
	TRANSLOG_WITNESS_CONFLICT,      /* 409: body holds "<size>\n" */
	TRANSLOG_WITNESS_TOO_LARGE,     /* 413 */
	TRANSLOG_WITNESS_INCONSISTENT,  /* 422 */
	TRANSLOG_WITNESS_UNAVAILABLE,   /* 503: the signer cannot be reached or has no cosignature key */
	TRANSLOG_WITNESS_FAILED,        /* 500: the store failed, or a signature that does not verify */
};

struct translog_witness_answer {
	enum translog_witness_outcome outcome;
	unsigned status;                      /* the HTTP status of the outcome */
	uint64_t size;                        /* CONFLICT: the size of the tree head cosigned last */
	struct buffer body;                   /* owned: COSIGNED and CONFLICT answers, else empty */
	char detail[SIGNER_DETAIL_MAX + 128]; /* a sentence for every outcome but COSIGNED */
};

void translog_witness_answer_init(struct translog_witness_answer *answer);
void translog_witness_answer_free(struct translog_witness_answer *answer);

/*
 * Judges an add-checkpoint request (body, len bytes) for the log of
 * config->namespaces[namespace_index] and fills answer (initialised) with its outcome (see
 * above). Safe from any thread; requests are judged one at a time. Returns 0 whatever the
 * outcome, or DIRAUTH_ERR_INTERNAL for a namespace index out of range or a missing argument.
 */
int translog_witness_add_checkpoint(struct translog_witness *witness, size_t namespace_index,
                                    const uint8_t *body, size_t len, struct translog_witness_answer *answer);

#endif
