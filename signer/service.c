/*
 * service.c: the signer's policy: what it will sign, for whom, and what it remembers.
 *
 * dirauthd is the exposed process (HTTP, parsers fed by strangers); dirauth-signer is the
 * process that holds the keys. The boundary between them is only worth having if the signer
 * decides for itself, so every request is checked here as if dirauthd were compromised:
 *
 *   - The text must parse, canonically and within its bound, as the statement its operation
 *     names. Every dirauth document's first line names its kind, and checkpoints and
 *     cosignatures have their own C2SP forms, so no statement can be passed off as another
 *     kind, and there is no operation that signs raw bytes.
 *   - A receipt or vote must name this authority; a checkpoint signed with the log key must
 *     carry the log key's name as origin.
 *   - Signatures by the signing key are made only while its certificate is valid, so a key
 *     whose certificate lapsed stops speaking even if nobody restarts the signer.
 *   - Votes and snapshot headers go through the ledger (ledger.h): one statement per (origin,
 *     epoch), never a lower epoch; checkpoints must be proven consistent with the last one
 *     signed (or cosigned). The ledger record is durable before anything is signed, so a crash
 *     can lose a signature but never let two contradicting ones out.
 *   - Every signature and every refusal is written to the audit log and flushed before the
 *     signature is returned; for every statement but receipts the line is also fsynced when the
 *     log is a file. The audit log names what was signed by its digest and never holds a secret.
 *
 * At open the service refuses key files other users could read and key directories other users
 * could list or write, and a first certificate that does not certify the signing key or is not
 * valid now: a signer that starts is one whose signatures verifiers will accept.
 */
#include "signer/service.h"

#include "schema/certificate.h"
#include "schema/checkpoint.h"
#include "schema/crypto.h"
#include "schema/encoding.h"
#include "schema/error.h"
#include "schema/names.h"
#include "signer/key.h"
#include "signer/ledger.h"
#include "schema/receipt.h"
#include "schema/snapshot.h"
#include "schema/vote.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct signer_service {
	char authority[NOTE_NAME_MAX + 1];
	struct signer_key *signing_key;
	struct signer_key *log_key;         /* may be NULL */
	struct signer_key *cosignature_key; /* may be NULL */
	struct note_verifier cosignature_verifier;
	struct certificate certificate; /* the first: certifies the signing key */
	struct buffer certificate_bundle;
	struct ledger *ledger;
	FILE *audit;
	uint64_t (*now)(void *context); /* 0 when the clock cannot be read: signing is refused */
	void *now_context;
	uint64_t clock_skew;
};

/* Writes a sentence into detail (capacity cap; either may be 0/NULL). */
static void service_detail(char *detail, size_t cap, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
static void service_detail(char *detail, size_t cap, const char *format, ...)
{
	va_list args;
	if (!detail || cap == 0)
		return;
	va_start(args, format);
	vsnprintf(detail, cap, format, args);
	va_end(args);
}

/* ---- opening ---- */

/* Refuses path unless it is owned by the signer's own user and gives group and other nothing:
 * otherwise another user (dirauthd's, say) could replace what the signer trusts. what names it. */
static int service_check_private(const char *path, const char *what, bool directory, char *detail, size_t cap)
{
	struct stat st;
	if (lstat(path, &st) != 0) {
		service_detail(detail, cap, "%s %s: %s", what, path, strerror(errno));
		return errno == ENOENT ? DIRAUTH_ERR_NOT_FOUND : DIRAUTH_ERR_IO;
	}
	if (directory ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)) {
		service_detail(detail, cap, "%s %s is not a %s", what, path,
		               directory ? "directory" : "regular file");
		return DIRAUTH_ERR_PERMISSION;
	}
	if (st.st_uid != geteuid()) {
		service_detail(detail, cap, "%s %s is owned by uid %u, not by the signer's uid %u", what,
		               path, (unsigned)st.st_uid, (unsigned)geteuid());
		return DIRAUTH_ERR_PERMISSION;
	}
	if ((st.st_mode & 077) != 0) {
		service_detail(detail, cap,
		               "%s %s has mode %04o: group and other must have no access (chmod %s)", what,
		               path, (unsigned)(st.st_mode & 07777), directory ? "0700" : "0600");
		return DIRAUTH_ERR_PERMISSION;
	}
	return 0;
}

/* Refuses a key whose directory grants group or other any permission: they could replace the
 * key file or, with read and execute, watch it. */
