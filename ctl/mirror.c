/*
 * mirror.c: one run of dirauthctl mirror (see mirror.h).
 *
 * The run is verify-then-rename. Everything it will write is first written into its scratch
 * directory beside the tree (same file system, so a rename moves it), each file complete and
 * synced; only when every check has passed are the files renamed into place, immutable ones
 * first, then the few pointers in the order that keeps each of them naming only what exists. A
 * refusal or a crash before the renames leaves the served tree as it was; the scratch directory
 * of a crashed run is removed by the next.
 *
 * The checks of the snapshot are fetch's, run by fetch on a scratch copy of the served state
 * (hard links: fetch replaces files by rename, so the links it replaces never touch the tree).
 * What a mirror serves beyond what fetch keeps (the headers of skipped epochs, the bodies in each
 * encoding, the log's tiles and proofs) is checked here with verify/'s and tlog/'s functions.
 */
#include "ctl/mirror_internal.h"

#include "ctl/exchange.h"
#include "ctl/files.h"
#include "base/error.h"
#include "faults/faults.h"
#include "net/client.h"
#include "net/pool.h"
#include "schema/checkpoint.h"
#include "schema/note.h"
#include "tlog/bundle.h"
#include "tlog/consistency.h"
#include "tlog/proof.h"
#include "tlog/tile.h"
#include "tlog/tree.h"
#include "verify/snapshot.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The kept epochs: the numeric directories of DIR/v1/NS/snapshots, ascending. */
static int compare_epochs(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int epoch_of_name(const char *name, uint64_t *epoch)
{
	uint64_t value = 0;

	if (name[0] == '\0' || (name[0] == '0' && name[1] != '\0') || strlen(name) > 20)
		return 0;
	for (const char *c = name; *c; c++) {
		if (*c < '0' || *c > '9' || value > (UINT64_MAX - (uint64_t)(*c - '0')) / 10)
			return 0;
		value = value * 10 + (uint64_t)(*c - '0');
	}
	*epoch = value;
	return 1;
}

/* The epochs named by the directories of directory (none when it is absent), ascending, into
 * epochs; *count their number. Returns 0, or DIRAUTH_ERR_BOUNDS when there are more than capacity. */
static int list_epochs(const char *directory, uint64_t *epochs, size_t capacity, size_t *count)
{
	DIR *listing = opendir(directory);
	struct dirent *entry;
	uint64_t epoch;
	int rc = 0;

	*count = 0;
	if (listing == NULL)
		return 0;
	while (rc == 0 && (entry = readdir(listing)) != NULL) {
		if (!epoch_of_name(entry->d_name, &epoch))
			continue;
		if (*count == capacity)
			rc = DIRAUTH_ERR_BOUNDS;
		else
			epochs[(*count)++] = epoch;
	}
	closedir(listing);
	qsort(epochs, *count, sizeof(*epochs), compare_epochs);
	return rc;
}

/* ---- step 1: the held state, and fetch ---- */

/* Links DIR/v1/NS/<served> to scratch/NS/<held> when it exists. */
static int link_held(struct mirror *m, const char *served, const char *held, struct ctl_report *report)
{
	char from[CTL_MIRROR_PATH_CAPACITY], to[CTL_MIRROR_PATH_CAPACITY];
	int rc = ctl_mirror_path(from, "%s/%s", m->tree, served);

	if (rc == 0)
		rc = ctl_mirror_path(to, "%s/%s/%s", m->scratch, m->namespace_name, held);
	if (rc == 0) {
		rc = ctl_file_link(from, to);
		if (rc == DIRAUTH_ERR_NOT_FOUND)
			rc = 0;
	}
	return rc != 0 ? ctl_mirror_file_failure(m, to, rc, report) : 0;
}

static int prepare_scratch(struct mirror *m, const uint64_t *epochs, size_t epoch_count,
                           struct ctl_report *report)
{
	char path[CTL_MIRROR_PATH_CAPACITY];
	char served[64], held[64];
	int rc;

	rc = ctl_directory_remove_tree(m->scratch); /* a crashed run's */
	if (rc == 0)
		rc = ctl_mirror_path(path, "%s/%s", m->scratch, m->namespace_name);
	if (rc == 0)
		rc = ctl_directory_create(path);
	if (rc == 0)
		rc = ctl_directory_create(m->staged);
	if (rc != 0)
		return ctl_mirror_file_failure(m, m->scratch, rc, report);
	rc = link_held(m, "snapshots/latest", "latest.header", report);
	if (rc == 0)
		rc = link_held(m, "log/checkpoint", CTL_FETCH_LOG_HELD, report);
	if (rc == 0)
		rc = link_held(m, "../certificates", "certificates", report);
	/* The kept snapshots, so that fetch checks the new one against the held one's revocations and
	 * drops the bodies that hold what the new one revokes; and the served latest body at
	 * NS/<epoch>.body is where fetch finds the base of the diff it asks for (the held body it
	 * hands libdirauth), so the mirror's own download is the diff from the body it serves. */
	for (size_t i = 0; rc == 0 && i < epoch_count; i++) {
		snprintf(served, sizeof(served), "snapshots/%" PRIu64 "/body", epochs[i]);
		snprintf(held, sizeof(held), "%" PRIu64 ".body", epochs[i]);
		rc = link_held(m, served, held, report);
		snprintf(served, sizeof(served), "snapshots/%" PRIu64 "/header", epochs[i]);
		snprintf(held, sizeof(held), "%" PRIu64 ".header", epochs[i]);
		if (rc == 0)
			rc = link_held(m, served, held, report);
	}
	return rc;
}

/* An equivocation's evidence file that fetch wrote into the scratch copy goes to DIR/evidence. */
static void keep_evidence(struct mirror *m)
{
	char directory[CTL_MIRROR_PATH_CAPACITY], evidence[CTL_MIRROR_PATH_CAPACITY];
	DIR *listing;
	struct dirent *entry;

	if (ctl_mirror_path(directory, "%s/%s", m->scratch, m->namespace_name) != 0 ||
	    ctl_mirror_path(evidence, "%s/evidence", m->options->directory) != 0 ||
	    (listing = opendir(directory)) == NULL)
		return;
	while ((entry = readdir(listing)) != NULL) {
		const char *dot = strrchr(entry->d_name, '.');
		char from[CTL_MIRROR_PATH_CAPACITY], to[CTL_MIRROR_PATH_CAPACITY];
		if (dot == NULL || strcmp(dot, ".evidence") != 0)
			continue;
		if (ctl_mirror_path(from, "%s/%s", directory, entry->d_name) == 0 &&
		    ctl_mirror_path(to, "%s/%s", evidence, entry->d_name) == 0 &&
		    ctl_directory_create(evidence) == 0)
			(void)ctl_file_move(from, to);
	}
	closedir(listing);
}

/* ---- step 2: what fetch does not keep ---- */

static void epoch_header_free(struct epoch_header *h)
{
	buffer_free(&h->note);
	free(h->text);
}

static int epoch_header_take(struct epoch_header *h, uint64_t epoch, const uint8_t *note_bytes,
                             size_t note_len)
{
	struct note *note = NULL;
	int rc;

	memset(h, 0, sizeof(*h));
	buffer_init(&h->note);
	h->epoch = epoch;
	rc = buffer_append(&h->note, note_bytes, note_len);
	if (rc == 0)
		rc = note_parse(note_bytes, note_len, &note);
	if (rc == 0)
		rc = snapshot_header_parse(note->text, note->text_len, &h->header);
	if (rc == 0 && (h->text = malloc(note->text_len)) == NULL)
		rc = DIRAUTH_ERR_NOMEM;
	if (rc == 0) {
		memcpy(h->text, note->text, note->text_len);
		h->text_len = note->text_len;
	}
	note_free(note);
	return rc;
}

/* One encoding of the body of a verified header, downloaded and checked against it, then staged
 * as snapshots/<e>/<name>. A server that answers in another encoding (one that does not make
 * this one) leaves the file out: nginx then serves another. *missing gets whether the body is
 * not kept there (404). */
static int stage_body_encoding(struct mirror *m, const struct epoch_header *h, const char *encoding,
                               const char *name, int *missing, struct ctl_report *report)
{
	const struct trust_bundle *bundle = m->fetch->bundle;
	size_t max_compressed =
	    bundle->max_body_compressed > SIZE_MAX ? SIZE_MAX : (size_t)bundle->max_body_compressed;
	char relative[96], detail[VERIFY_DETAIL_MAX];
	struct net_response response;
	struct buffer body;
	const char *served;
	int rc;

	net_response_init(&response);
	buffer_init(&body);
	*missing = 0;
	snprintf(relative, sizeof(relative), "snapshots/%" PRIu64 "/body", h->epoch);
	rc = ctl_mirror_download(m, "body", relative, encoding, max_compressed, 1, &response, report);
	if (rc == 0 && response.status == 404)
		*missing = 1;
	if (rc != 0 || *missing)
		goto done;
	served = response.content_encoding[0] == '\0' ? "identity" : response.content_encoding;
	if (strcmp(served, encoding) != 0)
		goto done;
	rc = verify_snapshot_body(bundle, &h->header, served, response.body.data, response.body.len, &body,
	                          detail, sizeof(detail));
	if (rc != 0) {
		ctl_report_fail(report,
		                rc == DIRAUTH_ERR_NOMEM || rc == DIRAUTH_ERR_CRYPTO ? CTL_EXIT_SOFTWARE
		                                                                    : CTL_EXIT_DATA,
		                "%s: epoch %" PRIu64 " (%s): %s", m->what, h->epoch, encoding, detail);
		goto done;
	}
	snprintf(relative, sizeof(relative), "snapshots/%" PRIu64 "/%s", h->epoch, name);
	rc =
	    ctl_mirror_stage_bytes(m, &m->immutable, relative, response.body.data, response.body.len, report);
done:
	net_response_free(&response);
	buffer_free(&body);
	return rc;
}

/* An epoch new to the tree: its body in every encoding (identity from identity_path when fetch
 * kept it, else downloaded; an epoch between whose body the server no longer keeps is written
 * as a header alone), then its header. */
static int stage_epoch(struct mirror *m, const struct epoch_header *h, const char *identity_path,
                       struct ctl_report *report)
{
	char relative[96];
	int missing = 0;
	int rc = 0;

	if (identity_path != NULL) {
		snprintf(relative, sizeof(relative), "snapshots/%" PRIu64 "/body", h->epoch);
		rc = ctl_mirror_stage_file(m, &m->immutable, identity_path, relative, report);
	} else {
		rc = stage_body_encoding(m, h, "identity", "body", &missing, report);
	}
	if (rc == 0 && !missing)
		rc = stage_body_encoding(m, h, "gzip", "body.gz", &missing, report);
	if (rc == 0 && !missing)
		rc = stage_body_encoding(m, h, "zstd", "body.zst", &missing, report);
	/* The header after its bodies: the tree never serves a header whose body it is still writing. */
	snprintf(relative, sizeof(relative), "snapshots/%" PRIu64 "/header", h->epoch);
	if (rc == 0)
		rc = ctl_mirror_stage_bytes(m, &m->immutable, relative, h->note.data, h->note.len, report);
	return rc;
}

/* The headers between the held epoch and the new one, as the server holds them (newest first),
 * checked by fetch's walk (ctl_mirror_verify_chain). */
static int take_between(struct mirror *m, const struct buffer *held, const struct epoch_header *latest,
                        const struct buffer *certificates, struct epoch_header *between,
                        size_t *between_count, struct ctl_report *report)
{
	struct ctl_fetch_link *links = NULL;
	struct net_response response;
	struct epoch_header held_header;
	uint64_t max_chain = m->fetch->policy != NULL ? m->fetch->policy->max_chain : 1024;
	size_t count = 0;
	int rc;

	*between_count = 0;
	if (held->len == 0)
		return 0;
	rc = epoch_header_take(&held_header, 0, held->data, held->len);
	if (rc != 0) {
		epoch_header_free(&held_header);
		ctl_report_fail(report, CTL_EXIT_DATA, "%s: the served latest header cannot be read back",
		                m->what);
		return rc;
	}
	uint64_t held_epoch = held_header.header.epoch;
	epoch_header_free(&held_header);
	if (latest->epoch <= held_epoch + 1)
		return 0;
	if (latest->epoch - held_epoch - 1 > CTL_MIRROR_EPOCHS_MAX ||
	    latest->epoch - held_epoch > max_chain) {
		ctl_report_fail(report, CTL_EXIT_DATA,
		                "%s: %" PRIu64 " epochs since the served one: more than a run takes", m->what,
		                latest->epoch - held_epoch - 1);
		return DIRAUTH_ERR_BOUNDS;
	}
	links = calloc((size_t)(latest->epoch - held_epoch), sizeof(*links));
	if (links == NULL)
		return ctl_mirror_out_of_memory(m, report);
	net_response_init(&response);
	for (uint64_t epoch = latest->epoch - 1; rc == 0 && epoch > held_epoch; epoch--) {
		char relative[64];
		snprintf(relative, sizeof(relative), "snapshots/%" PRIu64, epoch);
		rc = ctl_mirror_download(m, "history", relative, NULL, CTL_FETCH_HEADER_NOTE_MAX, 1,
		                         &response, report);
		if (rc != 0 || response.status == 404)
			continue;
		rc = epoch_header_take(&between[count], epoch, response.body.data, response.body.len);
		count++;
		if (rc != 0)
			ctl_report_fail(report, CTL_EXIT_DATA,
			                "%s: the header of epoch %" PRIu64 " does not parse", m->what, epoch);
	}
	net_response_free(&response);
	*between_count = count;
	for (size_t i = 0; rc == 0 && i < count; i++) {
		links[i].epoch = between[i].epoch;
		links[i].note = between[i].note.data;
		links[i].note_len = between[i].note.len;
	}
	if (rc == 0)
		rc = ctl_mirror_verify_chain(m->fetch->bundle, certificates->data, certificates->len,
		                             held->data, held->len, &latest->header, links, count, max_chain,
		                             report);
	free(links);
	return rc;
}

/* ---- step 5: pruning ---- */

/* The body files of an epoch, identity last, so that no encoding outlives the others for long;
 * before them the diffs that yield its body (its diff directory) and those that apply to it (in
 * the directories of the count headers). */
static int remove_bodies(struct mirror *m, const struct epoch_header *h, struct epoch_header **headers,
                         size_t count, struct ctl_report *report)
{
	static const char *const names[] = {"records", "diff", "body.zst", "body.gz", "body"};
	char relative[96];
	int rc = ctl_mirror_diffs_remove_from(m, h, headers, count, report);

	for (size_t i = 0; rc == 0 && i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(relative, sizeof(relative), "snapshots/%" PRIu64 "/%s", h->epoch, names[i]);
		rc = ctl_mirror_remove_served(m, relative, report);
	}
	return rc;
}

static int prune(struct mirror *m, struct epoch_header **headers, size_t count, uint64_t size,
                 struct ctl_mirror_result *result, struct ctl_report *report)
{
	char relative[96], directory[CTL_MIRROR_PATH_CAPACITY];
	uint64_t olds[CTL_MIRROR_EPOCHS_MAX];
	size_t old_count;
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < count; i++) {
		if (headers[i]->keep)
			continue;
		rc = remove_bodies(m, headers[i], headers, count, report);
		snprintf(relative, sizeof(relative), "log/proof/%" PRIu64, headers[i]->epoch);
		if (rc == 0)
			rc = ctl_mirror_remove_served(m, relative, report);
		snprintf(relative, sizeof(relative), "snapshots/%" PRIu64, headers[i]->epoch);
		if (rc == 0)
			rc = ctl_mirror_remove_served(m, relative, report);
		result->epochs_pruned++;
	}
	if (rc != 0 || ctl_mirror_path(directory, "%s/log/consistency", m->tree) != 0)
		return rc;
	/* Past the bound, the rest goes at the next run. */
	(void)list_epochs(directory, olds, CTL_MIRROR_EPOCHS_MAX, &old_count);
	for (size_t i = 0; rc == 0 && i < old_count; i++) {
		if (olds[i] + CTL_MIRROR_CONSISTENCY_SPAN >= size)
			continue;
		snprintf(relative, sizeof(relative), "log/consistency/%" PRIu64, olds[i]);
		rc = ctl_mirror_remove_served(m, relative, report);
	}
	return rc;
}

