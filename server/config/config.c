/*
 * config.c: dirauthd's configuration schema.
 *
 * settings/ reads the YAML into a bounded tree (no anchors, aliases or tags, bounded depth
 * and size); this file walks that tree against dirauthd's schema, one function per section,
 * and fills struct config. Every refusal carries the line of the node at fault.
 */
#include "server/config/config.h"
#include "server/config/config_internal.h"

#include "compress/compress.h"
#include "schema/encoding.h"
#include "base/error.h"
#include "schema/lines.h"
#include "schema/names.h"
#include "settings/settings.h"

#include <arpa/inet.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_authority(struct settings_reader *state, const struct settings_node *node,
                           struct config *config)
{
	static const char *const keys[] = {"name", "signer_socket", NULL};
	const struct settings_node *name, *socket_node;
	int rc;
	if ((rc = settings_expect_kind(state, node, SETTINGS_MAPPING, "authority")) ||
	    (rc = settings_check_keys(state, node, keys, "authority")) ||
	    (rc = settings_require(state, node, "name", "authority", &name)) ||
	    (rc = settings_require(state, node, "signer_socket", "authority", &socket_node)) ||
	    (rc = settings_string(state, name, "authority.name", config->authority_name,
	                          sizeof config->authority_name)))
		return rc;
	if (!note_name_is_valid(config->authority_name, strlen(config->authority_name)))
		return settings_fail(state, name->line, "authority.name is not a valid key name");
	if ((rc = settings_path(state, socket_node, "authority.signer_socket", config->signer_socket)))
		return rc;
	/* The resolved path must fit a sockaddr_un, or no connection could ever be made. */
	if (strlen(config->signer_socket) >= CONFIG_SOCKET_PATH_MAX)
		return settings_fail(state, socket_node->line,
		                     "authority.signer_socket is longer than %d bytes once resolved (a UNIX "
		                     "socket path limit)",
		                     CONFIG_SOCKET_PATH_MAX - 1);
	return 0;
}

static int parse_listen(struct settings_reader *state, const struct settings_node *node,
                        struct config *config)
{
	static const char *const keys[] = {"address", "port", NULL};
	const struct settings_node *address, *port;
	uint64_t port_value;
	int rc;
	if ((rc = settings_expect_kind(state, node, SETTINGS_MAPPING, "listen")) ||
	    (rc = settings_check_keys(state, node, keys, "listen")) ||
	    (rc = settings_require(state, node, "address", "listen", &address)) ||
	    (rc = settings_require(state, node, "port", "listen", &port)) ||
	    (rc = settings_string(state, address, "listen.address", config->listen_address,
	                          sizeof config->listen_address)) ||
	    (rc = settings_u64(state, port, "listen.port", 1, 65535, &port_value)))
		return rc;
	uint8_t scratch[16];
	if (inet_pton(AF_INET, config->listen_address, scratch) != 1 &&
	    inet_pton(AF_INET6, config->listen_address, scratch) != 1)
		return settings_fail(state, address->line,
		                     "listen.address must be an IPv4 or IPv6 address literal");
	config->listen_port = (uint16_t)port_value;
	return 0;
}

static int parse_epoch(struct settings_reader *state, const struct settings_node *node, struct config *config)
{
	static const char *const keys[] = {
	    "length_seconds",    "genesis", "validity_epochs", "prepare_seconds", "vote_seconds",
	    "signature_seconds", NULL};
	const struct settings_node *length, *genesis, *validity;
	int rc;
	if ((rc = settings_expect_kind(state, node, SETTINGS_MAPPING, "epoch")) ||
	    (rc = settings_check_keys(state, node, keys, "epoch")) ||
	    (rc = settings_require(state, node, "length_seconds", "epoch", &length)) ||
	    (rc = settings_require(state, node, "genesis", "epoch", &genesis)) ||
	    (rc = settings_require(state, node, "validity_epochs", "epoch", &validity)) ||
	    (rc = settings_u64(state, length, "epoch.length_seconds", 1, SCHEDULE_LENGTH_MAX,
	                       &config->epoch.length)) ||
	    (rc = settings_u64(state, genesis, "epoch.genesis", 0, SCHEDULE_GENESIS_MAX,
	                       &config->epoch.genesis)) ||
	    (rc = settings_u64(state, validity, "epoch.validity_epochs", 1, SCHEDULE_VALIDITY_MAX,
	                       &config->epoch.validity_epochs)))
		return rc;
	const struct {
		const char *key;
		uint64_t *out;
	} phases[] = {{"prepare_seconds", &config->epoch.prepare},
	              {"vote_seconds", &config->epoch.vote},
	              {"signature_seconds", &config->epoch.signature}};
	for (size_t i = 0; i < sizeof phases / sizeof phases[0]; i++) {
		const struct settings_node *v = settings_lookup(node, phases[i].key);
		char what[64];
		snprintf(what, sizeof what, "epoch.%s", phases[i].key);
		if (v && (rc = settings_u64(state, v, what, 0, SCHEDULE_LENGTH_MAX, phases[i].out)))
			return rc;
		if (v)
			config->epoch_phases_set = 1;
	}
	return 0;
}

