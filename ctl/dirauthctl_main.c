/*
 * dirauthctl_main.c: the dirauthctl program: its commands' usage texts, their bodies (turning
 * parsed options into calls and results into output), and main.
 *
 * Each command's work lives in its own module (keygen.h, certify.h, register.h, lifecycle.h,
 * fetch.h, proof.h) and reports its outcome in a struct ctl_report. Each command here is an entry
 * of the table at the end (command.h): its options, which it requires, its usage text and its
 * body; ctl_command_run parses the words, answers --help and refuses what is missing, so that a
 * body starts from checked arguments. A body prints what succeeded on stdout; main prints the one
 * failure line on stderr and exits with the report's sysexits status. The clock is read here,
 * once, and passed down (or taken from --now).
 */
#include "ctl/capability.h"
#include "ctl/certify.h"
#include "ctl/command.h"
#include "ctl/evidence.h"
#include "ctl/fetch.h"
#include "ctl/files.h"
#include "ctl/keygen.h"
#include "ctl/lifecycle.h"
#include "ctl/monitor.h"
#include "ctl/proof.h"
#include "ctl/register.h"
#include "ctl/replay.h"
#include "ctl/report.h"
#include "ctl/trust_file.h"
#include "net/client.h"
#include "schema/crypto.h"
#include "schema/error.h"
#include "schema/lines.h"
#include "verify/snapshot.h"
#include "verify/verify.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The longest --every: a year. A period is a count of seconds turned into milliseconds and
 * added to clock readings, so it is bounded well below any overflow. */
#define CTL_EVERY_MAX_SECONDS (365ULL * 86400)

static const char main_usage[] =
    "usage: dirauthctl COMMAND [OPTIONS]\n"
    "\n"
    "commands:\n"
    "  keygen            create a signing or provider key file and print its verifier key\n"
    "  identity-keygen   create an authority's offline identity key and print its trust-bundle line\n"
    "  certify           issue a key certificate: the identity key vouches for a signing key\n"
    "  rotate            create a new signing key and its certificate, overlapping the previous one\n"
    "  certificate show  print and verify a certificate or a certificate bundle\n"
    "  register          sign a YAML service description and submit it to an authority\n"
    "  health            sign and post an endpoint's coarse health (--every: keep posting)\n"
    "  revoke            sign and post the revocation of an endpoint or a service\n"
    "  deregister        withdraw a service and keep the authorities' signed receipts\n"
    "  replay-revocations\n"
    "                    post a snapshot's revocations again to an authority restored from a backup\n"
    "  fetch             download, verify and store the latest snapshot of a namespace\n"
    "  verify            check an offline proof file: header, checkpoint and inclusion\n"
    "  proof             download the proof file of one epoch's header in the log\n"
    "  capability new    make the bearer secret of a private namespace\n"
    "  monitor           watch authorities and mirrors; write evidence of misbehaviour\n"
    "  verify-evidence   check an evidence file offline and name the misbehaving keys\n"
    "\n"
    "dirauthctl COMMAND --help shows the options of a command.\n"
    "exit status: 0 ok, 64 usage, 65 bad or unverifiable data, 66 missing input, 69 server\n"
    "unavailable, 70 internal error, 73 cannot create output, 74 I/O error, 75 try again later\n"
    "(fetch: the snapshot is stale; register, deregister: fewer authorities accepted than the\n"
    "threshold; health, revoke: not every server accepted),\n"
    "76 refused by the server, 77 unsafe key file permissions, 78 bad trust bundle.\n"
    "Key certificates and rotation: docs/key-management.md.\n";

static const char keygen_usage[] =
    "usage: dirauthctl keygen --name NAME --out FILE\n"
    "\n"
    "Generates an Ed25519 key called NAME, writes it to FILE (created, mode 0600, never\n"
    "overwritten) and prints its verifier key (NAME+KEYID+BASE64) on stdout.\n"
    "\n"
    "  --name NAME   key name (printable, no spaces or '+')\n"
    "  --out FILE    the private key file to create\n";

static const char identity_keygen_usage[] =
    "usage: dirauthctl identity-keygen --name NAME --out FILE\n"
    "\n"
    "Generates an authority's offline identity key called NAME (the authority's name), writes it\n"
    "to FILE (created, mode 0600, never overwritten) and prints the trust-bundle line that pins\n"
    "it. Run it on an offline machine and keep FILE there: the identity key only signs key\n"
    "certificates (certify, rotate); the online signing key signs everything else.\n"
    "\n"
    "  --name NAME   the authority name (printable, no spaces or '+')\n"
    "  --out FILE    the private key file to create\n";

static const char certify_usage[] =
    "usage: dirauthctl certify --identity FILE (--signing-verifier VKEY | --signing-key FILE)\n"
    "                          [--valid-after SECONDS|now] (--days N | --valid-until SECONDS)\n"
    "                          --out CERT [--now SECONDS]\n"
    "\n"
    "Issues a key certificate: the identity key signs that the signing key speaks for the\n"
    "authority from valid-after until valid-until (at most 400 days). Writes CERT (mode 0644,\n"
    "never overwritten) and prints the certificate's fields.\n"
    "\n"
    "  --identity FILE          the authority's identity key (mode 0600)\n"
    "  --signing-verifier VKEY  the signing key's verifier key, NAME+KEYID+BASE64 (NAME must be\n"
    "                           the identity key's name)\n"
    "  --signing-key FILE       or the signing key file; only its public half is used\n"
    "  --valid-after SECONDS    start of the window, unix seconds or 'now' (default now)\n"
    "  --days N                 length of the window in days\n"
    "  --valid-until SECONDS    or the end of the window, unix seconds\n"
    "  --out CERT               the certificate file to create\n"
    "  --now SECONDS            use this unix time instead of the clock for 'now'\n";

static const char rotate_usage[] =
    "usage: dirauthctl rotate --identity FILE --name NAME --key-out NEWKEY --cert-out NEWCERT\n"
    "                         --previous CERT [--valid-after SECONDS|now] --days N [--allow-gap]\n"
    "                         [--now SECONDS]\n"
    "\n"
    "Creates a new signing key NEWKEY (mode 0600) and its certificate NEWCERT (mode 0644), both\n"
    "never overwritten. The new window must start no later than the previous certificate's\n"
    "valid-until, so that both keys are valid during the overlap and there is no moment without a\n"
    "valid key; it must also end later than the previous one. Prints both windows, the overlap and\n"
    "the steps to install the new key.\n"
    "\n"
    "  --identity FILE          the authority's identity key (mode 0600)\n"
    "  --name NAME              the authority name (must be the identity key's name)\n"
    "  --key-out NEWKEY         the new signing key file to create\n"
    "  --cert-out NEWCERT       the new certificate file to create\n"
    "  --previous CERT          the certificate of the signing key being replaced\n"
    "  --valid-after SECONDS    start of the new window, unix seconds or 'now' (default now)\n"
    "  --days N                 length of the new window in days\n"
    "  --allow-gap              accept a new window that starts after the previous one ends\n"
    "  --now SECONDS            use this unix time instead of the clock for 'now'\n";

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

static const char register_usage[] =
    "usage: dirauthctl register --key FILE --service SERVICE.yaml (--server URL... | --dry-run)\n"
    "                           [--trust BUNDLE] [--verbose] [--now SECONDS]\n"
    "\n"
    "Builds the registration described by SERVICE.yaml, signs it with the provider key FILE and\n"
    "posts it to URL/v1/registrations; checks the receipt the authority returns. With several\n"
    "--server (and --trust), posts to all of them at once, prints one line per server and\n"
    "succeeds when at least the trust bundle's threshold of its authorities accepted (else 75).\n"
    "\n"
    "  --key FILE          the provider's private key (mode 0600)\n"
    "  --service FILE      the YAML service description\n"
    "  --server URL        the authority, e.g. http://127.0.0.1:8080; repeat for several (at\n"
    "                      most 32)\n"
    "  --dry-run           print the signed registration note and stop\n"
    "  --trust BUNDLE      verify the receipt's signature against this trust bundle (and the\n"
    "                      key certificates the server serves at URL/v1/certificates)\n"
    "  --verbose           also print the receipt note\n"
    "  --now SECONDS       use this unix time instead of the clock\n";

