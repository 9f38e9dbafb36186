/*
 * check_deploy_examples.c: every example configuration of several authorities loads, and the
 * files of one deployment agree with each other as the authorities and mirrors need them to.
 *
 * The deployments are deploy/examples/three-authorities (k = 2) and five-authorities (k = 3), and
 * the demo's keys-example/three-authorities (k = 2). For each authority of each, dirauthd.yaml is
 * read with config_load and dirauth-signer.yaml with signer_config_load (what --check-config reads
 * before it opens keys or the signer's socket, which an example does not ship). Then:
 *   - dirauthd.yaml names this authority, a set of n members with threshold k, and is the same as
 *     the first authority's in everything but its name: members (name, identity key, URL), epoch
 *     schedule, namespaces, providers, clock skew bound;
 *   - dirauth-signer.yaml signs as the same authority, on dirauthd's signer socket, for the same
 *     namespaces with the same schedule (prepare_seconds included) and skew bound;
 *   - the deployment's trust-bundle.txt parses, pins exactly the members' identity keys in order
 *     with threshold k, and lists the same namespaces and origins;
 *   - the production examples listen on loopback (TLS is the proxy's), name https peers, and their
 *     windows hold the default bound of records between members 250 ms apart on links of 100
 *     Mbit/s, by the rules and figures of docs/operating.md, "Sizing the windows".
 */
#include "schema/note.h"
#include "schema/trust_bundle.h"
#include "server/config/config.h"
#include "signer/signer_config.h"
#include "test_support.h"

#include <check.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct deployment {
	const char *dir; /* relative to the source tree */
	const char *const *authorities;
	size_t n;
	size_t k;
	int production;
};

static const char *const three[] = {"ams", "fra", "nyc"};
static const char *const five[] = {"ams", "fra", "nyc", "sgp", "tyo"};
static const char *const demo[] = {"authority1", "authority2", "authority3"};

static const struct deployment deployments[] = {
    {"deploy/examples/three-authorities", three, 3, 2, 1},
    {"deploy/examples/five-authorities", five, 5, 3, 1},
    {"keys-example/three-authorities", demo, 3, 2, 0},
};

static struct config *load_dirauthd(const struct deployment *d, size_t i)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s/dirauthd.yaml", d->dir, d->authorities[i]);
	struct config *config = NULL;
	struct settings_error error;
	int rc = config_load(test_source_path(path), &config, &error);
	ck_assert_msg(rc == 0, "%s:%zu: %s", path, error.line, error.message);
	return config;
}

static struct signer_config *load_signer(const struct deployment *d, size_t i)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s/dirauth-signer.yaml", d->dir, d->authorities[i]);
	struct signer_config *config = NULL;
	struct settings_error error;
	int rc = signer_config_load(test_source_path(path), &config, &error);
	ck_assert_msg(rc == 0, "%s:%zu: %s", path, error.line, error.message);
	return config;
}

static void same_schedule(const char *what, const struct epoch_schedule *a, const struct epoch_schedule *b)
{
	ck_assert_msg(a->genesis == b->genesis && a->length == b->length &&
	                  a->validity_epochs == b->validity_epochs && a->prepare == b->prepare,
	              "%s: another epoch schedule", what);
}

/* What a production example must hold (docs/operating.md, "Sizing the windows"): the default
 * bound of records, the farthest member a round trip of 250 ms away, links of 100 Mbit/s, and the
 * local work measured at that bound on the development machine (bench/README.md), rounded up. */
#define SIZING_RECORDS         1000000.0
#define SIZING_ROUND_TRIP_S    0.25
#define SIZING_LINK_BITS_PER_S 100e6
#define SIZING_BODY_ZSTD_BYTES 207.0 /* a record's share of the zstd body */
#define SIZING_VOTE_BUILD_S    28.0
#define SIZING_CONSENSUS_S     44.0
#define SIZING_PUBLICATION_S   50.0

/* The five rules of sizing, each with what it needs and what the example gives. */
static void check_sizing(const struct deployment *d, const char *who, const struct config *c)
{
	const struct epoch_schedule *e = &c->epoch;
	double timeout = c->peers.timeout_seconds;
	double body = SIZING_RECORDS * SIZING_BODY_ZSTD_BYTES * 8 / SIZING_LINK_BITS_PER_S;
	ck_assert_msg(c->bounds.records_per_snapshot <= SIZING_RECORDS,
	              "%s/%s: the examples are sized for %.0f records at most", d->dir, who, SIZING_RECORDS);
	ck_assert_msg(timeout >= body + 3 * SIZING_ROUND_TRIP_S,
	              "%s/%s: timeout_seconds %.0f cannot hold a body of %.0f records (%.1f s) on a new "
	              "connection",
	              d->dir, who, timeout, SIZING_RECORDS, body);
	ck_assert_msg(e->vote >= SIZING_VOTE_BUILD_S + timeout,
	              "%s/%s: vote_seconds %llu cannot hold the vote's build (%.0f s) and its push (%.0f s)",
	              d->dir, who, (unsigned long long)e->vote, SIZING_VOTE_BUILD_S, timeout);
	ck_assert_msg(e->signature >= 3 * timeout + SIZING_CONSENSUS_S,
	              "%s/%s: signature_seconds %llu cannot hold three requests (%.0f s) and the consensus "
	              "(%.0f s)",
	              d->dir, who, (unsigned long long)e->signature, 3 * timeout, SIZING_CONSENSUS_S);
	ck_assert_msg(e->prepare - e->vote - e->signature >= timeout,
	              "%s/%s: no %.0f s left in prepare_seconds to pull the signatures", d->dir, who,
	              timeout);
	ck_assert_msg(e->length - e->prepare >= 2 * SIZING_PUBLICATION_S,
	              "%s/%s: %llu s between the start and the next vote; the publication takes %.0f s",
	              d->dir, who, (unsigned long long)(e->length - e->prepare), SIZING_PUBLICATION_S);
}

