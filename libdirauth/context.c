/*
 * context.c: a context per trust bundle, and the results every call fills.
 *
 * A context is the trust bundle parsed once, the caller's callbacks and options copied, the log
 * pins parsed, and room for one installed snapshot per namespace the bundle pins. Nothing is
 * global: two contexts share no memory, so two bundles can never vouch for each other's data.
 */
#include "libdirauth/internal.h"

#include "base/error.h"
#include "schema/checkpoint.h"
#include "schema/note.h"
#include "schema/trust_bundle.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const status_names[] = {
    [DIRAUTH_SUCCESS] = "success",
    [DIRAUTH_E_ARGUMENT] = "argument",
    [DIRAUTH_E_NOMEM] = "nomem",
    [DIRAUTH_E_TRUST] = "trust",
    [DIRAUTH_E_FETCH] = "fetch",
    [DIRAUTH_E_MALFORMED] = "malformed",
    [DIRAUTH_E_SIGNATURE] = "signature",
    [DIRAUTH_E_MISMATCH] = "mismatch",
    [DIRAUTH_E_ROLLBACK] = "rollback",
    [DIRAUTH_E_SPLIT_VIEW] = "split-view",
    [DIRAUTH_E_STALE] = "stale",
    [DIRAUTH_E_NOT_FOUND] = "not-found",
    [DIRAUTH_E_NO_SNAPSHOT] = "no-snapshot",
    [DIRAUTH_E_STATE] = "state",
    [DIRAUTH_E_LOG] = "log",
    [DIRAUTH_E_RANDOM] = "random",
    [DIRAUTH_E_INTERNAL] = "internal",
    [DIRAUTH_E_TOO_FAR] = "too-far",
};

DIRAUTH_EXPORT const char *dirauth_status_name(enum dirauth_status status)
{
	if ((unsigned)status < sizeof(status_names) / sizeof(status_names[0]) && status_names[status] != NULL)
		return status_names[status];
	return "unknown";
}

DIRAUTH_EXPORT void dirauth_result_clear(struct dirauth_result *result)
{
	if (result == NULL)
		return;
	free(result->evidence_held);
	free(result->evidence_offered);
	free(result->evidence_file);
	memset(result, 0, sizeof(*result));
}

void client_result_reset(struct dirauth_result *result)
{
	dirauth_result_clear(result);
}

enum dirauth_status client_fail(struct dirauth_result *result, enum dirauth_status status, const char *format,
                                ...)
{
	if (result != NULL) {
		va_list args;
		result->status = status;
		va_start(args, format);
		vsnprintf(result->detail, sizeof(result->detail), format, args);
		va_end(args);
	}
	return status;
}

enum dirauth_status client_status_of(int rc)
{
	switch (rc) {
	case DIRAUTH_OK:
		return DIRAUTH_SUCCESS;
	case DIRAUTH_ERR_NOMEM:
		return DIRAUTH_E_NOMEM;
	case DIRAUTH_ERR_SYNTAX:
	case DIRAUTH_ERR_BOUNDS:
		return DIRAUTH_E_MALFORMED;
	case DIRAUTH_ERR_SIGNATURE:
	case DIRAUTH_ERR_UNKNOWN_KEY:
	case DIRAUTH_ERR_THRESHOLD:
		return DIRAUTH_E_SIGNATURE;
	case DIRAUTH_ERR_MISMATCH:
	case DIRAUTH_ERR_PROOF:
		return DIRAUTH_E_MISMATCH;
	case DIRAUTH_ERR_ROLLBACK:
		return DIRAUTH_E_ROLLBACK;
	case DIRAUTH_ERR_STALE:
		return DIRAUTH_E_STALE;
	case DIRAUTH_ERR_CONFIG:
		return DIRAUTH_E_TRUST;
	case DIRAUTH_ERR_NOT_FOUND:
		return DIRAUTH_E_NOT_FOUND;
	default:
		return DIRAUTH_E_INTERNAL;
	}
}

