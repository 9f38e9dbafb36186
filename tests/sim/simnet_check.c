/*
 * simnet_check.c: the invariants of simnet.h, judged from what the nodes' stores hold.
 *
 * The checker keeps, per epoch, every header text it has seen (by SHA-256 of the text), the
 * members whose valid signature over it some node holds, and the nodes that store it as
 * published; per revoked target, the first epoch that listed it; per service and endpoint, the
 * latest epoch that published a record of it. It reads each node's stores after each epoch: the
 * headers stored since the last look (a cursor per node, headers only ever being added above the
 * latest), the round's kept signatures and the evidence of the last few epochs (retention removes
 * them after four), and for a text seen for the first time with its body, that body and the votes
 * of its epoch held anywhere. So it sees what each node stores, not what it was told: a node that
 * holds a signature counts it whatever path brought it.
 */
#include "tests/sim/simnet_internal.h"

#include "consensus/consensus.h"
#include "crypto/crypto.h"
#include "base/error.h"
#include "schema/snapshot.h"
#include "schema/vote.h"
#include "schema/vote_body.h"
#include "schema/vote_envelope.h"
#include "server/store/snapshots.h"
#include "server/store/votes.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SIM_TEXTS_MAX        4 /* distinct header texts kept per epoch (more are one more violation) */
#define SIM_ROUND_KEPT       5 /* epochs back whose signatures and evidence a store may still hold */
#define SIM_VOTES_KEPT       3 /* epochs back whose votes the publishing node still holds for sure */
#define SIM_VOTES_PER_MEMBER 2

struct text_entry {
	uint8_t digest[32]; /* SHA-256 of the header text */
	uint32_t signers;   /* members with a valid signature over it held somewhere */
	uint32_t stored_by; /* nodes that store it as published */
	int examined;       /* (b) and (c) ran over its body */
};

struct epoch_entry {
	size_t count;
	struct text_entry texts[SIM_TEXTS_MAX];
	int overflow; /* more texts than kept */
	int reported_signatures, reported_agreement;
	uint32_t kept_seen[SIMNET_MAX_NODES]; /* per node, members whose kept signature was read */
};

struct revoked {
	uint8_t service_id[SERVICE_ID_SIZE];
	int has_endpoint;
	uint8_t endpoint_id[ENDPOINT_ID_SIZE];
	uint64_t since;
	int reported;
};

struct published {
	uint8_t id[32];
	uint64_t latest;
};

struct sim_check {
	struct epoch_entry *epochs; /* index: epoch - SIM_START_EPOCH */
	size_t epoch_cap;
	uint64_t newest; /* the newest epoch stored anywhere */
	struct revoked *revoked;
	size_t revoked_count, revoked_cap;
	struct published *services, *endpoints;
	size_t service_count, service_cap, endpoint_count, endpoint_cap;
};

int sim_check_new(struct sim_check **out)
{
	*out = calloc(1, sizeof **out);
	return *out ? 0 : DIRAUTH_ERR_NOMEM;
}

void sim_check_free(struct sim_check *check)
{
	if (!check)
		return;
	free(check->epochs);
	free(check->revoked);
	free(check->services);
	free(check->endpoints);
	free(check);
}

static struct epoch_entry *entry_of(struct sim_check *check, uint64_t epoch)
{
	if (epoch < SIM_START_EPOCH || epoch - SIM_START_EPOCH > (1u << 24))
		return NULL;
	size_t index = (size_t)(epoch - SIM_START_EPOCH);
	if (index >= check->epoch_cap) {
		size_t cap = check->epoch_cap ? check->epoch_cap : 256;
		while (cap <= index)
			cap *= 2;
		struct epoch_entry *grown = realloc(check->epochs, cap * sizeof *grown);
		if (!grown)
			return NULL;
		memset(grown + check->epoch_cap, 0, (cap - check->epoch_cap) * sizeof *grown);
		check->epochs = grown;
		check->epoch_cap = cap;
	}
	return &check->epochs[index];
}

static struct text_entry *text_of(struct epoch_entry *entry, const uint8_t digest[32])
{
	for (size_t t = 0; t < entry->count; t++)
		if (memcmp(entry->texts[t].digest, digest, 32) == 0)
			return &entry->texts[t];
	if (entry->count == SIM_TEXTS_MAX) {
		entry->overflow = 1;
		return NULL;
	}
	struct text_entry *t = &entry->texts[entry->count++];
	memset(t, 0, sizeof *t);
	memcpy(t->digest, digest, 32);
	return t;
}

