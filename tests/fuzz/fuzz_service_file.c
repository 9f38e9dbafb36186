/*
 * fuzz_service_file.c: libFuzzer target for dirauthctl's YAML service-description parser.
 *
 * The parser reads files people write and libyaml events, so the properties checked are: no
 * crash, leak or overread on any input; a refusal always comes with a "FILE:LINE: " message;
 * an accepted file holds values register can encode (bounded endpoint count, distinct ids,
 * addresses valid for their transport).
 */
#include "base/error.h"
#include "schema/registration.h"
#include "ctl/service_file.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctl_service_file file;
	char error[CTL_SERVICE_FILE_ERROR_MAX];
	int rc = ctl_service_file_parse(data, size, "f.yaml", &file, error, sizeof(error));

	if (rc != 0) {
		if (strncmp(error, "f.yaml:", 7) != 0)
			abort();
		if (file.endpoints != NULL || file.endpoint_count != 0)
			abort();
		return 0;
	}
	if (file.endpoint_count == 0 || file.endpoint_count > REGISTRATION_MAX_ENDPOINTS)
		abort();
	for (size_t i = 0; i < file.endpoint_count; i++) {
		if (endpoint_address_check(file.endpoints[i].transport, file.endpoints[i].address) != 0)
			abort();
		for (size_t j = 0; j < i; j++) {
			if (memcmp(file.endpoints[i].endpoint_id, file.endpoints[j].endpoint_id,
			           ENDPOINT_ID_SIZE) == 0)
				abort();
		}
	}
	if (file.validity_seconds < 1 || file.validity_seconds > CTL_SERVICE_FILE_MAX_VALIDITY)
		abort();
	ctl_service_file_clear(&file);
	return 0;
}
