/*
 * service.h: the signer's decision for one request: check the statement is what its
 * operation says, check and record it in the ledger, sign, write the audit line.
 *
 * This is the whole policy of dirauth-signer and holds no socket code (listener.h carries the
 * bytes), so tests drive it directly and through the socket alike. Each operation is one row of
 * a table in service_operations.c that names its key, whose statement it is (a configured namespace or
 * origin, the log key's own log, any log), its time checks, its ledger rule and whether its
 * audit line is fsynced; every request goes through the same steps in the same order, driven
 * by its row. A request is refused, with a detail sentence, when:
 *   - the signer's clock cannot be read (every signing operation; DIRAUTH_ERR_UNAVAILABLE);
 *   - its text does not parse as its operation's statement (DIRAUTH_ERR_REFUSED);
 *   - a receipt or vote names another authority, a checkpoint's origin is not the log key's
 *     name (DIRAUTH_ERR_REFUSED);
 *   - a receipt's namespace, or a vote's or header's origin, is not a namespace of the
 *     configuration, or the statement's namespace is not the one configured for its origin
 *     (DIRAUTH_ERR_REFUSED);
 *   - the signing key's certificate is not valid now (DIRAUTH_ERR_STALE);
 *   - a statement's own time (a header's valid-after, a receipt's accepted-at) is more than the
 *     clock skew after now, before the certificate, or (a receipt's) more than the skew before
 *     now (DIRAUTH_ERR_STALE);
 *   - a vote's or header's epoch is not a current epoch of its origin's schedule: one that
 *     contains a moment within the clock skew of now (DIRAUTH_ERR_STALE, "has not begun" or
 *     "is over");
 *   - a header's valid-after, fresh-until and valid-until are not its epoch's by the schedule
 *     (DIRAUTH_ERR_MISMATCH);
 *   - a receipt promises an epoch more than SIGNER_RECEIPT_EPOCHS_AHEAD past the current one
 *     (DIRAUTH_ERR_STALE);
 *   - a checkpoint of a configured origin has more entries than that origin's epochs begun by
 *     now plus the skew (its log gets at most one entry per epoch; DIRAUTH_ERR_STALE);
 *   - a checkpoint carries extension lines (DIRAUTH_ERR_REFUSED);
 *   - the ledger refuses (rollback, equivocation, inconsistent or mismatched checkpoint);
 *   - the key the operation needs is not configured (DIRAUTH_ERR_UNAVAILABLE).
 * The ledger record is durable before the signature is returned.
 */
#ifndef DIRAUTH_SIGNER_SERVICE_H
#define DIRAUTH_SIGNER_SERVICE_H

#include "schema/names.h"
#include "schema/registration.h"
#include "schedule/schedule.h"
#include "signer_protocol/signer_protocol.h"

#include <stdint.h>
#include <stdio.h>

#define SIGNER_SERVICE_MAX_NAMESPACES 64
#define SIGNER_RECEIPT_EPOCHS_AHEAD   3 /* how far past the current epoch a receipt may promise */
/* Logs no configured namespace names whose checkpoints the signer records (cosigns) at most: the
 * ledger never forgets a log, so a dirauthd that asks for ever more origins is refused there. */
#define SIGNER_OTHER_LOGS_MAX         4096

struct signer_service;

/* A namespace the signer signs for, and its epoch schedule: the same as dirauthd's (its
 * namespaces and epoch section), written in the signer's own configuration so that a
 * compromised dirauthd cannot choose the epochs the signer believes in. */
struct signer_namespace {
	char name[NAMESPACE_NAME_MAX + 1]; /* the namespace's name, as receipts name it */
	char origin[NAMES_ORIGIN_MAX + 1]; /* its log origin, as votes, headers, checkpoints name it */
	struct epoch_schedule schedule;
};

/* The signer's clock: 0 with *now the unix time, or a negative dirauth_error when the clock
 * cannot be read (every signing request is then refused). Called from several threads. */
typedef int (*signer_clock_fn)(void *context, uint64_t *now);

struct signer_service_options {
	const char *authority;        /* authority name: the signing key's name */
	const char *signing_key_path; /* Ed25519 key file, 0600 in a 0700 directory */
	const char *const
	    *certificate_paths; /* signed certificate notes; the first certifies the signing key */
	size_t certificate_count;
	const char *log_key_path;         /* may be NULL; its name must be a namespace's origin */
	const char *cosignature_key_path; /* may be NULL */
	const char *ledger_directory;
	const struct signer_namespace *namespaces; /* 1..SIGNER_SERVICE_MAX_NAMESPACES; copied */
	size_t namespace_count;
	FILE *audit;         /* one log line (logline.h) per signature and refusal; borrowed; NULL: none */
	signer_clock_fn now; /* injectable clock */
	void *now_context;
	uint64_t clock_skew_seconds; /* how far a statement's own time may be from now; 0: 300 s */
};

/* Loads the keys and certificates, checks them (file and directory modes, the certificate
 * certifies the signing key, is signed by its identity, and is valid now), checks the
 * namespaces (valid names and origins, none twice, schedules in range: schedule_check), opens
 * the ledger. Returns 0, DIRAUTH_ERR_PERMISSION, DIRAUTH_ERR_STALE (certificate not valid now),
 * DIRAUTH_ERR_MISMATCH (certificate for another key), DIRAUTH_ERR_CONFIG (also: the clock cannot
 * be read, a namespace is invalid, the log key's name is no namespace's origin),
 * DIRAUTH_ERR_INTERNAL (the operation table disagrees with the protocol's), and the errors of
 * key and ledger loading. detail (may be NULL) gets a sentence naming the file at fault. */
int signer_service_open(const struct signer_service_options *options, struct signer_service **out,
                        char *detail, size_t detail_cap);
void signer_service_close(struct signer_service *service);

/* Answers one request. *response's payload points into payload_storage (reset by the call).
 * Always fills response (result 0 or the refusal); returns the same result. Thread-safe: the
 * listener calls it from one thread per connection; the ledger's check-and-record runs under
 * one lock, so of two concurrent requests for one (origin, epoch) at most one statement is
 * signed, and audit lines are written whole. */
int signer_service_handle(struct signer_service *service, const struct signer_request *request,
                          struct signer_response *response, struct buffer *payload_storage);

#endif
