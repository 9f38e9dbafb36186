/*
 * fetch.h: dirauthctl fetch, the mirror's pull of one namespace's latest snapshot.
 *
 * A mirror must never replace what it serves with something it has not verified, and must
 * never go backwards. So a fetch is a fixed sequence of checks, each of which can only refuse:
 *
 *   1. the signed header note: it parses as a snapshot header; at least the trust bundle's
 *      threshold of distinct pinned authorities signed it, each with a signing key that the
 *      authority's pinned identity key certified for a window containing both the header's
 *      valid-after and now (the certificates come from the server's certificate bundle, GET
 *      /v1/certificates; see keyring.h; two keys of one authority count once); its namespace
 *      and origin are the ones the bundle pins; its time is plausible: valid-after no later
 *      than now plus the allowed clock skew ("not yet valid"), valid-until in the future
 *      ("stale"), and valid-until - valid-after no longer than the allowed validity; its record
 *      count and body size are within the bundle's bounds;
 *   2. history: if the mirror holds a header from an earlier fetch (DIR/NS/latest.header), the
 *      new epoch is not older ("rollback"), and for the same epoch the header text is the same;
 *      two different headers for one epoch, each signed by the threshold, are "equivocation",
 *      and both notes are kept as evidence in DIR/NS/evidence-<epoch>.txt; a newer epoch must
 *      chain to the held header: following `previous` back from the new header through the
 *      headers the server holds for the epochs in between (each verified like the new one, at
 *      its own valid-after) reaches the held header's digest, within a bounded number of epochs;
 *   3. the body: compressed no larger than the bundle allows, decompressed with the header's
 *      body-size as the hard output bound (so a bomb stops while it inflates), then checked
 *      against the header by snapshot_body_verify (digest, size, Merkle root, ordering and
 *      every record's provider signature);
 *   4. only then the files: DIR/NS/<epoch>.header, DIR/NS/<epoch>.body, DIR/NS/certificates (the
 *      certificate bundle as served, so the mirror can be verified again offline), and last,
 *      atomically, DIR/NS/latest.header, which is what the next fetch's history check believes.
 *
 * Why both times in step 1, and why the chain in step 2: the header's valid-after is a value the
 * signers chose. Judged only there, whoever holds signing keys whose certificates have expired
 * could sign a header dated inside the old windows, with a far valid-until and a huge epoch, and a
 * mirror that accepted it would then refuse every genuine snapshot as a rollback. A key must be
 * valid now, the header cannot claim to start in the future or to last long, and a new epoch must
 * descend from the one held, so an accepted header can only be a successor of what the mirror
 * already believed. A mirror that was away longer than the chain bound is re-seeded deliberately
 * (its operator deletes latest.header), never silently.
 *
 * The checks are a function of bytes, so ctl_fetch_verify_and_store() runs steps 1 to 4 on a
 * header, certificate bundle, intermediate headers and body already in memory: the network half
 * (ctl_fetch_run) only downloads, with every download bounded in the transfer itself, and hands
 * the bytes over.
 *
 * Every refusal is recorded in a struct ctl_report: exit 65 for anything the data got wrong,
 * 69/76 for the server, 73/74 for the local files.
 */
#ifndef DIRAUTH_CTL_FETCH_H
#define DIRAUTH_CTL_FETCH_H

#include "schema/buffer.h"
#include "schema/certificate.h"
#include "ctl/report.h"
#include "schema/snapshot.h"
#include "schema/trust_bundle.h"

#include <stddef.h>
#include <stdint.h>

#define CTL_FETCH_DEFAULT_DIRECTORY "./mirror"

/* The longest signed header note read: the header text, the blank line, and the most signature
 * lines a note may carry, each "— " + name + " " + base64(key id || signature) + "\n". */
#define CTL_FETCH_SIGNATURE_LINE_MAX (4 + NOTE_NAME_MAX + 1 + ((4 + NOTE_SIGNATURE_MAX + 2) / 3) * 4 + 1)
#define CTL_FETCH_HEADER_NOTE_MAX                                                                            \
	(SNAPSHOT_HEADER_MAX_BYTES + 1 + NOTE_MAX_SIGNATURES * CTL_FETCH_SIGNATURE_LINE_MAX)

