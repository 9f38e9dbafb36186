/*
 * check_proof_routes.c: the log's proofs over real HTTP on loopback (http_fixture.h: a real
 * signer, store, scheduler and HTTP server in the test process), as a client checks them.
 *
 * 15 published snapshots of mix, caught up into the log in two steps (checkpoints of 10 and 15
 * entries), and a 16th published but not yet appended. The proof file of an epoch, against the
 * latest checkpoint or the one of a size, parses (tlog_proof_parse), carries the header's signed
 * note as served by the snapshot route, and verifies with tlog/'s functions against the log key
 * and the cosigner read from their key files; a changed hash, index, leaf, checkpoint or root
 * fails. Consistency proofs between sizes verify against the checkpoints' roots and the root of
 * an unsigned old size computed here, and fail when tampered. Every refusal has its status and
 * code, and nothing that moves is cached as immutable.
 */
#include "http_fixture.h"

#include "schema/checkpoint.h"
#include "crypto/merkle.h"
#include "server/http/routes.h"
#include "server/publish/publish.h"
#include "server/store/snapshots.h"
#include "server/store/tlog_table.h"
#include "server/tlog/translog.h"
#include "signer/key.h"
#include "tlog/consistency.h"
#include "tlog/policy.h"
#include "tlog/proof.h"

#define FIRST_EPOCH 11

/* The note text of the published header of epoch: the log's leaf. */
static void leaf_of(struct fixture *f, uint64_t epoch, struct buffer *leaf)
{
	struct buffer note;
	struct note *parsed = NULL;
	buffer_init(&note);
	ck_assert_int_eq(store_snapshot_get(f->store, "mix", epoch, &note, NULL), 0);
	ck_assert_int_eq(note_parse(note.data, note.len, &parsed), 0);
	buffer_reset(leaf);
	ck_assert_int_eq(buffer_append(leaf, parsed->text, parsed->text_len), 0);
	note_free(parsed);
	buffer_free(&note);
}

/* The RFC 6962 root of the first size leaves, from the published headers. */
static void root_of(struct fixture *f, uint64_t size, merkle_hash out)
{
	merkle_hash *hashes = calloc(size, sizeof *hashes);
	struct buffer leaf;
	buffer_init(&leaf);
	for (uint64_t i = 0; i < size; i++) {
		leaf_of(f, FIRST_EPOCH + i, &leaf);
		ck_assert_int_eq(merkle_leaf_hash(leaf.data, leaf.len, hashes[i]), 0);
	}
	ck_assert_int_eq(merkle_root(hashes, size, out), 0);
	buffer_free(&leaf);
	free(hashes);
}

static void get(struct fixture *f, const char *path, struct response *r)
{
	request(f, "GET", path, NULL, 0, 0, NULL, r);
}

static void expect_path(struct fixture *f, const char *path, long status, const char *code)
{
	struct response r;
	get(f, path, &r);
	expect_error(&r, status, code);
	response_free(&r);
}

/* GETs a proof file, checks its headers and parses it. */
static struct tlog_proof *get_proof(struct fixture *f, const char *path, struct buffer *bytes)
{
	struct response r;
	struct tlog_proof *proof = NULL;
	get(f, path, &r);
	ck_assert_msg(r.status == 200, "%s: %ld %s", path, r.status, r.body.data ? (char *)r.body.data : "");
	ck_assert_str_eq(header(&r, "Content-Type"), "text/plain; charset=utf-8");
	ck_assert_str_eq(header(&r, "Cache-Control"), "public, max-age=5");
	ck_assert_int_eq(tlog_proof_parse(r.body.data, r.body.len, &proof), 0);
	if (bytes) {
		buffer_reset(bytes);
		ck_assert_int_eq(buffer_append(bytes, r.body.data, r.body.len), 0);
	}
	response_free(&r);
	return proof;
}

/* Verifies a proof file of epoch: the checkpoint, the inclusion of the header's text, and the
 * extra being the signed header note the snapshot route serves. */
