/*
 * signer.h: the one narrow interface through which the authority gets anything signed.
 *
 * Callers never hand over raw bytes to sign: they say what kind of statement the text is, and
 * the signer parses the text as that kind (the first line of every dirauth document names its
 * kind, which is the purpose tag that keeps one statement from being replayed as another)
 * and refuses anything else. Today the key lives in this process (signer_open_local); the same
 * interface is what a separate signing process answers over a UNIX socket, so callers do not
 * change when the key moves out.
 */
#ifndef DIRAUTH_SIGNER_SIGNER_H
#define DIRAUTH_SIGNER_SIGNER_H

#include "note.h"

#include <stddef.h>
#include <stdint.h>

enum signer_statement {
	SIGNER_STATEMENT_RECEIPT,         /* text parses as a receipt (receipt.h) */
	SIGNER_STATEMENT_SNAPSHOT_HEADER, /* text parses as a snapshot header (snapshot.h) */
	SIGNER_STATEMENT_COUNT
};

struct signer;

/* Opens a signer holding the key in key_path (see key.h for the file rules). Returns 0,
 * or the errors of signer_key_load. */
int signer_open_local(const char *key_path, struct signer **out);

/* The verifier of the key that signs. Borrowed; lives as long as the signer. */
const struct note_verifier *signer_verifier(const struct signer *signer);

/* Signs text as a statement of kind. Returns 0; DIRAUTH_ERR_REFUSED when the text is not a valid
 * statement of that kind; DIRAUTH_ERR_UNAVAILABLE when the signer cannot be reached;
 * DIRAUTH_ERR_CRYPTO. Thread-safe. */
int signer_sign(struct signer *signer, enum signer_statement kind, const uint8_t *text, size_t len,
                struct note_signature *out);

/* Closes and wipes. Accepts NULL. */
void signer_close(struct signer *signer);

#endif
