/*
 * monitor.c: one round of dirauthctl monitor (see monitor.h; its command line and loop are
 * monitor_command.c).
 *
 * The monitor believes nothing a source says before the check that vouches for it: a header by
 * the trust bundle, a checkpoint by the log's pins, a checkpoint's growth by a consistency proof.
 * Two statements that each passed their own check and contradict each other are what it is
 * looking for; it keeps them as they were served, in an evidence file, and only once
 * ctl_evidence_verify (the very check dirauthctl verify-evidence runs) proves them: through
 * ctl_evidence_keep, the one keeper fetch uses for an equivocation as well. Anything that
 * cannot be checked is a failure of the round, never evidence.
 */
#include "ctl/monitor.h"

#include "ctl/evidence.h"
#include "ctl/exchange.h"
#include "ctl/fetch.h"
#include "ctl/files.h"
#include "ctl/keyring.h"
#include "net/client.h"
#include "net/pool.h"
#include "schema/checkpoint.h"
#include "schema/encoding.h"
#include "base/error.h"
#include "schema/evidence.h"
#include "schema/note.h"
#include "schema/snapshot.h"
#include "schema/vote_envelope.h"
#include "tlog/consistency.h"
#include "tlog/proof.h"
#include "verify/snapshot.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PATH_CAPACITY  4096
#define URL_CAPACITY   4096
#define EVIDENCE_MAGIC "dirauth evidence v1\n"

/* A verified header seen this round. */
struct seen_header {
	size_t source;
	uint64_t epoch;
	struct buffer note;
	int pending; /* not yet in the log */
	int rival;   /* signed by some authorities, fewer than the threshold: not believed, only
	                compared with the believed ones */
	char refusal[CTL_REPORT_MAX]; /* a rival's: why it is not believed */
};

/* A verified checkpoint seen this round (from a proof file). */
struct seen_checkpoint {
	size_t source;
	struct buffer note;
	struct checkpoint checkpoint;
};

struct source {
	const char *url;
	size_t base_len;
	int usable; /* its certificates were fetched this round */
	struct buffer certificates;
};

struct monitor {
	const struct ctl_monitor_options *o;
	struct ctl_monitor_round *round;
	struct net_pool *pool; /* the sources' kept-alive connections: the command's, or the round's */
	struct source sources[CTL_MONITOR_SOURCES_MAX];
	const struct trust_namespace *ns;
	char ns_dir[PATH_CAPACITY];
	char evidence_dir[PATH_CAPACITY];
	struct seen_header *headers;
	size_t header_count, header_cap;
	struct seen_checkpoint *checkpoints;
	size_t checkpoint_count, checkpoint_cap;
	int has_held;
	struct buffer held_note;
	struct checkpoint held;
	struct buffer state_certificates;
};

static void failure(struct monitor *m, const char *format, ...) __attribute__((format(printf, 2, 3)));

static void failure(struct monitor *m, const char *format, ...)
{
	struct ctl_monitor_round *r = m->round;
	va_list args;
	if (r->failure_count < CTL_MONITOR_FAILURES_MAX) {
		va_start(args, format);
		vsnprintf(r->failures[r->failure_count], sizeof r->failures[0], format, args);
		va_end(args);
	}
	r->failure_count++;
}

/* snprintf without the truncation warning: a truncated line is still the line. */
static void format_into(char *out, size_t cap, const char *format, ...) __attribute__((format(printf, 3, 4)));

static void format_into(char *out, size_t cap, const char *format, ...)
{
	va_list args;
	va_start(args, format);
	vsnprintf(out, cap, format, args);
	va_end(args);
}

/* ---- requests ---- */

/* GETs path (after "/v1/") of source s. Returns 0 with the answer of status 200 (or 404 when
 * allow_missing: response->status tells); else the failure, recorded unless quiet. */
static int get(struct monitor *m, size_t s, const char *label, const char *path, size_t max,
               int allow_missing, int quiet, struct net_response *response)
{
	const struct source *source = &m->sources[s];
	struct ctl_report report;
	char url[URL_CAPACITY], what[URL_CAPACITY + 16];
	int n = snprintf(url, sizeof url, "%.*s/v1/%s", (int)source->base_len, source->url, path);
	int rc;

	if (n < 0 || (size_t)n >= sizeof url) {
		failure(m, "monitor: %s: URL too long", source->url);
		return DIRAUTH_ERR_BOUNDS;
	}
	snprintf(what, sizeof what, "monitor %.*s", (int)source->base_len, source->url);
	ctl_report_init(&report);
	net_response_free(response);
	net_response_init(response);
	rc = ctl_exchange_get_pooled(m->pool, what, label, url, NULL, max, allow_missing, response, &report);
	if (rc != 0 && !quiet)
		failure(m, "%s", report.message);
	return rc;
}

/* ---- state ---- */

static int state_path(const struct monitor *m, const char *name, char *out, size_t cap)
{
	int n = snprintf(out, cap, "%s/%s", m->ns_dir, name);
	return n < 0 || (size_t)n >= cap ? DIRAUTH_ERR_BOUNDS : 0;
}

