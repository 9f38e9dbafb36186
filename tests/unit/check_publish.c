/*
 * check_publish.c: snapshots built from a real store of real signed registrations: header
 * fields, a body that verifies, chaining to the previous header, refusal to go back or to break
 * a bound, the scheduler driven by a file clock, and prepared responses across a restart.
 */
#include "clock.h"
#include "config.h"
#include "epoch.h"
#include "error.h"
#include "key.h"
#include "note.h"
#include "prepared.h"
#include "publish.h"
#include "signer.h"
#include "snapshot.h"
#include "store.h"
#include "submit.h"
#include "test_keys.h"
#include "test_support.h"

#include <check.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GENESIS 1767225000ULL
#define LENGTH  60ULL

struct fixture {
	char dir[512];
	char path[800];
	struct config *config;
	struct signer *signer;
	struct clock *clock;
	struct store *store;
	struct test_key provider;
};

static void write_clock(struct fixture *f, uint64_t now)
{
	char path[900], text[32];
	snprintf(path, sizeof path, "%s/clock", f->dir);
	int n = snprintf(text, sizeof text, "%llu\n", (unsigned long long)now);
	test_write_file(path, text, (size_t)n, 0644);
}

static void fixture_open(struct fixture *f, const char *bounds)
{
	memset(f, 0, sizeof *f);
	test_make_tempdir(f->dir, sizeof f->dir);
	struct signer_key *key = NULL;
	ck_assert_int_eq(signer_key_generate("authority1.dirauth.example", &key), 0);
	snprintf(f->path, sizeof f->path, "%s/authority.key", f->dir);
	ck_assert_int_eq(signer_key_save(key, f->path), 0);
	signer_key_free(key);
	ck_assert_int_eq(signer_open_local(f->path, &f->signer), 0);
	test_key_load(TEST_KEY_PROVIDER, &f->provider);

	char text[4096];
	snprintf(text, sizeof text,
	         "authority: { name: authority1.dirauth.example, signing_key: authority.key }\n"
	         "listen: { address: 127.0.0.1, port: 8080 }\n"
	         "data_dir: data\n"
	         "epoch: { length_seconds: %llu, genesis: %llu, validity_epochs: 3 }\n"
	         "clock: { source: file, path: clock }\n"
	         "namespaces:\n"
	         "  - { name: mix, origin: dirauth.example/mix }\n"
	         "  - { name: mail, origin: dirauth.example/mail }\n"
	         "providers:\n"
	         "  - { key: \"%s\", namespaces: [mix], classes: [mix-gateway] }\n"
	         "%s",
	         LENGTH, GENESIS, test_key_verifier_string(&f->provider), bounds ? bounds : "");
	struct settings_error error;
	ck_assert_msg(config_parse((const uint8_t *)text, strlen(text), f->dir, &f->config, &error) == 0,
	              "%zu: %s", error.line, error.message);
	ck_assert_int_eq(clock_open_file(f->config->clock_path, &f->clock), 0);
	struct store_options options = {.path = f->config->data_dir};
	ck_assert_int_eq(store_open(&options, &f->store), 0);
}

static void fixture_close(struct fixture *f)
{
	store_close(f->store);
	clock_close(f->clock);
	signer_close(f->signer);
	config_free(f->config);
	test_key_free(&f->provider);
	test_remove_tree(f->dir);
}

/* Submits registration number index, valid from issued_at to expires, through the real checks. */
static void submit(struct fixture *f, unsigned index, uint64_t issued_at, uint64_t expires)
{
	struct registration r;
	struct buffer note;
	buffer_init(&note);
	test_example_registration(index, "mix", &f->provider, &r);
	r.issued_at = issued_at;
	r.expires = expires;
	test_sign_registration(&r, &f->provider, &note);
	struct submit_context context = {f->config, f->store, f->signer, f->clock};
	struct submit_result result;
	ck_assert_msg(submit_registration(&context, note.data, note.len, &result) == API_ERROR_NONE, "%s",
	              result.detail);
	buffer_free(&result.receipt);
	buffer_free(&note);
	registration_clear(&r);
}

static struct note *parse_header_note(const struct publication *p, struct snapshot_header *h)
{
	struct note *note = NULL;
	ck_assert_int_eq(note_parse(p->header_note.data, p->header_note.len, &note), 0);
	ck_assert_int_eq(snapshot_header_parse(note->text, note->text_len, h), 0);
	return note;
}

