/*
 * vote.c: this authority's vote body from the sealed views, and the previous snapshot it names
 * (vote.h).
 *
 * The records and their health come from one walk of the sealed view with each service's
 * statements (store_lifecycle_view_foreach: the same records, in the same order, as
 * store_view_foreach), the revocations from one walk of the sealed revocations. A namespace
 * without the lifecycle sections is walked with store_view_foreach alone. The body of a vote that
 * is sent is held in memory: it is a few lines per service, what the vote envelope carries
 * anyway. A single authority's vote is never sent: its record lines are only counted, and the
 * consensus reads them again from the sealed view a page at a time, each page's notes with them
 * (publish_view_lines), so that a million records are never held at once.
 */
#include "server/publish/vote.h"

#include "consensus/consensus.h"
#include "crypto/crypto.h"
#include "base/error.h"
#include "schema/health.h"
#include "schema/note.h"
#include "schema/registration.h"
#include "server/publish/publish.h"
#include "server/store/registrations.h"
#include "server/store/snapshots.h"
#include "server/store/statements.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the previous snapshot ---- */

/* The stored body of the snapshot whose header is header, read whole from its identity file into
 * out and checked against the header: its size (within the configured bound) and its SHA-256.
 * Returns 0, DIRAUTH_ERR_MISMATCH, the store's errors (DIRAUTH_ERR_STALE: no longer kept),
 * DIRAUTH_ERR_IO, DIRAUTH_ERR_NOMEM. */
static int read_committed_body(const struct config *config, struct store *store,
                               const struct snapshot_header *header, struct buffer *out)
{
	int fd = -1;
	uint64_t size = 0, size_bound = header->body_size;
	uint8_t digest[32];
	if (size_bound > config->bounds.snapshot_body_uncompressed)
		return DIRAUTH_ERR_MISMATCH;
	int rc = store_body_open(store, header->namespace_name, header->epoch, ENCODING_IDENTITY, &fd, &size);
	if (rc)
		return rc;
	if (size > size_bound)
		rc = DIRAUTH_ERR_MISMATCH;
	uint8_t chunk[64 * 1024];
	while (rc == 0) {
		ssize_t n = read(fd, chunk, sizeof chunk);
		if (n < 0)
			rc = DIRAUTH_ERR_IO;
		if (n <= 0)
			break;
		if (out->len + (size_t)n > size_bound)
			rc = DIRAUTH_ERR_MISMATCH;
		else
			rc = buffer_append(out, chunk, (size_t)n);
	}
	close(fd);
	if (rc == 0 && out->len != header->body_size)
		rc = DIRAUTH_ERR_MISMATCH;
	if (rc == 0)
		rc = crypto_sha256(out->data, out->len, digest);
	if (rc == 0 && memcmp(digest, header->body_sha256, 32) != 0)
		rc = DIRAUTH_ERR_MISMATCH;
	return rc;
}

int publish_stored_body_read(const struct config *config, struct store *store, const char *namespace_name,
                             uint64_t epoch, struct snapshot_header *header, struct buffer *body)
{
	struct buffer header_note;
	struct note *note = NULL;
	buffer_init(&header_note);
	int rc = store_snapshot_get(store, namespace_name, epoch, &header_note, NULL);
	if (rc == 0)
		rc = note_parse(header_note.data, header_note.len, &note);
	if (rc == 0)
		rc = snapshot_header_parse(note->text, note->text_len, header);
	if (rc == 0 && (header->epoch != epoch || strcmp(header->namespace_name, namespace_name) != 0))
		rc = DIRAUTH_ERR_MISMATCH;
	note_free(note);
	buffer_free(&header_note);
	return rc ? rc : read_committed_body(config, store, header, body);
}

