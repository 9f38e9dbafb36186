/*
 * config.h: dirauthd's configuration, read once at start from a YAML file.
 *
 * The file is written by an operator, so the reader is strict and bounded (settings.h: size,
 * depth, no anchors, aliases or tags) and the schema refuses unknown or duplicate keys and any
 * value not of the type and range its key expects.
 * dirauthd holds no key: the authority section names the authority and the UNIX socket of
 * dirauth-signer, which holds the keys and signs for it.
 * Every refusal names the line at fault, so that "dirauthd --check-config" can print
 * "FILE:LINE: problem" and exit 78. Relative paths are resolved against the directory of the
 * configuration file, so a configuration and its keys can move together.
 *
 * The parsed configuration is immutable and shared read-only by every thread of the server.
 */
#ifndef DIRAUTH_SERVER_CONFIG_CONFIG_H
#define DIRAUTH_SERVER_CONFIG_CONFIG_H

#include "schema/note.h"
#include "server/config/capability.h"
#include "settings/settings.h"
#include "schema/registration.h"
#include "schema/snapshot.h"
#include "schedule/schedule.h"

#include <stddef.h>
#include <stdint.h>

/* The peer operations the signature window must hold, each at authorities.timeout_seconds:
 * the pull of missing votes, the fetch of missing notes, the push of the signature. */
#define CONFIG_SIGNATURE_WINDOW_OPERATIONS 3
#define CONFIG_MAX_NAMESPACES              64 /* a provider's namespaces are a 64-bit mask */
#define CONFIG_MAX_PROVIDERS               10000
#define CONFIG_MAX_OPERATORS               256
#define CONFIG_PATH_MAX                    SETTINGS_PATH_MAX
#define CONFIG_ADDRESS_MAX                 64
#define CONFIG_SOCKET_PATH_MAX             108 /* sizeof sockaddr_un.sun_path on Linux, with its NUL */

enum config_clock_source { CONFIG_CLOCK_SYSTEM, CONFIG_CLOCK_FILE };

struct config_namespace {
	char name[NAMESPACE_NAME_MAX + 1];
	char origin[SNAPSHOT_ORIGIN_MAX + 1];
	/* The endpoint lifecycle: with "lifecycle: true" the namespace takes health statements,
	 * revocations and deregistrations and its snapshots are consensus method 2; without it (the
	 * default) they stay method 1, byte for byte. The parameters below are those of method 2
	 * (consensus/consensus.h, struct consensus_lifecycle): every authority of a set must configure
	 * the same. */
	int lifecycle;
	uint64_t health_freshness_epochs; /* health older than this at valid-after is unknown; 2 */
	uint64_t revocation_epochs;       /* a revocation stays listed this long; validity_epochs at
	                                     least, and by default */
	size_t max_revocations;           /* revocations one snapshot lists, at most; 65536 */
};

/* An enrolled provider: its verifier key is its identity; what it may publish is a bit per
 * configured namespace (bit i = namespaces[i]) and a bit per enum service_class. */
struct config_provider {
	struct note_verifier key;
	uint64_t namespace_mask;
	uint32_t class_mask;
};

/* Hard rule 9: every bound has a default (DESIGN.md) and a key under "bounds:". */
struct config_bounds {
	size_t registration_body;
	size_t endpoints_per_service;
	size_t records_per_snapshot;
	size_t snapshot_body_compressed;
	size_t snapshot_body_uncompressed;
	uint64_t clock_skew_seconds;
	uint64_t max_validity_seconds;
	/* Derived, not a key: the most bytes of records (notes plus STORE_RECORD_FRAMING each) a
	 * namespace may hold so that its body fits both body bounds however it compresses; a
	 * lifecycle namespace's sections come out of it too (config_namespace_record_bytes). */
	size_t namespace_bytes;
};

/* The longest head of a snapshot body (its four first lines). */
#define CONFIG_BODY_HEAD_MAX 160

#define CONFIG_MAX_MEMBERS 32
#define CONFIG_URL_MAX     256

