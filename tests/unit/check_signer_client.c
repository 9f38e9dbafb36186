/*
 * check_signer_client.c: dirauthd's signer client against a real dirauth-signer running in the
 * test process on a real UNIX socket (signer_fixture.h): signatures that verify, the signer's
 * refusals passed through with their sentence, queries, and "unavailable" when nothing listens
 * or the signer stops, with recovery once it is back, on the same client object.
 */
#include "schema/certificate.h"
#include "clock/clock.h"
#include "base/error.h"
#include "schema/note.h"
#include "schema/receipt.h"
#include "server/signing/signer_client.h"
#include "signer_fixture.h"
#include "server/signing/signer_health.h"
#include "schema/snapshot.h"
#include "test_support.h"

#include <check.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define NOW 1767225600ULL

static void make_header(uint64_t epoch, uint8_t fill, struct buffer *out)
{
	struct snapshot_header h;
	memset(&h, 0, sizeof h);
	snprintf(h.namespace_name, sizeof h.namespace_name, "mix");
	snprintf(h.origin, sizeof h.origin, "dirauth.example/mix");
	h.epoch = epoch;
	h.valid_after = SIGNER_FIXTURE_GENESIS + epoch * SIGNER_FIXTURE_LENGTH;
	h.fresh_until = h.valid_after + SIGNER_FIXTURE_LENGTH;
	h.valid_until = h.valid_after + SIGNER_FIXTURE_VALIDITY * SIGNER_FIXTURE_LENGTH;
	h.consensus_method = SNAPSHOT_CONSENSUS_METHOD;
	h.record_count = 0;
	memset(h.records_root, fill, sizeof h.records_root);
	memset(h.body_sha256, fill, sizeof h.body_sha256);
	buffer_init(out);
	ck_assert_int_eq(snapshot_header_encode(&h, out), 0);
}

static void make_receipt(const char *authority, struct buffer *out)
{
	struct receipt r;
	memset(&r, 0, sizeof r);
	snprintf(r.authority, sizeof r.authority, "%s", authority);
	snprintf(r.namespace_name, sizeof r.namespace_name, "mix");
	memset(r.service_id, 0x42, sizeof r.service_id);
	r.sequence = 7;
	r.accepted_at = NOW;
	r.publish_by_epoch = 3;
	memset(r.registration_digest, 0x17, sizeof r.registration_digest);
	buffer_init(out);
	ck_assert_int_eq(receipt_encode(&r, out), 0);
}

/* Checks that signature over text verifies with the certified signing key. */
static void expect_verifies(const struct signer_fixture *s, const struct buffer *text,
                            const struct note_signature *signature)
{
	struct buffer signed_note;
	struct note *note = NULL;
	buffer_init(&signed_note);
	ck_assert_int_eq(note_format(text->data, text->len, signature, 1, &signed_note), 0);
	ck_assert_int_eq(note_parse(signed_note.data, signed_note.len, &note), 0);
	ck_assert_int_eq(note_verify_threshold(note, &s->signing, 1, 1), 0);
	ck_assert_str_eq(signature->name, SIGNER_FIXTURE_AUTHORITY);
	note_free(note);
	buffer_free(&signed_note);
}

/* A file clock at now in dir, for the health checks' certificate windows. */
static struct clock *open_clock(const char *dir, uint64_t now)
{
	char path[600], text[32];
	snprintf(path, sizeof path, "%s/clock", dir);
	int n = snprintf(text, sizeof text, "%llu\n", (unsigned long long)now);
	test_write_file(path, text, (size_t)n, 0644);
	struct clock *clock = NULL;
	ck_assert_int_eq(clock_open_file(path, &clock), 0);
	return clock;
}

