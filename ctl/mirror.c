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
#include "ctl/mirror.h"

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

#define PATH_CAPACITY 4096
#define WHAT_MAX      (NAMESPACE_NAME_MAX + 16)

/* ---- files to rename into the tree ---- */

struct move {
	char *from; /* in the scratch directory */
	char *to;   /* in the tree */
};

struct moves {
	struct move *items;
	size_t count, capacity;
};

static void moves_free(struct moves *list)
{
	for (size_t i = 0; i < list->count; i++) {
		free(list->items[i].from);
		free(list->items[i].to);
	}
	free(list->items);
	memset(list, 0, sizeof(*list));
}

static int moves_add(struct moves *list, const char *from, const char *to)
{
	if (list->count == list->capacity) {
		size_t capacity = list->capacity == 0 ? 64 : list->capacity * 2;
		struct move *items = realloc(list->items, capacity * sizeof(*items));
		if (items == NULL)
			return DIRAUTH_ERR_NOMEM;
		list->items = items;
		list->capacity = capacity;
	}
	list->items[list->count].from = strdup(from);
	list->items[list->count].to = strdup(to);
	if (list->items[list->count].from == NULL || list->items[list->count].to == NULL) {
		free(list->items[list->count].from);
		free(list->items[list->count].to);
		return DIRAUTH_ERR_NOMEM;
	}
	list->count++;
	return 0;
}

/* ---- the log's tiles, held in memory for one run ---- */

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

static void tile_set_free(struct tile_set *set)
{
	for (size_t i = 0; i < set->count; i++)
		buffer_free(&set->items[i].data);
	free(set->items);
	memset(set, 0, sizeof(*set));
}

static int tile_equal(const struct tlog_tile *a, const struct tlog_tile *b)
{
	return a->kind == b->kind && a->level == b->level && a->index == b->index && a->width == b->width;
}

/* The order tiles are loaded in (load_tiles): by level, then kind, then index; one tile per place. */
static int tile_order(const struct tlog_tile *a, const struct tlog_tile *b)
{
	if (a->level != b->level)
		return a->level < b->level ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->index != b->index)
		return a->index < b->index ? -1 : 1;
	return 0;
}

static const struct tile_entry *tile_set_find(const struct tile_set *set, const struct tlog_tile *tile)
{
	size_t low = 0, high = set->count;

	while (low < high) {
		size_t middle = low + (high - low) / 2;
		int order = tile_order(&set->items[middle].tile, tile);
		if (order == 0)
			return tile_equal(&set->items[middle].tile, tile) ? &set->items[middle] : NULL;
		if (order < 0)
			low = middle + 1;
		else
			high = middle;
	}
	return NULL;
}

/* tlog_fetch_tile over the tiles in memory: the tree's hashes come only from what was loaded. */
static int tile_set_fetch(void *context, const struct tlog_tile *tile, uint8_t out[TLOG_TILE_BYTES],
                          size_t *len)
{
	const struct tile_entry *entry = tile_set_find(context, tile);

	if (entry == NULL)
		return DIRAUTH_ERR_NOT_FOUND;
	if (entry->data.len > TLOG_TILE_BYTES)
		return DIRAUTH_ERR_MISMATCH;
	memcpy(out, entry->data.data, entry->data.len);
	*len = entry->data.len;
	return 0;
}

/* ---- one run ---- */

struct mirror {
	const struct ctl_mirror_options *options;
	const struct ctl_fetch_options *fetch;
	const char *namespace_name;
	char what[WHAT_MAX];      /* "mirror <ns>" */
	char tree[PATH_CAPACITY]; /* DIR/v1/NS */
	char scratch[PATH_CAPACITY];
	char staged[PATH_CAPACITY]; /* scratch/staged: files waiting to be renamed */
	unsigned serial;
	struct moves immutable, pointers;
	const char *server_url;
	size_t base_len;
	struct net_pool *pool;
	struct tile_set tiles;
	struct tlog_tile_source source;
	struct tlog_hash_reader reader;
};

static int path_format(char out[PATH_CAPACITY], const char *format, ...)
    __attribute__((format(printf, 2, 3)));

