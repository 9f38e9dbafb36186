/*
 * bundle.c: the entry bundles of c2sp.org/tlog-tiles.
 *
 * A bundle is what a mirror copies and a monitor reads to learn what the log holds; its only
 * framing is the uint16 length before each entry, so the decoder checks every length against
 * the bytes that remain before it takes a single one, and takes the entry count from the path
 * rather than from the bytes: the same bytes can never be read as two different bundles.
 */
#include "tlog/bundle.h"

#include "base/error.h"
#include "crypto/merkle.h"

#include <string.h>

int tlog_bundle_append(struct buffer *bundle, const uint8_t *entry, size_t len)
{
	if (len > TLOG_ENTRY_MAX)
		return DIRAUTH_ERR_BOUNDS;
	uint8_t prefix[2] = {(uint8_t)(len >> 8), (uint8_t)len};
	size_t start = bundle->len;
	int rc = buffer_reserve(bundle, 2 + len);
	if (rc == 0)
		rc = buffer_append(bundle, prefix, sizeof(prefix));
	if (rc == 0 && len > 0)
		rc = buffer_append(bundle, entry, len);
	if (rc)
		buffer_truncate(bundle, start);
	return rc;
}

int tlog_bundle_encode(const struct tlog_entry *entries, size_t count, struct buffer *out)
{
	if (count == 0 || count > TLOG_BUNDLE_MAX_ENTRIES)
		return DIRAUTH_ERR_BOUNDS;
	size_t start = out->len;
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < count; i++)
		rc = tlog_bundle_append(out, entries[i].data, entries[i].len);
	if (rc)
		buffer_truncate(out, start);
	return rc;
}

int tlog_bundle_parse(const uint8_t *buf, size_t len, size_t width, struct tlog_entry *entries)
{
	if (width == 0 || width > TLOG_BUNDLE_MAX_ENTRIES || len > TLOG_BUNDLE_MAX_BYTES)
		return DIRAUTH_ERR_BOUNDS;
	size_t pos = 0;
	for (size_t i = 0; i < width; i++) {
		if (len - pos < 2)
			return DIRAUTH_ERR_SYNTAX;
		size_t entry_len = (size_t)buf[pos] << 8 | buf[pos + 1];
		pos += 2;
		if (len - pos < entry_len)
			return DIRAUTH_ERR_SYNTAX;
		entries[i].data = buf + pos;
		entries[i].len = entry_len;
		pos += entry_len;
	}
	return pos == len ? 0 : DIRAUTH_ERR_SYNTAX;
}

int tlog_bundle_check_tile(const struct tlog_entry *entries, size_t count, const uint8_t *tile,
                           size_t tile_len)
{
	if (count > TLOG_BUNDLE_MAX_ENTRIES || tile_len != count * MERKLE_HASH_SIZE)
		return DIRAUTH_ERR_MISMATCH;
	for (size_t i = 0; i < count; i++) {
		merkle_hash leaf;
		int rc = merkle_leaf_hash(entries[i].data, entries[i].len, leaf);
		if (rc)
			return rc;
		if (memcmp(leaf, tile + i * MERKLE_HASH_SIZE, MERKLE_HASH_SIZE) != 0)
			return DIRAUTH_ERR_MISMATCH;
	}
	return 0;
}