/* Reads STATE/<ns>/name into out (emptied first); *present 0 when there is no such file. */
static int state_read(struct monitor *m, const char *name, size_t max, struct buffer *out, int *present)
{
	const struct ctl_file_limit limit = {max, NULL, CTL_EXIT_DATA};
	struct ctl_report unread;
	char path[PATH_CAPACITY];
	uint8_t *bytes = NULL;
	size_t len = 0;
	int rc;

	*present = 0;
	buffer_reset(out);
	if (state_path(m, name, path, sizeof path) != 0) {
		failure(m, "monitor: state: path too long");
		return DIRAUTH_ERR_BOUNDS;
	}
	if (!ctl_file_exists(path))
		return 0;
	ctl_report_init(&unread);
	rc = ctl_file_read_reported(path, &limit, &bytes, &len, &unread, "monitor: state %s", path);
	if (rc != 0) {
		failure(m, "%s", unread.message);
		return rc;
	}
	rc = buffer_append(out, bytes, len);
	free(bytes);
	if (rc != 0) {
		failure(m, "monitor: state %s: %s", path, dirauth_strerror(rc));
		return rc;
	}
	*present = 1;
	return 0;
}

static int state_write(struct monitor *m, const char *name, const uint8_t *data, size_t len)
{
	char directory[PATH_CAPACITY];
	const char *slash = strrchr(name, '/');
	int n = slash == NULL
	            ? snprintf(directory, sizeof directory, "%s", m->ns_dir)
	            : snprintf(directory, sizeof directory, "%s/%.*s", m->ns_dir, (int)(slash - name), name);
	int rc = n < 0 || (size_t)n >= sizeof directory ? DIRAUTH_ERR_BOUNDS : 0;
	if (rc == 0)
		rc = ctl_directory_create(directory);
	if (rc == 0)
		rc = ctl_file_write_atomic(directory, slash == NULL ? name : slash + 1, data, len);
	if (rc != 0)
		failure(m, "monitor: state %s/%s: cannot write: %s", m->ns_dir, name, dirauth_strerror(rc));
	return rc;
}

/* The held checkpoint, read back like fetch's (believed when it was taken). */
static int read_held(struct monitor *m)
{
	struct note *note = NULL;
	int present = 0;
	int rc = state_read(m, CTL_FETCH_LOG_HELD, TLOG_PROOF_NOTE_MAX, &m->held_note, &present);

	m->has_held = 0;
	if (rc != 0 || !present)
		return rc;
	rc = note_parse(m->held_note.data, m->held_note.len, &note);
	if (rc == 0)
		rc = checkpoint_parse(note->text, note->text_len, &m->held);
	note_free(note);
	if (rc == 0 && strcmp(m->held.origin, m->ns->origin) != 0)
		rc = DIRAUTH_ERR_MISMATCH;
	if (rc != 0) {
		failure(m, "monitor: state %s/" CTL_FETCH_LOG_HELD " cannot be read back: %s", m->ns_dir,
		        dirauth_strerror(rc));
		return rc;
	}
	m->has_held = 1;
	return 0;
}

static int read_checked(struct monitor *m, int *has, uint64_t *epoch)
{
	struct buffer text;
	int present = 0, rc;

	*has = 0;
	buffer_init(&text);
	rc = state_read(m, "checked", 32, &text, &present);
	if (rc == 0 && present) {
		if (text.len < 2 || text.data[text.len - 1] != '\n' ||
		    decimal_parse((const char *)text.data, text.len - 1, epoch) != 0) {
			failure(m, "monitor: state %s/checked cannot be read back", m->ns_dir);
			rc = DIRAUTH_ERR_SYNTAX;
		} else {
			*has = 1;
		}
	}
	buffer_free(&text);
	return rc;
}

/* ---- evidence ---- */

static void name_evidence(struct monitor *m, const char *path)
{
	struct ctl_monitor_round *r = m->round;
	size_t used = strlen(r->evidence);
	snprintf(r->evidence + used, sizeof r->evidence - used, "%s%s", used > 0 ? ", " : "", path);
}

static int round_names(const struct ctl_monitor_round *r, const char *path)
{
	size_t len = strlen(path);
	for (const char *at = r->evidence; (at = strstr(at, path)) != NULL; at += len)
		if ((at == r->evidence || at[-1] == ' ') && (at[len] == '\0' || at[len] == ','))
			return 1;
	return 0;
}

/* Keeps e through ctl_evidence_keep, and counts it in the round; what names the contradiction in
 * the failure line of evidence that is not kept. */
static void keep_evidence(struct monitor *m, const struct evidence *e, uint64_t number, const char *what)
{
	char path[PATH_CAPACITY], why[VERIFY_DETAIL_MAX + PATH_CAPACITY];
	int created = 0;

	if (ctl_evidence_keep(m->o->bundle, e, m->evidence_dir, m->ns->name, number, path, sizeof path,
	                      &created, why, sizeof why) != 0) {
		failure(m, "monitor %s: %s; evidence could not be written: %s", m->ns->name, what, why);
		return;
	}
	/* One contradiction may be seen twice in a round (across sources and against the state). */
	if (!round_names(m->round, path)) {
		m->round->found++;
		name_evidence(m, path);
	}
	m->round->written += (size_t)created;
}