START_TEST(test_sign_and_query)
{
	char dir[512];
	test_make_tempdir(dir, sizeof dir);
	struct signer_fixture s;
	signer_fixture_prepare(&s, dir, NOW, NOW - 86400, NOW + 30 * 86400);
	signer_fixture_start(&s);
	struct signer_client *client = NULL;
	ck_assert_int_eq(signer_client_open(s.socket_path, 5000, &client), 0);

	struct buffer text;
	struct note_signature signature;
	char detail[SIGNER_DETAIL_MAX + 1];
	make_receipt(SIGNER_FIXTURE_AUTHORITY, &text);
	ck_assert_int_eq(signer_client_sign(client, SIGNER_OP_SIGN_RECEIPT, text.data, text.len, 0, NULL, 0,
	                                    &signature, detail, sizeof detail),
	                 0);
	ck_assert_str_eq(detail, "");
	expect_verifies(&s, &text, &signature);
	buffer_free(&text);

	/* A header; the same bytes again get the same signature (over the same connection). */
	struct note_signature again;
	make_header(5, 0x01, &text);
	ck_assert_int_eq(signer_client_sign(client, SIGNER_OP_SIGN_SNAPSHOT_HEADER, text.data, text.len, 0,
	                                    NULL, 0, &signature, detail, sizeof detail),
	                 0);
	expect_verifies(&s, &text, &signature);
	ck_assert_int_eq(signer_client_sign(client, SIGNER_OP_SIGN_SNAPSHOT_HEADER, text.data, text.len, 0,
	                                    NULL, 0, &again, detail, sizeof detail),
	                 0);
	ck_assert_mem_eq(again.signature, signature.signature, signature.signature_len);
	buffer_free(&text);

	/* GET_KEYS names the signing key; GET_CERTIFICATES is a bundle a pinned identity accepts. */
	struct buffer payload;
	buffer_init(&payload);
	ck_assert_int_eq(
	    signer_client_query(client, SIGNER_OP_GET_KEYS, NULL, 0, &payload, detail, sizeof detail), 0);
	char expected[NOTE_VERIFIER_KEY_MAX + 32], verifier[NOTE_VERIFIER_KEY_MAX + 1];
	note_verifier_format(&s.signing, verifier);
	snprintf(expected, sizeof expected, "signing-key %s\n", verifier);
	ck_assert_uint_ge(payload.len, strlen(expected));
	ck_assert_mem_eq(payload.data, expected, strlen(expected));
	buffer_reset(&payload);
	ck_assert_int_eq(
	    signer_client_query(client, SIGNER_OP_GET_CERTIFICATES, NULL, 0, &payload, detail, sizeof detail),
	    0);
	struct certificate_keyring *ring = calloc(1, sizeof *ring);
	ck_assert_ptr_nonnull(ring);
	ck_assert_int_eq(certificate_keyring_init(ring, &s.identity, 1), 0);
	size_t added = 0;
	ck_assert_int_eq(certificate_keyring_add_bundle(ring, payload.data, payload.len, &added), 0);
	ck_assert_uint_eq(added, 1);
	free(ring);
	buffer_free(&payload);

	/* A signing operation is not a query and the reverse. */
	ck_assert_int_eq(
	    signer_client_query(client, SIGNER_OP_SIGN_RECEIPT, NULL, 0, &payload, detail, sizeof detail),
	    DIRAUTH_ERR_REFUSED);
	ck_assert_int_eq(signer_client_sign(client, SIGNER_OP_GET_KEYS, (const uint8_t *)"x\n", 2, 0, NULL, 0,
	                                    &signature, detail, sizeof detail),
	                 DIRAUTH_ERR_REFUSED);

	signer_client_close(client);
	signer_fixture_stop(&s);
	test_remove_tree(dir);
}
END_TEST

