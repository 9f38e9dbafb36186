/*
 * dirauth.h: libdirauth, the client library a resolver embeds to believe what dirauth publishes.
 *
 * A resolver needs three things from the directory: to learn the current snapshot of a namespace
 * without trusting the server it asks (a mirror, a CDN, an authority), never to go back to an
 * older one, and to pick endpoints from it. This library does the first two by checking
 * everything the authorities sign against a trust bundle it is given, and answers the third over
 * nothing but what it verified. It does no I/O of its own: the network, the clock, the random
 * source and the small persistent state all come from the caller, so it runs inside any event
 * loop, in any thread that owns the context, and in tests without a network.
 *
 * The model.
 *
 *   context    one per trust bundle (dirauth_context_new). No global state: two contexts with
 *              different bundles live side by side in one process and never see each other's
 *              data. A context is not thread-safe; use one per thread or lock around it.
 *   update     brings one namespace of a context to the latest snapshot a server offers. The
 *              library says which path it wants next (dirauth_update_next: "/v1/<ns>/...", to be
 *              appended to the base URL of whichever server the caller chose), the caller
 *              fetches it however it likes (blocking, in an event loop, from a cache) and feeds
 *              the answer back (dirauth_update_feed). dirauth_update_run drives the same steps
 *              through a synchronous fetch callback, for programs that block anyway. Nothing is
 *              believed or installed before every check passed: the header signed by the
 *              bundle's threshold of pinned authorities with keys their identities certified,
 *              for the namespace and origin the bundle pins, fresh by the caller's clock; the
 *              chain of `previous` digests from the header held before (never going back: an
 *              older epoch is a rollback, another header for the held epoch a split view); the
 *              log inclusion of the header under a cosigned checkpoint when log keys are pinned;
 *              the body (or a diff from the body held) against the header, every record's
 *              provider signature, health and revocations; and nothing the installed snapshot
 *              revoked may come back. Then the header is written through the state callback,
 *              and only after that write succeeded is the snapshot used.
 *   lookup     one service by proof, without the body: the header as above, then the record
 *              shard that holds the service or proves it absent (dirauth_lookup_begin).
 *   state      the latest verified header note of each namespace, a few kilobytes, read and
 *              written through the caller's callbacks; it is what makes "never go back" survive
 *              a restart. The body is kept in memory only.
 *   queries    over the installed snapshot only: a service by id, the endpoints of a class, a
 *              random sample of n of them drawn from the caller's random source. Endpoints whose
 *              published health is draining or unavailable, whose health is unknown, or which a
 *              revocation names, are never offered. A snapshot past its valid-until by the
 *              caller's clock is refused with DIRAUTH_E_STALE, never answered from.
 *
 * Privacy. Nothing the library sends or stores identifies who asks: the paths it asks for name
 * only a namespace, an epoch, a body digest or a shard; it sends no header of its own, holds no
 * cookie, writes no per-query state, and the state it writes is a header note that every client
 * of the namespace holds alike. Queries are answered from memory and ask nothing; an update says
 * nothing of what will be looked up, a lookup only the slice of ids (about four services) its
 * shard holds.
 *
 * Errors. Every call that can fail returns an enum dirauth_status (DIRAUTH_SUCCESS is 0) and,
 * when given a struct dirauth_result, fills it with the status and one sentence saying what was
 * checked and why it failed. A split view (two headers for one epoch, each verified by the
 * threshold) is DIRAUTH_E_SPLIT_VIEW and the result carries both signed notes as evidence, also as
 * an evidence file that `dirauthctl verify-evidence` and any monitor check offline.
 *
 * Symbols. Only the functions below are exported (prefix dirauth_); the library is linked with
 * pkg-config's `dirauth` (`pkg-config --cflags --libs dirauth`), soname libdirauth.so.0.2 (before
 * 1.0 each minor version is its own ABI: its structs may grow).
 */
#ifndef DIRAUTH_DIRAUTH_H
#define DIRAUTH_DIRAUTH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(DIRAUTH_LIBRARY_BUILD)
#define DIRAUTH_EXPORT __attribute__((visibility("default")))
#else
#define DIRAUTH_EXPORT
#endif

