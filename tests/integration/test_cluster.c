/*
 * test_cluster.c: the cluster harness (tests/harness/cluster.h) with the code as it is.
 *
 * Three authorities, each its own dirauthd and dirauth-signer with its own keys, data, clock and
 * configuration of the one authority set, come up and answer GET /v1/health, directly and
 * through the fault proxy of every directed link (so a peer URL in each configuration really
 * reaches that peer); their signers serve certificates that their identity keys issued; the
 * trust bundle lists the three identity keys and k. One authority is killed with SIGKILL: it
 * stops answering, directly and through its links, while the others go on; restarted on the same
 * data, it answers again through every link; a cut link stops reaching it. Then everything
 * stops, and the run directory is gone. Then three authorities co-sign two epochs. About 15 s.
 */
#include "test_support.h"

#include "schema/certificate.h"
#include "base/error.h"
#include "schema/note.h"
#include "schema/snapshot.h"
#include "schema/trust_bundle.h"
#include "tests/harness/cluster.h"

#include <check.h>
#include <curl/curl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* GET /v1/health of `to` through the proxy of the link from → to. */
static long health_through(struct cluster *c, size_t from, size_t to)
{
	char url[128];
	snprintf(url, sizeof url, "http://127.0.0.1:%u/v1/health",
	         faultproxy_port(cluster_link(c, from, to)));
	struct cluster_response response;
	long status = cluster_http(url, NULL, 0, NULL, 3000, &response);
	cluster_response_free(&response);
	return status;
}

static long health(struct cluster *c, size_t i)
{
	struct cluster_response response;
	long status = cluster_get(c, i, "/v1/health", &response);
	if (status == 200)
		ck_assert(strstr((const char *)response.body.data, "\"ok\"") != NULL);
	cluster_response_free(&response);
	return status;
}

/* Every authority's configuration names every member, its own URL directly and each peer's as
 * its link's proxy. */
static void check_configuration(struct cluster *c, size_t i)
{
	uint8_t *config = test_read_file(cluster_config_path(c, i), NULL);
	for (size_t j = 0; j < cluster_size(c); j++) {
		char url[64], identity[NOTE_VERIFIER_KEY_MAX + 1];
		if (i == j)
			snprintf(url, sizeof url, "url: \"%s\"", cluster_url(c, j));
		else
			snprintf(url, sizeof url, "url: \"http://127.0.0.1:%u\"",
			         faultproxy_port(cluster_link(c, i, j)));
		note_verifier_format(cluster_identity(c, j), identity);
		ck_assert_msg(strstr((const char *)config, url) != NULL, "%s lacks %s",
		              cluster_config_path(c, i), url);
		ck_assert(strstr((const char *)config, identity) != NULL);
	}
	ck_assert(strstr((const char *)config, "threshold: 2") != NULL);
	free(config);
}

