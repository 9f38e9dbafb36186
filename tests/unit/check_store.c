/*
 * check_store.c: the store's promises, on a real LMDB environment in a temporary directory.
 *
 * Covers what callers rely on: a submission that returns 0 is there (also after reopening and
 * after a SIGKILL), every refusal (rollback, service and endpoint collisions, map full, bad input)
 * changes nothing, walks are per namespace, ordered and filtered by expiry, snapshots only move
 * forward, concurrent submissions are group-committed, and a backup opens as an equal store.
 */
#include "schema/error.h"
#include "server/store/store.h"
#include "test_support.h"

#include <check.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define NAMESPACE "example"
#define PROVIDER  "provider-one"

/* An id whose bytes spell out (tag, index), so ids of different kinds never meet by accident. */
static void make_id(uint8_t id[32], uint8_t tag, uint32_t index)
{
	memset(id, tag, 32);
	id[28] = (uint8_t)(index >> 24);
	id[29] = (uint8_t)(index >> 16);
	id[30] = (uint8_t)(index >> 8);
	id[31] = (uint8_t)index;
}

static struct store *open_store_at(const char *path, size_t map_size)
{
	struct store_options options = {.path = path, .map_size = map_size};
	struct store *store = NULL;
	int rc = store_open(&options, &store);
	ck_assert_msg(rc == 0, "store_open %s: %s", path, dirauth_strerror(rc));
	return store;
}

/* A registration of one service with up to four endpoints; the note names the sequence. */
struct test_registration {
	struct store_registration r;
	uint8_t service_id[32];
	uint8_t endpoint_ids[4 * 32];
	char note[64];
};

static void make_registration(struct test_registration *t, const char *namespace_name, const char *provider,
                              uint32_t service, uint64_t sequence, uint64_t expires)
{
	memset(t, 0, sizeof *t);
	make_id(t->service_id, 0x5e, service);
	snprintf(t->note, sizeof t->note, "registration %u sequence %llu", (unsigned)service,
	         (unsigned long long)sequence);
	t->r.namespace_name = namespace_name;
	t->r.service_id = t->service_id;
	t->r.provider = provider;
	t->r.sequence = sequence;
	t->r.expires = expires;
	t->r.endpoint_ids = t->endpoint_ids;
	t->r.endpoint_count = 0;
	t->r.note = (const uint8_t *)t->note;
	t->r.note_len = strlen(t->note);
}

static void add_endpoint(struct test_registration *t, uint32_t endpoint)
{
	ck_assert(t->r.endpoint_count < 4);
	make_id(t->endpoint_ids + t->r.endpoint_count * 32, 0xe9, endpoint);
	t->r.endpoint_count++;
}

/* What a walk saw, in order. */
struct walk {
	size_t count;
	uint8_t ids[64][32];
	char notes[64][64];
};

static int record_visit(void *context, const uint8_t service_id[32], const uint8_t *note, size_t note_len)
{
	struct walk *w = context;
	ck_assert(w->count < 64);
	ck_assert(note_len < 64);
	memcpy(w->ids[w->count], service_id, 32);
	memcpy(w->notes[w->count], note, note_len);
	w->notes[w->count][note_len] = 0;
	w->count++;
	return 0;
}

static void walk_namespace(struct store *store, const char *namespace_name, uint64_t now, struct walk *w)
{
	memset(w, 0, sizeof *w);
	int rc = store_registration_foreach(store, namespace_name, now, record_visit, w);
	ck_assert_msg(rc == 0, "foreach: %s", dirauth_strerror(rc));
}

static uint64_t sequence_of(struct store *store, uint32_t service)
{
	uint8_t id[32];
	uint64_t sequence = 0;
	make_id(id, 0x5e, service);
	int rc = store_service_sequence(store, id, &sequence);
	ck_assert_msg(rc == 0, "sequence of %u: %s", (unsigned)service, dirauth_strerror(rc));
	return sequence;
}

static void assert_service_absent(struct store *store, uint32_t service)
{
	uint8_t id[32];
	uint64_t sequence = 0;
	make_id(id, 0x5e, service);
	ck_assert_int_eq(store_service_sequence(store, id, &sequence), DIRAUTH_ERR_NOT_FOUND);
}