#define DIRAUTH_VERSION_MAJOR 0
#define DIRAUTH_VERSION_MINOR 2
#define DIRAUTH_VERSION_PATCH 0

/* Room for every detail sentence the library writes (NUL included). */
#define DIRAUTH_DETAIL_MAX 1024

/* The largest state one namespace writes: a signed header note. */
#define DIRAUTH_STATE_MAX (64 * 1024)

/* Room for the ", "-separated names of the authorities whose signatures counted. */
#define DIRAUTH_SIGNER_NAMES_MAX 4224

/* Room for a Content-Encoding value the caller reports ("", "identity", "gzip", "zstd"). */
#define DIRAUTH_ENCODING_MAX 16

/* The outcome of a call. Values are stable: they may be stored and compared across versions. */
enum dirauth_status {
	DIRAUTH_SUCCESS = 0,
	DIRAUTH_E_ARGUMENT = 1,     /* the caller misused the API (a NULL, a call out of order) */
	DIRAUTH_E_NOMEM = 2,        /* an allocation failed */
	DIRAUTH_E_TRUST = 3,        /* the trust bundle or the options cannot be used, or the namespace
	                             * is not one the bundle pins */
	DIRAUTH_E_FETCH = 4,        /* the caller's fetch failed, or the server answered a status
	                             * other than the one the step needs, or more bytes than it allows */
	DIRAUTH_E_MALFORMED = 5,    /* bytes that do not parse, or exceed a bound */
	DIRAUTH_E_SIGNATURE = 6,    /* not signed by the bundle's threshold of pinned authorities, a
	                             * signature that does not verify, or a record's provider signature */
	DIRAUTH_E_MISMATCH = 7,     /* does not match what it is committed to: a body and its header, a
	                             * record and the records root, a chain of headers, a namespace */
	DIRAUTH_E_ROLLBACK = 8,     /* older than what was verified before: never taken */
	DIRAUTH_E_SPLIT_VIEW = 9,   /* two verified, different headers for one epoch: the evidence is in
	                             * the result */
	DIRAUTH_E_STALE = 10,       /* past its valid-until by the caller's clock, or not yet valid */
	DIRAUTH_E_NOT_FOUND = 11,   /* the service is not in the verified snapshot */
	DIRAUTH_E_NO_SNAPSHOT = 12, /* nothing verified yet for this namespace in this context */
	DIRAUTH_E_STATE = 13,       /* the state callbacks failed, or the state held is unreadable */
	DIRAUTH_E_LOG = 14,         /* the header is not shown in the log under a checkpoint signed by a
	                             * pinned log key and cosigned by the pinned witnesses' quorum */
	DIRAUTH_E_RANDOM = 15,      /* the caller's random source failed */
	DIRAUTH_E_INTERNAL = 16,    /* a check could not run (a bug or the crypto library) */
	DIRAUTH_E_TOO_FAR = 17      /* the new header is more epochs ahead of the held one than max_chain:
	                             * its chain cannot be walked, and only a deliberate re-seed (the
	                             * state cleared after the new snapshot was checked by other means)
	                             * moves on */
};

/* A stable lower-case name for status ("split-view"), never NULL. */
DIRAUTH_EXPORT const char *dirauth_status_name(enum dirauth_status status);

/* What a call that failed says. Zero it (or call dirauth_result_clear) before first use; each
 * call that takes one resets it. The evidence pointers are owned by the result. */
struct dirauth_result {
	enum dirauth_status status;
	char detail[DIRAUTH_DETAIL_MAX]; /* one sentence, empty after success */
	/* DIRAUTH_E_SPLIT_VIEW only (else NULL, 0): the header note verified before (held) and the one
	 * offered now, each signed by the bundle's threshold, for the same namespace and epoch. */
	uint8_t *evidence_held;
	size_t evidence_held_len;
	uint8_t *evidence_offered;
	size_t evidence_offered_len;
	/* The same pair as an evidence file (schema/evidence.md, kind headers: both notes, the bundle's
	 * authorities, the certificate bundle the server served), which `dirauthctl verify-evidence`
	 * checks offline; NULL when it could not be encoded. */
	uint8_t *evidence_file;
	size_t evidence_file_len;
};

