/*
 * simnet.h: the round of n authorities in one process, over an in-memory network, on simulated
 * clocks, driven by a seed (STYLE.md: FoundationDB's simulation, TigerBeetle's VOPR). Hundreds of
 * epochs at 200 ms round trips run in seconds, and a run that breaks an invariant replays exactly
 * from its seed.
 *
 * What runs is production code. Each simulated authority (a "node") has its own configuration
 * (YAML text parsed by config_parse), a real store in its own directory (under /dev/shm when it
 * exists: fsync is free there), a real dirauth-signer service and listener on a UNIX socket
 * (keys, certificate and ledger of its own), the signer client and health tracker, an authority
 * set, a peer client, a prepared set and a round (round_create). Only two things are the
 * harness's: the clock each node reads (clock_open_manual, set by the harness) and the transport
 * of each peer client (peer_client.h, struct peer_transport), which hands every call to the
 * target node in this thread by calling the functions the HTTP handlers call (round_accept_vote,
 * round_vote_get, round_accept_signature, round_signatures_get, readpath_notes_answer,
 * readpath_headers_from, the store's headers, bodies, registrations and statements, the signer's
 * certificates through authority_set_bundle) and fills the answer as the HTTP client would,
 * status and error code (server/api/api_error.h) included. Providers' submissions go through
 * intake (submit_registration, submit_revocation, submit_health) as a POST would, to a seeded
 * subset of the nodes.
 *
 * Time. The simulation keeps one global time in milliseconds. Each node's clock reads
 * (global + its skew) / 1000 seconds, the skew drawn once per node within options.skew_ms (which
 * the configuration's clock skew bound must exceed twice over). A step advances the global time
 * by options.step_ms and ticks every running node in an order drawn from the seed: its clock is
 * set and round_tick runs, as dirauthd's scheduler does every 200 ms. A node's tick takes the
 * simulated time its peer calls take: the node's own time runs on from the step's time as each
 * exchange is charged to it, its clock follows, and a node still busy when the next step comes
 * (a catch-up of many requests, a call waiting for its timeout) is not ticked again until its time
 * is reached. So a round that does not fit its window fails as it would in production.
 *
 * The network. A call from A to B takes one way delay_ms plus a jitter drawn in [0, jitter_ms],
 * plus its body's bytes at bandwidth_mbit, plus a slow member's extra delay. The request reaches B
 * at A's time plus that delay: B handles it then, its clock set to that moment for the handling
 * (calls B makes while handling it are charged to the handling). The answer's way back is
 * charged the same way, and A's time moves to its arrival. A broadcast (peers_broadcast,
 * peers_call_each) runs member after member in A's thread, but the transport is told which calls
 * stand for calls made at once (peer_transport.broadcast): each member's exchange starts at the
 * broadcast's start, and A's time moves to the end of the longest. Each call is bounded as the peer
 * client bounds it: by authorities.timeout_seconds from its start and by its deadline_ms, which the
 * round computes on its clock's monotonic scale (round_deadline_ms: now + the seconds left on its
 * clock; clock_monotonic_ms), for a node's manual clock its own time in milliseconds. An exchange
 * that does not end by then is PEER_TRANSPORT_TIMEOUT, charged the time it waited (a request that
 * arrived was still handled). Transport failures and 5xx answers are retried authorities.retries
 * times after a jittered backoff drawn from the seed, within the same bound, as the peer client
 * does.
 *
 * Faults, each chosen by the seed in a scenario (simnet_run_scenario) or set by a test:
 *   - loss: each attempt is lost with the given probability: the connection is cut
 *     (PEER_TRANSPORT_UNREACHABLE) after the round trip, the request lost on the way there or the
 *     answer on the way back (then the target did handle it);
 *   - partitions: nodes in different groups cannot reach each other: an attempt waits for
 *     authorities.connect_timeout_seconds (or what is left of its bound) and times out;
 *   - crashes: a crashed node is neither ticked nor answers (a connection to it is refused after
 *     a round trip); its round, peer client, authority set, prepared set, store and signer are
 *     closed. A restart opens them again and creates a new round: everything is re-derived from
 *     the store, as after a real restart;
 *   - clock skew, drawn per node within options.skew_ms;
 *   - a slow member: extra delay on every way to and from one node.
 * The store's committer threads and the signer's listener threads are the only other threads;
 * every call waits for them, so a run is a function of its seed: two runs of one seed store the
 * same header notes, byte for byte (every key is derived from the seed, and Ed25519 signatures
 * are deterministic).
 *
 * Invariants, checked after every epoch (simnet_run_until runs the check at each epoch's start
 * plus a sixth of an epoch, once every node had the time to publish), over every running node's
 * store, each broken one recorded as a struct simnet_violation (data, not an abort), so that a
 * test can assert that one holds as well as that a sabotage is found:
 *   (a) SIMNET_SIGNATURES: no two different header texts of one (origin, epoch) are each signed
 *       by k distinct members, counting every signature any node holds over each text: the signed
 *       header notes it stores, the members' signatures it keeps for the round, and the evidence
 *       it keeps, each verified against the member's signing key;
 *   (b) SIMNET_VOTES: every record of a published body is one that k counting votes hold: of the
 *       votes of that epoch held anywhere whose previous is the header's, at least k members' list
 *       the service at a sequence at least the published one, and one lists exactly that
 *       (sequence, digest) (consensus/consensus.md, rule (d)); every health entry, a statement on
 *       its endpoint in k counting votes, this one in one of them. Checked when a text is first
 *       seen with its body; an epoch whose votes retention removed everywhere before that is
 *       counted as unchecked (simnet_statistics.unchecked_votes), not as a violation;
 *   (c) SIMNET_REVOCATION: once a published snapshot lists a revocation (from the epoch of the
 *       first that does), no published snapshot of that epoch or later, at any node, holds a record
 *       of that service, or naming that endpoint;
 *   (d) SIMNET_AGREEMENT: no two nodes ever store different header texts for one epoch; and
 *       SIMNET_CONVERGENCE (simnet_check_converged, run after a quiet stretch): every running node
 *       stores the same epochs with the same header texts: an epoch that fails, fails everywhere;
 *   SIMNET_LIVENESS: an epoch whose round ran with every node up and no fault since the round
 *       before it (the "quiet" epochs) is published by every node by the time of its check.
 *
 * Replaying. Everything is drawn from one generator seeded by options.seed (xoshiro256**, seeded
 * through splitmix64); the tests read the seed from SIMNET_SEED when it is set and print the
 * line that replays a failing seed. SIMNET_KEEP=1 (or options.keep) keeps the run's directory:
 * each node's round log is n<i>/dirauthd.log, and the harness's own lines go to options.log.
 *
 * Caveats:
 *   - Every function must be called from the thread that created the simulation.
 *   - A node's round is ticked for the namespace "mix" only (the one namespace configured).
 *   - Simulated time is not real time. The round still measures the time its steps take, and
 *     bounds a few loops of requests, on the real monotonic clock, which in a simulation never
 *     reaches a deadline: those loops end when their requests fail, as each does once its
 *     deadline passed in simulated time.
 */
