/*
 * monitor.h: dirauthctl monitor, the watcher of a namespace set's log and snapshots, which turns
 * any contradiction it sees into an evidence file (ctl/evidence.h, schema/evidence.md).
 *
 * A round asks every source (an authority or a mirror: anything serving the /v1 read routes) for
 * every namespace of the trust bundle:
 *
 *   1. GET /v1/certificates, then GET /v1/<ns>/snapshots/latest and, for the epochs between the
 *      last one the state holds as checked and that one (at most CTL_MONITOR_GAP_MAX),
 *      GET /v1/<ns>/snapshots/<epoch> (404: no snapshot for that epoch). Each header is verified
 *      by the trust bundle at its own valid-after (verify_snapshot_header), then compared with
 *      the header kept for its epoch (STATE/<ns>/epochs/<epoch>.header, the first one seen) and
 *      with the other sources' of this round: two texts for one (origin, epoch) are a `headers`
 *      evidence file, written when an authority signed both.
 *   2. With the log's pins (--log-key, ctl/proof.h): for each of those headers,
 *      GET /v1/<ns>/log/proof/<epoch>: its extra must carry the same header text, its checkpoint
 *      must verify by the pins and the header must be included (ctl_log_check_inclusion). A 404
 *      is "not yet in the log" (pending: asked again next round). Each such checkpoint is then
 *      compared with the one the state holds (STATE/<ns>/latest.checkpoint) and with the others
 *      of this round: the same size with another root is a `checkpoints` evidence file; sizes
 *      that differ need GET /v1/<ns>/log/consistency/<old>/<new> from the source (or, when it
 *      does not answer, any other), whose proof must verify, else the two notes and that proof
 *      are the evidence. The largest checkpoint shown consistent is kept.
 *   3. GET /v1/<ns>/evidence (an authority's own kept evidence; 404: none served): every
 *      `conflicting-headers` and `conflicting-votes` piece becomes a `headers` or `votes`
 *      evidence file when it verifies as proof (`other-header` pieces are not proof and are
 *      counted only).
 *
 * Only evidence that ctl_evidence_verify proves is written (ctl_evidence_keep, as fetch keeps an
 * equivocation: a `headers` file whose first header's certificates stand in the way is tried with
 * the second's alone), to EVIDENCE_DIR (by default STATE/evidence) under a name made of its
 * content: found again, it is the same file. A round ends in one line saying what it checked
 * (ctl_monitor_round.line) and its outcome: 0 nothing found, 3 misbehaviour found, 1 something
 * could not be checked (a source that does not answer, a statement that does not verify: these are
 * in failure lines, not evidence).
 *
 * State: STATE/<ns>/latest.checkpoint (the checkpoint note, believed when taken, like fetch's),
 * STATE/<ns>/checked (the highest epoch up to which every header seen was checked), STATE/<ns>/
 * epochs/<epoch>.header and STATE/<ns>/certificates (the last certificate bundle, which the kept
 * headers are checked with again when they meet a rival). Each file is replaced atomically.
 */
#ifndef DIRAUTH_CTL_MONITOR_H
#define DIRAUTH_CTL_MONITOR_H

#include "ctl/proof.h"
#include "ctl/report.h"
#include "schema/trust_bundle.h"

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

struct net_pool;

#define CTL_MONITOR_SOURCES_MAX         16
#define CTL_MONITOR_GAP_MAX             64 /* past headers fetched per source and round */
#define CTL_MONITOR_EVIDENCE_ANSWER_MAX ((size_t)64 << 20)
#define CTL_MONITOR_EXIT_FOUND          3
#define CTL_MONITOR_EXIT_UNCHECKED      1
#define CTL_MONITOR_LINE_MAX            4096
#define CTL_MONITOR_FAILURES_MAX        16 /* failure lines kept per round */

struct ctl_monitor_options {
	const struct trust_bundle *bundle;
	const char *const *sources;      /* base URLs, http(s)://host[:port][/prefix] */
	size_t source_count;             /* 1..CTL_MONITOR_SOURCES_MAX */
	const struct ctl_log_pins *pins; /* NULL or not enabled: the log is not checked */
	const char *state_dir;
	const char *evidence_dir; /* NULL: <state_dir>/evidence */
	struct net_pool *pool;    /* kept-alive connections for the sources (borrowed); NULL: the
	                             round makes its own */
};

/* What one round did. */
struct ctl_monitor_round {
	size_t headers;     /* header notes verified */
	size_t included;    /* of them shown in the log */
	size_t pending;     /* not yet in the log */
	size_t checkpoints; /* checkpoints verified */
	size_t consistent;  /* consistency proofs that verified */
	uint64_t held_size; /* the checkpoint kept after the round (of the last namespace) */
	size_t peer_pieces; /* pieces of dirauthd's evidence read */
	size_t found;       /* contradictions proven (evidence files, new or not) */
	size_t written;     /* evidence files written this round */
	size_t failure_count;
	char failures[CTL_MONITOR_FAILURES_MAX][CTL_REPORT_MAX];
	char evidence[CTL_MONITOR_LINE_MAX]; /* paths of the evidence files, ", "-separated */
	char line[CTL_MONITOR_LINE_MAX];     /* the round's one line */
};

/* One round as above. Returns its outcome: 0, CTL_MONITOR_EXIT_FOUND or
 * CTL_MONITOR_EXIT_UNCHECKED (also when the state cannot be read or written). *round is filled
 * either way. */
int ctl_monitor_round_run(const struct ctl_monitor_options *options, struct ctl_monitor_round *round);

/*
 * dirauthctl monitor --trust BUNDLE --source URL... [--log-key VKEY... [--witness-key VKEY...]
 * [--witness-threshold K]] [--state DIR] [--evidence-dir DIR] [--every SECONDS] (argv[0] is
 * "monitor"). Runs one round, or with --every one round every SECONDS (±10%, at random) until
 * *stop becomes non-zero (the caller's SIGTERM handler sets it), printing each round's line on
 * stdout and its failures on stderr. Returns 3 when any round found misbehaviour, else 1 when any
 * round could not check everything, else 0; 64 for options misused (its words are read by
 * ctl_command_read, ctl/command.h); the statuses of the trust bundle (66, 74, 78) and of the pins
 * (ctl_log_pins_parse).
 */
int ctl_monitor_command(int argc, char **argv, const volatile sig_atomic_t *stop, struct ctl_report *report);

#endif
