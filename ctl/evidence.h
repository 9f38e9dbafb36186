/*
 * evidence.h: evidence files (schema/evidence.md) judged offline, made from the material a
 * monitor collected or a fetch refused, kept only once proven and written once, and the
 * dirauthctl verify-evidence command.
 *
 * What each kind proves, in the order the checks run (ctl_evidence_verify):
 *
 *   checkpoints  both statements are checkpoint notes of the file's origin, each signed (or
 *                cosigned) by at least one key the file lists, and they are different notes.
 *                Of one tree size with two roots: proven, one log cannot have both (tlog/tlog.md:
 *                one tree per origin, whatever member's log key signed). Of two sizes: the
 *                consistency proof the file carries (the one the log served) is checked from the
 *                smaller to the larger (RFC 9162 §2.1.4.2); if it verifies, they are one tree and
 *                nothing is shown; if not, the log is shown not to have proved its history
 *                append-only (an honest log can always answer with a proof that verifies). Named:
 *                every key that signed or cosigned both; when none did, every key of either.
 *   headers      both statements are snapshot header notes of the file's origin and epoch with
 *                different texts; named is every authority (of the trust bundle, or else of the
 *                file's key lines) whose signing key, certified by its identity key at each
 *                header's valid-after (the certificates parts), made a valid signature on both.
 *                No authority signed both: nothing is shown.
 *   votes        both statements are vote notes of the file's origin and epoch with different
 *                texts, of one authority (their `authority` line), each signed with a key that
 *                authority's identity certified (at the start of one of its certificates'
 *                windows: a vote carries no time of its own); named is that authority.
 *
 * The keys and the identity keys a file lists are only what its statements are checked against:
 * a reader of the verdict compares the named keys with the ones it pins (a trust bundle for
 * authorities; the log keys and cosignature keys it gives dirauthctl --log-key, --witness-key).
 */
#ifndef DIRAUTH_CTL_EVIDENCE_H
#define DIRAUTH_CTL_EVIDENCE_H

#include "ctl/report.h"
#include "base/buffer.h"
#include "schema/evidence.h"
#include "schema/trust_bundle.h"
#include "verify/verify.h"

#include <stddef.h>
#include <stdint.h>

/* verify-evidence's exit statuses besides 0 (nothing shown) and the usage ones. */
#define CTL_EVIDENCE_EXIT_PROVEN  3 /* the file proves misbehaviour */
#define CTL_EVIDENCE_EXIT_INVALID 1 /* the file is not evidence: it does not parse or check */

#define CTL_EVIDENCE_SUMMARY_MAX 768
#define CTL_EVIDENCE_NAMES_MAX   (EVIDENCE_KEYS_MAX * (NOTE_VERIFIER_KEY_MAX + 16))

/* What a valid evidence file shows. */
struct ctl_evidence_verdict {
	enum evidence_kind kind;
	char origin[SNAPSHOT_ORIGIN_MAX + 1];
	int proven;                             /* 1: misbehaviour is shown; 0: the statements agree */
	size_t named_count;                     /* keys or authorities named */
	char named[CTL_EVIDENCE_NAMES_MAX];     /* ", "-separated: "<name>+<key id hex>" */
	char summary[CTL_EVIDENCE_SUMMARY_MAX]; /* one sentence: what the two statements say */
};

/*
 * Checks an evidence file (len bytes) offline as above; bundle (may be NULL) pins the
 * authorities of headers and votes instead of the file's key lines, and must then pin the file's
 * origin. Returns 0 with *verdict filled; else the file is not valid evidence and detail gets why
 * ("evidence: ...", "statement 2: ..."): DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_BOUNDS (the file or a
 * statement does not parse), DIRAUTH_ERR_MISMATCH (another origin or epoch than the file's, the
 * same statement twice, a checkpoint of two sizes without a consistency proof), DIRAUTH_ERR_UNKNOWN_KEY
 * (a statement signed by none of the keys or authorities), DIRAUTH_ERR_SIGNATURE (a signature by a
 * listed or certified key that does not verify), DIRAUTH_ERR_CONFIG (the bundle does not pin the
 * origin; no identity to check headers or votes against), DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_CRYPTO.
 */
