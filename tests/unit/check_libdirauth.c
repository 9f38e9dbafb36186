/*
 * check_libdirauth.c: libdirauth through its public header only, with the example chain's vectors
 * (tests/vectors/chain/: three authorities, threshold 2, the snapshots of epochs 1 and 2) fed by
 * hand as the answers to the paths the library asks for. No network: the step interface is the
 * library's whole I/O.
 *
 * What a resolver relies on: a fresh update installs a verified snapshot and writes its header as
 * the state; queries answer from it (a service, a class, a random sample from the caller's
 * bytes); the chain from a held header is walked and a body held in memory asked for as a diff
 * first; and every refusal: a rollback (also after a restart, from the state), a tampered body or
 * header, a stale snapshot, a state that cannot be read or written, a server's wrong answer, two
 * contexts with different bundles in one process, a broken random source. And one service by
 * proof: the record shard of epoch 2 built from its body (schema/record_shard.h), a service
 * present and one proven absent, a tampered record or another snapshot's shard refused; and what
 * the proof showed, as dirauth_lookup_record reports it (every endpoint, the neighbours).
 */
#include <dirauth/dirauth.h>

#include "test_libdirauth_client.h"
#include "test_support.h"

#include "base/buffer.h"
#include "compress/compress.h"
#include "schema/record_shard.h"
#include "schema/trust_bundle.h"
#include "verify/snapshot.h"

#include <check.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHAIN(file) "tests/vectors/chain/" file
#define BUNDLE      CHAIN("trust-bundle.txt")
#define NOW         1767225750ULL /* inside epoch 2's validity */
#define SERVICE_A   "5a00000000000000000000000000000000000000000000000000000000000001"
#define SERVICE_B   "5b00000000000000000000000000000000000000000000000000000000000001"

struct file {
	uint8_t *bytes;
	size_t len;
};

static struct file vector(const char *name)
{
	struct file f;
	f.bytes = test_read_file(test_source_path(name), &f.len);
	return f;
}

/* The library asks for expected_path; it gets status and bytes. Returns what feed returned. */
static enum dirauth_status answer(struct dirauth_update *update, const char *expected_path, long status,
                                  const uint8_t *bytes, size_t len, struct dirauth_result *result)
{
	const char *path = NULL;
	size_t max_bytes = 0;
	ck_assert_int_eq(dirauth_update_next(update, &path, &max_bytes), 1);
	ck_assert_str_eq(path, expected_path);
	ck_assert(max_bytes > 0);
	return dirauth_update_feed(update, status, "", bytes, len, result);
}

static enum dirauth_status answer_file(struct dirauth_update *update, const char *expected_path,
                                       const char *name, struct dirauth_result *result)
{
	struct file f = vector(name);
	enum dirauth_status status = answer(update, expected_path, 200, f.bytes, f.len, result);
	free(f.bytes);
	return status;
}

/* The certificates and the latest header (the chain's file header_file) answered to update, and
 * taken; begin_with_header begins an update of "mix" first. */
static void answer_header(struct dirauth_update *update, const char *header_file,
                          struct dirauth_result *result)
{
	ck_assert_int_eq(answer_file(update, "/v1/certificates", CHAIN("certificates.txt"), result),
	                 DIRAUTH_SUCCESS);
	ck_assert_msg(answer_file(update, "/v1/mix/snapshots/latest", header_file, result) == DIRAUTH_SUCCESS,
	              "%s", result->detail);
}

static struct dirauth_update *begin_with_header(struct dirauth_context *context, const char *header_file,
                                                struct dirauth_result *result)
{
	struct dirauth_update *update = NULL;
	ck_assert_int_eq(dirauth_update_begin(context, "mix", &update, result), DIRAUTH_SUCCESS);
	answer_header(update, header_file, result);
	return update;
}

/* A whole update of epoch 2 from nothing held, with the vectors. */
static enum dirauth_status update_to_epoch_2(struct dirauth_context *context, struct dirauth_result *result)
{
	struct dirauth_update *update = NULL;
	enum dirauth_status status = dirauth_update_begin(context, "mix", &update, result);
	if (status == DIRAUTH_SUCCESS)
		status = answer_file(update, "/v1/certificates", CHAIN("certificates.txt"), result);
	if (status == DIRAUTH_SUCCESS)
		status = answer_file(update, "/v1/mix/snapshots/latest", CHAIN("header.note"), result);
	if (status == DIRAUTH_SUCCESS)
		status = answer_file(update, "/v1/mix/snapshots/2/body", CHAIN("body.txt"), result);
	if (status == DIRAUTH_SUCCESS)
		ck_assert_int_eq(dirauth_update_next(update, NULL, NULL), 0);
	dirauth_update_free(update);
	return status;
}

