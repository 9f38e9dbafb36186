/*
 * snapshots.h: the snapshots table of the store: the signed header of every published snapshot,
 * and its body, in every content encoding, as files.
 *
 * What is kept, and for how long:
 *   - snapshots: the signed header of every published snapshot. Never deleted (they are the
 *     transparency log's leaves). The latest epoch per namespace only grows.
 *   - bodies: each published body in every content encoding, as files, for the retention window
 *     (store_retain); their sizes and digests beside the header while the files exist.
 *   - diffs: a body's difference from an older body (schema/snapshot-diff.md), named by its
 *     target epoch and its base body's SHA-256, in every content encoding, as files beside the
 *     bodies. Kept while both bodies are: store_retain removes the diffs of every body it
 *     removes, whether it was their base or their target, and the next open removes any other.
 *
 * Durable on return: when a write call returns 0, what it wrote is on disk. Threading: every
 * function is safe from any thread. Pointers handed to visitors are valid only during the call.
 */
#ifndef DIRAUTH_SERVER_STORE_SNAPSHOTS_H
#define DIRAUTH_SERVER_STORE_SNAPSHOTS_H

#include "base/buffer.h"
#include "compress/compress.h"
#include "kv/kv.h"
#include "server/store/store.h"

#include <stddef.h>
#include <stdint.h>

/* The sizes and digests of a snapshot body in each content encoding. */
struct store_body_info {
	uint64_t size[ENCODING_COUNT];
	uint8_t sha256[ENCODING_COUNT][32];
};

/* A body being written: bytes go to a file per encoding (compressed on the way) and nowhere
 * else, so a body never needs to be held in memory whole. */
struct store_body_writer;

/* Starts the body of namespace_name's snapshot for epoch. Returns 0, DIRAUTH_ERR_SYNTAX,
 * DIRAUTH_ERR_BOUNDS (name too long), DIRAUTH_ERR_IO, DIRAUTH_ERR_NOMEM. */
int store_body_begin(struct store *store, const char *namespace_name, uint64_t epoch,
                     struct store_body_writer **out);

/* Appends len bytes of the uncompressed body. Returns 0, DIRAUTH_ERR_IO, DIRAUTH_ERR_NOMEM,
 * DIRAUTH_ERR_INTERNAL (a compressor failed). */
int store_body_write(struct store_body_writer *writer, const void *data, size_t len);

/* Finishes the body: flushes the compressors, fsyncs every file and gives them their final
 * names (durably), and fills *info. The files then belong to the store: they are kept if the
 * snapshot's header is stored (store_snapshot_put) and removed at the next open otherwise. Frees
 * the writer in every case. Returns 0, DIRAUTH_ERR_IO, DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_INTERNAL. */
int store_body_finish(struct store_body_writer *writer, struct store_body_info *info);

/* Removes a body's files and frees the writer, for a body that will not be stored. Accepts NULL. */
void store_body_discard(struct store_body_writer *writer);

/* Durably stores a published snapshot's signed header and makes epoch the namespace's latest,
 * in one transaction; its body (info) must have been finished. info NULL stores the header
 * alone, as though retention had removed its body (an authority catching up on an epoch whose
 * body its peers no longer keep). Refuses an epoch not greater than
 * the namespace's latest (DIRAUTH_ERR_ROLLBACK). Also returns DIRAUTH_ERR_SYNTAX (missing
 * argument), DIRAUTH_ERR_BOUNDS (name too long, header over 64 KiB), DIRAUTH_ERR_FULL,
 * DIRAUTH_ERR_STORE. Nothing is changed unless 0 is returned. */
int store_snapshot_put(struct store *store, const char *namespace_name, uint64_t epoch, const uint8_t *header,
                       size_t header_len, const struct store_body_info *info);

/* Copies a stored snapshot's header note into header (replaced). info (may be NULL) gets its
 * body's sizes and digests. Returns 0; DIRAUTH_ERR_NOT_FOUND (no such snapshot);
 * DIRAUTH_ERR_STALE (the header is kept but the body was removed by retention, only when info is
 * not NULL); DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_STORE. */