static uint32_t node_bit(size_t node)
{
	return (uint32_t)1 << node;
}

static void hex8(const uint8_t *digest, char out[17])
{
	static const char digits[] = "0123456789abcdef";
	for (int i = 0; i < 8; i++) {
		out[2 * i] = digits[digest[i] >> 4];
		out[2 * i + 1] = digits[digest[i] & 15];
	}
	out[16] = 0;
}

/* Of the members of mask, those whose signing key validly signed note. */
static uint32_t signers_of(struct simnet *net, const struct note *note, uint32_t mask)
{
	uint32_t members = 0;
	for (size_t m = 0; m < net->o.members; m++) {
		uint8_t verified = 0;
		size_t count = 0;
		if ((mask & ((uint32_t)1 << m)) &&
		    note_verify(note, &net->signing[m].verifier, 1, &verified, &count) == 0 && count == 1)
			members |= (uint32_t)1 << m;
	}
	return members;
}

/* (a): two texts of one epoch each signed by k distinct members. */
static void judge_signatures(struct simnet *net, uint64_t epoch, struct epoch_entry *entry)
{
	size_t reaching = 0;
	char names[2][17] = {"", ""};
	uint32_t nodes = 0;
	for (size_t t = 0; t < entry->count; t++) {
		if ((size_t)__builtin_popcount(entry->texts[t].signers) < net->o.threshold)
			continue;
		if (reaching < 2)
			hex8(entry->texts[t].digest, names[reaching]);
		nodes |= entry->texts[t].stored_by;
		reaching++;
	}
	if (reaching >= 2 && !entry->reported_signatures) {
		entry->reported_signatures = 1;
		sim_violation(net, SIMNET_SIGNATURES, epoch, nodes,
		              "%zu different header texts each signed by %zu or more members (%s..., %s...)",
		              reaching, net->o.threshold, names[0], names[1]);
	}
}

/* Takes a signed header note (published, kept for the round, or evidence) into entry of epoch;
 * stored_by is the node storing it as published, or SIZE_MAX. */
static struct text_entry *take_note(struct simnet *net, uint64_t epoch, const uint8_t *bytes, size_t len,
                                    size_t stored_by, uint32_t only_members)
{
	struct note *note = NULL;
	uint8_t digest[32];
	struct epoch_entry *entry = entry_of(net->check, epoch);
	if (!entry || note_parse(bytes, len, &note) != 0)
		return NULL;
	crypto_sha256(note->text, note->text_len, digest);
	struct text_entry *t = text_of(entry, digest);
	if (t) {
		t->signers |= signers_of(net, note, only_members & ~t->signers); /* each member's once */
		if (stored_by != SIZE_MAX) {
			int first = 1;
			for (size_t i = 0; i < entry->count; i++)
				first &= entry->texts[i].stored_by == 0;
			net->stats.epochs_published += (uint64_t)first;
			t->stored_by |= node_bit(stored_by);
		}
	}
	note_free(note);
	if (stored_by != SIZE_MAX) {
		size_t published = 0;
		uint32_t nodes = 0;
		for (size_t i = 0; i < entry->count; i++)
			if (entry->texts[i].stored_by) {
				published++;
				nodes |= entry->texts[i].stored_by;
			}
		if ((published > 1 || entry->overflow) && !entry->reported_agreement) {
			entry->reported_agreement = 1;
			sim_violation(net, SIMNET_AGREEMENT, epoch, nodes,
			              "nodes store %zu different header texts for one epoch", published);
		}
	}
	judge_signatures(net, epoch, entry);
	return t;
}

/* ---- (c) ---- */

static struct published *published_of(struct published **items, size_t *count, size_t *cap,
                                      const uint8_t id[32])
{
	for (size_t i = 0; i < *count; i++)
		if (memcmp((*items)[i].id, id, 32) == 0)
			return &(*items)[i];
	struct published *grown = sim_grow(*items, cap, *count, sizeof *grown, 64);
	if (!grown)
		return NULL;
	*items = grown;
	struct published *p = &(*items)[(*count)++];
	memcpy(p->id, id, 32);
	p->latest = 0;
	return p;
}

