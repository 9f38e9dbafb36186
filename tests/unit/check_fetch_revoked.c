/*
 * check_fetch_revoked.c: a mirror's dirauthctl fetch, over HTTP on loopback, against snapshots that
 * revoke an endpoint (or a whole service) and then list it again.
 *
 * What a mirror relies on (docs/dirauthctl.md, "Revocations"): once it holds a snapshot whose
 * revocation section revokes an endpoint, the older snapshots it kept that still show the endpoint
 * are dropped, and no later snapshot that lists the endpoint again is taken, however well signed:
 * the fetch exits 65, says which service and endpoint and which held epoch revoked it, and leaves
 * the mirror's directory exactly as it was. That is the case of authorities restored from a backup
 * taken before the revocation, which publish the registration they hold again, and of a threshold
 * of authority keys in the wrong hands.
 *
 * The authorities here are three identity keys pinned by a trust bundle of threshold 2, each with
 * a signing key it certified (the certificate bundle a server serves); every snapshot is built from
 * the schema encoders (consensus method 2: records and a revocation section) and signed by two or
 * three of the signing keys, and each epoch's previous is the digest of the epoch before, so every
 * header, chain and body check passes and only the revocation check can refuse. A stub_http server
 * (tests/harness/stub_http.h) serves them as an authority would, and the dirauthctl binary fetches
 * them into a mirror directory, as a mirror's timer runs it:
 *
 *   epoch 11  the service with endpoints A and B                        fetched;
 *   epoch 12  the service with B only, and the revocation of A          fetched, epoch 11 dropped;
 *   epoch 13  forged: epoch 11's registration again (A and B), no       refused, 65, nothing
 *             revocation, signed by two of the three                    changed in the mirror;
 *   epoch 13  honest: B only, the revocation still listed               fetched.
 *
 * The same with the whole service revoked: the service comes back in no later snapshot.
 */
#include "certificate_fixture.h"
#include "base/buffer.h"
#include "crypto/crypto.h"
#include "schema/encoding.h"
#include "base/error.h"
#include "schema/note.h"
#include "schema/registration.h"
#include "schema/revocation.h"
#include "schema/snapshot.h"
#include "signer/key.h"
#include "test_support.h"
#include "tests/harness/stub_http.h"

#include <check.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define NOW         ((uint64_t)1767225600) /* 2026-01-01, the first epoch's valid-after */
#define ORIGIN      "dirauth.test/mix"
#define AUTHORITIES 3
#define FIRST_EPOCH 11
#define EPOCH_TIME  600 /* seconds between two epochs' valid-after */

/* The two endpoints of the service: A is revoked, B stays. */
enum { ENDPOINT_A, ENDPOINT_B };

struct world {
	char directory[4096];   /* the test's temporary directory */
	char mirror[4200];      /* the mirror's --out */
	char bundle_path[4200]; /* the trust bundle file */
	char url[64];
	struct stub_http *server;
	struct signer_key *identities[AUTHORITIES];
	struct signer_key *signing[AUTHORITIES];
	struct signer_key *provider;
	struct buffer certificates;
	uint8_t service_id[SERVICE_ID_SIZE];
	uint8_t endpoint_ids[2][ENDPOINT_ID_SIZE];
};

/* One snapshot to serve: its records (registration notes of the service) and revocation (none,
 * the endpoint A, or the whole service), the epoch before it, and which authorities sign it. */
struct snapshot_plan {
	uint64_t epoch;
	const struct buffer *record;     /* the service's registration note; NULL: no record */
	const struct buffer *revocation; /* the revocation note listed; NULL: none */
	int revokes_service;             /* the revocation is of the whole service */
	uint64_t revoked_since;
	const struct buffer *previous; /* the header note of the epoch before; NULL: none */
	const int *signers;            /* indexes of the signing keys */
	size_t signer_count;
};

static const int signed_by_1_2[] = {0, 1};
static const int signed_by_2_3[] = {1, 2};
static const int signed_by_all[] = {0, 1, 2};