static int service_check_key_directory(const char *path, char *detail, size_t cap)
{
	char directory[PATH_MAX];
	const char *slash = strrchr(path, '/');
	struct stat st;
	size_t len;

	if (!slash) {
		directory[0] = '.';
		directory[1] = '\0';
	} else {
		len = slash == path ? 1 : (size_t)(slash - path);
		if (len >= sizeof(directory)) {
			service_detail(detail, cap, "key path %s is too long", path);
			return DIRAUTH_ERR_CONFIG;
		}
		memcpy(directory, path, len);
		directory[len] = '\0';
	}
	if (stat(directory, &st) != 0) {
		service_detail(detail, cap, "key directory %s: %s", directory, strerror(errno));
		return errno == ENOENT ? DIRAUTH_ERR_NOT_FOUND : DIRAUTH_ERR_IO;
	}
	if (!S_ISDIR(st.st_mode)) {
		service_detail(detail, cap, "key directory %s is not a directory", directory);
		return DIRAUTH_ERR_PERMISSION;
	}
	if ((st.st_mode & 077) != 0) {
		service_detail(
		    detail, cap,
		    "key directory %s has mode %04o: group and other must have no access (chmod 0700)",
		    directory, (unsigned)(st.st_mode & 07777));
		return DIRAUTH_ERR_PERMISSION;
	}
	if (st.st_uid != geteuid()) {
		service_detail(detail, cap, "key directory %s is owned by uid %u, not by the signer's uid %u",
		               directory, (unsigned)st.st_uid, (unsigned)geteuid());
		return DIRAUTH_ERR_PERMISSION;
	}
	return 0;
}

/* Loads the key file at path (what names it in messages) after checking its directory. */
static int service_load_key(const char *path, const char *what, struct signer_key **out, char *detail,
                            size_t cap)
{
	int rc = service_check_key_directory(path, detail, cap);
	if (rc)
		return rc;
	rc = signer_key_load(path, out);
	switch (rc) {
	case 0:
		rc = service_check_private(path, what, false, detail, cap);
		if (rc) {
			signer_key_free(*out);
			*out = NULL;
		}
		break;
	case DIRAUTH_ERR_PERMISSION:
		service_detail(detail, cap,
		               "%s %s is not a regular 0600 file (group or other have access, or it is a "
		               "symlink): refused",
		               what, path);
		break;
	case DIRAUTH_ERR_NOT_FOUND:
		service_detail(detail, cap, "%s %s does not exist", what, path);
		break;
	case DIRAUTH_ERR_SYNTAX:
		service_detail(detail, cap, "%s %s is not a valid key file", what, path);
		break;
	default:
		service_detail(detail, cap, "%s %s could not be loaded: %s", what, path,
		               dirauth_strerror(rc));
		break;
	}
	return rc;
}

/* Reads a certificate file of at most CERTIFICATE_MAX_BYTES into a new buffer. */
static int service_read_certificate(const char *path, uint8_t **out, size_t *out_len, char *detail,
                                    size_t cap)
{
	int rc = DIRAUTH_ERR_CONFIG;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	uint8_t *data = NULL;
	size_t used = 0;
	struct stat st;

	*out = NULL;
	if (fd < 0) {
		service_detail(detail, cap, "certificate %s: %s", path, strerror(errno));
		return DIRAUTH_ERR_CONFIG;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		service_detail(detail, cap, "certificate %s is not a regular file", path);
		goto cleanup;
	}
	data = malloc(CERTIFICATE_MAX_BYTES + 1);
	if (!data) {
		rc = DIRAUTH_ERR_NOMEM;
		goto cleanup;
	}
	for (;;) {
		ssize_t got = read(fd, data + used, CERTIFICATE_MAX_BYTES + 1 - used);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			service_detail(detail, cap, "certificate %s: %s", path, strerror(errno));
			goto cleanup;
		}
		if (got == 0)
			break;
		used += (size_t)got;
		if (used > CERTIFICATE_MAX_BYTES) {
			service_detail(detail, cap, "certificate %s is longer than %d bytes", path,
			               CERTIFICATE_MAX_BYTES);
			goto cleanup;
		}
	}
	*out = data;
	*out_len = used;
	data = NULL;
	rc = 0;
cleanup:
	free(data);
	close(fd);
	return rc;
}

static bool service_same_verifier(const struct note_verifier *a, const struct note_verifier *b)
{
	return strcmp(a->name, b->name) == 0 && a->key_id == b->key_id && a->type == b->type &&
	       memcmp(a->public_key, b->public_key, sizeof(a->public_key)) == 0;
}

/* Loads every certificate, checks the first certifies the signing key and is valid now, and
 * builds the bundle served by GET_CERTIFICATES. */