static int parse_clock(struct settings_reader *state, const struct settings_node *node, struct config *config)
{
	int is_file = 0;
	int rc = settings_clock(state, node, &is_file, config->clock_path);
	if (rc == 0)
		config->clock_source = is_file ? CONFIG_CLOCK_FILE : CONFIG_CLOCK_SYSTEM;
	return rc;
}

/* The endpoint lifecycle of one namespace: lifecycle, health_freshness_epochs,
 * revocation_epochs, max_revocations (defaults 0, 2, the epoch's validity_epochs, 65536). A
 * revocation must stay listed at least as long as any snapshot that held what it revokes. */
/* Refuses (at v's line) a count of epochs below epoch.validity_epochs, saying why; the epoch
 * section is parsed before the sections that hold such counts. */
static int at_least_validity(struct settings_reader *state, const struct settings_node *v,
                             const struct config *config, const char *what, uint64_t epochs, const char *why)
{
	if (epochs >= config->epoch.validity_epochs)
		return 0;
	return settings_fail(state, v->line, "%s %llu is less than epoch.validity_epochs %llu: %s", what,
	                     (unsigned long long)epochs, (unsigned long long)config->epoch.validity_epochs,
	                     why);
}

static int parse_namespace_lifecycle(struct settings_reader *state, const struct settings_node *item,
                                     const struct config *config, struct config_namespace *ns)
{
	const struct settings_node *v;
	int rc;
	ns->health_freshness_epochs = 2;
	ns->revocation_epochs = config->epoch.validity_epochs;
	ns->max_revocations = 65536;
	if ((v = settings_lookup(item, "lifecycle"))) {
		if ((rc = settings_expect_kind(state, v, SETTINGS_SCALAR, "namespace lifecycle")))
			return rc;
		if (v->plain && strcmp(v->text, "true") == 0)
			ns->lifecycle = 1;
		else if (!(v->plain && strcmp(v->text, "false") == 0))
			return settings_fail(state, v->line, "namespace lifecycle must be true or false");
	}
	if ((v = settings_lookup(item, "health_freshness_epochs")) &&
	    (rc = settings_u64(state, v, "namespace health_freshness_epochs", 1, SCHEDULE_VALIDITY_MAX,
	                       &ns->health_freshness_epochs)))
		return rc;
	if ((v = settings_lookup(item, "revocation_epochs"))) {
		if ((rc = settings_u64(state, v, "namespace revocation_epochs", 1, 1000000,
		                       &ns->revocation_epochs)))
			return rc;
		if ((rc = at_least_validity(state, v, config, "namespace revocation_epochs",
		                            ns->revocation_epochs,
		                            "a revocation must outlive every snapshot that held what it "
		                            "revokes")))
			return rc;
	}
	if ((v = settings_lookup(item, "max_revocations")) &&
	    (rc = settings_size(state, v, "namespace max_revocations", 1, 10000000, &ns->max_revocations)))
		return rc;
	return 0;
}

