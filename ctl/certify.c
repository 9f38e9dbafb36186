/*
 * certify.c: issuing, rotating and showing key certificates (see certify.h).
 *
 * Every refusal here happens before anything is signed or written where it can: a certificate
 * with the wrong name, the same key in both roles, an empty or overlong window, or a rotation that
 * would leave a moment without a valid key is a mistake to stop at the offline machine, not one
 * for verifiers to discover later. Output files are checked for existence up front as well, so a
 * refused run leaves nothing behind.
 */
#include "ctl/certify.h"

#include "ctl/files.h"
#include "base/error.h"
#include "verify/verify.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BUNDLE_KIND_LINE "dirauth certificates v1\n"

int ctl_certify_load_key(const char *what, const char *path, struct signer_key **key,
                         struct ctl_report *report)
{
	int rc = signer_key_load(path, key);

	switch (rc) {
	case 0:
		break;
	case DIRAUTH_ERR_PERMISSION:
		ctl_report_fail(report, CTL_EXIT_PERMISSION,
		                "%s %s: unsafe file (not a regular file, a symlink, or readable by group or "
		                "other: chmod 600)",
		                what, path);
		break;
	case DIRAUTH_ERR_NOT_FOUND:
		ctl_report_fail(report, CTL_EXIT_NO_INPUT, "%s %s: no such file", what, path);
		break;
	case DIRAUTH_ERR_SYNTAX:
		ctl_report_fail(report, CTL_EXIT_DATA, "%s %s: not a dirauth private key file", what, path);
		break;
	default:
		ctl_report_fail(report, ctl_exit_code_for_error(rc), "%s %s: %s", what, path,
		                dirauth_strerror(rc));
		break;
	}
	return rc;
}

int ctl_certify_window(const char *command, uint64_t valid_after, uint64_t days, uint64_t valid_until,
                       uint64_t *out, struct ctl_report *report)
{
	*out = 0;
	if ((days == 0) == (valid_until == 0)) {
		ctl_report_fail(report, CTL_EXIT_USAGE,
		                "%s: give exactly one of --days N and --valid-until SECONDS", command);
		return DIRAUTH_ERR_SYNTAX;
	}
	if (days > 0) {
		if (days > CERTIFICATE_MAX_WINDOW / CTL_CERTIFY_DAY_SECONDS) {
			ctl_report_fail(
			    report, CTL_EXIT_USAGE,
			    "%s: --days %" PRIu64 ": a certificate is valid for at most %llu days", command,
			    days, (unsigned long long)(CERTIFICATE_MAX_WINDOW / CTL_CERTIFY_DAY_SECONDS));
			return DIRAUTH_ERR_SYNTAX;
		}
		if (valid_after > UINT64_MAX - days * CTL_CERTIFY_DAY_SECONDS) {
			ctl_report_fail(report, CTL_EXIT_USAGE, "%s: the window ends past the largest time",
			                command);
			return DIRAUTH_ERR_SYNTAX;
		}
		valid_until = valid_after + days * CTL_CERTIFY_DAY_SECONDS;
	}
	if (valid_until <= valid_after) {
		ctl_report_fail(report, CTL_EXIT_USAGE,
		                "%s: empty window: valid-until %" PRIu64 " is not after valid-after %" PRIu64,
		                command, valid_until, valid_after);
		return DIRAUTH_ERR_SYNTAX;
	}
	if (valid_until - valid_after > CERTIFICATE_MAX_WINDOW) {
		ctl_report_fail(
		    report, CTL_EXIT_USAGE,
		    "%s: window of %" PRIu64 " seconds is longer than the longest allowed, %llu seconds "
		    "(%llu days)",
		    command, valid_until - valid_after, (unsigned long long)CERTIFICATE_MAX_WINDOW,
		    (unsigned long long)(CERTIFICATE_MAX_WINDOW / CTL_CERTIFY_DAY_SECONDS));
		return DIRAUTH_ERR_SYNTAX;
	}
	*out = valid_until;
	return 0;
}

