/*
 * snapshots.c: the snapshots table of the store (snapshots.h): published headers in the
 * environment, bodies as files beside it.
 *
 * Databases ("ns" a namespace's u16 id, internal.h; integers big-endian and fixed-width):
 *   snapshots       ns, u64 epoch -> the signed header note
 *   bodies          ns, u64 epoch -> per encoding u64 size, 32 bytes sha256 (while the files exist)
 *   latest          ns -> u64 epoch
 *
 * Body files: <path>/bodies/<namespace>/<epoch>.<encoding>, written under a ".part" name,
 * fsynced, renamed, and the directory fsynced before the header is stored; so a stored header
 * always has its files, and files without a header (a crash before the header) are removed at
 * open (snapshots_tidy). A snapshot is written by publication, once an epoch, in a write
 * transaction of its own beside the committer's batches.
 *
 * Diff files (schema/snapshot-diff.md): <path>/bodies/<namespace>/<epoch>.from-<base>.<encoding>,
 * the diff to epoch's body from the body whose SHA-256 is <base> (64 lower-case hex digits), in
 * the same three encodings and written the same way (".part", fsync, rename, directory fsync), so
 * a final name always holds a whole diff. They have no row: a diff file is kept while both its
 * bodies are (its target's epoch and a body of the namespace whose digest is its base), a rule
 * applied in one place (diff_file_kept) at open and after retention. The rename of a diff and the
 * sweep after retention hold diffs_lock, so a diff whose base or target retention removed while
 * it was being built is never left behind.
 *
 * Record shard files (schema/record-shard.md): <path>/bodies/<namespace>/<epoch>.records, every
 * shard of the body of epoch packed with an index (snapshots.h, "record shards"), written the same
 * way and kept while the body of epoch is, under the same lock as the diffs.
 */
#include "server/store/snapshots.h"

#include "server/store/internal.h"

#include "kv/kv.h"
#include "compress/compress.h"
#include "crypto/crypto.h"
#include "base/error.h"
#include "schema/encoding.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

size_t snapshots_databases(struct store *store, struct kv_database *out)
{
	const struct kv_database mine[] = {
	    {"snapshots", &store->snapshots},
	    {"bodies", &store->bodies},
	    {"latest", &store->latest},
	};
	memcpy(out, mine, sizeof mine);
	return sizeof mine / sizeof mine[0];
}

/* ---- body files ---- */

static const char *const encoding_suffix[ENCODING_COUNT] = {"identity", "gzip", "zstd"};

static int body_directory(const struct store *store, const char *namespace_name, char *out, size_t cap)
{
	int n = snprintf(out, cap, "%s/bodies/%s", store->path, namespace_name);
	return n > 0 && (size_t)n < cap ? 0 : DIRAUTH_ERR_BOUNDS;
}

/* The longest stem of a body directory's file name: an epoch, ".from-" and a digest in hex. */
#define BODY_STEM_MAX (20 + 6 + 64)

/* The stem of a body's file names ("<epoch>"), or, with base, of the diff to it from the body
 * whose SHA-256 is base ("<epoch>.from-<base hex>"). */
static void body_stem(uint64_t epoch, const uint8_t *base, char out[BODY_STEM_MAX + 1])
{
	char hex[65];
	if (base)
		hex_encode(base, 32, hex);
	snprintf(out, BODY_STEM_MAX + 1, "%llu%s%s", (unsigned long long)epoch, base ? ".from-" : "",
	         base ? hex : "");
}

static int stem_path(const struct store *store, const char *namespace_name, const char *stem,
                     enum content_encoding encoding, bool part, char *out, size_t cap)
{
	int n = snprintf(out, cap, "%s/bodies/%s/%s.%s%s", store->path, namespace_name, stem,
	                 encoding_suffix[encoding], part ? ".part" : "");
	return n > 0 && (size_t)n < cap ? 0 : DIRAUTH_ERR_BOUNDS;
}

static int body_path(const struct store *store, const char *namespace_name, uint64_t epoch,
                     enum content_encoding encoding, bool part, char *out, size_t cap)
{
	char stem[BODY_STEM_MAX + 1];
	body_stem(epoch, NULL, stem);
	return stem_path(store, namespace_name, stem, encoding, part, out, cap);
}

static int make_directory(const char *path)
{
	if (mkdir(path, 0700) != 0 && errno != EEXIST)
		return DIRAUTH_ERR_IO;
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : DIRAUTH_ERR_IO;
}

static int sync_directory(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return DIRAUTH_ERR_IO;
	int rc = fsync(fd) == 0 ? 0 : DIRAUTH_ERR_IO;
	close(fd);
	return rc;
}

/* One output file of a body: buffered writes, and the digest of what was written. */
struct body_file {
	int fd;
	uint64_t size;
	struct crypto_sha256_stream *digest;
	uint8_t buffer[64 * 1024];
	size_t buffered;
};

struct store_body_writer {
	struct store *store;
	char namespace_name[STORE_NAME_MAX + 1];
	uint64_t epoch;
	char stem[BODY_STEM_MAX + 1]; /* the files' names: a body's, or a diff's (body_stem) */
	bool diff;
	uint8_t base[32]; /* a diff's base body digest */
	bool measured;    /* a diff's files are complete and synced (store_diff_measure) */
	struct body_file files[ENCODING_COUNT];
	struct compress_stream *streams[ENCODING_COUNT]; /* NULL for identity */
	int failed;
};

