/*
 * bundle.h: entry bundles (c2sp.org/tlog-tiles, tile/entries/<N>[.p/<W>]): the log entries of
 * one level-0 tile, each as a big-endian uint16 length followed by that many bytes.
 *
 * Bundle N holds entries 256·N .. 256·N + W − 1, W being the width in its path (256 for a full
 * bundle); entry i hashes (RFC 6962 leaf hash) to hash i of the level-0 tile with the same
 * coordinates. An entry is 0..TLOG_ENTRY_MAX bytes (the uint16 bounds it; dirauth's entries,
 * snapshot header texts, are never empty, but the format allows it). The decoder is strict: it
 * takes the width the path names and refuses fewer or more entries, a length running past the
 * end, and any trailing byte. Entries it returns point into the caller's buffer.
 */
#ifndef DIRAUTH_TLOG_BUNDLE_H
#define DIRAUTH_TLOG_BUNDLE_H

#include "base/buffer.h"

#include <stddef.h>
#include <stdint.h>

#define TLOG_ENTRY_MAX          65535 /* bytes in one entry: what a uint16 length can say */
#define TLOG_BUNDLE_MAX_ENTRIES 256
#define TLOG_BUNDLE_MAX_BYTES   (TLOG_BUNDLE_MAX_ENTRIES * (2 + TLOG_ENTRY_MAX))

/* One entry: len bytes at data (borrowed). */
struct tlog_entry {
	const uint8_t *data;
	size_t len;
};

/* Appends one entry (length prefix and bytes) to bundle. Returns 0, DIRAUTH_ERR_BOUNDS when len
 * exceeds TLOG_ENTRY_MAX, DIRAUTH_ERR_NOMEM. On error the bundle is unchanged. */
int tlog_bundle_append(struct buffer *bundle, const uint8_t *entry, size_t len);

/* Appends the bundle of count entries (1..TLOG_BUNDLE_MAX_ENTRIES) to out. Returns 0,
 * DIRAUTH_ERR_BOUNDS for a count or an entry out of bounds, DIRAUTH_ERR_NOMEM. On error out is
 * unchanged. */
int tlog_bundle_encode(const struct tlog_entry *entries, size_t count, struct buffer *out);

/* Decodes a bundle of exactly width entries (1..TLOG_BUNDLE_MAX_ENTRIES, the width of its
 * path). entries has room for width entries; they point into buf. Returns 0; DIRAUTH_ERR_SYNTAX
 * for a length running past the end, fewer entries than width, or bytes after the last;
 * DIRAUTH_ERR_BOUNDS for a width out of bounds or len over TLOG_BUNDLE_MAX_BYTES. */
int tlog_bundle_parse(const uint8_t *buf, size_t len, size_t width, struct tlog_entry *entries);

/* Checks that each of count entries hashes (RFC 6962 leaf hash) to the hash at the same place in
 * a level-0 tile's bytes (tile_len = count · 32). Returns 0; DIRAUTH_ERR_MISMATCH when an entry
 * or the count disagrees; DIRAUTH_ERR_CRYPTO. */
int tlog_bundle_check_tile(const struct tlog_entry *entries, size_t count, const uint8_t *tile,
                           size_t tile_len);

#endif