int ctl_certificate_issue(const char *command, const struct signer_key *identity,
                          const struct note_verifier *signing_key, uint64_t valid_after, uint64_t valid_until,
                          struct certificate *certificate, struct buffer *note, struct ctl_report *report)
{
	const struct note_verifier *identity_verifier = signer_key_verifier(identity);
	struct note_signature signature;
	struct buffer text;
	int rc;

	memset(certificate, 0, sizeof(*certificate));
	memset(&signature, 0, sizeof(signature));
	buffer_init(&text);
	if (strcmp(signing_key->name, identity_verifier->name) != 0) {
		ctl_report_fail(
		    report, CTL_EXIT_DATA,
		    "%s: name mismatch: the signing key is called '%s', the identity key '%s' (both "
		    "keys of an authority carry its name)",
		    command, signing_key->name, identity_verifier->name);
		return DIRAUTH_ERR_MISMATCH;
	}
	if (memcmp(signing_key->public_key, identity_verifier->public_key, sizeof(signing_key->public_key)) ==
	    0) {
		ctl_report_fail(
		    report, CTL_EXIT_DATA,
		    "%s: the signing key is the identity key itself; the online signing key must be "
		    "a different key",
		    command);
		return DIRAUTH_ERR_SYNTAX;
	}
	if (valid_until <= valid_after || valid_until - valid_after > CERTIFICATE_MAX_WINDOW) {
		ctl_report_fail(report, CTL_EXIT_USAGE,
		                "%s: window [%" PRIu64 ", %" PRIu64 ") is empty or longer than %llu seconds",
		                command, valid_after, valid_until,
		                (unsigned long long)CERTIFICATE_MAX_WINDOW);
		return DIRAUTH_ERR_SYNTAX;
	}
	snprintf(certificate->authority, sizeof(certificate->authority), "%s", identity_verifier->name);
	certificate->identity = *identity_verifier;
	certificate->signing_key = *signing_key;
	certificate->valid_after = valid_after;
	certificate->valid_until = valid_until;
	rc = certificate_encode(certificate, &text);
	if (rc != 0) {
		ctl_report_fail(report, rc == DIRAUTH_ERR_NOMEM ? CTL_EXIT_SOFTWARE : CTL_EXIT_DATA,
		                "%s: cannot encode the certificate: %s", command, dirauth_strerror(rc));
		goto done;
	}
	rc = signer_key_sign(identity, text.data, text.len, &signature);
	if (rc != 0) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "%s: cannot sign: %s", command,
		                dirauth_strerror(rc));
		goto done;
	}
	rc = note_format(text.data, text.len, &signature, 1, note);
	if (rc != 0)
		ctl_report_fail(report, rc == DIRAUTH_ERR_NOMEM ? CTL_EXIT_SOFTWARE : CTL_EXIT_DATA,
		                "%s: cannot format the signed note: %s", command, dirauth_strerror(rc));
done:
	buffer_free(&text);
	return rc;
}

static int refuse_existing(const char *command, const char *path, struct ctl_report *report)
{
	if (!ctl_file_exists(path))
		return 0;
	ctl_report_fail(report, CTL_EXIT_CANNOT_CREATE, "%s: %s: already exists, not overwritten", command,
	                path);
	return DIRAUTH_ERR_EXISTS;
}

int ctl_certificate_write(const char *command, const char *path, const struct buffer *note,
                          struct ctl_report *report)
{
	int rc = ctl_file_create(path, note->data, note->len, 0644);

	if (rc == DIRAUTH_ERR_EXISTS)
		ctl_report_fail(report, CTL_EXIT_CANNOT_CREATE, "%s: %s: already exists, not overwritten",
		                command, path);
	else if (rc == DIRAUTH_ERR_IO)
		ctl_report_fail(report, CTL_EXIT_IO, "%s: %s: cannot write: %s", command, path,
		                dirauth_strerror(rc));
	else if (rc != 0)
		ctl_report_fail(report, CTL_EXIT_CANNOT_CREATE, "%s: %s: cannot create: %s", command, path,
		                dirauth_strerror(rc));
	return rc;
}

