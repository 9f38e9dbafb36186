/*
 * fuzz_snapshot_diff.c: snapshot_diff_apply() of arbitrary bytes to a small fixed method-2 base
 * (three records, two health entries, two revocations), under small and large bounds, and
 * snapshot_diff_parse_head() of the same bytes. A refused diff must leave the output as it was;
 * what is accepted must be a body within the bounds whose size and SHA-256 are the head's, and the
 * diff from the base to it must be exactly the input: one spelling per diff. The notes are short
 * stand-ins: the diff neither reads nor verifies them. The seeds in tests/fuzz/corpus/snapshot_diff/
 * are diffs from this base (DIRAUTH_FUZZ_WRITE_SEEDS=<dir> writes them).
 */
#include "crypto/crypto.h"
#include "schema/snapshot.h"
#include "schema/snapshot_diff.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static struct buffer base;

static const uint8_t note_a[] = "note a\n", note_b[] = "note b\n", note_c[] = "note c\n";

/* Service i is 0x11 * (i + 1) repeated, endpoint j of it 0xc0 + j. */
static void entries(size_t records, const uint8_t *const *notes, struct snapshot_record *record_out,
                    struct snapshot_health *health_out, struct snapshot_revocation *revocation_out)
{
	for (size_t i = 0; i < records; i++) {
		memset(record_out[i].service_id, (int)(0x11 * (i + 1)), SERVICE_ID_SIZE);
		record_out[i].note = notes[i];
		record_out[i].note_len = 7;
	}
	memset(health_out, 0, 2 * sizeof(*health_out));
	for (size_t j = 0; j < 2; j++) {
		memset(health_out[j].service_id, 0x11, SERVICE_ID_SIZE);
		memset(health_out[j].endpoint_id, (int)(0xc0 + j), ENDPOINT_ID_SIZE);
		health_out[j].health_class = j ? HEALTH_DRAINING : HEALTH_HEALTHY;
		health_out[j].signer = HEALTH_SIGNER_PROVIDER;
		health_out[j].note = notes[j];
		health_out[j].note_len = 7;
	}
	memset(revocation_out, 0, 2 * sizeof(*revocation_out));
	for (size_t k = 0; k < 2; k++) {
		memset(revocation_out[k].service_id, 0x44, SERVICE_ID_SIZE);
		revocation_out[k].has_endpoint = (int)k;
		memset(revocation_out[k].endpoint_id, k ? 0xd0 : 0, ENDPOINT_ID_SIZE);
		revocation_out[k].since = 5;
		revocation_out[k].note = notes[2 - k];
		revocation_out[k].note_len = 7;
	}
}

static int body_build(size_t records, const uint8_t *const *notes, size_t health, size_t revocations,
                      uint64_t epoch, struct buffer *out)
{
	struct snapshot_record r[3];
	struct snapshot_health h[2];
	struct snapshot_revocation v[2];
	entries(records, notes, r, h, v);
	struct snapshot_sections sections = {h, health, v, revocations};
	return snapshot_body_encode_sections("example-net", epoch, r, records, &sections, out);
}

/* The seeds: diffs from the base to a few targets, written to dir. */
static void seeds_write(const char *dir)
{
	static const uint8_t *const changed[] = {note_c, note_a, note_b};
	static const uint8_t *const same[] = {note_a, note_b, note_c};
	struct {
		const char *name;
		size_t records, health, revocations;
		const uint8_t *const *notes;
	} targets[] = {
	    {"identical", 3, 2, 2, same},
	    {"every-note-changed", 3, 2, 2, changed},
	    {"records-only", 2, 0, 0, same},
	    {"empty", 0, 0, 0, same},
	};
	for (size_t t = 0; t < sizeof(targets) / sizeof(targets[0]); t++) {
		struct buffer target, diff;
		buffer_init(&target);
		buffer_init(&diff);
		const struct snapshot_body_limits limits = {10, 10, 10};
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s.txt", dir, targets[t].name);
		FILE *file = NULL;
		if (body_build(targets[t].records, targets[t].notes, targets[t].health,
		               targets[t].revocations, 8, &target) != 0 ||
		    snapshot_diff_build(base.data, base.len, target.data, target.len, &limits, &diff) != 0 ||
		    !(file = fopen(path, "wb")) || fwrite(diff.data, 1, diff.len, file) != diff.len)
			abort();
		fclose(file);
		buffer_free(&target);
		buffer_free(&diff);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	static const uint8_t *const notes[] = {note_a, note_b, note_c};
	if (body_build(3, notes, 2, 2, 7, &base) != 0)
		abort();
	const char *dir = getenv("DIRAUTH_FUZZ_WRITE_SEEDS");
	if (dir)
		seeds_write(dir);
	return 0;
}

static void check_limits(const uint8_t *data, size_t size, const struct snapshot_body_limits *limits)
{
	struct buffer out, again;
	buffer_init(&out);
	buffer_init(&again);
	if (buffer_append(&out, "x", 1) != 0)
		abort();
	if (snapshot_diff_apply(base.data, base.len, data, size, limits, &out) != 0) {
		if (out.len != 1 || out.data[0] != 'x')
			abort(); /* a refusal hands nothing out */
		buffer_free(&out);
		return;
	}
	struct snapshot_diff_head head;
	struct snapshot_body *parsed = NULL;
	uint8_t digest[32];
	const uint8_t *target = out.data + 1;
	size_t target_len = out.len - 1;
	if (snapshot_diff_parse_head(data, size, &head) != 0 || head.target_size != target_len ||
	    crypto_sha256(target, target_len, digest) != 0 || memcmp(digest, head.target_sha256, 32) != 0 ||
	    snapshot_body_parse_sections(target, target_len, limits, &parsed) != 0 ||
	    parsed->record_count != head.record_count ||
	    snapshot_diff_build(base.data, base.len, target, target_len, limits, &again) != 0 ||
	    again.len != size || memcmp(again.data, data, size) != 0)
		abort();
	snapshot_body_free(parsed);
	buffer_free(&again);
	buffer_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct snapshot_diff_head head;
	(void)snapshot_diff_parse_head(data, size, &head);
	const struct snapshot_body_limits small = {3, 2, 2}, large = {1000000, 1000000, 100000};
	check_limits(data, size, &small);
	check_limits(data, size, &large);
	return 0;
}
