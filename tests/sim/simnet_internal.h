/*
 * simnet_internal.h: what the simulation's files share: the generator, the nodes, the network's
 * state, and the entry points of each file (simnet.c: nodes and time; simnet_network.c: the
 * transport; simnet_check.c: the invariants; simnet_workload.c: providers and scenarios).
 */
#ifndef DIRAUTH_TESTS_SIM_SIMNET_INTERNAL_H
#define DIRAUTH_TESTS_SIM_SIMNET_INTERNAL_H

#include "tests/sim/simnet.h"

#include "clock/clock.h"
#include "schema/note.h"
#include "server/peers/authority_set.h"
#include "server/peers/peer_client.h"
#include "server/readpath/prepared.h"
#include "server/round/round.h"
#include "server/signing/signer_client.h"
#include "server/signing/signer_health.h"
#include "server/store/store.h"
#include "signer/key.h"
#include "signer/listener.h"
#include "signer/service.h"

#include <limits.h>

#define SIM_PATH_MAX    512
#define SIM_LANES_MAX   8
#define SIM_START_EPOCH 100 /* the first epoch simulated: genesis lies this far before */

/* xoshiro256**, seeded through splitmix64: the one source of every choice. */
struct sim_rng {
	uint64_t s[4];
};

void sim_rng_seed(struct sim_rng *rng, uint64_t seed);
uint64_t sim_rng_next(struct sim_rng *rng);
/* Uniform in [0, bound) (0 for a bound of 0). */
uint64_t sim_rng_below(struct sim_rng *rng, uint64_t bound);
/* 1 with probability permille / 1000. */
int sim_rng_permille(struct sim_rng *rng, unsigned permille);

/* A key derived from the seed, written as a signer key file and loaded from it. */
struct sim_key {
	struct signer_key *key; /* owned */
	struct note_verifier verifier;
};

/* A broadcast in progress at a node: each member's exchange starts at t0; end is the latest end. */
struct sim_lane {
	uint64_t t0, end;
};

struct sim_node {
	struct simnet *net;
	size_t index;  /* in net->nodes */
	size_t member; /* the member it runs as */
	int clone;     /* a second process of member's */
	int up;
	int retired; /* a stopped clone: never restarted */
	char dir[SIM_PATH_MAX];
	char data_dir[SIM_PATH_MAX];
	char socket_path[SIM_PATH_MAX];
	char key_path[SIM_PATH_MAX];
	char certificate_path[SIM_PATH_MAX];
	char ledger_path[SIM_PATH_MAX];
	struct config *config; /* parsed once, kept over restarts */
	/* Time: the node's thread's time on the global scale, and its clock's offset. */
	uint64_t now_ms;
	uint64_t high_ms; /* the latest time this context reached (the clock never goes back in it) */
	int64_t skew_ms;
	uint32_t slow_ms;
	unsigned group;
	struct clock *clock; /* manual; also the signer's */
	struct sim_lane lanes[SIM_LANES_MAX];
	size_t lane_depth;
	/* The pieces, while up. */
	FILE *log;
	FILE *audit;
	struct signer_service *signer_service;
	struct signer_listener *listener;
	struct signer_client *signer;
	struct signer_health *health;
	struct store *store;
	struct prepared_set *prepared;
	struct peer_transport transport;
	struct peer_client *peers;
	struct authority_set *set;
	struct round *round;
	/* The checker's cursor: the first epoch of this node's headers not yet looked at. */
	uint64_t scan_from;
};

struct sim_check;
struct sim_workload;

