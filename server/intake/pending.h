/*
 * pending.h: the table of statement kinds, and one statement on its way through intake, whatever
 * its kind: checked in the caller's thread, stored by the store's committer, then, for a kind
 * that has a receipt, the receipt signed by dirauth-signer; answered once, to a caller that waits
 * or through a callback.
 *
 * Each kind (registration: submit.c; health statement, revocation, deregistration: statements.c)
 * is one struct intake_kind: how it is bounded, parsed, authorized and checked against the clock
 * and its bounds, which store table operation the committer applies to it, what the store's
 * refusals mean for it, and its answer or receipt. pending.c holds the table of kinds
 * (kinds.h names them) and runs the steps in the one order they share: nothing is stored unless
 * every check passed (and, for a receipted statement, the signer answers), nothing is answered
 * before the store has answered, a receipt is asked for only once the commit is durable, and the
 * signer's answer (or its failure) is noted in the signer's health (signer_health.h) before the
 * caller is told. Where a statement comes from (kinds.h, enum intake_source) is read once, into
 * the rules its steps follow (struct intake_source_rules). It is intake's own: nothing outside
 * server/intake includes it.
 */
#ifndef DIRAUTH_SERVER_INTAKE_PENDING_H
#define DIRAUTH_SERVER_INTAKE_PENDING_H

#include "base/buffer.h"
#include "schema/note.h"
#include "signer_protocol/signer_protocol.h"
#include "server/api/api_error.h"
#include "server/intake/kinds.h"
#include "server/intake/submit.h"
#include "server/store/engine.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct intake_pending;

/* What a kind of statement does at each step. Every hook that refuses fills p->result through
 * intake_refuse and returns its error. */
struct intake_kind {
	/* The statement's name in answers: "registration", "revocation" ... */
	const char *document;
	/* The size of the kind's own struct, which begins with its struct intake_pending (the hooks
	 * convert p back to it). */
	size_t size;
	/* Bounded: the largest body taken (413), and the kind's name in the sentence that says so
	 * ("A health statement", or NULL for "The body"). */
	size_t (*max_bytes)(const struct config *config);
	const char *too_large;
	/* Parsed: the grammar of the note and of its text (400); fills p->note. */
	enum api_error (*parse)(struct intake_pending *p);
	/* Authorized: the namespace is served (and takes the kind), the key that signed it may, and
	 * its signature verifies; a private namespace's refusals hidden (intake_namespace_hide). */
	enum api_error (*authorize)(struct intake_pending *p);
	/* Checked against the clock and the configuration's bounds (p->now from intake_now). */
	enum api_error (*check)(struct intake_pending *p);
	/* Stored: submits the store's record, built from the parsed statement, p->digest and
	 * p->epoch, to its table's operation, which calls done with context. Returns as the store's
	 * *_submit_async. */
	int (*store)(struct intake_pending *p, store_submission_done done, void *context);
	/* What the store's refusal rc (not 0) means for this kind, or API_ERROR_NONE to leave it to
	 * the answers every kind shares: a full store (507), a store not accepting (503), any other
	 * failure (500). */
	enum api_error (*refused)(struct intake_pending *p, int rc);
	/* Once the store made it durable, with the store's stamp: the answer in p->result.receipt,
	 * or, for a kind with a receipt, the receipt's text in p->receipt_text. */
	enum api_error (*durable)(struct intake_pending *p, uint64_t stamp);
	/* Frees what the kind's struct holds (NULL when it holds nothing to free). */
	void (*clear)(struct intake_pending *p);
	/* Receipted: the signer's operation for the receipt, 0 for a kind answered without one. */
	enum signer_operation receipt;
	/* What a receipt's answers tell the provider to do for a receipt: "Submit it again ...". */
	const char *remedy;
	/* A signature that cannot be formatted into the receipt note is told as the signer not
	 * signing (true), or as a receipt that could not be built (false). */
	bool format_failure_is_unsigned;
};

/* The kinds, each defined beside its hooks (submit.c, statements.c), listed once in pending.c's
 * table. */
extern const struct intake_kind intake_registration_kind;
extern const struct intake_kind intake_health_kind;
extern const struct intake_kind intake_revocation_kind;
extern const struct intake_kind intake_deregistration_kind;

/* What the source of a statement changes, each named once (pending.c gives every source its
 * rules). */
