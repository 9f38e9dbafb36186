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
 *   - A statement must be for a namespace of the signer's own configuration, which gives each
 *     namespace's epoch schedule (schema/schedule.h). A vote's or header's epoch must be a
 *     current one by the signer's own clock, and a header's times exactly its epoch's: one
 *     request for a far epoch would otherwise make every real epoch after it a rollback.
 *   - Signatures by the signing key are made only while its certificate is valid, so a key
 *     whose certificate lapsed stops speaking even if nobody restarts the signer. A clock that
 *     cannot be read is an error, and nothing is signed without the time.
 *   - Votes and snapshot headers go through the ledger (ledger.h): one statement per (origin,
 *     epoch), never a lower epoch; checkpoints must be proven consistent with the last one
 *     signed or cosigned for their origin, whichever key made it (one tree per origin for the
 *     log key and the cosignature key alike). The ledger record is durable before anything
 *     is signed, so a crash can lose a signature but never let two contradicting ones out.
 *   - Every signature and every refusal is written to the audit log and flushed before the
 *     signature is returned; for every statement but receipts the line is also fsynced when the
 *     log is a file. The audit log names what was signed by its digest and never holds a secret.
 *
 * Which of these apply to an operation is one row of the operation table below (its key, whose
 * statement it is, its time checks, its ledger rule, its audit durability), and every signing
 * request goes through the same steps driven by its row; at open the table is checked against
 * the protocol's (schema/signer_protocol.h) and for the checks no row may omit, so an operation
 * added without its checks stops the signer before it signs anything.
 *
 * Requests are handled concurrently, one thread per connection. Keys, certificates and the
 * configuration are read-only after open; every ledger call runs under one lock, so a
 * check-and-record is never interleaved with another, and each audit line is written whole
 * under another.
 *
 * At open the service refuses key files other users could read and key directories other users
 * could list or write, and a first certificate that does not certify the signing key or is not
 * valid now: a signer that starts is one whose signatures verifiers will accept.
 */
#include "signer/service.h"

#include "logline/logline.h"
#include "schema/certificate.h"
#include "schema/checkpoint.h"
#include "schema/crypto.h"
#include "schema/deregistration_receipt.h"
#include "schema/encoding.h"
#include "schema/error.h"
#include "schema/lines.h"
#include "schema/names.h"
#include "schema/receipt.h"
#include "schema/schedule.h"
#include "schema/snapshot.h"
#include "schema/vote.h"
#include "signer/key.h"
#include "signer/ledger.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
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
	struct signer_namespace namespaces[SIGNER_SERVICE_MAX_NAMESPACES];
	size_t namespace_count;
	struct ledger *ledger;
	pthread_mutex_t ledger_lock; /* every ledger call: its check-and-record is one step */
	bool ledger_lock_ready;
	FILE *audit;
	pthread_mutex_t audit_lock; /* one audit line at a time, written, flushed and synced */
	bool audit_lock_ready;
	signer_clock_fn now; /* fails when the clock cannot be read: signing is refused */
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

/* ---- the operation table ---- */

/* Which key signs an operation's statements. */
enum service_key {
	SERVICE_KEY_NONE,        /* a query: nothing is signed */
	SERVICE_KEY_SIGNING,     /* the certified signing key */
	SERVICE_KEY_LOG,         /* the log key */
	SERVICE_KEY_COSIGNATURE, /* the cosignature key */
};

/* Whose statement it is: decides which configured namespace, and so which epoch schedule,
 * judges it. */
enum service_scope {
	SERVICE_SCOPE_NONE,      /* a query */
	SERVICE_SCOPE_NAMESPACE, /* a configured namespace, named by its name (receipts) */
	SERVICE_SCOPE_ORIGIN,    /* a configured namespace, named by its origin, whose name the
	                            statement must also carry (votes, snapshot headers) */
	SERVICE_SCOPE_LOG,       /* the log key's own log: the origin is the log key's name */
	SERVICE_SCOPE_ANY_LOG,   /* any log; judged by a schedule when its origin is configured */
};

enum service_ledger_rule {
	SERVICE_LEDGER_NONE,
	SERVICE_LEDGER_EPOCH,      /* one statement per (origin, epoch), never a lower epoch */
	SERVICE_LEDGER_CHECKPOINT, /* proven consistent with the origin's last checkpoint, signed
	                              or cosigned */
};

/* Time checks: each operation names the set that applies to it. */
enum {
	SERVICE_TIME_CERTIFICATE = 1u << 0, /* the signing key's certificate is valid now */
	SERVICE_TIME_EPOCH = 1u << 1,       /* the epoch is a current one of its schedule */
	SERVICE_TIME_EPOCH_TIMES = 1u << 2, /* valid-after, fresh-until, valid-until are its epoch's */
	SERVICE_TIME_DATED = 1u << 3,       /* the statement's date: at most the skew after now, and
	                                       not before the certificate */
	SERVICE_TIME_RECENT = 1u << 4,      /* the statement's date: at most the skew before now */
	SERVICE_TIME_PUBLISH_BY = 1u << 5,  /* a promised epoch at most SIGNER_RECEIPT_EPOCHS_AHEAD
	                                       past the latest begun */
	SERVICE_TIME_TREE_SIZE = 1u << 6,   /* no more log entries than epochs begun (configured
	                                       origins; a log gets one entry per epoch) */
};

/* What the checks need to know of a statement, filled by its operation's parser. Strings
 * borrow from the parsed statement. */
struct service_statement {
	const char *authority;      /* the authority it names, or NULL */
	const char *namespace_name; /* or NULL */
	const char *origin;         /* or NULL */
	bool has_epoch;
	uint64_t epoch;
	bool has_times;
	struct epoch_times times;
	bool has_date;
	uint64_t date; /* its own time: a receipt's accepted-at, a header's valid-after */
	bool has_publish_by;
	uint64_t publish_by;
	bool has_tree;
	uint64_t tree_size;
	merkle_hash root;
};

union service_parsed {
	struct receipt receipt;
	struct deregistration_receipt deregistration_receipt;
	struct vote vote;
	struct snapshot_header header;
	struct checkpoint checkpoint;
};

