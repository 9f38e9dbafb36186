/*
 * signer.c: the narrow signing interface, with the key held in this process.
 *
 * This file is a seam. Everything in the authority that needs a signature goes through
 * signer_sign() and names the kind of statement it wants signed; nothing outside signer/ ever
 * sees the private key or a function that signs arbitrary bytes. Today the key lives here, in
 * the caller's process, behind a mutex. Later a separate signing process (dirauth-signer) holds
 * the key and answers the same typed requests over a UNIX socket, as GNU Taler's signing helper
 * does for its exchange; then this file's implementation becomes the client side of that socket
 * (and DIRAUTH_ERR_UNAVAILABLE means the process could not be reached), while every caller stays
 * as it is. That is why the interface carries a statement kind instead of raw bytes, and why
 * even the in-process version checks the text instead of trusting the caller: the check has to
 * live on the key's side of the boundary once there is one, so it lives there from the start.
 *
 * The check is the purpose tag. Every dirauth document's first line names its kind, and the text
 * must parse, canonically, as the kind the caller named; a receipt must also name this signer's
 * key as its authority. So a compromised or buggy caller can get receipts and snapshot headers
 * signed, but cannot get a registration, a vote or arbitrary text signed with the authority key,
 * nor one kind passed off as another. The separate process adds what needs durable state (never
 * two different headers for one origin and epoch; see DESIGN.md, hard rule 3), which this
 * in-process signer does not keep.
 */
#include "signer.h"

#include "error.h"
#include "key.h"
#include "receipt.h"
#include "snapshot.h"

#include <openssl/crypto.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct signer {
	struct signer_key *key;
	pthread_mutex_t lock; /* serialises use of the key: one signature at a time */
};

int signer_open_local(const char *key_path, struct signer **out)
{
	int rc;
	struct signer *signer;

	*out = NULL;
	signer = calloc(1, sizeof(*signer));
	if (!signer)
		return DIRAUTH_ERR_NOMEM;
	if (pthread_mutex_init(&signer->lock, NULL) != 0) {
		free(signer);
		return DIRAUTH_ERR_NOMEM;
	}
	rc = signer_key_load(key_path, &signer->key);
	if (rc != 0) {
		signer_close(signer);
		return rc;
	}
	*out = signer;
	return 0;
}

const struct note_verifier *signer_verifier(const struct signer *signer)
{
	return signer_key_verifier(signer->key);
}

/* Returns 0 when text is a valid statement of kind that this signer may sign, else
 * DIRAUTH_ERR_REFUSED. Bounds are checked before the parsers see the text. */
static int statement_check(const struct signer *signer, enum signer_statement kind, const uint8_t *text,
                           size_t len)
{
	switch (kind) {
	case SIGNER_STATEMENT_RECEIPT: {
		struct receipt receipt;
		if (len > RECEIPT_MAX_BYTES || receipt_parse(text, len, &receipt) != 0)
			return DIRAUTH_ERR_REFUSED;
		/* A receipt is this authority's promise: it must say so. */
		if (strcmp(receipt.authority, signer_key_verifier(signer->key)->name) != 0)
			return DIRAUTH_ERR_REFUSED;
		return 0;
	}
	case SIGNER_STATEMENT_SNAPSHOT_HEADER: {
		struct snapshot_header header;
		if (len > SNAPSHOT_HEADER_MAX_BYTES || snapshot_header_parse(text, len, &header) != 0)
			return DIRAUTH_ERR_REFUSED;
		return 0;
	}
	case SIGNER_STATEMENT_COUNT:
		break;
	}
	return DIRAUTH_ERR_REFUSED;
}

int signer_sign(struct signer *signer, enum signer_statement kind, const uint8_t *text, size_t len,
                struct note_signature *out)
{
	int rc;

	memset(out, 0, sizeof(*out));
	if (!text)
		return DIRAUTH_ERR_REFUSED;
	rc = statement_check(signer, kind, text, len);
	if (rc != 0)
		return rc;
	/* A mutex that cannot be taken means the key cannot be used now: the caller sees the same
	 * answer it will get when the signing process is out of reach. */
	if (pthread_mutex_lock(&signer->lock) != 0)
		return DIRAUTH_ERR_UNAVAILABLE;
	rc = signer_key_sign(signer->key, text, len, out);
	pthread_mutex_unlock(&signer->lock);
	return rc;
}

void signer_close(struct signer *signer)
{
	if (!signer)
		return;
	signer_key_free(signer->key);
	pthread_mutex_destroy(&signer->lock);
	OPENSSL_cleanse(signer, sizeof(*signer));
	free(signer);
}