static void headers_evidence(struct monitor *m, uint64_t epoch, const struct buffer *first,
                             const struct buffer *first_certificates, const struct buffer *second,
                             const struct buffer *second_certificates, const char *what)
{
	struct evidence e;
	ctl_evidence_between(&e, EVIDENCE_HEADERS, m->o->bundle, m->ns->origin, epoch, first->data,
	                     first->len, second->data, second->len);
	ctl_evidence_add_certificates(&e, first_certificates->data, first_certificates->len);
	ctl_evidence_add_certificates(&e, second_certificates->data, second_certificates->len);
	keep_evidence(m, &e, epoch, what);
}

static void checkpoints_evidence(struct monitor *m, const struct buffer *first, const struct buffer *second,
                                 const struct buffer *consistency, uint64_t size, const char *what)
{
	const struct ctl_log_pins *pins = m->o->pins;
	struct evidence e;
	memset(&e, 0, sizeof e);
	e.kind = EVIDENCE_CHECKPOINTS;
	snprintf(e.origin, sizeof e.origin, "%s", m->ns->origin);
	for (size_t i = 0; i < pins->log_key_count && e.key_count < EVIDENCE_KEYS_MAX; i++)
		e.keys[e.key_count++] = pins->log_keys[i];
	for (size_t i = 0; i < pins->witness_count && e.key_count < EVIDENCE_KEYS_MAX; i++)
		e.keys[e.key_count++] = pins->witnesses[i];
	e.statements[0].data = first->data;
	e.statements[0].len = first->len;
	e.statements[1].data = second->data;
	e.statements[1].len = second->len;
	if (consistency != NULL) {
		e.has_consistency = 1;
		e.consistency.data = consistency->data;
		e.consistency.len = consistency->len;
	}
	keep_evidence(m, &e, size, what);
}

/* ---- headers ---- */

/* Verifies a header note of the namespace by the trust bundle at its own valid-after. */
static int verify_header(struct monitor *m, size_t s, const uint8_t *note_bytes, size_t len,
                         struct snapshot_header *header, char *refusal, size_t refusal_cap)
{
	const struct source *source = &m->sources[s];
	char detail[VERIFY_DETAIL_MAX];
	struct snapshot_header parsed;
	struct note *note = NULL;
	int rc = len > VERIFY_HEADER_NOTE_MAX ? DIRAUTH_ERR_BOUNDS : note_parse(note_bytes, len, &note);

	if (rc == 0)
		rc = snapshot_header_parse(note->text, note->text_len, header);
	note_free(note);
	if (rc != 0) {
		failure(m, "monitor %s: %s: not a snapshot header note: %s", m->ns->name, source->url,
		        dirauth_strerror(rc));
		return rc;
	}
	parsed = *header;
	rc = verify_snapshot_header(m->o->bundle, m->ns->name, source->certificates.data,
	                            source->certificates.len, note_bytes, len, header->valid_after, NULL,
	                            header, NULL, detail, sizeof detail);
	/* Too few signatures: whether it is evidence depends on what it is compared with. */
	if (rc == DIRAUTH_ERR_THRESHOLD) {
		*header = parsed;
		format_into(refusal, refusal_cap, "monitor %s: %s: %s", m->ns->name, source->url, detail);
	} else if (rc != 0) {
		failure(m, "monitor %s: %s: %s", m->ns->name, source->url, detail);
	}
	return rc;
}

static int add_header(struct monitor *m, size_t s, uint64_t epoch, const struct buffer *note,
                      const char *refusal)
{
	if (m->header_count == m->header_cap) {
		size_t cap = m->header_cap ? m->header_cap * 2 : 16;
		struct seen_header *grown = realloc(m->headers, cap * sizeof *grown);
		if (grown == NULL)
			return DIRAUTH_ERR_NOMEM;
		m->headers = grown;
		m->header_cap = cap;
	}
	struct seen_header *h = &m->headers[m->header_count];
	memset(h, 0, sizeof *h);
	h->source = s;
	h->epoch = epoch;
	buffer_init(&h->note);
	if (buffer_append(&h->note, note->data, note->len) != 0)
		return DIRAUTH_ERR_NOMEM;
	m->header_count++;
	if (refusal != NULL) {
		h->rival = 1;
		format_into(h->refusal, sizeof h->refusal, "%s", refusal);
	} else {
		m->round->headers++;
	}
	return 0;
}

/* Fetches and verifies the header of epoch (latest when has_epoch is 0). *epoch gets its epoch;
 * *found 0 for a 404. */
