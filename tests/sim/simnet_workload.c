/*
 * simnet_workload.c: what the providers do, and the scenarios of faults (simnet.h).
 *
 * Two providers, enrolled at every node, run the services. Each epoch the workload draws its
 * submissions at moments within the epoch's round: new sequences of services (now and then a new
 * service), health statements on their endpoints, and with the configured chance a revocation of
 * an endpoint (the service's next registration names a new endpoint in its place) or of a whole
 * service (which a provider then replays now and then, at a higher sequence: a node that holds
 * the revocation refuses it, one that does not may take it, and the snapshots must never publish
 * it again). Each submission goes to a subset of the running nodes drawn when it is made, through
 * intake, as a provider's POST would, at that node's clock. A service is registered again before
 * its registration could expire, so that long runs keep their records.
 */
#include "tests/sim/simnet_internal.h"

#include "base/error.h"
#include "schema/health.h"
#include "schema/revocation.h"
#include "server/intake/statements.h"
#include "server/intake/submit.h"

#include <stdlib.h>
#include <string.h>

#define SIM_ENDPOINTS_MAX 2
#define SIM_VALIDITY_S    86400ULL         /* a registration's expires - issued-at */
#define SIM_REFRESH_MS    (6ULL * 3600000) /* registered again after this long */
#define SIM_PROVIDERS     2

struct sim_service {
	uint8_t id[SERVICE_ID_SIZE];
	size_t provider;
	uint64_t sequence;
	size_t endpoint_count;
	uint64_t generation[SIM_ENDPOINTS_MAX]; /* moves on when an endpoint is revoked */
	uint64_t health_sequence[SIM_ENDPOINTS_MAX];
	uint64_t registered_ms;
	int revoked;
};

enum sim_action { SIM_REGISTER, SIM_HEALTH, SIM_REVOKE_ENDPOINT, SIM_REVOKE_SERVICE, SIM_REPLAY };

struct sim_event {
	uint64_t at_ms;
	enum sim_action action;
	size_t service;
	size_t endpoint;
};

struct sim_workload {
	struct sim_key providers[SIM_PROVIDERS];
	uint64_t revocation_sequence[SIM_PROVIDERS];
	struct sim_service *services;
	size_t service_count, service_cap;
	size_t live;              /* services not revoked */
	struct sim_event *events; /* ascending by at_ms from next on */
	size_t event_count, event_cap, next;
	uint64_t planned; /* epochs before this one are planned */
};

const struct note_verifier *sim_workload_provider(const struct simnet *net, size_t p)
{
	return &net->workload->providers[p].verifier;
}

int sim_workload_new(struct simnet *net, struct sim_workload **out)
{
	struct sim_workload *w = calloc(1, sizeof *w);
	char dir[SIM_PATH_MAX + 16];
	if (!w)
		return DIRAUTH_ERR_NOMEM;
	*out = w;
	net->workload = w;
	snprintf(dir, sizeof dir, "%s/providers", net->dir);
	for (size_t p = 0; p < SIM_PROVIDERS; p++) {
		char name[48], file[48];
		snprintf(name, sizeof name, "provider-%c.sim", (char)('a' + p));
		snprintf(file, sizeof file, "provider-%zu.key", p);
		int rc = sim_key_make(net, dir, file, name, "provider", p, &w->providers[p]);
		if (rc)
			return rc;
	}
	w->planned = SIM_START_EPOCH;
	return 0;
}

void sim_workload_free(struct sim_workload *w)
{
	if (!w)
		return;
	for (size_t p = 0; p < SIM_PROVIDERS; p++)
		sim_key_clear(&w->providers[p]);
	free(w->services);
	free(w->events);
	free(w);
}

static struct sim_service *service_add(struct simnet *net)
{
	struct sim_workload *w = net->workload;
	struct sim_service *grown =
	    sim_grow(w->services, &w->service_cap, w->service_count, sizeof *grown, 32);
	if (!grown)
		return NULL;
	w->services = grown;
	size_t index = w->service_count++;
	w->live++;
	struct sim_service *s = &w->services[index];
	memset(s, 0, sizeof *s);
	sim_derive(net->o.seed, "service", index, s->id);
	s->provider = index % SIM_PROVIDERS;
	s->endpoint_count = 1 + (size_t)sim_rng_below(&net->rng, SIM_ENDPOINTS_MAX);
	return s;
}