static int body_file_flush(struct body_file *f)
{
	size_t done = 0;
	while (done < f->buffered) {
		ssize_t n = write(f->fd, f->buffer + done, f->buffered - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return DIRAUTH_ERR_IO;
		done += (size_t)n;
	}
	f->buffered = 0;
	return 0;
}

static int body_file_sink(void *context, const uint8_t *data, size_t len)
{
	struct body_file *f = context;
	if (crypto_sha256_update(f->digest, data, len) != 0)
		return DIRAUTH_ERR_INTERNAL;
	f->size += len;
	while (len > 0) {
		size_t room = sizeof f->buffer - f->buffered;
		size_t take = len < room ? len : room;
		memcpy(f->buffer + f->buffered, data, take);
		f->buffered += take;
		data += take;
		len -= take;
		if (f->buffered == sizeof f->buffer) {
			int rc = body_file_flush(f);
			if (rc)
				return rc;
		}
	}
	return 0;
}

static void body_writer_remove_parts(struct store_body_writer *w)
{
	char path[STORE_PATH_MAX];
	for (int e = 0; e < ENCODING_COUNT; e++) {
		if (w->files[e].fd >= 0)
			close(w->files[e].fd);
		w->files[e].fd = -1;
		crypto_sha256_free(w->files[e].digest);
		w->files[e].digest = NULL;
		compress_stream_free(w->streams[e]);
		w->streams[e] = NULL;
		if (stem_path(w->store, w->namespace_name, w->stem, (enum content_encoding)e, true, path,
		              sizeof path) == 0)
			unlink(path);
	}
}

/* A namespace name as check_name judges it, which also becomes a directory under bodies/: never
 * a path out of it. Returns 0 with *len its length, check_name's errors, DIRAUTH_ERR_SYNTAX. */
static int check_directory_name(const char *namespace_name, size_t *len)
{
	int rc = check_name(namespace_name, len);
	if (rc)
		return rc;
	return namespace_name[0] == '.' || strchr(namespace_name, '/') ? DIRAUTH_ERR_SYNTAX : 0;
}

/* A writer of the files of stem (a body's or a diff's) in namespace_name's body directory. */
static int writer_begin(struct store *store, const char *namespace_name, uint64_t epoch, const uint8_t *base,
                        struct store_body_writer **out)
{
	char path[STORE_PATH_MAX];
	size_t len;
	if (!store || !out)
		return DIRAUTH_ERR_SYNTAX;
	*out = NULL;
	int rc = check_directory_name(namespace_name, &len);
	if (rc)
		return rc;
	struct store_body_writer *w = calloc(1, sizeof *w);
	if (!w)
		return DIRAUTH_ERR_NOMEM;
	w->store = store;
	memcpy(w->namespace_name, namespace_name, len + 1);
	w->epoch = epoch;
	body_stem(epoch, base, w->stem);
	if (base) {
		w->diff = true;
		memcpy(w->base, base, 32);
	}
	for (int e = 0; e < ENCODING_COUNT; e++)
		w->files[e].fd = -1;
	if ((rc = body_directory(store, namespace_name, path, sizeof path)) || (rc = make_directory(path)))
		goto fail;
	for (int e = 0; e < ENCODING_COUNT; e++) {
		if ((rc = stem_path(store, namespace_name, w->stem, (enum content_encoding)e, true, path,
		                    sizeof path)))
			goto fail;
		w->files[e].fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
		w->files[e].digest = crypto_sha256_new();
		if (w->files[e].fd < 0 || !w->files[e].digest) {
			rc = w->files[e].fd < 0 ? DIRAUTH_ERR_IO : DIRAUTH_ERR_NOMEM;
			goto fail;
		}
		if (e != ENCODING_IDENTITY &&
		    (rc = compress_stream_new((enum content_encoding)e, &w->streams[e])))
			goto fail;
	}
	*out = w;
	return 0;
fail:
	body_writer_remove_parts(w);
	free(w);
	return rc;
}

int store_body_begin(struct store *store, const char *namespace_name, uint64_t epoch,
                     struct store_body_writer **out)
{
	return writer_begin(store, namespace_name, epoch, NULL, out);
}

int store_body_write(struct store_body_writer *w, const void *data, size_t len)
{
	if (w->failed)
		return w->failed;
	int rc = body_file_sink(&w->files[ENCODING_IDENTITY], data, len);
	for (int e = 0; !rc && e < ENCODING_COUNT; e++)
		if (w->streams[e])
			rc = compress_stream_write(w->streams[e], data, len, body_file_sink, &w->files[e]);
	w->failed = rc;
	return rc;
}

/* Ends the compressors, writes out and fsyncs every part file and fills *info. */
static int writer_complete(struct store_body_writer *w, struct store_body_info *info)
{
	int rc = w->failed;
	for (int e = 0; !rc && e < ENCODING_COUNT; e++) {
		if (w->streams[e]) {
			rc = compress_stream_finish(w->streams[e], body_file_sink, &w->files[e]);
			w->streams[e] = NULL;
		}
	}
	for (int e = 0; !rc && e < ENCODING_COUNT; e++) {
		struct body_file *f = &w->files[e];
		if ((rc = body_file_flush(f)) || (rc = fsync(f->fd) == 0 ? 0 : DIRAUTH_ERR_IO))
			break;
		rc = crypto_sha256_finish(f->digest, info->sha256[e]) ? DIRAUTH_ERR_INTERNAL : 0;
		f->digest = NULL;
		info->size[e] = f->size;
	}
	w->failed = rc;
	return rc;
}

/* Gives the complete part files their final names and fsyncs the directory. */
static int writer_rename(struct store_body_writer *w)
{
	char part[STORE_PATH_MAX], final[STORE_PATH_MAX], directory[STORE_PATH_MAX];
	int rc = 0;
	for (int e = 0; !rc && e < ENCODING_COUNT; e++) {
		if ((rc = stem_path(w->store, w->namespace_name, w->stem, (enum content_encoding)e, true,
		                    part, sizeof part)) ||
		    (rc = stem_path(w->store, w->namespace_name, w->stem, (enum content_encoding)e, false,
		                    final, sizeof final)))
			break;
		if (rename(part, final) != 0)
			rc = DIRAUTH_ERR_IO;
	}
	if (!rc && !(rc = body_directory(w->store, w->namespace_name, directory, sizeof directory)))
		rc = sync_directory(directory);
	return rc;
}

/* Removes what is left of the writer's part files (none once renamed) and frees it. */
static void writer_free(struct store_body_writer *w, int failed)
{
	if (failed)
		body_writer_remove_parts(w);
	for (int e = 0; e < ENCODING_COUNT; e++) {
		if (w->files[e].fd >= 0)
			close(w->files[e].fd);
		crypto_sha256_free(w->files[e].digest);
		compress_stream_free(w->streams[e]);
	}
	free(w);
}

int store_body_finish(struct store_body_writer *w, struct store_body_info *info)
{
	int rc = writer_complete(w, info);
	if (!rc)
		rc = writer_rename(w);
	writer_free(w, rc);
	return rc;
}

void store_body_discard(struct store_body_writer *w)
{
	if (!w)
		return;
	body_writer_remove_parts(w);
	free(w);
}

/* Removes the files of one body or diff (final names). */
static int stem_remove_files(struct store *store, const char *namespace_name, const char *stem)
{
	char path[STORE_PATH_MAX];
	int rc = 0;
	for (int e = 0; e < ENCODING_COUNT; e++)
		if (stem_path(store, namespace_name, stem, (enum content_encoding)e, false, path,
		              sizeof path) != 0 ||
		    (unlink(path) != 0 && errno != ENOENT))
			rc = DIRAUTH_ERR_IO;
	return rc;
}

static int body_remove_files(struct store *store, const char *namespace_name, uint64_t epoch)
{
	char stem[BODY_STEM_MAX + 1];
	body_stem(epoch, NULL, stem);
	return stem_remove_files(store, namespace_name, stem);
}

static int body_info_decode(const struct kv_val *value, struct store_body_info *info);

/* The stored bodies of one namespace: each one's epoch and the SHA-256 of its bytes (the digest
 * its header's body-sha256 commits to, by which a diff names its base). */
struct kept_bodies {
	uint64_t *epochs;
	uint8_t (*digests)[32];
	size_t count, cap;
};

static void kept_bodies_free(struct kept_bodies *kept)
{
	free(kept->epochs);
	free(kept->digests);
}

static int kept_visit(void *context, struct kv_val key, struct kv_val value)
{
	struct kept_bodies *kept = context;
	struct store_body_info info;
	if (key.len != STORE_EPOCH_KEY_LEN || body_info_decode(&value, &info) != 0)
		return DIRAUTH_ERR_STORE;
	if (kept->count == kept->cap) {
		size_t cap = kept->cap ? kept->cap * 2 : 16;
		uint64_t *epochs = realloc(kept->epochs, cap * sizeof *epochs);
		if (epochs)
			kept->epochs = epochs;
		uint8_t(*digests)[32] = realloc(kept->digests, cap * sizeof *digests);
		if (digests)
			kept->digests = digests;
		if (!epochs || !digests)
			return DIRAUTH_ERR_NOMEM;
		kept->cap = cap;
	}
	kept->epochs[kept->count] = get_uint(key.data + STORE_NS_LEN, 8);
	memcpy(kept->digests[kept->count], info.sha256[ENCODING_IDENTITY], 32);
	kept->count++;
	return 0;
}

/* Reads the stored bodies of namespace_name into *kept (empty for a namespace never recorded). */
static int kept_bodies_load(struct store *store, const char *namespace_name, struct kept_bodies *kept)
{
	struct kv_txn t;
	uint16_t ns;
	memset(kept, 0, sizeof *kept);
	int rc = namespace_read_begin(store, namespace_name, &t, &ns);
	if (rc)
		return rc == DIRAUTH_ERR_NOT_FOUND ? 0 : rc;
	uint8_t prefix[STORE_NS_LEN];
	put_uint(prefix, ns, STORE_NS_LEN);
	int walked = kv_txn_walk_prefix(&t, store->bodies, prefix, sizeof prefix, kept_visit, kept);
	rc = t.rc ? t.rc : walked < 0 ? walked : 0;
	kv_txn_abort(&t);
	if (rc) {
		kept_bodies_free(kept);
		memset(kept, 0, sizeof *kept);
	}
	return rc;
}

static bool kept_has_epoch(const struct kept_bodies *kept, uint64_t epoch)
{
	for (size_t i = 0; i < kept->count; i++)
		if (kept->epochs[i] == epoch)
			return true;
	return false;
}

static bool kept_has_digest(const struct kept_bodies *kept, const uint8_t digest[32])
{
	for (size_t i = 0; i < kept->count; i++)
		if (memcmp(kept->digests[i], digest, 32) == 0)
			return true;
	return false;
}

/* A diff is kept while both its bodies are: its target's and its base's. */
static bool diff_file_kept(const struct kept_bodies *kept, uint64_t epoch, const uint8_t base[32])
{
	return kept_has_epoch(kept, epoch) && kept_has_digest(kept, base);
}

/* A file of a body directory, by its name: "<epoch>.<encoding>" (a body) or
 * "<epoch>.from-<base hex>.<encoding>" (a diff), either followed by ".part" while it is written. */
struct body_file_name {
	uint64_t epoch;
	bool diff;
	bool shards; /* "<epoch>.records": the record shards of the body of epoch */
	uint8_t base[32];
	bool part;
};

static int body_file_name_parse(const char *name, struct body_file_name *out)
{
	memset(out, 0, sizeof *out);
	const char *dot = strchr(name, '.');
	if (!dot || decimal_parse(name, (size_t)(dot - name), &out->epoch) != 0)
		return DIRAUTH_ERR_SYNTAX;
	const char *rest = dot + 1;
	if (strcmp(rest, "records") == 0 || strcmp(rest, "records.part") == 0) {
		out->shards = true;
		out->part = rest[7] != '\0';
		return 0;
	}
	if (strncmp(rest, "from-", 5) == 0) {
		if (strlen(rest) < 5 + 64 + 1 || rest[5 + 64] != '.' ||
		    hex_decode(rest + 5, 64, out->base, 32) != 0)
			return DIRAUTH_ERR_SYNTAX;
		out->diff = true;
		rest += 5 + 64 + 1;
	}
	size_t len = strlen(rest);
	if (len > 5 && strcmp(rest + len - 5, ".part") == 0) {
		out->part = true;
		len -= 5;
	}
	for (int e = 0; e < ENCODING_COUNT; e++)
		if (strlen(encoding_suffix[e]) == len && strncmp(rest, encoding_suffix[e], len) == 0)
			return 0;
	return DIRAUTH_ERR_SYNTAX;
}

/* What namespace_name's body directory keeps. At open (at_open): the files of stored bodies and
 * the diffs kept (diff_file_kept); part files and anything else go. After retention: the diffs
 * alone are judged, since a body being published has its files before its row, and part files
 * are their writers'. */
static int directory_sweep(struct store *store, const char *namespace_name, const char *directory,
                           bool at_open)
{
	struct kept_bodies kept;
	int rc = kept_bodies_load(store, namespace_name, &kept);
	if (rc)
		return rc;
	DIR *files = opendir(directory);
	if (!files) {
		kept_bodies_free(&kept);
		return errno == ENOENT ? 0 : DIRAUTH_ERR_IO;
	}
	struct dirent *file;
	while ((file = readdir(files))) {
		if (file->d_name[0] == '.')
			continue;
		struct body_file_name name;
		bool keep;
		if (body_file_name_parse(file->d_name, &name) != 0 || name.part)
			keep = !at_open;
		else if (name.diff)
			keep = diff_file_kept(&kept, name.epoch, name.base);
		else if (name.shards)
			keep = kept_has_epoch(&kept, name.epoch); /* written after its body's row */
		else
			/* Not only epochs past the latest: a body finished for an epoch that was then
			 * refused (or never stored) may be older than the latest. */
			keep = !at_open || kept_has_epoch(&kept, name.epoch);
		char path[STORE_PATH_MAX];
		if (!keep &&
		    snprintf(path, sizeof path, "%s/%s", directory, file->d_name) < (int)sizeof path &&
		    unlink(path) != 0 && errno != ENOENT)
			rc = DIRAUTH_ERR_IO;
	}
	closedir(files);
	kept_bodies_free(&kept);
	return rc;
}

int snapshots_tidy(struct store *store)
{
	char path[STORE_PATH_MAX];
	if (snprintf(path, sizeof path, "%s/bodies", store->path) >= (int)sizeof path ||
	    make_directory(path) != 0)
		return DIRAUTH_ERR_IO;
	DIR *top = opendir(path);
	if (!top)
		return DIRAUTH_ERR_IO;
	struct dirent *entry;
	while ((entry = readdir(top))) {
		if (entry->d_name[0] == '.')
			continue;
		char directory[STORE_PATH_MAX];
		if (snprintf(directory, sizeof directory, "%s/%s", path, entry->d_name) >=
		    (int)sizeof directory)
			continue;
		/* A directory whose name is no namespace's keeps nothing; one that cannot be read is
		 * left as it was. */
		directory_sweep(store, entry->d_name, directory, true);
	}
	closedir(top);
	return 0;
}

/* ---- diffs ---- */

int store_diff_begin(struct store *store, const char *namespace_name, uint64_t epoch,
                     const uint8_t base_sha256[32], struct store_body_writer **out)
{
	if (!base_sha256)
		return DIRAUTH_ERR_SYNTAX;
	return writer_begin(store, namespace_name, epoch, base_sha256, out);
}

int store_diff_measure(struct store_body_writer *w, struct store_body_info *info)
{
	if (!w->diff || w->measured)
		return DIRAUTH_ERR_SYNTAX;
	int rc = writer_complete(w, info);
	w->measured = rc == 0;
	return rc;
}

int store_diff_keep(struct store_body_writer *w)
{
	struct kept_bodies kept = {0};
	int rc = w->diff && w->measured ? 0 : DIRAUTH_ERR_SYNTAX;
	pthread_mutex_lock(&w->store->diffs_lock);
	if (!rc)
		rc = kept_bodies_load(w->store, w->namespace_name, &kept);
	if (!rc && !diff_file_kept(&kept, w->epoch, w->base))
		rc = DIRAUTH_ERR_STALE;
	if (!rc)
		rc = writer_rename(w);
	pthread_mutex_unlock(&w->store->diffs_lock);
	kept_bodies_free(&kept);
	writer_free(w, rc);
	return rc;
}

/* Opens path read-only, not following a link, when it is a regular file: *fd and *size (its
 * length). Returns 0, missing when there is no such file, DIRAUTH_ERR_IO otherwise. */
static int open_regular_file(const char *path, int missing, int *fd, uint64_t *size)
{
	int file = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (file < 0)
		return errno == ENOENT ? missing : DIRAUTH_ERR_IO;
	struct stat st;
	if (fstat(file, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(file);
		return DIRAUTH_ERR_IO;
	}
	*fd = file;
	*size = (uint64_t)st.st_size;
	return 0;
}

int store_diff_open(struct store *store, const char *namespace_name, uint64_t epoch,
                    const uint8_t base_sha256[32], enum content_encoding encoding, int *fd, uint64_t *size)
{
	char stem[BODY_STEM_MAX + 1], path[STORE_PATH_MAX];
	size_t len;
	if (!store || !base_sha256 || !fd || !size || (unsigned)encoding >= ENCODING_COUNT)
		return DIRAUTH_ERR_SYNTAX;
	int rc = check_directory_name(namespace_name, &len);
	if (rc)
		return rc;
	body_stem(epoch, base_sha256, stem);
	if ((rc = stem_path(store, namespace_name, stem, encoding, false, path, sizeof path)))
		return rc;
	return open_regular_file(path, DIRAUTH_ERR_NOT_FOUND, fd, size);
}

/* ---- record shards ---- */

#define SHARDS_TRAILER_MAGIC "DRS1"
#define SHARDS_BITS_MAX      24

struct store_record_shards_writer {
	struct store *store;
	char namespace_name[STORE_NAME_MAX + 1];
	uint64_t epoch;
	unsigned bits;
	int fd;
	uint64_t *offsets; /* 2^bits + 1 */
	uint32_t added;
	int failed;
};

static int shards_path(const struct store *store, const char *namespace_name, uint64_t epoch, bool part,
                       char *out, size_t cap)
{
	int n = snprintf(out, cap, "%s/bodies/%s/%llu.records%s", store->path, namespace_name,
	                 (unsigned long long)epoch, part ? ".part" : "");
	return n > 0 && (size_t)n < cap ? 0 : DIRAUTH_ERR_BOUNDS;
}

static int write_all(int fd, const uint8_t *data, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, data, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return DIRAUTH_ERR_IO;
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

static int read_at(int fd, uint8_t *data, size_t len, uint64_t offset)
{
	while (len > 0) {
		ssize_t n = pread(fd, data, len, (off_t)offset);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return DIRAUTH_ERR_IO;
		data += n;
		len -= (size_t)n;
		offset += (uint64_t)n;
	}
	return 0;
}

void store_record_shards_discard(struct store_record_shards_writer *w)
{
	if (!w)
		return;
	char path[STORE_PATH_MAX];
	if (w->fd >= 0)
		close(w->fd);
	if (shards_path(w->store, w->namespace_name, w->epoch, true, path, sizeof path) == 0)
		unlink(path);
	free(w->offsets);
	free(w);
}

int store_record_shards_begin(struct store *store, const char *namespace_name, uint64_t epoch, unsigned bits,
                              struct store_record_shards_writer **out)
{
	char path[STORE_PATH_MAX];
	size_t len;
	if (!store || !out || bits > SHARDS_BITS_MAX)
		return DIRAUTH_ERR_SYNTAX;
	*out = NULL;
	int rc = check_directory_name(namespace_name, &len);
	if (rc)
		return rc;
	struct store_record_shards_writer *w = calloc(1, sizeof *w);
	if (!w)
		return DIRAUTH_ERR_NOMEM;
	w->store = store;
	memcpy(w->namespace_name, namespace_name, len + 1);
	w->epoch = epoch;
	w->bits = bits;
	w->fd = -1;
	w->offsets = calloc(((size_t)1 << bits) + 1, sizeof *w->offsets);
	if (!w->offsets) {
		free(w);
		return DIRAUTH_ERR_NOMEM;
	}
	if ((rc = body_directory(store, namespace_name, path, sizeof path)) || (rc = make_directory(path)) ||
	    (rc = shards_path(store, namespace_name, epoch, true, path, sizeof path))) {
		store_record_shards_discard(w);
		return rc;
	}
	w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (w->fd < 0) {
		store_record_shards_discard(w);
		return DIRAUTH_ERR_IO;
	}
	*out = w;
	return 0;
}

int store_record_shards_add(struct store_record_shards_writer *w, const uint8_t *shard, size_t len)
{
	if (w->failed)
		return w->failed;
	if (w->added >= (UINT32_C(1) << w->bits))
		return w->failed = DIRAUTH_ERR_SYNTAX;
	int rc = write_all(w->fd, shard, len);
	if (rc)
		return w->failed = rc;
	w->offsets[w->added + 1] = w->offsets[w->added] + len;
	w->added++;
	return 0;
}

int store_record_shards_finish(struct store_record_shards_writer *w)
{
	char part[STORE_PATH_MAX], final[STORE_PATH_MAX], directory[STORE_PATH_MAX];
	struct kept_bodies kept = {0};
	size_t count = ((size_t)1 << w->bits) + 1;
	int rc = w->failed ? w->failed : w->added == count - 1 ? 0 : DIRAUTH_ERR_SYNTAX;
	uint8_t *index = rc ? NULL : malloc(count * 8 + 8);
	if (!rc && !index)
		rc = DIRAUTH_ERR_NOMEM;
	if (!rc) {
		for (size_t i = 0; i < count; i++)
			put_uint(index + i * 8, w->offsets[i], 8);
		put_uint(index + count * 8, w->bits, 4);
		memcpy(index + count * 8 + 4, SHARDS_TRAILER_MAGIC, 4);
		rc = write_all(w->fd, index, count * 8 + 8);
	}
	free(index);
	if (!rc && fsync(w->fd) != 0)
		rc = DIRAUTH_ERR_IO;
	if (!rc)
		rc = shards_path(w->store, w->namespace_name, w->epoch, true, part, sizeof part);
	if (!rc)
		rc = shards_path(w->store, w->namespace_name, w->epoch, false, final, sizeof final);
	if (!rc) {
		pthread_mutex_lock(&w->store->diffs_lock);
		rc = kept_bodies_load(w->store, w->namespace_name, &kept);
		if (!rc && !kept_has_epoch(&kept, w->epoch))
			rc = DIRAUTH_ERR_STALE;
		if (!rc && rename(part, final) != 0)
			rc = DIRAUTH_ERR_IO;
		pthread_mutex_unlock(&w->store->diffs_lock);
		kept_bodies_free(&kept);
	}
	if (!rc && !(rc = body_directory(w->store, w->namespace_name, directory, sizeof directory)))
		rc = sync_directory(directory);
	if (rc) {
		store_record_shards_discard(w);
		return rc;
	}
	close(w->fd);
	free(w->offsets);
	free(w);
	return 0;
}

static int shards_open(struct store *store, const char *namespace_name, uint64_t epoch, int *fd,
                       uint64_t *size)
{
	char path[STORE_PATH_MAX];
	size_t len;
	int rc = check_directory_name(namespace_name, &len);
	if (rc)
		return rc;
	if ((rc = shards_path(store, namespace_name, epoch, false, path, sizeof path)))
		return rc;
	return open_regular_file(path, DIRAUTH_ERR_NOT_FOUND, fd, size);
}

int store_record_shards_held(struct store *store, const char *namespace_name, uint64_t epoch)
{
	int fd;
	uint64_t size;
	if (shards_open(store, namespace_name, epoch, &fd, &size) != 0)
		return 0;
	close(fd);
	return 1;
}

int store_record_shard_read(struct store *store, const char *namespace_name, uint64_t epoch, uint32_t index,
                            unsigned *bits, struct buffer *out)
{
	int fd;
	uint64_t size;
	uint8_t trailer[8], entry[16];
	if (!store || !bits || !out)
		return DIRAUTH_ERR_SYNTAX;
	int rc = shards_open(store, namespace_name, epoch, &fd, &size);
	if (rc)
		return rc;
	if (size < 8 || (rc = read_at(fd, trailer, 8, size - 8)) != 0) {
		close(fd);
		return rc ? rc : DIRAUTH_ERR_MISMATCH;
	}
	*bits = (unsigned)get_uint(trailer, 4);
	uint64_t count = ((uint64_t)1 << (*bits > SHARDS_BITS_MAX ? 0 : *bits)) + 1;
	if (memcmp(trailer + 4, SHARDS_TRAILER_MAGIC, 4) != 0 || *bits > SHARDS_BITS_MAX ||
	    size < 8 + count * 8)
		rc = DIRAUTH_ERR_MISMATCH;
	else if (index == UINT32_MAX)
		rc = 0;
	else if (index >= count - 1)
		rc = DIRAUTH_ERR_NOT_FOUND;
	else if ((rc = read_at(fd, entry, 16, size - 8 - count * 8 + (uint64_t)index * 8)) == 0) {
		uint64_t start = get_uint(entry, 8), end = get_uint(entry + 8, 8);
		if (start > end || end > size - 8 - count * 8 || end - start > BUFFER_MAX)
			rc = DIRAUTH_ERR_MISMATCH;
		uint8_t *bytes = rc ? NULL : malloc(end - start + 1);
		if (!rc && !bytes)
			rc = DIRAUTH_ERR_NOMEM;
		buffer_reset(out);
		if (!rc && (rc = read_at(fd, bytes, (size_t)(end - start), start)) == 0)
			rc = buffer_append(out, bytes, (size_t)(end - start));
		free(bytes);
	}
	close(fd);
	return rc;
}

/* ---- snapshots ---- */

static int body_info_encode(const struct store_body_info *info, uint8_t out[ENCODING_COUNT * 40])
{
	for (int e = 0; e < ENCODING_COUNT; e++) {
		put_uint(out + e * 40, info->size[e], 8);
		memcpy(out + e * 40 + 8, info->sha256[e], 32);
	}
	return 0;
}

static int body_info_decode(const struct kv_val *value, struct store_body_info *info)
{
	if (value->len != ENCODING_COUNT * 40)
		return DIRAUTH_ERR_STORE;
	for (int e = 0; e < ENCODING_COUNT; e++) {
		info->size[e] = get_uint(value->data + e * 40, 8);
		memcpy(info->sha256[e], value->data + e * 40 + 8, 32);
	}
	return 0;
}

int store_snapshot_put(struct store *store, const char *namespace_name, uint64_t epoch, const uint8_t *header,
                       size_t header_len, const struct store_body_info *info)
{
	struct kv_txn t;
	struct kv_val found;
	uint8_t key[STORE_EPOCH_KEY_LEN], ns_key[STORE_NS_LEN], field[8], encoded[ENCODING_COUNT * 40];
	size_t namespace_len;
	uint16_t ns = 0;

	if (!store || !header || !header_len)
		return DIRAUTH_ERR_SYNTAX;
	int rc = check_name(namespace_name, &namespace_len);
	if (rc)
		return rc;
	if (header_len > STORE_HEADER_MAX)
		return DIRAUTH_ERR_BOUNDS;
	kv_txn_begin(store->env, &t, KV_WRITE);
	namespace_intern(&t, store, namespace_name, namespace_len, &ns);
	put_uint(ns_key, ns, STORE_NS_LEN);
	if (kv_txn_get(&t, store->latest, ns_key, sizeof ns_key, &found)) {
		if (found.len != 8)
			kv_txn_fail(&t, DIRAUTH_ERR_STORE);
		else if (epoch <= get_uint(found.data, 8))
			kv_txn_fail(&t, DIRAUTH_ERR_ROLLBACK);
	}
	epoch_key(key, ns, epoch);
	put_uint(field, epoch, 8);
	kv_txn_put(&t, store->snapshots, key, sizeof key, header, header_len);
	if (info) {
		body_info_encode(info, encoded);
		kv_txn_put(&t, store->bodies, key, sizeof key, encoded, sizeof encoded);
	}
	kv_txn_put(&t, store->latest, ns_key, sizeof ns_key, field, 8);
	return kv_txn_commit(&t);
}

int store_snapshot_get(struct store *store, const char *namespace_name, uint64_t epoch, struct buffer *header,
                       struct store_body_info *info)
{
	struct kv_txn t;
	struct kv_val found;
	uint8_t key[STORE_EPOCH_KEY_LEN];
	uint16_t ns;

	if (!store || !header)
		return DIRAUTH_ERR_SYNTAX;
	int rc = namespace_read_begin(store, namespace_name, &t, &ns);
	if (rc)
		return rc;
	epoch_key(key, ns, epoch);
	if (!kv_txn_get(&t, store->snapshots, key, sizeof key, &found)) {
		kv_txn_fail(&t, DIRAUTH_ERR_NOT_FOUND);
	} else {
		buffer_reset(header);
		kv_txn_fail(&t, buffer_append(header, found.data, found.len));
	}
	if (info && !t.rc) {
		if (!kv_txn_get(&t, store->bodies, key, sizeof key, &found))
			kv_txn_fail(&t, DIRAUTH_ERR_STALE);
		else
			kv_txn_fail(&t, body_info_decode(&found, info));
	}
	kv_txn_abort(&t);
	return t.rc;
}

struct header_walk {
	store_header_visitor visit;
	void *context;
};

static int header_visit(void *context, struct kv_val key, struct kv_val value)
{
	struct header_walk *w = context;
	if (key.len != STORE_EPOCH_KEY_LEN)
		return DIRAUTH_ERR_STORE;
	return w->visit(w->context, get_uint(key.data + STORE_NS_LEN, 8), value.data, value.len);
}

int store_snapshot_foreach(struct store *store, const char *namespace_name, uint64_t from,
                           store_header_visitor visit, void *context)
{
	struct kv_txn t;
	uint8_t start[STORE_EPOCH_KEY_LEN];
	uint16_t ns;
	if (!store || !visit)
		return DIRAUTH_ERR_SYNTAX;
	int rc = namespace_read_begin(store, namespace_name, &t, &ns);
	if (rc)
		return rc == DIRAUTH_ERR_NOT_FOUND ? 0 : rc;
	epoch_key(start, ns, from);
	struct header_walk w = {visit, context};
	rc = kv_txn_walk_from(&t, store->snapshots, start, STORE_NS_LEN, start, sizeof start, header_visit,
	                      &w);
	kv_txn_abort(&t);
	return rc;
}

int store_snapshot_latest(struct store *store, const char *namespace_name, uint64_t *epoch)
{
	struct kv_txn t;
	struct kv_val found;
	uint16_t ns;

	if (!store || !epoch)
		return DIRAUTH_ERR_SYNTAX;
	int rc = namespace_read_begin(store, namespace_name, &t, &ns);
	if (rc)
		return rc;
	uint8_t ns_key[STORE_NS_LEN];
	put_uint(ns_key, ns, STORE_NS_LEN);
	if (kv_txn_get(&t, store->latest, ns_key, sizeof ns_key, &found)) {
		if (found.len != 8)
			kv_txn_fail(&t, DIRAUTH_ERR_STORE);
		else
			*epoch = get_uint(found.data, 8);
	} else {
		kv_txn_fail(&t, DIRAUTH_ERR_NOT_FOUND);
	}
	kv_txn_abort(&t);
	return t.rc;
}

int store_body_open(struct store *store, const char *namespace_name, uint64_t epoch,
                    enum content_encoding encoding, int *fd, uint64_t *size)
{
	struct buffer header;
	struct store_body_info info;
	char path[STORE_PATH_MAX];
	if ((unsigned)encoding >= ENCODING_COUNT)
		return DIRAUTH_ERR_SYNTAX;
	buffer_init(&header);
	int rc = store_snapshot_get(store, namespace_name, epoch, &header, &info);
	buffer_free(&header);
	if (rc)
		return rc;
	if ((rc = body_path(store, namespace_name, epoch, encoding, false, path, sizeof path)))
		return rc;
	if ((rc = open_regular_file(path, DIRAUTH_ERR_STALE, fd, size)) != 0)
		return rc;
	if (*size != info.size[encoding]) {
		close(*fd);
		*fd = -1;
		return DIRAUTH_ERR_MISMATCH;
	}
	return 0;
}

int store_body_check(struct store *store, const char *namespace_name, uint64_t epoch,
                     enum content_encoding encoding)
{
	struct buffer header;
	struct store_body_info info;
	int fd;
	uint64_t size;
	int rc = store_body_open(store, namespace_name, epoch, encoding, &fd, &size);
	if (rc)
		return rc;
	buffer_init(&header);
	rc = store_snapshot_get(store, namespace_name, epoch, &header, &info);
	buffer_free(&header);
	struct crypto_sha256_stream *digest = crypto_sha256_new();
	uint8_t chunk[64 * 1024], computed[32];
	if (!rc && !digest)
		rc = DIRAUTH_ERR_NOMEM;
	while (!rc) {
		ssize_t n = read(fd, chunk, sizeof chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			rc = DIRAUTH_ERR_IO;
		if (n <= 0)
			break;
		rc = crypto_sha256_update(digest, chunk, (size_t)n);
	}
	if (!rc) {
		rc = crypto_sha256_finish(digest, computed);
		digest = NULL;
		if (!rc && memcmp(computed, info.sha256[encoding], 32) != 0)
			rc = DIRAUTH_ERR_MISMATCH;
	}
	crypto_sha256_free(digest);
	close(fd);
	return rc;
}

/* The epochs of namespace ns's stored bodies older than keep_from. */
struct retain_collect {
	uint64_t keep_from;
	uint64_t *epochs;
	size_t count, cap;
};

static int retain_visit(void *context, struct kv_val key, struct kv_val value)
{
	(void)value;
	struct retain_collect *c = context;
	if (key.len != STORE_EPOCH_KEY_LEN)
		return DIRAUTH_ERR_STORE;
	uint64_t epoch = get_uint(key.data + STORE_NS_LEN, 8);
	if (epoch >= c->keep_from || c->count == STORE_PRUNE_CHUNK)
		return 1;
	if (c->count == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 16;
		uint64_t *grown = realloc(c->epochs, cap * sizeof *grown);
		if (!grown)
			return DIRAUTH_ERR_NOMEM;
		c->epochs = grown;
		c->cap = cap;
	}
	c->epochs[c->count++] = epoch;
	return 0;
}

/* The diffs of namespace_name whose base or target retention removed, removed in turn. */
static int diffs_sweep(struct store *store, const char *namespace_name)
{
	char directory[STORE_PATH_MAX];
	int rc = body_directory(store, namespace_name, directory, sizeof directory);
	if (rc)
		return rc;
	pthread_mutex_lock(&store->diffs_lock);
	rc = directory_sweep(store, namespace_name, directory, false);
	pthread_mutex_unlock(&store->diffs_lock);
	return rc;
}

int store_retain(struct store *store, const char *namespace_name, uint64_t keep_from)
{
	uint16_t ns;
	int rc;
	bool removed = false;
	for (;;) {
		struct retain_collect c = {keep_from, NULL, 0, 0};
		struct kv_txn t;
		/* A namespace never recorded keeps no bodies. */
		if ((rc = namespace_read_begin(store, namespace_name, &t, &ns)) != 0)
			return rc == DIRAUTH_ERR_NOT_FOUND ? 0 : rc;
		uint8_t prefix[STORE_NS_LEN];
		put_uint(prefix, ns, STORE_NS_LEN);
		int walked = kv_txn_walk_prefix(&t, store->bodies, prefix, sizeof prefix, retain_visit, &c);
		rc = t.rc ? t.rc : walked < 0 ? walked : 0;
		kv_txn_abort(&t);
		if (rc || c.count == 0) {
			free(c.epochs);
			return rc || !removed ? rc : diffs_sweep(store, namespace_name);
		}
		removed = true;
		/* Files first: a crash between leaves an entry without files, which reads as removed. */
		for (size_t i = 0; i < c.count && !rc; i++)
			rc = body_remove_files(store, namespace_name, c.epochs[i]);
		kv_txn_begin(store->env, &t, KV_WRITE);
		for (size_t i = 0; i < c.count && !rc; i++) {
			uint8_t key[STORE_EPOCH_KEY_LEN];
			epoch_key(key, ns, c.epochs[i]);
			kv_txn_delete(&t, store->bodies, key, sizeof key);
		}
		if (rc)
			kv_txn_fail(&t, rc);
		rc = kv_txn_commit(&t);
		free(c.epochs);
		if (rc)
			return rc;
	}
}

/* ---- copies ---- */

/* Copies a file into directory/name, 0600, fsynced. */
static int copy_file(const char *from, const char *directory, const char *name)
{
	char to[STORE_PATH_MAX];
	if (snprintf(to, sizeof to, "%s/%s", directory, name) >= (int)sizeof to)
		return DIRAUTH_ERR_BOUNDS;
	int in = open(from, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (in < 0)
		return errno == ENOENT ? 0 : DIRAUTH_ERR_IO; /* removed by retention meanwhile */
	int out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	int rc = out < 0 ? DIRAUTH_ERR_IO : 0;
	uint8_t chunk[64 * 1024];
	while (!rc) {
		ssize_t n = read(in, chunk, sizeof chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? DIRAUTH_ERR_IO : 0;
			break;
		}
		for (ssize_t done = 0; done < n && !rc;) {
			ssize_t w = write(out, chunk + done, (size_t)(n - done));
			if (w < 0 && errno == EINTR)
				continue;
			rc = w <= 0 ? DIRAUTH_ERR_IO : 0;
			done += w > 0 ? w : 0;
		}
	}
	if (!rc && fsync(out) != 0)
		rc = DIRAUTH_ERR_IO;
	if (out >= 0)
		close(out);
	close(in);
	return rc;
}

int snapshots_copy_bodies(struct store *store, const char *directory)
{
	int rc;
	char bodies[STORE_PATH_MAX], source[STORE_PATH_MAX];
	if (snprintf(bodies, sizeof bodies, "%s/bodies", directory) >= (int)sizeof bodies ||
	    snprintf(source, sizeof source, "%s/bodies", store->path) >= (int)sizeof source)
		return DIRAUTH_ERR_BOUNDS;
	if ((rc = make_directory(bodies)))
		return rc;
	DIR *top = opendir(source);
	if (!top)
		return DIRAUTH_ERR_IO;
	struct dirent *entry;
	while (!rc && (entry = readdir(top))) {
		if (entry->d_name[0] == '.')
			continue;
		char from_dir[STORE_PATH_MAX], to_dir[STORE_PATH_MAX];
		if (snprintf(from_dir, sizeof from_dir, "%s/%s", source, entry->d_name) >=
		        (int)sizeof from_dir ||
		    snprintf(to_dir, sizeof to_dir, "%s/%s", bodies, entry->d_name) >= (int)sizeof to_dir) {
			rc = DIRAUTH_ERR_BOUNDS;
			break;
		}
		if ((rc = make_directory(to_dir)))
			break;
		DIR *inner = opendir(from_dir);
		if (!inner) {
			rc = DIRAUTH_ERR_IO;
			break;
		}
		struct dirent *file;
		while (!rc && (file = readdir(inner))) {
			if (file->d_name[0] == '.' || strstr(file->d_name, ".part"))
				continue;
			char from[STORE_PATH_MAX];
			if (snprintf(from, sizeof from, "%s/%s", from_dir, file->d_name) >= (int)sizeof from)
				rc = DIRAUTH_ERR_BOUNDS;
			else
				rc = copy_file(from, to_dir, file->d_name);
		}
		closedir(inner);
		if (!rc)
			rc = sync_directory(to_dir);
	}
	closedir(top);
	if (!rc)
		rc = sync_directory(bodies);
	return rc;
}
