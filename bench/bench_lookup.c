/*
 * bench_lookup.c: what a lookup by record shard (schema/record-shard.md) costs a client against a
 * full fetch of the snapshot, at 100,000 records.
 *
 * The anchors, measured in the same run: the whole body as a client fetches it (zstd, as the
 * authority serves it) and the time to verify it as dirauthctl fetch does (verify_snapshot_body:
 * decode the zstd body, check its digest, its Merkle root and every provider signature); and the
 * Ed25519 verify rate of crypto_ed25519_verify on one thread (harness_evp_verify_rate, the anchor
 * of bench_authority). The figures:
 *
 *   - bytes: the co-signed header note (signed here by three authorities) and one shard, as
 *     served in identity and in zstd, mean and largest over every shard of the body, against the
 *     zstd body (the goal: at most 1/1000);
 *   - time: one lookup (verify_record_proof on a shard, the header's own check aside, which both
 *     paths share) against the full body's verification; the build of every shard of the body
 *     (what the authority and each mirror spend per epoch) against compressing the body;
 *   - verifications per second of single records (a random present service each time, looked up
 *     in its shard) against the Ed25519 verify rate: a lookup checks one provider signature, so
 *     its rate is bounded by that rate, and the ratio says what the proof adds.
 *
 * The network is not timed: a lookup's transfer is its bytes. The records are real signed
 * registrations (harness_registrations: two endpoints each, about 690 bytes), in a body of
 * method 1, so the body compresses as bench_publish's does. Signing is not timed.
 *
 *   bench_lookup [--records N] [--seconds S] [--threads T]
 *
 * Exit status 0, 1 on a failure (a shard or a lookup that does not verify), 2 for a bad option.
 * It asserts no speed; its smoke run (ctest bench_smoke_lookup, label bench) uses 2,000 records.
 */
#include "base/error.h"
#include "bench/harness.h"
#include "compress/compress.h"
#include "crypto/crypto.h"
#include "schema/encoding.h"
#include "schema/note.h"
#include "schema/record_shard.h"
#include "schema/snapshot.h"
#include "schema/trust_bundle.h"
#include "signer/key.h"
#include "verify/record_proof.h"
#include "verify/snapshot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_EPOCH 29453762ull

struct options {
	size_t records;
	double seconds;
	unsigned threads;
};

static void usage(FILE *out)
{
	fprintf(out, "usage: bench_lookup [options]\n"
	             "  --records N   records of the body (default 100000)\n"
	             "  --seconds S   length of the lookup rate and of the verify anchor (default 2)\n"
	             "  --threads T   threads that sign the registrations (default 2)\n");
}

/* A header over body and its records, signed by three authorities. */
static int header_of(const struct buffer *body, const struct snapshot_record *records, size_t count,
                     struct snapshot_header *header, struct buffer *note)
{
	struct buffer text;
	struct note_signature signatures[3];
	int rc;
	memset(header, 0, sizeof(*header));
	strcpy(header->namespace_name, "mix");
	strcpy(header->origin, "dirauth.example/mix");
	header->epoch = BENCH_EPOCH;
	header->valid_after = HARNESS_START_TIME;
	header->fresh_until = HARNESS_START_TIME + 60;
	header->valid_until = HARNESS_START_TIME + 3600;
	header->record_count = count;
	header->body_size = body->len;
	header->consensus_method = 1;
	if ((rc = snapshot_records_root(records, count, header->records_root)) != 0 ||
	    (rc = crypto_sha256(body->data, body->len, header->body_sha256)) != 0)
		return rc;
	buffer_init(&text);
	rc = snapshot_header_encode(header, &text);
	for (int i = 0; rc == 0 && i < 3; i++) {
		struct signer_key *key = NULL;
		char name[64];
		snprintf(name, sizeof name, "authority-%d.dirauth.example", i + 1);
		rc = signer_key_generate(name, &key);
		if (rc == 0)
			rc = signer_key_sign(key, text.data, text.len, &signatures[i]);
		signer_key_free(key);
	}
	if (rc == 0)
		rc = note_format(text.data, text.len, signatures, 3, note);
	buffer_free(&text);
	return rc;
}