#define CTL_FETCH_NAMES_MAX (TRUST_BUNDLE_MAX_AUTHORITIES * (NOTE_NAME_MAX + 2))

#define CTL_FETCH_DEFAULT_CLOCK_SKEW   300ULL     /* seconds valid-after may lie ahead of now */
#define CTL_FETCH_DEFAULT_MAX_VALIDITY 604800ULL  /* longest valid-until - valid-after: 7 days */
#define CTL_FETCH_DEFAULT_MAX_CHAIN    1024ULL    /* most epochs between the held and new header */
#define CTL_FETCH_MAX_CHAIN_LIMIT      1000000ULL /* the largest --max-chain accepted */

/* The time and history limits of a fetch; ctl_fetch_policy_default fills the defaults. */
struct ctl_fetch_policy {
	uint64_t clock_skew;   /* a header whose valid-after is later than now + clock_skew is refused */
	uint64_t max_validity; /* a header valid for longer (valid-until - valid-after) is refused */
	uint64_t max_chain;    /* a new epoch more than this past the held one is refused (re-seed) */
};

/* Fills policy with CTL_FETCH_DEFAULT_CLOCK_SKEW, _MAX_VALIDITY and _MAX_CHAIN. */
void ctl_fetch_policy_default(struct ctl_fetch_policy *policy);

/* What a successful fetch verified, for the summary line. */
struct ctl_fetch_result {
	char namespace_name[NAMESPACE_NAME_MAX + 1];
	uint64_t epoch;
	uint64_t record_count;
	size_t signer_count;                    /* distinct pinned authorities whose certified keys signed */
	size_t authority_count;                 /* authorities in the bundle */
	char signer_names[CTL_FETCH_NAMES_MAX]; /* their names, ", "-separated, bundle order */
};

/* A signed header note the server holds for one epoch (GET /v1/NS/snapshots/<epoch>), as served. */
struct ctl_fetch_link {
	uint64_t epoch; /* the epoch it was requested for */
	const uint8_t *note;
	size_t note_len;
};

/* A snapshot already downloaded: the input of the verification half. */
struct ctl_fetch_input {
	const struct trust_bundle *bundle;
	const char *namespace_name;            /* must be a namespace of the bundle */
	const char *directory;                 /* the mirror root; files go to directory/namespace_name/ */
	uint64_t now;                          /* unix seconds, from the caller's clock */
	const struct ctl_fetch_policy *policy; /* NULL: the defaults */
	/* The headers the server holds for the epochs between the held and the new one, newest
	 * first (epochs it holds none for are simply absent); see ctl_fetch_verify_chain. */
	const struct ctl_fetch_link *links;
	size_t link_count;
	const uint8_t *header_note; /* the signed header note as served */
	size_t header_note_len;
	const uint8_t *certificates; /* the certificate bundle as served (GET /v1/certificates) */
	size_t certificates_len;
	const char *body_encoding; /* the body's Content-Encoding: "", "identity", "gzip", "zstd" */
	const uint8_t *body;       /* the body as served (compressed per body_encoding) */
	size_t body_len;
};

/* Step 1. Verifies a signed header note for namespace_name against the bundle's pinned
 * identities and the certificates of the certificate bundle (bytes as served), at time now, with
 * the limits of policy (NULL: the defaults). On success fills *header and the result's epoch,
 * count and signers. Returns 0, or a negative error with the refusal in report (exit 65; 78 when
 * the namespace is not in the bundle): DIRAUTH_ERR_UNKNOWN_KEY when no signature is by a key
 * certified by a pinned identity for both the header's valid-after and now,
 * DIRAUTH_ERR_THRESHOLD when too few authorities, DIRAUTH_ERR_SIGNATURE, DIRAUTH_ERR_SYNTAX /
 * DIRAUTH_ERR_BOUNDS for a malformed note, header or certificate bundle, DIRAUTH_ERR_MISMATCH
 * (namespace, origin), DIRAUTH_ERR_STALE ("not yet valid": valid-after later than now +
 * clock_skew; "stale": valid-until not after now), DIRAUTH_ERR_BOUNDS (valid for longer than
 * max_validity; records or body-size past the bundle's bounds). */