/* The signing key's verifier from its verifier text or, failing that, its key file. */
static int read_signing_verifier(const struct ctl_certify_options *options, struct note_verifier *out,
                                 struct ctl_report *report)
{
	struct signer_key *key = NULL;
	int rc;

	if ((options->signing_verifier == NULL) == (options->signing_key_path == NULL)) {
		ctl_report_fail(
		    report, CTL_EXIT_USAGE,
		    "certify: give exactly one of --signing-verifier VKEY and --signing-key FILE");
		return DIRAUTH_ERR_SYNTAX;
	}
	if (options->signing_verifier != NULL) {
		rc = note_verifier_parse(options->signing_verifier, strlen(options->signing_verifier), out);
		if (rc != 0)
			ctl_report_fail(
			    report, CTL_EXIT_DATA,
			    "certify: --signing-verifier: not a verifier key (NAME+KEYID+BASE64): %s",
			    dirauth_strerror(rc));
		return rc;
	}
	rc = ctl_certify_load_key("certify: signing key", options->signing_key_path, &key, report);
	if (rc != 0)
		return rc;
	/* Only the public half is kept; the private key is wiped at once. */
	*out = *signer_key_verifier(key);
	signer_key_free(key);
	return 0;
}

int ctl_certify_run(const struct ctl_certify_options *options, struct certificate *certificate,
                    struct buffer *note, struct ctl_report *report)
{
	struct signer_key *identity = NULL;
	struct note_verifier signing_key;
	int rc;

	memset(certificate, 0, sizeof(*certificate));
	rc = refuse_existing("certify", options->out_path, report);
	if (rc == 0)
		rc = ctl_certify_load_key("certify: identity key", options->identity_path, &identity, report);
	if (rc == 0)
		rc = read_signing_verifier(options, &signing_key, report);
	if (rc == 0)
		rc = ctl_certificate_issue("certify", identity, &signing_key, options->valid_after,
		                           options->valid_until, certificate, note, report);
	if (rc == 0)
		rc = ctl_certificate_write("certify", options->out_path, note, report);
	signer_key_free(identity);
	return rc;
}

static const struct ctl_file_limit certificate_limit = {CERTIFICATE_MAX_BYTES, "a certificate",
                                                        CTL_EXIT_DATA};
static const struct ctl_file_limit certificate_bundle_limit = {CERTIFICATE_BUNDLE_MAX_BYTES,
                                                               "a certificate bundle", CTL_EXIT_DATA};

/* Reads and verifies a signed certificate file (the previous certificate of a rotation). */
static int read_certificate(const char *what, const char *path, struct certificate *out,
                            struct ctl_report *report)
{
	uint8_t *data = NULL;
	size_t len = 0;
	int rc;

	rc = ctl_file_read_reported(path, &certificate_limit, &data, &len, report, "%s %s", what, path);
	if (rc != 0)
		goto done;
	rc = certificate_parse_signed(data, len, out);
	if (rc != 0)
		ctl_report_fail(report,
		                rc == DIRAUTH_ERR_NOMEM || rc == DIRAUTH_ERR_CRYPTO ? CTL_EXIT_SOFTWARE
		                                                                    : CTL_EXIT_DATA,
		                "%s %s: not a key certificate signed by its identity key: %s", what, path,
		                dirauth_strerror(rc));
done:
	free(data);
	return rc;
}