/* A member of the authority set: its key name, its pinned identity key (which certifies its
 * signing keys) and where it answers; optionally the keys of its transparency log, pinned like
 * the identity (c2sp.org/tlog-policy): the log key that signs its checkpoints (type 0x01, named
 * by the origin of the namespace whose log it keeps) and the key that cosigns checkpoints as a
 * witness (cosignature/v1, type 0x04). */
struct config_member {
	char name[NOTE_NAME_MAX + 1];
	struct note_verifier identity; /* zeroed for this authority alone (no authorities section) */
	char url[CONFIG_URL_MAX];      /* "" likewise */
	int has_log_key;
	struct note_verifier log_key; /* log_key: */
	int has_cosigner;
	struct note_verifier cosigner; /* cosignature_key: */
};

#define CONFIG_MAX_WITNESSES 16

/* A witness outside the authority set (authorities.witnesses): asked to cosign every checkpoint
 * with c2sp.org/tlog-witness add-checkpoint at <url>/add-checkpoint. Its cosignatures are kept
 * with the checkpoint; they do not count towards the authorities' k. */
struct config_witness {
	char name[NOTE_NAME_MAX + 1];
	struct note_verifier key; /* type 0x04, named name */
	char url[CONFIG_URL_MAX]; /* its submission prefix, without the final '/' */
};

/* How this authority talks to the others. */
struct config_peers {
	unsigned timeout_seconds;         /* the whole of one request */
	unsigned connect_timeout_seconds; /* its connection */
	unsigned retries;                 /* after a transport failure or a 5xx, with jittered backoff */
	unsigned connections_per_peer;    /* kept-alive connections to each member, requests at once */
	/* ca_file: the PEM CA certificates that the members' https certificates are verified by,
	 * instead of the system's store (a set whose proxies' certificates come from its own CA);
	 * outside witnesses stay verified by the system's. Resolved; "" for the system's store.
	 * config_load checks that it can be read. */
	char ca_file[CONFIG_PATH_MAX];
	size_t ca_file_line;
	size_t witness_count;
	struct config_witness witnesses[CONFIG_MAX_WITNESSES];
};

struct config_store {
	size_t map_size_bytes;          /* the most the database may grow to */
	unsigned refuse_percent;        /* registrations refused when the database is fuller */
	uint64_t body_retention_epochs; /* snapshot bodies kept for this many epochs */
};

/* Diffs of each published body from the older bodies kept (schema/snapshot-diff.md). */
#define CONFIG_DIFF_BASES_MAX 256
struct config_diffs {
	/* Diffs are built to each published body from each of the bodies of the bases epochs before
	 * it that are still kept; 0 builds none. Default: epoch.validity_epochs (at most
	 * CONFIG_DIFF_BASES_MAX), so a mirror holding any snapshot still valid needs one diff. */
	uint64_t bases;
};

struct config_http {
	unsigned threads;
	unsigned connection_timeout_seconds; /* idle time after which a connection is closed */
	unsigned header_timeout_seconds;     /* a request head must be complete within this */
	unsigned body_timeout_seconds;       /* a request body must be complete within this */
	unsigned max_connections;            /* connections being served */
	unsigned max_connections_per_ip;
	unsigned max_pending_connections; /* new connections waiting for their first request head */
	unsigned log_interval_seconds;    /* at most one aggregate line of refusals this often */
	size_t connection_memory_limit;
	size_t old_epochs_cache_bytes; /* prepared responses of epochs older than the latest */
	size_t log_cache_bytes;        /* kept answers of the log's tiles, bundles and proofs */
};