/* Frees the evidence and zeroes the result. Accepts NULL. */
DIRAUTH_EXPORT void dirauth_result_clear(struct dirauth_result *result);

/* An answer body being received, for the synchronous fetch callback. */
struct dirauth_sink;

/* Appends bytes to what the fetch callback receives. Returns 0, or -1 once the answer is past
 * the bound of the request (the fetch should stop; the step then fails with DIRAUTH_E_FETCH). */
DIRAUTH_EXPORT int dirauth_sink_append(struct dirauth_sink *sink, const void *bytes, size_t len);

/* What the library needs from its caller. Every pointer is borrowed for the context's life. */
struct dirauth_callbacks {
	void *user; /* handed back to every callback */
	/* Unix seconds now. Required. */
	uint64_t (*now)(void *user);
	/* Fills len bytes of out with unpredictable bytes; returns 0, nonzero on failure. Required
	 * by dirauth_sample only. */
	int (*random)(void *user, uint8_t *out, size_t len);
	/* The state kept for namespace_name: copies at most cap bytes into out and sets *len (0 when
	 * nothing is kept yet). Returns 0, nonzero when it cannot be read (the update then fails:
	 * a check that cannot run denies). Required. */
	int (*state_read)(void *user, const char *namespace_name, uint8_t *out, size_t cap, size_t *len);
	/* Replaces the state of namespace_name with bytes, durably (e.g. write, fsync, rename), before
	 * returning 0; nonzero on failure (nothing is then installed). Required. */
	int (*state_write)(void *user, const char *namespace_name, const uint8_t *bytes, size_t len);
	/* Optional, for dirauth_update_run: fetches path (appended to the caller's server URL) and
	 * hands the body to dirauth_sink_append, sets *http_status (0 when no answer came) and the
	 * answer's Content-Encoding into encoding ("" when none; a fetch that decodes it reports
	 * ""). Returns 0 when an answer came, whatever its status; nonzero when none did. */
	int (*fetch)(void *user, const char *path, long *http_status, char encoding[DIRAUTH_ENCODING_MAX],
	             struct dirauth_sink *sink);
	/* Optional: the decoded body of the snapshot of epoch whose header the state holds, as the
	 * caller kept it (a mirror's file), handed to dirauth_sink_append within the bundle's
	 * max-body-uncompressed. Returns 0 when it handed one, nonzero when it keeps none. The body is
	 * taken only when its size and SHA-256 are those the held header commits to, and then only as
	 * a base: the next body is asked for as a diff from it, and may not hold what its revocations
	 * name. Nothing is ever answered from it. Without it, only a body installed in this context
	 * is a base. */
	int (*body_read)(void *user, const char *namespace_name, uint64_t epoch, struct dirauth_sink *sink);
	/* Optional, with log keys pinned: the checkpoint note the namespace's log was last believed
	 * at, kept as the state is (the same contract as state_read and state_write), written before
	 * the state. With them, an update holds the log to it: a new checkpoint of the same size must
	 * have the same root, a larger one must be proven consistent with it
	 * (GET /v1/<ns>/log/consistency/<held size>/<new size>), a smaller one is refused. Without
	 * them, each update believes the first checkpoint that verifies. */
	int (*checkpoint_read)(void *user, const char *namespace_name, uint8_t *out, size_t cap, size_t *len);
	int (*checkpoint_write)(void *user, const char *namespace_name, const uint8_t *bytes, size_t len);
};

/* A clock_skew of no seconds (0 takes the default). */
#define DIRAUTH_NO_CLOCK_SKEW UINT64_MAX

