/*
 * keyring.c: download the certificate bundle, build the keyring, verify and explain (see
 * keyring.h).
 *
 * The verdict is certificate_keyring_verify's; what this file adds is the words. A refusal
 * "not certified at T" is only actionable when it says which key signed and which window its
 * certificate covers (an expired certificate, a signer that still serves the old key, a trust
 * bundle that pins a signing key where it should pin the identity), so the explanation walks the
 * note's signatures against the ring once more and names what it finds.
 */
#include "ctl/keyring.h"

#include "schema/error.h"
#include "ctl/http_client.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ctl_keyring_download(const char *what, const char *server_url, struct buffer *out,
                         struct ctl_report *report)
{
	struct ctl_http_request request = {
	    .method = "GET",
	    .max_response_bytes = CERTIFICATE_BUNDLE_MAX_BYTES,
	};
	struct ctl_http_response response;
	struct buffer url;
	size_t base_len = strlen(server_url);
	int rc;

	ctl_http_response_init(&response);
	buffer_init(&url);
	while (base_len > 0 && server_url[base_len - 1] == '/')
		base_len--;
	rc = buffer_appendf(&url, "%.*s/v1/certificates", (int)base_len, server_url);
	if (rc != 0) {
		ctl_report_fail(report, CTL_EXIT_USAGE, "%s: server URL too long", what);
		goto done;
	}
	request.url = (const char *)url.data;
	rc = ctl_http_perform(&request, &response);
	if (rc == DIRAUTH_ERR_BOUNDS) {
		ctl_report_fail(report, CTL_EXIT_DATA, "%s: certificates: %s", what, response.error);
		goto done;
	}
	if (rc != 0) {
		ctl_report_fail(report,
		                rc == DIRAUTH_ERR_UNAVAILABLE ? CTL_EXIT_UNAVAILABLE
		                                              : ctl_exit_code_for_error(rc),
		                "%s: %s: %s", what, request.url, response.error);
		goto done;
	}
	if (response.status != 200) {
		char description[CTL_REPORT_MAX / 2];
		ctl_http_describe_error(&response, description, sizeof(description));
		ctl_report_fail(report, ctl_http_exit_code_for_status(response.status),
		                "%s: certificates: %s", what, description);
		rc = response.status >= 500 ? DIRAUTH_ERR_UNAVAILABLE : DIRAUTH_ERR_REFUSED;
		goto done;
	}
	rc = buffer_append(out, response.body.data, response.body.len);
	if (rc != 0)
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "%s: out of memory", what);
done:
	ctl_http_response_free(&response);
	buffer_free(&url);
	return rc;
}

int ctl_keyring_build(const char *what, const struct trust_bundle *bundle, const uint8_t *certificates,
                      size_t len, struct certificate_keyring **out, size_t *added, struct ctl_report *report)
{
	struct certificate_keyring *ring;
	size_t kept = 0;
	int rc;

	*out = NULL;
	if (added != NULL)
		*added = 0;
	/* A keyring holds 64 certificates: tens of kilobytes, so not on the stack. */
	ring = malloc(sizeof(*ring));
	if (ring == NULL) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "%s: out of memory", what);
		return DIRAUTH_ERR_NOMEM;
	}
	rc = certificate_keyring_init(ring, bundle->authorities, bundle->authority_count);
	if (rc != 0) {
		ctl_report_fail(report, CTL_EXIT_CONFIG,
		                "%s: the trust bundle's authorities cannot be pinned: %s", what,
		                dirauth_strerror(rc));
		goto done;
	}
	rc = certificate_keyring_add_bundle(ring, certificates, len, &kept);
	if (rc == DIRAUTH_ERR_NOMEM || rc == DIRAUTH_ERR_CRYPTO) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "%s: certificates: %s", what,
		                dirauth_strerror(rc));
		goto done;
	}
	if (rc != 0) {
		ctl_report_fail(report, CTL_EXIT_DATA, "%s: certificates: not a certificate bundle: %s", what,
		                dirauth_strerror(rc));
		goto done;
	}
	*out = ring;
	ring = NULL;
	if (added != NULL)
		*added = kept;
done:
	free(ring);
	return rc;
}