/* The epochs kept: the keep_epochs newest, and every one still valid now. */
static void choose_kept(struct mirror *m, struct epoch_header **headers, size_t count, uint64_t latest_epoch)
{
	for (size_t i = 0; i < count; i++) {
		struct epoch_header *h = headers[i];
		h->keep = h->epoch + m->options->keep_epochs > latest_epoch ||
		          h->header.valid_until > m->fetch->now;
	}
}

/* ---- the run ---- */

/* One run at a time per namespace and tree: a write lock on DIR/.mirror-NS.lock (fcntl, released
 * when the process ends, however it ends). Returns the lock's descriptor, or -1 with the failure
 * in report: 75 when another run holds it. */
static int lock_tree(struct mirror *m, struct ctl_report *report)
{
	char path[CTL_MIRROR_PATH_CAPACITY];
	struct flock lock;
	int fd, rc;

	rc = ctl_directory_create(m->options->directory);
	if (rc == 0)
		rc = ctl_mirror_path(path, "%s.lock", m->scratch);
	if (rc != 0) {
		ctl_mirror_file_failure(m, m->options->directory, rc, report);
		return -1;
	}
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		ctl_mirror_file_failure(m, path, DIRAUTH_ERR_IO, report);
		return -1;
	}
	memset(&lock, 0, sizeof(lock));
	lock.l_type = F_WRLCK;
	lock.l_whence = SEEK_SET;
	if (fcntl(fd, F_SETLK, &lock) != 0) {
		ctl_report_fail(report, CTL_EXIT_TEMPFAIL, "%s: another run is updating %s; try again later",
		                m->what, m->options->directory);
		close(fd);
		return -1;
	}
	return fd;
}