START_TEST(test_refusals_pass_through)
{
	char dir[512];
	test_make_tempdir(dir, sizeof dir);
	struct signer_fixture s;
	signer_fixture_prepare(&s, dir, NOW, NOW - 86400, NOW + 30 * 86400);
	signer_fixture_start(&s);
	struct signer_client *client = NULL;
	ck_assert_int_eq(signer_client_open(s.socket_path, 5000, &client), 0);
	struct buffer text;
	struct note_signature signature;
	char detail[SIGNER_DETAIL_MAX + 1];

	/* Not the statement the operation names: a receipt as a header, raw bytes. */
	make_receipt(SIGNER_FIXTURE_AUTHORITY, &text);
	ck_assert_int_eq(signer_client_sign(client, SIGNER_OP_SIGN_SNAPSHOT_HEADER, text.data, text.len, 0,
	                                    NULL, 0, &signature, detail, sizeof detail),
	                 DIRAUTH_ERR_REFUSED);
	ck_assert_uint_gt(strlen(detail), 0);
	buffer_free(&text);
	ck_assert_int_eq(signer_client_sign(client, SIGNER_OP_SIGN_RECEIPT, (const uint8_t *)"hello\n", 6, 0,
	                                    NULL, 0, &signature, detail, sizeof detail),
	                 DIRAUTH_ERR_REFUSED);
	/* A receipt for another authority. */
	make_receipt("authority2.dirauth.example", &text);
	ck_assert_int_eq(signer_client_sign(client, SIGNER_OP_SIGN_RECEIPT, text.data, text.len, 0, NULL, 0,
	                                    &signature, detail, sizeof detail),
	                 DIRAUTH_ERR_REFUSED);
	buffer_free(&text);

	/* A second, different header for an epoch already signed, and a lower epoch: refused, and
	 * the connection still serves the next request. */
	make_header(9, 0x01, &text);
	ck_assert_int_eq(signer_client_sign(client, SIGNER_OP_SIGN_SNAPSHOT_HEADER, text.data, text.len, 0,
	                                    NULL, 0, &signature, detail, sizeof detail),
	                 0);
	buffer_free(&text);
	make_header(9, 0x02, &text);
	int rc = signer_client_sign(client, SIGNER_OP_SIGN_SNAPSHOT_HEADER, text.data, text.len, 0, NULL, 0,
	                            &signature, detail, sizeof detail);
	ck_assert_msg(rc < 0 && rc != DIRAUTH_ERR_UNAVAILABLE, "%d %s", rc, detail);
	ck_assert_uint_gt(strlen(detail), 0);
	buffer_free(&text);
	make_header(8, 0x01, &text);
	rc = signer_client_sign(client, SIGNER_OP_SIGN_SNAPSHOT_HEADER, text.data, text.len, 0, NULL, 0,
	                        &signature, detail, sizeof detail);
	ck_assert_msg(rc == DIRAUTH_ERR_ROLLBACK, "%d %s", rc, detail);
	buffer_free(&text);
	make_header(10, 0x01, &text);
	ck_assert_int_eq(signer_client_sign(client, SIGNER_OP_SIGN_SNAPSHOT_HEADER, text.data, text.len, 0,
	                                    NULL, 0, &signature, detail, sizeof detail),
	                 0);
	buffer_free(&text);
	ck_assert_int_ge(signer_fixture_audit_count(&s, " refuse "), 5);

	/* Oversized text is refused by the encoder before anything is sent. */
	uint8_t *big = calloc(1, SIGNER_TEXT_MAX + 1);
	ck_assert_ptr_nonnull(big);
	ck_assert_int_eq(signer_client_sign(client, SIGNER_OP_SIGN_RECEIPT, big, SIGNER_TEXT_MAX + 1, 0, NULL,
	                                    0, &signature, detail, sizeof detail),
	                 DIRAUTH_ERR_BOUNDS);
	free(big);

	/* An expired certificate: the signer stops signing with the key, and says so. */
	s.now = NOW + 31 * 86400;
	make_receipt(SIGNER_FIXTURE_AUTHORITY, &text);
	ck_assert_int_eq(signer_client_sign(client, SIGNER_OP_SIGN_RECEIPT, text.data, text.len, 0, NULL, 0,
	                                    &signature, detail, sizeof detail),
	                 DIRAUTH_ERR_STALE);
	ck_assert_ptr_nonnull(strstr(detail, "expired"));
	buffer_free(&text);

	signer_client_close(client);
	signer_fixture_stop(&s);
	test_remove_tree(dir);
}
END_TEST

