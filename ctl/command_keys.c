/*
 * command_keys.c: the bodies of dirauthctl's commands on keys and certificates: keygen,
 * identity-keygen, certify, rotate and certificate show (ctl/keygen.h, ctl/certify.h).
 *
 * Each body turns checked options into one call of its module and prints what it made: a key's
 * verifier, a trust-bundle line, a certificate's fields. A validity window is given as unix
 * seconds, "now", or a number of days, and checked here before anything is signed.
 */
#include "ctl/command_bodies.h"

#include "ctl/certify.h"
#include "ctl/keygen.h"
#include "ctl/trust_file.h"
#include "schema/checkpoint.h"
#include "signer/key.h"
#include "base/error.h"
#include "verify/verify.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char certificate_usage[] =
    "usage: dirauthctl certificate show CERT [--trust BUNDLE] [--now SECONDS]\n"
    "       (inspect is another name for show)\n"
    "\n"
    "Prints the fields of a key certificate, or of each certificate of a certificate bundle\n"
    "(such as the certificates file a fetch stores next to a snapshot), verifies each one's\n"
    "signature by the identity key it names, and says whether it is valid now. With --trust, also\n"
    "checks that the trust bundle pins that identity key.\n"
    "\n"
    "  --trust BUNDLE      check the identity keys against this trust bundle\n"
    "  --now SECONDS       use this unix time instead of the clock\n";

/* Unix seconds, or with allow_now "now" (the clock), into *out; option names the flag. */
static int parse_time(const char *command, const char *option, const char *text, int allow_now, uint64_t now,
                      uint64_t *out, struct ctl_report *report)
{
	if (allow_now && strcmp(text, "now") == 0) {
		*out = now;
		return 0;
	}
	if (ctl_command_parse_decimal(text, out) != 0) {
		ctl_report_fail(report, CTL_EXIT_USAGE, "%s: %s: expected unix seconds%s", command, option,
		                allow_now ? " or 'now'" : "");
		return -1;
	}
	return 0;
}

/* --valid-after (default now) and the window end from --days or --valid-until. */
static int read_window(const char *command, const struct ctl_arguments *arguments, uint64_t *valid_after,
                       uint64_t *valid_until, uint64_t *days, struct ctl_report *report)
{
	uint64_t now = 0;
	uint64_t until = 0;

	*days = 0;
	if (ctl_command_read_clock(command, arguments->now_text, &now, report) != 0)
		return -1;
	*valid_after = now;
	if (arguments->valid_after_text != NULL &&
	    parse_time(command, "--valid-after", arguments->valid_after_text, 1, now, valid_after, report) !=
	        0)
		return -1;
	if (arguments->days_text != NULL &&
	    (ctl_command_parse_decimal(arguments->days_text, days) != 0 || *days == 0)) {
		ctl_report_fail(report, CTL_EXIT_USAGE,
		                "%s: --days: expected a whole number of days, at least 1", command);
		return -1;
	}
	if (arguments->valid_until_text != NULL &&
	    parse_time(command, "--valid-until", arguments->valid_until_text, 0, now, &until, report) != 0)
		return -1;
	if (arguments->valid_until_text != NULL && until == 0) {
		ctl_report_fail(report, CTL_EXIT_USAGE, "%s: --valid-until: must be after --valid-after",
		                command);
		return -1;
	}
	if (valid_until != NULL &&
	    ctl_certify_window(command, *valid_after, *days, until, valid_until, report) != 0)
		return -1;
	return 0;
}

/* Prints the fields of a certificate, aligned, one per line. */
static void print_certificate(const struct certificate *certificate)
{
	char identity[NOTE_VERIFIER_KEY_MAX + 1];
	char signing[NOTE_VERIFIER_KEY_MAX + 1];
	char after[VERIFY_TIME_TEXT_MAX];
	char until[VERIFY_TIME_TEXT_MAX];
	uint64_t length = certificate->valid_until - certificate->valid_after;

	note_verifier_format(&certificate->identity, identity);
	note_verifier_format(&certificate->signing_key, signing);
	verify_format_time(certificate->valid_after, after);
	verify_format_time(certificate->valid_until, until);
	printf("authority    %s\n", certificate->authority);
	printf("identity     %s\n", identity);
	printf("signing-key  %s\n", signing);
	printf("valid-after  %s\n", after);
	printf("valid-until  %s\n", until);
	printf("window       %" PRIu64 " seconds (%" PRIu64 " days %" PRIu64 " hours)\n", length,
	       length / 86400, length % 86400 / 3600);
}

