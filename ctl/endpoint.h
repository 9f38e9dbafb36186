/*
 * endpoint.h: the provider's side of an endpoint's life after its registration: dirauthctl
 * health, revoke and deregister.
 *
 * Each command builds one signed document (schema/health.md, schema/revocation.md,
 * schema/deregistration.md), signs it with the key it is given, and posts the same bytes to every
 * authority named, at once (ctl_exchange_each), as register does: a statement must reach the
 * authorities, not one of them. What each authority answered is kept per server.
 *
 *   - health: a coarse class (healthy | degraded | draining | unavailable), an optional capacity
 *     class, issued-at now and a sequence, about one endpoint of a service file, signed by the
 *     provider key (signer provider) or by the endpoint's own key, the one the service file's
 *     `key:` names for that endpoint (signer endpoint: its liveness attestation). The endpoint
 *     must be one of the file's and, signed by the endpoint, the key must be the one the file
 *     names: both are checked before anything is posted. The answer, 202 with
 *     {"status":"accepted","sha256":...,"epoch":E}, must name the SHA-256 of the note posted.
 *   - revoke: an endpoint or a whole service, with a coarse reason, signed by the provider key or
 *     an operator key. The answer is the same JSON.
 *   - deregister: a service withdrawn up to a registration sequence, signed by the provider key.
 *     The answer is a deregistration receipt signed by the authority, checked like register's
 *     receipts (ctl_keyring_verify_receipt: with a trust bundle, signed at its accepted-at by a
 *     signing key that a pinned identity certified, by the authority it names) and against the
 *     request (namespace, service, sequence, the SHA-256 of the note posted); each receipt that
 *     checks is kept in a file of its own.
 *
 * Sequences: a health statement's must grow from one statement on the endpoint to the next, a
 * revocation's from one revocation by the key to the next. The sequence is the one given, or the
 * one after the last the state file records (at least the one given), or without either the
 * clock's unix time; with a state file the sequence is written there (atomically) once the note is
 * signed and before it is posted, so that a sequence is never used twice, even by a run that
 * fails. A deregistration's sequence is the highest registration sequence withdrawn: the one
 * given, else the service file's, else the clock's (every registration made by register without
 * a sequence before now).
 *
 * Success: health and revoke, every server accepted (one server: its own refusal otherwise; 75
 * when several were given and not all accepted); deregister, with several servers, at least
 * n - k + 1 distinct pinned authorities of the trust bundle returned a receipt that checks
 * (schema/deregistration.md: the service is then absent from every snapshot after the latest
 * last-listed-epoch), else 75.
 */
#ifndef DIRAUTH_CTL_ENDPOINT_H
#define DIRAUTH_CTL_ENDPOINT_H

#include "ctl/register.h"
#include "ctl/report.h"
#include "base/buffer.h"
#include "schema/deregistration_receipt.h"
#include "schema/health.h"
#include "schema/registration.h"
#include "schema/revocation.h"

#include <stddef.h>
#include <stdint.h>

/* The largest answer read from a server: the JSON of an accepted statement, a receipt, or an
 * error. */
#define CTL_ENDPOINT_RESPONSE_MAX (16 * 1024)
#define CTL_ENDPOINT_PATH_MAX     1024

enum ctl_endpoint_kind {
	CTL_ENDPOINT_HEALTH,         /* POST /v1/endpoint-health */
	CTL_ENDPOINT_REVOCATION,     /* POST /v1/revocations */
	CTL_ENDPOINT_DEREGISTRATION, /* POST /v1/deregistrations */
};

struct ctl_endpoint_options {
	enum ctl_endpoint_kind kind;
	const char *key_path; /* the signing key: provider's, endpoint's (health) or operator's */
	/* The service: a service file (required for health), or its namespace and service id. */
	const char *service_path;
	const char *namespace_name; /* when service_path is NULL */
	const char *service_hex;    /* when service_path is NULL: 64 lower-case hex */
	const char *endpoint_hex;   /* health: required; revocation: NULL revokes the whole service */
	/* health: enum health_signer; revocation: enum revocation_signer. */
	int signer;
	enum health_class health_class;
	int has_capacity;
	enum capacity_class capacity;
	enum revocation_reason reason;
	int has_sequence;
	uint64_t sequence;
	const char *state_path; /* health, revocation: the file keeping the last sequence; may be NULL */
	const char *const *server_urls;
	size_t server_count;           /* 1 to CTL_REGISTER_SERVERS_MAX */
	const char *trust_path;        /* deregistration: verify receipts (required with several) */
	const char *receipt_directory; /* deregistration: where receipts are kept (NULL: ".") */
	uint64_t now;                  /* unix seconds, from the caller's clock */
};