int publish_previous_load(const struct config *config, struct store *store, size_t namespace_index,
                          struct publish_previous *out)
{
	const struct config_namespace *ns = &config->namespaces[namespace_index];
	struct buffer header_note;
	struct note *note = NULL;
	struct snapshot_header header;
	memset(out, 0, sizeof *out);
	buffer_init(&out->text);
	buffer_init(&out->body);
	int rc = publish_latest_digest(store, ns->name, &out->have, &out->epoch, out->digest);
	if (rc || !out->have)
		return rc;
	buffer_init(&header_note);
	rc = store_snapshot_get(store, ns->name, out->epoch, &header_note, NULL);
	if (rc == 0)
		rc = note_parse(header_note.data, header_note.len, &note);
	if (rc == 0)
		rc = snapshot_header_parse(note->text, note->text_len, &header);
	if (rc == 0)
		rc = buffer_append(&out->text, note->text, note->text_len);
	note_free(note);
	buffer_free(&header_note);
	if (rc)
		return rc;
	out->method = header.consensus_method;
	if (header.consensus_method != 2)
		return 0;
	if (header.epoch != out->epoch || strcmp(header.namespace_name, ns->name) != 0)
		return DIRAUTH_ERR_MISMATCH;
	rc = read_committed_body(config, store, &header, &out->body);
	struct snapshot_body_limits limits = {config->bounds.records_per_snapshot, config_max_health(config),
	                                      ns->max_revocations};
	if (rc == 0)
		rc = snapshot_body_parse_sections(out->body.data, out->body.len, &limits, &out->parsed);
	if (rc == 0 &&
	    (out->parsed->epoch != out->epoch || strcmp(out->parsed->namespace_name, ns->name) != 0))
		rc = DIRAUTH_ERR_MISMATCH;
	if (rc) {
		snapshot_body_free(out->parsed);
		out->parsed = NULL;
	}
	return rc;
}

/* The record and health lines of a parsed body, into a new vote body. */
static int base_from_body(const struct snapshot_body *parsed, struct vote_body **out)
{
	struct vote_body *base = calloc(1, sizeof *base);
	if (!base)
		return DIRAUTH_ERR_NOMEM;
	int rc = 0;
	if (parsed->record_count && !(base->records = calloc(parsed->record_count, sizeof *base->records)))
		rc = DIRAUTH_ERR_NOMEM;
	if (rc == 0 && parsed->health_count &&
	    !(base->health = calloc(parsed->health_count, sizeof *base->health)))
		rc = DIRAUTH_ERR_NOMEM;
	for (size_t r = 0; rc == 0 && r < parsed->record_count; r++) {
		const struct snapshot_record *record = &parsed->records[r];
		struct vote_body_record *line = &base->records[r];
		memcpy(line->service_id, record->service_id, SERVICE_ID_SIZE);
		rc = registration_note_sequence(record->note, record->note_len, &line->sequence);
		if (rc == 0)
			rc = crypto_sha256(record->note, record->note_len, line->registration_sha256);
		base->record_count = r + 1;
	}
	for (size_t h = 0; rc == 0 && h < parsed->health_count; h++) {
		const struct snapshot_health *entry = &parsed->health[h];
		struct vote_body_health *line = &base->health[h];
		struct health_statement statement;
		struct note *note = NULL;
		rc = health_parse_note(entry->note, entry->note_len, &statement, &note);
		note_free(note);
		if (rc)
			break;
		memcpy(line->service_id, entry->service_id, SERVICE_ID_SIZE);
		memcpy(line->endpoint_id, entry->endpoint_id, ENDPOINT_ID_SIZE);
		line->issued_at = statement.issued_at;
		line->sequence = statement.sequence;
		rc = crypto_sha256(entry->note, entry->note_len, line->statement_sha256);
		base->health_count = h + 1;
	}
	if (rc) {
		vote_body_free(base);
		return rc;
	}
	*out = base;
	return 0;
}

