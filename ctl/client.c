/*
 * client.c: a libdirauth context from what a command parsed, and the library's statuses in a
 * command's words (see client.h).
 */
#include "ctl/client.h"

#include "base/buffer.h"
#include "base/error.h"

#include <string.h>

int ctl_client_context_new(const char *what, const struct trust_bundle *bundle,
                           const struct verify_snapshot_policy *policy, const struct ctl_log_pins *pins,
                           const struct dirauth_callbacks *callbacks, struct dirauth_context **out,
                           struct ctl_report *report)
{
	char log_keys[CTL_LOG_KEYS_MAX][NOTE_VERIFIER_KEY_MAX + 1];
	char witness_keys[CTL_LOG_WITNESSES_MAX][NOTE_VERIFIER_KEY_MAX + 1];
	const char *log_key_texts[CTL_LOG_KEYS_MAX];
	const char *witness_key_texts[CTL_LOG_WITNESSES_MAX];
	struct dirauth_options options = {0};
	struct dirauth_result outcome = {0};
	struct buffer text;
	int rc = 0;

	*out = NULL;
	if (policy != NULL) {
		options.clock_skew = policy->clock_skew == 0 ? DIRAUTH_NO_CLOCK_SKEW : policy->clock_skew;
		options.max_validity = policy->max_validity;
		options.max_chain = policy->max_chain;
	}
	if (pins != NULL && pins->enabled) {
		for (size_t i = 0; i < pins->log_key_count; i++) {
			note_verifier_format(&pins->log_keys[i], log_keys[i]);
			log_key_texts[i] = log_keys[i];
		}
		for (size_t i = 0; i < pins->witness_count; i++) {
			note_verifier_format(&pins->witnesses[i], witness_keys[i]);
			witness_key_texts[i] = witness_keys[i];
		}
		options.log_keys = log_key_texts;
		options.log_key_count = pins->log_key_count;
		options.witness_keys = witness_key_texts;
		options.witness_key_count = pins->witness_count;
		options.witness_quorum = pins->quorum;
	}
	buffer_init(&text);
	rc = trust_bundle_encode(bundle, &text);
	if (rc != 0) {
		buffer_free(&text);
		ctl_report_fail(report, rc == DIRAUTH_ERR_NOMEM ? CTL_EXIT_SOFTWARE : CTL_EXIT_CONFIG,
		                "%s: the trust bundle cannot be used: %s", what, dirauth_strerror(rc));
		return rc;
	}
	enum dirauth_status status =
	    dirauth_context_new(callbacks, text.data, text.len, &options, out, &outcome);
	if (status != DIRAUTH_SUCCESS) {
		ctl_report_fail(report, ctl_client_exit_code(status), "%s: %s", what, outcome.detail);
		rc = status == DIRAUTH_E_NOMEM ? DIRAUTH_ERR_NOMEM : DIRAUTH_ERR_CONFIG;
	}
	dirauth_result_clear(&outcome);
	buffer_free(&text);
	return rc;
}

int ctl_client_log_pins_fit(const char *what, const struct ctl_log_pins *pins, const char *origin,
                            struct ctl_report *report)
{
	for (size_t i = 0; pins != NULL && pins->enabled && i < pins->log_key_count; i++) {
		if (strcmp(pins->log_keys[i].name, origin) != 0) {
			ctl_report_fail(
			    report, CTL_EXIT_CONFIG,
			    "%s: --log-key is named '%s', but the namespace's log is '%s' (a log key is "
			    "named by its origin)",
			    what, pins->log_keys[i].name, origin);
			return DIRAUTH_ERR_CONFIG;
		}
	}
	return 0;
}

int ctl_client_exit_code(enum dirauth_status status)
{
	switch (status) {
	case DIRAUTH_SUCCESS:
		return CTL_EXIT_OK;
	case DIRAUTH_E_TRUST:
		return CTL_EXIT_CONFIG;
	case DIRAUTH_E_FETCH:
		return CTL_EXIT_PROTOCOL;
	case DIRAUTH_E_STALE:
		return CTL_EXIT_TEMPFAIL;
	case DIRAUTH_E_MALFORMED:
	case DIRAUTH_E_SIGNATURE:
	case DIRAUTH_E_MISMATCH:
	case DIRAUTH_E_ROLLBACK:
	case DIRAUTH_E_SPLIT_VIEW:
	case DIRAUTH_E_TOO_FAR:
	case DIRAUTH_E_LOG:
	case DIRAUTH_E_NOT_FOUND:
		return CTL_EXIT_DATA;
	case DIRAUTH_E_STATE:
		return CTL_EXIT_IO;
	default:
		return CTL_EXIT_SOFTWARE;
	}
}

const char *ctl_client_detail(const struct dirauth_result *result, const char *namespace_name)
{
	size_t n = strlen(namespace_name);
	if (strncmp(result->detail, namespace_name, n) == 0 && strncmp(result->detail + n, ": ", 2) == 0)
		return result->detail + n + 2;
	return result->detail;
}
