/*
 * consensus.h: the consensus rule: the votes of one namespace and epoch in, the snapshot header
 * text and body bytes out. The rule is specified in consensus/consensus.md; this header is its
 * contract in C.
 *
 * Every honest authority runs consensus_compute() on the votes it holds after the vote
 * deadline. The rule is a pure function of its inputs, so authorities holding the same votes
 * (and able to supply the same registration notes) compute the same header and body bytes, sign
 * the same header text, and k of their signatures make the snapshot. The rule is versioned: the
 * snapshot header's consensus-method names the method that computed it, and a change of rule is
 * a new method number in the method table of consensus.c, never an edit of an existing method.
 *
 * Method 1 (registrations only), in the order the function applies it:
 *   (a) fewer than k valid votes: no consensus;
 *   (b) the method is the highest method this code implements that at least k votes support;
 *   (c) the (previous epoch, previous digest) named by at least k votes; votes naming another do
 *       not count further;
 *   (d) per service id held by any counting vote: the versions the counting votes hold, sorted by
 *       descending (sequence, registration digest), an absent version lowest; fewer than k
 *       holders leave the service out; otherwise the k-th of that order is chosen;
 *   (e) each chosen version's signed registration note, supplied by the caller, must hash to the
 *       chosen digest; the body is schema/snapshot.h's body of those notes, and the header
 *       commits to it.
 *
 * Method 2 (registrations, health, revocations; consensus.md, "Method 2") chooses the versions as
 * method 1 does, then:
 *   (r) the revocations: those of the previous snapshot still within revocation_epochs of the
 *       epoch that first listed them, and every revocation any vote lists whose note the caller
 *       supplies and that verifies (one vote suffices: a revocation is signed and checked here);
 *       one per target, in target order;
 *   (x) a chosen version is left out when a listed revocation revokes its service or names an
 *       endpoint its registration lists;
 *   (h) per endpoint of each published record: among the statements the counting votes list,
 *       ranked by descending (issued-at, sequence, digest), the first at which k holders of
 *       verified statements have been counted; none, or older than freshness_seconds at
 *       valid-after: unknown (no entry; a client treats it as unavailable).
 *
 * What the caller does before: verify each vote's signature and certification, keep at most one
 * vote per authority, load each body with consensus_vote_body_load() (its SHA-256 against the
 * vote's body-sha256), and fetch from its peers every registration note a vote lists that it
 * lacks and that passes its own checks. The function still refuses votes it must not count (for
 * another namespace, origin or epoch, two votes of one authority, inconsistent or ill-formed
 * votes), so that a caller's mistake is an error and never a different snapshot.
 *
 * The body is written as it is chosen, piece by piece, to the caller's writer
 * (consensus_compute_streamed; consensus_compute collects it in the result), and each note is
 * needed only while its record or entry is judged and written, so the computation itself holds
 * neither the body nor the notes. It does not keep the chosen versions either: it walks the votes'
 * record lines once to judge and count what it chooses and once more to write it. A vote's lines
 * may come from the caller's reader instead of a body in memory (struct consensus_record_lines),
 * so that a single authority's own vote at a million records is never held whole: the records'
 * memory is then a page of the caller's, whatever their number. Method 2 holds the votes' health
 * and revocation lines and the health entries it publishes.
 *
 * No I/O, no clock, no threads, no globals: notes come through the caller's callbacks, the body
 * goes out through the caller's writer.
 */
#ifndef DIRAUTH_CONSENSUS_CONSENSUS_H
#define DIRAUTH_CONSENSUS_CONSENSUS_H

#include "base/buffer.h"
#include "schema/health.h"
#include "schema/note.h"
#include "schema/registration.h"
#include "schedule/schedule.h"
#include "schema/snapshot.h"
#include "schema/vote.h"
#include "schema/vote_body.h"

#include <stddef.h>
#include <stdint.h>

#define CONSENSUS_AUTHORITIES_MAX  32 /* n: authorities in one set, at most */
#define CONSENSUS_VOTE_METHODS_MAX 16 /* consensus methods one vote may list */

/* The consensus methods; the table in consensus.c says which are implemented. */
#define CONSENSUS_METHOD_REGISTRATIONS 1 /* method 1: registrations only */
#define CONSENSUS_METHOD_LIFECYCLE     2 /* method 2: registrations, health, revocations */

