/*
 * check_publish_consensus.c: what a single authority publishes is the consensus of its one vote:
 * for a namespace of consensus method 1 and for one of method 2, the header text the signer
 * signed and the body stored are, byte for byte, what consensus_compute (n = k = 1) computes from
 * that vote as a peer would receive it: built from the store's sealed views, encoded, loaded
 * back (consensus_vote_body_load_sections) and computed with the body collected in memory and
 * every note read from the store, where the publication streams its body to the store's files.
 *
 * A real store is filled through the real intake (registrations, health statements signed by the
 * provider and by an endpoint's own key, fresh and stale, a statement whose endpoint key a newer
 * registration dropped, revocations by the provider and by an operator, a deregistration), and
 * epochs are published one after another with a real dirauth-signer: method 1 first, then
 * method 2 after a method-1 snapshot of the same namespace, then with revocations carried from
 * the previous snapshot, then once the first revocation's listing is over. Also: what an
 * authority takes from its peers (intake's peer kinds), and a namespace filled to its bound.
 */
#include "consensus/consensus.h"
#include "lifecycle_fixture.h"
#include "crypto/crypto.h"
#include "schema/deregistration.h"
#include "base/error.h"
#include "crypto/merkle.h"
#include "schema/note.h"
#include "schema/revocation.h"
#include "schema/snapshot.h"
#include "schema/vote.h"
#include "schema/vote_body.h"
#include "server/config/config.h"
#include "server/intake/statements.h"
#include "server/intake/submit.h"
#include "server/publish/publish.h"
#include "server/publish/vote.h"
#include "server/signing/signer_client.h"
#include "server/signing/signer_health.h"
#include "server/store/registrations.h"
#include "server/store/snapshots.h"
#include "server/store/statements.h"
#include "server/store/store.h"
#include "signer_fixture.h"
#include "test_keys.h"
#include "test_support.h"

#include <check.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GENESIS SIGNER_FIXTURE_GENESIS
#define LENGTH  SIGNER_FIXTURE_LENGTH

struct fixture {
	char dir[512];
	struct config *config;  /* mix with lifecycle: true */
	struct config *method1; /* the same, mix without it */
	struct signer_fixture signer_process;
	struct signer_client *signer;
	struct signer_health *health;
	struct clock *clock;
	struct store *store;
	struct test_key provider, endpoint, operator_key;
};

static void write_clock(struct fixture *f, uint64_t now)
{
	char path[900], text[32];
	snprintf(path, sizeof path, "%s/clock", f->dir);
	int n = snprintf(text, sizeof text, "%llu\n", (unsigned long long)now);
	test_write_file(path, text, (size_t)n, 0644);
}

/* The fixture's configuration: mix with namespace_keys (", key: value" pairs), then tail. */
static struct config *parse_config_with(struct fixture *f, const char *namespace_keys, const char *tail)
{
	char text[4096], provider[NOTE_VERIFIER_KEY_MAX + 1];
	snprintf(provider, sizeof provider, "%s", test_key_verifier_string(&f->provider));
	snprintf(text, sizeof text,
	         "authority: { name: authority1.dirauth.example, signer_socket: signer/signer.sock }\n"
	         "listen: { address: 127.0.0.1, port: 8080 }\n"
	         "data_dir: data\n"
	         "epoch: { length_seconds: %llu, genesis: %llu, validity_epochs: 3 }\n"
	         "clock: { source: file, path: clock }\n"
	         "namespaces:\n"
	         "  - { name: mix, origin: dirauth.example/mix%s }\n"
	         "providers:\n"
	         "  - { key: \"%s\", namespaces: [mix], classes: [mix-gateway] }\n"
	         "operators: [\"%s\"]\n"
	         "%s",
	         LENGTH, GENESIS, namespace_keys, provider, test_key_verifier_string(&f->operator_key), tail);
	struct settings_error error;
	struct config *config = NULL;
	ck_assert_msg(config_parse((const uint8_t *)text, strlen(text), f->dir, &config, &error) == 0,
	              "%zu: %s", error.line, error.message);
	return config;
}