struct run_state {
	struct buffer held;         /* the served latest header, before the run */
	struct buffer latest_note;  /* the new one, as fetch verified it */
	struct buffer certificates; /* as fetch verified them */
	struct buffer checkpoint_note;
	struct epoch_header latest;
	struct epoch_header *between; /* newest first */
	size_t between_count;
	struct epoch_header *served; /* the epochs the tree holds */
	size_t served_count;
	uint64_t kept[CTL_MIRROR_EPOCHS_MAX];
	size_t kept_count;
};

static int read_scratch(struct mirror *m, const char *name, size_t max_bytes, struct buffer *out,
                        struct ctl_report *report)
{
	char path[CTL_MIRROR_PATH_CAPACITY];
	uint8_t *bytes = NULL;
	size_t len = 0;
	int rc = ctl_mirror_path(path, "%s/%s/%s", m->scratch, m->namespace_name, name);

	if (rc == 0)
		rc = ctl_file_read(path, max_bytes, &bytes, &len);
	if (rc == 0)
		rc = buffer_append(out, bytes, len);
	free(bytes);
	if (rc != 0)
		ctl_report_fail(report, ctl_exit_code_for_error(rc),
		                "%s: cannot read back what fetch verified (%s): %s", m->what, name,
		                dirauth_strerror(rc));
	return rc;
}

