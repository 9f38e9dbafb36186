/*
 * check_translog.c: the transparency log of a namespace over a real store of real published
 * snapshots, signed by a real dirauth-signer in the test process (signer_fixture.h).
 *
 * The store's log (server/store/tlog_table.h): leaves appended only as the next published header with
 * its exact text and the hashes tlog_append gives, idempotently, never with a gap; roots equal to
 * crypto/merkle.c's over the header texts; leaf and epoch lookups; checkpoints only of the stored
 * tree, never smaller, the same tree head with more signatures replacing its note; the partial
 * tiles of every checkpointed size; everything across a reopen.
 * Catching up (server/tlog/translog.h): every published header appended in epoch order under
 * a checkpoint signed by the log key and cosigned, consistent with the one before; a second call
 * changes nothing and asks the signer nothing; a signer that is down, refuses, or holds another
 * tree leaves the log as it was; a namespace whose origin names no log key is refused.
 * The signer's answers as the log parses them.
 */
#include "clock/clock.h"
#include "kv/kv.h"
#include "schema/checkpoint.h"
#include "schema/encoding.h"
#include "base/error.h"
#include "crypto/merkle.h"
#include "schema/note.h"
#include "server/config/config.h"
#include "server/intake/submit.h"
#include "server/publish/publish.h"
#include "server/signing/signer_client.h"
#include "server/signing/signer_health.h"
#include "server/store/snapshots.h"
#include "server/store/tlog_table.h"
#include "server/store/store.h"
#include "server/tlog/translog.h"
#include "signer/key.h"
#include "signer_fixture.h"
#include "test_keys.h"
#include "test_support.h"
#include "tlog/policy.h"
#include "tlog/tile.h"
#include "tlog/tree.h"

#include <check.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GENESIS SIGNER_FIXTURE_GENESIS
#define LENGTH  SIGNER_FIXTURE_LENGTH
#define ORIGIN  "dirauth.example/mix"

struct fixture {
	char dir[512];
	struct config *config;
	struct signer_fixture signer_process;
	struct signer_client *signer;
	struct signer_health *health;
	struct clock *clock;
	struct store *store;
	struct test_key provider;
	struct note_verifier log_key, cosigner;
};

static void write_clock(struct fixture *f, uint64_t now)
{
	char path[900], text[32];
	snprintf(path, sizeof path, "%s/clock", f->dir);
	int n = snprintf(text, sizeof text, "%llu\n", (unsigned long long)now);
	test_write_file(path, text, (size_t)n, 0644);
}

static void open_store(struct fixture *f)
{
	struct store_options options = {.path = f->config->data_dir};
	ck_assert_int_eq(store_open(&options, &f->store), 0);
}

static void fixture_open(struct fixture *f)
{
	memset(f, 0, sizeof *f);
	test_make_tempdir(f->dir, sizeof f->dir);
	signer_fixture_prepare(&f->signer_process, f->dir, GENESIS + 10 * LENGTH, GENESIS - 86400,
	                       GENESIS + 30 * 86400);
	signer_fixture_start(&f->signer_process);
	test_key_load(TEST_KEY_PROVIDER, &f->provider);
	char text[4096];
	snprintf(text, sizeof text,
	         "authority: { name: authority1.dirauth.example, signer_socket: signer/signer.sock }\n"
	         "listen: { address: 127.0.0.1, port: 8080 }\n"
	         "data_dir: data\n"
	         "epoch: { length_seconds: %llu, genesis: %llu, validity_epochs: 3 }\n"
	         "clock: { source: file, path: clock }\n"
	         "namespaces:\n"
	         "  - { name: mix, origin: " ORIGIN " }\n"
	         "  - { name: mail, origin: dirauth.example/mail }\n"
	         "providers:\n"
	         "  - { key: \"%s\", namespaces: [mix], classes: [mix-gateway] }\n",
	         LENGTH, GENESIS, test_key_verifier_string(&f->provider));
	struct settings_error error;
	ck_assert_msg(config_parse((const uint8_t *)text, strlen(text), f->dir, &f->config, &error) == 0,
	              "%zu: %s", error.line, error.message);
	ck_assert_int_eq(signer_client_open(f->config->signer_socket, 5000, &f->signer), 0);
	ck_assert_int_eq(clock_open_file(f->config->clock_path, &f->clock), 0);
	f->signer_process.clock = f->clock;
	ck_assert_int_eq(signer_health_create(f->signer, f->config->authority_name, f->clock, &f->health), 0);
	open_store(f);

	/* The keys a verifier pins, read from the key files, not from the signer's answers. */
	struct signer_key *key = NULL;
	ck_assert_int_eq(signer_key_load(f->signer_process.log_key_path, &key), 0);
	f->log_key = *signer_key_verifier(key);
	signer_key_free(key);
	ck_assert_int_eq(signer_key_load(f->signer_process.cosignature_key_path, &key), 0);
	const struct note_verifier *plain = signer_key_verifier(key);
	ck_assert_int_eq(cosignature_verifier_from_ed25519(plain->name, plain->public_key, &f->cosigner), 0);
	signer_key_free(key);
	ck_assert_str_eq(f->log_key.name, ORIGIN);
}

static void fixture_close(struct fixture *f)
{
	store_close(f->store);
	clock_close(f->clock);
	signer_health_free(f->health);
	signer_client_close(f->signer);
	signer_fixture_stop(&f->signer_process);
	config_free(f->config);
	test_key_free(&f->provider);
	test_remove_tree(f->dir);
}

/* Publishes namespace namespace_index's snapshot of epoch, with one registration in mix. */
static void publish(struct fixture *f, size_t namespace_index, uint64_t epoch)
{
	uint64_t now = GENESIS + epoch * LENGTH + 1;
	write_clock(f, now);
	if (namespace_index == 0) {
		struct registration r;
		struct buffer note;
		buffer_init(&note);
		test_example_registration((unsigned)epoch + 1, "mix", &f->provider, &r);
		r.issued_at = now;
		r.expires = now + 86400;
		test_sign_registration(&r, &f->provider, &note);
		struct submit_context context = {f->config, f->store, f->signer, f->health, f->clock};
		struct submit_result result;
		ck_assert_msg(submit_registration(&context, note.data, note.len, &result) == API_ERROR_NONE,
		              "%s", result.detail);
		buffer_free(&result.receipt);
		buffer_free(&note);
		registration_clear(&r);
	}
	struct publication p;
	char detail[256] = "";
	int rc = publish_snapshot(f->config, f->store, f->signer, namespace_index, epoch, &p, detail,
	                          sizeof detail);
	ck_assert_msg(rc == 0, "publish %llu: %s %s", (unsigned long long)epoch, dirauth_strerror(rc),
	              detail);
	publication_clear(&p);
}

