/*
 * signer_client.h: dirauthd's side of the signer socket: the one narrow interface through
 * which the authority gets anything signed. dirauthd holds no private key: it sends a typed
 * statement and receives a signature line, or a refusal with its reason.
 *
 * The socket must be a socket of mode 0600 (no group or other bit): one that others could
 * bind or write to is refused as unavailable, with a sentence saying so.
 *
 * One connection, opened lazily and reopened after any failure; calls are serialised by a
 * mutex and bounded by a timeout. When the signer cannot be reached a call returns
 * DIRAUTH_ERR_UNAVAILABLE: dirauthd then keeps serving reads and refuses to publish.
 */
#ifndef DIRAUTH_SERVER_SIGNING_SIGNER_CLIENT_H
#define DIRAUTH_SERVER_SIGNING_SIGNER_CLIENT_H

#include "schema/buffer.h"
#include "schema/merkle.h"
#include "schema/note.h"
#include "schema/signer_protocol.h"

#include <stddef.h>
#include <stdint.h>

struct signer_client;

/* Never connects here. Returns 0 or DIRAUTH_ERR_NOMEM. */
int signer_client_open(const char *socket_path, int timeout_ms, struct signer_client **out);
void signer_client_close(struct signer_client *client);

/* Asks for a signature on text of operation (a SIGN_ or COSIGN_ operation); for checkpoint
 * operations old_size and proof prove consistency with the signer's latest. Returns 0 with
 * *signature filled, the signer's refusal code (detail gets its sentence), or
 * DIRAUTH_ERR_UNAVAILABLE. */
int signer_client_sign(struct signer_client *client, enum signer_operation operation, const uint8_t *text,
                       size_t len, uint64_t old_size, const merkle_hash *proof, size_t proof_count,
                       struct note_signature *signature, char *detail, size_t detail_cap);

/* GET_KEYS, GET_CERTIFICATES or CHECKPOINT_STATE: the payload is appended to out. */
int signer_client_query(struct signer_client *client, enum signer_operation operation, const uint8_t *text,
                        size_t len, struct buffer *out, char *detail, size_t detail_cap);

#endif
