/*
 * fetch_log.h: the log step of dirauthctl fetch (fetch.h, between the history and the body):
 * the snapshot offered must be in the namespace's transparency log, under a checkpoint signed by
 * the log key and cosigned by the witness threshold (ctl/proof.h's pins), and that checkpoint
 * must be consistent with the last one the mirror holds. The checkpoint is then kept with the
 * snapshot, so that the next fetch holds the log to it.
 *
 *   1. GET <server>/v1/<ns>/log/proof/<epoch> (at most TLOG_PROOF_MAX_BYTES): a tlog-proof file
 *      whose extra is a header note with the very text of the header fetched (verified by step
 *      1 of fetch.h), whose checkpoint verifies against the pins, and whose inclusion proof leads
 *      from that text to the checkpoint's root (ctl_log_check_inclusion). A 404 epoch_not_in_log
 *      or epoch_not_in_tree (the log has not caught up with the publication, or its checkpoint
 *      waits for cosignatures) is "try again later", 75.
 *   2. DIR/NS/latest.checkpoint, the checkpoint note held from the last fetch that checked the log
 *      (none: the first checkpoint that verifies is taken, as the first header is). Of size H and
 *      root R, against the new checkpoint of size N and root R': N < H is refused (the server's
 *      log is behind what the mirror saw); N = H needs R' = R; N > H needs the consistency proof
 *      GET <server>/v1/<ns>/log/consistency/<H>/<N> (at most TLOG_CONSISTENCY_MAX_BYTES) to
 *      verify from R to R' (RFC 9162 §2.1.4.2). Anything else means the log showed two histories.
 *   3. (ctl_fetch_log_store, after the body verified and before the snapshot's files) the proof file
 *      as served to DIR/NS/<epoch>.tlog-proof, which `dirauthctl verify` checks again offline with
 *      DIR/NS/certificates, then the checkpoint note to DIR/NS/latest.checkpoint, each atomically.
 *
 * Refusals are "fetch <ns>: log: <why>", 65 for what the data got wrong (the held checkpoint
 * unreadable too: a check that cannot run denies), 75 as above, 69/76 for the server's other
 * answers, 73/74 for the files, 78 for pins that do not fit the namespace's origin.
 *
 * Without pins (or pins not enabled), every function here does nothing and returns 0: a
 * namespace whose authorities keep no log is fetched as before.
 */
#ifndef DIRAUTH_CTL_FETCH_LOG_H
#define DIRAUTH_CTL_FETCH_LOG_H

#include "ctl/proof.h"
#include "ctl/report.h"
#include "base/buffer.h"
#include "schema/snapshot.h"

#include <stddef.h>
#include <stdint.h>

#define CTL_FETCH_LOG_HELD       "latest.checkpoint"
#define CTL_FETCH_LOG_PROOF_FILE ".tlog-proof" /* DIR/NS/<epoch>.tlog-proof */

/* What the step verified, and what it keeps. Initialise with ctl_fetch_log_init, release with
 * ctl_fetch_log_free. */
struct ctl_fetch_log {
	int checked;                        /* the log was checked (pins enabled) */
	struct ctl_log_inclusion inclusion; /* the new checkpoint and the leaf */
	int had_held;                       /* a checkpoint was held before */
	uint64_t held_size;
	struct buffer proof;      /* the proof file as served */
	struct buffer checkpoint; /* its checkpoint note */
};

void ctl_fetch_log_init(struct ctl_fetch_log *log);
void ctl_fetch_log_free(struct ctl_fetch_log *log);

/* Where the consistency proof comes from: the network half downloads it; the verification half
 * is given its bytes. Fills out (initialised, appended to) with the proof's text from old_size to
 * new_size, or returns an error with report. */
typedef int (*ctl_fetch_log_consistency)(void *context, uint64_t old_size, uint64_t new_size,
                                         struct buffer *out, struct ctl_report *report);

/*
 * Steps 1 (the proof file already downloaded: proof, proof_len) and 2 for the verified header
 * (note, note_len, parsed as header) of a fetch into directory, with pins (NULL or not enabled:
 * returns 0, log->checked 0). Returns 0 with *log filled, or the first refusal (see above).
 */
int ctl_fetch_log_verify(const struct ctl_log_pins *pins, const char *directory,
                         const struct snapshot_header *header, const uint8_t *note, size_t note_len,
                         const uint8_t *proof, size_t proof_len, ctl_fetch_log_consistency consistency,
                         void *context, struct ctl_fetch_log *log, struct ctl_report *report);

/* Steps 1 and 2 over the network, from server_url, each request with the header authorization
 * ("Authorization: Bearer ..." of a private namespace; NULL: none). */
int ctl_fetch_log_run(const struct ctl_log_pins *pins, const char *server_url, const char *authorization,
                      const char *directory, const struct snapshot_header *header, const uint8_t *note,
                      size_t note_len, struct ctl_fetch_log *log, struct ctl_report *report);

/* Step 3 for a checked log (nothing when log->checked is 0). Returns 0, or the failure with report
 * (73 when a file cannot be created, 74 otherwise). */
int ctl_fetch_log_store(const char *directory, const char *namespace_name, uint64_t epoch,
                        const struct ctl_fetch_log *log, struct ctl_report *report);

#endif