/* Appends a formatted phrase to out, "; "-separated, truncating. */
static void append_phrase(char *out, size_t cap, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

static void append_phrase(char *out, size_t cap, const char *format, ...)
{
	size_t used = strnlen(out, cap);
	va_list args;
	int n;

	if (used + 1 >= cap)
		return;
	if (used > 0) {
		n = snprintf(out + used, cap - used, "; ");
		if (n < 0 || (size_t)n >= cap - used)
			return;
		used += (size_t)n;
	}
	va_start(args, format);
	vsnprintf(out + used, cap - used, format, args);
	va_end(args);
}

void ctl_keyring_explain(const struct certificate_keyring *ring, const struct note *note, uint64_t at,
                         char *out, size_t cap)
{
	ctl_keyring_explain_both(ring, note, at, at, out, cap);
}

/* Whether a certificate's window [valid-after, valid-until) contains every time from first to last. */
static int window_covers(const struct certificate *certificate, uint64_t first, uint64_t last)
{
	return certificate->valid_after <= first && last < certificate->valid_until;
}

void ctl_keyring_explain_both(const struct certificate_keyring *ring, const struct note *note, uint64_t at,
                              uint64_t also_at, char *out, size_t cap)
{
	uint64_t first = at < also_at ? at : also_at;
	uint64_t last = at < also_at ? also_at : at;

	if (cap == 0)
		return;
	out[0] = '\0';
	for (size_t s = 0; s < note->signature_count; s++) {
		const struct note_signature *signature = &note->signatures[s];
		const struct certificate *outside = NULL;
		int covered = 0;
		int is_identity = 0;
		int name_pinned = 0;

		for (size_t c = 0; c < ring->certificate_count; c++) {
			const struct certificate *certificate = &ring->certificates[c];
			if (certificate->signing_key.key_id != signature->key_id ||
			    strcmp(certificate->signing_key.name, signature->name) != 0)
				continue;
			if (window_covers(certificate, first, last))
				covered = 1;
			else if (outside == NULL)
				outside = certificate;
		}
		if (covered)
			continue;
		for (size_t i = 0; i < ring->identity_count; i++) {
			if (strcmp(ring->identities[i].name, signature->name) != 0)
				continue;
			name_pinned = 1;
			if (ring->identities[i].key_id == signature->key_id)
				is_identity = 1;
		}
		if (outside != NULL) {
			char after[CTL_TIME_TEXT_MAX];
			char until[CTL_TIME_TEXT_MAX];
			ctl_report_format_time(outside->valid_after, after);
			ctl_report_format_time(outside->valid_until, until);
			append_phrase(out, cap, "%s key %08" PRIx32 " is certified only from %s until %s",
			              signature->name, signature->key_id, after, until);
		} else if (is_identity) {
			append_phrase(
			    out, cap,
			    "%s key %08" PRIx32
			    " is a pinned identity key, which signs only certificates, not statements",
			    signature->name, signature->key_id);
		} else if (name_pinned) {
			append_phrase(out, cap,
			              "%s key %08" PRIx32
			              " has no certificate from the pinned identity of %s",
			              signature->name, signature->key_id, signature->name);
		} else {
			append_phrase(out, cap,
			              "%s key %08" PRIx32 " is not an authority of the trust bundle",
			              signature->name, signature->key_id);
		}
	}
	if (out[0] == '\0')
		snprintf(out, cap,
		         "no other authority's certified key signed; the keys of one authority count once");
}

int ctl_keyring_verify(const char *what, const struct certificate_keyring *ring, const struct note *note,
                       uint64_t at, size_t threshold, size_t *verified_count, char *names, size_t names_cap,
                       struct ctl_report *report)
{
	return ctl_keyring_verify_both(what, ring, note, at, at, threshold, verified_count, names, names_cap,
	                               report);
}

int ctl_keyring_verify_both(const char *what, const struct certificate_keyring *ring, const struct note *note,
                            uint64_t at, uint64_t also_at, size_t threshold, size_t *verified_count,
                            char *names, size_t names_cap, struct ctl_report *report)
{
	struct certificate_keyring *covering;
	char explanation[CTL_REPORT_MAX / 2];
	char when[2 * CTL_TIME_TEXT_MAX + 8];
	char also_when[CTL_TIME_TEXT_MAX];
	char own_names[CTL_KEYRING_NAMES_MAX];
	uint64_t first = at < also_at ? at : also_at;
	uint64_t last = at < also_at ? also_at : at;
	size_t count = 0;
	size_t kept = 0;
	int rc;

	if (verified_count != NULL)
		*verified_count = 0;
	if (names == NULL || names_cap == 0) {
		names = own_names;
		names_cap = sizeof(own_names);
	}
	/* The same pins, and only the certificates valid over the whole span: then the one verdict of
	 * certificate_keyring_verify (at either time) is the verdict for both. */
	covering = malloc(sizeof(*covering));
	if (covering == NULL) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "%s: out of memory", what);
		return DIRAUTH_ERR_NOMEM;
	}
	*covering = *ring;
	for (size_t c = 0; c < ring->certificate_count; c++) {
		if (window_covers(&ring->certificates[c], first, last))
			covering->certificates[kept++] = ring->certificates[c];
	}
	covering->certificate_count = kept;
	rc = certificate_keyring_verify(covering, note, at, threshold, &count, names, names_cap);
	free(covering);
	if (verified_count != NULL)
		*verified_count = count;
	if (rc == 0)
		return 0;
	ctl_report_format_time(at, when);
	if (also_at != at) {
		ctl_report_format_time(also_at, also_when);
		size_t used = strlen(when);
		snprintf(when + used, sizeof(when) - used, " and at %s", also_when);
	}
	if (rc == DIRAUTH_ERR_UNKNOWN_KEY) {
		ctl_keyring_explain_both(ring, note, at, also_at, explanation, sizeof(explanation));
		ctl_report_fail(report, CTL_EXIT_DATA,
		                "%s: signed by a key not certified by any pinned identity at %s (%s)", what,
		                when, explanation);
	} else if (rc == DIRAUTH_ERR_THRESHOLD) {
		ctl_keyring_explain_both(ring, note, at, also_at, explanation, sizeof(explanation));
		ctl_report_fail(
		    report, CTL_EXIT_DATA,
		    "%s: too few signatures: %zu of %zu authorities signed with a key certified at "
		    "%s, the trust bundle requires %zu (counted: %s; not counted: %s)",
		    what, count, ring->identity_count, when, threshold, names, explanation);
	} else if (rc == DIRAUTH_ERR_SIGNATURE) {
		ctl_report_fail(report, CTL_EXIT_DATA,
		                "%s: bad signature: a signature by a certified signing key does not verify",
		                what);
	} else {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "%s: cannot verify signatures: %s", what,
		                dirauth_strerror(rc));
	}
	return rc;
}
