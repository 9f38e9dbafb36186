/*
 * register.h: dirauthctl register, from a YAML service description to an accepted, signed
 * registration.
 *
 * The provider's key signs; the authority only answers. So the tool builds the registration
 * itself (provider line = the key's own verifier, issued-at = now, expires = now + validity,
 * endpoints sorted by id as the grammar wants), signs it as a C2SP note, and either prints it
 * (dry run) or posts it to <server>/v1/registrations. An accepted registration comes back as a
 * receipt note, which is checked before success is claimed: it must name this namespace,
 * service and sequence and the SHA-256 of the exact note submitted, and with a trust bundle it
 * must carry a valid signature by one of the bundle's authorities (a receipt is the promise of
 * one authority, so the threshold is 1) made with a signing key that the authority's pinned
 * identity key certified for the receipt's accepted-at, and that authority must be the one the
 * receipt names. The certificates come from the authority's GET /v1/certificates, fetched
 * before the registration is submitted (keyring.h).
 *
 * A registration must reach the authorities, not one of them: with several servers the same
 * signed note goes to each (at once, one thread per server, so the whole command takes as long
 * as the slowest exchange: each is bounded by net/'s timeouts), every receipt is checked as
 * above against that server's own certificates, and success means that at least the trust
 * bundle's threshold of distinct pinned authorities accepted. A server is identified by the
 * receipt it returns, never by its URL: the authority credited is the pinned identity whose
 * certified signing key signed the receipt and whom the receipt names; two servers answering for
 * one authority (two addresses of one machine, a proxy) count once, and a server whose receipt
 * no pinned identity signed counts zero (hard rule 10). So several servers need a trust bundle.
 */
#ifndef DIRAUTH_CTL_REGISTER_H
#define DIRAUTH_CTL_REGISTER_H

#include "base/buffer.h"
#include "schema/certificate.h"
#include "signer/key.h"
#include "schema/receipt.h"
#include "ctl/report.h"
#include "ctl/service_file.h"
#include "schema/trust_bundle.h"
#include "verify/verify.h"

#include <stddef.h>
#include <stdint.h>

/* The largest answer read from the server: a receipt note from one authority, or an error. */
#define CTL_REGISTER_RESPONSE_MAX (64 * 1024)

/* The most servers one registration is submitted to (the most authorities a bundle pins). */
#define CTL_REGISTER_SERVERS_MAX TRUST_BUNDLE_MAX_AUTHORITIES

struct ctl_register_options {
	const char *key_path;
	const char *service_path;
	const char *server_url; /* may be NULL for a dry run, or when server_urls is given */
	/* Several servers (2 to CTL_REGISTER_SERVERS_MAX; needs trust_path): used instead of
	 * server_url when server_count > 1; a single one is the same as server_url. */
	const char *const *server_urls;
	size_t server_count;
	const char *trust_path; /* may be NULL: the receipt's signature is then not verified */
	int dry_run;
	uint64_t now; /* unix seconds, from the caller's clock */
};

/* What one server answered, when the registration went to several. */
enum ctl_register_outcome {
	CTL_REGISTER_ACCEPTED,    /* 202 with a receipt that checks */
	CTL_REGISTER_REFUSED,     /* an HTTP answer other than the protocol's: 4xx, 5xx, a 200 to the
	                           * submission, no certificates served */
	CTL_REGISTER_UNREACHABLE, /* no answer: cannot connect or resolve, timeout, connection cut */
	CTL_REGISTER_INVALID,     /* an answer that does not check: the receipt, the certificate
	                           * bundle, an answer larger than its bound */
	CTL_REGISTER_FAILED,      /* the exchange could not be made: a URL refused before sending, a
	                           * TLS failure, out of memory */
};

struct ctl_register_answer {
	const char *server_url; /* borrowed from options->server_urls */
	enum ctl_register_outcome outcome;
	long http_status;       /* of the last answer, 0 when none came */
	int counted;            /* accepted, and the first receipt of its authority: counts toward k */
	struct receipt receipt; /* when accepted */
	char receipt_signer[NOTE_NAME_MAX + 1]; /* when accepted: the verified authority */
	struct buffer receipt_note;             /* the receipt as received, when one came */
	struct ctl_report report; /* unless accepted: what this server alone would have reported */
};

struct ctl_register_result {
	struct buffer note; /* the signed registration note (submitted unless dry run) */
	uint8_t note_sha256[32];
	char namespace_name[NAMESPACE_NAME_MAX + 1];
	char service_hex[2 * SERVICE_ID_SIZE + 1];
	uint64_t sequence;
	int accepted;         /* a receipt came back and passed the checks */
	int receipt_verified; /* its signature was verified against a trust bundle */
	struct receipt receipt;
	char receipt_signer[NOTE_NAME_MAX + 1]; /* verified signer, or the receipt's authority line */
	struct buffer receipt_note;             /* the receipt note as received */
	/* With several servers: one answer per server, in the order given, and the count. */
	struct ctl_register_answer *answers;
	size_t answer_count;
	size_t accepted_count;                 /* distinct pinned authorities that accepted */
	size_t threshold;                      /* the trust bundle's k */
	size_t authority_count;                /* the trust bundle's n */
	char accepted_names[VERIFY_NAMES_MAX]; /* the authorities counted, ", "-separated */
};

