/*
 * internal.h: what the parts of libdirauth share and nobody outside sees (the public contract is
 * include/dirauth/dirauth.h). A context holds the trust bundle, the caller's callbacks and, per
 * namespace of the bundle, the snapshot it installed: the header note, the decoded body and an
 * index of the endpoints it may offer. context.c owns the context and the results, update.c the
 * steps of an update, view.c the installed snapshot and its index, query.c the queries, log.c
 * the log's proofs.
 */
#ifndef DIRAUTH_LIBDIRAUTH_INTERNAL_H
#define DIRAUTH_LIBDIRAUTH_INTERNAL_H

#include <dirauth/dirauth.h>

#include "base/buffer.h"
#include "schema/checkpoint.h"
#include "schema/note.h"
#include "schema/snapshot.h"
#include "schema/trust_bundle.h"
#include "verify/snapshot.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CLIENT_LOG_KEYS_MAX 32

/* Health as the index keeps it. */
enum client_health {
	CLIENT_HEALTH_UNPUBLISHED, /* a method-1 snapshot publishes no health */
	CLIENT_HEALTH_HEALTHY,
	CLIENT_HEALTH_DEGRADED
};

/* An endpoint the snapshot may offer: record index, endpoint index in its registration. */
struct client_offer {
	uint32_t record;
	uint32_t endpoint;
	uint8_t health; /* enum client_health */
};

/* Per record of the body: its class and where its offers start in the offers array. */
struct client_record {
	uint8_t service_class; /* enum service_class */
	uint32_t first_offer;
	uint32_t offer_count;
};

/* The snapshot installed for one namespace. */
struct client_view {
	int installed;
	struct buffer header_note; /* the signed header note as verified */
	struct snapshot_header header;
	size_t signer_count;
	struct buffer body;            /* decoded and verified */
	struct snapshot_body *parsed;  /* notes borrow from body */
	struct client_record *records; /* parsed->record_count entries */
	struct client_offer *offers;
	size_t offer_count;
};

struct dirauth_context {
	struct dirauth_callbacks callbacks;
	struct trust_bundle bundle;
	struct verify_snapshot_policy policy;
	struct note_verifier log_keys[CLIENT_LOG_KEYS_MAX];
	size_t log_key_count;
	struct note_verifier witnesses[CLIENT_LOG_KEYS_MAX];
	size_t witness_count;
	size_t witness_quorum;
	struct client_view views[TRUST_BUNDLE_MAX_NAMESPACES]; /* by the bundle's namespace index */
};

/* Resets result (may be NULL) to success. */
void client_result_reset(struct dirauth_result *result);

/* Sets result's status and detail (printf); returns status. */
enum dirauth_status client_fail(struct dirauth_result *result, enum dirauth_status status, const char *format,
                                ...) __attribute__((format(printf, 3, 4)));

/* The public status of a project error code (base/error.h) from a verification. */
enum dirauth_status client_status_of(int rc);

/* The view of namespace_name, or NULL (with DIRAUTH_E_TRUST in result) when the bundle does not
 * pin it. */
struct client_view *client_view_of(struct dirauth_context *context, const char *namespace_name,
                                   struct dirauth_result *result);

/* The installed view of namespace_name in *out. Returns DIRAUTH_SUCCESS; DIRAUTH_E_TRUST (not a
 * namespace of the bundle), DIRAUTH_E_NO_SNAPSHOT (nothing verified yet), and with fresh
 * DIRAUTH_E_STALE (valid-until not after the caller's clock), each with result. */
enum dirauth_status client_installed_view(const struct dirauth_context *context, const char *namespace_name,
                                          bool fresh, const struct client_view **out,
                                          struct dirauth_result *result);

/* Builds view (zeroed, its buffers initialised) from a verified header note and its verified
 * decoded body (moved into it: body is left empty), refusing a body that holds what previous (the
 * view installed before; may be NULL) revoked. indexed false builds a base only (the body and its
 * sections parsed, for a diff and for the revocations of the next body; no index of what it may
 * offer, and nothing answered from it). On failure view is cleared. Returns 0 or a status with
 * result. */
enum dirauth_status client_view_build(struct client_view *view, const struct trust_bundle *bundle,
                                      const uint8_t *note, size_t note_len,
                                      const struct snapshot_header *header, size_t signer_count,
                                      struct buffer *body, const struct client_view *previous, bool indexed,
                                      struct dirauth_result *result);

/* Reads one record's registration back from a verified body (its signature is not checked
 * again). Returns 0 (the caller clears out) or a project error code. */
struct registration;
int client_record_registration(const struct snapshot_record *record, struct registration *out);

/* Writes endpoint (an index into registration's endpoints) with its health into o. */
void client_fill_endpoint(const struct registration *registration, size_t endpoint, enum client_health health,
                          struct dirauth_endpoint *o);

/* Frees what a view holds and zeroes it. */
void client_view_clear(struct client_view *view);

/* What a proof showed of the log: the leaf, the checkpoint (its note as it stood in the file)
 * and how many pinned witnesses cosigned it. checkpoint_note is initialised by the caller. */
struct client_log_shown {
	uint64_t index;
	struct checkpoint checkpoint;
	size_t cosigned;
	struct buffer checkpoint_note;
};

/* Checks a tlog-proof file against the context's log pins for the header note text (the leaf)
 * of origin; *shown (may be NULL) gets what it showed. Returns 0 or a status with result. */
enum dirauth_status client_log_check(const struct dirauth_context *context, const char *origin,
                                     const uint8_t *header_text, size_t header_text_len, const uint8_t *proof,
                                     size_t proof_len, struct client_log_shown *shown,
                                     struct dirauth_result *result);

/* A new checkpoint (shown, verified) against the one held: same log, not smaller, the same root
 * at the same size, else proven consistent by proof_text (tlog/consistency.h's text, from held's
 * size to shown's). Returns 0 or DIRAUTH_E_LOG (DIRAUTH_E_INTERNAL) with result. */
enum dirauth_status client_log_consistent(const struct checkpoint *held, const struct checkpoint *shown,
                                          const uint8_t *proof_text, size_t proof_len,
                                          struct dirauth_result *result);

/* Reads a held checkpoint note back (not verified again: it was when it was taken). Returns 0;
 * DIRAUTH_E_STATE when it does not parse, DIRAUTH_E_NOMEM. */
enum dirauth_status client_log_held_parse(const uint8_t *bytes, size_t len, struct checkpoint *out,
                                          struct dirauth_result *result);

#endif
