/*
 * peer_client.h: the one bounded client for everything an authority asks of the other members of
 * its authority set (docs/protocol.md), over net/.
 *
 * A peer is another operator's process: it may be down, slow, hostile or wrong. So every
 * operation here is bounded in every dimension a peer controls:
 *   - time: the whole operation, every attempt and every wait between them, ends within
 *     peers.timeout_seconds of the configuration, and each connection is given at most
 *     peers.connect_timeout_seconds;
 *   - size: each operation has its own answer cap (PEER_*_MAX below, or the configuration's
 *     bounds); an answer past it is cut the moment the cap is passed (or refused from its
 *     Content-Length) and reported as PEER_TRANSPORT_TOO_LARGE, its bytes not kept;
 *   - retries: up to peers.retries more attempts, after a transport failure (refused, cut, timed
 *     out) or a 5xx answer only, never after a 4xx (429 included) or a 3xx; the wait before retry
 *     r is drawn by net_backoff_delay_ms from the operating system's random source, in the upper
 *     half of [0, base * 2^(r-1)] capped, so that n authorities failing together come back
 *     spread out rather than as a herd;
 *   - redirects are never followed: a 3xx is an answer like any other, reported with its status,
 *     and the Location is never asked for.
 *
 * The routes are exactly those of docs/protocol.md and docs/api.md; names that stand in a path
 * (namespace, member name) are refused before anything is sent when they could change the path
 * ('/', '?', '#', '%', anything outside printable ASCII, "." or ".."), since the server decodes
 * nothing and curl would squash dot segments.
 *
 * Whether an answer is good news is the caller's to judge from its status and error code (a
 * `409 too_late` to a vote push is an answer, not a failure of this client). What this client
 * says is only how the exchange went: struct peer_answer.
 *
 * Broadcast: peers_broadcast sends one call to every other member at once, one thread per member
 * (at most CONFIG_MAX_MEMBERS - 1), and returns when every member has answered or run out of its
 * timeout, so a broadcast costs at most about one peers.timeout_seconds however many peers hang.
 * A caller that must act on each answer as soon as it is there (count signatures as they come)
 * gives an on_answer callback, which each member's thread calls the moment that member's
 * exchange ends: a hanging peer then delays nobody's answer but its own. A caller that must not
 * wait at all starts the broadcast with peers_broadcast_start and collects it later with
 * peers_broadcast_finish; there is no fire-and-forget form, because threads that outlive their
 * caller's knowledge cannot be stopped cleanly at shutdown.
 *
 * Caveats:
 *   - net_global_init must have run before the first operation (dirauthd's main does it).
 *   - A client is immutable after peer_client_new and may be used by any number of threads at
 *     once; it must outlive every operation and every broadcast started on it.
 *   - The member indexes are those of config->members; this authority's own index may be called
 *     (nothing here refuses it) but a broadcast skips it.
 */
#ifndef DIRAUTH_SERVER_PEERS_PEER_CLIENT_H
#define DIRAUTH_SERVER_PEERS_PEER_CLIENT_H

#include "schema/buffer.h"
#include "schema/registration.h"
#include "server/config/config.h"
#include "net/error_answer.h"

#include <stddef.h>
#include <stdint.h>

#define PEER_ACK_MAX          (16 * 1024)  /* the answer to a push: a status or a JSON error */
#define PEER_CERTIFICATES_MAX (256 * 1024) /* GET /v1/certificates */
#define PEER_STATEMENT_MAX    (4 * 1024)   /* GET /v1/<ns>/statements/<sha256>: one note (2 KiB at most) */
#define PEER_REASON_MAX       384
#define PEER_HEADER_VALUE_MAX 128
#define PEER_RETRY_BASE_MS    250u  /* the ceiling of the first wait, doubled for each later one */
#define PEER_RETRY_MAX_MS     4000u /* no wait is longer */

/* How one exchange went. */
enum peer_transport {
	PEER_TRANSPORT_ANSWERED = 0, /* an HTTP answer within the cap, whatever its status */
	PEER_TRANSPORT_UNREACHABLE,  /* refused, name not resolved, connection cut */
	PEER_TRANSPORT_TIMEOUT,      /* the last attempt ran out of its time (connect or total) */
	PEER_TRANSPORT_TOO_LARGE,    /* the answer passed its cap; nothing kept */
	PEER_TRANSPORT_FAILED,       /* anything else: TLS, a URL curl refuses, memory, no thread */
	PEER_TRANSPORT_SKIPPED,      /* a broadcast did not send to this member (itself, not a target) */
};

/* What came back from one member. Initialise with peer_answer_init, free with peer_answer_free;
 * every operation empties it first. */
