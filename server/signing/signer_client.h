/*
 * signer_client.h: dirauthd's side of the signer socket: the one narrow interface through
 * which the authority gets anything signed. dirauthd holds no private key: it sends a typed
 * statement and receives a signature line, or a refusal with its reason.
 *
 * The socket must be a socket of mode 0600 (no group or other bit): one that others could
 * bind or write to is refused as unavailable, with a sentence saying so.
 *
 * Synchronous calls share one connection, opened lazily and reopened after any failure,
 * serialised by a mutex and bounded by a timeout. Asynchronous signatures (receipts) are served
 * by worker threads with a connection each, in pipelined batches. When the signer cannot be
 * reached a call returns (or reports) DIRAUTH_ERR_UNAVAILABLE: dirauthd then keeps serving reads
 * and refuses to publish.
 */
#ifndef DIRAUTH_SERVER_SIGNING_SIGNER_CLIENT_H
#define DIRAUTH_SERVER_SIGNING_SIGNER_CLIENT_H

#include "base/buffer.h"
#include "crypto/merkle.h"
#include "schema/note.h"
#include "signer_protocol/signer_protocol.h"

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

/* The workers signer_client_sign_async starts by itself at its first call, unless
 * signer_client_start_workers started others. */
#define SIGNER_CLIENT_WORKERS 2
#define SIGNER_CLIENT_BATCH   256
#define SIGNER_CLIENT_QUEUE   65536

/* Starts workers threads serving signer_client_sign_async, each with its own connection, taking
 * up to max_batch queued requests at a time; at most max_queued may wait. Call at most once,
 * before the first signer_client_sign_async. Returns 0, DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_INTERNAL
 * (workers already started, a zero argument, a thread that did not start). signer_client_close
 * stops them after the queue is served. */
int signer_client_start_workers(struct signer_client *client, unsigned workers, size_t max_batch,
                                size_t max_queued);

/* Called once with the outcome of an asynchronous signature, from a worker thread: 0 with
 * *signature, the signer's refusal code, or DIRAUTH_ERR_UNAVAILABLE; detail is a sentence for a
 * failure ("" otherwise). Both pointers are borrowed for the call. */
typedef void (*signer_client_done)(void *context, int rc, const struct note_signature *signature,
                                   const char *detail);

/* Queues a signature on text (copied) of operation, a signing operation that needs no proof
 * (receipts, votes, headers). Returns 0 when queued (done will be called), or without calling
 * done: DIRAUTH_ERR_REFUSED (another operation), DIRAUTH_ERR_BOUNDS (text over SIGNER_TEXT_MAX),
 * DIRAUTH_ERR_FULL (max_queued wait already), DIRAUTH_ERR_UNAVAILABLE (no workers, or closing),
 * DIRAUTH_ERR_NOMEM. */
int signer_client_sign_async(struct signer_client *client, enum signer_operation operation,
                             const uint8_t *text, size_t len, signer_client_done done, void *context);

/* GET_KEYS, GET_CERTIFICATES or CHECKPOINT_STATE: the payload is appended to out. */
int signer_client_query(struct signer_client *client, enum signer_operation operation, const uint8_t *text,
                        size_t len, struct buffer *out, char *detail, size_t detail_cap);

#endif