#ifndef DIRAUTH_TESTS_SIM_SIMNET_H
#define DIRAUTH_TESTS_SIM_SIMNET_H

#include "base/buffer.h"
#include "server/config/config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SIMNET_MAX_MEMBERS 8  /* members of the simulated authority set */
#define SIMNET_MAX_NODES   12 /* processes: the members and their clones */
#define SIMNET_NAMESPACE   "mix"
#define SIMNET_ORIGIN      "sim.dirauth.example/mix"
#define SIMNET_SEED_ENV    "SIMNET_SEED"
#define SIMNET_KEEP_ENV    "SIMNET_KEEP"

enum simnet_invariant {
	SIMNET_SIGNATURES,  /* (a) */
	SIMNET_VOTES,       /* (b) */
	SIMNET_REVOCATION,  /* (c) */
	SIMNET_AGREEMENT,   /* (d), at any time */
	SIMNET_CONVERGENCE, /* (d), after a quiet stretch */
	SIMNET_LIVENESS,    /* a quiet epoch not published by every node */
	SIMNET_HARNESS,     /* the harness could not run a node (a store or signer that will not open) */
	SIMNET_INVARIANT_COUNT
};

/* One broken invariant, as data. */
struct simnet_violation {
	enum simnet_invariant invariant;
	uint64_t epoch;
	uint32_t nodes; /* bit per node involved (0 when none in particular) */
	char detail[384];
};

