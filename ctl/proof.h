/*
 * proof.h: what dirauthctl believes of a namespace's transparency log: the keys it pins for the
 * log, a checkpoint and an inclusion checked against them, an offline proof file judged whole
 * (dirauthctl verify) and one downloaded (dirauthctl proof).
 *
 * The pins. A log (tlog/tlog.md) is one per namespace origin, kept by each authority of the set:
 * the same tree, whose checkpoints each authority signs with its own log key (Ed25519, type 0x01,
 * named by the origin) and the authorities cosign (c2sp.org/tlog-cosignature, type 0x04, their
 * cosignature keys; other witnesses may cosign too). The trust bundle (schema/trust_bundle.h)
 * pins none of these keys yet, so the command line does: --log-key VKEY (repeated, one per
 * authority whose log is read, at most CTL_LOG_KEYS_MAX: a checkpoint signed by any of them is
 * the log's), --witness-key VKEY (repeated, at most CTL_LOG_WITNESSES_MAX), --witness-threshold
 * K (the distinct witnesses that must have cosigned; by default the trust bundle's threshold, as
 * k authorities cosign what the set publishes). What makes a checkpoint believed is the witness
 * quorum: one authority's log key alone can sign a fork, k cosigners cannot be made to. Without
 * --log-key the log is not checked at all; with it, it is checked every time, and a check that
 * cannot run denies.
 *
 * A proof file (c2sp.org/tlog-proof, tlog/proof.h) as dirauthd writes it carries the snapshot
 * header's signed note as its extra data. `dirauthctl verify` is libdirauth's check of such a
 * file (dirauth_verify_proof_file, libdirauth/proof.c), made in a context of the trust bundle
 * with the pins as its log options (ctl/client.h): it believes nothing the file says before each
 * of these holds, in this order:
 *   1. the file parses, and carries a header note (its extra) that parses, of a namespace the
 *      trust bundle pins and with its origin;
 *   2. the header is signed by the bundle's threshold of distinct pinned authorities, with signing
 *      keys that their identity keys certified at the header's valid-after: the certificate bundle
 *      (as GET /v1/certificates serves it, as fetch keeps it: DIR/NS/certificates) is given as a
 *      file, since an offline check downloads nothing. A proof is a statement about the past, so
 *      the header is judged at its own time only, like a link of fetch's history walk: an old
 *      proof of an expired snapshot still verifies;
 *   3. the checkpoint is of the namespace's origin, signed by the log key, cosigned by the
 *      threshold of distinct witnesses;
 *   4. the header's note text (the log's leaf) is entry `index` of the checkpoint's tree.
 * What is left here is the command's: the files read, the pins parsed (ctl_log_pins_parse, with
 * the same refusals as fetch's and monitor's), a --log-key named other than the header's origin
 * refused, and the library's statuses turned into exit statuses.
 *
 * Exit statuses (struct ctl_report): 65 for every check the data fails; 78 for pins that cannot
 * be used (a log key named other than the origin, a threshold above the witnesses, a namespace
 * the bundle does not pin, unusable authority pins); 66 and 74 for files; 70 when a check could
 * not run; 64 for options misused.
 */
#ifndef DIRAUTH_CTL_PROOF_H
#define DIRAUTH_CTL_PROOF_H

#include <dirauth/dirauth.h>

#include "ctl/report.h"
#include "crypto/merkle.h"
#include "schema/note.h"
#include "schema/snapshot.h"
#include "schema/trust_bundle.h"
#include "tlog/policy.h"
#include "tlog/proof.h"
#include "verify/verify.h"

#include <stddef.h>
#include <stdint.h>

#define CTL_LOG_KEYS_MAX      32
#define CTL_LOG_WITNESSES_MAX 32

/* The keys a client pins for a namespace's log. */
struct ctl_log_pins {
	int enabled;                                     /* a log key is pinned: the log is checked */
	struct note_verifier log_keys[CTL_LOG_KEYS_MAX]; /* type 0x01, distinct public keys */
	size_t log_key_count;
	struct note_verifier witnesses[CTL_LOG_WITNESSES_MAX]; /* type 0x04, distinct public keys */
	size_t witness_count;
	size_t quorum; /* distinct witnesses that must have cosigned; 0 asks for the log's signature only */
};

/*
 * The pins of the command line: log_key_count verifier keys of type 0x01 (none leaves the log
 * unchecked, out->enabled 0, and then no witness key or threshold may be given), count witness
 * keys of type 0x04; threshold_text NULL takes default_quorum. command prefixes messages.
 * Returns 0, or DIRAUTH_ERR_CONFIG with report: 64 for --witness-key or --witness-threshold
 * without --log-key, more than CTL_LOG_KEYS_MAX log keys or CTL_LOG_WITNESSES_MAX witness keys, a
 * threshold that is not a canonical decimal; 78 for a log key that is not an Ed25519 verifier key,
 * a witness key that is not a cosignature verifier key, one public key given twice as a log key
 * or as a witness, a threshold above the number of witness keys.
 */
