/*
 * dirauthctl_main.c: the dirauthctl program: its commands' usage texts, the one table of its
 * commands, and main.
 *
 * Each command's work lives in its own module (keygen.h, certify.h, register.h, endpoint.h,
 * fetch.h, proof.h) and reports its outcome in a struct ctl_report. Each command here is an entry
 * of the table at the end (command.h): its options, which it requires, its usage text and its
 * body, which lives with the bodies of its area (command_bodies.h: keys and certificates, a
 * provider's statements, snapshots and the log); ctl_command_run parses the words, answers --help and refuses
 * what is missing, so that a body starts from checked arguments. A body prints what succeeded on stdout; main
 * prints the one failure line on stderr and exits with the report's sysexits status. The clock is read here,
 * once, and passed down (or taken from --now).
 */
#include "ctl/capability.h"
#include "ctl/command.h"
#include "ctl/command_bodies.h"
#include "ctl/evidence.h"
#include "ctl/health_page.h"
#include "net/client.h"

#include <stdio.h>
#include <string.h>

static const char main_usage[] =
    "usage: dirauthctl COMMAND [OPTIONS]\n"
    "\n"
    "commands:\n"
    "  keygen            create a signing or provider key file and print its verifier key\n"
    "  identity-keygen   create an authority's offline identity key and print its trust-bundle line\n"
    "  key-verifiers     print a key file's verifier keys: ed25519, and cosignature (type 0x04)\n"
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
    "  mirror            keep a verified static tree of a namespace under the API's own paths\n"
    "  lookup            verify one service of the latest snapshot from its record shard\n"
    "  verify            check an offline proof file: header, checkpoint and inclusion\n"
    "  proof             download the proof file of one epoch's header in the log\n"
    "  capability new    make the bearer secret of a private namespace\n"
    "  monitor           watch authorities and mirrors; write evidence of misbehaviour\n"
    "  verify-evidence   check an evidence file offline and name the misbehaving keys\n"
    "  health-page       write the consensus-health page of an authority set (exit 1: warnings)\n"
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

static const char key_verifiers_usage[] =
    "usage: dirauthctl key-verifiers --key FILE\n"
    "\n"
    "Prints the verifier keys of the private key in FILE, each on a line of its own after what it\n"
    "is pinned as: `ed25519` (type 0x01: a provider's key, an authority's signing or identity key,\n"
    "a log key) and `cosignature` (type 0x04: a member's cosignature_key, a --witness-key).\n"
    "\n"
    "  --key FILE    the private key file (mode 0600)\n";

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

static const char lookup_usage[] =
    "usage: dirauthctl lookup --trust BUNDLE --server URL --namespace NS [--now SECONDS]\n"
    "                         [--clock-skew SECONDS] [--max-validity SECONDS]\n"
    "                         [--capability-file FILE] SERVICE\n"
    "\n"
    "Verifies one service of the namespace's latest snapshot without its body: the co-signed\n"
    "header, checked against the trust bundle as fetch checks it, and the one record shard that\n"
    "holds the service or proves it absent (schema/record-shard.md), checked against the header's\n"
    "records root. Prints the record's endpoints with their published health (unknown: treat as\n"
    "unavailable), or its absence with the two adjacent records that prove it and any revocation\n"
    "listed for it. Exit 0 present, 1 proven absent, 65 a header or shard that does not verify,\n"
    "75 a stale header, 69/76 the server, 78 a namespace the bundle does not pin.\n"
    "\n"
    "  --trust BUNDLE          the trust bundle (schema/trust-bundle.md)\n"
    "  --server URL            an authority or a mirror\n"
    "  --namespace NS          the namespace\n"
    "  --now SECONDS           the time to judge the header at (default: the clock)\n"
    "  --clock-skew SECONDS    how far ahead valid-after may be (default 300)\n"
    "  --max-validity SECONDS  the longest validity a header may claim (default 604800)\n"
    "  --capability-file FILE  the capability of a private namespace\n"
    "  SERVICE                 the service id: 64 lower-case hex digits\n";

