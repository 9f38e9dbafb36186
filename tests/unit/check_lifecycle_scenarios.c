/*
 * check_lifecycle_scenarios.c: an endpoint's life across epochs at one authority, through its HTTP
 * API over loopback (lifecycle_http_fixture.h: real signer, store, scheduler, HTTP server), each
 * step checked in the snapshot it publishes:
 *
 *   - rotation: publish the new endpoint, overlap (both healthy), prefer the new one (the old one
 *     degraded: select with caution), drain the old one (draining: no new sessions), retire it (a
 *     registration without it and its revocation, reason superseded), and it never comes back;
 *   - compromise: the endpoint revoked at once, with no overlap: the registration naming it leaves
 *     the very next snapshot, the revocation is listed, the endpoint's own key is refused, and the
 *     provider's new registration without it comes back;
 *   - a mirror (dirauthctl fetch) holding an older snapshot that still shows a revoked endpoint:
 *     the fetch of the newer snapshot drops the older one from the mirror, and a newer body that
 *     held what the held snapshot revoked is refused;
 *   - a revocation survives a restart; after a restore from a backup taken before it, a lone
 *     authority has lost it (it has no peer whose vote lists it, and the snapshot that listed it
 *     is not in the backup), and the provider posting the same revocation again restores it.
 */
#include "lifecycle_http_fixture.h"

#include "ctl/fetch.h"
#include "ctl/fetch_revocations.h"
#include "ctl/report.h"
#include "schema/trust_bundle.h"

#include <inttypes.h>
#include <stdio.h>
#include <sys/stat.h>

/* The registration of the published record of r's service, parsed (the caller clears it);
 * 0 when the snapshot has no such record. */
static int record_of(const struct published *p, const struct registration *r, struct registration *out)
{
	for (size_t i = 0; i < p->body->record_count; i++) {
		const struct snapshot_record *record = &p->body->records[i];
		if (memcmp(record->service_id, r->service_id, SERVICE_ID_SIZE) != 0)
			continue;
		struct note *note = NULL;
		ck_assert_int_eq(registration_parse_note(record->note, record->note_len, out, &note), 0);
		note_free(note);
		return 1;
	}
	return 0;
}

/* Whether the published record of r's service lists endpoint id. */
static int lists_endpoint(const struct published *p, const struct registration *r, const uint8_t *id)
{
	struct registration record;
	int listed = 0;
	if (record_of(p, r, &record)) {
		listed = registration_find_endpoint(&record, id) != NULL;
		registration_clear(&record);
	}
	return listed;
}

/* The published class of the endpoint id of r's service, or -1: unknown (no entry). */
static int class_of(const struct published *p, const struct registration *r, const uint8_t *id)
{
	for (size_t i = 0; i < p->body->health_count; i++)
		if (memcmp(p->body->health[i].service_id, r->service_id, SERVICE_ID_SIZE) == 0 &&
		    memcmp(p->body->health[i].endpoint_id, id, ENDPOINT_ID_SIZE) == 0)
			return (int)p->body->health[i].health_class;
	return -1;
}

/* A statement on the endpoint id of r by the provider, now. */
static void post_health(struct fixture *f, const struct registration *r, const uint8_t *id,
                        enum health_class c, uint64_t sequence, long status, const char *code)
{
	struct health_statement s;
	struct buffer note;
	memset(&s, 0, sizeof s);
	strcpy(s.namespace_name, r->namespace_name);
	memcpy(s.service_id, r->service_id, SERVICE_ID_SIZE);
	memcpy(s.endpoint_id, id, ENDPOINT_ID_SIZE);
	s.signer = HEALTH_SIGNER_PROVIDER;
	s.health_class = c;
	s.issued_at = f->now;
	s.sequence = sequence;
	buffer_init(&note);
	lifecycle_sign_statement(&s, &f->provider, &note);
	post_expect_code(f, "/v1/endpoint-health", &note, status, code);
	buffer_free(&note);
}

/* r with only the endpoints of the example registration at the given indexes (of its three). */
static void with_endpoints(const struct registration *example, const size_t *indexes, size_t count,
                           uint64_t sequence, struct fixture *f, struct registration *out)
{
	*out = *example;
	out->endpoints = calloc(count, sizeof *out->endpoints);
	ck_assert_ptr_nonnull(out->endpoints);
	for (size_t i = 0; i < count; i++)
		out->endpoints[i] = example->endpoints[indexes[i]];
	out->endpoint_count = count;
	out->sequence = sequence;
	out->issued_at = f->now;
	out->expires = f->now + 3600;
	registration_sort_endpoints(out);
}

