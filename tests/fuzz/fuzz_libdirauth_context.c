/*
 * fuzz_libdirauth_context.c: dirauth_context_new() on arbitrary trust bundle bytes, through the
 * public header. A refusal is DIRAUTH_E_TRUST (or _NOMEM) with a terminated, non-empty detail and
 * no context; an accepted bundle gives a context whose namespaces answer "no snapshot yet".
 */
#include <dirauth/dirauth.h>

#include "tests/fuzz/libdirauth_fuzz.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dirauth_callbacks callbacks = {
	    .now = fuzz_chain_now, .state_read = fuzz_no_state_read, .state_write = fuzz_no_state_write};
	struct dirauth_result result = {0};
	struct dirauth_context *context = NULL;
	struct dirauth_snapshot_info info;
	enum dirauth_status status = dirauth_context_new(&callbacks, data, size, NULL, &context, &result);
	if (status != DIRAUTH_SUCCESS) {
		if (context != NULL || (status != DIRAUTH_E_TRUST && status != DIRAUTH_E_NOMEM) ||
		    result.detail[0] == '\0' ||
		    strnlen(result.detail, sizeof(result.detail)) == sizeof(result.detail))
			abort();
		return 0;
	}
	if (dirauth_snapshot(context, "mix", &info, &result) == DIRAUTH_SUCCESS)
		abort();
	dirauth_context_free(context);
	dirauth_result_clear(&result);
	return 0;
}
