/*
 * fuzz_vote_delta.c: vote_delta_apply() of arbitrary bytes to a small fixed base (three records,
 * two health entries and a revocation), under small and large bounds. What it accepts must be a
 * body within the bounds, and the delta from the base to it must be exactly the input: one
 * spelling per delta.
 */
#include "schema/vote_delta.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct vote_body_record base_records[3];
static struct vote_body_health base_health[2];
static struct vote_body_revocation base_revocations[1];
static struct vote_body base;

/* Service i is i * 0x11 repeated, endpoint i is 0xc0 + i, digests 0xa0 + i (records), 0xe0 + i
 * (health), 0xf0 + i (revocations): the seeds of tests/fuzz/corpus/vote_delta/ name them. */
static void base_build(void)
{
	strcpy(base.namespace_name, "example-net");
	strcpy(base.authority, "authority-1.example");
	base.epoch = 1;
	for (unsigned i = 0; i < 3; i++) {
		memset(base_records[i].service_id, (int)(0x11 * (i + 1)), SERVICE_ID_SIZE);
		base_records[i].sequence = i + 1;
		memset(base_records[i].registration_sha256, (int)(0xa1 + i), 32);
	}
	for (unsigned i = 0; i < 2; i++) {
		memset(base_health[i].service_id, (int)(0x11 * (i + 1)), SERVICE_ID_SIZE);
		memset(base_health[i].endpoint_id, (int)(0xc1 + i), ENDPOINT_ID_SIZE);
		base_health[i].issued_at = 100 + i;
		base_health[i].sequence = 1;
		memset(base_health[i].statement_sha256, (int)(0xe1 + i), 32);
	}
	memset(base_revocations[0].service_id, 0x33, SERVICE_ID_SIZE);
	memset(base_revocations[0].revocation_sha256, 0xf3, 32);
	base.records = base_records;
	base.record_count = 3;
	base.health = base_health;
	base.health_count = 2;
	base.revocations = base_revocations;
	base.revocation_count = 1;
}

static void check_limits(const uint8_t *data, size_t size, const struct vote_body_limits *limits)
{
	struct vote_body *body = NULL;
	if (vote_delta_apply(&base, data, size, limits, "example-net", 2, "authority-2.example", &body) !=
	    0) {
		if (body)
			abort();
		return;
	}
	if (body->record_count > limits->max_records || body->health_count > limits->max_health ||
	    body->revocation_count > limits->max_revocations || body->epoch != 2)
		abort();
	uint8_t digest[32];
	struct buffer text, again;
	buffer_init(&text);
	buffer_init(&again);
	if (vote_body_encode(body, &text) != 0 || vote_delta_base(data, size, digest) != 0 ||
	    vote_delta_encode(&base, body, digest, &again) != 0 || again.len != size ||
	    memcmp(again.data, data, size) != 0)
		abort();
	buffer_free(&text);
	buffer_free(&again);
	vote_body_free(body);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!base.records)
		base_build();
	const struct vote_body_limits small = {3, 3, 2}, large = {1000000, 1000000, 100000};
	check_limits(data, size, &small);
	check_limits(data, size, &large);
	return 0;
}