START_TEST(test_submit_and_read_back)
{
	char dir[256];
	struct test_registration t;
	struct walk w;
	test_make_tempdir(dir, sizeof dir);
	struct store *store = open_store_at(dir, 0);

	make_registration(&t, NAMESPACE, PROVIDER, 1, 7, 1000);
	add_endpoint(&t, 1);
	ck_assert_int_eq(store_registration_submit(store, &t.r), 0);
	ck_assert_uint_eq(sequence_of(store, 1), 7);
	walk_namespace(store, NAMESPACE, 10, &w);
	ck_assert_uint_eq(w.count, 1);
	ck_assert_mem_eq(w.ids[0], t.service_id, 32);
	ck_assert_str_eq(w.notes[0], "registration 1 sequence 7");

	/* A newer registration replaces the note and raises the sequence. */
	make_registration(&t, NAMESPACE, PROVIDER, 1, 8, 1000);
	add_endpoint(&t, 1);
	add_endpoint(&t, 2);
	ck_assert_int_eq(store_registration_submit(store, &t.r), 0);
	ck_assert_uint_eq(sequence_of(store, 1), 8);
	walk_namespace(store, NAMESPACE, 10, &w);
	ck_assert_uint_eq(w.count, 1);
	ck_assert_str_eq(w.notes[0], "registration 1 sequence 8");
	assert_service_absent(store, 2);

	struct store_statistics statistics;
	ck_assert_int_eq(store_statistics(store, &statistics), 0);
	ck_assert_uint_eq(statistics.submissions, 2);
	ck_assert_uint_eq(statistics.commits, 2);
	store_close(store);
	test_remove_tree(dir);
}
END_TEST

START_TEST(test_rollback_refused)
{
	char dir[256];
	struct test_registration t;
	struct walk w;
	test_make_tempdir(dir, sizeof dir);
	struct store *store = open_store_at(dir, 0);

	make_registration(&t, NAMESPACE, PROVIDER, 1, 5, 1000);
	ck_assert_int_eq(store_registration_submit(store, &t.r), 0);

	make_registration(&t, NAMESPACE, PROVIDER, 1, 5, 2000);
	snprintf(t.note, sizeof t.note, "replayed");
	t.r.note_len = strlen(t.note);
	ck_assert_int_eq(store_registration_submit(store, &t.r), DIRAUTH_ERR_ROLLBACK);
	make_registration(&t, NAMESPACE, PROVIDER, 1, 4, 2000);
	add_endpoint(&t, 9);
	ck_assert_int_eq(store_registration_submit(store, &t.r), DIRAUTH_ERR_ROLLBACK);
	make_registration(&t, NAMESPACE, PROVIDER, 1, 0, 2000);
	ck_assert_int_eq(store_registration_submit(store, &t.r), DIRAUTH_ERR_ROLLBACK);

	ck_assert_uint_eq(sequence_of(store, 1), 5);
	walk_namespace(store, NAMESPACE, 1500, &w); /* the refused ones would have expired later */
	ck_assert_uint_eq(w.count, 0);
	walk_namespace(store, NAMESPACE, 10, &w);
	ck_assert_uint_eq(w.count, 1);
	ck_assert_str_eq(w.notes[0], "registration 1 sequence 5");

	/* The endpoint of the refused registration was not taken: another service can have it. */
	make_registration(&t, NAMESPACE, PROVIDER, 2, 1, 1000);
	add_endpoint(&t, 9);
	ck_assert_int_eq(store_registration_submit(store, &t.r), 0);

	struct store_statistics statistics;
	ck_assert_int_eq(store_statistics(store, &statistics), 0);
	ck_assert_uint_eq(statistics.submissions, 5);
	ck_assert_uint_eq(statistics.commits, 2); /* refusals commit nothing */
	store_close(store);
	test_remove_tree(dir);
}
END_TEST

START_TEST(test_service_collision_refused)
{
	char dir[256];
	struct test_registration t;
	struct walk w;
	test_make_tempdir(dir, sizeof dir);
	struct store *store = open_store_at(dir, 0);

	make_registration(&t, NAMESPACE, PROVIDER, 1, 1, 1000);
	ck_assert_int_eq(store_registration_submit(store, &t.r), 0);

	/* Another provider cannot take the service id, whatever its sequence. */
	make_registration(&t, NAMESPACE, "provider-two", 1, 100, 1000);
	ck_assert_int_eq(store_registration_submit(store, &t.r), DIRAUTH_ERR_COLLISION);
	/* A provider name that only extends the owner's is another provider. */
	make_registration(&t, NAMESPACE, PROVIDER "x", 1, 100, 1000);
	ck_assert_int_eq(store_registration_submit(store, &t.r), DIRAUTH_ERR_COLLISION);
	/* Nor can the owner move it to another namespace. */
	make_registration(&t, "other", PROVIDER, 1, 100, 1000);
	ck_assert_int_eq(store_registration_submit(store, &t.r), DIRAUTH_ERR_COLLISION);

	ck_assert_uint_eq(sequence_of(store, 1), 1);
	walk_namespace(store, NAMESPACE, 10, &w);
	ck_assert_uint_eq(w.count, 1);
	ck_assert_str_eq(w.notes[0], "registration 1 sequence 1");
	walk_namespace(store, "other", 10, &w);
	ck_assert_uint_eq(w.count, 0);
	store_close(store);
	test_remove_tree(dir);
}
END_TEST