START_TEST(test_publish_records)
{
	struct fixture f;
	fixture_open(&f, NULL);
	uint64_t now = GENESIS + 10 * LENGTH + 5;
	write_clock(&f, now);
	submit(&f, 1, now, now + 3600);
	submit(&f, 2, now, now + 3600);
	/* Expires before epoch 11 starts: not in its snapshot. */
	submit(&f, 3, now, GENESIS + 11 * LENGTH);

	struct publication p;
	ck_assert_int_eq(publish_snapshot(f.config, f.store, f.signer, 0, 11, &p), 0);
	struct snapshot_header h;
	struct note *note = parse_header_note(&p, &h);
	const struct note_verifier *authority = signer_verifier(f.signer);
	ck_assert_int_eq(note_verify_threshold(note, authority, 1, 1), 0);
	ck_assert_str_eq(h.namespace_name, "mix");
	ck_assert_str_eq(h.origin, "dirauth.example/mix");
	ck_assert_uint_eq(h.epoch, 11);
	ck_assert_uint_eq(h.valid_after, GENESIS + 11 * LENGTH);
	ck_assert_uint_eq(h.fresh_until, GENESIS + 12 * LENGTH);
	ck_assert_uint_eq(h.valid_until, GENESIS + 14 * LENGTH);
	ck_assert_uint_eq(h.record_count, 2);
	ck_assert_uint_eq(h.consensus_method, SNAPSHOT_CONSENSUS_METHOD);
	uint8_t zeros[32] = {0};
	ck_assert_mem_eq(h.previous, zeros, 32);
	ck_assert_mem_eq(&h, &p.header, sizeof h);
	const struct buffer *body = &p.encoded[ENCODING_IDENTITY];
	ck_assert_uint_eq(h.body_size, body->len);
	ck_assert_int_eq(snapshot_body_verify(&h, body->data, body->len, 10), 0);
	ck_assert_int_eq(snapshot_body_verify(&h, body->data, body->len, 1), DIRAUTH_ERR_BOUNDS);
	/* The compressed forms decode to the body. */
	for (int e = ENCODING_GZIP; e < ENCODING_COUNT; e++) {
		struct buffer decoded;
		buffer_init(&decoded);
		ck_assert_int_eq(compress_decode((enum content_encoding)e, p.encoded[e].data,
		                                 p.encoded[e].len, body->len, &decoded),
		                 0);
		ck_assert_uint_eq(decoded.len, body->len);
		ck_assert_mem_eq(decoded.data, body->data, body->len);
		buffer_free(&decoded);
	}
	/* Stored as served. */
	struct buffer stored_header, stored_body;
	buffer_init(&stored_header);
	buffer_init(&stored_body);
	ck_assert_int_eq(store_snapshot_get(f.store, "mix", 11, &stored_header, &stored_body), 0);
	ck_assert_uint_eq(stored_header.len, p.header_note.len);
	ck_assert_mem_eq(stored_header.data, p.header_note.data, p.header_note.len);
	ck_assert_uint_eq(stored_body.len, body->len);
	ck_assert_mem_eq(stored_body.data, body->data, body->len);
	buffer_free(&stored_header);
	buffer_free(&stored_body);

	/* The other namespace has no records but publishes an empty snapshot. */
	struct publication empty;
	ck_assert_int_eq(publish_snapshot(f.config, f.store, f.signer, 1, 11, &empty), 0);
	ck_assert_uint_eq(empty.header.record_count, 0);
	ck_assert_int_eq(snapshot_body_verify(&empty.header, empty.encoded[0].data, empty.encoded[0].len, 10),
	                 0);
	publication_clear(&empty);
	note_free(note);
	publication_clear(&p);
	fixture_close(&f);
}
END_TEST

START_TEST(test_chain_and_rollback)
{
	struct fixture f;
	fixture_open(&f, NULL);
	uint64_t now = GENESIS + 5;
	write_clock(&f, now);
	submit(&f, 1, now, now + 3600);
	struct publication first, second, refused;
	ck_assert_int_eq(publish_snapshot(f.config, f.store, f.signer, 0, 2, &first), 0);
	ck_assert_int_eq(publish_snapshot(f.config, f.store, f.signer, 0, 5, &second), 0);
	struct note *note = NULL;
	ck_assert_int_eq(note_parse(first.header_note.data, first.header_note.len, &note), 0);
	uint8_t digest[32];
	ck_assert_int_eq(snapshot_header_digest(note->text, note->text_len, digest), 0);
	ck_assert_mem_eq(second.header.previous, digest, 32);
	note_free(note);

	/* Not the same epoch again, nor an earlier one; the store keeps what it had. */
	ck_assert_int_eq(publish_snapshot(f.config, f.store, f.signer, 0, 5, &refused), DIRAUTH_ERR_ROLLBACK);
	ck_assert_int_eq(publish_snapshot(f.config, f.store, f.signer, 0, 3, &refused), DIRAUTH_ERR_ROLLBACK);
	uint64_t latest = 0;
	ck_assert_int_eq(store_snapshot_latest(f.store, "mix", &latest), 0);
	ck_assert_uint_eq(latest, 5);
	ck_assert_int_eq(store_snapshot_get(f.store, "mix", 3, NULL, NULL), DIRAUTH_ERR_NOT_FOUND);

	/* publish_load gives back the same snapshot. */
	struct publication loaded;
	ck_assert_int_eq(publish_load(f.config, f.store, 0, 5, &loaded), 0);
	ck_assert_mem_eq(&loaded.header, &second.header, sizeof loaded.header);
	for (int e = 0; e < ENCODING_COUNT; e++) {
		ck_assert_uint_eq(loaded.encoded[e].len, second.encoded[e].len);
		ck_assert_mem_eq(loaded.encoded[e].data, second.encoded[e].data, second.encoded[e].len);
	}
	ck_assert_int_eq(publish_load(f.config, f.store, 0, 4, &refused), DIRAUTH_ERR_NOT_FOUND);
	publication_clear(&loaded);
	publication_clear(&first);
	publication_clear(&second);
	fixture_close(&f);
}
END_TEST