struct peer_answer {
	enum peer_transport transport;
	long status;                                  /* of the last attempt; 0 without an answer */
	char error_code[NET_ERROR_CODE_MAX + 1];      /* of a JSON error answer (status ≥ 300), or "" */
	struct buffer body;                           /* owned; the answer's bytes as served, ≤ the cap */
	char content_type[PEER_HEADER_VALUE_MAX];     /* "" if none */
	char content_encoding[PEER_HEADER_VALUE_MAX]; /* "" if none; only bodies are encoded */
	unsigned attempts;                            /* attempts made (0: nothing was sent) */
	char reason[PEER_REASON_MAX];                 /* for a log: what went wrong, or "" */
};

/* What the client may be told beyond the configuration. Zeroed: the defaults. */
struct peer_client_options {
	uint32_t retry_base_ms; /* 0: PEER_RETRY_BASE_MS */
	uint32_t retry_max_ms;  /* 0: PEER_RETRY_MAX_MS */
	const char *ca_file;    /* PEM CA file for https peers (copied); NULL: the system's store */
	const char *user_agent; /* copied; NULL: net's default */
};

enum peer_operation {
	PEER_PUSH_VOTE,           /* POST /v1/<ns>/votes, body the vote envelope */
	PEER_PULL_VOTE,           /* GET /v1/<ns>/votes/<epoch>/<voter> */
	PEER_PUSH_SIGNATURE,      /* POST /v1/<ns>/signatures, body the signed header note */
	PEER_PULL_SIGNATURES,     /* GET /v1/<ns>/signatures/<epoch> */
	PEER_FETCH_REGISTRATION,  /* GET /v1/<ns>/registrations/<service id hex>/<sequence> */
	PEER_FETCH_CERTIFICATES,  /* GET /v1/certificates */
	PEER_FETCH_LATEST_HEADER, /* GET /v1/<ns>/snapshots/latest */
	PEER_FETCH_HEADER,        /* GET /v1/<ns>/snapshots/<epoch> */
	PEER_FETCH_BODY,          /* GET /v1/<ns>/snapshots/<epoch>/body, Accept-Encoding: zstd, gzip */
	PEER_ADD_CHECKPOINT,      /* POST /v1/<ns>/log/add-checkpoint (c2sp.org/tlog-witness), body the
	                             request; answered with cosignature lines (PEER_ACK_MAX) */
	PEER_FETCH_STATEMENT,     /* GET /v1/<ns>/statements/<sha256 hex>: a health statement or revocation
	                             note (PEER_STATEMENT_MAX) */
	PEER_OPERATION_COUNT
};

/* One operation and its arguments; the fields an operation does not use are ignored. Borrowed
 * for the duration of the call (peers_broadcast_start copies it). */
struct peer_call {
	enum peer_operation operation;
	const char *namespace_name;          /* every operation but certificates */
	uint64_t epoch;                      /* pull vote, pull signatures, header, body */
	const char *voter;                   /* pull vote: the member whose vote */
	uint8_t service_id[SERVICE_ID_SIZE]; /* registration */
	uint64_t sequence;                   /* registration */
	uint8_t digest[32];                  /* statement: the note's SHA-256 */
	const uint8_t *body;                 /* pushes: the envelope or the note */
	size_t body_len;
};

struct peer_client;

/* A client for config's authority set: copies each member's name and URL, this authority's
 * index, the peers section and the bounds the answer caps come from (config may be freed after).
 * options may be NULL. *out gets the client (NULL on failure). Returns 0; DIRAUTH_ERR_CONFIG (no
 * member, a self_index out of range); DIRAUTH_ERR_NOMEM. */
int peer_client_new(const struct config *config, const struct peer_client_options *options,
                    struct peer_client **out);

/* Frees a client. Accepts NULL. No operation or broadcast may be running on it. */
void peer_client_free(struct peer_client *client);

/* The number of members, and this authority's index among them. */
size_t peer_client_member_count(const struct peer_client *client);
size_t peer_client_self_index(const struct peer_client *client);

/* The answer cap of an operation for this client (PEER_ACK_MAX for pushes, PEER_CERTIFICATES_MAX,
 * VERIFY_HEADER_NOTE_MAX-sized for headers, the configuration's bounds for votes, registrations
 * and bodies); 0 for an operation out of range. */
size_t peer_client_answer_cap(const struct peer_client *client, enum peer_operation operation);

void peer_answer_init(struct peer_answer *answer);

/* Frees the answer's body. Accepts NULL. */
void peer_answer_free(struct peer_answer *answer);

/* Performs call against member. answer (initialised) is emptied first, then filled with how the
 * exchange went; answer->reason says why in words when it failed.
 * Returns 0 when the member answered within the cap (any HTTP status: the caller judges it; a 5xx
 *   left after the last attempt, or a 3xx, is such an answer), or:
 *   DIRAUTH_ERR_UNAVAILABLE  unreachable or timed out (answer->transport says which);
 *   DIRAUTH_ERR_BOUNDS       the answer passed the operation's cap (PEER_TRANSPORT_TOO_LARGE);
 *   DIRAUTH_ERR_IO           another transfer failure, e.g. an https certificate that does not
 *                            verify (PEER_TRANSPORT_FAILED);
 *   DIRAUTH_ERR_SYNTAX       a namespace or voter name that cannot stand in a path, or a push
 *                            without a body; nothing was sent (attempts 0);
 *   DIRAUTH_ERR_NOT_FOUND    member is not an index of the set; nothing was sent;
 *   DIRAUTH_ERR_CONFIG       the operation is out of range, or net refused the member's URL;
 *   DIRAUTH_ERR_NOMEM. */