static int fetch_header(struct monitor *m, size_t s, int has_epoch, uint64_t *epoch, int *found)
{
	struct snapshot_header header;
	struct net_response response;
	char path[NAMESPACE_NAME_MAX + 64], refusal[CTL_REPORT_MAX] = "";
	int rc;

	*found = 0;
	if (has_epoch)
		snprintf(path, sizeof path, "%s/snapshots/%" PRIu64, m->ns->name, *epoch);
	else
		snprintf(path, sizeof path, "%s/snapshots/latest", m->ns->name);
	net_response_init(&response);
	rc = get(m, s, "snapshot header", path, VERIFY_HEADER_NOTE_MAX, 1, 0, &response);
	if (rc == 0 && response.status == 200) {
		rc = verify_header(m, s, response.body.data, response.body.len, &header, refusal,
		                   sizeof refusal);
		if (rc == DIRAUTH_ERR_THRESHOLD) {
			rc = add_header(m, s, header.epoch, &response.body, refusal);
			goto done;
		}
		if (rc == 0 && has_epoch && header.epoch != *epoch) {
			failure(m, "monitor %s: %s: asked for epoch %" PRIu64 ", served epoch %" PRIu64,
			        m->ns->name, m->sources[s].url, *epoch, header.epoch);
			rc = DIRAUTH_ERR_MISMATCH;
		}
		if (rc == 0) {
			*epoch = header.epoch;
			*found = 1;
			rc = add_header(m, s, header.epoch, &response.body, NULL);
		}
	}
done:
	net_response_free(&response);
	return rc;
}

/* The text of a signed note as a span of its bytes: 0 when it does not parse. */
static int same_text(const struct buffer *a, const struct buffer *b)
{
	struct note *na = NULL, *nb = NULL;
	int same = note_parse(a->data, a->len, &na) == 0 && note_parse(b->data, b->len, &nb) == 0 &&
	           na->text_len == nb->text_len && memcmp(na->text, nb->text, na->text_len) == 0;
	note_free(na);
	note_free(nb);
	return same;
}

/* A rival header (too few signatures) against the believed ones of its epoch, this round's and
 * the one kept: evidence when an authority signed both, else a failure of the round. */
static void compare_rival(struct monitor *m, struct seen_header *h, struct buffer *kept)
{
	size_t found = m->round->found;
	char name[64], what[256];
	int present = 0;
	/* One piece of evidence per rival: the first believed header it contradicts. */
	for (size_t j = 0; j < m->header_count && m->round->found == found; j++) {
		struct seen_header *other = &m->headers[j];
		if (other->rival || other->epoch != h->epoch || same_text(&other->note, &h->note))
			continue;
		snprintf(what, sizeof what, "%s serves a header for epoch %" PRIu64 " other than %s's",
		         m->sources[h->source].url, h->epoch, m->sources[other->source].url);
		headers_evidence(m, h->epoch, &other->note, &m->sources[other->source].certificates, &h->note,
		                 &m->sources[h->source].certificates, what);
	}
	snprintf(name, sizeof name, "epochs/%" PRIu64 ".header", h->epoch);
	if (m->round->found == found && state_read(m, name, VERIFY_HEADER_NOTE_MAX, kept, &present) == 0 &&
	    present && !same_text(kept, &h->note)) {
		snprintf(what, sizeof what,
		         "%s serves a header for epoch %" PRIu64 " other than the one seen before",
		         m->sources[h->source].url, h->epoch);
		headers_evidence(m, h->epoch, kept, &m->state_certificates, &h->note,
		                 &m->sources[h->source].certificates, what);
	}
	if (m->round->found == found)
		failure(m, "%s", h->refusal);
}

/* Each header against the one kept for its epoch and the others of this round. */
static void compare_headers(struct monitor *m)
{
	struct buffer kept;
	char name[64], what[256];
	buffer_init(&kept);
	for (size_t i = 0; i < m->header_count; i++) {
		struct seen_header *h = &m->headers[i];
		int present = 0, duplicate = 0;
		if (h->rival) {
			compare_rival(m, h, &kept);
			continue;
		}
		for (size_t j = 0; j < i; j++) {
			struct seen_header *other = &m->headers[j];
			if (other->epoch != h->epoch || other->rival)
				continue;
			if (same_text(&other->note, &h->note)) {
				duplicate = 1;
				continue;
			}
			snprintf(what, sizeof what, "%s and %s serve two headers for epoch %" PRIu64,
			         m->sources[other->source].url, m->sources[h->source].url, h->epoch);
			headers_evidence(m, h->epoch, &other->note, &m->sources[other->source].certificates,
			                 &h->note, &m->sources[h->source].certificates, what);
		}
		if (duplicate)
			continue;
		snprintf(name, sizeof name, "epochs/%" PRIu64 ".header", h->epoch);
		if (state_read(m, name, VERIFY_HEADER_NOTE_MAX, &kept, &present) != 0)
			continue;
		if (!present) {
			state_write(m, name, h->note.data, h->note.len);
		} else if (!same_text(&kept, &h->note)) {
			snprintf(what, sizeof what,
			         "%s serves another header for epoch %" PRIu64 " than the one seen before",
			         m->sources[h->source].url, h->epoch);
			headers_evidence(m, h->epoch, &kept, &m->state_certificates, &h->note,
			                 &m->sources[h->source].certificates, what);
		}
	}
	buffer_free(&kept);
}

