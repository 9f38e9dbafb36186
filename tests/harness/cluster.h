/*
 * cluster.h: n authorities on loopback, each its own dirauthd and dirauth-signer, for the tests of
 * several authorities.
 *
 * cluster_start lays out one temporary directory:
 *
 *   trust-bundle.txt           the mirrors' bundle: the n identity keys and k
 *   providers/provider<p>.key  the provider keys every authority enrolls (0600, for dirauthctl)
 *   a<i>/                      authority i (i from 0): its own run directory
 *     keys/signing.key, log.key, cosignature.key   its signer's keys (fresh, 0600 in 0700); the
 *                              log and cosignature keys are pinned in every configuration
 *     keys/signing.cert        the signing key's certificate, issued by its identity key
 *     dirauthd.yaml, dirauth-signer.yaml, clock, dirauthd.log, dirauth-signer.log
 *     data/, signer-state/, signer.sock
 *   ca.pem                     with tls: the test CA's certificate (test_ca.h), every dirauthd's
 *                              authorities.ca_file
 *   n<i>/                      with tls: authority i's nginx (nginx_front.h): its configuration
 *                              derived from the shipped one, its certificate (tls.pem, tls.key:
 *                              SAN DNS:<its name> and IP:127.0.0.1), its logs
 *
 * Authority i is "authority<i>.dirauth.example"; its identity key exists only in the test's
 * memory (it signs the certificate and nothing else). Every authority has the same authority set
 * (threshold k; members with name, identity verifier and URL) except for the URLs: member j's
 * URL in i's configuration is the fault proxy of the directed link i→j (faultproxy.h), so a test
 * can cut, delay, reset, blackhole or garble any single link, or partition groups. Its own entry
 * is its own address. Requests the test makes (cluster_get, cluster_register, fetch) go to each
 * authority directly, never through a proxy.
 *
 * Links that look like the authorities' real ones (cluster_options.links): every link's proxy is
 * shaped (faultproxy.h) with a one-way delay, a jitter and a bandwidth per direction, and holds
 * enough per connection (bandwidth × delay, or 4 MiB without a bandwidth) that the delay does not
 * cap the throughput below the bandwidth. The modes of cluster_link_set and cluster_partition act
 * on top of the shaping, which stays.
 *
 * With tls, each authority answers its peers as in production: behind its own nginx running the
 * shipped deploy/nginx/dirauthd-proxy.conf (nginx_front.h), which terminates TLS with a
 * certificate of the test's CA and passes the API to its dirauthd. Member j's URL in i's
 * configuration is then https://127.0.0.1:<port of link i→j's proxy>, and that proxy forwards to
 * j's nginx, so every byte between authorities is TLS on a shaped link; each dirauthd verifies
 * its peers against the CA (authorities.ca_file). An authority killed or stopped keeps its nginx
 * (which answers 502 meanwhile). Run as root, nginx's workers run as nobody, and the cluster's
 * directory is made world-readable (0755) for them; the authorities' own directories stay 0700.
 * cluster_impersonate is not available with tls (a stand-in speaks plain HTTP). A test that
 * needs nginx asks cluster_nginx_installed first and skips without it.
 *
 * Time: each authority (dirauthd and its signer) reads its own file clock. The test owns one base
 * time; each clock file holds base + that authority's skew (0 unless cluster_clock_skew). The
 * schedule is one namespace, "mix" (origin dirauth.example/mix), with epochs of epoch_length
 * seconds whose genesis puts the base clock at the start of epoch CLUSTER_FIRST_EPOCH when the
 * cluster starts. cluster_run_to moves the base clock one second at a time with ms_per_second of
 * real time per second, so that what the processes do in real time (peer requests, their
 * timeouts) happens inside the simulated phases, a few times faster than real time.
 *
 * Teardown: cluster_free stops everything and removes the directory. It also happens when a
 * test fails or times out, because Check then ends the test's process without running anything:
 * every daemon is started with PR_SET_PDEATHSIG (it dies with the test's process), and a janitor
 * process, forked at cluster_start and told each pid, kills what is left and removes the
 * directory when the test's process is gone. With DIRAUTH_KEEP_CLUSTER=1 in the environment the
 * directory is kept (its path is printed on stderr at start).
 *
 * Every function aborts the test (ck_abort) when it cannot do what it says, like
 * test_support.h, except those documented to return a status. One test thread uses a cluster.
 */
