/*
 * pending.h: one submission on its way through intake, whatever document it carries: checked in
 * the caller's thread, stored by the store's committer, then, for a document that has a receipt,
 * the receipt signed by dirauth-signer; answered once, to a caller that waits or through a
 * callback.
 *
 * submit.c (registrations) and lifecycle.c (health statements, revocations, deregistrations)
 * describe each document by a struct intake_pending_kind: its checks and store record, its store
 * submission, what the store's refusals mean, its answer once durable, and its receipt. This file
 * runs the steps in the one order they share: nothing is answered before the store has answered,
 * a receipt is asked for only once the commit is durable, and the signer's answer (or its
 * failure) is noted in the signer's health (signer_health.h) before the caller is told. It is
 * intake's own: nothing outside server/intake includes it.
 */
#ifndef DIRAUTH_SERVER_INTAKE_PENDING_H
#define DIRAUTH_SERVER_INTAKE_PENDING_H

#include "schema/buffer.h"
#include "schema/note.h"
#include "schema/signer_protocol.h"
#include "server/api/api_error.h"
#include "server/intake/submit.h"
#include "server/store/store.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct intake_pending;

/* What a kind of document does at each step. Every hook that refuses fills p->result through
 * intake_refuse and returns its error. */
struct intake_pending_kind {
	/* The size of the kind's own struct, which begins with its struct intake_pending (the hooks
	 * convert p back to it). */
	size_t size;
	/* The document's name in answers: "registration", "revocation" ... */
	const char *document;
	/* Every check that needs no store write, in the document's order, then the store's record
	 * (p->now, p->digest and p->note are the kind's to fill). */
	enum api_error (*prepare)(struct intake_pending *p);
	/* The store's submission of the record: waiting (*stamp gets the stamp), or done called with
	 * p as its context; both return as the store's *_submit and *_submit_async do. */
	int (*submit)(struct intake_pending *p, uint64_t *stamp);
	int (*submit_async)(struct intake_pending *p, store_submission_done done);
	/* What the store's refusal rc (not 0) means for this document, or API_ERROR_NONE to leave it
	 * to the answers every document shares: a full store (507), a store not accepting (503),
	 * any other failure (500). */
	enum api_error (*refused)(struct intake_pending *p, int rc);
	/* Once the store made it durable, with the store's stamp: the answer in p->result.receipt,
	 * or, for a kind with a receipt, the receipt's text in p->receipt_text. */
	enum api_error (*durable)(struct intake_pending *p, uint64_t stamp);
	/* Frees what the kind's struct holds (NULL when it holds nothing to free). */
	void (*clear)(struct intake_pending *p);
	/* The signer's operation for the receipt, 0 for a document answered without one. A
	 * submission from another authority (from_peer) is never receipted. */
	enum signer_operation receipt;
	/* What a receipt's answers tell the provider to do for a receipt: "Submit it again ...". */
	const char *remedy;
	/* A signature that cannot be formatted into the receipt note is told as the signer not
	 * signing (true), or as a receipt that could not be built (false). */
	bool format_failure_is_unsigned;
};

/* The state every kind shares; the kind's struct begins with it. */
struct intake_pending {
	const struct intake_pending_kind *kind;
	struct submit_context context;
	const uint8_t *body; /* borrowed until the end */
	size_t len;
	bool from_peer;     /* a document another authority holds: stored, never receipted */
	struct note *note;  /* the parsed note, freed at the end */
	uint8_t digest[32]; /* the note's SHA-256, for the kind to fill */
	uint64_t now;       /* the clock when it was checked, for the kind to fill */
	struct buffer receipt_text;
	struct submit_result result;
	submit_done done;
	void *done_context;
};

/* Fills result's error and detail (formatted), and returns error. */
enum api_error intake_refuse(struct submit_result *result, enum api_error error, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* Checks, stores and (when the kind has a receipt and from_peer is false) receipts body, waiting
 * for the store and the signer. Fills *result, whose receipt buffer the caller frees. Returns
 * result->error; out of memory before the checks is API_ERROR_INTERNAL. */
enum api_error intake_pending_wait(const struct intake_pending_kind *kind,
                                   const struct submit_context *context, const uint8_t *body, size_t len,
                                   bool from_peer, struct submit_result *result);

/* The same without waiting: the checks run now; then the store and the signer carry it on and
 * done is called with the outcome (from the store's committer or a signer worker; it must not
 * block; result is the callee's). body must stay valid until done is called. Returns
 * API_ERROR_NONE when under way (done will be called), or a refusal with *result filled (done is
 * not called). */
enum api_error intake_pending_start(const struct intake_pending_kind *kind,
                                    const struct submit_context *context, const uint8_t *body, size_t len,
                                    bool from_peer, submit_done done, void *done_context,
                                    struct submit_result *result);

/* The kinds of document intake takes (submit.c and lifecycle.c describe them). */
extern const struct intake_pending_kind intake_registration_kind;
extern const struct intake_pending_kind intake_health_kind;
extern const struct intake_pending_kind intake_revocation_kind;
extern const struct intake_pending_kind intake_deregistration_kind;

/* Only the checks (the kind's prepare), nothing stored. Returns API_ERROR_NONE or the refusal,
 * with *result filled (its receipt empty). */
enum api_error intake_pending_check(const struct intake_pending_kind *kind,
                                    const struct submit_context *context, const uint8_t *body, size_t len,
                                    bool from_peer, struct submit_result *result);

/* For a durable hook: when the document was accepted, by the clock, never before p->now (also
 * when the clock cannot be read). */
uint64_t intake_pending_accepted_at(const struct intake_pending *p);

/* For a durable hook: the refusal that says the document was stored but its receipt text could
 * not be built (rc, the encoder's error), API_ERROR_STORED_WITHOUT_RECEIPT. */
enum api_error intake_pending_receipt_unbuilt(struct intake_pending *p, int rc);

#endif