struct intake_source_rules {
	/* A kind with a receipt gets one, and the signer must be answering before it is stored (a
	 * provider's); a statement another authority holds is stored without (the provider holds
	 * the other authority's receipt). */
	bool receipted;
	/* A health statement older than the clock skew is taken: learned a while after it was
	 * posted, its freshness is the consensus's to judge. Never one from the future. */
	bool stale_statements;
	/* A revocation may name an endpoint this authority never saw registered (revoked at another
	 * authority before this one saw the registration); an endpoint of another service never. */
	bool endpoints_elsewhere;
	/* A revocation's sequence must be above every one accepted from its key, not only unused
	 * (revocations learned from peers arrive in any order). */
	bool sequences_in_order;
};

/* The state every kind shares; the kind's struct begins with it. */
struct intake_pending {
	const struct intake_kind *kind;
	const struct intake_source_rules *rules;
	struct submit_context context;
	const uint8_t *body; /* borrowed until the end */
	size_t len;
	struct note *note;  /* the parsed note, freed at the end */
	uint8_t digest[32]; /* the note's SHA-256, once checked */
	uint64_t now;       /* the clock when it was checked (intake_now) */
	bool have_now;
	uint64_t epoch; /* the first epoch whose cut-off has not passed at now, once checked */
	struct buffer receipt_text;
	struct submit_result result;
	submit_done done;
	void *done_context;
};

/* Fills result's error and detail (formatted), and returns error. */
enum api_error intake_refuse(struct submit_result *result, enum api_error error, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* For a hook: the clock, read once per statement into p->now (503 when it cannot be read). */
enum api_error intake_now(struct intake_pending *p);

/* For a durable hook: when the statement was accepted, by the clock, never before p->now (also
 * when the clock cannot be read). */
uint64_t intake_pending_accepted_at(const struct intake_pending *p);

/* For a durable hook: the refusal that says the statement was stored but its receipt text could
 * not be built (rc, the encoder's error), API_ERROR_STORED_WITHOUT_RECEIPT. */
enum api_error intake_pending_receipt_unbuilt(struct intake_pending *p, int rc);

/* ---- the private-namespace rule ---- */

/* A statement's namespace as the checks judge it. A namespace that is not served, and a private
 * one, exist only for those who may write in them: the checks up to the statement's signature
 * run for them as for a public namespace (so the work does not tell either), and each refusal
 * among them is answered as for a namespace that is not served (intake_namespace_hide). So a
 * stranger's statement, whatever key signed it, gets the same answer whether the namespace is
 * private or absent, and learns nothing of it. */
struct intake_namespace {
	const char *name;
	int index;   /* in the configuration; -1: not served */
	bool hidden; /* not served, or private */
};

/* Fills *ns for the namespace named. */
void intake_namespace_judge(const struct config *config, const char *name, struct intake_namespace *ns);

/* error, the refusal of a check made before the statement was shown to be signed by a key that
 * may write in ns, or for a hidden namespace the refusal of a namespace that is not served. A
 * failure of this authority (500) is told as such: it says nothing of the namespace, and a
 * provider told 404 would not retry. */
enum api_error intake_namespace_hide(const struct intake_namespace *ns, enum api_error error,
                                     struct submit_result *result);

/* ---- the entry points of the kinds' files ---- */

/* Checks, stores and (when the kind has a receipt and the source's rules say so) receipts body,
 * waiting for the store and the signer. Fills *result, whose receipt buffer the caller frees.
 * Returns result->error; out of memory before the checks is API_ERROR_INTERNAL. */
enum api_error intake_submit_wait(enum intake_kind_id kind, enum intake_source source,
                                  const struct submit_context *context, const uint8_t *body, size_t len,
                                  struct submit_result *result);

/* The same without waiting: the checks run now; then the store and the signer carry it on and
 * done is called with the outcome (from the store's answerer or a signer worker; it must not
 * block; result is the callee's). body must stay valid until done is called. Returns
 * API_ERROR_NONE when under way (done will be called), or a refusal with *result filled (done is
 * not called). */
enum api_error intake_submit_start(enum intake_kind_id kind, enum intake_source source,
                                   const struct submit_context *context, const uint8_t *body, size_t len,
                                   submit_done done, void *done_context, struct submit_result *result);

/* Only the checks (bounded, parsed, authorized, checked), nothing stored; now (may be NULL: the
 * context's clock) is the time they judge by. Returns the statement, checked, for the caller to
 * read its kind's struct and then free with intake_pending_free, with *error API_ERROR_NONE; or
 * NULL with *error the refusal and *result filled (its receipt empty). */
struct intake_pending *intake_check(enum intake_kind_id kind, enum intake_source source,
                                    const struct submit_context *context, const uint8_t *body, size_t len,
                                    const uint64_t *now, enum api_error *error, struct submit_result *result);

/* Frees a statement intake_check returned. Accepts NULL. */
void intake_pending_free(struct intake_pending *p);

#endif
