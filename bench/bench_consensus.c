/*
 * bench_consensus.c: the cost of consensus method 1 over five votes of 100,000 and 1,000,000
 * records, printed next to an anchor measured in the same run: snapshot_body_encode() and
 * snapshot_records_root() over the same chosen records alone, which is what a single authority's
 * publication costs before compression and signing.
 *
 * The votes are synthetic but shaped like an epoch's: every vote lists every service in id order,
 * except that the fourth vote lags one sequence behind on every tenth service and the fifth lacks
 * every seventh, so the merge ranks real disagreements. Digests are those of a pool of 64
 * pre-built notes of a registration's size (745 bytes); the note callback hands back the pre-built
 * note for a version, as an authority reading its store would, without re-verifying signatures
 * (that is the caller's work, not the rule's). Building the votes is not timed. Also timed: parsing
 * the five vote bodies from their text, which an authority does once per epoch before the rule.
 *
 *   bench_consensus [--records N] [--runs R]
 *
 * Without --records it runs 100000 and then 1000000. Each figure is the fastest of R runs (3 by
 * default; other work on the machine only slows a run down). Exit status 0, 1 on a failure, 2 for
 * a bad option. Built with the project, never run by ctest.
 */
#include "bench/harness.h"
#include "consensus/consensus.h"
#include "crypto/crypto.h"
#include "base/error.h"
#include "schema/snapshot.h"
#include "schema/vote_body.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BENCH_VOTES      5
#define BENCH_THRESHOLD  3
#define BENCH_POOL       64
#define BENCH_NOTE_BYTES 745
#define BENCH_NAMESPACE  "bench-net"
#define BENCH_EPOCH      29453762ull

struct note_pool {
	uint8_t notes[BENCH_POOL][BENCH_NOTE_BYTES];
	uint8_t digests[BENCH_POOL][32];
};

struct bench_votes {
	size_t records;
	struct vote votes[BENCH_VOTES];
	struct vote_body bodies[BENCH_VOTES];
	struct consensus_vote inputs[BENCH_VOTES];
	struct buffer texts[BENCH_VOTES];
};

static int fail(const char *what, int rc)
{
	fprintf(stderr, "bench_consensus: %s: %s\n", what, dirauth_strerror(rc));
	return 1;
}

static void pool_build(struct note_pool *pool)
{
	for (size_t i = 0; i < BENCH_POOL; i++) {
		memset(pool->notes[i], 'a' + (int)(i % 26), BENCH_NOTE_BYTES);
		int n = snprintf((char *)pool->notes[i], 64, "dirauth registration v1\nbench note %zu\n", i);
		pool->notes[i][n] = 'x';
		pool->notes[i][BENCH_NOTE_BYTES - 1] = '\n';
		crypto_sha256(pool->notes[i], BENCH_NOTE_BYTES, pool->digests[i]);
	}
}

/* The note of (service number, sequence): the generator and the callback agree on it. */
static size_t note_index(uint64_t service, uint64_t sequence)
{
	return (size_t)((service * 7 + sequence) % BENCH_POOL);
}

static void service_id(uint64_t service, uint8_t id[SERVICE_ID_SIZE])
{
	memset(id, 0x5c, SERVICE_ID_SIZE);
	for (int b = 0; b < 8; b++)
		id[b] = (uint8_t)(service >> (56 - 8 * b));
}

static uint64_t service_number(const uint8_t id[SERVICE_ID_SIZE])
{
	uint64_t service = 0;
	for (int b = 0; b < 8; b++)
		service = service << 8 | id[b];
	return service;
}

static int pool_note(void *context, const uint8_t id[SERVICE_ID_SIZE], uint64_t sequence,
                     const uint8_t digest[32], const uint8_t **note, size_t *note_len)
{
	const struct note_pool *pool = context;
	size_t index = note_index(service_number(id), sequence);
	if (memcmp(pool->digests[index], digest, 32) != 0)
		return DIRAUTH_ERR_NOT_FOUND;
	*note = pool->notes[index];
	*note_len = BENCH_NOTE_BYTES;
	return 0;
}

