/*
 * bench_tlog.c: how fast the transparency log's core (tlog/) appends, computes checkpoint roots,
 * produces tiles and generates proofs over stored hashes, each figure next to the raw SHA-256
 * rate of the same machine in the same run.
 *
 * Everything the log computes is SHA-256 of 65 bytes (0x01 || left || right) plus reading stored
 * hashes, so the anchor is OpenSSL EVP's one-shot SHA-256 (EVP_Digest) over 64-byte inputs, on
 * one thread, the fastest of eight windows (other work on the machine can only slow a window
 * down). A figure's ratio is its rate divided by the anchor's: an append at ratio 0.5 costs about
 * two hash computations, a proof at ratio 0.01 about a hundred. The store is an in-memory array
 * per hash level, so the figures are the core's own cost, without a database under it.
 *
 * The run, every phase bounded in time:
 *   1. the SHA-256 anchor (--anchor-seconds, default 2);
 *   2. N synthetic leaf hashes (--leaves, default 1,000,000; made without SHA-256, before the
 *      clock starts) appended through tlog_append(), each record written to the store;
 *   3. for --seconds each (default 2): the checkpoint root at the full size and at random sizes;
 *      full tiles at random (levels 0 and 1) through tlog_tile_read(); inclusion proofs of random
 *      leaves and consistency proofs from random sizes, both to the full size; and, for a sense of
 *      the client's side, merkle_inclusion_verify() of a generated proof.
 * Every root and proof made is checked once against crypto/merkle.c's verifiers before timing.
 * It prints a table of figure, value, anchor and ratio. Built with the project, never run by
 * ctest. Exit status 0 on success, 1 on a failure, 2 for a bad option.
 */
#include "bench/harness.h"
#include "base/error.h"
#include "crypto/merkle.h"
#include "tlog/tile.h"
#include "tlog/tree.h"

#include <openssl/evp.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LEAVES_MAX ((uint64_t)1 << 28)

struct options {
	uint64_t leaves;
	double seconds;
	double anchor_seconds;
};

struct store {
	merkle_hash *levels[64];
	uint64_t counts[64];
	uint64_t reads;
};

static int store_read(void *context, uint8_t level, uint64_t index, uint64_t count, merkle_hash *out)
{
	struct store *store = context;
	if (level >= 64 || index >= store->counts[level] || count > store->counts[level] - index)
		return DIRAUTH_ERR_NOT_FOUND;
	memcpy(out, store->levels[level] + index, count * MERKLE_HASH_SIZE);
	store->reads += count;
	return 0;
}

static void fail(const char *what, int rc)
{
	fprintf(stderr, "bench_tlog: %s: %s\n", what, dirauth_strerror(rc));
	exit(1);
}

/* A synthetic leaf hash (splitmix64), so that leaf hashing is not part of any figure. */
static void synthetic_leaf(uint64_t i, merkle_hash out)
{
	uint64_t x = i * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
	for (int word = 0; word < 4; word++) {
		x ^= x >> 31;
		x *= 0xbf58476d1ce4e5b9ull;
		x ^= x >> 27;
		x *= 0x94d049bb133111ebull;
		for (int b = 0; b < 8; b++)
			out[word * 8 + b] = (uint8_t)(x >> (8 * b));
	}
}

static uint64_t random_state = 0x243f6a8885a308d3ull;

static uint64_t random_below(uint64_t bound)
{
	random_state ^= random_state << 13;
	random_state ^= random_state >> 7;
	random_state ^= random_state << 17;
	return random_state % bound;
}

/* The anchor: one-shot EVP SHA-256 of 64 bytes, the fastest of eight windows. */
static double sha256_rate(double seconds)
{
	uint8_t input[64], digest[EVP_MAX_MD_SIZE];
	unsigned int digest_len = 0;
	memset(input, 0x5c, sizeof(input));
	double best = 0;
	for (int window = 0; window < 8; window++) {
		double start = harness_now(), elapsed;
		uint64_t count = 0;
		do {
			for (int i = 0; i < 256; i++) {
				if (EVP_Digest(input, sizeof(input), digest, &digest_len, EVP_sha256(),
				               NULL) != 1)
					fail("EVP_Digest", DIRAUTH_ERR_CRYPTO);
				input[0] = digest[0];
			}
			count += 256;
			elapsed = harness_now() - start;
		} while (elapsed < seconds / 8);
		if ((double)count / elapsed > best)
			best = (double)count / elapsed;
	}
	return best;
}

enum operation {
	ROOT_FULL,
	ROOT_RANDOM,
	TILE_FULL,
	INCLUSION,
	CONSISTENCY,
	VERIFY,
};

struct phase {
	enum operation operation;
	const char *figure;
	double rate;
	double reads_per_op;
};