static int path_format(char out[PATH_CAPACITY], const char *format, ...)
{
	va_list arguments;
	int n;

	va_start(arguments, format);
	n = vsnprintf(out, PATH_CAPACITY, format, arguments);
	va_end(arguments);
	return n < 0 || n >= PATH_CAPACITY ? DIRAUTH_ERR_BOUNDS : 0;
}

static int file_failure(struct mirror *m, const char *what_file, int rc, struct ctl_report *report)
{
	ctl_report_fail(report,
	                rc == DIRAUTH_ERR_IO      ? CTL_EXIT_IO
	                : rc == DIRAUTH_ERR_NOMEM ? CTL_EXIT_SOFTWARE
	                                          : CTL_EXIT_CANNOT_CREATE,
	                "%s: cannot write %s: %s", m->what, what_file, dirauth_strerror(rc));
	return rc;
}

static int out_of_memory(struct mirror *m, struct ctl_report *report)
{
	ctl_report_fail(report, CTL_EXIT_SOFTWARE, "%s: out of memory", m->what);
	return DIRAUTH_ERR_NOMEM;
}

/* Writes data into the scratch directory and lists it for the rename to DIR/v1/NS/<relative>
 * (relative "../certificates" for v1/certificates). */
static int stage_bytes(struct mirror *m, struct moves *list, const char *relative, const uint8_t *data,
                       size_t len, struct ctl_report *report)
{
	char name[32], from[PATH_CAPACITY], to[PATH_CAPACITY];
	int rc;

	snprintf(name, sizeof(name), "f%u", m->serial++);
	rc = ctl_file_write_atomic(m->staged, name, data, len);
	if (rc == 0)
		rc = path_format(from, "%s/%s", m->staged, name);
	if (rc == 0)
		rc = path_format(to, "%s/%s", m->tree, relative);
	if (rc == 0)
		rc = moves_add(list, from, to);
	return rc != 0 ? file_failure(m, relative, rc, report) : 0;
}

/* Whether DIR/v1/NS/<relative> is there: an immutable file written once is not written again. */
static int served_exists(const struct mirror *m, const char *relative)
{
	char path[PATH_CAPACITY];

	return path_format(path, "%s/%s", m->tree, relative) == 0 && ctl_file_exists(path);
}

/* Lists a file already in the scratch directory (one fetch wrote) for the rename. */
static int stage_file(struct mirror *m, struct moves *list, const char *from, const char *relative,
                      struct ctl_report *report)
{
	char to[PATH_CAPACITY];
	int rc = path_format(to, "%s/%s", m->tree, relative);

	if (rc == 0)
		rc = moves_add(list, from, to);
	return rc != 0 ? file_failure(m, relative, rc, report) : 0;
}

/* Renames the listed files into the tree, in order, each durably. */
static int publish(struct mirror *m, const struct moves *list, struct ctl_report *report)
{
	for (size_t i = 0; i < list->count; i++) {
		char directory[PATH_CAPACITY];
		char *slash;
		int rc;

		snprintf(directory, sizeof(directory), "%s", list->items[i].to);
		slash = strrchr(directory, '/');
		if (slash != NULL)
			*slash = '\0';
		rc = ctl_directory_create(directory);
		if (rc == 0)
			rc = ctl_file_move(list->items[i].from, list->items[i].to);
		if (rc != 0)
			return file_failure(m, list->items[i].to, rc, report);
	}
	return 0;
}

/* Reads DIR/v1/NS/<relative> (absent: *present 0, out empty). */
static int read_served(struct mirror *m, const char *relative, size_t max_bytes, struct buffer *out,
                       int *present, struct ctl_report *report)
{
	char path[PATH_CAPACITY];
	uint8_t *bytes = NULL;
	size_t len = 0;
	int rc;

	buffer_reset(out);
	*present = 0;
	rc = path_format(path, "%s/%s", m->tree, relative);
	if (rc == 0 && !ctl_file_exists(path))
		return 0;
	if (rc == 0)
		rc = ctl_file_read(path, max_bytes, &bytes, &len);
	if (rc == 0)
		rc = buffer_append(out, bytes, len);
	free(bytes);
	if (rc != 0) {
		ctl_report_fail(report, ctl_exit_code_for_error(rc), "%s: cannot read the served %s: %s",
		                m->what, relative, dirauth_strerror(rc));
		return rc;
	}
	*present = 1;
	return 0;
}