static int parse_namespaces(struct settings_reader *state, const struct settings_node *node,
                            struct config *config)
{
	static const char *const keys[] = {"name",
	                                   "origin",
	                                   "lifecycle",
	                                   "health_freshness_epochs",
	                                   "revocation_epochs",
	                                   "max_revocations",
	                                   "private",
	                                   "capability_sha256",
	                                   "capability_file",
	                                   NULL};
	int rc = settings_expect_kind(state, node, SETTINGS_SEQUENCE, "namespaces");
	if (rc)
		return rc;
	if (node->count == 0)
		return settings_fail(state, node->line, "namespaces: at least one namespace is required");
	if (node->count > CONFIG_MAX_NAMESPACES)
		return settings_fail(state, node->children[CONFIG_MAX_NAMESPACES]->line,
		                     "namespaces: at most %d", CONFIG_MAX_NAMESPACES);
	for (size_t i = 0; i < node->count; i++) {
		const struct settings_node *item = node->children[i], *name, *origin;
		struct config_namespace *ns = &config->namespaces[i];
		if ((rc = settings_expect_kind(state, item, SETTINGS_MAPPING, "a namespace")) ||
		    (rc = settings_check_keys(state, item, keys, "namespace")) ||
		    (rc = settings_require(state, item, "name", "namespace", &name)) ||
		    (rc = settings_require(state, item, "origin", "namespace", &origin)) ||
		    (rc = settings_string(state, name, "namespace name", ns->name, sizeof ns->name)) ||
		    (rc =
		         settings_string(state, origin, "namespace origin", ns->origin, sizeof ns->origin)) ||
		    (rc = parse_namespace_lifecycle(state, item, config, ns)))
			return rc;
		struct text_span span = {ns->name, strlen(ns->name)};
		if (!text_is_name(span, NAMESPACE_NAME_MAX))
			return settings_fail(state, name->line,
			                     "namespace name '%.64s' is not [a-z0-9-] (inner '-')", ns->name);
		if (!names_origin_is_valid(ns->origin, strlen(ns->origin)))
			return settings_fail(
			    state, origin->line,
			    "namespace origin must be printable ASCII without spaces or '+'");
		for (size_t j = 0; j < i; j++) {
			if (strcmp(config->namespaces[j].name, ns->name) == 0)
				return settings_fail(state, name->line, "duplicate namespace '%s'", ns->name);
			if (strcmp(config->namespaces[j].origin, ns->origin) == 0)
				return settings_fail(state, origin->line,
				                     "duplicate namespace origin '%.64s'", ns->origin);
		}
		if ((rc = config_capability_parse(state, item, &config->capabilities[i])))
			return rc;
		config->namespace_count = i + 1;
	}
	return 0;
}

static int parse_provider(struct settings_reader *state, const struct settings_node *item,
                          struct config *config, struct config_provider *provider)
{
	static const char *const keys[] = {"key", "namespaces", "classes", NULL};
	const struct settings_node *key, *namespaces, *classes;
	char key_text[NOTE_VERIFIER_KEY_MAX + 1];
	int rc;
	if ((rc = settings_expect_kind(state, item, SETTINGS_MAPPING, "a provider")) ||
	    (rc = settings_check_keys(state, item, keys, "provider")) ||
	    (rc = settings_require(state, item, "key", "provider", &key)) ||
	    (rc = settings_require(state, item, "namespaces", "provider", &namespaces)) ||
	    (rc = settings_require(state, item, "classes", "provider", &classes)) ||
	    (rc = settings_string(state, key, "provider key", key_text, sizeof key_text)))
		return rc;
	if (note_verifier_parse(key_text, strlen(key_text), &provider->key) != 0)
		return settings_fail(state, key->line, "provider key is not a valid Ed25519 verifier key");
	if ((rc = settings_expect_kind(state, namespaces, SETTINGS_SEQUENCE, "provider namespaces")) ||
	    (rc = settings_expect_kind(state, classes, SETTINGS_SEQUENCE, "provider classes")))
		return rc;
	if (namespaces->count == 0)
		return settings_fail(state, namespaces->line,
		                     "provider namespaces: at least one is required");
	if (classes->count == 0)
		return settings_fail(state, classes->line, "provider classes: at least one is required");
	for (size_t i = 0; i < namespaces->count; i++) {
		const struct settings_node *name = namespaces->children[i];
		if ((rc = settings_expect_kind(state, name, SETTINGS_SCALAR, "a provider namespace")))
			return rc;
		int index = config_namespace_index(config, name->text, name->text_len);
		if (index < 0)
			return settings_fail(state, name->line,
			                     "provider namespace '%.64s' is not configured", name->text);
		uint64_t bit = (uint64_t)1 << index;
		if (provider->namespace_mask & bit)
			return settings_fail(state, name->line, "provider namespace '%.64s' listed twice",
			                     name->text);
		provider->namespace_mask |= bit;
	}
	for (size_t i = 0; i < classes->count; i++) {
		const struct settings_node *name = classes->children[i];
		enum service_class value;
		if ((rc = settings_expect_kind(state, name, SETTINGS_SCALAR, "a provider class")))
			return rc;
		if (service_class_parse(name->text, name->text_len, &value) != 0)
			return settings_fail(state, name->line, "unknown service class '%.64s'", name->text);
		uint32_t bit = (uint32_t)1 << value;
		if (provider->class_mask & bit)
			return settings_fail(state, name->line, "service class '%.64s' listed twice",
			                     name->text);
		provider->class_mask |= bit;
	}
	return 0;
}