/* ---- the log ---- */

static int add_checkpoint(struct monitor *m, size_t s, const struct tlog_proof *proof)
{
	if (m->checkpoint_count == m->checkpoint_cap) {
		size_t cap = m->checkpoint_cap ? m->checkpoint_cap * 2 : 16;
		struct seen_checkpoint *grown = realloc(m->checkpoints, cap * sizeof *grown);
		if (grown == NULL)
			return DIRAUTH_ERR_NOMEM;
		m->checkpoints = grown;
		m->checkpoint_cap = cap;
	}
	struct seen_checkpoint *c = &m->checkpoints[m->checkpoint_count];
	c->source = s;
	c->checkpoint = proof->checkpoint;
	buffer_init(&c->note);
	if (buffer_append(&c->note, proof->checkpoint_note, proof->checkpoint_note_len) != 0)
		return DIRAUTH_ERR_NOMEM;
	m->checkpoint_count++;
	m->round->checkpoints++;
	return 0;
}

/* The header h is in the log its source serves: its proof file carries it and verifies. */
static void check_inclusion(struct monitor *m, struct seen_header *h)
{
	const struct source *source = &m->sources[h->source];
	struct ctl_log_inclusion inclusion;
	struct net_response response;
	struct tlog_proof *proof = NULL;
	struct note *header = NULL, *carried = NULL;
	struct ctl_report report;
	char path[NAMESPACE_NAME_MAX + 64], what[URL_CAPACITY + 64];
	int rc;

	snprintf(path, sizeof path, "%s/log/proof/%" PRIu64, m->ns->name, h->epoch);
	snprintf(what, sizeof what, "monitor %s: %s: log: epoch %" PRIu64, m->ns->name, source->url,
	         h->epoch);
	net_response_init(&response);
	if (get(m, h->source, "proof", path, TLOG_PROOF_MAX_BYTES, 1, 0, &response) != 0)
		goto done;
	if (response.status == 404) {
		h->pending = 1;
		m->round->pending++;
		goto done;
	}
	rc = tlog_proof_parse(response.body.data, response.body.len, &proof);
	if (rc == 0)
		rc = proof->extra != NULL ? note_parse(proof->extra, proof->extra_len, &carried)
		                          : DIRAUTH_ERR_SYNTAX;
	if (rc == 0)
		rc = note_parse(h->note.data, h->note.len, &header);
	if (rc != 0) {
		failure(m, "%s: the proof is not a tlog-proof file carrying a header: %s", what,
		        dirauth_strerror(rc));
		goto done;
	}
	if (carried->text_len != header->text_len ||
	    memcmp(carried->text, header->text, header->text_len) != 0) {
		failure(m, "%s: the proof carries another header than the one served", what);
		goto done;
	}
	ctl_report_init(&report);
	rc = ctl_log_check_inclusion(what, m->o->pins, m->ns->origin, proof, header->text, header->text_len,
	                             &inclusion, &report);
	if (rc != 0) {
		failure(m, "%s", report.message);
		goto done;
	}
	m->round->included++;
	if (add_checkpoint(m, h->source, proof) != 0)
		failure(m, "%s: out of memory", what);
done:
	note_free(header);
	note_free(carried);
	tlog_proof_free(proof);
	net_response_free(&response);
}

/* Gets the consistency proof from old_size to new_size, from source first, else from any other;
 * *answered 0 when none answered it. */
static int fetch_consistency(struct monitor *m, size_t first, uint64_t old_size, uint64_t new_size,
                             struct buffer *proof, int *answered)
{
	struct net_response response;
	char path[NAMESPACE_NAME_MAX + 96];
	int rc = 0;

	*answered = 0;
	snprintf(path, sizeof path, "%s/log/consistency/%" PRIu64 "/%" PRIu64, m->ns->name, old_size,
	         new_size);
	net_response_init(&response);
	for (size_t k = 0; k < m->o->source_count && !*answered; k++) {
		size_t s = (first + k) % m->o->source_count;
		if (get(m, s, "consistency", path, TLOG_CONSISTENCY_MAX_BYTES, 0, 1, &response) != 0)
			continue;
		buffer_reset(proof);
		rc = buffer_append(proof, response.body.data, response.body.len);
		*answered = 1;
	}
	net_response_free(&response);
	return rc;
}

/* c against the checkpoint a (held, or seen earlier): 0 when they are one tree, 1 when the
 * evidence was kept, -1 when it could not be told. */
