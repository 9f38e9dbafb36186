/*
 * cosigning.h: the checkpoints of this authority's logs cosigned by the other authorities (and
 * by witnesses outside the set), and the checkpoint a log serves.
 *
 * After translog_catch_up stored a new checkpoint (signed by this authority's log key and cosigned
 * by its own cosignature key), it is sent with c2sp.org/tlog-witness add-checkpoint to every other
 * member whose cosignature key the configuration pins (authorities.members[].cosignature_key),
 * all at once (peers_broadcast), and to every witness of authorities.witnesses. Each request
 * carries the size the member is believed to have cosigned last (what it answered last time; the
 * published size at first) and the consistency proof from it, computed from the stored tree; a
 * 409 naming another size is tried once more with that size and a proof from it. Every
 * cosignature line that verifies under the key pinned for the member that answered is added to
 * the stored note (store_log_checkpoint_put takes the same text with more signatures); anything
 * else is ignored and logged.
 *
 * Publication. With q = translog_quorum(config) > 1, the log serves (translog_checkpoint_served)
 * the latest checkpoint cosigned by at least q distinct authorities (this one included), and the
 * previous such one until then: store_log_publish records its size. With q = 1 (one authority
 * alone, or a set whose configuration pins no cosignature key of another member) every stored
 * checkpoint is served at once, as it always was.
 *
 * The work runs in a thread of its own, started by translog_cosigning_new and woken by
 * translog_cosigning_kick, so a peer that hangs delays no publication: one round per kick, and
 * while the latest checkpoint lacks a member's cosignature it is tried again, first after
 * TRANSLOG_COSIGNING_RETRY_SECONDS, each wait twice the one before up to
 * TRANSLOG_COSIGNING_RETRY_MAX_SECONDS, until every member has cosigned it or a newer checkpoint
 * takes its place: a member that publishes the same epoch late (a slow or restarted one) still
 * cosigns it, and a member that is down costs one round a minute.
 */
#ifndef DIRAUTH_SERVER_TLOG_COSIGNING_H
#define DIRAUTH_SERVER_TLOG_COSIGNING_H

#include "clock/clock.h"
#include "base/buffer.h"
#include "schema/note.h"
#include "server/config/config.h"
#include "server/peers/peer_client.h"
#include "server/signing/signer_client.h"
#include "server/store/store.h"

#include <stdio.h>

#define TRANSLOG_COSIGNING_RETRY_SECONDS     2
#define TRANSLOG_COSIGNING_RETRY_MAX_SECONDS 60
#define TRANSLOG_WITNESS_ANSWER_MAX          (16 * 1024) /* bytes of an outside witness's answer */

/* How many distinct authorities must have cosigned a checkpoint before it is served: the
 * threshold k when the configuration pins the cosignature key of any other member, else 1. */
size_t translog_quorum(const struct config *config);

/* The cosigners counted for the quorum: own (this authority's signer's cosignature key; NULL: not
 * known), then each other member's pinned cosignature key, into keys (room for
 * CONFIG_MAX_MEMBERS); members (may be NULL, same room) gets the member index of each (the own
 * key's is config->self_index). Returns the count. */
size_t translog_cosigners(const struct config *config, const struct note_verifier *own,
                          struct note_verifier *keys, size_t *members);

/* The number of distinct cosigners among keys (count of them) with a valid cosignature on note;
 * cosigned (may be NULL, count entries) gets 1 for each. A line under a key that fails counts
 * nothing. */
size_t translog_cosigned_count(const struct note *note, const struct note_verifier *keys, size_t count,
                               uint8_t *cosigned);

/* The checkpoint note namespace config->namespaces[namespace_index]'s log serves, into note
 * (replaced): the latest stored with q = 1, else the published one. Returns 0,
 * DIRAUTH_ERR_NOT_FOUND (none yet), DIRAUTH_ERR_INTERNAL (an index out of range), the store's
 * errors. */
int translog_checkpoint_served(struct store *store, const struct config *config, size_t namespace_index,
                               struct buffer *note);