/* What one request is about, for the response and the audit line. */
struct service_request_state {
	const char *operation; /* audit name: the protocol's name of the operation */
	bool durable_audit;    /* the audit line is fsynced before the signature leaves */
	bool has_now;          /* false: the clock could not be read */
	uint64_t now;
	char origin[NAMES_ORIGIN_MAX + 1];
	bool has_epoch;
	uint64_t epoch;
	bool has_size;
	uint64_t size;
};

typedef int (*service_parse_fn)(const struct signer_request *request, union service_parsed *parsed,
                                struct service_statement *statement, struct signer_response *response);
typedef int (*service_answer_fn)(struct signer_service *service, const struct signer_request *request,
                                 struct service_request_state *state, struct signer_response *response,
                                 struct buffer *payload);

/* One row per operation of the protocol: what signs it, whose it is, which time checks and
 * which ledger rule apply, how durable its audit line is. */
struct service_operation {
	uint8_t operation;
	const char *what; /* the statement, in sentences */
	enum service_key key;
	enum service_scope scope;
	unsigned time_checks;
	enum service_ledger_rule ledger;
	enum ledger_epoch_kind epoch_kind;           /* SERVICE_LEDGER_EPOCH */
	enum ledger_checkpoint_kind checkpoint_kind; /* SERVICE_LEDGER_CHECKPOINT */
	bool durable_audit;
	service_parse_fn parse;   /* signing operations */
	service_answer_fn answer; /* queries */
};

static int service_parse_receipt(const struct signer_request *request, union service_parsed *parsed,
                                 struct service_statement *statement, struct signer_response *response);
static int service_parse_deregistration_receipt(const struct signer_request *request,
                                                union service_parsed *parsed,
                                                struct service_statement *statement,
                                                struct signer_response *response);
static int service_parse_vote(const struct signer_request *request, union service_parsed *parsed,
                              struct service_statement *statement, struct signer_response *response);
static int service_parse_header(const struct signer_request *request, union service_parsed *parsed,
                                struct service_statement *statement, struct signer_response *response);
static int service_parse_checkpoint(const struct signer_request *request, union service_parsed *parsed,
                                    struct service_statement *statement, struct signer_response *response);
static int service_get_keys(struct signer_service *service, const struct signer_request *request,
                            struct service_request_state *state, struct signer_response *response,
                            struct buffer *payload);
static int service_get_certificates(struct signer_service *service, const struct signer_request *request,
                                    struct service_request_state *state, struct signer_response *response,
                                    struct buffer *payload);
static int service_checkpoint_state(struct signer_service *service, const struct signer_request *request,
                                    struct service_request_state *state, struct signer_response *response,
                                    struct buffer *payload);

/* A receipt's line is handed to the system but not fsynced: the registration it answers is
 * already durable in dirauthd's store and the receipt is with its provider, so a power loss that
 * drops the line loses no safety property, while an fsync per receipt would halve the
 * registration rate. Every statement the ledger guards is fsynced.
 *
 * Checkpoints carry no epoch and no time. A log gets one entry per published snapshot header of
 * its origin, so at most one per epoch: a checkpoint of a configured origin may not have more
 * entries than that origin's epochs begun by now plus the skew, which keeps one request from
 * spending the sizes of the log (a tree of 2^63 entries would leave no size to grow to). The
 * ledger's consistency rule does the rest. A cosignature is dated by the signer's own clock. */
static const struct service_operation service_operations[] = {
    {.operation = SIGNER_OP_SIGN_RECEIPT,
     .what = "receipt",
     .key = SERVICE_KEY_SIGNING,
     .scope = SERVICE_SCOPE_NAMESPACE,
     .time_checks =
         SERVICE_TIME_CERTIFICATE | SERVICE_TIME_DATED | SERVICE_TIME_RECENT | SERVICE_TIME_PUBLISH_BY,
     .ledger = SERVICE_LEDGER_NONE,
     .durable_audit = false,
     .parse = service_parse_receipt},
    /* A deregistration receipt promises the last epoch whose snapshot may list the service, judged
     * like a receipt's promise; its line is not fsynced either: the deregistration is durable in
     * dirauthd's store before the receipt is asked for. */
    {.operation = SIGNER_OP_SIGN_DEREGISTRATION_RECEIPT,
     .what = "deregistration receipt",
     .key = SERVICE_KEY_SIGNING,
     .scope = SERVICE_SCOPE_NAMESPACE,
     .time_checks =
         SERVICE_TIME_CERTIFICATE | SERVICE_TIME_DATED | SERVICE_TIME_RECENT | SERVICE_TIME_PUBLISH_BY,
     .ledger = SERVICE_LEDGER_NONE,
     .durable_audit = false,
     .parse = service_parse_deregistration_receipt},
    {.operation = SIGNER_OP_SIGN_VOTE,
     .what = "vote",
     .key = SERVICE_KEY_SIGNING,
     .scope = SERVICE_SCOPE_ORIGIN,
     .time_checks = SERVICE_TIME_CERTIFICATE | SERVICE_TIME_EPOCH,
     .ledger = SERVICE_LEDGER_EPOCH,
     .epoch_kind = LEDGER_VOTE,
     .durable_audit = true,
     .parse = service_parse_vote},
    {.operation = SIGNER_OP_SIGN_SNAPSHOT_HEADER,
     .what = "snapshot header",
     .key = SERVICE_KEY_SIGNING,
     .scope = SERVICE_SCOPE_ORIGIN,
     .time_checks =
         SERVICE_TIME_CERTIFICATE | SERVICE_TIME_EPOCH | SERVICE_TIME_EPOCH_TIMES | SERVICE_TIME_DATED,
     .ledger = SERVICE_LEDGER_EPOCH,
     .epoch_kind = LEDGER_SNAPSHOT_HEADER,
     .durable_audit = true,
     .parse = service_parse_header},
    {.operation = SIGNER_OP_SIGN_CHECKPOINT,
     .what = "checkpoint",
     .key = SERVICE_KEY_LOG,
     .scope = SERVICE_SCOPE_LOG,
     .time_checks = SERVICE_TIME_TREE_SIZE,
     .ledger = SERVICE_LEDGER_CHECKPOINT,
     .checkpoint_kind = LEDGER_CHECKPOINT_SIGNED,
     .durable_audit = true,
     .parse = service_parse_checkpoint},
    {.operation = SIGNER_OP_COSIGN_CHECKPOINT,
     .what = "cosigned checkpoint",
     .key = SERVICE_KEY_COSIGNATURE,
     .scope = SERVICE_SCOPE_ANY_LOG,
     .time_checks = SERVICE_TIME_TREE_SIZE,
     .ledger = SERVICE_LEDGER_CHECKPOINT,
     .checkpoint_kind = LEDGER_CHECKPOINT_COSIGNED,
     .durable_audit = true,
     .parse = service_parse_checkpoint},
    {.operation = SIGNER_OP_GET_KEYS, .what = "key list", .answer = service_get_keys},
    {.operation = SIGNER_OP_GET_CERTIFICATES,
     .what = "certificate bundle",
     .answer = service_get_certificates},
    {.operation = SIGNER_OP_CHECKPOINT_STATE, .what = "checkpoint state", .answer = service_checkpoint_state},
};

