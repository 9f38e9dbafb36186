/*
 * fetch.h: dirauthctl fetch, the mirror's pull of one namespace's latest snapshot.
 *
 * A mirror must never replace what it serves with something it has not verified, and must never
 * go backwards. Every check is libdirauth's (libdirauth/include/dirauth/dirauth.h): a fetch is
 * one update of the library, whose state is the mirror's directory. The library names each path
 * it needs, in this order, and refuses at the first that fails:
 *
 *   1. GET /v1/certificates and /v1/<ns>/snapshots/latest: the signed header, with at least the
 *      trust bundle's threshold of distinct pinned authorities signing with keys their
 *      identities certified for both its valid-after and now; namespace and origin the bundle's;
 *      plausible times and counts within the bundle's bounds;
 *   2. history, against DIR/NS/latest.header (the library's state, read and written here): an
 *      older epoch is a rollback, another header for the held epoch a split view (both notes are
 *      then kept, held first, as a headers evidence file in DIR/NS with the bundle's identity keys
 *      and the certificates of each, ctl/evidence.h, written only when ctl_evidence_verify proves
 *      one authority signed both); a newer epoch must chain back to the held one through
 *      GET /v1/<ns>/snapshots/<e> for the epochs in between, within a bounded number of epochs;
 *   3. the log, when its keys are pinned (ctl/proof.h's pins): GET /v1/<ns>/log/proof/<epoch>,
 *      the header in a checkpoint signed by the log and cosigned by the witness threshold,
 *      consistent with DIR/NS/latest.checkpoint (GET /v1/<ns>/log/consistency/<old>/<new>);
 *   4. the body: asked for as a diff from the held body DIR/NS/<held epoch>.body (the library
 *      takes it only when it hashes to what the held header signed; a diff missing or refused
 *      costs the whole body, never the fetch), verified against the header and every provider
 *      signature; nothing the held snapshot revoked may come back;
 *   5. only then the files, written by the library's callbacks before it believes anything: with
 *      the log checked, DIR/NS/<epoch>.tlog-proof and DIR/NS/latest.checkpoint first; then
 *      DIR/NS/<epoch>.body, DIR/NS/<epoch>.header, DIR/NS/certificates (as served, so that the
 *      mirror can be verified again offline) and last, atomically, DIR/NS/latest.header;
 *   6. the older snapshots kept in DIR/NS that hold a record the new one's revocations exclude
 *      are removed (fetch_revocations.h): revocation overrides the cache.
 *
 * What is left here is where the answers come from (the network through net/, or, for
 * ctl_fetch_verify_and_store, a snapshot already in memory), the mirror's files, and the words.
 * A mirror that was away longer than the chain bound is re-seeded deliberately (its operator
 * deletes latest.header), never silently.
 *
 * Every refusal is recorded in a struct ctl_report as "fetch <ns>: <the library's detail>": exit
 * 65 for anything the data got wrong, 75 for a header signed by the threshold whose valid-until
 * has passed (stale: never taken for fresh, never written) and for a snapshot not yet under a
 * checkpoint of the log, 78 for a namespace the bundle does not pin, 69/76 for the server, 73/74
 * for the local files, 70 when a check could not run.
 *
 * Several servers (authorities or mirrors of the same namespace) are tried in turn by
 * ctl_fetch_run_servers: the first whose snapshot passes every check is stored, and each server
 * skipped before it is kept with its refusal for the caller to print. A server is never trusted
 * for being listed first: each is held to the same checks, and a mirror never goes backwards
 * whatever the order (the held header is read again for each).
 */
#ifndef DIRAUTH_CTL_FETCH_H
#define DIRAUTH_CTL_FETCH_H

#include "ctl/fetch_revocations.h"
#include "ctl/proof.h"
#include "ctl/report.h"
#include "base/buffer.h"
#include "schema/snapshot.h"
#include "schema/trust_bundle.h"
#include "verify/snapshot.h"

#include <stddef.h>
#include <stdint.h>

#define CTL_FETCH_DEFAULT_DIRECTORY "./mirror"

/* The largest header note downloaded (latest, and each header of the history walk). */
#define CTL_FETCH_HEADER_NOTE_MAX VERIFY_HEADER_NOTE_MAX

