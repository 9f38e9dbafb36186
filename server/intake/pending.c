/*
 * pending.c: the table of statement kinds, and the steps every statement takes (pending.h).
 *
 * A statement lives in one allocation, the kind's struct with this file's state at its start,
 * from its checks to its answer: the store's committer and then a signer worker carry the same
 * pointer on, and whoever answers frees it. The waiting path is the asynchronous one waited on,
 * so that a statement is refused, stored and receipted the same way whichever path takes it.
 */
#include "server/intake/pending.h"

#include "crypto/crypto.h"
#include "base/error.h"
#include "schedule/schedule.h"
#include "server/config/config.h"
#include "server/signing/signer_client.h"
#include "server/signing/signer_health.h"
#include "server/store/engine.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The kinds of statement intake takes: adding one is an entry here, its hooks and its codec. */
static const struct intake_kind *const intake_kinds[INTAKE_KIND_COUNT] = {
    [INTAKE_REGISTRATION] = &intake_registration_kind,
    [INTAKE_HEALTH] = &intake_health_kind,
    [INTAKE_REVOCATION] = &intake_revocation_kind,
    [INTAKE_DEREGISTRATION] = &intake_deregistration_kind,
};

/* What each source changes (pending.h). */
static const struct intake_source_rules intake_source_rules[] = {
    [INTAKE_FROM_PROVIDER] = {.receipted = true, .sequences_in_order = true},
    [INTAKE_FROM_PEER] = {.stale_statements = true, .endpoints_elsewhere = true},
};

enum api_error intake_refuse(struct submit_result *result, enum api_error error, const char *format, ...)
{
	va_list args;
	va_start(args, format);
	vsnprintf(result->detail, sizeof result->detail, format, args);
	va_end(args);
	result->error = error;
	return error;
}

static enum api_error out_of_memory(struct submit_result *result)
{
	buffer_init(&result->receipt);
	return intake_refuse(result, API_ERROR_INTERNAL, "Out of memory.");
}

enum api_error intake_now(struct intake_pending *p)
{
	if (!p->have_now && clock_now(p->context.clock, &p->now) != 0)
		return intake_refuse(&p->result, API_ERROR_UNAVAILABLE, "The clock cannot be read.");
	p->have_now = true;
	return API_ERROR_NONE;
}

uint64_t intake_pending_accepted_at(const struct intake_pending *p)
{
	uint64_t accepted_at;
	if (clock_now(p->context.clock, &accepted_at) != 0 || accepted_at < p->now)
		accepted_at = p->now;
	return accepted_at;
}

enum api_error intake_pending_receipt_unbuilt(struct intake_pending *p, int rc)
{
	return intake_refuse(&p->result, API_ERROR_STORED_WITHOUT_RECEIPT,
	                     "The %s was stored, but its receipt could not be built (%s). %s",
	                     p->kind->document, dirauth_strerror(rc), p->kind->remedy);
}

/* ---- the private-namespace rule ---- */

void intake_namespace_judge(const struct config *config, const char *name, struct intake_namespace *ns)
{
	ns->name = name;
	ns->index = config_namespace_index(config, name, strlen(name));
	ns->hidden = ns->index < 0 || config_namespace_is_private(config, (size_t)ns->index);
}

enum api_error intake_namespace_hide(const struct intake_namespace *ns, enum api_error error,
                                     struct submit_result *result)
{
	if (error == API_ERROR_NONE || error == API_ERROR_INTERNAL || !ns->hidden)
		return error;
	return intake_refuse(result, API_ERROR_UNKNOWN_NAMESPACE, "The namespace '%s' is not served here.",
	                     ns->name);
}

/* ---- the steps ---- */

static struct intake_pending *pending_new(enum intake_kind_id id, enum intake_source source,
                                          const struct submit_context *context, const uint8_t *body,
                                          size_t len)
{
	if ((unsigned)id >= INTAKE_KIND_COUNT || (unsigned)source > INTAKE_FROM_PEER)
		return NULL;
	const struct intake_kind *kind = intake_kinds[id];
	struct intake_pending *p = calloc(1, kind->size);
	if (!p)
		return NULL;
	p->kind = kind;
	p->rules = &intake_source_rules[source];
	p->context = *context;
	p->body = body;
	p->len = len;
	buffer_init(&p->receipt_text);
	buffer_init(&p->result.receipt);
	return p;
}