static struct config *parse_config(struct fixture *f, int lifecycle)
{
	return parse_config_with(f, lifecycle ? ", lifecycle: true" : "", "");
}

static void fixture_open(struct fixture *f)
{
	memset(f, 0, sizeof *f);
	test_make_tempdir(f->dir, sizeof f->dir);
	signer_fixture_prepare(&f->signer_process, f->dir, GENESIS + 10 * LENGTH, GENESIS - 86400,
	                       GENESIS + 30 * 86400);
	signer_fixture_start(&f->signer_process);
	test_key_load(TEST_KEY_PROVIDER, &f->provider);
	lifecycle_key_load(LIFECYCLE_KEY_ENDPOINT, &f->endpoint);
	lifecycle_key_load(LIFECYCLE_KEY_OPERATOR, &f->operator_key);
	f->config = parse_config(f, 1);
	f->method1 = parse_config(f, 0);
	ck_assert_int_eq(signer_client_open(f->config->signer_socket, 5000, &f->signer), 0);
	ck_assert_int_eq(clock_open_file(f->config->clock_path, &f->clock), 0);
	write_clock(f, GENESIS + 10 * LENGTH + 1);
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
	config_free(f->method1);
	test_key_free(&f->provider);
	test_key_free(&f->endpoint);
	test_key_free(&f->operator_key);
	test_remove_tree(f->dir);
}

typedef enum api_error (*submit_fn)(const struct submit_context *, const uint8_t *, size_t,
                                    struct submit_result *);

static void submit_expect(struct fixture *f, submit_fn submit, const struct buffer *note,
                          enum api_error expected)
{
	struct submit_context context = {f->config, f->store, f->signer, f->health, f->clock};
	struct submit_result result;
	enum api_error error = submit(&context, note->data, note->len, &result);
	ck_assert_msg(error == expected, "%s: %s", api_error_code(error), result.detail);
	buffer_free(&result.receipt);
}

/* Example registration index at sequence, issued at `at`; its first endpoint names the
 * endpoint key unless without_key. */
static void registration(struct fixture *f, unsigned index, uint64_t sequence, uint64_t at, int without_key,
                         struct registration *r)
{
	test_example_registration(index, "mix", &f->provider, r);
	r->sequence = sequence;
	r->issued_at = at;
	r->expires = at + 3600;
	if (!without_key) {
		r->endpoints[0].has_key = 1;
		r->endpoints[0].key = f->endpoint.verifier;
	}
	struct buffer note;
	buffer_init(&note);
	test_sign_registration(r, &f->provider, &note);
	submit_expect(f, submit_registration, &note, API_ERROR_NONE);
	buffer_free(&note);
}

static void health(struct fixture *f, const struct registration *r, size_t e, enum health_signer signer,
                   enum health_class c, uint64_t at, uint64_t sequence)
{
	struct health_statement s;
	struct buffer note;
	lifecycle_statement(r, e, signer, c, 0, sequence, &s);
	s.issued_at = at;
	buffer_init(&note);
	lifecycle_sign_statement(&s, signer == HEALTH_SIGNER_ENDPOINT ? &f->endpoint : &f->provider, &note);
	submit_expect(f, submit_health, &note, API_ERROR_NONE);
	buffer_free(&note);
}

static void revoke(struct fixture *f, const struct registration *r, int e, int by_operator, uint64_t sequence)
{
	struct revocation v;
	struct buffer note;
	const struct test_key *key = by_operator ? &f->operator_key : &f->provider;
	lifecycle_revocation(r, e, by_operator ? REVOCATION_SIGNER_OPERATOR : REVOCATION_SIGNER_PROVIDER, key,
	                     REVOCATION_RETIRED, 0, sequence, &v);
	buffer_init(&note);
	lifecycle_sign_revocation(&v, key, &note);
	submit_expect(f, submit_revocation, &note, API_ERROR_NONE);
	buffer_free(&note);
}