START_TEST(test_fresh_update_installs_and_answers)
{
	struct test_client c;
	struct dirauth_result result = {0};
	struct dirauth_endpoint endpoints[4];
	struct dirauth_snapshot_info info;
	size_t count = 0;

	test_client_init(&c, NOW);
	struct dirauth_context *context = test_client_context(&c, BUNDLE, NULL);
	ck_assert_int_eq(dirauth_snapshot(context, "mix", &info, &result), DIRAUTH_E_NO_SNAPSHOT);
	ck_assert_int_eq(dirauth_update_run(context, "mix", &result), DIRAUTH_E_ARGUMENT); /* no fetch */
	ck_assert_msg(update_to_epoch_2(context, &result) == DIRAUTH_SUCCESS, "%s", result.detail);
	ck_assert_str_eq(result.detail, "");

	/* The state is the header note as served, written once. */
	struct file header = vector(CHAIN("header.note"));
	ck_assert_uint_eq(c.state_writes, 1);
	ck_assert_uint_eq(c.state.len, header.len);
	ck_assert(memcmp(c.state.data, header.bytes, header.len) == 0);
	free(header.bytes);

	ck_assert_int_eq(dirauth_snapshot(context, "mix", &info, &result), DIRAUTH_SUCCESS);
	ck_assert_uint_eq(info.epoch, 2);
	ck_assert_uint_eq(info.record_count, 2);
	ck_assert_uint_eq(info.valid_until, 1767225900);
	ck_assert_uint_eq(info.consensus_method, 1);
	ck_assert_uint_eq(info.signer_count, 3);

	ck_assert_int_eq(dirauth_endpoints(context, "mix", "mix-gateway", endpoints, 4, &count, &result),
	                 DIRAUTH_SUCCESS);
	ck_assert_uint_eq(count, 2);
	ck_assert_str_eq(endpoints[0].service_id, SERVICE_A);
	ck_assert_str_eq(endpoints[0].endpoint_id,
	                 "5a01000000000000000000000000000000000000000000000000000000000001");
	ck_assert_str_eq(endpoints[0].transport, "quic");
	ck_assert_str_eq(endpoints[0].address, "192.0.2.10:443");
	ck_assert_str_eq(endpoints[0].region, "eu-west");
	ck_assert_str_eq(endpoints[0].capacity, "medium");
	ck_assert_str_eq(endpoints[0].profile, "modern");
	ck_assert_str_eq(endpoints[0].health, "unpublished"); /* method 1 publishes no health */
	ck_assert_str_eq(endpoints[1].address, "192.0.2.11:8443");
	/* Fewer places than answers: count says how many there are, cap how many were written. */
	ck_assert_int_eq(dirauth_endpoints(context, "mix", "mix-gateway", endpoints, 1, &count, &result),
	                 DIRAUTH_SUCCESS);
	ck_assert_uint_eq(count, 2);
	ck_assert_int_eq(dirauth_endpoints(context, "mix", "bridge", endpoints, 4, &count, &result),
	                 DIRAUTH_SUCCESS);
	ck_assert_uint_eq(count, 0);
	ck_assert_int_eq(dirauth_endpoints(context, "mix", "no-such-class", endpoints, 4, &count, &result),
	                 DIRAUTH_E_ARGUMENT);

	ck_assert_int_eq(dirauth_service(context, "mix", SERVICE_B, endpoints, 4, &count, &result),
	                 DIRAUTH_SUCCESS);
	ck_assert_uint_eq(count, 1);
	ck_assert_str_eq(endpoints[0].service_class, "mailbox-provider");
	ck_assert_str_eq(endpoints[0].address, "198.51.100.20:443");
	ck_assert_int_eq(dirauth_service(context, "mix",
	                                 "5c00000000000000000000000000000000000000000000000000000000000001",
	                                 endpoints, 4, &count, &result),
	                 DIRAUTH_E_NOT_FOUND);
	ck_assert_str_eq(dirauth_status_name(result.status), "not-found");
	ck_assert(strstr(result.detail, "not in the snapshot of epoch 2") != NULL);
	ck_assert_int_eq(dirauth_service(context, "mix", "5a00", endpoints, 4, &count, &result),
	                 DIRAUTH_E_ARGUMENT);
	ck_assert_int_eq(dirauth_service(context, "other", SERVICE_A, endpoints, 4, &count, &result),
	                 DIRAUTH_E_TRUST);

	/* The same snapshot again: nothing new, the body held is kept and nothing else is asked. */
	struct dirauth_update *update = begin_with_header(context, CHAIN("header.note"), &result);
	ck_assert_int_eq(dirauth_update_next(update, NULL, NULL), 0);
	ck_assert_int_eq(dirauth_update_status(update), DIRAUTH_SUCCESS);
	ck_assert_int_eq(dirauth_update_feed(update, 200, "", NULL, 0, &result), DIRAUTH_E_ARGUMENT);
	dirauth_update_free(update);

	dirauth_result_clear(&result);
	dirauth_context_free(context);
	test_client_free(&c);
}
END_TEST

START_TEST(test_chain_from_the_held_header_and_diff_first)
{
	struct test_client c;
	struct dirauth_result result = {0};
	struct dirauth_update *update = NULL;
	struct dirauth_snapshot_info info;

	/* Epoch 1 first, at a time inside its validity. */
	test_client_init(&c, 1767225700);
	struct dirauth_context *context = test_client_context(&c, BUNDLE, NULL);
	update = begin_with_header(context, CHAIN("previous-header.note"), &result);
	ck_assert_int_eq(answer_file(update, "/v1/mix/snapshots/1/body", CHAIN("previous-body.txt"), &result),
	                 DIRAUTH_SUCCESS);
	dirauth_update_free(update);

	/* Then epoch 2: it chains to epoch 1 (its previous), and its body is asked for as a diff from
	 * the one held; the server has none (404), so the whole body. */
	c.now = NOW;
	update = begin_with_header(context, CHAIN("header.note"), &result);
	ck_assert_int_eq(answer(update,
	                        "/v1/mix/snapshots/2/diff/"
	                        "404decd42983c206e964e0c7064c7a5fb1fa2f1414aa92abec98c157b4bd745b",
	                        404, NULL, 0, &result),
	                 DIRAUTH_SUCCESS);
	ck_assert_msg(answer_file(update, "/v1/mix/snapshots/2/body", CHAIN("body.txt"), &result) ==
	                  DIRAUTH_SUCCESS,
	              "%s", result.detail);
	dirauth_update_free(update);
	ck_assert_int_eq(dirauth_snapshot(context, "mix", &info, &result), DIRAUTH_SUCCESS);
	ck_assert_uint_eq(info.epoch, 2);
	ck_assert_uint_eq(c.state_writes, 2);
	dirauth_context_free(context);

	/* A new context (a restart) with epoch 1's header as its state walks the same chain. */
	struct file previous = vector(CHAIN("previous-header.note"));
	buffer_reset(&c.state);
	ck_assert(buffer_append(&c.state, previous.bytes, previous.len) == 0);
	free(previous.bytes);
	context = test_client_context(&c, BUNDLE, NULL);
	ck_assert_msg(update_to_epoch_2(context, &result) == DIRAUTH_SUCCESS, "%s", result.detail);
	dirauth_result_clear(&result);
	dirauth_context_free(context);
	test_client_free(&c);
}
END_TEST

/* A context that installed nothing starts from what a mirror keeps: the state and the held body
 * (body_read), which is the base of a diff only when it hashes to what the held header signed. A
 * diff that does not verify costs the whole body, never the update; what was verified is handed
 * out from the state write on, never before. */