int publish_vote_base(const struct config *config, struct store *store, size_t namespace_index,
                      uint64_t epoch, const uint8_t digest[32], struct vote_body **out)
{
	const struct config_namespace *ns = &config->namespaces[namespace_index];
	struct buffer header_note, body;
	struct note *note = NULL;
	struct snapshot_header header;
	struct snapshot_body *parsed = NULL;
	uint8_t actual[32];
	*out = NULL;
	buffer_init(&header_note);
	buffer_init(&body);
	int rc = store_snapshot_get(store, ns->name, epoch, &header_note, NULL);
	if (rc == 0)
		rc = note_parse(header_note.data, header_note.len, &note);
	if (rc == 0)
		rc = snapshot_header_parse(note->text, note->text_len, &header);
	if (rc == 0)
		rc = snapshot_header_digest(note->text, note->text_len, actual);
	if (rc == 0 && (memcmp(actual, digest, 32) != 0 || header.epoch != epoch ||
	                strcmp(header.namespace_name, ns->name) != 0))
		rc = DIRAUTH_ERR_MISMATCH;
	if (rc == 0)
		rc = read_committed_body(config, store, &header, &body);
	if (rc == DIRAUTH_ERR_STALE)
		rc = DIRAUTH_ERR_NOT_FOUND;
	if (rc == 0 && header.consensus_method == 2) {
		struct snapshot_body_limits limits = {config->bounds.records_per_snapshot,
		                                      config_max_health(config), ns->max_revocations};
		rc = snapshot_body_parse_sections(body.data, body.len, &limits, &parsed);
	} else if (rc == 0) {
		rc = snapshot_body_parse(body.data, body.len, config->bounds.records_per_snapshot, &parsed);
	}
	if (rc == 0)
		rc = base_from_body(parsed, out);
	snapshot_body_free(parsed);
	note_free(note);
	buffer_free(&header_note);
	buffer_free(&body);
	return rc;
}

void publish_previous_clear(struct publish_previous *previous)
{
	if (!previous)
		return;
	snapshot_body_free(previous->parsed);
	buffer_free(&previous->text);
	buffer_free(&previous->body);
	memset(previous, 0, sizeof *previous);
}

/* ---- the vote body ---- */

struct vote_build {
	const struct config *config;
	const struct config_namespace *ns;
	struct vote_body *body;
	size_t record_cap, health_cap, revocation_cap;
	struct merkle_builder tree;
	bool rooted;  /* the caller wants the records root */
	bool counted; /* the record lines counted, not kept (publish_vote_body_counted) */
	const struct snapshot_body *previous;
	uint64_t epoch;
};

static int grow(void **items, size_t *cap, size_t count, size_t size)
{
	if (count < *cap)
		return 0;
	size_t grown_cap = *cap ? *cap * 2 : 16;
	void *grown = realloc(*items, grown_cap * size);
	if (!grown)
		return DIRAUTH_ERR_NOMEM;
	*items = grown;
	*cap = grown_cap;
	return 0;
}

static int add_record(struct vote_build *v, const struct store_record *record)
{
	struct vote_body *body = v->body;
	if (body->record_count >= v->config->bounds.records_per_snapshot)
		return DIRAUTH_ERR_BOUNDS;
	if (v->counted) {
		body->record_count++;
		return 0;
	}
	int rc = grow((void **)&body->records, &v->record_cap, body->record_count, sizeof *body->records);
	if (rc)
		return rc;
	struct vote_body_record *line = &body->records[body->record_count++];
	memcpy(line->service_id, record->service_id, SERVICE_ID_SIZE);
	line->sequence = record->sequence;
	memcpy(line->registration_sha256, record->digest, 32);
	if (!v->rooted)
		return 0;
	merkle_hash leaf;
	rc = merkle_leaf_hash(record->note, record->note_len, leaf);
	return rc ? rc : merkle_builder_add(&v->tree, leaf);
}

static int record_visit(void *context, const struct store_record *record)
{
	return add_record(context, record);
}

