/*
 * signer_health.h: whether dirauthd can get anything signed right now, asked cheaply and often.
 *
 * Three places need the answer: GET /v1/ready (route traffic away from an authority that cannot
 * sign), a registration before it is stored (store nothing that cannot get a receipt), and the
 * scheduler before it builds a snapshot (do not build what cannot be signed). The answer is a
 * GET_KEYS and a GET_CERTIFICATES round trip to the signer: its signing key must carry the
 * configured authority name, and the first certificate it serves must certify that key for a
 * window that contains now (a signer whose certificate lapsed refuses to sign). The answer is
 * cached for SIGNER_HEALTH_CACHE_MS so that a burst of requests costs the signer one query,
 * and every signing call reports its outcome, so a signer that just failed is known to be down at
 * once and one that just signed is known to be up.
 *
 * The cache is timed with the monotonic clock, not the injectable clock of the documents: it
 * paces queries to a process and says nothing about epochs or validity.
 */
#ifndef DIRAUTH_SERVER_SIGNING_SIGNER_HEALTH_H
#define DIRAUTH_SERVER_SIGNING_SIGNER_HEALTH_H

#include "clock/clock.h"
#include "schema/certificate.h"
#include "server/signing/signer_client.h"

#include <stddef.h>

#define SIGNER_HEALTH_CACHE_MS   1000
#define SIGNER_HEALTH_DETAIL_MAX (SIGNER_DETAIL_MAX + 2 * NOTE_NAME_MAX + 128)

struct signer_health;

/* A tracker of client (borrowed; must outlive it) for the authority named authority_name
 * (copied), judging certificate windows by clock (borrowed). Does not contact the signer.
 * Returns 0, DIRAUTH_ERR_NOMEM. */
int signer_health_create(struct signer_client *client, const char *authority_name, const struct clock *clock,
                         struct signer_health **out);

/* Frees. Accepts NULL. */
void signer_health_free(struct signer_health *health);

/* 0 when the signer answered (within the last SIGNER_HEALTH_CACHE_MS, or now) with a signing
 * key named authority_name and a first certificate for that key valid now. Otherwise
 * DIRAUTH_ERR_UNAVAILABLE (unreachable, or an answer without a signing key or certificate),
 * DIRAUTH_ERR_MISMATCH (the signing key has another name, or the certificate is for another
 * key), DIRAUTH_ERR_STALE (the certificate is not valid now, or the clock cannot be read), and
 * detail (may be NULL) gets a sentence that starts with "signer". Thread-safe. */
int signer_health_check(struct signer_health *health, char *detail, size_t detail_cap);

/* Records the outcome of a signing call made with the client: 0 marks the signer up,
 * DIRAUTH_ERR_UNAVAILABLE marks it down (detail, may be NULL, says why) until the next check
 * after SIGNER_HEALTH_CACHE_MS; a refusal says nothing about reachability and changes nothing.
 * Accepts a NULL health. Thread-safe. */
void signer_health_note(struct signer_health *health, int rc, const char *detail);

/* One certificate the signer served at the last check. */
struct signer_health_certificate {
	uint32_t signing_key_id; /* the key id of the signing key it certifies */
	uint64_t valid_until;    /* its not-after, unix seconds */
};

/* What GET /v1/metrics says of the signer. */
struct signer_health_statistics {
	int reachable; /* the signer answered (its answer may still be judged unfit: ready says) */
	int ready;     /* signer_health_check's answer is 0 */
	size_t certificate_count;
	struct signer_health_certificate certificates[CERTIFICATE_BUNDLE_MAX]; /* as served, in order */
};

/* Checks the signer (signer_health_check, so at most one query per SIGNER_HEALTH_CACHE_MS) and
 * fills out; the certificates are those of the last answer that held a bundle (none before one).
 * Thread-safe. */
void signer_health_statistics(struct signer_health *health, struct signer_health_statistics *out);

#endif