static void endpoint_id(const struct simnet *net, size_t service, size_t slot, uint64_t generation,
                        uint8_t out[ENDPOINT_ID_SIZE])
{
	sim_derive(net->o.seed, "endpoint", ((uint64_t)service << 24) | ((uint64_t)slot << 20) | generation,
	           out);
}

/* ---- the notes ---- */

/* The note of text (whose encoding returned rc) signed by key, into out; frees text. */
static int sign_text(struct sim_key *key, int rc, struct buffer *text, struct buffer *out)
{
	struct note_signature signature;
	if (rc == 0)
		rc = signer_key_sign(key->key, text->data, text->len, &signature);
	if (rc == 0)
		rc = note_format(text->data, text->len, &signature, 1, out);
	buffer_free(text);
	return rc;
}

static int registration_note(struct simnet *net, size_t index, struct buffer *out)
{
	struct sim_workload *w = net->workload;
	struct sim_service *s = &w->services[index];
	struct registration r;
	struct endpoint_descriptor endpoints[SIM_ENDPOINTS_MAX];
	struct buffer text;
	memset(&r, 0, sizeof r);
	memset(endpoints, 0, sizeof endpoints);
	snprintf(r.namespace_name, sizeof r.namespace_name, "%s", SIMNET_NAMESPACE);
	memcpy(r.service_id, s->id, sizeof r.service_id);
	r.service_class = SERVICE_CLASS_MIX_GATEWAY;
	r.provider = w->providers[s->provider].verifier;
	r.sequence = s->sequence;
	r.issued_at = net->now_ms / 1000;
	r.expires = r.issued_at + SIM_VALIDITY_S;
	r.endpoint_count = s->endpoint_count;
	r.endpoints = endpoints;
	for (size_t e = 0; e < s->endpoint_count; e++) {
		endpoint_id(net, index, e, s->generation[e], endpoints[e].endpoint_id);
		endpoints[e].transport = TRANSPORT_QUIC;
		snprintf(endpoints[e].address, sizeof endpoints[e].address, "s%zu-e%zu-g%llu.sim.example:443",
		         index, e, (unsigned long long)s->generation[e]);
		snprintf(endpoints[e].region, sizeof endpoints[e].region, "eu-west");
		endpoints[e].capacity = CAPACITY_MEDIUM;
		endpoints[e].profile = PROFILE_MODERN;
	}
	registration_sort_endpoints(&r);
	buffer_init(&text);
	return sign_text(&w->providers[s->provider], registration_encode(&r, &text), &text, out);
}

static int health_note(struct simnet *net, size_t index, size_t slot, struct buffer *out)
{
	struct sim_workload *w = net->workload;
	struct sim_service *s = &w->services[index];
	struct health_statement h;
	struct buffer text;
	memset(&h, 0, sizeof h);
	snprintf(h.namespace_name, sizeof h.namespace_name, "%s", SIMNET_NAMESPACE);
	memcpy(h.service_id, s->id, sizeof h.service_id);
	endpoint_id(net, index, slot, s->generation[slot], h.endpoint_id);
	h.signer = HEALTH_SIGNER_PROVIDER;
	h.health_class = (enum health_class)sim_rng_below(&net->rng, HEALTH_CLASS_COUNT);
	h.issued_at = net->now_ms / 1000;
	h.sequence = ++s->health_sequence[slot];
	buffer_init(&text);
	return sign_text(&w->providers[s->provider], health_encode(&h, &text), &text, out);
}

static int revocation_note(struct simnet *net, size_t index, int has_endpoint, size_t slot,
                           struct buffer *out)
{
	struct sim_workload *w = net->workload;
	struct sim_service *s = &w->services[index];
	struct revocation r;
	struct buffer text;
	memset(&r, 0, sizeof r);
	snprintf(r.namespace_name, sizeof r.namespace_name, "%s", SIMNET_NAMESPACE);
	memcpy(r.service_id, s->id, sizeof r.service_id);
	r.has_endpoint = has_endpoint;
	if (has_endpoint)
		endpoint_id(net, index, slot, s->generation[slot], r.endpoint_id);
	r.signer = REVOCATION_SIGNER_PROVIDER;
	r.key = w->providers[s->provider].verifier;
	r.reason = REVOCATION_RETIRED;
	r.revoked_at = net->now_ms / 1000;
	r.sequence = ++w->revocation_sequence[s->provider];
	buffer_init(&text);
	return sign_text(&w->providers[s->provider], revocation_encode(&r, &text), &text, out);
}