static void deregister(struct fixture *f, const struct registration *r, uint64_t at)
{
	struct deregistration d;
	struct buffer text, note;
	memset(&d, 0, sizeof d);
	strcpy(d.namespace_name, "mix");
	memcpy(d.service_id, r->service_id, SERVICE_ID_SIZE);
	d.provider = f->provider.verifier;
	d.sequence = r->sequence;
	d.requested_at = at;
	buffer_init(&text);
	buffer_init(&note);
	ck_assert_int_eq(deregistration_encode(&d, &text), 0);
	test_key_sign_note(&f->provider, 1, text.data, text.len, &note);
	submit_expect(f, submit_deregistration, &note, API_ERROR_NONE);
	buffer_free(&text);
	buffer_free(&note);
}

static void read_body(struct fixture *f, uint64_t epoch, struct buffer *out)
{
	int fd;
	uint64_t size;
	buffer_init(out);
	ck_assert_int_eq(store_body_open(f->store, "mix", epoch, ENCODING_IDENTITY, &fd, &size), 0);
	ck_assert_int_eq(buffer_reserve(out, (size_t)size + 1), 0);
	ck_assert_int_eq(read(fd, out->data, (size_t)size + 1), (ssize_t)size);
	out->len = (size_t)size;
	close(fd);
}

/* The notes the consensus asks for, read from the store and kept until it returns. */
struct note_source {
	struct store *store;
	struct buffer *notes;
	size_t count, cap;
};

static int keep(struct note_source *s, int rc, const uint8_t **note, size_t *note_len)
{
	if (rc)
		return rc;
	*note = s->notes[s->count - 1].data;
	*note_len = s->notes[s->count - 1].len;
	return 0;
}

static struct buffer *next_buffer(struct note_source *s)
{
	if (s->count == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 256;
		s->notes = realloc(s->notes, s->cap * sizeof *s->notes);
		ck_assert_ptr_nonnull(s->notes);
	}
	buffer_init(&s->notes[s->count]);
	return &s->notes[s->count++];
}

static int supply_registration(void *context, const uint8_t service_id[SERVICE_ID_SIZE], uint64_t sequence,
                               const uint8_t digest[32], const uint8_t **note, size_t *note_len)
{
	(void)digest;
	struct note_source *s = context;
	return keep(s, store_registration_get(s->store, "mix", service_id, sequence, next_buffer(s)), note,
	            note_len);
}

static int supply_health(void *context, const uint8_t service_id[SERVICE_ID_SIZE],
                         const uint8_t endpoint_id[ENDPOINT_ID_SIZE], uint64_t issued_at, uint64_t sequence,
                         const uint8_t digest[32], const uint8_t **note, size_t *note_len)
{
	(void)service_id, (void)endpoint_id, (void)issued_at, (void)sequence;
	struct note_source *s = context;
	return keep(s, store_statement_get(s->store, "mix", digest, next_buffer(s)), note, note_len);
}

static int supply_revocation(void *context, const uint8_t service_id[SERVICE_ID_SIZE],
                             const uint8_t *endpoint_id, const uint8_t digest[32], const uint8_t **note,
                             size_t *note_len)
{
	(void)service_id, (void)endpoint_id;
	struct note_source *s = context;
	return keep(s, store_statement_get(s->store, "mix", digest, next_buffer(s)), note, note_len);
}

/* The previous stored snapshot before publishing epoch: header text and (when method 2) body. */
struct previous {
	int have;
	uint64_t epoch;
	uint8_t digest[32];
	struct buffer text, body;
	struct snapshot_body *parsed;
};

