/*
 * lookup.c: dirauthctl lookup (lookup.h): the latest header and one record shard, downloaded,
 * verified, and printed.
 *
 * The header's checks are fetch's own (ctl_fetch_verify_header), so a lookup and a fetch believe
 * the same headers and refuse them with the same statuses; the shard's are verify/'s
 * (verify_record_proof). What is left here is the network and the words: which URL, how much may
 * come back, and how a person reads a verified record.
 */
#include "ctl/lookup.h"

#include "base/error.h"
#include "compress/compress.h"
#include "ctl/exchange.h"
#include "ctl/keyring.h"
#include "net/client.h"
#include "schema/encoding.h"
#include "verify/verify.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WHAT_MAX (NAMESPACE_NAME_MAX + 16)

int ctl_lookup_parse_service(const char *text, uint8_t out[SERVICE_ID_SIZE])
{
	if (!text || strlen(text) != 2 * SERVICE_ID_SIZE)
		return DIRAUTH_ERR_SYNTAX;
	for (const char *c = text; *c; c++)
		if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f')))
			return DIRAUTH_ERR_SYNTAX;
	return hex_decode(text, 2 * SERVICE_ID_SIZE, out, SERVICE_ID_SIZE) == 0 ? 0 : DIRAUTH_ERR_SYNTAX;
}

void ctl_lookup_result_free(struct ctl_lookup_result *result)
{
	verify_record_clear(&result->record);
	buffer_free(&result->shard);
}

/* Step 1's refusals come worded as fetch's ("fetch <ns>: ..."); a lookup's say "lookup". */
static void reword(struct ctl_report *report)
{
	if (strncmp(report->message, "fetch ", 6) == 0) {
		char message[CTL_REPORT_MAX];
		snprintf(message, sizeof message, "lookup %s", report->message + 6);
		memcpy(report->message, message, sizeof message);
	}
}

/* The shard as served, decoded under RECORD_SHARD_MAX_BYTES. */
static int decode_shard(const char *what, const struct net_response *response, struct buffer *out,
                        struct ctl_report *report)
{
	enum content_encoding encoding = ENCODING_COUNT;
	if (response->content_encoding[0] == '\0')
		encoding = ENCODING_IDENTITY;
	for (int e = 0; e < ENCODING_COUNT && encoding == ENCODING_COUNT; e++)
		if (strcmp(response->content_encoding, content_encoding_name((enum content_encoding)e)) == 0)
			encoding = (enum content_encoding)e;
	if (encoding == ENCODING_COUNT) {
		ctl_report_fail(report, CTL_EXIT_PROTOCOL,
		                "%s: record shard: unsupported content encoding '%.32s'", what,
		                response->content_encoding);
		return DIRAUTH_ERR_SYNTAX;
	}
	buffer_reset(out);
	int rc = encoding == ENCODING_IDENTITY
	             ? buffer_append(out, response->body.data, response->body.len)
	             : compress_decode(encoding, response->body.data, response->body.len,
	                               RECORD_SHARD_MAX_BYTES, out);
	if (rc)
		ctl_report_fail(report, ctl_exit_code_for_error(rc),
		                "%s: record shard: cannot be decoded (%s)", what, dirauth_strerror(rc));
	return rc;
}

int ctl_lookup_run(const struct ctl_lookup_options *options, struct ctl_lookup_result *result,
                   struct ctl_report *report)
{
	const char *const headers[] = {options->authorization, NULL};
	const char *const shard_headers[] = {"Accept-Encoding: zstd", options->authorization, NULL};
	struct net_response header_response, shard_response;
	struct buffer url, certificates;
	struct verify_snapshot_policy defaults;
	const struct verify_snapshot_policy *policy = options->policy;
	char what[WHAT_MAX], detail[VERIFY_DETAIL_MAX];
	unsigned bits;
	int rc;