/* ---- submitting ---- */

typedef enum api_error (*submit_fn)(const struct submit_context *context, const uint8_t *body, size_t len,
                                    struct submit_result *result);

/* Submits note to the running nodes of mask, each at its clock at the global time, as a POST. */
static size_t submit(struct simnet *net, submit_fn fn, const struct buffer *note, uint32_t mask)
{
	size_t accepted = 0;
	for (size_t i = 0; i < net->node_count; i++) {
		struct sim_node *node = net->nodes[i];
		if (!(mask & ((uint32_t)1 << i)) || !node->up || node->clone)
			continue;
		uint64_t now = node->now_ms, high = node->high_ms;
		node->now_ms = node->high_ms = net->now_ms;
		sim_node_clock(node);
		struct submit_context context = {node->config, node->store, node->signer, node->health,
		                                 node->clock};
		struct submit_result result;
		memset(&result, 0, sizeof result);
		buffer_init(&result.receipt);
		net->stats.submissions++;
		if (fn(&context, note->data, note->len, &result) == API_ERROR_NONE) {
			accepted++;
			net->stats.accepted++;
		}
		buffer_free(&result.receipt);
		node->now_ms = now;
		node->high_ms = high;
		clock_set_ms(node->clock, sim_node_local_ms(node, high > now ? high : now));
	}
	return accepted;
}

/* A drawn subset of the running members: each with even chance, one at least. */
static uint32_t draw_mask(struct simnet *net)
{
	uint32_t mask = 0;
	for (size_t i = 0; i < net->node_count; i++)
		if (sim_rng_below(&net->rng, 2))
			mask |= (uint32_t)1 << i;
	if (!mask)
		mask = (uint32_t)1 << sim_rng_below(&net->rng, net->node_count);
	return mask;
}

static size_t register_service(struct simnet *net, size_t index, uint32_t mask)
{
	struct sim_service *s = &net->workload->services[index];
	struct buffer note;
	buffer_init(&note);
	s->sequence++;
	s->registered_ms = net->now_ms;
	size_t accepted =
	    registration_note(net, index, &note) == 0 ? submit(net, submit_registration, &note, mask) : 0;
	buffer_free(&note);
	return accepted;
}

size_t simnet_register(struct simnet *net, size_t service, uint32_t mask)
{
	if (service >= net->workload->service_count)
		return 0;
	return register_service(net, service, mask);
}

int sim_workload_start(struct simnet *net)
{
	for (size_t i = 0; i < net->o.services; i++) {
		if (!service_add(net))
			return DIRAUTH_ERR_NOMEM;
		if (register_service(net, i, UINT32_MAX) == 0)
			return DIRAUTH_ERR_REFUSED;
	}
	return 0;
}

/* Revokes the service's endpoint slot, or the whole service (endpoint SIZE_MAX), at the nodes of
 * mask: the service's next registration names a new endpoint in the slot's place; a revoked
 * service is replaced by a new one. */
static size_t revoke(struct simnet *net, size_t index, size_t endpoint, uint32_t mask)
{
	struct sim_service *s = &net->workload->services[index];
	struct buffer note;
	size_t accepted = 0;
	buffer_init(&note);
	int whole = endpoint == SIZE_MAX;
	if (revocation_note(net, index, !whole, whole ? 0 : endpoint, &note) == 0)
		accepted = submit(net, submit_revocation, &note, mask);
	buffer_free(&note);
	if (whole) {
		s->revoked = 1;
		net->workload->live--;
		service_add(net); /* another takes its place */
	} else {
		s->generation[endpoint]++;
		s->health_sequence[endpoint] = 0;
	}
	return accepted;
}

/* Whether the workload may revoke the service (endpoint SIZE_MAX) or its endpoint slot now: a
 * published snapshot listed it, unless options.revoke_unpublished. */
