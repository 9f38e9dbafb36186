/*
 * lifecycle.c: the method-2 body of a single authority's snapshot (lifecycle.h).
 *
 * The body is streamed to the store's body files like a method-1 body, so memory stays near one
 * record and one bit per record and per endpoint, however large the body. The sealed view is
 * walked three times, each in its own read transactions, and gives the same content each time
 * (store.h, "the seal"): once to judge every record and endpoint (exclusion by a listed
 * revocation, each health statement's freshness and signature, remembered as one bit each) and
 * to size the body, whose head carries the record count; once to write the records; once to write
 * the health entries the first walk kept. The revocations, few and small, are held in memory.
 *
 * The order of every check and the choice in each case follow consensus/lifecycle.c's method 2
 * for one vote, so that the bytes are the ones the consensus of this authority's vote gives: that
 * is what tests/unit/check_publish_lifecycle.c compares.
 */
#include "server/publish/lifecycle.h"

#include "schema/crypto.h"
#include "schema/error.h"
#include "schema/health.h"
#include "schema/merkle.h"
#include "schema/note.h"
#include "schema/registration.h"
#include "schema/revocation.h"
#include "server/store/registrations.h"
#include "server/store/snapshots.h"
#include "server/store/statements.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One bit per record or endpoint, in walk order. */
struct bits {
	uint8_t *bytes;
	size_t count, cap;
};

static int bits_push(struct bits *b, bool value)
{
	if (b->count == b->cap * 8) {
		size_t cap = b->cap ? b->cap * 2 : 1024;
		uint8_t *grown = realloc(b->bytes, cap);
		if (!grown)
			return DIRAUTH_ERR_NOMEM;
		memset(grown + b->cap, 0, cap - b->cap);
		b->bytes = grown;
		b->cap = cap;
	}
	if (value)
		b->bytes[b->count / 8] |= (uint8_t)(1u << (b->count % 8));
	b->count++;
	return 0;
}

static bool bits_get(const struct bits *b, size_t i)
{
	return i < b->count && (b->bytes[i / 8] >> (i % 8)) & 1;
}

/* The listed revocations, in target order; new ones own their notes. */
struct listed {
	struct snapshot_revocation *items;
	size_t count, cap;
	uint8_t **owned; /* the notes copied from the store, freed at the end */
	size_t owned_count;
};

static int target_compare(const void *a, const void *b)
{
	return snapshot_revocation_order(a, b);
}

static int listed_add(struct listed *l, const struct snapshot_revocation *entry, size_t max)
{
	if (l->count >= max)
		return DIRAUTH_ERR_BOUNDS;
	if (l->count == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		struct snapshot_revocation *grown = realloc(l->items, cap * sizeof *grown);
		if (!grown)
			return DIRAUTH_ERR_NOMEM;
		l->items = grown;
		l->cap = cap;
	}
	l->items[l->count++] = *entry;
	return 0;
}

static void listed_free(struct listed *l)
{
	for (size_t i = 0; i < l->owned_count; i++)
		free(l->owned[i]);
	free(l->owned);
	free(l->items);
}

/* 1 when one of the first count entries of items (sorted) has entry's target. */
static bool target_in(const struct snapshot_revocation *items, size_t count,
                      const struct snapshot_revocation *entry)
{
	return count > 0 && bsearch(entry, items, count, sizeof *items, target_compare) != NULL;
}

/* Everything the build holds. */
struct build {
	const struct config *config;
	const struct config_namespace *ns;
	struct store *store;
	struct snapshot_header *h;
	uint64_t freshness;
	struct buffer previous_body;
	struct snapshot_body *previous; /* its parsed body, when method 2 */
	struct listed listed;
	uint8_t (*revoked_endpoints)[ENDPOINT_ID_SIZE]; /* sorted */
	size_t revoked_endpoint_count;
	/* walk 1 */
	struct bits kept, healthy;
	uint64_t visited, records, record_bytes, health_entries, health_bytes;
	/* walks 2 and 3 */
	struct store_body_writer *writer;
	struct merkle_builder tree;
	struct buffer line;
	size_t record_index, endpoint_index;
};

/* ---- the previous snapshot and the revocations ---- */

/* The previous stored snapshot's body, when its header says method 2: read whole from the
 * identity file, checked against the header, parsed. */