	memset(result, 0, sizeof(*result));
	buffer_init(&result->shard);
	if (!policy) {
		verify_snapshot_policy_default(&defaults);
		policy = &defaults;
	}
	snprintf(what, sizeof what, "lookup %s", options->namespace_name);
	net_response_init(&header_response);
	net_response_init(&shard_response);
	buffer_init(&url);
	buffer_init(&certificates);
	size_t base_len = ctl_exchange_url_length(options->server_url);
	if (trust_bundle_namespace(options->bundle, options->namespace_name) == NULL) {
		rc = DIRAUTH_ERR_CONFIG;
		ctl_report_fail(report, CTL_EXIT_CONFIG, "%s: namespace not in the trust bundle", what);
		goto done;
	}
	if ((rc = buffer_appendf(&url, "%.*s/v1/%s/snapshots/latest", (int)base_len, options->server_url,
	                         options->namespace_name)) != 0) {
		ctl_report_fail(report, CTL_EXIT_USAGE, "%s: server URL too long", what);
		goto done;
	}
	if ((rc = ctl_exchange_get(what, "latest header", (const char *)url.data, headers,
	                           CTL_FETCH_HEADER_NOTE_MAX, 0, &header_response, report)) != 0 ||
	    (rc = ctl_keyring_download(what, options->server_url, &certificates, report)) != 0)
		goto done;
	rc = ctl_fetch_verify_header(options->bundle, options->namespace_name, header_response.body.data,
	                             header_response.body.len, certificates.data, certificates.len,
	                             options->now, policy, &result->header, &result->header_result, report);
	if (rc) {
		reword(report);
		goto done;
	}
	result->header_bytes = header_response.body.len;
	if ((rc = record_shard_bits(result->header.record_count, &bits)) != 0) {
		ctl_report_fail(report, CTL_EXIT_DATA,
		                "%s: the header's %" PRIu64 " records have no record shards", what,
		                result->header.record_count);
		goto done;
	}
	record_shard_name(record_shard_of(options->service_id, bits), bits, result->shard_name);
	buffer_reset(&url);
	if ((rc = buffer_appendf(&url, "%.*s/v1/%s/snapshots/%" PRIu64 "/records/%s", (int)base_len,
	                         options->server_url, options->namespace_name, result->header.epoch,
	                         result->shard_name)) != 0) {
		ctl_report_fail(report, CTL_EXIT_USAGE, "%s: server URL too long", what);
		goto done;
	}
	if ((rc = ctl_exchange_get(what, "record shard", (const char *)url.data, shard_headers,
	                           RECORD_SHARD_MAX_BYTES, 0, &shard_response, report)) != 0 ||
	    (rc = decode_shard(what, &shard_response, &result->shard, report)) != 0)
		goto done;
	result->shard_bytes = shard_response.body.len;
	rc = verify_record_proof(&result->header, result->shard.data, result->shard.len, options->service_id,
	                         &result->record, detail, sizeof detail);
	if (rc)
		ctl_verification_fail(report, what, rc, detail);
done:
	net_response_free(&header_response);
	net_response_free(&shard_response);
	buffer_free(&url);
	buffer_free(&certificates);
	return rc;
}

static const char *health_of(const struct verify_record *record, const uint8_t endpoint_id[ENDPOINT_ID_SIZE],
                             const struct verify_record_health **entry)
{
	*entry = NULL;
	for (size_t i = 0; i < record->health_count; i++)
		if (memcmp(record->health[i].endpoint_id, endpoint_id, ENDPOINT_ID_SIZE) == 0) {
			*entry = &record->health[i];
			return health_class_name(record->health[i].health_class);
		}
	return "unknown";
}

void ctl_lookup_print(const struct ctl_lookup_result *result, FILE *out)
{
	const struct verify_record *record = &result->record;
	const struct ctl_fetch_result *h = &result->header_result;
	char hex[2 * SERVICE_ID_SIZE + 1];
	fprintf(out,
	        "verified snapshot %s epoch %" PRIu64 ": %" PRIu64
	        " records, signed by %zu of %zu authorities (%s)\n",
	        h->namespace_name, h->epoch, h->record_count, h->signer_count, h->authority_count,
	        h->signer_names);
	fprintf(out, "record shard %s: %zu bytes as served, proven against the records root\n",
	        result->shard_name, result->shard_bytes);
	if (!record->present) {
		fprintf(out, "absent: no record between ");
		if (record->has_before) {
			hex_encode(record->before_id, SERVICE_ID_SIZE, hex);
			fprintf(out, "leaf %" PRIu64 " (%s)", record->leaf_index - 1, hex);
		} else {
			fprintf(out, "the start of the tree");
		}
		fprintf(out, " and ");
		if (record->has_after) {
			hex_encode(record->after_id, SERVICE_ID_SIZE, hex);
			fprintf(out, "leaf %" PRIu64 " (%s)\n", record->leaf_index, hex);
		} else {
			fprintf(out, "the end of the tree\n");
		}
		for (size_t i = 0; i < record->revocation_count; i++) {
			const struct verify_record_revocation *r = &record->revocations[i];
			if (r->has_endpoint) {
				hex_encode(r->endpoint_id, ENDPOINT_ID_SIZE, hex);
				fprintf(out, "revoked: endpoint %s, since epoch %" PRIu64 "\n", hex,
				        r->since);
			} else {
				fprintf(out, "revoked: the whole service, since epoch %" PRIu64 "\n",
				        r->since);
			}
		}
		return;
	}
	const struct registration *r = &record->registration;
	hex_encode(r->service_id, SERVICE_ID_SIZE, hex);
	fprintf(out, "service %s: present at leaf %" PRIu64 ", not revoked in this snapshot\n", hex,
	        record->leaf_index);
	fprintf(out, "class %s, provider %s, sequence %" PRIu64 ", expires %" PRIu64 "\n",
	        service_class_name(r->service_class), r->provider.name, r->sequence, r->expires);
	for (size_t i = 0; i < r->endpoint_count; i++) {
		const struct endpoint_descriptor *e = &r->endpoints[i];
		const struct verify_record_health *entry;
		const char *health = health_of(record, e->endpoint_id, &entry);
		hex_encode(e->endpoint_id, ENDPOINT_ID_SIZE, hex);
		fprintf(out, "endpoint %s %s %s %s %s %s health %s", hex, transport_name(e->transport),
		        e->address, e->region, capacity_class_name(e->capacity),
		        capability_profile_name(e->profile), health);
		if (entry)
			fprintf(out, " (by the %s key, issued at %" PRIu64 "%s%s)",
			        health_signer_name(entry->signer), entry->issued_at,
			        entry->has_capacity ? ", capacity " : "",
			        entry->has_capacity ? capacity_class_name(entry->capacity) : "");
		else
			fprintf(out, " (no fresh statement: treat as unavailable)");
		fprintf(out, "\n");
	}
}