/* A record, and per endpoint of the version voted the latest statement, whatever its age. */
static int lifecycle_visit(void *context, const struct store_record *record,
                           const struct store_statement *health, size_t health_count)
{
	struct vote_build *v = context;
	struct vote_body *body = v->body;
	int rc = add_record(v, record);
	if (rc)
		return rc;
	struct registration r;
	struct note *parsed = NULL;
	rc = registration_parse_note(record->note, record->note_len, &r, &parsed);
	note_free(parsed);
	if (rc)
		return rc == DIRAUTH_ERR_NOMEM ? rc : DIRAUTH_ERR_STORE;
	for (size_t e = 0; rc == 0 && e < r.endpoint_count; e++)
		for (size_t i = 0; rc == 0 && i < health_count; i++) {
			if (memcmp(health[i].endpoint_id, r.endpoints[e].endpoint_id, ENDPOINT_ID_SIZE) != 0)
				continue;
			if (body->health_count >= config_max_health(v->config)) {
				rc = DIRAUTH_ERR_BOUNDS;
				break;
			}
			if ((rc = grow((void **)&body->health, &v->health_cap, body->health_count,
			               sizeof *body->health)))
				break;
			struct vote_body_health *h = &body->health[body->health_count++];
			memset(h, 0, sizeof *h);
			memcpy(h->service_id, record->service_id, SERVICE_ID_SIZE);
			memcpy(h->endpoint_id, health[i].endpoint_id, ENDPOINT_ID_SIZE);
			h->issued_at = health[i].issued_at;
			h->sequence = health[i].sequence;
			memcpy(h->statement_sha256, health[i].digest, 32);
		}
	registration_clear(&r);
	return rc;
}

/* Every revocation the previous snapshot does not list, within revocation_epochs of its stamp. */
static int revocation_visit(void *context, const struct store_listed_revocation *revocation)
{
	struct vote_build *v = context;
	struct vote_body *body = v->body;
	for (size_t i = 0; v->previous && i < v->previous->revocation_count; i++) {
		const struct snapshot_revocation *listed = &v->previous->revocations[i];
		if (memcmp(listed->service_id, revocation->service_id, SERVICE_ID_SIZE) == 0 &&
		    listed->has_endpoint == (revocation->endpoint_id != NULL) &&
		    (!revocation->endpoint_id ||
		     memcmp(listed->endpoint_id, revocation->endpoint_id, ENDPOINT_ID_SIZE) == 0))
			return 0;
	}
	if (!consensus_revocation_is_listed(revocation->stamp, v->epoch, v->ns->revocation_epochs))
		return 0;
	if (body->revocation_count >= v->ns->max_revocations)
		return DIRAUTH_ERR_BOUNDS;
	int rc = grow((void **)&body->revocations, &v->revocation_cap, body->revocation_count,
	              sizeof *body->revocations);
	if (rc)
		return rc;
	struct vote_body_revocation *line = &body->revocations[body->revocation_count++];
	memset(line, 0, sizeof *line);
	memcpy(line->service_id, revocation->service_id, SERVICE_ID_SIZE);
	line->has_endpoint = revocation->endpoint_id != NULL;
	if (revocation->endpoint_id)
		memcpy(line->endpoint_id, revocation->endpoint_id, ENDPOINT_ID_SIZE);
	memcpy(line->revocation_sha256, revocation->digest, 32);
	return 0;
}

void publish_vote_body_clear(struct vote_body *body)
{
	if (!body)
		return;
	free(body->records);
	free(body->health);
	free(body->revocations);
	memset(body, 0, sizeof *body);
}

