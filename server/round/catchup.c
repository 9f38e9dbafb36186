/*
 * catchup.c: an authority that did not publish what the others published (it was down,
 * partitioned or behind) takes it from them, however long it was away.
 *
 * First every peer is asked, at once, for its latest snapshot; each answer is verified as a
 * mirror verifies a header (k certified signatures at its valid-after and now, this namespace and
 * origin). When some peer's is newer than the latest stored here, the headers in between are
 * taken from such a peer in bulk (GET /v1/<ns>/snapshots/from/<epoch>: up to
 * HEADERS_BUNDLE_MAX_COUNT headers an answer, one round trip for a day of 60-s epochs), each
 * verified alike and chained forward: it must follow the header taken just before it, from the one
 * stored here on, by the one rule of a link (verify/history.h: verify_history_follows, the rule a
 * mirror walks back by). A chain that breaks, a header that does not verify, or
 * a peer that fails, ends the walk with that peer (logged, with the reason) and the next peer
 * that is ahead is tried from where the first left off.
 *
 * Headers are stored oldest first, as they are verified, so a walk cut short by its deadline is
 * resumed at the next tick from what it stored. A header older than the body retention window of
 * the newest (store.body_retention_epochs) is stored alone: its body is gone everywhere, as
 * retention removed it at every authority. The bodies of the window are fetched in parallel, each
 * from another peer that is ahead, each checked against its header as a mirror checks it (size,
 * digest, bounds, and the records and sections the header commits to); a body a peer answers
 * `404 body_not_kept` (or not found) for is asked of another peer, and its header is stored alone
 * when none has it. A body that cannot be fetched for any other reason stops the catch-up before
 * its header, to be tried again. At most so many bodies are held in memory at once that their
 * sizes stay under CATCH_UP_BODY_BYTES (one at least).
 *
 * Once stored, the transparency log is told of the newest (it appends every header it lacks) and
 * the newest is served, its body included when it was stored with one.
 */
#include "server/round/internal.h"

#include "compress/compress.h"
#include "base/error.h"
#include "schema/headers_bundle.h"
#include "schema/note.h"
#include "schema/snapshot.h"
#include "server/publish/publish.h"
#include "verify/history.h"
#include "verify/snapshot.h"
#include "server/store/snapshots.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* How far below its latest an authority looks for the header a peer's chain follows, when its
 * latest was published here alone (set aside). */
#define CATCH_UP_SET_ASIDE_MAX 16

/* The bodies held in memory at once during a catch-up, at most (one at least). */
#define CATCH_UP_BODY_BYTES ((uint64_t)1 << 30)

/* A verified header waiting for its body. */
struct caught_header {
	uint64_t epoch;
	struct buffer note;
	struct verify_held held; /* the header and its digest */
};

struct catch_up {
	struct round *round;
	size_t namespace_index;
	uint64_t now;
	uint64_t deadline_ms;
	/* This authority's latest, moving as headers are stored. */
	int have;
	uint64_t latest;
	struct verify_held latest_held; /* when have: its header and digest */
	/* What the peers showed. */
	pthread_mutex_t lock;
	uint64_t latest_of[CONFIG_MAX_MEMBERS]; /* each member's verified latest epoch */
	uint32_t ahead;                         /* members whose verified latest is past ours */
	uint32_t unanswered;                    /* members whose latest could not be had */
	char unanswered_why[PEER_REASON_MAX + NOTE_NAME_MAX + 8];
	uint64_t target; /* the newest of them */
	/* Headers of the body window, verified, not yet stored. */
	struct caught_header *waiting;
	size_t waiting_count, waiting_cap;
	/* What was done, for the log. */
	uint64_t first_stored;
	size_t alone, with_body;
	size_t revocations, revocations_refused; /* taken from the bodies stored */
	uint64_t set_aside; /* snapshots of this authority's own the set went on without */
	uint32_t sources;
	int stored_body_of_newest;
};

static const char *member_name(const struct catch_up *c, size_t m)
{
	return c->round->o.config->members[m].name;
}

/* A signed header note verified as a mirror verifies one: this namespace and origin, epoch (any
 * when epoch is UINT64_MAX), k certified signatures at its valid-after and now. *out gets the
 * header and its digest. */