/* The published header text of mix's epoch (the leaf), into out (replaced). */
static void header_text(struct fixture *f, uint64_t epoch, struct buffer *out)
{
	struct buffer note;
	struct note *parsed = NULL;
	buffer_init(&note);
	ck_assert_int_eq(store_snapshot_get(f->store, "mix", epoch, &note, NULL), 0);
	ck_assert_int_eq(note_parse(note.data, note.len, &parsed), 0);
	buffer_reset(out);
	ck_assert_int_eq(buffer_append(out, parsed->text, parsed->text_len), 0);
	note_free(parsed);
	buffer_free(&note);
}

/* The records of leaf appended at the store's current size. */
static size_t records_for(struct fixture *f, const struct buffer *leaf, struct store_log_hash *out)
{
	struct store_log_reader reader;
	struct tlog_record records[TLOG_APPEND_MAX];
	size_t count = 0;
	merkle_hash leaf_hash;
	ck_assert_int_eq(store_log_reader_open(f->store, "mix", &reader), 0);
	struct tlog_hash_reader hashes = {store_log_read_hashes, &reader};
	ck_assert_int_eq(merkle_leaf_hash(leaf->data, leaf->len, leaf_hash), 0);
	ck_assert_int_eq(tlog_append(&hashes, reader.tree_size, leaf_hash, records, &count), 0);
	for (size_t i = 0; i < count; i++) {
		out[i].level = records[i].level;
		out[i].index = records[i].index;
		memcpy(out[i].hash, records[i].hash, MERKLE_HASH_SIZE);
	}
	return count;
}

static int append(struct fixture *f, uint64_t epoch)
{
	struct buffer leaf;
	struct store_log_hash hashes[STORE_LOG_APPEND_MAX];
	buffer_init(&leaf);
	header_text(f, epoch, &leaf);
	size_t count = records_for(f, &leaf, hashes);
	int rc = store_log_append(f->store, "mix", epoch, leaf.data, leaf.len, hashes, count);
	buffer_free(&leaf);
	return rc;
}

/* schema/merkle's root over the header texts of epochs. */
static void expected_root(struct fixture *f, const uint64_t *epochs, size_t count, merkle_hash out)
{
	merkle_hash *leaves = calloc(count ? count : 1, sizeof *leaves);
	struct buffer leaf;
	buffer_init(&leaf);
	for (size_t i = 0; i < count; i++) {
		header_text(f, epochs[i], &leaf);
		ck_assert_int_eq(merkle_leaf_hash(leaf.data, leaf.len, leaves[i]), 0);
	}
	ck_assert_int_eq(merkle_root(leaves, count, out), 0);
	buffer_free(&leaf);
	free(leaves);
}

/* The root of the store's tree of size leaves. */
static void stored_root(struct fixture *f, uint64_t size, merkle_hash out)
{
	struct store_log_reader reader;
	ck_assert_int_eq(store_log_reader_open(f->store, "mix", &reader), 0);
	ck_assert_uint_ge(reader.tree_size, size);
	reader.tree_size = size;
	struct tlog_hash_reader hashes = {store_log_read_hashes, &reader};
	ck_assert_int_eq(tlog_tree_root(&hashes, size, out), 0);
}

/* A checkpoint note of mix's log for (size, root), signed by a test key; extension adds a line. */
static void test_checkpoint_note(uint64_t size, const merkle_hash root, const char *extension,
                                 size_t signatures, struct buffer *out)
{
	struct checkpoint c;
	struct buffer text;
	struct test_key keys[2];
	memset(&c, 0, sizeof c);
	snprintf(c.origin, sizeof c.origin, "%s", ORIGIN);
	c.tree_size = size;
	memcpy(c.root, root, MERKLE_HASH_SIZE);
	if (extension) {
		c.extension_count = 1;
		snprintf(c.extensions[0], sizeof c.extensions[0], "%s", extension);
	}
	buffer_init(&text);
	ck_assert_int_eq(checkpoint_encode(&c, &text), 0);
	test_key_load(TEST_KEY_AUTHORITY_1, &keys[0]);
	test_key_load(TEST_KEY_AUTHORITY_2, &keys[1]);
	buffer_reset(out);
	test_key_sign_note(keys, signatures, text.data, text.len, out);
	test_key_free(&keys[0]);
	test_key_free(&keys[1]);
	buffer_free(&text);
}