static const char health_usage[] =
    "usage: dirauthctl health --key FILE --service SERVICE.yaml --endpoint ID --class CLASS\n"
    "                         --server URL... [--signer provider|endpoint] [--capacity CAPACITY]\n"
    "                         [--sequence N] [--state FILE] [--every SECONDS] [--now SECONDS]\n"
    "\n"
    "Builds a health statement about endpoint ID of the service SERVICE.yaml describes (issued-at\n"
    "now), signs it with FILE, the provider's key or (--signer endpoint) the endpoint's own key,\n"
    "the one the file's 'key:' names for it, and posts it to URL/v1/endpoint-health of every\n"
    "--server at once; prints what each answered. Exit 0 when every server accepted it.\n"
    "\n"
    "  --key FILE          the signing key (mode 0600)\n"
    "  --service FILE      the YAML service description the endpoint belongs to\n"
    "  --endpoint ID       the endpoint (64 hex digits), one of the file's\n"
    "  --class CLASS       healthy, degraded, draining (no new sessions) or unavailable\n"
    "  --server URL        an authority; repeat for several (at most 32)\n"
    "  --signer WHO        provider (default: FILE is the provider's key) or endpoint\n"
    "  --capacity CLASS    optional: the capacity class offered now, low, medium or high\n"
    "  --sequence N        the statement's sequence (default: after --state's, else now)\n"
    "  --state FILE        keeps the last sequence used; the next one is one above it\n"
    "  --every SECONDS     keep posting a new statement every SECONDS (10% jitter), one line\n"
    "                      per round, until SIGINT or SIGTERM\n"
    "  --now SECONDS       use this unix time instead of the clock (with --every, the first round's)\n";

static const char revoke_usage[] =
    "usage: dirauthctl revoke --key FILE (--service SERVICE.yaml | --namespace NS --service-id ID)\n"
    "                         [--endpoint ID] --reason REASON --server URL...\n"
    "                         [--signer provider|operator] [--sequence N] [--state FILE]\n"
    "                         [--now SECONDS]\n"
    "\n"
    "Signs the revocation of endpoint ID, or without --endpoint of the whole service, and posts\n"
    "it to URL/v1/revocations of every --server at once. A revoked endpoint or service never comes\n"
    "back: not by a new registration, not by a higher sequence. Exit 0 when every server accepted.\n"
    "\n"
    "  --key FILE          the provider's key, or an operator's (--signer operator)\n"
    "  --service FILE      the YAML service description (namespace and service id)\n"
    "  --namespace NS      or the namespace ...\n"
    "  --service-id ID     ... and the service id (64 hex digits)\n"
    "  --endpoint ID       the endpoint to revoke; without it the whole service\n"
    "  --reason REASON     key-compromise, retired, superseded or operator-action\n"
    "  --server URL        an authority; repeat for several (at most 32)\n"
    "  --signer WHO        provider (default) or operator\n"
    "  --sequence N        the key's own number for it (default: after --state's, else now)\n"
    "  --state FILE        keeps the last sequence used; the next one is one above it\n"
    "  --now SECONDS       use this unix time instead of the clock\n";

static const char deregister_usage[] =
    "usage: dirauthctl deregister --key FILE (--service SERVICE.yaml | --namespace NS --service-id ID)\n"
    "                             --server URL... [--trust BUNDLE] [--sequence N] [--receipts DIR]\n"
    "                             [--verbose] [--now SECONDS]\n"
    "\n"
    "Signs the withdrawal of a service, every registration up to a sequence, posts it to\n"
    "URL/v1/deregistrations of every --server at once, checks each signed receipt (with --trust,\n"
    "its signature by the authority, as register does) and keeps it in\n"
    "DIR/<service>-<sequence>.<authority>.deregistration-receipt. Prints the last epoch whose\n"
    "snapshot may still list the service. With several --server (and --trust), succeeds when\n"
    "n - k + 1 of the trust bundle's authorities answered with a receipt (else 75).\n"
    "\n"
    "  --key FILE          the provider's private key (mode 0600)\n"
    "  --service FILE      the YAML service description (namespace, service id, sequence)\n"
    "  --namespace NS      or the namespace ...\n"
    "  --service-id ID     ... and the service id (64 hex digits)\n"
    "  --server URL        an authority; repeat for several (at most 32)\n"
    "  --trust BUNDLE      verify each receipt's signature against this trust bundle\n"
    "  --sequence N        withdraw registrations up to N (default: the file's sequence, else now)\n"
    "  --receipts DIR      where the receipts are kept (default: the current directory)\n"
    "  --verbose           also print each receipt\n"
    "  --now SECONDS       use this unix time instead of the clock\n";

static const char replay_usage[] =
    "usage: dirauthctl replay-revocations BODY --trust BUNDLE --server URL [--capability-file FILE]\n"
    "\n"
    "Posts every revocation the snapshot body BODY lists (a mirror's DIR/NS/EPOCH.body, as fetch\n"
    "keeps it) to the authority at URL, lowest sequence first: an authority restored from a backup\n"
    "taken before them holds them again. Each is a signed note the authority checks as a\n"
    "provider's. One it holds already is counted as held; one a later revocation by its key has\n"
    "passed over since the restore, as superseded; after a refusal, no later one of the same key\n"
    "is posted. BODY is read within the trust bundle's max-body-uncompressed and max-records.\n"
    "Exit 0 when every one was taken or held, 76 otherwise (the first is named), 69 when the\n"
    "authority cannot be reached. Replay before anyone posts new revocations to it.\n"
    "\n"
    "  BODY                    the snapshot body (the latest one a mirror holds lists the most)\n"
    "  --trust BUNDLE          the trust bundle whose bounds the body is read within\n"
    "  --server URL            the authority, e.g. http://127.0.0.1:8080\n"
    "  --capability-file FILE  the capability of a private namespace (to ask whether a note is held)\n";

static const char fetch_usage[] =
    "usage: dirauthctl fetch --trust BUNDLE --server URL... --namespace NS [--out DIR] [--now SECONDS]\n"
    "                        [--clock-skew SECONDS] [--max-validity SECONDS] [--max-chain EPOCHS]\n"
    "                        [--capability-file FILE]\n"
    "                        [--log-key VKEY... [--witness-key VKEY]... [--witness-threshold K]]\n"
    "\n"
    "Downloads the latest snapshot of NS and the server's key certificates, verifies it against\n"
    "the trust bundle (threshold signatures by signing keys that the pinned identity keys\n"
    "certified for both the header's valid-after and now, namespace and origin, not yet valid,\n"
    "stale or valid for too long, bounds, no rollback or equivocation against the header held in\n"
    "DIR/NS, a newer epoch chaining back to it through the server's headers of the epochs in\n"
    "between, the body's digest, root and every record's signature), then writes\n"
    "DIR/NS/EPOCH.header, DIR/NS/EPOCH.body, DIR/NS/certificates and DIR/NS/latest.header.\n"
    "With several --server, tries them in turn and stores the first snapshot that verifies,\n"
    "saying which servers were skipped and why. A snapshot past its valid-until is stale: exit 75.\n"
    "\n"
    "  --trust BUNDLE          the trust bundle (identity keys, threshold, namespaces, bounds)\n"
    "  --server URL            the authority or mirror, e.g. http://127.0.0.1:8080; repeat for\n"
    "                          several (at most 32)\n"
    "  --namespace NS          the namespace to fetch\n"
    "  --out DIR               the mirror directory (default ./mirror)\n"
    "  --now SECONDS           use this unix time instead of the clock\n"
    "  --clock-skew SECONDS    how far a header's valid-after may lie ahead of now (default 300)\n"
    "  --max-validity SECONDS  the longest valid-until - valid-after accepted (default 604800)\n"
    "  --max-chain EPOCHS      the most epochs walked back to the held header (default 1024);\n"
    "                          a mirror further behind is re-seeded by deleting DIR/NS/latest.header\n"
    "  --capability-file FILE  the secret of a private namespace, sent as Authorization: Bearer on\n"
    "                          every request for NS (dirauthctl capability new makes one)\n"
    "  --log-key VKEY          check the transparency log: the snapshot must be in a checkpoint\n"
    "                          signed by this log key (named by the namespace's origin; repeat\n"
    "                          for each authority's) and consistent with DIR/NS/latest.checkpoint;\n"
    "                          keeps it and DIR/NS/EPOCH.tlog-proof (without it: not checked)\n"
    "  --witness-key VKEY      a cosigner of the checkpoints (type 0x04); repeat (at most 32)\n"
    "  --witness-threshold K   distinct witnesses that must cosign (default: the bundle's threshold)\n";