/* The headers of the epochs the tree holds (read back: they were verified when written). An
 * epoch fetch dropped for its revoked records loses its bodies. */
static int read_served_epochs(struct mirror *m, struct run_state *s, struct ctl_mirror_result *result,
                              struct ctl_report *report)
{
	struct buffer note;
	int rc = 0;

	s->served = calloc(s->kept_count + 1, sizeof(*s->served));
	if (s->served == NULL)
		return ctl_mirror_out_of_memory(m, report);
	buffer_init(&note);
	for (size_t i = 0; rc == 0 && i < s->kept_count; i++) {
		char relative[96], scratch_body[CTL_MIRROR_PATH_CAPACITY],
		    served_body[CTL_MIRROR_PATH_CAPACITY];
		int present = 0;
		snprintf(relative, sizeof(relative), "snapshots/%" PRIu64 "/header", s->kept[i]);
		rc = ctl_mirror_read_served(m, relative, CTL_FETCH_HEADER_NOTE_MAX, &note, &present, report);
		if (rc != 0 || !present)
			continue;
		if (epoch_header_take(&s->served[s->served_count], s->kept[i], note.data, note.len) != 0) {
			epoch_header_free(&s->served[s->served_count]);
			continue; /* not ours to judge now; pruned in time */
		}
		s->served_count++;
		if (s->kept[i] == s->latest.epoch)
			continue;
		if (ctl_mirror_path(scratch_body, "%s/%s/%" PRIu64 ".body", m->scratch, m->namespace_name,
		                    s->kept[i]) == 0 &&
		    ctl_mirror_path(served_body, "%s/snapshots/%" PRIu64 "/body", m->tree, s->kept[i]) == 0 &&
		    ctl_file_exists(served_body) && !ctl_file_exists(scratch_body)) {
			/* fetch_revocations dropped it from the scratch copy: the new snapshot revokes what
			 * it holds. Removed once the new latest is served. */
			s->served[s->served_count - 1].body_revoked = 1;
			result->bodies_dropped++;
		}
	}
	buffer_free(&note);
	return rc;
}

