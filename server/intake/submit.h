/*
 * submit.h: accepting a provider's signed registration, from request body to signed receipt.
 *
 * The checks run in a fixed order, each with its own API error (api_error.h), so that a
 * provider learns the first thing wrong and an unknown party learns nothing about enrolment
 * beyond "unknown": size; grammar (the note and the registration text); the namespace is
 * served; the provider key (name, key id and public key, from the registration's provider
 * line) is enrolled; the note is signed by that key; the provider may publish in this
 * namespace and this service class; the endpoint count; validity length, expiry and issue
 * time against the injectable clock; then the store's durable, group-committed submission
 * (sequence rollback, service and endpoint ownership, space). Only after the store returned 0 is
 * a receipt signed: the registration is durable before anyone is told it was accepted (hard
 * rule 2). A refused submission changes nothing (hard rule 5).
 *
 * The receipt is signed by dirauth-signer, which may be down. So that a registration is not
 * stored without a receipt, the signer must have answered recently (signer_health.h) before
 * the store is asked; if not, the submission is refused 503 with nothing stored. The signer can
 * still fail between the commit and the receipt: then the answer is 503 saying the registration
 * was stored and that a resubmission with a higher sequence will get a receipt
 * (docs/decisions.md, "The signer is a separate process").
 */
#ifndef DIRAUTH_SERVER_INTAKE_SUBMIT_H
#define DIRAUTH_SERVER_INTAKE_SUBMIT_H

#include "server/api/api_error.h"
#include "base/buffer.h"
#include "schema/note.h"
#include "schema/registration.h"
#include "clock/clock.h"
#include "server/config/config.h"
#include "server/signing/signer_client.h"
#include "server/signing/signer_health.h"
#include "server/store/store.h"

#include <stddef.h>
#include <stdint.h>

#define SUBMIT_DETAIL_MAX 256

struct submit_context {
	const struct config *config;
	struct store *store;
	struct signer_client *signer;
	struct signer_health *signer_health;
	const struct clock *clock;
};

struct submit_result {
	enum api_error error;           /* API_ERROR_NONE when accepted */
	char detail[SUBMIT_DETAIL_MAX]; /* a human sentence for a refusal */
	struct buffer receipt;          /* when accepted: the signed receipt note; caller frees */
};

/* Checks and records the signed registration note in body (len bytes), waiting for the store
 * and the signer. Fills *result, whose receipt buffer the caller frees with buffer_free().
 * Returns result->error. */
enum api_error submit_registration(const struct submit_context *context, const uint8_t *body, size_t len,
                                   struct submit_result *result);

/* Called once with the outcome of submit_registration_async, from the store's committer or a
 * signer worker: it must not block. result (its receipt buffer included) is the callee's. */
typedef void (*submit_done)(void *context, struct submit_result *result);

/* submit_registration without waiting: every check that needs no store runs now, in the
 * caller's thread; the store and the signer then carry it on, and done is called with the
 * outcome. body must stay valid until done is called. Returns API_ERROR_NONE when under way
 * (done will be called), or a refusal with *result filled (done is not called). */
enum api_error submit_registration_async(const struct submit_context *context, const uint8_t *body,
                                         size_t len, submit_done done, void *done_context,
                                         struct submit_result *result);

/* The checks of a registration note that need neither the store nor the signer, in the order
 * above (size, grammar, namespace, enrolment, signature, permissions, endpoint count, times
 * against now): what an authority checks of a note another authority holds before it counts it.
 * On API_ERROR_NONE, *r is the parsed registration (registration_clear) and *parsed its note
 * (note_free); otherwise both are empty and result says why (its receipt is empty). */
enum api_error submit_check_note(const struct config *config, const uint8_t *note, size_t len, uint64_t now,
                                 struct registration *r, struct note **parsed, struct submit_result *result);

/* A registration that another authority holds and this one lacks (docs/protocol.md,
 * "Consensus"): checked as submit_registration checks a provider's, then stored, waiting for the
 * store; no receipt is signed (the provider holds the other authority's), so the signer need not
 * be answering. Returns result->error; result's receipt is always empty. */
enum api_error submit_peer_registration(const struct submit_context *context, const uint8_t *note, size_t len,
                                        struct submit_result *result);

#endif