START_TEST(test_endpoint_collision_refused)
{
	char dir[256];
	struct test_registration t;
	struct walk w;
	test_make_tempdir(dir, sizeof dir);
	struct store *store = open_store_at(dir, 0);

	make_registration(&t, NAMESPACE, PROVIDER, 1, 1, 1000);
	add_endpoint(&t, 100);
	ck_assert_int_eq(store_registration_submit(store, &t.r), 0);

	/* Service 2 asks for a fresh endpoint and service 1's: refused as a whole. */
	make_registration(&t, NAMESPACE, PROVIDER, 2, 1, 1000);
	add_endpoint(&t, 200);
	add_endpoint(&t, 100);
	ck_assert_int_eq(store_registration_submit(store, &t.r), DIRAUTH_ERR_COLLISION);
	assert_service_absent(store, 2);
	walk_namespace(store, NAMESPACE, 10, &w);
	ck_assert_uint_eq(w.count, 1);

	/* The fresh endpoint was not recorded for service 2: service 3 can take it. */
	make_registration(&t, NAMESPACE, PROVIDER, 3, 1, 1000);
	add_endpoint(&t, 200);
	ck_assert_int_eq(store_registration_submit(store, &t.r), 0);

	/* An endpoint dropped by its service stays with it: nobody else gets it later. */
	make_registration(&t, NAMESPACE, PROVIDER, 1, 2, 1000);
	ck_assert_int_eq(store_registration_submit(store, &t.r), 0);
	make_registration(&t, NAMESPACE, "provider-two", 4, 1, 1000);
	add_endpoint(&t, 100);
	ck_assert_int_eq(store_registration_submit(store, &t.r), DIRAUTH_ERR_COLLISION);
	assert_service_absent(store, 4);

	/* Its own service may list it again. */
	make_registration(&t, NAMESPACE, PROVIDER, 1, 3, 1000);
	add_endpoint(&t, 100);
	add_endpoint(&t, 100);
	ck_assert_int_eq(store_registration_submit(store, &t.r), 0);
	ck_assert_uint_eq(sequence_of(store, 1), 3);
	store_close(store);
	test_remove_tree(dir);
}
END_TEST

START_TEST(test_foreach_order_and_expiry)
{
	char dir[256];
	struct test_registration t;
	struct walk w;
	test_make_tempdir(dir, sizeof dir);
	struct store *store = open_store_at(dir, 0);

	/* Submitted out of order; service n expires at 100 * n. */
	const uint32_t order[] = {5, 1, 4, 2, 3, 0x01000000, 256};
	for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
		make_registration(&t, NAMESPACE, PROVIDER, order[i], 1, 100 * (uint64_t)order[i]);
		ck_assert_int_eq(store_registration_submit(store, &t.r), 0);
	}

	walk_namespace(store, NAMESPACE, 0, &w);
	ck_assert_uint_eq(w.count, 7);
	for (size_t i = 1; i < w.count; i++)
		ck_assert_int_lt(memcmp(w.ids[i - 1], w.ids[i], 32), 0);
	ck_assert_str_eq(w.notes[0], "registration 1 sequence 1");
	ck_assert_str_eq(w.notes[5], "registration 256 sequence 1");
	ck_assert_str_eq(w.notes[6], "registration 16777216 sequence 1");

	/* expires <= now is left out: at 300, services 1, 2 and 3 are gone. */
	walk_namespace(store, NAMESPACE, 300, &w);
	ck_assert_uint_eq(w.count, 4);
	ck_assert_str_eq(w.notes[0], "registration 4 sequence 1");
	ck_assert_str_eq(w.notes[1], "registration 5 sequence 1");
	walk_namespace(store, NAMESPACE, 299, &w);
	ck_assert_uint_eq(w.count, 5);
	ck_assert_str_eq(w.notes[0], "registration 3 sequence 1");

	/* A renewed registration is back in the walk. */
	make_registration(&t, NAMESPACE, PROVIDER, 1, 2, 10000);
	ck_assert_int_eq(store_registration_submit(store, &t.r), 0);
	walk_namespace(store, NAMESPACE, 300, &w);
	ck_assert_uint_eq(w.count, 5);
	ck_assert_str_eq(w.notes[0], "registration 1 sequence 2");
	store_close(store);
	test_remove_tree(dir);
}
END_TEST

static int stop_after_two(void *context, const uint8_t service_id[32], const uint8_t *note, size_t note_len)
{
	(void)service_id;
	(void)note;
	(void)note_len;
	int *calls = context;
	return ++*calls == 2 ? 42 : 0;
}

START_TEST(test_foreach_stops_on_visitor)
{
	char dir[256];
	struct test_registration t;
	int calls = 0;
	test_make_tempdir(dir, sizeof dir);
	struct store *store = open_store_at(dir, 0);
	for (uint32_t i = 1; i <= 4; i++) {
		make_registration(&t, NAMESPACE, PROVIDER, i, 1, 1000);
		ck_assert_int_eq(store_registration_submit(store, &t.r), 0);
	}
	ck_assert_int_eq(store_registration_foreach(store, NAMESPACE, 0, stop_after_two, &calls), 42);
	ck_assert_int_eq(calls, 2);
	store_close(store);
	test_remove_tree(dir);
}
END_TEST

