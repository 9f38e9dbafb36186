/*
 * service_audit.c: the signing service's audit log: one line (logline.h) for every signature and
 * every refusal of a signing request.
 *
 * A signature leaves only after its line is written and flushed, and, for every statement the
 * ledger guards, fsynced when the log is a file: an operator can then account for every
 * signature the signer ever returned. A line names the request's operation, origin, epoch and
 * tree size, and what was signed by its SHA-256 and the key's name and id; it never holds a
 * secret. Lines are written whole under the audit lock, so threads never interleave them.
 */
#include "signer/service_internal.h"

#include "logline/logline.h"
#include "crypto/crypto.h"
#include "base/error.h"

#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Writes the audit buffer out to the system and, when durable and the log is a file, to disk. */
static int service_audit_flush(FILE *audit, bool durable)
{
	struct stat st;
	int fd;

	if (fflush(audit) != 0)
		return DIRAUTH_ERR_IO;
	fd = fileno(audit);
	if (durable && fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && fsync(fd) != 0)
		return DIRAUTH_ERR_IO;
	return 0;
}

/* The audit line's sentence up to its outcome, "<time> <verb> <operation> origin=.. epoch=..",
 * into out: the time is the one the request was judged at, "-" when the clock failed. */
static void service_audit_subject(const struct service_request_state *state, const char *verb, char *out,
                                  size_t size)
{
	char now[24] = "-", epoch[24] = "-";
	if (state->has_now)
		snprintf(now, sizeof now, "%llu", (unsigned long long)state->now);
	if (state->has_epoch)
		snprintf(epoch, sizeof epoch, "%llu", (unsigned long long)state->epoch);
	snprintf(out, size, "%s %s %s origin=%s epoch=%s", now, verb, state->operation,
	         state->origin[0] ? state->origin : "-", epoch);
}

/* Writes an audit line (logline.h: the real time, the request's epoch, "dirauth-signer: ", then
 * subject and outcome) and makes it durable when asked. Returns 0 only when it is written and
 * flushed. */
static int service_audit_write(struct signer_service *service, const struct service_request_state *state,
                               const char *subject, const char *outcome)
{
	pthread_mutex_lock(&service->audit_lock);
	int rc = logline_write(service->audit, "dirauth-signer",
	                       state->has_epoch ? state->epoch : LOGLINE_EPOCH_NONE, NULL, "%s %s", subject,
	                       outcome);
	if (rc == 0)
		rc = service_audit_flush(service->audit, state->durable_audit);
	pthread_mutex_unlock(&service->audit_lock);
	return rc;
}

/* The audit line of a signature. Returns 0 only when it is written and flushed. */
int signer_service_audit_signature(struct signer_service *service, const struct service_request_state *state,
                                   const uint8_t *message, size_t message_len,
                                   const struct note_verifier *key)
{
	uint8_t digest[CRYPTO_SHA256_SIZE];
	char digest_hex[2 * CRYPTO_SHA256_SIZE + 1];
	char subject[NAMES_ORIGIN_MAX + 128], size[24] = "-", outcome[NOTE_NAME_MAX + 128];
	int rc;

	if (!service->audit)
		return 0;
	rc = crypto_sha256(message, message_len, digest);
	if (rc)
		return rc;
	hex_encode(digest, sizeof(digest), digest_hex);
	service_audit_subject(state, "sign", subject, sizeof subject);
	if (state->has_size)
		snprintf(size, sizeof size, "%llu", (unsigned long long)state->size);
	snprintf(outcome, sizeof outcome, "size=%s sha256=%s key=%s+%08x", size, digest_hex, key->name,
	         (unsigned)key->key_id);
	return service_audit_write(service, state, subject, outcome);
}

/* The audit line of a refusal (best effort: a refusal is returned whatever happens here). */
void signer_service_audit_refusal(struct signer_service *service, const struct service_request_state *state,
                                  int result)
{
	if (!service->audit)
		return;
	char subject[NAMES_ORIGIN_MAX + 128], outcome[64];
	service_audit_subject(state, "refuse", subject, sizeof subject);
	snprintf(outcome, sizeof outcome, "reason=%s", dirauth_error_name(result));
	(void)service_audit_write(service, state, subject, outcome);
}