/* "signatures", "votes", "revocation", "agreement", "convergence", "liveness", "harness". */
const char *simnet_invariant_name(enum simnet_invariant invariant);

struct simnet_options {
	uint64_t seed;
	size_t members;              /* n, 2..SIMNET_MAX_MEMBERS */
	size_t threshold;            /* k (what the checker counts too); 0: a majority, n / 2 + 1; one
	                                that is not a majority is configured as n / 2 + 1, for a test's
	                                configure to force */
	uint64_t epoch_seconds;      /* the epoch's length; the phases are the configuration's default */
	uint64_t validity_epochs;    /* snapshots' validity; the body retention is twice it */
	uint32_t step_ms;            /* global time per step */
	uint32_t delay_ms;           /* one way, each way */
	uint32_t jitter_ms;          /* added to each way, drawn in [0, jitter_ms] */
	uint32_t bandwidth_mbit;     /* 0: no transfer time */
	uint32_t skew_ms;            /* each node's clock is off by a drawn amount in [-skew_ms, skew_ms] */
	uint64_t skew_bound_seconds; /* the configuration's bounds.clock_skew_seconds */
	int lifecycle;               /* 1: the namespace is configured "lifecycle: true" (method 2) */
	/* The workload, per epoch, at moments drawn within it: registrations (a new sequence of a
	 * service, sometimes a new service), health statements, and with the given chance a
	 * revocation (of an endpoint, or of a whole service, whose registration is then replayed now
	 * and then: the nodes that hold the revocation refuse it). Each submission goes to a drawn
	 * subset of the running nodes. */
	size_t services;              /* services registered at the start */
	size_t registrations;         /* per epoch */
	size_t health;                /* per epoch (lifecycle only) */
	unsigned revocation_permille; /* per epoch (lifecycle only) */
	/* 0: the workload revokes only services and endpoints a published snapshot has listed; 1: also
	 * those it registered at a few nodes only and no snapshot listed yet, which the others take
	 * from the first's vote (README.md, "Found", 2). */
	int revoke_unpublished;
	const char *dir; /* the run's parent directory; NULL: /dev/shm, else $TMPDIR, else /tmp */
	FILE *log;       /* the harness's lines (faults, restarts, violations); NULL: none */
	int keep;        /* keep the run's directory (also SIMNET_KEEP=1) */
	/* Called with each node's configuration once it is parsed, before anything is opened: how a
	 * test breaks a rule on purpose (a threshold the parser refuses). NULL: nothing. */
	void (*configure)(void *context, size_t node, struct config *config);
	void *configure_context;
};

/* The defaults: 5 members, k = 3, 60-second epochs valid for 3, 250 ms steps, 100 ms one way with
 * 20 ms of jitter at 100 Mbit/s, skews within 2 s and a bound of 5 s, the lifecycle, 8 services,
 * 2 registrations, 3 health statements and a revocation in 150 epochs out of 1000; seed 1. */
void simnet_options_init(struct simnet_options *options);

struct simnet;
struct round;

/* Lays out and starts a simulation of options->members nodes at the global time of the first
 * epoch's start minus a few seconds, and registers the initial services. *out gets it (NULL on
 * failure); why (capacity cap, may be NULL) says what failed. Returns 0, DIRAUTH_ERR_CONFIG (options
 * out of range), DIRAUTH_ERR_IO (the directory), DIRAUTH_ERR_NOMEM, or the error of the piece that
 * would not open. */
int simnet_create(const struct simnet_options *options, struct simnet **out, char *why, size_t cap);