static int parse_providers(struct settings_reader *state, const struct settings_node *node,
                           struct config *config)
{
	int rc = settings_expect_kind(state, node, SETTINGS_SEQUENCE, "providers");
	if (rc)
		return rc;
	if (node->count > CONFIG_MAX_PROVIDERS)
		return settings_fail(state, node->children[CONFIG_MAX_PROVIDERS]->line,
		                     "providers: at most %d", CONFIG_MAX_PROVIDERS);
	if (node->count) {
		config->providers = calloc(node->count, sizeof *config->providers);
		if (!config->providers)
			return DIRAUTH_ERR_NOMEM;
	}
	for (size_t i = 0; i < node->count; i++) {
		struct config_provider *provider = &config->providers[i];
		if ((rc = parse_provider(state, node->children[i], config, provider)))
			return rc;
		/* The store records a service's owner by key name: two enrolled keys with one name
		 * would be one owner. */
		for (size_t j = 0; j < i; j++)
			if (strcmp(config->providers[j].key.name, provider->key.name) == 0)
				return settings_fail(state, node->children[i]->line,
				                     "duplicate provider key name '%s'", provider->key.name);
		config->provider_count = i + 1;
	}
	return 0;
}

/* Authority operators: a list of verifier keys whose revocations are honoured (schema/revocation.md,
 * "Who may sign it"). */
static int parse_operators(struct settings_reader *state, const struct settings_node *node,
                           struct config *config)
{
	int rc = settings_expect_kind(state, node, SETTINGS_SEQUENCE, "operators");
	if (rc)
		return rc;
	if (node->count > CONFIG_MAX_OPERATORS)
		return settings_fail(state, node->children[CONFIG_MAX_OPERATORS]->line,
		                     "operators: at most %d", CONFIG_MAX_OPERATORS);
	if (node->count && !(config->operators = calloc(node->count, sizeof *config->operators)))
		return DIRAUTH_ERR_NOMEM;
	for (size_t i = 0; i < node->count; i++) {
		const struct settings_node *item = node->children[i];
		char text[NOTE_VERIFIER_KEY_MAX + 1];
		if ((rc = settings_string(state, item, "operator key", text, sizeof text)))
			return rc;
		if (note_verifier_parse(text, strlen(text), &config->operators[i]) != 0 ||
		    config->operators[i].type != NOTE_KEY_TYPE_ED25519)
			return settings_fail(state, item->line,
			                     "operator key is not an Ed25519 verifier key");
		for (size_t j = 0; j < i; j++)
			if (note_verifier_equal(&config->operators[j], &config->operators[i]))
				return settings_fail(state, item->line,
				                     "operator key '%.64s' is listed twice",
				                     config->operators[i].name);
		config->operator_count = i + 1;
	}
	return 0;
}

static int parse_bounds(struct settings_reader *state, const struct settings_node *node,
                        struct config *config)
{
	static const char *const keys[] = {"registration_body",          "endpoints_per_service",
	                                   "records_per_snapshot",       "snapshot_body_compressed",
	                                   "snapshot_body_uncompressed", "clock_skew_seconds",
	                                   "max_validity_seconds",       NULL};
	struct config_bounds *b = &config->bounds;
	const struct settings_node *v;
	int rc;
	if ((rc = settings_expect_kind(state, node, SETTINGS_MAPPING, "bounds")) ||
	    (rc = settings_check_keys(state, node, keys, "bounds")))
		return rc;
	if ((v = settings_lookup(node, "registration_body")) &&
	    (rc = settings_size(state, v, "bounds.registration_body", 256, REGISTRATION_MAX_BYTES,
	                        &b->registration_body)))
		return rc;
	if ((v = settings_lookup(node, "endpoints_per_service")) &&
	    (rc = settings_size(state, v, "bounds.endpoints_per_service", 1, REGISTRATION_MAX_ENDPOINTS,
	                        &b->endpoints_per_service)))
		return rc;
	if ((v = settings_lookup(node, "records_per_snapshot")) &&
	    (rc = settings_size(state, v, "bounds.records_per_snapshot", 1, 100000000,
	                        &b->records_per_snapshot)))
		return rc;
	if ((v = settings_lookup(node, "snapshot_body_compressed")) &&
	    (rc = settings_size(state, v, "bounds.snapshot_body_compressed", 1024, BUFFER_MAX - 1,
	                        &b->snapshot_body_compressed)))
		return rc;
	if ((v = settings_lookup(node, "snapshot_body_uncompressed")) &&
	    (rc = settings_size(state, v, "bounds.snapshot_body_uncompressed", 1024, BUFFER_MAX - 1,
	                        &b->snapshot_body_uncompressed)))
		return rc;
	if ((v = settings_lookup(node, "clock_skew_seconds")) &&
	    (rc = settings_u64(state, v, "bounds.clock_skew_seconds", 0, 86400, &b->clock_skew_seconds)))
		return rc;
	if ((v = settings_lookup(node, "max_validity_seconds")) &&
	    (rc = settings_u64(state, v, "bounds.max_validity_seconds", 1, 366 * 86400,
	                       &b->max_validity_seconds)))
		return rc;
	return 0;
}