static void revoke_endpoint(struct fixture *f, const struct registration *r, const uint8_t *id,
                            enum revocation_reason reason, uint64_t sequence, struct buffer *out)
{
	struct revocation v;
	memset(&v, 0, sizeof v);
	strcpy(v.namespace_name, r->namespace_name);
	memcpy(v.service_id, r->service_id, SERVICE_ID_SIZE);
	v.has_endpoint = 1;
	memcpy(v.endpoint_id, id, ENDPOINT_ID_SIZE);
	v.signer = REVOCATION_SIGNER_PROVIDER;
	v.key = f->provider.verifier;
	v.reason = reason;
	v.revoked_at = f->now;
	v.sequence = sequence;
	buffer_init(out);
	lifecycle_sign_revocation(&v, &f->provider, out);
}

/* Moves the clock into epoch (one second past its start) without publishing. */
static void enter_epoch(struct fixture *f, uint64_t epoch)
{
	write_clock(f, GENESIS + epoch * LENGTH + 1);
}

START_TEST(test_rotation_flow)
{
	struct fixture f;
	struct registration example, r;
	struct published p;
	lc_open(&f);
	registration_of(&f, 1, &f.provider, 1, 3600, &example);
	const uint8_t *old = example.endpoints[0].endpoint_id, *fresh = example.endpoints[1].endpoint_id;
	const size_t only_old[] = {0}, both[] = {0, 1}, only_new[] = {1};

	/* Epoch 11: the old endpoint alone, healthy. */
	with_endpoints(&example, only_old, 1, 1, &f, &r);
	post_registration(&f, &r, &f.provider, 202, NULL);
	post_health(&f, &r, old, HEALTH_HEALTHY, 1, 202, NULL);
	registration_clear(&r);
	publish_epoch(&f, 11);
	published_get(&f, 11, &p);
	ck_assert(lists_endpoint(&p, &example, old));
	ck_assert(!lists_endpoint(&p, &example, fresh));
	ck_assert_int_eq(class_of(&p, &example, old), HEALTH_HEALTHY);
	published_free(&p);

	/* Epoch 12, publish new and overlap: both listed, both healthy. */
	enter_epoch(&f, 11);
	with_endpoints(&example, both, 2, 2, &f, &r);
	post_registration(&f, &r, &f.provider, 202, NULL);
	post_health(&f, &r, old, HEALTH_HEALTHY, 2, 202, NULL);
	post_health(&f, &r, fresh, HEALTH_HEALTHY, 1, 202, NULL);
	registration_clear(&r);
	publish_epoch(&f, 12);
	published_get(&f, 12, &p);
	ck_assert(lists_endpoint(&p, &example, old));
	ck_assert(lists_endpoint(&p, &example, fresh));
	ck_assert_int_eq(class_of(&p, &example, old), HEALTH_HEALTHY);
	ck_assert_int_eq(class_of(&p, &example, fresh), HEALTH_HEALTHY);
	published_free(&p);

	/* Epoch 13, prefer new: the old one degraded (select with caution), the new one healthy. */
	enter_epoch(&f, 12);
	post_health(&f, &example, old, HEALTH_DEGRADED, 3, 202, NULL);
	post_health(&f, &example, fresh, HEALTH_HEALTHY, 2, 202, NULL);
	publish_epoch(&f, 13);
	published_get(&f, 13, &p);
	ck_assert(lists_endpoint(&p, &example, old));
	ck_assert_int_eq(class_of(&p, &example, old), HEALTH_DEGRADED);
	ck_assert_int_eq(class_of(&p, &example, fresh), HEALTH_HEALTHY);
	published_free(&p);

	/* Epoch 14, drain old: no new sessions on it, still listed for the sessions it holds. */
	enter_epoch(&f, 13);
	post_health(&f, &example, old, HEALTH_DRAINING, 4, 202, NULL);
	post_health(&f, &example, fresh, HEALTH_HEALTHY, 3, 202, NULL);
	publish_epoch(&f, 14);
	published_get(&f, 14, &p);
	ck_assert(lists_endpoint(&p, &example, old));
	ck_assert_int_eq(class_of(&p, &example, old), HEALTH_DRAINING);
	ck_assert_int_eq(class_of(&p, &example, fresh), HEALTH_HEALTHY);
	published_free(&p);

	/* Epoch 15, retire old: a registration without it, and its revocation (superseded). */
	enter_epoch(&f, 14);
	with_endpoints(&example, only_new, 1, 3, &f, &r);
	post_registration(&f, &r, &f.provider, 202, NULL);
	registration_clear(&r);
	struct buffer retire;
	revoke_endpoint(&f, &example, old, REVOCATION_SUPERSEDED, 1, &retire);
	post_expect_code(&f, "/v1/revocations", &retire, 202, NULL);
	post_health(&f, &example, fresh, HEALTH_HEALTHY, 4, 202, NULL);
	post_health(&f, &example, old, HEALTH_HEALTHY, 5, 409, "revoked");
	publish_epoch(&f, 15);
	published_get(&f, 15, &p);
	ck_assert(has_record(&p, example.service_id));
	ck_assert(!lists_endpoint(&p, &example, old));
	ck_assert(lists_endpoint(&p, &example, fresh));
	ck_assert_int_eq(class_of(&p, &example, fresh), HEALTH_HEALTHY);
	ck_assert_int_eq(class_of(&p, &example, old), -1);
	ck_assert_ptr_nonnull(revocation_of(&p, &example, 0));
	published_free(&p);

	/* It never comes back: a registration naming it again is refused. */
	enter_epoch(&f, 15);
	with_endpoints(&example, both, 2, 4, &f, &r);
	post_registration(&f, &r, &f.provider, 409, "revoked");
	registration_clear(&r);
	publish_epoch(&f, 16);
	published_get(&f, 16, &p);
	ck_assert(!lists_endpoint(&p, &example, old));
	ck_assert(lists_endpoint(&p, &example, fresh));
	published_free(&p);

	buffer_free(&retire);
	registration_clear(&example);
	lc_close(&f);
}
END_TEST