static int revocable(struct simnet *net, size_t index, size_t endpoint)
{
	const struct sim_service *s = &net->workload->services[index];
	uint8_t id[ENDPOINT_ID_SIZE];
	if (net->o.revoke_unpublished)
		return 1;
	if (endpoint == SIZE_MAX)
		return sim_check_published(net, s->id, 0) != 0;
	endpoint_id(net, index, endpoint, s->generation[endpoint], id);
	return sim_check_published(net, id, 1) != 0;
}

size_t simnet_revoke(struct simnet *net, size_t service, size_t endpoint, uint32_t mask)
{
	struct sim_workload *w = net->workload;
	if (service >= w->service_count || w->services[service].revoked ||
	    (endpoint != SIZE_MAX && endpoint >= w->services[service].endpoint_count))
		return 0;
	return revoke(net, service, endpoint, mask);
}

static void run_event(struct simnet *net, const struct sim_event *e)
{
	struct sim_workload *w = net->workload;
	struct sim_service *s = &w->services[e->service];
	struct buffer note;
	buffer_init(&note);
	switch (e->action) {
	case SIM_REGISTER:
		if (!s->revoked)
			register_service(net, e->service, draw_mask(net));
		break;
	case SIM_REPLAY:
		register_service(net, e->service, draw_mask(net));
		break;
	case SIM_HEALTH:
		if (!s->revoked && e->endpoint < s->endpoint_count &&
		    health_note(net, e->service, e->endpoint, &note) == 0)
			submit(net, submit_health, &note, draw_mask(net));
		break;
	case SIM_REVOKE_ENDPOINT:
		if (!s->revoked && e->endpoint < s->endpoint_count && revocable(net, e->service, e->endpoint))
			revoke(net, e->service, e->endpoint, draw_mask(net));
		break;
	case SIM_REVOKE_SERVICE:
		if (!s->revoked && revocable(net, e->service, SIZE_MAX))
			revoke(net, e->service, SIZE_MAX, draw_mask(net));
		break;
	}
	buffer_free(&note);
}

static void event_add(struct sim_workload *w, const struct sim_event *e)
{
	if (w->event_count == w->event_cap && w->next > 0) {
		/* Drop what was run, then grow if still full. */
		memmove(w->events, w->events + w->next, (w->event_count - w->next) * sizeof *w->events);
		w->event_count -= w->next;
		w->next = 0;
	}
	struct sim_event *grown = sim_grow(w->events, &w->event_cap, w->event_count, sizeof *grown, 64);
	if (!grown)
		return;
	w->events = grown;
	size_t at = w->event_count;
	while (at > w->next && w->events[at - 1].at_ms > e->at_ms) {
		w->events[at] = w->events[at - 1];
		at--;
	}
	w->events[at] = *e;
	w->event_count++;
}

/* A service of the workload drawn among those not revoked (SIZE_MAX when none). */
static size_t draw_live_service(struct simnet *net)
{
	struct sim_workload *w = net->workload;
	for (int tries = 0; tries < 16 && w->service_count; tries++) {
		size_t index = (size_t)sim_rng_below(&net->rng, w->service_count);
		if (!w->services[index].revoked)
			return index;
	}
	return SIZE_MAX;
}