int ctl_log_pins_parse(const char *command, const char *const *log_keys, size_t log_key_count,
                       const char *const *witness_keys, size_t count, const char *threshold_text,
                       size_t default_quorum, struct ctl_log_pins *out, struct ctl_report *report);

/* What a proof showed of the log. */
struct ctl_log_inclusion {
	uint64_t index;     /* the leaf's */
	uint64_t tree_size; /* the checkpoint's */
	merkle_hash root;
	size_t cosigned; /* distinct pinned witnesses that cosigned */
	size_t witness_count;
	size_t quorum;
};

/*
 * Checks proof's checkpoint against pins (enabled) for the log of origin: signed by one of the
 * log keys, cosigned by the quorum; and that leaf (leaf_len bytes: a snapshot header's note
 * text) is entry proof->index of its tree. Messages start with "<what>: ". Returns 0 with *out
 * filled; else the error with report: 78 (DIRAUTH_ERR_CONFIG) when a log key is not named origin
 * or the pins cannot be met; 65 "checkpoint: ..." (another origin, not a checkpoint, a bad
 * signature, signed by no pinned log key, too few cosignatures), 65 "inclusion: ..."
 * (DIRAUTH_ERR_PROOF); 70 when the check could not run.
 */
int ctl_log_check_inclusion(const char *what, const struct ctl_log_pins *pins, const char *origin,
                            const struct tlog_proof *proof, const uint8_t *leaf, size_t leaf_len,
                            struct ctl_log_inclusion *out, struct ctl_report *report);

/*
 * Steps 1 to 4 above on a proof file (len bytes) and a certificate bundle already in memory, in a
 * libdirauth context of bundle with pins (enabled) as its log options (ctl_client_context_new).
 * Returns 0 with *result filled (what dirauth_verify_proof_file verified), or nonzero with the
 * first refusal in report, each message "verify: <part>: <why>" in the library's words:
 * "proof: ..." (not a tlog-proof file, no header), "header: ..." (not a header note, a namespace
 * the bundle does not pin, another origin, the signatures), "certificates: ...", "checkpoint:
 * ...", "inclusion: ..."; and "verify: --log-key is named ..." (78) for a log key of another log
 * (ctl_client_log_pins_fit). Exit statuses are ctl_client_exit_code's: 78 for DIRAUTH_E_TRUST (a
 * namespace the bundle does not pin, unusable pins), 70 for DIRAUTH_E_NOMEM and
 * DIRAUTH_E_INTERNAL, 65 for every other refusal.
 */
int ctl_proof_verify(const struct trust_bundle *bundle, const uint8_t *certificates, size_t certificates_len,
                     const struct ctl_log_pins *pins, const uint8_t *file, size_t len,
                     struct dirauth_proof_info *result, struct ctl_report *report);

/* Reads proof_path (at most TLOG_PROOF_MAX_BYTES) and certificates_path (at most
 * CERTIFICATE_BUNDLE_MAX_BYTES), then ctl_proof_verify. A file that does not exist is 66, one
 * that cannot be read 74, one too large 65. */
int ctl_proof_verify_files(const struct trust_bundle *bundle, const char *certificates_path,
                           const struct ctl_log_pins *pins, const char *proof_path,
                           struct dirauth_proof_info *result, struct ctl_report *report);

struct ctl_proof_download {
	const char *server_url; /* http(s)://host[:port][/prefix] */
	const char *namespace_name;
	uint64_t epoch;
	const char *out_path; /* created, mode 0644, never overwritten */
};

/*
 * dirauthctl proof: GET <server>/v1/<ns>/log/proof/<epoch> (aborted past TLOG_PROOF_MAX_BYTES),
 * checks that it is a tlog-proof file whose extra is a header note of that namespace and epoch,
 * and writes it to out_path (checked not to exist before the download). It verifies no signature:
 * that is dirauthctl verify's. *size (may be NULL) gets the checkpoint's tree size, *index the
 * leaf's. Returns 0, or the error with report: 73 when out_path exists or cannot be created; 69
 * for an unreachable server or a 5xx; 76 for another status (the server's code and detail, e.g.
 * epoch_not_in_log); 65 for an answer that is not such a proof file; 64 for a URL too long.
 */
int ctl_proof_download_run(const struct ctl_proof_download *options, uint64_t *size, uint64_t *index,
                           struct ctl_report *report);

#endif