static int check_header(struct catch_up *c, const uint8_t *data, size_t len, uint64_t epoch,
                        struct verify_held *out)
{
	struct snapshot_header *header = &out->header;
	const struct config *config = c->round->o.config;
	const struct config_namespace *ns = &config->namespaces[c->namespace_index];
	struct note *note = NULL;
	int rc = len > VERIFY_HEADER_NOTE_MAX ? DIRAUTH_ERR_BOUNDS : note_parse(data, len, &note);
	if (rc == 0)
		rc = snapshot_header_parse(note->text, note->text_len, header);
	if (rc == 0 &&
	    (strcmp(header->namespace_name, ns->name) != 0 || strcmp(header->origin, ns->origin) != 0 ||
	     (epoch != UINT64_MAX && header->epoch != epoch)))
		rc = DIRAUTH_ERR_MISMATCH;
	if (rc == 0) {
		uint8_t counted[CONFIG_MAX_MEMBERS];
		size_t signers = 0;
		rc = authority_set_count_signers(c->round->o.authorities, note, header->valid_after, c->now,
		                                 counted, &signers);
		if (rc == 0 && signers < config->threshold)
			rc = DIRAUTH_ERR_THRESHOLD;
	}
	if (rc == 0)
		rc = snapshot_header_digest(note->text, note->text_len, out->digest);
	note_free(note);
	return rc;
}

/* ---- who is ahead ---- */

static void on_latest(void *context, size_t m, const struct peer_answer *answer)
{
	struct catch_up *c = context;
	struct verify_held latest;
	if (answer->transport != PEER_TRANSPORT_ANSWERED || answer->status != 200) {
		pthread_mutex_lock(&c->lock);
		c->unanswered |= (uint32_t)1 << m;
		if (!c->unanswered_why[0])
			snprintf(c->unanswered_why, sizeof c->unanswered_why, "%s: %s", member_name(c, m),
			         answer->reason[0] ? answer->reason : peer_transport_name(answer->transport));
		pthread_mutex_unlock(&c->lock);
		return;
	}
	if (check_header(c, answer->body.data, answer->body.len, UINT64_MAX, &latest) != 0) {
		round_log(c->round, c->namespace_index, c->round->ns[c->namespace_index].epoch,
		          "the latest snapshot %s serves does not verify: not caught up from it",
		          member_name(c, m));
		return;
	}
	pthread_mutex_lock(&c->lock);
	c->latest_of[m] = latest.header.epoch;
	if (!c->have || latest.header.epoch > c->latest) {
		c->ahead |= (uint32_t)1 << m;
		if (latest.header.epoch > c->target)
			c->target = latest.header.epoch;
	}
	pthread_mutex_unlock(&c->lock);
}

/* Asks every peer for its latest at once. */
static void ask_latest(struct catch_up *c)
{
	const struct config *config = c->round->o.config;
	struct peer_call call = {.operation = PEER_FETCH_LATEST_HEADER,
	                         .namespace_name = config->namespaces[c->namespace_index].name,
	                         .deadline_ms = c->deadline_ms};
	struct peers_broadcast_options options = {NULL, on_latest, c};
	struct peer_answer answers[CONFIG_MAX_MEMBERS];
	if (peers_broadcast(c->round->o.peers, &call, &options, answers) == 0)
		peer_answers_free(answers, config->member_count);
}

/* ---- storing ---- */

/* The first epoch whose body is still kept, given the newest. */
static uint64_t body_window_start(const struct catch_up *c)
{
	uint64_t window = c->round->o.config->store.body_retention_epochs;
	return c->target >= window ? c->target - window + 1 : 0;
}

/* The revocations a stored method-2 body lists, taken into the store (the body was checked
 * against its header already). */