START_TEST(test_held_body_as_base_and_what_was_verified)
{
	struct test_client c;
	struct dirauth_result result = {0};
	struct dirauth_update *update = NULL;
	struct dirauth_verified verified;
	struct file previous_header = vector(CHAIN("previous-header.note"));
	struct file previous_body = vector(CHAIN("previous-body.txt"));
	struct file header = vector(CHAIN("header.note"));
	struct file body = vector(CHAIN("body.txt"));
	static const char diff_path[] = "/v1/mix/snapshots/2/diff/"
	                                "404decd42983c206e964e0c7064c7a5fb1fa2f1414aa92abec98c157b4bd745b";

	test_client_init(&c, NOW);
	snprintf(c.state_namespace, sizeof(c.state_namespace), "mix");
	ck_assert(buffer_append(&c.state, previous_header.bytes, previous_header.len) == 0);
	ck_assert(buffer_append(&c.kept_body, previous_body.bytes, previous_body.len) == 0);
	struct dirauth_context *context = test_client_context(&c, BUNDLE, NULL);
	ck_assert_int_eq(dirauth_update_begin(context, "mix", &update, &result), DIRAUTH_SUCCESS);
	ck_assert_uint_eq(c.body_reads, 1);
	c.watched = update;
	ck_assert_int_eq(answer_file(update, "/v1/certificates", CHAIN("certificates.txt"), &result),
	                 DIRAUTH_SUCCESS);
	ck_assert_int_eq(dirauth_update_verified(update, &verified, &result), DIRAUTH_E_ARGUMENT);
	ck_assert_int_eq(answer_file(update, "/v1/mix/snapshots/latest", CHAIN("header.note"), &result),
	                 DIRAUTH_SUCCESS);
	/* The kept body is the base: a diff from it is asked for; an answer that is no diff. */
	ck_assert_int_eq(answer(update, diff_path, 200, (const uint8_t *)"no diff\n", 8, &result),
	                 DIRAUTH_SUCCESS);
	ck_assert_int_eq(dirauth_update_verified(update, &verified, &result), DIRAUTH_E_ARGUMENT);
	ck_assert_msg(answer(update, "/v1/mix/snapshots/2/body", 200, body.bytes, body.len, &result) ==
	                  DIRAUTH_SUCCESS,
	              "%s", result.detail);
	/* Asked from within state_write, and after. */
	ck_assert_int_eq(c.watched_status, DIRAUTH_SUCCESS);
	ck_assert_uint_eq(c.watched_body_len, body.len);
	ck_assert_int_eq(dirauth_update_verified(update, &verified, &result), DIRAUTH_SUCCESS);
	ck_assert_uint_eq(verified.epoch, 2);
	ck_assert_uint_eq(verified.header_note_len, header.len);
	ck_assert(memcmp(verified.header_note, header.bytes, header.len) == 0);
	ck_assert_uint_eq(verified.body_len, body.len);
	ck_assert(memcmp(verified.body, body.bytes, body.len) == 0);
	ck_assert(verified.certificates_len > 0);
	ck_assert(verified.had_held && verified.held_epoch == 1);
	ck_assert(verified.diff_asked && !verified.diff_used && !verified.diff_missing);
	ck_assert_uint_eq(verified.diff_base_epoch, 1);
	ck_assert_msg(verified.diff_why[0] != '\0', "no reason given");
	ck_assert_uint_eq(verified.body_served_len, body.len);
	ck_assert(!verified.log_checked && verified.log_proof == NULL);
	dirauth_update_free(update);
	dirauth_context_free(context);

	/* A kept body that is not the one the held header signed is no base: the body is asked for
	 * whole at once. */
	buffer_reset(&c.state);
	ck_assert(buffer_append(&c.state, previous_header.bytes, previous_header.len) == 0);
	c.kept_body.data[c.kept_body.len / 2] ^= 1;
	c.watched = NULL;
	context = test_client_context(&c, BUNDLE, NULL);
	ck_assert_int_eq(dirauth_update_begin(context, "mix", &update, &result), DIRAUTH_SUCCESS);
	ck_assert_uint_eq(c.body_reads, 2);
	ck_assert_int_eq(answer_file(update, "/v1/certificates", CHAIN("certificates.txt"), &result),
	                 DIRAUTH_SUCCESS);
	ck_assert_int_eq(answer_file(update, "/v1/mix/snapshots/latest", CHAIN("header.note"), &result),
	                 DIRAUTH_SUCCESS);
	ck_assert_int_eq(answer_file(update, "/v1/mix/snapshots/2/body", CHAIN("body.txt"), &result),
	                 DIRAUTH_SUCCESS);
	ck_assert_int_eq(dirauth_update_verified(update, &verified, &result), DIRAUTH_SUCCESS);
	ck_assert(!verified.diff_asked);
	ck_assert_str_eq(verified.diff_why, "the held body is not the one its header commits to");
	dirauth_update_free(update);
	ck_assert_int_eq(dirauth_update_verified(NULL, &verified, &result), DIRAUTH_E_ARGUMENT);
	dirauth_context_free(context);

	/* The same snapshot as held, with its body kept: nothing is downloaded but the header (which
	 * may carry more signatures), and the kept body is the snapshot's. */
	buffer_reset(&c.state);
	ck_assert(buffer_append(&c.state, header.bytes, header.len) == 0);
	buffer_reset(&c.kept_body);
	ck_assert(buffer_append(&c.kept_body, body.bytes, body.len) == 0);
	context = test_client_context(&c, BUNDLE, NULL);
	update = begin_with_header(context, CHAIN("header.note"), &result);
	ck_assert_int_eq(dirauth_update_next(update, NULL, NULL), 0);
	ck_assert_int_eq(dirauth_update_status(update), DIRAUTH_SUCCESS);
	ck_assert_int_eq(dirauth_update_verified(update, &verified, &result), DIRAUTH_SUCCESS);
	ck_assert(verified.body_held && !verified.diff_asked && verified.diff_why[0] == '\0');
	ck_assert_uint_eq(verified.body_len, body.len);
	ck_assert(memcmp(verified.body, body.bytes, body.len) == 0);
	struct dirauth_endpoint endpoints[4];
	size_t count = 0;
	ck_assert_int_eq(dirauth_service(context, "mix", SERVICE_A, endpoints, 4, &count, &result),
	                 DIRAUTH_SUCCESS);
	dirauth_update_free(update);

	free(previous_header.bytes);
	free(previous_body.bytes);
	free(header.bytes);
	free(body.bytes);
	dirauth_result_clear(&result);
	dirauth_context_free(context);
	test_client_free(&c);
}
END_TEST