int ctl_fetch_verify_header(const struct trust_bundle *bundle, const char *namespace_name,
                            const uint8_t *note, size_t note_len, const uint8_t *certificates,
                            size_t certificates_len, uint64_t now, const struct ctl_fetch_policy *policy,
                            struct snapshot_header *header, struct ctl_fetch_result *result,
                            struct ctl_report *report);

/* Reads directory/namespace_name/latest.header into held (an initialised buffer, emptied first;
 * left empty when the mirror holds none). Returns 0; DIRAUTH_ERR_BOUNDS (larger than a header
 * note: 65), DIRAUTH_ERR_IO (74) or DIRAUTH_ERR_BOUNDS for a path too long (73), with the failure
 * in report. */
int ctl_fetch_read_held(const char *directory, const char *namespace_name, struct buffer *held,
                        struct ctl_report *report);

/* Step 2a. Compares a verified header with the held header note (held_len 0: none held, nothing
 * to compare). Returns 0; DIRAUTH_ERR_ROLLBACK for an older epoch; DIRAUTH_ERR_MISMATCH for
 * equivocation, after writing the evidence file under directory/namespace_name;
 * DIRAUTH_ERR_SYNTAX when the held header cannot be read back (a check that cannot run denies).
 * Refusals are in report. When a newer epoch is offered, step 2b (ctl_fetch_verify_chain) must
 * follow. */
int ctl_fetch_check_history(const char *directory, const char *namespace_name, const uint8_t *held,
                            size_t held_len, const uint8_t *note, size_t note_len,
                            const struct snapshot_header *header, struct ctl_report *report);

/*
 * Step 2b, the chain from the held header to a newer one, walked newest first. The walk is a
 * state so that the network half can stop downloading as soon as the held header is reached:
 *
 *   ctl_fetch_chain_begin     the new header's previous is what the next link must hash to;
 *   ctl_fetch_chain_add       for each header the server holds, from epoch new - 1 down;
 *   ctl_fetch_chain_reached   1 once the last previous is the held header's digest;
 *   ctl_fetch_chain_finish    refuses unless reached;
 *   ctl_fetch_chain_free      always.
 *
 * Each link must be a well formed header note for the epoch it was asked for, of the new
 * header's namespace and origin, signed by the bundle's threshold of certified keys at its own
 * valid-after, with a valid-after between the held header's and the next header's, and its
 * digest must be the previous of the header after it. Epochs the server holds no snapshot for
 * are skipped by not adding them.
 */
struct ctl_fetch_chain {
	const struct trust_bundle *bundle;
	char namespace_name[NAMESPACE_NAME_MAX + 1];
	char origin[SNAPSHOT_ORIGIN_MAX + 1];
	struct certificate_keyring *ring; /* owned */
	uint64_t held_epoch;
	uint64_t held_valid_after;
	uint8_t held_digest[32];
	uint64_t next_epoch;       /* the epoch of the oldest header of the chain so far */
	uint64_t next_valid_after; /* and its valid-after */
	uint8_t expected[32];      /* its previous: the digest the next link (or the held header) must have */
	int reached;
};

/* Starts the walk from the verified header (its epoch newer than the held header's) back to the
 * held header note, with the certificates as served, allowing at most max_chain epochs between
 * them. Returns 0; DIRAUTH_ERR_BOUNDS when header's epoch is more than max_chain past the held
 * one (the operator must re-seed the mirror); DIRAUTH_ERR_SYNTAX when the held header cannot be
 * read; DIRAUTH_ERR_INTERNAL when the header is not newer; the errors of ctl_keyring_build.
 * Refusals are in report. Call ctl_fetch_chain_free in every case. */
int ctl_fetch_chain_begin(struct ctl_fetch_chain *chain, const struct trust_bundle *bundle,
                          const uint8_t *certificates, size_t certificates_len, const uint8_t *held,
                          size_t held_len, const struct snapshot_header *header, uint64_t max_chain,
                          struct ctl_report *report);

/* Adds the header note the server holds for epoch (older than every link so far, newer than the
 * held epoch). Returns 0; DIRAUTH_ERR_MISMATCH when it does not chain (digest, epoch, namespace,
 * origin, time order: "history does not chain to the held snapshot (epoch H)"); the errors of
 * note_parse, snapshot_header_parse and ctl_keyring_verify; DIRAUTH_ERR_INTERNAL when the walk
 * had already reached the held header or epoch is out of order. Refusals are in report. */