static int parse_http(struct settings_reader *state, const struct settings_node *node, struct config *config)
{
	struct config_http *h = &config->http;
	const struct {
		const char *key;
		uint64_t min, max;
		unsigned *out;
	} numbers[] = {
	    {"threads", 1, 256, &h->threads},
	    {"connection_timeout_seconds", 1, 3600, &h->connection_timeout_seconds},
	    {"header_timeout_seconds", 1, 3600, &h->header_timeout_seconds},
	    {"body_timeout_seconds", 1, 3600, &h->body_timeout_seconds},
	    {"max_connections", 1, 65536, &h->max_connections},
	    {"max_connections_per_ip", 1, 65536, &h->max_connections_per_ip},
	    {"max_pending_connections", 1, 65536, &h->max_pending_connections},
	    {"log_interval_seconds", 1, 3600, &h->log_interval_seconds},
	};
	static const char *const keys[] = {"threads",
	                                   "connection_timeout_seconds",
	                                   "header_timeout_seconds",
	                                   "body_timeout_seconds",
	                                   "max_connections",
	                                   "max_connections_per_ip",
	                                   "max_pending_connections",
	                                   "log_interval_seconds",
	                                   "connection_memory_limit",
	                                   "old_epochs_cache_bytes",
	                                   "log_cache_bytes",
	                                   NULL};
	const struct settings_node *v;
	char what[64];
	int rc;
	if ((rc = settings_expect_kind(state, node, SETTINGS_MAPPING, "http")) ||
	    (rc = settings_check_keys(state, node, keys, "http")))
		return rc;
	for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; i++) {
		snprintf(what, sizeof what, "http.%s", numbers[i].key);
		if ((v = settings_lookup(node, numbers[i].key)) &&
		    (rc = settings_unsigned(state, v, what, numbers[i].min, numbers[i].max, numbers[i].out)))
			return rc;
	}
	if ((v = settings_lookup(node, "connection_memory_limit")) &&
	    (rc = settings_size(state, v, "http.connection_memory_limit", 16384, 16 * 1024 * 1024,
	                        &h->connection_memory_limit)))
		return rc;
	if ((v = settings_lookup(node, "old_epochs_cache_bytes")) &&
	    (rc = settings_size(state, v, "http.old_epochs_cache_bytes", 0, (uint64_t)1 << 40,
	                        &h->old_epochs_cache_bytes)))
		return rc;
	if ((v = settings_lookup(node, "log_cache_bytes")) &&
	    (rc = settings_size(state, v, "http.log_cache_bytes", 0, (uint64_t)1 << 40, &h->log_cache_bytes)))
		return rc;
	if (h->max_connections_per_ip > h->max_connections)
		return settings_fail(state, node->line,
		                     "http.max_connections_per_ip exceeds http.max_connections");
	return 0;
}

static int parse_store(struct settings_reader *state, const struct settings_node *node, struct config *config)
{
	static const char *const keys[] = {"map_size_bytes", "refuse_percent", "body_retention_epochs", NULL};
	struct config_store *s = &config->store;
	const struct settings_node *v;
	int rc;
	if ((rc = settings_expect_kind(state, node, SETTINGS_MAPPING, "store")) ||
	    (rc = settings_check_keys(state, node, keys, "store")))
		return rc;
	if ((v = settings_lookup(node, "map_size_bytes")) &&
	    (rc = settings_size(state, v, "store.map_size_bytes", (uint64_t)16 << 20, (uint64_t)1 << 46,
	                        &s->map_size_bytes)))
		return rc;
	if ((v = settings_lookup(node, "refuse_percent")) &&
	    (rc = settings_unsigned(state, v, "store.refuse_percent", 10, 99, &s->refuse_percent)))
		return rc;
	if ((v = settings_lookup(node, "body_retention_epochs"))) {
		if ((rc = settings_u64(state, v, "store.body_retention_epochs", 1, 1000000,
		                       &s->body_retention_epochs)))
			return rc;
		if ((rc = at_least_validity(state, v, config, "store.body_retention_epochs",
		                            s->body_retention_epochs,
		                            "a snapshot's body must be kept while the snapshot is valid")))
			return rc;
	}
	return 0;
}

