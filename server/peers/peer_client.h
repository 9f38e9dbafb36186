/*
 * peer_client.h: the one bounded client for everything an authority asks of the other members of
 * its authority set (docs/protocol.md), over net/.
 *
 * A peer is another operator's process: it may be down, slow, hostile or wrong. So every
 * operation here is bounded in every dimension a peer controls:
 *   - time: the whole operation, every attempt and every wait between them (for a free
 *     connection too), ends within peers.timeout_seconds of the configuration, or by the call's
 *     own deadline if that comes first, and each connection is given at most
 *     peers.connect_timeout_seconds;
 *   - size: each operation has its own answer cap (PEER_*_MAX below, or the configuration's
 *     bounds); an answer past it, on the wire or as it inflates, is cut the moment the cap is
 *     passed (or refused from its Content-Length) and reported as PEER_TRANSPORT_TOO_LARGE, its
 *     bytes not kept;
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
 * Connections: each member has its own pool of kept-alive connections (net/pool.h), at most
 * authorities.connections_per_peer of them; an operation takes one (opening it, or resuming a TLS
 * session, only when none is kept), and one beyond the bound waits for a free one within the
 * operation's time. The authorities of a set are 150 to 300 ms apart: a kept connection saves the
 * TCP and TLS round trips of every request but the first.
 *
 * Compression, both ways (docs/protocol.md, "Connections and compression between authorities"):
 *   - every operation but PEER_FETCH_BODY asks for `Accept-Encoding: zstd`; an answer that comes
 *     as zstd is decoded here, bounded by the operation's cap while it inflates (a bomb is cut and
 *     reported PEER_TRANSPORT_TOO_LARGE), so answer->body always holds plain bytes;
 *     answer->wire_bytes says what came over the wire. Any other Content-Encoding is a failed
 *     answer. PEER_FETCH_BODY asks for "zstd, gzip" and hands the body over as served: its
 *     caller decodes it with the header's bounds;
 *   - a vote or signature push, or a notes request, of PEER_COMPRESS_MIN bytes or more is sent
 *     with `Content-Encoding: zstd`, compressed once per call (a broadcast compresses once for
 *     all its members). A peer that answers 415 (`unsupported_encoding`: an authority from before
 *     request bodies were compressed, or a route that takes none) is sent the same call once more
 *     as it is, within the same time.
 *
 * Broadcast: peers_broadcast sends one call to every other member at once, one thread per member
 * (at most CONFIG_MAX_MEMBERS - 1), and returns when every member has answered or run out of its
 * timeout, so a broadcast costs at most about one peers.timeout_seconds however many peers hang.
 * peers_call_each does the same with a call of its own for each member. A caller that must act on
 * each answer as soon as it is there (count signatures as they come) gives an on_answer callback,
 * which each member's thread calls the moment that member's exchange ends: a hanging peer then
 * delays nobody's answer but its own. A caller that must not wait at all starts the broadcast
 * with peers_broadcast_start and collects it later with peers_broadcast_finish; there is no
 * fire-and-forget form, because threads that outlive their caller's knowledge cannot be stopped
 * cleanly at shutdown.
 *
 * A simulation (many authorities in one process, a network chosen by a seed) gives the client a
 * transport (struct peer_transport) instead of HTTP: each call is checked as always, then handed
 * to the transport; broadcasts run in the caller's thread, member after member, so that a run is
 * a function of its seed, and the transport may be told which of its calls stand for calls made
 * at once, to charge their time as a network would.
 *
 * Caveats:
 *   - net_global_init must have run before the first operation (dirauthd's main does it).
 *   - A client is immutable after peer_client_new but for its pools, which lock themselves; it
 *     may be used by any number of threads at once, and must outlive every operation and every
 *     broadcast started on it.
 *   - The member indexes are those of config->members; this authority's own index may be called
 *     (nothing here refuses it) but a broadcast skips it.
 *   - A call's deadline_ms is a point on CLOCK_MONOTONIC; the transport of a simulation, whose
 *     clock is its own, judges it as it likes.
 */
#ifndef DIRAUTH_SERVER_PEERS_PEER_CLIENT_H
#define DIRAUTH_SERVER_PEERS_PEER_CLIENT_H