START_TEST(test_rollback_refused_also_after_a_restart)
{
	struct test_client c;
	struct dirauth_result result = {0};
	struct dirauth_update *update = NULL;

	test_client_init(&c, NOW);
	struct dirauth_context *context = test_client_context(&c, BUNDLE, NULL);
	ck_assert_int_eq(update_to_epoch_2(context, &result), DIRAUTH_SUCCESS);
	for (int restart = 0; restart < 2; restart++) {
		if (restart) { /* the same state, a new context: nothing in memory */
			dirauth_context_free(context);
			context = test_client_context(&c, BUNDLE, NULL);
		}
		ck_assert_int_eq(dirauth_update_begin(context, "mix", &update, &result), DIRAUTH_SUCCESS);
		ck_assert_int_eq(answer_file(update, "/v1/certificates", CHAIN("certificates.txt"), &result),
		                 DIRAUTH_SUCCESS);
		ck_assert_int_eq(
		    answer_file(update, "/v1/mix/snapshots/latest", CHAIN("previous-header.note"), &result),
		    DIRAUTH_E_ROLLBACK);
		ck_assert_str_eq(dirauth_status_name(result.status), "rollback");
		ck_assert_msg(strstr(result.detail, "rollback") != NULL, "%s", result.detail);
		ck_assert_int_eq(dirauth_update_next(update, NULL, NULL), 0);
		ck_assert_int_eq(dirauth_update_status(update), DIRAUTH_E_ROLLBACK);
		dirauth_update_free(update);
		ck_assert_uint_eq(c.state_writes, 1);
	}
	dirauth_result_clear(&result);
	dirauth_context_free(context);
	test_client_free(&c);
}
END_TEST

/* An update of epoch 2 whose answer to path is file with the byte at offset (from the end when
 * negative) changed. */
static enum dirauth_status update_tampered(struct dirauth_context *context, const char *tampered_file,
                                           long offset, struct dirauth_result *result)
{
	static const char *const paths[] = {"/v1/certificates", "/v1/mix/snapshots/latest",
	                                    "/v1/mix/snapshots/2/body"};
	static const char *const files[] = {CHAIN("certificates.txt"), CHAIN("header.note"),
	                                    CHAIN("body.txt")};
	struct dirauth_update *update = NULL;
	enum dirauth_status status = dirauth_update_begin(context, "mix", &update, result);
	for (size_t i = 0; i < 3 && status == DIRAUTH_SUCCESS; i++) {
		struct file f = vector(files[i]);
		if (strcmp(files[i], tampered_file) == 0) {
			size_t at = offset < 0 ? f.len - (size_t)(-offset) : (size_t)offset;
			f.bytes[at] = f.bytes[at] == 'A' ? 'B' : 'A';
		}
		status = answer(update, paths[i], 200, f.bytes, f.len, result);
		free(f.bytes);
	}
	dirauth_update_free(update);
	return status;
}

START_TEST(test_tampered_body_and_header_refused)
{
	struct test_client c;
	struct dirauth_result result = {0};
	struct dirauth_snapshot_info info;

	test_client_init(&c, NOW);
	struct dirauth_context *context = test_client_context(&c, BUNDLE, NULL);
	/* A byte of a record's address in the body. */
	struct file body = vector(CHAIN("body.txt"));
	const char *address = strstr((const char *)body.bytes, "192.0.2.10");
	ck_assert(address != NULL);
	long offset = (long)(address - (const char *)body.bytes);
	free(body.bytes);
	ck_assert_int_eq(update_tampered(context, CHAIN("body.txt"), offset, &result), DIRAUTH_E_MISMATCH);
	ck_assert_msg(strstr(result.detail, "body") != NULL, "%s", result.detail);
	/* The last signature of the header: two of three still verify... but a signature by a pinned,
	 * certified key that does not verify refuses the note (hard rule 10). */
	ck_assert_int_eq(update_tampered(context, CHAIN("header.note"), -5, &result), DIRAUTH_E_SIGNATURE);
	/* A byte of the header's text. */
	enum dirauth_status status = update_tampered(context, CHAIN("header.note"), 40, &result);
	ck_assert_msg(status == DIRAUTH_E_SIGNATURE || status == DIRAUTH_E_MALFORMED, "%s", result.detail);
	ck_assert_uint_eq(c.state_writes, 0);
	ck_assert_int_eq(dirauth_snapshot(context, "mix", &info, &result), DIRAUTH_E_NO_SNAPSHOT);
	dirauth_result_clear(&result);
	dirauth_context_free(context);
	test_client_free(&c);
}
END_TEST

START_TEST(test_stale_refused)
{
	struct test_client c;
	struct dirauth_result result = {0};
	struct dirauth_endpoint endpoints[4];
	struct dirauth_snapshot_info info;
	size_t count = 9;

	test_client_init(&c, 1767225900); /* epoch 2's valid-until */
	struct dirauth_context *context = test_client_context(&c, BUNDLE, NULL);
	ck_assert_int_eq(update_to_epoch_2(context, &result), DIRAUTH_E_STALE);
	ck_assert_str_eq(dirauth_status_name(result.status), "stale");
	ck_assert_uint_eq(c.state_writes, 0);

	c.now = NOW;
	ck_assert_int_eq(update_to_epoch_2(context, &result), DIRAUTH_SUCCESS);
	c.now = 1767225900;
	ck_assert_int_eq(dirauth_endpoints(context, "mix", "mix-gateway", endpoints, 4, &count, &result),
	                 DIRAUTH_E_STALE);
	ck_assert_uint_eq(count, 0);
	ck_assert(strstr(result.detail, "valid until 1767225900") != NULL);
	ck_assert_int_eq(dirauth_sample(context, "mix", "mix-gateway", 1, endpoints, &count, &result),
	                 DIRAUTH_E_STALE);
	ck_assert_int_eq(dirauth_service(context, "mix", SERVICE_A, endpoints, 4, &count, &result),
	                 DIRAUTH_E_STALE);
	/* What it is can still be read; it is not answered from. */
	ck_assert_int_eq(dirauth_snapshot(context, "mix", &info, &result), DIRAUTH_SUCCESS);
	dirauth_result_clear(&result);
	dirauth_context_free(context);
	test_client_free(&c);
}
END_TEST

