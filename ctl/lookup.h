/*
 * lookup.h: dirauthctl lookup, one service of a namespace verified without the snapshot's body.
 *
 * A client that needs one record should not download and check every record: the latest header
 * (a few hundred bytes, co-signed) and the one record shard that holds the service or proves it
 * absent (schema/record-shard.md, a few KB) are enough. The steps, each of which can only refuse:
 *
 *   1. GET <server>/v1/<ns>/snapshots/latest and /v1/certificates, and the header verified as
 *      fetch verifies it (ctl_fetch_verify_header: the bundle's threshold of pinned authorities
 *      over certified keys, namespace and origin, times, bounds), with fetch's exit statuses;
 *   2. the shard's name from the verified header's record count and the service id
 *      (record_shard_bits, record_shard_of, record_shard_name), and
 *      GET <server>/v1/<ns>/snapshots/<epoch>/records/<name> (zstd or identity, bounded by
 *      RECORD_SHARD_MAX_BYTES as served and decoded);
 *   3. verify_record_proof (verify/record_proof.h): present, with its verified registration and
 *      health, or proven absent between two adjacent leaves, with any revocation listed for it.
 *
 * A lookup holds no state: it does not walk the header's history from one held before (fetch
 * and the mirror do). A server is believed only as far as the trust bundle's signatures and the
 * proof go; a static mirror's tree (ctl/mirror.h) serves the same paths.
 *
 * Exit statuses: 0 present, 1 proven absent (as grep: the question was answered, negatively); 64
 * a bad SERVICE; 65 a header or shard that does not verify; 75 a stale header; 69/76 the server;
 * 78 a namespace the bundle does not pin; 70 a check that could not run.
 */
#ifndef DIRAUTH_CTL_LOOKUP_H
#define DIRAUTH_CTL_LOOKUP_H

#include "ctl/fetch.h"
#include "ctl/report.h"
#include "verify/record_proof.h"

#include <stddef.h>
#include <stdint.h>

/* The exit status of a lookup that proved the service absent. */
#define CTL_LOOKUP_EXIT_ABSENT 1

struct ctl_lookup_options {
	const struct trust_bundle *bundle;
	const char *namespace_name;
	const char *server_url;
	uint64_t now;
	const struct verify_snapshot_policy *policy; /* NULL: the defaults */
	const char *authorization;                   /* a private namespace's capability header, or NULL */
	uint8_t service_id[SERVICE_ID_SIZE];
};

/* What a lookup verified. The record's note borrows from shard. */
struct ctl_lookup_result {
	struct ctl_fetch_result header_result; /* namespace, epoch, count and who signed */
	struct snapshot_header header;
	char shard_name[RECORD_SHARD_NAME_MAX + 1];
	size_t header_bytes; /* the header note as served */
	size_t shard_bytes;  /* the shard as served (compressed when it was) */
	struct buffer shard; /* the shard, decoded */
	struct verify_record record;
};

/* Parses a service id (64 lower-case hex digits). Returns 0 or DIRAUTH_ERR_SYNTAX. */
int ctl_lookup_parse_service(const char *text, uint8_t out[SERVICE_ID_SIZE]);

/* Steps 1 to 3 against options->server_url. Returns 0 with *result filled (free it with
 * ctl_lookup_result_free, also after an error), or a negative error with the failure in report as
 * "lookup <ns>: ...". */
int ctl_lookup_run(const struct ctl_lookup_options *options, struct ctl_lookup_result *result,
                   struct ctl_report *report);

void ctl_lookup_result_free(struct ctl_lookup_result *result);

/* Prints what result says, for a person: the snapshot, then the service's class, provider,
 * expiry and each endpoint with its transport, address, region, capacity, profile and published
 * health ("unknown" where the snapshot has none: treat as unavailable); or its absence, the
 * neighbours that prove it, and any revocation listed for it. */
void ctl_lookup_print(const struct ctl_lookup_result *result, FILE *out);

#endif