static void previous_load(struct fixture *f, struct previous *p)
{
	memset(p, 0, sizeof *p);
	buffer_init(&p->text);
	buffer_init(&p->body);
	ck_assert_int_eq(publish_latest_digest(f->store, "mix", &p->have, &p->epoch, p->digest), 0);
	if (!p->have)
		return;
	struct buffer header;
	struct note *note = NULL;
	struct snapshot_header h;
	buffer_init(&header);
	ck_assert_int_eq(store_snapshot_get(f->store, "mix", p->epoch, &header, NULL), 0);
	ck_assert_int_eq(note_parse(header.data, header.len, &note), 0);
	ck_assert_int_eq(buffer_append(&p->text, note->text, note->text_len), 0);
	ck_assert_int_eq(snapshot_header_parse(note->text, note->text_len, &h), 0);
	note_free(note);
	buffer_free(&header);
	if (h.consensus_method != 2)
		return;
	buffer_free(&p->body);
	read_body(f, p->epoch, &p->body);
	struct snapshot_body_limits limits = {100000, 100000, 1000};
	ck_assert_int_eq(snapshot_body_parse_sections(p->body.data, p->body.len, &limits, &p->parsed), 0);
}

static void previous_free(struct previous *p)
{
	snapshot_body_free(p->parsed);
	buffer_free(&p->text);
	buffer_free(&p->body);
}

/* Publishes epoch (at its start) and compares it with the consensus of this authority's vote.
 * Returns the published body's parsed sections' counts through the pointers. */
static void publish_and_compare(struct fixture *f, const struct config *config, uint64_t epoch,
                                size_t *records, size_t *health_entries, size_t *revocations)
{
	const struct config_namespace *ns = &config->namespaces[0];
	struct previous previous;
	previous_load(f, &previous);
	write_clock(f, GENESIS + epoch * LENGTH + 2);
	struct publication p;
	char why[SIGNER_DETAIL_MAX + 1];
	int rc = publish_snapshot(config, f->store, f->signer, 0, epoch, &p, why, sizeof why);
	ck_assert_msg(rc == 0, "publish %llu: %s %s", (unsigned long long)epoch, dirauth_strerror(rc), why);

	/* The vote, as the round would build it from the sealed views. */
	struct epoch_times times;
	ck_assert_int_eq(schedule_epoch_times(&config->epoch, epoch, &times), 0);
	struct vote_body vote_lines;
	merkle_hash records_root;
	ck_assert_int_eq(publish_vote_body(config, f->store, 0, epoch, times.valid_after, ns->lifecycle,
	                                   previous.parsed, &vote_lines, records_root),
	                 0);
	struct buffer body_text;
	buffer_init(&body_text);
	ck_assert_int_eq(vote_body_encode(&vote_lines, &body_text), 0);
	struct vote vote;
	memset(&vote, 0, sizeof vote);
	snprintf(vote.namespace_name, sizeof vote.namespace_name, "mix");
	snprintf(vote.origin, sizeof vote.origin, "%s", ns->origin);
	snprintf(vote.authority, sizeof vote.authority, "%s", config->authority_name);
	vote.epoch = epoch;
	vote.record_count = vote_lines.record_count;
	memcpy(vote.records_root, records_root, sizeof vote.records_root);
	ck_assert_int_eq(crypto_sha256(body_text.data, body_text.len, vote.body_sha256), 0);
	vote.previous_epoch = previous.have ? previous.epoch : 0;
	memcpy(vote.previous, previous.digest, 32);
	vote.method_count = ns->lifecycle ? 2 : 1;
	vote.methods[0] = 1;
	vote.methods[1] = 2;
	struct vote_body_limits limits = {config->bounds.records_per_snapshot, config_max_health(config),
	                                  ns->max_revocations};
	struct vote_body *loaded = NULL;
	ck_assert_int_eq(
	    consensus_vote_body_load_sections(&vote, body_text.data, body_text.len, &limits, &loaded), 0);
	struct consensus_vote input;
	consensus_vote_init(&input, &vote, loaded);

	struct note_source source = {.store = f->store};
	struct consensus_lifecycle lifecycle = {
	    .freshness_seconds = ns->health_freshness_epochs * config->epoch.length,
	    .revocation_epochs = ns->revocation_epochs,
	    .max_health = config_max_health(config),
	    .max_revocations = ns->max_revocations,
	    .previous_header = previous.have ? previous.text.data : NULL,
	    .previous_header_len = previous.text.len,
	    .previous_body = previous.parsed ? previous.body.data : NULL,
	    .previous_body_len = previous.body.len,
	    .health = supply_health,
	    .revocation = supply_revocation,
	    .context = &source,
	};
	struct consensus_params params = {
	    .namespace_name = "mix",
	    .origin = ns->origin,
	    .epoch = epoch,
	    .times = times,
	    .threshold = 1,
	    .authorities = 1,
	    .max_records = config->bounds.records_per_snapshot,
	    .max_body_bytes = config->bounds.snapshot_body_uncompressed,
	    .lifecycle = ns->lifecycle ? &lifecycle : NULL,
	};
	struct consensus_result result;
	struct consensus_failure failure;
	memset(&result, 0, sizeof result);
	rc = consensus_compute(&params, &input, 1, supply_registration, &source, &result, &failure);
	char describe[512];
	consensus_failure_describe(&failure, describe, sizeof describe);
	ck_assert_msg(rc == 0, "consensus of epoch %llu: %s", (unsigned long long)epoch, describe);
	ck_assert_uint_eq(result.method, ns->lifecycle ? 2 : 1);

	/* Byte for byte: the header text the signer signed, and the stored body. */
	struct note *header_note = NULL;
	ck_assert_int_eq(note_parse(p.header_note.data, p.header_note.len, &header_note), 0);
	ck_assert_uint_eq(header_note->text_len, result.header_text.len);
	ck_assert_mem_eq(header_note->text, result.header_text.data, result.header_text.len);
	struct buffer stored;
	read_body(f, epoch, &stored);
	ck_assert_uint_eq(stored.len, result.body.len);
	ck_assert_mem_eq(stored.data, result.body.data, result.body.len);
	*records = result.record_count;
	*health_entries = result.health_count;
	*revocations = result.revocation_count;

	note_free(header_note);
	buffer_free(&stored);
	consensus_result_clear(&result);
	for (size_t i = 0; i < source.count; i++)
		buffer_free(&source.notes[i]);
	free(source.notes);
	vote_body_free(loaded);
	publish_vote_body_clear(&vote_lines);
	buffer_free(&body_text);
	publication_clear(&p);
	previous_free(&previous);
}