static void expect_proof_verifies(struct fixture *f, const struct fixture_log_keys *k,
                                  const struct tlog_proof *proof, uint64_t epoch, uint64_t tree_size)
{
	struct buffer leaf;
	merkle_hash leaf_hash;
	size_t cosigned = 0;
	buffer_init(&leaf);
	leaf_of(f, epoch, &leaf);
	ck_assert_int_eq(merkle_leaf_hash(leaf.data, leaf.len, leaf_hash), 0);
	ck_assert_uint_eq(proof->checkpoint.tree_size, tree_size);
	ck_assert_uint_eq(proof->index, epoch - FIRST_EPOCH);
	ck_assert_int_eq(tlog_proof_verify(proof, &k->policy, leaf_hash, &cosigned), 0);
	ck_assert_uint_eq(cosigned, 1);

	char path[128];
	struct response r;
	snprintf(path, sizeof path, "/v1/mix/snapshots/%llu", (unsigned long long)epoch);
	get(f, path, &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_uint_eq(proof->extra_len, r.body.len);
	ck_assert_mem_eq(proof->extra, r.body.data, r.body.len);
	response_free(&r);
	buffer_free(&leaf);
}

START_TEST(test_inclusion_proofs_over_http)
{
	struct fixture f;
	struct fixture_log_keys k;
	struct buffer bytes, leaf;
	fixture_open(&f, 0);
	fixture_log_keys_load(&f, &k);
	buffer_init(&bytes);
	buffer_init(&leaf);

	/* Nothing published, nothing checkpointed. */
	expect_path(&f, "/v1/mix/log/proof/11", 404, "no_checkpoint");
	for (uint64_t e = FIRST_EPOCH; e < FIRST_EPOCH + 10; e++)
		fixture_publish_epoch(&f, e);
	fixture_catch_up(&f, 10);
	for (uint64_t e = FIRST_EPOCH + 10; e < FIRST_EPOCH + 15; e++)
		fixture_publish_epoch(&f, e);
	fixture_catch_up(&f, 15);
	fixture_publish_epoch(&f, FIRST_EPOCH + 15); /* published, not in the log yet */

	/* Against the latest checkpoint, every entry verifies, the first and last included. */
	for (uint64_t e = FIRST_EPOCH; e < FIRST_EPOCH + 15; e++) {
		char path[128];
		snprintf(path, sizeof path, "/v1/mix/log/proof/%llu", (unsigned long long)e);
		struct tlog_proof *proof = get_proof(&f, path, NULL);
		expect_proof_verifies(&f, &k, proof, e, 15);
		tlog_proof_free(proof);
	}
	/* Against the checkpoint of size 10, an entry inside it. */
	struct tlog_proof *proof = get_proof(&f, "/v1/mix/log/proof/15/10", &bytes);
	expect_proof_verifies(&f, &k, proof, 15, 10);
	/* The file is the one tlog_proof_encode writes for these parts. */
	struct buffer again;
	buffer_init(&again);
	ck_assert_int_eq(tlog_proof_encode(proof->index, proof->path, proof->path_len, proof->extra,
	                                   proof->extra_len, proof->checkpoint_note,
	                                   proof->checkpoint_note_len, &again),
	                 0);
	ck_assert_uint_eq(again.len, bytes.len);
	ck_assert_mem_eq(again.data, bytes.data, bytes.len);
	buffer_free(&again);
	tlog_proof_free(proof);

	/* Tampered, each part fails. */
	proof = get_proof(&f, "/v1/mix/log/proof/20", NULL);
	merkle_hash leaf_hash, other_hash;
	leaf_of(&f, 20, &leaf);
	ck_assert_int_eq(merkle_leaf_hash(leaf.data, leaf.len, leaf_hash), 0);
	leaf_of(&f, 21, &leaf);
	ck_assert_int_eq(merkle_leaf_hash(leaf.data, leaf.len, other_hash), 0);
	ck_assert_int_eq(tlog_proof_verify(proof, &k.policy, leaf_hash, NULL), 0);
	ck_assert_int_eq(tlog_proof_verify(proof, &k.policy, other_hash, NULL), DIRAUTH_ERR_PROOF);
	for (size_t i = 0; i < proof->path_len; i++) {
		proof->path[i][i % MERKLE_HASH_SIZE] ^= 0x01;
		ck_assert_int_eq(tlog_proof_verify(proof, &k.policy, leaf_hash, NULL), DIRAUTH_ERR_PROOF);
		proof->path[i][i % MERKLE_HASH_SIZE] ^= 0x01;
	}
	proof->index++;
	ck_assert_int_eq(tlog_proof_verify(proof, &k.policy, leaf_hash, NULL), DIRAUTH_ERR_PROOF);
	proof->index--;
	proof->path_len--;
	ck_assert_int_eq(tlog_proof_verify(proof, &k.policy, leaf_hash, NULL), DIRAUTH_ERR_PROOF);
	tlog_proof_free(proof);
	/* A checkpoint whose size or root was changed is no longer the one signed. */
	proof = get_proof(&f, "/v1/mix/log/proof/20", &bytes);
	tlog_proof_free(proof);
	const char *size_line = strstr((const char *)bytes.data, "\n15\n");
	ck_assert_ptr_nonnull(size_line);
	bytes.data[size_line - (const char *)bytes.data + 2] = '6';
	ck_assert_int_eq(tlog_proof_parse(bytes.data, bytes.len, &proof), 0);
	ck_assert_int_eq(tlog_proof_verify(proof, &k.policy, leaf_hash, NULL), DIRAUTH_ERR_SIGNATURE);
	tlog_proof_free(proof);
	/* Another log key, or too few cosigners for the policy. */
	proof = get_proof(&f, "/v1/mix/log/proof/20", NULL);
	struct tlog_policy strict = k.policy;
	strict.log_key = &f.provider.verifier;
	ck_assert_int_ne(tlog_proof_verify(proof, &strict, leaf_hash, NULL), 0);
	struct note_verifier two[2] = {k.cosigner, k.cosigner};
	ck_assert_int_eq(
	    cosignature_verifier_from_ed25519("other-witness.example", f.other.verifier.public_key, &two[1]),
	    0);
	strict = k.policy;
	strict.cosigners = two;
	strict.cosigner_count = 2;
	strict.quorum = 2;
	ck_assert_int_eq(tlog_proof_verify(proof, &strict, leaf_hash, NULL), DIRAUTH_ERR_THRESHOLD);
	tlog_proof_free(proof);

	/* Refusals. */
	expect_path(&f, "/v1/mix/log/proof/26", 404, "epoch_not_in_log"); /* published, not appended */
	expect_path(&f, "/v1/mix/log/proof/10", 404, "epoch_not_in_log");
	expect_path(&f, "/v1/mix/log/proof/9999", 404, "epoch_not_in_log");
	expect_path(&f, "/v1/mix/log/proof/18446744073709551615", 404, "epoch_not_in_log");
	expect_path(&f, "/v1/mix/log/proof/21/10", 404, "epoch_not_in_tree");
	expect_path(&f, "/v1/mix/log/proof/15/11", 404, "size_not_checkpointed");
	expect_path(&f, "/v1/mix/log/proof/15/16", 404, "size_not_checkpointed");
	const char *malformed[] = {
	    "/v1/mix/log/proof/",     "/v1/mix/log/proof/015",    "/v1/mix/log/proof/-1",
	    "/v1/mix/log/proof/1e3",  "/v1/mix/log/proof/15/0",   "/v1/mix/log/proof/15/010",
	    "/v1/mix/log/proof/15/",  "/v1/mix/log/proof/+15",    "/v1/mix/log/proof/18446744073709551616",
	    "/v1/mix/log/proof/0x0f", "/v1/mix/log/proof/15/10a", "/v1/mix/log/proof/111111111111111111111",
	};
	for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++)
		expect_path(&f, malformed[i], 400, "malformed_proof_path");
	expect_path(&f, "/v1/mix/log/proof/15/10/", 404, "not_found");
	expect_path(&f, "/v1/mix/log/proof/15/10/1", 404, "not_found");
	expect_path(&f, "/v1/mix/log/proof", 404, "not_found");
	expect_path(&f, "/v1/mix/log/proof/%31%35", 404, "not_found");
	expect_path(&f, "/v1/mail/log/proof/11", 404, "no_checkpoint"); /* a namespace without a log */
	expect_path(&f, "/v1/nowhere/log/proof/11", 404, "not_found");

	struct response r;
	request(&f, "POST", "/v1/mix/log/proof/15", (const uint8_t *)"x", 1, 0, NULL, &r);
	expect_error(&r, 405, "method_not_allowed");
	ck_assert_str_eq(header(&r, "Allow"), "GET, HEAD");
	response_free(&r);
	request(&f, "HEAD", "/v1/mix/log/proof/15", NULL, 0, 0, NULL, &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_uint_eq(r.body.len, 0);
	response_free(&r);

	buffer_free(&bytes);
	buffer_free(&leaf);
	fixture_close(&f);
}
END_TEST

/* The body of a 200 GET of path. */
static void get_bytes(struct fixture *f, const char *path, struct buffer *out)
{
	struct response r;
	get(f, path, &r);
	ck_assert_msg(r.status == 200, "%s: %ld", path, r.status);
	buffer_reset(out);
	ck_assert_int_eq(buffer_append(out, r.body.data, r.body.len), 0);
	response_free(&r);
}

static uint64_t kept_hits(struct fixture *f)
{
	struct answer_cache_statistics statistics;
	answer_cache_statistics(f->http->log_answers, &statistics);
	return statistics.hits;
}

/* Answers are kept between requests (answer_cache.h), and a kept proof file is served only while
 * the checkpoint note it carries is the one served: a new checkpoint, or the same one with one
 * more cosignature, makes the file anew. */
START_TEST(test_kept_proofs_follow_the_checkpoint)
{
	struct fixture f;
	struct fixture_log_keys k;
	struct buffer first, again, note, extended;
	fixture_open(&f, 0);
	fixture_log_keys_load(&f, &k);
	buffer_init(&first);
	buffer_init(&again);
	buffer_init(&note);
	buffer_init(&extended);
	for (uint64_t e = FIRST_EPOCH; e < FIRST_EPOCH + 10; e++)
		fixture_publish_epoch(&f, e);
	fixture_catch_up(&f, 10);

	/* The second request of a path is the kept answer, byte for byte. */
	get_bytes(&f, "/v1/mix/log/proof/15", &first);
	uint64_t hits = kept_hits(&f);
	get_bytes(&f, "/v1/mix/log/proof/15", &again);
	ck_assert_uint_eq(kept_hits(&f), hits + 1);
	ck_assert_uint_eq(again.len, first.len);
	ck_assert_mem_eq(again.data, first.data, first.len);
	get_bytes(&f, "/v1/mix/log/consistency/4/10", &first);
	get_bytes(&f, "/v1/mix/log/consistency/4/10", &again);
	ck_assert_uint_eq(kept_hits(&f), hits + 2);
	ck_assert_uint_eq(again.len, first.len);
	ck_assert_mem_eq(again.data, first.data, first.len);

	/* One more cosignature on the same checkpoint: the file carries the note as it is now. */
	struct note *parsed = NULL;
	ck_assert_int_eq(store_log_checkpoint(f.store, "mix", &note, NULL), 0);
	ck_assert_int_eq(note_parse(note.data, note.len, &parsed), 0);
	struct note_signature signatures[8];
	ck_assert_uint_lt(parsed->signature_count, 8);
	memcpy(signatures, parsed->signatures, parsed->signature_count * sizeof signatures[0]);
	signatures[parsed->signature_count] = parsed->signatures[parsed->signature_count - 1];
	snprintf(signatures[parsed->signature_count].name, sizeof signatures[0].name, "%s",
	         "another-witness.example");
	ck_assert_int_eq(
	    note_format(parsed->text, parsed->text_len, signatures, parsed->signature_count + 1, &extended),
	    0);
	note_free(parsed);
	ck_assert_int_eq(store_log_checkpoint_put(f.store, "mix", extended.data, extended.len), 0);
	struct tlog_proof *proof = get_proof(&f, "/v1/mix/log/proof/15", NULL);
	ck_assert_uint_eq(proof->checkpoint_note_len, extended.len);
	ck_assert_mem_eq(proof->checkpoint_note, extended.data, extended.len);
	expect_proof_verifies(&f, &k, proof, 15, 10);
	tlog_proof_free(proof);

	/* A new checkpoint: the file is against it. */
	for (uint64_t e = FIRST_EPOCH + 10; e < FIRST_EPOCH + 15; e++)
		fixture_publish_epoch(&f, e);
	fixture_catch_up(&f, 15);
	proof = get_proof(&f, "/v1/mix/log/proof/15", NULL);
	expect_proof_verifies(&f, &k, proof, 15, 15);
	tlog_proof_free(proof);
	/* The one of size 10 is still that of size 10. */
	proof = get_proof(&f, "/v1/mix/log/proof/15/10", NULL);
	expect_proof_verifies(&f, &k, proof, 15, 10);
	tlog_proof_free(proof);

	buffer_free(&first);
	buffer_free(&again);
	buffer_free(&note);
	buffer_free(&extended);
	fixture_close(&f);
}
END_TEST

static struct answer_cache_statistics kept_now(struct fixture *f)
{
	struct answer_cache_statistics statistics;
	answer_cache_statistics(f->http->log_answers, &statistics);
	return statistics;
}

/* The kept answers stay within http.log_cache_bytes, the least recently used dropped first, and
 * with 0 none is kept while every answer is still made. */
START_TEST(test_kept_answers_are_bounded)
{
	struct fixture f;
	struct buffer bytes;
	buffer_init(&bytes);
	fixture_open_with(&f, 0, "http: { threads: 2, log_cache_bytes: 4000 }");
	for (uint64_t e = FIRST_EPOCH; e < FIRST_EPOCH + 10; e++)
		fixture_publish_epoch(&f, e);
	fixture_catch_up(&f, 10);

	/* Proof files of about 1.3 KB each, counted with their key, their tag (the store's log
	 * generation) and ANSWER_CACHE_ENTRY_OVERHEAD: two fit in 4,000 bytes, three do not. */
	get_bytes(&f, "/v1/mix/log/proof/11", &bytes);
	struct answer_cache_statistics one = kept_now(&f);
	ck_assert_uint_eq(one.entries, 1);
	ck_assert_uint_gt(one.bytes, bytes.len + ANSWER_CACHE_ENTRY_OVERHEAD);
	ck_assert_uint_le(2 * one.bytes + 200, 4000);
	ck_assert_uint_gt(3 * (one.bytes - 200), 4000);
	get_bytes(&f, "/v1/mix/log/proof/12", &bytes);
	get_bytes(&f, "/v1/mix/log/proof/11", &bytes); /* a hit: 11 is now the most recent */
	struct answer_cache_statistics before = kept_now(&f);
	ck_assert_uint_eq(before.entries, 2);
	get_bytes(&f, "/v1/mix/log/proof/13", &bytes); /* drops 12, the least recently used */
	struct answer_cache_statistics after = kept_now(&f);
	ck_assert_uint_eq(after.entries, 2);
	ck_assert_uint_le(after.bytes, 4000);
	ck_assert_uint_eq(after.evictions, before.evictions + 1);
	get_bytes(&f, "/v1/mix/log/proof/11", &bytes);
	ck_assert_uint_eq(kept_now(&f).hits, after.hits + 1);
	get_bytes(&f, "/v1/mix/log/proof/12", &bytes);
	ck_assert_uint_eq(kept_now(&f).hits, after.hits + 1);
	ck_assert_uint_eq(kept_now(&f).misses, after.misses + 1);
	/* An answer larger than the bound is served and not kept: nothing is dropped for it. */
	struct answer_cache_statistics full = kept_now(&f);
	get_bytes(&f, "/v1/mix/log/tile/entries/000.p/10", &bytes);
	ck_assert_uint_eq(bytes.len, 4120);
	ck_assert_uint_eq(kept_now(&f).entries, full.entries);
	ck_assert_uint_eq(kept_now(&f).bytes, full.bytes);
	ck_assert_uint_eq(kept_now(&f).evictions, full.evictions);
	fixture_close(&f);

	/* With 0, nothing is kept and the answers are those made each time. */
	fixture_open_with(&f, 0, "http: { threads: 2, log_cache_bytes: 0 }");
	for (uint64_t e = FIRST_EPOCH; e < FIRST_EPOCH + 10; e++)
		fixture_publish_epoch(&f, e);
	fixture_catch_up(&f, 10);
	struct buffer again;
	buffer_init(&again);
	get_bytes(&f, "/v1/mix/log/proof/11", &bytes);
	get_bytes(&f, "/v1/mix/log/proof/11", &again);
	ck_assert_uint_eq(again.len, bytes.len);
	ck_assert_mem_eq(again.data, bytes.data, bytes.len);
	get_bytes(&f, "/v1/mix/log/tile/0/000.p/10", &bytes);
	ck_assert_uint_eq(kept_now(&f).entries, 0);
	ck_assert_uint_eq(kept_now(&f).hits, 0);
	buffer_free(&again);
	buffer_free(&bytes);
	fixture_close(&f);
}
END_TEST

/* GETs a consistency proof and parses it. */
static size_t get_consistency(struct fixture *f, const char *path, merkle_hash proof[MERKLE_MAX_PROOF])
{
	struct response r;
	size_t len = 0;
	get(f, path, &r);
	ck_assert_msg(r.status == 200, "%s: %ld %s", path, r.status, r.body.data ? (char *)r.body.data : "");
	ck_assert_str_eq(header(&r, "Content-Type"), "text/plain; charset=utf-8");
	ck_assert_str_eq(header(&r, "Cache-Control"), "public, max-age=31536000, immutable");
	ck_assert_int_eq(tlog_consistency_parse(r.body.data, r.body.len, proof, &len), 0);
	ck_assert_uint_eq(r.body.len, len * TLOG_CONSISTENCY_LINE_BYTES);
	response_free(&r);
	return len;
}

START_TEST(test_consistency_proofs_over_http)
{
	struct fixture f;
	merkle_hash proof[MERKLE_MAX_PROOF];
	merkle_hash roots[16];
	fixture_open(&f, 0);

	expect_path(&f, "/v1/mix/log/consistency/1/1", 404, "no_checkpoint");
	for (uint64_t e = FIRST_EPOCH; e < FIRST_EPOCH + 10; e++)
		fixture_publish_epoch(&f, e);
	fixture_catch_up(&f, 10);
	for (uint64_t e = FIRST_EPOCH + 10; e < FIRST_EPOCH + 15; e++)
		fixture_publish_epoch(&f, e);
	fixture_catch_up(&f, 15);
	for (uint64_t s = 1; s <= 15; s++)
		root_of(&f, s, roots[s]);

	/* From every size, checkpointed or not, to each checkpointed size. */
	const uint64_t checkpointed[] = {10, 15};
	for (size_t c = 0; c < 2; c++) {
		uint64_t size = checkpointed[c];
		for (uint64_t old = 1; old <= size; old++) {
			char path[128];
			snprintf(path, sizeof path, "/v1/mix/log/consistency/%llu/%llu",
			         (unsigned long long)old, (unsigned long long)size);
			size_t len = get_consistency(&f, path, proof);
			ck_assert_int_eq(
			    merkle_consistency_verify(old, size, roots[old], roots[size], proof, len), 0);
			if (old == size)
				ck_assert_uint_eq(len, 0);
			for (size_t i = 0; i < len; i++) {
				proof[i][0] ^= 0x80;
				ck_assert_int_ne(
				    merkle_consistency_verify(old, size, roots[old], roots[size], proof, len),
				    0);
				proof[i][0] ^= 0x80;
			}
			if (len > 0)
				ck_assert_int_ne(merkle_consistency_verify(old, size, roots[old], roots[size],
				                                           proof, len - 1),
				                 0);
			/* A root that is not the old tree's fails. */
			if (old > 1 && old < size)
				ck_assert_int_ne(merkle_consistency_verify(old, size, roots[old - 1],
				                                           roots[size], proof, len),
				                 0);
		}
	}
	/* The checkpoints' own roots are the ones the proofs run between. */
	struct buffer note;
	buffer_init(&note);
	for (size_t c = 0; c < 2; c++) {
		struct note *parsed = NULL;
		struct checkpoint checkpoint;
		ck_assert_int_eq(store_log_checkpoint_at(f.store, "mix", checkpointed[c], &note), 0);
		ck_assert_int_eq(note_parse(note.data, note.len, &parsed), 0);
		ck_assert_int_eq(checkpoint_parse(parsed->text, parsed->text_len, &checkpoint), 0);
		ck_assert_mem_eq(checkpoint.root, roots[checkpointed[c]], MERKLE_HASH_SIZE);
		note_free(parsed);
	}
	buffer_free(&note);
	/* From the empty tree: the empty proof. */
	ck_assert_uint_eq(get_consistency(&f, "/v1/mix/log/consistency/0/15", proof), 0);

	expect_path(&f, "/v1/mix/log/consistency/10/11", 404, "size_not_checkpointed");
	expect_path(&f, "/v1/mix/log/consistency/10/16", 404, "size_not_checkpointed");
	expect_path(&f, "/v1/mix/log/consistency/1/18446744073709551615", 404, "size_not_checkpointed");
	const char *malformed[] = {
	    "/v1/mix/log/consistency/15/10",  "/v1/mix/log/consistency/0/0",
	    "/v1/mix/log/consistency/010/15", "/v1/mix/log/consistency/10/",
	    "/v1/mix/log/consistency//15",    "/v1/mix/log/consistency/a/15",
	    "/v1/mix/log/consistency/10/-1",  "/v1/mix/log/consistency/1/18446744073709551616",
	};
	for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++)
		expect_path(&f, malformed[i], 400, "malformed_proof_path");
	expect_path(&f, "/v1/mix/log/consistency/10", 404, "not_found");
	expect_path(&f, "/v1/mix/log/consistency/10/15/", 404, "not_found");
	expect_path(&f, "/v1/mail/log/consistency/1/1", 404, "no_checkpoint");
	fixture_close(&f);
}
END_TEST