START_TEST(test_namespace_isolation)
{
	char dir[256];
	struct test_registration t;
	struct walk w;
	test_make_tempdir(dir, sizeof dir);
	struct store *store = open_store_at(dir, 0);

	/* Names chosen so that one is a prefix of the others. */
	const char *names[] = {"a", "a-b", "ab", "b"};
	for (uint32_t i = 0; i < 4; i++) {
		for (uint32_t j = 0; j < 3; j++) {
			make_registration(&t, names[i], PROVIDER, 10 * i + j, 1, 1000);
			ck_assert_int_eq(store_registration_submit(store, &t.r), 0);
		}
	}
	for (uint32_t i = 0; i < 4; i++) {
		walk_namespace(store, names[i], 0, &w);
		ck_assert_uint_eq(w.count, 3);
		for (uint32_t j = 0; j < 3; j++) {
			uint8_t id[32];
			make_id(id, 0x5e, 10 * i + j);
			ck_assert_mem_eq(w.ids[j], id, 32);
		}
	}
	walk_namespace(store, "c", 0, &w);
	ck_assert_uint_eq(w.count, 0);
	store_close(store);
	test_remove_tree(dir);
}
END_TEST

START_TEST(test_persistence_across_reopen)
{
	char dir[256];
	struct test_registration t;
	struct walk w;
	test_make_tempdir(dir, sizeof dir);
	struct store *store = open_store_at(dir, 0);
	for (uint32_t i = 1; i <= 3; i++) {
		make_registration(&t, NAMESPACE, PROVIDER, i, 10 + i, 1000);
		add_endpoint(&t, i);
		ck_assert_int_eq(store_registration_submit(store, &t.r), 0);
	}
	ck_assert_int_eq(
	    store_snapshot_put(store, NAMESPACE, 3, (const uint8_t *)"h", 1, (const uint8_t *)"b", 1), 0);
	store_close(store);

	store = open_store_at(dir, 0);
	for (uint32_t i = 1; i <= 3; i++)
		ck_assert_uint_eq(sequence_of(store, i), 10 + i);
	walk_namespace(store, NAMESPACE, 0, &w);
	ck_assert_uint_eq(w.count, 3);
	ck_assert_str_eq(w.notes[2], "registration 3 sequence 13");
	uint64_t epoch = 0;
	ck_assert_int_eq(store_snapshot_latest(store, NAMESPACE, &epoch), 0);
	ck_assert_uint_eq(epoch, 3);
	/* Refusals are still enforced after reopening. */
	make_registration(&t, NAMESPACE, PROVIDER, 1, 11, 1000);
	ck_assert_int_eq(store_registration_submit(store, &t.r), DIRAUTH_ERR_ROLLBACK);
	make_registration(&t, NAMESPACE, PROVIDER, 9, 1, 1000);
	add_endpoint(&t, 2);
	ck_assert_int_eq(store_registration_submit(store, &t.r), DIRAUTH_ERR_COLLISION);
	store_close(store);

	struct stat st;
	ck_assert_int_eq(stat(dir, &st), 0);
	test_remove_tree(dir);
}
END_TEST

START_TEST(test_open_creates_private_directory)
{
	char dir[256], path[300];
	struct stat st;
	test_make_tempdir(dir, sizeof dir);
	snprintf(path, sizeof path, "%s/state", dir);
	struct store *store = open_store_at(path, 0);
	store_close(store);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	ck_assert_uint_eq(st.st_mode & 0777, 0700);

	/* A path that is a file is refused; missing parent directories are created, 0700. */
	struct store_options options = {.path = NULL};
	struct store *none = NULL;
	snprintf(path, sizeof path, "%s/file", dir);
	test_write_file(path, "x", 1, 0600);
	options.path = path;
	ck_assert_int_eq(store_open(&options, &none), DIRAUTH_ERR_IO);
	snprintf(path, sizeof path, "%s/missing/state", dir);
	ck_assert_int_eq(store_open(&options, &none), 0);
	store_close(none);
	none = NULL;
	snprintf(path, sizeof path, "%s/missing", dir);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0700);
	options.path = NULL;
	ck_assert_int_eq(store_open(&options, &none), DIRAUTH_ERR_CONFIG);
	ck_assert_ptr_null(none);
	store_close(NULL);
	test_remove_tree(dir);
}
END_TEST