static void note_published(struct published **items, size_t *count, size_t *cap, const uint8_t id[32],
                           uint64_t epoch)
{
	struct published *p = published_of(items, count, cap, id);
	if (p && epoch > p->latest)
		p->latest = epoch;
}

static void note_revoked(struct sim_check *check, const struct snapshot_revocation *r)
{
	for (size_t i = 0; i < check->revoked_count; i++) {
		struct revoked *known = &check->revoked[i];
		if (memcmp(known->service_id, r->service_id, 32) == 0 &&
		    known->has_endpoint == r->has_endpoint &&
		    (!r->has_endpoint || memcmp(known->endpoint_id, r->endpoint_id, 32) == 0)) {
			if (r->since < known->since)
				known->since = r->since;
			return;
		}
	}
	struct revoked *grown =
	    sim_grow(check->revoked, &check->revoked_cap, check->revoked_count, sizeof *grown, 32);
	if (!grown)
		return;
	check->revoked = grown;
	struct revoked *known = &check->revoked[check->revoked_count++];
	memset(known, 0, sizeof *known);
	memcpy(known->service_id, r->service_id, 32);
	known->has_endpoint = r->has_endpoint;
	if (r->has_endpoint)
		memcpy(known->endpoint_id, r->endpoint_id, 32);
	known->since = r->since;
}

uint64_t sim_check_published(const struct simnet *net, const uint8_t id[32], int endpoint)
{
	const struct sim_check *c = net->check;
	const struct published *items = endpoint ? c->endpoints : c->services;
	size_t count = endpoint ? c->endpoint_count : c->service_count;
	for (size_t i = 0; i < count; i++)
		if (memcmp(items[i].id, id, 32) == 0)
			return items[i].latest;
	return 0;
}

/* ---- (b) ---- */

struct held_vote {
	size_t member;
	struct vote_body *body;
};

struct held_votes {
	struct held_vote votes[SIMNET_MAX_MEMBERS * SIM_VOTES_PER_MEMBER];
	uint8_t envelope_digest[SIMNET_MAX_MEMBERS * SIM_VOTES_PER_MEMBER][32];
	size_t count;
	uint32_t members;
};

static void held_votes_free(struct held_votes *h)
{
	for (size_t v = 0; v < h->count; v++)
		vote_body_free(h->votes[v].body);
	h->count = 0;
}

/* Every vote of epoch held by a running node whose previous is previous: its counting votes. */
static void gather_votes(struct simnet *net, uint64_t epoch, const uint8_t previous[32], struct held_votes *h)
{
	struct buffer envelope;
	buffer_init(&envelope);
	memset(h, 0, sizeof *h);
	for (size_t i = 0; i < net->node_count; i++) {
		struct sim_node *node = net->nodes[i];
		if (!node->up)
			continue;
		const struct config *config = node->config;
		struct vote_body_limits limits = {
		    config->bounds.records_per_snapshot,
		    config->namespaces[0].lifecycle ? config_max_health(config) : 0,
		    config->namespaces[0].lifecycle ? config->namespaces[0].max_revocations : 0};
		for (size_t m = 0; m < net->o.members; m++) {
			struct vote_envelope parts;
			struct note *note = NULL;
			struct vote vote;
			uint8_t digest[32];
			if (store_vote_get(node->store, SIMNET_NAMESPACE, epoch, (unsigned)m, &envelope) != 0)
				continue;
			crypto_sha256(envelope.data, envelope.len, digest);
			int seen = 0;
			for (size_t v = 0; v < h->count; v++)
				seen |= memcmp(h->envelope_digest[v], digest, 32) == 0;
			if (seen || h->count == sizeof h->votes / sizeof h->votes[0])
				continue;
			struct vote_body *body = NULL;
			if (vote_envelope_parse(envelope.data, envelope.len, envelope.len, &parts) == 0 &&
			    note_parse(parts.note, parts.note_len, &note) == 0 &&
			    vote_parse(note->text, note->text_len, &vote) == 0 && vote.epoch == epoch &&
			    memcmp(vote.previous, previous, 32) == 0 &&
			    consensus_vote_body_load_sections(&vote, parts.body, parts.body_len, &limits,
			                                      &body) == 0) {
				memcpy(h->envelope_digest[h->count], digest, 32);
				h->votes[h->count].member = m;
				h->votes[h->count].body = body;
				h->count++;
				h->members |= (uint32_t)1 << m;
			}
			note_free(note);
		}
	}
	buffer_free(&envelope);
}

