/*
 * mirror.h: dirauthctl mirror, a static copy of one namespace under the very paths dirauthd
 * serves, so that fetch, monitor and proof (then verify) read a mirror as they read an authority,
 * and a mirror can mirror a mirror.
 *
 * The tree under DIR (docs/mirror.md, "The tree"; deploy/nginx/dirauth-mirror.conf maps the API
 * paths onto it):
 *
 *   v1/certificates                          the certificate bundle the snapshot was verified with
 *   v1/NS/snapshots/latest                   the newest verified header note          (pointer)
 *   v1/NS/snapshots/<e>/header               GET /v1/NS/snapshots/<e>                 (immutable)
 *   v1/NS/snapshots/<e>/body                 .../body, identity                        (immutable)
 *   v1/NS/snapshots/<e>/body.gz, body.zst    .../body, gzip and zstd, as the server sent them
 *   v1/NS/snapshots/<e>/diff/<base sha256>   .../diff/<base sha256>: the diff to the body of <e>
 *                                            from the kept body whose SHA-256 is <base sha256>
 *                                            (schema/snapshot-diff.md), identity (immutable)
 *   v1/NS/snapshots/<e>/diff/<base>.gz, .zst the same diff in gzip and zstd
 *   v1/NS/snapshots/<e>/records/<shard>      .../records/<shard>: the record shard of that name
 *                                            (schema/record-shard.md), built from the body and
 *                                            checked against the header (immutable)
 *   v1/NS/log/checkpoint                     the verified checkpoint                   (pointer)
 *   v1/NS/log/tile/...                       every hash tile and entry bundle of the checkpoint's
 *                                            tree, at dirauthd's paths (tlog/tile.h)   (immutable)
 *   v1/NS/log/proof/<e>/latest               GET .../log/proof/<e>: against the checkpoint (pointer)
 *   v1/NS/log/proof/<e>/<size>               GET .../log/proof/<e>/<size>, of the sizes it held
 *   v1/NS/log/consistency/<old>/<new>        from each of the CTL_MIRROR_CONSISTENCY_SPAN sizes
 *                                            below the checkpoint's (immutable); older ones are
 *                                            answered by the tiles (any tlog-tiles client)
 *
 * A path of the API cannot be both a file and a directory (snapshots/<e> and snapshots/<e>/body),
 * so an epoch's header is the file `header` in the epoch's directory and the proof against the
 * latest checkpoint the file `latest` in its proof directory; nginx rewrites the two API paths.
 *
 * One run, ctl_mirror_run:
 *
 *   1. The held state is the served tree itself: snapshots/latest, log/checkpoint, certificates
 *      and each kept epoch's header and body are hard-linked into a scratch fetch directory
 *      (DIR/.mirror-NS, never served), where ctl_fetch_run_servers does the whole fetch: the
 *      threshold of certified signatures, no rollback or equivocation, the chain back to the held
 *      header, the log's inclusion in a cosigned checkpoint consistent with the held one, the
 *      body (asked for as a diff from the served latest body, linked where fetch hands libdirauth
 *      its base), the held snapshot's revocations. fetch's own checks, not a copy of them.
 *   2. From the server that passed: the headers of the epochs between the held and the new one,
 *      walked again with ctl_mirror_verify_chain; each new epoch's body in gzip and zstd (and
 *      identity for the epochs between), each checked against its header by verify_snapshot_body;
 *      the tiles and entry bundles of the checkpoint's tree not held yet, the whole tree then
 *      verified: its root is the checkpoint's, each full tile hashes to its parent's entry, each
 *      bundle's entries to its level-0 tile. For each epoch new to the tree, the diff to its body
 *      from each body kept of an earlier epoch (snapshot_diff_build), kept when worth offering by
 *      dirauthd's rule and measure (snapshot_diff_worth_offering: the zstd diff against the zstd
 *      body), in identity, gzip and zstd. Everything is written into the scratch directory.
 *   3. The proofs computed from the verified tiles (tlog/tree.h): inclusion of each kept epoch's
 *      header against the checkpoint, consistency from the sizes below it.
 *   4. Only now the tree, by renames: the immutable files first (bodies before their header), the
 *      pointers last, in this order: certificates, each proof/<e>/latest, log/checkpoint,
 *      snapshots/latest. A crash (fault points mirror-immutable, mirror-proofs,
 *      mirror-checkpoint, mirror-latest, mirror-pruned) leaves the old latest with everything it
 *      names, or the new one with everything it names; the next run starts over from what is
 *      served.
 *   5. Pruning: an epoch is removed (the diffs from its body, then its body files, then its header, proofs
 * and directory) once it is neither among the --keep-epochs newest nor valid now (valid-until after now), and
 * the body (with every diff to it or from it) of an older epoch that holds what the new snapshot revokes at
 * once (fetch's rule: revocation overrides the cache); consistency proofs from sizes past the span.
 *
 * Any refusal in 1 to 3 changes no served file and no held state: the scratch directory is
 * removed (an equivocation's evidence file is kept, in DIR/evidence). One run at a time updates a
 * namespace of a tree (a lock on DIR/.mirror-NS.lock; another run meanwhile exits 75). Exit
 * statuses are fetch's (65 refused, 75 stale, not yet in the log or locked, 69/76 the server,
 * 73/74 the files, 70 internal).
 */