int ctl_evidence_verify(const struct trust_bundle *bundle, const uint8_t *file, size_t len,
                        struct ctl_evidence_verdict *verdict, char *detail, size_t detail_cap);

/*
 * Begins *e as evidence of kind headers or votes: two statements (borrowed, not copied) of
 * origin's epoch, and as its keys the bundle's authorities (at most EVIDENCE_KEYS_MAX). The
 * certificates that tie their signing keys to those authorities are added with
 * ctl_evidence_add_certificates.
 */
void ctl_evidence_between(struct evidence *e, enum evidence_kind kind, const struct trust_bundle *bundle,
                          const char *origin, uint64_t epoch, const uint8_t *first, size_t first_len,
                          const uint8_t *second, size_t second_len);

/* Adds a certificate bundle (borrowed) to *e unless it is empty, already there, or
 * EVIDENCE_CERTIFICATES_MAX are. */
void ctl_evidence_add_certificates(struct evidence *e, const uint8_t *certificates, size_t len);

/*
 * Writes file (len bytes) into directory (created if missing) as
 * "<kind>-<namespace>-<epoch or size>-<first 8 bytes of its SHA-256 in hex>.evidence", mode 0644,
 * never overwriting: the same evidence found again is the same file. path (may be NULL, room for
 * path_cap) gets its path; *created (may be NULL) 1 when it was written now, 0 when it existed.
 * Returns 0, DIRAUTH_ERR_BOUNDS (path too long), the errors of ctl_file_create and
 * ctl_directory_create.
 */
int ctl_evidence_write(const char *directory, enum evidence_kind kind, const char *namespace_name,
                       uint64_t number, const uint8_t *file, size_t len, char *path, size_t path_cap,
                       int *created);

/*
 * Keeps *e as an evidence file when it proves misbehaviour, by the check verify-evidence --trust
 * makes with bundle (ctl_evidence_verify): encodes it, verifies it, then writes it with
 * ctl_evidence_write into directory under namespace_name and number. This is the one way
 * dirauthctl fetch and dirauthctl monitor keep what they find: nothing that verify-evidence would
 * not prove is ever written.
 *
 * Two certificate bundles, and no proof with both: *e is tried once more with the second alone. A
 * bundle kept with the first statement may certify a key whose signature on the second statement
 * does not verify (it was never counted there), and ctl_evidence_verify refuses a signature by a
 * certified key that does not verify, while the second's own certificates prove it. *e itself is
 * not changed; its statements and certificates are only read.
 *
 * Returns 0 with path (room for path_cap, may be NULL) and *created (may be NULL) as
 * ctl_evidence_write gives them. Else nothing was written, and why (room for why_cap) says what
 * stopped it, worded to follow "evidence could not be written: ", and the error is that of the
 * first attempt: "it does not verify: <detail>" (ctl_evidence_verify's errors), "it proves
 * nobody's misbehaviour: <summary>" (DIRAUTH_ERR_UNKNOWN_KEY), "cannot encode it: <error>"
 * (evidence_encode's), "cannot write into <directory>: <error>" (ctl_evidence_write's).
 */
int ctl_evidence_keep(const struct trust_bundle *bundle, const struct evidence *e, const char *directory,
                      const char *namespace_name, uint64_t number, char *path, size_t path_cap, int *created,
                      char *why, size_t why_cap);

/*
 * dirauthctl verify-evidence FILE [--trust BUNDLE] (argv[0] is "verify-evidence"): prints the
 * verdict on stdout and returns the exit status: 3 proven (the named keys on stdout), 0 nothing
 * shown, 1 not valid evidence (the reason in report), 64 usage (its words are read by
 * ctl_command_run, ctl/command.h), and the trust bundle's statuses (66, 74, 78) from
 * ctl_trust_bundle_load; 66 and 74 for FILE.
 */
int ctl_evidence_command(int argc, char **argv, struct ctl_report *report);

#endif