int store_snapshot_get(struct store *store, const char *namespace_name, uint64_t epoch, struct buffer *header,
                       struct store_body_info *info);

/* Called for each stored snapshot header by store_snapshot_foreach, in ascending epoch order,
 * with the signed note as stored (borrowed for the call). Returns 0 to go on; anything else
 * stops the walk and is what the walk returns. */
typedef int (*store_header_visitor)(void *context, uint64_t epoch, const uint8_t *note, size_t len);

/* Visits every stored header of namespace_name from epoch from on (headers whose body retention
 * removed included), in one read transaction. Returns 0 (also for a namespace with none), the
 * visitor's non-zero value, DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_BOUNDS (name too long),
 * DIRAUTH_ERR_STORE. */
int store_snapshot_foreach(struct store *store, const char *namespace_name, uint64_t from,
                           store_header_visitor visit, void *context);

/* Latest stored epoch of a namespace. Returns 0 or DIRAUTH_ERR_NOT_FOUND, DIRAUTH_ERR_SYNTAX,
 * DIRAUTH_ERR_BOUNDS, DIRAUTH_ERR_STORE. */
int store_snapshot_latest(struct store *store, const char *namespace_name, uint64_t *epoch);

/* Opens a stored body file read-only: *fd gets a descriptor the caller closes, positioned at 0;
 * the file's size is checked against the stored size. Returns 0, DIRAUTH_ERR_NOT_FOUND,
 * DIRAUTH_ERR_STALE (removed by retention), DIRAUTH_ERR_MISMATCH (the file's size is not the
 * stored one), DIRAUTH_ERR_IO, DIRAUTH_ERR_STORE. */
int store_body_open(struct store *store, const char *namespace_name, uint64_t epoch,
                    enum content_encoding encoding, int *fd, uint64_t *size);

/* Reads a stored body file whole and checks it against its stored digest. Returns 0,
 * DIRAUTH_ERR_MISMATCH, and what store_body_open returns. */
int store_body_check(struct store *store, const char *namespace_name, uint64_t epoch,
                     enum content_encoding encoding);

/* Removes the bodies of namespace_name's snapshots older than keep_from (their files and their
 * sizes and digests), and every diff of which one of them was the base or the target; headers
 * stay. Returns 0, DIRAUTH_ERR_STORE, DIRAUTH_ERR_IO. */
int store_retain(struct store *store, const char *namespace_name, uint64_t keep_from);

/* ---- diffs ---- */

/* Starts the diff to namespace_name's body of epoch from the body whose SHA-256 is base_sha256:
 * a writer as store_body_begin's, whose bytes (store_body_write) are the uncompressed diff. Its
 * files have part names until store_diff_keep; store_body_discard drops them. Returns as
 * store_body_begin. */
int store_diff_begin(struct store *store, const char *namespace_name, uint64_t epoch,
                     const uint8_t base_sha256[32], struct store_body_writer **out);

/* Completes a diff's files (compressors flushed, every file fsynced) and fills *info with their
 * sizes and digests, so that the caller can judge, before the diff is offered, whether it is worth
 * it. The writer stays the caller's: store_diff_keep or store_body_discard follows, also after an
 * error. Returns 0, DIRAUTH_ERR_SYNTAX (not a diff's writer, or measured already), DIRAUTH_ERR_IO,
 * DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_INTERNAL. */
int store_diff_measure(struct store_body_writer *writer, struct store_body_info *info);

/* Gives a measured diff's files their final names (durably), from which store_diff_open serves
 * them, if its target body and a body of its base digest are both still stored; frees the writer
 * in every case. Returns 0; DIRAUTH_ERR_STALE (retention removed its base or its target meanwhile:
 * its files are removed); DIRAUTH_ERR_SYNTAX (not measured); DIRAUTH_ERR_IO, DIRAUTH_ERR_STORE,
 * DIRAUTH_ERR_NOMEM. */