/* GETs /v1/NS/<relative> from the server that passed fetch. */
static int download(struct mirror *m, const char *label, const char *relative, const char *accept_encoding,
                    size_t max_bytes, int allow_missing, struct net_response *response,
                    struct ctl_report *report)
{
	char accept[64];
	const char *headers[] = {m->fetch->authorization, NULL, NULL};
	struct buffer url;
	int rc;

	if (accept_encoding != NULL) {
		snprintf(accept, sizeof(accept), "Accept-Encoding: %s", accept_encoding);
		headers[m->fetch->authorization != NULL ? 1 : 0] = accept;
	}
	buffer_init(&url);
	net_response_free(response);
	net_response_init(response);
	rc = buffer_appendf(&url, "%.*s/v1/%s/%s", (int)m->base_len, m->server_url, m->namespace_name,
	                    relative);
	if (rc != 0)
		rc = out_of_memory(m, report);
	else
		rc = ctl_exchange_get_pooled(m->pool, m->what, label, (const char *)url.data, headers,
		                             max_bytes, allow_missing, response, report);
	buffer_free(&url);
	return rc;
}

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
	char from[PATH_CAPACITY], to[PATH_CAPACITY];
	int rc = path_format(from, "%s/%s", m->tree, served);

	if (rc == 0)
		rc = path_format(to, "%s/%s/%s", m->scratch, m->namespace_name, held);
	if (rc == 0) {
		rc = ctl_file_link(from, to);
		if (rc == DIRAUTH_ERR_NOT_FOUND)
			rc = 0;
	}
	return rc != 0 ? file_failure(m, to, rc, report) : 0;
}

static int prepare_scratch(struct mirror *m, const uint64_t *epochs, size_t epoch_count,
                           struct ctl_report *report)
{
	char path[PATH_CAPACITY];
	char served[64], held[64];
	int rc;

	rc = ctl_directory_remove_tree(m->scratch); /* a crashed run's */
	if (rc == 0)
		rc = path_format(path, "%s/%s", m->scratch, m->namespace_name);
	if (rc == 0)
		rc = ctl_directory_create(path);
	if (rc == 0)
		rc = ctl_directory_create(m->staged);
	if (rc != 0)
		return file_failure(m, m->scratch, rc, report);
	rc = link_held(m, "snapshots/latest", "latest.header", report);
	if (rc == 0)
		rc = link_held(m, "log/checkpoint", CTL_FETCH_LOG_HELD, report);
	if (rc == 0)
		rc = link_held(m, "../certificates", "certificates", report);
	/* The kept snapshots, so that fetch checks the new one against the held one's revocations and
	 * drops the bodies that hold what the new one revokes. */
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
	char directory[PATH_CAPACITY], evidence[PATH_CAPACITY];
	DIR *listing;
	struct dirent *entry;

	if (path_format(directory, "%s/%s", m->scratch, m->namespace_name) != 0 ||
	    path_format(evidence, "%s/evidence", m->options->directory) != 0 ||
	    (listing = opendir(directory)) == NULL)
		return;
	while ((entry = readdir(listing)) != NULL) {
		const char *dot = strrchr(entry->d_name, '.');
		char from[PATH_CAPACITY], to[PATH_CAPACITY];
		if (dot == NULL || strcmp(dot, ".evidence") != 0)
			continue;
		if (path_format(from, "%s/%s", directory, entry->d_name) == 0 &&
		    path_format(to, "%s/%s", evidence, entry->d_name) == 0 &&
		    ctl_directory_create(evidence) == 0)
			(void)ctl_file_move(from, to);
	}
	closedir(listing);
}

/* ---- step 2: what fetch does not keep ---- */

/* A verified header note and what it says. */
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
	rc = download(m, "body", relative, encoding, max_compressed, 1, &response, report);
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
	rc = stage_bytes(m, &m->immutable, relative, response.body.data, response.body.len, report);
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
		rc = stage_file(m, &m->immutable, identity_path, relative, report);
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
		rc = stage_bytes(m, &m->immutable, relative, h->note.data, h->note.len, report);
	return rc;
}