#ifndef DIRAUTH_TESTS_HARNESS_CLUSTER_H
#define DIRAUTH_TESTS_HARNESS_CLUSTER_H

#include "base/buffer.h"
#include "schema/note.h"
#include "schedule/schedule.h"
#include "schema/snapshot.h"
#include "signer/key.h"
#include "tests/harness/faultproxy.h"
#include "tests/support/test_support.h"

#include <stddef.h>
#include <stdint.h>

#define CLUSTER_MAX_AUTHORITIES 9
#define CLUSTER_PROVIDERS       2
#define CLUSTER_NAMESPACE       "mix"
#define CLUSTER_ORIGIN          "dirauth.example/mix"
#define CLUSTER_START_TIME      1800000000ULL /* the base clock at start */
#define CLUSTER_FIRST_EPOCH     10            /* the epoch that begins at CLUSTER_START_TIME */
#define CLUSTER_KEEP_ENV        "DIRAUTH_KEEP_CLUSTER"
#define CLUSTER_PACE_ENV        "DIRAUTH_CLUSTER_MS_PER_SECOND" /* overrides ms_per_second */

/* A set of members as a bit mask: CLUSTER_BIT(0) | CLUSTER_BIT(3). */
#define CLUSTER_BIT(i) (1u << (i))

/* How every peer link looks (faultproxy.h's shaping of each directed link's proxy). */
struct cluster_link_shaping {
	uint32_t delay_ms;       /* one way */
	uint32_t jitter_ms;      /* a uniform draw in [0, jitter_ms] more per chunk */
	uint32_t bandwidth_mbit; /* per direction of each link, shared by its connections; 0: no cap */
	uint64_t seed;           /* of the jitter's draws; link i→j draws from seed + n·i + j */
};

struct cluster_options {
	size_t authorities;    /* n: 1..CLUSTER_MAX_AUTHORITIES */
	size_t threshold;      /* k: a majority of n */
	uint64_t epoch_length; /* seconds; 0: 6 */
	/* The epoch's phases (docs/protocol.md). All 0: prepare 2/3 of the epoch, vote and
	 * signature 1/3 each (4, 2, 2 for 6-second epochs). */
	uint64_t prepare_seconds;
	uint64_t vote_seconds;
	uint64_t signature_seconds;
	uint64_t validity_epochs;              /* 0: 3 */
	uint64_t clock_skew_seconds;           /* dirauthd's bounds and the signer's; 0: 2 */
	unsigned peer_timeout_seconds;         /* authorities.timeout_seconds; 0: 2 */
	unsigned peer_connect_timeout_seconds; /* 0: 1 */
	unsigned ms_per_second;                /* real ms per clock second in cluster_run_to; 0: 250 */
	/* Appended to the namespace's flow mapping in every dirauthd.yaml, e.g. ", lifecycle: true"
	 * (borrowed: a string literal); NULL: nothing. */
	const char *namespace_extra;
	struct cluster_link_shaping links; /* every peer link's; zero: loopback as it is */
	int tls;                           /* 1: each authority behind its own nginx, peers over https */
};

struct cluster;

/* What a request got back: status -1 when nothing came (no connection, timeout). */
struct cluster_response {
	long status;
	struct buffer body;
};

/* --- life --------------------------------------------------------------------------------- */

/* 1 when nginx is installed (what cluster_options.tls runs), else 0: a test of tls skips. */
int cluster_nginx_installed(void);

/* Lays out keys, configurations and clocks, starts the n × (n-1) link proxies, then every signer
 * and dirauthd, and waits until each signer's socket answers and each dirauthd answers
 * GET /v1/health. */
struct cluster *cluster_start(const struct cluster_options *options);

/* Stops every process (SIGTERM, SIGKILL after 5 s), every proxy, and removes the directory
 * (unless DIRAUTH_KEEP_CLUSTER=1). Accepts NULL. */
void cluster_free(struct cluster *c);

/* SIGKILL authority i's dirauthd and its signer (each that runs). */
void cluster_kill(struct cluster *c, size_t i);