/* The text of a consistency proof, as the codec reads and writes it. */
START_TEST(test_consistency_text)
{
	merkle_hash proof[MERKLE_MAX_PROOF], back[MERKLE_MAX_PROOF];
	struct buffer text;
	size_t len = 99;
	buffer_init(&text);
	for (size_t i = 0; i < MERKLE_MAX_PROOF; i++)
		memset(proof[i], (int)i, MERKLE_HASH_SIZE);
	ck_assert_int_eq(tlog_consistency_encode(proof, 0, &text), 0);
	ck_assert_uint_eq(text.len, 0);
	ck_assert_int_eq(tlog_consistency_parse(text.data, 0, back, &len), 0);
	ck_assert_uint_eq(len, 0);
	ck_assert_int_eq(tlog_consistency_encode(proof, MERKLE_MAX_PROOF, &text), 0);
	ck_assert_uint_eq(text.len, TLOG_CONSISTENCY_MAX_BYTES);
	ck_assert_int_eq(tlog_consistency_parse(text.data, text.len, back, &len), 0);
	ck_assert_uint_eq(len, MERKLE_MAX_PROOF);
	ck_assert_mem_eq(back, proof, sizeof proof);
	ck_assert_int_eq(tlog_consistency_encode(proof, MERKLE_MAX_PROOF + 1, &text), DIRAUTH_ERR_BOUNDS);
	ck_assert_uint_eq(text.len, TLOG_CONSISTENCY_MAX_BYTES);

	/* One more line is past the bound; each damaged spelling is refused. */
	struct buffer longer;
	buffer_init(&longer);
	ck_assert_int_eq(buffer_append(&longer, text.data, text.len), 0);
	ck_assert_int_eq(buffer_append(&longer, text.data, TLOG_CONSISTENCY_LINE_BYTES), 0);
	ck_assert_int_eq(tlog_consistency_parse(longer.data, longer.len, back, &len), DIRAUTH_ERR_BOUNDS);
	ck_assert_uint_eq(len, 0);
	buffer_free(&longer);
	const char *bad[] = {
	    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",       /* no newline */
	    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\r\n",   /* CRLF */
	    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAB=\n",     /* bits after the end */
	    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n",     /* not padded */
	    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n\n",   /* a blank line */
	    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==\n",     /* 31 bytes */
	    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n", /* 33 bytes */
	    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA-=\n",     /* not the standard alphabet */
	    " AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n",    /* a space */
	    "\n",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		len = 99;
		ck_assert_msg(tlog_consistency_parse((const uint8_t *)bad[i], strlen(bad[i]), back, &len) ==
		                  DIRAUTH_ERR_SYNTAX,
		              "bad[%zu]", i);
		ck_assert_uint_eq(len, 0);
	}
	buffer_free(&text);
}
END_TEST

static Suite *proof_routes_suite(void)
{
	Suite *suite = suite_create("proof_routes");
	TCase *tc = tcase_create("proof_routes");
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_inclusion_proofs_over_http);
	tcase_add_test(tc, test_kept_proofs_follow_the_checkpoint);
	tcase_add_test(tc, test_kept_answers_are_bounded);
	tcase_add_test(tc, test_consistency_proofs_over_http);
	tcase_add_test(tc, test_consistency_text);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	SRunner *runner = srunner_create(proof_routes_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	curl_global_cleanup();
	return failures ? 1 : 0;
}