static void votes_free(struct bench_votes *v)
{
	for (size_t i = 0; i < BENCH_VOTES; i++) {
		free(v->bodies[i].records);
		buffer_free(&v->texts[i]);
	}
	memset(v, 0, sizeof(*v));
}

static int votes_build(struct bench_votes *v, size_t records, const struct note_pool *pool)
{
	memset(v, 0, sizeof(*v));
	v->records = records;
	for (size_t i = 0; i < BENCH_VOTES; i++) {
		struct vote_body *body = &v->bodies[i];
		body->records = calloc(records, sizeof(*body->records));
		if (!body->records)
			return fail("allocating votes", DIRAUTH_ERR_NOMEM);
		strcpy(body->namespace_name, BENCH_NAMESPACE);
		body->epoch = BENCH_EPOCH;
		snprintf(body->authority, sizeof(body->authority), "authority-%zu.bench", i + 1);
		size_t count = 0;
		for (uint64_t s = 0; s < records; s++) {
			if (i == 4 && s % 7 == 0)
				continue;
			struct vote_body_record *record = &body->records[count++];
			service_id(s, record->service_id);
			record->sequence = (i == 3 && s % 10 == 0) ? 1 : 2;
			memcpy(record->registration_sha256, pool->digests[note_index(s, record->sequence)],
			       32);
		}
		body->record_count = count;
		int rc = vote_body_encode(body, &v->texts[i]);
		if (rc)
			return fail("encoding a vote body", rc);
		struct vote *vote = &v->votes[i];
		strcpy(vote->namespace_name, BENCH_NAMESPACE);
		strcpy(vote->origin, "dirauth.bench/" BENCH_NAMESPACE);
		vote->epoch = BENCH_EPOCH;
		strcpy(vote->authority, body->authority);
		vote->record_count = count;
		crypto_sha256(v->texts[i].data, v->texts[i].len, vote->body_sha256);
		struct consensus_vote *input = &v->inputs[i];
		input->vote = vote;
		input->body = body;
		input->previous_epoch = BENCH_EPOCH - 1;
		memset(input->previous, 0x11, 32);
		input->method_count = 1;
		input->methods[0] = CONSENSUS_METHOD_REGISTRATIONS;
	}
	return 0;
}

static void params_for(struct consensus_params *p, size_t records)
{
	memset(p, 0, sizeof(*p));
	p->namespace_name = BENCH_NAMESPACE;
	p->origin = "dirauth.bench/" BENCH_NAMESPACE;
	p->epoch = BENCH_EPOCH;
	p->times.valid_after = BENCH_EPOCH * 60;
	p->times.fresh_until = p->times.valid_after + 60;
	p->times.valid_until = p->times.valid_after + 3600;
	p->threshold = BENCH_THRESHOLD;
	p->authorities = BENCH_VOTES;
	p->max_records = records;
	p->max_body_bytes = (size_t)1 << 31;
}