/* SIGKILL only authority i's signer. */
void cluster_kill_signer(struct cluster *c, size_t i);

/* SIGTERM authority i's dirauthd and signer and wait for them (SIGKILL after 5 s). */
void cluster_stop_authority(struct cluster *c, size_t i);

/* Starts what of authority i is not running (signer first), waits as cluster_start does, and
 * points the links to i back at it if cluster_impersonate had sent them elsewhere. */
void cluster_restart(struct cluster *c, size_t i);

/* 1 when authority i's dirauthd was started and has not been stopped or killed by the test. */
int cluster_running(const struct cluster *c, size_t i);

/* Aborts the test when a dirauthd or signer the test did not stop has exited by itself. */
void cluster_check_alive(struct cluster *c);

/* Kills authority i and sends every link to i to 127.0.0.1:port instead (a stand-in the test
 * runs, e.g. a stub_http.h server answering as i). cluster_restart(c, i) undoes it. */
void cluster_impersonate(struct cluster *c, size_t i, unsigned port);

/* --- what it is made of ------------------------------------------------------------------- */

size_t cluster_size(const struct cluster *c);
size_t cluster_threshold(const struct cluster *c);
const char *cluster_dir(const struct cluster *c);
const char *cluster_name(const struct cluster *c, size_t i); /* "authority<i>.dirauth.example" */
const char *cluster_url(const struct cluster *c, size_t i);  /* "http://127.0.0.1:<port>" */
/* With tls: authority i's nginx, "https://127.0.0.1:<port>", and the CA its certificate is
 * issued by (a PEM file); without, the test aborts. */
const char *cluster_front_url(const struct cluster *c, size_t i);
const char *cluster_ca_path(const struct cluster *c);
const char *cluster_log_path(const struct cluster *c, size_t i);
const char *cluster_signer_log_path(const struct cluster *c, size_t i);
const char *cluster_config_path(const struct cluster *c, size_t i);
const char *cluster_trust_bundle_path(const struct cluster *c);
const struct note_verifier *cluster_identity(const struct cluster *c, size_t i);
const struct note_verifier *cluster_signing_verifier(const struct cluster *c, size_t i);
/* Private keys, borrowed from the cluster, for tests that forge what a member would send. */
const struct signer_key *cluster_identity_key(const struct cluster *c, size_t i);
const struct signer_key *cluster_signing_key(const struct cluster *c, size_t i);
/* Authority i's log key (named CLUSTER_ORIGIN) and its cosignature key as a cosignature/v1
 * verifier (type 0x04), both pinned in every authority's configuration (members' log_key and
 * cosignature_key). Borrowed. */
const struct signer_key *cluster_log_key(const struct cluster *c, size_t i);
const struct note_verifier *cluster_cosigner(const struct cluster *c, size_t i);
const struct signer_key *cluster_provider_key(const struct cluster *c, size_t p); /* enrolled */
const struct signer_key *cluster_stranger_key(const struct cluster *c);           /* enrolled nowhere */
/* Authority i's signed certificate note and its certificate bundle as GET /v1/certificates
 * serves it. Borrowed. */
const struct buffer *cluster_certificate(const struct cluster *c, size_t i);
const struct buffer *cluster_certificate_bundle(const struct cluster *c, size_t i);
const struct epoch_schedule *cluster_schedule(const struct cluster *c);
void cluster_epoch_phases(const struct cluster *c, uint64_t epoch, struct epoch_phases *out);
void cluster_epoch_times(const struct cluster *c, uint64_t epoch, struct epoch_times *out);

/* --- clocks ------------------------------------------------------------------------------- */

/* The base time. */
uint64_t cluster_now(const struct cluster *c);

/* Authority i's clock: base + its skew. */
uint64_t cluster_clock_of(const struct cluster *c, size_t i);

/* Sets the base time to t and writes every clock file (each atomically). */
void cluster_clock_set(struct cluster *c, uint64_t t);

/* Authority i's clock runs skew seconds ahead of the base (negative: behind), from now on. */
void cluster_clock_skew(struct cluster *c, size_t i, int64_t skew);