/* diffs: { bases: N }. The default, and the check against the retention window, once the epoch
 * and the store sections are read. */
static int parse_diffs(struct settings_reader *state, const struct settings_node *node, struct config *config)
{
	static const char *const keys[] = {"bases", NULL};
	const struct settings_node *v;
	int rc;
	if ((rc = settings_expect_kind(state, node, SETTINGS_MAPPING, "diffs")) ||
	    (rc = settings_check_keys(state, node, keys, "diffs")))
		return rc;
	if ((v = settings_lookup(node, "bases")) &&
	    (rc = settings_u64(state, v, "diffs.bases", 0, CONFIG_DIFF_BASES_MAX, &config->diffs.bases)))
		return rc;
	return 0;
}

/* The most bytes of records (notes and their framing) a namespace may hold so that its body is
 * within the uncompressed bound and, however badly it compresses, within the compressed bound in
 * every encoding. */
static size_t namespace_bytes(const struct config_bounds *b)
{
	size_t low = 0, high = b->snapshot_body_uncompressed;
	while (low < high) {
		size_t mid = low + (high - low + 1) / 2;
		size_t body = mid + CONFIG_BODY_HEAD_MAX;
		if (compress_bound(ENCODING_GZIP, body) <= b->snapshot_body_compressed &&
		    compress_bound(ENCODING_ZSTD, body) <= b->snapshot_body_compressed &&
		    body <= b->snapshot_body_uncompressed)
			low = mid;
		else
			high = mid - 1;
	}
	return low;
}

static void set_defaults(struct config *config)
{
	config->bounds.registration_body = 64 * 1024;
	config->bounds.endpoints_per_service = 32;
	config->bounds.records_per_snapshot = 1000000;
	/* A million records of about a kilobyte; the compressed bound is what the uncompressed one
	 * can take in the worst case, so no receipt given under it can be broken by compression. */
	config->bounds.snapshot_body_uncompressed = (size_t)1 << 30;
	config->bounds.snapshot_body_compressed = ((size_t)1 << 30) + ((size_t)1 << 23);
	config->bounds.clock_skew_seconds = 300;
	config->bounds.max_validity_seconds = 7 * 86400;
	config->http.threads = 8;
	config->http.connection_timeout_seconds = 10;
	config->http.header_timeout_seconds = 10;
	config->http.body_timeout_seconds = 30;
	config->http.max_connections = 4096;
	config->http.max_connections_per_ip = 64;
	config->http.max_pending_connections = 4096;
	config->http.log_interval_seconds = 10;
	config->http.connection_memory_limit = 32 * 1024;
	config->http.old_epochs_cache_bytes = (size_t)256 * 1024 * 1024;
	config->http.log_cache_bytes = (size_t)64 * 1024 * 1024;
	config->clock_source = CONFIG_CLOCK_SYSTEM;
	config->peers.timeout_seconds = 5;
	config->peers.connect_timeout_seconds = 2;
	config->peers.retries = 2;
	config->peers.connections_per_peer = 4;
	config->store.map_size_bytes = (size_t)8 << 30;
	config->store.refuse_percent = 90;
	config->store.body_retention_epochs = 0; /* derived from the epoch section after parsing */
	config->diffs.bases = UINT64_MAX;        /* likewise */
}

/* The epoch's phases: as configured, else none for one authority alone, and for several the
 * second half of the epoch: a tenth for votes, three tenths for signatures (whose window holds
 * three peer requests to the vote window's one) and a tenth to pull the last signatures. */
static int set_phases(struct settings_reader *state, struct config *config)
{
	struct epoch_schedule *s = &config->epoch;
	if (!config->epoch_phases_set && config->member_count > 1) {
		s->prepare = s->length / 2;
		s->vote = s->length / 10;
		s->signature = 3 * s->length / 10;
	}
	if (schedule_check(s) != 0)
		return settings_fail(
		    state, 0,
		    "epoch: prepare_seconds must be below length_seconds and at least vote_seconds + "
		    "signature_seconds");
	return config_check_windows(state, config);
}

