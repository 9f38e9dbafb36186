/*
 * check_store.c: the promises of server/store/store.h, engine.h, registrations.h and
 * snapshots.h, on real LMDB and real body files in a temporary directory, and real processes
 * where a crash is the point: acknowledged submissions survive reopening and SIGKILL; refusals
 * change nothing; stamps and the seal fix each epoch's view (also across a reopen) and seals
 * prune what no epoch can hold; bounds, the refuse line, the async callback, body files, tidy
 * and retention, the compact form, group commit, backup.
 *
 * Each test gets a fresh directory with a store open in it (dir, store). Views are read as
 * publication reads them: seal the next epoch, then walk its view.
 */
#include "kv/kv.h"
#include "compress/compress.h"
#include "crypto/crypto.h"
#include "base/error.h"
#include "schema/encoding.h"
#include "schema/note.h"
#include "schema/registration.h"
#include "server/store/registrations.h"
#include "server/store/snapshots.h"
#include "server/store/internal.h"
#include "server/store/record_codec.h"
#include "server/store/store.h"
#include "test_keys.h"
#include "test_support.h"

#include <check.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define NAMESPACE "example"
#define PROVIDER  "provider-one"
#define MIB       ((size_t)1 << 20)

static char dir[256];
static struct store *store;

static struct store *open_at(const char *path, size_t map_size, unsigned refuse_percent)
{
	struct store_options options = {.path = path, .map_size = map_size, .refuse_percent = refuse_percent};
	struct store *opened = NULL;
	int rc = store_open(&options, &opened);
	ck_assert_msg(rc == 0, "store_open %s: %s", path, dirauth_strerror(rc));
	return opened;
}

/* Closes the test's store and opens its directory again. */
static void reopen(size_t map_size, unsigned refuse_percent)
{
	store_close(store);
	store = open_at(dir, map_size, refuse_percent);
}

static void setup(void)
{
	test_make_tempdir(dir, sizeof dir);
	store = open_at(dir, 0, 0);
}

static void teardown(void)
{
	store_close(store);
	store = NULL;
	test_remove_tree(dir);
}

/* An id whose bytes spell out (tag, index), so ids of different kinds never meet by accident. */
static void make_id(uint8_t id[32], uint8_t tag, uint32_t index)
{
	memset(id, tag, 32);
	for (int i = 0; i < 4; i++)
		id[28 + i] = (uint8_t)(index >> (24 - 8 * i));
}

/* A registration of one service with up to four endpoints: epoch 1, no bounds, and the note
 * "registration <service> sequence <sequence>". */
struct test_registration {
	struct store_registration r;
	uint8_t service_id[32];
	uint8_t endpoint_ids[4 * 32];
	uint8_t digest[32];
	char note[128];
};

static void set_note(struct test_registration *t, const void *note, size_t len)
{
	t->r.note = note;
	t->r.note_len = len;
	ck_assert_int_eq(crypto_sha256(note, len, t->digest), 0);
}

static void make_registration(struct test_registration *t, const char *namespace_name, const char *provider,
                              uint32_t service, uint64_t sequence, uint64_t expires)
{
	memset(t, 0, sizeof *t);
	make_id(t->service_id, 0x5e, service);
	t->r = (struct store_registration){.namespace_name = namespace_name,
	                                   .service_id = t->service_id,
	                                   .provider = provider,
	                                   .sequence = sequence,
	                                   .expires = expires,
	                                   .digest = t->digest,
	                                   .endpoint_ids = t->endpoint_ids,
	                                   .epoch = 1,
	                                   .max_records = UINT64_MAX,
	                                   .max_bytes = UINT64_MAX};
	snprintf(t->note, sizeof t->note, "registration %u sequence %llu", (unsigned)service,
	         (unsigned long long)sequence);
	set_note(t, t->note, strlen(t->note));
}

static void add_endpoint(struct test_registration *t, uint32_t endpoint)
{
	ck_assert(t->r.endpoint_count < 4);
	make_id(t->endpoint_ids + t->r.endpoint_count * 32, 0xe9, endpoint);
	t->r.endpoint_count++;
}

static int submit(struct store *to, struct test_registration *t)
{
	return store_registration_submit(to, &t->r, NULL);
}

/* Submits a registration (with endpoint unless 0) to the test's store; returns the outcome. */
static int reg(const char *namespace_name, const char *provider, uint32_t service, uint64_t sequence,
               uint64_t expires, uint32_t endpoint)
{
	struct test_registration t;
	make_registration(&t, namespace_name, provider, service, sequence, expires);
	if (endpoint)
		add_endpoint(&t, endpoint);
	return submit(store, &t);
}

/* Submits to epoch; returns the stamp. */
static uint64_t reg_stamped(uint32_t service, uint64_t sequence, uint64_t expires, uint64_t epoch)
{
	struct test_registration t;
	uint64_t stamp = 0;
	make_registration(&t, NAMESPACE, PROVIDER, service, sequence, expires);
	t.r.epoch = epoch;
	ck_assert_int_eq(store_registration_submit(store, &t.r, &stamp), 0);
	return stamp;
}

/* What a view walk saw, in order; every record's digest is checked against its note. */
#define WALK_MAX 64
struct walk {
	size_t count;
	uint8_t ids[WALK_MAX][32];
	uint64_t sequences[WALK_MAX];
	size_t note_lens[WALK_MAX];
	char notes[WALK_MAX][1024];
};

static int record_visit(void *context, const struct store_record *record)
{
	struct walk *w = context;
	uint8_t digest[32];
	ck_assert(w->count < WALK_MAX && record->note_len < sizeof w->notes[0]);
	ck_assert_int_eq(crypto_sha256(record->note, record->note_len, digest), 0);
	ck_assert_mem_eq(digest, record->digest, 32);
	memcpy(w->ids[w->count], record->service_id, 32);
	w->sequences[w->count] = record->sequence;
	w->note_lens[w->count] = record->note_len;
	memcpy(w->notes[w->count], record->note, record->note_len);
	w->notes[w->count][record->note_len] = 0;
	w->count++;
	return 0;
}

static void view_at(struct store *from, const char *namespace_name, uint64_t epoch, uint64_t now,
                    struct walk *w)
{
	memset(w, 0, sizeof *w);
	int rc = store_view_foreach(from, namespace_name, epoch, now, record_visit, w);
	ck_assert_msg(rc == 0, "view %llu: %s", (unsigned long long)epoch, dirauth_strerror(rc));
}

/* Seals the epoch after the sealed one (1 at first), with valid-after now; returns it. */
static uint64_t seal_next(struct store *s, uint64_t now)
{
	uint64_t epoch = 0;
	if (store_sealed(s, &epoch) != 0)
		epoch = 0;
	ck_assert_int_eq(store_seal(s, epoch + 1, now), 0);
	return epoch + 1;
}

/* The last view expect_view read. */
static struct walk seen;

/* Reads the view of epoch (0: seals the next epoch) into seen, expecting count records, the
 * first with note first (unless NULL). */
static void expect_view(const char *namespace_name, uint64_t epoch, uint64_t now, size_t count,
                        const char *first)
{
	view_at(store, namespace_name, epoch ? epoch : seal_next(store, now), now, &seen);
	ck_assert_uint_eq(seen.count, count);
	if (first)
		ck_assert_str_eq(seen.notes[0], first);
}

static int count_visit(void *context, const struct store_record *record)
{
	(void)record;
	(*(size_t *)context)++;
	return 0;
}

static size_t count_view(struct store *s, uint64_t now)
{
	size_t count = 0;
	ck_assert_int_eq(store_view_foreach(s, NAMESPACE, seal_next(s, now), now, count_visit, &count), 0);
	return count;
}

static uint64_t sequence_of(struct store *s, uint32_t service)
{
	uint8_t id[32];
	uint64_t sequence = 0;
	make_id(id, 0x5e, service);
	int rc = store_service_sequence(s, id, &sequence);
	ck_assert_msg(rc == 0, "sequence of %u: %s", (unsigned)service, dirauth_strerror(rc));
	return sequence;
}

static void assert_service_absent(struct store *s, uint32_t service)
{
	uint8_t id[32];
	uint64_t sequence = 0;
	make_id(id, 0x5e, service);
	ck_assert_int_eq(store_service_sequence(s, id, &sequence), DIRAUTH_ERR_NOT_FOUND);
}

static struct store_namespace_usage usage_of(const char *namespace_name)
{
	struct store_namespace_usage usage;
	ck_assert_int_eq(store_namespace_usage(store, namespace_name, &usage), 0);
	return usage;
}

/* Entries of one database of the store at dir (closed), read with kv directly. */
static int kv_count_visit(void *context, struct kv_val key, struct kv_val value)
{
	(void)key;
	(void)value;
	(*(size_t *)context)++;
	return 0;
}

/* Walks every entry of database in the closed store with visit. */
static void walk_entries(const char *database, kv_visitor visit, void *context)
{
	struct kv_env *env = NULL;
	struct kv_db db;
	struct kv_database d = {database, &db};
	struct kv_txn t;
	ck_assert_int_eq(kv_env_open(dir, MIB, &d, 1, &env), 0);
	kv_txn_begin(env, &t, KV_READ);
	ck_assert_int_eq(kv_txn_walk_prefix(&t, db, NULL, 0, visit, context), 0);
	kv_txn_abort(&t);
	kv_env_close(env);
}

static size_t count_entries(const char *database)
{
	size_t count = 0;
	walk_entries(database, kv_count_visit, &count);
	return count;
}

/* ---- bodies ---- */

/* len bytes of text that compresses, but not beyond the decoder's ratio guard. */
static uint8_t *make_body(size_t len, uint32_t x)
{
	uint8_t *body = malloc(len + 64);
	ck_assert_ptr_nonnull(body);
	for (size_t at = 0; at < len;) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		at += (size_t)snprintf((char *)body + at, 64, "record %06zu %08x\n", at, (unsigned)x);
	}
	return body;
}

/* Writes a body through a writer, in pieces of uneven sizes, and finishes it. */
static void finish_body(const char *namespace_name, uint64_t epoch, const void *body, size_t len,
                        struct store_body_info *info)
{
	struct store_body_writer *w = NULL;
	ck_assert_int_eq(store_body_begin(store, namespace_name, epoch, &w), 0);
	for (size_t at = 0, n; at < len; at += n) {
		n = 1000 + at % 7 < len - at ? 1000 + at % 7 : len - at;
		ck_assert_int_eq(store_body_write(w, (const uint8_t *)body + at, n), 0);
	}
	ck_assert_int_eq(store_body_finish(w, info), 0);
}

/* A published snapshot: its body ("body <epoch>" unless body is given) and "header <epoch>". */
static void put_snapshot(const char *namespace_name, uint64_t epoch, const void *body, size_t len,
                         struct store_body_info *info_out)
{
	struct store_body_info info;
	char header[64], text[64];
	if (!body) {
		len = (size_t)snprintf(text, sizeof text, "body %llu\n", (unsigned long long)epoch);
		body = text;
	}
	finish_body(namespace_name, epoch, body, len, &info);
	snprintf(header, sizeof header, "header %llu", (unsigned long long)epoch);
	ck_assert_int_eq(
	    store_snapshot_put(store, namespace_name, epoch, (const uint8_t *)header, strlen(header), &info),
	    0);
	if (info_out)
		*info_out = info;
}

static char path[512];

/* A path under the test's directory (static storage, reused). */
static const char *at(const char *relative)
{
	snprintf(path, sizeof path, "%s/%s", dir, relative);
	return path;
}

/* The names in a directory, sorted, joined by spaces (static storage, reused). */
static const char *list_dir(const char *directory)
{
	static char out[4096];
	struct dirent **names = NULL;
	int n = scandir(directory, &names, NULL, alphasort);
	out[0] = 0;
	for (int i = 0; i < n; i++) {
		size_t used = strlen(out);
		if (names[i]->d_name[0] != '.')
			snprintf(out + used, sizeof out - used, "%s%s", used ? " " : "", names[i]->d_name);
		free(names[i]);
	}
	free(names);
	return out;
}

static uint64_t latest(const char *namespace_name)
{
	uint64_t epoch = 0;
	ck_assert_int_eq(store_snapshot_latest(store, namespace_name, &epoch), 0);
	return epoch;
}

static uint64_t sealed_epoch(void)
{
	uint64_t epoch = 0;
	ck_assert_int_eq(store_sealed(store, &epoch), 0);
	return epoch;
}

/* Stores header "h" for epoch with info; returns the outcome. */
static int put_header(const char *namespace_name, uint64_t epoch, const struct store_body_info *info)
{
	return store_snapshot_put(store, namespace_name, epoch, (const uint8_t *)"h", 1, info);
}

static int body_check(const char *namespace_name, uint64_t epoch, int encoding)
{
	return store_body_check(store, namespace_name, epoch, (enum content_encoding)encoding);
}

/* Opens (and closes) a body file of NAMESPACE; returns the outcome. */
static int body_open(uint64_t epoch, int encoding)
{
	int fd = -1;
	uint64_t size = 0;
	int rc = store_body_open(store, NAMESPACE, epoch, (enum content_encoding)encoding, &fd, &size);
	if (rc == 0)
		close(fd);
	return rc;
}

/* ---- registrations ---- */

START_TEST(test_submit_and_read_back)
{
	struct test_registration t;
	struct store_statistics statistics;
	uint64_t stamp = 0;

	make_registration(&t, NAMESPACE, PROVIDER, 1, 7, 1000);
	add_endpoint(&t, 1);
	ck_assert_int_eq(store_registration_submit(store, &t.r, &stamp), 0);
	ck_assert_uint_eq(stamp, 1);
	ck_assert_uint_eq(sequence_of(store, 1), 7);
	expect_view(NAMESPACE, 0, 10, 1, NULL);
	ck_assert_mem_eq(seen.ids[0], t.service_id, 32);
	ck_assert_uint_eq(seen.sequences[0], 7);
	ck_assert_str_eq(seen.notes[0], "registration 1 sequence 7");

	/* A newer registration replaces the note and raises the sequence. */
	make_registration(&t, NAMESPACE, PROVIDER, 1, 8, 1000);
	add_endpoint(&t, 1);
	add_endpoint(&t, 2);
	ck_assert_int_eq(store_registration_submit(store, &t.r, &stamp), 0);
	ck_assert_uint_eq(stamp, 2); /* epoch 1 is sealed */
	ck_assert_uint_eq(sequence_of(store, 1), 8);
	expect_view(NAMESPACE, 0, 10, 1, "registration 1 sequence 8");
	assert_service_absent(store, 2);
	ck_assert_uint_eq(usage_of(NAMESPACE).records, 1);
	ck_assert_uint_eq(usage_of(NAMESPACE).bytes, strlen(t.note) + STORE_RECORD_FRAMING);

	ck_assert_int_eq(store_statistics(store, &statistics), 0);
	ck_assert_uint_eq(statistics.submissions, 2);
	ck_assert_uint_eq(statistics.commits, 2);
	ck_assert_uint_eq(statistics.refused_full, 0);
	ck_assert_uint_eq(statistics.map_size, STORE_DEFAULT_MAP_SIZE);
	ck_assert_uint_gt(statistics.map_used, 0);
}
END_TEST