START_TEST(test_state_that_cannot_be_read_or_written)
{
	struct test_client c;
	struct dirauth_result result = {0};
	struct dirauth_update *update = NULL;
	struct dirauth_snapshot_info info;

	test_client_init(&c, NOW);
	struct dirauth_context *context = test_client_context(&c, BUNDLE, NULL);
	c.fail_write = 1;
	ck_assert_int_eq(update_to_epoch_2(context, &result), DIRAUTH_E_STATE);
	ck_assert_int_eq(dirauth_snapshot(context, "mix", &info, &result), DIRAUTH_E_NO_SNAPSHOT);
	c.fail_write = 0;
	c.fail_read = 1;
	ck_assert_int_eq(dirauth_update_begin(context, "mix", &update, &result), DIRAUTH_E_STATE);
	ck_assert(update == NULL);
	c.fail_read = 0;
	/* A state that is no header note of the namespace: a check that cannot run denies. */
	ck_assert(buffer_append_string(&c.state, "not a header\n") == 0);
	snprintf(c.state_namespace, sizeof(c.state_namespace), "mix");
	ck_assert_int_eq(dirauth_update_begin(context, "mix", &update, &result), DIRAUTH_E_STATE);
	ck_assert_int_eq(dirauth_update_begin(context, "other", &update, &result), DIRAUTH_E_TRUST);
	dirauth_result_clear(&result);
	dirauth_context_free(context);
	test_client_free(&c);
}
END_TEST

START_TEST(test_wrong_answers_from_the_server)
{
	struct test_client c;
	struct dirauth_result result = {0};
	struct dirauth_update *update = NULL;
	size_t max_bytes = 0;
	const char *path = NULL;

	test_client_init(&c, NOW);
	struct dirauth_context *context = test_client_context(&c, BUNDLE, NULL);
	ck_assert_int_eq(dirauth_update_begin(context, "mix", &update, &result), DIRAUTH_SUCCESS);
	ck_assert_int_eq(answer_file(update, "/v1/certificates", CHAIN("certificates.txt"), &result),
	                 DIRAUTH_SUCCESS);
	ck_assert_int_eq(answer(update, "/v1/mix/snapshots/latest", 404, NULL, 0, &result), DIRAUTH_E_FETCH);
	ck_assert(strstr(result.detail, "404") != NULL);
	dirauth_update_free(update);

	/* More bytes than the step reads. */
	ck_assert_int_eq(dirauth_update_begin(context, "mix", &update, &result), DIRAUTH_SUCCESS);
	ck_assert_int_eq(dirauth_update_next(update, &path, &max_bytes), 1);
	uint8_t *big = calloc(1, max_bytes + 1);
	ck_assert_int_eq(dirauth_update_feed(update, 200, "", big, max_bytes + 1, &result), DIRAUTH_E_FETCH);
	free(big);
	dirauth_update_free(update);

	/* A body in an encoding nobody offered. */
	update = begin_with_header(context, CHAIN("header.note"), &result);
	ck_assert_int_eq(dirauth_update_next(update, &path, &max_bytes), 1);
	ck_assert_int_eq(dirauth_update_feed(update, 200, "br", (const uint8_t *)"x", 1, &result),
	                 DIRAUTH_E_MALFORMED);
	dirauth_update_free(update);
	ck_assert_uint_eq(c.state_writes, 0);
	dirauth_result_clear(&result);
	dirauth_context_free(context);
	test_client_free(&c);
}
END_TEST

/* A fetch that leaves the decoding to the library: every answer compressed, named by its encoding. */
START_TEST(test_answers_served_compressed)
{
	static const char *const files[] = {CHAIN("certificates.txt"), CHAIN("header.note"),
	                                    CHAIN("body.txt")};
	static const enum content_encoding encodings[] = {ENCODING_GZIP, ENCODING_ZSTD, ENCODING_ZSTD};
	struct test_client c;
	struct dirauth_result result = {0};
	struct dirauth_update *update = NULL;
	const char *path = NULL;

	test_client_init(&c, NOW);
	struct dirauth_context *context = test_client_context(&c, BUNDLE, NULL);
	ck_assert_int_eq(dirauth_update_begin(context, "mix", &update, &result), DIRAUTH_SUCCESS);
	for (size_t i = 0; i < 3; i++) {
		struct file f = vector(files[i]);
		struct buffer packed;
		buffer_init(&packed);
		ck_assert(compress_encode(encodings[i], f.bytes, f.len, &packed) == 0);
		ck_assert_int_eq(dirauth_update_next(update, &path, NULL), 1);
		ck_assert_msg(dirauth_update_feed(update, 200, content_encoding_name(encodings[i]),
		                                  packed.data, packed.len, &result) == DIRAUTH_SUCCESS,
		              "%s: %s", path, result.detail);
		buffer_free(&packed);
		free(f.bytes);
	}
	ck_assert_int_eq(dirauth_update_next(update, NULL, NULL), 0);
	dirauth_update_free(update);
	ck_assert_uint_eq(c.state_writes, 1);
	/* Garbage named zstd is refused. */
	ck_assert_int_eq(dirauth_update_begin(context, "mix", &update, &result), DIRAUTH_SUCCESS);
	ck_assert_int_eq(dirauth_update_feed(update, 200, "zstd", (const uint8_t *)"not zstd", 8, &result),
	                 DIRAUTH_E_MALFORMED);
	dirauth_update_free(update);
	dirauth_result_clear(&result);
	dirauth_context_free(context);
	test_client_free(&c);
}
END_TEST

START_TEST(test_two_contexts_with_different_bundles)
{
	char dir[256], other_path[512];
	struct test_client a, b;
	struct dirauth_result result = {0};
	struct dirauth_endpoint endpoints[4];
	struct dirauth_snapshot_info info;
	size_t count = 0;

	/* Bundle B pins authority 1 alone, threshold 1, but for another origin of "mix". */
	test_make_tempdir(dir, sizeof(dir));
	snprintf(other_path, sizeof(other_path), "%s/other.txt", dir);
	static const char other[] =
	    "dirauth trust v1\n"
	    "namespace mix dirauth.example/other-mix\n"
	    "authority authority1.dirauth.example+dcc62284+AZC32fRUOZ7AebIOYvfyQ4OGR6luFrh1bgdlyKReleQu\n"
	    "threshold 1\n";
	test_write_file(other_path, other, strlen(other), 0644);
	test_client_init(&a, NOW);
	test_client_init(&b, NOW);
	struct dirauth_context *context_a = test_client_context(&a, BUNDLE, NULL);
	struct dirauth_context *context_b = test_client_context(&b, other_path, NULL);

	ck_assert_int_eq(update_to_epoch_2(context_b, &result), DIRAUTH_E_MISMATCH);
	ck_assert_msg(strstr(result.detail, "origin") != NULL, "%s", result.detail);
	ck_assert_int_eq(update_to_epoch_2(context_a, &result), DIRAUTH_SUCCESS);
	/* A's snapshot is A's alone. */
	ck_assert_int_eq(dirauth_snapshot(context_b, "mix", &info, &result), DIRAUTH_E_NO_SNAPSHOT);
	ck_assert_int_eq(dirauth_endpoints(context_b, "mix", "mix-gateway", endpoints, 4, &count, &result),
	                 DIRAUTH_E_NO_SNAPSHOT);
	ck_assert_int_eq(dirauth_endpoints(context_a, "mix", "mix-gateway", endpoints, 4, &count, &result),
	                 DIRAUTH_SUCCESS);
	ck_assert_uint_eq(count, 2);
	ck_assert_uint_eq(b.state_writes, 0);
	ck_assert_uint_eq(a.state_writes, 1);
	dirauth_context_free(context_a);
	/* B lives on after A is gone. */
	ck_assert_int_eq(update_to_epoch_2(context_b, &result), DIRAUTH_E_MISMATCH);
	dirauth_context_free(context_b);
	dirauth_result_clear(&result);
	test_client_free(&a);
	test_client_free(&b);
	test_remove_tree(dir);
}
END_TEST