START_TEST(test_bounds_refuse)
{
	struct fixture f;
	fixture_open(&f, "bounds: { records_per_snapshot: 1 }\n");
	uint64_t now = GENESIS + 5;
	write_clock(&f, now);
	submit(&f, 1, now, now + 3600);
	struct publication p;
	ck_assert_int_eq(publish_snapshot(f.config, f.store, f.signer, 0, 1, &p), 0);
	publication_clear(&p);
	submit(&f, 2, now, now + 3600);
	ck_assert_int_eq(publish_snapshot(f.config, f.store, f.signer, 0, 2, &p), DIRAUTH_ERR_BOUNDS);
	uint64_t latest = 0;
	ck_assert_int_eq(store_snapshot_latest(f.store, "mix", &latest), 0);
	ck_assert_uint_eq(latest, 1);
	fixture_close(&f);

	/* A body larger than the uncompressed bound is not published. */
	fixture_open(&f, "bounds: { snapshot_body_uncompressed: 1024 }\n");
	write_clock(&f, now);
	submit(&f, 1, now, now + 3600);
	submit(&f, 2, now, now + 3600);
	ck_assert_int_eq(publish_snapshot(f.config, f.store, f.signer, 0, 1, &p), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(store_snapshot_latest(f.store, "mix", &latest), DIRAUTH_ERR_NOT_FOUND);
	fixture_close(&f);

	/* And so is one whose compressed form breaks the compressed bound (random-looking notes
	 * do not compress below 1 KiB). */
	fixture_open(&f, "bounds: { snapshot_body_compressed: 1024 }\n");
	write_clock(&f, now);
	submit(&f, 1, now, now + 3600);
	submit(&f, 2, now, now + 3600);
	submit(&f, 3, now, now + 3600);
	ck_assert_int_eq(publish_snapshot(f.config, f.store, f.signer, 0, 1, &p), DIRAUTH_ERR_BOUNDS);
	ck_assert_int_eq(store_snapshot_latest(f.store, "mix", &latest), DIRAUTH_ERR_NOT_FOUND);
	fixture_close(&f);
}
END_TEST

START_TEST(test_epoch_of)
{
	struct fixture f;
	fixture_open(&f, NULL);
	uint64_t epoch = 99;
	ck_assert_int_eq(epoch_of(f.config, GENESIS - 1, &epoch), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(epoch_of(f.config, GENESIS, &epoch), 0);
	ck_assert_uint_eq(epoch, 0);
	ck_assert_int_eq(epoch_of(f.config, GENESIS + LENGTH - 1, &epoch), 0);
	ck_assert_uint_eq(epoch, 0);
	ck_assert_int_eq(epoch_of(f.config, GENESIS + 7 * LENGTH, &epoch), 0);
	ck_assert_uint_eq(epoch, 7);
	uint64_t a, b, c;
	ck_assert_int_eq(publish_epoch_times(f.config, 7, &a, &b, &c), 0);
	ck_assert_uint_eq(a, GENESIS + 7 * LENGTH);
	ck_assert_int_eq(publish_epoch_times(f.config, UINT64_MAX / 2, &a, &b, &c), DIRAUTH_ERR_BOUNDS);
	fixture_close(&f);
}
END_TEST

START_TEST(test_scheduler)
{
	struct fixture f;
	fixture_open(&f, NULL);
	struct prepared_set *set = NULL;
	struct epoch_scheduler *scheduler = NULL;
	FILE *log = tmpfile();
	ck_assert_ptr_nonnull(log);
	ck_assert_int_eq(prepared_set_create(f.config, f.store, &set), 0);
	struct epoch_scheduler_options options = {f.config, f.store, f.signer, f.clock, set, log};
	ck_assert_int_eq(epoch_scheduler_create(&options, &scheduler), 0);
	uint64_t epoch = 0;

	/* No clock file: the tick fails and publishes nothing. */
	ck_assert_int_eq(epoch_scheduler_tick(scheduler), DIRAUTH_ERR_IO);
	/* Before genesis: nothing is due. */
	write_clock(&f, GENESIS - 10);
	ck_assert_int_eq(epoch_scheduler_tick(scheduler), 0);
	ck_assert_int_eq(epoch_scheduler_latest(scheduler, 0, &epoch), DIRAUTH_ERR_NOT_FOUND);

	write_clock(&f, GENESIS + 3 * LENGTH + 1);
	submit(&f, 1, GENESIS, GENESIS + 3600);
	ck_assert_int_eq(epoch_scheduler_tick(scheduler), 0);
	ck_assert_int_eq(epoch_scheduler_latest(scheduler, 0, &epoch), 0);
	ck_assert_uint_eq(epoch, 3);
	ck_assert_int_eq(epoch_scheduler_latest(scheduler, 1, &epoch), 0);
	ck_assert_uint_eq(epoch, 3);
	struct prepared_snapshot *s = NULL;
	ck_assert_int_eq(prepared_set_latest(set, 0, &s), 0);
	ck_assert_uint_eq(s->epoch, 3);
	ck_assert_uint_eq(s->fresh_until, GENESIS + 4 * LENGTH);
	prepared_snapshot_release(s);

	/* Same epoch: nothing new. Next epoch: published and swapped in. */
	ck_assert_int_eq(epoch_scheduler_tick(scheduler), 0);
	write_clock(&f, GENESIS + 4 * LENGTH);
	ck_assert_int_eq(epoch_scheduler_tick(scheduler), 0);
	ck_assert_int_eq(prepared_set_latest(set, 0, &s), 0);
	ck_assert_uint_eq(s->epoch, 4);
	prepared_snapshot_release(s);
	/* The previous epoch is still served, from the cache. */
	ck_assert_int_eq(prepared_set_epoch(set, 0, 3, &s), 0);
	ck_assert_uint_eq(s->epoch, 3);
	prepared_snapshot_release(s);
	ck_assert_int_eq(prepared_set_epoch(set, 0, 2, &s), DIRAUTH_ERR_NOT_FOUND);

	/* A clock going back publishes nothing. */
	write_clock(&f, GENESIS + 2 * LENGTH);
	ck_assert_int_eq(epoch_scheduler_tick(scheduler), 0);
	ck_assert_int_eq(epoch_scheduler_latest(scheduler, 0, &epoch), 0);
	ck_assert_uint_eq(epoch, 4);
	epoch_scheduler_free(scheduler);
	prepared_set_free(set);

	/* A restart serves the stored latest at once, and older epochs load from the store. */
	ck_assert_int_eq(prepared_set_create(f.config, f.store, &set), 0);
	options.prepared = set;
	ck_assert_int_eq(epoch_scheduler_create(&options, &scheduler), 0);
	ck_assert_int_eq(epoch_scheduler_latest(scheduler, 0, &epoch), 0);
	ck_assert_uint_eq(epoch, 4);
	ck_assert_int_eq(prepared_set_latest(set, 0, &s), 0);
	ck_assert_uint_eq(s->epoch, 4);
	prepared_snapshot_release(s);
	ck_assert_int_eq(prepared_set_epoch(set, 0, 3, &s), 0);
	ck_assert_uint_eq(s->epoch, 3);
	prepared_snapshot_release(s);

	/* The thread publishes by itself when the clock file moves. */
	ck_assert_int_eq(epoch_scheduler_start(scheduler), 0);
	write_clock(&f, GENESIS + 6 * LENGTH);
	for (int i = 0; i < 3000; i++) {
		if (epoch_scheduler_latest(scheduler, 1, &epoch) == 0 && epoch == 6)
			break;
		struct timespec pause = {0, 10 * 1000 * 1000};
		nanosleep(&pause, NULL);
	}
	ck_assert_uint_eq(epoch, 6);
	epoch_scheduler_free(scheduler);
	prepared_set_free(set);

	/* One log line per published snapshot. */
	rewind(log);
	char line[512];
	int published = 0;
	while (fgets(line, sizeof line, log))
		if (strstr(line, "published namespace"))
			published++;
	ck_assert_int_eq(published, 6);
	fclose(log);
	fixture_close(&f);
}
END_TEST

static Suite *publish_suite(void)
{
	Suite *suite = suite_create("publish");
	TCase *tc = tcase_create("publish");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_publish_records);
	tcase_add_test(tc, test_chain_and_rollback);
	tcase_add_test(tc, test_bounds_refuse);
	tcase_add_test(tc, test_epoch_of);
	tcase_add_test(tc, test_scheduler);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(publish_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