START_TEST(test_store_log_append)
{
	struct fixture f;
	struct store_log_state state;
	struct buffer leaf, other;
	struct store_log_hash hashes[STORE_LOG_APPEND_MAX];
	uint64_t epoch = 0, index = 0;
	fixture_open(&f);
	buffer_init(&leaf);
	buffer_init(&other);

	/* No namespace yet: an empty log, nothing to append to. */
	ck_assert_int_eq(store_log_state(f.store, "mix", &state), 0);
	ck_assert_uint_eq(state.size, 0);
	ck_assert(!state.has_checkpoint);
	ck_assert_int_eq(store_log_next_published(f.store, "mix", NULL, &epoch), DIRAUTH_ERR_NOT_FOUND);

	publish(&f, 0, 2);
	publish(&f, 0, 5);
	publish(&f, 0, 300); /* a long run of epochs that published nothing */
	ck_assert_int_eq(store_log_next_published(f.store, "mix", NULL, &epoch), 0);
	ck_assert_uint_eq(epoch, 2);
	uint64_t after = 2;
	ck_assert_int_eq(store_log_next_published(f.store, "mix", &after, &epoch), 0);
	ck_assert_uint_eq(epoch, 5);
	after = 5;
	ck_assert_int_eq(store_log_next_published(f.store, "mix", &after, &epoch), 0);
	ck_assert_uint_eq(epoch, 300);
	after = 300;
	ck_assert_int_eq(store_log_next_published(f.store, "mix", &after, &epoch), DIRAUTH_ERR_NOT_FOUND);

	/* Not the first published: a gap. Not published at all. Not the header's text. */
	ck_assert_int_eq(append(&f, 5), DIRAUTH_ERR_MISMATCH);
	header_text(&f, 2, &leaf);
	size_t count = records_for(&f, &leaf, hashes);
	ck_assert_uint_eq(count, 1);
	ck_assert_int_eq(store_log_append(f.store, "mix", 3, leaf.data, leaf.len, hashes, count),
	                 DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(store_snapshot_get(f.store, "mix", 2, &other, NULL), 0); /* with its signatures */
	ck_assert_int_eq(store_log_append(f.store, "mix", 2, other.data, other.len, hashes, count),
	                 DIRAUTH_ERR_MISMATCH);
	/* Records that are not this leaf's: another hash, another index, another count. */
	hashes[0].hash[3] ^= 1;
	ck_assert_int_eq(store_log_append(f.store, "mix", 2, leaf.data, leaf.len, hashes, count),
	                 DIRAUTH_ERR_MISMATCH);
	hashes[0].hash[3] ^= 1;
	hashes[0].index = 1;
	ck_assert_int_eq(store_log_append(f.store, "mix", 2, leaf.data, leaf.len, hashes, count),
	                 DIRAUTH_ERR_MISMATCH);
	hashes[0].index = 0;
	ck_assert_int_eq(store_log_append(f.store, "mix", 2, leaf.data, leaf.len, hashes, 2),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(store_log_append(f.store, "mix", 2, leaf.data, leaf.len, hashes, 0),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(store_log_append(f.store, "other", 2, leaf.data, leaf.len, hashes, count),
	                 DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(store_log_state(f.store, "mix", &state), 0);
	ck_assert_uint_eq(state.size, 0);

	/* The right leaf; then the same again changes nothing. */
	ck_assert_int_eq(store_log_append(f.store, "mix", 2, leaf.data, leaf.len, hashes, count), 0);
	ck_assert_int_eq(store_log_append(f.store, "mix", 2, leaf.data, leaf.len, hashes, count), 0);
	ck_assert_int_eq(append(&f, 2), 0);
	ck_assert_int_eq(store_log_state(f.store, "mix", &state), 0);
	ck_assert_uint_eq(state.size, 1);
	ck_assert_uint_eq(state.last_epoch, 2);
	/* An epoch already in the log with another text. */
	header_text(&f, 5, &other);
	ck_assert_int_eq(store_log_append(f.store, "mix", 2, other.data, other.len, hashes, count),
	                 DIRAUTH_ERR_MISMATCH);

	/* The records at size 1 (a leaf hash and the root of two), in order. */
	ck_assert_int_eq(append(&f, 5), 0);
	ck_assert_int_eq(append(&f, 300), 0);
	ck_assert_int_eq(append(&f, 5), 0);
	/* Below the last, not in the log. */
	publish(&f, 1, 301); /* mail: its own namespace, its own epochs */
	header_text(&f, 5, &leaf);
	ck_assert_int_eq(store_log_append(f.store, "mix", 4, leaf.data, leaf.len, hashes, 1),
	                 DIRAUTH_ERR_ROLLBACK);
	ck_assert_int_eq(store_log_state(f.store, "mix", &state), 0);
	ck_assert_uint_eq(state.size, 3);
	ck_assert_uint_eq(state.last_epoch, 300);

	/* Lookups both ways, and the leaves as a bundle reads them. */
	ck_assert_int_eq(store_log_leaf(f.store, "mix", 1, &epoch, &other), 0);
	ck_assert_uint_eq(epoch, 5);
	header_text(&f, 5, &leaf);
	ck_assert_uint_eq(other.len, leaf.len);
	ck_assert_mem_eq(other.data, leaf.data, leaf.len);
	ck_assert_int_eq(store_log_leaf(f.store, "mix", 3, &epoch, NULL), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(store_log_epoch_leaf(f.store, "mix", 300, &index), 0);
	ck_assert_uint_eq(index, 2);
	ck_assert_int_eq(store_log_epoch_leaf(f.store, "mix", 4, &index), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(store_log_epoch_leaf(f.store, "mail", 301, &index), DIRAUTH_ERR_NOT_FOUND);

	/* The root is schema/merkle's over the header texts. */
	const uint64_t epochs[] = {2, 5, 300};
	merkle_hash root, expected;
	for (size_t n = 1; n <= 3; n++) {
		stored_root(&f, n, root);
		expected_root(&f, epochs, n, expected);
		ck_assert_mem_eq(root, expected, MERKLE_HASH_SIZE);
	}

	/* Reads are bounded and stay inside the tree. */
	struct store_log_reader reader;
	merkle_hash out[STORE_LOG_READ_MAX + 1];
	ck_assert_int_eq(store_log_reader_open(f.store, "mix", &reader), 0);
	ck_assert_uint_eq(reader.tree_size, 3);
	ck_assert_int_eq(store_log_read_hashes(&reader, 0, 0, 3, out), 0);
	ck_assert_int_eq(store_log_read_hashes(&reader, 1, 0, 1, out), 0);
	ck_assert_int_eq(store_log_read_hashes(&reader, 0, 2, 2, out), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(store_log_read_hashes(&reader, 1, 1, 1, out), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(store_log_read_hashes(&reader, 64, 0, 1, out), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(store_log_read_hashes(&reader, 0, 0, 0, out), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(store_log_read_hashes(&reader, 0, 0, STORE_LOG_READ_MAX + 1, out),
	                 DIRAUTH_ERR_BOUNDS);
	reader.tree_size = 2;
	ck_assert_int_eq(store_log_read_hashes(&reader, 0, 2, 1, out), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(store_log_reader_open(f.store, "nobody", &reader), DIRAUTH_ERR_NOT_FOUND);

	/* After a reopen, the same log. */
	store_close(f.store);
	open_store(&f);
	stored_root(&f, 3, root);
	expected_root(&f, epochs, 3, expected);
	ck_assert_mem_eq(root, expected, MERKLE_HASH_SIZE);
	ck_assert_int_eq(append(&f, 300), 0);
	ck_assert_int_eq(store_log_state(f.store, "mix", &state), 0);
	ck_assert_uint_eq(state.size, 3);

	/* Bounds on the leaf. */
	uint8_t *huge = calloc(1, STORE_LOG_LEAF_MAX + 1);
	ck_assert_int_eq(store_log_append(f.store, "mix", 400, huge, STORE_LOG_LEAF_MAX + 1, hashes, 1),
	                 DIRAUTH_ERR_BOUNDS);
	free(huge);
	buffer_free(&leaf);
	buffer_free(&other);
	fixture_close(&f);
}
END_TEST

struct leaves_walk {
	uint64_t next;
	uint64_t epochs[8];
};

static int leaves_visit(void *context, uint64_t index, uint64_t epoch, const uint8_t *leaf, size_t len)
{
	struct leaves_walk *w = context;
	ck_assert_uint_eq(index, w->next);
	ck_assert_uint_eq(epoch, w->epochs[index]);
	ck_assert(len > 20 && memcmp(leaf, "dirauth snapshot v1\n", 20) == 0);
	w->next++;
	return 0;
}

struct leaf_records {
	uint8_t (*keys)[32];
	uint8_t (*values)[8];
	size_t *key_lens;
	size_t *count;
	size_t texts; /* records that hold a text after the epoch */
};

/* Each log_leaves record holds its epoch and then its leaf's text. */
static int collect_leaf_record(void *context, struct kv_val key, struct kv_val value)
{
	struct leaf_records *records = context;
	size_t n = *records->count;
	ck_assert_uint_lt(n, 8);
	ck_assert_uint_le(key.len, 32);
	ck_assert_uint_ge(value.len, 8);
	memcpy(records->keys[n], key.data, key.len);
	records->key_lens[n] = key.len;
	memcpy(records->values[n], value.data, 8);
	*records->count = n + 1;
	records->texts += value.len > 8;
	return 0;
}

/* Every leaf of mix's log as store_log_leaves reads it, texts concatenated, and each one as
 * store_log_leaf reads it. */
static int leaves_concatenate(void *context, uint64_t index, uint64_t epoch, const uint8_t *leaf, size_t len)
{
	(void)index;
	(void)epoch;
	return buffer_append(context, leaf, len);
}

static void read_leaves(struct fixture *f, uint64_t size, struct buffer *out)
{
	struct buffer one;
	buffer_init(&one);
	buffer_reset(out);
	ck_assert_int_eq(store_log_leaves(f->store, "mix", 0, size, leaves_concatenate, out), 0);
	size_t offset = 0;
	for (uint64_t i = 0; i < size; i++) {
		uint64_t epoch = 0;
		ck_assert_int_eq(store_log_leaf(f->store, "mix", i, &epoch, &one), 0);
		ck_assert_uint_ge(out->len, offset + one.len);
		ck_assert_mem_eq(out->data + offset, one.data, one.len);
		offset += one.len;
	}
	ck_assert_uint_eq(offset, out->len);
	buffer_free(&one);
}

/* Rewrites the log_leaves records of the store's data dir: each to its first keep bytes (8: the
 * epoch alone, as older stores wrote them). The store must be closed. Returns how many held a
 * text. */
static size_t rewrite_leaf_records(struct fixture *f, size_t keep)
{
	struct kv_env *env = NULL;
	struct kv_db db;
	const struct kv_database databases[] = {{"log_leaves", &db}};
	uint8_t keys[8][32], values[8][8];
	size_t key_lens[8], count = 0;
	ck_assert_int_eq(kv_env_open(f->config->data_dir, (size_t)1 << 26, databases, 1, &env), 0);
	struct kv_txn t;
	kv_txn_begin(env, &t, KV_READ);
	struct leaf_records records = {keys, values, key_lens, &count, 0};
	ck_assert_int_eq(kv_txn_walk_prefix(&t, db, NULL, 0, collect_leaf_record, &records), 0);
	kv_txn_abort(&t);
	ck_assert_uint_gt(count, 0);
	kv_txn_begin(env, &t, KV_WRITE);
	for (size_t i = 0; i < count; i++)
		kv_txn_put(&t, db, keys[i], key_lens[i], values[i], keep);
	ck_assert_int_eq(kv_txn_commit(&t), 0);
	kv_env_close(env);
	return records.texts;
}

START_TEST(test_older_leaf_records)
{
	struct fixture f;
	struct buffer before, after, leaf;
	fixture_open(&f);
	buffer_init(&before);
	buffer_init(&after);
	buffer_init(&leaf);
	for (uint64_t e = 1; e <= 3; e++) {
		publish(&f, 0, e);
		ck_assert_int_eq(append(&f, e), 0);
	}
	read_leaves(&f, 3, &before);

	/* A store whose leaves were appended before their texts were kept beside their epochs reads
	 * the same leaves, from the headers; the next append keeps its text, and both kinds read
	 * alike in one walk. */
	store_close(f.store);
	ck_assert_uint_eq(rewrite_leaf_records(&f, 8), 3);
	open_store(&f);
	read_leaves(&f, 3, &after);
	ck_assert_uint_eq(after.len, before.len);
	ck_assert_mem_eq(after.data, before.data, before.len);
	publish(&f, 0, 4);
	ck_assert_int_eq(append(&f, 4), 0);
	ck_assert_int_eq(append(&f, 2), 0); /* already in the log: the same text again */
	read_leaves(&f, 4, &after);
	header_text(&f, 4, &leaf);
	ck_assert_uint_eq(after.len, before.len + leaf.len);
	ck_assert_mem_eq(after.data, before.data, before.len);
	ck_assert_mem_eq(after.data + before.len, leaf.data, leaf.len);
	const uint64_t epochs[] = {1, 2, 3, 4};
	merkle_hash root, expected;
	stored_root(&f, 4, root);
	expected_root(&f, epochs, 4, expected);
	ck_assert_mem_eq(root, expected, MERKLE_HASH_SIZE);

	/* A damaged record is the store's error, not a leaf. */
	store_close(f.store);
	ck_assert_uint_eq(rewrite_leaf_records(&f, 5), 1); /* only the last kept its text */
	open_store(&f);
	ck_assert_int_eq(store_log_leaves(f.store, "mix", 0, 4, leaves_concatenate, &after),
	                 DIRAUTH_ERR_STORE);
	ck_assert_int_eq(store_log_leaf(f.store, "mix", 1, NULL, &leaf), DIRAUTH_ERR_STORE);
	buffer_free(&before);
	buffer_free(&after);
	buffer_free(&leaf);
	fixture_close(&f);
}
END_TEST

/* Deletes the stored hash (level, index) of mix from the store's data dir (closed store). */
static void delete_hash(struct fixture *f, uint8_t level, uint64_t index)
{
	struct kv_env *env = NULL;
	struct kv_db db;
	const struct kv_database databases[] = {{"log_hashes", &db}};
	uint8_t key[11];
	ck_assert_int_eq(kv_env_open(f->config->data_dir, (size_t)1 << 26, databases, 1, &env), 0);
	struct kv_txn t;
	kv_txn_begin(env, &t, KV_WRITE);
	kv_put_u64(key + 3, index);
	key[2] = level;
	struct kv_val value;
	/* The namespace ids are the store's: the first that has the hash is mix (mail has no log). */
	for (unsigned ns = 0; ns < 4; ns++) {
		key[0] = (uint8_t)(ns >> 8);
		key[1] = (uint8_t)ns;
		if (kv_txn_get(&t, db, key, sizeof key, &value))
			break;
	}
	ck_assert(kv_txn_delete(&t, db, key, sizeof key));
	ck_assert_int_eq(kv_txn_commit(&t), 0);
	kv_env_close(env);
}

START_TEST(test_read_hash_runs)
{
	struct fixture f;
	enum { LEAVES = 20 };
	merkle_hash run[LEAVES], one;
	struct store_log_reader reader;
	fixture_open(&f);
	for (uint64_t e = 1; e <= LEAVES; e++) {
		publish(&f, 0, e);
		ck_assert_int_eq(append(&f, e), 0);
	}
	/* A run read at once (a cursor walk) is the hashes read one by one, from any start. */
	ck_assert_int_eq(store_log_reader_open(f.store, "mix", &reader), 0);
	ck_assert_int_eq(store_log_read_hashes(&reader, 0, 0, LEAVES, run), 0);
	for (uint64_t i = 0; i < LEAVES; i++) {
		ck_assert_int_eq(store_log_read_hashes(&reader, 0, i, 1, &one), 0);
		ck_assert_mem_eq(run[i], one, MERKLE_HASH_SIZE);
	}
	ck_assert_int_eq(store_log_read_hashes(&reader, 0, 3, 17, run), 0);
	ck_assert_int_eq(store_log_read_hashes(&reader, 0, 19, 1, &one), 0);
	ck_assert_mem_eq(run[16], one, MERKLE_HASH_SIZE);
	ck_assert_int_eq(store_log_read_hashes(&reader, 0, 4, 17, run), DIRAUTH_ERR_NOT_FOUND);

	/* A hash missing inside the tree is the store's error, in the middle of a run or at its end. */
	store_close(f.store);
	delete_hash(&f, 0, 10);
	open_store(&f);
	ck_assert_int_eq(store_log_reader_open(f.store, "mix", &reader), 0);
	ck_assert_int_eq(store_log_read_hashes(&reader, 0, 0, LEAVES, run), DIRAUTH_ERR_STORE);
	ck_assert_int_eq(store_log_read_hashes(&reader, 0, 10, 1, run), DIRAUTH_ERR_STORE);
	ck_assert_int_eq(store_log_read_hashes(&reader, 0, 11, 9, run), 0);
	store_close(f.store);
	delete_hash(&f, 0, 19);
	open_store(&f);
	ck_assert_int_eq(store_log_reader_open(f.store, "mix", &reader), 0);
	ck_assert_int_eq(store_log_read_hashes(&reader, 0, 2, 18, run), DIRAUTH_ERR_STORE);
	fixture_close(&f);
}
END_TEST

START_TEST(test_store_log_checkpoints)
{
	struct fixture f;
	struct store_log_state state;
	struct buffer note, stored;
	merkle_hash root, root2, wrong;
	uint64_t size = 0;
	fixture_open(&f);
	buffer_init(&note);
	buffer_init(&stored);
	for (uint64_t e = 1; e <= 3; e++) {
		publish(&f, 0, e);
		ck_assert_int_eq(append(&f, e), 0);
	}
	struct leaves_walk walk = {.next = 1, .epochs = {1, 2, 3}};
	ck_assert_int_eq(store_log_leaves(f.store, "mix", 1, 2, leaves_visit, &walk), 0);
	ck_assert_uint_eq(walk.next, 3);
	ck_assert_int_eq(store_log_leaves(f.store, "mix", 2, 2, leaves_visit, &walk), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(store_log_leaves(f.store, "mix", 0, 0, leaves_visit, &walk), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(store_log_leaves(f.store, "mix", 0, STORE_LOG_LEAVES_MAX + 1, leaves_visit, &walk),
	                 DIRAUTH_ERR_BOUNDS);

	ck_assert_int_eq(store_log_checkpoint(f.store, "mix", &stored, &size), DIRAUTH_ERR_NOT_FOUND);
	stored_root(&f, 2, root2);
	stored_root(&f, 3, root);
	memcpy(wrong, root, sizeof wrong);
	wrong[0] ^= 1;
	/* The log's generation moves with each checkpoint stored, and with nothing refused. */
	uint64_t generation = store_log_generation(f.store);
	/* Not the stored tree: a wrong root, a size past the log. */
	test_checkpoint_note(3, wrong, NULL, 1, &note);
	ck_assert_int_eq(store_log_checkpoint_put(f.store, "mix", note.data, note.len), DIRAUTH_ERR_MISMATCH);
	test_checkpoint_note(4, root, NULL, 1, &note);
	ck_assert_int_eq(store_log_checkpoint_put(f.store, "mix", note.data, note.len), DIRAUTH_ERR_MISMATCH);
	/* Not a checkpoint note at all. */
	ck_assert_int_eq(store_log_checkpoint_put(f.store, "mix", (const uint8_t *)"3\n", 2),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(store_log_checkpoint_put(f.store, "mix", note.data, STORE_LOG_CHECKPOINT_MAX + 1),
	                 DIRAUTH_ERR_BOUNDS);

	ck_assert_uint_eq(store_log_generation(f.store), generation);
	/* Size 2, then 3; back to 2 is a rollback. */
	test_checkpoint_note(2, root2, NULL, 1, &note);
	ck_assert_int_eq(store_log_checkpoint_put(f.store, "mix", note.data, note.len), 0);
	ck_assert_uint_gt(store_log_generation(f.store), generation);
	generation = store_log_generation(f.store);
	test_checkpoint_note(3, root, NULL, 1, &note);
	ck_assert_int_eq(store_log_checkpoint_put(f.store, "mix", note.data, note.len), 0);
	test_checkpoint_note(2, root2, NULL, 2, &note);
	ck_assert_int_eq(store_log_checkpoint_put(f.store, "mix", note.data, note.len), DIRAUTH_ERR_ROLLBACK);
	/* The same tree head with another text is refused; with one more signature it replaces. */
	test_checkpoint_note(3, root, "an extension", 1, &note);
	ck_assert_int_eq(store_log_checkpoint_put(f.store, "mix", note.data, note.len),
	                 DIRAUTH_ERR_COLLISION);
	generation = store_log_generation(f.store);
	test_checkpoint_note(3, root, NULL, 2, &note);
	ck_assert_int_eq(store_log_checkpoint_put(f.store, "mix", note.data, note.len), 0);
	ck_assert_uint_gt(store_log_generation(f.store), generation);
	ck_assert_int_eq(store_log_checkpoint(f.store, "mix", &stored, &size), 0);
	ck_assert_uint_eq(size, 3);
	ck_assert_uint_eq(stored.len, note.len);
	ck_assert_mem_eq(stored.data, note.data, note.len);
	ck_assert_int_eq(store_log_state(f.store, "mix", &state), 0);
	ck_assert(state.has_checkpoint);
	ck_assert_uint_eq(state.checkpoint_size, 3);
	/* Each size keeps its note. */
	ck_assert_int_eq(store_log_checkpoint_at(f.store, "mix", 2, &stored), 0);
	test_checkpoint_note(2, root2, NULL, 1, &note);
	ck_assert_mem_eq(stored.data, note.data, note.len);
	ck_assert_int_eq(store_log_checkpoint_at(f.store, "mix", 1, &stored), DIRAUTH_ERR_NOT_FOUND);
	/* Publishing a stored checkpoint moves it too; a refused publication does not. */
	generation = store_log_generation(f.store);
	ck_assert_int_eq(store_log_publish(f.store, "mix", 1), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_uint_eq(store_log_generation(f.store), generation);
	ck_assert_int_eq(store_log_publish(f.store, "mix", 2), 0);
	ck_assert_uint_gt(store_log_generation(f.store), generation);

	/* The partial tiles of sizes 2 and 3, and no other. */
	ck_assert_int_eq(store_log_partial_tile(f.store, "mix", 0, 0, 2), 0);
	ck_assert_int_eq(store_log_partial_tile(f.store, "mix", 0, 0, 3), 0);
	ck_assert_int_eq(store_log_partial_tile(f.store, "mix", 0, 0, 1), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(store_log_partial_tile(f.store, "mix", 1, 0, 3), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(store_log_partial_tile(f.store, "mix", 0, 0, 0), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(store_log_partial_tile(f.store, "mix", 8, 0, 1), DIRAUTH_ERR_BOUNDS);

	/* All of it after a reopen. */
	store_close(f.store);
	open_store(&f);
	ck_assert_int_eq(store_log_checkpoint(f.store, "mix", &stored, &size), 0);
	ck_assert_uint_eq(size, 3);
	ck_assert_int_eq(store_log_partial_tile(f.store, "mix", 0, 0, 2), 0);
	buffer_free(&note);
	buffer_free(&stored);
	fixture_close(&f);
}
END_TEST

/* Checks the stored checkpoint of mix: signed by the log key, cosigned, of the tree of the
 * header texts of epochs. Returns its parsed checkpoint. */
static struct checkpoint check_checkpoint(struct fixture *f, const uint64_t *epochs, size_t count,
                                          struct buffer *note)
{
	struct note *parsed = NULL;
	struct checkpoint checkpoint;
	struct tlog_policy policy = {ORIGIN, &f->log_key, &f->cosigner, 1, 1};
	uint64_t timestamp = 0;
	merkle_hash expected;
	ck_assert_int_eq(translog_checkpoint(f->store, "mix", note), 0);
	ck_assert_int_eq(note_parse(note->data, note->len, &parsed), 0);
	ck_assert_int_eq(tlog_checkpoint_verify(parsed, &policy, &checkpoint, NULL, NULL), 0);
	ck_assert_int_eq(cosignature_verify(parsed, &f->cosigner, &timestamp), 0);
	ck_assert_uint_gt(timestamp, GENESIS);
	ck_assert_uint_eq(parsed->signature_count, 2);
	note_free(parsed);
	ck_assert_uint_eq(checkpoint.tree_size, count);
	expected_root(f, epochs, count, expected);
	ck_assert_mem_eq(checkpoint.root, expected, MERKLE_HASH_SIZE);
	return checkpoint;
}

START_TEST(test_catch_up)
{
	struct fixture f;
	struct translog_outcome outcome;
	struct buffer note, again;
	fixture_open(&f);
	buffer_init(&note);
	buffer_init(&again);

	/* Nothing published: nothing to do, nothing asked. */
	ck_assert_int_eq(translog_catch_up(f.store, f.config, f.signer, 0, &outcome), 0);
	ck_assert_uint_eq(outcome.appended, 0);
	ck_assert(!outcome.has_checkpoint);
	ck_assert_int_eq(signer_fixture_audit_count(&f.signer_process, " sign checkpoint"), 0);

	/* A crash between publishing and appending: several headers wait; all go in, in order. */
	uint64_t epochs[] = {3, 4, 7, 8, 9};
	for (size_t i = 0; i < 3; i++)
		publish(&f, 0, epochs[i]);
	ck_assert_int_eq(translog_catch_up(f.store, f.config, f.signer, 0, &outcome), 0);
	ck_assert_msg(outcome.detail[0] == 0, "%s", outcome.detail);
	ck_assert_uint_eq(outcome.appended, 3);
	ck_assert_uint_eq(outcome.tree_size, 3);
	ck_assert(outcome.has_checkpoint);
	ck_assert_uint_eq(outcome.checkpoint_size, 3);
	struct checkpoint first = check_checkpoint(&f, epochs, 3, &note);
	for (uint64_t i = 0; i < 3; i++) {
		uint64_t epoch = 0;
		ck_assert_int_eq(store_log_leaf(f.store, "mix", i, &epoch, NULL), 0);
		ck_assert_uint_eq(epoch, epochs[i]);
	}

	/* Idempotent: nothing new, nothing signed, the same note. */
	int signed_before = signer_fixture_audit_count(&f.signer_process, " sign checkpoint");
	ck_assert_int_eq(translog_catch_up(f.store, f.config, f.signer, 0, &outcome), 0);
	ck_assert_uint_eq(outcome.appended, 0);
	ck_assert_int_eq(signer_fixture_audit_count(&f.signer_process, " sign checkpoint"), signed_before);
	ck_assert_int_eq(translog_checkpoint(f.store, "mix", &again), 0);
	ck_assert_uint_eq(again.len, note.len);
	ck_assert_mem_eq(again.data, note.data, note.len);

	/* Each publication after: one leaf, a checkpoint consistent with the one before. */
	for (size_t i = 3; i < 5; i++) {
		publish(&f, 0, epochs[i]);
		ck_assert_int_eq(translog_catch_up(f.store, f.config, f.signer, 0, &outcome), 0);
		ck_assert_uint_eq(outcome.appended, 1);
	}
	struct checkpoint last = check_checkpoint(&f, epochs, 5, &note);
	struct store_log_reader reader;
	merkle_hash proof[MERKLE_MAX_PROOF];
	size_t proof_count = 0;
	ck_assert_int_eq(store_log_reader_open(f.store, "mix", &reader), 0);
	struct tlog_hash_reader hashes = {store_log_read_hashes, &reader};
	ck_assert_int_eq(tlog_consistency_proof(&hashes, 5, 3, proof, &proof_count), 0);
	ck_assert_int_eq(merkle_consistency_verify(3, 5, first.root, last.root, proof, proof_count), 0);
	ck_assert_int_eq(signer_fixture_audit_count(&f.signer_process, " sign checkpoint"), 3);
	ck_assert_int_eq(signer_fixture_audit_count(&f.signer_process, " sign cosignature"), 3);

	/* mail's origin names no log key of this signer: refused, nothing appended. */
	publish(&f, 1, 10);
	ck_assert_int_eq(translog_catch_up(f.store, f.config, f.signer, 1, &outcome), DIRAUTH_ERR_CONFIG);
	ck_assert_ptr_nonnull(strstr(outcome.detail, "no log key"));
	struct store_log_state state;
	ck_assert_int_eq(store_log_state(f.store, "mail", &state), 0);
	ck_assert_uint_eq(state.size, 0);
	ck_assert_int_eq(translog_catch_up(f.store, f.config, f.signer, 2, &outcome), DIRAUTH_ERR_INTERNAL);
	buffer_free(&note);
	buffer_free(&again);
	fixture_close(&f);
}
END_TEST

/* The log's state and checkpoint note now, to compare after a refusal. */
static void snapshot_log(struct fixture *f, struct store_log_state *state, struct buffer *note)
{
	ck_assert_int_eq(store_log_state(f->store, "mix", state), 0);
	buffer_reset(note);
	int rc = store_log_checkpoint(f->store, "mix", note, NULL);
	ck_assert(rc == 0 || rc == DIRAUTH_ERR_NOT_FOUND);
}

static void assert_unchanged(struct fixture *f, const struct store_log_state *before,
                             const struct buffer *note)
{
	struct store_log_state now;
	struct buffer stored;
	buffer_init(&stored);
	snapshot_log(f, &now, &stored);
	ck_assert_mem_eq(&now, before, sizeof now);
	ck_assert_uint_eq(stored.len, note->len);
	if (note->len)
		ck_assert_mem_eq(stored.data, note->data, note->len);
	buffer_free(&stored);
}

START_TEST(test_refusals_leave_the_log)
{
	struct fixture f;
	struct translog_outcome outcome;
	struct store_log_state before;
	struct buffer note;
	char detail[SIGNER_DETAIL_MAX + 1];
	fixture_open(&f);
	buffer_init(&note);
	publish(&f, 0, 1);
	ck_assert_int_eq(translog_catch_up(f.store, f.config, f.signer, 0, &outcome), 0);
	publish(&f, 0, 2);
	snapshot_log(&f, &before, &note);
	ck_assert_uint_eq(before.size, 1);

	/* The signer is down. */
	signer_fixture_stop(&f.signer_process);
	ck_assert_int_eq(translog_catch_up(f.store, f.config, f.signer, 0, &outcome),
	                 DIRAUTH_ERR_UNAVAILABLE);
	assert_unchanged(&f, &before, &note);
	signer_fixture_start(&f.signer_process);

	/* The signer refuses: by its own clock no epoch has begun, so no log has any entry. */
	f.signer_process.clock = NULL;
	f.signer_process.now = GENESIS - 2 * SIGNER_FIXTURE_SKEW;
	ck_assert_int_eq(translog_catch_up(f.store, f.config, f.signer, 0, &outcome), DIRAUTH_ERR_STALE);
	ck_assert_ptr_nonnull(strstr(outcome.detail, "did not sign"));
	assert_unchanged(&f, &before, &note);
	f.signer_process.clock = f.clock;

	/* The signer holds another tree of this origin (its ledger, not the published headers):
	 * refused before anything is signed. */
	struct checkpoint fork;
	struct note_signature signature;
	struct buffer text;
	memset(&fork, 0, sizeof fork);
	snprintf(fork.origin, sizeof fork.origin, "%s", ORIGIN);
	fork.tree_size = 1;
	memset(fork.root, 7, sizeof fork.root);
	buffer_init(&text);
	ck_assert_int_eq(checkpoint_encode(&fork, &text), 0);
	/* (Signed from a fresh ledger: the fixture's is moved aside and back.) */
	signer_fixture_stop(&f.signer_process);
	char moved[800];
	snprintf(moved, sizeof moved, "%s.real", f.signer_process.ledger_path);
	ck_assert_int_eq(rename(f.signer_process.ledger_path, moved), 0);
	signer_fixture_start(&f.signer_process);
	ck_assert_int_eq(signer_client_sign(f.signer, SIGNER_OP_SIGN_CHECKPOINT, text.data, text.len, 0, NULL,
	                                    0, &signature, detail, sizeof detail),
	                 0);
	ck_assert_int_eq(translog_catch_up(f.store, f.config, f.signer, 0, &outcome), DIRAUTH_ERR_MISMATCH);
	ck_assert_ptr_nonnull(strstr(outcome.detail, "not the tree"));
	assert_unchanged(&f, &before, &note);
	/* A signer that has checkpointed more than is published here (a store restored from an
	 * older backup) is not followed either. */
	fork.tree_size = 5;
	buffer_reset(&text);
	ck_assert_int_eq(checkpoint_encode(&fork, &text), 0);
	signer_fixture_stop(&f.signer_process);
	test_remove_tree(f.signer_process.ledger_path);
	signer_fixture_start(&f.signer_process);
	ck_assert_int_eq(signer_client_sign(f.signer, SIGNER_OP_SIGN_CHECKPOINT, text.data, text.len, 0, NULL,
	                                    0, &signature, detail, sizeof detail),
	                 0);
	ck_assert_int_eq(translog_catch_up(f.store, f.config, f.signer, 0, &outcome), DIRAUTH_ERR_ROLLBACK);
	assert_unchanged(&f, &before, &note);
	signer_fixture_stop(&f.signer_process);
	test_remove_tree(f.signer_process.ledger_path);
	ck_assert_int_eq(rename(moved, f.signer_process.ledger_path), 0);
	signer_fixture_start(&f.signer_process);

	/* With the signer back as it was, the log catches up. */
	ck_assert_int_eq(translog_catch_up(f.store, f.config, f.signer, 0, &outcome), 0);
	ck_assert_uint_eq(outcome.appended, 1);
	const uint64_t epochs[] = {1, 2};
	check_checkpoint(&f, epochs, 2, &note);
	buffer_free(&text);
	buffer_free(&note);
	fixture_close(&f);
}
END_TEST

/* A crash after the signatures and before (or while) appending: the next call appends the same
 * leaves under the same tree head, which the signer signs again. */
START_TEST(test_crash_after_signing)
{
	struct fixture f;
	struct translog_outcome outcome;
	struct buffer note;
	fixture_open(&f);
	buffer_init(&note);
	publish(&f, 0, 1);
	publish(&f, 0, 2);
	/* What the crashed call did: the signer signed and cosigned the tree of both, the store got
	 * only the first leaf and no checkpoint. */
	struct buffer leaf, text;
	buffer_init(&leaf);
	buffer_init(&text);
	ck_assert_int_eq(append(&f, 1), 0);
	const uint64_t epochs[] = {1, 2};
	struct checkpoint c;
	memset(&c, 0, sizeof c);
	snprintf(c.origin, sizeof c.origin, "%s", ORIGIN);
	c.tree_size = 2;
	expected_root(&f, epochs, 2, c.root);
	ck_assert_int_eq(checkpoint_encode(&c, &text), 0);
	struct note_signature signature;
	char detail[SIGNER_DETAIL_MAX + 1];
	ck_assert_int_eq(signer_client_sign(f.signer, SIGNER_OP_SIGN_CHECKPOINT, text.data, text.len, 0, NULL,
	                                    0, &signature, detail, sizeof detail),
	                 0);
	ck_assert_int_eq(translog_catch_up(f.store, f.config, f.signer, 0, &outcome), 0);
	ck_assert_uint_eq(outcome.appended, 1);
	check_checkpoint(&f, epochs, 2, &note);
	buffer_free(&leaf);
	buffer_free(&text);
	buffer_free(&note);
	fixture_close(&f);
}
END_TEST

START_TEST(test_signer_answers)
{
	struct translog_signer_keys keys;
	struct translog_signer_state state;
	char text[2048], signing[NOTE_VERIFIER_KEY_MAX + 1], log[NOTE_VERIFIER_KEY_MAX + 1],
	    cosign[NOTE_VERIFIER_KEY_MAX + 1];
	struct test_key a, b;
	test_key_load(TEST_KEY_AUTHORITY_1, &a);
	test_key_load(TEST_KEY_AUTHORITY_2, &b);
	snprintf(signing, sizeof signing, "%s", test_key_verifier_string(&a));
	snprintf(log, sizeof log, "%s", test_key_verifier_string(&b));
	struct note_verifier cosigner;
	ck_assert_int_eq(
	    cosignature_verifier_from_ed25519("cosigner.example", a.verifier.public_key, &cosigner), 0);
	note_verifier_format(&cosigner, cosign);

#define KEYS(s) translog_signer_keys_parse((const uint8_t *)(s), strlen(s), &keys)
	snprintf(text, sizeof text, "signing-key %s\nlog-key %s\ncosignature-key %s\n", signing, log, cosign);
	ck_assert_int_eq(KEYS(text), 0);
	ck_assert(keys.has_log_key && keys.has_cosigner);
	ck_assert(note_verifier_equal(&keys.log_key, &b.verifier));
	ck_assert(note_verifier_equal(&keys.cosigner, &cosigner));
	snprintf(text, sizeof text, "signing-key %s\n", signing);
	ck_assert_int_eq(KEYS(text), 0);
	ck_assert(!keys.has_log_key && !keys.has_cosigner);
	/* Out of order, twice, missing its line end, a cosigner given as a plain key, the reverse,
	 * an unknown line, nothing. */
	snprintf(text, sizeof text, "signing-key %s\ncosignature-key %s\nlog-key %s\n", signing, cosign, log);
	ck_assert_int_eq(KEYS(text), DIRAUTH_ERR_SYNTAX);
	snprintf(text, sizeof text, "signing-key %s\nlog-key %s\nlog-key %s\n", signing, log, log);
	ck_assert_int_eq(KEYS(text), DIRAUTH_ERR_SYNTAX);
	snprintf(text, sizeof text, "signing-key %s\nlog-key %s", signing, log);
	ck_assert_int_eq(KEYS(text), DIRAUTH_ERR_SYNTAX);
	snprintf(text, sizeof text, "signing-key %s\ncosignature-key %s\n", signing, log);
	ck_assert_int_eq(KEYS(text), DIRAUTH_ERR_SYNTAX);
	snprintf(text, sizeof text, "signing-key %s\nlog-key %s\n", signing, cosign);
	ck_assert_int_eq(KEYS(text), DIRAUTH_ERR_SYNTAX);
	snprintf(text, sizeof text, "signing-key %s\nwitness-key %s\n", signing, log);
	ck_assert_int_eq(KEYS(text), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(KEYS(""), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(KEYS("signing-key \n"), DIRAUTH_ERR_SYNTAX);
	char *big = calloc(1, TRANSLOG_ANSWER_MAX + 2);
	memset(big, 'a', TRANSLOG_ANSWER_MAX + 1);
	ck_assert_int_eq(KEYS(big), DIRAUTH_ERR_BOUNDS);
	free(big);

#define STATE(s) translog_signer_state_parse((const uint8_t *)(s), strlen(s), &state)
	const char *root = "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=";
	uint64_t size = 0;
	merkle_hash latest;
	ck_assert_int_eq(STATE(""), 0);
	ck_assert_int_eq(translog_signer_state_latest(&state, &size, latest), DIRAUTH_ERR_NOT_FOUND);
	snprintf(text, sizeof text, "signed 12 %s\ncosigned 14 %s\n", root, root);
	ck_assert_int_eq(STATE(text), 0);
	ck_assert(state.has_signed && state.has_cosigned);
	ck_assert_int_eq(translog_signer_state_latest(&state, &size, latest), 0);
	ck_assert_uint_eq(size, 14);
	snprintf(text, sizeof text, "cosigned 3 %s\n", root);
	ck_assert_int_eq(STATE(text), 0);
	ck_assert_int_eq(translog_signer_state_latest(&state, &size, latest), 0);
	ck_assert_uint_eq(size, 3);
	snprintf(text, sizeof text, "signed 3 %s\ncosigned 3 AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n",
	         root);
	ck_assert_int_eq(STATE(text), 0);
	ck_assert_int_eq(translog_signer_state_latest(&state, &size, latest), DIRAUTH_ERR_MISMATCH);
	/* Leading zero, no root, a short root, the wrong order, twice, trailing bytes. */
	snprintf(text, sizeof text, "signed 012 %s\n", root);
	ck_assert_int_eq(STATE(text), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(STATE("signed 12\n"), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(STATE("signed 12 AAAA\n"), DIRAUTH_ERR_SYNTAX);
	snprintf(text, sizeof text, "cosigned 1 %s\nsigned 1 %s\n", root, root);
	ck_assert_int_eq(STATE(text), DIRAUTH_ERR_SYNTAX);
	snprintf(text, sizeof text, "signed 1 %s\nsigned 1 %s\n", root, root);
	ck_assert_int_eq(STATE(text), DIRAUTH_ERR_SYNTAX);
	snprintf(text, sizeof text, "signed 1 %s\nx", root);
	ck_assert_int_eq(STATE(text), DIRAUTH_ERR_SYNTAX);
	snprintf(text, sizeof text, "signed  1 %s\n", root);
	ck_assert_int_eq(STATE(text), DIRAUTH_ERR_SYNTAX);
	test_key_free(&a);
	test_key_free(&b);
}
END_TEST

static Suite *translog_suite(void)
{
	Suite *suite = suite_create("translog");
	TCase *tc = tcase_create("translog");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_store_log_append);
	tcase_add_test(tc, test_store_log_checkpoints);
	tcase_add_test(tc, test_older_leaf_records);
	tcase_add_test(tc, test_read_hash_runs);
	tcase_add_test(tc, test_catch_up);
	tcase_add_test(tc, test_refusals_leave_the_log);
	tcase_add_test(tc, test_crash_after_signing);
	tcase_add_test(tc, test_signer_answers);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(translog_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
