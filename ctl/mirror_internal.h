/*
 * mirror_internal.h: what the files of one dirauthctl mirror run share (mirror.h is the command's
 * contract; this header is not for other modules).
 *
 *   mirror.c         the run: the held state and fetch, the epochs' headers and bodies, the
 *                    renames in their order, pruning
 *   mirror_stage.c   the tree's files: staging into the scratch directory, the list of renames and
 *                    their publication, reading what is served, GETs from the server that passed
 *   mirror_log.c     the log: tiles and entry bundles verified against the checkpoint, the leaf of
 *                    each kept header, the inclusion and consistency proofs
 *   mirror_diffs.c   the snapshot diffs the tree serves, built from the bodies it keeps
 *   mirror_records.c the record shards the tree serves, built from the bodies it keeps
 *
 * Every function here reports its own failure into report with the run's name ("mirror <ns>")
 * and returns the error, as the run's steps do; none of them touches the served tree except
 * ctl_mirror_publish and the removals of pruning.
 */
#ifndef DIRAUTH_CTL_MIRROR_INTERNAL_H
#define DIRAUTH_CTL_MIRROR_INTERNAL_H

#include "base/buffer.h"
#include "ctl/mirror.h"
#include "ctl/report.h"
#include "net/client.h"
#include "schema/checkpoint.h"
#include "schema/names.h"
#include "schema/snapshot.h"
#include "tlog/tile.h"
#include "tlog/tree.h"

#include <stddef.h>
#include <stdint.h>

#define CTL_MIRROR_PATH_CAPACITY 4096
#define CTL_MIRROR_WHAT_MAX      (NAMESPACE_NAME_MAX + 16)

/* A file to rename into the tree. */
struct move {
	char *from; /* in the scratch directory */
	char *to;   /* in the tree */
};

struct moves {
	struct move *items;
	size_t count, capacity;
};

/* The log's tiles, held in memory for one run (mirror_log.c). */
struct tile_entry {
	struct tlog_tile tile;
	struct buffer data;
	int fresh; /* downloaded this run: to be written */
};

struct tile_set {
	struct tile_entry *items;
	size_t count, capacity;
	uint64_t tree_size;
};

/* One run. */
struct mirror {
	const struct ctl_mirror_options *options;
	const struct ctl_fetch_options *fetch;
	const char *namespace_name;
	char what[CTL_MIRROR_WHAT_MAX];      /* "mirror <ns>" */
	char tree[CTL_MIRROR_PATH_CAPACITY]; /* DIR/v1/NS */
	char scratch[CTL_MIRROR_PATH_CAPACITY];
	char staged[CTL_MIRROR_PATH_CAPACITY]; /* scratch/staged: files waiting to be renamed */
	unsigned serial;
	struct moves immutable, pointers;
	const char *server_url;
	size_t base_len;
	struct net_pool *pool;
	struct tile_set tiles;
	struct tlog_tile_source source;
	struct tlog_hash_reader reader;
};

/* A verified header note and what it says: an epoch the tree holds or takes this run. */
struct epoch_header {
	uint64_t epoch;
	struct buffer note;
	struct snapshot_header header;
	uint8_t *text; /* the note's text: the log's leaf */
	size_t text_len;
	int fresh;        /* new to the tree: written this run */
	int body_revoked; /* served, and holds what the new snapshot revokes: its bodies go */
	int keep;
	uint64_t leaf; /* its index in the log */
	int in_log;
};

/* ---- mirror_stage.c ---- */

/* snprintf into out; DIRAUTH_ERR_BOUNDS when it does not fit. */
int ctl_mirror_path(char out[CTL_MIRROR_PATH_CAPACITY], const char *format, ...)
    __attribute__((format(printf, 2, 3)));

/* Report a file that cannot be written (exit 73, 74 or 70 by rc), or memory; both return rc. */
int ctl_mirror_file_failure(struct mirror *m, const char *what_file, int rc, struct ctl_report *report);
int ctl_mirror_out_of_memory(struct mirror *m, struct ctl_report *report);

/* Frees the list's entries and itself (not the files). */
void ctl_mirror_moves_free(struct moves *list);

/* Writes data into the scratch directory and lists it for the rename to DIR/v1/NS/<relative>
 * (relative "../certificates" for v1/certificates). */
int ctl_mirror_stage_bytes(struct mirror *m, struct moves *list, const char *relative, const uint8_t *data,
                           size_t len, struct ctl_report *report);

