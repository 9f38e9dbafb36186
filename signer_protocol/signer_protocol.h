/*
 * signer_protocol.h: the messages between dirauthd and dirauth-signer, as bytes.
 *
 * Pure encoding, no I/O: both ends and the fuzz target share this codec. The signer answers
 * typed requests only; there is no operation that signs raw bytes. Every message is a frame:
 * a 4-byte big-endian length (at most SIGNER_FRAME_MAX) followed by that many bytes.
 *
 * Request body:
 *   u8  version (SIGNER_PROTOCOL_VERSION)
 *   u8  operation (enum signer_operation)
 *   u64 old_size           checkpoint operations: the size of the signer's latest checkpoint
 *                          the proof starts from (0 when the signer has none); else 0
 *   u8  proof_count        ≤ MERKLE_MAX_PROOF, then proof_count * 32 bytes
 *   u32 text_len           ≤ SIGNER_TEXT_MAX, then the statement text (a note body)
 *
 * Response body:
 *   u8  version
 *   i32 result             0 or a negative dirauth_error
 *   u16 detail_len         ≤ SIGNER_DETAIL_MAX, then a human sentence (why it refused)
 *   u8  has_signature      then, if 1: u8 name_len, name, u32 key_id, u16 sig_len, sig
 *   u32 payload_len        ≤ SIGNER_PAYLOAD_MAX, then the payload (operation-specific text)
 *
 * Decoders check every length against the bytes that remain and against its bound, and refuse
 * trailing bytes.
 */
#ifndef DIRAUTH_SIGNER_PROTOCOL_SIGNER_PROTOCOL_H
#define DIRAUTH_SIGNER_PROTOCOL_SIGNER_PROTOCOL_H

#include "base/buffer.h"
#include "crypto/merkle.h"
#include "schema/note.h"

#include <stddef.h>
#include <stdint.h>

#define SIGNER_PROTOCOL_VERSION 1
#define SIGNER_TEXT_MAX         8192
#define SIGNER_DETAIL_MAX       512
#define SIGNER_PAYLOAD_MAX      (256 * 1024)
#define SIGNER_FRAME_MAX        (SIGNER_PAYLOAD_MAX + 4096)

enum signer_operation {
	SIGNER_OP_SIGN_RECEIPT = 1,         /* text: receipt (receipt.h); signing key */
	SIGNER_OP_SIGN_VOTE = 2,            /* text: vote (vote.h); signing key; one per (origin, epoch) */
	SIGNER_OP_SIGN_SNAPSHOT_HEADER = 3, /* text: snapshot header; signing key; one per (origin, epoch) */
	SIGNER_OP_SIGN_CHECKPOINT = 4,      /* text: checkpoint; log key; consistent with the last signed */
	SIGNER_OP_COSIGN_CHECKPOINT =
	    5,                  /* text: checkpoint; cosignature key; consistent with the last cosigned */
	SIGNER_OP_GET_KEYS = 6, /* no text; payload: "signing-key <vkey>\n" ["log-key <vkey>\n"]
	                           ["cosignature-key <vkey>\n"] */
	SIGNER_OP_GET_CERTIFICATES = 7, /* no text; payload: a certificate bundle (certificate.h) */
	SIGNER_OP_CHECKPOINT_STATE = 8, /* text: an origin; payload: ["signed <size> <root b64>\n"]
	                                   ["cosigned <size> <root b64>\n"] */
	SIGNER_OP_SIGN_DEREGISTRATION_RECEIPT = 9, /* text: deregistration receipt
	                                              (deregistration_receipt.h); signing key */
};

/* What an operation is, as both ends of the socket must agree on it: the one table of the
 * protocol's operations (signer_protocol.c). An operation either signs (the answer carries a
 * signature and no payload) or queries (a payload and no signature); the signer's own table of
 * keys, ledger rules and time checks (signer/service_operations.c) has a row for exactly the operations
 * that sign, and refuses to start otherwise. */
enum signer_operation_kind {
	SIGNER_OPERATION_SIGNS,   /* answered with a signature */
	SIGNER_OPERATION_QUERIES, /* answered with a payload; changes nothing */
};

struct signer_operation_info {
	enum signer_operation operation;
	const char *name; /* stable lower-case word, e.g. "snapshot-header" (the signer's audit log) */
	enum signer_operation_kind kind;
	int takes_text;  /* 0: text_len must be 0 */
	int takes_proof; /* 0: old_size and proof_count must be 0 */
};

/* The row of operation, or NULL when the protocol has no such operation (any value outside the
 * table, negative or above 255 included). Static storage. */
const struct signer_operation_info *signer_operation_find(int operation);

/* 1 when operation is known and signs (SIGN_RECEIPT .. COSIGN_CHECKPOINT,
 * SIGN_DEREGISTRATION_RECEIPT), else 0. */
int signer_operation_signs(int operation);

/* 1 when operation is known and only queries (GET_KEYS, GET_CERTIFICATES, CHECKPOINT_STATE),
 * else 0. */
int signer_operation_is_query(int operation);

struct signer_request {
	uint8_t operation;
	uint64_t old_size;
	size_t proof_count;
	merkle_hash proof[MERKLE_MAX_PROOF];
	const uint8_t *text; /* borrowed */
	size_t text_len;
};

struct signer_response {
	int32_t result;
	char detail[SIGNER_DETAIL_MAX + 1];
	int has_signature;
	struct note_signature signature;
	const uint8_t *payload; /* borrowed */
	size_t payload_len;
};

/* Appends the whole frame (length prefix and body). Returns 0, DIRAUTH_ERR_BOUNDS, NOMEM. */
int signer_request_encode(const struct signer_request *request, struct buffer *frame);
int signer_response_encode(const struct signer_response *response, struct buffer *frame);

/* Reads the 4-byte length prefix; DIRAUTH_ERR_BOUNDS if it exceeds SIGNER_FRAME_MAX. */
int signer_frame_length(const uint8_t prefix[4], size_t *body_len);

/* Decode a frame body (without its prefix). Pointers in *out borrow from body. Returns 0,
 * DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_BOUNDS. */
int signer_request_decode(const uint8_t *body, size_t len, struct signer_request *out);
int signer_response_decode(const uint8_t *body, size_t len, struct signer_response *out);

#endif