#include "base/buffer.h"
#include "schema/registration.h"
#include "server/config/config.h"
#include "net/error_answer.h"

#include <stddef.h>
#include <stdint.h>

#define PEER_ACK_MAX            (16 * 1024)  /* the answer to a push: a status or a JSON error */
#define PEER_CERTIFICATES_MAX   (256 * 1024) /* GET /v1/certificates */
#define PEER_STATEMENT_MAX      (4 * 1024)   /* GET /v1/<ns>/statements/<sha256>: one note (2 KiB at most) */
#define PEER_NOTES_ANSWER_MAX   (8 * 1024 * 1024) /* POST /v1/<ns>/notes, decoded */
#define PEER_HEADERS_ANSWER_MAX (4 * 1024 * 1024) /* GET /v1/<ns>/snapshots/from/<epoch>, decoded */
#define PEER_COMPRESS_MIN       1024 /* a pushed or notes body this long or longer is sent as zstd */
#define PEER_REASON_MAX         384
#define PEER_HEADER_VALUE_MAX   128
#define PEER_RETRY_BASE_MS      250u  /* the ceiling of the first wait, doubled for each later one */
#define PEER_RETRY_MAX_MS       4000u /* no wait is longer */

/* How one exchange went. */
enum peer_transport_outcome {
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
	enum peer_transport_outcome transport;
	long status;                                  /* of the last attempt; 0 without an answer */
	char error_code[NET_ERROR_CODE_MAX + 1];      /* of a JSON error answer (status ≥ 300), or "" */
	struct buffer body;                           /* owned; the answer's bytes, decoded, ≤ the cap */
	char content_type[PEER_HEADER_VALUE_MAX];     /* "" if none */
	char content_encoding[PEER_HEADER_VALUE_MAX]; /* of body as handed over: "" (plain) but for
	                                                 PEER_FETCH_BODY's, which is as served */
	size_t wire_bytes;                            /* the answer's body as received, before decoding */
	unsigned attempts;                            /* attempts made (0: nothing was sent) */
	char reason[PEER_REASON_MAX];                 /* for a log: what went wrong, or "" */
};

struct peer_call;

/* The shape of a broadcast, as a transport is told it (struct peer_transport). */
enum peer_transport_event {
	PEER_TRANSPORT_BROADCAST_BEGIN,
	PEER_TRANSPORT_BROADCAST_MEMBER,
	PEER_TRANSPORT_BROADCAST_END,
};

/* Another way to the members than HTTP, for a simulation. call fills answer (emptied before, as
 * every operation empties it) as an exchange over HTTP would, with plain bytes in its body, and
 * returns what peer_client_call returns; it is called only for a call that passed peer_client_call's
 * checks, for a member of the set. It may be called from several threads at once only if the
 * caller of the client does so (broadcasts call it in the caller's thread). */
struct peer_transport {
	int (*call)(void *context, size_t member, const struct peer_call *call, struct peer_answer *answer);
	void *context;
	/* Optional (NULL: not told). Over HTTP each member of a broadcast has a thread of its own;
	 * over a transport the members run one after another in the caller's thread. A transport
	 * that keeps time (a simulation charging each exchange to its caller) learns here which calls
	 * stand for calls made at once: PEER_TRANSPORT_BROADCAST_BEGIN before the first member,
	 * PEER_TRANSPORT_BROADCAST_MEMBER before each member's exchange (its call, its on_answer, and
	 * the calls on_answer makes: what that member's thread would do), PEER_TRANSPORT_BROADCAST_END
	 * after the last. member means something for MEMBER only. A broadcast started from an
	 * on_answer nests inside the one that called it. */
	void (*broadcast)(void *context, enum peer_transport_event event, size_t member);
};

/* What the client may be told beyond the configuration. Zeroed: the defaults. */
struct peer_client_options {
	uint32_t retry_base_ms; /* 0: PEER_RETRY_BASE_MS */
	uint32_t retry_max_ms;  /* 0: PEER_RETRY_MAX_MS */
	const char *ca_file;    /* PEM CA file for https peers (copied); NULL: the system's store */
	const char *user_agent; /* copied; NULL: net's default */
	const struct peer_transport *transport; /* copied; NULL: HTTP, over a pool per member */
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
	PEER_FETCH_NOTES,         /* POST /v1/<ns>/notes, body the request text (text/plain; charset=utf-8);
	                             answered with notes (PEER_NOTES_ANSWER_MAX) */
	PEER_FETCH_HEADERS,       /* GET /v1/<ns>/snapshots/from/<epoch>: the headers published from
	                             epoch (PEER_HEADERS_ANSWER_MAX) */
	PEER_OPERATION_COUNT
};

