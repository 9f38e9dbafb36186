/*
 * publish.h: building, signing and storing one namespace's snapshot for one epoch.
 *
 * A snapshot is built from the store alone: the latest registration of every service of the
 * namespace that is still unexpired at the epoch's valid-after, sorted by service id (the
 * store walks them in that order), each carried as its provider's signed note (hard rule 1).
 * The body is encoded, bounded (record count, uncompressed size, compressed sizes), compressed
 * once per content encoding, committed to by the header (records root, body digest, the
 * previous header's digest), signed by dirauth-signer (which keeps its own record of the one
 * header it signed per origin and epoch), and stored durably before anyone may serve it. A
 * snapshot that breaks a bound, or whose header the signer does not sign, is not published at
 * all.
 */
#ifndef DIRAUTH_SERVER_PUBLISH_PUBLISH_H
#define DIRAUTH_SERVER_PUBLISH_PUBLISH_H

#include "schema/buffer.h"
#include "schema/compress.h"
#include "server/config/config.h"
#include "server/signing/signer_client.h"
#include "schema/snapshot.h"
#include "server/store/store.h"

#include <stddef.h>
#include <stdint.h>

/* A snapshot ready to serve: the signed header note and the body in every content encoding
 * (encoded[ENCODING_IDENTITY] is the uncompressed body). Owns its buffers. */
struct publication {
	char namespace_name[NAMESPACE_NAME_MAX + 1];
	struct snapshot_header header;
	struct buffer header_note;
	struct buffer encoded[ENCODING_COUNT];
};

/* Frees the buffers and zeroes p. Accepts NULL. */
void publication_clear(struct publication *p);

/* Compresses p->encoded[ENCODING_IDENTITY] into the other encodings and checks the size bounds
 * of config (uncompressed, and each compressed form). Returns 0, DIRAUTH_ERR_BOUNDS,
 * DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_INTERNAL. */
int publish_encode_body(const struct config *config, struct publication *p);

/* Builds the snapshot of config->namespaces[namespace_index] for epoch, has the signer sign its
 * header (SIGNER_OP_SIGN_SNAPSHOT_HEADER), and stores it (durable on return). On success *out is
 * filled (the caller clears it). Returns 0; DIRAUTH_ERR_ROLLBACK when epoch is not above the
 * namespace's latest stored epoch; DIRAUTH_ERR_BOUNDS when more records than
 * records_per_snapshot are eligible or the body breaks a size bound; DIRAUTH_ERR_UNAVAILABLE when
 * the signer cannot be reached, or its refusal code; the errors of the store and the encoders.
 * detail (may be NULL) gets the signer's sentence when the signer failed or refused, else "".
 * Nothing is stored unless 0 is returned. */
int publish_snapshot(const struct config *config, struct store *store, struct signer_client *signer,
                     size_t namespace_index, uint64_t epoch, struct publication *out, char *detail,
                     size_t detail_cap);

#endif