/* The headers between the held epoch and the new one, as the server holds them (newest first),
 * checked by fetch's walk (ctl_fetch_verify_chain). */
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
		return out_of_memory(m, report);
	net_response_init(&response);
	for (uint64_t epoch = latest->epoch - 1; rc == 0 && epoch > held_epoch; epoch--) {
		char relative[64];
		snprintf(relative, sizeof(relative), "snapshots/%" PRIu64, epoch);
		rc = download(m, "history", relative, NULL, CTL_FETCH_HEADER_NOTE_MAX, 1, &response, report);
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
		rc = ctl_fetch_verify_chain(m->fetch->bundle, certificates->data, certificates->len,
		                            held->data, held->len, &latest->header, links, count, max_chain,
		                            report);
	free(links);
	return rc;
}

/* ---- step 2, the log: tiles and bundles, verified against the checkpoint ---- */

static int tile_add(struct mirror *m, const struct tlog_tile *tile, struct ctl_report *report)
{
	char path[TLOG_TILE_PATH_MAX + 1], relative[TLOG_TILE_PATH_MAX + 8];
	size_t max_bytes = tile->kind == TLOG_TILE_ENTRIES ? TLOG_BUNDLE_MAX_BYTES : TLOG_TILE_BYTES;
	struct tile_set *set = &m->tiles;
	struct tile_entry *entry;
	int present = 0;
	int rc;

	if (set->count == set->capacity) {
		size_t capacity = set->capacity == 0 ? 256 : set->capacity * 2;
		struct tile_entry *items = realloc(set->items, capacity * sizeof(*items));
		if (items == NULL)
			return out_of_memory(m, report);
		set->items = items;
		set->capacity = capacity;
	}
	entry = &set->items[set->count];
	memset(entry, 0, sizeof(*entry));
	entry->tile = *tile;
	buffer_init(&entry->data);
	set->count++;
	rc = tlog_tile_path_format(tile, path);
	if (rc != 0)
		return out_of_memory(m, report);
	snprintf(relative, sizeof(relative), "log/%s", path);
	rc = read_served(m, relative, max_bytes, &entry->data, &present, report);
	if (rc != 0 || present)
		return rc;
	struct net_response response;
	net_response_init(&response);
	rc = download(m, "tile", relative, NULL, max_bytes, 0, &response, report);
	if (rc == 0 && buffer_append(&entry->data, response.body.data, response.body.len) != 0)
		rc = out_of_memory(m, report);
	net_response_free(&response);
	entry->fresh = 1;
	return rc;
}

/* Every hash tile and entry bundle of the tree of size leaves: read from the tree when held (a
 * full tile never changes), else downloaded. */
static int load_tiles(struct mirror *m, uint64_t size, struct ctl_report *report)
{
	int rc = 0;

	m->tiles.tree_size = size;
	for (uint8_t level = 0;
	     rc == 0 && level * TLOG_TILE_HEIGHT < 64 && (size >> (level * TLOG_TILE_HEIGHT)) > 0; level++) {
		uint64_t full = tlog_tile_full_count(size, level);
		uint16_t partial = tlog_tile_partial_width(size, level);
		for (int kind = TLOG_TILE_HASHES;
		     rc == 0 && kind <= (level == 0 ? TLOG_TILE_ENTRIES : TLOG_TILE_HASHES); kind++) {
			for (uint64_t index = 0; rc == 0 && index < full; index++) {
				struct tlog_tile tile = {(enum tlog_tile_kind)kind, level, index,
				                         TLOG_TILE_WIDTH};
				rc = tile_add(m, &tile, report);
			}
			if (rc == 0 && partial > 0) {
				struct tlog_tile tile = {(enum tlog_tile_kind)kind, level, full, partial};
				rc = tile_add(m, &tile, report);
			}
		}
	}
	return rc;
}