static int service_load_certificates(struct signer_service *service,
                                     const struct signer_service_options *options, uint64_t now, char *detail,
                                     size_t cap)
{
	uint8_t *notes[CERTIFICATE_BUNDLE_MAX] = {NULL};
	size_t lengths[CERTIFICATE_BUNDLE_MAX] = {0};
	size_t count = options->certificate_count;
	int rc = 0;

	if (count == 0 || count > CERTIFICATE_BUNDLE_MAX || !options->certificate_paths) {
		service_detail(detail, cap, "between 1 and %d certificates must be configured",
		               CERTIFICATE_BUNDLE_MAX);
		return DIRAUTH_ERR_CONFIG;
	}
	for (size_t i = 0; i < count && rc == 0; i++) {
		const char *path = options->certificate_paths[i];
		struct certificate certificate;
		if (!path) {
			service_detail(detail, cap, "certificate %zu has no path", i + 1);
			rc = DIRAUTH_ERR_CONFIG;
			break;
		}
		rc = service_read_certificate(path, &notes[i], &lengths[i], detail, cap);
		if (rc)
			break;
		rc = certificate_parse_signed(notes[i], lengths[i], &certificate);
		if (rc) {
			service_detail(
			    detail, cap,
			    "certificate %s is not a key certificate signed by its identity key: %s", path,
			    dirauth_strerror(rc));
			rc = DIRAUTH_ERR_CONFIG;
			break;
		}
		if (strcmp(certificate.authority, service->authority) != 0) {
			service_detail(detail, cap, "certificate %s is for authority %s, not %s", path,
			               certificate.authority, service->authority);
			rc = DIRAUTH_ERR_MISMATCH;
			break;
		}
		if (i > 0)
			continue;
		if (!service_same_verifier(&certificate.signing_key,
		                           signer_key_verifier(service->signing_key))) {
			char key_text[NOTE_VERIFIER_KEY_MAX + 1];
			note_verifier_format(&certificate.signing_key, key_text);
			service_detail(detail, cap,
			               "certificate %s certifies the key %s, not the signing key %s", path,
			               key_text, options->signing_key_path);
			rc = DIRAUTH_ERR_MISMATCH;
			break;
		}
		if (now < certificate.valid_after) {
			service_detail(detail, cap, "certificate %s is not valid until %llu (now %llu)", path,
			               (unsigned long long)certificate.valid_after, (unsigned long long)now);
			rc = DIRAUTH_ERR_STALE;
			break;
		}
		if (now >= certificate.valid_until) {
			service_detail(detail, cap, "certificate %s expired at %llu (now %llu)", path,
			               (unsigned long long)certificate.valid_until, (unsigned long long)now);
			rc = DIRAUTH_ERR_STALE;
			break;
		}
		service->certificate = certificate;
	}
	if (rc == 0) {
		rc = certificate_bundle_encode((const uint8_t *const *)notes, lengths, count,
		                               &service->certificate_bundle);
		if (rc)
			service_detail(detail, cap, "the certificates cannot be served as one bundle: %s",
			               dirauth_strerror(rc));
	}
	for (size_t i = 0; i < count; i++)
		free(notes[i]);
	return rc;
}

int signer_service_open(const struct signer_service_options *options, struct signer_service **out,
                        char *detail, size_t detail_cap)
{
	struct signer_service *service = NULL;
	uint64_t now;
	int rc = DIRAUTH_ERR_CONFIG;

	*out = NULL;
	service_detail(detail, detail_cap, "%s", "");
	if (!options || !options->authority || !options->signing_key_path || !options->ledger_directory ||
	    !options->now) {
		service_detail(detail, detail_cap, "the signer's options are incomplete");
		return DIRAUTH_ERR_CONFIG;
	}
	if (!note_name_is_valid(options->authority, strlen(options->authority))) {
		service_detail(detail, detail_cap, "authority %.128s is not a valid key name",
		               options->authority);
		return DIRAUTH_ERR_CONFIG;
	}
	service = calloc(1, sizeof(*service));
	if (!service)
		return DIRAUTH_ERR_NOMEM;
	memcpy(service->authority, options->authority, strlen(options->authority) + 1);
	service->audit = options->audit;
	service->now = options->now;
	service->now_context = options->now_context;
	service->clock_skew = options->clock_skew_seconds ? options->clock_skew_seconds : 300;

	rc = service_load_key(options->signing_key_path, "signing key", &service->signing_key, detail,
	                      detail_cap);
	if (rc)
		goto cleanup;
	if (strcmp(signer_key_verifier(service->signing_key)->name, service->authority) != 0) {
		service_detail(detail, detail_cap, "signing key %s is named %s, not the authority %s",
		               options->signing_key_path, signer_key_verifier(service->signing_key)->name,
		               service->authority);
		rc = DIRAUTH_ERR_CONFIG;
		goto cleanup;
	}
	if (options->log_key_path) {
		rc =
		    service_load_key(options->log_key_path, "log key", &service->log_key, detail, detail_cap);
		if (rc)
			goto cleanup;
	}
	if (options->cosignature_key_path) {
		const struct note_verifier *plain;
		rc = service_load_key(options->cosignature_key_path, "cosignature key",
		                      &service->cosignature_key, detail, detail_cap);
		if (rc)
			goto cleanup;
		plain = signer_key_verifier(service->cosignature_key);
		rc = cosignature_verifier_from_ed25519(plain->name, plain->public_key,
		                                       &service->cosignature_verifier);
		if (rc) {
			service_detail(detail, detail_cap, "cosignature key %s: %s",
			               options->cosignature_key_path, dirauth_strerror(rc));
			goto cleanup;
		}
	}

	/* One key per role: a key that signed headers must not also sign checkpoints or cosign. */
	const struct signer_key *roles[] = {service->signing_key, service->log_key, service->cosignature_key};
	for (size_t i = 0; i < 3; i++)
		for (size_t j = i + 1; j < 3; j++)
			if (roles[i] && roles[j] &&
			    memcmp(signer_key_verifier(roles[i])->public_key,
			           signer_key_verifier(roles[j])->public_key, 32) == 0) {
				service_detail(
				    detail, detail_cap,
				    "the signing, log and cosignature keys must be three different keys");
				rc = DIRAUTH_ERR_CONFIG;
				goto cleanup;
			}

	now = options->now(options->now_context);
	rc = service_load_certificates(service, options, now, detail, detail_cap);
	if (rc)
		goto cleanup;

	/* The ledger is the signer's memory: a directory others can write is one they can roll back. */
	struct stat ledger_st;
	if (lstat(options->ledger_directory, &ledger_st) == 0 &&
	    (rc = service_check_private(options->ledger_directory, "ledger directory", true, detail,
	                                detail_cap)))
		goto cleanup;
	rc = ledger_open(options->ledger_directory, &service->ledger);
	if (rc) {
		service_detail(detail, detail_cap, "ledger %s cannot be opened: %s",
		               options->ledger_directory, dirauth_strerror(rc));
		goto cleanup;
	}
	*out = service;
	service = NULL;
cleanup:
	signer_service_close(service);
	return rc;
}

