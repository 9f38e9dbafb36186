/*
 * mirror_authority.h: one real authority with a transparency log, and `dirauthctl mirror` run
 * against it, for the mirror's integration tests (test_mirror.c, test_mirror_nginx.c).
 *
 * The authority is dirauthd and dirauth-signer on one file clock (launcher.h) with the example
 * keys, one namespace "mix" whose log its signer keeps and cosigns, epochs of
 * MIRROR_AUTHORITY_EPOCH_LENGTH seconds. The trust bundle pins its identity key; the log key and
 * the cosigner are what `--log-key` and `--witness-key` name. Every function aborts the test
 * (ck_abort) when it cannot do what it says.
 */
#ifndef DIRAUTH_TESTS_HARNESS_MIRROR_AUTHORITY_H
#define DIRAUTH_TESTS_HARNESS_MIRROR_AUTHORITY_H

#include "tests/harness/launcher.h"

#include "base/buffer.h"
#include "schema/note.h"

#include <stdint.h>
#include <sys/types.h>

#define MIRROR_AUTHORITY_EPOCH_LENGTH 60
#define MIRROR_AUTHORITY_FIRST_EPOCH  ((uint64_t)30000000) /* 1800000000 / 60 */

struct mirror_authority {
	struct launcher run;
	uint64_t now;                                /* the clock file's time */
	char bundle_path[LAUNCHER_PATH_MAX];         /* the trust bundle */
	char log_key[NOTE_VERIFIER_KEY_MAX + 1];     /* --log-key */
	char witness_key[NOTE_VERIFIER_KEY_MAX + 1]; /* --witness-key */
};

/* Lays out a fresh run directory (keys, certificate, configurations, trust bundle) and starts
 * the signer and dirauthd. */
void mirror_authority_start(struct mirror_authority *a);

/* Sets the clock into epoch and waits until dirauthd serves its snapshot and the log's proof of
 * it (the log follows the publication). */
void mirror_authority_publish(struct mirror_authority *a, uint64_t epoch);

/* Stops both processes and removes the run directory. */
void mirror_authority_stop(struct mirror_authority *a);

/* Starts `dirauthctl mirror` from server_url into out at the authority's time, its output
 * appended to log_path; with pause_at, held at that fault point (DIRAUTH_PAUSE_AT). Returns its
 * pid. */
pid_t mirror_authority_spawn_mirror(const struct mirror_authority *a, const char *server_url, const char *out,
                                    const char *pause_at, const char *log_path);

/* The same, waited for: its exit status (-1 if it did not exit by itself within a minute). */
int mirror_authority_run_mirror(const struct mirror_authority *a, const char *server_url, const char *out,
                                const char *log_path);

/* Registers count services of one endpoint each with provider-a's key at the authority's time
 * (their service files written into the run directory): a dozen make bodies for which a diff
 * between two epochs is worth offering. */
void mirror_authority_register(const struct mirror_authority *a, unsigned count);

/* The hex SHA-256 of the body of epoch that the authority serves (its header's body-sha256). */
void mirror_authority_body_sha256(const struct mirror_authority *a, uint64_t epoch, char hex[65]);

/* Waits until the authority serves the diff to epoch's body from the body whose SHA-256 is
 * base_hex, and puts its identity bytes into out (initialised by the caller). */
void mirror_authority_wait_for_diff(const struct mirror_authority *a, uint64_t epoch, const char *base_hex,
                                    struct buffer *out);

/* Every file under dir with its path relative to dir and its bytes, in a stable order, into out
 * (emptied first): two trees are the same when these are. */
void mirror_tree_listing(const char *dir, struct buffer *out);

#endif