START_TEST(test_compromise_path)
{
	struct fixture f;
	struct registration example, r;
	struct published p;
	struct buffer note;
	lc_open(&f);
	registration_of(&f, 1, &f.provider, 1, 3600, &example);
	const uint8_t *compromised = example.endpoints[0].endpoint_id;
	const uint8_t *other = example.endpoints[1].endpoint_id;
	const uint8_t *replacement = example.endpoints[2].endpoint_id;
	const size_t first[] = {0, 1}, after[] = {1, 2};

	with_endpoints(&example, first, 2, 1, &f, &r);
	post_registration(&f, &r, &f.provider, 202, NULL);
	registration_clear(&r);
	health_note(&example, 0, HEALTH_SIGNER_ENDPOINT, HEALTH_HEALTHY, f.now, 1, &endpoint_key, &note);
	post_expect_code(&f, "/v1/endpoint-health", &note, 202, NULL);
	buffer_free(&note);
	publish_epoch(&f, 11);
	published_get(&f, 11, &p);
	ck_assert(lists_endpoint(&p, &example, compromised));
	ck_assert_int_eq(class_of(&p, &example, compromised), HEALTH_HEALTHY);
	published_free(&p);

	/* The endpoint's key is compromised: revoked at once, no overlap, no draining. The key's
	 * own word is refused from now on. */
	enter_epoch(&f, 11);
	struct buffer revoke;
	revoke_endpoint(&f, &example, compromised, REVOCATION_KEY_COMPROMISE, 1, &revoke);
	post_expect_code(&f, "/v1/revocations", &revoke, 202, NULL);
	health_note(&example, 0, HEALTH_SIGNER_ENDPOINT, HEALTH_HEALTHY, f.now, 2, &endpoint_key, &note);
	post_expect_code(&f, "/v1/endpoint-health", &note, 409, "revoked");
	buffer_free(&note);
	publish_epoch(&f, 12);
	published_get(&f, 12, &p);
	/* The registration naming it leaves the very next snapshot with it. */
	ck_assert(!has_record(&p, example.service_id));
	const struct snapshot_revocation *listed = revocation_of(&p, &example, 0);
	ck_assert_ptr_nonnull(listed);
	ck_assert_uint_eq(listed->since, 12);
	ck_assert_mem_eq(listed->note, revoke.data, revoke.len);
	ck_assert_uint_eq(p.body->health_count, 0);
	published_free(&p);

	/* The provider's new registration, without it, comes back the epoch after. */
	enter_epoch(&f, 12);
	with_endpoints(&example, after, 2, 2, &f, &r);
	post_registration(&f, &r, &f.provider, 202, NULL);
	registration_clear(&r);
	publish_epoch(&f, 13);
	published_get(&f, 13, &p);
	ck_assert(!lists_endpoint(&p, &example, compromised));
	ck_assert(lists_endpoint(&p, &example, other));
	ck_assert(lists_endpoint(&p, &example, replacement));
	ck_assert_ptr_nonnull(revocation_of(&p, &example, 0));
	published_free(&p);

	buffer_free(&revoke);
	registration_clear(&example);
	lc_close(&f);
}
END_TEST