static void take_revocations(struct catch_up *c, const struct snapshot_header *header, const uint8_t *body,
                             size_t body_len)
{
	const struct config *config = c->round->o.config;
	const struct config_namespace *ns = &config->namespaces[c->namespace_index];
	struct snapshot_body_limits limits = {config->bounds.records_per_snapshot, config_max_health(config),
	                                      ns->max_revocations};
	struct snapshot_body *parsed = NULL;
	if (header->consensus_method != CONSENSUS_METHOD_LIFECYCLE ||
	    snapshot_body_parse_sections(body, body_len, &limits, &parsed) != 0)
		return;
	round_take_listed_revocations(c->round, c->namespace_index, parsed, &c->revocations,
	                              &c->revocations_refused);
	snapshot_body_free(parsed);
}

static int store_header(struct catch_up *c, const struct caught_header *h, const uint8_t *body,
                        size_t body_len)
{
	const struct round_options *o = &c->round->o;
	int rc = body ? publish_signed_snapshot(o->config, o->store, &h->held.header, h->note.data,
	                                        h->note.len, body, body_len)
	              : store_snapshot_put(o->store, h->held.header.namespace_name, h->epoch, h->note.data,
	                                   h->note.len, NULL);
	if (rc)
		return rc;
	if (body)
		take_revocations(c, &h->held.header, body, body_len);
	if (!c->first_stored)
		c->first_stored = h->epoch;
	c->have = 1;
	c->latest = h->epoch;
	c->latest_held = h->held;
	if (body)
		c->with_body++;
	else
		c->alone++;
	c->stored_body_of_newest = body != NULL;
	return 0;
}

static int wait_for_body(struct catch_up *c, struct caught_header *h)
{
	if (c->waiting_count == c->waiting_cap) {
		size_t cap = c->waiting_cap ? c->waiting_cap * 2 : 16;
		struct caught_header *grown = realloc(c->waiting, cap * sizeof *grown);
		if (!grown)
			return DIRAUTH_ERR_NOMEM;
		c->waiting = grown;
		c->waiting_cap = cap;
	}
	c->waiting[c->waiting_count++] = *h;
	buffer_init(&h->note);
	return 0;
}

/* ---- the headers ---- */

/* The header stored here for epoch, read back as the history checks take it. */
static int read_stored(struct catch_up *c, uint64_t epoch, struct verify_held *out)
{
	const char *name = c->round->o.config->namespaces[c->namespace_index].name;
	struct buffer note;
	buffer_init(&note);
	int rc = store_snapshot_get(c->round->o.store, name, epoch, &note, NULL);
	if (rc == 0)
		rc = verify_held_parse(note.data, note.len, out, NULL, 0);
	buffer_free(&note);
	return rc;
}

/* The stored header, at most CATCH_UP_SET_ASIDE_MAX epochs below this authority's latest, that
 * next follows: 0 with *ancestor, or DIRAUTH_ERR_NOT_FOUND. */
static int find_ancestor(struct catch_up *c, const struct snapshot_header *next, struct verify_held *ancestor)
{
	for (uint64_t back = 1; back <= CATCH_UP_SET_ASIDE_MAX && back <= c->latest; back++)
		if (read_stored(c, c->latest - back, ancestor) == 0 &&
		    verify_history_follows(ancestor, next, NULL, 0) == 0)
			return 0;
	return DIRAUTH_ERR_NOT_FOUND;
}

/* Takes the headers after this authority's latest from member m, page by page, each verified and
 * chained; those older than the body window are stored at once, the others wait for their
 * bodies. Returns 0 when m had nothing more, or why it stopped. */