struct simnet {
	struct simnet_options o;
	struct sim_rng rng;
	char dir[SIM_PATH_MAX];
	int keep;
	uint64_t now_ms;   /* global */
	uint64_t start_ms; /* the global time the run began */
	struct epoch_schedule schedule;
	size_t node_count;
	struct sim_node *nodes[SIMNET_MAX_NODES];
	struct sim_key identity[SIMNET_MAX_MEMBERS], signing[SIMNET_MAX_MEMBERS];
	char member_name[SIMNET_MAX_MEMBERS][NOTE_NAME_MAX + 1];
	/* The network. */
	unsigned loss_permille;
	int partitioned;
	uint32_t cut[SIMNET_MAX_NODES]; /* bit t of cut[f]: calls from node f to node t are cut */
	/* Of a cut link, the operations that still pass: bit o for enum peer_operation o. */
	uint32_t cut_passes[SIMNET_MAX_NODES][SIMNET_MAX_NODES];
	uint64_t last_fault_ms; /* the latest global time a fault was active (liveness) */
	uint64_t next_check_epoch;
	struct sim_check *check;
	struct sim_workload *workload;
	struct simnet_statistics stats;
	struct simnet_violation *violations;
	size_t violation_count, violation_cap;
};

/* simnet.c */
/* items (count elements of size bytes, *cap of them allocated) with room for one more: as it is,
 * or reallocated twice as large (first elements at first), *cap updated; NULL when memory ran
 * out (items is then still valid, *cap unchanged). */
void *sim_grow(void *items, size_t *cap, size_t count, size_t size, size_t first);
void sim_log(struct simnet *net, const char *format, ...) __attribute__((format(printf, 2, 3)));
void sim_violation(struct simnet *net, enum simnet_invariant invariant, uint64_t epoch, uint32_t nodes,
                   const char *format, ...) __attribute__((format(printf, 5, 6)));
/* Sets node's clock from its time (never back within one context). */
void sim_node_clock(struct sim_node *node);
/* The node's clock at global time ms: in milliseconds (its monotonic scale too), in seconds. */
uint64_t sim_node_local_ms(const struct sim_node *node, uint64_t ms);
uint64_t sim_node_seconds(const struct sim_node *node, uint64_t ms);
/* Keys derived from the seed: label and index name the key's use. */
void sim_derive(uint64_t seed, const char *label, uint64_t index, uint8_t out[32]);
int sim_key_make(struct simnet *net, const char *dir, const char *file, const char *name, const char *label,
                 uint64_t index, struct sim_key *out);
void sim_key_clear(struct sim_key *key);
/* The global ms of epoch's vote_at, and of its check (its start plus a sixth of an epoch). */
uint64_t sim_vote_at_ms(const struct simnet *net, uint64_t epoch);
uint64_t sim_check_ms(const struct simnet *net, uint64_t epoch);

/* simnet_network.c */
int sim_transport_call(void *context, size_t member, const struct peer_call *call,
                       struct peer_answer *answer);
void sim_transport_broadcast(void *context, enum peer_transport_event event, size_t member);

/* simnet_check.c */
int sim_check_new(struct sim_check **out);
void sim_check_free(struct sim_check *check);
/* Checks the stores after epoch's publication (and liveness of epoch). */
void sim_check_epoch(struct simnet *net, uint64_t epoch);
/* Forgets node's cursor (its store was replaced). */
void sim_check_reset_node(struct simnet *net, size_t node);
/* The latest epoch whose published body holds a record of the service (endpoint 0) or naming the
 * endpoint (endpoint 1) with this id; 0 when none has been seen. */
uint64_t sim_check_published(const struct simnet *net, const uint8_t id[32], int endpoint);

/* simnet_workload.c */
int sim_workload_new(struct simnet *net, struct sim_workload **out);
void sim_workload_free(struct sim_workload *workload);
/* The initial registrations, to every node. */
int sim_workload_start(struct simnet *net);
/* Draws the submissions of epoch, at moments within it. */
void sim_workload_plan(struct simnet *net, uint64_t epoch);
/* Submits what is due by the global time. */
void sim_workload_run(struct simnet *net);
/* Provider p's key (p < 2), enrolled in every node's configuration. */
const struct note_verifier *sim_workload_provider(const struct simnet *net, size_t p);

#endif
