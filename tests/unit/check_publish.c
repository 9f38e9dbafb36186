/*
 * check_publish.c: snapshots built from a real store of real signed registrations: header
 * fields, a body that verifies, chaining to the previous header, refusal to go back or to break
 * a bound, the scheduler driven by a file clock (an authority alone: the round with n = k = 1,
 * publishing in the tick at each epoch's start), and prepared responses across a restart. Headers
 * and receipts are signed by a real dirauth-signer in the test process (signer_fixture.h); with
 * the signer down nothing is published, and the epoch is published late once it is back.
 */
#include "clock/clock.h"
#include "compress/compress.h"
#include "server/config/config.h"
#include "server/round/round.h"
#include "server/scheduler/scheduler.h"
#include "base/error.h"
#include "schema/note.h"
#include "server/readpath/prepared.h"
#include "server/publish/publish.h"
#include "server/signing/signer_client.h"
#include "signer_fixture.h"
#include "server/signing/signer_health.h"
#include "schema/snapshot.h"
#include "server/store/snapshots.h"
#include "server/store/store.h"
#include "server/intake/submit.h"
#include "test_keys.h"
#include "test_support.h"

#include <check.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define GENESIS 1767225000ULL
#define LENGTH  60ULL

struct fixture {
	char dir[512];
	struct config *config;
	struct signer_fixture signer_process;
	struct signer_client *signer;
	struct signer_health *health;
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

/* The fixture's configuration with bounds (a "bounds:" line, may be NULL). */
static struct config *parse_config(struct fixture *f, const char *bounds)
{
	char text[4096];
	snprintf(text, sizeof text,
	         "authority: { name: authority1.dirauth.example, signer_socket: signer/signer.sock }\n"
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
	struct config *config = NULL;
	ck_assert_msg(config_parse((const uint8_t *)text, strlen(text), f->dir, &config, &error) == 0,
	              "%zu: %s", error.line, error.message);
	return config;
}

static void fixture_open(struct fixture *f, const char *bounds)
{
	memset(f, 0, sizeof *f);
	test_make_tempdir(f->dir, sizeof f->dir);
	signer_fixture_prepare(&f->signer_process, f->dir, GENESIS + 10 * LENGTH, GENESIS - 86400,
	                       GENESIS + 30 * 86400);
	signer_fixture_start(&f->signer_process);
	test_key_load(TEST_KEY_PROVIDER, &f->provider);
	f->config = parse_config(f, bounds);
	ck_assert_int_eq(signer_client_open(f->config->signer_socket, 5000, &f->signer), 0);
	ck_assert_int_eq(clock_open_file(f->config->clock_path, &f->clock), 0);
	f->signer_process.clock = f->clock; /* one clock for dirauthd and its signer, as on one host */
	ck_assert_int_eq(signer_health_create(f->signer, f->config->authority_name, f->clock, &f->health), 0);
	struct store_options options = {.path = f->config->data_dir};
	ck_assert_int_eq(store_open(&options, &f->store), 0);
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

/* The round of this authority alone over config and set, and the scheduler that drives it, both
 * logging to log (NULL: stderr). */
static void scheduler_open(struct fixture *f, const struct config *config, struct prepared_set *set,
                           FILE *log, struct round **round, struct epoch_scheduler **scheduler)
{
	struct round_options round_options = {.config = config,
	                                      .store = f->store,
	                                      .signer = f->signer,
	                                      .signer_health = f->health,
	                                      .clock = f->clock,
	                                      .prepared = set,
	                                      .log = log};
	ck_assert_int_eq(round_create(&round_options, round), 0);
	struct epoch_scheduler_options options = {.config = config,
	                                          .store = f->store,
	                                          .clock = f->clock,
	                                          .prepared = set,
	                                          .log = log,
	                                          .round = *round};
	ck_assert_int_eq(epoch_scheduler_create(&options, scheduler), 0);
}

static void scheduler_close(struct round *round, struct epoch_scheduler *scheduler)
{
	epoch_scheduler_free(scheduler);
	round_free(round);
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
	struct submit_context context = {f->config, f->store, f->signer, f->health, f->clock};
	struct submit_result result;
	ck_assert_msg(submit_registration(&context, note.data, note.len, &result) == API_ERROR_NONE, "%s",
	              result.detail);
	buffer_free(&result.receipt);
	buffer_free(&note);
	registration_clear(&r);
}

/* A stored body file, whole, into out (initialised here). */
static void read_body(struct fixture *f, const char *namespace_name, uint64_t epoch,
                      enum content_encoding encoding, struct buffer *out)
{
	int fd;
	uint64_t size;
	buffer_init(out);
	ck_assert_int_eq(store_body_open(f->store, namespace_name, epoch, encoding, &fd, &size), 0);
	ck_assert_int_eq(buffer_reserve(out, (size_t)size + 1), 0);
	ck_assert_int_eq(read(fd, out->data, (size_t)size + 1), (ssize_t)size);
	out->len = (size_t)size;
	close(fd);
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
	ck_assert_int_eq(publish_snapshot(f.config, f.store, f.signer, 0, 11, &p, NULL, 0), 0);
	struct snapshot_header h;
	struct note *note = parse_header_note(&p, &h);
	const struct note_verifier *authority = &f.signer_process.signing;
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
	struct buffer body;
	read_body(&f, "mix", 11, ENCODING_IDENTITY, &body);
	ck_assert_uint_eq(h.body_size, body.len);
	ck_assert_uint_eq(p.body.size[ENCODING_IDENTITY], body.len);
	ck_assert_int_eq(snapshot_body_verify(&h, body.data, body.len, 10), 0);
	ck_assert_int_eq(snapshot_body_verify(&h, body.data, body.len, 1), DIRAUTH_ERR_BOUNDS);
	/* The compressed forms decode to the body. */
	for (int e = ENCODING_GZIP; e < ENCODING_COUNT; e++) {
		struct buffer encoded, decoded;
		read_body(&f, "mix", 11, (enum content_encoding)e, &encoded);
		ck_assert_uint_eq(encoded.len, p.body.size[e]);
		buffer_init(&decoded);
		ck_assert_int_eq(
		    compress_decode((enum content_encoding)e, encoded.data, encoded.len, body.len, &decoded),
		    0);
		ck_assert_uint_eq(decoded.len, body.len);
		ck_assert_mem_eq(decoded.data, body.data, body.len);
		buffer_free(&decoded);
		buffer_free(&encoded);
	}
	/* Stored as served. */
	struct buffer stored_header;
	buffer_init(&stored_header);
	ck_assert_int_eq(store_snapshot_get(f.store, "mix", 11, &stored_header, NULL), 0);
	ck_assert_uint_eq(stored_header.len, p.header_note.len);
	ck_assert_mem_eq(stored_header.data, p.header_note.data, p.header_note.len);
	buffer_free(&stored_header);
	buffer_free(&body);

	/* The other namespace has no records but publishes an empty snapshot. */
	struct publication empty;
	ck_assert_int_eq(publish_snapshot(f.config, f.store, f.signer, 1, 11, &empty, NULL, 0), 0);
	ck_assert_uint_eq(empty.header.record_count, 0);
	read_body(&f, "mail", 11, ENCODING_IDENTITY, &body);
	ck_assert_int_eq(snapshot_body_verify(&empty.header, body.data, body.len, 10), 0);
	buffer_free(&body);
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
	ck_assert_int_eq(publish_snapshot(f.config, f.store, f.signer, 0, 2, &first, NULL, 0), 0);
	ck_assert_int_eq(publish_snapshot(f.config, f.store, f.signer, 0, 5, &second, NULL, 0), 0);
	struct note *note = NULL;
	ck_assert_int_eq(note_parse(first.header_note.data, first.header_note.len, &note), 0);
	uint8_t digest[32];
	ck_assert_int_eq(snapshot_header_digest(note->text, note->text_len, digest), 0);
	ck_assert_mem_eq(second.header.previous, digest, 32);
	note_free(note);

	/* Not the same epoch again, nor an earlier one; the store keeps what it had. */
	ck_assert_int_eq(publish_snapshot(f.config, f.store, f.signer, 0, 5, &refused, NULL, 0),
	                 DIRAUTH_ERR_ROLLBACK);
	ck_assert_int_eq(publish_snapshot(f.config, f.store, f.signer, 0, 3, &refused, NULL, 0),
	                 DIRAUTH_ERR_ROLLBACK);
	uint64_t latest = 0;
	ck_assert_int_eq(store_snapshot_latest(f.store, "mix", &latest), 0);
	ck_assert_uint_eq(latest, 5);
	struct buffer stored_header, stored_body;
	buffer_init(&stored_header);
	ck_assert_int_eq(store_snapshot_get(f.store, "mix", 3, &stored_header, NULL), DIRAUTH_ERR_NOT_FOUND);

	/* The store gives back the same snapshot. */
	struct store_body_info info;
	ck_assert_int_eq(store_snapshot_get(f.store, "mix", 5, &stored_header, &info), 0);
	ck_assert_uint_eq(stored_header.len, second.header_note.len);
	ck_assert_mem_eq(stored_header.data, second.header_note.data, stored_header.len);
	ck_assert_mem_eq(&info, &second.body, sizeof info);
	read_body(&f, "mix", 5, ENCODING_IDENTITY, &stored_body);
	ck_assert_uint_eq(stored_body.len, second.header.body_size);
	ck_assert_int_eq(snapshot_body_verify(&second.header, stored_body.data, stored_body.len, 10), 0);
	ck_assert_int_eq(store_snapshot_get(f.store, "mix", 4, &stored_header, NULL), DIRAUTH_ERR_NOT_FOUND);
	buffer_free(&stored_header);
	buffer_free(&stored_body);
	publication_clear(&first);
	publication_clear(&second);
	fixture_close(&f);
}
END_TEST

/* Submits registration number index and returns the API's verdict. */
static enum api_error submit_verdict(struct fixture *f, unsigned index, uint64_t issued_at, uint64_t expires)
{
	struct registration r;
	struct buffer note;
	buffer_init(&note);
	test_example_registration(index, "mix", &f->provider, &r);
	r.issued_at = issued_at;
	r.expires = expires;
	test_sign_registration(&r, &f->provider, &note);
	struct submit_context context = {f->config, f->store, f->signer, f->health, f->clock};
	struct submit_result result;
	enum api_error error = submit_registration(&context, note.data, note.len, &result);
	buffer_free(&result.receipt);
	buffer_free(&note);
	registration_clear(&r);
	return error;
}

START_TEST(test_bounds_refuse)
{
	/* A namespace at its record bound refuses the next registration before storing it, so the
	 * snapshot it promised can be published. */
	struct fixture f;
	fixture_open(&f, "bounds: { records_per_snapshot: 1 }\n");
	uint64_t now = GENESIS + 5;
	write_clock(&f, now);
	submit(&f, 1, now, now + 3600);
	ck_assert_int_eq(submit_verdict(&f, 2, now, now + 3600), API_ERROR_NAMESPACE_FULL);
	struct publication p;
	ck_assert_int_eq(publish_snapshot(f.config, f.store, f.signer, 0, 1, &p, NULL, 0), 0);
	ck_assert_uint_eq(p.header.record_count, 1);
	publication_clear(&p);
	/* A newer version of the same service takes its place within the bound. */
	struct registration r;
	struct buffer note;
	buffer_init(&note);
	test_example_registration(1, "mix", &f.provider, &r);
	r.sequence = 2;
	r.issued_at = now;
	r.expires = now + 3600;
	test_sign_registration(&r, &f.provider, &note);
	struct submit_context context = {f.config, f.store, f.signer, f.health, f.clock};
	struct submit_result result;
	ck_assert_int_eq(submit_registration(&context, note.data, note.len, &result), API_ERROR_NONE);
	buffer_free(&result.receipt);
	buffer_free(&note);
	registration_clear(&r);
	fixture_close(&f);

	/* The bytes: what the body bounds can hold however it compresses (2 KiB compressed holds two
	 * example records, not three). Every accepted record is then published within the bounds. */
	fixture_open(&f, "bounds: { snapshot_body_compressed: 2048 }\n");
	write_clock(&f, now);
	submit(&f, 1, now, now + 3600);
	submit(&f, 2, now, now + 3600);
	ck_assert_int_eq(submit_verdict(&f, 3, now, now + 3600), API_ERROR_NAMESPACE_FULL);
	ck_assert_int_eq(publish_snapshot(f.config, f.store, f.signer, 0, 1, &p, NULL, 0), 0);
	ck_assert_uint_eq(p.header.record_count, 2);
	for (int e = 0; e < ENCODING_COUNT; e++)
		ck_assert_uint_le(p.body.size[e], 2048);
	publication_clear(&p);
	fixture_close(&f);
}
END_TEST

START_TEST(test_scheduler)
{
	struct fixture f;
	fixture_open(&f, NULL);
	struct prepared_set *set = NULL;
	struct epoch_scheduler *scheduler = NULL;
	struct round *round = NULL;
	FILE *log = tmpfile();
	ck_assert_ptr_nonnull(log);
	ck_assert_int_eq(prepared_set_create(f.config, f.store, &set), 0);
	scheduler_open(&f, f.config, set, log, &round, &scheduler);
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
	ck_assert_uint_eq(prepared_snapshot_epoch(s), 3);
	ck_assert_uint_eq(prepared_snapshot_fresh_until(s), GENESIS + 4 * LENGTH);
	prepared_snapshot_release(s);
	/* Published by the round of one authority, in the tick at the epoch's start: the consensus
	 * of its one vote, which nobody receives and so is neither signed nor kept. */
	struct round_status status;
	round_status_get(round, 0, &status);
	ck_assert_uint_eq(status.epoch, 3);
	ck_assert_int_eq(status.published, 1);
	ck_assert_uint_eq(status.published_total, 1);
	ck_assert_uint_eq(status.failed_total, 0);
	ck_assert_uint_eq(status.votes, 0);
	ck_assert_uint_eq(status.signatures, 1);
	ck_assert_int_eq(signer_fixture_audit_count(&f.signer_process, " sign vote "), 0);
	ck_assert_int_eq(signer_fixture_audit_count(&f.signer_process, " sign snapshot-header "), 2);

	/* Same epoch: nothing new. Next epoch: published and swapped in. */
	ck_assert_int_eq(epoch_scheduler_tick(scheduler), 0);
	write_clock(&f, GENESIS + 4 * LENGTH);
	ck_assert_int_eq(epoch_scheduler_tick(scheduler), 0);
	ck_assert_int_eq(prepared_set_latest(set, 0, &s), 0);
	ck_assert_uint_eq(prepared_snapshot_epoch(s), 4);
	prepared_snapshot_release(s);
	/* The previous epoch is still served, from the cache. */
	ck_assert_int_eq(prepared_set_epoch(set, 0, 3, &s), 0);
	ck_assert_uint_eq(prepared_snapshot_epoch(s), 3);
	prepared_snapshot_release(s);
	ck_assert_int_eq(prepared_set_epoch(set, 0, 2, &s), DIRAUTH_ERR_NOT_FOUND);

	/* A clock going back publishes nothing. */
	write_clock(&f, GENESIS + 2 * LENGTH);
	ck_assert_int_eq(epoch_scheduler_tick(scheduler), 0);
	ck_assert_int_eq(epoch_scheduler_latest(scheduler, 0, &epoch), 0);
	ck_assert_uint_eq(epoch, 4);
	round_status_get(round, 1, &status);
	ck_assert_uint_eq(status.published_total, 2);
	ck_assert_uint_eq(status.failed_total, 0);
	scheduler_close(round, scheduler);
	prepared_set_free(set);

	/* A restart serves the stored latest at once, and older epochs load from the store. */
	ck_assert_int_eq(prepared_set_create(f.config, f.store, &set), 0);
	scheduler_open(&f, f.config, set, log, &round, &scheduler);
	ck_assert_int_eq(epoch_scheduler_latest(scheduler, 0, &epoch), 0);
	ck_assert_uint_eq(epoch, 4);
	ck_assert_int_eq(prepared_set_latest(set, 0, &s), 0);
	ck_assert_uint_eq(prepared_snapshot_epoch(s), 4);
	prepared_snapshot_release(s);
	ck_assert_int_eq(prepared_set_epoch(set, 0, 3, &s), 0);
	ck_assert_uint_eq(prepared_snapshot_epoch(s), 3);
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
	scheduler_close(round, scheduler);
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

START_TEST(test_signer_down_publishes_late)
{
	struct fixture f;
	fixture_open(&f, NULL);
	struct prepared_set *set = NULL;
	struct epoch_scheduler *scheduler = NULL;
	struct round *round = NULL;
	FILE *log = tmpfile();
	ck_assert_ptr_nonnull(log);
	ck_assert_int_eq(prepared_set_create(f.config, f.store, &set), 0);
	scheduler_open(&f, f.config, set, log, &round, &scheduler);
	uint64_t now = GENESIS + 3 * LENGTH + 1, epoch = 0;
	write_clock(&f, now);
	submit(&f, 1, now, now + 3600);

	/* The signer goes away: publish_snapshot stores nothing, and the scheduler neither. */
	signer_fixture_stop(&f.signer_process);
	struct publication p;
	char detail[SIGNER_DETAIL_MAX + 1];
	ck_assert_int_eq(publish_snapshot(f.config, f.store, f.signer, 0, 3, &p, detail, sizeof detail),
	                 DIRAUTH_ERR_UNAVAILABLE);
	ck_assert_ptr_nonnull(strstr(detail, "cannot connect"));
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(epoch_scheduler_tick(scheduler), DIRAUTH_ERR_UNAVAILABLE);
	ck_assert_int_eq(epoch_scheduler_latest(scheduler, 0, &epoch), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(store_snapshot_latest(f.store, "mix", &epoch), DIRAUTH_ERR_NOT_FOUND);
	struct prepared_snapshot *s = NULL;
	ck_assert_int_eq(prepared_set_latest(set, 0, &s), DIRAUTH_ERR_NOT_FOUND);

	/* Back within the same epoch: the epoch is published late rather than never. */
	signer_fixture_start(&f.signer_process);
	int rc = DIRAUTH_ERR_UNAVAILABLE;
	for (int i = 0; i < 1000 && rc == DIRAUTH_ERR_UNAVAILABLE; i++) {
		rc = epoch_scheduler_tick(scheduler);
		if (rc == DIRAUTH_ERR_UNAVAILABLE)
			test_sleep_ms(10);
	}
	ck_assert_int_eq(rc, 0);
	ck_assert_int_eq(epoch_scheduler_latest(scheduler, 0, &epoch), 0);
	ck_assert_uint_eq(epoch, 3);
	ck_assert_int_eq(epoch_scheduler_latest(scheduler, 1, &epoch), 0);
	ck_assert_uint_eq(epoch, 3);
	ck_assert_int_eq(prepared_set_latest(set, 0, &s), 0);
	ck_assert_uint_eq(prepared_snapshot_epoch(s), 3);
	ck_assert_uint_eq(prepared_snapshot_fresh_until(s), GENESIS + 4 * LENGTH);
	prepared_snapshot_release(s);
	ck_assert_int_eq(signer_fixture_audit_count(&f.signer_process, " sign snapshot-header "), 2);

	/* The signer refuses a different header for an epoch it signed (as after a crash between
	 * signing and storing, with the records changed since): nothing is stored, and the refusal
	 * is not retried at every tick. */
	struct buffer text;
	struct note_signature signature;
	struct snapshot_header other;
	memset(&other, 0, sizeof other);
	snprintf(other.namespace_name, sizeof other.namespace_name, "mix");
	snprintf(other.origin, sizeof other.origin, "dirauth.example/mix");
	other.epoch = 4;
	struct epoch_times times;
	ck_assert_int_eq(schedule_epoch_times(&f.config->epoch, 4, &times), 0);
	other.valid_after = times.valid_after;
	other.fresh_until = times.fresh_until;
	other.valid_until = times.valid_until;
	other.consensus_method = SNAPSHOT_CONSENSUS_METHOD;
	memset(other.records_root, 0x33, sizeof other.records_root);
	memset(other.body_sha256, 0x33, sizeof other.body_sha256);
	buffer_init(&text);
	ck_assert_int_eq(snapshot_header_encode(&other, &text), 0);
	ck_assert_int_eq(signer_client_sign(f.signer, SIGNER_OP_SIGN_SNAPSHOT_HEADER, text.data, text.len, 0,
	                                    NULL, 0, &signature, detail, sizeof detail),
	                 0);
	buffer_free(&text);
	write_clock(&f, GENESIS + 4 * LENGTH);
	rc = epoch_scheduler_tick(scheduler);
	ck_assert_msg(rc < 0 && rc != DIRAUTH_ERR_UNAVAILABLE, "%d", rc);
	ck_assert_int_eq(epoch_scheduler_tick(scheduler), 0);
	ck_assert_int_eq(store_snapshot_latest(f.store, "mix", &epoch), 0);
	ck_assert_uint_eq(epoch, 3);
	ck_assert_int_eq(store_snapshot_latest(f.store, "mail", &epoch), 0);
	ck_assert_uint_eq(epoch, 4);
	scheduler_close(round, scheduler);
	prepared_set_free(set);

	/* One log line for the wait, however many ticks it lasted; one for the refusal. */
	rewind(log);
	char line[1024];
	int waiting = 0, refused = 0;
	while (fgets(line, sizeof line, log)) {
		if (strstr(line, "not published yet") && strstr(line, "signer unreachable"))
			waiting++;
		if (strstr(line, " epoch 4 dirauthd: namespace mix: not published:"))
			refused++;
	}
	ck_assert_int_eq(waiting, 2); /* mix and mail, epoch 3 */
	ck_assert_int_eq(refused, 1);
	fclose(log);
	fixture_close(&f);
}
END_TEST

START_TEST(test_load_ignores_lowered_bounds)
{
	struct fixture f;
	fixture_open(&f, NULL);
	uint64_t now = GENESIS + 5;
	write_clock(&f, now);
	submit(&f, 1, now, now + 3600);
	submit(&f, 2, now, now + 3600);
	submit(&f, 3, now, now + 3600);
	struct publication p;
	ck_assert_int_eq(publish_snapshot(f.config, f.store, f.signer, 0, 1, &p, NULL, 0), 0);
	publication_clear(&p);
	ck_assert_int_eq(publish_snapshot(f.config, f.store, f.signer, 0, 2, &p, NULL, 0), 0);
	ck_assert_uint_gt(p.body.size[ENCODING_IDENTITY], 1024);
	ck_assert_uint_gt(p.body.size[ENCODING_GZIP], 1024);

	/* The operator lowers every bound below what is stored: new snapshots break them... */
	struct config *lowered =
	    parse_config(&f, "bounds: { records_per_snapshot: 1, snapshot_body_uncompressed: 1024, "
	                     "snapshot_body_compressed: 1024 }\n");
	struct publication refused;
	ck_assert_int_eq(publish_snapshot(lowered, f.store, f.signer, 0, 3, &refused, NULL, 0),
	                 DIRAUTH_ERR_BOUNDS);

	/* ...but what is stored and signed still loads, and dirauthd starts with it: the scheduler
	 * installs the stored latest, the same bytes, and an older epoch is served in every
	 * encoding. */
	struct prepared_set *set = NULL;
	struct epoch_scheduler *scheduler = NULL;
	struct round *round = NULL;
	ck_assert_int_eq(prepared_set_create(lowered, f.store, &set), 0);
	scheduler_open(&f, lowered, set, NULL, &round, &scheduler);
	struct prepared_snapshot *s = NULL;
	ck_assert_int_eq(prepared_set_latest(set, 0, &s), 0);
	ck_assert_uint_eq(prepared_snapshot_epoch(s), 2);
	size_t loaded_len = 0;
	const uint8_t *loaded_note = prepared_snapshot_header_note(s, &loaded_len);
	ck_assert_uint_eq(loaded_len, p.header_note.len);
	ck_assert_mem_eq(loaded_note, p.header_note.data, p.header_note.len);
	prepared_snapshot_release(s);
	ck_assert_int_eq(prepared_set_epoch(set, 0, 1, &s), 0);
	for (int e = 0; e < ENCODING_COUNT; e++) {
		struct MHD_Response *response = NULL;
		ck_assert_int_eq(prepared_set_body(set, s, (enum content_encoding)e, &response, NULL), 0);
		ck_assert_ptr_nonnull(response);
	}
	prepared_snapshot_release(s);
	scheduler_close(round, scheduler);
	prepared_set_free(set);
	config_free(lowered);
	publication_clear(&p);
	fixture_close(&f);
}
END_TEST

/* Publishes epoch, then damages every one of its body files (same size, other bytes): a damaged
 * store. */
static void store_damaged_snapshot(struct fixture *f, uint64_t epoch)
{
	struct publication p;
	ck_assert_int_eq(publish_snapshot(f->config, f->store, f->signer, 0, epoch, &p, NULL, 0), 0);
	publication_clear(&p);
	for (int e = 0; e < ENCODING_COUNT; e++) {
		int fd;
		uint64_t size;
		ck_assert_int_eq(
		    store_body_open(f->store, "mix", epoch, (enum content_encoding)e, &fd, &size), 0);
		close(fd);
		char path[CONFIG_PATH_MAX + 64];
		ck_assert_int_lt(snprintf(path, sizeof path, "%s/bodies/mix/%llu.%s", f->config->data_dir,
		                          (unsigned long long)epoch,
		                          content_encoding_name((enum content_encoding)e)),
		                 (int)sizeof path);
		uint8_t *bytes = calloc(1, (size_t)size);
		ck_assert_ptr_nonnull(bytes);
		test_write_file(path, bytes, (size_t)size, 0600);
		free(bytes);
	}
}

START_TEST(test_prepared_header_without_body)
{
	struct fixture f;
	fixture_open(&f, NULL);
	uint64_t now = GENESIS + 5;
	write_clock(&f, now);
	submit(&f, 1, now, now + 3600);
	struct publication p;
	ck_assert_int_eq(publish_snapshot(f.config, f.store, f.signer, 0, 1, &p, NULL, 0), 0);
	publication_clear(&p);
	/* Epoch 2's stored body files do not match what was stored (a damaged store). */
	store_damaged_snapshot(&f, 2);

	struct prepared_set *set = NULL;
	ck_assert_int_eq(prepared_set_create(f.config, f.store, &set), 0);
	struct prepared_statistics statistics;
	struct prepared_snapshot *s = NULL, *again = NULL;
	struct MHD_Response *response = NULL;

	/* Its header is served from the stored header alone: the body is not read. */
	ck_assert_int_eq(prepared_set_epoch(set, 0, 2, &s), 0);
	ck_assert_uint_eq(prepared_snapshot_epoch(s), 2);
	ck_assert_ptr_nonnull(prepared_snapshot_header_response(s));
	ck_assert_ptr_nonnull(prepared_snapshot_body_not_modified(s, ENCODING_ZSTD));
	prepared_set_statistics(set, &statistics);
	ck_assert_uint_eq(statistics.header_loads, 1);
	ck_assert_uint_eq(statistics.body_loads, 0);
	/* Cached: the next request reads nothing. */
	ck_assert_int_eq(prepared_set_epoch(set, 0, 2, &again), 0);
	ck_assert_ptr_eq(again, s);
	prepared_snapshot_release(again);
	prepared_set_statistics(set, &statistics);
	ck_assert_uint_eq(statistics.header_loads, 1);

	/* Its body is refused in every encoding, and a failed build is tried again. */
	for (int e = 0; e < ENCODING_COUNT; e++)
		ck_assert_int_eq(prepared_set_body(set, s, (enum content_encoding)e, &response, NULL),
		                 DIRAUTH_ERR_MISMATCH);
	ck_assert_int_eq(prepared_set_body(set, s, ENCODING_GZIP, &response, NULL), DIRAUTH_ERR_MISMATCH);
	ck_assert_ptr_null(response);
	ck_assert_int_eq(prepared_set_body(set, s, ENCODING_COUNT, &response, NULL), DIRAUTH_ERR_INTERNAL);
	prepared_set_statistics(set, &statistics);
	ck_assert_uint_eq(statistics.body_loads, 4);
	prepared_snapshot_release(s);

	/* A sound epoch: one check per encoding asked for, and the same response afterwards. */
	ck_assert_int_eq(prepared_set_epoch(set, 0, 1, &s), 0);
	struct MHD_Response *first = NULL;
	ck_assert_int_eq(prepared_set_body(set, s, ENCODING_IDENTITY, &first, NULL), 0);
	ck_assert_int_eq(prepared_set_body(set, s, ENCODING_IDENTITY, &response, NULL), 0);
	ck_assert_ptr_eq(response, first);
	prepared_set_statistics(set, &statistics);
	ck_assert_uint_eq(statistics.body_loads, 5);
	ck_assert_int_eq(prepared_set_body(set, s, ENCODING_ZSTD, &response, NULL), 0);
	ck_assert_int_eq(prepared_set_body(set, s, ENCODING_ZSTD, &response, NULL), 0);
	prepared_set_statistics(set, &statistics);
	ck_assert_uint_eq(statistics.body_loads, 6);
	prepared_snapshot_release(s);

	/* An epoch not stored, and a namespace out of range. */
	ck_assert_int_eq(prepared_set_epoch(set, 0, 3, &s), DIRAUTH_ERR_NOT_FOUND);
	ck_assert_int_eq(prepared_set_epoch(set, 9, 1, &s), DIRAUTH_ERR_NOT_FOUND);
	prepared_set_free(set);
	fixture_close(&f);
}
END_TEST

/* The cache keeps the most recently used older epochs: one in use survives a run of others. */
START_TEST(test_prepared_cache_keeps_recent)
{
	struct fixture f;
	fixture_open(&f, NULL);
	struct publication p;
	uint64_t last = PREPARED_CACHE_SIZE + 3;
	write_clock(&f, GENESIS + last * LENGTH); /* every epoch published here has begun */
	for (uint64_t epoch = 1; epoch <= last; epoch++) {
		ck_assert_int_eq(publish_snapshot(f.config, f.store, f.signer, 0, epoch, &p, NULL, 0), 0);
		publication_clear(&p);
	}
	struct prepared_set *set = NULL;
	struct prepared_snapshot *s = NULL;
	struct prepared_statistics statistics;
	ck_assert_int_eq(prepared_set_create(f.config, f.store, &set), 0);
	for (uint64_t epoch = 2; epoch <= last; epoch++) {
		/* Epoch 1 is asked for between every other: it stays. */
		ck_assert_int_eq(prepared_set_epoch(set, 0, 1, &s), 0);
		prepared_snapshot_release(s);
		ck_assert_int_eq(prepared_set_epoch(set, 0, epoch, &s), 0);
		ck_assert_uint_eq(prepared_snapshot_epoch(s), epoch);
		prepared_snapshot_release(s);
	}
	prepared_set_statistics(set, &statistics);
	ck_assert_uint_eq(statistics.header_loads, last);
	prepared_set_free(set);
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
	tcase_add_test(tc, test_scheduler);
	tcase_add_test(tc, test_signer_down_publishes_late);
	tcase_add_test(tc, test_load_ignores_lowered_bounds);
	tcase_add_test(tc, test_prepared_header_without_body);
	tcase_add_test(tc, test_prepared_cache_keeps_recent);
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