START_TEST(test_three_authorities_start_die_restart_and_stop)
{
	struct cluster_options options = {.authorities = 3, .threshold = 2};
	struct cluster *c = cluster_start(&options);
	char dir[256];
	snprintf(dir, sizeof dir, "%s", cluster_dir(c));

	for (size_t i = 0; i < 3; i++) {
		ck_assert(cluster_running(c, i));
		ck_assert_int_eq(health(c, i), 200);
		for (size_t j = 0; j < 3; j++)
			if (i != j)
				ck_assert_int_eq(health_through(c, i, j), 200);
		check_configuration(c, i);
		/* Each signer serves the certificate its own identity key issued for its signing key. */
		struct cluster_response response;
		ck_assert_int_eq(cluster_get(c, i, "/v1/certificates", &response), 200);
		struct certificate_keyring ring;
		size_t added = 0;
		ck_assert_int_eq(certificate_keyring_init(&ring, cluster_identity(c, i), 1), 0);
		ck_assert_int_eq(
		    certificate_keyring_add_bundle(&ring, response.body.data, response.body.len, &added), 0);
		ck_assert_uint_eq(added, 1);
		ck_assert(
		    note_verifier_equal(&ring.certificates[0].signing_key, cluster_signing_verifier(c, i)));
		cluster_response_free(&response);
	}
	cluster_check_alive(c);

	/* The mirrors' trust bundle pins the three identity keys and k. */
	size_t len = 0;
	uint8_t *text = test_read_file(cluster_trust_bundle_path(c), &len);
	struct trust_bundle bundle;
	ck_assert_int_eq(trust_bundle_parse(text, len, &bundle, NULL), 0);
	free(text);
	ck_assert_uint_eq(bundle.authority_count, 3);
	ck_assert_uint_eq(bundle.threshold, 2);
	for (size_t i = 0; i < 3; i++)
		ck_assert(note_verifier_equal(&bundle.authorities[i], cluster_identity(c, i)));

	/* SIGKILL one: it is gone, directly and through every link to it; the others answer. */
	cluster_kill(c, 1);
	ck_assert(!cluster_running(c, 1));
	ck_assert_int_eq(health(c, 1), -1);
	ck_assert_int_eq(health_through(c, 0, 1), -1);
	ck_assert_int_eq(health_through(c, 2, 1), -1);
	ck_assert_int_eq(health(c, 0), 200);
	ck_assert_int_eq(health_through(c, 1, 2), 200); /* its own links still reach the living */
	cluster_check_alive(c);

	/* Restarted on its data and keys, it answers again through every link. */
	cluster_restart(c, 1);
	ck_assert(cluster_running(c, 1));
	ck_assert_int_eq(health(c, 1), 200);
	ck_assert_int_eq(health_through(c, 0, 1), 200);
	ck_assert_int_eq(health_through(c, 2, 1), 200);
	struct cluster_response response;
	ck_assert_int_eq(cluster_get(c, 1, "/v1/ready", &response), 200);
	cluster_response_free(&response);

	/* One link cut is that link only. */
	cluster_link_set(c, 0, 1, FAULTPROXY_CUT, 0);
	ck_assert_int_eq(health_through(c, 0, 1), -1);
	ck_assert_int_eq(health_through(c, 2, 1), 200);
	ck_assert_int_eq(health(c, 1), 200);
	cluster_heal(c);
	ck_assert_int_eq(health_through(c, 0, 1), 200);
	cluster_check_alive(c);

	cluster_free(c);
	struct stat st;
	if (!getenv(CLUSTER_KEEP_ENV))
		ck_assert_msg(stat(dir, &st) != 0, "%s was not removed", dir);
}
END_TEST

/* The protocol at its smallest, also under the sanitizers (the failure behaviours are
 * test_several_authorities): three authorities take one registration, vote, compute the same
 * header, co-sign it and publish; the next epoch chains to it. */
START_TEST(test_three_authorities_cosign_two_epochs)
{
	struct cluster_options options = {.authorities = 3, .threshold = 2};
	struct cluster *c = cluster_start(&options);
	struct buffer note;
	long statuses[3];
	cluster_registration(c, cluster_provider_key(c, 0), "service", 1, 1, &note);
	ck_assert_uint_eq(
	    cluster_register(c, CLUSTER_BIT(0) | CLUSTER_BIT(1) | CLUSTER_BIT(2), &note, statuses), 3);
	uint64_t first = cluster_next_epoch(c);
	struct buffer texts[3];
	for (uint64_t epoch = first; epoch < first + 2; epoch++) {
		cluster_run_epoch(c, epoch);
		for (size_t i = 0; i < 3; i++) {
			struct snapshot_header header;
			struct buffer header_note;
			buffer_init(&header_note);
			ck_assert_msg(cluster_wait_epoch(c, i, epoch, 20000, &header, &header_note) == 0,
			              "%s did not publish epoch %llu; see %s", cluster_name(c, i),
			              (unsigned long long)epoch, cluster_log_path(c, i));
			ck_assert_uint_eq(header.epoch, epoch);
			ck_assert_uint_eq(header.record_count, 1);
			unsigned signers = 0;
			ck_assert_int_ge(cluster_signers(c, header_note.data, header_note.len, &signers), 2);
			/* Every authority serves the same header text. */
			struct note *parsed = NULL;
			ck_assert_int_eq(note_parse(header_note.data, header_note.len, &parsed), 0);
			if (i == 0) {
				buffer_init(&texts[0]);
				ck_assert_int_eq(buffer_append(&texts[0], parsed->text, parsed->text_len), 0);
			} else {
				ck_assert_uint_eq(parsed->text_len, texts[0].len);
				ck_assert_mem_eq(parsed->text, texts[0].data, texts[0].len);
			}
			note_free(parsed);
			buffer_free(&header_note);
		}
		buffer_free(&texts[0]);
	}
	buffer_free(&note);
	cluster_free(c);
}
END_TEST

static Suite *cluster_suite(void)
{
	Suite *suite = suite_create("cluster");
	TCase *life = tcase_create("life");
	tcase_set_timeout(life, 120);
	tcase_add_test(life, test_three_authorities_start_die_restart_and_stop);
	tcase_add_test(life, test_three_authorities_cosign_two_epochs);
	suite_add_tcase(suite, life);
	return suite;
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	SRunner *runner = srunner_create(cluster_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	curl_global_cleanup();
	return failures ? 1 : 0;
}