static int load_previous(struct build *b, uint64_t previous_epoch)
{
	struct buffer header_note;
	struct note *note = NULL;
	struct snapshot_header previous;
	int fd = -1;
	uint64_t size = 0;
	uint8_t digest[32];
	buffer_init(&header_note);
	int rc = store_snapshot_get(b->store, b->ns->name, previous_epoch, &header_note, NULL);
	if (rc == 0)
		rc = note_parse(header_note.data, header_note.len, &note);
	if (rc == 0)
		rc = snapshot_header_parse(note->text, note->text_len, &previous);
	note_free(note);
	buffer_free(&header_note);
	if (rc)
		return rc;
	if (previous.consensus_method == SNAPSHOT_CONSENSUS_METHOD)
		return 0; /* a method-1 snapshot lists no revocation */
	if (previous.consensus_method != 2 || previous.epoch != previous_epoch)
		return DIRAUTH_ERR_MISMATCH;
	if ((rc = store_body_open(b->store, b->ns->name, previous_epoch, ENCODING_IDENTITY, &fd, &size)))
		return rc;
	if (size != previous.body_size || size > b->config->bounds.snapshot_body_uncompressed)
		rc = DIRAUTH_ERR_MISMATCH;
	uint8_t chunk[64 * 1024];
	while (rc == 0) {
		ssize_t n = read(fd, chunk, sizeof chunk);
		if (n < 0)
			rc = DIRAUTH_ERR_IO;
		if (n <= 0)
			break;
		rc = buffer_append(&b->previous_body, chunk, (size_t)n);
	}
	close(fd);
	if (rc == 0 && b->previous_body.len != previous.body_size)
		rc = DIRAUTH_ERR_MISMATCH;
	if (rc == 0)
		rc = crypto_sha256(b->previous_body.data, b->previous_body.len, digest);
	if (rc == 0 && memcmp(digest, previous.body_sha256, 32) != 0)
		rc = DIRAUTH_ERR_MISMATCH;
	struct snapshot_body_limits limits = {b->config->bounds.records_per_snapshot,
	                                      config_max_health(b->config), b->ns->max_revocations};
	if (rc == 0)
		rc = snapshot_body_parse_sections(b->previous_body.data, b->previous_body.len, &limits,
		                                  &b->previous);
	if (rc == 0 &&
	    (b->previous->epoch != previous_epoch || strcmp(b->previous->namespace_name, b->ns->name) != 0))
		rc = DIRAUTH_ERR_MISMATCH;
	return rc;
}

/* Carried: the previous snapshot's revocations still within revocation_epochs, checked again. */
static int carry_revocations(struct build *b)
{
	if (!b->previous)
		return 0;
	for (size_t i = 0; i < b->previous->revocation_count; i++) {
		const struct snapshot_revocation *entry = &b->previous->revocations[i];
		if (entry->since > b->previous->epoch)
			return DIRAUTH_ERR_MISMATCH;
		if (b->h->epoch - entry->since >= b->ns->revocation_epochs)
			continue;
		int rc = snapshot_revocation_note_check(entry, b->ns->name);
		if (rc == 0)
			rc = listed_add(&b->listed, entry, b->ns->max_revocations);
		if (rc)
			return rc;
	}
	return 0;
}

struct new_walk {
	struct build *b;
	size_t carried;
};

/* New: a revocation of the view the previous snapshot does not list, within revocation_epochs of
 * its stamp (the vote's line), whose note verifies. */
static int new_revocation_visit(void *context, const struct store_listed_revocation *revocation)
{
	struct new_walk *w = context;
	struct build *b = w->b;
	struct snapshot_revocation entry;
	memset(&entry, 0, sizeof entry);
	memcpy(entry.service_id, revocation->service_id, SERVICE_ID_SIZE);
	entry.has_endpoint = revocation->endpoint_id != NULL;
	if (revocation->endpoint_id)
		memcpy(entry.endpoint_id, revocation->endpoint_id, ENDPOINT_ID_SIZE);
	entry.since = b->h->epoch;
	if (b->previous && target_in(b->previous->revocations, b->previous->revocation_count, &entry))
		return 0; /* the previous snapshot lists it: the vote need not */
	if (revocation->stamp > b->h->epoch || b->h->epoch - revocation->stamp >= b->ns->revocation_epochs)
		return 0; /* its listing is over */
	if (target_in(b->listed.items, w->carried, &entry))
		return 0;
	entry.note = revocation->note;
	entry.note_len = revocation->note_len;
	if (revocation->note_len == 0 || revocation->note_len > REVOCATION_MAX_BYTES)
		return 0;
	int check = snapshot_revocation_note_check(&entry, b->ns->name);
	if (check == DIRAUTH_ERR_NOMEM || check == DIRAUTH_ERR_CRYPTO)
		return check;
	if (check)
		return 0; /* left out, as the consensus leaves out a revocation that does not check out */
	uint8_t *copy = malloc(revocation->note_len);
	uint8_t **owned = realloc(b->listed.owned, (b->listed.owned_count + 1) * sizeof *owned);
	if (owned)
		b->listed.owned = owned;
	if (!copy || !owned) {
		free(copy);
		return DIRAUTH_ERR_NOMEM;
	}
	memcpy(copy, revocation->note, revocation->note_len);
	b->listed.owned[b->listed.owned_count++] = copy;
	entry.note = copy;
	return listed_add(&b->listed, &entry, b->ns->max_revocations);
}

