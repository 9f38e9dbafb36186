/*
 * fuzz_signer_config.c: libFuzzer target for dirauth-signer's configuration reader
 * (signer_config_parse).
 *
 * The signer reads its configuration before it reads any key, and what the configuration says
 * (the namespaces and their epoch schedules, the socket, the paths of the keys) decides what it
 * will sign: the reader must refuse any bytes cleanly, with a line number inside the input, and
 * what it accepts must hold what the service and the listener will rely on.
 */
#include "base/error.h"
#include "schema/names.h"
#include "schedule/schedule.h"
#include "signer/signer_config.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What every accepted configuration must hold. */
static void check_accepted(const struct signer_config *config)
{
	if (!config || !note_name_is_valid(config->authority, strlen(config->authority)))
		abort();
	/* The base directory is absolute, so is every path once resolved. */
	if (strlen(config->socket_path) > SIGNER_CONFIG_SOCKET_MAX || config->socket_path[0] != '/')
		abort();
	if (config->state_dir[0] != '/' || config->signing_key_path[0] != '/')
		abort();
	if (config->certificate_count == 0 || config->certificate_count > SIGNER_CONFIG_MAX_CERTIFICATES)
		abort();
	for (size_t i = 0; i < config->certificate_count; i++)
		if (config->certificate_paths[i][0] != '/')
			abort();
	if (config->clock_skew_seconds == 0 || config->clock_skew_seconds > 86400)
		abort();
	if (config->max_connections == 0 || config->max_connections > SIGNER_LISTENER_MAX_CONNECTIONS)
		abort();
	if ((config->clock_source == SIGNER_CONFIG_CLOCK_FILE) != (config->clock_path[0] != '\0'))
		abort();
	if (config->namespace_count == 0 || config->namespace_count > SIGNER_CONFIG_MAX_NAMESPACES)
		abort();
	for (size_t i = 0; i < config->namespace_count; i++) {
		const struct signer_namespace *ns = &config->namespaces[i];
		if (schedule_check(&ns->schedule) != 0 ||
		    !names_origin_is_valid(ns->origin, strlen(ns->origin)))
			abort();
		for (size_t j = 0; j < i; j++)
			if (strcmp(ns->name, config->namespaces[j].name) == 0 ||
			    strcmp(ns->origin, config->namespaces[j].origin) == 0)
				abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct signer_config *config = NULL;
	struct settings_error error;
	int rc = signer_config_parse(data, size, "/run/dirauth-signer", &config, &error);
	if (rc == 0) {
		check_accepted(config);
		signer_config_free(config);
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