struct client_view *client_view_of(struct dirauth_context *context, const char *namespace_name,
                                   struct dirauth_result *result)
{
	if (namespace_name != NULL)
		for (size_t i = 0; i < context->bundle.namespace_count; i++)
			if (strcmp(context->bundle.namespaces[i].name, namespace_name) == 0)
				return &context->views[i];
	client_fail(result, DIRAUTH_E_TRUST, "namespace '%.64s' is not in the trust bundle",
	            namespace_name != NULL ? namespace_name : "(null)");
	return NULL;
}

enum dirauth_status client_installed_view(const struct dirauth_context *context, const char *namespace_name,
                                          bool fresh, const struct client_view **out,
                                          struct dirauth_result *result)
{
	*out = NULL;
	const struct client_view *view =
	    client_view_of((struct dirauth_context *)context, namespace_name, result);
	if (view == NULL)
		return DIRAUTH_E_TRUST;
	if (!view->installed)
		return client_fail(result, DIRAUTH_E_NO_SNAPSHOT, "nothing verified yet for namespace '%s'",
		                   namespace_name);
	if (fresh) {
		uint64_t now = context->callbacks.now(context->callbacks.user);
		if (now >= view->header.valid_until)
			return client_fail(
			    result, DIRAUTH_E_STALE,
			    "%s: the snapshot of epoch %llu was valid until %llu, and it is %llu: update it",
			    namespace_name, (unsigned long long)view->header.epoch,
			    (unsigned long long)view->header.valid_until, (unsigned long long)now);
	}
	*out = view;
	return DIRAUTH_SUCCESS;
}

/* Parses count verifier keys of one type into out. */
static enum dirauth_status parse_keys(const char *what, const char *const *texts, size_t count, uint8_t type,
                                      struct note_verifier *out, struct dirauth_result *result)
{
	if (count > CLIENT_LOG_KEYS_MAX)
		return client_fail(result, DIRAUTH_E_TRUST, "%s: %zu keys, at most %d", what, count,
		                   CLIENT_LOG_KEYS_MAX);
	for (size_t i = 0; i < count; i++) {
		if (texts == NULL || texts[i] == NULL)
			return client_fail(result, DIRAUTH_E_ARGUMENT, "%s: key %zu is NULL", what, i);
		if (note_verifier_parse_typed(texts[i], strlen(texts[i]), type, &out[i]) != 0)
			return client_fail(result, DIRAUTH_E_TRUST,
			                   "%s: '%.300s' is not a verifier key of type 0x%02x", what,
			                   texts[i], type);
	}
	return DIRAUTH_SUCCESS;
}

static enum dirauth_status take_options(struct dirauth_context *context,
                                        const struct dirauth_options *options, struct dirauth_result *result)
{
	enum dirauth_status status;
	verify_snapshot_policy_default(&context->policy);
	if (options == NULL)
		return DIRAUTH_SUCCESS;
	if (options->clock_skew != 0)
		context->policy.clock_skew =
		    options->clock_skew == DIRAUTH_NO_CLOCK_SKEW ? 0 : options->clock_skew;
	if (options->max_validity != 0)
		context->policy.max_validity = options->max_validity;
	if (options->max_chain != 0)
		context->policy.max_chain = options->max_chain;
	status = parse_keys("log keys", options->log_keys, options->log_key_count, NOTE_KEY_TYPE_ED25519,
	                    context->log_keys, result);
	if (status == DIRAUTH_SUCCESS)
		status = parse_keys("witness keys", options->witness_keys, options->witness_key_count,
		                    NOTE_KEY_TYPE_COSIGNATURE_V1, context->witnesses, result);
	if (status != DIRAUTH_SUCCESS)
		return status;
	context->log_key_count = options->log_key_count;
	context->witness_count = options->witness_key_count;
	context->witness_quorum = options->witness_quorum;
	if (context->log_key_count == 0 && (context->witness_count > 0 || context->witness_quorum > 0))
		return client_fail(result, DIRAUTH_E_TRUST, "witness keys or a quorum without a log key");
	if (context->witness_quorum > context->witness_count)
		return client_fail(result, DIRAUTH_E_TRUST, "a witness quorum of %zu over %zu witness keys",
		                   context->witness_quorum, context->witness_count);
	return DIRAUTH_SUCCESS;
}