/* A vote's record lines read from where the caller keeps them instead of from its body's array:
 * a single authority's own vote, read from its store a page at a time, is never held whole.
 * record() fills *out with the line at index (0 <= index < the body's record_count) and returns
 * 0, or a negative code that stops the computation (CONSENSUS_FAILED). The computation reads the
 * lines in ascending order of index, from 0 again at each of its walks (at most three), and
 * checks each as it reads it, as it checks a body's array before it starts: sequence >= 1,
 * service ids strictly ascending (CONSENSUS_BAD_VOTE otherwise). The lines must be the same at
 * every walk. */
struct consensus_record_lines {
	int (*record)(void *context, size_t index, struct vote_body_record *out);
	void *context;
};

/* One valid vote and the inputs its text will carry as lines (consensus.md, "Vote inputs"). */
struct consensus_vote {
	const struct vote *vote;      /* the parsed vote text; its signature checked by the caller */
	const struct vote_body *body; /* the parsed body it commits to (consensus_vote_body_load) */
	/* Its record lines, when not body->records (which is then NULL; body->record_count is still
	 * their number); NULL otherwise. */
	const struct consensus_record_lines *lines;
	uint64_t previous_epoch; /* the epoch of the snapshot it names as previous; 0 for none */
	uint8_t previous[32];    /* SHA-256 of that snapshot's header text; 32 zeros for none */
	size_t method_count;     /* 1..CONSENSUS_VOTE_METHODS_MAX */
	uint64_t methods[CONSENSUS_VOTE_METHODS_MAX]; /* strictly ascending, each ≥ 1 */
};

/* Fills *out from a parsed vote and its loaded body: the previous and the methods come from the
 * vote's own lines. Never fails. */
void consensus_vote_init(struct consensus_vote *out, const struct vote *vote, const struct vote_body *body);

/* Method 2's source of health statement notes. Called for a statement that counting votes list for
 * endpoint endpoint_id of service_id, whose chosen registration version the snapshot publishes,
 * with the (issued-at, sequence, digest) the votes list. Returns 0 with *note and *note_len set to
 * the signed statement note whose SHA-256 is digest, after the caller checked it as its intake
 * does (the registration's provider enrolled, the statement for that endpoint); consensus then
 * checks the digest, the fields and the signature against the chosen registration itself. The
 * bytes are borrowed until the next call of any of the caller's callbacks or until the computation
 * returns. A published statement is asked for twice, once to judge it and once to write it: the
 * caller gives the same bytes (other bytes stop the computation: CONSENSUS_FAILED). Returns
 * DIRAUTH_ERR_NOT_FOUND when the
 * caller has no such note; a judged refusal (DIRAUTH_ERR_REFUSED, _SIGNATURE, _UNKNOWN_KEY,
 * _MISMATCH, _SYNTAX, _BOUNDS, _STALE) leaves the statement uncounted; any other code means the
 * check could not run and stops the computation (CONSENSUS_FAILED). */
typedef int (*consensus_health_fn)(void *context, const uint8_t service_id[SERVICE_ID_SIZE],
                                   const uint8_t endpoint_id[ENDPOINT_ID_SIZE], uint64_t issued_at,
                                   uint64_t sequence, const uint8_t digest[32], const uint8_t **note,
                                   size_t *note_len);

/* Method 2's source of revocation notes. Called for a revocation a vote lists (of service_id;
 * endpoint_id NULL for the whole service) that the previous snapshot does not already list for
 * that target. Returns 0 with the signed revocation note whose SHA-256 is digest, after the
 * caller checked that its key may revoke it: the service's enrolled provider (a provider
 * revocation; of an endpoint the provider registered under that service) or an operator key
 * listed in the caller's configuration (an operator revocation). Consensus then checks the
 * digest, the namespace, the target and the note's own signature. Borrowed until
 * consensus_compute returns. DIRAUTH_ERR_NOT_FOUND or a judged refusal (as for
 * consensus_health_fn) leaves the revocation out, so that one vote listing a revocation nobody
 * can supply cannot stop an epoch; any other code stops the computation (CONSENSUS_FAILED). */