static int run_after_fetch(struct mirror *m, struct run_state *s, struct ctl_mirror_result *result,
                           struct ctl_report *report)
{
	struct epoch_header **all = NULL;
	struct checkpoint checkpoint;
	struct note *note = NULL;
	char identity[CTL_MIRROR_PATH_CAPACITY];
	size_t all_count = 0;
	int rc;

	rc = read_scratch(m, "latest.header", CTL_FETCH_HEADER_NOTE_MAX, &s->latest_note, report);
	if (rc == 0)
		rc = read_scratch(m, "certificates", CERTIFICATE_BUNDLE_MAX_BYTES, &s->certificates, report);
	if (rc == 0)
		rc = read_scratch(m, CTL_FETCH_LOG_HELD, TLOG_PROOF_NOTE_MAX, &s->checkpoint_note, report);
	if (rc != 0)
		return rc;
	rc = epoch_header_take(&s->latest, 0, s->latest_note.data, s->latest_note.len);
	if (rc == 0) {
		s->latest.epoch = s->latest.header.epoch;
		rc = note_parse(s->checkpoint_note.data, s->checkpoint_note.len, &note);
	}
	if (rc == 0)
		rc = checkpoint_parse(note->text, note->text_len, &checkpoint);
	note_free(note);
	if (rc != 0)
		return ctl_mirror_log_refused(m, rc, "what fetch verified does not parse again", report);
	if (checkpoint.tree_size == 0 || checkpoint.tree_size > CTL_MIRROR_TREE_MAX)
		return ctl_mirror_log_refused(m, DIRAUTH_ERR_BOUNDS,
		                              "the checkpoint's tree is empty or too large", report);