static const char verify_usage[] =
    "usage: dirauthctl verify PROOF --trust BUNDLE --certificates FILE --log-key VKEY...\n"
    "                         [--witness-key VKEY]... [--witness-threshold K]\n"
    "\n"
    "Checks a c2sp.org/tlog-proof file offline, downloading nothing: the snapshot header it carries\n"
    "is signed by the trust bundle's threshold of authorities with signing keys certified (by the\n"
    "certificate bundle FILE) at the header's valid-after; the checkpoint is signed by a log key\n"
    "and cosigned by the witness threshold; the header is the entry the proof names in the\n"
    "checkpoint's tree. Exit 0 when all hold, 65 when one does not, 78 for unusable pins.\n"
    "\n"
    "  --trust BUNDLE          the trust bundle (identity keys, threshold, namespaces)\n"
    "  --certificates FILE     the certificate bundle, as fetch keeps it in DIR/NS/certificates\n"
    "  --log-key VKEY          a log key (named by the namespace's origin); repeat for each\n"
    "                          authority's: a checkpoint signed by any of them is the log's\n"
    "  --witness-key VKEY      a cosigner's verifier key (type 0x04); repeat (at most 32)\n"
    "  --witness-threshold K   distinct witnesses that must cosign (default: the bundle's threshold)\n";

static const char proof_usage[] =
    "usage: dirauthctl proof --server URL --namespace NS --epoch E --out FILE\n"
    "\n"
    "Downloads the proof file of the header of epoch E in NS's transparency log, against the\n"
    "server's latest checkpoint (GET URL/v1/NS/log/proof/E), checks that it is one, and writes\n"
    "it to FILE (created, mode 0644, never overwritten). dirauthctl verify checks it.\n"
    "\n"
    "  --server URL     the authority, e.g. http://127.0.0.1:8080\n"
    "  --namespace NS   the namespace\n"
    "  --epoch E        the epoch whose header to prove\n"
    "  --out FILE       the proof file to create (.tlog-proof)\n";

/* ---- what several commands check and print ---- */

/* At most maximum --server URLs, none given twice. */
static int check_servers(const char *command, const struct ctl_argument_list *servers, size_t maximum,
                         struct ctl_report *report)
{
	if (servers->count > maximum) {
		ctl_report_fail(report, CTL_EXIT_USAGE, "%s: --server: at most %zu servers", command,
		                maximum);
		return -1;
	}
	return ctl_command_urls_distinct(command, "--server", servers, report);
}

/* message without its leading "<prefix>: ", when it has one. */
static const char *without_prefix(const char *message, const char *prefix)
{
	size_t len = strlen(prefix);
	if (strncmp(message, prefix, len) == 0 && message[len] == ':' && message[len + 1] == ' ')
		return message + len + 2;
	return message;
}

/* A canonical decimal into *out: 0, or -1 (and *out unspecified). */
static int parse_decimal(const char *text, uint64_t *out)
{
	struct text_span span = {text, strlen(text)};
	return text_parse_u64(span, out);
}

/* A decimal option in [minimum, maximum]; absent leaves *out. The refusal says "expected a decimal
 * from minimum to maximum", or with say_at_least "expected a decimal of at least minimum". */
static int parse_decimal_option(const char *command, const char *option, const char *text, uint64_t minimum,
                                uint64_t maximum, int say_at_least, uint64_t *out, struct ctl_report *report)
{
	uint64_t value;

	if (text == NULL)
		return 0;
	if (parse_decimal(text, &value) == 0 && value >= minimum && value <= maximum) {
		*out = value;
		return 0;
	}
	if (say_at_least)
		ctl_report_fail(report, CTL_EXIT_USAGE, "%s: %s: expected a decimal of at least %" PRIu64,
		                command, option, minimum);
	else
		ctl_report_fail(report, CTL_EXIT_USAGE,
		                "%s: %s: expected a decimal from %" PRIu64 " to %" PRIu64, command, option,
		                minimum, maximum);
	return -1;
}

/* A --namespace that is a namespace name. */
static int check_namespace_name(const char *command, const char *name, struct ctl_report *report)
{
	struct text_span span = {name, strlen(name)};

	if (text_is_name(span, NAMESPACE_NAME_MAX))
		return 0;
	ctl_report_fail(report, CTL_EXIT_USAGE, "%s: --namespace: '%.64s' is not a namespace name", command,
	                name);
	return -1;
}

static int read_clock(const char *command, const char *now_text, uint64_t *now, struct ctl_report *report)
{
	time_t seconds;

	if (now_text != NULL) {
		if (parse_decimal(now_text, now) != 0) {
			ctl_report_fail(report, CTL_EXIT_USAGE, "%s: --now: expected unix seconds", command);
			return -1;
		}
		return 0;
	}
	seconds = time(NULL);
	if (seconds < 0) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "%s: cannot read the clock", command);
		return -1;
	}
	*now = (uint64_t)seconds;
	return 0;
}

/* The trust bundle at path into a new allocation (*out, for the caller to free; it is large, fixed
 * arrays, and kept off the stack). */
static int load_bundle(const char *command, const char *path, struct trust_bundle **out,
                       struct ctl_report *report)
{
	*out = malloc(sizeof(**out));
	if (*out == NULL) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "%s: out of memory", command);
		return -1;
	}
	return ctl_trust_bundle_load(path, *out, report);
}

/* The log's pins (ctl/proof.h) from --log-key, --witness-key and --witness-threshold. */
static int parse_log_pins(const char *command, const struct ctl_arguments *arguments,
                          const struct trust_bundle *bundle, struct ctl_log_pins *pins,
                          struct ctl_report *report)
{
	return ctl_log_pins_parse(command, arguments->log_keys.values, arguments->log_keys.count,
	                          arguments->witness_keys.values, arguments->witness_keys.count,
	                          arguments->witness_threshold_text, bundle->threshold, pins, report);
}

/* The line of a server that did not accept, "URL outcome: why", why without the command's prefix
 * (and a refusal's). */
static void print_unaccepted(const char *command, const char *server_url, enum ctl_register_outcome outcome,
                             const char *message)
{
	const char *detail = without_prefix(message, command);

	if (outcome == CTL_REGISTER_REFUSED)
		detail = without_prefix(detail, "refused");
	printf("%s %s: %s\n", server_url, ctl_register_outcome_name(outcome), detail);
}

/* What follows an accepted answer another server's answer already counted for. */
static const char *counted_note(int counted)
{
	return counted ? "" : " (counted once: another server answered for it)";
}