typedef int (*consensus_revocation_fn)(void *context, const uint8_t service_id[SERVICE_ID_SIZE],
                                       const uint8_t *endpoint_id, const uint8_t digest[32],
                                       const uint8_t **note, size_t *note_len);

/* Method 2's inputs beyond method 1's (consensus.md, "Method 2"). The previous snapshot is the
 * one the caller holds for the (previous epoch, previous digest) it expects the votes to name: if
 * the votes agree on another one, the computation stops with CONSENSUS_PREVIOUS_MISSING, and the
 * caller fetches that one from its peers. Everything here but the callbacks and their context is
 * the same at every authority of the set. */
struct consensus_lifecycle {
	uint64_t freshness_seconds;     /* health older than this at valid-after is unknown: 2 epochs by
	                                   default; >= 1 */
	uint64_t revocation_epochs;     /* epochs a revocation stays listed, counted from the first snapshot
	                                   that listed it: at least the schedule's validity_epochs; >= 1 */
	size_t max_health;              /* health entries of the result, and health lines of a vote */
	size_t max_revocations;         /* revocation entries of the result, and revocation lines of a vote */
	const uint8_t *previous_header; /* the previous snapshot's header text (no signature lines);
	                                   NULL when the caller holds none */
	size_t previous_header_len;
	const uint8_t *previous_body; /* its body, when its consensus-method is 2; borrowed */
	size_t previous_body_len;
	consensus_health_fn health;
	consensus_revocation_fn revocation;
	void *context; /* for health and revocation */
};

/* The epoch's inputs that do not come from votes. Every authority of the set uses the same. */
struct consensus_params {
	const char *namespace_name;
	const char *origin;
	uint64_t epoch;
	struct epoch_times times; /* schedule_epoch_times() of epoch */
	size_t threshold;         /* k: more than half of authorities */
	size_t authorities;       /* n: 1..CONSENSUS_AUTHORITIES_MAX */
	size_t max_records;       /* records per snapshot, the bound of every vote body and of the result */
	size_t max_body_bytes;    /* the bound of the uncompressed snapshot body, ≥ 1 */
	/* Method 2's inputs; NULL when the caller supplies none (then a method-2 computation is
	 * CONSENSUS_BAD_PARAMETERS; method 1 never reads it). */
	const struct consensus_lifecycle *lifecycle;
};

/* The caller's source of registration notes. Called for each chosen version, in ascending
 * service id order, with the version consensus chose: once by method 1; by method 2 once to judge
 * it and, when it is published, once more to write it (the same bytes each time; the digest is
 * checked each time). Returns 0 with *note and *note_len set to the signed registration note whose
 * SHA-256 is digest, after the caller checked it (provider signature, the provider's enrolment,
 * namespace, service id and sequence as given, expires > the epoch's valid-after); the bytes are
 * borrowed and must stay valid and unchanged until the next call of any of the caller's callbacks
 * or until the computation returns. Returns DIRAUTH_ERR_NOT_FOUND when the caller has no such
 * note, or any other negative code when the note fails the caller's checks or they cannot run. */
typedef int (*consensus_note_fn)(void *context, const uint8_t service_id[SERVICE_ID_SIZE], uint64_t sequence,
                                 const uint8_t digest[32], const uint8_t **note, size_t *note_len);

/* Method 2: an endpoint's published health, and the statement it traces to. */
struct consensus_health {
	uint8_t service_id[SERVICE_ID_SIZE];
	uint8_t endpoint_id[ENDPOINT_ID_SIZE];
	enum health_class health_class;
	enum health_signer signer;
	uint64_t issued_at;
	uint64_t sequence;
	uint8_t digest[32]; /* SHA-256 of the statement note */
	size_t holders;     /* counting votes that list this statement */
};

/* Method 2: a listed revocation. */
struct consensus_revocation {
	uint8_t service_id[SERVICE_ID_SIZE];
	int has_endpoint; /* 0: the whole service */
	uint8_t endpoint_id[ENDPOINT_ID_SIZE];
	uint64_t since;     /* the epoch of the first snapshot that listed it */
	uint8_t digest[32]; /* SHA-256 of the revocation note */
	int carried;        /* 1: from the previous snapshot; 0: new in this epoch */
};