static int log_refused(struct mirror *m, int rc, const char *why, struct ctl_report *report)
{
	ctl_report_fail(
	    report, rc == DIRAUTH_ERR_NOMEM || rc == DIRAUTH_ERR_CRYPTO ? CTL_EXIT_SOFTWARE : CTL_EXIT_DATA,
	    "%s: log: %s (%s)", m->what, why, dirauth_strerror(rc));
	return rc;
}

/* The tree is the checkpoint's: its root from the tiles, each full hash tile against the hash
 * above it, each bundle against its level-0 tile. Together these tie every byte to the root. */
static int verify_tiles(struct mirror *m, const struct checkpoint *checkpoint, struct ctl_report *report)
{
	struct tlog_entry *entries = NULL;
	merkle_hash root;
	int rc;

	rc = tlog_tree_root(&m->reader, checkpoint->tree_size, root);
	if (rc != 0)
		return log_refused(m, rc, "the tiles do not make a tree", report);
	if (memcmp(root, checkpoint->root, MERKLE_HASH_SIZE) != 0)
		return log_refused(m, DIRAUTH_ERR_MISMATCH, "the tiles' root is not the checkpoint's",
		                   report);
	entries = calloc(TLOG_BUNDLE_MAX_ENTRIES, sizeof(*entries));
	if (entries == NULL)
		return out_of_memory(m, report);
	for (size_t i = 0; rc == 0 && i < m->tiles.count; i++) {
		const struct tile_entry *entry = &m->tiles.items[i];
		if (entry->tile.kind == TLOG_TILE_ENTRIES) {
			struct tlog_tile hashes = entry->tile;
			const struct tile_entry *level0;
			hashes.kind = TLOG_TILE_HASHES;
			level0 = tile_set_find(&m->tiles, &hashes);
			rc = level0 == NULL ? DIRAUTH_ERR_NOT_FOUND
			                    : tlog_bundle_parse(entry->data.data, entry->data.len,
			                                        entry->tile.width, entries);
			if (rc == 0)
				rc = tlog_bundle_check_tile(entries, entry->tile.width, level0->data.data,
				                            level0->data.len);
			if (rc != 0)
				rc = log_refused(m, rc, "an entry bundle does not hash to its tile", report);
		} else if (entry->tile.width == TLOG_TILE_WIDTH) {
			uint8_t parent = (uint8_t)((entry->tile.level + 1) * TLOG_TILE_HEIGHT);
			merkle_hash computed, expected;
			rc = tlog_tile_hash(&entry->tile, entry->data.data, entry->data.len, parent,
			                    entry->tile.index, computed);
			if (rc == 0)
				rc = tlog_tile_source_read(&m->source, parent, entry->tile.index, 1,
				                           &expected);
			if (rc == 0 && memcmp(computed, expected, MERKLE_HASH_SIZE) != 0)
				rc = DIRAUTH_ERR_MISMATCH;
			if (rc != 0)
				rc = log_refused(m, rc, "a hash tile does not hash to the tree above it",
				                 report);
		}
	}
	free(entries);
	return rc;
}

/* The leaf of each header: the entries are searched from the newest, where kept epochs are. */
static int find_leaves(struct mirror *m, struct epoch_header **headers, size_t count,
                       struct ctl_report *report)
{
	struct tlog_entry *entries = calloc(TLOG_BUNDLE_MAX_ENTRIES, sizeof(*entries));
	size_t found = 0;
	int rc = 0;

	if (entries == NULL)
		return out_of_memory(m, report);
	for (size_t i = m->tiles.count; rc == 0 && found < count && i > 0; i--) {
		const struct tile_entry *entry = &m->tiles.items[i - 1];
		if (entry->tile.kind != TLOG_TILE_ENTRIES)
			continue;
		rc = tlog_bundle_parse(entry->data.data, entry->data.len, entry->tile.width, entries);
		for (size_t e = 0; rc == 0 && e < entry->tile.width; e++) {
			for (size_t h = 0; h < count; h++) {
				if (headers[h]->in_log || headers[h]->text_len != entries[e].len ||
				    memcmp(headers[h]->text, entries[e].data, entries[e].len) != 0)
					continue;
				headers[h]->in_log = 1;
				headers[h]->leaf = entry->tile.index * TLOG_TILE_WIDTH + e;
				found++;
			}
		}
	}
	free(entries);
	return rc == 0 ? 0 : log_refused(m, rc, "an entry bundle does not parse", report);
}