static void world_open(struct world *w)
{
	static const char *const names[AUTHORITIES] = {"authority-1.test", "authority-2.test",
	                                               "authority-3.test"};
	char text[4096], key[NOTE_VERIFIER_KEY_MAX + 1];
	struct buffer notes[AUTHORITIES];
	int n;

	memset(w, 0, sizeof(*w));
	test_make_tempdir(w->directory, sizeof(w->directory));
	snprintf(w->mirror, sizeof(w->mirror), "%s/mirror", w->directory);
	snprintf(w->bundle_path, sizeof(w->bundle_path), "%s/trust.txt", w->directory);
	n = snprintf(text, sizeof(text), "dirauth trust v1\nnamespace mix " ORIGIN "\n");
	buffer_init(&w->certificates);
	for (size_t i = 0; i < AUTHORITIES; i++) {
		ck_assert_int_eq(signer_key_generate(names[i], &w->identities[i]), 0);
		ck_assert_int_eq(signer_key_generate(names[i], &w->signing[i]), 0);
		buffer_init(&notes[i]);
		fixture_certificate(w->identities[i], w->signing[i], NOW - 86400, NOW + 86400, &notes[i]);
		note_verifier_format(signer_key_verifier(w->identities[i]), key);
		n += snprintf(text + n, sizeof(text) - (size_t)n, "authority %s\n", key);
	}
	n += snprintf(text + n, sizeof(text) - (size_t)n, "threshold 2\n");
	ck_assert_uint_lt((size_t)n, sizeof(text));
	test_write_file(w->bundle_path, text, (size_t)n, 0644);
	fixture_certificate_bundle(notes, AUTHORITIES, &w->certificates);
	for (size_t i = 0; i < AUTHORITIES; i++)
		buffer_free(&notes[i]);
	ck_assert_int_eq(signer_key_generate("provider.test", &w->provider), 0);
	memset(w->service_id, 0x5a, SERVICE_ID_SIZE);
	memset(w->endpoint_ids[ENDPOINT_A], 0xa1, ENDPOINT_ID_SIZE);
	memset(w->endpoint_ids[ENDPOINT_B], 0xb2, ENDPOINT_ID_SIZE);

	ck_assert_int_eq(stub_http_start(0, &w->server), 0);
	snprintf(w->url, sizeof(w->url), "http://127.0.0.1:%u", stub_http_port(w->server));
	ck_assert_int_eq(stub_http_route(w->server, "GET", "/v1/certificates", 200, NULL,
	                                 w->certificates.data, w->certificates.len),
	                 0);
}

static void world_close(struct world *w)
{
	stub_http_stop(w->server);
	for (size_t i = 0; i < AUTHORITIES; i++) {
		signer_key_free(w->identities[i]);
		signer_key_free(w->signing[i]);
	}
	signer_key_free(w->provider);
	buffer_free(&w->certificates);
	test_remove_tree(w->directory);
}

/* The provider's registration of the service at sequence, listing endpoint A (with_a) and B,
 * signed by the provider. */