static const char mirror_usage[] =
    "usage: dirauthctl mirror --trust BUNDLE --namespace NS --server URL... --out DIR\n"
    "                         --log-key VKEY... [--witness-key VKEY]... [--witness-threshold K]\n"
    "                         [--keep-epochs N] [--now SECONDS] [--clock-skew SECONDS]\n"
    "                         [--max-validity SECONDS] [--max-chain EPOCHS]\n"
    "\n"
    "Keeps DIR as a static copy of NS under the paths dirauthd serves (DIR/v1/...), for any web\n"
    "server (deploy/nginx/dirauth-mirror.conf) or CDN: fetch, monitor and proof read it as they\n"
    "read an authority. Each run checks the newest snapshot as fetch does (the trust bundle's\n"
    "threshold, the chain back to the snapshot served, the log's cosigned checkpoint consistent\n"
    "with the one served, the body), then the headers of the epochs between, the body in each\n"
    "encoding and the log's tiles against the checkpoint; only then it writes, immutable files\n"
    "first and the pointers (proofs, log/checkpoint, snapshots/latest) last, each by rename. A\n"
    "refused update changes no file. Exit statuses as fetch's (75: stale, or not yet in the log).\n"
    "\n"
    "  --trust BUNDLE          the trust bundle (identity keys, threshold, namespaces, bounds)\n"
    "  --namespace NS          the namespace to mirror\n"
    "  --server URL            an authority or a mirror; repeat for several (at most 32): the\n"
    "                          first whose snapshot verifies is taken\n"
    "  --out DIR               the tree's root (files 0644, directories 0755 under the umask)\n"
    "  --log-key VKEY          a log key of the namespace (required: a mirror serves the log);\n"
    "                          repeat for each authority's\n"
    "  --witness-key VKEY      a cosigner of the checkpoints (type 0x04); repeat (at most 32)\n"
    "  --witness-threshold K   distinct witnesses that must cosign (default: the bundle's threshold)\n"
    "  --keep-epochs N         keep the N newest epochs besides every one still valid (default 1)\n"
    "  --now SECONDS           use this unix time instead of the clock\n"
    "  --clock-skew SECONDS    how far a header's valid-after may lie ahead of now (default 300)\n"
    "  --max-validity SECONDS  the longest valid-until - valid-after accepted (default 604800)\n"
    "  --max-chain EPOCHS      the most epochs walked back to the served header (default 1024)\n";

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

