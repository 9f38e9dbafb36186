/*
 * access.c: the capability check of private namespaces (access.h).
 *
 * The work does not branch on what is secret: every configured name is compared (in constant
 * time, over the whole name buffer) without stopping at the first match, and the presented token,
 * or the empty string when there is none, is hashed and compared with a digest whether the
 * namespace is private, public or not served (a digest of zeros then, which no token has). What
 * remains to measure is the hashing of a token the requester chose, the same for every namespace.
 */
#include "server/http/access.h"

#include "crypto/crypto.h"

#include <string.h>

int http_access_bearer(const char *value, const char **token, size_t *len)
{
	static const char scheme[] = "bearer";
	if (!value)
		return -1;
	size_t value_len = strnlen(value, HTTP_ACCESS_VALUE_MAX + 1);
	if (value_len > HTTP_ACCESS_VALUE_MAX || value_len <= sizeof scheme)
		return -1;
	for (size_t i = 0; i < sizeof scheme - 1; i++) {
		char c = value[i];
		if ((c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c) != scheme[i])
			return -1;
	}
	size_t start = sizeof scheme - 1;
	if (value[start] != ' ')
		return -1;
	while (start < value_len && value[start] == ' ')
		start++;
	if (start == value_len)
		return -1;
	for (size_t i = start; i < value_len; i++) {
		unsigned char c = (unsigned char)value[i];
		if (c <= 0x20 || c >= 0x7f)
			return -1;
	}
	*token = value + start;
	*len = value_len - start;
	return 0;
}

/* 1 when the configured name equals name (len bytes), compared over the whole buffer. */
static int name_matches(const char configured[NAMESPACE_NAME_MAX + 1], const char *name, size_t len)
{
	char wanted[NAMESPACE_NAME_MAX + 1], held[NAMESPACE_NAME_MAX + 1];
	memset(wanted, 0, sizeof wanted);
	memset(held, 0, sizeof held);
	if (len > NAMESPACE_NAME_MAX)
		len = NAMESPACE_NAME_MAX + 1; /* matches no configured name, which is shorter */
	else
		memcpy(wanted, name, len);
	strncpy(held, configured, NAMESPACE_NAME_MAX);
	return len <= NAMESPACE_NAME_MAX && crypto_equal(wanted, held, sizeof wanted);
}

int http_access_namespace(const struct config *config, const char *name, size_t len,
                          const char *authorization)
{
	static const uint8_t no_digest[CRYPTO_SHA256_SIZE];
	uint8_t presented[CRYPTO_SHA256_SIZE];
	const char *token = "";
	size_t token_len = 0;
	int found = -1;

	for (size_t i = 0; i < config->namespace_count; i++)
		if (name_matches(config->namespaces[i].name, name, len))
			found = (int)i;
	if (http_access_bearer(authorization, &token, &token_len) != 0) {
		token = "";
		token_len = 0;
	}
	int hashed = crypto_sha256((const uint8_t *)token, token_len, presented) == 0;
	const struct config_capability *capability = found >= 0 ? &config->capabilities[found] : NULL;
	const uint8_t *expected = capability && capability->is_private ? capability->sha256 : no_digest;
	int opens = hashed && crypto_equal(presented, expected, sizeof presented);
	crypto_wipe(presented, sizeof presented);
	if (found < 0)
		return -1;
	if (!capability->is_private)
		return found;
	return opens && token_len > 0 ? found : -1;
}