static int parse_root(struct settings_reader *state, const struct settings_node *root, struct config *config)
{
	static const char *const keys[] = {"authority",  "listen",    "data_dir", "epoch", "clock",
	                                   "namespaces", "providers", "bounds",   "http",  "authorities",
	                                   "store",      "operators", "diffs",    NULL};
	const struct settings_node *v;
	int rc;
	if ((rc = settings_expect_kind(state, root, SETTINGS_MAPPING, "the configuration")) ||
	    (rc = settings_check_keys(state, root, keys, "configuration")))
		return rc;
	/* Sections in dependency order: providers name namespaces. */
	if ((rc = settings_require(state, root, "authority", "configuration", &v)) ||
	    (rc = parse_authority(state, v, config)))
		return rc;
	if ((rc = settings_require(state, root, "listen", "configuration", &v)) ||
	    (rc = parse_listen(state, v, config)))
		return rc;
	if ((rc = settings_require(state, root, "data_dir", "configuration", &v)) ||
	    (rc = settings_path(state, v, "data_dir", config->data_dir)))
		return rc;
	if ((rc = settings_require(state, root, "epoch", "configuration", &v)) ||
	    (rc = parse_epoch(state, v, config)))
		return rc;
	if ((v = settings_lookup(root, "clock")) && (rc = parse_clock(state, v, config)))
		return rc;
	if ((rc = settings_require(state, root, "namespaces", "configuration", &v)) ||
	    (rc = parse_namespaces(state, v, config)))
		return rc;
	if ((rc = settings_require(state, root, "providers", "configuration", &v)) ||
	    (rc = parse_providers(state, v, config)))
		return rc;
	if ((v = settings_lookup(root, "bounds")) && (rc = parse_bounds(state, v, config)))
		return rc;
	if ((v = settings_lookup(root, "http")) && (rc = parse_http(state, v, config)))
		return rc;
	if ((v = settings_lookup(root, "store")) && (rc = parse_store(state, v, config)))
		return rc;
	const struct settings_node *diffs = settings_lookup(root, "diffs");
	if (diffs && (rc = parse_diffs(state, diffs, config)))
		return rc;
	if ((v = settings_lookup(root, "authorities")) && (rc = config_parse_authorities(state, v, config)))
		return rc;
	if ((v = settings_lookup(root, "operators")) && (rc = parse_operators(state, v, config)))
		return rc;
	if ((rc = config_set_authority_set(state, config)) || (rc = set_phases(state, config)))
		return rc;
	/* Derived: what a namespace may hold, and (unless set) how long bodies are kept: twice the
	 * validity, so a mirror that missed an epoch or two still finds every body it may need. */
	config->bounds.namespace_bytes = namespace_bytes(&config->bounds);
	if (config->bounds.namespace_bytes == 0)
		return settings_fail(state, 0, "bounds.snapshot_body_compressed is too small for any body");
	for (size_t i = 0; i < config->namespace_count; i++) {
		/* The room of the largest registration, its record's line (shorter than a body's head)
		 * and its endpoints' health. */
		if (!config->namespaces[i].lifecycle)
			continue;
		size_t smallest =
		    config->bounds.registration_body + CONFIG_BODY_HEAD_MAX +
		    config->bounds.endpoints_per_service * config_namespace_endpoint_bytes(config, i);
		if (config_namespace_record_bytes(config, i) < smallest)
			return settings_fail(
			    state, 0,
			    "namespace %s: its max_revocations (%zu) leave no room in the "
			    "snapshot body bounds for the largest registration and its health",
			    config->namespaces[i].name, config->namespaces[i].max_revocations);
	}
	if (config->store.body_retention_epochs == 0)
		config->store.body_retention_epochs = 2 * config->epoch.validity_epochs;
	/* Diffs from every snapshot still valid: a mirror that holds any of them needs one. */
	if (config->diffs.bases == UINT64_MAX)
		config->diffs.bases = config->epoch.validity_epochs < CONFIG_DIFF_BASES_MAX
		                          ? config->epoch.validity_epochs
		                          : CONFIG_DIFF_BASES_MAX;
	else if (config->diffs.bases > config->store.body_retention_epochs)
		return settings_fail(state, settings_lookup(diffs, "bases")->line,
		                     "diffs.bases %llu exceeds store.body_retention_epochs %llu: a base past "
		                     "the retention window is not kept",
		                     (unsigned long long)config->diffs.bases,
		                     (unsigned long long)config->store.body_retention_epochs);
	return 0;
}

