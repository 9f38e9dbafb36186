/*
 * replay.h: dirauthctl replay-revocations: the revocations a snapshot listed, posted again to an
 * authority that lost them.
 *
 * An authority restored from a backup taken before a revocation no longer holds it, and a lone
 * authority has no peer to learn it from: it would publish the revoked endpoint again, and every
 * mirror that held a snapshot listing the revocation would refuse its snapshots (docs/operating.md,
 * "Backups"). The snapshots published after the backup still list every revocation since any
 * snapshot that held its target could be valid (schema/snapshot.h, method 2), and a mirror keeps
 * them (DIR/NS/<epoch>.body). Each listed revocation is a note signed by the provider or an
 * operator: anyone may post it again, and the authority checks it as it checks a provider's
 * (POST /v1/revocations). Nothing in the body is trusted: it is read within the trust bundle's
 * bounds (max-body-uncompressed, and max-records for its entries), and what it lists goes through
 * the authority's own checks.
 *
 * The revocations are posted in the order of their sequences, lowest first: an authority takes a
 * key's revocation only above the last it took from that key, and the body lists them by target,
 * not by time. The answers:
 *   - 202 whose sha256 is the note's: taken;
 *   - 409 revoked: held already (its target is revoked here);
 *   - 409 replayed: its sequence is not above its key's last here. Held already when the authority
 *     keeps that very note (GET /v1/<ns>/statements/<its SHA-256> answers it); otherwise a later
 *     revocation by the same key was taken since the restore (a provider or an operator revoked
 *     something new, or a peer's was learned; a key's sequences run across namespaces, so one that
 *     revoked in another namespace since counts too) and this one can never be taken:
 *     superseded, and its target must be revoked again with a new sequence. A namespace that does
 *     not serve its latest snapshot to this client (private, without its capability) cannot tell:
 *     the replay stops there (76);
 *   - any other refusal: refused, and no later revocation of that key is posted in this run
 *     (were one taken, the refused one never could be): not posted. The others go on;
 *   - a server that cannot be reached, or answers 5xx: the replay stops there.
 * What was taken stays taken; running the replay again is safe. So that nothing is superseded,
 * replay before anyone posts new revocations to the restored authority.
 */
#ifndef DIRAUTH_CTL_REPLAY_H
#define DIRAUTH_CTL_REPLAY_H

#include "ctl/report.h"
#include "schema/snapshot.h"
#include "schema/trust_bundle.h"

#include <stddef.h>
#include <stdint.h>

struct ctl_replay_options {
	const struct trust_bundle *bundle; /* its bounds are the body's */
	const char *body_path;
	const char *server_url;
	const char *authorization; /* "Authorization: Bearer ..." of a private namespace, or NULL */
};

struct ctl_replay_result {
	char namespace_name[NAMESPACE_NAME_MAX + 1];         /* the body's */
	uint64_t epoch;                                      /* the body's */
	size_t listed;                                       /* revocations the body lists */
	size_t taken, held, superseded, refused, not_posted; /* as above */
};

/* Reads the snapshot body at options->body_path (decoded, as `dirauthctl fetch` keeps it) within
 * the bundle's bounds and posts each revocation it lists to options->server_url as above. Returns
 * 0 when every one was taken or held already, with *result filled; else an error with the failure
 * in report, *result filled as far as it went: the body cannot be read (66 missing, 77 not
 * readable, 74 not a file, 65 larger than max-body-uncompressed) or is not a snapshot body (65); a
 * revocation it lists does not parse (65); the server cannot be reached or answered 5xx (69); an
 * answer over its bound (76 for the POST's, 65 for a GET's) or another status to a GET (76); an
 * answer of 202 that names another note (65); the namespace not served to this client (76);
 * DIRAUTH_ERR_REFUSED (76) when one was superseded, refused or not posted, the first named:
 * "replay-revocations: the revocation of <target> (sequence N) was refused, and none of its key's
 * after it was posted: <why>" or "... cannot be taken: a later revocation by its key is held;
 * revoke it again". */
int ctl_replay_revocations(const struct ctl_replay_options *options, struct ctl_replay_result *result,
                           struct ctl_report *report);

#endif