/* Set by SIGINT and SIGTERM once catch_stop_signals ran (health --every, monitor): the loop ends
 * after the current round. */
static volatile sig_atomic_t stop_requested;

static void request_stop(int signal_number)
{
	(void)signal_number;
	stop_requested = 1;
}

static void catch_stop_signals(void)
{
	struct sigaction action;

	memset(&action, 0, sizeof(action));
	action.sa_handler = request_stop;
	sigemptyset(&action.sa_mask);
	sigaction(SIGINT, &action, NULL);
	sigaction(SIGTERM, &action, NULL);
}

/* ---- keys and certificates (ctl/keygen.h, ctl/certify.h) ---- */

/* Unix seconds, or with allow_now "now" (the clock), into *out; option names the flag. */
static int parse_time(const char *command, const char *option, const char *text, int allow_now, uint64_t now,
                      uint64_t *out, struct ctl_report *report)
{
	if (allow_now && strcmp(text, "now") == 0) {
		*out = now;
		return 0;
	}
	if (parse_decimal(text, out) != 0) {
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
	if (read_clock(command, arguments->now_text, &now, report) != 0)
		return -1;
	*valid_after = now;
	if (arguments->valid_after_text != NULL &&
	    parse_time(command, "--valid-after", arguments->valid_after_text, 1, now, valid_after, report) !=
	        0)
		return -1;
	if (arguments->days_text != NULL && (parse_decimal(arguments->days_text, days) != 0 || *days == 0)) {
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

static int run_keygen(const struct ctl_arguments *arguments, struct ctl_report *report)
{
	char verifier[NOTE_VERIFIER_KEY_MAX + 1];

	if (ctl_keygen_run(arguments->name, arguments->out, verifier, report) != 0)
		return report->exit_code;
	printf("%s\n", verifier);
	return CTL_EXIT_OK;
}

static int run_identity_keygen(const struct ctl_arguments *arguments, struct ctl_report *report)
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

static int run_certify(const struct ctl_arguments *arguments, struct ctl_report *report)
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

static int run_rotate(const struct ctl_arguments *arguments, struct ctl_report *report)
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

static int run_certificate_show(const struct ctl_arguments *arguments, struct ctl_report *report)
{
	struct ctl_certificate_listing *listing = NULL;
	struct trust_bundle *bundle = NULL;
	uint64_t now = 0;
	int exit_code;

	if (read_clock("certificate show", arguments->now_text, &now, report) != 0)
		return report->exit_code;
	/* Large (fixed arrays); kept off the stack. */
	listing = malloc(sizeof(*listing));
	if (listing == NULL) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "certificate show: out of memory");
		return report->exit_code;
	}
	if (arguments->trust != NULL &&
	    load_bundle("certificate show", arguments->trust, &bundle, report) != 0) {
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
    .run = run_certificate_show,
};

/* "certificate show CERT" (or "certificate inspect CERT"): the word after certificate is the
 * subcommand, and the rest are show's own words. */
static int command_certificate(int argc, char **argv, struct ctl_report *report)
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

/* ---- registration (ctl/register.h) ---- */

/* register with several --server: one line per server, in the order given. */
static void print_answers(const struct ctl_register_result *result, int verbose)
{
	for (size_t i = 0; i < result->answer_count; i++) {
		const struct ctl_register_answer *answer = &result->answers[i];

		if (answer->outcome != CTL_REGISTER_ACCEPTED) {
			print_unaccepted("register", answer->server_url, answer->outcome,
			                 answer->report.message);
			continue;
		}
		printf("%s accepted: published by epoch %" PRIu64 ", receipt signed by %s%s\n",
		       answer->server_url, answer->receipt.publish_by_epoch, answer->receipt_signer,
		       counted_note(answer->counted));
		if (verbose)
			fwrite(answer->receipt_note.data, 1, answer->receipt_note.len, stdout);
	}
}

static int run_register(const struct ctl_arguments *arguments, struct ctl_report *report)
{
	struct ctl_register_options register_options;
	struct ctl_register_result result;
	int exit_code;

	if (!arguments->dry_run && ctl_command_require("register", arguments->servers.values[0],
	                                               "--server (or --dry-run)", report) != 0)
		return report->exit_code;
	if (check_servers("register", &arguments->servers, CTL_REGISTER_SERVERS_MAX, report) != 0)
		return report->exit_code;
	memset(&register_options, 0, sizeof(register_options));
	register_options.key_path = arguments->key;
	register_options.service_path = arguments->service;
	register_options.server_url = arguments->servers.values[0];
	register_options.server_urls = arguments->servers.values;
	register_options.server_count = arguments->servers.count;
	register_options.trust_path = arguments->trust;
	register_options.dry_run = arguments->dry_run;
	if (read_clock("register", arguments->now_text, &register_options.now, report) != 0)
		return report->exit_code;

	ctl_register_result_init(&result);
	if (ctl_register_run(&register_options, &result, report) != 0) {
		exit_code = report->exit_code;
		print_answers(&result, arguments->verbose);
		goto done;
	}
	exit_code = CTL_EXIT_OK;
	if (arguments->dry_run) {
		fwrite(result.note.data, 1, result.note.len, stdout);
		goto done;
	}
	if (result.answer_count > 0) {
		print_answers(&result, arguments->verbose);
		printf("accepted: service %s sequence %" PRIu64 " by %zu of %zu authorities (%s), the trust "
		       "bundle requires %zu\n",
		       result.service_hex, result.sequence, result.accepted_count, result.authority_count,
		       result.accepted_names, result.threshold);
		goto done;
	}
	printf("accepted: service %s sequence %" PRIu64 ", published by epoch %" PRIu64
	       ", receipt signed by %s%s\n",
	       result.service_hex, result.sequence, result.receipt.publish_by_epoch, result.receipt_signer,
	       result.receipt_verified ? "" : " (signature not verified: no --trust)");
	if (arguments->verbose)
		fwrite(result.receipt_note.data, 1, result.receipt_note.len, stdout);
done:
	ctl_register_result_free(&result);
	return exit_code;
}

/* ---- the endpoint's life: health, revoke, deregister (ctl/lifecycle.h) ---- */

/* A word of a table ("healthy", "provider", ...) into *out through parse; absent leaves *out. */
static int parse_word(const char *command, const char *option, const char *text,
                      int (*parse)(const char *, size_t, void *), void *out, const char *expected,
                      struct ctl_report *report)
{
	if (text == NULL)
		return 0;
	if (parse(text, strlen(text), out) != 0) {
		ctl_report_fail(report, CTL_EXIT_USAGE, "%s: %s: '%.64s': expected %s", command, option, text,
		                expected);
		return -1;
	}
	return 0;
}

static int parse_health_class(const char *text, size_t len, void *out)
{
	return health_class_parse(text, len, out);
}

static int parse_health_signer(const char *text, size_t len, void *out)
{
	return health_signer_parse(text, len, out);
}

static int parse_capacity(const char *text, size_t len, void *out)
{
	return capacity_class_parse(text, len, out);
}

static int parse_revocation_signer(const char *text, size_t len, void *out)
{
	return revocation_signer_parse(text, len, out);
}

static int parse_reason(const char *text, size_t len, void *out)
{
	return revocation_reason_parse(text, len, out);
}

/* What one server answered, after it was accepted. */
static void print_accepted_answer(enum ctl_lifecycle_kind kind, const struct ctl_lifecycle_answer *answer)
{
	if (kind == CTL_LIFECYCLE_DEREGISTRATION)
		printf("last listed in epoch %" PRIu64 ", receipt signed by %s%s, kept in %s",
		       answer->receipt.last_listed_epoch, answer->receipt_signer,
		       answer->receipt_verified ? "" : " (signature not verified: no --trust)",
		       answer->receipt_path);
	else
		printf("in the view of epoch %" PRIu64, answer->epoch);
}

/* A kept deregistration receipt, as received. */
static void print_receipt(const struct ctl_lifecycle_answer *answer)
{
	uint8_t *data = NULL;
	size_t len = 0;

	if (ctl_file_read(answer->receipt_path, 2 * DEREGISTRATION_RECEIPT_MAX_BYTES, &data, &len) == 0)
		fwrite(data, 1, len, stdout);
	free(data);
}

/* With several --server: one line per server, in the order given. */
static void print_lifecycle_answers(enum ctl_lifecycle_kind kind, const struct ctl_lifecycle_result *result,
                                    int verbose)
{
	for (size_t i = 0; i < result->answer_count; i++) {
		const struct ctl_lifecycle_answer *answer = &result->answers[i];

		if (answer->outcome != CTL_REGISTER_ACCEPTED) {
			print_unaccepted(ctl_lifecycle_command_name(kind), answer->server_url,
			                 answer->outcome, answer->report.message);
			continue;
		}
		printf("%s accepted: ", answer->server_url);
		print_accepted_answer(kind, answer);
		printf("%s\n", counted_note(answer->counted));
		if (verbose && kind == CTL_LIFECYCLE_DEREGISTRATION)
			print_receipt(answer);
	}
}

/* The summary line of a command that succeeded. */
static void print_lifecycle_summary(const struct ctl_lifecycle_options *options,
                                    const struct ctl_lifecycle_result *result)
{
	const struct ctl_lifecycle_answer *first = &result->answers[0];
	uint64_t last_listed = 0;

	switch (options->kind) {
	case CTL_LIFECYCLE_HEALTH:
		printf("accepted: %s of endpoint %s, sequence %" PRIu64 ", signed by the %s key",
		       health_class_name(options->health_class), options->endpoint_hex, result->sequence,
		       options->signer == HEALTH_SIGNER_ENDPOINT ? "endpoint's own" : "provider");
		break;
	case CTL_LIFECYCLE_REVOCATION:
		if (options->endpoint_hex != NULL)
			printf("accepted: revoked endpoint %s of service %s", options->endpoint_hex,
			       result->service_hex);
		else
			printf("accepted: revoked service %s", result->service_hex);
		printf(" (%s), sequence %" PRIu64 ", signed by the %s key",
		       revocation_reason_name(options->reason), result->sequence,
		       revocation_signer_name((enum revocation_signer)options->signer));
		break;
	case CTL_LIFECYCLE_DEREGISTRATION:
	default:
		for (size_t i = 0; i < result->answer_count; i++)
			if (result->answers[i].counted &&
			    result->answers[i].receipt.last_listed_epoch > last_listed)
				last_listed = result->answers[i].receipt.last_listed_epoch;
		printf("accepted: service %s withdrawn up to sequence %" PRIu64, result->service_hex,
		       result->sequence);
		if (result->answer_count > 1)
			printf(" by %zu of the authorities (%s), absent from every snapshot after epoch "
			       "%" PRIu64,
			       result->accepted_count, result->accepted_names, last_listed);
		break;
	}
	if (result->answer_count == 1) {
		printf(", ");
		print_accepted_answer(options->kind, first);
	} else if (options->kind != CTL_LIFECYCLE_DEREGISTRATION) {
		printf(", by %zu of %zu servers", result->accepted_count, result->answer_count);
	}
	printf("\n");
}

/* One round of health --every: "round N: sequence S <class>: accepted by A of M servers" and,
 * for each server that did not accept, "; URL: why". */
static void print_round(uint64_t round, const struct ctl_lifecycle_options *options,
                        const struct ctl_lifecycle_result *result)
{
	printf("round %" PRIu64 ": sequence %" PRIu64 " %s: accepted by %zu of %zu servers", round,
	       result->sequence, health_class_name(options->health_class), result->accepted_count,
	       result->answer_count);
	for (size_t i = 0; i < result->answer_count; i++) {
		const struct ctl_lifecycle_answer *answer = &result->answers[i];
		if (answer->outcome != CTL_REGISTER_ACCEPTED)
			printf("; %s %s: %s", answer->server_url, ctl_register_outcome_name(answer->outcome),
			       without_prefix(answer->report.message, "health"));
	}
	printf("\n");
	fflush(stdout);
}

/* Seconds since an arbitrary start, from the monotonic clock. */
static uint64_t monotonic_seconds(void)
{
	struct timespec now;
	if (clock_gettime(CLOCK_MONOTONIC, &now) != 0)
		return 0;
	return (uint64_t)now.tv_sec;
}

/* Sleeps about seconds (plus or minus a tenth, at random), returning early when a stop was
 * requested. */
static void sleep_with_jitter(uint64_t seconds)
{
	uint64_t millis = seconds * 1000, spread = millis / 5;
	uint8_t random_bytes[4] = {0};
	uint32_t draw;
	struct timespec remaining;

	if (spread > 0 && crypto_random(random_bytes, sizeof(random_bytes)) == 0) {
		draw = (uint32_t)random_bytes[0] | (uint32_t)random_bytes[1] << 8 |
		       (uint32_t)random_bytes[2] << 16 | (uint32_t)random_bytes[3] << 24;
		millis = millis - spread / 2 + draw % (spread + 1);
	}
	remaining.tv_sec = (time_t)(millis / 1000);
	remaining.tv_nsec = (long)(millis % 1000) * 1000000L;
	while (!stop_requested && nanosleep(&remaining, &remaining) != 0 && errno == EINTR)
		;
}

/* health --every: a new statement each round until SIGINT or SIGTERM. A round that fails before
 * anything is posted (the key, the file, the state) ends the command with its status; a round
 * the servers refuse is reported and the next one follows. */
static int health_every(struct ctl_lifecycle_options *options, uint64_t every, struct ctl_report *report)
{
	struct ctl_lifecycle_result result;
	uint64_t start = monotonic_seconds(), first_now = options->now, last_sequence = 0;
	int exit_code = CTL_EXIT_OK;

	catch_stop_signals();
	ctl_lifecycle_result_init(&result);
	for (uint64_t round = 1; !stop_requested; round++) {
		struct ctl_report round_report;
		uint64_t elapsed = monotonic_seconds() - start;

		ctl_report_init(&round_report);
		options->now = first_now + elapsed;
		if (round > 1 && options->state_path == NULL) {
			/* Without a state file each round's sequence is the clock's, always above the last.
			 */
			options->has_sequence = 1;
			options->sequence = options->now > last_sequence ? options->now : last_sequence + 1;
		}
		if (ctl_lifecycle_run(options, &result, &round_report) != 0 && result.answer_count == 0) {
			*report = round_report;
			exit_code = report->exit_code;
			break;
		}
		last_sequence = result.sequence;
		if (options->state_path == NULL && round == 1 && options->has_sequence)
			last_sequence = options->sequence;
		print_round(round, options, &result);
		sleep_with_jitter(every);
	}
	if (exit_code == CTL_EXIT_OK)
		printf("stopped\n");
	ctl_lifecycle_result_free(&result);
	return exit_code;
}

/* health, revoke and deregister, once ctl_command_run has checked --key and --server. */
static int run_lifecycle(enum ctl_lifecycle_kind kind, const struct ctl_arguments *arguments,
                         struct ctl_report *report)
{
	const char *what = ctl_lifecycle_command_name(kind);
	struct ctl_lifecycle_options lifecycle_options;
	struct ctl_lifecycle_result result;
	uint64_t every = 0;
	int exit_code;

	if (check_servers(what, &arguments->servers, CTL_REGISTER_SERVERS_MAX, report) != 0)
		return report->exit_code;
	if (kind == CTL_LIFECYCLE_HEALTH &&
	    (ctl_command_require(what, arguments->service, "--service", report) != 0 ||
	     ctl_command_require(what, arguments->endpoint, "--endpoint", report) != 0 ||
	     ctl_command_require(what, arguments->class_text, "--class", report) != 0))
		return report->exit_code;
	if (kind == CTL_LIFECYCLE_REVOCATION &&
	    ctl_command_require(what, arguments->reason, "--reason", report) != 0)
		return report->exit_code;
	if (arguments->service == NULL &&
	    (ctl_command_require(what, arguments->namespace_name, "--service (or --namespace)", report) !=
	         0 ||
	     ctl_command_require(what, arguments->service_id, "--service-id", report) != 0))
		return report->exit_code;
	if (arguments->service != NULL && (arguments->namespace_name || arguments->service_id)) {
		ctl_report_fail(report, CTL_EXIT_USAGE,
		                "%s: give --service FILE or --namespace and --service-id, not both", what);
		return report->exit_code;
	}
	memset(&lifecycle_options, 0, sizeof(lifecycle_options));
	lifecycle_options.kind = kind;
	lifecycle_options.signer =
	    kind == CTL_LIFECYCLE_HEALTH ? HEALTH_SIGNER_PROVIDER : REVOCATION_SIGNER_PROVIDER;
	if (parse_word(what, "--class", arguments->class_text, parse_health_class,
	               &lifecycle_options.health_class, "healthy, degraded, draining or unavailable",
	               report) != 0 ||
	    parse_word(what, "--capacity", arguments->capacity, parse_capacity, &lifecycle_options.capacity,
	               "low, medium or high", report) != 0 ||
	    parse_word(what, "--reason", arguments->reason, parse_reason, &lifecycle_options.reason,
	               "key-compromise, retired, superseded or operator-action", report) != 0)
		return report->exit_code;
	if (kind == CTL_LIFECYCLE_HEALTH) {
		enum health_signer signer = HEALTH_SIGNER_PROVIDER;
		if (parse_word(what, "--signer", arguments->signer, parse_health_signer, &signer,
		               "provider or endpoint", report) != 0)
			return report->exit_code;
		lifecycle_options.signer = (int)signer;
	} else if (kind == CTL_LIFECYCLE_REVOCATION) {
		enum revocation_signer signer = REVOCATION_SIGNER_PROVIDER;
		if (parse_word(what, "--signer", arguments->signer, parse_revocation_signer, &signer,
		               "provider or operator", report) != 0)
			return report->exit_code;
		lifecycle_options.signer = (int)signer;
	}
	lifecycle_options.has_capacity = arguments->capacity != NULL;
	if (parse_decimal_option(what, "--sequence", arguments->sequence_text, 1, UINT64_MAX, 1,
	                         &lifecycle_options.sequence, report) != 0 ||
	    parse_decimal_option(what, "--every", arguments->every_text, 1, CTL_EVERY_MAX_SECONDS, 1, &every,
	                         report) != 0)
		return report->exit_code;
	lifecycle_options.has_sequence = arguments->sequence_text != NULL;
	lifecycle_options.key_path = arguments->key;
	lifecycle_options.service_path = arguments->service;
	lifecycle_options.namespace_name = arguments->namespace_name;
	lifecycle_options.service_hex = arguments->service_id;
	lifecycle_options.endpoint_hex = arguments->endpoint;
	lifecycle_options.state_path = arguments->state;
	lifecycle_options.server_urls = arguments->servers.values;
	lifecycle_options.server_count = arguments->servers.count;
	lifecycle_options.trust_path = arguments->trust;
	lifecycle_options.receipt_directory = arguments->receipts;
	if (read_clock(what, arguments->now_text, &lifecycle_options.now, report) != 0)
		return report->exit_code;
	if (every > 0)
		return health_every(&lifecycle_options, every, report);

	ctl_lifecycle_result_init(&result);
	exit_code =
	    ctl_lifecycle_run(&lifecycle_options, &result, report) == 0 ? CTL_EXIT_OK : report->exit_code;
	if (result.answer_count > 1)
		print_lifecycle_answers(kind, &result, arguments->verbose);
	if (exit_code == CTL_EXIT_OK) {
		print_lifecycle_summary(&lifecycle_options, &result);
		if (arguments->verbose && result.answer_count == 1 && kind == CTL_LIFECYCLE_DEREGISTRATION)
			print_receipt(&result.answers[0]);
	}
	ctl_lifecycle_result_free(&result);
	return exit_code;
}

static int run_health(const struct ctl_arguments *arguments, struct ctl_report *report)
{
	return run_lifecycle(CTL_LIFECYCLE_HEALTH, arguments, report);
}

static int run_revoke(const struct ctl_arguments *arguments, struct ctl_report *report)
{
	return run_lifecycle(CTL_LIFECYCLE_REVOCATION, arguments, report);
}

static int run_deregister(const struct ctl_arguments *arguments, struct ctl_report *report)
{
	return run_lifecycle(CTL_LIFECYCLE_DEREGISTRATION, arguments, report);
}

/* ---- fetch (ctl/fetch.h) ---- */

/* The summary of a stored snapshot; with several servers, which one served it. */
static void print_fetched(const struct ctl_fetch_result *result, const char *server_url)
{
	printf("verified snapshot %s epoch %" PRIu64 ": %" PRIu64
	       " records, signed by %zu of %zu authorities (%s)",
	       result->namespace_name, result->epoch, result->record_count, result->signer_count,
	       result->authority_count, result->signer_names);
	if (server_url != NULL)
		printf(", from %s", server_url);
	printf("\n");
	if (result->log_checked) {
		printf("in the log: entry %" PRIu64 " of the checkpoint of size %" PRIu64
		       ", cosigned by %zu of %zu witnesses (%zu required), ",
		       result->log.index, result->log.tree_size, result->log.cosigned,
		       result->log.witness_count, result->log.quorum);
		if (result->log_had_held)
			printf("consistent with the held checkpoint of size %" PRIu64 "\n",
			       result->log_held_size);
		else
			printf("the first checkpoint held\n");
	}
	if (result->dropped_count > 0) {
		printf("dropped %zu older kept snapshot%s that still held what this one revokes (epoch%s",
		       result->dropped_count, result->dropped_count == 1 ? "" : "s",
		       result->dropped_count == 1 ? "" : "s");
		for (size_t i = 0; i < result->dropped_count && i < CTL_FETCH_DROPPED_MAX; i++)
			printf("%s%" PRIu64, i == 0 ? " " : ", ", result->dropped[i]);
		printf("%s)\n", result->dropped_count > CTL_FETCH_DROPPED_MAX ? ", ..." : "");
	}
}

/* fetch with several --server: one "skipped URL: why" line per server passed over, then the
 * summary of the snapshot stored, or the failure (in report). */
static int fetch_from_servers(const struct ctl_fetch_options *options,
                              const struct ctl_argument_list *servers, struct ctl_report *report)
{
	struct ctl_fetch_attempt *attempts = calloc(servers->count, sizeof(*attempts));
	struct ctl_fetch_result result;
	char what[NAMESPACE_NAME_MAX + 16];
	size_t attempt_count = 0;
	int rc;

	if (attempts == NULL) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "fetch: out of memory");
		return -1;
	}
	snprintf(what, sizeof(what), "fetch %s", options->namespace_name);
	rc = ctl_fetch_run_servers(options, servers->values, servers->count, attempts, &attempt_count,
	                           &result, report);
	for (size_t i = 0; i < attempt_count; i++) {
		if (attempts[i].exit_code != CTL_EXIT_OK)
			printf("skipped %s: %s\n", attempts[i].server_url,
			       without_prefix(attempts[i].message, what));
	}
	if (rc == 0)
		print_fetched(&result, attempts[attempt_count - 1].server_url);
	free(attempts);
	return rc;
}