static int list_revocations(struct build *b)
{
	int rc = carry_revocations(b);
	if (rc)
		return rc;
	struct new_walk w = {b, b->listed.count};
	if ((rc =
	         store_revocation_view_foreach(b->store, b->ns->name, b->h->epoch, new_revocation_visit, &w)))
		return rc;
	if (b->listed.count > 1)
		qsort(b->listed.items, b->listed.count, sizeof *b->listed.items, target_compare);
	size_t endpoints = 0;
	for (size_t i = 0; i < b->listed.count; i++)
		endpoints += b->listed.items[i].has_endpoint ? 1 : 0;
	if (endpoints == 0)
		return 0;
	if (!(b->revoked_endpoints = malloc(endpoints * sizeof *b->revoked_endpoints)))
		return DIRAUTH_ERR_NOMEM;
	for (size_t i = 0; i < b->listed.count; i++)
		if (b->listed.items[i].has_endpoint)
			memcpy(b->revoked_endpoints[b->revoked_endpoint_count++],
			       b->listed.items[i].endpoint_id, ENDPOINT_ID_SIZE);
	revocation_endpoints_sort(b->revoked_endpoints, b->revoked_endpoint_count);
	return 0;
}

/* A listed revocation excludes registration r: its service, or an endpoint it lists. */
static bool excluded(const struct build *b, const struct registration *r)
{
	struct snapshot_revocation service;
	memset(&service, 0, sizeof service);
	memcpy(service.service_id, r->service_id, SERVICE_ID_SIZE);
	if (target_in(b->listed.items, b->listed.count, &service))
		return true;
	return revocation_endpoints_name_any((const uint8_t(*)[ENDPOINT_ID_SIZE])b->revoked_endpoints,
	                                     b->revoked_endpoint_count, r);
}

/* ---- the records and their health ---- */

/* The statement held for endpoint_id among health (sorted by endpoint id), or NULL. */
static const struct store_statement *statement_for(const struct store_statement *health, size_t count,
                                                   const uint8_t endpoint_id[ENDPOINT_ID_SIZE])
{
	for (size_t i = 0; i < count; i++)
		if (memcmp(health[i].endpoint_id, endpoint_id, ENDPOINT_ID_SIZE) == 0)
			return &health[i];
	return NULL;
}

/* The statement is published for its endpoint: fresh at valid-after, and signed by the key its
 * signer line names in the published registration r. Returns 1, 0, or a negative error when the
 * check could not run. *entry gets its class and signer. */
static int statement_published(const struct build *b, const struct registration *r,
                               const struct store_statement *statement, struct snapshot_health *entry)
{
	if (health_is_stale(statement->issued_at, b->freshness, b->h->valid_after))
		return 0; /* stale: unknown */
	if (statement->note_len == 0 || statement->note_len > HEALTH_MAX_BYTES)
		return 0;
	struct health_statement s;
	int rc = health_parse_listed(statement->note, statement->note_len, r, statement->endpoint_id,
	                             statement->issued_at, statement->sequence, &s);
	if (rc == DIRAUTH_ERR_CRYPTO || rc == DIRAUTH_ERR_NOMEM)
		return rc;
	if (rc)
		return 0;
	memset(entry, 0, sizeof *entry);
	memcpy(entry->service_id, r->service_id, SERVICE_ID_SIZE);
	memcpy(entry->endpoint_id, statement->endpoint_id, ENDPOINT_ID_SIZE);
	entry->health_class = s.health_class;
	entry->signer = s.signer;
	entry->note = statement->note;
	entry->note_len = statement->note_len;
	return 1;
}