/* ---- step 3: the proofs ---- */

static int stage_proofs(struct mirror *m, struct epoch_header **headers, size_t count,
                        const struct buffer *checkpoint_note, uint64_t size, struct ctl_report *report)
{
	merkle_hash path[MERKLE_MAX_PROOF];
	struct buffer out;
	char relative[128];
	int rc = 0;

	buffer_init(&out);
	for (size_t i = 0; rc == 0 && i < count; i++) {
		const struct epoch_header *h = headers[i];
		size_t path_len = 0;
		if (!h->in_log || !h->keep)
			continue;
		buffer_reset(&out);
		rc = tlog_inclusion_proof(&m->reader, size, h->leaf, path, &path_len);
		if (rc == 0)
			rc = tlog_proof_encode(h->leaf, path, path_len, h->note.data, h->note.len,
			                       checkpoint_note->data, checkpoint_note->len, &out);
		if (rc != 0) {
			rc = log_refused(m, rc, "cannot make an inclusion proof", report);
			break;
		}
		snprintf(relative, sizeof(relative), "log/proof/%" PRIu64 "/%" PRIu64, h->epoch, size);
		if (!served_exists(m, relative))
			rc = stage_bytes(m, &m->immutable, relative, out.data, out.len, report);
		snprintf(relative, sizeof(relative), "log/proof/%" PRIu64 "/latest", h->epoch);
		if (rc == 0)
			rc = stage_bytes(m, &m->pointers, relative, out.data, out.len, report);
	}
	/* Consistency from the sizes just below: those of the checkpoints clients of this mirror and
	 * of the authorities hold. */
	for (uint64_t old = size > CTL_MIRROR_CONSISTENCY_SPAN ? size - CTL_MIRROR_CONSISTENCY_SPAN : 1;
	     rc == 0 && old < size; old++) {
		size_t proof_len = 0;
		snprintf(relative, sizeof(relative), "log/consistency/%" PRIu64 "/%" PRIu64, old, size);
		if (served_exists(m, relative))
			continue;
		buffer_reset(&out);
		rc = tlog_consistency_proof(&m->reader, size, old, path, &proof_len);
		if (rc == 0)
			rc = tlog_consistency_encode(path, proof_len, &out);
		if (rc != 0) {
			rc = log_refused(m, rc, "cannot make a consistency proof", report);
			break;
		}
		rc = stage_bytes(m, &m->immutable, relative, out.data, out.len, report);
	}
	buffer_free(&out);
	return rc;
}

static int stage_tiles(struct mirror *m, size_t *written, struct ctl_report *report)
{
	char path[TLOG_TILE_PATH_MAX + 1], relative[TLOG_TILE_PATH_MAX + 8];
	int rc = 0;

	*written = 0;
	for (size_t i = 0; rc == 0 && i < m->tiles.count; i++) {
		const struct tile_entry *entry = &m->tiles.items[i];
		if (!entry->fresh)
			continue;
		(void)tlog_tile_path_format(&entry->tile, path);
		snprintf(relative, sizeof(relative), "log/%s", path);
		rc = stage_bytes(m, &m->immutable, relative, entry->data.data, entry->data.len, report);
		(*written)++;
	}
	return rc;
}

/* ---- step 5: pruning ---- */

static int remove_served(struct mirror *m, const char *relative, struct ctl_report *report)
{
	char path[PATH_CAPACITY];
	int rc = path_format(path, "%s/%s", m->tree, relative);

	if (rc == 0)
		rc = ctl_directory_remove_tree(path);
	if (rc != 0) {
		ctl_report_fail(report, CTL_EXIT_IO, "%s: cannot remove %s: %s", m->what, relative,
		                dirauth_strerror(rc));
		return rc;
	}
	return 0;
}

/* The body files of an epoch, identity last, so that no encoding outlives the others for long. */
static int remove_bodies(struct mirror *m, uint64_t epoch, struct ctl_report *report)
{
	static const char *const names[] = {"body.zst", "body.gz", "body"};
	char relative[96];
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(relative, sizeof(relative), "snapshots/%" PRIu64 "/%s", epoch, names[i]);
		rc = remove_served(m, relative, report);
	}
	return rc;
}