START_TEST(test_one_vote_consensus)
{
	struct fixture f;
	size_t records, health_entries, revocations;
	fixture_open(&f);
	uint64_t at = GENESIS + 10 * LENGTH + 1;
	struct registration r1, r2, r3, r4, r5;
	registration(&f, 1, 1, at, 0, &r1);
	registration(&f, 2, 1, at, 0, &r2);
	registration(&f, 3, 1, at, 0, &r3);
	registration(&f, 4, 1, at, 0, &r4);
	registration(&f, 5, 1, at, 0, &r5);

	/* Epoch 10, published while the namespace was method 1. */
	publish_and_compare(&f, f.method1, 10, &records, &health_entries, &revocations);
	ck_assert_uint_eq(records, 0); /* the registrations were promised epoch 11 */
	ck_assert_uint_eq(health_entries, 0);
	ck_assert_uint_eq(revocations, 0);

	/* Health: by the endpoint's key and by the provider, one soon stale; the third service's
	 * endpoint key dropped by a newer registration (its statement no longer verifies). */
	at = GENESIS + 10 * LENGTH + 5;
	write_clock(&f, at);
	health(&f, &r1, 0, HEALTH_SIGNER_ENDPOINT, HEALTH_DRAINING, at, 1);
	health(&f, &r1, 1, HEALTH_SIGNER_PROVIDER, HEALTH_HEALTHY, at, 1);
	health(&f, &r2, 2, HEALTH_SIGNER_PROVIDER, HEALTH_DEGRADED, at, 1);
	health(&f, &r3, 0, HEALTH_SIGNER_ENDPOINT, HEALTH_HEALTHY, at, 1);
	registration_clear(&r3);
	registration(&f, 3, 2, at, 1, &r3);
	/* Revocations: an endpoint of the second service by its provider, the whole fourth by an
	 * operator; the fifth service deregistered. */
	revoke(&f, &r2, 0, 0, 1);
	revoke(&f, &r4, -1, 1, 1);
	deregister(&f, &r5, at);

	/* The first method-2 epoch, after a method-1 snapshot. */
	publish_and_compare(&f, f.config, 11, &records, &health_entries, &revocations);
	ck_assert_uint_eq(records, 2); /* 1 and 3 */
	ck_assert_uint_eq(health_entries, 2);
	ck_assert_uint_eq(revocations, 2);

	/* A new revocation beside the carried ones; fresher health. */
	at = GENESIS + 11 * LENGTH + 5;
	write_clock(&f, at);
	revoke(&f, &r1, 1, 0, 2);
	health(&f, &r3, 1, HEALTH_SIGNER_PROVIDER, HEALTH_UNAVAILABLE, at, 1);
	publish_and_compare(&f, f.config, 12, &records, &health_entries, &revocations);
	ck_assert_uint_eq(records, 1); /* 3: the first lost an endpoint */
	ck_assert_uint_eq(health_entries, 1);
	ck_assert_uint_eq(revocations, 3);

	/* Epoch 14: the revocations first listed in 11 are over (revocation_epochs 3), the one of 12
	 * is carried; the third service's health is stale by now. */
	publish_and_compare(&f, f.config, 14, &records, &health_entries, &revocations);
	ck_assert_uint_eq(records, 1);
	ck_assert_uint_eq(health_entries, 0);
	ck_assert_uint_eq(revocations, 1);
	publish_and_compare(&f, f.config, 15, &records, &health_entries, &revocations);
	ck_assert_uint_eq(revocations, 0);
	/* The namespace back to method 1: its records, without the sections. */
	publish_and_compare(&f, f.method1, 16, &records, &health_entries, &revocations);
	ck_assert_uint_eq(records, 1);
	ck_assert_uint_eq(health_entries, 0);
	ck_assert_uint_eq(revocations, 0);

	registration_clear(&r1);
	registration_clear(&r2);
	registration_clear(&r3);
	registration_clear(&r4);
	registration_clear(&r5);
	fixture_close(&f);
}
END_TEST