static int run_fetch(const struct ctl_arguments *arguments, struct ctl_report *report)
{
	char authorization[CTL_AUTHORIZATION_MAX];
	struct ctl_fetch_options fetch_options;
	struct ctl_log_pins log_pins;
	struct verify_snapshot_policy policy;
	struct ctl_fetch_result result;
	struct trust_bundle *bundle = NULL;
	int rc;

	if (check_servers("fetch", &arguments->servers, CTL_FETCH_SERVERS_MAX, report) != 0 ||
	    check_namespace_name("fetch", arguments->namespace_name, report) != 0)
		return report->exit_code;
	verify_snapshot_policy_default(&policy);
	if (parse_decimal_option("fetch", "--clock-skew", arguments->clock_skew_text, 0, UINT64_MAX, 0,
	                         &policy.clock_skew, report) != 0 ||
	    parse_decimal_option("fetch", "--max-validity", arguments->max_validity_text, 1, UINT64_MAX, 0,
	                         &policy.max_validity, report) != 0 ||
	    parse_decimal_option("fetch", "--max-chain", arguments->max_chain_text, 1,
	                         CTL_FETCH_MAX_CHAIN_LIMIT, 0, &policy.max_chain, report) != 0)
		return report->exit_code;
	memset(&fetch_options, 0, sizeof(fetch_options));
	fetch_options.policy = &policy;
	if (read_clock("fetch", arguments->now_text, &fetch_options.now, report) != 0)
		return report->exit_code;
	rc = load_bundle("fetch", arguments->trust, &bundle, report);
	if (rc != 0)
		goto done;
	fetch_options.server_url = arguments->servers.values[0];
	fetch_options.bundle = bundle;
	fetch_options.namespace_name = arguments->namespace_name;
	fetch_options.directory = arguments->out != NULL ? arguments->out : CTL_FETCH_DEFAULT_DIRECTORY;
	/* The log is checked when a log key is given. */
	rc = parse_log_pins("fetch", arguments, bundle, &log_pins, report);
	if (rc != 0)
		goto done;
	fetch_options.log = &log_pins;
	if (arguments->capability_file != NULL) {
		rc = ctl_capability_read("fetch", arguments->capability_file, authorization, report);
		if (rc != 0)
			goto done;
		fetch_options.authorization = authorization;
	}
	if (arguments->servers.count > 1) {
		rc = fetch_from_servers(&fetch_options, &arguments->servers, report);
		goto done;
	}
	rc = ctl_fetch_run(&fetch_options, &result, report);
	if (rc == 0)
		print_fetched(&result, NULL);
done:
	crypto_wipe(authorization, sizeof(authorization));
	free(bundle);
	return rc == 0 ? CTL_EXIT_OK : report->exit_code;
}