int peer_client_call(const struct peer_client *client, size_t member, const struct peer_call *call,
                     struct peer_answer *answer);

/* The operations one by one: peer_client_call with the call they describe; same returns. */
int peer_push_vote(const struct peer_client *client, size_t member, const char *namespace_name,
                   const uint8_t *envelope, size_t envelope_len, struct peer_answer *answer);
int peer_pull_vote(const struct peer_client *client, size_t member, const char *namespace_name,
                   uint64_t epoch, const char *voter, struct peer_answer *answer);
int peer_push_signature(const struct peer_client *client, size_t member, const char *namespace_name,
                        const uint8_t *header_note, size_t header_note_len, struct peer_answer *answer);
int peer_pull_signatures(const struct peer_client *client, size_t member, const char *namespace_name,
                         uint64_t epoch, struct peer_answer *answer);
int peer_fetch_registration(const struct peer_client *client, size_t member, const char *namespace_name,
                            const uint8_t service_id[SERVICE_ID_SIZE], uint64_t sequence,
                            struct peer_answer *answer);
int peer_fetch_certificates(const struct peer_client *client, size_t member, struct peer_answer *answer);
int peer_fetch_statement(const struct peer_client *client, size_t member, const char *namespace_name,
                         const uint8_t digest[32], struct peer_answer *answer);
int peer_fetch_latest_header(const struct peer_client *client, size_t member, const char *namespace_name,
                             struct peer_answer *answer);
int peer_fetch_header(const struct peer_client *client, size_t member, const char *namespace_name,
                      uint64_t epoch, struct peer_answer *answer);
/* The body as served: answer->content_encoding names its encoding ("zstd", "gzip", or "" for
 * identity); verify/snapshot.h decodes it with the header's body-size as its bound. */
int peer_fetch_body(const struct peer_client *client, size_t member, const char *namespace_name,
                    uint64_t epoch, struct peer_answer *answer);

/* Called by a broadcast in the thread of member as soon as member's exchange ended, with its
 * answer (borrowed for the call; it is also what peers_broadcast_finish hands over). Runs
 * concurrently with the calls for other members: it must be thread-safe, and quick. */
typedef void (*peers_answer_callback)(void *context, size_t member, const struct peer_answer *answer);

struct peers_broadcast_options {
	const uint8_t *targets; /* per member: nonzero to send; NULL: every member but this authority */
	peers_answer_callback on_answer; /* may be NULL */
	void *context;
};

struct peers_broadcast;

/* Starts call against every target member (this authority never) at once, one thread each, and
 * returns without waiting. The call is copied (its strings and body too); options may be NULL.
 * *out gets the broadcast, which the caller must end with peers_broadcast_finish.
 * Returns 0; DIRAUTH_ERR_SYNTAX or DIRAUTH_ERR_CONFIG for a call peer_client_call would refuse
 * before sending (nothing is started); DIRAUTH_ERR_NOMEM. A member whose thread cannot start is
 * answered PEER_TRANSPORT_FAILED ("cannot start a thread"), the others run. */
int peers_broadcast_start(const struct peer_client *client, const struct peer_call *call,
                          const struct peers_broadcast_options *options, struct peers_broadcast **out);

/* Waits until every member of the broadcast answered or timed out (at most about
 * peers.timeout_seconds after the start), moves each member's answer into answers[member] (an
 * array of at least peer_client_member_count entries, each overwritten without being freed;
 * members not sent to are PEER_TRANSPORT_SKIPPED, attempts 0), and frees the broadcast. answers
 * may be NULL to drop them. Accepts a NULL broadcast (and does nothing). Never fails. */
void peers_broadcast_finish(struct peers_broadcast *broadcast, struct peer_answer *answers);

/* peers_broadcast_start then peers_broadcast_finish: returns when every member has answered or
 * timed out. Returns as peers_broadcast_start (on failure answers are all SKIPPED). */
int peers_broadcast(const struct peer_client *client, const struct peer_call *call,
                    const struct peers_broadcast_options *options, struct peer_answer *answers);

/* Frees count answers (e.g. a broadcast's). Accepts NULL. */
void peer_answers_free(struct peer_answer *answers, size_t count);

/* "answered", "unreachable", "timeout", "too_large", "failed", "skipped". Never NULL. */
const char *peer_transport_name(enum peer_transport transport);

#endif