/* The snapshot the votes agree on. Everything is owned by the result. */
struct consensus_result {
	uint64_t method;               /* the consensus method that computed it */
	uint64_t previous_epoch;       /* the previous both agreed on ... */
	uint8_t previous[32];          /* ... (also header.previous) */
	size_t counting_votes;         /* votes that named that previous */
	size_t record_count;           /* the published records (their notes are in the body) */
	struct snapshot_header header; /* the header's values */
	struct buffer header_text;     /* snapshot_header_encode(header): what authorities sign */
	/* The snapshot body the header commits to; empty after consensus_compute_streamed, whose
	 * writer got it. */
	struct buffer body;
	/* Method 2 (0 and NULL for method 1): the published health entries and listed revocations,
	 * in body order, and the chosen versions left out because a listed revocation excludes them
	 * (ascending by service id; record_count above counts the published ones only). */
	size_t health_count;
	struct consensus_health *health;
	size_t revocation_count;
	struct consensus_revocation *revocations;
	size_t excluded_count;
	struct vote_body_record *excluded;
};

/* Why consensus_compute did not produce a snapshot; each is a distinct code, with the
 * dirauth_error it returns. */
enum consensus_outcome {
	CONSENSUS_OK = 0,
	CONSENSUS_TOO_FEW_VOTES, /* (a) fewer than k votes: DIRAUTH_ERR_THRESHOLD */
	CONSENSUS_NO_METHOD,     /* (b) no known method supported by k votes: DIRAUTH_ERR_THRESHOLD */
	CONSENSUS_NO_PREVIOUS,   /* (c) no previous named by k votes: DIRAUTH_ERR_THRESHOLD */
	CONSENSUS_NOTE_MISSING,  /* (e) the caller has no note for a chosen version: DIRAUTH_ERR_NOT_FOUND */
	CONSENSUS_NOTE_REFUSED, /* (e) the note fails the caller's check or the digest: DIRAUTH_ERR_REFUSED */
	CONSENSUS_TOO_MANY_RECORDS,    /* more chosen records than max_records: DIRAUTH_ERR_BOUNDS */
	CONSENSUS_BODY_TOO_LARGE,      /* the body exceeds max_body_bytes: DIRAUTH_ERR_BOUNDS */
	CONSENSUS_TOO_MANY_STATEMENTS, /* method 2: more health entries than max_health or revocations
	                                  than max_revocations: DIRAUTH_ERR_BOUNDS */
	CONSENSUS_PREVIOUS_MISSING,    /* method 2: the caller does not hold the previous snapshot the votes
	                                  name, or it is not what its header commits to:
	                                  DIRAUTH_ERR_NOT_FOUND */
	CONSENSUS_BAD_PARAMETERS,      /* params out of range, k not a majority, more votes than n:
	                                  DIRAUTH_ERR_CONFIG */
	CONSENSUS_OTHER_NAMESPACE, /* a vote or body for another namespace or origin: DIRAUTH_ERR_MISMATCH */
	CONSENSUS_OTHER_EPOCH,     /* a vote or body for another epoch: DIRAUTH_ERR_MISMATCH */
	CONSENSUS_DUPLICATE_AUTHORITY, /* two votes name one authority: DIRAUTH_ERR_EXISTS */
	CONSENSUS_BAD_VOTE, /* an ill-formed or inconsistent vote: DIRAUTH_ERR_SYNTAX, _MISMATCH or _BOUNDS */
	CONSENSUS_FAILED,   /* the computation could not run: DIRAUTH_ERR_NOMEM, _CRYPTO, _INTERNAL */
};

/* What went wrong, for logs and tests. Fields not listed for an outcome are zero. */
struct consensus_failure {
	enum consensus_outcome outcome;
	int cause;         /* the dirauth_error behind it; for NOTE_REFUSED the callback's code, or
	                      DIRAUTH_ERR_MISMATCH (digest), _BOUNDS or _SYNTAX (length) */
	size_t vote_index; /* OTHER_*, DUPLICATE_AUTHORITY, BAD_VOTE: the vote refused; NOTE_*: the
	                      first counting vote that holds the chosen version */
	char authority[NOTE_NAME_MAX + 1]; /* that vote's authority, when it has one */
	size_t held;     /* TOO_FEW_VOTES: votes given; NO_METHOD: votes supporting method 1;
	                    NO_PREVIOUS: the most votes naming one previous; TOO_MANY_RECORDS:
	                    records chosen so far; TOO_MANY_STATEMENTS: entries chosen so far */
	size_t required; /* k, or max_records for TOO_MANY_RECORDS, or the bound for
	                    TOO_MANY_STATEMENTS */
	uint8_t service_id[SERVICE_ID_SIZE]; /* NOTE_*: the chosen version's service ... */
	uint64_t sequence;                   /* ... sequence ... */
	uint8_t digest[32];                  /* ... and registration digest */
};