static int walk_headers(struct catch_up *c, size_t m, char *why, size_t why_cap)
{
	const struct config *config = c->round->o.config;
	struct peer_answer answer;
	struct headers_bundle bundle;
	int rc = 0;
	peer_answer_init(&answer);
	memset(&bundle, 0, sizeof bundle);
	/* Continue after what is stored, or after the last header waiting for its body. */
	uint64_t from = c->waiting_count ? c->waiting[c->waiting_count - 1].epoch + 1
	                : c->have        ? c->latest + 1
	                                 : 0;
	/* The header the next one must follow. */
	struct verify_held chained =
	    c->waiting_count ? c->waiting[c->waiting_count - 1].held : c->latest_held;
	int chain_known = c->have || c->waiting_count;
	while (rc == 0) {
		if (round_monotonic_ms() >= c->deadline_ms) {
			snprintf(why, why_cap, "the window ended");
			rc = DIRAUTH_ERR_UNAVAILABLE;
			break;
		}
		struct peer_call call = {.operation = PEER_FETCH_HEADERS,
		                         .namespace_name = config->namespaces[c->namespace_index].name,
		                         .epoch = from,
		                         .deadline_ms = c->deadline_ms};
		rc = peer_client_call(c->round->o.peers, m, &call, &answer);
		if (rc) {
			snprintf(why, why_cap, "%s", answer.reason);
			break;
		}
		if (answer.status != 200) {
			snprintf(why, why_cap, "GET snapshots/from/%llu answered %s%s",
			         (unsigned long long)from, answer.reason,
			         answer.status == 404 && strcmp(answer.error_code, "not_found") == 0
			             ? " (an authority that does not serve headers in bulk)"
			             : "");
			rc = DIRAUTH_ERR_UNAVAILABLE;
			break;
		}
		headers_bundle_clear(&bundle);
		if ((rc = headers_bundle_parse(answer.body.data, answer.body.len, from,
		                               VERIFY_HEADER_NOTE_MAX, &bundle)) != 0) {
			snprintf(why, why_cap, "its headers do not parse: %s", dirauth_strerror(rc));
			break;
		}
		if (bundle.latest > c->target)
			c->target = bundle.latest;
		uint64_t window = body_window_start(c);
		for (size_t k = 0; rc == 0 && k < bundle.count; k++) {
			struct caught_header h;
			memset(&h, 0, sizeof h);
			buffer_init(&h.note);
			h.epoch = bundle.items[k].epoch;
			rc = check_header(c, bundle.items[k].note, bundle.items[k].len, h.epoch, &h.held);
			if (rc) {
				snprintf(why, why_cap, "the header of epoch %llu does not verify: %s",
				         (unsigned long long)h.epoch, dirauth_strerror(rc));
				break;
			}
			/* A snapshot published here that the set went on without: published here alone,
			 * with k signatures, while a partition kept the others from learning it until
			 * after the next round's vote (docs/protocol.md, "Publication"). The set's chain
			 * follows an older header stored here; it is taken, and the snapshots after that
			 * header are set aside. */
			struct verify_held ancestor;
			if (k == 0 && c->have && !c->waiting_count && chain_known &&
			    verify_history_follows(&chained, &h.held.header, NULL, 0) != 0 &&
			    find_ancestor(c, &h.held.header, &ancestor) == 0) {
				round_log(
				    c->round, c->namespace_index, c->round->ns[c->namespace_index].epoch,
				    "the set went on from epoch %llu without the snapshots of epochs %llu to "
				    "%llu published here (its next is epoch %llu, from %s): they are set "
				    "aside",
				    (unsigned long long)ancestor.header.epoch,
				    (unsigned long long)ancestor.header.epoch + 1,
				    (unsigned long long)c->latest, (unsigned long long)h.epoch,
				    member_name(c, m));
				chained = ancestor;
				c->set_aside += c->latest - ancestor.header.epoch;
			}
			char broken[160];
			if (chain_known &&
			    verify_history_follows(&chained, &h.held.header, broken, sizeof broken) != 0) {
				snprintf(why, why_cap,
				         "the header of epoch %llu does not follow the one before it (%s)",
				         (unsigned long long)h.epoch, broken);
				rc = DIRAUTH_ERR_MISMATCH;
				break;
			}
			chained = h.held;
			chain_known = 1;
			if ((rc = buffer_append(&h.note, bundle.items[k].note, bundle.items[k].len)) == 0)
				rc = h.epoch < window ? store_header(c, &h, NULL, 0) : wait_for_body(c, &h);
			if (rc)
				snprintf(why, why_cap, "cannot store the header of epoch %llu: %s",
				         (unsigned long long)h.epoch, dirauth_strerror(rc));
			buffer_free(&h.note);
		}
		if (rc || bundle.through >= bundle.latest)
			break;
		from = bundle.through + 1;
	}
	headers_bundle_clear(&bundle);
	peer_answer_free(&answer);
	return rc;
}