static int compare_checkpoint(struct monitor *m, const struct buffer *a_note, const struct checkpoint *a,
                              const struct seen_checkpoint *c, const char *against)
{
	const struct checkpoint *small = a, *large = &c->checkpoint;
	const struct buffer *small_note = a_note, *large_note = &c->note;
	merkle_hash proof[MERKLE_MAX_PROOF];
	size_t proof_len = 0;
	struct buffer text;
	char what[URL_CAPACITY + 256];
	int answered = 0, result = -1;

	if (a->tree_size == c->checkpoint.tree_size) {
		if (memcmp(a->root, c->checkpoint.root, MERKLE_HASH_SIZE) == 0)
			return 0;
		snprintf(what, sizeof what,
		         "%s serves a checkpoint of size %" PRIu64 " with another root than %s",
		         m->sources[c->source].url, a->tree_size, against);
		checkpoints_evidence(m, a_note, &c->note, NULL, a->tree_size, what);
		return 1;
	}
	if (small->tree_size > large->tree_size) {
		small = &c->checkpoint;
		large = a;
		small_note = &c->note;
		large_note = a_note;
	}
	buffer_init(&text);
	if (fetch_consistency(m, c->source, small->tree_size, large->tree_size, &text, &answered) != 0 ||
	    !answered) {
		failure(m,
		        "monitor %s: no source answers the consistency proof from size %" PRIu64
		        " to %" PRIu64,
		        m->ns->name, small->tree_size, large->tree_size);
		goto done;
	}
	if (tlog_consistency_parse(text.data, text.len, proof, &proof_len) != 0) {
		failure(m,
		        "monitor %s: the consistency proof from size %" PRIu64 " to %" PRIu64
		        " does not parse",
		        m->ns->name, small->tree_size, large->tree_size);
		goto done;
	}
	if (merkle_consistency_verify(small->tree_size, large->tree_size, small->root, large->root, proof,
	                              proof_len) == 0) {
		m->round->consistent++;
		result = 0;
		goto done;
	}
	snprintf(what, sizeof what,
	         "the checkpoint of size %" PRIu64 " does not extend the one of size %" PRIu64
	         " (%s, %s): the consistency proof does not verify",
	         large->tree_size, small->tree_size, m->sources[c->source].url, against);
	checkpoints_evidence(m, small_note, large_note, &text, small->tree_size, what);
	result = 1;
done:
	buffer_free(&text);
	return result;
}

static void compare_checkpoints(struct monitor *m)
{
	const struct seen_checkpoint *best = NULL;
	int clean = 1;
	for (size_t i = 0; i < m->checkpoint_count; i++) {
		const struct seen_checkpoint *c = &m->checkpoints[i];
		int result = 0;
		if (m->has_held)
			result = compare_checkpoint(m, &m->held_note, &m->held, c, "the one held");
		/* Same sizes across sources; other sizes are each held to the held one. */
		for (size_t j = 0; j < i && result == 0; j++) {
			const struct seen_checkpoint *d = &m->checkpoints[j];
			if (d->checkpoint.tree_size == c->checkpoint.tree_size || !m->has_held)
				result = compare_checkpoint(m, &d->note, &d->checkpoint, c,
				                            m->sources[d->source].url);
		}
		if (result != 0)
			clean = 0;
		if (result == 0 && (best == NULL || c->checkpoint.tree_size > best->checkpoint.tree_size))
			best = c;
	}
	/* Keep the largest checkpoint shown to be of the held tree, and only from a clean round. */
	if (clean && best != NULL && (!m->has_held || best->checkpoint.tree_size > m->held.tree_size)) {
		if (state_write(m, CTL_FETCH_LOG_HELD, best->note.data, best->note.len) == 0) {
			m->has_held = 1;
			m->held = best->checkpoint;
		}
	}
	if (m->has_held)
		m->round->held_size = m->held.tree_size;
}

/* ---- dirauthd's own evidence ---- */

/* Reads one "evidence <epoch> <member> <kind> <first> <second>\n" line at *at. */
static int read_piece_line(const uint8_t *buf, size_t len, size_t *at, uint64_t *epoch, char *kind,
                           size_t kind_cap, uint64_t *first, uint64_t *second)
{
	const uint8_t *newline = memchr(buf + *at, '\n', len - *at);
	char line[NOTE_NAME_MAX + 160], member[NOTE_NAME_MAX + 1], kind_text[32];
	size_t line_len;
	if (newline == NULL)
		return DIRAUTH_ERR_SYNTAX;
	line_len = (size_t)(newline - (buf + *at));
	if (line_len >= sizeof line)
		return DIRAUTH_ERR_SYNTAX;
	memcpy(line, buf + *at, line_len);
	line[line_len] = '\0';
	if (sscanf(line, "evidence %" SCNu64 " %128s %31s %" SCNu64 " %" SCNu64, epoch, member, kind_text,
	           first, second) != 5)
		return DIRAUTH_ERR_SYNTAX;
	snprintf(kind, kind_cap, "%s", kind_text);
	*at += line_len + 1;
	if (*first > len - *at || *second > len - *at - *first)
		return DIRAUTH_ERR_BOUNDS;
	return 0;
}