static void registration_note(const struct world *w, uint64_t sequence, int with_a, struct buffer *out)
{
	struct registration registration;
	struct note_signature signature;
	struct buffer text;
	size_t count = 0;

	memset(&registration, 0, sizeof(registration));
	buffer_init(&text);
	buffer_init(out);
	strcpy(registration.namespace_name, "mix");
	memcpy(registration.service_id, w->service_id, SERVICE_ID_SIZE);
	registration.service_class = SERVICE_CLASS_MIX_GATEWAY;
	registration.provider = *signer_key_verifier(w->provider);
	registration.sequence = sequence;
	registration.issued_at = NOW - 100 + sequence;
	registration.expires = NOW + 86400;
	registration.endpoints = calloc(2, sizeof(*registration.endpoints));
	ck_assert_ptr_nonnull(registration.endpoints);
	for (int e = with_a ? ENDPOINT_A : ENDPOINT_B; e <= ENDPOINT_B; e++) {
		struct endpoint_descriptor *endpoint = &registration.endpoints[count++];
		memcpy(endpoint->endpoint_id, w->endpoint_ids[e], ENDPOINT_ID_SIZE);
		endpoint->transport = TRANSPORT_QUIC;
		snprintf(endpoint->address, sizeof(endpoint->address), "192.0.2.%d:443", e + 1);
		strcpy(endpoint->region, "eu-west");
		endpoint->capacity = CAPACITY_LOW;
		endpoint->profile = PROFILE_MODERN;
	}
	registration.endpoint_count = count;
	registration_sort_endpoints(&registration);
	ck_assert_int_eq(registration_encode(&registration, &text), 0);
	ck_assert_int_eq(signer_key_sign(w->provider, text.data, text.len, &signature), 0);
	ck_assert_int_eq(note_format(text.data, text.len, &signature, 1, out), 0);
	registration_clear(&registration);
	buffer_free(&text);
}

/* The provider's revocation of endpoint A (or, with whole_service, of the service), signed. */
static void revocation_note(const struct world *w, int whole_service, struct buffer *out)
{
	struct revocation revocation;
	struct note_signature signature;
	struct buffer text;

	memset(&revocation, 0, sizeof(revocation));
	buffer_init(&text);
	buffer_init(out);
	strcpy(revocation.namespace_name, "mix");
	memcpy(revocation.service_id, w->service_id, SERVICE_ID_SIZE);
	if (!whole_service) {
		revocation.has_endpoint = 1;
		memcpy(revocation.endpoint_id, w->endpoint_ids[ENDPOINT_A], ENDPOINT_ID_SIZE);
	}
	revocation.signer = REVOCATION_SIGNER_PROVIDER;
	revocation.key = *signer_key_verifier(w->provider);
	revocation.reason = REVOCATION_KEY_COMPROMISE;
	revocation.revoked_at = NOW + EPOCH_TIME - 10;
	revocation.sequence = 1;
	ck_assert_int_eq(revocation_encode(&revocation, &text), 0);
	ck_assert_int_eq(signer_key_sign(w->provider, text.data, text.len, &signature), 0);
	ck_assert_int_eq(note_format(text.data, text.len, &signature, 1, out), 0);
	buffer_free(&text);
}

/* The valid-after of epoch: the time a mirror fetching it runs at is one second later. */
static uint64_t epoch_time(uint64_t epoch)
{
	return NOW + (epoch - FIRST_EPOCH) * EPOCH_TIME;
}

/* Builds plan's body and signed header note. */
static void build_snapshot(const struct world *w, const struct snapshot_plan *plan,
                           struct buffer *header_note, struct buffer *body)
{
	struct snapshot_record record;
	struct snapshot_revocation revocation;
	struct snapshot_sections sections = {0};
	struct note_signature signatures[AUTHORITIES];
	struct snapshot_header header;
	struct buffer text;
	size_t record_count = plan->record != NULL ? 1 : 0;

	buffer_init(&text);
	buffer_init(header_note);
	buffer_init(body);
	memset(&record, 0, sizeof(record));
	if (plan->record != NULL) {
		memcpy(record.service_id, w->service_id, SERVICE_ID_SIZE);
		record.note = plan->record->data;
		record.note_len = plan->record->len;
	}
	if (plan->revocation != NULL) {
		memset(&revocation, 0, sizeof(revocation));
		memcpy(revocation.service_id, w->service_id, SERVICE_ID_SIZE);
		revocation.has_endpoint = !plan->revokes_service;
		if (!plan->revokes_service)
			memcpy(revocation.endpoint_id, w->endpoint_ids[ENDPOINT_A], ENDPOINT_ID_SIZE);
		revocation.since = plan->revoked_since;
		revocation.note = plan->revocation->data;
		revocation.note_len = plan->revocation->len;
		sections.revocations = &revocation;
		sections.revocation_count = 1;
	}
	ck_assert_int_eq(
	    snapshot_body_encode_sections("mix", plan->epoch, &record, record_count, &sections, body), 0);