/* Moves the base time forward to t one second at a time, ms_per_second of real time each. */
void cluster_run_to(struct cluster *c, uint64_t t);

/* cluster_run_to the start of epoch (its valid-after), through its vote, vote deadline and
 * signature deadline. */
void cluster_run_epoch(struct cluster *c, uint64_t epoch);

/* The first epoch whose cut-off (vote_at) is after the base time: the next one to prepare. */
uint64_t cluster_next_epoch(const struct cluster *c);

/* --- links -------------------------------------------------------------------------------- */

/* The proxy of the directed link from → to: from's requests to to. */
struct faultproxy *cluster_link(struct cluster *c, size_t from, size_t to);

/* Sets one link's mode (faultproxy_set_mode). */
void cluster_link_set(struct cluster *c, size_t from, size_t to, enum faultproxy_mode mode,
                      uint64_t parameter);

/* Sets every link into to (every other authority's requests to it). */
void cluster_links_to(struct cluster *c, size_t to, enum faultproxy_mode mode, uint64_t parameter);

/* Sets every link out of from (its requests to every other authority). */
void cluster_links_from(struct cluster *c, size_t from, enum faultproxy_mode mode, uint64_t parameter);

/* Partitions the authorities: each argument is a group (a CLUSTER_BIT mask), the list ends with
 * 0. Links within a group pass; links between groups, and to or from an authority in no group,
 * are cut. */
void cluster_partition(struct cluster *c, unsigned group, ...);

/* Every link passes again. */
void cluster_heal(struct cluster *c);

/* What authority i's peer links carried since the cluster started, as their proxies counted it
 * (faultproxy_counters): over the links from i, the requests it made of its peers and their
 * answers; over the links to i, its peers' requests and its answers. The proxies see bytes, not
 * kinds of request; with tls the bytes are TLS records. */
struct cluster_link_bytes {
	uint64_t requests_sent;     /* i's requests, to every peer */
	uint64_t answers_received;  /* the peers' answers to them */
	uint64_t requests_received; /* the peers' requests to i */
	uint64_t answers_sent;      /* i's answers to them */
};
void cluster_link_bytes(struct cluster *c, size_t i, struct cluster_link_bytes *out);

/* --- talking to authorities --------------------------------------------------------------- */

/* One HTTP request (GET without body, else POST) with an optional extra header line; waits at
 * most timeout_ms (0: 10 s). Returns response->status; free the body with
 * cluster_response_free. */
long cluster_http(const char *url, const uint8_t *body, size_t body_len, const char *header, long timeout_ms,
                  struct cluster_response *response);
/* The same over https to one of the cluster's nginx (cluster_front_url), the server verified
 * against the cluster's CA as its peers verify it. */
long cluster_https(const struct cluster *c, const char *url, const uint8_t *body, size_t body_len,
                   const char *header, long timeout_ms, struct cluster_response *response);
long cluster_get(struct cluster *c, size_t i, const char *path, struct cluster_response *response);
long cluster_post(struct cluster *c, size_t i, const char *path, const uint8_t *body, size_t len,
                  struct cluster_response *response);
void cluster_response_free(struct cluster_response *response);

/* The latest snapshot header authority i serves: 0 with *header and the signed note (note may
 * be NULL; else the caller frees it), or DIRAUTH_ERR_NOT_FOUND when it serves none or does not
 * answer. */
int cluster_latest(struct cluster *c, size_t i, struct snapshot_header *header, struct buffer *note);

/* Waits until authority i serves a latest snapshot of at least epoch (polling
 * GET /v1/mix/snapshots/latest), for at most timeout_ms. Returns 0 with *header and the note as
 * cluster_latest, or DIRAUTH_ERR_STALE on timeout. */
int cluster_wait_epoch(struct cluster *c, size_t i, uint64_t epoch, int timeout_ms,
                       struct snapshot_header *header, struct buffer *note);

/* Authority i's header note and identity body for epoch: 0, or DIRAUTH_ERR_NOT_FOUND. Either
 * out may be NULL; the caller frees what it asked for. */
int cluster_snapshot(struct cluster *c, size_t i, uint64_t epoch, struct buffer *header_note,
                     struct buffer *body);