/* Walk 1: every record judged, every endpoint of a kept one judged, sizes counted. */
static int judge_visit(void *context, const struct store_record *record, const struct store_statement *health,
                       size_t health_count)
{
	struct build *b = context;
	struct registration r;
	struct note *parsed = NULL;
	int rc = registration_parse_note(record->note, record->note_len, &r, &parsed);
	note_free(parsed);
	if (rc)
		return rc == DIRAUTH_ERR_NOMEM ? rc : DIRAUTH_ERR_STORE;
	bool keep = !excluded(b, &r);
	rc = bits_push(&b->kept, keep);
	if (rc == 0 && ++b->visited > b->config->bounds.records_per_snapshot)
		rc = DIRAUTH_ERR_BOUNDS; /* the bound is on the versions chosen, as in the consensus */
	if (rc == 0 && keep) {
		b->records++;
		b->record_bytes += STORE_RECORD_FRAMING + record->note_len;
	}
	for (size_t e = 0; rc == 0 && keep && e < r.endpoint_count; e++) {
		const struct store_statement *statement =
		    statement_for(health, health_count, r.endpoints[e].endpoint_id);
		struct snapshot_health entry;
		int published = statement ? statement_published(b, &r, statement, &entry) : 0;
		if (published < 0) {
			rc = published;
			break;
		}
		rc = bits_push(&b->healthy, published == 1);
		if (rc == 0 && published == 1) {
			if (++b->health_entries > config_max_health(b->config)) {
				rc = DIRAUTH_ERR_BOUNDS;
				break;
			}
			buffer_reset(&b->line);
			rc = snapshot_body_encode_health_line(&entry, &b->line);
			b->health_bytes += b->line.len + entry.note_len;
		}
	}
	registration_clear(&r);
	return rc;
}

/* Walk 2: the kept records' lines and notes, and their Merkle leaves. */
static int records_visit(void *context, const struct store_record *record)
{
	struct build *b = context;
	merkle_hash leaf;
	if (!bits_get(&b->kept, b->record_index++))
		return 0;
	buffer_reset(&b->line);
	int rc = snapshot_body_encode_record_line(record->service_id, record->note_len, &b->line);
	if (!rc)
		rc = store_body_write(b->writer, b->line.data, b->line.len);
	if (!rc)
		rc = store_body_write(b->writer, record->note, record->note_len);
	if (!rc)
		rc = merkle_leaf_hash(record->note, record->note_len, leaf);
	if (!rc)
		rc = merkle_builder_add(&b->tree, leaf);
	return rc;
}

/* Walk 3: the health entries walk 1 kept, in the same order. */
static int health_visit(void *context, const struct store_record *record,
                        const struct store_statement *health, size_t health_count)
{
	struct build *b = context;
	if (!bits_get(&b->kept, b->record_index++))
		return 0;
	struct registration r;
	struct note *parsed = NULL;
	int rc = registration_parse_note(record->note, record->note_len, &r, &parsed);
	note_free(parsed);
	if (rc)
		return rc == DIRAUTH_ERR_NOMEM ? rc : DIRAUTH_ERR_STORE;
	for (size_t e = 0; rc == 0 && e < r.endpoint_count; e++) {
		if (!bits_get(&b->healthy, b->endpoint_index++))
			continue;
		const struct store_statement *statement =
		    statement_for(health, health_count, r.endpoints[e].endpoint_id);
		struct health_statement s;
		struct note *note = NULL;
		if (!statement || health_parse_note(statement->note, statement->note_len, &s, &note) != 0) {
			rc = DIRAUTH_ERR_INTERNAL; /* the sealed view changed between the walks */
			break;
		}
		note_free(note);
		struct snapshot_health entry = {.health_class = s.health_class,
		                                .signer = s.signer,
		                                .note = statement->note,
		                                .note_len = statement->note_len};
		memcpy(entry.service_id, r.service_id, SERVICE_ID_SIZE);
		memcpy(entry.endpoint_id, statement->endpoint_id, ENDPOINT_ID_SIZE);
		buffer_reset(&b->line);
		rc = snapshot_body_encode_health_line(&entry, &b->line);
		if (!rc)
			rc = store_body_write(b->writer, b->line.data, b->line.len);
		if (!rc)
			rc = store_body_write(b->writer, entry.note, entry.note_len);
	}
	registration_clear(&r);
	return rc;
}