void signer_service_close(struct signer_service *service)
{
	if (!service)
		return;
	signer_key_free(service->signing_key);
	signer_key_free(service->log_key);
	signer_key_free(service->cosignature_key);
	buffer_free(&service->certificate_bundle);
	ledger_close(service->ledger);
	free(service);
}

/* ---- handling one request ---- */

/* What one request is about, for the response and the audit line. */
struct service_request_state {
	const char *operation; /* audit name */
	bool durable_audit;    /* the audit line is fsynced before the signature leaves */
	char origin[NAMES_ORIGIN_MAX + 1];
	bool has_epoch;
	uint64_t epoch;
	bool has_size;
	uint64_t size;
};

static const char *service_operation_name(uint8_t operation)
{
	switch (operation) {
	case SIGNER_OP_SIGN_RECEIPT:
		return "receipt";
	case SIGNER_OP_SIGN_VOTE:
		return "vote";
	case SIGNER_OP_SIGN_SNAPSHOT_HEADER:
		return "snapshot-header";
	case SIGNER_OP_SIGN_CHECKPOINT:
		return "checkpoint";
	case SIGNER_OP_COSIGN_CHECKPOINT:
		return "cosignature";
	case SIGNER_OP_GET_KEYS:
		return "get-keys";
	case SIGNER_OP_GET_CERTIFICATES:
		return "get-certificates";
	case SIGNER_OP_CHECKPOINT_STATE:
		return "checkpoint-state";
	default:
		return "unknown";
	}
}

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

static void service_audit_fields(FILE *audit, const struct service_request_state *state)
{
	fprintf(audit, " origin=%s", state->origin[0] ? state->origin : "-");
	if (state->has_epoch)
		fprintf(audit, " epoch=%llu", (unsigned long long)state->epoch);
	else
		fputs(" epoch=-", audit);
}

/* The audit line of a signature. Returns 0 only when it is written and flushed. */
static int service_audit_signature(struct signer_service *service, uint64_t now,
                                   const struct service_request_state *state, const uint8_t *message,
                                   size_t message_len, const struct note_verifier *key)
{
	uint8_t digest[CRYPTO_SHA256_SIZE];
	char digest_hex[2 * CRYPTO_SHA256_SIZE + 1];
	int rc;

	if (!service->audit)
		return 0;
	rc = crypto_sha256(message, message_len, digest);
	if (rc)
		return rc;
	hex_encode(digest, sizeof(digest), digest_hex);
	fprintf(service->audit, "%llu sign %s", (unsigned long long)now, state->operation);
	service_audit_fields(service->audit, state);
	if (state->has_size)
		fprintf(service->audit, " size=%llu", (unsigned long long)state->size);
	else
		fputs(" size=-", service->audit);
	fprintf(service->audit, " sha256=%s key=%s+%08x\n", digest_hex, key->name, (unsigned)key->key_id);
	if (ferror(service->audit))
		return DIRAUTH_ERR_IO;
	/* A receipt's line is handed to the system but not fsynced: the registration it answers is
	 * already durable in dirauthd's store and the receipt is with its provider, so a power loss
	 * that drops the line loses no safety property, while an fsync per receipt would halve the
	 * registration rate. Every statement the ledger guards is fsynced. */
	return service_audit_flush(service->audit, state->durable_audit);
}