/* What an authority takes from its peers in a round of several (server/intake/statements.h): a
 * health statement older than the clock skew (a provider's would be refused), never one from the
 * future, a lower sequence or a wrong signer; a revocation judged without being stored, then
 * stored. */
START_TEST(test_statements_from_peers)
{
	struct fixture f;
	fixture_open(&f);
	uint64_t at = GENESIS + 10 * LENGTH + 1;
	struct registration r;
	registration(&f, 1, 1, at, 0, &r);
	uint64_t now = at + 600;
	write_clock(&f, now);
	uint64_t skew = f.config->bounds.clock_skew_seconds;

	struct health_statement s;
	struct buffer old, lower, future, wrong;
	lifecycle_statement(&r, 0, HEALTH_SIGNER_PROVIDER, HEALTH_DRAINING, 0, 2, &s);
	s.issued_at = at;
	buffer_init(&old);
	lifecycle_sign_statement(&s, &f.provider, &old);
	submit_expect(&f, submit_health, &old, API_ERROR_OUTSIDE_CLOCK_SKEW);
	submit_expect(&f, submit_peer_health, &old, API_ERROR_NONE);
	submit_expect(&f, submit_peer_health, &old, API_ERROR_REPLAYED);
	s.issued_at = now;
	s.sequence = 1;
	buffer_init(&lower);
	lifecycle_sign_statement(&s, &f.provider, &lower);
	submit_expect(&f, submit_peer_health, &lower, API_ERROR_REPLAYED);
	s.issued_at = now + skew + 60;
	s.sequence = 3;
	buffer_init(&future);
	lifecycle_sign_statement(&s, &f.provider, &future);
	submit_expect(&f, submit_peer_health, &future, API_ERROR_OUTSIDE_CLOCK_SKEW);
	s.issued_at = now;
	buffer_init(&wrong);
	lifecycle_sign_statement(&s, &f.operator_key, &wrong);
	submit_expect(&f, submit_peer_health, &wrong, API_ERROR_WRONG_SIGNER);

	/* A revocation of the first endpoint: judged, not stored; by a key that is no operator's,
	 * refused; then stored. */
	struct revocation v;
	struct buffer revocation, stranger;
	lifecycle_revocation(&r, 0, REVOCATION_SIGNER_PROVIDER, &f.provider, REVOCATION_RETIRED, 0, 1, &v);
	buffer_init(&revocation);
	lifecycle_sign_revocation(&v, &f.provider, &revocation);
	submit_expect(&f, submit_check_peer_revocation, &revocation, API_ERROR_NONE);
	ck_assert_int_eq(
	    store_revocation_find(f.store, "mix", r.service_id, r.endpoints[0].endpoint_id, NULL),
	    DIRAUTH_ERR_NOT_FOUND);
	lifecycle_revocation(&r, 0, REVOCATION_SIGNER_OPERATOR, &f.endpoint, REVOCATION_RETIRED, 0, 1, &v);
	buffer_init(&stranger);
	lifecycle_sign_revocation(&v, &f.endpoint, &stranger);
	submit_expect(&f, submit_check_peer_revocation, &stranger, API_ERROR_WRONG_SIGNER);
	submit_expect(&f, submit_peer_revocation, &revocation, API_ERROR_NONE);
	ck_assert_int_eq(
	    store_revocation_find(f.store, "mix", r.service_id, r.endpoints[0].endpoint_id, NULL), 0);

	buffer_free(&old);
	buffer_free(&lower);
	buffer_free(&future);
	buffer_free(&wrong);
	buffer_free(&revocation);
	buffer_free(&stranger);
	registration_clear(&r);
	fixture_close(&f);
}
END_TEST