START_TEST(test_bad_input_refused)
{
	char dir[256], long_name[STORE_NAME_MAX + 2];
	struct test_registration t;
	uint64_t value;
	test_make_tempdir(dir, sizeof dir);
	struct store *store = open_store_at(dir, 0);
	memset(long_name, 'a', sizeof long_name - 1);
	long_name[sizeof long_name - 1] = 0;

	make_registration(&t, NAMESPACE, PROVIDER, 1, 1, 1000);
	ck_assert_int_eq(store_registration_submit(store, NULL), DIRAUTH_ERR_SYNTAX);
	t.r.namespace_name = NULL;
	ck_assert_int_eq(store_registration_submit(store, &t.r), DIRAUTH_ERR_SYNTAX);
	t.r.namespace_name = "";
	ck_assert_int_eq(store_registration_submit(store, &t.r), DIRAUTH_ERR_SYNTAX);
	t.r.namespace_name = long_name;
	ck_assert_int_eq(store_registration_submit(store, &t.r), DIRAUTH_ERR_BOUNDS);
	t.r.namespace_name = NAMESPACE;
	t.r.provider = long_name;
	ck_assert_int_eq(store_registration_submit(store, &t.r), DIRAUTH_ERR_BOUNDS);
	t.r.provider = PROVIDER;
	t.r.service_id = NULL;
	ck_assert_int_eq(store_registration_submit(store, &t.r), DIRAUTH_ERR_SYNTAX);
	t.r.service_id = t.service_id;
	t.r.endpoint_ids = NULL;
	t.r.endpoint_count = 1;
	ck_assert_int_eq(store_registration_submit(store, &t.r), DIRAUTH_ERR_SYNTAX);
	t.r.endpoint_ids = t.endpoint_ids;
	t.r.endpoint_count = 0;
	t.r.note = NULL;
	ck_assert_int_eq(store_registration_submit(store, &t.r), DIRAUTH_ERR_SYNTAX);
	assert_service_absent(store, 1);

	/* A name of exactly STORE_NAME_MAX bytes is accepted. */
	long_name[STORE_NAME_MAX] = 0;
	make_registration(&t, long_name, long_name, 1, 1, 1000);
	ck_assert_int_eq(store_registration_submit(store, &t.r), 0);
	long_name[STORE_NAME_MAX] = 'a';

	ck_assert_int_eq(store_snapshot_put(store, long_name, 1, NULL, 0, NULL, 0), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(store_snapshot_put(store, NAMESPACE, 1, NULL, 3, NULL, 0), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(store_snapshot_latest(store, "", &value), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(store_snapshot_latest(store, NAMESPACE, &value), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(store_registration_foreach(store, NAMESPACE, 0, NULL, NULL), DIRAUTH_ERR_SYNTAX);
	ck_assert_int_eq(store_service_sequence(store, t.service_id, NULL), DIRAUTH_ERR_SYNTAX);
	store_close(store);
	test_remove_tree(dir);
}
END_TEST

START_TEST(test_snapshots)
{
	char dir[256];
	struct buffer header, body;
	uint64_t epoch = 0;
	test_make_tempdir(dir, sizeof dir);
	struct store *store = open_store_at(dir, 0);
	buffer_init(&header);
	buffer_init(&body);

	ck_assert_int_eq(store_snapshot_latest(store, NAMESPACE, &epoch), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(store_snapshot_get(store, NAMESPACE, 1, &header, &body), DIRAUTH_ERR_NOT_FOUND);

	ck_assert_int_eq(store_snapshot_put(store, NAMESPACE, 1, (const uint8_t *)"header one", 10,
	                                    (const uint8_t *)"body one", 8),
	                 0);
	ck_assert_int_eq(store_snapshot_put(store, NAMESPACE, 5, (const uint8_t *)"header five", 11,
	                                    (const uint8_t *)"body five", 9),
	                 0);
	ck_assert_int_eq(store_snapshot_latest(store, NAMESPACE, &epoch), 0);
	ck_assert_uint_eq(epoch, 5);

	/* Equal and lower epochs are refused and change nothing. */
	ck_assert_int_eq(
	    store_snapshot_put(store, NAMESPACE, 5, (const uint8_t *)"forged", 6, (const uint8_t *)"x", 1),
	    DIRAUTH_ERR_ROLLBACK);
	ck_assert_int_eq(
	    store_snapshot_put(store, NAMESPACE, 3, (const uint8_t *)"late", 4, (const uint8_t *)"x", 1),
	    DIRAUTH_ERR_ROLLBACK);
	ck_assert_int_eq(store_snapshot_get(store, NAMESPACE, 3, &header, &body), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(store_snapshot_latest(store, NAMESPACE, &epoch), 0);
	ck_assert_uint_eq(epoch, 5);

	ck_assert_int_eq(store_snapshot_get(store, NAMESPACE, 5, &header, &body), 0);
	ck_assert_uint_eq(header.len, 11);
	ck_assert_mem_eq(header.data, "header five", 11);
	ck_assert_uint_eq(body.len, 9);
	ck_assert_mem_eq(body.data, "body five", 9);
	/* The buffers are replaced, not appended to; either may be left out. */
	ck_assert_int_eq(store_snapshot_get(store, NAMESPACE, 1, &header, NULL), 0);
	ck_assert_uint_eq(header.len, 10);
	ck_assert_mem_eq(header.data, "header one", 10);
	ck_assert_int_eq(store_snapshot_get(store, NAMESPACE, 1, NULL, &body), 0);
	ck_assert_uint_eq(body.len, 8);
	ck_assert_mem_eq(body.data, "body one", 8);

	/* Epochs are per namespace; an empty header and body are kept as such. */
	ck_assert_int_eq(store_snapshot_latest(store, "other", &epoch), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(store_snapshot_put(store, "other", 1, NULL, 0, NULL, 0), 0);
	ck_assert_int_eq(store_snapshot_get(store, "other", 1, &header, &body), 0);
	ck_assert_uint_eq(header.len, 0);
	ck_assert_uint_eq(body.len, 0);
	ck_assert_int_eq(store_snapshot_get(store, "other", 5, &header, &body), DIRAUTH_ERR_NOT_FOUND);

	store_close(store);
	store = open_store_at(dir, 0);
	ck_assert_int_eq(store_snapshot_latest(store, NAMESPACE, &epoch), 0);
	ck_assert_uint_eq(epoch, 5);
	ck_assert_int_eq(
	    store_snapshot_put(store, NAMESPACE, 4, (const uint8_t *)"late", 4, (const uint8_t *)"x", 1),
	    DIRAUTH_ERR_ROLLBACK);
	ck_assert_int_eq(
	    store_snapshot_put(store, NAMESPACE, 6, (const uint8_t *)"h6", 2, (const uint8_t *)"b6", 2), 0);
	store_close(store);
	buffer_free(&header);
	buffer_free(&body);
	test_remove_tree(dir);
}
END_TEST

START_TEST(test_map_full_changes_nothing)
{
	char dir[256];
	struct test_registration t;
	static uint8_t note[32 * 1024];
	int rc = 0;
	uint32_t accepted = 0;
	test_make_tempdir(dir, sizeof dir);
	struct store *store = open_store_at(dir, 512 * 1024);
	memset(note, 'n', sizeof note);

	for (uint32_t i = 1; i <= 64; i++) {
		make_registration(&t, NAMESPACE, PROVIDER, i, 1, 1000);
		add_endpoint(&t, i);
		t.r.note = note;
		t.r.note_len = sizeof note;
		rc = store_registration_submit(store, &t.r);
		if (rc)
			break;
		accepted = i;
	}
	ck_assert_int_eq(rc, DIRAUTH_ERR_FULL);
	ck_assert_uint_gt(accepted, 0);
	assert_service_absent(store, accepted + 1);
	for (uint32_t i = 1; i <= accepted; i++)
		ck_assert_uint_eq(sequence_of(store, i), 1);
	store_close(store);

	/* Reopened with room, the refused registration goes through. */
	store = open_store_at(dir, 0);
	make_registration(&t, NAMESPACE, PROVIDER, accepted + 1, 1, 1000);
	add_endpoint(&t, accepted + 1);
	ck_assert_int_eq(store_registration_submit(store, &t.r), 0);
	store_close(store);
	test_remove_tree(dir);
}
END_TEST

#define THREADS          16
#define SUBMISSIONS_EACH 200

struct submitter {
	pthread_t thread;
	struct store *store;
	uint32_t first_service;
	uint32_t count;
	int failures;
	int accepted;
};

static void *submit_distinct(void *argument)
{
	struct submitter *s = argument;
	for (uint32_t i = 0; i < s->count; i++) {
		struct test_registration t;
		uint32_t service = s->first_service + i;
		make_registration(&t, NAMESPACE, PROVIDER, service, 1 + i, 1000);
		add_endpoint(&t, service);
		if (store_registration_submit(s->store, &t.r) != 0)
			s->failures++;
	}
	return NULL;
}

static int count_visit(void *context, const uint8_t service_id[32], const uint8_t *note, size_t note_len)
{
	(void)service_id;
	(void)note;
	(void)note_len;
	(*(size_t *)context)++;
	return 0;
}

START_TEST(test_concurrent_submissions_group_commit)
{
	char dir[256];
	struct submitter submitters[THREADS];
	struct store_statistics statistics;
	size_t visited = 0;
	test_make_tempdir(dir, sizeof dir);
	struct store *store = open_store_at(dir, 0);

	for (uint32_t i = 0; i < THREADS; i++) {
		submitters[i] = (struct submitter){
		    .store = store, .first_service = 1 + i * SUBMISSIONS_EACH, .count = SUBMISSIONS_EACH};
		ck_assert_int_eq(pthread_create(&submitters[i].thread, NULL, submit_distinct, &submitters[i]),
		                 0);
	}
	for (uint32_t i = 0; i < THREADS; i++) {
		ck_assert_int_eq(pthread_join(submitters[i].thread, NULL), 0);
		ck_assert_int_eq(submitters[i].failures, 0);
	}
	ck_assert_int_eq(store_statistics(store, &statistics), 0);
	ck_assert_uint_eq(statistics.submissions, THREADS * SUBMISSIONS_EACH);
	ck_assert_uint_lt(statistics.commits, statistics.submissions);
	ck_assert_uint_le(statistics.commits, statistics.batches);
	store_close(store);

	store = open_store_at(dir, 0);
	for (uint32_t i = 0; i < THREADS; i++)
		for (uint32_t j = 0; j < SUBMISSIONS_EACH; j++)
			ck_assert_uint_eq(sequence_of(store, 1 + i * SUBMISSIONS_EACH + j), 1 + j);
	ck_assert_int_eq(store_registration_foreach(store, NAMESPACE, 0, count_visit, &visited), 0);
	ck_assert_uint_eq(visited, THREADS * SUBMISSIONS_EACH);
	store_close(store);
	test_remove_tree(dir);
}
END_TEST

static void *submit_same(void *argument)
{
	struct submitter *s = argument;
	for (uint32_t i = 0; i < s->count; i++) {
		struct test_registration t;
		/* Every thread offers the same sequences for one service: each is accepted once. */
		make_registration(&t, NAMESPACE, PROVIDER, 1, 1 + i, 1000);
		int rc = store_registration_submit(s->store, &t.r);
		if (rc == 0)
			s->accepted++;
		else if (rc != DIRAUTH_ERR_ROLLBACK)
			s->failures++;
	}
	return NULL;
}

START_TEST(test_concurrent_same_service_is_sequential)
{
	char dir[256];
	struct submitter submitters[THREADS];
	int accepted = 0;
	test_make_tempdir(dir, sizeof dir);
	struct store *store = open_store_at(dir, 0);

	for (uint32_t i = 0; i < THREADS; i++) {
		submitters[i] = (struct submitter){.store = store, .count = 50};
		ck_assert_int_eq(pthread_create(&submitters[i].thread, NULL, submit_same, &submitters[i]), 0);
	}
	for (uint32_t i = 0; i < THREADS; i++) {
		ck_assert_int_eq(pthread_join(submitters[i].thread, NULL), 0);
		ck_assert_int_eq(submitters[i].failures, 0);
		accepted += submitters[i].accepted;
	}
	/* Had two in one batch both checked against the committed state, some sequence would have
	 * been accepted twice and the sum would exceed the highest sequence. */
	ck_assert_int_le(accepted, 50);
	ck_assert_int_ge(accepted, 1);
	ck_assert_uint_eq(sequence_of(store, 1), 50);
	store_close(store);
	test_remove_tree(dir);
}
END_TEST

/* Reads exactly len bytes; returns false at end of file. */
static bool read_full(int fd, uint8_t *p, size_t len)
{
	while (len) {
		ssize_t n = read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		len -= (size_t)n;
	}
	return true;
}

#define CRASH_SERVICES 3

/* The child: submits forever over three services, reporting each acknowledgement. */
static void crash_child(const char *dir, int report)
{
	struct store_options options = {.path = dir};
	struct store *store = NULL;
	if (store_open(&options, &store) != 0)
		_exit(2);
	for (uint64_t sequence = 1;; sequence++) {
		for (uint32_t service = 0; service < CRASH_SERVICES; service++) {
			struct test_registration t;
			make_registration(&t, NAMESPACE, PROVIDER, service, sequence, 1000);
			add_endpoint(&t, service);
			if (store_registration_submit(store, &t.r) != 0)
				_exit(3);
			uint8_t record[12];
			for (int i = 0; i < 4; i++)
				record[i] = (uint8_t)(service >> (24 - 8 * i));
			for (int i = 0; i < 8; i++)
				record[4 + i] = (uint8_t)(sequence >> (56 - 8 * i));
			if (write(report, record, sizeof record) != (ssize_t)sizeof record)
				_exit(4);
		}
	}
}

START_TEST(test_acknowledged_survive_sigkill)
{
	char dir[256];
	int fds[2];
	uint64_t acknowledged[CRASH_SERVICES] = {0};
	size_t count = 0;
	test_make_tempdir(dir, sizeof dir);
	ck_assert_int_eq(pipe(fds), 0);

	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(fds[0]);
		crash_child(dir, fds[1]);
		_exit(1);
	}
	close(fds[1]);

	uint8_t record[12];
	bool killed = false;
	while (read_full(fds[0], record, sizeof record)) {
		uint32_t service = 0;
		uint64_t sequence = 0;
		for (int i = 0; i < 4; i++)
			service = service << 8 | record[i];
		for (int i = 0; i < 8; i++)
			sequence = sequence << 8 | record[4 + i];
		ck_assert_uint_lt(service, CRASH_SERVICES);
		ck_assert_uint_gt(sequence, acknowledged[service]);
		acknowledged[service] = sequence;
		/* Acknowledgements already in the pipe when the child dies still count. */
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

	struct store *store = open_store_at(dir, 0);
	for (uint32_t service = 0; service < CRASH_SERVICES; service++) {
		uint64_t stored = sequence_of(store, service);
		ck_assert_msg(stored >= acknowledged[service], "service %u: stored %llu, acknowledged %llu",
		              (unsigned)service, (unsigned long long)stored,
		              (unsigned long long)acknowledged[service]);
		/* At most the in-flight submission is ahead of what was reported. */
		ck_assert_uint_le(stored, acknowledged[service] + 1);
		/* And the sequence cannot go back. */
		struct test_registration t;
		make_registration(&t, NAMESPACE, PROVIDER, service, acknowledged[service], 1000);
		ck_assert_int_eq(store_registration_submit(store, &t.r), DIRAUTH_ERR_ROLLBACK);
	}
	store_close(store);
	test_remove_tree(dir);
}
END_TEST

START_TEST(test_backup_restores)
{
	char dir[256], backup[300], data[340];
	struct test_registration t;
	struct walk w;
	struct buffer header, body;
	struct stat st;
	uint64_t epoch = 0;
	test_make_tempdir(dir, sizeof dir);
	snprintf(backup, sizeof backup, "%s/backup", dir);
	snprintf(data, sizeof data, "%s/data.mdb", backup);
	char live[300];
	snprintf(live, sizeof live, "%s/live", dir);
	buffer_init(&header);
	buffer_init(&body);

	struct store *store = open_store_at(live, 0);
	for (uint32_t i = 1; i <= 5; i++) {
		make_registration(&t, NAMESPACE, PROVIDER, i, 20 + i, 1000);
		add_endpoint(&t, i);
		ck_assert_int_eq(store_registration_submit(store, &t.r), 0);
	}
	ck_assert_int_eq(
	    store_snapshot_put(store, NAMESPACE, 9, (const uint8_t *)"hdr", 3, (const uint8_t *)"bdy", 3), 0);

	/* The target must exist, and must not already hold a copy. */
	ck_assert_int_eq(store_backup(store, backup), DIRAUTH_ERR_IO);
	ck_assert_int_eq(mkdir(backup, 0700), 0);
	ck_assert_int_eq(store_backup(store, backup), 0);
	ck_assert_int_eq(store_backup(store, backup), DIRAUTH_ERR_EXISTS);
	ck_assert_int_eq(stat(data, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);

	/* Written after the backup: must not be in it. */
	make_registration(&t, NAMESPACE, PROVIDER, 6, 1, 1000);
	ck_assert_int_eq(store_registration_submit(store, &t.r), 0);
	store_close(store);

	store = open_store_at(backup, 0);
	for (uint32_t i = 1; i <= 5; i++)
		ck_assert_uint_eq(sequence_of(store, i), 20 + i);
	assert_service_absent(store, 6);
	walk_namespace(store, NAMESPACE, 0, &w);
	ck_assert_uint_eq(w.count, 5);
	ck_assert_str_eq(w.notes[4], "registration 5 sequence 25");
	ck_assert_int_eq(store_snapshot_latest(store, NAMESPACE, &epoch), 0);
	ck_assert_uint_eq(epoch, 9);
	ck_assert_int_eq(store_snapshot_get(store, NAMESPACE, 9, &header, &body), 0);
	ck_assert_mem_eq(header.data, "hdr", 3);
	ck_assert_mem_eq(body.data, "bdy", 3);
	/* The restored store keeps refusing what the original refused. */
	make_registration(&t, NAMESPACE, "provider-two", 7, 1, 1000);
	add_endpoint(&t, 3);
	ck_assert_int_eq(store_registration_submit(store, &t.r), DIRAUTH_ERR_COLLISION);
	store_close(store);
	buffer_free(&header);
	buffer_free(&body);
	test_remove_tree(dir);
}
END_TEST

static Suite *store_suite(void)
{
	Suite *s = suite_create("store");
	TCase *tc = tcase_create("store");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_submit_and_read_back);
	tcase_add_test(tc, test_rollback_refused);
	tcase_add_test(tc, test_service_collision_refused);
	tcase_add_test(tc, test_endpoint_collision_refused);
	tcase_add_test(tc, test_foreach_order_and_expiry);
	tcase_add_test(tc, test_foreach_stops_on_visitor);
	tcase_add_test(tc, test_namespace_isolation);
	tcase_add_test(tc, test_persistence_across_reopen);
	tcase_add_test(tc, test_open_creates_private_directory);
	tcase_add_test(tc, test_bad_input_refused);
	tcase_add_test(tc, test_snapshots);
	tcase_add_test(tc, test_map_full_changes_nothing);
	tcase_add_test(tc, test_concurrent_submissions_group_commit);
	tcase_add_test(tc, test_concurrent_same_service_is_sequential);
	tcase_add_test(tc, test_acknowledged_survive_sigkill);
	tcase_add_test(tc, test_backup_restores);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *runner = srunner_create(store_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