#define CTL_FETCH_NAMES_MAX       VERIFY_NAMES_MAX
#define CTL_FETCH_SERVERS_MAX     32         /* the most --server URLs one fetch tries */
#define CTL_FETCH_MAX_CHAIN_LIMIT 1000000ULL /* the largest --max-chain accepted */

#define CTL_FETCH_LOG_HELD       "latest.checkpoint" /* DIR/NS/: the checkpoint the log is held to */
#define CTL_FETCH_LOG_PROOF_FILE ".tlog-proof"       /* DIR/NS/<epoch>.tlog-proof */

#define CTL_FETCH_DIFF_WHY_MAX 256

/* What became of the body asked for as a diff from the held one. */
struct ctl_fetch_diff_use {
	int asked;                        /* a base was held, so a diff was asked for */
	int missing;                      /* the server offers none from it */
	int used;                         /* the body was rebuilt from it */
	int held;                         /* the same snapshot as held: its body kept, none fetched */
	uint64_t base_epoch;              /* the epoch of the base held */
	size_t bytes;                     /* the diff's bytes as served, when used */
	char why[CTL_FETCH_DIFF_WHY_MAX]; /* not used though a base could have been: why (a sentence) */
};

/* What a successful fetch verified, for the summary line. */
struct ctl_fetch_result {
	char namespace_name[NAMESPACE_NAME_MAX + 1];
	uint64_t epoch;
	uint64_t record_count;
	size_t signer_count;                    /* distinct pinned authorities whose certified keys signed */
	size_t authority_count;                 /* authorities in the bundle */
	char signer_names[CTL_FETCH_NAMES_MAX]; /* their names, ", "-separated, bundle order */
	/* Step 3: whether the log was checked, and what it showed. */
	int log_checked;
	struct ctl_log_inclusion log;
	int log_had_held;       /* a checkpoint was held, and the new one is consistent with it */
	uint64_t log_held_size; /* its size */
	/* Step 6 (fetch_revocations.h): the older kept snapshots dropped because they hold what the
	 * new one revokes: how many, and the first CTL_FETCH_DROPPED_MAX of their epochs. */
	size_t dropped_count;
	uint64_t dropped[CTL_FETCH_DROPPED_MAX];
	/* The body asked for as a diff from the held one: whether it was, and taken. */
	struct ctl_fetch_diff_use diff;
};

/* A signed header note the server holds for one epoch (GET /v1/NS/snapshots/<epoch>), as served. */
struct ctl_fetch_link {
	uint64_t epoch; /* the epoch it was requested for */
	const uint8_t *note;
	size_t note_len;
};

/* A snapshot already downloaded: the input of the verification half. */
struct ctl_fetch_input {
	const struct trust_bundle *bundle;
	const char *namespace_name; /* must be a namespace of the bundle */
	const char *directory;      /* the mirror root; files go to directory/namespace_name/ */
	uint64_t now;               /* unix seconds, from the caller's clock */
	const struct verify_snapshot_policy *policy; /* NULL: the defaults */
	/* The headers the server holds for the epochs between the held and the new one, newest
	 * first (epochs it holds none for are simply absent). */
	const struct ctl_fetch_link *links;
	size_t link_count;
	const uint8_t *header_note; /* the signed header note as served */
	size_t header_note_len;
	const uint8_t *certificates; /* the certificate bundle as served (GET /v1/certificates) */
	size_t certificates_len;
	const char *body_encoding; /* the body's Content-Encoding: "", "identity", "gzip", "zstd" */
	const uint8_t *body;       /* the body as served (compressed per body_encoding) */
	size_t body_len;
	/* Step 3: the log's pins (NULL or not enabled: not checked), the proof file as
	 * served for the header's epoch, and the consistency proof's text from the held checkpoint's
	 * size to the proof's (NULL: none given, refused when one is needed). */
	const struct ctl_log_pins *log;
	const uint8_t *proof;
	size_t proof_len;
	const uint8_t *consistency;
	size_t consistency_len;
};

/* Reads directory/namespace_name/latest.header into held (an initialised buffer, emptied first;
 * left empty when the mirror holds none). Returns 0; DIRAUTH_ERR_BOUNDS (larger than a header
 * note: 65), DIRAUTH_ERR_IO (74) or DIRAUTH_ERR_BOUNDS for a path too long (73), with the failure
 * in report. */