/* A namespace filled to its bound keeps every receipt's promise with a fresh health statement on
 * every endpoint: the room of a health entry is counted per endpoint when a registration is
 * taken, so the body the promised epoch publishes fits its bound, and the registration that
 * would have left no room is refused (namespace_full), nothing stored. */
START_TEST(test_full_namespace_publishes_with_its_health)
{
	struct fixture f;
	fixture_open(&f);
	config_free(f.config);
	const size_t body_bound = 24576;
	char bounds[256];
	snprintf(bounds, sizeof bounds,
	         "bounds: { registration_body: 4096, endpoints_per_service: 3, "
	         "snapshot_body_uncompressed: %zu, snapshot_body_compressed: 65536 }\n",
	         body_bound);
	f.config = parse_config_with(&f, ", lifecycle: true, max_revocations: 2", bounds);
	uint64_t at = GENESIS + 10 * LENGTH + 1;
	struct registration r[40];
	size_t accepted = 0;
	struct submit_context context = {f.config, f.store, f.signer, f.health, f.clock};
	for (unsigned i = 0; i < 40; i++) {
		test_example_registration(i + 1, "mix", &f.provider, &r[i]);
		r[i].issued_at = at;
		r[i].expires = at + 3600;
		struct buffer note;
		struct submit_result result;
		buffer_init(&note);
		test_sign_registration(&r[i], &f.provider, &note);
		enum api_error error = submit_registration(&context, note.data, note.len, &result);
		buffer_free(&note);
		buffer_free(&result.receipt);
		if (error == API_ERROR_NONE) {
			ck_assert_uint_eq(accepted, i); /* none accepted after a refusal */
			accepted++;
		} else {
			ck_assert_msg(error == API_ERROR_NAMESPACE_FULL, "%s", api_error_code(error));
			ck_assert_int_eq(store_service_sequence(f.store, r[i].service_id, &(uint64_t){0}),
			                 DIRAUTH_ERR_NOT_FOUND);
		}
	}
	ck_assert_uint_gt(accepted, 1);
	ck_assert_uint_lt(accepted, 40);

	at = GENESIS + 10 * LENGTH + 5;
	write_clock(&f, at);
	for (size_t i = 0; i < accepted; i++)
		for (size_t e = 0; e < r[i].endpoint_count; e++)
			health(&f, &r[i], e, HEALTH_SIGNER_PROVIDER, HEALTH_HEALTHY, at, 1);

	struct publication p;
	write_clock(&f, GENESIS + 11 * LENGTH + 1);
	ck_assert_int_eq(publish_snapshot(f.config, f.store, f.signer, 0, 11, &p, NULL, 0), 0);
	ck_assert_uint_eq(p.header.record_count, accepted);
	ck_assert_uint_le(p.header.body_size, body_bound);
	publication_clear(&p);
	struct buffer body;
	read_body(&f, 11, &body);
	struct snapshot_body_limits limits = {16, 64, 2};
	struct snapshot_body *parsed = NULL;
	ck_assert_int_eq(snapshot_body_parse_sections(body.data, body.len, &limits, &parsed), 0);
	ck_assert_uint_eq(parsed->health_count, 3 * accepted);
	snapshot_body_free(parsed);
	buffer_free(&body);
	for (unsigned i = 0; i < 40; i++)
		registration_clear(&r[i]);
	fixture_close(&f);
}
END_TEST