/* Checks a vote body against its vote and parses it: SHA-256(body) must be the vote's
 * body-sha256 (DIRAUTH_ERR_MISMATCH), the body must parse under max_records
 * (vote_body_parse: DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_BOUNDS), and its namespace, epoch,
 * authority and record count must be the vote's (DIRAUTH_ERR_MISMATCH). On success *out is a
 * new body (vote_body_free); on error NULL. Also DIRAUTH_ERR_NOMEM, DIRAUTH_ERR_CRYPTO. */
int consensus_vote_body_load(const struct vote *vote, const uint8_t *body, size_t body_len,
                             size_t max_records, struct vote_body **out);

/* consensus_vote_body_load for a body that may carry method 2's sections: the same checks, with
 * vote_body_parse_sections under limits. Same errors. */
int consensus_vote_body_load_sections(const struct vote *vote, const uint8_t *body, size_t body_len,
                                      const struct vote_body_limits *limits, struct vote_body **out);

/* Computes the snapshot of params' namespace and epoch from votes (vote_count of them, the
 * caller's array; their order does not change the result). On success fills *out (free with
 * consensus_result_clear) and returns 0. Otherwise *out is empty, failure (may be NULL) says
 * why, and the return is the outcome's dirauth_error (enum consensus_outcome lists them).
 * note is called only after every vote was judged and the chosen versions are known. */
int consensus_compute(const struct consensus_params *params, const struct consensus_vote *votes,
                      size_t vote_count, consensus_note_fn note, void *note_context,
                      struct consensus_result *out, struct consensus_failure *failure);

/* The caller's writer of the snapshot body: called with consecutive pieces of it, in order (their
 * concatenation is the body the header commits to). Returns 0, or a negative code that stops the
 * computation (CONSENSUS_FAILED with that cause). After a refusal of any kind the pieces written
 * are not a snapshot body: the caller discards them. */
typedef int (*consensus_body_fn)(void *context, const uint8_t *bytes, size_t len);

/* consensus_compute, with the body written through body (body_context its context) as it is
 * chosen instead of collected: on success out->body is empty and out->header (record count,
 * records root, body size, body digest) and out->header_text commit to the bytes written, which
 * are those consensus_compute would have put in out->body. Same returns. */
int consensus_compute_streamed(const struct consensus_params *params, const struct consensus_vote *votes,
                               size_t vote_count, consensus_note_fn note, void *note_context,
                               consensus_body_fn body, void *body_context, struct consensus_result *out,
                               struct consensus_failure *failure);

/* The revocation window (consensus.md, "Method 2"): 1 when a revocation first listed in the
 * snapshot of epoch since is still listed by the snapshot of epoch, that is since <= epoch <
 * since + revocation_epochs; else 0. What an authority votes and what the rule carries both
 * follow it. */
int consensus_revocation_is_listed(uint64_t since, uint64_t epoch, uint64_t revocation_epochs);

/* Frees what a result owns and zeroes it. Accepts NULL and a zeroed result. */
void consensus_result_clear(struct consensus_result *result);

/* 1 when this code implements method, else 0. */
int consensus_method_is_known(uint64_t method);

/* The methods this code implements, strictly ascending: what an authority running it lists in
 * its vote. *count gets their number. Static storage. */
const uint64_t *consensus_methods_known(size_t *count);

/* A stable lower-case name for an outcome ("too-few-votes", ...); "unknown" when out of range. */
const char *consensus_outcome_name(enum consensus_outcome outcome);

/* Writes one sentence about failure into out (capacity cap, NUL-terminated, truncated), e.g.
 * "no consensus: 1 valid vote, the threshold is 2". Nothing when out is NULL or cap is 0. */
void consensus_failure_describe(const struct consensus_failure *failure, char *out, size_t cap);

#endif