struct translog_cosigning_options {
	const struct config *config;
	struct store *store;
	struct signer_client *signer;
	const struct peer_client *peers; /* NULL: no member is asked (outside witnesses still are) */
	FILE *log;                       /* its lines (logline.h); NULL: stderr */
	const struct clock *clock;       /* their epoch, the current one; NULL: "epoch -" */
};

/* What one round did for a namespace. */
struct translog_cosigning_outcome {
	int has_checkpoint;
	uint64_t size;   /* the latest stored checkpoint's */
	size_t cosigned; /* distinct authorities whose cosignature it holds, this one included */
	size_t quorum;   /* translog_quorum */
	size_t asked;    /* add-checkpoint requests sent, retries included */
	size_t added;    /* cosignatures added to the note */
	int published;   /* it is the published checkpoint */
	int missing;     /* some member or witness asked has not cosigned it */
};

struct translog_cosigning;

/* Starts the cosigning thread. options are borrowed and must outlive it. Returns 0,
 * DIRAUTH_ERR_INTERNAL (an option missing, no thread), DIRAUTH_ERR_NOMEM. */
int translog_cosigning_new(const struct translog_cosigning_options *options, struct translog_cosigning **out);

/* Asks for a round for namespace config->namespaces[namespace_index] (its latest checkpoint
 * changed, or at start). Returns at once. Any thread. */
void translog_cosigning_kick(struct translog_cosigning *cosigning, size_t namespace_index);

/* How a member or witness asked with add-checkpoint answered. */
enum translog_witness_answer_kind {
	TRANSLOG_ANSWER_COSIGNED,  /* 200 with a cosignature that verifies under its pinned key */
	TRANSLOG_ANSWER_INVALID,   /* 200 without one */
	TRANSLOG_ANSWER_CONFLICT,  /* 409: it has cosigned another size */
	TRANSLOG_ANSWER_REFUSED,   /* any other status */
	TRANSLOG_ANSWER_NO_ANSWER, /* unreachable, timed out, cut */
	TRANSLOG_ANSWER_COUNT
};

/* "cosigned", "invalid", "conflict", "refused", "no_answer". */
const char *translog_witness_answer_name(enum translog_witness_answer_kind kind);

/* What GET /v1/metrics says of the cosigning, since translog_cosigning_new. */
struct translog_cosigning_statistics {
	/* Per namespace index: of its latest checkpoint after the last round, the distinct
	 * authorities whose cosignature it holds (this one included), or 0 before a round found one;
	 * and the cosignatures added to its checkpoints. */
	size_t cosigners[CONFIG_MAX_NAMESPACES];
	uint64_t added[CONFIG_MAX_NAMESPACES];
	size_t quorum; /* translog_quorum */
	/* Answers to add-checkpoint, all namespaces together: rows 0 to member_count - 1 are the
	 * members (the own row stays zero), then config->peers.witness_count witnesses. */
	uint64_t answers[CONFIG_MAX_MEMBERS + CONFIG_MAX_WITNESSES][TRANSLOG_ANSWER_COUNT];
};

/* Copies the figures into out (zeroes for NULL). Thread-safe. */
void translog_cosigning_statistics(struct translog_cosigning *cosigning,
                                   struct translog_cosigning_statistics *out);

/* Stops the thread (a round in progress ends first: at most about two peer timeouts) and frees.
 * Accepts NULL. */
void translog_cosigning_free(struct translog_cosigning *cosigning);

/* One round for a namespace, in the calling thread (the thread's work; tests call it directly on
 * a cosigning whose thread is idle). outcome (may be NULL) is filled. Returns 0 (also when the
 * log has no checkpoint or nobody answered); DIRAUTH_ERR_INTERNAL for an index out of range;
 * DIRAUTH_ERR_UNAVAILABLE when this authority's signer cannot say its keys; the store's errors. */
int translog_cosigning_round(struct translog_cosigning *cosigning, size_t namespace_index,
                             struct translog_cosigning_outcome *outcome);

#endif
