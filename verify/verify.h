/*
 * verify.h: the checks that decide whether a signed statement from another party is believed,
 * shared by everyone who takes one: a mirror pulling a snapshot, a monitor watching a log, an
 * authority taking a peer's vote or signature, a provider checking its receipt.
 *
 * The module is pure: it never reads a file, a socket or the clock ("now" is a parameter), never
 * prints, and knows no exit status. Every check is a function of bytes already in memory that
 * returns 0 or a negative dirauth_error (base/error.h) and, when it refuses, writes one human
 * sentence into a buffer the caller provides (`char *detail, size_t detail_cap`): what was
 * checked and why it failed, e.g. "header: wrong origin 'evil.test/mix', the trust bundle pins
 * 'dirauth.test/mix'". The caller decides what the refusal means for it (an exit status, an HTTP
 * answer, a log line) and may prefix who it was talking to. detail may be NULL (or detail_cap 0)
 * when the words are not wanted; when given, it is always NUL-terminated, empty after success,
 * and truncated to fit. VERIFY_DETAIL_MAX holds every detail this module writes untruncated.
 *
 * The parts:
 *   verify/keyring.h   pinned identities + their certificates = a keyring; a note verified
 *                      against it and a threshold of distinct identities, at one time or two;
 *                      why signatures did not count. Knows nothing of trust bundles, so that
 *                      an authority can verify its peers with identities pinned in its config.
 *   verify/snapshot.h  a snapshot header against a trust bundle (namespace, origin, times,
 *                      bounds, threshold), and a body against its header.
 *   verify/history.h   a new header against one held before: rollback, equivocation, and the
 *                      walk along `previous` from the new header back to the held one.
 *
 * Allowed dependencies: schema only.
 */
#ifndef DIRAUTH_VERIFY_VERIFY_H
#define DIRAUTH_VERIFY_VERIFY_H

#include "schema/note.h"

#include <stddef.h>
#include <stdint.h>

/* Room for any detail sentence this module writes. */
#define VERIFY_DETAIL_MAX 1024

/* Room for a time as verify_format_time writes it. */
#define VERIFY_TIME_TEXT_MAX 64

/* Room for the names of every identity a keyring pins, ", "-separated. */
#define VERIFY_NAMES_MAX (32 * (NOTE_NAME_MAX + 2))

/* Writes "<unix seconds> (<YYYY-MM-DD HH:MM:SS> UTC)" into out: details about validity windows
 * quote the number a document carries and the date a person reads. A time past the calendar's
 * range is written as the number alone. Never fails; thread-safe. */
void verify_format_time(uint64_t seconds, char out[VERIFY_TIME_TEXT_MAX]);

#endif