int config_parse(const uint8_t *buf, size_t len, const char *base_dir, struct config **out,
                 struct settings_error *error)
{
	struct settings_reader state = {.error = error, .base_dir = base_dir ? base_dir : "."};
	struct settings_node *root = NULL;
	struct config *config = NULL;
	int rc;

	*out = NULL;
	if (error) {
		error->line = 0;
		error->message[0] = 0;
	}
	if ((rc = settings_read(&state, buf, len, &root)))
		goto cleanup;
	config = calloc(1, sizeof *config);
	if (!config) {
		rc = DIRAUTH_ERR_NOMEM;
		goto cleanup;
	}
	set_defaults(config);
	if ((rc = parse_root(&state, root, config)))
		goto cleanup;
	*out = config;
	config = NULL;
cleanup:
	config_free(config);
	settings_free(root);
	return rc;
}

int config_load(const char *path, struct config **out, struct settings_error *error)
{
	uint8_t *buf = NULL;
	char *base_dir = NULL;
	size_t len = 0;

	*out = NULL;
	if (error) {
		error->line = 0;
		error->message[0] = 0;
	}
	int rc = settings_load(path, &buf, &len, &base_dir, error);
	if (rc == 0)
		rc = config_parse(buf, len, base_dir, out, error);
	/* The secrets of private namespaces, which the requests to the other authorities carry. */
	struct settings_reader state = {.error = error, .base_dir = base_dir};
	for (size_t i = 0; rc == 0 && i < (*out)->namespace_count; i++)
		rc = config_capability_load(&state, &(*out)->capabilities[i], (*out)->member_count > 1);
	if (rc == 0)
		rc = config_check_ca_file(&state, *out);
	if (rc && *out) {
		config_free(*out);
		*out = NULL;
	}
	free(buf);
	free(base_dir);
	return rc;
}

void config_free(struct config *config)
{
	if (!config)
		return;
	for (size_t i = 0; i < CONFIG_MAX_NAMESPACES; i++)
		config_capability_wipe(&config->capabilities[i]);
	free(config->members);
	free(config->providers);
	free(config->operators);
	free(config);
}

int config_namespace_index(const struct config *config, const char *name, size_t len)
{
	for (size_t i = 0; i < config->namespace_count; i++)
		if (strlen(config->namespaces[i].name) == len &&
		    memcmp(config->namespaces[i].name, name, len) == 0)
			return (int)i;
	return -1;
}

int config_namespace_is_private(const struct config *config, size_t index)
{
	return index < config->namespace_count && config->capabilities[index].is_private;
}

const struct config_provider *config_provider_find(const struct config *config,
                                                   const struct note_verifier *key)
{
	for (size_t i = 0; i < config->provider_count; i++) {
		const struct note_verifier *candidate = &config->providers[i].key;
		if (note_verifier_equal(candidate, key))
			return &config->providers[i];
	}
	return NULL;
}

int config_operator_is_listed(const struct config *config, const struct note_verifier *key)
{
	for (size_t i = 0; i < config->operator_count; i++)
		if (note_verifier_equal(&config->operators[i], key))
			return 1;
	return 0;
}

/* What a lifecycle namespace keeps of its body for the sections besides the health entries
 * counted per endpoint; SIZE_MAX when more than any body. */
static size_t lifecycle_reserve(const struct config_namespace *ns)
{
	if (!ns->lifecycle)
		return 0;
	if (ns->max_revocations > (SIZE_MAX - 2 * SNAPSHOT_SECTION_COUNT_MAX) / SNAPSHOT_REVOCATION_ENTRY_MAX)
		return SIZE_MAX;
	return 2 * SNAPSHOT_SECTION_COUNT_MAX + ns->max_revocations * SNAPSHOT_REVOCATION_ENTRY_MAX;
}

size_t config_namespace_record_bytes(const struct config *config, size_t i)
{
	size_t reserve = lifecycle_reserve(&config->namespaces[i]);
	return reserve < config->bounds.namespace_bytes ? config->bounds.namespace_bytes - reserve : 0;
}

size_t config_namespace_endpoint_bytes(const struct config *config, size_t i)
{
	return config->namespaces[i].lifecycle ? SNAPSHOT_HEALTH_ENTRY_MAX : 0;
}

size_t config_max_health(const struct config *config)
{
	size_t records = config->bounds.records_per_snapshot,
	       endpoints = config->bounds.endpoints_per_service;
	return endpoints && records > SIZE_MAX / endpoints ? SIZE_MAX : records * endpoints;
}