static void peer_evidence(struct monitor *m, size_t s)
{
	static const char magic[] = EVIDENCE_MAGIC;
	struct net_response response;
	char path[NAMESPACE_NAME_MAX + 32], what[URL_CAPACITY + 128];
	size_t at = sizeof magic - 1;

	snprintf(path, sizeof path, "%s/evidence", m->ns->name);
	net_response_init(&response);
	if (get(m, s, "evidence", path, CTL_MONITOR_EVIDENCE_ANSWER_MAX, 1, 0, &response) != 0 ||
	    response.status == 404)
		goto done;
	const uint8_t *buf = response.body.data;
	size_t len = response.body.len;
	if (len < at || memcmp(buf, magic, at) != 0) {
		failure(m, "monitor %s: %s: the evidence served is not a dirauth evidence list", m->ns->name,
		        m->sources[s].url);
		goto done;
	}
	while (at < len) {
		uint64_t epoch, first_len, second_len;
		char kind[32];
		if (read_piece_line(buf, len, &at, &epoch, kind, sizeof kind, &first_len, &second_len) != 0) {
			failure(m, "monitor %s: %s: the evidence served does not parse", m->ns->name,
			        m->sources[s].url);
			break;
		}
		const uint8_t *first = buf + at, *second = buf + at + first_len;
		at += (size_t)(first_len + second_len);
		m->round->peer_pieces++;
		struct buffer a, b;
		buffer_init(&a);
		buffer_init(&b);
		int usable =
		    strcmp(kind, "conflicting-headers") == 0 || strcmp(kind, "conflicting-votes") == 0;
		if (usable && strcmp(kind, "conflicting-votes") == 0) {
			struct vote_envelope ea, eb;
			usable =
			    vote_envelope_parse(first, (size_t)first_len, (size_t)first_len, &ea) == 0 &&
			    vote_envelope_parse(second, (size_t)second_len, (size_t)second_len, &eb) == 0 &&
			    buffer_append(&a, ea.note, ea.note_len) == 0 &&
			    buffer_append(&b, eb.note, eb.note_len) == 0;
		} else if (usable) {
			usable = buffer_append(&a, first, (size_t)first_len) == 0 &&
			         buffer_append(&b, second, (size_t)second_len) == 0;
		}
		if (usable && a.len > 0 && b.len > 0) {
			struct evidence e;
			ctl_evidence_between(
			    &e, strcmp(kind, "conflicting-votes") == 0 ? EVIDENCE_VOTES : EVIDENCE_HEADERS,
			    m->o->bundle, m->ns->origin, epoch, a.data, a.len, b.data, b.len);
			ctl_evidence_add_certificates(&e, m->sources[s].certificates.data,
			                              m->sources[s].certificates.len);
			snprintf(what, sizeof what, "%s keeps %s of epoch %" PRIu64, m->sources[s].url, kind,
			         epoch);
			keep_evidence(m, &e, epoch, what);
		}
		buffer_free(&a);
		buffer_free(&b);
	}
done:
	net_response_free(&response);
}

/* ---- a round ---- */

static void monitor_namespace(struct monitor *m)
{
	const struct ctl_log_pins *pins = m->o->pins;
	int log_checked = pins != NULL && pins->enabled;
	int has_checked = 0, present = 0;
	uint64_t checked = 0;

	if (read_held(m) != 0 || read_checked(m, &has_checked, &checked) != 0)
		return;
	if (state_read(m, "certificates", CERTIFICATE_BUNDLE_MAX_BYTES, &m->state_certificates, &present) !=
	    0)
		return;
	for (size_t s = 0; s < m->o->source_count; s++) {
		uint64_t latest = 0;
		int found = 0;
		if (!m->sources[s].usable || fetch_header(m, s, 0, &latest, &found) != 0 || !found)
			continue;
		uint64_t from = has_checked ? checked + 1 : latest;
		if (latest > CTL_MONITOR_GAP_MAX && from < latest - CTL_MONITOR_GAP_MAX)
			from = latest - CTL_MONITOR_GAP_MAX;
		for (uint64_t e = from; e < latest; e++) {
			uint64_t epoch = e;
			if (fetch_header(m, s, 1, &epoch, &found) != 0)
				break;
		}
	}
	compare_headers(m);
	for (size_t i = 0; log_checked && i < m->header_count; i++)
		if (!m->headers[i].rival)
			check_inclusion(m, &m->headers[i]);
	if (log_checked)
		compare_checkpoints(m);
	/* Checked up to the epoch before the first one still waiting for the log. */
	uint64_t highest = checked, first_pending = UINT64_MAX;
	int any = has_checked;
	for (size_t i = 0; i < m->header_count; i++) {
		if (m->headers[i].rival)
			continue;
		if (m->headers[i].pending && m->headers[i].epoch < first_pending)
			first_pending = m->headers[i].epoch;
		if (!any || m->headers[i].epoch > highest)
			highest = m->headers[i].epoch;
		any = 1;
	}
	if (first_pending != UINT64_MAX && first_pending > 0 && first_pending - 1 < highest)
		highest = first_pending - 1;
	if (any && (!has_checked || highest > checked) &&
	    (first_pending == UINT64_MAX || first_pending > 0)) {
		char text[32];
		int n = snprintf(text, sizeof text, "%" PRIu64 "\n", highest);
		state_write(m, "checked", (const uint8_t *)text, (size_t)n);
	}
	for (size_t s = m->o->source_count; s-- > 0;) {
		if (m->sources[s].usable && m->sources[s].certificates.len > 0) {
			state_write(m, "certificates", m->sources[s].certificates.data,
			            m->sources[s].certificates.len);
			break;
		}
	}
	for (size_t s = 0; s < m->o->source_count; s++)
		if (m->sources[s].usable)
			peer_evidence(m, s);
}

