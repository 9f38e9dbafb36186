/*
 * fuzz_http_bearer.c: http_access_bearer() and http_access_namespace() on arbitrary Authorization
 * values: the token found lies inside the value, is not empty and holds no space or control byte;
 * a private namespace opens only to the one token whose digest is its capability's.
 */
#include "crypto/crypto.h"
#include "server/http/access.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char secret[] = "ZnV6ei1jYXBhYmlsaXR5LTAwMDAwMDAw";
	static struct config config;
	char *value = malloc(size + 1);
	if (!value)
		return 0;
	memcpy(value, data, size);
	value[size] = 0; /* a header value ends at its first NUL */
	const char *token = NULL;
	size_t len = 0;
	if (http_access_bearer(value, &token, &len) == 0) {
		size_t value_len = strlen(value);
		if (len == 0 || token < value || token + len != value + value_len)
			abort();
		for (size_t i = 0; i < len; i++)
			if ((unsigned char)token[i] <= 0x20 || (unsigned char)token[i] >= 0x7f)
				abort();
	}
	if (config.namespace_count == 0) {
		config.namespace_count = 2;
		strcpy(config.namespaces[0].name, "mix");
		strcpy(config.namespaces[1].name, "mail");
		config.capabilities[0].is_private = 1;
		if (crypto_sha256((const uint8_t *)secret, strlen(secret), config.capabilities[0].sha256) !=
		    0)
			abort();
	}
	int opened = http_access_namespace(&config, "mix", 3, value);
	int expected = http_access_bearer(value, &token, &len) == 0 && len == strlen(secret) &&
	               memcmp(token, secret, len) == 0;
	if ((opened == 0) != expected || (opened != 0 && opened != -1) ||
	    http_access_namespace(&config, "mail", 4, value) != 1 ||
	    http_access_namespace(&config, "xim", 3, value) != -1)
		abort();
	free(value);
	return 0;
}