#ifndef DIRAUTH_CTL_MIRROR_H
#define DIRAUTH_CTL_MIRROR_H

#include "ctl/fetch.h"
#include "ctl/report.h"

#include <stddef.h>
#include <stdint.h>

#define CTL_MIRROR_KEEP_EPOCHS_DEFAULT 1                     /* with the epochs still valid now */
#define CTL_MIRROR_KEEP_EPOCHS_MAX     CTL_MIRROR_EPOCHS_MAX /* the largest --keep-epochs accepted */
#define CTL_MIRROR_CONSISTENCY_SPAN    64                    /* consistency proofs written per checkpoint */
#define CTL_MIRROR_EPOCHS_MAX          4096       /* epochs a tree holds, and one run takes, at most */
#define CTL_MIRROR_TREE_MAX            (1u << 24) /* leaves of a log the mirror takes */

struct ctl_mirror_options {
	/* bundle, namespace_name, now, policy and log (required: the mirror serves the log) as for
	 * fetch; server_url and directory are ignored. */
	const struct ctl_fetch_options *fetch;
	const char *const *server_urls; /* tried in turn, as by ctl_fetch_run_servers */
	size_t server_count;
	const char *directory; /* the tree's root, DIR */
	uint64_t keep_epochs;  /* at least 1 */
};

struct ctl_mirror_result {
	struct ctl_fetch_result fetched; /* the new latest snapshot, as fetch reports it */
	const char *server_url;          /* the server it came from (one of options->server_urls) */
	size_t epochs_written;           /* epochs whose header was written this run */
	uint64_t tree_size;              /* the log's checkpoint now served */
	size_t tiles_written;            /* hash tiles and entry bundles new this run */
	size_t diffs_written;            /* snapshot diffs new this run (each in three encodings) */
	size_t record_epochs_written;    /* epochs whose record shards were written this run */
	size_t epochs_pruned;
	size_t bodies_dropped; /* bodies removed for what the new snapshot revokes */
};

/*
 * The run above. attempts (server_count entries) and *attempt_count as ctl_fetch_run_servers
 * fills them. Returns 0 with *result filled, or a negative error with the failure in report
 * ("mirror <ns>: ..." for the mirror's own steps, fetch's words for fetch's).
 */
int ctl_mirror_run(const struct ctl_mirror_options *options, struct ctl_fetch_attempt *attempts,
                   size_t *attempt_count, struct ctl_mirror_result *result, struct ctl_report *report);

/* The mirror's own check of the headers it serves for the epochs between two it fetched
 * (mirror_history.c): the walk (verify_chain_*, verify/history.h) from the
 * verified header back to the held header note, over links (newest first, as the server holds
 * them for the epochs between; those after the held header was reached are not consulted, as the
 * network half would not have downloaded them), with the certificates as served and at most
 * max_chain epochs between the two. Returns 0 or the first refusal, in report: the held header
 * cannot be read back (65); the errors of ctl_keyring_build; DIRAUTH_ERR_BOUNDS when the new epoch
 * is too far ahead ("... must be re-seeded deliberately: check the new snapshot by other means,
 * then delete NS/latest.header and fetch again", 65); DIRAUTH_ERR_MISMATCH ("history does not
 * chain to the held snapshot (epoch H): ...", 65); the link's errors (65, or 70 when a check
 * could not run); DIRAUTH_ERR_INTERNAL (70) for links out of order or a header not newer. */
int ctl_mirror_verify_chain(const struct trust_bundle *bundle, const uint8_t *certificates,
                            size_t certificates_len, const uint8_t *held, size_t held_len,
                            const struct snapshot_header *header, const struct ctl_fetch_link *links,
                            size_t link_count, uint64_t max_chain, struct ctl_report *report);

#endif
