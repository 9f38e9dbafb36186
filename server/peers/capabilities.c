/*
 * capabilities.c: the Authorization lines of private namespaces for peer requests
 * (capabilities.h). Each line is built once, held for the life of the client and wiped when it
 * is freed.
 */
#include "server/peers/capabilities.h"

#include "crypto/crypto.h"
#include "base/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AUTHORIZATION_PREFIX     "Authorization: Bearer "
#define AUTHORIZATION_PREFIX_LEN (sizeof AUTHORIZATION_PREFIX - 1)
#define AUTHORIZATION_LINE_MAX   (AUTHORIZATION_PREFIX_LEN + CONFIG_CAPABILITY_MAX + 1)

struct peer_capability {
	char namespace_name[NAMESPACE_NAME_MAX + 1];
	char line[AUTHORIZATION_LINE_MAX];
};

struct peer_capabilities {
	size_t count;
	struct peer_capability entries[CONFIG_MAX_NAMESPACES];
};

int peer_capabilities_new(const struct config *config, struct peer_capabilities **out)
{
	struct peer_capabilities *set = calloc(1, sizeof *set);
	*out = NULL;
	if (!set)
		return DIRAUTH_ERR_NOMEM;
	for (size_t i = 0; i < config->namespace_count && i < CONFIG_MAX_NAMESPACES; i++) {
		const struct config_capability *c = &config->capabilities[i];
		if (!c->is_private || c->secret_len == 0)
			continue;
		struct peer_capability *entry = &set->entries[set->count++];
		snprintf(entry->namespace_name, sizeof entry->namespace_name, "%s",
		         config->namespaces[i].name);
		memcpy(entry->line, AUTHORIZATION_PREFIX, AUTHORIZATION_PREFIX_LEN);
		memcpy(entry->line + AUTHORIZATION_PREFIX_LEN, c->secret, c->secret_len);
		entry->line[AUTHORIZATION_PREFIX_LEN + c->secret_len] = 0;
	}
	*out = set;
	return 0;
}

void peer_capabilities_free(struct peer_capabilities *capabilities)
{
	if (!capabilities)
		return;
	crypto_wipe(capabilities, sizeof *capabilities);
	free(capabilities);
}

const char *peer_capabilities_header(const struct peer_capabilities *capabilities, const char *namespace_name)
{
	if (!capabilities || !namespace_name)
		return NULL;
	for (size_t i = 0; i < capabilities->count; i++)
		if (strcmp(capabilities->entries[i].namespace_name, namespace_name) == 0)
			return capabilities->entries[i].line;
	return NULL;
}