/* ---- a mirror's cache ---- */

static void bundle_for(struct fixture *f, struct trust_bundle *bundle, char *path, size_t cap)
{
	char identity[NOTE_VERIFIER_KEY_MAX + 1], text[2048];
	note_verifier_format(&f->signer_process.identity, identity);
	int n = snprintf(text, sizeof text,
	                 "dirauth trust v1\nnamespace mix dirauth.example/mix\n"
	                 "namespace mail dirauth.example/mail\nauthority %s\nthreshold 1\n",
	                 identity);
	ck_assert_int_eq(trust_bundle_parse((const uint8_t *)text, (size_t)n, bundle, NULL), 0);
	snprintf(path, cap, "%s/trust.txt", f->dir);
	test_write_file(path, text, (size_t)n, 0644);
}

static int mirror_has(const char *mirror, const char *name)
{
	char path[1400];
	struct stat info;
	snprintf(path, sizeof path, "%s/mix/%s", mirror, name);
	return stat(path, &info) == 0;
}

START_TEST(test_fetch_drops_revoked_cache)
{
	struct fixture f;
	struct registration r;
	struct trust_bundle *bundle = malloc(sizeof *bundle);
	char bundle_path[800], mirror[800], url[64], now[32];
	ck_assert_ptr_nonnull(bundle);
	lc_open(&f);
	bundle_for(&f, bundle, bundle_path, sizeof bundle_path);
	snprintf(mirror, sizeof mirror, "%s/mirror", f.dir);
	snprintf(url, sizeof url, "http://127.0.0.1:%u", f.port);
	register_example(&f, 1, 3600, &r);
	publish_epoch(&f, 11);

	/* The mirror holds epoch 11, which shows the endpoint. */
	snprintf(now, sizeof now, "%" PRIu64, f.now + 1);
	const char *fetch[] = {"fetch", "--trust", bundle_path, "--server", url, "--namespace",
	                       "mix",   "--out",   mirror,      "--now",    now, NULL};
	struct test_outcome outcome;
	test_run_program(test_binary_path("ctl/dirauthctl"), fetch, f.dir, &outcome);
	ck_assert_msg(outcome.status == 0, "%s", outcome.err);
	ck_assert_ptr_nonnull(strstr(outcome.out, "verified snapshot mix epoch 11: 1 records"));
	test_outcome_free(&outcome);
	ck_assert(mirror_has(mirror, "11.body"));

	/* Revoked: epoch 12 lacks the service and lists the revocation; the fetch of it drops the
	 * held epoch 11 from the mirror, which must not serve the endpoint any longer. */
	struct buffer revoke;
	revoke_endpoint(&f, &r, r.endpoints[0].endpoint_id, REVOCATION_KEY_COMPROMISE, 1, &revoke);
	post_expect_code(&f, "/v1/revocations", &revoke, 202, NULL);
	publish_epoch(&f, 12);
	snprintf(now, sizeof now, "%" PRIu64, f.now + 1);
	test_run_program(test_binary_path("ctl/dirauthctl"), fetch, f.dir, &outcome);
	ck_assert_msg(outcome.status == 0, "%s", outcome.err);
	ck_assert_msg(strstr(outcome.out, "verified snapshot mix epoch 12: 0 records") != NULL &&
	                  strstr(outcome.out, "dropped 1 older kept snapshot that still held what this "
	                                      "one revokes (epoch 11)\n") != NULL,
	              "%s", outcome.out);
	test_outcome_free(&outcome);
	ck_assert(!mirror_has(mirror, "11.body"));
	ck_assert(!mirror_has(mirror, "11.header"));
	ck_assert(mirror_has(mirror, "12.body"));
	ck_assert(mirror_has(mirror, "latest.header"));

	/* That what the held snapshot revoked never comes back, even in a newer signed snapshot, is
	 * libdirauth's check (the held body its base): test_libdirauth's
	 * test_revoked_endpoint_not_selected_after_its_revocation forges such a successor. */
	buffer_free(&revoke);
	registration_clear(&r);
	free(bundle);
	lc_close(&f);
}
END_TEST