START_TEST(test_unavailable_and_recovery)
{
	char dir[512];
	test_make_tempdir(dir, sizeof dir);
	struct signer_fixture s;
	signer_fixture_prepare(&s, dir, NOW, NOW - 86400, NOW + 30 * 86400);
	struct signer_client *client = NULL;
	struct signer_health *health = NULL;
	struct buffer text, payload;
	struct note_signature signature;
	char detail[SIGNER_HEALTH_DETAIL_MAX];
	buffer_init(&payload);
	make_receipt(SIGNER_FIXTURE_AUTHORITY, &text);

	/* Nothing at the path: unavailable, and opening never connected. */
	struct clock *clock = open_clock(dir, NOW);
	ck_assert_int_eq(signer_client_open(s.socket_path, 2000, &client), 0);
	ck_assert_int_eq(signer_health_create(client, SIGNER_FIXTURE_AUTHORITY, clock, &health), 0);
	ck_assert_int_eq(signer_client_sign(client, SIGNER_OP_SIGN_RECEIPT, text.data, text.len, 0, NULL, 0,
	                                    &signature, detail, sizeof detail),
	                 DIRAUTH_ERR_UNAVAILABLE);
	ck_assert_ptr_nonnull(strstr(detail, "cannot connect"));
	ck_assert_int_eq(
	    signer_client_query(client, SIGNER_OP_GET_KEYS, NULL, 0, &payload, detail, sizeof detail),
	    DIRAUTH_ERR_UNAVAILABLE);
	ck_assert_int_eq(signer_health_check(health, detail, sizeof detail), DIRAUTH_ERR_UNAVAILABLE);
	ck_assert_ptr_nonnull(strstr(detail, "signer unreachable"));

	/* A socket that accepts but never answers: the timeout bounds the call. */
	int silent = socket(AF_UNIX, SOCK_STREAM, 0);
	ck_assert_int_ge(silent, 0);
	struct sockaddr_un address;
	memset(&address, 0, sizeof address);
	address.sun_family = AF_UNIX;
	ck_assert_uint_lt(strlen(s.socket_path), sizeof address.sun_path);
	memcpy(address.sun_path, s.socket_path, strlen(s.socket_path) + 1);
	ck_assert_int_eq(bind(silent, (struct sockaddr *)&address, sizeof address), 0);
	ck_assert_int_eq(listen(silent, 4), 0);
	/* Wrong socket permissions: a socket others may connect to or replace is not spoken through. */
	ck_assert_int_eq(chmod(s.socket_path, 0666), 0);
	ck_assert_int_eq(signer_client_sign(client, SIGNER_OP_SIGN_RECEIPT, text.data, text.len, 0, NULL, 0,
	                                    &signature, detail, sizeof detail),
	                 DIRAUTH_ERR_UNAVAILABLE);
	ck_assert_ptr_nonnull(strstr(detail, "mode 0666"));
	ck_assert_int_eq(chmod(s.socket_path, 0600), 0);
	ck_assert_int_eq(signer_client_sign(client, SIGNER_OP_SIGN_RECEIPT, text.data, text.len, 0, NULL, 0,
	                                    &signature, detail, sizeof detail),
	                 DIRAUTH_ERR_UNAVAILABLE);
	ck_assert_ptr_nonnull(strstr(detail, "in time"));
	close(silent);
	unlink(s.socket_path);

	/* The signer starts: the same client signs. */
	signer_fixture_start(&s);
	ck_assert_int_eq(signer_client_sign(client, SIGNER_OP_SIGN_RECEIPT, text.data, text.len, 0, NULL, 0,
	                                    &signature, detail, sizeof detail),
	                 0);
	expect_verifies(&s, &text, &signature);

	/* Stopped mid-way, with the client's connection open: unavailable. */
	signer_fixture_stop(&s);
	ck_assert_int_eq(signer_client_sign(client, SIGNER_OP_SIGN_RECEIPT, text.data, text.len, 0, NULL, 0,
	                                    &signature, detail, sizeof detail),
	                 DIRAUTH_ERR_UNAVAILABLE);
	signer_health_note(health, DIRAUTH_ERR_UNAVAILABLE, detail);
	ck_assert_int_eq(signer_health_check(health, detail, sizeof detail), DIRAUTH_ERR_UNAVAILABLE);

	/* Restarted (same ledger): the client recovers by itself on its next call. */
	signer_fixture_start(&s);
	ck_assert_int_eq(signer_client_sign(client, SIGNER_OP_SIGN_RECEIPT, text.data, text.len, 0, NULL, 0,
	                                    &signature, detail, sizeof detail),
	                 0);
	expect_verifies(&s, &text, &signature);
	/* And a stale connection (the signer restarted between two calls) is replaced silently. */
	signer_fixture_stop(&s);
	signer_fixture_start(&s);
	ck_assert_int_eq(
	    signer_client_query(client, SIGNER_OP_GET_KEYS, NULL, 0, &payload, detail, sizeof detail), 0);
	/* The health check sees it up once its cached failure is older than the cache period. */
	for (int i = 0; i < 400 && signer_health_check(health, detail, sizeof detail) != 0; i++)
		test_sleep_ms(10);
	ck_assert_int_eq(signer_health_check(health, detail, sizeof detail), 0);

	signer_health_free(health);
	signer_client_close(client);
	clock_close(clock);
	signer_fixture_stop(&s);
	buffer_free(&text);
	buffer_free(&payload);
	test_remove_tree(dir);
}
END_TEST