static int prune(struct mirror *m, struct epoch_header **headers, size_t count, uint64_t size,
                 struct ctl_mirror_result *result, struct ctl_report *report)
{
	char relative[96], directory[PATH_CAPACITY];
	uint64_t olds[CTL_MIRROR_EPOCHS_MAX];
	size_t old_count;
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < count; i++) {
		if (headers[i]->keep)
			continue;
		rc = remove_bodies(m, headers[i]->epoch, report);
		snprintf(relative, sizeof(relative), "log/proof/%" PRIu64, headers[i]->epoch);
		if (rc == 0)
			rc = remove_served(m, relative, report);
		snprintf(relative, sizeof(relative), "snapshots/%" PRIu64, headers[i]->epoch);
		if (rc == 0)
			rc = remove_served(m, relative, report);
		result->epochs_pruned++;
	}
	if (rc != 0 || path_format(directory, "%s/log/consistency", m->tree) != 0)
		return rc;
	/* Past the bound, the rest goes at the next run. */
	(void)list_epochs(directory, olds, CTL_MIRROR_EPOCHS_MAX, &old_count);
	for (size_t i = 0; rc == 0 && i < old_count; i++) {
		if (olds[i] + CTL_MIRROR_CONSISTENCY_SPAN >= size)
			continue;
		snprintf(relative, sizeof(relative), "log/consistency/%" PRIu64, olds[i]);
		rc = remove_served(m, relative, report);
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
	char path[PATH_CAPACITY];
	struct flock lock;
	int fd, rc;

	rc = ctl_directory_create(m->options->directory);
	if (rc == 0)
		rc = path_format(path, "%s.lock", m->scratch);
	if (rc != 0) {
		file_failure(m, m->options->directory, rc, report);
		return -1;
	}
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		file_failure(m, path, DIRAUTH_ERR_IO, report);
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
	char path[PATH_CAPACITY];
	uint8_t *bytes = NULL;
	size_t len = 0;
	int rc = path_format(path, "%s/%s/%s", m->scratch, m->namespace_name, name);

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
		return out_of_memory(m, report);
	buffer_init(&note);
	for (size_t i = 0; rc == 0 && i < s->kept_count; i++) {
		char relative[96], scratch_body[PATH_CAPACITY], served_body[PATH_CAPACITY];
		int present = 0;
		snprintf(relative, sizeof(relative), "snapshots/%" PRIu64 "/header", s->kept[i]);
		rc = read_served(m, relative, CTL_FETCH_HEADER_NOTE_MAX, &note, &present, report);
		if (rc != 0 || !present)
			continue;
		if (epoch_header_take(&s->served[s->served_count], s->kept[i], note.data, note.len) != 0) {
			epoch_header_free(&s->served[s->served_count]);
			continue; /* not ours to judge now; pruned in time */
		}
		s->served_count++;
		if (s->kept[i] == s->latest.epoch)
			continue;
		if (path_format(scratch_body, "%s/%s/%" PRIu64 ".body", m->scratch, m->namespace_name,
		                s->kept[i]) == 0 &&
		    path_format(served_body, "%s/snapshots/%" PRIu64 "/body", m->tree, s->kept[i]) == 0 &&
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
	char identity[PATH_CAPACITY];
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
		return log_refused(m, rc, "what fetch verified does not parse again", report);
	if (checkpoint.tree_size == 0 || checkpoint.tree_size > CTL_MIRROR_TREE_MAX)
		return log_refused(m, DIRAUTH_ERR_BOUNDS, "the checkpoint's tree is empty or too large",
		                   report);

	/* Step 2: the epochs between, the bodies, the tiles. */
	s->between = calloc(CTL_MIRROR_EPOCHS_MAX, sizeof(*s->between));
	if (s->between == NULL)
		return out_of_memory(m, report);
	rc = take_between(m, &s->held, &s->latest, &s->certificates, s->between, &s->between_count, report);
	if (rc != 0)
		return rc;
	rc = read_served_epochs(m, s, result, report);
	if (rc != 0)
		return rc;
	all = calloc(s->served_count + s->between_count + 1, sizeof(*all));
	if (all == NULL)
		return out_of_memory(m, report);
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

	rc = path_format(identity, "%s/%s/%" PRIu64 ".body", m->scratch, m->namespace_name, s->latest.epoch);
	for (size_t i = 0; rc == 0 && i < all_count; i++) {
		if (!all[i]->fresh || !all[i]->keep)
			continue;
		rc = stage_epoch(m, all[i], all[i] == &s->latest ? identity : NULL, report);
		result->epochs_written++;
	}
	if (rc == 0) {
		m->source.fetch = tile_set_fetch;
		m->source.context = &m->tiles;
		m->source.tree_size = checkpoint.tree_size;
		m->reader.read = tlog_tile_source_read;
		m->reader.context = &m->source;
		rc = load_tiles(m, checkpoint.tree_size, report);
	}
	if (rc == 0)
		rc = verify_tiles(m, &checkpoint, report);
	if (rc == 0)
		rc = find_leaves(m, all, all_count, report);
	if (rc == 0 && !s->latest.in_log)
		rc = log_refused(m, DIRAUTH_ERR_MISMATCH, "the new header is not in the checkpoint's tree",
		                 report);
	if (rc == 0)
		rc = stage_tiles(m, &result->tiles_written, report);
	/* Step 3: the proofs, and the pointers after them. */
	if (rc == 0)
		rc = stage_proofs(m, all, all_count, &s->checkpoint_note, checkpoint.tree_size, report);
	if (rc == 0)
		rc = stage_bytes(m, &m->pointers, "log/checkpoint", s->checkpoint_note.data,
		                 s->checkpoint_note.len, report);
	if (rc == 0)
		rc = stage_bytes(m, &m->pointers, "snapshots/latest", s->latest_note.data, s->latest_note.len,
		                 report);
	if (rc != 0)
		goto done;

	/* Step 4: the tree. The certificates first among the pointers: latest must never name a header
	 * whose keys they do not certify. */
	fault_point("mirror-verified");
	rc = publish(m, &m->immutable, report);
	if (rc == 0) {
		fault_point("mirror-immutable");
		struct moves certificates = {0};
		char from[PATH_CAPACITY];
		rc = path_format(from, "%s/%s/certificates", m->scratch, m->namespace_name);
		if (rc == 0)
			rc = stage_file(m, &certificates, from, "../certificates", report);
		if (rc == 0)
			rc = publish(m, &certificates, report);
		moves_free(&certificates);
	}
	/* The proofs against the new checkpoint, then the checkpoint, then latest (the last two are
	 * the pointers' list's last entries). */
	for (size_t i = 0; rc == 0 && i < m->pointers.count; i++) {
		struct moves one = {&m->pointers.items[i], 1, 1};
		if (i == m->pointers.count - 2)
			fault_point("mirror-proofs");
		if (i == m->pointers.count - 1)
			fault_point("mirror-checkpoint");
		rc = publish(m, &one, report);
	}
	if (rc != 0)
		goto done;
	fault_point("mirror-latest");

	/* Step 5. */
	for (size_t i = 0; rc == 0 && i < all_count; i++)
		if (all[i]->body_revoked && all[i]->keep)
			rc = remove_bodies(m, all[i]->epoch, report);
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
	char snapshots[PATH_CAPACITY];
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
		return out_of_memory(&m, report);
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
	rc = path_format(m.tree, "%s/v1/%s", options->directory, m.namespace_name);
	if (rc == 0)
		rc = path_format(m.scratch, "%s/.mirror-%s", options->directory, m.namespace_name);
	if (rc == 0)
		rc = path_format(m.staged, "%s/staged", m.scratch);
	if (rc == 0)
		rc = path_format(snapshots, "%s/snapshots", m.tree);
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
	rc = read_served(&m, "snapshots/latest", CTL_FETCH_HEADER_NOTE_MAX, &s->held, &present, report);
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
	tile_set_free(&m.tiles);
	moves_free(&m.immutable);
	moves_free(&m.pointers);
	run_state_free(s);
	free(s);
	return rc;
}