struct config {
	char authority_name[NOTE_NAME_MAX + 1];
	char signer_socket[CONFIG_PATH_MAX];     /* resolved; dirauth-signer's UNIX socket */
	char listen_address[CONFIG_ADDRESS_MAX]; /* an IPv4 or IPv6 literal */
	uint16_t listen_port;
	char data_dir[CONFIG_PATH_MAX]; /* resolved */
	struct epoch_schedule epoch;
	enum config_clock_source clock_source;
	char clock_path[CONFIG_PATH_MAX]; /* resolved; empty for the system clock */
	size_t namespace_count;
	struct config_namespace namespaces[CONFIG_MAX_NAMESPACES];
	/* Per namespace, at the same index: public, or private with its capability (capability.h). */
	struct config_capability capabilities[CONFIG_MAX_NAMESPACES];
	size_t provider_count;
	struct config_provider *providers; /* owned */
	struct config_bounds bounds;
	struct config_http http;
	struct config_store store;
	struct config_diffs diffs;
	size_t member_count;           /* n: 1 when there is no authorities section */
	struct config_member *members; /* owned; the authority set, this authority included */
	size_t self_index;             /* this authority in members */
	size_t threshold;              /* k: a majority of n */
	struct config_peers peers;
	int epoch_phases_set; /* the epoch section named its phases */
	/* Authority operators: the keys ("operators:", a list of verifier keys) whose revocations
	 * this authority honours for any service (schema/revocation.md, "Who may sign it"). */
	size_t operator_count;
	struct note_verifier *operators; /* owned */
};

/* Parses configuration text. base_dir is the directory that relative paths are resolved
 * against (no trailing '/' needed). On success *out is a new configuration the caller frees
 * with config_free(). Returns 0; DIRAUTH_ERR_CONFIG with *error filled (error may be NULL) for
 * any refusal; DIRAUTH_ERR_NOMEM. */
int config_parse(const uint8_t *buf, size_t len, const char *base_dir, struct config **out,
                 struct settings_error *error);

/* Reads path (at most SETTINGS_MAX_BYTES) and parses it with base_dir = the file's directory,
 * then reads the capability_file of every private namespace (capability.h) and checks that
 * authorities.ca_file, if given, is a regular file it can read.
 * Returns 0, DIRAUTH_ERR_CONFIG (also when the file cannot be read; *error says why),
 * DIRAUTH_ERR_NOMEM. */
int config_load(const char *path, struct config **out, struct settings_error *error);

/* Frees a configuration. Accepts NULL. */
void config_free(struct config *config);

/* The index of the namespace called name (len bytes), or -1. */
int config_namespace_index(const struct config *config, const char *name, size_t len);

/* 1 when namespaces[index] is private (served only with its capability), else 0. */
int config_namespace_is_private(const struct config *config, size_t index);

/* The enrolled provider whose verifier key equals key exactly (name, key id, type and public
 * key), or NULL. Borrowed from config. */
const struct config_provider *config_provider_find(const struct config *config,
                                                   const struct note_verifier *key);

/* 1 when key is one of the configured operator keys exactly (name, key id, type and public key),
 * else 0. */
int config_operator_is_listed(const struct config *config, const struct note_verifier *key);

/* The most health entries a snapshot (and a vote) may carry: one per endpoint of every record,
 * records_per_snapshot times endpoints_per_service. Never fails. */
size_t config_max_health(const struct config *config);

/* What the records of namespace i may take of its body, so that every snapshot fits the body
 * bounds whatever the lifecycle adds: the bytes of records (notes plus STORE_RECORD_FRAMING each)
 * plus config_namespace_endpoint_bytes for each endpoint they list, at most. namespace_bytes, less
 * in a lifecycle namespace the room of its most revocations (max_revocations entries of
 * SNAPSHOT_REVOCATION_ENTRY_MAX) and of the two sections' count lines. Never fails: the
 * configuration refuses a namespace whose revocations would leave no room. */
size_t config_namespace_record_bytes(const struct config *config, size_t i);

/* The room each endpoint of namespace i's records takes in its body besides its record: one
 * health entry (SNAPSHOT_HEALTH_ENTRY_MAX) in a lifecycle namespace, nothing in another. */
size_t config_namespace_endpoint_bytes(const struct config *config, size_t i);

#endif