void sim_workload_plan(struct simnet *net, uint64_t epoch)
{
	struct sim_workload *w = net->workload;
	uint64_t from = sim_vote_at_ms(net, epoch), span = net->schedule.length * 1000;
	if (from < net->now_ms)
		from = net->now_ms;
	struct sim_event e;
	for (size_t r = 0; r < net->o.registrations; r++) {
		e = (struct sim_event){from + sim_rng_below(&net->rng, span), SIM_REGISTER, 0, 0};
		if (sim_rng_below(&net->rng, 16) == 0 && w->live < 2 * net->o.services && service_add(net))
			e.service = w->service_count - 1;
		else if ((e.service = draw_live_service(net)) == SIZE_MAX)
			continue;
		event_add(w, &e);
	}
	/* Registered again before they could expire. */
	for (size_t i = 0; i < w->service_count; i++)
		if (!w->services[i].revoked && w->services[i].sequence &&
		    net->now_ms > w->services[i].registered_ms + SIM_REFRESH_MS) {
			e = (struct sim_event){from + sim_rng_below(&net->rng, span), SIM_REGISTER, i, 0};
			w->services[i].registered_ms = net->now_ms;
			event_add(w, &e);
		}
	if (!net->o.lifecycle)
		return;
	for (size_t h = 0; h < net->o.health; h++) {
		e = (struct sim_event){from + sim_rng_below(&net->rng, span), SIM_HEALTH, 0, 0};
		if ((e.service = draw_live_service(net)) == SIZE_MAX)
			continue;
		e.endpoint = (size_t)sim_rng_below(&net->rng, w->services[e.service].endpoint_count);
		event_add(w, &e);
	}
	if (sim_rng_permille(&net->rng, net->o.revocation_permille)) {
		e = (struct sim_event){from + sim_rng_below(&net->rng, span),
		                       sim_rng_below(&net->rng, 3) ? SIM_REVOKE_ENDPOINT : SIM_REVOKE_SERVICE,
		                       0, 0};
		if ((e.service = draw_live_service(net)) != SIZE_MAX) {
			e.endpoint = (size_t)sim_rng_below(&net->rng, w->services[e.service].endpoint_count);
			event_add(w, &e);
		}
	}
	/* A revoked service's registration, replayed now and then. */
	if (w->service_count > w->live && sim_rng_below(&net->rng, 4) == 0) {
		e = (struct sim_event){from + sim_rng_below(&net->rng, span), SIM_REPLAY, 0, 0};
		do
			e.service = (size_t)sim_rng_below(&net->rng, w->service_count);
		while (!w->services[e.service].revoked);
		event_add(w, &e);
	}
}

void sim_workload_run(struct simnet *net)
{
	struct sim_workload *w = net->workload;
	while (net->now_ms >= sim_vote_at_ms(net, w->planned)) {
		sim_workload_plan(net, w->planned);
		w->planned++;
	}
	while (w->next < w->event_count && w->events[w->next].at_ms <= net->now_ms) {
		struct sim_event e = w->events[w->next++];
		run_event(net, &e);
	}
}

/* ---- scenarios ---- */

enum sim_fault { SIM_FAULT_LOSS, SIM_FAULT_PARTITION, SIM_FAULT_CRASH, SIM_FAULT_SLOW };

struct sim_fault_event {
	uint64_t at_ms;
	int heal; /* 0: start the fault, 1: end it */
	enum sim_fault kind;
	size_t node;
};

static int fault_event_order(const void *a, const void *b)
{
	const struct sim_fault_event *x = a, *y = b;
	if (x->at_ms != y->at_ms)
		return x->at_ms < y->at_ms ? -1 : 1;
	return x->heal - y->heal;
}

static void heal_all(struct simnet *net)
{
	simnet_heal(net);
	simnet_set_loss(net, 0);
	for (size_t i = 0; i < net->node_count; i++) {
		if (net->nodes[i]->slow_ms)
			simnet_set_slow(net, i, 0);
		if (!net->nodes[i]->up && !net->nodes[i]->retired)
			simnet_restart(net, i);
	}
}