/* The rotation's refusals that depend only on the two windows and keys. */
static int check_rotation(const struct ctl_rotate_options *options, const struct note_verifier *identity,
                          uint64_t valid_until, struct ctl_rotate_result *result, struct ctl_report *report)
{
	const struct certificate *previous = &result->previous;
	char previous_until[VERIFY_TIME_TEXT_MAX];
	char new_after[VERIFY_TIME_TEXT_MAX];

	if (!note_verifier_equal(&previous->identity, identity)) {
		ctl_report_fail(report, CTL_EXIT_DATA,
		                "rotate: --previous %s was issued by another identity key (%s key %08" PRIx32
		                "), not by --identity",
		                options->previous_path, previous->identity.name, previous->identity.key_id);
		return DIRAUTH_ERR_MISMATCH;
	}
	verify_format_time(previous->valid_until, previous_until);
	verify_format_time(options->valid_after, new_after);
	if (options->valid_after > previous->valid_until) {
		result->gap_seconds = options->valid_after - previous->valid_until;
		if (!options->allow_gap) {
			ctl_report_fail(
			    report, CTL_EXIT_DATA,
			    "rotate: gap: the new window starts at %s but the previous certificate ends at "
			    "%s, leaving %" PRIu64
			    " seconds without a valid signing key; start at or before the previous "
			    "valid-until (--valid-after %" PRIu64 ") or pass --allow-gap",
			    new_after, previous_until, result->gap_seconds, previous->valid_until);
			return DIRAUTH_ERR_REFUSED;
		}
	} else {
		result->overlap_seconds = previous->valid_until - options->valid_after;
	}
	if (valid_until <= previous->valid_until) {
		ctl_report_fail(
		    report, CTL_EXIT_DATA,
		    "rotate: the new certificate would end at %" PRIu64
		    ", no later than the previous one (%s): a rotation must extend the authority's "
		    "validity",
		    valid_until, previous_until);
		return DIRAUTH_ERR_REFUSED;
	}
	return 0;
}

int ctl_rotate_run(const struct ctl_rotate_options *options, struct ctl_rotate_result *result,
                   struct ctl_report *report)
{
	const struct note_verifier *identity_verifier;
	struct signer_key *identity = NULL;
	struct signer_key *signing = NULL;
	struct buffer note;
	uint64_t valid_until = 0;
	int key_written = 0;
	int rc;

	memset(result, 0, sizeof(*result));
	buffer_init(&note);
	rc = ctl_certify_window("rotate", options->valid_after, options->days, 0, &valid_until, report);
	if (rc == 0)
		rc = refuse_existing("rotate", options->key_out, report);
	if (rc == 0)
		rc = refuse_existing("rotate", options->cert_out, report);
	if (rc == 0)
		rc = ctl_certify_load_key("rotate: identity key", options->identity_path, &identity, report);
	if (rc != 0)
		goto done;
	identity_verifier = signer_key_verifier(identity);
	if (strcmp(options->name, identity_verifier->name) != 0) {
		rc = DIRAUTH_ERR_MISMATCH;
		ctl_report_fail(report, CTL_EXIT_DATA,
		                "rotate: name mismatch: --name is '%.128s', the identity key is called '%s'",
		                options->name, identity_verifier->name);
		goto done;
	}
	rc = read_certificate("rotate: previous certificate", options->previous_path, &result->previous,
	                      report);
	if (rc == 0)
		rc = check_rotation(options, identity_verifier, valid_until, result, report);
	if (rc != 0)
		goto done;
	rc = signer_key_generate(options->name, &signing);
	if (rc != 0) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "rotate: cannot generate a key: %s",
		                dirauth_strerror(rc));
		goto done;
	}
	rc = ctl_certificate_issue("rotate", identity, signer_key_verifier(signing), options->valid_after,
	                           valid_until, &result->certificate, &note, report);
	if (rc != 0)
		goto done;
	rc = signer_key_save(signing, options->key_out);
	if (rc != 0) {
		ctl_report_fail(report, CTL_EXIT_CANNOT_CREATE,
		                rc == DIRAUTH_ERR_EXISTS ? "rotate: %s: already exists, not overwritten"
		                                         : "rotate: %s: cannot create",
		                options->key_out);
		goto done;
	}
	key_written = 1;
	rc = ctl_certificate_write("rotate", options->cert_out, &note, report);
	if (rc != 0)
		goto done;
	note_verifier_format(signer_key_verifier(signing), result->verifier);
done:
	/* A key without its certificate is of no use and must not linger as a loose secret. */
	if (rc != 0 && key_written)
		unlink(options->key_out);
	signer_key_free(signing);
	signer_key_free(identity);
	buffer_free(&note);
	return rc;
}

