/*
 * trust_bundle.h: what a mirror or client pins, the root of trust shipped with a release.
 *
 * A plain text file, one directive per line, in the spirit of c2sp.org/tlog-policy
 * (schema/trust-bundle.md has the grammar). Lines starting with '#' are comments.
 *
 *   dirauth trust v1
 *   namespace <name> <origin>          one or more
 *   authority <verifier key>           one or more: no key twice, no name twice
 *   threshold <k>                      1 ≤ k ≤ number of authorities
 *   max-body-compressed <bytes>        optional, default 64 MiB
 *   max-body-uncompressed <bytes>      optional, default 512 MiB
 *   max-records <count>                optional, default 1000000
 *
 * Unlike the signed documents, the bundle is written by people: comments are allowed and
 * directives after the first line may come in any order, but every line is still strict.
 */
#ifndef DIRAUTH_SCHEMA_TRUST_BUNDLE_H
#define DIRAUTH_SCHEMA_TRUST_BUNDLE_H

#include "schema/note.h"
#include "schema/registration.h"
#include "schema/snapshot.h"

#include <stddef.h>
#include <stdint.h>

#define TRUST_BUNDLE_MAX_BYTES       (64 * 1024)
#define TRUST_BUNDLE_MAX_NAMESPACES  64
#define TRUST_BUNDLE_MAX_AUTHORITIES 32

struct trust_namespace {
	char name[NAMESPACE_NAME_MAX + 1];
	char origin[SNAPSHOT_ORIGIN_MAX + 1];
};

struct trust_bundle {
	size_t namespace_count;
	struct trust_namespace namespaces[TRUST_BUNDLE_MAX_NAMESPACES];
	size_t authority_count;
	struct note_verifier authorities[TRUST_BUNDLE_MAX_AUTHORITIES];
	size_t threshold;
	uint64_t max_body_compressed;
	uint64_t max_body_uncompressed;
	uint64_t max_records;
};

/* Room for any reason trust_bundle_parse_explained writes. */
#define TRUST_BUNDLE_WHY_MAX 640

/* Parses a bundle. On error, *error_line (may be NULL) gets the 1-based line at fault and *out is
 * zeroed. Returns 0, DIRAUTH_ERR_SYNTAX, DIRAUTH_ERR_BOUNDS, DIRAUTH_ERR_NOMEM. */
int trust_bundle_parse(const uint8_t *buf, size_t len, struct trust_bundle *out, size_t *error_line);

/* trust_bundle_parse, and on error also writes into why (capacity why_cap; why may be NULL) what
 * is wrong with the line at fault, for a person: e.g. "threshold: 4 is more than the 3
 * authorities listed", "authority b.example: the key of authority a.example (line 4) under a
 * second name; one identity key pins one authority", "a carriage return at byte 12: lines end in
 * a bare newline (LF)", "no threshold line". why is empty after success, always NUL-terminated
 * when why_cap > 0, truncated to fit; TRUST_BUNDLE_WHY_MAX holds every reason untruncated. */
int trust_bundle_parse_explained(const uint8_t *buf, size_t len, struct trust_bundle *out, size_t *error_line,
                                 char *why, size_t why_cap);

/* Appends a bundle's canonical text (no comments). */
int trust_bundle_encode(const struct trust_bundle *bundle, struct buffer *out);

/* The namespace entry called name, or NULL. */
const struct trust_namespace *trust_bundle_namespace(const struct trust_bundle *bundle, const char *name);

#endif