/* More records than a page of the lines the publication reads again from the sealed view (1,024):
 * the pages follow one another, method 2's two walks read them twice, and a service revoked whole,
 * an endpoint revoked and a deregistration fall on pages other than the first. */
START_TEST(test_records_over_several_pages)
{
	enum { SERVICES = 2100 };
	struct fixture f;
	size_t records, health_entries, revocations;
	fixture_open(&f);
	uint64_t at = GENESIS + 10 * LENGTH + 1;
	struct registration *r = calloc(SERVICES, sizeof *r);
	ck_assert_ptr_nonnull(r);
	for (unsigned i = 0; i < SERVICES; i++)
		registration(&f, i + 1, 1, at, i % 7 == 0, &r[i]);
	publish_and_compare(&f, f.method1, 10, &records, &health_entries, &revocations);
	ck_assert_uint_eq(records, 0); /* the registrations were promised epoch 11 */
	publish_and_compare(&f, f.method1, 11, &records, &health_entries, &revocations);
	ck_assert_uint_eq(records, SERVICES);

	at = GENESIS + 11 * LENGTH + 5;
	write_clock(&f, at);
	for (unsigned i = 0; i < SERVICES; i += 97)
		health(&f, &r[i], 0, HEALTH_SIGNER_PROVIDER, HEALTH_HEALTHY, at, 1);
	revoke(&f, &r[1500], 0, 0, 1);
	revoke(&f, &r[2090], -1, 1, 1);
	deregister(&f, &r[1100], at);
	publish_and_compare(&f, f.config, 12, &records, &health_entries, &revocations);
	ck_assert_uint_eq(records, SERVICES - 3);
	ck_assert_uint_eq(revocations, 2);
	ck_assert_uint_ge(health_entries, SERVICES / 97 - 2);
	publish_and_compare(&f, f.config, 13, &records, &health_entries, &revocations);
	ck_assert_uint_eq(records, SERVICES - 3);
	for (unsigned i = 0; i < SERVICES; i++)
		registration_clear(&r[i]);
	free(r);
	fixture_close(&f);
}
END_TEST

static Suite *publish_consensus_suite(void)
{
	Suite *suite = suite_create("publish_consensus");
	TCase *tc = tcase_create("publish_consensus");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_one_vote_consensus);
	tcase_add_test(tc, test_statements_from_peers);
	tcase_add_test(tc, test_full_namespace_publishes_with_its_health);
	tcase_add_test(tc, test_records_over_several_pages);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(publish_consensus_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