	/* Step 2: the epochs between, the bodies, the tiles. */
	s->between = calloc(CTL_MIRROR_EPOCHS_MAX, sizeof(*s->between));
	if (s->between == NULL)
		return ctl_mirror_out_of_memory(m, report);
	rc = take_between(m, &s->held, &s->latest, &s->certificates, s->between, &s->between_count, report);
	if (rc != 0)
		return rc;
	rc = read_served_epochs(m, s, result, report);
	if (rc != 0)
		return rc;
	all = calloc(s->served_count + s->between_count + 1, sizeof(*all));
	if (all == NULL)
		return ctl_mirror_out_of_memory(m, report);
	for (size_t i = 0; i < s->served_count; i++)
		if (s->served[i].epoch != s->latest.epoch)
			all[all_count++] = &s->served[i];
	for (size_t i = 0; i < s->between_count; i++) {
		int held = 0;
		for (size_t j = 0; j < s->served_count; j++)
			held |= s->served[j].epoch == s->between[i].epoch;
		if (!held) {
			s->between[i].fresh = 1;
			all[all_count++] = &s->between[i];
		}
	}
	/* The latest epoch is new unless the tree serves it already (a run with nothing newer). */
	s->latest.fresh = 1;
	for (size_t j = 0; j < s->served_count; j++)
		if (s->served[j].epoch == s->latest.epoch)
			s->latest.fresh = 0;
	all[all_count++] = &s->latest;
	choose_kept(m, all, all_count, s->latest.epoch);