int store_diff_keep(struct store_body_writer *writer);

/* Opens the kept diff file of encoding to namespace_name's body of epoch from the body whose
 * SHA-256 is base_sha256: *fd gets a descriptor the caller closes, positioned at 0, *size its
 * length. Returns 0; DIRAUTH_ERR_NOT_FOUND (no such diff kept: never built, not worth offering,
 * or removed with its base or target); DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_BOUNDS (a name that is no
 * namespace's); DIRAUTH_ERR_IO. */
int store_diff_open(struct store *store, const char *namespace_name, uint64_t epoch,
                    const uint8_t base_sha256[32], enum content_encoding encoding, int *fd, uint64_t *size);

/* ---- record shards ---- */

/* The record shards of a published body (schema/record-shard.md), all of one epoch in one file
 * beside the body, "<epoch>.records": the shards' bytes one after another, then the offset of
 * each (2^bits + 1 big-endian u64), then the bits (u32) and "DRS1". One file per epoch rather
 * than one per shard: 2^15 shards an epoch at 100,000 records would be as many inodes. Kept while
 * the body is (store_retain, and the next open, remove it with its body).
 *
 * store_record_shards_begin starts the part file of namespace_name's shards of epoch at bits;
 * store_record_shards_add appends the next shard (index 0 first, each once);
 * store_record_shards_finish, once all 2^bits are added, writes the index, fsyncs and renames the
 * file (durably) if the body is still stored, and frees the writer in every case (DIRAUTH_ERR_STALE:
 * retention removed the body meanwhile; the file is removed); store_record_shards_discard drops
 * it. Return 0, DIRAUTH_ERR_SYNTAX (a name that is no namespace's, bits over 24, a shard added
 * past the last or finish before it), DIRAUTH_ERR_IO, DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_STORE. */
struct store_record_shards_writer;
int store_record_shards_begin(struct store *store, const char *namespace_name, uint64_t epoch, unsigned bits,
                              struct store_record_shards_writer **out);
int store_record_shards_add(struct store_record_shards_writer *writer, const uint8_t *shard, size_t len);
int store_record_shards_finish(struct store_record_shards_writer *writer);
void store_record_shards_discard(struct store_record_shards_writer *writer);

/* 1 when namespace_name's shards of epoch are kept, else 0. */
int store_record_shards_held(struct store *store, const char *namespace_name, uint64_t epoch);

/* Reads shard index of namespace_name's epoch into out (replaced); *bits gets the file's bits
 * (the caller compares index with them first by passing UINT32_MAX: then only *bits is set).
 * Returns 0; DIRAUTH_ERR_NOT_FOUND (no shards kept for that epoch: never built, or past
 * retention; or index not below 2^bits); DIRAUTH_ERR_SYNTAX (a bad name); DIRAUTH_ERR_IO,
 * DIRAUTH_ERR_MISMATCH (a file whose index does not hold together), DIRAUTH_ERR_NOMEM. */
int store_record_shard_read(struct store *store, const char *namespace_name, uint64_t epoch, uint32_t index,
                            unsigned *bits, struct buffer *out);

/* ---- for the store's own files ---- */

/* The table's databases, for store_open to open with the others: fills out (room for
 * STORE_TABLE_DATABASES_MAX) with their names and store's handles of them; returns the count. */
size_t snapshots_databases(struct store *store, struct kv_database *out);

/* At open: removes body files of epochs whose header was never stored, diffs whose base or target
 * body is not stored, and unfinished parts. Returns 0, DIRAUTH_ERR_IO. */
int snapshots_tidy(struct store *store);

/* For store_backup: copies the body and diff files that are kept into directory/bodies (made),
 * fsynced; a restored store's open keeps the diffs whose bodies it holds.
 * Returns 0, DIRAUTH_ERR_IO, DIRAUTH_ERR_BOUNDS. */
int snapshots_copy_bodies(struct store *store, const char *directory);

#endif
