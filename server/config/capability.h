/*
 * capability.h: private namespaces in dirauthd's configuration (docs/operating.md, "Private
 * namespaces").
 *
 * A namespace is public unless it says "private: true". A private namespace is served only to a
 * request that carries its capability, a bearer secret (`Authorization: Bearer <secret>`). The
 * configuration holds only the secret's SHA-256 ("capability_sha256: <64 lower-case hex
 * digits>"), so a copy of the configuration file opens nothing. The other authorities of a set
 * serve the namespace too and must be asked with the secret: for them "capability_file: <path>"
 * names a file holding the secret itself (mode 0600 or stricter, one line), which config_load
 * reads, checks against the digest and keeps in memory for the peer client. With several
 * authorities a private namespace must name its capability_file.
 *
 * The secret is 16 to 256 bytes of [A-Za-z0-9-._~+/=] (the token68 of RFC 9110 section 11.2,
 * which a base64 secret is: `head -c 32 /dev/urandom | base64`); its digest is that of those
 * bytes alone, without a trailing newline (`printf %s SECRET | sha256sum`).
 */
#ifndef DIRAUTH_SERVER_CONFIG_CAPABILITY_H
#define DIRAUTH_SERVER_CONFIG_CAPABILITY_H

#include "crypto/crypto.h"
#include "settings/settings.h"

#include <stddef.h>
#include <stdint.h>

#define CONFIG_CAPABILITY_MIN 16
#define CONFIG_CAPABILITY_MAX 256

/* The access of one configured namespace. Zeroed: public. */
struct config_capability {
	int is_private;
	uint8_t sha256[CRYPTO_SHA256_SIZE];     /* of the secret; private only */
	char file[SETTINGS_PATH_MAX];           /* resolved capability_file; "" when none */
	size_t line;                            /* of the namespace, for the refusals of the load */
	size_t file_line;                       /* of capability_file, likewise */
	char secret[CONFIG_CAPABILITY_MAX + 1]; /* read from file by config_capability_load; "" before
	                                           and without one; wiped by config_capability_wipe */
	size_t secret_len;
};

/* The namespace keys "private", "capability_sha256" and "capability_file" of the namespace
 * mapping item (the caller has checked its keys), into *out. A private namespace needs
 * capability_sha256; a public one may carry neither capability key. Reads no file. Returns 0 or
 * DIRAUTH_ERR_CONFIG with the line at fault in state. */
int config_capability_parse(struct settings_reader *state, const struct settings_node *item,
                            struct config_capability *out);

/* 1 when text (len bytes) is a well-formed secret (length and alphabet above), else 0. */
int config_capability_is_valid(const char *text, size_t len);

/* Reads out->file, when named: a regular file (not a symbolic link) that neither group nor others
 * may read or write, of one secret and at most one final newline, whose SHA-256 is out->sha256;
 * keeps the secret in out. A public namespace, or a private one without a file while there is no
 * other authority: 0, nothing read. Returns 0 or DIRAUTH_ERR_CONFIG with the line at fault and
 * the reason in state (also for a private namespace without capability_file when
 * several_authorities is nonzero). */
int config_capability_load(struct settings_reader *state, struct config_capability *out,
                           int several_authorities);

/* Wipes the secret held (crypto_wipe). Accepts NULL. */
void config_capability_wipe(struct config_capability *capability);

#endif