	rc = ctl_mirror_path(identity, "%s/%s/%" PRIu64 ".body", m->scratch, m->namespace_name,
	                     s->latest.epoch);
	for (size_t i = 0; rc == 0 && i < all_count; i++) {
		if (!all[i]->fresh || !all[i]->keep)
			continue;
		rc = stage_epoch(m, all[i], all[i] == &s->latest ? identity : NULL, report);
		result->epochs_written++;
	}
	/* The diffs to the new bodies from the kept ones, immutable like the bodies they join. */
	if (rc == 0)
		rc = ctl_mirror_diffs_stage(m, all, all_count, &result->diffs_written, report);
	/* The record shards of every kept body not served with them yet (mirror_records.c). */
	if (rc == 0)
		rc = ctl_mirror_records_stage(m, all, all_count, &result->record_epochs_written, report);
	if (rc == 0)
		rc = ctl_mirror_log_take(m, &checkpoint, all, all_count, report);
	if (rc == 0 && !s->latest.in_log)
		rc = ctl_mirror_log_refused(m, DIRAUTH_ERR_MISMATCH,
		                            "the new header is not in the checkpoint's tree", report);
	/* Step 3: the tiles and the proofs, and the pointers after them. */
	if (rc == 0)
		rc = ctl_mirror_log_stage(m, all, all_count, &s->checkpoint_note, checkpoint.tree_size,
		                          &result->tiles_written, report);
	if (rc == 0)
		rc = ctl_mirror_stage_bytes(m, &m->pointers, "log/checkpoint", s->checkpoint_note.data,
		                            s->checkpoint_note.len, report);
	if (rc == 0)
		rc = ctl_mirror_stage_bytes(m, &m->pointers, "snapshots/latest", s->latest_note.data,
		                            s->latest_note.len, report);
	if (rc != 0)
		goto done;

	/* Step 4: the tree. The certificates first among the pointers: latest must never name a header
	 * whose keys they do not certify. */
	fault_point("mirror-verified");
	rc = ctl_mirror_publish(m, &m->immutable, report);
	if (rc == 0) {
		fault_point("mirror-immutable");
		struct moves certificates = {0};
		char from[CTL_MIRROR_PATH_CAPACITY];
		rc = ctl_mirror_path(from, "%s/%s/certificates", m->scratch, m->namespace_name);
		if (rc == 0)
			rc = ctl_mirror_stage_file(m, &certificates, from, "../certificates", report);
		if (rc == 0)
			rc = ctl_mirror_publish(m, &certificates, report);
		ctl_mirror_moves_free(&certificates);
	}
	/* The proofs against the new checkpoint, then the checkpoint, then latest (the last two are
	 * the pointers' list's last entries). */
	for (size_t i = 0; rc == 0 && i < m->pointers.count; i++) {
		struct moves one = {&m->pointers.items[i], 1, 1};
		if (i == m->pointers.count - 2)
			fault_point("mirror-proofs");
		if (i == m->pointers.count - 1)
			fault_point("mirror-checkpoint");
		rc = ctl_mirror_publish(m, &one, report);
	}
	if (rc != 0)
		goto done;
	fault_point("mirror-latest");

	/* Step 5. */
	for (size_t i = 0; rc == 0 && i < all_count; i++)
		if (all[i]->body_revoked && all[i]->keep)
			rc = remove_bodies(m, all[i], all, all_count, report);
	if (rc == 0)
		rc = prune(m, all, all_count, checkpoint.tree_size, result, report);
	if (rc == 0)
		fault_point("mirror-pruned");
	result->tree_size = checkpoint.tree_size;
done:
	free(all);
	return rc;
}

static void run_state_free(struct run_state *s)
{
	buffer_free(&s->held);
	buffer_free(&s->latest_note);
	buffer_free(&s->certificates);
	buffer_free(&s->checkpoint_note);
	epoch_header_free(&s->latest);
	for (size_t i = 0; s->between != NULL && i < s->between_count; i++)
		epoch_header_free(&s->between[i]);
	for (size_t i = 0; s->served != NULL && i < s->served_count; i++)
		epoch_header_free(&s->served[i]);
	free(s->between);
	free(s->served);
}