/* ---- the bodies ---- */

/* Decodes and checks a body answer against its header, as a mirror checks one. */
static int decode_body(struct catch_up *c, const struct peer_answer *answer,
                       const struct snapshot_header *header, struct buffer *body)
{
	const struct config *config = c->round->o.config;
	const struct config_namespace *ns = &config->namespaces[c->namespace_index];
	enum content_encoding encoding = ENCODING_IDENTITY;
	int rc = 0;
	if (answer->content_encoding[0]) {
		if (strcmp(answer->content_encoding, "gzip") == 0)
			encoding = ENCODING_GZIP;
		else if (strcmp(answer->content_encoding, "zstd") == 0)
			encoding = ENCODING_ZSTD;
		else
			return DIRAUTH_ERR_SYNTAX;
	}
	if (header->body_size > config->bounds.snapshot_body_uncompressed)
		return DIRAUTH_ERR_BOUNDS;
	buffer_reset(body);
	if (encoding == ENCODING_IDENTITY)
		rc = buffer_append(body, answer->body.data, answer->body.len);
	else
		rc = compress_decode(encoding, answer->body.data, answer->body.len, (size_t)header->body_size,
		                     body);
	if (rc)
		return rc;
	if (header->consensus_method == CONSENSUS_METHOD_LIFECYCLE) {
		struct snapshot_body_limits limits = {config->bounds.records_per_snapshot,
		                                      config_max_health(config), ns->max_revocations};
		return snapshot_body_verify_sections(header, body->data, body->len, &limits,
		                                     ns->health_freshness_epochs * config->epoch.length);
	}
	return snapshot_body_verify(header, body->data, body->len, config->bounds.records_per_snapshot);
}

struct body_slot {
	struct caught_header *header;
	struct buffer body;
	bool fetched;
	uint32_t asked;    /* members asked for it so far */
	uint32_t not_kept; /* those that answered 404: retention removed it there */
	char why[PEER_REASON_MAX + NOTE_NAME_MAX + 160];
};

struct body_fetch {
	struct catch_up *c;
	struct body_slot *slot_of[CONFIG_MAX_MEMBERS];
};

static void on_body(void *context, size_t m, const struct peer_answer *answer)
{
	struct body_fetch *f = context;
	struct body_slot *slot = f->slot_of[m];
	if (!slot)
		return;
	if (answer->transport == PEER_TRANSPORT_ANSWERED && answer->status == 404) {
		slot->not_kept |= (uint32_t)1 << m;
		return;
	}
	if (answer->transport != PEER_TRANSPORT_ANSWERED || answer->status != 200) {
		snprintf(slot->why, sizeof slot->why, "%s: %s", member_name(f->c, m), answer->reason);
		return;
	}
	int rc = decode_body(f->c, answer, &slot->header->held.header, &slot->body);
	slot->fetched = rc == 0;
	if (rc)
		snprintf(slot->why, sizeof slot->why, "%s: its body of epoch %llu does not verify: %s",
		         member_name(f->c, m), (unsigned long long)slot->header->epoch, dirauth_strerror(rc));
}

/* The member ahead and holding epoch that was asked least for this body; -1 when none is left. */
static int body_source(const struct catch_up *c, const struct body_slot *slot, const uint32_t busy,
                       size_t turn)
{
	const struct config *config = c->round->o.config;
	for (size_t k = 0; k < config->member_count; k++) {
		size_t m = (turn + k) % config->member_count;
		uint32_t bit = (uint32_t)1 << m;
		if ((c->ahead & bit) && !(slot->asked & bit) && !(busy & bit) &&
		    c->latest_of[m] >= slot->header->epoch)
			return (int)m;
	}
	return -1;
}

/* Fetches the bodies of the waiting headers, several at once from several members, and stores
 * them in epoch order. Returns 0 when every waiting header was stored. */