static int bench_size(size_t records, int runs, const struct note_pool *pool)
{
	struct bench_votes v;
	struct consensus_params params;
	double best_parse = 1e30, best_consensus = 1e30, best_anchor = 1e30;
	size_t chosen = 0, body_len = 0;
	int rc = votes_build(&v, records, pool);
	if (rc)
		goto cleanup;
	params_for(&params, records);
	for (int run = 0; run < runs; run++) {
		/* The five bodies parsed from their text. */
		struct vote_body *parsed[BENCH_VOTES] = {0};
		double start = harness_now();
		for (size_t i = 0; i < BENCH_VOTES && rc == 0; i++)
			rc = consensus_vote_body_load(&v.votes[i], v.texts[i].data, v.texts[i].len, records,
			                              &parsed[i]);
		double parse = harness_now() - start;
		for (size_t i = 0; i < BENCH_VOTES; i++)
			vote_body_free(parsed[i]);
		if (rc) {
			rc = fail("loading a vote body", rc);
			goto cleanup;
		}

		struct consensus_result result;
		struct consensus_failure failure;
		start = harness_now();
		rc = consensus_compute(&params, v.inputs, BENCH_VOTES, pool_note, (void *)pool, &result,
		                       &failure);
		double consensus = harness_now() - start;
		if (rc) {
			char detail[512];
			consensus_failure_describe(&failure, detail, sizeof(detail));
			fprintf(stderr, "bench_consensus: %s\n", detail);
			rc = 1;
			goto cleanup;
		}

		/* The anchor: the same records (read back from the body the rule wrote, which keeps no
		 * list of them), encoded and hashed as a single authority publishes. */
		struct snapshot_body *published = NULL;
		if ((rc = snapshot_body_parse(result.body.data, result.body.len, records, &published)) != 0) {
			consensus_result_clear(&result);
			rc = fail("reading the body back", rc);
			goto cleanup;
		}
		const struct snapshot_record *list = published->records;
		struct buffer body;
		merkle_hash root;
		buffer_init(&body);
		start = harness_now();
		rc = snapshot_body_encode(BENCH_NAMESPACE, BENCH_EPOCH, list, result.record_count, &body);
		if (rc == 0)
			rc = snapshot_records_root(list, result.record_count, root);
		double anchor = harness_now() - start;
		if (rc == 0 &&
		    (body.len != result.body.len || memcmp(body.data, result.body.data, body.len) != 0 ||
		     memcmp(root, result.header.records_root, sizeof(root)) != 0))
			rc = DIRAUTH_ERR_MISMATCH;
		chosen = result.record_count;
		body_len = result.body.len;
		buffer_free(&body);
		snapshot_body_free(published);
		consensus_result_clear(&result);
		if (rc) {
			rc = fail("the anchor", rc);
			goto cleanup;
		}
		if (parse < best_parse)
			best_parse = parse;
		if (consensus < best_consensus)
			best_consensus = consensus;
		if (anchor < best_anchor)
			best_anchor = anchor;
	}
	printf("%-10zu %-8zu %12.3f %14.3f %12.3f %8.2f %10.1f\n", records, chosen, best_parse * 1e3,
	       best_consensus * 1e3, best_anchor * 1e3, best_consensus / best_anchor, (double)body_len / 1e6);
cleanup:
	votes_free(&v);
	return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	size_t sizes[2] = {100000, 1000000}, size_count = 2;
	int runs = 3;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--records") == 0 && i + 1 < argc) {
			char *end;
			unsigned long long value = strtoull(argv[++i], &end, 10);
			if (*end || value == 0 || value > 10000000) {
				fprintf(stderr, "bench_consensus: --records takes 1..10000000\n");
				return 2;
			}
			sizes[0] = (size_t)value;
			size_count = 1;
		} else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
			runs = atoi(argv[++i]);
			if (runs < 1 || runs > 100) {
				fprintf(stderr, "bench_consensus: --runs takes 1..100\n");
				return 2;
			}
		} else {
			fprintf(stderr, "usage: bench_consensus [--records N] [--runs R]\n");
			return 2;
		}
	}
	struct note_pool *pool = malloc(sizeof(*pool));
	if (!pool)
		return fail("allocating the note pool", DIRAUTH_ERR_NOMEM);
	pool_build(pool);
	printf("consensus method 1, %d votes, k = %d, fastest of %d runs (times in ms)\n", BENCH_VOTES,
	       BENCH_THRESHOLD, runs);
	printf("%-10s %-8s %12s %14s %12s %8s %10s\n", "records", "chosen", "parse votes", "consensus",
	       "anchor", "ratio", "body MB");
	int status = 0;
	for (size_t i = 0; i < size_count && status == 0; i++)
		status = bench_size(sizes[i], runs, pool);
	printf("anchor: snapshot_body_encode + snapshot_records_root over the chosen records alone;\n"
	       "ratio: consensus / anchor. consensus includes the merge, one SHA-256 per note, the body,\n"
	       "its Merkle root and digest, and the header.\n");
	free(pool);
	return status;
}