/* Optional limits and pins of a context; NULL (or zero fields) takes the defaults. */
struct dirauth_options {
	uint64_t clock_skew;   /* seconds a header's valid-after may lie ahead of now (300;
	                        * DIRAUTH_NO_CLOCK_SKEW for none at all) */
	uint64_t max_validity; /* longest valid-until - valid-after accepted (7 days) */
	uint64_t max_chain;    /* most epochs walked back from a new header to the held one (1024) */
	/* The namespace's transparency log, checked on every update when log_key_count > 0: the log
	 * keys (C2SP verifier keys, type 0x01, named by the namespace's origin; a checkpoint signed by
	 * any counts), the witnesses' cosignature keys (type 0x04) and how many distinct witnesses
	 * must have cosigned. */
	const char *const *log_keys;
	size_t log_key_count;
	const char *const *witness_keys;
	size_t witness_key_count;
	size_t witness_quorum;
};

struct dirauth_context;

/* Makes a context for the trust bundle (its text, schema/trust-bundle.md) with the caller's
 * callbacks (copied) and options (copied; NULL: the defaults). Returns DIRAUTH_SUCCESS with *out
 * for dirauth_context_free; DIRAUTH_E_ARGUMENT (a required callback missing), DIRAUTH_E_TRUST (the
 * bundle does not parse: the detail names the line; log pins that cannot be used),
 * DIRAUTH_E_NOMEM. */
DIRAUTH_EXPORT enum dirauth_status dirauth_context_new(const struct dirauth_callbacks *callbacks,
                                                       const uint8_t *trust_bundle, size_t trust_bundle_len,
                                                       const struct dirauth_options *options,
                                                       struct dirauth_context **out,
                                                       struct dirauth_result *result);

/* Frees a context and everything it verified. Accepts NULL. */
DIRAUTH_EXPORT void dirauth_context_free(struct dirauth_context *context);

/* ---- updating a namespace ---- */

struct dirauth_update;

/* Starts an update of namespace_name (one the bundle pins): reads its state (state_read).
 * Returns DIRAUTH_SUCCESS with *out for dirauth_update_free; DIRAUTH_E_TRUST (not a namespace of
 * the bundle), DIRAUTH_E_STATE (the state cannot be read, or is no header note of the
 * namespace), DIRAUTH_E_NOMEM. */
DIRAUTH_EXPORT enum dirauth_status dirauth_update_begin(struct dirauth_context *context,
                                                        const char *namespace_name,
                                                        struct dirauth_update **out,
                                                        struct dirauth_result *result);

/* The next request: *path gets the path to GET (valid until the next feed), *max_bytes the
 * largest answer the step reads. Returns 1 when a request is wanted, 0 when the update is over
 * (dirauth_update_status says how it ended). */
DIRAUTH_EXPORT int dirauth_update_next(struct dirauth_update *update, const char **path, size_t *max_bytes);

/* The answer to the request dirauth_update_next named: its HTTP status (0 when none came), its
 * Content-Encoding ("" or NULL when none or already decoded; "identity", "gzip" and "zstd" are
 * decoded here, within the step's bound) and body. Returns DIRAUTH_SUCCESS while the update goes
 * on or when it completed (then the snapshot is installed); any other status ends the update,
 * nothing installed, nothing written: DIRAUTH_E_FETCH, _MALFORMED, _SIGNATURE, _MISMATCH,
 * _ROLLBACK, _SPLIT_VIEW (with the evidence), _STALE, _LOG, _STATE (the write failed), _NOMEM,
 * _INTERNAL; DIRAUTH_E_ARGUMENT when no request is pending. */
DIRAUTH_EXPORT enum dirauth_status dirauth_update_feed(struct dirauth_update *update, long http_status,
                                                       const char *encoding, const uint8_t *body, size_t len,
                                                       struct dirauth_result *result);

/* How the update ended so far: DIRAUTH_SUCCESS while it goes on or once it completed, else the
 * status that ended it. */
DIRAUTH_EXPORT enum dirauth_status dirauth_update_status(const struct dirauth_update *update);

/* Frees an update (an unfinished one changes nothing). Accepts NULL. */
DIRAUTH_EXPORT void dirauth_update_free(struct dirauth_update *update);

/* begin, then next/fetch/feed until the end, through callbacks->fetch (DIRAUTH_E_ARGUMENT when
 * there is none). Returns what the update ended with; a fetch that returns nonzero is
 * DIRAUTH_E_FETCH. */
