/*
 * fuzz_libdirauth_record_shard.c: the record shard a lookup (dirauth_lookup_begin) takes, answered
 * to /v1/<ns>/snapshots/<epoch>/records/<shard>, on arbitrary bytes, for a service of the example
 * chain's epoch 2 (tests/vectors/chain/). Properties: the lookup ends in a known status; when it
 * succeeds, the service is present or proven absent and its endpoints are answered; when it is
 * refused, nothing is written and dirauth_lookup_endpoints refuses.
 */
#include <dirauth/dirauth.h>

#include "tests/fuzz/libdirauth_fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static uint8_t *bundle, *certificates, *header;
static size_t bundle_len, certificates_len, header_len;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	bundle = fuzz_chain_load("trust-bundle.txt", &bundle_len);
	certificates = fuzz_chain_load("certificates.txt", &certificates_len);
	header = fuzz_chain_load("header.note", &header_len);
	return 0;
}

static unsigned writes;

static int count_writes(void *user, const char *namespace_name, const uint8_t *bytes, size_t len)
{
	(void)user, (void)namespace_name, (void)bytes, (void)len;
	writes++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct dirauth_callbacks callbacks = {
	    .now = fuzz_chain_now, .state_read = fuzz_no_state_read, .state_write = count_writes};
	struct dirauth_result result = {0};
	struct dirauth_context *context = NULL;
	struct dirauth_update *lookup = NULL;
	struct dirauth_endpoint endpoints[8];
	const char *path = NULL;
	size_t count = 0;

	writes = 0;
	if (dirauth_context_new(&callbacks, bundle, bundle_len, NULL, &context, &result) != DIRAUTH_SUCCESS ||
	    dirauth_lookup_begin(context, "mix",
	                         "5a00000000000000000000000000000000000000000000000000000000000001", &lookup,
	                         &result) != DIRAUTH_SUCCESS ||
	    dirauth_update_feed(lookup, 200, "", certificates, certificates_len, &result) !=
	        DIRAUTH_SUCCESS ||
	    dirauth_update_feed(lookup, 200, "", header, header_len, &result) != DIRAUTH_SUCCESS ||
	    dirauth_update_next(lookup, &path, NULL) != 1 ||
	    strcmp(path, "/v1/mix/snapshots/2/records/0") != 0)
		abort();
	enum dirauth_status status = dirauth_update_feed(lookup, 200, "", data, size, &result);
	enum dirauth_status answered = dirauth_lookup_endpoints(lookup, endpoints, 8, &count, &result);
	if (status > DIRAUTH_E_INTERNAL)
		abort();
	if (status == DIRAUTH_SUCCESS) {
		if (writes != 1 || (answered != DIRAUTH_SUCCESS && answered != DIRAUTH_E_NOT_FOUND))
			abort();
	} else if (writes != 0 || answered != DIRAUTH_E_ARGUMENT || result.detail[0] == '\0') {
		abort();
	}
	dirauth_update_free(lookup);
	dirauth_context_free(context);
	dirauth_result_clear(&result);
	return 0;
}