	memset(&header, 0, sizeof(header));
	strcpy(header.namespace_name, "mix");
	strcpy(header.origin, ORIGIN);
	header.epoch = plan->epoch;
	header.valid_after = epoch_time(plan->epoch);
	header.fresh_until = header.valid_after + EPOCH_TIME;
	header.valid_until = header.valid_after + 3 * EPOCH_TIME;
	header.record_count = record_count;
	ck_assert_int_eq(snapshot_records_root(&record, record_count, header.records_root), 0);
	header.body_size = body->len;
	ck_assert_int_eq(crypto_sha256(body->data, body->len, header.body_sha256), 0);
	if (plan->previous != NULL) {
		struct note *previous = NULL;
		ck_assert_int_eq(note_parse(plan->previous->data, plan->previous->len, &previous), 0);
		ck_assert_int_eq(snapshot_header_digest(previous->text, previous->text_len, header.previous),
		                 0);
		note_free(previous);
	}
	header.consensus_method = 2;
	ck_assert_int_eq(snapshot_header_encode(&header, &text), 0);
	ck_assert_uint_le(plan->signer_count, AUTHORITIES);
	for (size_t i = 0; i < plan->signer_count; i++)
		ck_assert_int_eq(
		    signer_key_sign(w->signing[plan->signers[i]], text.data, text.len, &signatures[i]), 0);
	ck_assert_int_eq(note_format(text.data, text.len, signatures, plan->signer_count, header_note), 0);
	buffer_free(&text);
}

/* The server offers the snapshot as the latest of its epoch (and as that epoch's header). */
static void serve(struct world *w, uint64_t epoch, const struct buffer *header_note,
                  const struct buffer *body)
{
	char path[128];

	ck_assert_int_eq(stub_http_route(w->server, "GET", "/v1/mix/snapshots/latest", 200, NULL,
	                                 header_note->data, header_note->len),
	                 0);
	snprintf(path, sizeof(path), "/v1/mix/snapshots/%" PRIu64, epoch);
	ck_assert_int_eq(
	    stub_http_route(w->server, "GET", path, 200, NULL, header_note->data, header_note->len), 0);
	snprintf(path, sizeof(path), "/v1/mix/snapshots/%" PRIu64 "/body", epoch);
	ck_assert_int_eq(stub_http_route(w->server, "GET", path, 200, NULL, body->data, body->len), 0);
}

/* dirauthctl fetch of the mirror from the server, at one second into epoch. */
static void fetch(struct world *w, uint64_t epoch, struct test_outcome *outcome)
{
	char now[32];
	snprintf(now, sizeof(now), "%" PRIu64, epoch_time(epoch) + 1);
	const char *args[] = {"fetch", "--trust", w->bundle_path, "--server", w->url, "--namespace",
	                      "mix",   "--out",   w->mirror,      "--now",    now,    NULL};
	test_run_program(test_binary_path("ctl/dirauthctl"), args, w->directory, outcome);
}

static int mirror_has(const struct world *w, const char *name)
{
	char path[4400];
	struct stat info;
	snprintf(path, sizeof(path), "%s/mix/%s", w->mirror, name);
	return stat(path, &info) == 0;
}

static void assert_mirror_file(const struct world *w, const char *name, const struct buffer *expected)
{
	char path[4400];
	size_t len = 0;
	snprintf(path, sizeof(path), "%s/mix/%s", w->mirror, name);
	uint8_t *data = test_read_file(path, &len);
	ck_assert_msg(len == expected->len && memcmp(data, expected->data, len) == 0,
	              "%s is not what the server served", name);
	free(data);
}

/* Appends one line per entry under path (relative name, mode, size, inode, modification time,
 * and a file's SHA-256), in name order, descending into directories: two states of a directory
 * are equal only when no file was added, removed, replaced or rewritten. */