int ctl_mirror_run(const struct ctl_mirror_options *options, struct ctl_fetch_attempt *attempts,
                   size_t *attempt_count, struct ctl_mirror_result *result, struct ctl_report *report)
{
	struct ctl_fetch_options fetch = *options->fetch;
	struct run_state *s = calloc(1, sizeof(*s));
	struct mirror m;
	char snapshots[CTL_MIRROR_PATH_CAPACITY];
	int present = 0;
	int lock = -1;
	int rc;

	memset(&m, 0, sizeof(m));
	memset(result, 0, sizeof(*result));
	*attempt_count = 0;
	m.options = options;
	m.fetch = options->fetch;
	m.namespace_name = options->fetch->namespace_name;
	snprintf(m.what, sizeof(m.what), "mirror %s", m.namespace_name);
	if (s == NULL)
		return ctl_mirror_out_of_memory(&m, report);
	buffer_init(&s->held);
	buffer_init(&s->latest_note);
	buffer_init(&s->certificates);
	buffer_init(&s->checkpoint_note);
	if (options->fetch->log == NULL || !options->fetch->log->enabled) {
		ctl_report_fail(report, CTL_EXIT_USAGE,
		                "%s: the log's keys are required: a mirror serves the log", m.what);
		free(s);
		return DIRAUTH_ERR_CONFIG;
	}
	rc = ctl_mirror_path(m.tree, "%s/v1/%s", options->directory, m.namespace_name);
	if (rc == 0)
		rc = ctl_mirror_path(m.scratch, "%s/.mirror-%s", options->directory, m.namespace_name);
	if (rc == 0)
		rc = ctl_mirror_path(m.staged, "%s/staged", m.scratch);
	if (rc == 0)
		rc = ctl_mirror_path(snapshots, "%s/snapshots", m.tree);
	if (rc != 0) {
		ctl_report_fail(report, CTL_EXIT_USAGE, "%s: the directory's path is too long", m.what);
		m.scratch[0] = '\0';
		goto done;
	}
	lock = lock_tree(&m, report);
	if (lock < 0) {
		rc = DIRAUTH_ERR_UNAVAILABLE;
		m.scratch[0] = '\0'; /* another run's: not ours to remove */
		goto done;
	}
	rc = ctl_mirror_read_served(&m, "snapshots/latest", CTL_FETCH_HEADER_NOTE_MAX, &s->held, &present,
	                            report);
	if (rc != 0)
		goto done;
	if (list_epochs(snapshots, s->kept, CTL_MIRROR_EPOCHS_MAX, &s->kept_count) != 0) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "%s: the tree holds more than %d epochs", m.what,
		                CTL_MIRROR_EPOCHS_MAX);
		rc = DIRAUTH_ERR_BOUNDS;
		goto done;
	}
	rc = prepare_scratch(&m, s->kept, s->kept_count, report);
	if (rc != 0)
		goto done;

	/* Step 1: fetch's checks, on the scratch copy of the served state. */
	fetch.directory = m.scratch;
	rc = ctl_fetch_run_servers(&fetch, options->server_urls, options->server_count, attempts,
	                           attempt_count, &result->fetched, report);
	if (rc != 0) {
		keep_evidence(&m);
		goto done;
	}
	result->server_url = attempts[*attempt_count - 1].server_url;
	m.server_url = result->server_url;
	m.base_len = ctl_exchange_url_length(m.server_url);
	if (net_pool_new(NULL, &m.pool) != 0)
		m.pool = NULL;
	rc = run_after_fetch(&m, s, result, report);
done:
	/* Whatever happened, nothing of the scratch directory is served or kept. */
	if (m.scratch[0] != '\0')
		(void)ctl_directory_remove_tree(m.scratch);
	if (lock >= 0)
		close(lock);
	net_pool_free(m.pool);
	ctl_mirror_log_free(&m);
	ctl_mirror_moves_free(&m.immutable);
	ctl_mirror_moves_free(&m.pointers);
	run_state_free(s);
	free(s);
	return rc;
}