int main(int argc, char **argv)
{
	struct options o = {100000, 2.0, 2};
	const struct harness_option options[] = {
	    HARNESS_OPTION_COUNT("--records", &o.records, 10, 10000000),
	    HARNESS_OPTION_SECONDS("--seconds", &o.seconds),
	    HARNESS_OPTION_UNSIGNED("--threads", &o.threads, 1, 64),
	};
	if (harness_parse_options("bench_lookup", argc, argv, options, sizeof(options) / sizeof(options[0]),
	                          NULL, usage) != 0)
		return 2;
	struct signer_key *provider = NULL;
	struct buffer *notes = calloc(o.records, sizeof(*notes));
	struct snapshot_record *records = calloc(o.records, sizeof(*records));
	struct buffer body, zstd_body, header_note, shard, shard_zstd, decoded;
	struct record_shard_builder *builder = NULL;
	struct trust_bundle bundle;
	buffer_init(&body);
	buffer_init(&zstd_body);
	buffer_init(&header_note);
	buffer_init(&shard);
	buffer_init(&shard_zstd);
	buffer_init(&decoded);
	int status = 1;
	char detail[1024], load[64];
	if (!notes || !records || signer_key_generate("provider.example", &provider) != 0) {
		harness_fail("out of memory, or no key");
		goto cleanup;
	}
	if (harness_registrations(provider, 0, o.records, 1, HARNESS_START_TIME, o.threads, notes) != 0) {
		harness_fail("signing the registrations");
		goto cleanup;
	}
	for (size_t i = 0; i < o.records; i++) {
		if (harness_service_id_of(&notes[i], records[i].service_id) != 0) {
			harness_fail("a registration without its service line");
			goto cleanup;
		}
		records[i].note = notes[i].data;
		records[i].note_len = notes[i].len;
	}
	qsort(records, o.records, sizeof(*records), harness_record_order);
	struct snapshot_header header;
	if (snapshot_body_encode("mix", BENCH_EPOCH, records, o.records, &body) != 0 ||
	    header_of(&body, records, o.records, &header, &header_note) != 0) {
		harness_fail("the body and its header");
		goto cleanup;
	}

	/* The anchors: the zstd body, its compression, its verification as fetch does it. */
	double start = harness_now();
	if (compress_encode(ENCODING_ZSTD, body.data, body.len, &zstd_body) != 0) {
		harness_fail("compressing the body");
		goto cleanup;
	}
	double compress_seconds = harness_now() - start;
	memset(&bundle, 0, sizeof bundle);
	bundle.max_body_compressed = UINT64_MAX;
	bundle.max_body_uncompressed = UINT64_MAX;
	bundle.max_records = o.records;
	start = harness_now();
	if (verify_snapshot_body(&bundle, &header, "zstd", zstd_body.data, zstd_body.len, &decoded, detail,
	                         sizeof detail) != 0) {
		harness_fail("the full body does not verify: %s", detail);
		goto cleanup;
	}
	double full_seconds = harness_now() - start;
	double ed25519_rate = 0;
	if (harness_evp_verify_rate(records[0].note, records[0].note_len, o.seconds, &ed25519_rate) != 0) {
		harness_fail("the Ed25519 verify anchor");
		goto cleanup;
	}

	/* Every shard of the body: built once, as an authority or a mirror does per epoch. */
	const struct snapshot_body_limits limits = {o.records, 0, 0};
	start = harness_now();
	if (record_shard_builder_new(body.data, body.len, &limits, &builder) != 0) {
		harness_fail("the shard builder");
		goto cleanup;
	}
	unsigned bits = record_shard_builder_bits(builder);
	size_t shards = (size_t)1 << bits, largest = 0, largest_zstd = 0;
	double total = 0, total_zstd = 0, total_records = 0;
	for (size_t index = 0; index < shards; index++) {
		buffer_reset(&shard);
		if (record_shard_builder_shard(builder, (uint32_t)index, &shard) != 0) {
			harness_fail("shard %zu", index);
			goto cleanup;
		}
		total += (double)shard.len;
		largest = shard.len > largest ? shard.len : largest;
	}
	double build_seconds = harness_now() - start;
	for (size_t index = 0; index < shards; index++) {
		struct record_shard *parsed = NULL;
		buffer_reset(&shard);
		buffer_reset(&shard_zstd);
		if (record_shard_builder_shard(builder, (uint32_t)index, &shard) != 0 ||
		    compress_encode_fast(ENCODING_ZSTD, shard.data, shard.len, &shard_zstd) != 0 ||
		    record_shard_parse(shard.data, shard.len, &parsed) != 0) {
			harness_fail("shard %zu", index);
			goto cleanup;
		}
		total_records += (double)parsed->run_count;
		record_shard_free(parsed);
		total_zstd += (double)shard_zstd.len;
		largest_zstd = shard_zstd.len > largest_zstd ? shard_zstd.len : largest_zstd;
	}

	/* Lookups: a random present service each time, in its shard. */
	uint64_t state = 0x9e3779b97f4a7c15ull;
	size_t lookups = 0;
	double lookup_seconds = 0;
	start = harness_now();
	while (harness_now() - start < o.seconds) {
		state ^= state << 13;
		state ^= state >> 7;
		state ^= state << 17;
		const uint8_t *id = records[state % o.records].service_id;
		buffer_reset(&shard);
		if (record_shard_builder_shard(builder, record_shard_of(id, bits), &shard) != 0) {
			harness_fail("a shard");
			goto cleanup;
		}
		struct verify_record found;
		double one = harness_now();
		int rc =
		    verify_record_proof(&header, shard.data, shard.len, id, &found, detail, sizeof detail);
		lookup_seconds += harness_now() - one;
		if (rc != 0 || !found.present) {
			harness_fail("a lookup does not verify: %s", detail);
			goto cleanup;
		}
		verify_record_clear(&found);
		lookups++;
	}
	double lookup_rate = (double)lookups / lookup_seconds;
	double mean = total / (double)shards, mean_zstd = total_zstd / (double)shards;
	double lookup_bytes = (double)header_note.len + mean_zstd;
	double worst_bytes = (double)header_note.len + (double)largest_zstd;
	harness_load_average(load);
	printf(
	    "bench_lookup: %zu records, body %zu bytes, zstd %zu bytes; %zu shards (bits %u), %.2f records "
	    "a run on average; load %s\n",
	    o.records, body.len, zstd_body.len, shards, bits, total_records / (double)shards, load);
	printf("  %-40s %10zu bytes\n", "header note (3 signatures)", header_note.len);
	printf("  %-40s %10.0f bytes, largest %zu\n", "shard, identity (mean)", mean, largest);
	printf("  %-40s %10.0f bytes, largest %zu\n", "shard, zstd (mean)", mean_zstd, largest_zstd);
	printf("  %-40s %10.0f bytes: 1/%.0f of the zstd body (goal <= 1/1000: %s); largest shard 1/%.0f\n",
	       "lookup: header + zstd shard (mean)", lookup_bytes, (double)zstd_body.len / lookup_bytes,
	       lookup_bytes * 1000 <= (double)zstd_body.len ? "met" : "NOT met",
	       (double)zstd_body.len / worst_bytes);
	printf("  %-40s %10.1f us  against %.3f s to verify the full body (decode, digest, root, %zu "
	       "signatures): 1/%.0f\n",
	       "lookup: verify one record and its proof", 1e6 * lookup_seconds / (double)lookups,
	       full_seconds, o.records, full_seconds / (lookup_seconds / (double)lookups));
	printf("  %-40s %10.0f /s  against %.0f Ed25519 verifies/s on one thread: %.3fx\n",
	       "single-record verifications", lookup_rate, ed25519_rate, lookup_rate / ed25519_rate);
	printf("  %-40s %10.3f s   %.2fx the zstd compression of the body (%.3f s)\n",
	       "build every shard of the body", build_seconds, build_seconds / compress_seconds,
	       compress_seconds);
	status = 0;
cleanup:
	record_shard_builder_free(builder);
	signer_key_free(provider);
	if (notes)
		harness_buffers_free(notes, o.records);
	free(records);
	buffer_free(&body);
	buffer_free(&zstd_body);
	buffer_free(&header_note);
	buffer_free(&shard);
	buffer_free(&shard_zstd);
	buffer_free(&decoded);
	return status;
}