static int fetch_bodies(struct catch_up *c, char *why, size_t why_cap)
{
	const struct config *config = c->round->o.config;
	size_t next = 0;
	int rc = 0;
	while (rc == 0 && next < c->waiting_count) {
		/* A group of consecutive headers, at most one per member ahead, within the memory bound. */
		struct body_slot slots[CONFIG_MAX_MEMBERS];
		size_t group = 0;
		uint64_t bytes = 0;
		while (next + group < c->waiting_count && group < (size_t)__builtin_popcount(c->ahead) &&
		       (group == 0 ||
		        bytes + c->waiting[next + group].held.header.body_size <= CATCH_UP_BODY_BYTES)) {
			bytes += c->waiting[next + group].held.header.body_size;
			slots[group] = (struct body_slot){.header = &c->waiting[next + group]};
			buffer_init(&slots[group].body);
			group++;
		}
		/* Ask, in turns, until each body is fetched or no member is left to ask. */
		while (round_monotonic_ms() < c->deadline_ms) {
			struct body_fetch f = {.c = c};
			struct peer_call calls[CONFIG_MAX_MEMBERS];
			const struct peer_call *asked[CONFIG_MAX_MEMBERS] = {0};
			uint32_t busy = 0;
			size_t asking = 0;
			for (size_t g = 0; g < group; g++) {
				struct body_slot *slot = &slots[g];
				if (slot->fetched)
					continue;
				int m = body_source(c, slot, busy, next + g);
				if (m < 0)
					continue;
				slot->asked |= (uint32_t)1 << m;
				busy |= (uint32_t)1 << m;
				f.slot_of[m] = slot;
				calls[m] = (struct peer_call){.operation = PEER_FETCH_BODY,
				                              .namespace_name =
				                                  config->namespaces[c->namespace_index].name,
				                              .epoch = slot->header->epoch,
				                              .deadline_ms = c->deadline_ms};
				asked[m] = &calls[m];
				asking++;
			}
			if (asking == 0)
				break;
			struct peers_broadcast_options options = {NULL, on_body, &f};
			struct peer_answer answers[CONFIG_MAX_MEMBERS];
			if (peers_call_each(c->round->o.peers, asked, &options, answers) == 0)
				peer_answers_free(answers, config->member_count);
		}
		/* Store in order: a body every member asked no longer keeps leaves its header alone; a
		 * body that could not be fetched otherwise stops here. */
		for (size_t g = 0; g < group; g++) {
			struct body_slot *slot = &slots[g];
			bool not_kept = !slot->fetched && slot->asked && slot->not_kept == slot->asked;
			if (rc == 0 && !slot->fetched && !not_kept) {
				snprintf(why, why_cap, "the body of epoch %llu could not be fetched (%s)",
				         (unsigned long long)slot->header->epoch,
				         slot->why[0] ? slot->why : "no member ahead left to ask");
				rc = DIRAUTH_ERR_UNAVAILABLE;
			}
			if (rc == 0) {
				rc = slot->fetched
				         ? store_header(c, slot->header, slot->body.data, slot->body.len)
				         : store_header(c, slot->header, NULL, 0);
				if (rc)
					snprintf(why, why_cap, "cannot store epoch %llu: %s",
					         (unsigned long long)slot->header->epoch,
					         dirauth_strerror(rc));
			}
			buffer_free(&slot->body);
		}
		next += group;
	}
	return rc;
}

/* ---- the whole ---- */

static void catch_up_free(struct catch_up *c)
{
	for (size_t w = 0; w < c->waiting_count; w++)
		buffer_free(&c->waiting[w].note);
	free(c->waiting);
	pthread_mutex_destroy(&c->lock);
}

/* Takes what the members ahead of this authority (c->ahead) published after its latest: the
 * headers from the furthest first, then their bodies; logs what was stored. Returns as
 * round_catch_up. */