int ctl_command_keygen(const struct ctl_arguments *arguments, struct ctl_report *report)
{
	char verifier[NOTE_VERIFIER_KEY_MAX + 1];

	if (ctl_keygen_run(arguments->name, arguments->out, verifier, report) != 0)
		return report->exit_code;
	printf("%s\n", verifier);
	return CTL_EXIT_OK;
}

int ctl_command_identity_keygen(const struct ctl_arguments *arguments, struct ctl_report *report)
{
	char verifier[NOTE_VERIFIER_KEY_MAX + 1];

	if (ctl_identity_keygen_run(arguments->name, arguments->out, verifier, report) != 0)
		return report->exit_code;
	/* Comment lines, then the line itself: the output can be pasted into a trust bundle as is. */
	printf("# OFFLINE IDENTITY KEY of authority %s, written to %s (mode 0600).\n", arguments->name,
	       arguments->out);
	printf("# Keep it on this offline machine and back it up; never copy it to a server. It signs only\n"
	       "# key certificates (dirauthctl certify, rotate). Pin it in trust bundles with this line:\n");
	printf("authority %s\n", verifier);
	return CTL_EXIT_OK;
}

int ctl_command_key_verifiers(const struct ctl_arguments *arguments, struct ctl_report *report)
{
	struct signer_key *key = NULL;
	struct note_verifier cosigner;
	char ed25519[NOTE_VERIFIER_KEY_MAX + 1], cosignature[NOTE_VERIFIER_KEY_MAX + 1];

	if (ctl_certify_load_key("key-verifiers: key", arguments->key, &key, report) != 0)
		return report->exit_code;
	const struct note_verifier *verifier = signer_key_verifier(key);
	int rc = cosignature_verifier_from_ed25519(verifier->name, verifier->public_key, &cosigner);
	if (rc == 0) {
		note_verifier_format(verifier, ed25519);
		note_verifier_format(&cosigner, cosignature);
	}
	signer_key_free(key);
	if (rc != 0) {
		ctl_report_fail(report, ctl_exit_code_for_error(rc), "key-verifiers: %s",
		                dirauth_strerror(rc));
		return report->exit_code;
	}
	/* One key, two verifier keys: which to copy depends on where it is pinned. */
	printf("# the verifier keys of %s, by where each is pinned\n", arguments->key);
	printf("# ed25519 (type 0x01): a provider's key, an authority's signing or identity key, a log "
	       "key\n");
	printf("ed25519 %s\n", ed25519);
	printf("# cosignature (type 0x04): a member's cosignature_key, a witness (--witness-key)\n");
	printf("cosignature %s\n", cosignature);
	return CTL_EXIT_OK;
}

int ctl_command_certify(const struct ctl_arguments *arguments, struct ctl_report *report)
{
	struct ctl_certify_options certify_options;
	struct certificate certificate;
	struct buffer note;
	uint64_t days;
	int rc;

	if ((arguments->signing_verifier == NULL) == (arguments->signing_key == NULL)) {
		ctl_report_fail(
		    report, CTL_EXIT_USAGE,
		    "certify: give exactly one of --signing-verifier VKEY and --signing-key FILE");
		return report->exit_code;
	}
	memset(&certify_options, 0, sizeof(certify_options));
	if (read_window("certify", arguments, &certify_options.valid_after, &certify_options.valid_until,
	                &days, report) != 0)
		return report->exit_code;
	certify_options.identity_path = arguments->identity;
	certify_options.signing_verifier = arguments->signing_verifier;
	certify_options.signing_key_path = arguments->signing_key;
	certify_options.out_path = arguments->out;
	buffer_init(&note);
	rc = ctl_certify_run(&certify_options, &certificate, &note, report);
	if (rc == 0) {
		printf("certificate written to %s\n", arguments->out);
		print_certificate(&certificate);
	}
	buffer_free(&note);
	return rc == 0 ? CTL_EXIT_OK : report->exit_code;
}