static int service_order(const void *service_id, const void *record)
{
	return memcmp(service_id, ((const struct vote_body_record *)record)->service_id, SERVICE_ID_SIZE);
}

/* The record of service_id in a vote body (its records are sorted by service id), or NULL. */
static const struct vote_body_record *vote_record(const struct vote_body *body, const uint8_t service_id[32])
{
	if (body->record_count == 0)
		return NULL;
	return bsearch(service_id, body->records, body->record_count, sizeof *body->records, service_order);
}

/* Rule (d) over the counting votes held anywhere, for each record of a published body. */
static void judge_votes(struct simnet *net, uint64_t epoch, const struct snapshot_header *header,
                        const struct snapshot_body *body, uint32_t nodes)
{
	struct held_votes h;
	gather_votes(net, epoch, header->previous, &h);
	size_t k = net->o.threshold;
	if ((size_t)__builtin_popcount(h.members) < k) {
		if (epoch + SIM_VOTES_KEPT < net->check->newest)
			net->stats.unchecked_votes++; /* retention removed them before the text was seen */
		else
			sim_violation(net, SIMNET_VOTES, epoch, nodes,
			              "published, yet the votes naming its previous held anywhere are those "
			              "of %d members",
			              __builtin_popcount(h.members));
		held_votes_free(&h);
		return;
	}
	for (size_t r = 0; r < body->record_count; r++) {
		const struct snapshot_record *record = &body->records[r];
		uint64_t sequence = 0;
		uint8_t digest[32];
		uint32_t at_least = 0;
		int exact = 0;
		if (registration_note_sequence(record->note, record->note_len, &sequence) != 0)
			sequence = 0;
		crypto_sha256(record->note, record->note_len, digest);
		for (size_t v = 0; v < h.count; v++) {
			const struct vote_body_record *listed =
			    vote_record(h.votes[v].body, record->service_id);
			if (!listed || listed->sequence < sequence)
				continue;
			at_least |= (uint32_t)1 << h.votes[v].member;
			exact |= listed->sequence == sequence &&
			         memcmp(listed->registration_sha256, digest, 32) == 0;
		}
		if ((size_t)__builtin_popcount(at_least) < k || !exact) {
			char service[17];
			hex8(record->service_id, service);
			sim_violation(
			    net, SIMNET_VOTES, epoch, nodes,
			    "service %s... is published at sequence %llu, which %d counting votes hold at "
			    "that sequence or higher%s",
			    service, (unsigned long long)sequence, __builtin_popcount(at_least),
			    exact ? "" : ", and none exactly");
			held_votes_free(&h);
			return;
		}
	}
	/* Method 2's health: an entry needs k counting votes holding a statement on its endpoint, one
	 * of them this very statement. */
	for (size_t e = 0; e < body->health_count; e++) {
		const struct snapshot_health *entry = &body->health[e];
		uint8_t digest[32];
		uint32_t holders = 0;
		int listed = 0;
		crypto_sha256(entry->note, entry->note_len, digest);
		for (size_t v = 0; v < h.count; v++) {
			const struct vote_body *vote = h.votes[v].body;
			for (size_t l = 0; l < vote->health_count; l++) {
				const struct vote_body_health *line = &vote->health[l];
				if (memcmp(line->service_id, entry->service_id, 32) != 0 ||
				    memcmp(line->endpoint_id, entry->endpoint_id, 32) != 0)
					continue;
				holders |= (uint32_t)1 << h.votes[v].member;
				listed |= memcmp(line->statement_sha256, digest, 32) == 0;
			}
		}
		if ((size_t)__builtin_popcount(holders) < k || !listed) {
			char endpoint[17];
			hex8(entry->endpoint_id, endpoint);
			sim_violation(net, SIMNET_VOTES, epoch, nodes,
			              "endpoint %s...'s health is published from a statement %s, %d counting "
			              "votes holding "
			              "one on it",
			              endpoint, listed ? "a vote lists" : "no vote lists",
			              __builtin_popcount(holders));
			break;
		}
	}
	held_votes_free(&h);
}