static void directory_state(const char *path, const char *relative, struct buffer *out)
{
	struct dirent **entries = NULL;
	int count = scandir(path, &entries, NULL, alphasort);

	ck_assert_msg(count >= 0, "cannot list %s", path);
	for (int i = 0; i < count; i++) {
		const char *name = entries[i]->d_name;
		char child[4400], child_relative[4400], digest_hex[65] = "-";
		struct stat info;

		if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
			free(entries[i]);
			continue;
		}
		snprintf(child, sizeof(child), "%s/%s", path, name);
		snprintf(child_relative, sizeof(child_relative), "%s%s", relative, name);
		ck_assert_int_eq(lstat(child, &info), 0);
		if (S_ISREG(info.st_mode)) {
			uint8_t digest[32];
			size_t len = 0;
			uint8_t *data = test_read_file(child, &len);
			ck_assert_int_eq(crypto_sha256(data, len, digest), 0);
			hex_encode(digest, sizeof(digest), digest_hex);
			free(data);
		}
		ck_assert_int_eq(buffer_appendf(out, "%s mode %o size %lld inode %llu mtime %lld.%09ld %s\n",
		                                child_relative, (unsigned)info.st_mode,
		                                (long long)info.st_size, (unsigned long long)info.st_ino,
		                                (long long)info.st_mtim.tv_sec, info.st_mtim.tv_nsec,
		                                digest_hex),
		                 0);
		if (S_ISDIR(info.st_mode)) {
			snprintf(child_relative, sizeof(child_relative), "%s%s/", relative, name);
			directory_state(child, child_relative, out);
		}
		free(entries[i]);
	}
	free(entries);
}

static void mirror_state(const struct world *w, struct buffer *out)
{
	buffer_init(out);
	directory_state(w->mirror, "", out);
	ck_assert_int_eq(buffer_append(out, (const uint8_t *)"", 1), 0); /* NUL-terminated, to print */
}

/* The refusal a mirror meets: exit 65, the documented line on stderr, nothing on stdout, and the
 * mirror's directory as it was. */
static void assert_refused_unchanged(struct world *w, uint64_t epoch, const char *expected_err)
{
	struct test_outcome outcome;
	struct buffer before, after;

	mirror_state(w, &before);
	fetch(w, epoch, &outcome);
	mirror_state(w, &after);
	ck_assert_msg(outcome.status == 65, "exit %d, stdout: %s, stderr: %s", outcome.status, outcome.out,
	              outcome.err);
	ck_assert_str_eq(outcome.err, expected_err);
	ck_assert_str_eq(outcome.out, "");
	ck_assert_msg(before.len == after.len && memcmp(before.data, after.data, before.len) == 0,
	              "the refused fetch changed the mirror:\nbefore:\n%s\nafter:\n%s", before.data,
	              after.data);
	test_outcome_free(&outcome);
	buffer_free(&before);
	buffer_free(&after);
}

static void assert_fetched(struct world *w, uint64_t epoch, const char *expected_out)
{
	struct test_outcome outcome;

	fetch(w, epoch, &outcome);
	ck_assert_msg(outcome.status == 0, "exit %d, stdout: %s, stderr: %s", outcome.status, outcome.out,
	              outcome.err);
	ck_assert_str_eq(outcome.out, expected_out);
	ck_assert_str_eq(outcome.err, "");
	test_outcome_free(&outcome);
}