DIRAUTH_EXPORT enum dirauth_status dirauth_update_run(struct dirauth_context *context,
                                                      const char *namespace_name,
                                                      struct dirauth_result *result);

/* What an update verified, for a caller that keeps or serves it (a mirror writes its files from
 * it). Every pointer is the update's, valid until dirauth_update_free or the next update of the
 * namespace in the context. */
#define DIRAUTH_WHY_MAX 256

struct dirauth_verified {
	uint64_t epoch;
	uint64_t record_count;
	size_t signer_count;    /* distinct pinned authorities whose signatures counted */
	size_t authority_count; /* authorities the bundle pins */
	char signer_names[DIRAUTH_SIGNER_NAMES_MAX];
	const uint8_t *header_note; /* the signed header note as served */
	size_t header_note_len;
	const uint8_t *certificates; /* the certificate bundle as served (GET /v1/certificates) */
	size_t certificates_len;
	const uint8_t *body; /* decoded and verified; NULL for a lookup */
	size_t body_len;
	int had_held;        /* a header was held (state or context) before */
	uint64_t held_epoch; /* its epoch */
	/* How the body came: asked for as a diff from a held base, and whether it was used. */
	int diff_asked;
	int diff_missing; /* the server offers no diff from the base (404) */
	int diff_used;
	uint64_t diff_base_epoch;
	size_t body_served_len;         /* the body's or the diff's bytes as served */
	int body_held;                  /* the same snapshot as the base (installed, or the body the caller
	                                 * kept): its body taken, nothing downloaded */
	char diff_why[DIRAUTH_WHY_MAX]; /* not used: why, one sentence ("" when there was no reason
	                                 * to ask: nothing held, or the held epoch itself) */
	/* The log, when log keys are pinned: the proof file as served and its checkpoint note, the
	 * header's leaf, the checkpoint's size and root, the witnesses that cosigned, and the
	 * checkpoint held before (checkpoint_read) it was held to. */
	int log_checked;
	const uint8_t *log_proof;
	size_t log_proof_len;
	const uint8_t *checkpoint;
	size_t checkpoint_len;
	uint64_t log_index;
	uint64_t log_tree_size;
	uint8_t log_root[32];
	size_t log_cosigned;
	size_t log_witness_count;
	size_t log_quorum;
	int log_had_held;
	uint64_t log_held_size;
};

/* Fills *out once every check of the update passed: from within the checkpoint_write and
 * state_write callbacks of this update (so that a caller writes what it keeps before the state
 * that names it) and after it completed. Returns DIRAUTH_SUCCESS; DIRAUTH_E_ARGUMENT before the
 * checks passed, after the update failed, or for a NULL. */
DIRAUTH_EXPORT enum dirauth_status dirauth_update_verified(const struct dirauth_update *update,
                                                           struct dirauth_verified *out,
                                                           struct dirauth_result *result);

/* ---- what was verified ---- */

/* The installed snapshot of a namespace. */
struct dirauth_snapshot_info {
	uint64_t epoch;
	uint64_t valid_after;
	uint64_t fresh_until;
	uint64_t valid_until;
	uint64_t record_count;
	uint64_t consensus_method;
	size_t signer_count; /* distinct pinned authorities whose signatures counted */
};

/* Fills *info. Returns DIRAUTH_SUCCESS; DIRAUTH_E_NO_SNAPSHOT; DIRAUTH_E_TRUST (not a namespace of
 * the bundle). Answers even for a stale snapshot (info is what it is; queries refuse it). */
DIRAUTH_EXPORT enum dirauth_status dirauth_snapshot(const struct dirauth_context *context,
                                                    const char *namespace_name,
                                                    struct dirauth_snapshot_info *info,
                                                    struct dirauth_result *result);

/* One endpoint that may be offered: every field as the provider signed it, text NUL-terminated. */
struct dirauth_endpoint {
	char service_id[65];  /* 64 lower-case hex digits */
	char endpoint_id[65]; /* 64 lower-case hex digits */
	char service_class[32];
	char transport[16]; /* quic, tls, onion, bridge */
	char address[256];
	char region[33];
	char capacity[8]; /* low, medium, high */
	char profile[16]; /* baseline, modern, hybrid-crypto, high-capacity */
	char health[16];  /* healthy, degraded; "unpublished" in a namespace without health (method 1) */
};