START_TEST(test_health_name_mismatch)
{
	char dir[512];
	test_make_tempdir(dir, sizeof dir);
	struct signer_fixture s;
	signer_fixture_prepare(&s, dir, NOW, NOW - 86400, NOW + 30 * 86400);
	signer_fixture_start(&s);
	struct signer_client *client = NULL;
	struct signer_health *health = NULL;
	char detail[SIGNER_HEALTH_DETAIL_MAX];
	struct clock *clock = open_clock(dir, NOW);
	ck_assert_int_eq(signer_client_open(s.socket_path, 5000, &client), 0);
	ck_assert_int_eq(signer_health_create(client, "authority2.dirauth.example", clock, &health), 0);
	ck_assert_int_eq(signer_health_check(health, detail, sizeof detail), DIRAUTH_ERR_MISMATCH);
	ck_assert_ptr_nonnull(strstr(detail, "authority2.dirauth.example"));
	signer_health_free(health);
	ck_assert_int_eq(signer_health_create(client, SIGNER_FIXTURE_AUTHORITY, clock, &health), 0);
	ck_assert_int_eq(signer_health_check(health, detail, sizeof detail), 0);
	signer_health_free(health);
	/* The certificate by the authority's clock: not yet valid, expired, clock unreadable. */
	const uint64_t times[] = {NOW - 2 * 86400, NOW + 30 * 86400};
	for (size_t i = 0; i < 2; i++) {
		clock_close(clock);
		clock = open_clock(dir, times[i]);
		ck_assert_int_eq(signer_health_create(client, SIGNER_FIXTURE_AUTHORITY, clock, &health), 0);
		ck_assert_int_eq(signer_health_check(health, detail, sizeof detail), DIRAUTH_ERR_STALE);
		ck_assert_ptr_nonnull(strstr(detail, "certificate"));
		signer_health_free(health);
	}
	char clock_path[600];
	snprintf(clock_path, sizeof clock_path, "%s/clock", dir);
	ck_assert_int_eq(unlink(clock_path), 0);
	ck_assert_int_eq(signer_health_create(client, SIGNER_FIXTURE_AUTHORITY, clock, &health), 0);
	ck_assert_int_eq(signer_health_check(health, detail, sizeof detail), DIRAUTH_ERR_STALE);
	signer_health_free(health);
	clock_close(clock);
	signer_client_close(client);

	/* A socket path that cannot be a UNIX socket address: unavailable on every call. */
	char long_path[300];
	memset(long_path, 'a', sizeof long_path - 1);
	long_path[sizeof long_path - 1] = 0;
	ck_assert_int_eq(signer_client_open(long_path, 5000, &client), 0);
	struct buffer payload;
	buffer_init(&payload);
	ck_assert_int_eq(
	    signer_client_query(client, SIGNER_OP_GET_KEYS, NULL, 0, &payload, detail, sizeof detail),
	    DIRAUTH_ERR_UNAVAILABLE);
	buffer_free(&payload);
	signer_client_close(client);
	signer_fixture_stop(&s);
	test_remove_tree(dir);
}
END_TEST

static Suite *signer_client_suite(void)
{
	Suite *suite = suite_create("signer_client");
	TCase *tc = tcase_create("signer_client");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_sign_and_query);
	tcase_add_test(tc, test_refusals_pass_through);
	tcase_add_test(tc, test_unavailable_and_recovery);
	tcase_add_test(tc, test_health_name_mismatch);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(signer_client_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failures = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failures ? 1 : 0;
}