/* The audit line of a refusal (best effort: a refusal is returned whatever happens here). */
static void service_audit_refusal(struct signer_service *service, uint64_t now,
                                  const struct service_request_state *state, int result)
{
	if (!service->audit)
		return;
	fprintf(service->audit, "%llu refuse %s", (unsigned long long)now, state->operation);
	service_audit_fields(service->audit, state);
	fprintf(service->audit, " reason=%s\n", dirauth_error_name(result));
	(void)service_audit_flush(service->audit, state->durable_audit);
}

/* Sets the response's refusal. Returns result for chaining. */
static int service_refuse(struct signer_response *response, int result, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
static int service_refuse(struct signer_response *response, int result, const char *format, ...)
{
	va_list args;
	response->result = result;
	va_start(args, format);
	vsnprintf(response->detail, sizeof(response->detail), format, args);
	va_end(args);
	return result;
}

static void service_set_origin(struct service_request_state *state, const char *origin)
{
	size_t len = strnlen(origin, NAMES_ORIGIN_MAX);
	memcpy(state->origin, origin, len);
	state->origin[len] = '\0';
}

/* The signing key's certificate must be valid at the moment of signing, not only at start. */
static int service_check_certificate(const struct signer_service *service, uint64_t now,
                                     struct signer_response *response)
{
	if (now < service->certificate.valid_after)
		return service_refuse(response, DIRAUTH_ERR_STALE,
		                      "the signing key's certificate is not valid until %llu (now %llu)",
		                      (unsigned long long)service->certificate.valid_after,
		                      (unsigned long long)now);
	if (now >= service->certificate.valid_until)
		return service_refuse(
		    response, DIRAUTH_ERR_STALE, "the signing key's certificate expired at %llu (now %llu)",
		    (unsigned long long)service->certificate.valid_until, (unsigned long long)now);
	return 0;
}

/* The sentence for a ledger refusal. */
static int service_ledger_refusal(struct signer_response *response, int rc, const char *what,
                                  const struct service_request_state *state)
{
	switch (rc) {
	case DIRAUTH_ERR_ROLLBACK:
		if (state->has_epoch)
			return service_refuse(response, rc,
			                      "%s for %.255s epoch %llu is below the highest epoch signed",
			                      what, state->origin, (unsigned long long)state->epoch);
		return service_refuse(response, rc, "%s for %.255s is smaller than the latest one", what,
		                      state->origin);
	case DIRAUTH_ERR_COLLISION:
		if (state->has_epoch)
			return service_refuse(
			    response, rc,
			    "a different %s for %.255s epoch %llu is already signed: refusing to "
			    "equivocate",
			    what, state->origin, (unsigned long long)state->epoch);
		return service_refuse(
		    response, rc,
		    "a different %s of the same size for %.255s is already signed: refusing to "
		    "equivocate",
		    what, state->origin);
	case DIRAUTH_ERR_MISMATCH:
		return service_refuse(response, rc,
		                      "old_size does not match the size of the latest %s for %.255s (ask "
		                      "checkpoint-state)",
		                      what, state->origin);
	case DIRAUTH_ERR_PROOF:
		return service_refuse(response, rc,
		                      "the consistency proof from the latest %s for %.255s does not verify",
		                      what, state->origin);
	default:
		return service_refuse(response, rc, "the ledger failed: %s", dirauth_strerror(rc));
	}
}

/* Fills the response with a note signature by key over message, after the audit line. */
static int service_sign_note(struct signer_service *service, uint64_t now, const struct signer_key *key,
                             const struct service_request_state *state, const uint8_t *message,
                             size_t message_len, struct signer_response *response)
{
	int rc = signer_key_sign(key, message, message_len, &response->signature);
	if (rc)
		return service_refuse(response, rc, "signing failed: %s", dirauth_strerror(rc));
	rc = service_audit_signature(service, now, state, message, message_len, signer_key_verifier(key));
	if (rc) {
		memset(&response->signature, 0, sizeof(response->signature));
		return service_refuse(response, rc,
		                      "the audit log cannot be written: no signature is returned");
	}
	response->has_signature = 1;
	return 0;
}

/* A statement's own time must be now, give or take the clock skew, and inside the signing
 * key's certificate: otherwise a compromised dirauthd could have statements signed today that
 * verifiers would count tomorrow, after the compromise is over. */
static int service_check_statement_time(const struct signer_service *service, uint64_t now, uint64_t at,
                                        const char *what, struct signer_response *response)
{
	if (at > now + service->clock_skew)
		return service_refuse(
		    response, DIRAUTH_ERR_STALE,
		    "the %s is dated %llu, more than %llu s after the signer's clock (%llu)", what,
		    (unsigned long long)at, (unsigned long long)service->clock_skew, (unsigned long long)now);
	if (at < service->certificate.valid_after)
		return service_refuse(
		    response, DIRAUTH_ERR_STALE,
		    "the %s is dated %llu, before the signing key's certificate (valid after %llu)", what,
		    (unsigned long long)at, (unsigned long long)service->certificate.valid_after);
	return 0;
}

/* Epochs last at least a second and start at a genesis of zero or later, so an epoch number never
 * exceeds the unix time at which it starts. Refusing a larger one keeps a compromised dirauthd
 * from spending the ledger's epochs in one request (an epoch of 2^64-1 would leave no higher
 * one to sign). */
static int service_check_epoch(uint64_t epoch, uint64_t at, struct signer_response *response)
{
	if (epoch > at)
		return service_refuse(response, DIRAUTH_ERR_REFUSED,
		                      "epoch %llu is larger than the unix time of its statement (%llu)",
		                      (unsigned long long)epoch, (unsigned long long)at);
	return 0;
}

static int service_sign_receipt(struct signer_service *service, uint64_t now,
                                const struct signer_request *request, struct service_request_state *state,
                                struct signer_response *response)
{
	struct receipt receipt;
	int rc;

	if (request->text_len > RECEIPT_MAX_BYTES ||
	    receipt_parse(request->text, request->text_len, &receipt) != 0)
		return service_refuse(response, DIRAUTH_ERR_REFUSED, "the text is not a valid receipt");
	if (strcmp(receipt.authority, service->authority) != 0)
		return service_refuse(response, DIRAUTH_ERR_REFUSED,
		                      "the receipt names authority %.128s, not %s", receipt.authority,
		                      service->authority);
	rc = service_check_certificate(service, now, response);
	if (rc)
		return rc;
	if (receipt.accepted_at + service->clock_skew < now)
		return service_refuse(
		    response, DIRAUTH_ERR_STALE,
		    "the receipt is dated %llu, more than %llu s before the signer's clock (%llu)",
		    (unsigned long long)receipt.accepted_at, (unsigned long long)service->clock_skew,
		    (unsigned long long)now);
	rc = service_check_statement_time(service, now, receipt.accepted_at, "receipt", response);
	if (rc)
		return rc;
	return service_sign_note(service, now, service->signing_key, state, request->text, request->text_len,
	                         response);
}

static int service_sign_vote(struct signer_service *service, uint64_t now,
                             const struct signer_request *request, struct service_request_state *state,
                             struct signer_response *response)
{
	struct vote vote;
	uint8_t digest[CRYPTO_SHA256_SIZE];
	int rc;

	if (request->text_len > VOTE_MAX_BYTES || vote_parse(request->text, request->text_len, &vote) != 0)
		return service_refuse(response, DIRAUTH_ERR_REFUSED, "the text is not a valid vote");
	service_set_origin(state, vote.origin);
	state->has_epoch = true;
	state->epoch = vote.epoch;
	if (strcmp(vote.authority, service->authority) != 0)
		return service_refuse(response, DIRAUTH_ERR_REFUSED,
		                      "the vote names authority %.128s, not %s", vote.authority,
		                      service->authority);
	rc = service_check_certificate(service, now, response);
	if (rc)
		return rc;
	rc = service_check_epoch(vote.epoch, now + service->clock_skew, response);
	if (rc)
		return rc;
	rc = crypto_sha256(request->text, request->text_len, digest);
	if (rc)
		return service_refuse(response, rc, "hashing failed");
	rc = ledger_record_epoch(service->ledger, LEDGER_VOTE, vote.origin, vote.epoch, digest);
	if (rc)
		return service_ledger_refusal(response, rc, "vote", state);
	return service_sign_note(service, now, service->signing_key, state, request->text, request->text_len,
	                         response);
}

static int service_sign_header(struct signer_service *service, uint64_t now,
                               const struct signer_request *request, struct service_request_state *state,
                               struct signer_response *response)
{
	struct snapshot_header header;
	uint8_t digest[CRYPTO_SHA256_SIZE];
	int rc;

	if (request->text_len > SNAPSHOT_HEADER_MAX_BYTES ||
	    snapshot_header_parse(request->text, request->text_len, &header) != 0)
		return service_refuse(response, DIRAUTH_ERR_REFUSED,
		                      "the text is not a valid snapshot header");
	service_set_origin(state, header.origin);
	state->has_epoch = true;
	state->epoch = header.epoch;
	rc = service_check_certificate(service, now, response);
	if (rc)
		return rc;
	rc = service_check_statement_time(service, now, header.valid_after, "snapshot header", response);
	if (rc)
		return rc;
	rc = service_check_epoch(header.epoch, header.valid_after, response);
	if (rc)
		return rc;
	rc = crypto_sha256(request->text, request->text_len, digest);
	if (rc)
		return service_refuse(response, rc, "hashing failed");
	rc =
	    ledger_record_epoch(service->ledger, LEDGER_SNAPSHOT_HEADER, header.origin, header.epoch, digest);
	if (rc)
		return service_ledger_refusal(response, rc, "snapshot header", state);
	return service_sign_note(service, now, service->signing_key, state, request->text, request->text_len,
	                         response);
}

static int service_parse_checkpoint(const struct signer_request *request, struct checkpoint *checkpoint,
                                    struct service_request_state *state, struct signer_response *response)
{
	if (request->text_len > CHECKPOINT_MAX_BYTES ||
	    checkpoint_parse(request->text, request->text_len, checkpoint) != 0)
		return service_refuse(response, DIRAUTH_ERR_REFUSED, "the text is not a valid checkpoint");
	/* dirauth's checkpoints carry no extension lines; accepting them would let dirauthd have
	 * free text signed, and two different signed notes for one tree head. */
	if (checkpoint->extension_count != 0)
		return service_refuse(response, DIRAUTH_ERR_REFUSED,
		                      "checkpoint extension lines are not signed");
	if (request->proof_count > MERKLE_MAX_PROOF)
		return service_refuse(response, DIRAUTH_ERR_REFUSED, "the consistency proof is too long");
	service_set_origin(state, checkpoint->origin);
	state->has_size = true;
	state->size = checkpoint->tree_size;
	return 0;
}

static int service_sign_checkpoint(struct signer_service *service, uint64_t now,
                                   const struct signer_request *request, struct service_request_state *state,
                                   struct signer_response *response)
{
	struct checkpoint checkpoint;
	const struct note_verifier *log;
	int rc;

	if (!service->log_key)
		return service_refuse(response, DIRAUTH_ERR_UNAVAILABLE, "no log key is configured");
	rc = service_parse_checkpoint(request, &checkpoint, state, response);
	if (rc)
		return rc;
	log = signer_key_verifier(service->log_key);
	if (strcmp(checkpoint.origin, log->name) != 0)
		return service_refuse(response, DIRAUTH_ERR_REFUSED,
		                      "the checkpoint's origin %.128s is not the log key's name %s",
		                      checkpoint.origin, log->name);
	rc = ledger_record_checkpoint(service->ledger, LEDGER_CHECKPOINT_SIGNED, checkpoint.origin,
	                              checkpoint.tree_size, checkpoint.root, request->old_size,
	                              request->proof, request->proof_count);
	if (rc)
		return service_ledger_refusal(response, rc, "checkpoint", state);
	return service_sign_note(service, now, service->log_key, state, request->text, request->text_len,
	                         response);
}

static int service_cosign_checkpoint(struct signer_service *service, uint64_t now,
                                     const struct signer_request *request,
                                     struct service_request_state *state, struct signer_response *response)
{
	struct checkpoint checkpoint;
	struct buffer message;
	uint8_t signature[CRYPTO_ED25519_SIGNATURE_SIZE];
	int rc;

	if (!service->cosignature_key)
		return service_refuse(response, DIRAUTH_ERR_UNAVAILABLE, "no cosignature key is configured");
	rc = service_parse_checkpoint(request, &checkpoint, state, response);
	if (rc)
		return rc;
	rc = ledger_record_checkpoint(service->ledger, LEDGER_CHECKPOINT_COSIGNED, checkpoint.origin,
	                              checkpoint.tree_size, checkpoint.root, request->old_size,
	                              request->proof, request->proof_count);
	if (rc)
		return service_ledger_refusal(response, rc, "cosigned checkpoint", state);

	buffer_init(&message);
	rc = cosignature_message(now, request->text, request->text_len, &message);
	if (rc) {
		buffer_free(&message);
		return service_refuse(response, rc, "the cosignature message cannot be built: %s",
		                      dirauth_strerror(rc));
	}
	rc = signer_key_sign_raw(service->cosignature_key, message.data, message.len, signature);
	if (rc) {
		buffer_free(&message);
		return service_refuse(response, rc, "signing failed: %s", dirauth_strerror(rc));
	}
	rc = service_audit_signature(service, now, state, message.data, message.len,
	                             &service->cosignature_verifier);
	buffer_free(&message);
	if (rc)
		return service_refuse(response, rc,
		                      "the audit log cannot be written: no signature is returned");

	/* c2sp.org/tlog-cosignature: the signature bytes are the timestamp, then the signature. */
	memcpy(response->signature.name, service->cosignature_verifier.name,
	       sizeof(response->signature.name));
	response->signature.key_id = service->cosignature_verifier.key_id;
	for (int i = 0; i < 8; i++)
		response->signature.signature[i] = (uint8_t)(now >> (56 - 8 * i));
	memcpy(response->signature.signature + 8, signature, sizeof(signature));
	response->signature.signature_len = 8 + sizeof(signature);
	response->has_signature = 1;
	return 0;
}

static int service_get_keys(struct signer_service *service, struct signer_response *response,
                            struct buffer *payload)
{
	char key_text[NOTE_VERIFIER_KEY_MAX + 1];
	int rc;

	note_verifier_format(signer_key_verifier(service->signing_key), key_text);
	rc = buffer_appendf(payload, "signing-key %s\n", key_text);
	if (!rc && service->log_key) {
		note_verifier_format(signer_key_verifier(service->log_key), key_text);
		rc = buffer_appendf(payload, "log-key %s\n", key_text);
	}
	if (!rc && service->cosignature_key) {
		note_verifier_format(&service->cosignature_verifier, key_text);
		rc = buffer_appendf(payload, "cosignature-key %s\n", key_text);
	}
	if (rc)
		return service_refuse(response, rc, "the key list cannot be built");
	return 0;
}

static int service_checkpoint_state(struct signer_service *service, const struct signer_request *request,
                                    struct service_request_state *state, struct signer_response *response,
                                    struct buffer *payload)
{
	static const struct {
		enum ledger_checkpoint_kind kind;
		const char *word;
	} kinds[] = {{LEDGER_CHECKPOINT_SIGNED, "signed"}, {LEDGER_CHECKPOINT_COSIGNED, "cosigned"}};

	if (!names_origin_is_valid((const char *)request->text, request->text_len))
		return service_refuse(response, DIRAUTH_ERR_REFUSED, "the text is not a checkpoint origin");
	memcpy(state->origin, request->text, request->text_len);
	state->origin[request->text_len] = '\0';
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		uint64_t size;
		merkle_hash root;
		char root_text[45];
		int rc = ledger_checkpoint_latest(service->ledger, kinds[i].kind, state->origin, &size, root);
		if (rc == DIRAUTH_ERR_NOT_FOUND)
			continue;
		if (rc == 0) {
			base64_encode(root, sizeof(root), root_text);
			rc = buffer_appendf(payload, "%s %llu %s\n", kinds[i].word, (unsigned long long)size,
			                    root_text);
		}
		if (rc)
			return service_refuse(response, rc, "the checkpoint state cannot be read: %s",
			                      dirauth_strerror(rc));
	}
	return 0;
}

