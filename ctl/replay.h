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
 * not by time. An answer of 202 whose sha256 is the note's is taken; 409 replayed or 409 revoked
 * is held already (the target is revoked here, or that revocation of the key is held: a restored
 * store holds a key's revocations up to some sequence, and those it lost are all above it). Any
 * other refusal stops the replay, as does a server that cannot be reached or answers 5xx: once a
 * later revocation of the same key were taken, the refused one could never be, and "held" would
 * no longer mean held. What was taken stays taken; running the replay again is safe, every
 * revocation held being answered 409.
 */
#ifndef DIRAUTH_CTL_REPLAY_H
#define DIRAUTH_CTL_REPLAY_H

#include "ctl/report.h"
#include "schema/snapshot.h"
#include "schema/trust_bundle.h"

#include <stddef.h>
#include <stdint.h>

struct ctl_replay_result {
	char namespace_name[NAMESPACE_NAME_MAX + 1]; /* the body's */
	uint64_t epoch;                              /* the body's */
	size_t listed;                               /* revocations the body lists */
	size_t taken;                                /* answered 202 */
	size_t held;                                 /* answered 409 replayed or revoked */
	size_t refused;                              /* answered another refusal: 0 or 1, the last */
};

/* Reads the snapshot body at body_path (decoded, as `dirauthctl fetch` keeps it) within bundle's
 * bounds and posts each revocation it lists to server_url as above. Returns 0 when none was
 * refused, with *result filled; else an error with the failure in report, *result filled as far
 * as it went: the body cannot be read (66 missing, 77 not readable, 74 not a file, 65 larger than
 * max-body-uncompressed) or is not a snapshot body (65); a revocation it lists does not parse (65);
 * the server cannot be reached or answered 5xx (69, DIRAUTH_ERR_UNAVAILABLE); an answer of 202
 * that names another note (65); DIRAUTH_ERR_REFUSED (76) when a revocation was refused:
 * "replay-revocations: the revocation of <target> (sequence N) was refused, and none after it was
 * posted: <why>". */
int ctl_replay_revocations(const struct trust_bundle *bundle, const char *body_path, const char *server_url,
                           struct ctl_replay_result *result, struct ctl_report *report);

#endif