/* One word for an outcome: "accepted", "refused", "unreachable", "invalid", "failed". */
const char *ctl_register_outcome_name(enum ctl_register_outcome outcome);

/* The outcome of one server's exchange that failed with rc, from the HTTP status it got (0: none)
 * and the one the protocol expected: invalid for an answer over its bound, refused for another
 * status, unreachable for no answer, failed otherwise. Also what ctl/endpoint.h reports. */
enum ctl_register_outcome ctl_register_exchange_outcome(int rc, long status, long expected);

/* The outcome of a check of a server's answer that refused, from the status it recorded in
 * report: invalid for bad data (65), failed otherwise. */
enum ctl_register_outcome ctl_register_check_outcome(const struct ctl_report *report);

/* Zeroes a result. */
void ctl_register_result_init(struct ctl_register_result *result);

/* Frees the buffers of a result. Accepts NULL. */
void ctl_register_result_free(struct ctl_register_result *result);

/* Builds the registration of file for key at time now and appends the signed note to note.
 * *sequence gets the sequence used (the file's, or now). Returns 0, or a negative error with
 * the refusal in report (65 when the fields do not make a valid registration). */
int ctl_register_build(const struct signer_key *key, const struct ctl_service_file *file, uint64_t now,
                       struct buffer *note, uint64_t *sequence, struct ctl_report *report);

/* Checks a receipt note returned for the note whose SHA-256 is note_sha256, which registered
 * (namespace_name, service_id, sequence). ring may be NULL (no signature check); otherwise the
 * receipt must be signed, at its accepted-at, by a key certified for a pinned identity, and by
 * the authority the receipt names. On success fills result's receipt, receipt_signer and
 * receipt_verified. Returns 0, or a negative error with the refusal in report (65):
 * DIRAUTH_ERR_UNKNOWN_KEY (no certified key of a pinned identity signed), DIRAUTH_ERR_SIGNATURE,
 * DIRAUTH_ERR_MISMATCH (a field, or the named authority did not sign), DIRAUTH_ERR_SYNTAX. */
int ctl_register_check_receipt(const uint8_t *receipt_note, size_t len, const char *namespace_name,
                               const uint8_t service_id[SERVICE_ID_SIZE], uint64_t sequence,
                               const uint8_t note_sha256[32], const struct certificate_keyring *ring,
                               struct ctl_register_result *result, struct ctl_report *report);

/* Loads a private key file for command what (every message begins "<what>: key <path>") as
 * ctl_certify_load_key does: 77 when its file is unsafe (a symlink, not regular, readable by group
 * or other), 66 when missing, 65 when it is not a key file. Returns 0 with *key set (the caller frees it with
 * signer_key_free), or the error of signer_key_load with the refusal in report. */
int ctl_register_load_key(const char *what, const char *path, struct signer_key **key,
                          struct ctl_report *report);

/* Reads and parses a YAML service description for command what: 66 when missing, 65 when larger
 * than CTL_SERVICE_FILE_MAX_BYTES or refused by ctl_service_file_parse ("FILE:LINE: problem").
 * Returns 0 (the caller calls ctl_service_file_clear) or the error, with the refusal in report. */
int ctl_register_load_service_file(const char *what, const char *path, struct ctl_service_file *file,
                                   struct ctl_report *report);

/* The whole command: load the key (77 when its file mode is unsafe, 66 when missing), the
 * service file (65 with FILE:LINE on a refusal, 66 when missing), the trust bundle if named
 * (78); build and sign; unless dry_run, GET the certificates when there is a trust bundle (the
 * errors of ctl_keyring_download), POST and check the receipt (69 unreachable or 5xx, 76
 * for a 4xx or any answer other than 202, 65 for a receipt that does not check). Returns 0 with
 * *result filled, or a negative error with the failure in report.
 *
 * With several servers (options->server_count > 1): 64 without a trust bundle ("several
 * --server need --trust ...") or with more than CTL_REGISTER_SERVERS_MAX; then each server gets
 * the certificates GET, the POST and the receipt check as above, concurrently, and its answer in
 * result->answers (a server whose certificates fail is not submitted to). Returns 0 (and
 * result->accepted) when at least the bundle's threshold of distinct pinned authorities
 * accepted; else DIRAUTH_ERR_THRESHOLD with 75 in report, "register: accepted by N of the M
 * authorities the trust bundle pins (names), it requires K (each server is listed above)". The
 * answers are filled in both cases. */
int ctl_register_run(const struct ctl_register_options *options, struct ctl_register_result *result,
                     struct ctl_report *report);

#endif
