/*
 * keyring.c: the certificate bundle downloaded, the keyring built, verify/'s refusals reported
 * (see keyring.h).
 */
#include "ctl/keyring.h"

#include "ctl/exchange.h"
#include "base/error.h"
#include "verify/keyring.h"
#include "verify/snapshot.h"

#include <stdio.h>
#include <string.h>

int ctl_exit_code_for_verification(int rc)
{
	switch (rc) {
	case DIRAUTH_OK:
		return CTL_EXIT_OK;
	case DIRAUTH_ERR_CONFIG:
		return CTL_EXIT_CONFIG;
	case DIRAUTH_ERR_NOMEM:
	case DIRAUTH_ERR_CRYPTO:
	case DIRAUTH_ERR_INTERNAL:
		return CTL_EXIT_SOFTWARE;
	default:
		return CTL_EXIT_DATA;
	}
}

int ctl_verification_fail(struct ctl_report *report, const char *what, int rc, const char *detail)
{
	ctl_report_fail(report, ctl_exit_code_for_verification(rc), "%s: %s", what, detail);
	return rc;
}

int ctl_keyring_download(const char *what, const char *server_url, struct buffer *out,
                         struct ctl_report *report)
{
	return ctl_keyring_download_status(what, server_url, out, NULL, report);
}

int ctl_keyring_download_status(const char *what, const char *server_url, struct buffer *out, long *status,
                                struct ctl_report *report)
{
	struct net_response response;
	struct buffer url;
	size_t base_len = ctl_exchange_url_length(server_url);
	int rc;

	net_response_init(&response);
	buffer_init(&url);
	if (status != NULL)
		*status = 0;
	rc = buffer_appendf(&url, "%.*s/v1/certificates", (int)base_len, server_url);
	if (rc != 0) {
		ctl_report_fail(report, CTL_EXIT_USAGE, "%s: server URL too long", what);
		goto done;
	}
	rc = ctl_exchange_get(what, "certificates", (const char *)url.data, NULL,
	                      CERTIFICATE_BUNDLE_MAX_BYTES, 0, &response, report);
	if (status != NULL)
		*status = response.status;
	if (rc != 0)
		goto done;
	rc = buffer_append(out, response.body.data, response.body.len);
	if (rc != 0)
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "%s: out of memory", what);
done:
	net_response_free(&response);
	buffer_free(&url);
	return rc;
}

int ctl_keyring_build(const char *what, const struct trust_bundle *bundle, const uint8_t *certificates,
                      size_t len, struct certificate_keyring **out, size_t *added, struct ctl_report *report)
{
	char detail[VERIFY_DETAIL_MAX];
	int rc;

	rc = verify_keyring_from_trust_bundle(bundle, certificates, len, out, added, detail, sizeof(detail));
	if (rc != 0)
		return ctl_verification_fail(report, what, rc, detail);
	return 0;
}

int ctl_keyring_verify_receipt(const char *what, const struct certificate_keyring *ring,
                               const struct note *note, const char *authority, uint64_t at,
                               struct ctl_report *report)
{
	/* One authority's promise: one pinned authority must have signed it (threshold 1), with a
	 * signing key certified at the time it says it accepted the document. */
	struct verify_pins pins = {.ring = ring, .threshold = 1, .pinned_by = VERIFY_TRUST_BUNDLE_PINNED_BY};
	struct certificate_keyring *named = NULL;
	char detail[VERIFY_DETAIL_MAX];
	char label[64];
	int rc;

	snprintf(label, sizeof(label), "%s: receipt", what);
	rc = verify_note(&pins, note, at, at, NULL, detail, sizeof(detail));
	if (rc != 0)
		return ctl_verification_fail(report, label, rc, detail);
	/* The authority the receipt names must be one that signed it. */
	rc = verify_keyring_for_identity(ring, authority, &named);
	if (rc == 0) {
		pins.ring = named;
		rc = verify_note(&pins, note, at, at, NULL, NULL, 0);
	}
	verify_keyring_free(named);
	if (rc == DIRAUTH_ERR_NOT_FOUND || rc == DIRAUTH_ERR_UNKNOWN_KEY) {
		ctl_report_fail(report, CTL_EXIT_DATA,
		                "%s: receipt refused: the authority it names did not sign it", what);
		return DIRAUTH_ERR_MISMATCH;
	}
	if (rc == DIRAUTH_ERR_NOMEM) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "%s: out of memory", what);
		return rc;
	}
	if (rc != 0)
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "%s: receipt: cannot verify: %s", what,
		                dirauth_strerror(rc));
	return rc;
}
