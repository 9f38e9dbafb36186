/*
 * lookup.h: dirauthctl lookup, one service of a namespace verified without the snapshot's body.
 *
 * A client that needs one record should not download and check every record: the latest header
 * (a few hundred bytes, co-signed) and the one record shard that holds the service or proves it
 * absent (schema/record-shard.md, a few KB) are enough. The command is libdirauth's lookup
 * (libdirauth/include/dirauth/dirauth.h, dirauth_lookup_begin): a context over the trust
 * bundle (ctl/client.h), the clock from --now or the system's, a state held in memory only, and each path
 * the library names fetched from the --server URL through net/ (with the capability's
 * Authorization header, and Accept-Encoding zstd for the shard) and fed back to it. What the
 * proof showed is read with dirauth_lookup_record and printed. What is here is the network and
 * the words; every check is the library's.
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

#include "ctl/report.h"
#include "schema/trust_bundle.h"
#include "libdirauth/include/dirauth/dirauth.h"
#include "schema/registration.h"
#include "verify/snapshot.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The exit status of a lookup that proved the service absent. */
#define CTL_LOOKUP_EXIT_ABSENT 1

struct ctl_lookup_options {
	const struct trust_bundle *bundle;
	const char *namespace_name;
	const char *server_url;
	uint64_t now;
	const struct verify_snapshot_policy *policy; /* NULL: the defaults */
	const char *authorization;                   /* a private namespace's capability header, or NULL */
	const char *service_id;                      /* 64 lower-case hex digits (ctl_lookup_parse_service) */
};

/* What a lookup verified: the library's report of the proof, its arrays owned here. */
struct ctl_lookup_result {
	char namespace_name[NAMESPACE_NAME_MAX + 1];
	size_t shard_bytes; /* the shard as served (compressed when it was) */
	struct dirauth_record_view view;
};

/* Checks a service id (64 lower-case hex digits). Returns 0 or DIRAUTH_ERR_SYNTAX. */
int ctl_lookup_parse_service(const char *text);

/* The lookup against options->server_url. Returns 0 with *result filled (free it with
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