static int catch_up_from_members_ahead(struct catch_up *c, uint64_t started)
{
	struct round *round = c->round;
	size_t i = c->namespace_index;
	const struct config *config = round->o.config;
	const char *name = config->namespaces[i].name;
	struct round_namespace *rn = &round->ns[i];
	uint64_t deadline_ms = c->deadline_ms;
	char why[PEER_REASON_MAX + 128] = "";
	int rc = 0;
	/* The headers, from the members ahead, the furthest first. */
	uint32_t tried = 0;
	for (;;) {
		int best = -1;
		for (size_t m = 0; m < config->member_count; m++)
			if ((c->ahead & ((uint32_t)1 << m)) && !(tried & ((uint32_t)1 << m)) &&
			    (best < 0 || c->latest_of[m] > c->latest_of[best]))
				best = (int)m;
		if (best < 0)
			break;
		tried |= (uint32_t)1 << best;
		uint64_t reached = c->waiting_count ? c->waiting[c->waiting_count - 1].epoch : c->latest;
		if (c->have && reached >= c->latest_of[best])
			continue;
		why[0] = 0;
		rc = walk_headers(c, (size_t)best, why, sizeof why);
		if (rc == 0) {
			c->sources |= (uint32_t)1 << best;
			break;
		}
		round_log(round, i, rn->epoch, "catching up from %s stopped: %s",
		          member_name(c, (size_t)best), why);
		if (rc == DIRAUTH_ERR_NOMEM || round_monotonic_ms() >= deadline_ms)
			break;
	}
	int bodies_rc = 0;
	if (c->waiting_count) {
		why[0] = 0;
		bodies_rc = fetch_bodies(c, why, sizeof why);
		if (bodies_rc)
			round_log(round, i, rn->epoch, "catching up stopped: %s; it goes on at the next tick",
			          why);
	}
	if (c->alone + c->with_body > 0) {
		round_log(
		    round, i, rn->epoch,
		    "caught up: epochs %llu to %llu stored (%zu with their bodies, %zu headers alone, their "
		    "bodies past the retention window; %zu revocations they list taken, %zu refused) in "
		    "%llu ms",
		    (unsigned long long)c->first_stored, (unsigned long long)c->latest, c->with_body,
		    c->alone, c->revocations, c->revocations_refused,
		    (unsigned long long)(round_monotonic_ms() - started));
		if (c->stored_body_of_newest) {
			struct buffer newest;
			struct store_body_info info;
			buffer_init(&newest);
			if (store_snapshot_get(round->o.store, name, c->latest, &newest, &info) == 0)
				prepared_set_install(round->o.prepared, i, &newest);
			buffer_free(&newest);
		}
		if (round->o.on_published)
			round->o.on_published(round->o.on_published_context, i, c->latest);
	}
	int caught = c->have && c->latest >= c->target;
	if (bodies_rc == DIRAUTH_ERR_NOMEM || (rc == DIRAUTH_ERR_NOMEM && !caught))
		return DIRAUTH_ERR_NOMEM;
	return caught ? 0 : DIRAUTH_ERR_STALE;
}

int round_catch_up(struct round *round, size_t i, uint64_t now, uint64_t deadline_ms)
{
	const struct config *config = round->o.config;
	const char *name = config->namespaces[i].name;
	struct round_namespace *rn = &round->ns[i];
	struct catch_up c = {.round = round, .namespace_index = i, .now = now, .deadline_ms = deadline_ms};
	uint64_t started = round_monotonic_ms();
	int rc = store_snapshot_latest(round->o.store, name, &c.latest);
	if (rc == DIRAUTH_ERR_NOT_FOUND) {
		c.latest = 0;
		rc = 0;
	} else if (rc == 0 && (rc = read_stored(&c, c.latest, &c.latest_held)) == 0) {
		c.have = 1;
	}
	if (rc)
		return rc;
	/* Nothing newer can have been published than the last epoch that has begun, by any clock
	 * within the skew: when that is the latest stored here, no peer need be asked. */
	uint64_t begun = 0;
	if (c.have &&
	    schedule_epoch_of(&config->epoch, now + config->bounds.clock_skew_seconds, &begun) == 0 &&
	    c.latest >= begun)
		return 0;
	pthread_mutex_init(&c.lock, NULL);
	ask_latest(&c);
	if (c.ahead)
		rc = catch_up_from_members_ahead(&c, started);
	else if (c.unanswered) /* behind by the clock, yet nobody ahead: say why */
		round_log(round, i, rn->epoch,
		          "catching up: no member showed a newer snapshot; %d could not be asked (%s)",
		          __builtin_popcount(c.unanswered), c.unanswered_why);
	catch_up_free(&c);
	return rc;
}
