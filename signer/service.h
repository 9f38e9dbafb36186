/*
 * service.h: the signer's decision for one request: check the statement is what its
 * operation says, check and record it in the ledger, sign, write the audit line.
 *
 * This is the whole policy of dirauth-signer and holds no socket code (listener.h carries the
 * bytes), so tests drive it directly and through the socket alike. A request is refused,
 * with a detail sentence, when:
 *   - its text does not parse as its operation's statement (DIRAUTH_ERR_REFUSED);
 *   - a receipt or vote names another authority, a checkpoint's origin is not the log key's
 *     name (DIRAUTH_ERR_REFUSED);
 *   - the signing key's certificate is not valid now (DIRAUTH_ERR_STALE);
 *   - a statement's own time (a header's valid-after, a receipt's accepted-at) is more than the
 *     clock skew from now, or before the certificate (DIRAUTH_ERR_STALE); an epoch is larger
 *     than its statement's unix time (DIRAUTH_ERR_REFUSED);
 *   - a checkpoint carries extension lines (DIRAUTH_ERR_REFUSED);
 *   - the ledger refuses (rollback, equivocation, inconsistent or mismatched checkpoint);
 *   - the key the operation needs is not configured (DIRAUTH_ERR_UNAVAILABLE).
 * The ledger record is durable before the signature is returned.
 */
#ifndef DIRAUTH_SIGNER_SERVICE_H
#define DIRAUTH_SIGNER_SERVICE_H

#include "schema/signer_protocol.h"

#include <stdint.h>
#include <stdio.h>

struct signer_service;

struct signer_service_options {
	const char *authority;        /* authority name: the signing key's name */
	const char *signing_key_path; /* Ed25519 key file, 0600 in a 0700 directory */
	const char *const
	    *certificate_paths; /* signed certificate notes; the first certifies the signing key */
	size_t certificate_count;
	const char *log_key_path;         /* may be NULL */
	const char *cosignature_key_path; /* may be NULL */
	const char *ledger_directory;
	FILE *audit;                    /* one line per signature; borrowed; NULL: no audit */
	uint64_t (*now)(void *context); /* injectable clock */
	void *now_context;
	uint64_t clock_skew_seconds; /* how far a statement's own time may be from now; 0: 300 s */
};

/* Loads the keys and certificates, checks them (file and directory modes, the certificate
 * certifies the signing key, is signed by its identity, and is valid now), opens the ledger.
 * Returns 0, DIRAUTH_ERR_PERMISSION, DIRAUTH_ERR_STALE (certificate not valid now),
 * DIRAUTH_ERR_MISMATCH (certificate for another key), DIRAUTH_ERR_CONFIG, and the errors of
 * key and ledger loading. detail (may be NULL) gets a sentence naming the file at fault. */
int signer_service_open(const struct signer_service_options *options, struct signer_service **out,
                        char *detail, size_t detail_cap);
void signer_service_close(struct signer_service *service);

/* Answers one request. *response's payload points into payload_storage (reset by the call).
 * Always fills response (result 0 or the refusal); returns the same result. Not thread-safe:
 * the listener serialises requests. */
int signer_service_handle(struct signer_service *service, const struct signer_request *request,
                          struct signer_response *response, struct buffer *payload_storage);

#endif