/* Runs one operation in batches until seconds have passed; returns operations per second. */
static double run_phase(struct phase *phase, struct store *store, uint64_t size, double seconds)
{
	struct tlog_hash_reader reader = {store_read, store};
	merkle_hash out, proof[MERKLE_MAX_PROOF], root;
	uint8_t tile_bytes[TLOG_TILE_BYTES];
	size_t len = 0;
	int rc = tlog_tree_root(&reader, size, root);
	if (rc)
		fail("root", rc);
	/* The proof verified in the VERIFY phase. */
	uint64_t verify_index = size / 3;
	size_t verify_len = 0;
	merkle_hash verify_proof[MERKLE_MAX_PROOF];
	if ((rc = tlog_inclusion_proof(&reader, size, verify_index, verify_proof, &verify_len)) != 0)
		fail("inclusion proof", rc);

	uint64_t full0 = tlog_tile_full_count(size, 0), full1 = tlog_tile_full_count(size, 1);
	uint64_t count = 0, reads = store->reads;
	double start = harness_now(), elapsed;
	do {
		for (int i = 0; i < 64; i++) {
			switch (phase->operation) {
			case ROOT_FULL:
				rc = tlog_tree_root(&reader, size, out);
				break;
			case ROOT_RANDOM:
				rc = tlog_tree_root(&reader, 1 + random_below(size), out);
				break;
			case TILE_FULL: {
				struct tlog_tile tile = {TLOG_TILE_HASHES, 0, 0, TLOG_TILE_WIDTH};
				uint64_t pick = random_below(full0 + full1);
				if (pick < full0) {
					tile.index = pick;
				} else {
					tile.level = 1;
					tile.index = pick - full0;
				}
				rc = tlog_tile_read(&reader, size, &tile, tile_bytes, &len);
				break;
			}
			case INCLUSION:
				rc = tlog_inclusion_proof(&reader, size, random_below(size), proof, &len);
				break;
			case CONSISTENCY:
				rc = tlog_consistency_proof(&reader, size, 1 + random_below(size), proof,
				                            &len);
				break;
			case VERIFY:
				rc = merkle_inclusion_verify(verify_index, size,
				                             store->levels[0][verify_index], verify_proof,
				                             verify_len, root);
				break;
			}
			if (rc)
				fail(phase->figure, rc);
		}
		count += 64;
		elapsed = harness_now() - start;
	} while (elapsed < seconds);
	phase->reads_per_op = (double)(store->reads - reads) / (double)count;
	return (double)count / elapsed;
}

/* One check of each kind against crypto/merkle.c's verifiers, so that the figures are of code
 * that gives right answers. */
static void check_answers(struct store *store, uint64_t size)
{
	struct tlog_hash_reader reader = {store_read, store};
	merkle_hash root, old_root, proof[MERKLE_MAX_PROOF];
	size_t len;
	uint64_t index = random_below(size), old_size = 1 + random_below(size);
	int rc = tlog_tree_root(&reader, size, root);
	if (rc == 0)
		rc = tlog_tree_root(&reader, old_size, old_root);
	if (rc == 0)
		rc = tlog_inclusion_proof(&reader, size, index, proof, &len);
	if (rc == 0)
		rc = merkle_inclusion_verify(index, size, store->levels[0][index], proof, len, root);
	if (rc == 0)
		rc = tlog_consistency_proof(&reader, size, old_size, proof, &len);
	if (rc == 0)
		rc = merkle_consistency_verify(old_size, size, old_root, root, proof, len);
	if (rc)
		fail("a generated proof does not verify", rc);
	if (size <= 1u << 22) {
		merkle_hash independent;
		if ((rc = merkle_root((const merkle_hash *)store->levels[0], size, independent)) != 0)
			fail("merkle_root", rc);
		if (memcmp(independent, root, MERKLE_HASH_SIZE) != 0)
			fail("the root from stored hashes differs from crypto/merkle.c's",
			     DIRAUTH_ERR_MISMATCH);
	}
}

static void print_row(const char *figure, const char *value, const char *reads, const char *anchor,
                      double ratio)
{
	char line[256], ratio_text[32] = "";
	if (ratio > 0)
		snprintf(ratio_text, sizeof(ratio_text), "%.4f", ratio);
	snprintf(line, sizeof(line), "%-40s %-24s %-9s %-22s %s", figure, value, reads, anchor, ratio_text);
	size_t len = strlen(line);
	while (len > 0 && line[len - 1] == ' ')
		line[--len] = 0;
	puts(line);
}

static void usage(void)
{
	fprintf(stderr, "usage: bench_tlog [--leaves N] [--seconds S] [--anchor-seconds S]\n");
	exit(2);
}