/* Asserts that authority i serves the header of every epoch in [from, to) (an authority back from
 * an absence: every epoch it missed). */
void cluster_expect_headers(struct cluster *c, size_t i, uint64_t from, uint64_t to);

/* The members whose signing key made a valid signature on a signed note: returns their count
 * and sets *members (may be NULL) to their CLUSTER_BIT mask; a note that does not parse counts
 * 0; a bad signature by a member's key returns -1. */
int cluster_signers(const struct cluster *c, const uint8_t *note, size_t len, unsigned *members);

/* Authority i's dirauthd log, malloc'd and NUL-terminated (*len may be NULL). */
uint8_t *cluster_log(const struct cluster *c, size_t i, size_t *len);

/* 1 when authority i's dirauthd log (or, with signer, its signer's log) contains text. */
int cluster_log_contains(const struct cluster *c, size_t i, const char *text);
int cluster_signer_log_contains(const struct cluster *c, size_t i, const char *text);

/* --- providers and mirrors ---------------------------------------------------------------- */

/* A signed registration by provider of service (label, number), class mix-gateway, two QUIC
 * endpoints, issued at the earliest clock of the cluster and valid for a day. */
void cluster_registration(const struct cluster *c, const struct signer_key *provider, const char *label,
                          uint64_t number, uint64_t sequence, struct buffer *out);

/* The service id cluster_registration gives (label, number). */
void cluster_service_id(const char *label, uint64_t number, uint8_t out[32]);

/* count signed registrations, each of sequence, of the services (label, first + r) for r in
 * [0, count), by the cluster's providers in turn by number (so a service always has the same
 * provider: cluster_registration), built on a thread per core. Returns a new array; free it with
 * cluster_registrations_free. */
struct buffer *cluster_registrations(const struct cluster *c, const char *label, uint64_t first, size_t count,
                                     uint64_t sequence);
void cluster_registrations_free(struct buffer *notes, size_t count);

/* The most client threads cluster_register_all runs: each holds one connection to every
 * authority, under an authority's 64 connections per address. */
#define CLUSTER_REGISTER_THREADS_MAX 32

/* POSTs each notes[r] to POST /v1/registrations of the authorities of holders[r] (a CLUSTER_BIT
 * mask; holders NULL: every authority) from threads client threads (1..CLUSTER_REGISTER_THREADS_MAX),
 * each with one kept-alive connection to every authority, as many providers posting at once
 * would. Aborts the test on anything but a 202. Returns the 202s; *seconds (may be NULL) gets the
 * wall time. */
size_t cluster_register_all(const struct cluster *c, const struct buffer *notes, const unsigned *holders,
                            size_t count, unsigned threads, double *seconds);

/* Posts note to POST /v1/registrations of every authority in members (a CLUSTER_BIT mask);
 * statuses (may be NULL, else cluster_size entries) gets each answer's status (0 for those not
 * asked). Returns how many answered 202. */
size_t cluster_register(struct cluster *c, unsigned members, const struct buffer *note, long *statuses);

/* What the last cluster_register's first refusal said ("a3 answered 409: {...}"), for a failing
 * test's message; "" when every authority asked answered 202. */
const char *cluster_last_refusal(const struct cluster *c);

/* Runs `dirauthctl fetch` against authority i with the cluster's trust bundle, into out_dir,
 * judging at now; fills *outcome (free with test_outcome_free) and returns its exit status. */
int cluster_fetch(struct cluster *c, size_t i, const char *out_dir, uint64_t now,
                  struct test_outcome *outcome);

/* --- programs built on a cluster ---------------------------------------------------------- */

/* Runs body as the only test of a Check suite, in a child process, with a timeout of
 * timeout_seconds and Check's own output silenced, so that a failure (ck_assert) aborts it and the
 * cluster's janitor cleans up; prints each failure on stderr as "<program>: FAILED (file:line):
 * reason". Returns the number of failures (0 or 1). When body returns, the child exits at once
 * (stdout flushed): Check packs a test's duration in microseconds into 32 bits and fails a test
 * that ran longer than about 35 minutes. For programs that are not test suites, such as the
 * benchmarks. */
int cluster_run_alone(const char *program, void (*body)(void), double timeout_seconds);

#endif