static const struct service_operation *service_operation_find(uint8_t operation)
{
	for (size_t i = 0; i < sizeof(service_operations) / sizeof(service_operations[0]); i++)
		if (service_operations[i].operation == operation)
			return &service_operations[i];
	return NULL;
}

/* The table must have a row for exactly the operations of the protocol, a signing row for each
 * one that signs, and in each row the checks its key and ledger rule cannot go without. Run at
 * open, so that a row added without them stops the signer before it signs anything. */
static int service_check_table(char *detail, size_t cap)
{
	for (unsigned operation = 0; operation <= UINT8_MAX; operation++) {
		const struct signer_operation_info *info = signer_operation_find((uint8_t)operation);
		const struct service_operation *row = service_operation_find((uint8_t)operation);
		const char *problem = NULL;
		if (!info && !row)
			continue;
		if (!info || !row)
			problem = "is in one of the protocol's and the signer's tables only";
		else if (info->kind == SIGNER_OPERATION_SIGNS &&
		         (row->key == SERVICE_KEY_NONE || !row->parse || row->answer))
			problem = "signs, but has no key and parser";
		else if (info->kind == SIGNER_OPERATION_QUERIES &&
		         (row->key != SERVICE_KEY_NONE || !row->answer || row->parse ||
		          row->scope != SERVICE_SCOPE_NONE || row->time_checks ||
		          row->ledger != SERVICE_LEDGER_NONE))
			problem = "is a query, but signs or checks";
		else if (row->key == SERVICE_KEY_SIGNING && !(row->time_checks & SERVICE_TIME_CERTIFICATE))
			problem = "signs with the signing key without checking its certificate";
		else if (row->ledger == SERVICE_LEDGER_EPOCH &&
		         (row->scope != SERVICE_SCOPE_ORIGIN || !(row->time_checks & SERVICE_TIME_EPOCH)))
			problem = "records epochs without checking them against its origin's schedule";
		else if ((row->time_checks &
		          (SERVICE_TIME_EPOCH | SERVICE_TIME_EPOCH_TIMES | SERVICE_TIME_PUBLISH_BY)) &&
		         row->scope != SERVICE_SCOPE_ORIGIN && row->scope != SERVICE_SCOPE_NAMESPACE)
			problem = "checks epochs without a namespace to take the schedule from";
		else if ((row->scope == SERVICE_SCOPE_LOG || row->scope == SERVICE_SCOPE_ANY_LOG) &&
		         (row->ledger != SERVICE_LEDGER_CHECKPOINT ||
		          !(row->time_checks & SERVICE_TIME_TREE_SIZE)))
			problem = "signs a log's checkpoint without the checkpoint rules";
		if (problem) {
			service_detail(detail, cap, "the signer's operation %u %s", operation, problem);
			return DIRAUTH_ERR_INTERNAL;
		}
	}
	return 0;
}

/* ---- namespaces ---- */

/* Copies and checks the configured namespaces: valid names and origins, none twice, schedules
 * in range. */
static int service_set_namespaces(struct signer_service *service,
                                  const struct signer_service_options *options, char *detail, size_t cap)
{
	if (options->namespace_count == 0 || options->namespace_count > SIGNER_SERVICE_MAX_NAMESPACES ||
	    !options->namespaces) {
		service_detail(detail, cap, "between 1 and %d namespaces must be configured",
		               SIGNER_SERVICE_MAX_NAMESPACES);
		return DIRAUTH_ERR_CONFIG;
	}
	for (size_t i = 0; i < options->namespace_count; i++) {
		const struct signer_namespace *ns = &options->namespaces[i];
		size_t name_len = strnlen(ns->name, sizeof(ns->name));
		size_t origin_len = strnlen(ns->origin, sizeof(ns->origin));
		struct text_span name = {ns->name, name_len};
		if (name_len == sizeof(ns->name) || !text_is_name(name, NAMESPACE_NAME_MAX)) {
			service_detail(detail, cap, "namespace %zu: its name is not [a-z0-9-] (inner '-')",
			               i + 1);
			return DIRAUTH_ERR_CONFIG;
		}
		if (origin_len == sizeof(ns->origin) || !names_origin_is_valid(ns->origin, origin_len)) {
			service_detail(detail, cap, "namespace %s: its origin is not a valid log origin",
			               ns->name);
			return DIRAUTH_ERR_CONFIG;
		}
		if (schedule_check(&ns->schedule) != 0) {
			service_detail(detail, cap,
			               "namespace %s: its epoch schedule is out of range (length 1..%llu s, "
			               "validity 1..%llu epochs, genesis at most %llu)",
			               ns->name, (unsigned long long)SCHEDULE_LENGTH_MAX,
			               (unsigned long long)SCHEDULE_VALIDITY_MAX,
			               (unsigned long long)SCHEDULE_GENESIS_MAX);
			return DIRAUTH_ERR_CONFIG;
		}
		for (size_t j = 0; j < i; j++) {
			if (strcmp(service->namespaces[j].name, ns->name) == 0 ||
			    strcmp(service->namespaces[j].origin, ns->origin) == 0) {
				service_detail(detail, cap,
				               "namespace %s or its origin %s is configured twice", ns->name,
				               ns->origin);
				return DIRAUTH_ERR_CONFIG;
			}
		}
		service->namespaces[i] = *ns;
		service->namespace_count = i + 1;
	}
	return 0;
}