START_TEST(test_fetch_refuses_revoked_endpoint_listed_again)
{
	struct world w;
	struct buffer with_a, without_a, revocation;
	struct buffer headers[4], bodies[4]; /* epochs 11, 12, the forged 13, the honest 13 */
	char service_hex[2 * SERVICE_ID_SIZE + 1], endpoint_hex[2 * ENDPOINT_ID_SIZE + 1];
	char expected[512];

	world_open(&w);
	registration_note(&w, 1, 1, &with_a);
	registration_note(&w, 2, 0, &without_a);
	revocation_note(&w, 0, &revocation);
	const struct snapshot_plan plans[4] = {
	    {.epoch = 11, .record = &with_a, .signers = signed_by_1_2, .signer_count = 2},
	    {.epoch = 12,
	     .record = &without_a,
	     .revocation = &revocation,
	     .revoked_since = 12,
	     .previous = &headers[0],
	     .signers = signed_by_all,
	     .signer_count = 3},
	    /* Epoch 11's registration again, the revocation forgotten: what authorities restored from
	     * a backup taken before it would publish. Two of the three are the threshold. */
	    {.epoch = 13,
	     .record = &with_a,
	     .previous = &headers[1],
	     .signers = signed_by_1_2,
	     .signer_count = 2},
	    {.epoch = 13,
	     .record = &without_a,
	     .revocation = &revocation,
	     .revoked_since = 12,
	     .previous = &headers[1],
	     .signers = signed_by_2_3,
	     .signer_count = 2},
	};
	for (size_t i = 0; i < 4; i++)
		build_snapshot(&w, &plans[i], &headers[i], &bodies[i]);

	/* Epoch 11 shows endpoint A: fetched and kept. */
	serve(&w, 11, &headers[0], &bodies[0]);
	assert_fetched(&w, 11,
	               "verified snapshot mix epoch 11: 1 records, signed by 2 of 3 authorities "
	               "(authority-1.test, authority-2.test)\n");
	assert_mirror_file(&w, "11.header", &headers[0]);
	assert_mirror_file(&w, "11.body", &bodies[0]);
	assert_mirror_file(&w, "latest.header", &headers[0]);
	assert_mirror_file(&w, "certificates", &w.certificates);

	/* Epoch 12 revokes A: fetched, and epoch 11, which still shows A, is dropped from the mirror. */
	serve(&w, 12, &headers[1], &bodies[1]);
	assert_fetched(&w, 12,
	               "verified snapshot mix epoch 12: 1 records, signed by 3 of 3 authorities "
	               "(authority-1.test, authority-2.test, authority-3.test)\n"
	               "dropped 1 older kept snapshot that still held what this one revokes (epoch 11)\n");
	ck_assert(!mirror_has(&w, "11.header"));
	ck_assert(!mirror_has(&w, "11.body"));
	assert_mirror_file(&w, "12.header", &headers[1]);
	assert_mirror_file(&w, "12.body", &bodies[1]);
	assert_mirror_file(&w, "latest.header", &headers[1]);

	/* The forged epoch 13 lists A again: refused, whatever its signatures, and nothing changes. */
	serve(&w, 13, &headers[2], &bodies[2]);
	hex_encode(w.service_id, SERVICE_ID_SIZE, service_hex);
	hex_encode(w.endpoint_ids[ENDPOINT_A], ENDPOINT_ID_SIZE, endpoint_hex);
	snprintf(expected, sizeof(expected),
	         "dirauthctl: fetch mix: body: service %s holds endpoint %s, which the held snapshot of "
	         "epoch 12 revoked: a revoked endpoint never comes back\n",
	         service_hex, endpoint_hex);
	assert_refused_unchanged(&w, 13, expected);
	ck_assert_uint_eq(stub_http_hits(w.server, "GET", "/v1/mix/snapshots/13/body", NULL), 1);
	ck_assert(!mirror_has(&w, "13.header"));
	ck_assert(!mirror_has(&w, "13.body"));
	assert_mirror_file(&w, "latest.header", &headers[1]);
	/* Offered again, it is refused again. */
	assert_refused_unchanged(&w, 13, expected);

	/* The honest epoch 13, without A: fetched; epoch 12 shows no revoked record and stays. */
	serve(&w, 13, &headers[3], &bodies[3]);
	assert_fetched(&w, 13,
	               "verified snapshot mix epoch 13: 1 records, signed by 2 of 3 authorities "
	               "(authority-2.test, authority-3.test)\n");
	assert_mirror_file(&w, "13.header", &headers[3]);
	assert_mirror_file(&w, "13.body", &bodies[3]);
	assert_mirror_file(&w, "12.body", &bodies[1]);
	assert_mirror_file(&w, "latest.header", &headers[3]);
	ck_assert(!mirror_has(&w, "11.body"));

	for (size_t i = 0; i < 4; i++) {
		buffer_free(&headers[i]);
		buffer_free(&bodies[i]);
	}
	buffer_free(&with_a);
	buffer_free(&without_a);
	buffer_free(&revocation);
	world_close(&w);
}
END_TEST