/* What the counting votes of epoch (those naming previous) list for service, for a violation's
 * sentence: "authority <m> at <sequence>" each, "-" for none. */
static void describe_votes(struct simnet *net, uint64_t epoch, const uint8_t previous[32],
                           const uint8_t service_id[32], char *out, size_t cap)
{
	struct held_votes h;
	size_t len = 0;
	out[0] = 0;
	gather_votes(net, epoch, previous, &h);
	for (size_t v = 0; v < h.count && len < cap; v++) {
		const struct vote_body_record *listed = vote_record(h.votes[v].body, service_id);
		char sequence[24] = "-";
		if (listed)
			snprintf(sequence, sizeof sequence, "%llu", (unsigned long long)listed->sequence);
		len += (size_t)snprintf(out + len, cap - len, "%s%zu:%s", len ? " " : "", h.votes[v].member,
		                        sequence);
	}
	held_votes_free(&h);
}

/* (c), over everything seen: a revoked target published in the epoch of its first listing or
 * later. header and body are the text just examined (epoch's), whose counting votes a violation
 * in that epoch describes; NULL for none. */
static void judge_revocations(struct simnet *net, uint64_t epoch, const struct snapshot_header *header,
                              const struct snapshot_body *body)
{
	struct sim_check *check = net->check;
	for (size_t i = 0; i < check->revoked_count; i++) {
		struct revoked *r = &check->revoked[i];
		if (r->reported)
			continue;
		struct published *p = NULL;
		for (size_t j = 0; !p && !r->has_endpoint && j < check->service_count; j++)
			if (memcmp(check->services[j].id, r->service_id, 32) == 0)
				p = &check->services[j];
		for (size_t j = 0; !p && r->has_endpoint && j < check->endpoint_count; j++)
			if (memcmp(check->endpoints[j].id, r->endpoint_id, 32) == 0)
				p = &check->endpoints[j];
		if (!p || p->latest < r->since)
			continue;
		char service[17], endpoint[17] = "-", votes[160] = "";
		hex8(r->service_id, service);
		if (r->has_endpoint)
			hex8(r->endpoint_id, endpoint);
		uint64_t sequence = 0;
		for (size_t k = 0; header && k < body->record_count; k++)
			if (memcmp(body->records[k].service_id, r->service_id, 32) == 0)
				registration_note_sequence(body->records[k].note, body->records[k].note_len,
				                           &sequence);
		if (header && p->latest == epoch)
			describe_votes(net, epoch, header->previous, r->service_id, votes, sizeof votes);
		r->reported = 1;
		sim_violation(
		    net, SIMNET_REVOCATION, p->latest, 0,
		    "service %s... endpoint %s... revoked from epoch %llu is published in epoch %llu "
		    "(the service at sequence %llu; its counting votes, member:sequence, %s)",
		    service, endpoint, (unsigned long long)r->since, (unsigned long long)p->latest,
		    (unsigned long long)sequence, votes[0] ? votes : "gone");
	}
}