int ctl_fetch_chain_add(struct ctl_fetch_chain *chain, uint64_t epoch, const uint8_t *note, size_t note_len,
                        struct ctl_report *report);

/* 1 once the chain reaches the held header, else 0. */
int ctl_fetch_chain_reached(const struct ctl_fetch_chain *chain);

/* Returns 0 when the chain reached the held header, else DIRAUTH_ERR_MISMATCH with "history does
 * not chain to the held snapshot (epoch H)" in report. */
int ctl_fetch_chain_finish(const struct ctl_fetch_chain *chain, struct ctl_report *report);

/* Frees the walk's keyring. Accepts a chain that begin failed on (or zeroed). */
void ctl_fetch_chain_free(struct ctl_fetch_chain *chain);

/* Step 2b on headers already downloaded: the whole walk over links (newest first, as the server
 * holds them for the epochs between; those after the held header was reached are not consulted,
 * as the network half would not have downloaded them). Returns 0 or the first refusal, as
 * begin, add and finish. */
int ctl_fetch_verify_chain(const struct trust_bundle *bundle, const uint8_t *certificates,
                           size_t certificates_len, const uint8_t *held, size_t held_len,
                           const struct snapshot_header *header, const struct ctl_fetch_link *links,
                           size_t link_count, uint64_t max_chain, struct ctl_report *report);

/* Step 3. Decodes the served body (bounded by the bundle and the header's body-size) into
 * *body (an initialised buffer the caller frees) and verifies it against the header. Returns 0
 * or a negative error with the refusal in report. */
int ctl_fetch_verify_body(const struct trust_bundle *bundle, const struct snapshot_header *header,
                          const char *encoding, const uint8_t *data, size_t len, struct buffer *body,
                          struct ctl_report *report);

/* Step 4. Writes <epoch>.header, <epoch>.body, certificates and then latest.header under
 * directory/namespace_name/, each atomically and durably. Returns 0, or a negative error with
 * the failure in report (73 when a directory or file cannot be created, 74 otherwise). */
int ctl_fetch_store(const char *directory, const char *namespace_name, uint64_t epoch, const uint8_t *note,
                    size_t note_len, const uint8_t *body, size_t body_len, const uint8_t *certificates,
                    size_t certificates_len, struct ctl_report *report);

/* Steps 1 to 4 on a downloaded snapshot (step 2b over input->links when the epoch is newer than
 * the held one). Returns 0 with *result filled, or the first refusal's error code with the
 * refusal in report; nothing is written unless every check passed (except the evidence file of an
 * equivocation). */
int ctl_fetch_verify_and_store(const struct ctl_fetch_input *input, struct ctl_fetch_result *result,
                               struct ctl_report *report);

struct ctl_fetch_options {
	const char *server_url; /* http(s)://host[:port][/prefix] */
	const struct trust_bundle *bundle;
	const char *namespace_name;
	const char *directory; /* NULL: CTL_FETCH_DEFAULT_DIRECTORY */
	uint64_t now;
	const struct ctl_fetch_policy *policy; /* NULL: the defaults */
};

/* The whole fetch: GET <server>/v1/<ns>/snapshots/latest (bounded by CTL_FETCH_HEADER_NOTE_MAX),
 * GET <server>/v1/certificates (bounded by CERTIFICATE_BUNDLE_MAX_BYTES), steps 1 and 2a; for a
 * newer epoch than the held one, GET <server>/v1/<ns>/snapshots/<e> (bounded likewise) for e from
 * the new epoch - 1 down, a 404 skipping e, until the chain reaches the held header (step 2b);
 * GET <server>/v1/<ns>/snapshots/<epoch>/body with "Accept-Encoding: zstd, gzip" (bounded by the
 * bundle's max-body-compressed), steps 3 and 4. Returns 0 with *result filled, or a negative error
 * with the failure in report (69 server unreachable or 5xx, 76 any other non-200 answer, plus the
 * verification refusals above). */
int ctl_fetch_run(const struct ctl_fetch_options *options, struct ctl_fetch_result *result,
                  struct ctl_report *report);

#endif