void intake_pending_free(struct intake_pending *p)
{
	if (!p)
		return;
	if (p->kind->clear)
		p->kind->clear(p);
	note_free(p->note);
	buffer_free(&p->receipt_text);
	buffer_free(&p->result.receipt);
	free(p);
}

/* Hands the result over (the answer buffer moves to the caller) and frees p. */
static void pending_finish(struct intake_pending *p, struct submit_result *out)
{
	*out = p->result;
	buffer_init(&p->result.receipt);
	if (out->error != API_ERROR_NONE)
		buffer_free(&out->receipt);
	intake_pending_free(p);
}

static bool pending_receipted(const struct intake_pending *p)
{
	return p->kind->receipt != 0 && p->rules->receipted;
}

/* Bounded, parsed, authorized, checked: every check of the kind, in its order. */
static enum api_error pending_checks(struct intake_pending *p)
{
	const struct intake_kind *kind = p->kind;
	const struct config *config = p->context.config;
	size_t max = kind->max_bytes(config);
	enum api_error error;
	if (p->len > max && !kind->too_large)
		return intake_refuse(&p->result, API_ERROR_BODY_TOO_LARGE,
		                     "The body is larger than %zu bytes.", max);
	if (p->len > max)
		return intake_refuse(&p->result, API_ERROR_BODY_TOO_LARGE, "%s is at most %zu bytes.",
		                     kind->too_large, max);
	if ((error = kind->parse(p)) || (error = kind->authorize(p)) ||
	    (kind->check && (error = kind->check(p))))
		return error;
	return API_ERROR_NONE;
}

/* Once checked: nothing is stored that cannot get its receipt now (the signer must be
 * answering); the digest and the epoch the store's record names. */
static enum api_error pending_ready(struct intake_pending *p)
{
	char why[SIGNER_HEALTH_DETAIL_MAX];
	if (pending_receipted(p) && signer_health_check(p->context.signer_health, why, sizeof why) != 0)
		return intake_refuse(&p->result, API_ERROR_UNAVAILABLE, "Nothing was stored: %s.", why);
	if (crypto_sha256(p->body, p->len, p->digest) != 0)
		return intake_refuse(&p->result, API_ERROR_INTERNAL, "The note could not be hashed.");
	p->epoch = schedule_destination_epoch(&p->context.config->epoch, p->now);
	return API_ERROR_NONE;
}

/* After the store answered rc: what its refusals mean, or, once durable, the kind's answer or
 * receipt text. */
static enum api_error pending_stored(struct intake_pending *p, int rc, uint64_t stamp)
{
	struct submit_result *result = &p->result;
	if (rc == 0)
		return p->kind->durable(p, stamp);
	enum api_error error = p->kind->refused(p, rc);
	if (error != API_ERROR_NONE)
		return error;
	switch (rc) {
	case DIRAUTH_ERR_FULL:
		return intake_refuse(result, API_ERROR_STORE_FULL, "The store is full; nothing was stored.");
	case DIRAUTH_ERR_UNAVAILABLE:
		return intake_refuse(result, API_ERROR_UNAVAILABLE,
		                     "The store is not accepting submissions.");
	default:
		return intake_refuse(result, API_ERROR_INTERNAL, "The store failed: %s",
		                     dirauth_strerror(rc));
	}
}

/* After the signer answered rc: the signed receipt, or the answer that says the document is
 * stored without one. */
static enum api_error pending_signed(struct intake_pending *p, int rc, const struct note_signature *signature,
                                     const char *why)
{
	struct submit_result *result = &p->result;
	signer_health_note(p->context.signer_health, rc, why);
	if (rc == 0) {
		rc = note_format(p->receipt_text.data, p->receipt_text.len, signature, 1, &result->receipt);
		if (rc != 0 && !p->kind->format_failure_is_unsigned)
			return intake_pending_receipt_unbuilt(p, rc);
	}
	if (rc)
		return intake_refuse(result, API_ERROR_STORED_WITHOUT_RECEIPT,
		                     "The %s was stored, but the signer did not sign its receipt (%s). %s",
		                     p->kind->document, why && why[0] ? why : dirauth_strerror(rc),
		                     p->kind->remedy);
	return API_ERROR_NONE;
}

