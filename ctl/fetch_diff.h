/*
 * fetch_diff.h: the body of the snapshot being fetched, asked for as a diff from the body the
 * mirror already holds (schema/snapshot-diff.md), so that following a namespace epoch after epoch
 * costs the bytes of what changed rather than a whole body each time.
 *
 * The base is the body of the latest held snapshot, named by its SHA-256 (the value its co-signed
 * header commits to), and only when the held file still hashes to it. A diff is a saving, never a
 * requirement: no diff offered (404), a server that fails, or a diff that is refused all leave the
 * caller to fetch the whole body, and the fetch goes on as if no diff had been asked for. A diff
 * that is taken has been applied to the held body and the result verified exactly as a body
 * fetched whole (verify/snapshot.h, verify_snapshot_diff).
 */
#ifndef DIRAUTH_CTL_FETCH_DIFF_H
#define DIRAUTH_CTL_FETCH_DIFF_H

#include "base/buffer.h"
#include "schema/snapshot.h"
#include "schema/trust_bundle.h"

#include <stddef.h>
#include <stdint.h>

struct net_pool;

#define CTL_FETCH_DIFF_WHY_MAX 256

/* What became of the diff asked for. */
struct ctl_fetch_diff_use {
	int asked;                        /* a base was held, so a diff was asked for */
	int missing;                      /* the server offers none from it (404) */
	int used;                         /* the body was rebuilt from it */
	uint64_t base_epoch;              /* the epoch of the base held */
	size_t bytes;                     /* the diff's bytes as served, when used */
	char why[CTL_FETCH_DIFF_WHY_MAX]; /* when asked and not used: why (a sentence) */
};

/* Asks server_url (its first base_len bytes: ctl_exchange_url_length) through pool for the body of
 * header's epoch as a diff from the body held in directory under namespace_name, the held snapshot
 * being the header note held_note (may be empty: nothing held, nothing asked), with
 * "Accept-Encoding: zstd, gzip" and authorization (a header line, or NULL). Returns 0 with body
 * (initialised by the caller) the verified body and *use filled, or DIRAUTH_ERR_NOT_FOUND with
 * *use saying why not: the caller fetches the whole body. Never reports a failure. */
int ctl_fetch_diff(struct net_pool *pool, const char *server_url, size_t base_len, const char *authorization,
                   const struct trust_bundle *bundle, const char *directory, const char *namespace_name,
                   const uint8_t *held_note, size_t held_len, const struct snapshot_header *header,
                   struct buffer *body, struct ctl_fetch_diff_use *use);

#endif