/* (b) and (c) over a published text's body, when node keeps it; 1 when it was examined. */
static int examine(struct simnet *net, struct sim_node *node, uint64_t epoch, const uint8_t *bytes,
                   size_t len, struct text_entry *t)
{
	const struct config *config = node->config;
	struct note *note = NULL;
	struct snapshot_header header;
	struct snapshot_body *body = NULL;
	struct buffer file;
	uint64_t size = 0;
	int fd = -1, examined = 0;
	buffer_init(&file);
	if (note_parse(bytes, len, &note) != 0 ||
	    snapshot_header_parse(note->text, note->text_len, &header) != 0)
		goto done;
	if (store_body_open(node->store, SIMNET_NAMESPACE, epoch, ENCODING_IDENTITY, &fd, &size) != 0 ||
	    buffer_reserve(&file, (size_t)size + 1) != 0)
		goto done;
	while (file.len < size) {
		ssize_t n = read(fd, file.data + file.len, (size_t)size - file.len);
		if (n <= 0)
			goto done;
		file.len += (size_t)n;
	}
	struct snapshot_body_limits limits = {config->bounds.records_per_snapshot, config_max_health(config),
	                                      config->namespaces[0].max_revocations};
	if (snapshot_body_parse_sections(file.data, file.len, &limits, &body) != 0) {
		sim_violation(net, SIMNET_HARNESS, epoch, node_bit(node->index),
		              "a published body does not parse");
		goto done;
	}
	examined = 1;
	net->stats.bodies_checked++;
	for (size_t r = 0; r < body->revocation_count; r++)
		note_revoked(net->check, &body->revocations[r]);
	net->stats.revocations_listed = net->check->revoked_count;
	for (size_t r = 0; r < body->record_count; r++) {
		struct registration registration;
		const struct snapshot_record *record = &body->records[r];
		struct sim_check *c = net->check;
		note_published(&c->services, &c->service_count, &c->service_cap, record->service_id, epoch);
		struct note *parsed = NULL;
		int rc = registration_parse_note(record->note, record->note_len, &registration, &parsed);
		note_free(parsed);
		if (rc != 0)
			continue;
		for (size_t e = 0; e < registration.endpoint_count; e++)
			note_published(&c->endpoints, &c->endpoint_count, &c->endpoint_cap,
			               registration.endpoints[e].endpoint_id, epoch);
		registration_clear(&registration);
	}
	judge_revocations(net, epoch, &header, body);
	judge_votes(net, epoch, &header, body, t->stored_by);
done:
	if (fd >= 0)
		close(fd);
	snapshot_body_free(body);
	buffer_free(&file);
	note_free(note);
	return examined;
}

/* ---- reading the stores ---- */

struct scan {
	struct simnet *net;
	struct sim_node *node;
	uint64_t last;
};

static int scan_header(void *context, uint64_t epoch, const uint8_t *bytes, size_t len)
{
	struct scan *s = context;
	struct text_entry *t = take_note(s->net, epoch, bytes, len, s->node->index, UINT32_MAX);
	if (epoch > s->net->check->newest)
		s->net->check->newest = epoch;
	if (t && !t->examined)
		t->examined = examine(s->net, s->node, epoch, bytes, len, t);
	s->last = epoch;
	return 0;
}

struct evidence_scan {
	struct simnet *net;
};

static int scan_evidence(void *context, const struct store_evidence *e)
{
	struct evidence_scan *s = context;
	if (e->kind != STORE_EVIDENCE_CONFLICTING_HEADERS && e->kind != STORE_EVIDENCE_OTHER_HEADER)
		return 0;
	if (e->member >= s->net->o.members)
		return 0;
	take_note(s->net, e->epoch, e->first, e->first_len, SIZE_MAX, (uint32_t)1 << e->member);
	if (e->second_len)
		take_note(s->net, e->epoch, e->second, e->second_len, SIZE_MAX, (uint32_t)1 << e->member);
	return 0;
}

/* The signatures node keeps for the rounds of the last few epochs. */
static void scan_kept(struct simnet *net, struct sim_node *node, uint64_t epoch)
{
	struct buffer held;
	buffer_init(&held);
	uint64_t from = epoch > SIM_START_EPOCH + SIM_ROUND_KEPT ? epoch - SIM_ROUND_KEPT : SIM_START_EPOCH;
	for (uint64_t e = from; e <= epoch + 1; e++) {
		struct epoch_entry *entry = entry_of(net->check, e);
		uint32_t members = 0;
		if (!entry || store_signatures_held(node->store, SIMNET_NAMESPACE, e, &members) != 0)
			continue;
		for (size_t m = 0; m < net->o.members; m++) {
			uint32_t bit = (uint32_t)1 << m;
			if (!(members & bit) || (entry->kept_seen[node->index] & bit))
				continue;
			entry->kept_seen[node->index] |= bit;
			if (store_signature_get(node->store, SIMNET_NAMESPACE, e, (unsigned)m, &held) == 0)
				take_note(net, e, held.data, held.len, SIZE_MAX, bit);
		}
	}
	buffer_free(&held);
	struct evidence_scan s = {net};
	store_evidence_foreach(node->store, SIMNET_NAMESPACE, from, scan_evidence, &s);
}