int ctl_fetch_read_held(const char *directory, const char *namespace_name, struct buffer *held,
                        struct ctl_report *report);

/* Step 5. Writes <epoch>.body (unless body is NULL: the one kept is the snapshot's), <epoch>.header,
 * certificates and then latest.header under directory/namespace_name/, each atomically and
 * durably. Returns 0, or a negative error with
 * the failure in report (73 when a directory or file cannot be created, 74 otherwise). */
int ctl_fetch_store(const char *directory, const char *namespace_name, uint64_t epoch, const uint8_t *note,
                    size_t note_len, const uint8_t *body, size_t body_len, const uint8_t *certificates,
                    size_t certificates_len, struct ctl_report *report);

/* Steps 1 to 6 on a downloaded snapshot, each request of the library answered from input (the
 * links by epoch, 404 for the epochs it has none for; the proof and the consistency proof for the
 * log; no diff). Returns 0 with *result filled, or the first refusal's error code with the
 * refusal in report; nothing is written unless every check passed (except the evidence file of
 * an equivocation). */
int ctl_fetch_verify_and_store(const struct ctl_fetch_input *input, struct ctl_fetch_result *result,
                               struct ctl_report *report);

struct ctl_fetch_options {
	const char *server_url; /* http(s)://host[:port][/prefix] */
	const struct trust_bundle *bundle;
	const char *namespace_name;
	const char *directory; /* NULL: CTL_FETCH_DEFAULT_DIRECTORY */
	uint64_t now;
	const struct verify_snapshot_policy *policy; /* NULL: the defaults */
	const struct ctl_log_pins *log;              /* step 3; NULL or not enabled: not checked */
	/* "Authorization: Bearer <secret>" of a private namespace (ctl/capability.h), sent with every
	 * request for the namespace's routes (never to /v1/certificates); NULL: none. */
	const char *authorization;
};

/* The whole fetch, each path the library names asked of options->server_url (bounded by what the
 * library reads at that step) through kept-alive connections: the body and the diff with
 * "Accept-Encoding: zstd, gzip", the namespace's paths with options->authorization. Returns 0 with
 * *result filled, or a negative error with the failure in report (69 server unreachable or 5xx, 76
 * any other answer than the step takes, 75 a snapshot the log has not caught up with, plus the
 * refusals above). */
int ctl_fetch_run(const struct ctl_fetch_options *options, struct ctl_fetch_result *result,
                  struct ctl_report *report);

/* What one server of ctl_fetch_run_servers answered. */
struct ctl_fetch_attempt {
	const char *server_url;       /* borrowed from the caller's list */
	int exit_code;                /* 0 for the server whose snapshot was stored */
	char message[CTL_REPORT_MAX]; /* its refusal, "fetch <ns>: ...", as ctl_fetch_run reports it */
};

/*
 * ctl_fetch_run for each of server_urls in turn (options->server_url is ignored), stopping at the
 * first that succeeds. attempts (server_count entries) gets one entry per server tried, in
 * order; *attempt_count how many were tried. Returns 0 with *result filled when one server's
 * snapshot was verified and stored (the entries before it are the servers skipped, and why).
 * Otherwise returns the last error with, in report:
 *   64 for no server or more than CTL_FETCH_SERVERS_MAX; 78 for a namespace the bundle does not
 *   pin (before any download);
 *   the server's own failure when it is the mirror's (73, 74, 70: its files or memory, which no
 *   other server would change), and then no further server is tried;
 *   75 "fetch <ns>: stale: none of the N servers served a snapshot that is valid now (each is
 *   listed above)" when any server offered a stale snapshot;
 *   else "fetch <ns>: none of the N servers served a snapshot that verifies (each is listed
 *   above)" with 65 when any server's answer failed verification, else the first server's status
 *   (69, 76, 78).
 * Nothing is written unless a snapshot passed every check (except evidence of an equivocation).
 */
int ctl_fetch_run_servers(const struct ctl_fetch_options *options, const char *const *server_urls,
                          size_t server_count, struct ctl_fetch_attempt *attempts, size_t *attempt_count,
                          struct ctl_fetch_result *result, struct ctl_report *report);

#endif