/* One operation and its arguments; the fields an operation does not use are ignored. Borrowed
 * for the duration of the call (peers_broadcast_start copies it). */
struct peer_call {
	enum peer_operation operation;
	const char *namespace_name;          /* every operation but certificates */
	uint64_t epoch;                      /* pull vote, pull signatures, header, body, headers */
	const char *voter;                   /* pull vote: the member whose vote */
	uint8_t service_id[SERVICE_ID_SIZE]; /* registration */
	uint64_t sequence;                   /* registration */
	uint8_t digest[32];                  /* statement: the note's SHA-256 */
	const uint8_t *body;                 /* pushes and notes: the envelope, the note, the request */
	size_t body_len;
	uint64_t deadline_ms; /* CLOCK_MONOTONIC milliseconds by which the whole operation ends, every
	                         attempt and wait included, if before its timeout; 0: none */
};

struct peer_client;

/* A client for config's authority set: copies each member's name and URL, this authority's
 * index, the peers section and the bounds the answer caps come from (config may be freed after),
 * and makes each member's pool of peers.connections_per_peer connections (0: 4) unless options
 * give a transport. options may be NULL. *out gets the client (NULL on failure). Returns 0;
 * DIRAUTH_ERR_CONFIG (no member, a self_index out of range, connections_per_peer above 64);
 * DIRAUTH_ERR_NOMEM; DIRAUTH_ERR_INTERNAL (libcurl refused a pool). */
int peer_client_new(const struct config *config, const struct peer_client_options *options,
                    struct peer_client **out);

/* Frees a client. Accepts NULL. No operation or broadcast may be running on it. */
void peer_client_free(struct peer_client *client);

/* Takes from config (a reload's, server/config/reload.h) what may change while the client runs:
 * each member's url (the same members, in the same order, as at creation), the timeouts and the
 * retries. A call that began before keeps what it began with; the next one reads the new values.
 * Thread-safe. */
void peer_client_reconfigure(struct peer_client *client, const struct config *config);

/* The number of members, and this authority's index among them. */
size_t peer_client_member_count(const struct peer_client *client);
size_t peer_client_self_index(const struct peer_client *client);

/* The answer cap of an operation for this client (PEER_ACK_MAX for pushes, PEER_CERTIFICATES_MAX,
 * VERIFY_HEADER_NOTE_MAX-sized for headers, PEER_NOTES_ANSWER_MAX, PEER_HEADERS_ANSWER_MAX, the
 * configuration's bounds for votes, registrations and bodies); 0 for an operation out of range.
 * It bounds the bytes on the wire and, for an answer that comes as zstd, the bytes decoded. */
size_t peer_client_answer_cap(const struct peer_client *client, enum peer_operation operation);

void peer_answer_init(struct peer_answer *answer);

/* Frees the answer's body. Accepts NULL. */
void peer_answer_free(struct peer_answer *answer);

/* Performs call against member (with a transport: checks it, then hands it to the transport).
 * answer (initialised) is emptied first, then filled with how the exchange went; answer->reason
 * says why in words when it failed.
 * Returns 0 when the member answered within the cap (any HTTP status: the caller judges it; a 5xx
 *   left after the last attempt, or a 3xx, is such an answer), or:
 *   DIRAUTH_ERR_UNAVAILABLE  unreachable or timed out (answer->transport says which), among them
 *                            a call whose deadline_ms had passed (PEER_TRANSPORT_TIMEOUT, nothing
 *                            sent) and one that found no free connection to member in time;
 *   DIRAUTH_ERR_BOUNDS       the answer passed the operation's cap, on the wire or decoded
 *                            (PEER_TRANSPORT_TOO_LARGE);
 *   DIRAUTH_ERR_IO           another transfer failure, e.g. an https certificate that does not
 *                            verify, or an answer in an encoding not asked for or whose zstd does
 *                            not decode (PEER_TRANSPORT_FAILED);
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
/* POST /v1/<ns>/notes with the request text; the answer decoded. */
int peer_fetch_notes(const struct peer_client *client, size_t member, const char *namespace_name,
                     const uint8_t *request, size_t request_len, struct peer_answer *answer);