START_TEST(test_rollback_refused)
{
	struct test_registration t;
	struct store_statistics statistics;

	ck_assert_int_eq(reg(NAMESPACE, PROVIDER, 1, 5, 1000, 0), 0);
	make_registration(&t, NAMESPACE, PROVIDER, 1, 5, 2000);
	set_note(&t, "replayed", 8);
	ck_assert_int_eq(submit(store, &t), DIRAUTH_ERR_ROLLBACK);
	ck_assert_int_eq(reg(NAMESPACE, PROVIDER, 1, 4, 2000, 9), DIRAUTH_ERR_ROLLBACK);
	ck_assert_int_eq(reg(NAMESPACE, PROVIDER, 1, 0, 2000, 0), DIRAUTH_ERR_ROLLBACK);

	ck_assert_uint_eq(sequence_of(store, 1), 5);
	expect_view(NAMESPACE, 0, 10, 1, "registration 1 sequence 5");
	expect_view(NAMESPACE, 0, 1500, 0, NULL); /* the refused ones would have expired later */

	/* The endpoint of the refused registration was not taken: another service can have it. */
	ck_assert_int_eq(reg(NAMESPACE, PROVIDER, 2, 1, 3000, 9), 0);
	ck_assert_int_eq(store_statistics(store, &statistics), 0);
	ck_assert_uint_eq(statistics.submissions, 5);
	ck_assert_uint_eq(statistics.commits, 2); /* refusals commit nothing */
}
END_TEST

START_TEST(test_service_collision_refused)
{
	char owner_namespace[STORE_NAME_MAX + 1], owner_provider[STORE_NAME_MAX + 1];
	uint8_t id[32];

	ck_assert_int_eq(reg(NAMESPACE, PROVIDER, 1, 1, 1000, 0), 0);
	/* Another provider cannot take the service id, whatever its sequence. */
	ck_assert_int_eq(reg(NAMESPACE, "provider-two", 1, 100, 1000, 0), DIRAUTH_ERR_COLLISION);
	/* A provider name that only extends the owner's is another provider. */
	ck_assert_int_eq(reg(NAMESPACE, PROVIDER "x", 1, 100, 1000, 0), DIRAUTH_ERR_COLLISION);
	/* Nor can the owner move it to another namespace. */
	ck_assert_int_eq(reg("other", PROVIDER, 1, 100, 1000, 0), DIRAUTH_ERR_COLLISION);

	ck_assert_uint_eq(sequence_of(store, 1), 1);
	make_id(id, 0x5e, 1);
	ck_assert_int_eq(store_service_owner(store, id, owner_namespace, owner_provider), 0);
	ck_assert_str_eq(owner_namespace, NAMESPACE);
	ck_assert_str_eq(owner_provider, PROVIDER);
	make_id(id, 0x5e, 2);
	ck_assert_int_eq(store_service_owner(store, id, owner_namespace, owner_provider),
	                 DIRAUTH_ERR_NOT_FOUND);
	expect_view(NAMESPACE, 0, 10, 1, "registration 1 sequence 1");
	expect_view("other", 1, 10, 0, NULL);
	ck_assert_uint_eq(usage_of("other").records, 0);
}
END_TEST

START_TEST(test_endpoint_collision_refused)
{
	struct test_registration t;

	ck_assert_int_eq(reg(NAMESPACE, PROVIDER, 1, 1, 1000, 100), 0);
	/* Service 2 asks for a fresh endpoint and service 1's: refused as a whole. */
	make_registration(&t, NAMESPACE, PROVIDER, 2, 1, 1000);
	add_endpoint(&t, 200);
	add_endpoint(&t, 100);
	ck_assert_int_eq(submit(store, &t), DIRAUTH_ERR_COLLISION);
	assert_service_absent(store, 2);
	expect_view(NAMESPACE, 0, 10, 1, NULL);

	/* The fresh endpoint was not recorded for service 2: service 3 can take it. */
	ck_assert_int_eq(reg(NAMESPACE, PROVIDER, 3, 1, 1000, 200), 0);
	/* An endpoint dropped by its service stays with it: nobody else gets it later. */
	ck_assert_int_eq(reg(NAMESPACE, PROVIDER, 1, 2, 1000, 0), 0);
	ck_assert_int_eq(reg(NAMESPACE, "provider-two", 4, 1, 1000, 100), DIRAUTH_ERR_COLLISION);
	assert_service_absent(store, 4);

	/* Its own service may list it again. */
	make_registration(&t, NAMESPACE, PROVIDER, 1, 3, 1000);
	add_endpoint(&t, 100);
	add_endpoint(&t, 100);
	ck_assert_int_eq(submit(store, &t), 0);
	ck_assert_uint_eq(sequence_of(store, 1), 3);
}
END_TEST

static int stop_after_two(void *context, const struct store_record *record)
{
	(void)record;
	int *calls = context;
	return ++*calls == 2 ? 42 : 0;
}

START_TEST(test_view_order_expiry_and_stop)
{
	int calls = 0;

	/* Submitted out of order; service n expires at 100 * n. */
	const uint32_t order[] = {5, 1, 4, 2, 3, 0x01000000, 256};
	for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
		ck_assert_int_eq(reg(NAMESPACE, PROVIDER, order[i], 1, 100 * (uint64_t)order[i], 0), 0);

	expect_view(NAMESPACE, 0, 0, 7, NULL);
	for (size_t i = 1; i < seen.count; i++)
		ck_assert_int_lt(memcmp(seen.ids[i - 1], seen.ids[i], 32), 0);
	ck_assert_str_eq(seen.notes[0], "registration 1 sequence 1");
	ck_assert_str_eq(seen.notes[5], "registration 256 sequence 1");
	ck_assert_str_eq(seen.notes[6], "registration 16777216 sequence 1");
	/* A visitor's non-zero return stops the walk and is returned. */
	ck_assert_int_eq(store_view_foreach(store, NAMESPACE, 1, 0, stop_after_two, &calls), 42);
	ck_assert_int_eq(calls, 2);

	/* expires <= valid-after is left out: at 299 only 1 and 2 are gone, at 300 also 3. */
	expect_view(NAMESPACE, 0, 299, 5, "registration 3 sequence 1");
	expect_view(NAMESPACE, 0, 300, 4, "registration 4 sequence 1");
	ck_assert_str_eq(seen.notes[1], "registration 5 sequence 1");

	/* A renewed registration is back in the view. */
	ck_assert_int_eq(reg(NAMESPACE, PROVIDER, 1, 2, 10000, 0), 0);
	expect_view(NAMESPACE, 0, 300, 5, "registration 1 sequence 2");
}
END_TEST

START_TEST(test_namespace_isolation)
{
	uint8_t id[32];

	/* Names chosen so that one is a prefix of the others. */
	const char *names[] = {"a", "a-b", "ab", "b"};
	for (uint32_t i = 0; i < 4; i++)
		for (uint32_t j = 0; j < 3; j++)
			ck_assert_int_eq(reg(names[i], PROVIDER, 10 * i + j, 1, 1000, 0), 0);
	for (uint32_t i = 0; i < 4; i++) {
		expect_view(names[i], 0, 0, 3, NULL);
		for (uint32_t j = 0; j < 3; j++) {
			make_id(id, 0x5e, 10 * i + j);
			ck_assert_mem_eq(seen.ids[j], id, 32);
		}
		ck_assert_uint_eq(usage_of(names[i]).records, 3);
	}
	expect_view("c", 0, 0, 0, NULL);
}
END_TEST

START_TEST(test_persistence_across_reopen)
{
	for (uint32_t i = 1; i <= 3; i++)
		ck_assert_int_eq(reg(NAMESPACE, PROVIDER, i, 10 + i, 1000, i), 0);
	ck_assert_int_eq(store_seal(store, 2, 0), 0);
	put_snapshot(NAMESPACE, 3, NULL, 0, NULL);
	reopen(0, 0);

	for (uint32_t i = 1; i <= 3; i++)
		ck_assert_uint_eq(sequence_of(store, i), 10 + i);
	ck_assert_uint_eq(sealed_epoch(), 2);
	expect_view(NAMESPACE, 2, 0, 3, NULL);
	ck_assert_str_eq(seen.notes[2], "registration 3 sequence 13");
	ck_assert_uint_eq(usage_of(NAMESPACE).records, 3);
	ck_assert_uint_eq(latest(NAMESPACE), 3);
	ck_assert_int_eq(body_check(NAMESPACE, 3, ENCODING_ZSTD), 0);
	/* Refusals are still enforced after reopening, and the seal still stamps. */
	ck_assert_int_eq(reg(NAMESPACE, PROVIDER, 1, 11, 1000, 0), DIRAUTH_ERR_ROLLBACK);
	ck_assert_int_eq(reg(NAMESPACE, PROVIDER, 9, 1, 1000, 2), DIRAUTH_ERR_COLLISION);
	ck_assert_uint_eq(reg_stamped(9, 1, 1000, 1), 3);
}
END_TEST