/* The queries. Each reads the installed snapshot of namespace_name at the caller's clock: a
 * snapshot whose valid-until is not after now is DIRAUTH_E_STALE, nothing verified is
 * DIRAUTH_E_NO_SNAPSHOT, a namespace not pinned DIRAUTH_E_TRUST. Results go into the caller's
 * array out of cap entries; *count gets how many there are (which may be more than cap: only cap
 * are written). Endpoints that are draining, unavailable, of unknown health, or revoked are never
 * among them. */

/* The offered endpoints of one service (service_id: 64 hex digits). DIRAUTH_E_NOT_FOUND when the
 * snapshot holds no such service; DIRAUTH_E_ARGUMENT for an id that is not 64 hex digits. A
 * service found with no endpoint to offer is DIRAUTH_SUCCESS with *count 0. */
DIRAUTH_EXPORT enum dirauth_status dirauth_service(struct dirauth_context *context,
                                                   const char *namespace_name, const char *service_id,
                                                   struct dirauth_endpoint *out, size_t cap, size_t *count,
                                                   struct dirauth_result *result);

/* Every offered endpoint of the services of service_class ("mix-gateway", ...), in the snapshot's
 * order. DIRAUTH_E_ARGUMENT for a class name the registrations' grammar does not know. */
DIRAUTH_EXPORT enum dirauth_status dirauth_endpoints(struct dirauth_context *context,
                                                     const char *namespace_name, const char *service_class,
                                                     struct dirauth_endpoint *out, size_t cap, size_t *count,
                                                     struct dirauth_result *result);

/* n endpoints of service_class chosen uniformly at random without replacement among the offered
 * ones (all of them, in random order, when fewer are offered), drawn from callbacks->random
 * alone: nothing about the caller weighs in. out holds at least n entries; *count gets how many
 * were chosen. DIRAUTH_E_RANDOM when the random source fails (nothing is chosen), DIRAUTH_E_ARGUMENT
 * without a random callback. */
DIRAUTH_EXPORT enum dirauth_status dirauth_sample(struct dirauth_context *context, const char *namespace_name,
                                                  const char *service_class, size_t n,
                                                  struct dirauth_endpoint *out, size_t *count,
                                                  struct dirauth_result *result);

/* ---- one service by proof, without the body ---- */

/* A lookup: an update that stops at the header (certificates, latest header, the chain from the
 * held one, the log when pinned), then asks for the record shard that holds service_id (64 hex
 * digits) or proves it absent, GET /v1/<ns>/snapshots/<epoch>/records/<shard>
 * (schema/record-shard.md), and believes it only as far as the header's records root proves it: a
 * few kilobytes instead of the body. It is driven like an update (dirauth_update_next,
 * dirauth_update_feed, dirauth_update_status, dirauth_update_free) and ends, like one, with the
 * header written as the state; an installed snapshot of an older epoch is then dropped (the newer
 * header may revoke what it offered: queries say DIRAUTH_E_NO_SNAPSHOT until the next update).
 * Returns what dirauth_update_begin returns, and DIRAUTH_E_ARGUMENT for an id that is not 64 hex
 * digits. The shard's refusals: DIRAUTH_E_MALFORMED, DIRAUTH_E_MISMATCH (another snapshot's or
 * shard's, a proof that does not rebuild the records root), DIRAUTH_E_SIGNATURE (a record's or a
 * statement's signature), DIRAUTH_E_STALE (a record expired at the header's valid-after, health
 * past its freshness). */
DIRAUTH_EXPORT enum dirauth_status dirauth_lookup_begin(struct dirauth_context *context,
                                                        const char *namespace_name, const char *service_id,
                                                        struct dirauth_update **out,
                                                        struct dirauth_result *result);

