/*
 * dirauthctl_main.c: the dirauthctl program: argument parsing and output, nothing else.
 *
 * Each command's work lives in its own module (keygen.h, certify.h, register.h, fetch.h) and reports its
 * outcome in a struct ctl_report; this file turns command lines into calls, prints what
 * succeeded on stdout and the one failure line on stderr, and exits with the report's
 * sysexits status. The clock is read here, once, and passed down (or taken from --now).
 */
#include "ctl/capability.h"
#include "ctl/certify.h"
#include "ctl/evidence.h"
#include "ctl/monitor.h"
#include "schema/crypto.h"
#include "schema/error.h"
#include "ctl/fetch.h"
#include "ctl/files.h"
#include "ctl/keygen.h"
#include "ctl/lifecycle.h"
#include "ctl/proof.h"
#include "schema/lines.h"
#include "ctl/register.h"
#include "ctl/report.h"
#include "ctl/trust_file.h"
#include "net/client.h"
#include "verify/snapshot.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

enum option_id {
	OPTION_HELP = 'h',
	OPTION_NAME = 256,
	OPTION_OUT,
	OPTION_KEY,
	OPTION_SERVICE,
	OPTION_SERVER,
	OPTION_DRY_RUN,
	OPTION_TRUST,
	OPTION_VERBOSE,
	OPTION_NOW,
	OPTION_NAMESPACE,
	OPTION_IDENTITY,
	OPTION_SIGNING_VERIFIER,
	OPTION_SIGNING_KEY,
	OPTION_VALID_AFTER,
	OPTION_VALID_UNTIL,
	OPTION_DAYS,
	OPTION_KEY_OUT,
	OPTION_CERT_OUT,
	OPTION_PREVIOUS,
	OPTION_ALLOW_GAP,
	OPTION_CLOCK_SKEW,
	OPTION_MAX_VALIDITY,
	OPTION_MAX_CHAIN,
	OPTION_CAPABILITY_FILE,
	OPTION_LOG_KEY,
	OPTION_WITNESS_KEY,
	OPTION_WITNESS_THRESHOLD,
	OPTION_CERTIFICATES,
	OPTION_EPOCH,
	OPTION_SERVICE_ID,
	OPTION_ENDPOINT,
	OPTION_SIGNER,
	OPTION_CLASS,
	OPTION_CAPACITY,
	OPTION_REASON,
	OPTION_SEQUENCE,
	OPTION_STATE,
	OPTION_EVERY,
	OPTION_RECEIPTS,
};

/* The most --server options one command line may give (each command has its own bound, at most
 * this: CTL_REGISTER_SERVERS_MAX, CTL_FETCH_SERVERS_MAX). */
#define SERVERS_MAX 32

/* Parsed command line of any command; each command checks which of these it needs. */
struct arguments {
	const char *name;
	const char *out;
	const char *key;
	const char *service;
	const char *server;               /* the first --server */
	const char *servers[SERVERS_MAX]; /* every --server, in order */
	size_t server_count;
	const char *trust;
	const char *namespace_name;
	const char *now_text;
	const char *identity;
	const char *signing_verifier;
	const char *signing_key;
	const char *valid_after_text;
	const char *valid_until_text;
	const char *days_text;
	const char *key_out;
	const char *cert_out;
	const char *previous;
	const char *clock_skew_text;
	const char *max_validity_text;
	const char *max_chain_text;
	const char *capability_file;
	const char *log_keys[CTL_LOG_KEYS_MAX + 1]; /* the log's pins (ctl/proof.h); one past the bound */
	size_t log_key_count;
	const char *witness_keys[CTL_LOG_WITNESSES_MAX + 1]; /* one past the bound: refused */
	size_t witness_count;
	const char *witness_threshold_text;
	const char *certificates;
	const char *epoch_text;
	const char *service_id;
	const char *endpoint;
	const char *signer;
	const char *class_text;
	const char *capacity;
	const char *reason;
	const char *sequence_text;
	const char *state;
	const char *every_text;
	const char *receipts;
	const char *positional; /* the one operand of a command that takes one (certificate show) */
	int allow_gap;
	int dry_run;
	int verbose;
	int help;
};

static int parse_arguments(const char *command, int argc, char **argv, const struct option *options,
                           struct arguments *arguments, struct ctl_report *report)
{
	int option;