static const struct signer_namespace *service_namespace_by_name(const struct signer_service *service,
                                                                const char *name)
{
	for (size_t i = 0; name && i < service->namespace_count; i++)
		if (strcmp(service->namespaces[i].name, name) == 0)
			return &service->namespaces[i];
	return NULL;
}

static const struct signer_namespace *service_namespace_by_origin(const struct signer_service *service,
                                                                  const char *origin)
{
	for (size_t i = 0; origin && i < service->namespace_count; i++)
		if (strcmp(service->namespaces[i].origin, origin) == 0)
			return &service->namespaces[i];
	return NULL;
}

int signer_service_open(const struct signer_service_options *options, struct signer_service **out,
                        char *detail, size_t detail_cap)
{
	struct signer_service *service = NULL;
	uint64_t now = 0;
	int rc = DIRAUTH_ERR_CONFIG;

	*out = NULL;
	service_detail(detail, detail_cap, "%s", "");
	if ((rc = service_check_table(detail, detail_cap)) != 0)
		return rc;
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
	if (pthread_mutex_init(&service->ledger_lock, NULL) != 0) {
		free(service);
		return DIRAUTH_ERR_NOMEM;
	}
	service->ledger_lock_ready = true;
	if (pthread_mutex_init(&service->audit_lock, NULL) != 0) {
		rc = DIRAUTH_ERR_NOMEM;
		goto cleanup;
	}
	service->audit_lock_ready = true;
	memcpy(service->authority, options->authority, strlen(options->authority) + 1);
	service->audit = options->audit;
	service->now = options->now;
	service->now_context = options->now_context;
	service->clock_skew = options->clock_skew_seconds ? options->clock_skew_seconds : 300;
	if ((rc = service_set_namespaces(service, options, detail, detail_cap)) != 0)
		goto cleanup;

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
	/* The log's entries are its origin's snapshot headers: its size is judged by that origin's
	 * schedule, so the origin must be configured. */
	if (service->log_key &&
	    !service_namespace_by_origin(service, signer_key_verifier(service->log_key)->name)) {
		service_detail(detail, detail_cap,
		               "log key %s is named %s, which is the origin of no configured namespace",
		               options->log_key_path, signer_key_verifier(service->log_key)->name);
		rc = DIRAUTH_ERR_CONFIG;
		goto cleanup;
	}

	rc = options->now(options->now_context, &now);
	if (rc) {
		service_detail(detail, detail_cap, "the clock cannot be read: %s", dirauth_strerror(rc));
		rc = DIRAUTH_ERR_CONFIG;
		goto cleanup;
	}
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
	if (service->ledger_lock_ready)
		pthread_mutex_destroy(&service->ledger_lock);
	if (service->audit_lock_ready)
		pthread_mutex_destroy(&service->audit_lock);
	free(service);
}

