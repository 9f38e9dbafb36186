/*
 * service_internal.h: the contract between the files of the signing service (service.h is its
 * public face).
 *
 * The service is one object, struct signer_service, read-only after open but for its ledger and
 * audit log, each behind its own lock. Its work is split by what the parts hold:
 *   - service.c: opening and closing, the configured namespaces, and the one path every request
 *     takes (signer_service_handle), which signs through the steps below in a fixed order;
 *   - service_keys.c: the key files and certificates the service opens with, and the file
 *     permissions it insists on;
 *   - service_operations.c: the operation table (one row per operation of the protocol: its key,
 *     scope, time checks, ledger rule, audit durability), its check against the protocol's, the
 *     parser of each signed statement and the answer of each query;
 *   - service_checks.c: the checks a row names (whose statement it is, its times) and the ledger
 *     record that follows them;
 *   - service_audit.c: the audit log's lines.
 * Nothing here is for other modules: only the signer's own files include this header.
 */
#ifndef DIRAUTH_SIGNER_SERVICE_INTERNAL_H
#define DIRAUTH_SIGNER_SERVICE_INTERNAL_H

#include "schema/certificate.h"
#include "schema/checkpoint.h"
#include "schema/deregistration_receipt.h"
#include "schema/encoding.h"
#include "schema/note.h"
#include "schema/receipt.h"
#include "schema/snapshot.h"
#include "schema/vote.h"
#include "signer/key.h"
#include "signer/ledger.h"
#include "signer/service.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

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

/* ---- service.c ---- */

/* Writes a sentence into detail (capacity cap; either may be 0/NULL). */
void signer_service_detail(char *detail, size_t cap, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* Sets the response's refusal: its result and detail sentence. Returns result for chaining. */
int signer_service_refuse(struct signer_response *response, int result, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* The configured namespace of that name or origin (either may be NULL), or NULL. The pointer
 * lives as long as the service. */
const struct signer_namespace *signer_service_namespace_by_name(const struct signer_service *service,
                                                                const char *name);
const struct signer_namespace *signer_service_namespace_by_origin(const struct signer_service *service,
                                                                  const char *origin);

/* ---- service_keys.c ---- */

/* Refuses path unless it is a regular file (a directory when directory is true) owned by the
 * signer's own user that gives group and other nothing. what names it in the detail. Returns 0,
 * DIRAUTH_ERR_NOT_FOUND, DIRAUTH_ERR_IO or DIRAUTH_ERR_PERMISSION. */
int signer_service_check_private(const char *path, const char *what, bool directory, char *detail,
                                 size_t cap);

/* Loads the key file at path (what names it in the detail) after checking the file's and its
 * directory's modes. *out is the caller's, freed with signer_key_free. */
int signer_service_load_key(const char *path, const char *what, struct signer_key **out, char *detail,
                            size_t cap);

/* Reads the configured certificates into service->certificate (the first, which must certify
 * the signing key, be signed by the authority's identity and be valid at now) and
 * service->certificate_bundle (all of them, as served to dirauthd). */
int signer_service_load_certificates(struct signer_service *service,
                                     const struct signer_service_options *options, uint64_t now, char *detail,
                                     size_t cap);

/* ---- service_operations.c ---- */

/* The table's row for operation, or NULL when the signer has none. */
const struct service_operation *signer_service_operation_find(uint8_t operation);

/* Checks the table against the protocol's and for the checks no row may omit. Returns 0 or
 * DIRAUTH_ERR_INTERNAL with a detail naming the row. */
int signer_service_check_table(char *detail, size_t cap);

/* ---- service_checks.c ---- */

/* The statement must belong to the signer's configuration, as the row's scope says: *ns gets the
 * namespace whose schedule judges it (NULL only for a log the configuration does not name).
 * Returns 0 or the refusal set in response. */
int signer_service_check_scope(const struct signer_service *service, const struct service_operation *row,
                               const struct service_statement *statement, const struct signer_namespace **ns,
                               struct signer_response *response);

/* Runs the time checks the row names, in a fixed order, at now. A check whose facts the parser
 * did not give denies (DIRAUTH_ERR_INTERNAL). Returns 0 or the refusal set in response. */
int signer_service_check_times(const struct signer_service *service, uint64_t now,
                               const struct service_operation *row, const struct signer_namespace *ns,
                               const struct service_statement *statement, struct signer_response *response);

/* Checks and records the statement by the row's ledger rule, under the ledger's lock. The record
 * is durable when this returns 0; otherwise the ledger's refusal is set in response. */
int signer_service_record(struct signer_service *service, const struct service_operation *row,
                          const struct signer_request *request, const struct service_statement *statement,
                          const struct service_request_state *state, struct signer_response *response);

/* ---- service_audit.c ---- */

/* The audit line of a signature over message by key. Returns 0 only when it is written and
 * flushed (and fsynced when the state asks for it); 0 at once when there is no audit log. */
int signer_service_audit_signature(struct signer_service *service, const struct service_request_state *state,
                                   const uint8_t *message, size_t message_len,
                                   const struct note_verifier *key);

/* The audit line of a refusal with result (best effort: a refusal is returned whatever happens
 * here). */
void signer_service_audit_refusal(struct signer_service *service, const struct service_request_state *state,
                                  int result);

#endif