	memset(arguments, 0, sizeof(*arguments));
	opterr = 0;
	optind = 1;
	while ((option = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
		switch (option) {
		case OPTION_HELP:
			arguments->help = 1;
			break;
		case OPTION_NAME:
			arguments->name = optarg;
			break;
		case OPTION_OUT:
			arguments->out = optarg;
			break;
		case OPTION_KEY:
			arguments->key = optarg;
			break;
		case OPTION_SERVICE:
			arguments->service = optarg;
			break;
		case OPTION_SERVER:
			if (arguments->server_count == SERVERS_MAX) {
				ctl_report_fail(report, CTL_EXIT_USAGE, "%s: --server: at most %d servers",
				                command, SERVERS_MAX);
				return -1;
			}
			if (arguments->server == NULL)
				arguments->server = optarg;
			arguments->servers[arguments->server_count++] = optarg;
			break;
		case OPTION_DRY_RUN:
			arguments->dry_run = 1;
			break;
		case OPTION_TRUST:
			arguments->trust = optarg;
			break;
		case OPTION_VERBOSE:
			arguments->verbose = 1;
			break;
		case OPTION_NOW:
			arguments->now_text = optarg;
			break;
		case OPTION_NAMESPACE:
			arguments->namespace_name = optarg;
			break;
		case OPTION_IDENTITY:
			arguments->identity = optarg;
			break;
		case OPTION_SIGNING_VERIFIER:
			arguments->signing_verifier = optarg;
			break;
		case OPTION_SIGNING_KEY:
			arguments->signing_key = optarg;
			break;
		case OPTION_VALID_AFTER:
			arguments->valid_after_text = optarg;
			break;
		case OPTION_VALID_UNTIL:
			arguments->valid_until_text = optarg;
			break;
		case OPTION_DAYS:
			arguments->days_text = optarg;
			break;
		case OPTION_KEY_OUT:
			arguments->key_out = optarg;
			break;
		case OPTION_CERT_OUT:
			arguments->cert_out = optarg;
			break;
		case OPTION_PREVIOUS:
			arguments->previous = optarg;
			break;
		case OPTION_ALLOW_GAP:
			arguments->allow_gap = 1;
			break;
		case OPTION_CLOCK_SKEW:
			arguments->clock_skew_text = optarg;
			break;
		case OPTION_MAX_VALIDITY:
			arguments->max_validity_text = optarg;
			break;
		case OPTION_MAX_CHAIN:
			arguments->max_chain_text = optarg;
			break;
		case OPTION_CAPABILITY_FILE:
			arguments->capability_file = optarg;
			break;
		case OPTION_LOG_KEY:
			if (arguments->log_key_count == CTL_LOG_KEYS_MAX + 1) {
				ctl_report_fail(report, CTL_EXIT_USAGE, "%s: --log-key: at most %d log keys",
				                command, CTL_LOG_KEYS_MAX);
				return -1;
			}
			arguments->log_keys[arguments->log_key_count++] = optarg;
			break;
		case OPTION_WITNESS_KEY:
			if (arguments->witness_count == CTL_LOG_WITNESSES_MAX + 1) {
				ctl_report_fail(report, CTL_EXIT_USAGE,
				                "%s: --witness-key: at most %d witnesses", command,
				                CTL_LOG_WITNESSES_MAX);
				return -1;
			}
			arguments->witness_keys[arguments->witness_count++] = optarg;
			break;
		case OPTION_WITNESS_THRESHOLD:
			arguments->witness_threshold_text = optarg;
			break;
		case OPTION_CERTIFICATES:
			arguments->certificates = optarg;
			break;
		case OPTION_EPOCH:
			arguments->epoch_text = optarg;
			break;
		case OPTION_SERVICE_ID:
			arguments->service_id = optarg;
			break;
		case OPTION_ENDPOINT:
			arguments->endpoint = optarg;
			break;
		case OPTION_SIGNER:
			arguments->signer = optarg;
			break;
		case OPTION_CLASS:
			arguments->class_text = optarg;
			break;
		case OPTION_CAPACITY:
			arguments->capacity = optarg;
			break;
		case OPTION_REASON:
			arguments->reason = optarg;
			break;
		case OPTION_SEQUENCE:
			arguments->sequence_text = optarg;
			break;
		case OPTION_STATE:
			arguments->state = optarg;
			break;
		case OPTION_EVERY:
			arguments->every_text = optarg;
			break;
		case OPTION_RECEIPTS:
			arguments->receipts = optarg;
			break;
		case ':':
			ctl_report_fail(report, CTL_EXIT_USAGE, "%s: option '%s' needs a value", command,
			                argv[optind - 1]);
			return -1;
		default:
			ctl_report_fail(report, CTL_EXIT_USAGE, "%s: unknown option '%s'", command,
			                argv[optind - 1]);
			return -1;
		}
	}
	if (optind < argc) {
		ctl_report_fail(report, CTL_EXIT_USAGE, "%s: unexpected argument '%s'", command,
		                argv[optind]);
		return -1;
	}
	return 0;
}

/* Whether the long option word ("--name") takes a value. */
static int takes_value(const struct option *options, const char *word)
{
	if (strncmp(word, "--", 2) != 0)
		return 0;
	for (const struct option *o = options; o->name != NULL; o++)
		if (strcmp(o->name, word + 2) == 0)
			return o->has_arg == required_argument;
	return 0;
}

/* parse_arguments for a command that takes exactly one operand (before or among the options). */
static int parse_arguments_with_operand(const char *command, int argc, char **argv,
                                        const struct option *options, struct arguments *arguments,
                                        struct ctl_report *report)
{
	char *reordered[64];
	const char *operand = NULL;
	int count = 0;