static int write_revocations(struct build *b)
{
	if (b->listed.count == 0)
		return 0;
	buffer_reset(&b->line);
	int rc = snapshot_body_encode_section_count("revocations", b->listed.count, &b->line);
	if (!rc)
		rc = store_body_write(b->writer, b->line.data, b->line.len);
	for (size_t i = 0; rc == 0 && i < b->listed.count; i++) {
		const struct snapshot_revocation *entry = &b->listed.items[i];
		buffer_reset(&b->line);
		rc = snapshot_body_encode_revocation_line(entry, &b->line);
		if (!rc)
			rc = store_body_write(b->writer, b->line.data, b->line.len);
		if (!rc)
			rc = store_body_write(b->writer, entry->note, entry->note_len);
	}
	return rc;
}

/* The bytes of the revocation section, for the size bound. */
static int revocation_bytes(struct build *b, uint64_t *bytes)
{
	*bytes = 0;
	if (b->listed.count == 0)
		return 0;
	buffer_reset(&b->line);
	int rc = snapshot_body_encode_section_count("revocations", b->listed.count, &b->line);
	*bytes += b->line.len;
	for (size_t i = 0; rc == 0 && i < b->listed.count; i++) {
		buffer_reset(&b->line);
		rc = snapshot_body_encode_revocation_line(&b->listed.items[i], &b->line);
		*bytes += b->line.len + b->listed.items[i].note_len;
	}
	return rc;
}

static int write_body(struct build *b, struct store_body_info *info)
{
	const char *name = b->ns->name;
	struct snapshot_header *h = b->h;
	uint64_t section_bytes = 0;
	int rc = revocation_bytes(b, &section_bytes);
	if (rc)
		return rc;
	if (b->health_entries > 0) {
		buffer_reset(&b->line);
		if ((rc = snapshot_body_encode_section_count("health", b->health_entries, &b->line)))
			return rc;
		section_bytes += b->line.len + b->health_bytes;
	}
	if (b->record_bytes + section_bytes > b->config->bounds.snapshot_body_uncompressed)
		return DIRAUTH_ERR_BOUNDS;
	if ((rc = store_body_begin(b->store, name, h->epoch, &b->writer)))
		return rc;
	merkle_builder_init(&b->tree);
	buffer_reset(&b->line);
	rc = snapshot_body_encode_head(name, h->epoch, b->records, &b->line);
	if (!rc)
		rc = store_body_write(b->writer, b->line.data, b->line.len);
	b->record_index = 0;
	if (!rc)
		rc = store_view_foreach(b->store, name, h->epoch, h->valid_after, records_visit, b);
	if (!rc && b->health_entries > 0) {
		buffer_reset(&b->line);
		rc = snapshot_body_encode_section_count("health", b->health_entries, &b->line);
		if (!rc)
			rc = store_body_write(b->writer, b->line.data, b->line.len);
		b->record_index = 0;
		b->endpoint_index = 0;
		if (!rc)
			rc = store_lifecycle_view_foreach(b->store, name, h->epoch, h->valid_after,
			                                  health_visit, b);
	}
	if (!rc)
		rc = write_revocations(b);
	if (!rc)
		rc = merkle_builder_root(&b->tree, h->records_root);
	if (rc) {
		store_body_discard(b->writer);
		b->writer = NULL;
		return rc;
	}
	rc = store_body_finish(b->writer, info);
	b->writer = NULL;
	if (rc)
		return rc;
	h->record_count = b->records;
	h->body_size = info->size[ENCODING_IDENTITY];
	memcpy(h->body_sha256, info->sha256[ENCODING_IDENTITY], sizeof h->body_sha256);
	return publish_check_body_bounds(b->config, info);
}

int publish_lifecycle_body(const struct config *config, struct store *store, size_t namespace_index,
                           int have_previous, uint64_t previous_epoch, struct snapshot_header *h,
                           struct store_body_info *info)
{
	struct build b;
	memset(&b, 0, sizeof b);
	b.config = config;
	b.ns = &config->namespaces[namespace_index];
	b.store = store;
	b.h = h;
	b.freshness = b.ns->health_freshness_epochs * config->epoch.length;
	buffer_init(&b.previous_body);
	buffer_init(&b.line);
	int rc = have_previous ? load_previous(&b, previous_epoch) : 0;
	if (rc == 0)
		rc = list_revocations(&b);
	if (rc == 0)
		rc = store_lifecycle_view_foreach(store, b.ns->name, h->epoch, h->valid_after, judge_visit,
		                                  &b);
	if (rc == 0)
		rc = write_body(&b, info);
	listed_free(&b.listed);
	free(b.revoked_endpoints);
	free(b.kept.bytes);
	free(b.healthy.bytes);
	snapshot_body_free(b.previous);
	buffer_free(&b.previous_body);
	buffer_free(&b.line);
	return rc;
}