static const char health_page_usage[] =
    "usage: dirauthctl health-page --trust BUNDLE --namespace NS --server URL... --out FILE.html\n"
    "                              [--epochs N] [--clock-skew SECONDS] [--now SECONDS]\n"
    "                              [--log-key VKEY...] [--witness-key VKEY...] [--witness-threshold K]\n"
    "\n"
    "Asks every authority (one --server each, matched to the trust bundle's members by the\n"
    "certificates it serves, not by order) for its certificates, clock, latest snapshot, the\n"
    "last epochs' headers, signatures and votes and its log checkpoint, and writes one static\n"
    "HTML page (atomically): the warnings, then a table per epoch. The checks: an authority\n"
    "unreachable, a vote or signature missing, a vote differing from the published header, a\n"
    "clock skewed past --clock-skew, a certificate expiring within 21/14/7 days, the latest\n"
    "snapshot stale, members' log checkpoints disagreeing or cosigned by fewer than the\n"
    "threshold, an epoch that published nothing. Each warning is a line on stderr.\n"
    "With --log-key (and --witness-key), each member's checkpoint must be signed by a log key,\n"
    "and only the pinned witnesses whose cosignature verifies count; without, cosignature\n"
    "lines are counted by name.\n"
    "Exit 0: no warning; 1: page written with warnings; 65: no verified snapshot; 69: no\n"
    "server answered; 73: the page cannot be written.\n"
    "\n"
    "  --trust BUNDLE          the trust bundle (identity keys, threshold, namespaces)\n"
    "  --namespace NS          the namespace\n"
    "  --server URL            an authority; one for each (at most 32)\n"
    "  --out FILE.html         the page to write (replaced atomically)\n"
    "  --epochs N              the epochs shown, newest first (default 3, at most 16)\n"
    "  --clock-skew SECONDS    the clock skew allowed (default 300)\n"
    "  --now SECONDS           the reference time instead of this host's clock\n";

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
        .run = ctl_command_keygen,
    },
    {
        .name = "key-verifiers",
        .usage = key_verifiers_usage,
        .options = {CTL_REQUIRED(CTL_OPTION_KEY)},
        .run = ctl_command_key_verifiers,
    },
    {
        .name = "identity-keygen",
        .usage = identity_keygen_usage,
        .options = {CTL_REQUIRED(CTL_OPTION_NAME), CTL_REQUIRED(CTL_OPTION_OUT)},
        .run = ctl_command_identity_keygen,
    },
    {
        .name = "certify",
        .usage = certify_usage,
        .options = {CTL_REQUIRED(CTL_OPTION_IDENTITY), CTL_OPTION_SIGNING_VERIFIER, CTL_OPTION_SIGNING_KEY,
                    CTL_OPTION_VALID_AFTER, CTL_OPTION_VALID_UNTIL, CTL_OPTION_DAYS,
                    CTL_REQUIRED(CTL_OPTION_OUT), CTL_OPTION_NOW},
        .run = ctl_command_certify,
    },
    {
        .name = "rotate",
        .usage = rotate_usage,
        .options = {CTL_REQUIRED(CTL_OPTION_IDENTITY), CTL_REQUIRED(CTL_OPTION_NAME),
                    CTL_REQUIRED(CTL_OPTION_KEY_OUT), CTL_REQUIRED(CTL_OPTION_CERT_OUT),
                    CTL_REQUIRED(CTL_OPTION_PREVIOUS), CTL_OPTION_VALID_AFTER, CTL_REQUIRED(CTL_OPTION_DAYS),
                    CTL_OPTION_ALLOW_GAP, CTL_OPTION_NOW},
        .run = ctl_command_rotate,
    },
    {
        .name = "register",
        .usage = register_usage,
        .options = {CTL_REQUIRED(CTL_OPTION_KEY), CTL_REQUIRED(CTL_OPTION_SERVICE), CTL_OPTION_SERVER,
                    CTL_OPTION_DRY_RUN, CTL_OPTION_TRUST, CTL_OPTION_VERBOSE, CTL_OPTION_NOW},
        .run = ctl_command_register,
    },
    {
        .name = "health",
        .usage = health_usage,
        .options = {LIFECYCLE_OPTIONS},
        .foreign = {CTL_OPTION_REASON, CTL_OPTION_TRUST, CTL_OPTION_RECEIPTS},
        .run = ctl_command_health,
    },
    {
        .name = "revoke",
        .usage = revoke_usage,
        .options = {LIFECYCLE_OPTIONS},
        .foreign = {CTL_OPTION_CLASS, CTL_OPTION_CAPACITY, CTL_OPTION_EVERY, CTL_OPTION_TRUST,
                    CTL_OPTION_RECEIPTS},
        .run = ctl_command_revoke,
    },
    {
        .name = "deregister",
        .usage = deregister_usage,
        .options = {LIFECYCLE_OPTIONS},
        .foreign = {CTL_OPTION_CLASS, CTL_OPTION_CAPACITY, CTL_OPTION_EVERY, CTL_OPTION_REASON,
                    CTL_OPTION_SIGNER, CTL_OPTION_ENDPOINT, CTL_OPTION_STATE},
        .run = ctl_command_deregister,
    },
    {
        .name = "replay-revocations",
        .usage = replay_usage,
        .operand = "BODY",
        .options = {CTL_REQUIRED(CTL_OPTION_TRUST), CTL_REQUIRED(CTL_OPTION_SERVER),
                    CTL_OPTION_CAPABILITY_FILE},
        .run = ctl_command_replay,
    },
    {
        .name = "fetch",
        .usage = fetch_usage,
        .options = {CTL_REQUIRED(CTL_OPTION_TRUST), CTL_REQUIRED(CTL_OPTION_SERVER),
                    CTL_REQUIRED(CTL_OPTION_NAMESPACE), CTL_OPTION_OUT, CTL_OPTION_NOW, CTL_OPTION_CLOCK_SKEW,
                    CTL_OPTION_MAX_VALIDITY, CTL_OPTION_MAX_CHAIN, CTL_OPTION_CAPABILITY_FILE,
                    CTL_OPTION_LOG_KEY, CTL_OPTION_WITNESS_KEY, CTL_OPTION_WITNESS_THRESHOLD},
        .run = ctl_command_fetch,
    },
    {
        .name = "mirror",
        .usage = mirror_usage,
        .options = {CTL_REQUIRED(CTL_OPTION_TRUST), CTL_REQUIRED(CTL_OPTION_NAMESPACE),
                    CTL_REQUIRED(CTL_OPTION_SERVER), CTL_REQUIRED(CTL_OPTION_OUT),
                    CTL_REQUIRED(CTL_OPTION_LOG_KEY), CTL_OPTION_WITNESS_KEY, CTL_OPTION_WITNESS_THRESHOLD,
                    CTL_OPTION_KEEP_EPOCHS, CTL_OPTION_NOW, CTL_OPTION_CLOCK_SKEW, CTL_OPTION_MAX_VALIDITY,
                    CTL_OPTION_MAX_CHAIN},
        .run = ctl_command_mirror,
    },
    {
        .name = "lookup",
        .usage = lookup_usage,
        .operand = "SERVICE",
        .options = {CTL_REQUIRED(CTL_OPTION_TRUST), CTL_REQUIRED(CTL_OPTION_SERVER),
                    CTL_REQUIRED(CTL_OPTION_NAMESPACE), CTL_OPTION_NOW, CTL_OPTION_CLOCK_SKEW,
                    CTL_OPTION_MAX_VALIDITY, CTL_OPTION_CAPABILITY_FILE},
        .run = ctl_command_lookup,
    },
    {
        .name = "verify",
        .usage = verify_usage,
        .operand = "PROOF",
        .options = {CTL_REQUIRED(CTL_OPTION_TRUST), CTL_REQUIRED(CTL_OPTION_CERTIFICATES),
                    CTL_REQUIRED(CTL_OPTION_LOG_KEY), CTL_OPTION_WITNESS_KEY, CTL_OPTION_WITNESS_THRESHOLD},
        .run = ctl_command_verify,
    },
    {
        .name = "proof",
        .usage = proof_usage,
        .options = {CTL_REQUIRED(CTL_OPTION_SERVER), CTL_REQUIRED(CTL_OPTION_NAMESPACE),
                    CTL_REQUIRED(CTL_OPTION_EPOCH), CTL_REQUIRED(CTL_OPTION_OUT)},
        .run = ctl_command_proof,
    },
    {
        .name = "health-page",
        .usage = health_page_usage,
        .options = {CTL_REQUIRED(CTL_OPTION_TRUST), CTL_REQUIRED(CTL_OPTION_NAMESPACE),
                    CTL_REQUIRED(CTL_OPTION_SERVER), CTL_REQUIRED(CTL_OPTION_OUT), CTL_OPTION_EPOCHS,
                    CTL_OPTION_CLOCK_SKEW, CTL_OPTION_NOW, CTL_OPTION_LOG_KEY, CTL_OPTION_WITNESS_KEY,
                    CTL_OPTION_WITNESS_THRESHOLD},
        .run = ctl_command_health_page,
    },
};

/* The commands that come to the table's parser through a function of their own: a subcommand
 * first (certificate show, capability new), or an entry kept in its module (verify-evidence, and
 * monitor, which reads its words with ctl_command_read and runs its own loop). */
static const struct {
	const char *name;
	int (*run)(int argc, char **argv, struct ctl_report *report);
} word_commands[] = {
    {"certificate", ctl_command_certificate},
    {"monitor", ctl_command_monitor},
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