static void clear_namespace(struct monitor *m)
{
	for (size_t i = 0; i < m->header_count; i++)
		buffer_free(&m->headers[i].note);
	for (size_t i = 0; i < m->checkpoint_count; i++)
		buffer_free(&m->checkpoints[i].note);
	m->header_count = 0;
	m->checkpoint_count = 0;
	m->has_held = 0;
}

static void line_add(struct ctl_monitor_round *r, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

/* Appends to the round's line, truncating. */
static void line_add(struct ctl_monitor_round *r, const char *format, ...)
{
	size_t used = strlen(r->line);
	va_list args;
	if (used + 1 >= sizeof r->line)
		return;
	va_start(args, format);
	vsnprintf(r->line + used, sizeof r->line - used, format, args);
	va_end(args);
}

static void write_line(const struct monitor *m, size_t answered)
{
	struct ctl_monitor_round *r = m->round;
	const struct ctl_log_pins *pins = m->o->pins;
	r->line[0] = '\0';
	line_add(r, "monitor: %zu of %zu sources answered; %zu namespaces; %zu headers verified", answered,
	         m->o->source_count, m->o->bundle->namespace_count, r->headers);
	if (pins != NULL && pins->enabled)
		line_add(r,
		         ", %zu in the log, %zu not yet; %zu checkpoints verified, %zu consistency proofs "
		         "verified, holding size %" PRIu64,
		         r->included, r->pending, r->checkpoints, r->consistent, r->held_size);
	else
		line_add(r, "; log not checked (no --log-key)");
	line_add(r, "; %zu pieces of authorities' evidence read; %zu failures; ", r->peer_pieces,
	         r->failure_count);
	if (r->found > 0)
		line_add(r, "MISBEHAVIOUR: %zu evidence files (%zu new): %s", r->found, r->written,
		         r->evidence);
	else
		line_add(r, "no misbehaviour found");
}

int ctl_monitor_round_run(const struct ctl_monitor_options *options, struct ctl_monitor_round *round)
{
	struct monitor *m = calloc(1, sizeof *m);
	struct net_pool *own_pool = NULL;
	size_t answered = 0;
	int outcome;

	memset(round, 0, sizeof *round);
	if (m == NULL) {
		snprintf(round->failures[0], sizeof round->failures[0], "monitor: out of memory");
		round->failure_count = 1;
		snprintf(round->line, sizeof round->line, "monitor: out of memory");
		return CTL_MONITOR_EXIT_UNCHECKED;
	}
	m->o = options;
	m->round = round;
	/* Without the command's pool, one for the round; without memory for that, none. */
	if (options->pool == NULL && net_pool_new(NULL, &own_pool) != 0)
		own_pool = NULL;
	m->pool = options->pool != NULL ? options->pool : own_pool;
	buffer_init(&m->held_note);
	buffer_init(&m->state_certificates);
	if (options->evidence_dir != NULL)
		snprintf(m->evidence_dir, sizeof m->evidence_dir, "%s", options->evidence_dir);
	else
		snprintf(m->evidence_dir, sizeof m->evidence_dir, "%s/evidence", options->state_dir);
	for (size_t s = 0; s < options->source_count && s < CTL_MONITOR_SOURCES_MAX; s++) {
		struct source *source = &m->sources[s];
		struct ctl_report report;
		source->url = options->sources[s];
		source->base_len = ctl_exchange_url_length(source->url);
		buffer_init(&source->certificates);
		ctl_report_init(&report);
		if (ctl_keyring_download("monitor", source->url, &source->certificates, &report) != 0) {
			failure(m, "%s", report.message);
			continue;
		}
		source->usable = 1;
		answered++;
	}
	for (size_t i = 0; i < options->bundle->namespace_count; i++) {
		m->ns = &options->bundle->namespaces[i];
		int n = snprintf(m->ns_dir, sizeof m->ns_dir, "%s/%s", options->state_dir, m->ns->name);
		if (n < 0 || (size_t)n >= sizeof m->ns_dir) {
			failure(m, "monitor: --state: path too long");
			continue;
		}
		monitor_namespace(m);
		clear_namespace(m);
	}
	write_line(m, answered);
	outcome = round->found > 0           ? CTL_MONITOR_EXIT_FOUND
	          : round->failure_count > 0 ? CTL_MONITOR_EXIT_UNCHECKED
	                                     : 0;
	for (size_t s = 0; s < options->source_count && s < CTL_MONITOR_SOURCES_MAX; s++)
		buffer_free(&m->sources[s].certificates);
	free(m->headers);
	free(m->checkpoints);
	buffer_free(&m->held_note);
	buffer_free(&m->state_certificates);
	net_pool_free(own_pool);
	free(m);
	return outcome;
}