/* What one server answered. */
struct ctl_endpoint_answer {
	const char *server_url; /* borrowed from the options */
	enum ctl_register_outcome outcome;
	long http_status; /* of the last answer, 0 when none came */
	uint64_t epoch;   /* health, revocation: the first epoch whose view holds it */
	/* deregistration, when accepted: */
	struct deregistration_receipt receipt;
	int receipt_verified;                     /* signed by a pinned authority (with a trust bundle) */
	int counted;                              /* the first receipt of its authority */
	char receipt_signer[NOTE_NAME_MAX + 1];   /* the verified authority, or the receipt's own line */
	char receipt_path[CTL_ENDPOINT_PATH_MAX]; /* where the receipt was kept */
	struct ctl_report report;                 /* unless accepted: what went wrong */
};

struct ctl_endpoint_result {
	struct buffer note; /* the signed note posted */
	uint8_t note_sha256[32];
	char note_hex[65];
	char namespace_name[NAMESPACE_NAME_MAX + 1];
	char service_hex[2 * SERVICE_ID_SIZE + 1];
	uint64_t sequence;
	struct ctl_endpoint_answer *answers; /* one per server, in the order given */
	size_t answer_count;
	size_t accepted_count; /* servers (health, revocation) or distinct authorities (receipts) */
	size_t required;       /* how many must accept */
	char accepted_names[VERIFY_NAMES_MAX]; /* deregistration: the authorities counted */
};

/* Parses the answer of an accepted health statement or revocation, the JSON object
 * {"status":"accepted","sha256":"<64 lower-case hex>","epoch":<decimal>} (its members found by
 * name, each once needed), at most CTL_ENDPOINT_RESPONSE_MAX bytes. On success sha256 gets the
 * digest the server names and *epoch the epoch. Returns 0, DIRAUTH_ERR_BOUNDS (too long) or
 * DIRAUTH_ERR_SYNTAX (a member missing or malformed, another status). */
int ctl_endpoint_parse_accepted(const uint8_t *body, size_t len, uint8_t sha256[32], uint64_t *epoch);

/* "health", "revoke" or "deregister": the command's name, the prefix of its messages. */
const char *ctl_endpoint_command_name(enum ctl_endpoint_kind kind);

/* Zeroes a result. */
void ctl_endpoint_result_init(struct ctl_endpoint_result *result);

/* Frees what a result holds (it may be used again after ctl_endpoint_result_init). Accepts NULL. */
void ctl_endpoint_result_free(struct ctl_endpoint_result *result);

/* The whole command, once: loads the key (the errors of ctl_register_load_key), the service file
 * if named (ctl_register_load_service_file), the trust bundle if named (78); checks the target:
 * 64 for a namespace or service id that is not one, 65 for an endpoint id that is not one of the
 * service file's ("health: endpoint <id> is not an endpoint of FILE"), for signer endpoint when
 * the file names no key for it or the key is not that one; the sequence (74 when the state file
 * cannot be read or written, 77 when it may not be read, 65 when it is longer than a sequence's
 * line or holds no decimal); builds and signs the document (65 when its fields do not make one);
 * posts it to every server and checks each answer. Returns 0 with *result filled when the command
 * succeeded (see above), else a negative error with the failure in report: one server's own failure
 * (69 unreachable or 5xx, 76 refused, 65 an answer that does not check, 73 a receipt file that
 * exists), or with several servers DIRAUTH_ERR_THRESHOLD (75, "<command>: accepted by N of the M
 * servers" or "... of the authorities"). result->answers is filled whenever posting began. */
int ctl_endpoint_run(const struct ctl_endpoint_options *options, struct ctl_endpoint_result *result,
                     struct ctl_report *report);

#endif