DIRAUTH_EXPORT enum dirauth_status dirauth_context_new(const struct dirauth_callbacks *callbacks,
                                                       const uint8_t *trust_bundle, size_t trust_bundle_len,
                                                       const struct dirauth_options *options,
                                                       struct dirauth_context **out,
                                                       struct dirauth_result *result)
{
	char why[TRUST_BUNDLE_WHY_MAX];
	size_t line = 0;
	enum dirauth_status status;

	client_result_reset(result);
	if (out == NULL)
		return client_fail(result, DIRAUTH_E_ARGUMENT, "no place for the context");
	*out = NULL;
	if (callbacks == NULL || callbacks->now == NULL || callbacks->state_read == NULL ||
	    callbacks->state_write == NULL)
		return client_fail(result, DIRAUTH_E_ARGUMENT,
		                   "the callbacks now, state_read and state_write are required");
	if (trust_bundle == NULL && trust_bundle_len > 0)
		return client_fail(result, DIRAUTH_E_ARGUMENT, "no trust bundle bytes");
	struct dirauth_context *context = calloc(1, sizeof(*context));
	if (context == NULL)
		return client_fail(result, DIRAUTH_E_NOMEM, "out of memory");
	context->callbacks = *callbacks;
	int rc = trust_bundle_parse_explained(trust_bundle != NULL ? trust_bundle : (const uint8_t *)"",
	                                      trust_bundle_len, &context->bundle, &line, why, sizeof(why));
	if (rc != 0) {
		free(context);
		if (rc == DIRAUTH_ERR_NOMEM)
			return client_fail(result, DIRAUTH_E_NOMEM, "out of memory");
		return client_fail(result, DIRAUTH_E_TRUST, "trust bundle line %zu: %s", line, why);
	}
	status = take_options(context, options, result);
	if (status != DIRAUTH_SUCCESS) {
		free(context);
		return status;
	}
	for (size_t i = 0; i < TRUST_BUNDLE_MAX_NAMESPACES; i++) {
		buffer_init(&context->views[i].header_note);
		buffer_init(&context->views[i].body);
	}
	*out = context;
	return DIRAUTH_SUCCESS;
}

DIRAUTH_EXPORT void dirauth_context_free(struct dirauth_context *context)
{
	if (context == NULL)
		return;
	for (size_t i = 0; i < TRUST_BUNDLE_MAX_NAMESPACES; i++)
		client_view_clear(&context->views[i]);
	free(context);
}

DIRAUTH_EXPORT enum dirauth_status dirauth_snapshot(const struct dirauth_context *context,
                                                    const char *namespace_name,
                                                    struct dirauth_snapshot_info *info,
                                                    struct dirauth_result *result)
{
	client_result_reset(result);
	if (context == NULL || info == NULL)
		return client_fail(result, DIRAUTH_E_ARGUMENT, "no context or no place for the answer");
	memset(info, 0, sizeof(*info));
	const struct client_view *view;
	enum dirauth_status status = client_installed_view(context, namespace_name, false, &view, result);
	if (status != DIRAUTH_SUCCESS)
		return status;
	info->epoch = view->header.epoch;
	info->valid_after = view->header.valid_after;
	info->fresh_until = view->header.fresh_until;
	info->valid_until = view->header.valid_until;
	info->record_count = view->header.record_count;
	info->consensus_method = view->header.consensus_method;
	info->signer_count = view->signer_count;
	return DIRAUTH_SUCCESS;
}