/* Liveness: a quiet epoch is stored by every node. */
static void judge_liveness(struct simnet *net, uint64_t epoch)
{
	if (epoch <= SIM_START_EPOCH || net->last_fault_ms >= sim_vote_at_ms(net, epoch - 1))
		return;
	net->stats.epochs_quiet++;
	uint32_t missing = 0;
	struct buffer header;
	buffer_init(&header);
	for (size_t i = 0; i < net->node_count; i++) {
		struct sim_node *node = net->nodes[i];
		if (node->retired)
			continue;
		if (!node->up || store_snapshot_get(node->store, SIMNET_NAMESPACE, epoch, &header, NULL) != 0)
			missing |= node_bit(i);
	}
	buffer_free(&header);
	if (missing)
		sim_violation(
		    net, SIMNET_LIVENESS, epoch, missing,
		    "a quiet epoch (no fault since the round before it) is not published by %d of %zu nodes",
		    __builtin_popcount(missing), net->node_count);
}

void sim_check_epoch(struct simnet *net, uint64_t epoch)
{
	net->stats.checks++;
	net->stats.epochs_checked++;
	for (size_t i = 0; i < net->node_count; i++) {
		struct sim_node *node = net->nodes[i];
		if (!node->up)
			continue;
		struct scan s = {net, node, 0};
		s.last = node->scan_from ? node->scan_from - 1 : 0;
		store_snapshot_foreach(node->store, SIMNET_NAMESPACE, node->scan_from, scan_header, &s);
		if (s.last + 1 > node->scan_from)
			node->scan_from = s.last + 1;
		scan_kept(net, node, epoch);
	}
	judge_liveness(net, epoch);
}

void sim_check_reset_node(struct simnet *net, size_t index)
{
	net->nodes[index]->scan_from = 0;
	for (size_t e = 0; e < net->check->epoch_cap; e++)
		net->check->epochs[e].kept_seen[index] = 0;
}

/* ---- (d), eventually ---- */

struct history {
	uint64_t *epochs;
	uint8_t (*digests)[32];
	size_t count, cap;
};

static int history_visit(void *context, uint64_t epoch, const uint8_t *bytes, size_t len)
{
	struct history *h = context;
	struct note *note = NULL;
	size_t cap = h->cap;
	uint64_t *epochs = sim_grow(h->epochs, &cap, h->count, sizeof *epochs, 256);
	if (!epochs)
		return DIRAUTH_ERR_NOMEM;
	h->epochs = epochs;
	uint8_t(*digests)[32] = sim_grow(h->digests, &h->cap, h->count, sizeof *digests, 256);
	if (!digests)
		return DIRAUTH_ERR_NOMEM;
	h->digests = digests;
	memset(h->digests[h->count], 0, 32);
	if (note_parse(bytes, len, &note) == 0)
		crypto_sha256(note->text, note->text_len, h->digests[h->count]);
	note_free(note);
	h->epochs[h->count++] = epoch;
	return 0;
}

static void history_free(struct history *h)
{
	free(h->epochs);
	free(h->digests);
}

size_t simnet_check_converged(struct simnet *net)
{
	struct history first = {0};
	size_t reference = SIZE_MAX, found = 0;
	for (size_t i = 0; i < net->node_count && !found; i++) {
		struct sim_node *node = net->nodes[i];
		if (!node->up || node->clone)
			continue;
		struct history h = {0};
		store_snapshot_foreach(node->store, SIMNET_NAMESPACE, 0, history_visit, &h);
		if (reference == SIZE_MAX) {
			first = h;
			reference = i;
			continue;
		}
		size_t n = h.count < first.count ? h.count : first.count, at = 0;
		while (at < n && h.epochs[at] == first.epochs[at] &&
		       memcmp(h.digests[at], first.digests[at], 32) == 0)
			at++;
		if (at < n || h.count != first.count) {
			uint64_t epoch = at < h.count       ? h.epochs[at]
			                 : at < first.count ? first.epochs[at]
			                                    : 0;
			sim_violation(net, SIMNET_CONVERGENCE, epoch, node_bit(reference) | node_bit(i),
			              "node %zu stores %zu epochs (latest %llu), node %zu %zu (latest %llu); "
			              "they first differ at "
			              "their %zu-th",
			              reference, first.count,
			              first.count ? (unsigned long long)first.epochs[first.count - 1] : 0ULL,
			              i, h.count, h.count ? (unsigned long long)h.epochs[h.count - 1] : 0ULL,
			              at + 1);
			found = 1;
		}
		history_free(&h);
	}
	history_free(&first);
	return found;
}