/* ---- revocations replayed into a restored authority (ctl/replay.h) ---- */

static int run_replay(const struct ctl_arguments *arguments, struct ctl_report *report)
{
	struct trust_bundle *bundle = NULL;
	struct ctl_replay_result result;
	char authorization[CTL_AUTHORIZATION_MAX] = "";
	int rc;

	memset(&result, 0, sizeof result);
	if (arguments->servers.count > 1) {
		ctl_report_fail(report, CTL_EXIT_USAGE,
		                "replay-revocations: one --server: the authority that lost the revocations");
		return report->exit_code;
	}
	rc = load_bundle("replay-revocations", arguments->trust, &bundle, report);
	if (rc == 0 && arguments->capability_file != NULL)
		rc = ctl_capability_read("replay-revocations", arguments->capability_file, authorization,
		                         report);
	if (rc == 0) {
		struct ctl_replay_options options = {.bundle = bundle,
		                                     .body_path = arguments->operand,
		                                     .server_url = arguments->servers.values[0],
		                                     .authorization =
		                                         authorization[0] ? authorization : NULL};
		rc = ctl_replay_revocations(&options, &result, report);
	}
	if (rc == 0 || result.listed > 0)
		printf("replay-revocations: %s epoch %" PRIu64 " lists %zu revocation%s: %zu taken, %zu held "
		       "already, %zu superseded, %zu refused, %zu not posted\n",
		       result.namespace_name, result.epoch, result.listed, result.listed == 1 ? "" : "s",
		       result.taken, result.held, result.superseded, result.refused, result.not_posted);
	crypto_wipe(authorization, sizeof(authorization));
	free(bundle);
	return rc == 0 ? CTL_EXIT_OK : report->exit_code;
}