/* Lists a file already in the scratch directory (one fetch wrote) for the rename. */
int ctl_mirror_stage_file(struct mirror *m, struct moves *list, const char *from, const char *relative,
                          struct ctl_report *report);

/* Whether DIR/v1/NS/<relative> is there: an immutable file written once is not written again. */
int ctl_mirror_served_exists(const struct mirror *m, const char *relative);

/* Where the file DIR/v1/NS/<relative> is to be read this run: its staged copy when the run stages
 * one (in m->immutable), else the served file. Returns 1 with out filled when either exists, else
 * 0. */
int ctl_mirror_staged_or_served(const struct mirror *m, const char *relative,
                                char out[CTL_MIRROR_PATH_CAPACITY]);

/* Renames the listed files into the tree, in order, each durably. */
int ctl_mirror_publish(struct mirror *m, const struct moves *list, struct ctl_report *report);

/* Reads DIR/v1/NS/<relative> (absent: *present 0, out empty). */
int ctl_mirror_read_served(struct mirror *m, const char *relative, size_t max_bytes, struct buffer *out,
                           int *present, struct ctl_report *report);

/* GETs /v1/NS/<relative> from the server that passed fetch (response initialised by the caller). */
int ctl_mirror_download(struct mirror *m, const char *label, const char *relative,
                        const char *accept_encoding, size_t max_bytes, int allow_missing,
                        struct net_response *response, struct ctl_report *report);

/* Removes DIR/v1/NS/<relative>, a file or a directory and all it holds (absent: nothing), durably;
 * a failure is reported (exit 74). */
int ctl_mirror_remove_served(struct mirror *m, const char *relative, struct ctl_report *report);

/* ---- mirror_log.c ---- */

/* Reports a refusal of the log's data (65, or 70 for memory and hashing) and returns rc. */
int ctl_mirror_log_refused(struct mirror *m, int rc, const char *why, struct ctl_report *report);

/* Every hash tile and entry bundle of the checkpoint's tree, read from the tree when held, else
 * downloaded; the whole tree verified against the checkpoint; then the leaf of each of the count
 * headers (in_log, leaf). */
int ctl_mirror_log_take(struct mirror *m, const struct checkpoint *checkpoint, struct epoch_header **headers,
                        size_t count, struct ctl_report *report);

/* Stages the tiles new this run (*tiles_written their number), each kept header's inclusion proof
 * against the checkpoint (immutable under its size, and as the pointer proof/<e>/latest), and the
 * consistency proofs from the CTL_MIRROR_CONSISTENCY_SPAN sizes below it not served yet. */
int ctl_mirror_log_stage(struct mirror *m, struct epoch_header **headers, size_t count,
                         const struct buffer *checkpoint_note, uint64_t size, size_t *tiles_written,
                         struct ctl_report *report);

/* Frees the tiles held. */
void ctl_mirror_log_free(struct mirror *m);

/* ---- mirror_diffs.c ---- */

/* Stages, for each header that is fresh and kept with a body, the diff to its body from the body of
 * each earlier kept header (not revoked) whose body the tree serves or stages, when worth offering
 * (snapshot_diff_worth_offering, the zstd diff against the zstd body: dirauthd's rule and measure), as
 * snapshots/<e>/diff/<base sha256> with .gz and .zst beside it; a diff served already is not staged again.
 * *written gets the number of diffs staged. */
int ctl_mirror_diffs_stage(struct mirror *m, struct epoch_header **headers, size_t count, size_t *written,
                           struct ctl_report *report);

/* Reads the body of epoch h (staged this run or served) when there is one and it still hashes to
 * its header's body-sha256. Returns 1 with *body and *len (the caller frees *body), 0 when there
 * is none to use, or a negative error (memory). */
int ctl_mirror_read_body(const struct mirror *m, const struct epoch_header *h, uint8_t **body, size_t *len);

/* Removes from the tree every diff whose base is base's body, from the directory of each of the
 * count headers (before the base's body goes). */
int ctl_mirror_diffs_remove_from(struct mirror *m, const struct epoch_header *base,
                                 struct epoch_header **headers, size_t count, struct ctl_report *report);

/* ---- mirror_records.c ---- */

/* Stages, for each header that is fresh and kept with a body, every record shard of its body
 * (schema/record-shard.md), each checked against the header (verify_record_shard) before it is
 * written, as the directory snapshots/<e>/records/ renamed into the tree at once, with the other
 * immutable files. *written gets the number of epochs whose shards were staged. */
int ctl_mirror_records_stage(struct mirror *m, struct epoch_header **headers, size_t count, size_t *written,
                             struct ctl_report *report);

#endif
