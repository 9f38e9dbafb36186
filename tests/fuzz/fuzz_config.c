/*
 * fuzz_config.c: libFuzzer target for the YAML configuration reader.
 *
 * The configuration is read by the process that holds the signing key, from a file an
 * operator (or a deployment tool) writes: the reader must refuse any bytes cleanly, with a
 * line number inside the input, and never go deeper than its bound whatever the nesting.
 */
#include "server/config/config.h"
#include "base/error.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config *config = NULL;
	struct settings_error error;
	int rc = config_parse(data, size, "/run/dirauth", &config, &error);
	if (rc == 0) {
		if (!config || config->namespace_count == 0 ||
		    config->namespace_count > CONFIG_MAX_NAMESPACES || strncmp(config->data_dir, "/", 1) != 0)
			abort();
		config_free(config);
		return 0;
	}
	if (rc != DIRAUTH_ERR_CONFIG && rc != DIRAUTH_ERR_NOMEM)
		abort();
	if (config)
		abort();
	/* A line number is within the input (libyaml may point one line past the last break). YAML
	 * breaks lines at LF, CR, CRLF and the Unicode NEL, LS and PS; counting LF, CR and the last
	 * byte of each of those bounds the count from above. */
	size_t lines = 1;
	for (size_t i = 0; i < size; i++)
		if (data[i] == '\n' || data[i] == '\r' || data[i] == 0x85 || data[i] == 0xa8 ||
		    data[i] == 0xa9)
			lines++;
	if (rc == DIRAUTH_ERR_CONFIG && error.line > lines + 1)
		abort();
	if (memchr(error.message, 0, sizeof error.message) == NULL)
		abort();
	return 0;
}