static int identity_pinned(const struct trust_bundle *bundle, const struct note_verifier *identity)
{
	for (size_t i = 0; i < bundle->authority_count; i++) {
		if (note_verifier_equal(&bundle->authorities[i], identity))
			return 1;
	}
	return 0;
}

/* Parses, verifies and judges one certificate note; returns the verification's result. */
static int show_entry(const uint8_t *note, size_t len, const struct trust_bundle *bundle, uint64_t now,
                      struct ctl_certificate_entry *entry)
{
	const struct certificate *certificate = &entry->certificate;
	char when[VERIFY_TIME_TEXT_MAX];

	memset(entry, 0, sizeof(*entry));
	entry->error = certificate_parse_signed(note, len, &entry->certificate);
	if (entry->error != 0) {
		snprintf(entry->description, sizeof(entry->description), "refused: %s",
		         dirauth_strerror(entry->error));
		return entry->error;
	}
	entry->verified = 1;
	entry->pinned = bundle != NULL && identity_pinned(bundle, &certificate->identity);
	if (now < certificate->valid_after) {
		verify_format_time(certificate->valid_after, when);
		snprintf(entry->description, sizeof(entry->description), "not yet valid, from %s", when);
	} else if (now >= certificate->valid_until) {
		verify_format_time(certificate->valid_until, when);
		snprintf(entry->description, sizeof(entry->description), "expired at %s", when);
	} else {
		verify_format_time(certificate->valid_until, when);
		snprintf(entry->description, sizeof(entry->description), "valid now, until %s", when);
	}
	return 0;
}

int ctl_certificate_show(const char *path, const struct trust_bundle *bundle, uint64_t now,
                         struct ctl_certificate_listing *listing, struct ctl_report *report)
{
	struct certificate_bundle_entry entries[CERTIFICATE_BUNDLE_MAX];
	uint8_t *data = NULL;
	size_t len = 0;
	size_t count = 0;
	int rc;

	memset(listing, 0, sizeof(*listing));
	rc = ctl_file_read_reported(path, &certificate_bundle_limit, &data, &len, report,
	                            "certificate show: %s", path);
	if (rc != 0)
		goto done;
	if (len >= strlen(BUNDLE_KIND_LINE) &&
	    memcmp(data, BUNDLE_KIND_LINE, strlen(BUNDLE_KIND_LINE)) == 0) {
		listing->is_bundle = 1;
		rc = certificate_bundle_parse(data, len, entries, &count);
		if (rc != 0) {
			ctl_report_fail(report, CTL_EXIT_DATA,
			                "certificate show: %s: not a certificate bundle: %s", path,
			                dirauth_strerror(rc));
			goto done;
		}
	} else {
		entries[0].note = data;
		entries[0].note_len = len;
		count = 1;
	}
	for (size_t i = 0; i < count; i++) {
		struct ctl_certificate_entry *entry = &listing->entries[i];
		int verdict = show_entry(entries[i].note, entries[i].note_len, bundle, now, entry);
		listing->count++;
		if (verdict != 0 && rc == 0) {
			rc = verdict;
			ctl_report_fail(
			    report,
			    verdict == DIRAUTH_ERR_NOMEM || verdict == DIRAUTH_ERR_CRYPTO ? CTL_EXIT_SOFTWARE
			                                                                  : CTL_EXIT_DATA,
			    "certificate show: %s: certificate %zu: not a key certificate signed by its "
			    "identity key: %s",
			    path, i + 1, dirauth_strerror(verdict));
		} else if (verdict == 0 && bundle != NULL && !entry->pinned && rc == 0) {
			rc = DIRAUTH_ERR_UNKNOWN_KEY;
			ctl_report_fail(
			    report, CTL_EXIT_DATA,
			    "certificate show: %s: certificate %zu: its identity key %s+%08" PRIx32
			    " is not pinned by the trust bundle",
			    path, i + 1, entry->certificate.identity.name,
			    entry->certificate.identity.key_id);
		}
	}
done:
	free(data);
	return rc;
}