enum api_error intake_submit_wait(enum intake_kind_id kind, enum intake_source source,
                                  const struct submit_context *context, const uint8_t *body, size_t len,
                                  struct submit_result *result)
{
	struct intake_pending *p = pending_new(kind, source, context, body, len);
	uint64_t stamp = 0;
	if (!p)
		return out_of_memory(result);
	enum api_error error = pending_checks(p);
	if (error == API_ERROR_NONE)
		error = pending_ready(p);
	if (error == API_ERROR_NONE) {
		struct store_waiter waiter;
		store_waiter_init(&waiter);
		int rc = store_waiter_wait(&waiter, p->kind->store(p, store_waiter_done, &waiter), &stamp);
		error = pending_stored(p, rc, stamp);
	}
	if (error == API_ERROR_NONE && pending_receipted(p)) {
		struct note_signature signature;
		char why[SIGNER_DETAIL_MAX + 1] = "";
		int rc = signer_client_sign(context->signer, p->kind->receipt, p->receipt_text.data,
		                            p->receipt_text.len, 0, NULL, 0, &signature, why, sizeof why);
		error = pending_signed(p, rc, &signature, why);
	}
	pending_finish(p, result);
	return error;
}

/* The asynchronous path: the store's and then the signer's callbacks carry it on. */
static void pending_done(struct intake_pending *p)
{
	struct submit_result result;
	submit_done done = p->done;
	void *context = p->done_context;
	pending_finish(p, &result);
	done(context, &result);
}

static void on_signed(void *context, int rc, const struct note_signature *signature, const char *why)
{
	struct intake_pending *p = context;
	pending_signed(p, rc, signature, why);
	pending_done(p);
}

static void on_stored(void *context, int rc, uint64_t stamp)
{
	struct intake_pending *p = context;
	if (pending_stored(p, rc, stamp) != API_ERROR_NONE || !pending_receipted(p)) {
		pending_done(p);
		return;
	}
	rc = signer_client_sign_async(p->context.signer, p->kind->receipt, p->receipt_text.data,
	                              p->receipt_text.len, on_signed, p);
	if (rc != 0) {
		pending_signed(p, rc, NULL,
		               rc == DIRAUTH_ERR_FULL ? "too many receipts waiting for the signer" : "");
		pending_done(p);
	}
}

enum api_error intake_submit_start(enum intake_kind_id kind, enum intake_source source,
                                   const struct submit_context *context, const uint8_t *body, size_t len,
                                   submit_done done, void *done_context, struct submit_result *result)
{
	struct intake_pending *p = pending_new(kind, source, context, body, len);
	if (!p)
		return out_of_memory(result);
	p->done = done;
	p->done_context = done_context;
	enum api_error error = pending_checks(p);
	if (error == API_ERROR_NONE)
		error = pending_ready(p);
	if (error == API_ERROR_NONE) {
		int rc = p->kind->store(p, on_stored, p);
		if (rc == 0)
			return API_ERROR_NONE; /* on_stored carries it on */
		error = pending_stored(p, rc, 0);
	}
	pending_finish(p, result);
	return error;
}

struct intake_pending *intake_check(enum intake_kind_id kind, enum intake_source source,
                                    const struct submit_context *context, const uint8_t *body, size_t len,
                                    const uint64_t *now, enum api_error *error, struct submit_result *result)
{
	struct intake_pending *p = pending_new(kind, source, context, body, len);
	if (!p) {
		*error = out_of_memory(result);
		return NULL;
	}
	if (now) {
		p->now = *now;
		p->have_now = true;
	}
	*error = pending_checks(p);
	if (*error != API_ERROR_NONE) {
		pending_finish(p, result);
		return NULL;
	}
	*result = p->result;
	buffer_init(&result->receipt);
	return p;
}