/* GET /v1/<ns>/snapshots/from/<epoch>; the answer decoded. */
int peer_fetch_headers(const struct peer_client *client, size_t member, const char *namespace_name,
                       uint64_t epoch, struct peer_answer *answer);
/* The body as served: answer->content_encoding names its encoding ("zstd", "gzip", or "" for
 * identity); verify/snapshot.h decodes it with the header's body-size as its bound. */
int peer_fetch_body(const struct peer_client *client, size_t member, const char *namespace_name,
                    uint64_t epoch, struct peer_answer *answer);

/* Called by a broadcast in the thread of member as soon as member's exchange ended, with its
 * answer (borrowed for the call; it is also what peers_broadcast_finish hands over). Runs
 * concurrently with the calls for other members: it must be thread-safe, and quick. (With a
 * transport, it runs in the caller's thread, in member order.) */
typedef void (*peers_answer_callback)(void *context, size_t member, const struct peer_answer *answer);

struct peers_broadcast_options {
	const uint8_t *targets; /* per member: nonzero to send; NULL: every member but this authority */
	peers_answer_callback on_answer; /* may be NULL */
	void *context;
};

struct peers_broadcast;

/* Starts call against every target member (this authority never) at once, one thread each, and
 * returns without waiting (with a transport: makes every call in the caller's thread, in member
 * order, before it returns). The call is copied (its strings and body too), and a body to be sent
 * as zstd is compressed here, once for all members; options may be NULL. *out gets the broadcast,
 * which the caller must end with peers_broadcast_finish.
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

/* Each member its own call, all at once: calls[m] is member m's (NULL: m is skipped; this
 * authority always is), sent as a broadcast sends (options' targets, if given, skip more; its
 * on_answer is called the same way), and answers as peers_broadcast's. Calls that are one object
 * (the same pointer) are copied and compressed once. Returns when every member called has answered
 * or timed out. Returns 0; DIRAUTH_ERR_SYNTAX or DIRAUTH_ERR_CONFIG when any call is one
 * peer_client_call would refuse before sending (nothing is sent; answers are all SKIPPED);
 * DIRAUTH_ERR_NOMEM. */
int peers_call_each(const struct peer_client *client, const struct peer_call *const calls[CONFIG_MAX_MEMBERS],
                    const struct peers_broadcast_options *options, struct peer_answer *answers);

/* Frees count answers (e.g. a broadcast's). Accepts NULL. */
void peer_answers_free(struct peer_answer *answers, size_t count);

/* "answered", "unreachable", "timeout", "too_large", "failed", "skipped". Never NULL. */
const char *peer_transport_name(enum peer_transport_outcome transport);

/* How an exchange with a member failed, for GET /v1/metrics: counted once per operation (after
 * its retries), for every operation (pushes, pulls, fetches, add-checkpoint) whose exchange ended
 * without an answer, or with a 5xx answer. A 4xx is an answer: the caller judges it. */
enum peer_failure {
	PEER_FAILURE_UNREACHABLE,  /* PEER_TRANSPORT_UNREACHABLE */
	PEER_FAILURE_TIMEOUT,      /* PEER_TRANSPORT_TIMEOUT */
	PEER_FAILURE_TOO_LARGE,    /* PEER_TRANSPORT_TOO_LARGE */
	PEER_FAILURE_SERVER_ERROR, /* answered with a 5xx status */
	PEER_FAILURE_OTHER,        /* PEER_TRANSPORT_FAILED: TLS, memory, ... */
	PEER_FAILURE_COUNT
};

/* "unreachable", "timeout", "too_large", "server_error", "other". */
const char *peer_failure_name(enum peer_failure failure);

/* The failed exchanges with member since the client was created, by reason, into out (zeroes for
 * a member out of range). Thread-safe. */
void peer_client_failures(const struct peer_client *client, size_t member, uint64_t out[PEER_FAILURE_COUNT]);

#endif