/* Stops every node and removes the run's directory (unless kept). Accepts NULL. */
void simnet_free(struct simnet *net);

/* The run's directory (its nodes are n0, n1, ...). */
const char *simnet_dir(const struct simnet *net);

/* The global simulated time in milliseconds (unix time × 1000). */
uint64_t simnet_now_ms(const struct simnet *net);

/* The global time at which epoch starts (its valid-after), in milliseconds. */
uint64_t simnet_epoch_start_ms(const struct simnet *net, uint64_t epoch);

/* Global milliseconds of epoch's cut-off (vote_at: its start less prepare_seconds). */
uint64_t simnet_vote_at_ms(const struct simnet *net, uint64_t epoch);

/* The epoch whose round is running at the global time: E from vote_at(E) until vote_at(E + 1). */
uint64_t simnet_epoch_now(const struct simnet *net);

/* Runs steps until the global time reaches until_ms, applying the workload and running the
 * checks on the way. Returns 0, or the error of a node that could not be ticked or restarted (also
 * recorded as a SIMNET_HARNESS violation). */
int simnet_run_until(struct simnet *net, uint64_t until_ms);

/* Runs until the check of the epoch count epochs after the current one has run. */
int simnet_run_epochs(struct simnet *net, uint64_t count);

/* Faults. A node index is below simnet_node_count. */
size_t simnet_node_count(const struct simnet *net);
void simnet_set_loss(struct simnet *net, unsigned permille);
/* group[i] is node i's group (count entries, one per node); nodes of different groups cannot
 * reach each other until simnet_heal. */
void simnet_partition(struct simnet *net, const unsigned *group, size_t count);
void simnet_heal(struct simnet *net);

/* Cuts (cut 1) or restores (0) the one direction of the link from node from to node to: calls
 * from from to to time out as across a partition, calls the other way pass. simnet_heal restores
 * every link. */
void simnet_cut(struct simnet *net, size_t from, size_t to, int cut);
/* Cuts the link from node from to node to for every peer operation but those of passes (bit o for
 * enum peer_operation o, server/peers/peer_client.h): a member that can push its vote and its
 * signature to another and do nothing else there. simnet_cut(..., 0) or simnet_heal restores it. */
void simnet_cut_except(struct simnet *net, size_t from, size_t to, uint32_t passes);
void simnet_set_slow(struct simnet *net, size_t node, uint32_t extra_ms);
/* Crash: the node stops (nothing of it is kept in memory); restart: it opens again from its store.
 * Both return 0 or the error of a piece that would not close or open. */
int simnet_crash(struct simnet *net, size_t node);
int simnet_restart(struct simnet *net, size_t node);
bool simnet_node_up(const struct simnet *net, size_t node);

/* A hot copy of the node's store (store_backup) under the run's directory, named name; restoring
 * it crashes the node, puts the copy in place of its store, and restarts it: an operator restoring
 * a backup. Return 0 or the store's errors. */
int simnet_backup(struct simnet *net, size_t node, const char *name);
int simnet_restore(struct simnet *net, size_t node, const char *name);

/* A second process running as node's member: a copy of its store, its keys and configuration,
 * a signer of its own with a fresh ledger (an operator who started a restored machine beside the
 * original). Its index is *clone. A call to the member goes to whichever of the two is in the
 * caller's partition group (the original when both or neither are). simnet_crash stops it for
 * good. Returns 0, DIRAUTH_ERR_BOUNDS (no room for another node) or the errors of opening it. */
int simnet_clone(struct simnet *net, size_t node, size_t *clone);

/* What the workload submits, by hand, to the running nodes of mask (bit per node): a new
 * registration of service (its next sequence; a revoked service's too: a replay); a revocation of
 * the service's endpoint slot, or of the whole service with SIZE_MAX. Each returns how many nodes
 * accepted it. The services are numbered from 0 in the order the workload made them (the first
 * options.services at the start). */
size_t simnet_register(struct simnet *net, size_t service, uint32_t mask);
size_t simnet_revoke(struct simnet *net, size_t service, size_t endpoint, uint32_t mask);