/* After a lookup completed: the service's offered endpoints, as dirauth_service answers them, from
 * the proof. DIRAUTH_E_NOT_FOUND when the shard proves the service absent (two adjacent leaves
 * around its id; the detail says when a listed revocation names it); DIRAUTH_E_ARGUMENT when the
 * lookup has not completed. */
DIRAUTH_EXPORT enum dirauth_status dirauth_lookup_endpoints(const struct dirauth_update *lookup,
                                                            struct dirauth_endpoint *out, size_t cap,
                                                            size_t *count, struct dirauth_result *result);

/* dirauth_lookup_begin driven through callbacks->fetch, then dirauth_lookup_endpoints. */
DIRAUTH_EXPORT enum dirauth_status dirauth_lookup_run(struct dirauth_context *context,
                                                      const char *namespace_name, const char *service_id,
                                                      struct dirauth_endpoint *out, size_t cap, size_t *count,
                                                      struct dirauth_result *result);

/* What a completed lookup's proof showed, for tools that report it (a command printing a record, a
 * monitor): every endpoint of the record, also those never offered (draining, unavailable, of
 * unknown health), with its health statement, and for an absent service the neighbours and the
 * revocations that prove it. It is a report, never a selection: a resolver chooses endpoints only
 * through dirauth_lookup_endpoints and the queries, which offer none of those, and `offered` here
 * says the same thing they do. The caller provides the arrays (endpoints, revocations, and their
 * caps; NULL with cap 0 for none); the counts say how many there are, which may be more than was
 * written. */
struct dirauth_record_endpoint {
	/* Every field as the provider signed it; health is healthy, degraded, draining, unavailable,
	 * "unknown" (no fresh statement for it: treat as unavailable) or "unpublished" (a namespace
	 * without health, consensus-method 1). */
	struct dirauth_endpoint endpoint;
	int offered;               /* 1 when dirauth_lookup_endpoints offers it */
	int has_statement;         /* 1 when a health statement names it (the fields below) */
	char health_signer[16];    /* the key that signed the statement ("provider", "endpoint") */
	uint64_t health_issued_at; /* when the statement was issued (Unix seconds) */
	char health_capacity[8];   /* the statement's capacity line; "" when it has none */
};

struct dirauth_record_revocation {
	int whole_service;    /* 1: the whole service is revoked; 0: endpoint_id only */
	char endpoint_id[65]; /* 64 lower-case hex digits, "" for the whole service */
	uint64_t since;       /* the epoch of the first snapshot that listed it */
};

struct dirauth_record_view {
	/* The snapshot whose header the proof is against. */
	uint64_t epoch;
	uint64_t record_count;
	size_t signer_count;    /* distinct pinned authorities whose signatures counted */
	size_t authority_count; /* authorities the bundle pins */
	char signer_names[DIRAUTH_SIGNER_NAMES_MAX];
	char shard[8]; /* the record shard's name, as the lookup asked for it */
	/* The service. */
	char service_id[65];
	int present;         /* 1: a record of the snapshot; 0: proven absent */
	uint64_t leaf_index; /* present: its leaf; absent: the leaf after its place (record_count
	                        past the last) */
	/* present: */
	char service_class[32];
	char provider[129]; /* the provider key's name */
	uint64_t sequence;
	uint64_t expires;
	struct dirauth_record_endpoint *endpoints; /* the caller's, endpoint_cap entries */
	size_t endpoint_cap;
	size_t endpoint_count; /* every endpoint of the record, in its order */
	/* absent: the adjacent leaves around its id, and the revocations listed for it */
	int has_before; /* the leaf leaf_index - 1 (else the id is before every record) */
	char before_id[65];
	int has_after; /* the leaf leaf_index (else the id is after every record) */
	char after_id[65];
	struct dirauth_record_revocation *revocations; /* the caller's, revocation_cap entries */
	size_t revocation_cap;
	size_t revocation_count;
};

/* Fills *view (its arrays and caps set by the caller; the rest is overwritten) from a completed
 * lookup. Returns DIRAUTH_SUCCESS for a present and for an absent service alike (view->present
 * tells them apart); DIRAUTH_E_ARGUMENT when the lookup has not completed, or for a NULL. */