/* publish_vote_body, or with counted publish_vote_body_counted (records_root then NULL). */
static int vote_body_build(const struct config *config, struct store *store, size_t namespace_index,
                           uint64_t epoch, uint64_t valid_after, int with_sections,
                           const struct snapshot_body *previous, bool counted, struct vote_body *out,
                           merkle_hash records_root)
{
	const struct config_namespace *ns = &config->namespaces[namespace_index];
	struct vote_build v;
	memset(out, 0, sizeof *out);
	memset(&v, 0, sizeof v);
	v.config = config;
	v.ns = ns;
	v.body = out;
	v.previous = previous;
	v.epoch = epoch;
	merkle_builder_init(&v.tree);
	v.rooted = records_root != NULL;
	v.counted = counted;
	snprintf(out->namespace_name, sizeof out->namespace_name, "%s", ns->name);
	snprintf(out->authority, sizeof out->authority, "%s", config->authority_name);
	out->epoch = epoch;
	int rc = with_sections
	             ? store_lifecycle_view_foreach(store, ns->name, epoch, valid_after, lifecycle_visit, &v)
	             : store_view_foreach(store, ns->name, epoch, valid_after, record_visit, &v);
	if (rc == 0 && with_sections)
		rc = store_revocation_view_foreach(store, ns->name, epoch, revocation_visit, &v);
	if (rc == 0)
		rc = v.rooted ? merkle_builder_root(&v.tree, records_root) : 0;
	if (rc)
		publish_vote_body_clear(out);
	return rc;
}

int publish_vote_body(const struct config *config, struct store *store, size_t namespace_index,
                      uint64_t epoch, uint64_t valid_after, int with_sections,
                      const struct snapshot_body *previous, struct vote_body *out, merkle_hash records_root)
{
	return vote_body_build(config, store, namespace_index, epoch, valid_after, with_sections, previous,
	                       false, out, records_root);
}

int publish_vote_body_counted(const struct config *config, struct store *store, size_t namespace_index,
                              uint64_t epoch, uint64_t valid_after, int with_sections,
                              const struct snapshot_body *previous, struct vote_body *out)
{
	return vote_body_build(config, store, namespace_index, epoch, valid_after, with_sections, previous,
	                       true, out, NULL);
}

/* ---- the record lines, a page at a time ---- */

#define VIEW_PAGE_LINES 1024 /* lines, with their notes, per page: about 1 MB of notes */

int publish_view_lines_init(struct publish_view_lines *lines, struct store *store, const char *namespace_name,
                            uint64_t epoch, uint64_t valid_after)
{
	memset(lines, 0, sizeof *lines);
	lines->store = store;
	lines->namespace_name = namespace_name;
	lines->epoch = epoch;
	lines->valid_after = valid_after;
	buffer_init(&lines->notes);
	lines->page = calloc(VIEW_PAGE_LINES, sizeof *lines->page);
	lines->note_at = calloc(VIEW_PAGE_LINES, sizeof *lines->note_at);
	lines->note_len = calloc(VIEW_PAGE_LINES, sizeof *lines->note_len);
	if (!lines->page || !lines->note_at || !lines->note_len) {
		publish_view_lines_clear(lines);
		return DIRAUTH_ERR_NOMEM;
	}
	return 0;
}

void publish_view_lines_clear(struct publish_view_lines *lines)
{
	free(lines->page);
	free(lines->note_at);
	free(lines->note_len);
	buffer_free(&lines->notes);
	memset(lines, 0, sizeof *lines);
}

#define PAGE_FULL 1 /* a visitor's return that ends a page's walk */

static int page_visit(void *context, const struct store_record *record)
{
	struct publish_view_lines *lines = context;
	struct vote_body_record *line = &lines->page[lines->count];
	memcpy(line->service_id, record->service_id, SERVICE_ID_SIZE);
	line->sequence = record->sequence;
	memcpy(line->registration_sha256, record->digest, 32);
	lines->note_at[lines->count] = lines->notes.len;
	lines->note_len[lines->count] = record->note_len;
	int rc = buffer_append(&lines->notes, record->note, record->note_len);
	if (rc)
		return rc;
	memcpy(lines->last, record->service_id, SERVICE_ID_SIZE);
	lines->have_last = true;
	return ++lines->count == VIEW_PAGE_LINES ? PAGE_FULL : 0;
}