/* A scenario: quiet stretches of 2 to 4 epochs and stretches of faults of 2 to 6 epochs, in turns,
 * each fault chosen by the seed among those enabled, then a quiet tail and the convergence check. */
struct simnet_scenario {
	uint64_t epochs;        /* in all, the quiet tail included */
	unsigned loss_permille; /* loss within a stretch of faults that has loss (0: none) */
	int partitions;         /* may partition the nodes into two groups */
	int crashes;            /* may crash and restart nodes */
	size_t max_down;        /* nodes down at once, at most; 0: n - k */
	int slow;               /* may make one member slow (200 ms to 1.5 s more each way) */
	uint64_t quiet_tail;    /* quiet epochs at the end; 0: 3 */
};

/* Runs the scenario from now on. Returns as simnet_run_until. */
int simnet_run_scenario(struct simnet *net, const struct simnet_scenario *scenario);

/* (d), the eventual statement: every running node stores the same epochs with the same header
 * texts (clones left out). Records a SIMNET_CONVERGENCE violation if not; returns how many it
 * recorded (0 or 1). */
size_t simnet_check_converged(struct simnet *net);

/* The violations recorded so far, in the order found. */
size_t simnet_violation_count(const struct simnet *net);
const struct simnet_violation *simnet_violation(const struct simnet *net, size_t index);
/* How many of the violations are of invariant. */
size_t simnet_violations_of(const struct simnet *net, enum simnet_invariant invariant);

/* 1 when a header of epoch stored by a running node carries a valid signature by member's
 * signing key, 0 when a stored header does not, -1 when no running node stores epoch. */
int simnet_signed_by(struct simnet *net, uint64_t epoch, size_t member);

/* The latest epoch stored by node (0 and DIRAUTH_ERR_NOT_FOUND when none, or the node is down). */
int simnet_latest(struct simnet *net, size_t node, uint64_t *epoch);

/* Appends to note the signed header note node stores for epoch (its snapshot, as the read path
 * serves it). Returns 0, DIRAUTH_ERR_NOT_FOUND (none stored, or the node is down), or the store's
 * errors. */
int simnet_stored_header(struct simnet *net, size_t node, uint64_t epoch, struct buffer *note);

/* Member m's name in the authority set (its votes' authority, its signature lines' key name). */
const char *simnet_member_name(const struct simnet *net, size_t member);

/* Node's round, for a test that calls what the HTTP handlers call (round_accept_vote,
 * round_vote_get, round_evidence_get, round_status_get, ...) as a peer's request arriving now
 * would: the node's clock is first brought to the global time (never back). NULL when the node is
 * down. The round is the node's: valid until the node crashes or the run is freed; call it from
 * the simulation's thread only, between runs. */
struct round *simnet_round(struct simnet *net, size_t node);

/* SHA-256 over every running node's stored header notes, by node and epoch: what two runs of one
 * seed must agree on. */
int simnet_history_digest(struct simnet *net, uint8_t out[32]);

struct simnet_statistics {
	uint64_t steps, ticks, checks;
	uint64_t epochs_published; /* distinct epochs stored by some node */
	uint64_t epochs_checked;   /* epochs whose check ran */
	uint64_t epochs_quiet;     /* of them, quiet ones (liveness judged) */
	uint64_t calls, attempts, lost, timeouts, refused, partitioned;
	uint64_t bytes; /* request and answer bodies carried */
	uint64_t submissions, accepted;
	uint64_t crashes, restarts;
	uint64_t bodies_checked;     /* published texts whose body (b) and (c) judged */
	uint64_t unchecked_votes;    /* of them, those (b) could not judge: their votes were gone */
	uint64_t revocations_listed; /* distinct targets a published snapshot listed as revoked */
	uint64_t simulated_ms;       /* global time run since the start */
};

void simnet_statistics_get(const struct simnet *net, struct simnet_statistics *out);

/* Writes one line per violation to out, each "<invariant> epoch <E> nodes <list>: <detail>". */
void simnet_violations_print(const struct simnet *net, FILE *out);

#endif