/* dirauthd.yaml of authority i against the first authority's. */
static void check_dirauthd(const struct deployment *d, size_t i, const struct config *c,
                           const struct config *first)
{
	const char *who = d->authorities[i];
	ck_assert_msg(strncmp(c->authority_name, who, strlen(who)) == 0 &&
	                  c->authority_name[strlen(who)] == '.',
	              "%s/%s: authority.name is %s", d->dir, who, c->authority_name);
	ck_assert_uint_eq(c->member_count, d->n);
	ck_assert_uint_eq(c->threshold, d->k);
	ck_assert_uint_eq(c->self_index, i);
	ck_assert_msg(c->epoch.prepare > 0 && c->epoch.vote > 0 && c->epoch.signature > 0,
	              "%s/%s: the epoch's phases are not set", d->dir, who);
	for (size_t j = 0; j < d->n; j++) {
		ck_assert_str_eq(c->members[j].name, first->members[j].name);
		ck_assert_msg(note_verifier_equal(&c->members[j].identity, &first->members[j].identity),
		              "%s/%s: member %s has another identity key", d->dir, who, c->members[j].name);
		ck_assert_str_eq(c->members[j].url, first->members[j].url);
		if (d->production)
			ck_assert_msg(strncmp(c->members[j].url, "https://", 8) == 0,
			              "%s/%s: %s is not https", d->dir, who, c->members[j].url);
	}
	ck_assert_msg(memcmp(&c->epoch, &first->epoch, sizeof c->epoch) == 0, "%s/%s: another epoch", d->dir,
	              who);
	ck_assert_uint_eq(c->namespace_count, first->namespace_count);
	for (size_t n = 0; n < c->namespace_count; n++) {
		ck_assert_str_eq(c->namespaces[n].name, first->namespaces[n].name);
		ck_assert_str_eq(c->namespaces[n].origin, first->namespaces[n].origin);
	}
	ck_assert_uint_eq(c->provider_count, first->provider_count);
	for (size_t p = 0; p < c->provider_count; p++)
		ck_assert(note_verifier_equal(&c->providers[p].key, &first->providers[p].key));
	ck_assert_uint_eq(c->bounds.clock_skew_seconds, first->bounds.clock_skew_seconds);
	if (d->production) {
		ck_assert_str_eq(c->listen_address, "127.0.0.1");
		check_sizing(d, who, c);
	}
}

/* dirauth-signer.yaml of authority i against its dirauthd.yaml. */
static void check_signer(const struct deployment *d, size_t i, const struct signer_config *s,
                         const struct config *c)
{
	char what[256];
	snprintf(what, sizeof what, "%s/%s/dirauth-signer.yaml", d->dir, d->authorities[i]);
	ck_assert_str_eq(s->authority, c->authority_name);
	ck_assert_str_eq(s->socket_path, c->signer_socket);
	ck_assert_uint_eq(s->clock_skew_seconds, c->bounds.clock_skew_seconds);
	ck_assert_uint_eq(s->namespace_count, c->namespace_count);
	for (size_t n = 0; n < s->namespace_count; n++) {
		ck_assert_str_eq(s->namespaces[n].name, c->namespaces[n].name);
		ck_assert_str_eq(s->namespaces[n].origin, c->namespaces[n].origin);
		same_schedule(what, &s->namespaces[n].schedule, &c->epoch);
	}
}

static void check_trust_bundle(const struct deployment *d, const struct config *c)
{
	char path[512];
	snprintf(path, sizeof path, "%s/trust-bundle.txt", d->dir);
	size_t len = 0, line = 0;
	uint8_t *text = test_read_file(test_source_path(path), &len);
	struct trust_bundle *bundle = calloc(1, sizeof *bundle);
	ck_assert_ptr_nonnull(bundle);
	int rc = trust_bundle_parse(text, len, bundle, &line);
	ck_assert_msg(rc == 0, "%s:%zu does not parse", path, line);
	ck_assert_uint_eq(bundle->threshold, d->k);
	ck_assert_uint_eq(bundle->authority_count, d->n);
	for (size_t j = 0; j < d->n; j++)
		ck_assert_msg(note_verifier_equal(&bundle->authorities[j], &c->members[j].identity),
		              "%s: authority line %zu is not %s's identity key", path, j + 1,
		              c->members[j].name);
	ck_assert_uint_eq(bundle->namespace_count, c->namespace_count);
	for (size_t n = 0; n < c->namespace_count; n++) {
		ck_assert_str_eq(bundle->namespaces[n].name, c->namespaces[n].name);
		ck_assert_str_eq(bundle->namespaces[n].origin, c->namespaces[n].origin);
	}
	free(bundle);
	free(text);
}

START_TEST(test_deployment)
{
	const struct deployment *d = &deployments[_i];
	struct config *first = load_dirauthd(d, 0);
	for (size_t i = 0; i < d->n; i++) {
		struct config *c = i == 0 ? first : load_dirauthd(d, i);
		struct signer_config *s = load_signer(d, i);
		check_dirauthd(d, i, c, first);
		check_signer(d, i, s, c);
		signer_config_free(s);
		if (c != first)
			config_free(c);
	}
	check_trust_bundle(d, first);
	config_free(first);
}
END_TEST

static Suite *deploy_examples_suite(void)
{
	Suite *suite = suite_create("deploy_examples");
	TCase *tc = tcase_create("deploy_examples");
	tcase_add_loop_test(tc, test_deployment, 0, (int)(sizeof deployments / sizeof deployments[0]));
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(deploy_examples_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
