/*
 * fuzz_libdirauth_log_proof.c: the log step of an update (the tlog-proof file answered to
 * /v1/<ns>/log/proof/<epoch>, checked as dirauth_verify_log_proof checks one) on arbitrary bytes,
 * for the example chain's epoch 2 in a context that pins a log key of the namespace's origin
 * whose private half nobody holds. No input can be a proof it signed: every answer is a refusal
 * with a terminated detail, and nothing is installed.
 */
#include <dirauth/dirauth.h>

#include "tests/fuzz/libdirauth_fuzz.h"

#include "schema/note.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static uint8_t *bundle, *certificates, *header;
static size_t bundle_len, certificates_len, header_len;
static char log_key[NOTE_VERIFIER_KEY_MAX + 1];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	/* A log key of the namespace's origin, as a trust bundle's users pin it. */
	fuzz_unheld_key("dirauth.example/mix", 0, 7, log_key);
	bundle = fuzz_chain_load("trust-bundle.txt", &bundle_len);
	certificates = fuzz_chain_load("certificates.txt", &certificates_len);
	header = fuzz_chain_load("header.note", &header_len);
	return 0;
}

/* The proof request of an update (after the certificates and the header) answered with data. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct dirauth_callbacks callbacks = {
	    .now = fuzz_chain_now, .state_read = fuzz_no_state_read, .state_write = fuzz_no_state_write};
	const char *log_keys[] = {log_key};
	struct dirauth_options options = {0};
	struct dirauth_result result = {0};
	struct dirauth_context *context = NULL;
	struct dirauth_update *update = NULL;
	struct dirauth_snapshot_info info;
	const char *path = NULL;

	options.log_keys = log_keys;
	options.log_key_count = 1;
	if (dirauth_context_new(&callbacks, bundle, bundle_len, &options, &context, &result) !=
	        DIRAUTH_SUCCESS ||
	    dirauth_update_begin(context, "mix", &update, &result) != DIRAUTH_SUCCESS ||
	    dirauth_update_feed(update, 200, "", certificates, certificates_len, &result) !=
	        DIRAUTH_SUCCESS ||
	    dirauth_update_feed(update, 200, "", header, header_len, &result) != DIRAUTH_SUCCESS ||
	    dirauth_update_next(update, &path, NULL) != 1 || strcmp(path, "/v1/mix/log/proof/2") != 0)
		abort();
	enum dirauth_status status = dirauth_update_feed(update, 200, "", data, size, &result);
	/* Nothing signed by that key exists: never believed, never installed. */
	if (status == DIRAUTH_SUCCESS || result.detail[0] == '\0' ||
	    strnlen(result.detail, sizeof(result.detail)) == sizeof(result.detail) ||
	    dirauth_snapshot(context, "mix", &info, NULL) == DIRAUTH_SUCCESS)
		abort();
	dirauth_update_free(update);
	dirauth_context_free(context);
	dirauth_result_clear(&result);
	return 0;
}