/* The faults of one stretch from from_ms to to_ms, drawn among those the scenario enables. */
static size_t plan_faults(struct simnet *net, const struct simnet_scenario *s, uint64_t from_ms,
                          uint64_t to_ms, struct sim_fault_event *events)
{
	size_t count = 0, n = net->node_count;
	uint64_t span = to_ms - from_ms;
	int enabled[4] = {s->loss_permille > 0, s->partitions, s->crashes, s->slow}, chosen[4] = {0};
	int any = 0;
	for (int k = 0; k < 4; k++)
		any |= enabled[k];
	if (!any)
		return 0;
	while (!(chosen[0] || chosen[1] || chosen[2] || chosen[3]))
		for (int k = 0; k < 4; k++)
			chosen[k] = enabled[k] && sim_rng_below(&net->rng, 2);
	if (chosen[SIM_FAULT_LOSS]) {
		events[count++] = (struct sim_fault_event){from_ms, 0, SIM_FAULT_LOSS, 0};
		events[count++] = (struct sim_fault_event){to_ms, 1, SIM_FAULT_LOSS, 0};
	}
	if (chosen[SIM_FAULT_PARTITION]) {
		uint64_t at = from_ms + sim_rng_below(&net->rng, span / 2);
		events[count++] = (struct sim_fault_event){at, 0, SIM_FAULT_PARTITION, 0};
		events[count++] = (struct sim_fault_event){to_ms, 1, SIM_FAULT_PARTITION, 0};
	}
	if (chosen[SIM_FAULT_CRASH]) {
		size_t max_down = s->max_down ? s->max_down : net->o.members - net->o.threshold;
		size_t down = 1 + (size_t)sim_rng_below(&net->rng, max_down ? max_down : 1);
		uint32_t picked = 0;
		for (size_t d = 0; d < down; d++) {
			size_t node = (size_t)sim_rng_below(&net->rng, n);
			if (picked & (1u << node))
				continue;
			picked |= 1u << node;
			uint64_t crash = from_ms + sim_rng_below(&net->rng, span / 2);
			uint64_t restart = crash + sim_rng_below(&net->rng, to_ms - crash + 1);
			events[count++] = (struct sim_fault_event){crash, 0, SIM_FAULT_CRASH, node};
			events[count++] = (struct sim_fault_event){restart, 1, SIM_FAULT_CRASH, node};
		}
	}
	if (chosen[SIM_FAULT_SLOW]) {
		size_t node = (size_t)sim_rng_below(&net->rng, n);
		events[count++] = (struct sim_fault_event){from_ms, 0, SIM_FAULT_SLOW, node};
		events[count++] = (struct sim_fault_event){to_ms, 1, SIM_FAULT_SLOW, node};
	}
	qsort(events, count, sizeof *events, fault_event_order);
	return count;
}

static void apply_fault(struct simnet *net, const struct simnet_scenario *s, const struct sim_fault_event *e)
{
	switch (e->kind) {
	case SIM_FAULT_LOSS:
		simnet_set_loss(net, e->heal ? 0 : s->loss_permille);
		break;
	case SIM_FAULT_PARTITION:
		if (e->heal) {
			simnet_heal(net);
		} else {
			unsigned groups[SIMNET_MAX_NODES];
			unsigned seen[2] = {0, 0};
			for (size_t i = 0; i < net->node_count; i++) {
				groups[i] = (unsigned)sim_rng_below(&net->rng, 2);
				seen[groups[i]]++;
			}
			if (!seen[0] || !seen[1])
				groups[sim_rng_below(&net->rng, net->node_count)] ^= 1;
			simnet_partition(net, groups, net->node_count);
		}
		break;
	case SIM_FAULT_CRASH:
		if (e->heal)
			simnet_restart(net, e->node);
		else
			simnet_crash(net, e->node);
		break;
	case SIM_FAULT_SLOW:
		simnet_set_slow(net, e->node, e->heal ? 0 : 200 + (uint32_t)sim_rng_below(&net->rng, 1301));
		break;
	}
}

int simnet_run_scenario(struct simnet *net, const struct simnet_scenario *s)
{
	uint64_t tail = s->quiet_tail ? s->quiet_tail : 3;
	uint64_t epoch = simnet_epoch_now(net), last = epoch + s->epochs;
	struct sim_fault_event events[4 + 2 * SIMNET_MAX_NODES + 4];
	int rc = 0;
	while (rc == 0 && epoch + tail < last) {
		epoch += 2 + sim_rng_below(&net->rng, 3);
		if (epoch + tail >= last)
			break;
		rc = simnet_run_until(net, sim_check_ms(net, epoch));
		uint64_t stretch = 2 + sim_rng_below(&net->rng, 5);
		if (epoch + stretch + tail > last)
			stretch = last - tail - epoch;
		if (rc || stretch == 0)
			break;
		uint64_t from_ms = net->now_ms, to_ms = sim_check_ms(net, epoch + stretch);
		size_t count = plan_faults(net, s, from_ms, to_ms, events);
		sim_log(net, "faults from epoch %llu to %llu: %zu events", (unsigned long long)epoch,
		        (unsigned long long)(epoch + stretch), count);
		for (size_t i = 0; rc == 0 && i < count; i++) {
			rc = simnet_run_until(net, events[i].at_ms);
			apply_fault(net, s, &events[i]);
		}
		if (rc == 0)
			rc = simnet_run_until(net, to_ms);
		heal_all(net);
		epoch += stretch;
	}
	heal_all(net);
	if (rc == 0)
		rc = simnet_run_until(net, sim_check_ms(net, last));
	simnet_check_converged(net);
	return rc;
}