/* ---- the transparency log's proofs (ctl/proof.h) ---- */

static int run_verify(const struct ctl_arguments *arguments, struct ctl_report *report)
{
	struct ctl_proof_result *result = NULL;
	struct trust_bundle *bundle = NULL;
	struct ctl_log_pins pins;
	int rc;

	rc = load_bundle("verify", arguments->trust, &bundle, report);
	if (rc != 0)
		goto done;
	/* Large (fixed arrays); kept off the stack. */
	result = malloc(sizeof(*result));
	if (result == NULL) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "verify: out of memory");
		rc = -1;
		goto done;
	}
	rc = parse_log_pins("verify", arguments, bundle, &pins, report);
	if (rc == 0)
		rc = ctl_proof_verify_files(bundle, arguments->certificates, &pins, arguments->operand,
		                            result, report);
	if (rc != 0)
		goto done;
	printf("verified proof: snapshot %s epoch %" PRIu64 " signed by %zu of %zu authorities (%s)\n",
	       result->namespace_name, result->epoch, result->signer_count, result->authority_count,
	       result->signer_names);
	printf("is entry %" PRIu64 " of the log %s at size %" PRIu64
	       ", signed by its log key and cosigned by %zu of %zu witnesses (%zu required)\n",
	       result->log.index, result->origin, result->log.tree_size, result->log.cosigned,
	       result->log.witness_count, result->log.quorum);
done:
	free(bundle);
	free(result);
	return rc == 0 ? CTL_EXIT_OK : report->exit_code;
}

static int run_proof(const struct ctl_arguments *arguments, struct ctl_report *report)
{
	struct ctl_proof_download download;
	uint64_t size = 0, index = 0;

	if (arguments->servers.count > 1) {
		ctl_report_fail(report, CTL_EXIT_USAGE, "proof: --server: one server");
		return report->exit_code;
	}
	if (check_namespace_name("proof", arguments->namespace_name, report) != 0)
		return report->exit_code;
	memset(&download, 0, sizeof(download));
	if (parse_decimal(arguments->epoch_text, &download.epoch) != 0) {
		ctl_report_fail(report, CTL_EXIT_USAGE, "proof: --epoch: expected a decimal");
		return report->exit_code;
	}
	download.server_url = arguments->servers.values[0];
	download.namespace_name = arguments->namespace_name;
	download.out_path = arguments->out;
	if (ctl_proof_download_run(&download, &size, &index, report) != 0)
		return report->exit_code;
	printf("proof written to %s: %s epoch %" PRIu64 ", entry %" PRIu64
	       " of the checkpoint of size %" PRIu64 " (not verified: dirauthctl verify checks it)\n",
	       arguments->out, arguments->namespace_name, download.epoch, index, size);
	return CTL_EXIT_OK;
}

/* ---- the monitor and its evidence (ctl/monitor.h, ctl/evidence.h) ---- */

static int command_monitor(int argc, char **argv, struct ctl_report *report)
{
	catch_stop_signals();
	return ctl_monitor_command(argc, argv, &stop_requested, report);
}

/* ---- the commands ---- */

/* health, revoke and deregister recognize one another's options, so that one given to the wrong
 * command is refused as an option of another command rather than as unknown. */