	if (argc > (int)(sizeof(reordered) / sizeof(reordered[0]))) {
		ctl_report_fail(report, CTL_EXIT_USAGE, "%s: too many arguments", command);
		return -1;
	}
	/* Take the first word that is neither an option nor an option's value out of the list. */
	reordered[count++] = argv[0];
	for (int i = 1; i < argc; i++) {
		const char *word = argv[i];
		if (operand == NULL && word[0] != '-') {
			operand = word;
			continue;
		}
		reordered[count++] = argv[i];
		if (word[0] == '-' && strchr(word, '=') == NULL && i + 1 < argc && takes_value(options, word))
			reordered[count++] = argv[++i];
	}
	if (parse_arguments(command, count, reordered, options, arguments, report) != 0)
		return -1;
	arguments->positional = operand;
	return 0;
}

static int require(const char *command, const char *value, const char *option, struct ctl_report *report)
{
	if (value != NULL && value[0] != '\0')
		return 0;
	ctl_report_fail(report, CTL_EXIT_USAGE, "%s: %s is required (see dirauthctl %s --help)", command,
	                option, command);
	return -1;
}

/* The length of a server URL without its trailing slashes: "http://a/" and "http://a" are one. */
static size_t server_url_length(const char *url)
{
	size_t len = strlen(url);
	while (len > 0 && url[len - 1] == '/')
		len--;
	return len;
}

/* At most maximum --server URLs, none given twice. */
static int check_servers(const char *command, const struct arguments *arguments, size_t maximum,
                         struct ctl_report *report)
{
	if (arguments->server_count > maximum) {
		ctl_report_fail(report, CTL_EXIT_USAGE, "%s: --server: at most %zu servers", command,
		                maximum);
		return -1;
	}
	for (size_t i = 0; i < arguments->server_count; i++) {
		size_t len = server_url_length(arguments->servers[i]);
		for (size_t j = 0; j < i; j++) {
			if (server_url_length(arguments->servers[j]) == len &&
			    strncmp(arguments->servers[j], arguments->servers[i], len) == 0) {
				ctl_report_fail(report, CTL_EXIT_USAGE, "%s: --server %.200s given twice",
				                command, arguments->servers[i]);
				return -1;
			}
		}
	}
	return 0;
}

/* message without its leading "<prefix>: ", when it has one. */
static const char *without_prefix(const char *message, const char *prefix)
{
	size_t len = strlen(prefix);
	if (strncmp(message, prefix, len) == 0 && message[len] == ':' && message[len + 1] == ' ')
		return message + len + 2;
	return message;
}

static int read_clock(const char *command, const char *now_text, uint64_t *now, struct ctl_report *report)
{
	time_t seconds;

	if (now_text != NULL) {
		struct text_span span = {now_text, strlen(now_text)};
		if (text_parse_u64(span, now) != 0) {
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

/* Unix seconds, or with allow_now "now" (the clock), into *out; option names the flag. */
static int parse_time(const char *command, const char *option, const char *text, int allow_now, uint64_t now,
                      uint64_t *out, struct ctl_report *report)
{
	struct text_span span;

	if (allow_now && strcmp(text, "now") == 0) {
		*out = now;
		return 0;
	}
	span.data = text;
	span.len = strlen(text);
	if (text_parse_u64(span, out) != 0) {
		ctl_report_fail(report, CTL_EXIT_USAGE, "%s: %s: expected unix seconds%s", command, option,
		                allow_now ? " or 'now'" : "");
		return -1;
	}
	return 0;
}

/* --valid-after (default now) and the window end from --days or --valid-until. */
static int read_window(const char *command, const struct arguments *arguments, uint64_t *valid_after,
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
	if (arguments->days_text != NULL) {
		struct text_span span = {arguments->days_text, strlen(arguments->days_text)};
		if (text_parse_u64(span, days) != 0 || *days == 0) {
			ctl_report_fail(report, CTL_EXIT_USAGE,
			                "%s: --days: expected a whole number of days, at least 1", command);
			return -1;
		}
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
	char after[CTL_TIME_TEXT_MAX];
	char until[CTL_TIME_TEXT_MAX];
	uint64_t length = certificate->valid_until - certificate->valid_after;

	note_verifier_format(&certificate->identity, identity);
	note_verifier_format(&certificate->signing_key, signing);
	ctl_report_format_time(certificate->valid_after, after);
	ctl_report_format_time(certificate->valid_until, until);
	printf("authority    %s\n", certificate->authority);
	printf("identity     %s\n", identity);
	printf("signing-key  %s\n", signing);
	printf("valid-after  %s\n", after);
	printf("valid-until  %s\n", until);
	printf("window       %" PRIu64 " seconds (%" PRIu64 " days %" PRIu64 " hours)\n", length,
	       length / 86400, length % 86400 / 3600);
}

static int command_identity_keygen(int argc, char **argv, struct ctl_report *report)
{
	static const struct option options[] = {
	    {"name", required_argument, NULL, OPTION_NAME},
	    {"out", required_argument, NULL, OPTION_OUT},
	    {"help", no_argument, NULL, OPTION_HELP},
	    {NULL, 0, NULL, 0},
	};
	char verifier[NOTE_VERIFIER_KEY_MAX + 1];
	struct arguments arguments;

	if (parse_arguments("identity-keygen", argc, argv, options, &arguments, report) != 0)
		return report->exit_code;
	if (arguments.help) {
		fputs(identity_keygen_usage, stdout);
		return CTL_EXIT_OK;
	}
	if (require("identity-keygen", arguments.name, "--name", report) != 0 ||
	    require("identity-keygen", arguments.out, "--out", report) != 0)
		return report->exit_code;
	if (ctl_identity_keygen_run(arguments.name, arguments.out, verifier, report) != 0)
		return report->exit_code;
	/* Comment lines, then the line itself: the output can be pasted into a trust bundle as is. */
	printf("# OFFLINE IDENTITY KEY of authority %s, written to %s (mode 0600).\n", arguments.name,
	       arguments.out);
	printf("# Keep it on this offline machine and back it up; never copy it to a server. It signs only\n"
	       "# key certificates (dirauthctl certify, rotate). Pin it in trust bundles with this line:\n");
	printf("authority %s\n", verifier);
	return CTL_EXIT_OK;
}

static int command_certify(int argc, char **argv, struct ctl_report *report)
{
	static const struct option options[] = {
	    {"identity", required_argument, NULL, OPTION_IDENTITY},
	    {"signing-verifier", required_argument, NULL, OPTION_SIGNING_VERIFIER},
	    {"signing-key", required_argument, NULL, OPTION_SIGNING_KEY},
	    {"valid-after", required_argument, NULL, OPTION_VALID_AFTER},
	    {"valid-until", required_argument, NULL, OPTION_VALID_UNTIL},
	    {"days", required_argument, NULL, OPTION_DAYS},
	    {"out", required_argument, NULL, OPTION_OUT},
	    {"now", required_argument, NULL, OPTION_NOW},
	    {"help", no_argument, NULL, OPTION_HELP},
	    {NULL, 0, NULL, 0},
	};
	struct ctl_certify_options certify_options;
	struct certificate certificate;
	struct arguments arguments;
	struct buffer note;
	uint64_t days;
	int exit_code;

	if (parse_arguments("certify", argc, argv, options, &arguments, report) != 0)
		return report->exit_code;
	if (arguments.help) {
		fputs(certify_usage, stdout);
		return CTL_EXIT_OK;
	}
	if (require("certify", arguments.identity, "--identity", report) != 0 ||
	    require("certify", arguments.out, "--out", report) != 0)
		return report->exit_code;
	if ((arguments.signing_verifier == NULL) == (arguments.signing_key == NULL)) {
		ctl_report_fail(
		    report, CTL_EXIT_USAGE,
		    "certify: give exactly one of --signing-verifier VKEY and --signing-key FILE");
		return report->exit_code;
	}
	memset(&certify_options, 0, sizeof(certify_options));
	if (read_window("certify", &arguments, &certify_options.valid_after, &certify_options.valid_until,
	                &days, report) != 0)
		return report->exit_code;
	certify_options.identity_path = arguments.identity;
	certify_options.signing_verifier = arguments.signing_verifier;
	certify_options.signing_key_path = arguments.signing_key;
	certify_options.out_path = arguments.out;
	buffer_init(&note);
	if (ctl_certify_run(&certify_options, &certificate, &note, report) != 0) {
		exit_code = report->exit_code;
		goto done;
	}
	exit_code = CTL_EXIT_OK;
	printf("certificate written to %s\n", arguments.out);
	print_certificate(&certificate);
done:
	buffer_free(&note);
	return exit_code;
}

static int command_rotate(int argc, char **argv, struct ctl_report *report)
{
	static const struct option options[] = {
	    {"identity", required_argument, NULL, OPTION_IDENTITY},
	    {"name", required_argument, NULL, OPTION_NAME},
	    {"key-out", required_argument, NULL, OPTION_KEY_OUT},
	    {"cert-out", required_argument, NULL, OPTION_CERT_OUT},
	    {"previous", required_argument, NULL, OPTION_PREVIOUS},
	    {"valid-after", required_argument, NULL, OPTION_VALID_AFTER},
	    {"days", required_argument, NULL, OPTION_DAYS},
	    {"allow-gap", no_argument, NULL, OPTION_ALLOW_GAP},
	    {"now", required_argument, NULL, OPTION_NOW},
	    {"help", no_argument, NULL, OPTION_HELP},
	    {NULL, 0, NULL, 0},
	};
	struct ctl_rotate_options rotate_options;
	struct ctl_rotate_result result;
	struct arguments arguments;
	char previous_after[CTL_TIME_TEXT_MAX];
	char previous_until[CTL_TIME_TEXT_MAX];
	char new_after[CTL_TIME_TEXT_MAX];
	char new_until[CTL_TIME_TEXT_MAX];

	if (parse_arguments("rotate", argc, argv, options, &arguments, report) != 0)
		return report->exit_code;
	if (arguments.help) {
		fputs(rotate_usage, stdout);
		return CTL_EXIT_OK;
	}
	if (require("rotate", arguments.identity, "--identity", report) != 0 ||
	    require("rotate", arguments.name, "--name", report) != 0 ||
	    require("rotate", arguments.key_out, "--key-out", report) != 0 ||
	    require("rotate", arguments.cert_out, "--cert-out", report) != 0 ||
	    require("rotate", arguments.previous, "--previous", report) != 0 ||
	    require("rotate", arguments.days_text, "--days", report) != 0)
		return report->exit_code;
	memset(&rotate_options, 0, sizeof(rotate_options));
	if (read_window("rotate", &arguments, &rotate_options.valid_after, NULL, &rotate_options.days,
	                report) != 0)
		return report->exit_code;
	rotate_options.identity_path = arguments.identity;
	rotate_options.name = arguments.name;
	rotate_options.key_out = arguments.key_out;
	rotate_options.cert_out = arguments.cert_out;
	rotate_options.previous_path = arguments.previous;
	rotate_options.allow_gap = arguments.allow_gap;
	if (ctl_rotate_run(&rotate_options, &result, report) != 0)
		return report->exit_code;
	ctl_report_format_time(result.previous.valid_after, previous_after);
	ctl_report_format_time(result.previous.valid_until, previous_until);
	ctl_report_format_time(result.certificate.valid_after, new_after);
	ctl_report_format_time(result.certificate.valid_until, new_until);
	printf("new signing key written to %s (mode 0600): %s\n", arguments.key_out, result.verifier);
	printf("new certificate written to %s\n", arguments.cert_out);
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
	       arguments.key_out, arguments.cert_out, arguments.previous, previous_until, arguments.previous);
	return CTL_EXIT_OK;
}

static int command_certificate(int argc, char **argv, struct ctl_report *report)
{
	static const struct option options[] = {
	    {"trust", required_argument, NULL, OPTION_TRUST},
	    {"now", required_argument, NULL, OPTION_NOW},
	    {"help", no_argument, NULL, OPTION_HELP},
	    {NULL, 0, NULL, 0},
	};
	struct ctl_certificate_listing *listing = NULL;
	struct trust_bundle *bundle = NULL;
	struct arguments arguments;
	uint64_t now = 0;
	int exit_code;

	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		fputs(certificate_usage, stdout);
		return CTL_EXIT_OK;
	}
	if (argc < 2 || (strcmp(argv[1], "show") != 0 && strcmp(argv[1], "inspect") != 0)) {
		ctl_report_fail(report, CTL_EXIT_USAGE,
		                "certificate: expected 'show CERT' (see dirauthctl certificate --help)");
		return report->exit_code;
	}
	if (parse_arguments_with_operand("certificate show", argc - 1, argv + 1, options, &arguments,
	                                 report) != 0)
		return report->exit_code;
	if (arguments.help) {
		fputs(certificate_usage, stdout);
		return CTL_EXIT_OK;
	}
	if (arguments.positional == NULL) {
		ctl_report_fail(report, CTL_EXIT_USAGE,
		                "certificate show: CERT is required (see dirauthctl certificate --help)");
		return report->exit_code;
	}
	if (read_clock("certificate show", arguments.now_text, &now, report) != 0)
		return report->exit_code;
	/* Both are large (fixed arrays); keep them off the stack. */
	listing = malloc(sizeof(*listing));
	if (arguments.trust != NULL)
		bundle = malloc(sizeof(*bundle));
	if (listing == NULL || (arguments.trust != NULL && bundle == NULL)) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "certificate show: out of memory");
		exit_code = report->exit_code;
		goto done;
	}
	if (bundle != NULL && ctl_trust_bundle_load(arguments.trust, bundle, report) != 0) {
		exit_code = report->exit_code;
		goto done;
	}
	exit_code = ctl_certificate_show(arguments.positional, bundle, now, listing, report) == 0
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

static int command_keygen(int argc, char **argv, struct ctl_report *report)
{
	static const struct option options[] = {
	    {"name", required_argument, NULL, OPTION_NAME},
	    {"out", required_argument, NULL, OPTION_OUT},
	    {"help", no_argument, NULL, OPTION_HELP},
	    {NULL, 0, NULL, 0},
	};
	char verifier[NOTE_VERIFIER_KEY_MAX + 1];
	struct arguments arguments;

	if (parse_arguments("keygen", argc, argv, options, &arguments, report) != 0)
		return report->exit_code;
	if (arguments.help) {
		fputs(keygen_usage, stdout);
		return CTL_EXIT_OK;
	}
	if (require("keygen", arguments.name, "--name", report) != 0 ||
	    require("keygen", arguments.out, "--out", report) != 0)
		return report->exit_code;
	if (ctl_keygen_run(arguments.name, arguments.out, verifier, report) != 0)
		return report->exit_code;
	printf("%s\n", verifier);
	return CTL_EXIT_OK;
}

/* register with several --server: one line per server, in the order given. */
static void print_answers(const struct ctl_register_result *result, int verbose)
{
	for (size_t i = 0; i < result->answer_count; i++) {
		const struct ctl_register_answer *answer = &result->answers[i];
		const char *detail;

		if (answer->outcome == CTL_REGISTER_ACCEPTED) {
			printf("%s accepted: published by epoch %" PRIu64 ", receipt signed by %s%s\n",
			       answer->server_url, answer->receipt.publish_by_epoch, answer->receipt_signer,
			       answer->counted ? "" : " (counted once: another server answered for it)");
			if (verbose)
				fwrite(answer->receipt_note.data, 1, answer->receipt_note.len, stdout);
			continue;
		}
		detail = without_prefix(answer->report.message, "register");
		if (answer->outcome == CTL_REGISTER_REFUSED)
			detail = without_prefix(detail, "refused");
		printf("%s %s: %s\n", answer->server_url, ctl_register_outcome_name(answer->outcome), detail);
	}
}

static int command_register(int argc, char **argv, struct ctl_report *report)
{
	static const struct option options[] = {
	    {"key", required_argument, NULL, OPTION_KEY},
	    {"service", required_argument, NULL, OPTION_SERVICE},
	    {"server", required_argument, NULL, OPTION_SERVER},
	    {"dry-run", no_argument, NULL, OPTION_DRY_RUN},
	    {"trust", required_argument, NULL, OPTION_TRUST},
	    {"verbose", no_argument, NULL, OPTION_VERBOSE},
	    {"now", required_argument, NULL, OPTION_NOW},
	    {"help", no_argument, NULL, OPTION_HELP},
	    {NULL, 0, NULL, 0},
	};
	struct ctl_register_options register_options;
	struct ctl_register_result result;
	struct arguments arguments;
	int exit_code;

	if (parse_arguments("register", argc, argv, options, &arguments, report) != 0)
		return report->exit_code;
	if (arguments.help) {
		fputs(register_usage, stdout);
		return CTL_EXIT_OK;
	}
	if (require("register", arguments.key, "--key", report) != 0 ||
	    require("register", arguments.service, "--service", report) != 0)
		return report->exit_code;
	if (!arguments.dry_run &&
	    require("register", arguments.server, "--server (or --dry-run)", report) != 0)
		return report->exit_code;
	if (check_servers("register", &arguments, CTL_REGISTER_SERVERS_MAX, report) != 0)
		return report->exit_code;
	memset(&register_options, 0, sizeof(register_options));
	register_options.key_path = arguments.key;
	register_options.service_path = arguments.service;
	register_options.server_url = arguments.server;
	register_options.server_urls = arguments.servers;
	register_options.server_count = arguments.server_count;
	register_options.trust_path = arguments.trust;
	register_options.dry_run = arguments.dry_run;
	if (read_clock("register", arguments.now_text, &register_options.now, report) != 0)
		return report->exit_code;

	ctl_register_result_init(&result);
	if (ctl_register_run(&register_options, &result, report) != 0) {
		exit_code = report->exit_code;
		print_answers(&result, arguments.verbose);
		goto done;
	}
	exit_code = CTL_EXIT_OK;
	if (arguments.dry_run) {
		fwrite(result.note.data, 1, result.note.len, stdout);
		goto done;
	}
	if (result.answer_count > 0) {
		print_answers(&result, arguments.verbose);
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
	if (arguments.verbose)
		fwrite(result.receipt_note.data, 1, result.receipt_note.len, stdout);
done:
	ctl_register_result_free(&result);
	return exit_code;
}

/* ---- the endpoint's life: health, revoke, deregister (ctl/lifecycle.h) ---- */

/* Set by SIGINT and SIGTERM while health --every runs: the loop ends after the current round. */
static volatile sig_atomic_t stop_requested;

static void request_stop(int signal_number)
{
	(void)signal_number;
	stop_requested = 1;
}

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

/* A decimal option of at least minimum; absent leaves *out. */
static int parse_count_option(const char *command, const char *option, const char *text, uint64_t minimum,
                              uint64_t *out, struct ctl_report *report)
{
	struct text_span span;

	if (text == NULL)
		return 0;
	span.data = text;
	span.len = strlen(text);
	if (text_parse_u64(span, out) != 0 || *out < minimum) {
		ctl_report_fail(report, CTL_EXIT_USAGE, "%s: %s: expected a decimal of at least %" PRIu64,
		                command, option, minimum);
		return -1;
	}
	return 0;
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
	const char *what = ctl_lifecycle_command_name(kind);

	for (size_t i = 0; i < result->answer_count; i++) {
		const struct ctl_lifecycle_answer *answer = &result->answers[i];
		const char *detail;

		if (answer->outcome == CTL_REGISTER_ACCEPTED) {
			printf("%s accepted: ", answer->server_url);
			print_accepted_answer(kind, answer);
			printf("%s\n",
			       answer->counted ? "" : " (counted once: another server answered for it)");
			if (verbose && kind == CTL_LIFECYCLE_DEREGISTRATION)
				print_receipt(answer);
			continue;
		}
		detail = without_prefix(answer->report.message, what);
		if (answer->outcome == CTL_REGISTER_REFUSED)
			detail = without_prefix(detail, "refused");
		printf("%s %s: %s\n", answer->server_url, ctl_register_outcome_name(answer->outcome), detail);
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
	struct sigaction action;
	uint64_t start = monotonic_seconds(), first_now = options->now, last_sequence = 0;
	int exit_code = CTL_EXIT_OK;

	memset(&action, 0, sizeof(action));
	action.sa_handler = request_stop;
	sigemptyset(&action.sa_mask);
	sigaction(SIGINT, &action, NULL);
	sigaction(SIGTERM, &action, NULL);
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

static int command_lifecycle(enum ctl_lifecycle_kind kind, int argc, char **argv, struct ctl_report *report)
{
	static const struct option options[] = {
	    {"key", required_argument, NULL, OPTION_KEY},
	    {"service", required_argument, NULL, OPTION_SERVICE},
	    {"namespace", required_argument, NULL, OPTION_NAMESPACE},
	    {"service-id", required_argument, NULL, OPTION_SERVICE_ID},
	    {"endpoint", required_argument, NULL, OPTION_ENDPOINT},
	    {"server", required_argument, NULL, OPTION_SERVER},
	    {"signer", required_argument, NULL, OPTION_SIGNER},
	    {"class", required_argument, NULL, OPTION_CLASS},
	    {"capacity", required_argument, NULL, OPTION_CAPACITY},
	    {"reason", required_argument, NULL, OPTION_REASON},
	    {"sequence", required_argument, NULL, OPTION_SEQUENCE},
	    {"state", required_argument, NULL, OPTION_STATE},
	    {"every", required_argument, NULL, OPTION_EVERY},
	    {"trust", required_argument, NULL, OPTION_TRUST},
	    {"receipts", required_argument, NULL, OPTION_RECEIPTS},
	    {"verbose", no_argument, NULL, OPTION_VERBOSE},
	    {"now", required_argument, NULL, OPTION_NOW},
	    {"help", no_argument, NULL, OPTION_HELP},
	    {NULL, 0, NULL, 0},
	};
	const char *what = ctl_lifecycle_command_name(kind);
	const char *usage = kind == CTL_LIFECYCLE_HEALTH       ? health_usage
	                    : kind == CTL_LIFECYCLE_REVOCATION ? revoke_usage
	                                                       : deregister_usage;
	struct ctl_lifecycle_options lifecycle_options;
	struct ctl_lifecycle_result result;
	struct arguments arguments;
	uint64_t every = 0;
	int exit_code;

	if (parse_arguments(what, argc, argv, options, &arguments, report) != 0)
		return report->exit_code;
	if (arguments.help) {
		fputs(usage, stdout);
		return CTL_EXIT_OK;
	}
	/* Each command takes only its own options. */
	if ((kind != CTL_LIFECYCLE_HEALTH &&
	     (arguments.class_text || arguments.capacity || arguments.every_text)) ||
	    (kind != CTL_LIFECYCLE_REVOCATION && arguments.reason) ||
	    (kind == CTL_LIFECYCLE_DEREGISTRATION &&
	     (arguments.signer || arguments.endpoint || arguments.state)) ||
	    (kind != CTL_LIFECYCLE_DEREGISTRATION && (arguments.trust || arguments.receipts))) {
		ctl_report_fail(report, CTL_EXIT_USAGE,
		                "%s: an option of another command (see dirauthctl %s --help)", what, what);
		return report->exit_code;
	}
	if (require(what, arguments.key, "--key", report) != 0 ||
	    require(what, arguments.server, "--server", report) != 0 ||
	    check_servers(what, &arguments, CTL_REGISTER_SERVERS_MAX, report) != 0)
		return report->exit_code;
	if (kind == CTL_LIFECYCLE_HEALTH && (require(what, arguments.service, "--service", report) != 0 ||
	                                     require(what, arguments.endpoint, "--endpoint", report) != 0 ||
	                                     require(what, arguments.class_text, "--class", report) != 0))
		return report->exit_code;
	if (kind == CTL_LIFECYCLE_REVOCATION && require(what, arguments.reason, "--reason", report) != 0)
		return report->exit_code;
	if (arguments.service == NULL &&
	    (require(what, arguments.namespace_name, "--service (or --namespace)", report) != 0 ||
	     require(what, arguments.service_id, "--service-id", report) != 0))
		return report->exit_code;
	if (arguments.service != NULL && (arguments.namespace_name || arguments.service_id)) {
		ctl_report_fail(report, CTL_EXIT_USAGE,
		                "%s: give --service FILE or --namespace and --service-id, not both", what);
		return report->exit_code;
	}
	memset(&lifecycle_options, 0, sizeof(lifecycle_options));
	lifecycle_options.kind = kind;
	lifecycle_options.signer =
	    kind == CTL_LIFECYCLE_HEALTH ? HEALTH_SIGNER_PROVIDER : REVOCATION_SIGNER_PROVIDER;
	if (parse_word(what, "--class", arguments.class_text, parse_health_class,
	               &lifecycle_options.health_class, "healthy, degraded, draining or unavailable",
	               report) != 0 ||
	    parse_word(what, "--capacity", arguments.capacity, parse_capacity, &lifecycle_options.capacity,
	               "low, medium or high", report) != 0 ||
	    parse_word(what, "--reason", arguments.reason, parse_reason, &lifecycle_options.reason,
	               "key-compromise, retired, superseded or operator-action", report) != 0)
		return report->exit_code;
	if (kind == CTL_LIFECYCLE_HEALTH) {
		enum health_signer signer = HEALTH_SIGNER_PROVIDER;
		if (parse_word(what, "--signer", arguments.signer, parse_health_signer, &signer,
		               "provider or endpoint", report) != 0)
			return report->exit_code;
		lifecycle_options.signer = (int)signer;
	} else if (kind == CTL_LIFECYCLE_REVOCATION) {
		enum revocation_signer signer = REVOCATION_SIGNER_PROVIDER;
		if (parse_word(what, "--signer", arguments.signer, parse_revocation_signer, &signer,
		               "provider or operator", report) != 0)
			return report->exit_code;
		lifecycle_options.signer = (int)signer;
	}
	lifecycle_options.has_capacity = arguments.capacity != NULL;
	if (parse_count_option(what, "--sequence", arguments.sequence_text, 1, &lifecycle_options.sequence,
	                       report) != 0 ||
	    parse_count_option(what, "--every", arguments.every_text, 1, &every, report) != 0)
		return report->exit_code;
	lifecycle_options.has_sequence = arguments.sequence_text != NULL;
	lifecycle_options.key_path = arguments.key;
	lifecycle_options.service_path = arguments.service;
	lifecycle_options.namespace_name = arguments.namespace_name;
	lifecycle_options.service_hex = arguments.service_id;
	lifecycle_options.endpoint_hex = arguments.endpoint;
	lifecycle_options.state_path = arguments.state;
	lifecycle_options.server_urls = arguments.servers;
	lifecycle_options.server_count = arguments.server_count;
	lifecycle_options.trust_path = arguments.trust;
	lifecycle_options.receipt_directory = arguments.receipts;
	if (read_clock(what, arguments.now_text, &lifecycle_options.now, report) != 0)
		return report->exit_code;
	if (every > 0)
		return health_every(&lifecycle_options, every, report);

	ctl_lifecycle_result_init(&result);
	if (ctl_lifecycle_run(&lifecycle_options, &result, report) != 0) {
		exit_code = report->exit_code;
		if (result.answer_count > 1)
			print_lifecycle_answers(kind, &result, arguments.verbose);
		goto done;
	}
	exit_code = CTL_EXIT_OK;
	if (result.answer_count > 1)
		print_lifecycle_answers(kind, &result, arguments.verbose);
	print_lifecycle_summary(&lifecycle_options, &result);
	if (arguments.verbose && result.answer_count == 1 && kind == CTL_LIFECYCLE_DEREGISTRATION)
		print_receipt(&result.answers[0]);
done:
	ctl_lifecycle_result_free(&result);
	return exit_code;
}

/* A fetch limit given as a canonical decimal in [minimum, maximum]; absent leaves *out. */
static int parse_limit(const char *option, const char *text, uint64_t minimum, uint64_t maximum,
                       uint64_t *out, struct ctl_report *report)
{
	struct text_span span;
	uint64_t value;

	if (text == NULL)
		return 0;
	span.data = text;
	span.len = strlen(text);
	if (text_parse_u64(span, &value) != 0 || value < minimum || value > maximum) {
		ctl_report_fail(report, CTL_EXIT_USAGE,
		                "fetch: %s: expected a decimal from %" PRIu64 " to %" PRIu64, option, minimum,
		                maximum);
		return -1;
	}
	*out = value;
	return 0;
}

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
static int fetch_from_servers(const struct ctl_fetch_options *options, const struct arguments *arguments,
                              struct ctl_report *report)
{
	struct ctl_fetch_attempt *attempts = calloc(arguments->server_count, sizeof(*attempts));
	struct ctl_fetch_result result;
	char what[NAMESPACE_NAME_MAX + 16];
	size_t attempt_count = 0;
	int rc;

	if (attempts == NULL) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "fetch: out of memory");
		return report->exit_code;
	}
	snprintf(what, sizeof(what), "fetch %s", options->namespace_name);
	rc = ctl_fetch_run_servers(options, arguments->servers, arguments->server_count, attempts,
	                           &attempt_count, &result, report);
	for (size_t i = 0; i < attempt_count; i++) {
		if (attempts[i].exit_code != CTL_EXIT_OK)
			printf("skipped %s: %s\n", attempts[i].server_url,
			       without_prefix(attempts[i].message, what));
	}
	if (rc == 0)
		print_fetched(&result, attempts[attempt_count - 1].server_url);
	free(attempts);
	return rc == 0 ? CTL_EXIT_OK : report->exit_code;
}

static int command_fetch(int argc, char **argv, struct ctl_report *report)
{
	static const struct option options[] = {
	    {"trust", required_argument, NULL, OPTION_TRUST},
	    {"server", required_argument, NULL, OPTION_SERVER},
	    {"namespace", required_argument, NULL, OPTION_NAMESPACE},
	    {"out", required_argument, NULL, OPTION_OUT},
	    {"now", required_argument, NULL, OPTION_NOW},
	    {"clock-skew", required_argument, NULL, OPTION_CLOCK_SKEW},
	    {"max-validity", required_argument, NULL, OPTION_MAX_VALIDITY},
	    {"max-chain", required_argument, NULL, OPTION_MAX_CHAIN},
	    {"capability-file", required_argument, NULL, OPTION_CAPABILITY_FILE},
	    {"log-key", required_argument, NULL, OPTION_LOG_KEY},
	    {"witness-key", required_argument, NULL, OPTION_WITNESS_KEY},
	    {"witness-threshold", required_argument, NULL, OPTION_WITNESS_THRESHOLD},
	    {"help", no_argument, NULL, OPTION_HELP},
	    {NULL, 0, NULL, 0},
	};
	char authorization[CTL_AUTHORIZATION_MAX];
	struct ctl_fetch_options fetch_options;
	struct ctl_log_pins log_pins;
	struct verify_snapshot_policy policy;
	struct ctl_fetch_result result;
	struct trust_bundle *bundle = NULL;
	struct arguments arguments;
	struct text_span namespace_span;
	int exit_code;

	if (parse_arguments("fetch", argc, argv, options, &arguments, report) != 0)
		return report->exit_code;
	if (arguments.help) {
		fputs(fetch_usage, stdout);
		return CTL_EXIT_OK;
	}
	if (require("fetch", arguments.trust, "--trust", report) != 0 ||
	    require("fetch", arguments.server, "--server", report) != 0 ||
	    require("fetch", arguments.namespace_name, "--namespace", report) != 0 ||
	    check_servers("fetch", &arguments, CTL_FETCH_SERVERS_MAX, report) != 0)
		return report->exit_code;
	namespace_span.data = arguments.namespace_name;
	namespace_span.len = strlen(arguments.namespace_name);
	if (!text_is_name(namespace_span, NAMESPACE_NAME_MAX)) {
		ctl_report_fail(report, CTL_EXIT_USAGE, "fetch: --namespace: '%.64s' is not a namespace name",
		                arguments.namespace_name);
		return report->exit_code;
	}
	verify_snapshot_policy_default(&policy);
	if (parse_limit("--clock-skew", arguments.clock_skew_text, 0, UINT64_MAX, &policy.clock_skew,
	                report) != 0 ||
	    parse_limit("--max-validity", arguments.max_validity_text, 1, UINT64_MAX, &policy.max_validity,
	                report) != 0 ||
	    parse_limit("--max-chain", arguments.max_chain_text, 1, CTL_FETCH_MAX_CHAIN_LIMIT,
	                &policy.max_chain, report) != 0)
		return report->exit_code;
	memset(&fetch_options, 0, sizeof(fetch_options));
	fetch_options.policy = &policy;
	if (read_clock("fetch", arguments.now_text, &fetch_options.now, report) != 0)
		return report->exit_code;
	/* The bundle is large (fixed arrays); keep it off the stack. */
	bundle = malloc(sizeof(*bundle));
	if (bundle == NULL) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "fetch: out of memory");
		return report->exit_code;
	}
	exit_code = CTL_EXIT_OK;
	if (ctl_trust_bundle_load(arguments.trust, bundle, report) != 0) {
		exit_code = report->exit_code;
		goto done;
	}
	fetch_options.server_url = arguments.server;
	fetch_options.bundle = bundle;
	fetch_options.namespace_name = arguments.namespace_name;
	fetch_options.directory = arguments.out != NULL ? arguments.out : CTL_FETCH_DEFAULT_DIRECTORY;
	/* The log's pins (ctl/proof.h): the log is checked when a log key is given. */
	if (ctl_log_pins_parse("fetch", arguments.log_keys, arguments.log_key_count, arguments.witness_keys,
	                       arguments.witness_count, arguments.witness_threshold_text, bundle->threshold,
	                       &log_pins, report) != 0) {
		exit_code = report->exit_code;
		goto done;
	}
	fetch_options.log = &log_pins;
	if (arguments.capability_file != NULL) {
		if (ctl_capability_read("fetch", arguments.capability_file, authorization, report) != 0) {
			exit_code = report->exit_code;
			goto done;
		}
		fetch_options.authorization = authorization;
	}
	if (arguments.server_count > 1) {
		exit_code = fetch_from_servers(&fetch_options, &arguments, report);
		goto done;
	}
	if (ctl_fetch_run(&fetch_options, &result, report) != 0) {
		exit_code = report->exit_code;
		goto done;
	}
	print_fetched(&result, NULL);
done:
	crypto_wipe(authorization, sizeof(authorization));
	free(bundle);
	return exit_code;
}

/* ---- the transparency log's proofs (ctl/proof.h) ---- */

static int command_verify(int argc, char **argv, struct ctl_report *report)
{
	static const struct option options[] = {
	    {"trust", required_argument, NULL, OPTION_TRUST},
	    {"certificates", required_argument, NULL, OPTION_CERTIFICATES},
	    {"log-key", required_argument, NULL, OPTION_LOG_KEY},
	    {"witness-key", required_argument, NULL, OPTION_WITNESS_KEY},
	    {"witness-threshold", required_argument, NULL, OPTION_WITNESS_THRESHOLD},
	    {"help", no_argument, NULL, OPTION_HELP},
	    {NULL, 0, NULL, 0},
	};
	struct ctl_proof_result *result = NULL;
	struct trust_bundle *bundle = NULL;
	struct ctl_log_pins pins;
	struct arguments arguments;
	int exit_code = CTL_EXIT_OK;

	if (parse_arguments_with_operand("verify", argc, argv, options, &arguments, report) != 0)
		return report->exit_code;
	if (arguments.help) {
		fputs(verify_usage, stdout);
		return CTL_EXIT_OK;
	}
	if (arguments.positional == NULL) {
		ctl_report_fail(report, CTL_EXIT_USAGE,
		                "verify: PROOF is required (see dirauthctl verify --help)");
		return report->exit_code;
	}
	if (require("verify", arguments.trust, "--trust", report) != 0 ||
	    require("verify", arguments.certificates, "--certificates", report) != 0 ||
	    require("verify", arguments.log_keys[0], "--log-key", report) != 0)
		return report->exit_code;
	/* Both are large (fixed arrays); keep them off the stack. */
	bundle = malloc(sizeof(*bundle));
	result = malloc(sizeof(*result));
	if (bundle == NULL || result == NULL) {
		ctl_report_fail(report, CTL_EXIT_SOFTWARE, "verify: out of memory");
		exit_code = report->exit_code;
		goto done;
	}
	if (ctl_trust_bundle_load(arguments.trust, bundle, report) != 0 ||
	    ctl_log_pins_parse("verify", arguments.log_keys, arguments.log_key_count, arguments.witness_keys,
	                       arguments.witness_count, arguments.witness_threshold_text, bundle->threshold,
	                       &pins, report) != 0 ||
	    ctl_proof_verify_files(bundle, arguments.certificates, &pins, arguments.positional, result,
	                           report) != 0) {
		exit_code = report->exit_code;
		goto done;
	}
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
	return exit_code;
}

static int command_proof(int argc, char **argv, struct ctl_report *report)
{
	static const struct option options[] = {
	    {"server", required_argument, NULL, OPTION_SERVER},
	    {"namespace", required_argument, NULL, OPTION_NAMESPACE},
	    {"epoch", required_argument, NULL, OPTION_EPOCH},
	    {"out", required_argument, NULL, OPTION_OUT},
	    {"help", no_argument, NULL, OPTION_HELP},
	    {NULL, 0, NULL, 0},
	};
	struct ctl_proof_download download;
	struct arguments arguments;
	struct text_span span;
	uint64_t size = 0, index = 0;

	if (parse_arguments("proof", argc, argv, options, &arguments, report) != 0)
		return report->exit_code;
	if (arguments.help) {
		fputs(proof_usage, stdout);
		return CTL_EXIT_OK;
	}
	if (require("proof", arguments.server, "--server", report) != 0 ||
	    require("proof", arguments.namespace_name, "--namespace", report) != 0 ||
	    require("proof", arguments.epoch_text, "--epoch", report) != 0 ||
	    require("proof", arguments.out, "--out", report) != 0)
		return report->exit_code;
	if (arguments.server_count > 1) {
		ctl_report_fail(report, CTL_EXIT_USAGE, "proof: --server: one server");
		return report->exit_code;
	}
	span.data = arguments.namespace_name;
	span.len = strlen(arguments.namespace_name);
	if (!text_is_name(span, NAMESPACE_NAME_MAX)) {
		ctl_report_fail(report, CTL_EXIT_USAGE, "proof: --namespace: '%.64s' is not a namespace name",
		                arguments.namespace_name);
		return report->exit_code;
	}
	memset(&download, 0, sizeof(download));
	span.data = arguments.epoch_text;
	span.len = strlen(arguments.epoch_text);
	if (text_parse_u64(span, &download.epoch) != 0) {
		ctl_report_fail(report, CTL_EXIT_USAGE, "proof: --epoch: expected a decimal");
		return report->exit_code;
	}
	download.server_url = arguments.server;
	download.namespace_name = arguments.namespace_name;
	download.out_path = arguments.out;
	if (ctl_proof_download_run(&download, &size, &index, report) != 0)
		return report->exit_code;
	printf("proof written to %s: %s epoch %" PRIu64 ", entry %" PRIu64
	       " of the checkpoint of size %" PRIu64 " (not verified: dirauthctl verify checks it)\n",
	       arguments.out, arguments.namespace_name, download.epoch, index, size);
	return CTL_EXIT_OK;
}

/* ---- the monitor and its evidence (ctl/monitor.h, ctl/evidence.h) ---- */

/* Set by SIGINT and SIGTERM while monitor --every runs: the loop ends after the current round. */
static volatile sig_atomic_t monitor_stop;

static void monitor_request_stop(int signal_number)
{
	(void)signal_number;
	monitor_stop = 1;
}

static int command_monitor(int argc, char **argv, struct ctl_report *report)
{
	struct sigaction action;
	memset(&action, 0, sizeof(action));
	action.sa_handler = monitor_request_stop;
	sigemptyset(&action.sa_mask);
	sigaction(SIGINT, &action, NULL);
	sigaction(SIGTERM, &action, NULL);
	return ctl_monitor_command(argc, argv, &monitor_stop, report);
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
	if (strcmp(command, "keygen") == 0) {
		exit_code = command_keygen(argc - 1, argv + 1, &report);
	} else if (strcmp(command, "identity-keygen") == 0) {
		exit_code = command_identity_keygen(argc - 1, argv + 1, &report);
	} else if (strcmp(command, "certify") == 0) {
		exit_code = command_certify(argc - 1, argv + 1, &report);
	} else if (strcmp(command, "rotate") == 0) {
		exit_code = command_rotate(argc - 1, argv + 1, &report);
	} else if (strcmp(command, "certificate") == 0) {
		exit_code = command_certificate(argc - 1, argv + 1, &report);
	} else if (strcmp(command, "register") == 0) {
		exit_code = command_register(argc - 1, argv + 1, &report);
	} else if (strcmp(command, "health") == 0) {
		exit_code = command_lifecycle(CTL_LIFECYCLE_HEALTH, argc - 1, argv + 1, &report);
	} else if (strcmp(command, "revoke") == 0) {
		exit_code = command_lifecycle(CTL_LIFECYCLE_REVOCATION, argc - 1, argv + 1, &report);
	} else if (strcmp(command, "deregister") == 0) {
		exit_code = command_lifecycle(CTL_LIFECYCLE_DEREGISTRATION, argc - 1, argv + 1, &report);
	} else if (strcmp(command, "fetch") == 0) {
		exit_code = command_fetch(argc - 1, argv + 1, &report);
	} else if (strcmp(command, "verify") == 0) {
		exit_code = command_verify(argc - 1, argv + 1, &report);
	} else if (strcmp(command, "proof") == 0) {
		exit_code = command_proof(argc - 1, argv + 1, &report);
	} else if (strcmp(command, "monitor") == 0) {
		exit_code = command_monitor(argc - 1, argv + 1, &report);
	} else if (strcmp(command, "verify-evidence") == 0) {
		exit_code = ctl_evidence_command(argc - 1, argv + 1, &report);
	} else if (strcmp(command, "capability") == 0) {
		exit_code = ctl_capability_command(argc - 1, argv + 1, &report);
	} else {
		ctl_report_fail(&report, CTL_EXIT_USAGE, "%.64s: unknown command (see dirauthctl --help)",
		                command);
		exit_code = report.exit_code;
	}
	ctl_report_print(&report, stderr);
	if (fflush(stdout) != 0 && exit_code == CTL_EXIT_OK) {
		fprintf(stderr, "dirauthctl: stdout: write failed\n");
		exit_code = CTL_EXIT_IO;
	}
	net_global_cleanup();
	return exit_code;
}