START_TEST(test_sample_from_the_random_source_alone)
{
	static const uint8_t zero[8] = {0, 0, 0, 0, 0, 0, 0, 0};
	static const uint8_t one[8] = {0, 0, 0, 0, 0, 0, 0, 1};
	static const uint8_t broken[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	struct test_client c;
	struct dirauth_result result = {0};
	struct dirauth_endpoint chosen[4];
	size_t count = 0;

	test_client_init(&c, NOW);
	struct dirauth_context *context = test_client_context(&c, BUNDLE, NULL);
	ck_assert_int_eq(update_to_epoch_2(context, &result), DIRAUTH_SUCCESS);
	c.random = zero;
	c.random_len = 8;
	ck_assert_int_eq(dirauth_sample(context, "mix", "mix-gateway", 1, chosen, &count, &result),
	                 DIRAUTH_SUCCESS);
	ck_assert_uint_eq(count, 1);
	ck_assert_str_eq(chosen[0].address, "192.0.2.10:443");
	c.random = one;
	ck_assert_int_eq(dirauth_sample(context, "mix", "mix-gateway", 1, chosen, &count, &result),
	                 DIRAUTH_SUCCESS);
	ck_assert_str_eq(chosen[0].address, "192.0.2.11:8443");
	/* More than there are: all of them, each once. */
	ck_assert_int_eq(dirauth_sample(context, "mix", "mix-gateway", 4, chosen, &count, &result),
	                 DIRAUTH_SUCCESS);
	ck_assert_uint_eq(count, 2);
	ck_assert_str_ne(chosen[0].endpoint_id, chosen[1].endpoint_id);
	/* A source that fails, or that never gives a usable value, chooses nothing. */
	c.random = broken;
	ck_assert_int_eq(dirauth_sample(context, "mix", "mix-gateway", 1, chosen, &count, &result),
	                 DIRAUTH_E_RANDOM);
	ck_assert_uint_eq(count, 0);
	c.random = NULL;
	c.fail_random = 1;
	ck_assert_int_eq(dirauth_sample(context, "mix", "mix-gateway", 1, chosen, &count, &result),
	                 DIRAUTH_E_RANDOM);
	dirauth_context_free(context);

	/* Without a random callback, no sample. */
	c.callbacks.random = NULL;
	context = test_client_context(&c, BUNDLE, NULL);
	ck_assert_int_eq(dirauth_sample(context, "mix", "mix-gateway", 1, chosen, &count, &result),
	                 DIRAUTH_E_ARGUMENT);
	dirauth_result_clear(&result);
	dirauth_context_free(context);
	test_client_free(&c);
}
END_TEST

START_TEST(test_context_refusals)
{
	struct test_client c;
	struct dirauth_result result = {0};
	struct dirauth_context *context = NULL;
	static const char bad[] = "dirauth trust v1\nnamespace mix dirauth.example/mix\nthreshold 1\n";

	test_client_init(&c, NOW);
	ck_assert_int_eq(
	    dirauth_context_new(&c.callbacks, (const uint8_t *)bad, strlen(bad), NULL, &context, &result),
	    DIRAUTH_E_TRUST);
	ck_assert(context == NULL);
	ck_assert_msg(strstr(result.detail, "trust bundle line") != NULL, "%s", result.detail);
	struct dirauth_callbacks missing = c.callbacks;
	missing.state_write = NULL;
	ck_assert_int_eq(
	    dirauth_context_new(&missing, (const uint8_t *)bad, strlen(bad), NULL, &context, &result),
	    DIRAUTH_E_ARGUMENT);

	size_t len = 0;
	uint8_t *bundle = test_read_file(test_source_path(BUNDLE), &len);
	const char *not_a_key[] = {"log.example+00000000+AAAA"};
	struct dirauth_options options = {0};
	options.log_keys = not_a_key;
	options.log_key_count = 1;
	ck_assert_int_eq(dirauth_context_new(&c.callbacks, bundle, len, &options, &context, &result),
	                 DIRAUTH_E_TRUST);
	struct dirauth_options quorum_only = {0};
	quorum_only.witness_quorum = 1;
	ck_assert_int_eq(dirauth_context_new(&c.callbacks, bundle, len, &quorum_only, &context, &result),
	                 DIRAUTH_E_TRUST);
	/* Without log keys, a log proof cannot be believed. */
	ck_assert_int_eq(dirauth_context_new(&c.callbacks, bundle, len, NULL, &context, &result),
	                 DIRAUTH_SUCCESS);
	ck_assert_int_eq(update_to_epoch_2(context, &result), DIRAUTH_SUCCESS);
	ck_assert_int_eq(dirauth_verify_log_proof(context, "mix", (const uint8_t *)"x", 1, &result),
	                 DIRAUTH_E_LOG);
	free(bundle);
	dirauth_result_clear(&result);
	dirauth_context_free(context);
	dirauth_context_free(NULL);
	dirauth_update_free(NULL);
	dirauth_result_clear(NULL);
	ck_assert_str_eq(dirauth_status_name(DIRAUTH_E_SPLIT_VIEW), "split-view");
	ck_assert_str_eq(dirauth_status_name((enum dirauth_status)99), "unknown");
	test_client_free(&c);
}
END_TEST

/* The shard of epoch 2's body that holds every one of its ids (2 records: bits 0, shard "0"). */
static void epoch_2_shard(struct buffer *out, const char *body_name)
{
	struct record_shard_builder *builder = NULL;
	struct snapshot_body_limits limits = {1000, 1000, 1000};
	struct file body = vector(body_name);
	ck_assert(record_shard_builder_new(body.bytes, body.len, &limits, &builder) == 0);
	ck_assert_uint_eq(record_shard_builder_bits(builder), 0);
	ck_assert(record_shard_builder_shard(builder, 0, out) == 0);
	record_shard_builder_free(builder);
	free(body.bytes);
}

/* A lookup of service_id at epoch 2 whose shard is answered with shard. */
static enum dirauth_status lookup(struct dirauth_context *context, const char *service_id,
                                  const struct buffer *shard, struct dirauth_update **out,
                                  struct dirauth_result *result)
{
	enum dirauth_status status = dirauth_lookup_begin(context, "mix", service_id, out, result);
	if (status == DIRAUTH_SUCCESS)
		status = answer_file(*out, "/v1/certificates", CHAIN("certificates.txt"), result);
	if (status == DIRAUTH_SUCCESS)
		status = answer_file(*out, "/v1/mix/snapshots/latest", CHAIN("header.note"), result);
	if (status == DIRAUTH_SUCCESS)
		status = answer(*out, "/v1/mix/snapshots/2/records/0", 200, shard->data, shard->len, result);
	return status;
}

START_TEST(test_one_service_by_proof)
{
	struct test_client c;
	struct dirauth_result result = {0};
	struct dirauth_update *update = NULL;
	struct dirauth_endpoint endpoints[4];
	struct dirauth_snapshot_info info;
	struct buffer shard;
	size_t count = 0;

	buffer_init(&shard);
	epoch_2_shard(&shard, CHAIN("body.txt"));
	test_client_init(&c, NOW);
	struct dirauth_context *context = test_client_context(&c, BUNDLE, NULL);

	/* Present: the service's endpoints, from a few kilobytes instead of the body. */
	ck_assert_msg(lookup(context, SERVICE_A, &shard, &update, &result) == DIRAUTH_SUCCESS, "%s",
	              result.detail);
	ck_assert_int_eq(dirauth_update_next(update, NULL, NULL), 0);
	ck_assert_int_eq(dirauth_lookup_endpoints(update, endpoints, 4, &count, &result), DIRAUTH_SUCCESS);
	ck_assert_uint_eq(count, 2);
	ck_assert_str_eq(endpoints[0].service_id, SERVICE_A);
	ck_assert_str_eq(endpoints[0].address, "192.0.2.10:443");
	ck_assert_str_eq(endpoints[1].address, "192.0.2.11:8443");
	ck_assert_str_eq(endpoints[0].health, "unpublished");
	dirauth_update_free(update);
	ck_assert_uint_eq(c.state_writes, 1); /* the header, as an update writes it */

	/* The same shard served compressed with zstd, then in an encoding nobody offered. */
	struct buffer packed;
	buffer_init(&packed);
	ck_assert(compress_encode(ENCODING_ZSTD, shard.data, shard.len, &packed) == 0);
	static const char *const encodings[] = {"zstd", "br"};
	static const enum dirauth_status expected[] = {DIRAUTH_SUCCESS, DIRAUTH_E_MALFORMED};
	for (size_t e = 0; e < 2; e++) {
		const char *path = NULL;
		ck_assert_int_eq(dirauth_lookup_begin(context, "mix", SERVICE_A, &update, &result),
		                 DIRAUTH_SUCCESS);
		answer_header(update, CHAIN("header.note"), &result);
		ck_assert_int_eq(dirauth_update_next(update, &path, NULL), 1);
		ck_assert_int_eq(
		    dirauth_update_feed(update, 200, encodings[e], packed.data, packed.len, &result),
		    expected[e]);
		dirauth_update_free(update);
	}
	buffer_free(&packed);

	/* Absent: proven by its neighbours. */
	ck_assert_int_eq(lookup(context, "5c00000000000000000000000000000000000000000000000000000000000001",
	                        &shard, &update, &result),
	                 DIRAUTH_SUCCESS);
	ck_assert_int_eq(dirauth_lookup_endpoints(update, endpoints, 4, &count, &result),
	                 DIRAUTH_E_NOT_FOUND);
	ck_assert_msg(strstr(result.detail, "proven absent") != NULL, "%s", result.detail);
	dirauth_update_free(update);

	/* A tampered record (a byte of its address) is refused, and so is another snapshot's shard. */
	char *address = strstr((char *)shard.data, "192.0.2.10");
	ck_assert(address != NULL);
	address[13] = '4'; /* :443 becomes :444, still a valid address */
	ck_assert_int_eq(lookup(context, SERVICE_A, &shard, &update, &result), DIRAUTH_E_MISMATCH);
	ck_assert_int_eq(dirauth_lookup_endpoints(update, endpoints, 4, &count, &result), DIRAUTH_E_ARGUMENT);
	dirauth_update_free(update);
	buffer_reset(&shard);
	epoch_2_shard(&shard, CHAIN("previous-body.txt"));
	ck_assert_int_eq(lookup(context, SERVICE_A, &shard, &update, &result), DIRAUTH_E_MISMATCH);
	dirauth_update_free(update);
	ck_assert_int_eq(dirauth_lookup_begin(context, "mix", "5a", &update, &result), DIRAUTH_E_ARGUMENT);
	dirauth_context_free(context);

	/* A lookup of a newer epoch drops the snapshot of an older one: what it offered may be revoked. */
	buffer_reset(&c.state);
	c.now = 1767225700;
	context = test_client_context(&c, BUNDLE, NULL);
	update = begin_with_header(context, CHAIN("previous-header.note"), &result);
	ck_assert_int_eq(answer_file(update, "/v1/mix/snapshots/1/body", CHAIN("previous-body.txt"), &result),
	                 DIRAUTH_SUCCESS);
	dirauth_update_free(update);
	ck_assert_int_eq(dirauth_snapshot(context, "mix", &info, &result), DIRAUTH_SUCCESS);
	c.now = NOW;
	buffer_reset(&shard);
	epoch_2_shard(&shard, CHAIN("body.txt"));
	ck_assert_int_eq(lookup(context, SERVICE_B, &shard, &update, &result), DIRAUTH_SUCCESS);
	dirauth_update_free(update);
	ck_assert_int_eq(dirauth_snapshot(context, "mix", &info, &result), DIRAUTH_E_NO_SNAPSHOT);

	buffer_free(&shard);
	dirauth_result_clear(&result);
	dirauth_context_free(context);
	test_client_free(&c);
}
END_TEST

/* dirauth_lookup_record: what the proof showed, for a tool that reports it. */
START_TEST(test_lookup_record_reports_the_proof)
{
	struct test_client c;
	struct dirauth_result result = {0};
	struct dirauth_update *update = NULL;
	struct dirauth_record_endpoint endpoints[4];
	struct dirauth_record_revocation revocations[4];
	struct dirauth_record_view view;
	struct buffer shard;

	buffer_init(&shard);
	epoch_2_shard(&shard, CHAIN("body.txt"));
	test_client_init(&c, NOW);
	struct dirauth_context *context = test_client_context(&c, BUNDLE, NULL);

	/* Not completed: nothing to report. */
	memset(&view, 0, sizeof(view));
	ck_assert_int_eq(dirauth_lookup_begin(context, "mix", SERVICE_A, &update, &result), DIRAUTH_SUCCESS);
	ck_assert_int_eq(dirauth_lookup_record(update, &view, &result), DIRAUTH_E_ARGUMENT);
	ck_assert_int_eq(dirauth_lookup_record(update, NULL, &result), DIRAUTH_E_ARGUMENT);
	dirauth_update_free(update);
	ck_assert_int_eq(dirauth_lookup_record(NULL, &view, &result), DIRAUTH_E_ARGUMENT);

	/* Present: the snapshot, the record, every endpoint with its health and whether it is offered
	 * (a method-1 snapshot publishes no health: every endpoint is, "unpublished"). */
	ck_assert_msg(lookup(context, SERVICE_A, &shard, &update, &result) == DIRAUTH_SUCCESS, "%s",
	              result.detail);
	memset(&view, 0, sizeof(view));
	view.endpoints = endpoints;
	view.endpoint_cap = 1; /* one written of two: the count says how many there are */
	ck_assert_int_eq(dirauth_lookup_record(update, &view, &result), DIRAUTH_SUCCESS);
	ck_assert_int_eq(view.present, 1);
	ck_assert_uint_eq(view.epoch, 2);
	ck_assert_uint_eq(view.record_count, 2);
	ck_assert_uint_eq(view.authority_count, 3);
	ck_assert_uint_ge(view.signer_count, 2);
	ck_assert(view.signer_names[0] != '\0');
	ck_assert_str_eq(view.shard, "0");
	ck_assert_str_eq(view.service_id, SERVICE_A);
	ck_assert_uint_eq(view.leaf_index, 0);
	ck_assert(view.service_class[0] != '\0' && view.provider[0] != '\0');
	ck_assert_uint_eq(view.endpoint_count, 2);
	ck_assert_ptr_eq(view.endpoints, endpoints);
	ck_assert_str_eq(endpoints[0].endpoint.address, "192.0.2.10:443");
	ck_assert_str_eq(endpoints[0].endpoint.health, "unpublished");
	ck_assert_int_eq(endpoints[0].offered, 1);
	ck_assert_int_eq(endpoints[0].has_statement, 0);
	view.endpoint_cap = 4;
	ck_assert_int_eq(dirauth_lookup_record(update, &view, &result), DIRAUTH_SUCCESS);
	ck_assert_str_eq(endpoints[1].endpoint.address, "192.0.2.11:8443");
	ck_assert_uint_eq(view.revocation_count, 0);
	view.endpoints = NULL; /* a cap without an array */
	ck_assert_int_eq(dirauth_lookup_record(update, &view, &result), DIRAUTH_E_ARGUMENT);
	dirauth_update_free(update);

	/* Absent: the leaf before its id and none after (it sorts past the last record). */
	ck_assert_int_eq(lookup(context, "5c00000000000000000000000000000000000000000000000000000000000001",
	                        &shard, &update, &result),
	                 DIRAUTH_SUCCESS);
	memset(&view, 0, sizeof(view));
	view.revocations = revocations;
	view.revocation_cap = 4;
	ck_assert_int_eq(dirauth_lookup_record(update, &view, &result), DIRAUTH_SUCCESS);
	ck_assert_int_eq(view.present, 0);
	ck_assert_uint_eq(view.leaf_index, 2);
	ck_assert_int_eq(view.has_before, 1);
	ck_assert_str_eq(view.before_id, SERVICE_B);
	ck_assert_int_eq(view.has_after, 0);
	ck_assert_uint_eq(view.endpoint_count, 0);
	ck_assert_uint_eq(view.revocation_count, 0);
	dirauth_update_free(update);

	/* Absent between two records: both neighbours. */
	ck_assert_int_eq(lookup(context, "5a80000000000000000000000000000000000000000000000000000000000001",
	                        &shard, &update, &result),
	                 DIRAUTH_SUCCESS);
	ck_assert_int_eq(dirauth_lookup_record(update, &view, &result), DIRAUTH_SUCCESS);
	ck_assert_int_eq(view.present, 0);
	ck_assert_uint_eq(view.leaf_index, 1);
	ck_assert_str_eq(view.before_id, SERVICE_A);
	ck_assert_int_eq(view.has_after, 1);
	ck_assert_str_eq(view.after_id, SERVICE_B);
	dirauth_update_free(update);

	buffer_free(&shard);
	dirauth_result_clear(&result);
	dirauth_context_free(context);
	test_client_free(&c);
}
END_TEST

static Suite *libdirauth_suite(void)
{
	Suite *s = suite_create("libdirauth");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_fresh_update_installs_and_answers);
	tcase_add_test(tc, test_chain_from_the_held_header_and_diff_first);
	tcase_add_test(tc, test_held_body_as_base_and_what_was_verified);
	tcase_add_test(tc, test_rollback_refused_also_after_a_restart);
	tcase_add_test(tc, test_tampered_body_and_header_refused);
	tcase_add_test(tc, test_stale_refused);
	tcase_add_test(tc, test_state_that_cannot_be_read_or_written);
	tcase_add_test(tc, test_wrong_answers_from_the_server);
	tcase_add_test(tc, test_answers_served_compressed);
	tcase_add_test(tc, test_two_contexts_with_different_bundles);
	tcase_add_test(tc, test_sample_from_the_random_source_alone);
	tcase_add_test(tc, test_context_refusals);
	tcase_add_test(tc, test_one_service_by_proof);
	tcase_add_test(tc, test_lookup_record_reports_the_proof);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *runner = srunner_create(libdirauth_suite());
	srunner_run_all(runner, CK_NORMAL);
	int failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