/* The page after the one held (the first page when none was read), from the view. */
static int page_load(struct publish_view_lines *lines)
{
	lines->first += lines->count;
	lines->count = 0;
	buffer_reset(&lines->notes);
	int rc =
	    store_view_foreach_after(lines->store, lines->namespace_name, lines->epoch, lines->valid_after,
	                             lines->have_last ? lines->last : NULL, page_visit, lines);
	if (rc == PAGE_FULL)
		rc = 0;
	if (rc == 0 && lines->count == 0)
		rc = DIRAUTH_ERR_MISMATCH; /* fewer lines than the view held when they were counted */
	return rc;
}

int publish_view_lines_read(void *context, size_t index, struct vote_body_record *out)
{
	struct publish_view_lines *lines = context;
	if (index < lines->first) { /* a walk from the start again */
		lines->first = lines->count = 0;
		lines->have_last = false;
	}
	while (index >= lines->first + lines->count) {
		int rc = page_load(lines);
		if (rc)
			return rc;
	}
	*out = lines->page[index - lines->first];
	return 0;
}

int publish_view_lines_note(const struct publish_view_lines *lines, const uint8_t service_id[SERVICE_ID_SIZE],
                            uint64_t sequence, const uint8_t **note, size_t *note_len)
{
	size_t low = 0, high = lines->count;
	while (low < high) {
		size_t middle = low + (high - low) / 2;
		int order = memcmp(lines->page[middle].service_id, service_id, SERVICE_ID_SIZE);
		if (order == 0) {
			if (lines->page[middle].sequence != sequence)
				break;
			*note = lines->notes.data + lines->note_at[middle];
			*note_len = lines->note_len[middle];
			return 0;
		}
		if (order < 0)
			low = middle + 1;
		else
			high = middle;
	}
	return DIRAUTH_ERR_NOT_FOUND;
}

void publish_vote_text(const struct config *config, size_t namespace_index, uint64_t epoch,
                       const struct publish_previous *previous, const struct vote_body *lines,
                       const merkle_hash records_root, struct vote *out)
{
	const struct config_namespace *ns = &config->namespaces[namespace_index];
	memset(out, 0, sizeof *out);
	snprintf(out->namespace_name, sizeof out->namespace_name, "%s", ns->name);
	snprintf(out->origin, sizeof out->origin, "%s", ns->origin);
	snprintf(out->authority, sizeof out->authority, "%s", config->authority_name);
	out->epoch = epoch;
	out->record_count = lines->record_count;
	if (records_root)
		memcpy(out->records_root, records_root, sizeof out->records_root);
	if (previous->have) {
		out->previous_epoch = previous->epoch;
		memcpy(out->previous, previous->digest, 32);
	}
	/* The methods this authority can compute for the namespace: method 2 needs the lifecycle
	 * configured (its parameters are the namespace's). */
	out->method_count = 1;
	out->methods[0] = CONSENSUS_METHOD_REGISTRATIONS;
	if (ns->lifecycle)
		out->methods[out->method_count++] = CONSENSUS_METHOD_LIFECYCLE;
}

void publish_consensus_lifecycle(const struct config *config, size_t namespace_index,
                                 const struct publish_previous *previous, struct consensus_lifecycle *out)
{
	const struct config_namespace *ns = &config->namespaces[namespace_index];
	memset(out, 0, sizeof *out);
	out->freshness_seconds = ns->health_freshness_epochs * config->epoch.length;
	out->revocation_epochs = ns->revocation_epochs;
	out->max_health = config_max_health(config);
	out->max_revocations = ns->max_revocations;
	if (previous->have && previous->text.len) {
		out->previous_header = previous->text.data;
		out->previous_header_len = previous->text.len;
	}
	if (previous->parsed) {
		out->previous_body = previous->body.data;
		out->previous_body_len = previous->body.len;
	}
}
