/*
 * signer_config.h: dirauth-signer's configuration, read once at start from a YAML file.
 *
 *   authority: authority1.dirauth.example
 *   socket: /run/dirauth/signer.sock
 *   allowed_uid: 998                      # the uid dirauthd runs as
 *   state_dir: /var/lib/dirauth-signer     # the ledger's LMDB
 *   signing_key: keys/signing.key          # 0600 file in a 0700 directory, else refused
 *   certificates: [keys/signing.cert]      # the first certifies signing_key
 *   log_key: keys/log.key                  # optional
 *   cosignature_key: keys/cosignature.key  # optional
 *   audit_log: audit.log                   # optional; default stderr
 *   clock_skew_seconds: 300                # optional; how far a statement's time may be from now
 *   clock: { source: system }              # or { source: file, path: clock }
 *   max_connections: 16                    # optional; connections served at once (1..1024)
 *   namespaces:                            # what the signer signs for: dirauthd's namespaces
 *     - { name: mix, origin: dirauth.example/mix, genesis: 0, length_seconds: 60,
 *         validity_epochs: 3 }             # and dirauthd's epoch section, for each
 *
 * Each namespace gives its epoch schedule (schedule/schedule.h): the signer signs a vote or a
 * snapshot header only for a current epoch of that schedule by its own clock, so the schedule is
 * written here and not taken from dirauthd. At least one namespace, at most
 * SIGNER_CONFIG_MAX_NAMESPACES; names and origins follow dirauthd's rules, none twice.
 *
 * The reader is settings.h: strict, bounded, unknown and duplicate keys refused, every refusal
 * naming its line so that the program prints "FILE:LINE: problem" and exits 78. Relative paths
 * resolve against the configuration file's directory, so a configuration and its keys move
 * together. This only reads the file; the keys and certificates are checked by the service.
 */
#ifndef DIRAUTH_SIGNER_SIGNER_CONFIG_H
#define DIRAUTH_SIGNER_SIGNER_CONFIG_H

#include "schema/note.h"
#include "settings/settings.h"
#include "signer/listener.h"
#include "signer/service.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SIGNER_CONFIG_MAX_CERTIFICATES 16
#define SIGNER_CONFIG_SOCKET_MAX       107 /* sun_path holds 108 bytes with the NUL */
#define SIGNER_CONFIG_MAX_NAMESPACES   SIGNER_SERVICE_MAX_NAMESPACES

enum signer_config_clock { SIGNER_CONFIG_CLOCK_SYSTEM, SIGNER_CONFIG_CLOCK_FILE };

struct signer_config {
	char authority[NOTE_NAME_MAX + 1];
	char socket_path[SETTINGS_PATH_MAX]; /* resolved; at most SIGNER_CONFIG_SOCKET_MAX bytes */
	uid_t allowed_uid;
	char state_dir[SETTINGS_PATH_MAX];
	char signing_key_path[SETTINGS_PATH_MAX];
	size_t certificate_count; /* at least 1 */
	char certificate_paths[SIGNER_CONFIG_MAX_CERTIFICATES][SETTINGS_PATH_MAX];
	char log_key_path[SETTINGS_PATH_MAX];         /* empty: no log key */
	char cosignature_key_path[SETTINGS_PATH_MAX]; /* empty: no cosignature key */
	char audit_log_path[SETTINGS_PATH_MAX];       /* empty: standard error */
	enum signer_config_clock clock_source;
	char clock_path[SETTINGS_PATH_MAX]; /* empty for the system clock */
	uint64_t clock_skew_seconds; /* how far a statement's time may be from the clock; default 300 */
	size_t max_connections;      /* served at once; default SIGNER_LISTENER_DEFAULT_CONNECTIONS */
	size_t namespace_count;      /* 1..SIGNER_CONFIG_MAX_NAMESPACES */
	struct signer_namespace namespaces[SIGNER_CONFIG_MAX_NAMESPACES];
};

/* Parses configuration text; relative paths resolve against base_dir (NULL: "."). On success
 * *out is a new configuration freed with signer_config_free. Returns 0, DIRAUTH_ERR_CONFIG
 * (error, which may be NULL, gets the line and the problem), DIRAUTH_ERR_NOMEM. */
int signer_config_parse(const uint8_t *buf, size_t len, const char *base_dir, struct signer_config **out,
                        struct settings_error *error);

/* Reads and parses the file at path. Returns what signer_config_parse returns; a file that
 * cannot be read is DIRAUTH_ERR_CONFIG with line 0. */
int signer_config_load(const char *path, struct signer_config **out, struct settings_error *error);

/* Frees a configuration. Accepts NULL. */
void signer_config_free(struct signer_config *config);

#endif