/* ---- restart and restore ---- */

/* dirauthd stopped, its store replaced by the backup in directory, started again. */
static void lc_restore(struct fixture *f, const char *backup)
{
	fixture_stop_serving(f);
	store_close(f->store);
	test_remove_tree(f->config->data_dir);
	ck_assert_int_eq(rename(backup, f->config->data_dir), 0);
	struct store_options options = {.path = f->config->data_dir};
	ck_assert_int_eq(store_open(&options, &f->store), 0);
	fixture_serve(f);
}

START_TEST(test_revocation_survives_restart_not_older_backup)
{
	struct fixture f;
	struct registration r, again;
	struct published p;
	char backup[800];
	lc_open(&f);
	register_example(&f, 1, 3600, &r);
	snprintf(backup, sizeof backup, "%s/backup", f.dir);
	ck_assert_int_eq(mkdir(backup, 0700), 0);
	ck_assert_int_eq(store_backup(f.store, backup), 0); /* taken before the revocation */

	struct buffer revoke;
	revoke_endpoint(&f, &r, r.endpoints[0].endpoint_id, REVOCATION_KEY_COMPROMISE, 1, &revoke);
	post_expect_code(&f, "/v1/revocations", &revoke, 202, NULL);
	publish_epoch(&f, 11);
	published_get(&f, 11, &p);
	ck_assert(!has_record(&p, r.service_id));
	ck_assert_ptr_nonnull(revocation_of(&p, &r, 0));
	published_free(&p);

	/* A restart keeps it: a higher sequence naming the endpoint is refused, the snapshot lists it. */
	lc_restart(&f);
	enter_epoch(&f, 11);
	registration_of(&f, 1, &f.provider, 2, 3600, &again);
	post_registration(&f, &again, &f.provider, 409, "revoked");
	publish_epoch(&f, 12);
	published_get(&f, 12, &p);
	ck_assert(!has_record(&p, r.service_id));
	ck_assert_ptr_nonnull(revocation_of(&p, &r, 0));
	published_free(&p);

	/* Restored from the older backup, the lone authority has lost the revocation: neither the
	 * revocation nor the snapshots that listed it are in the backup, and it has no peer whose vote
	 * lists it. */
	lc_restore(&f, backup);
	enter_epoch(&f, 12);
	uint8_t digest[32];
	struct buffer kept;
	buffer_init(&kept);
	ck_assert_int_eq(crypto_sha256(revoke.data, revoke.len, digest), 0);
	ck_assert_int_eq(store_statement_get(f.store, "mix", digest, &kept), DIRAUTH_ERR_NOT_FOUND);
	buffer_free(&kept);
	/* The provider posts the same revocation again (it keeps what it signed): accepted, and the
	 * endpoint is revoked again for good. */
	post_expect_code(&f, "/v1/revocations", &revoke, 202, NULL);
	again.sequence = 3;
	again.issued_at = f.now;
	again.expires = f.now + 3600;
	post_registration(&f, &again, &f.provider, 409, "revoked");
	publish_epoch(&f, 13);
	published_get(&f, 13, &p);
	ck_assert(!has_record(&p, r.service_id));
	const struct snapshot_revocation *listed = revocation_of(&p, &r, 0);
	ck_assert_ptr_nonnull(listed);
	ck_assert_mem_eq(listed->note, revoke.data, revoke.len);
	published_free(&p);

	buffer_free(&revoke);
	registration_clear(&r);
	registration_clear(&again);
	lc_close(&f);
}
END_TEST

static Suite *lifecycle_scenarios_suite(void)
{
	Suite *suite = suite_create("lifecycle_scenarios");
	TCase *tc = tcase_create("lifecycle_scenarios");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_rotation_flow);
	tcase_add_test(tc, test_compromise_path);
	tcase_add_test(tc, test_fetch_drops_revoked_cache);
	tcase_add_test(tc, test_revocation_survives_restart_not_older_backup);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	SRunner *runner = srunner_create(lifecycle_scenarios_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	curl_global_cleanup();
	return failures ? 1 : 0;
}