#define LIFECYCLE_OPTIONS                                                                                    \
	CTL_REQUIRED(CTL_OPTION_KEY), CTL_OPTION_SERVICE, CTL_OPTION_NAMESPACE, CTL_OPTION_SERVICE_ID,       \
	    CTL_OPTION_ENDPOINT, CTL_REQUIRED(CTL_OPTION_SERVER), CTL_OPTION_SIGNER, CTL_OPTION_CLASS,       \
	    CTL_OPTION_CAPACITY, CTL_OPTION_REASON, CTL_OPTION_SEQUENCE, CTL_OPTION_STATE, CTL_OPTION_EVERY, \
	    CTL_OPTION_TRUST, CTL_OPTION_RECEIPTS, CTL_OPTION_VERBOSE, CTL_OPTION_NOW

/* The commands whose words ctl_command_run parses. */
static const struct ctl_command commands[] = {
    {
        .name = "keygen",
        .usage = keygen_usage,
        .options = {CTL_REQUIRED(CTL_OPTION_NAME), CTL_REQUIRED(CTL_OPTION_OUT)},
        .run = run_keygen,
    },
    {
        .name = "identity-keygen",
        .usage = identity_keygen_usage,
        .options = {CTL_REQUIRED(CTL_OPTION_NAME), CTL_REQUIRED(CTL_OPTION_OUT)},
        .run = run_identity_keygen,
    },
    {
        .name = "certify",
        .usage = certify_usage,
        .options = {CTL_REQUIRED(CTL_OPTION_IDENTITY), CTL_OPTION_SIGNING_VERIFIER, CTL_OPTION_SIGNING_KEY,
                    CTL_OPTION_VALID_AFTER, CTL_OPTION_VALID_UNTIL, CTL_OPTION_DAYS,
                    CTL_REQUIRED(CTL_OPTION_OUT), CTL_OPTION_NOW},
        .run = run_certify,
    },
    {
        .name = "rotate",
        .usage = rotate_usage,
        .options = {CTL_REQUIRED(CTL_OPTION_IDENTITY), CTL_REQUIRED(CTL_OPTION_NAME),
                    CTL_REQUIRED(CTL_OPTION_KEY_OUT), CTL_REQUIRED(CTL_OPTION_CERT_OUT),
                    CTL_REQUIRED(CTL_OPTION_PREVIOUS), CTL_OPTION_VALID_AFTER, CTL_REQUIRED(CTL_OPTION_DAYS),
                    CTL_OPTION_ALLOW_GAP, CTL_OPTION_NOW},
        .run = run_rotate,
    },
    {
        .name = "register",
        .usage = register_usage,
        .options = {CTL_REQUIRED(CTL_OPTION_KEY), CTL_REQUIRED(CTL_OPTION_SERVICE), CTL_OPTION_SERVER,
                    CTL_OPTION_DRY_RUN, CTL_OPTION_TRUST, CTL_OPTION_VERBOSE, CTL_OPTION_NOW},
        .run = run_register,
    },
    {
        .name = "health",
        .usage = health_usage,
        .options = {LIFECYCLE_OPTIONS},
        .foreign = {CTL_OPTION_REASON, CTL_OPTION_TRUST, CTL_OPTION_RECEIPTS},
        .run = run_health,
    },
    {
        .name = "revoke",
        .usage = revoke_usage,
        .options = {LIFECYCLE_OPTIONS},
        .foreign = {CTL_OPTION_CLASS, CTL_OPTION_CAPACITY, CTL_OPTION_EVERY, CTL_OPTION_TRUST,
                    CTL_OPTION_RECEIPTS},
        .run = run_revoke,
    },
    {
        .name = "deregister",
        .usage = deregister_usage,
        .options = {LIFECYCLE_OPTIONS},
        .foreign = {CTL_OPTION_CLASS, CTL_OPTION_CAPACITY, CTL_OPTION_EVERY, CTL_OPTION_REASON,
                    CTL_OPTION_SIGNER, CTL_OPTION_ENDPOINT, CTL_OPTION_STATE},
        .run = run_deregister,
    },
    {
        .name = "replay-revocations",
        .usage = replay_usage,
        .operand = "BODY",
        .options = {CTL_REQUIRED(CTL_OPTION_TRUST), CTL_REQUIRED(CTL_OPTION_SERVER),
                    CTL_OPTION_CAPABILITY_FILE},
        .run = run_replay,
    },
    {
        .name = "fetch",
        .usage = fetch_usage,
        .options = {CTL_REQUIRED(CTL_OPTION_TRUST), CTL_REQUIRED(CTL_OPTION_SERVER),
                    CTL_REQUIRED(CTL_OPTION_NAMESPACE), CTL_OPTION_OUT, CTL_OPTION_NOW, CTL_OPTION_CLOCK_SKEW,
                    CTL_OPTION_MAX_VALIDITY, CTL_OPTION_MAX_CHAIN, CTL_OPTION_CAPABILITY_FILE,
                    CTL_OPTION_LOG_KEY, CTL_OPTION_WITNESS_KEY, CTL_OPTION_WITNESS_THRESHOLD},
        .run = run_fetch,
    },
    {
        .name = "verify",
        .usage = verify_usage,
        .operand = "PROOF",
        .options = {CTL_REQUIRED(CTL_OPTION_TRUST), CTL_REQUIRED(CTL_OPTION_CERTIFICATES),
                    CTL_REQUIRED(CTL_OPTION_LOG_KEY), CTL_OPTION_WITNESS_KEY, CTL_OPTION_WITNESS_THRESHOLD},
        .run = run_verify,
    },
    {
        .name = "proof",
        .usage = proof_usage,
        .options = {CTL_REQUIRED(CTL_OPTION_SERVER), CTL_REQUIRED(CTL_OPTION_NAMESPACE),
                    CTL_REQUIRED(CTL_OPTION_EPOCH), CTL_REQUIRED(CTL_OPTION_OUT)},
        .run = run_proof,
    },
};

/* The commands that come to the table's parser through a function of their own: a subcommand
 * first (certificate show, capability new), or an entry kept in its module (verify-evidence, and
 * monitor, which reads its words with ctl_command_read and runs its own loop). */
static const struct {
	const char *name;
	int (*run)(int argc, char **argv, struct ctl_report *report);
} word_commands[] = {
    {"certificate", command_certificate},
    {"monitor", command_monitor},
    {"verify-evidence", ctl_evidence_command},
    {"capability", ctl_capability_command},
};

/* Runs the command argv[0] names on its words. */
static int run_named_command(int argc, char **argv, struct ctl_report *report)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(argv[0], commands[i].name) == 0)
			return ctl_command_run(&commands[i], argc, argv, report);
	for (size_t i = 0; i < sizeof(word_commands) / sizeof(word_commands[0]); i++)
		if (strcmp(argv[0], word_commands[i].name) == 0)
			return word_commands[i].run(argc, argv, report);
	ctl_report_fail(report, CTL_EXIT_USAGE, "%.64s: unknown command (see dirauthctl --help)", argv[0]);
	return report->exit_code;
}

int main(int argc, char **argv)
{
	struct ctl_report report;
	const char *command;
	int exit_code;

	ctl_report_init(&report);
	if (argc < 2) {
		fprintf(stderr, "dirauthctl: missing command (see dirauthctl --help)\n");
		return CTL_EXIT_USAGE;
	}
	command = argv[1];
	if (strcmp(command, "--help") == 0 || strcmp(command, "-h") == 0 || strcmp(command, "help") == 0) {
		fputs(main_usage, stdout);
		return CTL_EXIT_OK;
	}
	if (net_global_init() != 0) {
		fprintf(stderr, "dirauthctl: cannot initialise libcurl\n");
		return CTL_EXIT_SOFTWARE;
	}
	exit_code = run_named_command(argc - 1, argv + 1, &report);
	ctl_report_print(&report, stderr);
	if (fflush(stdout) != 0 && exit_code == CTL_EXIT_OK) {
		fprintf(stderr, "dirauthctl: stdout: write failed\n");
		exit_code = CTL_EXIT_IO;
	}
	net_global_cleanup();
	return exit_code;
}
