/*
 * fetch.h: dirauthctl fetch, the mirror's pull of one namespace's latest snapshot.
 *
 * A mirror must never replace what it serves with something it has not verified, and must
 * never go backwards. So a fetch is a fixed sequence of checks, each of which can only refuse:
 *
 *   1. the signed header note: it parses as a snapshot header; at least the trust bundle's
 *      threshold of distinct pinned authorities signed it, each with a signing key that the
 *      authority's pinned identity key certified for a window containing the header's
 *      valid-after (the certificates come from the server's certificate bundle, GET
 *      /v1/certificates; see keyring.h; two keys of one authority count once); its namespace
 *      and origin are the ones the bundle pins; it is still valid (valid-until in the future,
 *      "stale" otherwise); its record count and body size are within the bundle's bounds;
 *   2. history: if the mirror holds a header from an earlier fetch (DIR/NS/latest.header), the
 *      new epoch is not older ("rollback"), and for the same epoch the header text is the same;
 *      two different headers for one epoch, each signed by the threshold, are "equivocation",
 *      and both notes are kept as evidence in DIR/NS/evidence-<epoch>.txt;
 *   3. the body: compressed no larger than the bundle allows, decompressed with the header's
 *      body-size as the hard output bound (so a bomb stops while it inflates), then checked
 *      against the header by snapshot_body_verify (digest, size, Merkle root, ordering and
 *      every record's provider signature);
 *   4. only then the files: DIR/NS/<epoch>.header, DIR/NS/<epoch>.body, DIR/NS/certificates (the
 *      certificate bundle as served, so the mirror can be verified again offline), and last,
 *      atomically, DIR/NS/latest.header, which is what the next fetch's history check believes.
 *
 * The checks are a function of bytes, so ctl_fetch_verify_and_store() runs steps 1 to 4 on a
 * header, certificate bundle and body already in memory: the network half (ctl_fetch_run) only downloads,
 * with every download bounded in the transfer itself, and hands the bytes over.
 *
 * Every refusal is recorded in a struct ctl_report: exit 65 for anything the data got wrong,
 * 69/76 for the server, 73/74 for the local files.
 */
#ifndef DIRAUTH_CTL_FETCH_H
#define DIRAUTH_CTL_FETCH_H

#include "buffer.h"
#include "report.h"
#include "snapshot.h"
#include "trust_bundle.h"

#include <stddef.h>
#include <stdint.h>

#define CTL_FETCH_DEFAULT_DIRECTORY "./mirror"

/* The longest signed header note read: the header text, the blank line, and the most signature
 * lines a note may carry, each "— " + name + " " + base64(key id || signature) + "\n". */
#define CTL_FETCH_SIGNATURE_LINE_MAX (4 + NOTE_NAME_MAX + 1 + ((4 + NOTE_SIGNATURE_MAX + 2) / 3) * 4 + 1)
#define CTL_FETCH_HEADER_NOTE_MAX                                                                            \
	(SNAPSHOT_HEADER_MAX_BYTES + 1 + NOTE_MAX_SIGNATURES * CTL_FETCH_SIGNATURE_LINE_MAX)

#define CTL_FETCH_NAMES_MAX (TRUST_BUNDLE_MAX_AUTHORITIES * (NOTE_NAME_MAX + 2))

/* What a successful fetch verified, for the summary line. */
struct ctl_fetch_result {
	char namespace_name[NAMESPACE_NAME_MAX + 1];
	uint64_t epoch;
	uint64_t record_count;
	size_t signer_count;                    /* distinct pinned authorities whose certified keys signed */
	size_t authority_count;                 /* authorities in the bundle */
	char signer_names[CTL_FETCH_NAMES_MAX]; /* their names, ", "-separated, bundle order */
};

/* A snapshot already downloaded: the input of the verification half. */
struct ctl_fetch_input {
	const struct trust_bundle *bundle;
	const char *namespace_name; /* must be a namespace of the bundle */
	const char *directory;      /* the mirror root; files go to directory/namespace_name/ */
	uint64_t now;               /* unix seconds, from the caller's clock */
	const uint8_t *header_note; /* the signed header note as served */
	size_t header_note_len;
	const uint8_t *certificates; /* the certificate bundle as served (GET /v1/certificates) */
	size_t certificates_len;
	const char *body_encoding; /* the body's Content-Encoding: "", "identity", "gzip", "zstd" */
	const uint8_t *body;       /* the body as served (compressed per body_encoding) */
	size_t body_len;
};

/* Step 1. Verifies a signed header note for namespace_name against the bundle's pinned
 * identities and the certificates of the certificate bundle (bytes as served), at time now. On
 * success fills *header and the result's epoch, count and signers. Returns 0, or a negative
 * error with the refusal in report (exit 65; 78 when the namespace is not in the bundle):
 * DIRAUTH_ERR_UNKNOWN_KEY when no signature is by a key certified by a pinned identity for the
 * header's valid-after, DIRAUTH_ERR_THRESHOLD when too few authorities, DIRAUTH_ERR_SIGNATURE,
 * DIRAUTH_ERR_SYNTAX / DIRAUTH_ERR_BOUNDS for a malformed note, header or certificate bundle,
 * DIRAUTH_ERR_MISMATCH, DIRAUTH_ERR_STALE. */
int ctl_fetch_verify_header(const struct trust_bundle *bundle, const char *namespace_name,
                            const uint8_t *note, size_t note_len, const uint8_t *certificates,
                            size_t certificates_len, uint64_t now, struct snapshot_header *header,
                            struct ctl_fetch_result *result, struct ctl_report *report);

/* Step 2. Compares a verified header with the one held in directory/namespace_name/latest.header
 * (none held: nothing to compare). Returns 0; DIRAUTH_ERR_ROLLBACK for an older epoch;
 * DIRAUTH_ERR_MISMATCH for equivocation, after writing the evidence file; DIRAUTH_ERR_SYNTAX
 * when the held header cannot be read back (a check that cannot run denies). Refusals are in
 * report. */
int ctl_fetch_check_history(const char *directory, const char *namespace_name, const uint8_t *note,
                            size_t note_len, const struct snapshot_header *header, struct ctl_report *report);

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

/* Steps 1 to 4 on a downloaded snapshot. Returns 0 with *result filled, or the first refusal's
 * error code with the refusal in report; nothing is written unless every check passed (except
 * the evidence file of an equivocation). */
int ctl_fetch_verify_and_store(const struct ctl_fetch_input *input, struct ctl_fetch_result *result,
                               struct ctl_report *report);

struct ctl_fetch_options {
	const char *server_url; /* http(s)://host[:port][/prefix] */
	const struct trust_bundle *bundle;
	const char *namespace_name;
	const char *directory; /* NULL: CTL_FETCH_DEFAULT_DIRECTORY */
	uint64_t now;
};

/* The whole fetch: GET <server>/v1/<ns>/snapshots/latest (bounded by CTL_FETCH_HEADER_NOTE_MAX),
 * GET <server>/v1/certificates (bounded by CERTIFICATE_BUNDLE_MAX_BYTES), steps 1 and 2, GET
 * <server>/v1/<ns>/snapshots/<epoch>/body with "Accept-Encoding: zstd, gzip" (bounded by the bundle's
 * max-body-compressed), steps 3 and 4. Returns 0 with *result filled, or a negative error with the failure in
 * report (69 server unreachable or 5xx, 76 any other non-200 answer, plus the verification refusals above).
 */
int ctl_fetch_run(const struct ctl_fetch_options *options, struct ctl_fetch_result *result,
                  struct ctl_report *report);

#endif