int signer_service_handle(struct signer_service *service, const struct signer_request *request,
                          struct signer_response *response, struct buffer *payload_storage)
{
	struct service_request_state state;
	uint64_t now = service->now(service->now_context);
	bool signs = false;
	int rc;

	memset(response, 0, sizeof(*response));
	memset(&state, 0, sizeof(state));
	buffer_reset(payload_storage);
	state.operation = service_operation_name(request->operation);
	state.durable_audit = request->operation != SIGNER_OP_SIGN_RECEIPT;

	/* A clock that cannot be read reports 0; no signature is dated or checked against it. */
	if (now == 0 && request->operation >= SIGNER_OP_SIGN_RECEIPT &&
	    request->operation <= SIGNER_OP_COSIGN_CHECKPOINT) {
		rc = service_refuse(response, DIRAUTH_ERR_UNAVAILABLE, "the clock cannot be read");
		service_audit_refusal(service, now, &state, rc);
		return rc;
	}

	switch (request->operation) {
	case SIGNER_OP_SIGN_RECEIPT:
		signs = true;
		rc = service_sign_receipt(service, now, request, &state, response);
		break;
	case SIGNER_OP_SIGN_VOTE:
		signs = true;
		rc = service_sign_vote(service, now, request, &state, response);
		break;
	case SIGNER_OP_SIGN_SNAPSHOT_HEADER:
		signs = true;
		rc = service_sign_header(service, now, request, &state, response);
		break;
	case SIGNER_OP_SIGN_CHECKPOINT:
		signs = true;
		rc = service_sign_checkpoint(service, now, request, &state, response);
		break;
	case SIGNER_OP_COSIGN_CHECKPOINT:
		signs = true;
		rc = service_cosign_checkpoint(service, now, request, &state, response);
		break;
	case SIGNER_OP_GET_KEYS:
		rc = request->text_len
		         ? service_refuse(response, DIRAUTH_ERR_REFUSED, "get-keys takes no text")
		         : service_get_keys(service, response, payload_storage);
		break;
	case SIGNER_OP_GET_CERTIFICATES:
		rc = request->text_len
		         ? service_refuse(response, DIRAUTH_ERR_REFUSED, "get-certificates takes no text")
		         : buffer_append(payload_storage, service->certificate_bundle.data,
		                         service->certificate_bundle.len);
		if (rc && !response->detail[0])
			rc = service_refuse(response, rc, "the certificate bundle cannot be copied");
		break;
	case SIGNER_OP_CHECKPOINT_STATE:
		rc = service_checkpoint_state(service, request, &state, response, payload_storage);
		break;
	default:
		signs = true;
		rc = service_refuse(response, DIRAUTH_ERR_REFUSED, "unknown operation %u",
		                    (unsigned)request->operation);
		break;
	}

	if (rc) {
		response->has_signature = 0;
		memset(&response->signature, 0, sizeof(response->signature));
		buffer_reset(payload_storage);
		if (signs)
			service_audit_refusal(service, now, &state, rc);
	} else if (payload_storage->len) {
		response->payload = payload_storage->data;
		response->payload_len = payload_storage->len;
	}
	response->result = rc;
	return rc;
}