/* ---- the audit log ---- */

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
static int service_audit_signature(struct signer_service *service, const struct service_request_state *state,
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
static void service_audit_refusal(struct signer_service *service, const struct service_request_state *state,
                                  int result)
{
	if (!service->audit)
		return;
	char subject[NAMES_ORIGIN_MAX + 128], outcome[64];
	service_audit_subject(state, "refuse", subject, sizeof subject);
	snprintf(outcome, sizeof outcome, "reason=%s", dirauth_error_name(result));
	(void)service_audit_write(service, state, subject, outcome);
}

/* ---- refusals ---- */

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

/* ---- parsing: the statement each signing operation names ---- */

static int service_parse_receipt(const struct signer_request *request, union service_parsed *parsed,
                                 struct service_statement *statement, struct signer_response *response)
{
	struct receipt *receipt = &parsed->receipt;
	if (request->text_len > RECEIPT_MAX_BYTES ||
	    receipt_parse(request->text, request->text_len, receipt) != 0)
		return service_refuse(response, DIRAUTH_ERR_REFUSED, "the text is not a valid receipt");
	statement->authority = receipt->authority;
	statement->namespace_name = receipt->namespace_name;
	statement->has_date = true;
	statement->date = receipt->accepted_at;
	statement->has_publish_by = true;
	statement->publish_by = receipt->publish_by_epoch;
	return 0;
}

static int service_parse_deregistration_receipt(const struct signer_request *request,
                                                union service_parsed *parsed,
                                                struct service_statement *statement,
                                                struct signer_response *response)
{
	struct deregistration_receipt *receipt = &parsed->deregistration_receipt;
	if (request->text_len > DEREGISTRATION_RECEIPT_MAX_BYTES ||
	    deregistration_receipt_parse(request->text, request->text_len, receipt) != 0)
		return service_refuse(response, DIRAUTH_ERR_REFUSED,
		                      "the text is not a valid deregistration receipt");
	statement->authority = receipt->authority;
	statement->namespace_name = receipt->namespace_name;
	statement->has_date = true;
	statement->date = receipt->accepted_at;
	statement->has_publish_by = true;
	statement->publish_by = receipt->last_listed_epoch;
	return 0;
}

static int service_parse_vote(const struct signer_request *request, union service_parsed *parsed,
                              struct service_statement *statement, struct signer_response *response)
{
	struct vote *vote = &parsed->vote;
	if (request->text_len > VOTE_MAX_BYTES || vote_parse(request->text, request->text_len, vote) != 0)
		return service_refuse(response, DIRAUTH_ERR_REFUSED, "the text is not a valid vote");
	statement->authority = vote->authority;
	statement->namespace_name = vote->namespace_name;
	statement->origin = vote->origin;
	statement->has_epoch = true;
	statement->epoch = vote->epoch;
	return 0;
}

static int service_parse_header(const struct signer_request *request, union service_parsed *parsed,
                                struct service_statement *statement, struct signer_response *response)
{
	struct snapshot_header *header = &parsed->header;
	if (request->text_len > SNAPSHOT_HEADER_MAX_BYTES ||
	    snapshot_header_parse(request->text, request->text_len, header) != 0)
		return service_refuse(response, DIRAUTH_ERR_REFUSED,
		                      "the text is not a valid snapshot header");
	statement->namespace_name = header->namespace_name;
	statement->origin = header->origin;
	statement->has_epoch = true;
	statement->epoch = header->epoch;
	statement->has_times = true;
	statement->times.valid_after = header->valid_after;
	statement->times.fresh_until = header->fresh_until;
	statement->times.valid_until = header->valid_until;
	statement->has_date = true;
	statement->date = header->valid_after;
	return 0;
}

static int service_parse_checkpoint(const struct signer_request *request, union service_parsed *parsed,
                                    struct service_statement *statement, struct signer_response *response)
{
	struct checkpoint *checkpoint = &parsed->checkpoint;
	if (request->text_len > CHECKPOINT_MAX_BYTES ||
	    checkpoint_parse(request->text, request->text_len, checkpoint) != 0)
		return service_refuse(response, DIRAUTH_ERR_REFUSED, "the text is not a valid checkpoint");
	statement->origin = checkpoint->origin;
	statement->has_tree = true;
	statement->tree_size = checkpoint->tree_size;
	memcpy(statement->root, checkpoint->root, sizeof(statement->root));
	/* dirauth's checkpoints carry no extension lines; accepting them would let dirauthd have
	 * free text signed, and two different signed notes for one tree head. */
	if (checkpoint->extension_count != 0)
		return service_refuse(response, DIRAUTH_ERR_REFUSED,
		                      "checkpoint extension lines are not signed");
	if (request->proof_count > MERKLE_MAX_PROOF)
		return service_refuse(response, DIRAUTH_ERR_REFUSED, "the consistency proof is too long");
	return 0;
}

/* ---- the checks, in the order every signing request meets them ---- */

/* The statement must belong to the signer's configuration: *ns gets the namespace whose
 * schedule judges it (NULL only for a log the configuration does not name). */
static int service_check_scope(const struct signer_service *service, const struct service_operation *row,
                               const struct service_statement *statement, const struct signer_namespace **ns,
                               struct signer_response *response)
{
	*ns = NULL;
	switch (row->scope) {
	case SERVICE_SCOPE_NAMESPACE:
		*ns = service_namespace_by_name(service, statement->namespace_name);
		if (!*ns)
			return service_refuse(
			    response, DIRAUTH_ERR_REFUSED,
			    "the %s is for namespace %.64s, which is not in the signer's configuration",
			    row->what, statement->namespace_name ? statement->namespace_name : "-");
		return 0;
	case SERVICE_SCOPE_ORIGIN:
		*ns = service_namespace_by_origin(service, statement->origin);
		if (!*ns)
			return service_refuse(
			    response, DIRAUTH_ERR_REFUSED,
			    "the %s is for origin %.255s, which no namespace of the signer's "
			    "configuration has",
			    row->what, statement->origin ? statement->origin : "-");
		if (!statement->namespace_name || strcmp((*ns)->name, statement->namespace_name) != 0)
			return service_refuse(
			    response, DIRAUTH_ERR_REFUSED,
			    "the %s names namespace %.64s, but origin %.255s is namespace %s in the signer's "
			    "configuration",
			    row->what, statement->namespace_name ? statement->namespace_name : "-",
			    (*ns)->origin, (*ns)->name);
		return 0;
	case SERVICE_SCOPE_LOG: {
		const struct note_verifier *log = signer_key_verifier(service->log_key);
		if (!statement->origin || strcmp(statement->origin, log->name) != 0)
			return service_refuse(response, DIRAUTH_ERR_REFUSED,
			                      "the checkpoint's origin %.128s is not the log key's name %s",
			                      statement->origin ? statement->origin : "-", log->name);
		*ns = service_namespace_by_origin(service, statement->origin);
		if (!*ns)
			return service_refuse(response, DIRAUTH_ERR_INTERNAL,
			                      "the log key's origin %s is not configured", log->name);
		return 0;
	}
	case SERVICE_SCOPE_ANY_LOG:
		*ns = service_namespace_by_origin(service, statement->origin);
		return 0;
	case SERVICE_SCOPE_NONE:
	default:
		return 0;
	}
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

/* now plus the skew, saturating: a clock file may say anything. */
static uint64_t service_latest_time(const struct signer_service *service, uint64_t now)
{
	return now > UINT64_MAX - service->clock_skew ? UINT64_MAX : now + service->clock_skew;
}

/* The latest moment whose epoch ns may be preparing: now plus the skew, plus the namespace's
 * prepare_seconds (the snapshot of an epoch is voted on and signed that long before it begins). */
static uint64_t service_prepared_time(const struct signer_service *service, const struct signer_namespace *ns,
                                      uint64_t now)
{
	uint64_t latest = service_latest_time(service, now);
	uint64_t prepare = ns ? ns->schedule.prepare : 0;
	return latest > UINT64_MAX - prepare ? UINT64_MAX : latest + prepare;
}

/* The epoch of a vote or header must be a current one of its origin's schedule by the signer's
 * own clock: one that contains a moment within the skew of now, or, when the namespace's
 * snapshots are prepared before their epoch (prepare_seconds), one whose preparation has begun
 * within the skew of now. A compromised dirauthd asking for a far epoch would otherwise make
 * every real epoch after it a rollback for ever. */
static int service_check_epoch(const struct signer_service *service, uint64_t now,
                               const struct service_operation *row, const struct signer_namespace *ns,
                               uint64_t epoch, struct signer_response *response)
{
	uint64_t earliest = now > service->clock_skew ? now - service->clock_skew : 0;
	uint64_t first = 0, last = 0;
	if (schedule_epoch_of(&ns->schedule, service_prepared_time(service, ns, now), &last) != 0)
		return service_refuse(response, DIRAUTH_ERR_STALE,
		                      "the %s's epoch %llu of %.255s has not begun: no epoch has by the "
		                      "signer's clock (now %llu, genesis %llu)",
		                      row->what, (unsigned long long)epoch, ns->origin,
		                      (unsigned long long)now, (unsigned long long)ns->schedule.genesis);
	if (schedule_epoch_of(&ns->schedule, earliest, &first) != 0)
		first = 0;
	if (epoch > last)
		return service_refuse(response, DIRAUTH_ERR_STALE,
		                      "the %s's epoch %llu of %.255s has not begun by the signer's clock: "
		                      "the latest epoch within %llu s of now (%llu) is %llu",
		                      row->what, (unsigned long long)epoch, ns->origin,
		                      (unsigned long long)service->clock_skew, (unsigned long long)now,
		                      (unsigned long long)last);
	if (epoch < first)
		return service_refuse(response, DIRAUTH_ERR_STALE,
		                      "the %s's epoch %llu of %.255s is over by the signer's clock: the "
		                      "earliest epoch within %llu s of now (%llu) is %llu",
		                      row->what, (unsigned long long)epoch, ns->origin,
		                      (unsigned long long)service->clock_skew, (unsigned long long)now,
		                      (unsigned long long)first);
	return 0;
}

/* A header's times are its epoch's by the schedule, to the second: no other valid-after,
 * fresh-until or valid-until is ever signed for that epoch. */
static int service_check_epoch_times(const struct service_operation *row, const struct signer_namespace *ns,
                                     const struct service_statement *statement,
                                     struct signer_response *response)
{
	struct epoch_times expected;
	if (schedule_epoch_times(&ns->schedule, statement->epoch, &expected) != 0)
		return service_refuse(response, DIRAUTH_ERR_STALE,
		                      "the %s's epoch %llu of %.255s has no times in the signer's schedule",
		                      row->what, (unsigned long long)statement->epoch, ns->origin);
	if (statement->times.valid_after != expected.valid_after ||
	    statement->times.fresh_until != expected.fresh_until ||
	    statement->times.valid_until != expected.valid_until)
		return service_refuse(
		    response, DIRAUTH_ERR_MISMATCH,
		    "the %s's times (valid-after %llu, fresh-until %llu, valid-until %llu) are not those "
		    "of epoch %llu of %.255s by the signer's schedule (%llu, %llu, %llu)",
		    row->what, (unsigned long long)statement->times.valid_after,
		    (unsigned long long)statement->times.fresh_until,
		    (unsigned long long)statement->times.valid_until, (unsigned long long)statement->epoch,
		    ns->origin, (unsigned long long)expected.valid_after,
		    (unsigned long long)expected.fresh_until, (unsigned long long)expected.valid_until);
	return 0;
}

/* A statement's own time must be now, give or take the clock skew (and, for a snapshot being
 * prepared, its namespace's prepare_seconds ahead), and inside the signing key's certificate:
 * otherwise a compromised dirauthd could have statements signed today that verifiers would count
 * tomorrow, after the compromise is over. */
static int service_check_dated(const struct signer_service *service, const struct signer_namespace *ns,
                               uint64_t now, uint64_t at, const char *what, struct signer_response *response)
{
	uint64_t latest = service_prepared_time(service, ns, now);
	if (at > latest)
		return service_refuse(
		    response, DIRAUTH_ERR_STALE,
		    "the %s is dated %llu, more than %llu s after the signer's clock (%llu)", what,
		    (unsigned long long)at, (unsigned long long)(latest - now), (unsigned long long)now);
	if (at < service->certificate.valid_after)
		return service_refuse(
		    response, DIRAUTH_ERR_STALE,
		    "the %s is dated %llu, before the signing key's certificate (valid after %llu)", what,
		    (unsigned long long)at, (unsigned long long)service->certificate.valid_after);
	return 0;
}

static int service_check_recent(const struct signer_service *service, uint64_t now, uint64_t at,
                                const char *what, struct signer_response *response)
{
	if (at < now && now - at > service->clock_skew)
		return service_refuse(
		    response, DIRAUTH_ERR_STALE,
		    "the %s is dated %llu, more than %llu s before the signer's clock (%llu)", what,
		    (unsigned long long)at, (unsigned long long)service->clock_skew, (unsigned long long)now);
	return 0;
}

/* The latest epoch of ns begun (or being prepared) by now plus the skew; *begun is false before
 * genesis. */
static void service_latest_epoch(const struct signer_service *service, uint64_t now,
                                 const struct signer_namespace *ns, bool *begun, uint64_t *epoch)
{
	*epoch = 0;
	*begun = schedule_epoch_of(&ns->schedule, service_prepared_time(service, ns, now), epoch) == 0;
}

/* A receipt promises the epoch its registration is published by. dirauthd promises the epoch
 * after the current one (two after, when its clock failed), so a promise further out is no
 * promise a monitor could hold it to in time. */
static int service_check_publish_by(const struct signer_service *service, uint64_t now,
                                    const struct service_operation *row, const struct signer_namespace *ns,
                                    uint64_t publish_by, struct signer_response *response)
{
	bool begun;
	uint64_t latest;
	service_latest_epoch(service, now, ns, &begun, &latest);
	if (publish_by > latest + SIGNER_RECEIPT_EPOCHS_AHEAD)
		return service_refuse(response, DIRAUTH_ERR_STALE,
		                      "the %s promises epoch %llu of namespace %s, more than %d epochs past "
		                      "epoch %llu, the latest begun by the signer's clock within %llu s",
		                      row->what, (unsigned long long)publish_by, ns->name,
		                      SIGNER_RECEIPT_EPOCHS_AHEAD, (unsigned long long)latest,
		                      (unsigned long long)service->clock_skew);
	return 0;
}

static int service_check_tree_size(const struct signer_service *service, uint64_t now,
                                   const struct service_operation *row, const struct signer_namespace *ns,
                                   uint64_t tree_size, struct signer_response *response)
{
	bool begun;
	uint64_t latest;
	if (!ns)
		return 0; /* another operator's log: its schedule is not the signer's to know */
	service_latest_epoch(service, now, ns, &begun, &latest);
	uint64_t most = begun ? latest + 1 : 0;
	if (tree_size > most)
		return service_refuse(response, DIRAUTH_ERR_STALE,
		                      "the %s of %.255s has %llu entries, more than the %llu epochs of its "
		                      "schedule begun by the signer's clock within %llu s (one entry per "
		                      "epoch)",
		                      row->what, ns->origin, (unsigned long long)tree_size,
		                      (unsigned long long)most, (unsigned long long)service->clock_skew);
	return 0;
}

/* Runs the time checks the row names, in a fixed order. A check whose facts the parser did not
 * give cannot run, and denies. */
static int service_check_times(const struct signer_service *service, uint64_t now,
                               const struct service_operation *row, const struct signer_namespace *ns,
                               const struct service_statement *statement, struct signer_response *response)
{
	unsigned checks = row->time_checks;
	int rc = 0;
	if ((checks & (SERVICE_TIME_EPOCH | SERVICE_TIME_EPOCH_TIMES)) && (!ns || !statement->has_epoch))
		return service_refuse(response, DIRAUTH_ERR_INTERNAL, "the %s has no epoch to check",
		                      row->what);
	if ((checks & SERVICE_TIME_EPOCH_TIMES) && !statement->has_times)
		return service_refuse(response, DIRAUTH_ERR_INTERNAL, "the %s has no times to check",
		                      row->what);
	if ((checks & (SERVICE_TIME_DATED | SERVICE_TIME_RECENT)) && !statement->has_date)
		return service_refuse(response, DIRAUTH_ERR_INTERNAL, "the %s has no date to check",
		                      row->what);
	if ((checks & SERVICE_TIME_PUBLISH_BY) && (!ns || !statement->has_publish_by))
		return service_refuse(response, DIRAUTH_ERR_INTERNAL, "the %s has no promise to check",
		                      row->what);
	if ((checks & SERVICE_TIME_TREE_SIZE) && !statement->has_tree)
		return service_refuse(response, DIRAUTH_ERR_INTERNAL, "the %s has no size to check",
		                      row->what);

	if (checks & SERVICE_TIME_CERTIFICATE)
		rc = service_check_certificate(service, now, response);
	if (rc == 0 && (checks & SERVICE_TIME_EPOCH))
		rc = service_check_epoch(service, now, row, ns, statement->epoch, response);
	if (rc == 0 && (checks & SERVICE_TIME_EPOCH_TIMES))
		rc = service_check_epoch_times(row, ns, statement, response);
	if (rc == 0 && (checks & SERVICE_TIME_RECENT))
		rc = service_check_recent(service, now, statement->date, row->what, response);
	if (rc == 0 && (checks & SERVICE_TIME_DATED))
		rc = service_check_dated(service, ns, now, statement->date, row->what, response);
	if (rc == 0 && (checks & SERVICE_TIME_PUBLISH_BY))
		rc = service_check_publish_by(service, now, row, ns, statement->publish_by, response);
	if (rc == 0 && (checks & SERVICE_TIME_TREE_SIZE))
		rc = service_check_tree_size(service, now, row, ns, statement->tree_size, response);
	return rc;
}

/* Checks and records the statement in the ledger, under the ledger's lock: of two requests for
 * one (origin, epoch) or one log, the second sees what the first recorded. The record is
 * durable when this returns 0. */
static int service_record(struct signer_service *service, const struct service_operation *row,
                          const struct signer_request *request, const struct service_statement *statement,
                          const struct service_request_state *state, struct signer_response *response)
{
	uint8_t digest[CRYPTO_SHA256_SIZE];
	int rc = 0;
	switch (row->ledger) {
	case SERVICE_LEDGER_EPOCH:
		rc = crypto_sha256(request->text, request->text_len, digest);
		if (rc)
			return service_refuse(response, rc, "hashing failed");
		pthread_mutex_lock(&service->ledger_lock);
		rc = ledger_record_epoch(service->ledger, row->epoch_kind, statement->origin,
		                         statement->epoch, digest);
		pthread_mutex_unlock(&service->ledger_lock);
		break;
	case SERVICE_LEDGER_CHECKPOINT:
		pthread_mutex_lock(&service->ledger_lock);
		/* Another operator's log takes a record for ever: their number is bounded, so that the
		 * ledger keeps room for this signer's own namespaces. */
		if (!service_namespace_by_origin(service, statement->origin) &&
		    (rc =
		         ledger_checkpoint_room(service->ledger, statement->origin, SIGNER_OTHER_LOGS_MAX))) {
			pthread_mutex_unlock(&service->ledger_lock);
			return service_refuse(
			    response, rc,
			    rc == DIRAUTH_ERR_FULL
			        ? "the ledger already holds the checkpoints of %d logs that no "
			          "namespace of this signer names"
			        : "the ledger could not be read (%d logs at most)",
			    SIGNER_OTHER_LOGS_MAX);
		}
		rc = ledger_record_checkpoint(service->ledger, row->checkpoint_kind, statement->origin,
		                              statement->tree_size, statement->root, request->old_size,
		                              request->proof, request->proof_count);
		pthread_mutex_unlock(&service->ledger_lock);
		break;
	case SERVICE_LEDGER_NONE:
	default:
		return 0;
	}
	if (rc)
		return service_ledger_refusal(response, rc, row->what, state);
	return 0;
}

/* ---- signing ---- */

/* Fills the response with a note signature by key over message, after the audit line. */
static int service_sign_note(struct signer_service *service, const struct signer_key *key,
                             const struct service_request_state *state, const uint8_t *message,
                             size_t message_len, struct signer_response *response)
{
	int rc = signer_key_sign(key, message, message_len, &response->signature);
	if (rc)
		return service_refuse(response, rc, "signing failed: %s", dirauth_strerror(rc));
	rc = service_audit_signature(service, state, message, message_len, signer_key_verifier(key));
	if (rc) {
		memset(&response->signature, 0, sizeof(response->signature));
		return service_refuse(response, rc,
		                      "the audit log cannot be written: no signature is returned");
	}
	response->has_signature = 1;
	return 0;
}

/* A c2sp.org/tlog-cosignature over the checkpoint text, dated now by the signer's clock. */
static int service_cosign(struct signer_service *service, const struct service_request_state *state,
                          const struct signer_request *request, struct signer_response *response)
{
	struct buffer message;
	uint8_t signature[CRYPTO_ED25519_SIGNATURE_SIZE];
	uint64_t now = state->now;
	int rc;

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
	rc = service_audit_signature(service, state, message.data, message.len,
	                             &service->cosignature_verifier);
	buffer_free(&message);
	if (rc)
		return service_refuse(response, rc,
		                      "the audit log cannot be written: no signature is returned");

	cosignature_signature(&service->cosignature_verifier, now, signature, &response->signature);
	response->has_signature = 1;
	return 0;
}

static const struct signer_key *service_key(const struct signer_service *service, enum service_key key)
{
	switch (key) {
	case SERVICE_KEY_SIGNING:
		return service->signing_key;
	case SERVICE_KEY_LOG:
		return service->log_key;
	case SERVICE_KEY_COSIGNATURE:
		return service->cosignature_key;
	case SERVICE_KEY_NONE:
	default:
		return NULL;
	}
}

static void service_set_origin(struct service_request_state *state, const char *origin)
{
	size_t len = strnlen(origin, NAMES_ORIGIN_MAX);
	memcpy(state->origin, origin, len);
	state->origin[len] = '\0';
}

/* Every signing request, whatever its operation: the clock, the key, the statement, whose it
 * is, the time checks, the ledger, the signature and its audit line, in this order. */
static int service_sign(struct signer_service *service, const struct service_operation *row,
                        const struct signer_request *request, struct service_request_state *state,
                        struct signer_response *response)
{
	union service_parsed parsed;
	struct service_statement statement;
	const struct signer_namespace *ns = NULL;
	const struct signer_key *key;
	int rc;

	memset(&statement, 0, sizeof(statement));
	if (!state->has_now)
		return service_refuse(response, DIRAUTH_ERR_UNAVAILABLE,
		                      "the clock cannot be read: nothing is signed without the time");
	key = service_key(service, row->key);
	if (!key)
		return service_refuse(response, DIRAUTH_ERR_UNAVAILABLE, "no %s key is configured",
		                      row->key == SERVICE_KEY_LOG ? "log" : "cosignature");
	rc = row->parse(request, &parsed, &statement, response);
	if (statement.origin)
		service_set_origin(state, statement.origin);
	state->has_epoch = statement.has_epoch;
	state->epoch = statement.epoch;
	state->has_size = statement.has_tree;
	state->size = statement.tree_size;
	if (rc)
		return rc;
	if (statement.authority && strcmp(statement.authority, service->authority) != 0)
		return service_refuse(response, DIRAUTH_ERR_REFUSED, "the %s names authority %.128s, not %s",
		                      row->what, statement.authority, service->authority);
	if ((rc = service_check_scope(service, row, &statement, &ns, response)) != 0 ||
	    (rc = service_check_times(service, state->now, row, ns, &statement, response)) != 0 ||
	    (rc = service_record(service, row, request, &statement, state, response)) != 0)
		return rc;
	if (row->key == SERVICE_KEY_COSIGNATURE)
		return service_cosign(service, state, request, response);
	return service_sign_note(service, key, state, request->text, request->text_len, response);
}

/* ---- queries ---- */

static int service_get_keys(struct signer_service *service, const struct signer_request *request,
                            struct service_request_state *state, struct signer_response *response,
                            struct buffer *payload)
{
	char key_text[NOTE_VERIFIER_KEY_MAX + 1];
	int rc;

	(void)request;
	(void)state;
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

static int service_get_certificates(struct signer_service *service, const struct signer_request *request,
                                    struct service_request_state *state, struct signer_response *response,
                                    struct buffer *payload)
{
	(void)request;
	(void)state;
	int rc = buffer_append(payload, service->certificate_bundle.data, service->certificate_bundle.len);
	if (rc)
		return service_refuse(response, rc, "the certificate bundle cannot be copied");
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
		pthread_mutex_lock(&service->ledger_lock);
		int rc = ledger_checkpoint_latest(service->ledger, kinds[i].kind, state->origin, &size, root);
		pthread_mutex_unlock(&service->ledger_lock);
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

/* ---- one request ---- */

int signer_service_handle(struct signer_service *service, const struct signer_request *request,
                          struct signer_response *response, struct buffer *payload_storage)
{
	const struct signer_operation_info *info = signer_operation_find(request->operation);
	const struct service_operation *row = info ? service_operation_find(request->operation) : NULL;
	struct service_request_state state;
	int rc;

	memset(response, 0, sizeof(*response));
	memset(&state, 0, sizeof(state));
	buffer_reset(payload_storage);
	state.operation = info ? info->name : "unknown";
	state.durable_audit = !row || row->durable_audit;
	/* Signing requests, and requests for operations that do not exist, are audited; their
	 * time is read once, and a clock that cannot be read is an error, not a time. */
	bool audited = !row || row->key != SERVICE_KEY_NONE;
	if (audited)
		state.has_now = service->now(service->now_context, &state.now) == 0;

	if (!row)
		rc = service_refuse(response, DIRAUTH_ERR_REFUSED, "unknown operation %u",
		                    (unsigned)request->operation);
	else if (!info->takes_text && request->text_len)
		rc = service_refuse(response, DIRAUTH_ERR_REFUSED, "%s takes no text", info->name);
	else if (row->key == SERVICE_KEY_NONE)
		rc = row->answer(service, request, &state, response, payload_storage);
	else
		rc = service_sign(service, row, request, &state, response);

	if (rc) {
		response->has_signature = 0;
		memset(&response->signature, 0, sizeof(response->signature));
		buffer_reset(payload_storage);
		if (audited)
			service_audit_refusal(service, &state, rc);
	} else if (payload_storage->len) {
		response->payload = payload_storage->data;
		response->payload_len = payload_storage->len;
	}
	response->result = rc;
	return rc;
}