DIRAUTH_EXPORT enum dirauth_status dirauth_lookup_record(const struct dirauth_update *lookup,
                                                         struct dirauth_record_view *view,
                                                         struct dirauth_result *result);

/* ---- offline checks ---- */

/* Checks a tlog-proof file (c2sp.org/tlog-proof, as GET /v1/<ns>/log/proof/<epoch> serves it) for
 * the installed header of namespace_name: its checkpoint is of the namespace's origin, signed by
 * one of the context's pinned log keys and cosigned by the witness quorum, and the header's text
 * is the entry the proof names. Returns DIRAUTH_SUCCESS; DIRAUTH_E_LOG (no log keys pinned, or
 * the checkpoint or the inclusion does not verify), DIRAUTH_E_MALFORMED (not a proof file),
 * DIRAUTH_E_NO_SNAPSHOT, DIRAUTH_E_TRUST, DIRAUTH_E_NOMEM, DIRAUTH_E_INTERNAL. */
DIRAUTH_EXPORT enum dirauth_status dirauth_verify_log_proof(const struct dirauth_context *context,
                                                            const char *namespace_name, const uint8_t *proof,
                                                            size_t proof_len, struct dirauth_result *result);

/* What dirauth_verify_proof_file verified. The header's fields (namespace_name to signer_names)
 * are set once the header verified, also when the log then refused it; the log's (index to
 * cosigned) once the whole proof verified; witness_count and quorum are the context's pins. */
struct dirauth_proof_info {
	char namespace_name[64];
	char origin[256];
	uint64_t epoch;
	size_t signer_count;    /* distinct pinned authorities that signed the header */
	size_t authority_count; /* authorities the bundle pins */
	char signer_names[DIRAUTH_SIGNER_NAMES_MAX];
	uint64_t index;     /* the header's entry in the log */
	uint64_t tree_size; /* the checkpoint's */
	uint8_t root[32];   /* the checkpoint's root hash */
	size_t cosigned;    /* distinct pinned witnesses that cosigned the checkpoint */
	size_t witness_count;
	size_t quorum;
};

/* Checks a tlog-proof file whose extra data is a snapshot header note, as dirauthd serves it
 * (GET /v1/<ns>/log/proof/<epoch>), with no snapshot installed and nothing read or written: a
 * statement about the past, judged at the header's own time. In this order: the file parses and
 * carries a header note of a namespace the bundle pins, with its origin; the header is signed by
 * the bundle's threshold of distinct pinned authorities with signing keys their identities
 * certified at the header's valid-after, in certificates (a certificate bundle, as
 * GET /v1/certificates serves it); the checkpoint is of the origin, signed by one of the context's
 * log keys named by it and cosigned by the witness quorum; the header's text is the entry the
 * proof names. How fresh the header is does not matter. *info (may be NULL) is zeroed, then
 * filled as far as the check went. Returns DIRAUTH_SUCCESS; DIRAUTH_E_MALFORMED (not a proof file,
 * no extra, an extra that is no header note, larger than one, a certificate bundle that does not
 * parse), DIRAUTH_E_TRUST (a namespace the bundle does not pin, no log key of the origin pinned,
 * pins that cannot be met), DIRAUTH_E_MISMATCH (an origin other than the bundle's),
 * DIRAUTH_E_SIGNATURE (the threshold not met, a signature or certificate that does not verify),
 * DIRAUTH_E_LOG (the checkpoint or the inclusion), DIRAUTH_E_NOMEM, DIRAUTH_E_INTERNAL,
 * DIRAUTH_E_ARGUMENT. Each detail starts with the part that refused: "proof: ", "header: ",
 * "certificates: ", "checkpoint: " or "inclusion: ". */
DIRAUTH_EXPORT enum dirauth_status
dirauth_verify_proof_file(const struct dirauth_context *context, const uint8_t *certificates,
                          size_t certificates_len, const uint8_t *proof, size_t proof_len,
                          struct dirauth_proof_info *info, struct dirauth_result *result);

#ifdef __cplusplus
}
#endif

#endif