START_TEST(test_fetch_refuses_revoked_service_listed_again)
{
	struct world w;
	struct buffer registration, revocation;
	struct buffer headers[4], bodies[4]; /* epochs 11, 12, the forged 13, the honest 13 */
	char service_hex[2 * SERVICE_ID_SIZE + 1], expected[512];

	world_open(&w);
	registration_note(&w, 1, 1, &registration);
	revocation_note(&w, 1, &revocation);
	const struct snapshot_plan plans[4] = {
	    {.epoch = 11, .record = &registration, .signers = signed_by_all, .signer_count = 3},
	    {.epoch = 12,
	     .revocation = &revocation,
	     .revokes_service = 1,
	     .revoked_since = 12,
	     .previous = &headers[0],
	     .signers = signed_by_2_3,
	     .signer_count = 2},
	    {.epoch = 13,
	     .record = &registration,
	     .previous = &headers[1],
	     .signers = signed_by_2_3,
	     .signer_count = 2},
	    {.epoch = 13,
	     .revocation = &revocation,
	     .revokes_service = 1,
	     .revoked_since = 12,
	     .previous = &headers[1],
	     .signers = signed_by_1_2,
	     .signer_count = 2},
	};
	for (size_t i = 0; i < 4; i++)
		build_snapshot(&w, &plans[i], &headers[i], &bodies[i]);

	serve(&w, 11, &headers[0], &bodies[0]);
	assert_fetched(&w, 11,
	               "verified snapshot mix epoch 11: 1 records, signed by 3 of 3 authorities "
	               "(authority-1.test, authority-2.test, authority-3.test)\n");
	serve(&w, 12, &headers[1], &bodies[1]);
	assert_fetched(&w, 12,
	               "verified snapshot mix epoch 12: 0 records, signed by 2 of 3 authorities "
	               "(authority-2.test, authority-3.test)\n"
	               "dropped 1 older kept snapshot that still held what this one revokes (epoch 11)\n");
	ck_assert(!mirror_has(&w, "11.body"));
	ck_assert(!mirror_has(&w, "11.header"));

	serve(&w, 13, &headers[2], &bodies[2]);
	hex_encode(w.service_id, SERVICE_ID_SIZE, service_hex);
	snprintf(expected, sizeof(expected),
	         "dirauthctl: fetch mix: body: service %s, which the held snapshot of epoch 12 revoked: "
	         "a revoked service never comes back\n",
	         service_hex);
	assert_refused_unchanged(&w, 13, expected);
	assert_mirror_file(&w, "latest.header", &headers[1]);

	serve(&w, 13, &headers[3], &bodies[3]);
	assert_fetched(&w, 13,
	               "verified snapshot mix epoch 13: 0 records, signed by 2 of 3 authorities "
	               "(authority-1.test, authority-2.test)\n");
	assert_mirror_file(&w, "13.body", &bodies[3]);
	assert_mirror_file(&w, "latest.header", &headers[3]);

	for (size_t i = 0; i < 4; i++) {
		buffer_free(&headers[i]);
		buffer_free(&bodies[i]);
	}
	buffer_free(&registration);
	buffer_free(&revocation);
	world_close(&w);
}
END_TEST

static Suite *fetch_revoked_suite(void)
{
	Suite *suite = suite_create("fetch_revoked");
	TCase *tc = tcase_create("fetch_revoked");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_fetch_refuses_revoked_endpoint_listed_again);
	tcase_add_test(tc, test_fetch_refuses_revoked_service_listed_again);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(fetch_revoked_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
