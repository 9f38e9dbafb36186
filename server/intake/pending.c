/*
 * pending.c: the steps every submission takes (pending.h).
 *
 * A submission lives in one allocation, the kind's struct with this file's state at its start,
 * from its checks to its answer: the store's committer and then a signer worker carry the same
 * pointer on, and whoever answers frees it. The waiting and the asynchronous paths run the same
 * steps, so that a document is refused, stored and receipted the same way whichever path takes it.
 */
#include "server/intake/pending.h"

#include "schema/error.h"
#include "server/signing/signer_client.h"
#include "server/signing/signer_health.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

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

static struct intake_pending *pending_new(const struct intake_pending_kind *kind,
                                          const struct submit_context *context, const uint8_t *body,
                                          size_t len, bool from_peer)
{
	struct intake_pending *p = calloc(1, kind->size);
	if (!p)
		return NULL;
	p->kind = kind;
	p->context = *context;
	p->body = body;
	p->len = len;
	p->from_peer = from_peer;
	buffer_init(&p->receipt_text);
	buffer_init(&p->result.receipt);
	return p;
}

/* Hands the result over (the answer buffer moves to the caller) and frees p. */
static void pending_finish(struct intake_pending *p, struct submit_result *out)
{
	*out = p->result;
	buffer_init(&p->result.receipt);
	if (out->error != API_ERROR_NONE)
		buffer_free(&out->receipt);
	if (p->kind->clear)
		p->kind->clear(p);
	note_free(p->note);
	buffer_free(&p->receipt_text);
	free(p);
}

static bool pending_receipted(const struct intake_pending *p)
{
	return p->kind->receipt != 0 && !p->from_peer;
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

enum api_error intake_pending_wait(const struct intake_pending_kind *kind,
                                   const struct submit_context *context, const uint8_t *body, size_t len,
                                   bool from_peer, struct submit_result *result)
{
	struct intake_pending *p = pending_new(kind, context, body, len, from_peer);
	uint64_t stamp = 0;
	if (!p)
		return out_of_memory(result);
	enum api_error error = kind->prepare(p);
	if (error == API_ERROR_NONE) {
		int rc = kind->submit(p, &stamp);
		error = pending_stored(p, rc, stamp);
	}
	if (error == API_ERROR_NONE && pending_receipted(p)) {
		struct note_signature signature;
		char why[SIGNER_DETAIL_MAX + 1] = "";
		int rc = signer_client_sign(context->signer, kind->receipt, p->receipt_text.data,
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

enum api_error intake_pending_start(const struct intake_pending_kind *kind,
                                    const struct submit_context *context, const uint8_t *body, size_t len,
                                    bool from_peer, submit_done done, void *done_context,
                                    struct submit_result *result)
{
	struct intake_pending *p = pending_new(kind, context, body, len, from_peer);
	if (!p)
		return out_of_memory(result);
	p->done = done;
	p->done_context = done_context;
	enum api_error error = kind->prepare(p);
	if (error == API_ERROR_NONE) {
		int rc = kind->submit_async(p, on_stored);
		if (rc == 0)
			return API_ERROR_NONE; /* on_stored carries it on */
		error = pending_stored(p, rc, 0);
	}
	pending_finish(p, result);
	return error;
}

enum api_error intake_pending_check(const struct intake_pending_kind *kind,
                                    const struct submit_context *context, const uint8_t *body, size_t len,
                                    bool from_peer, struct submit_result *result)
{
	struct intake_pending *p = pending_new(kind, context, body, len, from_peer);
	if (!p)
		return out_of_memory(result);
	enum api_error error = kind->prepare(p);
	pending_finish(p, result);
	return error;
}