static void parse_options(int argc, char **argv, struct options *options)
{
	options->leaves = 1000000;
	options->seconds = 2;
	options->anchor_seconds = 2;
	for (int i = 1; i < argc; i++) {
		char *end = NULL;
		if (i + 1 >= argc)
			usage();
		if (strcmp(argv[i], "--leaves") == 0) {
			unsigned long long n = strtoull(argv[++i], &end, 10);
			if (!end || *end || n < 2 || n > LEAVES_MAX)
				usage();
			options->leaves = n;
		} else if (strcmp(argv[i], "--seconds") == 0 || strcmp(argv[i], "--anchor-seconds") == 0) {
			double *target = argv[i][2] == 's' ? &options->seconds : &options->anchor_seconds;
			double s = strtod(argv[++i], &end);
			if (!end || *end || !(s >= 0.1 && s <= 60))
				usage();
			*target = s;
		} else {
			usage();
		}
	}
}

int main(int argc, char **argv)
{
	struct options options;
	parse_options(argc, argv, &options);
	uint64_t n = options.leaves;

	printf("measuring the SHA-256 anchor for %.1f s...\n", options.anchor_seconds);
	double sha_rate = sha256_rate(options.anchor_seconds);

	struct store store;
	memset(&store, 0, sizeof(store));
	for (unsigned level = 0; level < 64 && (n >> level) > 0; level++) {
		store.levels[level] = malloc((n >> level) * MERKLE_HASH_SIZE);
		if (!store.levels[level])
			fail("allocating the store", DIRAUTH_ERR_NOMEM);
	}
	merkle_hash *leaves = malloc(n * MERKLE_HASH_SIZE);
	if (!leaves)
		fail("allocating the leaves", DIRAUTH_ERR_NOMEM);
	for (uint64_t i = 0; i < n; i++)
		synthetic_leaf(i, leaves[i]);

	printf("appending %llu leaves...\n", (unsigned long long)n);
	struct tlog_hash_reader reader = {store_read, &store};
	uint64_t records_written = 0;
	double start = harness_now();
	for (uint64_t i = 0; i < n; i++) {
		struct tlog_record records[TLOG_APPEND_MAX];
		size_t count = 0;
		int rc = tlog_append(&reader, i, leaves[i], records, &count);
		if (rc)
			fail("append", rc);
		for (size_t r = 0; r < count; r++)
			memcpy(store.levels[records[r].level][store.counts[records[r].level]++],
			       records[r].hash, MERKLE_HASH_SIZE);
		records_written += count;
	}
	double append_rate = (double)n / (harness_now() - start);
	double append_reads = (double)store.reads / (double)n;
	free(leaves);
	check_answers(&store, n);

	struct phase phases[] = {
	    {ROOT_FULL, "checkpoint root, full size", 0, 0},
	    {ROOT_RANDOM, "checkpoint root, random sizes", 0, 0},
	    {TILE_FULL, "full tile (8,192 B), levels 0 and 1", 0, 0},
	    {INCLUSION, "inclusion proof, random leaf", 0, 0},
	    {CONSISTENCY, "consistency proof, random old size", 0, 0},
	    {VERIFY, "inclusion proof verify (client)", 0, 0},
	};
	for (size_t i = 0; i < sizeof(phases) / sizeof(phases[0]); i++) {
		printf("%s for %.1f s...\n", phases[i].figure, options.seconds);
		phases[i].rate = run_phase(&phases[i], &store, n, options.seconds);
	}

	char value[64], anchor[64], figure[96], reads[32];
	printf("\n%-40s %-24s %-9s %-22s %s\n", "figure", "value", "reads/op", "anchor", "ratio");
	printf("%-40s %-24s %-9s %-22s %s\n", "------", "-----", "--------", "------", "-----");
	snprintf(value, sizeof(value), "%.0f /s", sha_rate);
	print_row("SHA-256 of 64 bytes (EVP), one thread", value, "", "", 0);
	snprintf(anchor, sizeof(anchor), "SHA-256 %.0f /s", sha_rate);
	snprintf(figure, sizeof(figure), "append (%llu leaves)", (unsigned long long)n);
	snprintf(value, sizeof(value), "%.0f /s", append_rate);
	snprintf(reads, sizeof(reads), "%.1f", append_reads);
	print_row(figure, value, reads, anchor, append_rate / sha_rate);
	for (size_t i = 0; i < sizeof(phases) / sizeof(phases[0]); i++) {
		if (phases[i].operation == TILE_FULL)
			snprintf(value, sizeof(value), "%.0f /s, %.0f MB/s", phases[i].rate,
			         phases[i].rate * TLOG_TILE_BYTES / 1e6);
		else
			snprintf(value, sizeof(value), "%.0f /s", phases[i].rate);
		snprintf(reads, sizeof(reads), "%.1f", phases[i].reads_per_op);
		print_row(phases[i].figure, value, reads, anchor, phases[i].rate / sha_rate);
	}
	printf("\nappend wrote %.2f records per leaf; reads/op counts stored hashes read.\n",
	       (double)records_written / (double)n);
	for (unsigned level = 0; level < 64; level++)
		free(store.levels[level]);
	return 0;
}