int ctl_command_rotate(const struct ctl_arguments *arguments, struct ctl_report *report)
{
	struct ctl_rotate_options rotate_options;
	struct ctl_rotate_result result;
	char previous_after[VERIFY_TIME_TEXT_MAX];
	char previous_until[VERIFY_TIME_TEXT_MAX];
	char new_after[VERIFY_TIME_TEXT_MAX];
	char new_until[VERIFY_TIME_TEXT_MAX];

	memset(&rotate_options, 0, sizeof(rotate_options));
	if (read_window("rotate", arguments, &rotate_options.valid_after, NULL, &rotate_options.days,
	                report) != 0)
		return report->exit_code;
	rotate_options.identity_path = arguments->identity;
	rotate_options.name = arguments->name;
	rotate_options.key_out = arguments->key_out;
	rotate_options.cert_out = arguments->cert_out;
	rotate_options.previous_path = arguments->previous;
	rotate_options.allow_gap = arguments->allow_gap;
	if (ctl_rotate_run(&rotate_options, &result, report) != 0)
		return report->exit_code;
	verify_format_time(result.previous.valid_after, previous_after);
	verify_format_time(result.previous.valid_until, previous_until);
	verify_format_time(result.certificate.valid_after, new_after);
	verify_format_time(result.certificate.valid_until, new_until);
	printf("new signing key written to %s (mode 0600): %s\n", arguments->key_out, result.verifier);
	printf("new certificate written to %s\n", arguments->cert_out);
	printf("previous window  %s until %s\n", previous_after, previous_until);
	printf("new window       %s until %s\n", new_after, new_until);
	if (result.gap_seconds > 0)
		printf("GAP              %" PRIu64 " seconds with no valid signing key (--allow-gap)\n",
		       result.gap_seconds);
	else
		printf("overlap          %s until %s: %" PRIu64 " seconds in which both keys are valid\n",
		       new_after, previous_until, result.overlap_seconds);
	printf("next steps:\n"
	       "  1. move %s to the signer's key directory (0700, owned by the signer's user), mode 0600\n"
	       "  2. in the signer config set signing_key to it and list the certificates new first:\n"
	       "       certificates: [%s, %s]\n"
	       "     then restart the signer; verifiers accept both keys during the overlap\n"
	       "  3. after %s remove %s from certificates and destroy the previous signing key\n",
	       arguments->key_out, arguments->cert_out, arguments->previous, previous_until,
	       arguments->previous);
	return CTL_EXIT_OK;
}

static int ctl_command_certificate_show(const struct ctl_arguments *arguments, struct ctl_report *report)
{
	struct ctl_certificate_listing *listing = NULL;
	struct trust_bundle *bundle = NULL;
	uint64_t now = 0;
	int exit_code;

	if (ctl_command_read_clock("certificate show", arguments->now_text, &now, report) != 0)
		return report->exit_code;
	/* Large (fixed arrays); kept off the stack. */
	listing = malloc(sizeof(*listing));
	if (listing == NULL) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "certificate show: out of memory");
		return report->exit_code;
	}
	if (arguments->trust != NULL &&
	    ctl_command_load_bundle("certificate show", arguments->trust, &bundle, report) != 0) {
		exit_code = report->exit_code;
		goto done;
	}
	exit_code = ctl_certificate_show(arguments->operand, bundle, now, listing, report) == 0
	                ? CTL_EXIT_OK
	                : report->exit_code;
	for (size_t i = 0; i < listing->count; i++) {
		const struct ctl_certificate_entry *entry = &listing->entries[i];
		if (listing->is_bundle)
			printf("%scertificate %zu of %zu\n", i > 0 ? "\n" : "", i + 1, listing->count);
		if (!entry->verified) {
			printf("signature    %s\n", entry->description);
			continue;
		}
		print_certificate(&entry->certificate);
		printf("signature    verified: signed by the identity key it names\n");
		printf("status       %s\n", entry->description);
		if (bundle != NULL)
			printf("pinned       %s\n",
			       entry->pinned ? "yes: the trust bundle pins this identity key"
			                     : "NO: the trust bundle does not pin this identity key");
	}
done:
	free(listing);
	free(bundle);
	return exit_code;
}

static const struct ctl_command certificate_show_command = {
    .name = "certificate show",
    .help_name = "certificate",
    .usage = certificate_usage,
    .operand = "CERT",
    .options = {CTL_OPTION_TRUST, CTL_OPTION_NOW},
    .run = ctl_command_certificate_show,
};

/* "certificate show CERT" (or "certificate inspect CERT"): the word after certificate is the
 * subcommand, and the rest are show's own words. */
int ctl_command_certificate(int argc, char **argv, struct ctl_report *report)
{
	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		fputs(certificate_usage, stdout);
		return CTL_EXIT_OK;
	}
	if (argc < 2 || (strcmp(argv[1], "show") != 0 && strcmp(argv[1], "inspect") != 0)) {
		ctl_report_fail(report, CTL_EXIT_USAGE,
		                "certificate: expected 'show CERT' (see dirauthctl certificate --help)");
		return report->exit_code;
	}
	return ctl_command_run(&certificate_show_command, argc - 1, argv + 1, report);
}