START_TEST(test_open_creates_private_directory)
{
	struct stat st;
	struct store_options options = {.path = path};
	struct store *other = open_at(at("state"), 0, 0);
	store_close(other);
	ck_assert_int_eq(stat(at("state"), &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	ck_assert_uint_eq(st.st_mode & 0777, 0700);

	/* A path that is a file is refused; missing parent directories are created, 0700. */
	test_write_file(at("file"), "x", 1, 0600);
	ck_assert_int_eq(store_open(&options, &other), DIRAUTH_ERR_IO);
	at("missing/state");
	ck_assert_int_eq(store_open(&options, &other), 0);
	store_close(other);
	ck_assert_int_eq(stat(at("missing"), &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0700);
	options.path = NULL;
	ck_assert_int_eq(store_open(&options, &other), DIRAUTH_ERR_CONFIG);
	ck_assert_ptr_null(other);
	store_close(NULL);
}
END_TEST

START_TEST(test_bad_input_refused)
{
	char long_name[STORE_NAME_MAX + 2];
	static uint8_t big_header[64 * 1024 + 1];
	struct test_registration t;
	struct store_body_info info = {{0}, {{0}}};
	struct store_body_writer *w = NULL;
	struct store_statistics statistics;
	struct store_namespace_usage usage;
	uint64_t value;
	size_t count = 0;
	const uint8_t *h = (const uint8_t *)"h";
	memset(long_name, 'a', sizeof long_name - 1);
	long_name[sizeof long_name - 1] = 0;

	make_registration(&t, NAMESPACE, PROVIDER, 1, 1, 1000);
	ck_assert_int_eq(store_registration_submit(store, NULL, NULL), DIRAUTH_ERR_SYNTAX);
	const char *namespaces[] = {NULL, "", long_name};
	for (int i = 0; i < 3; i++) {
		t.r.namespace_name = namespaces[i];
		ck_assert_int_eq(submit(store, &t), i < 2 ? DIRAUTH_ERR_SYNTAX : DIRAUTH_ERR_BOUNDS);
	}
	t.r.namespace_name = NAMESPACE;
	t.r.provider = long_name;
	ck_assert_int_eq(submit(store, &t), DIRAUTH_ERR_BOUNDS);
	t.r.provider = PROVIDER;
	t.r.service_id = NULL;
	ck_assert_int_eq(submit(store, &t), DIRAUTH_ERR_SYNTAX);
	t.r.service_id = t.service_id;
	t.r.endpoint_ids = NULL;
	t.r.endpoint_count = 1;
	ck_assert_int_eq(submit(store, &t), DIRAUTH_ERR_SYNTAX);
	t.r.endpoint_ids = t.endpoint_ids;
	t.r.endpoint_count = REGISTRATION_MAX_ENDPOINTS + 1; /* more than any registration lists */
	ck_assert_int_eq(submit(store, &t), DIRAUTH_ERR_SYNTAX);
	t.r.endpoint_count = 0;
	t.r.note = NULL;
	ck_assert_int_eq(submit(store, &t), DIRAUTH_ERR_SYNTAX);
	t.r.note = (const uint8_t *)t.note;
	t.r.digest = NULL;
	ck_assert_int_eq(submit(store, &t), DIRAUTH_ERR_SYNTAX);
	assert_service_absent(store, 1);
	ck_assert_int_eq(store_statistics(store, &statistics), 0);
	ck_assert_uint_eq(statistics.submissions, 0); /* refused before the queue */

	/* A name of exactly STORE_NAME_MAX bytes is accepted. */
	long_name[STORE_NAME_MAX] = 0;
	ck_assert_int_eq(reg(long_name, long_name, 1, 1, 1000, 0), 0);
	long_name[STORE_NAME_MAX] = 'a';

	ck_assert_int_eq(store_snapshot_put(store, long_name, 1, h, 1, &info), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(store_snapshot_put(store, NAMESPACE, 1, NULL, 3, &info), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(store_snapshot_put(store, NAMESPACE, 1, h, 0, &info), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(store_snapshot_put(store, NAMESPACE, 1, big_header, sizeof big_header, &info),
	                 DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(store_snapshot_latest(store, "", &value), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(body_check(NAMESPACE, 1, ENCODING_GZIP), DIRAUTH_ERR_NOT_FOUND);

	/* Views: only of the sealed epoch (nothing sealed yet), with a visitor and a valid name. */
	ck_assert_int_eq(store_sealed(store, &value), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(store_view_foreach(store, NAMESPACE, 1, 0, count_visit, &count), DIRAUTH_ERR_STALE);
	ck_assert_int_eq(store_seal(store, 1, 0), 0);
	ck_assert_int_eq(store_view_foreach(store, NAMESPACE, 1, 0, NULL, NULL), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(store_view_foreach(store, long_name, 1, 0, count_visit, &count), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(store_view_foreach(store, "", 1, 0, count_visit, &count), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(store_service_sequence(store, t.service_id, NULL), DIRAUTH_ERR_SYNTAX);

	/* Body names become directories: never a path out of bodies/. */
	const char *bodies[] = {"", "../escape", "a/b", ".hidden", long_name};
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(store_body_begin(store, bodies[i], 1, &w),
		                 i < 4 ? DIRAUTH_ERR_SYNTAX : DIRAUTH_ERR_BOUNDS);
	ck_assert_ptr_null(w);
	store_body_discard(NULL);

	ck_assert_int_eq(store_statistics(store, NULL), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(store_namespace_usage(store, long_name, &usage), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(store_namespace_usage(store, "unknown", &usage), 0);
	ck_assert_uint_eq(usage.records + usage.bytes, 0);
}
END_TEST

START_TEST(test_older_format_refused)
{
	struct kv_env *env = NULL;
	struct kv_db db;
	struct kv_txn t;
	struct store *other = NULL;
	struct store_options options = {.path = path};

	/* A store written before the format was recorded: services, with a record, and no meta; one
	 * whose recorded format is older than any this binary reads, and one newer. */
	struct kv_database databases[] = {{"services", &db}, {"meta", &db}, {"meta", &db}};
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(kv_env_open(at(databases[i].name), MIB, &databases[i], 1, &env), 0);
		kv_txn_begin(env, &t, KV_WRITE);
		if (i == 0)
			kv_txn_put(&t, db, "0123456789abcdef0123456789abcdef", 32, "provider", 8);
		else
			kv_txn_put(&t, db, "format", 6, i == 1 ? "\0\0\0\1" : "\0\0\0\5", 4);
		ck_assert_int_eq(kv_txn_commit(&t), 0);
		kv_env_close(env);
		ck_assert_int_eq(store_open(&options, &other), DIRAUTH_ERR_STORE);
		ck_assert_ptr_null(other);
		/* What the operator is told: the format found, if one was recorded. */
		uint64_t format = 0;
		ck_assert_int_eq(store_format_read(options.path, &format),
		                 i == 0 ? DIRAUTH_ERR_NOT_FOUND : 0);
		ck_assert_uint_eq(format, i == 0 ? 0 : i == 1 ? 1 : 5);
	}
}
END_TEST

/* ---- snapshots and bodies ---- */

START_TEST(test_snapshots_only_move_forward)
{
	struct buffer header;
	struct store_body_info info, got;
	uint64_t epoch = 0;
	buffer_init(&header);

	ck_assert_int_eq(store_snapshot_latest(store, NAMESPACE, &epoch), DIRAUTH_ERR_NOT_FOUND);
	put_snapshot(NAMESPACE, 1, NULL, 0, NULL);
	put_snapshot(NAMESPACE, 5, NULL, 0, &info);
	ck_assert_uint_eq(latest(NAMESPACE), 5);

	/* Equal and lower epochs are refused and change nothing. */
	ck_assert_int_eq(put_header(NAMESPACE, 5, &info), DIRAUTH_ERR_ROLLBACK);
	ck_assert_int_eq(put_header(NAMESPACE, 3, &info), DIRAUTH_ERR_ROLLBACK);
	ck_assert_int_eq(store_snapshot_get(store, NAMESPACE, 3, &header, &got), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_uint_eq(latest(NAMESPACE), 5);

	/* The header buffer is replaced, not appended to; info may be left out. */
	ck_assert_int_eq(store_snapshot_get(store, NAMESPACE, 5, &header, &got), 0);
	ck_assert_uint_eq(header.len, 8);
	ck_assert_mem_eq(header.data, "header 5", 8);
	ck_assert_mem_eq(&got, &info, sizeof info);
	ck_assert_int_eq(store_snapshot_get(store, NAMESPACE, 1, &header, NULL), 0);
	ck_assert_uint_eq(header.len, 8);
	ck_assert_mem_eq(header.data, "header 1", 8);

	/* Epochs are per namespace; an empty body is kept as such. */
	ck_assert_int_eq(store_snapshot_latest(store, "other", &epoch), DIRAUTH_ERR_NOT_FOUND);
	put_snapshot("other", 1, "", 0, NULL);
	ck_assert_int_eq(store_snapshot_get(store, "other", 1, &header, &got), 0);
	ck_assert_uint_eq(got.size[ENCODING_IDENTITY], 0);
	ck_assert_int_eq(body_check("other", 1, ENCODING_IDENTITY), 0);
	ck_assert_int_eq(body_check("other", 1, ENCODING_GZIP), 0);
	ck_assert_int_eq(store_snapshot_get(store, "other", 5, &header, &got), DIRAUTH_ERR_NOT_FOUND);

	reopen(0, 0);
	ck_assert_uint_eq(latest(NAMESPACE), 5);
	ck_assert_int_eq(put_header(NAMESPACE, 4, &info), DIRAUTH_ERR_ROLLBACK);
	put_snapshot(NAMESPACE, 6, NULL, 0, NULL);
	buffer_free(&header);
}
END_TEST

/* What store_snapshot_foreach visited. */
struct visited_headers {
	size_t count;
	uint64_t epochs[8];
	size_t stop_after; /* 0: never */
};

static int visit_header(void *context, uint64_t epoch, const uint8_t *note, size_t len)
{
	struct visited_headers *v = context;
	char expected[32];
	int n = snprintf(expected, sizeof expected, "header %llu", (unsigned long long)epoch);
	ck_assert_uint_eq(len, (size_t)n);
	ck_assert_mem_eq(note, expected, len);
	ck_assert_uint_lt(v->count, 8);
	v->epochs[v->count++] = epoch;
	return v->stop_after && v->count == v->stop_after ? 7 : 0;
}

/* The headers from an epoch on, in order, headers alone included, per namespace: what an
 * authority catching up asks its peers for (GET /v1/<ns>/snapshots/from/<epoch>). */
START_TEST(test_snapshot_headers_from_an_epoch)
{
	struct visited_headers v = {0};
	ck_assert_int_eq(store_snapshot_foreach(store, NAMESPACE, 0, visit_header, &v), 0);
	ck_assert_uint_eq(v.count, 0);
	put_snapshot(NAMESPACE, 3, NULL, 0, NULL);
	ck_assert_int_eq(store_snapshot_put(store, NAMESPACE, 7, (const uint8_t *)"header 7", 8, NULL),
	                 0); /* a header alone */
	put_snapshot(NAMESPACE, 9, NULL, 0, NULL);
	put_snapshot("other", 8, NULL, 0, NULL);

	ck_assert_int_eq(store_snapshot_foreach(store, NAMESPACE, 0, visit_header, &v), 0);
	ck_assert_uint_eq(v.count, 3);
	ck_assert_uint_eq(v.epochs[0], 3);
	ck_assert_uint_eq(v.epochs[1], 7);
	ck_assert_uint_eq(v.epochs[2], 9);
	v = (struct visited_headers){0};
	ck_assert_int_eq(store_snapshot_foreach(store, NAMESPACE, 7, visit_header, &v), 0);
	ck_assert_uint_eq(v.count, 2);
	ck_assert_uint_eq(v.epochs[0], 7);
	v = (struct visited_headers){0};
	ck_assert_int_eq(store_snapshot_foreach(store, NAMESPACE, 10, visit_header, &v), 0);
	ck_assert_uint_eq(v.count, 0);
	/* The visitor's non-zero value stops the walk and is returned. */
	v = (struct visited_headers){.stop_after = 1};
	ck_assert_int_eq(store_snapshot_foreach(store, NAMESPACE, 4, visit_header, &v), 7);
	ck_assert_uint_eq(v.count, 1);
	ck_assert_uint_eq(v.epochs[0], 7);
	/* A namespace with nothing stored, and a refused name. */
	v = (struct visited_headers){0};
	ck_assert_int_eq(store_snapshot_foreach(store, "nothing", 0, visit_header, &v), 0);
	ck_assert_uint_eq(v.count, 0);
	ck_assert_int_eq(store_snapshot_foreach(store, NAMESPACE, 0, NULL, &v), DIRAUTH_ERR_SYNTAX);
}
END_TEST

START_TEST(test_body_files)
{
	const size_t len = 300 * 1000;
	struct store_body_info info;
	struct store_body_writer *w = NULL;
	uint8_t digest[32];
	uint64_t size = 0;
	int fd = -1;
	uint8_t *body = make_body(len, 7);

	finish_body(NAMESPACE, 1, body, len, &info);
	ck_assert_uint_eq(info.size[ENCODING_IDENTITY], len);
	ck_assert_int_eq(crypto_sha256(body, len, digest), 0);
	ck_assert_mem_eq(info.sha256[ENCODING_IDENTITY], digest, 32);
	ck_assert_int_eq(body_open(1, ENCODING_ZSTD), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(put_header(NAMESPACE, 1, &info), 0);

	/* Each encoding's file: the stored size and digest, and it decodes to the body. */
	for (int e = 0; e < ENCODING_COUNT; e++) {
		struct buffer decoded;
		ck_assert_int_eq(store_body_open(store, NAMESPACE, 1, (enum content_encoding)e, &fd, &size),
		                 0);
		ck_assert_uint_eq(size, info.size[e]);
		uint8_t *data = malloc(size + 1);
		ck_assert_int_eq(read(fd, data, size + 1), (ssize_t)size); /* from 0 to the end */
		close(fd);
		ck_assert_int_eq(crypto_sha256(data, size, digest), 0);
		ck_assert_mem_eq(info.sha256[e], digest, 32);
		ck_assert(e == ENCODING_IDENTITY || size < len / 2);
		buffer_init(&decoded);
		ck_assert_int_eq(compress_decode((enum content_encoding)e, data, size, len, &decoded), 0);
		ck_assert_uint_eq(decoded.len, len);
		ck_assert_mem_eq(decoded.data, body, len);
		buffer_free(&decoded);
		free(data);
		ck_assert_int_eq(body_check(NAMESPACE, 1, e), 0);
	}

	/* Damage: a changed byte is found by the check; a changed size already by the open. */
	fd = open(at("bodies/" NAMESPACE "/1.identity"), O_WRONLY);
	ck_assert_int_eq(pwrite(fd, "X", 1, 1000), 1);
	close(fd);
	ck_assert_int_eq(body_open(1, ENCODING_IDENTITY), 0);
	close(fd);
	ck_assert_int_eq(body_check(NAMESPACE, 1, ENCODING_IDENTITY), DIRAUTH_ERR_MISMATCH);
	ck_assert_int_eq(truncate(at("bodies/" NAMESPACE "/1.zstd"), (off_t)info.size[ENCODING_ZSTD] - 1), 0);
	ck_assert_int_eq(body_open(1, ENCODING_ZSTD), DIRAUTH_ERR_MISMATCH);
	ck_assert_int_eq(body_check(NAMESPACE, 1, ENCODING_ZSTD), DIRAUTH_ERR_MISMATCH);
	ck_assert_int_eq(body_check(NAMESPACE, 1, ENCODING_GZIP), 0);
	ck_assert_int_eq(body_open(1, ENCODING_COUNT), DIRAUTH_ERR_SYNTAX);

	/* A discarded body leaves no file. */
	ck_assert_int_eq(store_body_begin(store, NAMESPACE, 2, &w), 0);
	ck_assert_int_eq(store_body_write(w, body, 5000), 0);
	store_body_discard(w);
	ck_assert_str_eq(list_dir(at("bodies/" NAMESPACE)), "1.gzip 1.identity 1.zstd");
	free(body);
}
END_TEST

START_TEST(test_orphan_bodies_tidied_at_open)
{
	struct store_body_info info;

	put_snapshot(NAMESPACE, 1, NULL, 0, NULL);
	put_snapshot(NAMESPACE, 3, NULL, 0, NULL);
	/* Finished but never stored: one refused (older than the latest), one past the latest, one
	 * of a namespace without snapshots; and parts of bodies whose writing was cut short. */
	finish_body(NAMESPACE, 2, "two", 3, &info);
	ck_assert_int_eq(put_header(NAMESPACE, 2, &info), DIRAUTH_ERR_ROLLBACK);
	finish_body(NAMESPACE, 4, "four", 4, &info);
	finish_body("fresh", 1, "one", 3, &info);
	test_write_file(at("bodies/" NAMESPACE "/5.zstd.part"), "x", 1, 0600);
	test_write_file(at("bodies/" NAMESPACE "/3.gzip.part"), "x", 1, 0600);
	ck_assert_str_eq(
	    list_dir(at("bodies/" NAMESPACE)),
	    "1.gzip 1.identity 1.zstd 2.gzip 2.identity 2.zstd 3.gzip 3.gzip.part 3.identity 3.zstd "
	    "4.gzip 4.identity 4.zstd 5.zstd.part");

	reopen(0, 0);
	ck_assert_str_eq(list_dir(at("bodies/" NAMESPACE)),
	                 "1.gzip 1.identity 1.zstd 3.gzip 3.identity 3.zstd");
	ck_assert_str_eq(list_dir(at("bodies/fresh")), "");
	for (int e = 0; e < ENCODING_COUNT; e++)
		ck_assert_int_eq(body_check(NAMESPACE, 3, e), 0);
}
END_TEST

START_TEST(test_retention_keeps_headers)
{
	struct store_body_info info;
	struct buffer header;
	buffer_init(&header);
	for (uint64_t e = 1; e <= 4; e++)
		put_snapshot(NAMESPACE, e, NULL, 0, NULL);
	put_snapshot("other", 1, NULL, 0, NULL);

	ck_assert_int_eq(store_retain(store, NAMESPACE, 3), 0);
	ck_assert_int_eq(store_retain(store, "unknown", 3), 0);
	for (int pass = 0; pass < 2; pass++) {
		for (uint64_t e = 1; e <= 2; e++) {
			ck_assert_int_eq(store_snapshot_get(store, NAMESPACE, e, &header, &info),
			                 DIRAUTH_ERR_STALE);
			ck_assert_int_eq(store_snapshot_get(store, NAMESPACE, e, &header, NULL), 0);
			ck_assert_mem_eq(header.data, e == 1 ? "header 1" : "header 2", 8);
			ck_assert_int_eq(body_open(e, ENCODING_GZIP), DIRAUTH_ERR_STALE);
			ck_assert_int_eq(body_check(NAMESPACE, e, ENCODING_IDENTITY), DIRAUTH_ERR_STALE);
		}
		ck_assert_int_eq(store_snapshot_get(store, NAMESPACE, 3, &header, &info), 0);
		ck_assert_int_eq(body_check(NAMESPACE, 3, ENCODING_ZSTD), 0);
		ck_assert_int_eq(body_check("other", 1, ENCODING_ZSTD), 0);
		ck_assert_uint_eq(latest(NAMESPACE), 4);
		ck_assert_str_eq(list_dir(at("bodies/" NAMESPACE)),
		                 "3.gzip 3.identity 3.zstd 4.gzip 4.identity 4.zstd");
		reopen(0, 0); /* and still so after reopening */
	}
	ck_assert_int_eq(put_header(NAMESPACE, 2, &info), DIRAUTH_ERR_ROLLBACK);
	put_snapshot(NAMESPACE, 5, NULL, 0, NULL);
	buffer_free(&header);
}
END_TEST

/* ---- diffs ---- */

/* A diff of text to target from the body whose digest is base, written, measured and kept. */
static int put_diff(uint64_t target, const uint8_t base[32], const char *text, struct store_body_info *info)
{
	struct store_body_writer *w = NULL;
	ck_assert_int_eq(store_diff_begin(store, NAMESPACE, target, base, &w), 0);
	ck_assert_int_eq(store_body_write(w, text, strlen(text)), 0);
	ck_assert_int_eq(store_diff_measure(w, info), 0);
	return store_diff_keep(w);
}

/* How many names of the namespace's body directory hold needle. */
static size_t names_holding(const char *needle)
{
	size_t count = 0;
	for (const char *p = list_dir(at("bodies/" NAMESPACE)); (p = strstr(p, needle)); p += strlen(needle))
		count++;
	return count;
}

/* The name of a diff file to target from base in the namespace's body directory (static). */
static const char *diff_name(uint64_t target, const uint8_t base[32], const char *suffix)
{
	static char name[256];
	char hex[65];
	hex_encode(base, 32, hex);
	snprintf(name, sizeof name, "bodies/" NAMESPACE "/%llu.from-%s.%s", (unsigned long long)target, hex,
	         suffix);
	return at(name);
}

START_TEST(test_diff_files)
{
	struct store_body_info b1, b2, d;
	struct store_body_writer *w = NULL;
	uint8_t unknown[32];
	uint64_t size = 0;
	int fd = -1;
	memset(unknown, 0x5a, sizeof unknown);
	put_snapshot(NAMESPACE, 1, NULL, 0, &b1);
	put_snapshot(NAMESPACE, 2, NULL, 0, &b2);
	put_snapshot(NAMESPACE, 3, NULL, 0, NULL);
	const uint8_t *from1 = b1.sha256[ENCODING_IDENTITY], *from2 = b2.sha256[ENCODING_IDENTITY];

	/* Kept while both bodies are; each encoding decodes to the diff written. */
	ck_assert_int_eq(put_diff(3, from1, "the diff from 1 to 3\n", &d), 0);
	ck_assert_uint_eq(d.size[ENCODING_IDENTITY], 21);
	ck_assert_int_eq(put_diff(3, from2, "the diff from 2 to 3\n", &d), 0);
	for (int e = 0; e < ENCODING_COUNT; e++) {
		struct buffer decoded;
		ck_assert_int_eq(
		    store_diff_open(store, NAMESPACE, 3, from2, (enum content_encoding)e, &fd, &size), 0);
		ck_assert_uint_eq(size, d.size[e]);
		uint8_t data[256];
		ck_assert_int_eq(read(fd, data, sizeof data), (ssize_t)size);
		close(fd);
		buffer_init(&decoded);
		ck_assert_int_eq(compress_decode((enum content_encoding)e, data, size, 1024, &decoded), 0);
		ck_assert_uint_eq(decoded.len, 21);
		ck_assert_mem_eq(decoded.data, "the diff from 2 to 3\n", 21);
		buffer_free(&decoded);
	}
	ck_assert_uint_eq(names_holding(".from-"), 2 * ENCODING_COUNT);

	/* None from an unknown base or to another epoch; a discarded diff leaves no file; a diff from
	 * a base or to a target not stored is not kept, and its parts go; keeping asks for a
	 * measure first. */
	ck_assert_int_eq(store_diff_open(store, NAMESPACE, 3, unknown, ENCODING_ZSTD, &fd, &size),
	                 DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(store_diff_open(store, NAMESPACE, 2, from1, ENCODING_ZSTD, &fd, &size),
	                 DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(store_diff_open(store, "../x", 3, from1, ENCODING_ZSTD, &fd, &size),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(store_diff_begin(store, NAMESPACE, 2, from1, &w), 0);
	ck_assert_int_eq(store_body_write(w, "x", 1), 0);
	ck_assert_int_eq(store_diff_measure(w, &d), 0);
	store_body_discard(w);
	ck_assert_int_eq(put_diff(3, unknown, "x", &d), DIRAUTH_ERR_STALE);
	ck_assert_int_eq(put_diff(9, from1, "x", &d), DIRAUTH_ERR_STALE);
	ck_assert_int_eq(store_diff_begin(store, NAMESPACE, 2, from1, &w), 0);
	ck_assert_int_eq(store_diff_keep(w), DIRAUTH_ERR_SYNTAX);
	ck_assert_uint_eq(names_holding(".from-"), 2 * ENCODING_COUNT);
	ck_assert_uint_eq(names_holding(".part"), 0);

	/* At open: a diff's parts, and a diff whose base is no stored body, are removed. */
	test_write_file(diff_name(2, from1, "zstd.part"), "x", 1, 0600);
	test_write_file(diff_name(3, unknown, "gzip"), "x", 1, 0600);
	reopen(0, 0);
	ck_assert_uint_eq(names_holding(".from-"), 2 * ENCODING_COUNT);
	ck_assert_uint_eq(names_holding(".part"), 0);

	/* Retention removes the diffs from a body it removes, and those to it. */
	ck_assert_int_eq(store_retain(store, NAMESPACE, 2), 0);
	ck_assert_int_eq(store_diff_open(store, NAMESPACE, 3, from1, ENCODING_ZSTD, &fd, &size),
	                 DIRAUTH_ERR_NOT_FOUND);
	ck_assert(access(diff_name(3, from1, "identity"), F_OK) != 0);
	ck_assert_int_eq(store_diff_open(store, NAMESPACE, 3, from2, ENCODING_ZSTD, &fd, &size), 0);
	close(fd);
	ck_assert_int_eq(store_retain(store, NAMESPACE, 4), 0);
	ck_assert_uint_eq(names_holding(".from-"), 0);
	ck_assert_str_eq(list_dir(at("bodies/" NAMESPACE)), "");
}
END_TEST

/* ---- record shards ---- */

/* The record shards of epoch at bits 1: two shards, "a<epoch>" and "bb<epoch>". */
static int put_shards(uint64_t epoch)
{
	struct store_record_shards_writer *w = NULL;
	char first[32], second[32];
	snprintf(first, sizeof first, "a%llu", (unsigned long long)epoch);
	snprintf(second, sizeof second, "bb%llu", (unsigned long long)epoch);
	ck_assert_int_eq(store_record_shards_begin(store, NAMESPACE, epoch, 1, &w), 0);
	ck_assert_int_eq(store_record_shards_add(w, (const uint8_t *)first, strlen(first)), 0);
	ck_assert_int_eq(store_record_shards_add(w, (const uint8_t *)second, strlen(second)), 0);
	return store_record_shards_finish(w);
}

START_TEST(test_record_shard_files)
{
	struct store_record_shards_writer *w = NULL;
	struct buffer shard;
	unsigned bits = 99;
	buffer_init(&shard);
	put_snapshot(NAMESPACE, 1, NULL, 0, NULL);
	put_snapshot(NAMESPACE, 2, NULL, 0, NULL);

	/* Each shard read back by its index; the bits alone for UINT32_MAX; no shard past them. */
	ck_assert_int_eq(put_shards(1), 0);
	ck_assert_int_eq(put_shards(2), 0);
	ck_assert(store_record_shards_held(store, NAMESPACE, 1));
	ck_assert_int_eq(store_record_shard_read(store, NAMESPACE, 2, UINT32_MAX, &bits, &shard), 0);
	ck_assert_uint_eq(bits, 1);
	ck_assert_int_eq(store_record_shard_read(store, NAMESPACE, 2, 1, &bits, &shard), 0);
	ck_assert_uint_eq(shard.len, 3);
	ck_assert_mem_eq(shard.data, "bb2", 3);
	ck_assert_int_eq(store_record_shard_read(store, NAMESPACE, 1, 0, &bits, &shard), 0);
	ck_assert_mem_eq(shard.data, "a1", 2);
	ck_assert_int_eq(store_record_shard_read(store, NAMESPACE, 2, 2, &bits, &shard),
	                 DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(store_record_shard_read(store, NAMESPACE, 3, 0, &bits, &shard),
	                 DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(store_record_shard_read(store, "../x", 1, 0, &bits, &shard), DIRAUTH_ERR_SYNTAX);

	/* Not kept for an epoch without a body; a writer finished early, or given a shard too many, or
	 * discarded leaves no file; bits over 24 are refused. */
	ck_assert_int_eq(put_shards(9), DIRAUTH_ERR_STALE);
	ck_assert_int_eq(store_record_shards_begin(store, NAMESPACE, 2, 25, &w), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(store_record_shards_begin(store, NAMESPACE, 2, 0, &w), 0);
	ck_assert_int_eq(store_record_shards_add(w, (const uint8_t *)"x", 1), 0);
	ck_assert_int_eq(store_record_shards_add(w, (const uint8_t *)"y", 1), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(store_record_shards_finish(w), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(store_record_shards_begin(store, NAMESPACE, 2, 1, &w), 0);
	ck_assert_int_eq(store_record_shards_finish(w), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(store_record_shards_begin(store, NAMESPACE, 2, 1, &w), 0);
	store_record_shards_discard(w);
	ck_assert_uint_eq(names_holding(".records"), 2);
	ck_assert_uint_eq(names_holding(".part"), 0);
	ck_assert_int_eq(store_record_shard_read(store, NAMESPACE, 2, 1, &bits, &shard), 0);
	ck_assert_mem_eq(shard.data, "bb2", 3);

	/* A file whose index does not hold together is refused, not read past. */
	test_write_file(at("bodies/" NAMESPACE "/1.records"), "a1bb2XXXXXXXX", 13, 0600);
	ck_assert_int_eq(store_record_shard_read(store, NAMESPACE, 1, 0, &bits, &shard),
	                 DIRAUTH_ERR_MISMATCH);
	ck_assert_int_eq(put_shards(1), 0);

	/* At open: a part file, and the shards of an epoch whose body is not stored, are removed. */
	test_write_file(at("bodies/" NAMESPACE "/2.records.part"), "x", 1, 0600);
	test_write_file(at("bodies/" NAMESPACE "/7.records"), "x", 1, 0600);
	reopen(0, 0);
	ck_assert_uint_eq(names_holding(".records"), 2);
	ck_assert_uint_eq(names_holding(".part"), 0);

	/* Retention removes them with their body. */
	ck_assert_int_eq(store_retain(store, NAMESPACE, 2), 0);
	ck_assert(!store_record_shards_held(store, NAMESPACE, 1));
	ck_assert(store_record_shards_held(store, NAMESPACE, 2));
	ck_assert_int_eq(store_record_shard_read(store, NAMESPACE, 1, 0, &bits, &shard),
	                 DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(store_retain(store, NAMESPACE, 3), 0);
	ck_assert_str_eq(list_dir(at("bodies/" NAMESPACE)), "");
	buffer_free(&shard);
}
END_TEST

/* ---- stamps, the seal, bounds ---- */

START_TEST(test_stamps)
{
	uint64_t sealed = 0;
	size_t count = 0;

	/* Nothing sealed: the epoch given, but never below a stamp given before (a submitter whose
	 * clock read 4 just before another's read 5, reaching the committer after it). Sealed at 4:
	 * at least one past the sealed epoch. */
	ck_assert_int_eq(store_sealed(store, &sealed), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_uint_eq(reg_stamped(2, 1, 1000, 3), 3);
	ck_assert_uint_eq(reg_stamped(1, 1, 1000, 5), 5);
	ck_assert_uint_eq(reg_stamped(7, 1, 1000, 4), 5);
	ck_assert_int_eq(store_seal(store, 4, 0), 0);
	ck_assert_uint_eq(reg_stamped(3, 1, 1000, 2), 5);
	ck_assert_uint_eq(reg_stamped(4, 1, 1000, 4), 5);
	ck_assert_uint_eq(reg_stamped(5, 1, 1000, 5), 5);
	ck_assert_uint_eq(reg_stamped(6, 1, 1000, 7), 7);
	/* Sealing at or below the sealed epoch changes nothing. */
	ck_assert_int_eq(store_seal(store, 3, 0), 0);
	ck_assert_int_eq(store_seal(store, 4, 0), 0);
	ck_assert_uint_eq(sealed_epoch(), 4);

	/* The view of 4 holds what is stamped 4 or lower: service 2 only. Others are STALE. */
	expect_view(NAMESPACE, 4, 0, 1, "registration 2 sequence 1");
	ck_assert_int_eq(store_view_foreach(store, NAMESPACE, 3, 0, count_visit, &count), DIRAUTH_ERR_STALE);
	ck_assert_int_eq(store_view_foreach(store, NAMESPACE, 5, 0, count_visit, &count), DIRAUTH_ERR_STALE);
	ck_assert_int_eq(store_seal(store, 6, 0), 0);
	expect_view(NAMESPACE, 6, 0, 6, NULL); /* all but service 6, stamped 7 */
	ck_assert_int_eq(store_view_foreach(store, NAMESPACE, 4, 0, count_visit, &count), DIRAUTH_ERR_STALE);
}
END_TEST

/* Submits service's registration with note text, stamped for epoch, under max_bytes. */
static uint64_t reg_stamped_bounded(uint32_t service, uint64_t sequence, const char *text, uint64_t epoch,
                                    uint64_t max_bytes)
{
	struct test_registration t;
	uint64_t stamp = 0;
	make_registration(&t, NAMESPACE, PROVIDER, service, sequence, 1000);
	set_note(&t, text, strlen(text));
	t.r.epoch = epoch;
	t.r.max_bytes = max_bytes;
	ck_assert_int_eq(store_registration_submit(store, &t.r, &stamp), 0);
	return stamp;
}

/* The sum of the note lengths and their framing in the view of epoch (sealed first). */
static uint64_t view_bytes(uint64_t epoch)
{
	ck_assert_int_eq(store_seal(store, epoch, 0), 0);
	view_at(store, NAMESPACE, epoch, 0, &seen);
	uint64_t bytes = 0;
	for (size_t i = 0; i < seen.count; i++)
		bytes += seen.note_lens[i] + STORE_RECORD_FRAMING;
	return bytes;
}

START_TEST(test_stamps_keep_every_view_within_the_bounds)
{
	/* A long version replaced by a short one for epoch 2 frees room; a registration whose
	 * submitter's clock still said epoch 1 reaches the committer after it. Stamped 1, it would
	 * join the long version in epoch 1's view, past the bound that both were checked against;
	 * it is stamped 2, and every view stays within the bound. */
	static const char long_note[] = "a long registration, some thirty bytes more than the short one";
	static const char short_note[] = "short";
	const uint64_t bound = strlen(long_note) + strlen(short_note) + 2 * STORE_RECORD_FRAMING;
	ck_assert_uint_eq(reg_stamped_bounded(1, 1, long_note, 1, bound), 1);
	ck_assert_uint_eq(reg_stamped_bounded(1, 2, short_note, 2, bound), 2);
	uint64_t stamp = reg_stamped_bounded(2, 1, long_note, 1, bound);
	ck_assert_uint_le(view_bytes(1), bound);
	ck_assert_uint_eq(seen.count, 1);
	ck_assert_uint_le(view_bytes(2), bound);
	ck_assert_uint_eq(seen.count, 2);
	ck_assert_uint_eq(stamp, 2);
}
END_TEST

START_TEST(test_seal_fixes_view)
{
	struct walk before;

	for (uint32_t i = 1; i <= 5; i++)
		ck_assert_int_eq(reg(NAMESPACE, PROVIDER, i, 1, 1000, i), 0);
	ck_assert_int_eq(store_seal(store, 1, 0), 0);
	view_at(store, NAMESPACE, 1, 0, &before);
	ck_assert_uint_eq(before.count, 5);

	/* Later registrations for the same services, and a new one: view 1 does not move. */
	for (uint32_t i = 1; i <= 3; i++)
		ck_assert_int_eq(reg(NAMESPACE, PROVIDER, i, 2, 2000, i), 0);
	ck_assert_int_eq(reg(NAMESPACE, PROVIDER, 6, 1, 1000, 0), 0);
	expect_view(NAMESPACE, 1, 0, 5, NULL);
	ck_assert(memcmp(&before, &seen, sizeof before) == 0); /* both zeroed, then filled */

	/* Nor after a reopen: a rebuilt snapshot reads the same records, byte for byte. */
	reopen(0, 0);
	expect_view(NAMESPACE, 1, 0, 5, NULL);
	ck_assert(memcmp(&before, &seen, sizeof before) == 0); /* both zeroed, then filled */

	ck_assert_int_eq(store_seal(store, 2, 0), 0);
	expect_view(NAMESPACE, 2, 0, 6, "registration 1 sequence 2");
	ck_assert_str_eq(seen.notes[3], "registration 4 sequence 1");
}
END_TEST

START_TEST(test_replaced_versions_kept_per_epoch)
{
	struct walk again;

	/* Before any seal: service 2 at epochs 1 then 2; service 3 at 1, 3, then, after a reopen
	 * (the stamps given are not remembered), at 2: an epoch lower than the version it replaces,
	 * so the newest serves every epoch from 2 on. */
	const uint64_t before[][3] = {{1, 1, 1}, {2, 1, 1}, {3, 1, 1}, {2, 2, 2}, {3, 2, 3}};
	for (size_t i = 0; i < sizeof before / sizeof before[0]; i++)
		ck_assert_uint_eq(reg_stamped((uint32_t)before[i][0], before[i][1], 1000, before[i][2]),
		                  before[i][2]);
	reopen(0, 0);
	ck_assert_uint_eq(reg_stamped(3, 3, 1000, 2), 2);
	ck_assert_int_eq(store_seal(store, 1, 0), 0);
	/* Sealed at 1, service 1 replaced twice, stamped 2 then 3. */
	ck_assert_uint_eq(reg_stamped(1, 2, 1000, 2), 2);
	ck_assert_uint_eq(reg_stamped(1, 3, 1000, 3), 3);

	/* Each epoch holds, per service, the latest version stamped at or before it. */
	const uint64_t expected[3][3] = {{1, 1, 1}, {2, 2, 3}, {3, 2, 3}};
	for (uint64_t epoch = 1; epoch <= 3; epoch++) {
		if (epoch > 1)
			ck_assert_int_eq(store_seal(store, epoch, 0), 0);
		expect_view(NAMESPACE, epoch, 0, 3, NULL);
		for (int i = 0; i < 3; i++)
			ck_assert_msg(seen.sequences[i] == expected[epoch - 1][i],
			              "epoch %llu service %d: sequence %llu", (unsigned long long)epoch,
			              i + 1, (unsigned long long)seen.sequences[i]);
		if (epoch == 1) {
			/* Also after a reopen while versions for epochs 2 and 3 wait. */
			reopen(0, 0);
			view_at(store, NAMESPACE, 1, 0, &again);
			ck_assert(memcmp(&seen, &again, sizeof seen) == 0); /* both zeroed, then filled */
		}
	}
	ck_assert_uint_eq(usage_of(NAMESPACE).records, 3);
	store_close(store);
	store = NULL;
	/* Sealed at 3, no epoch can hold a replaced version any more: none is kept. */
	ck_assert_uint_eq(count_entries("previous"), 0);
	ck_assert_uint_eq(count_entries("replaced"), 0);
}
END_TEST

START_TEST(test_seal_prunes_expired)
{
	const uint64_t each = strlen("registration 1 sequence 1") + STORE_RECORD_FRAMING;

	for (uint32_t i = 1; i <= 4; i++)
		ck_assert_int_eq(reg(NAMESPACE, PROVIDER, i, 1, 100 * (uint64_t)i, i), 0);
	ck_assert_uint_eq(usage_of(NAMESPACE).bytes, 4 * each);
	/* Sealed with valid-after 250: services 1 and 2 are gone, and counted no more. */
	ck_assert_int_eq(store_seal(store, 1, 250), 0);
	ck_assert_uint_eq(usage_of(NAMESPACE).records, 2);
	ck_assert_uint_eq(usage_of(NAMESPACE).bytes, 2 * each);
	expect_view(NAMESPACE, 1, 250, 2, "registration 3 sequence 1");
	/* Their service ids and endpoints stay taken: no rollback, no takeover. */
	ck_assert_int_eq(reg(NAMESPACE, PROVIDER, 1, 1, 5000, 0), DIRAUTH_ERR_ROLLBACK);
	ck_assert_int_eq(reg(NAMESPACE, PROVIDER, 7, 1, 5000, 2), DIRAUTH_ERR_COLLISION);

	/* A record stamped past the sealed epoch stays until a seal reaches it, while the epoch
	 * sealed holds the version it replaced. */
	ck_assert_uint_eq(reg_stamped(5, 1, 5000, 1), 2);
	ck_assert_uint_eq(reg_stamped(5, 2, 400, 3), 3);
	ck_assert_int_eq(store_seal(store, 2, 500), 0);
	expect_view(NAMESPACE, 2, 500, 1, "registration 5 sequence 1");
	ck_assert_uint_eq(usage_of(NAMESPACE).records, 1);
	ck_assert_int_eq(store_seal(store, 3, 500), 0);
	expect_view(NAMESPACE, 3, 500, 0, NULL);
	ck_assert_uint_eq(usage_of(NAMESPACE).records, 0);
	ck_assert_uint_eq(usage_of(NAMESPACE).bytes, 0);

	/* Renewed, a service counts again. */
	ck_assert_int_eq(reg(NAMESPACE, PROVIDER, 5, 3, 5000, 0), 0);
	ck_assert_uint_eq(usage_of(NAMESPACE).records, 1);
	store_close(store);
	store = NULL;
	ck_assert_uint_eq(count_entries("records"), 1);
	ck_assert_uint_eq(count_entries("expiry"), 1);
	ck_assert_uint_eq(count_entries("previous"), 0);
	ck_assert_uint_eq(count_entries("replaced"), 0);
}
END_TEST

/* The expiry index as stored, in its order: each entry's key length, expiry time and slot (0:
 * an entry of format 2, keyed by its record key) and the record key it names. */
struct expiry_index {
	size_t count;
	size_t key_len[WALK_MAX];
	uint64_t expires[WALK_MAX], slot[WALK_MAX];
	uint8_t record[WALK_MAX][STORE_RECORD_KEY_LEN];
};

static int expiry_visit(void *context, struct kv_val key, struct kv_val value)
{
	struct expiry_index *x = context;
	ck_assert_uint_lt(x->count, WALK_MAX);
	ck_assert(key.len == STORE_EXPIRY_KEY_LEN || key.len == STORE_EXPIRY_OLD_LEN);
	size_t i = x->count++;
	x->key_len[i] = key.len;
	x->expires[i] = get_uint(key.data, 8);
	if (key.len == STORE_EXPIRY_KEY_LEN) {
		ck_assert_uint_eq(value.len, STORE_RECORD_KEY_LEN);
		x->slot[i] = get_uint(key.data + 8, 8);
		memcpy(x->record[i], value.data, STORE_RECORD_KEY_LEN);
	} else {
		ck_assert_uint_eq(value.len, 0);
		memcpy(x->record[i], key.data + 8, STORE_RECORD_KEY_LEN);
	}
	return 0;
}

/* Reads the closed store's expiry index into x. */
static void read_expiry(struct expiry_index *x)
{
	memset(x, 0, sizeof *x);
	walk_entries("expiry", expiry_visit, x);
}

/* Whether x's entry i names service's record (the namespace's id is 1, the first one made). */
static bool names_service(const struct expiry_index *x, size_t i, uint32_t service)
{
	uint8_t key[STORE_RECORD_KEY_LEN], id[32];
	make_id(id, 0x5e, service);
	record_key(key, 1, id);
	return memcmp(x->record[i], key, sizeof key) == 0;
}

/* Opens the closed store, seals the next epoch with valid-after now and expects count records
 * (the first with note first) in its view, its usage, records and the expiry index; closes it. */
static void expect_sealed(uint64_t now, size_t count, const char *first)
{
	struct expiry_index x;
	store = open_at(dir, 0, 0);
	expect_view(NAMESPACE, 0, now, count, first);
	ck_assert_uint_eq(usage_of(NAMESPACE).records, count);
	store_close(store);
	store = NULL;
	read_expiry(&x);
	ck_assert_uint_eq(x.count, count);
	ck_assert_uint_eq(count_entries("records"), count);
}

START_TEST(test_expiry_entries_follow_their_slots)
{
	/* Registered in the order 3, 1, 2 with one expiry time: their entries are in that order,
	 * by slot, not by service id, so that a batch's entries share pages. */
	const uint32_t order[3] = {3, 1, 2};
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(reg(NAMESPACE, PROVIDER, order[i], 1, 1000, 0), 0);
	ck_assert_int_eq(reg(NAMESPACE, PROVIDER, 4, 1, 500, 0), 0);
	store_close(store);
	struct expiry_index x;
	read_expiry(&x);
	ck_assert_uint_eq(x.count, 4);
	ck_assert(names_service(&x, 0, 4) && x.expires[0] == 500 && x.slot[0] == 4);
	for (int i = 0; i < 3; i++) {
		ck_assert_uint_eq(x.key_len[i + 1], STORE_EXPIRY_KEY_LEN);
		ck_assert_uint_eq(x.expires[i + 1], 1000);
		ck_assert_uint_eq(x.slot[i + 1], (uint64_t)i + 1);
		ck_assert(names_service(&x, (size_t)i + 1, order[i]));
	}

	/* A replacement takes the next slot and its old entry goes; after a reopen slots go on
	 * rising. */
	store = open_at(dir, 0, 0);
	ck_assert_int_eq(reg(NAMESPACE, PROVIDER, 3, 2, 1000, 0), 0);
	store_close(store);
	store = open_at(dir, 0, 0);
	ck_assert_int_eq(reg(NAMESPACE, PROVIDER, 1, 2, 400, 0), 0);
	store_close(store);
	read_expiry(&x);
	ck_assert_uint_eq(x.count, 4);
	ck_assert(names_service(&x, 0, 1) && x.expires[0] == 400 && x.slot[0] == 6);
	ck_assert(names_service(&x, 1, 4) && x.slot[1] == 4);
	ck_assert(names_service(&x, 2, 2) && x.slot[2] == 3);
	ck_assert(names_service(&x, 3, 3) && x.slot[3] == 5);

	/* The seal finds them by their expiry time. */
	expect_sealed(600, 2, "registration 2 sequence 1");
}
END_TEST

static int collect_visit(void *context, struct kv_val key, struct kv_val value)
{
	struct buffer *b = context;
	uint8_t lengths[8];
	put_uint(lengths, key.len, 4);
	put_uint(lengths + 4, value.len, 4);
	ck_assert_int_eq(buffer_append(b, lengths, 8), 0);
	ck_assert_int_eq(buffer_append(b, key.data, key.len), 0);
	ck_assert_int_eq(buffer_append(b, value.data, value.len), 0);
	return 0;
}

/* Rewrites the closed store as format 2 wrote it: records without a slot, expiry keyed by
 * expiry time and record key, the format 2, no next_slot. */
/* Rewrites the closed store at dir as format (2 or 3) wrote it: its records without their
 * endpoint counts and, for format 2, without their expiry slots (and their expiry entries under
 * the old key); its namespaces' usage without the endpoints. */
static void make_format(int format)
{
	struct kv_env *env = NULL;
	struct kv_db meta, records, expiry, usage;
	struct kv_database d[] = {
	    {"meta", &meta}, {"records", &records}, {"expiry", &expiry}, {"usage", &usage}};
	struct kv_txn t;
	struct buffer all;
	buffer_init(&all);
	ck_assert_int_eq(kv_env_open(dir, 4 * MIB, d, 4, &env), 0);
	kv_txn_begin(env, &t, KV_WRITE);
	ck_assert_int_eq(kv_txn_walk_prefix(&t, records, NULL, 0, collect_visit, &all), 0);
	for (size_t at = 0; at < all.len;) {
		size_t key_len = get_uint(all.data + at, 4), value_len = get_uint(all.data + at + 4, 4);
		const uint8_t *key = all.data + at + 8, *value = key + key_len;
		struct record_header h;
		ck_assert_int_eq(record_decode_header(value, value_len, &h), 0);
		ck_assert_uint_ne(h.slot, 0);
		uint8_t old[1024], index[STORE_EXPIRY_OLD_LEN];
		size_t kept = format == 2 ? 0 : 8, skipped = 8 - kept + (h.counted ? 2 : 0);
		ck_assert_uint_lt(value_len, sizeof old);
		memcpy(old, value, RECORD_HEADER_SIZE - 1);
		old[RECORD_HEADER_SIZE - 1] = (uint8_t)(h.form | (format == 2 ? 0 : RECORD_FORM_SLOTTED));
		memcpy(old + RECORD_HEADER_SIZE, value + RECORD_HEADER_SIZE, kept);
		memcpy(old + RECORD_HEADER_SIZE + kept, value + RECORD_HEADER_SIZE + 8 + (h.counted ? 2 : 0),
		       value_len - RECORD_HEADER_SIZE - 8 - (h.counted ? 2 : 0));
		kv_txn_put(&t, records, key, key_len, old, value_len - skipped);
		if (format == 2) {
			kv_txn_delete(&t, expiry, index, expiry_key(index, h.expires, h.slot, key));
			kv_txn_put(&t, expiry, index, expiry_key(index, h.expires, 0, key), "", 0);
		}
		at += 8 + key_len + value_len;
	}
	buffer_reset(&all);
	ck_assert_int_eq(kv_txn_walk_prefix(&t, usage, NULL, 0, collect_visit, &all), 0);
	for (size_t at = 0; at < all.len;) {
		size_t key_len = get_uint(all.data + at, 4), value_len = get_uint(all.data + at + 4, 4);
		ck_assert_uint_eq(value_len, STORE_USAGE_LEN);
		kv_txn_put(&t, usage, all.data + at + 8, key_len, all.data + at + 8 + key_len, 16);
		at += 8 + key_len + value_len;
	}
	kv_txn_put(&t, meta, "format", 6, format == 2 ? "\0\0\0\2" : "\0\0\0\3", 4);
	if (format == 2)
		kv_txn_delete(&t, meta, "next_slot", 9);
	ck_assert_int_eq(kv_txn_commit(&t), 0);
	kv_env_close(env);
	buffer_free(&all);
}

START_TEST(test_format_2_store_is_read_and_kept)
{
	for (uint32_t i = 1; i <= 3; i++)
		ck_assert_int_eq(reg(NAMESPACE, PROVIDER, i, 1, 100 * (uint64_t)i, i), 0);
	store_close(store);
	make_format(2);
	struct expiry_index x;
	read_expiry(&x);
	ck_assert_uint_eq(x.count, 3);
	for (size_t i = 0; i < 3; i++)
		ck_assert_uint_eq(x.key_len[i], STORE_EXPIRY_OLD_LEN);

	/* Opened, it is the current format from then on, and its records read as before. */
	store = open_at(dir, 0, 0);
	expect_view(NAMESPACE, 0, 0, 3, "registration 1 sequence 1");
	ck_assert_str_eq(seen.notes[2], "registration 3 sequence 1");
	/* A replacement drops the record's old entry and has a slotted one. */
	ck_assert_int_eq(reg(NAMESPACE, PROVIDER, 3, 2, 5000, 3), 0);
	store_close(store);
	read_expiry(&x);
	ck_assert_uint_eq(x.count, 3);
	ck_assert(names_service(&x, 0, 1) && x.key_len[0] == STORE_EXPIRY_OLD_LEN);
	ck_assert(names_service(&x, 1, 2) && x.key_len[1] == STORE_EXPIRY_OLD_LEN);
	ck_assert(names_service(&x, 2, 3) && x.slot[2] == 1 && x.expires[2] == 5000);
	struct kv_env *env = NULL;
	struct kv_db meta;
	struct kv_database d = {"meta", &meta};
	struct kv_txn t;
	struct kv_val value;
	ck_assert_int_eq(kv_env_open(dir, MIB, &d, 1, &env), 0);
	kv_txn_begin(env, &t, KV_READ);
	ck_assert(kv_txn_get(&t, meta, "format", 6, &value));
	ck_assert_mem_eq(value.data, "\0\0\0\4", 4);
	kv_txn_abort(&t);
	kv_env_close(env);

	/* The seal finds the old entries too: services 1 and 2 expire, 3 stays. */
	expect_sealed(250, 1, "registration 3 sequence 2");
}
END_TEST

/* Submits service's registration with note text and bounds. */
static int reg_bounded(const char *namespace_name, uint32_t service, uint64_t sequence, const char *text,
                       uint64_t max_records, uint64_t max_bytes)
{
	struct test_registration t;
	make_registration(&t, namespace_name, PROVIDER, service, sequence, 1000);
	add_endpoint(&t, service);
	if (text)
		set_note(&t, text, strlen(text));
	t.r.max_records = max_records;
	t.r.max_bytes = max_bytes;
	return submit(store, &t);
}

START_TEST(test_namespace_bounds)
{
	const uint64_t each = strlen("registration 1 sequence 1") + STORE_RECORD_FRAMING;
	const uint64_t longer = strlen(" and longer");

	/* Records: three fit, the fourth is refused; a replacement within the bound is accepted. */
	for (uint32_t i = 1; i <= 4; i++)
		ck_assert_int_eq(reg_bounded(NAMESPACE, i, 1, NULL, 3, UINT64_MAX),
		                 i <= 3 ? 0 : DIRAUTH_ERR_BOUNDS);
	assert_service_absent(store, 4);
	ck_assert_uint_eq(usage_of(NAMESPACE).records, 3);
	ck_assert_uint_eq(usage_of(NAMESPACE).bytes, 3 * each);
	ck_assert_int_eq(reg_bounded(NAMESPACE, 2, 2, NULL, 3, UINT64_MAX), 0);
	/* Another namespace counts its own; the refused one's endpoint was not taken. */
	ck_assert_int_eq(reg_bounded("other", 4, 1, NULL, 1, UINT64_MAX), 0);

	/* Bytes: exactly at the bound is accepted; a longer replacement past it is refused. */
	ck_assert_int_eq(reg_bounded(NAMESPACE, 3, 2, "registration 3 sequence 2 and longer", 3, 3 * each),
	                 DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(
	    reg_bounded(NAMESPACE, 3, 2, "registration 3 sequence 2 and longer", 3, 3 * each + longer), 0);
	ck_assert_int_eq(
	    reg_bounded(NAMESPACE, 1, 2, "registration 1 sequence 2 is longer still", 3, 3 * each + longer),
	    DIRAUTH_ERR_BOUNDS);
	ck_assert_uint_eq(sequence_of(store, 1), 1);
	ck_assert_int_eq(reg_bounded(NAMESPACE, 1, 2, "short", 3, 3 * each),
	                 0); /* a shorter one frees bytes */

	ck_assert_uint_eq(usage_of(NAMESPACE).records, 3);
	ck_assert_uint_eq(usage_of(NAMESPACE).bytes, 3 * each + longer - (each - STORE_RECORD_FRAMING - 5));
	expect_view(NAMESPACE, 0, 0, 3, "short");
	ck_assert_str_eq(seen.notes[1], "registration 2 sequence 2");
	ck_assert_str_eq(seen.notes[2], "registration 3 sequence 2 and longer");
	ck_assert_uint_eq(usage_of("other").records, 1);
}
END_TEST

/* Submits service's registration of endpoints endpoints (ids service * 10 + 1..) with room of
 * endpoint_bytes kept for each, under max_bytes. */
static int reg_endpoints(uint32_t service, uint64_t sequence, size_t endpoints, uint64_t endpoint_bytes,
                         uint64_t max_bytes, uint64_t expires)
{
	struct test_registration t;
	make_registration(&t, NAMESPACE, PROVIDER, service, sequence, expires);
	for (size_t i = 0; i < endpoints; i++)
		add_endpoint(&t, service * 10 + (uint32_t)i + 1);
	t.r.endpoint_bytes = endpoint_bytes;
	t.r.max_bytes = max_bytes;
	return submit(store, &t);
}

START_TEST(test_namespace_bounds_count_endpoints)
{
	/* A lifecycle namespace keeps room in its body for a health entry per endpoint its records
	 * list: a registration whose endpoints would leave no room for theirs is refused like one
	 * past the bytes, and a replacement with fewer endpoints, and expiry, give the room back. */
	const uint64_t each = strlen("registration 1 sequence 1") + STORE_RECORD_FRAMING, room = 1000;
	const uint64_t bound = 2 * each + 5 * room;
	ck_assert_int_eq(reg_endpoints(1, 1, 3, room, bound, 2000), 0);
	ck_assert_int_eq(reg_endpoints(2, 1, 3, room, bound, 1000), DIRAUTH_ERR_BOUNDS);
	assert_service_absent(store, 2);
	ck_assert_int_eq(reg_endpoints(2, 1, 2, room, bound, 1000), 0);
	ck_assert_uint_eq(usage_of(NAMESPACE).endpoints, 5);
	ck_assert_uint_eq(usage_of(NAMESPACE).bytes, 2 * each);
	/* One endpoint more is refused, one fewer frees room for another service's. */
	ck_assert_int_eq(reg_endpoints(1, 2, 4, room, bound, 2000), DIRAUTH_ERR_BOUNDS);
	ck_assert_uint_eq(sequence_of(store, 1), 1);
	ck_assert_int_eq(reg_endpoints(1, 2, 2, room, bound, 2000), 0);
	ck_assert_uint_eq(usage_of(NAMESPACE).endpoints, 4);
	/* Without room kept per endpoint (another namespace's setting), the same count fits. */
	ck_assert_int_eq(reg_endpoints(3, 1, 4, 0, bound + each, 2000), 0);
	ck_assert_uint_eq(usage_of(NAMESPACE).endpoints, 8);
	ck_assert_int_eq(reg_endpoints(4, 1, 1, room, bound + 2 * each, 2000), DIRAUTH_ERR_BOUNDS);

	/* Expired records give their endpoints back: service 2 (two endpoints) is gone at 1500. */
	ck_assert_int_eq(store_seal(store, 1, 1500), 0);
	ck_assert_uint_eq(usage_of(NAMESPACE).records, 2);
	ck_assert_uint_eq(usage_of(NAMESPACE).endpoints, 6);
}
END_TEST

START_TEST(test_format_3_store_counts_endpoints)
{
	/* Format 4 counts the endpoints of a namespace's records; a format 3 store has them counted
	 * from its records when it is opened: from the compact form, and from the note's endpoint
	 * lines in the bytes form. */
	static const char two[] = "dirauth registration v1\nendpoint a\nendpoint b\nendpoint-key a k\n";
	static const char three[] = "dirauth registration v1\nendpoint a\nendpoint b\nendpoint c\n";
	struct test_registration t;
	make_registration(&t, NAMESPACE, PROVIDER, 1, 1, 1000);
	add_endpoint(&t, 11);
	add_endpoint(&t, 12);
	set_note(&t, two, strlen(two));
	ck_assert_int_eq(submit(store, &t), 0);
	make_registration(&t, NAMESPACE, PROVIDER, 2, 1, 1000);
	for (uint32_t i = 21; i <= 23; i++)
		add_endpoint(&t, i);
	set_note(&t, three, strlen(three));
	ck_assert_int_eq(submit(store, &t), 0);
	ck_assert_int_eq(reg("other", PROVIDER, 3, 1, 1000, 31), 0);
	store_close(store);
	make_format(3);

	store = open_at(dir, 0, 0);
	ck_assert_uint_eq(usage_of(NAMESPACE).records, 2);
	ck_assert_uint_eq(usage_of(NAMESPACE).endpoints, 5);
	/* The fake note of "other" has no endpoint line: as a store of format 3 kept it, none. */
	ck_assert_uint_eq(usage_of("other").endpoints, 0);
	/* A replacement takes the old version's endpoints off and adds its own. */
	ck_assert_int_eq(reg(NAMESPACE, PROVIDER, 2, 2, 1000, 24), 0);
	ck_assert_uint_eq(usage_of(NAMESPACE).endpoints, 3);
}
END_TEST

START_TEST(test_refuse_line)
{
	struct test_registration t;
	struct store_statistics statistics;
	static uint8_t note[32 * 1024];
	int rc = 0;
	uint32_t accepted = 0;
	reopen(4 * MIB, 50);
	memset(note, 'n', sizeof note);

	for (uint32_t i = 1; i <= 200 && rc == 0; i++) {
		make_registration(&t, NAMESPACE, PROVIDER, i, 1, 1000);
		add_endpoint(&t, i);
		set_note(&t, note, sizeof note);
		if ((rc = submit(store, &t)) == 0)
			accepted = i;
	}
	ck_assert_int_eq(rc, DIRAUTH_ERR_FULL);
	ck_assert_uint_gt(accepted, 0);
	ck_assert_int_eq(store_statistics(store, &statistics), 0);
	ck_assert_uint_eq(statistics.refused_full, 1);
	ck_assert_uint_eq(statistics.map_size, 4 * MIB);
	ck_assert_uint_gt(statistics.map_used, 2 * MIB);
	ck_assert_uint_lt(statistics.map_used, 3 * MIB); /* refused at the line, well before full */

	/* Nothing of the refused one was written; every accepted one is whole. */
	assert_service_absent(store, accepted + 1);
	for (uint32_t i = 1; i <= accepted; i++)
		ck_assert_uint_eq(sequence_of(store, i), 1);
	ck_assert_uint_eq(usage_of(NAMESPACE).records, accepted);
	ck_assert_int_eq(reg(NAMESPACE, PROVIDER, 1, 2, 1000, 0),
	                 DIRAUTH_ERR_FULL); /* small, still refused */
	ck_assert_uint_eq(sequence_of(store, 1), 1);
	ck_assert_int_eq(store_statistics(store, &statistics), 0);
	ck_assert_uint_eq(statistics.refused_full, 2);

	/* Publication goes on above the line: the seal, the view, a body and its header. */
	ck_assert_uint_eq(count_view(store, 0), accepted);
	put_snapshot(NAMESPACE, 1, NULL, 0, NULL);
	ck_assert_int_eq(body_check(NAMESPACE, 1, ENCODING_GZIP), 0);

	/* Expired and pruned, the records' pages go to LMDB's free list: the file's high-water mark
	 * stays where it was, but the data is back under the line, and registrations are taken
	 * again without a restart. */
	ck_assert_int_eq(store_seal(store, 2, 1000), 0);
	ck_assert_uint_eq(usage_of(NAMESPACE).records, 0);
	ck_assert_int_eq(store_statistics(store, &statistics), 0);
	ck_assert_uint_gt(statistics.map_used, 2 * MIB);
	ck_assert_uint_gt(statistics.map_free, MIB);
	ck_assert_int_eq(reg(NAMESPACE, PROVIDER, accepted + 1, 1, 5000, accepted + 1), 0);
	ck_assert_uint_eq(statistics.refused_full, 2);

	/* Reopened with room, more go through. */
	reopen(64 * MIB, 0);
	ck_assert_int_eq(reg(NAMESPACE, PROVIDER, accepted + 2, 1, 5000, accepted + 2), 0);
}
END_TEST

/* ---- asynchronous submission ---- */

struct async_tally {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	size_t done;
};

struct async_request {
	struct test_registration t;
	struct async_tally *tally;
	int calls;
	int result;
	uint64_t stamp;
};

static void async_done(void *context, int result, uint64_t stamp)
{
	struct async_request *a = context;
	pthread_mutex_lock(&a->tally->lock);
	a->calls++;
	a->result = result;
	a->stamp = stamp;
	a->tally->done++;
	pthread_cond_signal(&a->tally->cond);
	pthread_mutex_unlock(&a->tally->lock);
}

/* Queues count registrations (r[i], or the requests' own when r is NULL) and waits for every
 * answer; returns the requests (calloc'd). */
static struct async_request *submit_all(struct store *to, const struct store_registration *const *r,
                                        size_t count, struct async_tally *tally)
{
	struct async_request *requests = calloc(count, sizeof *requests);
	ck_assert_ptr_nonnull(requests);
	for (size_t i = 0; i < count; i++) {
		requests[i].tally = tally;
		make_registration(&requests[i].t, NAMESPACE, PROVIDER, 1 + (uint32_t)i % 250, 1, 1000);
		const struct store_registration *one = r ? r[i] : &requests[i].t.r;
		ck_assert_int_eq(store_registration_submit_async(to, one, async_done, &requests[i]), 0);
	}
	pthread_mutex_lock(&tally->lock);
	while (tally->done < count)
		pthread_cond_wait(&tally->cond, &tally->lock);
	pthread_mutex_unlock(&tally->lock);
	return requests;
}

/* Registers count services (1..count) at sequence for epoch, every one accepted and stamped so. */
static void register_many(struct test_registration *regs, size_t count, uint64_t sequence, uint64_t epoch)
{
	struct async_tally tally = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
	const struct store_registration **r = calloc(count, sizeof *r);
	ck_assert_ptr_nonnull(r);
	for (size_t i = 0; i < count; i++) {
		make_registration(&regs[i], NAMESPACE, PROVIDER, 1 + (uint32_t)i, sequence, 1000);
		regs[i].r.epoch = epoch;
		r[i] = &regs[i].r;
	}
	struct async_request *answers = submit_all(store, r, count, &tally);
	for (size_t i = 0; i < count; i++) {
		ck_assert_int_eq(answers[i].result, 0);
		ck_assert_uint_eq(answers[i].stamp, epoch);
	}
	free(answers);
	free(r);
}

START_TEST(test_seal_prunes_every_replaced_version)
{
	/* More versions replaced for one epoch than one prune transaction removes: the seal goes on
	 * until none is left, so a store under steady churn keeps no more than the epochs need. */
	enum { COUNT = STORE_PRUNE_CHUNK + 300 };
	struct test_registration *first = calloc(COUNT, sizeof *first);
	struct test_registration *second = calloc(COUNT, sizeof *second);
	ck_assert(first && second);
	register_many(first, COUNT, 1, 1);
	ck_assert_int_eq(store_seal(store, 1, 0), 0);
	register_many(second, COUNT, 2, 2);
	ck_assert_int_eq(store_seal(store, 2, 0), 0);
	size_t count = 0;
	ck_assert_int_eq(store_view_foreach(store, NAMESPACE, 2, 0, count_visit, &count), 0);
	ck_assert_uint_eq(count, COUNT);
	store_close(store);
	store = NULL;
	free(first);
	free(second);
	ck_assert_uint_eq(count_entries("previous"), 0);
	ck_assert_uint_eq(count_entries("replaced"), 0);
	ck_assert_uint_eq(count_entries("records"), COUNT);
}
END_TEST

/* A gate the first answer waits at: an answerer held up (as by a sync that takes long). */
struct answer_gate {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool open;
	size_t answered;
};

static void gated_done(void *context, int result, uint64_t stamp)
{
	struct answer_gate *gate = context;
	(void)stamp;
	ck_assert_int_eq(result, 0);
	pthread_mutex_lock(&gate->lock);
	while (!gate->open)
		pthread_cond_wait(&gate->cond, &gate->lock);
	gate->answered++;
	pthread_cond_broadcast(&gate->cond);
	pthread_mutex_unlock(&gate->lock);
}

struct late_submitter {
	struct store *store;
	const struct store_registration *r;
	struct answer_gate *gate;
	atomic_bool returned;
};

static void *late_submit(void *argument)
{
	struct late_submitter *l = argument;
	ck_assert_int_eq(store_registration_submit_async(l->store, l->r, gated_done, l->gate), 0);
	atomic_store(&l->returned, true);
	return NULL;
}

START_TEST(test_unanswered_requests_are_bounded)
{
	/* One request a batch: at most STORE_QUEUE_PER_BATCH unanswered, queued or taken. With the
	 * answerer held at the first answer, the next submitter waits for room until answers go. */
	enum { LIMIT = STORE_QUEUE_PER_BATCH };
	struct store_options options = {.path = at("bounded"), .max_batch = 1};
	struct store *bounded = NULL;
	ck_assert_int_eq(store_open(&options, &bounded), 0);
	struct answer_gate gate = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, 0};
	struct test_registration regs[LIMIT + 1];
	for (size_t i = 0; i <= LIMIT; i++)
		make_registration(&regs[i], NAMESPACE, PROVIDER, 1 + (uint32_t)i, 1, 1000);
	for (size_t i = 0; i < LIMIT; i++)
		ck_assert_int_eq(store_registration_submit_async(bounded, &regs[i].r, gated_done, &gate), 0);
	struct late_submitter late = {bounded, &regs[LIMIT].r, &gate, false};
	pthread_t thread;
	ck_assert_int_eq(pthread_create(&thread, NULL, late_submit, &late), 0);
	test_sleep_ms(300);
	ck_assert_msg(!atomic_load(&late.returned), "a submission was queued past %d unanswered", LIMIT);
	pthread_mutex_lock(&gate.lock);
	gate.open = true;
	pthread_cond_broadcast(&gate.cond);
	while (gate.answered < LIMIT + 1)
		pthread_cond_wait(&gate.cond, &gate.lock);
	pthread_mutex_unlock(&gate.lock);
	pthread_join(thread, NULL);
	ck_assert(atomic_load(&late.returned));
	store_close(bounded);
}
END_TEST

START_TEST(test_async_callback_once)
{
	enum { COUNT = 300, SERVICES = 250 };
	struct async_tally tally = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
	struct async_request bad = {.tally = &tally};
	size_t accepted = 0;
	ck_assert_int_eq(store_seal(store, 3, 0), 0);

	/* Its own refusals are returned, and done is never called for them. */
	make_registration(&bad.t, NAMESPACE, PROVIDER, 1, 9, 1000);
	bad.t.r.note = NULL;
	ck_assert_int_eq(store_registration_submit_async(store, &bad.t.r, async_done, &bad),
	                 DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(store_registration_submit_async(store, NULL, async_done, &bad), DIRAUTH_ERR_SYNTAX);
	bad.t.r.note = (const uint8_t *)bad.t.note;
	ck_assert_int_eq(store_registration_submit_async(store, &bad.t.r, NULL, &bad), DIRAUTH_ERR_SYNTAX);

	/* Services 1 to 250, then 1 to 50 again with the same sequence: rollbacks. */
	struct async_request *requests = submit_all(store, NULL, COUNT, &tally);
	reopen(0, 0); /* nothing is left to call back */
	for (uint32_t i = 0; i < COUNT; i++) {
		ck_assert_int_eq(requests[i].calls, 1);
		ck_assert_int_eq(requests[i].result, i < SERVICES ? 0 : DIRAUTH_ERR_ROLLBACK);
		if (requests[i].result == 0)
			ck_assert_uint_eq(requests[i].stamp, 4);
		accepted += requests[i].result == 0;
	}
	ck_assert_uint_eq(accepted, SERVICES);
	ck_assert_int_eq(bad.calls, 0);
	ck_assert_uint_eq(tally.done, COUNT);
	ck_assert_uint_eq(count_view(store, 0), SERVICES);
	free(requests);
}
END_TEST

START_TEST(test_refusal_in_a_new_namespace_leaves_nothing)
{
	/* A registration in a namespace the store has not seen writes the namespace before its
	 * checks refuse it: the batch holding it must keep nothing of it, and keep everything of the
	 * registrations beside it. */
	enum { COUNT = 200 };
	struct async_tally tally = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
	struct test_registration *regs = calloc(COUNT, sizeof *regs);
	const struct store_registration **r = calloc(COUNT, sizeof *r);
	ck_assert_ptr_nonnull(regs);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(reg(NAMESPACE, PROVIDER, 1, 1, 1000, 0), 0);
	for (uint32_t i = 0; i < COUNT; i++) {
		if (i % 2)
			make_registration(&regs[i], "other", PROVIDER, 1, 2 + i, 1000); /* service 1's id */
		else
			make_registration(&regs[i], NAMESPACE, PROVIDER, 2 + i, 1, 1000);
		r[i] = &regs[i].r;
	}
	struct async_request *answers = submit_all(store, r, COUNT, &tally);
	for (uint32_t i = 0; i < COUNT; i++)
		ck_assert_int_eq(answers[i].result, i % 2 ? DIRAUTH_ERR_COLLISION : 0);
	ck_assert_uint_eq(usage_of(NAMESPACE).records, 1 + COUNT / 2);
	ck_assert_uint_eq(count_view(store, 0), 1 + COUNT / 2);
	store_close(store);
	store = NULL;
	ck_assert_uint_eq(count_entries("namespaces"), 1);
	ck_assert_uint_eq(count_entries("records"), 1 + COUNT / 2);
	free(answers);
	free(r);
	free(regs);
}
END_TEST

/* ---- the compact form ---- */

/* A real signed registration, parsed as intake parses it. */
struct signed_registration {
	struct store_registration r;
	struct registration parsed;
	struct note *note;
	struct buffer text;
	uint8_t digest[32];
	uint8_t endpoint_ids[3 * 32];
};

static void make_signed(struct signed_registration *s, unsigned index, const struct test_key *provider,
                        const struct test_key *signer, bool compact)
{
	struct registration r;
	memset(s, 0, sizeof *s);
	test_example_registration(index, NAMESPACE, provider, &r);
	buffer_init(&s->text);
	test_sign_registration(&r, signer, &s->text);
	registration_clear(&r);
	ck_assert_int_eq(registration_parse_note(s->text.data, s->text.len, &s->parsed, &s->note), 0);
	ck_assert_uint_eq(s->parsed.endpoint_count, 3);
	ck_assert_int_eq(crypto_sha256(s->text.data, s->text.len, s->digest), 0);
	for (size_t i = 0; i < 3; i++)
		memcpy(s->endpoint_ids + 32 * i, s->parsed.endpoints[i].endpoint_id, 32);
	s->r = (struct store_registration){.namespace_name = NAMESPACE,
	                                   .service_id = s->parsed.service_id,
	                                   .provider = s->parsed.provider.name,
	                                   .sequence = s->parsed.sequence,
	                                   .expires = s->parsed.expires,
	                                   .digest = s->digest,
	                                   .endpoint_ids = s->endpoint_ids,
	                                   .endpoint_count = 3,
	                                   .note = s->text.data,
	                                   .note_len = s->text.len,
	                                   .parsed = compact ? &s->parsed : NULL,
	                                   .signature = compact ? &s->note->signatures[0] : NULL,
	                                   .epoch = 1,
	                                   .max_records = UINT64_MAX,
	                                   .max_bytes = UINT64_MAX};
}

static void free_signed(struct signed_registration *s)
{
	registration_clear(&s->parsed);
	note_free(s->note);
	buffer_free(&s->text);
}

static void assert_note_in(const struct walk *w, const struct signed_registration *s)
{
	for (size_t i = 0; i < w->count; i++) {
		if (memcmp(w->ids[i], s->parsed.service_id, 32) == 0) {
			ck_assert_uint_eq(w->note_lens[i], s->text.len);
			ck_assert_mem_eq(w->notes[i], s->text.data, s->text.len);
			return;
		}
	}
	ck_abort_msg("service not in the view");
}

START_TEST(test_compact_form_rebuilds_bytes)
{
	struct test_key provider, other;
	struct signed_registration s[4];
	struct walk again;
	const uint64_t now = 1767225600;
	test_key_load(TEST_KEY_PROVIDER, &provider);
	test_key_load(TEST_KEY_OTHER, &other);

	/* Two kept compactly (one provider key, one reference); one signed under another key's name
	 * and one whose submission disagrees with its note, which must be kept as bytes. */
	make_signed(&s[0], 1, &provider, &provider, true);
	make_signed(&s[1], 2, &provider, &provider, true);
	make_signed(&s[2], 3, &provider, &other, true);
	make_signed(&s[3], 4, &provider, &provider, true);
	s[3].r.sequence = 5;
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(store_registration_submit(store, &s[i].r, NULL), 0);
	expect_view(NAMESPACE, 0, now, 4, NULL);
	for (int i = 0; i < 4; i++)
		assert_note_in(&seen, &s[i]);

	/* After a reopen, the provider keys come from the database. */
	reopen(0, 0);
	view_at(store, NAMESPACE, 1, now, &again);
	ck_assert(memcmp(&seen, &again, sizeof seen) == 0); /* both zeroed, then filled */
	free_signed(&s[1]);
	make_signed(&s[1], 2, &provider, &provider, true);
	s[1].r.sequence = 2; /* bytes: the note says 1 */
	ck_assert_int_eq(store_registration_submit(store, &s[1].r, NULL), 0);
	expect_view(NAMESPACE, 0, now, 4, NULL);
	assert_note_in(&seen, &s[1]);
	ck_assert_uint_eq(seen.sequences[0] + seen.sequences[1] + seen.sequences[2] + seen.sequences[3],
	                  1 + 2 + 1 + 5);
	for (int i = 0; i < 4; i++)
		free_signed(&s[i]);
	test_key_free(&provider);
	test_key_free(&other);
}
END_TEST

START_TEST(test_compact_form_is_smaller)
{
	enum { COUNT = 2000 };
	struct test_key provider;
	struct signed_registration *s = calloc(COUNT, sizeof *s);
	const struct store_registration **r = calloc(COUNT, sizeof *r);
	size_t note_bytes = 0, used[2];
	ck_assert(s && r);
	test_key_load(TEST_KEY_PROVIDER, &provider);
	for (int compact = 0; compact < 2; compact++) {
		struct async_tally tally = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
		struct store_statistics before, after;
		for (unsigned i = 0; i < COUNT; i++) {
			make_signed(&s[i], 1 + i, &provider, &provider, compact);
			r[i] = &s[i].r;
			note_bytes += s[i].text.len;
		}
		struct store *fresh = open_at(at(compact ? "compact" : "bytes"), 0, 0);
		ck_assert_int_eq(store_statistics(fresh, &before), 0);
		struct async_request *requests = submit_all(fresh, r, COUNT, &tally);
		for (unsigned i = 0; i < COUNT; i++)
			ck_assert_int_eq(requests[i].result, 0);
		ck_assert_int_eq(store_statistics(fresh, &after), 0);
		used[compact] = after.map_used - before.map_used;
		ck_assert_uint_eq(count_view(fresh, 0), COUNT);
		store_close(fresh);
		free(requests);
		for (unsigned i = 0; i < COUNT; i++)
			free_signed(&s[i]);
	}
	printf("check_store: %d signed registrations, notes of %zu bytes: %zu bytes per record in the "
	       "database as bytes, %zu compact\n",
	       COUNT, note_bytes / (2 * COUNT), used[0] / COUNT, used[1] / COUNT);
	ck_assert_uint_lt(used[1], used[0]);
	test_key_free(&provider);
	free(r);
	free(s);
}
END_TEST

/* ---- concurrency and crashes ---- */

#define THREADS          16
#define SUBMISSIONS_EACH 200

struct submitter {
	pthread_t thread;
	uint32_t first_service; /* 0: every thread offers sequences 1 to count of service 1 */
	uint32_t count;
	int failures;
	int accepted;
};

static void *submitter_main(void *argument)
{
	struct submitter *s = argument;
	for (uint32_t i = 0; i < s->count; i++) {
		uint32_t service = s->first_service ? s->first_service + i : 1;
		int rc = reg(NAMESPACE, PROVIDER, service, 1 + i, 1000, s->first_service ? service : 0);
		s->accepted += rc == 0;
		s->failures += rc != 0 && (s->first_service || rc != DIRAUTH_ERR_ROLLBACK);
	}
	return NULL;
}

static int run_submitters(bool distinct, uint32_t count)
{
	struct submitter submitters[THREADS];
	int accepted = 0;
	for (uint32_t i = 0; i < THREADS; i++) {
		submitters[i] =
		    (struct submitter){.first_service = distinct ? 1 + i * count : 0, .count = count};
		ck_assert_int_eq(pthread_create(&submitters[i].thread, NULL, submitter_main, &submitters[i]),
		                 0);
	}
	for (uint32_t i = 0; i < THREADS; i++) {
		ck_assert_int_eq(pthread_join(submitters[i].thread, NULL), 0);
		ck_assert_int_eq(submitters[i].failures, 0);
		accepted += submitters[i].accepted;
	}
	return accepted;
}

START_TEST(test_concurrent_submissions_group_commit)
{
	struct store_statistics statistics;
	ck_assert_int_eq(run_submitters(true, SUBMISSIONS_EACH), THREADS * SUBMISSIONS_EACH);
	ck_assert_int_eq(store_statistics(store, &statistics), 0);
	ck_assert_uint_eq(statistics.submissions, THREADS * SUBMISSIONS_EACH);
	ck_assert_uint_lt(statistics.commits, statistics.submissions);
	ck_assert_uint_le(statistics.commits, statistics.batches);

	reopen(0, 0);
	for (uint32_t i = 0; i < THREADS; i++)
		for (uint32_t j = 0; j < SUBMISSIONS_EACH; j++)
			ck_assert_uint_eq(sequence_of(store, 1 + i * SUBMISSIONS_EACH + j), 1 + j);
	ck_assert_uint_eq(count_view(store, 0), THREADS * SUBMISSIONS_EACH);
	ck_assert_uint_eq(usage_of(NAMESPACE).records, THREADS * SUBMISSIONS_EACH);
}
END_TEST

START_TEST(test_concurrent_same_service_is_sequential)
{
	/* Had two in one batch both been checked against the committed state, some sequence would
	 * have been accepted twice and the sum would exceed the highest sequence. */
	int accepted = run_submitters(false, 50);
	ck_assert_int_le(accepted, 50);
	ck_assert_int_ge(accepted, 1);
	ck_assert_uint_eq(sequence_of(store, 1), 50);
	ck_assert_uint_eq(usage_of(NAMESPACE).records, 1);
}
END_TEST

#define CRASH_SERVICES 3
#define CRASH_QUIET_MS 60000

/* The child: submits forever over three services, reporting each acknowledgement. */
static void crash_child(const char *crash_dir, int report)
{
	struct store_options options = {.path = crash_dir};
	struct store *child = NULL;
	if (store_open(&options, &child) != 0)
		_exit(2);
	for (uint64_t sequence = 1;; sequence++) {
		for (uint32_t service = 0; service < CRASH_SERVICES; service++) {
			struct test_registration t;
			make_registration(&t, NAMESPACE, PROVIDER, service, sequence, 1000);
			add_endpoint(&t, service);
			if (submit(child, &t) != 0)
				_exit(3);
			uint64_t record[2] = {service, sequence};
			if (write(report, record, sizeof record) != (ssize_t)sizeof record)
				_exit(4);
		}
	}
}

START_TEST(test_acknowledged_survive_sigkill)
{
#if defined(__SANITIZE_THREAD__)
	/* ThreadSanitizer does not follow a process that starts threads after a fork of a
	 * multi-threaded one (the committer here); the normal and ASan builds run this. */
	return;
#endif
	int fds[2];
	uint64_t acknowledged[CRASH_SERVICES] = {0}, record[2];
	size_t count = 0;
	bool killed = false;
	char crash_dir[512];
	snprintf(crash_dir, sizeof crash_dir, "%s", at("crash"));
	ck_assert_int_eq(pipe(fds), 0);
	/* Fork a process with one thread: the fixture's store has a committer thread, which may
	 * hold an allocator lock at the moment of the fork and leave the child stuck on it. */
	store_close(store);
	store = NULL;

	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(fds[0]);
		crash_child(crash_dir, fds[1]);
		_exit(1);
	}
	close(fds[1]);
	/* Records are written whole (16 bytes, under PIPE_BUF); those in the pipe when the child
	 * dies still count. */
	/* A child that goes quiet for CRASH_QUIET_MS is killed and the test fails, rather than
	 * waiting for ever. */
	struct pollfd readable = {.fd = fds[0], .events = POLLIN};
	while (true) {
		int ready = poll(&readable, 1, CRASH_QUIET_MS);
		if (ready == 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			ck_abort_msg("the child acknowledged nothing for %d ms after %zu", CRASH_QUIET_MS,
			             count);
		}
		if (ready < 0 && errno == EINTR)
			continue;
		if (ready < 0 || read(fds[0], record, sizeof record) != (ssize_t)sizeof record)
			break;
		ck_assert_uint_lt(record[0], CRASH_SERVICES);
		ck_assert_uint_gt(record[1], acknowledged[record[0]]);
		acknowledged[record[0]] = record[1];
		if (++count == 150 && !killed) {
			ck_assert_int_eq(kill(pid, SIGKILL), 0);
			killed = true;
		}
	}
	close(fds[0]);
	int status = 0;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(killed, "the child stopped after %zu acknowledgements (status %d)", count, status);
	ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

	struct store *after = open_at(crash_dir, 0, 0);
	for (uint32_t service = 0; service < CRASH_SERVICES; service++) {
		uint64_t stored = sequence_of(after, service);
		ck_assert_msg(stored >= acknowledged[service], "service %u: stored %llu, acknowledged %llu",
		              (unsigned)service, (unsigned long long)stored,
		              (unsigned long long)acknowledged[service]);
		/* At most the in-flight submission is ahead of what was reported. */
		ck_assert_uint_le(stored, acknowledged[service] + 1);
		/* And the sequence cannot go back. */
		struct test_registration t;
		make_registration(&t, NAMESPACE, PROVIDER, service, acknowledged[service], 1000);
		ck_assert_int_eq(submit(after, &t), DIRAUTH_ERR_ROLLBACK);
	}
	ck_assert_uint_eq(count_view(after, 0), CRASH_SERVICES);
	store_close(after);
}
END_TEST

START_TEST(test_backup_restores)
{
	char backup[512];
	struct buffer header;
	struct store_body_info info, restored;
	struct stat st;
	uint8_t *body = make_body(100 * 1000, 3);
	buffer_init(&header);
	snprintf(backup, sizeof backup, "%s", at("backup"));

	for (uint32_t i = 1; i <= 5; i++)
		ck_assert_int_eq(reg(NAMESPACE, PROVIDER, i, 20 + i, 1000, i), 0);
	ck_assert_int_eq(store_seal(store, 1, 0), 0);
	put_snapshot(NAMESPACE, 9, body, 100 * 1000, &info);
	test_write_file(at("bodies/" NAMESPACE "/10.zstd.part"), "x", 1, 0600);

	/* The target must exist, and must not already hold a copy. */
	ck_assert_int_eq(store_backup(store, backup), DIRAUTH_ERR_IO);
	ck_assert_int_eq(mkdir(backup, 0700), 0);
	ck_assert_int_eq(store_backup(store, backup), 0);
	ck_assert_int_eq(store_backup(store, backup), DIRAUTH_ERR_EXISTS);
	ck_assert_int_eq(stat(at("backup/data.mdb"), &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
	ck_assert_str_eq(list_dir(at("backup/bodies/" NAMESPACE)), "9.gzip 9.identity 9.zstd"); /* no part */

	/* Written after the backup: must not be in it. */
	ck_assert_int_eq(reg(NAMESPACE, PROVIDER, 6, 1, 1000, 0), 0);
	store_close(store);

	store = open_at(backup, 0, 0);
	for (uint32_t i = 1; i <= 5; i++)
		ck_assert_uint_eq(sequence_of(store, i), 20 + i);
	assert_service_absent(store, 6);
	ck_assert_uint_eq(sealed_epoch(), 1);
	expect_view(NAMESPACE, 1, 0, 5, NULL);
	ck_assert_str_eq(seen.notes[4], "registration 5 sequence 25");
	ck_assert_uint_eq(latest(NAMESPACE), 9);
	ck_assert_int_eq(store_snapshot_get(store, NAMESPACE, 9, &header, &restored), 0);
	ck_assert_mem_eq(header.data, "header 9", 8);
	ck_assert_mem_eq(&restored, &info, sizeof info);
	for (int e = 0; e < ENCODING_COUNT; e++)
		ck_assert_int_eq(body_check(NAMESPACE, 9, e), 0);
	/* The restored store keeps refusing what the original refused. */
	ck_assert_int_eq(reg(NAMESPACE, "provider-two", 7, 1, 1000, 3), DIRAUTH_ERR_COLLISION);
	buffer_free(&header);
	free(body);
}
END_TEST

int main(void)
{
	const TTest *tests[] = {test_submit_and_read_back,
	                        test_rollback_refused,
	                        test_service_collision_refused,
	                        test_endpoint_collision_refused,
	                        test_view_order_expiry_and_stop,
	                        test_expiry_entries_follow_their_slots,
	                        test_format_2_store_is_read_and_kept,
	                        test_namespace_isolation,
	                        test_persistence_across_reopen,
	                        test_open_creates_private_directory,
	                        test_bad_input_refused,
	                        test_older_format_refused,
	                        test_snapshots_only_move_forward,
	                        test_snapshot_headers_from_an_epoch,
	                        test_body_files,
	                        test_orphan_bodies_tidied_at_open,
	                        test_retention_keeps_headers,
	                        test_diff_files,
	                        test_record_shard_files,
	                        test_stamps,
	                        test_stamps_keep_every_view_within_the_bounds,
	                        test_seal_fixes_view,
	                        test_replaced_versions_kept_per_epoch,
	                        test_seal_prunes_expired,
	                        test_seal_prunes_every_replaced_version,
	                        test_namespace_bounds,
	                        test_namespace_bounds_count_endpoints,
	                        test_format_3_store_counts_endpoints,
	                        test_refuse_line,
	                        test_async_callback_once,
	                        test_refusal_in_a_new_namespace_leaves_nothing,
	                        test_unanswered_requests_are_bounded,
	                        test_compact_form_rebuilds_bytes,
	                        test_compact_form_is_smaller,
	                        test_concurrent_submissions_group_commit,
	                        test_concurrent_same_service_is_sequential,
	                        test_acknowledged_survive_sigkill,
	                        test_backup_restores};
	Suite *s = suite_create("store");
	TCase *tc = tcase_create("store");
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++)
		tcase_add_test(tc, tests[i]);
	suite_add_tcase(s, tc);
	SRunner *runner = srunner_create(s);
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
